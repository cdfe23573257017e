#!/usr/bin/env python3
"""scale_skyline.py: skyline's check at benchmark sizes (tests/scale/skyline.bats), numpy.

  scale_skyline.py grid IN.npy K OUT.npy
      IN's float32 values rounded to multiples of 1/K: many equal rows (for --distinct)
  scale_skyline.py check DATA.npy INDEX [-p LIST] [-Q QUERIES.npy] [--distinct]
                         [--samples S] [--seed S]
      INDEX: skyline --index's 1-based row numbers. Invariants: numbers in range, in
      input order, none twice; with --distinct no two skyline rows equal. Then S
      sampled skyline rows (default 1000) are dominated by no skyline row, and S sampled
      rows left out are each dominated by a skyline row (or, with --distinct, equal to
      one). Every row left out that equals a skyline row is an error, or with
      --distinct one that comes before it (the first of equal rows is printed).
      Whatever dominates a row, a skyline row does (dominance is transitive), so
      the skyline rows are what a left-out row is tested against. Classic: the columns
      as float64, each towards its -p end (min by default). Spatial (-Q): a point's
      squared distances to every query point, in float64 from the float32 coordinates.
Prints "ok: ..." or the first thing wrong (exit 1).
"""
import argparse
import sys

import numpy as np


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def values(a):
    X = np.load(a.data).astype(np.float64)
    if a.Q:
        q = np.load(a.Q).astype(np.float32).astype(np.float64)
        x32 = X.astype(np.float32).astype(np.float64)
        V = np.empty((X.shape[0], q.shape[0]))
        for j, (qx, qy) in enumerate(q[:, :2]):
            V[:, j] = (x32[:, 0] - qx) ** 2 + (x32[:, 1] - qy) ** 2
        return V
    if a.p:
        pref = a.p.split(",")
        if len(pref) == 1:
            pref = pref * X.shape[1]
        X *= np.array([-1.0 if p == "max" else 1.0 for p in pref])
    return X


def dominated_by(S, Ssum, r, rsum):
    """Whether a row of S (sorted by the sums Ssum) dominates r. A dominating row is
    <= r everywhere, so its rounded sum is <= r's: only those rows are looked at."""
    n = np.searchsorted(Ssum, rsum, side="right")
    for b in range(0, n, 1 << 16):
        c = S[b:min(n, b + (1 << 16))]
        if np.any(np.all(c <= r, axis=1) & np.any(c < r, axis=1)):
            return True
    return False


def check(argv):
    ap = argparse.ArgumentParser(prog="scale_skyline.py check")
    ap.add_argument("data")
    ap.add_argument("index")
    ap.add_argument("-p")
    ap.add_argument("-Q")
    ap.add_argument("--distinct", action="store_true")
    ap.add_argument("--samples", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args(argv)
    V = values(a)
    n = V.shape[0]
    raw = open(a.index, "rb").read()
    idx = np.fromstring(raw, sep="\n").astype(np.int64) if raw.strip() else np.zeros(0, np.int64)
    if idx.size != raw.count(b"\n"):
        fail("a line that is not one row number")
    if idx.size == 0:
        fail("an empty skyline")
    if idx.min() < 1 or idx.max() > n:
        fail("a row number out of range 1..%d" % n)
    if np.any(np.diff(idx) <= 0):
        i = int(np.argmax(np.diff(idx) <= 0))
        fail("row numbers out of order or repeated: %d after %d" % (idx[i + 1], idx[i]))
    S = V[idx - 1]
    if a.distinct and np.unique(S, axis=0).shape[0] != S.shape[0]:
        fail("--distinct printed equal rows")
    # rows equal to a skyline row, among all rows: by a hash of the values, then exactly
    with np.errstate(over="ignore"):
        mult = np.arange(1, V.shape[1] + 1, dtype=np.int64) * np.int64(0x9E3779B97F4A7C15 - (1 << 64))
        H = (np.ascontiguousarray(V).view(np.int64) * mult).sum(1)
    out = np.ones(n, bool)
    out[idx - 1] = False
    cand = np.nonzero(out & np.isin(H, H[idx - 1]))[0]
    if cand.size:
        first = {}
        for i in idx - 1:
            first.setdefault(H[i], []).append(i)
        for r in cand:
            for i in first[H[r]]:
                if np.array_equal(V[i], V[r]):
                    if not a.distinct:
                        fail("row %d is left out, but equals skyline row %d" % (r + 1, i + 1))
                    if r < i:
                        fail("--distinct printed row %d, not the first of its equals, %d" % (i + 1, r + 1))
    order = np.argsort(S.sum(1), kind="stable")
    S, Ssum = S[order], S.sum(1)[order]
    rng = np.random.default_rng(a.seed)
    ins = rng.choice(idx - 1, min(a.samples, idx.size), replace=False)
    for r in ins:
        if dominated_by(S, Ssum, V[r], V[r].sum()):
            fail("skyline row %d is dominated by another skyline row" % (r + 1))
    left = np.nonzero(out)[0]
    outs = rng.choice(left, min(a.samples, left.size), replace=False)
    for r in outs:
        if dominated_by(S, Ssum, V[r], V[r].sum()):
            continue
        if a.distinct and np.any(np.all(S == V[r], axis=1)):
            continue
        fail("row %d is left out, but no skyline row dominates it" % (r + 1))
    print("ok: %d of %d rows; %d in and %d out sampled" % (idx.size, n, ins.size, outs.size))


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "grid":
        x = np.load(sys.argv[2])
        k = float(sys.argv[3])
        np.save(sys.argv[4], (np.round(x * k) / k).astype(np.float32))
    elif len(sys.argv) > 1 and sys.argv[1] == "check":
        check(sys.argv[2:])
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main()
