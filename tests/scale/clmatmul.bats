#!/usr/bin/env bats
# clmatmul at bench/clmatmul's sizes (8192 x 8192 square, 5000 x 3000 x 7001, 16384
# square out of core in blocks; uniform [-1, 1) float32) on every device spec, every
# transpose, blocks under --max-device-mem, float32, TF32 and float64, alpha, beta and
# C0: blocked and several-device runs print the in-core bytes (clmatmul(1)), and
# tests/ref/scale_clmatmul.py recomputes 1,000 sampled rows of each product in float64
# against clmatmul's error bound.

setup() {
	load scale
	SQ=$(size 8192 384)
	BIG=$(size 16384 600)
	M=$(size 5000 500) N=$(size 3000 300) K=$(size 7001 701)
	made clmatmul-$SQ-$M-$N-$K sh -c "g() { $ACCELKIT_PYTHON $REF/scale_clmatmul.py gen \"\$@\"; } &&
	    g $SQ $SQ 1 \$SCALE_OUT/a.npy && g $SQ $SQ 2 \$SCALE_OUT/b.npy &&
	    g $SQ $SQ 3 \$SCALE_OUT/c0.npy &&
	    g $M $K 4 \$SCALE_OUT/am.npy && g $K $M 5 \$SCALE_OUT/amt.npy &&
	    g $K $N 6 \$SCALE_OUT/bm.npy && g $N $K 7 \$SCALE_OUT/bmt.npy"
	W=$SCALE_DATA/clmatmul-$SQ-$M-$N-$K
	D=$BATS_TEST_TMPDIR
}

# mm OUT SPEC ARGS...: clmatmul on SPEC, C as NPY in $D/OUT
mm() {
	local out=$1 spec=$2
	shift 2
	on clmatmul "$spec" -O npy -o "$D/$out" "$@"
}

@test "8192 x 8192 square, float32 and TF32: gpu, several devices and blocks under --max-device-mem print the same bytes, sampled rows within the bound" {
	for prec in fp32 tf32; do
		local flag=
		[ $prec = tf32 ] && flag=--tf32
		[ $prec = tf32 ] && [ "$SCALE_DRY" = 1 ] && continue	# PoCL has no tensor cores
		mm gpu.npy gpu --precision $prec "$W/a.npy" "$W/b.npy"
		checked "$prec" ref clmatmul check "$W/a.npy" "$W/b.npy" "$D/gpu.npy" $flag
		mm many.npy "$(many)" --precision $prec "$W/a.npy" "$W/b.npy"
		same "$D/gpu.npy" "$D/many.npy" "$prec -d $(many)"
		# A, B and C take 768 MB: 128M makes at least 6 blocks of C, K in panels
		mm blocks.npy gpu --precision $prec --max-device-mem "$(size 128M 1M)" "$W/a.npy" "$W/b.npy"
		same "$D/gpu.npy" "$D/blocks.npy" "$prec --max-device-mem"
		mm many-blocks.npy "$(many)" --precision $prec --max-device-mem "$(size 128M 1M)" \
		    "$W/a.npy" "$W/b.npy"
		same "$D/gpu.npy" "$D/many-blocks.npy" "$prec -d $(many) --max-device-mem"
	done
}

@test "5000 x 3000 x 7001 under every transpose, float32 and TF32: gpu and several devices the same bytes, sampled rows within the bound; the CPU (PoCL) too" {
	for prec in fp32 tf32; do
		local flag=
		[ $prec = tf32 ] && flag=--tf32
		[ $prec = tf32 ] && [ "$SCALE_DRY" = 1 ] && continue
		for t in "" a b ab; do
			local a=$W/am.npy b=$W/bm.npy opts=() chk=()
			[[ $t == *a* ]] && { a=$W/amt.npy opts+=(--transpose-a) chk+=(--ta); }
			[[ $t == *b* ]] && { b=$W/bmt.npy opts+=(--transpose-b) chk+=(--tb); }
			mm gpu.npy gpu --precision $prec "${opts[@]}" "$a" "$b"
			checked "$prec ${opts[*]}" ref clmatmul check "$a" "$b" "$D/gpu.npy" "${chk[@]}" $flag
			mm many.npy "$(many)" --precision $prec "${opts[@]}" --max-device-mem "$(size 96M 1M)" "$a" "$b"
			same "$D/gpu.npy" "$D/many.npy" "$prec ${opts[*]} -d $(many) --max-device-mem"
		done
	done
	mm cpu.npy cpu -j "$(cpu_j)" --transpose-b "$W/am.npy" "$W/bmt.npy"
	checked "CPU" ref clmatmul check "$W/am.npy" "$W/bmt.npy" "$D/cpu.npy" --tb
}

@test "8192 x 8192 with alpha, beta and C0, and in float64: gpu and several devices in blocks the same bytes, sampled rows within the bound" {
	mm gpu.npy gpu --alpha 0.5 -c "$W/c0.npy" --beta -2 "$W/a.npy" "$W/b.npy"
	checked "" ref clmatmul check "$W/a.npy" "$W/b.npy" "$D/gpu.npy" --alpha 0.5 --beta -2 --c0 "$W/c0.npy"
	mm many.npy "$(many)" --max-device-mem "$(size 128M 1M)" --alpha 0.5 -c "$W/c0.npy" --beta -2 \
	    "$W/a.npy" "$W/b.npy"
	same "$D/gpu.npy" "$D/many.npy" "alpha, beta, C0 -d $(many) --max-device-mem"
	mm gpu64.npy gpu --double "$W/a.npy" "$W/b.npy"
	checked "float64" ref clmatmul check "$W/a.npy" "$W/b.npy" "$D/gpu64.npy" --double
	mm many64.npy "$(many)" --double --max-device-mem "$(size 256M 2M)" "$W/a.npy" "$W/b.npy"
	same "$D/gpu64.npy" "$D/many64.npy" "--double -d $(many) --max-device-mem"
}

@test "16384 x 16384 out of core in blocks (1G): gpu and several devices the same bytes, sampled rows within the bound" {
	made clmatmul-big-$BIG sh -c "$ACCELKIT_PYTHON $REF/scale_clmatmul.py gen $BIG $BIG 8 \$SCALE_OUT/a.npy &&
	    $ACCELKIT_PYTHON $REF/scale_clmatmul.py gen $BIG $BIG 9 \$SCALE_OUT/b.npy"
	local G=$SCALE_DATA/clmatmul-big-$BIG
	mm gpu.npy gpu --max-device-mem "$(size 1G 1M)" "$G/a.npy" "$G/b.npy"
	checked "" ref clmatmul check "$G/a.npy" "$G/b.npy" "$D/gpu.npy"
	mm many.npy "$(many)" --max-device-mem "$(size 1G 1M)" "$G/a.npy" "$G/b.npy"
	same "$D/gpu.npy" "$D/many.npy" "16384 -d $(many) --max-device-mem 1G"
}
