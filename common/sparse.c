/* sparse.c: SVMlight/libsvm and MatrixMarket coordinate readers (see sparse.h). */
#include "sparse.h"

#include <float.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "err.h"
#include "numparse.h"

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
	if (fabs(v) > FLT_MAX)
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

void
svm_read(input *in, struct csr *m, double **labels)
{
	size_t len, n = 0, cap = 1024;
	char *text = in_slurp(in, &len);
	const char **line = xmallocarray(cap, sizeof *line);
	size_t *llen = xmallocarray(cap, sizeof *llen);

	for (char *p = text, *end = text + len; p < end;) {
		char *nl = memchr(p, '\n', (size_t)(end - p));
		char *e = nl ? nl : end;
		if (n == cap) {
			cap *= 2;
			line = xreallocarray(line, cap, sizeof *line);
			llen = xreallocarray(llen, cap, sizeof *llen);
		}
		line[n] = p;
		llen[n++] = (size_t)(e - p);
		p = nl ? nl + 1 : end;
	}
	if (labels != NULL)
		*labels = xmallocarray(n ? n : 1, sizeof **labels);
	char err[SVM_ERR];
	size_t bad = svm_parse_lines(line, llen, n, m, labels ? *labels : NULL, err);
	free(line);
	free(llen);
	free(text);
	if (bad != SIZE_MAX) {
		if (labels != NULL)
			free(*labels);
		die_at(in_name(in), 1 + bad, "%s", err);
	}
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

	/* entries; the array grows with what is read, whatever the header promises */
	size_t cap = (size_t)MIN(count * (symmetric ? 2 : 1), (uint64_t)1 << 16) + 1, ne = 0;
	struct mm_entry *e = xmallocarray(cap, sizeof *e);
	uint64_t seen = 0;
/* an error in an entry line: the entries so far go first */
#define ENTRY_FAIL(...) do { free(e); die_at(file, ln, __VA_ARGS__); } while (0)
	while ((line = in_getline(in, &len)) != NULL) {
		const char *q = line;
		uint64_t i, j;
		float v = 1;
		while (is_blank(*q))
			q++;
		if (*q == '%' || *q == '\0')
			continue;
		uint64_t ln = in_lineno(in);
		if (seen == count)
			ENTRY_FAIL("more entries than the %llu the size line gives", (unsigned long long)count);
		if (!parse_u64(&q, &i) || !is_blank(*q))
			ENTRY_FAIL("expected 'ROW COL%s'", pattern ? "" : " VALUE");
		while (is_blank(*q))
			q++;
		if (!parse_u64(&q, &j) || !(is_blank(*q) || *q == '\0'))
			ENTRY_FAIL("expected 'ROW COL%s'", pattern ? "" : " VALUE");
		while (is_blank(*q))
			q++;
		if (!pattern) {
			const char *end = q + strlen(q), *next;
			if (*q == '\0')
				ENTRY_FAIL("missing value");
			const char *msg = parse_value(q, end, &v, &next);
			if (msg != NULL || *next == '#')
				ENTRY_FAIL("value '%.*s' is %s", (int)MIN(strcspn(q, " \t\r"), 40), q,
				    msg ? msg : "not a number");
			q = next;
			while (is_blank(*q))
				q++;
		}
		if (*q != '\0')
			ENTRY_FAIL("unexpected text after the entry: '%.20s'", q);
		if (i < 1 || i > rows || j < 1 || j > cols)
			ENTRY_FAIL("entry (%llu, %llu) is outside the %llu x %llu matrix",
			    (unsigned long long)i, (unsigned long long)j, (unsigned long long)rows,
			    (unsigned long long)cols);
		if (symmetric && j > i)
			ENTRY_FAIL("entry (%llu, %llu) is above the diagonal of a symmetric matrix",
			    (unsigned long long)i, (unsigned long long)j);
		seen++;
		for (int mirror = 0; mirror <= (symmetric && i != j); mirror++) {
			if (ne == cap) {
				cap *= 2;
				e = xreallocarray(e, cap, sizeof *e);
			}
			e[ne].line = ln;
			e[ne].row = (uint32_t)(mirror ? j - 1 : i - 1);
			e[ne].col = (uint32_t)(mirror ? i - 1 : j - 1);
			e[ne].val = v;
			ne++;
		}
	}
#undef ENTRY_FAIL
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
