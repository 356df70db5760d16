// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * cpu-stall.c - how long this machine takes a CPU away from a thread that wants
 * it, for bench/compare-lttng (logged next to record_mev_s).
 *
 *   bench-cpu-stall MS CPU...
 *
 * One thread per CPU named, pinned there, spins for MS milliseconds reading
 * CLOCK_MONOTONIC; a gap between two reads is time the thread did not run
 * (interrupts, other tasks or, in a virtual machine, the host running something
 * else on that vCPU). Prints one line per CPU on stdout:
 *   cpu=N max_gap_ms=X gaps_over_1ms=K
 * Exit status 0, or 1 (nothing printed) if a thread cannot be started or pinned.
 *
 * Why: a recorder away for X ms loses records unless the buffers hold X ms of
 * events; fdr record prints its own longest pause when it lost records.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_CPUS 64

struct spin {
	pthread_t th;
	unsigned int cpu;
	uint64_t ms;
	uint64_t max_gap_ns;
	uint64_t over_1ms;
	int err;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void *spin_main(void *arg)
{
	struct spin *sp = arg;
	cpu_set_t set;
	uint64_t t0, prev, t;

	CPU_ZERO(&set);
	CPU_SET(sp->cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		sp->err = 1;
		return NULL;
	}
	t0 = prev = now_ns();
	do {
		t = now_ns();
		if (t - prev > sp->max_gap_ns)
			sp->max_gap_ns = t - prev;
		if (t - prev > 1000000)
			sp->over_1ms++;
		prev = t;
	} while (t - t0 < sp->ms * 1000000);
	return NULL;
}

int main(int argc, char **argv)
{
	struct spin sp[MAX_CPUS];
	int i, n = argc - 2;
	char *end;
	unsigned long ms;

	if (argc < 3 || n > MAX_CPUS) {
		fprintf(stderr, "usage: %s MS CPU... (at most %d CPUs)\n", argv[0], MAX_CPUS);
		return 2;
	}
	ms = strtoul(argv[1], &end, 10);
	if (*end || ms == 0 || ms > 600000) {
		fprintf(stderr, "%s: MS: expected 1 to 600000 milliseconds, found '%s'\n", argv[0],
			argv[1]);
		return 2;
	}
	memset(sp, 0, sizeof(sp));
	for (i = 0; i < n; i++) {
		unsigned long cpu = strtoul(argv[i + 2], &end, 10);

		if (*end || end == argv[i + 2] || cpu >= CPU_SETSIZE) {
			fprintf(stderr, "%s: CPU: expected a CPU number, found '%s'\n", argv[0],
				argv[i + 2]);
			return 2;
		}
		sp[i].cpu = (unsigned int)cpu;
		sp[i].ms = ms;
	}
	for (i = 0; i < n; i++) {
		if (pthread_create(&sp[i].th, NULL, spin_main, &sp[i])) {
			fprintf(stderr, "%s: cannot start a thread\n", argv[0]);
			return 1;
		}
	}
	for (i = 0; i < n; i++)
		pthread_join(sp[i].th, NULL);
	for (i = 0; i < n; i++) {
		if (sp[i].err) {
			fprintf(stderr, "%s: cannot pin a thread to CPU %u\n", argv[0], sp[i].cpu);
			return 1;
		}
	}
	for (i = 0; i < n; i++)
		printf("cpu=%u max_gap_ms=%.2f gaps_over_1ms=%llu\n", sp[i].cpu,
		       (double)sp[i].max_gap_ns / 1e6, (unsigned long long)sp[i].over_1ms);
	return 0;
}
