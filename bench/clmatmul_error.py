#!/usr/bin/env python3
"""bench/clmatmul's error measurement of --precision tf32 against float64.

  clmatmul_error.py CLMATMUL N [uniform|adversarial]

Makes A and B, N x N, in float32 (numpy, seed 1), and C64 = A B in float64 (numpy).
uniform (the default): entries uniform in [-1, 1). adversarial: standard normal entries
with cancellation (the second half of A's columns a copy of the first half, the second
half of B's rows the first half's negation plus 1e-3 noise), so that most of C is small
against |A||B|, where the bound lives; then large norms (A's first eighth of rows times
1e12) and one dominant dimension (column 0 of A's second eighth of rows and row 0 of
B's second half of columns times 1e4: those entries of C are its k = 0 term). Multiplies A B with clmatmul on the NVIDIA GPU (--precision fp32 and
tf32, NPY files in and out) and with cuBLAS through PyTorch (TF32 off and on), and
prints for each, one a line:
  rel_fro   ||C - C64||_F / ||C64||_F
  max_rel   max |C - C64| / max |C64|
  of_bound  max over entries of |C - C64| / (2^-10 + 2^-22 + (N + 2) 2^-22) (|A||B|):
            how much of clmatmul's documented TF32 bound the worst entry uses
  med_entry_rel  the median over entries of |C - C64| / |C64| (cancellation shows here:
            the bound is relative to |A||B|, not to C)
"""
import os
import subprocess
import sys
import tempfile

import numpy as np


def measure(name, c, c64, g, n):
    d = np.abs(c.astype(np.float64) - c64)
    bound = (2.0 ** -10 + 2.0 ** -22 + (n + 2) * 2.0 ** -22) * g
    with np.errstate(divide="ignore", invalid="ignore"):
        ent = d / np.abs(c64)
    print("%-28s rel_fro=%.3e max_rel=%.3e of_bound=%.4f med_entry_rel=%.3e"
          % (name, np.linalg.norm(d) / np.linalg.norm(c64), d.max() / np.abs(c64).max(),
             (d / bound).max(), np.median(ent[np.isfinite(ent)])))


def main():
    if len(sys.argv) not in (3, 4):
        sys.stderr.write(__doc__)
        return 2
    cm, n = sys.argv[1], int(sys.argv[2])
    case = sys.argv[3] if len(sys.argv) > 3 else "uniform"
    rng = np.random.default_rng(1)
    if case == "uniform":
        a = (rng.random((n, n), dtype=np.float32) * 2 - 1).astype(np.float32)
        b = (rng.random((n, n), dtype=np.float32) * 2 - 1).astype(np.float32)
        what = "A and B uniform in [-1, 1)"
    elif case == "adversarial":
        a = rng.standard_normal((n, n))
        b = rng.standard_normal((n, n))
        h = n // 2
        a[:, h:2 * h] = a[:, :h]
        b[h:2 * h] = -b[:h] + 1e-3 * rng.standard_normal((h, n))
        a[n // 8:n // 4, 0] *= 1e4
        b[0, n // 2:] *= 1e4
        a[:n // 8] *= 1e12
        a, b = a.astype(np.float32), b.astype(np.float32)
        what = "adversarial A and B (a dominant dimension, rows of norm 1e12, cancellation)"
    else:
        sys.stderr.write(__doc__)
        return 2
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    c64 = a64 @ b64
    g = np.abs(a64) @ np.abs(b64)
    print("N = %d, %s, float32; reference: numpy float64" % (n, what))
    with tempfile.TemporaryDirectory() as tmp:
        pa, pb, pc = (os.path.join(tmp, f) for f in ("a.npy", "b.npy", "c.npy"))
        np.save(pa, a)
        np.save(pb, b)
        for prec in ("fp32", "tf32"):
            dev = os.environ.get("CLMATMUL_ERROR_DEVICE", "-d gpu --platform NVIDIA").split()
            r = subprocess.run([cm] + dev + ["--precision", prec, "-O", "npy", "-o", pc, pa,
                                pb], stderr=subprocess.PIPE, text=True)
            if r.returncode != 0:
                print("clmatmul --precision %s failed: %s" % (prec, r.stderr.strip()))
                continue
            measure("clmatmul --precision " + prec, np.load(pc), c64, g, n)
    try:
        import torch
        ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
        for tf32 in (False, True):
            torch.backends.cuda.matmul.allow_tf32 = tf32
            torch.set_float32_matmul_precision("high" if tf32 else "highest")
            c = torch.matmul(ta, tb).cpu().numpy()
            measure("cuBLAS (PyTorch, TF32 %s)" % ("on" if tf32 else "off"), c, c64, g, n)
    except Exception as e:  # no torch or no CUDA: the clmatmul rows stand alone
        print("cuBLAS through PyTorch: not measured (%s)" % e)
    return 0


if __name__ == "__main__":
    sys.exit(main())
