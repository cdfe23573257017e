/* editdist4r_tune.h: editdist4r's tuning, in one place: the choices made per device
 * (a row of editdist4r_tune_table, picked once by the device's description, see
 * common/tune.h) and the CUDA kernels' shapes, which are fixed when the kernels are
 * compiled. Each choice says what measurement made it, or that it was reasoned. A new
 * GPU means adding a row above the ones it should override, which passes
 * editdist4r_tune_illegal below (tests/editdist4r.bats runs it on every row). */
#ifndef EDITDIST4R_TUNE_H
#define EDITDIST4R_TUNE_H

#include <stddef.h>
#include <stdint.h>

#include "editdist4r.h"
#include "tune.h"

/* ---- the CUDA kernels' shapes: one value for every GPU of a build ----
 * Template and __launch_bounds__ parameters and shared-memory layouts of the kernels
 * (kernels/editdist4r_tp.cu, kernels/editdist4r_wf.cu), so no row can change them: a
 * GPU that wants others needs kernels compiled for them. Not measured (the values of
 * the first implementation); what each implies is beside it. */

/* Threads of a thread-per-pair block. fr_tp keeps the shorter string and the h
 * vectors, a column a thread, in shared memory: 128 x (256 + 128) bytes = 48 KiB at
 * t = 2 for short sides of 256 bytes, beside the table. */
#define ED_TP_THREADS 128
/* Wavefront steps between the handoffs of a job's bottom row to the next job (one
 * warp moves them, an h vector a lane). */
#define ED_WF_HANDOFF 32
/* Strips (threads) of a wavefront block: Four-Russians strips are t rows; bit-parallel
 * strips 32 rows, each thread with a 256-word Peq table in shared memory (64 KiB a
 * block). */
#define ED_WF_FR_THREADS 256
#define ED_WF_BP_THREADS 64

/* ---- batches: one value for every device ----
 * Pairs are gathered into batches before the device is chosen (auto weighs the work of
 * the first pairs), so their bounds cannot come from a device's row. Reasoned, not
 * measured: ED_BATCH_QUEUE batches of ED_BATCH_BYTES of strings (256 MiB) keep the GPU
 * busy while the next is read, and stay well within a GPU's and the host's memory.
 * --max-device-mem lowers
 * ED_BATCH_BYTES to a quarter of its value (at least 1 MiB). */
#define ED_BATCH_BYTES ((size_t)64 << 20)
#define ED_BATCH_PAIRS ((size_t)1 << 20)
#define ED_BATCH_QUEUE 4
/* Regular files: auto decides once this much of the pairs is read, the work scaled to
 * the files' size, soon enough to call CUDA's start off (cudadev.h's grace) where the
 * CPU is chosen. */
#define ED_SETTLE_BYTES ((uint64_t)8 << 20)
/* Pinned buffers that a batch's strings pass through on their way to the GPU: two, so
 * that copying one piece into them overlaps the transfer of the last. Reasoned: 8 MiB
 * pieces take ~0.2 ms at the H200's 50 GB/s, long beside a copy's start-up. */
#define ED_STAGE_BYTES ((size_t)8 << 20)

/* The work of a pair for auto's cost model, in cells: |A| x |B|, or with --max-dist K
 * the cells of the band that is computed (none when the lengths differ by more than
 * K). An estimate: the engines compute whole blocks, strips and words. --mode infix
 * and prefix (enum ed_mode): |A| x |B| whatever K, since the GPU's engines compute
 * the whole table for them, and the CPU's band every block of a short query
 * (editdist4r_band.c), at the global distance's rates: the CPU's band computed
 * infix for 150-base reads in 1,000-base windows at 9.7e9 cells a second on one
 * thread of the development machine (15.5 us a read, 2026-11-29), near ED_COST's
 * 1.1e10; the GPU's rate for them is not measured. */
static inline double
ed_pair_work(uint64_t m, uint64_t n, int64_t K, int mode)
{
	uint64_t lo = m < n ? m : n, hi = m < n ? n : m;
	if (K < 0 || mode != ED_GLOBAL)
		return (double)lo * (double)hi;
	if (hi - lo > (uint64_t)K)
		return 0;
	double band = 2.0 * (double)K + 1;
	return (double)lo * (band < (double)hi ? band : (double)hi);
}

/* auto samples a long pair's edit rate (ed_band_work) only when its whole table has
 * this many cells: below it the CPU wins even computing the whole table (0.36 s on one
 * thread at ED_COST's 1.1e10 cells a second, against the GPU's 0.15 s of set-up and
 * what is left of CUDA's 0.3 s start), and the sample would only cost time.
 * Reasoned from the cost model, not measured. */
#define ED_BAND_SAMPLE_CELLS 4e9
/* Below it, a batch of many long pairs: one pair's table costs the CPU little, but a
 * hundred 48.5 kb pairs were weighed as 2.35e11 cells (10.7 s on 2 threads, against
 * 1.29 s on the GPU) where the band computed them in 175 ms on the development
 * machine's 2 threads. So once such pairs (of ED_BAND_SHARE_CELLS or more: a 32 kb
 * square, where ed_band_work's samples begin to fit) add up to ED_BAND_SAMPLE_CELLS,
 * ED_BAND_SHARE_PAIRS of them are sampled, and the band's share of their tables
 * scales the others', those before included. Not before: a sample took 1 ms of the
 * read for one lambda pair (48.5 kb), whose whole run takes 3-4 ms. */
#define ED_BAND_SHARE_CELLS 1e9
#define ED_BAND_SHARE_PAIRS 8

/* ---- the choices per device ---- */

struct editdist4r_tune {
	const char *device;	/* tune_pick's pattern: words all in the description */
	int auto_algo;		/* the engine of --algo auto: ED_BP or ED_4R */
	int t;			/* the Four-Russians block size without -t, 1..FR_TMAX */
	/* GPU: a thread per pair when the shorter side has at most tp_short bytes (at most
	 * 256, the 8 words of bp_tp) and the longer at most tp_long; the others go to the
	 * wavefront. Reasoned, not measured. */
	int tp_short, tp_long;
	/* -d auto: the CPU path against the GPU, in cells (ed_pair_work). auto reads the
	 * row that a CUDA GPU picks, since it decides before the start-up has said which
	 * GPU there is. */
	struct cost_model cost;
	const char *measured;	/* what chose auto_algo and t; -v prints it */
};

/* The cost model, measured by bench/e2e on the H200 machine (16 cores), 2026-11-24.
 * CPU: 1M x 150 bp (22.5 G cells) computed in 129 ms on 16 threads, and one 48.5 kb
 * pair (2.35 G cells, one thread's: auto counts a thread a pair) in 177 ms: 1.1e10
 * cells a second a thread; 2 ms of its own. GPU: 1M x 150 bp computed in 81 ms with
 * the strings' transfer (58 ms) and the kernels (2 ms): 2.8e11 cells a second; 150 ms
 * of set-up beyond CUDA's start, what the whole process of the GPU run took beyond the
 * CPU run's (440 against 339 ms) less their compute: its reading is slower beside
 * CUDA's start (229 against 179 ms) and its staging and exit cost more. */
#define ED_COST {"cells", 1.1e10, 0.002, 2.8e11, 0.150}

static const struct editdist4r_tune editdist4r_tune_table[] = {
	/* Every NVIDIA GPU: measured on an H200 (bench/README.md, section editdist4r).
	 * auto: bit-parallel was faster on the thread-per-pair batch (1.7 ms against
	 * 9.8 ms for Four-Russians t=3) and on the wavefront (lambda 48.5 kb: 6.6 ms
	 * against 30.4 ms for t=3; random: 7.2 ms against 25.0 ms for t=2). t = 2: the
	 * fastest Four-Russians wavefront on the random pair and at every L of the
	 * paper's experiment (t = 3 was 10% faster on the lambda pair and 15% on the
	 * batch of short pairs). */
	{.device = "gpu nvidia", .auto_algo = ED_BP, .t = 2, .tp_short = 256,
	    .tp_long = 1 << 16, .cost = ED_COST,
	    .measured = "H200 2026-11-22, bench/editdist4r: 1M x 150 bp bit-parallel 1.7 ms, "
	    "4R t=3 9.8; 48.5 kb pairs bit-parallel 6.6 and 7.2 ms, 4R t=2 33.6 and 25.0, "
	    "t=3 30.4 and 31.8"},
	/* The CPU path ("cpu"), and any device no row above names. t = 3: 0.86 against
	 * 0.57 GCUPS for t = 2 on 300-base pairs, on the 2-core development machine.
	 * auto: bit-parallel, "fastest everywhere measured" (bench/README.md). */
	{.device = "", .auto_algo = ED_BP, .t = 3, .tp_short = 256, .tp_long = 1 << 16,
	    .cost = ED_COST,
	    .measured = "development machine 2026-11-22, 300-base pairs: 4R t=3 0.86 GCUPS, "
	    "t=2 0.57"},
};

/* What the engines and auto assume of a row; NULL when every row of tab[0..n) holds
 * them, else why not, with *row the row that breaks it. tests/tunerows.c runs it on
 * the table above and on broken copies of it (tests/editdist4r.bats). */
static inline const char *
editdist4r_tune_illegal(const struct editdist4r_tune *tab, size_t n, size_t *row)
{
	for (*row = 0; *row < n; (*row)++) {
		const struct editdist4r_tune *t = &tab[*row];
		/* --algo auto runs ed_engine's choice: the CPU and the GPU have these two
		 * (the plain DP has no GPU engine). */
		if (t->auto_algo != ED_BP && t->auto_algo != ED_4R)
			return "auto_algo must be ED_BP or ED_4R: the engines auto can run on every "
			    "device";
		/* The Four-Russians table is built for t = 1..FR_TMAX (fr_table_len; an
		 * entry's vectors fit 5 bits only up to 3 trits). */
		if (t->t < 1 || t->t > FR_TMAX)
			return "t must be 1 to FR_TMAX: the Four-Russians table's block size";
		/* bp_tp (editdist4r_tp.cu) holds the shorter side in 8 words of 32 bits, and
		 * ed_gpu_open refuses more. */
		if (t->tp_short < 0 || t->tp_short > 8 * 32)
			return "tp_short must be 0 to 256: a thread per pair holds the shorter side "
			    "in 8 words of 32 bits";
		/* A pair goes to a thread when lo <= tp_short and hi <= tp_long: a longer side
		 * shorter than the shorter one's bound would make tp_short a lie. */
		if (t->tp_long < t->tp_short)
			return "tp_long is below tp_short: the longer side's bound must hold the "
			    "shorter side's";
		if (cost_model_illegal(&t->cost) != NULL)
			return cost_model_illegal(&t->cost);
		/* -v prints it */
		if (t->measured == NULL)
			return "measured is missing: -v names the measurement that chose the row";
	}
	/* -d auto weighs with the row that a CUDA GPU picks (editdist4r_run.c), before
	 * the start-up has said which GPU there is. */
	*row = tune_pick(tab, n, sizeof *tab, "gpu nvidia");
	if (tab[*row].cost.unit == NULL)
		return "the row that \"gpu nvidia\" picks needs the cost model: -d auto weighs "
		    "with it";
	return NULL;
}

#endif
