#!/usr/bin/env bats
# docsim's other paths at bench/docsim's dense size (100,000 x 1024): queries, thresholds,
# -k 0 pairs, crowded neighbours (rows in clusters: the TF32 lists' float32 recheck) and
# --precision single; each checked by tests/ref/scale_docsim.py on 1,000 sampled rows
# recomputed in float64 and invariants over every line, the runs of one case against
# each other's bytes, and the CPU's float64 path where it ends in time (queries).

setup() {
	load scale
	N=$(size 100000 3000)
	M=$(size 1024 256)
	NQ=$(size 2000 300)
	made docsim-$N-$M sh -c "$ACCELKIT_PYTHON $REF/scale_docsim.py gen $N $M 1 \$SCALE_OUT/x.npy"
	X=$SCALE_DATA/docsim-$N-$M/x.npy
	D=$BATS_TEST_TMPDIR
}

lines() {
	ref docsim check "$@" --samples 0
}

@test "2,000 queries against 100,000 x 1024, -k 10 and 100 and -k 0 -t 0.12: the CPU's float64 path, gpu, several workers and TF32 off print the same bytes, sampled queries exact" {
	made docsim-q-$NQ-$M sh -c "$ACCELKIT_PYTHON $REF/scale_docsim.py gen $NQ $M 3 \$SCALE_OUT/q.npy"
	Q=$SCALE_DATA/docsim-q-$NQ-$M/q.npy
	for opt in "-k 10" "-k 100" "-k 0 -t 0.12"; do
		on docsim cpu -j "$(cpu_j)" $opt -q "$Q" "$X" > "$D/cpu"
		checked "$opt" ref docsim check "$X" "$D/cpu" -q "$Q" $opt
		[ "$opt" = "-k 0 -t 0.12" ] || ref docsim check "$X" "$D/cpu" -q "$Q" $opt --full --samples 0
		for spec in gpu "$(many)"; do
			on docsim $spec $opt -q "$Q" "$X" > "$D/out"
			lines "$X" "$D/out" -q "$Q" $opt
			same "$D/cpu" "$D/out" "$opt -q -d $spec"
		done
		ACCELKIT_DOCSIM_TF32=0 on docsim gpu $opt -q "$Q" "$X" > "$D/out"
		same "$D/cpu" "$D/out" "$opt -q ACCELKIT_DOCSIM_TF32=0"
	done
}

@test "all pairs with thresholds at 100,000 x 1024, -k 10 -t 0.12 and -k 0 -t 0.15: gpu, several workers and TF32 off print the same bytes, sampled rows exact" {
	for opt in "-k 10 -t 0.12" "-k 0 -t 0.15"; do
		on docsim gpu $opt "$X" > "$D/gpu"
		checked "$opt" ref docsim check "$X" "$D/gpu" $opt
		on docsim "$(many)" $opt "$X" > "$D/many"
		lines "$X" "$D/many" $opt
		same "$D/gpu" "$D/many" "$opt -d $(many)"
		ACCELKIT_DOCSIM_TF32=0 on docsim gpu $opt "$X" > "$D/dgemm"
		same "$D/gpu" "$D/dgemm" "$opt ACCELKIT_DOCSIM_TF32=0"
	done
}

@test "crowded neighbours (100,000 x 1024 in clusters of 100), -k 10 and 32: gpu, several workers and TF32 off print the same bytes, sampled rows exact" {
	made docsim-clusters-$N-$M sh -c "$ACCELKIT_PYTHON $REF/scale_docsim.py gen $N $M 4 \$SCALE_OUT/x.npy clusters"
	C=$SCALE_DATA/docsim-clusters-$N-$M/x.npy
	for k in 10 32; do
		on docsim gpu -k $k "$C" > "$D/gpu"
		checked "-k $k" ref docsim check "$C" "$D/gpu" -k $k --full
		on docsim "$(many)" -k $k "$C" > "$D/many"
		lines "$C" "$D/many" -k $k --full
		same "$D/gpu" "$D/many" "-k $k -d $(many)"
		ACCELKIT_DOCSIM_TF32=0 on docsim gpu -k $k "$C" > "$D/dgemm"
		same "$D/gpu" "$D/dgemm" "-k $k ACCELKIT_DOCSIM_TF32=0"
	done
}

@test "--precision single at 100,000 x 1024 -k 10: sampled rows within float32's bound of float64, invariants on every line" {
	on docsim gpu --precision single -k 10 "$X" > "$D/gpu"
	# 1e-6 times the square root of the vector length (docsim(1)), doubled
	checked "" ref docsim check "$X" "$D/gpu" -k 10 --full --tol "$(awk -v m="$M" 'BEGIN { print 2e-6 * sqrt(m) }')"
	on docsim "$(many)" --precision single -k 10 "$X" > "$D/many"
	same "$D/gpu" "$D/many" "--precision single -d $(many)"
}
