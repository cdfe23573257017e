/* clkmeans_split.c: the rows split over the devices of a process and over MPI ranks.
 *
 * Each device keeps its share of the rows and computes, every iteration, its rows'
 * labels and fixed-point partial sums; the host adds the devices' sums, one all-reduce
 * adds the ranks' (integers: the order does not matter), and every device makes the
 * same centroids from the same totals. What else crosses devices and ranks is made
 * exact the same way: rows by their global index (the rank that holds one sends its
 * float32 bits through an integer sum of zeros elsewhere), and the inertia in 128-bit
 * fixed point. Apart from the engine because it is the one place that knows how the
 * rows are divided. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "clkmeans_dev.h"
#include "ranks.h"
#include "timer.h"

void
km_shares(size_t n, int nd, size_t align, size_t *first, size_t *count)
{
	size_t prev = 0;
	for (int i = 0; i < nd; i++) {
		/* the bound nearest to an even split, on a multiple of align */
		size_t b = i + 1 == nd ? n :
		    MIN(n, ((n * (size_t)(i + 1) / (size_t)nd + align / 2) / align) * align);
		b = MAX(b, prev);
		first[i] = prev;
		count[i] = b - prev;
		prev = b;
	}
}

/* a + b without signed overflow's undefined behaviour (the sums wrap as the device's
 * atomics do; the true totals fit). */
static int64_t
add_wrap(int64_t a, int64_t b)
{
	return (int64_t)((uint64_t)a + (uint64_t)b);
}

void
km_exchange(struct kmset *s)
{
	const size_t kd = s->k * s->d, k = s->k;
	int64_t *part = xmallocarray(kd + k, sizeof *part);
	memset(s->sums, 0, (kd + k + 2) * sizeof *s->sums);
	for (int i = 0; i < s->nd; i++) {
		struct km *m = &s->dev[i];
		unsigned char st[STATE_BYTES];
		/* blocking reads: device i's iteration is done when they return, while the
		 * devices after it go on */
		km_read_buf(m, m->sums, 0, kd * 8, part);
		km_read_buf(m, m->counts, 0, k * 8, part + kd);
		km_read_buf(m, m->state, 0, sizeof st, st);
		m->busy += now_sec() - s->t_start;
		for (size_t j = 0; j < kd; j++)
			s->sums[j] = add_wrap(s->sums[j], part[j]);
		for (size_t j = 0; j < k; j++)
			s->sums[kd + j] += part[kd + j];
		int moved, nexact;
		memcpy(&moved, st + 4 * SI_MOVED, 4);
		memcpy(&nexact, st + 4 * SI_NEXACT, 4);
		s->sums[kd + k + KM_TAIL_MOVED] += moved;
		s->sums[kd + k + KM_TAIL_NEXACT] += nexact;
	}
	double t1 = now_sec();
	ranks_sum_i64(s->sums, kd + k + 2);
	phase_add("all-reduce", now_sec() - t1);
	free(part);
	km_push_sums(s);
	/* moved and nexact, for read_state */
	for (int i = 0; i < s->nd; i++) {
		struct km *m = &s->dev[i];
		int v[2] = {(int)s->sums[kd + k + KM_TAIL_MOVED], (int)s->sums[kd + k + KM_TAIL_NEXACT]};
		km_write_buf(m, m->state, 4 * SI_MOVED, 4, &v[0]);
		km_write_buf(m, m->state, 4 * SI_NEXACT, 4, &v[1]);
	}
}

void
km_push_sums(struct kmset *s)
{
	const size_t kd = s->k * s->d, k = s->k;
	for (int i = 0; i < s->nd; i++) {
		km_write_buf(&s->dev[i], s->dev[i].sums, 0, kd * 8, s->sums);
		km_write_buf(&s->dev[i], s->dev[i].counts, 0, k * 8, s->sums + kd);
	}
}

void
km_pull_sums(struct kmset *s)
{
	const size_t kd = s->k * s->d, k = s->k;
	km_read_buf(&s->dev[0], s->dev[0].sums, 0, kd * 8, s->sums);
	km_read_buf(&s->dev[0], s->dev[0].counts, 0, k * 8, s->sums + kd);
}

void
km_pull_rows(struct kmset *s, int labels)
{
	for (int i = 0; i < s->nd; i++) {
		struct km *m = &s->dev[i];
		km_read_real(m, m->dists, 0, m->n, s->dist + m->first);
		if (labels)
			km_read_buf(m, m->labels, 0, m->n * 4, s->lab + m->first);
	}
}

void
km_rows(struct kmset *s, const uint64_t *g, int L, double *C)
{
	const size_t d = s->d;
	if (s->ranks == 1) {
		for (int t = 0; t < L; t++)
			for (size_t i = 0; i < d; i++)
				C[(size_t)t * d + i] = s->hx[g[t] * d + i];
		return;
	}
	/* the holder's float32 bits, zeros from the others: a sum that is a copy */
	int64_t *v = xcalloc((size_t)L * d, sizeof *v);
	for (int t = 0; t < L; t++) {
		if (g[t] < s->row0 || g[t] >= s->row0 + s->n)
			continue;
		for (size_t i = 0; i < d; i++) {
			uint32_t b;
			memcpy(&b, &s->hx[(g[t] - s->row0) * d + i], 4);
			v[(size_t)t * d + i] = b;
		}
	}
	ranks_sum_i64(v, (size_t)L * d);
	for (size_t j = 0; j < (size_t)L * d; j++) {
		uint32_t b = (uint32_t)v[j];
		float f;
		memcpy(&f, &b, 4);
		C[j] = f;
	}
	free(v);
}

int
km_search(const int64_t *wt, const uint64_t *cnt, int nitem, int64_t target, int64_t *rest)
{
	int64_t cum = 0;
	int last = -1;
	for (int i = 0; i < nitem; i++) {
		if (cnt != NULL && cnt[i] == 0)
			continue;
		if (cum + wt[i] >= target) {
			*rest = target - cum;
			return i;
		}
		last = i;
		cum += wt[i];
	}
	*rest = INT64_MAX;	/* past every row: the last row of the last item */
	return last;
}

double
km_inertia(struct kmset *s)
{
	double big = 0;
	for (size_t r = 0; r < s->n; r++)
		big = fmax(big, s->dist[r]);
	ranks_max_f64(&big, 1);
	int lg = 0, e = 0;
	while (lg < 63 && ((uint64_t)1 << lg) < s->ntotal + 1)
		lg++;
	frexp(big, &e);		/* big < 2^e */
	int q = 126 - lg - e;	/* n values below 2^(126 - lg) sum below 2^126 */
	unsigned __int128 sum = 0;
	for (size_t r = 0; r < s->n; r++) {
		int ex;
		double f = frexp(s->dist[r], &ex);	/* dist = f 2^ex, 0.5 <= f < 1 */
		if (f == 0)
			continue;
		uint64_t mant = (uint64_t)ldexp(f, 53);	/* exact */
		int sh = ex - 53 + q;
		if (sh >= 0)
			sum += (unsigned __int128)mant << sh;
		else if (sh > -64)
			sum += mant >> -sh;	/* truncated: the same on every split */
	}
	/* over the ranks in 32-bit limbs, which cannot carry out of an int64 */
	int64_t limb[4];
	for (int i = 0; i < 4; i++)
		limb[i] = (int64_t)(uint32_t)(sum >> (32 * i));
	ranks_sum_i64(limb, 4);
	sum = 0;
	for (int i = 3; i >= 0; i--)
		sum = (sum << 32) + (unsigned __int128)(uint64_t)limb[i];
	return ldexp((double)sum, -q);
}
