/* speech.c: feature files as gmmscore reads them by default (common/speech.h): the
 * format detection and every reader behind it (NPY, HTK, Kaldi text archives, text). */
#include "speech_loop.h"

static void
read_speech(const char *path)
{
	speech_loop("speech", path, SPEECH_AUTO);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_input("speech", data, size, read_speech, FUZZ_CHUNKS);
}
