#!/usr/bin/env bats
# clmatmul: C = alpha op(A) op(B) + beta C0 on OpenCL (PoCL in make check, the GPU in
# make check-gpu). Products are checked by tests/ref/clmatmul_ref.py, numpy in float64,
# entry by entry within (K + 2) eps (|alpha| |op(A)| |op(B)| + |beta C0|), eps the
# float32 epsilon (float64 with --double): twice the worst-case rounding of K terms.
# --precision tf32 (NVIDIA GPUs only, so in check-gpu) is checked within
# (2^-10 + 2^-22 + (K + 2) 2^-22) (...): the inputs' rounding to 11 significant bits
# plus float32 sums at twice float32's epsilon.

setup() {
	load helpers
	# make check's CPU device is PoCL's: cpu alone is clmatmul's native host path
	[ "${ACCELKIT_DEVICE:-}" != cpu ] || export ACCELKIT_DEVICE=cpu:0
	# the program cache (and the ICD folder) of the suite's own, for this run of it;
	# PoCL's kernel cache stays where it was
	export POCL_CACHE_DIR=${POCL_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/pocl/kcache}
	export XDG_CACHE_HOME=$BATS_FILE_TMPDIR/xdg
	T=$BATS_TEST_TMPDIR
	D=$TESTDATA/clmatmul
}

# gen FILE ROWS COLS SEED [f64]: standard normal numbers, float32 unless f64, as text
# (every digit kept) or NPY by the file's name.
gen() {
	py - "$@" <<'EOF'
import sys
import numpy as np
f, r, c, s = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
dt = np.float64 if len(sys.argv) > 5 else np.float32
x = np.random.default_rng(s).standard_normal((r, c)).astype(dt)
if f.endswith(".npy"):
    np.save(f, x)
else:
    np.savetxt(f, x, fmt="%.17g")
EOF
}

# gen_adv M N K: $T/a.npy (M x K) and $T/b.npy (K x N), float32, made to strain the
# bound: cancellation (the second half of A's columns a copy of the first, the second
# half of B's rows the first's negation plus 1e-3 noise, so that most of C is small
# against |A||B|), rows of norm 1e12 (A's first eighth) and one dominant dimension
# (column 0 of A's second eighth of rows and row 0 of B's second half of columns times
# 1e4: the k = 0 term, uncancelled, is most of those columns of C). bench/
# clmatmul_error.py's adversarial case is made the same way at N x N.
gen_adv() {
	py - "$T" "$@" <<'EOF2'
import sys
import numpy as np
t, m, n, k = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
rng = np.random.default_rng(5)
a, b, h = rng.standard_normal((m, k)), rng.standard_normal((k, n)), k // 2
a[:, h:2 * h] = a[:, :h]
b[h:2 * h] = -b[:h] + 1e-3 * rng.standard_normal((h, n))
a[m // 8:m // 4, 0] *= 1e4
b[0, n // 2:] *= 1e4
a[:m // 8] *= 1e12
np.save(t + "/a.npy", a.astype(np.float32))
np.save(t + "/b.npy", b.astype(np.float32))
EOF2
}

# mm M N K [OPTIONS]: random op(A) (M x K) and op(B) (K x N), stored as the transpose
# options say (and C0, M x N, with --beta), multiplied by clmatmul with OPTIONS into
# $T/c.npy, then the reference's verdict on it.
mm() {
	local m=$1 n=$2 k=$3 ta=0 tb=0 f64= ref=() opts=()
	shift 3
	while [ $# -gt 0 ]; do
		case $1 in
		--transpose-a) ta=1; ref+=(--ta) ;;
		--transpose-b) tb=1; ref+=(--tb) ;;
		--double) f64=f64; ref+=(--double) ;;
		--precision) [ "$2" = tf32 ] && ref+=(--tf32); opts+=("$1"); shift ;;
		--alpha) ref+=(--alpha "$2"); opts+=("$1"); shift ;;
		--beta) ref+=(--beta "$2" --c0 "$T/c0.npy"); opts+=(-c "$T/c0.npy" "$1"); shift ;;
		esac
		opts+=("$1")
		shift
	done
	if [ $ta = 1 ]; then gen "$T/a.npy" "$k" "$m" 1 $f64; else gen "$T/a.npy" "$m" "$k" 1 $f64; fi
	if [ $tb = 1 ]; then gen "$T/b.npy" "$n" "$k" 2 $f64; else gen "$T/b.npy" "$k" "$n" 2 $f64; fi
	gen "$T/c0.npy" "$m" "$n" 3 $f64
	clmatmul -O npy -o "$T/c.npy" "${opts[@]}" "$T/a.npy" "$T/b.npy" || return
	py "$REF/clmatmul_ref.py" "${ref[@]}" "$T/a.npy" "$T/b.npy" "$T/c.npy"
}

@test "the small example gives the product worked by hand" {
	run -0 --separate-stderr clmatmul "$D/a.txt" "$D/b.txt"
	assert_output "$(printf '58\t64\n139\t154')"
}

@test "a 1x1 product is the product of the numbers" {
	echo 3 > "$T/a.txt"
	echo -2.5 > "$T/b.txt"
	run -0 --separate-stderr clmatmul "$T/a.txt" "$T/b.txt"
	assert_output "-7.5"
}

@test "a row times a column and a column times a row match numpy" {
	run -0 mm 1 1 300
	assert_output ok
	run -0 mm 300 300 1
	assert_output ok
	run -0 mm 1 77 5
	assert_output ok
}

@test "prime sizes 127x131x137 match numpy" {
	run -0 mm 127 131 137
	assert_output ok
}

@test "tall and wide shapes match numpy" {
	run -0 mm 1000 3 20
	assert_output ok
	run -0 mm 3 1000 20
	assert_output ok
	run -0 mm 5 7 2000
	assert_output ok
}

@test "op(A) = A^T matches numpy" {
	run -0 mm 127 131 137 --transpose-a
	assert_output ok
}

@test "op(B) = B^T matches numpy" {
	run -0 mm 127 131 137 --transpose-b
	assert_output ok
}

@test "both transposed match numpy" {
	run -0 mm 127 131 137 --transpose-a --transpose-b
	assert_output ok
}

@test "alpha and beta with C0 match numpy" {
	run -0 mm 65 70 75 --alpha -0.5 --beta 2
	assert_output ok
	run -0 mm 65 70 75 --transpose-a --transpose-b --alpha 3 --beta -1
	assert_output ok
}

@test "-c without --beta adds C0 once" {
	run -0 --separate-stderr clmatmul -c "$D/c.txt" "$D/a.txt" "$D/b.txt"
	assert_output "$(printf '59\t64\n139\t155')"
}

@test "--double computes in float64, within float64's bound" {
	run -0 mm 61 67 71 --double
	assert_output ok
	run -0 mm 61 67 71 --double --transpose-b --alpha 0.25 --beta -3
	assert_output ok
}

@test "--double writes float64 NPY" {
	run -0 clmatmul --double -O npy -o "$T/c.npy" "$D/a.txt" "$D/b.txt"
	run -0 py -c "import numpy as np; c = np.load('$T/c.npy'); print(c.dtype, c.tolist())"
	assert_output "float64 [[58.0, 64.0], [139.0, 154.0]]"
}

# blocked SIZE [OPTIONS]: $T/a.npy times $T/b.npy, in core and under --max-device-mem
# SIZE (fixed tiles, so the plan is the same on every device): both results must be
# the same bytes, the blocked run must have used several blocks of C and split K, and
# the reference must accept it.
blocked() {
	local mem=$1 k=(--tile 32 --item 4 --tile-k 16)
	shift
	clmatmul "${k[@]}" "$@" -O npy -o "$T/whole.npy" "$T/a.npy" "$T/b.npy" || return
	clmatmul -v "${k[@]}" "$@" --max-device-mem "$mem" -O npy -o "$T/c.npy" \
	    "$T/a.npy" "$T/b.npy" 2> "$T/log" || { cat "$T/log"; return 1; }
	grep -E 'plan: [0-9]+ x [0-9]+ blocks of C .* K in [0-9]+ panels' "$T/log" || return
	grep -qE 'plan: ([2-9]|[1-9][0-9]+) x [0-9]+ blocks of C .* K in ([2-9]|[1-9][0-9]+) panels' \
	    "$T/log" || { echo "not blocked"; return 1; }
	cmp "$T/whole.npy" "$T/c.npy" || return
}

@test "blocked runs under a small --max-device-mem equal the in-core result exactly" {
	gen "$T/a.npy" 300 700 1
	gen "$T/b.npy" 700 260 2
	run -0 blocked 150K
	run -0 py "$REF/clmatmul_ref.py" "$T/a.npy" "$T/b.npy" "$T/c.npy"
	assert_output ok
}

@test "blocked runs with packed transfers, transposes and beta equal the in-core result" {
	gen "$T/a.npy" 700 300 1
	gen "$T/b.npy" 260 700 2
	gen "$T/c0.npy" 300 260 3
	run -0 blocked 150K --transfers packed --transpose-a --transpose-b --alpha 0.5 \
	    --beta 2 -c "$T/c0.npy"
	run -0 py "$REF/clmatmul_ref.py" --ta --tb --alpha 0.5 --beta 2 --c0 "$T/c0.npy" \
	    "$T/a.npy" "$T/b.npy" "$T/c.npy"
	assert_output ok
}

@test "-v names the device, the kernel parameters, the plan and the phases" {
	run -0 --separate-stderr clmatmul -v -o "$T/c.txt" "$D/a.txt" "$D/b.txt"
	[[ $stderr == *"clmatmul: device: "* ]]
	[[ $stderr == *"kernel parameters: tile="*" tile-k="*" item="* ]]
	[[ $stderr == *"plan: 1 x 1 block of C"* ]]
	[[ $stderr == *"time compute"* ]]
	[[ $stderr == *"time wall"* ]]
}

@test "-v names the tuning table's row for the device and the precision, with its measurement" {
	clmatmul -v -o "$T/c.txt" "$D/a.txt" "$D/b.txt" 2> "$T/err"
	run -0 cat "$T/err"
	assert_line --regexp '^clmatmul: tuning: .+, float32 \(.+\)$'
	clmatmul -v --double -o "$T/c.txt" "$D/a.txt" "$D/b.txt" 2> "$T/err"
	run -0 cat "$T/err"
	assert_line --regexp '^clmatmul: tuning: .+, float64 \(.+\)$'
}

@test "rectangle transfers are checked on the platform and reported; auto stages its copies instead" {
	run -0 --separate-stderr clmatmul -v --transfers rect -o "$T/c.txt" "$D/a.txt" "$D/b.txt"
	[[ $stderr =~ "rectangle transfers: "(correct|wrong) ]]
	run -0 --separate-stderr clmatmul -v --transfers auto -o "$T/c.txt" "$D/a.txt" "$D/b.txt"
	[[ $stderr != *"rectangle transfers: "* ]]
	[[ $stderr == *"clmatmul: transfers: staged through 3 mapped host buffers of up to 16777216 bytes"* ]]
}

@test "text input can give NPY output and NPY input text output" {
	gen "$T/a.txt" 20 30 1
	gen "$T/b.npy" 30 10 2
	run -0 clmatmul -O npy -o "$T/c.npy" "$T/a.txt" "$T/b.npy"
	run -0 py -c "import numpy as np; print(np.load('$T/c.npy').dtype)"
	assert_output float32
	run -0 py "$REF/clmatmul_ref.py" "$T/a.txt" "$T/b.npy" "$T/c.npy"
	assert_output ok
	gen "$T/a.npy" 20 30 1
	run -0 clmatmul -o "$T/c.txt" "$T/a.npy" "$T/b.npy"
	run -0 py "$REF/clmatmul_ref.py" "$T/a.npy" "$T/b.npy" "$T/c.txt"
	assert_output ok
}

@test "an output file named .npy is written as NPY" {
	run -0 clmatmul -o "$T/c.npy" "$D/a.txt" "$D/b.txt"
	run -0 py -c "import numpy as np; print(np.load('$T/c.npy').tolist())"
	assert_output "[[58.0, 64.0], [139.0, 154.0]]"
}

@test "A can come from standard input" {
	run -0 --separate-stderr clmatmul - "$D/b.txt" < "$D/a.txt"
	assert_output "$(printf '58\t64\n139\t154')"
}

@test "text output reads back as the exact float32 values" {
	gen "$T/a.npy" 40 50 1
	gen "$T/b.npy" 50 30 2
	run -0 clmatmul -O npy -o "$T/c.npy" "$T/a.npy" "$T/b.npy"
	run -0 clmatmul -o "$T/c.txt" "$T/a.npy" "$T/b.npy"
	run -0 py -c "
import numpy as np
t = np.loadtxt('$T/c.txt', dtype=np.float32)
print((t == np.load('$T/c.npy')).all())"
	assert_output True
}

@test "an empty matrix is an error naming it" {
	: > "$T/empty.txt"
	run -1 --separate-stderr clmatmul "$T/empty.txt" "$D/b.txt"
	assert_equal "$stderr" "clmatmul: $T/empty.txt: empty matrix (0 x 0)"
	[ -z "$output" ]
}

@test "mismatched shapes are an error naming both shapes and the --transpose that fits" {
	run -1 --separate-stderr clmatmul "$D/a.txt" "$D/a.txt"
	assert_equal "$stderr" "clmatmul: shapes do not match: op(A) is 2 x 3 ($D/a.txt) but op(B) is 2 x 3 ($D/a.txt); --transpose-a or --transpose-b would make them match"
	run -1 --separate-stderr clmatmul --transpose-a "$D/a.txt" "$D/b.txt"
	[[ $stderr == *"op(A) is 3 x 2 ($D/a.txt, transposed) but op(B) is 3 x 2 ($D/b.txt); without --transpose-a or --transpose-b would make them match" ]]
	# only both: a 1 x 3 row by a 2 x 1 column
	printf '1 2 3\n' > "$T/row.txt"
	printf '1\n2\n' > "$T/col.txt"
	run -1 --separate-stderr clmatmul "$T/row.txt" "$T/col.txt"
	[[ $stderr == *"; --transpose-a and --transpose-b would make them match" ]]
	# none: 1 x 3 by 2 x 2
	printf '1 2\n3 4\n' > "$T/sq.txt"
	run -1 --separate-stderr clmatmul "$T/row.txt" "$T/sq.txt"
	[[ $stderr == *"op(B) is 2 x 2 ($T/sq.txt)" ]]
	# and each hint is right: the product it names runs
	run -0 clmatmul --transpose-a --transpose-b "$T/row.txt" "$T/col.txt"
	assert_output "$(printf '1\t2\n2\t4\n3\t6')"
}

@test "C0 of the wrong shape is an error naming its shape" {
	run -1 --separate-stderr clmatmul -c "$D/a.txt" "$D/a.txt" "$D/b.txt"
	assert_equal "$stderr" "clmatmul: $D/a.txt: C0 is 2 x 3 but op(A) op(B) is 2 x 2"
}

@test "NaN in an input is an error naming its line" {
	printf '1 2\nnan 4\n' > "$T/nan.txt"
	run -1 --separate-stderr clmatmul "$T/nan.txt" "$T/nan.txt"
	[[ $stderr == "clmatmul: $T/nan.txt:2: "*NaN* ]]
	[ -z "$output" ]
}

@test "a ragged row is an error naming its line" {
	printf '1 2\n3\n' > "$T/ragged.txt"
	run -1 --separate-stderr clmatmul "$T/ragged.txt" "$D/b.txt"
	[[ $stderr == "clmatmul: $T/ragged.txt:2: "* ]]
}

@test "--bench --verify passes and prints GFLOP/s" {
	run -0 --separate-stderr clmatmul --bench 200 --verify --repeat 2
	assert_output --regexp '^m=200 n=200 k=200 type=float32 blocks=1 reps=2 ms=[0-9.]+ best_ms=[0-9.]+ gflops=[0-9.]+ source=device device=.+$'
}

@test "--bench of an awkward shape with transposes, alpha and beta verifies" {
	run -0 --separate-stderr clmatmul --bench 67x129x250 --transpose-a --transpose-b \
	    --alpha 2 --beta -1 --verify --repeat 1
	assert_output --regexp '^m=67 n=129 k=250 '
}

@test "--bench --double --verify passes" {
	run -0 --separate-stderr clmatmul --bench 100 --double --verify --repeat 1
	assert_output --regexp 'type=float64'
}

@test "--bench from host memory in blocks verifies" {
	run -0 --separate-stderr clmatmul --bench 300x260x700 --tile 32 --item 4 --tile-k 16 \
	    --max-device-mem 150K --verify --repeat 1
	assert_output --regexp 'blocks=(2[0-9]|[3-9][0-9]) .* source=host'
}

@test "--verify checks a product read from files" {
	gen "$T/a.npy" 60 70 1
	gen "$T/b.npy" 70 80 2
	run -0 --separate-stderr clmatmul --verify -v -o "$T/c.npy" "$T/a.npy" "$T/b.npy"
	[[ $stderr == *"verify: every entry, largest error"* ]]
}

@test "forced work-group tiles on local memory (the GPU kernel) match numpy" {
	run -0 mm 300 260 70 --staging local --tile 128 --tile-k 16 --item 8 --vector 4 \
	    --patch 4x8 --transpose-b
	assert_output ok
	run -0 mm 100 90 80 --staging local --tile 64x32 --tile-k 16 --item 4x2 --vector 2x1 \
	    --load-vector 2 --patch 1x16 --band 1 --transpose-a
	assert_output ok
	# 64 work-items: a slice of B (48 x 8) is 96 loads of 4, not a multiple of 64; the
	# load vector not forced shrinks to 2 (192 loads), as -v says, rather than refusing
	run -0 --separate-stderr clmatmul -v -O npy -o "$T/c.npy" --staging local --tile 64x48 \
	    --item 8x6 --tile-k 8 "$D/a.txt" "$D/b.txt"
	[[ $stderr == *"tile=64x48 tile-k=8 item=8x6 "*"load-vector=2 "* ]]
	run -0 mm 97 101 67 --staging local --tile 64x48 --item 8x6 --tile-k 8
	assert_output ok
}

@test "adversarial inputs (cancellation, rows of norm 1e12, a dominant dimension) are within float32's bound of numpy" {
	gen_adv 200 136 520
	clmatmul -O npy -o "$T/c.npy" "$T/a.npy" "$T/b.npy"
	run -0 py "$REF/clmatmul_ref.py" "$T/a.npy" "$T/b.npy" "$T/c.npy"
	assert_output ok
	# the data do what they are for: two fifths of C cancelled to under 1e-4 of |A||B|
	# (the first half of the columns, where B's row 0 is not scaled)
	run -0 py -c "
import numpy as np
a, b = np.load('$T/a.npy').astype(float), np.load('$T/b.npy').astype(float)
r = np.abs(a @ b) / (np.abs(a) @ np.abs(b))
print('cancelled' if (r < 1e-4).mean() > 0.3 else (r < 1e-4).mean())"
	assert_output cancelled
}

@test "forced direct staging (the CPU kernel) matches numpy" {
	run -0 mm 150 140 130 --staging direct --tile 48x64 --item 6x16 --vector 1x8 \
	    --tile-k 32 --unroll 4
	assert_output ok
}

@test "kernel parameters that cannot work are a usage error" {
	run -2 --separate-stderr clmatmul --tile 64 --item 6 "$D/a.txt" "$D/b.txt"
	[[ $stderr == *"kernel parameters tile=64x64 "*" do not work: the tile must be a multiple of the item"* ]]
	run -2 --separate-stderr clmatmul --vector 3 "$D/a.txt" "$D/b.txt"
	[[ $stderr == *"vector widths must be 1, 2, 4, 8 or 16"* ]]
}

@test "a --max-device-mem too small for one tile is an error" {
	run -1 --separate-stderr clmatmul --max-device-mem 1K "$D/a.txt" "$D/b.txt"
	[[ $stderr == "clmatmul: --max-device-mem 1024 is too small for one "* ]]
}

# ---- the planner ends for every size and bound (issue 14) ----

# least: the least bound that a "too small" message on stdin names.
least() {
	sed -n 's/.* is too small for one .* (at least \([0-9]*\) bytes needed)$/\1/p'
}

# on_device: the bytes that -v's plan (on stdin) keeps on the device.
on_device() {
	sed -n 's/^clmatmul: plan: .*, \([0-9]*\) bytes on the device$/\1/p'
}

# issue14_data: issue 14's matrices, made as its reproducer makes them: $T/A.npy
# (400 x 300) and $T/B.npy (300 x 500).
issue14_data() {
	py - "$T" <<'EOF'
import sys
import numpy as n
r = n.random.default_rng(1)
n.save(sys.argv[1] + '/A.npy', r.standard_normal((400, 300)).astype('f4'))
n.save(sys.argv[1] + '/B.npy', r.standard_normal((300, 500)).astype('f4'))
EOF
}

@test "the issue's 400x300 by 300x500 product under --max-device-mem 1000000 ends and matches numpy" {
	issue14_data
	run -0 timeout "$(limit 60)" clmatmul -O npy -o "$T/C.npy" --max-device-mem 1000000 "$T/A.npy" "$T/B.npy"
	run -0 py "$REF/clmatmul_ref.py" "$T/A.npy" "$T/B.npy" "$T/C.npy"
	assert_output ok
	run -0 clmatmul -O npy -o "$T/whole.npy" "$T/A.npy" "$T/B.npy"
	cmp "$T/whole.npy" "$T/C.npy"
}

@test "under --max-device-mem 400000 the issue's product ends: the product, or exit 1 naming the least that works" {
	issue14_data
	run --separate-stderr timeout "$(limit 60)" clmatmul -O npy -o "$T/C.npy" --max-device-mem 400000 \
	    "$T/A.npy" "$T/B.npy"
	if [ "$status" = 0 ]; then	# a device with smaller tiles (a GPU's)
		run -0 py "$REF/clmatmul_ref.py" "$T/A.npy" "$T/B.npy" "$T/C.npy"
		assert_output ok
		return
	fi
	assert_equal "$status" 1
	[ ! -e "$T/C.npy" ]
	assert_regex "$stderr" '^clmatmul: --max-device-mem 400000 is too small for one [0-9]+x[0-9]+ tile of C and its panels \(at least [0-9]+ bytes needed\)$'
	need=$(least <<< "$stderr")
	[ "$need" -gt 400000 ]
	# the least named is exact: one byte less fails, that much works
	run -1 --separate-stderr timeout "$(limit 60)" clmatmul --max-device-mem $((need - 1)) -O npy \
	    -o "$T/C.npy" "$T/A.npy" "$T/B.npy"
	run -0 timeout "$(limit 60)" clmatmul --max-device-mem "$need" -O npy -o "$T/C.npy" \
	    "$T/A.npy" "$T/B.npy"
	run -0 py "$REF/clmatmul_ref.py" "$T/A.npy" "$T/B.npy" "$T/C.npy"
	assert_output ok
}

# Random shapes (1, primes, one below and above the tiles the table gives this device,
# and up to six tiles) and transposes drawn from a fixed seed, with beta, packed
# transfers and float64 in turn. For each: the in-core product checked against numpy; the
# least bound the program names for it is exact (one byte less fails, that bound
# works); and runs at that bound and at a random bound between it and the in-core
# footprint keep the plan within the bound and give the in-core bytes. Every run has
# a time limit.
@test "random shapes under random --max-device-mem bounds from one tile up end, equal the in-core result and numpy" {
	local cases=12 c_lines c_line c_i c_u c_opts c_o c_need c_whole c_bound
	clmatmul -v -o "$T/t.txt" "$D/a.txt" "$D/b.txt" 2> "$T/log32"
	clmatmul -v --double -o "$T/t.txt" "$D/a.txt" "$D/b.txt" 2> "$T/log64"
	tile='s/.*kernel parameters: tile=\([0-9]*\)x\([0-9]*\) tile-k=\([0-9]*\) .*/\1 \2 \3/p'
	py - "$T" "$cases" "$(sed -n "$tile" "$T/log32")" "$(sed -n "$tile" "$T/log64")" \
	    > "$T/cases" <<'EOF'
import os
import sys
import numpy as np
T, ncases = sys.argv[1], int(sys.argv[2])
tiles = [[int(v) for v in s.split()] for s in sys.argv[3:5]]
rng = np.random.default_rng(14)
primes = [p for p in range(2, 260) if all(p % q for q in range(2, p))]
def side(t):
    c = rng.random()
    if c < 0.1:
        return 1
    if c < 0.4:
        return int(rng.choice(primes))
    if c < 0.8:
        return max(1, int(rng.choice([t - 1, t, t + 1, 2 * t - 1, 2 * t + 1, 5 * t + 1])))
    return int(rng.integers(1, 6 * t))
for i in range(ncases):
    dbl, beta, packed = i % 4 == 3, i % 3 == 1, i % 4 == 2
    bm, bn, bk = tiles[dbl]
    m, n, k = side(bm), side(bn), side(bk)
    ta, tb = rng.random() < 0.5, rng.random() < 0.5
    dt = np.float64 if dbl else np.float32
    d = "%s/%d" % (T, i)
    os.mkdir(d)
    np.save(d + "/a.npy", rng.standard_normal((k, m) if ta else (m, k)).astype(dt))
    np.save(d + "/b.npy", rng.standard_normal((n, k) if tb else (k, n)).astype(dt))
    opts, ref = [], []
    if dbl:
        opts += ["--double"]; ref += ["--double"]
    if ta:
        opts += ["--transpose-a"]; ref += ["--ta"]
    if tb:
        opts += ["--transpose-b"]; ref += ["--tb"]
    if beta:
        np.save(d + "/c0.npy", rng.standard_normal((m, n)).astype(dt))
        opts += ["--beta", "-0.5", "-c", d + "/c0.npy"]
        ref += ["--beta", "-0.5", "--c0", d + "/c0.npy"]
    if packed:
        opts += ["--transfers", "packed"]
    print("%d %.6f %s|%s" % (i, rng.random(), " ".join(opts), " ".join(ref)))
EOF
	# (bats's run sets i and other plain names: the loop's names are c_*)
	mapfile -t c_lines < "$T/cases"
	for c_line in "${c_lines[@]}"; do
		read -r c_i c_u c_opts <<< "${c_line%|*}"
		c_o=($c_opts)
		echo "case $c_i: $c_opts"	# shown when the test fails
		run -0 --separate-stderr timeout "$(limit 30)" clmatmul -v "${c_o[@]}" -O npy \
		    -o "$T/$c_i/whole.npy" "$T/$c_i/a.npy" "$T/$c_i/b.npy"
		c_whole=$(on_device <<< "$stderr")
		run -1 --separate-stderr timeout "$(limit 30)" clmatmul "${c_o[@]}" --max-device-mem 1 -O npy \
		    -o "$T/$c_i/c.npy" "$T/$c_i/a.npy" "$T/$c_i/b.npy"
		c_need=$(least <<< "$stderr")
		echo "case $c_i: in core $c_whole bytes, least $c_need"
		[ "$c_need" -le "$c_whole" ]
		if [ "$c_need" -gt 1 ]; then
			run -1 --separate-stderr timeout "$(limit 30)" clmatmul "${c_o[@]}" \
			    --max-device-mem $((c_need - 1)) -O npy -o "$T/$c_i/c.npy" \
			    "$T/$c_i/a.npy" "$T/$c_i/b.npy"
			assert_equal "$(least <<< "$stderr")" "$c_need"
		fi
		for c_bound in "$c_need" "$(awk -v a="$c_need" -v b="$c_whole" -v u="$c_u" \
		    'BEGIN { printf "%d", a + (b - a) * u }')"; do
			echo "case $c_i: --max-device-mem $c_bound"
			rm -f "$T/$c_i/c.npy"
			run -0 --separate-stderr timeout "$(limit 30)" clmatmul -v "${c_o[@]}" \
			    --max-device-mem "$c_bound" -O npy -o "$T/$c_i/c.npy" "$T/$c_i/a.npy" \
			    "$T/$c_i/b.npy"
			[ "$(on_device <<< "$stderr")" -le "$c_bound" ]
			cmp "$T/$c_i/whole.npy" "$T/$c_i/c.npy"
		done
	done
	# every in-core product against numpy, as clmatmul_ref.py checks one
	run -0 py - "$REF/clmatmul_ref.py" "$T" < "$T/cases" <<'EOF'
import contextlib
import importlib.util
import io
import sys
spec = importlib.util.spec_from_file_location("ref", sys.argv[1])
ref = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ref)
T, bad = sys.argv[2], []
for line in open(T + "/cases"):
    head, refopts = line.rstrip("\n").split("|")
    i = head.split()[0]
    sys.argv = ["clmatmul_ref.py"] + refopts.split() + [
        "%s/%s/%s.npy" % (T, i, f) for f in ("a", "b", "whole")]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        rc = ref.main()
    if rc:
        bad.append("case %s: %s" % (i, out.getvalue().strip()))
print("\n".join(bad) or "ok")
EOF
	assert_output ok
}

@test "usage errors exit 2 with a hint" {
	run -2 --separate-stderr clmatmul --no-such-option "$D/a.txt" "$D/b.txt"
	[[ $stderr == *"Try 'clmatmul --help'"* ]]
	run -2 --separate-stderr clmatmul "$D/a.txt"
	[[ $stderr == *"two matrices are needed"* ]]
	run -2 --separate-stderr clmatmul --beta 2 "$D/a.txt" "$D/b.txt"
	[[ $stderr == *"--beta needs the matrix C0"* ]]
	run -2 --separate-stderr clmatmul --bench 10x20 
	[[ $stderr == *"expected N or MxNxK"* ]]
	run -2 --separate-stderr clmatmul --bench 10 "$D/a.txt"
	run -2 --separate-stderr clmatmul - - < "$D/a.txt"
	run -2 --separate-stderr clmatmul --transfers sideways "$D/a.txt" "$D/b.txt"
}

@test "--help prints the usage on stdout" {
	run -0 --separate-stderr clmatmul --help
	assert_line --index 0 "usage: clmatmul [options] A B"
	assert_line --index 1 "       clmatmul --bench M[xNxK] [options]"
	[ -z "$stderr" ]
}

@test "--list-devices lists the OpenCL devices" {
	run -0 --separate-stderr clmatmul --list-devices
	assert_line --regexp '^[0-9]+:[0-9]+	(cpu|gpu):[0-9]+	'
}

@test "a device that is not there is an error" {
	run -1 --separate-stderr clmatmul -d 9:9 "$D/a.txt" "$D/b.txt"
	[[ $stderr == *"no such OpenCL device"* ]]
}

# Several devices of one platform (-d cpu:all, gpu:0,1, 0:0,1): PoCL shows as many CPU
# devices as POCL_DEVICES names pthread drivers, each of the whole machine. A run on
# several must give the one-device run's bytes, whoever takes which block of C.

# many N SIZE [OPTIONS]: $T/a.npy times $T/b.npy on one PoCL device and on N, in core
# and (SIZE not 0) under --max-device-mem SIZE, NPY and text; every result the
# one-device run's bytes, and -v's shares add up to the plan's blocks and to 2mnk flops.
many() {
	local n=$1 mem=$2 io
	shift 2
	local devs=$(printf 'pthread %.0s' $(seq "$n"))
	POCL_DEVICES="pthread" clmatmul -d cpu:0 "$@" -O npy -o "$T/one.npy" "$T/a.npy" "$T/b.npy" ||
	    return
	POCL_DEVICES="pthread" clmatmul -d cpu:0 "$@" -o "$T/one.txt" "$T/a.npy" "$T/b.npy" || return
	for io in incore ${mem#0}; do
		local bound=()
		[ "$io" = incore ] || bound=(--max-device-mem "$mem")
		POCL_DEVICES="$devs" clmatmul -v -d cpu:all "$@" "${bound[@]}" -O npy \
		    -o "$T/many.npy" "$T/a.npy" "$T/b.npy" 2> "$T/log" || { cat "$T/log"; return 1; }
		cmp "$T/one.npy" "$T/many.npy" || return
		POCL_DEVICES="$devs" clmatmul -d cpu:all "$@" "${bound[@]}" -o "$T/many.txt" \
		    "$T/a.npy" "$T/b.npy" || return
		cmp "$T/one.txt" "$T/many.txt" || return
		# Each device's line: "device 0:D: B of T blocks, G GFLOP, ..."; the shares sum.
		[ "$(grep -c '^clmatmul: device 0:[0-9]*: [0-9]* of ' "$T/log")" = "$n" ] ||
		    { cat "$T/log"; echo "not $n shares"; return 1; }
		awk -v n="$n" '/^clmatmul: device 0:[0-9]+: [0-9]+ of / { b += $4; t = $6 }
		    /^clmatmul: plan: / { p = $3 * $5 }
		    END { if (b != t || b != p) { print "shares " b " of " t ", plan " p; exit 1 } }' \
		    "$T/log" || return
		# And the engine's line a device (common/devwork's dw_report): "device 0:D share
		# S% busy T s (units B)", the units adding up to the plan's blocks.
		[ "$(grep -cE '^clmatmul: device 0:[0-9]+ share [0-9]+% busy [0-9.]+ s \(units [0-9]+\)$' \
		    "$T/log")" = "$n" ] || { cat "$T/log"; echo "not $n engine lines"; return 1; }
		awk '/^clmatmul: device 0:[0-9]+ share / { u += substr($10, 1, length($10) - 1) }
		    /^clmatmul: plan: / { p = $3 * $5 }
		    END { if (u != p) { print "units " u ", plan " p; exit 1 } }' "$T/log" || return
	done
}

@test "two and three PoCL devices give the one device's bytes and numpy's product, in core and in blocks" {
	gen "$T/a.npy" 300 700 1
	gen "$T/b.npy" 700 260 2
	run -0 many 2 600K
	run -0 many 3 600K
	run -0 py "$REF/clmatmul_ref.py" "$T/a.npy" "$T/b.npy" "$T/many.npy"
	assert_output ok
	run -0 py "$REF/clmatmul_ref.py" "$T/a.npy" "$T/b.npy" "$T/many.txt"
	assert_output ok
}

@test "on three devices transposes, alpha, beta C0 and packed transfers give one device's bytes" {
	gen "$T/a.npy" 400 130 1
	gen "$T/b.npy" 290 400 2
	gen "$T/c0.npy" 130 290 3
	run -0 many 3 450K --transpose-a --transpose-b --alpha 0.5 --beta 2 -c "$T/c0.npy" \
	    --transfers packed
	run -0 py "$REF/clmatmul_ref.py" --ta --tb --alpha 0.5 --beta 2 --c0 "$T/c0.npy" \
	    "$T/a.npy" "$T/b.npy" "$T/many.npy"
	assert_output ok
	run -0 many 2 0 --transpose-a --transpose-b --double
	run -0 py "$REF/clmatmul_ref.py" --ta --tb --double "$T/a.npy" "$T/b.npy" "$T/many.npy"
	assert_output ok
}

@test "a product of one block leaves the other devices none, with the same bytes" {
	gen "$T/a.npy" 5 7 1
	gen "$T/b.npy" 7 3 2
	run -0 many 3 0
	POCL_DEVICES="pthread pthread pthread" clmatmul -v -d cpu:all -o /dev/null "$T/a.npy" \
	    "$T/b.npy" 2> "$T/log"
	run -0 grep -c '^clmatmul: device 0:[012]: 0 of 1 blocks, 0 GFLOP' "$T/log"
	assert_output 2
	run -0 grep -cE '^clmatmul: device 0:[012] share 0% busy [0-9.]+ s \(units 0\)$' "$T/log"
	assert_output 2
	run -0 py "$REF/clmatmul_ref.py" "$T/a.npy" "$T/b.npy" "$T/many.npy"
	assert_output ok
}

@test "random shapes and bounds on 2 or 3 devices give one device's bytes" {
	local i m n k mem nd
	for i in 1 2 3 4 5 6; do
		m=$((RANDOM % 300 + 1)) n=$((RANDOM % 300 + 1)) k=$((RANDOM % 300 + 1))
		mem=$((RANDOM % 400000 + 500000)) nd=$((RANDOM % 2 + 2))
		gen "$T/a.npy" "$m" "$k" "$i"
		gen "$T/b.npy" "$k" "$n" "$((i + 100))"
		many "$nd" "$mem" || { echo "failed: $m x $n x $k on $nd devices, bound $mem"; return 1; }
		run -0 py "$REF/clmatmul_ref.py" "$T/a.npy" "$T/b.npy" "$T/many.npy"
		assert_output ok
	done
}

@test "cpu:all, cpu:0,1, 0:0,1 and 0:0,0:1 open the same two devices, and -v names each" {
	local spec
	for spec in cpu:all cpu:0,1 0:0,1 0:0,0:1 cpu:1,0; do
		POCL_DEVICES="pthread pthread" clmatmul -v -d "$spec" -o "$T/c.txt" "$D/a.txt" \
		    "$D/b.txt" 2> "$T/log"
		run -0 grep -c '^clmatmul: device: 0:[01] Portable' "$T/log"
		assert_output 2
		run -0 grep -c '^clmatmul: device 0:[01]: [01] of 1 blocks' "$T/log"
		assert_output 2
		run -0 cat "$T/c.txt"
		assert_output "$(printf '58\t64\n139\t154')"
	done
}

@test "a device named twice is two workers sharing it, with one device's bytes" {
	gen "$T/a.npy" 300 700 1
	gen "$T/b.npy" 700 260 2
	POCL_DEVICES=pthread clmatmul -d cpu:0 -O npy -o "$T/one.npy" "$T/a.npy" "$T/b.npy"
	POCL_DEVICES=pthread clmatmul -v -d cpu:0,0 --max-device-mem 600K -O npy \
	    -o "$T/twice.npy" "$T/a.npy" "$T/b.npy" 2> "$T/log"
	cmp "$T/one.npy" "$T/twice.npy"
	run -0 grep -c '^clmatmul: device 0:0: [0-9]* of 12 blocks' "$T/log"
	assert_output 2
}

@test "a device list naming a device that is not there, or malformed, is an error" {
	export POCL_DEVICES="pthread pthread"
	run -1 --separate-stderr clmatmul -d cpu:0,2 "$D/a.txt" "$D/b.txt"
	assert_equal "$stderr" "clmatmul: device 'cpu:0,2': no such OpenCL device 'cpu:2' (see --list-devices)"
	run -1 --separate-stderr clmatmul -d 0:0,7 "$D/a.txt" "$D/b.txt"
	[[ $stderr == *"no such OpenCL device '0:7'"* ]]
	local bad
	for bad in cpu:0,,1 cpu:0, ,0:0 0:0,x 7,0:0 cpu:all,1; do
		run -2 --separate-stderr clmatmul -d "$bad" "$D/a.txt" "$D/b.txt"
		[[ $stderr == *"invalid device '$bad'"* ]] || { echo "$bad: $stderr"; return 1; }
	done
}

@test "gpu:all without a GPU is an error naming it" {
	on_gpu && skip "this machine has a GPU"
	run -1 --separate-stderr clmatmul -d gpu:all "$D/a.txt" "$D/b.txt"
	assert_equal "$stderr" "clmatmul: device 'gpu:all': no such OpenCL device 'gpu:all' (see --list-devices)"
}

@test "devices of two platforms are an error that says so, and --platform keeps one" {
	# Two ICD files for one PoCL: the loader shows two platforms.
	mkdir "$T/vendors"
	local icd
	for icd in /etc/OpenCL/vendors/*pocl*.icd; do
		cp "$icd" "$T/vendors/a.icd"
		cp "$icd" "$T/vendors/b.icd"
	done
	[ -e "$T/vendors/a.icd" ] || skip "no PoCL ICD file"
	export OCL_ICD_VENDORS=$T/vendors
	run -0 clmatmul --list-devices
	# A loader that does not read OCL_ICD_VENDORS lists the machine's own platforms
	# (NVIDIA's beside PoCL on the GPU machine): platforms 0 and 1 must both be ours.
	[ "$(grep -c $'^[01]:0\t.*Portable Computing Language' <<< "$output")" = 2 ] ||
		skip "the ICD loader does not show our two PoCL platforms: $output"
	run -1 --separate-stderr clmatmul -d 0:0,1:0 "$D/a.txt" "$D/b.txt"
	[[ $stderr == *"0:0 (Portable Computing Language) and 1:0 (Portable Computing Language) are on different OpenCL platforms"* ]]
	run -1 --separate-stderr clmatmul -d cpu:all "$D/a.txt" "$D/b.txt"
	[[ $stderr == *"are on different OpenCL platforms"* ]]
	[ -z "$output" ]
}

@test "--bench on several devices multiplies host matrices in blocks and verifies" {
	export POCL_DEVICES="pthread pthread"
	run -0 --separate-stderr clmatmul -d cpu:all --bench 200x150x170 --max-device-mem 500K \
	    --transpose-a --beta 0.5 --verify --repeat 2
	assert_output --regexp '^m=200 n=150 k=170 type=float32 blocks=[0-9]+ reps=2 .* source=host '
	run -2 --separate-stderr clmatmul -d cpu:all --bench 100
	[[ $stderr == *"--bench on several devices multiplies host matrices: give --max-device-mem"* ]]
}

@test "gpu:all (gpu:0,0 on a machine of one GPU) gives one GPU's bytes and numpy's product, in core and in blocks, with each worker's share" {
	require_gpu
	gen "$T/a.npy" 3000 2000 1
	gen "$T/b.npy" 2000 2500 2
	clmatmul -d gpu -O npy -o "$T/one.npy" "$T/a.npy" "$T/b.npy"
	local ngpu=$(clmatmul --list-devices | grep -c '	gpu:') spec=gpu:all mem
	[ "$ngpu" -gt 1 ] || { spec=gpu:0,0; ngpu=2; }
	for mem in "" 8M; do
		clmatmul -v -d "$spec" ${mem:+--max-device-mem "$mem"} -O npy -o "$T/all.npy" \
		    "$T/a.npy" "$T/b.npy" 2> "$T/log" || { cat "$T/log"; return 1; }
		cmp "$T/one.npy" "$T/all.npy"
		run -0 grep -c '^clmatmul: device: ' "$T/log"
		assert_output "$ngpu"
		run -0 grep -c '^clmatmul: device [0-9]*:[0-9]*: [0-9]* of [0-9]* blocks' "$T/log"
		assert_output "$ngpu"
	done
	run -0 py "$REF/clmatmul_ref.py" "$T/a.npy" "$T/b.npy" "$T/all.npy"
	assert_output ok
}

@test "a failed run leaves no output file" {
	run -1 clmatmul -o "$T/out.txt" "$D/a.txt" "$D/a.txt"
	[ ! -e "$T/out.txt" ]
}

# --precision tf32: NVIDIA's tensor cores (GPU only), and a clear error elsewhere.

@test "--precision tf32 on a device without NVIDIA's tensor cores is an error naming it" {
	run -1 --separate-stderr clmatmul -d cpu:0 --precision tf32 "$D/a.txt" "$D/b.txt"
	[[ $stderr == "clmatmul: --precision tf32: "*" is not an NVIDIA GPU; "* ]]
	[ -z "$output" ]
	run -1 --separate-stderr clmatmul -d cpu:0 --precision tf32 --bench 64
	[[ $stderr == *" is not an NVIDIA GPU; "* ]]
}

@test "--precision tf32 with --double, or an unknown precision, is a usage error" {
	run -2 --separate-stderr clmatmul --precision tf32 --double "$D/a.txt" "$D/b.txt"
	[[ $stderr == *"--precision tf32 rounds float32 inputs; it does not go with --double"* ]]
	run -2 --separate-stderr clmatmul --precision fp16 "$D/a.txt" "$D/b.txt"
	[[ $stderr == *"invalid value for --precision: 'fp16'"* ]]
}

@test "--precision fp32 is the default: the same bytes as without it" {
	gen "$T/a.npy" 127 137 1
	gen "$T/b.npy" 137 131 2
	run -0 clmatmul -O npy -o "$T/default.npy" "$T/a.npy" "$T/b.npy"
	run -0 clmatmul --precision fp32 -O npy -o "$T/fp32.npy" "$T/a.npy" "$T/b.npy"
	cmp "$T/default.npy" "$T/fp32.npy"
}

@test "tf32: prime, tall, wide and multi-tile shapes are within TF32's bound of numpy" {
	require_gpu
	for s in "127 131 137" "1 1 300" "300 300 1" "1 77 5" "1000 3 20" "3 1000 20" \
	    "5 7 2000" "129 257 515"; do
		run -0 mm $s --precision tf32
		assert_output ok
	done
}

@test "tf32: each transpose combination is within TF32's bound of numpy" {
	require_gpu
	run -0 mm 127 131 137 --precision tf32 --transpose-a
	assert_output ok
	run -0 mm 127 131 137 --precision tf32 --transpose-b
	assert_output ok
	run -0 mm 127 131 137 --precision tf32 --transpose-a --transpose-b
	assert_output ok
}

@test "tf32: alpha and beta with C0 are within TF32's bound of numpy" {
	require_gpu
	run -0 mm 65 70 75 --precision tf32 --alpha -0.5 --beta 2
	assert_output ok
	run -0 mm 200 300 250 --precision tf32 --transpose-a --transpose-b --alpha 3 --beta -1
	assert_output ok
}

@test "tf32: the result is TF32 inputs summed in float32, beyond float32's own bound" {
	require_gpu
	run -0 mm 127 131 137 --precision tf32 --transpose-b --alpha 0.5 --beta 2
	assert_output ok
	# against inputs rounded to TF32 in numpy: only float32 sums' error is left
	run -0 py "$REF/clmatmul_ref.py" --tf32-inputs --tb --alpha 0.5 --beta 2 \
	    --c0 "$T/c0.npy" "$T/a.npy" "$T/b.npy" "$T/c.npy"
	assert_output ok
	# float32 inputs' bound rejects it: the tensor cores did round the inputs
	run -1 py "$REF/clmatmul_ref.py" --tb --alpha 0.5 --beta 2 --c0 "$T/c0.npy" \
	    "$T/a.npy" "$T/b.npy" "$T/c.npy"
	assert_output --partial "entries off"
}

@test "tf32: adversarial inputs (cancellation, rows of norm 1e12, a dominant dimension) stay within TF32's bound, every staging" {
	require_gpu
	gen_adv 200 136 520
	local s stagings="async local"
	hopper && stagings+=" wgmma"
	for s in $stagings; do
		clmatmul --precision tf32 --staging $s -O npy -o "$T/c.npy" "$T/a.npy" "$T/b.npy"
		run -0 py "$REF/clmatmul_ref.py" --tf32 "$T/a.npy" "$T/b.npy" "$T/c.npy"
		assert_output ok
		run -0 py "$REF/clmatmul_ref.py" --tf32-inputs "$T/a.npy" "$T/b.npy" "$T/c.npy"
		assert_output ok
	done
}

@test "tf32: blocked runs under a small --max-device-mem equal the in-core result exactly" {
	require_gpu
	gen "$T/a.npy" 700 300 1
	gen "$T/b.npy" 260 700 2
	gen "$T/c0.npy" 300 260 3
	run -0 blocked 150K --precision tf32 --staging async --transpose-a --transpose-b \
	    --alpha 0.5 --beta 2 -c "$T/c0.npy"
	run -0 py "$REF/clmatmul_ref.py" --tf32 --ta --tb --alpha 0.5 --beta 2 \
	    --c0 "$T/c0.npy" "$T/a.npy" "$T/b.npy" "$T/c.npy"
	assert_output ok
}

@test "tf32: -v says the tensor-core kernel ran" {
	require_gpu
	run -0 --separate-stderr clmatmul -v --precision tf32 --staging async -o "$T/c.txt" \
	    "$D/a.txt" "$D/b.txt"
	[[ $stderr == *"kernel parameters: tile="*" precision=tf32"* ]]
	[[ $stderr == *"precision: tf32: kernel gemm_tf32, mma.sync m16n8k8 on the tensor cores"* ]]
	[[ $stderr == *"-D USE_TF32=1"* ]]
	run -0 py -c "import numpy as np; print(np.loadtxt('$T/c.txt').tolist())"
	assert_output "[[58.0, 64.0], [139.0, 154.0]]"
}

@test "tf32: --bench --verify passes with TF32's bound, sampled and in full" {
	require_gpu
	run -0 --separate-stderr clmatmul --bench 1000 --precision tf32 --verify --repeat 2
	assert_output --regexp '^m=1000 n=1000 k=1000 type=tf32 blocks=1 reps=2 .* source=device '
	run -0 --separate-stderr clmatmul --bench 67x129x250 --precision tf32 --transpose-a \
	    --transpose-b --alpha 2 --beta -1 --verify --repeat 1
	assert_output --regexp '^m=67 n=129 k=250 type=tf32 '
	run -0 --separate-stderr clmatmul --bench 300x260x700 --precision tf32 --staging async --tile 32 \
	    --item 4 --tile-k 16 --max-device-mem 150K --verify --repeat 1
	assert_output --regexp 'type=tf32 blocks=(2[0-9]|[3-9][0-9]) .* source=host'
}

@test "tf32: forced kernel parameters that do not fit its MMA tiles are a usage error" {
	require_gpu
	run -2 --separate-stderr clmatmul --precision tf32 --staging async --item 3 "$D/a.txt" \
	    "$D/b.txt"
	[[ $stderr == *"do not work: --precision tf32 needs an even item"* ]]
	run -2 --separate-stderr clmatmul --precision tf32 --staging direct "$D/a.txt" "$D/b.txt"
	[[ $stderr == *"do not work: --precision tf32 stages slices in local memory"* ]]
	# 128 x 128 slices 32 deep: 33 KB a slice, not two in NVIDIA's 48 KB
	run -2 --separate-stderr clmatmul --precision tf32 --staging async --tile-k 32 \
	    "$D/a.txt" "$D/b.txt"
	[[ $stderr == *"do not work: "*" bytes of local memory for two slices, the device has "* ]]
}

# The async kernel (cp.async, fragments rounded as they are read; ldmatrix for A as
# stored and for B transposed) and the register-staged one (rounded on the way into
# local memory) multiply the same rounded numbers in the same order.
@test "tf32: --staging async and local give the same bytes, each transpose and odd n-tiles" {
	require_gpu
	for t in "" --transpose-a --transpose-b "--transpose-a --transpose-b"; do
		for p in "" "--tile 64x48 --item 8x6" "--tile 32 --item 4 --tile-k 16"; do
			run -0 mm 127 131 137 --precision tf32 --staging async $t $p --alpha 0.5 \
			    --beta 2
			assert_output ok
			mv "$T/c.npy" "$T/async.npy"
			run -0 mm 127 131 137 --precision tf32 --staging local $t $p --alpha 0.5 \
			    --beta 2
			assert_output ok
			cmp "$T/async.npy" "$T/c.npy"
		done
	done
}

@test "tf32: -v names the staging, wgmma by default on Hopper and async elsewhere" {
	require_gpu
	run -0 --separate-stderr clmatmul -v --precision tf32 -o "$T/c.txt" "$D/a.txt" "$D/b.txt"
	if hopper; then
		[[ $stderr == *"staging=wgmma"*"precision=tf32"* ]]
		[[ $stderr == *"kernel gemm_wgmma, wgmma.mma_async m64n256k8"* ]]
		[[ $stderr == *"building clmatmul.cl again from its PTX for sm_90a"* ]]
	else
		[[ $stderr == *"staging=async"*"precision=tf32"* ]]
	fi
	run -0 --separate-stderr clmatmul -v --precision tf32 --staging async -o "$T/c.txt" \
	    "$D/a.txt" "$D/b.txt"
	[[ $stderr == *"staging=async"*"precision=tf32"* ]]
	[[ $stderr == *"slices copied by cp.async"* ]]
	[[ $stderr == *"-D TF32_ASYNC=1 -D NSTAGE="* ]]
	run -0 --separate-stderr clmatmul -v --precision tf32 --staging local -o "$T/c.txt" \
	    "$D/a.txt" "$D/b.txt"
	[[ $stderr == *"staging=local"*"precision=tf32"* ]]
	[[ $stderr == *"slices staged through registers"* ]]
}

@test "--staging async or wgmma without --precision tf32 is a usage error" {
	run -2 --separate-stderr clmatmul -d cpu:0 --staging async "$D/a.txt" "$D/b.txt"
	[[ $stderr == *"do not work: --staging async is --precision tf32's"* ]]
	run -2 --separate-stderr clmatmul -d cpu:0 --staging wgmma "$D/a.txt" "$D/b.txt"
	[[ $stderr == *"do not work: --staging wgmma is --precision tf32's"* ]]
}

# gemm_wgmma (Hopper only): its own sums' order, so it is checked against numpy within
# TF32's bound, and against TF32-rounded inputs within float32 sums' bound (which a
# kernel that truncated instead of rounding would miss), over every tile it takes.
@test "tf32 wgmma: each tile shape, transpose and alpha/beta is within TF32's bound" {
	require_hopper
	for p in "" "--tile 128x128 --item 2x32 --tile-k 16" "--tile 64x64 --item 2x16 --tile-k 32" \
	    "--tile 256x192 --item 2x48"; do
		for t in "" --transpose-a --transpose-b "--transpose-a --transpose-b"; do
			run -0 mm 200 300 250 --precision tf32 --staging wgmma $p $t --alpha 0.5 \
			    --beta 2
			assert_output ok
		done
	done
	run -0 py "$REF/clmatmul_ref.py" --tf32-inputs --ta --tb --alpha 0.5 --beta 2 \
	    --c0 "$T/c0.npy" "$T/a.npy" "$T/b.npy" "$T/c.npy"
	assert_output ok
}

@test "tf32 wgmma: blocked runs, with K in panels, equal the in-core result exactly" {
	require_hopper
	gen "$T/a.npy" 700 300 1
	gen "$T/b.npy" 260 700 2
	gen "$T/c0.npy" 300 260 3
	for p in "--tile 128x128 --item 2x32 --tile-k 8" "--tile 64x64 --item 2x16 --tile-k 32"; do
		run -0 blocked 400K --precision tf32 --staging wgmma $p --transpose-a \
		    --transpose-b --alpha 0.5 --beta 2 -c "$T/c0.npy"
		run -0 py "$REF/clmatmul_ref.py" --tf32 --ta --tb --alpha 0.5 --beta 2 \
		    --c0 "$T/c0.npy" "$T/a.npy" "$T/b.npy" "$T/c.npy"
		assert_output ok
	done
}

@test "tf32 wgmma: tiles it cannot take are a usage error" {
	require_hopper
	run -2 --separate-stderr clmatmul --precision tf32 --staging wgmma --tile 96x128 \
	    "$D/a.txt" "$D/b.txt"
	[[ $stderr == *"do not work: --staging wgmma takes tiles of 64, 128, 192 or 256 rows"* ]]
	run -2 --separate-stderr clmatmul --precision tf32 --staging wgmma --tile 128x128 \
	    --item 4x32 "$D/a.txt" "$D/b.txt"
	[[ $stderr == *"do not work: --staging wgmma's item is 2 x (tile columns / 4)"* ]]
	# 256 x 256 slices 16 deep: 32 KB a slice, not two in NVIDIA's 48 KB
	run -2 --separate-stderr clmatmul --precision tf32 --staging wgmma --tile 256x256 \
	    --item 2x64 --tile-k 16 "$D/a.txt" "$D/b.txt"
	[[ $stderr == *"do not work: "*" bytes of local memory for two slices, the device has "* ]]
}

@test "tf32 wgmma: a GPU without it says so" {
	require_gpu
	hopper && skip "this GPU has wgmma"
	run -2 --separate-stderr clmatmul --precision tf32 --staging wgmma "$D/a.txt" "$D/b.txt"
	[[ $stderr == *"do not work: --staging wgmma needs Hopper's wgmma"* ]]
}

@test "--header[=N] leaves out each text matrix's first lines, and messages count them" {
	gen "$T/a.txt" 7 5 41
	gen "$T/b.npy" 5 3 42
	{ echo 'c1 c2 c3 c4 c5'; cat "$T/a.txt"; } > "$T/ah.txt"
	{ printf '7,5\n"a","b"\n'; tr ' ' , < "$T/a.txt"; } > "$T/ah2.csv"
	clmatmul -O npy "$T/a.txt" "$T/b.npy" > "$T/c.npy"
	clmatmul -O npy --header "$T/ah.txt" "$T/b.npy" > "$T/c1.npy"
	clmatmul -O npy --header=2 "$T/ah2.csv" "$T/b.npy" > "$T/c2.npy"
	run -0 py -c '
import sys, numpy as np
a = np.loadtxt(sys.argv[1], skiprows=1)
b = np.load(sys.argv[2])
want = np.load(sys.argv[3])
for f in sys.argv[4:]:
    print(np.array_equal(np.load(f), want), np.allclose(want, a @ b, rtol=1e-5, atol=1e-5))' \
	    "$T/ah.txt" "$T/b.npy" "$T/c.npy" "$T/c1.npy" "$T/c2.npy"
	assert_output "$(printf 'True True\nTrue True')"
	# without it the header is a bad line; with it, a bad line is numbered in the file
	run -1 --separate-stderr clmatmul "$T/ah.txt" "$T/b.npy"
	[ "$stderr" = "clmatmul: $T/ah.txt:1: column 1: not a number: 'c1'" ]
	sed -i '5s/^[^ ]*/oops/' "$T/ah.txt"
	run -1 --separate-stderr clmatmul --header "$T/ah.txt" "$T/b.npy"
	[ "$stderr" = "clmatmul: $T/ah.txt:5: column 1: not a number: 'oops'" ]
	run -2 --separate-stderr clmatmul --header=x "$T/ah.txt" "$T/b.npy"
	[[ "$stderr" == *"invalid value for --header: 'x'"* ]]
}

# The man page's EXAMPLES, as written there (run from the project root).

@test "every row of the tuning table passes its legality checks, and rows that break them are rejected" {
	run -0 tunerows clmatmul
	assert_line --index 0 "clmatmul: 9 rows pass"
	assert_line --index 1 --partial "broken p.tn = 32: rejected: "
	refute_output --partial ": passes"
	assert_equal "$(grep -c ': rejected: ' <<< "$output")" 14
}

@test "example: the product of two text matrices" {
	cd "$ACCELKIT_ROOT"
	run -0 --separate-stderr clmatmul testdata/clmatmul/a.txt testdata/clmatmul/b.txt
	assert_output "$(printf '58\t64\n139\t154')"
}

@test "example: the product on the host, then on PoCL with its program from the cache" {
	cd "$ACCELKIT_ROOT"
	run -0 --separate-stderr clmatmul -d cpu testdata/clmatmul/a.txt testdata/clmatmul/b.txt
	assert_output "$(printf '58\t64\n139\t154')"
	export XDG_CACHE_HOME=$T/xdg
	clmatmul -d cpu:0 testdata/clmatmul/a.txt testdata/clmatmul/b.txt > /dev/null
	run -0 bash -c "clmatmul -d cpu:0 -v testdata/clmatmul/a.txt testdata/clmatmul/b.txt \
	    2>&1 >/dev/null | grep 'program cache'"
	assert_output --regexp "^clmatmul: program cache: $T/xdg/accelkit/cl/clmatmul-[0-9a-f]{32}\.bin: used$"
}

@test "example: alpha A B + beta C0" {
	cd "$ACCELKIT_ROOT"
	run -0 --separate-stderr clmatmul --alpha 2 --beta -1 -c testdata/clmatmul/c.txt \
	    testdata/clmatmul/a.txt testdata/clmatmul/b.txt
	assert_output "$(printf '115\t128\n278\t307')"
}

@test "example: A times its transpose" {
	cd "$ACCELKIT_ROOT"
	run -0 --separate-stderr clmatmul --transpose-b testdata/clmatmul/a.txt testdata/clmatmul/a.txt
	assert_output "$(printf '14\t32\n32\t77')"
}

@test "example: the Gram matrix of scikit-learn's Linnerud data, past its header line" {
	f=$(py -c 'import os, sklearn.datasets as d; print(os.path.join(os.path.dirname(d.__file__), "data", "linnerud_exercise.csv"))')
	[ -f "$f" ] || skip "this scikit-learn has no linnerud_exercise.csv"
	run -0 --separate-stderr clmatmul --header --transpose-a "$f" "$f"
	assert_output "$(py -c '
import sys, numpy as np
x = np.loadtxt(sys.argv[1], skiprows=1)
print("\n".join("\t".join("%d" % v for v in r) for r in x.T @ x))' "$f")"
	assert_line --index 0 "$(printf '2317\t31881\t15840')"
}

@test "example: NPY output" {
	mkdir -p "$T/testdata" && cp -r "$D" "$T/testdata/" && cd "$T"
	run -0 clmatmul -O npy -o c.npy testdata/clmatmul/a.txt testdata/clmatmul/b.txt
	run -0 py -c "import numpy as np; print(np.load('c.npy').tolist())"
	assert_output "[[58.0, 64.0], [139.0, 154.0]]"
}

@test "example: a benchmark that checks its result" {
	run -0 --separate-stderr clmatmul --bench 512 --verify --repeat 3
	assert_output --regexp '^m=512 n=512 k=512 .* gflops=[0-9.]+ '
}

@test "example: a benchmark in blocks from host memory" {
	run -0 --separate-stderr clmatmul --bench 1024 --max-device-mem 6M --verify --repeat 1
	assert_output --regexp 'blocks=([4-9]|[1-9][0-9]+) .* source=host'
}

@test "example: two CPU devices of PoCL sharing a product in blocks, checked" {
	POCL_DEVICES='pthread pthread' run -0 --separate-stderr clmatmul -d cpu:all -v \
	    --bench 1024 --max-device-mem 6M --verify --repeat 1
	assert_output --regexp '^m=1024 n=1024 k=1024 type=float32 blocks=([2-9]|[1-9][0-9]+) .* source=host '
	[[ $stderr == *"verify: "* ]]
	[[ $stderr =~ "device 0:0: "[0-9]+" of "[0-9]+" blocks" ]]
	[[ $stderr =~ "device 0:1: "[0-9]+" of "[0-9]+" blocks" ]]
}

@test "example: all the GPUs of the host, each holding at most 8 GiB, with each one's share" {
	require_gpu
	gen "$T/a.npy" 1000 900 1
	gen "$T/b.npy" 900 1100 2
	cd "$T"
	clmatmul -d gpu -O npy -o one.npy a.npy b.npy
	run -0 --separate-stderr clmatmul -d gpu:all -v --max-device-mem 8G -O npy -o c.npy a.npy b.npy
	[[ $stderr == *"plan: "* ]]
	cmp one.npy c.npy
	run -0 py "$REF/clmatmul_ref.py" a.npy b.npy c.npy
	assert_output ok
}

@test "example: the tensor cores in TF32, checked within TF32's bound" {
	require_gpu
	run -0 --separate-stderr clmatmul --bench 4096 --precision tf32 --verify --repeat 3
	assert_output --regexp '^m=4096 n=4096 k=4096 type=tf32 .* gflops=[0-9.]+ '
}

# ---- -d auto by the work, and pinned host buffers (issue 12) ----

@test "auto on the tiny example runs on the host without OpenCL and -v says why" {
	run -0 --separate-stderr clmatmul -d auto -v "$D/a.txt" "$D/b.txt"
	assert_output "$(printf '58\t64\n139\t154')"
	# 2 x 2 x 3 multiply-adds
	assert_regex "$stderr" $'(^|\n)clmatmul: auto: host, 12 multiply-adds, below [0-9.e+]+ where OpenCL\'s start pays \\(no OpenCL loaded\\)'
	assert_regex "$stderr" $'(^|\n)clmatmul: device: host \\(cpu, native C on [0-9]+ threads?, no OpenCL\\)'
}

@test "a device given with -d is opened as given, without weighing the work" {
	run -0 --separate-stderr clmatmul -d cpu -v "$D/a.txt" "$D/b.txt"
	assert_output "$(printf '58\t64\n139\t154')"
	[[ $stderr != *"auto:"* ]]
	assert_regex "$stderr" $'(^|\n)clmatmul: device: [^\n]* \\(cpu, '
}

@test "auto runs testdata on the CPU device and a 16384^3 product on the GPU, with both estimates" {
	require_gpu
	run -0 --separate-stderr clmatmul -d auto -v "$D/a.txt" "$D/b.txt"
	assert_output "$(printf '58\t64\n139\t154')"
	assert_regex "$stderr" $'(^|\n)clmatmul: auto: host, 12 multiply-adds'
	# past the host's share: the OpenCL CPU device or the GPU by their estimates
	run -0 --separate-stderr clmatmul -d auto -v --bench 1024 --repeat 1
	assert_regex "$stderr" $'(^|\n)clmatmul: auto: cpu, estimated [0-9.e+-]+ s on [0-9]+ threads? \\(1.07e\\+09 multiply-adds\\) against [0-9.e+-]+ s on the GPU'
	# 8192^3 is not enough: 64 threads' estimate beat the GPU's start on a 4-GPU host
	run -0 --separate-stderr clmatmul -d auto -v --bench 16384 --repeat 1 --verify
	assert_regex "$stderr" $'(^|\n)clmatmul: auto: gpu, estimated [0-9.e+-]+ s \\([^)]*, 4.4e\\+12 multiply-adds\\) against [0-9.e+-]+ s on [0-9]+ CPU threads?'
	assert_regex "$stderr" $'(^|\n)clmatmul: device: [^\n]* \\(gpu, '
	assert_output --regexp '^m=16384 n=16384 k=16384 type=float32 .* source=device '
}

# ---- -d cpu: the host's native path, and OpenCL loaded only when used (issue 35) ----

# maps FILE CMD...: CMD with tests/mapshim.c preloaded; FILE gets the OpenCL, PoCL
# and NVIDIA libraries it had mapped at its exit (empty: none).
maps() {
	local f=$1
	shift
	: > "$f"
	# under SANITIZE=1 ASan wants to be first of the libraries; the shim needs none of it
	MAPSHIM_OUT=$f LD_PRELOAD="$ACCELKIT_BUILD/test/mapshim.so" \
	    ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0 "$@"
}

@test "-d cpu computes on the host within float32's bound of numpy: shapes, transposes, alpha and beta" {
	mm 1 1 1 -d cpu
	mm 127 131 137 -d cpu
	mm 300 7 65 -d cpu --transpose-a
	mm 5 200 33 -d cpu --transpose-b
	mm 64 48 100 -d cpu --transpose-a --transpose-b --alpha -0.5 --beta 2
}

@test "-d cpu --double is within float64's bound of numpy" {
	mm 70 90 110 -d cpu --double
}

@test "-d cpu and adversarial inputs stay within float32's bound" {
	gen_adv 96 80 200
	run -0 clmatmul -d cpu -O npy -o "$T/c.npy" "$T/a.npy" "$T/b.npy"
	run -0 py "$REF/clmatmul_ref.py" "$T/a.npy" "$T/b.npy" "$T/c.npy"
	assert_output ok
}

@test "-d cpu gives the same bytes on 1 and 2 threads" {
	gen "$T/a.npy" 150 90 1
	gen "$T/b.npy" 90 70 2
	clmatmul -d cpu -j 1 -O npy -o "$T/c1.npy" "$T/a.npy" "$T/b.npy"
	clmatmul -d cpu -j 2 -O npy -o "$T/c2.npy" "$T/a.npy" "$T/b.npy"
	cmp "$T/c1.npy" "$T/c2.npy"
}

@test "-d cpu --bench --verify times the host's multiply" {
	run -0 --separate-stderr clmatmul -d cpu --bench 64x48x80 --beta 1 --repeat 2 --verify
	assert_output --regexp '^m=64 n=48 k=80 type=float32 blocks=1 reps=2 .* source=host device=host$'
}

@test "-d cpu with kernel parameters or --transfers is a usage error naming cpu:0" {
	run -2 --separate-stderr clmatmul -d cpu --tile 32 "$D/a.txt" "$D/b.txt"
	assert_regex "$stderr" "-d cpu multiplies on the host without OpenCL \\(cpu:0 is"
	run -2 --separate-stderr clmatmul -d cpu --transfers packed "$D/a.txt" "$D/b.txt"
	assert_regex "$stderr" "kernel parameters and --transfers are the OpenCL kernel's"
}

@test "-d cpu --precision tf32 is an error naming the tensor cores" {
	run -1 --separate-stderr clmatmul -d cpu --precision tf32 "$D/a.txt" "$D/b.txt"
	assert_regex "$stderr" "tf32: the host \\(-d cpu\\) has no NVIDIA tensor cores"
}

@test "a small run on the host maps no OpenCL library, and an OpenCL run is seen mapping one" {
	maps "$T/host" clmatmul -d cpu "$D/a.txt" "$D/b.txt" > "$T/c.host"
	maps "$T/auto" clmatmul -d auto "$D/a.txt" "$D/b.txt" > "$T/c.auto"
	maps "$T/bench" clmatmul -d auto --bench 100 --repeat 1 --verify > /dev/null
	assert_equal "$(cat "$T/host" "$T/auto" "$T/bench")" ""
	# the check itself: a run on PoCL maps libOpenCL and PoCL's library
	maps "$T/pocl" clmatmul -d cpu:0 "$D/a.txt" "$D/b.txt" > "$T/c.pocl"
	grep -q 'libOpenCL' "$T/pocl"
	grep -q 'pocl' "$T/pocl"
	run -0 cat "$T/c.host" "$T/c.auto" "$T/c.pocl"
	assert_output "$(printf '58\t64\n139\t154\n58\t64\n139\t154\n58\t64\n139\t154')"
}

@test "cpu:N points the ICD loader at the one non-NVIDIA ICD, and -v says so" {
	# the lent GPU machine's image names its platforms in OCL_ICD_FILENAMES (its
	# /etc/OpenCL/vendors/pocl.icd names a library it lacks): a choice left alone
	[ -z "${OCL_ICD_FILENAMES:-}" ] ||
		skip "OCL_ICD_FILENAMES is set here (the user's choice of platforms, not narrowed)"
	run -0 --separate-stderr env -u OCL_ICD_VENDORS clmatmul -d cpu:0 -v "$D/a.txt" "$D/b.txt"
	assert_regex "$stderr" $'(^|\n)clmatmul: OpenCL: CPU devices only: the ICD loader reads /[^\n]*/accelkit/icd-cpu/[^/\n]*\\.icd alone \\([0-9]+ NVIDIA ICDs? left out\\)'
	# a choice of the user's is left alone
	run -0 --separate-stderr env OCL_ICD_VENDORS=/etc/OpenCL/vendors clmatmul -d cpu:0 -v "$D/a.txt" "$D/b.txt"
	[[ $stderr != *"ICD loader reads"* ]]
}

@test "a CPU spec narrows the user's OCL_ICD_FILENAMES to the entries that are not GPU vendors' libraries, P:D those after P, and -v says so" {
	# a fake NVIDIA library: loaded, it leaves a mark (a loader that does not
	# honour OCL_ICD_FILENAMES, as ocl-icd 2.3.1, never loads it)
	mkdir "$T/fake"
	printf '#include <stdio.h>\n__attribute__((constructor)) static void mark(void) { fclose(fopen("%s/loaded", "w")); }\n' \
	    "$T" > "$T/fake.c"
	cc -shared -fPIC -o "$T/fake/libnvidia-opencl.so.1" "$T/fake.c"
	local want
	want=$(printf '58\t64\n139\t154')
	# the PoCL library by the name its .icd gives
	local pocl
	pocl=$(head -n 1 /etc/OpenCL/vendors/*pocl*.icd 2>/dev/null || echo libpocl.so.2)
	run -0 --separate-stderr env OCL_ICD_FILENAMES="$T/fake/libnvidia-opencl.so.1:$pocl:libamdocl64.so" \
	    clmatmul -d cpu:0 -v "$D/a.txt" "$D/b.txt"
	assert_output "$want"
	assert_regex "$stderr" "(^|"$'\n'")clmatmul: OpenCL: cpu:0: OCL_ICD_FILENAMES narrowed to $pocl \\(left out: $T/fake/libnvidia-opencl.so.1, libamdocl64.so\\)"
	[ ! -e "$T/loaded" ]
	# P:D: the entries after P alone, so P keeps its place
	run -0 --separate-stderr env OCL_ICD_FILENAMES="$pocl:$T/fake/libnvidia-opencl.so.1" \
	    clmatmul -d 0:0 -v "$D/a.txt" "$D/b.txt"
	assert_output "$want"
	assert_regex "$stderr" "(^|"$'\n'")clmatmul: OpenCL: 0:0: OCL_ICD_FILENAMES narrowed to $pocl \\(left out: $T/fake/libnvidia-opencl.so.1\\)"
	[ ! -e "$T/loaded" ]
	# (1:0 may not exist: a fake library is no platform; only the narrowing counts)
	run --separate-stderr env OCL_ICD_FILENAMES="$T/fake/libnvidia-opencl.so.1:$pocl" \
	    clmatmul -d 1:0 -v "$D/a.txt" "$D/b.txt"
	[[ $stderr != *"narrowed"* ]]
	# gpu and auto are left alone; where the loader honours the variable, the fake
	# library is then loaded, which shows that the checks above could fail
	env OCL_ICD_FILENAMES="$T/fake/libnvidia-opencl.so.1:$pocl" clmatmul -d gpu -v \
	    "$D/a.txt" "$D/b.txt" > /dev/null 2> "$T/err" || true
	run -0 cat "$T/err"
	refute_output --partial "narrowed"
	if [ -e "$T/loaded" ]; then
		echo "# this loader honours OCL_ICD_FILENAMES: the narrowing was proved" >&3
	fi
}

@test "C is written by rows as the multiply makes them final, beside it: bands in core, pieces and blocks, text and NPY, numpy's product" {
	gen "$T/a.npy" 1100 300 1
	gen "$T/b.npy" 300 700 2
	# in core: bands of whole rows, each written as it comes home
	run -0 --separate-stderr clmatmul -v -O npy -o "$T/c.npy" "$T/a.npy" "$T/b.npy"
	assert_regex "$stderr" $'(^|\n)clmatmul: plan: [2-4] x 1 blocks of C '
	assert_regex "$stderr" $'(^|\n)clmatmul: write: 1100 of 1100 rows of C final before the multiply\'s end, said in [2-9] runs to the writer\'s thread'
	run -0 py "$REF/clmatmul_ref.py" "$T/a.npy" "$T/b.npy" "$T/c.npy"
	assert_output ok
	# text: the same numbers, every row
	clmatmul -o "$T/c.txt" "$T/a.npy" "$T/b.npy"
	run -0 py -c "import numpy as np; print(np.array_equal(np.loadtxt('$T/c.txt', ndmin=2).astype(np.float32), np.load('$T/c.npy')))"
	assert_output True
	# a staging ring of tiny buffers: rows said a piece at a time, the same bytes
	ACCELKIT_CLMATMUL_STAGE=20000 clmatmul -v -O npy -o "$T/p.npy" "$T/a.npy" "$T/b.npy" 2> "$T/err"
	cmp "$T/c.npy" "$T/p.npy"
	run -0 sed -n 's/^clmatmul: write: .* said in \([0-9]*\) runs.*/\1/p' "$T/err"
	[ "$output" -gt 10 ] || fail "rows said in $output runs, not a piece at a time"
	# blocks of rows and columns under a bound, to standard output: the same bytes
	ACCELKIT_CLMATMUL_STAGE=20000 clmatmul -v --max-device-mem 1M "$T/a.npy" "$T/b.npy" \
	    > "$T/b.txt" 2> "$T/err"
	run -0 grep -E '^clmatmul: plan: [0-9]+ x ([2-9]|[1-9][0-9]+) blocks of C' "$T/err"
	cmp "$T/c.txt" "$T/b.txt"
	# --verify: C is written whole once checked, none of it before
	run -0 --separate-stderr clmatmul -v --verify -O npy -o "$T/v.npy" "$T/a.npy" "$T/b.npy"
	assert_regex "$stderr" $'(^|\n)clmatmul: write: 0 of 1100 rows of C final before'
	cmp "$T/c.npy" "$T/v.npy"
}

@test "a large auto run opens OpenCL beside the read and gives the named device's bytes" {
	gen "$T/a.npy" 1400 1400 1
	gen "$T/b.npy" 1400 1400 2
	run -0 --separate-stderr clmatmul -d auto -v -O npy -o "$T/auto.npy" "$T/a.npy" "$T/b.npy"
	assert_regex "$stderr" $'(^|\n)clmatmul: auto: inputs of [0-9]+ bytes, about [0-9.e+]+ multiply-adds: OpenCL opened beside the read'
	assert_regex "$stderr" $'(^|\n)clmatmul: time open device \\(waited\\) '
	run -0 py "$REF/clmatmul_ref.py" "$T/a.npy" "$T/b.npy" "$T/auto.npy"
	assert_output ok
}

# ---- the program cache (common/clbuild.c clx_build) ----

# cached [OPTIONS...]: clmatmul -d cpu:0 -v on the testdata example with the cache in
# $T/xdg (PoCL's own cache where it was: setup), C to $T/c.txt, -v's lines to $T/log.
cached() {
	XDG_CACHE_HOME=$T/xdg clmatmul -d cpu:0 -v "$@" -o "$T/c.txt" "$D/a.txt" "$D/b.txt" 2> "$T/log" ||
	    { cat "$T/log"; return 1; }
	[ "$(cat "$T/c.txt")" = "$(printf '58\t64\n139\t154')" ] || { echo "wrong C"; return 1; }
}

# cache_says WORD: -v's line of the program cache in $T/log ends with WORD
cache_says() {
	grep -qE "^clmatmul: program cache: $T/xdg/accelkit/cl/clmatmul-[0-9a-f]{32}\\.bin: $1" "$T/log" ||
	    { cat "$T/log"; echo "not: $1"; return 1; }
}

@test "the program cache: a first build is written under XDG_CACHE_HOME, the next run uses it" {
	cached
	cache_says written
	[ "$(ls "$T/xdg/accelkit/cl" | wc -l)" = 1 ]
	cached
	cache_says used
	! grep -q "written" "$T/log"
}

@test "the program cache: a corrupt or truncated entry is rebuilt and written again" {
	cached
	local f
	f=$(ls "$T/xdg/accelkit/cl"/*.bin)
	# in the binary, which follows the key (the source and options) at the end
	printf 'XXXXXXXX' | dd of="$f" bs=1 seek=$(( $(stat -c %s "$f") - 1000 )) \
	    conv=notrunc status=none
	cached
	cache_says "corrupt \\(its checksum is wrong\\)"
	cache_says written
	cached
	cache_says used
	head -c 3000 "$f" > "$f.short" && mv "$f.short" "$f"
	cached
	cache_says "not an entry of this cache"
	cache_says written
	printf 'garbage' > "$f"
	cached
	cache_says "(not an entry of this cache|unreadable or short)"
	cached
	cache_says used
}

@test "the program cache: runs at once each get the right product and leave one whole entry" {
	local i
	for i in 1 2 3 4; do
		XDG_CACHE_HOME=$T/xdg clmatmul -d cpu:0 -o "$T/c$i.txt" "$D/a.txt" "$D/b.txt" &
	done
	wait
	for i in 1 2 3 4; do
		assert_equal "$(cat "$T/c$i.txt")" "$(printf '58\t64\n139\t154')"
	done
	run -0 ls -A "$T/xdg/accelkit/cl"
	assert_output --regexp '^clmatmul-[0-9a-f]{32}\.bin$'
	cached
	cache_says used
}

@test "the program cache: a run's write removes the temporaries that killed runs left, not a writer's" {
	local c=$T/xdg/accelkit/cl
	mkdir -p "$c"
	# a run killed in its write leaves NAME.bin.tmp.PID.N; one written just now may be
	# another run's, still writing
	echo part > "$c/clmatmul-0123.bin.tmp.4242.0"
	touch -d '1 hour ago' "$c/clmatmul-0123.bin.tmp.4242.0"
	echo part > "$c/clmatmul-4567.bin.tmp.4343.0"
	cached
	cache_says written
	[ ! -e "$c/clmatmul-0123.bin.tmp.4242.0" ]
	[ -e "$c/clmatmul-4567.bin.tmp.4343.0" ]
	# a hit writes nothing, and sweeps nothing
	touch -d '1 hour ago' "$c/clmatmul-4567.bin.tmp.4343.0"
	cached
	cache_says used
	[ -e "$c/clmatmul-4567.bin.tmp.4343.0" ]
}

@test "the program cache: other build options or another source make another entry" {
	cached
	cached --tile-k 64
	cache_says written
	[ "$(ls "$T/xdg/accelkit/cl" | wc -l)" = 2 ]
	mkdir "$T/k"
	cp "$ACCELKIT_ROOT"/kernels/clmatmul.cl "$ACCELKIT_ROOT"/kernels/clmatmul_wgmma.cl "$T/k"
	echo '/* changed */' >> "$T/k/clmatmul.cl"
	ACCELKIT_KERNEL_DIR=$T/k cached
	cache_says none
	cache_says written
	[ "$(ls "$T/xdg/accelkit/cl" | wc -l)" = 3 ]
	ACCELKIT_KERNEL_DIR=$T/k cached
	cache_says used
}

@test "ACCELKIT_CL_CACHE=0 neither reads nor writes the program cache" {
	ACCELKIT_CL_CACHE=0 cached
	! grep -q "program cache" "$T/log"
	[ ! -e "$T/xdg/accelkit/cl" ]
}

# pinned_runs OPTIONS...: $T/a.npy times $T/b.npy with OPTIONS, once with every host
# buffer pinned ($T/pinned.npy), once with none (ACCELKIT_PINNED_BYTES=0:
# $T/pageable.npy) and once with A pinned and the rest not ($T/mixed.npy); -v's lines
# in $T/log.pinned, $T/log.pageable and $T/log.mixed.
pinned_runs() {
	local abytes
	abytes=$(( $(stat -c %s "$T/a.npy") - 128 ))
	clmatmul -v "$@" -O npy -o "$T/pinned.npy" "$T/a.npy" "$T/b.npy" 2> "$T/log.pinned" &&
	ACCELKIT_PINNED_BYTES=0 clmatmul -v "$@" -O npy -o "$T/pageable.npy" "$T/a.npy" \
	    "$T/b.npy" 2> "$T/log.pageable" &&
	ACCELKIT_PINNED_BYTES=$abytes clmatmul -v "$@" -O npy -o "$T/mixed.npy" "$T/a.npy" \
	    "$T/b.npy" 2> "$T/log.mixed"
}

@test "A, B and C in pinned, pageable or mixed host buffers give the same bytes, in core and in blocks, rect and packed" {
	gen "$T/a.npy" 300 700 1
	gen "$T/b.npy" 700 260 2
	local k=(--tile 32 --item 4 --tile-k 16) t mem
	clmatmul "${k[@]}" -O npy -o "$T/whole.npy" "$T/a.npy" "$T/b.npy"
	run -0 py "$REF/clmatmul_ref.py" "$T/a.npy" "$T/b.npy" "$T/whole.npy"
	assert_output ok
	for t in rect packed; do
		for mem in 100G 150K; do
			echo "--transfers $t --max-device-mem $mem"
			pinned_runs "${k[@]}" --transfers $t --max-device-mem $mem
			cmp "$T/whole.npy" "$T/pinned.npy"
			cmp "$T/whole.npy" "$T/pageable.npy"
			cmp "$T/whole.npy" "$T/mixed.npy"
			run -0 cat "$T/log.pinned"
			assert_line "clmatmul: A: 840000 bytes in a mapped host buffer (pinned where the driver pins them)"
			assert_line "clmatmul: B: 728000 bytes in a mapped host buffer (pinned where the driver pins them)"
			assert_line "clmatmul: C: 312000 bytes in a mapped host buffer (pinned where the driver pins them)"
			run -0 cat "$T/log.pageable"
			assert_line "clmatmul: A: 840000 bytes in pageable memory (pinned memory would pass 0 bytes): slower copies"
			assert_line "clmatmul: C: 312000 bytes in pageable memory (pinned memory would pass 0 bytes): slower copies"
			run -0 cat "$T/log.mixed"
			assert_line "clmatmul: A: 840000 bytes in a mapped host buffer (pinned where the driver pins them)"
			assert_line "clmatmul: B: 728000 bytes in pageable memory (pinned memory would pass 840000 bytes): slower copies"
			if [ $t = packed ]; then
				assert_line --regexp '^clmatmul: a packed block: [0-9]+ bytes in pageable memory'
				run -0 cat "$T/log.pinned"
				assert_line --regexp '^clmatmul: a packed block: [0-9]+ bytes in a mapped host buffer'
			fi
			if [ $mem = 150K ]; then
				assert_line --regexp '^clmatmul: plan: ([2-9]|[1-9][0-9]+) x [0-9]+ blocks of C .* K in ([2-9]|[1-9][0-9]+) panels'
			fi
		done
	done
}

@test "beta C0 and transposes from pinned and pageable buffers give the same bytes in blocks" {
	gen "$T/a.npy" 700 300 1
	gen "$T/b.npy" 260 700 2
	gen "$T/c0.npy" 300 260 3
	local o=(--tile 32 --item 4 --tile-k 16 --transpose-a --transpose-b --alpha 0.5 --beta 2
	    -c "$T/c0.npy")
	clmatmul "${o[@]}" -O npy -o "$T/whole.npy" "$T/a.npy" "$T/b.npy"
	run -0 py "$REF/clmatmul_ref.py" --ta --tb --alpha 0.5 --beta 2 --c0 "$T/c0.npy" \
	    "$T/a.npy" "$T/b.npy" "$T/whole.npy"
	assert_output ok
	# (rect: the whole matrices pinned; auto stages its copies, below)
	pinned_runs "${o[@]}" --transfers rect --max-device-mem 150K
	cmp "$T/whole.npy" "$T/pinned.npy"
	cmp "$T/whole.npy" "$T/pageable.npy"
	cmp "$T/whole.npy" "$T/mixed.npy"
	run -0 cat "$T/log.pinned"
	assert_line "clmatmul: C0: 312000 bytes in a mapped host buffer (pinned where the driver pins them)"
	run -0 cat "$T/log.pageable"
	assert_line "clmatmul: C0: 312000 bytes in pageable memory (pinned memory would pass 0 bytes): slower copies"
}

@test "NPY through a pipe is read whole, as a file's is into a pinned buffer, with the same bytes" {
	gen "$T/a.npy" 90 70 1
	gen "$T/b.npy" 70 50 2
	clmatmul -O npy -o "$T/file.npy" "$T/a.npy" "$T/b.npy"
	cat "$T/a.npy" | clmatmul -v --transfers rect -O npy -o "$T/pipe.npy" - "$T/b.npy" \
	    2> "$T/log"
	cmp "$T/file.npy" "$T/pipe.npy"
	run -0 cat "$T/log"
	refute_line --partial "clmatmul: A: "
	assert_line "clmatmul: B: 14000 bytes in a mapped host buffer (pinned where the driver pins them)"
	run -0 py "$REF/clmatmul_ref.py" "$T/a.npy" "$T/b.npy" "$T/pipe.npy"
	assert_output ok
}

@test "NaN in NPY data, read beside the device's start or once it is open, is an error naming its row, with no output" {
	py -c "import numpy as np; a = np.ones((5, 3), np.float32); a[3, 1] = np.nan; np.save('$T/x.npy', a)"
	gen "$T/b.npy" 3 4 2
	run -1 --separate-stderr clmatmul -o "$T/c.npy" "$T/x.npy" "$T/b.npy"
	assert_regex "$stderr" "^clmatmul: $T/x.npy: .*NaN in NPY data \(row 4, column 2\)"
	[ ! -e "$T/c.npy" ]
	run -1 --separate-stderr clmatmul -o "$T/c.npy" "$T/b.npy" "$T/x.npy" --transpose-a \
	    --transpose-b
	assert_regex "$stderr" "^clmatmul: $T/x.npy: .*NaN in NPY data \(row 4, column 2\)"
	# rect: read into pinned memory once the device is open
	run -1 --separate-stderr clmatmul --transfers rect -o "$T/c.npy" "$T/x.npy" "$T/b.npy"
	assert_regex "$stderr" "^clmatmul: $T/x.npy: .*NaN in NPY data \(row 4, column 2\)"
	[ ! -e "$T/c.npy" ]
}

@test "a truncated NPY is an error before any device is used" {
	gen "$T/a.npy" 50 40 1
	gen "$T/b.npy" 40 30 2
	head -c 2000 "$T/a.npy" > "$T/short.npy"
	run -1 --separate-stderr clmatmul -v -d auto "$T/short.npy" "$T/b.npy"
	assert_regex "$stderr" "^clmatmul: $T/short.npy: .*NPY data is truncated"
	[[ $stderr != *"device:"* ]]
}

@test "--bench from pinned and pageable host matrices, rect and packed, in blocks, verifies" {
	local t
	for t in rect packed; do
		run -0 --separate-stderr clmatmul -v --bench 300x260x700 --tile 32 --item 4 \
		    --tile-k 16 --max-device-mem 150K --transfers $t --verify --repeat 1
		assert_output --regexp 'blocks=(2[0-9]|[3-9][0-9]) .* source=host'
		[[ $stderr == *"clmatmul: A: 840000 bytes in a mapped host buffer"* ]]
		ACCELKIT_PINNED_BYTES=0 run -0 --separate-stderr clmatmul -v --bench 300x260x700 \
		    --tile 32 --item 4 --tile-k 16 --max-device-mem 150K --transfers $t --verify \
		    --repeat 1
		assert_output --regexp 'blocks=(2[0-9]|[3-9][0-9]) .* source=host'
		[[ $stderr == *"clmatmul: A: 840000 bytes in pageable memory"* ]]
	done
}

@test "sides of whole tiles, copied as plain rows, give the in-core bytes in blocks, rect and packed" {
	local k=(--tile 32 --item 4 --tile-k 16) t mem
	# in core: every matrix one plain copy; in blocks of whole rows of C (16 x 1 and
	# 4 x 1 blocks), K whole or in panels
	gen "$T/a.npy" 1000 48 1
	gen "$T/b.npy" 48 64 2
	clmatmul "${k[@]}" -O npy -o "$T/whole.npy" "$T/a.npy" "$T/b.npy"
	run -0 py "$REF/clmatmul_ref.py" "$T/a.npy" "$T/b.npy" "$T/whole.npy"
	assert_output ok
	for t in rect packed; do
		for mem in 100K 150K 400K; do
			echo "--transfers $t --max-device-mem $mem"
			clmatmul -v "${k[@]}" --transfers $t --max-device-mem $mem -O npy \
			    -o "$T/c.npy" "$T/a.npy" "$T/b.npy" 2> "$T/log"
			run -0 cat "$T/log"
			assert_line --regexp '^clmatmul: plan: ([2-9]|[1-9][0-9]+) x 1 blocks of C '
			cmp "$T/whole.npy" "$T/c.npy"
		done
	done
	gen "$T/a.npy" 256 320 3
	gen "$T/b.npy" 320 192 4
	gen "$T/c0.npy" 256 192 5
	for t in rect packed; do
		clmatmul "${k[@]}" --transfers $t --beta 0.5 -c "$T/c0.npy" -O npy -o "$T/c.npy" \
		    "$T/a.npy" "$T/b.npy"
		run -0 py "$REF/clmatmul_ref.py" --beta 0.5 --c0 "$T/c0.npy" "$T/a.npy" "$T/b.npy" \
		    "$T/c.npy"
		assert_output ok
	done
}

# operands F C M N K: case C's A (M x K) and B (K x N) in F, A transposed for odd C, B
# when C % 4 >= 2, beta 1.5 with C0 when C % 3 == 2; clmatmul's options for them added
# to the array o, clmatmul_ref.py's to ref.
operands() {
	local f=$1 c=$2 m=$3 n=$4 kk=$5
	if [ $((c % 2)) = 1 ]; then
		gen "$f/a.npy" "$kk" "$m" $c; o+=(--transpose-a); ref+=(--ta)
	else
		gen "$f/a.npy" "$m" "$kk" $c
	fi
	if [ $((c % 4)) -ge 2 ]; then
		gen "$f/b.npy" "$n" "$kk" $((c + 50)); o+=(--transpose-b); ref+=(--tb)
	else
		gen "$f/b.npy" "$kk" "$n" $((c + 50))
	fi
	if [ $((c % 3)) = 2 ]; then
		gen "$f/c0.npy" "$m" "$n" $((c + 100))
		o+=(--beta 1.5 -c "$f/c0.npy"); ref+=(--beta 1.5 --c0 "$f/c0.npy")
	fi
}

# Shapes M x N x K against the forced 32 x 32 x 16 tiles (1, primes, one below and
# above a tile, whole tiles), each with transposes, beta now and then, rect or packed
# transfers and the host matrices all pinned, none (ACCELKIT_PINNED_BYTES=0) or A
# only, under bounds from the least that works to the in-core footprint: every run
# gives the in-core bytes, and the in-core products match numpy. Every run has a time
# limit.
@test "shapes around the tiles, bounds, transfers and pinned or pageable host buffers give the in-core bytes" {
	local k=(--tile 32 --item 4 --tile-k 16) c=0 shape m n kk o ref x cap abytes need whole
	local bound f
	for shape in 1x1x1 23x1x32 33x31x17 2x32x47 32x59x16 64x95x83 113x1x65 1x73x65 \
	    127x64x1 96x129x15; do
		IFS=x read -r m n kk <<< "$shape"
		f=$T/$c
		mkdir "$f"
		o=("${k[@]}") ref=()
		operands "$f" $c $m $n $kk
		x=$([ $((c % 2)) = 0 ] && echo packed || echo rect)
		abytes=$((m * kk * 4))
		case $((c % 3)) in
		0) cap= ;;
		1) cap=0 ;;
		2) cap=$abytes ;;
		esac
		echo "case $c: $shape --transfers $x, pinned bound '$cap': ${o[*]}"
		run -0 --separate-stderr timeout "$(limit 30)" clmatmul -v "${o[@]}" -O npy \
		    -o "$f/whole.npy" "$f/a.npy" "$f/b.npy"
		whole=$(on_device <<< "$stderr")
		run -0 py "$REF/clmatmul_ref.py" "${ref[@]}" "$f/a.npy" "$f/b.npy" "$f/whole.npy"
		assert_output ok
		run -1 --separate-stderr timeout "$(limit 30)" clmatmul "${o[@]}" --max-device-mem 1 -O npy \
		    -o "$f/c.npy" "$f/a.npy" "$f/b.npy"
		need=$(least <<< "$stderr")
		[ "$need" -le "$whole" ]
		for bound in "$need" $(((need + whole) / 2)) "$whole"; do
			echo "case $c: --max-device-mem $bound"
			rm -f "$f/c.npy"
			ACCELKIT_PINNED_BYTES=$cap run -0 --separate-stderr timeout "$(limit 30)" clmatmul -v \
			    "${o[@]}" --transfers "$x" --max-device-mem "$bound" -O npy \
			    -o "$f/c.npy" "$f/a.npy" "$f/b.npy"
			[ "$(on_device <<< "$stderr")" -le "$bound" ]
			if [ -z "$cap" ]; then
				[[ $stderr == *"clmatmul: B: "*" bytes in a mapped host buffer"* ]]
			else
				[[ $stderr == *"clmatmul: B: "*" bytes in pageable memory"* ]]
			fi
			cmp "$f/whole.npy" "$f/c.npy"
		done
		c=$((c + 1))
	done
}

@test "NPY and text through a pipe one byte at a time give the file's bytes" {
	gen "$T/a.npy" 37 29 1
	gen "$T/a.txt" 37 29 1
	gen "$T/b.npy" 29 41 2
	clmatmul -O npy -o "$T/file.npy" "$T/a.npy" "$T/b.npy"
	dd if="$T/a.npy" bs=1 status=none | clmatmul -O npy -o "$T/npy.npy" - "$T/b.npy"
	cmp "$T/file.npy" "$T/npy.npy"
	dd if="$T/a.txt" bs=1 status=none | clmatmul -O npy -o "$T/txt.npy" - "$T/b.npy"
	cmp "$T/file.npy" "$T/txt.npy"
}

# Auto transfers stage every copy through a ring of three mapped buffers
# (ACCELKIT_CLMATMUL_STAGE bytes each): pieces that start and end anywhere in a row,
# a row in several pieces where the ring is smaller than one, the zeros around the
# data, blocks read back while the next computes. Shapes M x N x K that do not divide
# into the forced 32 x 32 x 16 tiles (nor into the pieces), transposes and beta in
# turn, in core and at the least --max-device-mem that works: each run gives the bytes
# of packed transfers from whole matrices (another way altogether), which numpy
# accepts.
@test "staged copies through tiny ring buffers, a row in pieces, give packed transfers' bytes: shapes, transposes, beta, blocks" {
	local k=(--tile 32 --item 4 --tile-k 16) c=0 shape m n kk o ref f stage need mem
	for shape in 1x1x1 33x31x17 113x1x65 1x73x65 96x129x15 45x200x37 300x260x70; do
		IFS=x read -r m n kk <<< "$shape"
		f=$T/$c
		mkdir "$f"
		o=("${k[@]}") ref=()
		operands "$f" $c $m $n $kk
		clmatmul "${o[@]}" --transfers packed -O npy -o "$f/whole.npy" "$f/a.npy" "$f/b.npy"
		run -0 py "$REF/clmatmul_ref.py" "${ref[@]}" "$f/a.npy" "$f/b.npy" "$f/whole.npy"
		assert_output ok
		run -1 --separate-stderr clmatmul "${o[@]}" --max-device-mem 1 -O npy \
		    -o "$f/c.npy" "$f/a.npy" "$f/b.npy"
		need=$(least <<< "$stderr")
		# 12 bytes: 3 floats, across every row's end (rows of 32 floats and more);
		# 200: less than a row of the wider shapes
		for stage in 12 200 1000 16M; do
			[ "$stage" != 12 ] || [ $((m * kk + kk * n)) -lt 20000 ] || continue
			for mem in "" "$need"; do
				echo "case $c: $shape, ACCELKIT_CLMATMUL_STAGE=$stage, bound '$mem': ${o[*]}"
				rm -f "$f/c.npy"
				ACCELKIT_CLMATMUL_STAGE=$stage run -0 --separate-stderr \
				    timeout "$(limit 60)" clmatmul -v "${o[@]}" ${mem:+--max-device-mem "$mem"} \
				    -O npy -o "$f/c.npy" "$f/a.npy" "$f/b.npy"
				[[ $stderr == *"plan: "*", staged transfers, "* ]]
				[[ $stderr =~ "clmatmul: staging: "[1-9][0-9]*" bytes up in ".*" bytes down in ".*" through 3 buffers of "[0-9]+" bytes" ]]
				[[ $stderr != *"bytes in a mapped host buffer"* ]]
				cmp "$f/whole.npy" "$f/c.npy"
			done
		done
		c=$((c + 1))
	done
}

@test "staged copies on two and three PoCL devices, in blocks through tiny ring buffers, give one device's bytes" {
	local k=(--tile 32 --item 4 --tile-k 16)
	gen "$T/a.npy" 130 70 1
	gen "$T/b.npy" 70 97 2
	gen "$T/c0.npy" 130 97 3
	clmatmul "${k[@]}" --transfers packed --beta 0.5 -c "$T/c0.npy" -O npy -o "$T/one.npy" \
	    "$T/a.npy" "$T/b.npy"
	POCL_DEVICES="pthread pthread pthread" ACCELKIT_CLMATMUL_STAGE=100 run -0 --separate-stderr \
	    clmatmul -v -d cpu:all "${k[@]}" --beta 0.5 -c "$T/c0.npy" --max-device-mem 60K \
	    -O npy -o "$T/many.npy" "$T/a.npy" "$T/b.npy"
	[[ $stderr =~ "plan: "([2-9]|[1-9][0-9]+)" x "[0-9]+" blocks of C" ]]
	[[ $stderr == *"device 0:1: staging: "* ]]
	cmp "$T/one.npy" "$T/many.npy"
}

@test "ACCELKIT_CLMATMUL_STAGE that is not a size is a usage error naming it" {
	ACCELKIT_CLMATMUL_STAGE=lots run -2 --separate-stderr clmatmul -d cpu:0 "$D/a.txt" "$D/b.txt"
	assert_regex "$stderr" "ACCELKIT_CLMATMUL_STAGE"
}

@test "two large NPY files are read at once on two threads, with the same bytes, and a bad one is still named" {
	gen "$T/a.npy" 520 530 1
	gen "$T/b.npy" 530 510 2
	local d
	for d in cpu cpu:0; do
		run -0 --separate-stderr clmatmul -v -d $d -O npy -o "$T/c.npy" "$T/a.npy" "$T/b.npy"
		[[ $stderr == *"clmatmul: read: A and B at once, on two threads"* ]]
		run -0 py "$REF/clmatmul_ref.py" "$T/a.npy" "$T/b.npy" "$T/c.npy"
		assert_output ok
		# through a pipe, A is read whole first: one thread
		run -0 --separate-stderr bash -c 'cat "$1" | clmatmul -v -d "$2" -O npy -o "$3" - "$4"' \
		    _ "$T/a.npy" $d "$T/p.npy" "$T/b.npy"
		[[ $stderr != *"at once"* ]]
		cmp "$T/c.npy" "$T/p.npy"
	done
	py -c "import numpy as np; b = np.load('$T/b.npy'); b[400, 7] = np.nan; np.save('$T/x.npy', b)"
	run -1 --separate-stderr clmatmul -d cpu:0 -o "$T/c.npy" "$T/a.npy" "$T/x.npy"
	assert_regex "$stderr" "^clmatmul: $T/x.npy: .*NaN in NPY data \(row 401, column 8\)"
	assert_output ""
}

@test "without any OpenCL platform, auto above the host's share runs on the host, opened early or not; cpu:0 is an error" {
	# an ICD loader that finds no vendor: no platform at all
	mkdir "$T/icd"
	# 800 x 800 x 800 (5.1e8 multiply-adds, past CM_HOST_WORK): as text, whose bytes
	# start OpenCL beside the read; as NPY, whose bytes do not (decided after the read)
	py -c "
import numpy as np
g = np.random.default_rng(8)
for n in 'ab':
    m = g.standard_normal((800, 800)).astype(np.float32)
    np.save('$T/' + n + '.npy', m)
    np.savetxt('$T/' + n + '.txt', m, fmt='%.9g')"
	clmatmul -d cpu "$T/a.npy" "$T/b.npy" > "$T/host"
	run -0 --separate-stderr env -u OCL_ICD_FILENAMES OCL_ICD_VENDORS="$T/icd" clmatmul -d auto -v "$T/a.txt" "$T/b.txt"
	assert_regex "$stderr" $'(^|\n)clmatmul: auto: inputs of [0-9]+ bytes, about [0-9.e+]+ multiply-adds: OpenCL opened beside the read'
	assert_regex "$stderr" $'(^|\n)clmatmul: auto: no OpenCL device: the host'
	assert_output "$(cat "$T/host")"
	run -0 --separate-stderr env -u OCL_ICD_FILENAMES OCL_ICD_VENDORS="$T/icd" clmatmul -d auto -v "$T/a.npy" "$T/b.npy"
	[[ $stderr != *"opened beside the read"* ]] || fail "NPY of 800 x 800 started OpenCL early: the test no longer covers the late decision"
	assert_regex "$stderr" $'(^|\n)clmatmul: auto: no OpenCL device: the host'
	assert_output "$(cat "$T/host")"
	run -1 --separate-stderr env -u OCL_ICD_FILENAMES OCL_ICD_VENDORS="$T/icd" clmatmul -d cpu:0 "$T/a.npy" "$T/b.npy"
	assert_regex "$stderr" "no OpenCL platform found"
}
