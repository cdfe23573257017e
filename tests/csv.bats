#!/usr/bin/env bats
# RFC 4180 CSV in the table readers (common/table.c: skyline, clkmeans's -f and
# --with-rows) with a delimiter (-t): quoted fields that hold the delimiter, doubled
# quotes and line breaks, against Python's csv module (tests/ref/csv_ref.py), in one
# chunk and in chunks of 64 bytes (records across every boundary), from files and pipes.

setup() {
	load helpers
	T=$BATS_TEST_TMPDIR
}

@test "skyline keeps the rows Python's csv module reads, printed as written: quoting, delimiters, CRLF" {
	for quoting in minimal nonnumeric all; do
		for crlf in 0 1; do
			for d in , '\t' ';'; do
				py "$REF/csv_ref.py" gen 400 "$((crlf + 7))" "$d" "$quoting" "$crlf" "$T/in.csv"
				py "$REF/csv_ref.py" skyline "$d" "$T/in.csv" >"$T/expected"
				[ "$(wc -l <"$T/expected")" -gt 5 ] || fail "too few skyline rows to tell"
				grep -q '""' "$T/in.csv" || fail "no doubled quote in the input"
				for cb in 64 1048576; do
					ACCELKIT_CHUNK_BYTES=$cb run -0 skyline -j 2 -t "$d" --header -f 2,3 "$T/in.csv"
					[ "$output" = "$(cat "$T/expected")" ] ||
						fail "$quoting crlf=$crlf -t '$d' chunks of $cb: differs from Python's csv"
				done
				ACCELKIT_CHUNK_BYTES=64 run -0 sh -c 'cat "$1" | skyline -j 2 -t "$2" --header -f 2,3' \
				    sh "$T/in.csv" "$d"
				[ "$output" = "$(cat "$T/expected")" ] || fail "$quoting crlf=$crlf -t '$d' from a pipe differs"
			done
		done
	done
}

@test "clkmeans --with-rows carries a quoted text column as written, one record a row" {
	py "$REF/csv_ref.py" gen 300 3 , minimal 0 "$T/in.csv"
	ACCELKIT_CHUNK_BYTES=64 run -0 clkmeans -k 3 -j 2 -t , --header -f 2,3 --with-rows "$T/in.csv"
	# the output is the input's records, each with ",LABEL" added at its end
	printf '%s\n' "$output" >"$T/out.csv"
	py - "$T/in.csv" "$T/out.csv" <<-'EOF'
	import csv, sys
	src = list(csv.reader(open(sys.argv[1], newline="", encoding="utf-8")))
	got = list(csv.reader(open(sys.argv[2], newline="", encoding="utf-8")))
	assert len(got) == len(src), (len(got), len(src))
	assert got[0][:-1] == src[0], got[0]
	for a, b in zip(got[1:], src[1:]):
	    assert a[:-1] == b and a[-1] in ("0", "1", "2"), (a, b)
	EOF
}

@test "a quoted number is a number; a quote inside an unquoted field is text" {
	printf 'name,x,y\n"a","1.5"  ,"2"\n5" screen,1,3\nb"c,3,1\n"d""e",2,2\n' >"$T/q.csv"
	run -0 skyline -t , --header -f 2,3 "$T/q.csv"
	assert_output "$(printf 'name,x,y\n"a","1.5"  ,"2"\n5" screen,1,3\nb"c,3,1\n')"
	# as in Python's csv module, a field is quoted only when '"' is its first byte
	printf 'name,x\nA, "1"\n' >"$T/blank.csv"
	run -1 skyline -t , --header -f 2 "$T/blank.csv"
	assert_output --partial "blank.csv:2: column 2: not a number: '\"1\"'"
	# without -t, quotes are not special (fields are runs of blanks or commas)
	printf '"1" 2\n' >"$T/nodelim.txt"
	run -1 skyline "$T/nodelim.txt"
	assert_output --partial "column 1: not a number: '\"1\"'"
}

@test "a header record whose quoted field holds a line break is one header record" {
	printf '"name\nof row",x,y\nA,1,2\nB,2,1\nC,3,3\n' >"$T/h.csv"
	run -0 skyline -t , --header -f 2,3 "$T/h.csv"
	assert_output "$(printf '"name\nof row",x,y\nA,1,2\nB,2,1\n')"
	run -0 skyline -t , --header -f 2,3 --index "$T/h.csv"
	assert_output "$(printf '1\n2')"
}

@test "bad quoting is an error naming the record's first line, whatever the chunks" {
	printf 'name,x\nA,1\n"multi\nline",2\n"open,3\nB,4\nC,5\n' >"$T/open.csv"
	printf 'name,x\nA,1\n"multi\nline",2\n"closed"x,3\n' >"$T/after.csv"
	for cb in 16 1048576; do
		ACCELKIT_CHUNK_BYTES=$cb run --separate-stderr -1 skyline -j 2 -t , --header -f 2 "$T/open.csv"
		assert_equal "$stderr" "skyline: $T/open.csv:5: column 1: a quoted field is not closed before the end of the input"
		assert_output ""
		ACCELKIT_CHUNK_BYTES=$cb run --separate-stderr -1 skyline -j 2 -t , --header -f 2 "$T/after.csv"
		assert_equal "$stderr" "skyline: $T/after.csv:5: column 1: text after the closing quote of a quoted field"
	done
	# a row after a multi-line record: its own line number
	printf 'name,x\n"a\nb\nc",1\nD,oops\n' >"$T/late.csv"
	run --separate-stderr -1 sh -c 'skyline -t , --header -f 2 < "$1"' sh "$T/late.csv"
	assert_equal "$stderr" "skyline: (standard input):5: column 2: not a number: 'oops'"
}

@test "plain delimited files read as before: no quote, no change" {
	printf 'name,x,y\nGrand Hotel,1,2\nB,2,1\n# a "comment\nC,3,3\n' >"$T/p.csv"
	run -0 skyline -t , --header -f 2,3 "$T/p.csv"
	assert_output "$(printf 'name,x,y\nGrand Hotel,1,2\nB,2,1\n')"
}
