#!/usr/bin/env bats
# editdist4r: edit distances against an independent plain DP (tests/ref/editdist4r_ref.c,
# built here), python3-levenshtein and python3-edlib where they are installed.

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
	run -0 py -c '
import sys, edlib
for line in open(sys.argv[1]):
    a, b = line.rstrip("\n").split("\t")
    print(len(b) if not a else len(a) if not b else edlib.align(a, b, mode="NW")["editDistance"])
' "$D/dna.txt"
	printf '%s\n' "$output" >"$D/edlib.out"
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
	for args in "-t 0" "-t 4" "--algo nw" "-k -1" "-a x" "--all-vs-all" "--path --all-vs-all -a x -b y" "--path -O npy" "--bogus"; do
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
