#!/usr/bin/env bats
# Bash completion (completion/accelkit.bash): options, their choices, devices and file
# names for each program, driven as bash drives it (COMP_LINE, COMP_POINT, COMP_WORDS
# split at COMP_WORDBREAKS, COMP_CWORD); checked against each program's --help and
# its own error messages so that the two cannot drift apart; and once through a real
# interactive bash and readline.

setup() {
	load helpers
	source "$ACCELKIT_ROOT/completion/accelkit.bash"
	PROGS=$(cd "$ACCELKIT_ROOT" && ls cmd/*.c | sed 's|cmd/\(.*\)\.c|\1|')
	# File-name cases complete in a folder of known names.
	cd "$BATS_TEST_TMPDIR"
	mkdir -p 'sub dir' models
	touch -- a.txt b.npy -notes 'sub dir/x' models/final.mdl
}

# comp LINE: the completions bash would offer with the cursor at the end of LINE, one a
# line, sorted. COMP_WORDS is split as bash splits it: at blanks, and with runs of
# COMP_WORDBREAKS characters (here = and :) as words of their own.
comp() {
	local line=$1 tok
	COMP_LINE=$line
	COMP_POINT=${#line}
	COMP_WORDS=()
	set -f
	for tok in $line; do
		while [[ -n $tok ]]; do
			[[ $tok =~ ^([=:]+)(.*)$ || $tok =~ ^([^=:]+)(.*)$ ]]
			COMP_WORDS+=("${BASH_REMATCH[1]}")
			tok=${BASH_REMATCH[2]}
		done
	done
	set +f
	[[ $line == *[[:space:]] ]] && COMP_WORDS+=("")
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	COMPREPLY=()
	_accelkit "${COMP_WORDS[0]}" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
	((${#COMPREPLY[@]} == 0)) || printf '%s\n' "${COMPREPLY[@]}" | LC_ALL=C sort
}

# lines WORD...: the words one a line, sorted, to compare with comp's output.
lines() {
	printf '%s\n' "$@" | LC_ALL=C sort
}

@test "docsim: options, --weight's and --format's values, files for -q" {
	run -0 comp "docsim --we"
	assert_output -- --weight
	run -0 comp "docsim --weight "
	assert_output "$(lines tfidf tf binary none)"
	run -0 comp "docsim --format=l"
	assert_output libsvm
	run -0 comp "docsim --precision s"
	assert_output single
	run -0 comp "docsim -q "
	assert_output "$(lines a.txt b.npy -notes 'sub dir' models)"
	run -0 comp "docsim -k "
	assert_output ""
}

@test "skyline: --prefer completes each item of its comma-separated list" {
	run -0 comp "skyline -p "
	assert_output "$(lines min max)"
	run -0 comp "skyline -p min,m"
	assert_output "$(lines min,min min,max)"
	run -0 comp "skyline --prefer=max,min,ma"
	assert_output "max,min,max"
	run -0 comp "skyline -Q sub"
	assert_output "sub dir"
	run -0 comp "skyline --c"
	assert_output -- --count
	run -0 comp "skyline -f "
	assert_output ""
	run -0 comp "skyline -t "
	assert_output ""
	run -0 comp "skyline --delimiter="
	assert_output ""
	run -0 comp "skyline --hea"
	assert_output -- --header
	run -0 comp "skyline --header "
	assert_output "$(lines a.txt b.npy -notes 'sub dir' models)"
}

@test "gmmscore: feature formats, modes, bundled short options, model files" {
	run -0 comp "gmmscore -f "
	assert_output "$(lines auto text npy htk ark)"
	run -0 comp "gmmscore --mode="
	assert_output "$(lines sum max)"
	# -v -f bundled: the last letter takes the argument.
	run -0 comp "gmmscore -vf h"
	assert_output htk
	run -0 comp "gmmscore -m models/"
	assert_output models/final.mdl
	run -0 comp "gmmscore --al"
	assert_output -- --all
}

@test "editdist4r: block sizes, algorithms, sequence files, options by prefix" {
	run -0 comp "editdist4r -t "
	assert_output "$(lines 1 2 3)"
	run -0 comp "editdist4r --algo "
	assert_output "$(lines auto 4r bp dp)"
	run -0 comp "editdist4r --al"
	assert_output "$(lines --algo --all-vs-all)"
	# getopt_long takes a unique prefix: so does the completion.
	run -0 comp "editdist4r --alg b"
	assert_output bp
	run -0 comp "editdist4r --mode "
	assert_output "$(lines global infix prefix)"
	run -0 comp "editdist4r -b a"
	assert_output a.txt
}

@test "clmatmul: precision, transfers and staging values, the C0 file" {
	run -0 comp "clmatmul --precision "
	assert_output "$(lines fp32 tf32)"
	run -0 comp "clmatmul --transfers="
	assert_output "$(lines auto rect packed)"
	run -0 comp "clmatmul --staging l"
	assert_output local
	run -0 comp "clmatmul --tile"
	assert_output "$(lines --tile --tile-k)"
	run -0 comp "clmatmul -c b"
	assert_output b.npy
	run -0 comp "clmatmul --platform "
	assert_output ""
}

@test "clkmeans: --init takes a method or a file, -O its formats, -C a file" {
	run -0 comp "clkmeans --init "
	assert_output "$(lines k-means++ random a.txt b.npy -notes 'sub dir' models)"
	run -0 comp "clkmeans --init=r"
	assert_output random
	run -0 comp "clkmeans -O "
	assert_output "$(lines text npy)"
	run -0 comp "clkmeans -C m"
	assert_output models
	run -0 comp "clkmeans -k"
	assert_output -- -k
	run -0 comp "clkmeans --wi"
	assert_output -- --with-rows
	run -0 comp "clkmeans -t "
	assert_output ""
	run -0 comp "clkmeans -f "
	assert_output ""
}

@test "-d offers auto, cpu, gpu, the devices --list-devices prints, and gpu:all where work divides" {
	local p want all
	for p in $PROGS; do
		case $p in
		gmmscore | editdist4r | docsim | skyline) all=gpu:all ;;
		clmatmul | clkmeans) all="gpu:all cpu:all" ;;
		*) all= ;;
		esac
		# The first field of each line, and an OpenCL device's cpu:N or gpu:N.
		want=$( (printf '%s\n' auto cpu gpu $all
			"$p" --list-devices | awk -F'\t' '{ print $1 } $2 ~ /^(cpu|gpu)(:[0-9]+)?$/ { print $2 }') |
			LC_ALL=C sort -u)
		run -0 comp "$p -d "
		assert_output "$want"
		run -0 comp "$p --device="
		assert_output "$want"
	done
}

@test "a device with a colon completes after the colon, as readline replaces it" {
	local want
	want=$( (echo cpu:all; clkmeans --list-devices | awk -F'\t' '{ print $1; print $2 }') |
		sed -n 's/^cpu://p' | LC_ALL=C sort -u)
	[ -n "$want" ] || fail "clkmeans lists no CPU device (make deps installs PoCL)"
	run -0 comp "clkmeans -d cpu:"
	assert_output "$want"
	run -0 comp "clkmeans --device=cpu:"
	assert_output "$want"
}

@test "after -- and for operands, only file names" {
	run -0 comp "docsim -- -"
	assert_output -- -notes
	run -0 comp "skyline -v "
	assert_output "$(lines a.txt b.npy -notes 'sub dir' models)"
	run -0 comp "clmatmul a.txt "
	assert_output "$(lines a.txt b.npy -notes 'sub dir' models)"
}

@test "the value of an option that takes one is never taken for an option" {
	# -o's argument may be -, and --alpha's a negative number.
	run -0 comp "docsim -o -"
	assert_output -- -notes
	run -0 comp "clmatmul --alpha -"
	assert_output ""
}

@test "no completion for a program it does not know" {
	run -0 comp "cat --w"
	assert_output ""
}

# help_longs PROG: the long options PROG's --help names.
help_longs() {
	"$1" --help | grep -oE -- '--[a-z0-9][a-z0-9-]*' | LC_ALL=C sort -u
}

# help_shorts PROG: the short options PROG's --help names (-x, as a word).
help_shorts() {
	"$1" --help | grep -oE -- '(^|[][ ,])-[a-zA-Z]([], ]|$)' | grep -oE -- '-[a-zA-Z]' | LC_ALL=C sort -u
}

@test "every long option in a program's --help is offered by its completion" {
	local p o offered
	for p in $PROGS; do
		offered=$(comp "$p --")
		for o in $(help_longs "$p"); do
			grep -qxF -- "$o" <<<"$offered" || fail "$p --help names $o; the completion does not offer it"
		done
	done
}

@test "every short option in a program's --help is offered by its completion" {
	local p o offered
	for p in $PROGS; do
		offered=$(comp "$p -")
		[ -n "$(help_shorts "$p")" ] || fail "$p --help names no short option"
		for o in $(help_shorts "$p"); do
			grep -qxF -- "$o" <<<"$offered" || fail "$p --help names $o; the completion does not offer it"
		done
	done
}

@test "every option the completion offers is one the program's --help names" {
	local p o longs shorts
	for p in $PROGS; do
		longs=$(help_longs "$p")
		shorts=$(help_shorts "$p")
		for o in $(comp "$p -"); do
			grep -qxF -- "$o" <<<"$longs"$'\n'"$shorts" ||
				fail "the completion offers $p $o, which $p --help does not name"
		done
	done
}

@test "each option's fixed choices are the ones the program accepts" {
	local p s l a offered want msg n=0
	for p in $PROGS; do
		while read -r s l a; do
			# Words only: not file names, devices, lists or free values.
			[[ -n $l && $a == *'|'* && $a != list:* && "|$a|" != *'|file|'* ]] || continue
			offered=$(comp "$p $l " | tr '\n' ' ')
			run -2 --separate-stderr "$p" "$l" no-such-value </dev/null
			msg=$stderr
			if [[ $msg =~ expected\ one\ of:\ ([^\)]*) ]]; then
				want=$(tr -d ' ' <<<"${BASH_REMATCH[1]}" | tr ',' '\n' | LC_ALL=C sort | tr '\n' ' ')
			elif [[ $msg =~ expected\ an\ integer\ from\ ([0-9]+)\ to\ ([0-9]+) ]]; then
				want=$(seq "${BASH_REMATCH[1]}" "${BASH_REMATCH[2]}" | LC_ALL=C sort | tr '\n' ' ')
			else
				fail "$p $l: cannot tell its choices from: $msg"
			fi
			[ "$offered" = "$want" ] || fail "$p $l: the completion offers '$offered', $p takes '$want'"
			n=$((n + 1))
		done < <(_accelkit_table "$p")
	done
	# -O of every program, and the program-specific ones.
	((n >= 15)) || fail "only $n options compared"
}

@test "in an interactive bash, TAB completes through readline" {
	# A pseudo-terminal drives bash -i: type, TAB, then print the line as completed.
	run -0 py - "$ACCELKIT_ROOT/completion/accelkit.bash" <<'EOF'
import os, pty, select, sys, time
cases = ["clkmeans --device=cpu:a", "docsim --weight=bi", "skyline -p min,ma",
         "editdist4r --alg", "gmmscore -m models/fi", "clkmeans --init k-"]
pid, fd = pty.fork()
if pid == 0:
    os.environ.update(PS1="$ ", INPUTRC="/dev/null")
    os.execvp("bash", ["bash", "--norc", "--noprofile", "-i"])
os.write(fd, ("source '%s'\n" % sys.argv[1]).encode())
out = b""

def results():
    return [l for l in out.decode(errors="replace").splitlines() if l.startswith("RESULT[")]

# Each case waits for the one before it to print; one deadline for all, generous for a
# loaded machine (30 s was not always enough under make check beside other work).
end = time.time() + 120
for i, c in enumerate(cases):
    # Ctrl-A, then echo the line between markers; Ctrl-E back to its end.
    os.write(fd, (c + "\t").encode())
    time.sleep(0.3)	# what the completion runs gets the terminal: no keys ahead of it
    os.write(fd, b'\x01echo "RESULT[" \x05 "]"\n')
    while len(results()) <= i and time.time() < end:
        if not select.select([fd], [], [], 1)[0]:
            continue
        try:
            b = os.read(fd, 4096)
        except OSError:
            break
        if not b:
            break
        out += b
os.write(fd, b"exit\n")
os.waitpid(pid, 0)
for line in results():
    print(line[len("RESULT[ "):-len(" ]")])
EOF
	assert_output "clkmeans --device=cpu:all
docsim --weight=binary
skyline -p min,max
editdist4r --algo
gmmscore -m models/final.mdl
clkmeans --init k-means++"
}
