#!/usr/bin/env bats
# docsim's n-grams (--ngram, --char-ngram: common/tokenize.c's analyzers) against
# scikit-learn's TfidfVectorizer with ngram_range and analyzer='char_wb', through
# tests/ref/docsim_ref.py, on real text: the GPL's lines, the man pages' lines and
# testdata/docsim (German, French and Greek with capital sigmas among them).

setup() {
	load helpers
	T=$TESTDATA/docsim
	D=$BATS_TEST_TMPDIR
}

ref() {
	py "$REF/docsim_ref.py" "$@"
}

# real English text, a line a document: the GPL (every Debian has it) and our pages
real_text() {
	{
		grep -v '^[[:space:]]*$' /usr/share/common-licenses/GPL-3
		cat "$ACCELKIT_ROOT"/man/*.1 | grep -v '^\.\\"' | sed 's/^\.[A-Za-z][A-Za-z]* *//'
	} >"$D/real.txt"
	[ "$(wc -l <"$D/real.txt")" -gt 2000 ]
}

@test "--ngram 1,2 and 2,3 give TfidfVectorizer's ngram_range scores on real text" {
	real_text
	for g in 1,2 2,3; do
		ref sim "$D/real.txt" "$D/S.npy" --ngram $g
		ACCELKIT_CHUNK_BYTES=4096 docsim -j 2 -k 5 --ngram $g "$D/real.txt" >"$D/out"
		run ref check "$D/S.npy" "$D/out" -k 5 --all-pairs
		assert_success
		# not the words' scores: the n-grams change them
		docsim -k 5 "$D/real.txt" >"$D/words"
		! cmp -s "$D/out" "$D/words"
	done
}

@test "--char-ngram 2,4 and 3,5 give analyzer='char_wb' scores on real and Unicode text" {
	real_text
	for f in "$D/real.txt" "$T/unicode.txt" "$T/corpus.txt"; do
		for g in 2,4 3,5; do
			ref sim "$f" "$D/S.npy" --char-ngram $g
			ACCELKIT_CHUNK_BYTES=4096 docsim -j 2 -k 5 --char-ngram $g "$f" >"$D/out"
			run ref check "$D/S.npy" "$D/out" -k 5 --all-pairs
			assert_success
		done
	done
}

@test "char_wb: white space as str.split() finds it, short words once, final sigma, U+0130" {
	# NBSP, ideographic space and U+2028 split words; a word of one letter is " a "
	printf 'a b\xc2\xa0cd\xe3\x80\x80efgh\n\xce\x9f\xce\x94\xce\x9f\xce\xa3 \xc4\xb0stanbul\n' >"$D/u.txt"
	printf 'cd efgh ab\n\xce\xbf\xce\xb4\xce\xbf\xcf\x82 istanbul\nx\xe2\x80\xa8y a\n' >>"$D/u.txt"
	for g in 1,1 1,3 2,2 4,6; do
		ref sim "$D/u.txt" "$D/S.npy" --char-ngram $g
		docsim -k 3 -t -1 --char-ngram $g "$D/u.txt" >"$D/out"
		run ref check "$D/S.npy" "$D/out" -k 3 -t -1 --all-pairs
		assert_success
	done
}

@test "word n-grams are formed after the stop words are dropped; queries take the corpus's n-grams" {
	real_text
	printf 'the\nof\nto\nand\na\nor\n' >"$D/stop.txt"
	head -40 "$D/real.txt" >"$D/q.txt"
	ref sim "$D/real.txt" "$D/S.npy" -q "$D/q.txt" --ngram 2,2 --stop-words "$D/stop.txt" --min-df 2
	docsim -k 4 -q "$D/q.txt" --ngram 2,2 --stop-words "$D/stop.txt" --min-df 2 "$D/real.txt" >"$D/out"
	run ref check "$D/S.npy" "$D/out" -k 4
	assert_success
	ref sim "$D/real.txt" "$D/S.npy" -q "$D/q.txt" --char-ngram 3,3 --sublinear-tf --max-df 0.5
	docsim -k 4 -q "$D/q.txt" --char-ngram 3,3 --sublinear-tf --max-df 0.5 "$D/real.txt" >"$D/out"
	run ref check "$D/S.npy" "$D/out" -k 4
	assert_success
}

@test "n-gram options: bad ranges, both at once, stop words with characters, vectors are usage errors" {
	run -2 docsim --ngram 0,2 "$T/corpus.txt"
	assert_output --partial "--ngram"
	run -2 docsim --ngram 3,2 "$T/corpus.txt"
	assert_output --partial "MIN <= MAX"
	run -2 docsim --char-ngram 2,x "$T/corpus.txt"
	run -2 docsim --ngram 1,2 --char-ngram 2,4 "$T/corpus.txt"
	assert_output --partial "one of --ngram and --char-ngram"
	run -2 docsim --char-ngram 2,4 --stop-words "$T/stop.txt" "$T/corpus.txt"
	assert_output --partial "does not apply to --char-ngram"
	printf '1 2 3\n4 5 6\n' >"$D/v.txt"
	run -2 docsim --ngram 1,2 "$D/v.txt"
	assert_output --partial "apply to text input only"
	# --ngram N is N,N
	docsim -k 3 --ngram 2 "$T/corpus.txt" >"$D/a"
	docsim -k 3 --ngram 2,2 "$T/corpus.txt" >"$D/b"
	cmp "$D/a" "$D/b"
}
