/* clicd.c: which platforms the ICD loader opens: GPU vendors' left out for CPU specs.
 * OCL_ICD_VENDORS pointed at a folder of ours, or the user's OCL_ICD_FILENAMES
 * narrowed, so that such a run never starts CUDA (clx_icd_restrict).
 *
 * The ICD loader loads every platform installed (/etc/OpenCL/vendors/ *.icd) at the
 * first call, and NVIDIA's starts CUDA (a few hundred ms, the GPU's memory touched)
 * even for a run that then takes a CPU device. A spec of CPU devices only (cpu, cpu:N,
 * cpu:all, cpu:N,M) cannot name one of NVIDIA's, whose platform has none; there the
 * loader is pointed at the other platforms' .icd files alone: when one is left,
 * OCL_ICD_VENDORS is set to a folder of ours holding a copy of it alone
 * ($XDG_CACHE_HOME/accelkit/icd-cpu, else ~/.cache/...: a folder, which both ocl-icd
 * and Khronos's loader read), and nothing is changed when several are left, when the
 * user set OCL_ICD_VENDORS, or when OpenCL is loaded already. A user's
 * OCL_ICD_FILENAMES is narrowed instead (icd_narrow_filenames): its GPU vendors'
 * entries left out for CPU specs, and for P:D those after entry P. P:D specs name
 * platforms by their place among all of them, and gpu and auto may need NVIDIA's: the
 * folder is left as it is for them. */
#include "opencl_int.h"

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char icd_kept[4200];

/* The copy of the .icd file `from' in folder (written, under a temporary name and
 * renamed, unless it is there already with the same line): 1 with its path in path. */
static int
icd_copy(const char *from, const char *folder, char *path, size_t size)
{
	char line[1024] = "", have[1024] = "", tmp[4300];
	const char *base = strrchr(from, '/');
	base = base != NULL ? base + 1 : from;
	int fd = open(from, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, line, sizeof line - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return 0;
	line[n] = '\0';
	if (snprintf(path, size, "%s/%s", folder, base) >= (int)size)
		return 0;
	/* only this one there: another's copy (a platform since removed) would load too */
	DIR *d = opendir(folder);
	for (struct dirent *e; d != NULL && (e = readdir(d)) != NULL;) {
		char other[4400];
		size_t len = strlen(e->d_name);
		if (len > 4 && strcmp(e->d_name + len - 4, ".icd") == 0 &&
		    strcmp(e->d_name, base) != 0) {
			snprintf(other, sizeof other, "%s/%s", folder, e->d_name);
			unlink(other);
		}
	}
	if (d != NULL)
		closedir(d);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0) {
		ssize_t m = read(fd, have, sizeof have - 1);
		close(fd);
		if (m == n && memcmp(have, line, (size_t)n) == 0)
			return 1;
	}
	snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) < 0)
		return 0;
	int ok = clx_write_all(fd, line, (size_t)n);
	ok = close(fd) == 0 && ok && rename(tmp, path) == 0;
	if (!ok)
		unlink(tmp);
	return ok;
}

int
clx_spec_cpu_only(const char *spec)
{
	return spec != NULL && strncmp(spec, "cpu", 3) == 0 && (spec[3] == '\0' ||
	    spec[3] == ':');
}

/* Whether an ICD library's name is a GPU vendor's: NVIDIA's (which starts CUDA, and
 * crashed under a tight ulimit -v), AMD's, Intel's GPU runtime (NEO's libigdrcl; its
 * CPU runtime, libintelocl, is kept), Mesa's Clover and Rusticl. */
static int
icd_gpu_library(const char *lib, size_t len)
{
	static const char *const gpu[] = {"nvidia", "amdocl", "igdrcl", "mesaopencl",
	    "rusticl"};
	char name[512];
	const char *base = lib;
	for (size_t i = 0; i < len; i++)
		if (lib[i] == '/')
			base = lib + i + 1;
	snprintf(name, sizeof name, "%.*s", (int)(len - (size_t)(base - lib)), base);
	for (size_t i = 0; i < sizeof gpu / sizeof gpu[0]; i++)
		if (clx_contains_nocase(name, gpu[i]))
			return 1;
	return 0;
}

/* The platform index a P:D spec (or a list of one platform's P:D items) names, else
 * -1. */
static int
spec_platform(const char *spec)
{
	char *end;
	if (spec == NULL || *spec < '0' || *spec > '9')
		return -1;
	long p = strtol(spec, &end, 10);
	return *end == ':' && p < MAX_PLATFORMS ? (int)p : -1;
}

/* The user's OCL_ICD_FILENAMES (a list of ICD libraries, ':' between them, that
 * Khronos's loader opens before /etc/OpenCL/vendors' and in their order; the lent GPU
 * machine's image sets libpocl.so.2:libnvidia-opencl.so.1) narrowed for a spec that
 * cannot need a GPU vendor's library: for CPU devices (cpu:N, cpu:all), every GPU
 * vendor's entry left out; for P:D, those after entry P, which leaves P where it was
 * among the platforms (the loader keeps their order). Done for this process alone,
 * before libOpenCL is loaded; -v says what was left out. With every entry a GPU
 * vendor's, a CPU spec leaves the variable out (the vendors folder's platforms, as
 * without it) and 1 is returned so that the folder is narrowed too. */
static int
icd_narrow_filenames(const char *spec, const char *files)
{
	const int p = spec_platform(spec);
	if (!clx_spec_cpu_only(spec) && p < 0)
		return 0;
	size_t n = strlen(files);
	char *kept = xmalloc(n + 1), *out = xmalloc(n + 64);
	size_t k = 0;
	int index = 0, left = 0;
	out[0] = '\0';
	for (const char *e = files;; index++) {
		const char *colon = strchr(e, ':');
		size_t len = colon != NULL ? (size_t)(colon - e) : strlen(e);
		if (len > 0 && index > p && icd_gpu_library(e, len)) {
			size_t o = strlen(out);
			snprintf(out + o, n + 64 - o, "%s%.*s", left++ ? ", " : "", (int)len, e);
		} else if (len > 0) {
			if (k > 0)
				kept[k++] = ':';
			memcpy(kept + k, e, len);
			k += len;
		}
		if (colon == NULL)
			break;
		e = colon + 1;
	}
	kept[k] = '\0';
	int all = 0;
	if (left > 0 && k > 0) {
		setenv("OCL_ICD_FILENAMES", kept, 1);
		vlog("OpenCL: %s: OCL_ICD_FILENAMES narrowed to %s (left out: %s)", spec, kept,
		    out);
	} else if (left > 0) {
		unsetenv("OCL_ICD_FILENAMES");
		vlog("OpenCL: %s: OCL_ICD_FILENAMES left out (only GPU vendors' libraries: %s)",
		    spec, out);
		all = 1;
	}
	free(kept);
	free(out);
	return all;
}

void
clx_icd_restrict(const char *spec)
{
	static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
	static const char dirname[] = "/etc/OpenCL/vendors";
	const char *files = getenv("OCL_ICD_FILENAMES");
	pthread_mutex_lock(&mu);
	int narrowed = !clx_lib_loaded() && files != NULL && icd_narrow_filenames(spec, files);
	pthread_mutex_unlock(&mu);
	if (!clx_spec_cpu_only(spec) || getenv("OCL_ICD_VENDORS") != NULL ||
	    (files != NULL && !narrowed))
		return;
	pthread_mutex_lock(&mu);
	DIR *dir = !clx_lib_loaded() ? opendir(dirname) : NULL;
	char keep[512] = "";
	int kept = 0, dropped = 0;
	for (struct dirent *e; dir != NULL && (e = readdir(dir)) != NULL;) {
		size_t n = strlen(e->d_name);
		if (n <= 4 || strcmp(e->d_name + n - 4, ".icd") != 0)
			continue;
		char path[512], lib[512] = "";
		snprintf(path, sizeof path, "%s/%s", dirname, e->d_name);
		FILE *f = fopen(path, "r");
		if (f == NULL || fgets(lib, sizeof lib, f) == NULL)
			lib[0] = '\0';
		if (f != NULL)
			fclose(f);
		if (clx_contains_nocase(lib, "nvidia") || clx_contains_nocase(e->d_name, "nvidia")) {
			dropped++;
		} else {
			kept++;
			snprintf(keep, sizeof keep, "%s", path);
		}
	}
	if (dir != NULL)
		closedir(dir);
	char folder[4096];
	if (kept == 1 && clx_accelkit_dir("icd-cpu", folder, sizeof folder) &&
	    icd_copy(keep, folder, icd_kept, sizeof icd_kept))
		setenv("OCL_ICD_VENDORS", folder, 1);
	else
		icd_kept[0] = '\0';
	pthread_mutex_unlock(&mu);
	if (icd_kept[0] != '\0')
		vlog("OpenCL: CPU devices only: the ICD loader reads %s alone (%d NVIDIA "
		    "ICD%s left out)", icd_kept, dropped, dropped == 1 ? "" : "s");
}

/* Whether an OpenCL platform is installed for the ICD loader (ocl-icd's places). */
int
clx_icd_installed(void)
{
	const char *env = getenv("OCL_ICD_VENDORS");
	if (env != NULL && *env != '\0')
		return 1;
	DIR *dir = opendir("/etc/OpenCL/vendors");
	int found = 0;
	if (dir == NULL)
		return 0;
	for (struct dirent *e; !found && (e = readdir(dir)) != NULL;) {
		size_t n = strlen(e->d_name);
		found = n > 4 && strcmp(e->d_name + n - 4, ".icd") == 0;
	}
	closedir(dir);
	return found;
}
