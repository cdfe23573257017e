/* tokenize_char.c: the tokeniser's character tables, defined once. They are generated
 * (tokenize_table.h); beside them, the one character rule too rare to inline: the look
 * ahead of str.lower's final sigma. The per-character code is in tokenize_char.h. */
#define TOK_TABLE_DEFINE
#include "tokenize_char.h"

#include "tokenize.h"

const char tok_unicode_version[] = TOK_UNICODE;

int
tok_cased_after(struct uclass_cache *k, const unsigned char *p, const unsigned char *end)
{
	while (p < end) {
		size_t n;
		int cls = uclass(k, utf8_decode(p, end, &n));
		if (!(cls & TOK_IGNORABLE))
			return (cls & TOK_CASED) != 0;
		p += n;
	}
	return 0;
}
