/* gmm_read.h: what the GMM model readers (gmm_kaldi.c, gmm_htk.c, gmm_native.c) share,
 * kept out of gmm.h because no program needs it: a cursor over the file in memory, the
 * model set under construction, and the checks every model passes (gmm.c). */
#ifndef ACCELKIT_GMM_READ_H
#define ACCELKIT_GMM_READ_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "gmm.h"

/* ---- a cursor over the whole file, with errors carried rather than raised, so that
 * parallel parsers can report the first error in file order ---- */

struct gmm_cur {
	const char *buf;	/* the whole file (NUL-terminated, but for mapped binary) */
	size_t len, pos, end;	/* this cursor reads buf[pos..end) */
	int binary;		/* Kaldi binary: tokens end at one space, integers are sized */
	int failed;
	size_t err_off;
	char err[600];
};

/* Records the first error at the cursor's position; returns -1. */
int gmm_cur_fail(struct gmm_cur *c, const char *fmt, ...) PRINTF_LIKE(2, 3);
/* Reports the recorded error as FILE:LINE (text) or FILE: byte N (binary); exit 1. */
void gmm_cur_die(const struct gmm_cur *c, const char *path) NORETURN;
void gmm_cur_space(struct gmm_cur *c);
/* The next whitespace-delimited token (text), or up to the next space (binary, where
 * the space is consumed too). Copied into tok; "" at the end. */
const char *gmm_cur_token(struct gmm_cur *c, char *tok, size_t cap);
/* A decimal integer (text) or Kaldi's size byte 4 and 4 bytes (binary); -1 on error. */
int gmm_cur_int(struct gmm_cur *c, long *v);
/* The 1-based line of byte off of buf. */
uint64_t gmm_line_of(const char *buf, size_t off);

/* ---- the model set under construction ---- */

struct gmm_build {
	struct gmm_models *m;
	size_t capm, capc;
};

void gmm_build_init(struct gmm_build *b, struct gmm_models *m, int dim);
/* Room for one more model of k components, named name (taken over); returns the index
 * of its first component. */
size_t gmm_build_add(struct gmm_build *b, char *name, size_t k);
/* Room for nmodels models of ncomp components in all (of the set's dimension), so
 * that adding them moves nothing. */
void gmm_build_reserve(struct gmm_build *b, size_t nmodels, size_t ncomp);
/* A model name from a format, in new memory. */
char *gmm_build_name(const char *fmt, ...) PRINTF_LIKE(1, 2);

/* What gmm_check_model found wrong, so that a reader can name the place of the value:
 * a component's weight, or dimension `dim` of its variance or mean; GMM_BAD_MODEL is
 * the model as a whole (no components, or weights that do not sum to 1). */
struct gmm_bad {
	enum { GMM_BAD_MODEL, GMM_BAD_WEIGHT, GMM_BAD_VAR, GMM_BAD_MEAN } what;
	size_t comp;		/* 0-based */
	int dim;		/* 0-based */
};

/* Checks one model's weights, means and inverse variances; returns an error message
 * (in msg, of cap bytes) and what it is about (in *bad, when not NULL), or NULL. */
const char *gmm_check_model(char *msg, size_t cap, const char *name, size_t k, int dim,
    const double *w, const double *mean, const double *ivar, struct gmm_bad *bad);

/* The length of the word at p (up to white space, end or 40 bytes): messages quote a
 * bad token alone, "not a number: '%.*s'", not the rest of its line. */
int gmm_toklen(const char *p, const char *end);

/* ---- the readers of the whole file at buf[0..len) ---- */

/* Files smaller than this are parsed on one thread: waking the others would cost more
 * than it saves (and a small model on auto must not wait for them). The fuzz targets
 * set it to 0, so that their inputs are split into the threads' shares too. */
#ifndef GMM_PAR_BYTES
#define GMM_PAR_BYTES ((size_t)1 << 20)
#endif


void gmm_read_kaldi(const char *path, const char *buf, size_t len, struct gmm_models *m);
void gmm_read_htk(const char *path, const char *buf, size_t len, struct gmm_models *m);
void gmm_read_native(const char *path, const char *buf, size_t len, struct gmm_models *m);

#endif
