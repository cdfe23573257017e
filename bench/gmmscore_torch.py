#!/usr/bin/env python3
"""bench/gmmscore_torch.py: gmmscore's PyTorch peer and the float64 precision check.

  gmmscore_torch.py DIR [--repeat R] [--chunk C] [--check-sum OUT...] [--check-max OUT...]
      The peer, for --mode sum and max and for DIR/feats.npy and DIR/feats.htk: reads
      DIR/model.npz and the feature file, scores every frame against every model on
      the GPU as one [x^2, x, 1] GEMM a chunk in float32 (TF32 off), then logsumexp
      (sum) or max over each model's components, takes the best model a frame and
      writes "UTT FRAME MODEL SCORE" lines to DIR/torch.MODE.FMT.txt as gmmscore does.
      Prints import and CUDA start-up times once, then for each case the best of R
      runs: end-to-end seconds (files in to file out, in the running process) and
      device seconds (CUDA events around the scoring loop). Then the float64 check:
      for each output file of best models given (gmmscore's format; the peer's own
      NPY outputs are checked too), the largest absolute error of its scores against
      float64 scores and how many frames name a model other than float64's best
      (beyond a tie within 1e-3).
"""
import argparse
import struct
import sys
import time

T_START = time.perf_counter()
import numpy as np  # noqa: E402
import torch  # noqa: E402

T_IMPORT = time.perf_counter() - T_START


def load_feats(path):
    if path.endswith(".npy"):
        return np.load(path)
    raw = open(path, "rb").read()
    n, _, size, _ = struct.unpack(">iihh", raw[:12])
    return np.frombuffer(raw, ">f4", offset=12).reshape(n, size // 4).astype(np.float32)


def weights(model, dev, dtype):
    """The (2D+1) x (M*K) matrix of [x^2, x, 1] coefficients, Kaldi's expanded form."""
    z = np.load(model)
    w, mi, iv = z["w"], z["means_invvars"], z["inv_vars"]
    M, K, D = mi.shape
    mi64, iv64 = mi.astype(np.float64), iv.astype(np.float64)
    gc = (np.log(w.astype(np.float64)) - 0.5 * (D * np.log(2 * np.pi) - np.log(iv64).sum(2)
          + (mi64 ** 2 / iv64).sum(2)))
    W = np.concatenate([-0.5 * iv64.reshape(M * K, D), mi64.reshape(M * K, D),
                        gc.reshape(M * K, 1)], 1)
    return torch.from_numpy(W.T.copy()).to(dev, dtype), M, K


def scores(W, M, K, x, mode, chunk, dtype, per_chunk):
    n = x.shape[0]
    for i in range(0, n, chunk):
        xc = x[i:i + chunk].to(dtype)
        A = torch.cat([xc * xc, xc, torch.ones(len(xc), 1, device=x.device, dtype=dtype)], 1)
        S = (A @ W).view(len(xc), M, K)
        L = torch.logsumexp(S, 2) if mode == "sum" else S.amax(2)
        per_chunk(i, L)


def time_case(a, dev, mode, feats, out):
    best = None
    for _ in range(a.repeat):
        t0 = time.perf_counter()
        W, M, K = weights(a.dir + "/model.npz", dev, torch.float32)
        x = torch.from_numpy(load_feats(feats)).to(dev)
        n = x.shape[0]
        bs = torch.empty(n, device=dev)
        bm = torch.empty(n, device=dev, dtype=torch.long)

        def keep(i, L):
            bs[i:i + len(L)], bm[i:i + len(L)] = L.max(1)

        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        scores(W, M, K, x, mode, a.chunk, torch.float32, keep)
        e1.record()
        s, m = bs.cpu().numpy(), bm.cpu().numpy()
        with open(out, "w") as f:
            f.write("".join("%s\t%d\t%d\t%.9g\n" % (feats, i, mi, si)
                            for i, (mi, si) in enumerate(zip(m, s))))
        torch.cuda.synchronize()
        t = (time.perf_counter() - t0, e0.elapsed_time(e1) / 1e3)
        best = t if best is None or t[0] < best[0] else best
        del W, x, bs, bm
        torch.cuda.empty_cache()
    print("torch %s %s e2e_s %.4f device_s %.4f" % (mode, feats.rsplit(".", 1)[1], *best))


def read_best(path, n):
    model = np.empty(n, np.int64)
    score = np.empty(n, np.float64)
    for line in open(path):
        _, f, m, s = line.rstrip("\n").split("\t")
        model[int(f)], score[int(f)] = int(m), float(s)
    return model, score


def check(a, dev, mode, paths):
    feats = a.dir + "/feats.npy"
    x = torch.from_numpy(load_feats(feats)).to(dev)
    n = x.shape[0]
    outs = [read_best(p, n) for p in paths]
    W, M, K = weights(a.dir + "/model.npz", dev, torch.float64)
    best = torch.empty(n, device=dev, dtype=torch.float64)
    theirs = [torch.empty(n, device=dev, dtype=torch.float64) for _ in outs]
    models = [torch.from_numpy(m).to(dev) for m, _ in outs]

    def keep(i, L):
        j = slice(i, i + len(L))
        best[j] = L.max(1).values
        for t, m in zip(theirs, models):
            t[j] = L.gather(1, m[j, None])[:, 0]

    scores(W, M, K, x, mode, 1024, torch.float64, keep)
    b = best.cpu().numpy()
    for p, (m, s), t in zip(paths, outs, theirs):
        t = t.cpu().numpy()
        err = np.abs(s - t).max()
        wrong = int((b - t > 1e-3).sum())
        print("check %s %s max_abs_err %.3g other_model %d of %d" % (
            mode, p.rsplit("/", 1)[-1], err, wrong, n))
    del W, x
    torch.cuda.empty_cache()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--chunk", type=int, default=8192)
    ap.add_argument("--check-sum", nargs="*", default=[])
    ap.add_argument("--check-max", nargs="*", default=[])
    a = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    t0 = time.perf_counter()
    dev = torch.device("cuda")
    torch.zeros(1, device=dev)
    torch.cuda.synchronize()
    print("torch_start_s %.3f (import %.3f, CUDA %.3f)" % (
        T_IMPORT + time.perf_counter() - t0, T_IMPORT, time.perf_counter() - t0))
    for mode in ("sum", "max"):
        for fmt in ("npy", "htk"):
            time_case(a, dev, mode, "%s/feats.%s" % (a.dir, fmt),
                      "%s/torch.%s.%s.txt" % (a.dir, mode, fmt))
    sys.stdout.flush()
    check(a, dev, "sum", a.check_sum + [a.dir + "/torch.sum.npy.txt"])
    check(a, dev, "max", a.check_max + [a.dir + "/torch.max.npy.txt"])
    sys.stdout.flush()


if __name__ == "__main__":
    main()
