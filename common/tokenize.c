/* tokenize.c: raw text into term counts with a vocabulary (see tokenize.h).
 *
 * A part tokenises its documents against a hash table of its own, copying each new
 * term into an arena (the reader's chunk that held the text is reused). The corpus's
 * parts are merged in input order into the vocabulary, so global term numbers follow
 * first occurrence whatever the thread count or chunk size; counts are then built per
 * part in parallel. */
#include "tokenize.h"

#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "input.h"

struct tok_run {
	uint32_t first, last, step;
	int32_t delta;
};

enum { TOK_WORD = 1, TOK_CASED = 2, TOK_IGNORABLE = 4 };

#include "tokenize_table.h"

const char tok_unicode_version[] = TOK_UNICODE;

/* ---- characters */

/* The character at p (< end) and its length in *n: a valid UTF-8 sequence (no overlong
 * forms, surrogates or values above U+10FFFF), else the byte as Latin-1, as Python's
 * UTF-8 decoder with an error handler that maps each bad byte to chr(byte). */
static inline uint32_t
utf8_decode(const unsigned char *p, const unsigned char *end, size_t *n)
{
	unsigned c = p[0];
	size_t left = (size_t)(end - p);
	*n = 1;
	if (c >= 0xc2 && c <= 0xdf) {
		if (left >= 2 && (p[1] & 0xc0) == 0x80) {
			*n = 2;
			return (uint32_t)(c & 0x1f) << 6 | (p[1] & 0x3f);
		}
	} else if (c >= 0xe0 && c <= 0xef) {
		unsigned lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;
		if (left >= 3 && p[1] >= lo && p[1] <= hi && (p[2] & 0xc0) == 0x80) {
			*n = 3;
			return (uint32_t)(c & 0x0f) << 12 | (uint32_t)(p[1] & 0x3f) << 6 | (p[2] & 0x3f);
		}
	} else if (c >= 0xf0 && c <= 0xf4) {
		unsigned lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;
		if (left >= 4 && p[1] >= lo && p[1] <= hi && (p[2] & 0xc0) == 0x80 &&
		    (p[3] & 0xc0) == 0x80) {
			*n = 4;
			return (uint32_t)(c & 0x07) << 18 | (uint32_t)(p[1] & 0x3f) << 12 |
			    (uint32_t)(p[2] & 0x3f) << 6 | (p[3] & 0x3f);
		}
	}
	return c;
}

static inline size_t
utf8_encode(char *b, uint32_t cp)
{
	if (cp < 0x80) {
		b[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		b[0] = (char)(0xc0 | cp >> 6);
		b[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		b[0] = (char)(0xe0 | cp >> 12);
		b[1] = (char)(0x80 | (cp >> 6 & 0x3f));
		b[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	b[0] = (char)(0xf0 | cp >> 18);
	b[1] = (char)(0x80 | (cp >> 12 & 0x3f));
	b[2] = (char)(0x80 | (cp >> 6 & 0x3f));
	b[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* The class of a character, the range it lies in remembered in *cache (text in one
 * script stays in a few ranges). */
struct uclass_cache {
	uint32_t lo, hi;	/* [lo, hi) has class cls */
	int cls;
};

static inline int
uclass(struct uclass_cache *k, uint32_t cp)
{
	if (cp < 0x80)
		return tok_ascii[cp];
	if (cp >= k->lo && cp < k->hi)
		return k->cls;
	size_t a = 0, b = sizeof tok_uclass / sizeof tok_uclass[0];
	while (b - a > 1) {	/* the last entry whose start is <= cp */
		size_t m = a + (b - a) / 2;
		if (tok_uclass[m] >> 3 <= cp)
			a = m;
		else
			b = m;
	}
	k->lo = tok_uclass[a] >> 3;
	k->hi = a + 1 < sizeof tok_uclass / sizeof tok_uclass[0] ? tok_uclass[a + 1] >> 3 : 0x110000;
	k->cls = (int)(tok_uclass[a] & 7);
	return k->cls;
}

/* str.lower of a cased character beyond ASCII with a one-character lower case (all
 * but U+0130). */
static uint32_t
lower_cp(uint32_t cp)
{
	size_t a = 0, b = sizeof tok_ulower / sizeof tok_ulower[0];
	while (a < b) {		/* the first run that ends at or after cp */
		size_t m = a + (b - a) / 2;
		if (tok_ulower[m].last < cp)
			a = m + 1;
		else
			b = m;
	}
	if (a < sizeof tok_ulower / sizeof tok_ulower[0]) {
		const struct tok_run *r = &tok_ulower[a];
		if (cp >= r->first && (cp - r->first) % r->step == 0)
			return (uint32_t)((int32_t)cp + r->delta);
	}
	return cp;
}

#define CAPITAL_SIGMA 0x3a3
#define CAPITAL_I_DOT 0x130	/* lowers to "i" U+0307, which is not a word character */

/* Whether the first character from p on that is not case-ignorable is cased (the
 * second half of str.lower's final-sigma rule: a capital sigma is final when a cased
 * character comes before it and none after, case-ignorable ones skipped). */
static int
cased_after(struct uclass_cache *k, const unsigned char *p, const unsigned char *end)
{
	while (p < end) {
		size_t n;
		int cls = uclass(k, utf8_decode(p, end, &n));
		if (!(cls & TOK_IGNORABLE))
			return (cls & TOK_CASED) != 0;
		p += n;
	}
	return 0;
}

/* FNV-1a, a byte at a time (the lexer hashes words as it builds them), then mixed. */
#define HASH_START 1469598103934665603ULL
#define HASH_STEP(h, c) (((h) ^ (unsigned char)(c)) * 1099511628211ULL)
#define HASH_END(h) ((h) ^ ((h) >> 29))

static inline uint64_t
hash_bytes(const char *p, size_t n)
{
	uint64_t h = HASH_START;
	for (size_t i = 0; i < n; i++)
		h = HASH_STEP(h, p[i]);
	return HASH_END(h);
}

/* Reading text a character at a time, lower-cased as str.lower does. */
struct lexer {
	struct uclass_cache cache;
	int prev_cased;		/* the last character not case-ignorable was cased */
	char *w;		/* the output so far (a word, or a whole lower-cased text) */
	size_t len, cap;
	uint64_t h;		/* its hash so far */
};

/* The character at *pp (< end), whose lower case is appended to x->w; returns its class.
 * Only U+0130 lowers to two characters ("i" U+0307): *split is then set, the second one
 * not being a word character. */
static inline int
lex_char(struct lexer *x, const unsigned char **pp, const unsigned char *end, int *split)
{
	const unsigned char *p = *pp;
	uint32_t cp, lc;
	size_t n = 1;
	int cls;
	if (x->len + 8 > x->cap) {
		x->cap = MAX(2 * x->cap, (size_t)64);
		x->w = xrealloc(x->w, x->cap);
	}
	*split = 0;
	if (*p < 0x80) {
		/* ASCII: the letters are cased and lower to themselves | 0x20 */
		cls = tok_ascii[*p];
		*pp = p + 1;
		if (!(cls & TOK_IGNORABLE))
			x->prev_cased = (cls & TOK_CASED) != 0;
		if (cls & TOK_WORD) {
			char c = (char)(cls & TOK_CASED ? *p | 0x20 : *p);
			x->w[x->len++] = c;
			x->h = HASH_STEP(x->h, c);
		}
		return cls;
	}
	cp = utf8_decode(p, end, &n);
	cls = uclass(&x->cache, cp);
	*pp = p + n;
	lc = cp;
	if (cp == CAPITAL_SIGMA)
		lc = x->prev_cased && !cased_after(&x->cache, p + n, end) ? 0x3c2 : 0x3c3;
	else if (cp == CAPITAL_I_DOT)
		lc = 'i', *split = 1;
	else if (cls & TOK_CASED)
		lc = lower_cp(cp);
	if (!(cls & TOK_IGNORABLE))
		x->prev_cased = (cls & TOK_CASED) != 0;
	if (cls & TOK_WORD || *split) {
		size_t m = utf8_encode(x->w + x->len, lc);
		for (size_t i = 0; i < m; i++)
			x->h = HASH_STEP(x->h, x->w[x->len + i]);
		x->len += m;
	}
	return cls;
}

/* Calls word(ctx, w, n, hash) for every run of 2 or more word characters of
 * text[0, len) after lower-casing (w: the run in UTF-8, n bytes, hash_bytes(w, n)), as
 * the token pattern \b\w\w+\b finds them in text.lower(); stops with -1 when word does. */
typedef int (*word_fn)(void *ctx, const char *w, size_t n, uint64_t hash);

static int
lex_words(struct lexer *x, const char *text, size_t len, word_fn word, void *ctx)
{
	const unsigned char *p = (const unsigned char *)text, *end = p + len;
	size_t wc = 0;		/* characters of the word so far */
	x->prev_cased = 0;
	x->len = 0;
	x->h = HASH_START;
	while (p < end) {
		int split, cls = lex_char(x, &p, end, &split);
		if (cls & TOK_WORD) {
			wc++;
			if (!split)
				continue;
		}
		if (wc >= 2 && word(ctx, x->w, x->len, HASH_END(x->h)) != 0)
			return -1;
		x->len = wc = 0;
		x->h = HASH_START;
	}
	if (wc >= 2 && word(ctx, x->w, x->len, HASH_END(x->h)) != 0)
		return -1;
	return 0;
}

/* text[0, len) lower-cased whole into x->w (x->len bytes): as str.lower(), but for the
 * characters that are not word characters, which are left out (a stop word holding one
 * can match no token). Returns whether there were none. */
static int
lex_lower(struct lexer *x, const char *text, size_t len)
{
	const unsigned char *p = (const unsigned char *)text, *end = p + len;
	int all = 1;
	x->prev_cased = 0;
	x->len = 0;
	while (p < end) {
		int split, cls = lex_char(x, &p, end, &split);
		if (!(cls & TOK_WORD) || split)
			all = 0;
	}
	return all;
}

/* ---- a table of terms */

/* Memory for terms in blocks that never move. */
struct arena {
	char **block;
	size_t nblocks, left;
	char *at;
};

static const char *
arena_copy(struct arena *a, const char *p, size_t n)
{
	if (n > a->left) {
		size_t sz = MAX(n, (size_t)64 << 10);
		a->block = xreallocarray(a->block, a->nblocks + 1, sizeof *a->block);
		a->at = a->block[a->nblocks++] = xmalloc(sz);
		a->left = sz;
	}
	char *d = a->at;
	memcpy(d, p, n);
	a->at += n;
	a->left -= n;
	return d;
}

static void
arena_free(struct arena *a)
{
	for (size_t i = 0; i < a->nblocks; i++)
		free(a->block[i]);
	free(a->block);
}

/* Terms in first-occurrence order and an open-addressing index over them. */
struct tab {
	uint32_t *slot;		/* term number + 1, 0 = empty */
	size_t mask;
	const char **p;
	uint32_t *len;
	uint64_t *hash;
	size_t n, cap;
};

#define NOT_FOUND UINT32_MAX

static void
tab_init(struct tab *t, size_t expect)
{
	size_t c = 64;
	while (c < 2 * expect)
		c *= 2;
	memset(t, 0, sizeof *t);
	t->slot = xcalloc(c, sizeof *t->slot);
	t->mask = c - 1;
	t->cap = 32;
	t->p = xmallocarray(t->cap, sizeof *t->p);
	t->len = xmallocarray(t->cap, sizeof *t->len);
	t->hash = xmallocarray(t->cap, sizeof *t->hash);
}

static void
tab_free(struct tab *t)
{
	free(t->slot);
	free(t->p);
	free(t->len);
	free(t->hash);
}

static void
tab_grow(struct tab *t)
{
	size_t c = 2 * (t->mask + 1);
	uint32_t *s = xcalloc(c, sizeof *s);
	for (size_t i = 0; i < t->n; i++) {
		size_t h = t->hash[i] & (c - 1);
		while (s[h] != 0)
			h = (h + 1) & (c - 1);
		s[h] = (uint32_t)i + 1;
	}
	free(t->slot);
	t->slot = s;
	t->mask = c - 1;
}

/* The term's number. A new term is added when add is set (its bytes copied into
 * arena, or kept where they are when arena is NULL), else NOT_FOUND. */
static uint32_t
tab_get(struct tab *t, const char *p, uint32_t len, uint64_t h, int add, struct arena *arena)
{
	size_t i = h & t->mask;
	for (;;) {
		uint32_t s = t->slot[i];
		if (s == 0)
			break;
		s--;
		if (t->hash[s] == h && t->len[s] == len && memcmp(t->p[s], p, len) == 0)
			return s;
		i = (i + 1) & t->mask;
	}
	if (!add)
		return NOT_FOUND;
	if (t->n == UINT32_MAX - 1)
		die("more than %u distinct terms", UINT32_MAX - 1);
	if (t->n == t->cap) {
		t->cap *= 2;
		t->p = xreallocarray(t->p, t->cap, sizeof *t->p);
		t->len = xreallocarray(t->len, t->cap, sizeof *t->len);
		t->hash = xreallocarray(t->hash, t->cap, sizeof *t->hash);
	}
	uint32_t id = (uint32_t)t->n++;
	t->p[id] = arena != NULL ? arena_copy(arena, p, len) : p;
	t->len[id] = len;
	t->hash[id] = h;
	t->slot[i] = id + 1;
	if (2 * t->n > t->mask + 1)
		tab_grow(t);
	return id;
}

/* ---- parts */

struct tok_part {
	struct tab tab;		/* the part's terms */
	struct arena terms;	/* their bytes */
	uint32_t *df;		/* documents of the part each term occurs in */
	size_t dfcap;
	size_t ndocs, dcap;
	uint64_t *dptr;		/* ndocs + 1 offsets into term and cnt */
	uint32_t *term, *cnt;	/* each document's (term, count), by term */
	size_t ne, cap;
	uint32_t *tok;		/* the document being tokenised: its terms */
	size_t nt, tcap;
	char *dw;		/* word n-grams: the document's tokens, ndw of them, */
	size_t *dwoff;		/* token i at dw[dwoff[i], dwoff[i + 1]) */
	size_t dwlen, dwcap, ndw, dwocap;
	char *join;		/* an n-gram's bytes */
	size_t jcap;
	uint32_t *cps;		/* char_wb: the lower-cased text's characters */
	size_t *cpo;		/* a padded word's characters' byte offsets */
	size_t ncps, cpcap, cpocap;
	struct lexer lex;
	const struct tok_vocab *vocab;	/* merged into, with map: term -> global term */
	uint32_t *map;
};

struct tok_part *
tok_part_new(void)
{
	struct tok_part *p = xcalloc(1, sizeof *p);
	tab_init(&p->tab, 1024);
	p->dcap = 256;
	p->dptr = xmallocarray(p->dcap + 1, sizeof *p->dptr);
	p->dptr[0] = 0;
	return p;
}

void
tok_part_free(struct tok_part *p)
{
	if (p == NULL)
		return;
	tab_free(&p->tab);
	arena_free(&p->terms);
	free(p->df);
	free(p->dptr);
	free(p->term);
	free(p->cnt);
	free(p->tok);
	free(p->dw);
	free(p->dwoff);
	free(p->join);
	free(p->cps);
	free(p->cpo);
	free(p->lex.w);
	free(p->map);
	free(p);
}

size_t
tok_part_docs(const struct tok_part *p)
{
	return p->ndocs;
}

static int
part_word(void *ctx, const char *w, size_t n, uint64_t hash)
{
	struct tok_part *p = ctx;
	if (n > UINT32_MAX)
		return -1;
	uint32_t id = tab_get(&p->tab, w, (uint32_t)n, hash, 1, &p->terms);
	if (p->nt == p->tcap) {
		p->tcap = MAX(2 * p->tcap, (size_t)256);
		p->tok = xreallocarray(p->tok, p->tcap, sizeof *p->tok);
	}
	p->tok[p->nt++] = id;
	return 0;
}

static int
u32_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return (x > y) - (x < y);
}

static void
sort_u32(uint32_t *a, size_t n)
{
	if (n > 48) {
		qsort(a, n, sizeof *a, u32_cmp);
		return;
	}
	for (size_t i = 1; i < n; i++) {
		uint32_t v = a[i];
		size_t j = i;
		for (; j > 0 && a[j - 1] > v; j--)
			a[j] = a[j - 1];
		a[j] = v;
	}
}

/* ---- n-grams (tok_set_analyzer) */

static struct {
	enum tok_kind kind;
	int nmin, nmax;
	struct tab stop;	/* lower-cased stop words (TOK_WORDS with n-grams) */
	struct arena stop_bytes;
	int has_stop;
} an = {TOK_WORDS, 1, 1, {0}, {0}, 0};

void
tok_set_analyzer(const struct tok_analyzer *a)
{
	if (an.has_stop) {
		tab_free(&an.stop);
		arena_free(&an.stop_bytes);
		memset(&an.stop_bytes, 0, sizeof an.stop_bytes);
		an.has_stop = 0;
	}
	an.kind = a != NULL ? a->kind : TOK_WORDS;
	an.nmin = a != NULL ? a->nmin : 1;
	an.nmax = a != NULL ? a->nmax : 1;
	if (a == NULL || a->kind != TOK_WORDS || a->nmax == 1 || a->nstop == 0)
		return;		/* unigrams drop stop words in tok_vocab_finish */
	struct lexer x;
	memset(&x, 0, sizeof x);
	tab_init(&an.stop, a->nstop);
	an.has_stop = 1;
	for (size_t i = 0; i < a->nstop; i++)
		if (lex_lower(&x, a->stop[i], strlen(a->stop[i])) && x.len <= UINT32_MAX)
			tab_get(&an.stop, x.w, (uint32_t)x.len, hash_bytes(x.w, x.len), 1,
			    &an.stop_bytes);
	free(x.w);
}

/* The term w[0, n) of the document being tokenised. */
static int
part_term(struct tok_part *p, const char *w, size_t n)
{
	return part_word(p, w, n, hash_bytes(w, n));
}

/* lex_words' word for word n-grams: the token kept in p->dw unless it is a stop word. */
static int
part_collect(void *ctx, const char *w, size_t n, uint64_t hash)
{
	struct tok_part *p = ctx;
	if (n > UINT32_MAX)
		return -1;
	if (an.has_stop && tab_get(&an.stop, w, (uint32_t)n, hash, 0, NULL) != NOT_FOUND)
		return 0;
	if (p->dwlen + n > p->dwcap) {
		p->dwcap = MAX(2 * p->dwcap, p->dwlen + n + 4096);
		p->dw = xrealloc(p->dw, p->dwcap);
	}
	if (p->ndw + 2 > p->dwocap) {
		p->dwocap = MAX(2 * p->dwocap, (size_t)256);
		p->dwoff = xreallocarray(p->dwoff, p->dwocap, sizeof *p->dwoff);
	}
	memcpy(p->dw + p->dwlen, w, n);
	p->dwlen += n;
	p->dwoff[++p->ndw] = p->dwlen;
	return 0;
}

/* The document's word n-grams, in scikit-learn's order (the tokens, then the pairs,
 * ...), from the tokens part_collect kept. */
static int
word_ngrams(struct tok_part *p)
{
	size_t m = p->ndw;
	for (int n = an.nmin; n <= an.nmax && (size_t)n <= m; n++)
		for (size_t i = 0; i + (size_t)n <= m; i++) {
			size_t a = p->dwoff[i], b = p->dwoff[i + (size_t)n];
			size_t len = b - a + (size_t)n - 1;
			if (len > UINT32_MAX)
				return -1;
			if (len > p->jcap) {
				p->jcap = MAX(2 * p->jcap, len + 256);
				p->join = xrealloc(p->join, p->jcap);
			}
			char *j = p->join;
			for (size_t t = i; t < i + (size_t)n; t++) {
				if (t > i)
					*j++ = ' ';
				size_t tl = p->dwoff[t + 1] - p->dwoff[t];
				memcpy(j, p->dw + p->dwoff[t], tl);
				j += tl;
			}
			if (part_term(p, p->join, len) != 0)
				return -1;
		}
	return 0;
}

/* Whether str.isspace(chr(cp)): where str.split() splits. */
static int
py_space(uint32_t cp)
{
	if (cp < 0x80)
		return (cp >= 0x09 && cp <= 0x0d) || (cp >= 0x1c && cp <= 0x20);
	return cp == 0x85 || cp == 0xa0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200a) ||
	    cp == 0x2028 || cp == 0x2029 || cp == 0x202f || cp == 0x205f || cp == 0x3000;
}

static void
push_cp(struct tok_part *p, uint32_t cp)
{
	if (p->ncps == p->cpcap) {
		p->cpcap = MAX(2 * p->cpcap, (size_t)1024);
		p->cps = xreallocarray(p->cps, p->cpcap, sizeof *p->cps);
	}
	p->cps[p->ncps++] = cp;
}

/* text[0, len) as str.lower() gives it, every character kept, into p->cps. */
static void
lower_all(struct tok_part *p, const char *text, size_t len)
{
	struct lexer *x = &p->lex;
	const unsigned char *s = (const unsigned char *)text, *end = s + len;
	x->prev_cased = 0;
	p->ncps = 0;
	while (s < end) {
		size_t n = 1;
		uint32_t cp = *s < 0x80 ? *s : utf8_decode(s, end, &n);
		int cls = cp < 0x80 ? tok_ascii[cp] : uclass(&x->cache, cp);
		uint32_t lc = cp;
		if (cp == CAPITAL_SIGMA)
			lc = x->prev_cased && !cased_after(&x->cache, s + n, end) ? 0x3c2 : 0x3c3;
		else if (cp == CAPITAL_I_DOT)
			push_cp(p, 'i'), lc = 0x307;
		else if (cls & TOK_CASED)
			lc = cp < 0x80 ? (cp | 0x20) : lower_cp(cp);
		if (!(cls & TOK_IGNORABLE))
			x->prev_cased = (cls & TOK_CASED) != 0;
		push_cp(p, lc);
		s += n;
	}
}

/* The document's char_wb n-grams (tokenize.h). */
static int
char_wb_ngrams(struct tok_part *p, const char *text, size_t len)
{
	lower_all(p, text, len);
	for (size_t i = 0; i < p->ncps;) {
		if (py_space(p->cps[i])) {
			i++;
			continue;
		}
		size_t j = i;
		while (j < p->ncps && !py_space(p->cps[j]))
			j++;
		/* " word " in UTF-8 in p->join, character k at join[cpo[k], cpo[k + 1]) */
		size_t wl = j - i + 2;
		if (wl + 1 > p->cpocap) {
			p->cpocap = MAX(2 * p->cpocap, wl + 64);
			p->cpo = xreallocarray(p->cpo, p->cpocap, sizeof *p->cpo);
		}
		if (4 * wl > p->jcap) {
			p->jcap = MAX(2 * p->jcap, 4 * wl + 256);
			p->join = xrealloc(p->join, p->jcap);
		}
		size_t b = 0;
		for (size_t k = 0; k < wl; k++) {
			p->cpo[k] = b;
			b += utf8_encode(p->join + b, k == 0 || k == wl - 1 ? ' ' : p->cps[i + k - 1]);
		}
		p->cpo[wl] = b;
		if (b > UINT32_MAX)
			return -1;
		for (size_t n = (size_t)an.nmin; n <= (size_t)an.nmax; n++) {
			if (wl <= n) {
				if (part_term(p, p->join, b) != 0)
					return -1;
				break;
			}
			for (size_t o = 0; o + n <= wl; o++)
				if (part_term(p, p->join + p->cpo[o], p->cpo[o + n] - p->cpo[o]) != 0)
					return -1;
		}
		i = j;
	}
	return 0;
}

int
tok_part_add(struct tok_part *p, const char *text, size_t len)
{
	p->nt = 0;
	if (an.kind == TOK_CHAR_WB) {
		if (char_wb_ngrams(p, text, len) != 0)
			return -1;
	} else if (an.nmax > 1) {
		p->ndw = p->dwlen = 0;
		if (p->dwocap == 0) {
			p->dwocap = 256;
			p->dwoff = xmallocarray(p->dwocap, sizeof *p->dwoff);
		}
		p->dwoff[0] = 0;
		if (lex_words(&p->lex, text, len, part_collect, p) != 0 || word_ngrams(p) != 0)
			return -1;
	} else if (lex_words(&p->lex, text, len, part_word, p) != 0) {
		return -1;
	}
	size_t nt = p->nt;
	sort_u32(p->tok, nt);
	if (p->ne + nt > p->cap) {
		p->cap = MAX(2 * p->cap, p->ne + nt + 1024);
		p->term = xreallocarray(p->term, p->cap, sizeof *p->term);
		p->cnt = xreallocarray(p->cnt, p->cap, sizeof *p->cnt);
	}
	if (p->tab.n > p->dfcap) {
		size_t old = p->dfcap;
		p->dfcap = MAX(2 * p->dfcap, p->tab.n);
		p->df = xreallocarray(p->df, p->dfcap, sizeof *p->df);
		memset(p->df + old, 0, (p->dfcap - old) * sizeof *p->df);
	}
	for (size_t a = 0; a < nt;) {
		size_t b = a + 1;
		while (b < nt && p->tok[b] == p->tok[a])
			b++;
		p->term[p->ne] = p->tok[a];
		p->cnt[p->ne++] = (uint32_t)(b - a);
		p->df[p->tok[a]]++;
		a = b;
	}
	if (p->ndocs == p->dcap) {
		p->dcap *= 2;
		p->dptr = xreallocarray(p->dptr, p->dcap + 1, sizeof *p->dptr);
	}
	p->dptr[++p->ndocs] = p->ne;
	return 0;
}

/* ---- the vocabulary */

struct tok_vocab {
	struct tab g;		/* every corpus term, first occurrence first */
	uint32_t *df;		/* per global term, then per kept term */
	size_t dfcap;
	uint32_t *keep;		/* global term -> kept term number, or NOT_FOUND */
	size_t nkept;
	uint32_t *remap;	/* tok_vocab_adopt: the parts' global terms -> g's */
	char *adopted;		/* the bytes of g's terms after tok_vocab_adopt */
};

struct tok_vocab *
tok_vocab_new(void)
{
	struct tok_vocab *v = xcalloc(1, sizeof *v);
	tab_init(&v->g, 4096);
	v->dfcap = 4096;
	v->df = xcalloc(v->dfcap, sizeof *v->df);
	return v;
}

void
tok_vocab_merge(struct tok_vocab *v, struct tok_part *p)
{
	const struct tab *t = &p->tab;
	p->map = xmallocarray(t->n ? t->n : 1, sizeof *p->map);
	p->vocab = v;
	for (size_t l = 0; l < t->n; l++) {
		uint32_t g = tab_get(&v->g, t->p[l], t->len[l], t->hash[l], 1, NULL);
		if (g >= v->dfcap) {
			size_t old = v->dfcap;
			v->dfcap *= 2;
			v->df = xreallocarray(v->df, v->dfcap, sizeof *v->df);
			memset(v->df + old, 0, (v->dfcap - old) * sizeof *v->df);
		}
		v->df[g] += p->df[l];
		p->map[l] = g;
	}
}

/* A pack: for each term, its length and document count (uint32, native order: every
 * rank of a job is the same build) and its bytes. */
void *
tok_vocab_pack(const struct tok_vocab *v, size_t *bytes)
{
	size_t n = 0;
	for (size_t g = 0; g < v->g.n; g++)
		n += 8 + v->g.len[g];
	char *b = xmalloc(MAX(n, 1)), *at = b;
	for (size_t g = 0; g < v->g.n; g++) {
		uint32_t h[2] = {v->g.len[g], v->df[g]};
		memcpy(at, h, 8);
		memcpy(at + 8, v->g.p[g], v->g.len[g]);
		at += 8 + v->g.len[g];
	}
	*bytes = n;
	return b;
}

void
tok_vocab_adopt(struct tok_vocab *v, char *all, size_t bytes)
{
	struct tab g;
	size_t dfcap = 4096;
	uint32_t *df = xcalloc(dfcap, sizeof *df);
	tab_init(&g, v->g.n);
	for (size_t at = 0; at + 8 <= bytes;) {
		uint32_t h[2];
		memcpy(h, all + at, 8);
		const char *p = all + at + 8;
		uint32_t id = tab_get(&g, p, h[0], hash_bytes(p, h[0]), 1, NULL);
		if (id >= dfcap) {
			df = xreallocarray(df, 2 * dfcap, sizeof *df);
			memset(df + dfcap, 0, dfcap * sizeof *df);
			dfcap *= 2;
		}
		df[id] += h[1];
		at += 8 + (size_t)h[0];
	}
	v->remap = xmallocarray(v->g.n ? v->g.n : 1, sizeof *v->remap);
	for (size_t l = 0; l < v->g.n; l++) {
		v->remap[l] = tab_get(&g, v->g.p[l], v->g.len[l], v->g.hash[l], 0, NULL);
		if (v->remap[l] == NOT_FOUND)
			die("a term of this rank's share is missing from the merged vocabulary");
	}
	tab_free(&v->g);
	free(v->df);
	v->g = g;
	v->df = df;
	v->dfcap = dfcap;
	v->adopted = all;
}

void
tok_vocab_finish(struct tok_vocab *v, const struct tok_opts *o, size_t ndocs)
{
	double lo = o->min_df_prop ? o->min_df * (double)ndocs : o->min_df;
	double hi = o->max_df_prop ? o->max_df * (double)ndocs : o->max_df;
	size_t ng = v->g.n;
	unsigned char *drop = xcalloc(ng ? ng : 1, 1);
	struct lexer x;
	memset(&x, 0, sizeof x);
	for (size_t s = 0; s < o->nstop; s++) {
		/* lower-cased as the text is; one that is not all word characters can match
		 * no token */
		if (!lex_lower(&x, o->stop[s], strlen(o->stop[s])) || x.len > UINT32_MAX)
			continue;
		uint32_t g = tab_get(&v->g, x.w, (uint32_t)x.len, hash_bytes(x.w, x.len), 0, NULL);
		if (g != NOT_FOUND)
			drop[g] = 1;
	}
	free(x.w);
	v->keep = xmallocarray(ng ? ng : 1, sizeof *v->keep);
	for (size_t g = 0; g < ng; g++) {
		if (drop[g] || (double)v->df[g] < lo || (double)v->df[g] > hi) {
			v->keep[g] = NOT_FOUND;
			continue;
		}
		v->df[v->nkept] = v->df[g];
		v->keep[g] = (uint32_t)v->nkept++;
	}
	free(drop);
}

struct tc {
	uint32_t t, c;
};

static int
tc_cmp(const void *a, const void *b)
{
	uint32_t x = ((const struct tc *)a)->t, y = ((const struct tc *)b)->t;
	return (x > y) - (x < y);
}

/* A part's terms as kept terms (NOT_FOUND: dropped or unknown). */
static uint32_t *
kept_terms(const struct tok_vocab *v, const struct tok_part *p)
{
	const struct tab *t = &p->tab;
	uint32_t *k = xmallocarray(t->n ? t->n : 1, sizeof *k);
	for (size_t l = 0; l < t->n; l++) {
		uint32_t g = p->vocab == v ? p->map[l] :
		    tab_get((struct tab *)&v->g, t->p[l], t->len[l], t->hash[l], 0, NULL);
		if (p->vocab == v && v->remap != NULL)
			g = v->remap[g];
		k[l] = g == NOT_FOUND ? NOT_FOUND : v->keep[g];
	}
	return k;
}

void
tok_count(const struct tok_vocab *v, struct tok_part *const *parts, size_t nparts,
    struct tok_counts *out)
{
	size_t *base = xmallocarray(nparts + 1, sizeof *base);
	uint32_t **kept = xcalloc(nparts ? nparts : 1, sizeof *kept);
	base[0] = 0;
	for (size_t i = 0; i < nparts; i++)
		base[i + 1] = base[i] + parts[i]->ndocs;
	size_t ndocs = base[nparts];
	uint64_t *ptr = xmallocarray(ndocs + 1, sizeof *ptr);
	ptr[0] = 0;

	#pragma omp parallel for schedule(dynamic, 1) if (nparts > 1)
	for (size_t i = 0; i < nparts; i++) {
		const struct tok_part *p = parts[i];
		uint32_t *k = kept[i] = kept_terms(v, p);
		for (size_t d = 0; d < p->ndocs; d++) {
			uint64_t m = 0;
			for (uint64_t e = p->dptr[d]; e < p->dptr[d + 1]; e++)
				m += k[p->term[e]] != NOT_FOUND;
			ptr[base[i] + d + 1] = m;
		}
	}
	for (size_t d = 0; d < ndocs; d++)
		ptr[d + 1] += ptr[d];
	uint64_t nnz = ptr[ndocs];
	out->rows = ndocs;
	out->cols = v->nkept;
	out->ptr = ptr;
	out->idx = xmallocarray(nnz ? nnz : 1, sizeof *out->idx);
	out->cnt = xmallocarray(nnz ? nnz : 1, sizeof *out->cnt);

	#pragma omp parallel if (nparts > 1)
	{
		size_t cap = 64;
		struct tc *buf = xmallocarray(cap, sizeof *buf);
		#pragma omp for schedule(dynamic, 1)
		for (size_t i = 0; i < nparts; i++) {
			const struct tok_part *p = parts[i];
			const uint32_t *k = kept[i];
			for (size_t d = 0; d < p->ndocs; d++) {
				uint64_t at = ptr[base[i] + d];
				size_t m = 0, want = (size_t)(ptr[base[i] + d + 1] - at);
				if (want > cap) {
					cap = 2 * want;
					buf = xreallocarray(buf, cap, sizeof *buf);
				}
				for (uint64_t e = p->dptr[d]; e < p->dptr[d + 1]; e++)
					if (k[p->term[e]] != NOT_FOUND)
						buf[m++] = (struct tc){k[p->term[e]], p->cnt[e]};
				/* kept numbers follow global first occurrence, local ones the
				 * part's: sorted again */
				if (m > 48)
					qsort(buf, m, sizeof *buf, tc_cmp);
				else
					for (size_t a = 1; a < m; a++) {
						struct tc x = buf[a];
						size_t b = a;
						for (; b > 0 && buf[b - 1].t > x.t; b--)
							buf[b] = buf[b - 1];
						buf[b] = x;
					}
				for (size_t a = 0; a < m; a++) {
					out->idx[at + a] = buf[a].t;
					out->cnt[at + a] = buf[a].c;
				}
			}
		}
		free(buf);
	}
	for (size_t i = 0; i < nparts; i++)
		free(kept[i]);
	free(kept);
	free(base);
}

size_t
tok_vocab_size(const struct tok_vocab *v)
{
	return v->nkept;
}

const uint32_t *
tok_vocab_df(const struct tok_vocab *v)
{
	return v->df;
}

void
tok_vocab_free(struct tok_vocab *v)
{
	if (v == NULL)
		return;
	tab_free(&v->g);
	free(v->keep);
	free(v->df);
	free(v->remap);
	free(v->adopted);
	free(v);
}

static int
is_space(int c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f' || c == '\n';
}

char **
tok_read_words(const char *path, size_t *n, char **text)
{
	input *in = in_open(path);
	char *buf = in_slurp(in, NULL), **w = NULL;
	*text = buf;
	size_t cap = 0;
	*n = 0;
	in_close(in);
	for (char *p = buf; *p;) {
		while (*p && is_space(*p))
			p++;
		if (!*p)
			break;
		char *s = p;
		while (*p && !is_space(*p))
			p++;
		if (*n == cap) {
			cap = cap ? 2 * cap : 64;
			w = xreallocarray(w, cap, sizeof *w);
		}
		w[(*n)++] = s;
		if (*p)
			*p++ = '\0';
	}
	return w;
}
