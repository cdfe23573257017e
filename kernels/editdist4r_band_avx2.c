/* editdist4r_band_avx2.c: the band's groups of 12 columns in three vectors of AVX2's
 * 4 x 64 bits (editdist4r_band_wide.h), built with -mavx2 (and without AVX-512, so
 * that it is AVX2's code wherever it was built) and called only where the CPU has it.
 * Three vectors: 122 ms for the 1 Mb pair at 1% against 137 with two and 138 with four
 * (distance, one thread, 2026-11-29, the development machine's EPYC). */
#include "err.h"

#define WORDS 4
#define VECS 3
typedef uint64_t v4u __attribute__((vector_size(32)));
#define VEC v4u
#define NAME ed_band_group_avx2
#include "editdist4r_band_wide.h"

const int ed_band_avx2_lanes = LANES;
