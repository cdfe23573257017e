/* gmmscore_stream.h: the host side of a gmmscore run, apart from gmmscore.h (which the
 * CUDA code includes too): the feature files as one sequence of frames
 * (gmmscore_feats.c), the streaming pipeline that carries chunks of them through a
 * device (gmmscore_stream.c), the writer of their results (gmmscore_out.c), and the
 * run's decision of the device and opening of the pipeline (gmmscore_run.c). */
#ifndef GMMSCORE_STREAM_H
#define GMMSCORE_STREAM_H

#include <stddef.h>
#include <stdint.h>

#include "cudadev.h"
#include "gmmscore.h"
#include "output.h"
#include "speech.h"

/* A run of consecutive frames of one utterance within a chunk. */
struct gmm_seg {
	const char *key;
	uint64_t first;			/* index of its first frame in the utterance */
	size_t n;
};

/* Frames to score (several utterances can share a chunk, a long one spans several)
 * and, once scored, their results. */
struct gmm_chunk {
	float *x;			/* cap x dp features */
	size_t n;
	struct gmm_seg *seg;
	size_t nseg, capseg;
	uint32_t *idx;			/* n x top: the best models */
	float *tv;			/* n x top: their scores */
	float *val;			/* n x nmodels: every score, where needed */
	int full, last;
};

/* ---- the features (gmmscore_feats.c) ---- */

struct gmm_feats;
/* The files (path "-": standard input) in order, each of format `format` (or
 * recognised), their utterances' frames cut to the first ncols dimensions in rows of dp
 * floats. Each utterance must have model_dim dimensions, or at least opt_dims with
 * --dims (opt_dims > 0): otherwise an error naming the file and the utterance. */
struct gmm_feats *gmm_feats_open(char **files, int nfiles, enum speech_format format,
    int model_dim, int opt_dims, int ncols, int dp);
/* For auto, before the device is chosen: the frames there are, as far as `want` of them
 * show. Reads ahead (into memory, handed out later by gmm_feats_next) until want frames
 * are read or the input ends, except that a header that gives a file's frames (NPY,
 * HTK) is taken at its word, without reading them. *exact: the count is the whole
 * input's, not a lower bound. The phase "read (ahead)" under -v. */
uint64_t gmm_feats_ahead(struct gmm_feats *f, size_t want, int *exact);
/* The next run of frames of one utterance, at most max (> 0) of them, into dst; seg
 * says whose and where in it they are (seg->n = 0: an empty utterance). 0 at the end
 * of the input. Keys stay valid until gmm_feats_close. */
int gmm_feats_next(struct gmm_feats *f, float *dst, size_t max, struct gmm_seg *seg);
void gmm_feats_close(struct gmm_feats *f);

/* ---- the writer (gmmscore_out.c) ---- */

struct gmm_writer;
/* -O ark: a binary Kaldi archive, one FM matrix of frames x models an utterance (as
 * gmm-compute-likes writes), beside FMT_TEXT and FMT_NPY of cli.h. */
#define GMM_FMT_ARK 2

/* Writes to o the `top` best models a frame as text lines "KEY FRAME MODEL SCORE", or
 * with top 0 every score: a Kaldi text archive (one matrix an utterance), fmt
 * GMM_FMT_ARK a binary one (an utterance's rows kept until it ends), or fmt
 * FMT_NPY one float32 array of frames x models (its header now, with the row count
 * patched in at gmm_writer_end). Text is formatted on the -j threads. first_frame
 * (top > 0 only) numbers the first utterance's frames from there rather than 0: a
 * piece of a split run that continues an utterance (gmmscore --first-frame). */
struct gmm_writer *gmm_writer_open(output *o, int fmt, const struct gmm_models *m,
    size_t top, uint64_t first_frame);
/* The results of a scored chunk, in order; timed as the phase "write". */
void gmm_writer_chunk(struct gmm_writer *w, const struct gmm_chunk *c);
/* Hands what was written to the system now, so that a reader downstream sees it. */
void gmm_writer_flush(struct gmm_writer *w);
/* Completes the output (the NPY row count, the last matrix's closing bracket) and
 * frees w; the output stays open. */
void gmm_writer_end(struct gmm_writer *w);

/* ---- the pipeline (gmmscore_stream.c) ---- */

struct gmm_stream_cfg {
	const struct gmm_params *prm;
	enum gmm_mode mode;
	size_t top;			/* the best models a frame (<= nmodels); 0: every score */
	int model_dim;			/* the models' dimensions */
	size_t chunk;			/* --chunk, 0: the tuning row's */
	size_t max_mem;			/* --max-device-mem, 0: most of what is free */
	const struct cuda_dev *dev;
	const struct gmmscore_tune *tune;
	const struct gmm_layout *layout;	/* the GPU's, made beforehand, or NULL */
	struct gmm_feats *feats;
};

struct gmm_stream;
/* Sizes the chunks (bounded by the host memory their scores take and, on a GPU, by
 * device memory), uploads the parameters to the GPU when dev is one, and allocates the
 * chunks; -v says what was chosen. */
struct gmm_stream *gmm_stream_open(const struct gmm_stream_cfg *cfg);
/* Scores the frames of cfg->feats in order and writes the results through w: a reader
 * thread parses the next chunk while the device scores this one and the last one is
 * written. Returns the number of frames. */
uint64_t gmm_stream_run(struct gmm_stream *s, struct gmm_writer *w);
void gmm_stream_free(struct gmm_stream *s);

/* ---- one run (gmmscore_run.c) ---- */

/* What cmd/gmmscore.c asks of a run, from its options and inputs. */
struct gmm_run {
	const char *device;		/* -d as given: auto weighs the work, cpu makes no
					   GPU layout */
	const struct gmm_params *prm;
	struct gmm_feats *feats;
	enum gmm_mode mode;
	size_t top;			/* the best models a frame (<= nmodels); 0: every score */
	int model_dim;			/* the models' dimensions */
	size_t chunk;			/* --chunk, 0: the tuning row's */
	size_t max_mem;			/* --max-device-mem, 0: most of what is free */
};
/* Settles dev (as cuda_start began it): -d auto weighs the frames there are (as many as
 * GMMSCORE_AUTO_FRAMES show, or --chunk) by the cost model of GMMSCORE_AUTO_ROW's row,
 * while the GPU's layout of the parameters is made for that row's tile; then picks
 * dev's tuning row (-v names it) and opens the stream on dev. gmm_stream_run runs it
 * into the caller's writer; gmm_stream_free frees it. */
struct gmm_stream *gmm_run_open(const struct gmm_run *r, struct cuda_dev *dev);

#endif
