# tests/scale/scale.bash: loaded by the scale suites (make check-scale) in setup().
# The suites run each program at its benchmark's size (bench/PROG) on every way of
# running it, and check each output against an independent reference: the CPU path's
# bytes where it ends in time, else at least 1,000 sampled rows recomputed exactly in
# numpy (tests/ref/scale_*.py), and invariants over every line.
#
# ACCELKIT_SCALE_DRY=1: a development run on a machine without a GPU: sizes shrink
# (size BIG SMALL), gpu runs on the CPU, and the several-worker specs run the dividing
# code on the CPU (ACCELKIT_CPU_WORKERS=2 for the CUDA programs, two PoCL devices for
# the OpenCL ones). The references and invariants are the same.

ACCELKIT_ROOT="${ACCELKIT_ROOT:-$(cd "$BATS_TEST_DIRNAME/../.." && pwd)}"
load ../helpers

SCALE_DRY=${ACCELKIT_SCALE_DRY:-0}
# The data, made once a size and seed (a stamp file says which), kept between runs and
# parts: make check-scale's two parts in one call share it.
SCALE_DATA=${ACCELKIT_SCALE_DATA:-${TMPDIR:-/tmp}/accelkit-scale}
[ "$SCALE_DRY" = 1 ] && SCALE_DATA=$SCALE_DATA-dry
mkdir -p "$SCALE_DATA"
# The cores, whatever OMP_NUM_THREADS tests/run set (2 a suite, for the small suites);
# CPU reference runs take them all (-j), the GPU runs' own threads and numpy's BLAS a
# share (a part runs three or four suites at once).
SCALE_CORES=$(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc 2> /dev/null || echo 2)
SCALE_SHARE=$((SCALE_CORES / 3 > 2 ? SCALE_CORES / 3 : 2))
export OMP_NUM_THREADS=$SCALE_SHARE OPENBLAS_NUM_THREADS=$SCALE_SHARE MKL_NUM_THREADS=$SCALE_SHARE

# size BIG SMALL: BIG, or SMALL in a dry run.
size() {
	if [ "$SCALE_DRY" = 1 ]; then echo "$2"; else echo "$1"; fi
}

# many: the several-device spec: gpu:all where there are two GPUs, else gpu:0,0 (two
# workers sharing one GPU: the same dividing code).
many() {
	if [ "$SCALE_DRY" != 1 ] && [ "$(gpu_count)" -ge 2 ]; then echo gpu:all; else echo gpu:0,0; fi
}

# made NAME CMD...: runs CMD once to make the data NAME (a folder under $SCALE_DATA,
# passed to CMD as $SCALE_OUT), under a lock, unless a run with the same CMD made it.
made() {
	local name=$1 dir=$SCALE_DATA/$1
	shift
	mkdir -p "$dir"
	(
		flock 9
		if [ "$(cat "$dir/.stamp" 2> /dev/null)" != "$*" ]; then
			rm -f "$dir/.stamp"
			SCALE_OUT=$dir "$@" || exit 1
			printf '%s' "$*" > "$dir/.stamp"
		fi
	) 9> "$dir/.lock"
}

# on PROG SPEC ARGS...: PROG on the device SPEC (cpu, gpu, gpu:0,0, gpu:all), with
# ARGS; standard output as the program's. In a dry run gpu is the CPU and a several-GPU
# spec the CPU divided into two workers. Each run is timed into $BATS_TEST_TMPDIR/times.
on() {
	local prog=$1 spec=$2 t0 rc
	shift 2
	local -a env=()
	if [ "$SCALE_DRY" = 1 ]; then
		case $prog:$spec in
		clmatmul:gpu:* | clkmeans:gpu:*) env=(POCL_DEVICES="pthread pthread") spec=cpu:all ;;
		clmatmul:gpu | clkmeans:gpu) spec=cpu ;;
		*:gpu:*) env=(ACCELKIT_CPU_WORKERS=2) spec=cpu ;;
		*:gpu) spec=cpu ;;
		esac
	fi
	t0=$(date +%s%N)
	env "${env[@]}" "$prog" -d "$spec" "$@"
	rc=$?
	echo "${env[*]}${env:+ }$prog -d $spec $* ($(( ($(date +%s%N) - t0) / 1000000 )) ms, exit $rc)" \
	    >> "$BATS_TEST_TMPDIR/times"
	return $rc
}

# cpu_j: -j for a CPU reference run: every core (OMP_NUM_THREADS is a suite's share).
cpu_j() {
	echo "$SCALE_CORES"
}

# same REF OUT WHAT: OUT must hold REF's bytes; else says which run (WHAT) differed
# and where, and fails.
same() {
	if ! cmp -s "$1" "$2"; then
		echo "$3: output differs from the reference run's:" >&2
		cmp "$1" "$2" >&2 || true
		diff "$1" "$2" 2> /dev/null | head -n 10 >&2 || true
		return 1
	fi
}

# scale_teardown: the run times, in the TAP output's comments when a test fails, and
# in $ACCELKIT_SCALE_LOG when set (the table of what ran).
teardown() {
	if [ -s "$BATS_TEST_TMPDIR/times" ]; then
		sed 's/^/# /' "$BATS_TEST_TMPDIR/times" >&3 2> /dev/null || true
		[ -z "${ACCELKIT_SCALE_LOG:-}" ] || cat "$BATS_TEST_TMPDIR/times" >> "$ACCELKIT_SCALE_LOG"
	fi
}

# checked LABEL CMD...: a reference's check; its verdict goes into the TAP output (a
# comment), and on failure into the test's output too.
checked() {
	local label=$1 out rc=0
	shift
	out=$("$@" 2>&1) || rc=$?
	if [ $rc != 0 ]; then
		echo "${label:+$label: }$out"
		return 1
	fi
	echo "# ${label:+$label: }$out" >&3
}

# ref NAME ARGS...: tests/ref/scale_NAME.py.
ref() {
	local name=$1
	shift
	py "$REF/scale_$name.py" "$@"
}
