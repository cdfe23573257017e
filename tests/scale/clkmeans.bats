#!/usr/bin/env bats
# clkmeans at bench/clkmeans's size (1,000,000 x 64 blobs, k = 1024, 10 iterations from
# given centroids, bench/clkmeans_peers.py's data) and over k from 2 to 1024 and widths
# from 2 to 128, on every device spec, TF32 on and off, a small --max-device-mem, -j:
# the runs of one case print the same labels, distances and centroids, and
# tests/ref/scale_clkmeans.py checks every row's label against the float64 nearest of
# the printed centroids (the label a float64 Lloyd step would keep) and the distances;
# runs that end with no label moved also have each centroid its rows' float64 mean.

setup() {
	load scale
	N=$(size 1000000 20000)
	D=$BATS_TEST_TMPDIR
}

# data D K: $SCALE_DATA/clkmeans-N-D-K/{x,c0}.npy, N rows of D columns around K blobs
data() {
	made clkmeans-$N-$1-$2 sh -c "$ACCELKIT_PYTHON $ACCELKIT_ROOT/bench/clkmeans_peers.py gen $N $1 $2 7 \$SCALE_OUT"
	K=$SCALE_DATA/clkmeans-$N-$1-$2
}

# ten K ARGS...: 10 iterations from the given centroids, labels and distances to
# $D/out.ARGS-less name given by OUT (default out), centroids to $D/OUT.c.npy
ten() {
	local k=$1 out=$2 spec=$3
	shift 3
	on clkmeans $spec -k "$k" --init "$K/c0.npy" --max-iter 10 --tol 0 --distances \
	    -C "$D/$out.c.npy" "$@" "$K/x.npy" > "$D/$out"
}

# same_run A B WHAT: labels, distances and centroids the same bytes
same_run() {
	same "$D/$1" "$D/$2" "$3 (labels)"
	same "$D/$1.c.npy" "$D/$2.c.npy" "$3 (centroids)"
}

@test "1,000,000 x 64, k = 1024, 10 iterations from given centroids: gpu, several devices, TF32 off, a small --max-device-mem and -j 1 print the same bytes; every label float64's nearest" {
	data 64 "$(size 1024 64)"
	ten "$(size 1024 64)" gpu gpu
	checked "" ref clkmeans check "$K/x.npy" "$D/gpu" "$D/gpu.c.npy" --distances
	ten "$(size 1024 64)" many "$(many)"
	same_run gpu many "-d $(many)"
	CLKMEANS_TUNE=tf32=0 ten "$(size 1024 64)" f32 gpu
	same_run gpu f32 "CLKMEANS_TUNE=tf32=0"
	ten "$(size 1024 64)" bounded gpu --max-device-mem 64M
	same_run gpu bounded "--max-device-mem 64M"
	ten "$(size 1024 64)" many-bounded "$(many)" --max-device-mem 64M
	same_run gpu many-bounded "-d $(many) --max-device-mem 64M"
	ten "$(size 1024 64)" j1 gpu -j 1
	same_run gpu j1 "-j 1"
}

@test "k from 2 to 1024 and widths from 2 to 128 at 1,000,000 rows: gpu, several devices and TF32 off print the same bytes; every label float64's nearest" {
	for shape in 2:2 2:1024 3:7 8:16 16:256 100:64 128:2 128:1024; do
		local d=${shape%:*} k=${shape#*:}
		[ "$SCALE_DRY" = 1 ] && [ "$k" -gt 64 ] && k=64
		data "$d" "$k"
		ten "$k" gpu gpu
		checked "$d columns, k $k" ref clkmeans check "$K/x.npy" "$D/gpu" "$D/gpu.c.npy" --distances
		ten "$k" many "$(many)"
		same_run gpu many "$d columns, k $k, -d $(many)"
		CLKMEANS_TUNE=tf32=0 ten "$k" f32 gpu
		same_run gpu f32 "$d columns, k $k, CLKMEANS_TUNE=tf32=0"
	done
}

@test "the CPU (PoCL) on 100,000 rows of the benchmark's shape, and k-means++ at 1,000,000: every label float64's nearest, several devices the same bytes" {
	local n=$N
	N=$(size 100000 5000)
	data 64 "$(size 1024 64)"
	ten "$(size 1024 64)" cpu cpu:0
	checked "CPU" ref clkmeans check "$K/x.npy" "$D/cpu" "$D/cpu.c.npy" --distances
	N=$n
	data 16 256
	on clkmeans gpu -k 256 --seed 3 --max-iter 20 -C "$D/pp.c.npy" "$K/x.npy" > "$D/pp"
	checked "k-means++" ref clkmeans check "$K/x.npy" "$D/pp" "$D/pp.c.npy"
	on clkmeans "$(many)" -k 256 --seed 3 --max-iter 20 -C "$D/pp-many.c.npy" "$K/x.npy" > "$D/pp-many"
	same_run pp pp-many "k-means++, -d $(many)"
}

@test "runs to the end (the paper's 16,384 x 2, k = 16; 1,000,000 x 16, k = 16): labels float64's nearest, centroids their rows' float64 means" {
	local n=$N
	for shape in 16384:2:16 "$n":16:16; do
		N=${shape%%:*}
		data "$(cut -d: -f2 <<< "$shape")" 16
		for spec in gpu cpu; do
			[ "$spec" = cpu ] && [ "$N" -gt 20000 ] && continue
			on clkmeans $spec -v -k 16 --init "$K/c0.npy" --max-iter 300 --tol 0 \
			    -C "$D/c.npy" "$K/x.npy" > "$D/out" 2> "$D/log"
			if grep -q "^clkmeans: iteration 300: .* moved 0," "$D/log"; then
				checked "$N rows, -d $spec, settled" ref clkmeans check "$K/x.npy" "$D/out" "$D/c.npy" --means
			else
				# not settled in 300 iterations: the labels alone
				[ "$N" != 16384 ] || { echo "the paper's case did not settle" >&2; return 1; }
				checked "$N rows, -d $spec, not settled" ref clkmeans check "$K/x.npy" "$D/out" "$D/c.npy"
			fi
		done
	done
}
