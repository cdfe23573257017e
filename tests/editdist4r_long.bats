#!/usr/bin/env bats
# editdist4r_long: one long pair on the CPU (issue 36): the band's wide block steps
# (AVX2, AVX-512; ACCELKIT_EDITDIST4R_WORDS caps the width, so that every one this CPU
# has is run) and its threads (-j: the distance's two halves, the alignment's tasks),
# at the sizes they are for (200 kb to 1 Mb), against python3-edlib (NW, HW, SHW:
# tests/ref/editdist4r_modes.py expect) and by replaying every CIGAR (its check); every
# width and -j 1 and 2 give the same bytes. The runs name -d cpu, so make check-gpu
# runs them as they are.

bats_require_minimum_version 1.5.0

setup_file() {
	load helpers
	local d=$BATS_FILE_TMPDIR m
	pyhas edlib || return 0		# the tests fail saying so (need_edlib)
	py "$REF/editdist4r_long.py" pair 1000000 0.01 36 dna >"$d/mb.txt"
	py "$REF/editdist4r_long.py" pair 200000 0.10 37 dna >"$d/k200.txt"
	py "$REF/editdist4r_long.py" pair 300000 0.02 38 protein >"$d/prot.txt"
	cat "$d/mb.txt" "$d/k200.txt" "$d/prot.txt" >"$d/pairs.txt"
	py "$REF/editdist4r_long.py" window 60000 250000 0.03 39 mid >"$d/win.txt"
	py "$REF/editdist4r_long.py" window 80000 200000 0.05 40 0 >>"$d/win.txt"
	py "$REF/editdist4r_modes.py" expect global <"$d/pairs.txt" >"$d/pairs.global"
	for m in infix prefix; do
		cat "$d/pairs.txt" "$d/win.txt" >"$d/all.txt"
		py "$REF/editdist4r_modes.py" expect "$m" <"$d/all.txt" >"$d/all.$m"
	done
}

setup() {
	load helpers
	D=$BATS_FILE_TMPDIR
	MODES=$REF/editdist4r_modes.py
	pyhas edlib || fail "python3-edlib is missing (make deps installs it)"
}

# The widths to run: every one; on a CPU without AVX-512 (or AVX2) the wider settings
# run the widest it has, which the test still checks.
WIDTHS="64 256 512"

# ed W ARGS...: editdist4r -d cpu ARGS with the band's words capped at W bits
ed() {
	local w=$1
	shift
	ACCELKIT_EDITDIST4R_WORDS=$w editdist4r -d cpu "$@"
}

@test "every word width gives edlib's distances of 200 kb to 1 Mb pairs, DNA and protein, in every mode" {
	local w m
	for w in $WIDTHS; do
		run -0 ed "$w" -j 1 "$D/pairs.txt"
		diff <(printf '%s\n' "$output") "$D/pairs.global" || fail "global, $w-bit words"
		for m in infix prefix; do
			run -0 ed "$w" -j 1 --mode "$m" "$D/all.txt"
			diff <(printf '%s\n' "$output") "$D/all.$m" || fail "--mode $m, $w-bit words"
		done
	done
}

@test "-j 2 gives -j 1's bytes and edlib's distances in every mode, at every width" {
	local w m
	for w in $WIDTHS; do
		# one pair a run: a batch keeps a pair a thread, one pair takes the two
		for f in mb k200 prot; do
			run -0 ed "$w" -j 2 "$D/$f.txt"
			assert_output "$(ed "$w" -j 1 "$D/$f.txt")"
		done
		run -0 ed "$w" -j 2 "$D/pairs.txt"
		diff <(printf '%s\n' "$output") "$D/pairs.global" || fail "-j 2, $w-bit words"
		for m in infix prefix; do
			run -0 ed "$w" -j 2 --mode "$m" "$D/win.txt"
			diff <(printf '%s\n' "$output") <(tail -n 2 "$D/all.$m") ||
			    fail "--mode $m -j 2, $w-bit words"
		done
	done
}

@test "--path of a 1 Mb pair and of 200 kb at 10%: the CIGAR turns A into B at edlib's distance, the same bytes at every width and -j" {
	local w j f
	for f in mb k200; do
		ed 64 -j 1 --path "$D/$f.txt" >"$D/$f.ref.out"
		run -0 py "$MODES" check global "$D/$f.txt" "$D/$f.ref.out"
		diff <(cut -f 1 "$D/$f.ref.out") <(py "$MODES" expect global <"$D/$f.txt")
		for w in $WIDTHS; do
			for j in 1 2; do
				ed "$w" -j "$j" --path "$D/$f.txt" >"$D/$f.out"
				cmp "$D/$f.ref.out" "$D/$f.out" || fail "--path $f, $w-bit words, -j $j"
			done
		done
	done
}

@test "--path in every mode (protein, reads in windows): CIGARs replay at the distance's cost, the same bytes at every width and -j" {
	local w j m
	cat "$D/prot.txt" "$D/win.txt" >"$D/pw.txt"
	for m in global infix prefix; do
		ed 64 -j 1 --mode "$m" --path "$D/pw.txt" >"$D/pw.ref"
		run -0 py "$MODES" check "$m" "$D/pw.txt" "$D/pw.ref"
		for w in $WIDTHS; do
			for j in 1 2; do
				ed "$w" -j "$j" --mode "$m" --path "$D/pw.txt" >"$D/pw.out"
				cmp "$D/pw.ref" "$D/pw.out" || fail "--mode $m --path, $w-bit words, -j $j"
			done
		done
	done
}

@test "--max-dist at the distance keeps it and one less drops it, at every width and -j, in every mode" {
	local w j m d dw
	d=$(sed -n 2p "$D/pairs.global")	# 200 kb at 10%
	sed -n 2p "$D/pairs.txt" >"$D/one.txt"
	dw=$(tail -n 1 "$D/all.infix" | cut -f 1)
	tail -n 1 "$D/win.txt" >"$D/w1.txt"
	for w in $WIDTHS; do
		for j in 1 2; do
			run -0 ed "$w" -j "$j" -k "$d" "$D/one.txt"
			assert_output "$d"
			run -0 ed "$w" -j "$j" -k "$((d - 1))" "$D/one.txt"
			assert_output "-1"
			for m in infix prefix; do
				for k in "$dw" "$((dw - 1))" "$((dw * 2))"; do
					run -0 ed "$w" -j "$j" --mode "$m" -k "$k" "$D/w1.txt"
					assert_output "$(py "$MODES" expect "$m" "$k" <"$D/w1.txt")"
				done
			done
		done
	done
}

@test "300 random pairs of 257 to 8,000 symbols at every width: edlib's in every mode and with -k, and --path the same bytes, replayed" {
	local w m k
	py "$REF/editdist4r_long.py" random 41 300 >"$D/r.txt"
	for m in global infix prefix; do
		py "$MODES" expect "$m" <"$D/r.txt" >"$D/r.$m"
		for w in $WIDTHS; do
			run -0 ed "$w" --mode "$m" "$D/r.txt"
			diff <(printf '%s\n' "$output") "$D/r.$m" || fail "--mode $m, $w-bit words"
		done
		for k in 10 300; do
			py "$MODES" expect "$m" "$k" <"$D/r.txt" >"$D/r.k"
			for w in $WIDTHS; do
				run -0 ed "$w" --mode "$m" -k "$k" "$D/r.txt"
				diff <(printf '%s\n' "$output") "$D/r.k" || fail "--mode $m -k $k, $w-bit words"
			done
		done
		ed 64 --mode "$m" --path "$D/r.txt" >"$D/r.p64"
		run -0 py "$MODES" check "$m" "$D/r.txt" "$D/r.p64"
		for w in 256 512; do
			ed "$w" --mode "$m" --path "$D/r.txt" | cmp - "$D/r.p64" || fail "--path $m, $w-bit words"
		done
	done
}

@test "ACCELKIT_EDITDIST4R_WORDS other than 64, 256 or 512 is a usage error naming it" {
	run --separate-stderr -2 env ACCELKIT_EDITDIST4R_WORDS=128 editdist4r -d cpu "$D/k200.txt"
	[[ "$stderr" == *"ACCELKIT_EDITDIST4R_WORDS"* ]] || fail "$stderr"
}

@test "--path of the 1 Mb pair on -j 16 stays under 1 GB of address space (the threads' malloc arenas included)" {
	skip_if_asan "ulimit -v"
	run -0 timeout "$(limit 120)" sh -c 'ulimit -v 1000000 && editdist4r -d cpu -j 16 --path "$1" >"$2"' \
	    sh "$D/mb.txt" "$D/mb16.out"
	run -0 py "$MODES" check global "$D/mb.txt" "$D/mb16.out"
	diff <(cut -f 1 "$D/mb16.out") <(sed -n 1p "$D/pairs.global")
}

# auto_cells FILE ARGS...: the cells auto weighed for FILE (its -v line "auto: ...
# (N cells)"), or nothing where this build weighs none (no CUDA: the CPU at once)
auto_cells() {
	local f=$1
	shift
	editdist4r -d auto -v "$@" "$f" 2>&1 >/dev/null |
	    sed -n 's/.*auto: .*estimated .*(\([0-9.e+]*\) cells).*/\1/p'
}

@test "auto weighs a batch of long similar pairs by the band's share of their tables, one pair by its table" {
	py "$REF/editdist4r_long.py" pair 48502 0.01 41 dna >"$D/l1.txt"
	local c
	c=$(auto_cells "$D/l1.txt")
	[ -n "$c" ] || skip "this build does not weigh (no CUDA): the CPU at once"
	# one pair below ED_BAND_SAMPLE_CELLS: its whole table, unsampled (a sample
	# would cost more of its run than it could save)
	py -c "import sys; t = 48502 * len(open(sys.argv[2]).read().split('\t')[1].strip()); assert abs(float(sys.argv[1]) - t) < 0.01 * t, sys.argv[1]" "$c" "$D/l1.txt"
	# three (7e9 cells of tables): the band's, about a 60th of them (it holds the
	# distance's ~485 diagonals); before, the tables' sum, which put a hundred such
	# pairs on the GPU (1.29 s estimated) where the CPU's band took 175 ms on 2 threads
	cat "$D/l1.txt" "$D/l1.txt" "$D/l1.txt" >"$D/l3.txt"
	c=$(auto_cells "$D/l3.txt")
	py -c "import sys; c = float(sys.argv[1]); assert 3 * 48502 * 400 < c < 3 * 48502 * 48502 / 10, c" "$c"
	# and the distances stay edlib's
	py "$REF/editdist4r_modes.py" expect global <"$D/l3.txt" >"$D/l3.ref"
	run -0 editdist4r -d auto "$D/l3.txt"
	diff <(printf '%s\n' "$output") "$D/l3.ref"
}
