#!/usr/bin/env python3
"""Property tests of gmmscore over shapes, chunk sizes and device-memory bounds.

  gmmscore_props.py DIR [--cases N] [--seed S] [--device cpu|gpu] [--timeout SEC]

Each case draws a random shape: frames from 1, primes and one below, at and above the
chunk and tile sizes of kernels/gmmscore_tune.h and gmmscore.cu (16 and 128 frames on
the CPU, 64 x 4 on the GPU, chunks of 4096 and 16384), small odd numbers of models,
Gaussians and dimensions (and a model wider than a GPU block of 256 Gaussians); a
feature format (NPY, text, HTK, a Kaldi archive of several utterances, some empty);
and an output (the best models, every score as an archive or NPY, --mode max).

gmmscore (from PATH) runs once unbounded, and that output is compared with float64
scores computed here with numpy. Then it runs again with random --chunk values and,
on the GPU, random --max-device-mem bounds from one frame's worth above the models'
own bytes upwards (read from -v); each run must give the unbounded run's bytes, and -v
must show a chunk that fits the bound. A bound below the models plus one frame must
fail with exit 1 and the "device memory" message, writing nothing. Every run has a
time limit. Prints one line of counts; exits 1 at the first failure, saying which
case and command.
"""
import argparse
import os
import re
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gmmscore_ref import ATOL, RTOL, parse_ark, write_ark, write_htk, write_native  # noqa

FRAMES = [1, 2, 3, 5, 13, 15, 16, 17, 31, 63, 64, 65, 127, 128, 129, 255, 256, 257,
          1021, 4095, 4096, 4097, 16383, 16384, 16385]
CHUNKS = [1, 2, 3, 7, 15, 16, 17, 63, 64, 65, 127, 128, 129, 255, 256, 257, 1009, 4095,
          4096, 4097]


class Fail(Exception):
    pass


def scores(models, x, mode):
    """float64 scores, frames x models, of the formula in man/gmmscore.1."""
    x = x.astype(np.float64)
    out = np.empty((len(x), len(models)))
    for m, (w, mu, var) in enumerate(models):
        d = mu.shape[1]
        g = np.log(w) - 0.5 * (d * np.log(2 * np.pi) + np.log(var).sum(1))
        for f in range(0, len(x), 1024):
            xb = x[f:f + 1024]
            comp = g[None, :] - 0.5 * (((xb[:, None, :] - mu[None]) ** 2) / var[None]).sum(2)
            top = comp.max(1)
            out[f:f + 1024, m] = (top if mode == "max" else
                                  top + np.log(np.exp(comp - top[:, None]).sum(1)))
    return out


def near(got, want, where):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    if got.shape != want.shape:
        raise Fail("%s: shape %s, expected %s" % (where, got.shape, want.shape))
    bad = np.abs(got - want) > ATOL + RTOL * np.abs(want)
    if bad.any():
        i = tuple(np.argwhere(bad)[0])
        raise Fail("%s: at %s got %r, expected %r" % (where, i, got[i], want[i]))


def check(out, kind, ref, names, keys, top):
    """gmmscore's output (bytes) against the reference scores (frames x models)."""
    if kind == "npy":
        import io
        got = np.load(io.BytesIO(out))
        if got.dtype != np.float32:
            raise Fail("NPY dtype %s" % got.dtype)
        near(got, ref, "npy")
        return
    text = out.decode()
    if kind == "all":
        utts = parse_ark_text(text)
        have = [(k, len(r)) for k, r in utts]
        if have != keys:
            raise Fail("archive utterances %s, expected %s" % (have, keys))
        rows = [r for _, rs in utts for r in rs]
        near(np.array(rows, np.float64).reshape(-1, ref.shape[1]), ref, "archive")
        return
    k = min(top, ref.shape[1])
    lines = [l.split("\t") for l in text.splitlines()]
    where = [(key, i) for key, n in keys for i in range(n)]
    if len(lines) != k * len(ref):
        raise Fail("%d lines, expected %d" % (len(lines), k * len(ref)))
    for f in range(len(ref)):
        order = sorted(range(ref.shape[1]), key=lambda m: (-ref[f, m], m))[:k]
        for j, m in enumerate(order):
            utt, frame, model, score = lines[f * k + j]
            if (utt, int(frame)) != where[f]:
                raise Fail("line %d: %s %s, expected %s %d" % (f * k + j + 1, utt, frame,
                                                               *where[f]))
            alt = names.index(model) if model in names else -1
            if alt < 0 or (alt != m and abs(ref[f, alt] - ref[f, m]) > ATOL):
                raise Fail("frame %d rank %d: model %s, expected %s" % (f, j + 1, model,
                                                                       names[m]))
            near(float(score), ref[f, alt], "frame %d rank %d" % (f, j + 1))


def parse_ark_text(text):
    import tempfile
    with tempfile.NamedTemporaryFile("w", suffix=".ark", delete=False) as t:
        t.write(text)
    try:
        return parse_ark(t.name)
    finally:
        os.unlink(t.name)


def run(cmd, timeout, res=None):
    """Runs cmd; the output is its stdout, or the file res it writes."""
    if res is not None and os.path.exists(res):
        os.unlink(res)
    try:
        r = subprocess.run(cmd, capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise Fail("no result within %d s: %s" % (timeout, " ".join(cmd)))
    if res is not None:
        r.stdout = open(res, "rb").read() if os.path.exists(res) else b""
    return r


def make_case(rng, d, i):
    nm = int(rng.choice([1, 2, 3, 5, 7, 9]))
    dim = int(rng.choice([1, 2, 3, 5, 7, 9, 11]))
    sizes = [int(rng.choice([1, 2, 3, 5, 7, 9])) for _ in range(nm)]
    if rng.random() < 0.15:
        sizes[int(rng.integers(nm))] = int(rng.choice([255, 257, 263]))
    models = [(rng.dirichlet(np.ones(k)), rng.normal(0, 2, (k, dim)),
               rng.uniform(0.3, 2, (k, dim))) for k in sizes]
    names = ["m%d_%d" % (i, j) for j in range(nm)]
    n = int(rng.choice(FRAMES))
    x = rng.normal(0, 2, (n, dim)).astype(np.float32)
    fmt = str(rng.choice(["npy", "txt", "htk", "ark"]))
    feats = os.path.join(d, "f%d.%s" % (i, fmt))
    if fmt == "npy":
        np.save(feats, x)
        keys = [(feats, n)]
    elif fmt == "txt":
        np.savetxt(feats, x, fmt="%.9g")
        keys = [(feats, n)]
    elif fmt == "htk":
        x = write_htk(feats, x)
        keys = [(feats, n)]
    else:
        cuts = sorted(int(c) for c in rng.integers(0, n + 1, int(rng.integers(0, 4))))
        cuts = [0] + cuts + [n]
        utts = [("u%d" % j, x[cuts[j]:cuts[j + 1]]) for j in range(len(cuts) - 1)]
        write_ark(feats, utts)
        keys = [(k, len(v)) for k, v in utts]
        x = np.array([r for _, v in utts for r in v], np.float32).reshape(-1, dim)
    mfile = os.path.join(d, "m%d.txt" % i)
    write_native(mfile, models, names)
    mode = "max" if rng.random() < 0.3 else "sum"
    out = str(rng.choice(["top", "top", "all", "npy"]))
    top = int(rng.integers(1, nm + 2))
    args = ["-m", mfile, "--mode", mode]
    args += {"top": ["-t", str(top)], "all": ["--all"], "npy": ["--all", "-O", "npy"]}[out]
    res = os.path.join(d, "out%d.npy" % i) if out == "npy" else None
    if res is not None:
        args += ["-o", res]
    return dict(models=models, names=names, x=x, feats=feats, keys=keys, mode=mode,
                out=out, top=top, args=args, res=res)


def gpu_sizes(stderr):
    m = re.search(r"parameters [0-9.]+ MB \((\d+) bytes, (\d+) bytes a frame\)", stderr)
    if m is None:
        raise Fail("-v names no parameter bytes:\n" + stderr)
    return int(m.group(1)), int(m.group(2))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--cases", type=int, default=20)
    ap.add_argument("--seed", type=int, default=14)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--timeout", type=int, default=60)
    a = ap.parse_args()
    rng = np.random.default_rng(a.seed)
    os.makedirs(a.dir, exist_ok=True)
    nrun = nbound = nrefused = 0
    for i in range(a.cases):
        c = make_case(rng, a.dir, i)
        base = ["gmmscore", "-d", a.device] + c["args"] + [c["feats"]]
        try:
            r = run(base + ["-v"], a.timeout, c["res"])
            nrun += 1
            if r.returncode != 0:
                raise Fail("exit %d: %s" % (r.returncode, r.stderr.decode()))
            ref = scores(c["models"], c["x"], c["mode"])
            check(r.stdout, c["out"], ref, c["names"], c["keys"], c["top"])
            want = r.stdout
            # chunks of which a few hundred at most make the input (each costs a
            # hand-over between threads: thousands would only measure those)
            chunks = [k for k in CHUNKS if len(c["x"]) <= 300 * k]
            opts = [["--chunk", str(rng.choice(chunks))] for _ in range(2)]
            if a.device != "cpu":
                pbytes, frame = gpu_sizes(r.stderr.decode())
                ks = [1, 2, 3, 255, 256, 257, int(rng.integers(1, 5000))]
                for k in rng.choice(ks, 3, replace=False):
                    opts.append(["--max-device-mem", str(pbytes + int(k) * frame)])
                    if rng.random() < 0.5:
                        opts[-1] += ["--chunk", str(rng.choice(chunks))]
                below = pbytes + frame - 1 - int(rng.integers(0, pbytes + frame))
                r = run(base + ["--max-device-mem", str(max(below, 1))], a.timeout, c["res"])
                nrun += 1
                if r.returncode != 1 or r.stdout or b"device memory:" not in r.stderr:
                    raise Fail("a bound of %d bytes (the models take %d, a frame %d): exit "
                               "%d, %r" % (below, pbytes, frame, r.returncode, r.stderr))
                nrefused += 1
            for o in opts:
                r = run(base + o + ["-v"], a.timeout, c["res"])
                nrun += 1
                if r.returncode != 0:
                    raise Fail("%s: exit %d: %s" % (o, r.returncode, r.stderr.decode()))
                if r.stdout != want:
                    raise Fail("%s: output differs from the unbounded run's" % o)
                if o[0] == "--max-device-mem":
                    err = r.stderr.decode()
                    got = int(re.search(r", (\d+) frames a chunk", err).group(1))
                    if pbytes + got * frame > int(o[1]):
                        raise Fail("%s: %d frames a chunk of %d bytes each do not fit "
                                   "beside %d bytes of models" % (o, got, frame, pbytes))
                    nbound += 1
        except Fail as e:
            print("gmmscore_props: case %d (%d frames, %d models, %s): %s\n  %s" % (
                i, len(c["x"]), len(c["models"]), os.path.basename(c["feats"]), e,
                " ".join(base)), file=sys.stderr)
            sys.exit(1)
    print("%d cases, %d runs agree (%d under a memory bound, %d bounds refused)" % (
        a.cases, nrun, nbound, nrefused))


if __name__ == "__main__":
    main()
