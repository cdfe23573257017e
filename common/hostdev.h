/* hostdev.h: HOSTDEV marks the formulas that the CPU and CUDA paths share
 * (kernels/PROG.h): __host__ __device__ under nvcc, nothing under a C compiler. */
#ifndef ACCELKIT_HOSTDEV_H
#define ACCELKIT_HOSTDEV_H

#ifdef __CUDACC__
#define HOSTDEV __host__ __device__
#else
#define HOSTDEV
#endif

#endif
