/* kaldibin.c: Kaldi binary archives (FM, DM, CM, CM2, CM3, and text matrices among
 * them; common/kaldi_io.h), as gmmscore reads ark:- strictly from the regular file
 * and permissively (ark,p:-, object by object, stopping at what cannot be read) from
 * the pipe. */
#include "speech_loop.h"

static void
read_kaldibin(const char *path)
{
	(void)path;
	speech_loop("kaldibin", fuzz_pipe ? "ark,p:-" : "ark:-", SPEECH_AUTO);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_input("kaldibin", data, size, read_kaldibin, FUZZ_CHUNKS);
}
