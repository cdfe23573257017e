/* gmmtc: a CPU check of gmmscore's tensor-core path (kernels/gmmscore_tc.cu) for
 * tests/gmmscore.bats: random models and frames, gmm_tc_pack's fragments read back as
 * tc_fast reads them (lane, step, tile), the products taken on TF32-rounded operands
 * as the tensor cores take them (exact products, float32 sums), and each Gaussian's and
 * model's fast score compared with the float32 path's (score_kernel's fma chain,
 * reduce_part's log-sum-exp) against gmm_tc_bound's and gmm_tc_model_bound's bounds;
 * also that the bound's Cauchy-Schwarz step holds (y2 S + y1 W >= sum |X'||P'|).
 *
 *   gmmtc DIMS SCALE DOMINANT: DIMS dimensions, means spread by SCALE, and with
 *   DOMINANT 1 the first dimension's inverse variance 10^4 times the others'.
 * Prints the counts and the largest error over its bound; exits 1 if any is over. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "gmmscore.h"

static uint64_t rng = 88172645463325252ull;

static double
urand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (double)(rng >> 11) / 9007199254740992.0;
}

static double
nrand(void)
{
	return sqrt(-2 * log(urand() + 1e-300)) * cos(2 * M_PI * urand());
}

static float
tf32(float x)
{
	uint32_t u;
	memcpy(&u, &x, sizeof u);
	if ((u & 0x7f800000u) != 0x7f800000u)
		u = (u + 0x1000u) & 0xffffe000u;
	memcpy(&x, &u, sizeof x);
	return x;
}

/* a log-sum-exp as reduce_part takes it, in Gaussian order (host expf and logf) */
static float
lse(const float *v, int k)
{
	float m = -INFINITY, s = 0.0f;
	for (int c = 0; c < k; c++)
		m = fmaxf(m, v[c]);
	for (int c = 0; c < k; c++)
		s += expf(v[c] - m);
	return gmm_lse_finish(m, s);
}

int
main(int argc, char **argv)
{
	if (argc != 4)
		die("usage: gmmtc DIMS SCALE DOMINANT");
	const int dims = atoi(argv[1]), dom = atoi(argv[3]);
	const double scale = atof(argv[2]);
	if (dims < 1 || dims > 48)
		die("DIMS: 1 to 48");
	const size_t nm = 60, frames = 200;
	size_t off[61];
	off[0] = 0;
	for (size_t m = 0; m < nm; m++)
		off[m + 1] = off[m] + 1 + (size_t)(urand() * 32);
	struct gmm_params p = {.nmodels = nm, .ncomp = off[nm], .dims = dims,
	    .dp = (dims + 3) / 4 * 4, .off = off, .maxcomp = 32};
	const size_t nc = p.ncomp, dp = (size_t)p.dp;
	p.s = xcalloc(nc * dp, sizeof *p.s);
	p.na = xcalloc(nc * dp, sizeof *p.na);
	p.g = xmallocarray(nc, sizeof *p.g);
	for (size_t c = 0; c < nc; c++) {
		double logdet = 0;
		for (int d = 0; d < dims; d++) {
			const double iv = exp(0.5 * nrand()) * (dom && d == 0 ? 1e4 : 1);
			const double mu = scale * nrand() + 3, s = sqrt(0.5 * iv);
			p.s[c * dp + (size_t)d] = (float)s;
			p.na[c * dp + (size_t)d] = (float)(-mu * s);
			logdet += log(iv);
		}
		/* every 17th Gaussian of weight 0: no slot of the fast path */
		p.g[c] = c % 17 == 5 ? -INFINITY : (float)(log(1.0 / 32) - 0.5 * (dims * log(2 * M_PI) - logdet));
	}
	struct gmm_tc_params t;
	gmm_tc_pack(&p, &t);
	if (t.ks != (int)(2 * dp / 8))
		die("ks %d for dp %zu", t.ks, dp);

	long ng = 0, nmod = 0, over = 0;
	double worst = 0, bsum = 0;
	for (size_t f = 0; f < frames; f++) {
		float x[48] = {0}, X[96] = {0};
		for (int d = 0; d < dims; d++)
			x[d] = (float)(scale * nrand() + 3 + (dom && d == 0 ? 0.01 * nrand() : 0));
		for (size_t d = 0; d < dp; d++) {
			const float y = x[d] - t.ctr[d];
			X[d] = tf32(y * y);
			X[dp + d] = tf32(y);
		}
		/* the frame's weighted norms of X''s halves, rounded up */
		double n2 = 0, n1 = 0;
		for (size_t d = 0; d < dp; d++) {
			const double sg = t.sig[d], a2 = X[d] / (sg * sg), a1 = X[dp + d] / sg;
			n2 += a2 * a2;
			n1 += a1 * a1;
		}
		float y2 = (float)sqrt(n2), y1 = (float)sqrt(n1);
		if (y2 < sqrt(n2))
			y2 = nextafterf(y2, INFINITY);
		if (y1 < sqrt(n1))
			y1 = nextafterf(y1, INFINITY);
		for (size_t m = 0; m < nm; m++) {
			const size_t k = off[m + 1] - off[m];
			float fast[32], exact[32];
			const float *mb = t.mb + m * 4;
			const float bnd = gmm_tc_bound(y2, y1, mb[0], mb[1], mb[2], mb[3], p.dp);
			int live = 0;
			for (int slot = 0; slot < 32; slot++) {
				/* slot 8 j + g: lanes 4 g + t, rows k = 8 s + t + 4 h */
				const int j = slot / 8, g = slot % 8;
				float acc = 0.0f, a = 0.0f;
				for (int s = 0; s < t.ks; s++)
					for (int tt = 0; tt < 4; tt++)
						for (int h = 0; h < 2; h++) {
							const float pv = t.pf[(((m * (size_t)t.ks + (size_t)s) * 4 +
							    (size_t)j) * 32 + (size_t)(4 * g + tt)) * 2 + (size_t)h];
							const float xv = X[8 * s + tt + 4 * h];
							acc = fmaf(xv, pv, acc);
							a = fmaf(fabsf(xv), fabsf(pv), a);
						}
				const float cst = t.cst[m * 32 + (size_t)slot];
				const size_t c = off[m] + (size_t)slot;
				const int real = (size_t)slot < k && isfinite(p.g[c]);
				if (real != (isfinite(cst) != 0))
					die("model %zu slot %d: cst %g for a %s slot", m, slot, cst,
					    real ? "live" : "dead");
				/* the Cauchy-Schwarz step, in double */
				if (real && (double)y2 * mb[0] + (double)y1 * mb[1] < a)
					die("model %zu slot %d: y2 S + y1 W = %g under sum |X'||P'| = %g",
					    m, slot, (double)y2 * mb[0] + (double)y1 * mb[1], a);
				if ((size_t)slot >= k)
					continue;
				float e = 0.0f;	/* score_kernel's chain */
				for (size_t d = 0; d < dp; d++) {
					const float tt = fmaf(x[d], p.s[c * dp + d], p.na[c * dp + d]);
					e = fmaf(tt, tt, e);
				}
				exact[slot] = p.g[c] - e;
				fast[slot] = -INFINITY;
				if (!real)
					continue;
				fast[slot] = -(acc + cst);
				const double err = fabs((double)fast[slot] - exact[slot]);
				ng++;
				over += err > bnd;
				worst = fmax(worst, err / bnd);
				live = 1;
			}
			if (!live)
				continue;
			/* the model: maximum and log-sum-exp */
			float fm = -INFINITY, em = -INFINITY;
			for (size_t c = 0; c < k; c++) {
				fm = fmaxf(fm, fast[c]);
				em = fmaxf(em, exact[c]);
			}
			const float fl = lse(fast, (int)k), el = lse(exact, (int)k);
			const float bm = gmm_tc_model_bound(fm, bnd), bl = gmm_tc_model_bound(fl, bnd);
			nmod += 2;
			bsum += 2 * bnd;
			over += fabs((double)fm - em) > bm;
			over += fabs((double)fl - el) > bl;
			worst = fmax(worst, fmax(fabs((double)fm - em) / bm, fabs((double)fl - el) / bl));
		}
	}
	gmm_tc_params_free(&t);
	printf("%ld Gaussians and %ld model scores, %ld over the bound, the largest error "
	    "%.3f of its bound, the mean bound %.3g\n", ng, nmod, over, worst, bsum / (double)nmod);
	return over != 0;
}
