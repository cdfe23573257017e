/* ranks.c: the job's ranks (see ranks.h). Without ACCELKIT_MPI (make MPI=0, or no
 * mpicc) every function is the one-rank case and no MPI header is read. */
#include "ranks.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"

#ifdef ACCELKIT_MPI
#include <limits.h>
#include <mpi.h>

static int nranks = 1, rank, local, nlocal = 1, started, finished;
static int divides;	/* ranks_init was called: the program divides its work */

/* Launched by a process manager that MPI_Init will talk to: Open MPI's mpirun sets
 * OMPI_COMM_WORLD_SIZE; PMIx (Slurm's srun --mpi=pmix) and PMI-1 launchers set theirs. */
static int
launched(void)
{
	return getenv("OMPI_COMM_WORLD_SIZE") != NULL || getenv("PMIX_RANK") != NULL ||
	    getenv("PMI_SIZE") != NULL;
}

static void
check(int rc, const char *what)
{
	if (rc != MPI_SUCCESS) {
		char msg[MPI_MAX_ERROR_STRING];
		int len = 0;
		MPI_Error_string(rc, msg, &len);
		die("MPI: %s: %.*s", what, len, msg);
	}
}

void
ranks_init(int *argc, char ***argv)
{
	divides = 1;
	if (started || !launched())
		return;
	started = 1;
	check(MPI_Init(argc, argv), "MPI_Init");
	check(MPI_Comm_size(MPI_COMM_WORLD, &nranks), "MPI_Comm_size");
	check(MPI_Comm_rank(MPI_COMM_WORLD, &rank), "MPI_Comm_rank");
	/* the ranks of this host: a communicator of those that share memory */
	MPI_Comm host;
	check(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL,
	    &host), "MPI_Comm_split_type");
	check(MPI_Comm_rank(host, &local), "MPI_Comm_rank");
	check(MPI_Comm_size(host, &nlocal), "MPI_Comm_size");
	MPI_Comm_free(&host);
	atexit(ranks_finish);
}

void
ranks_finish(void)
{
	if (!started || finished)
		return;
	finished = 1;
	MPI_Finalize();
}

int ranks_rank(void) { return rank; }
int ranks_size(void) { return nranks; }
int ranks_local(void) { return local; }
int ranks_local_size(void) { return nlocal; }
int ranks_compiled(void) { return 1; }
static int program_divides(void) { return divides; }

/* MPI counts are int: big arrays go in pieces of at most this many elements. */
#define PIECE ((size_t)1 << 28)

static void
reduce(void *v, size_t n, size_t esz, MPI_Datatype t, MPI_Op op)
{
	if (nranks == 1)
		return;
	for (size_t i = 0; i < n; i += PIECE)
		check(MPI_Allreduce(MPI_IN_PLACE, (char *)v + i * esz, (int)MIN(PIECE, n - i), t, op,
		    MPI_COMM_WORLD), "MPI_Allreduce");
}

void ranks_sum_i64(int64_t *v, size_t n) { reduce(v, n, 8, MPI_INT64_T, MPI_SUM); }
void ranks_min_i64(int64_t *v, size_t n) { reduce(v, n, 8, MPI_INT64_T, MPI_MIN); }
void ranks_max_i64(int64_t *v, size_t n) { reduce(v, n, 8, MPI_INT64_T, MPI_MAX); }
void ranks_sum_f64(double *v, size_t n) { reduce(v, n, 8, MPI_DOUBLE, MPI_SUM); }
void ranks_min_f64(double *v, size_t n) { reduce(v, n, 8, MPI_DOUBLE, MPI_MIN); }
void ranks_max_f64(double *v, size_t n) { reduce(v, n, 8, MPI_DOUBLE, MPI_MAX); }

uint64_t
ranks_exscan_u64(uint64_t v)
{
	uint64_t before = 0;
	if (nranks > 1)
		check(MPI_Exscan(&v, &before, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD),
		    "MPI_Exscan");
	return rank == 0 ? 0 : before;	/* Exscan leaves rank 0's undefined */
}

void
ranks_bcast(void *buf, size_t bytes, int root)
{
	if (nranks == 1)
		return;
	for (size_t i = 0; i < bytes; i += PIECE)
		check(MPI_Bcast((char *)buf + i, (int)MIN(PIECE, bytes - i), MPI_BYTE, root,
		    MPI_COMM_WORLD), "MPI_Bcast");
}

/* Rank 0 receives each rank's bytes in turn, in pieces (no int count overflows). */
void *
ranks_gather(const void *buf, size_t bytes, size_t *total)
{
	uint64_t mine = bytes, *size = NULL;
	char *out = NULL;

	if (rank == 0)
		size = xmallocarray((size_t)nranks, sizeof *size);
	if (nranks > 1)
		check(MPI_Gather(&mine, 1, MPI_UINT64_T, size, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD),
		    "MPI_Gather");
	else
		size[0] = mine;
	if (rank != 0) {
		for (size_t i = 0; i < bytes; i += PIECE)
			check(MPI_Send((const char *)buf + i, (int)MIN(PIECE, bytes - i), MPI_BYTE, 0,
			    0, MPI_COMM_WORLD), "MPI_Send");
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
	for (int r = 1; r < nranks; r++)
		for (size_t i = 0; i < size[r]; i += PIECE) {
			check(MPI_Recv(out + at, (int)MIN(PIECE, size[r] - i), MPI_BYTE, r, 0,
			    MPI_COMM_WORLD, MPI_STATUS_IGNORE), "MPI_Recv");
			at += MIN(PIECE, size[r] - i);
		}
	free(size);
	*total = sum;
	return out;
}

void *
ranks_allgather(const void *buf, size_t bytes, size_t *total, uint64_t **each)
{
	uint64_t mine = bytes, *size = xmallocarray((size_t)nranks, sizeof *size);
	if (nranks > 1)
		check(MPI_Allgather(&mine, 1, MPI_UINT64_T, size, 1, MPI_UINT64_T, MPI_COMM_WORLD),
		    "MPI_Allgather");
	else
		size[0] = mine;
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

#else	/* one rank */

void *
ranks_allgather(const void *buf, size_t bytes, size_t *total, uint64_t **each)
{
	if (each != NULL) {
		*each = xmalloc(sizeof **each);
		(*each)[0] = bytes;
	}
	return ranks_gather(buf, bytes, total);
}

void ranks_init(int *argc, char ***argv) { (void)argc; (void)argv; }
void ranks_finish(void) {}
int ranks_rank(void) { return 0; }
int ranks_size(void) { return 1; }
int ranks_local(void) { return 0; }
int ranks_local_size(void) { return 1; }
int ranks_compiled(void) { return 0; }
static int program_divides(void) { return 0; }
void ranks_sum_i64(int64_t *v, size_t n) { (void)v; (void)n; }
void ranks_min_i64(int64_t *v, size_t n) { (void)v; (void)n; }
void ranks_max_i64(int64_t *v, size_t n) { (void)v; (void)n; }
void ranks_sum_f64(double *v, size_t n) { (void)v; (void)n; }
void ranks_min_f64(double *v, size_t n) { (void)v; (void)n; }
void ranks_max_f64(double *v, size_t n) { (void)v; (void)n; }
uint64_t ranks_exscan_u64(uint64_t v) { (void)v; return 0; }
void ranks_bcast(void *buf, size_t bytes, int root) { (void)buf; (void)bytes; (void)root; }

void *
ranks_gather(const void *buf, size_t bytes, size_t *total)
{
	void *out = xmalloc(MAX(bytes, 1));
	if (bytes > 0)
		memcpy(out, buf, bytes);
	*total = bytes;
	return out;
}

#endif

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
