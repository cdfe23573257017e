/* chunks.h: the chunked record reader under every text reader in common/.
 *
 * The input is read in large chunks cut at record boundaries (a cut rule: lines,
 * FASTA records, FASTQ records), each chunk is parsed on one of the threads that -j
 * gives (cli_threads()), and the caller gets the chunks back in input order with what
 * the parser made of each. Memory stays bounded: a few chunks a thread are in flight
 * however long the input is, and a chunk grows only to hold a record longer than
 * itself. Regular files and pipes alike: from a pipe, a chunk goes on as soon as the
 * bytes that have arrived hold a whole record, so streaming programs answer early.
 *
 * Errors are exact. A parser never dies: it stops at the chunk's first bad record and
 * calls chunk_fail with that record's line, counted within the chunk (chunks count
 * their own lines, in parallel). The caller, consuming in order, uses what the chunk
 * holds before that line and then calls chunk_die, which reports FILE:LINE with the
 * line's number in the whole input: the first bad line in input order, the same one
 * a single thread reading line by line stops at.
 *
 * From an uncompressed regular file cut at lines, the threads read too: making a chunk
 * only finds where it ends (the same cut as reading it would make, found in a small
 * window read there), and the thread that parses it reads its bytes (pread), so that
 * no one thread copies the whole input.
 *
 * Testing knob: ACCELKIT_CHUNK_BYTES in the environment sets the chunk size (bytes,
 * default 1 MiB), so tests can force tiny chunks and put records across boundaries.
 *
 *	static void parse(void *ctx, struct chunk *c) {
 *		struct chunk_lines it;
 *		size_t len;
 *		chunk_lines_init(&it, c);
 *		for (const char *s; (s = chunk_line(&it, &len)) != NULL;)
 *			if (bad(s, len))
 *				return chunk_fail(c, it.n, "what is wrong");
 *			else
 *				keep(c->res, s, len, it.n);
 *		c->lines = it.n;
 *	}
 *	static const struct chunk_ops ops = {.cut = chunk_cut_lines, .parse = parse, .free_res = free_res};
 *	chunks *e = chunks_open(in, &ops, ctx);
 *	for (struct chunk *c; (c = chunks_next(e)) != NULL;) {
 *		use(c->res);			// lines c->line0 + 1 ...
 *		if (c->err_line)
 *			chunk_die(e, c);
 *	}
 *	chunks_close(e);
 */
#ifndef ACCELKIT_CHUNKS_H
#define ACCELKIT_CHUNKS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "err.h"
#include "input.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CHUNK_ERR 256	/* room for a message */
/* Bytes after a chunk's data[len] that a parser may read (they are '\0'): room for a
 * block-at-a-time scan (fieldscan.h) to load whole blocks up to the end. */
#define CHUNK_PAD 64

struct chunk {
	char *data;		/* whole records; data[len] and the CHUNK_PAD bytes after
				 * it are '\0'. The parser may write within [0, len) */
	size_t len;
	uint64_t index;		/* 0, 1, 2, ... in input order */
	int hint;		/* what the cut rule said of this chunk's start (0: the first) */
	uint64_t lines;		/* the chunk's lines, as in_getline counts them: the
				 * parser may set it, else the engine counts */
	uint64_t line0;		/* for the caller: lines of the input before this chunk */
	uint64_t err_line;	/* chunk_fail: the first bad line within the chunk (1-based) */
	char err[CHUNK_ERR];
	const char *read_err;	/* the input failed after this chunk's bytes (in_error):
				 * chunks_next dies with it rather than hand the chunk out */
	void *res;		/* the parser's results: kept when the chunk is reused */
	size_t cap;		/* the size of data's allocation, less one */
	uint64_t at;		/* (the engine's) where its bytes are, read by its thread */
};

/* A cut rule: the length of the longest prefix of p[0..len) that ends at a record
 * boundary, 0 when there is none yet. It may set *hint, which the chunk starting at
 * the cut gets as its hint (the Kaldi archive reader says "inside a matrix"). */
typedef size_t (*chunk_cut_fn)(const char *p, size_t len, int *hint);
/* Lines. */
size_t chunk_cut_lines(const char *p, size_t len, int *hint);
/* FASTA: a record starts with '>' at the start of a line. */
size_t chunk_cut_fasta(const char *p, size_t len, int *hint);
/* FASTQ: blank lines, then four lines ('@' name, sequence, '+', quality). */
size_t chunk_cut_fastq(const char *p, size_t len, int *hint);

struct chunk_ops {
	chunk_cut_fn cut;
	/* Parses c into c->res (allocating it the first time): runs on any thread.
	 * ctx is shared by the threads: read it, do not change it. Never exits. */
	void (*parse)(void *ctx, struct chunk *c);
	void (*free_res)(void *res);	/* at chunks_close; may be NULL */
	/* A cut rule that needs the parser's ctx (the table reader's delimiter, for
	 * quoted fields that hold line breaks): used when cut is NULL. */
	size_t (*cut_ctx)(void *ctx, const char *p, size_t len, int *hint);
};

typedef struct chunks chunks;

/* Starts reading in from where it stands (bytes already peeked are read; lines already
 * taken with in_getline are counted before the first chunk's). */
chunks *chunks_open(input *in, const struct chunk_ops *ops, void *ctx);
/* The next chunk in input order, parsed; NULL after the last. It stays valid until the
 * next call. */
struct chunk *chunks_next(chunks *e);
/* How many chunks an engine opened now keeps in memory at most: made, parsed, or held
 * by the caller (rowplace.h sizes its ring by it). */
int chunks_slots(void);
/* Stops the threads and frees e; the input's line count (in_lineno) is then that of
 * the chunks handed out. Closing before the end leaves the input's position unknown. */
void chunks_close(chunks *e);
/* Closes every engine still open, as chunks_close does: their threads stopped and
 * joined, their memory freed. For the fuzz harness (tests/fuzz/), which returns from
 * an error exit (err_before_exit) instead of ending the process, and so must not leave
 * the threads of the reader that died behind; a program's exit ends them itself. Call
 * it from the thread that used the engines, not from one of theirs. */
void chunks_close_all(void);
/* Lines of the input up to the end of the last chunk handed out: after the last
 * chunk, the input's line count, as in_lineno gives it after reading every line. */
uint64_t chunks_lines(const chunks *e);
const char *chunks_name(const chunks *e);

/* For callers that take a chunk's records one at a time: makes *cur a chunk with a
 * record left at *next, moving on to the next chunk (then *next = 0) when count(*cur)
 * are taken, and reporting a chunk's error once the records before it are taken (so
 * set *cur = NULL to begin). 0 at the end of the input. */
int chunks_take(chunks *e, struct chunk **cur, size_t *next,
    size_t (*count)(const struct chunk *c));

/* For parsers: records the chunk's first error at line (within the chunk, 1-based). */
void chunk_fail(struct chunk *c, uint64_t line, const char *fmt, ...) PRINTF_LIKE(3, 4);
/* For the caller: "prog: FILE:LINE: message" for the chunk's error, exit 1. */
void chunk_die(const chunks *e, const struct chunk *c) NORETURN;

/* Line by line through a chunk: it.n is the number of the line last returned. */
struct chunk_lines {
	const char *p, *end;
	uint64_t n;
};

static inline void
chunk_lines_init(struct chunk_lines *it, const struct chunk *c)
{
	it->p = c->data;
	it->end = c->data + c->len;
	it->n = 0;
}

/* The next line, without its '\n' and a '\r' before it (as in_getline gives it), but
 * in place and not NUL-terminated: s[*len] is '\r', '\n' or the chunk's final '\0'.
 * NULL at the chunk's end. */
static inline const char *
chunk_line(struct chunk_lines *it, size_t *len)
{
	const char *s = it->p, *e;
	if (s >= it->end)
		return NULL;
	e = (const char *)memchr(s, '\n', (size_t)(it->end - s));
	it->p = e != NULL ? e + 1 : it->end;
	if (e == NULL)
		e = it->end;
	if (e > s && e[-1] == '\r')
		e--;
	it->n++;
	*len = (size_t)(e - s);
	return s;
}

#ifdef __cplusplus
}
#endif
#endif
