/* fuzz.h: the layer every fuzz target shares (tests/fuzz/README tells the whole story).
 *
 * A target is one file, tests/fuzz/NAME.c, defining LLVMFuzzerTestOneInput. A reader
 * target hands its bytes to fuzz_input with a function that reads a path the way a
 * program does; everything else (feeding standard input, catching the reader's error
 * exits, releasing what it left allocated, running it again on threads) happens here:
 *
 *	static void
 *	read_npy(const char *path)
 *	{
 *		struct matrix m;
 *		mat_load(path, DT_F32, 0, &m);
 *		fuzz_touch(m.data, m.rows * m.cols * sizeof(float));
 *		mat_free(&m);
 *	}
 *
 *	int
 *	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
 *	{
 *		return fuzz_input("npy", data, size, read_npy, 0);
 *	}
 *
 * The same file links with libFuzzer (make fuzz) or with driver.c, a main() that feeds
 * it the files it is given (the regression cases that make check runs). */
#ifndef ACCELKIT_FUZZ_H
#define ACCELKIT_FUZZ_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* How a run ended: it returned, or the status it exited with through die*,
 * usage_error or err_exit (common/err.h): 1 an error, 2 a usage error, 0 --help. */
enum { FUZZ_RETURNED = -1 };

/* fuzz_input's flags: the reader parses on the chunk engine (common/chunks.h); or it
 * splits its input into omp_get_max_threads() shares (the GMM readers: common/ is
 * built here without OpenMP's pragmas, so the shares are parsed one after another on
 * the caller's thread). */
enum { FUZZ_CHUNKS = 1, FUZZ_SHARES = 2, FUZZ_STREAM = 4 };
/* FUZZ_STREAM: the input may be compressed (input.c decompresses it as it reads).
 * Without it such inputs are rejected (-1), for the unz target to fuzz: a corrupt
 * stream is found only as it is read, so the records handed out before its error
 * depend on how far the threads had read (the programs exit 1 all the same); with it
 * only a run that returned must hand out the same bytes on two threads. */

/* Runs read("-") over data on standard input, as the programs meet their inputs:
 * first as a regular file (sizes known: in_remaining() >= 0), then as a pipe (sizes
 * unknown). Messages name the program "TARGET[file]" and "TARGET[pipe]" and the input
 * "(standard input)". An error exit of the reader comes back here (see fuzz_call).
 * With FUZZ_CHUNKS each of the two runs again with two threads (-j 2) and chunks of
 * a few bytes (ACCELKIT_CHUNK_BYTES), so that records meet chunk boundaries; with
 * FUZZ_SHARES, with 2 to 16 threads (-j N), so that records meet the shares'
 * boundaries. The second run must end the same way, say the same and hand out the
 * same bytes (fuzz_touch) as the one with one thread. Returns 0, for
 * LLVMFuzzerTestOneInput to return. */
int fuzz_input(const char *target, const uint8_t *data, size_t size,
    void (*read)(const char *path), int flags);

/* Which of the two runs fuzz_input is in: 0 regular file, 1 pipe. A reader may vary
 * what it asks for with it (float32 from one, float64 from the other), so that one
 * input covers both. */
extern int fuzz_pipe;

/* How each run of the last fuzz_input ended (FUZZ_RETURNED or the exit status):
 * [0] the regular file, [1] the pipe. For targets that know whether the input should
 * be accepted. */
extern int fuzz_ended[2];

/* Calls fn(arg) so that an exit (die*, usage_error, err_exit) comes back here instead
 * of ending the process, through err_before_exit. After an exit, the chunk engines
 * left open are closed (chunks_close_all) and every allocation of fn's thread that is
 * still live is freed (what a program leaves to the system when it exits), so that
 * LeakSanitizer reports only what fn leaks when it returns. Returns FUZZ_RETURNED or
 * the exit status. */
int fuzz_call(void (*fn)(void *), void *arg);

/* A property of the reader's result that does not hold: prints what and aborts, so
 * the fuzzer keeps the input as a crash. */
void fuzz_fail(const char *target, const char *fmt, ...)
    __attribute__((format(printf, 2, 3), noreturn));
#define FUZZ_ASSERT(target, cond) \
	((cond) ? (void)0 : fuzz_fail(target, "%s:%d: %s", __FILE__, __LINE__, #cond))

/* Whether data is not what a reference written for plain bytes can restate: it is
 * compressed (the readers see it decompressed: the unz target's business) or starts
 * with a byte-order mark (which the readers skip). Targets that check the reader
 * against such a reference reject these inputs (return -1). */
int fuzz_not_plain(const uint8_t *data, size_t size);

/* Reads every byte of p[0..n), so that AddressSanitizer checks a range a reader
 * hands out, and adds them to the run's digest (what fuzz_input compares between
 * thread counts); returns a value that depends on all of them. */
unsigned fuzz_touch(const void *p, size_t n);

#endif
