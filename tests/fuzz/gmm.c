/* gmm.c: GMM model files (common/gmm.h: Kaldi text and binary, HTK MMF, gmmscore
 * text; the format by content), read by gmm_models_load as gmmscore -m - reads them.
 *
 * Not through a path, which gmm_models_load would map: AddressSanitizer does not see
 * past a mapping's end, and the harness cannot undo the mapping (nor close the file)
 * of a run that ended in an error exit. Standard input is copied into memory with a
 * NUL after it, as a mapping ends in one, so a read beyond the file is caught.
 *
 * The set must keep gmm.h's promises: every model with components, weights
 * non-negative and summing to 1 within 1e-3, means finite, variances positive and
 * finite (the inverse too), one dimension for all. */
#include <math.h>
#include <string.h>

#include "fuzz.h"
#include "gmm.h"

static void
read_gmm(const char *path)
{
	struct gmm_models m;
	gmm_models_load(path, &m);
	FUZZ_ASSERT("gmm", m.dim >= 1 && m.format != NULL);
	FUZZ_ASSERT("gmm", m.off[0] == 0 && m.off[m.nmodels] == m.ncomp);
	const size_t d = (size_t)m.dim;
	for (size_t i = 0; i < m.nmodels; i++) {
		FUZZ_ASSERT("gmm", m.names[i] != NULL);
		fuzz_touch(m.names[i], strlen(m.names[i]) + 1);
		FUZZ_ASSERT("gmm", m.off[i] < m.off[i + 1]);
		double sum = 0;
		for (size_t c = m.off[i]; c < m.off[i + 1]; c++) {
			FUZZ_ASSERT("gmm", m.weight[c] >= 0 && isfinite(m.weight[c]));
			sum += m.weight[c];
			for (size_t j = 0; j < d; j++) {
				double iv = m.ivar[c * d + j];
				FUZZ_ASSERT("gmm", iv > 0 && isfinite(iv) && isfinite(1 / iv));
				FUZZ_ASSERT("gmm", isfinite(m.mean[c * d + j]));
			}
		}
		FUZZ_ASSERT("gmm", fabs(sum - 1) <= 1e-3);
	}
	fuzz_touch(m.off, (m.nmodels + 1) * sizeof *m.off);
	fuzz_touch(m.weight, m.ncomp * sizeof *m.weight);
	fuzz_touch(m.mean, m.ncomp * d * sizeof *m.mean);
	fuzz_touch(m.ivar, m.ncomp * d * sizeof *m.ivar);
	gmm_models_free(&m);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_input("gmm", data, size, read_gmm, FUZZ_SHARES);
}
