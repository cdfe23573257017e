/* gmmscore: GMM observation scores of speech feature frames against many models.
 *
 * main() reads the options; while CUDA starts it reads the models (common/gmm.h), makes
 * the scoring parameters and opens the features (kernels/gmmscore_feats.c); then
 * kernels/gmmscore_run.c settles the device (auto weighs the frames there are by the
 * cost model of kernels/gmmscore_tune.h, the GPU's layout of the parameters made
 * meanwhile), picks the tuning row and opens the stream, and main streams the features
 * through the device (kernels/gmmscore_stream.c) into the writer
 * (kernels/gmmscore_out.c). */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cudadev.h"
#include "err.h"
#include "gmmscore.h"
#include "gmmscore_stream.h"
#include "input.h"
#include "kaldi_io.h"
#include "output.h"
#include "speech.h"
#include "timer.h"

enum { OPT_DIMS = CLI_OPT_PROG, OPT_MODE, OPT_CHUNK, OPT_FIRST };

struct opts {
	const char *models;
	enum speech_format format;
	int dims;			/* 0: all the models' dimensions */
	enum gmm_mode mode;
	size_t top;			/* 0 with --all */
	int all;
	int ark_out;			/* -O ark */
	size_t chunk;			/* 0: the tuning row's, bounded by memory */
	uint64_t first_frame;		/* --first-frame: the first utterance's first number */
};

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: gmmscore -m MODELS [-av] [-t N] [--mode sum|max] [--dims N]\n"
	    "                [-f text|npy|htk|ark] [--chunk FRAMES] [--first-frame N]\n"
	    "                [-o FILE] [-O text|npy|ark]\n"
	    "                [-d DEVICE] [-j N] [--max-device-mem BYTES] [FEATURES ...]\n"
	    "       gmmscore --list-devices\n"
	    "\n"
	    "  -m, --models FILE      Kaldi (text or binary), HTK MMF or gmmscore text models\n"
	    "  -f, --format FMT       features: auto (default), text, npy, htk or ark\n"
	    "                         (FEATURES may be Kaldi rspecifiers: ark:F, scp:F)\n"
	    "      --dims N           use the first N dimensions of models and features\n"
	    "      --mode sum|max     log-likelihood (default) or best component\n"
	    "  -t, --top N            the N best models a frame (default 1)\n"
	    "  -a, --all              every model's score: a Kaldi text archive, or -O npy\n"
	    "      --chunk FRAMES     frames scored at a time (default: sized to memory)\n"
	    "      --first-frame N    number the first utterance's frames from N (a piece)\n"
	    "  -o, --output FILE      write to FILE (default standard output)\n"
	    "  -O, --output-format F  text (default), npy (with --all) or ark (a binary\n"
	    "                         Kaldi archive of every score, as gmm-compute-likes)\n"
	    "  -d, --device SPEC      auto, cpu, gpu, gpu:N, gpu:all or gpu:N,M ($ACCELKIT_DEVICE)\n"
	    "  -j, --threads N        CPU threads\n"
	    "      --max-device-mem B bound on the GPU memory used\n"
	    "      --list-devices     list the devices and exit\n"
	    "  -v, --verbose          device, sizes and phase times on stderr\n"
	    "      --progress         a progress line on stderr (a terminal's, by default)\n"
	    "  -h, --help, -V, --version\n");
}

static void
parse_args(int argc, char **argv, struct opts *o, struct common_opts *co)
{
	static const struct option longopts[] = {
		CLI_COMMON_LONG,
		CLI_MAXMEM_LONG,
		{"models", required_argument, NULL, 'm'},
		{"format", required_argument, NULL, 'f'},
		{"dims", required_argument, NULL, OPT_DIMS},
		{"mode", required_argument, NULL, OPT_MODE},
		{"top", required_argument, NULL, 't'},
		{"all", no_argument, NULL, 'a'},
		{"chunk", required_argument, NULL, OPT_CHUNK},
		{"first-frame", required_argument, NULL, OPT_FIRST},
		{NULL, 0, NULL, 0},
	};
	static const char *const formats[] = {"auto", "text", "npy", "htk", "ark", NULL};
	static const char *const modes[] = {"sum", "max", NULL};
	int c, top_given = 0;

	memset(o, 0, sizeof *o);
	o->top = 1;
	while ((c = getopt_long(argc, argv, CLI_COMMON_SHORT "m:f:t:a", longopts, NULL)) != -1) {
		switch (c) {
		case 'm':
			o->models = optarg;
			break;
		case 'f':
			o->format = (enum speech_format)cli_choice("--format", optarg, formats);
			break;
		case OPT_DIMS:
			o->dims = (int)cli_int("--dims", optarg, 1, 1 << 16);
			break;
		case OPT_MODE:
			o->mode = cli_choice("--mode", optarg, modes) ? GMM_MAX : GMM_SUM;
			break;
		case 't':
			o->top = (size_t)cli_int("--top", optarg, 1, 1 << 30);
			top_given = 1;
			break;
		case 'a':
			o->all = 1;
			break;
		case OPT_FIRST:
			o->first_frame = (uint64_t)cli_int("--first-frame", optarg, 0, INT64_MAX);
			break;
		case 'O': {
			/* the common formats (FMT_TEXT, FMT_NPY) and Kaldi's archive */
			static const char *const outs[] = {"text", "npy", "ark", NULL};
			int f = cli_choice("--output-format", optarg, outs);
			o->ark_out = f == 2;
			if (f != 2)
				co->out_format = f;
			break;
		}
		case OPT_CHUNK:
			o->chunk = (size_t)cli_int("--chunk", optarg, 1, 1 << 24);
			break;
		default:
			cli_common(c, optarg, co, usage);
		}
	}
	cli_finish(co);
	if (co->list_devices)
		return;
	for (int i = optind; i < argc; i++) {
		struct kaldi_rspec rs;
		char err[KALDI_ERR];
		if (kaldi_rspec_parse(argv[i], &rs, err) < 0)
			usage_error("%s", err);
	}
	if (o->models == NULL)
		usage_error("no models given (-m FILE)");
	if (o->ark_out && top_given)
		usage_error("-O ark holds every score (as --all): --top does not apply");
	if (o->ark_out)
		o->all = 1;
	if (o->all && top_given)
		usage_error("--top and --all exclude each other");
	if (o->all && o->first_frame > 0)
		usage_error("--first-frame numbers the frames of --top lines; --all writes whole "
		    "utterances: split its input by utterances");
	if (o->all)
		o->top = 0;
	if (!o->ark_out && cli_out_format(co, co->output) == FMT_NPY && !o->all)
		usage_error("NPY output (-O npy) holds every score: it needs --all");
}

int
main(int argc, char **argv)
{
	struct common_opts co;
	struct opts o;
	struct gmm_models models;
	struct gmm_params prm;
	struct cuda_dev dev;

	cli_init(argc, argv, &co);
	parse_args(argc, argv, &o, &co);
	if (co.list_devices) {
		cuda_list_devices();
		return 0;
	}
	int fmt = o.ark_out ? GMM_FMT_ARK : cli_out_format(&co, co.output);
	output *out = out_open(co.output);
	if (fmt == FMT_NPY && !out_seekable(out))
		die("NPY output needs a file it can rewrite (its header holds the row count): "
		    "give -o FILE");
	char *stdin_only[] = {"-"};
	char **files = optind < argc ? argv + optind : stdin_only;
	int nfiles = optind < argc ? argc - optind : 1;

	/* CUDA's start-up (about 300 ms) runs in a thread while the models are read and
	 * the features looked at; cudadev.h makes error exits meanwhile safe. */
	int64_t bytes = speech_input_bytes(files, nfiles);
	const char *mpath[1] = {o.models};
	int64_t mbytes = in_regular_bytes(mpath, 1);
	cuda_input_size(bytes < 0 || mbytes < 0 ? -1 : bytes + mbytes);
	cuda_start(co.device, 1, NULL, &dev);	/* gpu:all divides the chunks */
	gmm_models_load(o.models, &models);
	if (o.dims > models.dim)
		die("--dims %d: the models have %d dimensions", o.dims, models.dim);
	double t0 = now_sec();
	gmm_params_make(&models, o.dims ? o.dims : models.dim, &prm);
	phase_add("model params", now_sec() - t0);
	struct gmm_feats *feats = gmm_feats_open(files, nfiles, o.format, models.dim, o.dims,
	    prm.dims, prm.dp);

	/* the device settled, the tuning row picked and the stream opened on them */
	const size_t top = MIN(o.top, models.nmodels);
	struct gmm_run run = {.device = co.device, .prm = &prm, .feats = feats, .mode = o.mode,
	    .top = top, .model_dim = models.dim, .chunk = o.chunk,
	    .max_mem = co.max_device_mem};
	struct gmm_stream *st = gmm_run_open(&run, &dev);
	struct gmm_writer *w = gmm_writer_open(out, fmt, &models, top, o.first_frame);
	uint64_t frames = gmm_stream_run(st, w);
	gmm_writer_end(w);
	out_close(out);
	vlog("scored %llu frames against %zu models (%zu Gaussians)", (unsigned long long)frames,
	    models.nmodels, models.ncomp);
	phases_report();
	cuda_finish(&dev);

	/* Cleanup, so that leak checkers see only what is theirs. */
	gmm_stream_free(st);
	gmm_feats_close(feats);
	gmm_params_free(&prm);
	gmm_models_free(&models);
	return 0;
}
