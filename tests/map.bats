#!/usr/bin/env bats
# tools/map: the file map of each program, read from the files' own opening lines; every
# file it lists has one, so the map ARCHITECTURE.md points to stays true.

setup() {
	load helpers
	cd "$ACCELKIT_ROOT"
}

@test "every file of every program, common/ and the shared tools has an opening line" {
	run -0 tools/map --check
	refute_output --partial "(no opening line)"
	refute_output --partial "(no README)"
}

@test "a program's map lists each of its files once, with the purpose its first comment gives" {
	for c in cmd/*.c; do
		p=$(basename "$c" .c)
		run -0 tools/map "$p"
		for f in cmd/$p.c kernels/$p* man/$p.1 tests/$p.bats; do
			[ "$(grep -c "^$f " <<<"$output")" -eq 1 ] || fail "map $p lists $f $(grep -c "^$f " <<<"$output") times"
		done
	done
	run -0 tools/map skyline
	assert_line --regexp '^kernels/skyline_cpu\.c +the native CPU path \(OpenMP\) of the classic and spatial skylines\.$'
	assert_line --regexp '^man/skyline\.1 +rows that no other row dominates'
}

@test "a file without an opening line fails the check, by name" {
	d=$BATS_TEST_TMPDIR/tree
	mkdir -p "$d/tools" "$d/cmd" "$d/kernels" "$d/common" "$d/man"
	cp tools/map "$d/tools/"
	printf '/* prog.c: does one thing. More. */\nint main(void) { return 0; }\n' >"$d/cmd/prog.c"
	printf '.Nd does one thing\n' >"$d/man/prog.1"
	printf 'int prog_kernel(void);\n' >"$d/kernels/prog_gpu.h"
	printf '/* x.c: a shared piece.\n * Its second line. */\n' >"$d/common/x.c"
	run -1 "$d/tools/map" --check
	assert_line --regexp '^cmd/prog\.c +does one thing\.$'
	assert_line --regexp '^kernels/prog_gpu\.h +\(no opening line\)$'
	assert_line --regexp '^common/x\.c +a shared piece\.$'
	run -2 "$d/tools/map" nosuch
	assert_output --partial "map: no program 'nosuch'"
}
