/* detach.c: see detach.h. */
#include "detach.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* In the child: every file but keep and those named prefix closed. */
static void
close_others(int keep, const char *prefix)
{
	DIR *d = opendir("/proc/self/fd");
	if (d == NULL) {
		for (int fd = 0; fd < 3; fd++)
			if (fd != keep)
				close(fd);
		return;
	}
	int dfd = dirfd(d);
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		char *end;
		long fd = strtol(de->d_name, &end, 10);
		if (*end != '\0' || end == de->d_name || fd == keep || fd == dfd)
			continue;
		char link[64], path[256];
		snprintf(link, sizeof link, "/proc/self/fd/%ld", fd);
		ssize_t n = readlink(link, path, sizeof path - 1);
		path[n > 0 ? n : 0] = '\0';
		if (n <= 0 || strncmp(path, prefix, strlen(prefix)) != 0)
			close((int)fd);
	}
	closedir(d);
}

int
detach_teardown(const char *prefix)
{
	int p[2];
	if (pipe(p) != 0)
		return 0;
	pid_t pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return 0;
	}
	if (pid == 0) {
		/* the child: a Ctrl-C on the pipeline is the parent's to answer */
		signal(SIGINT, SIG_IGN);
		signal(SIGTERM, SIG_IGN);
		signal(SIGPIPE, SIG_IGN);
		close(p[1]);
		close_others(p[0], prefix);
		char c;
		while (read(p[0], &c, 1) < 0 && errno == EINTR)
			;
		_exit(0);	/* the device's files close here: the teardown */
	}
	close(p[0]);	/* p[1] closes with the parent, which wakes the child */
	return (int)pid;
}
