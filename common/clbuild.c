/* clbuild.c: OpenCL programs built for a device, and the cache that keeps them.
 * clx_build, clx_build_sm90a and clx_kernel (opencl.h), through the program cache
 * below. */
#include "opencl_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "input.h"

/* Builds prog for x's device; a failure prints the build log and exits 1, and -v
 * prints a log that says anything. */
static void
build_or_die(struct clx *x, cl_program prog, const char *name, const char *opts)
{
	char doing[300];
	snprintf(doing, sizeof doing, "building %s.cl", name);
	clx_platform_doing = doing;
	cl_int err = clBuildProgram(prog, 1, &x->device, opts, NULL, NULL);
	clx_platform_doing = NULL;
	if (err != CL_SUCCESS || verbose) {
		size_t n = 0;
		clGetProgramBuildInfo(prog, x->device, CL_PROGRAM_BUILD_LOG, 0, NULL, &n);
		char *log = xmalloc(n + 1);
		log[0] = '\0';
		clGetProgramBuildInfo(prog, x->device, CL_PROGRAM_BUILD_LOG, n, log, NULL);
		log[n] = '\0';
		int empty = strspn(log, " \t\r\n") == strlen(log);
		/* A compiler's log names an error; a build that failed under a memory limit
		 * with none (PoCL: an empty log, or its "failed to build" line alone) ran
		 * out of memory in the compiler. */
		if (err != CL_SUCCESS && mem_limited() && !clx_contains_nocase(log, "error"))
			die("out of memory (building %s.cl on %s: %s)", name, x->name,
			    cl_errname(err));
		if (err != CL_SUCCESS) {
			fprintf(stderr, "%s: %s.cl: build log:\n%s\n", progname, name, log);
			die("%s.cl: build failed on %s: %s (options: %s)", name, x->name,
			    cl_errname(err), opts);
		}
		if (!empty)
			vlog("%s.cl: build log:\n%s", name, log);
		free(log);
	}
}

/* ---- the program cache ----
 *
 * A built program's binary (CL_PROGRAM_BINARIES) is kept in a file of the cache
 * folder, $XDG_CACHE_HOME/accelkit/cl (else ~/.cache/accelkit/cl), named after the
 * program and a 128-bit hash of its key: the platform's name and version, the device's
 * name and version, the driver's version, the build options and the source. The file
 * holds the key itself (a hash that collides, or a stale entry, reads as a miss), the
 * binary's length and an FNV-1a checksum of it. A file that cannot be read, is short,
 * fails its checks or is refused by the driver is a miss: the program is built from
 * its source and the file written again. Files are written under a temporary name of
 * this process and thread and renamed into place, so that runs at once each read a
 * whole entry or none; a write that fails costs nothing but the next run's build. A
 * run killed while it writes leaves its temporary behind: the next write of the
 * folder (a miss) removes those more than STALE_TMP_SEC old, as no writer takes that.
 * ACCELKIT_CL_CACHE=0 turns the cache off. */
#define CACHE_MAGIC "ACCLBIN1"

static uint64_t
fnv1a(uint64_t h, const void *p, size_t n)
{
	const unsigned char *s = p;
	for (size_t i = 0; i < n; i++)
		h = (h ^ s[i]) * 0x100000001b3ULL;
	return h;
}

/* The cache folder in buf, made if needed; 0 when there is none (off, no home). */
static int
cache_dir(char *buf, size_t size)
{
	const char *off = getenv("ACCELKIT_CL_CACHE");
	if (off != NULL && strcmp(off, "0") == 0)
		return 0;
	return clx_accelkit_dir("cl", buf, size);
}

/* $XDG_CACHE_HOME/accelkit/SUB (else ~/.cache/accelkit/SUB) in buf, made if needed;
 * 0 when it cannot be (no home, not writable). */
int
clx_accelkit_dir(const char *sub, char *buf, size_t size)
{
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	int n;
	if (xdg != NULL && xdg[0] == '/')
		n = snprintf(buf, size, "%s/accelkit/%s", xdg, sub);
	else if (home != NULL && home[0] == '/')
		n = snprintf(buf, size, "%s/.cache/accelkit/%s", home, sub);
	else
		return 0;
	if (n < 0 || (size_t)n >= size)
		return 0;
	/* each level in turn: mkdir -p */
	for (char *p = buf + 1; *p != '\0'; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		mkdir(buf, 0755);
		*p = '/';
	}
	return mkdir(buf, 0755) == 0 || errno == EEXIST;
}

/* NVIDIA's option that only adds ptxas's register and spill counts to the build log
 * (the programs pass it under -v). */
#define NV_VERBOSE " -cl-nv-verbose"

/* The key of a build: what makes its binary this device's and this source's. The
 * options are taken without NV_VERBOSE, so that a -v run and a plain one share an
 * entry (with it in the key, a -v run on NVIDIA built every program again); a -v run
 * that finds its programs in the cache prints no register counts (ACCELKIT_CL_CACHE=0
 * builds them). */
static char *
cache_key(const struct clx *x, const char *options, const char *src, size_t *len)
{
	char opts[2048];
	const char *nv = strstr(options, NV_VERBOSE);
	if (nv != NULL && (nv[sizeof NV_VERBOSE - 1] == '\0' || nv[sizeof NV_VERBOSE - 1] == ' '))
		snprintf(opts, sizeof opts, "%.*s%s", (int)(nv - options), options,
		    nv + sizeof NV_VERBOSE - 1);
	else
		snprintf(opts, sizeof opts, "%s", options);
	char pver[256], dver[256], drv[256];
	clx_platform_str(x->platform, CL_PLATFORM_VERSION, pver, sizeof pver);
	clx_device_str(x->device, CL_DEVICE_VERSION, dver, sizeof dver);
	clx_device_str(x->device, CL_DRIVER_VERSION, drv, sizeof drv);
	size_t n = strlen(x->platform_name) + strlen(pver) + strlen(x->name) + strlen(dver) +
	    strlen(drv) + strlen(opts) + strlen(src) + 16;
	char *k = xmalloc(n);
	*len = (size_t)snprintf(k, n, "%s\n%s\n%s\n%s\n%s\n%s\n%s", x->platform_name, pver,
	    x->name, dver, drv, opts, src);
	return k;
}

static int
read_all(int fd, void *buf, size_t n)
{
	for (size_t got = 0; got < n;) {
		ssize_t r = read(fd, (char *)buf + got, n - got);
		if (r <= 0)
			return 0;
		got += (size_t)r;
	}
	return 1;
}

int
clx_write_all(int fd, const void *buf, size_t n)
{
	for (size_t done = 0; done < n;) {
		ssize_t w = write(fd, (const char *)buf + done, n - done);
		if (w <= 0)
			return 0;
		done += (size_t)w;
	}
	return 1;
}

/* The entry's binary (a new buffer, its length in *blen), or NULL with why. */
static unsigned char *
cache_read(const char *path, const char *key, size_t klen, size_t *blen, const char **why)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	unsigned char *bin = NULL;
	char *k = NULL;
	uint64_t head[3];	/* key length, binary length, checksum */
	char magic[8];
	*why = "none";
	if (fd < 0)
		return NULL;
	*why = "unreadable or short";
	if (fstat(fd, &st) != 0 || !read_all(fd, magic, sizeof magic) ||
	    !read_all(fd, head, sizeof head))
		goto out;
	*why = "not an entry of this cache";
	if (memcmp(magic, CACHE_MAGIC, sizeof magic) != 0 || head[0] != klen ||
	    head[1] == 0 || (uint64_t)st.st_size != sizeof magic + sizeof head + head[0] +
	    head[1])
		goto out;
	k = xmalloc(klen);
	*why = "unreadable or short";
	if (!read_all(fd, k, klen))
		goto out;
	*why = "stale (another source, options, device or driver)";
	if (memcmp(k, key, klen) != 0)
		goto out;
	bin = xmalloc(head[1]);
	*why = "unreadable or short";
	if (!read_all(fd, bin, head[1]))
		goto out;
	*why = "corrupt (its checksum is wrong)";
	if (fnv1a(0xcbf29ce484222325ULL, bin, head[1]) != head[2])
		goto out;
	*blen = head[1];
	free(k);
	close(fd);
	return bin;
out:
	free(k);
	free(bin);
	close(fd);
	return NULL;
}

#define STALE_TMP_SEC 600

/* Removes the temporaries of the folder dir (NAME.bin.tmp.PID.N) left by runs killed in
 * cache_write, those last written more than STALE_TMP_SEC ago. */
static void
cache_sweep(const char *dir)
{
	DIR *d = opendir(dir);
	if (d == NULL)
		return;
	const time_t now = time(NULL);
	struct dirent *e;
	struct stat st;
	while ((e = readdir(d)) != NULL)
		if (strstr(e->d_name, ".bin.tmp.") != NULL &&
		    fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISREG(st.st_mode) && now - st.st_mtime > STALE_TMP_SEC)
			unlinkat(dirfd(d), e->d_name, 0);
	closedir(d);
}

/* Writes the entry under a temporary name and renames it into place; 0 on failure. */
static int
cache_write(const char *path, const char *key, size_t klen, const unsigned char *bin,
    size_t blen)
{
	static _Atomic unsigned serial;
	char tmp[4300];
	snprintf(tmp, sizeof tmp, "%s.tmp.%ld.%u", path, (long)getpid(), serial++);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		return 0;
	uint64_t head[3] = {klen, blen, fnv1a(0xcbf29ce484222325ULL, bin, blen)};
	int ok = clx_write_all(fd, CACHE_MAGIC, 8) && clx_write_all(fd, head, sizeof head) &&
	    clx_write_all(fd, key, klen) && clx_write_all(fd, bin, blen);
	ok = close(fd) == 0 && ok;
	if (ok && rename(tmp, path) == 0)
		return 1;
	unlink(tmp);
	return 0;
}

/* prog's binary for x's device (the program may belong to several devices of the
 * context; it was built for x's), a new buffer, its length in *len; NULL when the
 * platform gives none. */
static unsigned char *
program_binary(cl_program prog, const struct clx *x, size_t *len)
{
	cl_uint nd = 0, at;
	if (clGetProgramInfo(prog, CL_PROGRAM_NUM_DEVICES, sizeof nd, &nd, NULL) != CL_SUCCESS ||
	    nd == 0)
		return NULL;
	cl_device_id *devs = xcalloc(nd, sizeof *devs);
	size_t *sizes = xcalloc(nd, sizeof *sizes);
	unsigned char **bins = xcalloc(nd, sizeof *bins), *bin = NULL;
	if (clGetProgramInfo(prog, CL_PROGRAM_DEVICES, nd * sizeof *devs, devs, NULL) ==
	    CL_SUCCESS) {
		for (at = 0; at < nd && devs[at] != x->device; at++)
			;
		if (at < nd && clGetProgramInfo(prog, CL_PROGRAM_BINARY_SIZES, nd *
		    sizeof *sizes, sizes, NULL) == CL_SUCCESS && sizes[at] > 0) {
			bin = bins[at] = xmalloc(sizes[at] + 1);
			if (clGetProgramInfo(prog, CL_PROGRAM_BINARIES, nd * sizeof *bins, bins,
			    NULL) == CL_SUCCESS) {
				bin[sizes[at]] = '\0';
				*len = sizes[at];
			} else {
				free(bin);
				bin = NULL;
			}
		}
	}
	free(devs);
	free(sizes);
	free(bins);
	return bin;
}

/* The program from the cache, built (from its binary); NULL on a miss, after -v says
 * why an entry there was not used. */
static cl_program
cache_load(struct clx *x, const char *path, const char *key, size_t klen, const char *opts)
{
	size_t blen = 0;
	const char *why;
	unsigned char *bin = cache_read(path, key, klen, &blen, &why);
	if (bin == NULL) {
		vlog("program cache: %s: %s", path, why);
		return NULL;
	}
	cl_int status = CL_SUCCESS, err = CL_SUCCESS;
	const unsigned char *b = bin;
	cl_program prog = clCreateProgramWithBinary(x->ctx, 1, &x->device, &blen, &b, &status,
	    &err);
	free(bin);
	if (err == CL_SUCCESS && status == CL_SUCCESS &&
	    clBuildProgram(prog, 1, &x->device, opts, NULL, NULL) == CL_SUCCESS) {
		vlog("program cache: %s: used", path);
		return prog;
	}
	if (err == CL_SUCCESS)
		clReleaseProgram(prog);
	vlog("program cache: %s: refused by the driver (%s), built again", path,
	    cl_errname(err != CL_SUCCESS ? err : status != CL_SUCCESS ? status :
	    CL_BUILD_PROGRAM_FAILURE));
	return NULL;
}

cl_program
clx_build(struct clx *x, const char *name, const char *embedded_src,
    const char *const *files, const char *options)
{
	const char *dir = getenv("ACCELKIT_KERNEL_DIR");
	char *loaded = NULL;
	const char *src = embedded_src;

	if (dir != NULL && *dir != '\0') {
		/* the files the embedded source was made from, read again in their order */
		size_t len = 0;
		loaded = xcalloc(1, 1);
		for (size_t i = 0; files[i] != NULL; i++) {
			char path[4096];
			size_t n = 0;
			snprintf(path, sizeof path, "%s/%s", dir, files[i]);
			input *in = in_open(path);
			char *part = in_slurp(in, &n);
			in_close(in);
			loaded = xrealloc(loaded, len + n + 1);
			memcpy(loaded + len, part, n);
			loaded[len += n] = '\0';
			free(part);
			vlog("kernel source: %s", path);
		}
		src = loaded;
	}
	/* PoCL 5's CPU drivers keep one cache of loaded kernel binaries for all devices,
	 * keyed by the program's build and the work-group size. A kernel run on two devices
	 * at once with grids of different widths makes two entries of one key, and the
	 * release after a run decrements the first it finds, not its own: the count goes
	 * below zero and PoCL aborts (its common.c, pocl_release_dlhandle_cache). A define
	 * per device makes each device's build, and so its key, its own. */
	char slot[32] = "";
	if (x->vendor == CLX_POCL && x->slot > 0)
		snprintf(slot, sizeof slot, " -D CLX_SLOT=%d", x->slot);
	char opts[2048];
	snprintf(opts, sizeof opts, "-cl-std=CL1.2 %s%s", options ? options : "", slot);
	vlog("building %s.cl: %s", name, opts);
	char cdir[4096], path[4200];
	size_t klen = 0;
	char *key = NULL;
	cl_program prog = NULL;
	if (cache_dir(cdir, sizeof cdir)) {
		key = cache_key(x, opts, src, &klen);
		uint64_t h1 = fnv1a(0xcbf29ce484222325ULL, key, klen);
		uint64_t h2 = fnv1a(0x84222325cbf29ce4ULL ^ klen, key, klen);
		snprintf(path, sizeof path, "%s/%s-%016llx%016llx.bin", cdir, name,
		    (unsigned long long)h1, (unsigned long long)h2);
		prog = cache_load(x, path, key, klen, opts);
	}
	if (prog == NULL) {
		prog = CL_CREATE(clCreateProgramWithSource(x->ctx, 1, &src, NULL, &cl_err_));
		build_or_die(x, prog, name, opts);
		size_t blen = 0;
		unsigned char *bin = key != NULL ? program_binary(prog, x, &blen) : NULL;
		if (bin != NULL) {
			cache_sweep(cdir);
			vlog("program cache: %s: %s", path, cache_write(path, key, klen, bin,
			    blen) ? "written" : "could not be written");
		}
		free(bin);
	}
	free(key);
	free(loaded);
	return prog;
}

/* text with every `from` replaced by `to` (a new string) */
static char *
replace_all(const char *text, const char *from, const char *to)
{
	const size_t fl = strlen(from), tl = strlen(to);
	size_t n = 0;
	for (const char *p = text; (p = strstr(p, from)) != NULL; p += fl)
		n++;
	char *out = xmalloc(strlen(text) + n * tl + 1), *o = out;
	for (const char *p = text;;) {
		const char *hit = strstr(p, from);
		if (hit == NULL) {
			strcpy(o, p);
			return out;
		}
		memcpy(o, p, (size_t)(hit - p));
		o += hit - p;
		memcpy(o, to, tl);
		o += tl;
		p = hit + fl;
	}
}

char *
clx_ptx_sm90a(const char *ptx)
{
	/* NVVM writes ".target sm_90, texmode_independent" (or without the suffix) */
	const char *target = strstr(ptx, ".target sm_90");
	if (target == NULL || (target[13] != ',' && target[13] != '\n' && target[13] != '\r' &&
	    target[13] != ' ' && target[13] != '\t' && target[13] != '\0'))
		return NULL;
	char *live = replace_all(ptx, CLX_SM90A_MARK, "");
	char *sm90a = replace_all(live, ".target sm_90", ".target sm_90a");
	free(live);
	return sm90a;
}

int
clx_has_sm90a(const struct clx *x)
{
	unsigned major = 0, minor = 0;
	return clx_nv_cc(x, &major, &minor) && major == 9 && minor == 0;
}

cl_program
clx_build_sm90a(struct clx *x, const char *name, const char *embedded_src,
    const char *const *files, const char *options)
{
	if (!clx_has_sm90a(x))
		die("%s.cl: sm_90a code needs an NVIDIA GPU of compute capability 9.0; %s is "
		    "not one", name, x->name);
	cl_program first = clx_build(x, name, embedded_src, files, options);
	/* The program belongs to every device of the context (gpu:all shares one) and was
	 * built for this one: its binary is this device's entry of the lists. */
	cl_uint nd = 0, at;
	CL_CHECK(clGetProgramInfo(first, CL_PROGRAM_NUM_DEVICES, sizeof nd, &nd, NULL));
	cl_device_id *devs = xcalloc(MAX(nd, 1), sizeof *devs);
	size_t *sizes = xcalloc(MAX(nd, 1), sizeof *sizes);
	unsigned char **bins = xcalloc(MAX(nd, 1), sizeof *bins);
	CL_CHECK(clGetProgramInfo(first, CL_PROGRAM_DEVICES, nd * sizeof *devs, devs, NULL));
	for (at = 0; at < nd && devs[at] != x->device; at++)
		;
	if (at == nd)
		die("%s.cl: the program built on %s does not list it", name, x->name);
	CL_CHECK(clGetProgramInfo(first, CL_PROGRAM_BINARY_SIZES, nd * sizeof *sizes, sizes,
	    NULL));
	unsigned char *ptx = bins[at] = xmalloc(sizes[at] + 1);
	CL_CHECK(clGetProgramInfo(first, CL_PROGRAM_BINARIES, nd * sizeof *bins, bins, NULL));
	ptx[sizes[at]] = '\0';
	free(devs);
	free(sizes);
	free(bins);
	clReleaseProgram(first);
	char *sm90a = clx_ptx_sm90a((char *)ptx);
	if (sm90a == NULL)
		die("%s.cl: the program binary on %s is not PTX for sm_90, which sm_90a code "
		    "needs", name, x->name);
	free(ptx);

	/* the build options NVIDIA's PTX compiler reads (register cap, verbose) */
	char opts[512] = "";
	for (const char *p = options; (p = strstr(p, "-cl-nv-")) != NULL; p++) {
		size_t len = strcspn(p, " ");
		size_t at = strlen(opts);
		if (at + len + 2 < sizeof opts)
			snprintf(opts + at, sizeof opts - at, "%s%.*s", at ? " " : "", (int)len, p);
	}
	size_t len = strlen(sm90a);
	const unsigned char *bin = (const unsigned char *)sm90a;
	cl_int status = CL_SUCCESS, err = CL_SUCCESS;
	cl_program prog = clCreateProgramWithBinary(x->ctx, 1, &x->device, &len, &bin, &status,
	    &err);
	if (err != CL_SUCCESS || status != CL_SUCCESS)
		die("%s.cl: %s refused its own PTX retargeted to sm_90a: %s", name, x->name,
		    cl_errname(err != CL_SUCCESS ? err : status));
	vlog("building %s.cl again from its PTX for sm_90a: %s", name, opts);
	build_or_die(x, prog, name, opts);
	free(sm90a);
	return prog;
}

cl_kernel
clx_kernel(cl_program prog, const char *kernel_name)
{
	cl_int err;
	cl_kernel k = clCreateKernel(prog, kernel_name, &err);
	if (err != CL_SUCCESS)
		die("kernel %s: %s", kernel_name, cl_errname(err));
	return k;
}
