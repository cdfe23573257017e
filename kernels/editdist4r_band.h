/* editdist4r_band.h: what editdist4r_band.c hands its wide block steps
 * (editdist4r_band_avx2.c, editdist4r_band_avx512.c, one template for both in
 * editdist4r_band_wide.h): a group of columns of the band, computed at once.
 *
 * Why a group: in one column, block b + 1 waits for the h value out of block b, a
 * chain of a dozen dependent operations a block, so a wide vector cannot take several
 * blocks of one column. It can take the blocks of several columns in a skew: lane i
 * computes column j + L - 1 - i at block s - (L - 1) + i at step s, so that every lane
 * finds its h in its own lane (its block above, one step earlier) and its v vectors in
 * the lane beside it (its block in the column before, one step earlier): the lanes are
 * independent within a step. Every column of a group computes the same blocks fb..lb,
 * the union of what the band allows over the group (its bottom grown by up to L
 * blocks, started as the band starts its new blocks), and the band is cut once a group
 * (editdist4r_band.c): a wider band than one column at a time computes, over-estimates
 * at its edges as before, so every value <= the bound is still exact and the answers
 * are the same bytes. */
#ifndef EDITDIST4R_BAND_H
#define EDITDIST4R_BAND_H

#include <stdint.h>

/* Blocks kept on each side of the state and of each symbol's match vectors, which
 * the lanes before their first block and past their last read and write. */
#define ED_WPAD 32
/* The widest group. */
#define ED_WLANES 32

struct ed_wgroup {
	uint64_t *P, *M;	/* the blocks' v vectors, [-ED_WPAD, nb + ED_WPAD) */
	int64_t *S;		/* D at each block's last row, the same */
	const uint64_t *peq;	/* match vectors [code * nb + block], padded the same */
	int64_t nb;		/* blocks of the query */
	int64_t fb, lb;		/* the blocks every column of the group computes */
	int64_t eqoff[ED_WLANES];	/* column j + l's symbol's row of peq: code * nb */
	uint64_t h0;		/* the h entering block fb from above: 1 (+1), or 0 (infix,
				   at row 0) */
	int ob;			/* row m's bit in the last block */
	int64_t last[ED_WLANES];	/* out: column j + l's D at row m, where lb is the
					   last block */
	uint64_t *st;		/* where not NULL: each step's lanes' P, then M, then D
				   (3 L words a step, lb - fb + L steps), for a traceback */
};

/* One group of columns (the lanes below: 12 with AVX2, 16 with AVX-512): P, M and S
 * of blocks fb..lb go from the column before the group to its last column. */
void ed_band_group_avx2(struct ed_wgroup *g);
void ed_band_group_avx512(struct ed_wgroup *g);
extern const int ed_band_avx2_lanes, ed_band_avx512_lanes;

#endif
