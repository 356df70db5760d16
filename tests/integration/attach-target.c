// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * attach-target.c - the program of attach.sh: never linked with fdr, no
 * LD_PRELOAD; fdr attach brings the agent in while it runs. Its threads check
 * their own results all along:
 *
 *   - a worker computes at_work(i) (a checksum over a buffer, in floating
 *     point and integer registers) in a loop and compares each result with
 *     the one computed before fdr came (any clobbered register, flag, vector
 *     register or stack byte shows as a wrong result);
 *   - a sleeper sits in clock_nanosleep() (200 ms, absolute) and nanosleep()
 *     (50 ms) in turn, and checks that each returned 0 and not early (an
 *     interrupted system call not restarted shows);
 *   - the main thread reads commands from stdin (blocked in read()), one a
 *     line, and answers each on stdout:
 *
 *       call N   calls at_fn(i, "hello") for i in 0..N-1              -> "ok SUM"
 *       byte     the first byte of at_fn (cc when armed)              -> "byte XX"
 *       bytes    its first 16 bytes (a jump probe's window within)  -> "bytes XX..."
 *       pid      -> "pid PID"
 *       tids     the worker's and the sleeper's thread ids   -> "tids W S"
 *       check    -> "ok WORK SLEEPS" (loops done so far), or "bad ..."
 *
 * At end of input it stops the threads and exits 0 only if every check held.
 * With the argument "blocktrap", a third thread blocks SIGTRAP (pthread_sigmask,
 * before any fdr code is in the process) and waits: the agent must refuse to arm.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int at_fn(int a, const char *s);

__attribute__((noinline, used)) int at_fn(int a, const char *s)
{
	__asm__ volatile("" ::: "memory");
	return a * 2 + s[1];
}

static int (*volatile fn_ptr)(int, const char *) = at_fn;

static volatile int stop;
static volatile pid_t tid_worker, tid_sleeper;
static volatile long work_loops, sleep_loops, bad;
static char bad_text[256];

static void at_bad(const char *what, long a, long b)
{
	if (!bad)
		snprintf(bad_text, sizeof(bad_text), "%s: %ld, expected %ld", what, a, b);
	bad++;
}

__attribute__((noinline)) static double at_work(unsigned int seed, long *isum)
{
	double d = 0;
	long s = 0;
	unsigned int i, x = seed;

	for (i = 0; i < 2000; i++) {
		x = x * 1103515245u + 12345u;
		s += x >> 7;
		d += (double)(x & 0xffff) * 0.5;
	}
	*isum = s;
	return d;
}

static void *worker(void *arg)
{
	double want_d[64];
	long want_i[64];
	unsigned int k;

	(void)arg;
	tid_worker = gettid();
	for (k = 0; k < 64; k++)
		want_d[k] = at_work(k, &want_i[k]);
	while (!stop) {
		for (k = 0; k < 64; k++) {
			long is;
			double d = at_work(k, &is);

			if (d != want_d[k] || is != want_i[k])
				at_bad("at_work", is, want_i[k]);
		}
		work_loops++;
	}
	return NULL;
}

static void *sleeper(void *arg)
{
	(void)arg;
	tid_sleeper = gettid();
	while (!stop) {
		struct timespec t0, t1, until, d = { 0, 50 * 1000 * 1000 };
		int r;

		clock_gettime(CLOCK_MONOTONIC, &t0);
		until = t0;
		until.tv_nsec += 200 * 1000 * 1000;
		if (until.tv_nsec >= 1000000000) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000;
		}
		r = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		if (r != 0)
			at_bad("clock_nanosleep", r, 0);
		else if (t1.tv_sec < until.tv_sec ||
			 (t1.tv_sec == until.tv_sec && t1.tv_nsec < until.tv_nsec))
			at_bad("clock_nanosleep returned early (ns)", t1.tv_nsec, until.tv_nsec);
		if (nanosleep(&d, NULL) != 0)
			at_bad("nanosleep", errno, 0);
		sleep_loops++;
	}
	return NULL;
}

static void *blocker(void *arg)
{
	sigset_t s;

	(void)arg;
	sigemptyset(&s);
	sigaddset(&s, SIGTRAP);
	pthread_sigmask(SIG_BLOCK, &s, NULL);
	while (!stop)
		usleep(10000);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t w, s, b;
	char line[256];
	int with_blocker = argc > 1 && strcmp(argv[1], "blocktrap") == 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (pthread_create(&w, NULL, worker, NULL) || pthread_create(&s, NULL, sleeper, NULL) ||
	    (with_blocker && pthread_create(&b, NULL, blocker, NULL)))
		return 2;
	while (fgets(line, sizeof(line), stdin)) {
		long n, i, sum = 0;

		line[strcspn(line, "\n")] = 0;
		if (!strncmp(line, "call ", 5)) {
			n = strtol(line + 5, NULL, 0);
			for (i = 0; i < n; i++)
				sum += fn_ptr((int)i, "hello");
			if (sum != n * (n - 1) + n * 'e')
				at_bad("call", sum, n * (n - 1) + n * 'e');
			printf("ok %ld\n", sum);
		} else if (!strcmp(line, "byte")) {
			printf("byte %02x\n", *(volatile unsigned char *)(void *)at_fn);
		} else if (!strcmp(line, "bytes")) {
			fputs("bytes ", stdout);
			for (i = 0; i < 16; i++)
				printf("%02x", ((volatile unsigned char *)(void *)at_fn)[i]);
			putchar('\n');
		} else if (!strcmp(line, "tids")) {
			printf("tids %d %d\n", (int)tid_worker, (int)tid_sleeper);
		} else if (!strcmp(line, "pid")) {
			printf("pid %d\n", (int)getpid());
		} else if (!strcmp(line, "check")) {
			if (bad)
				printf("bad %ld: %s\n", (long)bad, bad_text);
			else
				printf("ok %ld %ld\n", (long)work_loops, (long)sleep_loops);
		} else {
			printf("error %s\n", line);
		}
	}
	stop = 1;
	pthread_join(w, NULL);
	pthread_join(s, NULL);
	if (with_blocker)
		pthread_join(b, NULL);
	if (bad) {
		fprintf(stderr, "attach-target: %ld wrong results, the first: %s\n", (long)bad,
			bad_text);
		return 1;
	}
	return 0;
}
