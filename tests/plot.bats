#!/usr/bin/env bats
# bench/plot: the benchmark tables of bench/README.md drawn as charts. What it would
# draw (--data) is checked against the tables read by awk, on the real README and on a
# small one made here; the PNGs are checked to be PNGs.

setup() {
	load helpers
	cd "$ACCELKIT_ROOT"
	T=$BATS_TEST_TMPDIR
	cat > "$T/README.md" <<'EOF'
# Benchmarks

## alpha (`bench/alpha`)

Per call, in ms:

| size | alpha ms | Foo ms | Foo/ours | Bar/ours |
|---|---:|---:|---:|---:|
| small | 2.0 | 3.0 | 1.50 | **0.25** |
| large | 1,000 | 12,000 | 12.0 | 2.5 |

### Start-up

| case | GPU whole | GPU compute | CPU whole | Baz / GPU whole |
|---|---:|---:|---:|---:|
| one | 400 | 20.5 | 30 | 7x |
| two | 500 | – | 40 | 1,605x |

### Seconds

| engine | kernels cold | wall s | GCUPS wall |
|---|---:|---:|---:|
| e1 | 1.5 ms | 0.75 | 30 |
EOF
}

@test "bench/plot --data gives every bar of a README's tables, times in ms" {
	run -0 bench/plot --data "$T/README.md"
	assert_output "$(printf '%s\t%s\t%s\t%s\t%s\n' \
		alpha-speedup 'alpha: Per call, in ms' small Foo 1.5 \
		alpha-speedup 'alpha: Per call, in ms' small Bar 0.25 \
		alpha-speedup 'alpha: Per call, in ms' large Foo 12 \
		alpha-speedup 'alpha: Per call, in ms' large Bar 2.5 \
		alpha-speedup Start-up one 'Baz / GPU whole' 7 \
		alpha-speedup Start-up two 'Baz / GPU whole' 1605 \
		alpha-time Start-up one 'kernel: GPU compute' 20.5 \
		alpha-time Start-up one 'whole process: GPU whole' 400 \
		alpha-time Seconds e1 'kernel: kernels cold' 1.5 \
		alpha-time Seconds e1 'whole process: wall s' 750)"
}

@test "a row added to a table is drawn: the numbers are parsed, not copied" {
	sed '/^| large /a | huge | 5 | 50 | 10.0 | 3.0 |' "$T/README.md" > "$T/more.md"
	run -0 bench/plot --data "$T/more.md"
	assert_line "$(printf 'alpha-speedup\talpha: Per call, in ms\thuge\tFoo\t10')"
	assert_line "$(printf 'alpha-speedup\talpha: Per call, in ms\thuge\tBar\t3')"
}

@test "every X/ours ratio in bench/README.md is on its program's speed-up chart" {
	# awk's reading: in each table, the columns headed "NAME/ours" or "NAME / ours".
	local want got
	want=$(awk -F'|' '
		/^## / { prog = ($0 ~ /\(`bench\//) ? $0 : ""; sub(/^## /, "", prog); sub(/ .*/, "", prog) }
		!/^\|/ { cols = ""; n = 0; next }
		n++ == 0 { delete name; for (i = 2; i < NF; i++) { h = $i; gsub(/^ +| +$/, "", h)
			if (h ~ / ?\/ ?ours$/) { sub(/ ?\/ ?ours$/, "", h); name[i] = h } } next }
		n == 2 { next }
		prog != "" { for (i in name) { v = $i; gsub(/[* ,x]/, "", v)
			if (v ~ /^[0-9.]+$/) printf "%s\t%s\t%g\n", prog, name[i], v } }
	' bench/README.md | LC_ALL=C sort)
	[ -n "$want" ] || fail "awk found no X/ours column in bench/README.md"
	got=$(bench/plot --data | awk -F'\t' '$1 ~ /-speedup$/ { sub(/-speedup$/, "", $1); print $1 "\t" $4 "\t" $5 }' |
		LC_ALL=C sort)
	# Every one of awk's is drawn (the program's own 1x row aside).
	run -0 comm -23 <(grep -v $'\t1$' <<<"$want") <(sort -u <<<"$got")
	assert_output ""
}

@test "bench/plot draws a PNG of each chart" {
	run -0 bench/plot "$T/README.md" "$T/charts"
	assert_output "$T/charts/alpha-speedup.png
$T/charts/alpha-time.png"
	for f in alpha-speedup alpha-time; do
		run -0 od -An -c -N 4 "$T/charts/$f.png"
		assert_output --regexp '^ +211 +P +N +G$'
	done
}

@test "a README without such tables is an error" {
	printf '# nothing\n\n| a | b |\n|---|---|\n| 1 | 2 |\n' > "$T/none.md"
	run -1 bench/plot --data "$T/none.md"
	assert_output --partial "no tables with ratios or times"
}
