/* gmmscore_cpu.c: the native CPU path of gmmscore (OpenMP threads, SIMD over frames).
 *
 * A task is one model and a block of fblk frames (the tuning table's cpu_fblk), so
 * that the model's parameters stay in L1 while the frames stream from L2. Within it,
 * frames go SIMD-wide in groups of FB (transposed to dimension-major), CB components at
 * a time so that each feature load feeds CB independent chains of fused multiply-adds.
 * FB and CB size the register arrays, so they are compiled in, not tuned at run time. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "gmmscore.h"

#define FB 16		/* frames a SIMD group */
#define CB 4		/* components a pass */
/* Below this many multiply-adds (frames x Gaussians x dimensions; frames x models for
 * the top lists) one thread does the work: it is a fraction of a millisecond, and a
 * team of threads costs more to wake and join, milliseconds on a loaded host
 * (testdata's 10 frames: 0.02 ms on one thread, 3-60 ms on two of a busy 2-core
 * machine; on the H200 host's 16 cores the demo took 14-31 ms whole). */
#define GMM_CPU_SERIAL_WORK 1e6

/* exp(x) for x <= 0 in float32, within 1e-7 relative (Cephes' expf polynomial),
 * written so that loops over it vectorise: no calls, no branches (rounding by the
 * 1.5 * 2^23 trick, the power of two built from the rounded bits). Below -87 it
 * returns exp(-87), which is as good as 0 next to the 1 that the maximum adds. */
static inline float
exp_nonpos(float x)
{
	float z = x > -87.0f ? x : -87.0f;
	float t = fmaf(z, 1.44269504088896341f, 12582912.0f);
	float n = t - 12582912.0f;
	float r = fmaf(n, -0.693359375f, z);
	r = fmaf(n, 2.12194440e-4f, r);
	float p = 1.9875691500e-4f;
	p = fmaf(p, r, 1.3981999507e-3f);
	p = fmaf(p, r, 8.3334519073e-3f);
	p = fmaf(p, r, 4.1665795894e-2f);
	p = fmaf(p, r, 1.6666665459e-1f);
	p = fmaf(p, r, 5.0000001201e-1f);
	p = fmaf(p, r * r, r) + 1.0f;
	int32_t i;
	memcpy(&i, &t, sizeof i);
	i = (i - 0x4b400000 + 127) * (1 << 23);
	float scale;
	memcpy(&scale, &i, sizeof scale);
	return p * scale;
}

/* Component scores of one SIMD group: sc[c * FB + f] for the k components at s, na, g. */
static void
group_scores(const float *restrict s, const float *restrict na, const float *restrict g,
    size_t k, int dp, const float *restrict xt, float *restrict sc)
{
	size_t c = 0;
	for (; c + CB <= k; c += CB) {
		float acc[CB][FB];
		for (int j = 0; j < CB; j++)
			for (int f = 0; f < FB; f++)
				acc[j][f] = 0;
		for (int d = 0; d < dp; d++) {
			const float *xr = xt + (size_t)d * FB;
			#pragma GCC unroll 4
			for (int j = 0; j < CB; j++) {
				float sv = s[(c + j) * dp + d], nv = na[(c + j) * dp + d];
				#pragma omp simd
				for (int f = 0; f < FB; f++)
					acc[j][f] = gmm_term(xr[f], sv, nv, acc[j][f]);
			}
		}
		for (int j = 0; j < CB; j++)
			for (int f = 0; f < FB; f++)
				sc[(c + j) * FB + f] = g[c + j] - acc[j][f];
	}
	for (; c < k; c++) {
		float acc[FB];
		for (int f = 0; f < FB; f++)
			acc[f] = 0;
		for (int d = 0; d < dp; d++) {
			float sv = s[c * dp + d], nv = na[c * dp + d];
			const float *xr = xt + (size_t)d * FB;
			#pragma omp simd
			for (int f = 0; f < FB; f++)
				acc[f] = gmm_term(xr[f], sv, nv, acc[f]);
		}
		for (int f = 0; f < FB; f++)
			sc[c * FB + f] = g[c] - acc[f];
	}
}

/* The model score of each frame of a group from its k component scores. */
static void
group_reduce(const float *restrict sc, size_t k, enum gmm_mode mode, float *restrict res)
{
	float m[FB], sum[FB];
	for (int f = 0; f < FB; f++)
		m[f] = sc[f];
	for (size_t c = 1; c < k; c++)
		#pragma omp simd
		for (int f = 0; f < FB; f++)
			m[f] = sc[c * FB + f] > m[f] ? sc[c * FB + f] : m[f];
	if (mode == GMM_MAX) {
		memcpy(res, m, sizeof m);
		return;
	}
	for (int f = 0; f < FB; f++)
		sum[f] = 0;
	for (size_t c = 0; c < k; c++)
		#pragma omp simd
		for (int f = 0; f < FB; f++)
			sum[f] += exp_nonpos(sc[c * FB + f] - m[f]);
	for (int f = 0; f < FB; f++)
		res[f] = gmm_lse_finish(m[f], sum[f]);
}

void
gmm_cpu_score(const struct gmm_params *p, enum gmm_mode mode, size_t fblk, const float *x,
    size_t n, float *out)
{
	if (fblk == 0 || fblk % FB != 0)
		die("tuning table: %zu frames a CPU task is not a multiple of %d", fblk, FB);
	const size_t nm = p->nmodels, dp = (size_t)p->dp, nblk = CEIL_DIV(n, fblk);
	const size_t ngrp = CEIL_DIV(n, FB);
	/* The frames once, in SIMD groups, dimension-major: xt[(g * dp + d) * FB + f]. */
	float *xt = xmallocarray(mul_size(ngrp * FB, dp, "chunk"), sizeof *xt);

	#pragma omp parallel if ((double)n * (double)p->ncomp * (double)dp > GMM_CPU_SERIAL_WORK)
	{
		#pragma omp for schedule(static)
		for (size_t g = 0; g < ngrp; g++)
			for (size_t d = 0; d < dp; d++)
				for (size_t f = 0; f < FB; f++)
					xt[(g * dp + d) * FB + f] = g * FB + f < n ? x[(g * FB + f) * dp + d] : 0;

		float *sc = xmallocarray(p->maxcomp * FB, sizeof *sc);
		float res[FB];
		#pragma omp for collapse(2) schedule(dynamic, 2)
		for (size_t m = 0; m < nm; m++) {
			for (size_t b = 0; b < nblk; b++) {
				size_t c0 = p->off[m], k = p->off[m + 1] - c0;
				size_t f1 = MIN(n, (b + 1) * fblk);
				for (size_t f0 = b * fblk; f0 < f1; f0 += FB) {
					size_t nf = MIN((size_t)FB, f1 - f0);
					group_scores(p->s + c0 * dp, p->na + c0 * dp, p->g + c0, k,
					    (int)dp, xt + f0 * dp, sc);
					group_reduce(sc, k, mode, res);
					for (size_t f = 0; f < nf; f++)
						out[(f0 + f) * nm + m] = res[f];
				}
			}
		}
		free(sc);
	}
	free(xt);
}

/* Sorting keys in descending order. */
static int
key_desc(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? 1 : x > y ? -1 : 0;
}

void
gmm_top(const float *scores, size_t n, size_t nmodels, size_t k, uint32_t *idx, float *val)
{
	k = MIN(k, nmodels);
	#pragma omp parallel if ((double)n * (double)nmodels > GMM_CPU_SERIAL_WORK)
	{
		uint64_t *keys = xmallocarray(k <= 64 ? k : nmodels, sizeof *keys);

		#pragma omp for schedule(static)
		for (size_t f = 0; f < n; f++) {
			const float *row = scores + f * nmodels;
			size_t have = 0;
			if (k <= 64) {
				/* Insertion into a short sorted list. */
				for (size_t m = 0; m < nmodels; m++) {
					uint64_t key = gmm_key(row[m], (uint32_t)m);
					if (have == k && key <= keys[k - 1])
						continue;
					size_t i = have < k ? have++ : k - 1;
					while (i > 0 && keys[i - 1] < key) {
						keys[i] = keys[i - 1];
						i--;
					}
					keys[i] = key;
				}
			} else {
				for (size_t m = 0; m < nmodels; m++)
					keys[m] = gmm_key(row[m], (uint32_t)m);
				qsort(keys, nmodels, sizeof *keys, key_desc);
				have = k;
			}
			for (size_t j = 0; j < have; j++) {
				uint32_t m = gmm_key_model(keys[j]);
				idx[f * k + j] = m;
				val[f * k + j] = row[m];
			}
		}
		free(keys);
	}
}
