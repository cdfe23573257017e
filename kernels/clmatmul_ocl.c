/* clmatmul_ocl.c: the OpenCL side of clmatmul(1): kernel parameters per device class
 * (from the table in clmatmul_tune.h), their checks, the program build, and the
 * kernel launches. The plan, the transfers and the multiply itself, in core or in
 * blocks that stream panels of A and B through the device while it computes, are in
 * clmatmul_plan.c and clmatmul_xfer.c (see clmatmul_engine.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "clmatmul_engine.h"
#include "clmatmul_tune.h"
#include "timer.h"
#include "tune.h"

extern const char clmatmul_cl[];
extern const char *const clmatmul_cl_files[];

/* ---- kernel parameters ---- */

/* The limits of x that cm_params_problem (clmatmul_tune.h) checks against. */
static struct cm_limits
limits_of(const struct clx *x)
{
	return (struct cm_limits){x->max_wg, (unsigned long long)x->local_mem,
	    clx_has_sm90a(x)};
}

static void
params_str(struct cm_engine *e)
{
	const struct cm_params *p = &e->p;
	snprintf(e->pstr, sizeof e->pstr, "tile=%dx%d tile-k=%d item=%dx%d vector=%dx%d "
	    "load-vector=%d patch=%dx%d band=%d unroll=%d staging=%s max-regs=%d", p->bm, p->bn,
	    p->bk, p->tm, p->tn, p->vm, p->vn, p->lw, p->pm, p->pn, p->gm, p->ku,
	    p->staging == CM_DIRECT ? "direct" : p->staging == CM_ASYNC ? "async" :
	    p->staging == CM_WGMMA ? "wgmma" : "local",
	    p->regs);
	if (e->o.tf32) {
		size_t n = strlen(e->pstr);
		snprintf(e->pstr + n, sizeof e->pstr - n, " precision=tf32");
	}
}

/* The first row of the tuning table for the device description desc and precision
 * pr: tune_pick's row, else its pick among the rows after it. With staging forced
 * (nonzero), a wgmma row serves only --staging wgmma and the other rows only the
 * other stagings, while such a row is left; a forced wgmma with no row of its own
 * keeps the first (and cm_params_problem says why). The last rows match every device;
 * a precision they lack (tf32 off NVIDIA, refused before) is an error. */
static const struct clmatmul_tune *
tune_row(const char *desc, enum cm_precision pr, int staging)
{
	const size_t n = sizeof clmatmul_tune_table / sizeof clmatmul_tune_table[0];
	const struct clmatmul_tune *first = NULL;
	for (size_t i = 0; i < n; i++) {
		i += tune_pick(&clmatmul_tune_table[i], n - i, sizeof clmatmul_tune_table[0], desc);
		const struct clmatmul_tune *r = &clmatmul_tune_table[i];
		if (r->precision != pr)
			continue;
		if (first == NULL)
			first = r;
		if (!staging || (staging == CM_WGMMA) == (r->p.staging == CM_WGMMA))
			return r;
	}
	if (first == NULL)
		die("clmatmul_tune.h: no row for this device and precision");
	return first;
}

static enum cm_precision
precision_of(const struct cm_options *o)
{
	return o->tf32 ? CM_TF32 : o->dt == DT_F64 ? CM_FP64 : CM_FP32;
}

static void
choose_params(struct cm_engine *e)
{
	static const char *const prec_name[] = {"float32", "float64", "tf32"};
	const struct clx *x = e->x;
	char desc[384];
	clx_describe(x, desc, sizeof desc);
	const enum cm_precision pr = precision_of(&e->o);
	const struct clmatmul_tune *row = tune_row(desc, pr, e->o.force.staging);
	vlog("tuning: %s, %s (%s)", *row->device ? row->device : "any device", prec_name[pr],
	    row->measured);
	cl_uint w = 0;
	if (row->p.vn == 0)
		clGetDeviceInfo(x->device, e->o.dt == DT_F64 ?
		    CL_DEVICE_NATIVE_VECTOR_WIDTH_DOUBLE : CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT,
		    sizeof w, &w, NULL);
	e->p = cm_row_params(row, (int)w);
	/* Forced values replace the table's; the patch width follows a forced tile. */
	const struct cm_params *f = &e->o.force;
	int tile_forced = f->bn || f->tn;
#define FORCE(field) if (f->field) e->p.field = f->field
	FORCE(bm); FORCE(bn); FORCE(bk); FORCE(tm); FORCE(tn); FORCE(vm); FORCE(vn);
	FORCE(lw); FORCE(pm); FORCE(pn); FORCE(gm); FORCE(ku); FORCE(staging); FORCE(regs);
#undef FORCE
	if (tile_forced && !f->pn && !f->pm) {
		e->p.pm = 1;
		e->p.pn = e->p.bn / MAX(e->p.tn, 1);
	}
	/* Vector widths shrink to what forced sizes allow (unless forced themselves). */
	while (!f->vm && e->p.vm > 1 && e->p.tm % e->p.vm)
		e->p.vm /= 2;
	while (!f->vn && e->p.vn > 1 && e->p.tn % e->p.vn)
		e->p.vn /= 2;
	while (!f->lw && e->p.staging == CM_LOCAL && e->p.lw > 1 && (e->p.bk % e->p.lw ||
	    e->p.bm % e->p.lw || e->p.bn % e->p.lw || !cm_loads_divide(&e->p)))
		e->p.lw /= 2;
	const struct cm_limits lim = limits_of(x);
	char whybuf[160];
	const char *why = cm_params_problem(&e->p, &lim, e->esize, e->o.tf32, e->o.ta, e->o.tb,
	    whybuf, sizeof whybuf);
	if (why != NULL) {
		params_str(e);
		if (memcmp(f, &(struct cm_params){0}, sizeof *f) != 0)
			usage_error("kernel parameters %s do not work: %s", e->pstr, why);
		die("no kernel parameters for %s: %s", x->name, why);
	}
	params_str(e);
}

/* ---- set-up ---- */

/* clx_decide's model: the cost column of the table's row for desc and the precision. */
static const struct cost_model *
row_cost(const char *desc, void *ctx)
{
	return &tune_row(desc, *(const enum cm_precision *)ctx, 0)->cost;
}

const struct cost_model *
cm_cost(const char *desc, const struct cm_options *o)
{
	return &tune_row(desc, precision_of(o), 0)->cost;
}

const char *
cm_device(const char *spec, const char *filter, const struct cm_options *o, size_t m,
    size_t n, size_t k)
{
	if (o->tf32)
		return spec;	/* the tensor cores are asked for: auto keeps to the GPU */
	enum cm_precision pr = precision_of(o);
	return clx_decide(spec, filter, (double)m * (double)n * (double)k, row_cost, &pr);
}

/* --precision tf32 is never chosen for the user nor replaced behind their back: on a
 * device without NVIDIA's TF32 tensor cores (compute capability 8.0 and later) it is
 * an error naming the device. */
static void
check_tf32(const struct clx *x)
{
	if (x->vendor != CLX_NVIDIA || !x->is_gpu)
		die("--precision tf32: %s (%s) is not an NVIDIA GPU; TF32 runs only on NVIDIA's "
		    "tensor cores (use --precision fp32, the default, here)", x->name,
		    x->platform_name);
	unsigned major, minor;
	if (clx_nv_cc(x, &major, &minor) && major < 8)
		die("--precision tf32: %s has compute capability %u.%u; TF32 tensor cores need "
		    "8.0 or later", x->name, major, minor);
}

struct cm_engine *
cm_open(struct clx *x, const struct cm_options *o)
{
	struct cm_engine *e = xcalloc(1, sizeof *e);
	e->x = x;
	e->o = *o;
	e->esize = dtype_size(o->dt);
	if (o->dt == DT_F64 && !x->has_fp64)
		die("--double: %s has no float64 support (cl_khr_fp64)", x->name);
	if (o->tf32)
		check_tf32(x);
	choose_params(e);
	const struct cm_limits lim = limits_of(x);
	vlog("kernel parameters: %s", e->pstr);
	const int wgmma = e->p.staging == CM_WGMMA;
	if (wgmma)
		vlog("precision: tf32: kernel gemm_wgmma, wgmma.mma_async m64n%dk8 on the tensor "
		    "cores, inputs packed and rounded to 10-bit mantissas, sums in float32; "
		    "%d slices in local memory", e->p.bn, cm_wgmma_stages(&e->p, &lim));
	else if (o->tf32)
		vlog("precision: tf32: kernel gemm_tf32, mma.sync m16n8k8 on the tensor cores, "
		    "inputs rounded to 10-bit mantissas, sums in float32; %s", e->p.staging ==
		    CM_ASYNC ? "slices copied by cp.async" : "slices staged through registers");

	char opts[1024];
	const struct cm_params *p = &e->p;
	cl_device_fp_config fp = 0;
	CL_CHECK(clGetDeviceInfo(x->device, o->dt == DT_F64 ? CL_DEVICE_DOUBLE_FP_CONFIG :
	    CL_DEVICE_SINGLE_FP_CONFIG, sizeof fp, &fp, NULL));
	int n = snprintf(opts, sizeof opts, "-D USE_DOUBLE=%d -D TRANS_A=%d -D TRANS_B=%d "
	    "-D BM=%d -D BN=%d -D BK=%d -D TM=%d -D TN=%d -D VM=%d -D VN=%d -D LW=%d -D PM=%d "
	    "-D PN=%d -D GM=%d -D KU=%d -D USE_LOCAL=%d -D USE_FMA=%d", o->dt == DT_F64, o->ta,
	    o->tb, p->bm, p->bn, p->bk, p->tm, p->tn, p->vm, p->vn, p->lw, p->pm, p->pn, p->gm,
	    p->ku, p->staging != CM_DIRECT, (fp & CL_FP_FMA) != 0);
	if (wgmma) {
		n += snprintf(opts + n, sizeof opts - (size_t)n, " -D USE_WGMMA=1 -D NSTAGE=%d",
		    cm_wgmma_stages(p, &lim));
	} else if (o->tf32) {
		n += snprintf(opts + n, sizeof opts - (size_t)n, " -D USE_TF32=1 -D PAD=%d",
		    CM_TF32_PAD);
	}
	if (p->staging == CM_ASYNC)
		n += snprintf(opts + n, sizeof opts - (size_t)n, " -D TF32_ASYNC=1 -D NSTAGE=%d",
		    cm_async_stages(p, o->ta, o->tb, &lim));
	if (x->vendor == CLX_NVIDIA) {
		if (p->regs > 0)
			n += snprintf(opts + n, sizeof opts - (size_t)n, " -cl-nv-maxrregcount=%d", p->regs);
		if (verbose)
			snprintf(opts + n, sizeof opts - (size_t)n, " -cl-nv-verbose");
	}
	double t0 = now_sec();
	e->prog = (wgmma ? clx_build_sm90a : clx_build)(x, "clmatmul", clmatmul_cl,
	    clmatmul_cl_files, opts);
	e->gemm = clx_kernel(e->prog, wgmma ? "gemm_wgmma" : o->tf32 ? "gemm_tf32" : "gemm");
	e->fill = clx_kernel(e->prog, "fill_uniform");
	e->pack_a = clx_kernel(e->prog, "pack_a");
	e->pack_b = clx_kernel(e->prog, "pack_b");
	phase_add("build", now_sec() - t0);

	cl_command_queue_properties qp = 0;
	CL_CHECK(clGetCommandQueueInfo(x->queue, CL_QUEUE_PROPERTIES, sizeof qp, &qp, NULL));
	qp &= CL_QUEUE_PROFILING_ENABLE;
	e->qh = CL_CREATE(clCreateCommandQueue(x->ctx, x->device, qp, &cl_err_));
	e->qd = CL_CREATE(clCreateCommandQueue(x->ctx, x->device, qp, &cl_err_));

	switch (o->transfers) {
	case CM_XFER_PACKED:
		e->rect = 0;
		break;
	case CM_XFER_RECT:
		/* from the whole matrix in place, where the platform copies rectangles right */
		t0 = now_sec();
		e->rect = cm_rect_works(e);
		phase_add("check rectangles", now_sec() - t0);
		vlog("rectangle transfers: %s", e->rect ? "correct, used" :
		    "wrong on this platform, packed copies used");
		break;
	default: {
		/* auto: staged through a ring of mapped buffers */
		const char *v = getenv("ACCELKIT_CLMATMUL_STAGE");
		e->staged = 1;
		e->stage_bytes = v != NULL && *v != '\0' ? cli_size("ACCELKIT_CLMATMUL_STAGE", v) :
		    CM_STAGE_BYTES;
		e->stage_bytes = MAX(e->stage_bytes / e->esize, (size_t)1) * e->esize;
		vlog("transfers: staged through %d mapped host buffers of up to %zu bytes (pinned "
		    "where the driver pins them)", CM_STAGE_BUFFERS, e->stage_bytes);
	}
	}
	/* What the device may hold: the option, else most of its memory. */
	e->budget = o->max_device_mem ? o->max_device_mem : (size_t)(x->global_mem / 10 * 9);
	return e;
}

void
cm_open_many(struct clx *xs, int n, const struct cm_options *o, struct cm_engine **es)
{
	es[0] = cm_open(&xs[0], o);
	/* The first device's parameters for all: the same kernel for every block of C,
	 * whichever device takes it, and so the same bytes. */
	struct cm_options same = *o;
	same.force = es[0]->p;
	char d0[384], di[384];
	clx_describe(&xs[0], d0, sizeof d0);
	for (int i = 1; i < n; i++) {
		clx_describe(&xs[i], di, sizeof di);
		if (strcmp(d0, di) != 0)
			vlog("device %d:%d (%s) runs device %d:%d's kernel parameters, so that every "
			    "block is computed alike", xs[i].platform_index, xs[i].device_index,
			    xs[i].name, xs[0].platform_index, xs[0].device_index);
		es[i] = cm_open(&xs[i], &same);
	}
}

void
cm_close(struct cm_engine *e)
{
	if (e == NULL)
		return;
	clstaging_close(e->ring);	/* before its queue */
	clReleaseCommandQueue(e->qh);
	clReleaseCommandQueue(e->qd);
	clReleaseKernel(e->gemm);
	clReleaseKernel(e->fill);
	clReleaseKernel(e->pack_a);
	clReleaseKernel(e->pack_b);
	clReleaseProgram(e->prog);
	free(e->ev);
	free(e->ev_phase);
	free(e);
}

/* ---- kernel launches ---- */

/* The direct kernel's packing of an op(A) (which = 0) or op(B) (1) panel of extent ci
 * along C and ck along K, stored with pitch ld, from src into dst, after wait. */
cl_event
cm_pack(struct cm_engine *e, int which, cl_mem src, size_t ld, cl_mem dst, size_t ci,
    size_t ck, cl_uint nwait, const cl_event *wait)
{
	cl_kernel kn = which ? e->pack_b : e->pack_a;
	int trans = which ? e->o.tb : e->o.ta;
	/* the source's contiguous direction first: rows of op(A), or of B as stored */
	int along_c = which ? !trans : trans;
	cl_int ild = (cl_int)ld, ik = (cl_int)ck;
	CL_CHECK(clSetKernelArg(kn, 0, sizeof src, &src));
	CL_CHECK(clSetKernelArg(kn, 1, sizeof ild, &ild));
	CL_CHECK(clSetKernelArg(kn, 2, sizeof dst, &dst));
	CL_CHECK(clSetKernelArg(kn, 3, sizeof ik, &ik));
	size_t global[2] = {along_c ? ci : ck, along_c ? ck : ci}, local[2] = {64, 1};
	cl_uint dims = 2;
	if (e->p.staging == CM_WGMMA) {	/* a work-item for each 16 bytes packed */
		dims = 1;
		global[0] = ci * ck / 4;
	}
	while (global[0] % local[0])
		local[0] /= 2;
	cl_event ev;
	CL_CHECK(clEnqueueNDRangeKernel(e->x->queue, kn, dims, NULL, global, local, nwait,
	    nwait ? wait : NULL, &ev));
	return ev;
}

void
cm_set_gemm_args(struct cm_engine *e, size_t m, size_t n, size_t k, cl_mem a, size_t lda,
    cl_mem b, size_t ldb, cl_mem c, size_t ldc, cl_mem c0, size_t ldc0, double alpha,
    double beta, int mode)
{
	cl_int iv[8] = {(cl_int)m, (cl_int)n, (cl_int)k, (cl_int)lda, (cl_int)ldb, (cl_int)ldc,
	    (cl_int)ldc0, mode};
	cl_kernel g = e->gemm;
	CL_CHECK(clSetKernelArg(g, 0, sizeof(cl_int), &iv[0]));
	CL_CHECK(clSetKernelArg(g, 1, sizeof(cl_int), &iv[1]));
	CL_CHECK(clSetKernelArg(g, 2, sizeof(cl_int), &iv[2]));
	CL_CHECK(clSetKernelArg(g, 3, sizeof a, &a));
	CL_CHECK(clSetKernelArg(g, 4, sizeof(cl_int), &iv[3]));
	CL_CHECK(clSetKernelArg(g, 5, sizeof b, &b));
	CL_CHECK(clSetKernelArg(g, 6, sizeof(cl_int), &iv[4]));
	CL_CHECK(clSetKernelArg(g, 7, sizeof c, &c));
	CL_CHECK(clSetKernelArg(g, 8, sizeof(cl_int), &iv[5]));
	CL_CHECK(clSetKernelArg(g, 9, sizeof c0, &c0));
	CL_CHECK(clSetKernelArg(g, 10, sizeof(cl_int), &iv[6]));
	if (e->o.dt == DT_F64) {
		CL_CHECK(clSetKernelArg(g, 11, sizeof alpha, &alpha));
		CL_CHECK(clSetKernelArg(g, 12, sizeof beta, &beta));
	} else {
		float fa = (float)alpha, fb = (float)beta;
		CL_CHECK(clSetKernelArg(g, 11, sizeof fa, &fa));
		CL_CHECK(clSetKernelArg(g, 12, sizeof fb, &fb));
	}
	CL_CHECK(clSetKernelArg(g, 13, sizeof(cl_int), &iv[7]));
}

/* Enqueues gemm over a padded m x n C (arguments set) after the wait events. */
cl_event
cm_launch_gemm(struct cm_engine *e, size_t m, size_t n, cl_uint nwait, const cl_event *wait)
{
	size_t nt = (size_t)(e->p.bm / e->p.tm) * (size_t)(e->p.bn / e->p.tn);
	size_t global = (m / (size_t)e->p.bm) * (n / (size_t)e->p.bn) * nt;
	cl_event ev;
	CL_CHECK(clEnqueueNDRangeKernel(e->x->queue, e->gemm, 1, NULL, &global, &nt, nwait,
	    nwait ? wait : NULL, &ev));
	return ev;
}
