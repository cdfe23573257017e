/* tokenize_char.h: the tokeniser's characters: UTF-8, classes, lower case, hashes.
 * For the tokenize*.c files, not for the programs: UTF-8 decoded and encoded, a
 * character's class and its lower case from the generated tables (tokenize_table.h,
 * defined once in tokenize_char.c), and the hash of a term. They are static inline
 * because they run once a character in the lexer's and char_wb's loops, which must keep
 * them inlined (a call a character costs the loop its speed); the rare path
 * (str.lower's final sigma looking ahead) is a call. */
#ifndef ACCELKIT_TOKENIZE_CHAR_H
#define ACCELKIT_TOKENIZE_CHAR_H

#include <stddef.h>
#include <stdint.h>

struct tok_run {
	uint32_t first, last, step;
	int32_t delta;
};

enum { TOK_WORD = 1, TOK_CASED = 2, TOK_IGNORABLE = 4 };

#include "tokenize_table.h"

#define TOK_NUCLASS (sizeof tok_uclass / sizeof tok_uclass[0])
#define TOK_NULOWER (sizeof tok_ulower / sizeof tok_ulower[0])

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
	size_t a = 0, b = TOK_NUCLASS;
	while (b - a > 1) {	/* the last entry whose start is <= cp */
		size_t m = a + (b - a) / 2;
		if (tok_uclass[m] >> 3 <= cp)
			a = m;
		else
			b = m;
	}
	k->lo = tok_uclass[a] >> 3;
	k->hi = a + 1 < TOK_NUCLASS ? tok_uclass[a + 1] >> 3 : 0x110000;
	k->cls = (int)(tok_uclass[a] & 7);
	return k->cls;
}

/* str.lower of a cased character beyond ASCII with a one-character lower case (all
 * but U+0130). */
static inline uint32_t
lower_cp(uint32_t cp)
{
	size_t a = 0, b = TOK_NULOWER;
	while (a < b) {		/* the first run that ends at or after cp */
		size_t m = a + (b - a) / 2;
		if (tok_ulower[m].last < cp)
			a = m + 1;
		else
			b = m;
	}
	if (a < TOK_NULOWER) {
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
int tok_cased_after(struct uclass_cache *k, const unsigned char *p, const unsigned char *end);

/* str.lower of the character cp of class cls, whose encoding ends at next (end: the
 * text's end), for the lexer and char_wb alike: its first character, U+0130 lowering to
 * "i" U+0307 (the caller adds the U+0307). *prev_cased, whether the last character not
 * case-ignorable was cased (the final sigma's other half), is brought up to date. */
static inline uint32_t
lower_char(struct uclass_cache *k, int *prev_cased, uint32_t cp, int cls,
    const unsigned char *next, const unsigned char *end)
{
	uint32_t lc = cp;
	if (cp == CAPITAL_SIGMA)
		lc = *prev_cased && !tok_cased_after(k, next, end) ? 0x3c2 : 0x3c3;
	else if (cp == CAPITAL_I_DOT)
		lc = 'i';
	else if (cls & TOK_CASED)
		lc = cp < 0x80 ? (cp | 0x20) : lower_cp(cp);
	if (!(cls & TOK_IGNORABLE))
		*prev_cased = (cls & TOK_CASED) != 0;
	return lc;
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

#endif
