/* tokenize_tab.c: the tokeniser's table of terms: an arena and a hash index. Each
 * term's bytes are copied once into an arena that never moves, numbered by first
 * occurrence and found again by an open-addressing index over the terms' hashes (a
 * part's terms, the vocabulary's, the stop words of word n-grams). */
#include "tokenize_int.h"

#include <stdlib.h>
#include <string.h>

#include "err.h"

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

void
tok_arena_free(struct arena *a)
{
	for (size_t i = 0; i < a->nblocks; i++)
		free(a->block[i]);
	free(a->block);
}

void
tok_tab_init(struct tab *t, size_t expect)
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

void
tok_tab_free(struct tab *t)
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

uint32_t
tok_tab_get(struct tab *t, const char *p, uint32_t len, uint64_t h, int add,
    struct arena *arena)
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

