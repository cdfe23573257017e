/* editdist4r_band.c: one long pair on the CPU by a band that proves its distance, as
 * edlib does: Myers's bit-vectors in Hyyro's blocks of 64 rows (the query, A) advancing
 * a column (a symbol of B) at a time, only the blocks that can hold a cell of an
 * alignment of cost <= k (Ukkonen's cut-off: a cell's value less what it has left, a
 * lower bound, against k), with k starting at a cheap bound and doubling until the
 * distance is proven (--max-dist: until its bound). The modes of editdist4r.h's
 * enum ed_mode (edlib's NW, HW and SHW) change only row 0 and the end. Alignments
 * (--path) in memory linear in the length: Hirschberg's halves, each computed within
 * the band of its own cost, down to pieces small enough to keep their columns'
 * bit-vectors and trace back through them.
 *
 * Why the band is exact: every value computed is the cost of a real alignment (the
 * band's edges read as +1 steps along them), so never below the true value; a cell
 * on an optimal path of cost <= k keeps its lower bound within k, so its block is
 * computed, and by induction along the path its value is exact. The blocks kept only
 * shrink at the top; at the bottom one is added a column, enough since the lowest
 * such cell moves down at most a row a column (D[i+1][j+1] >= D[i][j]). */
#include "editdist4r.h"
#include "editdist4r_band.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <omp.h>

#include "cli.h"
#include "err.h"

#define WB 64				/* rows of a block */
#define INF ((int64_t)1 << 40)		/* a value no band reaches */
#define ROWINF (INT32_MAX / 2)		/* the same in a row of int32 */
/* A piece of an alignment whose columns' blocks fit this is traced back whole. */
#define STORE_BYTES ((size_t)32 << 20)
/* An alignment's split of more band cells than this runs its halves, and then its two
 * pieces, as tasks on -j's threads: a task costs microseconds, such a split
 * milliseconds. */
#define ED_TASK_CELLS 4e6
/* A pair of fewer band cells than this keeps to one thread (its distance and its
 * alignment): the few milliseconds threads could save are less than what a team loses
 * waiting for a thread whose core is busy. Lambda at 10% (4.3e8 cells) with -p, 2
 * cores at load 4, 2026-11-29: 48.5 ms on 2 threads, 27.4 on one; the 1 Mb pair at 1%
 * (1.8e10) gains more from its threads than that (in the tests, 200 kb at 10%: 8e9). */
#define ED_TEAM_CELLS 1e9
/* An alignment's team has at most this many threads. The top split's halves, one
 * after the other down the levels, take about one pass over the band whatever the
 * threads, and the whole is two to three such passes: four threads take most of what
 * more could. And each thread that allocates gets a malloc arena of 64 MiB of address
 * space: the 1 Mb pair's -p fits in 500 MB of it on 4 threads, needs 500-700 MB on 8
 * and fails 1 GB on 16 (ulimit -v, 2026-11-29). */
#define ED_ALIGN_THREADS 4

struct ed_bws {
	uint64_t *peq;		/* [code * nb + block]: rows of the query holding that code */
	uint64_t *peqbuf;	/* peq, with ED_WPAD words before and after */
	size_t peqcap;
	int64_t nb;
	uint8_t code[256];	/* a byte's code: 0 for those not in the query */
	uint64_t *P, *M;	/* the blocks' v vectors: +1 and -1 bits */
	int64_t *S;		/* D at each block's last row (row m in the last block) */
	uint64_t *sbuf;		/* P, M and S, each with ED_WPAD before and after */
	size_t scap;
};

struct ed_bws *
ed_bws_new(void)
{
	return xcalloc(1, sizeof(struct ed_bws));
}

void
ed_bws_free(struct ed_bws *w)
{
	if (w == NULL)
		return;
	free(w->peqbuf);
	free(w->sbuf);
	free(w);
}


/* The query's match vectors over the symbols it holds. */
static void
prep(struct ed_bws *w, const uint8_t *q, int64_t m)
{
	int ncodes = 1;
	uint8_t seen[256] = {0};
	memset(w->code, 0, sizeof w->code);
	for (int64_t i = 0; i < m; i++)
		seen[q[i]] = 1;
	for (int c = 0; c < 256; c++)
		ncodes += seen[c];
	if (ncodes > 256) {		/* all 256 bytes: each its own code */
		ncodes = 256;
		for (int c = 0; c < 256; c++)
			w->code[c] = (uint8_t)c;
	} else {
		ncodes = 1;
		for (int c = 0; c < 256; c++)
			if (seen[c])
				w->code[c] = (uint8_t)ncodes++;
	}
	w->nb = MAX(CEIL_DIV(m, WB), (int64_t)1);
	size_t len = (size_t)ncodes * (size_t)w->nb + 2 * ED_WPAD;
	ed_grow((void **)&w->peqbuf, &w->peqcap, len, sizeof *w->peqbuf);
	memset(w->peqbuf, 0, len * sizeof *w->peqbuf);
	w->peq = w->peqbuf + ED_WPAD;
	for (int64_t i = 0; i < m; i++)
		w->peq[(size_t)w->code[q[i]] * w->nb + i / WB] |= (uint64_t)1 << (i % WB);
	size_t per = (size_t)w->nb + 2 * ED_WPAD;
	ed_grow((void **)&w->sbuf, &w->scap, 3 * per, sizeof *w->sbuf);
	w->P = w->sbuf + ED_WPAD;
	w->M = w->P + per;
	w->S = (int64_t *)(w->M + per);
}

/* The columns of a traceback: each column's first and last block and their vectors. */
/* A column's blocks first..last are words of v: block b's P at off + (b - first) 3 L,
 * its M L words on, its D at its last row 2 L on, where L is the column's lanes: 1 for
 * a column computed alone (its blocks' P, M, D one after another), a group's lanes
 * for a column of a wide group (the group's steps one after another, each its lanes'
 * P, then M, then D; editdist4r_band_wide.h). */
struct store {
	int64_t *first, *last;	/* per column 1..n at [j - 1] */
	size_t *off;
	uint8_t *lanes;
	uint64_t *v;
	size_t used, cap;	/* words */
};

/* Room in st for n more words. */
static uint64_t *
store_room(struct store *st, size_t n)
{
	if (st->used + n > st->cap) {
		st->cap = MAX(st->used + n, 2 * st->cap);
		st->v = xreallocarray(st->v, st->cap, sizeof *st->v);
	}
	return st->v + st->used;
}

struct bjob {
	const uint8_t *t;	/* the target (columns) */
	int64_t m, mfull, n, k;	/* rows computed, rows of the whole problem, columns, bound */
	int mode;		/* enum ed_mode */
	int last;		/* ties: the last column of the best value, not the first */
	int32_t *row;		/* D[m][0..n] (INF-capped where not computed), or NULL */
	struct store *st;	/* the columns' blocks, or NULL */
	int64_t end;		/* out: the column (1..n) of the best (modes), 0 for none */
};

/* The least that D + (a lower bound of what is left) can be over rows r0..r1 of a
 * block whose row r1 holds score, at the column where t = mfull - n + j. */
static inline int64_t
block_bound(int global, int64_t score, int64_t r0, int64_t r1, int64_t t)
{
	if (global)		/* what is left: |(n - j) - (mfull - r)| */
		return score - r1 + (r0 <= t ? t : 2 * r0 - t);
	return score - r1 + MAX(r0, t);	/* max(0, (mfull - r) - (n - j)) */
}

/* band_run for a short query in the modes (at most SHORT_BLOCKS blocks): every block,
 * every column, as the batches' reads are; cutting the band off would cost more than
 * the blocks it saves. Not inlined: inside band_run, since its wide groups, the
 * compiler made it slower (2,000 reads of 150 bases in 1 kb windows, infix: 25 against
 * 17 ms; 40,000 on one thread: 0.32 s of user time either way once apart). */
#define SHORT_BLOCKS 4
static __attribute__((noinline)) int64_t
short_run(struct ed_bws *w, struct bjob *J)
{
	const int infix = J->mode == ED_INFIX;
	const int64_t m = J->m, n = J->n, nb = w->nb;
	const int ob = (int)((m - 1) % WB);
	uint64_t P[SHORT_BLOCKS], M[SHORT_BLOCKS];
	int64_t best = -1, score = m;

	for (int64_t b = 0; b < nb; b++) {
		P[b] = ~(uint64_t)0;
		M[b] = 0;
	}
	for (int64_t j = 1; j <= n; j++) {
		const uint64_t *eq = w->peq + (size_t)w->code[J->t[j - 1]] * nb;
		uint64_t hp = !infix, hm = 0, ph = 0, mh = 0;
		for (int64_t b = 0; b < nb; b++) {
			ed_bp_step64(&P[b], &M[b], eq[b], hp, hm, &ph, &mh);
			hp = ph >> (WB - 1);
			hm = mh >> (WB - 1);
		}
		score += (int64_t)((ph >> ob) & 1) - (int64_t)((mh >> ob) & 1);
		if (score <= J->k && (best < 0 || score < best || (J->last && score == best))) {
			best = score;
			J->end = j;
		}
	}
	return best;
}

/* ---- wide groups ---- */

/* The widest group of columns this CPU computes at once (editdist4r_band.h): 8 with
 * AVX-512, 4 with AVX2, else 1 (a column at a time, on 64-bit words); at most what
 * ACCELKIT_EDITDIST4R_WORDS (64, 256 or 512 bits) allows, for tests and measurements. */
static int wide_lanes = 1;
static void (*wide_group)(struct ed_wgroup *);
static pthread_once_t wide_once = PTHREAD_ONCE_INIT;

static void
wide_pick(void)
{
	static const char *const bits[] = {"64", "256", "512", NULL};
	const char *e = getenv("ACCELKIT_EDITDIST4R_WORDS");
	int want = e != NULL && *e != '\0' ? cli_choice("ACCELKIT_EDITDIST4R_WORDS", e, bits) : 2;
	__builtin_cpu_init();
	if (want >= 2 && __builtin_cpu_supports("avx512f")) {
		wide_lanes = ed_band_avx512_lanes;
		wide_group = ed_band_group_avx512;
	} else if (want >= 1 && __builtin_cpu_supports("avx2")) {
		wide_lanes = ed_band_avx2_lanes;
		wide_group = ed_band_group_avx2;
	}
}

static int
lanes_here(void)
{
	pthread_once(&wide_once, wide_pick);
	return wide_lanes;
}

/* A group pays where the band is at least this many blocks high: below, its steps
 * into and out of the skew (one fewer than its columns, each way) outweigh its
 * width. Lambda at 1%, 3% and 10% (bands of about 15, 35 and 140 blocks), distance,
 * one thread, ms of CPU, 2026-11-29, the development machine's EPYC: 64-bit words
 * 2.07, 2.88, 6.06; AVX-512 from 8 blocks 1.73, 1.98, 2.94, from 16 2.11, 2.17, 2.98,
 * from 32 2.07, 2.89, 3.14; AVX2 from 6 2.16, 2.73, 4.27, from 12 2.09, 2.62, 4.25. */
#define WIDE_MIN_BLOCKS 8

/* ---- the band ---- */

/* Row m's value s at column c (INF where the band does not hold it): into J->row
 * where it is kept, and in the modes the best so far (the first of equals, or the
 * last with J->last), to which k narrows where no row is kept: from there on only as
 * good or better counts. */
static inline void
row_m(struct bjob *J, int global, int64_t c, int64_t s, int64_t *best, int64_t *k)
{
	if (J->row != NULL)
		J->row[c] = (int32_t)MIN(s, (int64_t)ROWINF);
	if (!global && s <= *k && (*best < 0 || s < *best || (J->last && s == *best))) {
		*best = s;
		J->end = c;
		if (J->row == NULL)
			*k = s;
	}
}

/* The band's run with bound k: the best value <= k (D[m][n] for the global mode, the
 * least of D[m][1..n] for the others), or -1 when there is none. Columns go one at a
 * time, or in wide groups of g where the CPU has them (not for a piece whose blocks
 * are stored: those are a column's own). */
static int64_t
band_run(struct ed_bws *w, struct bjob *J)
{
	const int global = J->mode == ED_GLOBAL, infix = J->mode == ED_INFIX;
	const int64_t m = J->m, n = J->n, mf = J->mfull, nb = w->nb;
	const int ob = (int)((m - 1) % WB);
	int64_t k = J->k, best = -1, dlo = 0, dhi = 0;
	uint64_t *P = w->P, *M = w->M;
	int64_t *S = w->S;
	const int lanes = lanes_here();
	/* a stored group keeps its skew's L - 1 steps more a column: at most half again */
	const int64_t wmin = J->st == NULL ? WIDE_MIN_BLOCKS : 2 * lanes;
	struct ed_wgroup G = {.P = P, .M = M, .S = S, .peq = w->peq, .nb = nb, .ob = ob};

	J->end = 0;
	if (!global && nb <= SHORT_BLOCKS && J->row == NULL && J->st == NULL)
		return short_run(w, J);
	if (global) {		/* the diagonals j - i that |d| + |n - mf - d| <= k allows */
		int64_t delta = n - mf;
		dlo = -((k - delta) / 2);	/* ceil((delta - k) / 2), delta <= k */
		dhi = (delta + k) / 2;
	}
	int64_t fb = 0, lb = (MIN(m, MAX(k, (int64_t)1)) - 1) / WB;
	for (int64_t b = 0; b <= lb; b++) {
		P[b] = ~(uint64_t)0;
		M[b] = 0;
		S[b] = MIN((b + 1) * WB, m);
	}
	if (J->row != NULL)
		J->row[0] = (int32_t)MIN(m, (int64_t)ROWINF);
	int64_t j = 1, g = 1;
	for (; j <= n; j += g) {
		/* a group of g columns j..jl: wide where the band is high enough */
		g = lanes > 1 && j + lanes - 1 <= n && lb - fb + 1 >= wmin ?
		    lanes : 1;
		const int64_t jl = j + g - 1;
		int64_t sfb = 0, slb = nb - 1;
		if (global) {
			sfb = (MAX((int64_t)1, j - dhi) - 1) / WB;
			slb = (MIN(m, jl - dlo) - 1) / WB;
		}
		/* a block more at the bottom a column, started from the one above it */
		for (int64_t x = 0; x < g && lb + 1 < nb && lb + 1 <= slb; x++) {
			lb++;
			P[lb] = ~(uint64_t)0;
			M[lb] = 0;
			S[lb] = S[lb - 1] + MIN((lb + 1) * WB, m) - lb * WB;
		}
		if (fb < sfb)
			fb = sfb;
		if (fb > lb)
			break;
		/* row 0: D[0][j] - D[0][j-1] is 0 in infix, else 1 (and 1 as an
		 * over-estimate on the band's upper edge) */
		const uint64_t h0 = !(infix && fb == 0);
		if (g > 1) {
			G.fb = fb;
			G.lb = lb;
			G.h0 = h0;
			for (int64_t l = 0; l < g; l++)
				G.eqoff[l] = (int64_t)w->code[J->t[j - 1 + l]] * nb;
			G.st = NULL;
			if (J->st != NULL) {	/* every block the group computes */
				struct store *st = J->st;
				const size_t steps = (size_t)(lb - fb + g);
				G.st = store_room(st, steps * 3 * (size_t)g);
				for (int64_t l = 0; l < g; l++) {
					st->first[j - 1 + l] = fb;
					st->last[j - 1 + l] = lb;
					st->lanes[j - 1 + l] = (uint8_t)g;
					st->off[j - 1 + l] = st->used + (size_t)(l * 3 * g + g - 1 - l);
				}
				st->used += steps * 3 * (size_t)g;
			}
			wide_group(&G);
		} else {
			const uint64_t *eq = w->peq + (size_t)w->code[J->t[j - 1]] * nb;
			uint64_t hp = h0, hm = 0, ph, mh;
			const int64_t full = MIN(lb, nb - 2);	/* the blocks of 64 rows */
			for (int64_t b = fb; b <= full; b++) {
				uint64_t p = P[b], q = M[b];
				ed_bp_step64(&p, &q, eq[b], hp, hm, &ph, &mh);
				P[b] = p;
				M[b] = q;
				hp = ph >> (WB - 1);
				hm = mh >> (WB - 1);
				S[b] += (int64_t)hp - (int64_t)hm;
			}
			if (lb == nb - 1 && lb >= fb) {	/* the last block: row m at bit ob */
				ed_bp_step64(&P[lb], &M[lb], eq[lb], hp, hm, &ph, &mh);
				S[lb] += (int64_t)((ph >> ob) & 1) - (int64_t)((mh >> ob) & 1);
			}
		}
		/* the group's columns before its last: row m where the band holds it */
		for (int64_t c = j; c < jl; c++)
			row_m(J, global, c, lb == nb - 1 ? G.last[c - j] : INF, &best, &k);
		/* an alignment through the last block's last row: an upper bound (of the
		 * whole problem's, from a half's rows too: the rest of its rows and
		 * columns cost at most the more of them), never below the answer, so
		 * every cell of an optimal alignment stays within it */
		if (global) {
			int64_t r1 = MIN((lb + 1) * WB, m);
			k = MIN(k, S[lb] + MAX(n - jl, mf - r1));
		}
		/* blocks go from either end when they hold no cell within k; the first
		 * stays while row 0 above it holds one */
		const int64_t t = mf - n + jl;
		const int keep0 = (infix ? 0 : jl) + (global ? llabs(n - jl - mf) :
		    MAX((int64_t)0, mf - (n - jl))) <= k;
		while (lb >= fb && !(lb == 0 && keep0) && block_bound(global, S[lb],
		    lb * WB + 1, MIN((lb + 1) * WB, m), t) > k)
			lb--;
		while (fb <= lb && !(fb == 0 && keep0) && block_bound(global, S[fb],
		    fb * WB + 1, MIN((fb + 1) * WB, m), t) > k)
			fb++;
		if (fb > lb) {
			j = jl;
			break;
		}
		row_m(J, global, jl, lb == nb - 1 ? S[lb] : INF, &best, &k);
		if (J->st != NULL && g == 1) {
			struct store *st = J->st;
			uint64_t *v = store_room(st, 3 * (size_t)(lb - fb + 1));
			st->first[j - 1] = fb;
			st->last[j - 1] = lb;
			st->lanes[j - 1] = 1;
			st->off[j - 1] = st->used;
			for (int64_t b = fb; b <= lb; b++, v += 3) {
				v[0] = P[b];
				v[1] = M[b];
				v[2] = (uint64_t)S[b];
			}
			st->used += 3 * (size_t)(lb - fb + 1);
		}
	}
	for (int64_t c = j; c <= n; c++) {	/* the band ended: nothing within k */
		if (J->row != NULL)
			J->row[c] = ROWINF;
		if (J->st != NULL) {
			J->st->first[c - 1] = 1;
			J->st->last[c - 1] = 0;
		}
	}
	if (global) {
		if (j <= n || lb != nb - 1 || S[lb] > k)
			return -1;
		J->end = n;
		return S[lb];
	}
	return best;
}

/* ---- distances ---- */

/* A first k for the global distance of a long pair: the edit rate of windows of A
 * placed (infix) in windows of B at the same relative place, wide enough for the
 * drift that indels make, times the longer length, with a margin; 0 when the pair is
 * too short to sample (the doubling starts at its own bound). Tens of thousands of
 * block steps against the millions of such a pair's band. */
static int64_t
estimate(struct ed_bws *w, const uint8_t *a, int64_t m, const uint8_t *b, int64_t n)
{
	const int S = 16;
	const int64_t L = MAX(m, n) >= ((int64_t)1 << 18) ? 512 : 256;
	if (MIN(m, n) < 8 * S * L)
		return 0;
	int64_t W = 256;
	while (W < 1024 && W * W < MAX(m, n))
		W *= 2;
	int64_t cost = 0;
	for (int i = 0; i < S; i++) {
		int64_t p = (m - L) * (2 * i + 1) / (2 * S);
		int64_t q = (int64_t)((double)p * (double)n / (double)m);
		int64_t b0 = MAX((int64_t)0, q - W), b1 = MIN(n, q + L + W);
		prep(w, a + p, L);
		struct bjob J = {.t = b + b0, .m = L, .mfull = L, .n = b1 - b0, .k = L,
		    .mode = ED_INFIX};
		cost += MAX(band_run(w, &J), (int64_t)0);
	}
	double rate = (double)cost / (double)(S * L);
	return (int64_t)(1.3 * rate * (double)MAX(m, n)) + WB;
}

double
ed_band_work(struct ed_bws *w, const uint8_t *a, int64_t m, const uint8_t *b, int64_t n)
{
	int64_t k = estimate(w, a, m, b, n);
	if (k == 0)
		return (double)m * (double)n;
	/* the band of the first k: about k + 1 diagonals, a margin for its blocks */
	return (double)MAX(m, n) * (double)MIN(MIN(m, n), k + 2 * WB);
}

/* The n bytes at s, last first, in a malloc'd buffer. */
static uint8_t *
reversed(const uint8_t *s, int64_t n)
{
	uint8_t *r = xmalloc((size_t)MAX(n, (int64_t)1));
	for (int64_t i = 0; i < n; i++)
		r[i] = s[n - 1 - i];
	return r;
}

/* The global distance within k by two threads: A's first half forward and its second
 * half reversed (against B reversed), at once, each within the band of k; the least
 * sum of the two rows at a column is the distance where it is <= k (the cells of an
 * alignment of that cost are exact in both, and no row is below its true value), and
 * above k where the distance is. Each half has its own scratch, prepared once. */
struct halves {
	struct ed_bws *w[2];
	const uint8_t *a, *b;	/* A's first half and B; A's second half and B, reversed */
	uint8_t *ra, *rb;
	int64_t m, n, mid;
	int32_t *f, *r;
};

static int64_t
halves_run(struct halves *H, int64_t k)
{
	#pragma omp parallel for num_threads(2) schedule(static, 1)
	for (int x = 0; x < 2; x++) {
		struct bjob J = {.t = x ? H->rb : H->b, .m = x ? H->m - H->mid : H->mid,
		    .mfull = H->m, .n = H->n, .k = k, .mode = ED_GLOBAL, .row = x ? H->r : H->f};
		band_run(H->w[x], &J);
	}
	int64_t best = INF;
	for (int64_t j = 0; j <= H->n; j++)
		best = MIN(best, (int64_t)H->f[j] + H->r[H->n - j]);
	return best <= k ? best : -1;
}

/* The best value of mode over query a against target b with k doubling from a cheap
 * bound up to K (-1: no bound; the answer always lies within max(m, n)). Returns -1
 * when it is above K; *end gets the column of the best (1..n; 0 where none). The
 * global distance of a pair of more than ED_TEAM_CELLS band cells takes two threads
 * where -j gives them and no batch's threads are around it. */
static int64_t
doubling(struct ed_bws *w, const uint8_t *a, int64_t m, const uint8_t *b, int64_t n, int mode,
    int64_t K, int last, int64_t *end)
{
	int64_t cap = mode == ED_GLOBAL ? MAX(m, n) : m;
	if (K >= 0 && K < cap)
		cap = K;
	int64_t k = WB;
	if (mode == ED_GLOBAL)
		k = MAX(MAX(llabs(n - m), k), estimate(w, a, m, b, n));
	else if (CEIL_DIV(m, WB) <= SHORT_BLOCKS)
		k = cap;	/* short_run has no band to narrow */
	struct halves H = {0};
	if (mode == ED_GLOBAL && m >= 2 * WB && !omp_in_parallel() && omp_get_max_threads() > 1 &&
	    (double)MAX(m, n) * (double)MIN(MIN(m, n), 2 * MIN(k, cap) + WB) >= ED_TEAM_CELLS) {
		H = (struct halves){.w = {w, ed_bws_new()}, .a = a, .b = b, .m = m, .n = n,
		    .mid = m / 2};
		H.ra = reversed(a + H.mid, m - H.mid);
		H.rb = reversed(b, n);
		H.f = xmallocarray((size_t)n + 1, sizeof *H.f);
		H.r = xmallocarray((size_t)n + 1, sizeof *H.r);
		prep(H.w[0], a, H.mid);
		prep(H.w[1], H.ra, m - H.mid);
	} else
		prep(w, a, m);
	int64_t d;
	for (;;) {
		k = MIN(k, cap);
		if (H.f != NULL) {
			d = halves_run(&H, k);
			*end = n;
		} else {
			struct bjob J = {.t = b, .m = m, .mfull = m, .n = n, .k = k, .mode = mode,
			    .last = last};
			d = band_run(w, &J);
			*end = J.end;
		}
		if (d >= 0 || k >= cap)
			break;
		k *= 2;
	}
	if (H.f != NULL) {
		ed_bws_free(H.w[1]);
		free(H.ra);
		free(H.rb);
		free(H.f);
		free(H.r);
	}
	return d < 0 ? -1 : d;
}

int64_t
ed_band_dist(struct ed_bws *w, const uint8_t *a, int64_t m, const uint8_t *b, int64_t n,
    int mode, int64_t K, int64_t *start, int64_t *end)
{
	int64_t e = 0, d;
	*start = *end = -1;
	if (mode == ED_GLOBAL && llabs(n - m) > (K < 0 ? INT64_MAX : K))
		return -1;
	if (m == 0 || n == 0) {
		d = mode == ED_GLOBAL ? MAX(m, n) : m;
		if (K >= 0 && d > K)
			return -1;
		if (mode == ED_GLOBAL)
			*start = 0, *end = n - 1;
		else
			*start = 0, *end = -1;
		return d;
	}
	d = doubling(w, a, m, b, n, mode, K, 0, &e);
	if (d < 0)
		return -1;
	*end = e - 1;
	if (mode != ED_GLOBAL && d >= m) {	/* the empty match of column 0 comes first */
		*start = 0;
		*end = -1;
		return m;
	}
	if (mode != ED_INFIX) {
		*start = 0;
		return d;
	}
	/* infix: the start of the longest match that ends there at that cost (edlib's
	 * choice): the reversed query against the reversed target up to the end, as a
	 * prefix, the last column of the same cost */
	/* a match of cost d spans at most m + d columns */
	int64_t span = MIN(e, m + d);
	uint8_t *ra = reversed(a, m), *rb = reversed(b + e - span, span);
	prep(w, ra, m);
	struct bjob J = {.t = rb, .m = m, .mfull = m, .n = span, .k = d, .mode = ED_PREFIX,
	    .last = 1};
	int64_t d2 = band_run(w, &J);
	if (d2 != d || J.end == 0)
		die("internal error: infix start: cost %lld, not %lld", (long long)d2,
		    (long long)d);
	*start = e - J.end;
	free(ra);
	free(rb);
	return d;
}

/* ---- alignments ---- */

/* The pieces of an alignment are independent once split, and so are the forward and
 * reverse halves of a split: with several threads they run as OpenMP tasks. A piece
 * A[ao..ao+m) x B[bo..bo+n) writes its at most m + n operations from ops[ao + bo] on,
 * a stretch no other piece touches, so the CIGAR is the same bytes whatever thread
 * computed what; the bytes left over stay 0 and are skipped. */
struct aln {
	const uint8_t *a, *b, *ra, *rb;	/* the strings and their reversals */
	int64_t M, N;
	struct ed_bws **ws;		/* a scratch a thread of the team */
	char *ops;			/* the operations at their pieces' places */
	double task_cells;		/* a split of more band cells than this is tasks */
};

/* The calling thread's scratch: used only between task scheduling points. */
static struct ed_bws *
scratch(const struct aln *h)
{
	return h->ws[omp_get_thread_num()];
}

/* D[i][j] of a stored piece of m rows (INF outside its blocks). */
static int64_t
stored(const struct store *st, int64_t m, int64_t i, int64_t j)
{
	if (i == 0)
		return j;
	if (j == 0)
		return i;
	int64_t b = (i - 1) / WB;
	if (b < st->first[j - 1] || b > st->last[j - 1])
		return INF;
	const size_t L = st->lanes[j - 1];
	const uint64_t *k = st->v + st->off[j - 1] + (size_t)(b - st->first[j - 1]) * 3 * L;
	int o = (int)(MIN((b + 1) * WB, m) - 1 - b * WB), y = (int)(i - 1 - b * WB);
	uint64_t mask = (o == 63 ? ~(uint64_t)0 : (((uint64_t)1 << (o + 1)) - 1)) &
	    ~(y == 63 ? ~(uint64_t)0 : (((uint64_t)2 << y) - 1));
	return (int64_t)k[2 * L] - __builtin_popcountll(k[0] & mask) +
	    __builtin_popcountll(k[L] & mask);
}

/* A piece whose blocks are kept: computed within its cost k, traced back from its end
 * (a match or mismatch first, then a deletion, then an insertion, as ed_cpu_align's
 * base case). */
static void
piece(struct aln *h, int64_t ao, int64_t m, int64_t bo, int64_t n, int64_t k)
{
	struct store st = {0};
	const uint8_t *a = h->a + ao, *b = h->b + bo;
	st.first = xmallocarray((size_t)n, sizeof *st.first);
	st.lanes = xmalloc((size_t)n);
	st.last = xmallocarray((size_t)n, sizeof *st.last);
	st.off = xmallocarray((size_t)n, sizeof *st.off);
	struct ed_bws *w = scratch(h);
	prep(w, a, m);
	struct bjob J = {.t = b, .m = m, .mfull = m, .n = n, .k = k, .mode = ED_GLOBAL,
	    .st = &st};
	int64_t d = band_run(w, &J);
	if (d != k)
		die("internal error: a piece of the alignment costs %lld, not %lld",
		    (long long)d, (long long)k);
	char *ops = h->ops + ao + bo;
	size_t nops = 0;
	for (int64_t i = m, j = n; i > 0 || j > 0;) {
		int64_t v = stored(&st, m, i, j);
		int ne = i > 0 && j > 0 && a[i - 1] != b[j - 1];
		if (i > 0 && j > 0 && v == stored(&st, m, i - 1, j - 1) + ne) {
			ops[nops++] = ne ? 'X' : '=';
			i--, j--;
		} else if (i > 0 && v == stored(&st, m, i - 1, j) + 1) {
			ops[nops++] = 'D';
			i--;
		} else {
			ops[nops++] = 'I';
			j--;
		}
	}
	for (size_t x = 0, y = nops - 1; nops > 0 && x < y; x++, y--) {
		char c = ops[x];
		ops[x] = ops[y];
		ops[y] = c;
	}
	free(st.first);
	free(st.lanes);
	free(st.last);
	free(st.off);
	free(st.v);
}

/* One half of a split: D[mid][0..n] of A's first mid rows against B (rev 0), or of
 * the reversed last m - mid rows against reversed B (rev 1), within the band of k. */
static void
half(struct aln *h, int rev, int64_t ao, int64_t m, int64_t bo, int64_t n, int64_t k,
    int32_t *row)
{
	struct ed_bws *w = scratch(h);
	int64_t mid = m / 2;
	if (!rev)
		prep(w, h->a + ao, mid);
	else
		prep(w, h->ra + (h->M - ao - m), m - mid);
	struct bjob J = {.t = rev ? h->rb + (h->N - bo - n) : h->b + bo,
	    .m = rev ? m - mid : mid, .mfull = m, .n = n, .k = k, .mode = ED_GLOBAL,
	    .row = row};
	band_run(w, &J);
}

/* A[ao..ao+m) against B[bo..bo+n) at cost k: halves split where the forward and the
 * reversed rows, each within the band of cost k, sum to k (the first such column). */
static void
split(struct aln *h, int64_t ao, int64_t m, int64_t bo, int64_t n, int64_t k)
{
	if (m == 0 || n == 0) {
		memset(h->ops + ao + bo, 'I', (size_t)n);
		memset(h->ops + ao + bo + n, 'D', (size_t)m);
		return;
	}
	size_t per = (size_t)(MIN(k, m) / WB + 3) * 3 * sizeof(uint64_t) + 3 * sizeof(int64_t);
	if (m <= WB || (size_t)n * per <= STORE_BYTES) {
		piece(h, ao, m, bo, n, k);
		return;
	}
	/* the band's cells, about: tasks only where they outweigh their cost */
	const int par = (double)n * (double)MIN(m, 2 * k + WB) > h->task_cells;
	int64_t mid = m / 2, best = -1;
	int32_t *f = xmallocarray((size_t)n + 1, sizeof *f);
	int32_t *r = xmallocarray((size_t)n + 1, sizeof *r);
	#pragma omp task if (par) default(shared)
	half(h, 1, ao, m, bo, n, k, r);
	half(h, 0, ao, m, bo, n, k, f);
	#pragma omp taskwait
	for (int64_t j = 0; j <= n; j++)
		if ((int64_t)f[j] + r[n - j] == k) {
			best = j;
			break;
		}
	if (best < 0)
		die("internal error: no column of the alignment's halves sums to %lld",
		    (long long)k);
	int64_t k1 = f[best], k2 = r[n - best];
	free(f);
	free(r);
	#pragma omp task if (par) default(shared)
	split(h, ao + mid, m - mid, bo + best, n - best, k2);
	split(h, ao, mid, bo, best, k1);
	#pragma omp taskwait
}

char *
ed_band_align(struct ed_bws *w, const uint8_t *a, int64_t m, const uint8_t *b, int64_t n,
    int64_t d)
{
	struct aln h = {.a = a, .b = b, .M = m, .N = n, .task_cells = ED_TASK_CELLS};
	uint8_t *ra = reversed(a, m), *rb = reversed(b, n);
	h.ra = ra;
	h.rb = rb;
	h.ops = xcalloc((size_t)(m + n) + 1, 1);
	/* one pair's threads: -j's, unless this pair is one of a batch's (nested: one) or
	 * too small to repay a team's start */
	int nt = omp_in_parallel() ? 1 : omp_get_max_threads();
	if ((double)MAX(m, n) * (double)MIN(MIN(m, n), 2 * d + WB) < ED_TEAM_CELLS)
		nt = 1;
	nt = MIN(nt, ED_ALIGN_THREADS);
	h.ws = xcalloc((size_t)nt, sizeof *h.ws);
	h.ws[0] = w;
	for (int i = 1; i < nt; i++)
		h.ws[i] = ed_bws_new();
	#pragma omp parallel num_threads(nt) if (nt > 1)
	#pragma omp single
	split(&h, 0, m, 0, n, d);
	for (int i = 1; i < nt; i++)
		ed_bws_free(h.ws[i]);
	free(h.ws);
	free(ra);
	free(rb);
	/* the operations as runs: a run of L takes at most 12 L bytes */
	size_t nops = (size_t)(m + n), cap = nops * 12 + 1, len = 0;
	char *s = xmalloc(cap);
	for (size_t i = 0; i < nops;) {
		if (h.ops[i] == 0) {
			i++;
			continue;
		}
		size_t k = i, run = 0;
		for (; k < nops && (h.ops[k] == h.ops[i] || h.ops[k] == 0); k++)
			run += h.ops[k] != 0;
		len += (size_t)snprintf(s + len, cap - len, "%zu%c", run, h.ops[i]);
		i = k;
	}
	s[len] = '\0';
	free(h.ops);
	return xrealloc(s, len + 1);
}
