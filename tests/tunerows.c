/* tunerows: a program's tuning table (kernels/PROG_tune.h) through its legality checks
 * (PROG_tune_illegal, beside the table), for the program's suite; never installed.
 *
 *   tunerows PROG
 *       "PROG: N rows pass" when every row passes, with the catch-all row last that
 *       tune_pick requires; else "PROG: row I ("PATTERN"): what is wrong". Then each
 *       broken copy of the table below, which the checks must reject: "broken
 *       FIELD = VALUE: rejected: what is wrong". Exits 1 if the table fails or a broken
 *       copy passes (checks that reject nothing prove nothing). */
#include <stdio.h>
#include <string.h>

#include "clmatmul_tune.h"
#include "docsim_tune.h"
#include "editdist4r_tune.h"
#include "err.h"
#include "gmmscore_tune.h"
#include "skyline_tune.h"
#include "clkmeans_tune.h"
#include "tune.h"

static int bad;

/* The table's checks, and the catch-all row that tune_pick needs (common/tune.h). */
#define TABLE(prog, table, illegal) do { \
	size_t n_ = sizeof(table) / sizeof((table)[0]), row_; \
	const char *why_ = illegal((table), n_, &row_); \
	if (why_ == NULL && (table)[n_ - 1].device[0] != '\0') { \
		why_ = "the last row is not the catch-all (pattern \"\") that tune_pick needs"; \
		row_ = n_ - 1; \
	} \
	if (why_ != NULL) { \
		printf("%s: row %zu (\"%s\"): %s\n", (prog), row_, (table)[row_].device, why_); \
		bad = 1; \
	} else { \
		printf("%s: %zu rows pass\n", (prog), n_); \
	} \
} while (0)

/* A copy of table (rows of type row_type) with row r's FIELD set to VALUE, which
 * illegal must reject. BROKEN(SKY, ...): SKY names the three. */
#define BROKEN(...) BROKEN_(__VA_ARGS__)
#define BROKEN_(row_type, table, illegal, r, field, value) do { \
	size_t n_ = sizeof(table) / sizeof((table)[0]), row_; \
	row_type copy_[sizeof(table) / sizeof((table)[0])]; \
	memcpy(copy_, (table), sizeof copy_); \
	copy_[(r) < n_ ? (r) : n_ - 1].field = (value); \
	const char *why_ = illegal(copy_, n_, &row_); \
	printf("broken " #field " = " #value ": %s%s\n", why_ ? "rejected: " : "passes", \
	    why_ ? why_ : ""); \
	bad |= why_ == NULL; \
} while (0)
#define LAST ((size_t)-1)

#define CM struct clmatmul_tune, clmatmul_tune_table, cm_tune_illegal
static void
clmatmul(void)
{
	TABLE("clmatmul", clmatmul_tune_table, cm_tune_illegal);
	BROKEN(CM, 0, p.tn, 32);
	BROKEN(CM, 2, p.bk, 12);
	BROKEN(CM, 3, p.lw, 3);
	BROKEN(CM, 3, p.bk, 32);
	BROKEN(CM, 5, p.pn, 3);
	BROKEN(CM, 5, p.bm, 2048);
	BROKEN(CM, 5, p.vn, 0);
	BROKEN(CM, 5, p.staging, CM_ASYNC);
	BROKEN(CM, LAST, p.staging, 0);
	BROKEN(CM, LAST, p.tm, 5);
	BROKEN(CM, LAST, precision, CM_TF32);
	BROKEN(CM, LAST, cost.cpu_rate, 0);
	BROKEN(CM, 3, cost.gpu_fixed, -1);
	BROKEN(CM, 1, measured, "");
}

#define DS struct docsim_tune, docsim_tune_table, docsim_tune_illegal
static void
docsim(void)
{
	TABLE("docsim", docsim_tune_table, docsim_tune_illegal);
	BROKEN(DS, 0, tile_rows, 0);
	BROKEN(DS, 0, diag_block, 0);
	BROKEN(DS, 1, dense_df_divisor, 0);
	BROKEN(DS, 0, rank_block, 48);
	BROKEN(DS, 0, scatter_block, 2048);
	BROKEN(DS, 0, colsel_block, 0);
	BROKEN(DS, 1, cpu_rows, 0);
	BROKEN(DS, LAST, cost_dense.unit, 0);
	BROKEN(DS, 0, cost_sparse.gpu_fixed, -1);
}

#define GMM struct gmmscore_tune, gmmscore_tune_table, gmmscore_tune_illegal
static void
gmmscore(void)
{
	TABLE("gmmscore", gmmscore_tune_table, gmmscore_tune_illegal);
	BROKEN(GMM, 0, cpl, 3);
	BROKEN(GMM, 0, nsub, 17);
	BROKEN(GMM, LAST, cpu_fblk, 100);
	BROKEN(GMM, 1, chunk, 0);
	BROKEN(GMM, 0, cost.unit, 0);
	BROKEN(GMM, 0, cost.cpu_rate, -1);
}

#define SKY struct sky_tune, sky_tune_table, sky_tune_illegal
static void
skyline(void)
{
	TABLE("skyline", sky_tune_table, sky_tune_illegal);
	BROKEN(SKY, 0, batch_first, 0);
	BROKEN(SKY, 0, batch_max, 512);
	BROKEN(SKY, 0, grid_per_cell, 0);
	BROKEN(SKY, 0, grid_side_max, 65536);
	BROKEN(SKY, LAST, pivot_blocks, 0);
	BROKEN(SKY, LAST, cost_spatial.unit, 0);
	BROKEN(SKY, LAST, cost_classic.gpu_rate, 0);
}

#define ED struct editdist4r_tune, editdist4r_tune_table, editdist4r_tune_illegal
static void
editdist4r(void)
{
	TABLE("editdist4r", editdist4r_tune_table, editdist4r_tune_illegal);
	BROKEN(ED, 0, auto_algo, ED_DP);
	BROKEN(ED, LAST, t, 4);
	BROKEN(ED, LAST, t, 0);
	BROKEN(ED, 0, tp_short, 257);
	BROKEN(ED, 0, tp_long, 100);
	BROKEN(ED, 0, cost.cpu_rate, 0);
	BROKEN(ED, LAST, cost.gpu_fixed, -1);
	BROKEN(ED, 0, cost.unit, NULL);
	BROKEN(ED, LAST, measured, NULL);
}

#define KM struct clkmeans_tune, clkmeans_tune_table, clkmeans_tune_illegal
static void
clkmeans(void)
{
	TABLE("clkmeans", clkmeans_tune_table, clkmeans_tune_illegal);
	BROKEN(KM, 0, tmt, 12);
	BROKEN(KM, 0, rnv_small, 3);
	BROKEN(KM, 0, rg, 192);
	BROKEN(KM, 0, tmt, 256);
	BROKEN(KM, 0, rmv, 4);
	BROKEN(KM, LAST, tnt, 2);
	BROKEN(KM, LAST, db, 1);
	BROKEN(KM, LAST, update_cu, 0);
	BROKEN(KM, 0, cost.gpu_rate, 0);
	BROKEN(KM, LAST, cost.cpu_fixed, -1);
}

int
main(int argc, char **argv)
{
	progname = "tunerows";
	if (argc != 2)
		die("usage: tunerows clkmeans|clmatmul|docsim|editdist4r|gmmscore|skyline");
	if (strcmp(argv[1], "clmatmul") == 0)
		clmatmul();
	else if (strcmp(argv[1], "docsim") == 0)
		docsim();
	else if (strcmp(argv[1], "editdist4r") == 0)
		editdist4r();
	else if (strcmp(argv[1], "gmmscore") == 0)
		gmmscore();
	else if (strcmp(argv[1], "skyline") == 0)
		skyline();
	else if (strcmp(argv[1], "clkmeans") == 0)
		clkmeans();
	else
		die("%s: no such program's table", argv[1]);
	return bad;
}
