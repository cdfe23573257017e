/* ark.c: Kaldi text archives (common/speech.h), as gmmscore --format ark reads them. */
#include "speech_loop.h"

static void
read_ark(const char *path)
{
	speech_loop("ark", path, SPEECH_ARK);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_input("ark", data, size, read_ark, FUZZ_CHUNKS);
}
