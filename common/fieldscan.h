/* fieldscan.h: where the fields of a line split by blanks or a comma are (the table
 * reader's default separators, as dense.h reads numbers), found 64 bytes a step.
 *
 * Why: the table reader split its lines a byte at a time, then parsed the chosen
 * fields; finding the fields from bit masks (a few vector compares for 64 bytes) made
 * it 1.8x faster a core (bench/readers' table, 2026-11-29). The dense reader does not
 * use it: its numbers are parsed as its walk meets them, and a scan first was slower.
 *
 * Only plain lines are scanned: fields of any bytes but blanks and commas, separated by
 * runs of ' ' and '\t' or by one ',' with blanks around it, no comma before the first
 * field or after the last. A line with any of '#' (a comment), '\0', '\r', '\v', '\f'
 * or another byte below ',' that is not ' ', '\t' or '+', or with a comma out of place,
 * is "not plain" (-1): the caller then takes its exact byte-by-byte path, which says
 * what is wrong or reads what is unusual. Plain lines are therefore split as that path
 * splits them (tests/common.bats compares the table reader with numpy on lines of every
 * kind, at chunk edges too).
 *
 * The scan loads whole 64-byte blocks from the line's start: up to 63 bytes past its
 * end must be readable (chunks.h's CHUNK_PAD). */
#ifndef ACCELKIT_FIELDSCAN_H
#define ACCELKIT_FIELDSCAN_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

struct fscan {
	const char *p;
	size_t len, b;		/* the line; the offset of the next block to load */
	uint64_t tr, com;	/* the loaded block's field starts and ends, and its commas,
				   not yet taken */
	uint64_t in;		/* inside a field, after the events taken */
	int comma;		/* the last event was a comma, or the line's start */
	int any;		/* a field has started */
	size_t start;		/* the open field's start */
};

/* Bit i of *sep: byte i of the 64 at p is a separator (' ', '\t', ','); of *com: a
 * comma; of *odd: a byte that makes the line not plain. */
static inline void
fscan_masks(const char *p, uint64_t *sep, uint64_t *com, uint64_t *odd)
{
#if defined(__SSE2__)
	uint64_t s = 0, c = 0, o = 0;
	for (int k = 0; k < 4; k++) {
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)(p + 16 * k));
		__m128i cm = _mm_cmpeq_epi8(v, _mm_set1_epi8(','));
		__m128i sp = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8(' ')),
		    _mm_cmpeq_epi8(v, _mm_set1_epi8('\t'))), cm);
		/* bytes <= ',' (unsigned) other than the separators and '+' */
		__m128i low = _mm_cmpeq_epi8(_mm_max_epu8(v, _mm_set1_epi8(',')),
		    _mm_set1_epi8(','));
		__m128i bad = _mm_andnot_si128(_mm_or_si128(sp,
		    _mm_cmpeq_epi8(v, _mm_set1_epi8('+'))), low);
		s |= (uint64_t)(uint16_t)_mm_movemask_epi8(sp) << (16 * k);
		c |= (uint64_t)(uint16_t)_mm_movemask_epi8(cm) << (16 * k);
		o |= (uint64_t)(uint16_t)_mm_movemask_epi8(bad) << (16 * k);
	}
	*sep = s;
	*com = c;
	*odd = o;
#else
	uint64_t s = 0, c = 0, o = 0;
	for (int i = 0; i < 64; i++) {
		unsigned char x = (unsigned char)p[i];
		uint64_t bit = (uint64_t)1 << i;
		if (x == ' ' || x == '\t' || x == ',')
			s |= bit;
		if (x == ',')
			c |= bit;
		else if (x < ',' && x != ' ' && x != '\t' && x != '+')
			o |= bit;
	}
	*sep = s;
	*com = c;
	*odd = o;
#endif
}

static inline void
fscan_init(struct fscan *s, const char *p, size_t len)
{
	memset(s, 0, sizeof *s);
	s->p = p;
	s->len = len;
	s->comma = 1;
}

/* The next field, [*a, *z) of the line: 1; 0 at the line's end; -1: not plain. */
static inline int
fscan_next(struct fscan *s, size_t *a, size_t *z)
{
	for (;;) {
		/* Events in the order of their bytes; a field's end and a comma on the same
		 * byte: the end first (the comma is taken at the next call). */
		while ((s->tr | s->com) != 0) {
			uint64_t ev = s->tr | s->com, bit = ev & -ev;
			size_t at = s->b - 64 + (size_t)__builtin_ctzll(ev);
			if (s->tr & bit) {
				s->tr ^= bit;
				if ((s->in ^= 1) != 0) {
					s->start = at;
					s->comma = 0;
					s->any = 1;
					continue;
				}
				*a = s->start;
				*z = at;
				return 1;
			}
			s->com ^= bit;
			if (s->comma)
				return -1;	/* a comma before any field, or after a comma */
			s->comma = 1;
		}
		if (s->b >= s->len) {
			if (s->in) {	/* a field up to the end of a line of whole blocks */
				s->in = 0;
				*a = s->start;
				*z = s->len;
				return 1;
			}
			return s->comma && s->any ? -1 : 0;	/* -1: a comma after the last */
		}
		uint64_t sep, com, odd, rem = s->len - s->b;
		fscan_masks(s->p + s->b, &sep, &com, &odd);
		if (rem < 64) {	/* past the line's end: separators */
			uint64_t out = ~(uint64_t)0 << rem;
			sep |= out;
			com &= ~out;
			odd &= ~out;
		}
		if (odd != 0)
			return -1;
		s->tr = ~sep ^ (~sep << 1 | s->in);
		s->com = com;
		s->b += 64;
	}
}

#ifdef __cplusplus
}
#endif
#endif
