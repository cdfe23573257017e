/* input.h: a buffered byte source over a file or standard input.
 * Large read(2)s into one growing buffer; lines are handed out in place. */
#ifndef ACCELKIT_INPUT_H
#define ACCELKIT_INPUT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct input input;

/* NULL or "-" is standard input. Dies with the path named if it cannot be opened. */
input *in_open(const char *path);
void in_close(input *in);

/* The name used in messages: the path, or "(standard input)". */
const char *in_name(const input *in);

/* Makes at least n bytes available (fewer only at end of input) and returns them
 * without consuming; *avail says how many there are. */
const unsigned char *in_peek(input *in, size_t n, size_t *avail);

/* The next line, '\n' and a trailing '\r' removed, NUL-terminated and writable in
 * place until the next call; NULL at end of input. *len may be NULL. */
char *in_getline(input *in, size_t *len);
/* Number of the line in_getline last returned (1-based). */
uint64_t in_lineno(const input *in);

/* Reads up to n bytes; fewer only at end of input. */
size_t in_read(input *in, void *dst, size_t n);
/* Consumes and returns up to max bytes in place (valid until the next call);
 * 0 at end of input. The fastest way through binary data. */
const unsigned char *in_take(input *in, size_t max, size_t *got);

/* Byte offset of the next unread byte. */
uint64_t in_tell(const input *in);
/* Bytes left when the input is a regular file, else -1 (a pipe: unknown). */
int64_t in_remaining(const input *in);

/* Everything left, in one malloc'd NUL-terminated buffer (free() it). */
char *in_slurp(input *in, size_t *len);

#ifdef __cplusplus
}
#endif
#endif
