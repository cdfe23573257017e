/* clkmeans_dev.c: Lloyd's k-means on an OpenCL device (see clkmeans.h), driving the
 * kernels of kernels/clkmeans.cl.
 *
 * The rows stay in device memory when they fit (--max-device-mem), else they are
 * streamed through in batches on every pass; labels and distances (a few bytes a row)
 * stay on the device. An iteration is: assign (+ exact for the rows near a tie) and
 * update for every batch, finalize, scalars, then one read of a few scalars (moved
 * rows, empty clusters, shift, inertia) for the convergence test. Empty clusters are
 * relocated on the host (rare): the rows farthest from their centroids, as
 * scikit-learn does it. */
#include "clkmeans.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "opencl.h"
#include "rng.h"
#include "timer.h"

extern const char clkmeans_cl[];

/* The state buffer's layout (keep in step with kernels/clkmeans.cl). */
enum { SD_INERTIA = 0, SD_SHIFT = 1, SI_MOVED = 4, SI_EMPTY = 5, SI_NLIST = 6,
	SI_NEXACT = 7, SF_CMAX = 8, STATE_BYTES = 64 };

/* Tunables of the kernels, per device class (CLKMEANS_TUNE overrides them). */
struct tune {
	int tmt, tnt, rmv, rnv, tk, a_res, db, wg, rg;
	int local;		/* assign's tiles through local memory (GPUs), or direct (CPUs) */
	int fp64, atom64;	/* 0 turns the device's float64 or 64-bit atomics off */
};

struct cset {			/* one set of centroids in the forms the kernels use */
	cl_mem c64, c64T, cT, cn, cnrm;
};

struct state {
	double inertia, shift;
	int moved, empty, nexact;
	float cmax;
};

struct km {
	struct clx x;
	cl_program prog;
	cl_kernel assign, exact, update, finalize, scalars, rowdist, kpp;
	struct tune t;
	int fp64, atom64;
	size_t rsz;			/* bytes of the kernels' `real' */
	size_t n, d, k, kpad, dpad, tm;
	size_t batch, nbatch, loaded;	/* rows a batch; batches; the one in X (streaming) */
	size_t ngroups;			/* RG-row groups of partial sums */
	size_t exact_groups, update_groups;
	const float *hx;		/* the rows, on the host */
	float *fscale;			/* 2^p of each column's fixed point */
	double tol_abs;
	cl_mem X, labels, dists, list, state, sums, counts, fscale_m, iscale, shift, empty, part,
	    cand;
	struct cset set[2];
	int cur;
	int prof;			/* CLKMEANS_PROFILE: time each kernel (-v prints it) */
	int npend;
	struct { cl_event ev; int kernel; } pend[64];
	double kernel_ms[7];
	double t_iter;			/* seconds in Lloyd iterations, for -v */
	double t_vdist;			/* of which -v's inertia of each iteration */
	int n_iter;
};

/* ---- small helpers ---- */

static cl_mem
buf(struct km *m, size_t bytes)
{
	return CL_CREATE(clCreateBuffer(m->x.ctx, CL_MEM_READ_WRITE, MAX(bytes, (size_t)16), NULL,
	    &cl_err_));
}

/* Sets a kernel's arguments from (size, pointer) pairs; n of them. */
static void
args(cl_kernel k, int n, ...)
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
#define A(v) sizeof(v), (const void *)&(v)

static const char *const kernel_names[7] = {"assign", "exact", "update", "finalize",
	"scalars", "rowdist", "kpp"};

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

static void
launch(struct km *m, cl_kernel k, size_t global, size_t local)
{
	cl_event ev = NULL;
	CL_CHECK(clEnqueueNDRangeKernel(m->x.queue, k, 1, NULL, &global, local ? &local : NULL, 0,
	    NULL, m->prof ? &ev : NULL));
	if (!m->prof)
		return;
	cl_kernel all[7] = {m->assign, m->exact, m->update, m->finalize, m->scalars, m->rowdist,
	    m->kpp};
	int i = 0;
	while (i < 6 && all[i] != k)
		i++;
	if (m->npend == (int)(sizeof m->pend / sizeof m->pend[0]))
		prof_collect(m);
	m->pend[m->npend].ev = ev;
	m->pend[m->npend++].kernel = i;
}

static void
fill_zero(struct km *m, cl_mem b, size_t off, size_t bytes)
{
	cl_uint zero = 0;
	CL_CHECK(clEnqueueFillBuffer(m->x.queue, b, &zero, sizeof zero, off, bytes, 0, NULL, NULL));
}

static void
read_buf(struct km *m, cl_mem b, size_t off, size_t bytes, void *dst)
{
	CL_CHECK(clEnqueueReadBuffer(m->x.queue, b, CL_TRUE, off, bytes, dst, 0, NULL, NULL));
}

static void
write_buf(struct km *m, cl_mem b, size_t off, size_t bytes, const void *src)
{
	CL_CHECK(clEnqueueWriteBuffer(m->x.queue, b, CL_TRUE, off, bytes, src, 0, NULL, NULL));
}

/* n values of the kernels' `real' type at element offset off into doubles. */
static void
read_real(struct km *m, cl_mem b, size_t off, size_t n, double *dst)
{
	if (m->rsz == sizeof(double)) {
		read_buf(m, b, off * 8, n * 8, dst);
		return;
	}
	float *tmp = xmallocarray(MAX(n, (size_t)1), sizeof *tmp);
	read_buf(m, b, off * 4, n * 4, tmp);
	for (size_t i = 0; i < n; i++)
		dst[i] = tmp[i];
	free(tmp);
}

static void
write_real(struct km *m, cl_mem b, size_t n, const double *src)
{
	if (m->rsz == sizeof(double)) {
		write_buf(m, b, 0, n * 8, src);
		return;
	}
	float *tmp = xmallocarray(MAX(n, (size_t)1), sizeof *tmp);
	for (size_t i = 0; i < n; i++)
		tmp[i] = (float)src[i];
	write_buf(m, b, 0, n * 4, tmp);
	free(tmp);
}

static void
read_state(struct km *m, struct state *s)
{
	unsigned char b[STATE_BYTES];
	read_buf(m, m->state, 0, sizeof b, b);
	prof_collect(m);
	memcpy(&s->inertia, b + 8 * SD_INERTIA, 8);
	memcpy(&s->shift, b + 8 * SD_SHIFT, 8);
	memcpy(&s->moved, b + 4 * SI_MOVED, 4);
	memcpy(&s->empty, b + 4 * SI_EMPTY, 4);
	memcpy(&s->nexact, b + 4 * SI_NEXACT, 4);
	memcpy(&s->cmax, b + 4 * SF_CMAX, 4);
}

static int
is_pow2(int v)
{
	return v > 0 && (v & (v - 1)) == 0;
}

/* ---- set-up ---- */

static void
tune_defaults(const struct km *m, struct tune *t)
{
	if (m->x.is_gpu) {
		/* Groups of 128 work-items, 8 x 8 (k <= 32: 4 x 4) per work-item: 128 rows x 64
		 * centroid tiles. On an H200 (1M x 64, k = 1024) this ran at 3.75 ms an
		 * iteration, three groups an SM; 256 work-items (128 x 128 tiles) at 4.5. */
		t->local = 1;
		t->wg = 256;
		t->rg = 1024;
		t->tmt = 16, t->tnt = 8;
		t->rmv = t->rnv = m->k > 32 ? 2 : 1;
	} else {
		/* CPUs (PoCL): a work-item takes 4 rows x 8 centroids at a time in vector
		 * registers, through every centroid; no local memory, no barriers. */
		t->local = 0;
		t->wg = 64;
		t->rg = 256;
		t->tmt = 16, t->tnt = 1, t->rmv = 1, t->rnv = m->k > 4 ? 2 : 1;
	}
	/* Columns a step: the widest of 16, 8, 4 that pads d by at most an eighth. */
	t->tk = 4;
	for (int tk = 16; tk > 4; tk /= 2)
		if ((CEIL_DIV(m->d, (size_t)tk) * tk - m->d) * 8 <= m->d) {
			t->tk = tk;
			break;
		}
}

/* CLKMEANS_TUNE="local=1 tmt=16 tnt=8 rmv=2 rnv=2 tk=16 a_res=1 db=1 wg=256 rg=1024
 * fp64=0 atom64=0" (any subset): for tuning, and for tests of the fallbacks. */
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
	t->db = -1;
	t->fp64 = t->atom64 = 1;
	tune_env(t);
	m->fp64 = m->fp64 && t->fp64;
	m->atom64 = m->atom64 && t->atom64;
	m->rsz = m->fp64 ? 8 : 4;
	size_t nt = (size_t)t->tmt * t->tnt, tm = (size_t)t->tmt * t->rmv * 4;
	size_t tn = (size_t)t->tnt * t->rnv * 4;
	if (!is_pow2(t->tmt) || !is_pow2(t->tnt) || !is_pow2(t->rmv) || !is_pow2(t->rnv) ||
	    (t->tk != 4 && t->tk != 8 && t->tk != 16) || !is_pow2(t->wg) ||
	    t->rg % t->wg != 0 || !is_pow2(t->rg) || nt > m->x.max_wg ||
	    (t->local ? tm > nt : t->tnt != 1) || (size_t)t->wg > m->x.max_wg)
		die("unusable kernel parameters (local=%d tmt=%d tnt=%d rmv=%d rnv=%d tk=%d wg=%d rg=%d) for %s",
		    t->local, t->tmt, t->tnt, t->rmv, t->rnv, t->tk, t->wg, t->rg, m->x.name);
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
	size_t need = MAX(t->a_res ? rows + tile * (1 + (t->db != 0)) :
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

static void
build(struct km *m)
{
	const struct tune *t = &m->t;
	char opts[512];
	snprintf(opts, sizeof opts,
	    "-D DIM=%zu -D USE_FP64=%d -D HAVE_ATOM64=%d -D TMT=%d -D TNT=%d -D RMV=%d "
	    "-D RNV=%d -D TK=%d -D A_RES=%d -D DB=%d -D LOCAL_TILES=%d -D WG=%d -D RG=%d",
	    m->d, m->fp64, m->atom64, t->tmt, t->tnt, t->rmv, t->rnv, t->tk, t->a_res, t->db,
	    t->local, t->wg, t->rg);
	/* -v on NVIDIA: ptxas's register and spill counts in the build log. */
	if (m->x.vendor == CLX_NVIDIA && verbose)
		strcat(opts, " -cl-nv-verbose");
	m->prog = clx_build(&m->x, "clkmeans", clkmeans_cl, opts);
	m->assign = clx_kernel(m->prog, "assign");
	m->exact = clx_kernel(m->prog, "exact");
	m->update = clx_kernel(m->prog, "update");
	m->finalize = clx_kernel(m->prog, "finalize");
	m->scalars = clx_kernel(m->prog, "scalars");
	m->rowdist = clx_kernel(m->prog, "rowdist");
	m->kpp = clx_kernel(m->prog, "kpp");
}

/* Fixed point per column: sums of n values below 2^62 in magnitude; per column the
 * tolerance (mean variance times tol). Deterministic: blocks of rows summed in order. */
static void
column_stats(struct km *m, double tol)
{
	const size_t n = m->n, d = m->d, blk = 4096, nb = CEIL_DIV(n, blk);
	double *sum = xcalloc(nb * d, sizeof *sum), *sq = xcalloc(nb * d, sizeof *sq);
	float *mx = xcalloc(nb * d, sizeof *mx);
	double *mean = xcalloc(d, sizeof *mean);
	const float *X = m->hx;

	#pragma omp parallel for schedule(static)
	for (size_t b = 0; b < nb; b++)
		for (size_t r = b * blk; r < MIN(n, (b + 1) * blk); r++)
			for (size_t i = 0; i < d; i++) {
				sum[b * d + i] += X[r * d + i];
				mx[b * d + i] = fmaxf(mx[b * d + i], fabsf(X[r * d + i]));
			}
	for (size_t b = 0; b < nb; b++)
		for (size_t i = 0; i < d; i++)
			mean[i] += sum[b * d + i];
	for (size_t i = 0; i < d; i++)
		mean[i] /= (double)n;
	#pragma omp parallel for schedule(static)
	for (size_t b = 0; b < nb; b++)
		for (size_t r = b * blk; r < MIN(n, (b + 1) * blk); r++)
			for (size_t i = 0; i < d; i++) {
				double t = X[r * d + i] - mean[i];
				sq[b * d + i] += t * t;
			}
	double var = 0;
	int lg = 0;
	while (lg < 63 && ((uint64_t)1 << lg) < (uint64_t)n + 1)
		lg++;
	m->fscale = xmallocarray(d, sizeof *m->fscale);
	double *iscale = xmallocarray(d, sizeof *iscale);
	for (size_t i = 0; i < d; i++) {
		double v = 0;
		float big = 0;
		for (size_t b = 0; b < nb; b++) {
			v += sq[b * d + i];
			big = fmaxf(big, mx[b * d + i]);
		}
		var += v / (double)n;
		int e = 0;
		frexpf(big, &e);	/* big < 2^e */
		int p = big > 0 ? 62 - lg - e : 0;
		p = MAX(-126, MIN(127, p));
		m->fscale[i] = ldexpf(1.0f, p);
		iscale[i] = ldexp(1.0, -p);
	}
	m->tol_abs = var / (double)d * tol;
	m->fscale_m = buf(m, d * 4);
	m->iscale = buf(m, d * m->rsz);
	write_buf(m, m->fscale_m, 0, d * 4, m->fscale);
	write_real(m, m->iscale, d, iscale);
	free(iscale);
	free(sum);
	free(sq);
	free(mx);
	free(mean);
}

/* Device buffers, and whether the rows fit or are streamed in batches. */
static void
plan_memory(struct km *m, size_t max_device_mem)
{
	const size_t n = m->n, d = m->d, k = m->k, kpad = m->kpad, R = m->rsz;
	const size_t align = MAX(m->tm, (size_t)m->t.rg);
	const int maxl = 2 + (int)log((double)k);
	m->ngroups = CEIL_DIV(n, (size_t)m->t.rg);
	size_t fixed = STATE_BYTES + d * (4 + R) + k * d * 8 + k * 4 + kpad * (R + 4) +
	    m->ngroups * (size_t)maxl * R + (size_t)maxl * d * R +
	    2 * (k * d * R + d * kpad * R + m->dpad * kpad * 4 + 2 * kpad * 4);
	size_t per_row = 4 + R;			/* labels, dists */
	size_t row_bytes = d * 4 + 4;		/* the row, its place in the exact list */
	size_t budget = max_device_mem ? max_device_mem : (size_t)m->x.global_mem / 10 * 9;
	size_t base = fixed + n * per_row;
	size_t least = base + MIN(n, align) * row_bytes;
	if (least > budget)
		die("--max-device-mem: %zu bytes are too few for %zu rows x %zu columns and %zu centroids (at least %zu needed)",
		    budget, n, d, k, least);
	size_t fit = (budget - base) / row_bytes;
	size_t max_rows = (size_t)m->x.max_alloc / MAX(d * 4, (size_t)4);
	if (n <= fit && n <= max_rows) {
		m->batch = n;
	} else {
		m->batch = MIN(fit, max_rows) / align * align;
		if (m->batch == 0)
			die("--max-device-mem: %zu bytes are too few to stream %zu columns", budget, d);
	}
	m->nbatch = CEIL_DIV(n, m->batch);
	m->loaded = SIZE_MAX;
	if (m->nbatch > 1)
		vlog("streaming the rows in %zu batches of %zu rows", m->nbatch, m->batch);
	else
		vlog("the rows stay in device memory (%.1f MiB)", (double)n * d * 4 / (1 << 20));

	m->X = buf(m, m->batch * d * 4);
	m->labels = buf(m, n * 4);
	m->dists = buf(m, n * R);
	m->list = buf(m, m->batch * 4);
	m->state = buf(m, STATE_BYTES);
	m->sums = buf(m, k * d * 8);
	m->counts = buf(m, k * 4);
	m->shift = buf(m, kpad * R);
	m->empty = buf(m, kpad * 4);
	m->part = buf(m, m->ngroups * (size_t)maxl * R);
	m->cand = buf(m, (size_t)maxl * d * R);
	for (int s = 0; s < 2; s++) {
		m->set[s].c64 = buf(m, k * d * R);
		m->set[s].c64T = buf(m, d * kpad * R);
		m->set[s].cT = buf(m, m->dpad * kpad * 4);
		m->set[s].cn = buf(m, kpad * 4);
		m->set[s].cnrm = buf(m, kpad * 4);
	}
	fill_zero(m, m->state, 0, STATE_BYTES);
	if (m->nbatch == 1) {
		double t = now_sec();
		write_buf(m, m->X, 0, n * d * 4, m->hx);
		m->loaded = 0;
		phase_add(PH_H2D, now_sec() - t);
	}
}

static void
km_open(struct km *m, const struct matrix *X, const struct km_config *cfg)
{
	memset(m, 0, sizeof *m);
	const char *prof = getenv("CLKMEANS_PROFILE");
	m->prof = prof != NULL && *prof != '\0' && strcmp(prof, "0") != 0;
	clx_open(cfg->device, cfg->platform, m->prof ? CLX_PROFILE : 0, &m->x);
	m->n = X->rows;
	m->d = X->cols;
	m->k = (size_t)cfg->k;
	m->hx = X->data;
	m->fp64 = m->x.has_fp64;
	m->atom64 = has_extension(&m->x, "cl_khr_int64_base_atomics");
	choose_tune(m);
	if (!m->fp64)
		vlog("no float64: distances and their sums in float");
	const struct tune *t = &m->t;
	vlog("%zu rows x %zu columns, k = %zu; tiles of %zu rows x %d centroids x %d columns%s",
	    m->n, m->d, m->k, m->tm, t->tnt * t->rnv * 4, t->tk,
	    !t->local ? " (direct)" : t->a_res ? " (rows resident)" : "");
	double t0 = now_sec();
	build(m);
	phase_add("build", now_sec() - t0);
	if (m->x.is_gpu) {
		m->exact_groups = (size_t)m->x.compute_units * 4;
		m->update_groups = (size_t)m->x.compute_units * 16;
	} else {
		m->exact_groups = m->x.compute_units;
		m->update_groups = (size_t)m->x.compute_units * 4;
	}
	plan_memory(m, cfg->max_device_mem);
	t0 = now_sec();
	column_stats(m, cfg->tol);
	phase_add("stats", now_sec() - t0);
}

static void
km_close(struct km *m)
{
	prof_collect(m);
	for (int i = 0; i < 7 && m->prof; i++)
		vlog("kernel %-8s %10.3f ms", kernel_names[i], m->kernel_ms[i]);
	cl_mem *mems[] = {&m->X, &m->labels, &m->dists, &m->list, &m->state, &m->sums,
	    &m->counts, &m->fscale_m, &m->iscale, &m->shift, &m->empty, &m->part, &m->cand,
	    &m->set[0].c64, &m->set[0].c64T, &m->set[0].cT, &m->set[0].cn, &m->set[0].cnrm,
	    &m->set[1].c64, &m->set[1].c64T, &m->set[1].cT, &m->set[1].cn, &m->set[1].cnrm};
	for (size_t i = 0; i < sizeof mems / sizeof mems[0]; i++)
		if (*mems[i])
			clReleaseMemObject(*mems[i]);
	cl_kernel ks[] = {m->assign, m->exact, m->update, m->finalize, m->scalars, m->rowdist,
	    m->kpp};
	for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++)
		if (ks[i])
			clReleaseKernel(ks[i]);
	if (m->prog)
		clReleaseProgram(m->prog);
	clx_close(&m->x);
	free(m->fscale);
}

/* ---- passes over the rows ---- */

/* Makes batch b's rows the ones in m->X; returns how many, with its first row. */
static int
bind(struct km *m, size_t b, cl_long *row0)
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

/* Labels every row with the current centroids; with update, sums and counts too. */
static void
assign_pass(struct km *m, int update)
{
	struct cset *c = &m->set[m->cur];
	cl_int k = (cl_int)m->k, kpad = (cl_int)m->kpad;
	size_t nt = (size_t)m->t.tmt * m->t.tnt;

	for (size_t b = 0; b < m->nbatch; b++) {
		cl_long row0;
		cl_int nb = bind(m, b, &row0);
		cl_long nelem = (cl_long)nb * (cl_long)m->d;
		fill_zero(m, m->state, 4 * SI_NLIST, 4);
		args(m->assign, 9, A(m->X), A(nb), A(c->cT), A(c->cn), A(kpad), A(m->labels), A(row0),
		    A(m->list), A(m->state));
		launch(m, m->assign, CEIL_DIV((size_t)nb, m->tm) * nt, nt);
		args(m->exact, 8, A(m->X), A(c->c64T), A(k), A(kpad), A(m->labels), A(row0),
		    A(m->list), A(m->state));
		launch(m, m->exact, m->exact_groups * m->t.wg, m->t.wg);
		if (update) {
			args(m->update, 7, A(m->X), A(nelem), A(m->labels), A(row0), A(m->fscale_m),
			    A(m->sums), A(m->counts));
			size_t g = MIN(m->update_groups, CEIL_DIV((size_t)nelem, (size_t)m->t.wg));
			launch(m, m->update, g * m->t.wg, m->t.wg);
		}
	}
}

/* dists and their partial sums, for the labels and the current centroids. */
static void
rowdist_pass(struct km *m)
{
	struct cset *c = &m->set[m->cur];
	for (size_t b = 0; b < m->nbatch; b++) {
		cl_long row0;
		cl_int nb = bind(m, b, &row0);
		cl_long g0 = row0 / m->t.rg;
		args(m->rowdist, 8, A(m->X), A(nb), A(c->c64), A(m->labels), A(row0), A(m->dists),
		    A(m->part), A(g0));
		launch(m, m->rowdist, CEIL_DIV((size_t)nb, (size_t)m->t.rg) * m->t.wg, m->t.wg);
	}
}

/* New centroids into the other set (mode 1: from the sums), or the current set from
 * its own c64 (mode 0); then the scalars of the set written. */
static void
finalize(struct km *m, int mode, int npart)
{
	struct cset *from = &m->set[m->cur], *to = &m->set[mode ? 1 - m->cur : m->cur];
	cl_int k = (cl_int)m->k, kpad = (cl_int)m->kpad, md = mode;
	cl_long np = npart ? (cl_long)m->ngroups : 0;
	args(m->finalize, 14, A(md), A(k), A(kpad), A(m->sums), A(m->counts), A(m->iscale),
	    A(from->c64), A(to->c64), A(to->c64T), A(to->cT), A(to->cn), A(to->cnrm), A(m->shift),
	    A(m->empty));
	launch(m, m->finalize, CEIL_DIV(m->kpad, (size_t)64) * 64, 64);
	args(m->scalars, 7, A(k), A(m->shift), A(m->empty), A(to->cnrm), A(m->part), A(np),
	    A(m->state));
	launch(m, m->scalars, m->t.wg, m->t.wg);
}

/* Uploads k x d centroids as the current set. */
static void
set_centroids(struct km *m, const double *C)
{
	write_real(m, m->set[m->cur].c64, m->k * m->d, C);
	finalize(m, 0, 0);
}

/* ---- empty clusters ---- */

/* Whether row a lies farther from its centroid than row b (the lower index first
 * among equals). */
static int
farther(const double *dist, size_t a, size_t b)
{
	return dist[a] > dist[b] || (dist[a] == dist[b] && a < b);
}

/* Puts row r at position i of the heap of h rows (the nearest on top) and moves it
 * down to its place. */
static void
sift_down(const double *dist, size_t *heap, size_t h, size_t i, size_t r)
{
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= h)
			break;
		if (c + 1 < h && farther(dist, heap[c], heap[c + 1]))
			c++;
		if (!farther(dist, r, heap[c]))
			break;
		heap[i] = heap[c];
		i = c;
	}
	heap[i] = r;
}

/* The m rows farthest from their centroids, farthest first (a heap of m). */
static void
farthest(const double *dist, size_t n, size_t mcount, size_t *out)
{
	size_t h = 0;
	for (size_t r = 0; r < n; r++) {
		if (h < mcount) {
			size_t i = h++;
			while (i > 0 && farther(dist, out[(i - 1) / 2], r)) {
				out[i] = out[(i - 1) / 2];
				i = (i - 1) / 2;
			}
			out[i] = r;
		} else if (farther(dist, r, out[0])) {
			sift_down(dist, out, h, 0, r);
		}
	}
	/* The nearest on top to the end, in turn: farthest-first order. */
	while (h > 1) {
		size_t top = out[0];
		h--;
		sift_down(dist, out, h, 0, out[h]);
		out[h] = top;
	}
}

/*
 * scikit-learn's rule: the e empty clusters, in increasing order, take the e rows
 * farthest from their centroids (farthest first; the lower row among equals): the
 * row's values leave its cluster's sum and become the empty cluster's. Labels stay.
 * Nothing moves when every row sits on its centroid. Returns whether anything moved.
 */
static int
relocate(struct km *m, int e, int have_dists)
{
	const size_t n = m->n, d = m->d, k = m->k;
	if (!have_dists)
		rowdist_pass(m);
	double *dist = xmallocarray(n, sizeof *dist);
	int *lab = xmallocarray(n, sizeof *lab);
	read_real(m, m->dists, 0, n, dist);
	read_buf(m, m->labels, 0, n * 4, lab);
	double big = 0;
	for (size_t r = 0; r < n; r++)
		big = fmax(big, dist[r]);
	int moved = 0;
	if (big > 0) {
		size_t *far = xmallocarray((size_t)e, sizeof *far);
		int64_t *sums = xmallocarray(k * d, sizeof *sums);
		int *counts = xmallocarray(k, sizeof *counts);
		farthest(dist, n, (size_t)e, far);
		read_buf(m, m->sums, 0, k * d * 8, sums);
		read_buf(m, m->counts, 0, k * 4, counts);
		size_t idx = 0;
		for (size_t j = 0; j < k && idx < (size_t)e; j++) {
			if (counts[j] != 0)
				continue;
			size_t r = far[idx++];
			size_t old = (size_t)lab[r];
			for (size_t i = 0; i < d; i++) {
				/* The kernel's conversion: an exact float product, rounded half even. */
				int64_t q = llrint((double)(m->hx[r * d + i] * m->fscale[i]));
				sums[old * d + i] = (int64_t)((uint64_t)sums[old * d + i] - (uint64_t)q);
				sums[j * d + i] = q;
			}
			counts[j] = 1;
			counts[old]--;
		}
		write_buf(m, m->sums, 0, k * d * 8, sums);
		write_buf(m, m->counts, 0, k * 4, counts);
		vlog("relocated %d empty cluster%s", e, e == 1 ? "" : "s");
		moved = 1;
		free(far);
		free(sums);
		free(counts);
	}
	free(dist);
	free(lab);
	return moved;
}

/* ---- Lloyd ---- */

/* Runs Lloyd's iterations from the current centroids; leaves labels, dists and the
 * final centroids on the device and returns the inertia. */
static double
lloyd(struct km *m, int max_iter, int tol_on)
{
	struct state st;
	int it, strict = 0;
	const int minus1 = -1;
	double t0 = now_sec();

	m->t_vdist = 0;
	CL_CHECK(clEnqueueFillBuffer(m->x.queue, m->labels, &minus1, sizeof minus1, 0, m->n * 4,
	    0, NULL, NULL));
	for (it = 0; it < max_iter; it++) {
		fill_zero(m, m->sums, 0, m->k * m->d * 8);
		fill_zero(m, m->counts, 0, m->k * 4);
		fill_zero(m, m->state, 4 * SI_MOVED, 4);
		fill_zero(m, m->state, 4 * SI_NEXACT, 4);
		assign_pass(m, 1);
		if (verbose) {
			/* Timed apart, so -v reports what an iteration costs without it. */
			CL_CHECK(clFinish(m->x.queue));
			double t = now_sec();
			rowdist_pass(m);
			CL_CHECK(clFinish(m->x.queue));
			m->t_vdist += now_sec() - t;
		}
		finalize(m, 1, verbose);
		read_state(m, &st);
		if (st.empty > 0 && relocate(m, st.empty, verbose)) {
			finalize(m, 1, verbose);
			read_state(m, &st);
		}
		m->cur = 1 - m->cur;
		if (verbose)
			vlog("iteration %d: inertia %.10g, moved %d, exact %d, shift %.6g", it + 1,
			    st.inertia, st.moved, st.nexact, st.shift);
		if (tol_on && st.moved == 0) {
			strict = 1;
			vlog("converged at iteration %d: no label changed", it + 1);
			it++;
			break;
		}
		if (tol_on && st.shift <= m->tol_abs) {
			vlog("converged at iteration %d: shift %.6g within tolerance %.6g", it + 1,
			    st.shift, m->tol_abs);
			it++;
			break;
		}
	}
	m->n_iter = it;
	m->t_iter = now_sec() - t0;
	if (!strict) {
		/* Labels that match the final centroids. */
		fill_zero(m, m->state, 4 * SI_MOVED, 4);
		assign_pass(m, 0);
	}
	rowdist_pass(m);
	finalize(m, 0, 1);
	read_state(m, &st);
	return st.inertia;
}

/* Labels, dists and centroids of the current set, to the host. */
static void
fetch(struct km *m, struct km_result *res)
{
	double t = now_sec();
	read_buf(m, m->labels, 0, m->n * 4, res->labels);
	read_real(m, m->dists, 0, m->n, res->dists);
	read_real(m, m->set[m->cur].c64, 0, m->k * m->d, res->centroids);
	phase_add(PH_D2H, now_sec() - t);
}

/* ---- initial centroids ---- */

static void
copy_row(const struct km *m, size_t r, double *dst)
{
	for (size_t i = 0; i < m->d; i++)
		dst[i] = m->hx[r * m->d + i];
}

/* k distinct rows, uniformly (a partial Fisher-Yates shuffle). */
static void
init_random(struct km *m, struct rng *g, double *C)
{
	size_t *idx = xmallocarray(m->n, sizeof *idx);
	for (size_t i = 0; i < m->n; i++)
		idx[i] = i;
	for (size_t j = 0; j < m->k; j++) {
		size_t r = j + (size_t)rng_below(g, m->n - j), t = idx[j];
		idx[j] = idx[r];
		idx[r] = t;
		copy_row(m, idx[j], C + j * m->d);
	}
	free(idx);
}

/* One k-means++ pass: L candidate rows against every row. */
static void
kpp_pass(struct km *m, const size_t *rows, int L, int update)
{
	double *cand = xmallocarray((size_t)L * m->d, sizeof *cand);
	for (int t = 0; t < L; t++)
		copy_row(m, rows[t], cand + (size_t)t * m->d);
	write_real(m, m->cand, (size_t)L * m->d, cand);
	free(cand);
	cl_int cl_L = L, upd = update;
	cl_long ngt = (cl_long)m->ngroups;
	for (size_t b = 0; b < m->nbatch; b++) {
		cl_long row0;
		cl_int nb = bind(m, b, &row0);
		cl_long g0 = row0 / m->t.rg;
		args(m->kpp, 10, A(m->X), A(nb), A(m->cand), A(cl_L), A(m->dists), A(row0), A(m->part),
		    A(g0), A(ngt), A(upd));
		launch(m, m->kpp, CEIL_DIV((size_t)nb, (size_t)m->t.rg) * m->t.wg, m->t.wg);
	}
}

/* numpy's searchsorted(cumsum(closest), v): the first row whose running sum reaches
 * v, through the groups' partial sums pc; the last row if none does. */
static void
kpp_search(struct km *m, const double *pc, const double *v, int L, size_t *rows)
{
	const size_t rg = (size_t)m->t.rg;
	size_t *grp = xmallocarray((size_t)L, sizeof *grp);
	double *before = xmallocarray((size_t)L, sizeof *before);
	float *vals = xmallocarray((size_t)L * rg, sizeof *vals);

	for (int t = 0; t < L; t++) {
		double cum = 0;
		size_t g;
		for (g = 0; g < m->ngroups && cum + pc[g] < v[t]; g++)
			cum += pc[g];
		grp[t] = g;
		before[t] = cum;
		if (g < m->ngroups) {
			size_t first = g * rg, cnt = MIN(rg, m->n - first);
			CL_CHECK(clEnqueueReadBuffer(m->x.queue, m->dists, CL_FALSE, first * 4,
			    cnt * 4, vals + (size_t)t * rg, 0, NULL, NULL));
		}
	}
	CL_CHECK(clFinish(m->x.queue));
	for (int t = 0; t < L; t++) {
		if (grp[t] == m->ngroups) {
			rows[t] = m->n - 1;
			continue;
		}
		size_t first = grp[t] * rg, cnt = MIN(rg, m->n - first), r;
		double cum = before[t];
		for (r = 0; r < cnt - 1; r++) {
			cum += vals[(size_t)t * rg + r];
			if (cum >= v[t])
				break;
		}
		rows[t] = first + r;
	}
	free(grp);
	free(before);
	free(vals);
}

/* Greedy k-means++ as scikit-learn does it: the first centroid a uniform row, then for
 * each next one 2 + ln k candidates drawn with probability proportional to the squared
 * distance, keeping the one that lowers the potential most. The distances and
 * potentials are computed on the device; `dists' holds each row's closest distance. */
static void
init_kpp(struct km *m, struct rng *g, double *C)
{
	const size_t ng = m->ngroups;
	const int L = 2 + (int)log((double)m->k);
	double *part = xmallocarray(ng * (size_t)L, sizeof *part);
	double *pc = xmallocarray(ng, sizeof *pc), *v = xmallocarray((size_t)L, sizeof *v);
	size_t rows[64];
	const float inf = INFINITY;

	CL_CHECK(clEnqueueFillBuffer(m->x.queue, m->dists, &inf, sizeof inf, 0, m->n * 4, 0, NULL,
	    NULL));
	rows[0] = (size_t)rng_below(g, m->n);
	copy_row(m, rows[0], C);
	kpp_pass(m, rows, 1, 1);
	read_real(m, m->part, 0, ng, pc);
	double pot = 0;
	for (size_t i = 0; i < ng; i++)
		pot += pc[i];
	for (size_t c = 1; c < m->k; c++) {
		for (int t = 0; t < L; t++)
			v[t] = rng_uniform(g) * pot;
		kpp_search(m, pc, v, L, rows);
		kpp_pass(m, rows, L, 0);
		read_real(m, m->part, 0, ng * (size_t)L, part);
		int best = 0;
		double bestpot = INFINITY;
		for (int t = 0; t < L; t++) {
			double s = 0;
			for (size_t i = 0; i < ng; i++)
				s += part[(size_t)t * ng + i];
			if (s < bestpot) {
				bestpot = s;
				best = t;
			}
		}
		pot = bestpot;
		memcpy(pc, part + (size_t)best * ng, ng * sizeof *pc);
		copy_row(m, rows[best], C + c * m->d);
		kpp_pass(m, rows + best, 1, 1);
	}
	free(part);
	free(pc);
	free(v);
}

/* ---- the whole run ---- */

void
km_run(const struct matrix *X, const struct km_config *cfg, struct km_result *res)
{
	struct km m;
	km_open(&m, X, cfg);
	const size_t n = m.n, d = m.d, k = m.k;
	res->labels = xmallocarray(MAX(n, (size_t)1), sizeof *res->labels);
	res->dists = xmallocarray(MAX(n, (size_t)1), sizeof *res->dists);
	res->centroids = xmallocarray(k * d, sizeof *res->centroids);
	res->inertia = INFINITY;
	res->iterations = 0;

	if (cfg->assign_only) {
		double t = now_sec();
		set_centroids(&m, cfg->centroids);
		const int minus1 = -1;
		CL_CHECK(clEnqueueFillBuffer(m.x.queue, m.labels, &minus1, sizeof minus1, 0, n * 4,
		    0, NULL, NULL));
		assign_pass(&m, 0);
		rowdist_pass(&m);
		finalize(&m, 0, 1);
		struct state st;
		read_state(&m, &st);
		phase_add(PH_COMPUTE, now_sec() - t);
		res->inertia = st.inertia;
		fetch(&m, res);
		vlog("inertia %.10g", res->inertia);
		km_close(&m);
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
			init_random(&m, &g, C);
		else
			init_kpp(&m, &g, C);
		m.cur = 0;
		set_centroids(&m, C);
		CL_CHECK(clFinish(m.x.queue));
		phase_add("init", now_sec() - t);
		t = now_sec();
		double inertia = lloyd(&m, cfg->max_iter, cfg->tol > 0);
		phase_add(PH_COMPUTE, now_sec() - t);
		vlog("run %d: %d iterations in %.6f s, %.6f ms each (-v's inertia aside: %.6f s), inertia %.10g",
		    run + 1, m.n_iter, m.t_iter - m.t_vdist,
		    1e3 * (m.t_iter - m.t_vdist) / MAX(m.n_iter, 1), m.t_vdist, inertia);
		if (run == 0 || inertia < res->inertia) {
			res->inertia = inertia;
			res->iterations = m.n_iter;
			fetch(&m, res);
		}
	}
	free(C);
	km_close(&m);
}

void
km_result_free(struct km_result *res)
{
	free(res->labels);
	free(res->dists);
	free(res->centroids);
	memset(res, 0, sizeof *res);
}
