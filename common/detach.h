/* detach.h: a GPU run's end without its wait for the driver's teardown.
 *
 * A process that used a GPU spends 100-170 ms in exit after its last byte (H200,
 * 2026-11-29: skyline's whole process 446 ms against 279 inside it): closing the
 * device's files makes the driver tear the context down, and the shell, or the next
 * stage of a pipeline waiting for its exit status, waits for it. detach_teardown forks
 * a child that keeps the device's files (and nothing else: the output's pipe closes
 * with the parent) until the parent is gone, then exits with them, so the teardown is
 * the child's, after the parent's exit status is out. The child calls nothing of
 * CUDA's. */
#ifndef ACCELKIT_DETACH_H
#define ACCELKIT_DETACH_H

/* Call last, after every output is flushed and checked, then _exit. Returns the
 * child's pid where a child took the teardown, 0 where none could (the parent then
 * pays it as before). prefix: the files kept, those whose /proc/self/fd link starts
 * with it ("/dev/nvidia"). */
int detach_teardown(const char *prefix);

#endif
