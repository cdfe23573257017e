#!/usr/bin/env python3
"""kaldi_io.py: Kaldi's archive formats written and read in numpy, from Kaldi's source
(kaldi-matrix.cc Matrix::Write/Read, compressed-matrix.cc, io-funcs-inl.h
WriteBasicType, kaldi-table-inl.h archives and scripts), independent of accelkit's C.

  kaldi_io.py write OUT.ark FEATS.npy [FORMAT]   one archive of utterances u0, u1, ... cut
        from the rows of FEATS.npy by --lengths (default: one utterance); FORMAT is
        fm (default), dm, cm, cm2, cm3, text, or mixed (each format in turn);
        --scp OUT.scp writes "KEY OUT.ark:OFFSET" lines for it
  kaldi_io.py decode IN.ark OUT.npy         every matrix of a binary or text archive,
        rows stacked (compressed ones decoded with Kaldi's float arithmetic)
  kaldi_io.py keys IN.ark                   the keys, one a line, with each matrix's shape
  kaldi_io.py compare OUT.ark REF.ark [TOL]  two archives (binary or text): the same keys,
        shapes and values to TOL (relative, default 1e-6); also --npy REF.npy --lengths

Compression follows CompressedMatrix::CopyFromMat: a global header from the matrix's
min and max, then per column (CM) the 0, 25, 75 and 100th percentiles as uint16 and a
byte a value in three ranges (FloatToChar), or (CM2, CM3) a uint16 or uint8 a value.
Every step is written as the float32 and float64 operations C++ performs on Kaldi's
types, so decoding reproduces Kaldi's floats exactly."""

import argparse
import io
import struct
import sys

import numpy as np

F = np.float32
D = np.float64


# ---- compression (CompressedMatrix::CopyFromMat) ----

def global_header(mat):
    """ComputeGlobalHeader for kSpeechFeature, kTwoByteAuto, kOneByteAuto."""
    mn = F(mat.min())
    mx = F(mat.max())
    if mx == mn:
        mx = F(D(mn) + (1.0 + abs(D(mn))))  # float = float + double
    return mn, F(mx - mn)


def float_to_u16(mn, rng, v):
    f = F(F(v) - mn) / rng  # float / float
    f = min(max(f, F(0.0)), F(1.0))
    return int(D(F(f * F(65535))) + 0.499)  # float * int -> float; + double


def float_to_u8(mn, rng, v):
    f = F(F(v) - mn) / rng
    f = min(max(f, F(0.0)), F(1.0))
    return int(D(F(f * F(255))) + 0.499)


def u16_to_float(mn, rng, q):
    # min_value + range * 1.52590218966964e-05F * value, left to right in float
    return F(mn + F(F(rng * F(1.52590218966964e-05)) * F(q)))


def char_to_float(p0, p25, p75, p100, q):
    # p0 + (p25 - p0) * value * (1/64.0): the product of floats in float, then times
    # a double, plus p0 in double, rounded to float on return
    if q <= 64:
        return F(D(p0) + D(F(F(p25 - p0) * F(q))) * (1 / 64.0))
    if q <= 192:
        return F(D(p25) + D(F(F(p75 - p25) * F(q - 64))) * (1 / 128.0))
    return F(D(p75) + D(F(F(p100 - p75) * F(q - 192))) * (1 / 63.0))


def float_to_char(p0, p25, p75, p100, v):
    v = F(v)
    if v < p25:
        f = F(v - p0) / F(p25 - p0)
        return min(max(int(D(F(f * F(64))) + 0.5), 0), 64)
    if v < p75:
        f = F(v - p25) / F(p75 - p25)
        return min(max(64 + int(D(F(f * F(128))) + 0.5), 64), 192)
    f = F(v - p75) / F(p100 - p75)
    return min(max(192 + int(D(F(f * F(63))) + 0.5), 192), 255)


def col_header(mn, rng, col):
    """ComputeColHeader: the order statistics nth_element leaves in place."""
    s = np.sort(col.astype(F))
    n = len(s)
    u = lambda x: float_to_u16(mn, rng, x)
    if n >= 5:
        q = n // 4
        p0 = min(u(s[0]), 65532)
        p25 = min(max(u(s[q]), p0 + 1), 65533)
        p75 = min(max(u(s[3 * q]), p25 + 1), 65534)
        p100 = max(u(s[n - 1]), p75 + 1)
    else:
        p0 = min(u(s[0]), 65532)
        p25 = min(max(u(s[1]), p0 + 1), 65533) if n > 1 else p0 + 1
        p75 = min(max(u(s[2]), p25 + 1), 65534) if n > 2 else p25 + 1
        p100 = max(u(s[3]), p75 + 1) if n > 3 else p75 + 1
    # uint16 arithmetic in C++ wraps; none of these reach 65536 by the clamps above
    return p0, p25, p75, p100 & 0xFFFF


def compress(mat, kind):
    """The bytes after the token of a CM, CM2 or CM3 matrix."""
    mat = np.asarray(mat, dtype=F)
    rows, cols = mat.shape
    if rows == 0 or cols == 0:
        return struct.pack('<ffii', 0.0, 0.0, 0, 0)
    mn, rng = global_header(mat)
    out = io.BytesIO()
    out.write(struct.pack('<ffii', mn, rng, rows, cols))
    if kind == 'cm':
        heads, data = [], []
        for j in range(cols):
            h = col_header(mn, rng, mat[:, j])
            heads.append(struct.pack('<4H', *h))
            p = [u16_to_float(mn, rng, x) for x in h]
            data.append(bytes(float_to_char(*p, v) for v in mat[:, j]))
        out.write(b''.join(heads))
        out.write(b''.join(data))
    elif kind == 'cm2':
        q = [float_to_u16(mn, rng, v) for v in mat.reshape(-1)]
        out.write(struct.pack('<%dH' % len(q), *q))
    else:
        out.write(bytes(float_to_u8(mn, rng, v) for v in mat.reshape(-1)))
    return out.getvalue()


def decompress(kind, mn, rng, rows, cols, payload):
    """CompressedMatrix::CopyToMat."""
    mn, rng = F(mn), F(rng)
    m = np.zeros((rows, cols), dtype=F)
    if kind == 'CM':
        heads = np.frombuffer(payload[:8 * cols], dtype='<u2').reshape(cols, 4)
        data = payload[8 * cols:]
        for j in range(cols):
            p = [u16_to_float(mn, rng, int(x)) for x in heads[j]]
            for i in range(rows):
                m[i, j] = char_to_float(*p, data[j * rows + i])
    else:
        if kind == 'CM2':
            inc = F(D(rng) * (1.0 / 65535.0))
            q = np.frombuffer(payload, dtype='<u2', count=rows * cols)
        else:
            inc = F(D(rng) * (1.0 / 255.0))
            q = np.frombuffer(payload, dtype=np.uint8, count=rows * cols)
        # float(q) * float increment, then + float min: numpy float32 operations
        m[:] = (mn + q.astype(F) * inc).astype(F).reshape(rows, cols)
    return m


# ---- writing ----

def int32(v):
    return b'\x04' + struct.pack('<i', v)


def matrix_bytes(mat, fmt):
    """A matrix object as Kaldi's binary Write (or text) writes it, after "KEY "."""
    mat = np.asarray(mat)
    rows, cols = mat.shape
    if fmt == 'text':
        if rows == 0:
            return b' [ ]\n'
        lines = [b' [']
        for i, r in enumerate(mat.astype(F)):
            lines.append(b'\n  ' + b' '.join(repr(float(x)).encode() for x in r) + b' ')
        return b''.join(lines) + b']\n'
    if fmt in ('fm', 'dm'):
        if rows == 0 or cols == 0:
            rows = cols = 0
        dt = '<f4' if fmt == 'fm' else '<f8'
        return (b'\0B' + (b'FM ' if fmt == 'fm' else b'DM ') + int32(rows) + int32(cols) +
                np.ascontiguousarray(mat, dtype=dt).tobytes())
    tok = {'cm': b'CM ', 'cm2': b'CM2 ', 'cm3': b'CM3 '}[fmt]
    return b'\0B' + tok + compress(mat, fmt)


def write_archive(path, mats, fmts, scp=None):
    """mats: (key, matrix) pairs; fmts: a format per matrix. Returns the offsets."""
    buf = io.BytesIO()
    offs = []
    for (key, m), fmt in zip(mats, fmts):
        buf.write(key.encode() + b' ')
        offs.append(buf.tell())
        buf.write(matrix_bytes(m, fmt))
    with open(path, 'wb') as f:
        f.write(buf.getvalue())
    if scp:
        with open(scp, 'w') as f:
            for (key, _), o in zip(mats, offs):
                f.write('%s %s:%d\n' % (key, path, o))
    return offs


# ---- reading ----

class Reader:
    def __init__(self, data):
        self.d = data
        self.i = 0

    def ws(self):
        while self.i < len(self.d) and self.d[self.i:self.i + 1].isspace():
            self.i += 1

    def key(self):
        self.ws()
        if self.i >= len(self.d):
            return None
        j = self.i
        while j < len(self.d) and not self.d[j:j + 1].isspace():
            j += 1
        k = self.d[self.i:j].decode()
        self.i = j
        if self.d[j:j + 1] in (b' ', b'\t'):
            self.i += 1
        return k

    def take(self, n):
        if self.i + n > len(self.d):
            raise ValueError('truncated at byte %d' % self.i)
        b = self.d[self.i:self.i + n]
        self.i += n
        return b

    def int32(self):
        b = self.take(5)
        if b[0] != 4:
            raise ValueError('bad int32 size byte at %d' % (self.i - 5))
        return struct.unpack('<i', b[1:])[0]

    def matrix(self):
        if self.d[self.i:self.i + 2] != b'\0B':
            return self.text_matrix()
        self.i += 2
        j = self.d.index(b' ', self.i)
        tok = self.d[self.i:j].decode()
        self.i = j + 1
        if tok in ('FM', 'DM'):
            rows, cols = self.int32(), self.int32()
            dt = '<f4' if tok == 'FM' else '<f8'
            n = rows * cols * (4 if tok == 'FM' else 8)
            return np.frombuffer(self.take(n), dtype=dt).astype(F).reshape(rows, cols)
        mn, rng, rows, cols = struct.unpack('<ffii', self.take(16))
        if cols == 0:
            return np.zeros((0, 0), dtype=F)
        size = {'CM': cols * (8 + rows), 'CM2': 2 * rows * cols, 'CM3': rows * cols}[tok]
        return decompress(tok, mn, rng, rows, cols, self.take(size))

    def text_matrix(self):
        self.ws()
        end = self.d.index(b']', self.i)
        body = self.d[self.i:end].decode()
        self.i = end + 1
        if not body.startswith('['):
            raise ValueError('expected [')
        rows = [list(map(float, l.split())) for l in body[1:].split('\n') if l.strip()]
        return np.array(rows, dtype=F).reshape(len(rows), -1 if rows else 0)

    def entries(self):
        while True:
            k = self.key()
            if k is None:
                return
            yield k, self.matrix()


def read_archive(path):
    with open(path, 'rb') as f:
        return list(Reader(f.read()).entries())


def cut(x, lengths):
    if not lengths:
        return [('u0', x)]
    out, i = [], 0
    for n, ln in enumerate(lengths):
        out.append(('u%d' % n, x[i:i + ln]))
        i += ln
    if i != len(x):
        raise SystemExit('lengths add up to %d, the features have %d rows' % (i, len(x)))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('cmd', choices=['write', 'decode', 'keys', 'compare'])
    ap.add_argument('args', nargs='*')
    ap.add_argument('--lengths', default='')
    ap.add_argument('--scp')
    ap.add_argument('--npy')
    a = ap.parse_args()
    lengths = [int(v) for v in a.lengths.split(',')] if a.lengths else []
    if a.cmd == 'write':
        out, feats = a.args[0], a.args[1]
        fmt = a.args[2] if len(a.args) > 2 else 'fm'
        x = np.load(feats)
        x = x.astype(F if fmt != 'dm' else D)
        mats = cut(x, lengths)
        order = ['fm', 'dm', 'cm', 'cm2', 'cm3', 'text']
        fmts = [order[i % len(order)] for i in range(len(mats))] if fmt == 'mixed' \
            else [fmt] * len(mats)
        write_archive(out, mats, fmts, a.scp)
    elif a.cmd == 'decode':
        ms = [m for _, m in read_archive(a.args[0]) if m.size]
        np.save(a.args[1], np.concatenate(ms) if ms else np.zeros((0, 0), F))
    elif a.cmd == 'keys':
        for k, m in read_archive(a.args[0]):
            print('%s %dx%d' % (k, m.shape[0], m.shape[1] if m.ndim == 2 else 0))
    else:
        got = read_archive(a.args[0])
        tol = float(a.args[2]) if len(a.args) > 2 else 1e-6
        if a.npy:
            want = cut(np.load(a.npy).astype(F), lengths)
        else:
            want = read_archive(a.args[1])
        if [k for k, _ in got] != [k for k, _ in want]:
            raise SystemExit('keys differ: %s against %s' %
                             ([k for k, _ in got][:5], [k for k, _ in want][:5]))
        for (k, g), (_, w) in zip(got, want):
            if g.size == 0 and w.size == 0:
                continue
            if g.shape != w.shape:
                raise SystemExit('%s: shape %s against %s' % (k, g.shape, w.shape))
            err = np.max(np.abs(g - w) / np.maximum(1.0, np.abs(w)))
            if not err <= tol:
                raise SystemExit('%s: largest relative difference %g > %g' % (k, err, tol))
        print('ok %d matrices' % len(got))


if __name__ == '__main__':
    main()
