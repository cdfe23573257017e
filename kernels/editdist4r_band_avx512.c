/* editdist4r_band_avx512.c: the band's groups of 16 columns in two vectors of
 * AVX-512's 8 x 64 bits (editdist4r_band_wide.h), built with -mavx512f and called only
 * where the CPU has it. Two vectors: 78 ms for the 1 Mb pair at 1% against 80 with one
 * of 8 lanes and 75 with three, but the 48.5 kb pair at 10% 3.2 ms against 3.5 with
 * three (distance, one thread, 2026-11-29, the development machine's EPYC). */
#include "err.h"

#define WORDS 8
#define VECS 2
typedef uint64_t v8u __attribute__((vector_size(64)));
#define VEC v8u
#define NAME ed_band_group_avx512
#include "editdist4r_band_wide.h"

const int ed_band_avx512_lanes = LANES;
