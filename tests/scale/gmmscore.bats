#!/usr/bin/env bats
# gmmscore at bench/gmmscore's size (6647 models x 32 Gaussians x 39 dimensions, 100,000
# frames, bench/gmmscore_gen.py's data) on every device spec, the tensor cores on and
# off, a small --max-device-mem, -j, NPY and HTK input, --top 1, 3 and 8, --mode sum
# and max, --all: the runs of one case print the same bytes, 1,000 sampled frames are
# recomputed in float64 by tests/ref/scale_gmmscore.py (which also checks every line's
# invariants), and the CPU path (the same bits with --mode max) at 10,000 frames.

setup() {
	load scale
	MODELS=$(size 6647 300)
	COMPS=$(size 32 8)
	F=$(size 100000 3000)
	F10=$(size 10000 1000)
	G=$SCALE_DATA/gmmscore-$MODELS-$COMPS-$F
	made gmmscore-$MODELS-$COMPS-$F sh -c "$ACCELKIT_PYTHON $ACCELKIT_ROOT/bench/gmmscore_gen.py \
	    \$SCALE_OUT --models $MODELS --comps $COMPS --frames $F &&
	    $ACCELKIT_PYTHON $REF/scale_gmmscore.py head \$SCALE_OUT/feats.npy $F10 \$SCALE_OUT/head.npy"
	D=$BATS_TEST_TMPDIR
	# the utterance is named by its path: one name for the NPY and the HTK file
	mkdir -p "$D/npy" "$D/htk" "$D/head"
	ln -sf "$G/feats.npy" "$D/npy/feats"
	ln -sf "$G/feats.htk" "$D/htk/feats"
	ln -sf "$G/head.npy" "$D/head/feats"
	cd "$D/npy"
}

@test "--top 1, 3 and 8, --mode sum, 100,000 frames: gpu, several workers and the tensor cores off print the same bytes, sampled frames as float64" {
	for n in 1 3 8; do
		on gmmscore gpu -m "$G/model.mdl" --top $n feats > "$D/gpu"
		checked "--top $n" ref gmmscore top "$G" feats "$D/gpu" --top $n
		on gmmscore "$(many)" -m "$G/model.mdl" --top $n feats > "$D/many"
		same "$D/gpu" "$D/many" "--top $n -d $(many)"
		ACCELKIT_GMMSCORE_TC=0 on gmmscore gpu -m "$G/model.mdl" --top $n feats > "$D/f32"
		same "$D/gpu" "$D/f32" "--top $n ACCELKIT_GMMSCORE_TC=0"
	done
}

@test "--top 3 at 100,000 frames: HTK input, a small --max-device-mem, -j 1, --chunk 1000 and gpu:0,0 print -d gpu's bytes" {
	on gmmscore gpu -m "$G/model.mdl" --top 3 feats > "$D/gpu"
	checked "" ref gmmscore top "$G" feats "$D/gpu" --top 3
	(cd "$D/htk" && on gmmscore gpu -m "$G/model.mdl" --top 3 feats) > "$D/htk.out"
	same "$D/gpu" "$D/htk.out" "HTK input"
	# the models (6647 x 32 x 39 in float32, about 68 MB) fit whole; the scores of a
	# default chunk (16384 frames x 6647, 435 MB) do not
	on gmmscore gpu --max-device-mem "$(size 256M 2M)" -m "$G/model.mdl" --top 3 feats > "$D/bounded"
	same "$D/gpu" "$D/bounded" "--max-device-mem"
	on gmmscore gpu -j 1 --chunk 1000 -m "$G/model.mdl" --top 3 feats > "$D/j1"
	same "$D/gpu" "$D/j1" "-j 1 --chunk 1000"
	on gmmscore gpu:0,0 --chunk 4096 -m "$G/model.mdl" --top 3 feats > "$D/00"
	same "$D/gpu" "$D/00" "-d gpu:0,0 --chunk 4096"
}

@test "--mode max --top 1 and 8: gpu, several workers and the tensor cores off print the same bytes, sampled frames as float64; at 10,000 frames the CPU's bits" {
	for n in 1 8; do
		on gmmscore gpu -m "$G/model.mdl" --mode max --top $n feats > "$D/gpu"
		checked "--top $n" ref gmmscore top "$G" feats "$D/gpu" --top $n --mode max
		on gmmscore "$(many)" -m "$G/model.mdl" --mode max --top $n feats > "$D/many"
		same "$D/gpu" "$D/many" "--mode max --top $n -d $(many)"
		ACCELKIT_GMMSCORE_TC=0 on gmmscore gpu -m "$G/model.mdl" --mode max --top $n feats > "$D/f32"
		same "$D/gpu" "$D/f32" "--mode max --top $n ACCELKIT_GMMSCORE_TC=0"
		cd "$D/head"
		on gmmscore cpu -j "$(cpu_j)" -m "$G/model.mdl" --mode max --top $n feats > "$D/cpu"
		on gmmscore gpu -m "$G/model.mdl" --mode max --top $n feats > "$D/gpu10"
		same "$D/cpu" "$D/gpu10" "--mode max --top $n, 10,000 frames, the CPU against -d gpu"
		cd "$D/npy"
	done
}

@test "the CPU path, --mode sum --top 3 at 10,000 frames: sampled frames as float64" {
	cd "$D/head"
	on gmmscore cpu -j "$(cpu_j)" -m "$G/model.mdl" --top 3 feats > "$D/cpu"
	checked "" ref gmmscore top "$G" feats "$D/cpu" --top 3
}

@test "--all -O npy at 10,000 frames, sum and max: gpu and several workers the same bytes, sampled frames as float64; max the CPU's bits" {
	cd "$D/head"
	for mode in sum max; do
		on gmmscore gpu -m "$G/model.mdl" --mode $mode --all -O npy -o "$D/gpu.npy" feats
		checked "--mode $mode" ref gmmscore all "$G" feats "$D/gpu.npy" --mode $mode
		on gmmscore "$(many)" -m "$G/model.mdl" --mode $mode --all -O npy -o "$D/many.npy" feats
		same "$D/gpu.npy" "$D/many.npy" "--all --mode $mode -d $(many)"
	done
	on gmmscore cpu -j "$(cpu_j)" -m "$G/model.mdl" --mode max --all -O npy -o "$D/cpu.npy" feats
	same "$D/cpu.npy" "$D/gpu.npy" "--all --mode max, the CPU against -d gpu"
}
