#!/usr/bin/env python3
r"""Independent references for tests/docsim.bats (scikit-learn, scipy, numpy).

  docsim_ref.py sim CORPUS [-q QUERIES] [--format text|dense|libsvm] [text options] OUT.npy
      the expected similarity matrix: TfidfVectorizer + linear_kernel for text (its
      defaults: str.lower, token_pattern r"(?u)\b\w\w+\b"; --ngram MIN,MAX its
      ngram_range, --char-ngram MIN,MAX analyzer='char_wb'), on lines decoded as UTF-8
      with each byte outside valid UTF-8 read as Latin-1 (as docsim(1) reads them);
      rows scaled to norm 1 in float64 (unit_rows) and their dot products for vectors
  docsim_ref.py check SIM.npy OUTPUT [-k K] [-t X] [--all-pairs] [--pairs] [--ids CORPUS [QUERIES]]
      checks docsim's output against the matrix: scores within 1e-5, the neighbour sets a
      true top-k (ties may differ only among equal scores) of the scores >= the threshold,
      or > 0 without one, the order, -k 0
  docsim_ref.py nn CORPUS OUTPUT -k K
      NearestNeighbors(metric='cosine') on the TF-IDF vectors: the same top-k scores
  docsim_ref.py convert CORPUS libsvm|mm|dense|npy OUT [--ids]
      the TF-IDF vectors of a text corpus in another format
  docsim_ref.py rows X.npy OUTPUT -k K [--sample N] [--seed S]
      all-pairs top-k of dense vectors checked whole and on sampled rows: every row's
      k lines together, in row order, no document twice (nor the row itself), scores
      descending; and N rows (ties by ascending id there) drawn with seed S (the first
      and the last among them) as check checks them, against numpy's float64 cosines
      of those rows alone (the whole matrix would not fit at the sizes this is for)
  docsim_ref.py same OUT1 OUT2
      two docsim outputs agree: the same lines up to 1e-6 in scores and order among ties
"""
import argparse
import codecs
import re
import sys

import numpy as np
import scipy.io
import scipy.sparse as sp
from sklearn.datasets import dump_svmlight_file, load_svmlight_file
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.metrics.pairwise import linear_kernel
from sklearn.neighbors import NearestNeighbors

TOL = 1e-5


def latin1_bytes(e):
    """A decode error handler: each byte outside valid UTF-8 is its Latin-1 character."""
    return "".join(chr(b) for b in e.object[e.start:e.end]), e.end


codecs.register_error("docsim-latin1", latin1_bytes)


def decode(b):
    return b.decode("utf-8", "docsim-latin1")


def records(path, ids=False):
    """Lines of a file as docsim reads them: bytes split on \\n, a final \\r dropped."""
    data = open(path, "rb").read()
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    lines = [l[:-1] if l.endswith(b"\r") else l for l in lines]
    names = None
    if ids:
        names = [l.split(b"\t", 1)[0] for l in lines]
        lines = [l.split(b"\t", 1)[1] for l in lines]
    return [decode(l) for l in lines], names


def df_arg(s, default):
    if s is None:
        return default
    return float(s) if any(c in s for c in ".eE") else int(s)


def ngram_range(s):
    lo, _, hi = s.partition(",")
    return int(lo), int(hi or lo)


def vectorizer(a):
    stop = None
    if a.stop_words:
        # docsim lower-cases its stop words (words split at ASCII blanks) as the text
        words = re.split(rb"[ \t\n\r\v\f]+", open(a.stop_words, "rb").read())
        stop = [decode(w).lower() for w in words if w]
    ngram, analyzer = (1, 1), "word"
    if getattr(a, "ngram", None):
        ngram = ngram_range(a.ngram)
    if getattr(a, "char_ngram", None):
        ngram, analyzer = ngram_range(a.char_ngram), "char_wb"
    return TfidfVectorizer(
        stop_words=stop,
        ngram_range=ngram,
        analyzer=analyzer,
        use_idf=a.weight == "tfidf",
        binary=a.weight == "binary",
        norm=None if a.weight == "none" else "l2",
        sublinear_tf=a.sublinear_tf,
        min_df=df_arg(a.min_df, 1),
        max_df=df_arg(a.max_df, 1.0),
        dtype=np.float64,
    )


def text_vectors(a):
    docs, _ = records(a.corpus, a.ids)
    qdocs = records(a.queries, a.ids)[0] if a.queries else None
    v = vectorizer(a)
    try:
        X = v.fit_transform(docs)
    except ValueError as e:
        if "empty vocabulary" not in str(e):
            raise
        # no terms at all: every score is 0 (sklearn refuses to fit)
        X = sp.csr_matrix((len(docs), 0))
        return X, (sp.csr_matrix((len(qdocs), 0)) if qdocs is not None else None)
    return X, (v.transform(qdocs) if qdocs is not None else None)


def unit_rows(X):
    """Rows scaled to norm 1 in float64, zero rows left zero. (sklearn's normalize leaves
    a row whose norm is below 10 eps, 2.2e-15, as it is: a row of 1e-30s would score 0
    against everything, where docsim, rightly, finds its cosines.)"""
    X = X.astype(np.float64)
    if sp.issparse(X):
        n = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
        n[n == 0] = 1
        return sp.diags(1 / n) @ X
    n = np.linalg.norm(X, axis=1)
    n[n == 0] = 1
    return X / n[:, None]


def sim_matrix(a):
    """The expected similarity matrix (float64, dense) for the options in a."""
    if a.format == "text":
        X, Q = text_vectors(a)
    elif a.format == "libsvm":
        X = load_svmlight_file(a.corpus, zero_based=True)[0]
        Q = None
        if a.queries:
            Q = load_svmlight_file(a.queries, zero_based=True)[0].tocsc()
            # columns the corpus lacks are unknown terms
            Q = sp.hstack([Q[:, :X.shape[1]], sp.csr_matrix((Q.shape[0], max(0, X.shape[1] - Q.shape[1])))]).tocsr()
        X, Q = unit_rows(X), (unit_rows(Q) if Q is not None else None)
    else:
        X = np.load(a.corpus) if a.corpus.endswith(".npy") else np.loadtxt(a.corpus, ndmin=2)
        Q = None
        if a.queries:
            Q = np.load(a.queries) if a.queries.endswith(".npy") else np.loadtxt(a.queries, ndmin=2)
        X = X.astype(np.float64)
        if a.weight != "none":
            X = unit_rows(X)
            Q = unit_rows(Q) if Q is not None else None
    A = Q if Q is not None else X
    S = linear_kernel(A, X) if X.shape[1] > 0 else np.zeros((A.shape[0], X.shape[0]))
    if sp.issparse(S):
        S = S.toarray()
    return np.asarray(S, dtype=np.float64)


def cmd_sim(a):
    np.save(a.out, sim_matrix(a))


class Mismatch(Exception):
    """docsim's output is not what the reference expects."""


def fail(msg):
    raise Mismatch(msg)


def parse_output(path, qnames, cnames):
    """Lines QUERY<TAB>DOC<TAB>SCORE as (q, d, printed score, the score as text)."""
    qmap = {n: i for i, n in reversed(list(enumerate(qnames)))} if qnames else None
    cmap = {n: i for i, n in reversed(list(enumerate(cnames)))} if cnames else None
    out = []
    for ln, line in enumerate(open(path, "rb").read().split(b"\n")[:-1], 1):
        f = line.split(b"\t")
        if len(f) != 3:
            fail(f"output line {ln}: not QUERY<TAB>DOC<TAB>SCORE: {line!r}")
        q = qmap[f[0]] if qmap else int(f[0]) - 1
        d = cmap[f[1]] if cmap else int(f[1]) - 1
        if len(f[2].split(b".")[-1]) != 6:
            fail(f"output line {ln}: score {f[2]!r} has not 6 decimals")
        out.append((q, d, float(f[2]), ln))
    return out


def cmd_check(a):
    print(check(a, np.load(a.sim)))


def check(a, S, rows=None):
    """Checks the output file a.output against the similarity matrix S (see cmd_check);
    with rows, S holds only those query rows (top-k), and only their lines are checked."""
    nq, n = S.shape
    cnames = qnames = None
    if a.ids:
        _, cnames = records(a.ids[0], True)
        qnames = records(a.ids[1], True)[1] if len(a.ids) > 1 else cnames
    lines = parse_output(a.output, qnames, cnames)
    if rows is not None:
        keep = set(rows)
        lines = [l for l in lines if l[0] in keep]
    thr = a.threshold
    if a.pairs:
        got = {}
        prev = None
        for q, d, s, ln in lines:
            if a.all_pairs and not q < d:
                fail(f"line {ln}: pair {q+1} {d+1} is not lower id first")
            if (q, d) in got:
                fail(f"line {ln}: pair {q+1} {d+1} twice")
            got[(q, d)] = s
            if abs(s - S[q, d]) > TOL:
                fail(f"line {ln}: score {s} for {q+1} {d+1}, expected {S[q, d]:.6f}")
            if S[q, d] < thr - TOL:
                fail(f"line {ln}: {q+1} {d+1} scores {S[q, d]:.6f} < threshold {thr}")
            if prev is not None and (q < prev[0] or (q == prev[0] and s > prev[2] + 1e-12)):
                fail(f"line {ln}: pairs out of order")
            prev = (q, d, s)
        for i in range(nq):
            for j in range(i + 1 if a.all_pairs else 0, n):
                if S[i, j] >= thr + TOL and (i, j) not in got:
                    fail(f"missing pair {i+1} {j+1} (score {S[i, j]:.6f} >= {thr})")
        return f"ok: {len(got)} pairs"
    groups = {}
    order = []
    for q, d, s, ln in lines:
        if q not in groups:
            if order and q < order[-1]:
                fail(f"line {ln}: query {q+1} after query {order[-1]+1}")
            order.append(q)
            groups[q] = []
        elif order[-1] != q:
            fail(f"line {ln}: the lines of query {q+1} are not together")
        groups[q].append((d, s, ln))
    k = a.k
    for qi, q in enumerate(rows if rows is not None else range(nq)):
        g = groups.get(q, [])
        row = S[qi]
        mask = np.ones(n, dtype=bool)
        if a.all_pairs:
            mask[q] = False
        if thr is not None:
            nhi = int(np.count_nonzero(mask & (row >= thr + TOL)))
            nlo = int(np.count_nonzero(mask & (row >= thr - TOL)))
        else:
            # without a threshold, only related documents: scores above 0
            nhi = int(np.count_nonzero(mask & (row > TOL)))
            nlo = int(np.count_nonzero(mask & (row > 0)))
        if not (min(k, nhi) <= len(g) <= min(k, nlo)):
            fail(f"query {q+1}: {len(g)} neighbours, expected {min(k, nhi)}")
        seen = set()
        for idx, (d, s, ln) in enumerate(g):
            if d in seen:
                fail(f"line {ln}: document {d+1} twice for query {q+1}")
            seen.add(d)
            if a.all_pairs and d == q:
                fail(f"line {ln}: document {d+1} is its own neighbour")
            if abs(s - row[d]) > TOL:
                fail(f"line {ln}: score {s} for {q+1} {d+1}, expected {row[d]:.6f}")
            if thr is None and not row[d] > 0:
                fail(f"line {ln}: {q+1} {d+1} scores {row[d]:.6f}: not a related document")
            if idx > 0:
                pd, ps, _ = g[idx - 1]
                if s > ps:
                    fail(f"line {ln}: scores not descending")
                if s == ps and abs(row[d] - row[pd]) < 1e-9 and d < pd:
                    fail(f"line {ln}: equal scores not by ascending document id")
        if g and len(g) == k:
            worst = min(row[d] for d, _, _ in g)
            rest = mask.copy()
            rest[[d for d, _, _ in g]] = False
            if thr is not None:
                rest &= row >= thr - TOL
            if (row[rest] > worst + TOL).any():
                j = int(np.flatnonzero(rest & (row > worst + TOL))[0])
                fail(f"query {q+1}: document {j+1} (score {row[j]:.6f}) beats a neighbour ({worst:.6f})")
    return f"ok: {len(lines)} lines"


def cmd_rows(a):
    X = np.load(a.corpus)
    n, k = X.shape[0], min(a.k, X.shape[0] - 1)
    prev_q, cnt, seen, last = -1, 0, set(), None
    for q, d, s, ln in parse_output(a.output, None, None):
        if q != prev_q:
            if q != prev_q + 1 or cnt != (k if prev_q >= 0 else 0):
                fail(f"line {ln}: query {q+1} after query {prev_q+1}'s {cnt} lines (every row has {k}, in order)")
            prev_q, cnt, seen, last = q, 0, set(), None
        if d in seen or d == q:
            fail(f"line {ln}: document {d+1} twice (or itself) for query {q+1}")
        if last is not None and s > last:
            fail(f"line {ln}: scores not descending")
        seen.add(d)
        last = s
        cnt += 1
    if prev_q != n - 1 or cnt != k:
        fail(f"the output ends at query {prev_q+1} with {cnt} lines, not at {n} with {k}")
    rng = np.random.default_rng(a.seed)
    rows = sorted(set(rng.choice(n, size=min(a.sample, n), replace=False).tolist()) | {0, n - 1})
    U = unit_rows(X)
    a.threshold, a.ids, a.pairs, a.all_pairs = None, None, False, True
    print(check(a, U[rows] @ U.T, rows) + f" of {len(rows)} sampled rows; {n} rows of {k} in all")


def cmd_nn(a):
    a.weight, a.sublinear_tf, a.min_df, a.max_df, a.stop_words, a.queries, a.ids = (
        "tfidf", False, None, None, None, None, False)
    X, _ = text_vectors(a)
    n = X.shape[0]
    k = min(a.k, n - 1)
    nn = NearestNeighbors(n_neighbors=k + 1, metric="cosine", algorithm="brute").fit(X)
    dist, idx = nn.kneighbors(X)
    lines = parse_output(a.output, None, None)
    ours = {}
    for q, d, s, ln in lines:
        ours.setdefault(q, []).append(s)
    for i in range(n):
        keep = [j for j in range(k + 1) if idx[i, j] != i][:k]
        want = sorted((1 - dist[i, j] for j in keep), reverse=True)
        got = ours.get(i, [])
        if len(got) != len(want) or any(abs(x - y) > TOL for x, y in zip(got, want)):
            fail(f"document {i+1}: scores {got} but NearestNeighbors gives {[round(w, 6) for w in want]}")
    print(f"ok: {n} documents")


def cmd_convert(a):
    a.weight, a.sublinear_tf, a.min_df, a.max_df, a.stop_words, a.queries = (
        "tfidf", False, None, None, None, None)
    X, _ = text_vectors(a)
    X = X.astype(np.float32)
    if a.to == "libsvm":
        dump_svmlight_file(X, np.zeros(X.shape[0]), a.out, zero_based=False)
    elif a.to == "mm":
        scipy.io.mmwrite(a.out, X.astype(np.float64), field="real", precision=9)
    elif a.to == "npy":
        np.save(a.out, X.toarray())
    else:
        np.savetxt(a.out, X.toarray(), fmt="%.9g", delimiter=" ")


def cmd_same(a):
    A = [l.split(b"\t") for l in open(a.one, "rb").read().split(b"\n")[:-1]]
    B = [l.split(b"\t") for l in open(a.two, "rb").read().split(b"\n")[:-1]]
    if len(A) != len(B):
        fail(f"{len(A)} lines against {len(B)}")
    # group by query; within a query, compare (doc, score) up to ties
    def groups(L):
        g = {}
        for f in L:
            g.setdefault(f[0], []).append((f[1], float(f[2])))
        return g
    ga, gb = groups(A), groups(B)
    if list(ga) != list(gb):
        fail("different queries or query order")
    for q in ga:
        x, y = ga[q], gb[q]
        if len(x) != len(y):
            fail(f"query {q!r}: {len(x)} lines against {len(y)}")
        for (d1, s1), (d2, s2) in zip(x, y):
            if abs(s1 - s2) > 1e-6:
                fail(f"query {q!r}: score {s1} against {s2}")
        # the documents may differ only within runs of equal scores
        tail_x = {d for d, s in x if s > x[-1][1] + 1e-6}
        tail_y = {d for d, s in y if s > y[-1][1] + 1e-6}
        if tail_x != tail_y:
            fail(f"query {q!r}: different neighbours")
    print(f"ok: {len(A)} lines")


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("sim")
    s.add_argument("corpus")
    s.add_argument("out")
    s.add_argument("-q", "--queries")
    s.add_argument("--format", default="text")
    s.add_argument("--ids", action="store_true")
    s.add_argument("--weight", default="tfidf")
    s.add_argument("--sublinear-tf", action="store_true")
    s.add_argument("--min-df")
    s.add_argument("--max-df")
    s.add_argument("--stop-words")
    s.add_argument("--ngram")
    s.add_argument("--char-ngram")
    c = sub.add_parser("check")
    c.add_argument("sim")
    c.add_argument("output")
    c.add_argument("-k", type=int, default=10)
    c.add_argument("-t", "--threshold", type=float)
    c.add_argument("--all-pairs", action="store_true")
    c.add_argument("--pairs", action="store_true")
    c.add_argument("--ids", nargs="+")
    n = sub.add_parser("nn")
    n.add_argument("corpus")
    n.add_argument("output")
    n.add_argument("-k", type=int, default=10)
    v = sub.add_parser("convert")
    v.add_argument("corpus")
    v.add_argument("to", choices=["libsvm", "mm", "dense", "npy"])
    v.add_argument("out")
    v.add_argument("--ids", action="store_true")
    r = sub.add_parser("rows")
    r.add_argument("corpus")
    r.add_argument("output")
    r.add_argument("-k", type=int, default=10)
    r.add_argument("--sample", type=int, default=200)
    r.add_argument("--seed", type=int, default=1)
    m = sub.add_parser("same")
    m.add_argument("one")
    m.add_argument("two")
    a = p.parse_args()
    try:
        {"sim": cmd_sim, "check": cmd_check, "nn": cmd_nn, "convert": cmd_convert, "same": cmd_same,
         "rows": cmd_rows}[a.cmd](a)
    except Mismatch as e:
        print("docsim_ref: " + str(e), file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
