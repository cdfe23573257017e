/* ranks_mpi.h: the interface between ranks.c and the MPI plugin (mpi/ranks_mpi.c, built
 * as BUILD/lib/accelkit/accelkit-mpi.so and linked with the MPI library). ranks.c loads
 * the plugin only under a launcher (mpirun, srun), so a plain run never loads MPI's
 * libraries (about 1 ms of dynamic linking a process with Open MPI's). Each call returns
 * NULL, or on failure "MPI_Call: MPI's message" (a static buffer). Sizes are in bytes or
 * elements of any size: the plugin cuts them into MPI's int counts. */
#ifndef ACCELKIT_RANKS_MPI_H
#define ACCELKIT_RANKS_MPI_H

#include <stddef.h>
#include <stdint.h>

enum { RANKS_SUM, RANKS_MIN, RANKS_MAX };

struct ranks_mpi {
	/* MPI_Init; the world's size and rank, and this host's (ranks sharing memory) */
	const char *(*init)(int *argc, char ***argv, int *size, int *rank, int *local,
	    int *nlocal);
	void (*finalize)(void);
	/* in place over all ranks; f64: double, else int64_t; op: RANKS_SUM/MIN/MAX */
	const char *(*reduce)(void *v, size_t n, int f64, int op);
	const char *(*exscan_u64)(uint64_t v, uint64_t *before);
	const char *(*bcast)(void *buf, size_t bytes, int root);
	/* v of every rank into all[rank] on root (gather) or on every rank (allgather) */
	const char *(*gather_u64)(uint64_t v, uint64_t *all, int root);
	const char *(*allgather_u64)(uint64_t v, uint64_t *all);
	const char *(*send)(const void *buf, size_t bytes, int dest);
	const char *(*recv)(void *buf, size_t bytes, int src);
};

/* The plugin's one symbol. */
#define RANKS_MPI_SYMBOL "accelkit_ranks_mpi"
#define RANKS_MPI_PLUGIN "accelkit-mpi.so"

#endif
