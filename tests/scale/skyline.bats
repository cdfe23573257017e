#!/usr/bin/env bats
# skyline at bench/skyline's sizes (bench/skyline_gen.c's data: 10,000,000 x 4
# independent, 1,000,000 x 8 anti-correlated, 10,000,000 x 2 spatial with 16 query
# points), classic and spatial, -p, --distinct on data with ties, on every device spec,
# a small --max-device-mem and -j: the CPU path's bytes are the reference where it ends
# in time (all but the 1,000,000 x 8 anti-correlated case, whose CPU reference is its
# first 100,000 rows), and tests/ref/scale_skyline.py checks every output: row numbers
# in order and unrepeated, 1,000 sampled skyline rows undominated, 1,000 sampled rows
# left out dominated, no left-out row equal to a skyline row (the first with --distinct).

setup() {
	load scale
	NI=$(size 10000000 200000)
	NA=$(size 1000000 20000)
	NA100=$(size 100000 5000)
	made skyline-$NI-$NA sh -c "cc -O2 -I$ACCELKIT_ROOT/common -o \$SCALE_OUT/gen \
	    $ACCELKIT_ROOT/bench/skyline_gen.c &&
	    \$SCALE_OUT/gen -s 3 indep $NI 4 > \$SCALE_OUT/indep4.npy &&
	    \$SCALE_OUT/gen -s 1 anti $NA 8 > \$SCALE_OUT/anti8.npy &&
	    \$SCALE_OUT/gen -s 2 anti $NA100 8 > \$SCALE_OUT/anti8-100k.npy &&
	    \$SCALE_OUT/gen -s 9 anti $NA 3 > \$SCALE_OUT/anti3.npy &&
	    \$SCALE_OUT/gen -s 5 indep $NI 2 > \$SCALE_OUT/sp.npy &&
	    \$SCALE_OUT/gen -s 7 -a 0.45 -b 0.55 indep 16 2 > \$SCALE_OUT/q16.npy &&
	    $ACCELKIT_PYTHON $REF/scale_skyline.py grid \$SCALE_OUT/anti3.npy 64 \$SCALE_OUT/anti3-grid.npy &&
	    $ACCELKIT_PYTHON $REF/scale_skyline.py grid \$SCALE_OUT/sp.npy 2048 \$SCALE_OUT/sp-grid.npy"
	S=$SCALE_DATA/skyline-$NI-$NA
	D=$BATS_TEST_TMPDIR
}

# devices REF ARGS...: every device spec, a small bound and -j 1 print REF's bytes.
# 64M holds 294,000 rows of 8 float32 columns (228 bytes a row of a classic run), over
# 400,000 of fewer columns or spatial; half of it (the skyline so far must fit in half
# a part) for each of two workers sharing a GPU.
devices() {
	local want=$1
	shift
	for run in "gpu" "$(many)" "gpu --max-device-mem 64M" "$(many) --max-device-mem 64M" \
	    "gpu -j 1"; do
		on skyline $run "$@" > "$D/out"
		same "$want" "$D/out" "skyline -d $run $*"
	done
}

@test "classic, 10,000,000 x 4 independent, min and max: the CPU, gpu, several workers, a small --max-device-mem and -j 1 print the same rows, checked by sampling" {
	on skyline cpu -j "$(cpu_j)" --index "$S/indep4.npy" > "$D/cpu"
	checked "" ref skyline check "$S/indep4.npy" "$D/cpu"
	devices "$D/cpu" --index "$S/indep4.npy"
	[ "$(on skyline gpu --count "$S/indep4.npy")" = "$(wc -l < "$D/cpu")" ]
	on skyline cpu -j "$(cpu_j)" "$S/indep4.npy" > "$D/cpu-rows"
	on skyline gpu "$S/indep4.npy" > "$D/gpu-rows"
	same "$D/cpu-rows" "$D/gpu-rows" "the rows, -d gpu"
	on skyline cpu -j "$(cpu_j)" --index -p max,min,max,min "$S/indep4.npy" > "$D/cpu"
	checked "" ref skyline check "$S/indep4.npy" "$D/cpu" -p max,min,max,min
	devices "$D/cpu" --index -p max,min,max,min "$S/indep4.npy"
}

@test "classic, 1,000,000 x 8 anti-correlated: gpu, several workers and a small --max-device-mem print the same rows, checked by sampling; at 100,000 rows the CPU's bytes" {
	on skyline gpu --index "$S/anti8.npy" > "$D/gpu"
	checked "" ref skyline check "$S/anti8.npy" "$D/gpu"
	on skyline "$(many)" --index "$S/anti8.npy" > "$D/out"
	same "$D/gpu" "$D/out" "skyline -d $(many)"
	# in parts: the skyline so far must fit in half a part (kernels/skyline_dev.cuh), and
	# a row of 8 float32 columns takes 228 device bytes (skyline_classic.cu); so parts
	# of twice the skyline's rows and a margin, when that is fewer than the rows
	local parts=$(($(wc -l < "$D/gpu") * 2 + 65536))
	if [ "$parts" -lt "$NA" ]; then
		on skyline gpu --max-device-mem $((parts * 228)) --index "$S/anti8.npy" > "$D/out"
		same "$D/gpu" "$D/out" "skyline -d gpu --max-device-mem $((parts * 228))"
	else
		echo "# the skyline is over half the rows: no parts to try" >&3
	fi
	on skyline cpu -j "$(cpu_j)" --index "$S/anti8-100k.npy" > "$D/cpu"
	checked "" ref skyline check "$S/anti8-100k.npy" "$D/cpu"
	devices "$D/cpu" --index "$S/anti8-100k.npy"
}

@test "ties: 1,000,000 x 3 anti-correlated on a grid of 1/64, with and without --distinct: the CPU, gpu, several workers, a small --max-device-mem and -j 1 print the same rows, checked" {
	for opt in "" --distinct; do
		on skyline cpu -j "$(cpu_j)" --index $opt "$S/anti3-grid.npy" > "$D/cpu"
		checked "${opt:-all equal rows}" ref skyline check "$S/anti3-grid.npy" "$D/cpu" $opt
		devices "$D/cpu" --index $opt "$S/anti3-grid.npy"
	done
}

@test "spatial, 10,000,000 points and 16 query points, and on a grid with --distinct: the CPU, gpu, several workers, a small --max-device-mem and -j 1 print the same rows, checked by sampling" {
	on skyline cpu -j "$(cpu_j)" --index -Q "$S/q16.npy" "$S/sp.npy" > "$D/cpu"
	checked "" ref skyline check "$S/sp.npy" "$D/cpu" -Q "$S/q16.npy"
	devices "$D/cpu" --index -Q "$S/q16.npy" "$S/sp.npy"
	for opt in "" --distinct; do
		on skyline cpu -j "$(cpu_j)" --index $opt -Q "$S/q16.npy" "$S/sp-grid.npy" > "$D/cpu"
		checked "${opt:-all equal points}" ref skyline check "$S/sp-grid.npy" "$D/cpu" -Q "$S/q16.npy" $opt
		devices "$D/cpu" --index $opt -Q "$S/q16.npy" "$S/sp-grid.npy"
	done
}
