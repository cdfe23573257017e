/* speech.c: speech feature readers (HTK, Kaldi archives and .scp files through
 * kaldi_io.h, text, NPY) and the Kaldi text archive writer (see speech.h). */
#include "speech.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chunks.h"
#include "dense.h"
#include "err.h"
#include "input.h"
#include "kaldi_io.h"

/* HTK parameter kinds: the base kind in the low 6 bits, qualifiers above. */
enum {
	HTK_WAVEFORM = 0, HTK_IREFC = 5, HTK_DISCRETE = 10, HTK_MAXKIND = 12,
	HTK_COMPRESSED = 02000,	/* _C */
	HTK_CRC = 010000,	/* _K */
	HTK_VQ = 040000,	/* _V */
};
#define HTK_HEADER 12

struct speech {
	input *in;
	enum speech_format fmt;
	const char *path;	/* the key of one-utterance formats */
	int started;		/* one-utterance formats: the utterance was handed out */
	float *tmp;		/* conversion buffer */
	size_t tmpcap;		/* in bytes */

	/* text and NPY */
	dstream *ds;
	size_t cols;

	/* HTK */
	int compressed, crc, crc_read;
	uint64_t frames, frames_done;
	size_t sampsize;
	uint64_t data_off;	/* offset of the first frame */
	float *scale, *offset;	/* _C: A and B */

	/* Kaldi text archive: events of chunks (see below) */
	chunks *ch;
	struct chunk *cur;	/* the chunk events come from */
	size_t ev;		/* its next event */
	int inside;		/* between a matrix's "KEY [" and its "]" */
	char *key;
	const float *row;	/* the row waiting to be handed out (in cur) */
	int pending, ended;	/* a row waits; the matrix's ']' was seen */
	uint64_t first_line;	/* line of the matrix's first row */

	/* Kaldi archives read object by object (binary ones, and any under ark,p) and
	 * .scp files (kaldi_io.h); the key is in `key` (keycap bytes) */
	struct kaldi_rspec rs;
	int objark;		/* the archive is read object by object */
	input *din;		/* scp: the data file open now */
	char *dpath;		/* its path */
	struct kmat km;
	size_t keycap;
	int have_key;		/* km holds an utterance that may have rows left */
};

const char *
speech_format_name(enum speech_format f)
{
	switch (f) {
	case SPEECH_TEXT: return "text";
	case SPEECH_NPY: return "npy";
	case SPEECH_HTK: return "htk";
	case SPEECH_ARK: return "ark";
	case SPEECH_SCP: return "scp";
	default: return "auto";
	}
}

static uint32_t
be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static float
be_float(const unsigned char *p)
{
	uint32_t u = be32(p);
	float f;
	memcpy(&f, &u, sizeof f);
	return f;
}

static int
texty(unsigned char c)
{
	return (c >= 0x20 && c < 0x7f) || c == '\t' || c == '\n' || c == '\r' || c == '\v' ||
	    c == '\f';
}

static int
blank(int c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/* Whether the input starts as a Kaldi archive: 1 for a first line "KEY [" (text), 2 for
 * "KEY \0B" (binary), else 0. */
static int
looks_like_ark(input *in)
{
	size_t want = 256, avail;
	const unsigned char *p;

	for (;;) {
		p = in_peek(in, want, &avail);
		if (memchr(p, '\n', avail) != NULL || avail < want || want >= (1 << 16))
			break;
		want *= 2;
	}
	size_t i = 0;
	while (i < avail && (blank(p[i]) || p[i] == '\n'))
		i++;
	size_t k = i;
	while (k < avail && !blank(p[k]) && p[k] != '\n')
		k++;
	if (k == i)
		return 0;
	if (k + 2 < avail && (p[k] == ' ' || p[k] == '\t') && p[k + 1] == '\0' && p[k + 2] == 'B')
		return 2;
	while (k < avail && blank(p[k]))
		k++;
	return k < avail && p[k] == '[' && p[i] != '[';
}

static enum speech_format
detect(input *in)
{
	size_t avail;
	const unsigned char *p = in_peek(in, HTK_HEADER, &avail);

	if (avail >= 6 && memcmp(p, "\x93NUMPY", 6) == 0)
		return SPEECH_NPY;
	for (size_t i = 0; i < avail; i++)
		if (!texty(p[i])) {
			/* A binary archive starts "KEY \0B": text, then the NUL. */
			if (i > 1 && p[i] == '\0' && i + 1 < avail && p[i + 1] == 'B' &&
			    looks_like_ark(in) == 2)
				return SPEECH_ARK;
			return SPEECH_HTK;
		}
	return looks_like_ark(in) ? SPEECH_ARK : SPEECH_TEXT;
}

/* ---- HTK ---- */

static void
htk_open(speech *s)
{
	const char *name = in_name(s->in);
	unsigned char h[HTK_HEADER];
	size_t got = in_read(s->in, h, HTK_HEADER);

	if (got < HTK_HEADER)
		die_off(name, got, "HTK header is truncated (%zu of 12 bytes)", got);
	int32_t nsamp = (int32_t)be32(h);
	int32_t period = (int32_t)be32(h + 4);
	int sampsize = (int16_t)(h[8] << 8 | h[9]);
	int kind = (uint16_t)(h[10] << 8 | h[11]);
	int base = kind & 077;

	if (nsamp < 0 || period <= 0 || sampsize <= 0 || base > HTK_MAXKIND)
		die_off(name, 0, "not an HTK parameter file (header: %d samples, period %d, "
		    "sample size %d, kind %d)", nsamp, period, sampsize, kind);
	if (base == HTK_WAVEFORM)
		die_off(name, 10, "HTK file holds a waveform (WAVEFORM), not feature vectors");
	if (base == HTK_IREFC || base == HTK_DISCRETE)
		die_off(name, 10, "HTK parameter kind %s (2-byte integers) is not supported",
		    base == HTK_IREFC ? "IREFC" : "DISCRETE");
	if (kind & HTK_VQ)
		die_off(name, 10, "HTK files with VQ indexes (_V) are not supported");
	s->compressed = (kind & HTK_COMPRESSED) != 0;
	s->crc = (kind & HTK_CRC) != 0;
	int unit = s->compressed ? 2 : 4;
	if (sampsize % unit != 0)
		die_off(name, 8, "HTK sample size %d is not a multiple of %d%s", sampsize, unit,
		    s->compressed ? " (compressed _C file)" : "");
	s->cols = (size_t)(sampsize / unit);
	s->sampsize = (size_t)sampsize;
	if (s->compressed && nsamp < 4)
		die_off(name, 0, "compressed HTK file has %d samples (at least 4 hold its scale "
		    "and offset vectors)", nsamp);
	s->frames = (uint64_t)nsamp - (s->compressed ? 4 : 0);

	uint64_t want = (uint64_t)nsamp * (uint64_t)sampsize + (s->crc ? 2 : 0);
	int64_t rem = in_remaining(s->in);
	if (rem >= 0 && (uint64_t)rem != want)
		die_off(name, 0, "HTK header promises %llu frames of %d bytes%s (%llu bytes of "
		    "data), the file has %lld", (unsigned long long)s->frames, sampsize,
		    s->compressed ? " plus scale and offset" : "",
		    (unsigned long long)want, (long long)rem);
	if (s->compressed) {
		size_t n = 4 * s->cols;
		unsigned char *ab = xmallocarray(2, n);
		if (in_read(s->in, ab, 2 * n) < 2 * n)
			die_off(name, HTK_HEADER, "compressed HTK file is truncated in its scale "
			    "and offset vectors");
		s->scale = xmallocarray(s->cols, sizeof(float));
		s->offset = xmallocarray(s->cols, sizeof(float));
		for (size_t j = 0; j < s->cols; j++) {
			s->scale[j] = be_float(ab + 4 * j);
			s->offset[j] = be_float(ab + n + 4 * j);
			if (!isfinite(s->scale[j]) || s->scale[j] == 0 || !isfinite(s->offset[j]))
				die_off(name, HTK_HEADER + 4 * j, "compressed HTK file has an "
				    "invalid scale or offset for column %zu", j + 1);
		}
		free(ab);
	}
	s->data_off = in_tell(s->in);
}

static size_t
htk_read(speech *s, float *dst, size_t maxrows, size_t ncols, size_t stride)
{
	const char *name = in_name(s->in);
	size_t rows = (size_t)MIN((uint64_t)maxrows, s->frames - s->frames_done);

	if (rows == 0) {
		if (s->crc && !s->crc_read) {
			unsigned char crc[2];
			if (in_read(s->in, crc, 2) < 2)
				die_off(name, in_tell(s->in), "HTK file is truncated before its "
				    "checksum (_K)");
			s->crc_read = 1;
		}
		return 0;
	}
	size_t bytes = rows * s->sampsize;
	if (bytes > s->tmpcap) {
		free(s->tmp);
		s->tmp = xmalloc(bytes);
		s->tmpcap = bytes;
	}
	unsigned char *raw = (unsigned char *)s->tmp;
	size_t got = in_read(s->in, raw, bytes);
	if (got < bytes)
		die_off(name, in_tell(s->in), "HTK data is truncated: the header promises %llu "
		    "frames, the data ends in frame %llu", (unsigned long long)s->frames,
		    (unsigned long long)(s->frames_done + got / s->sampsize + 1));
	for (size_t r = 0; r < rows; r++) {
		const unsigned char *p = raw + r * s->sampsize;
		float *d = dst + r * stride;
		for (size_t j = 0; j < ncols; j++) {
			float v;
			if (s->compressed)
				v = ((float)(int16_t)(p[2 * j] << 8 | p[2 * j + 1]) + s->offset[j]) /
				    s->scale[j];
			else
				v = be_float(p + 4 * j);
			if (!isfinite(v))
				die_off(name, s->data_off + (s->frames_done + r) * s->sampsize +
				    j * (s->compressed ? 2 : 4), "%s in HTK data (frame %llu, "
				    "column %zu)", isnan(v) ? "NaN" : "Inf",
				    (unsigned long long)(s->frames_done + r + 1), j + 1);
			d[j] = v;
		}
		/* Columns past ncols are not used but must be finite all the same. */
		for (size_t j = ncols; j < s->cols && !s->compressed; j++)
			if (!isfinite(be_float(p + 4 * j)))
				die_off(name, s->data_off + (s->frames_done + r) * s->sampsize +
				    4 * j, "NaN or Inf in HTK data (frame %llu, column %zu)",
				    (unsigned long long)(s->frames_done + r + 1), j + 1);
	}
	s->frames_done += rows;
	return rows;
}

/* ---- Kaldi text archive ---- */

/*
 * Chunks of lines are parsed on the threads into events: a matrix starts (HEAD, with
 * its key), a row (ROW, its numbers), the matrix ends (END). What a line means depends
 * on whether it is inside a matrix, which only the lines before it tell; so the cut
 * rule guesses that from the lines before the cut (a ']' last: outside), the parser
 * starts from the guess, and the reader, which knows, parses a chunk again when the
 * guess was wrong. Widths, keys in messages and the end of the archive are the
 * reader's, in order.
 */
enum { EV_HEAD, EV_ROW, EV_END };

struct ark_ev {
	int kind;
	uint64_t line;		/* within the chunk */
	size_t a, n;		/* HEAD: the key's offset and length; ROW: first number, count */
};

struct ark_res {
	struct ark_ev *ev;
	size_t nev, capev;
	float *val;
	size_t nval, capval;
	int after_close;	/* the error is text after ']' (its message names the key) */
};

static void
ark_push(struct ark_res *r, int kind, uint64_t line, size_t a, size_t n)
{
	if (r->nev == r->capev) {
		r->capev = MAX(256, 2 * r->capev);
		r->ev = xreallocarray(r->ev, r->capev, sizeof *r->ev);
	}
	r->ev[r->nev++] = (struct ark_ev){kind, line, a, n};
}

/* Matrix text from q to e (a row, perhaps ending in ']'); 0, or -1 on an error. */
static int
ark_row_text(struct chunk *c, struct ark_res *r, const char *q, const char *e, uint64_t line)
{
	const char *close = memchr(q, ']', (size_t)(e - q)), *end = close ? close : e;
	char err[DENSE_ERR];
	size_t n;

	if (close != NULL)
		for (const char *t = close + 1; t < e; t++)
			if (!blank((unsigned char)*t)) {
				r->after_close = 1;
				chunk_fail(c, line, "text after ']'");
				return -1;
			}
	while ((n = dense_parse_span(q, end, r->val + r->nval, DT_F32, r->capval - r->nval, 0,
	    err)) != SIZE_MAX && n > r->capval - r->nval) {
		r->capval = MAX(2 * r->capval, r->nval + n);
		r->val = xreallocarray(r->val, r->capval, sizeof *r->val);
	}
	if (n == SIZE_MAX) {
		chunk_fail(c, line, "%s", err);
		return -1;
	}
	if (n > 0) {
		ark_push(r, EV_ROW, line, r->nval, n);
		r->nval += n;
	}
	if (close != NULL)
		ark_push(r, EV_END, line, 0, 0);
	return 0;
}

/* A chunk's events, from c->hint: 1 when it starts inside a matrix. */
static void
ark_parse_chunk(void *ctx, struct chunk *c)
{
	struct ark_res *r = c->res;
	struct chunk_lines it;
	const char *line;
	size_t len;
	int inside = c->hint;

	(void)ctx;
	if (r == NULL) {
		r = c->res = xcalloc(1, sizeof *r);
		r->capval = c->len / 6 + 64;
		r->val = xmallocarray(r->capval, sizeof *r->val);
	}
	r->nev = r->nval = 0;
	r->after_close = 0;
	c->err_line = 0;
	chunk_lines_init(&it, c);
	while ((line = chunk_line(&it, &len)) != NULL) {
		/* the line as a C string: up to a NUL, as in_getline's readers saw it */
		const char *e = line + strnlen(line, len), *p = line;
		if (!inside) {
			while (p < e && blank((unsigned char)*p))
				p++;
			if (p == e)
				continue;
			const char *k = p;
			while (p < e && !blank((unsigned char)*p))
				p++;
			size_t klen = (size_t)(p - k);
			while (p < e && blank((unsigned char)*p))
				p++;
			if (p == e && e < line + len)
				return chunk_fail(c, it.n, "a binary matrix in an archive that "
				    "starts as text is not read (copy-feats ark:FILE ark:- makes it "
				    "all binary)");
			if (p == e || *p != '[')
				return chunk_fail(c, it.n,
				    "expected 'KEY  [' to start a matrix of the archive");
			ark_push(r, EV_HEAD, it.n, (size_t)(k - c->data), klen);
			p++;
			inside = 1;
		}
		if (ark_row_text(c, r, p, e, it.n) < 0)
			return;
		if (r->nev > 0 && r->ev[r->nev - 1].kind == EV_END)
			inside = 0;
	}
	c->lines = it.n;
}

static void
ark_free_res(void *res)
{
	struct ark_res *r = res;
	free(r->ev);
	free(r->val);
	free(r);
}

/* Lines, and a guess whether the next chunk starts inside a matrix: the last line
 * before the cut that is not blank has no ']'. */
static size_t
ark_cut(const char *p, size_t len, int *hint)
{
	size_t cut = chunk_cut_lines(p, len, hint);
	const char *end = p + cut;

	*hint = 1;
	for (int k = 0; k < 64 && end > p; k++) {
		const char *e = end - 1, *b = memrchr(p, '\n', (size_t)(e - p));
		b = b != NULL ? b + 1 : p;
		if (memchr(b, ']', (size_t)(e - b)) != NULL) {
			*hint = 0;
			break;
		}
		while (b < e && (blank((unsigned char)*b) || *b == '\n'))
			b++;
		if (b < e)
			break;
		end = b;
	}
	return cut;
}

static const struct chunk_ops ark_ops = {.cut = ark_cut,
    .parse = ark_parse_chunk, .free_res = ark_free_res};

static void NORETURN
ark_die(speech *s)
{
	const struct ark_res *r = s->cur->res;
	if (r->after_close)
		die_at(in_name(s->in), s->cur->line0 + s->cur->err_line,
		    "text after the ']' that ends the matrix of '%s'", s->key);
	chunk_die(s->ch, s->cur);
}

/* The archive's next event, NULL at its end. */
static const struct ark_ev *
ark_event(speech *s)
{
	for (;;) {
		if (s->cur != NULL) {
			const struct ark_res *r = s->cur->res;
			if (s->ev < r->nev)
				return &r->ev[s->ev++];
			if (s->cur->err_line != 0)
				ark_die(s);
		}
		if ((s->cur = chunks_next(s->ch)) == NULL)
			return NULL;
		s->ev = 0;
		if (s->cur->hint != s->inside) {
			s->cur->hint = s->inside;	/* a wrong guess: parse it again */
			ark_parse_chunk(NULL, s->cur);
		}
	}
}

/* Takes events until a row is pending or the matrix has ended. */
static void
ark_advance(speech *s)
{
	while (!s->pending && !s->ended) {
		const struct ark_ev *ev = ark_event(s);
		if (ev == NULL)
			die_at(in_name(s->in), chunks_lines(s->ch), "the archive ends inside the "
			    "matrix of '%s' (no ']')", s->key);
		uint64_t line = s->cur->line0 + ev->line;
		if (ev->kind == EV_END) {
			s->ended = 1;
			s->inside = 0;
			continue;
		}
		/* EV_ROW: inside a matrix there is no EV_HEAD */
		if (s->cols == 0) {
			s->cols = ev->n;
			s->first_line = line;
		} else if (ev->n != s->cols) {
			die_at(in_name(s->in), line, "row has %zu columns, expected %zu as on line %llu "
			    "(utterance '%s')", ev->n, s->cols, (unsigned long long)s->first_line, s->key);
		}
		s->row = ((const struct ark_res *)s->cur->res)->val + ev->a;
		s->pending = 1;
	}
}

static int
ark_next(speech *s)
{
	/* The rest of the previous matrix, when the caller did not read it all. */
	while (!s->ended && s->key != NULL) {
		s->pending = 0;
		ark_advance(s);
	}
	s->pending = 0;
	const struct ark_ev *ev = ark_event(s);
	if (ev == NULL)
		return 0;
	/* outside a matrix the parser gives EV_HEAD or an error */
	free(s->key);
	s->key = xmalloc(ev->n + 1);
	memcpy(s->key, s->cur->data + ev->a, ev->n);
	s->key[ev->n] = '\0';
	s->inside = 1;
	s->cols = 0;
	s->ended = 0;
	ark_advance(s);
	return 1;
}

static size_t
ark_read(speech *s, float *dst, size_t maxrows, size_t ncols, size_t stride)
{
	size_t r = 0;
	while (r < maxrows) {
		ark_advance(s);
		if (!s->pending)
			break;
		memcpy(dst + r * stride, s->row, ncols * sizeof *dst);
		s->pending = 0;
		r++;
	}
	return r;
}

/* ---- Kaldi archives object by object, and .scp files (kaldi_io.h) ---- */

/* A matrix that cannot be read: the end of the program, or under ark,p the end of the
 * archive and under scp,p the entry skipped, with a warning (Kaldi's permissive). */
static void
obj_error(speech *s, const char *file, uint64_t off, const char *msg)
{
	if (!s->rs.permissive)
		die_off(file, off, "utterance '%s': %s", s->key, msg);
	warnmsg("%s: byte %llu: utterance '%s': %s; %s", file, (unsigned long long)off, s->key,
	    msg, s->fmt == SPEECH_SCP ? "skipped (scp,p)" :
	    "the rest of the archive is not read (ark,p)");
}

static int
objark_next(speech *s)
{
	char err[KALDI_ERR];
	uint64_t off;

	if (s->have_key && kmat_skip(&s->km, s->in) < 0)
		obj_error(s, in_name(s->in), s->km.err_off, s->km.err);
	s->have_key = 0;
	int r = kaldi_read_key(s->in, &s->key, &s->keycap, err, &off);
	if (r == 0)
		return 0;
	if (r < 0) {
		if (!s->rs.permissive)
			die_off(in_name(s->in), off, "%s", err);
		warnmsg("%s: byte %llu: %s; the rest of the archive is not read (ark,p)",
		    in_name(s->in), (unsigned long long)off, err);
		return 0;
	}
	if (kmat_begin(&s->km, s->in, s->rs.permissive) < 0) {
		obj_error(s, in_name(s->in), s->km.err_off, s->km.err);
		return 0;
	}
	s->have_key = 1;
	return 1;
}

/* The most bytes an .scp entry's offset is reached by reading forward, not seeking. */
#define SCP_SKIP_BYTES ((uint64_t)1 << 20)

/* Opens an .scp entry's file at its offset (-1: a file of one matrix) and reads the
 * matrix's header; 0, or -1 with the message in km.err. */
static int
scp_entry(speech *s, const char *file, int64_t off, const struct kaldi_range *range)
{
	s->km.err_off = off < 0 ? 0 : (uint64_t)off;
	if (s->din == NULL || off < 0 || strcmp(s->dpath, file) != 0 ||
	    in_file_size(s->din) < 0) {
		in_close(s->din);
		s->din = NULL;
		free(s->dpath);
		s->dpath = xstrdup(file);
		int fd = open(file, O_RDONLY);
		if (fd < 0) {
			snprintf(s->km.err, sizeof s->km.err, "%s", strerror(errno));
			return -1;
		}
		close(fd);
		s->din = in_open(file);
	}
	if (off >= 0) {
		int64_t size = in_file_size(s->din);
		if (size < 0) {
			snprintf(s->km.err, sizeof s->km.err, "an offset needs a regular file, "
			    "not compressed");
			return -1;
		}
		if ((uint64_t)off > (uint64_t)size) {
			snprintf(s->km.err, sizeof s->km.err, "offset %lld is past the end of the "
			    "file (%lld bytes)", (long long)off, (long long)size);
			return -1;
		}
		/* An .scp written beside its archive goes forward through it: a short step
		 * forward is taken in what is read already, not by a seek that drops it. */
		uint64_t at = in_tell(s->din);
		if ((uint64_t)off >= at && (uint64_t)off - at <= SCP_SKIP_BYTES) {
			size_t gap = (size_t)((uint64_t)off - at), got;
			while (gap > 0 && in_take(s->din, gap, &got) != NULL && got > 0)
				gap -= got;
		} else {
			in_range(s->din, (uint64_t)off, (uint64_t)size);
		}
	}
	/* a range: the matrix whole, then its part */
	uint64_t at = in_tell(s->din);
	if (kmat_begin(&s->km, s->din, s->rs.permissive || range->given) < 0)
		return -1;
	s->km.err_off = at;
	return kmat_range(&s->km, range);
}

static int
scp_next(speech *s)
{
	char err[KALDI_ERR], *line, *key, *file;
	int64_t off;

	s->have_key = 0;
	while ((line = in_getline(s->in, NULL)) != NULL) {
		const char *p = line;
		while (blank((unsigned char)*p))
			p++;
		if (*p == '\0')
			continue;
		struct kaldi_range range;
		if (kaldi_scp_line(line, &key, &file, &off, &range, err) < 0)
			die_at(in_name(s->in), in_lineno(s->in), "%s", err);
		size_t n = strlen(key) + 1;
		if (n > s->keycap) {
			free(s->key);
			s->keycap = n + 64;
			s->key = xmalloc(s->keycap);
		}
		memcpy(s->key, key, n);
		if (scp_entry(s, file, off, &range) == 0) {
			s->have_key = 1;
			return 1;
		}
		char where[1100];
		snprintf(where, sizeof where, "%.1024s", file);
		obj_error(s, where, s->km.err_off, s->km.err);
	}
	return 0;
}

static size_t
obj_read(speech *s, float *dst, size_t maxrows, size_t ncols, size_t stride)
{
	input *in = s->fmt == SPEECH_SCP ? s->din : s->in;
	size_t n = kmat_read(&s->km, in, dst, maxrows, ncols, stride);
	if (n == SIZE_MAX)
		die_off(in_name(in), s->km.err_off, "utterance '%s': %s", s->key, s->km.err);
	return n;
}

/* ---- the common interface ---- */

speech *
speech_open(const char *path, enum speech_format fmt)
{
	speech *s = xcalloc(1, sizeof *s);
	char err[KALDI_ERR];

	int k = kaldi_rspec_parse(path == NULL ? "-" : path, &s->rs, err);
	if (k < 0)
		die("%s", err);
	if (k > 0) {
		path = s->rs.file;
		fmt = s->rs.type == KALDI_SCP ? SPEECH_SCP : SPEECH_ARK;
	}
	s->in = in_open(path);
	s->path = path == NULL ? "-" : path;
	s->fmt = fmt == SPEECH_AUTO ? detect(s->in) : fmt;
	switch (s->fmt) {
	case SPEECH_HTK:
		htk_open(s);
		break;
	case SPEECH_ARK:
		/* binary, or permissive: object by object; text: in parallel chunks */
		if (s->rs.permissive || looks_like_ark(s->in) == 2)
			s->objark = 1;
		else
			s->ch = chunks_open(s->in, &ark_ops, NULL);
		break;
	default:
		break;
	}
	return s;
}

int64_t
speech_input_bytes(char *const *paths, int n)
{
	int64_t total = 0;
	char err[KALDI_ERR];

	for (int i = 0; i < n; i++) {
		struct kaldi_rspec rs;
		struct kaldi_range range;
		const char *p = paths[i];
		if (kaldi_rspec_parse(p, &rs, err) > 0)
			p = rs.file;
		if (in_regular_bytes(&p, 1) < 0)
			return -1;
		if (rs.type != KALDI_SCP) {
			total += in_regular_bytes(&p, 1);
			continue;
		}
		if (p == NULL || strcmp(p, "-") == 0)
			return -1;	/* scp:-: its lines are the program's to read */
		/* the files an .scp names, each once (entries of one file come together) */
		input *in = in_open(p);
		char *line, *key, *file, *last = NULL;
		int64_t off;
		while ((line = in_getline(in, NULL)) != NULL) {
			if (kaldi_scp_line(line, &key, &file, &off, &range, err) < 0)
				continue;	/* said when it is read */
			if (last != NULL && strcmp(last, file) == 0)
				continue;
			free(last);
			last = xstrdup(file);
			const char *f = file;
			int64_t b = in_regular_bytes(&f, 1);
			if (b < 0) {
				total = -1;
				break;
			}
			total += b;
		}
		free(last);
		in_close(in);
		if (total < 0)
			return -1;
	}
	return total;
}

void
speech_close(speech *s)
{
	if (s == NULL)
		return;
	dstream_close(s->ds);
	chunks_close(s->ch);
	in_close(s->din);
	free(s->dpath);
	kmat_free(&s->km);
	in_close(s->in);
	free(s->tmp);
	free(s->scale);
	free(s->offset);
	free(s->key);
	free(s);
}

enum speech_format
speech_format(const speech *s)
{
	return s->fmt;
}

const char *
speech_name(const speech *s)
{
	return in_name(s->in);
}

int
speech_next(speech *s, const char **key, size_t *dims, int64_t *rows)
{
	*rows = -1;
	if (s->objark || s->fmt == SPEECH_SCP) {
		if (!(s->fmt == SPEECH_SCP ? scp_next(s) : objark_next(s)))
			return 0;
		*key = s->key;
		*dims = s->km.cols;
		*rows = (int64_t)s->km.rows;
		return 1;
	}
	if (s->fmt == SPEECH_ARK) {
		if (!ark_next(s))
			return 0;
		*key = s->key;
		*dims = s->cols;
		return 1;
	}
	if (s->started)
		return 0;
	s->started = 1;
	*key = s->path;
	if (s->fmt == SPEECH_HTK) {
		*dims = s->cols;
		*rows = (int64_t)s->frames;
		return 1;
	}
	/* Text or NPY: dense.h knows both; a forced format must match what it finds. */
	s->ds = dstream_open(s->in, 0);
	if (s->fmt == SPEECH_NPY && !dstream_is_npy(s->ds))
		die("%s: not an NPY file (no NPY magic bytes)", in_name(s->in));
	s->cols = dstream_cols(s->ds);
	if (s->cols == 0 && !dstream_is_npy(s->ds))
		return 0;	/* empty text: no utterance at all */
	*dims = s->cols;
	*rows = dstream_rows_total(s->ds);
	return 1;
}

size_t
speech_read(speech *s, float *dst, size_t maxrows, size_t ncols, size_t stride)
{
	if (s->fmt == SPEECH_HTK)
		return htk_read(s, dst, maxrows, ncols, stride);
	if (s->objark || s->fmt == SPEECH_SCP)
		return obj_read(s, dst, maxrows, ncols, stride);
	if (s->fmt == SPEECH_ARK)
		return ark_read(s, dst, maxrows, ncols, stride);
	if (s->ds == NULL || s->cols == 0)
		return 0;
	if (ncols == s->cols && stride == s->cols)
		return dstream_read(s->ds, maxrows, DT_F32, dst);
	size_t bytes = mul_size(mul_size(maxrows, s->cols, "rows"), sizeof(float), "rows");
	if (bytes > s->tmpcap) {
		free(s->tmp);
		s->tmp = xmalloc(bytes);
		s->tmpcap = bytes;
	}
	size_t got = dstream_read(s->ds, maxrows, DT_F32, s->tmp);
	for (size_t r = 0; r < got; r++)
		memcpy(dst + r * stride, s->tmp + r * s->cols, ncols * sizeof(float));
	return got;
}

/* ---- Kaldi text archive output ---- */

void
ark_begin(output *o, const char *key)
{
	out_puts(o, key);
	out_puts(o, "  [");
}

size_t
ark_format_row(char *buf, const float *v, size_t n)
{
	char *b = buf;
	*b++ = '\n';
	*b++ = ' ';
	*b++ = ' ';
	for (size_t j = 0; j < n; j++) {
		b += fmt_f32(b, v[j]);
		*b++ = ' ';
	}
	return (size_t)(b - buf);
}

void
ark_row(output *o, const float *v, size_t n)
{
	char small[1024];
	char *buf = n * 16 + 4 <= sizeof small ? small : xmalloc(n * 16 + 4);
	out_write(o, buf, ark_format_row(buf, v, n));
	if (buf != small)
		free(buf);
}

void
ark_end(output *o, size_t rows)
{
	out_puts(o, rows == 0 ? " ]\n" : "]\n");
}
