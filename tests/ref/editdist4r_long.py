#!/usr/bin/env python3
"""editdist4r_long.py: long pairs for tests/editdist4r_long.bats (its references are
editdist4r_modes.py's expect and check: python3-edlib, and the CIGARs replayed).

  pair LEN RATE SEED ALPHABET   one pair: random symbols of ALPHABET (dna, protein) of
                                LEN, and a copy with edits at RATE
  window QLEN TLEN RATE SEED AT one pair: a target of TLEN random bases and, as the
                                query, its QLEN bases from AT (a number, or mid) with
                                edits at RATE: a long read in its reference window
  random SEED N                 N pairs of 257 to 8,000 symbols (DNA, two letters or
                                protein): copies with 0.1% to 50% edits, pieces of a
                                target with edits (reads in windows), unrelated pairs,
                                so that the band's groups meet every edge: its first
                                and last blocks, a last block of any height, few and
                                many symbols
"""
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from editdist4r_modes import mutate, rand  # noqa: E402

ALPHABETS = {"dna": "ACGT", "protein": "ACDEFGHIKLMNPQRSTVWY"}


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "pair":
        rng = random.Random(int(args[2]))
        alpha = ALPHABETS[args[3]]
        a = rand(rng, int(args[0]), alpha)
        print(f"{a}\t{mutate(rng, a, float(args[1]), alpha)}")
    elif cmd == "window":
        qlen, tlen, rate = int(args[0]), int(args[1]), float(args[2])
        rng = random.Random(int(args[3]))
        t = rand(rng, tlen, "ACGT")
        at = (tlen - qlen) // 2 if args[4] == "mid" else int(args[4])
        print(f"{mutate(rng, t[at:at + qlen], rate, 'ACGT')}\t{t}")
    elif cmd == "random":
        rng = random.Random(int(args[0]))
        for _ in range(int(args[1])):
            alpha = rng.choice(["ACGT", "AC", ALPHABETS["protein"]])
            kind = rng.random()
            if kind < 0.5:
                a = rand(rng, rng.randint(257, 6000), alpha)
                b = mutate(rng, a, rng.choice([0.001, 0.01, 0.05, 0.2, 0.5]), alpha)
            elif kind < 0.8:
                b = rand(rng, rng.randint(600, 8000), alpha)
                q = rng.randint(257, len(b) - 1)
                p = rng.randint(0, len(b) - q)
                a = mutate(rng, b[p:p + q], rng.choice([0, 0.01, 0.1, 0.3]), alpha) or "A"
            else:
                a = rand(rng, rng.randint(257, 3000), alpha)
                b = rand(rng, rng.randint(257, 3000), alpha)
            print(f"{a}\t{b}")
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
