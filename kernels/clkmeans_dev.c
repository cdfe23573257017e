/* clkmeans_dev.c: Lloyd's k-means on an OpenCL device (see clkmeans.h), driving the
 * kernels of kernels/clkmeans.cl.
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
 * the whole run; clkmeans_dev.h names the files that hold the rest. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clkmeans_dev.h"
#include "clkmeans_tune.h"
#include "rng.h"
#include "timer.h"
#include "tune.h"

extern const char clkmeans_cl[];

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

void
km_launch(struct km *m, cl_kernel k, size_t global, size_t local)
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

void
km_fill_zero(struct km *m, cl_mem b, size_t off, size_t bytes)
{
	cl_uint zero = 0;
	CL_CHECK(clEnqueueFillBuffer(m->x.queue, b, &zero, sizeof zero, off, bytes, 0, NULL, NULL));
}

void
km_read_buf(struct km *m, cl_mem b, size_t off, size_t bytes, void *dst)
{
	CL_CHECK(clEnqueueReadBuffer(m->x.queue, b, CL_TRUE, off, bytes, dst, 0, NULL, NULL));
}

void
km_write_buf(struct km *m, cl_mem b, size_t off, size_t bytes, const void *src)
{
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

static int
is_pow2(int v)
{
	return v > 0 && (v & (v - 1)) == 0;
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

/* Iterations auto expects of a run that stops at the tolerance: runs of Lloyd with the
 * default tolerance on the suites' blobs end within 5 to 20; a guess, not a bound. */
enum { KM_ITER_GUESS = 20 };

/* The work auto weighs: rows x centroids x columns of each pass over the rows. A run
 * makes one a Lloyd iteration, one for its final labels and distances, and with
 * k-means++ about one more for the seeding (each of k picks measures every row). */
static double
km_work(size_t n, size_t d, const struct km_config *cfg)
{
	double passes = 1;
	if (!cfg->assign_only) {
		int iters = cfg->tol > 0 ? MIN(cfg->max_iter, (int)KM_ITER_GUESS) : cfg->max_iter;
		int runs = cfg->init == KM_INIT_GIVEN ? 1 : cfg->n_init;
		passes = (double)runs * (iters + 1 + (cfg->init == KM_INIT_PLUSPLUS));
	}
	return passes * (double)n * (double)cfg->k * (double)d;
}

/* clx_decide's model: the cost column of the tuning table's row for desc. */
static const struct cost_model *
row_cost(const char *desc, void *ctx)
{
	(void)ctx;
	return &TUNE_PICK(clkmeans_tune_table, desc)->cost;
}

static void
km_open(struct km *m, struct clmat *X, const struct km_config *cfg)
{
	memset(m, 0, sizeof *m);
	const char *prof = getenv("CLKMEANS_PROFILE");
	m->prof = prof != NULL && *prof != '\0' && strcmp(prof, "0") != 0;
	clx_open(clx_decide(cfg->device, cfg->platform, km_work(X->m.rows, X->m.cols, cfg),
	    row_cost, NULL), cfg->platform, m->prof ? CLX_PROFILE : 0, &m->x);
	double t0 = now_sec();
	clmat_read(X, &m->x, "the rows");
	phase_add(PH_READ, now_sec() - t0);
	m->n = X->m.rows;
	m->d = X->m.cols;
	m->k = (size_t)cfg->k;
	m->hx = X->m.data;
	m->fp64 = m->x.has_fp64;
	m->atom64 = has_extension(&m->x, "cl_khr_int64_base_atomics");
	choose_tune(m);
	if (!m->fp64)
		vlog("no float64: distances and their sums in float");
	const struct tune *t = &m->t;
	vlog("%zu rows x %zu columns, k = %zu; tiles of %zu rows x %d centroids x %d columns%s",
	    m->n, m->d, m->k, m->tm, t->tnt * t->rnv * 4, t->tk,
	    !t->local ? " (direct)" : t->a_res ? " (rows resident)" : "");
	t0 = now_sec();
	build(m);
	phase_add("build", now_sec() - t0);
	m->exact_groups = (size_t)m->x.compute_units * t->exact_cu;
	m->update_groups = (size_t)m->x.compute_units * t->update_cu;
	km_plan_memory(m, cfg->max_device_mem);
	t0 = now_sec();
	km_column_stats(m, cfg->tol);
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
		km_fill_zero(m, m->sums, 0, m->k * m->d * 8);
		km_fill_zero(m, m->counts, 0, m->k * 4);
		km_fill_zero(m, m->state, 4 * SI_MOVED, 4);
		km_fill_zero(m, m->state, 4 * SI_NEXACT, 4);
		km_assign_pass(m, 1);
		if (verbose) {
			/* Timed apart, so -v reports what an iteration costs without it. */
			CL_CHECK(clFinish(m->x.queue));
			double t = now_sec();
			km_rowdist_pass(m);
			CL_CHECK(clFinish(m->x.queue));
			m->t_vdist += now_sec() - t;
		}
		km_finalize(m, 1, verbose);
		read_state(m, &st);
		if (st.empty > 0 && km_relocate(m, st.empty, verbose)) {
			km_finalize(m, 1, verbose);
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
		km_fill_zero(m, m->state, 4 * SI_MOVED, 4);
		km_assign_pass(m, 0);
	}
	km_rowdist_pass(m);
	km_finalize(m, 0, 1);
	read_state(m, &st);
	return st.inertia;
}

/* Labels, dists and centroids of the current set, to the host. */
static void
fetch(struct km *m, struct km_result *res)
{
	double t = now_sec();
	km_read_buf(m, m->labels, 0, m->n * 4, res->labels);
	km_read_real(m, m->dists, 0, m->n, res->dists);
	km_read_real(m, m->set[m->cur].c64, 0, m->k * m->d, res->centroids);
	phase_add(PH_D2H, now_sec() - t);
}

/* ---- initial centroids ---- */

/* ---- the whole run ---- */

void
km_run(struct clmat *X, const struct km_config *cfg, struct km_result *res)
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
		km_set_centroids(&m, cfg->centroids);
		const int minus1 = -1;
		CL_CHECK(clEnqueueFillBuffer(m.x.queue, m.labels, &minus1, sizeof minus1, 0, n * 4,
		    0, NULL, NULL));
		km_assign_pass(&m, 0);
		km_rowdist_pass(&m);
		km_finalize(&m, 0, 1);
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
			km_init_random(&m, &g, C);
		else
			km_init_kpp(&m, &g, C);
		m.cur = 0;
		km_set_centroids(&m, C);
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
