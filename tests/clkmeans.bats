#!/usr/bin/env bats
# clkmeans: Lloyd's k-means on OpenCL (PoCL in make check, the GPU in make check-gpu).
# Labels are checked against independent references in tests/ref/clkmeans_ref.py:
# scikit-learn's KMeans(init=C0, n_init=1, algorithm='lloyd') on float64 data, a float64
# Lloyd in numpy with direct distances (for exact ties), and brute-force nearest
# centroids; labels must be identical, the inertia within 1e-5 relative.

setup() {
	load helpers
	T=$BATS_TEST_TMPDIR
	D=$TESTDATA/clkmeans
	# The OpenCL device of tests about OpenCL's own workings (streaming, the kernels'
	# sources and tuning): -d cpu is the native host path, cpu:0 PoCL's CPU device.
	OCL=cpu:0
	if on_gpu; then OCL=gpu; fi
}

# gen KIND N D K SEED: test data in $T/x.npy and K of its rows as $T/c0.txt.
gen() {
	py "$REF/clkmeans_ref.py" gen "$1" "$2" "$3" "$4" "$5" "$T/x.npy" "$T/c0.txt"
}

# vs REF [OPTION...]: clkmeans from $T/c0.txt (with --distances and OPTIONs) against the
# reference REF (sklearn or lloyd) run with the same --max-iter and --tol.
vs() {
	local ref=$1 iter=300 tol=1e-4 a
	shift
	for a in "$@"; do
		case $a in
		--max-iter=*) iter=${a#*=} ;;
		--tol=*) tol=${a#*=} ;;
		esac
	done
	clkmeans --init "$T/c0.txt" --distances "$@" "$T/x.npy" > "$T/ours.txt" || return
	py "$REF/clkmeans_ref.py" "$ref" "$T/x.npy" "$T/c0.txt" "$iter" "$tol" > "$T/ref.txt" ||
		return
	py "$REF/clkmeans_ref.py" check "$T/ours.txt" "$T/ref.txt"
}

# The number of iterations -v reports for the first run.
iterations() {
	sed -n 's/^clkmeans: run 1: \([0-9]*\) iterations.*/\1/p' "$1"
}

# ---- against the references ----

@test "well separated blobs in 2 dimensions match scikit-learn" {
	gen separated 3000 2 6 1
	run -0 vs sklearn
	assert_output ok
}

@test "overlapping blobs in 17 dimensions match scikit-learn" {
	gen overlapping 4000 17 8 2
	run -0 vs sklearn
	assert_output ok
}

@test "overlapping blobs in 64 dimensions with 40 clusters match scikit-learn" {
	gen overlapping 4000 64 40 3
	run -0 vs sklearn
	assert_output ok
}

@test "one column matches the float64 Lloyd" {
	gen overlapping 3000 1 5 4
	run -0 vs lloyd
	assert_output ok
}

@test "duplicate rows match scikit-learn" {
	gen duplicates 3000 3 10 5
	run -0 vs sklearn
	assert_output ok
}

@test "exact ties between centroids go to the lower index, as float64 direct distances do" {
	gen ties 3000 3 7 6
	run -0 vs lloyd
	assert_output ok
}

@test "rows far from the origin, where float32 expansion cancels, get float64 labels" {
	gen far 2000 8 6 7
	run -0 vs lloyd
	assert_output ok
}

@test "the number of iterations matches scikit-learn's" {
	gen overlapping 4000 5 6 8
	clkmeans -v --init "$T/c0.txt" "$T/x.npy" 2> "$T/err" > /dev/null
	py "$REF/clkmeans_ref.py" sklearn "$T/x.npy" "$T/c0.txt" 300 1e-4 > "$T/ref.txt"
	run -0 iterations "$T/err"
	assert_output "$(sed -n 's/^iterations //p' "$T/ref.txt")"
}

@test "an empty cluster takes the row farthest from its centroid, as in scikit-learn" {
	gen overlapping 3000 5 6 9
	py -c "
import numpy as np
c = np.loadtxt('$T/c0.txt'); c[2] = 500; c[4] = -700
np.savetxt('$T/c0.txt', c)"
	run -0 vs sklearn
	assert_output ok
	run -0 --separate-stderr clkmeans -v --init "$T/c0.txt" "$T/x.npy"
	assert_equal "$(grep -c 'relocated 2 empty clusters' <<< "$stderr")" 1
}

@test "two equal starting centroids: the empty one is relocated, never NaN" {
	gen overlapping 3000 4 6 10
	py -c "
import numpy as np
c = np.loadtxt('$T/c0.txt'); c[3] = c[1]
np.savetxt('$T/c0.txt', c)"
	run -0 vs lloyd
	assert_output ok
	clkmeans --init "$T/c0.txt" -C "$T/c.txt" "$T/x.npy" > /dev/null
	run -1 grep -i nan "$T/c.txt"
}

@test "--max-iter 1 labels the rows with the once-moved centroids" {
	gen overlapping 3000 6 9 11
	run -0 vs lloyd --max-iter=1
	assert_output ok
}

@test "--tol 0 runs every iteration and still matches the float64 Lloyd" {
	gen overlapping 2000 3 5 12
	run -0 vs lloyd --tol=0 --max-iter=40
	assert_output ok
	clkmeans -v --tol 0 --max-iter 40 --init "$T/c0.txt" "$T/x.npy" 2> "$T/err" > /dev/null
	run -0 iterations "$T/err"
	assert_output 40
}

@test "--assign equals a brute-force nearest centroid, ties to the lower index" {
	gen ties 3000 4 9 13
	py "$REF/clkmeans_ref.py" assign "$T/x.npy" "$T/c0.txt" > "$T/ref.txt" 2> "$T/inertia"
	run -0 --separate-stderr clkmeans --assign "$T/c0.txt" "$T/x.npy"
	assert_output "$(cat "$T/ref.txt")"
}

@test "--assign on adversarial rows equals a brute-force nearest centroid in float64: near-ties, a dominant dimension, large norms" {
	# 62% of these rows lie within TF32's bound of a tie and 45% within float32's, so
	# most labels come from the float64 recheck, on the GPU's tensor cores or not
	gen adversarial 6000 64 40 11
	py "$REF/clkmeans_ref.py" assign "$T/x.npy" "$T/c0.txt" > "$T/ref.txt" 2> /dev/null
	run -0 --separate-stderr clkmeans --assign "$T/c0.txt" "$T/x.npy"
	assert_output "$(cat "$T/ref.txt")"
}

@test "--assign --distances sums to the brute-force inertia" {
	gen overlapping 3000 17 12 14
	py "$REF/clkmeans_ref.py" assign "$T/x.npy" "$T/c0.txt" > /dev/null 2> "$T/inertia"
	clkmeans --assign "$T/c0.txt" --distances "$T/x.npy" > "$T/ours.txt"
	run -0 py -c "
import numpy as np
got = np.loadtxt('$T/ours.txt')[:, 1].sum()
want = float(open('$T/inertia').read().split()[1])
print('ok' if abs(got - want) <= 1e-6 * want else '%r %r' % (got, want))"
	assert_output ok
}

@test "-C writes each cluster's mean" {
	gen overlapping 3000 7 6 15
	clkmeans --init "$T/c0.txt" -C "$T/c.txt" "$T/x.npy" > "$T/labels.txt"
	run -0 py "$REF/clkmeans_ref.py" centroids "$T/c.txt" "$T/x.npy" "$T/labels.txt"
	assert_output ok
}

@test "-C with a .npy name writes the same centroids as NPY" {
	gen separated 1000 3 4 16
	clkmeans --init "$T/c0.txt" -C "$T/c.txt" "$T/x.npy" > /dev/null
	clkmeans --init "$T/c0.txt" -C "$T/c.npy" "$T/x.npy" > /dev/null
	run -0 py -c "
import numpy as np
a = np.load('$T/c.npy'); b = np.loadtxt('$T/c.txt', dtype=np.float32)
print(a.dtype, a.shape, bool((a == b).all()))"
	assert_output "float32 (4, 3) True"
}

@test "text and NPY input give the same labels" {
	gen overlapping 1000 5 4 17
	py -c "import numpy as np; np.savetxt('$T/x.txt', np.load('$T/x.npy'), fmt='%.9g')"
	clkmeans --init "$T/c0.txt" "$T/x.npy" > "$T/a.txt"
	clkmeans --init "$T/c0.txt" "$T/x.txt" > "$T/b.txt"
	run -0 cmp "$T/a.txt" "$T/b.txt"
}

@test "rows come from standard input without a FILE" {
	run -0 --separate-stderr clkmeans --init "$D/centroids.txt" < "$D/points.txt"
	assert_output "$(clkmeans --init "$D/centroids.txt" "$D/points.txt")"
	assert_equal "${#lines[@]}" 60
}

@test "k = 1 puts every row in cluster 0 around the mean" {
	run -0 --separate-stderr clkmeans -k 1 -C "$T/c.txt" "$D/points.txt"
	assert_equal "$(sort -u <<< "$output")" 0
	run -0 py -c "
import numpy as np
x = np.loadtxt('$D/points.txt'); c = np.loadtxt('$T/c.txt')
print('ok' if np.allclose(c, x.mean(axis=0), rtol=1e-6, atol=1e-6) else c)"
	assert_output ok
}

@test "k equal to the number of rows gives every row its own cluster" {
	run -0 --separate-stderr clkmeans -k 60 "$D/points.txt"
	assert_equal "$(sort -u <<< "$output" | wc -l)" 60
}

# ---- text columns, -f, -t, --header, --with-rows (issue 16) ----

# csv DELIM HEADER: $T/x.npy as a text table through Python's csv module: HEADER lines
# of column names, then each row with a name (blanks inside) first, the features, and a
# note that is often empty, into $T/x.csv.
csv() {
	py - "$1" "$2" "$T/x.npy" "$T/x.csv" <<'EOF'
import csv, sys
import numpy as np
delim, header, x = sys.argv[1], int(sys.argv[2]), np.load(sys.argv[3])
rng = np.random.default_rng(1)
with open(sys.argv[4], "w", newline="") as f:
    w = csv.writer(f, delimiter=delim, quoting=csv.QUOTE_NONE, lineterminator="\n")
    for h in range(header):
        w.writerow(["name"] + ["f%d" % (j + 1) for j in range(x.shape[1])] + ["note %d" % h])
    for i, r in enumerate(x):
        w.writerow(["row %d of %d" % (i + 1, len(x))] + [repr(float(v)) for v in r] +
                   ["" if rng.random() < 0.5 else "n %d" % i])
EOF
}

@test "-f, -t and --header on a CSV with names and empty fields match scikit-learn" {
	gen overlapping 3000 6 5 31
	csv , 1
	run -0 --separate-stderr clkmeans --init "$T/c0.txt" --distances -t , --header -f 2-7 "$T/x.csv"
	printf '%s\n' "$output" > "$T/ours.txt"
	py "$REF/clkmeans_ref.py" sklearn "$T/x.npy" "$T/c0.txt" 300 1e-4 > "$T/ref.txt"
	run -0 py "$REF/clkmeans_ref.py" check "$T/ours.txt" "$T/ref.txt"
	assert_output ok
	# the same labels as the numbers alone
	clkmeans --init "$T/c0.txt" --distances "$T/x.npy" > "$T/npy.txt"
	run -0 cmp "$T/ours.txt" "$T/npy.txt"
}

@test "--with-rows prints each row as it came, then its cluster and distance; the header names them" {
	gen separated 2000 3 4 32
	csv $'\t' 2
	run -0 --separate-stderr clkmeans --init "$T/c0.txt" --distances -t '\t' --header=2 -f 2-4 --with-rows "$T/x.csv"
	printf '%s\n' "$output" > "$T/out.tsv"
	py "$REF/clkmeans_ref.py" sklearn "$T/x.npy" "$T/c0.txt" 300 1e-4 > "$T/ref.txt"
	run -0 py - "$T/x.csv" "$T/out.tsv" "$T/ref.txt" <<'EOF'
import csv, sys
inp = open(sys.argv[1]).read().split("\n")[:-1]
out = list(csv.reader(open(sys.argv[2], newline=""), delimiter="\t", quoting=csv.QUOTE_NONE))
ref = open(sys.argv[3]).read().split()
labels = [int(v) for v in ref[4:]]
assert len(out) == len(inp), (len(out), len(inp))
assert "\t".join(out[0]) == inp[0], out[0]
assert out[1][-2:] == ["cluster", "distance"] and "\t".join(out[1][:-2]) == inp[1], out[1]
for i in range(2, len(inp)):
    assert "\t".join(out[i][:-2]) == inp[i], (i, out[i])
    assert int(out[i][-2]) == labels[i - 2], (i, out[i], labels[i - 2])
got = sum(float(r[-1]) for r in out[2:])
want = float(ref[1])
assert abs(got - want) <= 1e-5 * want, (got, want)
print("ok")
EOF
	assert_output ok
}

@test "--with-rows without -t adds a tab; NPY rows print as numbers; -f chooses NPY columns" {
	printf '# pts\na 0 0\nb 0 1\nc 10 10\nd 10 11\n' > "$T/p.txt"
	printf '0 0\n10 10\n' > "$T/c.txt"
	run -0 --separate-stderr clkmeans --assign "$T/c.txt" -f 2- --with-rows "$T/p.txt"
	assert_output "$(printf 'a 0 0\t0\nb 0 1\t0\nc 10 10\t1\nd 10 11\t1')"
	py -c 'import numpy as np, sys; np.save(sys.argv[1], np.array([[0, 0.5], [10, 10]], np.float32))' "$T/p.npy"
	run -0 --separate-stderr clkmeans --assign "$T/c.txt" --distances --with-rows "$T/p.npy"
	assert_output "$(printf '0\t0.5\t0\t0.25\n10\t10\t1\t0')"
	py -c 'import numpy as np, sys; np.save(sys.argv[1], np.array([[7, 0, 0], [8, 10, 10]], np.float32))' "$T/p3.npy"
	run -0 --separate-stderr clkmeans --assign "$T/c.txt" -f 2,3 "$T/p3.npy"
	assert_output "$(printf '0\n1')"
}

@test "a text column without -f is an error that names it and suggests -f" {
	printf 'a 0 0\nb 0 1\n' > "$T/p.txt"
	run -1 --separate-stderr clkmeans -k 1 "$T/p.txt"
	assert_equal "$stderr" "clkmeans: $T/p.txt:1: column 1: not a number: 'a' (choose the feature columns with -f)"
	printf '0 0\n' > "$T/c.txt"
	run -1 --separate-stderr clkmeans --assign "$T/c.txt" -f 1-2 "$T/p.txt"
	assert_equal "$stderr" "clkmeans: $T/p.txt:1: column 1: not a number: 'a'"
	run -1 --separate-stderr clkmeans --assign "$T/c.txt" -f 3 "$T/p.txt"
	assert_equal "$stderr" "clkmeans: $T/c.txt: centroids have 2 columns, -f chooses 1"
	run -1 --separate-stderr clkmeans --assign "$T/c.txt" -f 2-4 "$T/p.txt"
	assert_equal "$stderr" "clkmeans: $T/p.txt: column 4 does not exist (rows have 3)"
	printf 'a 0 1e39\n' > "$T/p.txt"
	run -1 --separate-stderr clkmeans --assign "$T/c.txt" -f 2- "$T/p.txt"
	assert_equal "$stderr" "clkmeans: $T/p.txt:1: column 3: 1e39 is beyond the float32 range"
}

@test "--with-rows with -O npy, and bad -t, --header or -f values, are usage errors" {
	run -2 --separate-stderr clkmeans -k 2 --with-rows -O npy "$D/points.txt"
	assert_regex "$stderr" "--with-rows prints text rows; it does not go with -O npy"
	run -2 --separate-stderr clkmeans -k 2 -t ab "$D/points.txt"
	assert_regex "$stderr" "invalid value for --delimiter: 'ab'"
	run -2 --separate-stderr clkmeans -k 2 --header=-1 "$D/points.txt"
	assert_regex "$stderr" "invalid value for --header: '-1'"
	run -2 --separate-stderr clkmeans -k 2 -f 0 "$D/points.txt"
	assert_regex "$stderr" "fields are numbered from 1"
}

# ---- seeds, starts, runs ----

@test "the same seed gives identical output twice" {
	gen overlapping 3000 6 8 18
	clkmeans -k 8 --seed 5 -C "$T/c1.txt" "$T/x.npy" > "$T/a.txt"
	clkmeans -k 8 --seed 5 -C "$T/c2.txt" "$T/x.npy" > "$T/b.txt"
	run -0 cmp "$T/a.txt" "$T/b.txt"
	run -0 cmp "$T/c1.txt" "$T/c2.txt"
	clkmeans -k 8 --init random --seed 5 "$T/x.npy" > "$T/a.txt"
	clkmeans -k 8 --init random --seed 5 "$T/x.npy" > "$T/b.txt"
	run -0 cmp "$T/a.txt" "$T/b.txt"
}

@test "k-means++ ends no worse than random starts on average over seeds" {
	gen separated 3000 4 12 19
	for s in 1 2 3 4 5 6; do
		clkmeans -k 12 --seed $s --distances "$T/x.npy" | awk -v s=$s '{t += $2} END {print "pp", t}'
		clkmeans -k 12 --seed $s --init random --distances "$T/x.npy" |
			awk '{t += $2} END {print "rnd", t}'
	done > "$T/inertias"
	run -0 awk '{s[$1] += $2} END {print (s["pp"] <= s["rnd"]) ? "ok" : s["pp"] " > " s["rnd"]}' "$T/inertias"
	assert_output ok
}

@test "--n-init keeps the run of lowest inertia" {
	gen overlapping 3000 4 10 21
	run -0 --separate-stderr clkmeans -v -k 10 --init random --n-init 6 --distances "$T/x.npy"
	best=$(sed -n 's/.*run [0-9]*: .*inertia //p' <<< "$stderr" | sort -g | head -n 1)
	assert_equal "$(grep -c 'run [0-9]*:' <<< "$stderr")" 6
	clkmeans -k 10 --init random --n-init 6 --distances "$T/x.npy" > "$T/ours.txt"
	run -0 py -c "
import numpy as np
got = np.loadtxt('$T/ours.txt')[:, 1].sum()
print('ok' if abs(got - $best) <= 1e-6 * $best else '%r %r' % (got, $best))"
	assert_output ok
}

# ---- devices, memory, fallbacks ----

@test "a small --max-device-mem streams the rows and gives the same bytes" {
	gen overlapping 5000 17 8 22
	clkmeans -d "$OCL" -k 8 -C "$T/c1.txt" --distances "$T/x.npy" > "$T/a.txt"
	run -0 --separate-stderr clkmeans -d "$OCL" -v --max-device-mem 200K -k 8 -C "$T/c2.txt" \
		--distances "$T/x.npy"
	assert_regex "$stderr" "streaming the rows in [2-9] batches"
	assert_output "$(cat "$T/a.txt")"
	run -0 cmp "$T/c1.txt" "$T/c2.txt"
}

@test "too small a --max-device-mem is an error saying how much is needed" {
	gen overlapping 5000 17 8 23
	run -1 --separate-stderr clkmeans -d "$OCL" --max-device-mem 20K -k 8 "$T/x.npy"
	assert_regex "$stderr" "max-device-mem: 20480 bytes are too few .*at least [0-9]+ needed"
	assert_output ""
}

# Random shapes drawn from a fixed seed (rows: 1, primes, one below and above the
# CPU table's tiles of 64 rows and batches of 256; columns around the steps of 4, 8
# and 16; k around the work-item's 4 and 8 centroids), starting from given rows,
# k-means++ or random starts in turn. For each: the least bound the program names is
# exact (one byte less fails, that bound works), and runs at that bound and at a
# random bound above it, streaming the rows in batches where they do not fit, give
# the in-core run's labels, distances and centroids, byte for byte. The in-core runs
# are checked too: against the float64 Lloyd from given rows, else each centroid
# against the mean of its rows. Every run has a time limit.
@test "random shapes under random --max-device-mem bounds from the least up end and give the in-core bytes" {
	local cases=10 c_lines c_line c_i c_u c_n c_span c_opts c_o c_need c_bound
	py - "$REF" "$T" "$cases" > "$T/cases" <<'EOF'
import os
import sys
import numpy as np
sys.path.insert(0, sys.argv[1])
import clkmeans_ref
T, ncases = sys.argv[2], int(sys.argv[3])
rng = np.random.default_rng(14)
primes = [p for p in range(2, 1100) if all(p % q for q in range(2, int(p ** 0.5) + 1))]
def pick(near, top, ones=0.1):
    c = rng.random()
    if c < ones:
        return 1
    if c < 0.4:
        return int(rng.choice([p for p in primes if p <= top]))
    if c < 0.8:
        return int(rng.choice([v for t in near for v in (t - 1, t + 1) if 1 <= v <= top]))
    return int(rng.integers(1, top + 1))
for i in range(ncases):
    n = pick([64, 256, 512, 768, 1024], 1100, ones=0.05)
    d = pick([4, 8, 16, 32], 40)
    k = min(n, pick([4, 8, 16, 32], 40))
    os.mkdir("%s/%d" % (T, i))
    clkmeans_ref.gen("overlapping", n, d, k, 100 + i, "%s/%d/x.npy" % (T, i),
                     "%s/%d/c0.txt" % (T, i))
    if i % 3 == 0:
        opts = "--init %s/%d/c0.txt" % (T, i)
    elif i % 3 == 1:
        opts = "-k %d --seed %d" % (k, i)
    else:
        opts = "-k %d --init random --n-init 2 --seed %d" % (k, i)
    # a bound up to all rows resident beyond the least (4 bytes a value and 4 a row)
    print(i, rng.random(), n, n * (4 * d + 4), opts)
EOF
	# (bats's run sets i and other plain names: the loop's names are c_*)
	mapfile -t c_lines < "$T/cases"
	for c_line in "${c_lines[@]}"; do
		read -r c_i c_u c_n c_span c_opts <<< "$c_line"
		c_o=(-d "$OCL" $c_opts --distances -C "$T/$c_i/c.txt" -o "$T/$c_i/labels.txt")
		echo "case $c_i: $c_n rows, $c_opts"	# shown when the test fails
		run -0 --separate-stderr timeout "$(limit 30)" clkmeans "${c_o[@]}" "$T/$c_i/x.npy"
		mv "$T/$c_i/labels.txt" "$T/$c_i/whole.txt"
		mv "$T/$c_i/c.txt" "$T/$c_i/whole_c.txt"
		run -1 --separate-stderr timeout "$(limit 30)" clkmeans "${c_o[@]}" --max-device-mem 1 \
		    "$T/$c_i/x.npy"
		c_need=$(sed -n 's/.* are too few for .* (at least \([0-9]*\) needed)$/\1/p' <<< "$stderr")
		echo "case $c_i: least $c_need"
		[ -n "$c_need" ]
		run -1 --separate-stderr timeout "$(limit 30)" clkmeans "${c_o[@]}" \
		    --max-device-mem $((c_need - 1)) "$T/$c_i/x.npy"
		assert_regex "$stderr" "\(at least $c_need needed\)$"
		[ ! -e "$T/$c_i/labels.txt" ]
		for c_bound in "$c_need" "$(awk -v a="$c_need" -v s="$c_span" -v u="$c_u" \
		    'BEGIN { printf "%d", a + s * u }')"; do
			echo "case $c_i: --max-device-mem $c_bound"
			run -0 --separate-stderr timeout "$(limit 30)" clkmeans -v "${c_o[@]}" \
			    --max-device-mem "$c_bound" "$T/$c_i/x.npy"
			# at the least, more rows than a batch (256 here) are streamed
			if [ "$c_bound" = "$c_need" ] && [ "$c_n" -gt 256 ] && ! on_gpu; then
				assert_regex "$stderr" "streaming the rows in [0-9]+ batches of 256 rows"
			fi
			cmp "$T/$c_i/whole.txt" "$T/$c_i/labels.txt"
			cmp "$T/$c_i/whole_c.txt" "$T/$c_i/c.txt"
		done
	done
	run -0 py - "$REF" "$T" <<'EOF'
import sys
import numpy as np
sys.path.insert(0, sys.argv[1])
import clkmeans_ref
T, bad = sys.argv[2], []
for line in open(T + "/cases"):
    i, opts = line.split()[0], line.split()[4:]
    d = "%s/%s/" % (T, i)
    X = np.load(d + "x.npy").astype(np.float64)
    ours = np.loadtxt(d + "whole.txt", ndmin=2)
    labels = ours[:, 0].astype(int)
    C = np.loadtxt(d + "whole_c.txt", ndmin=2)
    if opts[0] == "--init":
        want, inertia, _, _ = clkmeans_ref.lloyd(X, np.loadtxt(d + "c0.txt", ndmin=2), 300, 1e-4)
        if not np.array_equal(labels, want):
            bad.append("case %s: %d labels differ from the float64 Lloyd" %
                       (i, (labels != want).sum()))
        elif abs(ours[:, 1].sum() - inertia) > 1e-5 * inertia + 1e-12:
            bad.append("case %s: inertia %r, float64 Lloyd %r" % (i, ours[:, 1].sum(), inertia))
    for j in range(len(C)):
        if (labels == j).any():
            want = X[labels == j].mean(axis=0)
            if np.abs(C[j] - want).max() > 1e-6 * np.abs(X).max():
                bad.append("case %s: centroid %d is not the mean of its rows" % (i, j))
print("\n".join(bad) or "ok")
EOF
	assert_output ok
}

@test "the 32-bit atomics fallback gives the same bytes" {
	gen overlapping 3000 9 7 24
	clkmeans -d "$OCL" --init "$T/c0.txt" --distances -C "$T/c1.txt" "$T/x.npy" > "$T/a.txt"
	CLKMEANS_TUNE=atom64=0 clkmeans -d "$OCL" --init "$T/c0.txt" --distances -C "$T/c2.txt" \
		"$T/x.npy" > "$T/b.txt"
	run -0 cmp "$T/a.txt" "$T/b.txt"
	run -0 cmp "$T/c1.txt" "$T/c2.txt"
}

@test "without float64 the labels still match on separated blobs" {
	gen separated 3000 5 6 25
	CLKMEANS_TUNE=fp64=0 run -0 vs sklearn -d "$OCL"
	assert_output ok
}

@test "GPU-style local-memory tiles and CPU-style direct tiles give the same bytes" {
	gen overlapping 3000 33 70 26
	CLKMEANS_TUNE="local=1 tmt=16 tnt=16 rmv=2 rnv=2 wg=256 rg=1024" \
		clkmeans -d "$OCL" --init "$T/c0.txt" --distances "$T/x.npy" > "$T/a.txt"
	CLKMEANS_TUNE="local=0 tmt=8 tnt=1 rmv=1 rnv=2 wg=64 rg=256" \
		clkmeans -d "$OCL" --init "$T/c0.txt" --distances "$T/x.npy" > "$T/b.txt"
	run -0 cmp "$T/a.txt" "$T/b.txt"
	run -0 vs lloyd -d "$OCL"
	assert_output ok
}

# Issue 15: assign's products on NVIDIA's TF32 tensor cores (clkmeans_assign.cl's TF32
# assign), its rows near a tie rechecked by the float32 assign (assign_f32), then those
# still near one in float64; the rows in registers (areg, the default up to 64 columns)
# or read from local memory each step with one centroid tile or two (db=1).
@test "TF32 products on the tensor cores give the float32 kernel's bytes: 64, 72 and 8 columns, rows far from the origin, duplicates, adversarial rows, exact ties" {
	require_gpu
	for data in "overlapping 20000 64 40 31" "far 5000 8 6 7" "overlapping 4000 16 300 5" \
	    "duplicates 3000 64 20 9" "adversarial 6000 64 40 11" "ties 2000 8 10 4" \
	    "overlapping 3000 72 40 13"; do
		gen $data
		run -0 --separate-stderr clkmeans -v --init "$T/c0.txt" --distances -C "$T/ca.txt" \
		    --tol 0 --max-iter 8 "$T/x.npy"
		printf '%s\n' "$output" > "$T/a.txt"
		assert_regex "$stderr" "TF32 products on the tensor cores, rows near a tie rechecked in float32, then float64"
		CLKMEANS_TUNE=tf32=0 clkmeans --init "$T/c0.txt" --distances -C "$T/cb.txt" --tol 0 \
		    --max-iter 8 "$T/x.npy" > "$T/b.txt"
		run -0 cmp "$T/a.txt" "$T/b.txt"
		run -0 cmp "$T/ca.txt" "$T/cb.txt"
		read -r _ _ d _ <<< "$data"
		if [ "$d" -le 64 ]; then	# 72 columns' rows leave no room for two tiles
			CLKMEANS_TUNE="tf32=1 areg=0 db=1" clkmeans --init "$T/c0.txt" --distances \
			    -C "$T/cc.txt" --tol 0 --max-iter 8 "$T/x.npy" > "$T/c.txt"
			run -0 cmp "$T/a.txt" "$T/c.txt"
			run -0 cmp "$T/ca.txt" "$T/cc.txt"
		fi
		CLKMEANS_TUNE="tf32=1 areg=0" clkmeans --init "$T/c0.txt" --distances \
		    -C "$T/cd.txt" --tol 0 --max-iter 8 "$T/x.npy" > "$T/d.txt"
		run -0 cmp "$T/a.txt" "$T/d.txt"
		run -0 cmp "$T/ca.txt" "$T/cd.txt"
	done
	run -0 vs lloyd
	assert_output ok
	# the last data's 72 columns (80 padded) are too many for the rows in registers of
	# k > 32's tiles (two 16-row tiles a warp); k <= 32 takes one, 80 columns fit
	clkmeans -v --init "$T/c0.txt" "$T/x.npy" 2> "$T/err" > /dev/null
	run ! grep -q "rows in registers" "$T/err"
	gen overlapping 3000 64 30 13
	clkmeans -v --init "$T/c0.txt" "$T/x.npy" 2> "$T/err" > /dev/null
	run -0 grep -q "rows in registers" "$T/err"
}

@test "CLKMEANS_TUNE=tf32=1 where the tensor cores are not (PoCL) is an error naming the device" {
	gen overlapping 500 64 4 3
	run -1 --separate-stderr env CLKMEANS_TUNE=tf32=1 clkmeans -d cpu:0 -k 4 "$T/x.npy"
	assert_regex "$stderr" "CLKMEANS_TUNE: tf32=1 needs an NVIDIA GPU of compute capability 8.0 or later"
}

@test "CLKMEANS_TUNE=areg=1 without the tensor cores' assign is an error" {
	gen overlapping 500 64 4 3
	run -1 --separate-stderr env CLKMEANS_TUNE=areg=1 clkmeans -d cpu:0 -k 4 "$T/x.npy"
	assert_regex "$stderr" "CLKMEANS_TUNE: areg=1 needs the TF32 assign"
	run -1 --separate-stderr env CLKMEANS_TUNE="tf32=0 areg=1" clkmeans -d "$OCL" -k 4 "$T/x.npy"
	assert_regex "$stderr" "CLKMEANS_TUNE: areg=1 needs the TF32 assign"
}

@test "-v names the device and reports each iteration's inertia and moved rows" {
	gen separated 2000 2 4 27
	run -0 --separate-stderr clkmeans -v --init "$T/c0.txt" "$T/x.npy"
	assert_regex "$stderr" "clkmeans: device: "
	assert_regex "$stderr" "clkmeans: iteration 1: inertia [0-9.e+]+, moved 2000, "
	assert_regex "$stderr" "clkmeans: iteration 2: inertia [0-9.e+]+, moved [0-9]+, "
	assert_regex "$stderr" "clkmeans: time compute"
	py "$REF/clkmeans_ref.py" lloyd "$T/x.npy" "$T/c0.txt" 300 1e-4 > "$T/ref.txt"
	run -0 py -c "
import re
v = [float(x) for x in re.findall(r'run 1: .* inertia ([0-9.e+]+)', '''$stderr''')]
want = float(open('$T/ref.txt').readline().split()[1])
print('ok' if abs(v[0] - want) <= 1e-5 * want else (v, want))"
	assert_output ok
}

@test "ACCELKIT_KERNEL_DIR reads the program's parts in order; a part changed there is the one built, a missing one is named" {
	gen separated 2000 2 4 27
	clkmeans -d "$OCL" --init "$T/c0.txt" "$T/x.npy" > "$T/built.txt"
	mkdir "$T/k"
	cp "$ACCELKIT_ROOT"/kernels/clkmeans_*.cl "$T/k/"
	run -0 --separate-stderr env ACCELKIT_KERNEL_DIR="$T/k" clkmeans -d "$OCL" -v --init "$T/c0.txt" \
	    "$T/x.npy"
	assert_output "$(cat "$T/built.txt")"
	assert_regex "$stderr" "kernel source: $T/k/clkmeans_defs.cl"
	assert_regex "$stderr" "kernel source: $T/k/clkmeans_seed.cl"
	# the last part is read too: a syntax error planted there fails the build (of the
	# one program on a CPU, of a part's program on a GPU: clkmeans_update.cl)
	echo 'this is not OpenCL' >> "$T/k/clkmeans_seed.cl"
	run -1 --separate-stderr env ACCELKIT_KERNEL_DIR="$T/k" clkmeans -d "$OCL" --init "$T/c0.txt" \
	    "$T/x.npy"
	assert_regex "$stderr" "clkmeans(_[a-z]+)?\.cl: build failed"
	rm "$T/k/clkmeans_exact.cl"
	run -1 --separate-stderr env ACCELKIT_KERNEL_DIR="$T/k" clkmeans -d "$OCL" --init "$T/c0.txt" \
	    "$T/x.npy"
	assert_regex "$stderr" "clkmeans_exact.cl"
}

@test "-v names the tuning table's row for the device, with its measurement" {
	clkmeans -d "$OCL" -v -k 3 "$D/points.txt" 2> "$T/err" > /dev/null
	run -0 cat "$T/err"
	assert_line --regexp '^clkmeans: tuning: .+ \(.+\)$'
}

@test "an empty cluster no row can take stops the run at the tolerance; --tol 0 runs every iteration, as the page says" {
	# issue 39: every row sits on its centroid, so cluster 2 stays empty and nothing moves
	printf '0\n0\n1\n1\n' > "$T/x"
	printf '0\n1\n5\n' > "$T/c"
	run -0 --separate-stderr clkmeans -v --init "$T/c" --max-iter 6 "$T/x"
	assert_output "$(printf '0\n0\n1\n1')"
	assert_regex "$stderr" "converged at iteration 1: "
	assert_regex "$stderr" "run 1: 1 iterations"
	run -0 --separate-stderr clkmeans -v --init "$T/c" --max-iter 6 --tol 0 "$T/x"
	assert_output "$(printf '0\n0\n1\n1')"
	assert_regex "$stderr" "run 1: 6 iterations"
}

@test "--progress into a file: a line of iterations done of all, the results unchanged" {
	# one thread, 200 iterations of 30000 x 32 x 256 (4.9e10 products, about 1e10 a
	# second natively): past the line's two seconds
	py -c "import numpy as np; np.save('$T/x.npy', np.random.default_rng(3).standard_normal((30000, 32)).astype(np.float32))"
	local a=(-d cpu -j 1 -k 256 --init random --tol 0 --max-iter 200 "$T/x.npy")
	clkmeans --progress "${a[@]}" > "$T/out" 2> "$T/err"
	run cat "$T/err"
	assert_line --regexp '^clkmeans: [0-9]+ of 200 iterations \([0-9.]+%\), [0-9,]+ iterations/s'
	refute_output --partial $'\r'
	run -0 clkmeans "${a[@]}"
	assert_output "$(cat "$T/out")"
}

@test "every row of the tuning table passes its legality checks, and rows that break them are rejected" {
	run -0 tunerows clkmeans
	assert_line --index 0 "clkmeans: 2 rows pass"
	assert_line --index 1 --partial "broken tmt = 12: rejected: "
	refute_output --partial ": passes"
	assert_equal "$(grep -c ': rejected: ' <<< "$output")" 10
}

@test "--list-devices lists a device" {
	run -0 clkmeans --list-devices
	assert_regex "$output" "^[0-9]+:[0-9]+"
}

@test "-O npy writes the labels as int32, the dtype and labels of scikit-learn's labels_" {
	clkmeans --init "$D/centroids.txt" -O npy -o "$T/a.npy" "$D/points.txt"
	run -0 py - "$T/a.npy" "$D/points.txt" "$D/centroids.txt" <<'EOF'
import sys
import numpy as np
from sklearn.cluster import KMeans
a = np.load(sys.argv[1])
X = np.loadtxt(sys.argv[2]); C = np.loadtxt(sys.argv[3])
km = KMeans(len(C), init=C, n_init=1, algorithm="lloyd").fit(X)
print(a.dtype.str, a.shape, a.dtype == km.labels_.dtype, bool((a[:, 0] == km.labels_).all()))
EOF
	assert_output "<i4 (60, 1) True True"
}

@test "-O npy writes the labels and distances as a float32 NPY matrix (one dtype an array)" {
	clkmeans --init "$D/centroids.txt" --distances "$D/points.txt" > "$T/a.txt"
	clkmeans --init "$D/centroids.txt" --distances -O npy -o "$T/a.npy" "$D/points.txt"
	run -0 py -c "
import numpy as np
a = np.load('$T/a.npy'); b = np.loadtxt('$T/a.txt', dtype=np.float32)
print(a.dtype, a.shape, bool((a == b).all()))"
	assert_output "float32 (60, 2) True"
}

# ---- errors ----

@test "-k 0 is a usage error" {
	run -2 --separate-stderr clkmeans -k 0 "$D/points.txt"
	assert_regex "$stderr" "invalid value for --clusters: '0'"
	assert_regex "$stderr" "Try 'clkmeans --help'"
}

@test "a missing -k is a usage error" {
	run -2 --separate-stderr clkmeans "$D/points.txt"
	assert_regex "$stderr" "number of clusters is missing"
}

@test "more clusters than rows is an error naming the file" {
	run -1 --separate-stderr clkmeans -k 61 "$D/points.txt"
	assert_equal "$stderr" "clkmeans: $D/points.txt: 60 rows, fewer than the 61 clusters asked for"
	assert_output ""
}

@test "centroids of another width are an error naming the centroid file" {
	printf '1 2 3\n4 5 6\n' > "$T/c.txt"
	run -1 --separate-stderr clkmeans --assign "$T/c.txt" "$D/points.txt"
	assert_equal "$stderr" "clkmeans: $T/c.txt: centroids have 3 columns, the data has 2"
	run -1 --separate-stderr clkmeans --init "$T/c.txt" "$D/points.txt"
	assert_equal "$stderr" "clkmeans: $T/c.txt: centroids have 3 columns, the data has 2"
}

@test "-k that disagrees with the centroid file is an error" {
	run -1 --separate-stderr clkmeans -k 4 --init "$D/centroids.txt" "$D/points.txt"
	assert_equal "$stderr" "clkmeans: $D/centroids.txt: 3 centroids, but -k 4"
}

@test "NaN in the data is an error naming its line" {
	printf '1 2\n3 4\nnan 5\n6 7\n' > "$T/x.txt"
	run -1 --separate-stderr clkmeans -k 2 "$T/x.txt"
	assert_regex "$stderr" "^clkmeans: $T/x.txt:3: column 1: NaN is not allowed"
	assert_output ""
}

@test "NaN in NPY data is an error naming its row" {
	py -c "import numpy as np; a = np.ones((5, 2), np.float32); a[3, 1] = np.nan; np.save('$T/x.npy', a)"
	run -1 --separate-stderr clkmeans -k 2 "$T/x.npy"
	assert_regex "$stderr" "NaN in NPY data \(row 4, column 2\)"
}

@test "a ragged row is an error naming its line" {
	printf '1 2\n3 4 5\n' > "$T/x.txt"
	run -1 --separate-stderr clkmeans -k 1 "$T/x.txt"
	assert_regex "$stderr" "$T/x.txt:2: row has 3 columns, expected 2"
}

@test "a missing input file is an error naming it" {
	run -1 --separate-stderr clkmeans -k 2 "$T/none.txt"
	assert_regex "$stderr" "$T/none.txt"
}

@test "bad option values are usage errors" {
	run -2 --separate-stderr clkmeans -k 2 --n-init 0 "$D/points.txt"
	assert_regex "$stderr" "invalid value for --n-init"
	run -2 --separate-stderr clkmeans -k 2 --tol -1 "$D/points.txt"
	assert_regex "$stderr" "invalid value for --tol"
	run -2 --separate-stderr clkmeans -k 2 --max-iter x "$D/points.txt"
	assert_regex "$stderr" "invalid value for --max-iter"
	run -2 --separate-stderr clkmeans --assign "$D/centroids.txt" --init "$D/centroids.txt" "$D/points.txt"
	assert_regex "$stderr" "use one"
}

@test "an --init word that is no method and no readable file is a usage error listing the methods" {
	run -2 --separate-stderr clkmeans -k 2 --init kmeans++ "$D/points.txt"
	assert_equal "${lines[*]}" ""
	assert_regex "$stderr" "^clkmeans: invalid value for --init: 'kmeans\+\+' \(expected k-means\+\+, random or a readable FILE of centroids\)"
	assert_regex "$stderr" "Try 'clkmeans --help'"
	# a file of that name is still read as centroids
	cd "$T"
	printf '1 1\n5 0\n' > kmeans++
	run -0 --separate-stderr clkmeans --init kmeans++ "$D/points.txt"
	assert_equal "${#lines[@]}" 60
}

@test "an unknown device is an error" {
	run -1 --separate-stderr clkmeans -d 9:9 -k 2 "$D/points.txt"
	assert_regex "$stderr" "device '9:9'"
}

@test "--help shows the usage on standard output" {
	run -0 --separate-stderr clkmeans --help
	assert_line --index 0 "usage: clkmeans -k K [options] [FILE]"
	assert_line --partial "--assign CENTROIDS"
	assert_equal "$stderr" ""
}

# ---- the man page's EXAMPLES ----

@test "EXAMPLES: cluster cities from a CSV with a header and names, each printed with its cluster" {
	cd "$ACCELKIT_ROOT"
	run -0 --separate-stderr clkmeans -k 3 -t , --header -f 2,3 --with-rows testdata/clkmeans/cities.csv
	assert_line --index 0 'city,latitude,longitude,cluster'
	printf '%s\n' "$output" > "$T/out.csv"
	# the long forms read the file the same way
	run -0 --separate-stderr clkmeans -k 3 --delimiter=, --header=1 --fields=2,3 --with-rows \
	    testdata/clkmeans/cities.csv
	assert_output "$(cat "$T/out.csv")"
	# the same partition as scikit-learn's KMeans (its clusters may be numbered otherwise)
	run -0 py - testdata/clkmeans/cities.csv "$T/out.csv" <<'EOF'
import csv, sys
import numpy as np
from sklearn.cluster import KMeans
rows = list(csv.reader(open(sys.argv[1], newline="")))
out = list(csv.reader(open(sys.argv[2], newline="")))
assert [r[:-1] for r in out] == rows, "the rows are not printed as they came"
x = np.array([[float(v) for v in r[1:3]] for r in rows[1:]])
ref = KMeans(3, n_init=10, random_state=0).fit(x).labels_
ours = [int(r[-1]) for r in out[1:]]
pairs = set(zip(ours, ref))
print("ok" if len(pairs) == 3 and len(set(ours)) == 3 else "differs: %s %s" % (ours, list(ref)))
EOF
	assert_output ok
}

@test "EXAMPLES: cluster scikit-learn's iris flowers by their measurements, past the header" {
	f=$(py -c 'import os, sklearn.datasets as d; print(os.path.join(os.path.dirname(d.__file__), "data", "iris.csv"))')
	[ -f "$f" ] || skip "this scikit-learn has no iris.csv"
	cd "$T"
	cp "$f" iris.csv
	clkmeans -k 3 -t , --header -f 1-4 iris.csv > labels.txt
	[ "$(wc -l < labels.txt)" -eq 150 ]
	[ "$(sort -u labels.txt | wc -l)" -eq 3 ]
	# from a given start, scikit-learn's labels exactly
	sed -n '2p;52p;102p' iris.csv | cut -d, -f 1-4 | tr , ' ' > c0.txt
	clkmeans --init c0.txt --distances -t , --header -f 1-4 iris.csv > ours.txt
	py -c 'import numpy as np, sys; np.save(sys.argv[2], np.loadtxt(sys.argv[1], delimiter=",", skiprows=1)[:, :4])' iris.csv x.npy
	py "$REF/clkmeans_ref.py" sklearn x.npy c0.txt 300 1e-4 > ref.txt
	run -0 py "$REF/clkmeans_ref.py" check ours.txt ref.txt
	assert_output ok
}

@test "EXAMPLES: cluster the points of a text file into three clusters" {
	cd "$T"
	cp "$D/points.txt" points.txt
	clkmeans -k 3 points.txt > labels.txt
	run -0 sort -u labels.txt
	assert_output "$(printf '0\n1\n2')"
	run -0 bash -c "sort labels.txt | uniq -c | awk '{print \$1}'"
	assert_output "$(printf '20\n20\n20')"
}

@test "EXAMPLES: start from given centroids and write the final ones" {
	cd "$T"
	cp "$D/points.txt" points.txt
	cp "$D/centroids.txt" centroids.txt
	clkmeans --init centroids.txt -C final.txt points.txt > labels.txt
	run -0 py "$REF/clkmeans_ref.py" centroids final.txt points.txt labels.txt
	assert_output ok
	run -0 py "$REF/clkmeans_ref.py" sklearn points.txt centroids.txt 300 1e-4
	assert_equal "$(sed -n '3,$p' <<< "$output")" "$(cat labels.txt)"
}

@test "EXAMPLES: label rows by those centroids, with each row's squared distance" {
	cd "$T"
	cp "$D/points.txt" points.txt
	clkmeans -k 3 --init "$D/centroids.txt" -C final.txt points.txt > labels.txt
	run -0 --separate-stderr clkmeans --assign final.txt --distances points.txt
	assert_equal "$(cut -f 1 <<< "$output")" "$(py "$REF/clkmeans_ref.py" assign points.txt final.txt 2> /dev/null)"
	assert_equal "$(cut -f 1 <<< "$output")" "$(cat labels.txt)"
}

@test "EXAMPLES: keep the best of ten random starts, reproducibly, and see each iteration" {
	cd "$T"
	cp "$D/points.txt" points.txt
	run -0 --separate-stderr clkmeans -v -k 3 --init random --n-init 10 --seed 7 points.txt
	assert_equal "$(grep -c 'run [0-9]*:' <<< "$stderr")" 10
	assert_regex "$stderr" "iteration 1: inertia"
	first=$output
	run -0 --separate-stderr clkmeans -v -k 3 --init random --n-init 10 --seed 7 points.txt
	assert_equal "$output" "$first"
}

@test "EXAMPLES: stream rows through 1 MiB of device memory, from NPY to NPY" {
	cd "$T"
	py "$REF/clkmeans_ref.py" gen separated 30000 16 3 28 points.npy
	run -0 --separate-stderr clkmeans -d "$OCL" -v -k 3 --max-device-mem 1M -C final.npy -o labels.npy points.npy
	assert_regex "$stderr" "streaming the rows in [0-9]+ batches"
	clkmeans -d "$OCL" -k 3 -C whole.npy -o whole.npy.labels -O npy points.npy
	run -0 py -c "
import numpy as np
a, b = np.load('labels.npy'), np.load('whole.npy.labels')
c, d = np.load('final.npy'), np.load('whole.npy')
print(a.shape, bool((a == b).all()), c.shape, bool((c == d).all()))"
	assert_output "(30000, 1) True (3, 16) True"
}

# ---- -d auto by the work, and the rows in a pinned host buffer (issue 12) ----

@test "auto on the example's points runs natively on the host and -v says why" {
	clkmeans -d cpu:0 -k 3 "$D/points.txt" > "$T/pocl.txt"
	run -0 --separate-stderr clkmeans -d auto -v -k 3 "$D/points.txt"
	assert_output "$(cat "$T/pocl.txt")"
	# 60 rows x 3 x 2 columns, 22 passes: 20 iterations expected, the final labels,
	# k-means++
	assert_regex "$stderr" $'(^|\n)clkmeans: auto: the host\'s CPU, natively: 7.92e\\+03 row-centroid-column products, estimated [0-9.e+-]+ s on [0-9]+ threads?, within a GPU\'s start \\(0.40 s\\): no OpenCL loaded'
	assert_regex "$stderr" $'(^|\n)clkmeans: device: the host\'s CPU, native C \\(no OpenCL\\)'
	# --assign: one pass
	run -0 --separate-stderr clkmeans -d auto -v --assign "$D/centroids.txt" "$D/points.txt"
	assert_regex "$stderr" $'(^|\n)clkmeans: auto: the host\'s CPU, natively: 360 row-centroid-column products, estimated '
}

@test "a device given with -d is used as given, without weighing the work: cpu natively, cpu:0 on OpenCL" {
	run -0 --separate-stderr clkmeans -d cpu:0 -v -k 3 "$D/points.txt"
	[[ $stderr != *"auto:"* ]]
	assert_regex "$stderr" $'(^|\n)clkmeans: device: [^\n]* \\(cpu, '
	run -0 --separate-stderr clkmeans -d cpu -v -k 3 "$D/points.txt"
	[[ $stderr != *"auto:"* ]]
	assert_regex "$stderr" $'(^|\n)clkmeans: device: the host\'s CPU, native C \\(no OpenCL\\)'
}

# The native host path computes what the OpenCL program computes (kernels/
# clkmeans_host.c): its labels, distances and centroids are PoCL's CPU device's, byte
# for byte, whatever the data, the start, the tolerance, and with empty clusters.
@test "the native path (-d cpu) gives PoCL's bytes (-d cpu:0): k 2 to 64, widths 2 to 32, every start, --tol, --n-init, --assign, empty clusters" {
	local data opts a
	for data in "separated 300 2 2 5" "overlapping 1000 3 8 6" "ties 800 4 16 7" \
	    "far 600 8 5 8" "duplicates 700 16 40 9" "adversarial 900 32 64 10" \
	    "overlapping 2000 17 33 11"; do
		gen $data
		a=($data)
		for opts in "--init $T/c0.txt" "-k ${a[3]} --seed 4" \
		    "-k ${a[3]} --init random --n-init 3 --seed 7" \
		    "--init $T/c0.txt --tol 0 --max-iter 15" "-k ${a[3]} --tol 1e-2" \
		    "--assign $T/c0.txt"; do
			echo "$data: $opts"	# shown when the test fails
			clkmeans -d cpu $opts --distances -C "$T/cn.txt" "$T/x.npy" > "$T/native"
			clkmeans -d cpu:0 $opts --distances -C "$T/cp.txt" "$T/x.npy" > "$T/pocl"
			cmp "$T/native" "$T/pocl"
			cmp "$T/cn.txt" "$T/cp.txt"
		done
	done
	# duplicate starts leave clusters empty: relocated alike
	gen duplicates 2000 3 12 36
	head -n 1 "$T/c0.txt" > "$T/c.txt"
	for i in $(seq 11); do awk '{ print $1 + 1000 + '$i', $2, $3 }' "$T/c0.txt" | head -n 1; done >> "$T/c.txt"
	clkmeans -d cpu -v --init "$T/c.txt" --distances -C "$T/cn.txt" "$T/x.npy" > "$T/native" 2> "$T/log"
	run -0 grep -c 'relocated' "$T/log"
	clkmeans -d cpu:0 --init "$T/c.txt" --distances -C "$T/cp.txt" "$T/x.npy" > "$T/pocl"
	cmp "$T/native" "$T/pocl"
	cmp "$T/cn.txt" "$T/cp.txt"
}

@test "rows whose nearest centroid only the fused multiply-adds of the kernels' float64 sums decide: the native path labels them as PoCL does" {
	local f_lines f_line f_i f_want
	py "$REF/clkmeans_fma.py" 8 "$T" > "$T/want"
	# (bats's run sets i and other plain names: the loop's names are f_*)
	mapfile -t f_lines < "$T/want"
	for f_line in "${f_lines[@]}"; do
		read -r f_i f_want <<< "$f_line"
		run -0 clkmeans -d cpu:0 --assign "$T/cent_$f_i.txt" "$T/row_$f_i.txt"
		assert_output "$f_want"
		run -0 clkmeans -d cpu --assign "$T/cent_$f_i.txt" "$T/row_$f_i.txt"
		assert_output "$f_want"
	done
	[ "$(wc -l < "$T/want")" = 8 ]
}

@test "without any OpenCL platform, auto above the host's share and -d cpu run natively; cpu:0 is an error" {
	# an ICD loader that finds no vendor: no platform at all
	mkdir "$T/icd"
	py -c "import numpy as np; np.save('$T/m.npy', np.random.default_rng(4).standard_normal((20000, 32)).astype(np.float32))"
	# 20000 x 32 x 512 x 12 passes (3.9e9) on one thread: past the GPU's start, so auto
	# looks for OpenCL devices
	clkmeans -d cpu -j 1 -k 512 --max-iter 10 --distances "$T/m.npy" > "$T/native"
	run -0 --separate-stderr env -u OCL_ICD_FILENAMES OCL_ICD_VENDORS="$T/icd" clkmeans -d auto -j 1 -v -k 512 \
	    --max-iter 10 --distances "$T/m.npy"
	assert_regex "$stderr" $'(^|\n)clkmeans: auto: the host\'s CPU, natively: no OpenCL device'
	assert_output "$(cat "$T/native")"
	run -0 --separate-stderr env -u OCL_ICD_FILENAMES OCL_ICD_VENDORS="$T/icd" clkmeans -d cpu -k 3 "$D/points.txt"
	run -1 --separate-stderr env -u OCL_ICD_FILENAMES OCL_ICD_VENDORS="$T/icd" clkmeans -d cpu:0 -k 3 "$D/points.txt"
	assert_regex "$stderr" "no OpenCL platform found"
}

# maps ARG...: clkmeans ARG... with tests/mapshim.c preloaded; the OpenCL, PoCL and NVIDIA
# libraries it had mapped at exit in $T/maps (no file: it did not exit through its destructors).
maps() {
	rm -f "$T/maps"
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" \
	    MAPSHIM_OUT="$T/maps" LD_PRELOAD="$ACCELKIT_BUILD/test/mapshim.so" clkmeans "$@" > /dev/null
}

@test "small work on auto and -d cpu load no OpenCL platform: no libpocl mapped at exit" {
	# the check can see one: PoCL's device maps it
	maps -d cpu:0 -k 3 "$D/points.txt"
	run -0 grep -c 'libpocl' "$T/maps"
	for dev in auto cpu; do
		maps -d $dev -k 3 "$D/points.txt"
		[ -e "$T/maps" ] || fail "no list of mapped libraries: the run ended without its destructors"
		run -1 grep -E 'libpocl|libnvidia-opencl|libamdocl|libintelocl' "$T/maps"
	done
	# nor does --assign, from NPY
	gen overlapping 500 4 3 12
	maps -d auto --assign "$T/c0.txt" "$T/x.npy"
	run -1 grep -E 'libpocl|libnvidia-opencl' "$T/maps"
}

@test "small work on auto and -d cpu map no OpenCL library at all: no libOpenCL at exit" {
	maps -d cpu:0 -k 3 "$D/points.txt"
	run -0 grep -c 'libOpenCL' "$T/maps"
	for dev in auto cpu; do
		maps -d $dev -k 3 "$D/points.txt"
		[ -e "$T/maps" ] || fail "no list of mapped libraries: the run ended without its destructors"
		run -1 grep -E 'libOpenCL|libpocl' "$T/maps"
	done
}

# ---- the device opened beside the read (km_start, clx_start) ----

# phases FILE: the names of -v's phases in FILE, in the order -v prints them (each
# phase's place is that of its first time taken), one a line.
phases() {
	sed -n 's/^clkmeans: time \(.*[^ ]\)  *[0-9.][0-9.]* ms$/\1/p' "$1"
}

@test "a named OpenCL device is opened beside the read: -v's phases show the open waited for, and the build in it when an NPY header gave the columns" {
	clkmeans -d $OCL -v -k 3 "$D/points.txt" 2> "$T/err" > /dev/null
	run -0 phases "$T/err"
	assert_line "open device"
	assert_line "open device (waited)"
	# text: the columns are known after the read, the build after the wait
	assert_equal "$(phases "$T/err" | grep -E '^(open device \(waited\)|build)$' | tr '\n' ,)" \
	    "open device (waited),build,"
	# NPY: the header gives the columns, and the thread builds before the wait ends
	gen overlapping 500 4 3 12
	clkmeans -d $OCL -v -k 3 "$T/x.npy" 2> "$T/err" > /dev/null
	assert_equal "$(phases "$T/err" | grep -E '^(open device \(waited\)|build)$' | tr '\n' ,)" \
	    "build,open device (waited),"
	# the host, and auto on small work, open nothing
	for dev in cpu auto; do
		clkmeans -d $dev -v -k 3 "$D/points.txt" 2> "$T/err" > /dev/null
		run -0 phases "$T/err"
		refute_line --partial "open device"
	done
}

@test "auto above the host's share weighs the device beside the read, from an NPY header or a text file's size, and its labels are float64 Lloyd's" {
	# 20000 x 32, 512 centroids from a file, 10 iterations and the final labels on one
	# thread: 3.6e9 products, past a GPU's start (the host's share): the thread
	# decides (here, without a GPU, the host; on a GPU machine, the GPU) while the
	# rows are read
	gen overlapping 20000 32 512 31
	py "$REF/clkmeans_ref.py" lloyd "$T/x.npy" "$T/c0.txt" 10 0 > "$T/ref.txt"
	clkmeans -d auto -j 1 -v --init "$T/c0.txt" --max-iter 10 --tol 0 --distances \
	    "$T/x.npy" > "$T/ours.txt" 2> "$T/err"
	run -0 cat "$T/err"
	assert_line "clkmeans: auto: about 3.6e+09 row-centroid-column products from the input's size: OpenCL opened beside the read"
	run -0 phases "$T/err"
	assert_line "open device (waited)"
	run -0 py "$REF/clkmeans_ref.py" check "$T/ours.txt" "$T/ref.txt"
	# text: the estimate from the file's bytes (about 8 a value), the same labels
	py -c "import numpy as np; np.savetxt('$T/x.txt', np.load('$T/x.npy'), fmt='%.9g')"
	clkmeans -d auto -j 1 -v --init "$T/c0.txt" --max-iter 10 --tol 0 --distances \
	    "$T/x.txt" > "$T/ours.txt" 2> "$T/err"
	run -0 cat "$T/err"
	assert_line --regexp "^clkmeans: auto: about [0-9.e+]+ row-centroid-column products from the input's size: OpenCL opened beside the read$"
	run -0 py "$REF/clkmeans_ref.py" check "$T/ours.txt" "$T/ref.txt"
	# a tenth of the rows is within the host's share: nothing opened, nothing waited for
	py -c "import numpy as np; np.save('$T/s.npy', np.load('$T/x.npy')[:2000])"
	clkmeans -d auto -j 1 -v --init "$T/c0.txt" --max-iter 10 --tol 0 "$T/s.npy" \
	    > /dev/null 2> "$T/err"
	run -0 phases "$T/err"
	refute_line --partial "open device"
}

@test "the device opened beside the read gives the native path's bytes: text and NPY, a cold cache, no cache, --assign" {
	gen overlapping 3000 8 5 21
	clkmeans -d cpu --seed 3 -k 5 --distances -C "$T/cn.txt" "$T/x.npy" > "$T/native"
	clkmeans -d cpu --assign "$T/c0.txt" --distances "$T/x.npy" > "$T/native_assign"
	py -c "import numpy as np; np.savetxt('$T/x.txt', np.load('$T/x.npy'), fmt='%.9g')"
	clkmeans -d cpu --seed 3 -k 5 --distances "$T/x.txt" > "$T/native_text"
	# NPY, built in the thread: a cold cache (compiled there), then warm (loaded there)
	for run in cold warm; do
		XDG_CACHE_HOME="$T/cache" clkmeans -d cpu:0 --seed 3 -k 5 --distances \
		    -C "$T/cp.txt" "$T/x.npy" > "$T/ocl"
		cmp "$T/native" "$T/ocl"
		cmp "$T/cn.txt" "$T/cp.txt"
	done
	ls "$T/cache/accelkit/cl"/clkmeans*-*.bin
	# text, built after the read, with no cache; --assign (no -k: built after the read)
	ACCELKIT_CL_CACHE=0 clkmeans -d cpu:0 --seed 3 -k 5 --distances "$T/x.txt" > "$T/ocl"
	cmp "$T/native_text" "$T/ocl"
	clkmeans -d cpu:0 --assign "$T/c0.txt" --distances "$T/x.npy" > "$T/ocl"
	cmp "$T/native_assign" "$T/ocl"
}

# progs ERRFILE: the programs -v says were built, "NAME BITS" a line, in its order.
progs() {
	sed -n 's/^clkmeans: build: \([a-z_]*\) (KM_KERNELS=\([0-9]*\)) in .*/\1 \2/p' "$1"
}

@test "a run builds only the kernels it needs, one program on a CPU or one a part at once (split=1, the default on NVIDIA's GPUs), each cached on its own, runs at once sharing the cache" {
	gen overlapping 3000 8 5 21
	clkmeans -d cpu --seed 3 -k 5 --distances "$T/x.npy" > "$T/native"
	py "$REF/clkmeans_ref.py" lloyd "$T/x.npy" "$T/c0.txt" 300 1e-4 > "$T/ref.txt"
	export XDG_CACHE_HOME=$T/cache
	local c=$T/cache/accelkit/cl
	if ! on_gpu; then
		# one program: assign, exact, update and kpp (1 + 4 + 8 + 16); from given
		# centroids no kpp; PoCL's device gives the native path's bytes
		clkmeans -d cpu:0 -v --seed 3 -k 5 --distances "$T/x.npy" > "$T/ocl" 2> "$T/err"
		assert_equal "$(progs "$T/err")" "clkmeans 29"
		cmp "$T/native" "$T/ocl"
		clkmeans -d cpu:0 -v --init "$T/c0.txt" --distances "$T/x.npy" > "$T/ours.txt" 2> "$T/err"
		assert_equal "$(progs "$T/err")" "clkmeans 13"
		run -0 py "$REF/clkmeans_ref.py" check "$T/ours.txt" "$T/ref.txt"
		run -0 ls "$c"
		assert_equal "$(ls "$c" | grep -c '^clkmeans-.*\.bin$')" 2
	fi
	# a program a part, built at once on threads: the same answers
	export CLKMEANS_TUNE=split=1
	clkmeans -d $OCL -v --seed 3 -k 5 --distances "$T/x.npy" > "$T/ocl" 2> "$T/err"
	local want=("clkmeans_assign 1" "clkmeans_exact 4" "clkmeans_seed 16" "clkmeans_update 8")
	# (the TF32 assign's float32 recheck where the GPU takes TF32)
	! grep -q 'TF32 products' "$T/err" || want+=("clkmeans_recheck 2")
	assert_equal "$(progs "$T/err" | sort | tr '\n' ,)" \
	    "$(printf '%s\n' "${want[@]}" | sort | tr '\n' ,)"
	on_gpu || cmp "$T/native" "$T/ocl"
	local p
	for p in assign exact update seed; do
		[ "$(ls "$c" | grep -c "^clkmeans_$p-.*\.bin\$")" = 1 ] || fail "no single cache entry of clkmeans_$p"
	done
	# warm: every program from the cache
	clkmeans -d $OCL -v --seed 3 -k 5 --distances "$T/x.npy" > "$T/ocl2" 2> "$T/err"
	cmp "$T/ocl" "$T/ocl2"
	run -0 grep -c '^clkmeans: program cache: .*: used$' "$T/err"
	assert_output "$(progs "$T/err" | wc -l)"
	# --assign: no kpp
	clkmeans -d $OCL -v --assign "$T/c0.txt" "$T/x.npy" > /dev/null 2> "$T/err"
	run -0 progs "$T/err"
	refute_line --partial "clkmeans_seed"
	assert_line "clkmeans_assign 1"
	# four runs at once on a cold cache, each building its programs on threads: each
	# answer right, then every entry good (a fifth run uses them all)
	rm -rf "$T/cache"
	local i
	for i in 1 2 3 4; do
		clkmeans -d $OCL --init "$T/c0.txt" --distances "$T/x.npy" > "$T/par$i.txt" &
	done
	wait
	for i in 1 2 3 4; do
		run -0 py "$REF/clkmeans_ref.py" check "$T/par$i.txt" "$T/ref.txt"
	done
	clkmeans -d $OCL -v --init "$T/c0.txt" --distances "$T/x.npy" > /dev/null 2> "$T/err"
	grep -q '^clkmeans: program cache: .*: used$' "$T/err" ||
	    fail "no cache entry used after four runs at once: $(ls -l "$c"; grep -E 'cache|build' "$T/err")"
	run -0 grep -c '^clkmeans: program cache: .*: used$' "$T/err"
	assert_output "$(progs "$T/err" | wc -l)"
	refute [ "$(progs "$T/err" | wc -l)" = 0 ]
}

@test "a device that cannot be opened beside the read is the same error and status as before: no such device, no such platform, a malformed spec" {
	gen overlapping 500 4 3 12
	for f in "$D/points.txt" "$T/x.npy"; do
		run -1 --separate-stderr clkmeans -d 9:9 -k 3 "$f"
		assert_equal "$stderr" "clkmeans: device '9:9': no such OpenCL device (see --list-devices)"
		assert_output ""
		run -1 --separate-stderr clkmeans -d cpu:7 -k 3 "$f"
		assert_equal "$stderr" "clkmeans: device 'cpu:7': no such OpenCL device (see --list-devices)"
		run -1 --separate-stderr clkmeans -d cpu:0 --platform no-such-platform -k 3 "$f"
		assert_equal "$stderr" "clkmeans: device 'cpu:0': no such OpenCL device on platforms matching no-such-platform (see --list-devices)"
		run -2 --separate-stderr clkmeans -d 0:x -k 3 "$f"
		assert_regex "$stderr" "^clkmeans: invalid device '0:x' \(expected auto, cpu,"
	done
	# no rows: the device opened beside the read is closed, and the run ends as before
	py -c "import numpy as np; np.save('$T/empty.npy', np.zeros((0, 2), np.float32))"
	run -0 --separate-stderr clkmeans -d cpu:0 --assign "$D/centroids.txt" "$T/empty.npy"
	assert_output ""
	assert_equal "$stderr" ""
}

@test "auto weighs rows x k x columns for each pass above the host's share: 200000 x 64 with k = 1024 on the GPU" {
	require_gpu
	# 20000 x 32 x 16 x 22 passes (2.25e8) on one thread: within the GPU's start, on the
	# host without weighing
	py -c "import numpy as np; np.save('$T/m.npy', np.random.default_rng(4).standard_normal((20000, 32)).astype(np.float32))"
	run -0 --separate-stderr clkmeans -d auto -j 1 -v -k 16 "$T/m.npy"
	assert_regex "$stderr" $'(^|\n)clkmeans: auto: the host\'s CPU, natively: 2.25e\\+08 row-centroid-column products, estimated '
	py -c "import numpy as np; np.save('$T/x.npy', np.random.default_rng(5).standard_normal((200000, 64)).astype(np.float32))"
	# 10 iterations and the final labels (random starts: no seeding pass): 11 passes
	# of 200000 x 1024 x 64
	run -0 --separate-stderr clkmeans -d auto -v -k 1024 --init random --max-iter 10 \
	    --tol 0 "$T/x.npy"
	assert_regex "$stderr" $'(^|\n)clkmeans: auto: gpu, estimated [0-9.e+-]+ s \\([^)]*, 1.44e\\+11 row-centroid-column products\\) against [0-9.e+-]+ s on [0-9]+ CPU threads?'
	assert_regex "$stderr" $'(^|\n)clkmeans: device: [^\n]* \\(gpu, '
	echo "$output" > "$T/gpu.txt"
	# decided and opened beside the read, the program built there too (the NPY header
	# gave the columns): the build before the wait ends
	assert_regex "$stderr" $'(^|\n)clkmeans: auto: about 1.44e\\+11 row-centroid-column products from the input\'s size: OpenCL opened beside the read'
	printf '%s\n' "$stderr" > "$T/err"
	assert_equal "$(phases "$T/err" | grep -E '^(open device \(waited\)|build)$' | tr '\n' ,)" \
	    "build,open device (waited),"
	# the labels are float64's on either device, from the same random rows
	clkmeans -d cpu:0 -k 1024 --init random --max-iter 10 --tol 0 "$T/x.npy" > "$T/cpu.txt"
	cmp "$T/gpu.txt" "$T/cpu.txt"
}

@test "the rows in a pinned or a pageable host buffer give the same bytes, resident and streamed" {
	gen overlapping 5000 17 8 24
	local mem
	for mem in 100G 200K; do
		echo "--max-device-mem $mem"
		clkmeans -d "$OCL" -v --max-device-mem $mem -k 8 -C "$T/c1.txt" --distances "$T/x.npy" \
		    > "$T/pinned.txt" 2> "$T/log"
		run -0 cat "$T/log"
		assert_line "clkmeans: the rows: 340000 bytes in a mapped host buffer (pinned where the driver pins them)"
		[ $mem = 100G ] || assert_line --regexp '^clkmeans: streaming the rows in [2-9] batches'
		ACCELKIT_PINNED_BYTES=0 clkmeans -d "$OCL" -v --max-device-mem $mem -k 8 -C "$T/c2.txt" \
		    --distances "$T/x.npy" > "$T/pageable.txt" 2> "$T/log"
		run -0 cat "$T/log"
		assert_line "clkmeans: the rows: 340000 bytes in pageable memory (pinned memory would pass 0 bytes): slower copies"
		cmp "$T/pinned.txt" "$T/pageable.txt"
		cmp "$T/c1.txt" "$T/c2.txt"
		[ $mem = 100G ] && cp "$T/pinned.txt" "$T/resident.txt"
		cmp "$T/resident.txt" "$T/pinned.txt"
	done
	# and they are k-means' labels: from the same start, as the float64 Lloyd's
	run -0 vs lloyd -d "$OCL" --max-device-mem=200K
	assert_output ok
}

@test "an NPY file's rows are read while the device starts, into ordinary memory, with the pinned run's bytes and float64 Lloyd's labels" {
	gen overlapping 5000 17 8 24
	clkmeans -d "$OCL" -v -k 8 -C "$T/c1.txt" --distances "$T/x.npy" > "$T/beside.txt" 2> "$T/log"
	run -0 cat "$T/log"
	assert_line "clkmeans: the rows: 340000 bytes read beside the device's start, in ordinary memory"
	refute_line --partial "in a mapped host buffer"
	# --max-device-mem: read once the device is open, into pinned memory
	clkmeans -d "$OCL" -v --max-device-mem 100G -k 8 -C "$T/c2.txt" --distances "$T/x.npy" \
	    > "$T/pinned.txt" 2> "$T/log"
	run -0 cat "$T/log"
	assert_line "clkmeans: the rows: 340000 bytes in a mapped host buffer (pinned where the driver pins them)"
	cmp "$T/beside.txt" "$T/pinned.txt"
	cmp "$T/c1.txt" "$T/c2.txt"
	run -0 vs lloyd -d "$OCL"
	assert_output ok
}

@test "NPY rows through a pipe are read whole and give the file's labels" {
	gen overlapping 3000 9 5 25
	clkmeans -k 5 --distances "$T/x.npy" > "$T/file.txt"
	cat "$T/x.npy" | clkmeans -d "$OCL" -v -k 5 --distances - > "$T/pipe.txt" 2> "$T/log"
	cmp "$T/file.txt" "$T/pipe.txt"
	run -0 cat "$T/log"
	refute_line --partial "clkmeans: the rows: "
}

@test "rows through a pipe one byte at a time, NPY or text, give the file's labels" {
	gen overlapping 400 5 4 26
	clkmeans -k 4 --distances "$T/x.npy" > "$T/file.txt"
	dd if="$T/x.npy" bs=1 status=none | clkmeans -k 4 --distances > "$T/npy.txt"
	cmp "$T/file.txt" "$T/npy.txt"
	py -c "import numpy as np; np.savetxt('$T/x.txt', np.load('$T/x.npy'), fmt='%.9g')"
	dd if="$T/x.txt" bs=1 status=none | clkmeans -k 4 --distances > "$T/txt.txt"
	cmp "$T/file.txt" "$T/txt.txt"
}

# ---- several devices (-d cpu:all, gpu:all, gpu:0,1, 0:0,1) ----
# PoCL shows as many CPU devices as POCL_DEVICES names pthread drivers. The rows are
# split over them; labels, distances and centroids must be the one device's bytes
# (the fixed-point sums are added on the host), and the one device's run is itself
# checked against scikit-learn above and here.

# split N FILE [OPTION...]: FILE clustered on one PoCL device and on N (-d cpu:all),
# with --distances and -C; every output of the N devices is the one device's bytes.
# -v's lines of the N-device run are left in $T/log.
split() {
	local n=$1 f=$2
	shift 2
	local devs=$(printf 'pthread %.0s' $(seq "$n"))
	POCL_DEVICES=pthread clkmeans -d cpu:0 --distances -C "$T/c1.txt" "$@" "$f" > "$T/one" ||
	    return
	POCL_DEVICES="$devs" clkmeans -v -d cpu:all --distances -C "$T/cn.txt" "$@" "$f" \
	    > "$T/many" 2> "$T/log" || { cat "$T/log"; return 1; }
	cmp "$T/one" "$T/many" || { echo "$n devices: labels differ: $*"; return 1; }
	cmp "$T/c1.txt" "$T/cn.txt" || { echo "$n devices: centroids differ: $*"; return 1; }
	[ "$(grep -c '^clkmeans: device [0-9]* (.*): [0-9]* rows, busy ' "$T/log")" = "$n" ] ||
	    { cat "$T/log"; echo "not $n devices' shares"; return 1; }
}

@test "two and three devices give one device's labels, distances and centroids: NPY and text, k-means++, random and given starts" {
	gen overlapping 2500 17 8 31
	py -c "import numpy as np; np.savetxt('$T/x.txt', np.load('$T/x.npy'), fmt='%.9g')"
	for n in 2 3; do
		for f in "$T/x.npy" "$T/x.txt"; do
			run split $n "$f" -k 8
			assert_success
			run split $n "$f" -k 8 --init random --seed 3 --n-init 2
			assert_success
		done
		run split $n "$T/x.npy" --init "$T/c0.txt"
		assert_success
	done
	# and the split run against scikit-learn from the same start
	POCL_DEVICES="pthread pthread pthread" run -0 vs sklearn -d cpu:all
	assert_output ok
}

@test "-v prints each device's rows, which cover the rows once, and its busy time" {
	gen separated 2100 5 7 32
	run split 3 "$T/x.npy" -k 7
	assert_success
	# "device I (NAME): rows A to B, C rows": contiguous from 0 to 2100
	run -0 awk '/^clkmeans: device [0-9]+ \(.*\): rows / {
		for (i = 1; i <= NF; i++) if ($i == "rows" && $(i + 2) == "to") { a = $(i + 1); b = $(i + 3) }
		sub(",", "", b); if (a != at) bad = 1; at = b; n++ }
	    END { print n, at, bad ? "gap" : "contiguous" }' "$T/log"
	assert_output "3 2100 contiguous"
}

@test "a device with no rows, and k above a device's rows, give one device's bytes and scikit-learn's labels" {
	# 300 rows over 3 devices in multiples of 256 rows: 0, 256 and 44 rows; k = 50 > 44
	gen overlapping 300 4 50 33
	run split 3 "$T/x.npy" --init "$T/c0.txt"
	assert_success
	assert_equal "$(grep -c ': rows 0 to 0, 0 rows' "$T/log")" 1
	assert_equal "$(grep -c ', 44 rows$' "$T/log")" 1
	run split 3 "$T/x.npy" -k 50
	assert_success
	POCL_DEVICES="pthread pthread pthread" run -0 vs sklearn -d cpu:all
	assert_output ok
}

@test "--max-device-mem bounds each device: its share streams in batches and gives the in-core bytes" {
	gen overlapping 5000 17 8 34
	# one device cannot hold 5000 rows' labels and distances in 60000 bytes; a third can
	run -1 --separate-stderr env POCL_DEVICES=pthread clkmeans -d cpu:0 -k 8 --max-device-mem 60000 "$T/x.npy"
	assert_regex "$stderr" "max-device-mem: 60000 bytes are too few"
	POCL_DEVICES=pthread clkmeans -d cpu:0 --distances -C "$T/c1.txt" -k 8 "$T/x.npy" > "$T/one"
	for init in k-means++ random; do
		POCL_DEVICES="pthread pthread pthread" clkmeans -v -d cpu:all --distances \
		    -C "$T/cn.txt" -k 8 --init $init --max-device-mem 60000 "$T/x.npy" > "$T/many" 2> "$T/log"
		assert_equal "$(grep -c 'streaming the rows in [0-9]* batches' "$T/log")" 3
		POCL_DEVICES=pthread clkmeans -d cpu:0 --distances -C "$T/c1.txt" -k 8 --init $init \
		    "$T/x.npy" > "$T/one"
		cmp "$T/one" "$T/many"
		cmp "$T/c1.txt" "$T/cn.txt"
	done
}

@test "--assign on several devices gives one device's labels and distances" {
	gen overlapping 3000 9 6 35
	run split 2 "$T/x.npy" --assign "$T/c0.txt"
	assert_success
	py "$REF/clkmeans_ref.py" assign "$T/x.npy" "$T/c0.txt" > "$T/ref.txt" 2> /dev/null
	run -0 cut -f 1 "$T/many"
	assert_output "$(cat "$T/ref.txt")"
}

@test "empty clusters relocated on several devices: the one device's bytes" {
	# far-off duplicate starts leave clusters empty in the first iteration
	gen duplicates 2000 3 12 36
	head -n 1 "$T/c0.txt" > "$T/c.txt"
	for i in $(seq 11); do awk '{ print $1 + 1000 + '$i', $2, $3 }' "$T/c0.txt" | head -n 1; done >> "$T/c.txt"
	run split 3 "$T/x.npy" --init "$T/c.txt"
	assert_success
	run grep -c 'relocated' "$T/log"
	assert_success
}

@test "EXAMPLES: divide the rows over two PoCL CPU devices" {
	cd "$D"
	run -0 env POCL_DEVICES="pthread pthread" clkmeans -d cpu:all -k 3 points.txt
	assert_equal "$output" "$(POCL_DEVICES=pthread clkmeans -d cpu:0 -k 3 points.txt)"
	POCL_DEVICES="pthread pthread" clkmeans -d cpu:all -k 3 -C "$T/c.txt" points.txt > "$T/l.txt"
	run -0 py "$REF/clkmeans_ref.py" centroids "$T/c.txt" points.txt "$T/l.txt"
	assert_output ok
}

@test "--list-devices shows every device that cpu:all divides among" {
	run -0 env POCL_DEVICES="pthread pthread pthread" clkmeans --list-devices
	assert_equal "$(grep -c '^0:[0-2]	cpu:[0-2]	' <<< "$output")" 3
}

@test "gpu:all and gpu:0,0 give one GPU's labels, distances and centroids" {
	require_gpu
	gen overlapping 200000 32 64 37
	clkmeans -d gpu -k 64 --distances -C "$T/c1.txt" "$T/x.npy" > "$T/one"
	for spec in gpu:all gpu:0,0; do
		clkmeans -v -d $spec -k 64 --distances -C "$T/cn.txt" "$T/x.npy" > "$T/many" 2> "$T/log"
		cmp "$T/one" "$T/many"
		cmp "$T/c1.txt" "$T/cn.txt"
	done
	run -0 vs sklearn -d gpu:all
	assert_output ok
}
