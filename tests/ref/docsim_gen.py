#!/usr/bin/env python3
"""Generated inputs for tests/docsim.bats, with fixed seeds.

  docsim_gen.py zipf N SEED OUT      N lines of words drawn from a Zipf law over a 4000-word
                                     vocabulary (some lines empty, some repeated)
  docsim_gen.py uzipf N SEED OUT     the same from words of many scripts (Latin-1 and
                                     Latin Extended, Greek, Cyrillic, Hangul, CJK), in
                                     mixed case, between ASCII and Unicode punctuation
  docsim_gen.py dense N M SEED OUT   an N x M matrix of normal numbers (text, or NPY when OUT
                                     ends in .npy), with one all-zero row
  docsim_gen.py uniform N M SEED OUT an N x M matrix of uniform [0,1) float32 (the paper's
                                     term weights)
  docsim_gen.py adversarial N M SEED OUT  N x M float32 made to trip a fast product whose
                                     error a bound covers (issue 15): near-ties (copies of
                                     a few rows nudged by 1e-3 to 1e-7), exact copies, rows
                                     scaled by 1e30 and 1e-30, and rows that one dimension
                                     dominates (cosines near 1, apart in the 5th digit)
  docsim_gen.py clusters N M SEED OUT  N x M float32 (NPY) in clusters of 100: a unit
                                     base row plus normal noise of 0.05 / sqrt(M) a
                                     coordinate. A row's 10th and 42nd best cosines lie
                                     some 4e-4 apart (M = 64): within twice a TF32 bound
                                     (2e-3), far over twice a float32 GEMM's (1.6e-5)
"""
import sys

import numpy as np


def zipf(n, seed, out):
    rng = np.random.default_rng(seed)
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    words = ["".join(rng.choice(letters, size=rng.integers(2, 9))) for _ in range(4000)]
    p = 1.0 / np.arange(1, len(words) + 1) ** 1.1
    p /= p.sum()
    lines = []
    for i in range(n):
        if i % 97 == 5:
            lines.append("")
        elif i % 89 == 7 and lines:
            lines.append(lines[i // 2])
        else:
            k = rng.integers(1, 40)
            lines.append(" ".join(words[j] for j in rng.choice(len(words), size=k, p=p)))
    open(out, "w").write("\n".join(lines) + "\n")


# letters of the scripts docsim(1) names, upper case included, and what comes between words
ALPHABETS = [
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_",
    "äöüßÄÖÜẞéèêëàâçîïôûùÿœæÉÈÊËÀÂÇÎÏÔÛÙŸŒÆñÑ",
    "ąćęłńóśźżĄĆĘŁŃÓŚŹŻčďěňřšťůžČĎĚŇŘŠŤŮŽőűŐŰİıǅǆǄ",
    "αβγδεζηθικλμνξοπρστυφχψωςΑΒΓΔΕΖΗΘΙΚΛΜΝΞΟΠΡΣΤΥΦΧΨΩάέήίόύώΆΈΉΊΌΎΏ",
    "абвгдеёжзийклмнопрстуфхцчшщъыьэюяАБВГДЕЁЖЗИЙКЛМНОПРСТУФХЦЧШЩЪЫЬЭЮЯіїєґІЇЄҐ",
    "가각간갈감갑강개객거건걸검게격견결겸경계고곡곤골공과관광괴교구국군굴궁권귀규균그극근글금급기긴길김",
    "的一是不了人我在有他这中大来上国个到说们为子和你地出道也时年得就那要下以生会自着去之过家学对可",
    "あいうえおかきくけこさしすせそアイウエオカキクケコサシスセソー々",
]
SEPARATORS = [" ", " ", " ", ", ", ". ", " - ", "\t", "’", "。", "、", " — ", " «", "» ", "!", "\u00a0",
              "\u0301 ", "×", "–"]


def uzipf(n, seed, out):
    rng = np.random.default_rng(seed)
    words = []
    for _ in range(3000):
        a = ALPHABETS[rng.integers(len(ALPHABETS))]
        words.append("".join(a[i] for i in rng.integers(len(a), size=rng.integers(1, 8))))
    p = 1.0 / np.arange(1, len(words) + 1) ** 1.1
    p /= p.sum()
    lines = []
    for i in range(n):
        if i % 97 == 5:
            lines.append("")
            continue
        k = rng.integers(1, 30)
        parts = []
        for j in rng.choice(len(words), size=k, p=p):
            w = words[j]
            r = rng.random()
            w = w.upper() if r < 0.1 else w.capitalize() if r < 0.2 else w
            parts.append(w + SEPARATORS[rng.integers(len(SEPARATORS))])
        lines.append("".join(parts).rstrip("\t"))
    open(out, "w", encoding="utf-8").write("\n".join(lines) + "\n")


def dense(n, m, seed, out, uniform=False):
    rng = np.random.default_rng(seed)
    if uniform:
        x = rng.random((n, m), dtype=np.float32)
    else:
        x = rng.standard_normal((n, m)).astype(np.float32)
        x[n // 3] = 0
    if out.endswith(".npy"):
        np.save(out, x)
    else:
        np.savetxt(out, x, fmt="%.9g")


def adversarial(n, m, seed, out):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, m))
    q = n // 5
    # near-ties: each of a few base rows, nudged in one coordinate by sizes from 1e-3
    # down to 1e-7 of its norm, so scores against the rest differ below a TF32 bound
    base = x[:8].copy()
    for i in range(q):
        b = base[i % 8]
        x[8 + i] = b
        x[8 + i, rng.integers(m)] += np.linalg.norm(b) * 10.0 ** -rng.integers(3, 8)
    # exact copies: equal scores, ranked by index
    x[q + 8:2 * q] = x[q // 2:q // 2 + (q - 8)]
    # one dominant dimension: cosines near 1, apart in the 5th digit
    x[2 * q:3 * q] = rng.standard_normal((q, m)) * 1e-2
    x[2 * q:3 * q, 0] = 1.0
    # norms far from 1 (within float32): the product must not see them
    x[3 * q:3 * q + q // 2] *= 1e30
    x[3 * q + q // 2:4 * q] *= 1e-30
    x = x.astype(np.float32)
    if out.endswith(".npy"):
        np.save(out, x)
    else:
        np.savetxt(out, x, fmt="%.9g")


def clusters(n, m, seed, out):
    rng = np.random.default_rng(seed)
    base = rng.standard_normal((max(1, n // 100), m))
    base /= np.linalg.norm(base, axis=1, keepdims=True)
    x = base[np.arange(n) % len(base)] + 0.05 / np.sqrt(m) * rng.standard_normal((n, m))
    np.save(out, x.astype(np.float32))


def main():
    a = sys.argv[1:]
    if a[0] == "zipf":
        zipf(int(a[1]), int(a[2]), a[3])
    elif a[0] == "uzipf":
        uzipf(int(a[1]), int(a[2]), a[3])
    elif a[0] in ("dense", "uniform"):
        dense(int(a[1]), int(a[2]), int(a[3]), a[4], a[0] == "uniform")
    elif a[0] == "adversarial":
        adversarial(int(a[1]), int(a[2]), int(a[3]), a[4])
    elif a[0] == "clusters":
        clusters(int(a[1]), int(a[2]), int(a[3]), a[4])
    else:
        sys.exit("docsim_gen.py: zipf|uzipf|dense|uniform|adversarial|clusters ...")


if __name__ == "__main__":
    main()
