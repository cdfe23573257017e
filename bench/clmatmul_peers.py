#!/usr/bin/env python3
"""bench/clmatmul's Python peers, timed like clmatmul --bench: a warm-up call, then REPS
calls each waited for, the median reported.

  clmatmul_peers.py torch M N K REPS   cuBLAS SGEMM through PyTorch (TF32 off)
  clmatmul_peers.py torch-tf32 M N K REPS   the same with TF32 on (tensor cores)
  clmatmul_peers.py numpy M N K REPS   numpy's float32 matmul (OpenBLAS sgemm)
  -> m=M n=N k=K reps=REPS ms=MEDIAN best_ms=BEST gflops=G device=WHAT
"""
import statistics
import sys
import time

import numpy as np


def report(m, n, k, ms, what):
    med = statistics.median(ms)
    print("m=%d n=%d k=%d reps=%d ms=%.3f best_ms=%.3f gflops=%.1f device=%s"
          % (m, n, k, len(ms), med, min(ms), 2e-6 * m * n * k / med, what))


def run_torch(m, n, k, reps, tf32=False):
    import torch
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.allow_tf32 = tf32
    torch.set_float32_matmul_precision("high" if tf32 else "highest")
    a = torch.rand(m, k, device="cuda", dtype=torch.float32) * 2 - 1
    b = torch.rand(k, n, device="cuda", dtype=torch.float32) * 2 - 1
    c = torch.empty(m, n, device="cuda", dtype=torch.float32)
    ms = []
    for r in range(-1, reps):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        torch.matmul(a, b, out=c)
        torch.cuda.synchronize()
        if r >= 0:
            ms.append(1e3 * (time.perf_counter() - t0))
    report(m, n, k, ms, torch.cuda.get_device_name() + " cuBLAS" + (" TF32" if tf32 else ""))


def run_numpy(m, n, k, reps):
    rng = np.random.default_rng(1)
    a = (rng.random((m, k), dtype=np.float32) * 2 - 1)
    b = (rng.random((k, n), dtype=np.float32) * 2 - 1)
    c = np.empty((m, n), dtype=np.float32)
    ms = []
    for r in range(-1, reps):
        t0 = time.perf_counter()
        np.matmul(a, b, out=c)
        if r >= 0:
            ms.append(1e3 * (time.perf_counter() - t0))
    blas = "numpy"
    try:
        import threadpoolctl
        info = threadpoolctl.threadpool_info()
        blas = ",".join("%s %s threads" % (i["internal_api"], i["num_threads"])
                        for i in info if i["user_api"] == "blas") or blas
    except Exception:
        pass
    report(m, n, k, ms, blas)


def main():
    if len(sys.argv) != 6 or sys.argv[1] not in ("torch", "torch-tf32", "numpy"):
        sys.stderr.write(__doc__)
        return 2
    m, n, k, reps = (int(v) for v in sys.argv[2:])
    if sys.argv[1] == "numpy":
        run_numpy(m, n, k, reps)
    else:
        run_torch(m, n, k, reps, tf32=sys.argv[1] == "torch-tf32")
    return 0


if __name__ == "__main__":
    sys.exit(main())
