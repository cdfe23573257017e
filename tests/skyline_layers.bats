#!/usr/bin/env bats
# skyline --layers (non-dominated sorting, NSGA-II's fronts) against its definition
# computed by brute force in numpy (tests/ref/skyline_layers.py): ties, preferences,
# the first N layers, counts, rows as written, NPY, the -j threads and divided runs.

setup() {
	load helpers
	T=$BATS_TEST_TMPDIR
	L=$REF/skyline_layers.py
}

# points N D KIND SEED OUT: integer-valued (many ties), independent or anti-correlated
points() {
	py - "$@" <<-'EOF'
	import sys
	import numpy as np
	n, d, kind, seed, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), sys.argv[5]
	g = np.random.default_rng(seed)
	x = g.integers(0, 50, (n, d)).astype(np.float32)
	if kind == "anti":
	    x[:, -1] = 50 * d - x[:, :-1].sum(axis=1) + g.integers(-3, 4, n)
	if out.endswith(".npy"):
	    np.save(out, x)
	else:
	    np.savetxt(out, x, fmt="%g")
	EOF
}

@test "every row's layer is the brute-force non-dominated sorting's: ties, min and max, 2 to 5 columns" {
	for d in 2 3 5; do
		for kind in indep anti; do
			points 1000 $d $kind $d "$T/p.txt"
			for p in "" "-p max" "-p min,max$( [ $d -gt 2 ] && printf ',min%.0s' $(seq 3 $d))"; do
				run -0 skyline -d cpu -j 2 --layers --index $p "$T/p.txt"
				[ "$output" = "$(py "$L" $p "$T/p.txt")" ] || fail "d=$d $kind $p differs"
				[ "${#lines[@]}" -eq 1000 ]
			done
		done
	done
	# two columns of independent points: many layers
	points 1500 2 indep 1 "$T/p.txt"
	run -0 skyline --layers --count "$T/p.txt"
	[ "${#lines[@]}" -gt 20 ]
	[ "$output" = "$(py "$L" --count "$T/p.txt")" ]
}

@test "--layers N keeps the first N layers' rows; --count says each layer's size" {
	points 2000 3 anti 7 "$T/p.npy"
	for n in 1 2 5; do
		run -0 skyline -d cpu --layers=$n --index "$T/p.npy"
		[ "$output" = "$(py "$L" -n $n "$T/p.npy")" ] || fail "--layers=$n differs"
	done
	run -0 skyline -d cpu --layers --count "$T/p.npy"
	assert_output "$(py "$L" --count "$T/p.npy")"
	# the first layer is the skyline
	diff <(skyline -d cpu --index "$T/p.npy") <(skyline -d cpu --layers=1 --index "$T/p.npy" | cut -f 2)
}

@test "rows are printed as written after their layer, with the header, text and NPY" {
	printf 'name\tprice\trating\nA\t100\t4.5\nB\t80\t3.0\nC\t120\t4.0\nD\t90\t3.0\nE\t80\t3.0\n' >"$T/h.tsv"
	run -0 skyline -t '\t' --header -f 2,3 -p min,max --layers "$T/h.tsv"
	assert_output "$(printf 'name\tprice\trating\n1\tA\t100\t4.5\n1\tB\t80\t3.0\n2\tC\t120\t4.0\n2\tD\t90\t3.0\n1\tE\t80\t3.0')"
	points 300 2 indep 3 "$T/s.npy"
	run -0 skyline -d cpu --layers=2 "$T/s.npy"
	py - "$T/s.npy" "$output" <<-'EOF'
	import sys
	import numpy as np
	x = np.load(sys.argv[1])
	rows = [l.split("\t") for l in sys.argv[2].splitlines()]
	for r in rows:
	    assert r[0] in ("1", "2"), r
	    assert any(np.array_equal(np.float32([float(v) for v in r[1:]]), y) for y in x), r
	assert len(rows) >= 3
	EOF
}

@test "--layers divided over CPU workers and threads gives one worker's bytes" {
	points 3000 4 anti 11 "$T/p.npy"
	skyline -d cpu -j 1 --layers --index "$T/p.npy" >"$T/one"
	ACCELKIT_CPU_WORKERS=3 skyline -d cpu --layers --index "$T/p.npy" >"$T/many"
	cmp "$T/one" "$T/many"
	skyline -d cpu -j 2 --layers --index "$T/p.npy" | cmp - "$T/one"
}

@test "--layers on the GPU gives the CPU's bytes" {
	require_gpu
	points 200000 4 anti 5 "$T/p.npy"
	skyline -d cpu --layers=20 --index "$T/p.npy" >"$T/cpu"
	skyline -d gpu --layers=20 --index "$T/p.npy" | cmp - "$T/cpu"
	skyline -d gpu:0,0 --layers=20 --index "$T/p.npy" | cmp - "$T/cpu"
}

@test "--layers refuses what it does not sort: -Q, --distinct, -O npy, a bad N" {
	printf '1 2\n2 1\n' >"$T/p.txt"
	run -2 skyline --layers -Q "$T/p.txt" "$T/p.txt"
	assert_output --partial "does not go with -Q"
	run -2 skyline --layers --distinct "$T/p.txt"
	assert_output --partial "does not go with --distinct"
	run -2 skyline --layers -O npy "$T/p.txt"
	assert_output --partial "does not go with -O npy"
	run -2 skyline --layers=0 "$T/p.txt"
	assert_output --partial "--layers"
}
