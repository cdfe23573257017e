#!/usr/bin/env bats
# The manual: every program has a page, every page is mandoc-lint clean, and the
# overview page lists every program.

setup() {
	load helpers
	cd "$ACCELKIT_ROOT"
}

@test "every man page is mandoc -Tlint clean" {
	command -v mandoc >/dev/null || fail "mandoc is not installed (make deps installs it)"
	run -0 mandoc -Tlint -Wwarning $(ls man/*.1 2>/dev/null) man/accelkit.7
	assert_output ""
}

@test "every program has a man page, a test suite and a demo" {
	for c in cmd/*.c; do
		[ -e "$c" ] || continue
		p=$(basename "$c" .c)
		[ -f "man/$p.1" ] || fail "$p has no man/$p.1"
		[ -f "tests/$p.bats" ] || fail "$p has no tests/$p.bats"
		[ -f "testdata/$p/demo" ] || fail "$p has no testdata/$p/demo"
	done
}

@test "accelkit(7) names every program" {
	for c in cmd/*.c; do
		[ -e "$c" ] || continue
		p=$(basename "$c" .c)
		grep -q "^\.Xr $p 1" man/accelkit.7 || fail "accelkit.7 does not mention $p"
	done
}

@test "every program answers --help and --version on stdout with exit 0" {
	for c in cmd/*.c; do
		[ -e "$c" ] || continue
		p=$(basename "$c" .c)
		run -0 --separate-stderr "$p" --help
		assert_output --partial "$p"
		assert_equal "$stderr" ""
		run -0 "$p" --version
		assert_output --regexp "^$p \(accelkit\) [0-9]"
	done
}

@test "every program refuses an unknown option with exit 2 and the hint" {
	for c in cmd/*.c; do
		[ -e "$c" ] || continue
		p=$(basename "$c" .c)
		run -2 --separate-stderr "$p" --no-such-option
		assert_output ""
		[[ "$stderr" == *"Try '$p --help'"* ]] || fail "$p: no hint"
	done
}
