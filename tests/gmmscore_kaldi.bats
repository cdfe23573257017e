#!/usr/bin/env bats
# gmmscore_kaldi: Kaldi's binary archives, compressed matrices, .scp files, rspecifiers
# and -O ark, against archives written and read by tests/ref/kaldi_io.py (numpy, from
# Kaldi's source) and scores from numpy (tests/ref/gmmscore_ref.py).

bats_require_minimum_version 1.5.0

setup_file() {
	load helpers
	export D="$BATS_FILE_TMPDIR/fit"
	mkdir -p "$D"
	py "$REF/gmmscore_ref.py" make "$D" --models 8 --dim 6 --frames 240
	py "$REF/gmmscore_ref.py" scores "$D" "$D/feats.npy" "$D/sum.npy"
	# five utterances, one empty, in every format; each with an .scp of its offsets
	export LENS=60,1,0,100,79 KEYS=u0:60,u1:1,u2:0,u3:100,u4:79
	for f in fm dm cm cm2 cm3 text mixed; do
		py "$REF/kaldi_io.py" write "$D/$f.ark" "$D/feats.npy" $f --lengths $LENS \
		    --scp "$D/$f.scp"
	done
	# the text archive as gmmscore has always read it, and its scores
	gmmscore -m "$D/native.txt" --all -o "$D/text.out" "$D/text.ark"
	# a small archive whose bytes the error tests name: u0 2 rows, u1 3 rows, 6 columns:
	# u0's "\0B" at byte 3, its rows at 18; u1's key at 66, "\0B" at 69, token at 71,
	# row count's size byte at 74, rows at 84 (24 bytes each), the end at 156
	py -c 'import numpy as np; np.save("'"$D"'/small.npy", np.load("'"$D"'/feats.npy")[:5])'
	py "$REF/kaldi_io.py" write "$D/small.ark" "$D/small.npy" fm --lengths 2,3
}

setup() {
	load helpers
	T=$BATS_TEST_TMPDIR
	G=$TESTDATA/gmmscore
}

kio() {
	py "$REF/kaldi_io.py" "$@"
}

# patch FILE OUT OFFSET BYTES: a copy of FILE with BYTES (a Python bytes literal) at OFFSET
patch() {
	py -c 'import sys; d = open(sys.argv[1], "rb").read(); o = int(sys.argv[3]); b = eval(sys.argv[4]); open(sys.argv[2], "wb").write(d[:o] + b + d[o + len(b):])' "$@"
}

@test "a binary FM archive scores as the same frames as a text archive, and as numpy" {
	run -0 gmmscore -m "$D/native.txt" --all -o "$T/fm.out" "$D/fm.ark"
	cmp "$T/fm.out" "$D/text.out"
	run -0 py "$REF/gmmscore_ref.py" check all "$T/fm.out" "$D/sum.npy" --keys $KEYS
}

@test "a DM archive (float64) reads as the float32 frames it holds" {
	run -0 gmmscore -m "$D/native.txt" --all -o "$T/dm.out" "$D/dm.ark"
	cmp "$T/dm.out" "$D/text.out"
}

@test "CM, CM2 and CM3 decode to the reference decoder's floats exactly" {
	for f in cm cm2 cm3; do
		# the Python decoder's floats, as an FM archive of the same utterances
		kio decode "$D/$f.ark" "$T/$f.npy"
		kio write "$T/$f.fm.ark" "$T/$f.npy" fm --lengths $LENS
		gmmscore -m "$D/native.txt" --all -o "$T/$f.want" "$T/$f.fm.ark"
		run -0 gmmscore -m "$D/native.txt" --all -o "$T/$f.out" "$D/$f.ark"
		cmp "$T/$f.out" "$T/$f.want"
	done
}

@test "compressed features stay within the compression's error of the originals" {
	kio decode "$D/cm2.ark" "$T/cm2.npy"
	kio decode "$D/cm3.ark" "$T/cm3.npy"
	run -0 py -c '
import numpy as np, sys
x = np.load(sys.argv[1]).astype(np.float64)
r = x.max() - x.min()
for f, tol in (("cm2", 1 / 65535), ("cm3", 1 / 255)):
    d = np.load(sys.argv[2] + "/" + f + ".npy")
    e = np.abs(d - x).max()
    assert e <= r * tol * 0.51, (f, e, r * tol)
print("ok")
' "$D/feats.npy" "$T"
	assert_output ok
}

@test "an archive of every kind of matrix, text ones too, reads object by object" {
	kio decode "$D/mixed.ark" "$T/mixed.npy"
	kio write "$T/mixed.fm.ark" "$T/mixed.npy" fm --lengths $LENS
	gmmscore -m "$D/native.txt" --all -o "$T/want" "$T/mixed.fm.ark"
	run -0 gmmscore -m "$D/native.txt" --all -o "$T/out" "$D/mixed.ark"
	cmp "$T/out" "$T/want"
}

@test "text and binary archives are told apart by their bytes, not their names" {
	cp "$D/fm.ark" "$T/feats.txt"
	cp "$D/text.ark" "$T/feats.bin"
	run -0 gmmscore -m "$D/native.txt" --all -o "$T/a" "$T/feats.txt"
	run -0 gmmscore -m "$D/native.txt" --all -o "$T/b" "$T/feats.bin"
	cmp "$T/a" "$D/text.out"
	cmp "$T/b" "$D/text.out"
	run -0 gmmscore -m "$D/native.txt" -f ark --all -o "$T/c" "$T/feats.txt"
	cmp "$T/c" "$D/text.out"
}

@test "a binary archive on standard input, as ark:- and as -" {
	run -0 --separate-stderr gmmscore -m "$D/native.txt" --all ark:- < "$D/cm2.ark"
	gmmscore -m "$D/native.txt" --all "$D/cm2.ark" > "$T/want"
	printf '%s\n' "$output" | cmp - "$T/want"
	run -0 --separate-stderr sh -c 'cat "$1" | gmmscore -m "$2" --all' sh "$D/cm2.ark" "$D/native.txt"
	printf '%s\n' "$output" | cmp - "$T/want"
}

@test "an .scp file's offsets read the same utterances as the archive, in any kind" {
	for f in fm cm cm3 text mixed; do
		gmmscore -m "$D/native.txt" --all -o "$T/want" "$D/$f.ark"
		run -0 gmmscore -m "$D/native.txt" --all -o "$T/out" "scp:$D/$f.scp"
		cmp "$T/out" "$T/want"
	done
}

@test "an .scp file is read in its own order, across archives and single-matrix files" {
	# u3 from the CM3 archive, u0 from the FM one, u1 from a file of one matrix
	grep '^u3 ' "$D/cm3.scp" > "$T/x.scp"
	grep '^u0 ' "$D/fm.scp" >> "$T/x.scp"
	py -c 'import numpy as np; np.save("'"$T"'/one.npy", np.load("'"$D"'/feats.npy")[60:61])'
	kio write "$T/one.ark" "$T/one.npy" fm
	tail -c +4 "$T/one.ark" > "$T/one.mat"	# "u0 " cut off: the matrix alone
	printf 'u1 %s\n' "$T/one.mat" >> "$T/x.scp"
	run -0 gmmscore -m "$D/native.txt" --all -o "$T/out" "scp:$T/x.scp"
	run -0 kio keys "$T/out"
	assert_output - <<-'EOF'
	u3 100x8
	u0 60x8
	u1 1x8
	EOF
	# the same scores as those utterances in the runs over their archives
	gmmscore -m "$D/native.txt" --all -o "$T/cm3.out" "$D/cm3.ark"
	run -0 py -c '
import sys
sys.path.insert(0, sys.argv[1])
import kaldi_io as k, numpy as np
got = dict(k.read_archive(sys.argv[2]))
fm = dict(k.read_archive(sys.argv[3]))
cm3 = dict(k.read_archive(sys.argv[4]))
assert np.array_equal(got["u0"], fm["u0"]) and np.array_equal(got["u1"], fm["u1"])
assert np.array_equal(got["u3"], cm3["u3"])
print("ok")' "$REF" "$T/out" "$D/text.out" "$T/cm3.out"
	assert_output ok
}

@test "rspecifiers take Kaldi's options; other names with a colon are files" {
	for spec in ark,s,cs: ark,o: b,ark: ark,t,bg: ark,np,ns,ncs:; do
		run -0 gmmscore -m "$D/native.txt" --all -o "$T/out" "$spec$D/fm.ark"
		cmp "$T/out" "$D/text.out"
	done
	run -0 gmmscore -m "$D/native.txt" --all -o "$T/out" "scp,s,cs:$D/fm.scp"
	cmp "$T/out" "$D/text.out"
	# a text archive as ark:-, an .scp as scp:-
	run -0 sh -c 'gmmscore -m "$1" --all ark:- < "$2" > "$3"' sh "$D/native.txt" "$D/text.ark" "$T/out"
	cmp "$T/out" "$D/text.out"
	run -0 sh -c 'gmmscore -m "$1" --all scp:- < "$2" > "$3"' sh "$D/native.txt" "$D/fm.scp" "$T/out"
	cmp "$T/out" "$D/text.out"
	cp "$D/fm.ark" "$T/feats:1"
	run -0 gmmscore -m "$D/native.txt" --all -o "$T/out" "$T/feats:1"
	cmp "$T/out" "$D/text.out"
	run -2 --separate-stderr gmmscore -m "$D/native.txt" "ark,x:$D/fm.ark"
	[[ $stderr == *"'ark,x:$D/fm.ark': not an rspecifier Kaldi reads"* ]]
	[[ $stderr == *"Try 'gmmscore --help'"* ]]
	run -2 --separate-stderr gmmscore -m "$D/native.txt" "ark,scp:$D/fm.ark"
	[[ $stderr == *"not an rspecifier Kaldi reads"* ]]
}

@test "scp,p skips entries that cannot be read, with a warning; without p they are errors" {
	grep -v '^u3 ' "$D/fm.scp" > "$T/ok.scp"
	gmmscore -m "$D/native.txt" --all -o "$T/want" "scp:$T/ok.scp"
	sed -e 's|^u3 .*|u3 '"$D"'/fm.ark:0|' "$D/fm.scp" > "$T/bad.scp"
	run -0 --separate-stderr gmmscore -m "$D/native.txt" --all -o "$T/out" "scp,p:$T/bad.scp"
	cmp "$T/out" "$T/want"
	[[ $stderr == *"fm.ark: byte 0: utterance 'u3': expected '[' to start a text matrix"*"skipped (scp,p)"* ]]
	run -1 --separate-stderr gmmscore -m "$D/native.txt" --all -o "$T/out2" "scp:$T/bad.scp"
	[[ $stderr == "gmmscore: $D/fm.ark: byte 0: utterance 'u3': expected '[' to start a text matrix"* ]]
	[ ! -e "$T/out2" ]
	sed -e 's|^u3 .*|u3 '"$T"'/missing.ark:15|' "$D/fm.scp" > "$T/gone.scp"
	run -0 --separate-stderr gmmscore -m "$D/native.txt" --all -o "$T/out" "scp,p:$T/gone.scp"
	cmp "$T/out" "$T/want"
	[[ $stderr == *"missing.ark: byte 15: utterance 'u3': No such file or directory; skipped (scp,p)"* ]]
	run -1 --separate-stderr gmmscore -m "$D/native.txt" --all "scp:$T/gone.scp"
	[[ $stderr == *"missing.ark: byte 15: utterance 'u3': No such file or directory" ]]
	sed -e 's|^u3 .*|u3 '"$D"'/fm.ark:999999|' "$D/fm.scp" > "$T/far.scp"
	run -1 --separate-stderr gmmscore -m "$D/native.txt" --all "scp:$T/far.scp"
	[[ $stderr == *"utterance 'u3': offset 999999 is past the end of the file"* ]]
}

@test "ark,p ends the archive at what cannot be read, keeping what came before" {
	head -c 150 "$D/small.ark" > "$T/t.ark"
	head -c 66 "$D/small.ark" > "$T/u0.ark"
	gmmscore -m "$D/native.txt" --all -o "$T/want" "$T/u0.ark"
	run -0 --separate-stderr gmmscore -m "$D/native.txt" --all -o "$T/out" "ark,p:$T/t.ark"
	cmp "$T/out" "$T/want"
	[[ $stderr == *"t.ark: byte 84: utterance 'u1': FM header promises 3 x 6 values (72 bytes), 66 bytes follow; the rest of the archive is not read (ark,p)"* ]]
	# on a pipe too, where the size is not known before the data ends
	run -0 --separate-stderr gmmscore -m "$D/native.txt" --all -o "$T/out" ark,p:- < <(cat "$T/t.ark")
	cmp "$T/out" "$T/want"
	[[ $stderr == *"(standard input): byte 150: utterance 'u1': the FM data ends after 66 of its 72 bytes; the rest of the archive is not read (ark,p)"* ]]
}

@test "truncated and corrupt binary archives are errors naming the file, key and byte" {
	head -c 150 "$D/small.ark" > "$T/t.ark"
	run -1 --separate-stderr gmmscore -m "$D/native.txt" --all -o "$T/o" "$T/t.ark"
	assert_equal "$stderr" "gmmscore: $T/t.ark: byte 84: utterance 'u1': FM header promises 3 x 6 values (72 bytes), 66 bytes follow"
	[ ! -e "$T/o" ]
	run -1 --separate-stderr gmmscore -m "$D/native.txt" --all ark:- < <(cat "$T/t.ark")
	assert_equal "$stderr" "gmmscore: (standard input): byte 150: utterance 'u1': the FM data ends in row 3 of the 3 its header promises"
	patch "$D/small.ark" "$T/tok.ark" 71 "b'XM'"
	run -1 --separate-stderr gmmscore -m "$D/native.txt" "$T/tok.ark"
	assert_equal "$stderr" "gmmscore: $T/tok.ark: byte 71: utterance 'u1': expected a matrix token (FM, DM, CM, CM2 or CM3), found 'XM'"
	patch "$D/small.ark" "$T/sz.ark" 74 "b'\x08'"
	run -1 --separate-stderr gmmscore -m "$D/native.txt" "$T/sz.ark"
	assert_equal "$stderr" "gmmscore: $T/sz.ark: byte 74: utterance 'u1': expected the size byte 4 of an int32 (row count), found 8"
	patch "$D/small.ark" "$T/neg.ark" 75 "b'\xff\xff\xff\xff'"
	run -1 --separate-stderr gmmscore -m "$D/native.txt" "$T/neg.ark"
	assert_equal "$stderr" "gmmscore: $T/neg.ark: byte 75: utterance 'u1': negative row count: -1"
	patch "$D/small.ark" "$T/nan.ark" 116 "b'\x00\x00\xc0\x7f'"
	run -1 --separate-stderr gmmscore -m "$D/native.txt" "$T/nan.ark"
	assert_equal "$stderr" "gmmscore: $T/nan.ark: byte 116: utterance 'u1': NaN in the FM data (row 2, column 3)"
	patch "$D/small.ark" "$T/big.ark" 75 "b'\xff\xff\xff\x7f'"
	run -1 --separate-stderr gmmscore -m "$D/native.txt" "$T/big.ark"
	assert_equal "$stderr" "gmmscore: $T/big.ark: byte 84: utterance 'u1': FM header promises 2147483647 x 6 values (51539607528 bytes), 72 bytes follow"
	head -c 67 "$D/small.ark" > "$T/key.ark"
	printf 'u1' >> "$T/key.ark"
	run -1 --separate-stderr gmmscore -m "$D/native.txt" "$T/key.ark"
	assert_equal "$stderr" "gmmscore: $T/key.ark: byte 66: the archive ends after the key 'uu1'"
	head -c 300 "$D/cm.ark" > "$T/cm.ark"
	run -1 --separate-stderr gmmscore -m "$D/native.txt" ark:- < <(cat "$T/cm.ark")
	[[ $stderr == "gmmscore: (standard input): byte 300: utterance 'u"*"': the CM data ends after "* ]]
}

@test "-O ark writes an FM matrix of frames x models an utterance, as gmm-compute-likes" {
	run -0 gmmscore -m "$D/native.txt" -O ark -o "$T/likes.ark" "scp:$D/cm2.scp"
	gmmscore -m "$D/native.txt" --all -o "$T/likes.txt" "$D/cm2.ark"
	run -0 kio compare "$T/likes.ark" "$T/likes.txt" 0
	assert_output "ok 5 matrices"
	run -0 kio keys "$T/likes.ark"
	assert_output - <<-'EOF'
	u0 60x8
	u1 1x8
	u2 0x0
	u3 100x8
	u4 79x8
	EOF
	# against numpy's scores of the original frames (FM: the frames themselves)
	run -0 gmmscore -m "$D/native.txt" -O ark "$D/fm.ark" -o "$T/fm.likes"
	run -0 kio compare "$T/fm.likes" x 2e-5 --npy "$D/sum.npy" --lengths $LENS
	# the bytes of one entry, as Kaldi's Matrix<float>::Write puts them
	# "u0 \0BFM " then int32 2 rows and 8 columns, each the size byte 4 and 4 bytes
	run -0 sh -c 'gmmscore -m "$1" -O ark "$2" | head -c 18 | od -An -tx1 -w18' sh \
	    "$D/native.txt" "$D/small.ark"
	assert_output " 75 30 20 00 42 46 4d 20 04 02 00 00 00 04 08 00 00 00"
}

@test "-O ark goes to standard output and through a pipe, and reads back as features" {
	run -0 sh -c 'gmmscore -m "$1" -O ark "$2" | cat > "$3"' sh "$D/native.txt" "$D/fm.ark" "$T/a.ark"
	run -0 kio compare "$T/a.ark" "$D/text.out" 0
	# an archive gmmscore wrote is an archive gmmscore reads (8 models: 8 columns)
	run -0 gmmscore -m "$D/native.txt" --dims 6 --all -o "$T/b" "$T/a.ark"
	run -0 sh -c 'gmmscore -m "$1" --dims 6 --all ark:- < "$2"' sh "$D/native.txt" "$T/a.ark"
}

@test "-O ark holds every score: --top is a usage error, --all is implied" {
	run -2 --separate-stderr gmmscore -m "$D/native.txt" -O ark --top 2 "$D/fm.ark"
	[[ $stderr == *"-O ark holds every score (as --all): --top does not apply"* ]]
	run -0 gmmscore -m "$D/native.txt" --all -O ark -o "$T/a" "$D/fm.ark"
	run -0 gmmscore -m "$D/native.txt" -O ark -o "$T/b" "$D/fm.ark"
	cmp "$T/a" "$T/b"
	run -2 --separate-stderr gmmscore -m "$D/native.txt" -O arc "$D/fm.ark"
	[[ $stderr == *"--output-format"* ]]
}

@test "-v names the kind of archive read" {
	run -0 --separate-stderr gmmscore -v -m "$D/native.txt" -o "$T/o" "ark:$D/cm.ark" "scp:$D/fm.scp"
	[[ $stderr == *"features: $D/cm.ark (ark)"* ]]
	[[ $stderr == *"features: $D/fm.scp (scp)"* ]]
}

@test "example: scores of compressed features named by an .scp, as a binary archive" {
	kio write "$T/feats.ark" "$D/feats.npy" cm --lengths $LENS --scp "$T/feats.scp"
	run -0 gmmscore -m "$D/kaldi.mdl" -O ark -o "$T/loglikes.ark" "scp:$T/feats.scp"
	run -0 kio keys "$T/loglikes.ark"
	assert_line "u3 100x8"
}

@test "ark,p reads a text archive object by object and stops at a bad matrix" {
	# the text archive with u3's second row cut short: u0 to u2 are scored
	awk '/^u3 / { bad = 1 } bad && !done && /^  / && ++n == 2 { $0 = "  1 2"; done = 1 } { print }' \
	    "$D/text.ark" > "$T/bad.ark"
	run -0 --separate-stderr gmmscore -m "$D/native.txt" --all -o "$T/out" "ark,p:$T/bad.ark"
	[[ $stderr == *"utterance 'u3': a row of 2 numbers in a text matrix of 6 columns; the rest of the archive is not read (ark,p)"* ]]
	run -0 kio keys "$T/out"
	assert_output - <<-'EOF2'
	u0 60x8
	u1 1x8
	u2 0x0
	EOF2
	run -1 --separate-stderr gmmscore -m "$D/native.txt" --all "$T/bad.ark"
	[[ $stderr == *"bad.ark:"*"row has 2 columns, expected 6"* ]]
}

@test "an .scp entry's row and column ranges ([R1:R2,C1:C2]) cut its matrix, as Kaldi's" {
	u3=$(awk '$1 == "u3" { print $2 }' "$D/cm.scp")
	printf 'a %s[10:19]\nb %s[:,2:4]\nc %s[98:101]\nd %s[0:1,3:5]\n' "$u3" "$u3" "$u3" "$u3" > "$T/r.scp"
	run -0 gmmscore -m "$D/native.txt" --dims 3 --all -o "$T/out" "scp:$T/r.scp"
	# the reference: the Python decoder's u3, cut by numpy, as an FM archive
	run -0 py -c '
import sys
sys.path.insert(0, sys.argv[1])
import kaldi_io as k
u3 = dict(k.read_archive(sys.argv[2]))["u3"]
k.write_archive(sys.argv[3], [("a", u3[10:20]), ("b", u3[:, 2:5]), ("c", u3[98:100]),
                              ("d", u3[0:2, 3:6])], ["fm"] * 4)' "$REF" "$D/cm.ark" "$T/want.ark"
	gmmscore -m "$D/native.txt" --dims 3 --all -o "$T/want" "$T/want.ark"
	cmp "$T/out" "$T/want"
	run -0 kio keys "$T/out"
	assert_output - <<-'EOF2'
	a 10x8
	b 100x8
	c 2x8
	d 2x8
	EOF2
	printf 'x %s[100:101]\n' "$u3" > "$T/far.scp"
	run -1 --separate-stderr gmmscore -m "$D/native.txt" "scp:$T/far.scp"
	[[ $stderr == *"cm.ark: byte ${u3##*:}: utterance 'x': range [100:101,0:5] is outside the matrix of 100 x 6" ]]
	printf 'x %s[1-2]\n' "$u3" > "$T/bad.scp"
	run -1 --separate-stderr gmmscore -m "$D/native.txt" "scp:$T/bad.scp"
	[[ $stderr == *"bad.scp:1: 'x': '[1-2]' is not a range Kaldi reads"* ]]
}
