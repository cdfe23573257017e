/* ranks.h: the processes of one job across hosts (MPI), behind one small interface.
 *
 * A program started by mpirun (Open MPI's OMPI_COMM_WORLD_SIZE, or PMI_SIZE/PMIX_RANK,
 * in the environment) is one rank of ranks_size(); anything else, and every build
 * without MPI (Makefile: MPI=0), is rank 0 of 1, and no MPI call is made: a plain run
 * pays nothing for MPI_Init. The programs call these either way; only ranks.c knows
 * whether MPI is compiled in.
 *
 * Every function below but ranks_rank/size/local/share is collective: all ranks call it,
 * in the same order, with the same sizes. Rank order is input order: rank r holds the
 * r-th share of the units, so "in rank order" is "in input order".
 *
 * Errors: die* on one rank prints its one message and exits 1 without MPI_Finalize;
 * mpirun then ends the other ranks and exits 1 itself (Open MPI's MPI_Abort is not
 * used: Debian's mpirun 4.1 can crash in its teardown after one). */
#ifndef ACCELKIT_RANKS_H
#define ACCELKIT_RANKS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* MPI_Init when started by mpirun (once; later calls do nothing). MPI_Finalize runs at
 * a normal exit (atexit) or in ranks_finish, whichever comes first. */
void ranks_init(int *argc, char ***argv);
/* Under mpirun with more than one rank, a program that has not called ranks_init (it
 * does not divide its work), or any program of a build without MPI, would have every
 * rank do all of the work and write all of the output: this ends the job instead, with
 * one message from rank 0 (the launcher's environment says the ranks; no MPI call is
 * made). cli_finish calls it, so a program that divides calls ranks_init before. */
void ranks_refuse_undivided(void);
/* Under a launcher with several ranks, every rank but the first waits here for
 * mpirun to end it; elsewhere it returns at once. For a message every rank would
 * print alike before any MPI call (a usage error): rank 0 alone says it. */
void ranks_quiet_unless_first(void);
/* This process's rank as its launcher's environment says, before MPI_Init and in a
 * build without MPI; 0 when not launched with several ranks. */
int ranks_launch_rank(void);
/* MPI_Finalize now (for a run that ends with _exit, as cuda_finish does); idempotent. */
void ranks_finish(void);

int ranks_rank(void);
int ranks_size(void);
/* This rank's place among the ranks of its host (for the GPU it takes), and how many
 * ranks its host runs. */
int ranks_local(void);
int ranks_local_size(void);
/* The positions in a list of n devices (-d gpu:all, gpu:0,1, cpu:0,0) that this rank
 * takes: the ranks of a host deal the list out among them in turn, rank i of L the
 * positions i, i + L, ...; where they outnumber the list, position i % n. One process
 * takes the whole list. pick has room for n; returns the count (1..n for n >= 1).
 * ranks_deal_for is the rule alone, for a rank local of nlocal. */
int ranks_deal(int n, int *pick);
int ranks_deal_for(int n, int local, int nlocal, int *pick);
/* Whether MPI was compiled in (for messages and tests). */
int ranks_compiled(void);

/* Rank r's share of n units, contiguous and in rank order: [*first, *first + *count);
 * the first n % size ranks get one more. A share may be empty. */
void ranks_share(uint64_t n, uint64_t *first, uint64_t *count);

/* Element-wise reductions over all ranks, in place; every rank gets the result. The
 * integer ones are exact, so their result does not depend on the order of the ranks. */
void ranks_sum_i64(int64_t *v, size_t n);
void ranks_min_i64(int64_t *v, size_t n);
void ranks_max_i64(int64_t *v, size_t n);
void ranks_sum_f64(double *v, size_t n);
void ranks_min_f64(double *v, size_t n);
void ranks_max_f64(double *v, size_t n);
/* The sum of v over the ranks before this one (0 on rank 0). */
uint64_t ranks_exscan_u64(uint64_t v);

/* Rank 0 first: the other ranks wait in ranks_serial_begin until rank 0 reaches
 * ranks_serial_end, so that an error every rank would find alike (a file's header) is
 * reported by rank 0 alone, once: mpirun ends the waiting ranks with it. A begin
 * while begun, and an end while not, do nothing (a reader that brackets its header
 * inside a caller that brackets opening the file ends the wait at its header's end). */
void ranks_serial_begin(void);
void ranks_serial_end(void);

/* Root's bytes [0, bytes) into every rank's buf. */
void ranks_bcast(void *buf, size_t bytes, int root);
/* Every rank's bytes, concatenated in rank order, on rank 0: a malloc'd buffer (free()
 * it; one byte at least) and its length in *total. Other ranks get NULL. Sizes may
 * differ between ranks and pass 2 GiB. */
void *ranks_gather(const void *buf, size_t bytes, size_t *total);
/* ranks_gather's concatenation on every rank (each rank's bytes broadcast in turn). If
 * each is not NULL, it gets each rank's length (size() entries, malloc'd: free() it). */
void *ranks_allgather(const void *buf, size_t bytes, size_t *total, uint64_t **each);

#ifdef __cplusplus
}
#endif
#endif
