/* tokenize_analyze.c: a document's terms, as tok_set_analyzer says. As scikit-learn's
 * analyzers make them: the lexer's tokens (words), word n-grams of the tokens that are
 * not stop words, or char_wb's character n-grams from inside the words of the
 * lower-cased text; each term numbered in the part's table as it comes. */
#include "tokenize_int.h"

#include <stdlib.h>
#include <string.h>

#include "err.h"

/* A term of the document being tokenised (and tok_lex_words' word for unigrams). */
static int
part_word(void *ctx, const char *w, size_t n, uint64_t hash)
{
	struct tok_part *p = ctx;
	if (n > UINT32_MAX)
		return -1;
	uint32_t id = tok_tab_get(&p->tab, w, (uint32_t)n, hash, 1, &p->terms);
	if (p->nt == p->tcap) {
		p->tcap = MAX(2 * p->tcap, (size_t)256);
		p->tok = xreallocarray(p->tok, p->tcap, sizeof *p->tok);
	}
	p->tok[p->nt++] = id;
	return 0;
}

/* ---- the analyzer (tok_set_analyzer) */

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
		tok_tab_free(&an.stop);
		tok_arena_free(&an.stop_bytes);
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
	tok_tab_init(&an.stop, a->nstop);
	an.has_stop = 1;
	for (size_t i = 0; i < a->nstop; i++)
		if (tok_lex_lower(&x, a->stop[i], strlen(a->stop[i])) && x.len <= UINT32_MAX)
			tok_tab_get(&an.stop, x.w, (uint32_t)x.len, hash_bytes(x.w, x.len), 1,
			    &an.stop_bytes);
	free(x.w);
}

/* The term w[0, n) of the document being tokenised. */
static int
part_term(struct tok_part *p, const char *w, size_t n)
{
	return part_word(p, w, n, hash_bytes(w, n));
}

/* tok_lex_words' word for word n-grams: the token kept in p->dw unless it is a stop word. */
static int
part_collect(void *ctx, const char *w, size_t n, uint64_t hash)
{
	struct tok_part *p = ctx;
	if (n > UINT32_MAX)
		return -1;
	if (an.has_stop && tok_tab_get(&an.stop, w, (uint32_t)n, hash, 0, NULL) != NOT_FOUND)
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
		uint32_t lc = lower_char(&x->cache, &x->prev_cased, cp, cls, s + n, end);
		if (cp == CAPITAL_I_DOT)
			push_cp(p, lc), lc = 0x307;
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
tok_part_terms(struct tok_part *p, const char *text, size_t len)
{
	if (an.kind == TOK_CHAR_WB)
		return char_wb_ngrams(p, text, len);
	if (an.nmax == 1)
		return tok_lex_words(&p->lex, text, len, part_word, p);
	p->ndw = p->dwlen = 0;
	if (p->dwocap == 0) {
		p->dwocap = 256;
		p->dwoff = xmallocarray(p->dwocap, sizeof *p->dwoff);
	}
	p->dwoff[0] = 0;
	if (tok_lex_words(&p->lex, text, len, part_collect, p) != 0)
		return -1;
	return word_ngrams(p);
}
