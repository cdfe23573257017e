/* docsim_weight.c: the weighting of docsim's vectors, after scikit-learn: the term
 * counts of text (common/tokenize_vocab.c) as TfidfVectorizer weighs them, and given
 * vectors (libsvm, MatrixMarket, dense) as TfidfTransformer and normalize do; then L2
 * normalisation. The formulas, apart from the readers that produce what they weigh.
 *
 * The two keep their own rounding: text weights stay float64 until normalised, given
 * vectors are rounded to float32 once weighed and again once normalised. */
#include <math.h>
#include <stdlib.h>

#include "docsim.h"
#include "err.h"
#include "tokenize.h"

/* Fewer rows are weighed on one thread: waking the others costs more. */
#define PAR_ROWS 1024

/* Smoothed idf, as scikit-learn's: ln((1 + n) / (1 + df)) + 1. */
static double
idf_of(size_t ndocs, uint64_t df)
{
	return log((1.0 + (double)ndocs) / (1.0 + (double)df)) + 1.0;
}

double *
ds_text_idf(const uint32_t *df, size_t nterms, size_t ndocs)
{
	double *idf = xmallocarray(nterms ? nterms : 1, sizeof *idf);
	for (size_t t = 0; t < nterms; t++)
		idf[t] = idf_of(ndocs, df[t]);
	return idf;
}

void
ds_weigh_counts(struct tok_counts *tc, const double *idf, enum ds_weight weight, int sublinear,
    struct csr *out)
{
	size_t rows = tc->rows;
	uint64_t nnz = tc->ptr[rows];
	out->rows = rows;
	out->cols = tc->cols;
	out->ptr = tc->ptr;
	out->idx = tc->idx;
	out->val = xmallocarray(nnz ? nnz : 1, sizeof *out->val);

	#pragma omp parallel if (rows > PAR_ROWS)
	{
		size_t cap = 64;
		double *w = xmallocarray(cap, sizeof *w);
		#pragma omp for schedule(dynamic, 256)
		for (size_t d = 0; d < rows; d++) {
			uint64_t p = tc->ptr[d];
			size_t m = (size_t)(tc->ptr[d + 1] - p);
			if (m > cap) {
				cap = 2 * m;
				w = xreallocarray(w, cap, sizeof *w);
			}
			double ss = 0;
			for (size_t i = 0; i < m; i++) {
				double tf = tc->cnt[p + i];
				if (weight == DS_BINARY)
					tf = 1;
				else if (sublinear)
					tf = 1 + log(tf);
				w[i] = weight == DS_TFIDF ? tf * idf[tc->idx[p + i]] : tf;
				ss += w[i] * w[i];
			}
			double scale = weight == DS_NONE_W || ss == 0 ? 1 : 1 / sqrt(ss);
			for (size_t i = 0; i < m; i++)
				out->val[p + i] = (float)(w[i] * scale);
		}
		free(w);
	}
	free(tc->cnt);
	tc->ptr = NULL;
	tc->idx = NULL;
	tc->cnt = NULL;
}

double *
ds_vector_idf(const struct csr *sp, const float *x, size_t rows, size_t dim)
{
	uint64_t *df = xcalloc(dim ? dim : 1, sizeof *df);
	if (sp != NULL) {
		for (uint64_t e = 0; e < csr_nnz(sp); e++)
			df[sp->idx[e]] += sp->val[e] != 0;
	} else {
		for (size_t r = 0; r < rows; r++)
			for (size_t j = 0; j < dim; j++)
				df[j] += x[r * dim + j] != 0;
	}
	double *idf = xmallocarray(dim ? dim : 1, sizeof *idf);
	for (size_t j = 0; j < dim; j++)
		idf[j] = idf_of(rows, df[j]);
	free(df);
	return idf;
}

static void
weigh_row(float *v, const uint32_t *idx, size_t m, enum ds_weight weight, const double *idf)
{
	double ss = 0;
	for (size_t i = 0; i < m; i++) {
		double x = v[i];
		if (weight == DS_BINARY)
			x = x != 0;
		if (idf != NULL)
			x *= idf[idx ? idx[i] : i];
		v[i] = (float)x;
		ss += x * x;
	}
	if (weight == DS_NONE_W || ss == 0)
		return;
	double scale = 1 / sqrt(ss);
	for (size_t i = 0; i < m; i++)
		v[i] = (float)(v[i] * scale);
}

void
ds_weigh_csr(struct csr *m, size_t dim, enum ds_weight weight, const double *idf)
{
	if (m->cols > dim) {
		/* columns the corpus lacks are unknown terms: drop them */
		uint64_t w = 0;
		for (size_t i = 0; i < m->rows; i++) {
			uint64_t a = m->ptr[i], b = m->ptr[i + 1];
			m->ptr[i] = w;
			for (uint64_t e = a; e < b; e++)
				if (m->idx[e] < dim) {
					m->idx[w] = m->idx[e];
					m->val[w++] = m->val[e];
				}
		}
		m->ptr[m->rows] = w;
		m->cols = dim;
	}
	#pragma omp parallel for schedule(dynamic, 256) if (m->rows > PAR_ROWS)
	for (size_t i = 0; i < m->rows; i++)
		weigh_row(m->val + m->ptr[i], m->idx + m->ptr[i], (size_t)(m->ptr[i + 1] - m->ptr[i]),
		    weight, idf);
}

void
ds_weigh_dense(float *x, size_t rows, size_t cols, enum ds_weight weight, const double *idf)
{
	#pragma omp parallel for schedule(static) if (rows * cols > PAR_ROWS * 64)
	for (size_t i = 0; i < rows; i++)
		weigh_row(x + i * cols, NULL, cols, weight, idf);
}
