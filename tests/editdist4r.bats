#!/usr/bin/env bats
# editdist4r: edit distances against an independent plain DP (tests/ref/editdist4r_ref.c,
# built here), python3-levenshtein (also by code point: tests/ref/editdist4r_unicode.py)
# and python3-edlib where they are installed.

setup_file() {
	export EDREF="$BATS_FILE_TMPDIR/ref"
	cc -O2 -o "$EDREF" "$BATS_TEST_DIRNAME/ref/editdist4r_ref.c"
	local d=$BATS_FILE_TMPDIR
	"$EDREF" gen 1 150 2000 dna >"$d/dna.txt"
	"$EDREF" gen 2 60 2000 ascii >"$d/ascii.txt"
	"$EDREF" gen 3 60 2000 high >"$d/high.txt"
	"$EDREF" gen 4 100 600 bytes >"$d/bytes.txt"
	"$EDREF" gen 5 3000 300 dna >"$d/short.txt"
	"$EDREF" gen 6 40 700 dna >"$d/small.txt"
	for f in dna ascii high bytes short small; do
		"$EDREF" dist <"$d/$f.txt" >"$d/$f.ref"
	done
	# Several sets in one run (each run of a GPU build pays for starting CUDA).
	cat "$d/dna.txt" "$d/bytes.txt" "$d/short.txt" >"$d/mix.txt"
	cat "$d/dna.ref" "$d/bytes.ref" "$d/short.ref" >"$d/mix.ref"
}

setup() {
	load helpers
	D=$BATS_FILE_TMPDIR
	UNI=$REF/editdist4r_unicode.py
}

# uni_data: random Unicode pairs and their distances by code point, made once.
uni_data() {
	pyhas Levenshtein || skip "python3-levenshtein is not installed"
	[ -s "$D/uni.ref" ] && return
	py "$UNI" gen 7 1500 300 >"$D/uni.txt"
	py "$UNI" dist <"$D/uni.txt" >"$D/uni.ref"
}

# edlib_nw FILE: python3-edlib's global distance of each pair line of FILE, a line each
# (an empty side: the other's length, which edlib does not take).
edlib_nw() {
	py -c '
import sys, edlib
for line in open(sys.argv[1]):
    a, b = line.rstrip("\n").split("\t")
    print(len(b) if not a else len(a) if not b else edlib.align(a, b, mode="NW")["editDistance"])
' "$1"
}

# same FILE REF ARGS...: editdist4r ARGS... FILE prints exactly REF
same() {
	local f=$1 r=$2
	shift 2
	run --separate-stderr editdist4r "$@" "$f"
	[ "$status" -eq 0 ] || { echo "exit $status: $stderr"; return 1; }
	diff <(printf '%s\n' "$output") "$r"
}

@test "the paper's examples are 4 and 3 with every engine and block size" {
	for a in "" "--algo bp" "--algo dp" "-t 1" "-t 2" "-t 3"; do
		run -0 editdist4r $a "$TESTDATA/editdist4r/pairs.txt"
		assert_output "$(printf '4\n3\n3\n7\n0')"
	done
}

@test "random DNA pairs of 0 to 2000 bases match the plain DP" {
	same "$D/dna.txt" "$D/dna.ref"
}

@test "the Four-Russians engine matches the plain DP at every block size" {
	for t in 1 2 3; do
		same "$D/mix.txt" "$D/mix.ref" -t "$t"
	done
}

@test "the bit-parallel and plain DP engines match the reference" {
	same "$D/mix.txt" "$D/mix.ref" --algo bp
	same "$D/small.txt" "$D/small.ref" --algo dp
}

@test "ASCII pairs match the plain DP" {
	same "$D/ascii.txt" "$D/ascii.ref"
	same "$D/ascii.txt" "$D/ascii.ref" -t 2
}

@test "bytes of 0x80 and above are letters like any other" {
	same "$D/high.txt" "$D/high.ref"
	same "$D/high.txt" "$D/high.ref" -t 3
}

@test "any byte but TAB and newline is a letter" {
	same "$D/bytes.txt" "$D/bytes.ref"
}

@test "many short pairs match the plain DP" {
	same "$D/short.txt" "$D/short.ref"
}

@test "python3-levenshtein agrees on random pairs" {
	pyhas Levenshtein || skip "python3-levenshtein is not installed"
	run -0 py -c '
import sys, Levenshtein
for line in open(sys.argv[1], "rb"):
    a, b = line.rstrip(b"\n").split(b"\t")
    print(Levenshtein.distance(a.decode("latin-1"), b.decode("latin-1")))
' "$D/ascii.txt"
	printf '%s\n' "$output" >"$D/lev.out"
	same "$D/ascii.txt" "$D/lev.out"
}

@test "python3-edlib agrees on random DNA pairs" {
	pyhas edlib || skip "python3-edlib is not installed"
	edlib_nw "$D/dna.txt" >"$D/edlib.out"
	same "$D/dna.txt" "$D/edlib.out"
}

@test "identical strings are 0 apart and an empty one is as far as the other is long" {
	run -0 editdist4r <<<"$(printf 'ACGTACGT\tACGTACGT\n\tACGT\nACGTA\t\n\t')"
	assert_output "$(printf '0\n4\n5\n0')"
}

@test "a long pair of 20000 bases matches the plain DP, whole and banded" {
	"$EDREF" gen 9 1 20000 dna | awk -F'\t' 'length($1) > 10000' >"$D/long.txt"
	[ -s "$D/long.txt" ] || "$EDREF" gen 10 1 20000 dna >"$D/long.txt"
	d=$("$EDREF" dist <"$D/long.txt")
	for a in "" "--algo bp" "-t 3"; do
		run -0 editdist4r $a "$D/long.txt"
		assert_output "$d"
		run -0 editdist4r $a -k "$d" "$D/long.txt"
		assert_output "$d"
		run -0 editdist4r $a -k "$((d - 1))" "$D/long.txt"
		assert_output "-1"
	done
}

@test "--max-dist keeps distances up to K and prints -1 above, at K and K+1" {
	for k in 0 7 300; do
		"$EDREF" dist "$k" <"$D/mix.txt" >"$D/k.ref"
		for a in "" "--algo bp" "-t 1" "-t 2" "-t 3"; do
			same "$D/mix.txt" "$D/k.ref" $a --max-dist "$k"
		done
	done
	"$EDREF" dist 40 <"$D/small.txt" >"$D/k.ref"
	same "$D/small.txt" "$D/k.ref" --algo dp --max-dist 40
}

@test "--max-dist at a pair's exact distance keeps it and one less drops it" {
	# Each pair alone, at K = d and K = d - 1.
	head -n 5 "$D/dna.txt" >"$D/few.txt"
	paste "$D/few.txt" <(head -n 5 "$D/dna.ref") | while IFS=$'\t' read -r a b d; do
		[ "$d" -gt 0 ] || continue
		for e in "" "-t 2"; do
			[ "$(printf '%s\t%s\n' "$a" "$b" | editdist4r $e -k "$d")" = "$d" ]
			[ "$(printf '%s\t%s\n' "$a" "$b" | editdist4r $e -k "$((d - 1))")" = "-1" ]
		done
	done
}

@test "--max-dist below the length difference prints -1 at once" {
	run -0 editdist4r -k 2 <<<"$(printf 'AAAA\tAAAAAAA\nAAAA\tAAAAAA\n\tAAA\n\tAA')"
	assert_output "$(printf -- '-1\n2\n-1\n2')"
}

@test "--path CIGARs turn A into B at the distance's cost" {
	for a in "" "-t 3" "--algo dp"; do
		run --separate-stderr editdist4r $a --path "$D/small.txt"
		[ "$status" -eq 0 ]
		printf '%s\n' "$output" >"$D/path.out"
		run -0 "$EDREF" check "$D/small.txt" "$D/path.out"
		assert_output "ok 40"
	done
	run --separate-stderr editdist4r --path "$D/bytes.txt"
	printf '%s\n' "$output" >"$D/path.out"
	run -0 "$EDREF" check "$D/bytes.txt" "$D/path.out"
	assert_output "ok 100"
}

@test "--path of a long pair is optimal (linear-space recursion)" {
	"$EDREF" gen 21 3 6000 dna >"$D/lp.txt"
	run --separate-stderr editdist4r --path "$D/lp.txt"
	printf '%s\n' "$output" >"$D/lp.out"
	run -0 "$EDREF" check "$D/lp.txt" "$D/lp.out"
	assert_output "ok 3"
}

@test "--path prints * for pairs beyond --max-dist and an empty CIGAR for two empty strings" {
	run -0 editdist4r --path -k 1 <<<"$(printf 'AC\tAG\nAAAA\tTTTT\n\t')"
	assert_output "$(printf '1\t1=1X\n-1\t*\n0\t')"
}

@test "FASTA records pair up by position, wrapped lines joined" {
	run -0 editdist4r -a "$TESTDATA/editdist4r/reads.fa" -b "$TESTDATA/editdist4r/reads.fq"
	assert_output "$(printf '1\n2\n1')"
}

@test "FASTA, FASTQ and one-a-line files give the pairs' distances" {
	awk -F'\t' '{ print ">a" NR; s = $1; while (length(s) > 60) { print substr(s, 1, 60); s = substr(s, 61) } print s }' "$D/small.txt" >"$D/a.fa"
	awk -F'\t' '{ print "@b" NR; print $2; print "+"; q = $2; gsub(/./, "I", q); print q }' "$D/small.txt" >"$D/b.fq"
	cut -f2 "$D/small.txt" >"$D/b.txt"
	run -0 editdist4r -a "$D/a.fa" -b "$D/b.fq"
	diff <(printf '%s\n' "$output") "$D/small.ref"
	run -0 editdist4r -a "$D/a.fa" -b "$D/b.txt" -t 3
	diff <(printf '%s\n' "$output") "$D/small.ref"
}

@test "--all-vs-all prints the matrix of every record against every other" {
	head -n 12 "$D/small.txt" | cut -f1 >"$D/ma.txt"
	head -n 7 "$D/small.txt" | cut -f2 >"$D/mb.txt"
	"$EDREF" matrix "$D/ma.txt" "$D/mb.txt" >"$D/m.ref"
	for a in "" "-t 2" "--algo bp"; do
		run -0 editdist4r $a --all-vs-all -a "$D/ma.txt" -b "$D/mb.txt"
		diff <(printf '%s\n' "$output") "$D/m.ref"
	done
}

@test "-O npy writes the distances as float32, a column or the matrix" {
	head -n 5 "$D/small.txt" | cut -f1 >"$D/na.txt"
	head -n 3 "$D/small.txt" | cut -f2 >"$D/nb.txt"
	"$EDREF" matrix "$D/na.txt" "$D/nb.txt" >"$D/n.ref"
	run -0 editdist4r --all-vs-all -a "$D/na.txt" -b "$D/nb.txt" -o "$D/m.npy"
	run -0 py -c 'import sys, numpy as np
m = np.load(sys.argv[1]); r = np.loadtxt(sys.argv[2], ndmin=2)
assert m.dtype == np.float32 and m.shape == (5, 3) and (m == r).all(), (m, r)
print("ok")' "$D/m.npy" "$D/n.ref"
	assert_output ok
	run -0 editdist4r -O npy -o "$D/c.npy" "$D/small.txt"
	run -0 py -c 'import sys, numpy as np
c = np.load(sys.argv[1]); r = np.loadtxt(sys.argv[2])
assert c.dtype == np.float32 and c.shape == (40, 1) and (c[:, 0] == r).all()
print("ok")' "$D/c.npy" "$D/small.ref"
	assert_output ok
}

@test "-O npy writes a list to standard output, a pipe, as clkmeans and clmatmul do" {
	run -0 bash -o pipefail -c 'editdist4r -O npy "$1" | cat > "$2"' _ "$D/small.txt" "$D/p.npy"
	run -0 py -c 'import sys, numpy as np
c = np.load(sys.argv[1]); r = np.loadtxt(sys.argv[2])
assert c.dtype == np.float32 and c.shape == (40, 1) and (c[:, 0] == r).all()
print("ok")' "$D/p.npy" "$D/small.ref"
	assert_output ok
	# the same bytes as the file -o writes; none at all for no pairs
	editdist4r -O npy -o "$D/f.npy" "$D/small.txt"
	cmp "$D/p.npy" "$D/f.npy"
	run -0 bash -o pipefail -c ': | editdist4r -O npy | cat > "$1"' _ "$D/e.npy"
	run -0 py -c 'import sys, numpy as np
c = np.load(sys.argv[1]); print(c.dtype, c.shape)' "$D/e.npy"
	assert_output "float32 (0, 1)"
}

@test "small batches (--max-device-mem) give the same distances" {
	same "$D/short.txt" "$D/short.ref" --max-device-mem 4M
	same "$D/dna.txt" "$D/dna.ref" --max-device-mem 4M -t 2
}

@test "several FILEs are read in order, and - is standard input" {
	run -0 editdist4r "$TESTDATA/editdist4r/pairs.txt" - <<<"$(printf 'abc\tabd')"
	assert_output "$(printf '4\n3\n3\n7\n0\n1')"
}

@test "CRLF line ends are not part of the strings" {
	run -0 editdist4r <<<"$(printf 'abc\tabc\r\nab\tabc\r\n')"
	assert_output "$(printf '0\n1')"
}

@test "empty input prints nothing" {
	run -0 editdist4r </dev/null
	assert_output ""
}

@test "-o FILE writes the distances to the file" {
	run -0 editdist4r -o "$D/o.txt" "$TESTDATA/editdist4r/pairs.txt"
	assert_output ""
	run -0 cat "$D/o.txt"
	assert_output "$(printf '4\n3\n3\n7\n0')"
}

@test "a line without a TAB is an error naming the line" {
	printf 'a\tb\nnotab\n' >"$D/bad.txt"
	run --separate-stderr -1 editdist4r "$D/bad.txt"
	[[ "$stderr" == *"bad.txt:2: no TAB"* ]]
}

@test "a line with two TABs is an error naming the line" {
	printf 'a\tb\tc\n' >"$D/bad2.txt"
	run --separate-stderr -1 editdist4r "$D/bad2.txt"
	[[ "$stderr" == *"bad2.txt:1: more than one TAB"* ]]
}

@test "unequal record counts name the file and line of the record without a partner" {
	run --separate-stderr -1 editdist4r -a "$TESTDATA/editdist4r/reads.fa" -b "$TESTDATA/editdist4r/refs.fa"
	[[ "$stderr" == *"reads.fa:6: record 3 has no partner"* ]]
}

@test "a FASTQ quality line of the wrong length is an error naming the line" {
	printf '@a\nACGT\n+\nIII\n' >"$D/bad.fq"
	run --separate-stderr -1 editdist4r -a "$D/bad.fq" -b "$D/bad.fq"
	[[ "$stderr" == *"bad.fq:4: quality line has 3 bytes"* ]]
}

@test "a FASTQ record cut short is an error naming its line" {
	printf '@a\nACGT\n+\nIIII\n@b\nAC\n' >"$D/cut.fq"
	run --separate-stderr -1 editdist4r -a "$D/cut.fq" -b "$D/cut.fq"
	[[ "$stderr" == *"cut.fq:5: FASTQ record ends"* ]]
}

@test "a missing file is an error naming it" {
	run --separate-stderr -1 editdist4r "$D/nonexistent.txt"
	[[ "$stderr" == *"nonexistent.txt: No such file"* ]]
}

@test "bad options are usage errors (exit 2)" {
	for args in "-t 0" "-t 4" "--algo nw" "-k -1" "-a x" "--all-vs-all" "--path --all-vs-all -a x -b y" "--path -O npy" "--format lines" "--format fa -a x -b y" "--bogus"; do
		run --separate-stderr -2 editdist4r $args /dev/null
		[[ "$stderr" == *"Try 'editdist4r --help'"* ]]
	done
}

@test "--help, --version and --list-devices" {
	run -0 editdist4r --help
	assert_line --partial "usage: editdist4r [options] [FILE ...]"
	run -0 editdist4r --version
	assert_output --regexp '^editdist4r \(accelkit\) '
	run -0 editdist4r --list-devices
	assert_line --index 0 --regexp '^cpu'
}

@test "-v names the device and engine on standard error only" {
	run --separate-stderr -0 editdist4r -v "$TESTDATA/editdist4r/pairs.txt"
	[[ "$stderr" == *"device: "* && "$stderr" == *"engine: "* ]]
	[ "${#lines[@]}" -eq 5 ]
}

@test "the default block size is the tuning row's: 3 on the CPU, as -v and --help say" {
	run --separate-stderr -0 editdist4r -d cpu -v "$TESTDATA/editdist4r/pairs.txt"
	[[ "$stderr" == *"tuning: default (development machine"* ]]
	[[ "$stderr" == *"engine: auto (bit-parallel), block size 3"* ]]
	run --separate-stderr -0 editdist4r -d cpu -v --algo 4r "$TESTDATA/editdist4r/pairs.txt"
	[[ "$stderr" == *"engine: 4r, block size 3"* ]]
	assert_output "$(printf '4\n3\n3\n7\n0')"
	run -0 editdist4r --help
	assert_line --partial "(default 3 on the CPU,"
	assert_line --partial " 2 on a GPU); selects --algo 4r"
}

@test "every row of the tuning table passes its legality checks, and rows that break them are rejected" {
	run -0 tunerows editdist4r
	assert_line --index 0 "editdist4r: 2 rows pass"
	assert_line --index 1 --partial "broken auto_algo = ED_DP: rejected: "
	refute_output --partial ": passes"
	assert_equal "$(grep -c ': rejected: ' <<< "$output")" 9
}

@test "on a GPU the tuning row is the NVIDIA one: block size 2, bit-parallel for auto" {
	require_gpu
	run --separate-stderr -0 editdist4r -d gpu -v --algo 4r "$TESTDATA/editdist4r/pairs.txt"
	[[ "$stderr" == *"tuning: gpu nvidia (H200 "* ]]
	[[ "$stderr" == *"engine: 4r, block size 2"* ]]
	[[ "$stderr" == *"GPU engines: Four-Russians t=2 thread per pair;"* ]]
	assert_output "$(printf '4\n3\n3\n7\n0')"
	run --separate-stderr -0 editdist4r -d gpu -v "$TESTDATA/editdist4r/pairs.txt"
	[[ "$stderr" == *"engine: auto (bit-parallel), block size 2"* ]]
	[[ "$stderr" == *"GPU engines: bit-parallel thread per pair;"* ]]
	assert_output "$(printf '4\n3\n3\n7\n0')"
}

@test "man page example: the distance of each pair" {
	run -0 sh -c "printf 'kitten\tsitting\n' | editdist4r"
	assert_output 3
}

@test "man page example: an alignment as a CIGAR" {
	run -0 sh -c "printf 'ababca\tabcacdca\n' | editdist4r --path"
	assert_output "$(printf '3\t2=1I1=1I1X2=')"
}

@test "man page example: reads against references, every one against every other" {
	run -0 editdist4r --all-vs-all -a "$TESTDATA/editdist4r/reads.fa" -b "$TESTDATA/editdist4r/refs.fa"
	assert_output "$(printf '0\t8\n9\t1\n11\t11')"
}

@test "man page example: only distances up to 2" {
	run -0 editdist4r -k 2 -a "$TESTDATA/editdist4r/reads.fa" -b "$TESTDATA/editdist4r/reads.fq"
	assert_output "$(printf '1\n2\n1')"
}

@test "GPU and CPU print the same, for every engine" {
	require_gpu
	for a in "" "--algo bp" "--algo 4r" "-t 1" "-t 3" "-k 50" "-k 50 -t 2" "-k 50 --algo bp"; do
		editdist4r -d cpu $a "$D/mix.txt" >"$D/cpu.out"
		editdist4r -d gpu $a "$D/mix.txt" >"$D/gpu.out"
		cmp "$D/cpu.out" "$D/gpu.out"
	done
}

# ---- several GPUs (gpu:all, gpu:0,1) ----

# big4: mix.txt four times over (some 10 batches at --max-device-mem 4M) and its reference
big4() {
	[ -s "$D/big4.ref" ] && return
	cat "$D/mix.txt" "$D/mix.txt" "$D/mix.txt" "$D/mix.txt" >"$D/big4.txt"
	cat "$D/mix.ref" "$D/mix.ref" "$D/mix.ref" "$D/mix.ref" >"$D/big4.ref"
}

# divided DEV ENV...: editdist4r on DEV with ENV set gives the plain DP's distances and
# the one-device run's bytes for every engine, --path, -u and --all-vs-all, in small batches
divided() {
	local dev=$1 one=$2 a
	shift 2
	big4
	[ $# -eq 0 ] || export "$@"
	same "$D/big4.txt" "$D/big4.ref" -d "$dev" --max-device-mem 4M
	for a in "--algo bp" "-t 2" "-k 50" "--path" "-O npy -o $D/many.npy"; do
		env -u ACCELKIT_CPU_WORKERS editdist4r -d "$one" $a --max-device-mem 4M "$D/big4.txt" \
		    >"$D/one.out"
		[ ! -e "$D/many.npy" ] || mv "$D/many.npy" "$D/one.npy"
		editdist4r -d "$dev" $a --max-device-mem 4M "$D/big4.txt" >"$D/many.out"
		cmp "$D/one.out" "$D/many.out"
		[ ! -e "$D/one.npy" ] || cmp "$D/one.npy" "$D/many.npy"
		rm -f "$D/one.npy" "$D/many.npy"
	done
	# -u: UTF-8 pairs of a few characters, and of more than 256 (by code point)
	py -c '
import random
r = random.Random(8)
few = "abcé日本語ü"
many = [chr(c) for c in range(0x4e00, 0x4e00 + 400)]
out = []
for i in range(6000):
    al = few if i % 7 else many
    a = "".join(r.choice(al) for _ in range(r.randrange(0, 300)))
    b = "".join(c if r.random() > 0.1 else r.choice(al) for c in a)
    out.append(a + "\t" + b + "\n")
open("'"$D/u8.txt"'", "w", encoding="utf-8").write("".join(out))'
	env -u ACCELKIT_CPU_WORKERS editdist4r -d "$one" -u --path --max-device-mem 4M "$D/u8.txt" \
	    >"$D/one.out"
	editdist4r -d "$dev" -u --path --max-device-mem 4M "$D/u8.txt" >"$D/many.out"
	cmp "$D/one.out" "$D/many.out"
	cut -f1 "$D/short.txt" >"$D/sa.txt"
	cut -f2 "$D/short.txt" | head -n 400 >"$D/sb.txt"
	env -u ACCELKIT_CPU_WORKERS editdist4r -d "$one" --all-vs-all --format lines -a "$D/sa.txt" \
	    -b "$D/sb.txt" --max-device-mem 4M >"$D/one.out"
	editdist4r -d "$dev" --all-vs-all --format lines -a "$D/sa.txt" -b "$D/sb.txt" \
	    --max-device-mem 4M >"$D/many.out"
	cmp "$D/one.out" "$D/many.out"
}

@test "divided over several workers, as over GPUs, distances are the plain DP's and one worker's bytes" {
	# ACCELKIT_CPU_WORKERS runs the several-GPU code (common/devwork.h) on the CPU.
	divided cpu cpu ACCELKIT_CPU_WORKERS=3
	run -0 --separate-stderr editdist4r -v -d cpu --max-device-mem 4M "$D/big4.txt"
	assert_regex "$stderr" "editdist4r: cpu#3 share [0-9]+% busy [0-9.]+ s \(units [0-9]+\)"
	assert_line --index 0 "$(head -n 1 "$D/big4.ref")"
}

@test "one GPU listed twice (gpu:0,0) gives one GPU's bytes, and -v each worker's share" {
	require_gpu
	divided gpu:0,0 gpu
	run -0 --separate-stderr editdist4r -v -d gpu:0,0 --max-device-mem 4M "$D/big4.txt"
	assert_regex "$stderr" "editdist4r: gpu:0 share [0-9]+% busy [0-9.]+ s \(units [0-9]+\)"
	assert_regex "$stderr" "editdist4r: gpu:0#2 share [0-9]+% busy [0-9.]+ s \(units [0-9]+\)"
}

@test "gpu:all and gpu:1,0 give one GPU's bytes and the plain DP's distances" {
	require_gpus 2
	divided gpu:all gpu
	divided gpu:1,0 gpu
	run -0 --separate-stderr editdist4r -v -d gpu:all --max-device-mem 4M "$D/big4.txt"
	assert_regex "$stderr" "editdist4r: gpu:1 share [0-9]+% busy [0-9.]+ s \(units [0-9]+\)"
}

# ---- characters (-u) ----

@test "man page example: a read placed in a reference window, anywhere in it, and at its start" {
	run -0 sh -c "printf 'ACGT\tTTACGTAA\n' | editdist4r -d cpu --mode infix"
	assert_output "$(printf '0\t2\t5')"
	run -0 sh -c "printf 'ACGT\tTTACGTAA\n' | editdist4r -d cpu --mode prefix --path"
	assert_output "$(printf '2\t0\t5\t2I4=')"
	run -0 sh -c "printf 'ACGT\tTTACGTAA\n' | editdist4r --mode global"
	assert_output 4
}

@test "man page example: characters rather than bytes" {
	run -0 sh -c "printf 'café\tcafe\n' | editdist4r"
	assert_output 2
	run -0 sh -c "printf 'café\tcafe\n' | editdist4r -u"
	assert_output 1
}

@test "-u matches python-Levenshtein on random Unicode pairs with every engine" {
	uni_data
	for a in "" "--algo bp" "--algo dp" "-t 1" "-t 2" "-t 3"; do
		same "$D/uni.txt" "$D/uni.ref" -u $a
	done
}

@test "-u: pairs that share more than 254 characters are computed by code point, and agree" {
	uni_data
	run --separate-stderr -0 editdist4r -u -v "$D/uni.txt"
	[[ "$stderr" =~ -u:\ ([0-9]+)\ pairs\ needed\ more ]]
	[ "${BASH_REMATCH[1]}" -gt 0 ]
	diff <(printf '%s\n' "$output") "$D/uni.ref"
}

@test "-u --max-dist matches python-Levenshtein" {
	uni_data
	for k in 0 5 40; do
		py "$UNI" dist "$k" <"$D/uni.txt" >"$D/uk.ref"
		for a in "" "--algo bp" "-t 2"; do
			same "$D/uni.txt" "$D/uk.ref" -u -k "$k" $a
		done
	done
}

@test "-u --path CIGARs count characters and turn A into B at the distance's cost" {
	uni_data
	for a in "" "-t 3" "--algo dp"; do
		editdist4r -u --path $a "$D/uni.txt" >"$D/upath.out"
		run -0 py "$UNI" check "$D/uni.txt" "$D/upath.out"
		assert_output "ok 1500"
	done
}

@test "-u in small batches (--max-device-mem) gives the same distances" {
	uni_data
	same "$D/uni.txt" "$D/uni.ref" -u --max-device-mem 4M
}

@test "-u: a string that is not UTF-8 is an error naming its line, and without -u it is bytes" {
	printf 'abc\tabd\nab\377c\tabc\n' >"$D/bad8.txt"
	run --separate-stderr -1 editdist4r -u "$D/bad8.txt"
	[[ "$stderr" == *"bad8.txt:2: A is not UTF-8 (byte 3 is 0xff)"* ]]
	run -0 editdist4r "$D/bad8.txt"
	assert_output "$(printf '1\n1')"
	# overlong, a surrogate, above U+10FFFF, cut short, a lone continuation byte
	for s in '\300\257' '\355\240\200' '\364\220\200\200' '\342\202' '\200'; do
		printf "xy\tx$s\n" >"$D/bad9.txt"
		run --separate-stderr -1 editdist4r -u "$D/bad9.txt"
		[[ "$stderr" == *"bad9.txt:1: B is not UTF-8 (byte 2 is 0x"* ]]
	done
}

@test "-u pairs the records of -a and -b, and --all-vs-all codes them once or pair by pair" {
	pyhas Levenshtein || skip "python3-levenshtein is not installed"
	py "$UNI" records 3 30 0 >"$D/ra.txt"
	py "$UNI" records 4 30 0 >"$D/rb.txt"
	paste "$D/ra.txt" "$D/rb.txt" | py "$UNI" dist >"$D/rab.ref"
	run -0 editdist4r -u -a "$D/ra.txt" -b "$D/rb.txt"
	diff <(printf '%s\n' "$output") "$D/rab.ref"
	# Latin and Greek: one coding for every record
	py "$UNI" matrix "$D/ra.txt" "$D/rb.txt" >"$D/rm.ref"
	run -0 editdist4r -u --all-vs-all -a "$D/ra.txt" -b "$D/rb.txt"
	diff <(printf '%s\n' "$output") "$D/rm.ref"
	# 100 of 400 CJK characters each: together more than a byte codes, so pair by pair
	py "$UNI" records 5 12 1 >"$D/wa.txt"
	py "$UNI" records 6 9 1 >"$D/wb.txt"
	py "$UNI" matrix "$D/wa.txt" "$D/wb.txt" >"$D/wm.ref"
	for a in "" "-t 2"; do
		run -0 editdist4r -u --all-vs-all $a -a "$D/wa.txt" -b "$D/wb.txt"
		diff <(printf '%s\n' "$output") "$D/wm.ref"
	done
}

@test "GPU and CPU print the same with -u" {
	require_gpu
	uni_data
	for a in "" "-t 2" "-k 20" "--path" "--algo bp -k 5"; do
		editdist4r -d cpu -u $a "$D/uni.txt" >"$D/cpu.out"
		editdist4r -d gpu -u $a "$D/uni.txt" >"$D/gpu.out"
		cmp "$D/cpu.out" "$D/gpu.out"
	done
	cmp "$D/gpu.out" <(editdist4r -d cpu -u --algo dp -k 5 "$D/uni.txt")
}

# ---- the record format (--format) ----

@test "man page example: a word list whose words start with @" {
	cd "$BATS_TEST_TMPDIR"
	printf '@alice\n@bob\n' >a
	printf 'alice\nbobby\n' >b
	run -0 editdist4r --format lines -a a -b b
	assert_output "$(printf '1\n3')"
	# without --format, the first '@' makes it FASTQ
	run --separate-stderr -1 editdist4r -a a -b b
	[[ "$stderr" == *"a:1: FASTQ record ends before its '+' line"* ]]
}

@test "--format lines takes every line as it is: '>' and '@' lines, blank lines as empty strings" {
	printf '>x\n\n@y\r\n' >"$D/w1.txt"
	printf '>\nz\n@yy\n' >"$D/w2.txt"
	run -0 editdist4r --format lines -a "$D/w1.txt" -b "$D/w2.txt"
	assert_output "$(printf '1\n1\n1')"
	run -0 editdist4r --format lines --all-vs-all -a "$D/w1.txt" -b "$D/w2.txt"
	assert_output "$(printf '1\t2\t3\n1\t1\t3\n2\t2\t1')"
	printf '>x\n' >"$D/w3.txt"
	run --separate-stderr -1 editdist4r --format lines -a "$D/w1.txt" -b "$D/w3.txt"
	[[ "$stderr" == *"w1.txt:2: record 2 has no partner"* ]]
}

@test "--format fasta and fastq read those formats, and a file of another is an error naming it" {
	run -0 editdist4r --format fasta -a "$TESTDATA/editdist4r/reads.fa" -b "$TESTDATA/editdist4r/reads.fa"
	assert_output "$(printf '0\n0\n0')"
	run -0 editdist4r --format fastq -a "$TESTDATA/editdist4r/reads.fq" -b "$TESTDATA/editdist4r/reads.fq"
	assert_output "$(printf '0\n0\n0')"
	run --separate-stderr -1 editdist4r --format fasta -a "$TESTDATA/editdist4r/reads.fq" -b "$TESTDATA/editdist4r/reads.fa"
	[[ "$stderr" == *"reads.fq: not FASTA: the first line that is not blank does not start with '>' (--format fasta)"* ]]
	run --separate-stderr -1 editdist4r --format fastq -a "$TESTDATA/editdist4r/reads.fq" -b "$TESTDATA/editdist4r/reads.fa"
	[[ "$stderr" == *"reads.fa: not FASTQ"* ]]
	printf 'ACGT\n' >"$D/plain.txt"
	run --separate-stderr -1 editdist4r --format fastq -a "$D/plain.txt" -b "$D/plain.txt"
	[[ "$stderr" == *"plain.txt: not FASTQ"* ]]
}

# ---- choosing the device (auto) ----

@test "-d auto without a GPU says so and runs on the CPU" {
	editdist4r --list-devices | grep -q '^gpu:' && skip "a GPU is here (the require_gpu tests cover auto)"
	run --separate-stderr -0 editdist4r -d auto -v "$TESTDATA/editdist4r/pairs.txt"
	# "no usable GPU" once CUDA's start has found none; before that, auto weighs the work
	[[ "$stderr" == *"device: cpu"* ]]
	[[ "$stderr" == *"(no usable GPU"* || "$stderr" == *"auto: cpu, estimated"* ]]
	assert_output "$(printf '4\n3\n3\n7\n0')"
	# the first batches wait for the choice: many batches (--max-device-mem) under auto
	same "$D/dna.txt" "$D/dna.ref" -d auto --max-device-mem 4M
}

@test "auto on the GPU machine computes testdata on the CPU without waiting for CUDA" {
	require_gpu
	for f in pairs.txt; do
		run --separate-stderr -0 env ACCELKIT_DEVICE=auto editdist4r -v "$TESTDATA/editdist4r/$f"
		[[ "$stderr" == *"auto: cpu, estimated"* ]]
		[[ "$stderr" == *"device: cpu"* ]]
		[[ "$stderr" != *"device start"* ]]
		assert_output "$(printf '4\n3\n3\n7\n0')"
	done
	run --separate-stderr -0 env ACCELKIT_DEVICE=auto editdist4r -v --all-vs-all \
	    -a "$TESTDATA/editdist4r/reads.fa" -b "$TESTDATA/editdist4r/refs.fa"
	[[ "$stderr" == *"auto: cpu, estimated"* && "$stderr" != *"device start"* ]]
	assert_output "$(printf '0\t8\n9\t1\n11\t11')"
}

@test "auto chooses the GPU when the work pays for CUDA's start" {
	require_gpu
	# 400,000 pairs of about 150 bases: 9 G cells, 0.8 s estimated on one CPU thread
	# against under 0.5 s on the GPU, CUDA's whole start included
	"$EDREF" sizes 41 400000 dna 150 >"$D/big.txt"
	run --separate-stderr -0 editdist4r -d auto -j 1 -v "$D/big.txt"
	[[ "$stderr" == *"auto: gpu, estimated"* ]]
	[[ "$stderr" == *"device: gpu:"* ]]
	printf '%s\n' "$output" >"$D/big.gpu"
	editdist4r -d cpu "$D/big.txt" | cmp - "$D/big.gpu"
}

# ---- properties (issue 14): sizes at every edge, random bounds, a trickling pipe ----

# Lengths at the edges of the machine word (64 on the CPU, 32 on the GPU), the t-blocks
# (1..3), the strips and wavefront jobs (t x 256 and 32 x 64 rows) and the thread-per-pair
# limit (a shorter side of 256).
EDGES="0 1 2 3 4 5 6 7 8 9 10 31 32 33 63 64 65 95 96 97 127 128 129 255 256 257 511 512 513 767 768 769 2047 2048 2049"

@test "property: every engine matches the reference at lengths on every edge, bytes of all kinds" {
	for kind in dna bytes; do
		"$EDREF" sizes 51 240 "$kind" $EDGES >"$D/edge.txt"
		"$EDREF" dist <"$D/edge.txt" >"$D/edge.ref"
		for a in "" "--algo bp" "--algo dp" "-t 1" "-t 2" "-t 3"; do
			run -0 timeout "$(limit 60)" editdist4r $a "$D/edge.txt"
			diff <(printf '%s\n' "$output") "$D/edge.ref"
		done
	done
}

@test "property: random --max-dist, batch bounds and engines give the reference's distances" {
	RANDOM=14
	"$EDREF" sizes 52 20000 dna 0 1 63 64 65 127 128 129 150 255 256 257 >"$D/pb.txt"
	"$EDREF" sizes 53 60 dna 1000 2048 3001 >>"$D/pb.txt"
	"$EDREF" dist <"$D/pb.txt" >"$D/pb.ref"
	local ks=(-1 0 1 2 3 31 32 33 63 64 65 100 257 1000) mems=(0 4M 5M 7M 13M 64M)
	local algos=("" "--algo bp" "--algo dp" "-t 1" "-t 2" "-t 3") devs=(cpu auto)
	for i in $(seq 1 10); do
		local k=${ks[RANDOM % ${#ks[@]}]} m=${mems[RANDOM % ${#mems[@]}]}
		local a=${algos[RANDOM % ${#algos[@]}]} d=${devs[RANDOM % ${#devs[@]}]}
		local args="-d $d $a"
		[ "$k" -ge 0 ] && args="$args -k $k"
		[ "$m" != 0 ] && args="$args --max-device-mem $m"
		awk -v k="$k" '{ print ((k >= 0 && $1 > k) ? -1 : $1) }' "$D/pb.ref" >"$D/pbk.ref"
		run --separate-stderr timeout "$(limit 60)" editdist4r $args "$D/pb.txt"
		[ "$status" -eq 0 ] || fail "editdist4r $args: exit $status: $stderr"
		diff <(printf '%s\n' "$output") "$D/pbk.ref" >/dev/null || fail "editdist4r $args differs"
	done
}

@test "property: input through a pipe a byte at a time, and in tiny chunks, gives the same output" {
	"$EDREF" gen 54 150 200 dna >"$D/tr.txt"
	"$EDREF" dist <"$D/tr.txt" >"$D/tr.ref"
	run -0 timeout "$(limit 60)" sh -c '"$1" trickle "$2" | editdist4r' sh "$EDREF" "$D/tr.txt"
	diff <(printf '%s\n' "$output") "$D/tr.ref"
	run -0 timeout "$(limit 60)" env ACCELKIT_CHUNK_BYTES=64 editdist4r -j 2 "$D/tr.txt"
	diff <(printf '%s\n' "$output") "$D/tr.ref"
	# records: FASTA from a trickling pipe against one-a-line
	awk -F'\t' '{ print ">r" NR; print $1 }' "$D/tr.txt" >"$D/tr.fa"
	cut -f2 "$D/tr.txt" >"$D/tr.b"
	run -0 timeout "$(limit 60)" bash -c 'editdist4r -a <("$1" trickle "$2") -b "$3"' sh "$EDREF" "$D/tr.fa" "$D/tr.b"
	diff <(printf '%s\n' "$output") "$D/tr.ref"
}

@test "property: -u through a pipe a byte at a time gives the same output" {
	pyhas Levenshtein || skip "python3-levenshtein is not installed"
	py "$UNI" gen 8 120 80 >"$D/ut.txt"
	py "$UNI" dist <"$D/ut.txt" >"$D/ut.ref"
	run -0 timeout "$(limit 60)" sh -c '"$1" trickle "$2" | editdist4r -u' sh "$EDREF" "$D/ut.txt"
	diff <(printf '%s\n' "$output") "$D/ut.ref"
}

@test "property: GPU equals CPU for every engine, bound and size, long pairs included" {
	require_gpu
	RANDOM=15
	"$EDREF" sizes 55 3000 dna $EDGES >"$D/pg.txt"
	# the thread-per-pair limit of the longer side (65,536) and the wavefront past it
	"$EDREF" sizes 56 12 dna 65535 65536 65537 / 1 100 256 257 >>"$D/pg.txt"
	"$EDREF" sizes 57 4 bytes 9000 20000 >>"$D/pg.txt"
	local ks=(-1 0 1 31 32 33 64 257 5000) mems=(0 4M 9M 64M)
	local algos=("" "--algo bp" "-t 1" "-t 2" "-t 3")
	for i in $(seq 1 "$(cases 12)"); do
		local k=${ks[RANDOM % ${#ks[@]}]} m=${mems[RANDOM % ${#mems[@]}]}
		local args=${algos[RANDOM % ${#algos[@]}]}
		[ "$k" -ge 0 ] && args="$args -k $k"
		[ "$m" != 0 ] && args="$args --max-device-mem $m"
		timeout "$(limit 60)" editdist4r -d cpu $args "$D/pg.txt" >"$D/pg.cpu"
		timeout "$(limit 60)" editdist4r -d gpu $args "$D/pg.txt" >"$D/pg.gpu" || fail "gpu $args: exit $?"
		cmp "$D/pg.cpu" "$D/pg.gpu" || fail "editdist4r $args: GPU differs from CPU"
	done
}

# ---- --mode and the band (issue 36): against python3-edlib's NW, HW and SHW ----
# These references are required: make deps installs python3-edlib and
# python3-levenshtein, and a missing one fails the test rather than skipping it.

# need_edlib: the references of the modes' tests, or the test fails saying so.
need_edlib() {
	MODES=$REF/editdist4r_modes.py
	pyhas edlib || fail "python3-edlib is missing (make deps installs it)"
	pyhas Levenshtein || fail "python3-levenshtein is missing (make deps installs it)"
}

# modes_same FILE ARGS...: editdist4r --mode M ARGS FILE prints what edlib says, every M
modes_same() {
	local f=$1 m
	shift
	for m in global infix prefix; do
		py "$MODES" expect "$m" <"$f" >"$D/m.ref"
		run --separate-stderr editdist4r -d cpu --mode "$m" "$@" "$f"
		[ "$status" -eq 0 ] || fail "--mode $m $*: exit $status: $stderr"
		diff <(printf '%s\n' "$output") "$D/m.ref" || fail "--mode $m $*: not edlib's"
	done
}

@test "--mode global, infix and prefix agree with edlib on random pairs, reads in reference windows, ties and edge cases" {
	need_edlib
	for kind in random reads ties edge; do
		py "$MODES" gen 1 400 70 "$kind" >"$D/m_$kind.txt"
		modes_same "$D/m_$kind.txt"
	done
	# reads of 100 to 700 bases in windows of 2,000: several blocks of 64 rows
	py "$MODES" gen 2 60 2000 reads >"$D/m_long.txt"
	modes_same "$D/m_long.txt"
}

@test "--mode infix and prefix print edlib's first end and its start on ties and empty strings" {
	need_edlib
	run -0 editdist4r -d cpu --mode infix <<<"$(printf 'AA\tAAAA\nAAA\tCCC\n\tACGT\nACGT\t\nACGTACGT\tACG\nACGT\tTTACGTAA')"
	assert_output "$(printf '0\t0\t1\n3\t0\t-1\n0\t0\t-1\n4\t0\t-1\n5\t0\t2\n0\t2\t5')"
	run -0 editdist4r -d cpu --mode prefix <<<"$(printf 'AA\tAAAA\nACGT\tTTACGTAA')"
	assert_output "$(printf '0\t0\t1\n2\t0\t5')"
}

@test "--mode with --max-dist prints -1 for matches that cost more than K" {
	need_edlib
	py "$MODES" gen 3 300 60 reads >"$D/mk.txt"
	for k in 0 1 5 20; do
		for m in infix prefix global; do
			py "$MODES" expect "$m" "$k" <"$D/mk.txt" >"$D/mk.ref"
			run -0 editdist4r -d cpu --mode "$m" -k "$k" "$D/mk.txt"
			diff <(printf '%s\n' "$output") "$D/mk.ref" || fail "--mode $m -k $k"
		done
	done
}

@test "--mode --path CIGARs turn A into its match in B at the match's cost" {
	need_edlib
	for kind in random reads ties edge; do
		py "$MODES" gen 4 200 300 "$kind" >"$D/mp.txt"
		for m in global infix prefix; do
			editdist4r -d cpu --mode "$m" --path "$D/mp.txt" >"$D/mp.out"
			run -0 py "$MODES" check "$m" "$D/mp.txt" "$D/mp.out"
			# the distances and spans are the ones without --path
			local n=3
			[ "$m" = global ] && n=1
			diff <(cut -f 1-$n "$D/mp.out") <(editdist4r -d cpu --mode "$m" "$D/mp.txt")
		done
	done
	run -0 editdist4r -d cpu --mode infix --path -k 1 <<<"$(printf 'ACGT\tTTACGTAA\nAAAA\tCCCC')"
	assert_output "$(printf '0\t2\t5\t4=\n-1\t-1\t-1\t*')"
}

@test "long pairs of 48.5 kb at 1% and 10% edits: the band's distances and paths are edlib's and python-Levenshtein's" {
	need_edlib
	for rate in 0.01 0.10; do
		py "$MODES" long 48502 "$rate" 5 >"$D/l.txt"
		py "$MODES" expect global <"$D/l.txt" >"$D/l.ref"
		run -0 editdist4r -d cpu "$D/l.txt"
		assert_output "$(cat "$D/l.ref")"
		editdist4r -d cpu --path "$D/l.txt" >"$D/l.out"
		run -0 py "$MODES" check global "$D/l.txt" "$D/l.out"
		# --max-dist at the distance keeps it, one less drops it
		local d
		d=$(cat "$D/l.ref")
		run -0 editdist4r -d cpu -k "$d" "$D/l.txt"
		assert_output "$d"
		run -0 editdist4r -d cpu -k "$((d - 1))" "$D/l.txt"
		assert_output "-1"
	done
}

@test "a 1 Mb pair at 1% edits: edlib's distance, and --path in under 1 GB of memory" {
	need_edlib
	skip_if_asan "ulimit -v"
	py "$MODES" long 1000000 0.01 6 >"$D/mb.txt"
	py "$MODES" expect global <"$D/mb.txt" >"$D/mb.ref"
	run -0 timeout "$(limit 60)" editdist4r -d cpu "$D/mb.txt"
	assert_output "$(cat "$D/mb.ref")"
	run -0 timeout "$(limit 60)" sh -c 'ulimit -v 1000000 && editdist4r -d cpu --path "$1" >"$2"' \
	    sh "$D/mb.txt" "$D/mb.out"
	run -0 py "$MODES" check global "$D/mb.txt" "$D/mb.out"
}

@test "--mode reads FASTA and FASTQ records, small batches and --all-vs-all as edlib says" {
	need_edlib
	py "$MODES" gen 7 300 500 reads >"$D/mf.txt"
	awk -F '\t' '{ print ">a" NR; print $1 }' "$D/mf.txt" >"$D/mf_a.fa"
	awk -F '\t' '{ print "@b" NR; print $2; print "+"; s = $2; gsub(/./, "I", s); print s }' \
	    "$D/mf.txt" >"$D/mf_b.fq"
	for m in infix prefix; do
		py "$MODES" expect "$m" <"$D/mf.txt" >"$D/mf.ref"
		run -0 editdist4r -d cpu --mode "$m" -a "$D/mf_a.fa" -b "$D/mf_b.fq"
		diff <(printf '%s\n' "$output") "$D/mf.ref"
		run -0 editdist4r -d cpu --mode "$m" --max-device-mem 4M "$D/mf.txt"
		diff <(printf '%s\n' "$output") "$D/mf.ref"
		# divided over workers, as over GPUs
		run -0 env ACCELKIT_CPU_WORKERS=3 editdist4r -d cpu --mode "$m" --max-device-mem 1M \
		    "$D/mf.txt"
		diff <(printf '%s\n' "$output") "$D/mf.ref"
	done
	# every read against every window: the matrix of the modes' distances
	head -n 4 "$D/mf_a.fa" >"$D/mx_a.fa"
	head -n 8 "$D/mf_b.fq" >"$D/mx_b.fq"
	for m in global infix prefix; do
		run -0 editdist4r -d cpu --mode "$m" --all-vs-all -a "$D/mx_a.fa" -b "$D/mx_b.fq"
		local want
		want=$(for i in 2 4; do
			for j in 2 6; do
				printf '%s\t%s\n' "$(sed -n "${i}p" "$D/mx_a.fa")" "$(sed -n "${j}p" "$D/mx_b.fq")"
			done
		done | py "$MODES" expect "$m" | cut -f 1 | paste - - )
		assert_output "$want"
	done
}

@test "-u --mode counts characters, as edlib on Unicode strings" {
	need_edlib
	py "$MODES" unicode 8 300 30 >"$D/mu.txt"
	for m in infix prefix; do
		py "$MODES" expect "$m" <"$D/mu.txt" >"$D/mu.ref"
		run -0 editdist4r -d cpu -u --mode "$m" "$D/mu.txt"
		diff <(printf '%s\n' "$output") "$D/mu.ref"
		editdist4r -d cpu -u --mode "$m" --path "$D/mu.txt" >"$D/mu.out"
		run -0 py "$MODES" check "$m" "$D/mu.txt" "$D/mu.out"
	done
}

@test "-u --mode on pairs of more than 256 characters (by code point) agrees with a textbook DP" {
	need_edlib
	run -0 py "$MODES" selftest
	py "$MODES" unicode 9 4 100 --wide >"$D/mw.txt"
	for m in infix prefix; do
		py "$MODES" expect "$m" <"$D/mw.txt" >"$D/mw.ref"
		run --separate-stderr -0 editdist4r -d cpu -v -u --mode "$m" "$D/mw.txt"
		diff <(printf '%s\n' "$output") "$D/mw.ref"
		[[ "$stderr" == *"-u: 4 pairs needed more than 256 codes"* ]]
		editdist4r -d cpu -u --mode "$m" --path "$D/mw.txt" >"$D/mw.out"
		run -0 py "$MODES" check "$m" "$D/mw.txt" "$D/mw.out"
	done
}

@test "--mode infix or prefix: -O npy without --all-vs-all is a usage error, and auto runs a small input on the CPU" {
	# -d gpu with the modes: tests/editdist4r_gpu_modes.bats
	run --separate-stderr -2 editdist4r --mode prefix -O npy <<<"$(printf 'AC\tTACT')"
	[[ "$stderr" == *"-O npy is for its --all-vs-all matrix"* ]]
	run -0 editdist4r -d auto --mode infix <<<"$(printf 'AC\tTACT')"
	assert_output "$(printf '0\t1\t2')"
}

@test "--progress into a file: a line of pairs written and their rate, the results unchanged" {
	"$EDREF" gen 9 20000 150 dna >"$D/pr.txt"
	head -n 10000 "$D/pr.txt" >"$D/pr1"
	tail -n +10001 "$D/pr.txt" >"$D/pr2"
	# the second half arrives three seconds after the first; batches of 1 MiB
	{ cat "$D/pr1"; sleep 3; cat "$D/pr2"; } |
	    editdist4r -d cpu --progress --max-device-mem 4M >"$D/pr.out" 2>"$D/pr.err"
	editdist4r -d cpu "$D/pr.txt" | cmp - "$D/pr.out"
	run cat "$D/pr.err"
	assert_line --regexp '^editdist4r: [0-9,]+ pairs, [0-9,]+ pairs/s$'
	n=$(head -n 1 "$D/pr.err" | sed 's/editdist4r: \([0-9,]*\) pairs.*/\1/' | tr -d ,)
	[ "$n" -ge 5000 ] && [ "$n" -le 10000 ] || fail "pairs written: $n"
}

# The intake: pairs handed over a pair a call into batches, the device chosen on the way
# (auto's early look after 8 MiB of a regular file), batches cut by bytes and by pairs.
@test "300,000 pairs over many batches and tiny chunks match the plain DP, the same bytes at -j 1 and -j 2" {
	"$EDREF" gen 61 300000 60 dna >"$D/in3.txt"
	"$EDREF" dist <"$D/in3.txt" >"$D/in3.ref"
	# batches of 1 MiB (--max-device-mem 4M): about 20 of them
	for j in 1 2; do
		run --separate-stderr timeout "$(limit 120)" env ACCELKIT_CHUNK_BYTES=4096 \
		    editdist4r -d cpu -j $j --max-device-mem 4M "$D/in3.txt"
		[ "$status" -eq 0 ] || fail "-j $j: exit $status: $stderr"
		diff <(printf '%s\n' "$output") "$D/in3.ref" >/dev/null || fail "-j $j differs from the DP"
	done
	# auto weighs the first 8 MiB, settles, and takes the rest without weighing
	run --separate-stderr timeout "$(limit 120)" editdist4r -d auto -j 2 "$D/in3.txt"
	[ "$status" -eq 0 ] || fail "auto: exit $status: $stderr"
	diff <(printf '%s\n' "$output") "$D/in3.ref" >/dev/null || fail "auto differs from the DP"
	# through a pipe (no early look: the first full batch settles)
	run --separate-stderr timeout "$(limit 120)" sh -c 'cat "$1" | editdist4r -j 2 --max-device-mem 4M' sh "$D/in3.txt"
	[ "$status" -eq 0 ] || fail "pipe: exit $status: $stderr"
	diff <(printf '%s\n' "$output") "$D/in3.ref" >/dev/null || fail "the pipe differs from the DP"
}

@test "1,100,000 tiny pairs fill a batch to its bound of pairs and go on in the next" {
	"$EDREF" gen 62 1100000 3 dna >"$D/tiny.txt"
	"$EDREF" dist <"$D/tiny.txt" >"$D/tiny.ref"
	run --separate-stderr timeout "$(limit 120)" editdist4r -d cpu -j 2 "$D/tiny.txt"
	[ "$status" -eq 0 ] || fail "exit $status: $stderr"
	diff <(printf '%s\n' "$output") "$D/tiny.ref" >/dev/null || fail "differs from the DP"
}

@test "a bad line deep in a large file is named by its line, at -j 1 and -j 2, in tiny chunks, in a second FILE" {
	"$EDREF" gen 63 250000 40 dna >"$D/deep.txt"
	printf 'ACGT\tACGA\nnotab\nAC\tAC\n' >>"$D/deep.txt"
	for j in 1 2; do
		run --separate-stderr -1 env ACCELKIT_CHUNK_BYTES=4096 editdist4r -d cpu -j $j "$D/deep.txt"
		[[ "$stderr" == *"deep.txt:250002: no TAB"* ]] || fail "-j $j: $stderr"
	done
	# line numbers start again in each FILE
	"$EDREF" gen 65 1000 40 dna >"$D/first.txt"
	run --separate-stderr -1 editdist4r -d cpu -j 2 "$D/first.txt" "$D/deep.txt"
	[[ "$stderr" == *"deep.txt:250002: no TAB"* ]] || fail "$stderr"
	# -u: a string that is not UTF-8, deep in the file
	"$EDREF" gen 64 200000 40 dna >"$D/deepu.txt"
	printf 'AC\tA\377C\n' >>"$D/deepu.txt"
	run --separate-stderr -1 env ACCELKIT_CHUNK_BYTES=4096 editdist4r -u -d cpu -j 2 "$D/deepu.txt"
	[[ "$stderr" == *"deepu.txt:200001: B is not UTF-8 (byte 2 is 0xff)"* ]] || fail "$stderr"
}

# Chunk boundaries: the pair reader's chunks (ACCELKIT_CHUNK_BYTES) cut pairs anywhere,
# and the batches fill and split wherever a chunk's pairs end. On the suite's device
# (the GPU under make check-gpu), but for the errors, which the reading side finds first.
@test "chunk boundaries: pairs cut anywhere by chunks of 64 bytes to 1 MiB, batches split inside a chunk, match python3-edlib at -j 1 and -j 2" {
	pyhas edlib || skip "python3-edlib is not installed"
	"$EDREF" gen 67 20000 300 dna >"$D/pk.txt"
	printf 'ACGT\t\n\t\n\tACGTT\n' >>"$D/pk.txt"
	edlib_nw "$D/pk.txt" >"$D/pk.ref"
	awk '{ print ($1 > 20 ? -1 : $1) }' "$D/pk.ref" >"$D/pk20.ref"
	[ "$(wc -l <"$D/pk.ref")" -eq 20003 ] || fail "the reference has $(wc -l <"$D/pk.ref") lines"
	# --max-device-mem 4M: batches of 1 MiB, so a chunk's run of pairs is split
	for c in 64 1000 65536 1048576; do
		for j in 1 2; do
			run --separate-stderr timeout "$(limit 120)" env ACCELKIT_CHUNK_BYTES=$c \
			    editdist4r -j $j --max-device-mem 4M "$D/pk.txt"
			[ "$status" -eq 0 ] || fail "chunks of $c, -j $j: exit $status: $stderr"
			diff <(printf '%s\n' "$output") "$D/pk.ref" >/dev/null ||
			    fail "chunks of $c, -j $j differ from edlib"
		done
		run --separate-stderr timeout "$(limit 120)" env ACCELKIT_CHUNK_BYTES=$c \
		    editdist4r -j 2 -k 20 "$D/pk.txt"
		[ "$status" -eq 0 ] || fail "chunks of $c, -k 20: exit $status: $stderr"
		diff <(printf '%s\n' "$output") "$D/pk20.ref" >/dev/null ||
		    fail "chunks of $c, -k 20 differs from edlib's distances cut at 20"
	done
	# auto weighs pairs as they come until it settles; a pipe, CRLF lines
	run --separate-stderr timeout "$(limit 120)" env ACCELKIT_CHUNK_BYTES=4096 \
	    sh -c 'sed "s/\$/\r/" "$1" | editdist4r -d auto -j 2 --max-device-mem 4M' sh "$D/pk.txt"
	[ "$status" -eq 0 ] || fail "auto through a pipe: exit $status: $stderr"
	diff <(printf '%s\n' "$output") "$D/pk.ref" >/dev/null || fail "auto, CRLF, a pipe differs"
}

@test "chunk boundaries: -u's characters in chunks of 200 bytes match python3-levenshtein by code point, at -j 1 and -j 2" {
	uni_data
	for j in 1 2; do
		run --separate-stderr timeout "$(limit 120)" env ACCELKIT_CHUNK_BYTES=200 \
		    editdist4r -u -j $j --max-device-mem 4M "$D/uni.txt"
		[ "$status" -eq 0 ] || fail "-j $j: exit $status: $stderr"
		diff <(printf '%s\n' "$output") "$D/uni.ref" >/dev/null || fail "-j $j differs"
	done
}

@test "chunk boundaries: the first bad line of a late chunk is named, whether the parse (no TAB) or -u's check (not UTF-8) finds it" {
	"$EDREF" gen 68 30000 40 dna >"$D/late.txt"
	# a string that is not UTF-8, then a line without a TAB, in one chunk: the first
	{ cat "$D/late.txt"; printf 'AC\tA\377C\nnotab\n'; } >"$D/late1.txt"
	# the line without a TAB first
	{ cat "$D/late.txt"; printf 'notab\nAC\tA\377C\n'; } >"$D/late2.txt"
	# the bad string the first pair of a chunk (every line 17 bytes: chunks of 17)
	{ for i in $(seq 40); do printf 'ACGTACGT\tACGTACG\n'; done
	  printf '\377CGTACGT\tACGTACG\n'; } >"$D/late3.txt"
	for c in 4096 1048576; do
		for j in 1 2; do
			run --separate-stderr -1 env ACCELKIT_CHUNK_BYTES=$c editdist4r -u -d cpu -j $j "$D/late1.txt"
			[[ "$stderr" == *"late1.txt:30001: B is not UTF-8 (byte 2 is 0xff)"* ]] ||
			    fail "chunks of $c, -j $j: $stderr"
			run --separate-stderr -1 env ACCELKIT_CHUNK_BYTES=$c editdist4r -u -d cpu -j $j "$D/late2.txt"
			[[ "$stderr" == *"late2.txt:30001: no TAB in the line"* ]] ||
			    fail "chunks of $c, -j $j: $stderr"
		done
	done
	for j in 1 2; do
		run --separate-stderr -1 env ACCELKIT_CHUNK_BYTES=17 editdist4r -u -d cpu -j $j "$D/late3.txt"
		[[ "$stderr" == *"late3.txt:41: A is not UTF-8 (byte 1 is 0xff)"* ]] || fail "-j $j: $stderr"
		# one message, nothing else on stderr
		[ "${#stderr_lines[@]}" -eq 1 ] || fail "-j $j: ${#stderr_lines[@]} lines: $stderr"
	done
	# without -u the bytes are compared: the same file is read to the end
	run --separate-stderr -0 env ACCELKIT_CHUNK_BYTES=17 editdist4r -d cpu -j 2 "$D/late3.txt"
	[ "${#lines[@]}" -eq 41 ] || fail "${#lines[@]} distances"
	[ "${lines[40]}" -eq 2 ] || fail "the last is ${lines[40]}"
}

@test "-v's read (waited) is a part of the read, for pair lines and for records" {
	"$EDREF" gen 66 20000 150 dna >"$D/rw.txt"
	cut -f1 "$D/rw.txt" >"$D/rw.a"
	cut -f2 "$D/rw.txt" >"$D/rw.b"
	for args in "$D/rw.txt" "-a $D/rw.a -b $D/rw.b"; do
		run --separate-stderr -0 editdist4r -v -d cpu -j 2 $args
		local r w
		r=$(printf '%s\n' "$stderr" | sed -n 's/^editdist4r: time read  *\([0-9.]*\) ms$/\1/p')
		w=$(printf '%s\n' "$stderr" | sed -n 's/^editdist4r: time read (waited) *\([0-9.]*\) ms$/\1/p')
		[ -n "$r" ] && [ -n "$w" ] || fail "$args: no read or read (waited) in: $stderr"
		awk -v r="$r" -v w="$w" 'BEGIN { exit !(w >= 0 && w <= r) }' || fail "$args: waited $w of $r ms"
	done
}
