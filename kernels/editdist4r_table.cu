/* editdist4r_table.cu: the Four-Russians table of editdist4r's GPU path, built on the
 * GPU once a block size is first used. Its own file: both kernel families read it. */
#include <cuda_runtime.h>
#include <stdint.h>

#include "cuda_check.h"
#include "editdist4r.h"
#include "editdist4r_dev.cuh"

namespace {

__global__ void
fr_build(uint16_t *tab, int t, uint32_t len)
{
	uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
	if (k >= len)
		return;
	uint32_t P = fr_pow3(t), tt = (uint32_t)(t * t), hv = k >> tt;
	tab[k] = (uint16_t)fr_cells(hv / P, hv % P, k & ((1u << tt) - 1), t, t);
}

} /* namespace */

const uint16_t *
gpu_table(struct ed_gpu *g, int t)
{
	if (g->tab[t] == NULL) {
		uint32_t len = (uint32_t)fr_table_len(t);
		CUDA_CHECK(cudaMalloc(&g->tab[t], len * sizeof(uint16_t)));
		fr_build<<<CEIL_DIV(len, 256u), 256, 0, g->st>>>(g->tab[t], t, len);
		CUDA_LAUNCH_CHECK();
	}
	return g->tab[t];
}
