/* editdist4r_run.h: one run of editdist4r between reading and writing. cmd/editdist4r.c
 * reads the pairs and hands each over; editdist4r_run.c starts the device and decides
 * (ed_run_open, ed_run_close); editdist4r_batch.c gathers the pairs into batches,
 * queues the first ones while the device is chosen (auto weighs their work), then
 * computes a batch on the device while the next one is read, and editdist4r_out.c
 * writes the distances (and --path's CIGARs) in input order. editdist4r_sym.c codes
 * -u's characters as bytes. Apart from the kernels' interface (editdist4r.h), since the
 * C files alone use it. */
#ifndef EDITDIST4R_RUN_H
#define EDITDIST4R_RUN_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cudadev.h"
#include "devwork.h"
#include "editdist4r.h"
#include "editdist4r_tune.h"
#include "output.h"

/* Pairs gathered for one computation: strings in a pool, 16-byte aligned. */
struct ed_batch {
	uint8_t *pool;
	size_t used, cap;	/* pool bytes: used, allocated */
	struct ed_pair *pairs;
	int32_t *dist;
	int32_t *span;		/* --mode infix, prefix: each pair's START and END */
	char **cigar;
	uint8_t *kind;		/* -u: each pair's enum ed_kind (else NULL: all bytes) */
	size_t nutf8;		/* -u: pairs of kind ED_UTF8, to be coded */
	uint32_t *wide;		/* -u: code points of the pairs of kind ED_WIDE */
	size_t wused, wcap, nwide;
	size_t n, ncap;
	int shared_pool;	/* --all-vs-all: the pool is the same every batch */
};

struct ed_run;
/* Chooses the device once the work is known (cmd/editdist4r.c): sets r->gpu, r->eo's
 * engine and block size, r->g, and r->settled. whole: every pair has been added. */
typedef void (*ed_settle_fn)(struct ed_run *r, int whole);

struct ed_run {
	struct ed_opts eo;
	int path, fmt, gpu, utf8;
	int all;		/* --all-vs-all: a matrix */
	struct ed_gpu *g;
	output *out;
	FILE *spill;		/* an NPY list to an output it cannot rewrite: the
				 * distances, until their number is known (ed_out_end) */
	uint64_t written;	/* distances written (rows of an NPY list) */
	uint64_t cols;		/* --all-vs-all: the matrix's width */
	uint64_t cells;		/* |A| x |B| of the pairs computed, for -v */
	uint64_t nwide;		/* -u: pairs computed by code point, for -v */
	/* what settle weighs, of the pairs added until the device is chosen (after it,
	 * ed_run_add counts nothing): */
	double work;		/* the CPU's cells, for auto: ed_pair_work, or the band's
				   estimate for long pairs (ed_band_work) */
	double gwork;		/* the GPU's: ed_pair_work (its engines have no band) */
	struct ed_bws *bws;	/* ed_band_work's scratch */
	/* the band's share of the long pairs' tables below ED_BAND_SAMPLE_CELLS, from
	 * ED_BAND_SHARE_PAIRS of them, and the tables weighed whole before the first
	 * (weigh, editdist4r_batch.c) */
	double share_band, share_table, share_wait;
	int share_pairs;
	uint64_t npairs;	/* the pairs added (a pair is computed on one CPU thread) */
	uint64_t bytes;		/* the strings' bytes and 2 a pair, of the pairs added */
	size_t max_bytes;	/* a batch's pool: ED_BATCH_BYTES, or less by --max-device-mem */
	/* ED_BATCH_QUEUE batches in a ring: nfull handed over from head on, in order, the
	 * first of them on the device when inflight; the one after them is being filled */
	struct ed_batch b[ED_BATCH_QUEUE];
	int head, nfull, inflight;
	int settled;		/* the device is chosen: batches are computed as they come */
	uint64_t settle_bytes;	/* regular files: the choice once this much is read (else
				   at the first full batch, or the end) */
	ed_settle_fn settle;
	void *settle_ctx;	/* the settle function's */
	double handover;	/* seconds spent computing and writing inside ed_run_add */
	double handover_cpu;	/* of them, the reading thread's CPU time (ed_thread_cpu) */
	struct ed_batch allpool;	/* --all-vs-all: every record's string, the batches' pool */
	/* Several GPUs (ed_run_multi): the device engine (common/devwork.h) in place of the
	 * ring; each batch goes to the GPU that frees up first, results in input order */
	dw *dw;
	struct ed_batch *mb;		/* dw_slots(nw) batches */
	void **mslot;
	int nmb, nw;
	struct ed_batch *fill;		/* the batch being filled, one of mb */
	struct cuda_dev mdev;		/* the GPUs, for the workers */
	const struct editdist4r_tune *mtune;
	size_t mmax;			/* --max-device-mem, a GPU's */
};

/* Every record of a file (--all-vs-all): offsets and lengths in the run's allpool. */
struct ed_recs {
	size_t n, cap;
	uint32_t *off, *len;
	size_t nutf8;		/* -u: records that are not ASCII */
};

/* ---- the run, decided and dispatched (editdist4r_run.c) ---- */

/* What cmd/editdist4r.c hands ed_run_open beside r's own options (eo, path, fmt,
 * utf8, all). */
struct ed_job {
	const char *device;	/* -d's SPEC */
	int t;			/* -t, 0 when not given */
	size_t max_device_mem;	/* --max-device-mem, 0 for none */
	int64_t total;		/* the inputs' bytes when every one is a regular file, else -1 */
};

/* Starts CUDA (in its thread, unless the run cannot use it) and the batches, with the
 * device chosen as the pairs come: at once for cpu and several GPUs, else by auto's
 * weighing of the work (settle). Before ed_out_begin and the first pair. */
void ed_run_open(struct ed_run *r, const struct ed_job *job);
/* --all-vs-all: the work of every record of A against every record of B, for auto,
 * and the matrix computed and written (ed_run_matrix). */
void ed_run_all(struct ed_run *r, struct ed_recs *A, struct ed_recs *B);
/* After ed_out_end: -v's reports, the device's end (a GPU's run ends here, in
 * cuda_finish's _exit), and r freed. */
void ed_run_close(struct ed_run *r);
/* The Four-Russians block size without -t on a device so described (--help). */
int ed_default_t(const char *desc);

/* ---- batches (editdist4r_batch.c) ---- */

/* The calling thread's CPU time in seconds: the read phase less its CPU time is what
 * the reading thread waited, off the CPU, for the reader's threads (-v's "read
 * (waited)"). */
double ed_thread_cpu(void);

/* The batches' bounds (--max-device-mem when not 0). settle(r, whole) is called once
 * the first batch is full (whole 0) or at the end (1), unless r->settled is set
 * already; when sized (every input a regular file), also once, early (whole -1), after
 * ED_SETTLE_BYTES of pairs: it may settle on the CPU then (the work so far scaled to
 * the whole). */
void ed_run_begin(struct ed_run *r, size_t max_device_mem, int sized, ed_settle_fn settle,
    void *ctx);
/* One pair, of kind ED_BYTES or (-u) ED_UTF8: into the batch being filled, handing that
 * batch over first when full. */
void ed_run_add(struct ed_run *r, const unsigned char *a, size_t alen, const unsigned char *b,
    size_t blen, int kind);
/* Every pair added: settles the device if need be, computes and writes all. */
void ed_run_end(struct ed_run *r);
/* A record of n bytes into the run's allpool and rc. Returns 0, changing nothing, when
 * the pool would pass 4 GiB. */
int ed_recs_put(struct ed_run *r, struct ed_recs *rc, const unsigned char *s, size_t n,
    int kind);
/* --all-vs-all: every record of A against every record of B, row by row, all written
 * (ed_out_matrix first, the device settled); frees A, B and the allpool. */
void ed_run_matrix(struct ed_run *r, struct ed_recs *A, struct ed_recs *B);
void ed_run_free(struct ed_run *r);
/* Once the device is chosen, before any pair is added: where cuda_workers(d) > 1 (several
 * GPUs, or ACCELKIT_CPU_WORKERS on the CPU), batches go to the workers of the device
 * engine, one a GPU with its own ed_gpu (tune's, a GPU's memory bound max_mem), and are
 * written in input order; -v gives each worker's share of the cells. Returns whether
 * it did (else the ring on one device goes on). */
int ed_run_multi(struct ed_run *r, const struct cuda_dev *d, const struct editdist4r_tune *tune,
    size_t max_mem);

/* ---- -u: characters (editdist4r_sym.c) ---- */

/* Whether s[0..n) is UTF-8: 1 with *count its code points, else 0 with *bad the offset
 * of the first byte that is not. */
int ed_utf8_check(const uint8_t *s, size_t n, size_t *count, size_t *bad);
/* Codes the batch's pairs of kind ED_UTF8 as bytes in place (ED_BYTES), or, those that
 * need more than 256 codes, as code points in its wide buffer (ED_WIDE). */
void ed_sym_batch(struct ed_batch *b);
/* --all-vs-all: codes every record of A and B (UTF-8, in pool) as bytes in place with
 * one coding for all, updating their lengths; 0, changing nothing, when they share too
 * many characters for it. */
int ed_sym_records(uint8_t *pool, struct ed_recs *A, struct ed_recs *B);

/* ---- output (editdist4r_out.c) ---- */

/* Opens the output (path NULL or "-": standard output); an NPY list gets its header,
 * patched at the end with the number of rows, or, on an output that cannot be
 * rewritten (a pipe), its distances go to a temporary file until the end. */
void ed_out_begin(struct ed_run *r, const char *path);
/* --all-vs-all: the matrix's shape, before its rows. */
void ed_out_matrix(struct ed_run *r, uint64_t rows, uint64_t cols);
/* A computed batch's distances (and CIGARs, freed once written), formatted on the
 * threads. */
void ed_out_batch(struct ed_run *r, struct ed_batch *b);
void ed_out_end(struct ed_run *r);

#endif
