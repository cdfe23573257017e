#!/usr/bin/env python3
"""Independent reference for clmatmul's tests: numpy in float64.

clmatmul_ref.py [--ta] [--tb] [--alpha X] [--beta X --c0 FILE] [--double] [--exact] A B C

Reads A and B (text or .npy) as clmatmul does (rounded to float32 unless --double),
computes R = alpha op(A) op(B) + beta C0 in float64 and checks clmatmul's result C
(text or .npy): the shapes must agree and every entry must satisfy
    |C - R| <= (K + 2) * eps * (|alpha| (|op(A)| |op(B)|) + |beta C0|)
with eps the float32 (or, with --double, float64) machine epsilon: the worst-case
rounding bound of a K-term dot product, doubled. Prints "ok" or what is wrong.
"""
import argparse
import sys

import numpy as np


def load(path, dtype):
    if path.endswith(".npy"):
        x = np.load(path)
    else:
        x = np.loadtxt(path, comments="#", ndmin=2, dtype=np.float64)
    if x.ndim == 1:
        x = x.reshape(-1, 1)
    return x.astype(dtype).astype(np.float64)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ta", action="store_true")
    ap.add_argument("--tb", action="store_true")
    ap.add_argument("--alpha", type=float, default=1.0)
    ap.add_argument("--beta", type=float, default=0.0)
    ap.add_argument("--c0")
    ap.add_argument("--double", action="store_true")
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("c")
    o = ap.parse_args()
    dt = np.float64 if o.double else np.float32
    eps = np.finfo(dt).eps
    a, b = load(o.a, dt), load(o.b, dt)
    a = a.T if o.ta else a
    b = b.T if o.tb else b
    r = o.alpha * (a @ b)
    g = abs(o.alpha) * (np.abs(a) @ np.abs(b))
    if o.c0:
        c0 = load(o.c0, dt)
        r += o.beta * c0
        g += np.abs(o.beta * c0)
    c = load(o.c, np.float64)
    if c.shape != r.shape:
        print("shape %s, expected %s" % (c.shape, r.shape))
        return 1
    tol = (a.shape[1] + 2) * eps * g
    err = np.abs(c - r)
    bad = ~(err <= tol)
    if bad.any():
        i, j = np.argwhere(bad)[0]
        print("C[%d][%d] = %.9g, expected %.9g (tolerance %.3g; %d entries off)"
              % (i, j, c[i, j], r[i, j], tol[i, j], bad.sum()))
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
