/* docsim_ranks.c: docsim divided among MPI ranks (common/ranks.h), on the CPU and GPU
 * paths alike.
 *
 * Every rank holds the whole prepared corpus (text: each rank's share of the rows,
 * weighed by the merged vocabulary, gathered to all: ds_ranks_csr). A rank computes a
 * block of query rows (all pairs: rows of the pair matrix), its ranks_share of them,
 * against the whole corpus, and its results go to rank 0 in rank order, which is row
 * order; rank 0 then writes them as one process would (ds_write).
 *
 * A block of all-pairs rows is run as queries (the block's rows of the corpus) against
 * the corpus, which both paths do, rather than as the triangle of the symmetric run:
 * a row's own document is in its results then, and is taken out here. Its top-k list is
 * one longer, so that the k best of the others are the list without the row itself
 * (or its first k, when the row's own score did not rank): the same lists, as ds_better
 * orders the candidates strictly. Its pairs are kept where the other index is higher,
 * each pair once, from the lower index, as the symmetric run lists them. */
#include <stdlib.h>
#include <string.h>

#include "cudadev.h"
#include "docs.h"
#include "docsim.h"
#include "err.h"
#include "ranks.h"
#include "timer.h"

/* All ranks' bytes, in rank order, on every rank; *n their count in elements of esz. */
static void *
allgather(const void *p, size_t n, size_t esz, size_t *total)
{
	size_t bytes;
	void *all = ranks_allgather(p, n * esz, &bytes, NULL);
	*total = bytes / esz;
	return all;
}

void
ds_ranks_csr(struct csr *m)
{
	if (ranks_size() == 1)
		return;
	uint64_t *len = xmallocarray(m->rows ? m->rows : 1, sizeof *len);
	for (size_t i = 0; i < m->rows; i++)
		len[i] = m->ptr[i + 1] - m->ptr[i];
	size_t rows, nnz, nval;
	uint64_t *all_len = allgather(len, m->rows, sizeof *len, &rows);
	uint32_t *idx = allgather(m->idx, csr_nnz(m), sizeof *idx, &nnz);
	float *val = allgather(m->val, csr_nnz(m), sizeof *val, &nval);
	free(len);
	size_t cols = m->cols;
	csr_free(m);
	m->rows = rows;
	m->cols = cols;
	m->ptr = xmallocarray(rows + 1, sizeof *m->ptr);
	m->ptr[0] = 0;
	for (size_t i = 0; i < rows; i++)
		m->ptr[i + 1] = m->ptr[i] + all_len[i];
	free(all_len);
	if (m->ptr[rows] != nnz || nval != nnz)
		die("the ranks' rows do not add up (%zu entries, %llu by their lengths)", nnz,
		    (unsigned long long)m->ptr[rows]);
	m->idx = idx;
	m->val = val;
}

void
ds_ranks_ids(struct docs *d)
{
	if (ranks_size() == 1 || d->id == NULL)
		return;
	size_t bytes = 0;
	for (size_t i = 0; i < d->n; i++)
		bytes += sizeof(uint32_t) + d->idlen[i];
	char *pack = xmalloc(MAX(bytes, 1)), *at = pack;
	for (size_t i = 0; i < d->n; i++) {
		uint32_t l = (uint32_t)d->idlen[i];
		memcpy(at, &l, sizeof l);
		memcpy(at + sizeof l, d->id[i], l);
		at += sizeof l + l;
	}
	size_t total;
	char *all = ranks_gather(pack, bytes, &total);
	free(pack);
	if (ranks_rank() != 0)
		return;	/* ids are for the writer */
	size_t n = 0;
	for (size_t off = 0; off < total; n++) {
		uint32_t l;
		memcpy(&l, all + off, sizeof l);
		off += sizeof l + l;
	}
	for (size_t i = 0; i < d->nidbuf; i++)
		free(d->idbuf[i]);
	d->id = xreallocarray(d->id, MAX(n, 1), sizeof *d->id);
	d->idlen = xreallocarray(d->idlen, MAX(n, 1), sizeof *d->idlen);
	size_t off = 0;
	for (size_t i = 0; i < n; i++) {
		uint32_t l;
		memcpy(&l, all + off, sizeof l);
		d->id[i] = all + off + sizeof l;
		d->idlen[i] = l;
		off += sizeof l + l;
	}
	d->idbuf = xreallocarray(d->idbuf, 1, sizeof *d->idbuf);
	d->idbuf[0] = all;
	d->nidbuf = 1;
}

/* Rows [first, first + count) of m, as a matrix of their own. */
static void
csr_rows(const struct csr *m, size_t first, size_t count, struct csr *out)
{
	uint64_t a = m->ptr[first], nnz = m->ptr[first + count] - a;
	out->rows = count;
	out->cols = m->cols;
	out->ptr = xmallocarray(count + 1, sizeof *out->ptr);
	for (size_t i = 0; i <= count; i++)
		out->ptr[i] = m->ptr[first + i] - a;
	out->idx = xmallocarray(nnz ? nnz : 1, sizeof *out->idx);
	out->val = xmallocarray(nnz ? nnz : 1, sizeof *out->val);
	if (nnz) {
		memcpy(out->idx, m->idx + a, nnz * sizeof *out->idx);
		memcpy(out->val, m->val + a, nnz * sizeof *out->val);
	}
}

/* The block's results (b, rows first..) as the whole job's rows: global indexes, each
 * row's own document taken out of all pairs; then gathered into job on rank 0. */
static void
gather_results(struct ds_job *job, struct ds_job *b, size_t first)
{
	size_t total, count = b->nq, k = job->k;
	if (job->mode == DS_TOPK) {
		float *s = xmallocarray(MAX(count * k, 1), sizeof *s);
		int32_t *id = xmallocarray(MAX(count * k, 1), sizeof *id);
		for (size_t r = 0; r < count; r++) {
			const float *bs = b->top_s + r * b->k;
			const int32_t *bi = b->top_i + r * b->k;
			size_t t = 0;
			for (size_t u = 0; u < b->k && t < k; u++) {
				if (job->sym && bi[u] == (int32_t)(first + r))
					continue;
				s[r * k + t] = bs[u];
				id[r * k + t++] = bi[u];
			}
		}
		free(job->top_s);
		free(job->top_i);
		job->top_s = ranks_gather(s, count * k * sizeof *s, &total);
		job->top_i = ranks_gather(id, count * k * sizeof *id, &total);
		free(s);
		free(id);
	} else if (job->mode == DS_PAIRS) {
		size_t m = 0;
		for (size_t i = 0; i < b->npairs; i++) {
			struct ds_pair p = b->pairs[i];
			p.a += (uint32_t)first;
			if (!job->sym || p.b > p.a)
				b->pairs[m++] = p;
		}
		free(job->pairs);
		job->pairs = ranks_gather(b->pairs, m * sizeof *b->pairs, &total);
		job->npairs = total / sizeof *job->pairs;
	} else {
		free(job->mat);
		job->mat = ranks_gather(b->mat, count * job->n * sizeof *b->mat, &total);
	}
}

/* All pairs (top-k or pairs) under mpirun: this rank's units of the pair matrix
 * (ds_split_share), then every rank's lists merged, or pairs gathered, on rank 0. */
static void
ranks_all_pairs(struct ds_job *job, const struct cuda_dev *dev)
{
	if (job->mode == DS_TOPK && job->top_s == NULL) {	/* ranks but 0 have none yet */
		size_t cells = mul_size(job->nq, job->k, "top-k lists");
		job->top_s = xmallocarray(MAX(cells, 1), sizeof *job->top_s);
		job->top_i = xmallocarray(MAX(cells, 1), sizeof *job->top_i);
	}
	ds_split_share(job, dev, cuda_workers(dev), ranks_rank(), ranks_size());
	double t = now_sec();
	size_t total;
	if (job->mode == DS_TOPK) {
		size_t cells = job->nq * job->k;
		float *s = ranks_gather(job->top_s, cells * sizeof *s, &total);
		int32_t *id = ranks_gather(job->top_i, cells * sizeof *id, &total);
		if (ranks_rank() == 0) {
			int n = ranks_size();
			const float **ls = xmallocarray((size_t)n, sizeof *ls);
			const int32_t **li = xmallocarray((size_t)n, sizeof *li);
			for (int r = 0; r < n; r++) {
				ls[r] = s + (size_t)r * cells;
				li[r] = id + (size_t)r * cells;
			}
			ds_merge_lists(job, ls, li, n);
			free(ls);
			free(li);
		}
		free(s);
		free(id);
	} else {
		void *all = ranks_gather(job->pairs, job->npairs * sizeof *job->pairs, &total);
		free(job->pairs);
		job->pairs = all;
		job->npairs = all != NULL ? total / sizeof *job->pairs : 0;
	}
	phase_add("gather", now_sec() - t);
}

void
ds_ranks_run(struct ds_job *job, const struct cuda_dev *dev)
{
	if (job->sym && job->mode != DS_MATRIX) {
		ranks_all_pairs(job, dev);
		return;
	}
	uint64_t first, count;
	ranks_share(job->nq, &first, &count);
	vlog("rank %d of %d: %s %llu to %llu of %zu, against %zu documents", ranks_rank(),
	    ranks_size(), job->sym ? "rows" : "queries", (unsigned long long)first + 1,
	    (unsigned long long)(first + count), job->nq, job->n);
	struct ds_job b = *job;
	struct csr q;
	memset(&q, 0, sizeof q);
	b.sym = 0;
	b.nq = count;
	b.top_s = NULL;
	b.top_i = NULL;
	b.pairs = NULL;
	b.npairs = 0;
	b.mat = NULL;
	if (job->sparse) {
		csr_rows(job->sym ? job->c : job->q, first, count, &q);
		b.q = &q;
	} else {
		b.qd = (job->sym ? job->cd : job->qd) + first * job->dim;
	}
	if (job->mode == DS_TOPK) {
		b.k = job->sym ? job->k + 1 : job->k;	/* the row itself, taken out after */
		b.top_s = xmallocarray(MAX(count * b.k, 1), sizeof *b.top_s);
		b.top_i = xmallocarray(MAX(count * b.k, 1), sizeof *b.top_i);
	} else if (job->mode == DS_MATRIX) {
		b.mat = xmallocarray(MAX(mul_size(count, job->n, "similarity matrix"), 1),
		    sizeof *b.mat);
	}
	if (count > 0) {
		if (dev->gpu) {
#ifdef ACCELKIT_CUDA
			ds_gpu_run(&b, dev);
#endif
		} else {
			double t = now_sec();
			ds_cpu_run(&b);
			phase_add(PH_COMPUTE, now_sec() - t);
		}
	}
	double t = now_sec();
	gather_results(job, &b, first);
	phase_add("gather", now_sec() - t);
	free(b.top_s);
	free(b.top_i);
	free(b.pairs);
	free(b.mat);
	if (job->sparse)
		csr_free(&q);
}
