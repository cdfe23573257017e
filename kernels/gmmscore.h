/* gmmscore.h: what the CPU and CUDA paths of gmmscore share.
 *
 * A component c of a diagonal GMM scores a frame x as
 *     log N(x; mu_c, var_c) + log w_c = g_c - sum_d (x_d s_cd - mu_cd s_cd)^2
 * with s_cd = sqrt(ivar_cd / 2) and g_c = log w_c - (D log 2pi - sum_d log ivar_cd) / 2,
 * recomputed from the weights and variances over the D dimensions used, as Kaldi
 * recomputes its gconsts. Each dimension costs two fused multiply-adds in float32,
 * t = x s + (-mu s) and acc = t t + acc, in the same order on both paths, so that the
 * component scores of the two paths are the same bits. A model's score is the
 * log-sum-exp of its component scores (--mode sum, shifted by their maximum) or their
 * maximum (--mode max). */
#ifndef GMMSCORE_H
#define GMMSCORE_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "gmm.h"
#include "hostdev.h"
#include "tune.h"

#ifdef __cplusplus
extern "C" {
#endif

enum gmm_mode { GMM_SUM = 0, GMM_MAX = 1 };

/* Feature rows and parameters are padded to a multiple of this many dimensions
 * (padding parameters are 0, so padding adds exactly 0 to every score). */
#define GMM_DVEC 4

/* One term of a component's quadratic form. */
static inline HOSTDEV float
gmm_term(float x, float s, float na, float acc)
{
	float t = fmaf(x, s, na);
	return fmaf(t, t, acc);
}

/* The log-sum-exp of component scores from their maximum m and sum of exp(score - m). */
static inline HOSTDEV float
gmm_lse_finish(float m, float sum)
{
	return m == -INFINITY ? -INFINITY : m + logf(sum);
}

/* A key that orders (score, model) as the output does: higher score first, then the
 * lower model index; the larger key ranks first. Scores are never NaN. */
static inline HOSTDEV uint64_t
gmm_key(float score, uint32_t model)
{
	uint32_t u;
	memcpy(&u, &score, sizeof u);
	u = (u & 0x80000000u) ? ~u : (u | 0x80000000u);
	return (uint64_t)u << 32 | (uint32_t)(0xffffffffu - model);
}

static inline HOSTDEV uint32_t
gmm_key_model(uint64_t key)
{
	return 0xffffffffu - (uint32_t)key;
}

/* ---- the scorers' parameters (kernels/gmmscore_pack.c) ---- */

/* The scoring parameters over the first `dims` dimensions (dims <= m->dim), padded
 * to dp = dims rounded up to GMM_DVEC: s and na (= -mu s) ncomp x dp, g ncomp. */
struct gmm_params {
	size_t nmodels, ncomp;
	int dims, dp;
	const size_t *off;	/* the models' component offsets */
	size_t maxcomp;		/* the largest model's component count */
	float *s, *na, *g;
};
void gmm_params_make(const struct gmm_models *m, int dims, struct gmm_params *p);
void gmm_params_free(struct gmm_params *p);

/* The GPU's layout of the parameters. Components go to "slots", `slots` to a block of
 * the score kernel, a model's components in consecutive slots; a model that does not
 * fit in what is left of a block starts the next block, and a model larger than a
 * block is cut into parts of at most `slots` (whose scores are combined later).
 * P interleaves the slots by groups of GMM_DVEC dimensions, as the paper does:
 * for group k and slot q, P[((k * nslots + q) * 2 + 0) * 4 ..] holds s, then 4 of
 * -mu s; unused slots are 0. */
struct gmm_layout {
	size_t slots;		/* a block's */
	size_t npart, nblocks, nslots;
	int *part_slot;		/* npart: first slot */
	int *part_k;		/* npart: components */
	int *blk_part0;		/* nblocks + 1: first part of each block */
	int *model_part0;	/* nmodels + 1: first part of each model */
	float *P, *G;		/* nslots x dp x 2, nslots */
};
void gmm_layout_make(const struct gmm_params *p, size_t slots, struct gmm_layout *l);
void gmm_layout_free(struct gmm_layout *l);

/* The tensor-core path's parameters (kernels/gmmscore_tc.cu; made by gmmscore_pack.c).
 * With a centre ctr (the means' mean, per dimension), y = x - ctr and na' = na + ctr s,
 * a Gaussian's score g - sum_d (x_d s_d + na_d)^2 is -(X' . P' + cst) where
 * X' = [y^2, y] (K = 2 dp values), P' = [s^2, 2 s na'] and cst = sum_d na'^2 - g.
 * pf holds P' rounded to TF32 as mma.m16n8k8's B fragments, a model a warp's 32 slots:
 * pf[(((m * ks + s) * 4 + j) * 32 + lane) * 2 + h] = P'[k = 8 s + lane % 4 + 4 h] of
 * slot 8 j + lane / 4, ks = K / 8 steps. cst is nmodels x 32, +inf where the slot holds
 * no Gaussian or one of weight 0 (its fast score is then -inf). sig, a scale a
 * dimension (1 / sqrt of the mean s'^2 over the live Gaussians, or 1), weighs the
 * Cauchy-Schwarz step of the bound so that it pairs like with like; mb, a model's four
 * bound constants over its live slots, each rounded up: the largest weighted norms of
 * the rounded P''s two halves, sqrt(sum_d (s'^2 sig_d^2)^2) and sqrt(sum_d (w' sig_d)^2),
 * and the largest |cst| and |g| (gmm_tc_bound). */
struct gmm_tc_params {
	int ks;
	float *pf, *cst, *mb, *ctr, *sig;	/* mb: nmodels x 4; ctr, sig: dp */
};
void gmm_tc_pack(const struct gmm_params *p, struct gmm_tc_params *t);

/* The most the float32 path's score of any Gaussian of a model can differ from its fast
 * score -(acc + cst) on the tensor-core path (the derivation is in gmmscore_tc.cu's
 * opening comment): y2 and y1, a frame's weighted norms of X''s two halves,
 * sqrt(sum_d (y'^2 / sig_d^2)^2) and sqrt(sum_d (y' / sig_d)^2), rounded up; S, W, C, G
 * the model's mb; dp the padded dimensions. */
static inline HOSTDEV float
gmm_tc_bound(float y2, float y1, float S, float W, float C, float G, int dp)
{
	const float rel = (0x1p-10f + 0x1p-21f + (float)(2 * dp) * 0x1p-22f) / (1.0f - 0x1p-9f);
	const float a = (y2 * S + y1 * W) * (1.0f + 0x1p-12f);	/* >= sum |X'||P'| */
	const float q = a * (1.0f + 0x1p-9f) + C;		/* >= |acc + cst| */
	const float fb = a * rel + 0x1p-23f * (q + C);
	return fb + (float)(dp + 4) * 0x1p-23f * (2.0f * G + q + fb);
}

/* A model's bound from its fast score f and its Gaussians' bound b: the two
 * log-sum-exps' own rounding added (__expf, logf; a sum of at least 1). */
static inline HOSTDEV float
gmm_tc_model_bound(float f, float b)
{
	return b + 0x1p-15f + 0x1p-21f * (fabsf(f) + b);
}
void gmm_tc_params_free(struct gmm_tc_params *t);

/* ---- tuning (the table: kernels/gmmscore_tune.h) ---- */

/* A device class's parameters. A path reads only its own fields: the GPU rows leave
 * the CPU's 0, the CPU row the GPU's. */
struct gmmscore_tune {
	const char *device;	/* tune_pick's pattern (common/tune.h) */
	int cpl;		/* GPU: Gaussians a thread, naming the score kernel compiled for
				 * it: 2 (x 64 frames) or 4 (x 32 frames) */
	int nsub;		/* GPU: tiles of frames a block, 1 to 16 */
	int chunk;		/* frames a chunk unless --chunk says (fewer where a chunk's
				 * scores would take over 64 MB of host memory) */
	int cpu_fblk;		/* CPU: frames a task, a multiple of 16 */
	const char *measured;	/* where, when and what measurement chose the row */
	struct cost_model cost;	/* GPU rows: what auto weighs (tune.h), in frames x
				 * Gaussians x dimensions scored */
};

/* The score kernel's threads a block (gmmscore.cu's launch bounds): a block holds that
 * many times cpl Gaussian slots. */
#define GMM_GPU_THREADS 128

/* The GPU tile shape, cpl Gaussians a thread and nsub tiles a block: the tuning row's,
 * unless $GMMSCORE_TILE=CPL,NSUB says (for tuning); exit 1 on values the kernel was not
 * compiled for. */
void gmm_tile_pick(const struct gmmscore_tune *t, int *cpl, int *nsub);

/* ---- CPU path (kernels/gmmscore_cpu.c) ---- */

/* Scores n frames (rows of x, dp floats each) against every model:
 * out[f * nmodels + m]. OpenMP over models and blocks of fblk frames. */
void gmm_cpu_score(const struct gmm_params *p, enum gmm_mode mode, size_t fblk,
    const float *x, size_t n, float *out);
/* The top k models of each of n score rows (width nmodels), best first:
 * idx[f * k + j], val[f * k + j]. */
void gmm_top(const float *scores, size_t n, size_t nmodels, size_t k, uint32_t *idx,
    float *val);

/* ---- CUDA path (kernels/gmmscore.cu) ---- */

/* The largest top the GPU selects itself; beyond it, every score comes back. */
#define GMM_GPU_TOPMAX 32

#ifdef ACCELKIT_CUDA
struct gmm_gpu;
/* Uploads the parameters to device dev and sizes the work: at most `chunk` frames a
 * call, less where device memory (max_mem bytes, 0 = most of what is free) needs it.
 * top = k > 0: submit returns the top k models a frame; top = 0: every score. The
 * kernel's tile shape is gmm_tile_pick's. The parameters' layout is `pre` when it was
 * made for that shape (made while CUDA started), else made here. */
struct gmm_gpu *gmm_gpu_init(const struct gmm_params *p, enum gmm_mode mode, size_t top,
    size_t chunk, size_t max_mem, int dev, const struct gmmscore_tune *tune,
    const struct gmm_layout *pre);
size_t gmm_gpu_chunk(const struct gmm_gpu *g);
/* Queues the scoring of n frames (rows of dp floats) from x; the results land in idx
 * and val (n x top) or in val (n x nmodels, top = 0). slot (0..GMM_GPU_SLOTS-1) names
 * the buffers until gmm_gpu_wait(slot) returns. Calls are ordered on one stream. The
 * copies overlap the work, at the bus's speed, only where x, idx and val are pinned
 * (cuda_pin). */
#define GMM_GPU_SLOTS 4
void gmm_gpu_submit(struct gmm_gpu *g, int slot, const float *x, size_t n, uint32_t *idx,
    float *val);
void gmm_gpu_wait(struct gmm_gpu *g, int slot);
/* -v: what the tensor-core path did, over the chunks waited for (no CUDA call). */
void gmm_gpu_report(const struct gmm_gpu *g);
void gmm_gpu_free(struct gmm_gpu *g);
#endif

#ifdef __cplusplus
}
#endif
#endif
