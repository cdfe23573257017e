#!/usr/bin/env bats
# parallel: the programs that split by records (editdist4r pairs, gmmscore utterances,
# docsim queries) run as pieces under GNU parallel (--pipe, --pipepart, -X over files)
# and under a Slurm-style array (tests/ref/slurm_piece cuts the pieces as the man
# pages' sbatch scripts do); the pieces' outputs, concatenated in order, must equal the
# whole run's byte for byte, and the whole run its independent reference
# (tests/ref/editdist4r_ref.c, scikit-learn through docsim_ref.py and gmmscore_ref.py).

bats_require_minimum_version 1.5.0

setup_file() {
	load helpers
	export EDREF="$BATS_FILE_TMPDIR/edref" G="$BATS_FILE_TMPDIR/gmm"
	cc -O2 -o "$EDREF" "$BATS_TEST_DIRNAME/ref/editdist4r_ref.c"
	local d=$BATS_FILE_TMPDIR
	"$EDREF" gen 11 400 300 dna >"$d/pairs.txt"
	"$EDREF" dist <"$d/pairs.txt" >"$d/pairs.ref"
	# the pairs' A and B strings as FASTA (wrapped at 60) and FASTQ files
	awk -F '\t' '{ printf ">a%d\n", NR; for (i = 1; i <= length($1); i += 60)
		print substr($1, i, 60); if ($1 == "") print "" }' "$d/pairs.txt" >"$d/a.fa"
	awk -F '\t' '{ printf ">b%d\n", NR; for (i = 1; i <= length($2); i += 60)
		print substr($2, i, 60); if ($2 == "") print "" }' "$d/pairs.txt" >"$d/b.fa"
	awk -F '\t' '{ q = $1; gsub(/./, "I", q); printf "@a%d\n%s\n+\n%s\n", NR, $1, q }' \
		"$d/pairs.txt" >"$d/a.fq"
	mkdir -p "$G"
	py "$REF/gmmscore_ref.py" make "$G" --models 10 --dim 6 --frames 300 --big 40
	py "$REF/gmmscore_ref.py" scores "$G" "$G/feats.npy" "$G/sum.npy"
}

setup() {
	load helpers
	D=$BATS_FILE_TMPDIR
	T=$BATS_TEST_TMPDIR
	command -v parallel >/dev/null || fail "GNU parallel is not installed (make deps)"
}

# par ARGS...: GNU parallel, two jobs at a time, output in input order, its job log
# kept so that split_ran can tell the input was really split.
par() {
	parallel --will-cite --keep-order -j 2 --halt now,fail=1 --joblog "$T/joblog" "$@"
}

# split_ran MIN: the last par ran at least MIN jobs, all successful.
split_ran() {
	local jobs
	jobs=$(awk 'NR > 1 && $7 == 0' "$T/joblog" | wc -l)
	[ "$jobs" -ge "$1" ] || { echo "only $jobs jobs ran"; cat "$T/joblog"; return 1; }
}

# slurm N PIECES KIND FILE CMD...: the array job: piece i (0 to PIECES - 1) of FILE, N
# records a piece, cut by slurm_piece and piped into CMD with $first set to the
# piece's first record number (1-based) and $i to the task id; output in
# $T/out/%05d, then concatenated in order to standard output.
slurm() {
	local n=$1 pieces=$2 kind=$3 file=$4 i
	shift 4
	rm -rf "$T/out"
	mkdir "$T/out"
	for ((i = 0; i < pieces; i++)); do
		SLURM_ARRAY_TASK_ID=$i "$REF/slurm_piece" "$kind" "$n" "$file" |
			first=$((i * n + 1)) i=$i bash -c "$*" >"$T/out/$(printf %05d $i)" ||
			return 1
	done
	cat "$T/out"/*
}

# ---- editdist4r: pairs

@test "editdist4r: --pipe pieces of pairs, blocks far smaller than a pair, equal the whole run" {
	run -0 editdist4r "$D/pairs.txt"
	diff <(printf '%s\n' "$output") "$D/pairs.ref"
	par --pipe --block 2k editdist4r <"$D/pairs.txt" >"$T/split"
	split_ran 10
	diff "$T/split" "$D/pairs.ref"
}

@test "editdist4r: --pipepart byte ranges of a pairs file equal the whole run" {
	par --pipepart -a "$D/pairs.txt" --block 3k editdist4r >"$T/split"
	split_ran 10
	diff "$T/split" "$D/pairs.ref"
}

@test "editdist4r: FASTA reads cut at '>' and FASTQ cut every 4 lines, all against all" {
	editdist4r --all-vs-all -a "$D/a.fa" -b "$D/b.fa" >"$T/whole.fa"
	editdist4r --all-vs-all -a "$D/a.fq" -b "$D/b.fa" >"$T/whole.fq"
	# the matrix's first row is the first pair against every B: the reference's
	head -n 40 "$D/pairs.txt" | awk -F '\t' 'NR == 1 { a = $1 } { print a "\t" $2 }' |
		"$EDREF" dist | paste -s >"$T/row1"
	diff <(cut -f 1-40 "$T/whole.fa" | head -n 1) "$T/row1"
	cmp "$T/whole.fa" "$T/whole.fq"
	par --pipe --recstart '>' --block 1k editdist4r --all-vs-all -a - -b "$D/b.fa" \
		<"$D/a.fa" >"$T/split.fa"
	split_ran 10
	cmp "$T/split.fa" "$T/whole.fa"
	par --pipe -L 4 -N 37 editdist4r --all-vs-all -a - -b "$D/b.fa" <"$D/a.fq" >"$T/split.fq"
	split_ran 10
	cmp "$T/split.fq" "$T/whole.fq"
}

@test "editdist4r: a one-a-line piece that starts with '>' needs --format lines" {
	printf 'alpha\n>beta\n@gamma\ndelta\n' >"$T/a"
	printf 'alpho\nbeta\ngamma\ndelta\n' >"$T/b"
	run -0 editdist4r --format lines -a "$T/a" -b "$T/b"
	assert_output $'1\n1\n1\n0'
	run -0 editdist4r -a "$T/a" -b "$T/b"
	assert_output $'1\n1\n1\n0'
	# the whole file is one a line by its first byte, but its second piece starts
	# with '@': read as one a line only because --format says so (paired pieces of a
	# and b, cut alike)
	for i in 0 1; do
		SLURM_ARRAY_TASK_ID=$i "$REF/slurm_piece" lines 2 "$T/a" >"$T/a$i"
		SLURM_ARRAY_TASK_ID=$i "$REF/slurm_piece" lines 2 "$T/b" >"$T/b$i"
	done
	run -1 editdist4r -a "$T/a1" -b "$T/b1"
	run -0 bash -c "editdist4r --format lines -a '$T/a0' -b '$T/b0';
		editdist4r --format lines -a '$T/a1' -b '$T/b1'"
	assert_output $'1\n1\n1\n0'
}

@test "editdist4r: an error in a piece names the line within the piece" {
	{ head -n 5 "$D/pairs.txt"; echo 'no tab here'; } >"$T/bad"
	# (without --halt now, which could kill the job before its message is shown)
	run -1 --separate-stderr parallel --will-cite --keep-order -j 2 --pipe -N 3 editdist4r \
		<"$T/bad"
	[[ "$stderr" == *"editdist4r: (standard input):3: no TAB in the line"* ]] ||
		fail "stderr: $stderr"
}

@test "editdist4r: Slurm pieces of paired FASTA files, cut alike, equal the whole run" {
	n=37 pieces=11
	mkdir "$T/fa"
	for ((i = 0; i < pieces; i++)); do
		export SLURM_ARRAY_TASK_ID=$i
		editdist4r -a <("$REF/slurm_piece" fasta $n "$D/a.fa") \
			-b <("$REF/slurm_piece" fasta $n "$D/b.fa") >"$T/fa/$(printf %05d $i)"
	done
	[ -s "$T/fa/00010" ]
	cat "$T/fa"/* >"$T/split"
	diff "$T/split" "$D/pairs.ref"
	# an array rounded up past the input's end: its last task's piece is empty
	slurm 100 5 lines "$D/pairs.txt" 'editdist4r' >"$T/split2"
	[ -e "$T/out/00004" ] && [ ! -s "$T/out/00004" ]
	diff "$T/split2" "$D/pairs.ref"
}

# ---- docsim: queries against a fixed corpus

@test "docsim: query pieces numbered with --first-record equal the whole run and scikit-learn" {
	C=$TESTDATA/docsim/corpus.txt
	cat "$TESTDATA/docsim/queries.txt" "$C" "$TESTDATA/docsim/unicode.txt" >"$T/q.txt"
	docsim -k 4 -q "$T/q.txt" "$C" >"$T/whole"
	par --pipe -N 5 docsim -k 4 --first-record '$(( ({#} - 1) * 5 + 1 ))' -q - "$C" \
		<"$T/q.txt" >"$T/split"
	split_ran 8
	cmp "$T/split" "$T/whole"
	py "$REF/docsim_ref.py" sim "$C" -q "$T/q.txt" "$T/S.npy"
	run -0 py "$REF/docsim_ref.py" check "$T/S.npy" "$T/split" -k 4
	# without --first-record each piece numbers its queries from 1
	par --pipe -N 5 docsim -k 4 -q - "$C" <"$T/q.txt" >"$T/wrong"
	run -1 cmp -s "$T/wrong" "$T/whole"
}

@test "docsim: --pipe blocks and --pipepart ranges of queries with --ids equal the whole run" {
	C=$TESTDATA/docsim/corpus.txt
	awk '{ print "q" NR "\t" $0 }' "$TESTDATA/docsim/queries.txt" "$C" >"$T/q.tsv"
	awk '{ print "d" NR "\t" $0 }' "$C" >"$T/c.tsv"
	docsim --ids -k 3 -q "$T/q.tsv" "$T/c.tsv" >"$T/whole"
	par --pipe --block 100 docsim --ids -k 3 -q - "$T/c.tsv" <"$T/q.tsv" >"$T/split"
	split_ran 5
	cmp "$T/split" "$T/whole"
	par --pipepart -a "$T/q.tsv" --block 150 docsim --ids -k 3 -q - "$T/c.tsv" >"$T/split2"
	split_ran 5
	cmp "$T/split2" "$T/whole"
	# every query-document pair above a threshold, and the matrix's rows, split alike
	docsim --ids -k 0 -t 0.1 -q "$T/q.tsv" "$T/c.tsv" >"$T/whole3"
	par --pipepart -a "$T/q.tsv" --block 150 docsim --ids -k 0 -t 0.1 -q - "$T/c.tsv" >"$T/split3"
	cmp "$T/split3" "$T/whole3"
	docsim --ids --matrix -q "$T/q.tsv" "$T/c.tsv" >"$T/whole4"
	par --pipepart -a "$T/q.tsv" --block 150 docsim --ids --matrix -q - "$T/c.tsv" >"$T/split4"
	cmp "$T/split4" "$T/whole4"
}

@test "docsim: dense and libsvm query pieces equal the whole run" {
	C=$TESTDATA/docsim/corpus.txt
	py "$REF/docsim_ref.py" convert "$C" dense "$T/c.txt"
	py "$REF/docsim_ref.py" convert "$C" libsvm "$T/c.svm"
	for f in txt svm; do
		docsim -k 3 -q "$T/c.$f" "$T/c.$f" >"$T/whole"
		par --pipe -N 4 docsim -k 3 --first-record '$(( ({#} - 1) * 4 + 1 ))' \
			-q - "$T/c.$f" <"$T/c.$f" >"$T/split"
		split_ran 6
		cmp "$T/split" "$T/whole"
	done
}

@test "docsim: --first-record needs -q and a number from 1" {
	run -2 docsim --first-record 3 "$TESTDATA/docsim/corpus.txt"
	assert_output --partial "--first-record numbers queries: it needs -q"
	run -2 docsim --first-record 0 -q - "$TESTDATA/docsim/corpus.txt"
}

@test "docsim: Slurm pieces of queries, numbered from \$first, equal the whole run" {
	C=$TESTDATA/docsim/corpus.txt
	cat "$TESTDATA/docsim/queries.txt" "$C" >"$T/q.txt"
	docsim -k 5 -q "$T/q.txt" "$C" >"$T/whole"
	slurm 4 8 lines "$T/q.txt" "docsim -k 5 --first-record \$first -q - '$C'" >"$T/split"
	[ -s "$T/out/00007" ]
	cmp "$T/split" "$T/whole"
}

# ---- gmmscore: utterances (and frames)

@test "gmmscore: a Kaldi text archive cut at utterance ends (--recend) equals the whole run" {
	# more utterances: the reference's archive three times, under new keys
	sed 's/^utt/a/' "$G/feats.ark" >"$T/f.ark"
	sed 's/^utt/b/' "$G/feats.ark" >>"$T/f.ark"
	sed 's/^utt/c/' "$G/feats.ark" >>"$T/f.ark"
	gmmscore -m "$G/native.txt" --top 2 "$T/f.ark" >"$T/whole"
	par --pipe --recend ']\n' --block 2k gmmscore -m "$G/native.txt" --top 2 \
		<"$T/f.ark" >"$T/split"
	split_ran 3
	cmp "$T/split" "$T/whole"
	par --pipepart -a "$T/f.ark" --recend ']\n' --block 1k \
		gmmscore -m "$G/native.txt" --top 2 >"$T/split2"
	split_ran 3
	cmp "$T/split2" "$T/whole"
	# --all: one matrix an utterance, scores as scikit-learn's; an empty utterance
	# (" [ ]") is a piece of its own
	gmmscore -m "$G/native.txt" --all "$G/feats.ark" >"$T/whole.ark"
	par --pipe -N 1 --recend ']\n' gmmscore -m "$G/native.txt" --all \
		<"$G/feats.ark" >"$T/split.ark"
	split_ran 3
	cmp "$T/split.ark" "$T/whole.ark"
	{ cat "$G/feats.ark"; echo 'empty  [ ]'; cat "$G/feats.ark"; } >"$T/e.ark"
	gmmscore -m "$G/native.txt" --all "$T/e.ark" >"$T/whole.e"
	grep -qx 'empty  \[ \]' "$T/whole.e"
	par --pipe -N 1 --recend ']\n' gmmscore -m "$G/native.txt" --all \
		<"$T/e.ark" >"$T/split.e"
	split_ran 7
	cmp "$T/split.e" "$T/whole.e"
	run -0 py "$REF/gmmscore_ref.py" check all "$T/split.ark" "$G/sum.npy" \
		--keys utt0:60,utt1:1,utt2:239
}

@test "gmmscore: text frames of one utterance split with --first-frame equal the whole run" {
	gmmscore -m "$G/native.txt" --top 3 <"$G/feats.txt" >"$T/whole"
	par --pipe -N 64 gmmscore -m "$G/native.txt" --top 3 \
		--first-frame '$(( ({#} - 1) * 64 ))' <"$G/feats.txt" >"$T/split"
	split_ran 5
	cmp "$T/split" "$T/whole"
	run -0 py "$REF/gmmscore_ref.py" check top "$T/split" "$G/sum.npy" --top 3 \
		--names "$G/names.txt" --keys=-:300
	slurm 70 5 lines "$G/feats.txt" \
		"gmmscore -m '$G/native.txt' --top 3 --first-frame \$((first - 1))" >"$T/slurm"
	cmp "$T/slurm" "$T/whole"
}

@test "gmmscore: --first-frame numbers only the first utterance and is not for --all" {
	run -0 gmmscore -m "$G/native.txt" --first-frame 1000 "$G/feats.ark"
	assert_line --index 0 --regexp $'^utt0\t1000\t'
	assert_line --index 59 --regexp $'^utt0\t1059\t'
	assert_line --index 60 --regexp $'^utt1\t0\t'
	assert_line --index 61 --regexp $'^utt2\t0\t'
	run -2 gmmscore -m "$G/native.txt" --all --first-frame 5 "$G/feats.ark"
	assert_output --partial "split its input by utterances"
}

@test "gmmscore: HTK files handed out by parallel -X equal one run over the list" {
	for k in 0 1 2 3 4 5 6; do
		head -c $((12 + 24 * (k + 3))) "$G/feats.htk" |
			py -c 'import sys, struct
d = sys.stdin.buffer.read()
sys.stdout.buffer.write(struct.pack(">i", (len(d) - 12) // 24) + d[4:] + bytes(2))' >"$T/u$k.htk"
	done
	cd "$T"
	gmmscore -m "$G/native.txt" --top 2 u?.htk >"$T/whole"
	par -X -n 2 gmmscore -m "$G/native.txt" --top 2 ::: u?.htk >"$T/split"
	split_ran 4
	cmp "$T/split" "$T/whole"
	ls u?.htk >"$T/list"
	par -X -n 3 -a "$T/list" gmmscore -m "$G/native.txt" --top 2 >"$T/split2"
	cmp "$T/split2" "$T/whole"
	[ "$(cut -f 1 "$T/whole" | uniq | paste -sd ' ')" = "u0.htk u1.htk u2.htk u3.htk u4.htk u5.htk u6.htk" ]
}

@test "gmmscore: Slurm pieces of an archive, whole utterances each, equal the whole run" {
	sed 's/^utt/a/' "$G/feats.ark" >"$T/f.ark"
	sed 's/^utt/b/' "$G/feats.ark" >>"$T/f.ark"
	gmmscore -m "$G/native.txt" "$T/f.ark" >"$T/whole"
	slurm 2 5 ark "$T/f.ark" "gmmscore -m '$G/native.txt'" >"$T/split"
	[ -s "$T/out/00002" ]
	# tasks past the last utterance get empty pieces and print nothing
	[ -e "$T/out/00004" ] && [ ! -s "$T/out/00004" ]
	cmp "$T/split" "$T/whole"
}

# ---- across hosts: -S with tests/ref/ssh_here standing in for ssh and two hosts

# hosts ARGS...: parallel on the "hosts" h1 and h2 (folders under $T/homes).
hosts() {
	command -v rsync >/dev/null || fail "rsync is not installed (make deps)"
	SSH_HERE_HOMES=$T/homes par --ssh "$REF/ssh_here" -S h1,h2 "$@"
}

@test "across hosts: docsim queries with the corpus as --basefile equal the whole run" {
	cd "$T"
	awk '{ print "q" NR "\t" $0 }' "$TESTDATA/docsim/queries.txt" "$TESTDATA/docsim/corpus.txt" >q.tsv
	awk '{ print "d" NR "\t" $0 }' "$TESTDATA/docsim/corpus.txt" >corpus.tsv
	docsim --ids -k 10 -q q.tsv corpus.tsv >whole
	hosts --basefile corpus.tsv --cleanup --pipepart -a q.tsv --block 200 \
		docsim --ids -k 10 -q - corpus.tsv >split
	split_ran 4
	cmp split whole
	# both hosts ran jobs, and --cleanup left nothing behind
	[ "$(awk 'NR > 1 { print $2 }' joblog | sort -u | paste -sd ' ')" = "h1 h2" ]
	[ -z "$(find homes -type f)" ]
	# numbered pieces go over hosts too
	docsim -k 10 -q "$TESTDATA/docsim/queries.txt" corpus.tsv --format text >whole2
	hosts --basefile corpus.tsv --pipe -N 2 docsim -k 10 --format text \
		--first-record '$(( ({#} - 1) * 2 + 1 ))' -q - corpus.tsv \
		<"$TESTDATA/docsim/queries.txt" >split2
	cmp split2 whole2
}

@test "across hosts: HTK files by --transferfile, models by --basefile, equal the whole run" {
	cd "$T"
	cp "$G/native.txt" models.txt
	for k in 0 1 2 3 4; do
		head -c $((12 + 24 * (k + 2))) "$G/feats.htk" |
			py -c 'import sys, struct
d = sys.stdin.buffer.read()
sys.stdout.buffer.write(struct.pack(">i", (len(d) - 12) // 24) + d[4:] + bytes(2))' >"u$k.htk"
	done
	gmmscore -m models.txt --top 2 u?.htk >whole
	hosts --basefile models.txt --cleanup --transferfile {} -n 2 \
		gmmscore -m models.txt --top 2 ::: u?.htk >split
	split_ran 3
	cmp split whole
	[ -z "$(find homes -type f)" ]
}

@test "across hosts: pairs by --pipepart, and -o files fetched back by --return" {
	cd "$T"
	hosts --pipepart -a "$D/pairs.txt" --block 3k editdist4r >split
	split_ran 10
	diff split "$D/pairs.ref"
	split -l 100 -d "$D/pairs.txt" piece.
	hosts --transferfile {} --return {}.out --cleanup editdist4r -o {}.out {} ::: piece.0?
	cat piece.0?.out >split2
	diff split2 "$D/pairs.ref"
}
