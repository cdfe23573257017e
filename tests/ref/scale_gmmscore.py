#!/usr/bin/env python3
"""scale_gmmscore.py: gmmscore's check at benchmark sizes (tests/scale/gmmscore.bats).

The models are bench/gmmscore_gen.py's (DIR/model.npz: float32 weights w, means x
inverse variances mi and inverse variances iv, as the Kaldi model file holds them);
scores are recomputed here in float64 with numpy:
    log w - (D log 2pi - sum log iv) / 2 - sum iv (x - mi / iv)^2 / 2
a component, then a log-sum-exp over a model's components (--mode sum) or the best.

  scale_gmmscore.py head FEATS.npy N OUT.npy      the first N frames
  scale_gmmscore.py top DIR FEATS.npy OUT --top N [--mode sum|max] [--samples S]
      gmmscore's lines "UTT<TAB>FRAME<TAB>MODEL<TAB>SCORE": invariants over every line
      (one utterance; every frame, in order, with exactly N lines; models in range and
      distinct within a frame; scores non-increasing), then S sampled frames (default
      1000) against float64: every score within TOL (1e-3 + 2e-6 |score|: gmmscore(1)'s
      float32 error) and the list a true top N: no model scoring TOL above the list's
      last is missing
  scale_gmmscore.py all DIR FEATS.npy OUT.npy [--mode sum|max] [--samples S]
      --all -O npy: frames x models, S sampled frames within TOL of float64
Prints "ok: ..." or the first thing wrong (exit 1).
"""
import argparse
import sys

import numpy as np


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def scores(mdir, x, mode):
    """float64 scores of frames x (S x D) under every model: S x M."""
    p = np.load(mdir + "/model.npz")
    w, mi, iv = (p[k].astype(np.float64) for k in ("w", "means_invvars", "inv_vars"))
    M, K, D = mi.shape
    x = np.asarray(x, dtype=np.float64)
    const = (np.log(w) - 0.5 * (D * np.log(2 * np.pi) - np.log(iv).sum(2))
             - 0.5 * (mi * mi / iv).sum(2))                       # M x K
    out = np.empty((x.shape[0], M))
    feats = np.hstack([-0.5 * x * x, x])                           # S x 2D
    for b in range(0, M, 512):
        e = min(M, b + 512)
        A = np.concatenate([iv[b:e], mi[b:e]], axis=2).reshape(-1, 2 * D)
        c = (feats @ A.T + const[b:e].reshape(-1)).reshape(x.shape[0], e - b, K)
        if mode == "max":
            out[:, b:e] = c.max(2)
        else:
            top = c.max(2)
            out[:, b:e] = top + np.log(np.exp(c - top[:, :, None]).sum(2))
    return out


def tolerance(ref):
    return 1e-3 + 2e-6 * np.abs(ref)


def parse_top(path):
    raw = open(path, "rb").read()
    if not raw:
        fail("no output")
    nl = raw.count(b"\n")
    utt = raw[:raw.index(b"\t") + 1]
    if raw.count(b"\n" + utt) != nl - 1:
        fail("lines of another utterance than %r" % utt[:-1].decode(errors="replace"))
    v = np.fromstring(raw.replace(utt, b"").replace(b"\t", b" "), sep=" ")
    if v.size != 3 * nl:
        fail("%d lines but %d numbers after the utterance" % (nl, v.size))
    v = v.reshape(-1, 3)
    return v[:, 0].astype(np.int64), v[:, 1].astype(np.int64), v[:, 2]


def top(a):
    X = np.load(a.feats, mmap_mode="r")
    F = X.shape[0]
    M = np.load(a.dir + "/model.npz")["w"].shape[0]
    fr, mo, sc = parse_top(a.out)
    n = a.top
    if fr.size != F * n:
        fail("%d lines for %d frames x --top %d" % (fr.size, F, n))
    fr2, mo2, sc2 = fr.reshape(F, n), mo.reshape(F, n), sc.reshape(F, n)
    if np.any(fr2 != np.arange(F)[:, None]):
        i = int(np.argmax(np.any(fr2 != np.arange(F)[:, None], axis=1)))
        fail("frame %d: not %d lines in frame order" % (i, n))
    if mo.min() < 0 or mo.max() >= M:
        fail("a model out of range 0..%d" % (M - 1))
    ms = np.sort(mo2, axis=1)
    if np.any(ms[:, 1:] == ms[:, :-1]):
        i = int(np.argmax(np.any(ms[:, 1:] == ms[:, :-1], axis=1)))
        fail("frame %d lists a model twice" % i)
    if np.any(sc2[:, 1:] > sc2[:, :-1]):
        i = int(np.argmax(np.any(sc2[:, 1:] > sc2[:, :-1], axis=1)))
        fail("frame %d: scores not in decreasing order" % i)
    rng = np.random.default_rng(a.seed)
    rows = np.sort(rng.choice(F, min(a.samples, F), replace=False))
    for b in range(0, rows.size, 250):
        blk = rows[b:b + 250]
        R = scores(a.dir, X[blk], a.mode)
        for j, f in enumerate(blk):
            ref, ms_, ss = R[j], mo2[f], sc2[f]
            tol = tolerance(ref[ms_])
            if np.any(np.abs(ref[ms_] - ss) > tol):
                i = int(np.argmax(np.abs(ref[ms_] - ss) - tol))
                fail("frame %d model %d: score %.9g, float64 %.9g" % (f, ms_[i], ss[i], ref[ms_[i]]))
            listed = np.zeros(M, bool)
            listed[ms_] = True
            miss = ~listed & (ref > ss[-1] + tolerance(ref))
            if np.any(miss):
                i = int(np.argmax(np.where(miss, ref, -np.inf)))
                fail("frame %d misses model %d, float64 %.9g above the last listed %.9g"
                     % (f, i, ref[i], ss[-1]))
    print("ok: %d frames x %d, %d sampled frames" % (F, n, rows.size))


def allscores(a):
    X = np.load(a.feats, mmap_mode="r")
    out = np.load(a.out, mmap_mode="r")
    M = np.load(a.dir + "/model.npz")["w"].shape[0]
    if out.shape != (X.shape[0], M):
        fail("shape %s, not %d frames x %d models" % (out.shape, X.shape[0], M))
    rng = np.random.default_rng(a.seed)
    rows = np.sort(rng.choice(X.shape[0], min(a.samples, X.shape[0]), replace=False))
    for b in range(0, rows.size, 250):
        blk = rows[b:b + 250]
        R = scores(a.dir, X[blk], a.mode)
        got = np.asarray(out[blk], dtype=np.float64)
        bad = np.abs(R - got) > tolerance(R)
        if np.any(bad):
            j, m = np.unravel_index(np.argmax(bad), bad.shape)
            fail("frame %d model %d: %.9g, float64 %.9g" % (blk[j], m, got[j, m], R[j, m]))
    print("ok: %d x %d scores, %d sampled frames" % (out.shape[0], M, rows.size))


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "head":
        x = np.load(sys.argv[2], mmap_mode="r")
        np.save(sys.argv[4], np.ascontiguousarray(x[:int(sys.argv[3])]))
        return
    ap = argparse.ArgumentParser(prog="scale_gmmscore.py")
    ap.add_argument("what", choices=["top", "all"])
    ap.add_argument("dir")
    ap.add_argument("feats")
    ap.add_argument("out")
    ap.add_argument("--top", type=int, default=1)
    ap.add_argument("--mode", default="sum", choices=["sum", "max"])
    ap.add_argument("--samples", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    (top if a.what == "top" else allscores)(a)


if __name__ == "__main__":
    main()
