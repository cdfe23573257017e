/* embed: write files' bytes, one after another, as a NUL-terminated C array, and their
 * names (without folders) as a NULL-terminated list, so that a program split over
 * several files builds in as one source and ACCELKIT_KERNEL_DIR can read the same
 * files in the same order (common/clbuild.c, clx_build).
 * usage: embed NAME FILE... > out.c   (defines: const char NAME[], NAME_files[]) */
#include <stdio.h>
#include <string.h>

int
main(int argc, char **argv)
{
	unsigned long n = 0;

	if (argc < 3) {
		fprintf(stderr, "usage: embed NAME FILE...\n");
		return 2;
	}
	printf("/* generated from");
	for (int i = 2; i < argc; i++)
		printf(" %s", argv[i]);
	printf(" by tools/embed: do not edit */\n");
	printf("const char %s[] = {", argv[1]);
	for (int i = 2; i < argc; i++) {
		FILE *f = fopen(argv[i], "rb");
		int c;
		if (f == NULL) {
			perror(argv[i]);
			return 1;
		}
		while ((c = getc(f)) != EOF)
			printf("%s%d,", n++ % 20 ? "" : "\n", (int)(signed char)c);
		if (ferror(f) || fclose(f) != 0) {
			perror(argv[i]);
			return 1;
		}
	}
	printf("\n0};\n");
	printf("const char *const %s_files[] = {", argv[1]);
	for (int i = 2; i < argc; i++) {
		const char *base = strrchr(argv[i], '/');
		printf("\"%s\", ", base != NULL ? base + 1 : argv[i]);
	}
	printf("0};\n");
	if (fflush(stdout) != 0 || ferror(stdout)) {
		perror("embed");
		return 1;
	}
	return 0;
}
