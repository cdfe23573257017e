/* sparse.c: SVMlight/libsvm and MatrixMarket coordinate readers (see sparse.h). */
#include "sparse.h"

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "chunks.h"
#include "err.h"
#include "numparse.h"

/* A MatrixMarket row's index when read: its CSR pointer and its fill counter. */
#define MM_ROW_BYTES 16

void
csr_free(struct csr *m)
{
	free(m->ptr);
	free(m->idx);
	free(m->val);
	memset(m, 0, sizeof *m);
}

static int
is_blank(int c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/* An unsigned decimal integer at *p (digits only); 0 on no digits or overflow. */
static int
parse_u64(const char **p, uint64_t *v)
{
	const char *s = *p;
	uint64_t x = 0;
	if ((unsigned)(*s - '0') >= 10)
		return 0;
	for (; (unsigned)(*s - '0') < 10; s++) {
		unsigned d = (unsigned)(*s - '0');
		if (x > (UINT64_MAX - d) / 10)
			return 0;
		x = x * 10 + d;
	}
	*p = s;
	*v = x;
	return 1;
}

/* A finite value that fits a float, ending at a blank, '#' or the end; else a message. */
static const char *
parse_value(const char *s, const char *end, float *out, const char **next)
{
	double v;
	const char *e = parse_double(s, &v);
	if (e == s || e > end || !(e == end || is_blank(*e) || *e == '#'))
		return "not a number";
	if (!isfinite(v))
		return "not a finite number";
	/* beyond FLT_MAX only when it rounds to Inf: 3.4028235e38, FLT_MAX as the writers
	 * print it, is a little more than FLT_MAX before rounding */
	if (isinf((float)v))
		return "out of range for a float";
	*out = (float)v;
	*next = e;
	return NULL;
}

#define SVM_ERR 160

/* One libsvm line: entries into idx/val when not NULL. Returns the entry count, or -1
 * with a message in err. */
static long
svm_line(const char *s, size_t len, uint32_t *idx, float *val, double *label, char *err)
{
	const char *p = s, *end = s + len;
	long n = 0;
	int first = 1, seen_feature = 0;
	uint32_t prev = 0;

	if (label != NULL)
		*label = NAN;
	for (;;) {
		while (p < end && is_blank(*p))
			p++;
		if (p == end || *p == '#')
			return n;
		const char *tok = p;
		size_t tlen = 0;
		while (tok + tlen < end && !is_blank(tok[tlen]) && tok[tlen] != '#')
			tlen++;
		const char *colon = memchr(tok, ':', tlen);
		if (colon == NULL) {
			/* the label: numbers joined by commas */
			if (!first)
				goto bad_token;
			const char *q = tok;
			for (int k = 0;; k++) {
				double v;
				const char *e = parse_double(q, &v);
				if (e == q || e > tok + tlen || !isfinite(v))
					goto bad_token;
				if (k == 0 && label != NULL)
					*label = v;
				q = e;
				if (q == tok + tlen)
					break;
				if (*q++ != ',')
					goto bad_token;
			}
			p = tok + tlen;
			first = 0;
			continue;
		}
		first = 0;
		if (colon - tok == 3 && memcmp(tok, "qid", 3) == 0) {
			const char *q = colon + 1;
			uint64_t qid;
			if (seen_feature || !parse_u64(&q, &qid) || q != tok + tlen)
				goto bad_token;
			p = q;
			continue;
		}
		const char *q = tok;
		uint64_t ix;
		if (!parse_u64(&q, &ix) || q != colon)
			goto bad_token;
		if (ix >= UINT32_MAX) {
			snprintf(err, SVM_ERR, "index %llu is out of range (at most %u)",
			    (unsigned long long)ix, UINT32_MAX - 1);
			return -1;
		}
		if (seen_feature && ix <= prev) {
			if (ix == prev)
				snprintf(err, SVM_ERR, "index %llu appears twice", (unsigned long long)ix);
			else
				snprintf(err, SVM_ERR, "index %llu is out of order (after %u; indexes must ascend)",
				    (unsigned long long)ix, prev);
			return -1;
		}
		float v;
		const char *msg = parse_value(colon + 1, tok + tlen, &v, &p);
		if (msg != NULL) {
			snprintf(err, SVM_ERR, "index %llu: value '%.*s' is %s", (unsigned long long)ix,
			    (int)MIN(tok + tlen - colon - 1, 40), colon + 1, msg);
			return -1;
		}
		if (idx != NULL) {
			idx[n] = (uint32_t)ix;
			val[n] = v;
		}
		n++;
		prev = (uint32_t)ix;
		seen_feature = 1;
		continue;
bad_token:
		snprintf(err, SVM_ERR, "expected INDEX:VALUE%s, found '%.*s'%s",
		    seen_feature || !first ? "" : " or a label", (int)MIN(tlen, 40), tok,
		    tlen > 40 ? "..." : "");
		return -1;
	}
}

int
svm_line_ok(const char *s, size_t len, int *features)
{
	char err[SVM_ERR];
	long n = svm_line(s, len, NULL, NULL, NULL, err);
	*features = n > 0;
	return n >= 0;
}

/* svm_parse, but an error comes back (as the line index, with the message in err)
 * instead of ending the program; SIZE_MAX when there is none. */
static size_t
svm_parse_lines(const char *const *line, const size_t *len, size_t n, struct csr *m,
    double *labels, char *err)
{
	uint64_t *ptr = xmallocarray(n + 1, sizeof *ptr);
	size_t bad = SIZE_MAX;
	char badmsg[SVM_ERR] = "";
	uint32_t maxidx = 0;
	int any = 0;

	ptr[0] = 0;
	#pragma omp parallel
	{
		size_t mybad = SIZE_MAX;
		char msg[SVM_ERR], mymsg[SVM_ERR] = "";
		#pragma omp for schedule(static)
		for (size_t i = 0; i < n; i++) {
			long c = svm_line(line[i], len[i], NULL, NULL, labels ? &labels[i] : NULL, msg);
			if (c < 0) {
				c = 0;
				if (i < mybad) {
					mybad = i;
					memcpy(mymsg, msg, sizeof msg);
				}
			}
			ptr[i + 1] = (uint64_t)c;
		}
		#pragma omp critical(svm_parse_err)
		if (mybad < bad) {
			bad = mybad;
			memcpy(badmsg, mymsg, sizeof mymsg);
		}
	}
	if (bad != SIZE_MAX) {
		free(ptr);
		memcpy(err, badmsg, sizeof badmsg);
		return bad;
	}
	for (size_t i = 0; i < n; i++)
		ptr[i + 1] += ptr[i];
	uint64_t nnz = ptr[n];
	uint32_t *idx = xmallocarray(nnz ? nnz : 1, sizeof *idx);
	float *val = xmallocarray(nnz ? nnz : 1, sizeof *val);
	#pragma omp parallel
	{
		uint32_t mymax = 0;
		int myany = 0;
		char msg[SVM_ERR];
		#pragma omp for schedule(static)
		for (size_t i = 0; i < n; i++) {
			uint64_t a = ptr[i], b = ptr[i + 1];
			if (a == b)
				continue;
			svm_line(line[i], len[i], idx + a, val + a, NULL, msg);
			myany = 1;
			if (idx[b - 1] > mymax)
				mymax = idx[b - 1];
		}
		#pragma omp critical(svm_parse_max)
		{
			if (myany && mymax > maxidx)
				maxidx = mymax;
			any |= myany;
		}
	}
	m->rows = n;
	m->cols = any ? (size_t)maxidx + 1 : 0;
	m->ptr = ptr;
	m->idx = idx;
	m->val = val;
	return SIZE_MAX;
}

void
svm_parse(const char *const *line, const size_t *len, size_t n, const char *file,
    uint64_t first_line, struct csr *m, double *labels)
{
	char err[SVM_ERR];
	size_t bad = svm_parse_lines(line, len, n, m, labels, err);
	if (bad != SIZE_MAX)
		die_at(file, first_line + bad, "%s", err);
}

/* ---- libsvm in chunks (chunks.h) ---- */

/* A chunk's rows: entries per line, the entries, the labels. */
struct svm_res {
	size_t n, cap;
	uint64_t *cnt;
	double *label;
	uint32_t *idx;
	float *val;
	size_t nnz, capnz;
};

static void
svm_parse_chunk(void *ctx, struct chunk *c)
{
	struct svm_res *r = c->res;
	struct chunk_lines it;
	const char *s;
	size_t len;
	char err[SVM_ERR];

	(void)ctx;
	if (r == NULL)
		r = c->res = xcalloc(1, sizeof *r);
	r->n = r->nnz = 0;
	chunk_lines_init(&it, c);
	while ((s = chunk_line(&it, &len)) != NULL) {
		if (r->n == r->cap) {
			r->cap = MAX(1024, 2 * r->cap);
			r->cnt = xreallocarray(r->cnt, r->cap, sizeof *r->cnt);
			r->label = xreallocarray(r->label, r->cap, sizeof *r->label);
		}
		if (r->capnz - r->nnz < len / 2 + 1) {	/* an entry takes 3 bytes or more */
			r->capnz = MAX(2 * r->capnz, r->nnz + len / 2 + 1);
			r->idx = xreallocarray(r->idx, r->capnz, sizeof *r->idx);
			r->val = xreallocarray(r->val, r->capnz, sizeof *r->val);
		}
		long k = svm_line(s, len, r->idx + r->nnz, r->val + r->nnz, &r->label[r->n], err);
		if (k < 0)
			return chunk_fail(c, it.n, "%s", err);
		r->cnt[r->n++] = (uint64_t)k;
		r->nnz += (size_t)k;
	}
	c->lines = it.n;
}

static void
svm_free_res(void *res)
{
	struct svm_res *r = res;
	free(r->cnt);
	free(r->label);
	free(r->idx);
	free(r->val);
	free(r);
}

static const struct chunk_ops svm_ops = {.cut = chunk_cut_lines,
    .parse = svm_parse_chunk, .free_res = svm_free_res};

void
svm_read(input *in, struct csr *m, double **labels)
{
	size_t n = 0, cap = 1024, nnz = 0, capnz = 1024;
	uint64_t *ptr = xmallocarray(cap + 1, sizeof *ptr);
	uint32_t *idx = xmallocarray(capnz, sizeof *idx), maxidx = 0;
	float *val = xmallocarray(capnz, sizeof *val);
	double *lab = labels != NULL ? xmallocarray(cap, sizeof *lab) : NULL;
	int any = 0;
	chunks *e = chunks_open(in, &svm_ops, NULL);
	struct chunk *c;

	ptr[0] = 0;
	while ((c = chunks_next(e)) != NULL) {
		const struct svm_res *r = c->res;
		if (c->err_line != 0) {
			free(ptr);
			free(idx);
			free(val);
			free(lab);
			chunk_die(e, c);
		}
		if (n + r->n > cap) {
			cap = MAX(2 * cap, n + r->n);
			ptr = xreallocarray(ptr, cap + 1, sizeof *ptr);
			if (lab != NULL)
				lab = xreallocarray(lab, cap, sizeof *lab);
		}
		if (nnz + r->nnz > capnz) {
			capnz = MAX(2 * capnz, nnz + r->nnz);
			idx = xreallocarray(idx, capnz, sizeof *idx);
			val = xreallocarray(val, capnz, sizeof *val);
		}
		memcpy(idx + nnz, r->idx, r->nnz * sizeof *idx);
		memcpy(val + nnz, r->val, r->nnz * sizeof *val);
		if (lab != NULL)
			memcpy(lab + n, r->label, r->n * sizeof *lab);
		for (size_t i = 0; i < r->n; i++) {
			ptr[n + 1] = ptr[n] + r->cnt[i];
			if (r->cnt[i] > 0) {
				any = 1;
				maxidx = MAX(maxidx, idx[ptr[n + 1] - 1]);	/* ascending: the last is the largest */
			}
			n++;
		}
		nnz += r->nnz;
	}
	chunks_close(e);
	m->rows = n;
	m->cols = any ? (size_t)maxidx + 1 : 0;
	m->ptr = ptr;
	m->idx = idx;
	m->val = val;
	if (labels != NULL)
		*labels = lab;
}

int
mm_is_banner(const char *s, size_t len)
{
	return len >= 14 && strncmp(s, "%%MatrixMarket", 14) == 0;
}

struct mm_entry {
	uint64_t line;
	uint32_t row, col;
	float val;
};

static int
entry_cmp(const void *a, const void *b)
{
	const struct mm_entry *x = a, *y = b;
	if (x->col != y->col)
		return x->col < y->col ? -1 : 1;
	return x->line < y->line ? -1 : x->line > y->line;
}

/* The next blank-separated word of the banner, lowercased into w (cap bytes). */
static int
banner_word(char **p, char *w, size_t cap)
{
	size_t n = 0;
	while (is_blank(**p))
		(*p)++;
	while (**p != '\0' && !is_blank(**p)) {
		if (n + 1 < cap)
			w[n++] = (char)((**p >= 'A' && **p <= 'Z') ? **p + 32 : **p);
		(*p)++;
	}
	w[n] = '\0';
	return n > 0;
}

/* ---- MatrixMarket entries in chunks (chunks.h) ---- */

struct mm_ctx {
	uint64_t rows, cols;
	int pattern, symmetric;
};

/* A chunk's entries, one a line, 0-based, with their lines within the chunk. */
struct mm_res {
	struct mm_entry *e;
	size_t n, cap;
};

/* One entry line, NUL-terminated; 0 for a blank or comment line, 1 for an entry, -1
 * with the message in err. */
static int
mm_entry_line(const struct mm_ctx *x, const char *q, struct mm_entry *out, char *err)
{
	uint64_t i, j;
	float v = 1;
	const char *expected = x->pattern ? "expected 'ROW COL'" : "expected 'ROW COL VALUE'";

	while (is_blank(*q))
		q++;
	if (*q == '%' || *q == '\0')
		return 0;
	if (!parse_u64(&q, &i) || !is_blank(*q))
		return snprintf(err, SVM_ERR, "%s", expected), -1;
	while (is_blank(*q))
		q++;
	if (!parse_u64(&q, &j) || !(is_blank(*q) || *q == '\0'))
		return snprintf(err, SVM_ERR, "%s", expected), -1;
	while (is_blank(*q))
		q++;
	if (!x->pattern) {
		const char *end = q + strlen(q), *next;
		if (*q == '\0')
			return snprintf(err, SVM_ERR, "missing value"), -1;
		const char *msg = parse_value(q, end, &v, &next);
		if (msg != NULL || *next == '#')
			return snprintf(err, SVM_ERR, "value '%.*s' is %s",
			    (int)MIN(strcspn(q, " \t\r"), 40), q, msg ? msg : "not a number"), -1;
		q = next;
		while (is_blank(*q))
			q++;
	}
	if (*q != '\0')
		return snprintf(err, SVM_ERR, "unexpected text after the entry: '%.20s'", q), -1;
	if (i < 1 || i > x->rows || j < 1 || j > x->cols)
		return snprintf(err, SVM_ERR, "entry (%llu, %llu) is outside the %llu x %llu matrix",
		    (unsigned long long)i, (unsigned long long)j, (unsigned long long)x->rows,
		    (unsigned long long)x->cols), -1;
	if (x->symmetric && j > i)
		return snprintf(err, SVM_ERR,
		    "entry (%llu, %llu) is above the diagonal of a symmetric matrix",
		    (unsigned long long)i, (unsigned long long)j), -1;
	out->row = (uint32_t)(i - 1);
	out->col = (uint32_t)(j - 1);
	out->val = v;
	return 1;
}

static void
mm_parse_chunk(void *ctx, struct chunk *c)
{
	const struct mm_ctx *x = ctx;
	struct mm_res *r = c->res;
	struct chunk_lines it;
	const char *s;
	size_t len;
	char err[SVM_ERR];

	if (r == NULL)
		r = c->res = xcalloc(1, sizeof *r);
	r->n = 0;
	chunk_lines_init(&it, c);
	while ((s = chunk_line(&it, &len)) != NULL) {
		((char *)s)[len] = '\0';	/* the line as in_getline gives it */
		if (r->n == r->cap) {
			r->cap = MAX(1024, 2 * r->cap);
			r->e = xreallocarray(r->e, r->cap, sizeof *r->e);
		}
		int k = mm_entry_line(x, s, &r->e[r->n], err);
		if (k < 0)
			return chunk_fail(c, it.n, "%s", err);
		if (k > 0)
			r->e[r->n++].line = it.n;
	}
	c->lines = it.n;
}

static void
mm_free_res(void *res)
{
	struct mm_res *r = res;
	free(r->e);
	free(r);
}

static const struct chunk_ops mm_ops = {.cut = chunk_cut_lines,
    .parse = mm_parse_chunk, .free_res = mm_free_res};

void
mm_read(input *in, struct csr *m)
{
	const char *file = in_name(in);
	char *line, w[5][32];
	size_t len;
	int pattern, symmetric;

	line = in_getline(in, &len);
	if (line == NULL || !mm_is_banner(line, len))
		die_at(file, 1, "not a MatrixMarket file (expected '%%%%MatrixMarket matrix coordinate ...')");
	char *p = line;
	for (int i = 0; i < 5; i++)
		if (!banner_word(&p, w[i], sizeof w[i]))
			die_at(file, 1, "incomplete MatrixMarket banner (expected '%%%%MatrixMarket matrix coordinate FIELD SYMMETRY')");
	if (strcmp(w[1], "matrix") != 0)
		die_at(file, 1, "MatrixMarket object '%s' is not supported (only 'matrix')", w[1]);
	if (strcmp(w[2], "coordinate") != 0)
		die_at(file, 1, "MatrixMarket format '%s' is not supported (only 'coordinate'; give dense arrays as dense text or NPY)", w[2]);
	if (strcmp(w[3], "real") != 0 && strcmp(w[3], "double") != 0 && strcmp(w[3], "integer") != 0 &&
	    strcmp(w[3], "pattern") != 0)
		die_at(file, 1, "MatrixMarket field '%s' is not supported (real, integer or pattern)", w[3]);
	if (strcmp(w[4], "general") != 0 && strcmp(w[4], "symmetric") != 0)
		die_at(file, 1, "MatrixMarket symmetry '%s' is not supported (general or symmetric)", w[4]);
	pattern = strcmp(w[3], "pattern") == 0;
	symmetric = strcmp(w[4], "symmetric") == 0;

	/* the size line, after comments and blank lines */
	uint64_t rows, cols, count;
	for (;;) {
		line = in_getline(in, &len);
		if (line == NULL)
			die_at(file, in_lineno(in) + 1, "missing the size line 'ROWS COLS ENTRIES'");
		const char *q = line;
		while (is_blank(*q))
			q++;
		if (*q == '%' || *q == '\0')
			continue;
		if (!parse_u64(&q, &rows) || !is_blank(*q))
			goto bad_size;
		while (is_blank(*q))
			q++;
		if (!parse_u64(&q, &cols) || !is_blank(*q))
			goto bad_size;
		while (is_blank(*q))
			q++;
		if (!parse_u64(&q, &count))
			goto bad_size;
		while (is_blank(*q))
			q++;
		if (*q != '\0')
			goto bad_size;
		break;
bad_size:
		die_at(file, in_lineno(in), "expected the size line 'ROWS COLS ENTRIES'");
	}
	if (rows >= UINT32_MAX || cols >= UINT32_MAX)
		die_at(file, in_lineno(in), "matrix of %llu x %llu is too large (at most %u rows and columns)",
		    (unsigned long long)rows, (unsigned long long)cols, UINT32_MAX - 1);
	if (rows != 0 && count / rows > cols)
		die_at(file, in_lineno(in), "%llu entries cannot fit a %llu x %llu matrix",
		    (unsigned long long)count, (unsigned long long)rows, (unsigned long long)cols);
	if (symmetric && rows != cols)
		die_at(file, in_lineno(in), "a symmetric matrix must be square (%llu x %llu)",
		    (unsigned long long)rows, (unsigned long long)cols);
	/* Empty rows are legal and cost nothing in the file, but their index (ptr and fill
	 * below, 16 bytes a row, and the documents' arrays after) is memory: a size line
	 * that asks for more than half the host's is refused before anything is read. */
	uint64_t mem = host_memory();
	if (mem > 0 && (rows + 1) > mem / 2 / MM_ROW_BYTES)
		die_at(file, in_lineno(in), "%llu rows need %.1f GiB for their index alone, more "
		    "than half this host's memory (%.1f GiB)", (unsigned long long)rows,
		    (double)(rows + 1) * MM_ROW_BYTES / (1u << 30), (double)mem / (1u << 30));

	/* entries, parsed in chunks; the array grows with what is read, whatever the
	 * header promises */
	struct mm_ctx x = {rows, cols, pattern, symmetric};
	size_t cap = (size_t)MIN(count * (symmetric ? 2 : 1), (uint64_t)1 << 16) + 1, ne = 0;
	struct mm_entry *e = xmallocarray(cap, sizeof *e);
	uint64_t seen = 0;
	chunks *ch = chunks_open(in, &mm_ops, &x);
	struct chunk *c;
	while ((c = chunks_next(ch)) != NULL) {
		const struct mm_res *r = c->res;
		for (size_t k = 0; k <= r->n; k++) {
			/* the count first: a line past it is the error, whatever it holds */
			if (k == r->n && c->err_line == 0)
				break;
			uint64_t ln = c->line0 + (k < r->n ? r->e[k].line : c->err_line);
			if (seen == count) {
				free(e);
				die_at(file, ln, "more entries than the %llu the size line gives",
				    (unsigned long long)count);
			}
			if (k == r->n) {
				free(e);
				chunk_die(ch, c);
			}
			const struct mm_entry *m = &r->e[k];
			seen++;
			for (int mirror = 0; mirror <= (symmetric && m->row != m->col); mirror++) {
				if (ne == cap) {
					cap *= 2;
					e = xreallocarray(e, cap, sizeof *e);
				}
				e[ne].line = ln;
				e[ne].row = mirror ? m->col : m->row;
				e[ne].col = mirror ? m->row : m->col;
				e[ne].val = m->val;
				ne++;
			}
		}
	}
	chunks_close(ch);
	if (seen < count) {
		free(e);
		die_at(file, in_lineno(in), "only %llu of the %llu entries the size line gives",
		    (unsigned long long)seen, (unsigned long long)count);
	}

	/* rows by a counting sort (stable), then each row by column */
	uint64_t *ptr = xcalloc((size_t)rows + 1, sizeof *ptr);
	for (size_t k = 0; k < ne; k++)
		ptr[e[k].row + 1]++;
	for (uint64_t r = 0; r < rows; r++)
		ptr[r + 1] += ptr[r];
	struct mm_entry *s = xmallocarray(ne ? ne : 1, sizeof *s);
	uint64_t *fill = xmallocarray((size_t)rows + 1, sizeof *fill);
	memcpy(fill, ptr, ((size_t)rows + 1) * sizeof *fill);
	for (size_t k = 0; k < ne; k++)
		s[fill[e[k].row]++] = e[k];
	free(fill);
	free(e);
	uint32_t *idx = xmallocarray(ne ? ne : 1, sizeof *idx);
	float *val = xmallocarray(ne ? ne : 1, sizeof *val);
	for (uint64_t r = 0; r < rows; r++) {
		struct mm_entry *a = s + ptr[r];
		size_t k = (size_t)(ptr[r + 1] - ptr[r]);
		qsort(a, k, sizeof *a, entry_cmp);
		for (size_t t = 0; t < k; t++) {
			if (t > 0 && a[t].col == a[t - 1].col) {
				uint64_t ln = MAX(a[t].line, a[t - 1].line), col = a[t].col;
				free(s);
				free(ptr);
				free(idx);
				free(val);
				die_at(file, ln, "entry (%llu, %llu) appears twice", (unsigned long long)r + 1,
				    (unsigned long long)col + 1);
			}
			idx[ptr[r] + t] = a[t].col;
			val[ptr[r] + t] = a[t].val;
		}
	}
	free(s);
	m->rows = (size_t)rows;
	m->cols = (size_t)cols;
	m->ptr = ptr;
	m->idx = idx;
	m->val = val;
}
