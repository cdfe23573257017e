#!/usr/bin/env bats
# sanitize: the plumbing of make check-gpu SANITIZE=cuda, tried here without a GPU:
# a fake nvidia-smi and a fake compute-sanitizer (which logs how it was called, runs
# the program, and writes a clean log, or a report when FAKE_REPORT is set) stand in
# for the real ones, and tests/run runs a small suite through its wrappers. Also
# tests/run's SHARD=K/N.

bats_require_minimum_version 1.5.0

setup() {
	load helpers
	T=$BATS_TEST_TMPDIR
	mkdir "$T/bin"
	printf '#!/bin/sh\necho "GPU 0: a fake one"\n' > "$T/bin/nvidia-smi"
	cat > "$T/bin/compute-sanitizer" <<-'EOF'
	#!/bin/bash
	# fake compute-sanitizer: OPTION VALUE pairs, then the program and its arguments.
	# FAKE_EARLY: as the real one for a program that ends before its first CUDA
	# call: its note in the log, and exit status 0 whatever the program's.
	echo "$*" >> "$FAKE_CALLS"
	echo "${CUDA_MODULE_LOADING-unset}" >> "$FAKE_CALLS.loading"
	while [[ $1 == --* ]]; do
		[ "$1" = --log-file ] && log=$2
		shift 2
	done
	"$@"
	status=$?
	{
		echo "========= COMPUTE-SANITIZER"
		if [ -n "${FAKE_EARLY:-}" ]; then
			echo "========= Target application terminated before first instrumented API call"
			status=0
		elif [ -n "${FAKE_REPORT:-}" ]; then
			echo "========= Invalid __global__ read of size 4 bytes"
			echo "=========     at skyline_classic+0x70"
			echo "========= ERROR SUMMARY: 1 error"
			status=99
		else
			echo "========= ERROR SUMMARY: 0 errors"
		fi
	} > "$log"
	exit $status
	EOF
	chmod +x "$T/bin/nvidia-smi" "$T/bin/compute-sanitizer"
	export FAKE_CALLS=$T/calls
	OUTPATH=${PATH//"$BATS_LIBEXEC:"/}
	# (written with %test: Bats would take @test lines here for this file's own)
	sed 's/^%test/@test/' > "$T/suite.bats" <<-'EOF'
	setup() {
		load "$ACCELKIT_ROOT/tests/helpers.bash"
	}
	%test "a GPU run goes through compute-sanitizer" {
		run -0 skyline --version
		run -0 docsim --version
	}
	%test "CPU runs do not" {
		skyline -d cpu --version
		skyline -dcpu --version
		skyline --device=cpu --version
		skyline --device cpu --version
		ACCELKIT_DEVICE=cpu skyline --version
		clmatmul --version
	}
	%test "a test too big for the sanitizer skips" {
		skip_if_sanitized_gpu "too big"
		false
	}
	%test "a usage error keeps its status through the sanitizer" {
		run -2 skyline --no-such-option
	}
	EOF
}

# outside [VAR=VALUE...] CMD...: CMD without this suite's Bats variables, functions
# and PATH entry, which would confuse the Bats that tests/run starts, nor the settings of
# the tests/run this suite runs under (TIMING=1 would add times to the TAP lines checked).
outside() {
	local v unset=(-u TIMING -u FILTER -u CUSAN_EVERY -u CUSAN_TOOLS)
	for v in $(compgen -e) $(env | sed -n 's/^\(BASH_FUNC_[^=]*\)=.*/\1/p'); do
		# (BATS_LIB_PATH stays: it says where bats-support is, as on the GPU machine)
		[[ ($v == BATS_* && $v != BATS_LIB_PATH) || $v == BASH_FUNC_* ]] && unset+=(-u "$v")
	done
	PATH=$OUTPATH env "${unset[@]}" "$@"
}

# sanitized_run [VAR=VALUE...]: tests/run --gpu on the small suite with SANITIZE=cuda.
sanitized_run() {
	outside PATH="$T/bin:$OUTPATH" SANITIZE=cuda "$@" \
	    "$ACCELKIT_ROOT/tests/run" --gpu "$ACCELKIT_BUILD" "$T/suite.bats"
}

@test "SANITIZE=cuda runs the suites once a tool, the CUDA programs under compute-sanitizer" {
	run -0 sanitized_run CUSAN_TOOLS="memcheck racecheck synccheck"
	assert_line "# ==== compute-sanitizer --tool memcheck: docsim skyline gmmscore editdist4r"
	# docsim under racecheck and synccheck too, since k_exact's warp tiles
	assert_line "# ==== compute-sanitizer --tool racecheck: docsim skyline gmmscore editdist4r"
	assert_line "# ==== compute-sanitizer --tool synccheck: docsim skyline gmmscore editdist4r"
	assert_line "# compute-sanitizer memcheck: 3 runs, 0 with reports"
	assert_line "# compute-sanitizer racecheck: 3 runs, 0 with reports"
	assert_line "# compute-sanitizer synccheck: 3 runs, 0 with reports"
	assert_line "ok 3 a test too big for the sanitizer skips # skip under compute-sanitizer: too big"
	assert_line --regexp '^# device: gpu; [0-9]+ s; 3 skipped$'
	assert_line "9 passed, 0 failed"
	# GPU runs only, each with its own log: skyline, docsim, skyline's usage error
	run -0 cat "$T/calls"
	assert_equal "${#lines[@]}" 9
	assert_regex "${lines[0]}" "^--tool memcheck --error-exitcode 99 --print-limit 20 --report-api-errors no --require-cuda-init no --target-processes all --log-file [^ ]*/skyline\.[0-9]+\.log sh -c .* $ACCELKIT_BUILD/bin/skyline --version$"
	assert_regex "${lines[1]}" "^--tool memcheck .* $ACCELKIT_BUILD/bin/docsim --version$"
	assert_regex "${lines[3]}" "^--tool racecheck .* $ACCELKIT_BUILD/bin/skyline --version$"
	assert_regex "${lines[4]}" "^--tool racecheck .* $ACCELKIT_BUILD/bin/docsim --version$"
	assert_regex "${lines[6]}" "^--tool synccheck .* $ACCELKIT_BUILD/bin/skyline --version$"
	assert_regex "${lines[7]}" "^--tool synccheck .* $ACCELKIT_BUILD/bin/docsim --version$"
	# racecheck's runs load every module at the start; the other tools' as CUDA does
	run -0 cat "$T/calls.loading"
	assert_equal "$(echo "${lines[@]}")" "unset unset unset EAGER EAGER EAGER unset unset unset"
}

@test "a program that ends before CUDA keeps its exit status, and the sanitizer's note of it is clean" {
	# (the real sanitizer exits 0 then, and says so in its log)
	run -0 sanitized_run CUSAN_TOOLS=memcheck FAKE_EARLY=1
	assert_line "ok 4 a usage error keeps its status through the sanitizer"
	assert_line "# compute-sanitizer memcheck: 3 runs, 0 with reports"
	assert_line "3 passed, 0 failed"
}

@test "CUSAN_EVERY=N puts the first and every N-th GPU run of each program under the sanitizer" {
	run -0 sanitized_run CUSAN_TOOLS=memcheck CUSAN_EVERY=2
	assert_line "# compute-sanitizer memcheck: 2 runs, 0 with reports"
	assert_line "3 passed, 0 failed"
	# skyline's first run and docsim's first; skyline's second (the usage error) plainly
	run -0 cat "$T/calls"
	assert_equal "${#lines[@]}" 2
	assert_regex "${lines[0]}" " $ACCELKIT_BUILD/bin/skyline --version$"
	assert_regex "${lines[1]}" " $ACCELKIT_BUILD/bin/docsim --version$"
	run -2 sanitized_run CUSAN_TOOLS=memcheck CUSAN_EVERY=0
	assert_line "tests/run: CUSAN_EVERY must be a count of runs, not '0'"
}

@test "a sanitizer report is printed and fails the run" {
	run -1 sanitized_run CUSAN_TOOLS=memcheck FAKE_REPORT=1
	assert_line --regexp '^# compute-sanitizer memcheck report in skyline\.[0-9]+\.log:$'
	assert_line "#   ========= Invalid __global__ read of size 4 bytes"
	assert_line "# compute-sanitizer memcheck: 2 runs, 2 with reports"
	assert_line --regexp '^not ok 1 a GPU run goes through compute-sanitizer$'
	assert_line "1 passed, 4 failed"
}

@test "SANITIZE=cuda needs --gpu and a compute-sanitizer" {
	run -2 outside SANITIZE=cuda "$ACCELKIT_ROOT/tests/run" "$ACCELKIT_BUILD" "$T/suite.bats"
	assert_output "SANITIZE=cuda checks the GPU paths: run make check-gpu SANITIZE=cuda"
	run -1 outside PATH="$T/bin:$OUTPATH" SANITIZE=cuda COMPUTE_SANITIZER=/nonexistent \
	    "$ACCELKIT_ROOT/tests/run" --gpu "$ACCELKIT_BUILD" "$T/suite.bats"
	assert_output "$(printf '%s\n' "check-gpu: compute-sanitizer not found (set COMPUTE_SANITIZER)" "0 passed, 1 failed")"
}

# Oclgrind (a simulator of an OpenCL device) checks what compute-sanitizer checks for
# CUDA: every access of the OpenCL kernels, and races between work-items. NVIDIA's
# OpenCL driver has no such mode; there make check-gpu's suites, with every OpenCL
# call checked, are the driver's checks.

# under_oclgrind LOG CMD...: CMD on Oclgrind's device, its reports in LOG.
under_oclgrind() {
	local log=$1
	shift
	oclgrind --check-api --data-races --max-errors 20 --log "$log" "$@"
}

@test "SHARD=K/N of tests/run: the shards run each test once, FILTER first; a bad SHARD is a usage error" {
	local k
	for k in 1 2 3 4 5; do
		printf '%%test "t%s, with (ERE) [chars] $HOME" {\n\techo %s >> "$SHARD_LOG"\n}\n' "$k" "$k"
	done | sed 's/^%test/@test/' > "$T/five.bats"
	export SHARD_LOG=$T/ran
	run -0 outside SHARD=1/2 "$ACCELKIT_ROOT/tests/run" "$ACCELKIT_BUILD" "$T/five.bats"
	assert_line "3 passed, 0 failed"
	run -0 outside SHARD=2/2 "$ACCELKIT_ROOT/tests/run" "$ACCELKIT_BUILD" "$T/five.bats"
	assert_line "2 passed, 0 failed"
	assert_equal "$(sort "$T/ran" | tr -d '\n')" 12345
	# a shard of none: no test, and not a failure
	rm "$T/ran"
	run -0 outside SHARD=2/2 FILTER='t[13]' "$ACCELKIT_ROOT/tests/run" "$ACCELKIT_BUILD" "$T/five.bats"
	assert_line "1 passed, 0 failed"
	assert_equal "$(cat "$T/ran")" 3
	run -0 outside SHARD=6/6 FILTER='t[13]' "$ACCELKIT_ROOT/tests/run" "$ACCELKIT_BUILD" "$T/five.bats"
	assert_line "0 passed, 0 failed"
	run -2 outside SHARD=3/2 "$ACCELKIT_ROOT/tests/run" "$ACCELKIT_BUILD" "$T/five.bats"
	assert_output "tests/run: SHARD must be K/N with 1 <= K <= N, not '3/2'"
}

@test "SUITE.bats@N of tests/run: N shards side by side in one run, each test once, with the other suites; a bad N is a usage error" {
	local k
	for k in 1 2 3 4 5; do
		printf '%%test "t%s" {\n\techo %s >> "$SHARD_LOG"\n}\n' "$k" "$k"
	done | sed 's/^%test/@test/' > "$T/five.bats"
	printf '@test "other" {\n\techo o >> "$SHARD_LOG"\n}\n' > "$T/other.bats"
	export SHARD_LOG=$T/ran
	run -0 outside "$ACCELKIT_ROOT/tests/run" "$ACCELKIT_BUILD" "$T/five.bats@3" "$T/other.bats"
	assert_line "6 passed, 0 failed"
	assert_line --regexp '^# ---- five\.bats\.1 '
	assert_line --regexp '^# ---- five\.bats\.3 '
	assert_equal "$(sort "$T/ran" | tr -d '\n')" 12345o
	# a failing test in a shard fails the run, named in its shard's TAP
	sed -i 's/echo 4 >>/false; echo 4 >>/' "$T/five.bats"
	run -1 outside "$ACCELKIT_ROOT/tests/run" "$ACCELKIT_BUILD" "$T/five.bats@2"
	assert_line "4 passed, 1 failed"
	assert_line --partial "not ok 2 t4"
	run -2 outside "$ACCELKIT_ROOT/tests/run" "$ACCELKIT_BUILD" "$T/five.bats@0"
	assert_output --partial "@N must be a count of shards"
}

@test "the OpenCL kernels under Oclgrind: no invalid access, no data race, and numpy's and scikit-learn's results" {
	command -v oclgrind >/dev/null || skip "oclgrind is not installed (make deps)"
	skip_if_asan "Oclgrind's runtime and AddressSanitizer's do not mix"
	py - "$T" <<-'EOF'
	import sys
	import numpy as np
	d, r = sys.argv[1], np.random.default_rng(21)
	for name, shape in [("a", (37, 53)), ("b", (53, 29)), ("c", (37, 29)), ("at", (53, 37))]:
	    np.savetxt("%s/%s.txt" % (d, name), r.standard_normal(shape).astype(np.float32), fmt="%.9g")
	np.save(d + "/p.npy", np.r_[r.normal(0, 1, (150, 3)), r.normal(5, 1, (183, 3))].astype(np.float32))
	np.savetxt(d + "/c0.txt", np.load(d + "/p.npy")[[0, 40, 200, 300]], fmt="%.9g")
	EOF
	local args i=0
	while read -r args; do
		i=$((i + 1))
		echo "# clmatmul $args"
		# shellcheck disable=SC2086
		under_oclgrind "$T/m$i.log" clmatmul -d 0:0 $args -o "$T/m$i.out"
		[ ! -s "$T/m$i.log" ] || { cat "$T/m$i.log"; return 1; }
		# shellcheck disable=SC2086
		run -0 py "$REF/clmatmul_ref.py" $(sed 's/--transpose-a/--ta/; s/-c /--c0 /; s/--max-device-mem [^ ]*//; s/--tile [^ ]*//; s/--item [^ ]*//; s/--transfers [^ ]*//' <<< "$args") "$T/m$i.out"
		assert_output "ok"
	done <<-EOF
	$T/a.txt $T/b.txt
	--transpose-a $T/at.txt $T/b.txt
	--double $T/a.txt $T/b.txt
	--beta 0.5 -c $T/c.txt $T/a.txt $T/b.txt
	--max-device-mem 50K $T/a.txt $T/b.txt
	--max-device-mem 50K --transfers packed $T/a.txt $T/b.txt
	--tile 16 --item 2 $T/a.txt $T/b.txt
	EOF
	py "$REF/clkmeans_ref.py" sklearn "$T/p.npy" "$T/c0.txt" 300 1e-4 > "$T/ref.txt"
	for args in "" "--max-device-mem 15K"; do
		echo "# clkmeans $args"
		# shellcheck disable=SC2086
		under_oclgrind "$T/k.log" clkmeans -d 0:0 -k 4 --init "$T/c0.txt" $args -o "$T/k.out" "$T/p.npy"
		[ ! -s "$T/k.log" ] || { cat "$T/k.log"; return 1; }
		py "$REF/clkmeans_ref.py" check "$T/k.out" "$T/ref.txt"
	done
	under_oclgrind "$T/k.log" clkmeans -d 0:0 -k 4 --n-init 2 --distances -o "$T/k.out" "$T/p.npy"
	[ ! -s "$T/k.log" ] || { cat "$T/k.log"; return 1; }
}

@test "Oclgrind reports a write past a buffer that is planted in a kernel" {
	command -v oclgrind >/dev/null || skip "oclgrind is not installed (make deps)"
	skip_if_asan "Oclgrind's runtime and AddressSanitizer's do not mix"
	mkdir "$T/k"
	cp "$ACCELKIT_ROOT"/kernels/clkmeans_*.cl "$T/k/"
	sed 's/^\(\t*\)if (update)$/\1closest[row0 + nb + 4096] = m;\n&/' \
	    "$ACCELKIT_ROOT/kernels/clkmeans_seed.cl" > "$T/k/clkmeans_seed.cl"
	run -1 cmp -s "$ACCELKIT_ROOT/kernels/clkmeans_seed.cl" "$T/k/clkmeans_seed.cl"
	printf '0 0\n1 1\n5 5\n6 6\n' > "$T/p.txt"
	ACCELKIT_KERNEL_DIR=$T/k under_oclgrind "$T/k.log" clkmeans -d 0:0 -k 2 "$T/p.txt" || true
	run -0 cat "$T/k.log"
	assert_line --partial "Invalid write of size 4 at global memory address"
}
