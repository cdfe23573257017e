#!/usr/bin/env bats
# The progress line of long runs (common/progress.c): drawn in place on a terminal
# (script(1) gives the program one) once a run is past two seconds and erased at its
# end or before a message; with --progress into a file too, as whole lines; never
# otherwise into a pipe or a file. The runs are made long by input that arrives late
# (a pipe that sleeps), not by a slow machine.

setup() {
	load helpers
	T=$BATS_TEST_TMPDIR
	M=$TESTDATA/gmmscore/final.mdl.txt
	py - "$T/a.ark" <<-'EOF'
	import sys
	import numpy as np
	r = np.random.default_rng(1)
	with open(sys.argv[1], "w") as f:
	    for u in range(200):
	        f.write("utt%d  [\n" % u)
	        np.savetxt(f, r.standard_normal((500, 3)), fmt="%.4f")
	        f.write(" ]\n")
	EOF
	# the second half of the utterances arrives three seconds after the first
	head -n 50400 "$T/a.ark" >"$T/first"
	tail -n +50401 "$T/a.ark" >"$T/rest"
	[ "$(wc -l <"$T/first")" -eq 50400 ]
	gmmscore -d cpu -m "$M" "$T/a.ark" >"$T/expected"
}

late() {
	cat "$T/first"
	sleep 3
	cat "$T/rest"
}

@test "--progress into a file: a line of frames done and their rate, the results unchanged" {
	late | gmmscore -d cpu --progress -m "$M" >"$T/out" 2>"$T/err"
	cmp "$T/expected" "$T/out"
	run cat "$T/err"
	assert_line --regexp '^gmmscore: [0-9,]+ frames, [0-9,]+ frames/s$'
	# at least the first half was done when it was drawn
	n=$(head -n 1 "$T/err" | sed 's/gmmscore: \([0-9,]*\) frames.*/\1/' | tr -d ,)
	[ "$n" -ge 25000 ] && [ "$n" -le 100000 ] || fail "frames done: $n"
	refute_output --partial $'\r'
}

@test "without --progress nothing goes into a file or a pipe" {
	late | gmmscore -d cpu -m "$M" >"$T/out" 2>"$T/err"
	cmp "$T/expected" "$T/out"
	[ ! -s "$T/err" ] || fail "stderr: $(cat "$T/err")"
}

@test "on a terminal the line is drawn in place and erased at the end; not when results go there too" {
	command -v script >/dev/null || fail "script(1) is missing (bsdutils)"
	export M T
	run -0 script -qec 'sh -c "cat \$T/first; sleep 3; cat \$T/rest" | gmmscore -d cpu -m "$M" > "$T/out"' /dev/null </dev/null
	cmp "$T/expected" "$T/out"
	[[ "$output" == *$'\r'"gmmscore: "*" frames, "*" frames/s"$'\e[K'* ]] || fail "no line drawn: $(printf %q "$output")"
	[[ "$output" == *$'\r\e[K' ]] || fail "not erased at the end: $(printf %q "${output: -40}")"
	# results on the same terminal: no line among them
	run -0 script -qec 'sh -c "cat \$T/first; sleep 3; cat \$T/rest" | gmmscore -d cpu -m "$M"' /dev/null </dev/null
	[[ "$output" != *"frames/s"* ]] || fail "a progress line among the results"
}

@test "a message during a run starts a line of its own: the progress line is erased first" {
	export M T
	printf 'bad  [\n 1 2 x ]\n' >"$T/bad"
	run -1 script -qec 'sh -c "cat \$T/first; sleep 3; cat \$T/bad" | gmmscore -d cpu -m "$M" > /dev/null' /dev/null </dev/null
	[[ "$output" == *"frames/s"$'\e[K\r\e[K'"gmmscore: (standard input):"*"not a number"* ]] ||
	    fail "$(printf %q "$output")"
}

@test "docsim counts the pairs it has scored, of all it will score, with the time left" {
	py - "$T/x.npy" <<-'EOF'
	import sys
	import numpy as np
	np.save(sys.argv[1], np.random.default_rng(2).standard_normal((8000, 256)).astype(np.float32))
	EOF
	start=$(date +%s)
	docsim -d cpu -j 1 -k 3 --progress "$T/x.npy" >"$T/out" 2>"$T/err"
	took=$(($(date +%s) - start))
	docsim -d cpu -k 3 "$T/x.npy" | cmp - "$T/out"
	if [ "$took" -ge 4 ]; then
		run cat "$T/err"
		assert_line --regexp '^docsim: [0-9,]+ of 64,000,000 pairs \([0-9.]+%\), [0-9,]+ pairs/s, [0-9]+:[0-5][0-9] left$'
	fi
	# a run under two seconds draws nothing
	head -c 100000 "$TESTDATA/docsim/corpus.txt" >"$T/small.txt"
	docsim -d cpu --progress "$T/small.txt" >/dev/null 2>"$T/err"
	[ ! -s "$T/err" ] || fail "$(cat "$T/err")"
}
