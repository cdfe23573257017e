/* gmm_native.c: gmmscore's own text model format (see gmm.h):
 *
 *   gmm NAME K D
 *   w mean[D] var[D]		(K lines, one a component)
 *
 * '#' starts a comment; blank lines are skipped. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "gmm_read.h"
#include "numparse.h"

void
gmm_read_native(const char *path, const char *buf, size_t len, struct gmm_models *m)
{
	struct gmm_cur c = {.buf = buf, .len = len, .end = len};
	struct gmm_build b;
	char tok[256];
	double *row = NULL;
	size_t rowcap = 0;

	gmm_build_init(&b, m, 0);
	for (;;) {
		/* Comments run from '#' to the end of the line. */
		for (;;) {
			gmm_cur_space(&c);
			if (c.pos < len && buf[c.pos] == '#') {
				const char *nl = memchr(buf + c.pos, '\n', len - c.pos);
				c.pos = nl ? (size_t)(nl - buf) : len;
				continue;
			}
			break;
		}
		if (c.pos >= len)
			break;
		size_t at = c.pos;
		gmm_cur_token(&c, tok, sizeof tok);
		long k, d;
		char name[256];
		if (strcmp(tok, "gmm") != 0) {
			c.pos = at;
			gmm_cur_fail(&c, "expected 'gmm NAME COMPONENTS DIMS', found '%.40s'", tok);
			gmm_cur_die(&c, path);
		}
		gmm_cur_token(&c, name, sizeof name);
		if (name[0] == '\0' || gmm_cur_int(&c, &k) < 0 || gmm_cur_int(&c, &d) < 0 || k <= 0 ||
		    d <= 0 || k > (1L << 24) || d > (1L << 16)) {
			c.pos = at;
			c.failed = 0;
			gmm_cur_fail(&c, "expected 'gmm NAME COMPONENTS DIMS' with positive counts");
			gmm_cur_die(&c, path);
		}
		if (m->dim == 0)
			m->dim = (int)d;
		if (d != m->dim) {
			c.pos = at;
			gmm_cur_fail(&c, "model '%s' has dimension %ld, the first model's is %d", name, d,
			    m->dim);
			gmm_cur_die(&c, path);
		}
		size_t first = gmm_build_add(&b, xstrdup(name), (size_t)k);
		size_t width = 1 + 2 * (size_t)d;
		if (rowcap < width + 1) {
			rowcap = width + 1;
			row = xreallocarray(row, rowcap, sizeof *row);
		}
		for (long i = 0; i < k; i++) {
			/* One line: weight, means, variances; blank and comment lines between. */
			gmm_cur_space(&c);
			if (c.pos < len && buf[c.pos] == '#') {
				const char *nl = memchr(buf + c.pos, '\n', len - c.pos);
				c.pos = nl ? (size_t)(nl - buf) : len;
				i--;
				continue;
			}
			if (c.pos >= len) {
				gmm_cur_fail(&c, "model '%s' ends after %ld of %ld components", name, i, k);
				gmm_cur_die(&c, path);
			}
			const char *nl = memchr(buf + c.pos, '\n', len - c.pos);
			size_t ls = c.pos, le = nl ? (size_t)(nl - buf) : len;
			size_t n = 0;
			const char *p = buf + ls;
			while (p < buf + le) {
				while (p < buf + le && isspace((unsigned char)*p))
					p++;
				if (p >= buf + le || *p == '#')
					break;
				double v;
				const char *e = parse_double(p, &v);
				if (e == p || (e < buf + le && !isspace((unsigned char)*e) && *e != '#')) {
					c.pos = ls;
					gmm_cur_fail(&c, "model '%s', component %ld: not a number: '%.20s'", name,
					    i + 1, p);
					gmm_cur_die(&c, path);
				}
				if (n < rowcap)
					row[n] = v;
				n++;
				p = e;
			}
			if (n != width) {
				c.pos = ls;
				gmm_cur_fail(&c, "model '%s', component %ld: %zu numbers, expected %zu (weight, "
				    "%ld means, %ld variances)", name, i + 1, n, width, d, d);
				gmm_cur_die(&c, path);
			}
			size_t g = first + (size_t)i;
			m->weight[g] = row[0];
			for (long j = 0; j < d; j++) {
				m->mean[g * (size_t)d + (size_t)j] = row[1 + j];
				m->ivar[g * (size_t)d + (size_t)j] = 1 / row[1 + d + j];
			}
			c.pos = le;
		}
		char msg[700];
		if (gmm_check_model(msg, sizeof msg, name, (size_t)k, (int)d, m->weight + first,
		    m->mean + first * (size_t)d, m->ivar + first * (size_t)d) != NULL) {
			c.pos = at;
			gmm_cur_fail(&c, "%s", msg);
			gmm_cur_die(&c, path);
		}
	}
	free(row);
	if (m->nmodels == 0)
		die("%s: no models (expected 'gmm NAME COMPONENTS DIMS' lines)", path);
	m->format = "gmmscore text";
}
