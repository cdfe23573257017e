/* gmmscore_pack.c: the read models (common/gmm.h) turned into what the scorers use:
 * the scoring parameters of gmmscore.h's formula (s, -mu s and the gconsts, recomputed
 * over the dimensions scored) for both paths, and the GPU's slot layout. Separate from
 * the model readers, which know nothing of either; and the GPU's tile shape, which the
 * layout depends on. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "gmmscore.h"

void
gmm_params_make(const struct gmm_models *m, int dims, struct gmm_params *p)
{
	size_t nc = m->ncomp, D = (size_t)m->dim;
	memset(p, 0, sizeof *p);
	p->nmodels = m->nmodels;
	p->ncomp = nc;
	p->dims = dims;
	p->dp = (int)CEIL_DIV((size_t)dims, GMM_DVEC) * GMM_DVEC;
	p->off = m->off;
	for (size_t i = 0; i < m->nmodels; i++)
		p->maxcomp = MAX(p->maxcomp, m->off[i + 1] - m->off[i]);
	size_t dp = (size_t)p->dp;
	p->s = xcalloc(mul_size(nc, dp, "parameters"), sizeof *p->s);
	p->na = xcalloc(mul_size(nc, dp, "parameters"), sizeof *p->na);
	p->g = xmallocarray(nc, sizeof *p->g);
	const double log2pi = log(2 * M_PI);
	#pragma omp parallel for schedule(static) if (nc > 4096)
	for (size_t c = 0; c < nc; c++) {
		double logdet = 0;
		for (int d = 0; d < dims; d++) {
			double iv = m->ivar[c * D + (size_t)d];
			double s = sqrt(0.5 * iv);
			p->s[c * dp + (size_t)d] = (float)s;
			p->na[c * dp + (size_t)d] = (float)(-m->mean[c * D + (size_t)d] * s);
			logdet += log(iv);
		}
		double g = log(m->weight[c]) - 0.5 * (dims * log2pi - logdet);
		p->g[c] = (float)g;	/* -inf for a zero weight: that component never wins */
	}
}

void
gmm_params_free(struct gmm_params *p)
{
	free(p->s);
	free(p->na);
	free(p->g);
	memset(p, 0, sizeof *p);
}

void
gmm_layout_make(const struct gmm_params *p, size_t slots, struct gmm_layout *l)
{
	const size_t nm = p->nmodels, dp = (size_t)p->dp, ng = dp / GMM_DVEC;

	memset(l, 0, sizeof *l);
	l->slots = slots;
	for (size_t m = 0; m < nm; m++)
		l->npart += CEIL_DIV(p->off[m + 1] - p->off[m], slots);
	l->part_slot = xmallocarray(l->npart, sizeof *l->part_slot);
	l->part_k = xmallocarray(l->npart, sizeof *l->part_k);
	l->model_part0 = xmallocarray(nm + 1, sizeof *l->model_part0);
	size_t *part_c0 = xmallocarray(l->npart, sizeof *part_c0);
	size_t blk = 0, used = 0, q = 0;
	for (size_t m = 0; m < nm; m++) {
		l->model_part0[m] = (int)q;
		for (size_t c = p->off[m]; c < p->off[m + 1]; c += slots, q++) {
			const size_t k = MIN(slots, p->off[m + 1] - c);
			if (used + k > slots) {
				blk++;
				used = 0;
			}
			l->part_slot[q] = (int)(blk * slots + used);
			l->part_k[q] = (int)k;
			part_c0[q] = c;
			used += k;
		}
	}
	l->model_part0[nm] = (int)l->npart;
	l->nblocks = blk + 1;
	l->nslots = l->nblocks * slots;
	l->blk_part0 = xmallocarray(l->nblocks + 1, sizeof *l->blk_part0);
	for (size_t b = 0, i = 0; b <= l->nblocks; b++) {
		while (i < l->npart && (size_t)l->part_slot[i] < b * slots)
			i++;
		l->blk_part0[b] = (int)i;
	}
	const size_t nslots = l->nslots;
	l->P = xcalloc(mul_size(mul_size(nslots, dp, "parameters"), 2, "parameters"),
	    sizeof *l->P);
	l->G = xcalloc(nslots, sizeof *l->G);
	#pragma omp parallel for schedule(dynamic, 64) if (nslots * dp > ((size_t)1 << 18))
	for (size_t i = 0; i < l->npart; i++) {
		for (int j = 0; j < l->part_k[i]; j++) {
			const size_t c = part_c0[i] + (size_t)j, s = (size_t)l->part_slot[i] + (size_t)j;
			l->G[s] = p->g[c];
			for (size_t k = 0; k < ng; k++) {
				float *dst = l->P + ((k * nslots + s) * 2) * GMM_DVEC;
				memcpy(dst, p->s + c * dp + GMM_DVEC * k, GMM_DVEC * sizeof(float));
				memcpy(dst + GMM_DVEC, p->na + c * dp + GMM_DVEC * k,
				    GMM_DVEC * sizeof(float));
			}
		}
	}
	free(part_c0);
}

/* x rounded to TF32 (10 fraction bits), to nearest, ties away from zero: as the
 * device's cvt.rna.tf32.f32. */
static float
tf32_round(float x)
{
	uint32_t u;
	memcpy(&u, &x, sizeof u);
	if ((u & 0x7f800000u) != 0x7f800000u)
		u = (u + 0x1000u) & 0xffffe000u;
	memcpy(&x, &u, sizeof x);
	return x;
}

void
gmm_tc_pack(const struct gmm_params *p, struct gmm_tc_params *t)
{
	const size_t nm = p->nmodels, dp = (size_t)p->dp, K = 2 * dp;
	memset(t, 0, sizeof *t);
	t->ks = (int)(K / 8);	/* dp is a multiple of 4 */
	t->ctr = xcalloc(dp, sizeof *t->ctr);
	t->sig = xmallocarray(dp, sizeof *t->sig);
	/* One pass over the Gaussians, row by row (a pass a dimension read all of s and na
	 * 2 dp times, strided: 0.2 s of the bench's start). Each dimension's sums still
	 * run in Gaussian order, so the values are the same. */
	double *msum = xcalloc(dp, sizeof *msum), *ssum = xcalloc(dp, sizeof *ssum);
	size_t *mcnt = xcalloc(dp, sizeof *mcnt), live = 0;
	for (size_t c = 0; c < p->ncomp; c++) {
		if (!isfinite(p->g[c]))
			continue;
		live++;
		const float *s = p->s + c * dp, *na = p->na + c * dp;
		for (size_t d = 0; d < dp; d++) {
			if (s[d] > 0) {
				msum[d] += -(double)na[d] / s[d];
				mcnt[d]++;
			}
			ssum[d] += tf32_round(s[d] * s[d]);
		}
	}
	for (size_t d = 0; d < dp; d++) {
		/* the centre: each dimension's mean of the means (mu = -na / s), so that the
		 * y^2 and y terms, which cancel, are small */
		t->ctr[d] = mcnt[d] ? (float)(msum[d] / (double)mcnt[d]) : 0.0f;
		/* the bound's weights: sig_d^2 = 1 / (the mean rounded s^2 over the live
		 * Gaussians) */
		t->sig[d] = ssum[d] > 0 ? (float)(1 / sqrt(ssum[d] / (double)live)) : 1.0f;
	}
	free(msum);
	free(ssum);
	free(mcnt);
	const size_t per = (size_t)t->ks * 4 * 32 * 2;
	t->pf = xcalloc(mul_size(nm, per, "tensor-core parameters"), sizeof *t->pf);
	t->cst = xcalloc(mul_size(nm, 32, "tensor-core parameters"), sizeof *t->cst);
	t->mb = xcalloc(mul_size(nm, 4, "tensor-core parameters"), sizeof *t->mb);
	#pragma omp parallel for schedule(dynamic, 16) if (nm > 64)
	for (size_t m = 0; m < nm; m++) {
		double col[32][96];	/* P' of the model's slots; K <= 96 (TC_MAXDP) */
		double mb[4] = {0, 0, 0, 0};
		const size_t c0 = p->off[m], k = p->off[m + 1] - c0;
		for (size_t q = 0; q < 32; q++) {
			const size_t c = c0 + q;
			const int live = q < k && isfinite(p->g[c]);
			double cst = 0, n2 = 0, n1 = 0;
			for (size_t d = 0; d < dp; d++) {
				const double s = live ? p->s[c * dp + d] : 0;
				const double nap = live ? p->na[c * dp + d] + (double)t->ctr[d] * s : 0;
				col[q][d] = s * s;
				col[q][dp + d] = 2 * s * nap;
				cst += nap * nap;
				/* the weighted norms of the values the tensor cores take */
				const double sg = t->sig[d];
				const double r2 = tf32_round((float)col[q][d]) * sg * sg;
				const double r1 = tf32_round((float)col[q][dp + d]) * sg;
				n2 += r2 * r2;
				n1 += r1 * r1;
			}
			t->cst[m * 32 + q] = live ? (float)(cst - p->g[c]) : INFINITY;
			if (live) {
				mb[0] = fmax(mb[0], sqrt(n2));
				mb[1] = fmax(mb[1], sqrt(n1));
				mb[2] = fmax(mb[2], fabs((double)t->cst[m * 32 + q]));
				mb[3] = fmax(mb[3], fabs((double)p->g[c]));
			}
		}
		for (int i = 0; i < 4; i++)	/* rounded up */
			t->mb[m * 4 + (size_t)i] = (float)(mb[i] * (1 + 0x1p-20));
		float *dst = t->pf + m * per;
		for (int s = 0; s < t->ks; s++)
			for (int j = 0; j < 4; j++)
				for (int lane = 0; lane < 32; lane++)
					for (int h = 0; h < 2; h++)
						*dst++ = tf32_round((float)col[8 * j + lane / 4]
						    [8 * s + lane % 4 + 4 * h]);
	}
}

void
gmm_tc_params_free(struct gmm_tc_params *t)
{
	free(t->pf);
	free(t->cst);
	free(t->mb);
	free(t->sig);
	free(t->ctr);
	memset(t, 0, sizeof *t);
}

void
gmm_tile_pick(const struct gmmscore_tune *t, int *cpl, int *nsub)
{
	*cpl = t->cpl;
	*nsub = t->nsub;
	if ((*cpl != 2 && *cpl != 4) || *nsub < 1 || *nsub > 16)
		die("tuning table, row \"%s\": %d Gaussians a thread (2 or 4), %d tiles a block "
		    "(1 to 16)", t->device, *cpl, *nsub);
	const char *tile = getenv("GMMSCORE_TILE");
	if (tile != NULL && *tile != '\0') {
		if (sscanf(tile, "%d,%d", cpl, nsub) != 2 || (*cpl != 2 && *cpl != 4) || *nsub < 1 ||
		    *nsub > 16)
			die("GMMSCORE_TILE='%s': expected CPL,NSUB with CPL 2 or 4, NSUB 1 to 16", tile);
	}
}

void
gmm_layout_free(struct gmm_layout *l)
{
	free(l->part_slot);
	free(l->part_k);
	free(l->blk_part0);
	free(l->model_part0);
	free(l->P);
	free(l->G);
	memset(l, 0, sizeof *l);
}
