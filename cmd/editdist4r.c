/* editdist4r: edit (Levenshtein) distances of byte-string pairs by the Four-Russians
 * method, on a CUDA GPU or the CPU. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cudadev.h"
#include "dense.h"
#include "editdist4r.h"
#include "err.h"
#include "input.h"
#include "output.h"
#include "seq.h"
#include "timer.h"

/* The Four-Russians block size when -t is not given, by measurement (bench/editdist4r). */
#define T_CPU 3
#define T_GPU 2

#define BATCH_BYTES ((size_t)64 << 20)	/* string bytes in one batch */
#define BATCH_PAIRS ((size_t)1 << 20)
#define MAX_LEN ((size_t)INT32_MAX)

enum { OPT_ALL = CLI_OPT_PROG, OPT_ALGO };

static const char *const algos[] = {"auto", "4r", "bp", "dp", NULL};

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: %s [options] [FILE ...]\n"
	    "       %s [options] -a FA -b FB\n"
	    "Edit distances of byte-string pairs by the Four-Russians method.\n"
	    "Each line of FILE is a pair \"A<TAB>B\"; with -a and -b the records of two FASTA,\n"
	    "FASTQ or one-sequence-a-line files pair up by position. One line per pair.\n"
	    "\n"
	    "  -a, --seqs-a FA        first sequences (FASTA, FASTQ or one a line)\n"
	    "  -b, --seqs-b FB        second sequences\n"
	    "      --all-vs-all       every record of FA against every record of FB (a matrix)\n"
	    "  -k, --max-dist K       print -1 for distances above K (computes only the band)\n"
	    "  -p, --path             add a CIGAR of =, X, I, D that turns A into B\n"
	    "  -t, --block T          Four-Russians block size 1..%d (default %d on the CPU,\n"
	    "                         %d on a GPU); selects --algo 4r unless --algo is given\n"
	    "      --algo ALGO        auto (default), 4r (Four-Russians), bp (bit-parallel),\n"
	    "                         dp (plain dynamic programming, on the CPU)\n"
	    "  -o, --output FILE      write to FILE instead of standard output\n"
	    "  -O, --output-format F  text (default) or npy (float32 distances)\n"
	    "  -d, --device SPEC      auto, cpu, gpu or gpu:N (default $ACCELKIT_DEVICE or auto)\n"
	    "  -j, --threads N        CPU threads\n"
	    "      --max-device-mem B limit GPU memory use (e.g. 512M)\n"
	    "      --list-devices     list the devices and exit\n"
	    "  -v, --verbose          device, engine and phase times on standard error\n"
	    "  -h, --help             this help\n"
	    "  -V, --version          version\n",
	    progname, progname, FR_TMAX, T_CPU, T_GPU);
}

/* Pairs gathered for one computation: strings in a pool, 16-byte aligned. */
struct batch {
	uint8_t *pool;
	size_t used, cap, max;	/* pool bytes: used, allocated, the most a batch takes */
	struct ed_pair *pairs;
	int32_t *dist;
	char **cigar;
	size_t n, ncap;
	int shared_pool;	/* --all-vs-all: the pool is the same every batch */
};

struct run {
	struct ed_opts eo;
	int path, fmt, gpu;
	struct ed_gpu *g;
	output *out;
	uint64_t written;	/* distances written (rows of an NPY list) */
	uint64_t cols;		/* --all-vs-all: the matrix's width */
	uint64_t cells;
	struct batch b[2], *pending;
	int cur;
};

static void *
hmem(const struct run *r, size_t n)
{
#ifdef ACCELKIT_CUDA
	if (r->gpu)
		return ed_host_alloc(n);
#endif
	(void)r;
	return xmalloc(n);
}

static void
hfree(const struct run *r, void *p)
{
#ifdef ACCELKIT_CUDA
	if (r->gpu) {
		ed_host_free(p);
		return;
	}
#endif
	(void)r;
	free(p);
}

/* Buffers start small and grow to the batch limits (pinned memory is slow to get). */
static void
batch_init(struct run *r, struct batch *b, size_t max)
{
	memset(b, 0, sizeof *b);
	b->max = max;
	b->cap = MIN(max, (size_t)1 << 16);
	b->pool = hmem(r, b->cap);
}

/* Room for want pairs. */
static void
batch_grow_pairs(struct run *r, struct batch *b, size_t want)
{
	if (want <= b->ncap)
		return;
	size_t cap = MIN(BATCH_PAIRS, MAX(want, MAX((size_t)1024, 2 * b->ncap)));
	struct ed_pair *p = hmem(r, cap * sizeof *p);
	int32_t *d = hmem(r, cap * sizeof *d);
	if (b->n > 0)
		memcpy(p, b->pairs, b->n * sizeof *p);
	hfree(r, b->pairs);
	hfree(r, b->dist);
	b->pairs = p;
	b->dist = d;
	if (r->path) {
		b->cigar = xreallocarray(b->cigar, cap, sizeof *b->cigar);
		memset(b->cigar + b->ncap, 0, (cap - b->ncap) * sizeof *b->cigar);
	}
	b->ncap = cap;
}

static void
batch_free(struct run *r, struct batch *b)
{
	if (!b->shared_pool)
		hfree(r, b->pool);
	hfree(r, b->pairs);
	hfree(r, b->dist);
	free(b->cigar);
}

static size_t
align16(size_t x)
{
	return (x + 15) & ~(size_t)15;
}

/* Room for one more pair of strings of n bytes in all: 0 when the batch is full. */
static int
batch_room(struct run *r, struct batch *b, size_t n)
{
	size_t need = align16(b->used) + n + 32;
	if (b->n == BATCH_PAIRS || (need > b->max && b->n > 0))
		return 0;
	if (need > UINT32_MAX)
		die("a pair of %zu bytes is too long (at most 4 GiB a pair)", n);
	if (need > b->cap) {
		size_t cap = MAX(need, MIN(b->max, 2 * b->cap));
		uint8_t *p = hmem(r, cap);
		memcpy(p, b->pool, b->used);
		hfree(r, b->pool);
		b->pool = p;
		b->cap = cap;
	}
	batch_grow_pairs(r, b, b->n + 1);
	return 1;
}

static uint32_t
pool_put(struct batch *b, const unsigned char *s, size_t n)
{
	size_t off = align16(b->used);
	memcpy(b->pool + off, s, n);
	b->used = off + n;
	return (uint32_t)off;
}

static void
check_len(const char *file, uint64_t line, size_t n)
{
	if (n > MAX_LEN)
		die_at(file, line, "a sequence of %zu bytes is too long (at most %zu)", n, MAX_LEN);
}

/* ---- computing and writing ---- */

static void
compute_start(struct run *r, struct batch *b)
{
	double t0 = now_sec();
	for (size_t i = 0; i < b->n; i++)
		r->cells += (uint64_t)b->pairs[i].alen * b->pairs[i].blen;
#ifdef ACCELKIT_CUDA
	if (r->gpu && r->eo.algo != ED_DP) {
		ed_gpu_submit(r->g, b->pool, b->used, b->shared_pool, b->pairs, b->n, b->dist);
		phase_add(PH_COMPUTE, now_sec() - t0);
		return;
	}
#endif
	ed_cpu_batch(b->pool, b->pairs, b->n, &r->eo, b->dist);
	phase_add(PH_COMPUTE, now_sec() - t0);
}

static void
compute_finish(struct run *r, struct batch *b)
{
	double t0 = now_sec();
#ifdef ACCELKIT_CUDA
	if (r->gpu && r->eo.algo != ED_DP)
		ed_gpu_wait(r->g);
#endif
	phase_add(PH_COMPUTE, now_sec() - t0);
	if (!r->path)
		return;
	t0 = now_sec();
	#pragma omp parallel for schedule(dynamic, 1)
	for (size_t i = 0; i < b->n; i++) {
		const struct ed_pair *p = &b->pairs[i];
		int64_t cost;
		if (b->dist[i] < 0)
			continue;
		b->cigar[i] = ed_cpu_align(b->pool + p->aoff, p->alen, b->pool + p->boff, p->blen,
		    r->eo.algo, r->eo.t, &cost);
		if (cost != b->dist[i])
			die("internal error: pair %zu: alignment costs %lld, distance is %d", i,
			    (long long)cost, b->dist[i]);
	}
	phase_add("path", now_sec() - t0);
}

static void
put_dist(struct run *r, int32_t d)
{
	if (r->fmt == FMT_NPY) {
		float f = (float)d;
		out_write(r->out, &f, sizeof f);
	} else {
		out_i64(r->out, d);
		/* --all-vs-all: a matrix row is r->cols distances */
		out_putc(r->out, r->cols > 0 && (r->written + 1) % r->cols != 0 ? '\t' : '\n');
	}
	r->written++;
}

static void
write_batch(struct run *r, struct batch *b)
{
	double t0 = now_sec();
	for (size_t i = 0; i < b->n; i++) {
		if (!r->path) {
			put_dist(r, b->dist[i]);
			continue;
		}
		out_i64(r->out, b->dist[i]);
		out_putc(r->out, '\t');
		out_puts(r->out, b->dist[i] < 0 ? "*" : b->cigar[i]);
		out_putc(r->out, '\n');
		free(b->cigar[i]);
		b->cigar[i] = NULL;
		r->written++;
	}
	phase_add(PH_WRITE, now_sec() - t0);
}

/* Hands the filled batch over and switches to the other one; the batch handed over
 * before is finished and written first, so reading overlaps the GPU's work. */
static void
flush(struct run *r)
{
	struct batch *b = &r->b[r->cur];
	if (r->pending != NULL) {
		compute_finish(r, r->pending);
		write_batch(r, r->pending);
		r->pending->n = 0;
		if (!r->pending->shared_pool)
			r->pending->used = 0;
		r->pending = NULL;
	}
	if (b->n == 0)
		return;
	compute_start(r, b);
	r->pending = b;
	r->cur ^= 1;
}

static void
add_pair(struct run *r, const unsigned char *a, size_t alen, const unsigned char *b,
    size_t blen)
{
	struct batch *bt = &r->b[r->cur];
	if (!batch_room(r, bt, alen + blen)) {
		flush(r);
		bt = &r->b[r->cur];
		batch_room(r, bt, alen + blen);
	}
	struct ed_pair *p = &bt->pairs[bt->n++];
	p->alen = (uint32_t)alen;
	p->aoff = pool_put(bt, a, alen);
	p->blen = (uint32_t)blen;
	p->boff = pool_put(bt, b, blen);
}

/* ---- the three input modes ---- */

static void
run_lines(struct run *r, const char *path)
{
	input *in = in_open(path);
	const unsigned char *a, *b;
	size_t alen, blen;
	double t0 = now_sec();

	while (seq_pair_next(in, &a, &alen, &b, &blen)) {
		check_len(in_name(in), in_lineno(in), MAX(alen, blen));
		add_pair(r, a, alen, b, blen);
	}
	in_close(in);
	phase_add(PH_READ, now_sec() - t0);
}

static void
run_records(struct run *r, const char *fa, const char *fb)
{
	seqfile *A = seq_open(fa), *B = seq_open(fb);
	const unsigned char *a, *b;
	size_t alen, blen;
	double t0 = now_sec();

	for (;;) {
		int ga = seq_next(A, &a, &alen), gb = seq_next(B, &b, &blen);
		if (ga != gb) {
			seqfile *more = ga ? A : B, *fewer = ga ? B : A;
			die_at(seq_name(more), seq_lineno(more),
			    "record %llu has no partner: %s has %llu records",
			    (unsigned long long)seq_count(more), seq_name(fewer),
			    (unsigned long long)seq_count(fewer));
		}
		if (!ga)
			break;
		check_len(seq_name(A), seq_lineno(A), alen);
		check_len(seq_name(B), seq_lineno(B), blen);
		add_pair(r, a, alen, b, blen);
	}
	seq_close(A);
	seq_close(B);
	phase_add(PH_READ, now_sec() - t0);
}

/* Every record of a file into one pool: offsets and lengths. */
struct recs {
	size_t n, cap;
	uint32_t *off, *len;
};

static void
read_all(struct run *r, struct batch *pool, const char *path, struct recs *rc)
{
	seqfile *f = seq_open(path);
	const unsigned char *s;
	size_t n;

	memset(rc, 0, sizeof *rc);
	while (seq_next(f, &s, &n)) {
		check_len(seq_name(f), seq_lineno(f), n);
		if (align16(pool->used) + n + 32 > pool->cap) {
			size_t cap = MAX(2 * pool->cap, align16(pool->used) + n + 32);
			if (cap > UINT32_MAX)
				die("%s: the sequences of --all-vs-all exceed 4 GiB", seq_name(f));
			uint8_t *p = hmem(r, cap);
			memcpy(p, pool->pool, pool->used);
			hfree(r, pool->pool);
			pool->pool = p;
			pool->cap = cap;
		}
		if (rc->n == rc->cap) {
			rc->cap = MAX(1024, 2 * rc->cap);
			rc->off = xreallocarray(rc->off, rc->cap, sizeof *rc->off);
			rc->len = xreallocarray(rc->len, rc->cap, sizeof *rc->len);
		}
		rc->len[rc->n] = (uint32_t)n;
		rc->off[rc->n++] = pool_put(pool, s, n);
	}
	seq_close(f);
}

static void
run_all(struct run *r, const char *fa, const char *fb)
{
	struct batch pool = {0};
	struct recs A, B;
	double t0 = now_sec();

	pool.cap = 1 << 20;
	pool.pool = hmem(r, pool.cap);
	read_all(r, &pool, fa, &A);
	read_all(r, &pool, fb, &B);
	phase_add(PH_READ, now_sec() - t0);
	if (r->fmt == FMT_NPY)
		npy_write_header(r->out, DT_F32, A.n, B.n);
	/* The matrix in batches of whole or partial rows; both batches share the pool. */
	for (int k = 0; k < 2; k++) {
		hfree(r, r->b[k].pool);
		r->b[k].pool = pool.pool;
		r->b[k].used = pool.used;
		r->b[k].cap = pool.cap;
		r->b[k].shared_pool = 1;
	}
	r->cols = B.n;
	if (B.n == 0 && r->fmt == FMT_TEXT)
		for (size_t i = 0; i < A.n; i++)
			out_putc(r->out, '\n');
	uint64_t total = (uint64_t)A.n * B.n, k = 0;
	while (k < total) {
		struct batch *b = &r->b[r->cur];
		size_t cnt = (size_t)MIN((uint64_t)BATCH_PAIRS, total - k);
		batch_grow_pairs(r, b, cnt);
		b->n = cnt;
		for (size_t q = 0; q < b->n; q++, k++) {
			struct ed_pair *p = &b->pairs[q];
			size_t i = (size_t)(k / B.n), j = (size_t)(k % B.n);
			p->aoff = A.off[i];
			p->alen = A.len[i];
			p->boff = B.off[j];
			p->blen = B.len[j];
		}
		flush(r);
	}
	flush(r);
	flush(r);
	free(A.off);
	free(A.len);
	free(B.off);
	free(B.len);
	hfree(r, pool.pool);
	for (int k = 0; k < 2; k++)
		r->b[k].pool = NULL;
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		CLI_COMMON_LONG,
		CLI_MAXMEM_LONG,
		{"seqs-a", required_argument, NULL, 'a'},
		{"seqs-b", required_argument, NULL, 'b'},
		{"all-vs-all", no_argument, NULL, OPT_ALL},
		{"max-dist", required_argument, NULL, 'k'},
		{"path", no_argument, NULL, 'p'},
		{"block", required_argument, NULL, 't'},
		{"algo", required_argument, NULL, OPT_ALGO},
		{NULL, 0, NULL, 0},
	};
	struct common_opts co;
	struct run r;
	const char *fa = NULL, *fb = NULL;
	int all = 0, t = 0, algo = -1, c;

	cli_init(argc, argv, &co);
	memset(&r, 0, sizeof r);
	r.eo.maxdist = -1;
	while ((c = getopt_long(argc, argv, CLI_COMMON_SHORT "a:b:k:pt:", longopts, NULL)) != -1) {
		switch (c) {
		case 'a': fa = optarg; break;
		case 'b': fb = optarg; break;
		case OPT_ALL: all = 1; break;
		case 'k': r.eo.maxdist = cli_int("--max-dist", optarg, 0, INT32_MAX); break;
		case 'p': r.path = 1; break;
		case 't': t = (int)cli_int("--block", optarg, 1, FR_TMAX); break;
		case OPT_ALGO: algo = cli_choice("--algo", optarg, algos); break;
		default: cli_common(c, optarg, &co, usage);
		}
	}
	cli_finish(&co);
	if (co.list_devices) {
		cuda_list_devices();
		return 0;
	}
	if ((fa != NULL) != (fb != NULL))
		usage_error("-a and -b go together");
	if (fa != NULL && optind < argc)
		usage_error("FILE arguments cannot be combined with -a and -b");
	if (all && fa == NULL)
		usage_error("--all-vs-all needs -a FA and -b FB");
	if (all && r.path)
		usage_error("--path cannot be combined with --all-vs-all");
	r.fmt = cli_out_format(&co, co.output);
	if (r.fmt == FMT_NPY && r.path)
		usage_error("--path writes text; it cannot be combined with -O npy");
	r.eo.algo = algo >= 0 ? algo : t > 0 ? ED_4R : ED_AUTO;

	struct cuda_dev dev;
	cuda_select(co.device, 0, &dev);
	r.gpu = dev.gpu;
	r.eo.t = t > 0 ? t : r.gpu ? T_GPU : T_CPU;
#ifdef ACCELKIT_CUDA
	if (r.gpu && r.eo.algo != ED_DP)
		r.g = ed_gpu_open(&dev, &r.eo, co.max_device_mem);
#endif
	if (r.gpu && r.eo.algo == ED_DP)
		vlog("--algo dp runs on the CPU");
	vlog("engine: %s%s, block size %d%s", algos[r.eo.algo],
	    r.eo.algo == ED_AUTO ? " (bit-parallel)" : "", r.eo.t,
	    r.path ? "; alignments on the CPU" : "");

	size_t cap = BATCH_BYTES;
	if (co.max_device_mem > 0)
		cap = MAX((size_t)1 << 20, MIN(cap, co.max_device_mem / 4));
	batch_init(&r, &r.b[0], cap);
	batch_init(&r, &r.b[1], cap);
	r.out = out_open(co.output);
	if (r.fmt == FMT_NPY && !all) {
		if (!out_seekable(r.out))
			die("-O npy needs a file to write to (-o FILE)");
		npy_write_header(r.out, DT_F32, 0, 1);
	}

	if (all) {
		run_all(&r, fa, fb);
	} else if (fa != NULL) {
		run_records(&r, fa, fb);
	} else if (optind == argc) {
		run_lines(&r, NULL);
	} else {
		for (int i = optind; i < argc; i++)
			run_lines(&r, argv[i]);
	}
	flush(&r);
	flush(&r);
	if (r.fmt == FMT_NPY && !all)
		npy_patch_header(r.out, 0, DT_F32, r.written, 1);
	out_close(r.out);
	batch_free(&r, &r.b[0]);
	batch_free(&r, &r.b[1]);
#ifdef ACCELKIT_CUDA
	if (r.g != NULL) {
		vlog("GPU engines: %s; kernel time %.3f ms", ed_gpu_engines(r.g),
		    ed_gpu_kernel_ms(r.g));
		ed_gpu_close(r.g);
	}
#endif
	phases_report();
	vlog("%llu cells", (unsigned long long)r.cells);
	return 0;
}
