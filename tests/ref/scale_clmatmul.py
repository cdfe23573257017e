#!/usr/bin/env python3
"""scale_clmatmul.py: clmatmul's check at benchmark sizes (tests/scale/clmatmul.bats).

  scale_clmatmul.py gen ROWS COLS SEED OUT.npy      uniform [-1, 1) float32
  scale_clmatmul.py check A.npy B.npy C.npy [--ta] [--tb] [--alpha X] [--beta X --c0 F]
                          [--double | --tf32] [--samples S] [--seed S]
      C (clmatmul -O npy) must be op(A) op(B)'s shape, every entry finite, and S sampled
      rows (default 1,000, and the first and last) recomputed in float64 here must lie
      within clmatmul(1)'s bound, as tests/ref/clmatmul_ref.py checks whole matrices:
          |C - R| <= (eps_in + (K + 2) eps) (|alpha| (|op(A)| |op(B)|) + |beta C0|)
      eps 2^-23 (float32), 2^-52 with --double; --tf32: eps_in 2^-10 + 2^-22, eps 2^-22.
Prints "ok: ..." or the first entry off (exit 1).
"""
import argparse
import sys

import numpy as np


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "gen":
        r, c, seed = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
        x = np.random.default_rng(seed).uniform(-1, 1, (r, c)).astype(np.float32)
        np.save(sys.argv[5], x)
        return
    ap = argparse.ArgumentParser(prog="scale_clmatmul.py check")
    ap.add_argument("what", choices=["check"])
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("c")
    ap.add_argument("--ta", action="store_true")
    ap.add_argument("--tb", action="store_true")
    ap.add_argument("--alpha", type=float, default=1.0)
    ap.add_argument("--beta", type=float, default=0.0)
    ap.add_argument("--c0")
    ap.add_argument("--double", action="store_true")
    ap.add_argument("--tf32", action="store_true")
    ap.add_argument("--samples", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    o = ap.parse_args()
    A = np.load(o.a, mmap_mode="r")
    B = np.load(o.b, mmap_mode="r")
    C = np.load(o.c, mmap_mode="r")
    opA = A.T if o.ta else A
    opB = np.asarray(B.T if o.tb else B, dtype=np.float64)
    M, K = opA.shape
    N = opB.shape[1]
    if opB.shape[0] != K:
        fail("op(A) %s and op(B) %s do not match" % (opA.shape, opB.shape))
    if C.shape != (M, N):
        fail("C is %s, not %d x %d" % (C.shape, M, N))
    eps, eps_in = (2.0 ** -52 if o.double else 2.0 ** -23), 0.0
    if o.tf32:
        eps, eps_in = 2.0 ** -22, 2.0 ** -10 + 2.0 ** -22
    rng = np.random.default_rng(o.seed)
    rows = np.unique(np.r_[0, M - 1, rng.choice(M, min(o.samples, M), replace=False)])
    absB = np.abs(opB)
    C0 = np.load(o.c0, mmap_mode="r") if o.c0 else None
    for b in range(0, rows.size, 256):
        r = rows[b:b + 256]
        a = np.asarray(opA[r], dtype=np.float64)
        ref = o.alpha * (a @ opB)
        g = abs(o.alpha) * (np.abs(a) @ absB)
        if C0 is not None:
            c0 = np.asarray(C0[r], dtype=np.float64)
            ref += o.beta * c0
            g += np.abs(o.beta * c0)
        got = np.asarray(C[r], dtype=np.float64)
        tol = (eps_in + (K + 2) * eps) * g
        bad = ~(np.abs(got - ref) <= tol)
        if bad.any():
            i, j = np.argwhere(bad)[0]
            fail("C[%d][%d] = %.9g, float64 %.9g (bound %.3g; %d entries off in these rows)"
                 % (r[i], j, got[i, j], ref[i, j], tol[i, j], bad.sum()))
    if not np.all(np.isfinite(np.asarray(C[::max(1, M // 4096)]))):
        fail("an entry that is not finite")
    print("ok: %d x %d (K %d), %d sampled rows" % (M, N, K, rows.size))


if __name__ == "__main__":
    main()
