#!/usr/bin/env python3
"""Independent references for tests/gmmscore.bats.

  gmmscore_ref.py make DIR [--models N] [--dim D] [--frames F] [--big K] [--seed S]
      Fits scikit-learn GaussianMixture(covariance_type='diag') models on synthetic
      clusters and writes them as gmmscore text (native.txt), Kaldi text with a
      TransitionModel (kaldi.mdl.txt, wrong stored gconsts on purpose), Kaldi binary
      (kaldi.mdl), a single Kaldi DiagGMM (global.txt, model 0), and HTK MMF (hmm.mmf,
      with a shared ~s state, a ~v macro, mixed-case keywords); features near the
      models as NPY, text, HTK (big-endian, written byte by byte; also _C and _K
      variants) and a Kaldi text archive of three utterances. params.npz keeps the
      fitted parameters; names.txt the model names of native.txt and hmm.mmf.
  gmmscore_ref.py random DIR [--models N] [--dim D] [--frames F] [--big K] [--seed S]
      Many models quickly (random, not fitted): native.txt, names.txt, feats.npy and
      feats.txt, for the GPU, streaming and tiling tests.
  gmmscore_ref.py scores DIR FEATS.npy OUT.npy [--mode sum|max] [--dims N] [--native F]
      Reference scores, frames x models float64: --mode sum from scikit-learn's
      score_samples, --mode max from numpy float64; models from DIR/params.npz or
      from the gmmscore text file F (read here independently); --ark: FEATS is a
      Kaldi text archive.
  gmmscore_ref.py check KIND OUTPUT REF.npy [--top N] [--names FILE] [--keys K:N,...]
      Compares gmmscore's output with the reference; KIND is all (Kaldi archive),
      npy (frames x models) or top (UTT FRAME MODEL SCORE lines). Exits 1 with the
      first difference.
"""
import argparse
import struct
import sys

import numpy as np

ATOL, RTOL = 2e-3, 2e-5


def fit_models(rng, nmodels, dim, big):
    from sklearn.mixture import GaussianMixture

    sizes = [1, 3, 4, 7, 8, 16, 5, 2, 12, 6]
    models = []
    for m in range(nmodels):
        if big and m == nmodels - 1:
            # Larger than a GPU block of components: built, not fitted (for speed).
            w = rng.dirichlet(np.ones(big))
            models.append((w, rng.normal(0, 3, (big, dim)), rng.uniform(0.3, 2, (big, dim))))
            continue
        k = sizes[m % len(sizes)]
        centres = rng.normal(0, 3, (k, dim))
        n = max(40 * k, 200)
        lab = rng.integers(0, k, n)
        data = centres[lab] + rng.normal(0, 1, (n, dim)) * rng.uniform(0.3, 1.5, dim)
        gm = GaussianMixture(n_components=k, covariance_type="diag", random_state=m,
                             max_iter=20, reg_covar=1e-3).fit(data)
        models.append((gm.weights_.copy(), gm.means_.copy(), gm.covariances_.copy()))
    return models


def mixture(w, mu, var):
    from sklearn.mixture import GaussianMixture

    gm = GaussianMixture(n_components=len(w), covariance_type="diag")
    gm.weights_, gm.means_, gm.covariances_ = w, mu, var
    gm.precisions_cholesky_ = 1.0 / np.sqrt(var)
    return gm


def g(v):
    return "%.9g" % v


def write_native(path, models, names):
    with open(path, "w") as f:
        f.write("# gmmscore text models: gmm NAME COMPONENTS DIMS, then weight means variances\n")
        for (w, mu, var), name in zip(models, names):
            f.write("gmm %s %d %d\n" % (name, len(w), mu.shape[1]))
            for c in range(len(w)):
                f.write(" ".join(g(v) for v in [w[c], *mu[c], *var[c]]) + "\n")


def kaldi_gmm_text(w, mu, var):
    iv = 1.0 / var
    out = ["<DiagGMM> \n", "<GCONSTS>  [ " + " ".join("12345" for _ in w) + " ]\n",
           "<WEIGHTS>  [ " + " ".join(g(x) for x in w) + " ]\n", "<MEANS_INVVARS>  ["]
    for c in range(len(w)):
        out.append("\n  " + " ".join(g(x) for x in mu[c] * iv[c]) + " ")
    out.append("]\n<INV_VARS>  [")
    for c in range(len(w)):
        out.append("\n  " + " ".join(g(x) for x in iv[c]) + " ")
    out.append("]\n</DiagGMM> \n")
    return "".join(out)


TRANSITION_MODEL = """<TransitionModel> 
<Topology> 
<TopologyEntry> 
<ForPhones> 
1 2 
</ForPhones> 
<State> 0 <PdfClass> 0 <Transition> 0 0.75 <Transition> 1 0.25 </State> 
<State> 1 </State> 
</TopologyEntry> 
</Topology> 
<Triples> 2 
1 0 0 
2 0 1 
</Triples> 
<LogProbs> 
 [ 0 -0.2876821 -1.386294 ]
</LogProbs> 
</TransitionModel> 
"""


def write_kaldi_text(path, models):
    with open(path, "w") as f:
        f.write(TRANSITION_MODEL)
        f.write("<DIMENSION> %d <NUMPDFS> %d " % (models[0][1].shape[1], len(models)))
        for w, mu, var in models:
            f.write(kaldi_gmm_text(w, mu, var))


def kint(v):
    return b"\x04" + struct.pack("<i", v)


def write_kaldi_binary(path, models):
    def vec(a):
        a = np.asarray(a, "<f4")
        return b"FV " + kint(a.size) + a.tobytes()

    def mat(a):
        a = np.asarray(a, "<f4")
        return b"FM " + kint(a.shape[0]) + kint(a.shape[1]) + a.tobytes()

    out = [b"\0B<TransitionModel> <Topology> ", kint(2), b"\x01\x02\x03 </Topology> ",
           b"<Triples> ", kint(0), b"<LogProbs> FV ", kint(0), b"</LogProbs> ",
           b"</TransitionModel> ", b"<DIMENSION> ", kint(models[0][1].shape[1]),
           b"<NUMPDFS> ", kint(len(models))]
    for w, mu, var in models:
        iv = 1.0 / var
        out += [b"<DiagGMM> <GCONSTS> ", vec(np.zeros(len(w))), b"<WEIGHTS> ", vec(w),
                b"<MEANS_INVVARS> ", mat(mu * iv), b"<INV_VARS> ", mat(iv), b"</DiagGMM> "]
    with open(path, "wb") as f:
        f.write(b"".join(out))


def mmf_state(w, mu, var, case):
    d = mu.shape[1]
    mean_kw = "<Mean>" if case else "<MEAN>"
    out = ["<NUMMIXES> %d\n" % len(w)]
    for c in range(len(w)):
        out.append("<MIXTURE> %d %s\n" % (c + 1, g(w[c])))
        out.append("%s %d\n %s\n" % (mean_kw, d, " ".join(g(x) for x in mu[c])))
        out.append("<VARIANCE> %d\n %s\n" % (d, " ".join(g(x) for x in var[c])))
        out.append("<GCONST> 1.0e+02\n")
    return "".join(out)


def write_mmf(path, models):
    """Model 0 is the shared state ~s "s0"; the rest go three to an HMM, the second
    HMM's first state being a reference to s0 (scored once)."""
    d = models[0][1].shape[1]
    names = ["s0"]
    out = ['~o\n<STREAMINFO> 1 %d\n<VECSIZE> %d<NULLD><USER><DIAGC>\n' % (d, d),
           '~v "varFloor1"\n<VARIANCE> %d\n %s\n' % (d, " ".join(["0.01"] * d)),
           '~s "s0"\n', mmf_state(*models[0], False)]
    rest = list(range(1, len(models)))
    h = 0
    while rest:
        h += 1
        take, rest = rest[:3], rest[3:]
        states = []
        if h == 2:
            states.append(None)	# the shared state
        states += take
        out.append('~h "h%d"\n<BEGINHMM>\n<NUMSTATES> %d\n' % (h, len(states) + 2))
        for i, m in enumerate(states):
            out.append("<STATE> %d\n" % (i + 2))
            if m is None:
                out.append('~s "s0"\n')
            else:
                out.append(mmf_state(*models[m], m % 2 == 1))
                names.append("h%d.%d" % (h, i + 2))
        n = len(states) + 2
        tp = np.zeros((n, n))
        tp[0, 1] = 1
        for i in range(1, n - 1):
            tp[i, i], tp[i, i + 1] = 0.6, 0.4
        out.append("<TRANSP> %d\n" % n)
        out.append("\n".join(" ".join(g(x) for x in row) for row in tp) + "\n<ENDHMM>\n")
    with open(path, "w") as f:
        f.write("".join(out))
    return names


def write_htk(path, x, compressed=False, crc=False):
    n, d = x.shape
    kind = 6 | 0o100 | 0o400 | 0o1000	# MFCC_E_D_A
    if compressed:
        kind |= 0o2000
        lo, hi = x.min(0), x.max(0)
        hi = np.where(hi > lo, hi, lo + 1)
        a = (2 * 32767 / (hi - lo)).astype(np.float32)
        b = ((hi + lo) * a / 2).astype(np.float32)
        q = np.clip(np.rint(x * a - b), -32767, 32767).astype(">i2")
        body = a.astype(">f4").tobytes() + b.astype(">f4").tobytes() + q.tobytes()
        header = struct.pack(">iihh", n + 4, 100000, 2 * d, kind | (0o10000 if crc else 0))
        decoded = (q.astype(np.float64) + b.astype(np.float32)) / a.astype(np.float32)
    else:
        body = np.asarray(x, ">f4").tobytes()
        header = struct.pack(">iihh", n, 100000, 4 * d, kind | (0o10000 if crc else 0))
        decoded = x.astype(np.float32)
    with open(path, "wb") as f:
        f.write(header + body + (b"\x12\x34" if crc else b""))
    return decoded.astype(np.float32)


def write_ark(path, utts):
    with open(path, "w") as f:
        for key, x in utts:
            f.write("%s  [" % key)
            for row in x:
                f.write("\n  " + " ".join(g(v) for v in row) + " ")
            f.write("]\n")


def cmd_make(a):
    rng = np.random.default_rng(a.seed)
    models = fit_models(rng, a.models, a.dim, a.big)
    d = a.dim
    np.savez(a.dir + "/params.npz", **{"w%d" % i: m[0] for i, m in enumerate(models)},
             **{"mu%d" % i: m[1] for i, m in enumerate(models)},
             **{"var%d" % i: m[2] for i, m in enumerate(models)}, n=len(models))
    mmf_names = write_mmf(a.dir + "/hmm.mmf", models)
    write_native(a.dir + "/native.txt", models, mmf_names)
    with open(a.dir + "/names.txt", "w") as f:
        f.write("\n".join(mmf_names) + "\n")
    write_kaldi_text(a.dir + "/kaldi.mdl.txt", models)
    write_kaldi_binary(a.dir + "/kaldi.mdl", models)
    with open(a.dir + "/global.txt", "w") as f:
        f.write(kaldi_gmm_text(*models[0]))
    # Frames: drawn from the models, some from far away.
    x = []
    for i in range(a.frames):
        w, mu, var = models[rng.integers(len(models))]
        c = rng.choice(len(w), p=w / w.sum())
        x.append(mu[c] + rng.normal(0, 1, d) * np.sqrt(var[c]) * (3 if i % 17 == 0 else 1))
    x = np.asarray(x, np.float32)
    np.save(a.dir + "/feats.npy", x)
    np.savetxt(a.dir + "/feats.txt", x, fmt="%.9g")
    write_htk(a.dir + "/feats.htk", x, crc=True)
    np.save(a.dir + "/feats_c.npy", write_htk(a.dir + "/feats_c.htk", x, compressed=True))
    cut = [0, a.frames // 5, a.frames // 5 + 1, a.frames]
    write_ark(a.dir + "/feats.ark", [("utt%d" % i, x[cut[i]:cut[i + 1]]) for i in range(3)])


def cmd_random(a):
    """Models not fitted (many, fast): native.txt, names.txt, feats.npy, feats.txt."""
    rng = np.random.default_rng(a.seed)
    sizes = [32, 1, 17, 2, 31, 33, 64, 5]
    if a.max_size:
        sizes = [min(k, a.max_size) for k in sizes]
    models = []
    for m in range(a.models):
        k = a.big if (a.big and m == a.models // 2) else sizes[m % len(sizes)]
        models.append((rng.dirichlet(np.ones(k)), rng.normal(0, 2, (k, a.dim)),
                       rng.uniform(0.5, 2, (k, a.dim))))
    if a.adversarial:
        # near-ties: exact copies of model 0 (ties broken by index) and copies with
        # means nudged by 1e-5; one dominant dimension (variances 1e-4 in dimension
        # 0); a zero-weight Gaussian
        w, mu, var = models[0]
        models[1] = (w, mu, var)
        models[2] = (w, mu + 1e-5, var)
        for m in range(3, a.models, 7):
            w, mu, var = models[m]
            var = var.copy()
            var[:, 0] = 1e-4
            models[m] = (w, mu, var)
        w, mu, var = models[4]
        if len(w) > 1:
            w = w.copy()
            w[-1] = 0
            models[4] = (w / w.sum(), mu, var)
    names = ["pdf%d" % m for m in range(a.models)]
    write_native(a.dir + "/native.txt", models, names)
    with open(a.dir + "/names.txt", "w") as f:
        f.write("\n".join(names) + "\n")
    x = rng.normal(0, 2, (a.frames, a.dim)).astype(np.float32)
    if a.adversarial:
        # large norms in every 10th frame; frames at model 0's first mean
        x[::10] *= 50
        x[1::10] = models[0][1][0]
    np.save(a.dir + "/feats.npy", x)
    np.savetxt(a.dir + "/feats.txt", x, fmt="%.9g")


def load_models(path):
    p = np.load(path)
    return [(p["w%d" % i], p["mu%d" % i], p["var%d" % i]) for i in range(int(p["n"]))]


def read_native(path):
    """gmmscore's text models, read independently: gmm NAME K D, then K lines."""
    models, lines = [], [l.split("#")[0].split() for l in open(path)]
    lines = [l for l in lines if l]
    i = 0
    while i < len(lines):
        _, name, k, d = lines[i]
        k, d = int(k), int(d)
        rows = np.array([[float(v) for v in l] for l in lines[i + 1:i + 1 + k]])
        models.append((rows[:, 0], rows[:, 1:1 + d], rows[:, 1 + d:]))
        i += 1 + k
    return models


def cmd_scores(a):
    models = read_native(a.native) if a.native else load_models(a.dir + "/params.npz")
    if a.ark:
        x = np.array([r for _, rows in parse_ark(a.feats) for r in rows], np.float32)
    else:
        x = np.load(a.feats)
    x = x.astype(np.float64)
    out = np.empty((len(x), len(models)))
    for m, (w, mu, var) in enumerate(models):
        if a.dims:
            mu, var, xx = mu[:, :a.dims], var[:, :a.dims], x[:, :a.dims]
        else:
            xx = x
        if a.mode == "sum":
            out[:, m] = mixture(w, mu, var).score_samples(xx)
        else:
            comp = (np.log(w)[None, :] - 0.5 * (mu.shape[1] * np.log(2 * np.pi) +
                    np.log(var).sum(1))[None, :] -
                    0.5 * (((xx[:, None, :] - mu[None]) ** 2) / var[None]).sum(2))
            out[:, m] = comp.max(1)
    np.save(a.out, out)


def fail(msg):
    print("check: " + msg, file=sys.stderr)
    sys.exit(1)


def close(got, want, where):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    if got.shape != want.shape:
        fail("%s: shape %s, expected %s" % (where, got.shape, want.shape))
    bad = np.abs(got - want) > ATOL + RTOL * np.abs(want)
    if bad.any():
        i = np.argwhere(bad)[0]
        fail("%s: at %s got %r, expected %r (max abs error %g)" % (
            where, tuple(i), got[tuple(i)], want[tuple(i)], np.abs(got - want).max()))


def parse_ark(path):
    text = open(path).read()
    utts, pos = [], 0
    while True:
        while pos < len(text) and text[pos].isspace():
            pos += 1
        if pos >= len(text):
            return utts
        sp = text.index(" ", pos)
        key = text[pos:sp]
        if not text.startswith("  [", sp):
            fail("archive: no '  [' after key %r" % key)
        end = text.index("]", sp)
        body = text[sp + 3:end]
        rows = [[float(v) for v in line.split()] for line in body.split("\n") if line.strip()]
        utts.append((key, rows))
        pos = end + 1
        if text[pos:pos + 1] != "\n":
            fail("archive: no newline after ']' of %r" % key)


def cmd_check(a):
    ref = np.load(a.ref)
    if a.kind == "npy":
        got = np.load(a.output)
        if got.dtype != np.float32:
            fail("NPY dtype %s, expected float32" % got.dtype)
        close(got, ref, "npy")
    elif a.kind == "all":
        utts = parse_ark(a.output)
        if a.keys:
            want = [(k, int(n)) for k, n in (kv.split(":") for kv in a.keys.split(","))]
            have = [(k, len(r)) for k, r in utts]
            if have != want:
                fail("archive utterances %s, expected %s" % (have, want))
        rows = [r for _, rs in utts for r in rs]
        close(np.array(rows).reshape(-1, ref.shape[1]), ref, "archive")
    else:
        names = ([l.strip() for l in open(a.names)] if a.names
                 else [str(i) for i in range(ref.shape[1])])
        lines = [l.rstrip("\n").split("\t") for l in open(a.output)]
        k = min(a.top, ref.shape[1])
        if len(lines) != k * len(ref):
            fail("%d lines, expected %d" % (len(lines), k * len(ref)))
        where = [(None, f) for f in range(len(ref))]
        if a.keys:
            where = [(key, i) for key, n in (kv.split(":") for kv in a.keys.split(","))
                     for i in range(int(n))]
        for f in range(len(ref)):
            order = sorted(range(ref.shape[1]), key=lambda m: (-ref[f, m], m))[:k]
            for j, m in enumerate(order):
                fields = lines[f * k + j]
                if len(fields) != 4:
                    fail("line %d: %r is not UTT FRAME MODEL SCORE" % (f * k + j + 1, fields))
                utt, frame, model, score = fields
                key, fno = where[f]
                if int(frame) != fno or (key is not None and utt != key):
                    fail("line %d: utterance %s frame %s, expected %s %d" % (
                        f * k + j + 1, utt, frame, key, fno))
                if model != names[m]:
                    # a near tie may order either way: two scores within twice
                    # close()'s tolerance of each other (RTOL counts for the large
                    # scores of frames far from every mean)
                    alt = names.index(model) if model in names else -1
                    if alt < 0 or (abs(ref[f, alt] - ref[f, m]) >
                                   2 * (ATOL + RTOL * abs(ref[f, m]))):
                        fail("frame %d rank %d: model %s, expected %s (%s vs %r)" % (
                            f, j + 1, model, names[m], score, ref[f, m]))
                close(float(score), ref[f, m], "frame %d rank %d" % (f, j + 1))


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("make")
    p.add_argument("dir")
    p.add_argument("--models", type=int, default=10)
    p.add_argument("--dim", type=int, default=6)
    p.add_argument("--frames", type=int, default=300)
    p.add_argument("--big", type=int, default=0)
    p.add_argument("--seed", type=int, default=1)
    p = sub.add_parser("random")
    p.add_argument("dir")
    p.add_argument("--models", type=int, default=100)
    p.add_argument("--dim", type=int, default=39)
    p.add_argument("--frames", type=int, default=1000)
    p.add_argument("--big", type=int, default=0)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--max-size", type=int, default=0, help="at most this many Gaussians a model")
    p.add_argument("--adversarial", action="store_true",
                   help="near-ties, a dominant dimension, a zero weight, large norms")
    p = sub.add_parser("scores")
    p.add_argument("dir")
    p.add_argument("feats")
    p.add_argument("out")
    p.add_argument("--mode", default="sum")
    p.add_argument("--dims", type=int, default=0)
    p.add_argument("--native", help="models from this gmmscore text file, not DIR")
    p.add_argument("--ark", action="store_true", help="FEATS is a Kaldi text archive")
    p = sub.add_parser("check")
    p.add_argument("kind", choices=["all", "npy", "top"])
    p.add_argument("output")
    p.add_argument("ref")
    p.add_argument("--top", type=int, default=1)
    p.add_argument("--names")
    p.add_argument("--keys")
    a = ap.parse_args()
    {"make": cmd_make, "random": cmd_random, "scores": cmd_scores,
     "check": cmd_check}[a.cmd](a)


if __name__ == "__main__":
    main()
