#!/usr/bin/env python3
"""editdist4r_modes.py: the test suite's reference for editdist4r --mode and its band:
python3-edlib (NW, HW, SHW) and python3-levenshtein, on pairs made here with a seed.

  gen SEED N LEN KIND        N "A<TAB>B" lines: KIND random (unrelated, 0..LEN each),
                             reads (A a piece of a random B of LEN with edits, as a read
                             in its reference window), ties (a two-letter alphabet, up
                             to LEN: many equally good ends and starts), edge (empty
                             strings, A longer than B, one-symbol strings)
  long LEN RATE SEED         one pair: random DNA of LEN and a copy with edits at RATE
  expect MODE [K] < PAIRS    the lines editdist4r --mode MODE [-k K] must print: the
                             distance, and for infix and prefix edlib's first location
                             (START and END, END inclusive; an empty A or B, which
                             edlib does not take, by the definition: 0 and -1 for a
                             match of no column). global also by python-Levenshtein,
                             which must agree with edlib (up to 10^10 cells a pair).
  check MODE PAIRS OUT       OUT (editdist4r --mode MODE --path) turns each A into B, or
                             B[START..END], by its CIGAR at the distance's cost
  selftest                   the textbook DP (used beyond 256 symbols) against edlib
  unicode SEED N LEN [--wide]   N pairs of words over a few non-ASCII letters (for
                             -u), or over 300 (--wide: more than 256 codes, so edlib
                             cannot take them and the textbook DP here stands in)
"""
import random
import re
import sys

import edlib
import Levenshtein

EDLIB = {"global": "NW", "infix": "HW", "prefix": "SHW"}


def mutate(rng, s, rate, alpha):
    out = []
    for c in s:
        r = rng.random()
        if r < rate / 3:
            out.append(rng.choice(alpha))          # substitution
        elif r < 2 * rate / 3:
            out.append(rng.choice(alpha))          # insertion
            out.append(c)
        elif r < rate:
            pass                                   # deletion
        else:
            out.append(c)
    return "".join(out)


def rand(rng, n, alpha):
    return "".join(rng.choice(alpha) for _ in range(n))


def gen(seed, n, length, kind):
    rng = random.Random(seed)
    for _ in range(n):
        if kind == "random":
            a = rand(rng, rng.randint(0, length), "ACGT")
            b = rand(rng, rng.randint(0, length), "ACGT")
        elif kind == "reads":
            b = rand(rng, length, "ACGT")
            rl = rng.randint(1, max(1, length // 3))
            p = rng.randint(0, length - rl)
            a = mutate(rng, b[p:p + rl], rng.choice([0, 0.02, 0.05, 0.15]), "ACGT")
        elif kind == "ties":
            a = rand(rng, rng.randint(1, length), "AB")
            b = rand(rng, rng.randint(1, 2 * length), "AB")
        elif kind == "edge":
            c = rng.randint(0, 5)
            a, b = [("", rand(rng, rng.randint(0, length), "ACGT")),
                    (rand(rng, rng.randint(1, length), "ACGT"), ""),
                    (rand(rng, length, "ACGT"), rand(rng, rng.randint(1, length // 2 + 1), "ACGT")),
                    ("A", rand(rng, rng.randint(1, length), "ACGT")),
                    (rand(rng, rng.randint(1, length), "ACGT"), "C"),
                    ("", "")][c]
        else:
            sys.exit("gen: KIND is random, reads, ties or edge")
        print(f"{a}\t{b}")


def pairs(f):
    for line in f:
        a, b = line.rstrip("\n").split("\t")
        yield a, b


def lastrow(a, b, free_start):
    """The last row of the DP of a against b, row 0 all 0 (free_start) or 0..len(b)."""
    row = [0] * (len(b) + 1) if free_start else list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        prev, row = row, [i] + [0] * len(b)
        for j, y in enumerate(b, 1):
            row[j] = min(prev[j - 1] + (x != y), prev[j] + 1, row[j - 1] + 1)
    return row


def dp_best(a, b, mode):
    """The modes by the textbook DP, for alphabets edlib does not take (over 256
    symbols): edlib's choices (the first end; column 0, no symbol of b, is first; an
    infix match starts where the longest one ending there at that cost does)."""
    row = lastrow(a, b, mode == "infix")
    d = min(row)
    e = row.index(d)
    if e == 0:
        return d, 0, -1
    if mode == "prefix":
        return d, 0, e - 1
    rev = lastrow(a[::-1], b[:e][::-1], False)
    p = max(j for j in range(1, e + 1) if rev[j] == d)
    return d, e - p, e - 1


def best(a, b, mode):
    """(distance, start, end) as editdist4r prints them."""
    if mode != "global" and len(set(a) | set(b)) > 256:
        return dp_best(a, b, mode)
    if not a or not b:
        if mode == "global":
            return max(len(a), len(b)), 0, len(b) - 1
        return len(a), 0, -1
    r = edlib.align(a, b, mode=EDLIB[mode], task="locations")
    d = r["editDistance"]
    if mode == "global" and len(a) * len(b) <= 10 ** 10:   # a 1 Mb pair: edlib alone
        lev = Levenshtein.distance(a, b)
        if lev != d:
            sys.exit(f"edlib {d} and python-Levenshtein {lev} disagree")
        return d, 0, len(b) - 1
    s, e = r["locations"][0]
    return d, 0 if s is None else s, e


def selftest():
    """dp_best against edlib on small pairs of a two-letter alphabet (ties everywhere)."""
    rng = random.Random(36)
    for _ in range(2000):
        a = rand(rng, rng.randint(1, 8), "AB")
        b = rand(rng, rng.randint(1, 12), "AB")
        for mode in ("infix", "prefix"):
            r = edlib.align(a, b, mode=EDLIB[mode], task="locations")
            s, e = r["locations"][0]
            if dp_best(a, b, mode) != (r["editDistance"], s or 0, e):
                sys.exit(f"dp_best {mode} {a} {b}: {dp_best(a, b, mode)}, edlib {r}")
    print("dp_best agrees with edlib")


def expect(mode, k):
    for a, b in pairs(sys.stdin):
        d, s, e = best(a, b, mode)
        if k is not None and d > k:
            d, s, e = -1, -1, -1
        print(d if mode == "global" else f"{d}\t{s}\t{e}")


def walk(a, piece, cigar):
    """Whether the CIGAR turns a into piece ('=' equal symbols, 'X' different ones, 'D'
    a symbol of a dropped, 'I' one of piece put in), and its cost; None when not."""
    i = j = cost = 0
    for n, op in re.findall(r"(\d+)([=XID])", cigar):
        for _ in range(int(n)):
            if op in "=X":
                if i >= len(a) or j >= len(piece) or (a[i] == piece[j]) != (op == "="):
                    return None
                i, j = i + 1, j + 1
            elif op == "D":
                i += 1
            else:
                j += 1
            cost += op != "="
    return cost if i == len(a) and j == len(piece) else None


def check(mode, pfile, ofile):
    n = 0
    with open(pfile) as pf, open(ofile) as of:
        for no, ((a, b), line) in enumerate(zip(pairs(pf), of), 1):
            f = line.rstrip("\n").split("\t")
            d, cigar = int(f[0]), f[-1]
            n += 1
            if d < 0:
                if cigar != "*":
                    sys.exit(f"pair {no}: -1 without *")
                continue
            piece = b if mode == "global" else b[int(f[1]):int(f[2]) + 1]
            if walk(a, piece, cigar) != d:
                sys.exit(f"pair {no}: the CIGAR {cigar[:60]} does not turn A into its "
                         f"piece of B at cost {d}")
    print(f"{n} ok")


def longpair(length, rate, seed):
    rng = random.Random(seed)
    a = rand(rng, length, "ACGT")
    print(f"{a}\t{mutate(rng, a, rate, 'ACGT')}")


def unicode(seed, n, length, wide=False):
    rng = random.Random(seed)
    alpha = "äöüßéλπж"
    if wide:                # more than 256 characters: -u's code points, the DP
        alpha = "".join(chr(0x400 + i) for i in range(300))
    for _ in range(n):
        b = rand(rng, rng.randint(1, length), alpha)
        p = rng.randint(0, len(b) - 1)
        a = mutate(rng, b[p:p + rng.randint(1, length // 2 + 1)], 0.1, alpha) or "ä"
        if wide:            # the 300 characters in both, so that they share them all
            w = "".join(rng.sample(alpha, len(alpha)))
            a, b = w + a, b + w
        print(f"{a}\t{b}")


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "gen":
        gen(int(args[0]), int(args[1]), int(args[2]), args[3])
    elif cmd == "long":
        longpair(int(args[0]), float(args[1]), int(args[2]))
    elif cmd == "expect":
        expect(args[0], int(args[1]) if len(args) > 1 else None)
    elif cmd == "check":
        check(args[0], args[1], args[2])
    elif cmd == "selftest":
        selftest()
    elif cmd == "unicode":
        unicode(int(args[0]), int(args[1]), int(args[2]), "--wide" in args[3:])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
