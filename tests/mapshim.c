/* mapshim: an LD_PRELOAD library for the suites (clmatmul.bats): at the process's exit
 * it appends to the file $MAPSHIM_OUT every mapped file of /proc/self/maps whose path
 * names OpenCL, PoCL or NVIDIA, one a line (nothing when there is none), so that a
 * test can prove a run mapped no OpenCL library, and that one that did use OpenCL is
 * seen. Never installed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__attribute__((destructor)) static void
mapshim_report(void)
{
	const char *out = getenv("MAPSHIM_OUT");
	if (out == NULL)
		return;
	FILE *m = fopen("/proc/self/maps", "r"), *o = fopen(out, "a");
	char line[4096], last[4096] = "";
	while (m != NULL && o != NULL && fgets(line, sizeof line, m) != NULL) {
		char *path = strchr(line, '/');
		if (path == NULL || (strstr(path, "OpenCL") == NULL && strstr(path, "pocl") ==
		    NULL && strstr(path, "nvidia") == NULL) || strcmp(path, last) == 0)
			continue;
		snprintf(last, sizeof last, "%s", path);
		fputs(path, o);
	}
	if (m != NULL)
		fclose(m);
	if (o != NULL)
		fclose(o);
}
