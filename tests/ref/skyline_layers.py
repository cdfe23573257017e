#!/usr/bin/env python3
"""Non-dominated sorting by its definition, for tests/skyline_layers.bats (numpy).

  skyline_layers.py [-f LIST] [-p LIST] [-n N] [--count] FILE
      prints "LAYER<TAB>ROW" (ROW 1-based) for every row of FILE (text or NPY) in
      input order: layer 1 the rows no row dominates, layer k the rows no row left
      after layers 1..k-1 dominates; a row dominates another when it is at least as
      good in every chosen column and better in one (least by default, -p max per
      column). -n N: the first N layers' rows only. --count: "LAYER<TAB>ROWS" a layer.
"""
import argparse
import sys

import numpy as np


def cols(spec, width):
    out = []
    for part in spec.split(","):
        if "-" in part:
            a, b = part.split("-")
            out += range(int(a), (int(b) if b else width) + 1)
        else:
            out.append(int(part))
    return sorted(set(c - 1 for c in out))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-f")
    ap.add_argument("-p")
    ap.add_argument("-n", type=int, default=0)
    ap.add_argument("--count", action="store_true")
    ap.add_argument("file")
    a = ap.parse_args()
    x = np.load(a.file) if a.file.endswith(".npy") else np.loadtxt(a.file, ndmin=2)
    x = x.astype(np.float64)
    x = x[:, cols(a.f, x.shape[1])] if a.f else x
    if a.p:
        prefs = a.p.split(",")
        if len(prefs) == 1:
            prefs *= x.shape[1]
        x = x * np.array([-1.0 if p == "max" else 1.0 for p in prefs])
    n = x.shape[0]
    layer = np.zeros(n, dtype=np.int64)
    left = np.arange(n)
    k = 0
    while left.size and (a.n == 0 or k < a.n):
        k += 1
        y = x[left]
        le = (y[:, None, :] <= y[None, :, :]).all(axis=2)   # [i, j]: i at least as good as j
        lt = (y[:, None, :] < y[None, :, :]).any(axis=2)
        dominated = (le & lt).any(axis=0)
        layer[left[~dominated]] = k
        left = left[dominated]
    if a.count:
        for l in range(1, k + 1):
            print(f"{l}\t{int((layer == l).sum())}")
        return
    for i in range(n):
        if layer[i]:
            print(f"{layer[i]}\t{i + 1}")


if __name__ == "__main__":
    main()
