/* editdist4r_cpu.c: the CPU path of editdist4r. Four-Russians strips of t rows and
 * bit-parallel strips of 64 rows under one band driver (see editdist4r.h; --max-dist
 * limits every strip to the band), bit-parallel columns of up to four words for short
 * pairs, and a plain DP (also over code points: -u's pairs too wide to code as bytes,
 * in every --mode). OpenMP over pairs; --algo auto sends long pairs, and every pair of
 * --mode infix and prefix, to the band of editdist4r_band.c. Alignments (--path) by
 * Hirschberg's linear-space recursion on any engine's last row, or the band's own. */
#include "editdist4r.h"

#include <omp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"

#define BPW 64			/* rows of a bit-parallel strip, columns of its chunk */
#define BASE_CELLS (1 << 16)	/* Hirschberg: below this, a full DP with traceback */

/* One thread's scratch, grown as pairs need. */
struct work {
	uint8_t *hrow;		/* 4R: the h vector of each chunk of the row above */
	uint64_t *hp, *hm;	/* bit-parallel: the same as +1 and -1 bits (hm inside hp) */
	int32_t *row;		/* DP row */
	size_t hcap, bcap, rcap;
	uint8_t cm[256];	/* 4R: bit y set where A[row y] is that byte */
	uint64_t peq[256];	/* bit-parallel: the same for 64 rows */
	uint64_t peq4[256 * 4];	/* the same for up to 4 words of rows */
	struct ed_bws *bws;	/* the band's (editdist4r_band.c), made when first needed */
};

static void
work_free(struct work *w)
{
	ed_bws_free(w->bws);
	free(w->hrow);
	free(w->hp);
	free(w->row);
}

void
ed_grow(void **p, size_t *cap, size_t n, size_t size)
{
	if (n <= *cap)
		return;
	n = MAX(n, 2 * *cap);
	free(*p);
	*p = xmallocarray(n, size);
	*cap = n;
}

/* Built on first use; the lock makes that safe where several threads compute batches
 * at once (the device engine's CPU workers, and GPU workers aligning for --path). */
static uint16_t *tables[FR_TMAX + 1];
static pthread_mutex_t tables_mu = PTHREAD_MUTEX_INITIALIZER;

const uint16_t *
ed_cpu_table(int t)
{
	pthread_mutex_lock(&tables_mu);
	if (tables[t] == NULL) {
		size_t len = fr_table_len(t);
		uint16_t *tab = xmallocarray(len, sizeof *tab);
		const uint32_t P = fr_pow3(t), tt = (uint32_t)(t * t);
		#pragma omp parallel for schedule(static)
		for (size_t k = 0; k < len; k++) {
			uint32_t hv = (uint32_t)(k >> tt);
			tab[k] = (uint16_t)fr_cells(hv / P, hv % P, (uint32_t)k & ((1u << tt) - 1), t, t);
		}
		tables[t] = tab;
	}
	const uint16_t *tab = tables[t];
	pthread_mutex_unlock(&tables_mu);
	return tab;
}

/* ---- strips under the band ---- */

/* An engine as the strip driver sees it: begin sets a strip of R rows from i0 up (its
 * chunks prev_chi+1..chi have no row above them: +1), run computes chunks c0..c1 and
 * returns the sum of their bottom h values, end clears the strip. */
struct strip_ops {
	void (*begin)(void *e, int64_t i0, int R, int64_t prev_chi, int64_t chi);
	int64_t (*run)(void *e, int64_t c0, int64_t c1);
	void (*end)(void *e, int64_t i0, int R);
};

/* D'[m][n] over strips of S rows and chunks of W columns, each strip limited to the
 * band (exact when <= K, above K otherwise). A strip starts at its corner value, the
 * strip above's bottom row where the band lets this one begin. */
static int64_t
strips(int64_t m, int64_t n, int S, int W, const struct ed_band *bd,
    const struct strip_ops *op, void *e)
{
	int64_t prev_chi = -1, corner = 0, score = 0, clo, chi;

	ed_band_chunks(bd, 0, MIN(S, m), n, W, &clo, &chi);
	for (int64_t i0 = 0; i0 < m; i0 += S) {
		int64_t i1 = MIN(i0 + S, m), nclo = chi + 1, nchi = chi, ncorner;
		int R = (int)(i1 - i0);
		if (i1 < m)
			ed_band_chunks(bd, i1, MIN(i1 + S, m), n, W, &nclo, &nchi);
		op->begin(e, i0, R, prev_chi, chi);
		score = corner + R;
		score += op->run(e, clo, MIN(nclo - 1, chi));
		ncorner = score;
		score += op->run(e, MAX(nclo, clo), chi);
		op->end(e, i0, R);
		corner = ncorner;
		prev_chi = chi;
		clo = nclo;
		chi = nchi;
	}
	return score;
}

/* ---- Four-Russians ---- */

struct frs {			/* the pair, and the strip of R rows being computed */
	const uint8_t *a, *b;
	int64_t n, nfull;	/* columns; chunks that are t wide */
	const uint16_t *tab;
	int t, R;
	uint8_t *hrow;
	uint8_t *cm;
	uint32_t v;		/* v vector entering the next chunk */
};

/* Full t x t blocks c0..c1 by table look-up; returns the sum of their bottom h. */
static inline __attribute__((always_inline)) int64_t
fr_full(struct frs *s, const int t, int64_t c0, int64_t c1)
{
	const uint32_t P = fr_pow3(t);
	const uint8_t *cm = s->cm;
	uint8_t *hrow = s->hrow;
	uint32_t v = s->v;
	int64_t sum = 0;

	for (int64_t c = c0; c <= c1; c++) {
		const uint8_t *bc = s->b + c * t;
		uint32_t match = cm[bc[0]];
		if (t > 1)
			match |= (uint32_t)cm[bc[1]] << t;
		if (t > 2)
			match |= (uint32_t)cm[bc[2]] << (2 * t);
		uint32_t e = s->tab[((hrow[c] * P + v) << (t * t)) | match];
		hrow[c] = (uint8_t)FR_HOUT(e);
		v = FR_VOUT(e);
		sum += FR_HSUM(e);
	}
	s->v = v;
	return sum - (c1 - c0 + 1) * t;
}

/* Chunks c0..c1 of the strip: table blocks where they are whole, cells at the edges. */
static int64_t
fr_run(void *e, int64_t c0, int64_t c1)
{
	struct frs *s = e;
	int64_t sum = 0;
	int64_t cf = s->R == s->t ? MIN(c1, s->nfull - 1) : c0 - 1;

	if (cf >= c0) {
		switch (s->t) {
		case 1: sum += fr_full(s, 1, c0, cf); break;
		case 2: sum += fr_full(s, 2, c0, cf); break;
		default: sum += fr_full(s, 3, c0, cf); break;
		}
	}
	for (int64_t c = MAX(c0, cf + 1); c <= c1; c++) {
		int X = (int)MIN((int64_t)s->t, s->n - c * s->t);
		uint32_t match = 0;
		for (int x = 0; x < X; x++)
			match |= (uint32_t)s->cm[s->b[c * s->t + x]] << (x * s->R);
		uint32_t e = fr_cells(s->hrow[c], s->v, match, s->R, X);
		s->hrow[c] = (uint8_t)FR_HOUT(e);
		s->v = FR_VOUT(e);
		sum += FR_HSUM(e) - X;
	}
	return sum;
}

static void
fr_begin(void *e, int64_t i0, int R, int64_t prev_chi, int64_t chi)
{
	struct frs *s = e;
	for (int64_t c = prev_chi + 1; c <= chi; c++)
		s->hrow[c] = (uint8_t)fr_allplus((int)MIN((int64_t)s->t, s->n - c * s->t));
	for (int y = 0; y < R; y++)
		s->cm[s->a[i0 + y]] |= (uint8_t)(1u << y);
	s->R = R;
	s->v = fr_allplus(R);
}

static void
fr_end(void *e, int64_t i0, int R)
{
	struct frs *s = e;
	for (int y = 0; y < R; y++)
		s->cm[s->a[i0 + y]] = 0;
}

static const struct strip_ops fr_ops = {fr_begin, fr_run, fr_end};

/* Leaves the bottom row in w->hrow. */
static int64_t
fr_pair(const uint8_t *a, int64_t m, const uint8_t *b, int64_t n, int t,
    const struct ed_band *bd, struct work *w)
{
	struct frs s = {.a = a, .b = b, .n = n, .nfull = n / t, .tab = tables[t], .t = t,
	    .cm = w->cm};
	ed_grow((void **)&w->hrow, &w->hcap, (size_t)CEIL_DIV(n, t), 1);
	s.hrow = w->hrow;
	return strips(m, n, t, t, bd, &fr_ops, &s);
}

/* ---- bit-parallel ---- */

struct bps {			/* the pair, and the strip being computed */
	const uint8_t *a, *b;
	int64_t n;
	uint64_t *peq, *hp, *hm;
	uint64_t pv, mv;	/* the strip's v vectors */
	int ob;			/* its bottom row's bit */
};

static void
bp_begin(void *e, int64_t i0, int R, int64_t prev_chi, int64_t chi)
{
	struct bps *s = e;
	for (int64_t c = prev_chi + 1; c <= chi; c++) {
		s->hp[c] = ~(uint64_t)0;
		s->hm[c] = 0;
	}
	for (int y = 0; y < R; y++)
		s->peq[s->a[i0 + y]] |= (uint64_t)1 << y;
	s->pv = ~(uint64_t)0;
	s->mv = 0;
	s->ob = R - 1;
}

/* Chunks c0..c1 of the strip; returns the sum of their bottom h. */
static int64_t
bp_run(void *e, int64_t c0, int64_t c1)
{
	struct bps *s = e;
	uint64_t P = s->pv, M = s->mv;
	const int ob = s->ob;
	int64_t sum = 0;

	for (int64_t c = c0; c <= c1; c++) {
		const uint8_t *bc = s->b + c * BPW;
		int X = (int)MIN((int64_t)BPW, s->n - c * BPW);
		uint64_t ip = s->hp[c], im = s->hm[c], op = 0, om = 0;
		for (int x = 0; x < X; x++) {
			uint64_t ph, mh;
			ed_bp_step64(&P, &M, s->peq[bc[x]], (ip >> x) & 1, (im >> x) & 1, &ph, &mh);
			op |= ((ph >> ob) & 1) << x;
			om |= ((mh >> ob) & 1) << x;
		}
		s->hp[c] = op;
		s->hm[c] = om;
		sum += __builtin_popcountll(op) - __builtin_popcountll(om);
	}
	s->pv = P;
	s->mv = M;
	return sum;
}

static void
bp_end(void *e, int64_t i0, int R)
{
	struct bps *s = e;
	for (int y = 0; y < R; y++)
		s->peq[s->a[i0 + y]] = 0;
}

static const struct strip_ops bp_ops = {bp_begin, bp_run, bp_end};

/* Leaves the bottom row in w->hp and w->hm. */
static int64_t
bp_pair(const uint8_t *a, int64_t m, const uint8_t *b, int64_t n, const struct ed_band *bd,
    struct work *w)
{
	const int64_t nch = CEIL_DIV(n, BPW);
	ed_grow((void **)&w->hp, &w->bcap, 2 * (size_t)nch, sizeof(uint64_t));
	w->hm = w->hp + nch;
	struct bps s = {.a = a, .b = b, .n = n, .peq = w->peq, .hp = w->hp, .hm = w->hm};
	return strips(m, n, BPW, BPW, bd, &bp_ops, &s);
}

/* Pairs whose rows fit NW words: a column of every word at once, h handed down in
 * registers (no strips, no band: short pairs cost little whole). */
static inline __attribute__((always_inline)) int64_t
bp_short(const uint8_t *a, int64_t m, const uint8_t *b, int64_t n, const int NW, uint64_t *peq)
{
	uint64_t pv[4], mv[4];
	const int ob = (int)((m - 1) % BPW);
	int64_t score = m;

	for (int64_t i = 0; i < m; i++)
		peq[a[i] * 4 + i / BPW] |= (uint64_t)1 << (i % BPW);
	for (int w = 0; w < NW; w++) {
		pv[w] = ~(uint64_t)0;
		mv[w] = 0;
	}
	for (int64_t j = 0; j < n; j++) {
		const uint64_t *eq = peq + b[j] * 4;
		uint64_t hp = 1, hm = 0, ph, mh;
		for (int w = 0; w < NW; w++) {
			ed_bp_step64(&pv[w], &mv[w], eq[w], hp, hm, &ph, &mh);
			hp = ph >> (BPW - 1);
			hm = mh >> (BPW - 1);
		}
		score += (int64_t)((ph >> ob) & 1) - (int64_t)((mh >> ob) & 1);
	}
	for (int64_t i = 0; i < m; i++)
		peq[a[i] * 4 + i / BPW] = 0;
	return score;
}

/* ---- plain DP ---- */

/* Symbol i of a string of symbols of size bytes: 1, or 4 (code points). */
static inline uint32_t
sym(const void *s, int size, int64_t i)
{
	return size == 1 ? ((const uint8_t *)s)[i] : ((const uint32_t *)s)[i];
}

/* Leaves the last row in w->row. */
static int64_t
dp_pair(const void *a, int64_t m, const void *b, int64_t n, int size, struct work *w)
{
	ed_grow((void **)&w->row, &w->rcap, (size_t)n + 1, sizeof(int32_t));
	int32_t *row = w->row;
	for (int64_t j = 0; j <= n; j++)
		row[j] = (int32_t)j;
	for (int64_t i = 1; i <= m; i++) {
		int32_t diag = row[0];
		uint32_t ai = sym(a, size, i - 1);
		row[0] = (int32_t)i;
		for (int64_t j = 1; j <= n; j++) {
			int32_t up = row[j], d = diag + (ai != sym(b, size, j - 1));
			if (up + 1 < d)
				d = up + 1;
			if (row[j - 1] + 1 < d)
				d = row[j - 1] + 1;
			row[j] = d;
			diag = up;
		}
	}
	return row[n];
}

/* The last row of the modes' DP over A and B (reversed when rev), row 0 all 0 (infix)
 * or j: its least value over columns 1..n, *col the first column holding it (the last
 * when last). */
static int64_t
dp_mode_row(const void *a, int64_t m, const void *b, int64_t n, int size, int infix, int rev,
    int last, struct work *w, int64_t *col)
{
	ed_grow((void **)&w->row, &w->rcap, (size_t)n + 1, sizeof(int32_t));
	int32_t *row = w->row;
	for (int64_t j = 0; j <= n; j++)
		row[j] = infix ? 0 : (int32_t)j;
	for (int64_t i = 1; i <= m; i++) {
		int32_t diag = row[0];
		uint32_t ai = sym(a, size, rev ? m - i : i - 1);
		row[0] = (int32_t)i;
		for (int64_t j = 1; j <= n; j++) {
			int32_t up = row[j], d = diag + (ai != sym(b, size, rev ? n - j : j - 1));
			if (up + 1 < d)
				d = up + 1;
			if (row[j - 1] + 1 < d)
				d = row[j - 1] + 1;
			row[j] = d;
			diag = up;
		}
	}
	int64_t best = -1;
	for (int64_t j = 1; j <= n; j++)
		if (best < 0 || row[j] < best || (last && row[j] == best)) {
			best = row[j];
			*col = j;
		}
	return best;
}

int64_t
ed_dp_mode(const void *a, int64_t m, const void *b, int64_t n, int size, int mode, int64_t K,
    int64_t *start, int64_t *end)
{
	struct work w;
	int64_t e = 0, s = 0, d;
	*start = *end = -1;
	if (m == 0 || n == 0) {
		if (K >= 0 && m > K)
			return -1;
		*start = 0;
		return m;
	}
	memset(&w, 0, sizeof w);
	d = dp_mode_row(a, m, b, n, size, mode == ED_INFIX, 0, 0, &w, &e);
	if (K >= 0 && d > K) {
		work_free(&w);
		return -1;
	}
	if (d >= m) {		/* the empty match of column 0 comes first */
		work_free(&w);
		*start = 0;
		*end = -1;
		return m;
	}
	if (mode == ED_INFIX) {
		/* the longest match ending at e at that cost: reversed, a prefix, the last */
		dp_mode_row(a, m, b, e, size, 0, 1, 1, &w, &s);
		s = e - s;
	}
	*start = s;
	*end = e - 1;
	work_free(&w);
	return d;
}

/* The band's scratch of w. */
static struct ed_bws *
bws(struct work *w)
{
	if (w->bws == NULL)
		w->bws = ed_bws_new();
	return w->bws;
}

/* band: --algo auto, which sends long pairs to the band. */
static int32_t
pair_dist(const uint8_t *a, int64_t m, const uint8_t *b, int64_t n, int algo, int band, int t,
    int64_t K, struct work *w)
{
	struct ed_band bd;
	int64_t d, s, e;

	if (!ed_band_make(m, n, K, &bd))
		return -1;
	if (m == 0 || n == 0)
		d = MAX(m, n);
	else if (band && MIN(m, n) > ED_BAND_MIN)
		d = ed_band_dist(bws(w), a, m, b, n, ED_GLOBAL, K, &s, &e);
	else if (algo == ED_4R)
		d = fr_pair(a, m, b, n, t, &bd, w);
	else if (algo == ED_DP)
		d = dp_pair(a, m, b, n, 1, w);
	else if (MIN(m, n) <= 4 * BPW) {
		/* rows: the shorter */
		const uint8_t *r = m <= n ? a : b, *c = m <= n ? b : a;
		int64_t rm = MIN(m, n), cn = MAX(m, n);
		switch (CEIL_DIV(rm, BPW)) {
		case 1: d = bp_short(r, rm, c, cn, 1, w->peq4); break;
		case 2: d = bp_short(r, rm, c, cn, 2, w->peq4); break;
		case 3: d = bp_short(r, rm, c, cn, 3, w->peq4); break;
		default: d = bp_short(r, rm, c, cn, 4, w->peq4); break;
		}
	} else
		d = bp_pair(a, m, b, n, &bd, w);
	return K >= 0 && d > K ? -1 : (int32_t)d;
}

void
ed_cpu_batch(const uint8_t *pool, const struct ed_pair *pairs, size_t n,
    const struct ed_opts *o, const uint8_t *kind, const uint32_t *wide, int32_t *dist,
    int32_t *span)
{
	int algo = ed_engine(o), band = o->algo == ED_AUTO;
	if (algo == ED_4R && o->mode == ED_GLOBAL)
		ed_cpu_table(o->t);
	/* one pair (a long one, often) takes one thread: the others would only wait */
	#pragma omp parallel if (n > 1)
	{
		struct work w;
		memset(&w, 0, sizeof w);
		#pragma omp for schedule(dynamic, 16)
		for (size_t i = 0; i < n; i++) {
			const struct ed_pair *p = &pairs[i];
			int wd = kind != NULL && kind[i] == ED_WIDE;
			if (o->mode != ED_GLOBAL) {
				int64_t st, en, d;
				if (wd)
					d = ed_dp_mode(wide + p->aoff, p->alen, wide + p->boff,
					    p->blen, 4, o->mode, o->maxdist, &st, &en);
				else
					d = ed_band_dist(bws(&w), pool + p->aoff, p->alen,
					    pool + p->boff, p->blen, o->mode, o->maxdist, &st, &en);
				dist[i] = (int32_t)d;
				span[2 * i] = (int32_t)st;
				span[2 * i + 1] = (int32_t)en;
				continue;
			}
			if (!wd) {
				dist[i] = pair_dist(pool + p->aoff, p->alen, pool + p->boff, p->blen,
				    algo, band, o->t, o->maxdist, &w);
				continue;
			}
			struct ed_band bd;
			int64_t d = -1;
			if (ed_band_make(p->alen, p->blen, o->maxdist, &bd))
				d = dp_pair(wide + p->aoff, p->alen, wide + p->boff, p->blen, 4, &w);
			dist[i] = o->maxdist >= 0 && d > o->maxdist ? -1 : (int32_t)d;
		}
		work_free(&w);
	}
}

/* ---- last rows and alignments ---- */

static void
lastrow(const void *a, int64_t m, const void *b, int64_t n, int size, int algo, int t,
    struct work *w, int32_t *row)
{
	struct ed_band none = {0, 0, 0};

	row[0] = (int32_t)m;
	if (m == 0 || n == 0) {
		for (int64_t j = 1; j <= n; j++)
			row[j] = (int32_t)(m + j);
		return;
	}
	if (algo == ED_DP || size != 1) {
		dp_pair(a, m, b, n, size, w);
		memcpy(row, w->row, ((size_t)n + 1) * sizeof *row);
	} else if (algo == ED_4R) {
		fr_pair(a, m, b, n, t, &none, w);
		for (int64_t c = 0; c * t < n; c++) {
			uint32_t h3 = w->hrow[c];
			for (int64_t j = c * t + 1; j <= MIN(n, c * t + t); j++, h3 /= 3)
				row[j] = row[j - 1] + (int32_t)(h3 % 3) - 1;
		}
	} else {
		bp_pair(a, m, b, n, &none, w);
		for (int64_t j = 1; j <= n; j++) {
			int64_t c = (j - 1) / BPW, x = (j - 1) % BPW;
			row[j] = row[j - 1] + (int32_t)((w->hp[c] >> x) & 1) - (int32_t)((w->hm[c] >> x) & 1);
		}
	}
}

struct cigar {
	char *s;
	size_t len, cap;
	char op;		/* the run being gathered */
	uint64_t run;
	int64_t cost;
};

static void
cg_emit(struct cigar *cg)
{
	if (cg->run == 0)
		return;
	if (cg->len + 24 > cg->cap) {
		cg->cap = MAX(2 * cg->cap, (size_t)64);
		cg->s = xrealloc(cg->s, cg->cap);
	}
	cg->len += (size_t)snprintf(cg->s + cg->len, cg->cap - cg->len, "%llu%c",
	    (unsigned long long)cg->run, cg->op);
	cg->run = 0;
}

static void
cg_push(struct cigar *cg, char op, uint64_t k)
{
	if (k == 0)
		return;
	if (op != cg->op) {
		cg_emit(cg);
		cg->op = op;
	}
	cg->run += k;
	if (op != '=')
		cg->cost += (int64_t)k;
}

struct hb {
	const char *a, *b, *ra, *rb;	/* the strings and their reversals */
	int size;			/* bytes of a symbol */
	int64_t M, N;
	int algo, t;
	int32_t *f, *r;
	struct work w;
	struct cigar cg;
};

/* A small block by a full DP table and its traceback. */
static void
hb_base(struct hb *h, int64_t ao, int64_t m, int64_t bo, int64_t n)
{
	const int z = h->size;
	const char *a = h->a + ao * z, *b = h->b + bo * z;
	int64_t W = n + 1;
	int32_t *D = xmallocarray((size_t)((m + 1) * W), sizeof *D);
	char *ops = xmalloc((size_t)(m + n));
	int64_t k = 0;

	for (int64_t j = 0; j <= n; j++)
		D[j] = (int32_t)j;
	for (int64_t i = 1; i <= m; i++) {
		D[i * W] = (int32_t)i;
		for (int64_t j = 1; j <= n; j++) {
			int32_t d = D[(i - 1) * W + j - 1] + (sym(a, z, i - 1) != sym(b, z, j - 1));
			d = MIN(d, D[(i - 1) * W + j] + 1);
			d = MIN(d, D[i * W + j - 1] + 1);
			D[i * W + j] = d;
		}
	}
	for (int64_t i = m, j = n; i > 0 || j > 0;) {
		int32_t d = D[i * W + j];
		int ne = i > 0 && j > 0 && sym(a, z, i - 1) != sym(b, z, j - 1);
		if (i > 0 && j > 0 && d == D[(i - 1) * W + j - 1] + ne) {
			ops[k++] = ne ? 'X' : '=';
			i--, j--;
		} else if (i > 0 && d == D[(i - 1) * W + j] + 1) {
			ops[k++] = 'D';
			i--;
		} else {
			ops[k++] = 'I';
			j--;
		}
	}
	while (k > 0)
		cg_push(&h->cg, ops[--k], 1);
	free(ops);
	free(D);
}

static void
hb_rec(struct hb *h, int64_t ao, int64_t m, int64_t bo, int64_t n)
{
	const int z = h->size;
	if (m == 0 || n == 0) {
		cg_push(&h->cg, 'I', (uint64_t)n);
		cg_push(&h->cg, 'D', (uint64_t)m);
		return;
	}
	if (m == 1 || (m + 1) * (n + 1) <= BASE_CELLS) {
		hb_base(h, ao, m, bo, n);
		return;
	}
	int64_t mid = m / 2, best = 0;
	lastrow(h->a + ao * z, mid, h->b + bo * z, n, z, h->algo, h->t, &h->w, h->f);
	lastrow(h->ra + (h->M - ao - m) * z, m - mid, h->rb + (h->N - bo - n) * z, n, z, h->algo,
	    h->t, &h->w, h->r);
	for (int64_t j = 1; j <= n; j++)
		if (h->f[j] + h->r[n - j] < h->f[best] + h->r[n - best])
			best = j;
	hb_rec(h, ao, mid, bo, best);
	hb_rec(h, ao + mid, m - mid, bo + best, n - best);
}

/* The n symbols of size bytes at s, last first, in a malloc'd buffer. */
static char *
reversed(const void *s, size_t n, int size)
{
	char *r = xmallocarray(n + 1, (size_t)size);
	for (size_t i = 0; i < n; i++)
		memcpy(r + i * size, (const char *)s + (n - 1 - i) * size, (size_t)size);
	return r;
}

char *
ed_cpu_align(const void *a, size_t m, const void *b, size_t n, int size, int algo, int t,
    int64_t d, int64_t *cost)
{
	struct hb h;
	memset(&h, 0, sizeof h);
	if (algo == ED_AUTO && size == 1 && MIN(m, n) > ED_BAND_MIN) {
		struct ed_bws *w = ed_bws_new();
		int64_t s, e;
		if (d < 0)
			d = ed_band_dist(w, a, (int64_t)m, b, (int64_t)n, ED_GLOBAL, -1, &s, &e);
		char *cg = ed_band_align(w, a, (int64_t)m, b, (int64_t)n, d);
		ed_bws_free(w);
		*cost = d;
		return cg;
	}
	if (algo == ED_AUTO)
		algo = ED_BP;
	if (size != 1)
		algo = ED_DP;
	if (algo == ED_4R)
		ed_cpu_table(t);
	h.a = a;
	h.b = b;
	h.size = size;
	h.M = (int64_t)m;
	h.N = (int64_t)n;
	h.algo = algo;
	h.t = t;
	char *ra = reversed(a, m, size), *rb = reversed(b, n, size);
	h.ra = ra;
	h.rb = rb;
	h.f = xmallocarray(n + 1, sizeof(int32_t));
	h.r = xmallocarray(n + 1, sizeof(int32_t));
	hb_rec(&h, 0, (int64_t)m, 0, (int64_t)n);
	cg_emit(&h.cg);
	if (h.cg.s == NULL)
		h.cg.s = xstrdup("");
	free(ra);
	free(rb);
	free(h.f);
	free(h.r);
	work_free(&h.w);
	*cost = h.cg.cost;
	return h.cg.s;
}
