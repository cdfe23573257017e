/* gmm_native.c: gmmscore's own text model format (see gmm.h):
 *
 *   gmm NAME K D
 *   w mean[D] var[D]		(K lines, one a component)
 *
 * '#' starts a comment; blank lines are skipped.
 *
 * Parsed on the -j threads: the file is cut at its header lines (lines whose first word
 * is "gmm"), the headers are read, the model set is allocated, and each model's lines
 * are parsed straight into it, one model a task. Each model keeps its first error; the
 * first in file order is reported, the one a single pass from the top would meet. */
#include <ctype.h>
#include <omp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "gmm_read.h"
#include "numparse.h"

/* One model's stretch of the file, from its header to the next model's. */
struct seg {
	size_t start, end;	/* the "gmm" of its header; the next header or the end */
	size_t body;		/* after its header's counts */
	char *name;
	long k, d;
	size_t first;		/* its first component in the set */
	int store;		/* its numbers have room in the set (else only checked) */
	size_t err_off;		/* its first error, when err != NULL */
	char *err;
};

static int
fail(struct seg *s, size_t off, const char *fmt, ...) PRINTF_LIKE(3, 4);

static int
fail(struct seg *s, size_t off, const char *fmt, ...)
{
	char msg[700];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	s->err = xstrdup(msg);
	s->err_off = off;
	return -1;
}

/* Past blanks and comment lines, within [pos, end). */
static size_t
skip_blank(const char *buf, size_t pos, size_t end)
{
	for (;;) {
		while (pos < end && isspace((unsigned char)buf[pos]))
			pos++;
		if (pos < end && buf[pos] == '#') {
			const char *nl = memchr(buf + pos, '\n', end - pos);
			pos = nl ? (size_t)(nl - buf) : end;
			continue;
		}
		return pos;
	}
}

/* Whether a line starting at p (before its leading blanks) is a header line. */
static int
header_at(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\v' || *p == '\f'))
		p++;
	return end - p >= 3 && memcmp(p, "gmm", 3) == 0 &&
	    (end - p == 3 || isspace((unsigned char)p[3]));
}

/* The header lines of buf[0..len), in order, on the threads: each takes the lines that
 * start in its share of the bytes. */
static size_t *
find_headers(const char *buf, size_t len, size_t *nhead)
{
	int nt = len > GMM_PAR_BYTES ? omp_get_max_threads() : 1;
	size_t **part = xcalloc((size_t)nt, sizeof *part);
	size_t *npart = xcalloc((size_t)nt, sizeof *npart);

	#pragma omp parallel for schedule(static, 1) num_threads(nt)
	for (int t = 0; t < nt; t++) {
		size_t a = len * (size_t)t / (size_t)nt, b = len * (size_t)(t + 1) / (size_t)nt;
		size_t cap = 0;
		/* the first line that starts at or after a */
		const char *p = buf + a, *end = buf + len;
		if (a > 0 && buf[a - 1] != '\n') {
			p = memchr(p, '\n', len - a);
			p = p != NULL ? p + 1 : end;
		}
		while (p < buf + b) {
			if (header_at(p, end)) {
				if (npart[t] == cap) {
					cap = cap ? 2 * cap : 64;
					part[t] = xreallocarray(part[t], cap, sizeof *part[t]);
				}
				while (*p != 'g')
					p++;
				part[t][npart[t]++] = (size_t)(p - buf);
			}
			const char *nl = memchr(p, '\n', (size_t)(end - p));
			p = nl != NULL ? nl + 1 : end;
		}
	}
	size_t n = 0;
	for (int t = 0; t < nt; t++)
		n += npart[t];
	size_t *head = xmallocarray(n + 1, sizeof *head);
	n = 0;
	for (int t = 0; t < nt; t++) {
		if (npart[t] > 0)
			memcpy(head + n, part[t], npart[t] * sizeof *head);
		n += npart[t];
		free(part[t]);
	}
	free(part);
	free(npart);
	*nhead = n;
	return head;
}

/* "gmm NAME K D" at s->start. */
static int
parse_header(const char *buf, struct seg *s)
{
	struct gmm_cur c = {.buf = buf, .len = s->end, .pos = s->start + 3, .end = s->end};
	char name[256];
	long k, d;

	gmm_cur_token(&c, name, sizeof name);
	if (name[0] == '\0' || gmm_cur_int(&c, &k) < 0 || gmm_cur_int(&c, &d) < 0 || k <= 0 ||
	    d <= 0 || k > (1L << 24) || d > (1L << 16))
		return fail(s, s->start, "expected 'gmm NAME COMPONENTS DIMS' with positive counts");
	s->name = xstrdup(name);
	s->k = k;
	s->d = d;
	s->body = c.pos;
	return 0;
}

/* The component lines of model s, into w, mean and ivar (or only checked, when
 * !s->store); row has room for 2D + 2 numbers, lpos for K line starts. */
static int
parse_body(const char *buf, size_t len, struct seg *s, double *row, size_t *lpos,
    struct gmm_models *m)
{
	const long k = s->k, d = s->d;
	const size_t width = 1 + 2 * (size_t)d;
	size_t pos = s->body;

	for (long i = 0; i < k; i++) {
		/* One line: weight, means, variances; blank and comment lines between. */
		pos = skip_blank(buf, pos, s->end);
		if (pos >= s->end) {
			if (s->end == len)
				return fail(s, len, "model '%s' ends after %ld of %ld components",
				    s->name, i, k);
			/* the next model's header, where this model's line should be */
			return fail(s, pos, "model '%s', component %ld: not a number: '%.*s'", s->name,
			    i + 1, gmm_toklen(buf + pos, buf + len), buf + pos);
		}
		const char *nl = memchr(buf + pos, '\n', s->end - pos);
		const char *p = buf + pos, *le = nl ? nl : buf + s->end;
		size_t n = 0;
		lpos[i] = pos;
		while (p < le) {
			while (p < le && isspace((unsigned char)*p))
				p++;
			if (p >= le || *p == '#')
				break;
			double v;
			const char *e = parse_double(p, &v);
			if (e == p || (e < le && !isspace((unsigned char)*e) && *e != '#'))
				return fail(s, pos, "model '%s', component %ld: not a number: '%.*s'",
				    s->name, i + 1, gmm_toklen(p, le), p);
			if (n <= width)
				row[n] = v;
			n++;
			p = e;
		}
		if (n != width)
			return fail(s, pos, "model '%s', component %ld: %zu numbers, expected %zu "
			    "(weight, %ld means, %ld variances)", s->name, i + 1, n, width, d, d);
		if (s->store) {
			size_t g = s->first + (size_t)i;
			m->weight[g] = row[0];
			for (long j = 0; j < d; j++) {
				m->mean[g * (size_t)d + (size_t)j] = row[1 + j];
				m->ivar[g * (size_t)d + (size_t)j] = 1 / row[1 + d + j];
			}
		}
		pos = (size_t)(le - buf);
	}
	pos = skip_blank(buf, pos, s->end);
	if (pos < s->end) {
		char tok[256];
		struct gmm_cur c = {.buf = buf, .len = len, .pos = pos, .end = s->end};
		return fail(s, pos, "expected 'gmm NAME COMPONENTS DIMS', found '%.40s'",
		    gmm_cur_token(&c, tok, sizeof tok));
	}
	if (!s->store)
		return 0;
	char msg[700];
	struct gmm_bad bad;
	const size_t o = s->first;
	if (gmm_check_model(msg, sizeof msg, s->name, (size_t)k, (int)d, m->weight + o,
	    m->mean + o * (size_t)d, m->ivar + o * (size_t)d, &bad) != NULL)
		/* a weight, mean or variance: its component's line; the sum: the header */
		return fail(s, bad.what == GMM_BAD_MODEL ? s->start : lpos[bad.comp], "%s", msg);
	return 0;
}

void
gmm_read_native(const char *path, const char *buf, size_t len, struct gmm_models *m)
{
	struct gmm_build b;
	size_t nseg;
	size_t *head = find_headers(buf, len, &nseg);

	gmm_build_init(&b, m, 0);
	/* Before the first header: blank and comment lines only. */
	size_t pos = skip_blank(buf, 0, nseg > 0 ? head[0] : len);
	if (pos < (nseg > 0 ? head[0] : len)) {
		char tok[256];
		struct gmm_cur c = {.buf = buf, .len = len, .pos = pos, .end = len};
		gmm_cur_token(&c, tok, sizeof tok);
		c.pos = pos;
		gmm_cur_fail(&c, "expected 'gmm NAME COMPONENTS DIMS', found '%.40s'", tok);
		gmm_cur_die(&c, path);
	}
	if (nseg == 0)
		die("%s: no models (expected 'gmm NAME COMPONENTS DIMS' lines)", path);
	head[nseg] = len;
	struct seg *sg = xcalloc(nseg, sizeof *sg);
	for (size_t i = 0; i < nseg; i++) {
		sg[i].start = head[i];
		sg[i].end = head[i + 1];
	}
	free(head);

	#pragma omp parallel for schedule(dynamic, 64) if (len > GMM_PAR_BYTES)
	for (size_t i = 0; i < nseg; i++)
		parse_header(buf, &sg[i]);
	/* The set is allocated for the models up to the first bad header; past it
	 * nothing is parsed, as a single pass would stop there. A model whose lines
	 * cannot fit in its stretch (each holds 2D + 1 numbers, two bytes each at
	 * least) is only checked, to find its error without allocating for it. */
	size_t upto = 0, nstore = 0, ncomp = 0;
	for (; upto < nseg && sg[upto].err == NULL; upto++) {
		struct seg *s = &sg[upto];
		if (m->dim == 0)
			m->dim = (int)s->d;
		if (s->d != m->dim) {
			fail(s, s->start, "model '%s' has dimension %ld, the first model's is %d",
			    s->name, s->d, m->dim);
			break;
		}
		if ((size_t)s->k * 2 * (2 * (size_t)s->d + 1) > s->end - s->body + 1) {
			upto++;
			break;
		}
		s->store = 1;
		nstore++;
		ncomp += (size_t)s->k;
	}
	gmm_build_reserve(&b, nstore, ncomp);
	for (size_t i = 0; i < upto; i++)
		if (sg[i].store)
			sg[i].first = gmm_build_add(&b, sg[i].name, (size_t)sg[i].k);
	#pragma omp parallel if (len > GMM_PAR_BYTES)
	{
		double *row = xmallocarray(2 * (size_t)m->dim + 2, sizeof *row);
		size_t *lpos = NULL, cap = 0;
		#pragma omp for schedule(dynamic, 16)
		for (size_t i = 0; i < upto; i++) {
			struct seg *s = &sg[i];
			if (s->err != NULL || s->d != m->dim)
				continue;
			if ((size_t)s->k > cap) {
				cap = (size_t)s->k;
				lpos = xreallocarray(lpos, cap, sizeof *lpos);
			}
			parse_body(buf, len, s, row, lpos, m);
		}
		free(row);
		free(lpos);
	}
	for (size_t i = 0; i < nseg; i++)
		if (sg[i].err != NULL)
			die_at(path, gmm_line_of(buf, sg[i].err_off), "%s", sg[i].err);
	for (size_t i = 0; i < nseg; i++)
		if (!sg[i].store)
			free(sg[i].name);	/* the stored ones are the set's */
	free(sg);
	m->format = "gmmscore text";
}
