/* clkmeans_maps.c: a library tests/clkmeans.bats preloads (LD_PRELOAD) to see which
 * shared libraries a run had mapped: as the process exits normally it copies
 * /proc/self/maps to the file $ACCELKIT_CLKMEANS_MAPS. A run that ends without
 * running destructors (_exit, as a GPU run's clx_finish does) leaves no file, so a
 * test that requires the file fails then too. Built by the suite with cc -shared
 * -fPIC. */
#include <stdio.h>
#include <stdlib.h>

__attribute__((destructor)) static void
copy_maps(void)
{
	const char *out = getenv("ACCELKIT_CLKMEANS_MAPS");
	if (out == NULL)
		return;
	FILE *in = fopen("/proc/self/maps", "r"), *o = fopen(out, "w");
	if (in == NULL || o == NULL)
		return;
	char buf[4096];
	size_t n;
	while ((n = fread(buf, 1, sizeof buf, in)) > 0)
		fwrite(buf, 1, n, o);
	fclose(in);
	fclose(o);
}
