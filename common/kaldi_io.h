/* kaldi_io.h: Kaldi's table I/O for the speech readers (common/speech.c): rspecifiers,
 * .scp lines, and one matrix object read at an input's position, as Kaldi's
 * Matrix<float>::Read reads it (kaldi-matrix.cc, compressed-matrix.cc, io-funcs.cc):
 *
 *   binary ("\0B" first): a token and a space, then
 *     FM, DM     int32 rows and cols, each as the byte 4 and 4 little-endian bytes, then
 *                rows x cols float32 (FM) or float64 (DM), row by row;
 *     CM         GlobalHeader (float min_value, float range, int32 num_rows, num_cols,
 *                no size bytes), a PerColHeader a column (uint16 percentiles 0, 25, 75,
 *                100), then each column's num_rows bytes, column after column;
 *     CM2, CM3   the GlobalHeader, then uint16 (CM2) or uint8 (CM3) values row by row.
 *     A matrix with no rows or no columns is empty (0 x 0), as Kaldi's Resize makes it.
 *   text: "[", rows of numbers, the last closed by "]" ("[ ]": empty).
 *
 * Compressed values are decoded with Kaldi's own float and double operations and
 * constants, so the floats are Kaldi's bit for bit. Errors are returned (a message and
 * the byte offset of what is wrong), not raised, so that a permissive reader (ark,p or
 * scp,p) can go on; sizes in headers are checked against the bytes that follow (where
 * the input knows them) before anything is allocated, and read in bounded steps where
 * it does not. NaN and Inf are errors. */
#ifndef ACCELKIT_KALDI_IO_H
#define ACCELKIT_KALDI_IO_H

#include <stddef.h>
#include <stdint.h>

#include "input.h"
#include "output.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- rspecifiers: "ark:FILE", "scp:FILE", "ark,s,cs:-", "scp,p:FILE" ---- */

enum kaldi_rs { KALDI_PLAIN = 0, KALDI_ARK, KALDI_SCP };

struct kaldi_rspec {
	enum kaldi_rs type;
	const char *file;		/* NULL: standard input ("-" or empty) */
	int permissive;			/* p: skip (scp) or stop at (ark) what cannot be read */
	int once, sorted, called_sorted, background;	/* o, s, cs, bg: accepted, no effect */
};

/* Classifies spec as Kaldi's ClassifyRspecifier does: "ark" or "scp" and options
 * (b, t, o, no, p, np, s, ns, cs, ncs, bg) before the first ':'. Anything else is a
 * plain file name (KALDI_PLAIN, r->file = spec). Returns -1 with a message in err
 * (KALDI_ERR bytes) when spec starts like an rspecifier but is not one. */
#define KALDI_ERR 256
int kaldi_rspec_parse(const char *spec, struct kaldi_rspec *r, char *err);

/* A matrix range of an .scp entry, "FILE:OFFSET[R1:R2]" or "[R1:R2,C1:C2]" (either
 * part ":" for all), inclusive, as Kaldi's ParseMatrixRangeSpecifier reads it. */
struct kaldi_range {
	int given;
	int64_t r1, r2, c1, c2;		/* -1: all */
};

/* An .scp line's "KEY RXFILENAME": splits line in place (key and file trimmed);
 * "FILE:OFFSET" gives the offset (else -1), a trailing "[...]" the range. Returns -1
 * with a message for a line without a file, a pipe ("cmd |") or standard input, which
 * are not read, or a range that is not one. */
int kaldi_scp_line(char *line, char **key, char **file, int64_t *offset,
    struct kaldi_range *range, char *err);

/* An archive's next key: whitespace skipped, the key up to a space, tab or newline, and
 * the one space or tab after it consumed (Kaldi's `is >> key`, then get()). Returns 1,
 * 0 at the end of input, -1 with a message in err and the offset in *off. */
int kaldi_read_key(input *in, char **key, size_t *cap, char *err, uint64_t *off);

/* ---- one matrix ---- */

enum kmat_kind { KMAT_FM, KMAT_DM, KMAT_CM, KMAT_CM2, KMAT_CM3, KMAT_TEXT };

struct kmat {
	enum kmat_kind kind;
	size_t rows, cols;
	size_t done;			/* rows handed out */
	int whole;			/* decoded at once into buf (CM, text, or asked) */
	float *buf;			/* whole: rows x cols */
	size_t bufcap;			/* in floats */
	unsigned char *raw;		/* read staging */
	size_t rawcap;
	float gmin, grange;		/* CM2, CM3 */
	uint64_t data_off;		/* byte offset of the first row's data (streamed) */
	char err[KALDI_ERR];
	uint64_t err_off;
};

/* "FM", "DM", "CM", "CM2", "CM3", "text". */
const char *kmat_kind_name(enum kmat_kind k);

/* Reads a matrix object's header at in's position ("\0B" binary, else text); with
 * whole (or for CM and text, always) the whole matrix. 0, or -1 with m->err and
 * m->err_off. m keeps its buffers from one matrix to the next; zero it first. */
int kmat_begin(struct kmat *m, input *in, int whole);
/* Up to maxrows rows, the first ncols (<= cols) columns of each, as float32 at dst
 * with a row stride of stride floats. Returns how many (0 at the matrix's end), or
 * SIZE_MAX with m->err and m->err_off. */
size_t kmat_read(struct kmat *m, input *in, float *dst, size_t maxrows, size_t ncols,
    size_t stride);
/* Keeps only the range r of a matrix read whole (Kaldi's ExtractObjectRange: rows up to
 * 2 past the end are allowed and cut); 0, or -1 with the message in m->err. */
int kmat_range(struct kmat *m, const struct kaldi_range *r);
/* Consumes what is left of the matrix: 0, or -1 with the message. */
int kmat_skip(struct kmat *m, input *in);
void kmat_free(struct kmat *m);

/* ---- output: one binary archive entry, "KEY \0BFM " rows cols data ---- */
void kaldi_write_fm(output *o, const char *key, const float *v, size_t rows, size_t cols);

#ifdef __cplusplus
}
#endif
#endif
