"""editdist4r_unicode.py: the test suite's independent reference for editdist4r -u:
python-Levenshtein on Python strings (code points). Nothing here is shared with the
program.

  gen SEED N MAXLEN    N random pairs "A<TAB>B" of UTF-8 text: Latin letters and
                       accents, Greek, CJK and emoji, B an edited copy of A or
                       unrelated; some pairs share more than 254 distinct characters
  dist [K] < PAIRS     the distance of each pair by code point (-1 above K)
  check PAIRS OUT      OUT holds "D<TAB>CIGAR" lines: each CIGAR, run over code points,
                       must turn A into B at cost D, and D must be the distance
  matrix FA FB         the distance matrix of two one-string-a-line files
  records SEED N WIDE  N lines of text: with WIDE, each of 100 distinct CJK characters
                       out of 400 (so that all of them share more than 254), else
                       Latin and Greek
"""
import random
import re
import sys

import Levenshtein

ALPHABET = [chr(c) for c in
            list(range(0x61, 0x7B)) +        # a-z
            list(range(0xE0, 0x100)) +       # Latin-1 accented letters
            list(range(0x100, 0x180)) +      # Latin Extended-A
            list(range(0x3B1, 0x3CA)) +      # Greek
            list(range(0x4E00, 0x4E00 + 600)) +   # CJK
            list(range(0x1F600, 0x1F650))]   # emoji
CJK = [chr(c) for c in range(0x4E00, 0x4E00 + 400)]


def read_lines(path):
    with open(path, encoding="utf-8", newline="\n") as f:
        return f.read().split("\n")[:-1]


def edited(rng, a, sub):
    b = list(a)
    for _ in range(rng.randint(0, max(1, len(a) // 3))):
        op, p = rng.randint(0, 2), rng.randint(0, len(b))
        if op == 0:
            b.insert(p, rng.choice(sub))
        elif p < len(b):
            if op == 1:
                b[p] = rng.choice(sub)
            else:
                del b[p]
    return "".join(b)


def gen(seed, n, maxlen):
    rng = random.Random(seed)
    wide = 0
    for _ in range(n):
        if rng.random() < 0.05:
            # shares about 300 distinct CJK characters: more than a byte codes
            sub = rng.sample(CJK, 400)
            a = "".join(sub[:300]) + "".join(rng.choice(sub) for _ in range(50))
            a = "".join(rng.sample(a, len(a)))
            wide += 1
        else:
            sub = rng.sample(ALPHABET, rng.choice([2, 5, 30, 200, 500]))
            a = "".join(rng.choice(sub) for _ in range(rng.randint(0, maxlen)))
        if rng.random() < 0.2:
            b = "".join(rng.choice(sub) for _ in range(rng.randint(0, maxlen)))
        else:
            b = edited(rng, a, sub)
        print(a + "\t" + b)
    assert wide > 0 or n < 20


def dist(k):
    for line in sys.stdin.buffer.read().decode("utf-8").split("\n")[:-1]:
        a, b = line.split("\t")
        d = Levenshtein.distance(a, b)
        print(-1 if k >= 0 and d > k else d)


def check(pairs, out):
    lines, outs = read_lines(pairs), read_lines(out)
    assert len(lines) == len(outs), "%d pairs, %d output lines" % (len(lines), len(outs))
    for n, (line, o) in enumerate(zip(lines, outs), 1):
        a, b = line.split("\t")
        d, cigar = o.split("\t")
        d, want = int(d), Levenshtein.distance(a, b)
        assert d == want, "pair %d: distance %d, want %d" % (n, d, want)
        i = j = cost = 0
        for run, op in re.findall(r"(\d+)([=XID])", cigar):
            for _ in range(int(run)):
                if op in "=X":
                    assert (a[i] == b[j]) == (op == "="), "pair %d: %s wrong" % (n, op)
                    cost += op == "X"
                    i, j = i + 1, j + 1
                elif op == "I":
                    cost, j = cost + 1, j + 1
                else:
                    cost, i = cost + 1, i + 1
        assert (i, j) == (len(a), len(b)), "pair %d: CIGAR covers %d/%d, %d/%d" % (
            n, i, len(a), j, len(b))
        assert cost == d, "pair %d: CIGAR costs %d, distance %d" % (n, cost, d)
    print("ok", len(lines))


def matrix(fa, fb):
    A, B = read_lines(fa), read_lines(fb)
    for a in A:
        print("\t".join(str(Levenshtein.distance(a, b)) for b in B))


def records(seed, n, wide):
    rng = random.Random(seed)
    for _ in range(n):
        if wide:
            sub = rng.sample(CJK, 100)
            print("".join(rng.sample(sub, 100)) + "".join(rng.choice(sub) for _ in range(20)))
        else:
            sub = ALPHABET[:26 + 32 + 128 + 25]
            print("".join(rng.choice(sub) for _ in range(rng.randint(0, 60))))


def main():
    sys.stdout.reconfigure(encoding="utf-8", newline="\n")
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "gen":
        gen(int(args[0]), int(args[1]), int(args[2]))
    elif cmd == "dist":
        dist(int(args[0]) if args else -1)
    elif cmd == "check":
        check(args[0], args[1])
    elif cmd == "matrix":
        matrix(args[0], args[1])
    elif cmd == "records":
        records(int(args[0]), int(args[1]), args[2] == "1")
    else:
        sys.exit("usage: see the docstring of editdist4r_unicode.py")


main()
