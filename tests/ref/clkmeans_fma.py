"""clkmeans_fma.py: rows whose nearest of two centroids only the kernels' arithmetic
decides: float64 squared distances summed column by column with a fused multiply-add
(s = fma(t, t, s), as PoCL's compiler contracts OpenCL C's sqdist) pick one centroid,
the same sums rounded twice (s + t * t) the other. For tests/clkmeans.bats: the native
host path must give PoCL's labels on them.

    clkmeans_fma.py N DIR   writes DIR/row_I.txt (one float32 row), DIR/cent_I.txt (two
                            float64 centroids) and prints, a line each, I and the label
                            the fused sums give
Plain Python (fractions for the exactly rounded fused step), a fixed seed."""
import random
import struct
import sys
from fractions import Fraction


def f32(v):
    return struct.unpack("f", struct.pack("f", v))[0]


def sq(x, c, fused):
    s = 0.0
    for xi, ci in zip(x, c):
        t = xi - ci
        s = float(Fraction(t) * Fraction(t) + Fraction(s)) if fused else s + t * t
    return s


def main():
    n, out = int(sys.argv[1]), sys.argv[2]
    rng = random.Random(1)
    d, found = 3, 0
    while found < n:
        x = [f32(rng.uniform(-1, 1)) for _ in range(d)]
        c1 = [rng.uniform(-1, 1) for _ in range(d)]
        r = sq(x, c1, False) ** 0.5
        v = [rng.gauss(0, 1) for _ in range(d)]
        norm = sum(t * t for t in v) ** 0.5
        c2 = [xi + vi / norm * r for xi, vi in zip(x, v)]
        a1, a2 = sq(x, c1, True), sq(x, c2, True)
        b1, b2 = sq(x, c1, False), sq(x, c2, False)
        lf, lp = int(a2 < a1), int(b2 < b1)	# the lower index among equals
        if lf == lp:
            continue
        with open("%s/row_%d.txt" % (out, found), "w") as f:
            f.write(" ".join("%.9g" % t for t in x) + "\n")
        with open("%s/cent_%d.txt" % (out, found), "w") as f:
            for c in (c1, c2):
                f.write(" ".join("%.17g" % t for t in c) + "\n")
        print(found, lf)
        found += 1


main()
