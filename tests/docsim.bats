#!/usr/bin/env bats
# docsim: checked against scikit-learn (TfidfVectorizer + linear_kernel, NearestNeighbors),
# numpy and scipy through tests/ref/docsim_ref.py, on testdata/docsim and on inputs
# generated with fixed seeds (tests/ref/docsim_gen.py).

setup() {
	load helpers
	T=$TESTDATA/docsim
	D=$BATS_TEST_TMPDIR
}

ref() {
	py "$REF/docsim_ref.py" "$@"
}

gen() {
	py "$REF/docsim_gen.py" "$@"
}

# ---- text, against scikit-learn

@test "all-pairs top-k on text matches TfidfVectorizer and linear_kernel" {
	ref sim "$T/corpus.txt" "$D/S.npy"
	docsim -k 5 "$T/corpus.txt" > "$D/out"
	run ref check "$D/S.npy" "$D/out" -k 5 --all-pairs
	assert_success
	assert_output "ok: 63 lines"
}

@test "all-pairs scores with -t -1 equal NearestNeighbors with the cosine metric" {
	docsim -k 6 -t -1 "$T/corpus.txt" > "$D/out"
	run ref nn "$T/corpus.txt" "$D/out" -k 6
	assert_success
}

@test "queries use the corpus vocabulary and idf, unknown terms dropped" {
	ref sim "$T/corpus.txt" "$D/S.npy" -q "$T/queries.txt"
	docsim -k 4 -q "$T/queries.txt" "$T/corpus.txt" > "$D/out"
	run ref check "$D/S.npy" "$D/out" -k 4
	assert_success
	# query 5 has only unknown words: no document is related to it
	run awk -F'\t' '$1 == 5' "$D/out"
	assert_output ""
}

@test "an empty document has no neighbours, and with -t 0 scores 0 with every document" {
	run docsim -k 30 "$T/corpus.txt"
	assert_success
	refute_output --partial nan
	refute_line --regexp '^4	'
	refute_line --regexp '	4	'
	run docsim -k 30 -t 0 "$T/corpus.txt"
	assert_success
	refute_output --partial nan
	# line 4 is empty: 24 neighbours, all 0, in id order
	run awk -F'\t' '$1 == 4 { printf "%s:%s ", $2, $3 }' <<< "$output"
	assert_output "1:0.000000 2:0.000000 3:0.000000 5:0.000000 6:0.000000 7:0.000000 8:0.000000 9:0.000000 10:0.000000 11:0.000000 12:0.000000 13:0.000000 14:0.000000 15:0.000000 16:0.000000 17:0.000000 18:0.000000 19:0.000000 20:0.000000 21:0.000000 22:0.000000 23:0.000000 24:0.000000 25:0.000000 "
}

@test "repeated documents score 1 and equal scores go by ascending id" {
	run docsim -k 2 "$T/corpus.txt"
	assert_success
	assert_line --index 0 "1	7	1.000000"
	assert_line "7	1	1.000000"
	assert_line "8	20	1.000000"
	assert_line "20	8	1.000000"
	# with -t 0, the empty line 17 ties with everything at 0: its neighbours are 1 and 2
	run docsim -k 2 -t 0 "$T/corpus.txt"
	assert_line "17	1	0.000000"
	assert_line "17	2	0.000000"
}

@test "Korean words are tokens: a Korean query finds the Korean documents" {
	run docsim -k 3 -q "$T/queries.txt" "$T/corpus.txt"
	assert_success
	assert_line --index 3 --regexp '^2	(8|9|10|20)	0\.[1-9]'
}

@test "--weight tf, binary and none match scikit-learn" {
	for w in tf binary none; do
		ref sim "$T/corpus.txt" "$D/S.npy" --weight $w
		docsim -k 3 --weight $w "$T/corpus.txt" > "$D/out"
		run ref check "$D/S.npy" "$D/out" -k 3 --all-pairs
		assert_success
	done
}

@test "--sublinear-tf, --min-df, --max-df and --stop-words match scikit-learn" {
	ref sim "$T/corpus.txt" "$D/S.npy" --sublinear-tf --min-df 2 --max-df 0.5 --stop-words "$T/stop.txt" 2>/dev/null
	docsim -k 3 --sublinear-tf --min-df 2 --max-df 0.5 --stop-words "$T/stop.txt" "$T/corpus.txt" > "$D/out"
	run ref check "$D/S.npy" "$D/out" -k 3 --all-pairs
	assert_success
}

@test "--min-df and --max-df take proportions and counts as scikit-learn does" {
	ref sim "$T/corpus.txt" "$D/S.npy" -q "$T/queries.txt" --min-df 0.05 --max-df 3
	docsim -k 3 --min-df 0.05 --max-df 3 -q "$T/queries.txt" "$T/corpus.txt" > "$D/out"
	run ref check "$D/S.npy" "$D/out" -k 3
	assert_success
}

@test "--max-df below --min-df is a usage error" {
	run -2 docsim --min-df 5 --max-df 2 "$T/corpus.txt"
	assert_output --partial "--max-df"
}

@test "a Zipf corpus of 3000 lines matches scikit-learn, all pairs and queries" {
	gen zipf 3000 7 "$D/z.txt"
	head -n 200 "$D/z.txt" > "$D/q.txt"
	ref sim "$D/z.txt" "$D/S.npy"
	docsim -k 10 "$D/z.txt" > "$D/out"
	run ref check "$D/S.npy" "$D/out" -k 10 --all-pairs
	assert_success
	ref sim "$D/z.txt" "$D/Sq.npy" -q "$D/q.txt"
	docsim -k 7 -q "$D/q.txt" "$D/z.txt" > "$D/out"
	run ref check "$D/Sq.npy" "$D/out" -k 7
	assert_success
}

# ---- characters: scikit-learn's defaults (str.lower, \b\w\w+\b) beyond ASCII

# vocab_size FILE: the terms scikit-learn's CountVectorizer finds in FILE's lines
vocab_size() {
	py -c '
import sys
from sklearn.feature_extraction.text import CountVectorizer
sys.path.insert(0, sys.argv[2])
from docsim_ref import records
docs, _ = records(sys.argv[1])
print(len(CountVectorizer().fit(docs).vocabulary_))' "$1" "$REF"
}

@test "German, French, Greek, Cyrillic, Korean and CJK text split and lower-case as TfidfVectorizer's" {
	ref sim "$T/unicode.txt" "$D/S.npy"
	docsim --matrix -o "$D/m.npy" "$T/unicode.txt"
	run py -c "
import numpy as np
S = np.load('$D/S.npy'); M = np.load('$D/m.npy')
print(S.shape, float(np.abs(S - M).max()) < 1e-6)"
	assert_output "(17, 17) True"
	run --separate-stderr docsim -v -k 1 "$T/unicode.txt"
	[[ "$stderr" == *"vocabulary: $(vocab_size "$T/unicode.txt") terms"* ]]
}

@test "capitals lower-case as str.lower does: final sigma, umlauts, Cyrillic; ß stays" {
	printf 'ΟΔΟΣ\nοδος\nΣΟΦΟΣ ΛΟΓΟΣ\nσοφος λογος\nÄPFEL ÜBER\näpfel über\nМОСКВА Ёлка\nмосква ёлка\nSTRASSE\nstraße\n' > "$D/c.txt"
	run docsim -k 1 "$D/c.txt"
	assert_success
	for pair in "1	2" "2	1" "3	4" "5	6" "7	8" "8	7"; do
		assert_line "$pair	1.000000"
	done
	# "straße" is not "strasse" (str.lower does not fold ß), and shares nothing
	refute_line --regexp '^9	'
	refute_line --regexp '^10	'
}

@test "a word is two or more characters, not bytes, and punctuation beyond ASCII ends it" {
	# one Hangul or CJK character is no token; ’ 。 — « are not word characters
	printf '가 中 é\n가 中 é\ndon’t stop\ndon stop\n日本。中文\n日本 中文\n«guillemets»\nguillemets\n' > "$D/c.txt"
	run --separate-stderr docsim -v -k 1 "$D/c.txt"
	assert_success
	[[ "$stderr" == *"vocabulary: 5 terms"* ]]
	refute_line --regexp '^1	'
	assert_line "3	4	1.000000"
	assert_line "5	6	1.000000"
	assert_line "7	8	1.000000"
}

@test "bytes that are not UTF-8 read as Latin-1 characters" {
	printf 'caf\xe9 CAF\xc9 na\xefve\ncaf\xc3\xa9 caf\xc3\xa9 na\xc3\xafve\n\xe2\x82 x\xff\xfey \xed\xa0\x80ab \xf4\x90\x80\x80zz\n' > "$D/c.txt"
	ref sim "$D/c.txt" "$D/S.npy"
	docsim -k 2 "$D/c.txt" > "$D/out"
	run ref check "$D/S.npy" "$D/out" -k 2 --all-pairs
	assert_success
	run head -n 1 "$D/out"
	assert_output "1	2	1.000000"
}

@test "a generated corpus of many scripts matches scikit-learn" {
	gen uzipf 1500 3 "$D/u.txt"
	ref sim "$D/u.txt" "$D/S.npy"
	docsim -k 8 "$D/u.txt" > "$D/out"
	run ref check "$D/S.npy" "$D/out" -k 8 --all-pairs
	assert_success
	run --separate-stderr docsim -v -k 1 "$D/u.txt"
	[[ "$stderr" == *"vocabulary: $(vocab_size "$D/u.txt") terms"* ]]
}

# ---- parallel reading and writing: the same bytes on any thread count and chunk size

# same_on_threads ARGS...: docsim's output with -j 1, -j 3 and -j 2 with chunks of 64
# bytes is the same, byte for byte
same_on_threads() {
	docsim -j 1 "$@" > "$D/j1"
	docsim -j 3 "$@" > "$D/j3"
	ACCELKIT_CHUNK_BYTES=64 docsim -j 2 "$@" > "$D/tiny"
	cmp "$D/j1" "$D/j3" && cmp "$D/j1" "$D/tiny" && [ -s "$D/j1" ]
}

@test "-j 1, -j N and tiny chunks give byte-identical results on testdata" {
	run same_on_threads -k 5 "$T/corpus.txt"
	assert_success
	run same_on_threads -k 3 -q "$T/queries.txt" "$T/corpus.txt"
	assert_success
	run same_on_threads -k 4 "$T/unicode.txt"
	assert_success
	run same_on_threads -k 0 -t 0.1 "$T/corpus.txt"
	assert_success
	awk '{ printf "d%d\t%s\n", NR, $0 }' "$T/corpus.txt" > "$D/ids.txt"
	run same_on_threads --ids -k 3 "$D/ids.txt"
	assert_success
}

@test "-j 1, -j N and tiny chunks give byte-identical results on a 20000-line corpus" {
	gen uzipf 20000 5 "$D/big.txt"
	sed -n '1~400p' "$D/big.txt" > "$D/q.txt"
	run same_on_threads -k 10 -q "$D/q.txt" "$D/big.txt"
	assert_success
	run same_on_threads -k 0 -t 0.6 -q "$D/q.txt" "$D/big.txt"
	assert_success
	# and the vocabulary is scikit-learn's, in its size
	run --separate-stderr docsim -j 3 -v -k 1 -q "$D/q.txt" "$D/big.txt"
	[[ "$stderr" == *"vocabulary: $(vocab_size "$D/big.txt") terms"* ]]
}

@test "a bad line is reported the same on any thread count and chunk size" {
	awk '{ printf "d%d\t%s\n", NR, $0 }' "$T/corpus.txt" "$T/corpus.txt" "$T/corpus.txt" > "$D/ids.txt"
	sed -i -e '61s/\t/ /' -e '70s/\t/ /' "$D/ids.txt"
	for chunk in "" 64 1; do
		for j in 1 3; do
			run -1 env ${chunk:+ACCELKIT_CHUNK_BYTES=$chunk} docsim -j $j --ids "$D/ids.txt"
			assert_output "docsim: $D/ids.txt:61: no TAB after the id (--ids)"
		done
	done
}

# ---- threshold, -k 0, --ids

@test "a threshold keeps only scores at or above it" {
	ref sim "$T/corpus.txt" "$D/S.npy"
	docsim -k 3 -t 0.3 "$T/corpus.txt" > "$D/out"
	run ref check "$D/S.npy" "$D/out" -k 3 -t 0.3 --all-pairs
	assert_success
	run awk -F'\t' '$3 < 0.3' "$D/out"
	assert_output ""
}

@test "-k 0 with a threshold prints every pair once, lower id first" {
	ref sim "$T/corpus.txt" "$D/S.npy"
	run docsim -k 0 -t 0.2 "$T/corpus.txt"
	assert_success
	assert_line --index 0 "1	7	1.000000"
	printf '%s\n' "$output" > "$D/out"
	run ref check "$D/S.npy" "$D/out" --pairs -t 0.2 --all-pairs
	assert_output "ok: 11 pairs"
}

@test "-k 0 with queries prints every query-document pair above the threshold" {
	gen zipf 600 3 "$D/z.txt"
	head -n 50 "$D/z.txt" > "$D/q.txt"
	ref sim "$D/z.txt" "$D/S.npy" -q "$D/q.txt"
	docsim -k 0 -t 0.15 -q "$D/q.txt" "$D/z.txt" > "$D/out"
	run ref check "$D/S.npy" "$D/out" --pairs -t 0.15
	assert_success
}

@test "-k 0 on a Zipf corpus finds the same pairs as scikit-learn" {
	gen zipf 1500 11 "$D/z.txt"
	ref sim "$D/z.txt" "$D/S.npy"
	docsim -k 0 -t 0.25 "$D/z.txt" > "$D/out"
	run ref check "$D/S.npy" "$D/out" --pairs -t 0.25 --all-pairs
	assert_success
}

@test "-k 0 without a threshold is a usage error" {
	run -2 docsim -k 0 "$T/corpus.txt"
	assert_output --partial "needs --threshold"
}

@test "--ids names documents and queries by their first field" {
	awk '{ printf "doc-%d\t%s\n", NR, $0 }' "$T/corpus.txt" > "$D/c.txt"
	awk '{ printf "q%d\t%s\n", NR, $0 }' "$T/queries.txt" > "$D/q.txt"
	ref sim "$D/c.txt" "$D/S.npy" -q "$D/q.txt" --ids
	docsim --ids -k 3 -q "$D/q.txt" "$D/c.txt" > "$D/out"
	run ref check "$D/S.npy" "$D/out" -k 3 --ids "$D/c.txt" "$D/q.txt"
	assert_success
	run head -n 1 "$D/out"
	assert_output "q1	doc-2	0.783923"
}

@test "with --ids a line without a TAB is an error naming its line" {
	printf 'a\tsome text\nno tab here\n' > "$D/c.txt"
	run -1 docsim --ids "$D/c.txt"
	assert_output "docsim: $D/c.txt:2: no TAB after the id (--ids)"
}

# ---- vector formats

@test "libsvm input gives the same results as the text it came from" {
	docsim -k 5 "$T/corpus.txt" > "$D/text"
	ref convert "$T/corpus.txt" libsvm "$D/c.svm"
	docsim -k 5 "$D/c.svm" > "$D/out"
	run ref same "$D/text" "$D/out"
	assert_success
}

@test "MatrixMarket input gives the same results as the text it came from" {
	docsim -k 5 "$T/corpus.txt" > "$D/text"
	ref convert "$T/corpus.txt" mm "$D/c.mtx"
	docsim -k 5 "$D/c.mtx" > "$D/out"
	run ref same "$D/text" "$D/out"
	assert_success
}

@test "dense text and NPY input give the same results as the text" {
	docsim -k 5 "$T/corpus.txt" > "$D/text"
	ref convert "$T/corpus.txt" dense "$D/c.txt"
	ref convert "$T/corpus.txt" npy "$D/c.npy"
	docsim -k 5 "$D/c.txt" > "$D/out"
	run ref same "$D/text" "$D/out"
	assert_success
	docsim -k 5 "$D/c.npy" > "$D/out"
	run ref same "$D/text" "$D/out"
	assert_success
}

@test "libsvm queries and corpus match scikit-learn's normalize and dot" {
	cat > "$D/c.svm" <<-'EOF'
	1 1:0.5 3:2 7:1
	-1 qid:3 2:1 3:1 # a comment
	0
	2 1:1 2:1 3:1 4:1
	1 5:-1 6:2
	EOF
	printf '0 1:1 3:1\n1 9:4\n0 5:1 6:1\n' > "$D/q.svm"
	ref sim "$D/c.svm" "$D/S.npy" --format libsvm -q "$D/q.svm"
	docsim -k 4 -q "$D/q.svm" "$D/c.svm" > "$D/out"
	run ref check "$D/S.npy" "$D/out" -k 4
	assert_success
}

@test "dense vectors with negative cosines are ranked by score" {
	gen dense 300 16 5 "$D/x.txt"
	ref sim "$D/x.txt" "$D/S.npy" --format dense
	docsim -k 8 "$D/x.txt" > "$D/out"
	run ref check "$D/S.npy" "$D/out" -k 8 --all-pairs
	assert_success
	docsim -k 0 -t -0.5 "$D/x.txt" > "$D/out"
	run ref check "$D/S.npy" "$D/out" --pairs -t -0.5 --all-pairs
	assert_success
}

@test "adversarial dense vectors rank as float64 does: near-ties, copies, a dominant dimension, norms of 1e30 and 1e-30" {
	# (made for issue 15's fast products; on the CPU it found the reference's sklearn
	# normalize leaving rows of norm below 2.2e-15 unscaled)
	gen adversarial 2000 100 5 "$D/x.npy"
	gen adversarial 60 100 6 "$D/q.npy"
	ref sim "$D/x.npy" "$D/S.npy" --format dense
	docsim -k 10 "$D/x.npy" > "$D/out"
	run ref check "$D/S.npy" "$D/out" -k 10 --all-pairs
	assert_success
	docsim -k 0 -t 0.9 "$D/x.npy" > "$D/out"
	run ref check "$D/S.npy" "$D/out" --pairs -t 0.9 --all-pairs
	assert_success
	ref sim "$D/x.npy" -q "$D/q.npy" "$D/Sq.npy" --format dense
	docsim -k 5 -q "$D/q.npy" "$D/x.npy" > "$D/out"
	run ref check "$D/Sq.npy" "$D/out" -k 5
	assert_success
}

@test "--weight none on dense input gives raw dot products" {
	printf '1 2\n3 4\n-1 0\n' > "$D/x.txt"
	run docsim --weight none -k 2 -t -1e9 "$D/x.txt"
	assert_success
	assert_output "$(printf '1\t2\t11.000000\n1\t3\t-1.000000\n2\t1\t11.000000\n2\t3\t-3.000000\n3\t1\t-1.000000\n3\t2\t-3.000000')"
	# without -t, only the scores above 0
	run docsim --weight none -k 2 "$D/x.txt"
	assert_output "$(printf '1\t2\t11.000000\n2\t1\t11.000000')"
}

@test "--weight tfidf on count vectors applies the corpus idf as TfidfTransformer does" {
	printf '0 1:3 2:1\n0 2:2 3:1\n0 1:1 3:5\n' > "$D/c.svm"
	run docsim --weight tfidf --matrix "$D/c.svm"
	assert_success
	py -c '
import numpy as np, sys
from sklearn.feature_extraction.text import TfidfTransformer
from sklearn.metrics.pairwise import linear_kernel
X = np.array([[3, 1, 0], [0, 2, 1], [1, 0, 5]], float)
W = TfidfTransformer().fit_transform(X)
want = linear_kernel(W, W)
got = np.loadtxt(sys.stdin, ndmin=2)
assert np.abs(got - want).max() < 1e-6, (got, want)
' <<< "$output"
}

@test "the format is detected from the content and --format overrides it" {
	printf '10 20 30\n20 30 40\n' > "$D/n.txt"
	run --separate-stderr docsim -v -k 1 "$D/n.txt"
	assert_success
	[[ "$stderr" == *"corpus: 2 documents, dense"* ]]
	run --separate-stderr docsim -v -k 1 --format text "$D/n.txt"
	assert_success
	[[ "$stderr" == *"corpus: 2 documents, text"* ]]
	# as text: tokens 10 20 30 / 20 30 40, idf-weighted
	ref sim "$D/n.txt" "$D/S.npy"
	printf '%s\n' "$output" > "$D/out"
	run ref check "$D/S.npy" "$D/out" -k 1 --all-pairs
	assert_success
}

@test "rows of 20,000 and 100,000 numbers are detected as vectors: no line is too long to tell" {
	# detection peeked 64 KB and left a partial line out, so such rows were words (issue 34)
	py -c "
import numpy as n
r = n.random.default_rng(5)
for m in (20000, 100000):
    n.savetxt('$D/w%d.txt' % m, r.standard_normal((5, m)).astype('f4'), fmt='%.9g')"
	for m in 20000 100000; do
		ref sim "$D/w$m.txt" "$D/S.npy" --format dense
		run -0 --separate-stderr docsim -v -k 4 -t -1 "$D/w$m.txt"
		assert_regex "$stderr" "corpus: 5 documents, dense"
		printf '%s\n' "$output" > "$D/out"
		run ref check "$D/S.npy" "$D/out" -k 4 -t -1 --all-pairs
		assert_success
		# from standard input, after a comment and a blank line; and libsvm rows as long
		{ printf '# rows\n\n'; cat "$D/w$m.txt"; } | docsim -k 4 -t -1 | cmp "$D/out" -
	done
	py -c "
import numpy as n
x = n.loadtxt('$D/w20000.txt')
with open('$D/w.svm', 'w') as f:
    for r in x:
        f.write('0 ' + ' '.join('%d:%.9g' % (i + 1, v) for i, v in enumerate(r)) + '\\n')"
	run -0 --separate-stderr docsim -v -k 4 -t -1 "$D/w.svm"
	assert_regex "$stderr" "corpus: 5 documents, libsvm"
	# a long line of words is text, told by its first word
	py -c "print(' '.join(['12 word'] * 100000))" > "$D/t.txt"
	run -0 --separate-stderr docsim -v -k 1 "$D/t.txt"
	assert_regex "$stderr" "corpus: 1 documents, text"
}

@test "a malformed libsvm line is an error naming its line" {
	printf '1 1:0.5 2:1\n1 3:x\n' > "$D/c.svm"
	run -1 docsim --format libsvm "$D/c.svm"
	assert_output "docsim: $D/c.svm:2: index 3: value 'x' is not a number"
	printf '1 1:0.5\n1 2:1 oops\n' > "$D/c.svm"
	run -1 docsim "$D/c.svm" --format libsvm
	assert_output "docsim: $D/c.svm:2: expected INDEX:VALUE, found 'oops'"
}

@test "an out-of-order or repeated libsvm index is an error naming its line" {
	printf '1 1:1 2:1\n1 2:1\n1 5:1 3:1\n' > "$D/c.svm"
	run -1 docsim "$D/c.svm"
	assert_output "docsim: $D/c.svm:3: index 3 is out of order (after 5; indexes must ascend)"
	printf '1 1:1 2:1\n1 4:1 4:2\n' > "$D/c.svm"
	run -1 docsim "$D/c.svm"
	assert_output "docsim: $D/c.svm:2: index 4 appears twice"
}

@test "MatrixMarket errors name the line: duplicate, outside, missing entries" {
	printf '%%%%MatrixMarket matrix coordinate real general\n%% c\n2 3 3\n1 1 1.0\n2 3 2\n1 1 4\n' > "$D/m.mtx"
	run -1 docsim "$D/m.mtx"
	assert_output "docsim: $D/m.mtx:6: entry (1, 1) appears twice"
	printf '%%%%MatrixMarket matrix coordinate real general\n2 3 2\n1 1 1.0\n3 1 2\n' > "$D/m.mtx"
	run -1 docsim "$D/m.mtx"
	assert_output "docsim: $D/m.mtx:4: entry (3, 1) is outside the 2 x 3 matrix"
	printf '%%%%MatrixMarket matrix coordinate pattern general\n2 3 3\n1 1\n2 2\n' > "$D/m.mtx"
	run -1 docsim "$D/m.mtx"
	assert_output "docsim: $D/m.mtx:4: only 2 of the 3 entries the size line gives"
}

@test "a MatrixMarket size line whose rows' index would pass half the host's memory is refused before reading" {
	# 4,294,967,294 empty rows are legal and a 60-byte file, but their index is 64 GiB
	printf '%%%%MatrixMarket matrix coordinate real general\n4294967294 5 1\n1 1 1.0\n' > "$D/m.mtx"
	run -1 timeout 20 docsim "$D/m.mtx"
	assert_output --regexp "^docsim: $D/m.mtx:2: 4294967294 rows need 64.0 GiB for their index alone, more than half this host's memory \([0-9.]+ GiB\)$"
	# below the bound the rows are read: 2^20 empty rows and one entry
	printf '%%%%MatrixMarket matrix coordinate real general\n1048576 5 1\n1 1 1.0\n' > "$D/m.mtx"
	run -0 --separate-stderr docsim -v -k 1 "$D/m.mtx"
	[[ "$stderr" == *"corpus: 1048576 documents, mm"* ]]
}

@test "symmetric and pattern MatrixMarket files are read as their full matrices" {
	printf '%%%%MatrixMarket matrix coordinate real symmetric\n3 3 3\n1 1 1\n2 1 2\n3 3 1\n' > "$D/s.mtx"
	printf '%%%%MatrixMarket matrix coordinate real general\n3 3 4\n1 1 1\n2 1 2\n1 2 2\n3 3 1\n' > "$D/g.mtx"
	run docsim --matrix "$D/s.mtx"
	assert_success
	local sym=$output
	run docsim --matrix "$D/g.mtx"
	assert_output "$sym"
	assert_line --index 1 "0.4472136	1	0"
}

@test "dense queries of another width than the corpus are an error" {
	printf '1 2 3\n4 5 6\n' > "$D/c.txt"
	printf '1 2\n' > "$D/q.txt"
	run -1 docsim -q "$D/q.txt" "$D/c.txt"
	assert_output "docsim: $D/q.txt: 2 columns where the corpus has 3"
}

# ---- the paper's setup and --matrix

@test "the paper's setup: the last row of an n x m matrix as query gives numpy's cosines" {
	gen uniform 50 5000 1 "$D/x.npy"
	py -c "import numpy as np; x = np.load('$D/x.npy'); np.save('$D/c.npy', x[:-1]); np.save('$D/q.npy', x[-1:])"
	docsim --matrix -O npy -o "$D/sim.npy" -q "$D/q.npy" "$D/c.npy"
	run py -c "
import numpy as np
x = np.load('$D/x.npy').astype(np.float64)
q, c = x[-1], x[:-1]
want = c @ q / (np.linalg.norm(c, axis=1) * np.linalg.norm(q))
got = np.load('$D/sim.npy')
assert got.shape == (1, 49) and got.dtype == np.float32, got.shape
print(np.abs(got[0] - want).max() < 1e-6)"
	assert_output True
}

@test "a few dense queries against a corpus above the one-thread bound give numpy's cosines and top lists on any -j" {
	# 1 and 3 queries: fewer blocks of rows than threads, so the threads share the
	# corpus rows (docsim_cpu.c's dense_few_rows); 2,000 x 1,000 is above PAR_WORK
	gen uniform 2003 1000 7 "$D/x.npy"
	py -c "import numpy as np; x = np.load('$D/x.npy'); np.save('$D/c.npy', x[:2000]); np.save('$D/q1.npy', x[2000:2001]); np.save('$D/q3.npy', x[2000:])"
	for q in q1 q3; do
		for j in 1 4; do
			docsim -d cpu -j $j --matrix -O npy -o "$D/$q.$j.npy" -q "$D/$q.npy" "$D/c.npy"
			docsim -d cpu -j $j -k 5 -q "$D/$q.npy" "$D/c.npy" > "$D/$q.$j.txt"
		done
		cmp "$D/$q.1.npy" "$D/$q.4.npy"
		cmp "$D/$q.1.txt" "$D/$q.4.txt"
	done
	run py -c "
import numpy as np
x = np.load('$D/x.npy').astype(np.float64)
c = x[:2000]; q = x[2000:]
S = (q @ c.T) / np.outer(np.linalg.norm(q, axis=1), np.linalg.norm(c, axis=1))
ok = True
for name, qq in (('q1', S[:1]), ('q3', S)):
    got = np.load('$D/%s.4.npy' % name)
    ok &= got.shape == qq.shape and np.abs(got - qq).max() < 1e-6
    rows = [l.split() for l in open('$D/%s.4.txt' % name)]
    for r in range(qq.shape[0]):
        want = set(np.argsort(-qq[r], kind='stable')[:5] + 1)
        have = set(int(f[1]) for f in rows if int(f[0]) == r + 1)
        ok &= len(have) == 5
        ok &= want == have
print(ok)"
	assert_output True
}

@test "--matrix prints the whole similarity matrix as text or NPY" {
	ref sim "$T/corpus.txt" "$D/S.npy"
	docsim --matrix "$T/corpus.txt" > "$D/m.txt"
	docsim --matrix -o "$D/m.npy" "$T/corpus.txt"
	run py -c "
import numpy as np
S = np.load('$D/S.npy'); T = np.loadtxt('$D/m.txt'); N = np.load('$D/m.npy')
print(T.shape, np.abs(T - S).max() < 1e-6, np.abs(N - S).max() < 1e-6, (N == T.astype(np.float32)).all())"
	assert_output "(25, 25) True True True"
}

@test "cosines are printed within [-1, 1]: a text document against itself is 1, not 1.0000001, in every output" {
	# corpus.txt's float sums put one document's own cosine at 1.0000001 (issue 34)
	docsim --matrix "$T/corpus.txt" > "$D/m.txt"
	docsim --matrix -O npy -o "$D/m.npy" "$T/corpus.txt"
	docsim -k 0 -t -1 "$T/corpus.txt" > "$D/p.txt"
	docsim -k 30 -t -1 -q "$T/corpus.txt" "$T/corpus.txt" > "$D/k.txt"
	# rows and their negations: cosines of -1
	py -c "import numpy as n; x = n.random.default_rng(3).standard_normal((200, 50)).astype('f4'); n.save('$D/x.npy', n.vstack([x, -x]))"
	docsim --matrix -O npy -o "$D/x_m.npy" "$D/x.npy"
	docsim --matrix --weight none -O npy -o "$D/raw.npy" "$D/x.npy"
	run py -c "
import numpy as np
T = np.loadtxt('$D/m.txt'); N = np.load('$D/m.npy'); X = np.load('$D/x_m.npy')
P = np.loadtxt('$D/p.txt', usecols=2); K = np.loadtxt('$D/k.txt', usecols=2)
print([float(a.max()) <= 1 and float(a.min()) >= -1 for a in (T, N, X, P, K)], T.max(), N.max(), X.min(),
      np.load('$D/raw.npy').max() > 1)"
	assert_output "[True, True, True, True, True] 1.0 1.0 -1.0 True"
}

@test "--matrix with -k, or -O npy without --matrix, is a usage error" {
	run -2 docsim --matrix -k 3 "$T/corpus.txt"
	assert_output --partial "--matrix"
	run -2 docsim -O npy "$T/corpus.txt"
	assert_output --partial "-O npy needs --matrix"
}

# ---- devices, memory limits, CPU against GPU

@test "--max-device-mem small enough to force tiles gives the same results" {
	gen dense 600 64 9 "$D/x.npy"
	ref sim "$D/x.npy" "$D/S.npy" --format dense
	# (on DGEMM: TF32 products would keep these vectors resident, in smaller tiles)
	run --separate-stderr env ACCELKIT_DOCSIM_TF32=0 docsim -v --max-device-mem 384K -k 6 "$D/x.npy"
	assert_success
	if on_gpu; then
		[[ "$stderr" == *"vectors streamed by panel"* ]]
		docsim --max-device-mem 384K -k 6 "$D/x.npy" | cmp - <(printf '%s\n' "$output")
	fi
	printf '%s\n' "$output" > "$D/out"
	run ref check "$D/S.npy" "$D/out" -k 6 --all-pairs
	assert_success
	gen zipf 2000 5 "$D/z.txt"
	head -n 300 "$D/z.txt" > "$D/q.txt"
	ref sim "$D/z.txt" "$D/S.npy" -q "$D/q.txt"
	docsim --max-device-mem 3M -k 5 -q "$D/q.txt" "$D/z.txt" > "$D/out"
	run ref check "$D/S.npy" "$D/out" -k 5
	assert_success
	ref sim "$D/z.txt" "$D/S.npy"
	docsim --max-device-mem 3M -k 5 "$D/z.txt" > "$D/out"
	run ref check "$D/S.npy" "$D/out" -k 5 --all-pairs
	assert_success
}

@test "properties: 100 random shapes, -k, thresholds and -k 0 match scikit-learn; -j 3 with tiny chunks gives -j 1's bytes" {
	run py "$REF/docsim_prop.py" --cases 100 --limit "$(limit 60)" "$D"
	assert_success
	assert_line "ok: 100 cases"
}

@test "properties: the GPU gives the CPU's bytes in core and under random --max-device-mem from the least up; one byte less is refused" {
	require_gpu
	# (under memcheck a case's seven GPU runs take a minute or more: 3 cases)
	n=$(cases 40 12)
	run py "$REF/docsim_prop.py" --gpu --cases "$n" --limit "$(limit 60)" "$D"
	assert_success
	assert_line "ok: $n cases"
}

@test "CPU and GPU outputs are identical" {
	require_gpu
	gen zipf 3000 13 "$D/z.txt"
	head -n 100 "$D/z.txt" > "$D/q.txt"
	gen dense 2000 100 4 "$D/x.npy"
	gen adversarial 2000 100 5 "$D/adv.npy"
	for args in "-k 10 $T/corpus.txt" "-k 3 -q $T/queries.txt $T/corpus.txt" \
	    "-k 10 $D/z.txt" "-k 10 -q $D/q.txt $D/z.txt" "-k 0 -t 0.3 $D/z.txt" \
	    "--matrix $T/corpus.txt" "-k 10 $D/x.npy" "-k 0 -t 0.3 $D/x.npy" \
	    "--max-device-mem 2M -k 10 $D/z.txt" "-k 10 $D/adv.npy" "-k 0 -t 0.9 $D/adv.npy"; do
		docsim -d cpu $args > "$D/cpu"
		docsim -d gpu $args > "$D/gpu"
		run cmp "$D/cpu" "$D/gpu"
		assert_success
	done
}

# Issue 15: dense top-k lists from TF32 products, rescored in float64 (kernels/docsim_exact.cu)

# tf32_counts STDERR: R, C and W from -v's "N rows (a gap under twice the TF32 bound, B)
# rechecked by a float32 GEMM, of which C crowded (...) and W computed whole"
tf32_counts() {
	[[ "$1" =~ \ ([0-9]+)\ rows\ \(a\ gap\ under\ twice\ the\ TF32\ bound,\ [0-9.e-]+\)\ rechecked\ by\ a\ float32\ GEMM,\ of\ which\ ([0-9]+)\ crowded\ \([^\)]*\)\ and\ ([0-9]+)\ computed\ whole ]] ||
	    fail "no counts in: $1"
	R=${BASH_REMATCH[1]} C=${BASH_REMATCH[2]} W=${BASH_REMATCH[3]}
}
@test "TF32 top-k lists and -k 0 pairs rescored in float64 print the CPU's lines: k 0 to 32, -t, queries, clusters rechecked, near-copies crowded" {
	require_gpu
	gen dense 3000 200 4 "$D/x.npy"
	gen adversarial 2000 100 5 "$D/adv.npy"
	gen clusters 2000 64 6 "$D/cl.npy"
	py -c 'import numpy as n; n.save("'"$D"'/q.npy", n.load("'"$D"'/adv.npy")[::7])'
	py -c 'import numpy as n; n.save("'"$D"'/qx.npy", n.load("'"$D"'/x.npy")[::11])'
	py -c 'import numpy as n; n.save("'"$D"'/qc.npy", n.load("'"$D"'/cl.npy")[::13])'
	for args in "-k 1 $D/x.npy" "-k 10 $D/x.npy" "-k 32 $D/x.npy" "-k 10 $D/adv.npy" "-k 32 $D/adv.npy" \
	    "-k 5 -t 0.1 $D/x.npy" "-k 20 -t 0.99 $D/adv.npy" "-k 3 -q $D/q.npy $D/adv.npy" "-k 12 -q $D/qx.npy $D/x.npy" \
	    "-k 10 $D/cl.npy" "-k 32 -t 0.9976 $D/cl.npy" "-k 7 -q $D/qc.npy $D/cl.npy" \
	    "-k 0 -t 0.9 $D/adv.npy" "-k 0 -t 0.9976 $D/cl.npy" "-k 0 -t 0.5 -q $D/q.npy $D/adv.npy"; do
		# shellcheck disable=SC2086
		docsim -d cpu $args > "$D/cpu"
		# shellcheck disable=SC2086
		run -0 --separate-stderr docsim -v -d gpu $args
		assert_regex "$stderr" "TF32 products, the (lists' candidates|pairs near the threshold) rescored in float64"
		cmp "$D/cpu" <(printf '%s\n' "$output") || fail "docsim $args: the GPU's TF32 lines differ from the CPU's"
		# shellcheck disable=SC2086
		ACCELKIT_DOCSIM_TF32=0 docsim -d gpu $args | cmp "$D/cpu" -
		# shellcheck disable=SC2086
		ACCELKIT_DOCSIM_FUSED=1 docsim -d gpu $args | cmp "$D/cpu" -
	done
	# clusters (cosines some 4e-4 apart) are all rechecked, and the float32 GEMM decides them
	run -0 --separate-stderr docsim -v -d gpu -k 10 "$D/cl.npy"
	tf32_counts "$stderr"
	[ "$R" -ge 1900 ] && [ "$C" -lt 20 ] && [ "$W" -eq 0 ]
	# near-copies (rows nudged by 1e-4 to 1e-7, and exact copies) are crowded
	run -0 --separate-stderr docsim -v -d gpu -k 10 "$D/adv.npy"
	tf32_counts "$stderr"
	[ "$C" -ge 1 ] && [ "$R" -ge "$C" ]
	# and Gaussian vectors mostly are neither
	run -0 --separate-stderr docsim -v -d gpu -k 10 "$D/x.npy"
	tf32_counts "$stderr"
	[ "$R" -lt 300 ]
	# where the fast path does not apply: -k 33, streamed vectors, sparse text
	for args in "-k 33 $D/x.npy" "-k 10 --max-device-mem 2M $D/x.npy"; do
		# shellcheck disable=SC2086
		run -0 --separate-stderr docsim -v -d gpu $args
		assert_regex "$stderr" "float64 accumulation"
		# shellcheck disable=SC2086
		cmp <(printf '%s\n' "$output") <(docsim -d cpu $args)
	done
	# -k 0: the pairs within the bound below the threshold are rescored, and the
	# clusters' pairs straddle -t 0.9976 (about half of them pass)
	run -0 --separate-stderr docsim -v -d gpu -k 0 -t 0.9976 "$D/cl.npy"
	[[ "$stderr" =~ \ ([0-9]+)\ pairs\ at\ or\ above\ the\ threshold\ less\ the\ TF32\ bound\ \([0-9.e-]+\)\ rescored\ in\ float64,\ ([0-9]+)\ passed ]] ||
	    fail "no pair counts in: $stderr"
	[ "${BASH_REMATCH[2]}" -eq "${#lines[@]}" ] && [ "${BASH_REMATCH[1]}" -gt "${BASH_REMATCH[2]}" ] && [ "${#lines[@]}" -gt 1000 ]
	run -0 --separate-stderr docsim -v -d gpu -k 10 "$T/corpus.txt"
	assert_regex "$stderr" "float64 accumulation"
	# raw vectors (--weight none): the bound is for unit vectors, so DGEMM
	py -c 'import numpy as n; n.save("'"$D"'/big.npy", (n.load("'"$D"'/x.npy") * 1e3).astype("f4"))'
	run -0 --separate-stderr docsim -v -d gpu --weight none -k 10 "$D/big.npy"
	assert_regex "$stderr" "float64 accumulation"
	cmp <(printf '%s\n' "$output") <(docsim -d cpu --weight none -k 10 "$D/big.npy")
	# divided over two workers, each makes its lists exact: one GPU's bytes
	docsim -d gpu -k 10 "$D/adv.npy" > "$D/one"
	docsim -d gpu:0,0 -k 10 "$D/adv.npy" | cmp "$D/one" -
	docsim -d gpu -k 10 "$D/cl.npy" > "$D/one"
	docsim -d gpu:0,0 -k 10 "$D/cl.npy" | cmp "$D/one" -
	run -1 env ACCELKIT_DOCSIM_TF32=yes docsim -d gpu -k 10 "$D/x.npy"
	assert_output --partial "ACCELKIT_DOCSIM_TF32 must be 0 or 1, not 'yes'"
}

# A row whose float32 list is crowded too (more near-copies than its k + 32 candidates:
# the scale suite's clusters, 100,000 x 1024, took 42.7 s computed whole) is rescored
# from every column within twice the float32 bound of its k-th; only more such columns
# than the batch has room for (copies of most of the corpus) are computed whole.
@test "crowded rows (clusters of near-copies larger than the lists) rescored from their candidates, copies of the whole corpus computed whole: the CPU's lines" {
	require_gpu
	# 100 clusters of 100 around unit rows, noise 0.01 / sqrt(256): cosines some 1e-5
	# apart, within twice the float32 GEMM's bound (6.1e-5 for 256) and far above a
	# float's step at 1
	py -c 'import numpy as n; r = n.random.default_rng(8); b = r.standard_normal((100, 256)); b /= n.linalg.norm(b, axis=1, keepdims=True); x = b[n.arange(10000) // 100] + r.standard_normal((10000, 256)) * (0.01 / 16); n.save("'"$D"'/cr.npy", x.astype("f4")); n.save("'"$D"'/crq.npy", x[::37].astype("f4"))'
	for args in "-k 10 $D/cr.npy" "-k 32 $D/cr.npy" "-k 20 -t 0.99 $D/cr.npy" "-k 16 -q $D/crq.npy $D/cr.npy"; do
		# shellcheck disable=SC2086
		docsim -d cpu $args > "$D/cpu"
		# shellcheck disable=SC2086
		run -0 --separate-stderr docsim -v -d gpu $args
		tf32_counts "$stderr"
		[ "$C" -ge "$((R * 9 / 10))" ] && [ "$C" -ge 200 ] && [ "$W" -eq 0 ] ||
		    fail "docsim $args: $R rechecked, $C crowded, $W computed whole"
		cmp "$D/cpu" <(printf '%s\n' "$output") || fail "docsim $args: the crowded rows' lines differ from the CPU's"
	done
	docsim -d gpu:0,0 -k 10 "$D/cr.npy" | cmp <(docsim -d cpu -k 10 "$D/cr.npy") -
	# 3,000 copies of one row: each row's candidates are every other row, more than the
	# batch's room (a 3,000 x 3,000 tile buffer, half of it for 1,499 a row)
	py -c 'import numpy as n; r = n.random.default_rng(9); n.save("'"$D"'/same.npy", n.tile(r.standard_normal(64), (3000, 1)).astype("f4"))'
	docsim -d cpu -k 10 "$D/same.npy" > "$D/cpu"
	run -0 --separate-stderr docsim -v -d gpu -k 10 "$D/same.npy"
	tf32_counts "$stderr"
	[ "$W" -eq 3000 ] && [ "$C" -eq 3000 ] || fail "copies: $R rechecked, $C crowded, $W computed whole"
	cmp "$D/cpu" <(printf '%s\n' "$output")
}

# Issue 37: the TF32 product ranks as it ends (kernels/docsim_topk_tc.cu, ACCELKIT_DOCSIM_FUSED=1)
@test "TF32 lists ranked by the product itself print the CPU's lines: all pairs and queries, several tiles, ties and -t" {
	require_gpu
	gen dense 5000 96 4 "$D/x.npy"
	gen adversarial 3000 100 5 "$D/adv.npy"
	py -c 'import numpy as n; x = n.load("'"$D"'/x.npy"); n.save("'"$D"'/q.npy", x[::9]); n.save("'"$D"'/k3.npy", x[:, :3].copy())'
	for args in "-k 10 $D/x.npy" "-k 32 -t 0.2 $D/x.npy" "-k 1 $D/adv.npy" "-k 25 $D/adv.npy" \
	    "-k 7 -q $D/q.npy $D/x.npy" "-k 10 $D/k3.npy" "-k 10 --max-device-mem 6M $D/x.npy" \
	    "-k 5 -q $D/q.npy --max-device-mem 5M $D/x.npy"; do
		# shellcheck disable=SC2086
		docsim -d cpu $args > "$D/cpu"
		# shellcheck disable=SC2086
		run -0 --separate-stderr env ACCELKIT_DOCSIM_FUSED=1 docsim -v -d gpu $args
		assert_regex "$stderr" "TF32 products ranked into the lists as they end, no score tile"
		cmp "$D/cpu" <(printf '%s\n' "$output") || fail "docsim $args: the fused TF32 lists' lines differ from the CPU's"
	done
	# divided over two workers on one GPU, each its own lists and locks
	docsim -d cpu -k 10 "$D/x.npy" > "$D/cpu"
	ACCELKIT_DOCSIM_FUSED=1 docsim -d gpu:0,0 -k 10 "$D/x.npy" | cmp "$D/cpu" -
}

@test "--precision single on a GPU agrees with the CPU within 1e-5" {
	require_gpu
	gen dense 2000 256 8 "$D/x.npy"
	ref sim "$D/x.npy" "$D/S.npy" --format dense
	docsim -d gpu --precision single -k 10 "$D/x.npy" > "$D/out"
	run ref check "$D/S.npy" "$D/out" -k 10 --all-pairs
	assert_success
}

# Issue 37: docsim's own GEMM kernels (kernels/docsim_mma.cu), each against a long double
# product on the CPU (tests/docsim_mm.cu) within the bound its users rely on.
@test "the TF32, float32 and float64 GEMM kernels are within their bounds of a long double product, and the TF32 lists ranked by the product miss no column float64 says they must hold" {
	require_gpu
	run -0 docsim_mm
	assert_line --regexp "^ok: [0-9]+ products, [0-9]+ entries$"
	# and the TF32 lists ranked by the product: sorted, distinct, within the bound, and
	# leaving out no column that float64 says must be in
	assert_line --regexp "^ok: [0-9]+ TF32 lists ranked by the product$"
}

# ---- several workers: gpu:all, gpu:0,1 (kernels/docsim_split.c)

# same_divided N ARGS...: docsim -d cpu ARGS as N workers (ACCELKIT_CPU_WORKERS, the
# several-GPU division run on the CPU) prints one worker's bytes.
same_divided() {
	local n=$1
	shift
	docsim -d cpu "$@" > "$D/one" || return 1
	ACCELKIT_CPU_WORKERS=$n docsim -d cpu "$@" > "$D/many" || return 1
	cmp "$D/one" "$D/many" || return 1
	[ -s "$D/one" ] || [ "${ALLOW_EMPTY:-}" = 1 ] || { echo "no output: $*"; return 1; }
}

@test "divided over 2, 3 and 5 workers, raw-text all pairs print one worker's bytes: -k, -t, --matrix" {
	gen zipf 1500 11 "$D/z.txt"
	for n in 2 3 5; do
		for args in "-k 10" "-k 40" "-k 0 -t 0.3" "-k 5 -t 0.2" "-k 3 -t -1"; do
			run -0 same_divided $n $args "$D/z.txt"
		done
		run -0 same_divided $n --matrix "$T/corpus.txt"
		run -0 same_divided $n -k 30 -t 0 "$T/corpus.txt"
		run -0 same_divided $n --matrix -O npy -o /dev/stdout "$T/corpus.txt"
	done
	# and scikit-learn's
	ref sim "$D/z.txt" "$D/S.npy"
	ACCELKIT_CPU_WORKERS=3 docsim -d cpu -k 10 "$D/z.txt" > "$D/out"
	run ref check "$D/S.npy" "$D/out" -k 10 --all-pairs
	assert_success
}

@test "divided over workers, -q with --ids prints one worker's bytes" {
	gen zipf 1200 12 "$D/z.txt"
	awk '{ printf "doc-%d\t%s\n", NR, $0 }' "$D/z.txt" > "$D/c.txt"
	awk 'NR % 3 == 0 { printf "q%d\t%s\n", NR, $0 }' "$D/z.txt" > "$D/q.txt"
	head -n 20 "$D/q.txt" > "$D/q20.txt"
	for n in 2 3 5; do
		run -0 same_divided $n --ids -k 7 -q "$D/q.txt" "$D/c.txt"
		run -0 same_divided $n --ids -k 0 -t 0.25 -q "$D/q.txt" "$D/c.txt"
		run -0 same_divided $n --ids --matrix -q "$D/q20.txt" "$D/c.txt"
	done
	ref sim "$D/c.txt" "$D/S.npy" -q "$D/q.txt" --ids
	ACCELKIT_CPU_WORKERS=5 docsim -d cpu --ids -k 4 -q "$D/q.txt" "$D/c.txt" > "$D/out"
	run ref check "$D/S.npy" "$D/out" -k 4 --ids "$D/c.txt" "$D/q.txt"
	assert_success
}

@test "divided over workers, dense NPY and libsvm vectors print one worker's bytes" {
	gen dense 700 48 5 "$D/x.npy"
	gen zipf 800 13 "$D/z.txt"
	ref convert "$D/z.txt" libsvm "$D/z.svm"
	for n in 2 3 5; do
		run -0 same_divided $n -k 6 "$D/x.npy"
		run -0 same_divided $n -k 0 -t 0.4 "$D/x.npy"
		run -0 same_divided $n -k 3 -q "$D/x.npy" "$D/x.npy"
		run -0 same_divided $n -k 8 "$D/z.svm"
		run -0 same_divided $n --weight tfidf -k 0 -t 0.3 "$D/z.svm"
	done
	ref sim "$D/x.npy" "$D/S.npy" --format dense
	ACCELKIT_CPU_WORKERS=2 docsim -d cpu -k 6 "$D/x.npy" > "$D/out"
	run ref check "$D/S.npy" "$D/out" -k 6 --all-pairs
	assert_success
}

@test "divided over more workers than rows: the idle ones add nothing; one row has no pairs" {
	head -3 "$T/corpus.txt" > "$D/three.txt"
	head -1 "$T/corpus.txt" > "$D/one.txt"
	for n in 2 5; do
		run -0 same_divided $n -k 5 -t 0 "$D/three.txt"
		run -0 same_divided $n --matrix "$D/three.txt"
		run -0 same_divided $n -k 2 -q "$D/one.txt" "$T/corpus.txt"
		run -0 same_divided $n --matrix "$D/one.txt"
		ALLOW_EMPTY=1 run -0 same_divided $n -k 5 -t -1 "$D/one.txt"
	done
	run -0 env ACCELKIT_CPU_WORKERS=5 docsim -d cpu -k 5 -t -1 "$D/one.txt"
	assert_output ""
}

@test "-v over several workers: each one's share and busy time, the units adding up to the rows" {
	gen zipf 400 14 "$D/z.txt"
	run -0 --separate-stderr env ACCELKIT_CPU_WORKERS=3 docsim -v -d cpu -k 5 -o "$D/out" "$D/z.txt"
	assert_regex "$stderr" "docsim: 400 rows in [0-9]+ units of [0-9]+ over 3 workers"
	assert_regex "$stderr" "docsim: cpu share [0-9]+% busy [0-9.]+ s \(units [0-9]+\)"
	assert_regex "$stderr" "docsim: cpu#2 share [0-9]+% busy [0-9.]+ s \(units [0-9]+\)"
	assert_regex "$stderr" "docsim: cpu#3 share [0-9]+% busy [0-9.]+ s \(units [0-9]+\)"
	# the units handed out, and their rows, are the plan's
	local units step got pct
	units=$(sed -n 's/^docsim: 400 rows in \([0-9]*\) units of \([0-9]*\) over 3 workers$/\1/p' <<< "$stderr")
	step=$(sed -n 's/^docsim: 400 rows in \([0-9]*\) units of \([0-9]*\) over 3 workers$/\2/p' <<< "$stderr")
	[ "$units" -eq $(( (400 + step - 1) / step )) ]
	got=$(sed -n 's/^docsim: cpu[#0-9]* share .*(units \([0-9]*\))$/\1/p' <<< "$stderr" | paste -sd+)
	assert_equal "$(( got ))" "$units"
	pct=$(sed -n 's/^docsim: cpu[#0-9]* share \([0-9]*\)%.*/\1/p' <<< "$stderr" | paste -sd+)
	(( pct >= 98 && pct <= 102 ))
}

# several_gpus SPEC: docsim on SPEC prints -d gpu's bytes: all pairs (-k, -t, --matrix)
# and queries, text, libsvm and dense, in one tile (one unit: its worker's lists are
# merged with the idle one's) and, under --max-device-mem, in many tiles and units;
# and scikit-learn's scores.
several_gpus() {
	gen zipf 3000 13 "$D/z.txt"
	head -n 500 "$D/z.txt" > "$D/q.txt"
	awk '{ printf "doc-%d\t%s\n", NR, $0 }' "$D/z.txt" > "$D/c.txt"
	awk 'NR % 3 == 0 { printf "q%d\t%s\n", NR, $0 }' "$D/z.txt" > "$D/qi.txt"
	gen dense 5000 96 4 "$D/x.npy"
	gen dense 700 48 5 "$D/m.npy"
	ref convert "$D/z.txt" libsvm "$D/z.svm"
	for bound in "" "--max-device-mem 4M"; do
		for args in "-k 10 $D/z.txt" "-k 20 $D/z.txt" "-k 0 -t 0.3 $D/z.txt" \
		    "--matrix $T/corpus.txt" "-k 10 -q $D/q.txt $D/z.txt" \
		    "--ids -k 5 -q $D/qi.txt $D/c.txt" "-k 10 $D/x.npy" "-k 0 -t 0.3 $D/x.npy" \
		    "--matrix -O npy -o /dev/stdout $D/m.npy" "--precision single -k 10 $D/x.npy" \
		    "-k 8 $D/z.svm" "-k 3 -t 0 $T/corpus.txt" "-k 2 $T/corpus.txt"; do
			docsim -d gpu $bound $args > "$D/one"
			docsim -d "$1" $bound $args > "$D/many"
			run cmp "$D/one" "$D/many"
			assert_success
		done
	done
	ref sim "$D/x.npy" "$D/S.npy" --format dense
	docsim -d "$1" --max-device-mem 4M -k 6 "$D/x.npy" > "$D/out"
	run ref check "$D/S.npy" "$D/out" -k 6 --all-pairs
	assert_success
}

@test "one GPU listed twice (gpu:0,0) gives one GPU's bytes, and -v each worker's share" {
	require_gpu
	several_gpus gpu:0,0
	gen dense 5000 96 4 "$D/x.npy"
	run -0 --separate-stderr docsim -v -d gpu:0,0 --max-device-mem 4M -k 5 -o "$D/v.txt" "$D/x.npy"
	assert_regex "$stderr" "docsim: 5000 rows in [0-9]+ units of [0-9]+ over 2 workers"
	assert_regex "$stderr" "docsim: gpu:0 share [0-9]+% busy [0-9.]+ s \(units [0-9]+\)"
	assert_regex "$stderr" "docsim: gpu:0#2 share [0-9]+% busy [0-9.]+ s \(units [0-9]+\)"
}

# Issue 34: a worker's TF32 list whose gap is under twice the bound is rechecked against
# every column it holds (kernels/docsim_exact.cu), so it lists pairs that another worker
# scored and lists too; the merge (ds_merge_lists) takes each candidate once. It shows
# with two units or more (rows beyond a tile's 4096) and rows rechecked: Gaussian rows
# of 1024 at 20,000 and -k 32 (a few in a thousand), clusters (every row, by the float32
# GEMM) and near-copies (crowded). The 5,000 x 96 rows above recheck none.
# divided_lists SPEC K X.npy: docsim -d SPEC -k K on X prints each row's K neighbours
# once, sorted, numpy's on sampled rows, and -d gpu's bytes; R: the rows its workers'
# -v say they rechecked.
divided_lists() {
	local spec=$1 k=$2 x=$3 dup c
	run -0 --separate-stderr docsim -v -d "$spec" -k "$k" "$x"
	printf '%s\n' "$output" > "$D/many"
	R=0
	while read -r c; do
		R=$((R + c))
	done < <(sed -n 's/.* \([0-9]*\) rows (a gap under twice the TF32 bound, .*/\1/p' <<< "$stderr")
	dup=$(cut -f 1,2 "$D/many" | sort | uniq -d | wc -l)
	[ "$dup" -eq 0 ] || fail "docsim -d $spec -k $k $x: $dup (query, neighbour) pairs listed twice"
	run -0 ref rows "$x" "$D/many" -k "$k" --sample 200
	docsim -d gpu -k "$k" "$x" > "$D/one"
	cmp "$D/one" "$D/many" || fail "docsim -d $spec -k $k $x: not -d gpu's bytes"
}

@test "divided over two workers on one GPU, rechecked rows list each neighbour once: 20,000 x 1024 at -k 32 and -k 10, clusters and near-copies" {
	require_gpu
	py "$ACCELKIT_ROOT/bench/docsim_peers.py" gen 20000 1024 1 "$D/x.npy"
	gen clusters 12000 64 6 "$D/cl.npy"
	gen adversarial 12000 100 5 "$D/adv.npy"
	divided_lists gpu:0,0 32 "$D/x.npy"
	divided_lists gpu:0,0 10 "$D/x.npy"
	divided_lists gpu:0,0 10 "$D/cl.npy"
	[ "$R" -ge 1000 ] || fail "clusters: only $R rows rechecked"
	divided_lists gpu:0,0 32 "$D/cl.npy"
	divided_lists gpu:0,0 10 "$D/adv.npy"
	[ "$R" -ge 1 ] || fail "near-copies: no row rechecked"
}

@test "gpu:all and gpu:1,0 give one GPU's bytes" {
	require_gpus 2
	several_gpus gpu:all
	several_gpus gpu:1,0
	gen dense 5000 96 4 "$D/x.npy"
	run -0 --separate-stderr docsim -v -d gpu:all --max-device-mem 4M -k 5 -o "$D/v.txt" "$D/x.npy"
	assert_regex "$stderr" "docsim: gpu:1 share [0-9]+% busy [0-9.]+ s \(units [0-9]+\)"
	gen clusters 12000 64 6 "$D/cl.npy"
	divided_lists gpu:all 10 "$D/cl.npy"
	[ "$R" -ge 1000 ] || fail "clusters: only $R rows rechecked"
}

@test "-d gpu in a build without CUDA says so, -d cpu always works" {
	run docsim -d cpu -k 1 "$T/corpus.txt"
	assert_success
	assert_line --index 0 "1	7	1.000000"
	if ! on_gpu && ! docsim --list-devices | grep -q '^gpu'; then
		run -1 docsim -d gpu "$T/corpus.txt"
		assert_output --regexp "not compiled in|no usable CUDA GPU"
	fi
}

@test "-d cpu runs in 200 MB of address space" {
	if [ "${SANITIZE:-0}" = 1 ]; then
		skip "AddressSanitizer's shadow memory does not fit under ulimit -v"
	fi
	ref sim "$T/corpus.txt" "$D/S.npy"
	# -j 2: every OpenMP thread's stack counts against the limit too
	run sh -c 'ulimit -v 200000 && exec docsim -d cpu -j 2 -k 5 "$1"' sh "$T/corpus.txt"
	assert_success
	printf '%s\n' "$output" > "$D/out"
	run ref check "$D/S.npy" "$D/out" -k 5 --all-pairs
	assert_output "ok: 63 lines"
}

@test "docsim neither links nor names cuBLAS: its GEMMs are its own" {
	run ldd "$ACCELKIT_BUILD/bin/docsim"
	assert_success
	assert_output --partial "libc.so"
	refute_output --partial "libcublas"
	# no library name to dlopen, no cuBLAS symbol
	run -0 strings "$ACCELKIT_BUILD/bin/docsim"
	assert_output --partial "docsim"
	refute_output --regexp "[cC][uU][bB][lL][aA][sS]"
}

@test "-v names the row of the tuning table chosen for the device" {
	run --separate-stderr docsim -v -d cpu -k 1 "$T/corpus.txt"
	assert_success
	[[ "$stderr" == *"docsim: tuning: cpu (reasoned, not measured"* ]]
	if on_gpu; then
		run --separate-stderr docsim -v -d gpu -k 1 "$T/corpus.txt"
		assert_success
		[[ "$stderr" == *"docsim: tuning: "* && "$stderr" != *"tuning: cpu"* ]]
	fi
}

@test "every row of the tuning table passes its legality checks, and rows that break them are rejected" {
	run -0 tunerows docsim
	assert_line --index 0 "docsim: 3 rows pass"
	assert_line --index 1 --partial "broken tile_rows = 0: rejected: "
	refute_output --partial ": passes"
	assert_equal "$(grep -c ': rejected: ' <<< "$output")" 9
}

@test "auto runs testdata on the CPU, without waiting for CUDA, and prints what -d cpu prints" {
	docsim -d cpu -k 5 "$T/corpus.txt" > "$D/cpu"
	run --separate-stderr docsim -d auto -v -k 5 -o "$D/auto" "$T/corpus.txt"
	assert_success
	[[ "$stderr" == *"device: cpu"* ]]
	if on_gpu; then
		# the two estimates, and no wait for the device's start
		[[ "$stderr" == *"auto: cpu, estimated "*" multiply-adds"*" on the GPU"* ]]
		[[ "$stderr" != *"device start"* ]]
	else
		[[ "$stderr" == *"no usable GPU"* || "$stderr" == *"auto: cpu"* ]]
	fi
	run cmp "$D/cpu" "$D/auto"
	assert_success
}

@test "auto takes the GPU for a dense input whose work pays for its start" {
	require_gpu
	# 10000 x 1000 all pairs: 1e11 multiply-adds, over a second on 16 CPU threads
	gen dense 10000 1000 2 "$D/x.npy"
	run --separate-stderr docsim -d auto -v -k 1 -o "$D/auto" "$D/x.npy"
	assert_success
	[[ "$stderr" == *"auto: gpu, estimated "* ]]
	[[ "$stderr" == *"device: gpu:"* ]]
	docsim -d cpu -k 1 -o "$D/cpu" "$D/x.npy"
	run cmp "$D/cpu" "$D/auto"
	assert_success
}

@test "--list-devices lists the CPU" {
	run docsim --list-devices
	assert_success
	assert_line --index 0 --regexp '^cpu	'
}

# ---- the command line

@test "usage errors exit 2 with a hint" {
	run -2 docsim --bogus "$T/corpus.txt"
	assert_line --index 1 "Try 'docsim --help' for more information."
	run -2 docsim -k x "$T/corpus.txt"
	assert_output --partial "invalid value for --top: 'x'"
	run -2 docsim --weight idf "$T/corpus.txt"
	assert_output --partial "expected one of: tfidf, tf, binary, none"
	run -2 docsim "$T/corpus.txt" "$T/queries.txt"
	assert_output --partial "one CORPUS at most"
	run -2 docsim -q - -
	assert_output --partial "both be standard input"
}

@test "text-only options with vector input are usage errors" {
	printf '1 2\n3 4\n' > "$D/x.txt"
	run -2 docsim --stop-words "$T/stop.txt" "$D/x.txt"
	assert_output --partial "apply to text input only"
}

@test "--help prints the synopsis on stdout and --version the version" {
	run --separate-stderr docsim --help
	assert_success
	assert_line --index 0 "usage: docsim [options] -q QUERIES [CORPUS]"
	assert_equal "$stderr" ""
	run docsim --version
	assert_output --regexp '^docsim \(accelkit\) [0-9.]+$'
}

@test "a missing corpus is an error naming it" {
	run -1 docsim "$D/nope.txt"
	assert_output "docsim: $D/nope.txt: No such file or directory"
}

@test "the corpus comes from standard input when absent or -" {
	docsim -k 2 "$T/corpus.txt" > "$D/want"
	run docsim -k 2 < "$T/corpus.txt"
	assert_output "$(cat "$D/want")"
	run docsim -k 2 - < "$T/corpus.txt"
	assert_output "$(cat "$D/want")"
	run docsim -k 2 -q "$T/queries.txt" < "$T/corpus.txt"
	assert_output "$(docsim -k 2 -q "$T/queries.txt" "$T/corpus.txt")"
}

@test "CRLF line endings read like LF" {
	docsim -k 3 "$T/corpus.txt" > "$D/want"
	sed 's/$/\r/' "$T/corpus.txt" > "$D/crlf.txt"
	run docsim -k 3 "$D/crlf.txt"
	assert_output "$(cat "$D/want")"
}

@test "a full output device is an error, exit 1" {
	run -1 --separate-stderr sh -c 'exec docsim -d cpu -k 5 "$1" > /dev/full' sh "$T/corpus.txt"
	assert_equal "$stderr" "docsim: write error on standard output: No space left on device"
}

@test "-o writes the result to a file and nothing to stdout" {
	run docsim -k 1 -o "$D/res" "$T/corpus.txt"
	assert_success
	assert_output ""
	run head -n 1 "$D/res"
	assert_output "1	7	1.000000"
}

@test "-k larger than the corpus lists every related document, with -t -1 every other one" {
	printf 'alpha beta\nbeta gamma\ngamma delta\n' > "$D/c.txt"
	run docsim -k 100 "$D/c.txt"
	assert_success
	assert_equal "${#lines[@]}" 4
	refute_line --regexp '^1	3	'
	run docsim -k 100 -t -1 "$D/c.txt"
	assert_success
	assert_equal "${#lines[@]}" 6
	assert_line "1	3	0.000000"
}

@test "a corpus of one document has no neighbours and empty input gives no output" {
	printf 'just one document\n' > "$D/c.txt"
	run docsim "$D/c.txt"
	assert_success
	assert_output ""
	run docsim < /dev/null
	assert_success
	assert_output ""
}

# ---- man page EXAMPLES (man/docsim.1)

@test "EXAMPLES: the ten nearest neighbours of every line of a text file" {
	ref sim "$T/corpus.txt" "$D/S.npy"
	docsim "$T/corpus.txt" > "$D/out"
	run ref check "$D/S.npy" "$D/out" -k 10 --all-pairs
	assert_output "ok: 68 lines"
}

@test "EXAMPLES: five neighbours of every line, related or not, as NearestNeighbors gives them" {
	docsim -k 5 -t -1 "$T/corpus.txt" > "$D/out"
	run ref nn "$T/corpus.txt" "$D/out" -k 5
	assert_success
	run awk 'END { print NR }' "$D/out"
	assert_output 125
}

@test "EXAMPLES: near-duplicate pairs above 0.9" {
	run docsim -k 0 -t 0.9 "$T/corpus.txt"
	assert_output "$(printf '1\t7\t1.000000\n8\t20\t1.000000')"
}

@test "EXAMPLES: the top 3 documents for each query, by id" {
	awk '{ printf "doc-%d\t%s\n", NR, $0 }' "$T/corpus.txt" > "$D/c.txt"
	run docsim --ids -k 3 -q <(printf 'q1\tbrown dog\n') "$D/c.txt"
	assert_success
	assert_line --index 0 --regexp '^q1	doc-(2|24)	0\.[0-9]{6}$'
	assert_equal "${#lines[@]}" 3
}

@test "EXAMPLES: the full similarity matrix of dense vectors as NPY" {
	printf '1 0 0\n1 1 0\n0 0 2\n' > "$D/v.txt"
	docsim --matrix -o "$D/sim.npy" "$D/v.txt"
	run py -c "import numpy as np; print(np.round(np.load('$D/sim.npy').astype(float), 6).tolist())"
	assert_output "[[1.0, 0.707107, 0.0], [0.707107, 1.0, 0.0], [0.0, 0.0, 1.0]]"
}
