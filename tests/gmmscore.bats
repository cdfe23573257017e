#!/usr/bin/env bats
# gmmscore: GMM observation scores against scikit-learn, numpy and hand-written files.

bats_require_minimum_version 1.5.0

setup_file() {
	load helpers
	# Fitted mixtures of 1 to 16 components (and one of 600, more than a GPU block of
	# 256 or 512), in every model format, with features near them in every format.
	export D="$BATS_FILE_TMPDIR/fit" R="$BATS_FILE_TMPDIR/rand"
	mkdir -p "$D" "$R"
	py "$REF/gmmscore_ref.py" make "$D" --models 10 --dim 6 --frames 300 --big 600
	py "$REF/gmmscore_ref.py" scores "$D" "$D/feats.npy" "$D/sum.npy"
	py "$REF/gmmscore_ref.py" scores "$D" "$D/feats.npy" "$D/max.npy" --mode max
	# Many random models of 39 dimensions, sizes 1 to 64 and one of 600.
	py "$REF/gmmscore_ref.py" random "$R" --models 300 --dim 39 --frames 700 --big 600
}

setup() {
	load helpers
	T=$BATS_TEST_TMPDIR
	G=$TESTDATA/gmmscore
}

refcheck() {
	py "$REF/gmmscore_ref.py" check "$@"
}

@test "--mode sum matches scikit-learn's score_samples for fitted mixtures" {
	run -0 gmmscore -m "$D/native.txt" --all -o "$T/out.ark" "$D/feats.npy"
	run -0 refcheck all "$T/out.ark" "$D/sum.npy"
}

@test "--mode max matches numpy's best weighted component in float64" {
	run -0 gmmscore -m "$D/native.txt" --mode max --all -o "$T/out.ark" "$D/feats.npy"
	run -0 refcheck all "$T/out.ark" "$D/max.npy"
}

@test "--top 3 lists each frame's three best models, best first" {
	run -0 gmmscore -m "$D/native.txt" --top 3 -o "$T/top.txt" "$D/feats.npy"
	run -0 refcheck top "$T/top.txt" "$D/sum.npy" --top 3 --names "$D/names.txt"
	run -0 gmmscore -m "$D/native.txt" --mode max -t 3 -o "$T/top.txt" "$D/feats.npy"
	run -0 refcheck top "$T/top.txt" "$D/max.npy" --top 3 --names "$D/names.txt"
}

@test "the default is the best model a frame, named by the file" {
	run -0 gmmscore -m "$D/native.txt" -o "$T/top.txt" "$D/feats.txt"
	run -0 refcheck top "$T/top.txt" "$D/sum.npy" --names "$D/names.txt" --keys "$D/feats.txt:300"
}

@test "--top larger than the model count lists every model" {
	run -0 gmmscore -m "$D/native.txt" --top 50 -o "$T/top.txt" "$D/feats.npy"
	run -0 refcheck top "$T/top.txt" "$D/sum.npy" --top 50 --names "$D/names.txt"
}

@test "Kaldi text, Kaldi binary, HTK MMF and gmmscore text give the same scores" {
	for m in kaldi.mdl.txt kaldi.mdl hmm.mmf native.txt; do
		run -0 gmmscore -m "$D/$m" --all -o "$T/$m.ark" "$D/feats.npy"
		run -0 refcheck all "$T/$m.ark" "$D/sum.npy"
	done
}

@test "Kaldi models are named by pdf index and HTK states by macro or hmm.state" {
	run -0 gmmscore -m "$D/kaldi.mdl.txt" --top 10 -o "$T/k.txt" "$D/feats.npy"
	run -0 refcheck top "$T/k.txt" "$D/sum.npy" --top 10
	run -0 gmmscore -m "$D/hmm.mmf" --top 10 -o "$T/h.txt" "$D/feats.npy"
	run -0 refcheck top "$T/h.txt" "$D/sum.npy" --top 10 --names "$D/names.txt"
}

@test "a Kaldi model's stored gconsts are recomputed, not trusted" {
	# kaldi.mdl.txt stores 12345 for every gconst
	run -0 grep -c '<GCONSTS>  \[ 12345' "$D/kaldi.mdl.txt"
	run -0 gmmscore -m "$D/kaldi.mdl.txt" --mode max --all -o "$T/k.ark" "$D/feats.npy"
	run -0 refcheck all "$T/k.ark" "$D/max.npy"
}

@test "a single Kaldi DiagGMM is one model named 0" {
	py - "$D" "$T/g.npy" <<'EOF'
import sys, numpy as np
s = np.load(sys.argv[1] + "/sum.npy")
np.save(sys.argv[2], s[:, :1])
EOF
	run -0 gmmscore -m "$D/global.txt" --all -o "$T/g.ark" "$D/feats.npy"
	run -0 refcheck all "$T/g.ark" "$T/g.npy"
	run -0 gmmscore -m "$D/global.txt" "$D/feats.npy"
	assert_line --index 0 --regexp $'^.*feats.npy\t0\t0\t-[0-9.]+$'
}

@test "an HTK file written byte by byte reads as its frames, checksum (_K) included" {
	run -0 gmmscore -m "$D/native.txt" --all -o "$T/h.ark" "$D/feats.htk"
	run -0 refcheck all "$T/h.ark" "$D/sum.npy"
	run -0 gmmscore -m "$D/native.txt" --format htk --all -o "$T/h.ark" - < "$D/feats.htk"
	run -0 refcheck all "$T/h.ark" "$D/sum.npy"
}

@test "a compressed HTK file (_C) is decoded with its scale and offset" {
	py "$REF/gmmscore_ref.py" scores "$D" "$D/feats_c.npy" "$T/c.npy"
	run -0 gmmscore -m "$D/native.txt" --all -o "$T/c.ark" "$D/feats_c.htk"
	run -0 refcheck all "$T/c.ark" "$T/c.npy"
}

@test "a multi-utterance archive in gives one matrix an utterance out" {
	run -0 gmmscore -m "$D/native.txt" --all -o "$T/u.ark" "$D/feats.ark"
	run -0 refcheck all "$T/u.ark" "$D/sum.npy" --keys utt0:60,utt1:1,utt2:239
	run -0 gmmscore -m "$D/native.txt" -o "$T/u.txt" "$D/feats.ark"
	run -0 refcheck top "$T/u.txt" "$D/sum.npy" --names "$D/names.txt" \
	    --keys utt0:60,utt1:1,utt2:239
}

@test "utterances split across chunks keep their frames and keys" {
	run -0 gmmscore -m "$D/native.txt" --chunk 7 --all -o "$T/u.ark" "$D/feats.ark"
	run -0 refcheck all "$T/u.ark" "$D/sum.npy" --keys utt0:60,utt1:1,utt2:239
	run -0 gmmscore -m "$D/native.txt" --chunk 1 -o "$T/u.txt" "$D/feats.ark"
	run -0 refcheck top "$T/u.txt" "$D/sum.npy" --names "$D/names.txt" \
	    --keys utt0:60,utt1:1,utt2:239
}

@test "an empty matrix in an archive is an empty matrix out" {
	printf 'a  [\n  1 2 3 4 5 6 ]\nempty  [ ]\nb  [ 6 5 4 3 2 1 ]\n' > "$T/e.ark"
	run -0 gmmscore -m "$D/native.txt" --all --mode max "$T/e.ark"
	assert_line --index 0 'a  ['
	assert_line --index 2 'empty  [ ]'
	assert_line --index 3 'b  ['
	assert_equal "${#lines[@]}" 5
}

@test "several feature files are scored in order, each named by its path, stdin as -" {
	head -n 100 "$D/feats.txt" > "$T/a.txt"
	tail -n 200 "$D/feats.txt" > "$T/b.txt"
	run -0 gmmscore -m "$D/native.txt" -o "$T/ab.txt" "$T/a.txt" - < "$T/b.txt"
	run -0 refcheck top "$T/ab.txt" "$D/sum.npy" --names "$D/names.txt" \
	    --keys "$T/a.txt:100,-:200"
}

@test "--dims 4 scores the first four dimensions of models and features" {
	py "$REF/gmmscore_ref.py" scores "$D" "$D/feats.npy" "$T/d4.npy" --dims 4
	run -0 gmmscore -m "$D/kaldi.mdl" --dims 4 --all -o "$T/d.ark" "$D/feats.npy"
	run -0 refcheck all "$T/d.ark" "$T/d4.npy"
	cut -d ' ' -f 1-4 "$D/feats.txt" > "$T/f4.txt"
	run -0 gmmscore -m "$D/hmm.mmf" --dims 4 --all -o "$T/d.ark" "$T/f4.txt"
	run -0 refcheck all "$T/d.ark" "$T/d4.npy"
}

@test "--all -O npy writes frames x models float32" {
	run -0 gmmscore -m "$D/native.txt" --all -O npy -o "$T/s.npy" "$D/feats.ark"
	run -0 refcheck npy "$T/s.npy" "$D/sum.npy"
	run -0 gmmscore -m "$D/native.txt" --all -o "$T/t.npy" "$D/feats.txt"
	run -0 refcheck npy "$T/t.npy" "$D/sum.npy"
}

@test "models larger than a GPU block and of every size up to 64 score right" {
	py "$REF/gmmscore_ref.py" scores "$R" "$R/feats.npy" "$T/r.npy" --native "$R/native.txt"
	run -0 gmmscore -m "$R/native.txt" --all -O npy -o "$T/r_all.npy" "$R/feats.npy"
	run -0 refcheck npy "$T/r_all.npy" "$T/r.npy"
	py "$REF/gmmscore_ref.py" scores "$R" "$R/feats.npy" "$T/rm.npy" --native "$R/native.txt" \
	    --mode max
	run -0 gmmscore -m "$R/native.txt" --mode max --top 5 -o "$T/r_top.txt" "$R/feats.npy"
	run -0 refcheck top "$T/r_top.txt" "$T/rm.npy" --top 5 --names "$R/names.txt"
}

@test "a small --max-device-mem scores in many tiles with the same result" {
	py "$REF/gmmscore_ref.py" scores "$R" "$R/feats.npy" "$T/r.npy" --native "$R/native.txt"
	run -0 --separate-stderr gmmscore -v -m "$R/native.txt" --max-device-mem 3M --top 2 \
	    -o "$T/m.txt" "$R/feats.npy"
	if on_gpu; then
		# 2.58 MB of parameters, 2.6 KB a frame: 220 frames a call, 4 calls
		[[ $stderr == *", 220 frames a chunk"* ]]
	fi
	run -0 refcheck top "$T/m.txt" "$T/r.npy" --top 2 --names "$R/names.txt"
}

@test "divided over several workers, as over GPUs, the output is one worker's byte for byte" {
	# ACCELKIT_CPU_WORKERS runs the several-GPU code (common/devwork.h) on the CPU.
	py "$REF/gmmscore_ref.py" scores "$R" "$R/feats.npy" "$T/r.npy" --native "$R/native.txt"
	for args in "--all" "--top 3" "--top 40" "--mode max --top 1"; do
		for chunk in 1 7 1000; do
			gmmscore -d cpu -m "$R/native.txt" $args --chunk $chunk -o "$T/one" "$R/feats.txt"
			for n in 2 3; do
				ACCELKIT_CPU_WORKERS=$n gmmscore -d cpu -m "$R/native.txt" $args \
				    --chunk $chunk -o "$T/many" "$R/feats.txt"
				cmp "$T/one" "$T/many"
			done
		done
	done
	# an archive's utterances across chunks, an empty one, NPY output, numpy's scores
	ACCELKIT_CPU_WORKERS=3 gmmscore -d cpu -m "$D/native.txt" --all --chunk 7 -o "$T/u.ark" \
	    "$D/feats.ark"
	run -0 refcheck all "$T/u.ark" "$D/sum.npy" --keys utt0:60,utt1:1,utt2:239
	printf 'a  [\n  1 2 3 4 5 6 ]\nempty  [ ]\nb  [ 6 5 4 3 2 1 ]\n' > "$T/e.ark"
	gmmscore -d cpu -m "$D/native.txt" --all --chunk 1 "$T/e.ark" > "$T/e1"
	ACCELKIT_CPU_WORKERS=2 gmmscore -d cpu -m "$D/native.txt" --all --chunk 1 "$T/e.ark" > "$T/e2"
	cmp "$T/e1" "$T/e2"
	ACCELKIT_CPU_WORKERS=2 gmmscore -d cpu -m "$R/native.txt" --all -O npy --chunk 50 \
	    -o "$T/r.out.npy" - < "$R/feats.npy"
	run -0 refcheck npy "$T/r.out.npy" "$T/r.npy"
	# -v: each worker's share of the frames and its busy time
	run -0 --separate-stderr env ACCELKIT_CPU_WORKERS=2 gmmscore -v -d cpu -m "$R/native.txt" \
	    --chunk 10 -o "$T/v.txt" "$R/feats.npy"
	assert_regex "$stderr" "gmmscore: cpu share [0-9]+% busy [0-9.]+ s \(units [0-9]+\)"
	assert_regex "$stderr" "gmmscore: cpu#2 share [0-9]+% busy [0-9.]+ s \(units [0-9]+\)"
	run -1 --separate-stderr env ACCELKIT_CPU_WORKERS=0 gmmscore -d cpu -m "$R/native.txt" "$R/feats.npy"
	assert_equal "$stderr" "gmmscore: ACCELKIT_CPU_WORKERS=0: expected 1 to 16"
}

# several_gpus SPEC: gmmscore on SPEC gives -d gpu's bytes, in many chunks under a small
# --max-device-mem and in the default chunks, for every kind of output; and numpy's scores.
several_gpus() {
	py "$REF/gmmscore_ref.py" scores "$R" "$R/feats.npy" "$T/r.npy" --native "$R/native.txt"
	for args in "--all" "--top 3" "--top 40" "--mode max --top 1"; do
		for bound in "--max-device-mem 3M --chunk 50" ""; do
			gmmscore -d gpu -m "$R/native.txt" $args $bound -o "$T/one" "$R/feats.npy"
			gmmscore -d "$1" -m "$R/native.txt" $args $bound -o "$T/many" "$R/feats.npy"
			cmp "$T/one" "$T/many"
		done
	done
	run -0 gmmscore -d "$1" -m "$R/native.txt" --all -O npy --chunk 30 -o "$T/m.npy" "$R/feats.npy"
	run -0 refcheck npy "$T/m.npy" "$T/r.npy"
	run -0 gmmscore -d "$1" -m "$D/hmm.mmf" --top 3 --chunk 7 -o "$T/g3.txt" "$D/feats.ark"
	run -0 refcheck top "$T/g3.txt" "$D/sum.npy" --top 3 --names "$D/names.txt" \
	    --keys utt0:60,utt1:1,utt2:239
}

@test "one GPU listed twice (gpu:0,0) gives one GPU's bytes, and -v each worker's share" {
	require_gpu
	several_gpus gpu:0,0
	run -0 --separate-stderr gmmscore -v -d gpu:0,0 -m "$R/native.txt" --chunk 20 \
	    -o "$T/v.txt" "$R/feats.npy"
	assert_regex "$stderr" "gmmscore: gpu:0 share [0-9]+% busy [0-9.]+ s \(units [0-9]+\)"
	assert_regex "$stderr" "gmmscore: gpu:0#2 share [0-9]+% busy [0-9.]+ s \(units [0-9]+\)"
}

@test "gpu:all and gpu:0,1 give one GPU's bytes" {
	require_gpus 2
	several_gpus gpu:all
	several_gpus gpu:1,0
	run -0 --separate-stderr gmmscore -v -d gpu:all -m "$R/native.txt" --chunk 20 \
	    -o "$T/v.txt" "$R/feats.npy"
	assert_regex "$stderr" "gmmscore: gpu:1 share [0-9]+% busy [0-9.]+ s \(units [0-9]+\)"
}

@test "-v names the tuning row chosen for the device" {
	run -0 --separate-stderr gmmscore -v -m "$D/native.txt" -o "$T/top.txt" "$D/feats.npy"
	if on_gpu; then
		[[ $stderr == *"gmmscore: tuning: gpu nvidia (H200 "* ]]
		[[ $stderr == *", 2 slots x 64 frames a thread, 4 tiles a block,"* ]]
	else
		[[ $stderr == *"gmmscore: tuning: cpu (reasoned, not measured)"* ]]
	fi
}

@test "every row of the tuning table passes its legality checks, and rows that break them are rejected" {
	run -0 tunerows gmmscore
	assert_line --index 0 "gmmscore: 3 rows pass"
	assert_line --index 1 --partial "broken cpl = 3: rejected: "
	refute_output --partial ": passes"
	assert_equal "$(grep -c ': rejected: ' <<< "$output")" 6
}

@test "the GPU's other tile shape, chosen by GMMSCORE_TILE, scores the same" {
	require_gpu
	py "$REF/gmmscore_ref.py" scores "$R" "$R/feats.npy" "$T/r.npy" --native "$R/native.txt"
	run -0 --separate-stderr env GMMSCORE_TILE=4,3 gmmscore -v -d gpu -m "$R/native.txt" --all \
	    -O npy -o "$T/r4.npy" "$R/feats.npy"
	[[ $stderr == *", 4 slots x 32 frames a thread, 3 tiles a block,"* ]]
	run -0 refcheck npy "$T/r4.npy" "$T/r.npy"
	run -1 --separate-stderr env GMMSCORE_TILE=3,4 gmmscore -d gpu -m "$R/native.txt" "$R/feats.npy"
	[[ $stderr == *"GMMSCORE_TILE='3,4': expected CPL,NSUB"* ]]
}

@test "CPU and GPU give the same scores within the stated tolerance" {
	require_gpu
	run -0 gmmscore -d cpu -m "$R/native.txt" --all -o "$T/cpu.npy" "$R/feats.npy"
	run -0 gmmscore -d gpu -m "$R/native.txt" --all -o "$T/gpu.npy" "$R/feats.npy"
	run -0 refcheck npy "$T/gpu.npy" "$T/cpu.npy"
	run -0 gmmscore -d gpu -m "$R/native.txt" --mode max --all -o "$T/gpum.npy" "$R/feats.npy"
	run -0 gmmscore -d cpu -m "$R/native.txt" --mode max --all -o "$T/cpum.npy" "$R/feats.npy"
	run -0 cmp "$T/gpum.npy" "$T/cpum.npy"
	run -0 gmmscore -d gpu -m "$R/native.txt" --top 20 -o "$T/gpu.txt" "$R/feats.npy"
	run -0 refcheck top "$T/gpu.txt" "$T/cpu.npy" --top 20 --names "$R/names.txt"
	run -0 gmmscore -d gpu -m "$R/native.txt" --top 40 -o "$T/gpu.txt" "$R/feats.npy"
	run -0 refcheck top "$T/gpu.txt" "$T/cpu.npy" --top 40 --names "$R/names.txt"
	run -0 gmmscore -d gpu -m "$D/hmm.mmf" --top 3 --chunk 100 -o "$T/g3.txt" "$D/feats.ark"
	run -0 refcheck top "$T/g3.txt" "$D/sum.npy" --top 3 --names "$D/names.txt" \
	    --keys utt0:60,utt1:1,utt2:239
}

# Issue 15: --top N of small models from TF32 products on the tensor cores, the
# candidates rescored as the float32 path scores them (kernels/gmmscore_tc.cu).
@test "tensor-core path on the CPU: its packed fragments hold P', its fast scores are within their bounds of the float32 path's" {
	# DIMS SCALE DOMINANT: typical, spread means, one dimension 10^4 times as sharp,
	# 48 dimensions (the most), large means, one dimension
	for args in "39 1 0" "39 30 0" "36 1 1" "48 5 0" "4 100 0" "1 1 0"; do
		run -0 gmmtc $args
		assert_output --regexp '^208800 Gaussians and 24000 model scores, 0 over the bound, '
	done
}

@test "--top N from the tensor cores prints the float32 path's bytes: sum and max, near-ties, a dominant dimension, large norms" {
	require_gpu
	A=$T/adv
	mkdir "$A"
	py "$REF/gmmscore_ref.py" random "$A" --models 400 --dim 39 --frames 2000 --max-size 32 \
	    --adversarial
	for args in "--top 1" "--top 3" "--top 8" "--mode max --top 1" "--mode max --top 8" \
	    "--top 2 --dims 36" "--top 2 --dims 4" "--top 5 --chunk 300"; do
		run -0 --separate-stderr gmmscore -v -d gpu -m "$A/native.txt" $args -o "$T/tc.txt" \
		    "$A/feats.npy"
		assert_regex "$stderr" "gpu: tensor cores: [0-9]+ candidates rescored for 2000 frames"
		run -0 env ACCELKIT_GMMSCORE_TC=0 gmmscore -d gpu -m "$A/native.txt" $args \
		    -o "$T/f32.txt" "$A/feats.npy"
		run -0 cmp "$T/tc.txt" "$T/f32.txt"
	done
	# and scikit-learn's best three
	py "$REF/gmmscore_ref.py" scores "$A" "$A/feats.npy" "$T/r.npy" --native "$A/native.txt"
	run -0 gmmscore -d gpu -m "$A/native.txt" --top 3 -o "$T/tc.txt" "$A/feats.npy"
	run -0 refcheck top "$T/tc.txt" "$T/r.npy" --top 3 --names "$A/names.txt"
	# outside its limits (--top over 8, models over 32 Gaussians) the float32 path scores
	run -0 --separate-stderr gmmscore -v -d gpu -m "$A/native.txt" --top 9 -o /dev/null \
	    "$A/feats.npy"
	[[ $stderr != *"tensor cores"* ]]
	run -0 --separate-stderr gmmscore -v -d gpu -m "$R/native.txt" --top 1 -o /dev/null \
	    "$R/feats.npy"
	[[ $stderr != *"tensor cores"* ]]
	run -1 --separate-stderr env ACCELKIT_GMMSCORE_TC=2 gmmscore -d gpu -m "$A/native.txt" \
	    "$A/feats.npy"
	assert_regex "$stderr" "ACCELKIT_GMMSCORE_TC must be 0 or 1, not '2'"
}

@test "auto: a tiny input runs on the CPU, as -d cpu does, and -v says why" {
	run -0 --separate-stderr env ACCELKIT_DEVICE=auto gmmscore -v -m "$G/final.mdl.txt" \
	    -o "$T/auto.txt" "$G/feats.ark"
	[[ $stderr == *"gmmscore: auto: 10 frames"* ]]
	# the start-up may have found no GPU before auto weighed the work (or, in a build
	# without CUDA such as SANITIZE=1's, there is none: "(no usable GPU: built ...)")
	[[ $stderr == *"gmmscore: auto: cpu, estimated "* || $stderr == *"(no usable GPU"* ]]
	[[ $stderr == *"gmmscore: device: cpu ("* ]]
	run -0 gmmscore -d cpu -m "$G/final.mdl.txt" -o "$T/cpu.txt" "$G/feats.ark"
	run -0 cmp "$T/auto.txt" "$T/cpu.txt"
}

@test "auto counts an NPY file's frames from its header and reads text ahead" {
	run -0 --separate-stderr gmmscore -v -d auto -m "$D/native.txt" -o "$T/a.txt" "$D/feats.npy"
	[[ $stderr == *"gmmscore: auto: 300 frames"* ]]
	run -0 --separate-stderr gmmscore -v -d auto -m "$D/native.txt" --chunk 40 -o "$T/a.txt" \
	    "$D/feats.npy"
	[[ $stderr == *"gmmscore: auto: 300 frames"* ]]
	# text from a pipe: the first 50 frames (--chunk) are read, kept and scored once
	run -0 --separate-stderr bash -c "gmmscore -v -d auto -m '$D/native.txt' --chunk 50 \
	    < '$D/feats.txt' > '$T/p.txt'"
	[[ $stderr == *"gmmscore: auto: at least 50 frames"* ]]
	run -0 refcheck top "$T/p.txt" "$D/sum.npy" --names "$D/names.txt" --keys=-:300
	# ahead across files, and an archive's utterances (an empty one too) across chunks
	head -n 100 "$D/feats.txt" > "$T/a.txt"
	tail -n 200 "$D/feats.txt" > "$T/b.txt"
	run -0 --separate-stderr gmmscore -v -d auto --chunk 150 -m "$D/native.txt" \
	    -o "$T/ab.txt" "$T/a.txt" - < "$T/b.txt"
	[[ $stderr == *"gmmscore: auto: at least 150 frames"* ]]
	run -0 refcheck top "$T/ab.txt" "$D/sum.npy" --names "$D/names.txt" \
	    --keys "$T/a.txt:100,-:200"
	printf 'a  [\n  1 2 3 4 5 6\n  2 2 2 2 2 2 ]\nempty  [ ]\nb  [ 6 5 4 3 2 1 ]\n' > "$T/e.ark"
	for chunk in 1 2 3 4; do
		run -0 gmmscore -d auto --chunk $chunk -m "$D/native.txt" --all -o "$T/e$chunk.ark" "$T/e.ark"
		run -0 gmmscore -d cpu -m "$D/native.txt" --all -o "$T/c.ark" "$T/e.ark"
		run -0 cmp "$T/e$chunk.ark" "$T/c.ark"
	done
}

@test "auto on the GPU machine: the CPU for testdata without waiting for CUDA, the GPU for large work" {
	require_gpu
	run -0 --separate-stderr gmmscore -v -d auto -m "$G/final.mdl.txt" -o "$T/a.txt" "$G/feats.ark"
	[[ $stderr == *"gmmscore: auto: cpu, estimated "* ]]
	[[ $stderr == *"gmmscore: device: cpu ("* ]]
	# the start-up thread was left to itself: no phase waited for it
	[[ $stderr != *"time device start"* ]]
	# 40,000 frames x ~7,500 Gaussians x 39 dimensions on one CPU thread: about a second
	py -c "import numpy as n; n.save('$T/big.npy', n.random.default_rng(3).normal(0, 2, (40000, 39)).astype('f4'))"
	run -0 --separate-stderr gmmscore -v -d auto -j 1 -m "$R/native.txt" -o /dev/null "$T/big.npy"
	[[ $stderr == *"gmmscore: auto: 40000 frames"* ]]
	[[ $stderr == *"gmmscore: auto: gpu, estimated "* ]]
	[[ $stderr == *"gmmscore: device: gpu:0 "* ]]
}

@test "auto on a machine of several GPUs: all of them where one GPU's time saved pays their start, one otherwise" {
	require_gpus 2
	py -c "import numpy as n; n.save('$T/big.npy', n.random.default_rng(3).normal(0, 2, (40000, 39)).astype('f4'))"
	gmmscore -d gpu -m "$R/native.txt" -o "$T/one.txt" "$T/big.npy"
	# 40,000 frames are some 50 ms on one GPU: a second GPU's start costs more
	run -0 --separate-stderr gmmscore -v -d auto -j 1 -m "$R/native.txt" -o "$T/a.txt" "$T/big.npy"
	[[ $stderr == *"gmmscore: auto: gpu, estimated "* ]]
	[[ $stderr == *"gmmscore: auto: one GPU of "*", not more than another GPU's start (0.250 s)"* ]]
	[[ $stderr != *"share"*"busy"* ]]
	cmp "$T/a.txt" "$T/one.txt"
	# a start that costs nothing: every GPU, each with its share, the same bytes
	run -0 --separate-stderr env ACCELKIT_EXTRA_GPU_SEC=0 gmmscore -v -d auto -j 1 \
	    -m "$R/native.txt" -o "$T/a.txt" "$T/big.npy"
	[[ $stderr =~ "gmmscore: auto: all "[0-9]+" GPUs: " ]]
	[[ $stderr =~ "gmmscore: device: "[0-9]+" GPUs gpu:0,1" ]]
	[[ $stderr == *"gmmscore: gpu:1 share "* ]]
	cmp "$T/a.txt" "$T/one.txt"
}

@test "gpu:all on a machine of several GPUs: the first GPU alone where the others do not pay, all where they do; a list as given" {
	require_gpus 2
	py -c "import numpy as n; n.save('$T/big.npy', n.random.default_rng(3).normal(0, 2, (40000, 39)).astype('f4'))"
	gmmscore -d gpu -m "$R/native.txt" -o "$T/one.txt" "$T/big.npy"
	# 40,000 frames are some 50 ms on one GPU: the others' set-up costs more
	run -0 --separate-stderr gmmscore -v -d gpu:all -m "$R/native.txt" -o "$T/a.txt" "$T/big.npy"
	[[ $stderr == *"gmmscore: gpu:all: 40000 frames"* ]]
	[[ $stderr == *"gmmscore: gpu:all: one GPU of "*", not more than another GPU's start (0.250 s)"* ]]
	[[ $stderr == *"gmmscore: device: gpu:0 "* ]]
	[[ $stderr != *"share"*"busy"* ]]
	cmp "$T/a.txt" "$T/one.txt"
	# where they pay (a start that costs nothing), every GPU with its share
	run -0 --separate-stderr env ACCELKIT_EXTRA_GPU_SEC=0 gmmscore -v -d gpu:all -m "$R/native.txt" \
	    -o "$T/a.txt" "$T/big.npy"
	[[ $stderr =~ "gmmscore: gpu:all: all "[0-9]+" GPUs: " ]]
	[[ $stderr == *"gmmscore: gpu:1 share "* ]]
	cmp "$T/a.txt" "$T/one.txt"
	# a list is not weighed
	run -0 --separate-stderr gmmscore -v -d gpu:0,1 -m "$R/native.txt" -o "$T/a.txt" "$T/big.npy"
	[[ $stderr != *"gpu:all:"* ]]
	[[ $stderr == *"gmmscore: gpu:1 share "* ]]
	cmp "$T/a.txt" "$T/one.txt"
}

@test "features from a pipe that delivers one byte at a time score as from the file" {
	# slow FILE: FILE on stdout, one byte a write, a pause after each
	cat > "$T/slow.py" <<'EOF'
import os, sys, time
b = open(sys.argv[1], "rb").read()
for i in range(len(b)):
    os.write(1, b[i:i + 1])
    time.sleep(0.0003)
EOF
	slow="$ACCELKIT_PYTHON $T/slow.py"
	py -c "import numpy as n; n.save('$T/f.npy', n.load('$D/feats.npy')[:20])"
	head -n 20 "$D/feats.txt" > "$T/f.txt"
	for dev in "${ACCELKIT_DEVICE:-cpu}" auto; do
		for f in "$G/feats.ark" "$G/feats.htk" "$T/f.npy" "$T/f.txt"; do
			case $f in
			*.ark) m=$G/final.mdl.txt ;;
			*.htk) m=$G/hmms.mmf ;;
			*) m=$D/native.txt ;;
			esac
			run -0 gmmscore -d $dev -m "$m" --all -O npy -o "$T/file.npy" "$f"
			run -0 bash -c "$slow '$f' | gmmscore -d $dev -m '$m' --all -O npy -o '$T/pipe.npy'"
			run -0 cmp "$T/file.npy" "$T/pipe.npy"
		done
		run -0 gmmscore -d $dev -m "$G/final.mdl.txt" -t 2 -o "$T/file.txt" "$G/feats.ark"
		run -0 bash -c "$slow '$G/feats.ark' | gmmscore -d $dev -m '$G/final.mdl.txt' -t 2 > '$T/pipe.txt'"
		run -0 cmp "$T/file.txt" "$T/pipe.txt"
	done
}

@test "random shapes, chunks and memory bounds give the unbounded run's bytes and numpy's scores" {
	run -0 py "$REF/gmmscore_props.py" "$T/props" --device cpu --timeout "$(limit 60)"
	assert_output --regexp '^20 cases, [0-9]+ runs agree'
}

@test "random --max-device-mem bounds on the GPU: the same bytes, a chunk that fits, a clear refusal" {
	require_gpu
	# (under racecheck a run took ~17 s: 3 cases, each with a refusal and three bounds)
	n=$(cases 30 10)
	run -0 py "$REF/gmmscore_props.py" "$T/props" --device gpu --cases "$n" --seed 15 --timeout "$(limit 60)"
	assert_output --regexp "^$n cases, [0-9]+ runs agree \([1-9][0-9]* under a memory bound, [1-9][0-9]* bounds refused\)"
}

# early_output ARGS...: runs gmmscore ARGS on a FIFO fed the first 600 frames, waits
# (up to 20 s) for output while the input is still open, then feeds the rest.
# Leaves the bytes seen early in $early and the whole output in $T/out.
early_output() {
	mkfifo "$T/fifo"
	gmmscore -m "$R/native.txt" --chunk 400 "$@" "$T/fifo" > "$T/out" &
	local pid=$!
	exec 7> "$T/fifo"
	head -n 600 "$R/feats.txt" >&7
	for _ in $(seq 200); do
		[ -s "$T/out" ] && break
		sleep 0.1
	done
	early=$(stat -c %s "$T/out")
	tail -n +601 "$R/feats.txt" >&7
	exec 7>&-
	wait "$pid"
}

@test "output of the first chunks appears before the input ends" {
	# 300 models a row: each chunk of 400 frames writes over a megabyte.
	early_output --all
	[ "$early" -gt 0 ]
	run -0 grep -c ']' "$T/out"
	assert_output 1
}

@test "a small chunk's top-1 lines appear before the input ends, too" {
	# A few kilobytes of results: only a flush gets them out early.
	early_output
	[ "$early" -gt 0 ]
	# one line a frame, every frame
	assert_equal "$(wc -l < "$T/out")" "$(wc -l < "$R/feats.txt")"
}

@test "a truncated HTK file is an error naming the file and the byte" {
	head -c 1000 "$D/feats.htk" > "$T/cut.htk"
	run -1 --separate-stderr gmmscore -m "$D/native.txt" "$T/cut.htk"
	assert_output ''
	[[ $stderr == *"cut.htk: byte 0: HTK header promises 300 frames"* ]]
	run -1 --separate-stderr bash -c "cat '$T/cut.htk' | gmmscore -m '$D/native.txt' -f htk"
	[[ $stderr == *"(standard input): byte 1000: HTK data is truncated: the header promises 300 frames, the data ends in frame 42"* ]]
}

@test "features of another dimension are an error naming the file and utterance" {
	cut -d ' ' -f 1-5 "$D/feats.txt" > "$T/f5.txt"
	run -1 --separate-stderr gmmscore -m "$D/native.txt" "$T/f5.txt"
	[[ $stderr == *"f5.txt: utterance '$T/f5.txt' has 5 dimensions, the models 6"* ]]
	run -1 --separate-stderr gmmscore -m "$D/native.txt" --dims 6 "$T/f5.txt"
	[[ $stderr == *"fewer than --dims 6"* ]]
	printf 'u  [\n  1 2 3 4 5 6\n  1 2 3 4 5 ]\n' > "$T/r.ark"
	run -1 --separate-stderr gmmscore -m "$D/native.txt" "$T/r.ark"
	[[ $stderr == *"r.ark:3: row has 5 columns, expected 6 as on line 2 (utterance 'u')"* ]]
}

@test "NaN in features is an error naming the line or byte" {
	sed '3s/^[^ ]*/nan/' "$D/feats.txt" > "$T/nan.txt"
	run -1 --separate-stderr gmmscore -m "$D/native.txt" "$T/nan.txt"
	[[ $stderr == *"nan.txt:3: column 1: NaN is not allowed"* ]]
	py - "$D/feats.htk" "$T/nan.htk" <<'EOF'
import sys
b = bytearray(open(sys.argv[1], "rb").read())
b[12 + 24 + 4:12 + 24 + 8] = b"\x7f\xc0\x00\x00"   # frame 2, column 2
open(sys.argv[2], "wb").write(b)
EOF
	run -1 --separate-stderr gmmscore -m "$D/native.txt" "$T/nan.htk"
	[[ $stderr == *"nan.htk: byte 40: NaN in HTK data (frame 2, column 2)"* ]]
}

@test "a bad variance or weight is an error naming the model and the value's line" {
	awk 'NR == 3 { $9 = 0 } { print }' "$D/native.txt" > "$T/v0.txt"
	run -1 --separate-stderr gmmscore -m "$T/v0.txt" "$D/feats.npy"
	[[ $stderr == *"v0.txt:3: model 's0', component 1, dimension 2: variance 0 is not positive"* ]]
	awk 'NR == 5 { $1 = -$1 } { print }' "$D/native.txt" > "$T/w.txt"
	run -1 --separate-stderr gmmscore -m "$T/w.txt" "$D/feats.npy"
	[[ $stderr == *"w.txt:5: model 'h1.2', component 1: weight -"*" is negative"* ]]
	# the weights' sum is the model's: its header line
	awk 'NR == 5 { $1 = $1 / 2 } { print }' "$D/native.txt" > "$T/w.txt"
	run -1 --separate-stderr gmmscore -m "$T/w.txt" "$D/feats.npy"
	[[ $stderr == *"w.txt:4: model 'h1.2': weights sum to"*"not 1"* ]]
	# s0's first variance (the second <VARIANCE> 6: the first is the ~v macro) to -1
	awk '/^<VARIANCE> 6$/ { v++ } { if (fix) { $1 = -1; fix = 0 } } v == 2 && !done { fix = 1; done = 1 } { print }' \
	    "$D/hmm.mmf" > "$T/v.mmf"
	run -1 --separate-stderr gmmscore -m "$T/v.mmf" "$D/feats.npy"
	[[ $stderr == *"v.mmf:13: model 's0', component 1, dimension 1: variance -1 is not positive"* ]]
	printf '<DIMENSION> 2 <NUMPDFS> 1 <DiagGMM>\n<WEIGHTS> [ 0.5 0.5 ]\n<MEANS_INVVARS> [\n 0 0\n 1 1 ]\n<INV_VARS> [\n 1 1\n 1 0 ]\n</DiagGMM>\n' > "$T/z.mdl"
	run -1 --separate-stderr gmmscore -m "$T/z.mdl" "$D/feats.npy"
	[[ $stderr == *"z.mdl:8: model '0', component 2, dimension 2: variance inf is not positive"* ]]
}

@test "an HTK ~m macro used inside its own definition is an error naming the line (was: a crash)" {
	printf '~o <VECSIZE> 2\n~m "a"\n~m "a"\n~s "s"\n~m "a"\n' > "$T/self.mmf"
	run -1 --separate-stderr gmmscore -m "$T/self.mmf" "$D/feats.npy"
	assert_equal "$stderr" "gmmscore: $T/self.mmf:3: macro ~m \"a\" is used inside its own definition"
}

# refused NAME TEXT WANT: a model file NAME holding TEXT (a printf format) is refused:
# exit 1, and the one line "gmmscore: $T/NAME:WANT".
refused() {
	# shellcheck disable=SC2059
	printf "$2" > "$T/$1"
	run -1 --separate-stderr gmmscore -m "$T/$1" "$D/feats.npy"
	assert_equal "$stderr" "gmmscore: $T/$1:$3"
}

@test "an HTK vector of no numbers is an error naming its line (was: memcpy from NULL)" {
	# a count of 0 left the vector size unknown, and a 0-number vector had no storage
	refused none.mmf '~m "a"\n<MEAN> 0\n<VARIANCE> 0\n~s "s"\n~m "a"\n' "2: <MEAN> has no dimensions"
	refused none.mmf '~o <VECSIZE> 0\n' "1: <VECSIZE> has no dimensions"
}

@test "a variance too small for float32 scoring is an error, not NaN scores" {
	# s = sqrt(0.5 / 1e-80) overflows float32: every frame would score NaN
	printf 'gmm a 1 2\n1 0 0 1 1e-80\n' > "$T/tiny.gmm"
	run -1 --separate-stderr gmmscore -d cpu -m "$T/tiny.gmm" "$D/feats.npy"
	assert_equal "$stderr" "gmmscore: $T/tiny.gmm:2: model 'a', component 1, dimension 2: variance 1e-80 is too small for float32 scoring beside its mean 0"
	# s = 7.1e9 is fine alone, but -mean s = -7.1e39 is not
	printf 'gmm a 1 2\n1 0 1e30 1 1e-20\n' > "$T/big.gmm"
	run -1 --separate-stderr gmmscore -d cpu -m "$T/big.gmm" "$D/feats.npy"
	[[ $stderr == *"big.gmm:2: model 'a', component 1, dimension 2: variance 1e-20 is too small for float32 scoring beside its mean 1e+30" ]]
	# Kaldi's <INV_VARS> 1e80 is the same variance
	printf '<DIMENSION> 2 <NUMPDFS> 1 <DiagGMM>\n<WEIGHTS> [ 1 ]\n<MEANS_INVVARS> [\n 0 0 ]\n<INV_VARS> [\n 1 1e80 ]\n</DiagGMM>\n' > "$T/tiny.mdl"
	run -1 --separate-stderr gmmscore -d cpu -m "$T/tiny.mdl" "$D/feats.npy"
	[[ $stderr == *"tiny.mdl:6: model '0', component 1, dimension 2: variance 1e-80 is too small"* ]]
	# the smallest variance that fits still scores finite numbers, as float64 does
	printf 'gmm a 1 2\n1 0 0 1 1e-70\n' > "$T/small.gmm"
	# float64: log N(x) = -log(2 pi) + 0.5 log(1e70) - 0.5 x2^2 1e70 = 78.7526 and 78.7476 (78.747604 in float32)
	run -0 gmmscore -d cpu -m "$T/small.gmm" --all - < <(printf '0 0\n0 1e-36\n')
	assert_equal "$(echo $output)" "- [ 78.7526 78.747604 ]"
}

@test "a bad value on a later line of its model is named by that line (the colleague's case)" {
	# bad3.gmm: the variance on line 7 belongs to the model whose header is line 5
	printf '# two models\ngmm a 1 2\n1 0 0 1 1\n\ngmm b 2 2\n0.5 0 0 1 1\n0.5 0 0 1 -2\n' > "$T/bad3.gmm"
	run -1 --separate-stderr gmmscore -m "$T/bad3.gmm" "$D/feats.npy"
	assert_equal "$stderr" "gmmscore: $T/bad3.gmm:7: model 'b', component 2, dimension 2: variance -2 is not positive and finite"
	# the same in an HTK MMF: the weight on its <MIXTURE> line, the variance on its own
	printf '~o <VECSIZE> 2\n~s "a"\n<NUMMIXES> 2\n<MIXTURE> 1 0.5\n<MEAN> 2 0 0\n<VARIANCE> 2 1 1\n<MIXTURE> 2 -0.5\n<MEAN> 2 0 0\n<VARIANCE> 2\n1\n1\n' > "$T/w.mmf"
	run -1 --separate-stderr gmmscore -m "$T/w.mmf" "$D/feats.npy"
	[[ $stderr == *"w.mmf:7: model 'a', component 2: weight -0.5 is negative"* ]]
	sed -e '7s/-0.5/0.5/' -e '11s/1/0/' "$T/w.mmf" > "$T/v.mmf"
	run -1 --separate-stderr gmmscore -m "$T/v.mmf" "$D/feats.npy"
	[[ $stderr == *"v.mmf:11: model 'a', component 2, dimension 2: variance 0 is not positive"* ]]
	# a variance from a ~v macro: the macro's line
	printf '~o <VECSIZE> 2\n~v "f"\n<VARIANCE> 2\n1 -1\n~s "a"\n<MEAN> 2 0 0\n~v "f"\n' > "$T/m.mmf"
	run -1 --separate-stderr gmmscore -m "$T/m.mmf" "$D/feats.npy"
	[[ $stderr == *"m.mmf:4: model 'a', component 1, dimension 2: variance -1 is not positive"* ]]
}

@test "a bad number is quoted alone, not with the rest of its line" {
	refused bad.gmm 'gmm a 1 2\nx 1 1 1 1\n' "2: model 'a', component 1: not a number: 'x'"
	refused bad.gmm 'gmm a 1 2\n1 0 0 1 1e\n' "2: model 'a', component 1: not a number: '1e'"
	refused bad.mdl '<DIMENSION> 2 <NUMPDFS> 1 <DiagGMM>\n<WEIGHTS> [ 1 ]\n<MEANS_INVVARS> [\n 0 zero ]\n<INV_VARS> [\n 1 1 ]\n</DiagGMM>\n' \
	    "4: not a number: 'zero'"
	refused bad.mmf '~o <VECSIZE> 2\n~s "a"\n<MEAN> 2 0 nought 1\n<VARIANCE> 2 1 1\n' \
	    "3: expected a number, found 'nought'"
}

@test "models over a megabyte parse on the threads as on one: numpy's scores, the first bad token" {
	# 450 models x 8 Gaussians x 39 dimensions: over a megabyte in every format, so -j 2
	# parses on two threads (gmm_read.h's GMM_PAR_BYTES) and -j 1 on one
	py "$ACCELKIT_ROOT/bench/gmmscore_gen.py" "$T/b" --models 450 --comps 8 --frames 40 --text
	py - "$T/b" <<'EOF'
import sys
import numpy as np
d = sys.argv[1]
p = np.load(d + "/model.npz")
w, iv = p["w"].astype(np.float64), p["inv_vars"].astype(np.float64)
mu = p["means_invvars"] / iv
x = np.load(d + "/feats.npy").astype(np.float64)
g = np.log(w) - 0.5 * (mu.shape[2] * np.log(2 * np.pi) - np.log(iv).sum(2))
c = g[None] - 0.5 * (((x[:, None, None, :] - mu[None]) ** 2) * iv[None]).sum(3)
top = c.max(2)
np.save(d + "/want.npy", top + np.log(np.exp(c - top[..., None]).sum(2)))
EOF
	for m in model.txt model.mdl.txt model.mmf model.mdl; do
		[ "$(stat -c %s "$T/b/$m")" -gt $((1 << 20)) ]
		run -0 gmmscore -d cpu -j 1 -m "$T/b/$m" --all -O npy -o "$T/j1.npy" "$T/b/feats.npy"
		run -0 gmmscore -d cpu -j 2 -m "$T/b/$m" --all -O npy -o "$T/j2.npy" "$T/b/feats.npy"
		run -0 cmp "$T/j1.npy" "$T/j2.npy"
		run -0 refcheck npy "$T/j2.npy" "$T/b/want.npy"
	done
	# A bad token on the last number line before the middle and another on the first
	# after it, one on each side of where two threads split the file: the first is named.
	for m in model.txt model.mdl.txt model.mmf; do
		f=$T/b/$m
		nums=$(grep -b -n '^ *-\?[0-9]' "$f")
		half=$(($(stat -c %s "$f") / 2))
		l0=$(awk -F: -v h=$half '$2 > h { print prev; exit } { prev = $1 }' <<< "$nums")
		l1=$(awk -F: -v h=$half '$2 > h { print $1; exit }' <<< "$nums")
		sed -e "${l0}s/-\?[0-9][^ ]*/x/" -e "${l1}s/-\?[0-9][^ ]*/y/" "$f" > "$T/bad.$m"
		run -1 --separate-stderr gmmscore -d cpu -j 1 -m "$T/bad.$m" "$T/b/feats.npy"
		[[ $stderr == "gmmscore: $T/bad.$m:$l0: "*"'x'" ]]
		one=$stderr
		run -1 --separate-stderr gmmscore -d cpu -j 2 -m "$T/bad.$m" "$T/b/feats.npy"
		assert_equal "$stderr" "$one"
	done
}

@test "a dimension mismatch inside a model file is an error naming the model" {
	printf '<DIMENSION> 2 <NUMPDFS> 2\n<DiagGMM>\n<WEIGHTS> [ 1 ]\n<MEANS_INVVARS> [\n 0 0 ]\n<INV_VARS> [\n 1 1 ]\n</DiagGMM>\n<DiagGMM>\n<WEIGHTS> [ 1 ]\n<MEANS_INVVARS> [\n 0 0 0 ]\n<INV_VARS> [\n 1 1 1 ]\n</DiagGMM>\n' > "$T/k.mdl"
	run -1 --separate-stderr gmmscore -m "$T/k.mdl" "$D/feats.npy"
	[[ $stderr == *"k.mdl:9: model '1' has dimension 3, the models' is 2"* ]]
	sed '0,/<MEAN> 6/s/<MEAN> 6/<MEAN> 5/' "$D/hmm.mmf" > "$T/d.mmf"
	run -1 --separate-stderr gmmscore -m "$T/d.mmf" "$D/feats.npy"
	[[ $stderr == *"d.mmf:10: <MEAN> has 5 dimensions, the models have 6"* ]]
	printf 'gmm a 1 2\n1 0 0 1 1\ngmm b 1 3\n1 0 0 0 1 1 1\n' > "$T/n.txt"
	run -1 --separate-stderr gmmscore -m "$T/n.txt" "$D/feats.npy"
	[[ $stderr == *"n.txt:3: model 'b' has dimension 3, the first model's is 2"* ]]
	run -1 --separate-stderr gmmscore -m "$D/native.txt" --dims 7 "$D/feats.npy"
	[[ $stderr == *"--dims 7: the models have 6 dimensions"* ]]
}

@test "unsupported inputs are refused clearly" {
	printf 'utt \0BFM \4\1\0\0\0\4\6\0\0\0' > "$T/b.ark"
	run -1 --separate-stderr gmmscore -m "$D/native.txt" "$T/b.ark"
	[[ $stderr == *"b.ark: byte 19: utterance 'utt': FM header promises 1 x 6 values (24 bytes), 0 bytes follow"* ]]
	printf '\0\0\0\1\0\0\0\1\0\2\0\0\0\0' > "$T/w.htk"
	run -1 --separate-stderr gmmscore -m "$D/native.txt" "$T/w.htk"
	[[ $stderr == *"w.htk: byte 10: HTK file holds a waveform"* ]]
	printf 'hello world\n' > "$T/m.txt"
	run -1 --separate-stderr gmmscore -m "$T/m.txt" "$D/feats.npy"
	[[ $stderr == *"m.txt:1: not a model file"* ]]
	printf '~o <VECSIZE> 2\n~s "a" <NUMMIXES> 1 <MIXTURE> 1 1 <MEAN> 2 0 0 <INVCOVAR> 2 1 0 1\n' > "$T/f.mmf"
	run -1 --separate-stderr gmmscore -m "$T/f.mmf" "$D/feats.npy"
	[[ $stderr == *"a full covariance is not supported"* ]]
}

@test "usage errors exit 2 and say how to get help" {
	run -2 --separate-stderr gmmscore "$D/feats.npy"
	[[ $stderr == *"no models given"* ]]
	run -2 --separate-stderr gmmscore -m "$D/native.txt" --top 0 "$D/feats.npy"
	[[ $stderr == *"--top"* ]]
	run -2 --separate-stderr gmmscore -m "$D/native.txt" --mode mean "$D/feats.npy"
	run -2 --separate-stderr gmmscore -m "$D/native.txt" --all --top 2 "$D/feats.npy"
	run -2 --separate-stderr gmmscore -m "$D/native.txt" -O npy "$D/feats.npy"
	[[ $stderr == *"needs --all"* ]]
	[[ $stderr == *"Try 'gmmscore --help'"* ]]
	run -0 gmmscore --help
	assert_line --index 0 --partial 'usage: gmmscore -m MODELS'
}

@test "a closed pipe ends the program quietly" {
	run -0 --separate-stderr bash -c "gmmscore -m '$R/native.txt' --all '$R/feats.npy' | head -c 10 > /dev/null"
	assert_equal "$stderr" ""
}

# The examples of man/gmmscore.1.

@test "example: the best pdf of each frame of an archive" {
	run -0 gmmscore -m "$G/final.mdl.txt" -o "$T/e.txt" "$G/feats.ark"
	py "$REF/gmmscore_ref.py" scores "$T" "$G/feats.ark" "$T/s.npy" --native "$G/models.txt" \
	    --ark
	run -0 refcheck top "$T/e.txt" "$T/s.npy" --keys utt0:2,utt1:1,utt2:7
}

@test "example: the two best HTK states of each frame, by best component" {
	run -0 gmmscore -m "$G/hmms.mmf" --mode max --top 2 -o "$T/e.txt" "$G/feats.htk"
	py "$REF/gmmscore_ref.py" scores "$T" "$G/feats.ark" "$T/s.npy" --native "$G/models.txt" \
	    --ark --mode max
	run -0 refcheck top "$T/e.txt" "$T/s.npy" --top 2 --names <(awk '/^gmm/ { print $2 }' \
	    "$G/models.txt") --keys "$G/feats.htk:10"
}

@test "example: every pdf's log-likelihood as gmm-compute-likes writes it" {
	run -0 gmmscore -m "$G/final.mdl.txt" --all -o "$T/likes.ark" "$G/feats.ark"
	py "$REF/gmmscore_ref.py" scores "$T" "$G/feats.ark" "$T/s.npy" --native "$G/models.txt" \
	    --ark
	run -0 refcheck all "$T/likes.ark" "$T/s.npy" --keys utt0:2,utt1:1,utt2:7
}

@test "example: every score as NPY, from an HTK file" {
	run -0 gmmscore -m "$G/final.mdl.txt" --all -O npy -o "$T/likes.npy" "$G/feats.htk"
	py "$REF/gmmscore_ref.py" scores "$T" "$G/feats.ark" "$T/s.npy" --native "$G/models.txt" \
	    --ark
	run -0 refcheck npy "$T/likes.npy" "$T/s.npy"
}

@test "example: what auto counted and chose" {
	run -0 --separate-stderr gmmscore -v -d auto -m "$G/final.mdl.txt" "$G/feats.ark" -o /dev/null
	assert_equal "$(grep -c '^gmmscore: auto: 10 frames$' <<< "$stderr")" 1
	[[ $stderr == *"gmmscore: auto: cpu, estimated "*"(450 frames x Gaussians x dims)"* ||
	    $stderr == *"(no usable GPU"* ]]
}

@test "example: the first two dimensions only" {
	run -0 gmmscore -m "$G/final.mdl.txt" --dims 2 -o "$T/e.txt" "$G/feats.ark"
	py "$REF/gmmscore_ref.py" scores "$T" "$G/feats.ark" "$T/s.npy" --native "$G/models.txt" \
	    --ark --dims 2
	run -0 refcheck top "$T/e.txt" "$T/s.npy" --keys utt0:2,utt1:1,utt2:7
}
