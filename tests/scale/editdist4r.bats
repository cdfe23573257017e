#!/usr/bin/env bats
# editdist4r at bench/editdist4r's sizes (1,000,000 pairs of 150-base reads with 5%
# edits; two pairs of 48,502 bases, a copy with 10% edits and an unrelated one, from
# bench/editdist4r_gen.c) on every device spec, -k, -p, every engine and block size, a
# small --max-device-mem and -j: the CPU path's bytes are the reference (it ends in
# seconds), and 2,000 sampled pairs and the long pairs are recomputed by the textbook
# DP (tests/ref/editdist4r_ref.c), which also checks the sampled alignments.

setup() {
	load scale
	P=$(size 1000000 20000)
	LONG=$(size 48502 3000)
	made editdist4r-$P-$LONG sh -c "cc -O2 -I$ACCELKIT_ROOT/common -o \$SCALE_OUT/gen \
	    $ACCELKIT_ROOT/bench/editdist4r_gen.c &&
	    cc -O2 -o \$SCALE_OUT/ref $REF/editdist4r_ref.c &&
	    \$SCALE_OUT/gen reads $P 150 0.05 7 > \$SCALE_OUT/reads.txt &&
	    \$SCALE_OUT/gen random $LONG 11 > \$SCALE_OUT/a.fa &&
	    \$SCALE_OUT/gen mutate 0.10 1 < \$SCALE_OUT/a.fa > \$SCALE_OUT/a10.fa &&
	    \$SCALE_OUT/gen random $LONG 2 > \$SCALE_OUT/r1.fa &&
	    \$SCALE_OUT/gen random $LONG 3 > \$SCALE_OUT/r2.fa"
	E=$SCALE_DATA/editdist4r-$P-$LONG
	EDREF=$E/ref
	D=$BATS_TEST_TMPDIR
	STEP=$((P / 2000))
}

# sample FILE: every STEP-th line of FILE (2,000 of them)
sample() {
	awk -v s="$STEP" 'NR % s == 1' "$1"
}

# against_dp OUT [K]: the sampled pairs' distances in OUT are the textbook DP's
against_dp() {
	sample "$E/reads.txt" | "$EDREF" dist ${2:-} > "$D/dp"
	sample "$1" | cut -f 1 > "$D/ours"
	[ "$(wc -l < "$D/dp")" = 2000 ] || { echo "the reference gave $(wc -l < "$D/dp") lines" >&2; return 1; }
	same "$D/dp" "$D/ours" "the sampled pairs of $1 against the textbook DP"
	[ "$(wc -l < "$1")" = "$P" ] || { echo "$1: $(wc -l < "$1") lines for $P pairs" >&2; return 1; }
}

@test "1,000,000 pairs of 150 bases: the CPU, gpu, several workers, every engine and block size, a small --max-device-mem and -j 1 print the same distances, sampled pairs as the DP" {
	on editdist4r cpu -j "$(cpu_j)" "$E/reads.txt" > "$D/cpu"
	against_dp "$D/cpu"
	for spec in gpu "$(many)"; do
		on editdist4r $spec "$E/reads.txt" > "$D/out"
		same "$D/cpu" "$D/out" "-d $spec"
	done
	for engine in "--algo bp" "-t 1" "-t 2" "-t 3"; do
		on editdist4r gpu $engine "$E/reads.txt" > "$D/out"
		same "$D/cpu" "$D/out" "-d gpu $engine"
	done
	on editdist4r cpu -j "$(cpu_j)" -t 2 "$E/reads.txt" > "$D/out"
	same "$D/cpu" "$D/out" "-d cpu -t 2"
	on editdist4r gpu --max-device-mem 4M "$E/reads.txt" > "$D/out"
	same "$D/cpu" "$D/out" "-d gpu --max-device-mem 4M"
	on editdist4r "$(many)" --max-device-mem 4M "$E/reads.txt" > "$D/out"
	same "$D/cpu" "$D/out" "-d $(many) --max-device-mem 4M"
	on editdist4r gpu -j 1 "$E/reads.txt" > "$D/out"
	same "$D/cpu" "$D/out" "-d gpu -j 1"
}

@test "1,000,000 pairs with -k 5 and -k 20: the CPU, gpu and several workers print the same, sampled pairs as the DP" {
	for k in 5 20; do
		on editdist4r cpu -j "$(cpu_j)" -k $k "$E/reads.txt" > "$D/cpu"
		against_dp "$D/cpu" $k
		for spec in gpu "$(many)"; do
			on editdist4r $spec -k $k "$E/reads.txt" > "$D/out"
			same "$D/cpu" "$D/out" "-k $k -d $spec"
		done
		on editdist4r gpu -k $k -t 3 "$E/reads.txt" > "$D/out"
		same "$D/cpu" "$D/out" "-k $k -d gpu -t 3"
	done
}

@test "1,000,000 pairs with -p: gpu and several workers print the CPU's alignments, sampled ones turn A into B at the DP's distance" {
	on editdist4r cpu -j "$(cpu_j)" -p "$E/reads.txt" > "$D/cpu"
	sample "$E/reads.txt" > "$D/pairs"
	sample "$D/cpu" > "$D/sampled"
	checked "" "$EDREF" check "$D/pairs" "$D/sampled"
	for spec in gpu "$(many)"; do
		on editdist4r $spec -p "$E/reads.txt" > "$D/out"
		same "$D/cpu" "$D/out" "-p -d $spec"
	done
}

@test "pairs of 48,502 bases (a copy with 10% edits, an unrelated one): every device, engine, -k and -p against the DP" {
	for f in a a10 r1 r2; do
		awk '/^>/ { next } { printf "%s", $0 } END { print "" }' "$E/$f.fa" > "$D/$f.seq"
	done
	paste "$D/a.seq" "$D/a10.seq" > "$D/long.txt"
	paste "$D/r1.seq" "$D/r2.seq" >> "$D/long.txt"
	"$EDREF" dist < "$D/long.txt" > "$D/dp"
	for spec in cpu gpu "$(many)"; do
		on editdist4r $spec "$D/long.txt" > "$D/out"
		same "$D/dp" "$D/out" "long pairs -d $spec"
		on editdist4r $spec -a "$E/a.fa" -b "$E/a10.fa" > "$D/out"
		same <(head -n 1 "$D/dp") "$D/out" "-a -b FASTA -d $spec"
	done
	for engine in "--algo bp" "-t 1" "-t 2" "-t 3"; do
		on editdist4r gpu $engine "$D/long.txt" > "$D/out"
		same "$D/dp" "$D/out" "long pairs -d gpu $engine"
	done
	# -k: the first pair's distance and one less
	local d1
	d1=$(head -n 1 "$D/dp")
	for spec in cpu gpu; do
		on editdist4r $spec -k "$d1" "$D/long.txt" > "$D/out"
		same <(printf '%s\n-1\n' "$d1") "$D/out" "long pairs -k $d1 -d $spec"
		on editdist4r $spec -k $((d1 - 1)) "$D/long.txt" > "$D/out"
		same <(printf -- '-1\n-1\n') "$D/out" "long pairs -k $((d1 - 1)) -d $spec"
	done
	# the alignments (Hirschberg's recursion on the CPU, whatever the device), checked
	# by the DP once (it takes seconds a pair at this length)
	on editdist4r gpu -p "$D/long.txt" > "$D/gpu-p"
	checked "" "$EDREF" check "$D/long.txt" "$D/gpu-p"
	on editdist4r cpu -p "$D/long.txt" > "$D/out"
	same "$D/gpu-p" "$D/out" "long pairs -p -d cpu"
}
