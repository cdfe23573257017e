/* gmmscore_tc.h: gmmscore's top-N from TF32 products on the tensor cores, the
 * candidates rescored exactly (kernels/gmmscore_tc.cu), for gmmscore.cu. CUDA C++ only. */
#ifndef GMMSCORE_TC_H
#define GMMSCORE_TC_H

#include <cuda_runtime.h>
#include <stdint.h>

#include "gmmscore.h"

/* The fast path's limits: --top at most TC_TOPMAX, models of at most 32 Gaussians
 * (one warp's 32 slots), scored over at most 48 dimensions (2 x 48 = 96 products a
 * Gaussian, 12 steps of mma's k = 8). */
#define TC_TOPMAX 8
#define TC_MAXCOMP 32
#define TC_MAXDP 48

struct gmm_tc;

/* Whether the fast path takes this run: top-N (1 <= top <= TC_TOPMAX) of models within
 * the limits, none split into parts (npart == nmodels), and $ACCELKIT_GMMSCORE_TC not
 * 0 (1 or unset lets it; exit 1 on another value). */
int gmm_tc_wanted(const struct gmm_params *p, size_t top, size_t npart);

/* Device bytes: the models' (once) and a frame's (for each frame of a chunk, beside
 * the float32 path's part scores, which the fast path reuses for its fast scores). */
size_t gmm_tc_model_bytes(const struct gmm_params *p);
size_t gmm_tc_frame_bytes(const struct gmm_params *p);

/* Packs and uploads the fast path's parameters; chunk frames a call at most. */
struct gmm_tc *gmm_tc_open(const struct gmm_params *p, enum gmm_mode mode, size_t top,
    size_t chunk);

/* The top-N of n frames (X: n x dp floats on the device, as score_kernel reads them)
 * into idx and val (n x top, device), on stream st. P, G, part_slot, part_k, nslots:
 * the float32 path's layout (gmm_layout), whose arithmetic rescores the candidates;
 * F: a device buffer of chunk x nmodels floats, for the fast scores less their bounds. */
void gmm_tc_run(struct gmm_tc *t, const float4 *X, int n, const float4 *P, const float *G,
    const int *part_slot, const int *part_k, int nslots, float *F, uint32_t *idx, float *val,
    cudaStream_t st);

/* -v: the candidates rescored and the frames scored whole, over every call whose
 * work the caller has waited for (no CUDA call: safe from any thread). */
void gmm_tc_report(const struct gmm_tc *t);

void gmm_tc_close(struct gmm_tc *t);

#endif
