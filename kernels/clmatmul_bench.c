/* clmatmul_bench.c: --bench, timed multiplies of numbers made on the device (the
 * kernel alone) or of host matrices (the whole blocked path). Apart from the engine
 * because only --bench needs it. */
#include <stdlib.h>
#include <string.h>

#include "clmatmul_engine.h"
#include "timer.h"

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Fills a padded device matrix with cm_uniform numbers. */
static void
fill_device(struct cm_engine *e, cl_mem buf, size_t rows, size_t cols, size_t prows,
    size_t pitch, uint64_t seed, uint64_t salt)
{
	cl_int r = (cl_int)rows, c = (cl_int)cols, ld = (cl_int)pitch;
	cl_ulong sd = seed, sl = salt;
	CL_CHECK(clSetKernelArg(e->fill, 0, sizeof buf, &buf));
	CL_CHECK(clSetKernelArg(e->fill, 1, sizeof r, &r));
	CL_CHECK(clSetKernelArg(e->fill, 2, sizeof c, &c));
	CL_CHECK(clSetKernelArg(e->fill, 3, sizeof ld, &ld));
	CL_CHECK(clSetKernelArg(e->fill, 4, sizeof sd, &sd));
	CL_CHECK(clSetKernelArg(e->fill, 5, sizeof sl, &sl));
	size_t global[2] = {pitch, prows}, local[2] = {64, 1};
	while (pitch % local[0])
		local[0] /= 2;
	CL_CHECK(clEnqueueNDRangeKernel(e->x->queue, e->fill, 2, NULL, global, local, 0, NULL,
	    NULL));
}

void
cm_bench(struct cm_engine **es, int ne, const struct cm_problem *pr, uint64_t seed, int reps,
    struct cm_bench_result *res)
{
	struct cm_engine *e = es[0];
	double *ms = xmallocarray((size_t)reps, sizeof *ms);
	memset(res, 0, sizeof *res);
	res->reps = reps;

	if (pr->a != NULL) {
		/* From host memory, in blocks when the bound asks for them: the whole
		 * path a user's matrices take, transfers included. */
		struct plan pl;
		cm_plan(e, pr->m, pr->n, pr->k, pr->beta != 0, 0, &pl);
		res->blocks = (int)(pl.nbm * pl.nbn);
		cm_multiply_many(es, ne, pr);	/* warm-up */
		for (int r = 0; r < reps; r++) {
			double t0 = now_sec();
			cm_multiply_many(es, ne, pr);
			ms[r] = 1e3 * (now_sec() - t0);
		}
	} else {
		const size_t es = e->esize;
		const size_t mp = round_up(pr->m, (size_t)e->p.bm), np = round_up(pr->n, (size_t)e->p.bn);
		const size_t kp = round_up(pr->k, (size_t)e->p.bk);
		const size_t elems = mp * kp + kp * np + mp * np * (1 + (pr->beta != 0));
		if (elems * es > e->budget || MAX(MAX(mp * kp, kp * np), mp * np) * es > e->x->max_alloc)
			die("--bench %zux%zux%zu does not fit on %s (%zu bytes); give "
			    "--max-device-mem to run it in blocks from host memory", pr->m, pr->n,
			    pr->k, e->x->name, elems * es);
		res->blocks = 1;
		cl_context ctx = e->x->ctx;
		cl_mem a = CL_CREATE(clCreateBuffer(ctx, CL_MEM_READ_WRITE, mp * kp * es, NULL, &cl_err_));
		cl_mem b = CL_CREATE(clCreateBuffer(ctx, CL_MEM_READ_WRITE, kp * np * es, NULL, &cl_err_));
		cl_mem c = CL_CREATE(clCreateBuffer(ctx, CL_MEM_READ_WRITE, mp * np * es, NULL, &cl_err_));
		cl_mem c0 = pr->beta != 0 ? CL_CREATE(clCreateBuffer(ctx, CL_MEM_READ_WRITE,
		    mp * np * es, NULL, &cl_err_)) : c;
		double t0 = now_sec();
		if (e->o.ta)
			fill_device(e, a, pr->k, pr->m, kp, mp, seed, CM_SALT_A);
		else
			fill_device(e, a, pr->m, pr->k, mp, kp, seed, CM_SALT_A);
		if (e->o.tb)
			fill_device(e, b, pr->n, pr->k, np, kp, seed, CM_SALT_B);
		else
			fill_device(e, b, pr->k, pr->n, kp, np, seed, CM_SALT_B);
		if (pr->beta != 0)
			fill_device(e, c0, pr->m, pr->n, mp, np, seed, CM_SALT_C);
		CL_CHECK(clFinish(e->x->queue));
		phase_add("generate", now_sec() - t0);
		const size_t lda = e->o.ta ? mp : kp, ldb = e->o.tb ? kp : np;
		cl_mem ap = a, bp = b;
		if (cm_packs(e)) {
			ap = CL_CREATE(clCreateBuffer(ctx, CL_MEM_READ_WRITE, mp * kp * es, NULL,
			    &cl_err_));
			bp = CL_CREATE(clCreateBuffer(ctx, CL_MEM_READ_WRITE, kp * np * es, NULL,
			    &cl_err_));
		}
		for (int r = -1; r < reps; r++) {	/* -1: the warm-up */
			t0 = now_sec();
			if (ap != a) {	/* packing is part of the multiply (cm_packs) */
				cm_ev_log(e, "pack", cm_pack(e, 0, a, lda, ap, mp, kp, 0, NULL));
				cm_ev_log(e, "pack", cm_pack(e, 1, b, ldb, bp, np, kp, 0, NULL));
			}
			cm_set_gemm_args(e, mp, np, kp, ap, lda, bp, ldb, c, np, c0, np, pr->alpha,
			    pr->beta, 0);
			cl_event k = cm_launch_gemm(e, mp, np, 0, NULL);
			CL_CHECK(clWaitForEvents(1, &k));
			double t = now_sec() - t0;
			if (r >= 0)
				ms[r] = 1e3 * t;
			cm_ev_log(e, PH_COMPUTE, k);
		}
		cm_ev_report(e);
		if (pr->c != NULL) {
			t0 = now_sec();
			size_t bo[3] = {0, 0, 0}, region[3] = {pr->n * es, pr->m, 1};
			if (e->rect) {
				CL_CHECK(clEnqueueReadBufferRect(e->qd, c, CL_TRUE, bo, bo, region,
				    np * es, 0, pr->n * es, 0, pr->c, 0, NULL, NULL));
			} else {
				char *tmp = xmallocarray(pr->m * np, es);
				CL_CHECK(clEnqueueReadBuffer(e->qd, c, CL_TRUE, 0, pr->m * np * es, tmp,
				    0, NULL, NULL));
				for (size_t i = 0; i < pr->m; i++)
					memcpy((char *)pr->c + i * pr->n * es, tmp + i * np * es,
					    pr->n * es);
				free(tmp);
			}
			phase_add(PH_D2H, now_sec() - t0);
		}
		if (ap != a) {
			clReleaseMemObject(ap);
			clReleaseMemObject(bp);
		}
		clReleaseMemObject(a);
		clReleaseMemObject(b);
		clReleaseMemObject(c);
		if (c0 != c)
			clReleaseMemObject(c0);
	}
	qsort(ms, (size_t)reps, sizeof *ms, cmp_double);
	res->ms_best = ms[0];
	res->ms_median = reps % 2 ? ms[reps / 2] : 0.5 * (ms[reps / 2 - 1] + ms[reps / 2]);
	free(ms);
}
