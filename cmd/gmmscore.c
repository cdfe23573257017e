/* gmmscore: GMM observation scores of speech feature frames against many models.
 *
 * A reader thread parses the feature files into chunks of frames (several utterances
 * can share a chunk) while the device scores the previous chunk and the main thread
 * writes the one before that: reading, scoring and writing overlap, and memory stays
 * bounded by a few chunks. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cudadev.h"
#include "dense.h"
#include "err.h"
#include "gmmscore.h"
#include "gmmscore_tune.h"
#include "output.h"
#include "speech.h"
#include "timer.h"
#include "tune.h"

#define NBUF 3				/* chunks in flight: reading, scoring, writing */
#define HOST_RESULT_MAX ((size_t)128 << 20)	/* bytes of scores a chunk, --all */

enum { OPT_DIMS = CLI_OPT_PROG, OPT_MODE, OPT_CHUNK };

struct opts {
	const char *models;
	enum speech_format format;
	int dims;			/* 0: all the models' dimensions */
	enum gmm_mode mode;
	size_t top;			/* 0 with --all */
	int all;
	size_t chunk;			/* 0: chosen here */
};

/* A run of consecutive frames of one utterance within a chunk. */
struct seg {
	const char *key;
	uint64_t first;			/* index of its first frame in the utterance */
	size_t n;
};

struct chunk {
	float *x;			/* cap x dp features */
	size_t n;
	struct seg *seg;
	size_t nseg, capseg;
	uint32_t *idx;			/* n x top: the best models */
	float *tv;			/* n x top: their scores */
	float *val;			/* n x nmodels: every score, where needed */
	int full, last;
};

/* Utterance keys live until the end, in blocks that never move. */
struct arena {
	char *block;
	size_t used, cap;
	char **old;
	size_t nold;
};

struct pipeline {
	const struct opts *o;
	char **files;
	int nfiles;
	int model_dim, dims, dp;
	size_t cap;			/* frames a chunk */
	struct chunk buf[NBUF];
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct arena keys;
	double t_read;
};

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: gmmscore -m MODELS [-av] [-t N] [--mode sum|max] [--dims N]\n"
	    "                [-f text|npy|htk|ark] [--chunk FRAMES] [-o FILE] [-O text|npy]\n"
	    "                [-d DEVICE] [-j N] [--max-device-mem BYTES] [FEATURES ...]\n"
	    "       gmmscore --list-devices\n"
	    "\n"
	    "  -m, --models FILE      Kaldi (text or binary), HTK MMF or gmmscore text models\n"
	    "  -f, --format FMT       features: auto (default), text, npy, htk or ark\n"
	    "      --dims N           use the first N dimensions of models and features\n"
	    "      --mode sum|max     log-likelihood (default) or best component\n"
	    "  -t, --top N            the N best models a frame (default 1)\n"
	    "  -a, --all              every model's score: a Kaldi text archive, or -O npy\n"
	    "      --chunk FRAMES     frames scored at a time (default: sized to memory)\n"
	    "  -o, --output FILE      write to FILE (default standard output)\n"
	    "  -O, --output-format F  text (default) or npy (with --all)\n"
	    "  -d, --device SPEC      auto, cpu, gpu or gpu:N ($ACCELKIT_DEVICE)\n"
	    "  -j, --threads N        CPU threads\n"
	    "      --max-device-mem B bound on the GPU memory used\n"
	    "      --list-devices     list the devices and exit\n"
	    "  -v, --verbose          device, sizes and phase times on stderr\n"
	    "  -h, --help, -V, --version\n");
}

/* ---- the chunk ring ---- */

static char *
arena_dup(struct arena *a, const char *s)
{
	size_t n = strlen(s) + 1;
	if (a->used + n > a->cap) {
		if (a->block != NULL) {
			a->old = xreallocarray(a->old, a->nold + 1, sizeof *a->old);
			a->old[a->nold++] = a->block;
		}
		a->cap = MAX(n, (size_t)1 << 16);
		a->block = xmalloc(a->cap);
		a->used = 0;
	}
	char *d = a->block + a->used;
	memcpy(d, s, n);
	a->used += n;
	return d;
}

static void
arena_free(struct arena *a)
{
	for (size_t i = 0; i < a->nold; i++)
		free(a->old[i]);
	free(a->old);
	free(a->block);
}

static struct chunk *
wait_chunk(struct pipeline *pl, int i, int full)
{
	struct chunk *c = &pl->buf[i];
	pthread_mutex_lock(&pl->mu);
	while (c->full != full)
		pthread_cond_wait(&pl->cv, &pl->mu);
	pthread_mutex_unlock(&pl->mu);
	return c;
}

static void
set_chunk(struct pipeline *pl, struct chunk *c, int full)
{
	pthread_mutex_lock(&pl->mu);
	c->full = full;
	pthread_cond_broadcast(&pl->cv);
	pthread_mutex_unlock(&pl->mu);
}

static void
add_seg(struct chunk *c, const char *key, uint64_t first, size_t n)
{
	if (c->nseg > 0) {
		struct seg *s = &c->seg[c->nseg - 1];
		if (s->key == key && s->first + s->n == first && n > 0) {
			s->n += n;
			return;
		}
	}
	if (c->nseg == c->capseg) {
		c->capseg = c->capseg ? 2 * c->capseg : 16;
		c->seg = xreallocarray(c->seg, c->capseg, sizeof *c->seg);
	}
	c->seg[c->nseg++] = (struct seg){key, first, n};
}

/* The reader thread: features into chunks, in order. */
static void *
reader_main(void *arg)
{
	struct pipeline *pl = arg;
	const size_t dp = (size_t)pl->dp;
	int bi = 0;
	struct chunk *c = wait_chunk(pl, bi, 0);
	double t0 = now_sec(), waited = 0;

	for (int fi = 0; fi < pl->nfiles; fi++) {
		speech *s = speech_open(pl->files[fi], pl->o->format);
		const char *key;
		size_t dims;
		int64_t rows;
		vlog("features: %s (%s)", speech_name(s), speech_format_name(speech_format(s)));
		while (speech_next(s, &key, &dims, &rows)) {
			if (rows != 0 && dims != 0) {
				if (pl->o->dims == 0 && dims != (size_t)pl->model_dim)
					die("%s: utterance '%s' has %zu dimensions, the models %d (--dims N "
					    "scores the first N)", speech_name(s), key, dims, pl->model_dim);
				if (dims < (size_t)pl->dims)
					die("%s: utterance '%s' has %zu dimensions, fewer than --dims %d",
					    speech_name(s), key, dims, pl->dims);
			}
			const char *k = arena_dup(&pl->keys, key);
			uint64_t first = 0;
			for (;;) {
				if (c->n == pl->cap) {
					set_chunk(pl, c, 1);
					bi = (bi + 1) % NBUF;
					double tw = now_sec();
					c = wait_chunk(pl, bi, 0);
					waited += now_sec() - tw;
				}
				size_t got = dims == 0 ? 0 : speech_read(s, c->x + c->n * dp,
				    pl->cap - c->n, (size_t)pl->dims, dp);
				if (got == 0) {
					if (first == 0)
						add_seg(c, k, 0, 0);	/* an empty utterance */
					break;
				}
				add_seg(c, k, first, got);
				c->n += got;
				first += got;
			}
		}
		speech_close(s);
	}
	c->last = 1;
	pl->t_read = now_sec() - t0 - waited;
	set_chunk(pl, c, 1);
	return NULL;
}

/* ---- output ---- */

struct writer {
	output *o;
	int fmt;
	const struct gmm_models *m;
	size_t top;			/* 0: every score */
	const char *open_key;		/* --all text: the utterance whose matrix is open */
	size_t open_rows;
	uint64_t npy_off, npy_rows;
	char **buf;			/* per-thread text buffers */
	size_t *len, *cap;
	int nbuf;
};

static void
buf_need(struct writer *w, int t, size_t more)
{
	if (w->len[t] + more > w->cap[t]) {
		w->cap[t] = MAX(w->len[t] + more, 2 * w->cap[t]);
		w->buf[t] = xrealloc(w->buf[t], w->cap[t]);
	}
}

/* Formats the chunk's rows in parallel, each thread a run of them, then writes the
 * runs in order (with the archive's keys and brackets between utterances). */
static void
write_text(struct writer *w, const struct chunk *c)
{
	const size_t nm = w->m->nmodels, k = w->top;
	/* The segment and the frame number of every row. */
	uint32_t *rseg = xmallocarray(c->n + 1, sizeof *rseg);
	uint64_t *rframe = xmallocarray(c->n + 1, sizeof *rframe);
	for (size_t s = 0, r = 0; s < c->nseg; s++)
		for (size_t i = 0; i < c->seg[s].n; i++, r++) {
			rseg[r] = (uint32_t)s;
			rframe[r] = c->seg[s].first + i;
		}

	#pragma omp parallel for schedule(static, 1) num_threads(w->nbuf)
	for (int t = 0; t < w->nbuf; t++) {
		size_t a = c->n * (size_t)t / (size_t)w->nbuf;
		size_t b = c->n * (size_t)(t + 1) / (size_t)w->nbuf;
		w->len[t] = 0;
		for (size_t r = a; r < b; r++) {
			if (k == 0) {
				buf_need(w, t, nm * 16 + 4);
				w->len[t] += ark_format_row(w->buf[t] + w->len[t], c->val + r * nm, nm);
				continue;
			}
			const char *key = c->seg[rseg[r]].key;
			size_t klen = strlen(key);
			for (size_t j = 0; j < k; j++) {
				const char *name = w->m->names[c->idx[r * k + j]];
				size_t nlen = strlen(name);
				buf_need(w, t, klen + nlen + 80);
				char *p = w->buf[t] + w->len[t];
				memcpy(p, key, klen);
				p += klen;
				p += sprintf(p, "\t%llu\t", (unsigned long long)rframe[r]);
				memcpy(p, name, nlen);
				p += nlen;
				*p++ = '\t';
				p += fmt_f32(p, c->tv[r * k + j]);
				*p++ = '\n';
				w->len[t] = (size_t)(p - w->buf[t]);
			}
		}
	}
	free(rseg);
	free(rframe);
	if (k > 0) {
		for (int t = 0; t < w->nbuf; t++)
			if (w->len[t] > 0)
				out_write(w->o, w->buf[t], w->len[t]);
		return;
	}
	/* --all: each row is "\n  v v v "; the runs are cut at row starts. */
	int t = 0;
	const char *p = w->buf[0], *end = w->buf[0] + w->len[0];
	for (size_t s = 0; s < c->nseg; s++) {
		const struct seg *sg = &c->seg[s];
		if (sg->first == 0) {
			if (w->open_key != NULL)
				ark_end(w->o, w->open_rows);
			ark_begin(w->o, sg->key);
			w->open_key = sg->key;
			w->open_rows = 0;
		}
		const char *from = NULL;
		for (size_t i = 0; i < sg->n; i++) {
			while (p == end) {
				if (from != NULL)
					out_write(w->o, from, (size_t)(p - from));
				from = NULL;
				t++;
				p = w->buf[t];
				end = w->buf[t] + w->len[t];
			}
			if (from == NULL)
				from = p;
			const char *q = memchr(p + 1, '\n', (size_t)(end - p - 1));
			p = q != NULL ? q : end;
		}
		if (from != NULL)
			out_write(w->o, from, (size_t)(p - from));
		w->open_rows += sg->n;
	}
}

static void
write_chunk(struct writer *w, const struct chunk *c)
{
	double t0 = now_sec();
	if (w->fmt == FMT_NPY) {
		out_write(w->o, c->val, c->n * w->m->nmodels * sizeof(float));
		w->npy_rows += c->n;
	} else {
		write_text(w, c);
	}
	phase_add(PH_WRITE, now_sec() - t0);
}

/* ---- the main loop's steps ---- */

struct runner {
	struct pipeline *pl;
	struct writer *w;
	const struct gmm_params *prm;
	enum gmm_mode mode;
	size_t top;
	const struct gmmscore_tune *tune;
	float *scores;			/* CPU with --top: every score of a chunk */
#ifdef ACCELKIT_CUDA
	struct gmm_gpu *gpu;
	int host_top;			/* the GPU returns every score; the top is taken here */
#endif
	struct progress prog;
	uint64_t frames;
};

static int
chunk_ready(struct pipeline *pl, int i)
{
	pthread_mutex_lock(&pl->mu);
	int full = pl->buf[i].full;
	pthread_mutex_unlock(&pl->mu);
	return full;
}

/* Queues the chunk on the GPU, or scores it on the CPU. */
static void
start_chunk(struct runner *r, int bi, struct chunk *c)
{
	if (c->n == 0)
		return;
#ifdef ACCELKIT_CUDA
	if (r->gpu != NULL) {
		if (r->top && !r->host_top)
			gmm_gpu_submit(r->gpu, bi, c->x, c->n, c->idx, c->tv);
		else
			gmm_gpu_submit(r->gpu, bi, c->x, c->n, NULL, c->val);
		return;
	}
#else
	(void)bi;
#endif
	double t0 = now_sec();
	const size_t nm = r->prm->nmodels;
	gmm_cpu_score(r->prm, r->mode, (size_t)r->tune->cpu_fblk, c->x, c->n,
	    r->top ? r->scores : c->val);
	if (r->top)
		gmm_top(r->scores, c->n, nm, r->top, c->idx, c->tv);
	phase_add(PH_COMPUTE, now_sec() - t0);
}

/* Waits for the chunk's results, writes them and hands the chunk back to the reader. */
static void
finish_chunk(struct runner *r, struct chunk *c)
{
#ifdef ACCELKIT_CUDA
	if (r->gpu != NULL) {
		gmm_gpu_wait(r->gpu, (int)(c - r->pl->buf));
		if (r->host_top && c->n > 0)
			gmm_top(c->val, c->n, r->prm->nmodels, r->top, c->idx, c->tv);
	}
#endif
	write_chunk(r->w, c);
	r->frames += c->n;
	progress_update(&r->prog, r->frames, 0);
	c->n = 0;
	c->nseg = 0;
	set_chunk(r->pl, c, 0);
}

/* ---- setup ---- */

static void
parse_args(int argc, char **argv, struct opts *o, struct common_opts *co)
{
	static const struct option longopts[] = {
		CLI_COMMON_LONG,
		CLI_MAXMEM_LONG,
		{"models", required_argument, NULL, 'm'},
		{"format", required_argument, NULL, 'f'},
		{"dims", required_argument, NULL, OPT_DIMS},
		{"mode", required_argument, NULL, OPT_MODE},
		{"top", required_argument, NULL, 't'},
		{"all", no_argument, NULL, 'a'},
		{"chunk", required_argument, NULL, OPT_CHUNK},
		{NULL, 0, NULL, 0},
	};
	static const char *const formats[] = {"auto", "text", "npy", "htk", "ark", NULL};
	static const char *const modes[] = {"sum", "max", NULL};
	int c, top_given = 0;

	memset(o, 0, sizeof *o);
	o->top = 1;
	while ((c = getopt_long(argc, argv, CLI_COMMON_SHORT "m:f:t:a", longopts, NULL)) != -1) {
		switch (c) {
		case 'm':
			o->models = optarg;
			break;
		case 'f':
			o->format = (enum speech_format)cli_choice("--format", optarg, formats);
			break;
		case OPT_DIMS:
			o->dims = (int)cli_int("--dims", optarg, 1, 1 << 16);
			break;
		case OPT_MODE:
			o->mode = cli_choice("--mode", optarg, modes) ? GMM_MAX : GMM_SUM;
			break;
		case 't':
			o->top = (size_t)cli_int("--top", optarg, 1, 1 << 30);
			top_given = 1;
			break;
		case 'a':
			o->all = 1;
			break;
		case OPT_CHUNK:
			o->chunk = (size_t)cli_int("--chunk", optarg, 1, 1 << 24);
			break;
		default:
			cli_common(c, optarg, co, usage);
		}
	}
	cli_finish(co);
	if (co->list_devices)
		return;
	if (o->models == NULL)
		usage_error("no models given (-m FILE)");
	if (o->all && top_given)
		usage_error("--top and --all exclude each other");
	if (o->all)
		o->top = 0;
	if (cli_out_format(co, co->output) == FMT_NPY && !o->all)
		usage_error("NPY output (-O npy) holds every score: it needs --all");
}

int
main(int argc, char **argv)
{
	struct common_opts co;
	struct opts o;
	struct gmm_models models;
	struct gmm_params prm;
	struct cuda_dev dev;
	pthread_t rd_thread;

	cli_init(argc, argv, &co);
	parse_args(argc, argv, &o, &co);
	if (co.list_devices) {
		cuda_list_devices();
		return 0;
	}
	int fmt = cli_out_format(&co, co.output);
	output *out = out_open(co.output);
	if (fmt == FMT_NPY && !out_seekable(out))
		die("NPY output needs a file it can rewrite (its header holds the row count): "
		    "give -o FILE");

	/* CUDA's start-up (a context takes about 200 ms) runs in a thread while the
	 * models are read; cudadev.h makes error exits meanwhile safe. */
	cuda_start(co.device, 0, NULL, &dev);
	gmm_models_load(o.models, &models);
	if (o.dims > models.dim)
		die("--dims %d: the models have %d dimensions", o.dims, models.dim);
	int dims = o.dims ? o.dims : models.dim;
	double t0 = now_sec();
	gmm_params_make(&models, dims, &prm);
	phase_add("model params", now_sec() - t0);
	cuda_start_wait();
	const struct gmmscore_tune *tune = TUNE_PICK(gmmscore_tune_table, dev.desc);
	vlog("tuning: %s (%s)", tune->device[0] != '\0' ? tune->device : "any device",
	    tune->measured);

	/* Chunk size: bounded by the scores a chunk holds on the host. Every score of a
	 * chunk is kept for --all, on the CPU, and for a --top too large for the GPU. */
	const size_t nm = models.nmodels, top = MIN(o.top, nm);
	const int host_top = dev.gpu && top > GMM_GPU_TOPMAX;
	const int need_val = top == 0 || host_top;
	const size_t row_bytes = need_val || !dev.gpu ? nm * sizeof(float) :
	    top * (sizeof(uint32_t) + sizeof(float));
	size_t cap = o.chunk;
	if (cap == 0)
		cap = MIN((size_t)tune->chunk, HOST_RESULT_MAX / 2 / row_bytes);
	cap = MAX((size_t)1, MIN(cap, HOST_RESULT_MAX / row_bytes));
#ifdef ACCELKIT_CUDA
	struct gmm_gpu *gpu = NULL;
	if (dev.gpu) {
		gpu = gmm_gpu_init(&prm, o.mode, host_top ? 0 : top, cap, co.max_device_mem,
		    dev.ids[0], tune);
		cap = gmm_gpu_chunk(gpu);
	}
#endif
	vlog("scoring %d of %d dimensions, --mode %s, %s, %zu frames a chunk", dims, models.dim,
	    o.mode == GMM_SUM ? "sum" : "max", top ? "top models" : "every score", cap);

	struct pipeline pl;
	memset(&pl, 0, sizeof pl);
	pl.o = &o;
	char *stdin_only[] = {"-"};
	pl.files = optind < argc ? argv + optind : stdin_only;
	pl.nfiles = optind < argc ? argc - optind : 1;
	pl.model_dim = models.dim;
	pl.dims = dims;
	pl.dp = prm.dp;
	pl.cap = cap;
	pthread_mutex_init(&pl.mu, NULL);
	pthread_cond_init(&pl.cv, NULL);
	const size_t dp = (size_t)prm.dp;
	for (int i = 0; i < NBUF; i++) {
		struct chunk *c = &pl.buf[i];
		size_t xb = mul_size(mul_size(cap, dp, "chunk"), sizeof(float), "chunk");
		size_t vb = need_val ? mul_size(mul_size(cap, nm, "chunk"), sizeof(float), "chunk") : 0;
		size_t tb = cap * top * sizeof(float);
#ifdef ACCELKIT_CUDA
		if (gpu != NULL) {
			c->x = gmm_gpu_host_alloc(xb);
			c->val = vb ? gmm_gpu_host_alloc(vb) : NULL;
			c->idx = tb ? gmm_gpu_host_alloc(tb) : NULL;
			c->tv = tb ? gmm_gpu_host_alloc(tb) : NULL;
		} else
#endif
		{
			c->x = xmalloc(xb);
			c->val = vb ? xmalloc(vb) : NULL;
			c->idx = tb ? xmalloc(tb) : NULL;
			c->tv = tb ? xmalloc(tb) : NULL;
		}
		memset(c->x, 0, xb);	/* the padding columns stay 0 */
	}
	float *scores = NULL;	/* CPU: every score of a chunk */
	if (!dev.gpu && top)
		scores = xmallocarray(mul_size(cap, nm, "chunk"), sizeof(float));

	struct writer w = {.o = out, .fmt = fmt, .m = &models, .top = top};
	w.nbuf = cli_threads();
	w.buf = xcalloc((size_t)w.nbuf, sizeof *w.buf);
	w.len = xcalloc((size_t)w.nbuf, sizeof *w.len);
	w.cap = xcalloc((size_t)w.nbuf, sizeof *w.cap);
	if (fmt == FMT_NPY) {
		w.npy_off = out_tell(out);
		npy_write_header(out, DT_F32, 0, models.nmodels);
	}

	if (pthread_create(&rd_thread, NULL, reader_main, &pl) != 0)
		die("cannot start a thread");
	struct runner run = {.pl = &pl, .w = &w, .prm = &prm, .mode = o.mode, .top = top,
	    .tune = tune, .scores = scores};
#ifdef ACCELKIT_CUDA
	run.gpu = gpu;
	run.host_top = host_top;
#else
	(void)host_top;
#endif
	progress_begin(&run.prog, "frames");
	struct chunk *prev = NULL;
	for (int bi = 0;; bi = (bi + 1) % NBUF) {
		struct chunk *c = wait_chunk(&pl, bi, 1);
		start_chunk(&run, bi, c);
		if (prev != NULL)
			finish_chunk(&run, prev);
		prev = c;
		if (c->last)
			break;
		if (!chunk_ready(&pl, (bi + 1) % NBUF)) {
			/* The input is slower than the scoring: out with these results now,
			 * past our buffer too, so a reader downstream sees them at once. */
			finish_chunk(&run, prev);
			out_flush(out);
			prev = NULL;
		}
	}
	if (prev != NULL)
		finish_chunk(&run, prev);
	progress_end(&run.prog);
	uint64_t frames = run.frames;
	pthread_join(rd_thread, NULL);
	phase_add("read (beside)", pl.t_read);

	if (fmt == FMT_NPY)
		npy_patch_header(out, w.npy_off, DT_F32, (size_t)w.npy_rows, models.nmodels);
	else if (w.open_key != NULL)
		ark_end(out, w.open_rows);
	out_close(out);
	vlog("scored %llu frames against %zu models (%zu Gaussians)", (unsigned long long)frames,
	    models.nmodels, models.ncomp);
	phases_report();
#ifdef ACCELKIT_CUDA
	if (gpu != NULL) {
		/* Done: the output is closed and checked. Tearing the CUDA context down
		 * would only add time; the driver reclaims everything at exit. */
		fflush(NULL);
		_exit(0);
	}
#endif

	/* Cleanup, so that leak checkers see only what is theirs. */
#ifdef ACCELKIT_CUDA
	for (int i = 0; gpu != NULL && i < NBUF; i++) {
		gmm_gpu_host_free(pl.buf[i].x);
		gmm_gpu_host_free(pl.buf[i].val);
		gmm_gpu_host_free(pl.buf[i].idx);
		gmm_gpu_host_free(pl.buf[i].tv);
		pl.buf[i].x = NULL;
		pl.buf[i].val = NULL;
		pl.buf[i].idx = NULL;
		pl.buf[i].tv = NULL;
	}
	gmm_gpu_free(gpu);
#endif
	for (int i = 0; i < NBUF; i++) {
		free(pl.buf[i].x);
		free(pl.buf[i].val);
		free(pl.buf[i].idx);
		free(pl.buf[i].tv);
		free(pl.buf[i].seg);
	}
	for (int t = 0; t < w.nbuf; t++)
		free(w.buf[t]);
	free(w.buf);
	free(w.len);
	free(w.cap);
	free(scores);
	arena_free(&pl.keys);
	pthread_mutex_destroy(&pl.mu);
	pthread_cond_destroy(&pl.cv);
	gmm_params_free(&prm);
	gmm_models_free(&models);
	return 0;
}
