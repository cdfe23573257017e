#!/usr/bin/env python3
"""bench/e2e's Python peers. Each is one whole process as a user runs it: the imports,
reading the input, the computation and writing the result to a file, timed from outside
by bench/e2e like our programs. They reuse the peers of bench/gmmscore and bench/clkmeans.

  e2e_peers.py gmmscore DIR OUT               PyTorch on the GPU, --mode sum --top 1 on
                                              DIR/feats.npy (bench/gmmscore_torch.py's
                                              case, once), text lines like gmmscore's
  e2e_peers.py matmul-torch A.npy B.npy OUT   cuBLAS SGEMM through PyTorch, TF32 off; NPY
  e2e_peers.py matmul-numpy A.npy B.npy OUT   numpy's float32 matmul (OpenBLAS); NPY
  e2e_peers.py kmeans-torch X.npy C0.npy ITERS OUT
                                              Lloyd in float32 on the GPU from C0
                                              (bench/clkmeans_torch.py), ITERS iterations
                                              and the final labelling; labels as NPY
  e2e_peers.py kmeans-sklearn X.npy C0.npy ITERS OUT
                                              scikit-learn KMeans(lloyd, init=C0, n_init=1,
                                              tol=0) on every core; labels as NPY

docsim's peer is bench/docsim_peers.py torch X.npy K 0 OUT (its one pass, no repeats).
"""
import argparse
import sys

import numpy as np


def gmmscore(a):
    import torch
    import gmmscore_torch
    torch.backends.cuda.matmul.allow_tf32 = False
    opts = argparse.Namespace(dir=a[0], repeat=1, chunk=8192)
    gmmscore_torch.time_case(opts, torch.device("cuda"), "sum", a[0] + "/feats.npy", a[1])


def matmul_torch(a):
    import torch
    torch.backends.cuda.matmul.allow_tf32 = False
    A = torch.from_numpy(np.load(a[0])).cuda()
    B = torch.from_numpy(np.load(a[1])).cuda()
    np.save(a[2], (A @ B).cpu().numpy())


def matmul_numpy(a):
    np.save(a[2], np.load(a[0]) @ np.load(a[1]))


def kmeans_torch(a):
    import torch
    import clkmeans_torch
    torch.backends.cuda.matmul.allow_tf32 = False
    X = torch.from_numpy(np.load(a[0])).cuda()
    C0 = torch.from_numpy(np.load(a[1])).cuda()
    _, labels, _ = clkmeans_torch.lloyd(X, C0, int(a[2]))
    np.save(a[3], labels.cpu().numpy().astype(np.int32))


def kmeans_sklearn(a):
    from sklearn.cluster import KMeans
    X, C0 = np.load(a[0]), np.load(a[1])
    km = KMeans(len(C0), init=C0, n_init=1, algorithm="lloyd", max_iter=int(a[2]), tol=0)
    np.save(a[3], km.fit(X).labels_.astype(np.int32))


def main():
    cmds = {"gmmscore": gmmscore, "matmul-torch": matmul_torch, "matmul-numpy": matmul_numpy,
            "kmeans-torch": kmeans_torch, "kmeans-sklearn": kmeans_sklearn}
    if len(sys.argv) < 2 or sys.argv[1] not in cmds:
        sys.stderr.write(__doc__)
        return 2
    cmds[sys.argv[1]](sys.argv[2:])
    return 0


if __name__ == "__main__":
    sys.exit(main())
