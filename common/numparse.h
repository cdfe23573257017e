/* numparse.h: fast decimal parsing that gives exactly what strtod gives. */
#ifndef ACCELKIT_NUMPARSE_H
#define ACCELKIT_NUMPARSE_H

#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Parses a number at s as strtod does in the C locale (leading blanks are not
 * skipped). Returns the end, or s when there is no number. Decimal numbers of up to
 * 19 significant digits and a small exponent take an exact fast path (Clinger's);
 * everything else (long mantissas, large exponents, hex, inf, nan) goes to strtod. */
const char *parse_double(const char *s, double *out);

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
/* How many of the eight bytes at p are digits before the first that is not (0..8), and
 * their value in *val: one load, no branch on the count (fast_float's SWAR steps). A
 * byte of 0xfa or more carries into the bytes after it, which are not counted then. */
static inline int
parse_digits8(const char *p, uint64_t *val)
{
	uint64_t w, nd;
	int n;

	memcpy(&w, p, 8);
	nd = ((w & 0xF0F0F0F0F0F0F0F0ULL) ^ 0x3030303030303030ULL) |
	    (((w + 0x0606060606060606ULL) & 0xF0F0F0F0F0F0F0F0ULL) ^ 0x3030303030303030ULL);
	n = nd == 0 ? 8 : __builtin_ctzll(nd) >> 3;
	if (n == 0) {
		*val = 0;
		return 0;
	}
	if (n < 8)	/* the digits to the top, '0's before them */
		w = w << (8 * (8 - n)) | 0x3030303030303030ULL >> (8 * n);
	w -= 0x3030303030303030ULL;
	w = w * 10 + (w >> 8);
	*val = (((w & 0x000000FF000000FFULL) * 0x000F424000000064ULL) +
	    (((w >> 16) & 0x000000FF000000FFULL) * 0x0000271000000001ULL)) >> 32;
	return n;
}
#endif

/* The digits at p (before end) into *m, which may wrap past 19 of them; their end. */
static inline const char *
parse_digits(const char *p, const char *end, uint64_t *m)
{
	static const uint64_t scale[] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000,
	    100000000};
	unsigned c;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	while (end - p >= 8) {
		uint64_t v;
		int n = parse_digits8(p, &v);
		*m = *m * scale[n] + v;
		p += n;
		if (n < 8)
			return p;
	}
#endif
	for (; p < end && (c = (unsigned)(*p - '0')) < 10; p++)
		*m = *m * 10 + c;
	return p;
}

/* The common case of parse_double, inline for the readers' inner loops: a plain
 * decimal in p[0..end) ([+-]digits[.digits], no exponent, at least one digit, at most
 * 19 significant ones, the mantissa at most 2^53), which one correctly rounded
 * division makes exactly what strtod makes. Returns the number's end, or NULL when the
 * text is anything else or goes on past the number with a byte that could continue it
 * for strtod ('e', 'x', 'n', a second '.', ...: only what stop[] marks may follow, and
 * the end): the caller then takes parse_double's way. The value is always finite and
 * within float32's range. stop is a 256-byte table (nonzero: a byte that ends a field). */
static inline const char *
parse_plain(const char *p, const char *end, const unsigned char *stop, double *out)
{
	static const double pow10[] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9,
	    1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19};
	const char *d, *f;
	size_t nint;
	uint64_t m = 0;
	int neg = 0;

	if (p < end) {	/* without a branch: the sign of data is a coin toss */
		neg = *p == '-';
		p += neg | (*p == '+');
	}
	d = p;
	p = parse_digits(p, end, &m);
	nint = (size_t)(p - d);
	f = p;
	if (p < end && *p == '.') {
		f = ++p;
		p = parse_digits(p, end, &m);
	}
	size_t ndig = nint + (size_t)(p - f);
	if (ndig == 0 || ndig > 19 || m > (1ULL << 53) || (p < end && !stop[(unsigned char)*p]))
		return NULL;
	double v = (double)m;
	if (p > f)
		v /= pow10[p - f];
	/* v >= 0: the sign goes on as a bit, not through a branch (-0 for "-0", as strtod) */
	uint64_t bits;
	memcpy(&bits, &v, sizeof bits);
	bits |= (uint64_t)neg << 63;
	memcpy(out, &bits, sizeof bits);
	return p;
}

#ifdef __cplusplus
}
#endif
#endif
