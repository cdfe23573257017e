/* docsim_sparse.cu: sparse input (text, libsvm, MatrixMarket) on the GPU. The frequent
 * terms (document frequency above n / dense_df_divisor, at most dense_terms_max of them:
 * the tuning table's) form dense panels for the GEMM (k_densify); every other term is added into the tile
 * from the corpus's postings (k_scatter, a warp a row). Apart as the one path with an
 * inverted index. */
#include <stdlib.h>
#include <string.h>

#include "docsim_dev.cuh"

/* Rows [r0, r0+nr) of a CSR whose columns are dense indexes, into out (nr x F, zeroed). */
__global__ void
k_densify(const uint64_t *ptr, const uint32_t *col, const float *val, size_t r0, int nr,
    double *out, int F)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= nr)
		return;
	for (uint64_t e = ptr[r0 + i]; e < ptr[r0 + i + 1]; e++)
		out[(size_t)i * F + col[e]] = val[e];
}

__device__ static uint64_t
lower_bound(const uint32_t *a, uint64_t lo, uint64_t hi, uint64_t key)
{
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		if (a[mid] < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* S[i - r0][j - c0] += w_it w_jt over the rare terms t of row i and the corpus rows j
 * in [c0, c1) (j < i as well for all pairs). A warp a row; the lanes share a term's
 * postings, so within a term no two lanes touch the same j. */
__global__ void
k_scatter(const uint64_t *rptr, const uint32_t *rcol, const float *rval,
    const uint64_t *cptr, const uint32_t *cdoc, const float *cval,
    size_t r0, int nr, size_t c0, size_t c1, int sym, double *S, size_t ldS)
{
	int w = (int)((blockIdx.x * (size_t)blockDim.x + threadIdx.x) >> 5), lane = threadIdx.x & 31;
	if (w >= nr)
		return;
	size_t i = r0 + w, hi = c1;
	if (sym && i < hi)
		hi = i;
	if (hi <= c0)
		return;
	double *row = S + (size_t)w * ldS;
	for (uint64_t e = rptr[i]; e < rptr[i + 1]; e++) {
		uint32_t t = rcol[e];
		double wt = rval[e];
		uint64_t lo = lower_bound(cdoc, cptr[t], cptr[t + 1], c0);
		uint64_t up = lower_bound(cdoc, lo, cptr[t + 1], hi);
		for (uint64_t p = lo + lane; p < up; p += 32)
			row[cdoc[p] - c0] += wt * (double)cval[p];
		__syncwarp();
	}
}

static void
split_csr(const struct csr *m, const int32_t *dense_of, size_t dim, struct split *s)
{
	size_t n = m->rows;
	s->fptr = (uint64_t *)xcalloc(n + 1, sizeof(uint64_t));
	s->rptr = (uint64_t *)xcalloc(n + 1, sizeof(uint64_t));
	for (size_t r = 0; r < n; r++) {
		uint64_t f = 0, q = 0;
		for (uint64_t e = m->ptr[r]; e < m->ptr[r + 1]; e++) {
			uint32_t t = m->idx[e];
			if (t >= dim)
				continue;
			if (dense_of[t] >= 0)
				f++;
			else
				q++;
		}
		s->fptr[r + 1] = s->fptr[r] + f;
		s->rptr[r + 1] = s->rptr[r] + q;
	}
	s->fcol = (uint32_t *)xmallocarray(s->fptr[n] + 1, sizeof(uint32_t));
	s->fval = (float *)xmallocarray(s->fptr[n] + 1, sizeof(float));
	s->rcol = (uint32_t *)xmallocarray(s->rptr[n] + 1, sizeof(uint32_t));
	s->rval = (float *)xmallocarray(s->rptr[n] + 1, sizeof(float));
	for (size_t r = 0; r < n; r++) {
		uint64_t f = s->fptr[r], q = s->rptr[r];
		for (uint64_t e = m->ptr[r]; e < m->ptr[r + 1]; e++) {
			uint32_t t = m->idx[e];
			if (t >= dim)
				continue;
			if (dense_of[t] >= 0) {
				s->fcol[f] = (uint32_t)dense_of[t];
				s->fval[f++] = m->val[e];
			} else {
				s->rcol[q] = t;
				s->rval[q++] = m->val[e];
			}
		}
	}
}

static void
dfree(void *p)
{
	cudaFree(p);
}

/* Frees a split in host (free) or device (dfree) memory. */
static void
split_free(struct split *s, void (*release)(void *))
{
	release(s->fptr);
	release(s->rptr);
	release(s->fcol);
	release(s->rcol);
	release(s->fval);
	release(s->rval);
}

static size_t
split_bytes(const struct split *s, size_t n)
{
	return (2 * (n + 1)) * 8 + (s->fptr[n] + s->rptr[n]) * 8;
}

/* The device copy of a split: the dense-index part (for panels) and the rare part. */
static void
split_upload(const struct split *s, size_t n, struct split *d)
{
	d->fptr = upload(s->fptr, n + 1);
	d->rptr = upload(s->rptr, n + 1);
	d->fcol = upload(s->fcol, s->fptr[n]);
	d->fval = upload(s->fval, s->fptr[n]);
	d->rcol = upload(s->rcol, s->rptr[n]);
	d->rval = upload(s->rval, s->rptr[n]);
}

struct dfterm {
	uint64_t df;
	uint32_t t;
};

static int
dfterm_cmp(const void *a, const void *b)
{
	const struct dfterm *x = (const struct dfterm *)a, *y = (const struct dfterm *)b;
	if (x->df != y->df)
		return x->df > y->df ? -1 : 1;
	return (x->t > y->t) - (x->t < y->t);
}

/* The frequent terms of a sparse corpus: dense_of[t] = their dense index, by df. */
static size_t
frequent_terms(const struct csr *c, size_t dim, const struct docsim_tune *tune, int32_t *dense_of)
{
	size_t n = c->rows;
	uint64_t *df = (uint64_t *)xcalloc(dim ? dim : 1, sizeof(uint64_t));
	for (uint64_t e = 0; e < csr_nnz(c); e++)
		df[c->idx[e]] += c->val[e] != 0;
	uint64_t cut = MAX((uint64_t)1, (uint64_t)(n / tune->dense_df_divisor));
	size_t F = 0;
	uint32_t *cand = (uint32_t *)xmallocarray(dim ? dim : 1, sizeof(uint32_t));
	for (size_t t = 0; t < dim; t++) {
		dense_of[t] = -1;
		if (df[t] > cut)
			cand[F++] = (uint32_t)t;
	}
	/* most frequent first (then by term), at most tune->dense_terms_max */
	struct dfterm *byf = (struct dfterm *)xmallocarray(F ? F : 1, sizeof(struct dfterm));
	for (size_t f = 0; f < F; f++)
		byf[f] = dfterm{df[cand[f]], cand[f]};
	qsort(byf, F, sizeof *byf, dfterm_cmp);
	F = MIN(F, tune->dense_terms_max);
	for (size_t f = 0; f < F; f++)
		dense_of[byf[f].t] = (int32_t)f;
	free(byf);
	free(cand);
	free(df);
	return F;
}

/* The corpus's rare entries by term: postings with rows ascending. */
static void
rare_postings(const struct split *s, size_t n, size_t dim, struct gpu *g, size_t *bytes)
{
	uint64_t nnz = s->rptr[n];
	uint64_t *cp = (uint64_t *)xcalloc(dim + 1, sizeof(uint64_t));
	uint32_t *doc = (uint32_t *)xmallocarray(nnz + 1, sizeof(uint32_t));
	float *val = (float *)xmallocarray(nnz + 1, sizeof(float));
	for (uint64_t e = 0; e < nnz; e++)
		cp[s->rcol[e] + 1]++;
	for (size_t t = 0; t < dim; t++)
		cp[t + 1] += cp[t];
	uint64_t *fill = (uint64_t *)xmallocarray(dim + 1, sizeof(uint64_t));
	memcpy(fill, cp, (dim + 1) * sizeof(uint64_t));
	for (size_t r = 0; r < n; r++)
		for (uint64_t e = s->rptr[r]; e < s->rptr[r + 1]; e++) {
			uint64_t at = fill[s->rcol[e]]++;
			doc[at] = (uint32_t)r;
			val[at] = s->rval[e];
		}
	g->cptr = upload(cp, dim + 1);
	g->cdoc = upload(doc, nnz);
	g->cval = upload(val, nnz);
	*bytes = (dim + 1) * 8 + nnz * 8;
	free(fill);
	free(cp);
	free(doc);
	free(val);
}

/* Sparse input: the frequent terms, both sides' split vectors on the device and the
 * corpus's postings; sets g->K and returns the device bytes they take. */
size_t
ds_sparse_upload(struct gpu *g, struct side *cs, struct side *qs)
{
	const struct ds_job *job = g->job;
	size_t n = job->n, nq = job->nq, fixed = 0;
	const struct csr *qc = job->sym ? job->c : job->q;
	size_t dim = job->c->cols;
	int32_t *dense_of = (int32_t *)xmallocarray(dim ? dim : 1, sizeof(int32_t));
	g->K = frequent_terms(job->c, dim, job->tune, dense_of);
	struct split sc, sq;
	split_csr(job->c, dense_of, dim, &sc);
	split_upload(&sc, n, &cs->sp);
	fixed += split_bytes(&sc, n);
	size_t pb;
	rare_postings(&sc, n, dim, g, &pb);
	fixed += pb;
	if (job->sym) {
		qs->sp = cs->sp;
	} else {
		split_csr(qc, dense_of, dim, &sq);
		split_upload(&sq, nq, &qs->sp);
		fixed += split_bytes(&sq, nq);
		split_free(&sq, free);
	}
	split_free(&sc, free);
	free(dense_of);
	vlog("gpu: %zu frequent terms by DGEMM, the rest of %zu by postings", g->K, dim);
	return fixed;
}

void
ds_sparse_free(struct gpu *g, struct side *cs, struct side *qs)
{
	if (qs->sp.fptr != cs->sp.fptr)
		split_free(&qs->sp, dfree);
	split_free(&cs->sp, dfree);
	cudaFree(g->cptr);
	cudaFree(g->cdoc);
	cudaFree(g->cval);
}

/* Rows [r0, r0+nr) of a split's frequent part into out (nr x K, zeroed by the caller). */
void
ds_densify(const struct split *sp, size_t r0, size_t nr, double *out, size_t K, cudaStream_t st)
{
	k_densify<<<grid_for(nr, 256), 256, 0, st>>>(sp->fptr, sp->fcol, sp->fval, r0, (int)nr, out, (int)K);
	CUDA_LAUNCH_CHECK();
}

/* Adds the rare terms of rows [r0, r0+nr) against columns [c0, c0+nc) into the tile. */
void
ds_scatter(struct gpu *g, const struct side *rows_side, size_t r0, size_t nr, size_t c0, size_t nc,
    int sym)
{
	int block = g->job->tune->scatter_block;
	k_scatter<<<grid_for(nr * 32, block), block, 0, g->sa>>>(rows_side->sp.rptr, rows_side->sp.rcol,
	    rows_side->sp.rval, g->cptr, g->cdoc, g->cval, r0, (int)nr, c0, c0 + nc, sym,
	    (double *)g->S, nc);
	CUDA_LAUNCH_CHECK();
}
