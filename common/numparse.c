/* numparse.c: see numparse.h. */
#include "numparse.h"

#include <stdint.h>
#include <stdlib.h>

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

/* The exponent after the digits (p is past them), then m * 10^exp10 in one correctly
 * rounded operation when m and the power are exact doubles: strtod's result (Clinger's
 * fast path). Anything else goes to strtod from s. */
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
	if (m > (1ULL << 53) || exp10 < -22 || exp10 > 22)
		return slow(s, out);
	double v = (double)m;
	v = exp10 < 0 ? v / exact_pow10[-exp10] : v * exact_pow10[exp10];
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
