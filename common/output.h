/* output.h: buffered result output to standard output or a file.
 *
 * A file named with -o is written under a temporary name beside it, FILE.tmp.XXXXXX,
 * and renamed only by out_close(), so a run that fails leaves no half-written result
 * behind: an error exit or a signal that ends the program (SIGINT, SIGTERM, SIGHUP
 * ...) removes the temporary first; only SIGKILL leaves it. A file replaced keeps its
 * permissions; through a symbolic link, the file it names is replaced. Names of open
 * descriptors (/dev/stdout, /dev/fd/N) and what is not a regular file (/dev/null, a
 * FIFO) are written directly. Standard output is flushed and checked at out_close();
 * a closed pipe ends the program quietly (SIGPIPE), any other write error is reported
 * and exits 1. */
#ifndef ACCELKIT_OUTPUT_H
#define ACCELKIT_OUTPUT_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct output output;

output *out_open(const char *path);	/* NULL or "-": standard output */
void out_close(output *o);
/* Hands what is buffered to the system now: programs that stream call it after each
 * chunk, so results appear before the input ends. */
void out_flush(output *o);
const char *out_name(const output *o);

void out_write(output *o, const void *p, size_t n);
void out_putc(output *o, int c);
void out_puts(output *o, const char *s);
void out_printf(output *o, const char *fmt, ...) PRINTF_LIKE(2, 3);
void out_u64(output *o, uint64_t v);
void out_i64(output *o, int64_t v);
/* Shortest text that reads back to the same float (or double). */
void out_f32(output *o, float v);
void out_f64(output *o, double v);
/* Fixed point with `decimals` digits after the point, as printf's "%.*f". */
void out_fixed(output *o, double v, int decimals);

/*
 * Ordered parallel formatting of large outputs. out_par writes items [0, n): chunks of
 * per_chunk items are formatted on the threads -j gives (cli_threads()), each into a
 * buffer of its own, and written in order as they are done, with a few chunks in
 * memory: the same bytes as formatting the items one after another, in less time.
 * fmt appends the text of items [first, first + count) to b; it runs on several
 * threads at once, so it only reads ctx, and it must not exit.
 *
 *	static void rows(void *ctx, size_t first, size_t count, struct obuf *b) {
 *		const float *v = ctx;
 *		for (size_t i = first; i < first + count; i++) {
 *			char *w = obuf_room(b, 50);
 *			w += fmt_f32(w, v[i]);
 *			*w++ = '\n';
 *			b->len = (size_t)(w - b->p);
 *		}
 *	}
 *	out_par(o, n, 4096, rows, values);
 */
struct obuf {
	char *p;
	size_t len, cap;
};
/* Room for n more bytes: returns p + len, where they go; add what you wrote to len. */
char *obuf_room(struct obuf *b, size_t n);
typedef void (*out_format_fn)(void *ctx, size_t first, size_t count, struct obuf *b);
void out_par(output *o, size_t n, size_t per_chunk, out_format_fn fmt, void *ctx);

/* Bytes written so far; whether the output can be rewritten in place. */
uint64_t out_tell(const output *o);
int out_seekable(const output *o);
/* Overwrites n bytes at offset off (< out_tell) of a seekable output. */
void out_pwrite(output *o, uint64_t off, const void *p, size_t n);

/* Formatting into a caller's buffer (48 bytes; 400 for fmt_fixed, decimals <= 40);
 * returns the length. */
int fmt_f32(char *buf, float v);
int fmt_f64(char *buf, double v);
int fmt_fixed(char *buf, double v, int decimals);

/* For --help and --version, which print through stdio: flush and check stdout. */
void stdout_finish(void);

#ifdef __cplusplus
}
#endif
#endif
