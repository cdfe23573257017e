/* gmmscore_out.c: gmmscore's results as text lines, a Kaldi text or binary archive or
 * NPY (see gmmscore_stream.h), apart from the pipeline that produces them. Text is formatted on
 * the -j threads and written in order by out_par (common/output.h): a chunk's items
 * are its rows (and, in an archive, its empty utterances), each formatted with what
 * goes before it (the bracket that closes the utterance before, the key that opens its
 * own), so that the bytes are those of writing them one after another. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "dense.h"
#include "err.h"
#include "gmmscore_stream.h"
#include "kaldi_io.h"
#include "output.h"
#include "speech.h"
#include "timer.h"

/* Text a formatting task aims at: large enough to pay for handing it to a thread. */
#define TASK_BYTES ((size_t)1 << 18)

struct gmm_writer {
	output *o;
	int fmt;
	const struct gmm_models *m;
	size_t top;			/* 0: every score */
	int open;			/* --all text: an utterance with rows is open */
	uint64_t npy_off, npy_rows;
	/* --first-frame N: added to the frame numbers of the input's first utterance,
	 * which a piece of a split run may continue; cleared when the next one starts */
	uint64_t offset;
	int started;			/* a segment has been listed */
	/* a chunk's items: segment, row and frame; an empty utterance's row is NO_ROW */
	uint32_t *iseg, *irow;
	uint64_t *iframe;
	size_t icap;
	/* GMM_FMT_ARK: the utterance being gathered (its key NULL before the first) */
	const char *ukey;
	float *urows;
	size_t un, ucap;
};

#define NO_ROW UINT32_MAX

/* What out_par's formatters read. */
struct text_job {
	const struct gmm_writer *w;
	const struct gmm_chunk *c;
	int open;			/* an utterance with rows is open before the first item */
};

/* "KEY\tFRAME\tMODEL\tSCORE" lines, `top` of them a row, best first. */
static void
format_top(void *ctx, size_t first, size_t count, struct obuf *b)
{
	const struct text_job *j = ctx;
	const struct gmm_writer *w = j->w;
	const struct gmm_chunk *c = j->c;
	const size_t k = w->top;

	for (size_t i = first; i < first + count; i++) {
		const char *key = c->seg[w->iseg[i]].key;
		const size_t r = w->irow[i], klen = strlen(key);
		for (size_t t = 0; t < k; t++) {
			const char *name = w->m->names[c->idx[r * k + t]];
			size_t nlen = strlen(name);
			char *p = obuf_room(b, klen + nlen + 80);
			memcpy(p, key, klen);
			p += klen;
			p += sprintf(p, "\t%llu\t", (unsigned long long)w->iframe[i]);
			memcpy(p, name, nlen);
			p += nlen;
			*p++ = '\t';
			p += fmt_f32(p, c->tv[r * k + t]);
			*p++ = '\n';
			b->len = (size_t)(p - b->p);
		}
	}
}

/* A Kaldi text archive, as ark_begin, ark_row and ark_end write it: "KEY  [" opens an
 * utterance, each row is "\n  v v v ", "]\n" closes it (" ]\n" when it has no rows). */
static void
format_ark(void *ctx, size_t first, size_t count, struct obuf *b)
{
	const struct text_job *j = ctx;
	const struct gmm_writer *w = j->w;
	const struct gmm_chunk *c = j->c;
	const size_t nm = w->m->nmodels;

	for (size_t i = first; i < first + count; i++) {
		const struct gmm_seg *sg = &c->seg[w->iseg[i]];
		const uint32_t r = w->irow[i];
		if (w->iframe[i] == 0) {
			/* a new utterance: the one before, if it has rows, ends here */
			int open = i == 0 ? j->open : w->irow[i - 1] != NO_ROW;
			size_t klen = strlen(sg->key);
			char *p = obuf_room(b, klen + 8);
			if (open) {
				memcpy(p, "]\n", 2);
				p += 2;
			}
			memcpy(p, sg->key, klen);
			p += klen;
			memcpy(p, "  [", 3);
			p += 3;
			if (r == NO_ROW) {
				memcpy(p, " ]\n", 3);
				p += 3;
			}
			b->len = (size_t)(p - b->p);
		}
		if (r != NO_ROW) {
			char *p = obuf_room(b, nm * 16 + 4);
			b->len += ark_format_row(p, c->val + (size_t)r * nm, nm);
		}
	}
}

/* The chunk's items (rows; in an archive, empty utterances too), in order. */
static size_t
list_items(struct gmm_writer *w, const struct gmm_chunk *c)
{
	size_t n = 0;
	if (c->n + c->nseg > w->icap) {
		w->icap = MAX(c->n + c->nseg, 2 * w->icap);
		w->iseg = xreallocarray(w->iseg, w->icap, sizeof *w->iseg);
		w->irow = xreallocarray(w->irow, w->icap, sizeof *w->irow);
		w->iframe = xreallocarray(w->iframe, w->icap, sizeof *w->iframe);
	}
	for (size_t s = 0, r = 0; s < c->nseg; s++) {
		const struct gmm_seg *sg = &c->seg[s];
		if (sg->first == 0 && w->started)
			w->offset = 0;	/* the second utterance: numbered from 0 */
		w->started = 1;
		if (sg->n == 0 && w->top == 0) {
			w->iseg[n] = (uint32_t)s;
			w->irow[n] = NO_ROW;
			w->iframe[n++] = 0;
		}
		for (size_t i = 0; i < sg->n; i++, r++) {
			w->iseg[n] = (uint32_t)s;
			w->irow[n] = (uint32_t)r;
			w->iframe[n++] = sg->first + i + w->offset;
		}
	}
	return n;
}

/* GMM_FMT_ARK: an FM matrix an utterance, written when the next one starts or at the
 * end, since its header holds the row count. */
static void
bark_flush(struct gmm_writer *w)
{
	if (w->ukey != NULL)
		kaldi_write_fm(w->o, w->ukey, w->urows, w->un, w->m->nmodels);
	w->ukey = NULL;
	w->un = 0;
}

static void
write_bark(struct gmm_writer *w, const struct gmm_chunk *c)
{
	const size_t nm = w->m->nmodels;
	for (size_t s = 0, r = 0; s < c->nseg; s++) {
		const struct gmm_seg *sg = &c->seg[s];
		if (sg->first == 0) {
			bark_flush(w);
			w->ukey = sg->key;
		}
		if (w->un + sg->n > w->ucap) {
			w->ucap = MAX(w->un + sg->n, 2 * w->ucap);
			w->urows = xreallocarray(w->urows, mul_size(w->ucap, nm, "scores"),
			    sizeof *w->urows);
		}
		memcpy(w->urows + w->un * nm, c->val + r * nm, sg->n * nm * sizeof *w->urows);
		w->un += sg->n;
		r += sg->n;
	}
}

static void
write_text(struct gmm_writer *w, const struct gmm_chunk *c)
{
	struct text_job j = {w, c, w->open};
	size_t n = list_items(w, c);
	if (n == 0)
		return;
	if (w->top > 0) {
		size_t line = 40 + w->top * 40;
		out_par(w->o, n, MAX(TASK_BYTES / line, (size_t)1), format_top, &j);
	} else {
		size_t row = 4 + w->m->nmodels * 12;
		out_par(w->o, n, MAX(TASK_BYTES / row, (size_t)1), format_ark, &j);
		w->open = w->irow[n - 1] != NO_ROW;
	}
}

void
gmm_writer_chunk(struct gmm_writer *w, const struct gmm_chunk *c)
{
	double t0 = now_sec();
	if (w->fmt == FMT_NPY) {
		out_write(w->o, c->val, c->n * w->m->nmodels * sizeof(float));
		w->npy_rows += c->n;
	} else if (w->fmt == GMM_FMT_ARK) {
		write_bark(w, c);
	} else {
		write_text(w, c);
	}
	phase_add(PH_WRITE, now_sec() - t0);
}

struct gmm_writer *
gmm_writer_open(output *o, int fmt, const struct gmm_models *m, size_t top,
    uint64_t first_frame)
{
	struct gmm_writer *w = xcalloc(1, sizeof *w);
	w->offset = first_frame;
	w->o = o;
	w->fmt = fmt;
	w->m = m;
	w->top = top;
	if (fmt == FMT_NPY) {
		w->npy_off = out_tell(o);
		npy_write_header(o, DT_F32, 0, m->nmodels);
	}
	return w;
}

void
gmm_writer_flush(struct gmm_writer *w)
{
	out_flush(w->o);
}

void
gmm_writer_end(struct gmm_writer *w)
{
	if (w->fmt == FMT_NPY)
		npy_patch_header(w->o, w->npy_off, DT_F32, (size_t)w->npy_rows, w->m->nmodels);
	else if (w->fmt == GMM_FMT_ARK)
		bark_flush(w);
	else if (w->open)
		ark_end(w->o, 1);
	free(w->urows);
	free(w->iseg);
	free(w->irow);
	free(w->iframe);
	free(w);
}
