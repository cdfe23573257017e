/* fields.h: field lists as cut(1) takes them (-f 1,3-5,7-), for programs that choose
 * columns of a table (skyline; clkmeans next).
 *
 * Parsing is option handling, as in cli.h: a bad list is a usage error naming the
 * option (exit 2). Resolving a list against a table's width is input checking: a
 * field past the last column is an error naming the file (exit 1). As with cut(1),
 * a column is chosen once and in its place, whatever the order of the list. */
#ifndef ACCELKIT_FIELDS_H
#define ACCELKIT_FIELDS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

struct field_range {
	size_t lo, hi;		/* 1-based, inclusive; hi = 0: to the last column */
};

struct fields {
	struct field_range *r;
	size_t n;
	const char *text;	/* the list as given; NULL (no list): every column */
};

/* Parses list, the value of option opt ("--fields"), into f; a later list replaces an
 * earlier one. f starts zeroed. */
void fields_parse(const char *opt, const char *list, struct fields *f);

/* The chosen columns of a table of cols columns named name, 0-based and ascending,
 * into col (room for cols); returns their count. Dies naming name when a field lies
 * past the last column or the list chooses none. */
size_t fields_resolve(const struct fields *f, size_t cols, const char *name, size_t *col);

void fields_free(struct fields *f);

#ifdef __cplusplus
}
#endif
#endif
