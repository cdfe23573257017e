#!/usr/bin/env bats
# skyline: classic and spatial skylines against a brute-force checker
# (tests/ref/skyline_ref.py: every pair of rows, exact arithmetic).

setup() {
	load helpers
	R="$REF/skyline_ref.py"
	T="$BATS_TEST_TMPDIR"
	D="$TESTDATA/skyline"
}

# run_cases GROUP: every case of the group (in parallel), compared with its
# brute-force answer; prints the cases that differ.
run_cases() {
	py "$R" cases "$1" "$T/$1"
	local f b
	# shellcheck disable=SC2016
	ls "$T/$1"/*.in | xargs -P "$(nproc)" -I{} sh -c \
	    'b=${1%.in}; skyline --index $(cat "$b.args") "$1" > "$b.out" 2> "$b.err" || echo failed >> "$b.err"' _ {}
	for f in "$T/$1"/*.in; do
		b=${f%.in}
		cmp -s "$b.out" "$b.ref" || echo "differs: $(basename "$b") ($(cat "$b.args")) $(head -c 300 "$b.err")"
	done
}

@test "the classic skyline matches brute force for each distribution in d = 1..20" {
	run run_cases classic
	assert_success
	assert_output ''
}

@test "-p mixes min and max per chosen column as brute force does" {
	run run_cases prefer
	assert_success
	assert_output ''
}

@test "equal rows are all kept, or the first of them with --distinct" {
	run run_cases distinct
	assert_success
	assert_output ''
}

@test "the spatial skyline matches brute force over every query point" {
	run run_cases spatial
	assert_success
	assert_output ''
}

@test "rows print exactly as they appeared, carried columns and all" {
	printf '# id price rating\n1\t120, 4.5\n2  90 3.5\r\n\n3 200 4.5\n4 90.0 3.50 # same as 2\n5 95 4.0\n' > "$T/in.txt"
	run skyline -f 2,3 -p min,max "$T/in.txt"
	assert_success
	assert_output "$(printf '1\t120, 4.5\n2  90 3.5\n4 90.0 3.50 # same as 2\n5 95 4.0')"
}

@test "--index and --count report the skyline's rows and size" {
	printf '1 5\n2 4\n3 3\n2 2\n5 1\n2 4\n' > "$T/in.txt"
	run skyline --index "$T/in.txt"
	assert_success
	assert_output "$(printf '1\n4\n5')"
	run skyline --count -p max "$T/in.txt"
	assert_success
	assert_output 5
}

@test "NPY input prints its rows as text, and -O npy writes them as float32" {
	py "$R" gen anti 3000 4 3 --npy > "$T/in.npy"
	run skyline --index "$T/in.npy"
	assert_success
	ref=$(py "$R" "$T/in.npy")
	assert_output "$ref"
	skyline -O npy -o "$T/out.npy" "$T/in.npy"
	skyline "$T/in.npy" > "$T/out.txt"
	run py -c '
import sys, numpy as np
a = np.load(sys.argv[1]); x = np.load(sys.argv[2]); t = np.loadtxt(sys.argv[3], ndmin=2)
i = np.array([int(v) - 1 for v in sys.argv[4].split()])
print(a.dtype, np.array_equal(a, x[i]), np.array_equal(t.astype(np.float32), x[i]))
' "$T/out.npy" "$T/in.npy" "$T/out.txt" "$ref"
	assert_output 'float32 True True'
}

@test "an empty input has an empty skyline" {
	printf '# nothing here\n\n' > "$T/empty.txt"
	run skyline "$T/empty.txt"
	assert_success
	assert_output ''
	run skyline --count < "$T/empty.txt"
	assert_success
	assert_output 0
}

@test "standard input is read when no FILE is given" {
	run sh -c "printf '3 1\n1 3\n2 2\n3 3\n' | skyline --index"
	assert_success
	assert_output "$(printf '1\n2\n3')"
}

@test "points inside the hull are in the spatial skyline, far ones are not" {
	printf '0 0\n10 0\n0 10\n' > "$T/q.txt"
	printf '1 1\n5 5\n0 0\n20 20\n3 3\n-1 -1\n10 0.5\n' > "$T/p.txt"
	run skyline --index -Q "$T/q.txt" "$T/p.txt"
	assert_success
	assert_output "$(py "$R" -Q "$T/q.txt" "$T/p.txt")"
	assert_line 1
	assert_line 2
	assert_line 3
	assert_line 5
	refute_line 4
}

@test "a single query point keeps every point at the least distance" {
	printf '0 0\n' > "$T/q.txt"
	printf '3 4\n5 0\n-4 3\n1 7\n0 -5\n6 1\n' > "$T/p.txt"
	run skyline --index -Q "$T/q.txt" "$T/p.txt"
	assert_success
	assert_output "$(printf '1\n2\n3\n5')"
}

@test "the CPU and GPU print the same classic skyline of 100,000 anti-correlated rows" {
	require_gpu
	py "$R" gen anti 100000 6 8 --npy > "$T/a.npy"
	skyline -d cpu --index "$T/a.npy" > "$T/cpu"
	skyline -d gpu --index "$T/a.npy" > "$T/gpu"
	run cmp "$T/cpu" "$T/gpu"
	assert_success
	[ "$(wc -l < "$T/gpu")" -gt 1000 ]
}

@test "the CPU and GPU print the same spatial skyline of a million points" {
	require_gpu
	py "$R" gen indep 1000000 2 9 --npy > "$T/p.npy"
	py "$R" gen indep 12 2 10 > "$T/q.txt"
	skyline -d cpu --index -Q "$T/q.txt" "$T/p.npy" > "$T/cpu"
	skyline -d gpu --index -Q "$T/q.txt" "$T/p.npy" > "$T/gpu"
	run cmp "$T/cpu" "$T/gpu"
	assert_success
}

@test "a small --max-device-mem splits the work and gives the same skyline" {
	require_gpu
	py "$R" gen anti 200000 4 12 --npy > "$T/a.npy"
	skyline -d cpu --distinct --index "$T/a.npy" > "$T/cpu"
	skyline -d gpu --distinct --index --max-device-mem 8M "$T/a.npy" > "$T/gpu"
	run cmp "$T/cpu" "$T/gpu"
	assert_success
	py "$R" gen indep 200000 2 13 --npy > "$T/p.npy"
	printf '0.4 0.4\n0.6 0.45\n0.5 0.6\n' > "$T/q.txt"
	skyline -d cpu --index -Q "$T/q.txt" "$T/p.npy" > "$T/cpu"
	skyline -d gpu --index -Q "$T/q.txt" --max-device-mem 4M "$T/p.npy" > "$T/gpu"
	run cmp "$T/cpu" "$T/gpu"
	assert_success
}

@test "a NaN is an error naming its line" {
	printf '1 2\n3 nan\n' > "$T/in.txt"
	run --separate-stderr skyline "$T/in.txt"
	assert_failure 1
	assert_output ''
	[ "$stderr" = "skyline: $T/in.txt:2: column 2: NaN is not allowed" ]
}

@test "a NaN in NPY input is an error naming its place" {
	py -c 'import numpy as np, sys; a = np.ones((4, 2), np.float32); a[2, 1] = np.nan; np.save(sys.argv[1], a)' "$T/in.npy"
	run --separate-stderr skyline "$T/in.npy"
	assert_failure 1
	[[ "$stderr" == "skyline: $T/in.npy: byte "*": NaN in NPY data (row 3, column 2)" ]]
}

@test "a row of the wrong width is an error naming its line" {
	printf '1 2 3\n4 5 6\n7 8\n' > "$T/in.txt"
	run --separate-stderr skyline "$T/in.txt"
	assert_failure 1
	[ "$stderr" = "skyline: $T/in.txt:3: row has 2 columns, expected 3 as on line 1" ]
}

@test "an empty QUERIES file is an error naming it" {
	printf '# no points\n' > "$T/q.txt"
	printf '1 2\n' > "$T/p.txt"
	run --separate-stderr skyline -Q "$T/q.txt" "$T/p.txt"
	assert_failure 1
	[ "$stderr" = "skyline: $T/q.txt: no query points" ]
}

@test "query points or data points of the wrong width are errors naming the file" {
	printf '1\n2\n' > "$T/q.txt"
	printf '1 2 3\n' > "$T/p.txt"
	run --separate-stderr skyline -Q "$T/q.txt" "$T/p.txt"
	assert_failure 1
	[ "$stderr" = "skyline: $T/q.txt: query points have 1 columns, expected 2 (x y)" ]
	printf '1 2\n' > "$T/q.txt"
	run --separate-stderr skyline -Q "$T/q.txt" "$T/p.txt"
	assert_failure 1
	[ "$stderr" = "skyline: $T/p.txt: a spatial skyline needs 2 columns (x y), 3 are chosen; choose them with -f" ]
}

@test "a field past the last column is an error naming the file" {
	printf '1 2\n' > "$T/in.txt"
	run --separate-stderr skyline -f 1,3 "$T/in.txt"
	assert_failure 1
	[ "$stderr" = "skyline: $T/in.txt: column 3 does not exist (rows have 2)" ]
}

@test "bad option values are usage errors" {
	printf '1 2\n' > "$T/in.txt"
	run --separate-stderr skyline -f 0 "$T/in.txt"
	assert_failure 2
	[[ "$stderr" == *"fields are numbered from 1"* ]]
	run --separate-stderr skyline -f 3-1 "$T/in.txt"
	assert_failure 2
	run --separate-stderr skyline -p min,best "$T/in.txt"
	assert_failure 2
	[[ "$stderr" == *"expected min or max"* ]]
	run --separate-stderr skyline -p min,max,min "$T/in.txt"
	assert_failure 2
	[[ "$stderr" == *"gives 3 preferences for 2 chosen columns"* ]]
	run --separate-stderr skyline -Q "$T/in.txt" -p max "$T/in.txt"
	assert_failure 2
	run --separate-stderr skyline --index --count "$T/in.txt"
	assert_failure 2
	run --separate-stderr skyline -O npy --index "$T/in.txt"
	assert_failure 2
	run --separate-stderr skyline --bogus "$T/in.txt"
	assert_failure 2
	[[ "$stderr" == *"Try 'skyline --help'"* ]]
}

@test "a bad field list is a usage error naming --fields and the list" {
	printf '1 2\n' > "$T/in.txt"
	run --separate-stderr skyline -f 3-1 "$T/in.txt"
	assert_failure 2
	assert_output ''
	[ "${stderr_lines[0]}" = "skyline: invalid value for --fields: '3-1' (decreasing range)" ]
	[ "${stderr_lines[1]}" = "Try 'skyline --help' for more information." ]
	for bad in 1,x 1, ,2 1-2-3 2-x 1--3; do
		run --separate-stderr skyline --fields="$bad" "$T/in.txt"
		assert_failure 2
		[ "${stderr_lines[0]}" = "skyline: invalid value for --fields: '$bad' (expected numbers and ranges like 1,3-5,7-)" ]
	done
	run --separate-stderr skyline -f 1-0 "$T/in.txt"
	assert_failure 2
	[ "${stderr_lines[0]}" = "skyline: invalid value for --fields: '1-0' (fields are numbered from 1)" ]
	run --separate-stderr skyline -f 99999999999 "$T/in.txt"
	assert_failure 2
	[ "${stderr_lines[0]}" = "skyline: invalid value for --fields: '99999999999' (field number too large)" ]
}

@test "field lists choose each column once and in its place, as cut does" {
	py "$R" gen anti 500 6 21 > "$T/in.txt"
	for list in 4-,-2,2 -3 5- 2,1 1-6 3-3,3,1-1; do
		run skyline --index -f "$list" "$T/in.txt"
		assert_success
		assert_output "$(py "$R" -f "$list" "$T/in.txt")"
	done
	run skyline --index -f 1 -f 2,3 "$T/in.txt"
	assert_success
	assert_output "$(py "$R" -f 2,3 "$T/in.txt")"
}

@test "a coordinate beyond float32 is an error naming its line or NPY row" {
	printf '0 0\n' > "$T/q.txt"
	printf '1 2\n\n3 1e39\n' > "$T/p.txt"
	run --separate-stderr skyline -Q "$T/q.txt" "$T/p.txt"
	assert_failure 1
	assert_output ''
	[ "$stderr" = "skyline: $T/p.txt:3: a coordinate is beyond the float32 range" ]
	py -c 'import numpy as np, sys; a = np.ones((4, 2)); a[2, 0] = -1e300; np.save(sys.argv[1], a)' "$T/p.npy"
	run --separate-stderr skyline -Q "$T/q.txt" "$T/p.npy"
	assert_failure 1
	[ "$stderr" = "skyline: $T/p.npy: row 3: a coordinate is beyond the float32 range" ]
	run --separate-stderr skyline -Q "$T/p.npy" "$T/q.txt"
	assert_failure 1
	[ "$stderr" = "skyline: $T/p.npy: row 3: a coordinate is beyond the float32 range" ]
}

@test "a hull of more vertices than the GPU holds gives the brute-force skyline" {
	# 2,100 query points on a parabola, all on the hull: the GPU path holds 2,048, so
	# the CPU computes this skyline on every device
	py -c 'for i in range(2100): print(i, i * i)' > "$T/q.txt"
	py -c '
import random
random.seed(5)
for i in range(400): print(random.randint(-1000, 3000), random.randint(-3000000, 1000000))' > "$T/p.txt"
	run --separate-stderr skyline -v --index -Q "$T/q.txt" "$T/p.txt"
	assert_success
	assert_output "$(py "$R" -Q "$T/q.txt" "$T/p.txt")"
	[ "${#lines[@]}" -eq 95 ]
	[[ "$stderr" == *"2100 query points, 2100 on the hull"* ]]
	if on_gpu; then
		[[ "$stderr" == *"the hull has 2100 vertices, more than the GPU path holds (2048): using the CPU"* ]]
	fi
}

@test "--help prints the synopsis on standard output" {
	run --separate-stderr skyline --help
	assert_success
	assert_line --index 0 'usage: skyline [options] [FILE]'
	[ "$stderr" = '' ]
}

@test "-v names the device and the phases on standard error" {
	printf '1 2\n2 1\n' > "$T/in.txt"
	run --separate-stderr skyline -v "$T/in.txt"
	assert_success
	[[ "$stderr" == *"skyline: device: "* ]]
	[[ "$stderr" == *"time compute"* ]]
}

@test "-v names the tuning row chosen for the device" {
	printf '1 2\n2 1\n' > "$T/in.txt"
	run --separate-stderr skyline -v -d cpu "$T/in.txt"
	assert_success
	[[ "$stderr" == *"skyline: tuning: cpu ("*")"* ]]
	if on_gpu; then
		run --separate-stderr skyline -v -d gpu "$T/in.txt"
		assert_success
		[[ "$stderr" == *"skyline: tuning: default (H200 "*")"* ]]
	fi
}

# The examples of man/skyline.1, run on testdata/skyline.
@test "man page example: the cheapest, best-rated hotels" {
	run skyline -f 2,3 -p min,max "$D/hotels.txt"
	assert_success
	assert_output "$(py "$R" -f 2,3 -p min,max "$D/hotels.txt" | while read -r i; do grep -v '^#' "$D/hotels.txt" | sed -n "${i}p"; done)"
}

@test "man page example: how many hotels are on the skyline of price, rating and distance" {
	run skyline --count -f 2-4 -p min,max,min "$D/hotels.txt"
	assert_success
	assert_output "$(py "$R" -f 2-4 -p min,max,min "$D/hotels.txt" | wc -l)"
}

@test "man page example: the points no other is nearer to all of a set of places" {
	run skyline --index -Q "$D/places.txt" "$D/points.txt"
	assert_success
	assert_output "$(py "$R" -Q "$D/places.txt" "$D/points.txt")"
}

@test "man page example: the standard benchmark data from an NPY file" {
	py "$R" gen anti 2000 3 1 --npy > "$T/anti.npy"
	run skyline --index --distinct "$T/anti.npy"
	assert_success
	assert_output "$(py "$R" --distinct "$T/anti.npy")"
}
