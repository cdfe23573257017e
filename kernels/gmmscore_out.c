/* gmmscore_out.c: gmmscore's results as text lines, a Kaldi text archive or NPY (see
 * gmmscore_stream.h), apart from the pipeline that produces them. Text is formatted in
 * parallel, each thread a run of a chunk's rows, and written in order. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "dense.h"
#include "err.h"
#include "gmmscore_stream.h"
#include "output.h"
#include "speech.h"
#include "timer.h"

struct gmm_writer {
	output *o;
	int fmt;
	const struct gmm_models *m;
	size_t top;			/* 0: every score */
	const char *open_key;		/* --all text: the utterance whose matrix is open */
	size_t open_rows;
	uint64_t npy_off, npy_rows;
	char **buf;			/* per-thread text buffers */
	size_t *len, *cap;
	int nbuf;
};

static void
buf_need(struct gmm_writer *w, int t, size_t more)
{
	if (w->len[t] + more > w->cap[t]) {
		w->cap[t] = MAX(w->len[t] + more, 2 * w->cap[t]);
		w->buf[t] = xrealloc(w->buf[t], w->cap[t]);
	}
}

/* Formats the chunk's rows in parallel, each thread a run of them, then writes the
 * runs in order (with the archive's keys and brackets between utterances). */
static void
write_text(struct gmm_writer *w, const struct gmm_chunk *c)
{
	const size_t nm = w->m->nmodels, k = w->top;
	/* The segment and the frame number of every row. */
	uint32_t *rseg = xmallocarray(c->n + 1, sizeof *rseg);
	uint64_t *rframe = xmallocarray(c->n + 1, sizeof *rframe);
	for (size_t s = 0, r = 0; s < c->nseg; s++)
		for (size_t i = 0; i < c->seg[s].n; i++, r++) {
			rseg[r] = (uint32_t)s;
			rframe[r] = c->seg[s].first + i;
		}

	#pragma omp parallel for schedule(static, 1) num_threads(w->nbuf)
	for (int t = 0; t < w->nbuf; t++) {
		size_t a = c->n * (size_t)t / (size_t)w->nbuf;
		size_t b = c->n * (size_t)(t + 1) / (size_t)w->nbuf;
		w->len[t] = 0;
		for (size_t r = a; r < b; r++) {
			if (k == 0) {
				buf_need(w, t, nm * 16 + 4);
				w->len[t] += ark_format_row(w->buf[t] + w->len[t], c->val + r * nm, nm);
				continue;
			}
			const char *key = c->seg[rseg[r]].key;
			size_t klen = strlen(key);
			for (size_t j = 0; j < k; j++) {
				const char *name = w->m->names[c->idx[r * k + j]];
				size_t nlen = strlen(name);
				buf_need(w, t, klen + nlen + 80);
				char *p = w->buf[t] + w->len[t];
				memcpy(p, key, klen);
				p += klen;
				p += sprintf(p, "\t%llu\t", (unsigned long long)rframe[r]);
				memcpy(p, name, nlen);
				p += nlen;
				*p++ = '\t';
				p += fmt_f32(p, c->tv[r * k + j]);
				*p++ = '\n';
				w->len[t] = (size_t)(p - w->buf[t]);
			}
		}
	}
	free(rseg);
	free(rframe);
	if (k > 0) {
		for (int t = 0; t < w->nbuf; t++)
			if (w->len[t] > 0)
				out_write(w->o, w->buf[t], w->len[t]);
		return;
	}
	/* --all: each row is "\n  v v v "; the runs are cut at row starts. */
	int t = 0;
	const char *p = w->buf[0], *end = w->buf[0] + w->len[0];
	for (size_t s = 0; s < c->nseg; s++) {
		const struct gmm_seg *sg = &c->seg[s];
		if (sg->first == 0) {
			if (w->open_key != NULL)
				ark_end(w->o, w->open_rows);
			ark_begin(w->o, sg->key);
			w->open_key = sg->key;
			w->open_rows = 0;
		}
		const char *from = NULL;
		for (size_t i = 0; i < sg->n; i++) {
			while (p == end) {
				if (from != NULL)
					out_write(w->o, from, (size_t)(p - from));
				from = NULL;
				t++;
				p = w->buf[t];
				end = w->buf[t] + w->len[t];
			}
			if (from == NULL)
				from = p;
			const char *q = memchr(p + 1, '\n', (size_t)(end - p - 1));
			p = q != NULL ? q : end;
		}
		if (from != NULL)
			out_write(w->o, from, (size_t)(p - from));
		w->open_rows += sg->n;
	}
}

void
gmm_writer_chunk(struct gmm_writer *w, const struct gmm_chunk *c)
{
	double t0 = now_sec();
	if (w->fmt == FMT_NPY) {
		out_write(w->o, c->val, c->n * w->m->nmodels * sizeof(float));
		w->npy_rows += c->n;
	} else {
		write_text(w, c);
	}
	phase_add(PH_WRITE, now_sec() - t0);
}

struct gmm_writer *
gmm_writer_open(output *o, int fmt, const struct gmm_models *m, size_t top, int nthreads)
{
	struct gmm_writer *w = xcalloc(1, sizeof *w);
	w->o = o;
	w->fmt = fmt;
	w->m = m;
	w->top = top;
	w->nbuf = nthreads;
	w->buf = xcalloc((size_t)w->nbuf, sizeof *w->buf);
	w->len = xcalloc((size_t)w->nbuf, sizeof *w->len);
	w->cap = xcalloc((size_t)w->nbuf, sizeof *w->cap);
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
	else if (w->open_key != NULL)
		ark_end(w->o, w->open_rows);
	for (int t = 0; t < w->nbuf; t++)
		free(w->buf[t]);
	free(w->buf);
	free(w->len);
	free(w->cap);
	free(w);
}
