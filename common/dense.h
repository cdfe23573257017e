/* dense.h: the one reader and writer of dense matrices (one item a row).
 *
 * Text: numbers separated by blanks, tabs or a comma; '#' starts a comment; blank
 * lines are skipped; CRLF is accepted; every row the same width; numbers as strtod
 * reads them in the C locale; NaN and Inf are errors unless MAT_ALLOW_NONFINITE, and
 * so is a number that would become Inf as the float type asked for (1e39 as float32).
 * NPY (versions 1-3): 2-D, or 1-D read as one column; C order; <f4 or <f8, or the
 * little-endian integers and bools (<i1 <i2 <i4 <i8 <u1 <u2 <u4 <u8 |i1 |u1 |b1),
 * converted to the float type asked for by rounding to nearest, as C's conversions
 * and numpy's astype do: every integer is in range, and one of more than 24 (float32)
 * or 53 (float64) significant bits may round, as the same number written as text does.
 * The format is recognised by NPY's magic bytes, on any input, stdin included.
 * Errors name the file and line (text) or byte offset (NPY), and exit 1.
 * Text is parsed in chunks on the threads -j gives (chunks.h): the same numbers and
 * the same first bad line as one thread; text output is formatted the same way
 * (out_par in output.h). */
#ifndef ACCELKIT_DENSE_H
#define ACCELKIT_DENSE_H

#include <stddef.h>
#include <stdint.h>

#include "input.h"
#include "output.h"

#ifdef __cplusplus
extern "C" {
#endif

/* DT_I32 is for output only (mat_write, npy_write_header: integers such as labels);
 * the readers take DT_F32 or DT_F64. */
enum dtype { DT_F32 = 0, DT_F64 = 1, DT_I32 = 2 };
enum { MAT_ALLOW_NONFINITE = 1 };

static inline size_t dtype_size(enum dtype dt) { return dt == DT_F64 ? 8 : 4; }

struct matrix {
	size_t rows, cols;
	enum dtype dtype;
	void *data;		/* rows x cols, row-major */
};

/* The whole input as one matrix of the given element type. Empty input gives 0 x 0. */
void mat_read(input *in, enum dtype dt, int flags, struct matrix *m);
/* mat_read of a path ("-" or NULL: standard input). */
void mat_load(const char *path, enum dtype dt, int flags, struct matrix *m);
void mat_free(struct matrix *m);
/* mat_read of this rank's share of an NPY input's rows (ranks.h: equal counts in rank
 * order): rows [*first, *first + m->rows) of *total. Under mpirun the input must be a
 * regular file. Text input is an error here (table.h shares text). */
void mat_read_share(input *in, enum dtype dt, int flags, struct matrix *m, uint64_t *first,
    uint64_t *total);

/* Writes m as text (tab-separated, shortest round-trip numbers) or NPY of m's dtype
 * (<f4, <f8 or <i4). */
void mat_write(output *o, const struct matrix *m, int fmt);
/* mat_write to a path (NULL or "-": standard output), opened and closed here. */
void mat_save(const char *path, const struct matrix *m, int fmt);

/* Streaming: rows in chunks, with bounded memory. */
typedef struct dstream dstream;
dstream *dstream_open(input *in, int flags);
void dstream_close(dstream *s);
size_t dstream_cols(const dstream *s);		/* 0 when the input holds no rows */
int dstream_is_npy(const dstream *s);
int64_t dstream_rows_total(const dstream *s);	/* NPY: from its header; text: -1 */
/* Reads up to maxrows rows into dst (maxrows x cols of dt); returns how many, 0 at end. */
size_t dstream_read(dstream *s, size_t maxrows, enum dtype dt, void *dst);
/* Text: the line number of the last row read (for the caller's own messages). */
uint64_t dstream_lineno(const dstream *s);

/* Parses one text line in place. Stores up to cap numbers in vals and returns how
 * many the line holds (0 for a blank or comment-only line). Dies naming file:line
 * on a token that is not a number, an empty field, or NaN/Inf without the flag. */
size_t dense_parse_line(char *line, double *vals, size_t cap, const char *file,
    uint64_t lineno, int flags);
/* The same without dying, for parsers of chunks (chunks.h): the numbers from p up to
 * end or a NUL before it, up to cap of them into vals as dt. *end must be a byte that
 * ends a number ('\0', '\n', '\r', or the ']' of a Kaldi archive). Returns how many
 * the line holds, or SIZE_MAX with the message in err (DENSE_ERR bytes). */
#define DENSE_ERR 160
size_t dense_parse_span(const char *p, const char *end, void *vals, enum dtype dt,
    size_t cap, int flags, char *err);

/* NPY output. npy_write_header writes a fixed-size (128-byte) version 1 header;
 * when the row count is not known yet, write it with rows = 0 first and call it
 * again with npy_patch_header once the rows are out (needs a seekable output). */
void npy_write_header(output *o, enum dtype dt, size_t rows, size_t cols);
void npy_patch_header(output *o, uint64_t header_offset, enum dtype dt, size_t rows,
    size_t cols);

#ifdef __cplusplus
}
#endif
#endif
