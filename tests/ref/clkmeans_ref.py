#!/usr/bin/env python3
"""clkmeans_ref.py: independent references for tests/clkmeans.bats (numpy, scikit-learn).

  gen KIND N D K SEED OUT.npy [C0.txt]   test data (float32 NPY); with C0, k rows of it
        KIND: separated | overlapping | duplicates | far (offset 1000, tiny spread)
              | ties (integer grid: exact ties between centroids)
              | adversarial (with C0: near-ties between two centroids, one dominant
                dimension, rows and centroids of large norm)
  lloyd DATA C0 MAX_ITER TOL             float64 Lloyd from C0 as scikit-learn runs it
                                         (its convergence rules and empty-cluster rule);
                                         prints "inertia N", "iterations N", then labels
  sklearn DATA C0 MAX_ITER TOL           scikit-learn KMeans(init=C0, n_init=1, lloyd) on
                                         float64 data; same output
  assign DATA CENTROIDS                  brute-force nearest centroid (float64 direct
                                         distances, lowest index on ties): labels, then
                                         "inertia N" on stderr
  check OURS REF [RTOL]                  OURS: our labels (one a line; with --distances a
                                         second column); REF: this script's output.
                                         Exit 0 if the labels are identical and the inertia
                                         (sum of our distances, when given) within RTOL
  centroids OURS DATA LABELS [RTOL]      OURS: our -C file; the means of the rows of each
                                         label must match it
"""
import sys

import numpy as np


def load(path):
    if path.endswith(".npy"):
        a = np.load(path)
    else:
        a = np.loadtxt(path, ndmin=2)
    if a.ndim == 1:
        a = a[:, None]
    return a


def gen(kind, n, d, k, seed, out, c0path=None):
    rng = np.random.default_rng(seed)
    if kind == "separated":
        centers = rng.uniform(-50, 50, (k, d))
        X = centers[rng.integers(0, k, n)] + rng.normal(0, 1, (n, d))
    elif kind == "overlapping":
        centers = rng.normal(0, 1.5, (k, d))
        X = centers[rng.integers(0, k, n)] + rng.normal(0, 1, (n, d))
    elif kind == "duplicates":
        base = rng.normal(0, 3, (max(2, n // 8), d))
        X = base[rng.integers(0, len(base), n)]
    elif kind == "far":
        centers = rng.normal(0, 0.01, (k, d))
        X = 1000 + centers[rng.integers(0, k, n)] + rng.normal(0, 0.01, (n, d))
    elif kind == "ties":
        X = rng.integers(-4, 5, (n, d)).astype(np.float64)
    elif kind == "adversarial":
        # centroids: a quarter with dimension 0 a thousand times the rest, a quarter
        # offset by 1000 in every dimension (large norms), the rest plain
        C = rng.normal(0, 1, (k, d))
        q = max(1, k // 4)
        C[:q, 0] *= 1000
        C[q:2 * q] += 1000
        # rows: a third near the midpoint of two centroids, off it by 1e-4 of their
        # distance either way (a gap TF32's 2^-10 cannot decide, float32 can); a third
        # with one dominant dimension; a third of large norm near the offset centroids
        a, b = rng.integers(0, k, n), rng.integers(0, k, n)
        t = 0.5 + 1e-4 * rng.choice([-1.0, 1.0], n)
        X = C[a] + t[:, None] * (C[b] - C[a])
        third = n // 3
        X[third:2 * third] = rng.normal(0, 1, (third, d))
        X[third:2 * third, 0] *= 1e4
        X[2 * third:] = 1000 + rng.normal(0, 1, (n - 2 * third, d))
    else:
        sys.exit("unknown kind " + kind)
    X = X.astype(np.float32)
    np.save(out, X)
    if c0path:
        if kind == "adversarial":
            pass	# the centroids the rows were made around
        elif kind == "ties":
            # Distinct grid points with exact ties among them.
            C = rng.integers(-4, 5, (k, d)).astype(np.float64) + 0.5 * rng.integers(0, 2, (k, d))
        else:
            C = X[rng.choice(n, k, replace=False)].astype(np.float64)
        np.savetxt(c0path, C, fmt="%.9g")


def sqdist(X, C):
    """float64 direct squared distances, n x k, in blocks."""
    out = np.empty((len(X), len(C)))
    for s in range(0, len(X), 4096):
        diff = X[s:s + 4096, None, :] - C[None, :, :]
        out[s:s + 4096] = np.einsum("nkd,nkd->nk", diff, diff)
    return out


def relocate(X, C_old, labels, sums, counts):
    """scikit-learn's empty-cluster rule, with a fixed order: the empty clusters in
    increasing order take the rows farthest from their centroids, farthest first
    (the lower row among equals)."""
    empty = np.where(counts == 0)[0]
    if len(empty) == 0:
        return
    dist = ((X - C_old[labels]) ** 2).sum(axis=1)
    if dist.max() == 0:
        return
    order = np.lexsort((np.arange(len(X)), -dist))[:len(empty)]
    for j, r in zip(empty, order):
        old = labels[r]
        sums[old] -= X[r]
        sums[j] = X[r]
        counts[j] = 1
        counts[old] -= 1


def lloyd(X, C, max_iter, tol):
    X = X.astype(np.float64)
    C = C.astype(np.float64).copy()
    k = len(C)
    tol_abs = np.mean(np.var(X, axis=0)) * tol
    labels_old = np.full(len(X), -1)
    strict = False
    it = 0
    for it in range(max_iter):
        labels = sqdist(X, C).argmin(axis=1)
        sums = np.zeros_like(C)
        np.add.at(sums, labels, X)
        counts = np.bincount(labels, minlength=k).astype(np.int64)
        relocate(X, C, labels, sums, counts)
        newC = C.copy()
        nz = counts > 0
        newC[nz] = sums[nz] / counts[nz, None]
        shift = ((newC - C) ** 2).sum()
        C = newC
        if tol > 0 and np.array_equal(labels, labels_old):
            strict = True
            break
        if tol > 0 and shift <= tol_abs:
            break
        labels_old = labels
    if not strict:
        labels = sqdist(X, C).argmin(axis=1)
    inertia = ((X - C[labels]) ** 2).sum()
    return labels, inertia, it + 1, C


def report(labels, inertia, iters):
    out = ["inertia %.17g" % inertia, "iterations %d" % iters]
    out += [str(int(v)) for v in labels]
    sys.stdout.write("\n".join(out) + "\n")


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "gen":
        gen(args[0], int(args[1]), int(args[2]), int(args[3]), int(args[4]), args[5],
            args[6] if len(args) > 6 else None)
    elif cmd == "lloyd":
        X, C = load(args[0]), load(args[1])
        labels, inertia, iters, _ = lloyd(X, C, int(args[2]), float(args[3]))
        report(labels, inertia, iters)
    elif cmd == "sklearn":
        from sklearn.cluster import KMeans
        X, C = load(args[0]).astype(np.float64), load(args[1])
        km = KMeans(len(C), init=C, n_init=1, algorithm="lloyd", max_iter=int(args[2]),
                    tol=float(args[3])).fit(X)
        report(km.labels_, km.inertia_, km.n_iter_)
    elif cmd == "assign":
        X, C = load(args[0]).astype(np.float64), load(args[1])
        D = sqdist(X, C)
        labels = D.argmin(axis=1)
        sys.stdout.write("".join("%d\n" % v for v in labels))
        sys.stderr.write("inertia %.17g\n" % D[np.arange(len(X)), labels].sum())
    elif cmd == "check":
        ours = np.loadtxt(args[0], ndmin=2)
        ref = open(args[1]).read().split("\n")
        rtol = float(args[2]) if len(args) > 2 else 1e-5
        inertia = float(ref[0].split()[1])
        labels = np.array([int(v) for v in ref[2:] if v])
        if len(labels) != len(ours):
            sys.exit("%d labels, the reference has %d" % (len(ours), len(labels)))
        bad = np.nonzero(ours[:, 0].astype(int) != labels)[0]
        if len(bad):
            sys.exit("%d labels differ, first at row %d: %d, reference %d" %
                     (len(bad), bad[0], ours[bad[0], 0], labels[bad[0]]))
        if ours.shape[1] > 1:
            got = ours[:, 1].sum()
            if abs(got - inertia) > rtol * abs(inertia) + 1e-12:
                sys.exit("inertia %.10g, reference %.10g" % (got, inertia))
        print("ok")
    elif cmd == "centroids":
        ours, X, labels = load(args[0]), load(args[1]).astype(np.float64), load(args[2])
        labels = labels[:, 0].astype(int)
        rtol = float(args[3]) if len(args) > 3 else 1e-6
        scale = np.abs(X).max()
        for j in range(len(ours)):
            if (labels == j).any():
                want = X[labels == j].mean(axis=0)
                if np.abs(ours[j] - want).max() > rtol * scale:
                    sys.exit("centroid %d: %s, the mean of its rows is %s" % (j, ours[j], want))
        print("ok")
    else:
        sys.exit("unknown command " + cmd)


if __name__ == "__main__":
    main()
