#!/usr/bin/env python3
"""Property tests of docsim over shapes and memory bounds (issue 14), for tests/docsim.bats.

  docsim_prop.py [--gpu] [--seed S] [--cases N] [--limit SEC] WORKDIR

Draws N cases with a fixed seed: dense, libsvm or text input; a corpus of 1 document, of
primes, and of one below and one above each size docsim_tune.h tiles by (cpu_rows 8, a
warp 32, diag_block 512, tile_rows 4096; above 512 only with few columns, to stay quick);
all pairs or queries; top-k, a threshold, or -k 0 (up to 600 documents). For each case
docsim runs under a time limit and its lines must be

  - what scikit-learn and numpy compute (docsim_ref.py's check: scores, true top-k);
  - the same bytes on -j 1 and on -j 3 with 64-byte input chunks (CPU);
  - with --gpu: the same bytes on the GPU in core as on the CPU, and the same bytes again
    under --max-device-mem bounds drawn from the least the GPU path says it needs
    ("one tile": what `--max-device-mem 1` reports) up to a resident run's worth, the
    least itself included where its 1 x 1 tiles are at most MAX_TILES (else a bound
    affording about that many tiles); one byte less than the least must be refused
    with exit 1 and the message naming it.

Prints one line per case and "ok: N cases"; exits 1 at the first failure, naming it.
"""
import argparse
import os
import re
import subprocess
import sys

import numpy as np
import scipy.sparse as sp
from sklearn.datasets import dump_svmlight_file

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import docsim_ref  # noqa: E402

MAX_TILES = 20000
SIZES = [1, 2, 3, 7, 8, 9, 13, 31, 32, 33, 97, 511, 512, 513, 4095, 4096, 4097]
WORDS = ["w%d" % i for i in range(300)]


class Failed(Exception):
    pass


def run(args, limit, env=None, expect=0):
    try:
        p = subprocess.run(["docsim"] + args, capture_output=True, timeout=limit,
                           env=dict(os.environ, **(env or {})))
    except subprocess.TimeoutExpired:
        raise Failed(f"docsim {' '.join(args)}: still running after {limit} s")
    if p.returncode != expect:
        raise Failed(f"docsim {' '.join(args)}: exit {p.returncode}, expected {expect}: "
                     f"{p.stderr.decode(errors='replace').strip()}")
    return p.stdout, p.stderr.decode(errors="replace")


def make_input(rng, kind, n, m, path):
    """n records of the kind (m: columns, or words a line for text) into path."""
    if kind == "dense":
        x = rng.standard_normal((n, m)).astype(np.float32)
        if n > 2:
            x[rng.integers(n)] = 0      # an all-zero row: scores 0
        np.save(path, x)
    elif kind == "libsvm":
        x = sp.random(n, m, density=min(1.0, 4.0 / m), format="csr", random_state=rng,
                      dtype=np.float64)
        # values of a continuous law: rows in exact proportion (equal cosines that float32
        # may order either way) do not occur
        x.data = 0.1 + 10 * x.data
        dump_svmlight_file(x, np.zeros(n), path, zero_based=True)
    else:
        p = 1.0 / np.arange(1, len(WORDS) + 1) ** 1.1
        p /= p.sum()
        with open(path, "w") as f:
            for i in range(n):
                k = int(rng.integers(0, m + 1))
                f.write(" ".join(WORDS[j] for j in rng.choice(len(WORDS), size=k, p=p)) + "\n")


def least_budget(args, limit):
    out, err = run(["-d", "gpu", "--max-device-mem", "1"] + args, limit, expect=1)
    g = re.search(r"it needs at least (\d+)", err)
    if g is None:
        raise Failed(f"--max-device-mem 1: no least size in: {err.strip()}")
    return int(g.group(1))


def one_case(c, rng, work, a):
    kind = ["dense", "libsvm", "text"][c % 3]
    big = rng.random() < 0.25
    n = int(rng.choice(SIZES if big else SIZES[:14]))
    m = int(rng.choice([1, 2, 3, 17] if n > 600 else [1, 2, 3, 17, 61, 130]))
    if kind == "text":
        m = int(rng.choice([0, 1, 3, 12]))
    queries = n > 1 and rng.random() < 0.4
    nq = int(rng.choice([1, 2, 7, 9, 33])) if queries else 0
    mode = rng.choice(["topk", "topk", "thr", "pairs"])
    if mode == "pairs" and n > 600:
        mode = "thr"    # millions of pairs: minutes for the reference's check
    # every document (n + 1) only up to 600: the GPU's lists cost O(k) a candidate
    k = int(rng.choice([1, 3, 10, n + 1] if n <= 600 else [1, 3, 10, 33]))
    ext = {"dense": ".npy", "libsvm": ".svm", "text": ".txt"}[kind]
    corpus = os.path.join(work, f"c{c}{ext}")
    make_input(rng, kind, n, m, corpus)
    args = ["--format", "dense" if kind == "dense" else kind]
    ref = argparse.Namespace(corpus=corpus, queries=None, format=kind, ids=False, weight="tfidf",
                             sublinear_tf=False, min_df=None, max_df=None, stop_words=None)
    if queries:
        qpath = os.path.join(work, f"q{c}{ext}")
        make_input(rng, kind, nq, m, qpath)
        args += ["-q", qpath]
        ref.queries = qpath
    thr = float(rng.choice([-0.5, 0.0, 0.1, 0.3])) if mode != "topk" else None
    if mode == "pairs":
        args += ["-k", "0", "-t", str(thr)]
    else:
        args += ["-k", str(k)] + (["-t", str(thr)] if thr is not None else [])
    args.append(corpus)
    desc = f"case {c}: {kind} {n} x {m}" + (f", {nq} queries" if queries else ", all pairs") + \
        f", {' '.join(args[2:-1])}"

    want, _ = run(["-d", "cpu", "-j", "1"] + args, a.limit)
    out = os.path.join(work, "out")
    open(out, "wb").write(want)
    chk = argparse.Namespace(output=out, k=k, threshold=thr, all_pairs=not queries,
                             pairs=mode == "pairs", ids=None)
    try:
        docsim_ref.check(chk, docsim_ref.sim_matrix(ref))
    except docsim_ref.Mismatch as e:
        raise Failed(f"{desc}: against the reference: {e}")
    got, _ = run(["-d", "cpu", "-j", "3"] + args, a.limit, env={"ACCELKIT_CHUNK_BYTES": "64"})
    if got != want:
        raise Failed(f"{desc}: -j 3 with 64-byte chunks differs from -j 1")
    bounds = []
    if a.gpu:
        got, _ = run(["-d", "gpu"] + args, a.limit)
        if got != want:
            raise Failed(f"{desc}: the GPU in core differs from the CPU")
        if not queries and n == 1:
            # a lone document has no pair to score: nothing goes to the device
            got, _ = run(["-d", "gpu", "--max-device-mem", "1"] + args, a.limit)
            if got != want:
                raise Failed(f"{desc}: a lone document under --max-device-mem 1 differs")
            return desc + "; a lone document, any bound"
        least = least_budget(args, a.limit)
        _, err = run(["-d", "gpu", "--max-device-mem", str(least - 1)] + args, a.limit, expect=1)
        if f"it needs at least {least};" not in err:
            raise Failed(f"{desc}: --max-device-mem {least - 1} does not name the least {least}: {err.strip()}")
        # the least bound means 1 x 1 tiles, one per score: beyond MAX_TILES of them the
        # lowest bound tested is one that affords tiles of about cells / MAX_TILES scores
        # (two tiles of float64 scores and their rows of K columns)
        cells = n * (nq if queries else n)
        K = len(WORDS) if kind == "text" else m
        low = least
        if cells > MAX_TILES:
            area = cells // MAX_TILES
            low += 16 * area + 16 * int(np.sqrt(area) + 1) * K + 4096
        top = max(low + 1, 8 * (n + nq) * K * 4 + (1 << 20))
        bounds = [low, int(low + rng.integers(1, 4096)),
                  int(np.exp(rng.uniform(np.log(low), np.log(top))))]
        for b in bounds:
            got, _ = run(["-d", "gpu", "--max-device-mem", str(b)] + args, a.limit)
            if got != want:
                raise Failed(f"{desc}: --max-device-mem {b} (least {least}) differs from in core")
    return desc + (f"; bounds {bounds}" if bounds else "")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("work")
    p.add_argument("--gpu", action="store_true")
    p.add_argument("--seed", type=int, default=14)
    p.add_argument("--cases", type=int, default=30)
    p.add_argument("--limit", type=float, default=60)
    a = p.parse_args()
    rng = np.random.default_rng(a.seed)
    try:
        for c in range(a.cases):
            print(one_case(c, rng, a.work, a))
    except Failed as e:
        print(f"docsim_prop: {e}", file=sys.stderr)
        sys.exit(1)
    print(f"ok: {a.cases} cases")


if __name__ == "__main__":
    main()
