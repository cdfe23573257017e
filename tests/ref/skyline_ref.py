#!/usr/bin/env python3
"""Brute-force skyline checker for tests/skyline.bats (O(n^2), numpy).

  skyline_ref.py [-f LIST] [-p LIST] [--distinct] [-Q QUERIES] FILE
      prints the 1-based numbers of the skyline rows of FILE (text or NPY)
  skyline_ref.py [-t C] [--header N] [--rows] [the options above] FILE
      the same for files with text columns: the lines are split by Python's csv module
      (delimiter C, no quoting) or, without -t, at blanks and commas; only the chosen
      columns are read as numbers; --rows prints the header lines and the skyline's
      rows as they appeared instead of their numbers
  skyline_ref.py cases GROUP DIR
      writes the test cases of GROUP (classic, prefer, distinct, spatial): for each,
      DIR/NAME.in, DIR/NAME.args (options), DIR/NAME.q (query points), DIR/NAME.ref
  skyline_ref.py textgen N SEED DELIM
      a file with a header line, text columns (blanks inside) and numbers
  skyline_ref.py props SEED COUNT [--gpu] [--cap N]
      property tests: random shapes and sizes (and --max-device-mem bounds) run
      through the skyline on PATH and checked (see props below)
  skyline_ref.py gen KIND N D SEED [--ties K] [--dups M] [--npy] [--carry]
      test data: KIND indep, corr, anti (Borzsonyi et al. 2001, numpy's generator),
      grid (integers 0..K-1); --ties K rounds to multiples of 1/K; --dups M repeats M
      random rows; --carry adds a first column of row ids and a last of noise

Classic dominance compares the numbers exactly as Python reads them (float64, or
float32 from an NPY <f4). Spatial dominance uses every query point (not only the
hull) and exact integer arithmetic on the float32 coordinates.
"""
import csv
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


def read_table(path, delim, header, choose):
    """(numbers of the chosen columns, data lines as they appeared, header lines) of a
    text file whose columns may be text: choose(ncols) names the columns to read."""
    with open(path, newline='') as f:
        lines = [l[:-1] if l.endswith('\n') else l for l in f]
    lines = [l[:-1] if l.endswith('\r') else l for l in lines]
    head, rows, raw, cols = lines[:header], [], [], None
    for l in lines[header:]:
        if l.strip() == '':
            continue
        if delim is not None:
            if l.lstrip().startswith('#'):
                continue
            tok = next(csv.reader([l], delimiter=delim, quoting=csv.QUOTE_NONE))
        else:
            body = l.split('#', 1)[0].strip()
            if body == '':
                continue
            tok = re.split(r'\s*,\s*|\s+', body)
        if cols is None:
            cols = choose(len(tok))
        rows.append([float(tok[c]) for c in cols])
        raw.append(l)
    X = np.array(rows, dtype=np.float64).reshape(len(rows), len(cols or []))
    return X, raw, head


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


def matrix(P, fspec=None, prefer=None, Q=None):
    """(X, keys): each row as numbers where smaller is better in every column (for
    spatial, the ranks of its exact squared distances to every query point), and the
    values that make two rows equal."""
    n = P.shape[0]
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
    return X, keys


def skyline(P, fspec=None, prefer=None, distinct=False, Q=None):
    n = P.shape[0]
    if n == 0:
        return []
    X, keys = matrix(P, fspec, prefer, Q)
    keep = ~dominated(X)
    if distinct:
        keep = first_of_equal(keys, keep)
    return [i + 1 for i in range(n) if keep[i]]


def dominated_by(X, S):
    """For each row of X, whether some row of S dominates it (blocks of X)."""
    out = np.zeros(X.shape[0], dtype=bool)
    if len(S) == 0:
        return out
    step = max(1, 4000000 // max(1, len(S) * X.shape[1]))
    for a in range(0, X.shape[0], step):
        B = X[a:a + step]
        le = (S[None, :, :] <= B[:, None, :]).all(axis=2)
        lt = (S[None, :, :] < B[:, None, :]).any(axis=2)
        out[a:a + step] = (le & lt).any(axis=1)
    return out


def verify(P, idx, fspec=None, prefer=None, distinct=False, Q=None):
    """'' when idx (1-based row numbers) is the skyline, else what is wrong. Exact and
    O(distinct rows x skyline): no row dominates a kept row, and every other row is
    dominated by a kept one (a dominated row is dominated by a row of the skyline) or,
    with distinct, equals an earlier kept row."""
    n = P.shape[0]
    if list(idx) != sorted(set(idx)) or any(i < 1 or i > n for i in idx):
        return 'row numbers not ascending, repeated or out of range'
    if n == 0:
        return ''
    X, keys = matrix(P, fspec, prefer, Q)
    X = np.unique(X, axis=1)    # equal columns (query points) decide alike
    # equal rows dominate and are dominated alike: decide for each distinct row once
    U, inv = np.unique(X, axis=0, return_inverse=True)
    inv = inv.ravel()
    kept = np.array(idx, dtype=np.int64) - 1
    ku = np.unique(inv[kept])
    bad = dominated_by(U[ku], U)
    if bad.any():
        return 'row %d is kept but dominated' % (kept[np.isin(inv[kept], ku[bad])][0] + 1)
    first = {}
    for i in kept:
        if keys[i] in first:
            if distinct:
                return 'rows %d and %d are equal and both kept' % (first[keys[i]] + 1, i + 1)
        else:
            first[keys[i]] = i
    rest = np.setdiff1d(np.arange(n), kept)
    copy = np.isin(inv[rest], ku)
    ru = np.unique(inv[rest[~copy]])
    free = ru[~dominated_by(U[ru], U[ku])]
    if len(free):
        return 'row %d is left out but not dominated' % (rest[np.isin(inv[rest], free)][0] + 1)
    for r in rest[copy]:
        f = first.get(keys[r])
        if not (distinct and f is not None and f < r):
            return 'row %d is left out but not dominated' % (r + 1)
    return ''


def parse_args(argv):
    opts = {'fspec': None, 'prefer': None, 'distinct': False, 'Q': None}
    files = []
    it = iter(argv)
    for a in it:
        if a in ('-t', '--header', '--rows'):
            continue    # main() reads these
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
        # for the dominator regions' grid (skyline_cpu.c): a skyline of hundreds of
        # points in a dense band, coordinates of 1e30 and 1e-30, a grid of one column
        t = rng.random(6000)
        band = f32(np.column_stack([t, 1 - t]) + 0.02 * rng.standard_normal((6000, 2)))
        out.append(('band', band, [], f32(0.45 + 0.1 * rng.random((16, 2)))))
        out.append(('huge', f32(1e30 * rng.random((1500, 2))), [], f32(1e30 * rng.random((5, 2)))))
        out.append(('tiny', f32(1e-30 * rng.random((1500, 2))), [], f32(1e-30 * rng.random((5, 2)))))
        V = np.column_stack([np.full(1500, 0.5), rng.random(1500)])
        V[rng.integers(0, 1500, 300)] = V[rng.integers(0, 1500, 300)]
        out.append(('vertical', f32(V), ['--distinct'], f32(rng.random((4, 2)))))
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


def textgen(argv):
    """textgen N SEED DELIM: a line of column names, then N rows: a name (words with
    blanks, and '#' and commas where they are not the delimiter), two numbers, a note
    that is often empty, a third number; numbers in several spellings, some with blanks
    around them; blank lines and comment lines here and there."""
    n, seed, delim = int(argv[0]), int(argv[1]), argv[2]
    rng = np.random.default_rng(seed)
    words = ['Grand', 'Hotel', 'am', 'Park', 'Inn', 'Old Town', 'No. 7', 'Suite #4',
             'Rue de la Paix', 'Haus', 'B&B', "Miller's", 'Lodge, East', 'Zur Post']
    words = [w for w in words if delim not in w]
    spell = [lambda v: repr(float(v)), lambda v: '%.3f' % v, lambda v: '%.6e' % v,
             lambda v: ' %g ' % v, lambda v: '%d' % round(v * 100)]
    out = [delim.join(['name', 'price', 'rating', 'note', 'km'])]
    for i in range(n):
        if rng.random() < 0.03:
            out.append('')
        if rng.random() < 0.02:
            out.append('# a comment' + delim + 'with a delimiter')
        name = ' '.join(rng.choice(words, int(rng.integers(1, 4))))
        note = '' if rng.random() < 0.6 else str(rng.choice(words))
        x, y, z = rng.integers(0, 40, 3) / 8.0
        f = [spell[int(rng.integers(len(spell)))] for _ in range(3)]
        out.append(delim.join([name, f[0](x), f[1](y), note, f[2](z)]))
    sys.stdout.write('\n'.join(out) + '\n')


# Sizes the paths split work by (kernels/skyline_tune.h): the GPU's block and tile
# (256), the first batch (CPU 1024, GPU 4096) and the largest (CPU 65536, GPU 262144).
TUNE_SIZES = (256, 1024, 4096, 65536, 262144)
PRIMES = (2, 3, 5, 7, 13, 31, 127, 509, 997, 2039, 7919, 17389)


def run_sky(args, timeout=60):
    """(exit status, stdout, stderr) of skyline with args; status None on a timeout.
    The limit scales by ACCELKIT_TIME_SCALE (tests/helpers.bash: 20 under compute-sanitizer)."""
    timeout *= float(os.environ.get('ACCELKIT_TIME_SCALE', '1'))
    import subprocess
    try:
        r = subprocess.run(['skyline'] + args, capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, b'', b''
    return r.returncode, r.stdout, r.stderr


def gpu_row_bytes(d, f64, spatial):
    """Device bytes a row of a part takes (skyline_classic.cu, skyline_spatial.cu)."""
    if spatial:
        return 140
    dd = next((w for w in (2, 4, 8, 12, 16) if d <= w), d)
    return (8 if f64 else 4) * d + 4 * d + 8 * dd + 100


def props(argv):
    """props SEED COUNT [--gpu] [--cap N]: COUNT random shapes (n of 1, primes, and one below and
    above each size in TUNE_SIZES; d = 1..16; 1 to 20 query points, some on one point
    or one line) against verify(), each run under a time limit. --gpu: each also under
    random --max-device-mem bounds from one part's least up, whose output must be the
    unbounded run's bytes (or the refusal that the skyline outgrows the parts). --cap: the
    most points a case has (300000 with --gpu, else 70000)."""
    import tempfile
    seed, count, gpu = int(argv[0]), int(argv[1]), '--gpu' in argv
    rng = np.random.default_rng(seed)
    tmp = tempfile.mkdtemp()
    cap = int(argv[argv.index('--cap') + 1]) if '--cap' in argv else 300000 if gpu else 70000
    sizes = [1] + list(PRIMES) + [t + e for t in TUNE_SIZES for e in (-1, 0, 1)]
    sizes = [v for v in sizes if v <= cap]
    fails, runs, split, refused = [], 0, 0, 0
    for case in range(count):
        n = int(rng.choice(sizes))
        spatial = rng.random() < 0.35
        f = os.path.join(tmp, 'c%d' % case)
        args, Q = ['--index'], None
        if spatial:
            n = min(n, 20000 if gpu else 8192)
            if rng.random() < 0.3:
                P = rng.integers(0, 64, (n, 2)).astype(np.float64)
            else:
                P = f32(rng.random((n, 2)))
            nq = int(rng.integers(1, 21))
            shape = rng.choice(['point', 'line', 'any'])
            if shape == 'point':
                Q = np.tile(P[rng.integers(0, n)] if n else [0.5, 0.5], (nq, 1))
            elif shape == 'line':
                t = f32(rng.random(nq))
                Q = f32(np.column_stack([0.2 + 0.5 * t, 0.3 + 0.25 * t]))
            else:
                Q = f32(0.3 + 0.4 * rng.random((nq, 2)))
            write(f + '.q', Q)
            args += ['-Q', f + '.q']
            d = 2
        else:
            # large skylines make verify() slow (n x skyline): many columns and
            # anti-correlated data with the smaller sizes only
            d = int(rng.integers(1, 17 if n <= 2048 else 9 if n <= 8192 else 5))
            kind = rng.choice(['indep', 'corr', 'anti', 'grid'])
            if kind == 'anti':
                n = min(n, 8192)
            P = generate(kind, n, d, int(rng.integers(1 << 30)), ties=4 if kind == 'grid' else None)
            w = ['max' if b else 'min' for b in rng.integers(0, 2, d)]
            if n > 8192:
                w = [w[0]] * d   # mixed preferences turn correlated data anti-correlated
            args += ['-p', ','.join(w)]
        distinct = bool(rng.random() < 0.3)
        if distinct:
            args.append('--distinct')
        npy = bool(rng.random() < 0.4)
        if npy:
            P = f32(P)
            np.save(f + '.npy', P.astype(np.float32))
            path = f + '.npy'
        else:
            write(f + '.in', P)
            path = f + '.in'
        opts, _ = parse_args(args[1:])
        what = '%s n=%d d=%d%s' % ('spatial' if spatial else 'classic', n, d,
                                   ' |Q|=%d' % len(Q) if spatial else '')
        st, out, err = run_sky(args + [path])
        runs += 1
        if st != 0:
            fails.append('FAIL %s %s: exit %s %s' % (what, ' '.join(args), st, err[:300]))
            continue
        idx = [int(v) for v in out.split()]
        why = verify(P, idx, **opts)
        if why:
            fails.append('FAIL %s %s: %s' % (what, ' '.join(args), why))
            continue
        if not gpu:
            continue
        per = gpu_row_bytes(d, not npy, spatial)
        least = (1 << 20) + 1024 * per + 1
        top = max(2.0, 2.0 * n * per / least)
        for b in sorted({least, int(least * 2 ** (rng.random() * np.log2(top))),
                         int(least * 2 ** (rng.random() * np.log2(top)))}):
            st2, out2, err2 = run_sky(['-v', '--max-device-mem', str(b)] + args + [path])
            runs += 1
            if st2 == 1 and b'raise --max-device-mem' in err2:
                refused += 1
            elif st2 != 0 or out2 != out:
                fails.append('FAIL %s %s --max-device-mem %d: exit %s, %s' % (
                    what, ' '.join(args), b, st2,
                    'output differs' if st2 == 0 else err2[:300]))
            elif b'split into parts' in err2:
                split += 1
    for line in fails:
        print(line)
    print('%s %d cases, %d runs, %d split under --max-device-mem, %d refused' % (
        'ok' if not fails else 'failed', count, runs, split, refused))


def main(argv):
    if argv and argv[0] == 'gen':
        gen(argv[1:])
        return
    if argv and argv[0] == 'cases':
        cases(argv[1], argv[2])
        return
    if argv and argv[0] == 'textgen':
        textgen(argv[1:])
        return
    if argv and argv[0] == 'props':
        props(argv[1:])
        return
    if not any(a in ('-t', '--header', '--rows') for a in argv):
        opts, files = parse_args(argv)
        out = skyline(read_rows(files[0]), **opts)
        sys.stdout.write(''.join('%d\n' % i for i in out))
        return
    delim, header, rows, q, rest, it = None, 0, False, None, [], iter(argv)
    for a in it:
        if a == '-t':
            delim = next(it)
        elif a == '--header':
            header = int(next(it))
        elif a == '--rows':
            rows = True
        elif a in ('-Q', '--query'):
            q = next(it)
        else:
            rest.append(a)
    opts, files = parse_args(rest)
    fspec = opts.pop('fspec')
    if q is not None:
        opts['Q'] = read_table(q, delim, header,
                               lambda n: [0, 1] if n == 2 else fields(fspec, n))[0]
    X, raw, head = read_table(files[0], delim, header, lambda n: fields(fspec, n))
    out = skyline(X, **opts)
    if rows:
        sys.stdout.write(''.join(h + '\n' for h in head))
        sys.stdout.write(''.join(raw[i - 1] + '\n' for i in out))
    else:
        sys.stdout.write(''.join('%d\n' % i for i in out))


if __name__ == '__main__':
    main(sys.argv[1:])
