#!/usr/bin/env python3
"""editdist4r_long.py: long pairs for tests/editdist4r_long.bats (its references are
editdist4r_modes.py's expect and check: python3-edlib, and the CIGARs replayed).

  pair LEN RATE SEED ALPHABET   one pair: random symbols of ALPHABET (dna, protein) of
                                LEN, and a copy with edits at RATE
  window QLEN TLEN RATE SEED AT one pair: a target of TLEN random bases and, as the
                                query, its QLEN bases from AT (a number, or mid) with
                                edits at RATE: a long read in its reference window
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
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
