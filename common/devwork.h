/* devwork.h: the one division of work: units handed over several workers (threads,
 * one a device), results back in input order.
 *
 * A program describes its work as units (chunks of text, chunks of frames, batches of
 * pairs, blocks of a matrix) made one after another, in input order. The engine runs
 * them over worker threads and hands the processed units back in input order, so the
 * output is byte for byte the one-worker run's. Memory stays bounded: a unit lives in
 * one of the caller's slots from its making until the caller has used it, and there
 * are nslots of them whatever the input's size.
 *
 * Two ways of opening it, which differ in who makes the units:
 *
 *   dw_open: a worker a device. Each worker first makes its own state in its own
 *   thread (a CUDA worker calls cudaSetDevice there, uploads its copy of the model,
 *   allocates its buffers; an OpenCL worker its buffers), then takes units as it frees
 *   up: the faster device takes more. One maker thread calls make (reading input
 *   overlaps the devices' work and the caller's writing), or the caller makes the
 *   units itself (make NULL, below). dw_open returns once every worker's init has run,
 *   and the maker starts at the first dw_next: in between, the program may size its
 *   units from what the workers found (dw_state: a device's memory) and fill in the
 *   slots. gmmscore, editdist4r, clmatmul.
 *
 *   dw_open_threads: the -j threads of the CPU, no state of their own. A free worker
 *   makes the next unit itself (one at a time, in order), so reading is spread over
 *   the threads that parse and none idles while there is work. Nothing starts until a
 *   second unit turns out to exist: the caller's thread makes and processes the first
 *   (and, with one thread, every unit) itself, so a small input starts no thread.
 *   make may be cancelled inside read(2) or poll(2) when the caller closes early (it
 *   must leave nothing that needs undoing there). The chunked record reader (chunks.h:
 *   make = read a chunk, process = parse it) and the ordered writer (output.h, out_par:
 *   make = name a range of items, process = format it).
 *
 * The engine knows nothing of devices: a worker is a thread with an index (0, 1, ...),
 * which the program maps to a device (ids[w] of struct cuda_dev). tests/acctest.c
 * drives it on the CPU.
 *
 * Errors: a unit whose process fails (returns nonzero, with a message in err) is
 * reported in order: dw_next hands out every unit before it, then dies with the
 * message, as a one-device run that stops at that unit would have written the same
 * results first. A callback that dies (a device error: CUDA_CHECK; bad input met while
 * making) ends the process at once, as die does anywhere.
 *
 *	static const struct dw_ops ops = {init, make, process, fini, NULL};
 *	dw *e = dw_open(&ops, ctx, slots, dw_slots(n), n);
 *	for (void *s; (s = dw_next(e, NULL)) != NULL;)
 *		write(s);
 *	dw_report(e, names);		// -v: a line a worker
 *	dw_close(e);
 *
 * Or the caller makes the units itself (make NULL), where its reading loop pushes
 * records into a unit as they come (editdist4r): it fills a slot from dw_slot, hands it
 * over with dw_put, and takes results in order with dw_next, giving each back with
 * dw_done once used; when dw_slot has none free, results must be taken first:
 *
 *	while ((s = dw_slot(e)) == NULL) {
 *		write(dw_next(e, NULL));
 *		dw_done(e);
 *	}
 *	fill(s);
 *	dw_put(e, s);
 *	...
 *	dw_end(e);			// then dw_next to NULL as above
 */
#ifndef ACCELKIT_DEVWORK_H
#define ACCELKIT_DEVWORK_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DW_ERR 256	/* room for a unit's error message */

/* What make returns: another unit may follow, this unit is the last, or there is no
 * unit k (its slot stays unused). */
enum { DW_NONE, DW_MORE, DW_LAST };

struct dw_ops {
	/* In worker w's thread, before its first unit: its state (NULL is fine; none with
	 * dw_open_threads, whose process gets NULL). */
	void *(*init)(void *ctx, int w);
	/* Makes unit k (0, 1, 2, ...) in slot; calls come one at a time, in order. */
	int (*make)(void *ctx, void *slot, uint64_t k);
	/* Processes the unit in slot on worker w with its state. Returns 0, or nonzero
	 * with a message in err (DW_ERR bytes) for the unit's error. */
	int (*process)(void *ctx, void *state, int w, void *slot, char *err);
	/* In worker w's thread, after its last unit (NULL: nothing to do). */
	void (*fini)(void *ctx, void *state, int w);
	/* The size of a processed unit for the workers' shares under -v (frames, cells);
	 * NULL counts units. */
	double (*weight)(void *ctx, const void *slot);
};

typedef struct dw dw;

/* nworkers >= 1 workers over slots[0..nslots), nslots >= nworkers + 2 (dw_slots gives
 * enough for the reordering too). Starts the workers and returns when each has run
 * its init. slots[] is read from the first dw_next on. */
dw *dw_open(const struct dw_ops *ops, void *ctx, void **slots, int nslots, int nworkers);
/* nthreads >= 1 workers without state (init and fini NULL) that make units in turn,
 * over slots[0..nslots), nslots >= 1 (with more than one thread, dw_slots(nthreads)
 * keeps them busy; one slot means one thread). Starts nothing yet. */
dw *dw_open_threads(const struct dw_ops *ops, void *ctx, void **slots, int nslots,
    int nthreads);
/* Worker w's state, as its init returned it (for the caller to read, not to use on
 * the device: that is the worker thread's). */
void *dw_state(const dw *e, int w);
/* Whether the next unit in order is processed already (dw_next would not wait): a
 * streaming caller flushes its output when it is not. */
int dw_ready(dw *e);
/* The next unit in input order, processed; NULL after the last. *worker (when not NULL)
 * says which worker processed it. The slot stays the caller's until the next call,
 * which gives it back to be made anew. Dies with the unit's message where it failed. */
void *dw_next(dw *e, int *worker);
/* Caller-made units (make NULL). dw_slot: a free slot to fill, or NULL when every slot
 * is taken (take a result with dw_next and dw_done first). dw_put: hands the filled slot
 * over as the next unit. dw_unslot: gives back a slot from dw_slot unused. dw_end: no
 * more units come. dw_done: gives back the slot of the last dw_next now (dw_next would
 * at its next call). */
void *dw_slot(dw *e);
void dw_put(dw *e, void *slot);
void dw_unslot(dw *e, void *slot);
void dw_end(dw *e);
void dw_done(dw *e);
/* After dw_next returned NULL: the workers run fini and end (dw_close does this when
 * it has not been done); their busy times then include fini, for a worker whose
 * process only queues work on its device and whose fini waits for it to drain. */
void dw_join(dw *e);
/* Under -v, one line a worker: "NAME share 48% busy 1.23 s (units 12)", names[w]
 * naming worker w ("gpu:1"). After the last unit (and after dw_join to count fini). */
void dw_report(const dw *e, const char *const *names);
/* Worker w's busy seconds (inside process, and fini after dw_join) and its share (0..1) of the weight. */
double dw_busy(const dw *e, int w);
double dw_share(const dw *e, int w);
/* The workers run fini and end (dw_join), and e is freed; the slots stay the
 * caller's. After dw_next returned NULL; a dw_open_threads caller may also stop early
 * (its workers are stopped, one waiting for input cancelled); a dw_open caller that
 * stops early exits instead. */
void dw_close(dw *e);

/* Slots enough for nworkers workers and the reordering. */
static inline int dw_slots(int nworkers) { return 2 * nworkers + 2; }

#ifdef __cplusplus
}
#endif
#endif
