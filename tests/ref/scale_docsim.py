#!/usr/bin/env python3
"""scale_docsim.py: docsim's check at benchmark sizes (tests/scale/docsim.bats), numpy.

  scale_docsim.py gen N M SEED OUT.npy [clusters]
      N x M float32 standard normal rows, row 0 all zeros (it lists nothing); with
      clusters, rows in clusters of 100 around unit bases with noise 0.05/sqrt(M), so
      that a row's neighbours crowd within a TF32 bound of each other (the recheck path)
  scale_docsim.py check CORPUS.npy OUT [-q QUERIES.npy] [-k K] [-t X] [--full]
                        [--samples S] [--seed S] [--tol X]
      docsim's lines "QUERY<TAB>DOC<TAB>SCORE" (dense vectors, all pairs, or with -q):
      invariants over every line: ids in range, queries in order, no document its own
      neighbour, no (query, document) pair twice, scores in [-1, 1], each query's scores
      non-increasing, at most K lines a query (with --full: exactly min(K, N - 1) for
      every query whose vector is not zero), with -t every score >= X; -k 0 (pairs at or
      above -t): for all pairs each pair once, lower number first. Then S sampled
      queries (default 1000) are recomputed exactly in float64 (rows scaled to norm 1):
      every score within TOL (default 1e-6) of its float64 value, and the list a true
      top-K of the scores above 0 (or >= X): every document scoring more than TOL above
      the list's last is listed, and the list is as long as it must be.
Prints "ok: N lines, S sampled queries" or the first thing wrong (exit 1).
"""
import argparse
import sys

import numpy as np


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def gen(a):
    n, m, seed, out = int(a[0]), int(a[1]), int(a[2]), a[3]
    rng = np.random.default_rng(seed)
    if len(a) > 4 and a[4] == "clusters":
        base = rng.standard_normal((n // 100 + 1, m))
        base /= np.linalg.norm(base, axis=1, keepdims=True)
        x = base[np.arange(n) // 100] + rng.standard_normal((n, m)) * (0.05 / np.sqrt(m))
        x = x.astype(np.float32)
    else:
        x = rng.standard_normal((n, m), dtype=np.float32)
    x[0] = 0
    np.save(out, x)


def parse(path):
    raw = open(path, "rb").read()
    nl = raw.count(b"\n")
    if raw and not raw.endswith(b"\n"):
        fail("the output does not end with a newline")
    v = np.fromstring(raw.replace(b"\t", b" "), sep=" ") if raw else np.zeros(0)
    if v.size != 3 * nl:
        fail("%d lines but %d numbers: a line is not QUERY DOC SCORE" % (nl, v.size))
    v = v.reshape(-1, 3)
    return v[:, 0].astype(np.int64), v[:, 1].astype(np.int64), v[:, 2]


def unit(x):
    x = np.asarray(x, dtype=np.float64)
    nrm = np.linalg.norm(x, axis=1, keepdims=True)
    nrm[nrm == 0] = 1
    return x / nrm


def check(argv):
    ap = argparse.ArgumentParser(prog="scale_docsim.py check")
    ap.add_argument("corpus")
    ap.add_argument("out")
    ap.add_argument("-q", dest="queries")
    ap.add_argument("-k", type=int, default=10)
    ap.add_argument("-t", type=float)
    ap.add_argument("--full", action="store_true")
    ap.add_argument("--samples", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--tol", type=float, default=1e-6)
    a = ap.parse_args(argv)
    X = np.load(a.corpus, mmap_mode="r")
    Q = np.load(a.queries, mmap_mode="r") if a.queries else X
    allpairs = a.queries is None
    n, nq = X.shape[0], Q.shape[0]
    q, d, s = parse(a.out)
    L = len(q)
    # printed with 6 decimals: half a unit of the last place beside TOL
    tol = a.tol + 5e-7

    # ---- invariants over every line
    if L and (q.min() < 1 or q.max() > nq or d.min() < 1 or d.max() > n):
        fail("an id out of range (queries 1..%d, documents 1..%d)" % (nq, n))
    if np.any(np.diff(q) < 0):
        i = int(np.argmax(np.diff(q) < 0))
        fail("queries out of order at line %d (%d after %d)" % (i + 2, q[i + 1], q[i]))
    if allpairs and np.any(q == d):
        i = int(np.argmax(q == d))
        fail("line %d: document %d is its own neighbour" % (i + 1, q[i]))
    if np.any(np.abs(s) > 1 + tol):
        fail("a score outside [-1, 1]: %g" % s[np.argmax(np.abs(s))])
    key = q * (n + 1) + d
    if a.k == 0 and allpairs:
        if np.any(q >= d):
            i = int(np.argmax(q >= d))
            fail("line %d: pair %d %d not lower number first" % (i + 1, q[i], d[i]))
    ks = np.sort(key)
    if np.any(ks[1:] == ks[:-1]):
        dup = ks[1:][ks[1:] == ks[:-1]]
        fail("%d repeated (query, document) lines, the first %d %d" %
             (dup.size, dup[0] // (n + 1), dup[0] % (n + 1)))
    same_q = q[1:] == q[:-1]
    if np.any(same_q & (s[1:] > s[:-1])):
        i = int(np.argmax(same_q & (s[1:] > s[:-1])))
        fail("line %d: query %d's scores not in decreasing order" % (i + 2, q[i]))
    if a.t is not None and np.any(s < a.t - 5e-7):
        fail("a score below the threshold %g: %g" % (a.t, s.min()))
    if a.t is None and np.any(s < 0):
        fail("a negative score listed without a threshold: %g" % s.min())
    uq, cnt = np.unique(q, return_counts=True)
    if a.k > 0 and cnt.size and cnt.max() > a.k:
        fail("query %d lists %d documents, more than -k %d" % (uq[np.argmax(cnt)], cnt.max(), a.k))
    if a.full:
        want = min(a.k, n - 1 if allpairs else n)
        nz = np.ones(nq, bool)
        for b in range(0, nq, 65536):
            nz[b:b + 65536] = np.any(np.asarray(Q[b:b + 65536]) != 0, axis=1)
        have = np.zeros(nq + 1, np.int64)
        have[uq] = cnt
        bad = np.nonzero(nz & (have[1:] != want))[0]
        if bad.size:
            fail("%d queries do not list %d documents, the first %d lists %d" %
                 (bad.size, want, bad[0] + 1, have[bad[0] + 1]))
        if np.any(have[1:][~nz] != 0):
            fail("a zero vector lists documents")

    # ---- sampled queries, recomputed in float64
    rng = np.random.default_rng(a.seed)
    ns = min(a.samples, nq)
    rows = np.sort(rng.choice(nq, ns, replace=False))
    Xu = unit(X) if ns else None
    if a.k == 0 and allpairs:
        # pairs where the sampled document is the second of the pair
        order = np.argsort(d, kind="stable")
        dsorted = d[order]
    for b in range(0, ns, 250):
        blk = rows[b:b + 250]
        S = unit(Q[blk]) @ Xu.T
        for j, r in enumerate(blk):
            ref = S[j]
            if allpairs:
                ref[r] = -np.inf
            lo, hi = np.searchsorted(q, [r + 1, r + 2])
            docs, sc = d[lo:hi] - 1, s[lo:hi]
            if a.k == 0 and allpairs:
                l2, h2 = np.searchsorted(dsorted, [r + 1, r + 2])
                docs = np.concatenate([docs, q[order[l2:h2]] - 1])
                sc = np.concatenate([sc, s[order[l2:h2]]])
            where = "query %d" % (r + 1)
            err = np.abs(ref[docs] - sc)
            if err.size and err.max() > tol:
                i = int(np.argmax(err))
                fail("%s, document %d: score %.6f, float64 %.9f" % (where, docs[i] + 1, sc[i], ref[docs[i]]))
            floor = a.t if a.t is not None else 0.0
            sure = ref >= floor + tol if a.t is not None else ref > tol
            maybe = ref >= floor - tol
            listed = np.zeros(n, bool)
            listed[docs] = True
            if np.any(listed & ~maybe):
                i = int(np.argmax(listed & ~maybe))
                fail("%s lists document %d, whose float64 score %.9f does not pass" % (where, i + 1, ref[i]))
            if a.k == 0:
                miss = sure & ~listed
            else:
                need = min(a.k, int(sure.sum()))
                if docs.size < need or docs.size > min(a.k, int(maybe.sum())):
                    fail("%s lists %d documents; float64 says %d to %d" %
                         (where, docs.size, need, min(a.k, int(maybe.sum()))))
                last = sc.min() if docs.size == a.k else floor
                miss = sure & ~listed & (ref > last + tol)
            if np.any(miss):
                i = int(np.argmax(np.where(miss, ref, -np.inf)))
                fail("%s misses document %d, float64 score %.9f" % (where, i + 1, ref[i]))
    print("ok: %d lines, %d sampled queries" % (L, ns))


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    if sys.argv[1] == "gen":
        gen(sys.argv[2:])
    elif sys.argv[1] == "check":
        check(sys.argv[2:])
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main()
