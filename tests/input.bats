#!/usr/bin/env bats
# Inputs that are not what their first bytes seem: compressed files and pipes (gzip,
# zstd, xz, bzip2, known by their magic bytes), UTF-8 byte-order marks, and compressed
# data that is truncated, corrupt or followed by something else. Every program reads
# through common/input.c; the references are the system's own decompressors (gzip,
# zstd, xz, bzip2) applied to the same bytes, and literal answers.

setup() {
	load helpers
	cd "$BATS_TEST_TMPDIR"
}

# need FORMAT...: skips unless this machine has each format's tool and the build has
# its library (the GPU machine may lack a -dev package: the code is the CPU's, and CI,
# where make deps installs all four, fails here instead of skipping).
need() {
	local fmt out
	for fmt in "$@"; do
		if ! command -v "$fmt" >/dev/null; then
			[ -z "${CI:-}" ] || fail "no $fmt tool on CI"
			skip "no $fmt tool here"
		fi
		out=$(printf 'a\tb\n' | compress "$fmt" | editdist4r - 2>&1) || true
		if [[ $out == *"this build has no $fmt library"* ]]; then
			[ -z "${CI:-}" ] || fail "$out"
			skip "this build reads no $fmt ($out)"
		fi
		[ "$out" = 1 ] || fail "$fmt: $out"
	done
}

# The programs' small examples, one a line: the command, with IN where the input goes.
# Each is run on the plain file, then on the compressed one and on a compressed pipe.
prog_cases() {
	cat <<EOF
skyline -f 2,3 -p min,max IN|$TESTDATA/skyline/hotels.txt
skyline -Q $TESTDATA/skyline/places.txt IN|$TESTDATA/skyline/points.txt
clkmeans -k 3 --init $TESTDATA/clkmeans/centroids.txt IN|$TESTDATA/clkmeans/points.txt
clmatmul IN $TESTDATA/clmatmul/b.txt|$TESTDATA/clmatmul/a.txt
docsim -k 2 -q $TESTDATA/docsim/queries.txt IN|$TESTDATA/docsim/corpus.txt
docsim -k 2 -q IN $TESTDATA/docsim/corpus.txt|$TESTDATA/docsim/queries.txt
editdist4r IN|$TESTDATA/editdist4r/pairs.txt
editdist4r --all-vs-all -a IN -b $TESTDATA/editdist4r/refs.fa|$TESTDATA/editdist4r/reads.fq
gmmscore -m $TESTDATA/gmmscore/final.mdl.txt IN|$TESTDATA/gmmscore/feats.ark
gmmscore -m $TESTDATA/gmmscore/hmms.mmf --top 2 IN|$TESTDATA/gmmscore/feats.htk
gmmscore -m IN $TESTDATA/gmmscore/feats.ark|$TESTDATA/gmmscore/final.mdl.txt
EOF
}

# compress FORMAT < in > out
compress() {
	case $1 in
	gzip) gzip -c ;;
	zstd) zstd -q -c ;;
	xz) xz -c ;;
	bzip2) bzip2 -c ;;
	esac
}

# named NAME CMD...: CMD's output and errors, with NAME at the start of a line (how
# gmmscore names an HTK file's frames) written IN, so that inputs under other names compare.
named() {
	local name=$1 out rc=0
	shift
	out=$("$@" 2>&1) || rc=$?
	[ $rc = 0 ] || printf 'exit %d: ' $rc
	printf '%s\n' "$out" | sed "s|^$name\t|IN\t|"
}

# pipes CMD: whether the case's input can come from standard input (the others read
# a second input there, or need a file)
pipes() {
	[[ $1 != *"-q IN"* && $1 != *"-a IN"* && $1 != *"-m IN"* && $1 != clmatmul* ]]
}

# each_case FORMAT: runs every case on FORMAT-compressed input, as a file and as
# standard input, and compares with the plain file's output; prints the failures.
each_case() {
	local fmt=$1 cmd file want got
	while IFS='|' read -r cmd file <&3; do
		compress "$fmt" < "$file" > in.z
		want=$(named "$file" ${cmd/IN/$file})
		got=$(named in.z ${cmd/IN/in.z})
		[ "$got" = "$want" ] || echo "$fmt file: $cmd: $got"
		if pipes "$cmd"; then
			got=$(named - ${cmd/IN/-} < in.z)
			[ "$got" = "$want" ] || echo "$fmt pipe: $cmd: $got"
		fi
	done 3< <(prog_cases) < /dev/null
}

@test "every program reads gzip files and pipes as their plain bytes" {
	need gzip
	run -0 each_case gzip
	assert_output ''
}

@test "every program reads zstd files and pipes as their plain bytes" {
	need zstd
	run -0 each_case zstd
	assert_output ''
}

@test "every program reads xz files and pipes as their plain bytes" {
	need xz
	run -0 each_case xz
	assert_output ''
}

@test "every program reads bzip2 files and pipes as their plain bytes" {
	need bzip2
	run -0 each_case bzip2
	assert_output ''
}

@test "compressed NPY is read by its magic after decompression" {
	need gzip
	py -c "
import numpy as np
rng = np.random.default_rng(3)
np.save('x.npy', rng.standard_normal((500, 8)).astype(np.float32))"
	gzip -c x.npy > x.npy.gz
	run -0 clkmeans -k 4 x.npy
	local want=$output
	run -0 clkmeans -k 4 x.npy.gz
	assert_output "$want"
	run -0 docsim -k 3 x.npy
	want=$output
	run -0 --separate-stderr docsim -v -k 3 - < x.npy.gz
	assert_output "$want"
}

@test "concatenated streams of each format read as one input" {
	need gzip zstd xz bzip2
	head -n 3 "$TESTDATA/editdist4r/pairs.txt" > a.txt
	tail -n +4 "$TESTDATA/editdist4r/pairs.txt" > b.txt
	run -0 editdist4r "$TESTDATA/editdist4r/pairs.txt"
	local want=$output
	{ gzip -c a.txt; gzip -c b.txt; } > ab.gz
	run -0 editdist4r ab.gz
	assert_output "$want"
	{ bzip2 -c a.txt; bzip2 -c b.txt; } > ab.bz2
	run -0 editdist4r ab.bz2
	assert_output "$want"
	{ zstd -q -c a.txt; zstd -q -c b.txt; } > ab.zst
	run -0 editdist4r ab.zst
	assert_output "$want"
	{ xz -c a.txt; xz -c b.txt; } > ab.xz
	run -0 editdist4r ab.xz
	assert_output "$want"
}

@test "a compressed input larger than the reader's buffers reads whole, file and pipe" {
	need gzip zstd
	py -c "
import numpy as np
rng = np.random.default_rng(5)
a = rng.integers(0, 4, size=(60000, 120))
with open('p.txt', 'w') as f:
    for r in a:
        s = ''.join('ACGT'[i] for i in r)
        f.write(s + '\t' + s[7:] + s[:7] + '\n')"
	run -0 editdist4r -d cpu p.txt
	local want=$output
	[ "${#lines[@]}" -eq 60000 ]
	gzip -c p.txt > p.gz
	run -0 editdist4r -d cpu p.gz
	assert_output "$want"
	run -0 editdist4r -d cpu - < <(zstd -q -c p.txt)
	assert_output "$want"
}

@test "the format is read from the bytes, not the name" {
	need gzip
	cp "$TESTDATA/editdist4r/pairs.txt" plain.gz
	gzip -c "$TESTDATA/editdist4r/pairs.txt" > packed.txt
	run -0 editdist4r "$TESTDATA/editdist4r/pairs.txt"
	local want=$output
	run -0 editdist4r plain.gz
	assert_output "$want"
	run -0 editdist4r packed.txt
	assert_output "$want"
}

@test "an empty compressed file is an empty input" {
	need gzip zstd
	: | gzip -c > e.gz
	run -0 --separate-stderr editdist4r e.gz
	assert_output ''
	: | zstd -q -c > e.zst
	run -0 --separate-stderr editdist4r e.zst
	assert_output ''
}

@test "truncated compressed input is an error naming the file, each format" {
	need gzip zstd xz bzip2
	local n=2000
	head -c 200000 /dev/urandom | od -An -tx1 | tr -s ' ' '\t' | cut -f2,3 | head -n $n > p.txt
	for fmt in gzip zstd xz bzip2; do
		compress $fmt < p.txt > full.z
		head -c $(( $(stat -c %s full.z) - 9 )) full.z > cut.z
		run -1 --separate-stderr editdist4r cut.z
		assert_output ''
		[[ $stderr == "editdist4r: cut.z: the $fmt data ends before its stream does (a truncated or corrupt file)" ]] ||
			fail "$fmt: $stderr"
		run -1 --separate-stderr editdist4r - < cut.z
		[[ $stderr == "editdist4r: (standard input): the $fmt data ends before"* ]] ||
			fail "$fmt pipe: $stderr"
	done
}

@test "corrupt gzip data is an error, with zlib's reason" {
	need gzip
	seq 1 20000 | awk '{ print $1 "\t" $1 + 1 }' | gzip -c > p.gz
	# a byte of the CRC-32 in the trailer: the data decodes, the check fails
	py -c "
d = bytearray(open('p.gz', 'rb').read()); d[-6] ^= 0x55
open('bad.gz', 'wb').write(d)"
	run -1 --separate-stderr editdist4r bad.gz
	assert_equal "$stderr" 'editdist4r: bad.gz: corrupt gzip data (incorrect data check)'
	# in the middle: a decoding error, a stream that no longer ends where the file does,
	# or (met first, in a chunk before the decoder notices) a line the garbage broke
	py -c "
d = bytearray(open('p.gz', 'rb').read()); d[len(d) // 2] ^= 0x55
open('bad2.gz', 'wb').write(d)"
	run -1 --separate-stderr editdist4r bad2.gz
	assert_regex "$stderr" '^editdist4r: bad2\.gz:( corrupt gzip data \(.+\)| the gzip data ends before its stream does \(a truncated or corrupt file\)|[0-9]+: .+)$'
}

@test "bytes after the end of a gzip stream are an error, not ignored" {
	need gzip
	{ gzip -c "$TESTDATA/editdist4r/pairs.txt"; printf 'a\tb\n'; } > trail.gz
	run -1 --separate-stderr editdist4r trail.gz
	assert_equal "$stderr" "editdist4r: trail.gz: data after the end of the gzip stream"
}

@test "lz4 input is refused with the command that reads it" {
	printf '\x04\x22\x4d\x18\x64\x40\xa7\x00\x00\x00\x00' > x.lz4
	run -1 --separate-stderr skyline x.lz4
	assert_output ''
	assert_equal "$stderr" "skyline: x.lz4: lz4-compressed input is not read; decompress it first (lz4 -dc)"
}

@test "a byte-order mark is skipped: kitten and sitting are 3 apart" {
	need gzip
	printf '\xef\xbb\xbfkitten\tsitting\n' > bom.txt
	run -0 editdist4r bom.txt
	assert_output 3
	run -0 editdist4r - < bom.txt
	assert_output 3
	gzip -c bom.txt > bom.gz
	run -0 editdist4r bom.gz
	assert_output 3
}

@test "every program reads a file that starts with a byte-order mark as without it" {
	local cmd file want got bad=
	while IFS='|' read -r cmd file <&3; do
		case $file in *.htk) continue ;; esac	# binary: no mark to skip
		{ printf '\xef\xbb\xbf'; cat "$file"; } > bom.in
		want=$(named "$file" ${cmd/IN/$file})
		got=$(named bom.in ${cmd/IN/bom.in})
		[ "$got" = "$want" ] || bad="$bad
file: $cmd: $got"
		if pipes "$cmd"; then
			got=$(named - ${cmd/IN/-} < bom.in)
			[ "$got" = "$want" ] || bad="$bad
pipe: $cmd: $got"
		fi
	done 3< <(prog_cases) < /dev/null
	assert_equal "$bad" ''
}

@test "a byte-order mark's line is still line 1 in messages" {
	printf '\xef\xbb\xbf1 2\n3 x\n' > bom.txt
	run -1 --separate-stderr skyline bom.txt
	assert_regex "$stderr" '^skyline: bom\.txt:2: '
	printf '\xef\xbb\xbf1 x\n' > bom1.txt
	run -1 --separate-stderr skyline bom1.txt
	assert_regex "$stderr" '^skyline: bom1\.txt:1: '
	[[ $stderr != *$'\xef\xbb\xbf'* ]] || fail "the mark is quoted: $stderr"
}
