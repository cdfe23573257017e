/* htk.c: HTK parameter files (common/speech.h), as gmmscore --format htk reads them. */
#include "speech_loop.h"

static void
read_htk(const char *path)
{
	speech_loop("htk", path, SPEECH_HTK);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_input("htk", data, size, read_htk, 0);
}
