#!/usr/bin/env python3
"""scale_clkmeans.py: clkmeans's check at benchmark sizes (tests/scale/clkmeans.bats).

  scale_clkmeans.py check DATA.npy LABELS CENTROIDS.npy [--distances] [--means]
                          [--samples S] [--seed S]
      LABELS: clkmeans's lines (the label, with --distances then the squared
      distance). Every row has a label in 0..K-1, and the label is the one a float64
      Lloyd step would keep: the nearest centroid of CENTROIDS (clkmeans -C, float32) by
      float64 distances, lowest index on ties. A row whose nearest centroids lie
      within the rounding of the centroids to float32 (their float64 means are not
      printed) may take any of them. Every row is checked when rows x K is at most
      3e8, else S sampled rows (default 200,000). --distances: each distance within
      1e-5 relative (float32 printing) of the float64 one. --means (a run that
      stopped because no label changed): each centroid is the float64 mean of its
      rows, within 2^-22 of its column's largest magnitude.
Prints "ok: ..." or the first thing wrong (exit 1).
"""
import argparse
import sys

import numpy as np


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def main():
    ap = argparse.ArgumentParser(prog="scale_clkmeans.py")
    ap.add_argument("what", choices=["check"])
    ap.add_argument("data")
    ap.add_argument("labels")
    ap.add_argument("centroids")
    ap.add_argument("--distances", action="store_true")
    ap.add_argument("--means", action="store_true")
    ap.add_argument("--samples", type=int, default=200000)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    X = np.load(a.data, mmap_mode="r")
    C = np.load(a.centroids).astype(np.float64)
    n, k = X.shape[0], C.shape[0]
    raw = open(a.labels, "rb").read()
    cols = 2 if a.distances else 1
    v = np.fromstring(raw.replace(b"\t", b" "), sep=" ") if raw else np.zeros(0)
    if v.size != cols * raw.count(b"\n") or raw.count(b"\n") != n:
        fail("%d lines for %d rows, %d numbers" % (raw.count(b"\n"), n, v.size))
    v = v.reshape(n, cols)
    lab = v[:, 0].astype(np.int64)
    if np.any(lab != v[:, 0]) or lab.min() < 0 or lab.max() >= k:
        fail("a label that is not one of 0..%d" % (k - 1))
    if n * k <= 3e8:
        rows = np.arange(n)
    else:
        rows = np.sort(np.random.default_rng(a.seed).choice(n, a.samples, replace=False))
    cn2 = (C * C).sum(1)
    cmax = np.sqrt(cn2.max())
    u = 2.0 ** -24
    ties = 0
    for b in range(0, rows.size, 1 << 16):
        r = rows[b:b + (1 << 16)]
        x = np.asarray(X[r], dtype=np.float64)
        d = (x * x).sum(1)[:, None] - 2 * (x @ C.T) + cn2
        best = d.min(1)
        # the expansion's own float64 error, and a centroid's rounding to float32
        tol = 8 * u * (np.sqrt(np.maximum(best, 0)) * cmax + cmax * cmax * u) \
            + 1e-12 * ((x * x).sum(1) + cn2.max())
        near = d <= (best + 2 * tol)[:, None]
        amb = near.sum(1) > 1
        if np.any(amb):
            # recompute those rows' distances directly, then allow the near-tied ones
            for j in np.nonzero(amb)[0]:
                dd = ((x[j] - C) ** 2).sum(1)
                d[j] = dd
                near[j] = dd <= dd.min() + 2 * tol[j]
            ties += int(amb.sum())
        ok = near[np.arange(r.size), lab[r]]
        if not np.all(ok):
            j = int(np.argmin(ok))
            fail("row %d: label %d at distance %.9g, but centroid %d is at %.9g" %
                 (r[j] + 1, lab[r[j]], d[j, lab[r[j]]], d[j].argmin(), d[j].min()))
        if a.distances:
            want = d[np.arange(r.size), lab[r]]
            got = v[r, 1]
            bad = np.abs(got - want) > 1e-5 * np.abs(want) + 2 * tol
            if np.any(bad):
                j = int(np.argmax(bad))
                fail("row %d: distance %.9g, float64 %.9g" % (r[j] + 1, got[j], want[j]))
    if a.means:
        Xf = np.asarray(X, dtype=np.float64)
        cnt = np.bincount(lab, minlength=k)
        sums = np.stack([np.bincount(lab, weights=Xf[:, j], minlength=k)
                         for j in range(X.shape[1])], axis=1)
        m = sums[cnt > 0] / cnt[cnt > 0][:, None]
        scale = np.abs(Xf).max(0)
        bad = np.abs(m - C[cnt > 0]) > 2.0 ** -22 * scale
        if np.any(bad):
            i, j = np.unravel_index(np.argmax(bad), bad.shape)
            c = np.nonzero(cnt > 0)[0][i]
            fail("centroid %d column %d: %.9g, the mean of its rows %.9g" % (c, j, C[c, j], m[i, j]))
    print("ok: %d rows, k %d, %d checked (%d near ties)" % (n, k, rows.size, ties))


if __name__ == "__main__":
    main()
