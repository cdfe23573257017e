#!/usr/bin/env bats
# The shared library (common/) through its test driver, build/test/acctest:
# dense text and NPY reading and writing, streaming, number parsing, output
# checking, and device set-up. References: numpy (via py) and literal values.

setup() {
	load helpers
	cd "$BATS_TEST_TMPDIR"
}

# npy FILE DTYPE SHAPE [fortran] [version]: write an NPY file with numpy, values i*0.25
npy() {
	py - "$@" <<'PY'
import sys, numpy as np
path, dt, shape = sys.argv[1], sys.argv[2], tuple(int(x) for x in sys.argv[3].split(',') if x)
a = (np.arange(int(np.prod(shape)) if shape else 1) * 0.25 - 1).astype(dt).reshape(shape)
order = 'F' if len(sys.argv) > 4 and sys.argv[4] == 'fortran' else 'C'
version = (2, 0) if len(sys.argv) > 5 and sys.argv[5] == 'v2' else None
with open(path, 'wb') as f:
    np.lib.format.write_array(f, np.asarray(a, order=order), version=version)
PY
}

@test "text rows with blanks, tabs and commas read as one matrix" {
	printf '1 2\t3\n4,5, 6\n  7 ,8\t, 9  \n' > m.txt
	run -0 acctest read m.txt
	assert_output "$(printf '1\t2\t3\n4\t5\t6\n7\t8\t9')"
}

@test "comments, blank lines and CRLF line ends are skipped" {
	printf '# header\r\n\r\n1 2 # trailing\r\n   \r\n3 4\r\n#end' > m.txt
	run -0 acctest read m.txt
	assert_output "$(printf '1\t2\n3\t4')"
}

@test "a last line without a newline is read" {
	printf '1 2\n3 4' > m.txt
	run -0 acctest read m.txt
	assert_line --index 1 "$(printf '3\t4')"
}

@test "a ragged row is an error naming its line" {
	printf '1 2 3\n\n4 5\n' > m.txt
	run -1 --separate-stderr acctest read m.txt
	assert_output ""
	assert_equal "$stderr" "acctest: m.txt:3: row has 2 columns, expected 3 as on line 1"
}

@test "a token that is not a number is an error naming line and column" {
	printf '1 2\n3 x4\n' > m.txt
	run -1 --separate-stderr acctest read m.txt
	assert_equal "$stderr" "acctest: m.txt:2: column 2: not a number: 'x4'"
}

@test "an empty field between commas is an error" {
	printf '1,,2\n' > m.txt
	run -1 --separate-stderr acctest read m.txt
	assert_equal "$stderr" "acctest: m.txt:1: empty field in column 2"
}

@test "NaN and Inf in text are errors unless allowed" {
	printf '1 2\n3 nan\n' > m.txt
	run -1 --separate-stderr acctest read m.txt
	assert_equal "$stderr" "acctest: m.txt:2: column 2: NaN is not allowed"
	printf '1 -inf\n' > i.txt
	run -1 --separate-stderr acctest read i.txt
	assert_equal "$stderr" "acctest: i.txt:1: column 2: Inf is not allowed"
	run -0 acctest read --nonfinite m.txt
	assert_line --index 1 "$(printf '3\tnan')"
}

@test "numbers read exactly as strtod reads them, then round to float32" {
	# Long mantissas, exponents, hex and denormals take different paths in the parser.
	vals='0.1 -2.5e-3 3.4028234e38 1e-45 123456789012345678901234 0x1.8p1 7.0000001 1e22 1e23 .5 -0 4.9406564584124654e-324 2.2250738585072011e-308 0.30000000000000004441'
	echo "$vals" > v.txt
	run -0 acctest read -t f64 -O npy -o out.npy v.txt
	run -0 py -c '
import sys, numpy as np
got = np.load("out.npy")
ref = np.array([float.fromhex(t) if "x" in t else float(t) for t in sys.argv[1].split()])
assert got.dtype == np.float64 and got.shape == (1, ref.size), (got.dtype, got.shape)
assert np.array_equal(got[0], ref), (got[0], ref)
print("ok")' "$vals"
	assert_output "ok"
}

@test "the number parser gives strtod's bits and end on 3 million numbers of every kind" {
	# acctest numcheck: parse_double (Clinger's fast path, the Eisel-Lemire step,
	# strtod for the rest) against glibc's strtod, on numbers as printf's forms and
	# numpy.savetxt write them, 1 to 25 digits with exponents of -400 to 400, exact ties
	# between two doubles and their neighbours, subnormals, hex, inf and nan spellings
	for seed in 1 2 3; do
		run -0 acctest numcheck 1000000 $seed
		assert_output "1000000 numbers, 0 differ"
	done
}

@test "numpy.savetxt's default %.18e reads as numpy.loadtxt reads it, float64 and float32" {
	py -c '
import numpy as np
r = np.random.default_rng(3)
a = np.concatenate([r.standard_normal((300, 8)), r.standard_normal((300, 8)) * 1e-300,
    r.standard_normal((300, 8)) * 1e300, r.uniform(-1e-310, 1e-310, (30, 8))])
np.savetxt("s.txt", a)
np.save("s.npy", np.loadtxt("s.txt"))'
	acctest read -t f64 -O npy -o got64.npy s.txt
	run -0 py -c '
import numpy as np
ref, got = np.load("s.npy"), np.load("got64.npy")
assert got.shape == ref.shape and np.array_equal(got.view(np.uint64), ref.view(np.uint64))
print("ok")'
	assert_output "ok"
	# read as float32, the rows past its range are an error: the first of them named
	run -1 --separate-stderr acctest read -O npy -o got32.npy s.txt
	assert_equal "$stderr" "$(printf 'acctest: s.txt:601: column 1: %s is out of range for float32' "$(sed -n 601p s.txt | cut -d' ' -f1 | xargs printf '%.17g')")"
	head -300 s.txt > n.txt
	acctest read -O npy -o got32.npy n.txt
	run -0 py -c '
import numpy as np
ref, got = np.load("s.npy")[:300].astype(np.float32), np.load("got32.npy")
assert got.dtype == np.float32 and np.array_equal(got.view(np.uint32), ref.view(np.uint32))
print("ok")'
	assert_output "ok"
}

@test "plain decimals of every digit count read exactly as strtod reads them" {
	# The inline fast path (numparse.h's parse_plain, eight digits at a time) against
	# Python's float, which rounds as strtod does: up to 19 significant digits, the
	# 2^53 mantissa bound on both sides, leading zeros, signs, a point at either end.
	run -0 py -c '
import random
r = random.Random(5)
toks = ["9007199254740992", "9007199254740993", "0.9007199254740993", "-900719925474099.3",
    "1234567890123456789", "12345678901234567890", "0.00000000000000000001", "1.", ".5",
    "-0.0", "+7.25", "00000000000000000001.5", "0.1234567890123456789", "3.", "-.0"]
for i in range(20000):
    n = r.randint(1, 21)
    d = "".join(r.choice("0123456789") for _ in range(n))
    k = r.randint(0, n)
    toks.append(r.choice(["", "-", "+"]) + d[:k] + "." + d[k:] if r.random() < 0.8 else d)
with open("p.txt", "w") as f:
    for i in range(0, len(toks), 5):
        f.write(" ".join(toks[i:i + 5]).ljust(5 * 26) + "\n" if len(toks[i:i + 5]) == 5 else "")
'
	run -0 acctest read -t f64 -O npy -o out.npy p.txt
	run -0 py -c '
import numpy as np
ref = np.array([[float(t) for t in l.split()] for l in open("p.txt")])
got = np.load("out.npy")
assert got.shape == ref.shape, (got.shape, ref.shape)
bad = np.nonzero(got.view(np.uint64) != ref.view(np.uint64))
assert bad[0].size == 0, (got[bad][:5], ref[bad][:5])
print("exact")'
	assert_output "exact"
}

@test "float32 text output reads back to the same bits" {
	run -0 py -c '
import numpy as np
r = np.random.default_rng(7)
a = np.concatenate([r.standard_normal(3000) * 10.0 ** r.integers(-40, 37, 3000),
    r.integers(-2**24, 2**24, 500), [0.1, 1/3, 1e-45, 3.4028235e38, 2**24 + 2, -0.0]])
np.savetxt("x.txt", a.astype(np.float32).astype(np.float64).reshape(-1, 2), fmt="%.17g")'
	run -0 acctest read -o y.txt x.txt
	run -0 py -c '
import numpy as np
x = np.loadtxt("x.txt").astype(np.float32)
y = np.loadtxt("y.txt", dtype=np.float32)
assert np.array_equal(x.view(np.uint32), y.view(np.uint32))
print("same")'
	assert_output "same"
}

@test "float output is the shortest text that reads back" {
	run -0 acctest f32 0.1 1 -2.5 1e-7 16777216 3.14159265 1e10 0.000123
	assert_output "$(printf '0.1\n1\n-2.5\n1e-07\n16777216\n3.1415927\n10000000000\n0.000123')"
	run -0 acctest f64 0.1 0.30000000000000004 1e100
	assert_output "$(printf '0.1\n0.30000000000000004\n1e+100')"
}

@test "float32 output reads back over the whole range, at most a digit longer than numpy's shortest" {
	py -c '
import numpy as np
r = np.random.default_rng(21)
bits = r.integers(0, 2**31 - 2**23, 20000, dtype=np.uint32)      # positive finite floats
v = np.concatenate([bits.view(np.float32), (r.standard_normal(20000) * 10.0 ** r.integers(-30, 30, 20000)).astype(np.float32)])
np.save("v.npy", v)
open("args", "w").write(" ".join(repr(float(x)) for x in v))'
	acctest f32 $(cat args) > got.txt
	run -0 py -c '
import numpy as np
v = np.load("v.npy")
got = open("got.txt").read().split()
assert len(got) == len(v)
def sig(t):
    m = t.lower().split("e")[0].lstrip("-").replace(".", "").lstrip("0")
    return len(m.rstrip("0")) or 1
longer = 0
for x, t in zip(v, got):
    assert np.float32(t) == x, (x, t)
    d = sig(t) - sig(np.format_float_scientific(x, unique=True))
    assert 0 <= d <= 1, (x, t)
    longer += d
# The candidates are roundings of the 9-digit string, not of the exact value: 13700.60546875
# gives "13700.6055", where 13700.605 would do. Rare, and never wrong.
assert longer < len(v) / 200, longer
print("ok")'
	assert_output "ok"
}

@test "fixed-point output matches printf, ties included" {
	args='0.5 0.1234565 -0.0000001 2.5e-7 0.9999995 123.456789 -3 0.0000005'
	run -0 acctest fixed 6 $args
	# Python formats the double exactly, as C's printf does (the shell's printf
	# parses into a long double and so rounds some ties differently).
	expected=$(py -c 'import sys; print("\n".join("%.6f" % float(v) for v in sys.argv[1:]))' $args)
	assert_output "$expected"
}

@test "NPY float32 and float64, versions 1 and 2, read like numpy" {
	npy a.npy '<f4' 3,4
	npy b.npy '<f8' 2,3 C v2
	run -0 acctest read a.npy
	assert_line --index 0 "$(printf -- '-1\t-0.75\t-0.5\t-0.25')"
	assert_line --index 2 "$(printf '1\t1.25\t1.5\t1.75')"
	run -0 acctest read b.npy
	assert_output "$(printf -- '-1\t-0.75\t-0.5\n-0.25\t0\t0.25')"
}

@test "a 1-D NPY reads as one column" {
	npy v.npy '<f4' 3
	run -0 acctest read v.npy
	assert_output "$(printf -- '-1\n-0.75\n-0.5')"
}

@test "NPY is recognised on standard input, and - is standard input" {
	npy a.npy '<f4' 2,2
	run -0 sh -c 'acctest read < a.npy'
	assert_output "$(printf -- '-1\t-0.75\n-0.5\t-0.25')"
	run -0 sh -c 'cat a.npy | acctest read -'
	assert_output "$(printf -- '-1\t-0.75\n-0.5\t-0.25')"
}

@test "NPY output is float32 NPY that numpy loads" {
	printf '1 2 3\n4 5 6.5\n' > m.txt
	run -0 acctest read -O npy -o m.npy m.txt
	run -0 py -c 'import numpy as np; a = np.load("m.npy"); print(a.dtype, a.shape, a.tolist())'
	assert_output "float32 (2, 3) [[1.0, 2.0, 3.0], [4.0, 5.0, 6.5]]"
}

@test "-o FILE.npy picks NPY output by its extension" {
	printf '1 2\n' | acctest read -o x.npy
	run -0 py -c 'import numpy as np; print(np.load("x.npy").tolist())'
	assert_output "[[1.0, 2.0]]"
}

@test "a truncated NPY is an error naming the byte offset" {
	npy a.npy '<f4' 100,10
	head -c 1000 a.npy > t.npy
	run -1 --separate-stderr acctest read t.npy
	assert_output ""
	assert_equal "$stderr" "acctest: t.npy: byte 128: NPY data is truncated: shape (100, 10) needs 4000 bytes, the file has 872"
}

@test "an NPY header that promises more than a pipe delivers is an error at its end" {
	npy a.npy '<f4' 100,10
	run -1 --separate-stderr sh -c 'head -c 1000 a.npy | acctest read'
	assert_output ""
	assert_regex "$stderr" "^acctest: \(standard input\): byte 1000: NPY data is truncated"
}

@test "an NPY header with a huge shape is refused before allocating" {
	py -c '
hdr = "{'"'"'descr'"'"': '"'"'<f4'"'"', '"'"'fortran_order'"'"': False, '"'"'shape'"'"': (4611686018427387904, 4611686018427387904), }"
hdr = hdr.ljust(118) + "\n"
open("h.npy", "wb").write(b"\x93NUMPY\x01\x00" + len(hdr).to_bytes(2, "little") + hdr.encode() + b"\0" * 16)'
	run -1 --separate-stderr acctest read h.npy
	assert_regex "$stderr" "NPY shape \(4611686018427387904, 4611686018427387904\) is too large"
	run -1 --separate-stderr sh -c 'acctest read < h.npy'
	assert_regex "$stderr" "is too large"
}

@test "Fortran-order NPY and unsupported dtypes are clear errors" {
	npy f.npy '<f4' 2,3 fortran
	run -1 --separate-stderr acctest read f.npy
	assert_regex "$stderr" "Fortran-order NPY is not supported"
	npy c.npy '>f4' 2,3
	run -1 --separate-stderr acctest read c.npy
	assert_regex "$stderr" "unsupported NPY dtype '>f4'"
}

@test "NaN inside NPY data is an error naming row and column" {
	py -c 'import numpy as np; a = np.ones((3, 4), np.float32); a[2, 1] = np.nan; np.save("n.npy", a)'
	run -1 --separate-stderr acctest read n.npy
	assert_equal "$stderr" "acctest: n.npy: byte 164: NaN in NPY data (row 3, column 2)"
}

@test "a number beyond float32's range is an error naming its line and column, unless read as float64" {
	# FLT_MAX is 3.40282347e38; numbers below 3.40282357e38 round to it, larger ones
	# to Inf (numpy: np.float32(3.4028236e38) is inf)
	printf '1 3.4028235e38\n-3.40282356e38 2\n' > ok.txt
	run -0 acctest read ok.txt
	assert_output "$(printf '1\t3.4028235e+38\n-3.4028235e+38\t2')"
	printf '1 2\n3 -3.4028236e38\n' > m.txt
	run -1 --separate-stderr acctest read m.txt
	assert_output ""
	assert_equal "$stderr" "acctest: m.txt:2: column 2: -3.4028236e+38 is out of range for float32"
	run -0 acctest read -t f64 m.txt
	assert_line --index 1 "$(printf '3\t-3.4028236e+38')"
	run -0 acctest read --nonfinite m.txt
	assert_line --index 1 "$(printf '3\t-inf')"
	# streaming reads keep float64 and narrow each row as it is read
	printf '1 2\n3 4\n5 1e39\n' > s.txt
	run -1 --separate-stderr acctest stream -n 2 s.txt
	assert_output "$(printf '1\t2\n3\t4')"
	assert_equal "$stderr" "acctest: s.txt:3: column 2: 1e+39 is out of range for float32"
	run -1 --separate-stderr acctest speech s.txt
	assert_equal "$stderr" "acctest: s.txt:3: column 2: 1e+39 is out of range for float32"
	printf 'u1 [\n 1 2\n 1e39 0 ]\n' > a.ark
	run -1 --separate-stderr acctest speech a.ark
	assert_equal "$stderr" "acctest: a.ark:3: column 1: 1e+39 is out of range for float32"
}

@test "an NPY float64 beyond float32's range read as float32 is an error naming its byte, row and column" {
	py -c 'import numpy as np; a = np.zeros((2, 3)); a[1, 2] = -1e300; np.save("d.npy", a)'
	run -1 --separate-stderr acctest read d.npy
	assert_output ""
	assert_equal "$stderr" "acctest: d.npy: byte 168: -1e+300 in NPY data is out of range for float32 (row 2, column 3)"
	run -1 --separate-stderr sh -c 'cat d.npy | acctest read'
	assert_equal "$stderr" "acctest: (standard input): byte 168: -1e+300 in NPY data is out of range for float32 (row 2, column 3)"
	run -0 acctest read -t f64 d.npy
	assert_line --index 1 "$(printf '0\t0\t-1e+300')"
	run -0 acctest read --nonfinite d.npy
	assert_line --index 1 "$(printf '0\t0\t-inf')"
}

@test "an NPY pipe whose header promises a huge row fails at the data's end, allocating as data arrives" {
	if [ "${SANITIZE:-0}" = 1 ]; then
		skip "AddressSanitizer's shadow memory does not fit under ulimit -v"
	fi
	# one row of 2^40 float64 (8 TiB), 16 bytes of data; 300 MB of address space
	py -c '
hdr = "{\"descr\": \"<f8\", \"fortran_order\": False, \"shape\": (1, 1099511627776), }"
hdr += " " * (117 - len(hdr)) + "\n"
open("h.npy", "wb").write(b"\x93NUMPY\x01\x00" + len(hdr).to_bytes(2, "little") + hdr.encode() + b"\0" * 16)'
	run -1 --separate-stderr sh -c 'ulimit -v 300000 && cat h.npy | acctest read -j 1'
	assert_equal "$stderr" "acctest: (standard input): byte 144: NPY data is truncated: the header promises 1 rows of 1099511627776, the data ends in row 1"
	run -1 --separate-stderr sh -c 'ulimit -v 300000 && acctest read -j 1 h.npy'
	assert_equal "$stderr" "acctest: h.npy: byte 128: NPY data is truncated: shape (1, 1099511627776) needs 8796093022208 bytes, the file has 16"
	# a pipe that holds what it promises is read whole, whatever its size
	py -c 'import numpy as np; np.save("b.npy", np.arange(600000, dtype=np.float64).reshape(3, 200000) / 8)'
	cat b.npy | acctest read -t f64 -O npy -o got.npy
	run -0 py -c 'import numpy as np; a, b = np.load("b.npy"), np.load("got.npy"); print(a.shape == b.shape and (a == b).all())'
	assert_output "True"
}

@test "NPY integer and bool arrays read as numpy's astype converts them, rounding to nearest" {
	# every integer dtype at its extremes and around 2^24 and 2^53, where float32 and
	# float64 must round; 1-D and 2-D; from a file and from a pipe; as float32 and float64
	py -c '
import numpy as np
vals = {}
for t in ["i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8"]:
    info = np.iinfo(t)
    v = [info.min, info.max, 0, 1, info.max - 1, info.min + 1, 7, 100]
    for b in (24, 25, 53, 54, 62):
        for d in (-3, -1, 1, 3):
            x = 2**b + d
            if info.min <= x <= info.max: v.append(x)
            if info.min <= -x <= info.max: v.append(-x)
    a = np.array(v + [0] * (-len(v) % 4), dtype=t)
    np.save("%s.npy" % t, a.reshape(-1, 4))
    np.save("%s.1d.npy" % t, a)
np.save("b1.npy", np.array([[True, False, True], [False, False, True]]))
# numpy writes int8 and uint8 as |i1 and |u1; <i1 and <u1 mean the same
for t in ["i1", "u1"]:
    d = open("%s.npy" % t, "rb").read()
    open("%s.lt.npy" % t, "wb").write(d.replace(b"|%s" % t.encode(), b"<%s" % t.encode(), 1))'
	for f in i1 i2 i4 i8 u1 u2 u4 u8 i1.lt u1.lt b1 i1.1d u8.1d i8.1d; do
		for t in f32 f64; do
			acctest read -t $t -O npy -o "$f.$t.npy" "$f.npy"
			cat "$f.npy" | acctest read -t $t -O npy -o "$f.$t.pipe.npy"
			run -0 py -c '
import sys, numpy as np
src, t = sys.argv[1], sys.argv[2]
a = np.load(src + ".npy")
want = a.astype(np.float32 if t == "f32" else np.float64).reshape(a.shape[0], -1)
for got in (np.load(src + "." + t + ".npy"), np.load(src + "." + t + ".pipe.npy")):
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape)
    assert (got.view(np.uint8) == want.view(np.uint8)).all(), (src, t, got, want)
print("same")' "$f" $t
			assert_output "same"
		done
	done
	# a bool byte that is not 0 is true, as numpy reads it
	py -c 'd = bytearray(open("b1.npy", "rb").read()); d[-1] = 7; open("b7.npy", "wb").write(d)'
	run -0 acctest read b7.npy
	assert_output "$(printf '1\t0\t1\n0\t0\t1')"
}

@test "NPY dtypes other than floats, integers and bools are clear errors" {
	for t in '>i4' '<f2' '<c8' '>f8' '<i16' '|b2' '<U4'; do
		py -c '
import sys
hdr = "{\"descr\": \"%s\", \"fortran_order\": False, \"shape\": (2,), }" % sys.argv[1]
hdr += " " * (117 - len(hdr)) + "\n"
open("x.npy", "wb").write(b"\x93NUMPY\x01\x00" + len(hdr).to_bytes(2, "little") + hdr.encode() + b"\0" * 64)' "$t"
		run -1 --separate-stderr acctest read x.npy
		assert_equal "$stderr" "acctest: x.npy: byte 10: unsupported NPY dtype '$t' (expected <f4, <f8, a little-endian integer such as <i8, or |b1)"
	done
}

@test "empty input is an empty matrix, not an error" {
	run -0 acctest read /dev/null
	assert_output ""
	printf '# only a comment\n\n' | acctest read
}

@test "a missing file is an error naming it" {
	run -1 --separate-stderr acctest read nosuch.txt
	assert_equal "$stderr" "acctest: nosuch.txt: No such file or directory"
}

@test "a line longer than the read buffer is read whole" {
	py -c 'import sys; sys.stdout.write(" ".join(["1.5"] * 3000000) + "\n" + " ".join(["2"] * 3000000) + "\n")' > wide.txt
	run -0 bash -c 'acctest read -O npy wide.txt | acctest read -O npy | cmp - <(acctest read -O npy wide.txt) && acctest read wide.txt | awk "{print NF, \$1, \$NF}"'
	assert_output "$(printf '3000000 1.5 1.5\n3000000 2 2')"
}

# randmat FILE ROWS COLS SEED: dense text with every separator, comments, blank lines,
# CRLF on some lines and no newline after the last; FILE.ref.npy is numpy's reading of
# it in float64 (tokens through Python's float, which rounds as strtod does).
randmat() {
	py - "$@" <<'PY'
import sys, random, numpy as np
path, rows, cols, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
r = random.Random(seed)
def num():
    k = r.random()
    if k < 0.3: return "%.7g" % r.gauss(0, 1)
    if k < 0.5: return repr(r.gauss(0, 1) * 10 ** r.randint(-30, 30))
    if k < 0.7: return str(r.randint(-10**6, 10**6))
    if k < 0.8: return "%.3e" % r.uniform(-1e5, 1e5)
    if k < 0.9: return "-0"
    return "%.25f" % r.random()
ref, out = [], ["# a header comment\n"]
for i in range(rows):
    if r.random() < 0.05:
        out.append(r.choice(["\n", "   \n", "# comment only\n", "\t\r\n"]))
    toks = [num() for _ in range(cols)]
    ref.append([float(t) for t in toks])
    line = toks[0]
    for t in toks[1:]:
        line += r.choice([" ", "\t", ",", " , ", "  \t"]) + t
    line = r.choice(["", " ", "\t"]) + line + r.choice(["", " ", " # trailing"])
    out.append(line + ("" if i == rows - 1 else r.choice(["\n", "\n", "\r\n"])))
open(path, "w", newline="").write("".join(out))
np.save(path + ".ref.npy", np.array(ref, dtype=np.float64).reshape(rows, cols))
PY
}

@test "the dense text reader reads the same matrix as numpy at any -j, chunk size, file or pipe" {
	randmat m.txt 3000 7 11
	acctest read -j 1 -t f64 -O npy -o ref64.npy m.txt
	run -0 py -c '
import numpy as np
got, ref = np.load("ref64.npy"), np.load("m.txt.ref.npy")
assert got.dtype == np.float64 and got.shape == ref.shape, (got.shape, ref.shape)
assert np.array_equal(got.view(np.uint64), ref.view(np.uint64))
print("ok")'
	assert_output "ok"
	acctest read -j 1 -O npy -o ref32.npy m.txt
	run -0 py -c '
import numpy as np
got, ref = np.load("ref32.npy"), np.load("m.txt.ref.npy").astype(np.float32)
assert got.dtype == np.float32 and np.array_equal(got.view(np.uint32), ref.view(np.uint32))
print("ok")'
	assert_output "ok"
	for bytes in 1 100 4096 1048576; do
		for j in 1 2 4; do
			ACCELKIT_CHUNK_BYTES=$bytes acctest read -j $j -O npy -o got.npy m.txt
			cmp ref32.npy got.npy
			cat m.txt | ACCELKIT_CHUNK_BYTES=$bytes acctest read -j $j -t f64 -O npy > got.npy
			cmp ref64.npy got.npy
		done
	done
	acctest read -j 1 m.txt > ref.txt
	ACCELKIT_CHUNK_BYTES=100 acctest read -j 4 m.txt | cmp ref.txt -
}

@test "the table reader reads the same matrix as numpy at any -j, chunk size, file or pipe" {
	# randmat's lines are 20 to 200 bytes: fields and commas fall across the 64-byte
	# blocks in which the table reader finds its fields (common/fieldscan.h)
	randmat m.txt 3000 7 12
	randmat w.txt 200 40 13
	for f in m.txt w.txt; do
		acctest read --table -j 1 -t f64 -O npy -o ref64.npy $f
		acctest read --table -j 1 -O npy -o ref32.npy $f
		run -0 py - $f <<'PY'
import sys, numpy as np
ref = np.load(sys.argv[1] + ".ref.npy")
g64, g32 = np.load("ref64.npy"), np.load("ref32.npy")
assert g64.dtype == np.float64 and g64.shape == ref.shape, (g64.shape, ref.shape)
assert np.array_equal(g64.view(np.uint64), ref.view(np.uint64))
assert g32.dtype == np.float32 and np.array_equal(g32.view(np.uint32), ref.astype(np.float32).view(np.uint32))
print("ok")
PY
		assert_output "ok"
		for bytes in 1 100 4096 1048576; do
			for j in 1 2 4 16; do
				ACCELKIT_CHUNK_BYTES=$bytes acctest read --table -j $j -O npy -o got.npy $f
				cmp ref32.npy got.npy
				cat $f | ACCELKIT_CHUNK_BYTES=$bytes acctest read --table -j $j -t f64 -O npy > got.npy
				cmp ref64.npy got.npy
			done
		done
	done
}

@test "the table reader finds fields and commas on every byte around a 64-byte block's edge" {
	# three fields, the second starting at bytes 56 to 72 of the line, with each kind of
	# separator before and after it; some lines end at byte 64 or 128 exactly
	py - <<'PY' > e.txt
import random
r = random.Random(5)
seps = [" ", "\t", ",", " ,", ", ", " , ", "  \t "]
out, ref = [], []
for start in range(50, 80):
    for sep in seps:
        a = "%.*f" % (r.randint(0, 9), r.uniform(-9, 9))
        b = "-" + "1" * r.randint(1, 19) if r.random() < 0.5 else "%.7g" % r.gauss(0, 9)
        c = "%.17g" % r.uniform(-1, 1)
        head = " " * max(0, start - len(sep) - len(a)) + a + sep
        line = head + b + r.choice(seps) + c
        for end in (64, 128):
            if len(line) < end and r.random() < 0.5:
                line += " " * (end - len(line))
        out.append(line + r.choice(["\n", "\r\n"]))
        ref.append([float(a), float(b), float(c)])
open("e.txt", "w", newline="").write("".join(out))
import numpy as np
np.save("e.ref.npy", np.array(ref))
PY
	run -0 sh -c 'awk "length(\$0) == 64 || length(\$0) == 128" e.txt | wc -l'
	[ "$output" -gt 20 ]
	for j in 1 2; do
		for bytes in 64 1048576; do
			ACCELKIT_CHUNK_BYTES=$bytes acctest read --table -j $j -t f64 -O npy -o got.npy e.txt
			run -0 py -c '
import numpy as np
got, ref = np.load("got.npy"), np.load("e.ref.npy")
assert got.shape == ref.shape and np.array_equal(got.view(np.uint64), ref.view(np.uint64)), got.shape
print("ok")'
			assert_output "ok"
		done
	done
}

@test "the table reader says which field is empty, wherever the comma falls in a block" {
	for pad in 0 58 60 61 62 63 64 65 126 127; do
		p=$(printf '%*s' $pad '')
		for row in "${p},1 2 3:1" "${p}1,,2 3:2" "${p}1, ,2 3:2" "${p}1 2 3,:4" "${p}1 2 3 , :4" \
		    "1 2${p},,3:3"; do
			printf '5 6 7\n%s\n' "${row%:*}" > bad.txt
			for j in 1 2; do
				run -1 --separate-stderr acctest read --table -j $j bad.txt
				assert_equal "$stderr" "acctest: bad.txt:2: empty field in column ${row##*:}"
			done
		done
	done
}

@test "rows the parsing threads write into the matrix land where one thread puts them" {
	# mat_read's rows go into the matrix from the threads that parse them
	# (common/rowplace.h): many small chunks, more threads than cores, file and pipe
	randmat big.txt 20000 5 21
	acctest read -j 1 -t f64 -O npy -o ref.npy big.txt
	run -0 py -c '
import numpy as np
got, ref = np.load("ref.npy"), np.load("big.txt.ref.npy")
assert got.shape == ref.shape and np.array_equal(got.view(np.uint64), ref.view(np.uint64))
print("ok")'
	assert_output "ok"
	for bytes in 300 3000 65536; do
		for j in 3 8 16; do
			ACCELKIT_CHUNK_BYTES=$bytes acctest read -j $j -t f64 -O npy -o got.npy big.txt
			cmp ref.npy got.npy
			cat big.txt | ACCELKIT_CHUNK_BYTES=$bytes acctest read -j $j -t f64 -O npy > got.npy
			cmp ref.npy got.npy
		done
	done
	# a ragged row near the end: the rows before it are not what is reported, its line is
	py -c '
import sys
lines = open("big.txt").read().split("\n")
lines[19000] = lines[19000] + " 1"
open("rag.txt", "w").write("\n".join(lines))'
	want=$(acctest read -j 1 rag.txt 2>&1 >/dev/null || true)
	[[ "$want" == "acctest: rag.txt:"*": row has 6 columns, expected 5 as on line 2" ]]
	for j in 4 16; do
		run -1 --separate-stderr env ACCELKIT_CHUNK_BYTES=500 acctest read -j $j rag.txt
		assert_equal "$stderr" "$want"
		assert_output ""
	done
}

@test "a bad dense line is reported as with -j 1, at, before and after a chunk boundary" {
	# 12-byte rows, chunks of 120 bytes: rows 10 and 11 end and start a chunk
	for bad in 1 9 10 11 12 33; do
		for kind in number ragged; do
			py -c '
import sys
bad, kind = int(sys.argv[1]), sys.argv[2]
rows = ["%3d 2.5 3.5\n" % i for i in range(1, 41)]
rows[bad - 1] = "  1 x.5 3.5\n" if kind == "number" else "  1 2.5    \n"
rows[35] = "  1 2.5 nan\n"    # a later error that must not be the one reported
sys.stdout.write("".join(rows))' $bad $kind > m.txt
			if [ $kind = number ]; then
				want="acctest: m.txt:$bad: column 2: not a number: 'x.5'"
			elif [ $bad = 1 ]; then
				want="acctest: m.txt:2: row has 3 columns, expected 2 as on line 1"
			else
				want="acctest: m.txt:$bad: row has 2 columns, expected 3 as on line 1"
			fi
			for bytes in 120 119 121 1048576; do
				for j in 1 2 4; do
					run -1 --separate-stderr env ACCELKIT_CHUNK_BYTES=$bytes acctest read -j $j m.txt
					assert_equal "$stderr" "$want"
					assert_output ""
				done
			done
			run -1 --separate-stderr sh -c "cat m.txt | ACCELKIT_CHUNK_BYTES=120 acctest read -j 4"
			assert_equal "$stderr" "${want/m.txt/(standard input)}"
		done
	done
}

@test "a dense row longer than a chunk, CRLF and a missing last newline, in tiny chunks" {
	py -c 'import sys; sys.stdout.write(" ".join(["0.5"] * 5000) + "\r\n" + ",".join(["-2"] * 5000) + "\r\n" + "\t".join(["1e3"] * 5000))' > w.txt
	run -0 sh -c 'ACCELKIT_CHUNK_BYTES=64 acctest read -j 3 w.txt | awk "{print NF, \$1, \$NF}"'
	assert_output "$(printf '5000 0.5 0.5\n5000 -2 -2\n5000 1000 1000')"
}

@test "streaming dense rows give the same chunks of rows at any -j and chunk size" {
	randmat s.txt 500 3 4
	acctest stream -n 7 s.txt > want.txt
	for bytes in 1 50 1048576; do
		for j in 1 2 4; do
			ACCELKIT_CHUNK_BYTES=$bytes acctest stream -j $j -n 7 s.txt | cmp want.txt -
			cat s.txt | ACCELKIT_CHUNK_BYTES=$bytes acctest stream -j $j -n 7 | cmp want.txt -
		done
	done
	run -0 sh -c 'grep -c -- "^--$" want.txt'
	assert_output 71
}

# same_at_any_j OUT CMD...: CMD (an acctest command line, its file last) gives OUT's
# bytes, stderr and status with -j 1, 2 and 4, chunks of 1, 57 and 4096 bytes and the
# default, from the file and from a pipe (stderr naming "(standard input)" then).
same_at_any_j() {
	local want=$1 rc=0 got
	shift
	local file=${!#}
	"$@" -j 1 > "$want" 2> "$want.err" || rc=$?
	sed "s|$file|(standard input)|" "$want.err" > "$want.perr"
	for bytes in 1 57 4096 ""; do
		for j in 1 2 4; do
			got=0
			ACCELKIT_CHUNK_BYTES=$bytes "$@" -j $j > "$want.got" 2> "$want.goterr" || got=$?
			[ "$got" = "$rc" ]
			cmp "$want" "$want.got"
			cmp "$want.err" "$want.goterr"
			got=0
			cat "$file" | ACCELKIT_CHUNK_BYTES=$bytes "${@:1:$#-1}" -j $j - > "$want.got" 2> "$want.goterr" || got=$?
			[ "$got" = "$rc" ]
			cmp "$want" "$want.got"
			cmp "$want.perr" "$want.goterr"
		done
	done
}

@test "libsvm reads as Python reads it, the same at any -j and chunk size" {
	py -c '
import random
r = random.Random(8)
out = []
for i in range(1500):
    toks = []
    if r.random() < 0.8: toks.append(r.choice(["1", "-1", "+1", "2,3", "0.25"]))
    if r.random() < 0.1: toks.append("qid:%d" % r.randint(0, 9))
    ix = 0
    for _ in range(r.randint(0, 12)):
        ix += r.randint(1, 300)
        toks.append("%d:%s" % (ix, r.choice(["%.7g" % r.gauss(0, 1), repr(r.gauss(0, 3)), str(r.randint(-99, 99))])))
    line = r.choice([" ", "\t", "  "]).join(toks)
    if r.random() < 0.05: line += " # comment 1:2"
    out.append(line + r.choice(["\n", "\n", "\r\n"]))
open("a.svm", "w", newline="").write("".join(out).rstrip("\n"))'
	same_at_any_j got.txt acctest svm a.svm
	run -0 py -c '
import numpy as np
lines = open("a.svm", newline="").read().split("\n")
got = open("got.txt").read().split("\n")
rows, cols, nnz = map(int, got[0].split())
assert rows == len(lines), (rows, len(lines))
maxix, n = -1, 0
for line, g in zip(lines, got[1:]):
    toks = line.rstrip("\r").split("#")[0].split()
    lab, ents = float("nan"), []
    for t in toks:
        if ":" not in t: lab = float(t.split(",")[0])
        elif not t.startswith("qid:"):
            i, v = t.split(":"); ents.append((int(i), np.float32(float(v))))
    glab, gents = g.split("\t")
    assert (np.isnan(lab) and glab == "nan") or float(glab) == lab, (line, g)
    gents = [(int(i), np.float32(v)) for i, v in (e.split(":") for e in gents.split())]
    assert gents == ents, (line, g)
    n += len(ents)
    maxix = max([maxix] + [i for i, _ in ents])
assert nnz == n and cols == maxix + 1, (nnz, n, cols, maxix)
print("ok")'
	assert_output "ok"
}

@test "float32's largest value, as the writers print it, is read from libsvm and MatrixMarket" {
	# 3.4028235e38 (fmt_f32 of FLT_MAX) is a little more than FLT_MAX, and rounds to it
	printf '1 1:3.4028235e38 2:-3.4028235e38\n' > a.svm
	run -0 acctest svm a.svm
	assert_output "$(printf '1 3 2\n1\t1:3.4028235e+38 2:-3.4028235e+38')"
	printf '%%%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 -3.4028235e38\n' > a.mtx
	run -0 acctest mm a.mtx
	assert_output "$(printf '1 1 1\n0:-3.4028235e+38')"
	printf '1 1:3.4028236e38\n' > b.svm
	run -1 --separate-stderr acctest svm b.svm
	assert_equal "$stderr" "acctest: b.svm:1: index 1: value '3.4028236e38' is out of range for a float"
}

@test "a bad libsvm line is reported as with -j 1, near chunk boundaries" {
	# 8-byte lines, the bad one where 57-byte chunks end and start
	for bad in 1 7 8 9 15 40; do
		py -c '
import sys
bad = int(sys.argv[1])
lines = ["1 %d:0.5" % (i % 10) for i in range(1, 61)]
lines[bad - 1] = "1 4:zz5"
lines[50] = "1 3:1 2:2"
sys.stdout.write("\n".join(lines) + "\n")' $bad > b.svm
		same_at_any_j out.txt acctest svm b.svm
		assert_equal "$(cat out.txt.err)" "acctest: b.svm:$bad: index 4: value 'zz5' is not a number"
	done
}

@test "MatrixMarket reads as Python reads it, the same at any -j and chunk size" {
	py -c '
import random
r = random.Random(9)
rows, cols = 300, 200
ents = r.sample([(i, j) for i in range(1, rows + 1) for j in range(1, cols + 1)], 3000)
out = ["%%MatrixMarket matrix coordinate real general", "% made by a test", "", "%d %d %d" % (rows, cols, len(ents))]
for i, j in ents:
    out.append("%d %d %s" % (i, j, r.choice(["%.7g" % r.gauss(0, 1), repr(r.gauss(0, 1)), "%d" % r.randint(-9, 9)])))
    if r.random() < 0.02: out.append(r.choice(["% comment", "", "  "]))
open("a.mtx", "w").write("\r\n".join(out) + "\r\n")
# scipy reads the same entries without comments, blank lines and CRLF (the newer
# scipy of the GPU machine refuses them, the reader skips them)
open("ref.mtx", "w").write("\n".join([out[0], out[3]] + [l for l in out[4:] if l.strip() and l[0] != "%"]) + "\n")
s = ["%%MatrixMarket matrix coordinate pattern symmetric", "5 5 4", "1 1", "3 1", "5 2", "4 4"]
open("s.mtx", "w").write("\n".join(s))'
	same_at_any_j got.txt acctest mm a.mtx
	run -0 py -W ignore::DeprecationWarning -c '
import numpy as np, scipy.io
ref = scipy.io.mmread("ref.mtx").tocsr()
ref.sort_indices()
got = open("got.txt").read().split("\n")
assert got[0] == "%d %d %d" % (ref.shape[0], ref.shape[1], ref.nnz), got[0]
for i in range(ref.shape[0]):
    a, b = ref.indptr[i], ref.indptr[i + 1]
    want = [(int(c), np.float32(v)) for c, v in zip(ref.indices[a:b], ref.data[a:b])]
    have = [(int(c), np.float32(v)) for c, v in (e.split(":") for e in got[i + 1].split())]
    assert want == have, (i, want, have)
print("ok")'
	assert_output "ok"
	same_at_any_j got.txt acctest mm s.mtx
	assert_equal "$(cat got.txt)" "$(printf '5 5 6\n0:1 2:1\n4:1\n0:1\n3:1\n1:1')"
}

@test "a bad MatrixMarket entry is reported as with -j 1, near chunk boundaries" {
	# 6-byte entry lines after a 52-byte banner and size line
	for bad in 1 2 3 10 11 12 30; do
		for kind in value count; do
			py -c '
import sys
bad, kind = int(sys.argv[1]), sys.argv[2]
n = 40 if kind == "value" else bad - 1
lines = ["%%MatrixMarket matrix coordinate real general", "40 1 %-3d" % n]
lines += ["%d 1 %d" % (i % 10 + 1, i % 10) for i in range(40)]
lines[bad + 1] = "1 1 z" if kind == "value" else "1 1 1"
sys.stdout.write("\n".join(lines) + "\n")' $bad $kind > b.mtx
			same_at_any_j out.txt acctest mm b.mtx
			if [ $kind = value ]; then
				want="acctest: b.mtx:$((bad + 2)): value 'z' is not a number"
			else
				want="acctest: b.mtx:$((bad + 2)): more entries than the $((bad - 1)) the size line gives"
			fi
			assert_equal "$(cat out.txt.err)" "$want"
		done
	done
}

@test "A<TAB>B pairs read as Python reads them, the same at any -j and chunk size" {
	py -c '
import random
r = random.Random(4)
s = lambda: "".join(r.choice("ACGTN") for _ in range(r.randint(0, 60)))
open("p.txt", "w", newline="").write("".join(s() + "\t" + s() + r.choice(["\n", "\r\n"]) for _ in range(2000)) + "AC\tGT")'
	same_at_any_j got.txt acctest pairs p.txt
	numbered p.txt | cmp - got.txt
}

@test "a bad pair line is reported as with -j 1, near chunk boundaries" {
	# 10-byte lines: line 6 ends at byte 60, chunks of 57 bytes end inside it
	for bad in 1 5 6 7 12 30; do
		for kind in none two; do
			py -c '
import sys
bad, kind = int(sys.argv[1]), sys.argv[2]
lines = ["ACGT\tACGT" for _ in range(40)]
lines[bad - 1] = "ACGTNACGT" if kind == "none" else "ACG\tT\tACG"
lines[35] = "no tab at all"
sys.stdout.write("\n".join(lines) + "\n")' $bad $kind > b.txt
			same_at_any_j out.txt acctest pairs b.txt
			if [ $kind = none ]; then
				assert_equal "$(cat out.txt.err)" "acctest: b.txt:$bad: no TAB in the line (expected A<TAB>B)"
			else
				assert_equal "$(cat out.txt.err)" "acctest: b.txt:$bad: more than one TAB in the line (expected A<TAB>B)"
			fi
			assert_equal "$(wc -l < out.txt)" $((bad - 1))
		done
	done
}

# seqs FILE: Python's records of a FASTA, FASTQ or plain file as "LINE<TAB>SEQUENCE"
seqs() {
	py - "$1" <<'PY'
import sys
lines = open(sys.argv[1], "rb").read().split(b"\n")
if lines[-1] == b"": lines.pop()
lines = [l[:-1] if l.endswith(b"\r") else l for l in lines]
out, first = sys.stdout.buffer, next((l for l in lines if l), b"")
if first.startswith(b">"):
    rec = None
    for i, l in enumerate(lines, 1):
        if l.startswith(b">"):
            if rec: out.write(b"%d\t%s\n" % (rec[0], b"".join(rec[1])))
            rec = (i, [])
        elif rec: rec[1].append(l)
    if rec: out.write(b"%d\t%s\n" % (rec[0], b"".join(rec[1])))
elif first.startswith(b"@"):
    i = 0
    while i < len(lines):
        if not lines[i]: i += 1; continue
        assert lines[i].startswith(b"@") and lines[i + 2].startswith(b"+") and len(lines[i + 1]) == len(lines[i + 3])
        out.write(b"%d\t%s\n" % (i + 1, lines[i + 1])); i += 4
else:
    for i, l in enumerate(lines, 1): out.write(b"%d\t%s\n" % (i, l))
PY
}

@test "FASTA, FASTQ and plain records read as Python reads them, the same at any -j and chunk size" {
	py -c '
import random
r = random.Random(6)
s = lambda n: "".join(r.choice("ACGT") for _ in range(n))
fa, fq = ["\n"], []
for i in range(600):
    fa.append(">r%d some description\n" % i)
    for _ in range(r.randint(0, 4)):
        fa.append(s(r.randint(0, 70)) + r.choice(["\n", "\r\n", "\n\n"]))
    n = r.randint(0, 150)
    fq.append("\n" * r.choice([0, 0, 0, 1]) + "@r%d\n%s\n+\n%s\n" % (i, s(n), "".join(r.choice("@>+I#!") for _ in range(n))))
fa.append(">long\n" + s(9000))    # longer than a chunk, no newline at the end
open("r.fa", "w", newline="").write("".join(fa))
open("r.fq", "w").write("".join(fq))
open("r.txt", "w").write("".join(s(r.randint(0, 40)) + "\n" for _ in range(900)))'
	for f in r.fa r.fq r.txt; do
		same_at_any_j got.txt acctest seq $f
		seqs $f | cmp - got.txt
	done
}

@test "a bad FASTQ or FASTA record is reported as with -j 1, near chunk boundaries" {
	# 12-byte records ("@r\nACG\n+\nIII\n"): the bad one where 57-byte chunks fall
	for bad in 1 4 5 6 20; do
		for kind in qual plus at short; do
			# a file starting with "r" is not FASTQ at all
			[ $kind = at ] && [ $bad = 1 ] && continue
			py -c '
import sys
bad, kind = int(sys.argv[1]), sys.argv[2]
recs = ["@r\nACG\n+\nIII\n"] * 30
recs[bad - 1] = {"qual": "@r\nACG\n+\nII\n", "plus": "@r\nACG\n-\nIII\n", "at": "r\nACG\n+\nIII\n",
    "short": "@r\nACG\n+\n"}[kind]
if kind == "short": recs = recs[:bad]
recs[-1:] = ["@r\nA\n+\nII\n"] if bad < len(recs) else recs[-1:]
sys.stdout.write("".join(recs))' $bad $kind > b.fq
			same_at_any_j out.txt acctest seq b.fq
			l=$((4 * bad - 3))
			case $kind in
			qual)	want="acctest: b.fq:$((l + 3)): quality line has 2 bytes but the sequence has 3" ;;
			plus)	want="acctest: b.fq:$((l + 2)): expected the FASTQ '+' line" ;;
			at)	want="acctest: b.fq:$l: expected a FASTQ record starting with '@'" ;;
			short)	want="acctest: b.fq:$l: FASTQ record ends before its quality line" ;;
			esac
			assert_equal "$(cat out.txt.err)" "$want"
			assert_equal "$(wc -l < out.txt)" $((bad - 1))
		done
	done
	# FASTA is known by its first byte past CRs and LFs, so only CRs can come before
	# its first header
	printf '\n\r\r>r\nAC\n' > d.fa
	same_at_any_j out.txt acctest seq d.fa
	assert_equal "$(cat out.txt.err)" "acctest: d.fa:2: sequence data before the first '>' header"
}

# arkcmp IN OUT [first]: the utterances of Kaldi text archive IN, as Python reads them
# (float32; only the first row of each with "first"), are those of OUT.
arkcmp() {
	py - "$@" <<'PY'
import re, sys, numpy as np
def read(path, first=False):
    utts, key, rows = [], None, None
    for line in open(path, newline="").read().split("\n"):
        line = line.rstrip("\r")
        if key is None:
            if not line.strip(): continue
            key, rest = line.split(None, 1)
            assert rest.lstrip().startswith("["), line
            line, rows = rest.lstrip()[1:], []
        end = "]" in line
        vals = [np.float32(float(t)) for t in line.split("]")[0].split()]
        if vals: rows.append(vals)
        if end:
            utts.append((key, rows[:1] if first else rows)); key = None
    return utts
a, b = read(sys.argv[1], len(sys.argv) > 3), read(sys.argv[2])
assert len(a) == len(b), (len(a), len(b))
for (ka, ra), (kb, rb) in zip(a, b):
    assert ka == kb and ra == rb, (ka, kb)
print("same")
PY
}

@test "Kaldi text archives read as Python reads them, the same at any -j and chunk size" {
	py -c '
import random
r = random.Random(12)
out = []
for u in range(300):
    dims, n = r.randint(1, 13), r.choice([0, 1, 2, 5, 30])
    rows = ["  " + " ".join(r.choice(["%.7g" % r.gauss(0, 1), str(r.randint(-9, 9)), repr(r.gauss(0, 5))]) for _ in range(dims)) for _ in range(n)]
    if r.random() < 0.1: out.append("")
    if n == 0: out.append("utt%d  [ ]" % u); continue
    if r.random() < 0.3:
        out.append("utt%d  [ %s" % (u, rows.pop(0).strip()) + (" ]" if not rows else ""))
    else:
        out.append("utt%d  [" % u)
    if rows: rows[-1] += " ]"
    out += rows
open("a.ark", "w", newline="").write("".join(l + r.choice(["\n", "\n", "\r\n"]) for l in out))'
	same_at_any_j got.ark acctest speech a.ark
	run -0 arkcmp a.ark got.ark
	assert_output "same"
	same_at_any_j got.ark acctest speech --first a.ark
	run -0 arkcmp a.ark got.ark first
	assert_output "same"
}

@test "a bad Kaldi archive line is reported as with -j 1, near chunk boundaries" {
	# 12-byte lines: "u1  [" headers, "  1 2 3" rows, "  1 2 3 ]" ends
	for bad in 2 4 5 6 10 17; do
		for kind in number width after head; do
			py -c '
import sys
bad, kind = int(sys.argv[1]), sys.argv[2]
lines = []
for u in range(8):
    lines += ["u%d         [" % u, "  1   2   3", "  4   5   6", "  7   8   9 ]"]
if lines[bad - 1].endswith("["):
    lines[bad - 1] = {"head": "u9          ", "number": "u9   [ 1 x2", "width": "u9   [ 1 2 ", "after": "u9 [ 1 2 ]x"}[kind]
else:
    lines[bad - 1] = {"number": "  1   x2  3", "width": "  1   2    ", "after": "  7   8 ]  x", "head": "  1 2 3 ] ]"}[kind]
sys.stdout.write("\n".join(lines) + "\n")' $bad $kind > b.ark
			same_at_any_j out.ark acctest speech b.ark
			# a matrix's first row fixes its width: a short one shows on the next row
			want=$bad
			[ $kind = width ] && [ $((bad % 4)) = 1 -o $((bad % 4)) = 2 ] && want=$((bad + 1))
			[ "$(cut -d: -f3 out.ark.err)" = "$want" ]
		done
	done
	printf 'a [\n 1 2\n 3 4\n' > c.ark
	same_at_any_j out.ark acctest speech c.ark
	assert_equal "$(cat out.ark.err)" "acctest: c.ark:3: the archive ends inside the matrix of 'a' (no ']')"
	printf 'a [\n 1 2 ] x\n' > d.ark
	same_at_any_j out.ark acctest speech d.ark
	assert_equal "$(cat out.ark.err)" "acctest: d.ark:2: text after the ']' that ends the matrix of 'a'"
	printf 'a [ 1 2 ]\nb [\n 1 2\n 3\n' > e.ark
	same_at_any_j out.ark acctest speech e.ark
	assert_equal "$(cat out.ark.err)" "acctest: e.ark:4: row has 1 columns, expected 2 as on line 3 (utterance 'b')"
}

@test "streaming reads fixed-size chunks of rows, in order" {
	seq 1 10 | awk '{print $1, $1 * 2}' > s.txt
	run -0 acctest stream -n 4 s.txt
	assert_output "$(printf '1\t2\n2\t4\n3\t6\n4\t8\n--\n5\t10\n6\t12\n7\t14\n8\t16\n--\n9\t18\n10\t20')"
	npy s.npy '<f8' 5,2
	run -0 acctest stream -n 2 s.npy
	assert_output "$(printf -- '-1\t-0.75\n-0.5\t-0.25\n--\n0\t0.25\n0.5\t0.75\n--\n1\t1.25')"
}

@test "streaming starts output before the input ends" {
	# The writer holds the pipe open until the reader has answered the first chunk.
	mkfifo in out
	(printf '1 2\n3 4\n'; sleep 30) > in &
	writer=$!
	acctest stream -n 2 in > out &
	reader=$!
	run -0 timeout 10 head -n 2 out
	kill "$writer" "$reader" 2>/dev/null || true
	assert_output "$(printf '1\t2\n3\t4')"
}

@test "lines keep their bytes; CR before LF is dropped" {
	printf 'a b\r\n\xc3\xa9\tz\n\nlast' > l.txt
	run -0 acctest lines l.txt
	assert_output "$(printf '1\ta b\n2\t\xc3\xa9\tz\n3\t\n4\tlast')"
}

# ---- the chunked record engine (common/chunks.h), through acctest records ----

# numbered FILE: python's own reading of FILE's lines as "N<TAB>line" (CR before LF and
# a final line without LF as in_getline has them), the reference for acctest records.
numbered() {
	py - "$1" <<'PY'
import sys
data = open(sys.argv[1], 'rb').read()
lines = data.split(b'\n')
if lines and lines[-1] == b'':
    lines.pop()
out = sys.stdout.buffer
for i, l in enumerate(lines, 1):
    if l.endswith(b'\r'):
        l = l[:-1]
    out.write(b'%d\t%s\n' % (i, l))
PY
}

@test "the chunk engine hands lines back in order with their true numbers, at any chunk size and -j" {
	py -c '
import random
r = random.Random(5)
parts = []
for i in range(3000):
    n = r.choice([0, 1, 2, 5, 30, 80, 300])
    parts.append("".join(r.choice("ab c\t>@#,") for _ in range(n)) + r.choice(["\n", "\n", "\r\n"]))
parts.append("x" * 5000 + "\n")    # longer than a chunk
parts.append("last line without a newline")
open("l.txt", "w", newline="").write("".join(parts))'
	numbered l.txt > want.txt
	for bytes in 1 7 64 4096 1048576; do
		for j in 1 2 4; do
			ACCELKIT_CHUNK_BYTES=$bytes acctest records -j $j l.txt > got.txt
			cmp want.txt got.txt
			ACCELKIT_CHUNK_BYTES=$bytes acctest records -j $j < l.txt > got.txt
			cmp want.txt got.txt
			cat l.txt | ACCELKIT_CHUNK_BYTES=$bytes acctest records -j $j > got.txt
			cmp want.txt got.txt
		done
	done
	run -0 --separate-stderr env ACCELKIT_CHUNK_BYTES=64 acctest records -v -j 2 l.txt
	assert_regex "$stderr" "acctest: [0-9]{3,} chunks, 3002 lines"
}

@test "a slow consumer still gets the chunks in order" {
	seq 1 2000 > s.txt
	run -0 env ACCELKIT_CHUNK_BYTES=1000 acctest records -j 4 --slow 5 s.txt
	assert_output "$(numbered s.txt)"
}

@test "the threads read a regular file from where its input stands: after a byte-order mark, after bytes taken before, at any chunk size" {
	# From a regular file each thread reads its own chunks (chunks.c, in_pread): the
	# offsets must start where the input does.
	printf '\357\273\2771 2\n3 4\n5 6\n' > bom.txt
	printf '1 2\n3 4\n5 6\n7 8' > s.txt
	for bytes in 1 3 4 7 1048576; do
		for j in 1 3; do
			run -0 env ACCELKIT_CHUNK_BYTES=$bytes acctest read -j $j bom.txt
			assert_output "$(printf '1\t2\n3\t4\n5\t6')"
			run -0 sh -c "{ dd bs=4 count=1 of=/dev/null 2>/dev/null; ACCELKIT_CHUNK_BYTES=$bytes acctest read -j $j; } < s.txt"
			assert_output "$(printf '3\t4\n5\t6\n7\t8')"
		done
	done
}

@test "the engine reports the first bad line in input order, at, before and after a chunk boundary" {
	# 10-byte lines and 100-byte chunks: lines 10 and 11 are the last and first of two
	# chunks (99-byte chunks hold 9 lines, 101-byte ones 10).
	for bad in 1 9 10 11 12 35; do
		py -c '
import sys
bad = [int(x) for x in sys.argv[1:]]
sys.stdout.write("".join(("%09d" % i if i not in bad else "BAD%06d" % i) + "\n" for i in range(1, 60)))' $bad 47 > b.txt
		head -n $((bad - 1)) b.txt > good.txt
		for j in 1 2 4; do
			for bytes in 100 99 101 1048576; do
				run -1 --separate-stderr env ACCELKIT_CHUNK_BYTES=$bytes acctest records -j $j b.txt
				# from a regular file a chunk holds as many whole lines as fit
				assert_equal "$stderr" "acctest: b.txt:$bad: bad record (line $(( (bad - 1) % (bytes / 10) + 1 )) of its chunk)"
				assert_output "$(numbered good.txt)"
			done
			run -1 --separate-stderr sh -c "cat b.txt | ACCELKIT_CHUNK_BYTES=100 acctest records -j $j"
			assert_regex "$stderr" "^acctest: \(standard input\):$bad: bad record"
		done
	done
}

@test "the cut rules keep FASTA and FASTQ records whole in chunks of any size" {
	py -c '
import random
r = random.Random(3)
fa, fq = [], []
for i in range(400):
    fa.append(">s%d %s\n" % (i, "x" * r.randint(0, 20)))
    for _ in range(r.randint(0, 3)):
        fa.append("".join(r.choice("ACGT>@") for _ in range(r.randint(0, 70))) + "\n")
    n = r.randint(0, 90)
    fq.append("\n" * r.choice([0, 0, 1, 2]) + "@r%d\n" % i)
    fq.append("".join(r.choice("ACGT") for _ in range(n)) + "\n+\n")
    fq.append("".join(r.choice("@>+!#I") for _ in range(n)) + r.choice(["\n", "\r\n"]))
open("r.fa", "w").write("".join(fa))
open("r.fq", "w", newline="").write("".join(fq))'
	for bytes in 1 50 333 100000; do
		for j in 1 3; do
			ACCELKIT_CHUNK_BYTES=$bytes acctest records -j $j -r fasta r.fa > got.txt
			numbered r.fa | cmp - got.txt
			ACCELKIT_CHUNK_BYTES=$bytes acctest records -j $j -r fastq r.fq > got.txt
			numbered r.fq | cmp - got.txt
			cat r.fq | ACCELKIT_CHUNK_BYTES=$bytes acctest records -j $j -r fastq > got.txt
			numbered r.fq | cmp - got.txt
		done
	done
}

@test "a pipe's records come out before the input ends, and closing early does not wait for it" {
	mkfifo in out
	(printf '1\n2\n3\n'; sleep 30) > in &
	writer=$!
	ACCELKIT_CHUNK_BYTES=1048576 acctest records -j 4 in > out &
	reader=$!
	run -0 timeout 10 head -n 3 out
	kill "$writer" "$reader" 2>/dev/null || true
	assert_output "$(printf '1\t1\n2\t2\n3\t3')"
	# -n 2: the engine is closed while a thread still waits on the pipe (a FIFO of its
	# own: the killed reader above may still hold the first one open)
	mkfifo in2
	(printf '1\n2\n3\n'; sleep 30) > in2 &
	writer=$!
	run -0 timeout 10 acctest records -j 4 -n 2 in2
	kill "$writer" 2>/dev/null || true
	assert_output "$(printf '1\t1\n2\t2')"
}

@test "memory stays bounded however long the piped input" {
	run -0 sh -c 'yes "0123456789 abcdefghij 0123456789 abcdefghij" | head -c 150000000 |
	    /usr/bin/time -f "%M" acctest records -j 4 2>&1 >/dev/null'
	# 150 MB through the engine in a few MiB of chunks: the peak is far below the input
	[ "$output" -lt 65536 ]
}

@test "ACCELKIT_CHUNK_BYTES must be a size" {
	run -2 --separate-stderr env ACCELKIT_CHUNK_BYTES=lots acctest records /dev/null
	assert_regex "$stderr" "invalid value for ACCELKIT_CHUNK_BYTES: 'lots'"
}

# ---- ordered parallel formatting (out_par in common/output.h) ----

@test "the ordered writer gives the bytes of sequential formatting, at any -j and chunk size" {
	py -c '
import sys
for n in (0, 1, 5, 30001):
    with open("want%d.txt" % n, "w") as f:
        for i in range(n):
            v = repr(i / 4)
            f.write("%d\t%d\t%s\n" % (i, i * i, v[:-2] if v.endswith(".0") else v))'
	for n in 0 1 5 30001; do
		for per in 1 7 1000 100000; do
			for j in 1 2 4; do
				acctest par -j $j $n $per > got.txt
				cmp want$n.txt got.txt
			done
		done
	done
	acctest par -j 4 -o out.txt 30001 33
	cmp want30001.txt out.txt
}

@test "dense text output is the same at any -j, and a closed pipe ends it quietly" {
	py -c '
import numpy as np
r = np.random.default_rng(3)
np.save("m.npy", (r.standard_normal((20000, 39)) * 10.0 ** r.integers(-8, 8, (20000, 39))).astype(np.float32))'
	acctest read -j 1 m.npy > want.txt
	for j in 2 4; do
		acctest read -j $j m.npy | cmp want.txt -
	done
	run -0 py -c '
import numpy as np
assert np.array_equal(np.loadtxt("want.txt", dtype=np.float32).view(np.uint32), np.load("m.npy").view(np.uint32))
print("same")'
	assert_output "same"
	run --separate-stderr sh -c 'acctest read -j 4 m.npy | head -n 2'
	assert_output "$(head -n 2 want.txt)"
	assert_equal "$stderr" ""
}

# ---- pinned staging rings (common/clstaging.h, common/staging.h) ----

# ring_ok OUTPUT K CHUNKS: both directions used the K buffers in turn, CHUNKS each way.
ring_ok() {
	printf '%s\n' "$1" | awk -v k="$2" -v n="$3" '
		{ if ($2 != c[$1]++ || $3 >= k || (($1 in last) && $3 != (last[$1] + 1) % k)) bad = 1
		  last[$1] = $3 }
		END { exit bad || c["h2d"] != n || c["d2h"] != n }'
}

@test "the OpenCL staging ring copies a file to the device and back unchanged, buffers in turn under a slow consumer" {
	head -c 2500001 /dev/urandom > r.bin
	run -0 acctest stage-cl -k 3 --chunk 100000 --slow 2 r.bin back.bin
	cmp r.bin back.bin
	ring_ok "$output" 3 26
	run -0 acctest stage-cl -k 1 --chunk 1000000 r.bin back.bin
	cmp r.bin back.bin
	ring_ok "$output" 1 3
	run -0 acctest stage-cl -k 2 --chunk 2000000 r.bin back.bin
	cmp r.bin back.bin
	ring_ok "$output" 2 2
	: > empty.bin
	run -0 acctest stage-cl empty.bin back.bin
	assert_output ""
	cmp empty.bin back.bin
}

@test "the CUDA staging ring copies a file to the GPU and back unchanged through pinned buffers in turn" {
	require_gpu
	head -c 25000001 /dev/urandom > r.bin
	run -0 acctest stage-cuda -k 3 --chunk 1000000 --slow 2 r.bin back.bin
	cmp r.bin back.bin
	ring_ok "$output" 3 26
	run -0 acctest stage-cuda -k 2 --chunk 64M r.bin back.bin
	cmp r.bin back.bin
	ring_ok "$output" 2 1
}

@test "a write error is reported with exit status 1" {
	printf '1 2\n' > m.txt
	run -1 --separate-stderr sh -c 'acctest read m.txt > /dev/full'
	assert_equal "$stderr" "acctest: write error on standard output: No space left on device"
}

@test "a closed pipe ends the program quietly" {
	seq 1 2000000 > big.txt
	run --separate-stderr sh -c 'acctest read big.txt | head -n 1'
	assert_output "1"
	assert_equal "$stderr" ""
}

@test "a failed run leaves no half-written -o file behind" {
	seq 1 300000 > m.txt
	echo "x" >> m.txt
	run -1 acctest read -o out.txt m.txt
	[ ! -e out.txt ]
	run -0 sh -c 'ls | grep -c "out.txt.tmp" || true'
	assert_output "0"
}

@test "-o replaces an existing file only when the run succeeds" {
	echo old > out.txt
	printf '1 x\n' > bad.txt
	run -1 acctest read -o out.txt bad.txt
	assert_equal "$(cat out.txt)" "old"
	printf '5\n' | acctest read -o out.txt
	assert_equal "$(cat out.txt)" "5"
}

@test "integer options are checked for range and trailing garbage" {
	run -0 acctest int --top 42 1 100
	assert_output "42"
	run -2 --separate-stderr acctest int --top 42x 1 100
	assert_equal "$stderr" "$(printf "acctest: invalid value for --top: '42x' (expected an integer from 1 to 100)\nTry 'acctest --help' for more information.")"
	run -2 acctest int --top 0 1 100
	run -2 acctest int --top 99999999999999999999 1 100
	run -2 acctest int --top '' 1 100
}

@test "number and size options parse strictly" {
	run -0 acctest double --tol 1e-4
	assert_output "0.0001"
	run -2 acctest double --tol nan
	run -2 acctest double --tol 1.5.
	run -0 acctest size --max-device-mem 512M
	assert_output "536870912"
	run -0 acctest size --max-device-mem 2GiB
	assert_output "2147483648"
	run -2 --separate-stderr acctest size --max-device-mem 12Q
	assert_regex "$stderr" "invalid value for --max-device-mem: '12Q'"
	run -2 acctest size --max-device-mem -5
}

@test "a byte count with blanks before a minus sign is a usage error, not 2^64 - 5" {
	run -0 acctest size --max-device-mem ' 5'
	assert_output "5"
	run -0 acctest size --max-device-mem ' +5K'
	assert_output "5120"
	for v in ' -5' "$(printf '\t\t-5')" "$(printf '\n -1K')" '-0'; do
		run -2 --separate-stderr acctest size --max-device-mem "$v"
		assert_equal "$stderr" "$(printf "acctest: invalid value for --max-device-mem: '%s' (expected a byte count such as 512M or 2G)\nTry 'acctest --help' for more information." "$v")"
	done
}

@test "a number option too small for a double is its nearest double; one too large is refused" {
	run -0 acctest double --tol 1e-400 0 1
	assert_output "0"
	run -0 acctest double --tol 5e-324 0 1
	assert_output "4.9406564584124654e-324"
	run -2 acctest double --tol 1e999
	run -2 acctest double --tol -1e999
	run -0 acctest int --band ' -5' -10 10
	assert_output "-5"
}

@test "an unknown option and a missing argument are usage errors" {
	run -2 --separate-stderr acctest read --bogus
	assert_equal "$stderr" "$(printf "acctest: unrecognized option '--bogus'\nTry 'acctest --help' for more information.")"
	run -2 --separate-stderr acctest read -o
	assert_regex "$stderr" "option requires an argument"
}

@test "-O takes only text or npy" {
	run -2 --separate-stderr acctest read -O csv /dev/null
	assert_regex "$stderr" "invalid value for --output-format: 'csv' \(expected one of: text, npy\)"
}

@test "-v reports the phases' times on stderr, never on stdout" {
	printf '1 2\n' > m.txt
	run -0 --separate-stderr acctest read -v m.txt
	assert_output "$(printf '1\t2')"
	assert_regex "$stderr" "acctest: time read +[0-9.]+ ms"
	assert_regex "$stderr" "acctest: time write +[0-9.]+ ms"
}

@test "CUDA device specs: cpu always works, nonsense is a usage error" {
	run -0 acctest cuda -d cpu
	assert_output "cpu"
	run -2 --separate-stderr acctest cuda -d gpu:x
	assert_regex "$stderr" "invalid device 'gpu:x'"
	run -2 acctest cuda -d tpu
}

@test "CUDA auto uses the GPU when there is one, else the CPU" {
	run -0 env -u ACCELKIT_DEVICE acctest cuda
	if on_gpu; then
		assert_output --regexp '^gpu gpu:0 '
	else
		assert_output "cpu"
	fi
}

@test "asking for a GPU that is not there is exit 1 with the reason" {
	run -1 --separate-stderr acctest cuda -d gpu:63
	assert_regex "$stderr" "device 'gpu:63': (there is no GPU 63|no usable CUDA GPU found|GPU support was not compiled in)"
}

@test "the device comes from ACCELKIT_DEVICE when -d is not given" {
	run -2 --separate-stderr env ACCELKIT_DEVICE=bogus acctest cuda
	assert_regex "$stderr" "invalid device 'bogus'"
}

@test "an OpenCL kernel builds with -D options and computes on the chosen device" {
	run -0 acctest cl
	if on_gpu; then
		assert_output --regexp '^gpu '
	else
		assert_output --regexp '^cpu '
	fi
}

@test "OpenCL device specs: P:D, --platform and a missing device" {
	run -0 acctest cl -d 0:0
	run -1 --separate-stderr acctest cl -d 9:0
	assert_regex "$stderr" "device '9:0': no such OpenCL device"
	run -1 --separate-stderr acctest cl --platform no-such-platform -d auto
	assert_regex "$stderr" "no such OpenCL device on platforms matching no-such-platform"
	run -2 acctest cl -d 0:x
}

@test "ACCELKIT_KERNEL_DIR loads kernel sources from a folder" {
	mkdir k
	sed 's/y\[i\] += SCALE \* x\[i\]/y[i] += 2.0f * SCALE * x[i]/' "$ACCELKIT_ROOT/tests/acctest.cl" > k/acctest.cl
	run -1 --separate-stderr env ACCELKIT_KERNEL_DIR="$PWD/k" acctest cl
	assert_regex "$stderr" "OpenCL result wrong at 1: 7"
}

@test "a kernel that does not compile prints the build log and exits 1" {
	mkdir k
	echo '__kernel void axpy(int n) { this is not C; }' > k/acctest.cl
	run -1 --separate-stderr env ACCELKIT_KERNEL_DIR="$PWD/k" acctest cl
	assert_regex "$stderr" "acctest.cl: build log:"
	assert_regex "$stderr" "acctest.cl: build failed on .*CL_BUILD_PROGRAM_FAILURE"
}

# clx_build_sm90a's rewrite of NVVM's PTX (clmatmul's wgmma kernel): the //SM90A: marks
# deleted and sm_90 made sm_90a, against sed doing the same; PTX for anything but sm_90
# is refused. The rewritten program itself is built and run on Hopper (clmatmul.bats).
@test "PTX for sm_90 becomes sm_90a with its marked comments made code" {
	cat > p.ptx <<'EOF2'
//
// Generated by NVIDIA NVVM Compiler
.version 9.0
.target sm_90, texmode_independent
.address_size 64
	// begin inline asm
	//SM90A:wgmma.fence.sync.aligned;
	// end inline asm
	//SM90A:{ .reg .pred p; setp.ne.b32 p, %r1, 0; wgmma.mma_async.sync.aligned.m64n8k8.f32.tf32.tf32 {%f1, %f2, %f3, %f4}, %rd1, %rd2, p, 1, 1; }
	cp.async.commit_group; // SM90A: not a mark
EOF2
	run -0 acctest ptx90a p.ptx
	assert_output "$(sed -e 's|//SM90A:||g' -e 's|^\.target sm_90,|.target sm_90a,|' p.ptx)"
	assert_line --index 3 ".target sm_90a, texmode_independent"
	assert_line --index 6 "	wgmma.fence.sync.aligned;"
	refute_output --partial "//SM90A:"
	# the target without NVVM's suffix
	printf '.version 9.0\n.target sm_90\n//SM90A:wgmma.fence.sync.aligned;\n' > q.ptx
	run -0 acctest ptx90a q.ptx
	assert_output "$(printf '.version 9.0\n.target sm_90a\nwgmma.fence.sync.aligned;')"
	for t in "sm_80, texmode_independent" sm_90a sm_900 "sm_100a"; do
		printf '.version 9.0\n.target %s\n' "$t" > r.ptx
		run -1 --separate-stderr acctest ptx90a r.ptx
		assert_regex "$stderr" "r.ptx: not PTX for sm_90"
	done
}

@test "--list-devices lists the CPU and every OpenCL device" {
	run -0 acctest devices
	assert_line --index 0 --regexp '^cpu	[0-9]+ threads'
	assert_line --regexp '^[0-9]+:[0-9]+	cpu:0	'
	if on_gpu; then
		assert_line --regexp '^gpu:0	'
		assert_line --regexp '^[0-9]+:[0-9]+	gpu:0	NVIDIA'
	fi
}

@test "a tuning table picks the first row whose words all occur in the device, in any case" {
	run -0 acctest tune "gpu nvidia NVIDIA H200 sm_90" "h100" "gpu NVIDIA" ""
	assert_output 1
	run -0 acctest tune "gpu nvidia NVIDIA H100 80GB HBM3 sm_90" "h100" "gpu NVIDIA" ""
	assert_output 0
	run -0 acctest tune "cpu pocl cpu-haswell" "gpu nvidia" "sm_90" ""
	assert_output 2
}

@test "a tuning table without a catch-all row is an error, not a guess" {
	run -1 acctest tune "cpu pocl cpu-haswell" "gpu nvidia"
	assert_output --partial 'tuning table without a catch-all row'
}

# ---- the work engine (common/devwork.h), through acctest devwork on CPU threads ----
# (dw_open: a worker a device, with a maker thread or --push; --pool: dw_open_threads,
# the chunk engine's and the ordered writer's way, tested through them above too)

# squares N: the reference for acctest devwork, "k<TAB>k*k+1" for k < N, from Python.
squares() {
	py -c 'import sys; sys.stdout.write("".join("%d\t%d\n" % (k, k * k + 1) for k in range(int(sys.argv[1]))))' "$1"
}

@test "the device engine hands units back in input order whatever the workers' delays" {
	squares 300 > want.txt
	for w in 1 2 3 7; do
		for seed in 1 2; do
			acctest devwork -w $w -n 300 --seed $seed > got.txt
			cmp want.txt got.txt
			# the caller makes the units itself (dw_slot, dw_put)
			acctest devwork --push -w $w -n 300 --seed $seed > got.txt
			cmp want.txt got.txt
			# the workers make the units in turn (dw_open_threads)
			acctest devwork --pool -w $w -n 300 --seed $seed > got.txt
			cmp want.txt got.txt
		done
	done
	# more workers than units, a single unit, and none
	run -0 acctest devwork -w 5 -n 3
	assert_output "$(squares 3)"
	run -0 acctest devwork -w 2 -n 1
	assert_output "$(squares 1)"
	run -0 acctest devwork -w 3 -n 0
	assert_output ""
	run -0 acctest devwork --push -w 3 -n 0
	assert_output ""
	run -0 acctest devwork --pool -w 5 -n 3
	assert_output "$(squares 3)"
	run -0 acctest devwork --pool -w 2 -n 1
	assert_output "$(squares 1)"
	run -0 acctest devwork --pool -w 3 -n 0
	assert_output ""
}

@test "the faster worker takes more units, and -v gives each worker's share and busy time" {
	# worker 0 sleeps 20 ms a unit, worker 1 at most 2 ms
	run -0 --separate-stderr acctest devwork -v -w 2 -n 60 --slow-worker 0
	assert_output "$(squares 60)"
	assert_regex "$stderr" "acctest: worker:0 share [0-9]+% busy [0-9.]+ s \(units [0-9]+\)"
	local u0 u1
	u0=$(sed -n 's/.*worker:0 share.*(units \([0-9]*\))/\1/p' <<<"$stderr")
	u1=$(sed -n 's/.*worker:1 share.*(units \([0-9]*\))/\1/p' <<<"$stderr")
	(( u0 + u1 == 60 ))
	(( u1 > 2 * u0 ))
	# the same when the workers make the units themselves
	run -0 --separate-stderr acctest devwork --pool -v -w 2 -n 60 --slow-worker 0
	assert_output "$(squares 60)"
	u0=$(sed -n 's/.*worker:0 share.*(units \([0-9]*\))/\1/p' <<<"$stderr")
	u1=$(sed -n 's/.*worker:1 share.*(units \([0-9]*\))/\1/p' <<<"$stderr")
	(( u0 + u1 == 60 ))
	(( u1 > 2 * u0 ))
}

@test "a unit that fails is reported after every unit before it is out, and once" {
	for w in 1 2 4; do
		for k in 0 1 13 99; do
			for push in "" --push --pool; do
				run -1 --separate-stderr acctest devwork $push -w $w -n 100 --fail $k
				assert_output "$(squares $k)"
				assert_equal "$stderr" "acctest: unit $k: failed"
			done
		done
	done
}

@test "a device list under mpirun is dealt out among a host's ranks, as cards are dealt" {
	# the reference deals the list like cards: entry j to rank j % L; a rank left
	# without one takes entry r % n
	for n in 1 2 3 5 8; do
		for l in 1 2 3 4 9; do
			run -0 acctest deal "$n" "$l"
			want=$(awk -v n="$n" -v l="$l" 'BEGIN {
				for (j = 0; j < n; j++) got[j % l] = got[j % l] " " j
				for (r = 0; r < l; r++) print r ":" (r in got ? got[r] : " " r % n) }')
			[ "$output" = "$want" ] || { echo "n=$n l=$l: $output"; false; }
		done
	done
}

@test "an NPY file over 64 MiB is read in pieces on the threads: numpy's values at -j 1 and -j 3, a cut one named at its row" {
	py - "$BATS_TEST_TMPDIR" <<'PY'
import sys, numpy as np
t = sys.argv[1]
x = np.random.default_rng(5).standard_normal((70000, 256)).astype(np.float32)
np.save(t + "/big.npy", x)
PY
	local f=$BATS_TEST_TMPDIR/big.npy
	for j in 1 3; do
		acctest read -j $j -O npy -o "$BATS_TEST_TMPDIR/out$j.npy" "$f"
		py -c "import sys, numpy as np; a = np.load(sys.argv[1]); b = np.load(sys.argv[2]); sys.exit(0 if a.dtype == b.dtype and np.array_equal(a, b) else 1)" "$f" "$BATS_TEST_TMPDIR/out$j.npy"
	done
	# cut in the seventh 8 MiB piece: refused by the file's size before any read, and
	# from a pipe (no pieces there) at the row where the data ends: 50,000,000 bytes
	# are 12,500,000 floats, rows 1 to 48828 whole
	local hdr
	hdr=$(py -c "import sys; d = open(sys.argv[1], 'rb').read(12); print(10 + d[8] + 256 * d[9])" "$f")
	head -c $((hdr + 50000000)) "$f" > "$BATS_TEST_TMPDIR/cut.npy"
	run -1 --separate-stderr acctest read -j 3 -O npy -o /dev/null "$BATS_TEST_TMPDIR/cut.npy"
	assert_output ''
	[[ "$stderr" == *"NPY data is truncated: shape (70000, 256) needs 71680000 bytes, the file has 50000000"* ]]
	run -1 --separate-stderr sh -c 'cat "$1" | acctest read -j 3 -O npy -o /dev/null -' _ "$BATS_TEST_TMPDIR/cut.npy"
	[[ "$stderr" == *"NPY data is truncated: the header promises 70000 rows of 256, the data ends in row 48829"* ]]
}

@test "threads that die at once give one message, the first, and exit 1" {
	local i
	for i in 1 2 3 4 5 6 7 8 9 10; do
		run -1 --separate-stderr acctest dies 16
		assert_output ''
		[[ $stderr =~ ^acctest:\ thread\ [0-9]+:\ dies$ ]] ||
			fail "run $i: not one message: $stderr"
	done
}

# A GPU run's end leaves the driver's teardown to a child (common/detach.h), which the
# GPU machine's runs time; here, with ordinary files for the device's.
@test "detach_teardown: the child keeps only the named files, not the output's pipe, and ends with the parent" {
	: > "$T/nvidia0"
	: > "$T/other"
	run -0 --separate-stderr sh -c "'$ACCELKIT_BUILD/test/acctest' detach '$T/nvidia0' '$T/other' | cat"
	[ "${lines[0]}" = "keep" ] || fail "the child holds: '${lines[0]}' (want only the named file)"
	local pid=${lines[1]} i
	for i in $(seq 1 200); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.01
	done
	! kill -0 "$pid" 2>/dev/null || fail "the child $pid outlived its parent by 2 s"
}
