/* speech_loop.h: reading a feature file as gmmscore reads it (speech_next, then
 * speech_read in chunks), for the htk, ark and speech targets. From the regular file
 * every column of every row in chunks of 64 rows; from the pipe half the columns, a
 * stride one wider, chunks of 3 rows and at most 2 chunks of an utterance before the
 * next (speech_read's and speech_next's other paths). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "fuzz.h"
#include "speech.h"

/* gmmscore refuses an utterance whose width is not the models' before reading it;
 * wider than this is refused here the same way. */
#define SPEECH_MAX_DIMS 4096

static void
speech_loop(const char *target, const char *path, enum speech_format fmt)
{
	speech *s = speech_open(path, fmt);
	const char *key;
	size_t dims;
	int64_t rows;
	while (speech_next(s, &key, &dims, &rows)) {
		fuzz_touch(key, strlen(key));
		if (dims == 0)
			continue;	/* as gmmscore: nothing to read */
		if (dims > SPEECH_MAX_DIMS)
			die("%s: utterance '%s' has %zu dimensions", speech_name(s), key, dims);
		size_t ncols = fuzz_pipe ? (dims + 1) / 2 : dims;
		size_t stride = fuzz_pipe ? dims + 1 : dims, chunk = fuzz_pipe ? 3 : 64;
		float *buf = xmallocarray(chunk, stride * sizeof *buf);
		size_t got, chunks = 0;
		int64_t total = 0;
		while ((!fuzz_pipe || chunks++ < 2) &&
		    (got = speech_read(s, buf, chunk, ncols, stride)) > 0) {
			FUZZ_ASSERT(target, got <= chunk);
			for (size_t r = 0; r < got; r++)
				for (size_t j = 0; j < ncols; j++)
					FUZZ_ASSERT(target, isfinite(buf[r * stride + j]));
			for (size_t r = 0; r < got; r++)
				fuzz_touch(buf + r * stride, ncols * sizeof *buf);
			total += (int64_t)got;
		}
		FUZZ_ASSERT(target, rows < 0 || total == rows || (fuzz_pipe && total == 6));
		free(buf);
	}
	speech_close(s);
}
