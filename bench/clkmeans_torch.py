#!/usr/bin/env python3
"""clkmeans_torch.py: the PyTorch peer of bench/clkmeans, and its float64 reference.

  clkmeans_torch.py X.npy C0.npy ITERS [REF64.npy]

Times Lloyd's algorithm on the GPU as one writes it in PyTorch: distances as
||x||^2 - 2 X C^T + ||c||^2 (one GEMM, float32, TF32 off), argmin, index_add_ for the
sums, bincount for the counts; an empty cluster keeps its centroid. Prints
"torch_f32_ms_per_iter V" (the mean of ITERS iterations after one warm-up iteration).

With REF64.npy: also runs ITERS iterations in float64 from C0, with scikit-learn's
empty-cluster rule (the farthest rows, farthest first), labels the rows with the final
centroids and saves those labels: the float64 reference that clkmeans's labels are
compared with. Prints "torch_f64_empty_clusters N" and "torch_f32_labels_differ N"
(float32 PyTorch against that reference, after the same iterations).
"""
import sys
import time

import numpy as np
import torch


def assign(X, xn, C, chunk=1 << 18):
    cn = (C * C).sum(1)
    out = torch.empty(len(X), dtype=torch.int64, device=X.device)
    for s in range(0, len(X), chunk):
        d = xn[s:s + chunk, None] - 2 * (X[s:s + chunk] @ C.T) + cn[None, :]
        out[s:s + chunk] = d.argmin(1)
    return out


def step(X, xn, C, relocate):
    labels = assign(X, xn, C)
    k = len(C)
    sums = torch.zeros_like(C).index_add_(0, labels, X)
    counts = torch.bincount(labels, minlength=k)
    empty = 0
    if relocate:
        e = torch.nonzero(counts == 0).flatten()
        empty = len(e)
        if empty:
            dist = ((X - C[labels]) ** 2).sum(1)
            # farthest first, the lower row among equals (a stable sort of -dist)
            order = torch.sort(-dist, stable=True).indices[:empty]
            for j, r in zip(e.tolist(), order.tolist()):
                old = int(labels[r])
                sums[old] -= X[r]
                sums[j] = X[r]
                counts[j] = 1
                counts[old] -= 1
    # No host round trip: where() rather than boolean indexing.
    mean = sums / counts.clamp(min=1)[:, None].to(C.dtype)
    return torch.where((counts > 0)[:, None], mean, C), empty


def lloyd(X, C, iters, relocate=False):
    xn = (X * X).sum(1)
    empties = 0
    for _ in range(iters):
        C, e = step(X, xn, C, relocate)
        empties += e
    return C, assign(X, xn, C), empties


def main():
    torch.backends.cuda.matmul.allow_tf32 = False
    dev = torch.device("cuda")
    X = torch.from_numpy(np.load(sys.argv[1])).to(dev)
    C0 = torch.from_numpy(np.load(sys.argv[2])).to(dev)
    iters = int(sys.argv[3])
    xn = (X * X).sum(1)
    step(X, xn, C0, False)  # warm-up
    torch.cuda.synchronize()
    t = time.perf_counter()
    C = C0
    for _ in range(iters):
        C, _ = step(X, xn, C, False)
    torch.cuda.synchronize()
    print("torch_f32_ms_per_iter %.4f" % (1e3 * (time.perf_counter() - t) / iters))
    if len(sys.argv) > 4:
        labels32 = assign(X, xn, C)
        X64 = X.double()
        _, ref, empties = lloyd(X64, C0.double(), iters, relocate=True)
        np.save(sys.argv[4], ref.cpu().numpy().astype(np.int32))
        print("torch_f64_empty_clusters %d" % empties)
        print("torch_f32_labels_differ %d" % int((labels32 != ref).sum()))


if __name__ == "__main__":
    main()
