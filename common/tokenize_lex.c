/* tokenize_lex.c: the lexer: text lower-cased as str.lower does, into tokens. Read a
 * character at a time into the runs of word characters that are scikit-learn's tokens
 * (or, for stop words, into one lower-cased string); the characters' code is inlined
 * from tokenize_char.h. */
#include "tokenize_int.h"

#include "err.h"

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
	lc = lower_char(&x->cache, &x->prev_cased, cp, cls, p + n, end);
	*split = cp == CAPITAL_I_DOT;
	if (cls & TOK_WORD || *split) {
		size_t m = utf8_encode(x->w + x->len, lc);
		for (size_t i = 0; i < m; i++)
			x->h = HASH_STEP(x->h, x->w[x->len + i]);
		x->len += m;
	}
	return cls;
}

int
tok_lex_words(struct lexer *x, const char *text, size_t len, tok_word_fn word, void *ctx)
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

int
tok_lex_lower(struct lexer *x, const char *text, size_t len)
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
