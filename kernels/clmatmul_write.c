/* clmatmul_write.c: C written by rows as the multiply makes them final (its cm_sink),
 * on a thread of its own, so that the write overlaps the multiply rather than following
 * it (issue 35: at N = 8192 the multiply took 73 ms and the write 80 after it). NPY's
 * header goes first, the shape being known; then each run of rows said final, as raw
 * bytes (NPY) or formatted on the -j threads (text, mat_write), in order: the bytes
 * are those mat_save writes for the whole of C. */
#include <pthread.h>
#include <stdlib.h>

#include "cli.h"
#include "clmatmul_run.h"
#include "dense.h"
#include "err.h"
#include "output.h"
#include "timer.h"

struct cm_writer {
	pthread_t thread;
	int threaded;
	pthread_mutex_t mu;
	pthread_cond_t cond;
	output *o;
	int fmt;
	const struct matrix *c;	/* C: its data there before any row is said final */
	size_t rows, ready, done;
	size_t says;		/* the sink's calls that gave rows (-v) */
	double busy;		/* the thread's writing, seconds */
	struct cm_sink sink;
};

/* Rows [r0, r1) of C to the output. */
static void
write_rows(struct cm_writer *w, size_t r0, size_t r1)
{
	const struct matrix *c = w->c;
	const size_t es = dtype_size(c->dtype);
	struct matrix part = {r1 - r0, c->cols, c->dtype, (char *)c->data + r0 * c->cols * es};
	if (w->fmt == FMT_NPY)
		out_write(w->o, part.data, part.rows * part.cols * es);
	else
		mat_write(w->o, &part, FMT_TEXT);
}

static void *
writer_main(void *arg)
{
	struct cm_writer *w = arg;
	while (w->done < w->rows) {
		pthread_mutex_lock(&w->mu);
		while (w->ready == w->done)
			pthread_cond_wait(&w->cond, &w->mu);
		const size_t upto = w->ready;
		pthread_mutex_unlock(&w->mu);
		double t0 = now_sec();
		write_rows(w, w->done, upto);
		w->busy += now_sec() - t0;
		w->done = upto;
	}
	return NULL;
}

/* The sink's call: rows [0, rows) of C are final. */
static void
rows_done(void *ctx, size_t rows)
{
	struct cm_writer *w = ctx;
	pthread_mutex_lock(&w->mu);
	if (rows > w->ready) {
		w->ready = rows;
		w->says++;
		pthread_cond_signal(&w->cond);
	}
	pthread_mutex_unlock(&w->mu);
}

struct cm_writer *
cm_writer_open(const char *path, int fmt, size_t rows, size_t cols, enum dtype dt,
    const struct matrix *c)
{
	struct cm_writer *w = xcalloc(1, sizeof *w);
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->cond, NULL);
	w->o = out_open(path);
	w->fmt = fmt;
	w->c = c;
	w->rows = rows;
	w->sink = (struct cm_sink){rows_done, w};
	if (fmt == FMT_NPY)
		npy_write_header(w->o, dt, rows, cols);
	if (rows > 0) {
		int err = pthread_create(&w->thread, NULL, writer_main, w);
		if (err != 0)
			die_no_thread(err, NULL);
		w->threaded = 1;
	}
	return w;
}

const struct cm_sink *
cm_writer_sink(struct cm_writer *w)
{
	return &w->sink;
}

void
cm_writer_close(struct cm_writer *w)
{
	double t0 = now_sec();
	pthread_mutex_lock(&w->mu);
	vlog("write: %zu of %zu rows of C final before the multiply's end, said in %zu "
	    "run%s to the writer's thread", w->ready, w->rows, w->says, w->says == 1 ? "" : "s");
	pthread_mutex_unlock(&w->mu);
	rows_done(w, w->rows);	/* C is whole: the host's path says nothing before */
	if (w->threaded)
		pthread_join(w->thread, NULL);
	phase_add("write (waited)", now_sec() - t0);
	t0 = now_sec();
	out_close(w->o);
	phase_add(PH_WRITE, w->busy + now_sec() - t0);
	pthread_mutex_destroy(&w->mu);
	pthread_cond_destroy(&w->cond);
	free(w);
}
