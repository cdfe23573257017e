/* fields.c: cut(1)-style field lists (see fields.h). */
#include "fields.h"

#include <stdlib.h>

#include "err.h"

static size_t
field_number(const char *opt, const char *list, const char *s, char **end)
{
	if (*s < '0' || *s > '9')
		usage_error("invalid value for %s: '%s' (expected numbers and ranges like 1,3-5,7-)",
		    opt, list);
	unsigned long long v = strtoull(s, end, 10);
	if (v == 0)
		usage_error("invalid value for %s: '%s' (fields are numbered from 1)", opt, list);
	if (v > ((size_t)1 << 31))
		usage_error("invalid value for %s: '%s' (field number too large)", opt, list);
	return (size_t)v;
}

void
fields_parse(const char *opt, const char *list, struct fields *f)
{
	const char *s = list;
	free(f->r);
	f->r = NULL;
	f->n = 0;
	f->text = list;
	for (;;) {
		struct field_range r = {1, 0};
		char *end = (char *)s;
		if (*s == '-') {
			r.hi = field_number(opt, list, s + 1, &end);
		} else {
			r.lo = field_number(opt, list, s, &end);
			r.hi = r.lo;
			if (*end == '-') {
				r.hi = 0;
				if (end[1] >= '0' && end[1] <= '9') {
					r.hi = field_number(opt, list, end + 1, &end);
					if (r.hi < r.lo)
						usage_error("invalid value for %s: '%s' (decreasing range)",
						    opt, list);
				} else {
					end++;
				}
			}
		}
		f->r = xreallocarray(f->r, f->n + 1, sizeof *f->r);
		f->r[f->n++] = r;
		if (*end == '\0')
			return;
		if (*end != ',')
			usage_error("invalid value for %s: '%s' (expected numbers and ranges like 1,3-5,7-)",
			    opt, list);
		s = end + 1;
	}
}

size_t
fields_resolve(const struct fields *f, size_t cols, const char *name, size_t *col)
{
	size_t n = 0;
	if (f->text == NULL) {
		for (size_t j = 0; j < cols; j++)
			col[n++] = j;
		return n;
	}
	for (size_t k = 0; k < f->n; k++)
		if (f->r[k].hi != 0 && f->r[k].hi > cols)
			die("%s: column %zu does not exist (rows have %zu)", name, f->r[k].hi, cols);
	for (size_t j = 0; j < cols; j++)
		for (size_t k = 0; k < f->n; k++)
			if (j + 1 >= f->r[k].lo && (f->r[k].hi == 0 || j + 1 <= f->r[k].hi)) {
				col[n++] = j;
				break;
			}
	if (n == 0)
		die("%s: the field list '%s' chooses none of its %zu columns", name, f->text, cols);
	return n;
}

void
fields_free(struct fields *f)
{
	free(f->r);
	f->r = NULL;
	f->n = 0;
	f->text = NULL;
}
