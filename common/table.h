/* table.h: a table of rows read whole, for programs that compute on chosen numeric
 * columns and print the rows back as they came (skyline; clkmeans's -f and label
 * columns next).
 *
 * The input is dense text or NPY as dense.h describes them (NPY recognised by its
 * magic bytes; text rows parsed by dense_parse_line). Every column is read into one
 * matrix: an NPY <f4 stays float32 and everything else is double, so that values
 * compare as they were written. Text rows also keep their line numbers, for messages,
 * and on request their text as it appeared (spacing, separators and comments), for
 * printing. Separate from dense.h, whose matrices are numbers only: a table is rows
 * that are printed again. */
#ifndef ACCELKIT_TABLE_H
#define ACCELKIT_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "dense.h"
#include "err.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { TABLE_KEEP_TEXT = 1 };	/* text input: keep each row's line for printing */

struct table {
	const char *name;	/* for messages: the path, or "(standard input)" */
	int npy;		/* read from NPY: rows have no text of their own */
	struct matrix m;	/* every column, row-major: float (NPY <f4) or double */
	char *text;		/* TABLE_KEEP_TEXT: row i's line, NUL-terminated, at */
	uint64_t *line;		/* text + line[i] (see table_row_text) */
	uint64_t *lineno;	/* text input: row i's line number */
};

/* Reads the whole of path (NULL or "-": standard input) into t. An empty input gives
 * 0 rows of 0 columns. Bad input dies naming the file and line (or byte offset). */
void table_read(const char *path, int flags, struct table *t);
void table_free(struct table *t);

/* Row i, column j (of every column), widened to double. */
static inline double
table_cell(const struct table *t, size_t i, size_t j)
{
	size_t o = i * t->m.cols + j;
	return t->m.dtype == DT_F64 ? ((const double *)t->m.data)[o] :
	    ((const float *)t->m.data)[o];
}

/* Row i's line as it appeared (text read with TABLE_KEEP_TEXT only). */
static inline const char *
table_row_text(const struct table *t, size_t i)
{
	return t->text + t->line[i];
}

/* Columns col[0..k) of every row, packed into a new n x k array of dt (free() it).
 * Into float32, a value beyond its range is an error at its row: "what is beyond the
 * float32 range" (what: "a coordinate", say). */
void *table_columns(const struct table *t, const size_t *col, size_t k, enum dtype dt,
    const char *what);

/* Dies with a message placed at row i: "FILE:LINE: ..." for text input, "FILE: row N:
 * ..." for NPY. */
void table_die_row(const struct table *t, size_t i, const char *fmt, ...) PRINTF_LIKE(3, 4)
    NORETURN;

#ifdef __cplusplus
}
#endif
#endif
