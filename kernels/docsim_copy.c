/* docsim_copy.c: host copies on the -j threads, for the GPU path's uploads: one core
 * copies into pinned memory at about the speed of a pageable upload (~8 GB/s), so the
 * pinned ring would gain nothing if one core filled it. */
#include <string.h>

#include "docsim.h"
#include "err.h"

#define PIECE ((size_t)512 << 10)	/* bytes a thread copies at a time: a ring buffer is 16 */

void
ds_host_copy(void *dst, const void *src, size_t n)
{
	size_t pieces = CEIL_DIV(n, PIECE);
	#pragma omp parallel for schedule(static) if (pieces > 1)
	for (size_t i = 0; i < pieces; i++)
		memcpy((char *)dst + i * PIECE, (const char *)src + i * PIECE, MIN(PIECE, n - i * PIECE));
}
