// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * fuse-io - the system calls the FUSE suite needs that the shell cannot make:
 *
 *   fuse-io select FILE TIMEOUT_MS   select() for reading; prints "ready" then
 *                                    what one read() returned, or "timeout" (exit 1)
 *   fuse-io read FILE SIZE           one read(SIZE); prints the byte count, or the
 *                                    errno name (EAGAIN with O_NONBLOCK: add -n)
 *   fuse-io pread FILE               read() all, then pread(0) must give the same
 *                                    first bytes again; prints "same N" (exit 0)
 *   fuse-io raw FILE SIZE            read(SIZE) of a trace_pipe_raw page: prints
 *                                    the count and the page's commit field
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <unistd.h>

static const char *err_name(int e)
{
	switch (e) {
	case EAGAIN:
		return "EAGAIN";
	case EINTR:
		return "EINTR";
	case EINVAL:
		return "EINVAL";
	case EBUSY:
		return "EBUSY";
	default:
		return strerror(e);
	}
}

static int do_select(const char *file, int timeout_ms)
{
	struct timeval tv = { timeout_ms / 1000, (timeout_ms % 1000) * 1000 };
	char buf[4096];
	fd_set rfds;
	ssize_t n;
	int fd = open(file, O_RDONLY | O_NONBLOCK), r;

	if (fd < 0) {
		printf("open: %s\n", err_name(errno));
		return 2;
	}
	FD_ZERO(&rfds);
	FD_SET(fd, &rfds);
	r = select(fd + 1, &rfds, NULL, NULL, &tv);
	if (r < 0) {
		printf("select: %s\n", err_name(errno));
		return 2;
	}
	if (r == 0) {
		printf("timeout\n");
		return 1;
	}
	n = read(fd, buf, sizeof(buf));
	if (n < 0)
		printf("ready, read: %s\n", err_name(errno));
	else
		printf("ready, read %zd\n", n);
	close(fd);
	return n > 0 ? 0 : 2;
}

static int do_read(const char *file, size_t size, int nonblock, int raw)
{
	char *buf = malloc(size);
	ssize_t n;
	int fd = open(file, O_RDONLY | (nonblock ? O_NONBLOCK : 0));

	if (!buf || fd < 0) {
		printf("open: %s\n", err_name(errno));
		return 2;
	}
	n = read(fd, buf, size);
	if (n < 0) {
		printf("%s\n", err_name(errno));
		return 1;
	}
	if (raw && n >= 16) {
		uint64_t commit;

		memcpy(&commit, buf + 8, 8);
		/* the kernel's buffer_data_page: u64 time stamp, local_t commit, data */
		printf("%zd commit %llu\n", n, (unsigned long long)(commit & 0xfffff));
	} else {
		printf("%zd\n", n);
	}
	close(fd);
	free(buf);
	return 0;
}

static int do_pread(const char *file)
{
	static char all[1 << 20], again[4096];
	size_t len = 0, want;
	ssize_t n;
	int fd = open(file, O_RDONLY);

	if (fd < 0) {
		printf("open: %s\n", err_name(errno));
		return 2;
	}
	while (len < sizeof(all) && (n = read(fd, all + len, sizeof(all) - len)) > 0)
		len += (size_t)n;
	want = len < sizeof(again) ? len : sizeof(again);
	n = pread(fd, again, sizeof(again), 0);
	close(fd);
	if (n < 0) {
		printf("pread: %s\n", err_name(errno));
		return 1;
	}
	if (len == 0 || (size_t)n != want || memcmp(all, again, want)) {
		printf("different: read %zu, pread %zd\n", len, n);
		return 1;
	}
	printf("same %zd\n", n);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "select"))
		return do_select(argv[2], atoi(argv[3]));
	if (argc >= 4 && !strcmp(argv[1], "read"))
		return do_read(argv[2], (size_t)atol(argv[3]), argc > 4 && !strcmp(argv[4], "-n"),
			       0);
	if (argc >= 4 && !strcmp(argv[1], "raw"))
		return do_read(argv[2], (size_t)atol(argv[3]), argc > 4 && !strcmp(argv[4], "-n"),
			       1);
	if (argc == 3 && !strcmp(argv[1], "pread"))
		return do_pread(argv[2]);
	fprintf(stderr, "usage: fuse-io select|read|raw|pread FILE [ARG]\n");
	return 2;
}
