/* clkmeans_dev.c: Lloyd's k-means on an OpenCL device (see clkmeans.h), driving the
 * kernels of kernels/clkmeans_*.cl (the parts clkmeans_defs.cl lists).
 *
 * The rows stay in device memory when they fit (--max-device-mem), else they are
 * streamed through in batches on every pass; labels and distances (a few bytes a row)
 * stay on the device. An iteration is: assign (+ exact for the rows near a tie) and
 * update for every batch, finalize, scalars, then one read of a few scalars (moved
 * rows, empty clusters, shift, inertia) for the convergence test. Empty clusters are
 * relocated on the host (rare): the rows farthest from their centroids, as
 * scikit-learn does it.
 *
 * This file holds the set-up, the helpers the others share, Lloyd's iterations and
 * the whole run on the devices (km_dev_run, which kernels/clkmeans_run.c calls once it
 * has chosen OpenCL); clkmeans_dev.h names the files that hold the rest. */
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clkmeans_dev.h"
#include "clkmeans_run.h"
#include "clkmeans_tune.h"
#include "ranks.h"
#include "rng.h"
#include "progress.h"
#include "timer.h"
#include "tune.h"

extern const char clkmeans_cl[];
extern const char *const clkmeans_cl_files[];

/* ---- small helpers ---- */

cl_mem
km_buf(struct km *m, size_t bytes)
{
	return CL_CREATE(clCreateBuffer(m->x.ctx, CL_MEM_READ_WRITE, MAX(bytes, (size_t)16), NULL,
	    &cl_err_));
}

/* Sets a kernel's arguments from (size, pointer) pairs; n of them. */
void
km_args(cl_kernel k, int n, ...)
{
	va_list ap;
	va_start(ap, n);
	for (int i = 0; i < n; i++) {
		size_t sz = va_arg(ap, size_t);
		const void *p = va_arg(ap, const void *);
		CL_CHECK(clSetKernelArg(k, (cl_uint)i, sz, p));
	}
	va_end(ap);
}

static const char *const kernel_names[8] = {"assign", "exact", "update", "finalize",
	"scalars", "rowdist", "kpp", "assign_f32"};

/* Adds the finished kernels' times (CLKMEANS_PROFILE) to their totals. */
static void
prof_collect(struct km *m)
{
	if (m->npend == 0)
		return;
	CL_CHECK(clFinish(m->x.queue));
	for (int i = 0; i < m->npend; i++) {
		m->kernel_ms[m->pend[i].kernel] += clx_event_ms(m->pend[i].ev);
		clReleaseEvent(m->pend[i].ev);
	}
	m->npend = 0;
}

void
km_launch(struct km *m, cl_kernel k, size_t global, size_t local)
{
	cl_event ev = NULL;
	CL_CHECK(clEnqueueNDRangeKernel(m->x.queue, k, 1, NULL, &global, local ? &local : NULL, 0,
	    NULL, m->prof ? &ev : NULL));
	if (!m->prof)
		return;
	cl_kernel all[8] = {m->assign, m->exact, m->update, m->finalize, m->scalars, m->rowdist,
	    m->kpp, m->assign_f32};
	int i = 0;
	while (i < 7 && all[i] != k)
		i++;
	if (m->npend == (int)(sizeof m->pend / sizeof m->pend[0]))
		prof_collect(m);
	m->pend[m->npend].ev = ev;
	m->pend[m->npend++].kernel = i;
}

void
km_fill_zero(struct km *m, cl_mem b, size_t off, size_t bytes)
{
	if (bytes == 0)
		return;
	cl_uint zero = 0;
	CL_CHECK(clEnqueueFillBuffer(m->x.queue, b, &zero, sizeof zero, off, bytes, 0, NULL, NULL));
}

void
km_read_buf(struct km *m, cl_mem b, size_t off, size_t bytes, void *dst)
{
	if (bytes == 0)
		return;
	CL_CHECK(clEnqueueReadBuffer(m->x.queue, b, CL_TRUE, off, bytes, dst, 0, NULL, NULL));
}

void
km_write_buf(struct km *m, cl_mem b, size_t off, size_t bytes, const void *src)
{
	if (bytes == 0)
		return;
	CL_CHECK(clEnqueueWriteBuffer(m->x.queue, b, CL_TRUE, off, bytes, src, 0, NULL, NULL));
}

/* n values of the kernels' `real' type at element offset off into doubles. */
void
km_read_real(struct km *m, cl_mem b, size_t off, size_t n, double *dst)
{
	if (m->rsz == sizeof(double)) {
		km_read_buf(m, b, off * 8, n * 8, dst);
		return;
	}
	float *tmp = xmallocarray(MAX(n, (size_t)1), sizeof *tmp);
	km_read_buf(m, b, off * 4, n * 4, tmp);
	for (size_t i = 0; i < n; i++)
		dst[i] = tmp[i];
	free(tmp);
}

void
km_write_real(struct km *m, cl_mem b, size_t n, const double *src)
{
	if (m->rsz == sizeof(double)) {
		km_write_buf(m, b, 0, n * 8, src);
		return;
	}
	float *tmp = xmallocarray(MAX(n, (size_t)1), sizeof *tmp);
	for (size_t i = 0; i < n; i++)
		tmp[i] = (float)src[i];
	km_write_buf(m, b, 0, n * 4, tmp);
	free(tmp);
}

static void
read_state(struct km *m, struct state *s)
{
	unsigned char b[STATE_BYTES];
	km_read_buf(m, m->state, 0, sizeof b, b);
	prof_collect(m);
	memcpy(&s->inertia, b + 8 * SD_INERTIA, 8);
	memcpy(&s->shift, b + 8 * SD_SHIFT, 8);
	memcpy(&s->moved, b + 4 * SI_MOVED, 4);
	memcpy(&s->empty, b + 4 * SI_EMPTY, 4);
	memcpy(&s->nexact, b + 4 * SI_NEXACT, 4);
	memcpy(&s->cmax, b + 4 * SF_CMAX, 4);
}

/* ---- set-up ---- */

/* The device's row of the tuning table (clkmeans_tune.h), for this k. */
static void
tune_defaults(const struct km *m, struct tune *t)
{
	char desc[384];
	clx_describe(&m->x, desc, sizeof desc);
	const struct clkmeans_tune *row = TUNE_PICK(clkmeans_tune_table, desc);
	vlog("tuning: %s (%s)", *row->device ? row->device : "any device", row->measured);
	t->local = row->local;
	t->wg = row->wg;
	t->rg = row->rg;
	t->tmt = row->tmt, t->tnt = row->tnt;
	t->db = row->db;
	t->rmv = m->k > (size_t)row->small_k ? row->rmv : row->rmv_small;
	t->rnv = m->k > (size_t)row->small_k ? row->rnv : row->rnv_small;
	t->exact_cu = row->exact_cu;
	t->update_cu = row->update_cu;
	/* Columns a step: the widest of 16, 8, 4 that pads d by at most an eighth. */
	t->tk = 4;
	for (int tk = 16; tk > 4; tk /= 2)
		if ((CEIL_DIV(m->d, (size_t)tk) * tk - m->d) * 8 <= m->d) {
			t->tk = tk;
			break;
		}
}

/* CLKMEANS_TUNE="local=1 tmt=16 tnt=8 rmv=2 rnv=2 tk=16 a_res=1 db=1 wg=256 rg=1024
 * fp64=0 atom64=0 tf32=0 areg=0 split=0" (any subset): for tuning, and for tests of the fallbacks. */
static void
tune_env(struct tune *t)
{
	const char *env = getenv("CLKMEANS_TUNE");
	if (env == NULL || *env == '\0')
		return;
	struct { const char *name; int *v; } f[] = {
		{"tmt", &t->tmt}, {"tnt", &t->tnt}, {"rmv", &t->rmv}, {"rnv", &t->rnv},
		{"tk", &t->tk}, {"a_res", &t->a_res}, {"db", &t->db}, {"wg", &t->wg},
		{"rg", &t->rg},
		{"local", &t->local}, {"fp64", &t->fp64}, {"atom64", &t->atom64},
		{"tf32", &t->tf32}, {"areg", &t->areg}, {"split", &t->split},
	};
	char *s = xstrdup(env), *save = NULL;
	for (char *tok = strtok_r(s, " ,", &save); tok; tok = strtok_r(NULL, " ,", &save)) {
		char *eq = strchr(tok, '=');
		size_t i, nf = sizeof f / sizeof f[0];
		if (eq != NULL) {
			*eq = '\0';
			for (i = 0; i < nf && strcmp(tok, f[i].name) != 0; i++)
				;
			if (i < nf) {
				*f[i].v = atoi(eq + 1);
				continue;
			}
		}
		die("CLKMEANS_TUNE: unknown setting '%s'", tok);
	}
	free(s);
}

static void
choose_tune(struct km *m)
{
	struct tune *t = &m->t;
	tune_defaults(m, t);
	t->a_res = -1;
	t->fp64 = t->atom64 = 1;
	t->tf32 = t->areg = t->split = -1;
	tune_env(t);
	unsigned ccmaj, ccmin;
	if (t->split < 0)
		t->split = m->x.is_gpu && clx_nv_cc(&m->x, &ccmaj, &ccmin);
	m->fp64 = m->fp64 && t->fp64;
	m->atom64 = m->atom64 && t->atom64;
	m->rsz = m->fp64 ? 8 : 4;
	size_t nt = (size_t)t->tmt * t->tnt, tm = (size_t)t->tmt * t->rmv * 4;
	size_t tn = (size_t)t->tnt * t->rnv * 4;
	const char *why = km_tune_legal(t->local, t->tmt, t->tnt, t->rmv, t->rnv, t->tk, t->wg,
	    t->rg, m->x.max_wg);
	if (why != NULL)
		die("unusable kernel parameters (local=%d tmt=%d tnt=%d rmv=%d rnv=%d tk=%d wg=%d rg=%d) for %s: %s",
		    t->local, t->tmt, t->tnt, t->rmv, t->rnv, t->tk, t->wg, t->rg, m->x.name, why);
	m->dpad = CEIL_DIV(m->d, (size_t)t->tk) * t->tk;
	m->tm = tm;
	m->kpad = CEIL_DIV(m->k, tn) * tn;
	/* Local memory: the rows of a group, resident if they fit, and one centroid tile,
	 * or two (db) when those fit beside resident rows. */
	size_t budget = MIN((size_t)m->x.local_mem, (size_t)48 << 10) - 1024;
	size_t rows = m->dpad * (tm + 4) * 4, tile = (size_t)t->tk * tn * 4;
	size_t red = 3 * (size_t)t->tnt * tm * 4;
	if (!t->local)
		t->a_res = 0;
	if (t->a_res < 0)
		t->a_res = rows + tile <= budget;
	if (!t->a_res)
		t->db = 0;
	if (t->db < 0)
		t->db = 0;
	/* TF32 (clkmeans_assign.cl's second assign): an NVIDIA GPU of compute capability
	 * 8.0 or later, resident rows, steps of 8 or 16 columns, whole warps of 16-row
	 * tiles; its tile rows are padded by 8 and its merge takes 4 lanes a row. */
	unsigned cc_major, cc_minor;
	const int tf32_ok = clx_nv_cc(&m->x, &cc_major, &cc_minor) && cc_major >= 8 &&
	    t->local && t->a_res && t->tk % 8 == 0 && nt % 32 == 0 &&
	    tm % (nt / 32 * 16) == 0 && tm <= nt &&
	    rows + (size_t)t->tk * (tn + 8) * 4 * (1 + (t->db != 0)) <= budget;
	if (t->tf32 > 0 && !tf32_ok)
		die("CLKMEANS_TUNE: tf32=1 needs an NVIDIA GPU of compute capability 8.0 or later, "
		    "resident rows (a_res=1), tk 8 or 16, 16-row tiles a warp and the tiles in "
		    "local memory; %s with these settings is not one", m->x.name);
	t->tf32 = t->tf32 < 0 ? tf32_ok : t->tf32 > 0;
	if (t->tf32) {
		tile = (size_t)t->tk * (tn + 8) * 4;
		red = 3 * (size_t)MAX(t->tnt, 4) * tm * 4;
	}
	/* A_REG (the TF32 assign's row fragments in registers for the whole pass, a whole
	 * centroid tile a step): where a lane's fragments take at most 64 registers
	 * (dpad / 8 steps x its 16-row tiles x 4) and two whole tiles fit in the rows'
	 * place, copied in whole rounds of 16 bytes a work-item. */
	const size_t whole = m->dpad * (tn + 8) * 4;
	const int areg_ok = t->tf32 && m->dpad * (tm / (nt / 32 * 16)) <= 128 &&
	    nt % (tn / 4) == 0 && m->dpad * tn / 4 % nt == 0 && 2 * whole <= budget;
	if (t->areg > 0 && !areg_ok)
		die("CLKMEANS_TUNE: areg=1 needs the TF32 assign, at most 128 / (rows a warp / 16) "
		    "columns (padded) and two whole centroid tiles in %zu bytes of local memory; "
		    "%zu columns with these settings are not", budget, m->dpad);
	t->areg = t->areg < 0 ? areg_ok : t->areg > 0;
	size_t need = t->areg ? MAX(MAX(rows, 2 * whole), red) :
	    MAX(t->a_res ? rows + tile * (1 + (t->db != 0)) :
	    ((size_t)t->tk * (tm + 4) + (size_t)t->tk * tn) * 4, red);
	if (t->local && need > m->x.local_mem)
		die("kernel parameters need %zu bytes of local memory, %s has %llu", need, m->x.name,
		    (unsigned long long)m->x.local_mem);
}

static int
has_extension(const struct clx *x, const char *ext)
{
	size_t n = 0;
	CL_CHECK(clGetDeviceInfo(x->device, CL_DEVICE_EXTENSIONS, 0, NULL, &n));
	char *s = xmalloc(n + 1);
	CL_CHECK(clGetDeviceInfo(x->device, CL_DEVICE_EXTENSIONS, n, s, NULL));
	s[n] = '\0';
	size_t len = strlen(ext);
	int found = 0;
	for (const char *p = s; (p = strstr(p, ext)) != NULL; p += len)
		if ((p == s || p[-1] == ' ') && (p[len] == '\0' || p[len] == ' '))
			found = 1;
	free(s);
	return found;
}

/* The programs of a device (KM_PROGS), each the kernels of its KM_KERNELS bits: on an
 * NVIDIA GPU a program a part of the work, so that a first build compiles them at once
 * on threads (the H200, 2026-11-29, both caches off: 1.58 s for the four parts at once,
 * the longest alone, against 1.76 s for one program); clBuildProgram is thread-safe for
 * different programs (OpenCL 1.2, appendix A.2: every call but clSetKernelArg on one
 * kernel), and each is cached on its own (clx_build). Elsewhere the parts a run needs
 * are one program: PoCL builds one program at a time whatever the threads (2-core
 * machine, 2026-11-29, PoCL 3.1, both caches off: assign 620-1068 ms, exact 114-233,
 * update 91-177, kpp 85-192 one after another, against 589-890 ms for all in one), and
 * Oclgrind, a "gpu", crashes on builds at once (tests/sanitize.bats). Either way only
 * what the run uses is built: the recheck with TF32 alone, kpp with k-means++ alone. */
static const struct km_part {
	const char *name;	/* the cache's and -v's name, split */
	int bits;		/* KM_K_* of clkmeans_defs.cl */
} km_parts[KM_PROGS] = {
	{"clkmeans_assign", 1}, {"clkmeans_recheck", 2}, {"clkmeans_exact", 4},
	{"clkmeans_update", 8}, {"clkmeans_seed", 16},
};

struct part_build {
	struct km *m;
	int i, bits;
	const char *name;
	char opts[600];
	double sec;
};

static void *
build_part(void *arg)
{
	struct part_build *b = arg;
	double t0 = now_sec();
	b->m->prog[b->i] = clx_build(&b->m->x, b->name, clkmeans_cl, clkmeans_cl_files,
	    b->opts);
	b->sec = now_sec() - t0;
	return NULL;
}

static void
build(struct km *m)
{
	const struct tune *t = &m->t;
	char opts[512];
	snprintf(opts, sizeof opts,
	    "-D DIM=%zu -D USE_FP64=%d -D HAVE_ATOM64=%d -D TMT=%d -D TNT=%d -D RMV=%d "
	    "-D RNV=%d -D TK=%d -D A_RES=%d -D DB=%d -D LOCAL_TILES=%d -D WG=%d -D RG=%d "
	    "-D TF32=%d -D A_REG=%d",
	    m->d, m->fp64, m->atom64, t->tmt, t->tnt, t->rmv, t->rnv, t->tk, t->a_res, t->db,
	    t->local, t->wg, t->rg, t->tf32, t->areg);
	/* -v on NVIDIA: ptxas's register and spill counts in the build log. */
	if (m->x.vendor == CLX_NVIDIA && verbose)
		strcat(opts, " -cl-nv-verbose");
	const int need[KM_PROGS] = {1, t->tf32, 1, 1, m->seed};
	struct part_build b[KM_PROGS];
	pthread_t th[KM_PROGS];
	int started[KM_PROGS] = {0}, nb = 0, all = 0;
	for (int i = 0; i < KM_PROGS; i++) {
		if (!need[i])
			continue;
		all |= km_parts[i].bits;
		if (!t->split && nb == 1)
			continue;	/* one program: the first's, with every bit */
		b[nb] = (struct part_build){.m = m, .i = i, .bits = km_parts[i].bits,
		    .name = t->split ? km_parts[i].name : "clkmeans"};
		nb++;
	}
	if (!t->split)
		b[0].bits = all;
	for (int j = 0; j < nb; j++) {
		snprintf(b[j].opts, sizeof b[j].opts, "%s -D KM_KERNELS=%d", opts, b[j].bits);
		if (j + 1 == nb) {
			build_part(&b[j]);	/* the last on this thread */
			continue;
		}
		int err = pthread_create(&th[j], NULL, build_part, &b[j]);
		if (err != 0)
			die_no_thread(err, NULL);
		started[j] = 1;
	}
	for (int j = 0; j < nb; j++) {
		if (started[j])
			pthread_join(th[j], NULL);
		vlog("build: %s (KM_KERNELS=%d) in %.1f ms", b[j].name, b[j].bits,
		    1e3 * b[j].sec);
	}
	m->built = 1;
	cl_program p[KM_PROGS];
	for (int i = 0; i < KM_PROGS; i++)
		p[i] = t->split ? m->prog[i] : m->prog[0];
	m->assign = clx_kernel(p[0], "assign");
	m->assign_f32 = t->tf32 ? clx_kernel(p[1], "assign_f32") : NULL;
	m->exact = clx_kernel(p[2], "exact");
	m->update = clx_kernel(p[3], "update");
	m->finalize = clx_kernel(p[3], "finalize");
	m->scalars = clx_kernel(p[3], "scalars");
	m->rowdist = clx_kernel(p[3], "rowdist");
	m->kpp = m->seed ? clx_kernel(p[4], "kpp") : NULL;
}

/* "rank R of N: " for -v's lines about one rank's share. */
static const char *
rank_tag(void)
{
	static char buf[48];
	snprintf(buf, sizeof buf, "rank %d of %d: ", ranks_rank(), ranks_size());
	return buf;
}

/* The spec each rank opens: under mpirun, gpu and auto (when it decides on a GPU) take
 * the GPU of the rank's place on its host, modulo the host's GPUs. */
static const char *
rank_spec(const char *spec, const char *platform, char *buf, size_t size)
{
	if (ranks_size() == 1 || strcmp(spec, "gpu") != 0)
		return spec;
	int ng = clx_count_gpus(platform);
	if (ng <= 0)
		return spec;	/* clx_open says there is none */
	snprintf(buf, size, "gpu:%d", ranks_local() % ng);
	return buf;
}

/* Whether a run seeds with k-means++ (and so needs kpp). */
static int
km_seeds(const struct km_config *cfg)
{
	return cfg->init == KM_INIT_PLUSPLUS && !cfg->assign_only;
}

/* Device m, already open in m->x, for d columns and k centroids: kernel parameters
 * and the build (on km_dev_start's thread, or in km_open). */
static void
km_prepare(struct km *m, size_t d, size_t k, int seed)
{
	m->d = d;
	m->k = k;
	m->seed = seed;
	m->fp64 = m->x.has_fp64;
	m->atom64 = has_extension(&m->x, "cl_khr_int64_base_atomics");
	choose_tune(m);
	if (!m->fp64)
		vlog("no float64: distances and their sums in float");
	double t0 = now_sec();
	build(m);
	phase_add("build", now_sec() - t0);
}

/* Device m, already open in m->x (and built, when km_dev_start's thread knew the
 * columns), for its share of the rows: kernel parameters, the build, the memory plan,
 * the column scales. */
static void
km_open(struct kmset *s, struct km *m, size_t first, size_t n, int prof)
{
	m->prof = prof;
	m->delta = !s->exchange;
	m->first = first;
	m->n = n;
	m->hx = s->hx + first * s->d;
	if (!m->built)
		km_prepare(m, s->d, s->k, s->seed);
	else if (m->d != s->d || m->k != s->k || m->seed != s->seed)
		die("the build beside the read was for %zu columns and k = %zu, the run has %zu "
		    "and %zu", m->d, m->k, s->d, s->k);	/* km_dev_start's caller's promise */
	const struct tune *t = &m->t;
	vlog("%zu rows x %zu columns, k = %zu; tiles of %zu rows x %d centroids x %d columns%s%s%s",
	    s->n, m->d, m->k, m->tm, t->tnt * t->rnv * 4, t->tk,
	    !t->local ? " (direct)" : t->a_res ? " (rows resident)" : "",
	    t->tf32 ? "; TF32 products on the tensor cores, rows near a tie rechecked in float32, "
	    "then float64" : "", t->areg ? " (rows in registers)" : "");
	m->exact_groups = (size_t)m->x.compute_units * t->exact_cu;
	m->update_groups = (size_t)m->x.compute_units * t->update_cu;
}

/* CLKMEANS_PROFILE: each kernel timed (a profiling queue). */
static int
profile_on(void)
{
	const char *prof = getenv("CLKMEANS_PROFILE");
	return prof != NULL && *prof != '\0' && strcmp(prof, "0") != 0;
}

static void km_close(struct km *m);

struct km_dev_start {
	struct clx_start *st;
	struct clx xs[CLX_MAX_MANY];	/* clx_start's: here until the run ends */
	struct km dev[CLX_MAX_MANY];
	int nd;
	size_t d, k;
	int seed;
};

/* clx_start's prep, on its thread: the devices' kernel parameters and build when the
 * columns and k are known. */
static void
start_prep(struct clx *xs, int n, void *ctx)
{
	struct km_dev_start *ds = ctx;
	ds->nd = n;
	for (int i = 0; i < n; i++) {
		ds->dev[i].x = xs[i];
		if (ds->d > 0 && ds->k > 0)
			km_prepare(&ds->dev[i], ds->d, ds->k, ds->seed);
	}
}

struct km_dev_start *
km_dev_start(const char *spec, const struct km_config *cfg, size_t d, double work,
    clx_model_fn *model)
{
	struct km_dev_start *ds = xcalloc(1, sizeof *ds);
	ds->d = d;
	ds->k = cfg->k > 0 ? (size_t)cfg->k : 0;
	ds->seed = km_seeds(cfg);
	/* auto's CPU is the native host path (km_host_run), not PoCL's device */
	ds->st = clx_start(spec, cfg->platform, (profile_on() ? CLX_PROFILE : 0) |
	    (model != NULL ? CLX_CPU_IS_HOST : 0), work, model, start_prep, ds, ds->xs,
	    CLX_MAX_MANY);
	return ds;
}

int
km_dev_started(struct km_dev_start *ds, const char **spec)
{
	int n = clx_start_wait(ds->st);
	*spec = clx_start_spec(ds->st);
	return n;
}

void
km_dev_drop(struct km_dev_start *ds)
{
	clx_start_wait(ds->st);
	for (int i = 0; i < ds->nd; i++)
		km_close(&ds->dev[i]);
	free(ds);
}

/* Opens the devices spec names (each rank its own under mpirun), or takes those
 * km_dev_start opened (ds), reads what X left to read, and divides the rows among the
 * devices. */
static void
set_open(struct kmset *s, struct clmat *X, const struct km_config *cfg, const char *dev,
    struct km_dev_start *ds)
{
	memset(s, 0, sizeof *s);
	int pr = profile_on();
	s->ranks = ranks_size();
	s->n = X->m.rows;
	s->d = X->m.cols;
	s->k = (size_t)cfg->k;
	s->row0 = cfg->row0;
	s->ntotal = cfg->ntotal ? cfg->ntotal : s->n;
	s->seed = km_seeds(cfg);
	char buf[32];
	const char *spec = rank_spec(dev, cfg->platform, buf, sizeof buf);
	double t0;
	if (ds != NULL) {
		s->nd = clx_start_wait(ds->st);
		for (int i = 0; i < s->nd; i++)
			s->dev[i] = ds->dev[i];
		free(ds);
	} else {
		struct clx xs[CLX_MAX_MANY];
		t0 = now_sec();
		s->nd = clx_open_many(spec, cfg->platform, pr ? CLX_PROFILE : 0, xs,
		    CLX_MAX_MANY);
		phase_add("open device", now_sec() - t0);
		for (int i = 0; i < s->nd; i++)
			s->dev[i].x = xs[i];
	}
	t0 = now_sec();
	clmat_read(X, &s->dev[0].x, "the rows");
	phase_add(PH_READ, now_sec() - t0);
	s->hx = X->m.data;
	s->exchange = s->nd > 1 || s->ranks > 1;
	s->sums = xcalloc(s->k * s->d + s->k + 2, sizeof *s->sums);
	s->dist = xmallocarray(MAX(s->n, (size_t)1), sizeof *s->dist);
	s->lab = xmallocarray(MAX(s->n, (size_t)1), sizeof *s->lab);
	/* the shares: even, on multiples of the first device's tiles and groups */
	size_t first[CLX_MAX_MANY], count[CLX_MAX_MANY];
	km_open(s, &s->dev[0], 0, 0, pr);
	size_t align = MAX(s->dev[0].tm, (size_t)s->dev[0].t.rg);
	km_shares(s->n, s->nd, align, first, count);
	s->dev[0].first = first[0];
	s->dev[0].n = count[0];
	s->dev[0].hx = s->hx;
	for (int i = 1; i < s->nd; i++)
		km_open(s, &s->dev[i], first[i], count[i], pr);
	if (s->nd > 1 || s->ranks > 1)
		for (int i = 0; i < s->nd; i++)
			vlog("%sdevice %d (%s): rows %zu to %zu, %zu rows", s->ranks > 1 ? rank_tag() :
			    "", i, s->dev[i].x.name, (size_t)s->row0 + first[i],
			    (size_t)s->row0 + first[i] + count[i], count[i]);
	t0 = now_sec();
	km_column_stats(s, cfg->tol, cfg->init == KM_INIT_GIVEN || cfg->assign_only ?
	    cfg->centroids : NULL);
	phase_add("stats", now_sec() - t0);
	for (int i = 0; i < s->nd; i++) {
		km_plan_memory(&s->dev[i], cfg->max_device_mem);
		km_upload_stats(s, &s->dev[i]);
	}
}

static void
km_close(struct km *m)
{
	prof_collect(m);
	for (int i = 0; i < 8 && m->prof; i++)
		vlog("kernel %-8s %10.3f ms", kernel_names[i], m->kernel_ms[i]);
	cl_mem *mems[] = {&m->X, &m->labels, &m->prev, &m->dists, &m->list, &m->list2, &m->state,
	    &m->sums, &m->counts, &m->fscale_m, &m->iscale, &m->shift, &m->empty, &m->part, &m->cand,
	    &m->set[0].c64, &m->set[0].c64T, &m->set[0].cT, &m->set[0].cn, &m->set[0].cnrm,
	    &m->set[1].c64, &m->set[1].c64T, &m->set[1].cT, &m->set[1].cn, &m->set[1].cnrm,
	    &m->set[0].cTt, &m->set[1].cTt};
	for (size_t i = 0; i < sizeof mems / sizeof mems[0]; i++)
		if (*mems[i])
			clReleaseMemObject(*mems[i]);
	cl_kernel ks[] = {m->assign, m->exact, m->update, m->finalize, m->scalars, m->rowdist,
	    m->kpp, m->assign_f32};
	for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++)
		if (ks[i])
			clReleaseKernel(ks[i]);
	for (int i = 0; i < KM_PROGS; i++)
		if (m->prog[i])
			clReleaseProgram(m->prog[i]);
	clx_close(&m->x);
}

static void
set_close(struct kmset *s)
{
	for (int i = 0; i < s->nd; i++) {
		if (s->exchange)
			vlog("%sdevice %d (%s): %zu rows, busy %.6f s", s->ranks > 1 ? rank_tag() :
			    "", i, s->dev[i].x.name, s->dev[i].n, s->dev[i].busy);
		km_close(&s->dev[i]);
	}
	free(s->fscale);
	free(s->iscale);
	free(s->sums);
	free(s->dist);
	free(s->lab);
}

/* ---- Lloyd ---- */

/* Every device's state: moved and nexact are totals already (km_exchange), the rest
 * alike on every device; -v's inertia is each device's part, added here. */
static void
set_state(struct kmset *s, struct state *st)
{
	double inertia = 0;
	for (int i = 0; i < s->nd; i++) {
		struct state one;
		read_state(&s->dev[i], &one);
		if (!s->exchange)
			s->dev[i].busy += now_sec() - s->t_start;
		inertia += one.inertia;
		if (i == 0)
			*st = one;
	}
	st->inertia = inertia;
	if (s->ranks > 1 && verbose)
		ranks_sum_f64(&st->inertia, 1);	/* -v's only: not exact */
}

static void
set_finalize(struct kmset *s, int mode, int npart)
{
	for (int i = 0; i < s->nd; i++)
		km_finalize(&s->dev[i], mode, npart);
}

/* Labels -1 (none yet); with delta, the sums empty and made for no labels. */
static void
set_labels_reset(struct kmset *s)
{
	const int minus1 = -1;
	for (int i = 0; i < s->nd; i++) {
		struct km *m = &s->dev[i];
		if (m->n == 0)
			continue;
		CL_CHECK(clEnqueueFillBuffer(m->x.queue, m->labels, &minus1, sizeof minus1, 0,
		    m->n * 4, 0, NULL, NULL));
		if (m->delta) {
			CL_CHECK(clEnqueueFillBuffer(m->x.queue, m->prev, &minus1, sizeof minus1, 0,
			    m->n * 4, 0, NULL, NULL));
			km_fill_zero(m, m->sums, 0, m->k * m->d * 8);
			km_fill_zero(m, m->counts, 0, m->k * 8);
		}
	}
}

/* Runs Lloyd's iterations from the current centroids; leaves labels, dists and the
 * final centroids on the devices and returns the inertia. *t_loop: the seconds of the
 * iterations alone (each ends with the blocking read of its scalars), without the final
 * labelling and the dists' download after them. */
static double
lloyd(struct kmset *s, int max_iter, int tol_on, int *n_iter, double *t_vdist,
    double *t_loop)
{
	struct state st;
	int it, strict = 0;
	const double t0 = now_sec();

	*t_vdist = 0;
	set_labels_reset(s);
	for (it = 0; it < max_iter; it++) {
		s->t_start = now_sec();
		for (int i = 0; i < s->nd; i++) {
			struct km *m = &s->dev[i];
			if (!m->delta) {
				km_fill_zero(m, m->sums, 0, m->k * m->d * 8);
				km_fill_zero(m, m->counts, 0, m->k * 8);
			}
			km_fill_zero(m, m->state, 4 * SI_MOVED, 4);
			km_fill_zero(m, m->state, 4 * SI_NEXACT, 4);
			km_assign_pass(m, 1);
		}
		if (verbose) {
			/* Timed apart, so -v reports what an iteration costs without it. */
			for (int i = 0; i < s->nd; i++)
				CL_CHECK(clFinish(s->dev[i].x.queue));
			double t = now_sec();
			for (int i = 0; i < s->nd; i++)
				km_rowdist_pass(&s->dev[i]);
			for (int i = 0; i < s->nd; i++)
				CL_CHECK(clFinish(s->dev[i].x.queue));
			*t_vdist += now_sec() - t;
		}
		if (s->exchange)
			km_exchange(s);
		set_finalize(s, 1, verbose);
		set_state(s, &st);
		if (st.empty > 0 && km_relocate(s, st.empty, verbose)) {
			set_finalize(s, 1, verbose);
			set_state(s, &st);
		}
		for (int i = 0; i < s->nd; i++)
			s->dev[i].cur = 1 - s->dev[i].cur;
		progress_add(1);
		if (verbose)
			vlog("iteration %d: inertia %.10g, moved %d, exact %d, shift %.6g", it + 1,
			    st.inertia, st.moved, st.nexact, st.shift);
		if (tol_on && st.moved == 0) {
			strict = 1;
			vlog("converged at iteration %d: no label changed", it + 1);
			it++;
			break;
		}
		if (tol_on && st.shift <= s->tol_abs) {
			vlog("converged at iteration %d: shift %.6g within tolerance %.6g", it + 1,
			    st.shift, s->tol_abs);
			it++;
			break;
		}
	}
	*n_iter = it;
	*t_loop = now_sec() - t0;
	if (!strict) {
		/* Labels that match the final centroids. */
		for (int i = 0; i < s->nd; i++) {
			km_fill_zero(&s->dev[i], s->dev[i].state, 4 * SI_MOVED, 4);
			km_assign_pass(&s->dev[i], 0);
		}
	}
	for (int i = 0; i < s->nd; i++) {
		km_rowdist_pass(&s->dev[i]);
		km_finalize(&s->dev[i], 0, 0);
	}
	km_pull_rows(s, 0);
	return km_inertia(s);
}

/* Labels, dists and centroids of the current set, to the host (s->dist holds the
 * dists already). */
static void
fetch(struct kmset *s, struct km_result *res)
{
	double t = now_sec();
	for (int i = 0; i < s->nd; i++) {
		struct km *m = &s->dev[i];
		km_read_buf(m, m->labels, 0, m->n * 4, res->labels + m->first);
	}
	memcpy(res->dists, s->dist, s->n * sizeof *res->dists);
	struct km *m = &s->dev[0];
	km_read_real(m, m->set[m->cur].c64, 0, m->k * m->d, res->centroids);
	phase_add(PH_D2H, now_sec() - t);
}

static void
set_centroids(struct kmset *s, const double *C)
{
	for (int i = 0; i < s->nd; i++) {
		s->dev[i].cur = 0;
		km_set_centroids(&s->dev[i], C);
	}
}

/* ---- the whole run ---- */

void
km_dev_run(struct clmat *X, const struct km_config *cfg, const char *spec,
    struct km_dev_start *ds, struct km_result *res)
{
	struct kmset s;
	set_open(&s, X, cfg, spec, ds);
	const size_t n = s.n, d = s.d, k = s.k;
	res->labels = xmallocarray(MAX(n, (size_t)1), sizeof *res->labels);
	res->dists = xmallocarray(MAX(n, (size_t)1), sizeof *res->dists);
	res->centroids = xmallocarray(k * d, sizeof *res->centroids);
	res->inertia = INFINITY;
	res->iterations = 0;

	if (cfg->assign_only) {
		double t = now_sec();
		set_centroids(&s, cfg->centroids);
		set_labels_reset(&s);
		for (int i = 0; i < s.nd; i++) {
			km_assign_pass(&s.dev[i], 0);
			km_rowdist_pass(&s.dev[i]);
		}
		km_pull_rows(&s, 0);
		res->inertia = km_inertia(&s);
		phase_add(PH_COMPUTE, now_sec() - t);
		fetch(&s, res);
		vlog("inertia %.10g", res->inertia);
		set_close(&s);
		return;
	}

	struct rng g;
	rng_seed(&g, cfg->seed);
	int runs = cfg->init == KM_INIT_GIVEN ? 1 : cfg->n_init;
	double *C = xmallocarray(k * d, sizeof *C);
	for (int run = 0; run < runs; run++) {
		double t = now_sec();
		if (cfg->init == KM_INIT_GIVEN)
			memcpy(C, cfg->centroids, k * d * sizeof *C);
		else if (cfg->init == KM_INIT_RANDOM)
			km_init_random(&s, &g, C);
		else
			km_init_kpp(&s, &g, C);
		set_centroids(&s, C);
		for (int i = 0; i < s.nd; i++)
			CL_CHECK(clFinish(s.dev[i].x.queue));
		phase_add("init", now_sec() - t);
		t = now_sec();
		int n_iter;
		double t_vdist, t_loop;
		double inertia = lloyd(&s, cfg->max_iter, cfg->tol > 0, &n_iter, &t_vdist, &t_loop);
		double t_all = now_sec() - t;
		phase_add(PH_COMPUTE, t_all);
		vlog("run %d: %d iterations in %.6f s, %.6f ms each (-v's inertia aside: %.6f s; "
		    "then the final labelling and the dists' download, %.6f s), inertia %.10g",
		    run + 1, n_iter, t_loop - t_vdist, 1e3 * (t_loop - t_vdist) / MAX(n_iter, 1),
		    t_vdist, t_all - t_loop, inertia);
		if (run == 0 || inertia < res->inertia) {
			res->inertia = inertia;
			res->iterations = n_iter;
			fetch(&s, res);
		}
	}
	free(C);
	set_close(&s);
}

void
km_result_free(struct km_result *res)
{
	free(res->labels);
	free(res->dists);
	free(res->centroids);
	memset(res, 0, sizeof *res);
}
