/* num.c: parse_double (common/numparse.h), the number parser of every text reader,
 * against its promise: exactly what strtod gives, value and end, for any text. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "numparse.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	memcpy(s, data, size);
	s[size] = '\0';
	double a, b;
	const char *ea = parse_double(s, &a);
	char *eb;
	b = strtod(s, &eb);
	FUZZ_ASSERT("num", ea == eb);
	FUZZ_ASSERT("num", ea == s || (isnan(a) && isnan(b)) ||
	    (a == b && signbit(a) == signbit(b)));
	free(s);
	return 0;
}
