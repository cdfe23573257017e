/* numparse.c: see numparse.h. */
#include "numparse.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pow5_table.h"

/* Powers of ten that a double holds exactly. */
static const double exact_pow10[] = {
	1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
};

static const char *
slow(const char *s, double *out)
{
	char *end;
	*out = strtod(s, &end);
	return end;
}

#ifdef __SIZEOF_INT128__
/* m * 10^q (m > 0 exact, at most 19 digits) correctly rounded to a double, by the
 * Eisel-Lemire step as fast_float takes it (compute_float in its decimal_to_binary.h):
 * m times a 128-bit truncation of 5^q (pow5_table.h), whose top bits decide the
 * rounding; Mushtak and Lemire (2023) prove the 128 bits always suffice. Returns 0,
 * for strtod to decide, where the result would be subnormal, zero or infinite (strtod
 * also says ERANGE there), and where q is beyond the table. */
static int
eisel_lemire(uint64_t m, int q, double *out)
{
	if (q < POW5_MIN || q > POW5_MAX)
		return 0;
	int lz = __builtin_clzll(m);
	uint64_t w = m << lz;
	const uint64_t *t = pow5_128[q - POW5_MIN];
	unsigned __int128 prod = (unsigned __int128)w * t[0];
	uint64_t hi = (uint64_t)(prod >> 64), lo = (uint64_t)prod;
	if ((hi & 0x1FF) == 0x1FF) {	/* the bits below the mantissa's may carry: more of 5^q */
		unsigned __int128 p2 = (unsigned __int128)w * t[1];
		uint64_t h2 = (uint64_t)(p2 >> 64);
		lo += h2;
		hi += lo < h2;
	}
	int upper = (int)(hi >> 63), shift = upper + 64 - 52 - 3;
	uint64_t mant = hi >> shift;
	/* the binary exponent: floor(q log2(10)) + 63 by fast_float's integer formula */
	int32_t e2 = (int32_t)((((152170 + 65536) * (int64_t)q) >> 16) + 63) + upper - lz + 1023;
	if (e2 <= 0)
		return 0;	/* subnormal */
	/* an exact tie between two doubles (only possible for -4 <= q <= 23): to even */
	if (lo <= 1 && q >= -4 && q <= 23 && (mant & 3) == 1 && (mant << shift) == hi)
		mant &= ~(uint64_t)1;
	mant += mant & 1;
	mant >>= 1;
	if (mant >= (uint64_t)2 << 52) {
		mant = (uint64_t)1 << 52;
		e2++;
	}
	mant &= ~((uint64_t)1 << 52);
	if (e2 >= 0x7FF)
		return 0;	/* infinite */
	uint64_t bits = mant | (uint64_t)e2 << 52;
	memcpy(out, &bits, sizeof bits);
	return 1;
}
#else
static int
eisel_lemire(uint64_t m, int q, double *out)
{
	(void)m, (void)q, (void)out;
	return 0;
}
#endif

/* The exponent after the digits (p is past them), then m * 10^exp10 in one correctly
 * rounded operation when m and the power are exact doubles: strtod's result (Clinger's
 * fast path); else by the Eisel-Lemire step. What neither decides goes to strtod from
 * s. */
static const char *
finish(const char *s, const char *p, uint64_t m, int exp10, int neg, double *out)
{
	if (*p == 'e' || *p == 'E') {
		const char *q = p + 1;
		int eneg = 0, e = 0;
		if (*q == '-' || *q == '+')
			eneg = *q++ == '-';
		if ((unsigned)(*q - '0') >= 10)
			return slow(s, out);	/* "1e" and the like: let strtod decide */
		for (; (unsigned)(*q - '0') < 10; q++)
			if (e < 100000)
				e = e * 10 + (*q - '0');
		exp10 += eneg ? -e : e;
		p = q;
	}
	if (*p == 'x' || *p == 'X')
		return slow(s, out);	/* 0x...: hexadecimal */
	if (m == 0) {
		*out = neg ? -0.0 : 0.0;
		return p;
	}
	double v;
	if (m <= (1ULL << 53) && exp10 >= -22 && exp10 <= 22) {
		v = (double)m;
		v = exp10 < 0 ? v / exact_pow10[-exp10] : v * exact_pow10[exp10];
	} else if (!eisel_lemire(m, exp10, &v)) {
		return slow(s, out);
	}
	*out = neg ? -v : v;
	return p;
}

/* The path for more than 19 digits: leading zeros are not significant, so a number
 * such as 0.000000000000000000000123 still has an exact fast form. */
static const char *
careful(const char *s, double *out)
{
	const char *p = s;
	int neg = 0, sig = 0, exp10 = 0;
	uint64_t m = 0;

	if (*p == '-' || *p == '+')
		neg = *p++ == '-';
	for (; (unsigned)(*p - '0') < 10; p++) {
		if (m == 0 && *p == '0')
			continue;
		if (++sig > 19)
			return slow(s, out);
		m = m * 10 + (uint64_t)(*p - '0');
	}
	if (*p == '.') {
		for (p++; (unsigned)(*p - '0') < 10; p++) {
			exp10--;
			if (m == 0 && *p == '0')
				continue;
			if (++sig > 19)
				return slow(s, out);
			m = m * 10 + (uint64_t)(*p - '0');
		}
	}
	return finish(s, p, m, exp10, neg, out);
}

const char *
parse_double(const char *s, double *out)
{
	const char *p = s, *d;
	int neg = 0, ndig, exp10 = 0;
	uint64_t m = 0;
	unsigned c;

	if (*p == '-' || *p == '+')
		neg = *p++ == '-';
	/* Digits straight into m: one compare and one multiply-add each. More than 19
	 * may have wrapped m; they go the careful way. */
	for (d = p; (c = (unsigned)(*p - '0')) < 10; p++)
		m = m * 10 + c;
	ndig = (int)(p - d);
	if (*p == '.') {
		for (d = ++p; (c = (unsigned)(*p - '0')) < 10; p++)
			m = m * 10 + c;
		exp10 = -(int)(p - d);
		ndig += (int)(p - d);
	}
	if (ndig == 0)
		return slow(s, out);	/* inf, nan, hex, or not a number at all */
	if (ndig > 19)
		return careful(s, out);
	return finish(s, p, m, exp10, neg, out);
}
