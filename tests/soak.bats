#!/usr/bin/env bats
# soak: each program over an input of 5 to 8 MB, more than the readers' first buffer
# (4 MiB) and than thousands of chunks (ACCELKIT_CHUNK_BYTES=3001), with the least
# --max-device-mem the device allows: the bytes of the in-memory run, which match
# the program's independent reference (tests/ref/). The same input through a pipe in
# random pieces, and a smaller one a byte at a time, give the same bytes again.
# Under compute-sanitizer (make check-gpu SANITIZE=cuda) the inputs are a 64th (an eighth
# did not finish docsim's test in 418 s of memcheck): there the point is the GPU's tiles,
# not the readers' buffers.

bats_require_minimum_version 1.5.0

setup_file() {
	load helpers
	local f=$BATS_FILE_TMPDIR s=1
	[ "$ACCELKIT_SANITIZE" = cuda ] && s=64
	export SOAK_DIV=$s
	cc -O2 -o "$f/edref" "$BATS_TEST_DIRNAME/ref/editdist4r_ref.c"
	py "$REF/docsim_gen.py" zipf $((45000 / s)) 11 "$f/corpus.txt"
	py "$REF/docsim_gen.py" zipf 40 12 "$f/queries.txt"
	py "$REF/docsim_gen.py" zipf 200 13 "$f/corpus.small"
	mkdir "$f/gmm"
	py "$REF/gmmscore_ref.py" random "$f/gmm" --models 8 --dim 3 --frames $((150000 / s)) --seed 14
	"$f/edref" gen 15 $((60000 / s)) 120 dna > "$f/pairs.txt"
	"$f/edref" gen 16 200 60 dna > "$f/pairs.small"
	py "$REF/clkmeans_ref.py" gen separated $((250000 / s)) 2 8 17 "$f/points.npy" "$f/c0.txt"
	py - "$f" "$s" <<-'EOF'
	import sys
	import numpy as np
	d, s = sys.argv[1], int(sys.argv[2])
	r = np.random.default_rng(18)
	# anti-correlated, so the skyline is large; every value distinct
	n = 120000 // s
	x = r.random(n)
	y = 1 - x + r.normal(0, 0.05, n)
	assert len(set(x)) == n and len(set(y)) == n
	np.savetxt(d + "/sky.txt", np.c_[x, y, r.random(n)], fmt="%.17g")
	np.savetxt(d + "/sky.small", np.c_[x[:800], y[:800], r.random(800)], fmt="%.17g")
	np.savetxt(d + "/a.txt", r.standard_normal((900 // s, 700)).astype(np.float32), fmt="%.9g")
	np.savetxt(d + "/a.small", r.standard_normal((40, 30)).astype(np.float32), fmt="%.9g")
	np.savetxt(d + "/b.small", r.standard_normal((30, 20)).astype(np.float32), fmt="%.9g")
	np.savetxt(d + "/b.txt", r.standard_normal((700, 40)).astype(np.float32), fmt="%.9g")
	p = np.load(d + "/points.npy")
	np.savetxt(d + "/points.txt", p, fmt="%.9g")
	np.savetxt(d + "/points.small", p[:1000], fmt="%.9g")
	np.savetxt(d + "/frames.small", np.load(d + "/gmm/feats.npy")[:700], fmt="%.9g")
	EOF
}

setup() {
	load helpers
	F=$BATS_FILE_TMPDIR
	T=$BATS_TEST_TMPDIR
}

# trickle FILE MOST: FILE through a pipe in pieces of 1 to MOST bytes (random); with
# MOST 1, a byte a write, pausing every 64 bytes so the reader takes few at a time.
trickle() {
	py -c '
import os, random, sys, time
data, most = open(sys.argv[1], "rb").read(), int(sys.argv[2])
rnd, i = random.Random(5), 0
while i < len(data):
    n = 1 if most == 1 else rnd.randint(1, most)
    os.write(1, data[i:i + n])
    i += n
    if most == 1 and i % 64 == 0:
        time.sleep(0.001)
' "$@"
}

# with INPUT ARGS...: ARGS with each @IN@ replaced by INPUT.
with() {
	local in=$1 a
	shift
	for a; do
		[ "$a" = @IN@ ] && a=$in
		printf '%s\0' "$a"
	done
}

# bounded OUT CMD...: CMD with ACCELKIT_CHUNK_BYTES=3001 and the least
# --max-device-mem this device takes for its work (the one its error names, or else
# the least power of two from 64 KiB that serves), output to OUT. Sets BOUND.
bounded() {
	local out=$1 need
	shift
	if ACCELKIT_CHUNK_BYTES=3001 "$@" --max-device-mem 1 > "$out" 2> "$T/bound.err"; then
		BOUND=1	# the device has no memory to bound (the CPU path)
	else
		need=$(sed -n 's/.*at least \([0-9][0-9]*\).*/\1/p' "$T/bound.err")
		if [ -n "$need" ]; then
			BOUND=$need
			ACCELKIT_CHUNK_BYTES=3001 "$@" --max-device-mem "$BOUND" > "$out"
		else
			for ((BOUND = 65536; BOUND < 1 << 40; BOUND *= 2)); do
				ACCELKIT_CHUNK_BYTES=3001 "$@" --max-device-mem "$BOUND" > "$out" \
				    2> "$T/bound.err" && break
			done
			((BOUND < 1 << 40)) || { cat "$T/bound.err"; return 1; }
		fi
	fi
	echo "# --max-device-mem $BOUND"
}

# soak NAME INPUT PROG ARGS...: PROG ARGS with INPUT for @IN@ in memory (NAME.mem),
# bounded (NAME.bound), and bounded with INPUT as standard input through a pipe in
# random pieces of up to 64 KiB (NAME.pipe): all three the same bytes, through FILTER
# (a command, default cat: one that removes what names the input).
FILTER=cat
soak() {
	local name=$1 in=$2 file pipe
	shift 2
	[ "$(wc -c < "$in")" -gt $((4 << 20)) ] || [ "$ACCELKIT_SANITIZE" = cuda ]
	mapfile -d '' file < <(with "$in" "$@")
	mapfile -d '' pipe < <(with - "$@")
	"${file[@]}" > "$T/$name.mem"
	bounded "$T/$name.bound" "${file[@]}"
	cmp "$T/$name.mem" "$T/$name.bound"
	trickle "$in" 65536 | ACCELKIT_CHUNK_BYTES=3001 "${pipe[@]}" --max-device-mem "$BOUND" \
	    > "$T/$name.pipe"
	cmp <($FILTER < "$T/$name.mem") <($FILTER < "$T/$name.pipe")
}

# by_byte NAME INPUT PROG ARGS...: INPUT a byte at a time through a pipe gives the
# bytes of the run on the file (through FILTER).
by_byte() {
	local name=$1 in=$2 file pipe
	shift 2
	mapfile -d '' file < <(with "$in" "$@")
	mapfile -d '' pipe < <(with - "$@")
	"${file[@]}" > "$T/$name.file"
	trickle "$in" 1 | "${pipe[@]}" > "$T/$name.byte"
	[ -s "$T/$name.file" ]
	cmp <($FILTER < "$T/$name.file") <($FILTER < "$T/$name.byte")
}

@test "docsim: a 5 MB corpus in memory, in 3001-byte chunks and through a pipe ranks as scikit-learn does" {
	soak docsim "$F/corpus.txt" docsim -k 5 -q "$F/queries.txt" @IN@
	py "$REF/docsim_ref.py" sim "$F/corpus.txt" -q "$F/queries.txt" "$T/sim.npy"
	run -0 py "$REF/docsim_ref.py" check "$T/sim.npy" "$T/docsim.mem" -k 5
	# (each query's related documents, up to 5: the reference counts them; a 64th of
	# the corpus relates to fewer of the queries, 22 lines)
	assert_output "ok: $(wc -l < "$T/docsim.mem") lines"
	[ "$(wc -l < "$T/docsim.mem")" -gt $((SOAK_DIV == 1 ? 40 : 15)) ]
}

@test "skyline: 7 MB of rows in memory, in chunks and through a pipe give the skyline a sort and scan finds" {
	soak skyline "$F/sky.txt" skyline -f 1,2 @IN@
	skyline -f 1,2 --index "$F/sky.txt" > "$T/index"
	# the rows it printed are those rows of the input, in order
	awk 'NR == FNR { keep[$1] = 1; next } FNR in keep' "$T/index" "$F/sky.txt" |
	    cmp - "$T/skyline.mem"
	# (x, y) distinct: a row is in the skyline when its y is below every y of a
	# smaller x
	run -0 py -c '
import sys
import numpy as np
a = np.loadtxt(sys.argv[1])
order = np.argsort(a[:, 0], kind="stable")
best, keep = np.inf, []
for i in order:
    if a[i, 1] < best:
        best = a[i, 1]
        keep.append(i + 1)
got = np.loadtxt(sys.argv[2], dtype=np.int64, ndmin=1)
print("ok" if sorted(keep) == sorted(got.tolist()) else
      "differ: %d rows expected, %d printed" % (len(keep), len(got)))
' "$F/sky.txt" "$T/index"
	assert_output "ok"
}

@test "gmmscore: 5 MB of frames in memory, in chunks of frames and bytes and through a pipe score as scikit-learn does" {
	# the first column names the input: the file, or - for the pipe
	FILTER="cut -f2-"
	soak gmmscore "$F/gmm/feats.txt" gmmscore --chunk 1000 -m "$F/gmm/native.txt" @IN@
	gmmscore -m "$F/gmm/native.txt" "$F/gmm/feats.txt" | cmp - "$T/gmmscore.mem"
	py "$REF/gmmscore_ref.py" scores "$F/gmm" "$F/gmm/feats.npy" "$T/ref.npy" \
	    --native "$F/gmm/native.txt"
	py "$REF/gmmscore_ref.py" check top "$T/gmmscore.mem" "$T/ref.npy" --names "$F/gmm/names.txt"
}

@test "editdist4r: 7 MB of pairs in memory, in chunks and through a pipe give the plain DP's distances" {
	soak editdist4r "$F/pairs.txt" editdist4r @IN@
	"$F/edref" dist < "$F/pairs.txt" | cmp - "$T/editdist4r.mem"
}

@test "clmatmul: a 7 MB text matrix in memory, in chunks and blocks and through a pipe multiplies as numpy does" {
	soak clmatmul "$F/a.txt" clmatmul @IN@ "$F/b.txt"
	run -0 py "$REF/clmatmul_ref.py" "$F/a.txt" "$F/b.txt" "$T/clmatmul.mem"
	assert_output "ok"
}

@test "clkmeans: 6 MB of points in memory, in chunks, streamed and through a pipe cluster as scikit-learn does" {
	soak clkmeans "$F/points.txt" clkmeans -k 8 --init "$F/c0.txt" @IN@
	py "$REF/clkmeans_ref.py" sklearn "$F/points.npy" "$F/c0.txt" 300 1e-4 > "$T/ref.txt"
	py "$REF/clkmeans_ref.py" check "$T/clkmeans.mem" "$T/ref.txt"
}

@test "every program reads a pipe that delivers its input a byte at a time as it reads the file" {
	by_byte docsim "$F/corpus.small" docsim -k 3 -q "$F/queries.txt" @IN@
	by_byte skyline "$F/sky.small" skyline -f 1,2 @IN@
	FILTER="cut -f2-" by_byte gmmscore "$F/frames.small" gmmscore -m "$F/gmm/native.txt" @IN@
	by_byte editdist4r "$F/pairs.small" editdist4r @IN@
	by_byte clmatmul "$F/a.small" clmatmul @IN@ "$F/b.small"
	by_byte clkmeans "$F/points.small" clkmeans -k 8 --init "$F/c0.txt" @IN@
}
