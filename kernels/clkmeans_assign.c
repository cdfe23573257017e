/* clkmeans_assign.c: the passes over the rows, batch by batch: assignment (the fused
 * distance kernel; with TF32 its float32 recheck of the rows near a tie; then the exact
 * float64 recheck of those still near one; then the update's sums), and each row's
 * distance to its centroid. Apart because these are what every iteration runs over
 * every batch: the hot path, read on its own. */
#include "clkmeans_dev.h"

/* Labels every row with the current centroids; with update, sums and counts too. */
void
km_assign_pass(struct km *m, int update)
{
	struct cset *c = &m->set[m->cur];
	cl_int k = (cl_int)m->k, kpad = (cl_int)m->kpad;
	size_t nt = (size_t)m->t.tmt * m->t.tnt;

	for (size_t b = 0; b < m->nbatch; b++) {
		cl_long row0;
		cl_int nb = km_bind(m, b, &row0);
		cl_long nelem = (cl_long)nb * (cl_long)m->d;
		const size_t groups = CEIL_DIV((size_t)nb, m->tm);
		km_fill_zero(m, m->state, 4 * SI_NLIST, 4);
		/* the tensor cores' assign takes the centroids rounded to TF32 */
		cl_mem cT = m->assign_f32 ? c->cTt : c->cT;
		km_args(m->assign, m->assign_f32 ? 9 : 10, A(m->X), A(nb), A(cT), A(c->cn), A(kpad),
		    A(m->labels), A(row0), A(m->list), A(m->state), A(m->list));
		km_launch(m, m->assign, groups * nt, nt);
		/* exact takes the list the float32 recheck leaves, or assign's */
		cl_mem elist = m->list;
		cl_int eslot = SI_NLIST;
		if (m->assign_f32) {
			km_fill_zero(m, m->state, 4 * SI_NLIST2, 4);
			km_args(m->assign_f32, 10, A(m->X), A(nb), A(c->cT), A(c->cn), A(kpad),
			    A(m->labels), A(row0), A(m->list2), A(m->state), A(m->list));
			/* a few groups a compute unit, each taking row tiles of the list in
			 * turn: the list is some percent of the batch, known on the device only */
			size_t rg = MIN(groups, (size_t)m->x.compute_units * 4);
			km_launch(m, m->assign_f32, rg * nt, nt);
			elist = m->list2;
			eslot = SI_NLIST2;
		}
		km_args(m->exact, 12, A(m->X), A(c->c64), A(c->c64T), A(c->cT), A(c->cnrm), A(k),
		    A(kpad), A(m->labels), A(row0), A(elist), A(eslot), A(m->state));
		km_launch(m, m->exact, m->exact_groups * m->t.wg, m->t.wg);
		if (update) {
			cl_int delta = m->delta;
			cl_mem prev = delta ? m->prev : m->labels;	/* unread without delta */
			km_args(m->update, 9, A(m->X), A(nelem), A(m->labels), A(prev), A(delta),
			    A(row0), A(m->fscale_m), A(m->sums), A(m->counts));
			size_t g = MIN(m->update_groups, CEIL_DIV((size_t)nelem, (size_t)m->t.wg));
			km_launch(m, m->update, g * m->t.wg, m->t.wg);
		}
	}
	/* the sums are now those of these labels */
	if (update && m->delta && m->n > 0)
		CL_CHECK(clEnqueueCopyBuffer(m->x.queue, m->labels, m->prev, 0, 0, m->n * 4, 0,
		    NULL, NULL));
}

/* dists and their partial sums, for the labels and the current centroids. */
void
km_rowdist_pass(struct km *m)
{
	struct cset *c = &m->set[m->cur];
	for (size_t b = 0; b < m->nbatch; b++) {
		cl_long row0;
		cl_int nb = km_bind(m, b, &row0);
		cl_long g0 = row0 / m->t.rg;
		km_args(m->rowdist, 8, A(m->X), A(nb), A(c->c64), A(m->labels), A(row0),
		    A(m->dists), A(m->part), A(g0));
		km_launch(m, m->rowdist, CEIL_DIV((size_t)nb, (size_t)m->t.rg) * m->t.wg, m->t.wg);
	}
}
