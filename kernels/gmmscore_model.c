/* gmmscore_model.c: the model readers of gmmscore, and the scoring parameters.
 *
 * Formats, recognised by content:
 *   Kaldi, text or binary: one <DiagGMM> (gmm-global-copy), or <DIMENSION> D
 *     <NUMPDFS> P and P <DiagGMM>s (an acoustic model), perhaps after a
 *     <TransitionModel>; models are named by their 0-based pdf index. The stored
 *     <GCONSTS> are not trusted: scores use gconsts recomputed from the weights and
 *     variances, as Kaldi's own reader does.
 *   HTK MMF text with diagonal covariances: ~o, ~s, ~h, ~u, ~v, ~m, ~t macros; the
 *     scoring unit is the distinct state, named "hmm.N" or by its ~s macro.
 *   gmmscore's text format: "gmm NAME K D", then K lines "w mean[D] var[D]".
 * Kaldi text models are parsed in parallel, one <DiagGMM> a task. */
#include <ctype.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "err.h"
#include "gmmscore.h"
#include "input.h"
#include "numparse.h"
#include "timer.h"

#define WEIGHT_TOL 1e-3

/* ---- the model set under construction ---- */

struct gmm_build {
	struct gmm_models *m;
	size_t capm, capc;
};

static void
build_init(struct gmm_build *b, struct gmm_models *m, int dim)
{
	memset(m, 0, sizeof *m);
	memset(b, 0, sizeof *b);
	b->m = m;
	m->dim = dim;
	m->off = xcalloc(1, sizeof *m->off);
}

/* Room for one more model of k components; returns the index of its first component. */
static size_t
build_add(struct gmm_build *b, char *name, size_t k)
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

static char *
fmt_name(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	return xstrdup(buf);
}

/* Checks one model's weights and inverse variances; returns an error message
 * (static storage of the caller's buffer) or NULL. */
static const char *
check_model(char *msg, size_t cap, const char *name, size_t k, int dim, const double *w,
    const double *mean, const double *ivar)
{
	double sum = 0;
	if (k == 0) {
		snprintf(msg, cap, "model '%s' has no components", name);
		return msg;
	}
	for (size_t c = 0; c < k; c++) {
		if (!(w[c] >= 0) || !isfinite(w[c])) {
			snprintf(msg, cap, "model '%s', component %zu: weight %g is negative", name,
			    c + 1, w[c]);
			return msg;
		}
		sum += w[c];
		for (int d = 0; d < dim; d++) {
			double iv = ivar[c * (size_t)dim + d];
			if (!(iv > 0) || !isfinite(iv) || !isfinite(1 / iv)) {
				snprintf(msg, cap, "model '%s', component %zu, dimension %d: variance "
				    "%g is not positive and finite", name, c + 1, d + 1, 1 / iv);
				return msg;
			}
			if (!isfinite(mean[c * (size_t)dim + d])) {
				snprintf(msg, cap, "model '%s', component %zu, dimension %d: the mean "
				    "is not finite", name, c + 1, d + 1);
				return msg;
			}
		}
	}
	if (fabs(sum - 1) > WEIGHT_TOL) {
		snprintf(msg, cap, "model '%s': weights sum to %.9g, not 1 (within %g)", name,
		    sum, WEIGHT_TOL);
		return msg;
	}
	return NULL;
}

static uint64_t
line_of(const char *buf, size_t off)
{
	uint64_t line = 1;
	for (const char *p = buf; (p = memchr(p, '\n', (size_t)(buf + off - p))) != NULL; p++)
		line++;
	return line;
}

/* ---- a cursor over the whole file, with errors carried rather than raised, so that
 * parallel parsers can report the first error in file order ---- */

struct cur {
	const char *buf;	/* the whole file, NUL-terminated */
	size_t len, pos, end;	/* this cursor reads buf[pos..end) */
	int binary;
	int failed;
	size_t err_off;
	char err[600];
};

static int
fail(struct cur *c, const char *fmt, ...) PRINTF_LIKE(2, 3);

static int
fail(struct cur *c, const char *fmt, ...)
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

static void
cur_die(const struct cur *c, const char *path)
{
	if (c->binary)
		die_off(path, c->err_off, "%s", c->err);
	die_at(path, line_of(c->buf, c->err_off), "%s", c->err);
}

static void
skip_space(struct cur *c)
{
	while (c->pos < c->end && isspace((unsigned char)c->buf[c->pos]))
		c->pos++;
}

/* The next whitespace-delimited token (text), or up to the next space (binary, where
 * the space is consumed too). Copied into tok; "" at the end. */
static const char *
kaldi_token(struct cur *c, char *tok, size_t cap)
{
	size_t n = 0;
	if (!c->binary)
		skip_space(c);
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

static int
expect(struct cur *c, const char *want)
{
	char tok[64];
	size_t at = c->pos;
	kaldi_token(c, tok, sizeof tok);
	if (strcmp(tok, want) != 0) {
		c->pos = at;
		if (!c->binary)
			skip_space(c);
		return fail(c, "expected %s, found '%.40s'", want, tok);
	}
	return 0;
}

static int
kaldi_int(struct cur *c, long *v)
{
	if (c->binary) {
		if (c->end - c->pos < 5 || c->buf[c->pos] != 4)
			return fail(c, "expected a 4-byte integer");
		int32_t i;
		memcpy(&i, c->buf + c->pos + 1, 4);
		c->pos += 5;
		*v = i;
		return 0;
	}
	skip_space(c);
	char *end;
	*v = strtol(c->buf + c->pos, &end, 10);
	if (end == c->buf + c->pos)
		return fail(c, "expected an integer");
	c->pos = (size_t)(end - c->buf);
	return 0;
}

/* A Kaldi vector (rows = NULL) or matrix into a new array of doubles; a binary one is
 * only stepped over when out is NULL, and goes to `into` (room for that many numbers) when
 * that is given. */
static int
kaldi_array_into(struct cur *c, long *rows, long *cols, double **out, double *into,
    size_t room)
{
	if (out != NULL)
		*out = NULL;
	if (c->binary) {
		char tok[8];
		size_t at = c->pos;
		kaldi_token(c, tok, sizeof tok);
		int dbl = tok[0] == 'D', mat = rows != NULL;
		if (strcmp(tok + 1, mat ? "M" : "V") != 0 || (tok[0] != 'F' && tok[0] != 'D')) {
			c->pos = at;
			return fail(c, "expected a binary %s (FV/DV or FM/DM), found '%.8s'",
			    mat ? "matrix" : "vector", tok);
		}
		long r = 1, k;
		if ((mat && kaldi_int(c, &r) < 0) || kaldi_int(c, &k) < 0)
			return -1;
		if (r < 0 || k < 0 || r > (1L << 30) || k > (1L << 30))
			return fail(c, "implausible size %ld x %ld", r, k);
		size_t n = (size_t)r * (size_t)k, esz = dbl ? 8 : 4;
		if ((c->end - c->pos) / esz < n)
			return fail(c, "the file ends inside a %ld x %ld array", r, k);
		if (mat)
			*rows = r;
		*cols = k;
		if (out == NULL) {
			c->pos += n * esz;
			return 0;
		}
		if (into != NULL && n > room)
			return fail(c, "a %ld x %ld array where %zu numbers were expected", r, k, room);
		double *a = into != NULL ? into : xmallocarray(MAX(n, (size_t)1), sizeof *a);
		for (size_t i = 0; i < n; i++) {
			if (dbl) {
				memcpy(&a[i], c->buf + c->pos + 8 * i, 8);
			} else {
				float f;
				memcpy(&f, c->buf + c->pos + 4 * i, 4);
				a[i] = f;
			}
		}
		c->pos += n * esz;
		*out = a;
		return 0;
	}
	skip_space(c);
	if (c->pos >= c->end || c->buf[c->pos] != '[')
		return fail(c, "expected '['");
	c->pos++;
	size_t cap = 64, n = 0;
	long r = 0, width = -1, inrow = 0;
	double *a = xmallocarray(cap, sizeof *a);
	for (;;) {
		while (c->pos < c->end && isspace((unsigned char)c->buf[c->pos])) {
			if (c->buf[c->pos] == '\n' && inrow > 0) {
				if (width >= 0 && inrow != width && rows != NULL) {
					free(a);
					return fail(c, "matrix row %ld has %ld numbers, row 1 has %ld",
					    r + 1, inrow, width);
				}
				width = inrow;
				r++;
				inrow = 0;
			}
			c->pos++;
		}
		if (c->pos >= c->end) {
			free(a);
			return fail(c, "the file ends before ']'");
		}
		if (c->buf[c->pos] == ']') {
			c->pos++;
			break;
		}
		double v;
		const char *e = parse_double(c->buf + c->pos, &v);
		if (e == c->buf + c->pos || (*e && !isspace((unsigned char)*e) && *e != ']')) {
			free(a);
			return fail(c, "not a number: '%.20s'", c->buf + c->pos);
		}
		if (n == cap) {
			cap *= 2;
			a = xreallocarray(a, cap, sizeof *a);
		}
		a[n++] = v;
		inrow++;
		c->pos = (size_t)(e - c->buf);
	}
	if (inrow > 0) {
		if (width >= 0 && inrow != width && rows != NULL) {
			free(a);
			return fail(c, "matrix row %ld has %ld numbers, row 1 has %ld", r + 1, inrow,
			    width);
		}
		width = inrow;
		r++;
	}
	if (rows != NULL) {
		*rows = r;
		*cols = r > 0 ? width : 0;
	} else {
		*cols = (long)n;
	}
	*out = a;
	return 0;
}

static int
kaldi_array(struct cur *c, long *rows, long *cols, double **out)
{
	return kaldi_array_into(c, rows, cols, out, NULL, 0);
}

/* One <DiagGMM>: weights, mean and inverse variances, k components of dim. */
struct kgmm {
	long k, dim;
	double *w, *mean, *ivar;
	int direct;		/* binary: read into w, mean, ivar as given (k x dim) */
};

static int
kaldi_gmm(struct cur *c, struct kgmm *g)
{
	char tok[64];
	long kw, r, cols, r2, c2;
	double *mi = NULL;
	const int direct = g->direct && c->binary;
	const size_t kcap = direct ? (size_t)g->k : 0, mcap = kcap * (size_t)(direct ? g->dim : 0);

	if (direct)
		mi = g->mean;
	else
		memset(g, 0, sizeof *g);
	kaldi_token(c, tok, sizeof tok);
	if (strcmp(tok, "<DiagGMM>") != 0 && strcmp(tok, "<DiagGMMBegin>") != 0)
		return fail(c, "expected <DiagGMM>, found '%.40s'", tok);
	size_t at = c->pos;
	kaldi_token(c, tok, sizeof tok);
	if (strcmp(tok, "<GCONSTS>") == 0) {
		/* Read past, not trusted: recomputed from the variances. */
		double *gc = NULL;
		if (kaldi_array(c, NULL, &cols, c->binary ? NULL : &gc) < 0)
			return -1;
		free(gc);
		at = c->pos;
		kaldi_token(c, tok, sizeof tok);
	}
	if (strcmp(tok, "<WEIGHTS>") != 0) {
		c->pos = at;
		return fail(c, "expected <WEIGHTS>, found '%.40s'", tok);
	}
	if (kaldi_array_into(c, NULL, &kw, &g->w, direct ? g->w : NULL, kcap) < 0 ||
	    expect(c, "<MEANS_INVVARS>") < 0 ||
	    kaldi_array_into(c, &r, &cols, &mi, direct ? mi : NULL, mcap) < 0 ||
	    expect(c, "<INV_VARS>") < 0 ||
	    kaldi_array_into(c, &r2, &c2, &g->ivar, direct ? g->ivar : NULL, mcap) < 0)
		goto bad;
	if (r != kw || r2 != kw || c2 != cols || (direct && (kw != g->k || cols != g->dim))) {
		fail(c, "<WEIGHTS> has %ld entries, <MEANS_INVVARS> is %ld x %ld, <INV_VARS> "
		    "%ld x %ld", kw, r, cols, r2, c2);
		goto bad;
	}
	kaldi_token(c, tok, sizeof tok);
	if (strcmp(tok, "</DiagGMM>") != 0 && strcmp(tok, "<DiagGMMEnd>") != 0) {
		fail(c, "expected </DiagGMM>, found '%.40s'", tok);
		goto bad;
	}
	g->k = kw;
	g->dim = cols;
	/* mean = (mean * ivar) / ivar; a bad ivar is reported by check_model. */
	for (long i = 0; i < kw * cols; i++)
		mi[i] = mi[i] / g->ivar[i];
	g->mean = mi;
	return 0;
bad:
	if (!direct) {
		free(mi);
		free(g->w);
		free(g->ivar);
		memset(g, 0, sizeof *g);
	}
	return -1;
}

/* The model set of npdf Kaldi pdfs of the sizes in g[], named by index, allocated. */
static void
model_arrays(struct gmm_models *m, const struct kgmm *g, long npdf, long dim)
{
	struct gmm_build b;
	size_t ncomp = 0;
	for (long i = 0; i < npdf; i++)
		ncomp += (size_t)g[i].k;
	build_init(&b, m, (int)dim);
	b.capm = (size_t)npdf;
	b.capc = ncomp;
	m->names = xmallocarray((size_t)npdf, sizeof *m->names);
	m->off = xreallocarray(m->off, (size_t)npdf + 1, sizeof *m->off);
	m->weight = xmallocarray(ncomp, sizeof *m->weight);
	m->mean = xmallocarray(mul_size(ncomp, (size_t)dim, "model"), sizeof *m->mean);
	m->ivar = xmallocarray(mul_size(ncomp, (size_t)dim, "model"), sizeof *m->ivar);
	for (long i = 0; i < npdf; i++)
		build_add(&b, fmt_name("%ld", i), (size_t)g[i].k);
}

/* Steps over one binary <DiagGMM>, to find where the next begins and its size. */
static int
kaldi_skip_gmm(struct cur *c, long *ncomp, long *dim)
{
	char tok[64];
	long r = 0, k;

	kaldi_token(c, tok, sizeof tok);
	if (strcmp(tok, "<DiagGMM>") != 0 && strcmp(tok, "<DiagGMMBegin>") != 0)
		return fail(c, "expected <DiagGMM>, found '%.40s'", tok);
	for (;;) {
		size_t at = c->pos;
		kaldi_token(c, tok, sizeof tok);
		if (strcmp(tok, "</DiagGMM>") == 0 || strcmp(tok, "<DiagGMMEnd>") == 0)
			return 0;
		int mat = strcmp(tok, "<MEANS_INVVARS>") == 0 || strcmp(tok, "<INV_VARS>") == 0;
		if (!mat && strcmp(tok, "<GCONSTS>") != 0 && strcmp(tok, "<WEIGHTS>") != 0) {
			c->pos = at;
			return fail(c, "unexpected '%.40s' in a <DiagGMM>", tok);
		}
		if (kaldi_array(c, mat ? &r : NULL, &k, NULL) < 0)
			return -1;
		if (mat) {
			*ncomp = r;
			*dim = k;
		}
	}
}

static void
kaldi_load(const char *path, const char *buf, size_t len, struct gmm_models *m)
{
	struct cur c = {.buf = buf, .len = len, .end = len};
	char tok[64];
	long dim = -1, npdf = 1;
	int am = 0;

	if (len >= 2 && buf[0] == '\0' && buf[1] == 'B') {
		c.binary = 1;
		c.pos = 2;
	}
	size_t at = c.pos;
	kaldi_token(&c, tok, sizeof tok);
	if (strcmp(tok, "<TransitionModel>") == 0) {
		static const char endtok[] = "</TransitionModel>";
		const char *e = memmem(buf + c.pos, len - c.pos, endtok, sizeof endtok - 1);
		if (e == NULL) {
			fail(&c, "<TransitionModel> has no </TransitionModel>");
			cur_die(&c, path);
		}
		c.pos = (size_t)(e - buf) + sizeof endtok - 1;
		if (c.binary && c.pos < len && buf[c.pos] == ' ')
			c.pos++;
		at = c.pos;
		kaldi_token(&c, tok, sizeof tok);
	}
	if (strcmp(tok, "<DIMENSION>") == 0) {
		am = 1;
		if (kaldi_int(&c, &dim) < 0 || expect(&c, "<NUMPDFS>") < 0 ||
		    kaldi_int(&c, &npdf) < 0)
			cur_die(&c, path);
		if (dim <= 0 || npdf <= 0 || npdf > (1L << 28)) {
			fail(&c, "implausible <DIMENSION> %ld or <NUMPDFS> %ld", dim, npdf);
			cur_die(&c, path);
		}
	} else if (strcmp(tok, "<DiagGMM>") == 0 || strcmp(tok, "<DiagGMMBegin>") == 0) {
		c.pos = at;
	} else {
		c.pos = at;
		fail(&c, "expected <TransitionModel>, <DIMENSION> or <DiagGMM> (a Kaldi model "
		    "with diagonal GMMs), found '%.40s'", tok);
		cur_die(&c, path);
	}

	/* Where each <DiagGMM> begins (binary: stepping over the arrays; text: a scan
	 * for the token), then all of them parsed and checked in parallel. */
	size_t *start = xmallocarray((size_t)npdf + 1, sizeof *start);
	struct kgmm *g = xcalloc((size_t)npdf, sizeof *g);
	struct cur *cs = xcalloc((size_t)npdf, sizeof *cs);
	long found = 0;
	if (c.binary) {
		for (long i = 0; i < npdf; i++) {
			start[i] = c.pos;
			g[i].direct = 1;
			if (kaldi_skip_gmm(&c, &g[i].k, &g[i].dim) < 0)
				cur_die(&c, path);
			if (!am)
				dim = g[i].dim;
			if (g[i].dim != dim) {
				c.pos = start[i];
				fail(&c, "model '%ld' has dimension %ld, the models' is %ld", i, g[i].dim,
				    dim);
				cur_die(&c, path);
			}
		}
		start[npdf] = c.pos;
		if (c.pos != len) {
			fail(&c, "unexpected data after the last </DiagGMM>");
			cur_die(&c, path);
		}
	} else if (!am) {
		start[0] = c.pos;
		start[1] = len;
	} else {
		const char *p = buf + c.pos;
		while ((p = memmem(p, (size_t)(buf + len - p), "<DiagGMM", 8)) != NULL) {
			if (strncmp(p + 8, ">", 1) == 0 || strncmp(p + 8, "Begin>", 6) == 0) {
				if (found == npdf) {
					c.pos = (size_t)(p - buf);
					fail(&c, "more than <NUMPDFS> %ld <DiagGMM>s", npdf);
					cur_die(&c, path);
				}
				start[found++] = (size_t)(p - buf);
			}
			p += 8;
		}
		if (found < npdf) {
			c.pos = len;
			fail(&c, "<NUMPDFS> is %ld, the file has %ld <DiagGMM>s", npdf, found);
			cur_die(&c, path);
		}
		start[npdf] = len;
	}
	/* Binary: the numbers go straight to their place in the model set. */
	if (c.binary) {
		model_arrays(m, g, npdf, dim);
		for (long i = 0; i < npdf; i++) {
			size_t o = m->off[i];
			g[i].w = m->weight + o;
			g[i].mean = m->mean + o * (size_t)dim;
			g[i].ivar = m->ivar + o * (size_t)dim;
		}
	}
	#pragma omp parallel for schedule(dynamic, 16)
	for (long i = 0; i < npdf; i++) {
		char name[32], msg[700];
		cs[i] = c;
		cs[i].failed = 0;
		cs[i].pos = start[i];
		cs[i].end = start[i + 1];
		if (kaldi_gmm(&cs[i], &g[i]) < 0)
			continue;
		skip_space(&cs[i]);
		if (cs[i].pos != cs[i].end) {
			fail(&cs[i], "unexpected '%.20s' after </DiagGMM>", buf + cs[i].pos);
			continue;
		}
		cs[i].pos = start[i];
		snprintf(name, sizeof name, "%ld", i);
		if (!am)
			dim = g[i].dim;	/* one model: its own */
		if (g[i].dim != dim)
			fail(&cs[i], "model '%s' has dimension %ld, the models' is %ld", name, g[i].dim,
			    dim);
		else if (check_model(msg, sizeof msg, name, (size_t)g[i].k, (int)dim, g[i].w,
		    g[i].mean, g[i].ivar) != NULL)
			fail(&cs[i], "%s", msg);
	}
	for (long i = 0; i < npdf; i++)
		if (cs[i].failed)
			cur_die(&cs[i], path);
	if (!am)
		dim = g[0].dim;
	if (!c.binary) {
		model_arrays(m, g, npdf, dim);
		#pragma omp parallel for schedule(dynamic, 64)
		for (long i = 0; i < npdf; i++) {
			size_t o = m->off[i], n = (size_t)g[i].k * (size_t)dim;
			memcpy(m->weight + o, g[i].w, (size_t)g[i].k * sizeof(double));
			memcpy(m->mean + o * (size_t)dim, g[i].mean, n * sizeof(double));
			memcpy(m->ivar + o * (size_t)dim, g[i].ivar, n * sizeof(double));
			free(g[i].w);
			free(g[i].mean);
			free(g[i].ivar);
		}
	}
	free(g);
	free(cs);
	free(start);
	m->format = c.binary ? "Kaldi binary" : "Kaldi text";
}

/* ---- HTK MMF ---- */

struct macro {
	char type;
	char *name;
	double *v;		/* ~u, ~v: a vector; ~m: mean then variance; of dim */
};

struct mmf {
	struct cur c;
	const char *path;
	struct gmm_build b;
	int dim;		/* from <VECSIZE> or the first <MEAN>; 0 until known */
	struct macro *mac;
	size_t nmac, capmac;
	/* the state being read */
	size_t k, capk;
	double *w, *mean, *var;
};

static void
mmf_die(struct mmf *f)
{
	cur_die(&f->c, f->path);
}

/* The next MMF token: "<KEYWORD>" (upper-cased), "~x", a quoted or bare word, or a
 * number; "" at the end. Keywords may touch what follows them. */
static const char *
mmf_token(struct mmf *f, char *tok, size_t cap)
{
	struct cur *c = &f->c;
	size_t n = 0;
	skip_space(c);
	if (c->pos >= c->end) {
		tok[0] = '\0';
		return tok;
	}
	char ch = c->buf[c->pos];
	if (ch == '<') {
		while (c->pos < c->end && n + 1 < cap) {
			ch = c->buf[c->pos++];
			tok[n++] = (char)toupper((unsigned char)ch);
			if (ch == '>')
				break;
		}
	} else if (ch == '"') {
		c->pos++;
		while (c->pos < c->end && c->buf[c->pos] != '"' && n + 1 < cap)
			tok[n++] = c->buf[c->pos++];
		if (c->pos < c->end && c->buf[c->pos] == '"')
			c->pos++;
	} else if (ch == '~' && c->pos + 1 < c->end) {
		tok[n++] = ch;
		tok[n++] = (char)tolower((unsigned char)c->buf[c->pos + 1]);
		c->pos += 2;
	} else {
		while (c->pos < c->end && !isspace((unsigned char)c->buf[c->pos]) &&
		    c->buf[c->pos] != '<' && n + 1 < cap)
			tok[n++] = c->buf[c->pos++];
	}
	tok[n] = '\0';
	return tok;
}

/* The position of the next token, for messages about what starts there. */
static size_t
mmf_here(struct mmf *f)
{
	skip_space(&f->c);
	return f->c.pos;
}

/* Peeks at the next token without consuming it. */
static const char *
mmf_peek(struct mmf *f, char *tok, size_t cap)
{
	size_t at = f->c.pos;
	mmf_token(f, tok, cap);
	f->c.pos = at;
	return tok;
}

static double
mmf_number(struct mmf *f)
{
	struct cur *c = &f->c;
	skip_space(c);
	double v;
	const char *e = parse_double(c->buf + c->pos, &v);
	if (e == c->buf + c->pos) {
		fail(c, "expected a number, found '%.20s'", c->buf + c->pos);
		mmf_die(f);
	}
	c->pos = (size_t)(e - c->buf);
	return v;
}

static long
mmf_int(struct mmf *f)
{
	double v = mmf_number(f);
	if (v != floor(v) || v < 0 || v > (1 << 24)) {
		fail(&f->c, "expected a count, found %g", v);
		mmf_die(f);
	}
	return (long)v;
}

static void
mmf_set_dim(struct mmf *f, long n, const char *what)
{
	if (f->dim == 0) {
		f->dim = (int)n;
		f->b.m->dim = (int)n;
	} else if (n != f->dim) {
		fail(&f->c, "%s has %ld dimensions, the models have %d", what, n, f->dim);
		mmf_die(f);
	}
}

/* "<MEAN> n v..." or "<VARIANCE> n v...": the count, then n numbers into a new array. */
static double *
mmf_vector(struct mmf *f, const char *what)
{
	long n = mmf_int(f);
	mmf_set_dim(f, n, what);
	double *v = xmallocarray((size_t)n, sizeof *v);
	for (long i = 0; i < n; i++)
		v[i] = mmf_number(f);
	return v;
}

static struct macro *
mmf_find(struct mmf *f, char type, const char *name)
{
	for (size_t i = f->nmac; i-- > 0;)
		if (f->mac[i].type == type && strcmp(f->mac[i].name, name) == 0)
			return &f->mac[i];
	return NULL;
}

static struct macro *
mmf_ref(struct mmf *f, char type)
{
	char name[256];
	mmf_token(f, name, sizeof name);
	struct macro *m = mmf_find(f, type, name);
	if (m == NULL) {
		fail(&f->c, "macro ~%c \"%s\" is used before it is defined", type, name);
		mmf_die(f);
	}
	return m;
}

static struct macro *
mmf_new_macro(struct mmf *f, char type, const char *name)
{
	if (f->nmac == f->capmac) {
		f->capmac = f->capmac ? 2 * f->capmac : 64;
		f->mac = xreallocarray(f->mac, f->capmac, sizeof *f->mac);
	}
	struct macro *m = &f->mac[f->nmac++];
	memset(m, 0, sizeof *m);
	m->type = type;
	m->name = xstrdup(name);
	return m;
}

static void
unsupported(struct mmf *f, const char *what)
{
	fail(&f->c, "%s is not supported (diagonal-covariance, single-stream models only)",
	    what);
	mmf_die(f);
}

/* A mixture's mean and variance (a ~m reference, or [~u|<MEAN>] [~v|<VARIANCE>]
 * [<GCONST> g]) into the state's component k. */
static void
mmf_mixpdf(struct mmf *f, double weight)
{
	char tok[256];
	double *mean = NULL, *var = NULL;
	int own_mean = 0, own_var = 0;

	mmf_peek(f, tok, sizeof tok);
	if (strcmp(tok, "~m") == 0) {
		mmf_token(f, tok, sizeof tok);
		struct macro *m = mmf_ref(f, 'm');
		mean = m->v;
		var = m->v + f->dim;
	} else {
		mmf_token(f, tok, sizeof tok);
		if (strcmp(tok, "~u") == 0)
			mean = mmf_ref(f, 'u')->v;
		else if (strcmp(tok, "<MEAN>") == 0)
			mean = mmf_vector(f, "<MEAN>"), own_mean = 1;
		else {
			fail(&f->c, "expected <MEAN>, found '%.40s'", tok);
			mmf_die(f);
		}
		mmf_token(f, tok, sizeof tok);
		if (strcmp(tok, "~v") == 0)
			var = mmf_ref(f, 'v')->v;
		else if (strcmp(tok, "<VARIANCE>") == 0)
			var = mmf_vector(f, "<VARIANCE>"), own_var = 1;
		else if (strcmp(tok, "<INVCOVAR>") == 0 || strcmp(tok, "<LLTCOVAR>") == 0 ||
		    strcmp(tok, "<XFORM>") == 0 || strcmp(tok, "~i") == 0 || strcmp(tok, "~c") == 0 ||
		    strcmp(tok, "~x") == 0)
			unsupported(f, "a full covariance");
		else {
			fail(&f->c, "expected <VARIANCE>, found '%.40s'", tok);
			mmf_die(f);
		}
		if (strcmp(mmf_peek(f, tok, sizeof tok), "<GCONST>") == 0) {
			mmf_token(f, tok, sizeof tok);
			mmf_number(f);	/* recomputed */
		}
	}
	if (f->k == f->capk) {
		f->capk = f->capk ? 2 * f->capk : 32;
		f->w = xreallocarray(f->w, f->capk, sizeof *f->w);
		f->mean = xreallocarray(f->mean, f->capk * (size_t)f->dim, sizeof *f->mean);
		f->var = xreallocarray(f->var, f->capk * (size_t)f->dim, sizeof *f->var);
	}
	f->w[f->k] = weight;
	memcpy(f->mean + f->k * (size_t)f->dim, mean, (size_t)f->dim * sizeof *mean);
	memcpy(f->var + f->k * (size_t)f->dim, var, (size_t)f->dim * sizeof *var);
	f->k++;
	if (own_mean)
		free(mean);
	if (own_var)
		free(var);
}

/* A state's body (after <STATE> i, or after ~s "name"): becomes model `name`. */
static void
mmf_state(struct mmf *f, char *name, size_t at)
{
	char tok[256];
	long nmix = 1;

	f->k = 0;
	mmf_peek(f, tok, sizeof tok);
	if (strcmp(tok, "<NUMMIXES>") == 0) {
		mmf_token(f, tok, sizeof tok);
		nmix = mmf_int(f);
		if (isdigit((unsigned char)mmf_peek(f, tok, sizeof tok)[0]))
			unsupported(f, "a state of several streams");
	}
	for (;;) {
		mmf_peek(f, tok, sizeof tok);
		if (strcmp(tok, "<SWEIGHTS>") == 0 || strcmp(tok, "<STREAM>") == 0)
			unsupported(f, "a state of several streams");
		if (strcmp(tok, "<TMIX>") == 0)
			unsupported(f, "a tied-mixture state (<TMIX>)");
		if (strcmp(tok, "<RCLASS>") == 0) {
			mmf_token(f, tok, sizeof tok);
			mmf_number(f);
			continue;
		}
		break;
	}
	if (strcmp(tok, "<MIXTURE>") != 0) {
		mmf_mixpdf(f, 1.0);	/* one Gaussian, weight 1 */
	} else {
		while (strcmp(mmf_peek(f, tok, sizeof tok), "<MIXTURE>") == 0) {
			mmf_token(f, tok, sizeof tok);
			long i = mmf_int(f);
			double w = mmf_number(f);
			if (i < 1 || i > nmix) {
				fail(&f->c, "<MIXTURE> %ld of a state with <NUMMIXES> %ld", i, nmix);
				mmf_die(f);
			}
			mmf_mixpdf(f, w);
		}
	}
	size_t k = f->k, d = (size_t)f->dim;
	size_t first = build_add(&f->b, name, k);
	struct gmm_models *m = f->b.m;
	char msg[700];
	for (size_t c = 0; c < k; c++) {
		m->weight[first + c] = f->w[c];
		for (size_t j = 0; j < d; j++) {
			m->mean[(first + c) * d + j] = f->mean[c * d + j];
			m->ivar[(first + c) * d + j] = 1 / f->var[c * d + j];
		}
	}
	if (check_model(msg, sizeof msg, name, k, f->dim, m->weight + first, m->mean + first * d,
	    m->ivar + first * d) != NULL) {
		f->c.failed = 0;
		f->c.pos = at;
		fail(&f->c, "%s", msg);
		mmf_die(f);
	}
}

/* Global options (~o, or inside <BEGINHMM>): <VECSIZE>, <STREAMINFO> and kinds. */
static void
mmf_options(struct mmf *f)
{
	char tok[256];
	for (;;) {
		mmf_peek(f, tok, sizeof tok);
		if (strcmp(tok, "<VECSIZE>") == 0) {
			mmf_token(f, tok, sizeof tok);
			mmf_set_dim(f, mmf_int(f), "<VECSIZE>");
		} else if (strcmp(tok, "<STREAMINFO>") == 0) {
			mmf_token(f, tok, sizeof tok);
			long ns = mmf_int(f);
			if (ns != 1)
				unsupported(f, "a model of several streams");
			mmf_int(f);
		} else if (strcmp(tok, "<HMMSETID>") == 0) {
			mmf_token(f, tok, sizeof tok);
			mmf_token(f, tok, sizeof tok);
		} else if (strcmp(tok, "<FULLC>") == 0 || strcmp(tok, "<LLTC>") == 0 ||
		    strcmp(tok, "<INVDIAGC>") == 0 || strcmp(tok, "<XFORMC>") == 0) {
			unsupported(f, tok);
		} else if (tok[0] == '<' && strcmp(tok, "<BEGINHMM>") != 0 &&
		    strcmp(tok, "<NUMSTATES>") != 0 && strcmp(tok, "<ENDHMM>") != 0 &&
		    strcmp(tok, "<STATE>") != 0) {
			mmf_token(f, tok, sizeof tok);	/* <DIAGC>, <NULLD>, <MFCC_D_A_0>, ... */
		} else {
			return;
		}
	}
}

static void
mmf_skip_transp(struct mmf *f)
{
	char tok[256];
	mmf_token(f, tok, sizeof tok);
	if (strcmp(tok, "~t") == 0) {
		mmf_ref(f, 't');
		return;
	}
	if (strcmp(tok, "<TRANSP>") != 0) {
		fail(&f->c, "expected <TRANSP>, found '%.40s'", tok);
		mmf_die(f);
	}
	long n = mmf_int(f);
	for (long i = 0; i < n * n; i++)
		mmf_number(f);
}

static void
mmf_hmm(struct mmf *f, const char *hmm)
{
	char tok[256];
	mmf_token(f, tok, sizeof tok);
	if (strcmp(tok, "<BEGINHMM>") != 0) {
		fail(&f->c, "expected <BEGINHMM>, found '%.40s'", tok);
		mmf_die(f);
	}
	mmf_options(f);
	if (strcmp(mmf_token(f, tok, sizeof tok), "<NUMSTATES>") != 0) {
		fail(&f->c, "expected <NUMSTATES>, found '%.40s'", tok);
		mmf_die(f);
	}
	long ns = mmf_int(f);
	while (strcmp(mmf_peek(f, tok, sizeof tok), "<STATE>") == 0) {
		size_t at = mmf_here(f);
		mmf_token(f, tok, sizeof tok);
		long i = mmf_int(f);
		if (i < 2 || i >= ns) {
			fail(&f->c, "<STATE> %ld of an HMM with <NUMSTATES> %ld", i, ns);
			mmf_die(f);
		}
		if (strcmp(mmf_peek(f, tok, sizeof tok), "~s") == 0) {
			mmf_token(f, tok, sizeof tok);
			mmf_ref(f, 's');	/* a shared state: scored once, as its macro */
			continue;
		}
		if (f->dim == 0) {
			fail(&f->c, "the vector size is unknown (no <VECSIZE> before the first state)");
			mmf_die(f);
		}
		mmf_state(f, fmt_name("%s.%ld", hmm, i), at);
	}
	mmf_skip_transp(f);
	if (strcmp(mmf_peek(f, tok, sizeof tok), "<DURATION>") == 0) {
		mmf_token(f, tok, sizeof tok);
		long n = mmf_int(f);
		for (long i = 0; i < n; i++)
			mmf_number(f);
	}
	if (strcmp(mmf_token(f, tok, sizeof tok), "<ENDHMM>") != 0) {
		fail(&f->c, "expected <ENDHMM>, found '%.40s'", tok);
		mmf_die(f);
	}
}

/* The vector of a ~u or ~v definition ("<MEAN> n ..." or "<VARIANCE> n ..."). */
static double *
mmf_macro_vector(struct mmf *f, const char *want)
{
	char tok[256];
	mmf_token(f, tok, sizeof tok);
	if (strcmp(tok, want) != 0) {
		fail(&f->c, "expected %s, found '%.40s'", want, tok);
		mmf_die(f);
	}
	return mmf_vector(f, want);
}

static void
mmf_load(const char *path, const char *buf, size_t len, struct gmm_models *m)
{
	struct mmf f;
	char tok[256], name[256];

	memset(&f, 0, sizeof f);
	f.c.buf = buf;
	f.c.len = f.c.end = len;
	f.path = path;
	build_init(&f.b, m, 0);
	for (;;) {
		size_t at = mmf_here(&f);
		mmf_token(&f, tok, sizeof tok);
		if (tok[0] == '\0')
			break;
		if (strcmp(tok, "~o") == 0) {
			mmf_options(&f);
			continue;
		}
		if (strcmp(tok, "<BEGINHMM>") == 0) {
			/* A single HMM definition file, without ~h. */
			f.c.pos = at;
			mmf_hmm(&f, "hmm");
			continue;
		}
		if (tok[0] != '~') {
			fail(&f.c, "expected a macro (~o, ~h, ~s, ...), found '%.40s'", tok);
			mmf_die(&f);
		}
		char type = tok[1];
		mmf_token(&f, name, sizeof name);
		if (name[0] == '\0') {
			fail(&f.c, "~%c without a name", type);
			mmf_die(&f);
		}
		if (type != 'h' && mmf_find(&f, type, name) != NULL) {
			fail(&f.c, "macro ~%c \"%s\" is defined twice", type, name);
			mmf_die(&f);
		}
		struct macro *mac;
		switch (type) {
		case 'h':
			mmf_hmm(&f, name);
			break;
		case 's':
			if (f.dim == 0) {
				fail(&f.c, "the vector size is unknown (no <VECSIZE> before ~s)");
				mmf_die(&f);
			}
			mmf_new_macro(&f, 's', name);
			mmf_state(&f, xstrdup(name), at);
			break;
		case 'u':
			mmf_new_macro(&f, 'u', name)->v = mmf_macro_vector(&f, "<MEAN>");
			break;
		case 'v':
			mmf_new_macro(&f, 'v', name)->v = mmf_macro_vector(&f, "<VARIANCE>");
			break;
		case 'm':
			/* A mixture pdf: read as the one component of a scratch state. */
			mmf_new_macro(&f, 'm', name);
			f.k = 0;
			mmf_mixpdf(&f, 1.0);
			mac = &f.mac[f.nmac - 1];
			mac->v = xmallocarray(2 * (size_t)f.dim, sizeof *mac->v);
			memcpy(mac->v, f.mean, (size_t)f.dim * sizeof *f.mean);
			memcpy(mac->v + f.dim, f.var, (size_t)f.dim * sizeof *f.var);
			f.k = 0;
			break;
		case 't':
			mmf_new_macro(&f, 't', name);
			mmf_skip_transp(&f);
			break;
		default:
			fail(&f.c, "macro type ~%c is not supported", type);
			mmf_die(&f);
		}
	}
	if (m->nmodels == 0) {
		fail(&f.c, "the MMF defines no states");
		mmf_die(&f);
	}
	for (size_t i = 0; i < f.nmac; i++) {
		free(f.mac[i].name);
		free(f.mac[i].v);
	}
	free(f.mac);
	free(f.w);
	free(f.mean);
	free(f.var);
	m->format = "HTK MMF";
}

/* ---- gmmscore's text format ---- */

static void
native_load(const char *path, const char *buf, size_t len, struct gmm_models *m)
{
	struct cur c = {.buf = buf, .len = len, .end = len};
	struct gmm_build b;
	char tok[256];
	double *row = NULL;
	size_t rowcap = 0;

	build_init(&b, m, 0);
	for (;;) {
		/* Comments run from '#' to the end of the line. */
		for (;;) {
			skip_space(&c);
			if (c.pos < len && buf[c.pos] == '#') {
				const char *nl = memchr(buf + c.pos, '\n', len - c.pos);
				c.pos = nl ? (size_t)(nl - buf) : len;
				continue;
			}
			break;
		}
		if (c.pos >= len)
			break;
		size_t at = c.pos;
		kaldi_token(&c, tok, sizeof tok);
		long k, d;
		char name[256];
		if (strcmp(tok, "gmm") != 0) {
			c.pos = at;
			fail(&c, "expected 'gmm NAME COMPONENTS DIMS', found '%.40s'", tok);
			cur_die(&c, path);
		}
		kaldi_token(&c, name, sizeof name);
		if (name[0] == '\0' || kaldi_int(&c, &k) < 0 || kaldi_int(&c, &d) < 0 || k <= 0 ||
		    d <= 0 || k > (1L << 24) || d > (1L << 16)) {
			c.pos = at;
			c.failed = 0;
			fail(&c, "expected 'gmm NAME COMPONENTS DIMS' with positive counts");
			cur_die(&c, path);
		}
		if (m->dim == 0)
			m->dim = (int)d;
		if (d != m->dim) {
			c.pos = at;
			fail(&c, "model '%s' has dimension %ld, the first model's is %d", name, d,
			    m->dim);
			cur_die(&c, path);
		}
		size_t first = build_add(&b, xstrdup(name), (size_t)k);
		size_t width = 1 + 2 * (size_t)d;
		if (rowcap < width + 1) {
			rowcap = width + 1;
			row = xreallocarray(row, rowcap, sizeof *row);
		}
		for (long i = 0; i < k; i++) {
			/* One line: weight, means, variances; blank and comment lines between. */
			skip_space(&c);
			if (c.pos < len && buf[c.pos] == '#') {
				const char *nl = memchr(buf + c.pos, '\n', len - c.pos);
				c.pos = nl ? (size_t)(nl - buf) : len;
				i--;
				continue;
			}
			if (c.pos >= len) {
				fail(&c, "model '%s' ends after %ld of %ld components", name, i, k);
				cur_die(&c, path);
			}
			const char *nl = memchr(buf + c.pos, '\n', len - c.pos);
			size_t ls = c.pos, le = nl ? (size_t)(nl - buf) : len;
			size_t n = 0;
			const char *p = buf + ls;
			while (p < buf + le) {
				while (p < buf + le && isspace((unsigned char)*p))
					p++;
				if (p >= buf + le || *p == '#')
					break;
				double v;
				const char *e = parse_double(p, &v);
				if (e == p || (e < buf + le && !isspace((unsigned char)*e) && *e != '#')) {
					c.pos = ls;
					fail(&c, "model '%s', component %ld: not a number: '%.20s'", name,
					    i + 1, p);
					cur_die(&c, path);
				}
				if (n < rowcap)
					row[n] = v;
				n++;
				p = e;
			}
			if (n != width) {
				c.pos = ls;
				fail(&c, "model '%s', component %ld: %zu numbers, expected %zu (weight, "
				    "%ld means, %ld variances)", name, i + 1, n, width, d, d);
				cur_die(&c, path);
			}
			size_t g = first + (size_t)i;
			m->weight[g] = row[0];
			for (long j = 0; j < d; j++) {
				m->mean[g * (size_t)d + (size_t)j] = row[1 + j];
				m->ivar[g * (size_t)d + (size_t)j] = 1 / row[1 + d + j];
			}
			c.pos = le;
		}
		char msg[700];
		if (check_model(msg, sizeof msg, name, (size_t)k, (int)d, m->weight + first,
		    m->mean + first * (size_t)d, m->ivar + first * (size_t)d) != NULL) {
			c.pos = at;
			fail(&c, "%s", msg);
			cur_die(&c, path);
		}
	}
	free(row);
	if (m->nmodels == 0)
		die("%s: no models (expected 'gmm NAME COMPONENTS DIMS' lines)", path);
	m->format = "gmmscore text";
}

/* ---- entry points ---- */

/* The format by content: Kaldi binary ("\0B"), Kaldi text, HTK MMF or gmmscore text. */
static void
models_parse(const char *name, const char *buf, size_t len, struct gmm_models *m)
{
	if (len >= 2 && buf[0] == '\0' && buf[1] == 'B') {
		kaldi_load(name, buf, len, m);
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
		kaldi_load(name, buf, len, m);
	else if (buf[i] == '~' || buf[i] == '<')
		mmf_load(name, buf, len, m);
	else if (strncmp(buf + i, "gmm", 3) == 0 && isspace((unsigned char)buf[i + 3]))
		native_load(name, buf, len, m);
	else
		die_at(name, line_of(buf, i), "not a model file: expected a Kaldi model "
		    "(<DiagGMM>, <DIMENSION> or <TransitionModel>), an HTK MMF (~o, ~h, ~s) "
		    "or 'gmm NAME COMPONENTS DIMS'");
}

/* A Kaldi binary model in a regular file is mapped rather than copied: it is the
 * large, fast case. Returns whether it was one. */
static int
load_mapped(const char *path, struct gmm_models *m)
{
	struct stat st;
	char magic[2];
	int fd, done = 0;

	if (path == NULL || strcmp(path, "-") == 0 || (fd = open(path, O_RDONLY)) < 0)
		return 0;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 2 &&
	    pread(fd, magic, 2, 0) == 2 && magic[0] == '\0' && magic[1] == 'B') {
		double t0 = now_sec();
		void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd,
		    0);
		if (p != MAP_FAILED) {
			phase_add("model read", now_sec() - t0);
			t0 = now_sec();
			kaldi_load(path, p, (size_t)st.st_size, m);
			munmap(p, (size_t)st.st_size);
			phase_add("model parse", now_sec() - t0);
			done = 1;
		}
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

void
gmm_params_make(const struct gmm_models *m, int dims, struct gmm_params *p)
{
	size_t nc = m->ncomp, D = (size_t)m->dim;
	memset(p, 0, sizeof *p);
	p->nmodels = m->nmodels;
	p->ncomp = nc;
	p->dims = dims;
	p->dp = (int)CEIL_DIV((size_t)dims, GMM_DVEC) * GMM_DVEC;
	p->off = m->off;
	for (size_t i = 0; i < m->nmodels; i++)
		p->maxcomp = MAX(p->maxcomp, m->off[i + 1] - m->off[i]);
	size_t dp = (size_t)p->dp;
	p->s = xcalloc(mul_size(nc, dp, "parameters"), sizeof *p->s);
	p->na = xcalloc(mul_size(nc, dp, "parameters"), sizeof *p->na);
	p->g = xmallocarray(nc, sizeof *p->g);
	const double log2pi = log(2 * M_PI);
	#pragma omp parallel for schedule(static) if (nc > 4096)
	for (size_t c = 0; c < nc; c++) {
		double logdet = 0;
		for (int d = 0; d < dims; d++) {
			double iv = m->ivar[c * D + (size_t)d];
			double s = sqrt(0.5 * iv);
			p->s[c * dp + (size_t)d] = (float)s;
			p->na[c * dp + (size_t)d] = (float)(-m->mean[c * D + (size_t)d] * s);
			logdet += log(iv);
		}
		double g = log(m->weight[c]) - 0.5 * (dims * log2pi - logdet);
		p->g[c] = (float)g;	/* -inf for a zero weight: that component never wins */
	}
}

void
gmm_params_free(struct gmm_params *p)
{
	free(p->s);
	free(p->na);
	free(p->g);
	memset(p, 0, sizeof *p);
}

void
gmm_layout_make(const struct gmm_params *p, size_t slots, struct gmm_layout *l)
{
	const size_t nm = p->nmodels, dp = (size_t)p->dp, ng = dp / GMM_DVEC;

	memset(l, 0, sizeof *l);
	for (size_t m = 0; m < nm; m++)
		l->npart += CEIL_DIV(p->off[m + 1] - p->off[m], slots);
	l->part_slot = xmallocarray(l->npart, sizeof *l->part_slot);
	l->part_k = xmallocarray(l->npart, sizeof *l->part_k);
	l->model_part0 = xmallocarray(nm + 1, sizeof *l->model_part0);
	size_t *part_c0 = xmallocarray(l->npart, sizeof *part_c0);
	size_t blk = 0, used = 0, q = 0;
	for (size_t m = 0; m < nm; m++) {
		l->model_part0[m] = (int)q;
		for (size_t c = p->off[m]; c < p->off[m + 1]; c += slots, q++) {
			const size_t k = MIN(slots, p->off[m + 1] - c);
			if (used + k > slots) {
				blk++;
				used = 0;
			}
			l->part_slot[q] = (int)(blk * slots + used);
			l->part_k[q] = (int)k;
			part_c0[q] = c;
			used += k;
		}
	}
	l->model_part0[nm] = (int)l->npart;
	l->nblocks = blk + 1;
	l->nslots = l->nblocks * slots;
	l->blk_part0 = xmallocarray(l->nblocks + 1, sizeof *l->blk_part0);
	for (size_t b = 0, i = 0; b <= l->nblocks; b++) {
		while (i < l->npart && (size_t)l->part_slot[i] < b * slots)
			i++;
		l->blk_part0[b] = (int)i;
	}
	const size_t nslots = l->nslots;
	l->P = xcalloc(mul_size(mul_size(nslots, dp, "parameters"), 2, "parameters"),
	    sizeof *l->P);
	l->G = xcalloc(nslots, sizeof *l->G);
	#pragma omp parallel for schedule(dynamic, 64)
	for (size_t i = 0; i < l->npart; i++) {
		for (int j = 0; j < l->part_k[i]; j++) {
			const size_t c = part_c0[i] + (size_t)j, s = (size_t)l->part_slot[i] + (size_t)j;
			l->G[s] = p->g[c];
			for (size_t k = 0; k < ng; k++) {
				float *dst = l->P + ((k * nslots + s) * 2) * GMM_DVEC;
				memcpy(dst, p->s + c * dp + GMM_DVEC * k, GMM_DVEC * sizeof(float));
				memcpy(dst + GMM_DVEC, p->na + c * dp + GMM_DVEC * k,
				    GMM_DVEC * sizeof(float));
			}
		}
	}
	free(part_c0);
}

void
gmm_layout_free(struct gmm_layout *l)
{
	free(l->part_slot);
	free(l->part_k);
	free(l->blk_part0);
	free(l->model_part0);
	free(l->P);
	free(l->G);
	memset(l, 0, sizeof *l);
}
