/* gmm_kaldi.c: Kaldi acoustic models and DiagGMMs, text and binary (see gmm.h).
 *
 * Kaldi writes a model as tokens ("<DiagGMM>", "<WEIGHTS>") and arrays; in binary
 * ("\0B" first) tokens end at one space, integers carry a size byte and arrays are
 * FV/DV or FM/DM with their sizes. A model's <DiagGMM>s are found first (binary:
 * stepping over the arrays; text: a scan for the token), then parsed and checked in
 * parallel, one <DiagGMM> a task; a binary model's numbers go straight to their place
 * in the model set. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "gmm_read.h"
#include "numparse.h"

static int
expect(struct gmm_cur *c, const char *want)
{
	char tok[64];
	size_t at = c->pos;
	gmm_cur_token(c, tok, sizeof tok);
	if (strcmp(tok, want) != 0) {
		c->pos = at;
		if (!c->binary)
			gmm_cur_space(c);
		return gmm_cur_fail(c, "expected %s, found '%.40s'", want, tok);
	}
	return 0;
}

/* A Kaldi vector (rows = NULL) or matrix into a new array of doubles; a binary one is
 * only stepped over when out is NULL, and goes to `into` (room for that many numbers) when
 * that is given. */
static int
kaldi_array_into(struct gmm_cur *c, long *rows, long *cols, double **out, double *into,
    size_t room)
{
	if (out != NULL)
		*out = NULL;
	if (c->binary) {
		char tok[8];
		size_t at = c->pos;
		gmm_cur_token(c, tok, sizeof tok);
		int dbl = tok[0] == 'D', mat = rows != NULL;
		if (strcmp(tok + 1, mat ? "M" : "V") != 0 || (tok[0] != 'F' && tok[0] != 'D')) {
			c->pos = at;
			return gmm_cur_fail(c, "expected a binary %s (FV/DV or FM/DM), found '%.8s'",
			    mat ? "matrix" : "vector", tok);
		}
		long r = 1, k;
		if ((mat && gmm_cur_int(c, &r) < 0) || gmm_cur_int(c, &k) < 0)
			return -1;
		if (r < 0 || k < 0 || r > (1L << 30) || k > (1L << 30))
			return gmm_cur_fail(c, "implausible size %ld x %ld", r, k);
		size_t n = (size_t)r * (size_t)k, esz = dbl ? 8 : 4;
		if ((c->end - c->pos) / esz < n)
			return gmm_cur_fail(c, "the file ends inside a %ld x %ld array", r, k);
		if (mat)
			*rows = r;
		*cols = k;
		if (out == NULL) {
			c->pos += n * esz;
			return 0;
		}
		if (into != NULL && n > room)
			return gmm_cur_fail(c, "a %ld x %ld array where %zu numbers were expected", r, k, room);
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
	gmm_cur_space(c);
	if (c->pos >= c->end || c->buf[c->pos] != '[')
		return gmm_cur_fail(c, "expected '['");
	c->pos++;
	size_t cap = 64, n = 0;
	long r = 0, width = -1, inrow = 0;
	double *a = xmallocarray(cap, sizeof *a);
	for (;;) {
		while (c->pos < c->end && isspace((unsigned char)c->buf[c->pos])) {
			if (c->buf[c->pos] == '\n' && inrow > 0) {
				if (width >= 0 && inrow != width && rows != NULL) {
					free(a);
					return gmm_cur_fail(c, "matrix row %ld has %ld numbers, row 1 has %ld",
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
			return gmm_cur_fail(c, "the file ends before ']'");
		}
		if (c->buf[c->pos] == ']') {
			c->pos++;
			break;
		}
		double v;
		const char *e = parse_double(c->buf + c->pos, &v);
		if (e == c->buf + c->pos || (*e && !isspace((unsigned char)*e) && *e != ']')) {
			free(a);
			return gmm_cur_fail(c, "not a number: '%.*s'",
			    gmm_toklen(c->buf + c->pos, c->buf + c->end), c->buf + c->pos);
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
			return gmm_cur_fail(c, "matrix row %ld has %ld numbers, row 1 has %ld", r + 1, inrow,
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
kaldi_array(struct gmm_cur *c, long *rows, long *cols, double **out)
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
kaldi_gmm(struct gmm_cur *c, struct kgmm *g)
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
	gmm_cur_token(c, tok, sizeof tok);
	if (strcmp(tok, "<DiagGMM>") != 0 && strcmp(tok, "<DiagGMMBegin>") != 0)
		return gmm_cur_fail(c, "expected <DiagGMM>, found '%.40s'", tok);
	size_t at = c->pos;
	gmm_cur_token(c, tok, sizeof tok);
	if (strcmp(tok, "<GCONSTS>") == 0) {
		/* Read past, not trusted: recomputed from the variances. */
		double *gc = NULL;
		if (kaldi_array(c, NULL, &cols, c->binary ? NULL : &gc) < 0)
			return -1;
		free(gc);
		at = c->pos;
		gmm_cur_token(c, tok, sizeof tok);
	}
	if (strcmp(tok, "<WEIGHTS>") != 0) {
		c->pos = at;
		return gmm_cur_fail(c, "expected <WEIGHTS>, found '%.40s'", tok);
	}
	if (kaldi_array_into(c, NULL, &kw, &g->w, direct ? g->w : NULL, kcap) < 0 ||
	    expect(c, "<MEANS_INVVARS>") < 0 ||
	    kaldi_array_into(c, &r, &cols, &mi, direct ? mi : NULL, mcap) < 0 ||
	    expect(c, "<INV_VARS>") < 0 ||
	    kaldi_array_into(c, &r2, &c2, &g->ivar, direct ? g->ivar : NULL, mcap) < 0)
		goto bad;
	if (r != kw || r2 != kw || c2 != cols || (direct && (kw != g->k || cols != g->dim))) {
		gmm_cur_fail(c, "<WEIGHTS> has %ld entries, <MEANS_INVVARS> is %ld x %ld, <INV_VARS> "
		    "%ld x %ld", kw, r, cols, r2, c2);
		goto bad;
	}
	gmm_cur_token(c, tok, sizeof tok);
	if (strcmp(tok, "</DiagGMM>") != 0 && strcmp(tok, "<DiagGMMEnd>") != 0) {
		gmm_cur_fail(c, "expected </DiagGMM>, found '%.40s'", tok);
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
	gmm_build_init(&b, m, (int)dim);
	gmm_build_reserve(&b, (size_t)npdf, ncomp);
	for (long i = 0; i < npdf; i++)
		gmm_build_add(&b, gmm_build_name("%ld", i), (size_t)g[i].k);
}

/* The place of the value that gmm_check_model found bad in the <DiagGMM> at start (in
 * c's file, up to c->end), for its message: the number in <WEIGHTS>, <MEANS_INVVARS> or
 * <INV_VARS>; the <DiagGMM> itself for the model as a whole. */
static size_t
value_place(const struct gmm_cur *c0, size_t start, const struct gmm_bad *bad, long dim)
{
	static const char *const key[] = {
		[GMM_BAD_WEIGHT] = "<WEIGHTS>", [GMM_BAD_MEAN] = "<MEANS_INVVARS>",
		[GMM_BAD_VAR] = "<INV_VARS>",
	};
	struct gmm_cur c = *c0;
	char tok[64];
	long r, k;

	if (bad->what == GMM_BAD_MODEL)
		return start;
	size_t index = bad->what == GMM_BAD_WEIGHT ? bad->comp :
	    bad->comp * (size_t)dim + (size_t)bad->dim;
	c.pos = start;
	gmm_cur_token(&c, tok, sizeof tok);	/* <DiagGMM> */
	for (;;) {
		gmm_cur_token(&c, tok, sizeof tok);
		if (strcmp(tok, key[bad->what]) == 0)
			break;
		int mat = strcmp(tok, "<MEANS_INVVARS>") == 0 || strcmp(tok, "<INV_VARS>") == 0;
		double *skip = NULL;
		if (tok[0] == '\0' || kaldi_array(&c, mat ? &r : NULL, &k, c.binary ? NULL : &skip) < 0)
			return start;
		free(skip);
	}
	if (c.binary) {
		char kind[8];
		gmm_cur_token(&c, kind, sizeof kind);
		if ((bad->what != GMM_BAD_WEIGHT && gmm_cur_int(&c, &r) < 0) || gmm_cur_int(&c, &k) < 0)
			return start;
		return c.pos + index * (kind[0] == 'D' ? 8 : 4);
	}
	gmm_cur_space(&c);
	c.pos++;	/* '[' */
	for (size_t i = 0; i < index; i++) {
		gmm_cur_space(&c);
		while (c.pos < c.end && !isspace((unsigned char)c.buf[c.pos]))
			c.pos++;
	}
	gmm_cur_space(&c);
	return c.pos;
}

/* Steps over one binary <DiagGMM>, to find where the next begins and its size. */
static int
kaldi_skip_gmm(struct gmm_cur *c, long *ncomp, long *dim)
{
	char tok[64];
	long r = 0, k;

	gmm_cur_token(c, tok, sizeof tok);
	if (strcmp(tok, "<DiagGMM>") != 0 && strcmp(tok, "<DiagGMMBegin>") != 0)
		return gmm_cur_fail(c, "expected <DiagGMM>, found '%.40s'", tok);
	for (;;) {
		size_t at = c->pos;
		gmm_cur_token(c, tok, sizeof tok);
		if (strcmp(tok, "</DiagGMM>") == 0 || strcmp(tok, "<DiagGMMEnd>") == 0)
			return 0;
		int mat = strcmp(tok, "<MEANS_INVVARS>") == 0 || strcmp(tok, "<INV_VARS>") == 0;
		if (!mat && strcmp(tok, "<GCONSTS>") != 0 && strcmp(tok, "<WEIGHTS>") != 0) {
			c->pos = at;
			return gmm_cur_fail(c, "unexpected '%.40s' in a <DiagGMM>", tok);
		}
		if (kaldi_array(c, mat ? &r : NULL, &k, NULL) < 0)
			return -1;
		if (mat) {
			*ncomp = r;
			*dim = k;
		}
	}
}

void
gmm_read_kaldi(const char *path, const char *buf, size_t len, struct gmm_models *m)
{
	struct gmm_cur c = {.buf = buf, .len = len, .end = len};
	char tok[64];
	long dim = -1, npdf = 1;
	int am = 0;

	if (len >= 2 && buf[0] == '\0' && buf[1] == 'B') {
		c.binary = 1;
		c.pos = 2;
	}
	size_t at = c.pos;
	gmm_cur_token(&c, tok, sizeof tok);
	if (strcmp(tok, "<TransitionModel>") == 0) {
		static const char endtok[] = "</TransitionModel>";
		const char *e = memmem(buf + c.pos, len - c.pos, endtok, sizeof endtok - 1);
		if (e == NULL) {
			gmm_cur_fail(&c, "<TransitionModel> has no </TransitionModel>");
			gmm_cur_die(&c, path);
		}
		c.pos = (size_t)(e - buf) + sizeof endtok - 1;
		if (c.binary && c.pos < len && buf[c.pos] == ' ')
			c.pos++;
		at = c.pos;
		gmm_cur_token(&c, tok, sizeof tok);
	}
	if (strcmp(tok, "<DIMENSION>") == 0) {
		am = 1;
		if (gmm_cur_int(&c, &dim) < 0 || expect(&c, "<NUMPDFS>") < 0 ||
		    gmm_cur_int(&c, &npdf) < 0)
			gmm_cur_die(&c, path);
		if (dim <= 0 || npdf <= 0 || npdf > (1L << 28)) {
			gmm_cur_fail(&c, "implausible <DIMENSION> %ld or <NUMPDFS> %ld", dim, npdf);
			gmm_cur_die(&c, path);
		}
		/* Each <DiagGMM> begins with these 8 bytes: the count is checked before
		 * the per-model arrays below are made for it. */
		if ((size_t)npdf > (len - c.pos) / 8) {
			gmm_cur_fail(&c, "<NUMPDFS> %ld: the %zu bytes after it cannot hold as many "
			    "<DiagGMM>s", npdf, len - c.pos);
			gmm_cur_die(&c, path);
		}
	} else if (strcmp(tok, "<DiagGMM>") == 0 || strcmp(tok, "<DiagGMMBegin>") == 0) {
		c.pos = at;
	} else {
		c.pos = at;
		gmm_cur_fail(&c, "expected <TransitionModel>, <DIMENSION> or <DiagGMM> (a Kaldi model "
		    "with diagonal GMMs), found '%.40s'", tok);
		gmm_cur_die(&c, path);
	}

	/* Where each <DiagGMM> begins (binary: stepping over the arrays; text: a scan
	 * for the token), then all of them parsed and checked in parallel. */
	size_t *start = xmallocarray((size_t)npdf + 1, sizeof *start);
	struct kgmm *g = xcalloc((size_t)npdf, sizeof *g);
	struct gmm_cur *cs = xcalloc((size_t)npdf, sizeof *cs);
	long found = 0;
	if (c.binary) {
		for (long i = 0; i < npdf; i++) {
			start[i] = c.pos;
			g[i].direct = 1;
			if (kaldi_skip_gmm(&c, &g[i].k, &g[i].dim) < 0)
				gmm_cur_die(&c, path);
			if (!am)
				dim = g[i].dim;
			if (g[i].dim != dim) {
				c.pos = start[i];
				gmm_cur_fail(&c, "model '%ld' has dimension %ld, the models' is %ld", i, g[i].dim,
				    dim);
				gmm_cur_die(&c, path);
			}
		}
		start[npdf] = c.pos;
		if (c.pos != len) {
			gmm_cur_fail(&c, "unexpected data after the last </DiagGMM>");
			gmm_cur_die(&c, path);
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
					gmm_cur_fail(&c, "more than <NUMPDFS> %ld <DiagGMM>s", npdf);
					gmm_cur_die(&c, path);
				}
				start[found++] = (size_t)(p - buf);
			}
			p += 8;
		}
		if (found < npdf) {
			c.pos = len;
			gmm_cur_fail(&c, "<NUMPDFS> is %ld, the file has %ld <DiagGMM>s", npdf, found);
			gmm_cur_die(&c, path);
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
	#pragma omp parallel for schedule(dynamic, 16) if (len > GMM_PAR_BYTES)
	for (long i = 0; i < npdf; i++) {
		char name[32], msg[700];
		struct gmm_bad bad;
		cs[i] = c;
		cs[i].failed = 0;
		cs[i].pos = start[i];
		cs[i].end = start[i + 1];
		if (kaldi_gmm(&cs[i], &g[i]) < 0)
			continue;
		gmm_cur_space(&cs[i]);
		if (cs[i].pos != cs[i].end) {
			gmm_cur_fail(&cs[i], "unexpected '%.*s' after </DiagGMM>",
			    gmm_toklen(buf + cs[i].pos, buf + cs[i].end), buf + cs[i].pos);
			continue;
		}
		cs[i].pos = start[i];
		snprintf(name, sizeof name, "%ld", i);
		if (!am)
			dim = g[i].dim;	/* one model: its own */
		if (g[i].dim != dim)
			gmm_cur_fail(&cs[i], "model '%s' has dimension %ld, the models' is %ld", name, g[i].dim,
			    dim);
		else if (gmm_check_model(msg, sizeof msg, name, (size_t)g[i].k, (int)dim, g[i].w,
		    g[i].mean, g[i].ivar, &bad) != NULL) {
			cs[i].pos = value_place(&cs[i], start[i], &bad, dim);
			gmm_cur_fail(&cs[i], "%s", msg);
		}
	}
	for (long i = 0; i < npdf; i++)
		if (cs[i].failed)
			gmm_cur_die(&cs[i], path);
	if (!am)
		dim = g[0].dim;
	if (!c.binary) {
		model_arrays(m, g, npdf, dim);
		#pragma omp parallel for schedule(dynamic, 64) if (len > GMM_PAR_BYTES)
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
