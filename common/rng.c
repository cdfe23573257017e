/* rng.c: see rng.h. */
#include "rng.h"

#include <math.h>

double
rng_normal(struct rng *r)
{
	double u = rng_uniform(r), v = rng_uniform(r);
	if (u < 1e-300)
		u = 1e-300;
	return sqrt(-2.0 * log(u)) * cos(2.0 * M_PI * v);
}
