/* table.c: the table reader (common/table.h) on delimited text with RFC 4180 quoting:
 * quoted fields that hold the delimiter, doubled quotes and line breaks, cut into
 * chunks at record boundaries that only a scan from the start can tell. The chunked
 * runs must end the same way and hand out the same rows, line numbers and texts as
 * one thread; and each row's text, split again on its own, has the table's width. A
 * first byte with its top bit set reads with the default separators instead. */
#include <string.h>

#include "fuzz.h"
#include "input.h"
#include "table.h"

static int delim;

static void
read_table(const char *path)
{
	struct table_opts o = {.delim = delim, .header = 1, .keep_text = 1,
	    .dt = fuzz_pipe ? DT_F64 : DT_F32};
	struct table t;
	table_read(path, &o, NULL, &t);
	fuzz_touch(t.head, t.head_len);
	fuzz_touch(t.m.data, t.m.rows * t.m.cols * dtype_size(t.m.dtype));
	fuzz_touch(t.lineno, t.m.rows * sizeof *t.lineno);
	for (size_t i = 0; i < t.m.rows; i++) {
		size_t len;
		const char *s = table_row_text(&t, i, &len);
		FUZZ_ASSERT("table", len > 0 && s[len - 1] == '\n');
		FUZZ_ASSERT("table", i == 0 || t.lineno[i] > t.lineno[i - 1]);
		fuzz_touch(s, len);
	}
	table_free(&t);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || fuzz_not_plain(data + 1, size - 1))
		return -1;
	/* the first byte picks the delimiter: a comma, a tab, a semicolon or a blank; with
	 * its top bit set, the default separators (blanks or a comma, as dense.h reads
	 * rows: fields found 64 bytes a step, common/fieldscan.h) */
	static const char delims[] = ",\t; ";
	delim = data[0] & 0x80 ? TABLE_BLANKS : (unsigned char)delims[data[0] % 4];
	return fuzz_input("table", data + 1, size - 1, read_table, FUZZ_CHUNKS);
}
