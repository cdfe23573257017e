/* tokenize_int.h: what the tokenize*.c files share (not for the programs). The lexer
 * (tokenize_lex.c), the table of terms (tokenize_tab.c), a part's layout (parts in
 * tokenize.c, filled by the analyzers of tokenize_analyze.c, read by the vocabulary of
 * tokenize_vocab.c). */
#ifndef ACCELKIT_TOKENIZE_INT_H
#define ACCELKIT_TOKENIZE_INT_H

#include <stddef.h>
#include <stdint.h>

#include "tokenize.h"
#include "tokenize_char.h"

/* ---- the lexer (tokenize_lex.c) */

/* Reading text a character at a time, lower-cased as str.lower does. */
struct lexer {
	struct uclass_cache cache;
	int prev_cased;		/* the last character not case-ignorable was cased */
	char *w;		/* the output so far (a word, or a whole lower-cased text) */
	size_t len, cap;
	uint64_t h;		/* its hash so far */
};

/* Calls word(ctx, w, n, hash) for every run of 2 or more word characters of
 * text[0, len) after lower-casing (w: the run in UTF-8, n bytes, hash_bytes(w, n)), as
 * the token pattern \b\w\w+\b finds them in text.lower(); stops with -1 when word does. */
typedef int (*tok_word_fn)(void *ctx, const char *w, size_t n, uint64_t hash);
int tok_lex_words(struct lexer *x, const char *text, size_t len, tok_word_fn word,
    void *ctx);

/* text[0, len) lower-cased whole into x->w (x->len bytes): as str.lower(), but for the
 * characters that are not word characters, which are left out (a stop word holding one
 * can match no token). Returns whether there were none. */
int tok_lex_lower(struct lexer *x, const char *text, size_t len);

/* ---- a table of terms (tokenize_tab.c) */

/* Memory for terms in blocks that never move. */
struct arena {
	char **block;
	size_t nblocks, left;
	char *at;
};

void tok_arena_free(struct arena *a);

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

/* A table sized for about expect terms. */
void tok_tab_init(struct tab *t, size_t expect);
void tok_tab_free(struct tab *t);
/* The term's number. A new term is added when add is set (its bytes copied into
 * arena, or kept where they are when arena is NULL), else NOT_FOUND. */
uint32_t tok_tab_get(struct tab *t, const char *p, uint32_t len, uint64_t h, int add,
    struct arena *arena);

/* ---- parts (tokenize.c) */

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

/* ---- the analyzers (tokenize_analyze.c) */

/* The terms of text[0, len), a document, as tok_set_analyzer says, into p->tok[0, p->nt)
 * (numbers in p->tab, in order of occurrence). 0, or -1 when a term is longer than
 * 4 GiB. */
int tok_part_terms(struct tok_part *p, const char *text, size_t len);

#endif
