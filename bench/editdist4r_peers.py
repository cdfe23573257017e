#!/usr/bin/env python3
"""editdist4r_peers.py: python3-edlib as a whole process, for bench/editdist4r_long:
the peer a Python user of edlib runs.

  editdist4r_peers.py pair MODE A.fa B.fa [--path]
      the first record of A.fa (the query) against the first of B.fa (the target) in
      edlib's MODE (NW, HW or SHW): prints the distance, with --path a TAB and edlib's
      extended CIGAR (edlib's I and D are the query's, the reverse of editdist4r's)
  editdist4r_peers.py lines MODE FILE
      each "A<TAB>B" line of FILE: the distance and edlib's first location, as
      editdist4r --mode prints them (START END, TAB-separated)
"""
import sys

import edlib


def first_record(path):
    seq, seen = [], False
    with open(path) as f:
        for line in f:
            if line.startswith(">"):
                if seen:
                    break
                seen = True
                continue
            seq.append(line.strip())
    return "".join(seq)


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    what, mode = sys.argv[1], sys.argv[2]
    if what == "pair":
        a, b = first_record(sys.argv[3]), first_record(sys.argv[4])
        path = "--path" in sys.argv[5:]
        r = edlib.align(a, b, mode=mode, task="path" if path else "distance")
        print(f"{r['editDistance']}\t{r['cigar']}" if path else r["editDistance"])
    elif what == "lines":
        out = []
        with open(sys.argv[3]) as f:
            for line in f:
                a, b = line.rstrip("\n").split("\t")
                r = edlib.align(a, b, mode=mode, task="locations")
                s, e = r["locations"][0]
                out.append(f"{r['editDistance']}\t{s}\t{e}\n")
        sys.stdout.write("".join(out))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
