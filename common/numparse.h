/* numparse.h: fast decimal parsing that gives exactly what strtod gives. */
#ifndef ACCELKIT_NUMPARSE_H
#define ACCELKIT_NUMPARSE_H

#ifdef __cplusplus
extern "C" {
#endif

/* Parses a number at s as strtod does in the C locale (leading blanks are not
 * skipped). Returns the end, or s when there is no number. Decimal numbers of up to
 * 19 significant digits and a small exponent take an exact fast path (Clinger's);
 * everything else (long mantissas, large exponents, hex, inf, nan) goes to strtod. */
const char *parse_double(const char *s, double *out);

#ifdef __cplusplus
}
#endif
#endif
