#!/usr/bin/env python3
"""Independent reference for clmatmul's tests: numpy in float64.

clmatmul_ref.py [--ta] [--tb] [--alpha X] [--beta X --c0 FILE] [--double | --tf32 |
                --tf32-inputs] A B C

Reads A and B (text or .npy) as clmatmul does (rounded to float32 unless --double),
computes R = alpha op(A) op(B) + beta C0 in float64 and checks clmatmul's result C
(text or .npy): the shapes must agree and every entry must satisfy
    |C - R| <= (eps_in + (K + 2) * eps) * (|alpha| (|op(A)| |op(B)|) + |beta C0|)
with eps the float32 (or, with --double, float64) machine epsilon and eps_in 0: the
worst-case rounding bound of a K-term dot product, doubled. Prints "ok" or what is
wrong.
--tf32: clmatmul --precision tf32's bound: eps_in = 2^-10 + 2^-22 (both inputs of a
product rounded to 11 significant bits), eps = 2^-22 (the tensor cores' float32 sums,
which may truncate, at twice float32's epsilon a term).
--tf32-inputs: R from op(A) and op(B) rounded to TF32 here first (to nearest, ties
away from zero, as PTX's cvt.rna.tf32.f32), eps_in 0 and eps = 2^-22: the result must
be that of TF32 inputs summed in float32, not of float32 inputs.
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


def tf32(x):
    """float32 values rounded to 10-bit mantissas, to nearest, ties away from zero."""
    u = x.astype(np.float32).view(np.uint32)
    u = (u + np.uint32(0x1000)) & np.uint32(0xFFFFE000)
    return u.view(np.float32).astype(np.float64)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ta", action="store_true")
    ap.add_argument("--tb", action="store_true")
    ap.add_argument("--alpha", type=float, default=1.0)
    ap.add_argument("--beta", type=float, default=0.0)
    ap.add_argument("--c0")
    ap.add_argument("--double", action="store_true")
    ap.add_argument("--tf32", action="store_true")
    ap.add_argument("--tf32-inputs", action="store_true")
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("c")
    o = ap.parse_args()
    dt = np.float64 if o.double else np.float32
    eps, eps_in = np.finfo(dt).eps, 0.0
    a, b = load(o.a, dt), load(o.b, dt)
    a = a.T if o.ta else a
    b = b.T if o.tb else b
    if o.tf32 or o.tf32_inputs:
        eps = 2.0 ** -22
    if o.tf32:
        eps_in = 2.0 ** -10 + 2.0 ** -22
    if o.tf32_inputs:
        a, b = tf32(a), tf32(b)
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
    tol = (eps_in + (a.shape[1] + 2) * eps) * g
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
