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
	unsigned c;
	int neg = 0;

	if (p < end && (*p == '-' || *p == '+'))
		neg = *p++ == '-';
	for (d = p; p < end && (c = (unsigned)(*p - '0')) < 10; p++)
		m = m * 10 + c;
	nint = (size_t)(p - d);
	f = p;
	if (p < end && *p == '.') {
		f = ++p;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
		/* eight digits at a time (fast_float's SWAR step) */
		while (end - p >= 8) {
			uint64_t w;
			memcpy(&w, p, 8);
			if (((w & 0xF0F0F0F0F0F0F0F0ULL) |
			    (((w + 0x0606060606060606ULL) & 0xF0F0F0F0F0F0F0F0ULL) >> 4)) !=
			    0x3333333333333333ULL)
				break;
			w -= 0x3030303030303030ULL;
			w = w * 10 + (w >> 8);
			w = (((w & 0x000000FF000000FFULL) * 0x000F424000000064ULL) +
			    (((w >> 16) & 0x000000FF000000FFULL) * 0x0000271000000001ULL)) >> 32;
			m = m * 100000000 + w;
			p += 8;
		}
#endif
		for (; p < end && (c = (unsigned)(*p - '0')) < 10; p++)
			m = m * 10 + c;
	}
	size_t ndig = nint + (size_t)(p - f);
	if (ndig == 0 || ndig > 19 || m > (1ULL << 53) || (p < end && !stop[(unsigned char)*p]))
		return NULL;
	double v = (double)m;
	if (p > f)
		v /= pow10[p - f];
	*out = neg ? -v : v;
	return p;
}

#ifdef __cplusplus
}
#endif
#endif
