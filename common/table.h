/* table.h: a table of rows read whole, for programs that compute on chosen numeric
 * columns and carry the others along (skyline; clkmeans's -f and --with-rows).
 *
 * Text input is lines of fields:
 *   - By default fields are separated by runs of blanks or by a comma (blanks around
 *     it allowed), as dense.h reads numbers; '#' starts a comment anywhere.
 *   - With a delimiter (-t C) each C separates two fields, as cut(1) splits them: a,,b
 *     has three fields, the middle one empty, and blanks belong to the fields; '#'
 *     starts a comment only as a line's first non-blank byte.
 * Blank lines are skipped. The first `header` lines are set aside before anything else,
 * whatever they hold (they can be printed again). The first data row fixes the width;
 * every row must have as many fields. Only the chosen columns must be numbers (as
 * strtod reads them in the C locale, blanks around them allowed; NaN and Inf are
 * errors); the others are carried untouched in the row's text. Text is parsed in
 * chunks on the threads -j gives (chunks.h): the error reported is the first bad line
 * in input order, named FILE:LINE.
 *
 * NPY input (recognised by its magic bytes) is numbers only, read as dense.h reads it;
 * header lines and the delimiter do not apply. An <f4 array stays float32 and anything
 * else is double, so that values compare as they were written.
 *
 * Under mpirun, table_opts.share has each rank read its own share of the rows (ranks.h):
 * an NPY file's rows in equal counts, a text file's bytes in equal ranges moved on to
 * line starts; header lines and the width come from the file's start, read by rank 0
 * before the others (an error there is reported once). Errors name lines of the whole
 * file. table_gather_rows brings chosen rows back to rank 0.
 *
 * Reading is two steps, so that the caller can choose columns knowing the width:
 * table_open (header lines and the width), then table_load (the rows, with the chosen
 * columns parsed). table_read does both with a field list. */
#ifndef ACCELKIT_TABLE_H
#define ACCELKIT_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "dense.h"
#include "err.h"
#include "fields.h"
#include "input.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { TABLE_BLANKS = -1 };	/* table_opts.delim: runs of blanks, or a comma */

struct table_opts {
	int delim;		/* TABLE_BLANKS, or the byte between fields */
	size_t header;		/* text: lines set aside before the rows */
	int keep_text;		/* text: keep each row's line, to print it again */
	enum dtype dt;		/* text: the type the chosen columns' numbers are kept in */
	const char *hint;	/* added to "not a number" errors (NULL: nothing) */
	int share;		/* under mpirun: read only this rank's share of the rows
				   (ranks.h; a FILE, not standard input) */
};

struct table {
	const char *name;	/* for messages: the path, or "(standard input)" */
	int npy;		/* read from NPY: rows have no text of their own */
	size_t cols;		/* fields of a row (0: no rows) */
	size_t k;		/* the chosen columns (table_load) */
	size_t *col;		/* their numbers, 0-based and ascending */
	struct matrix m;	/* the numbers. Text: the chosen columns, rows x k, of the
				   options' dt. NPY: every column, float (<f4) or double */
	size_t *mcol;		/* the column of m that holds chosen column j */
	char *text;		/* keep_text: row i's line and its '\n' are bytes */
	uint64_t *line;		/* [line[i], line[i + 1]) of text (rows + 1 entries) */
	uint64_t *lineno;	/* text: row i's line number */
	char *head;		/* the header lines as they came, each ending in '\n' */
	size_t head_len;
	/* between table_open and table_load */
	input *in;
	struct table_opts opts;
	uint64_t first_line;	/* text: the first data row's line number */
	/* opts.share: row i here is row row0 + i of rows_total in the whole input (else
	   row0 = 0 and rows_total = m.rows) */
	uint64_t row0, rows_total;
};

/* Opens path (NULL or "-": standard input), sets the header lines aside and finds the
 * width (t->cols) from the first data row. */
void table_open(const char *path, const struct table_opts *o, struct table *t);
/* Whether in starts with NPY's magic bytes (nothing is consumed). */
int table_is_npy(input *in);
/* Reads the rows, parsing columns col[0..k) (ascending, < t->cols) as numbers, and
 * closes the input. Bad input dies naming the file and line (or NPY byte offset). */
void table_load(struct table *t, const size_t *col, size_t k);
/* Both, with the columns f chooses (fields.h; every column when f or f->text is
 * NULL). */
void table_read(const char *path, const struct table_opts *o, const struct fields *f,
    struct table *t);
/* table_read on an input already open (the table closes it). */
void table_read_in(input *in, const struct table_opts *o, const struct fields *f,
    struct table *t);
void table_free(struct table *t);

/* The options that say how a table is written, parsed as cut(1) and join(1) take them:
 * -t's byte (a single byte other than a newline; "\t" is a tab too), and --header's
 * line count (no value: 1). A bad value is a usage error naming opt. */
int table_delim_arg(const char *opt, const char *arg);
size_t table_header_arg(const char *opt, const char *arg);

/* Sets aside the first `lines` lines of a text input (NPY input is left as it is);
 * with head, returns them as they came, each ending in '\n' (free() it), and their
 * length in *len. Line numbers of later messages still count them. */
void table_skip_header(input *in, size_t lines, char **head, size_t *len);

/* Row i's value in chosen column j, widened to double. */
static inline double
table_cell(const struct table *t, size_t i, size_t j)
{
	size_t o = i * t->m.cols + t->mcol[j];
	return t->m.dtype == DT_F64 ? ((const double *)t->m.data)[o] :
	    ((const float *)t->m.data)[o];
}

/* NPY input: row i, column j of every column. */
static inline double
table_npy_cell(const struct table *t, size_t i, size_t j)
{
	size_t o = i * t->m.cols + j;
	return t->m.dtype == DT_F64 ? ((const double *)t->m.data)[o] :
	    ((const float *)t->m.data)[o];
}

/* Row i's line as it appeared, with its '\n' (text read with keep_text only). */
static inline const char *
table_row_text(const struct table *t, size_t i, size_t *len)
{
	*len = (size_t)(t->line[i + 1] - t->line[i]);
	return t->text + t->line[i];
}

/* Rows keep[0..m) (ascending) of every rank's table, in rank order (input order), become
 * rank 0's table: its numbers, line numbers and (keep_text) lines; *index (malloc'd)
 * says each one's row in the whole input. Other ranks are left with no rows. Collective
 * (ranks.h); with one rank, keeps rows keep[0..m) alone. */
void table_gather_rows(struct table *t, const uint32_t *keep, size_t m, uint64_t **index);

/* Chosen columns sel[0..k) (places among the chosen: 0 is t->col[0]; sel NULL: all k of
 * them) of every row, rows x k of dt: t's own numbers when they are laid out so
 * (*owned = 0), else a new array (*owned = 1: free() it). Into float32, a value beyond
 * its range is an error at its row: "what is beyond the float32 range". */
void *table_columns(const struct table *t, const size_t *sel, size_t k, enum dtype dt,
    const char *what, int *owned);

/* Dies with a message placed at row i: "FILE:LINE: ..." for text input, "FILE: row N:
 * ..." for NPY. */
void table_die_row(const struct table *t, size_t i, const char *fmt, ...) PRINTF_LIKE(3, 4)
    NORETURN;

#ifdef __cplusplus
}
#endif
#endif
