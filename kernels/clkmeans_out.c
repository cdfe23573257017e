/* clkmeans_out.c: clkmeans' results as it writes them: each row's label (and squared
 * distance) one a line or as an NPY matrix, and the centroids. Kept out of
 * cmd/clkmeans.c, which only orchestrates. */
#include <stdlib.h>

#include "cli.h"
#include "clkmeans.h"
#include "err.h"
#include "output.h"

/* Labels (and distances) one a line, or as a float32 NPY matrix. */
void
km_write_labels(const char *path, int fmt, const struct km_result *res, size_t n, int dist)
{
	output *o = out_open(path);
	if (fmt == FMT_NPY) {
		size_t w = dist ? 2 : 1;
		float *v = xmallocarray(MAX(n * w, (size_t)1), sizeof *v);
		for (size_t r = 0; r < n; r++) {
			v[r * w] = (float)res->labels[r];
			if (dist)
				v[r * w + 1] = (float)res->dists[r];
		}
		struct matrix m = {n, w, DT_F32, v};
		mat_write(o, &m, FMT_NPY);
		free(v);
	} else {
		for (size_t r = 0; r < n; r++) {
			out_u64(o, (uint64_t)res->labels[r]);
			if (dist) {
				out_putc(o, '\t');
				out_f32(o, (float)res->dists[r]);
			}
			out_putc(o, '\n');
		}
	}
	out_close(o);
}

void
km_write_centroids(const char *path, int fmt, const double *C, size_t k, size_t d)
{
	float *v = xmallocarray(k * d, sizeof *v);
	for (size_t i = 0; i < k * d; i++)
		v[i] = (float)C[i];
	struct matrix m = {k, d, DT_F32, v};
	mat_save(path, &m, fmt);
	free(v);
}
