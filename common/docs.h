/* docs.h: "documents", one record a line, in any of the formats docsim reads:
 *   text     raw text, a document a line ('\n' ends a line; a final '\r' goes),
 *            tokenised as it is read (tokenize.h), in chunks on the -j threads
 *   libsvm   sparse vectors, a line a row (sparse.h)
 *   mm       a MatrixMarket coordinate file, a row a document (sparse.h)
 *   dense    a dense matrix, text or NPY (dense.h)
 * With ids, a line's first TAB-separated field is its id (text, libsvm and dense text).
 * The format is detected from the first 64 KiB when not given: NPY magic, the
 * MatrixMarket banner, then libsvm when the first line with a feature (or the first
 * bad one) is libsvm, then dense when the first 100 lines are rows of one width,
 * else text. Errors name the file and line and exit 1. */
#ifndef ACCELKIT_DOCS_H
#define ACCELKIT_DOCS_H

#include <stddef.h>

#include "dense.h"
#include "sparse.h"
#include "tokenize.h"

#ifdef __cplusplus
extern "C" {
#endif

enum doc_format { DOC_AUTO, DOC_TEXT, DOC_LIBSVM, DOC_MM, DOC_DENSE };
/* The formats' names by enum doc_format, NULL-terminated (for cli_choice). */
extern const char *const doc_format_names[];

/* One input's records: their content and, with ids, their ids. */
struct docs {
	const char *name;	/* for messages */
	size_t n;		/* records */
	struct tok_part **parts;	/* text: the records tokenised, in parts in order */
	size_t nparts;
	uint64_t before;	/* records before this input's first (docsim --first-record
				 * N: N - 1), added to the numbers printed without ids */
	char **id;		/* with ids: record i's id, idlen[i] bytes */
	size_t *idlen;
	char **idbuf;		/* where the ids are, nidbuf blocks */
	size_t nidbuf;
	int sparse;		/* libsvm and mm: the vectors are sp, else (dense) dm */
	struct csr sp;
	struct matrix dm;	/* DT_F32 */
};

/* Reads the input at path (NULL or "-": standard input) in format f (DOC_AUTO:
 * detected) and returns the format read. Text is merged into vocab, when not NULL, as
 * it is read (the corpus); else it is only tokenised (queries). */
enum doc_format docs_read(const char *path, enum doc_format f, int ids, struct tok_vocab *vocab,
    struct docs *d);
/* docs_read of a corpus divided among MPI ranks (ranks.h; one rank: docs_read).
 * Text: this rank's share of the lines (the file's bytes cut into equal ranges, each
 * moved on to a line start), its records [*row0, *row0 + d->n) of *total, merged
 * into vocab; lines are numbered as in the whole file, and the first bad line of all
 * the shares is said once, by the rank that read it. Vectors: the whole input on
 * every rank (*row0 = 0, *total = d->n): NPY read in shares of rows and gathered,
 * other formats read whole by every rank, rank 0 first so that an error is said once. Collective; under more than one rank path must be a FILE. */
enum doc_format docs_read_share(const char *path, enum doc_format f, int ids,
    struct tok_vocab *vocab, struct docs *d, uint64_t *row0, uint64_t *total);
void docs_free(struct docs *d);

#ifdef __cplusplus
}
#endif
#endif
