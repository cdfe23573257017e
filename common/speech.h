/* speech.h: readers of speech feature files, one frame a row, as utterances.
 *
 *   HTK parameter files: 12-byte big-endian header (nSamples, sampPeriod, sampSize,
 *       parmKind), then big-endian 4-byte floats; _C (compressed: 2-byte integers
 *       with the A and B vectors first, x = (v + B) / A) is decoded; _K (a CRC after
 *       the data) is accepted and the CRC skipped, not verified. The byte count is
 *       checked against the header. WAVEFORM, IREFC, DISCRETE and _V files are refused.
 *       One file is one utterance, named by its path.
 *   Kaldi archives, several utterances a file: text ("KEY  [" then rows, the last
 *       ending in "]", as copy-feats ark,t: writes) or binary ("KEY \0B" then FM, DM,
 *       CM, CM2 or CM3 matrices, as copy-feats writes by default; common/kaldi_io.h).
 *       Text archives are parsed in parallel chunks; binary ones (and any archive
 *       read permissively) object by object, where an object may also be text.
 *   Kaldi .scp files: "KEY FILE[:OFFSET]" lines, each a matrix at that byte of FILE,
 *       perhaps with a range of rows and columns ("[0:9]", "[0:9,0:12]", ":" all).
 *   Kaldi rspecifiers name archives and .scp files: ark:FILE, scp:FILE, ark:- and
 *       Kaldi's options (ark,s,cs:FILE; p: an entry that cannot be read ends an
 *       archive, or is skipped in an .scp, with a warning). Other names are files.
 *   Text or NPY matrices (common/dense.h): one utterance named by its path.
 * The format is recognised by content (NPY magic; a "KEY [" first line; bytes that
 * no text holds in the first 12 for HTK; otherwise text), or forced.
 * NaN and Inf are errors naming the line (text) or the byte offset (binary).
 * Text (archives and matrices) is parsed in chunks on the threads -j gives (chunks.h),
 * with the same result and the same first bad line as one thread. */
#ifndef ACCELKIT_SPEECH_H
#define ACCELKIT_SPEECH_H

#include <stddef.h>
#include <stdint.h>

#include "output.h"

#ifdef __cplusplus
extern "C" {
#endif

enum speech_format { SPEECH_AUTO = 0, SPEECH_TEXT, SPEECH_NPY, SPEECH_HTK, SPEECH_ARK,
	SPEECH_SCP };

/* "text", "npy", "htk", "ark", "scp" for SPEECH_TEXT.. (for messages and -v). */
const char *speech_format_name(enum speech_format f);

typedef struct speech speech;

/* Opens a feature file (NULL or "-": standard input) or a Kaldi rspecifier (which
 * decides the format); fmt SPEECH_AUTO recognises it. */
speech *speech_open(const char *path, enum speech_format fmt);
void speech_close(speech *s);
/* The bytes behind n feature operands, as in_regular_bytes counts them (-1: a pipe or
 * compressed, unknown): an rspecifier's file, and an .scp file's the files it names
 * (each once; the .scp is read for that, so scp:- is unknown). */
int64_t speech_input_bytes(char *const *paths, int n);
enum speech_format speech_format(const speech *s);
/* The name used in messages: the path, or "(standard input)". */
const char *speech_name(const speech *s);

/* Starts the next utterance; 0 when there are no more. *key is the archive key, or
 * the path ("-" for standard input) for the one-utterance formats; it stays valid
 * until the next call. *dims is the utterance's row width; *rows its row count
 * when the header says it (NPY, HTK, Kaldi binary and .scp), else -1. */
int speech_next(speech *s, const char **key, size_t *dims, int64_t *rows);

/* Reads up to maxrows rows of the current utterance, the first ncols (<= dims)
 * columns of each, as float32 at dst with a row stride of `stride` floats (>= ncols).
 * Returns how many; 0 at the end of the utterance. */
size_t speech_read(speech *s, float *dst, size_t maxrows, size_t ncols, size_t stride);

/* Kaldi text archive output of matrices, as copy-feats ark,t: writes them:
 *   KEY  [
 *     v v v
 *     v v v ]
 * Rows are streamed: begin, any number of rows, end. */
void ark_begin(output *o, const char *key);
void ark_row(output *o, const float *v, size_t n);
/* rows: how many rows were written since ark_begin (an empty matrix is "[ ]"). */
void ark_end(output *o, size_t rows);
/* The text of one row as ark_row writes it, into buf (room for n * 16 + 4 bytes);
 * returns its length. For callers that format rows in parallel. */
size_t ark_format_row(char *buf, const float *v, size_t n);

#ifdef __cplusplus
}
#endif
#endif
