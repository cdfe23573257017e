/* gmmscore_pack.c: the read models (common/gmm.h) turned into what the scorers use:
 * the scoring parameters of gmmscore.h's formula (s, -mu s and the gconsts, recomputed
 * over the dimensions scored) for both paths, and the GPU's slot layout. Separate from
 * the model readers, which know nothing of either; and the GPU's tile shape, which the
 * layout depends on. */
#include <math.h>
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
