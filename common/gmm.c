/* gmm.c: what the GMM model readers share (see gmm.h and gmm_read.h): the format by
 * content, the whole file read or mapped, the model set under construction and the
 * checks every model passes. The formats themselves are gmm_kaldi.c, gmm_htk.c and
 * gmm_native.c. */
#include "gmm.h"

#include <ctype.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "decompress.h"
#include "err.h"
#include "gmm_read.h"
#include "input.h"
#include "timer.h"

#define WEIGHT_TOL 1e-3

/* ---- the model set under construction ---- */

void
gmm_build_init(struct gmm_build *b, struct gmm_models *m, int dim)
{
	memset(m, 0, sizeof *m);
	memset(b, 0, sizeof *b);
	b->m = m;
	m->dim = dim;
	m->off = xcalloc(1, sizeof *m->off);
}

size_t
gmm_build_add(struct gmm_build *b, char *name, size_t k)
{
	struct gmm_models *m = b->m;
	size_t d = (size_t)m->dim;

	if (m->nmodels == b->capm) {
		b->capm = b->capm ? 2 * b->capm : 64;
		m->names = xreallocarray(m->names, b->capm, sizeof *m->names);
		m->off = xreallocarray(m->off, b->capm + 1, sizeof *m->off);
	}
	size_t need = m->ncomp + k;
	if (need > b->capc) {
		b->capc = MAX(need, 2 * b->capc);
		b->capc = MAX(b->capc, (size_t)256);
		m->weight = xreallocarray(m->weight, b->capc, sizeof *m->weight);
		m->mean = xreallocarray(m->mean, mul_size(b->capc, d, "model"), sizeof *m->mean);
		m->ivar = xreallocarray(m->ivar, mul_size(b->capc, d, "model"), sizeof *m->ivar);
	}
	size_t first = m->ncomp;
	m->names[m->nmodels++] = name;
	m->ncomp = need;
	m->off[m->nmodels] = need;
	return first;
}

void
gmm_build_reserve(struct gmm_build *b, size_t nmodels, size_t ncomp)
{
	struct gmm_models *m = b->m;
	size_t d = (size_t)m->dim;

	b->capm = MAX(b->capm, nmodels);
	b->capc = MAX(b->capc, ncomp);
	m->names = xreallocarray(m->names, MAX(b->capm, (size_t)1), sizeof *m->names);
	m->off = xreallocarray(m->off, b->capm + 1, sizeof *m->off);
	m->weight = xreallocarray(m->weight, MAX(b->capc, (size_t)1), sizeof *m->weight);
	m->mean = xreallocarray(m->mean, MAX(mul_size(b->capc, d, "model"), (size_t)1),
	    sizeof *m->mean);
	m->ivar = xreallocarray(m->ivar, MAX(mul_size(b->capc, d, "model"), (size_t)1),
	    sizeof *m->ivar);
}

char *
gmm_build_name(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	return xstrdup(buf);
}

const char *
gmm_check_model(char *msg, size_t cap, const char *name, size_t k, int dim, const double *w,
    const double *mean, const double *ivar, struct gmm_bad *bad)
{
	double sum = 0;
	struct gmm_bad b = {GMM_BAD_MODEL, 0, 0};
	if (k == 0) {
		snprintf(msg, cap, "model '%s' has no components", name);
		goto fail;
	}
	for (size_t c = 0; c < k; c++) {
		b.comp = c;
		if (!(w[c] >= 0) || !isfinite(w[c])) {
			snprintf(msg, cap, "model '%s', component %zu: weight %g is negative", name,
			    c + 1, w[c]);
			b.what = GMM_BAD_WEIGHT;
			goto fail;
		}
		sum += w[c];
		for (int d = 0; d < dim; d++) {
			double iv = ivar[c * (size_t)dim + d];
			b.dim = d;
			if (!(iv > 0) || !isfinite(iv) || !isfinite(1 / iv)) {
				snprintf(msg, cap, "model '%s', component %zu, dimension %d: variance "
				    "%g is not positive and finite", name, c + 1, d + 1, 1 / iv);
				b.what = GMM_BAD_VAR;
				goto fail;
			}
			if (!isfinite(mean[c * (size_t)dim + d])) {
				snprintf(msg, cap, "model '%s', component %zu, dimension %d: the mean "
				    "is not finite", name, c + 1, d + 1);
				b.what = GMM_BAD_MEAN;
				goto fail;
			}
			/* The scorers keep s = sqrt(0.5 / variance) and -mean s in float32
			 * (kernels/gmmscore_pack.c): a variance so small (or a mean so large
			 * beside it) that they overflow would score every frame NaN. */
			double s = sqrt(0.5 * iv);
			if (!isfinite((float)s) || !isfinite((float)(mean[c * (size_t)dim + d] * s))) {
				snprintf(msg, cap, "model '%s', component %zu, dimension %d: variance "
				    "%g is too small for float32 scoring beside its mean %g", name,
				    c + 1, d + 1, 1 / iv, mean[c * (size_t)dim + d]);
				b.what = GMM_BAD_VAR;
				goto fail;
			}
		}
	}
	if (fabs(sum - 1) > WEIGHT_TOL) {
		snprintf(msg, cap, "model '%s': weights sum to %.9g, not 1 (within %g)", name,
		    sum, WEIGHT_TOL);
		b = (struct gmm_bad){GMM_BAD_MODEL, 0, 0};
		goto fail;
	}
	return NULL;
fail:
	if (bad != NULL)
		*bad = b;
	return msg;
}

int
gmm_toklen(const char *p, const char *end)
{
	int n = 0;
	while (p + n < end && n < 40 && p[n] != '\0' && !isspace((unsigned char)p[n]))
		n++;
	return n;
}

/* ---- a cursor over the whole file, with errors carried rather than raised, so that
 * parallel parsers can report the first error in file order ---- */

uint64_t
gmm_line_of(const char *buf, size_t off)
{
	uint64_t line = 1;
	for (const char *p = buf; (p = memchr(p, '\n', (size_t)(buf + off - p))) != NULL; p++)
		line++;
	return line;
}

int
gmm_cur_fail(struct gmm_cur *c, const char *fmt, ...)
{
	va_list ap;
	if (c->failed)
		return -1;
	c->failed = 1;
	c->err_off = c->pos;
	va_start(ap, fmt);
	vsnprintf(c->err, sizeof c->err, fmt, ap);
	va_end(ap);
	return -1;
}

void
gmm_cur_die(const struct gmm_cur *c, const char *path)
{
	if (c->binary)
		die_off(path, c->err_off, "%s", c->err);
	die_at(path, gmm_line_of(c->buf, c->err_off), "%s", c->err);
}

void
gmm_cur_space(struct gmm_cur *c)
{
	while (c->pos < c->end && isspace((unsigned char)c->buf[c->pos]))
		c->pos++;
}

const char *
gmm_cur_token(struct gmm_cur *c, char *tok, size_t cap)
{
	size_t n = 0;
	if (!c->binary)
		gmm_cur_space(c);
	while (c->pos < c->end && n + 1 < cap) {
		char ch = c->buf[c->pos];
		if (c->binary ? ch == ' ' : isspace((unsigned char)ch))
			break;
		tok[n++] = ch;
		c->pos++;
	}
	tok[n] = '\0';
	if (c->binary && c->pos < c->end && c->buf[c->pos] == ' ')
		c->pos++;
	return tok;
}

int
gmm_cur_int(struct gmm_cur *c, long *v)
{
	if (c->binary) {
		if (c->end - c->pos < 5 || c->buf[c->pos] != 4)
			return gmm_cur_fail(c, "expected a 4-byte integer");
		int32_t i;
		memcpy(&i, c->buf + c->pos + 1, 4);
		c->pos += 5;
		*v = i;
		return 0;
	}
	gmm_cur_space(c);
	char *end;
	*v = strtol(c->buf + c->pos, &end, 10);
	if (end == c->buf + c->pos)
		return gmm_cur_fail(c, "expected an integer");
	c->pos = (size_t)(end - c->buf);
	return 0;
}

/* ---- entry points ---- */

/* The format by content: Kaldi binary ("\0B"), Kaldi text, HTK MMF or gmmscore text. */
static void
models_parse(const char *name, const char *buf, size_t len, struct gmm_models *m)
{
	if (len >= 2 && buf[0] == '\0' && buf[1] == 'B') {
		gmm_read_kaldi(name, buf, len, m);
		return;
	}
	size_t i = 0;
	/* The first token, past blanks and '#' comment lines. */
	for (;;) {
		while (i < len && isspace((unsigned char)buf[i]))
			i++;
		if (i < len && buf[i] == '#') {
			while (i < len && buf[i] != '\n')
				i++;
			continue;
		}
		break;
	}
	if (i >= len)
		die("%s: empty model file", name);
	if (strncmp(buf + i, "<TransitionModel>", 17) == 0 ||
	    strncmp(buf + i, "<DIMENSION>", 11) == 0 || strncmp(buf + i, "<DiagGMM", 8) == 0)
		gmm_read_kaldi(name, buf, len, m);
	else if (buf[i] == '~' || buf[i] == '<')
		gmm_read_htk(name, buf, len, m);
	else if (strncmp(buf + i, "gmm", 3) == 0 && isspace((unsigned char)buf[i + 3]))
		gmm_read_native(name, buf, len, m);
	else
		die_at(name, gmm_line_of(buf, i), "not a model file: expected a Kaldi model "
		    "(<DiagGMM>, <DIMENSION> or <TransitionModel>), an HTK MMF (~o, ~h, ~s) "
		    "or 'gmm NAME COMPONENTS DIMS'");
}

/* A regular file is mapped rather than copied: Kaldi binary models are the large, fast
 * case, and text models are parsed in place by the -j threads. The mapping ends in at
 * least one zero byte (the rest of the file's last page is zero, and a file that fills
 * its last page is followed by a page of zeros), so that text is NUL-terminated as the
 * parsers need. Returns whether the file was mapped (and read). */
static int
load_mapped(const char *path, struct gmm_models *m)
{
	struct stat st;
	int fd, done = 0;

	if (path == NULL || strcmp(path, "-") == 0 || (fd = open(path, O_RDONLY)) < 0)
		return 0;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
		double t0 = now_sec();
		const size_t len = (size_t)st.st_size, page = (size_t)sysconf(_SC_PAGESIZE);
		const size_t total = (len / page + 1) * page;
		char *p = mmap(NULL, total, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p != MAP_FAILED && mmap(p, len, PROT_READ, MAP_PRIVATE | MAP_FIXED |
		    MAP_POPULATE, fd, 0) != MAP_FAILED &&
		    unz_detect((unsigned char *)p, MIN(len, UNZ_MAGIC_MAX)) <= UNZ_NONE) {
			/* compressed: read through input.c instead; a byte-order mark is
			 * not the model's */
			size_t skip = len >= 3 && memcmp(p, "\xef\xbb\xbf", 3) == 0 ? 3 : 0;
			phase_add("model read", now_sec() - t0);
			t0 = now_sec();
			models_parse(path, p + skip, len - skip, m);
			phase_add("model parse", now_sec() - t0);
			done = 1;
		}
		if (p != MAP_FAILED)
			munmap(p, total);
	}
	close(fd);
	return done;
}

void
gmm_models_load(const char *path, struct gmm_models *m)
{
	if (!load_mapped(path, m)) {
		double t0 = now_sec();
		input *in = in_open(path);
		size_t len;
		char *buf = in_slurp(in, &len);
		phase_add("model read", now_sec() - t0);
		t0 = now_sec();
		models_parse(in_name(in), buf, len, m);
		free(buf);
		in_close(in);
		phase_add("model parse", now_sec() - t0);
	}
	size_t maxk = 0;
	for (size_t i = 0; i < m->nmodels; i++)
		maxk = MAX(maxk, m->off[i + 1] - m->off[i]);
	vlog("models: %zu (%s), %zu Gaussians, up to %zu a model, %d dimensions", m->nmodels,
	    m->format, m->ncomp, maxk, m->dim);
}

void
gmm_models_free(struct gmm_models *m)
{
	for (size_t i = 0; i < m->nmodels; i++)
		free(m->names[i]);
	free(m->names);
	free(m->off);
	free(m->weight);
	free(m->mean);
	free(m->ivar);
	memset(m, 0, sizeof *m);
}
