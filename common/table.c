/* table.c: tables of rows read whole (see table.h): opened, their header and width, the
 * rows parsed in chunks on threads, gathered under mpirun; a line's fields are
 * table_fields.c's. */
#include "table.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chunks.h"
#include "cli.h"
#include "numparse.h"
#include "ranks.h"
#include "rowplace.h"
#include "table_fields.h"

int
table_is_npy(input *in)
{
	size_t avail;
	const unsigned char *p = in_peek(in, 6, &avail);
	return avail == 6 && memcmp(p, "\x93NUMPY", 6) == 0;
}

/* ---- header lines and the width ---- */

int
table_delim_arg(const char *opt, const char *arg)
{
	if (strcmp(arg, "\\t") == 0)
		return '\t';
	if (strlen(arg) != 1 || *arg == '\n')
		usage_error("invalid value for %s: '%s' (expected one character, such as , or a tab)",
		    opt, arg);
	return (unsigned char)*arg;
}

size_t
table_header_arg(const char *opt, const char *arg)
{
	return arg == NULL ? 1 : (size_t)cli_int(opt, arg, 0, 1 << 30);
}

void
table_skip_header(input *in, size_t lines, char **head, size_t *len)
{
	size_t hl = 0, cap = 0;
	char *h = NULL, *s;
	size_t n;

	if (head != NULL) {
		*head = NULL;
		*len = 0;
	}
	if (lines == 0 || table_is_npy(in))
		return;
	for (size_t i = 0; i < lines && (s = in_getline(in, &n)) != NULL; i++) {
		if (head == NULL)
			continue;
		if (hl + n + 1 > cap) {
			cap = MAX(2 * cap, hl + n + 1 + 256);
			h = xrealloc(h, cap);
		}
		memcpy(h + hl, s, n);
		h[hl + n] = '\n';
		hl += n + 1;
	}
	if (head != NULL) {
		*head = h;
		*len = hl;
	}
}

/* table_skip_header for text split by delimiter d: a header record whose quoted field
 * holds a line break is one record, its lines taken together. */
static void
skip_header_records(input *in, size_t records, int d, char **head, size_t *len)
{
	size_t hl = 0, cap = 0, from = 0, n;
	char *h = NULL, *s;

	*head = NULL;
	*len = 0;
	if (records == 0 || table_is_npy(in))
		return;
	for (size_t i = 0; i < records && (s = in_getline(in, &n)) != NULL;) {
		if (hl + n + 1 > cap) {
			cap = MAX(2 * cap, hl + n + 1 + 256);
			h = xrealloc(h, cap);
		}
		memcpy(h + hl, s, n);
		h[hl + n] = '\n';
		hl += n + 1;
		size_t k, bad;
		const char *te, *next;
		uint64_t lines;
		if (table_csv_record(h + from, h + hl, d, 0, NULL, 0, &k, &te, &next, &lines, &bad) !=
		    REC_MORE) {
			from = hl;
			i++;
		}
	}
	*head = h;
	*len = hl;
}

/* t->cols and t->first_line from the first data row, looked at without taking it:
 * the chunks that parse the rows need the width from their start. */
static void
find_width(struct table *t)
{
	size_t want = (size_t)1 << 16, avail;

	for (;;) {
		const char *p = (const char *)in_peek(t->in, want, &avail), *end = p + avail;
		uint64_t line = in_lineno(t->in);
		if (t->opts.delim != TABLE_BLANKS) {
			const char *s = p, *te, *next;
			size_t n, bad;
			uint64_t lines;
			char err[CHUNK_ERR];
			enum rec r = REC_SKIP;
			while (s < end && (r = table_csv_record(s, end, t->opts.delim, avail < want, NULL,
			    0, &n, &te, &next, &lines, &bad)) == REC_SKIP) {
				line += lines;
				s = next;
			}
			if (r == REC_ROW) {
				t->cols = n;
				t->first_line = line + 1;
				return;
			}
			if (r == REC_OPEN || r == REC_AFTER) {
				table_csv_error(r, bad, t->opts.share && ranks_size() > 1, err, sizeof err);
				die_at(t->name, line + 1, "%s", err);
			}
			if (s == end && avail < want)
				return;		/* no data rows */
			want = mul_size(want, 2, "line");
			continue;
		}
		for (const char *s = p;;) {
			const char *nl = memchr(s, '\n', (size_t)(end - s));
			if (nl == NULL && avail == want)
				break;		/* a line longer than what is peeked */
			if (nl == NULL && s == end)
				return;		/* no data rows */
			const char *le = nl != NULL ? nl : end;
			if (le > s && le[-1] == '\r')
				le--;
			line++;
			size_t bad, n = table_split(s, le, t->opts.delim, NULL, 0, &bad);
			if (n == SIZE_MAX)
				die_at(t->name, line, "empty field in column %zu", bad);
			if (n > 0) {
				t->cols = n;
				t->first_line = line;
				return;
			}
			if (nl == NULL)
				return;
			s = nl + 1;
		}
		want = mul_size(want, 2, "line");
	}
}

static void
open_in(input *in, const struct table_opts *o, struct table *t)
{
	memset(t, 0, sizeof *t);
	t->in = in;
	t->name = xstrdup(in_name(t->in));
	t->opts = *o;
	if (table_is_npy(t->in)) {
		/* <f4 stays float: the reader checks the header; this only looks for <f8 */
		size_t avail;
		const unsigned char *p = in_peek(t->in, 12, &avail);
		enum dtype dt = DT_F32;
		size_t pre = avail == 12 && p[6] != 1 ? 12 : 10;
		size_t hlen = avail < 12 ? 0 : p[8] | (size_t)p[9] << 8 |
		    (pre == 12 ? (size_t)p[10] << 16 | (size_t)p[11] << 24 : 0);
		if (hlen <= ((size_t)1 << 20)) {
			p = in_peek(t->in, pre + hlen, &avail);
			for (size_t i = pre; i + 3 <= avail; i++)
				if (memcmp(p + i, "<f8", 3) == 0)
					dt = DT_F64;
		}
		t->npy = 1;
		if (o->share)
			mat_read_share(t->in, dt, 0, &t->m, &t->row0, &t->rows_total);
		else
			mat_read(t->in, dt, 0, &t->m);
		if (!o->share)
			t->rows_total = t->m.rows;
		t->cols = t->m.cols;
		in_close(t->in);
		t->in = NULL;
		return;
	}
	if (o->share)
		ranks_serial_begin();
	if (o->share && ranks_size() > 1)
		in_need_shares(t->in, t->name);
	if (o->delim == TABLE_BLANKS)
		table_skip_header(t->in, o->header, &t->head, &t->head_len);
	else
		skip_header_records(t->in, o->header, o->delim, &t->head, &t->head_len);
	find_width(t);
	if (o->share) {
		ranks_serial_end();
		in_share_lines(t->in);
	}
}

void
table_open(const char *path, const struct table_opts *o, struct table *t)
{
	if (o->share)
		ranks_serial_begin();	/* a file that cannot be opened: said once */
	open_in(in_open(path), o, t);
}

/* ---- the rows, in chunks ---- */

struct tctx {
	struct table_opts o;
	size_t cols, k;
	const size_t *pos;	/* pos[j] for j < cols: its place among the chosen, or
				   SIZE_MAX */
	uint64_t first_line;
	rowplace *rp;		/* the threads write the chosen numbers into the table */
	rowplace *tp;		/* keep_text: and the rows' text (a "row" a byte) */
};

/* A chunk's rows: their chosen numbers, lines (within the chunk) and text. */
struct tres {
	char *val;
	uint64_t *line, *toff;
	size_t nrows, cap;
	char *text;
	size_t tlen, tcap;
	struct span *f;		/* a row's fields: room for cols + 1 */
};

/* The number in field [s, e), blanks around it allowed, into *v; 0, or the error in
 * err. Bytes up to lim (>= e) may be read: past e, with the default separators, the
 * field's end is a byte no number holds, so a plain decimal is read eight digits a step
 * to its end (with a delimiter, lim is e: the delimiter could be a digit). */
static int
field_number(const struct tctx *x, const char *s, const char *e, const char *lim,
    size_t col, double *v, char *err, size_t errsz)
{
	while (s < e && table_is_blank(*s))
		s++;
	while (e > s && table_is_blank(e[-1]))
		e--;
	if (s == e) {
		snprintf(err, errsz, "empty field in column %zu", col);
		return -1;
	}
	static const unsigned char any[256] = {[0 ... 255] = 1};	/* the end is checked here */
	if (parse_plain(s, lim, any, v) == e)
		return 0;	/* a plain decimal: finite and within float32's range */
	const char *q = parse_double(s, v);
	if (q > e) {
		/* the delimiter could go on a number (-t e): parse the field alone */
		char *copy = xmalloc((size_t)(e - s) + 1);
		memcpy(copy, s, (size_t)(e - s));
		copy[e - s] = '\0';
		q = s + (parse_double(copy, v) - copy);
		free(copy);
	}
	if (q != e) {
		size_t len = (size_t)(e - s);
		snprintf(err, errsz, "column %zu: not a number: '%.*s'%s%s", col, (int)MIN(len, 40),
		    s, len > 40 ? "..." : "", x->o.hint != NULL ? x->o.hint : "");
		return -1;
	}
	if (!isfinite(*v)) {
		snprintf(err, errsz, "column %zu: %s is not allowed", col, isnan(*v) ? "NaN" : "Inf");
		return -1;
	}
	if (x->o.dt == DT_F32 && isinf((float)*v)) {
		snprintf(err, errsz, "column %zu: %.*s is beyond the float32 range", col,
		    (int)MIN((size_t)(e - s), 40), s);
		return -1;
	}
	return 0;
}

/* Row n of fields f, of line `line` within c and text [s, s + len), into r; 0, or the
 * error in err. lim: as field_number's, the line's end with the default separators,
 * else NULL. */
static int
keep_row(const struct tctx *x, struct tres *r, size_t n, const char *s, size_t len,
    const char *lim, uint64_t line, char *err, size_t errsz)
{
	size_t esz = dtype_size(x->o.dt);

	if (r->nrows == r->cap) {
		r->cap = r->cap ? 2 * r->cap : 1024;
		r->val = xreallocarray(r->val, mul_size(r->cap, MAX(x->k, 1), "rows"), esz);
		r->line = xreallocarray(r->line, r->cap, sizeof *r->line);
		r->toff = xreallocarray(r->toff, r->cap, sizeof *r->toff);
	}
	/* the width first: in a row of another width the columns are not those chosen (a
	 * name with a blank, say) */
	if (n != x->cols) {
		snprintf(err, errsz, "row has %zu columns, expected %zu as on line %llu", n,
		    x->cols, (unsigned long long)x->first_line);
		return -1;
	}
	char *row = r->val + r->nrows * x->k * esz;
	for (size_t j = 0; j < n; j++) {
		double v;
		if (x->pos[j] == SIZE_MAX)
			continue;
		if (field_number(x, r->f[j].s, r->f[j].e, lim != NULL ? lim : r->f[j].e, j + 1,
		    &v, err, errsz) != 0)
			return -1;
		if (x->o.dt == DT_F32)
			((float *)(void *)row)[x->pos[j]] = (float)v;
		else
			((double *)(void *)row)[x->pos[j]] = v;
	}
	if (x->o.keep_text) {
		if (r->tlen + len + 1 > r->tcap) {
			r->tcap = MAX(2 * r->tcap, r->tlen + len + 1 + 4096);
			r->text = xrealloc(r->text, r->tcap);
		}
		memcpy(r->text + r->tlen, s, len);
		r->text[r->tlen + len] = '\n';
		r->toff[r->nrows] = r->tlen;
		r->tlen += len + 1;
	}
	r->line[r->nrows++] = line;
	return 0;
}

/* A chunk parsed whole: its numbers and text may go into the table from this thread
 * (rowplace.h; every row has the k chosen numbers, keep_row saw to it). */
static void
placed(const struct tctx *x, const struct chunk *c, const struct tres *r)
{
	if (x->rp != NULL)
		rp_parsed(x->rp, c->index, r->nrows, r->val, x->k * dtype_size(x->o.dt));
	if (x->tp != NULL)
		rp_parsed(x->tp, c->index, r->tlen, r->text, 1);
}

/* A chunk with a '"' in it, split by a delimiter: records through csv_record, whose
 * quoted fields may hold line breaks (the chunk's cut, table_cut, keeps such records
 * whole). A row's text is the record as written, line breaks and quotes included. */
static void
parse_quoted(const struct tctx *x, struct chunk *c, struct tres *r)
{
	const char *s = c->data, *end = s + c->len, *te, *next;
	uint64_t line = 0, lines;
	char err[CHUNK_ERR];
	size_t n, bad;

	while (s < end) {
		enum rec k = table_csv_record(s, end, x->o.delim, 1, r->f, x->cols + 1, &n, &te, &next,
		    &lines, &bad);
		if (k == REC_OPEN || k == REC_AFTER) {
			table_csv_error(k, bad, x->o.share && ranks_size() > 1, err, sizeof err);
			return chunk_fail(c, line + 1, "%s", err);
		}
		if (k == REC_ROW &&
		    keep_row(x, r, n, s, (size_t)(te - s), NULL, line + 1, err, sizeof err) != 0)
			return chunk_fail(c, line + 1, "%s", err);
		line += lines;
		s = next;
	}
	c->lines = line;
	placed(x, c, r);
}

static void
parse_chunk(void *ctx, struct chunk *c)
{
	const struct tctx *x = ctx;
	struct tres *r = c->res;
	size_t len;
	struct chunk_lines it;
	char err[CHUNK_ERR];

	if (r == NULL) {
		r = c->res = xcalloc(1, sizeof *r);
		r->f = xmallocarray(x->cols + 1, sizeof *r->f);
	}
	r->nrows = 0;
	r->tlen = 0;
	if (x->o.delim != TABLE_BLANKS && memchr(c->data, '"', c->len) != NULL)
		return parse_quoted(x, c, r);
	int blanks = x->o.delim == TABLE_BLANKS;
	chunk_lines_init(&it, c);
	for (const char *s; (s = chunk_line(&it, &len)) != NULL;) {
		size_t bad, n = blanks ? table_split_plain(s, len, r->f, x->cols + 1) : SIZE_MAX - 1;
		if (n == SIZE_MAX - 1)
			n = table_split(s, s + len, x->o.delim, r->f, x->cols + 1, &bad);
		if (n == 0)
			continue;
		if (n == SIZE_MAX)
			return chunk_fail(c, it.n, "empty field in column %zu", bad);
		if (keep_row(x, r, n, s, len, blanks ? s + len : NULL, it.n, err, sizeof err) != 0)
			return chunk_fail(c, it.n, "%s", err);
	}
	c->lines = it.n;
	placed(x, c, r);
}

/* The chunks' cut: at lines, unless a '"' (with a delimiter) may open a quoted field
 * that holds a line break: then after the last whole record. */
static size_t
table_cut(void *ctx, const char *p, size_t len, int *hint)
{
	const struct tctx *x = ctx;
	const char *s = p, *end = p + len, *te, *next;
	uint64_t lines;
	size_t n, bad;

	if (x->o.delim == TABLE_BLANKS || memchr(p, '"', len) == NULL)
		return chunk_cut_lines(p, len, hint);
	while (s < end && table_csv_record(s, end, x->o.delim, 0, NULL, 0, &n, &te, &next, &lines,
	    &bad) != REC_MORE)
		s = next;
	return (size_t)(s - p);
}

static void
free_res(void *res)
{
	struct tres *r = res;
	free(r->val);
	free(r->line);
	free(r->toff);
	free(r->text);
	free(r->f);
	free(r);
}

static const struct chunk_ops table_ops = {.parse = parse_chunk, .free_res = free_res, .cut_ctx = table_cut};
/* Fields split by blanks: no quoting, lines are records (and the threads read them). */
static const struct chunk_ops table_line_ops = {.cut = chunk_cut_lines, .parse = parse_chunk,
    .free_res = free_res};

static void
load_text(struct table *t)
{
	struct tctx x = {t->opts, t->cols, t->k, NULL, t->first_line, NULL, NULL};
	size_t *pos = xmallocarray(MAX(t->cols, 1), sizeof *pos);
	size_t esz = dtype_size(t->opts.dt), rows = 0, cap = 0, tlen = 0;

	for (size_t j = 0; j < t->cols; j++)
		pos[j] = SIZE_MAX;
	for (size_t j = 0; j < t->k; j++)
		pos[t->col[j]] = j;
	x.pos = pos;
	t->m.dtype = t->opts.dt;
	t->m.cols = t->k;
	if (t->k > 0) {		/* the numbers from the parsing threads; else no numbers */
		x.rp = rp_new(chunks_slots());
		rp_width(x.rp, mul_size(t->k, esz, "row"));
	}
	if (t->opts.keep_text) {
		x.tp = rp_new(chunks_slots());
		rp_width(x.tp, 1);
	}
	chunks *e = chunks_open(t->in, x.o.delim == TABLE_BLANKS ? &table_line_ops : &table_ops,
	    &x);
	for (struct chunk *c; (c = chunks_next(e)) != NULL;) {
		const struct tres *r = c->res;
		if (rows + r->nrows > cap) {
			cap = MAX(rows + r->nrows, 2 * cap);
			if (x.rp == NULL)
				t->m.data = xreallocarray(t->m.data, mul_size(cap, MAX(t->k, 1), "rows"), esz);
			t->lineno = xreallocarray(t->lineno, cap, sizeof *t->lineno);
			if (t->opts.keep_text)
				t->line = xreallocarray(t->line, cap + 1, sizeof *t->line);
		}
		if (x.rp != NULL)	/* a chunk whose first line is bad has no values */
			rp_take(x.rp, c->index, r->nrows, r->val);
		for (size_t i = 0; i < r->nrows; i++)
			t->lineno[rows + i] = c->line0 + r->line[i];
		if (t->opts.keep_text) {
			rp_take(x.tp, c->index, r->tlen, r->text);
			for (size_t i = 0; i < r->nrows; i++)
				t->line[rows + i] = tlen + r->toff[i];
			tlen += r->tlen;
		}
		rows += r->nrows;
		if (c->err_line != 0)
			chunk_die(e, c);
	}
	chunks_close(e);
	size_t placed;
	if (x.rp != NULL)
		t->m.data = rp_finish(x.rp, &placed);
	if (x.tp != NULL)
		t->text = rp_finish(x.tp, &placed);
	if (t->opts.keep_text) {
		t->line = xreallocarray(t->line, rows + 1, sizeof *t->line);
		t->line[rows] = tlen;
	}
	t->m.rows = rows;
	free(pos);
}

void
table_load(struct table *t, const size_t *col, size_t k)
{
	t->k = k;
	t->col = xmallocarray(MAX(k, 1), sizeof *t->col);
	t->mcol = xmallocarray(MAX(k, 1), sizeof *t->mcol);
	for (size_t j = 0; j < k; j++) {
		t->col[j] = col[j];
		t->mcol[j] = t->npy ? col[j] : j;
	}
	if (t->npy)
		return;
	if (t->cols > 0)
		load_text(t);
	else
		t->m.dtype = t->opts.dt;
	in_close(t->in);
	t->in = NULL;
	t->rows_total = t->m.rows;
	if (t->opts.share && ranks_size() > 1) {
		t->row0 = ranks_exscan_u64(t->m.rows);
		int64_t n = (int64_t)t->m.rows;
		ranks_sum_i64(&n, 1);
		t->rows_total = (uint64_t)n;
	}
}

/* ---- rows gathered on rank 0 ---- */

/* A row on the wire: its global index, line number and text length, then its numbers
 * (m.cols of m's type), then its text. */
struct wire {
	uint64_t index, lineno, tlen;
};

void
table_gather_rows(struct table *t, const uint32_t *keep, size_t m, uint64_t **index)
{
	size_t esz = dtype_size(t->m.dtype), vb = t->m.cols * esz, bytes = 0;
	int text = t->opts.keep_text && !t->npy;	/* alike on every rank */

	for (size_t i = 0; i < m; i++) {
		size_t len = 0;
		if (text)
			table_row_text(t, keep[i], &len);
		bytes += sizeof(struct wire) + vb + len;
	}
	char *buf = xmalloc(MAX(bytes, 1)), *p = buf;
	for (size_t i = 0; i < m; i++) {
		size_t len = 0;
		const char *s = text ? table_row_text(t, keep[i], &len) : NULL;
		struct wire w = {t->row0 + keep[i], t->npy ? 0 : t->lineno[keep[i]], len};
		memcpy(p, &w, sizeof w);
		memcpy(p + sizeof w, (const char *)t->m.data + keep[i] * vb, vb);
		if (len > 0)
			memcpy(p + sizeof w + vb, s, len);
		p += sizeof w + vb + len;
	}
	size_t total;
	char *all = ranks_gather(buf, bytes, &total);
	free(buf);

	/* every rank: t holds the gathered rows (none but on rank 0) */
	size_t rows = 0, tl = 0;
	for (size_t at = 0; all != NULL && at < total; rows++) {
		struct wire w;
		memcpy(&w, all + at, sizeof w);
		at += sizeof w + vb + (size_t)w.tlen;
		tl += (size_t)w.tlen;
	}
	*index = xmallocarray(MAX(rows, 1), sizeof **index);
	free(t->m.data);
	t->m.data = xmallocarray(MAX(rows, 1), MAX(vb, 1));
	free(t->lineno);
	t->lineno = xmallocarray(MAX(rows, 1), sizeof *t->lineno);
	if (text) {
		free(t->text);
		free(t->line);
		t->text = xmalloc(MAX(tl, 1));
		t->line = xmallocarray(rows + 1, sizeof *t->line);
	}
	size_t at = 0, to = 0;
	for (size_t i = 0; i < rows; i++) {
		struct wire w;
		memcpy(&w, all + at, sizeof w);
		(*index)[i] = w.index;
		t->lineno[i] = w.lineno;
		memcpy((char *)t->m.data + i * vb, all + at + sizeof w, vb);
		if (text) {
			t->line[i] = to;
			memcpy(t->text + to, all + at + sizeof w + vb, (size_t)w.tlen);
			to += (size_t)w.tlen;
		}
		at += sizeof w + vb + (size_t)w.tlen;
	}
	if (text)
		t->line[rows] = to;
	t->m.rows = rows;
	t->row0 = 0;
	free(all);
}

void
table_read(const char *path, const struct table_opts *o, const struct fields *f,
    struct table *t)
{
	table_read_in(in_open(path), o, f, t);
}

void
table_read_in(input *in, const struct table_opts *o, const struct fields *f,
    struct table *t)
{
	static const struct fields every = {NULL, 0, NULL};
	open_in(in, o, t);
	if (f == NULL)
		f = &every;
	size_t *col = xmallocarray(MAX(t->cols, 1), sizeof *col);
	size_t k = t->cols > 0 ? fields_resolve(f, t->cols, t->name, col) : 0;
	table_load(t, col, k);
	free(col);
}

void
table_free(struct table *t)
{
	in_close(t->in);
	mat_free(&t->m);
	free(t->col);
	free(t->mcol);
	free(t->text);
	free(t->line);
	free(t->lineno);
	free(t->head);
	free((char *)t->name);
	memset(t, 0, sizeof *t);
}

void
table_die_row(const struct table *t, size_t i, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (t->npy)
		die("%s: row %zu: %s", t->name, i + 1, msg);
	die_at(t->name, t->lineno[i], "%s", msg);
}

void *
table_columns(const struct table *t, const size_t *sel, size_t k, enum dtype dt,
    const char *what, int *owned)
{
	size_t n = t->m.rows;
	size_t *mc = xmallocarray(MAX(k, 1), sizeof *mc);
	int laid_out = t->m.dtype == dt && t->m.cols == k;

	for (size_t c = 0; c < k; c++) {
		mc[c] = t->mcol[sel != NULL ? sel[c] : c];
		laid_out &= mc[c] == c;
	}
	*owned = !laid_out;
	if (laid_out) {
		free(mc);
		return t->m.data;
	}
	void *out = xmallocarray(mul_size(MAX(n, 1), MAX(k, 1), "columns"), dtype_size(dt));
	size_t bad = SIZE_MAX;
	#pragma omp parallel for reduction(min:bad) if (n > 100000)
	for (size_t i = 0; i < n; i++)
		for (size_t c = 0; c < k; c++) {
			size_t o = i * t->m.cols + mc[c];
			double v = t->m.dtype == DT_F64 ? ((const double *)t->m.data)[o] :
			    ((const float *)t->m.data)[o];
			if (dt == DT_F64) {
				((double *)out)[k * i + c] = v;
			} else {
				((float *)out)[k * i + c] = (float)v;
				if (isinf((float)v))
					bad = MIN(bad, i);
			}
		}
	free(mc);
	if (bad != SIZE_MAX) {
		free(out);
		table_die_row(t, bad, "%s is beyond the float32 range", what);
	}
	return out;
}
