/* editdist4r_bp.cu: editdist4r's bit-parallel GPU engines (kernels/editdist4r_bp.cuh)
 * run on the CPU as build/test/edbp, so that what --mode infix and prefix add to them
 * (the top row, the last row followed column by column, the first of equal ends) is
 * proven without a GPU, against python3-edlib (tests/editdist4r_gpu_modes.bats).
 * Built by `make testbins` where nvcc is; host code only, no CUDA call.
 *
 *   edbp tp|wf global|infix|prefix [K] < PAIRS
 *
 * reads "A<TAB>B" lines and prints, a line a pair, the distance and, for infix and
 * prefix, START (tp only) and END, TAB-separated, -1 for all above K:
 *   tp  bp_tp's pair function itself, bp_pair<NW, MODE> (A at most 256 bytes in the
 *       modes; the global distance swaps the sides as ed_gpu_submit does), and for
 *       infix bp_tp_start's, bp_start<NW> (the GPU's wavefront leaves START to the
 *       CPU path's code)
 *   wf  the wavefront's data flow over BpEng: strips of 32 rows from the top, each over
 *       every chunk of 32 columns with the h vectors the strip above left, the first
 *       strip under BpEng::first, the last one's chunks through best_chunk, as wf's
 *       threads do them (without the wavefront's schedule and handoffs, and without
 *       the global distance's band: the modes have none). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "editdist4r_bp.cuh"

static const char *const modes[] = {"global", "infix", "prefix"};

/* A copy of s, 16-byte aligned and readable 32 bytes past its end (the engines load
 * 16 bytes at a time). */
static uint8_t *
aligned_copy(const char *s, size_t n)
{
	size_t cap = (n + 32 + 15) & ~(size_t)15;
	uint8_t *p = (uint8_t *)aligned_alloc(16, cap);
	if (p == NULL) {
		fprintf(stderr, "edbp: out of memory\n");
		exit(1);
	}
	memset(p, 0, cap);
	memcpy(p, s, n);
	return p;
}

/* bp_pair, and for infix bp_start, on NW words of rows */
template <int NW, int MODE>
static void
tp_pair(const uint8_t *A, const uint8_t *B, int m, int n, long long K, int32_t *d,
    int32_t *s, int32_t *e)
{
	bp_pair<NW, MODE>(A, (const uint4 *)B, m, n, K, d, e);
	if (MODE == ED_INFIX)	/* as bp_tp_start */
		*s = *d < 0 ? -1 : *e < 0 ? 0 : bp_start<NW>(A, B, m, *e, *d);
}

template <int MODE>
static void
tp_words(int nw, const uint8_t *A, const uint8_t *B, int m, int n, long long K, int32_t *d,
    int32_t *s, int32_t *e)
{
	switch (nw) {
	case 1: tp_pair<1, MODE>(A, B, m, n, K, d, s, e); break;
	case 2: tp_pair<2, MODE>(A, B, m, n, K, d, s, e); break;
	case 3: tp_pair<3, MODE>(A, B, m, n, K, d, s, e); break;
	case 4: tp_pair<4, MODE>(A, B, m, n, K, d, s, e); break;
	case 5: tp_pair<5, MODE>(A, B, m, n, K, d, s, e); break;
	case 6: tp_pair<6, MODE>(A, B, m, n, K, d, s, e); break;
	case 7: tp_pair<7, MODE>(A, B, m, n, K, d, s, e); break;
	default: tp_pair<8, MODE>(A, B, m, n, K, d, s, e); break;
	}
}

static void
tp(int mode, const uint8_t *A, int m, const uint8_t *B, int n, long long K, int32_t *d,
    int32_t *s, int32_t *e)
{
	if (mode == ED_GLOBAL && m > n) {	/* the shorter side as rows */
		tp(mode, B, n, A, m, K, d, s, e);
		return;
	}
	if (m > 8 * 32) {
		fprintf(stderr, "edbp: tp: A has %d bytes, more than bp_tp's 256 rows\n", m);
		exit(1);
	}
	const int nw = (m + 31) / 32;
	if (mode == ED_INFIX)
		tp_words<ED_INFIX>(nw, A, B, m, n, K, d, s, e);
	else if (mode == ED_PREFIX)
		tp_words<ED_PREFIX>(nw, A, B, m, n, K, d, s, e);
	else
		tp_words<ED_GLOBAL>(nw, A, B, m, n, K, d, s, e);
}

static void
wf(int mode, const uint8_t *A, int m, const uint8_t *B, int n, long long K, int32_t *d,
    int32_t *e)
{
	static uint32_t peq[256 * BpEng::THREADS];	/* a block's Peq; thread 0's column */
	const int W = BpEng::W, S = BpEng::S, nch = (n + W - 1) / W, nst = (m + S - 1) / S;
	uint2 *hrow = (uint2 *)calloc((size_t)nch + 1, sizeof *hrow);
	ed_best best;
	int score = m;
	best_init(best, m);
	for (int st = 0; st < nst; st++) {
		const int i0 = st * S, R = m - i0 < S ? m - i0 : S;
		const bool track = mode != ED_GLOBAL && st == nst - 1;
		BpEng eng;
		eng.init_at(peq, A, i0, R);
		eng.left();
		score = i0 + R;		/* D[i1][0], the corner of the unbanded wavefront */
		best_init(best, score);
		for (int c = 0; c < nch; c++) {
			const int X = n - c * W < W ? n - c * W : W;
			uint2 h = st == 0 ? BpEng::first(X, mode) : hrow[c];
			const int before = score;
			score += eng.step(B + c * W, X, h);
			hrow[c] = h;
			if (track)
				best_chunk(best, before, h.x, h.y, X, c * W);
		}
	}
	free(hrow);
	if (mode != ED_GLOBAL)
		best_out(best, K, d, e);
	else
		*d = K >= 0 && score > K ? -1 : score;
}

int
main(int argc, char **argv)
{
	if (argc < 3 || argc > 4 || (strcmp(argv[1], "tp") != 0 && strcmp(argv[1], "wf") != 0)) {
		fprintf(stderr, "usage: edbp tp|wf global|infix|prefix [K] < PAIRS\n");
		return 2;
	}
	int mode = -1;
	for (int i = 0; i < 3; i++)
		if (strcmp(argv[2], modes[i]) == 0)
			mode = i;
	if (mode < 0) {
		fprintf(stderr, "edbp: no mode %s\n", argv[2]);
		return 2;
	}
	const long long K = argc == 4 ? atoll(argv[3]) : -1;
	const bool engine_tp = strcmp(argv[1], "tp") == 0;
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	while ((len = getline(&line, &cap, stdin)) > 0) {
		if (line[len - 1] == '\n')
			line[--len] = '\0';
		char *tab = strchr(line, '\t');
		if (tab == NULL) {
			fprintf(stderr, "edbp: a line without a TAB\n");
			return 1;
		}
		const int m = (int)(tab - line), n = (int)(len - m - 1);
		uint8_t *A = aligned_copy(line, m), *B = aligned_copy(tab + 1, n);
		int32_t d, e = -1, st = 0;
		struct ed_band bd;
		if (mode != ED_GLOBAL && mode_trivial(m, n, K, &d, &e)) {
			/* settled on the host, as ed_gpu_submit does */
		} else if (mode == ED_GLOBAL && !ed_band_make(m, n, K, &bd)) {
			d = -1;
		} else if (mode == ED_GLOBAL && (m == 0 || n == 0)) {
			d = m > n ? m : n;
		} else if (engine_tp) {
			tp(mode, A, m, B, n, K, &d, &st, &e);
		} else {
			wf(mode, A, m, B, n, K, &d, &e);
		}
		if (d < 0)
			st = -1;
		if (mode == ED_GLOBAL)
			printf("%d\n", d);
		else if (engine_tp)
			printf("%d\t%d\t%d\n", d, st, e);
		else
			printf("%d\t%d\n", d, e);
		free(A);
		free(B);
	}
	free(line);
	return ferror(stdout) || fflush(stdout) != 0;
}
