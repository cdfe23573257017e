/* seq.h: the sequence readers. Sequences are byte strings, read as they are:
 *   - pair lines "A<TAB>B" (each line one pair; A and B hold any byte but TAB and
 *     newline; a trailing CR is dropped, as everywhere in input.h);
 *   - FASTA: ">name" header lines, each followed by zero or more sequence lines that
 *     are joined; blank lines are skipped;
 *   - FASTQ: four-line records "@name", sequence, "+[name]", quality of the same length;
 *   - plain: one sequence a line (an empty line is an empty sequence).
 * The format of a record file is recognised by its first byte: '>' FASTA, '@' FASTQ,
 * anything else plain lines. Errors name FILE:LINE and exit 1.
 * Records are parsed ahead in chunks on the threads -j gives (chunks.h) and handed out
 * in order; an error comes when the records before it have been handed out, at the
 * line a single thread would name. */
#ifndef ACCELKIT_SEQ_H
#define ACCELKIT_SEQ_H

#include <stddef.h>
#include <stdint.h>

#include "input.h"

#ifdef __cplusplus
extern "C" {
#endif

enum seq_format { SEQ_LINES = 0, SEQ_FASTA = 1, SEQ_FASTQ = 2 };

typedef struct seqfile seqfile;

/* Opens path (NULL or "-": standard input) and recognises its format. */
seqfile *seq_open(const char *path);
void seq_close(seqfile *f);

/* The next record: 1 with *s (valid until the next call) and *len set, 0 at the end. */
int seq_next(seqfile *f, const unsigned char **s, size_t *len);

enum seq_format seq_format(const seqfile *f);
const char *seq_name(const seqfile *f);		/* the file's name for messages */
uint64_t seq_lineno(const seqfile *f);		/* line where the last record began */
uint64_t seq_count(const seqfile *f);		/* records returned so far */

/* The next "A<TAB>B" line of in: 1 with both halves set (valid until the next call),
 * 0 at the end; in_lineno(in) is the pair's line. A line without a TAB or with more
 * than one is an error naming the line. The first call starts a chunk reader kept
 * with the input (freed by in_close): from then on read in only through this. */
int seq_pair_next(input *in, const unsigned char **a, size_t *alen,
    const unsigned char **b, size_t *blen);

#ifdef __cplusplus
}
#endif
#endif
