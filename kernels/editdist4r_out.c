/* editdist4r_out.c: editdist4r's results as it writes them: a distance a line (with
 * --path, a TAB and the CIGAR), a tab-separated matrix for --all-vs-all, or float32
 * NPY, a column or the matrix. Separate from the batches that compute them
 * (editdist4r_batch.c), which hand each computed batch over in input order. */
#include "editdist4r_run.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "dense.h"
#include "err.h"
#include "output.h"
#include "progress.h"
#include "timer.h"

#define SPILL_WHAT "a temporary file for the NPY list"

/* An unnamed temporary file under $TMPDIR (else /tmp), gone when closed. */
static FILE *
spill_open(void)
{
	const char *dir = getenv("TMPDIR");
	if (dir == NULL || *dir == '\0')
		dir = "/tmp";
	char *name = xmalloc(strlen(dir) + sizeof "/editdist4r-XXXXXX");
	strcpy(stpcpy(name, dir), "/editdist4r-XXXXXX");
	int fd = mkstemp(name);
	if (fd < 0)
		die_errno(SPILL_WHAT);
	unlink(name);
	free(name);
	FILE *f = fdopen(fd, "w+");
	if (f == NULL)
		die_errno(SPILL_WHAT);
	return f;
}

void
ed_out_begin(struct ed_run *r, const char *path)
{
	r->out = out_open(path);
	r->spill = NULL;
	if (r->fmt == FMT_NPY && !r->all) {
		/* The header holds the number of rows: rewritten at the end where the
		 * output allows it, else written then, before the spilled distances. */
		if (out_seekable(r->out))
			npy_write_header(r->out, DT_F32, 0, 1);
		else
			r->spill = spill_open();
	}
}

void
ed_out_matrix(struct ed_run *r, uint64_t rows, uint64_t cols)
{
	if (r->fmt == FMT_NPY)
		npy_write_header(r->out, DT_F32, rows, cols);
	r->cols = cols;
	if (cols == 0 && r->fmt == FMT_TEXT)
		for (uint64_t i = 0; i < rows; i++)
			out_putc(r->out, '\n');
}

/* Decimal text of v at w; returns its length. */
static int
put_int(char *w, int32_t v)
{
	char tmp[12];
	int n = 0, k = 0;
	uint32_t u = v < 0 ? 0u - (uint32_t)v : (uint32_t)v;
	if (v < 0)
		w[k++] = '-';
	do
		tmp[n++] = (char)('0' + u % 10);
	while ((u /= 10) != 0);
	while (n > 0)
		w[k++] = tmp[--n];
	return k;
}

struct lines {
	const struct ed_run *r;
	const struct ed_batch *b;
};

/* out_par's formatter: a distance a line (--mode infix and prefix: a TAB, START, a
 * TAB, END; with --path, a TAB and the CIGAR), or --all-vs-all's rows of r->cols
 * distances. */
static void
format_lines(void *ctx, size_t first, size_t count, struct obuf *o)
{
	const struct lines *f = ctx;
	const struct ed_run *r = f->r;
	const struct ed_batch *b = f->b;

	for (size_t i = first; i < first + count; i++) {
		int32_t d = b->dist[i];
		const char *cg = !r->path ? NULL : d < 0 ? "*" : b->cigar[i];
		size_t cl = cg != NULL ? strlen(cg) : 0;
		char *w = obuf_room(o, 40 + cl);
		w += put_int(w, d);
		if (r->eo.mode != ED_GLOBAL && r->cols == 0) {	/* START, END */
			*w++ = '\t';
			w += put_int(w, d < 0 ? -1 : b->span[2 * i]);
			*w++ = '\t';
			w += put_int(w, d < 0 ? -1 : b->span[2 * i + 1]);
		}
		if (cg != NULL) {
			*w++ = '\t';
			memcpy(w, cg, cl);
			w += cl;
			*w++ = '\n';
		} else {
			uint64_t k = r->written + i;
			*w++ = r->cols > 0 && (k + 1) % r->cols != 0 ? '\t' : '\n';
		}
		o->len = (size_t)(w - o->p);
	}
}

void
ed_out_batch(struct ed_run *r, struct ed_batch *b)
{
	double t0 = now_sec();
	if (r->fmt == FMT_NPY) {
		float *f = xmallocarray(MAX(b->n, (size_t)1), sizeof *f);
		for (size_t i = 0; i < b->n; i++)
			f[i] = (float)b->dist[i];
		if (r->spill != NULL) {
			if (fwrite(f, sizeof *f, b->n, r->spill) != b->n)
				die_errno(SPILL_WHAT);
		} else {
			out_write(r->out, f, b->n * sizeof *f);
		}
		free(f);
	} else {
		struct lines ctx = {r, b};
		out_par(r->out, b->n, (size_t)1 << 16, format_lines, &ctx);
	}
	if (r->path) {
		for (size_t i = 0; i < b->n; i++) {
			free(b->cigar[i]);
			b->cigar[i] = NULL;
		}
	}
	r->written += b->n;
	progress_add(b->n);
	phase_add(PH_WRITE, now_sec() - t0);
}

void
ed_out_end(struct ed_run *r)
{
	if (r->spill != NULL) {
		double t0 = now_sec();
		npy_write_header(r->out, DT_F32, r->written, 1);
		if (fflush(r->spill) != 0 || fseek(r->spill, 0, SEEK_SET) != 0)
			die_errno(SPILL_WHAT);
		char *buf = xmalloc(1 << 20);
		size_t n;
		while ((n = fread(buf, 1, 1 << 20, r->spill)) > 0)
			out_write(r->out, buf, n);
		if (ferror(r->spill))
			die_errno(SPILL_WHAT);
		free(buf);
		fclose(r->spill);
		r->spill = NULL;
		phase_add(PH_WRITE, now_sec() - t0);
	} else if (r->fmt == FMT_NPY && !r->all) {
		npy_patch_header(r->out, 0, DT_F32, r->written, 1);
	}
	out_close(r->out);
}
