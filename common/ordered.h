/* ordered.h: items made one after another, processed on several threads at once, and
 * handed back in the order they were made, with a bounded number in flight.
 *
 * The one mechanism under the chunked record reader (chunks.h: make = read a chunk of
 * input, process = parse it) and the ordered writer (output.h, out_par: make = name a
 * range of items, process = format it). The caller owns the slots (nslots of them, a
 * chunk buffer or a text buffer each); an item lives in a slot from its making until
 * the caller has used it, so memory stays within the slots whatever the input's size.
 *
 * With one thread everything runs in the caller's thread, in ord_next: no thread is
 * started. With more, threads start when the first item turns out not to be the last. */
#ifndef ACCELKIT_ORDERED_H
#define ACCELKIT_ORDERED_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum { ORD_NONE, ORD_MORE, ORD_LAST };

struct ord_ops {
	/* Makes item k (0, 1, 2, ...) in slot. Calls come one at a time and in order.
	 * Returns ORD_MORE, ORD_LAST when this is the last item, or ORD_NONE when there
	 * is no item k (the slot is then unused). It may block (reading a pipe); it is the
	 * only place where ord_close may cancel a thread, so it must leave nothing that
	 * needs undoing when cancelled inside read(2) or poll(2). */
	int (*make)(void *ctx, void *slot, uint64_t k);
	/* Processes a made item; runs on any thread, several at once. Must not exit. */
	void (*process)(void *ctx, void *slot);
};

typedef struct ord ord;

/* nthreads >= 1 threads process; slots[0..nslots) hold the items (nslots >= 1; with
 * more than one thread, nslots >= nthreads + 2 keeps them all busy). */
ord *ord_open(const struct ord_ops *ops, void *ctx, void **slots, int nslots, int nthreads);
/* The next item in order, processed; NULL after the last. The slot it returns stays
 * the caller's until the next call, which gives it back for a new item. */
void *ord_next(ord *o);
/* Stops the threads (cancelling one that waits for input) and frees o; the slots stay
 * the caller's to free. */
void ord_close(ord *o);

/* The number of slots to give for nthreads threads: enough to keep them busy. */
static inline int ord_slots(int nthreads) { return nthreads <= 1 ? 1 : 2 * nthreads + 2; }

#ifdef __cplusplus
}
#endif
#endif
