#!/usr/bin/env python3
"""bench/gmmscore_gen.py DIR [--models M] [--comps K] [--dim D] [--frames N] [--seed S] [--text]

The benchmark's data, in the paper's shape by default (6647 models x 32 diagonal
Gaussians x 39 dimensions, 100,000 frames), MFCC-like in scale (static, delta and
acceleration thirds of decreasing spread, c0 offset), fixed seed:

  DIR/model.mdl   a Kaldi binary acoustic model (<DIMENSION> <NUMPDFS>, P <DiagGMM>s)
  DIR/model.npz   the same float32 parameters (w, means_invvars, inv_vars) for peers
  DIR/feats.npy   the frames, float32, each drawn from a random model's component
  DIR/feats.htk   the same frames as an HTK USER file (big-endian)
With --text also the same models in the text formats, for timing the text readers:
  DIR/model.txt   gmmscore's text format ("gmm NAME K D", then K lines)
  DIR/model.mdl.txt  Kaldi text (<DIMENSION> <NUMPDFS>, P <DiagGMM>s)
  DIR/model.mmf   HTK MMF, one ~s state a model
and DIR/feats.txt, the frames as text.
Nothing is rewritten when DIR/done matches the arguments.
"""
import argparse
import os
import struct

import numpy as np


def kint(v):
    return b"\x04" + struct.pack("<i", v)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--models", type=int, default=6647)
    ap.add_argument("--comps", type=int, default=32)
    ap.add_argument("--dim", type=int, default=39)
    ap.add_argument("--frames", type=int, default=100000)
    ap.add_argument("--seed", type=int, default=2013)
    ap.add_argument("--text", action="store_true")
    a = ap.parse_args()
    stamp = "%d %d %d %d %d %d\n" % (a.models, a.comps, a.dim, a.frames, a.seed, a.text)
    os.makedirs(a.dir, exist_ok=True)
    done = os.path.join(a.dir, "done")
    if os.path.exists(done) and open(done).read() == stamp:
        return
    rng = np.random.default_rng(a.seed)
    M, K, D, N = a.models, a.comps, a.dim, a.frames
    w, w32, mi32, iv32 = models(rng, M, K, D)
    np.savez(os.path.join(a.dir, "model.npz"), w=w32, means_invvars=mi32, inv_vars=iv32)

    parts = [b"\0B<DIMENSION> ", kint(D), b"<NUMPDFS> ", kint(M)]
    zero = np.zeros(K, "<f4").tobytes()
    for m in range(M):
        parts += [b"<DiagGMM> <GCONSTS> FV ", kint(K), zero,
                  b"<WEIGHTS> FV ", kint(K), w32[m].astype("<f4").tobytes(),
                  b"<MEANS_INVVARS> FM ", kint(K), kint(D), mi32[m].astype("<f4").tobytes(),
                  b"<INV_VARS> FM ", kint(K), kint(D), iv32[m].astype("<f4").tobytes(),
                  b"</DiagGMM> "]
    with open(os.path.join(a.dir, "model.mdl"), "wb") as f:
        f.write(b"".join(parts))

    x = frames(rng, w, mi32, iv32, N)
    np.save(os.path.join(a.dir, "feats.npy"), x)
    with open(os.path.join(a.dir, "feats.htk"), "wb") as f:
        f.write(struct.pack(">iihh", N, 100000, 4 * D, 9) + x.astype(">f4").tobytes())
    if a.text:
        write_text(a.dir, w32, mi32 / iv32, 1 / iv32, mi32, iv32, x)
    with open(done, "w") as f:
        f.write(stamp)


def models(rng, M, K, D):
    """M models of K Gaussians in D dimensions, MFCC-like: weights w (float64) and, in
    float32 as the model files hold them, weights, means x inverse variances and inverse
    variances."""
    third = D // 3
    spread = np.r_[np.full(third, 6.0), np.full(third, 1.5), np.full(D - 2 * third, 0.4)]
    offset = np.zeros(D)
    offset[0] = 40.0
    mean = offset + spread * rng.standard_normal((M, K, D))
    var = (spread ** 2) * rng.uniform(0.05, 0.5, (M, K, D))
    w = rng.dirichlet(np.ones(K), M)
    return w, w.astype(np.float32), (mean * (1 / var)).astype(np.float32), (1 / var).astype(np.float32)


def frames(rng, w, mi32, iv32, N):
    """N frames, float32: each a random model, a component by its weight, a draw from it."""
    M, K, D = mi32.shape
    mm = rng.integers(0, M, N)
    u = rng.random(N)
    cdf = np.cumsum(w[mm], axis=1)
    cc = np.minimum((cdf < u[:, None]).sum(1), K - 1)
    mu = mi32[mm, cc] / iv32[mm, cc]
    return (mu + rng.standard_normal((N, D)) / np.sqrt(iv32[mm, cc])).astype(np.float32)


def rows(a):
    """Each row of a 2-D array as one line of %.9g numbers."""
    fmt = " ".join(["%.9g"] * a.shape[1])
    return [fmt % tuple(r) for r in a.tolist()]


def write_text(d, w, mean, var, mi, iv, x):
    M, K = w.shape
    D = mean.shape[2]
    with open(os.path.join(d, "model.txt"), "w") as f:
        for m in range(M):
            f.write("gmm pdf%d %d %d\n" % (m, K, D))
            f.write("\n".join(rows(np.c_[w[m], mean[m], var[m]])) + "\n")
    with open(os.path.join(d, "model.mdl.txt"), "w") as f:
        f.write("<DIMENSION> %d <NUMPDFS> %d " % (D, M))
        for m in range(M):
            f.write("<DiagGMM> \n<WEIGHTS>  [ %s ]\n<MEANS_INVVARS>  [\n  " % rows(w[m:m + 1])[0])
            f.write(" \n  ".join(rows(mi[m])) + " ]\n<INV_VARS>  [\n  ")
            f.write(" \n  ".join(rows(iv[m])) + " ]\n</DiagGMM> \n")
    with open(os.path.join(d, "model.mmf"), "w") as f:
        f.write("~o\n<STREAMINFO> 1 %d\n<VECSIZE> %d<NULLD><USER><DIAGC>\n" % (D, D))
        for m in range(M):
            f.write('~s "pdf%d"\n<NUMMIXES> %d\n' % (m, K))
            mr, vr = rows(mean[m]), rows(var[m])
            for c in range(K):
                f.write("<MIXTURE> %d %.9g\n<MEAN> %d\n %s\n<VARIANCE> %d\n %s\n"
                        % (c + 1, w[m, c], D, mr[c], D, vr[c]))
    with open(os.path.join(d, "feats.txt"), "w") as f:
        f.write("\n".join(rows(x)) + "\n")


if __name__ == "__main__":
    main()
