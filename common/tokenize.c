/* tokenize.c: raw text into term counts (tokenize.h): parts, and stop-word files.
 * A part tokenises its documents against a hash table of its own, copying each new
 * term into an arena (the reader's chunk that held the text is reused). The corpus's
 * parts are merged in input order into the vocabulary, so global term numbers follow
 * first occurrence whatever the thread count or chunk size; counts are then built per
 * part in parallel.
 *
 * The tokeniser's other files: tokenize_char.h and tokenize_char.c (characters),
 * tokenize_lex.c (the lexer), tokenize_analyze.c (a document's terms: words, word and
 * char_wb n-grams), tokenize_tab.c (the table of terms), tokenize_vocab.c (the
 * vocabulary and the counts); tokenize_int.h what they share. */
#include "tokenize_int.h"

#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "input.h"

struct tok_part *
tok_part_new(void)
{
	struct tok_part *p = xcalloc(1, sizeof *p);
	tok_tab_init(&p->tab, 1024);
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
	tok_tab_free(&p->tab);
	tok_arena_free(&p->terms);
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

int
tok_part_add(struct tok_part *p, const char *text, size_t len)
{
	p->nt = 0;
	if (tok_part_terms(p, text, len) != 0)
		return -1;
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
