/* ranks_mpi.c: the MPI plugin (see ranks_mpi.h): MPI's calls for ranks.c, built alone
 * as accelkit-mpi.so with MPI's flags, never into libaccelkit.a. */
#include <mpi.h>

#include "ranks_mpi.h"

/* MPI counts are int: big arrays go in pieces of at most this many elements. */
#define PIECE ((size_t)1 << 28)
#define MIN(a, b) ((a) < (b) ? (a) : (b))

static char why[96 + MPI_MAX_ERROR_STRING];

/* NULL for MPI_SUCCESS, else "what: MPI's message" */
static const char *
check(int rc, const char *what)
{
	char msg[MPI_MAX_ERROR_STRING];
	int len = 0, n = 0;
	if (rc == MPI_SUCCESS)
		return NULL;
	if (MPI_Error_string(rc, msg, &len) != MPI_SUCCESS)
		len = 0;
	for (const char *w = what; *w != '\0' && n < 64; w++)
		why[n++] = *w;
	why[n++] = ':';
	why[n++] = ' ';
	for (int i = 0; i < len; i++)
		why[n++] = msg[i];
	why[n] = '\0';
	return why;
}

static const char *
init(int *argc, char ***argv, int *size, int *rank, int *local, int *nlocal)
{
	const char *e;
	MPI_Comm host;
	if ((e = check(MPI_Init(argc, argv), "MPI_Init")) != NULL ||
	    (e = check(MPI_Comm_size(MPI_COMM_WORLD, size), "MPI_Comm_size")) != NULL ||
	    (e = check(MPI_Comm_rank(MPI_COMM_WORLD, rank), "MPI_Comm_rank")) != NULL)
		return e;
	/* the ranks of this host: a communicator of those that share memory */
	if ((e = check(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, *rank,
	    MPI_INFO_NULL, &host), "MPI_Comm_split_type")) != NULL ||
	    (e = check(MPI_Comm_rank(host, local), "MPI_Comm_rank")) != NULL ||
	    (e = check(MPI_Comm_size(host, nlocal), "MPI_Comm_size")) != NULL)
		return e;
	MPI_Comm_free(&host);
	return NULL;
}

static void
finalize(void)
{
	MPI_Finalize();
}

static const char *
reduce(void *v, size_t n, int f64, int op)
{
	static const MPI_Op ops[] = {[RANKS_SUM] = MPI_SUM, [RANKS_MIN] = MPI_MIN,
	    [RANKS_MAX] = MPI_MAX};
	const char *e = NULL;
	for (size_t i = 0; i < n && e == NULL; i += PIECE)
		e = check(MPI_Allreduce(MPI_IN_PLACE, (char *)v + i * 8, (int)MIN(PIECE, n - i),
		    f64 ? MPI_DOUBLE : MPI_INT64_T, ops[op], MPI_COMM_WORLD), "MPI_Allreduce");
	return e;
}

static const char *
exscan_u64(uint64_t v, uint64_t *before)
{
	return check(MPI_Exscan(&v, before, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD),
	    "MPI_Exscan");
}

static const char *
bcast(void *buf, size_t bytes, int root)
{
	const char *e = NULL;
	for (size_t i = 0; i < bytes && e == NULL; i += PIECE)
		e = check(MPI_Bcast((char *)buf + i, (int)MIN(PIECE, bytes - i), MPI_BYTE, root,
		    MPI_COMM_WORLD), "MPI_Bcast");
	return e;
}

static const char *
gather_u64(uint64_t v, uint64_t *all, int root)
{
	return check(MPI_Gather(&v, 1, MPI_UINT64_T, all, 1, MPI_UINT64_T, root,
	    MPI_COMM_WORLD), "MPI_Gather");
}

static const char *
allgather_u64(uint64_t v, uint64_t *all)
{
	return check(MPI_Allgather(&v, 1, MPI_UINT64_T, all, 1, MPI_UINT64_T, MPI_COMM_WORLD),
	    "MPI_Allgather");
}

static const char *
p_send(const void *buf, size_t bytes, int dest)
{
	const char *e = NULL;
	for (size_t i = 0; i < bytes && e == NULL; i += PIECE)
		e = check(MPI_Send((const char *)buf + i, (int)MIN(PIECE, bytes - i), MPI_BYTE,
		    dest, 0, MPI_COMM_WORLD), "MPI_Send");
	return e;
}

static const char *
p_recv(void *buf, size_t bytes, int src)
{
	const char *e = NULL;
	for (size_t i = 0; i < bytes && e == NULL; i += PIECE)
		e = check(MPI_Recv((char *)buf + i, (int)MIN(PIECE, bytes - i), MPI_BYTE, src, 0,
		    MPI_COMM_WORLD, MPI_STATUS_IGNORE), "MPI_Recv");
	return e;
}

const struct ranks_mpi accelkit_ranks_mpi = {
	.init = init, .finalize = finalize, .reduce = reduce, .exscan_u64 = exscan_u64,
	.bcast = bcast, .gather_u64 = gather_u64, .allgather_u64 = allgather_u64,
	.send = p_send, .recv = p_recv,
};
