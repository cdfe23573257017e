/* clkmeans_stream.c: where the rows live. They stay in device memory when they fit
 * the bound (--max-device-mem, else most of the device), else every pass streams them
 * through in batches. Kept apart from the passes that use the batches: it is the part
 * that plans memory, whose limits must be checked and whose arithmetic must end. */
#include <math.h>

#include "clkmeans_dev.h"
#include "timer.h"

/* Device buffers, and whether the rows fit or are streamed in batches.
 *
 * No loop plans here, so nothing can spin: the batch comes in closed form. Batches
 * are multiples of align (rowdist and kpp number their partial sums by group of rg
 * rows, assign's tiles are tm rows; both are powers of two). least is what the
 * smallest plan needs: every row's label and distance, the centroid buffers, and one
 * batch of MIN(n, align) rows; a bound below it is an error that names it, and the
 * bound least itself works. For budget >= least, fit >= MIN(n, align), so when the
 * rows do not all fit (n > fit) then fit >= align and the batch is a positive multiple
 * of align, unless the device's largest allocation holds fewer than align rows (an
 * error naming that). Every pass then loops over nbatch = ceil(n / batch) <= n
 * batches of at least one row each (assign_pass, rowdist_pass, kpp_pass). */
void
km_plan_memory(struct km *m, size_t max_device_mem)
{
	const size_t n = m->n, d = m->d, k = m->k, kpad = m->kpad, R = m->rsz;
	const size_t align = MAX(m->tm, (size_t)m->t.rg);
	const int maxl = 2 + (int)log((double)k);
	m->ngroups = CEIL_DIV(n, (size_t)m->t.rg);
	size_t fixed = STATE_BYTES + d * (4 + R) + k * d * 8 + k * 8 + kpad * (R + 4) +
	    m->ngroups * (size_t)maxl * 8 + (size_t)maxl * d * R +
	    2 * (k * d * R + d * kpad * R + m->dpad * kpad * 4 * (1 + (m->t.tf32 != 0)) +
	    2 * kpad * 4);
	size_t per_row = 4 + R + (m->delta ? 4 : 0);	/* labels, dists (, prev) */
	/* the row, its place in the exact list (and, with TF32, in the recheck's) */
	size_t row_bytes = d * 4 + 4 * (1 + (m->t.tf32 != 0));
	size_t budget = max_device_mem ? max_device_mem : (size_t)m->x.global_mem / 10 * 9;
	size_t base = fixed + n * per_row;
	size_t least = base + MIN(n, align) * row_bytes;
	if (least > budget)
		die("--max-device-mem: %zu bytes are too few for %zu rows x %zu columns and %zu centroids (at least %zu needed)",
		    budget, n, d, k, least);
	size_t fit = (budget - base) / row_bytes;
	size_t max_rows = (size_t)m->x.max_alloc / MAX(d * 4, (size_t)4);
	if (n == 0) {
		m->batch = 0;		/* a device with no rows: centroids only */
	} else if (n <= fit && n <= max_rows) {
		m->batch = n;
	} else {
		m->batch = MIN(fit, max_rows) / align * align;
		if (m->batch == 0)
			die("%s allocates at most %llu bytes at once: fewer than a batch of %zu rows "
			    "of %zu columns", m->x.name, (unsigned long long)m->x.max_alloc, align,
			    d);
	}
	m->nbatch = n == 0 ? 0 : CEIL_DIV(n, m->batch);
	m->loaded = SIZE_MAX;
	if (n == 0)
		vlog("%s has no rows: it makes the centroids only", m->x.name);
	else if (m->nbatch > 1)
		vlog("streaming the rows in %zu batches of %zu rows", m->nbatch, m->batch);
	else
		vlog("the rows stay in device memory (%.1f MiB)", (double)n * d * 4 / (1 << 20));

	m->X = km_buf(m, m->batch * d * 4);
	m->labels = km_buf(m, n * 4);
	m->prev = m->delta ? km_buf(m, n * 4) : NULL;
	m->dists = km_buf(m, n * R);
	m->list = km_buf(m, m->batch * 4);
	m->list2 = m->t.tf32 ? km_buf(m, m->batch * 4) : NULL;
	m->state = km_buf(m, STATE_BYTES);
	m->sums = km_buf(m, k * d * 8);
	m->counts = km_buf(m, k * 8);
	m->shift = km_buf(m, kpad * R);
	m->empty = km_buf(m, kpad * 4);
	m->part = km_buf(m, m->ngroups * (size_t)maxl * 8);	/* kpp's are integers */
	m->cand = km_buf(m, (size_t)maxl * d * R);
	for (int s = 0; s < 2; s++) {
		m->set[s].c64 = km_buf(m, k * d * R);
		m->set[s].c64T = km_buf(m, d * kpad * R);
		m->set[s].cT = km_buf(m, m->dpad * kpad * 4);
		m->set[s].cTt = m->t.tf32 ? km_buf(m, m->dpad * kpad * 4) : NULL;
		m->set[s].cn = km_buf(m, kpad * 4);
		m->set[s].cnrm = km_buf(m, kpad * 4);
	}
	km_fill_zero(m, m->state, 0, STATE_BYTES);
	if (m->nbatch == 1) {
		double t = now_sec();
		km_write_buf(m, m->X, 0, n * d * 4, m->hx);
		m->loaded = 0;
		phase_add(PH_H2D, now_sec() - t);
	}
}

/* Makes batch b's rows the ones in m->X; returns how many, with its first row. */
int
km_bind(struct km *m, size_t b, cl_long *row0)
{
	size_t first = b * m->batch, nb = MIN(m->batch, m->n - first);
	*row0 = (cl_long)first;
	if (m->loaded != b) {
		double t = now_sec();
		CL_CHECK(clEnqueueWriteBuffer(m->x.queue, m->X, CL_FALSE, 0, nb * m->d * 4,
		    m->hx + first * m->d, 0, NULL, NULL));
		m->loaded = b;
		phase_add(PH_H2D, now_sec() - t);
	}
	return (int)nb;
}
