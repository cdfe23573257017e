/* clmatmul_run.c: one run of clmatmul(1) decided and dispatched (see clmatmul_run.h):
 * the host's native path or OpenCL devices, the rest of the input read into the
 * memory the choice wants, the multiply or --bench, and --verify. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "clmatmul_run.h"
#include "err.h"
#include "timer.h"

static double
work_of(const struct cm_problem *p)
{
	return (double)p->m * (double)p->n * (double)p->k;
}

/* Whether the options ask for the OpenCL kernel: forced parameters or transfers. */
static int
opencl_options(const struct cm_options *o)
{
	return memcmp(&o->force, &(struct cm_params){0}, sizeof o->force) != 0 ||
	    o->transfers != CM_XFER_AUTO;
}

static int
is_auto(const char *spec)
{
	return spec == NULL || strcmp(spec, "auto") == 0;
}

/* The device's engines, once the devices are open: clx_start's prep, in its thread,
 * or on the caller's. */
static void
open_engines(struct clx *xs, int n, void *ctx)
{
	struct cm_job *j = ctx;
	j->nd = n;
	cm_open_many(xs, n, &j->o, j->eng);
}

/* clx_decide's model for clx_start: the cost column of the job's tuning row. */
static const struct cost_model *
job_cost(const char *desc, void *ctx)
{
	return cm_cost(desc, &((struct cm_job *)ctx)->o);
}

static const char *
auto_spec(struct cm_job *j)
{
	const struct cm_problem *p = &j->p;
	return cm_device(j->device, j->platform, &j->o, p->m, p->n, p->k);
}

void
cm_start(struct cm_job *j, int64_t input_bytes)
{
	double work;
	if (j->device != NULL && strcmp(j->device, "cpu") == 0)
		return;
	if (!is_auto(j->device) || j->o.tf32) {
		work = 0;	/* a named device: opened as given */
	} else if (j->bench) {
		work = work_of(&j->p);
		if (work < CM_HOST_WORK && !opencl_options(&j->o))
			return;
	} else {
		/* Square matrices of the inputs' elements: four bytes an element for NPY,
		 * about eight for text (the smaller, so the estimate errs towards the host);
		 * A and B of e elements each, m n k = e^1.5. */
		if (input_bytes < 0)
			return;
		double e = (double)input_bytes / 2 / 8;
		work = e * sqrt(e);
		if (work < CM_HOST_WORK && !opencl_options(&j->o))
			return;
		vlog("auto: inputs of %lld bytes, about %.2g multiply-adds: OpenCL opened "
		    "beside the read", (long long)input_bytes, work);
	}
	j->start = clx_start(j->device, j->platform, verbose || j->bench ? CLX_PROFILE : 0,
	    work, is_auto(j->device) && !j->o.tf32 ? job_cost : NULL, open_engines, j, j->xs,
	    CLX_MAX_MANY);
}

/* ---- reading ---- */

/* Both NPY inputs of at least this many elements (1 MiB of float32 each, a copy of
 * 0.1-0.3 ms) are read at once on two threads. */
#define CM_READ_TWO_ELEMS ((size_t)1 << 18)

struct read_one {
	struct clmat *c;
	struct clx *x;
	const char *what;
};

static void *
read_main(void *arg)
{
	struct read_one *r = arg;
	clmat_read(r->c, r->x, r->what);
	return NULL;
}

/* Reads what the headers left of A, B and C0 (with beta) into memory of x (NULL:
 * ordinary memory). NPY files (clmat_open leaves their data) are read at once, B on a
 * thread of its own beside A: each read is one thread's copy out of the page cache (or
 * a disk's queue), so two files overlap. An error in either is said by the thread that
 * meets it (one message, exit 1); where both are bad, either may be the one named. */
static void
read_inputs(struct cm_job *j, struct clx *x)
{
	if (j->read)
		return;	/* before the device was waited for (staged), and then the host ran */
	j->read = 1;
	double t0 = now_sec();
	struct read_one rb = {j->b, x, "B"};
	pthread_t t;
	/* (a thread's start, tens of microseconds, is worth it only for a longer read) */
	const int two = j->a->s != NULL && j->b->s != NULL &&
	    MIN(j->a->m.rows * j->a->m.cols, j->b->m.rows * j->b->m.cols) >= CM_READ_TWO_ELEMS;
	if (two) {
		int err = pthread_create(&t, NULL, read_main, &rb);
		if (err != 0)
			die_no_thread(err, NULL);
	}
	clmat_read(j->a, x, "A");
	if (two)
		pthread_join(t, NULL);
	else
		clmat_read(j->b, x, "B");
	if (j->p.beta != 0)
		clmat_read(j->c0, x, "C0");
	phase_add(PH_READ, now_sec() - t0);
	if (two)
		vlog("read: A and B at once, on two threads");
}

/* ---- the host ---- */

static void
run_host(struct cm_job *j)
{
	struct cm_problem *p = &j->p;
	const size_t es = dtype_size(j->o.dt);
	if (j->o.tf32)
		die("--precision tf32: the host (-d cpu) has no NVIDIA tensor cores; TF32 runs "
		    "only on an NVIDIA GPU (use --precision fp32, the default, here)");
	if (opencl_options(&j->o))
		usage_error("kernel parameters and --transfers are the OpenCL kernel's: -d cpu "
		    "multiplies on the host without OpenCL (cpu:0 is the first OpenCL CPU "
		    "device)");
	j->host = 1;
	j->device_name = "host";
	vlog("device: host (cpu, native C on %d thread%s, no OpenCL)", cli_threads(),
	    cli_threads() == 1 ? "" : "s");
	if (!j->bench) {
		read_inputs(j, NULL);
		p->a = j->a->m.data;
		p->b = j->b->m.data;
		p->c0 = j->c0->m.data;
		j->c = (struct matrix){p->m, p->n, j->o.dt, NULL};
		j->c.data = clhost_alloc(NULL, mul_size(mul_size(p->m, p->n, "C"), es, "C"), "C",
		    &j->hc);
		p->c = j->c.data;
		double t0 = now_sec();
		cm_multiply_host(p, j->o.ta, j->o.tb, j->o.dt);
		phase_add("compute", now_sec() - t0);
		return;
	}
	/* --bench: the matrices made on the host, then timed multiplies */
	double t0 = now_sec();
	void *a = clhost_alloc(NULL, mul_size(mul_size(p->m, p->k, "A"), es, "A"), "A", &j->ha);
	void *b = clhost_alloc(NULL, mul_size(mul_size(p->k, p->n, "B"), es, "B"), "B", &j->hb);
	cm_fill_host(a, j->o.ta ? p->k : p->m, j->o.ta ? p->m : p->k, j->o.dt, j->seed,
	    CM_SALT_A);
	cm_fill_host(b, j->o.tb ? p->n : p->k, j->o.tb ? p->k : p->n, j->o.dt, j->seed,
	    CM_SALT_B);
	void *c0 = NULL;
	if (p->beta != 0) {
		c0 = clhost_alloc(NULL, mul_size(mul_size(p->m, p->n, "C0"), es, "C0"), "C0",
		    &j->hc0);
		cm_fill_host(c0, p->m, p->n, j->o.dt, j->seed, CM_SALT_C);
	}
	p->a = a;
	p->b = b;
	p->c0 = c0;
	p->c = clhost_alloc(NULL, mul_size(mul_size(p->m, p->n, "C"), es, "C"), "C", &j->hc);
	phase_add("generate (host)", now_sec() - t0);
	double *ms = xmallocarray((size_t)j->reps, sizeof *ms);
	cm_multiply_host(p, j->o.ta, j->o.tb, j->o.dt);	/* warm-up */
	for (int r = 0; r < j->reps; r++) {
		t0 = now_sec();
		cm_multiply_host(p, j->o.ta, j->o.tb, j->o.dt);
		ms[r] = 1e3 * (now_sec() - t0);
	}
	/* the median (the lower middle one of an even count) and the best */
	for (int a1 = 1; a1 < j->reps; a1++)
		for (int b1 = a1; b1 > 0 && ms[b1 - 1] > ms[b1]; b1--) {
			double t = ms[b1];
			ms[b1] = ms[b1 - 1];
			ms[b1 - 1] = t;
		}
	j->r = (struct cm_bench_result){ms[(j->reps - 1) / 2], ms[0], j->reps, 1};
	free(ms);
}

/* ---- OpenCL ---- */

static void
run_opencl(struct cm_job *j, const char *spec)
{
	struct cm_problem *p = &j->p;
	const size_t es = dtype_size(j->o.dt);
	const size_t maxmem = j->o.max_device_mem;
	/* The host's matrices: with auto transfers in ordinary memory, every copy staged
	 * through the engines' rings of pinned buffers (clmatmul_xfer.c), which cost far
	 * less than pinning whole matrices (768 MB: 320 ms on the H200's host), and read
	 * before the device is waited for: the reading overlaps the platform's start in
	 * clx_start's thread. With rect or packed transfers pinned whole where they can be
	 * (clstaging.h), copied from in place, and so read once the device is open. */
	const int staged = j->o.transfers == CM_XFER_AUTO;
	if (staged && !j->bench)
		read_inputs(j, NULL);
	if (j->start != NULL) {
		j->nd = clx_start_wait(j->start);
		j->start = NULL;
		if (j->nd == 0) {
			vlog("auto: no OpenCL device: the host");
			run_host(j);
			return;
		}
	} else {
		double t0 = now_sec();
		j->nd = clx_open_many(spec != NULL ? spec : auto_spec(j), j->platform,
		    verbose || j->bench ? CLX_PROFILE : 0, j->xs, CLX_MAX_MANY);
		phase_add("open device", now_sec() - t0);
		open_engines(j->xs, j->nd, j);
	}
	struct clx *x = &j->xs[0];
	j->device_name = x->name;
	if (j->nd > 1 && j->bench && !maxmem)
		usage_error("--bench on several devices multiplies host matrices: give "
		    "--max-device-mem (matrices made on the device time one device's kernel)");
	struct clx *hx = staged ? NULL : x;
	if (!j->bench) {
		if (!staged)
			read_inputs(j, hx);
		p->a = j->a->m.data;
		p->b = j->b->m.data;
		p->c0 = j->c0->m.data;
		j->c = (struct matrix){p->m, p->n, j->o.dt, NULL};
		j->c.data = clhost_alloc(hx, mul_size(mul_size(p->m, p->n, "C"), es, "C"), "C",
		    &j->hc);
		p->c = j->c.data;
		cm_multiply_many(j->eng, j->nd, p);
		return;
	}
	/* Host copies of the data: for --verify, and as the source of a run from host
	 * memory (--max-device-mem). */
	void *a_host = NULL, *b_host = NULL, *c0_host = NULL;
	if (j->verify || maxmem) {
		double t0 = now_sec();
		a_host = clhost_alloc(hx, mul_size(mul_size(p->m, p->k, "A"), es, "A"), "A",
		    &j->ha);
		b_host = clhost_alloc(hx, mul_size(mul_size(p->k, p->n, "B"), es, "B"), "B",
		    &j->hb);
		cm_fill_host(a_host, j->o.ta ? p->k : p->m, j->o.ta ? p->m : p->k, j->o.dt,
		    j->seed, CM_SALT_A);
		cm_fill_host(b_host, j->o.tb ? p->n : p->k, j->o.tb ? p->k : p->n, j->o.dt,
		    j->seed, CM_SALT_B);
		if (p->beta != 0) {
			c0_host = clhost_alloc(hx, mul_size(mul_size(p->m, p->n, "C0"), es, "C0"),
			    "C0", &j->hc0);
			cm_fill_host(c0_host, p->m, p->n, j->o.dt, j->seed, CM_SALT_C);
		}
		p->c = clhost_alloc(hx, mul_size(mul_size(p->m, p->n, "C"), es, "C"), "C",
		    &j->hc);
		phase_add("generate (host)", now_sec() - t0);
	}
	p->a = maxmem ? a_host : NULL;
	p->b = maxmem ? b_host : NULL;
	p->c0 = maxmem ? c0_host : NULL;
	cm_bench(j->eng, j->nd, p, j->seed, j->reps, &j->r);
	p->a = a_host;
	p->b = b_host;
	p->c0 = c0_host;
}

void
cm_run(struct cm_job *j)
{
	struct cm_problem *p = &j->p;
	const char *spec = NULL;
	int host = 0;
	if (j->start == NULL && j->device != NULL && strcmp(j->device, "cpu") == 0) {
		host = 1;
	} else if (j->start == NULL && is_auto(j->device) && !j->o.tf32 &&
	    !opencl_options(&j->o)) {
		double work = work_of(p);
		host = work < CM_HOST_WORK;
		if (host) {
			vlog("auto: host, %.3g multiply-adds, below %.3g where OpenCL's start "
			    "pays (no OpenCL loaded)", work, CM_HOST_WORK);
		} else if (strcmp(spec = auto_spec(j), "auto") == 0) {
			host = 1;	/* as the CUDA programs' auto without a GPU */
			vlog("auto: no OpenCL device: the host");
		}
	}
	/* C's rows written as they come, beside the multiply; with --verify only once
	 * checked (no rows of a C that fails it) */
	struct cm_writer *w = NULL;
	if (!j->bench && !j->verify) {
		w = cm_writer_open(j->output, j->out_fmt, p->m, p->n, j->o.dt, &j->c);
		p->sink = cm_writer_sink(w);
	}
	if (host)
		run_host(j);
	else
		run_opencl(j, spec);
	if (j->verify) {
		const double eps = j->o.dt == DT_F64 ? 0x1p-52 : j->o.tf32 ? CM_TF32_EPS :
		    0x1p-23;
		const double eps_in = j->o.tf32 ? CM_TF32_EPS_IN : 0;
		char msg[256];
		double t0 = now_sec();
		int bad = cm_verify(p, j->o.ta, j->o.tb, j->o.dt, eps_in, eps, j->seed, msg,
		    sizeof msg);
		phase_add("verify", now_sec() - t0);
		if (bad)
			die("--verify: %s", msg);
		vlog("verify: %s", msg);
	}
	if (!j->bench) {
		if (w == NULL)
			w = cm_writer_open(j->output, j->out_fmt, p->m, p->n, j->o.dt, &j->c);
		cm_writer_close(w);
		p->sink = NULL;
	}
}

void
cm_run_end(struct cm_job *j)
{
	phases_report();
	if (!j->host)
		clx_finish();	/* a GPU run ends here; what follows frees a CPU run's memory */
	for (int i = 0; i < j->nd; i++)
		cm_close(j->eng[i]);
	if (j->a != NULL)
		clmat_free(j->a);
	if (j->b != NULL)
		clmat_free(j->b);
	if (j->c0 != NULL)
		clmat_free(j->c0);
	clhost_free(&j->hc);
	clhost_free(&j->ha);
	clhost_free(&j->hb);
	clhost_free(&j->hc0);
	for (int i = 0; i < j->nd; i++)
		clx_close(&j->xs[i]);
}
