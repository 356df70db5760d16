// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * exec-time.c - wall-clock time of one command, end to end, for bench/compare-lttng
 * (snapshot_cli_ms and LTTng's snapshot_*_us).
 *
 *   bench-exec-time CMD [ARG...]
 *
 * Reads CLOCK_MONOTONIC, forks, execs CMD (PATH search) with its stdout on
 * /dev/null, waits for it, reads the clock again, and prints the difference in
 * microseconds on stdout. The command's stderr is ours. Exit status: 0 if the
 * command exited 0, else 1 (and nothing printed), so the script never turns a
 * failed command into a figure.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	uint64_t t0, t1;
	pid_t pid;
	int st, null;

	if (argc < 2) {
		fprintf(stderr, "usage: %s CMD [ARG...]\n", argv[0]);
		return 2;
	}
	null = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (null < 0) {
		perror("bench-exec-time: /dev/null");
		return 1;
	}
	fflush(stdout);
	t0 = now_ns();
	pid = fork();
	if (pid < 0) {
		perror("bench-exec-time: fork");
		return 1;
	}
	if (pid == 0) {
		dup2(null, STDOUT_FILENO);
		execvp(argv[1], argv + 1);
		fprintf(stderr, "bench-exec-time: %s: %s\n", argv[1], strerror(errno));
		_exit(127);
	}
	while (waitpid(pid, &st, 0) < 0) {
		if (errno != EINTR) {
			perror("bench-exec-time: waitpid");
			return 1;
		}
	}
	t1 = now_ns();
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		if (WIFEXITED(st))
			fprintf(stderr, "bench-exec-time: %s exited with status %d\n", argv[1],
				WEXITSTATUS(st));
		else
			fprintf(stderr, "bench-exec-time: %s killed by signal %d\n", argv[1],
				WTERMSIG(st));
		return 1;
	}
	printf("%.1f\n", (double)(t1 - t0) / 1000.0);
	return 0;
}
