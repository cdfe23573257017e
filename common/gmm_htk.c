/* gmm_htk.c: HTK MMF text model sets with diagonal covariances (see gmm.h).
 *
 * An MMF is a sequence of macros: ~o global options, ~h HMMs, ~s shared states, ~u
 * means, ~v variances, ~m mixture pdfs and ~t transition matrices, or a single HMM
 * definition without ~h. Macros are used by name after their definition. The scoring
 * unit is the distinct state: a state shared through ~s is one model named by the
 * macro, an HMM's own state i is "hmm.i". Full covariances, several streams and tied
 * mixtures are refused by name. */
#include <ctype.h>
#include <math.h>
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
};

struct mmf {
	struct gmm_cur c;
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
		gmm_cur_fail(c, "expected a number, found '%.20s'", c->buf + c->pos);
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
	if (f->dim == 0) {
		f->dim = (int)n;
		f->b.m->dim = (int)n;
	} else if (n != f->dim) {
		gmm_cur_fail(&f->c, "%s has %ld dimensions, the models have %d", what, n, f->dim);
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
		gmm_cur_fail(&f->c, "macro ~%c \"%s\" is used before it is defined", type, name);
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
	gmm_cur_fail(&f->c, "%s is not supported (diagonal-covariance, single-stream models only)",
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
			gmm_cur_fail(&f->c, "expected <MEAN>, found '%.40s'", tok);
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
				gmm_cur_fail(&f->c, "<MIXTURE> %ld of a state with <NUMMIXES> %ld", i, nmix);
				mmf_die(f);
			}
			mmf_mixpdf(f, w);
		}
	}
	size_t k = f->k, d = (size_t)f->dim;
	size_t first = gmm_build_add(&f->b, name, k);
	struct gmm_models *m = f->b.m;
	char msg[700];
	for (size_t c = 0; c < k; c++) {
		m->weight[first + c] = f->w[c];
		for (size_t j = 0; j < d; j++) {
			m->mean[(first + c) * d + j] = f->mean[c * d + j];
			m->ivar[(first + c) * d + j] = 1 / f->var[c * d + j];
		}
	}
	if (gmm_check_model(msg, sizeof msg, name, k, f->dim, m->weight + first, m->mean + first * d,
	    m->ivar + first * d) != NULL) {
		f->c.failed = 0;
		f->c.pos = at;
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
static double *
mmf_macro_vector(struct mmf *f, const char *want)
{
	char tok[256];
	mmf_token(f, tok, sizeof tok);
	if (strcmp(tok, want) != 0) {
		gmm_cur_fail(&f->c, "expected %s, found '%.40s'", want, tok);
		mmf_die(f);
	}
	return mmf_vector(f, want);
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
	free(f.w);
	free(f.mean);
	free(f.var);
	m->format = "HTK MMF";
}
