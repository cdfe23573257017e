/* editdist4r_band_wide.h: the template of a group of LANES columns of the band in a
 * skew (editdist4r_band.h says why), for editdist4r_band_avx2.c and
 * editdist4r_band_avx512.c: each defines WORDS (the 64-bit words of its vector), VEC
 * (a GCC vector of WORDS uint64_t), VECS (the vectors a group's lanes fill: LANES =
 * VECS x WORDS) and
 * NAME, includes this, and is compiled for its instructions. Several vectors a group
 * because one step's chain of dependent operations (a block's h out, a column's v
 * vectors on) is longer than a vector's work: VECS of them fill the wait. The block step
 * is editdist4r.h's, on vectors. */
#include "editdist4r.h"
#include "editdist4r_band.h"

#define LANES (VECS * WORDS)

ED_BP_DEFINE(wstep, VEC)

#if WORDS == 4
#define SHIFT_IDX {1, 2, 3, 4}
#else
#define SHIFT_IDX {1, 2, 3, 4, 5, 6, 7, 8}
#endif

/* Lane i <- lane i + 1 over the VECS vectors, the last lane <- x's first: the blocks' v
 * vectors (or D) handed on to the next column. */
#define SHIFT_IN(v, x)                                                              \
	do {                                                                        \
		for (int r_ = 0; r_ < VECS - 1; r_++)                               \
			v[r_] = __builtin_shuffle(v[r_], v[r_ + 1], (VEC)SHIFT_IDX); \
		v[VECS - 1] = __builtin_shuffle(v[VECS - 1], x, (VEC)SHIFT_IDX);    \
	} while (0)

/* Groups of more symbols than this gather their match vectors one by one. */
#define SELECT_MAX 4

void
NAME(struct ed_wgroup *g)
{
	const int64_t fb = g->fb, lb = g->lb, nb = g->nb, L = LANES;
	uint64_t *P = g->P, *M = g->M;
	int64_t *S = g->S;
	const VEC init = (VEC){0} + g->h0, zero = (VEC){0};
	/* sv: D at each lane's block's last row, as uint64_t: the lanes outside the
	 * group's blocks carry whatever they find, and unsigned sums wrap */
	VEC hp[VECS], hm[VECS], pv[VECS], mv[VECS], sv[VECS], lane[VECS];
	/* lane i: column j + L - 1 - i, block s - (L - 1) + i at step s. Its match
	 * vector is at s - (L - 1) + i in its symbol's row, so the L words from
	 * s - (L - 1) on in a symbol's row hold it for every lane of that symbol: a
	 * load and a mask a symbol of the group (few, on DNA) */
	const uint64_t *row[SELECT_MAX];
	VEC sel[SELECT_MAX][VECS];
	int64_t off[LANES];
	int nsym = 0;
	for (int r = 0; r < VECS; r++) {
		hp[r] = init;
		hm[r] = pv[r] = mv[r] = zero;
		sv[r] = zero;
		for (int x = 0; x < WORDS; x++)
			lane[r][x] = (uint64_t)(r * WORDS + x);
	}
	for (int i = 0; i < L; i++)
		off[i] = g->eqoff[L - 1 - i] - (L - 1) + i;
	for (int i = 0; i < L; i++) {
		const uint64_t *base = g->peq + g->eqoff[L - 1 - i] - (L - 1);
		int x = 0;
		while (x < nsym && row[x] != base)
			x++;
		if (x == SELECT_MAX) {
			nsym = SELECT_MAX + 1;
			break;
		}
		if (x == nsym) {
			row[nsym] = base;
			for (int r = 0; r < VECS; r++)
				sel[nsym][r] = zero;
			nsym++;
		}
		sel[x][i / WORDS][i % WORDS] = ~(uint64_t)0;
	}
	const int select = nsym <= SELECT_MAX;

	const int64_t s_end = lb + L - 1, mid0 = fb + L, mid1 = MIN(lb, nb - 2);
	for (int64_t s = fb; s <= s_end; s++) {
		const int edge = s < mid0 || s > mid1;
		SHIFT_IN(pv, (VEC){0} + P[s]);
		SHIFT_IN(mv, (VEC){0} + M[s]);
		SHIFT_IN(sv, (VEC){0} + (uint64_t)S[s]);
		VEC eq[VECS];
		for (int r = 0; r < VECS; r++)
			eq[r] = zero;
		if (select) {
			for (int x = 0; x < nsym; x++)
				for (int r = 0; r < VECS; r++) {
					VEC v;
					__builtin_memcpy(&v, row[x] + s + r * WORDS, sizeof v);
					eq[r] |= v & sel[x][r];
				}
		} else {
			for (int i = 0; i < L; i++)
				eq[i / WORDS][i % WORDS] = g->peq[off[i] + s];
		}
		if (!edge) {
			for (int r = 0; r < VECS; r++) {
				VEC ph, mh;
				wstep(&pv[r], &mv[r], eq[r], hp[r], hm[r], &ph, &mh);
				hp[r] = ph >> 63;
				hm[r] = mh >> 63;
				sv[r] += hp[r] - hm[r];
			}
		} else {
			/* lane L - 1 - (s - fb) starts at block fb; the last block's D is
			 * at row m's bit */
			const VEC first = (VEC){0} + (uint64_t)(L - 1 - (s - fb));
			const int64_t il = nb - 1 - s + (L - 1);
			const VEC at_last = (VEC){0} + (uint64_t)il;
			for (int r = 0; r < VECS; r++) {
				VEC f = lane[r] == first, a = lane[r] == at_last, ph, mh;
				if (s - fb < L) {
					hp[r] = (hp[r] & ~f) | (init & f);
					hm[r] &= ~f;
				}
				VEC shv = (((VEC){0} + 63) & ~a) | (((VEC){0} + (uint64_t)g->ob) & a);
				wstep(&pv[r], &mv[r], eq[r], hp[r], hm[r], &ph, &mh);
				sv[r] += ((ph >> shv) & 1) - ((mh >> shv) & 1);
				hp[r] = ph >> 63;
				hm[r] = mh >> 63;
			}
			if (lb == nb - 1 && il >= 0 && il < L)
				g->last[L - 1 - il] = (int64_t)sv[il / WORDS][il % WORDS];
		}
		if (g->st != NULL) {
			uint64_t *st = g->st + (size_t)(s - fb) * 3 * L;
			for (int r = 0; r < VECS; r++) {
				__builtin_memcpy(st + r * WORDS, &pv[r], sizeof pv[r]);
				__builtin_memcpy(st + L + r * WORDS, &mv[r], sizeof mv[r]);
				__builtin_memcpy(st + 2 * L + r * WORDS, &sv[r], sizeof sv[r]);
			}
		}
		/* lane 0 is done with its block: the group's last column */
		P[s - (L - 1)] = pv[0][0];
		M[s - (L - 1)] = mv[0][0];
		S[s - (L - 1)] = (int64_t)sv[0][0];
	}
}
