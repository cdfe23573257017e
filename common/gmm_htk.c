/* gmm_htk.c: HTK MMF text model sets with diagonal covariances (see gmm.h).
 *
 * An MMF is a sequence of macros: ~o global options, ~h HMMs, ~s shared states, ~u
 * means, ~v variances, ~m mixture pdfs and ~t transition matrices, or a single HMM
 * definition without ~h. Macros are used by name after their definition. The scoring
 * unit is the distinct state: a state shared through ~s is one model named by the
 * macro, an HMM's own state i is "hmm.i". Full covariances, several streams and tied
 * mixtures are refused by name.
 *
 * The numbers are most of the work: before the file is read from the top, every
 * <MEAN> and <VARIANCE> vector is parsed on the -j threads (each takes the keywords in
 * its share of the bytes), and the reader takes each vector from there by the place of
 * its count. A vector the scan did not parse whole (a bad count or number, or a keyword
 * it did not see) is parsed by the reader itself, with the reader's messages. */
#include <ctype.h>
#include <math.h>
#include <omp.h>
#include <strings.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "gmm_read.h"
#include "numparse.h"

struct macro {
	char type;
	char *name;
	double *v;		/* ~u, ~v: a vector; ~m: mean then variance; of dim */
	size_t pos[2];		/* where its vectors' counts are (~m: mean, variance) */
};

/* A vector parsed ahead (see the top): its count n at `at` (ending at count_end), then
 * its numbers, ending at `end`, at v (at off in its thread's pool until the scan ends). */
struct vec {
	size_t at, count_end, end;
	long n;
	int ok;			/* 0: left to the reader */
	int mean;		/* a <MEAN> (else a <VARIANCE>) */
	size_t off;
	const double *v;
};

struct mmf {
	struct gmm_cur c;
	const char *path;
	struct gmm_build b;
	int dim;		/* from <VECSIZE> or the first <MEAN>; 0 until known */
	struct macro *mac;
	size_t nmac, capmac;
	size_t *hash, hcap;	/* the macros by type and name: index + 1, 0 empty */
	size_t nmean;		/* <MEAN>s the scan parsed */
	int reserved;
	/* vectors parsed ahead, in file order, and the next one to look at */
	struct vec *vec;
	size_t nvec, next;
	double **pool;
	int npool;
	/* the state being read: its components, and where each one's weight, mean and
	 * variance are (for messages about them) */
	size_t k, capk;
	double *w, *mean, *var;
	size_t *wpos, *mpos, *vpos;
	double *tmp[2];		/* the vectors of the mixture being read */
	size_t tmpcap[2];
};

static void
mmf_die(struct mmf *f)
{
	gmm_cur_die(&f->c, f->path);
}

/* The next MMF token: "<KEYWORD>" (upper-cased), "~x", a quoted or bare word, or a
 * number; "" at the end. Keywords may touch what follows them. */
static const char *
mmf_token(struct mmf *f, char *tok, size_t cap)
{
	struct gmm_cur *c = &f->c;
	size_t n = 0;
	gmm_cur_space(c);
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
	gmm_cur_space(&f->c);
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
	struct gmm_cur *c = &f->c;
	gmm_cur_space(c);
	double v;
	const char *e = parse_double(c->buf + c->pos, &v);
	if (e == c->buf + c->pos) {
		gmm_cur_fail(c, "expected a number, found '%.*s'",
		    gmm_toklen(c->buf + c->pos, c->buf + c->end), c->buf + c->pos);
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
		gmm_cur_fail(&f->c, "expected a count, found %g", v);
		mmf_die(f);
	}
	return (long)v;
}

static void
mmf_set_dim(struct mmf *f, long n, const char *what)
{
	/* 0 would leave the size unknown (f->dim's 0), and a later vector of 0 numbers
	 * has no storage: memcpy from NULL (found by the gmm fuzz target) */
	if (n < 1) {
		gmm_cur_fail(&f->c, "%s has no dimensions", what);
		mmf_die(f);
	}
	if (f->dim == 0) {
		f->dim = (int)n;
		f->b.m->dim = (int)n;
	} else if (n != f->dim) {
		gmm_cur_fail(&f->c, "%s has %ld dimensions, the models have %d", what, n, f->dim);
		mmf_die(f);
	}
}

/* What mmf_int takes for a count. */
static int
is_count(double v)
{
	return v == floor(v) && v >= 0 && v <= (1 << 24);
}

/* The vector whose count is at `at`, if the scan parsed it. */
static const struct vec *
vec_find(struct mmf *f, size_t at)
{
	while (f->next < f->nvec && f->vec[f->next].at < at)
		f->next++;
	if (f->next < f->nvec && f->vec[f->next].at == at && f->vec[f->next].ok)
		return &f->vec[f->next];
	return NULL;
}

/* "<MEAN> n v..." or "<VARIANCE> n v...": the count, then n numbers: returns them, where
 * the scan put them or parsed into *buf (grown to *cap numbers as needed); *at is where
 * the count was. */
/* Room in the set for as many components as the scan saw <MEAN>s (there can be more:
 * a ~m mixture used by several states), its pages touched on the threads, so that the
 * reader fills it without stopping for the system to clear pages. Once, at the first
 * state, when the dimension is known. */
static void
reserve(struct mmf *f)
{
	f->reserved = 1;
	if (f->nmean == 0)
		return;
	struct gmm_models *m = f->b.m;
	gmm_build_reserve(&f->b, 0, f->nmean);
	const size_t n = f->nmean, d = (size_t)f->dim, step = 4096;
	#pragma omp parallel for schedule(static) if (n * d > ((size_t)1 << 18))
	for (size_t i = 0; i < n; i += step) {
		size_t k = MIN(step, n - i);
		memset(m->weight + i, 0, k * sizeof *m->weight);
		memset(m->mean + i * d, 0, k * d * sizeof *m->mean);
		memset(m->ivar + i * d, 0, k * d * sizeof *m->ivar);
	}
}

static const double *
mmf_vector(struct mmf *f, const char *what, double **buf, size_t *cap, size_t *at)
{
	gmm_cur_space(&f->c);
	*at = f->c.pos;
	const struct vec *e = vec_find(f, f->c.pos);
	if (e != NULL) {
		f->c.pos = e->count_end;
		mmf_set_dim(f, e->n, what);
		f->c.pos = e->end;
		return e->v;
	}
	long n = mmf_int(f);
	mmf_set_dim(f, n, what);
	if (*cap < (size_t)n || *buf == NULL) {
		*cap = MAX((size_t)n, *cap);
		*buf = xreallocarray(*buf, MAX(*cap, (size_t)1), sizeof **buf);
	}
	for (long i = 0; i < n; i++)
		(*buf)[i] = mmf_number(f);
	return *buf;
}

/* The place of number i of the vector whose count is at `at`. */
static size_t
vector_place(const struct mmf *f, size_t at, int i)
{
	struct gmm_cur c = f->c;
	double v;
	c.pos = at;
	for (int j = 0; j <= i; j++) {
		gmm_cur_space(&c);
		const char *e = parse_double(c.buf + c.pos, &v);
		c.pos = (size_t)(e - c.buf);
	}
	gmm_cur_space(&c);
	return c.pos;
}

/* The scan (see the top): thread t takes the keywords that start in its share of the
 * bytes and parses their vectors into a pool of its own. */
static void
scan_vectors(struct mmf *f)
{
	const char *buf = f->c.buf;
	const size_t len = f->c.end;
	const int nt = len > GMM_PAR_BYTES ? omp_get_max_threads() : 1;
	if (nt == 1)
		return;		/* the reader alone is faster: nothing to overlap */
	struct vec **part = xcalloc((size_t)nt, sizeof *part);
	size_t *npart = xcalloc((size_t)nt, sizeof *npart);
	f->pool = xcalloc((size_t)nt, sizeof *f->pool);
	f->npool = nt;

	#pragma omp parallel for schedule(static, 1) num_threads(nt)
	for (int t = 0; t < nt; t++) {
		struct gmm_cur c = {.buf = buf, .len = len, .end = len};
		size_t a = len * (size_t)t / (size_t)nt, b = len * (size_t)(t + 1) / (size_t)nt;
		size_t cap = 0, used = 0, room = 0;
		const char *p = buf + a;
		while ((p = memchr(p, '<', (size_t)(buf + b - p))) != NULL) {
			const int mean = strncasecmp(p + 1, "MEAN>", 5) == 0;
			size_t kw = mean ? 6 :
			    strncasecmp(p + 1, "VARIANCE>", 9) == 0 ? 10 : 0;
			p++;
			if (kw == 0)
				continue;
			if (npart[t] == cap) {
				cap = cap ? 2 * cap : 256;
				part[t] = xreallocarray(part[t], cap, sizeof *part[t]);
			}
			struct vec *e = &part[t][npart[t]++];
			double v;
			c.pos = (size_t)(p - 1 - buf) + kw;
			gmm_cur_space(&c);
			e->at = c.pos;
			e->ok = 0;
			const char *q = parse_double(buf + c.pos, &v);
			if (q == buf + c.pos || !is_count(v))
				continue;
			e->n = (long)v;
			e->count_end = c.pos = (size_t)(q - buf);
			if (used + (size_t)e->n > room) {
				room = MAX(2 * room, used + (size_t)e->n + 4096);
				f->pool[t] = xreallocarray(f->pool[t], room, sizeof **f->pool);
			}
			long i = 0;
			for (; i < e->n; i++) {
				gmm_cur_space(&c);
				q = parse_double(buf + c.pos, &f->pool[t][used + (size_t)i]);
				if (q == buf + c.pos)
					break;
				c.pos = (size_t)(q - buf);
			}
			if (i < e->n)
				continue;
			e->end = c.pos;
			e->ok = 1;
			e->mean = mean;
			e->off = used;
			used += (size_t)e->n;
		}
	}
	for (int t = 0; t < nt; t++)
		f->nvec += npart[t];
	f->vec = xmallocarray(MAX(f->nvec, (size_t)1), sizeof *f->vec);
	size_t n = 0;
	for (int t = 0; t < nt; t++) {
		for (size_t i = 0; i < npart[t]; i++) {
			struct vec *e = &f->vec[n++];
			*e = part[t][i];
			e->v = e->ok && f->pool[t] != NULL ? f->pool[t] + e->off : NULL;
			f->nmean += e->ok && e->mean;
		}
		free(part[t]);
	}
	free(part);
	free(npart);
}

static size_t
mmf_hash(char type, const char *name)
{
	size_t h = 14695981039346656037u ^ (unsigned char)type;
	for (const char *p = name; *p != '\0'; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211u;
	return h;
}

static struct macro *
mmf_find(struct mmf *f, char type, const char *name)
{
	if (f->hcap == 0)
		return NULL;
	for (size_t i = mmf_hash(type, name) & (f->hcap - 1);; i = (i + 1) & (f->hcap - 1)) {
		if (f->hash[i] == 0)
			return NULL;
		struct macro *m = &f->mac[f->hash[i] - 1];
		if (m->type == type && strcmp(m->name, name) == 0)
			return m;
	}
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
	/* The table at most half full; names are unique within a type (checked before). */
	if (2 * f->nmac > f->hcap) {
		free(f->hash);
		f->hcap = f->hcap ? 2 * f->hcap : 256;
		f->hash = xcalloc(f->hcap, sizeof *f->hash);
		for (size_t j = 0; j < f->nmac; j++) {
			size_t i = mmf_hash(f->mac[j].type, f->mac[j].name) & (f->hcap - 1);
			while (f->hash[i] != 0)
				i = (i + 1) & (f->hcap - 1);
			f->hash[i] = j + 1;
		}
	} else {
		size_t i = mmf_hash(type, name) & (f->hcap - 1);
		while (f->hash[i] != 0)
			i = (i + 1) & (f->hcap - 1);
		f->hash[i] = f->nmac;
	}
	return m;
}

static struct macro *
mmf_ref(struct mmf *f, char type)
{
	char name[256];
	mmf_token(f, name, sizeof name);
	struct macro *m = mmf_find(f, type, name);
	if (m == NULL) {
		gmm_cur_fail(&f->c, "macro ~%c \"%s\" is used before it is defined", type, name);
		mmf_die(f);
	}
	return m;
}

static void
unsupported(struct mmf *f, const char *what)
{
	gmm_cur_fail(&f->c, "%s is not supported (diagonal-covariance, single-stream models only)",
	    what);
	mmf_die(f);
}

/* A mixture's mean and variance (a ~m reference, or [~u|<MEAN>] [~v|<VARIANCE>]
 * [<GCONST> g]) into the state's component k, whose weight (1 when none was given) is
 * at wpos. */
static void
mmf_mixpdf(struct mmf *f, double weight, size_t wpos)
{
	char tok[256];
	const double *mean = NULL, *var = NULL;
	size_t mpos = 0, vpos = 0;

	mmf_peek(f, tok, sizeof tok);
	if (strcmp(tok, "~m") == 0) {
		mmf_token(f, tok, sizeof tok);
		struct macro *m = mmf_ref(f, 'm');
		if (m->v == NULL) {	/* ~m "a" inside ~m "a"'s own definition */
			gmm_cur_fail(&f->c, "macro ~m \"%s\" is used inside its own definition",
			    m->name);
			mmf_die(f);
		}
		mean = m->v;
		var = m->v + f->dim;
		mpos = m->pos[0];
		vpos = m->pos[1];
	} else {
		mmf_token(f, tok, sizeof tok);
		if (strcmp(tok, "~u") == 0) {
			struct macro *m = mmf_ref(f, 'u');
			mean = m->v;
			mpos = m->pos[0];
		} else if (strcmp(tok, "<MEAN>") == 0) {
			mean = mmf_vector(f, "<MEAN>", &f->tmp[0], &f->tmpcap[0], &mpos);
		} else {
			gmm_cur_fail(&f->c, "expected <MEAN>, found '%.40s'", tok);
			mmf_die(f);
		}
		mmf_token(f, tok, sizeof tok);
		if (strcmp(tok, "~v") == 0) {
			struct macro *m = mmf_ref(f, 'v');
			var = m->v;
			vpos = m->pos[0];
		} else if (strcmp(tok, "<VARIANCE>") == 0) {
			var = mmf_vector(f, "<VARIANCE>", &f->tmp[1], &f->tmpcap[1], &vpos);
		} else if (strcmp(tok, "<INVCOVAR>") == 0 || strcmp(tok, "<LLTCOVAR>") == 0 ||
		    strcmp(tok, "<XFORM>") == 0 || strcmp(tok, "~i") == 0 || strcmp(tok, "~c") == 0 ||
		    strcmp(tok, "~x") == 0) {
			unsupported(f, "a full covariance");
		} else {
			gmm_cur_fail(&f->c, "expected <VARIANCE>, found '%.40s'", tok);
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
		f->wpos = xreallocarray(f->wpos, f->capk, sizeof *f->wpos);
		f->mpos = xreallocarray(f->mpos, f->capk, sizeof *f->mpos);
		f->vpos = xreallocarray(f->vpos, f->capk, sizeof *f->vpos);
	}
	f->w[f->k] = weight;
	memcpy(f->mean + f->k * (size_t)f->dim, mean, (size_t)f->dim * sizeof *mean);
	memcpy(f->var + f->k * (size_t)f->dim, var, (size_t)f->dim * sizeof *var);
	f->wpos[f->k] = wpos;
	f->mpos[f->k] = mpos;
	f->vpos[f->k] = vpos;
	f->k++;
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
		mmf_mixpdf(f, 1.0, at);	/* one Gaussian, weight 1 */
	} else {
		while (strcmp(mmf_peek(f, tok, sizeof tok), "<MIXTURE>") == 0) {
			mmf_token(f, tok, sizeof tok);
			long i = mmf_int(f);
			size_t wpos = mmf_here(f);
			double w = mmf_number(f);
			if (i < 1 || i > nmix) {
				gmm_cur_fail(&f->c, "<MIXTURE> %ld of a state with <NUMMIXES> %ld", i, nmix);
				mmf_die(f);
			}
			mmf_mixpdf(f, w, wpos);
		}
	}
	size_t k = f->k, d = (size_t)f->dim;
	if (!f->reserved)
		reserve(f);
	size_t first = gmm_build_add(&f->b, name, k);
	struct gmm_models *m = f->b.m;
	char msg[700];
	struct gmm_bad bad;
	memcpy(m->weight + first, f->w, k * sizeof *f->w);
	memcpy(m->mean + first * d, f->mean, k * d * sizeof *f->mean);
	for (size_t i = 0; i < k * d; i++)
		m->ivar[first * d + i] = 1 / f->var[i];
	if (gmm_check_model(msg, sizeof msg, name, k, f->dim, m->weight + first, m->mean + first * d,
	    m->ivar + first * d, &bad) != NULL) {
		/* the place of the bad value; the state's for the weights' sum */
		size_t c = bad.comp;
		f->c.failed = 0;
		f->c.pos = bad.what == GMM_BAD_WEIGHT ? f->wpos[c] :
		    bad.what == GMM_BAD_VAR ? vector_place(f, f->vpos[c], bad.dim) :
		    bad.what == GMM_BAD_MEAN ? vector_place(f, f->mpos[c], bad.dim) : at;
		gmm_cur_fail(&f->c, "%s", msg);
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
		gmm_cur_fail(&f->c, "expected <TRANSP>, found '%.40s'", tok);
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
		gmm_cur_fail(&f->c, "expected <BEGINHMM>, found '%.40s'", tok);
		mmf_die(f);
	}
	mmf_options(f);
	if (strcmp(mmf_token(f, tok, sizeof tok), "<NUMSTATES>") != 0) {
		gmm_cur_fail(&f->c, "expected <NUMSTATES>, found '%.40s'", tok);
		mmf_die(f);
	}
	long ns = mmf_int(f);
	while (strcmp(mmf_peek(f, tok, sizeof tok), "<STATE>") == 0) {
		size_t at = mmf_here(f);
		mmf_token(f, tok, sizeof tok);
		long i = mmf_int(f);
		if (i < 2 || i >= ns) {
			gmm_cur_fail(&f->c, "<STATE> %ld of an HMM with <NUMSTATES> %ld", i, ns);
			mmf_die(f);
		}
		if (strcmp(mmf_peek(f, tok, sizeof tok), "~s") == 0) {
			mmf_token(f, tok, sizeof tok);
			mmf_ref(f, 's');	/* a shared state: scored once, as its macro */
			continue;
		}
		if (f->dim == 0) {
			gmm_cur_fail(&f->c, "the vector size is unknown (no <VECSIZE> before the first state)");
			mmf_die(f);
		}
		mmf_state(f, gmm_build_name("%s.%ld", hmm, i), at);
	}
	mmf_skip_transp(f);
	if (strcmp(mmf_peek(f, tok, sizeof tok), "<DURATION>") == 0) {
		mmf_token(f, tok, sizeof tok);
		long n = mmf_int(f);
		for (long i = 0; i < n; i++)
			mmf_number(f);
	}
	if (strcmp(mmf_token(f, tok, sizeof tok), "<ENDHMM>") != 0) {
		gmm_cur_fail(&f->c, "expected <ENDHMM>, found '%.40s'", tok);
		mmf_die(f);
	}
}

/* The vector of a ~u or ~v definition ("<MEAN> n ..." or "<VARIANCE> n ..."). */
static void
mmf_macro_vector(struct mmf *f, struct macro *mac, const char *want)
{
	char tok[256];
	size_t cap = 0;
	mmf_token(f, tok, sizeof tok);
	if (strcmp(tok, want) != 0) {
		gmm_cur_fail(&f->c, "expected %s, found '%.40s'", want, tok);
		mmf_die(f);
	}
	const double *v = mmf_vector(f, want, &mac->v, &cap, &mac->pos[0]);
	if (v != mac->v) {
		mac->v = xmallocarray((size_t)f->dim, sizeof *mac->v);
		memcpy(mac->v, v, (size_t)f->dim * sizeof *v);
	}
}

void
gmm_read_htk(const char *path, const char *buf, size_t len, struct gmm_models *m)
{
	struct mmf f;
	char tok[256], name[256];

	memset(&f, 0, sizeof f);
	f.c.buf = buf;
	f.c.len = f.c.end = len;
	f.path = path;
	gmm_build_init(&f.b, m, 0);
	scan_vectors(&f);
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
			gmm_cur_fail(&f.c, "expected a macro (~o, ~h, ~s, ...), found '%.40s'", tok);
			mmf_die(&f);
		}
		char type = tok[1];
		mmf_token(&f, name, sizeof name);
		if (name[0] == '\0') {
			gmm_cur_fail(&f.c, "~%c without a name", type);
			mmf_die(&f);
		}
		if (type != 'h' && mmf_find(&f, type, name) != NULL) {
			gmm_cur_fail(&f.c, "macro ~%c \"%s\" is defined twice", type, name);
			mmf_die(&f);
		}
		struct macro *mac;
		switch (type) {
		case 'h':
			mmf_hmm(&f, name);
			break;
		case 's':
			if (f.dim == 0) {
				gmm_cur_fail(&f.c, "the vector size is unknown (no <VECSIZE> before ~s)");
				mmf_die(&f);
			}
			mmf_new_macro(&f, 's', name);
			mmf_state(&f, xstrdup(name), at);
			break;
		case 'u':
			mmf_macro_vector(&f, mmf_new_macro(&f, 'u', name), "<MEAN>");
			break;
		case 'v':
			mmf_macro_vector(&f, mmf_new_macro(&f, 'v', name), "<VARIANCE>");
			break;
		case 'm':
			/* A mixture pdf: read as the one component of a scratch state. */
			mmf_new_macro(&f, 'm', name);
			f.k = 0;
			mmf_mixpdf(&f, 1.0, at);
			mac = &f.mac[f.nmac - 1];
			mac->v = xmallocarray(2 * (size_t)f.dim, sizeof *mac->v);
			memcpy(mac->v, f.mean, (size_t)f.dim * sizeof *f.mean);
			memcpy(mac->v + f.dim, f.var, (size_t)f.dim * sizeof *f.var);
			mac->pos[0] = f.mpos[0];
			mac->pos[1] = f.vpos[0];
			f.k = 0;
			break;
		case 't':
			mmf_new_macro(&f, 't', name);
			mmf_skip_transp(&f);
			break;
		default:
			gmm_cur_fail(&f.c, "macro type ~%c is not supported", type);
			mmf_die(&f);
		}
	}
	if (m->nmodels == 0) {
		gmm_cur_fail(&f.c, "the MMF defines no states");
		mmf_die(&f);
	}
	for (size_t i = 0; i < f.nmac; i++) {
		free(f.mac[i].name);
		free(f.mac[i].v);
	}
	free(f.mac);
	free(f.hash);
	for (int t = 0; t < f.npool; t++)
		free(f.pool[t]);
	free(f.pool);
	free(f.vec);
	free(f.w);
	free(f.mean);
	free(f.var);
	free(f.wpos);
	free(f.mpos);
	free(f.vpos);
	free(f.tmp[0]);
	free(f.tmp[1]);
	m->format = "HTK MMF";
}
