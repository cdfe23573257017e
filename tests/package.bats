#!/usr/bin/env bats
# The Debian package (packaging/mkdeb, what make deb runs): built from the programs
# under test, lintian-clean of errors, and whole when unpacked into a scratch root:
# every program runs from there, the manual pages and the completion are where man and
# bash-completion look. Also make install and uninstall into a DESTDIR.

setup_file() {
	load helpers
	cd "$ACCELKIT_ROOT"
	local d=$BATS_FILE_TMPDIR
	VERSION=$(sed -n 's/^VERSION *:= *//p' Makefile)
	export VERSION
	# One package and one lintian run for the whole suite.
	packaging/mkdeb "$ACCELKIT_BUILD" "$VERSION" > "$d/deb.path" 2> "$d/mkdeb.err" ||
		{ cat "$d/mkdeb.err" >&2; return 1; }
	DEB=$(cat "$d/deb.path")
	export DEB
	if command -v lintian >/dev/null; then
		lintian "$DEB" > "$d/lintian.out" 2>&1
		echo $? > "$d/lintian.rc"
	fi
	mkdir "$d/root"
	dpkg -x "$DEB" "$d/root"
}

setup() {
	load helpers
	cd "$ACCELKIT_ROOT"
	D=$BATS_FILE_TMPDIR
	R=$D/root
	PROGS=$(ls cmd/*.c | sed 's|cmd/\(.*\)\.c|\1|')
}

@test "packaging/mkdeb builds accelkit_VERSION_ARCH.deb" {
	assert_equal "$DEB" "$ACCELKIT_BUILD/accelkit_${VERSION}_$(dpkg --print-architecture).deb"
	run -0 dpkg-deb -f "$DEB" Package Version Architecture
	assert_output "Package: accelkit
Version: $VERSION
Architecture: $(dpkg --print-architecture)"
}

@test "lintian finds no errors in the package" {
	if [ ! -f "$D/lintian.rc" ]; then
		# The GPU machine has no lintian and no network; make check runs this test.
		on_gpu && skip "lintian is not on this GPU machine (make check covers it)"
		fail "lintian is not installed (make deps installs it)"
	fi
	run -1 grep '^E:' "$D/lintian.out"
	assert_output ""
	# Its exit status is 1 on errors only (and 0 with warnings).
	assert_equal "$(cat "$D/lintian.rc")" 0
}

@test "Depends comes from the programs' libraries, Recommends names PoCL" {
	run -0 dpkg-deb -f "$DEB" Depends
	assert_output --regexp '(^|, )libc6 \(>= [0-9.]+\)'
	assert_output --regexp '(^|, )libgomp1( \(>= [0-9.]+\))?(,|$)'
	assert_output --partial 'ocl-icd-libopencl1 | libopencl1'
	run -0 dpkg-deb -f "$DEB" Recommends
	assert_output pocl-opencl-icd
}

@test "a library no Debian package ships is named by mkdeb, every other one is in Depends" {
	local bin so pkgs depends
	depends=$(dpkg-deb -f "$DEB" Depends)
	for p in $PROGS; do
		for so in $(readelf -d "$R/usr/bin/$p" | sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p'); do
			if pkgs=$(dpkg -S "*/$so" 2>/dev/null); then
				# Some package that ships it (any architecture's) is depended on.
				local found=
				for pk in $(echo "$pkgs" | sed 's/[:,].*//' | sort -u); do
					[[ $depends == *"$pk"* ]] && found=1
				done
				# (or the loader finds it outside any package: CUDA's libOpenCL.so.1)
				[ -n "$found" ] || grep -q "warning: /.*/$so belongs to no Debian package" "$D/mkdeb.err" ||
					fail "$p needs $so ($pkgs), not in Depends: $depends"
			else
				grep -q "warning: $p needs $so, which no Debian package provides" "$D/mkdeb.err" ||
					fail "$p needs $so from outside Debian and mkdeb did not say so"
			fi
		done
	done
}

# libpath PROG: for a program that needs a library from outside Debian (mkdeb said so),
# the build's RUNPATH that the package dropped (where the CUDA toolkit's libraries are);
# nothing for the others, which must run with the system's loader path alone.
libpath() {
	grep -q "warning: $1 needs" "$D/mkdeb.err" || return 0
	readelf -d "$ACCELKIT_BUILD/bin/$1" | sed -n 's/.*(R[UN]*PATH).*\[\(.*\)\]$/\1/p'
}

@test "unpacked into a scratch root, every program answers --version" {
	for p in $PROGS; do
		[ -x "$R/usr/bin/$p" ] || fail "usr/bin/$p is missing"
		run -0 env LD_LIBRARY_PATH="$(libpath "$p")" "$R/usr/bin/$p" --version
		assert_output --regexp "^$p \(accelkit\) $VERSION"
	done
}

@test "the packaged programs compute: kitten to sitting is 3 edits, a 2x2 product" {
	run -0 --separate-stderr "$R/usr/bin/editdist4r" <<<$'kitten\tsitting'
	assert_output 3
	printf '1 2\n3 4\n' > "$BATS_TEST_TMPDIR/a"
	printf '5 6\n7 8\n' > "$BATS_TEST_TMPDIR/b"
	run -0 --separate-stderr "$R/usr/bin/clmatmul" "$BATS_TEST_TMPDIR/a" "$BATS_TEST_TMPDIR/b"
	assert_output $'19\t22\n43\t50'
}

@test "no packaged program keeps an RPATH or RUNPATH, and every one is stripped" {
	for p in $PROGS; do
		run -0 readelf -d "$R/usr/bin/$p"
		refute_output --regexp '\((RPATH|RUNPATH)\)'
		run -0 readelf -S "$R/usr/bin/$p"
		refute_output --partial '.symtab'
	done
}

@test "the manual pages are gzipped where man looks, and read as the sources" {
	for p in $PROGS; do
		cmp <(gzip -dc "$R/usr/share/man/man1/$p.1.gz") "man/$p.1" || fail "$p.1.gz differs"
		# (a minimized Ubuntu, as on the GPU machine, has a man that only says so)
		grep -q unminimize "$(command -v man)" 2>/dev/null && continue
		run -0 env MANPATH="$R/usr/share/man" man -w "$p"
		assert_output "$R/usr/share/man/man1/$p.1.gz"
	done
	cmp <(gzip -dc "$R/usr/share/man/man7/accelkit.7.gz") man/accelkit.7
}

@test "the bash completion is installed for every program and registers its function" {
	local c=$R/usr/share/bash-completion/completions
	cmp "$c/accelkit" completion/accelkit.bash
	for p in $PROGS; do
		[ "$(readlink "$c/$p")" = accelkit ] || fail "completions/$p is not a link to accelkit"
		run -0 bash --norc --noprofile -c "source '$c/$p' && complete -p $p"
		assert_output "complete -F _accelkit $p"
	done
}

@test "the documentation: README, a DEP-5 copyright with the MIT license, the changelog" {
	local doc=$R/usr/share/doc/accelkit
	cmp "$doc/README.md" README.md
	run -0 head -n 1 "$doc/copyright"
	assert_output "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/"
	run -0 grep -x 'License: MIT' "$doc/copyright"
	# The license paragraph is LICENSE's text from its permission notice on.
	cmp <(awk '/^License: MIT$/ { text = ""; next } { text = text $0 "\n" } END { printf "%s", text }' \
		"$doc/copyright" | sed 's/^ //; s/^\.$//') <(sed -n '/^Permission/,$p' LICENSE)
	run -0 sh -c "gzip -dc '$doc/changelog.gz' | dpkg-parsechangelog -l - -S Version"
	assert_output "$VERSION"
}

@test "make install and uninstall put programs, pages and completion under DESTDIR" {
	local dest=$BATS_TEST_TMPDIR/dest
	# -o all: install what this build holds, never rebuild it from inside a test.
	run -0 make -s -o all install DESTDIR="$dest" PREFIX=/usr BUILD="$ACCELKIT_BUILD"
	for p in $PROGS; do
		cmp "$dest/usr/bin/$p" "$ACCELKIT_BUILD/bin/$p"
		cmp "$dest/usr/share/man/man1/$p.1" "man/$p.1"
		[ "$(readlink "$dest/usr/share/bash-completion/completions/$p")" = accelkit ] ||
			fail "completions/$p is not a link to accelkit"
	done
	cmp "$dest/usr/share/bash-completion/completions/accelkit" completion/accelkit.bash
	if [ -e "$ACCELKIT_BUILD/lib/accelkit/accelkit-mpi.so" ]; then
		cmp "$dest/usr/lib/accelkit/accelkit-mpi.so" "$ACCELKIT_BUILD/lib/accelkit/accelkit-mpi.so"
	fi
	run -0 make -s uninstall DESTDIR="$dest" PREFIX=/usr BUILD="$ACCELKIT_BUILD"
	run -0 find "$dest" -type f -o -type l
	assert_output ""
}

@test "a build with MPI packages its plugin where the programs look, and its libmpi is a dependency" {
	[ -e "$ACCELKIT_BUILD/lib/accelkit/accelkit-mpi.so" ] || skip "this build has no MPI"
	[ -f "$R/usr/lib/accelkit/accelkit-mpi.so" ] || fail "usr/lib/accelkit/accelkit-mpi.so is missing"
	local so pk depends
	depends=$(dpkg-deb -f "$DEB" Depends)
	so=$(readelf -d "$R/usr/lib/accelkit/accelkit-mpi.so" | sed -n 's/.*(NEEDED).*\[\(libmpi[^]]*\)\]$/\1/p')
	[ -n "$so" ] || fail "the plugin needs no libmpi"
	pk=$(dpkg -S "*/$so" 2>/dev/null | sed 's/[:,].*//' | head -1)
	[ -z "$pk" ] || [[ $depends == *"$pk"* ]] || fail "$so ($pk) is not in Depends: $depends"
	# the packaged program under mpirun finds it beside itself
	if command -v mpirun >/dev/null; then
		OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 run -0 mpirun --oversubscribe -np 2 \
			"$R/usr/bin/skyline" "$TESTDATA/skyline/hotels.txt" </dev/null
		[ -n "$output" ] || fail "no skyline from the packaged program under mpirun"
	fi
}
