# tests/helpers.bash: loaded by every suite's setup().
# Puts the build's programs first on PATH, loads bats-support and bats-assert, and
# picks a Python that has the reference modules.

bats_require_minimum_version 1.5.0

ACCELKIT_ROOT="${ACCELKIT_ROOT:-$(cd "$BATS_TEST_DIRNAME/.." && pwd)}"
ACCELKIT_BUILD="${ACCELKIT_BUILD:-$ACCELKIT_ROOT/build}"
PATH="$ACCELKIT_BUILD/bin:$ACCELKIT_BUILD/test:$PATH"
# make check-gpu SANITIZE=cuda: tests/run's wrappers, which run the CUDA programs
# under compute-sanitizer, come first.
if [ -n "${ACCELKIT_WRAP:-}" ]; then
	PATH="$ACCELKIT_WRAP:$PATH"
fi
TESTDATA="$ACCELKIT_ROOT/testdata"
REF="$ACCELKIT_ROOT/tests/ref"
export PATH

bats_load_library bats-support
bats_load_library bats-assert

# The interpreter for references (numpy, scikit-learn). tests/run picks it once; a
# suite run alone picks it here. The python3 first on PATH can lack the modules that
# Debian installs for /usr/bin/python3 (and on the GPU machine the PATH one has them).
if [ -z "${ACCELKIT_PYTHON:-}" ]; then
	for _py in python3 /usr/bin/python3; do
		if "$_py" -c 'import numpy, sklearn' 2>/dev/null; then
			ACCELKIT_PYTHON=$_py
			break
		fi
	done
	export ACCELKIT_PYTHON
fi

# py ARGS...: run the reference interpreter (fails the test if there is none).
py() {
	if [ -z "${ACCELKIT_PYTHON:-}" ]; then
		echo "no python3 with numpy and scikit-learn (run 'make deps')" >&2
		return 1
	fi
	"$ACCELKIT_PYTHON" "$@"
}

# pyhas MODULE: whether the reference interpreter has that module.
pyhas() {
	[ -n "${ACCELKIT_PYTHON:-}" ] && "$ACCELKIT_PYTHON" -c "import $1" 2>/dev/null
}

# The device the suites run on: cpu under `make check`, gpu under `make check-gpu`.
on_gpu() {
	[ "${ACCELKIT_DEVICE:-}" = gpu ]
}

# For tests whose point is comparing the GPU with the CPU: they run in check-gpu only.
require_gpu() {
	on_gpu || skip "GPU-only (make check-gpu)"
}

# hopper: whether the GPU the suites run on is a Hopper (compute capability 9.0, with
# wgmma). The lent machines' GPUs are all of one kind, so the first one says.
hopper() {
	on_gpu && [ "$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null |
	    head -n 1)" = 9.0 ]
}

# require_hopper: a test of a Hopper-only kernel (clmatmul's gemm_wgmma).
require_hopper() {
	require_gpu
	hopper || skip "needs a Hopper GPU (compute capability 9.0)"
}

# require_gpus N: a GPU-only test that needs N distinct GPUs (gpu:0,1): skipped, with
# the reason, on a machine with fewer. Tests that list one GPU twice (gpu:0,0) run the
# same dividing code on one GPU and need only require_gpu.
require_gpus() {
	require_gpu
	local n
	n=$(gpu_count)
	[ "$n" -ge "$1" ] || skip "needs $1 GPUs ($n here)"
}

# gpu_count: the GPUs the programs see. CUDA_VISIBLE_DEVICES, when set, limits them (a
# suite pinned to one GPU of a bigger host, as SANITIZE=cuda passes run side by side),
# and nvidia-smi does not heed it.
gpu_count() {
	if [ -n "${CUDA_VISIBLE_DEVICES+set}" ]; then
		local IFS=, list
		read -ra list <<< "$CUDA_VISIBLE_DEVICES"
		echo "${#list[@]}"
	else
		nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true
	fi
}

# The sanitizer tests/run applies: 0; 1, AddressSanitizer and UBSan (make check
# SANITIZE=1); cuda, compute-sanitizer (make check-gpu SANITIZE=cuda).
ACCELKIT_SANITIZE="${ACCELKIT_SANITIZE:-${SANITIZE:-0}}"

# limit SECONDS: a time limit on one run, scaled by ACCELKIT_TIME_SCALE: 20 under
# compute-sanitizer, whose racecheck runs a GPU program tens of times slower (a property
# test's 60 s cut it short), else 1. Exported for the references' own limits
# (tests/ref/*.py read it through --limit, --timeout or run_sky).
if [ -z "${ACCELKIT_TIME_SCALE:-}" ]; then
	ACCELKIT_TIME_SCALE=1
	[ "$ACCELKIT_SANITIZE" != cuda ] || ACCELKIT_TIME_SCALE=20
fi
export ACCELKIT_TIME_SCALE
limit() {
	echo $(($1 * ACCELKIT_TIME_SCALE))
}

# cases N [DIV]: the random cases a GPU property test draws: N, or N / DIV (default 4; at
# least 3) under compute-sanitizer, whose runs cost 10 to 1000 times as much (a property
# test of 30 cases did not end in 477 s of memcheck). The draws are the same, only fewer.
cases() {
	local div=${2:-4}
	if [ "$ACCELKIT_SANITIZE" = cuda ]; then
		echo $(($1 / div > 3 ? $1 / div : 3))
	else
		echo "$1"
	fi
}

# skip_if_sanitized_gpu WHY: for a test that cannot run under compute-sanitizer: an
# input too big to finish in its time, or a signal that would reach the sanitizer
# rather than the program. Only in that mode; everywhere else the test runs.
skip_if_sanitized_gpu() {
	[ "$ACCELKIT_SANITIZE" != cuda ] || skip "under compute-sanitizer: $1"
}

# skip_if_asan WHY: for a test that AddressSanitizer's runtime makes impossible
# (it reserves terabytes of address space, so ulimit -v cannot apply).
skip_if_asan() {
	[ "$ACCELKIT_SANITIZE" != 1 ] || skip "under AddressSanitizer: $1"
}
