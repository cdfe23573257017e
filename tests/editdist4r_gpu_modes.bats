#!/usr/bin/env bats
# editdist4r --mode infix and prefix on a GPU (issue 36), against python3-edlib's HW
# and SHW (tests/ref/editdist4r_modes.py): first the bit-parallel engines' own code run
# on the CPU (build/test/edbp, in every build with nvcc, so `make check` proves the
# modes' arithmetic without a GPU), then -d gpu itself (make check-gpu): short pairs
# (a thread each), long ones (the wavefront), --max-dist, --path, many batches,
# FASTA/FASTQ, --all-vs-all, -u, two workers, and auto's choice.

setup_file() {
	# the benchmark's generator: reads placed in random reference windows, fast
	cc -O2 -I"$BATS_TEST_DIRNAME/../common" -o "$BATS_FILE_TMPDIR/gen" \
	    "$BATS_TEST_DIRNAME/../bench/editdist4r_gen.c"
}

setup() {
	load helpers
	D=$BATS_FILE_TMPDIR
	MODES=$REF/editdist4r_modes.py
	pyhas edlib || fail "python3-edlib is missing (make deps installs it)"
	pyhas Levenshtein || fail "python3-levenshtein is missing (make deps installs it)"
}

# want MODE FILE [K]: what editdist4r --mode MODE [-k K] FILE must print (edlib's)
want() {
	py "$MODES" expect "$1" ${3:+"$3"} <"$2"
}

# ---- the engines' code on the CPU (tests/editdist4r_bp.cu) ----

# need_edbp: build/test/edbp, which every build with CUDA has (make testbins)
need_edbp() {
	command -v edbp >/dev/null && return
	run --separate-stderr editdist4r -d gpu </dev/null
	[[ "$stderr" == *"GPU support was not compiled in"* ]] && skip "a build without CUDA"
	fail "build/test/edbp is missing (make testbins)"
}

# engine_same ENGINE FILE [K]: edbp ENGINE prints edlib's distance, START (tp) and END
# in every mode
engine_same() {
	local e=$1 f=$2 k=${3:-} m
	for m in global infix prefix; do
		if [ "$m" = global ] || [ "$e" = tp ]; then
			want "$m" "$f" $k >"$D/e.ref"
		else
			want "$m" "$f" $k | cut -f 1,3 >"$D/e.ref"
		fi
		run -0 edbp "$e" "$m" $k <"$f"
		diff <(printf '%s\n' "$output") "$D/e.ref" || fail "edbp $e $m $k: not edlib's"
	done
}

@test "bp_tp's pair and START and the wavefront's strips, run on the CPU, give edlib's distance, START and END in every mode" {
	need_edbp
	for kind in random reads ties edge; do
		py "$MODES" gen 21 300 240 "$kind" >"$D/c_$kind.txt"
		engine_same tp "$D/c_$kind.txt"
		engine_same wf "$D/c_$kind.txt"
	done
}

@test "the engines' code on the CPU with --max-dist prints -1 in every field of a match above K" {
	need_edbp
	py "$MODES" gen 22 300 300 reads >"$D/ck.txt"
	for k in 0 1 5 20; do
		engine_same tp "$D/ck.txt" "$k"
		engine_same wf "$D/ck.txt" "$k"
	done
}

@test "the wavefront's strips on the CPU: reads longer than a thread holds, and pairs of several kb" {
	need_edbp
	# reads of up to 666 bases in windows of 2,000: up to 21 strips of 32 rows
	py "$MODES" gen 23 60 2000 reads >"$D/cw.txt"
	engine_same wf "$D/cw.txt"
	for seed in 1 2; do
		py "$MODES" long 6000 0.05 "$seed"
	done >"$D/cl.txt"
	engine_same wf "$D/cl.txt"
}

# ---- -d gpu ----

# gpu_same FILE ARGS...: editdist4r -d gpu --mode M ARGS FILE prints edlib's lines, every
# M; $stderr is the last run's
gpu_same() {
	local f=$1 m
	shift
	for m in global infix prefix; do
		want "$m" "$f" >"$D/g.ref"
		run --separate-stderr timeout "$(limit 120)" editdist4r -d gpu -v --mode "$m" "$@" "$f"
		[ "$status" -eq 0 ] || fail "--mode $m $*: exit $status: $stderr"
		diff <(printf '%s\n' "$output") "$D/g.ref" || fail "-d gpu --mode $m $*: not edlib's"
	done
}

@test "-d gpu: short pairs, a thread each, give edlib's distance, START and END in every mode" {
	require_gpu
	for kind in random reads ties edge; do
		py "$MODES" gen 31 2000 240 "$kind" >"$D/g_$kind.txt"
		gpu_same "$D/g_$kind.txt"
		[[ "$stderr" == *"GPU engines: bit-parallel thread per pair"* ]] || fail "$stderr"
		[[ "$stderr" == *"--mode prefix: the GPU's bit-parallel engines"* ]] || fail "$stderr"
	done
	# --algo 4r and -t: the modes stay on the bit-parallel engines, with the same answers
	gpu_same "$D/g_reads.txt" --algo 4r -t 3
	[[ "$stderr" == *"GPU engines: bit-parallel thread per pair"* ]] || fail "$stderr"
}

@test "-d gpu: long pairs on the wavefront (reads of up to 666 bases, pairs of 8 kb, a read in a 70 kb window) give edlib's answers" {
	require_gpu
	py "$MODES" gen 32 300 2000 reads >"$D/gw.txt"
	gpu_same "$D/gw.txt"
	[[ "$stderr" == *"bit-parallel wavefront"* ]] || fail "$stderr"
	for seed in 3 4; do
		py "$MODES" long 8000 0.05 "$seed"
	done >"$D/gl.txt"
	# a read of 200 bases in a window longer than a thread's 65,536 columns
	"$D/gen" windows 2 200 70000 0.05 5 >>"$D/gl.txt"
	gpu_same "$D/gl.txt"
	[[ "$stderr" == *"GPU engines: bit-parallel wavefront"* ]] || fail "$stderr"
}

@test "-d gpu --max-dist prints edlib's answers up to K and -1 -1 -1 above it, on both engines" {
	require_gpu
	py "$MODES" gen 33 500 300 reads >"$D/gk.txt"
	py "$MODES" gen 34 40 2000 reads >>"$D/gk.txt"
	for k in 0 1 5 20 100; do
		for m in infix prefix global; do
			want "$m" "$D/gk.txt" "$k" >"$D/gk.ref"
			run -0 editdist4r -d gpu --mode "$m" -k "$k" "$D/gk.txt"
			diff <(printf '%s\n' "$output") "$D/gk.ref" || fail "--mode $m -k $k"
		done
	done
}

@test "-d gpu --path: each CIGAR turns A into its match in B at the match's cost" {
	require_gpu
	for kind in random reads ties edge; do
		py "$MODES" gen 35 300 400 "$kind" >"$D/gp.txt"
		for m in infix prefix; do
			editdist4r -d gpu --mode "$m" --path "$D/gp.txt" >"$D/gp.out"
			run -0 py "$MODES" check "$m" "$D/gp.txt" "$D/gp.out"
			want "$m" "$D/gp.txt" >"$D/gp.ref"
			diff <(cut -f 1-3 "$D/gp.out") "$D/gp.ref" || fail "--mode $m --path: spans"
		done
	done
	py "$MODES" gen 36 40 2000 reads >"$D/gp.txt"
	editdist4r -d gpu --mode infix --path -k 50 "$D/gp.txt" >"$D/gp.out"
	run -0 py "$MODES" check infix "$D/gp.txt" "$D/gp.out"
	diff <(cut -f 1-3 "$D/gp.out") <(want infix "$D/gp.txt" 50)
}

@test "-d gpu: many batches (--max-device-mem), FASTA and FASTQ records and --all-vs-all give edlib's answers" {
	require_gpu
	# 20,000 reads of 150 bases in windows of 700: about 17 MB, batches of 1 MiB
	"$D/gen" windows 20000 150 700 0.05 37 >"$D/gb.txt"
	for m in infix prefix; do
		want "$m" "$D/gb.txt" >"$D/gb.ref"
		run --separate-stderr -0 editdist4r -d gpu --mode "$m" --max-device-mem 4M "$D/gb.txt"
		diff <(printf '%s\n' "$output") "$D/gb.ref" || fail "--mode $m, batches"
	done
	head -n 500 "$D/gb.txt" >"$D/gf.txt"
	awk -F '\t' '{ print ">a" NR; print $1 }' "$D/gf.txt" >"$D/gf_a.fa"
	awk -F '\t' '{ print "@b" NR; print $2; print "+"; s = $2; gsub(/./, "I", s); print s }' \
	    "$D/gf.txt" >"$D/gf_b.fq"
	for m in infix prefix; do
		run -0 editdist4r -d gpu --mode "$m" -a "$D/gf_a.fa" -b "$D/gf_b.fq"
		diff <(printf '%s\n' "$output") <(want "$m" "$D/gf.txt") || fail "--mode $m, records"
	done
	# every read against every window: 20 x 30 distances
	head -n 40 "$D/gf_a.fa" >"$D/gx_a.fa"
	head -n 120 "$D/gf_b.fq" >"$D/gx_b.fq"
	for m in infix prefix; do
		run -0 editdist4r -d gpu --mode "$m" --all-vs-all -a "$D/gx_a.fa" -b "$D/gx_b.fq"
		local w
		w=$(for i in $(seq 1 20); do
			for j in $(seq 1 30); do
				printf '%s\t%s\n' "$(sed -n "$((2 * i))p" "$D/gx_a.fa")" \
				    "$(sed -n "$((4 * j - 2))p" "$D/gx_b.fq")"
			done
		done | py "$MODES" expect "$m" | cut -f 1 | paste $(printf -- '- %.0s' $(seq 1 30)))
		assert_output "$w"
	done
}

@test "-d gpu -u counts characters in every mode, pairs of more than 256 of them on the CPU beside" {
	require_gpu
	py "$MODES" unicode 8 300 30 >"$D/gu.txt"
	py "$MODES" unicode 9 4 100 --wide >>"$D/gu.txt"
	for m in infix prefix; do
		want "$m" "$D/gu.txt" >"$D/gu.ref"
		run --separate-stderr -0 editdist4r -d gpu -v -u --mode "$m" "$D/gu.txt"
		diff <(printf '%s\n' "$output") "$D/gu.ref" || fail "-u --mode $m"
		[[ "$stderr" == *"-u: 4 pairs needed more than 256 codes"* ]] || fail "$stderr"
		editdist4r -d gpu -u --mode "$m" --path "$D/gu.txt" >"$D/gu.out"
		run -0 py "$MODES" check "$m" "$D/gu.txt" "$D/gu.out"
	done
}

@test "-d gpu:0,0 (two workers on one GPU) gives edlib's answers and one GPU's bytes in the modes" {
	require_gpu
	py "$MODES" gen 38 6000 600 reads >"$D/g2.txt"
	for m in infix prefix; do
		run -0 editdist4r -d gpu:0,0 --mode "$m" --path --max-device-mem 4M "$D/g2.txt"
		printf '%s\n' "$output" >"$D/g2.out"
		diff <(cut -f 1-3 "$D/g2.out") <(want "$m" "$D/g2.txt") || fail "--mode $m"
		editdist4r -d gpu --mode "$m" --path "$D/g2.txt" | cmp - "$D/g2.out"
	done
}

@test "auto sends a mode batch to the GPU where the work pays for CUDA's start, and keeps a small one on the CPU" {
	require_gpu
	# 60,000 reads of 150 bases in windows of 1,000: 9 G cells, 0.8 s estimated on one
	# CPU thread against under 0.5 s on the GPU, CUDA's whole start included
	"$D/gen" windows 60000 150 1000 0.05 41 >"$D/ga.txt"
	for m in infix prefix; do
		run --separate-stderr -0 editdist4r -d auto -j 1 -v --mode "$m" "$D/ga.txt"
		[[ "$stderr" == *"auto: gpu, estimated"* ]] || fail "$stderr"
		[[ "$stderr" == *"device: gpu:"* ]] || fail "$stderr"
		printf '%s\n' "$output" >"$D/ga.gpu"
		head -n 3000 "$D/ga.txt" >"$D/ga3.txt"
		diff <(head -n 3000 "$D/ga.gpu") <(want "$m" "$D/ga3.txt") || fail "--mode $m"
		editdist4r -d cpu --mode "$m" "$D/ga.txt" | cmp - "$D/ga.gpu"
	done
	run --separate-stderr -0 env ACCELKIT_DEVICE=auto editdist4r -v --mode infix \
	    <<<"$(printf 'ACGT\tTTACGTAA')"
	[[ "$stderr" == *"auto: cpu, estimated"* ]] || fail "$stderr"
	assert_output "$(printf '0\t2\t5')"
}
