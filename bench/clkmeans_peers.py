#!/usr/bin/env python3
"""clkmeans_peers.py: data and the scikit-learn peer for bench/clkmeans.

  gen N D K SEED DIR           DIR/x.npy (float32 blobs: K centers ~ N(0,1), unit noise)
                               and DIR/c0.npy (K distinct rows of it, the given start)
  sklearn X.npy C0.npy ITERS [ROWS]
                               scikit-learn KMeans(init=C0, n_init=1, algorithm='lloyd',
                               tol=0) on every core, on the first ROWS rows if given;
                               prints "sklearn_ms_per_iter V" from two fits (ITERS and 1
                               iterations), so set-up time is not counted
  differ A.npy B.npy           prints how many labels differ
"""
import sys
import time

import numpy as np


def gen(n, d, k, seed, out):
    rng = np.random.default_rng(seed)
    centers = rng.standard_normal((k, d), dtype=np.float32)
    X = centers[rng.integers(0, k, n)]
    X += rng.standard_normal((n, d), dtype=np.float32)
    np.save(out + "/x.npy", X)
    np.save(out + "/c0.npy", X[rng.choice(n, k, replace=False)])


def fit_time(X, C0, iters):
    from sklearn.cluster import KMeans
    t = time.perf_counter()
    km = KMeans(len(C0), init=C0, n_init=1, algorithm="lloyd", max_iter=iters, tol=0).fit(X)
    return time.perf_counter() - t, km.n_iter_


def main():
    cmd, a = sys.argv[1], sys.argv[2:]
    if cmd == "gen":
        gen(int(a[0]), int(a[1]), int(a[2]), int(a[3]), a[4])
    elif cmd == "sklearn":
        X, C0 = np.load(a[0]), np.load(a[1])
        if len(a) > 3:
            X = X[:int(a[3])]
        # a warm-up fit first (its thread pool's start fell in the 1-iteration fit and
        # made the small case's difference negative), then the best of 3 where a fit
        # is short
        fit_time(X, C0, 1)

        def best(iters):
            t, n = fit_time(X, C0, iters)
            for _ in range(2 if t < 1.0 else 0):
                t = min(t, fit_time(X, C0, iters)[0])
            return t, n
        t1, n1 = best(1)
        t, n = best(int(a[2]))
        if n > n1:
            per = (t - t1) / (n - n1)
        else:
            per = t / n
        print("sklearn_ms_per_iter %.4f" % (1e3 * per))
        print("sklearn_iterations %d" % n)
    elif cmd == "differ":
        x, y = np.load(a[0]).reshape(-1), np.load(a[1]).reshape(-1)
        print(int((x.astype(np.int64) != y.astype(np.int64)).sum()))
    else:
        sys.exit("unknown command " + cmd)


if __name__ == "__main__":
    main()
