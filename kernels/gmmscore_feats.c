/* gmmscore_feats.c: the feature files as one sequence of frames, utterance by utterance
 * (see gmmscore_stream.h), for the pipeline's reader thread; and, for auto, a look
 * ahead at how many frames there are before the device is chosen. Frames read ahead
 * are kept and handed out first, so nothing is read twice. */
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "gmmscore_stream.h"
#include "speech.h"
#include "timer.h"

/* Utterance keys live until the end, in blocks that never move. */
struct arena {
	char *block;
	size_t used, cap;
	char **old;
	size_t nold;
};

struct gmm_feats {
	char **files;
	int nfiles, next_file;
	enum speech_format format;
	int model_dim, opt_dims, ncols;
	size_t dp;
	speech *s;			/* the file being read; NULL between files */
	const char *key;		/* the utterance being read; NULL between utterances */
	size_t key_cols;		/* its width */
	int64_t key_rows;		/* its frames if its header says, else -1 */
	uint64_t first;			/* its frames taken so far */
	struct arena keys;
	/* frames read ahead (ahead_n of them at ahead), in runs, handed out first */
	float *ahead;
	size_t ahead_n, ahead_used;
	struct gmm_seg *run;
	size_t nrun, caprun, run_i, run_used;
};

static const char *
arena_dup(struct arena *a, const char *s)
{
	size_t n = strlen(s) + 1;
	if (a->used + n > a->cap) {
		if (a->block != NULL) {
			a->old = xreallocarray(a->old, a->nold + 1, sizeof *a->old);
			a->old[a->nold++] = a->block;
		}
		a->cap = MAX(n, (size_t)1 << 16);
		a->block = xmalloc(a->cap);
		a->used = 0;
	}
	char *d = a->block + a->used;
	memcpy(d, s, n);
	a->used += n;
	return d;
}

static void
arena_free(struct arena *a)
{
	for (size_t i = 0; i < a->nold; i++)
		free(a->old[i]);
	free(a->old);
	free(a->block);
}

struct gmm_feats *
gmm_feats_open(char **files, int nfiles, enum speech_format format, int model_dim,
    int opt_dims, int ncols, int dp)
{
	struct gmm_feats *f = xcalloc(1, sizeof *f);
	f->files = files;
	f->nfiles = nfiles;
	f->format = format;
	f->model_dim = model_dim;
	f->opt_dims = opt_dims;
	f->ncols = ncols;
	f->dp = (size_t)dp;
	return f;
}

/* The next utterance, from this file or the next; 0 after the last. */
static int
begin_utterance(struct gmm_feats *f)
{
	const char *key;
	size_t ncols;
	int64_t rows;

	for (;;) {
		if (f->s == NULL) {
			if (f->next_file == f->nfiles)
				return 0;
			f->s = speech_open(f->files[f->next_file++], f->format);
			vlog("features: %s (%s)", speech_name(f->s),
			    speech_format_name(speech_format(f->s)));
		}
		if (speech_next(f->s, &key, &ncols, &rows))
			break;
		speech_close(f->s);
		f->s = NULL;
	}
	if (rows != 0 && ncols != 0) {
		if (f->opt_dims == 0 && ncols != (size_t)f->model_dim)
			die("%s: utterance '%s' has %zu dimensions, the models %d (--dims N "
			    "scores the first N)", speech_name(f->s), key, ncols, f->model_dim);
		if (ncols < (size_t)f->ncols)
			die("%s: utterance '%s' has %zu dimensions, fewer than --dims %d",
			    speech_name(f->s), key, ncols, f->ncols);
	}
	f->key = arena_dup(&f->keys, key);
	f->key_cols = ncols;
	f->key_rows = rows;
	f->first = 0;
	return 1;
}

/* From the files: up to max frames of the utterance being read (beginning the next
 * one when there is none), or an empty utterance (seg->n = 0); 0 at the end. */
static int
next_from_files(struct gmm_feats *f, float *dst, size_t max, struct gmm_seg *seg)
{
	for (;;) {
		if (f->key == NULL && !begin_utterance(f))
			return 0;
		size_t got = f->key_cols == 0 ? 0 :
		    speech_read(f->s, dst, max, (size_t)f->ncols, f->dp);
		if (got > 0) {
			*seg = (struct gmm_seg){f->key, f->first, got};
			f->first += got;
			return 1;
		}
		const char *key = f->key;
		f->key = NULL;
		if (f->first == 0) {
			*seg = (struct gmm_seg){key, 0, 0};
			return 1;
		}
	}
}

int
gmm_feats_next(struct gmm_feats *f, float *dst, size_t max, struct gmm_seg *seg)
{
	if (f->run_i == f->nrun)
		return next_from_files(f, dst, max, seg);
	const struct gmm_seg *r = &f->run[f->run_i];
	size_t n = MIN(max, r->n - f->run_used);
	memcpy(dst, f->ahead + f->ahead_used * f->dp, n * f->dp * sizeof *dst);
	*seg = (struct gmm_seg){r->key, r->first + f->run_used, n};
	f->ahead_used += n;
	f->run_used += n;
	if (f->run_used == r->n) {
		f->run_i++;
		f->run_used = 0;
	}
	return 1;
}

uint64_t
gmm_feats_ahead(struct gmm_feats *f, size_t want, int *exact)
{
	double t0 = now_sec();
	uint64_t n;

	/* zeroed: the readers write a frame's dims, not its padding up to dp, and the chunks
	 * they are copied into keep their padding 0 (garbage there, NaN say, is a NaN score) */
	f->ahead = xcalloc(mul_size(MAX(want, (size_t)1), f->dp, "frames"), sizeof *f->ahead);
	for (;;) {
		if (f->key == NULL && !begin_utterance(f)) {
			*exact = 1;
			n = f->ahead_n;
			break;
		}
		/* A header that says how many frames there are: no need to read them. */
		if (f->key_rows >= 0 && f->ahead_n + (uint64_t)f->key_rows - f->first >= want) {
			*exact = f->next_file == f->nfiles;
			n = f->ahead_n + (uint64_t)f->key_rows - f->first;
			break;
		}
		if (f->ahead_n == want) {
			*exact = 0;
			n = f->ahead_n;
			break;
		}
		struct gmm_seg sg;
		if (!next_from_files(f, f->ahead + f->ahead_n * f->dp, want - f->ahead_n, &sg))
			continue;
		if (f->nrun > 0 && f->run[f->nrun - 1].key == sg.key && sg.n > 0) {
			f->run[f->nrun - 1].n += sg.n;
		} else {
			if (f->nrun == f->caprun) {
				f->caprun = f->caprun ? 2 * f->caprun : 16;
				f->run = xreallocarray(f->run, f->caprun, sizeof *f->run);
			}
			f->run[f->nrun++] = sg;
		}
		f->ahead_n += sg.n;
	}
	phase_add("read (ahead)", now_sec() - t0);
	return n;
}

void
gmm_feats_close(struct gmm_feats *f)
{
	if (f->s != NULL)
		speech_close(f->s);
	arena_free(&f->keys);
	free(f->ahead);
	free(f->run);
	free(f);
}
