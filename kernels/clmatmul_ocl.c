/* clmatmul_ocl.c: the OpenCL side of clmatmul(1): kernel parameters per device class,
 * the program build, and the multiply itself, in core or in blocks that stream
 * panels of A and B through the device while it computes (see clmatmul.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clmatmul.h"
#include "err.h"
#include "timer.h"

extern const char clmatmul_cl[];

/* ---- kernel parameters ---- */

enum dev_class { DC_NVIDIA, DC_GPU, DC_CPU };

/* One row a device class and type, chosen by measurement on the GPU machine
 * (2026-11-22, bench/clmatmul.md has the sweep): NVIDIA float32 from a sweep at
 * N = 8192 on an H200 (128x256 tiles: 46.3 TFLOP/s; the old 128x128 row 29.9), CPUs
 * from a sweep at N = 2048 with PoCL on 16 Xeon cores (depth 128: 977 GFLOP/s, 64:
 * 891). The float64 rows and other GPUs' rows are reasoned, not measured. vn = 0 on
 * CPUs means the device's native vector width, tn twice that, bn four times tn. */
static const struct {
	enum dev_class dc;
	enum dtype dt;
	struct cm_params p;
} table[] = {
	/*                    bm   bn  bk  tm  tn  vm  vn  lw  pm  pn  gm  ku  staging  regs */
	{DC_NVIDIA, DT_F32, {128, 256, 16,  8, 16,  4,  4,  4,  1, 16,  8, 16, CM_LOCAL,  0}},
	{DC_NVIDIA, DT_F64, { 64,  64, 16,  4,  4,  2,  2,  2,  4,  8,  8, 16, CM_LOCAL,  0}},
	{DC_GPU,    DT_F32, { 64,  64, 16,  4,  4,  4,  4,  4,  4,  8,  8, 16, CM_LOCAL,  0}},
	{DC_GPU,    DT_F64, { 64,  64, 16,  4,  4,  2,  2,  2,  4,  8,  8, 16, CM_LOCAL,  0}},
	{DC_CPU,    DT_F32, { 48,  64, 128, 6, 16,  1,  0,  4,  1,  4,  4,  8, CM_DIRECT, 0}},
	{DC_CPU,    DT_F64, { 48,  32, 128, 6,  8,  1,  0,  4,  1,  4,  4,  8, CM_DIRECT, 0}},
};

/* --precision tf32 (NVIDIA only): gemm_tf32, whose work-item block is its share of a
 * warp's MMA tiles (8 x 16: 256 work-items, eight warps, cover the 128 x 256 tile).
 * The rows of its local slices are padded by TF32_PAD (conflict-free fragment reads);
 * slices of 8 keep both buffers small. Chosen by a sweep on an H200 at N = 8192:
 * 93.8 TFLOP/s, against 52.3 for 128 x 128 tiles, 8 x 8 items and slices of 16. */
static const struct cm_params tf32_params =
	{128, 256,  8,  8, 16,  4,  4,  4,  1, 16,  8, 16, CM_LOCAL,  0};
enum { TF32_PAD = 8 };

/* A device buffer of the multiply's pipeline, with what it holds and the events that
 * order its reuse. */
struct slot {
	cl_mem buf;
	cl_mem packed;		/* A and B for the direct kernel: buf packed */
	void *stage;		/* host copy for packed transfers */
	long key;		/* which panel it holds; -1: none */
	int last;		/* the step that used it last */
	cl_event ready;		/* its upload (for a C slot: its C0 upload) */
	cl_event used;		/* the last kernel that read or wrote it */
	cl_event read;		/* C: the read-back of its block */
	/* C with packed transfers: the block to copy out of stage once read is done */
	int pending;
	size_t r0, c0, rows, cols, pitch;
};

struct cm_engine {
	struct clx *x;
	struct cm_options o;
	struct cm_params p;
	enum dev_class dc;
	size_t esize;
	char pstr[256];
	cl_program prog;
	cl_kernel gemm, fill, pack_a, pack_b;
	cl_command_queue qh, qd;	/* host-to-device and device-to-host; x->queue computes */
	int rect;			/* transfers through the Rect calls */
	size_t budget;
	/* -v: the profiled events of a multiply, summed into phases at its end */
	cl_event *ev;
	const char **ev_phase;
	size_t nev, cap_ev;
};

static int
is_pow2_le16(int v)
{
	return v == 1 || v == 2 || v == 4 || v == 8 || v == 16;
}

/* Why p cannot work on this device, or NULL. Mirrors the #error checks in clmatmul.cl. */
static const char *
params_problem(const struct cm_params *p, const struct clx *x, size_t esize, int tf32)
{
	static char why[160];
	if (p->bm < 1 || p->bn < 1 || p->bk < 1 || p->tm < 1 || p->tn < 1 || p->pm < 1 ||
	    p->pn < 1 || p->gm < 1 || p->ku < 1)
		return "every size must be positive";
	if (tf32 && p->staging != CM_LOCAL)
		return "--precision tf32 stages slices in local memory (--staging local)";
	if (tf32 && (p->tm % 2 || p->tn % 2 || p->bm % (8 * p->tm) || p->bn % (4 * p->tn) ||
	    p->bk % 8))
		return "--precision tf32 needs an even item R x C, a tile that is a multiple of "
		    "8R x 4C (a warp's MMA tiles) and a depth that is a multiple of 8";
	if (tf32 && p->lw > TF32_PAD)
		return "--precision tf32 loads vectors of at most 8 (its local rows are padded by 8)";
	if (!is_pow2_le16(p->vm) || !is_pow2_le16(p->vn) || !is_pow2_le16(p->lw))
		return "vector widths must be 1, 2, 4, 8 or 16";
	if (p->tm % p->vm || p->tn % p->vn)
		return "the item must be a multiple of the vector widths";
	if (p->bm % p->tm || p->bn % p->tn)
		return "the tile must be a multiple of the item";
	long ntm = p->bm / p->tm, ntn = p->bn / p->tn, nt = ntm * ntn;
	if (p->staging == CM_LOCAL) {
		if (p->bk % p->lw || p->bm % p->lw || p->bn % p->lw)
			return "the tile and its depth must be multiples of the load vector width";
		if ((long)p->bm * p->bk / p->lw % nt || (long)p->bn * p->bk / p->lw % nt ||
		    (long)p->bm * p->bk / p->lw < nt || (long)p->bn * p->bk / p->lw < nt)
			return "a slice of the tile must divide evenly into vector loads over the "
			    "work-group";
	}
	if (ntn % p->pn || ntm % p->pm || nt % ((long)p->pm * p->pn))
		return "the patch must divide the work-items of the tile";
	if ((size_t)nt > x->max_wg) {
		snprintf(why, sizeof why, "%ld work-items a work-group, the device allows %zu",
		    nt, x->max_wg);
		return why;
	}
	size_t pad = tf32 ? TF32_PAD : 0;
	size_t local = 2 * (size_t)p->bk * (size_t)(p->bm + p->bn + 2 * pad) * esize;
	if (p->staging == CM_LOCAL && local > x->local_mem) {
		snprintf(why, sizeof why, "%zu bytes of local memory, the device has %llu", local,
		    (unsigned long long)x->local_mem);
		return why;
	}
	return NULL;
}

static void
params_str(struct cm_engine *e)
{
	const struct cm_params *p = &e->p;
	snprintf(e->pstr, sizeof e->pstr, "tile=%dx%d tile-k=%d item=%dx%d vector=%dx%d "
	    "load-vector=%d patch=%dx%d band=%d unroll=%d staging=%s max-regs=%d", p->bm, p->bn,
	    p->bk, p->tm, p->tn, p->vm, p->vn, p->lw, p->pm, p->pn, p->gm, p->ku,
	    p->staging == CM_DIRECT ? "direct" : "local", p->regs);
	if (e->o.tf32) {
		size_t n = strlen(e->pstr);
		snprintf(e->pstr + n, sizeof e->pstr - n, " precision=tf32");
	}
}

static void
choose_params(struct cm_engine *e)
{
	const struct clx *x = e->x;
	e->dc = x->vendor == CLX_NVIDIA && x->is_gpu ? DC_NVIDIA : x->is_gpu ? DC_GPU : DC_CPU;
	for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
		if (table[i].dc == e->dc && table[i].dt == e->o.dt)
			e->p = table[i].p;
	if (e->o.tf32)
		e->p = tf32_params;
	if (e->p.vn == 0) {
		cl_uint w = 0;
		clGetDeviceInfo(x->device, e->o.dt == DT_F64 ?
		    CL_DEVICE_NATIVE_VECTOR_WIDTH_DOUBLE : CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT,
		    sizeof w, &w, NULL);
		e->p.vn = is_pow2_le16((int)w) && w >= 2 ? (int)w : 4;
		e->p.tn = 2 * e->p.vn;
		e->p.bn = 4 * e->p.tn;
	}
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
	    e->p.bm % e->p.lw || e->p.bn % e->p.lw || (long)e->p.bm * e->p.bk / e->p.lw <
	    (long)(e->p.bm / MAX(e->p.tm, 1)) * (e->p.bn / MAX(e->p.tn, 1))))
		e->p.lw /= 2;
	const char *why = params_problem(&e->p, x, e->esize, e->o.tf32);
	if (why != NULL) {
		params_str(e);
		if (memcmp(f, &(struct cm_params){0}, sizeof *f) != 0)
			usage_error("kernel parameters %s do not work: %s", e->pstr, why);
		die("no kernel parameters for %s: %s", x->name, why);
	}
	params_str(e);
}

/* ---- rectangle transfers: whether this platform gets them right ---- */

/* Writes a 5 x 7 rectangle from inside a host array into the middle of a buffer with
 * another pitch and reads one back; the paper saw a driver copy contiguous bytes
 * instead. Any difference, or an error, selects packed copies. */
static int
rect_works(struct cm_engine *e)
{
	enum { HW = 11, HH = 9, BW = 16, BH = 12 };
	float host[HH * HW], dev[BH * BW], back[HH * HW];
	cl_int err;
	int ok = 1;

	for (int i = 0; i < HH * HW; i++)
		host[i] = (float)(i + 1);
	for (int i = 0; i < BH * BW; i++)
		dev[i] = -1.0f;
	cl_mem b = clCreateBuffer(e->x->ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
	    sizeof dev, dev, &err);
	if (err != CL_SUCCESS)
		return 0;
	size_t bo[3] = {3 * sizeof(float), 2, 0}, ho[3] = {1 * sizeof(float), 2, 0};
	size_t region[3] = {7 * sizeof(float), 5, 1};
	err = clEnqueueWriteBufferRect(e->qh, b, CL_TRUE, bo, ho, region, BW * sizeof(float), 0,
	    HW * sizeof(float), 0, host, 0, NULL, NULL);
	if (err == CL_SUCCESS)
		err = clEnqueueReadBuffer(e->qh, b, CL_TRUE, 0, sizeof dev, dev, 0, NULL, NULL);
	for (int r = 0; ok && err == CL_SUCCESS && r < BH; r++)
		for (int c = 0; c < BW; c++) {
			int in = r >= 2 && r < 7 && c >= 3 && c < 10;
			float want = in ? host[(r - 2 + 2) * HW + (c - 3 + 1)] : -1.0f;
			if (dev[r * BW + c] != want)
				ok = 0;
		}
	for (int i = 0; i < HH * HW; i++)
		back[i] = 0;
	if (ok && err == CL_SUCCESS)
		err = clEnqueueReadBufferRect(e->qh, b, CL_TRUE, bo, ho, region, BW * sizeof(float),
		    0, HW * sizeof(float), 0, back, 0, NULL, NULL);
	for (int r = 0; ok && err == CL_SUCCESS && r < HH; r++)
		for (int c = 0; c < HW; c++) {
			int in = r >= 2 && r < 7 && c >= 1 && c < 8;
			if (back[r * HW + c] != (in ? host[r * HW + c] : 0.0f))
				ok = 0;
		}
	clReleaseMemObject(b);
	return ok && err == CL_SUCCESS;
}

/* ---- set-up ---- */

#ifndef CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV
#define CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV 0x4000	/* cl_nv_device_attribute_query */
#define CL_DEVICE_COMPUTE_CAPABILITY_MINOR_NV 0x4001
#endif

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
	cl_uint major = 0, minor = 0;
	if (clGetDeviceInfo(x->device, CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV, sizeof major,
	    &major, NULL) == CL_SUCCESS && clGetDeviceInfo(x->device,
	    CL_DEVICE_COMPUTE_CAPABILITY_MINOR_NV, sizeof minor, &minor, NULL) == CL_SUCCESS &&
	    major < 8)
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
	vlog("kernel parameters: %s", e->pstr);
	if (o->tf32)
		vlog("precision: tf32: kernel gemm_tf32, mma.sync m16n8k8 on the tensor cores, "
		    "inputs rounded to 10-bit mantissas, sums in float32");

	char opts[1024];
	const struct cm_params *p = &e->p;
	cl_device_fp_config fp = 0;
	CL_CHECK(clGetDeviceInfo(x->device, o->dt == DT_F64 ? CL_DEVICE_DOUBLE_FP_CONFIG :
	    CL_DEVICE_SINGLE_FP_CONFIG, sizeof fp, &fp, NULL));
	int n = snprintf(opts, sizeof opts, "-D USE_DOUBLE=%d -D TRANS_A=%d -D TRANS_B=%d "
	    "-D BM=%d -D BN=%d -D BK=%d -D TM=%d -D TN=%d -D VM=%d -D VN=%d -D LW=%d -D PM=%d "
	    "-D PN=%d -D GM=%d -D KU=%d -D USE_LOCAL=%d -D USE_FMA=%d", o->dt == DT_F64, o->ta,
	    o->tb, p->bm, p->bn, p->bk, p->tm, p->tn, p->vm, p->vn, p->lw, p->pm, p->pn, p->gm,
	    p->ku, p->staging == CM_LOCAL, (fp & CL_FP_FMA) != 0);
	if (o->tf32)
		n += snprintf(opts + n, sizeof opts - (size_t)n, " -D USE_TF32=1 -D PAD=%d",
		    TF32_PAD);
	if (x->vendor == CLX_NVIDIA) {
		if (p->regs > 0)
			n += snprintf(opts + n, sizeof opts - (size_t)n, " -cl-nv-maxrregcount=%d", p->regs);
		if (verbose)
			snprintf(opts + n, sizeof opts - (size_t)n, " -cl-nv-verbose");
	}
	double t0 = now_sec();
	e->prog = clx_build(x, "clmatmul", clmatmul_cl, opts);
	e->gemm = clx_kernel(e->prog, o->tf32 ? "gemm_tf32" : "gemm");
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
		e->rect = 1;
		break;
	default:
		t0 = now_sec();
		e->rect = rect_works(e);
		phase_add("check rectangles", now_sec() - t0);
		vlog("rectangle transfers: %s", e->rect ? "correct, used" :
		    "wrong on this platform, packed copies used");
	}
	/* What the device may hold: the option, else most of its memory. */
	e->budget = o->max_device_mem ? o->max_device_mem : (size_t)(x->global_mem / 10 * 9);
	return e;
}

void
cm_close(struct cm_engine *e)
{
	if (e == NULL)
		return;
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

/* ---- the plan: block sizes under the memory bound ---- */

struct plan {
	size_t bm, bn, bk;	/* block extents (multiples of the tile) */
	size_t nbm, nbn, nbk;
	int slots;		/* 1: in core; 2: double-buffered blocks */
	int c0slot;		/* a separate buffer for C0 (beta != 0 with K split) */
};

static size_t
round_up(size_t v, size_t m)
{
	return CEIL_DIV(v, m) * m;
}

/* Bytes the plan keeps on the device; sets *biggest to its largest buffer. The direct
 * kernel's packed copies double A and B. */
static size_t
footprint(const struct cm_engine *e, const struct plan *pl, size_t *biggest)
{
	size_t es = e->esize, ab = e->p.staging == CM_DIRECT ? 2 : 1;
	size_t a = pl->bm * pl->bk * es, b = pl->bk * pl->bn * es, c = pl->bm * pl->bn * es;
	*biggest = MAX(MAX(a, b), c);
	return pl->slots * (ab * (a + b) + c * (1 + (size_t)pl->c0slot));
}

static int
plan_fits(const struct cm_engine *e, const struct plan *pl)
{
	size_t big, f = footprint(e, pl, &big);
	return f <= e->budget && big <= e->x->max_alloc;
}

static void
make_plan(const struct cm_engine *e, size_t m, size_t n, size_t k, int beta, struct plan *pl)
{
	const size_t BMp = (size_t)e->p.bm, BNp = (size_t)e->p.bn, BKp = (size_t)e->p.bk;
	const size_t mp = round_up(m, BMp), np = round_up(n, BNp), kp = round_up(k, BKp);

	*pl = (struct plan){mp, np, kp, 1, 1, 1, 1, 0};
	if (!plan_fits(e, pl)) {
		/* Blocks of C as large as a share of the bound allows (fewer blocks: less
		 * traffic), the panels of A and B in the rest; the share shrinks until the
		 * panels are deep enough for a kernel to pay for reading and writing C. */
		pl->slots = 2;
		pl->c0slot = beta;
		const size_t es = e->esize, ce = es * (1 + (size_t)beta);
		const size_t ab = e->p.staging == CM_DIRECT ? 2 : 1;
		const size_t kwant = MIN(kp, MAX(BKp, 1024 / BKp * BKp));
		struct plan best = {0};
		for (size_t share = e->budget / 2;; share /= 2) {
			while ((2 * pl->bm * pl->bn * ce > share ||
			    pl->bm * pl->bn * es > e->x->max_alloc) && (pl->bm > BMp || pl->bn > BNp)) {
				if (pl->bm >= pl->bn && pl->bm > BMp)
					pl->bm = round_up(pl->bm / 2, BMp);
				else
					pl->bn = round_up(pl->bn / 2, BNp);
			}
			size_t cbytes = 2 * pl->bm * pl->bn * ce;
			size_t left = e->budget > cbytes ? e->budget - cbytes : 0;
			size_t bk = left / (2 * (pl->bm + pl->bn) * es * ab);
			bk = MIN(bk, e->x->max_alloc / (MAX(pl->bm, pl->bn) * es));
			bk = MIN(bk / BKp * BKp, kp);
			if (bk >= BKp && pl->bm * pl->bn * bk > best.bm * best.bn * best.bk) {
				best = *pl;
				best.bk = bk;
			}
			if (bk >= kwant || (pl->bm == BMp && pl->bn == BNp))
				break;
		}
		if (best.bk == 0)
			die("--max-device-mem %zu is too small for one %zux%zu tile of C and its "
			    "panels (%zu bytes needed)", e->budget, BMp, BNp,
			    2 * (BMp * BNp * ce + (BMp + BNp) * BKp * es * ab));
		*pl = best;
	}
	/* Even blocks: as many as needed, as equal as the tiles allow. */
	pl->nbm = CEIL_DIV(mp, pl->bm);
	pl->bm = round_up(CEIL_DIV(mp, pl->nbm), BMp);
	pl->nbn = CEIL_DIV(np, pl->bn);
	pl->bn = round_up(CEIL_DIV(np, pl->nbn), BNp);
	pl->nbk = CEIL_DIV(kp, pl->bk);
	pl->bk = round_up(CEIL_DIV(kp, pl->nbk), BKp);
	pl->c0slot = beta && pl->nbk > 1;
}

/* ---- transfers and events ---- */

static void
ev_set(cl_event *dst, cl_event src)
{
	if (src)
		clRetainEvent(src);
	if (*dst)
		clReleaseEvent(*dst);
	*dst = src;
}

/* Keeps ev (when -v asks for phase times) and releases the caller's reference. */
static void
ev_log(struct cm_engine *e, const char *phase, cl_event ev)
{
	if (ev == NULL)
		return;
	if (!verbose) {
		clReleaseEvent(ev);
		return;
	}
	if (e->nev == e->cap_ev) {
		e->cap_ev = e->cap_ev ? 2 * e->cap_ev : 64;
		e->ev = xreallocarray(e->ev, e->cap_ev, sizeof *e->ev);
		e->ev_phase = xreallocarray(e->ev_phase, e->cap_ev, sizeof *e->ev_phase);
	}
	e->ev[e->nev] = ev;
	e->ev_phase[e->nev++] = phase;
}

/* Adds the device time of the logged events to their phases (when the queues profile). */
static void
ev_report(struct cm_engine *e)
{
	for (size_t i = 0; i < e->nev; i++) {
		cl_ulong t0 = 0, t1 = 0;
		if (clGetEventProfilingInfo(e->ev[i], CL_PROFILING_COMMAND_START, sizeof t0, &t0,
		    NULL) == CL_SUCCESS && clGetEventProfilingInfo(e->ev[i],
		    CL_PROFILING_COMMAND_END, sizeof t1, &t1, NULL) == CL_SUCCESS && t1 >= t0)
			phase_add(e->ev_phase[i], 1e-9 * (double)(t1 - t0));
		clReleaseEvent(e->ev[i]);
	}
	e->nev = 0;
}

/* Host to device: rows [r0, r0+rows) x columns [c0, c0+cols) of a host matrix with
 * hcols columns into a buffer of prows x pitch elements, zeros around the data, after
 * the event wait (may be NULL). Returns the event of the upload. */
static cl_event
upload(struct cm_engine *e, struct slot *s, const void *host, size_t hcols, size_t r0,
    size_t c0, size_t rows, size_t cols, size_t prows, size_t pitch, cl_event wait)
{
	const size_t es = e->esize;
	cl_event ev = NULL;
	cl_uint nw = wait ? 1 : 0;

	if (!e->rect) {
		/* The staging copy may still be in flight from this slot's last upload. */
		if (s->ready)
			CL_CHECK(clWaitForEvents(1, &s->ready));
		char *dst = s->stage;
		const char *src = (const char *)host + (r0 * hcols + c0) * es;
		double t0 = now_sec();
		#pragma omp parallel for schedule(static) if (prows * pitch > (1 << 16))
		for (size_t r = 0; r < prows; r++) {
			size_t n = r < rows ? cols : 0;
			if (n)
				memcpy(dst + r * pitch * es, src + r * hcols * es, n * es);
			memset(dst + (r * pitch + n) * es, 0, (pitch - n) * es);
		}
		phase_add("pack", now_sec() - t0);
		CL_CHECK(clEnqueueWriteBuffer(e->qh, s->buf, CL_FALSE, 0, prows * pitch * es, dst,
		    nw, wait ? &wait : NULL, &ev));
		ev_set(&s->ready, ev);
		return ev;
	}
	if (rows < prows || cols < pitch) {
		static const cl_uint zero = 0;
		cl_event filled;
		CL_CHECK(clEnqueueFillBuffer(e->qh, s->buf, &zero, sizeof zero, 0,
		    prows * pitch * es, nw, wait ? &wait : NULL, &filled));
		ev_log(e, "fill", filled);
		nw = 0;	/* the queue is in order */
	}
	size_t bo[3] = {0, 0, 0}, ho[3] = {c0 * es, r0, 0}, region[3] = {cols * es, rows, 1};
	CL_CHECK(clEnqueueWriteBufferRect(e->qh, s->buf, CL_FALSE, bo, ho, region, pitch * es, 0,
	    hcols * es, 0, host, nw, nw ? &wait : NULL, &ev));
	ev_set(&s->ready, ev);
	return ev;
}

/* The direct kernel's packing of an op(A) (which = 0) or op(B) (1) panel of extent ci
 * along C and ck along K, stored with pitch ld, from src into dst, after wait. */
static cl_event
pack(struct cm_engine *e, int which, cl_mem src, size_t ld, cl_mem dst, size_t ci, size_t ck,
    cl_uint nwait, const cl_event *wait)
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
	while (global[0] % local[0])
		local[0] /= 2;
	cl_event ev;
	CL_CHECK(clEnqueueNDRangeKernel(e->x->queue, kn, 2, NULL, global, local, nwait,
	    nwait ? wait : NULL, &ev));
	return ev;
}

/* A panel of a host matrix with hcols columns whose rows [i0, i0+ni) (columns, when
 * trans) lie along a dimension of C and columns [k0, k0+nk) (rows) along K: A as
 * stored, or B transposed, has trans = 0.
 * The device panel keeps the stored orientation, padded to pi x pk; *ld is its pitch. */
static void
upload_panel(struct cm_engine *e, struct slot *s, int which, const void *host, size_t hcols,
    int trans, size_t i0, size_t ni, size_t pi, size_t k0, size_t nk, size_t pk, size_t *ld)
{
	cl_event ev;
	*ld = trans ? pi : pk;
	if (!trans)
		ev = upload(e, s, host, hcols, i0, k0, ni, nk, pi, pk, s->used);
	else
		ev = upload(e, s, host, hcols, k0, i0, nk, ni, pk, pi, s->used);
	if (s->packed) {
		cl_event p = pack(e, which, s->buf, *ld, s->packed, pi, pk, 1, &ev);
		ev_set(&s->ready, p);
		ev_log(e, "pack", p);
	}
	ev_log(e, PH_H2D, ev);
}

/* Copies a packed read-back of C into the user's matrix (n columns). */
static void
unpack(struct cm_engine *e, struct slot *s, void *c, size_t n)
{
	if (!s->pending)
		return;
	CL_CHECK(clWaitForEvents(1, &s->read));
	const size_t es = e->esize;
	double t0 = now_sec();
	#pragma omp parallel for schedule(static) if (s->rows * s->cols > (1 << 16))
	for (size_t r = 0; r < s->rows; r++)
		memcpy((char *)c + ((s->r0 + r) * n + s->c0) * es,
		    (const char *)s->stage + r * s->pitch * es, s->cols * es);
	phase_add("pack", now_sec() - t0);
	s->pending = 0;
}

static void
slot_alloc(struct cm_engine *e, struct slot *s, size_t elems, int packed)
{
	memset(s, 0, sizeof *s);
	s->key = -1;
	s->last = -1;
	s->buf = CL_CREATE(clCreateBuffer(e->x->ctx, CL_MEM_READ_WRITE, elems * e->esize, NULL,
	    &cl_err_));
	if (packed && e->p.staging == CM_DIRECT)
		s->packed = CL_CREATE(clCreateBuffer(e->x->ctx, CL_MEM_READ_WRITE,
		    elems * e->esize, NULL, &cl_err_));
	if (!e->rect)
		s->stage = xmallocarray(elems, e->esize);
}

static void
slot_free(struct slot *s)
{
	if (s->buf)
		clReleaseMemObject(s->buf);
	if (s->packed)
		clReleaseMemObject(s->packed);
	ev_set(&s->ready, NULL);
	ev_set(&s->used, NULL);
	ev_set(&s->read, NULL);
	free(s->stage);
}

/* The slot that holds panel key, else the one used least recently (whose kernel is
 * the most likely to be done, so its upload overlaps the latest kernel). */
static struct slot *
pick_slot(struct slot *s, int ns, long key)
{
	if (ns == 1 || s[0].key == key)
		return &s[0];
	if (s[1].key == key)
		return &s[1];
	return s[0].last <= s[1].last ? &s[0] : &s[1];
}

static void
set_gemm_args(struct cm_engine *e, size_t m, size_t n, size_t k, cl_mem a, size_t lda,
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
static cl_event
launch_gemm(struct cm_engine *e, size_t m, size_t n, cl_uint nwait, const cl_event *wait)
{
	size_t nt = (size_t)(e->p.bm / e->p.tm) * (size_t)(e->p.bn / e->p.tn);
	size_t global = (m / (size_t)e->p.bm) * (n / (size_t)e->p.bn) * nt;
	cl_event ev;
	CL_CHECK(clEnqueueNDRangeKernel(e->x->queue, e->gemm, 1, NULL, &global, &nt, nwait,
	    nwait ? wait : NULL, &ev));
	return ev;
}

/* ---- the multiply ---- */

enum { ACC_IN = 1, RAW_OUT = 2 };	/* gemm's modes, as in clmatmul.cl */

/* Blocks of C in row order; for each, the K panels in order, the first starting the
 * sums (plus beta C0) and each later one continuing them (ACC_IN), all but the last
 * storing raw sums (RAW_OUT). Uploads go on one queue, kernels on another, read-backs
 * on a third, ordered by events, so that with two slots of each kind the next panels
 * travel while the current ones are multiplied. A panel still in a slot is reused. */
void
cm_multiply(struct cm_engine *e, const struct cm_problem *pr)
{
	const size_t M = pr->m, N = pr->n, K = pr->k, es = e->esize;
	const size_t BMp = (size_t)e->p.bm, BNp = (size_t)e->p.bn, BKp = (size_t)e->p.bk;
	const int beta = pr->beta != 0;
	struct plan pl;
	size_t big;
	make_plan(e, M, N, K, beta, &pl);
	vlog("plan: %zu x %zu block%s of C of %zu x %zu, K in %zu panel%s of %zu, %s "
	    "transfers, %zu bytes on the device", pl.nbm, pl.nbn, pl.nbm * pl.nbn > 1 ? "s" : "",
	    pl.bm, pl.bn, pl.nbk, pl.nbk > 1 ? "s" : "", pl.bk, e->rect ? "rectangle" : "packed",
	    footprint(e, &pl, &big));

	struct slot sa[2], sb[2], sc[2], s0[2];
	const int ns = pl.slots;
	for (int i = 0; i < ns; i++) {
		slot_alloc(e, &sa[i], pl.bm * pl.bk, 1);
		slot_alloc(e, &sb[i], pl.bk * pl.bn, 1);
		slot_alloc(e, &sc[i], pl.bm * pl.bn, 0);
		if (pl.c0slot)
			slot_alloc(e, &s0[i], pl.bm * pl.bn, 0);
	}
	const size_t acols = e->o.ta ? M : K, bcols = e->o.tb ? K : N;

	double t0 = now_sec();
	int step = 0, block = 0;
	for (size_t bi = 0; bi < pl.nbm; bi++) {
		const size_t m0 = bi * pl.bm, mr = MIN(pl.bm, M - m0), mp = round_up(mr, BMp);
		for (size_t bj = 0; bj < pl.nbn; bj++, block++) {
			const size_t n0 = bj * pl.bn, nr = MIN(pl.bn, N - n0), np = round_up(nr, BNp);
			struct slot *c = &sc[block % ns], *c0 = pl.c0slot ? &s0[block % ns] : c;
			cl_event first[2];
			cl_uint nfirst = 0;

			/* The slot's previous block goes home before the slot is reused. */
			unpack(e, c, pr->c, N);
			if (c->read)
				first[nfirst++] = c->read;
			if (beta) {
				cl_event up = upload(e, c0, pr->c0, N, m0, n0, mr, nr, mp, np,
				    c0 == c ? c->read : c0->used);
				ev_log(e, PH_H2D, up);
				first[nfirst++] = c0->ready;
			}
			for (size_t bp = 0; bp < pl.nbk; bp++, step++) {
				const size_t k0 = bp * pl.bk, kr = MIN(pl.bk, K - k0),
				    kp = round_up(kr, BKp);
				const long akey = (long)(bi * pl.nbk + bp), bkey = (long)(bp * pl.nbn + bj);
				struct slot *a = pick_slot(sa, ns, akey), *b = pick_slot(sb, ns, bkey);
				size_t lda = e->o.ta ? mp : kp, ldb = e->o.tb ? kp : np;

				if (a->key != akey) {
					upload_panel(e, a, 0, pr->a, acols, e->o.ta, m0, mr, mp, k0, kr,
					    kp, &lda);
					a->key = akey;
				}
				if (b->key != bkey) {
					upload_panel(e, b, 1, pr->b, bcols, !e->o.tb, n0, nr, np, k0, kr,
					    kp, &ldb);
					b->key = bkey;
				}
				a->last = b->last = step;
				CL_CHECK(clFlush(e->qh));

				int mode = (bp > 0 ? ACC_IN : 0) | (bp + 1 < pl.nbk ? RAW_OUT : 0);
				set_gemm_args(e, mp, np, kp, a->packed ? a->packed : a->buf, lda,
				    b->packed ? b->packed : b->buf, ldb, c->buf, np, c0->buf, np,
				    pr->alpha, pr->beta, mode);
				cl_event wait[4] = {a->ready, b->ready}, k;
				cl_uint nw = 2;
				for (cl_uint i = 0; bp == 0 && i < nfirst; i++)
					wait[nw++] = first[i];
				k = launch_gemm(e, mp, np, nw, wait);
				CL_CHECK(clFlush(e->x->queue));
				ev_set(&a->used, k);
				ev_set(&b->used, k);
				ev_set(&c->used, k);
				ev_set(&c0->used, k);

				if (bp + 1 == pl.nbk) {
					cl_event rd;
					if (e->rect) {
						size_t bo[3] = {0, 0, 0}, ho[3] = {n0 * es, m0, 0};
						size_t region[3] = {nr * es, mr, 1};
						CL_CHECK(clEnqueueReadBufferRect(e->qd, c->buf, CL_FALSE, bo, ho,
						    region, np * es, 0, N * es, 0, pr->c, 1, &k, &rd));
					} else {
						CL_CHECK(clEnqueueReadBuffer(e->qd, c->buf, CL_FALSE, 0,
						    mr * np * es, c->stage, 1, &k, &rd));
						c->pending = 1;
						c->r0 = m0;
						c->c0 = n0;
						c->rows = mr;
						c->cols = nr;
						c->pitch = np;
					}
					CL_CHECK(clFlush(e->qd));
					ev_set(&c->read, rd);
					ev_log(e, PH_D2H, rd);
				}
				ev_log(e, PH_COMPUTE, k);
			}
		}
	}
	CL_CHECK(clFinish(e->qh));
	CL_CHECK(clFinish(e->x->queue));
	CL_CHECK(clFinish(e->qd));
	for (int i = 0; i < ns; i++)
		unpack(e, &sc[i], pr->c, N);
	phase_add("multiply (wall)", now_sec() - t0);
	ev_report(e);
	for (int i = 0; i < ns; i++) {
		slot_free(&sa[i]);
		slot_free(&sb[i]);
		slot_free(&sc[i]);
		if (pl.c0slot)
			slot_free(&s0[i]);
	}
}

/* ---- the benchmark ---- */

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
cm_bench(struct cm_engine *e, const struct cm_problem *pr, uint64_t seed, int reps,
    struct cm_bench_result *res)
{
	double *ms = xmallocarray((size_t)reps, sizeof *ms);
	memset(res, 0, sizeof *res);
	res->reps = reps;

	if (pr->a != NULL) {
		/* From host memory, in blocks when the bound asks for them: the whole
		 * path a user's matrices take, transfers included. */
		struct plan pl;
		make_plan(e, pr->m, pr->n, pr->k, pr->beta != 0, &pl);
		res->blocks = (int)(pl.nbm * pl.nbn);
		cm_multiply(e, pr);	/* warm-up */
		for (int r = 0; r < reps; r++) {
			double t0 = now_sec();
			cm_multiply(e, pr);
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
		if (e->p.staging == CM_DIRECT) {
			ap = CL_CREATE(clCreateBuffer(ctx, CL_MEM_READ_WRITE, mp * kp * es, NULL,
			    &cl_err_));
			bp = CL_CREATE(clCreateBuffer(ctx, CL_MEM_READ_WRITE, kp * np * es, NULL,
			    &cl_err_));
		}
		for (int r = -1; r < reps; r++) {	/* -1: the warm-up */
			t0 = now_sec();
			if (ap != a) {	/* packing is part of the direct kernel's multiply */
				ev_log(e, "pack", pack(e, 0, a, lda, ap, mp, kp, 0, NULL));
				ev_log(e, "pack", pack(e, 1, b, ldb, bp, np, kp, 0, NULL));
			}
			set_gemm_args(e, mp, np, kp, ap, lda, bp, ldb, c, np, c0, np, pr->alpha,
			    pr->beta, 0);
			cl_event k = launch_gemm(e, mp, np, 0, NULL);
			CL_CHECK(clWaitForEvents(1, &k));
			double t = now_sec() - t0;
			if (r >= 0)
				ms[r] = 1e3 * t;
			ev_log(e, PH_COMPUTE, k);
		}
		ev_report(e);
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
