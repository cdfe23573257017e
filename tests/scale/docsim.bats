#!/usr/bin/env bats
# docsim at bench/docsim's dense size (100,000 x 1024 float32, all pairs) on every device
# spec, TF32 on and off, a small --max-device-mem and -j, for -k from 1 to 256: every
# run of one case prints the same bytes; the CPU's float64 path is the reference at
# 20,000 rows, and at 100,000 1,000 sampled rows are recomputed in float64 by
# tests/ref/scale_docsim.py, which also checks every line's invariants (no repeated
# neighbour, lists sorted, k entries, ids in range).

setup() {
	load scale
	N=$(size 100000 3000)
	M=$(size 1024 256)
	N20=$(size 20000 1500)
	made docsim-$N-$M sh -c "$ACCELKIT_PYTHON $REF/scale_docsim.py gen $N $M 1 \$SCALE_OUT/x.npy"
	made docsim-$N20-$M sh -c "$ACCELKIT_PYTHON $REF/scale_docsim.py gen $N20 $M 2 \$SCALE_OUT/x.npy"
	X=$SCALE_DATA/docsim-$N-$M/x.npy
	X20=$SCALE_DATA/docsim-$N20-$M/x.npy
	D=$BATS_TEST_TMPDIR
}

# lines OUT ARGS...: the invariants alone over every line of OUT (fast).
lines() {
	ref docsim check "$@" --samples 0
}

@test "all pairs -k 10 at 100,000 x 1024: gpu, several workers, TF32 off, a small --max-device-mem and -j 1 print the same bytes, sampled rows exact" {
	on docsim gpu -k 10 "$X" > "$D/gpu"
	checked "" ref docsim check "$X" "$D/gpu" -k 10 --full
	on docsim "$(many)" -k 10 "$X" > "$D/many"
	lines "$X" "$D/many" -k 10 --full
	same "$D/gpu" "$D/many" "-d $(many)"
	ACCELKIT_DOCSIM_TF32=0 on docsim gpu -k 10 "$X" > "$D/dgemm"
	same "$D/gpu" "$D/dgemm" "ACCELKIT_DOCSIM_TF32=0"
	on docsim gpu --max-device-mem 512M -k 10 "$X" > "$D/bounded"
	same "$D/gpu" "$D/bounded" "--max-device-mem 512M"
	# two workers on one GPU halve the bound between them
	on docsim "$(many)" --max-device-mem 1G -k 10 "$X" > "$D/many-bounded"
	same "$D/gpu" "$D/many-bounded" "-d $(many) --max-device-mem 1G"
	on docsim gpu -j 1 -k 10 "$X" > "$D/j1"
	same "$D/gpu" "$D/j1" "-j 1"
}

@test "all pairs -k 32 at 100,000 x 1024 on gpu:0,0 and gpu:all: no repeated pair, -d gpu's bytes, sampled rows exact" {
	on docsim gpu -k 32 "$X" > "$D/gpu"
	checked "" ref docsim check "$X" "$D/gpu" -k 32 --full
	on docsim gpu:0,0 -k 32 "$X" > "$D/00"
	lines "$X" "$D/00" -k 32 --full
	same "$D/gpu" "$D/00" "-d gpu:0,0"
	if [ "$(many)" = gpu:all ]; then
		on docsim gpu:all -k 32 "$X" > "$D/all"
		lines "$X" "$D/all" -k 32 --full
		same "$D/gpu" "$D/all" "-d gpu:all"
	fi
	ACCELKIT_DOCSIM_TF32=0 on docsim gpu:0,0 -k 32 "$X" > "$D/dgemm"
	same "$D/gpu" "$D/dgemm" "ACCELKIT_DOCSIM_TF32=0 -d gpu:0,0"
}

@test "all pairs at 20,000 x 1024, -k 10, 32 and 256: the CPU's float64 path, gpu, gpu:0,0 and several workers print the same bytes" {
	for k in 10 32 256; do
		on docsim cpu -j "$(cpu_j)" -k $k "$X20" > "$D/cpu"
		checked "-k $k" ref docsim check "$X20" "$D/cpu" -k $k --full
		for spec in gpu gpu:0,0 "$(many)"; do
			on docsim $spec -k $k "$X20" > "$D/out"
			lines "$X20" "$D/out" -k $k --full
			same "$D/cpu" "$D/out" "-k $k -d $spec"
		done
	done
}

@test "all pairs -k 1, 16, 33, 64, 65 and 100 at 100,000 x 1024: gpu and several workers print the same bytes, sampled rows exact" {
	for k in 1 16 33 64 65 100; do
		on docsim gpu -k $k "$X" > "$D/gpu"
		checked "-k $k" ref docsim check "$X" "$D/gpu" -k $k --full
		on docsim "$(many)" -k $k "$X" > "$D/many"
		same "$D/gpu" "$D/many" "-k $k -d $(many)"
	done
	# the TF32 lists (k <= 32) against DGEMM throughout
	for k in 1 16; do
		ACCELKIT_DOCSIM_TF32=0 on docsim gpu -k $k "$X" > "$D/dgemm"
		on docsim gpu -k $k "$X" > "$D/gpu"
		same "$D/gpu" "$D/dgemm" "-k $k ACCELKIT_DOCSIM_TF32=0"
	done
}
