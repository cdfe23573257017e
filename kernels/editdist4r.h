/* editdist4r.h: what the CPU and CUDA paths of editdist4r share.
 *
 * The DP table D[i][j] (i over A's rows, j over B's columns) is carried as differences:
 * h = D[i][j] - D[i][j-1] and v = D[i][j] - D[i-1][j], each in {-1, 0, 1}. A strip of
 * R rows walks its columns in chunks of W, taking the h values of the row above it and
 * handing its bottom row's h values to the strip below.
 *
 * Four-Russians (Masek & Paterson; the alphabet-independent table of Kim, Na, Park and
 * Sim 2016): a t-block is keyed by its top-row h vector and left-column v vector, each
 * t trits written base 3 (digit = value + 1), and by its t x t match bits (bit x*t + y:
 * A[row y] == B[column x]), so any byte alphabet uses the same table of
 * 3^t * 3^t * 2^(t*t) entries. An entry holds the bottom-row h vector (bits 0-4),
 * the right-column v vector (bits 5-9) and their sums plus t (bits 10-12, 13-15).
 *
 * Bit-parallel (Myers 1999, in Hyyro's block form as edlib uses it): a strip of up to
 * one machine word of rows keeps its column's v values as the bit vectors Pv (+1) and
 * Mv (-1) and advances one column a step. */
#ifndef EDITDIST4R_H
#define EDITDIST4R_H

#include <stddef.h>
#include <stdint.h>

#include "hostdev.h"

#ifdef __cplusplus
extern "C" {
#endif

#define FR_TMAX 3		/* largest Four-Russians block: a 746 KB table */

enum ed_algo { ED_AUTO = 0, ED_4R, ED_BP, ED_DP };
/* --mode: edlib's NW (A against all of B), HW (A against the best piece of B: B's
 * ends free) and SHW (A against the best start of B: B's end free). */
enum ed_mode { ED_GLOBAL = 0, ED_INFIX, ED_PREFIX };

/* One pair: A (rows) and B (columns) as offsets into a byte pool. */
struct ed_pair {
	uint32_t aoff, alen, boff, blen;
};

struct ed_opts {
	int algo;		/* enum ed_algo, as --algo asked */
	int auto_algo;		/* the engine of ED_AUTO: the tuning row's (editdist4r_tune.h) */
	int t;			/* Four-Russians block size, 1..FR_TMAX */
	int64_t maxdist;	/* --max-dist, -1 for none */
	int mode;		/* enum ed_mode (a GPU: bit-parallel engines only) */
};

/* The engine that runs: ED_4R, ED_BP or ED_DP. */
static inline int
ed_engine(const struct ed_opts *o)
{
	return o->algo == ED_AUTO ? o->auto_algo : o->algo;
}

/* ---- the band that an alignment of cost <= K never leaves ---- */

struct ed_band {
	int on;
	int64_t lo, hi;		/* j - i in [lo, hi] */
};

/* Returns 0 when no alignment of cost <= K exists (|m - n| > K). */
static inline HOSTDEV int
ed_band_make(int64_t m, int64_t n, int64_t K, struct ed_band *b)
{
	b->on = K >= 0;
	b->lo = b->hi = 0;
	if (!b->on)
		return 1;
	if (n - m > K || m - n > K)
		return 0;
	b->lo = n - m - K > -K ? n - m - K : -K;
	b->hi = n - m + K < K ? n - m + K : K;
	return 1;
}

/* The chunks of W columns that the strip of rows i0+1..i1 computes: [*clo, *chi].
 * Cells outside them read as over-estimates (h = +1 to the right of the strip above,
 * v = +1 down a strip's left edge), which leaves every value <= K exact. */
static inline HOSTDEV void
ed_band_chunks(const struct ed_band *b, int64_t i0, int64_t i1, int64_t n, int64_t W,
    int64_t *clo, int64_t *chi)
{
	if (!b->on) {
		*clo = 0;
		*chi = (n + W - 1) / W - 1;
		return;
	}
	int64_t jl = i0 + 1 + b->lo, jr = i1 + b->hi;
	if (jl < 1)
		jl = 1;
	if (jr > n)
		jr = n;
	*clo = (jl - 1) / W;
	*chi = (jr - 1) / W;
}

/* ---- Four-Russians blocks ---- */

static inline HOSTDEV uint32_t
fr_pow3(int k)
{
	uint32_t p = 1;
	while (k-- > 0)
		p *= 3;
	return p;
}

/* The vector of x trits all +1 (a DP boundary, or an over-estimate outside the band). */
static inline HOSTDEV uint32_t
fr_allplus(int x)
{
	return fr_pow3(x) - 1;
}

static inline HOSTDEV size_t
fr_table_len(int t)
{
	size_t p = fr_pow3(t);
	return (p * p) << (t * t);
}

static inline HOSTDEV uint32_t
fr_key(uint32_t h3, uint32_t v3, uint32_t match, int t)
{
	return ((h3 * fr_pow3(t) + v3) << (t * t)) | match;
}

#define FR_HOUT(e) ((e) & 31u)
#define FR_VOUT(e) (((e) >> 5) & 31u)
#define FR_HSUM(e) ((int)(((e) >> 10) & 7u))	/* sum of the bottom h values + width */

/* A block of R rows and X columns (each <= FR_TMAX) cell by cell: the table's entries
 * (R = X = t) and the ragged blocks at the right and bottom edges. match bit x*R + y
 * is A[row y] == B[column x]. Returns an entry as the table stores it. */
static inline HOSTDEV uint32_t
fr_cells(uint32_t h3, uint32_t v3, uint32_t match, int R, int X)
{
	int h[FR_TMAX];
	uint32_t ho = 0, vo = 0, p = 1;
	int hs = 0, vs = 0;

	for (int x = 0; x < X; x++) {
		h[x] = (int)(h3 % 3) - 1;
		h3 /= 3;
	}
	for (int y = 0; y < R; y++) {
		int vin = (int)(v3 % 3) - 1;
		v3 /= 3;
		for (int x = 0; x < X; x++) {
			/* D[i][j] - D[i-1][j-1] = min(mismatch, up + 1, left + 1) */
			int d = (int)!((match >> (x * R + y)) & 1);
			if (h[x] + 1 < d)
				d = h[x] + 1;
			if (vin + 1 < d)
				d = vin + 1;
			int hout = d - vin;
			vin = d - h[x];
			h[x] = hout;
		}
		vo += (uint32_t)(vin + 1) * p;
		vs += vin;
		p *= 3;
	}
	p = 1;
	for (int x = 0; x < X; x++) {
		ho += (uint32_t)(h[x] + 1) * p;
		hs += h[x];
		p *= 3;
	}
	return ho | vo << 5 | (uint32_t)(hs + X) << 10 | (uint32_t)(vs + R) << 13;
}

/* ---- bit-parallel columns ---- */

/* One column of one word of rows: v vectors *pv, *mv, the column's match bits eq,
 * the h value entering from above (hp = 1 for +1, hm = 1 for -1). *ph, *mh get the
 * column's h values at every row of the word (read the bottom row's bit). */
#define ED_BP_DEFINE(NAME, WORD)                                                 \
	static inline HOSTDEV void NAME(WORD *pv, WORD *mv, WORD eq, WORD hp,   \
	    WORD hm, WORD *ph, WORD *mh)                                         \
	{                                                                        \
		WORD xv = eq | *mv;                                              \
		eq |= hm;                                                        \
		WORD xh = (((eq & *pv) + *pv) ^ *pv) | eq;                       \
		WORD p = *mv | ~(xh | *pv);                                      \
		WORD q = *pv & xh;                                               \
		*ph = p;                                                         \
		*mh = q;                                                         \
		p = (p << 1) | hp;                                               \
		q = (q << 1) | hm;                                               \
		*pv = q | ~(xv | p);                                             \
		*mv = p & xv;                                                    \
	}
ED_BP_DEFINE(ed_bp_step64, uint64_t)
ED_BP_DEFINE(ed_bp_step32, uint32_t)

/* ---- symbols ----
 * The engines compare bytes. With -u the strings are UTF-8 and compared by code point:
 * each pair is coded into bytes first (editdist4r_sym.c), since the distance and the
 * alignment depend only on which symbols of A equal which of B. A pair that needs more
 * than 256 codes keeps its code points (32 bits each) and is computed by the plain DP
 * on the CPU. A batch says, pair by pair, which it holds. */
enum ed_kind {
	ED_BYTES = 0,		/* bytes (or codes) in the pool */
	ED_UTF8,		/* -u: UTF-8 in the pool, not coded yet */
	ED_WIDE,		/* -u: code points in the batch's wide buffer, at aoff and boff */
};

/* ---- the CPU path (editdist4r_cpu.c) ---- */

/* Distances of pairs[0..n) into dist (-1 beyond maxdist), OpenMP over pairs. kind
 * (NULL: every pair ED_BYTES) and wide: the pairs of kind ED_WIDE have their code
 * points in wide. o->mode infix or prefix: span[2 i] and span[2 i + 1] get the 0-based
 * START and END (inclusive) of pair i's match in B (see ed_band_dist); else span is
 * not used (NULL). --algo auto computes pairs beyond ED_BAND_MIN on either side by
 * the band (editdist4r_band.c), as it does every pair of the other modes. */
void ed_cpu_batch(const uint8_t *pool, const struct ed_pair *pairs, size_t n,
    const struct ed_opts *o, const uint8_t *kind, const uint32_t *wide, int32_t *dist,
    int32_t *span);
/* An optimal alignment of A to B in linear space: a malloc'd CIGAR of =, X, I, D runs;
 * *cost gets its cost (the distance). algo ED_AUTO: pairs of bytes beyond ED_BAND_MIN
 * on either side by the band (ed_band_align; d their distance, or -1 when not known),
 * the others as ED_BP; ED_4R, ED_BP or ED_DP: Hirschberg's recursion on that engine's
 * last rows. size: the bytes of a symbol, 1 (bytes) or 4 (code points, uint32_t, by the
 * plain DP whatever algo says). */
char *ed_cpu_align(const void *a, size_t m, const void *b, size_t n, int size, int algo, int t,
    int64_t d, int64_t *cost);
/* The CPU engines' scratch: *p (of *cap elements of size bytes) with room for n, its
 * old contents dropped. */
void ed_grow(void **p, size_t *cap, size_t n, size_t size);
/* The best match of A in B of mode (ED_INFIX, ED_PREFIX) by the plain DP over symbols of
 * size bytes (-u's code points): as ed_band_dist. */
int64_t ed_dp_mode(const void *a, int64_t m, const void *b, int64_t n, int size, int mode,
    int64_t K, int64_t *start, int64_t *end);

/* ---- the band (editdist4r_band.c) ---- */

/* Pairs whose shorter side is longer than this go to the band under --algo auto (the
 * shorter ones fit the bit-parallel columns of four words). */
#define ED_BAND_MIN 256
/* A thread's scratch for the band, grown as pairs need. */
struct ed_bws;
struct ed_bws *ed_bws_new(void);
void ed_bws_free(struct ed_bws *w);
/* The cost of A (m bytes) against B (n bytes) in mode (enum ed_mode), or -1 when it is
 * above K (K -1: no bound). *start and *end: the 0-based first and last (inclusive)
 * columns of B that A matches: 0 and n - 1 for global; for prefix 0 and the first end
 * of the least cost; for infix that end and the start of the longest match ending
 * there at that cost (edlib's). A match of no column (cost m, which comes first, as
 * edlib's end -1) is 0 and -1. */
int64_t ed_band_dist(struct ed_bws *w, const uint8_t *a, int64_t m, const uint8_t *b,
    int64_t n, int mode, int64_t K, int64_t *start, int64_t *end);
/* The cells the band is expected to compute for the global distance of A and B (its
 * first k from sampled windows), for auto's cost model; |A| x |B| for pairs too short
 * to sample. */
double ed_band_work(struct ed_bws *w, const uint8_t *a, int64_t m, const uint8_t *b,
    int64_t n);
/* An optimal global alignment of A to B, whose distance is d, as a malloc'd CIGAR, in
 * memory linear in m + n (Hirschberg's halves within the band of each half's cost). */
char *ed_band_align(struct ed_bws *w, const uint8_t *a, int64_t m, const uint8_t *b,
    int64_t n, int64_t d);
/* The Four-Russians table for block size t, built once (CPU). */
const uint16_t *ed_cpu_table(int t);

/* ---- the CUDA path (editdist4r_gpu.cu and the files editdist4r_dev.cuh lists) ---- */

struct ed_gpu;
struct cuda_dev;
struct editdist4r_tune;
/* tune: the device's row of editdist4r_tune_table. Never closed: a run on a GPU ends
 * in cuda_finish's _exit, which spares CUDA's teardown. */
struct ed_gpu *ed_gpu_open(const struct cuda_dev *d, const struct ed_opts *o,
    const struct editdist4r_tune *tune, size_t max_device_mem);
/* Starts the distances of a batch; the pool, pairs, kind, dist and span must stay
 * untouched until ed_gpu_wait returns. same_pool: the pool is the one of the last
 * batch, unchanged. kind (NULL: all bytes): pairs of kind ED_WIDE are skipped, their
 * distances (and spans) already in dist (and span). o->mode infix or prefix: span
 * gets START and END, -1 and -1 for a distance of -1, but for a START of -1 where a
 * match of infix was computed by the wavefront, the caller's to find; else span is
 * not used (NULL). */
void ed_gpu_submit(struct ed_gpu *g, const uint8_t *pool, size_t poolsize, int same_pool,
    const struct ed_pair *pairs, const uint8_t *kind, size_t n, int32_t *dist,
    int32_t *span);
void ed_gpu_wait(struct ed_gpu *g);
/* Kernel time of the batches so far (ms) and the engines used, for -v and benchmarks. */
double ed_gpu_kernel_ms(const struct ed_gpu *g);
const char *ed_gpu_engines(const struct ed_gpu *g);
/* memcpy on the OpenMP threads (editdist4r_batch.c): filling pinned staging buffers
 * from pageable memory at the memory's speed rather than one core's. */
void ed_host_copy(void *dst, const void *src, size_t n);

#ifdef __cplusplus
}
#endif
#endif
