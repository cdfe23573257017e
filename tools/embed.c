/* embed: write a file's bytes as a NUL-terminated C array.
 * usage: embed FILE NAME > out.c   (defines: const char NAME[]) */
#include <stdio.h>

int
main(int argc, char **argv)
{
	FILE *f;
	int c;
	unsigned long n = 0;

	if (argc != 3) {
		fprintf(stderr, "usage: embed FILE NAME\n");
		return 2;
	}
	if ((f = fopen(argv[1], "rb")) == NULL) {
		perror(argv[1]);
		return 1;
	}
	printf("/* generated from %s by tools/embed: do not edit */\n", argv[1]);
	printf("const char %s[] = {", argv[2]);
	while ((c = getc(f)) != EOF)
		printf("%s%d,", n++ % 20 ? "" : "\n", (int)(signed char)c);
	printf("\n0};\n");
	if (ferror(f) || fclose(f) != 0 || fflush(stdout) != 0 || ferror(stdout)) {
		perror(argv[1]);
		return 1;
	}
	return 0;
}
