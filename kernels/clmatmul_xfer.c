/* clmatmul_xfer.c: the multiply's traffic: whether rectangle transfers work here, the
 * uploads (rectangles, or packed on the host), the read-backs, the device buffers
 * (slots) they fill, and cm_multiply, which pipelines them with the kernels over
 * three queues ordered by events. Apart from the kernel parameters and launches
 * (clmatmul_ocl.c) and the plan (clmatmul_plan.c) it follows. */
#include <stdio.h>
#include <stdlib.h>
#include <pthread.h>
#include <string.h>

#include "clmatmul_engine.h"
#include "clstaging.h"
#include "devwork.h"
#include "timer.h"

/* A device buffer of the multiply's pipeline, with what it holds and the events that
 * order its reuse. */
struct slot {
	cl_mem buf;
	cl_mem packed;		/* A and B when cm_packs: buf packed */
	void *stage;		/* host copy for packed transfers (pinned: host) */
	struct clhost host;
	long key;		/* which panel it holds; -1: none */
	int last;		/* the step that used it last */
	cl_event ready;		/* its upload (for a C slot: its C0 upload) */
	cl_event used;		/* the last kernel that read or wrote it */
	cl_event read;		/* C: the read-back of its block */
	/* C with packed transfers: the block to copy out of stage once read is done */
	int pending;
	size_t r0, c0, rows, cols, pitch;
	long home;		/* C: the row of blocks of the block on its way home; -1 */
};

/* The multiply's count of C's blocks in the host's C, for its sink (below). */
struct mm;
static void block_home(struct mm *m, long bi);
static void rows_home(struct mm *m, long bi, size_t rows);

/* C's slot holds block (r0, c0) of rows x cols at pitch, still to be copied out. */
static void
slot_pend(struct slot *c, size_t r0, size_t c0, size_t rows, size_t cols, size_t pitch)
{
	c->pending = 1;
	c->r0 = r0;
	c->c0 = c0;
	c->rows = rows;
	c->cols = cols;
	c->pitch = pitch;
}

/* ---- rectangle transfers: whether this platform gets them right ---- */

/* Writes a 5 x 7 rectangle from inside a host array into the middle of a buffer with
 * another pitch and reads one back; the paper saw a driver copy contiguous bytes
 * instead. Any difference, or an error, selects packed copies. */
int
cm_rect_works(struct cm_engine *e)
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
void
cm_ev_log(struct cm_engine *e, const char *phase, cl_event ev)
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
void
cm_ev_report(struct cm_engine *e)
{
	for (size_t i = 0; i < e->nev; i++) {
		cl_ulong t0 = 0, t1 = 0;
		if (clGetEventProfilingInfo(e->ev[i], CL_PROFILING_COMMAND_START, sizeof t0, &t0,
		    NULL) == CL_SUCCESS && clGetEventProfilingInfo(e->ev[i],
		    CL_PROFILING_COMMAND_END, sizeof t1, &t1, NULL) == CL_SUCCESS && t1 >= t0) {
			phase_add(e->ev_phase[i], 1e-9 * (double)(t1 - t0));
			if (strcmp(e->ev_phase[i], PH_COMPUTE) == 0)
				e->kernel_sec += 1e-9 * (double)(t1 - t0);
		}
		clReleaseEvent(e->ev[i]);
	}
	e->nev = 0;
}

/* Zeros bytes of buf from off on the upload queue, after the event wait (may be NULL). */
static void
zero(struct cm_engine *e, cl_mem buf, size_t off, size_t bytes, cl_event wait)
{
	static const cl_uint z = 0;
	cl_event filled;
	CL_CHECK(clEnqueueFillBuffer(e->qh, buf, &z, sizeof z, off, bytes, wait ? 1 : 0,
	    wait ? &wait : NULL, &filled));
	cm_ev_log(e, "fill", filled);
}

/* ---- staged transfers: through the engine's ring of mapped buffers ---- */

/* The image of a block on the device: its rows at the device's pitch, each row the
 * host matrix's cols elements from (r0 + row, c0) (hcols columns a host row), then
 * zeros to the pitch. stage_copy moves elements [e0, e0 + n) of that image between a
 * staging buffer (the image's elements from e0) and the host matrix: into the buffer
 * (out 0: zeros in the padding) or out of it into the host matrix (out 1: the padding
 * left behind). A piece may start and end anywhere in a row: a ring smaller than one
 * row is a row in pieces. Rows of the piece are copied on the -j threads. */
static void
stage_copy(int out, char *buf, char *host, size_t hcols, size_t r0, size_t c0, size_t cols,
    size_t pitch, size_t e0, size_t n, size_t es)
{
	const size_t ra = e0 / pitch, rb = (e0 + n - 1) / pitch;
	#pragma omp parallel for schedule(static) if (n > (1 << 16) && rb > ra)
	for (size_t r = ra; r <= rb; r++) {
		const size_t lo = MAX(e0, r * pitch) - r * pitch;	/* columns of row r */
		const size_t hi = MIN(e0 + n, (r + 1) * pitch) - r * pitch;
		const size_t data = lo < cols ? MIN(hi, cols) - lo : 0;
		char *b = buf + (r * pitch + lo - e0) * es;
		char *h = host + ((r0 + r) * hcols + c0 + lo) * es;
		if (out) {
			memcpy(h, b, data * es);
		} else {
			memcpy(b, h, data * es);
			memset(b + data * es, 0, (hi - lo - data) * es);
		}
	}
}

/* The ring of a worker's engine, at least `want' bytes a buffer up to its bound (made
 * in the worker's thread: the mapping is the device's). */
static void
stage_ring(struct cm_engine *e, size_t want)
{
	size_t cap = MIN(MAX(want, e->esize), e->stage_bytes);
	cap = CEIL_DIV(cap, e->esize) * e->esize;
	if (e->ring != NULL && clstaging_cap(e->ring) >= cap)
		return;
	double t0 = now_sec();
	clstaging_close(e->ring);
	e->ring = clstaging_open(e->x->ctx, e->qh, CM_STAGE_BUFFERS, cap);
	phase_add("staging buffers", now_sec() - t0);	/* pinned: not free */
}

/* upload()'s staged way: the block's rows travel in pieces of the ring's size, each
 * piece filled by the host while the one before it is copied (clstaging_write, on the
 * upload queue after wait), the rows below the data zeroed on the device. Returns the
 * last piece's event (the queue is in order: all are done when it is). */
static cl_event
upload_staged(struct cm_engine *e, struct slot *s, const void *host, size_t hcols,
    size_t r0, size_t c0, size_t rows, size_t cols, size_t prows, size_t pitch,
    cl_event wait)
{
	const size_t es = e->esize, total = rows * pitch, piece = clstaging_cap(e->ring) / es;
	cl_uint nw = wait ? 1 : 0;
	cl_event ev = NULL;
	double t0 = now_sec();

	if (rows < prows) {
		zero(e, s->buf, rows * pitch * es, (prows - rows) * pitch * es, wait);
		nw = 0;	/* the queue is in order */
	}
	for (size_t e0 = 0; e0 < total; e0 += piece) {
		const size_t n = MIN(piece, total - e0);
		struct clstage *b = clstaging_acquire(e->ring);	/* its last copy done */
		stage_copy(0, b->p, (char *)host, hcols, r0, c0, cols, pitch, e0, n, es);
		if (ev != NULL)
			cm_ev_log(e, PH_H2D, ev);
		ev = clstaging_write(e->ring, b, e->qh, s->buf, e0 * es, n * es, nw, &wait);
		nw = 0;
	}
	e->stage_up += total * es;
	e->stage_up_sec += now_sec() - t0;
	ev_set(&s->ready, ev);
	return ev;
}

/* The read-back of a C slot's block (s->pending, staged) into the host's C of hcols
 * columns, once its kernel (s->used) is done: up to the ring's count of pieces in
 * flight on the read-back queue, each copied out of its buffer as it arrives while the
 * next travel. Called for a block while the next block's kernels run. */
static void
download_staged(struct cm_engine *e, struct slot *s, void *host, size_t hcols, struct mm *m)
{
	if (!s->pending || !e->staged)	/* packed: unpack's */
		return;
	const size_t es = e->esize, total = s->rows * s->pitch;
	const size_t piece = clstaging_cap(e->ring) / es, pieces = CEIL_DIV(total, piece);
	const size_t k = (size_t)clstaging_count(e->ring);
	struct clstage *fly[CM_STAGE_BUFFERS];
	double t0 = now_sec();

	for (size_t i = 0; i < pieces + k; i++) {
		if (i >= k && i - k < pieces) {
			/* pieces go in order round the ring: i - k's buffer is the next one */
			const size_t e0 = (i - k) * piece;
			struct clstage *b = fly[(i - k) % k];
			clstaging_wait(b);
			stage_copy(1, b->p, host, hcols, s->r0, s->c0, s->cols, s->pitch, e0,
			    MIN(piece, total - e0), es);
			clstaging_release(b);
			/* a block of whole rows: the rows this piece ends are final */
			if (s->cols == hcols)
				rows_home(m, s->home, MIN(e0 + piece, total) / s->pitch);
		}
		if (i < pieces) {
			const size_t e0 = i * piece;
			fly[i % k] = clstaging_acquire(e->ring);
			cm_ev_log(e, PH_D2H, clstaging_read(e->ring, fly[i % k], e->qd, s->buf,
			    e0 * es, MIN(piece, total - e0) * es, 1, &s->used));
		}
	}
	e->stage_down += total * es;
	e->stage_down_sec += now_sec() - t0;
	s->pending = 0;
}

/* Host to device: rows [r0, r0+rows) x columns [c0, c0+cols) of a host matrix with
 * hcols columns into a buffer of prows x pitch elements, zeros around the data, after
 * the event wait (may be NULL). Returns the event of the upload. */
static cl_event
upload(struct cm_engine *e, struct slot *s, const void *host, size_t hcols, size_t r0,
    size_t c0, size_t rows, size_t cols, size_t prows, size_t pitch, cl_event wait)
{
	const size_t es = e->esize;
	const char *src = (const char *)host + (r0 * hcols + c0) * es;
	cl_event ev = NULL;
	cl_uint nw = wait ? 1 : 0;

	if (e->staged)
		return upload_staged(e, s, host, hcols, r0, c0, rows, cols, prows, pitch, wait);

	if (c0 == 0 && cols == hcols && cols == pitch) {
		/* Whole rows at the device's pitch (a matrix in core whose sides are whole
		 * tiles): one plain copy in either mode, zeros below. */
		if (rows < prows) {
			zero(e, s->buf, rows * pitch * es, (prows - rows) * pitch * es, wait);
			nw = 0;	/* the queue is in order */
		}
		CL_CHECK(clEnqueueWriteBuffer(e->qh, s->buf, CL_FALSE, 0, rows * cols * es, src,
		    nw, nw ? &wait : NULL, &ev));
		ev_set(&s->ready, ev);
		return ev;
	}
	if (!e->rect) {
		/* The staging copy may still be in flight from this slot's last upload. */
		if (s->ready)
			CL_CHECK(clWaitForEvents(1, &s->ready));
		char *dst = s->stage;
		double t0 = now_sec();
		#pragma omp parallel for schedule(static) if (prows * pitch > (1 << 16))
		for (size_t r = 0; r < prows; r++) {
			size_t n = r < rows ? cols : 0;
			if (n)
				memcpy(dst + r * pitch * es, src + r * hcols * es, n * es);
			memset(dst + (r * pitch + n) * es, 0, (pitch - n) * es);
		}
		e->pack_sec += now_sec() - t0;
		CL_CHECK(clEnqueueWriteBuffer(e->qh, s->buf, CL_FALSE, 0, prows * pitch * es, dst,
		    nw, wait ? &wait : NULL, &ev));
		ev_set(&s->ready, ev);
		return ev;
	}
	if (rows < prows || cols < pitch) {
		zero(e, s->buf, 0, prows * pitch * es, wait);
		nw = 0;	/* the queue is in order */
	}
	size_t bo[3] = {0, 0, 0}, ho[3] = {c0 * es, r0, 0}, region[3] = {cols * es, rows, 1};
	CL_CHECK(clEnqueueWriteBufferRect(e->qh, s->buf, CL_FALSE, bo, ho, region, pitch * es, 0,
	    hcols * es, 0, host, nw, nw ? &wait : NULL, &ev));
	ev_set(&s->ready, ev);
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
		cl_event p = cm_pack(e, which, s->buf, *ld, s->packed, pi, pk, 1, &ev);
		ev_set(&s->ready, p);
		cm_ev_log(e, "pack", p);
	}
	cm_ev_log(e, PH_H2D, ev);
}

/* Copies a packed read-back of C into the user's matrix (n columns). */
static void
unpack(struct cm_engine *e, struct slot *s, void *c, size_t n)
{
	if (!s->pending || e->staged)	/* staged: download_staged's */
		return;
	CL_CHECK(clWaitForEvents(1, &s->read));
	const size_t es = e->esize;
	double t0 = now_sec();
	#pragma omp parallel for schedule(static) if (s->rows * s->cols > (1 << 16))
	for (size_t r = 0; r < s->rows; r++)
		memcpy((char *)c + ((s->r0 + r) * n + s->c0) * es,
		    (const char *)s->stage + r * s->pitch * es, s->cols * es);
	e->pack_sec += now_sec() - t0;
	s->pending = 0;
}

static void
slot_alloc(struct cm_engine *e, struct slot *s, size_t elems, int packed)
{
	memset(s, 0, sizeof *s);
	s->key = -1;
	s->last = -1;
	s->home = -1;
	s->buf = CL_CREATE(clCreateBuffer(e->x->ctx, CL_MEM_READ_WRITE, elems * e->esize, NULL,
	    &cl_err_));
	if (packed && cm_packs(e))
		s->packed = CL_CREATE(clCreateBuffer(e->x->ctx, CL_MEM_READ_WRITE,
		    elems * e->esize, NULL, &cl_err_));
	if (!e->rect && !e->staged)
		s->stage = clhost_alloc(e->x, mul_size(elems, e->esize, "a block"),
		    "a packed block", &s->host);
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
	clhost_free(&s->host);
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

/* ---- the multiply ---- */

enum { ACC_IN = 1, RAW_OUT = 2 };	/* gemm's modes, as in clmatmul.cl */

/* The multiply on common/devwork: a unit is a block of C (its index, row-major over
 * the plan's blocks), a worker is a device with its own buffers, and the engine hands
 * the next block to whichever device frees up first, so a faster device takes more.
 * A block's bytes go straight into the user's C (written in place): the caller only
 * takes the units back in order to free their slots. */
struct mm {
	struct cm_engine **es;
	const struct cm_problem *pr;
	struct plan pl;
	/* the sink's count: blocks home a row of blocks, the rows of blocks all home,
	 * the rows said */
	pthread_mutex_t mu;
	size_t *home, front, said;
};

/* Rows [0, rows) of C final: said to the sink once each, in increasing order. */
static void
say_rows(struct mm *m, size_t rows)
{
	rows = MIN(rows, m->pr->m);
	if (rows > m->said && m->pr->sink != NULL) {
		m->said = rows;
		m->pr->sink->rows_done(m->pr->sink->ctx, rows);
	}
}

/* A block of row of blocks bi is in the host's C. */
static void
block_home(struct mm *m, long bi)
{
	if (bi < 0 || m->pr->sink == NULL)
		return;
	pthread_mutex_lock(&m->mu);
	m->home[bi]++;
	while (m->front < m->pl.nbm && m->home[m->front] == m->pl.nbn)
		m->front++;
	say_rows(m, m->front * m->pl.bm);
	pthread_mutex_unlock(&m->mu);
}

/* The first rows of a block of whole rows of row of blocks bi are in the host's C:
 * final once every row of blocks before it is. */
static void
rows_home(struct mm *m, long bi, size_t rows)
{
	if (bi < 0 || m->pr->sink == NULL)
		return;
	pthread_mutex_lock(&m->mu);
	if ((size_t)bi == m->front)
		say_rows(m, (size_t)bi * m->pl.bm + rows);
	pthread_mutex_unlock(&m->mu);
}

/* The block slot c held is home (its read-back waited for, copied out): counted. */
static void
slot_home(struct mm *m, struct slot *c)
{
	block_home(m, c->home);
	c->home = -1;
}

/* A device's part of a multiply: its engine, its buffers and where its blocks stand. */
struct run {
	struct cm_engine *e;
	struct slot sa[2], sb[2], sc[2], s0[2];
	int step, mine;
	double t0;
};

struct unit {
	size_t block;
};

static void *
mm_init(void *ctx, int w)
{
	struct mm *m = ctx;
	const struct plan *pl = &m->pl;
	struct run *r = xcalloc(1, sizeof *r);

	r->e = m->es[w];
	r->e->blocks = 0;
	r->e->flops = r->e->kernel_sec = r->e->pack_sec = 0;
	r->e->stage_up_sec = r->e->stage_down_sec = 0;
	r->e->stage_up = r->e->stage_down = 0;
	if (r->e->staged) {
		size_t big;
		cm_footprint(r->e, pl, &big);
		stage_ring(r->e, big);
	}
	for (int i = 0; i < pl->slots; i++) {
		slot_alloc(r->e, &r->sa[i], pl->bm * pl->bk, 1);
		slot_alloc(r->e, &r->sb[i], pl->bk * pl->bn, 1);
		slot_alloc(r->e, &r->sc[i], pl->bm * pl->bn, 0);
		if (pl->c0slot)
			slot_alloc(r->e, &r->s0[i], pl->bm * pl->bn, 0);
	}
	return r;
}

static int
mm_make(void *ctx, void *slot, uint64_t k)
{
	const struct mm *m = ctx;
	const uint64_t total = (uint64_t)m->pl.nbm * m->pl.nbn;
	struct unit *u = slot;

	if (k >= total)
		return DW_NONE;
	u->block = (size_t)k;
	return k + 1 == total ? DW_LAST : DW_MORE;
}

/* One block of C: the K panels in order, the first starting the sums (plus beta C0)
 * and each later one continuing them (ACC_IN), all but the last storing raw sums
 * (RAW_OUT). Every block is the same kernel over the same panels whichever device
 * takes it, so the bytes of C do not depend on who took what. Uploads go on one
 * queue, kernels on another, read-backs on a third, ordered by events, so that with
 * two slots of each kind the next panels travel while the current ones are
 * multiplied. A panel still in a slot is reused. The block waits first for the one
 * that last used its C slot (two blocks back) to be read: a device keeps at most two
 * blocks in flight, and takes its next from the engine only as it frees up. */
static int
mm_process(void *ctx, void *state, int w, void *slot, char *err)
{
	struct mm *m = ctx;
	struct run *r = state;
	struct cm_engine *e = r->e;
	const struct cm_problem *pr = m->pr;
	const struct plan pl = m->pl;
	const size_t M = pr->m, N = pr->n, K = pr->k, es = e->esize;
	const size_t BMp = (size_t)e->p.bm, BNp = (size_t)e->p.bn, BKp = (size_t)e->p.bk;
	const int beta = pr->beta != 0;
	struct slot *sa = r->sa, *sb = r->sb;
	const int ns = pl.slots;
	const size_t acols = e->o.ta ? M : K, bcols = e->o.tb ? K : N;
	const size_t block = ((const struct unit *)slot)->block;
	const size_t bi = block / pl.nbn, bj = block % pl.nbn;
	const size_t m0 = bi * pl.bm, mr = MIN(pl.bm, M - m0), mp = round_up(mr, BMp);
	const size_t n0 = bj * pl.bn, nr = MIN(pl.bn, N - n0), np = round_up(nr, BNp);
	struct slot *c = &r->sc[r->mine % ns], *c0 = pl.c0slot ? &r->s0[r->mine % ns] : c;

	(void)w;
	(void)err;
	if (r->mine == 0)
		r->t0 = now_sec();
	r->mine++;
	e->blocks++;
	e->flops += 2.0 * (double)mr * (double)nr * (double)K;
	cl_event first[2];
	cl_uint nfirst = 0;

	/* The slot's previous block goes home before the slot is reused. */
	if (c->read)
		CL_CHECK(clWaitForEvents(1, &c->read));
	unpack(e, c, pr->c, N);
	download_staged(e, c, pr->c, N, m);	/* (done already, as the next block ran) */
	slot_home(m, c);
	if (c->read)
		first[nfirst++] = c->read;
	if (beta) {
		cl_event up = upload(e, c0, pr->c0, N, m0, n0, mr, nr, mp, np,
		    c0 == c ? (c->read ? c->read : c->used) : c0->used);
		cm_ev_log(e, PH_H2D, up);
		first[nfirst++] = c0->ready;
	}
	for (size_t bp = 0; bp < pl.nbk; bp++, r->step++) {
		const size_t k0 = bp * pl.bk, kr = MIN(pl.bk, K - k0), kp = round_up(kr, BKp);
		const long akey = (long)(bi * pl.nbk + bp), bkey = (long)(bp * pl.nbn + bj);
		struct slot *a = pick_slot(sa, ns, akey), *b = pick_slot(sb, ns, bkey);
		size_t lda = e->o.ta ? mp : kp, ldb = e->o.tb ? kp : np;

		if (a->key != akey) {
			upload_panel(e, a, 0, pr->a, acols, e->o.ta, m0, mr, mp, k0, kr, kp, &lda);
			a->key = akey;
		}
		if (b->key != bkey) {
			upload_panel(e, b, 1, pr->b, bcols, !e->o.tb, n0, nr, np, k0, kr, kp, &ldb);
			b->key = bkey;
		}
		a->last = b->last = r->step;
		CL_CHECK(clFlush(e->qh));

		int mode = (bp > 0 ? ACC_IN : 0) | (bp + 1 < pl.nbk ? RAW_OUT : 0);
		cm_set_gemm_args(e, mp, np, kp, a->packed ? a->packed : a->buf, lda,
		    b->packed ? b->packed : b->buf, ldb, c->buf, np, c0->buf, np, pr->alpha,
		    pr->beta, mode);
		cl_event wait[4] = {a->ready, b->ready}, k;
		cl_uint nw = 2;
		for (cl_uint i = 0; bp == 0 && i < nfirst; i++)
			wait[nw++] = first[i];
		k = cm_launch_gemm(e, mp, np, nw, wait);
		CL_CHECK(clFlush(e->x->queue));
		ev_set(&a->used, k);
		ev_set(&b->used, k);
		ev_set(&c->used, k);
		ev_set(&c0->used, k);

		if (bp + 1 == pl.nbk) {
			cl_event rd;
			c->home = (long)bi;
			if (e->staged) {
				/* read back through the ring once the next block is queued */
				slot_pend(c, m0, n0, mr, nr, np);
				cm_ev_log(e, PH_COMPUTE, k);
				continue;
			}
			if (n0 == 0 && nr == N && np == N) {
				/* whole rows at C's own pitch */
				CL_CHECK(clEnqueueReadBuffer(e->qd, c->buf, CL_FALSE, 0, mr * N * es,
				    (char *)pr->c + m0 * N * es, 1, &k, &rd));
			} else if (e->rect) {
				size_t bo[3] = {0, 0, 0}, ho[3] = {n0 * es, m0, 0};
				size_t region[3] = {nr * es, mr, 1};
				CL_CHECK(clEnqueueReadBufferRect(e->qd, c->buf, CL_FALSE, bo, ho, region,
				    np * es, 0, N * es, 0, pr->c, 1, &k, &rd));
			} else {
				CL_CHECK(clEnqueueReadBuffer(e->qd, c->buf, CL_FALSE, 0, mr * np * es,
				    c->stage, 1, &k, &rd));
				slot_pend(c, m0, n0, mr, nr, np);
			}
			CL_CHECK(clFlush(e->qd));
			ev_set(&c->read, rd);
			cm_ev_log(e, PH_D2H, rd);
		}
		cm_ev_log(e, PH_COMPUTE, k);
	}
	/* The block before this one goes home through the ring while this one computes
	 * (its slot is the other; with one slot there is one block, read back in fini). */
	struct slot *prev = &r->sc[r->mine % ns];
	if (prev != c && e->staged) {
		download_staged(e, prev, pr->c, N, m);
		slot_home(m, prev);
	}
	return 0;
}

/* The device's queues drain, the last blocks go home, its buffers go: within the
 * worker's busy time (devwork counts fini), as the device is busy until then. */
static void
mm_fini(void *ctx, void *state, int w)
{
	struct mm *m = ctx;
	struct run *r = state;
	struct cm_engine *e = r->e;

	(void)w;
	CL_CHECK(clFinish(e->qh));
	CL_CHECK(clFinish(e->x->queue));
	CL_CHECK(clFinish(e->qd));
	for (int i = 0; i < m->pl.slots; i++) {
		unpack(e, &r->sc[i], m->pr->c, m->pr->n);
		download_staged(e, &r->sc[i], m->pr->c, m->pr->n, m);
		slot_home(m, &r->sc[i]);
	}
	for (int i = 0; i < m->pl.slots; i++) {
		slot_free(&r->sa[i]);
		slot_free(&r->sb[i]);
		slot_free(&r->sc[i]);
		if (m->pl.c0slot)
			slot_free(&r->s0[i]);
	}
	free(r);
}

/* A block's share of the work for -v: its flops. */
static double
mm_weight(void *ctx, const void *slot)
{
	const struct mm *m = ctx;
	const size_t block = ((const struct unit *)slot)->block;
	const size_t bi = block / m->pl.nbn, bj = block % m->pl.nbn;
	const double mr = (double)MIN(m->pl.bm, m->pr->m - bi * m->pl.bm);
	const double nr = (double)MIN(m->pl.bn, m->pr->n - bj * m->pl.bn);
	return 2.0 * mr * nr * (double)m->pr->k;
}

static const struct dw_ops mm_ops = {mm_init, mm_make, mm_process, mm_fini, mm_weight};

void
cm_multiply_many(struct cm_engine **es, int ne, const struct cm_problem *pr)
{
	/* One plan for all, under the smallest device bound: the blocks are the units
	 * handed out, so every engine must cut C alike. */
	int least = 0;
	for (int i = 1; i < ne; i++)
		if (es[i]->budget < es[least]->budget ||
		    es[i]->x->max_alloc < es[least]->x->max_alloc)
			least = i;
	struct mm m = {.es = es, .pr = pr};
	size_t big;
	cm_plan(es[least], pr->m, pr->n, pr->k, pr->beta != 0, pr->sink != NULL, &m.pl);
	pthread_mutex_init(&m.mu, NULL);
	m.home = xcalloc(m.pl.nbm, sizeof *m.home);
	const struct plan *pl = &m.pl;
	vlog("plan: %zu x %zu block%s of C of %zu x %zu, K in %zu panel%s of %zu, %s "
	    "transfers, %zu bytes on the device%s", pl->nbm, pl->nbn, pl->nbm * pl->nbn > 1 ?
	    "s" : "", pl->bm, pl->bn, pl->nbk, pl->nbk > 1 ? "s" : "", pl->bk, es[0]->staged ?
	    "staged" : es[0]->rect ? "rectangle" : "packed", cm_footprint(es[least], pl, &big), ne > 1 ? " (each)" : "");

	/* A worker thread a device: each feeds its own queues, and OpenCL calls on
	 * different queues and kernels may come from different threads. */
	const int nslots = dw_slots(ne);
	struct unit *units = xcalloc((size_t)nslots, sizeof *units);
	void **slotp = xcalloc((size_t)nslots, sizeof *slotp);
	for (int i = 0; i < nslots; i++)
		slotp[i] = &units[i];
	double t0 = now_sec();
	dw *d = dw_open(&mm_ops, &m, slotp, nslots, ne);
	while (dw_next(d, NULL) != NULL)
		;	/* each block is in C already */
	char (*name)[32] = xcalloc((size_t)ne, sizeof *name);
	const char **names = xcalloc((size_t)ne, sizeof *names);
	for (int i = 0; i < ne; i++) {
		snprintf(name[i], sizeof name[i], "device %d:%d", es[i]->x->platform_index,
		    es[i]->x->device_index);
		names[i] = name[i];
	}
	dw_join(d);	/* the queues drain in fini: busy until then */
	phase_add("multiply (wall)", now_sec() - t0);
	if (ne > 1)
		dw_report(d, names);
	dw_close(d);
	for (int i = 0; i < ne; i++) {
		struct cm_engine *e = es[i];
		if (e->pack_sec > 0)
			phase_add("pack", e->pack_sec);
		if (e->staged) {
			/* host time in the staged copies: filling and emptying the ring, and
			 * waiting for its buffers (and, in blocks, for the kernels before them) */
			phase_add("staging (up)", e->stage_up_sec);
			phase_add("staging (down)", e->stage_down_sec);
			vlog("%s%sstaging: %zu bytes up in %.1f ms (%.2f GB/s), %zu bytes down in "
			    "%.1f ms (%.2f GB/s), through %d buffers of %zu bytes", ne > 1 ?
			    names[i] : "", ne > 1 ? ": " : "", e->stage_up, 1e3 * e->stage_up_sec,
			    e->stage_up_sec > 0 ? 1e-9 * (double)e->stage_up / e->stage_up_sec : 0.0,
			    e->stage_down, 1e3 * e->stage_down_sec, e->stage_down_sec > 0 ?
			    1e-9 * (double)e->stage_down / e->stage_down_sec : 0.0,
			    e->ring ? clstaging_count(e->ring) : 0, e->ring ? clstaging_cap(e->ring) :
			    (size_t)0);
		}
		cm_ev_report(e);
		if (ne > 1)
			vlog("%s: %zu of %zu blocks, %.3g GFLOP, kernels %.1f ms", names[i],
			    e->blocks, pl->nbm * pl->nbn, 1e-9 * e->flops, 1e3 * e->kernel_sec);
	}
	free(units);
	free(slotp);
	free(name);
	free(names);
	free(m.home);
	pthread_mutex_destroy(&m.mu);
}

void
cm_multiply(struct cm_engine *e, const struct cm_problem *pr)
{
	cm_multiply_many(&e, 1, pr);
}
