/* clmatmul_plan.c: the plan of a multiply: whether it runs in core, else the blocks of
 * C and the panels of K that fit the device memory bound (--max-device-mem, else most
 * of the device). Kept apart from the transfers and kernels it sizes: it is arithmetic
 * on sizes alone, and each of its loops must be seen to end. */
#include "clmatmul_engine.h"

/* Bytes the plan keeps on the device; sets *biggest to its largest buffer. The packed
 * copies (cm_packs) double A and B. */
size_t
cm_footprint(const struct cm_engine *e, const struct plan *pl, size_t *biggest)
{
	size_t es = e->esize, ab = cm_packs(e) ? 2 : 1;
	size_t a = pl->bm * pl->bk * es, b = pl->bk * pl->bn * es, c = pl->bm * pl->bn * es;
	*biggest = MAX(MAX(a, b), c);
	return pl->slots * (ab * (a + b) + c * (1 + (size_t)pl->c0slot));
}

static int
plan_fits(const struct cm_engine *e, const struct plan *pl)
{
	size_t big, f = cm_footprint(e, pl, &big);
	return f <= e->budget && big <= e->x->max_alloc;
}

void
cm_plan(const struct cm_engine *e, size_t m, size_t n, size_t k, int beta, int stream,
    struct plan *pl)
{
	const size_t BMp = (size_t)e->p.bm, BNp = (size_t)e->p.bn, BKp = (size_t)e->p.bk;
	const size_t mp = round_up(m, BMp), np = round_up(n, BNp), kp = round_up(k, BKp);

	*pl = (struct plan){mp, np, kp, 1, 1, 1, 1, 0};
	size_t incore_big, incore = cm_footprint(e, pl, &incore_big);
	const size_t bands = MIN((size_t)CM_STREAM_BANDS, mp / CM_STREAM_ROWS);
	if (stream && bands >= 2 && plan_fits(e, pl)) {
		/* in core, streamed: bands of whole rows, two slots, where they fit */
		struct plan b = *pl;
		b.slots = 2;
		b.bm = round_up(CEIL_DIV(mp, bands), BMp);
		if (plan_fits(e, &b))
			*pl = b;
	} else if (!plan_fits(e, pl)) {
		/* Blocks of C as large as a share of the bound allows (fewer blocks: less
		 * traffic), the panels of A and B in the rest; the share shrinks until the
		 * panels are deep enough for a kernel to pay for reading and writing C.
		 *
		 * The loops end. bm and bn stay positive multiples of BMp and BNp and never
		 * grow; write i = bm / BMp, j = bn / BNp (integers >= 1). The inner loop runs
		 * only while i + j > 2 (a side above one tile) and each turn halves a side
		 * that is above one tile: i' = ceil(floor(i BMp / 2) / BMp) <= ceil(i / 2) < i
		 * for i >= 2 (so for j). So i + j falls by at least 1 a turn, and all turns of
		 * all passes together number at most (mp / BMp - 1) + (np / BNp - 1). The
		 * outer loop halves share, which is 0 after at most 64 passes; with share 0
		 * the inner loop's first test always holds, so it brings both sides down to
		 * one tile and the pass breaks. Hence at most 66 passes. (It once halved bn
		 * when bm < bn even with bn at one tile, and spun for ever.) */
		pl->slots = 2;
		pl->c0slot = beta;
		const size_t es = e->esize, ce = es * (1 + (size_t)beta);
		const size_t ab = cm_packs(e) ? 2 : 1;
		const size_t kwant = MIN(kp, MAX(BKp, 1024 / BKp * BKp));
		struct plan best = {0};
		for (size_t share = e->budget / 2;; share /= 2) {
			while ((2 * pl->bm * pl->bn * ce > share ||
			    pl->bm * pl->bn * es > e->x->max_alloc) && (pl->bm > BMp || pl->bn > BNp)) {
				if (pl->bm > BMp && (pl->bm >= pl->bn || pl->bn == BNp))
					pl->bm = round_up(pl->bm / 2, BMp);
				else
					pl->bn = round_up(pl->bn / 2, BNp);
			}
			size_t cbytes = 2 * pl->bm * pl->bn * ce;
			size_t left = e->budget > cbytes ? e->budget - cbytes : 0;
			size_t bk = left / (2 * (pl->bm + pl->bn) * es * ab);
			bk = MIN(bk, e->x->max_alloc / (MAX(pl->bm, pl->bn) * es));
			bk = MIN(bk / BKp * BKp, kp);
			if (bk >= BKp && pl->bm * pl->bn * bk > best.bm * best.bn * best.bk) {
				best = *pl;
				best.bk = bk;
			}
			if (bk >= kwant || (pl->bm == BMp && pl->bn == BNp))
				break;
		}
		/* Nothing fits: the least bound that works is the smaller of the blocked
		 * plan's least (one tile of C and one slice of its panels, twice) and the
		 * in-core footprint (smaller for matrices of a tile or two). */
		if (best.bk == 0) {
			size_t least = 2 * (BMp * BNp * ce + (BMp + BNp) * BKp * es * ab);
			if (incore_big <= e->x->max_alloc)
				least = MIN(least, incore);
			die("--max-device-mem %zu is too small for one %zux%zu tile of C and its "
			    "panels (at least %zu bytes needed)", e->budget, BMp, BNp, least);
		}
		*pl = best;
	}
	/* Even blocks: as many as needed, as equal as the tiles allow. */
	pl->nbm = CEIL_DIV(mp, pl->bm);
	pl->bm = round_up(CEIL_DIV(mp, pl->nbm), BMp);
	pl->nbn = CEIL_DIV(np, pl->bn);
	pl->bn = round_up(CEIL_DIV(np, pl->nbn), BNp);
	pl->nbk = CEIL_DIV(kp, pl->bk);
	pl->bk = round_up(CEIL_DIV(kp, pl->nbk), BKp);
	pl->c0slot = beta && pl->nbk > 1;
}
