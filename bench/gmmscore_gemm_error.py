#!/usr/bin/env python3
"""bench/gmmscore_gemm_error.py [FRAMES] [SEED]: how far the Gaussian terms computed as a
GEMM of [x^2, x, 1] against packed parameters stand from float64, on the benchmark's model
(bench/gmmscore_gen.py's distribution and seed: 6647 models x 32 Gaussians x 39 dims), and
how many models a frame an exact rescoring would take. Issue 15's design question, on the
CPU: the tensor cores' TF32 (operands cut to 10 fraction bits) and 3xTF32 (hi + lo
splits, three products) are emulated with numpy (operands truncated, float32 sums). The models and frames are
gmmscore_gen.py's own (its models() and frames()), the float32 parameters as the model
file holds them, the means recovered as the program does (means_invvars / inv_vars).

For each of fp32, TF32 and 3xTF32, without and with centring (features and means less
the frames' mean per dimension, which shrinks the x^2 terms that cancel), it prints the
largest absolute error against float64 of every model's score (log-sum-exp of its
Gaussians, gmmscore --mode sum) and of each frame's best; then, centred, a bound per
Gaussian, B = (sum_i |X_i||P_i|) (r + 80 2^-23) with r the products' relative error (TF32
2^-9 + 2^-20, 3xTF32 3 2^-20) and 80 2^-23 the float32 sums', whether it held, and the
models a frame whose fast score comes within the bounds of the best fast score: those an
exact rescoring would compute; then the same with cheaper stand-ins for that bound
(Cauchy-Schwarz over whole rows, or over each part). FRAMES: how many (default 300)."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gmmscore_gen import frames, models  # noqa: E402

N = int(sys.argv[1]) if len(sys.argv) > 1 else 300
rng = np.random.default_rng(int(sys.argv[2]) if len(sys.argv) > 2 else 2013)
M, K, D = 6647, 32, 39
G = M * K
w, w32, mi32, iv32 = models(rng, M, K, D)
iv = iv32.astype(np.float64).reshape(G, D)
mu = (mi32 / iv32).astype(np.float64).reshape(G, D)
logw = np.log(w32.astype(np.float64)).reshape(G)
x = frames(rng, w, mi32, iv32, N).astype(np.float64)
gconst = logw - 0.5 * (D * np.log(2 * np.pi) - np.log(iv).sum(1))


def exact(x):
    out = np.empty((len(x), G))
    for a in range(0, G, 20000):
        d = x[:, None, :] - mu[None, a:a + 20000]
        out[:, a:a + 20000] = gconst[a:a + 20000] - 0.5 * (d * d * iv[None, a:a + 20000]).sum(2)
    return out


def lse(t):
    t = t.reshape(len(t), M, K)
    m = t.max(2)
    return m + np.log(np.exp(t - m[:, :, None]).sum(2))


def tf32(a):
    a = np.ascontiguousarray(a, np.float32)
    return (a.view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32)


def gemm(X, P, how):
    X, P = X.astype(np.float32), P.astype(np.float32)
    if how == "fp32":
        return (X @ P).astype(np.float64)
    if how == "tf32":
        return (tf32(X) @ tf32(P)).astype(np.float64)
    xh, ph = tf32(X), tf32(P)
    xl, pl = tf32(X - xh), tf32(P - ph)
    return (xh @ ph + (xh @ pl + xl @ ph)).astype(np.float64)


def packed(c):
    """[x^2, x, 1] (N x 2D+1) and the parameters (2D+1 x G): the terms, about c."""
    xc, mc = x - c, mu - c
    X = np.hstack([xc * xc, xc, np.ones((N, 1))])
    P = np.vstack([-0.5 * iv.T, (iv * mc).T, (gconst - 0.5 * (iv * mc * mc).sum(1))[None, :]])
    return X, P


E = lse(exact(x))
best = E.max(1)
print(f"{N} frames, {M} models x {K} Gaussians x {D} dimensions")
for centre in (False, True):
    X, P = packed(x.mean(0) if centre else np.zeros(D))
    for how in ("fp32", "tf32", "3xtf32"):
        F = lse(gemm(X, P, how))
        print(f"{'centred' if centre else 'as is':8} {how:7} max abs error: every model {np.abs(F - E).max():.3g}, "
              f"the best {np.abs(F.max(1) - best).max():.3g}; another best model in {(F.argmax(1) != E.argmax(1)).sum()} frames")
X, P = packed(x.mean(0))
XP = np.abs(X) @ np.abs(P)
for how, r in (("tf32", 2 * 2.0 ** -10 + 2.0 ** -20), ("3xtf32", 3 * 2.0 ** -20)):
    T = gemm(X, P, how)
    b = XP * (r + 80 * 2.0 ** -23)
    F = lse(T)
    Bm = b.reshape(N, M, K).max(2)
    top = F.argmax(1)
    cand = (F + Bm >= (F[np.arange(N), top] - Bm[np.arange(N), top])[:, None]).sum(1)
    print(f"centred  {how:7} bound held: {bool(np.all(np.abs(T - X @ P) <= b))}; a Gaussian's bound median "
          f"{np.median(b):.3g}, largest {b.max():.3g}; models to rescore a frame: median {np.median(cand):.0f}, "
          f"largest {cand.max()} of {M}")
# Cheaper stand-ins for sum_i |X_i||P_i| (which is a second GEMM): Cauchy-Schwarz on the
# whole rows, |X||P|, or on each part ([x^2], [x], [1]) apart. Do they keep the rescoring
# small? (TF32, centred; top-1 and top-5: the models whose fast score plus its bound
# reaches the 1st or 5th best fast score less its bound.)
T = gemm(X, P, "tf32")
F = lse(T)
r = (2 * 2.0 ** -10 + 2.0 ** -20) + 80 * 2.0 ** -23
nx, npp = np.linalg.norm(X, axis=1), np.linalg.norm(P, axis=0)
parts = [slice(0, D), slice(D, 2 * D), slice(2 * D, 2 * D + 1)]
byp = sum(np.linalg.norm(X[:, q], axis=1)[:, None] * np.linalg.norm(P[q], axis=0)[None, :] for q in parts)
for name, S in (("sum |X_i||P_i|", XP), ("|X| |P|", nx[:, None] * npp[None, :]), ("by part", byp)):
    b = S * r
    Bm = b.reshape(N, M, K).max(2)
    lo1 = (F - Bm).max(1)
    lo5 = np.sort(F - Bm, axis=1)[:, -5]
    c1, c5 = (F + Bm >= lo1[:, None]).sum(1), (F + Bm >= lo5[:, None]).sum(1)
    print(f"bound {name:15} held: {bool(np.all(np.abs(T - X @ P) <= b))}; median {np.median(b):.3g}; models to "
          f"rescore a frame, top-1: median {np.median(c1):.0f}, largest {c1.max()}; top-5: median "
          f"{np.median(c5):.0f}, largest {c5.max()}")
