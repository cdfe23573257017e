/* table_fields.h: a table line's fields, for table.c (not for the programs): split on
 * the default separators or a delimiter, and quoted records (RFC 4180). table_fields.c
 * holds them; table.c reads the rows in chunks with them. */
#ifndef ACCELKIT_TABLE_FIELDS_H
#define ACCELKIT_TABLE_FIELDS_H

#include <stddef.h>
#include <stdint.h>

/* A field: the bytes [s, e). */
struct span {
	const char *s, *e;
};

static inline int
table_is_blank(int c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/* What table_csv_record found at a record's start. */
enum rec {
	REC_ROW,	/* a row of *n fields */
	REC_SKIP,	/* a blank or comment line */
	REC_MORE,	/* the record may go on past end: not final */
	REC_OPEN,	/* a quoted field (column *bad) is not closed at the input's end */
	REC_AFTER	/* text other than blanks after the closing quote of column *bad */
};

/* The fields of line [p, e) into f (the first cap; the rest are counted): their count,
 * 0 for a blank or comment line, SIZE_MAX for an empty field where the default
 * separators allow none (*bad: its column, 1-based). */
size_t table_split(const char *p, const char *e, int delim, struct span *f, size_t cap,
    size_t *bad);
/* table_split for the default separators, 64 bytes a step (fieldscan.h), when the line
 * is plain; SIZE_MAX - 1 when not. The line needs CHUNK_PAD readable bytes after it. */
size_t table_split_plain(const char *p, size_t len, struct span *f, size_t cap);
/* One quoted record at p (table_fields.c says what each output holds). */
enum rec table_csv_record(const char *p, const char *end, int d, int final, struct span *f,
    size_t cap, size_t *n, const char **text_end, const char **next, uint64_t *lines,
    size_t *bad);
/* The message for a record table_csv_record could not read (REC_OPEN, REC_AFTER). */
void table_csv_error(enum rec r, size_t col, int share, char *err, size_t size);

#endif
