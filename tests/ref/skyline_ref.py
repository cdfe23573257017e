#!/usr/bin/env python3
"""Brute-force skyline checker for tests/skyline.bats (O(n^2), numpy).

  skyline_ref.py [-f LIST] [-p LIST] [--distinct] [-Q QUERIES] FILE
      prints the 1-based numbers of the skyline rows of FILE (text or NPY)
  skyline_ref.py cases GROUP DIR
      writes the test cases of GROUP (classic, prefer, distinct, spatial): for each,
      DIR/NAME.in, DIR/NAME.args (options), DIR/NAME.q (query points), DIR/NAME.ref
  skyline_ref.py gen KIND N D SEED [--ties K] [--dups M] [--npy] [--carry]
      test data: KIND indep, corr, anti (Borzsonyi et al. 2001, numpy's generator),
      grid (integers 0..K-1); --ties K rounds to multiples of 1/K; --dups M repeats M
      random rows; --carry adds a first column of row ids and a last of noise

Classic dominance compares the numbers exactly as Python reads them (float64, or
float32 from an NPY <f4). Spatial dominance uses every query point (not only the
hull) and exact integer arithmetic on the float32 coordinates.
"""
import os
import re
import sys
from fractions import Fraction

import numpy as np


def read_rows(path):
    with open(path, 'rb') as f:
        head = f.read(6)
    if head == b'\x93NUMPY':
        a = np.load(path)
        if a.ndim == 1:
            a = a.reshape(-1, 1)
        return a
    rows = []
    with open(path) as f:
        for line in f:
            line = line.split('#', 1)[0].strip()
            if not line:
                continue
            rows.append([float(t) for t in re.split(r'[,\s]+', line) if t != ''])
    if not rows:
        return np.zeros((0, 0))
    return np.array(rows, dtype=np.float64)


def fields(spec, ncols):
    if spec is None:
        return list(range(ncols))
    chosen = set()
    for item in spec.split(','):
        if '-' in item:
            lo, hi = item.split('-')
            lo = int(lo) if lo else 1
            hi = int(hi) if hi else ncols
        else:
            lo = hi = int(item)
        chosen.update(range(lo - 1, min(hi, ncols)))
    return sorted(chosen)


def dominated(X):
    """dominated[i]: some row is <= row i everywhere and < somewhere."""
    n = X.shape[0]
    out = np.zeros(n, dtype=bool)
    step = max(1, 2000000 // max(1, n * X.shape[1]))
    for a in range(0, n, step):
        B = X[a:a + step]
        le = (X[None, :, :] <= B[:, None, :]).all(axis=2)
        lt = (X[None, :, :] < B[:, None, :]).any(axis=2)
        out[a:a + step] = (le & lt).any(axis=1)
    return out


def first_of_equal(keys, keep):
    seen = set()
    for i in range(len(keys)):
        if keep[i]:
            if keys[i] in seen:
                keep[i] = False
            seen.add(keys[i])
    return keep


def exact_ints(values):
    """float32 coordinates as integers on one common power-of-two grid."""
    fr = [Fraction(float(v)) for v in values]
    den = max([f.denominator for f in fr] + [1])
    return [int(f * den) for f in fr]


def ranks(col):
    order = {v: k for k, v in enumerate(sorted(set(col)))}
    return [order[v] for v in col]


def skyline(P, fspec=None, prefer=None, distinct=False, Q=None):
    n = P.shape[0]
    if n == 0:
        return []
    cols = fields(fspec, P.shape[1])
    if Q is not None:
        qcols = [0, 1] if Q.shape[1] == 2 else fields(fspec, Q.shape[1])
        px = P[:, cols].astype(np.float32)
        qx = Q[:, qcols].astype(np.float32)
        ints = exact_ints(list(px.ravel()) + list(qx.ravel()))
        pi, qi = ints[:2 * n], ints[2 * n:]
        D = []
        for k in range(len(qi) // 2):
            a, b = qi[2 * k], qi[2 * k + 1]
            D.append(ranks([(pi[2 * i] - a) ** 2 + (pi[2 * i + 1] - b) ** 2
                            for i in range(n)]))
        X = np.array(D, dtype=np.int64).T
        keys = [(pi[2 * i], pi[2 * i + 1]) for i in range(n)]
    else:
        X = P[:, cols].astype(np.float64)
        if prefer:
            p = prefer.split(',')
            if len(p) == 1:
                p = p * len(cols)
            for j, w in enumerate(p):
                if w == 'max':
                    X[:, j] = -X[:, j]
        keys = [tuple(r) for r in X.tolist()]
    keep = ~dominated(X)
    if distinct:
        keep = first_of_equal(keys, keep)
    return [i + 1 for i in range(n) if keep[i]]


def parse_args(argv):
    opts = {'fspec': None, 'prefer': None, 'distinct': False, 'Q': None}
    files = []
    it = iter(argv)
    for a in it:
        if a in ('-f', '--fields'):
            opts['fspec'] = next(it)
        elif a in ('-p', '--prefer'):
            opts['prefer'] = next(it)
        elif a in ('-Q', '--query'):
            opts['Q'] = read_rows(next(it))
        elif a == '--distinct':
            opts['distinct'] = True
        else:
            files.append(a)
    return opts, files


def generate(kind, n, d, seed, ties=None, dups=0, carry=False):
    """Test data: Borzsonyi et al.'s distributions (numpy's generator), or integers."""
    rng = np.random.default_rng(seed)
    if kind == 'indep':
        X = rng.random((n, d))
    elif kind == 'grid':
        X = rng.integers(0, ties or 8, (n, d)).astype(np.float64)
    else:
        X = np.empty((n, d))
        got = 0
        while got < n:
            m = 4 * (n - got) + 16
            if kind == 'corr':
                v = rng.random((m, d)).mean(axis=1)
            else:
                v = 0.25 + 0.5 * rng.random((m, 12)).mean(axis=1)
            l = np.where(v <= 0.5, v, 1 - v)
            Y = np.repeat(v[:, None], d, axis=1)
            for j in range(d):
                if kind == 'corr':
                    h = -l + 2 * l * rng.random((m, 12)).mean(axis=1)
                else:
                    h = rng.uniform(-l, l)
                Y[:, j] += h
                Y[:, (j + 1) % d] -= h
            Y = Y[((Y >= 0) & (Y <= 1)).all(axis=1)][:n - got]
            X[got:got + len(Y)] = Y
            got += len(Y)
    if ties and kind != 'grid':
        X = np.round(X * ties) / ties
    if dups and n > 0:
        X[rng.integers(0, n, dups)] = X[rng.integers(0, n, dups)]
    if carry:
        X = np.hstack([np.arange(1, n + 1)[:, None], X, rng.random((n, 1))])
    return X


def write(path, X):
    with open(path, 'w') as f:
        for r in X:
            f.write('\t'.join(repr(float(v)) for v in r) + '\n')


def gen(argv):
    kind, n, d, seed = argv[0], int(argv[1]), int(argv[2]), int(argv[3])
    rest = argv[4:]
    opt = lambda k: int(rest[rest.index(k) + 1]) if k in rest else None
    X = generate(kind, n, d, seed, opt('--ties'), opt('--dups') or 0, '--carry' in rest)
    if '--npy' in rest:
        np.save(sys.stdout.buffer, X.astype(np.float32))
    else:
        for r in X:
            sys.stdout.write('\t'.join(repr(float(v)) for v in r) + '\n')


def f32(X):
    """Values rounded to float32, as the spatial skyline reads coordinates."""
    return np.asarray(X, dtype=np.float32).astype(np.float64)


def cases(group, d):
    """Writes DIR/NAME.in, .args (options), .q (query points), .ref for a group."""
    os.makedirs(d, exist_ok=True)
    rng = np.random.default_rng(11)
    out = []   # (name, P, args, Q or None)
    if group == 'classic':
        for kind in ('indep', 'corr', 'anti'):
            for dim in range(1, 21):
                extra = {'ties': 16, 'dups': 40} if dim % 2 else {'dups': 20}
                out.append(('%s%02d' % (kind, dim), generate(kind, 600, dim, dim, **extra), [], None))
        out.append(('anti-batches', generate('anti', 9000, 3, 5), [], None))
        out.append(('indep-batches', generate('indep', 8000, 5, 6, ties=64), [], None))
    elif group == 'prefer':
        for dim in (2, 3, 5, 8, 13):
            w = ['max' if b else 'min' for b in rng.integers(0, 2, dim)]
            out.append(('mix%02d' % dim, generate('anti', 800, dim, 30 + dim, ties=8, carry=True),
                        ['-f', '2-%d' % (dim + 1), '-p', ','.join(w)], None))
        out.append(('allmax', generate('indep', 900, 4, 41, ties=10), ['-p', 'max'], None))
        out.append(('fields', generate('corr', 900, 6, 42, ties=10),
                    ['-f', '1,3-4,6', '-p', 'max,min,max,min'], None))
        out.append(('openrange', generate('anti', 700, 5, 43), ['-f', '3-', '-p', 'max,max,min'], None))
    elif group == 'distinct':
        for dim in (1, 2, 4, 7, 16):
            X = generate('grid', 1500, dim, 50 + dim, ties=4 if dim > 2 else 6)
            out.append(('grid%02d' % dim, X, ['--distinct'], None))
        out.append(('same', np.tile([[3.0, 1.0, 2.0]], (3000, 1)), ['--distinct'], None))
        out.append(('same-all', np.tile([[3.0, 1.0, 2.0]], (3000, 1)), [], None))
        out.append(('dups', generate('anti', 2000, 4, 59, dups=900), ['--distinct'], None))
    elif group == 'spatial':
        P = f32(rng.random((2000, 2)))
        out.append(('q1', P, [], f32(rng.random((1, 2)))))
        out.append(('q1-repeated', P, [], f32(np.tile(rng.random((1, 2)), (4, 1)))))
        out.append(('segment', P, [], f32(rng.random((2, 2)))))
        out.append(('collinear', P, [], f32([[0.1, 0.2], [0.3, 0.5], [0.2, 0.35], [0.7, 1.1],
                                             [0.3, 0.5]])))
        out.append(('float', P, [], f32(rng.random((8, 2)))))
        out.append(('float-small', f32(rng.random((3000, 2))), [],
                    f32(0.45 + 0.1 * rng.random((16, 2)))))
        G = rng.integers(0, 40, (3000, 2)).astype(np.float64)
        GQ = rng.integers(5, 35, (6, 2)).astype(np.float64)
        out.append(('grid', G, [], GQ))
        out.append(('grid-distinct', G, ['--distinct'], GQ))
        out.append(('grid-q1', G, [], GQ[:1]))
        out.append(('grid-segment', G, ['--distinct'], np.array([[4.0, 4.0], [28.0, 16.0]])))
        T = np.array([[0.0, 0.0], [32.0, 0.0], [0.0, 32.0]])
        edge = np.array([[t, 32.0 - t] for t in range(0, 33, 2)] + [[16.0, 0.0], [0.0, 7.0]])
        out.append(('inside', np.vstack([G, edge, T]), [], T))
        D = P.copy()
        D[rng.integers(0, 2000, 700)] = D[rng.integers(0, 2000, 700)]
        out.append(('dups', D, [], f32(rng.random((5, 2)))))
        out.append(('dups-distinct', D, ['--distinct'], f32(rng.random((5, 2)))))
        # coordinates of very different magnitudes: squared distances tie to within
        # the rounding of double, so the exact fallback decides
        x = f32(np.array([999.99994, 1000.0, 1000.00006])[rng.integers(0, 3, 1500)])
        y = f32(rng.uniform(-1e-4, 1e-4, 1500))
        NQ = f32([[0.0, 0.0], [1e-5, 0.0], [0.0, 1e-5], [3e-6, -2e-6]])
        out.append(('near-ties', np.column_stack([x, y]), [], NQ))
        C = np.hstack([np.arange(1, 2001)[:, None], P, rng.random((2000, 1))])
        out.append(('fields', C, ['-f', '2,3'], f32(rng.random((6, 2)))))
        Q4 = np.hstack([rng.random((7, 1)), f32(rng.random((7, 2))), rng.random((7, 1))])
        out.append(('query-fields', C, ['-f', '2-3'], Q4))
        out.append(('wide-hull', f32(rng.random((3000, 2))), [],
                    f32(np.column_stack([0.5 + 0.4 * np.cos(np.arange(40) * 0.157),
                                         0.5 + 0.4 * np.sin(np.arange(40) * 0.157)]))))
        out.append(('big', f32(rng.random((10000, 2))), [], f32(0.2 + 0.6 * rng.random((5, 2)))))
    for name, X, args, Q in out:
        base = os.path.join(d, name)
        write(base + '.in', X)
        if Q is not None:
            write(base + '.q', Q)
            args = args + ['-Q', base + '.q']
        with open(base + '.args', 'w') as f:
            f.write(' '.join(args) + '\n')
        opts, _ = parse_args(args)
        with open(base + '.ref', 'w') as f:
            f.write(''.join('%d\n' % i for i in skyline(X, **opts)))


def main(argv):
    if argv and argv[0] == 'gen':
        gen(argv[1:])
        return
    if argv and argv[0] == 'cases':
        cases(argv[1], argv[2])
        return
    opts, files = parse_args(argv)
    out = skyline(read_rows(files[0]), **opts)
    sys.stdout.write(''.join('%d\n' % i for i in out))


if __name__ == '__main__':
    main(sys.argv[1:])
