#!/usr/bin/env python3
"""gmmscore_kaldi_gen.py DIR: bench/gmmscore_kaldi's data, with a fixed seed: the same
frames (FRAMES x DIM float32, utterances of UTT frames) as a Kaldi text archive written
as copy-feats ark,t: writes (7 significant digits), a binary FM archive, a compressed CM
archive and an .scp of the FM archive's offsets (tests/ref/kaldi_io.py's writer), plus
two model sets: one Gaussian (the run is the read) and MODELS x COMP diagonal ones."""
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "ref"))
import kaldi_io  # noqa: E402


def models(path, rng, n, comp, dim):
    with open(path, "w") as f:
        f.write("# gmmscore text models: gmm NAME COMPONENTS DIMS, then weight means variances\n")
        for m in range(n):
            f.write("gmm m%d %d %d\n" % (m, comp, dim))
            w = rng.random(comp) + 0.1
            w /= w.sum()
            for c in range(comp):
                mu = rng.normal(0, 2, dim)
                var = rng.random(dim) + 0.5
                f.write(" ".join("%.9g" % v for v in [w[c], *mu, *var]) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--frames", type=int, default=200000)
    ap.add_argument("--dim", type=int, default=40)
    ap.add_argument("--utt", type=int, default=500)
    ap.add_argument("--models", type=int, default=100)
    ap.add_argument("--comp", type=int, default=8)
    a = ap.parse_args()
    os.makedirs(a.dir, exist_ok=True)
    stamp = os.path.join(a.dir, "stamp")
    want = "%d %d %d %d %d\n" % (a.frames, a.dim, a.utt, a.models, a.comp)
    if os.path.exists(stamp) and open(stamp).read() == want:
        return
    rng = np.random.default_rng(7)
    x = (rng.normal(0, 1, (a.frames, a.dim)) * 4 + 10).astype(np.float32)
    utts = [("utt%06d" % i, x[s:s + a.utt]) for i, s in enumerate(range(0, a.frames, a.utt))]
    with open(os.path.join(a.dir, "feats_text.ark"), "w") as f:
        for key, m in utts:
            f.write(key + "  [")
            for row in m:
                f.write("\n  " + " ".join("%.7g" % v for v in row) + " ")
            f.write("]\n")
    kaldi_io.write_archive(os.path.join(a.dir, "feats.ark"), utts, ["fm"] * len(utts),
                           os.path.join(a.dir, "feats.scp"))
    kaldi_io.write_archive(os.path.join(a.dir, "feats_cm.ark"), utts, ["cm"] * len(utts))
    models(os.path.join(a.dir, "one.txt"), rng, 1, 1, a.dim)
    models(os.path.join(a.dir, "models.txt"), rng, a.models, a.comp, a.dim)
    open(stamp, "w").write(want)


if __name__ == "__main__":
    main()
