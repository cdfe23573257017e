/* editdist4r_sym.c: -u's characters as the engines' bytes. The engines compare bytes;
 * the distance and an alignment depend only on which symbols of A equal which of B, so
 * a pair of UTF-8 strings is decoded and its code points given byte codes: one code
 * for each code point that occurs in both strings, one shared by all that occur only in
 * A, and one by all that occur only in B. That fits a byte whenever the strings share
 * at most 254 distinct characters; a pair that shares more keeps its code points (32
 * bits each) for the plain DP. Code points below 256 (ASCII, Latin-1) are their own
 * codes, without a look-up. */
#include "editdist4r_run.h"

#include <stdlib.h>
#include <string.h>

#include "err.h"

/* ---- UTF-8 (RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF) ---- */

/* The code point at s[0..n) into *cp: its length in bytes, 0 when it is not UTF-8. */
static size_t
utf8_one(const uint8_t *s, size_t n, uint32_t *cp)
{
	uint32_t c = s[0], lo = 0x80, hi = 0xbf;
	size_t len;

	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if (c >= 0xc2 && c <= 0xdf) {
		len = 2;
		c &= 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		lo = c == 0xe0 ? 0xa0 : 0x80;
		hi = c == 0xed ? 0x9f : 0xbf;
		c &= 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		lo = c == 0xf0 ? 0x90 : 0x80;
		hi = c == 0xf4 ? 0x8f : 0xbf;
		c &= 0x07;
	} else {
		return 0;
	}
	if (n < len || s[1] < lo || s[1] > hi)
		return 0;
	c = c << 6 | (s[1] & 0x3fu);
	for (size_t k = 2; k < len; k++) {
		if (s[k] < 0x80 || s[k] > 0xbf)
			return 0;
		c = c << 6 | (s[k] & 0x3fu);
	}
	*cp = c;
	return len;
}

int
ed_utf8_check(const uint8_t *s, size_t n, size_t *count, size_t *bad)
{
	size_t i = 0, k = 0;
	uint32_t cp;

	while (i < n) {
		/* ASCII eight bytes at a time */
		while (i + 8 <= n) {
			uint64_t w;
			memcpy(&w, s + i, 8);
			if (w & 0x8080808080808080ull)
				break;
			i += 8;
			k += 8;
		}
		if (i == n)
			break;
		size_t len = utf8_one(s + i, n - i, &cp);
		if (len == 0) {
			*bad = i;
			return 0;
		}
		i += len;
		k++;
	}
	*count = k;
	return 1;
}

/* Code points of valid UTF-8 s[0..n) into out; returns their count. */
static size_t
utf8_decode(const uint8_t *s, size_t n, uint32_t *out)
{
	size_t k = 0;
	for (size_t i = 0; i < n;)
		i += utf8_one(s + i, n - i, &out[k++]);
	return k;
}

/* ---- code points to codes ---- */

/* The distinct code points of a pair (or of every record of --all-vs-all), in a hash
 * table that is emptied by clearing only the slots used. */
struct symmap {
	uint32_t *key;		/* code point + 1; 0: empty */
	uint8_t *side;		/* 1: occurs in A, 2: in B, 3: both */
	uint8_t *code;
	uint32_t *used;		/* the slots in use, in the order first used */
	size_t nused, cap;	/* cap: a power of two, at least twice nused */
	size_t both;		/* code points in both */
};

static void
map_free(struct symmap *m)
{
	free(m->key);
	free(m->side);
	free(m->code);
	free(m->used);
	memset(m, 0, sizeof *m);
}

static void
map_clear(struct symmap *m)
{
	for (size_t i = 0; i < m->nused; i++)
		m->key[m->used[i]] = 0;
	m->nused = 0;
	m->both = 0;
}

static size_t
map_slot(const struct symmap *m, uint32_t cp)
{
	size_t i = (size_t)((cp * 0x9e3779b1u) >> 7) & (m->cap - 1);
	while (m->key[i] != 0 && m->key[i] != cp + 1)
		i = (i + 1) & (m->cap - 1);
	return i;
}

/* Room for n more code points. */
static void
map_reserve(struct symmap *m, size_t n)
{
	if (2 * (m->nused + n) <= m->cap)
		return;
	struct symmap old = *m;
	m->cap = 256;
	while (m->cap < 2 * (old.nused + n))
		m->cap *= 2;
	m->key = xcalloc(m->cap, sizeof *m->key);
	m->side = xmalloc(m->cap);
	m->code = xmalloc(m->cap);
	m->used = xmallocarray(m->cap / 2, sizeof *m->used);
	m->nused = 0;
	for (size_t i = 0; i < old.nused; i++) {
		size_t o = old.used[i], s = map_slot(m, old.key[o] - 1);
		m->key[s] = old.key[o];
		m->side[s] = old.side[o];
		m->used[m->nused++] = (uint32_t)s;
	}
	free(old.key);
	free(old.side);
	free(old.code);
	free(old.used);
}

/* Notes that the code points s[0..n) occur on side (1: A, 2: B); room reserved. */
static void
map_add(struct symmap *m, const uint32_t *s, size_t n, int side)
{
	for (size_t i = 0; i < n; i++) {
		size_t k = map_slot(m, s[i]);
		if (m->key[k] == 0) {
			m->key[k] = s[i] + 1;
			m->side[k] = 0;
			m->used[m->nused++] = (uint32_t)k;
		}
		if (m->side[k] != 3 && (m->side[k] | side) == 3)
			m->both++;
		m->side[k] |= (uint8_t)side;
	}
}

/* Gives every code point its code; 0 when they need more than 256. */
static int
map_assign(struct symmap *m)
{
	size_t aonly = 0, bonly = 0;
	for (size_t i = 0; i < m->nused; i++) {
		uint8_t sd = m->side[m->used[i]];
		aonly += sd == 1;
		bonly += sd == 2;
	}
	size_t need = m->both + (aonly > 0) + (bonly > 0);
	if (need > 256)
		return 0;
	uint32_t next = 0, acode = (uint32_t)m->both, bcode = acode + (aonly > 0);
	for (size_t i = 0; i < m->nused; i++) {
		size_t k = m->used[i];
		m->code[k] = (uint8_t)(m->side[k] == 3 ? next++ : m->side[k] == 1 ? acode : bcode);
	}
	return 1;
}

static void
map_code(const struct symmap *m, const uint32_t *s, size_t n, uint8_t *out)
{
	for (size_t i = 0; i < n; i++)
		out[i] = m->code[map_slot(m, s[i])];
}

static int
below256(const uint32_t *s, size_t n)
{
	uint32_t or = 0;
	for (size_t i = 0; i < n; i++)
		or |= s[i];
	return or < 256;
}

/* ---- a batch's pairs ---- */

/* One thread's scratch. */
struct symwork {
	uint32_t *cp;
	size_t cap;
	struct symmap m;
};

/* Codes pair p (UTF-8 in the pool) into bytes in place; 0 when it is too wide. */
static int
code_pair(uint8_t *pool, struct ed_pair *p, struct symwork *w)
{
	if ((size_t)p->alen + p->blen > w->cap) {
		w->cap = MAX((size_t)p->alen + p->blen, 2 * w->cap);
		free(w->cp);
		w->cp = xmallocarray(w->cap, sizeof *w->cp);
	}
	uint32_t *a = w->cp;
	size_t an = utf8_decode(pool + p->aoff, p->alen, a);
	uint32_t *b = a + an;
	size_t bn = utf8_decode(pool + p->boff, p->blen, b);

	if (below256(a, an) && below256(b, bn)) {
		for (size_t i = 0; i < an; i++)
			pool[p->aoff + i] = (uint8_t)a[i];
		for (size_t i = 0; i < bn; i++)
			pool[p->boff + i] = (uint8_t)b[i];
	} else {
		map_clear(&w->m);
		map_reserve(&w->m, an + bn);
		map_add(&w->m, a, an, 1);
		map_add(&w->m, b, bn, 2);
		if (!map_assign(&w->m))
			return 0;
		map_code(&w->m, a, an, pool + p->aoff);
		map_code(&w->m, b, bn, pool + p->boff);
	}
	p->alen = (uint32_t)an;
	p->blen = (uint32_t)bn;
	return 1;
}

/* A pair too wide for bytes: its code points into the batch's wide buffer. */
static void
widen_pair(struct ed_batch *b, struct ed_pair *p)
{
	size_t need = b->wused + p->alen + p->blen;
	if (need > UINT32_MAX)
		die("-u: the characters of a batch's widest pairs pass 4 G");
	if (need > b->wcap) {
		b->wcap = MAX(need, 2 * b->wcap);
		b->wide = xreallocarray(b->wide, b->wcap, sizeof *b->wide);
	}
	uint32_t aoff = (uint32_t)b->wused;
	size_t an = utf8_decode(b->pool + p->aoff, p->alen, b->wide + aoff);
	uint32_t boff = (uint32_t)(aoff + an);
	size_t bn = utf8_decode(b->pool + p->boff, p->blen, b->wide + boff);
	b->wused = boff + bn;
	*p = (struct ed_pair){aoff, (uint32_t)an, boff, (uint32_t)bn};
}

void
ed_sym_batch(struct ed_batch *b)
{
	size_t wide = 0;
	#pragma omp parallel reduction(+ : wide)
	{
		struct symwork w;
		memset(&w, 0, sizeof w);
		#pragma omp for schedule(dynamic, 64)
		for (size_t i = 0; i < b->n; i++) {
			if (b->kind[i] != ED_UTF8)
				continue;
			if (code_pair(b->pool, &b->pairs[i], &w))
				b->kind[i] = ED_BYTES;
			else
				wide++;
		}
		free(w.cp);
		map_free(&w.m);
	}
	b->wused = 0;
	for (size_t i = 0; wide > 0 && i < b->n; i++) {
		if (b->kind[i] == ED_UTF8) {
			widen_pair(b, &b->pairs[i]);
			b->kind[i] = ED_WIDE;
		}
	}
	b->nwide = wide;
}

/* ---- --all-vs-all: one coding for every record, when it fits ---- */

int
ed_sym_records(uint8_t *pool, struct ed_recs *A, struct ed_recs *B)
{
	struct symmap m;
	uint32_t *cp = NULL;
	size_t cap = 0;
	struct ed_recs *side[2] = {A, B};

	memset(&m, 0, sizeof m);
	for (int s = 0; s < 2; s++) {
		for (size_t i = 0; i < side[s]->n; i++) {
			size_t len = side[s]->len[i];
			if (len > cap) {
				cap = MAX(len, 2 * cap);
				free(cp);
				cp = xmallocarray(cap, sizeof *cp);
			}
			size_t k = utf8_decode(pool + side[s]->off[i], len, cp);
			map_reserve(&m, k);
			map_add(&m, cp, k, s + 1);
		}
	}
	free(cp);
	int ok = map_assign(&m);
	for (int s = 0; ok && s < 2; s++) {
		struct ed_recs *r = side[s];
		#pragma omp parallel
		{
			uint32_t *c = NULL;
			size_t ccap = 0;
			#pragma omp for schedule(dynamic, 64)
			for (size_t i = 0; i < r->n; i++) {
				if (r->len[i] > ccap) {
					ccap = MAX(r->len[i], 2 * ccap);
					free(c);
					c = xmallocarray(ccap, sizeof *c);
				}
				size_t k = utf8_decode(pool + r->off[i], r->len[i], c);
				map_code(&m, c, k, pool + r->off[i]);
				r->len[i] = (uint32_t)k;
			}
			free(c);
		}
	}
	map_free(&m);
	return ok;
}
