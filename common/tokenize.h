/* tokenize.h: raw text lines into term counts, with a vocabulary, as scikit-learn's
 * CountVectorizer does with its defaults: a token is a run of two or more word bytes
 * (ASCII letters, digits and '_', and every byte >= 0x80), ASCII letters lowercased.
 * The vocabulary numbers terms in order of their first occurrence in the corpus and
 * keeps those that pass the stop words and the document-frequency limits.
 *
 * A reader of a text format like the others in common/; weighing the counts (TF-IDF
 * and the like) is the program's. */
#ifndef ACCELKIT_TOKENIZE_H
#define ACCELKIT_TOKENIZE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Documents: document i is text[i] (len[i] bytes, writable: it is lowercased in place). */
struct tok_docs {
	size_t n;
	char **text;
	size_t *len;
};

/* Which terms the vocabulary keeps. */
struct tok_opts {
	double min_df, max_df;		/* document counts, or proportions when *_prop */
	int min_df_prop, max_df_prop;
	char **stop;			/* stop words (lowercased here), nstop of them */
	size_t nstop;
};

/* Term counts of documents, a row a document, columns the kept terms ascending. */
struct tok_counts {
	size_t rows, cols;
	uint64_t *ptr;		/* rows + 1 offsets into idx and cnt */
	uint32_t *idx;		/* kept term numbers */
	uint32_t *cnt;		/* how often the term occurs in the document */
};

struct tok_vocab;
/* Learns the vocabulary of the corpus and returns its documents' counts. */
struct tok_vocab *tok_fit(struct tok_docs *docs, const struct tok_opts *o, struct tok_counts *out);
/* Counts of other documents in the fitted vocabulary (unknown terms dropped). */
void tok_transform(const struct tok_vocab *v, struct tok_docs *docs, struct tok_counts *out);
/* The kept terms, and the number of corpus documents each occurs in. */
size_t tok_vocab_size(const struct tok_vocab *v);
const uint32_t *tok_vocab_df(const struct tok_vocab *v);
void tok_vocab_free(struct tok_vocab *v);

/* The words of a stop-word file (separated by blanks or newlines): *n of them,
 * pointing into *text (free both after). */
char **tok_read_words(const char *path, size_t *n, char **text);

#ifdef __cplusplus
}
#endif
#endif
