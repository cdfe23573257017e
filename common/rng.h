/* rng.h: the project's seeded PRNG (xoshiro256** seeded by splitmix64), so data
 * generators and random choices give the same numbers on every machine. */
#ifndef ACCELKIT_RNG_H
#define ACCELKIT_RNG_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct rng {
	uint64_t s[4];
};

static inline uint64_t
splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static inline void
rng_seed(struct rng *r, uint64_t seed)
{
	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(&seed);
}

static inline uint64_t
rng_next(struct rng *r)
{
	uint64_t *s = r->s;
	uint64_t t = s[1] << 17, x = s[1] * 5;
	uint64_t res = ((x << 7) | (x >> 57)) * 9;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = (s[3] << 45) | (s[3] >> 19);
	return res;
}

/* Uniform in [0, 1) with 53 random bits. */
static inline double
rng_uniform(struct rng *r)
{
	return (double)(rng_next(r) >> 11) * 0x1.0p-53;
}

/* Uniform integer in [0, n), without modulo bias (Lemire). */
static inline uint64_t
rng_below(struct rng *r, uint64_t n)
{
	unsigned __int128 m = (unsigned __int128)rng_next(r) * n;
	uint64_t lo = (uint64_t)m;
	if (lo < n) {
		uint64_t t = (0 - n) % n;
		while (lo < t) {
			m = (unsigned __int128)rng_next(r) * n;
			lo = (uint64_t)m;
		}
	}
	return (uint64_t)(m >> 64);
}

/* Standard normal (Box-Muller; one value a call). */
double rng_normal(struct rng *r);

#ifdef __cplusplus
}
#endif
#endif
