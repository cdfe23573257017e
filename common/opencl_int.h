/* opencl_int.h: what opencl.c and its parts (cl*.c) share, not for the programs.
 * opencl.c, clload.c, clicd.c, clstart.c and clbuild.c; the programs see opencl.h
 * alone. Each group below is the file that defines it. */
#ifndef ACCELKIT_OPENCL_INT_H
#define ACCELKIT_OPENCL_INT_H

#include <stddef.h>

#include "opencl.h"

/* the platforms enumerated (opencl.c), and the highest P a P:D spec names (clicd.c) */
#define MAX_PLATFORMS 16

/* ---- clload.c ---- */
/* Whether libOpenCL is loaded already; unlike clx_load, it loads nothing (clicd.c:
 * the ICD loader's settings are only ours to change before it is). */
int clx_lib_loaded(void);
/* Once the platforms are loaded: a failed allocation in their C++ or LLVM is our
 * out-of-memory message (exit 1), not an abort. */
void clx_catch_platform_bad_alloc(void);
/* What the platform does for us now ("building NAME.cl"), for that message; NULL
 * when nothing in particular. */
extern const char *_Atomic clx_platform_doing;

/* ---- clicd.c ---- */
/* For a spec of CPU devices only, the ICD loader pointed at the platforms that have
 * them; called before libOpenCL is loaded (after, it does nothing). */
void clx_icd_restrict(const char *spec);
/* Whether an OpenCL platform is installed for the ICD loader (ocl-icd's places). */
int clx_icd_installed(void);

/* ---- opencl.c ---- */
/* Whether hay contains needle, in any case ("" is in everything). */
int clx_contains_nocase(const char *hay, const char *needle);
/* A platform's or device's string parameter in buf ("?" where the platform gives none;
 * a device's without trailing blanks). */
void clx_platform_str(cl_platform_id p, cl_platform_info what, char *buf, size_t n);
void clx_device_str(cl_device_id d, cl_device_info what, char *buf, size_t n);

/* ---- clbuild.c ---- */
/* $XDG_CACHE_HOME/accelkit/SUB (else ~/.cache/accelkit/SUB) in buf, made if needed;
 * 0 when it cannot be (no home, not writable). */
int clx_accelkit_dir(const char *sub, char *buf, size_t size);
/* write(2) until all of buf is written; 0 on an error. */
int clx_write_all(int fd, const void *buf, size_t n);

#endif
