#!/usr/bin/env python3
"""bench/clmatmul's error measurement of --precision tf32 against float64.

  clmatmul_error.py CLMATMUL N

Makes A and B, N x N, uniform in [-1, 1) in float32 (numpy, seed 1), and C64 = A B in
float64 (numpy). Multiplies A B with clmatmul on the NVIDIA GPU (--precision fp32 and
tf32, NPY files in and out) and with cuBLAS through PyTorch (TF32 off and on), and
prints for each, one a line:
  rel_fro   ||C - C64||_F / ||C64||_F
  max_rel   max |C - C64| / max |C64|
  of_bound  max over entries of |C - C64| / (2^-10 + 2^-22 + (N + 2) 2^-22) (|A||B|):
            how much of clmatmul's documented TF32 bound the worst entry uses
"""
import os
import subprocess
import sys
import tempfile

import numpy as np


def measure(name, c, c64, g, n):
    d = np.abs(c.astype(np.float64) - c64)
    bound = (2.0 ** -10 + 2.0 ** -22 + (n + 2) * 2.0 ** -22) * g
    print("%-28s rel_fro=%.3e max_rel=%.3e of_bound=%.4f"
          % (name, np.linalg.norm(d) / np.linalg.norm(c64), d.max() / np.abs(c64).max(),
             (d / bound).max()))


def main():
    if len(sys.argv) != 3:
        sys.stderr.write(__doc__)
        return 2
    cm, n = sys.argv[1], int(sys.argv[2])
    rng = np.random.default_rng(1)
    a = (rng.random((n, n), dtype=np.float32) * 2 - 1).astype(np.float32)
    b = (rng.random((n, n), dtype=np.float32) * 2 - 1).astype(np.float32)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    c64 = a64 @ b64
    g = np.abs(a64) @ np.abs(b64)
    print("N = %d, A and B uniform in [-1, 1), float32; reference: numpy float64" % n)
    with tempfile.TemporaryDirectory() as tmp:
        pa, pb, pc = (os.path.join(tmp, f) for f in ("a.npy", "b.npy", "c.npy"))
        np.save(pa, a)
        np.save(pb, b)
        for prec in ("fp32", "tf32"):
            r = subprocess.run([cm, "-d", "gpu", "--platform", "NVIDIA", "--precision", prec,
                                "-O", "npy", "-o", pc, pa, pb], stderr=subprocess.PIPE,
                               text=True)
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
