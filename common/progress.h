/* progress.h: one line on standard error that says how far a long run has come.
 *
 * A program names what it counts and, where known, how many there are
 * (progress_begin("frames", 0), progress_begin("rows", n)); its threads add what they
 * finish (progress_add, any thread, lock-free). A thread of this file draws the line
 * four times a second once the run is past two seconds:
 *     gmmscore: 1,234,567 frames, 152,340 frames/s
 *     docsim: 41,000 of 100,000 rows (41.0%), 2,150 rows/s, 0:27 left
 * in place on a terminal ('\r', then the line cleared to its end), and erases it at
 * progress_end, before any message (err.c calls progress_clear) and at exit.
 *
 * When: PROGRESS_AUTO (the default) shows it only when standard error is a terminal
 * and standard output is not the same terminal (results and the line would mix);
 * --progress (PROGRESS_ON) shows it whatever standard error is, as a new line every
 * 10 seconds where it is not a terminal; PROGRESS_OFF never. Nothing is drawn into a
 * pipe or a file unless asked for. */
#ifndef ACCELKIT_PROGRESS_H
#define ACCELKIT_PROGRESS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum { PROGRESS_AUTO, PROGRESS_ON, PROGRESS_OFF };

/* The mode (cli: --progress is PROGRESS_ON); stdout_used: whether the run writes its
 * results to standard output (for PROGRESS_AUTO). */
void progress_mode(int mode, int stdout_used);

/* Starts counting unit (a string that outlives the count) from 0 of total (0: not
 * known); a count already running is replaced. */
void progress_begin(const char *unit, uint64_t total);
/* n more done. Any thread. */
void progress_add(uint64_t n);
/* The count done so far, set outright. */
void progress_set(uint64_t done);
/* The count is over: its line is erased. */
void progress_end(void);
/* Erases the line now, if one is drawn, so that a message starts a line of its own
 * (the next tick draws it again). */
void progress_clear(void);

#ifdef __cplusplus
}
#endif
#endif
