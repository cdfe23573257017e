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

/* The bytes of n inputs (paths NULL: standard input; NULL or "-" in it too) when every
 * one is a regular file, else -1 (a pipe, a terminal, one that cannot be read). */
int64_t in_regular_bytes(const char *const *paths, int n);

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
/* For readers that count lines themselves (chunks.h): what in_lineno returns now. */
void in_set_lineno(input *in, uint64_t line);

/* A reader whose interface takes only the input (seq_pair_next) keeps its state here;
 * in_close frees it with fn before closing the input. One at a time. */
void in_set_reader(input *in, void *state, void (*fn)(void *));
void *in_reader(const input *in);

/* Compressed input that turns out corrupt or truncated ends the program with a
 * message when it is met; after in_defer_errors(in, 1) it ends the input instead, and
 * in_error says why: for readers on other threads (chunks.h), which leave the message
 * to the caller's. NULL while the input is sound. */
void in_defer_errors(input *in, int on);
const char *in_error(const input *in);

/* Reads up to n bytes; fewer only at end of input. */
size_t in_read(input *in, void *dst, size_t n);
/* Reads what has arrived, up to n bytes, straight into dst: waits for the first byte,
 * then takes more only while more is ready at once (a pipe gives what its writer has
 * written so far; a regular file fills dst). 0 only at end of input. */
size_t in_read_avail(input *in, void *dst, size_t n);
/* Consumes and returns up to max bytes in place (valid until the next call);
 * 0 at end of input. The fastest way through binary data. */
const unsigned char *in_take(input *in, size_t max, size_t *got);

/* Byte offset of the next unread byte. */
uint64_t in_tell(const input *in);
/* Bytes left when the input is a regular file, else -1 (a pipe: unknown). */
int64_t in_remaining(const input *in);

/* Byte ranges of a regular file, for a rank's share of it (ranks.h). Offsets count
 * from where the input began, as in_tell does. in_range makes [start, end) the whole input from now on: what was
 * buffered is dropped, in_tell says start, and the end of the range is the end of
 * input. in_line_start is where the first line beginning at or after off begins (off
 * itself when 0 or just after a '\n'; the file's size when none does); in_count_lines
 * counts the '\n' in [start, end). Neither moves the input. */
void in_range(input *in, uint64_t start, uint64_t end);
uint64_t in_line_start(const input *in, uint64_t off);
uint64_t in_count_lines(const input *in, uint64_t start, uint64_t end);
/* Under mpirun, this rank's share of the lines from here to the end of a regular file
 * (one rank: all of them): the bytes cut into equal ranges, each moved on to the start
 * of a line, so that every line is in one share; line numbers go on from the lines of
 * the shares before (collective: every rank calls it). */
void in_share_lines(input *in);
/* Reading at any offset, for the chunk engine's threads (chunks.c). in_pread_end: where
 * the input ends (in in_tell's offsets) when its bytes can be read at any offset (an
 * uncompressed regular file, in_range's end kept), else -1. in_pread: up to n bytes at
 * off into dst, all unless the input ends first; safe on several threads at once, and
 * moves nothing. in_skip_to: the input goes on at off (at or after in_tell), as if the
 * bytes before it had been read. */
int64_t in_pread_end(const input *in);
size_t in_pread(const input *in, void *dst, size_t n, uint64_t off);
void in_skip_to(input *in, uint64_t off);
/* A regular file's bytes from where the input began (whatever was read), else -1. */
int64_t in_file_size(const input *in);
/* Under mpirun, where every rank reads its share of the input: dies unless it is a
 * regular file that is not compressed, saying why (what names the input). */
void in_need_shares(const input *in, const char *what);

/* Everything left, in one malloc'd NUL-terminated buffer (free() it). */
char *in_slurp(input *in, size_t *len);

#ifdef __cplusplus
}
#endif
#endif
