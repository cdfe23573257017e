/* sparse.h: the readers of sparse vectors (one item a row) into CSR.
 *
 * SVMlight/libsvm lines:  [label] [qid:N] index:value ... [# comment]
 *   Every line is one row, so row numbers are line numbers: an empty line, a label
 *   alone or a comment alone is a row with no entries. The label (a number, or numbers
 *   joined by commas) is optional; qid:N is skipped. Index i becomes column i (0 is
 *   allowed); indexes must be strictly ascending within a line. Values are finite
 *   numbers that fit a float.
 * MatrixMarket coordinate files:
 *   %%MatrixMarket matrix coordinate real|integer|pattern general|symmetric
 *   % comments, then "rows cols entries", then one "i j [value]" a line, 1-based, in any
 *   order; duplicates are errors; pattern entries are 1; symmetric files list the lower
 *   triangle and get its mirror image.
 * Every error names FILE:LINE and exits 1. Column indexes come out ascending in every row.
 * svm_read and mm_read's entries are parsed in chunks on the threads -j gives
 * (chunks.h), with the same result and the same first bad line as one thread. */
#ifndef ACCELKIT_SPARSE_H
#define ACCELKIT_SPARSE_H

#include <stddef.h>
#include <stdint.h>

#include "input.h"

#ifdef __cplusplus
extern "C" {
#endif

struct csr {
	size_t rows, cols;	/* libsvm: cols is 1 + the largest index (0 with no entries) */
	uint64_t *ptr;		/* rows + 1 offsets into idx and val */
	uint32_t *idx;		/* column indexes, strictly ascending within a row */
	float *val;
};

static inline uint64_t csr_nnz(const struct csr *m) { return m->ptr[m->rows]; }
void csr_free(struct csr *m);

/* Parses n libsvm lines in parallel (OpenMP). Line i starts at line[i] and has len[i]
 * bytes, followed by '\n', '\r' or '\0' (a line of a text buffer); it is line
 * first_line + i of file for messages. labels, when not NULL, gets n labels (the first
 * number of the label; NaN where a line has none). On an error, the first bad line
 * is reported. */
void svm_parse(const char *const *line, const size_t *len, size_t n, const char *file,
    uint64_t first_line, struct csr *m, double *labels);

/* The whole input as libsvm lines (a final line without '\n' counts). */
void svm_read(input *in, struct csr *m, double **labels);

/* Whether one line (as for svm_parse) is valid libsvm; *features says whether it has any
 * index:value entry. For format detection: it never dies. */
int svm_line_ok(const char *s, size_t len, int *features);

/* A MatrixMarket coordinate file. */
void mm_read(input *in, struct csr *m);

/* Whether the text starts with the MatrixMarket banner "%%MatrixMarket". */
int mm_is_banner(const char *s, size_t len);

#ifdef __cplusplus
}
#endif
#endif
