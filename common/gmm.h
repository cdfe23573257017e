/* gmm.h: readers of diagonal-covariance GMM model files (gmmscore's acoustic models).
 *
 * Formats, recognised by content:
 *   Kaldi, text or binary (gmm_kaldi.c): one <DiagGMM> (gmm-global-copy), or
 *     <DIMENSION> D <NUMPDFS> P and P <DiagGMM>s (an acoustic model), perhaps after a
 *     <TransitionModel>; models are named by their 0-based pdf index. The stored
 *     <GCONSTS> are read past, not kept: a scorer recomputes them from the weights and
 *     variances, as Kaldi's own reader does.
 *   HTK MMF text with diagonal covariances (gmm_htk.c): ~o, ~s, ~h, ~u, ~v, ~m, ~t
 *     macros; the scoring unit is the distinct state, named "hmm.N" or by its ~s macro.
 *   gmmscore's text format (gmm_native.c): "gmm NAME K D", then K lines
 *     "w mean[D] var[D]".
 * Every reader checks each model's weights (non-negative, summing to 1 within 1e-3),
 * variances (positive and finite), means (finite) and dimensions (one for all models);
 * errors name the model and the place (FILE:LINE, or a byte offset in a binary file)
 * and exit 1. The set holds the parameters as read, in float64: no scoring formula and
 * no packing for a device, which are the program's (kernels/gmmscore_pack.c). */
#ifndef ACCELKIT_GMM_H
#define ACCELKIT_GMM_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

struct gmm_models {
	size_t nmodels, ncomp;
	int dim;
	char **names;		/* nmodels */
	size_t *off;		/* nmodels + 1: the components of model m are off[m]..off[m+1] */
	double *weight;		/* ncomp */
	double *mean;		/* ncomp x dim */
	double *ivar;		/* ncomp x dim, inverse variances (as Kaldi stores them) */
	const char *format;	/* "Kaldi text", "HTK MMF", ... for -v */
};

/* Reads models from a file (NULL or "-": standard input; format by content). A Kaldi
 * binary model in a regular file is mapped rather than copied. Times the phases
 * "model read" and "model parse"; -v names the format and the sizes. */
void gmm_models_load(const char *path, struct gmm_models *m);
void gmm_models_free(struct gmm_models *m);

#ifdef __cplusplus
}
#endif
#endif
