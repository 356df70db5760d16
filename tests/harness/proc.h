/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * proc.h - time and child processes for the C test programs (libc only, so that
 * a test linked with no fdr library, chaos.c, uses them too): the one copy of
 * spawning a program, waiting for it with a deadline, SIGKILLing and reaping it,
 * running a command with its output in a file, describing a wait status, and the
 * alarm that ends a hung test. Header-only: every function is static.
 *
 * Deadlines everywhere: a test must never hang on a child, so every wait here has
 * a bound, and a child still running after it is SIGKILLed and reaped.
 */
#ifndef FDR_TEST_PROC_H
#define FDR_TEST_PROC_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef SC_UNUSED
#define SC_UNUSED __attribute__((unused))
#endif

/* ---- time ---------------------------------------------------------------------------------- */

static SC_UNUSED uint64_t sc_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static SC_UNUSED void sc_sleep_us(uint64_t us)
{
	struct timespec ts = { (time_t)(us / 1000000), (long)(us % 1000000) * 1000 };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static SC_UNUSED uint64_t sc_env_u64(const char *name, uint64_t def)
{
	const char *v = getenv(name);

	return v && *v ? strtoull(v, NULL, 0) : def;
}

/* ---- children ------------------------------------------------------------------------------ */

/*
 * Run program @path (NULL: this binary again) with @argv (argv[0] included) and
 * @extra_env added to the environment (NULL-terminated, may be NULL). The
 * @nr_keep descriptors of @keep stay open in the child; every other descriptor we
 * made is close-on-exec. Returns the pid or -errno.
 */
static SC_UNUSED pid_t sc_spawn_path(const char *path, char *const argv[], char *const extra_env[],
				     const int *keep, int nr_keep)
{
	extern char **environ;
	static char agent_on[] = "FDR_NO_AGENT=0";
	size_t n = 0, k = 0, i;
	char **envp;
	pid_t pid;

	while (environ[n])
		n++;
	while (extra_env && extra_env[k])
		k++;
	envp = calloc(n + k + 2, sizeof(*envp));
	if (!envp)
		return -ENOMEM;
	/* getenv() takes the first match: ours come before the inherited ones */
	for (i = 0; i < k; i++)
		envp[i] = extra_env[i];
	envp[k] = agent_on;
	for (i = 0; i < n; i++)
		envp[k + 1 + i] = environ[i];
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		for (i = 0; i < (size_t)nr_keep; i++)
			fcntl(keep[i], F_SETFD, 0);
		execve(path ? path : "/proc/self/exe", argv, envp);
		_exit(127);
	}
	free(envp);
	return pid < 0 ? -errno : pid;
}

static SC_UNUSED pid_t sc_spawn(char *const argv[], char *const extra_env[], const int *keep,
				int nr_keep)
{
	return sc_spawn_path(NULL, argv, extra_env, keep, nr_keep);
}

/* waitpid() with a deadline: 0 (status filled), -ETIMEDOUT (child left running). */
static SC_UNUSED int sc_wait(pid_t pid, int *status, int timeout_ms, int flags)
{
	uint64_t end = sc_now_ns() + (uint64_t)timeout_ms * 1000000ull;

	for (;;) {
		pid_t r = waitpid(pid, status, WNOHANG | flags);

		if (r == pid)
			return 0;
		if (r < 0 && errno != EINTR)
			return -errno;
		if (sc_now_ns() > end)
			return -ETIMEDOUT;
		sc_sleep_us(500);
	}
}

/* Describe a wait status, for messages. */
static SC_UNUSED const char *sc_status_str(int st, char *buf, size_t len)
{
	if (WIFEXITED(st))
		snprintf(buf, len, "exit %d", WEXITSTATUS(st));
	else if (WIFSIGNALED(st))
		snprintf(buf, len, "killed by signal %d (%s)", WTERMSIG(st),
			 strsignal(WTERMSIG(st)));
	else if (WIFSTOPPED(st))
		snprintf(buf, len, "stopped by signal %d", WSTOPSIG(st));
	else
		snprintf(buf, len, "status %#x", st);
	return buf;
}

/*
 * SIGKILL child @pid and reap it within @timeout_ms. Returns 1 if it died of
 * that SIGKILL; else 0, with how it ended (or why it was not reaped) in @how
 * when @how is not NULL.
 */
static SC_UNUSED int sc_kill_reap(pid_t pid, int timeout_ms, char *how, size_t len)
{
	int st = 0, ret;

	if (pid <= 0) {
		if (how)
			snprintf(how, len, "no child");
		return 0;
	}
	kill(pid, SIGKILL);
	ret = sc_wait(pid, &st, timeout_ms, 0);
	if (ret == 0 && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL)
		return 1;
	if (how && ret)
		snprintf(how, len, "%s", strerror(-ret));
	else if (how)
		sc_status_str(st, how, len);
	return 0;
}

/*
 * Run @path with @argv (argv[0] included), its stdout into @out_fd and, when
 * @err_fd >= 0, its stderr into @err_fd; at most @timeout_ms, then it is
 * SIGKILLed. Returns its exit status, or -1 (it did not run, was killed or hung).
 */
static SC_UNUSED int sc_run(const char *path, char *const argv[], int out_fd, int err_fd,
			    int timeout_ms)
{
	int st = 0, ret;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		dup2(out_fd, STDOUT_FILENO);
		if (err_fd >= 0)
			dup2(err_fd, STDERR_FILENO);
		execv(path, argv);
		_exit(127);
	}
	ret = pid > 0 ? sc_wait(pid, &st, timeout_ms, 0) : -1;
	if (ret == -ETIMEDOUT)
		sc_kill_reap(pid, 5000, NULL, 0);
	if (ret || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

/* Read one byte from @fd within @ms (a child saying it is ready); the byte or -1. */
static SC_UNUSED int sc_read_byte(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	char c;

	if (poll(&p, 1, ms) != 1 || read(fd, &c, 1) != 1)
		return -1;
	return (unsigned char)c;
}

/* A SIGALRM handler for a test's overall deadline: says so and exits 1. */
static SC_UNUSED void sc_on_alarm(int sig)
{
	static const char msg[] = "FAIL: the test hung (alarm)\n";

	(void)sig;
	if (write(STDOUT_FILENO, msg, sizeof(msg) - 1) < 0)
		_exit(1);
	_exit(1);
}

#endif /* FDR_TEST_PROC_H */
