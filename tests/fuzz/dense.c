/* dense.c: dense text matrices (common/dense.h); NPY input belongs to the npy target.
 * The format as dense.h states it is restated here, independently (strtod for the
 * numbers): the reader must accept exactly what it accepts, with the same values. */
#include <stdlib.h>

#include "mat_load.h"

/* What the reader must give: [0] as float32 (the regular file's run), [1] as float64
 * (the pipe's). */
static struct ref {
	struct matrix m;	/* float64 */
	size_t cap;		/* numbers m.data has room for */
	int ok;			/* the text is valid */
} ref[2];

static int
blank(int c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/* One line (up to a NUL, which ends it as it ends a C string): appends its numbers to
 * r; returns how many, or -1 where the line is not valid. */
static long
ref_line(const char *p, int f32, struct ref *r)
{
	long n = 0;
	for (;;) {
		while (blank(*p))
			p++;
		if (*p == '\0' || *p == '#')
			return n;
		if (*p == ',')
			return -1;		/* an empty field */
		char *e;
		double v = strtod(p, &e);
		if (e == p || !(*e == '\0' || *e == ',' || *e == '#' || blank(*e)))
			return -1;
		if (!isfinite(v) || (f32 && isinf((float)v)))
			return -1;
		size_t k = r->m.rows * r->m.cols + (size_t)n;
		if (k == r->cap) {
			r->cap = r->cap ? 2 * r->cap : 64;
			r->m.data = realloc(r->m.data, r->cap * sizeof(double));
		}
		((double *)r->m.data)[k] = v;
		n++;
		for (p = e; blank(*p); p++)
			;
		if (*p == ',') {
			for (p++; blank(*p); p++)
				;
			if (*p == '\0' || *p == '#' || *p == ',')
				return -1;	/* an empty field */
		}
	}
}

static void
ref_parse(const uint8_t *data, size_t size, int f32, struct ref *r)
{
	free(r->m.data);
	*r = (struct ref){{0, 0, DT_F64, NULL}, 0, 1};
	for (size_t at = 0; at < size && r->ok;) {
		const uint8_t *nl = memchr(data + at, '\n', size - at);
		size_t len = (size_t)((nl ? nl : data + size) - (data + at));
		char *line = strndup((const char *)data + at, len);
		long n = ref_line(line, f32, r);
		free(line);
		at += len + 1;
		if (n < 0 || (n > 0 && r->m.cols != 0 && (size_t)n != r->m.cols)) {
			r->ok = 0;
		} else if (n > 0) {
			r->m.cols = (size_t)n;
			r->m.rows++;
		}
	}
}

static void
read_dense(const char *path)
{
	mat_load_check("dense", path, &ref[fuzz_pipe].m);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if ((size >= sizeof npy_magic && memcmp(data, npy_magic, sizeof npy_magic) == 0) ||
	    fuzz_not_plain(data, size))
		return -1;
	ref_parse(data, size, 1, &ref[0]);
	ref_parse(data, size, 0, &ref[1]);
	fuzz_input("dense", data, size, read_dense, FUZZ_CHUNKS);
	FUZZ_ASSERT("dense", (fuzz_ended[0] == FUZZ_RETURNED) == ref[0].ok);
	FUZZ_ASSERT("dense", (fuzz_ended[1] == FUZZ_RETURNED) == ref[1].ok);
	return 0;
}
