/* table_fields.c: a table line's fields (table_fields.h): the default separators'
 * split, a byte at a time or 64 bytes a step, a delimiter's, and quoted records. */
#include "table_fields.h"

#include <stdio.h>
#include <string.h>

#include "fieldscan.h"
#include "table.h"

/* The fields of line [p, e) into f (the first cap of them; the rest are counted).
 * Returns their count: 0 for a blank or comment line, SIZE_MAX for an empty field
 * where the default separators allow none (*bad: its column, 1-based). */
size_t
table_split(const char *p, const char *e, int delim, struct span *f, size_t cap, size_t *bad)
{
	size_t n = 0;
	const char *q = p;

	while (q < e && table_is_blank(*q))
		q++;
	if (q == e || *q == '#')
		return 0;
	if (delim != TABLE_BLANKS) {
		for (;;) {
			const char *d = memchr(p, delim, (size_t)(e - p));
			if (n < cap)
				f[n] = (struct span){p, d != NULL ? d : e};
			n++;
			if (d == NULL)
				return n;
			p = d + 1;
		}
	}
	/* As dense.h: blanks, or one comma with blanks around it; '#' ends the line. */
	static const unsigned char sep[256] = {
		[' '] = 1, ['\t'] = 1, ['\r'] = 1, ['\v'] = 1, ['\f'] = 1, [','] = 1, ['#'] = 1,
	};
	p = q;
	for (;;) {
		if (*p == ',') {
			*bad = n + 1;
			return SIZE_MAX;
		}
		const char *s = p;
		while (p < e && !sep[(unsigned char)*p])
			p++;
		if (n < cap)
			f[n] = (struct span){s, p};
		n++;
		while (p < e && table_is_blank(*p))
			p++;
		if (p < e && *p == ',') {
			p++;
			while (p < e && table_is_blank(*p))
				p++;
			if (p == e || *p == '#' || *p == ',') {
				*bad = n + 1;
				return SIZE_MAX;
			}
		} else if (p == e || *p == '#') {
			return n;
		}
	}
}

/* split for the default separators, when the line is plain (fieldscan.h: its fields
 * found 64 bytes a step, not a byte at a time); SIZE_MAX - 1 when it is not, for split
 * to read it. The line needs CHUNK_PAD readable bytes after it. */
size_t
table_split_plain(const char *p, size_t len, struct span *f, size_t cap)
{
	struct fscan sc;
	size_t n = 0, a, z;
	int r;

	fscan_init(&sc, p, len);
	while ((r = fscan_next(&sc, &a, &z)) > 0) {
		if (n < cap)
			f[n] = (struct span){p + a, p + z};
		n++;
	}
	return r < 0 ? SIZE_MAX - 1 : n;
}

/* ---- quoted fields (RFC 4180), with a delimiter ---- */


static uint64_t
count_nl(const char *s, const char *e)
{
	uint64_t n = 0;
	for (; (s = memchr(s, '\n', (size_t)(e - s))) != NULL; s++)
		n++;
	return n;
}

/* One record of text split by delimiter d, starting at p (a record's start) within
 * [p, end), as RFC 4180 and Python's csv module read it: a field whose first byte is
 * '"' is quoted, holds the delimiter, line breaks and doubled quotes ("") as text, and
 * ends at the next lone '"' (blanks may follow it); a '"' anywhere else is text. The
 * first cap fields go into f (a quoted one without its quotes; doubled quotes stay
 * doubled: no number holds one), all are counted in *n. *text_end is the end of the
 * record's text (before its "\r\n" or '\n'), *next the next record's start, *lines the
 * lines it spans. final: end is the input's end; otherwise a record that reaches end
 * may go on (REC_MORE). '#' as a line's first non-blank byte starts a comment line. */
enum rec
table_csv_record(const char *p, const char *end, int d, int final, struct span *f, size_t cap,
    size_t *n, const char **text_end, const char **next, uint64_t *lines, size_t *bad)
{
	const char *s = p;
	uint64_t nl = 0;
	size_t k = 0;

	while (s < end && table_is_blank(*s))
		s++;
	if (s == end || *s == '\n' || *s == '#') {
		const char *e = memchr(s, '\n', (size_t)(end - s));
		if (e == NULL && !final)
			return REC_MORE;
		*next = e != NULL ? e + 1 : end;
		*lines = 1;
		return REC_SKIP;
	}
	for (s = p;;) {
		const char *fs, *fe;
		if (s < end && *s == '"') {
			const char *c = s + 1;
			for (;;) {
				c = memchr(c, '"', (size_t)(end - c));
				if (c == NULL || (c + 1 == end && !final)) {
					if (!final)
						return REC_MORE;
					*bad = k + 1;
					*lines = nl + count_nl(s, end) + 1;
					*next = end;
					return REC_OPEN;
				}
				if (c + 1 < end && c[1] == '"')
					c += 2;
				else
					break;
			}
			nl += count_nl(s, c);
			fs = s + 1;
			fe = c;
			for (s = c + 1; s < end && *s != d && table_is_blank(*s); s++)
				;
			if (s < end && *s != d && *s != '\n') {
				const char *e = memchr(s, '\n', (size_t)(end - s));
				if (e == NULL && !final)
					return REC_MORE;
				*bad = k + 1;
				*lines = nl + 1;
				*next = e != NULL ? e + 1 : end;
				return REC_AFTER;
			}
		} else {
			for (fs = s; s < end && *s != d && *s != '\n'; s++)
				;
			fe = s;
			if ((s == end || *s == '\n') && fe > fs && fe[-1] == '\r')
				fe--;
		}
		if (k < cap)
			f[k] = (struct span){fs, fe};
		k++;
		if (s < end && *s == d) {
			s++;
			continue;
		}
		if (s == end && !final)
			return REC_MORE;
		*n = k;
		*text_end = s > p && s[-1] == '\r' ? s - 1 : s;
		*next = s < end ? s + 1 : end;
		*lines = nl + 1;
		return REC_ROW;
	}
}

/* The message for a quoted field csv_record could not read. */
void
table_csv_error(enum rec r, size_t col, int share, char *err, size_t size)
{
	if (r == REC_OPEN)
		snprintf(err, size, "column %zu: a quoted field is not closed before the end of "
		    "the input%s", col, share ? " (under mpirun, a quoted field with a line break "
		    "cannot be divided among the ranks: run one process)" : "");
	else
		snprintf(err, size, "column %zu: text after the closing quote of a quoted field",
		    col);
}
