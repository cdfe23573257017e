/* editdist4r_run.h: one run of editdist4r between reading and writing. cmd/editdist4r.c
 * reads the pairs and hands each over; editdist4r_batch.c gathers them into batches in
 * host memory (pinned for a GPU), computes a batch on the device while the next one is
 * read, and editdist4r_out.c writes the distances (and --path's CIGARs) in input order.
 * Apart from the kernels' interface (editdist4r.h), since the C files alone use it. */
#ifndef EDITDIST4R_RUN_H
#define EDITDIST4R_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "editdist4r.h"
#include "output.h"

struct editdist4r_tune;

/* Pairs gathered for one computation: strings in a pool, 16-byte aligned. */
struct ed_batch {
	uint8_t *pool;
	size_t used, cap, max;	/* pool bytes: used, allocated, the most a batch takes */
	struct ed_pair *pairs;
	int32_t *dist;
	char **cigar;
	size_t n, ncap;
	int shared_pool;	/* --all-vs-all: the pool is the same every batch */
};

struct ed_run {
	struct ed_opts eo;
	int path, fmt, gpu;
	int all;		/* --all-vs-all: a matrix */
	struct ed_gpu *g;
	output *out;
	uint64_t written;	/* distances written (rows of an NPY list) */
	uint64_t cols;		/* --all-vs-all: the matrix's width */
	uint64_t cells;
	size_t max_pairs;	/* the most pairs a batch takes */
	struct ed_batch b[2], *pending;
	int cur;
	struct ed_batch allpool;	/* --all-vs-all: every record's string, both batches' pool */
};

/* Every record of a file (--all-vs-all): offsets and lengths in the run's allpool. */
struct ed_recs {
	size_t n, cap;
	uint32_t *off, *len;
};

/* ---- batches (editdist4r_batch.c) ---- */

/* The two batches, sized by the tuning row (and --max-device-mem when not 0). */
void ed_run_begin(struct ed_run *r, const struct editdist4r_tune *tune, size_t max_device_mem);
/* One pair: into the batch being filled, handing that batch over first when full. */
void ed_run_add(struct ed_run *r, const unsigned char *a, size_t alen, const unsigned char *b,
    size_t blen);
/* Hands the batch being filled over and finishes and writes the one handed over
 * before, so that reading overlaps the GPU's work. Twice at the end writes all. */
void ed_run_flush(struct ed_run *r);
/* A record of n bytes into the run's allpool and rc. Returns 0, changing nothing, when
 * the pool would pass 4 GiB. */
int ed_recs_put(struct ed_run *r, struct ed_recs *rc, const unsigned char *s, size_t n);
/* --all-vs-all: every record of A against every record of B, row by row, all written
 * (ed_out_matrix first); frees A, B and the allpool. */
void ed_run_matrix(struct ed_run *r, struct ed_recs *A, struct ed_recs *B);
void ed_run_free(struct ed_run *r);

/* ---- output (editdist4r_out.c) ---- */

/* Opens the output (path NULL or "-": standard output); an NPY list gets its header,
 * patched at the end with the number of rows. */
void ed_out_begin(struct ed_run *r, const char *path);
/* --all-vs-all: the matrix's shape, before its rows. */
void ed_out_matrix(struct ed_run *r, uint64_t rows, uint64_t cols);
/* A computed batch's distances (and CIGARs, freed once written). */
void ed_out_batch(struct ed_run *r, struct ed_batch *b);
void ed_out_end(struct ed_run *r);

#endif
