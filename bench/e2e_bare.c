/* e2e_bare.c: the floor under every CUDA process, for bench/e2e: CUDA's own start (the
 * driver and the primary context, which cudaFree(0) forces) and nothing else.
 *   e2e_bare        then _exit(0), skipping CUDA's teardown, as accelkit's programs end
 *                   a GPU run (cuda_finish): the floor they are measured against
 *   e2e_bare exit   then returns from main, so CUDA's teardown runs at exit
 *   e2e_bare detach then _exit(0) with the driver's teardown left to a child
 *                   (common/detach.h), as accelkit's programs end a GPU run since
 * Built by bench/e2e: cc -I$CUDA_HOME/include -Icommon e2e_bare.c common/detach.c
 * -L$CUDA_HOME/lib64 -lcudart_static -ldl -lrt -lpthread. Exit 1, with CUDA's message,
 * without a GPU. */
#include <cuda_runtime.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "detach.h"

int
main(int argc, char **argv)
{
	cudaError_t e = cudaFree(0);
	if (e != cudaSuccess) {
		fprintf(stderr, "e2e_bare: %s\n", cudaGetErrorString(e));
		return 1;
	}
	if (argc > 1 && strcmp(argv[1], "exit") == 0)
		return 0;
	if (argc > 1 && strcmp(argv[1], "detach") == 0)
		detach_teardown("/dev/nvidia");
	_exit(0);
}
