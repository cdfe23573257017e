/* rowplace.h: rows parsed in chunks (chunks.h) written into one growing array at their
 * final places by the threads that parsed them, not copied there by the caller alone.
 *
 * Why: a reader that returns one matrix (mat_read) had its caller's thread copy every
 * chunk's rows into it, page faults and all, while the -j threads parsed: one thread
 * writing all the output, which bounds the reader however many threads parse (on the
 * 16-core GPU host the dense and the table readers both wrote about 1.1 GB/s of numbers
 * at 16 threads, bench/readers of 2026-11-29: a hint that this thread was their bound).
 * Here a chunk's place is known as soon as every chunk before it has
 * been parsed (the rows before it are counted), and the thread that completes such a
 * prefix writes the chunks it places.
 *
 * The caller still takes the chunks in order (chunks_next) and has the last word: for
 * each it calls rp_take, which writes the chunk's rows itself unless a parsing thread
 * has (waiting while one is), so a chunk no thread could place (the width not known
 * yet, a row of another width, an error, no room) is written as before, and an error
 * is still met in input order. Only the caller grows the array (so a failed allocation
 * is said by the caller's thread); it grows it ahead of the rows counted, so that the
 * threads find room.
 *
 *	rowplace *rp = rp_new(chunks_slots());		// before chunks_open
 *	// in the parser, on any thread, after a chunk parsed whole:
 *	rp_parsed(rp, c->index, nrows, values, rows_alike ? row_bytes : 0);
 *	// the caller, chunk by chunk in order, once the width is known:
 *	rp_width(rp, row_bytes);
 *	rp_take(rp, c->index, good_rows, values);	// then the chunk's error, if any
 *	void *a = rp_finish(rp, &rows);			// after chunks_close: the array
 */
#ifndef ACCELKIT_ROWPLACE_H
#define ACCELKIT_ROWPLACE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rowplace rowplace;

/* For chunks of which at most `inflight` are parsed and not yet taken at any time
 * (chunks_slots()). */
rowplace *rp_new(int inflight);
/* The caller: a row's bytes, once known (before, the threads place nothing). */
void rp_width(rowplace *rp, size_t row_bytes);
/* A parser, on any thread, when chunk k is parsed without error: its rows at src, each
 * of row_bytes (0 when they differ: the chunk is left to the caller, as one whose
 * rows are not of the width rp_width gave). */
void rp_parsed(rowplace *rp, uint64_t k, size_t rows, const void *src, size_t row_bytes);
/* The caller, for every chunk in order: the chunk's first `rows` rows at src are put at
 * their place, after every row taken before (written here unless a thread has). */
void rp_take(rowplace *rp, uint64_t k, size_t rows, const void *src);
/* The rows taken, and the array holding them (malloc'd: free() it; NULL for none).
 * Frees rp; call it after chunks_close, when no parsing thread runs. */
void *rp_finish(rowplace *rp, size_t *rows);

#ifdef __cplusplus
}
#endif
#endif
