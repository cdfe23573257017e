/* ranks.c: the job's ranks (see ranks.h). MPI's calls are in a plugin (ranks_mpi.h),
 * loaded under a launcher only; without ACCELKIT_MPI (make MPI=0, or no mpicc) there is
 * no plugin and every function is the one-rank case. */
#include "ranks.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"

#include "ranks_mpi.h"

static int nranks = 1, rank, local, nlocal = 1, started, finished;
static int divides;	/* ranks_init was called: the program divides its work */
static const struct ranks_mpi *mpi;	/* the plugin, once loaded under a launcher */

/* Launched by a process manager that MPI_Init will talk to: Open MPI's mpirun sets
 * OMPI_COMM_WORLD_SIZE; PMIx (Slurm's srun --mpi=pmix) and PMI-1 launchers set theirs. */
static int
launched(void)
{
	return getenv("OMPI_COMM_WORLD_SIZE") != NULL || getenv("PMIX_RANK") != NULL ||
	    getenv("PMI_SIZE") != NULL;
}

static void
check(const char *e)
{
	if (e != NULL)
		die("MPI: %s", e);
}

#ifdef ACCELKIT_MPI
/* The plugin beside the program: BIN/../lib/accelkit/accelkit-mpi.so, where make puts
 * it in the build tree and make install and the package under PREFIX. RTLD_GLOBAL: MPI's
 * own components, loaded by MPI_Init, look for the MPI library's symbols globally. */
static void
load_plugin(void)
{
	char exe[4096], path[4096 + 64];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n <= 0)
		die("MPI: cannot find this program's path (/proc/self/exe) to load %s",
		    RANKS_MPI_PLUGIN);
	exe[n] = '\0';
	char *slash = strrchr(exe, '/');
	if (slash != NULL)
		*slash = '\0';
	snprintf(path, sizeof path, "%s/../lib/accelkit/%s", exe, RANKS_MPI_PLUGIN);
	void *h = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
	if (h == NULL)
		die("MPI: cannot load %s, which runs the ranks' MPI calls: %s", path, dlerror());
	mpi = dlsym(h, RANKS_MPI_SYMBOL);
	if (mpi == NULL)
		die("MPI: %s has no %s: %s", path, RANKS_MPI_SYMBOL, dlerror());
}
int ranks_compiled(void) { return 1; }
#else
static void load_plugin(void) {}
int ranks_compiled(void) { return 0; }
#endif

void
ranks_init(int *argc, char ***argv)
{
	divides = 1;
	if (started || !ranks_compiled() || !launched())
		return;
	started = 1;
	load_plugin();
	check(mpi->init(argc, argv, &nranks, &rank, &local, &nlocal));
	atexit(ranks_finish);
}

void
ranks_finish(void)
{
	if (!started || finished)
		return;
	finished = 1;
	mpi->finalize();
}

int ranks_rank(void) { return rank; }
int ranks_size(void) { return nranks; }
int ranks_local(void) { return local; }
int ranks_local_size(void) { return nlocal; }
static int program_divides(void) { return divides; }

static void
reduce(void *v, size_t n, int f64, int op)
{
	if (nranks > 1)
		check(mpi->reduce(v, n, f64, op));
}

void ranks_sum_i64(int64_t *v, size_t n) { reduce(v, n, 0, RANKS_SUM); }
void ranks_min_i64(int64_t *v, size_t n) { reduce(v, n, 0, RANKS_MIN); }
void ranks_max_i64(int64_t *v, size_t n) { reduce(v, n, 0, RANKS_MAX); }
void ranks_sum_f64(double *v, size_t n) { reduce(v, n, 1, RANKS_SUM); }
void ranks_min_f64(double *v, size_t n) { reduce(v, n, 1, RANKS_MIN); }
void ranks_max_f64(double *v, size_t n) { reduce(v, n, 1, RANKS_MAX); }

uint64_t
ranks_exscan_u64(uint64_t v)
{
	uint64_t before = 0;
	if (nranks > 1)
		check(mpi->exscan_u64(v, &before));
	return rank == 0 ? 0 : before;	/* Exscan leaves rank 0's undefined */
}

void
ranks_bcast(void *buf, size_t bytes, int root)
{
	if (nranks > 1)
		check(mpi->bcast(buf, bytes, root));
}

/* Rank 0 receives each rank's bytes in turn. */
void *
ranks_gather(const void *buf, size_t bytes, size_t *total)
{
	uint64_t *size = NULL;
	char *out = NULL;

	if (rank == 0)
		size = xmallocarray((size_t)nranks, sizeof *size);
	if (nranks > 1)
		check(mpi->gather_u64(bytes, size, 0));
	else
		size[0] = bytes;
	if (rank != 0) {
		check(mpi->send(buf, bytes, 0));
		*total = 0;
		return NULL;
	}
	size_t sum = 0;
	for (int r = 0; r < nranks; r++)
		sum += size[r];
	out = xmalloc(MAX(sum, 1));
	if (bytes > 0)
		memcpy(out, buf, bytes);
	size_t at = bytes;
	for (int r = 1; r < nranks; r++) {
		check(mpi->recv(out + at, size[r], r));
		at += size[r];
	}
	free(size);
	*total = sum;
	return out;
}

void *
ranks_allgather(const void *buf, size_t bytes, size_t *total, uint64_t **each)
{
	uint64_t *size = xmallocarray((size_t)nranks, sizeof *size);
	if (nranks > 1)
		check(mpi->allgather_u64(bytes, size));
	else
		size[0] = bytes;
	size_t sum = 0, at = 0;
	for (int r = 0; r < nranks; r++)
		sum += size[r];
	char *out = xmalloc(MAX(sum, 1));
	for (int r = 0; r < nranks; r++) {
		if (r == rank && bytes > 0)
			memcpy(out + at, buf, bytes);
		ranks_bcast(out + at, size[r], r);
		at += size[r];
	}
	*total = sum;
	if (each != NULL)
		*each = size;
	else
		free(size);
	return out;
}

static int serial;	/* between ranks_serial_begin and ranks_serial_end */

void
ranks_serial_begin(void)
{
	char go = 1;
	if (serial)
		return;
	serial = 1;
	if (ranks_rank() != 0)
		ranks_bcast(&go, 1, 0);
}

void
ranks_serial_end(void)
{
	char go = 1;
	if (!serial)
		return;
	serial = 0;
	if (ranks_rank() == 0)
		ranks_bcast(&go, 1, 0);
}

/* The launcher's word on this process: its rank and the ranks' number (NULL when not
 * launched by one), readable before MPI_Init and in a build without MPI. */
static const char *
launch_env(const char **me)
{
	const char *size = getenv("OMPI_COMM_WORLD_SIZE");
	*me = getenv("OMPI_COMM_WORLD_RANK");
	if (size == NULL) {
		size = getenv("PMI_SIZE");
		*me = getenv("PMI_RANK");
	}
	return size;
}

int
ranks_launch_rank(void)
{
	const char *me, *size = launch_env(&me);
	return size != NULL && atoi(size) > 1 && me != NULL ? atoi(me) : 0;
}

void
ranks_quiet_unless_first(void)
{
	if (ranks_launch_rank() != 0)
		for (;;)
			pause();	/* rank 0 says it; mpirun ends this rank with it */
}

void
ranks_refuse_undivided(void)
{
	const char *me, *size = launch_env(&me);
	if (size == NULL || atoi(size) <= 1 || program_divides())
		return;
	ranks_quiet_unless_first();
	if (ranks_compiled())
		die("this program does not divide its work among MPI ranks: each of the %s "
		    "would do all of it (run it without mpirun)", size);
	die("this build has no MPI: each of the %s ranks would do all of the work (build "
	    "with MPI, or run it without mpirun)", size);
}

int
ranks_deal_for(int n, int local, int nlocal, int *pick)
{
	int k = 0;
	if (n <= 0)
		return 0;
	if (nlocal <= 1 || local < 0 || local >= nlocal) {
		for (int i = 0; i < n; i++)
			pick[k++] = i;
	} else if (nlocal >= n) {
		pick[k++] = local % n;
	} else {
		for (int i = local; i < n; i += nlocal)
			pick[k++] = i;
	}
	return k;
}

int
ranks_deal(int n, int *pick)
{
	return ranks_deal_for(n, ranks_local(), ranks_size() > 1 ? ranks_local_size() : 1, pick);
}

void
ranks_share(uint64_t n, uint64_t *first, uint64_t *count)
{
	uint64_t r = (uint64_t)ranks_rank(), s = (uint64_t)ranks_size();
	uint64_t q = n / s, extra = n % s;
	*count = q + (r < extra);
	*first = r * q + MIN(r, extra);
}
