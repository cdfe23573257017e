#!/usr/bin/env bats
# The fuzz targets' regression cases: every input a fuzzer found crashing, hanging or
# breaking a property is kept in tests/fuzz/regress/TARGET/ and runs here through the
# target's plain driver, build/test/fuzz-TARGET (tests/fuzz/driver.c; under make check
# SANITIZE=1, with ASan and UBSan). Each must run cleanly now, and the readers must say
# what they said (stderr, the regular-file run then the pipe run: "TARGET[file]: ...",
# "TARGET[pipe]: ..."), naming the line or byte offset; no message: a valid input. The
# text readers' cases run with one thread and again with two and small chunks, which
# must say the same (tests/fuzz/fuzz.c).

setup() {
	load helpers
}

# regress TARGET CASE <<EXPECTED: runs the case; its messages must be EXPECTED.
regress() {
	local want
	want=$(cat)
	run --separate-stderr "fuzz-$1" "$ACCELKIT_ROOT/tests/fuzz/regress/$1/$2"
	assert_success
	assert_output ""
	assert_equal "$stderr" "$want"
}

@test "every regression case has a test in this file" {
	local f missing=
	for f in "$ACCELKIT_ROOT"/tests/fuzz/regress/*/*; do
		set -- $(basename "$(dirname "$f")") "$(basename "$f")"
		grep -qE "^[[:space:]]*regress $1 $2( |\$)" "$BATS_TEST_FILENAME" || missing="$missing $1/$2"
	done
	assert_equal "$missing" ""
}

# ---- the harness: an error exit comes back, and both runs speak ----

@test "npy: short data is an error at its byte offset, from the file and from the pipe" {
	regress npy short-data <<-'EOF'
	npy[file]: (standard input): byte 128: NPY data is truncated: shape (3, 4) needs 48 bytes, the file has 12
	npy[pipe]: (standard input): byte 140: NPY data is truncated: the header promises 3 rows of 4, the data ends in row 1
	EOF
}

@test "htk: short data is an error before reading from a file, at the end from a pipe" {
	regress htk short-data <<-'EOF'
	htk[file]: (standard input): byte 0: HTK header promises 3 frames of 8 bytes (24 bytes of data), the file has 8
	htk[pipe]: (standard input): byte 20: HTK data is truncated: the header promises 3 frames, the data ends in frame 2
	EOF
}

# ---- seq: FASTA and FASTQ ----

@test "seq: a FASTA record whose sequence is an empty line is an empty sequence" {
	regress seq fasta-empty-line </dev/null
}

@test "seq: a FASTQ record with an empty sequence first is read" {
	regress seq fastq-empty-sequence </dev/null
}

# ---- cli: option parsing ----

@test "cli: a byte count with blanks before a minus sign is a usage error" {
	regress cli size-blank-minus <<-'EOF'
	cli: invalid value for --chunk: ' -5' (expected a byte count such as 512M or 2G)
	Try 'cli --help' for more information.
	EOF
}

@test "cli: an abbreviated --max-device-mem with tabs and a minus sign is a usage error" {
	regress cli maxmem-abbrev-tab-minus <<-EOF
	cli: invalid value for --max-device-mem: '$(printf '\t\t')-5' (expected a byte count such as 512M or 2G)
	Try 'cli --help' for more information.
	EOF
}

# ---- sizes a header promises ----

@test "npy: a pipe whose header promises one 20 TB row is an error at the data's end" {
	regress npy pipe-huge-row <<-'EOF'
	npy[file]: (standard input): byte 128: NPY data is truncated: shape (1, 2738790496769) needs 21910323974152 bytes, the file has 6
	npy[pipe]: (standard input): byte 134: NPY data is truncated: the header promises 1 rows of 2738790496769, the data ends in row 1
	EOF
}

@test "kaldibin: a pipe whose DM header promises a 3 GB row is an error at the data's end" {
	regress kaldibin pipe-huge-row <<-'EOF'
	kaldibin[file]: (standard input): byte 18: utterance 'u0': DM header promises 5 x 812974083 values (32518963320 bytes), 18 bytes follow
	kaldibin[pipe]: (standard input): byte 36: utterance 'u0': the DM data ends after 18 of its 32518963320 bytes; the rest of the archive is not read (ark,p)
	EOF
}

# ---- float32's range ----

@test "dense: a number beyond float32's range is an error naming its line" {
	regress dense beyond-f32 <<-'EOF'
	dense[file]: (standard input):1: column 1: 1e+39 is out of range for float32
	EOF
}

@test "npy: a float64 beyond float32's range read as float32 is an error naming its byte" {
	regress npy beyond-f32 <<-'EOF'
	npy[file]: (standard input): byte 136: 1e+300 in NPY data is out of range for float32 (row 1, column 2)
	EOF
}

@test "ark: a number beyond float32's range is an error naming its line" {
	regress ark beyond-f32 <<-'EOF'
	ark[file]: (standard input):1: column 1: 1e+39 is out of range for float32
	ark[pipe]: (standard input):1: column 1: 1e+39 is out of range for float32
	EOF
}

@test "libsvm: float32's largest value, as our writers print it, is read" {
	regress libsvm flt-max </dev/null
}

@test "libsvm: a byte-order mark before the first line is skipped by the reader and the line check alike" {
	regress libsvm bom </dev/null
}

@test "mm: float32's largest negative value, as our writers print it, is read" {
	regress mm flt-max </dev/null
}

# ---- sizes a model file promises ----

@test "gmm: a Kaldi <NUMPDFS> the file cannot hold is an error before anything is made for it" {
	regress gmm numpdfs-huge <<-'EOF'
	gmm[file]: (standard input):1: <NUMPDFS> 100000000: the 11 bytes after it cannot hold as many <DiagGMM>s
	gmm[pipe]: (standard input):1: <NUMPDFS> 100000000: the 11 bytes after it cannot hold as many <DiagGMM>s
	EOF
}

@test "gmm: the same in a binary Kaldi model, naming the byte" {
	regress gmm numpdfs-huge-binary <<-'EOF'
	gmm[file]: (standard input): byte 34: <NUMPDFS> 16645889: the 10 bytes after it cannot hold as many <DiagGMM>s
	gmm[pipe]: (standard input): byte 34: <NUMPDFS> 16645889: the 10 bytes after it cannot hold as many <DiagGMM>s
	EOF
}

@test "gmm: an HTK ~m macro used inside its own definition is an error (was: a NULL vector read, a crash)" {
	regress gmm mmf-m-macro-in-itself <<-'EOF'
	gmm[file]: (standard input):1: macro ~m "<>" is used inside its own definition
	gmm[pipe]: (standard input):1: macro ~m "<>" is used inside its own definition
	EOF
	regress gmm mmf-m-macro-in-itself-2 <<-'EOF'
	gmm[file]: (standard input):1: macro ~m "~m" is used inside its own definition
	gmm[pipe]: (standard input):1: macro ~m "~m" is used inside its own definition
	EOF
}

@test "gmm: an HTK vector of no numbers is an error (was: memcpy from NULL, UBSan)" {
	regress gmm mmf-mean-of-no-dimensions <<-'EOF'
	gmm[file]: (standard input):1: <MEAN> has no dimensions
	gmm[pipe]: (standard input):1: <MEAN> has no dimensions
	EOF
}

# ---- tokenize: docsim's text ----

@test "tokenize: a line without an id after lines with one is an error naming it, and leaks nothing" {
	# the parts of the lines before, made on the engine's threads, are freed by the
	# harness after the error exit (the leak check under SANITIZE=1)
	regress tokenize ids-missing-late <<-'EOF'
	tokenize[pipe]: (standard input):3: no TAB after the id (--ids)
	EOF
}

@test "tokenize: an empty id first is read" {
	regress tokenize ids-empty-first </dev/null
}

# ---- unz: compressed input ----

@test "unz: corrupt xz met on a reader's thread is one error, said by the caller's" {
	# a build without liblzma (the GPU machine, which cannot install it) says so instead;
	# on CI, where make deps installs it, that is a failure
	local out
	out=$(fuzz-unz "$ACCELKIT_ROOT/tests/fuzz/regress/unz/xz-corrupt-on-a-reader-thread" 2>&1) || true
	if [[ $out == *"this build has no xz library"* ]]; then
		[ -z "${CI:-}" ] || fail "$out"
		skip "this build reads no xz"
	fi
	regress unz xz-corrupt-on-a-reader-thread <<-'EOF'
	unz[file]: (standard input): the xz data ends before its stream does (a truncated or corrupt file)
	unz[pipe]: (standard input): the xz data ends before its stream does (a truncated or corrupt file)
	EOF
}

@test "unz: a gzip member whose CRC-32 is wrong is corrupt" {
	regress unz gzip-bad-crc <<-'EOF'
	unz[file]: (standard input): corrupt gzip data (incorrect data check)
	unz[pipe]: (standard input): corrupt gzip data (incorrect data check)
	EOF
}
