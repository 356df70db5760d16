// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * probe-bench.c - what one hit of an int3 probe costs (libfdr-probe, lib/probe).
 *
 * pt_nop (tests/unit/probe-targets.S: xor %eax,%eax; ret) is called N times on
 * CPU 0 with a probe on its first instruction whose handler only counts; the
 * same loop without the probe is timed too, and the difference per call is the
 * cost of a hit: the trap, the kernel's signal delivery, the handler, the
 * out-of-line copy and the return. Five runs, the median printed as
 *
 *	METRIC probe_int3_handler_ns fdr=X
 *
 * (no ref: bench/compare-uprobes, issue 15, measures kernel uprobes on the same
 * functions). Then the same for a jump-optimised probe (lib/probe/jump.c) on
 * pt_nop5 (a 5-byte nop first, as the kernel's uprobe reference uses), with the
 * same counting handler armed with FDR_PROBE_ARM_NOVEC (it uses general
 * registers only: the trampoline saves no vector state, as for the agent's
 * handler), then armed without it (the hit calls it through fdr_vcall(), which
 * saves and restores the vector state around it):
 *
 *	METRIC probe_jmp_ns fdr=X
 *	METRIC probe_jmp_vcall_ns fdr=X
 *
 * and an entry and a return probe on pt_nop5, both with the counting handler
 * (FDR_PROBE_ARM_NOVEC), the window a jmp: the engine's share of a call with
 * both (the hijack at the entry, the return trampoline), no record written:
 *
 *	METRIC probe_jmp_entry_ret_ns fdr=X
 * Before the first probe, the floor is measured: the same loop over
 * pt_own_int3 (an int3 of its own) with an empty SA_SIGINFO handler and no fdr,
 * what the kernel's trap and signal delivery cost alone. Each run's figures go
 * to stderr, with how long arming and
 * disarming took (single-threaded process; the first run includes making the
 * XOL page and installing the signal handler). Usage: bench-probe [N] (default
 * 200000). Exit status 1 if a run fails its own check (every hit counted).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine.h"

uint64_t pt_nop(void);
uint64_t pt_nop5(void);
uint64_t pt_own_int3(void);
extern char pt_nop5_end[];

#define RUNS 5

static uint64_t hits;

/* general registers only, as FDR_PROBE_ARM_NOVEC requires (compiler-checked) */
__attribute__((target("general-regs-only"))) static void count(const struct fdr_probe_regs *regs,
							       void *arg)
{
	(void)regs;
	(void)arg;
	hits++;
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* ns per call of N calls through a volatile pointer (never inlined, never hoisted) */
static double loop_ns(uint64_t (*volatile fn)(void), long n)
{
	double t0 = now_ns();
	long i;

	for (i = 0; i < n; i++)
		fn();
	return (now_ns() - t0) / (double)n;
}

static void empty_handler(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)si;
	(void)uc;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/*
 * The jump probe's runs on pt_nop5, armed with @flags: the median cost of a
 * hit; with @ret, a return probe with the same handler joins it (the cost of
 * an entry and a return).
 */
static int jmp_runs(long n, unsigned int flags, int ret_too, const char *metric)
{
	double cost[RUNS];
	int r;

	for (r = 0; r < RUNS; r++) {
		struct fdr_probe_site *site, *rsite = NULL;
		double base, armed, t_opt;
		char why[256];
		int ret;

		loop_ns(pt_nop5, n / 10);
		base = loop_ns(pt_nop5, n);
		ret = fdr_probe_arm_flags((uintptr_t)(void *)pt_nop5, flags, count, NULL, &site);
		if (ret < 0) {
			fprintf(stderr, "bench-probe: arming pt_nop5: %s\n", strerror(-ret));
			return -1;
		}
		t_opt = now_ns();
		ret = fdr_probe_optimize(site, (uintptr_t)(void *)pt_nop5,
					 (size_t)(pt_nop5_end - (char *)(void *)pt_nop5), why,
					 sizeof(why));
		t_opt = now_ns() - t_opt;
		if (ret < 0) {
			fprintf(stderr, "bench-probe: optimising pt_nop5: %s\n", why);
			return -1;
		}
		if (ret_too) {
			ret = fdr_probe_arm_flags((uintptr_t)(void *)pt_nop5,
						  flags | FDR_PROBE_ARM_RETURN, count, NULL,
						  &rsite);
			if (ret < 0 || !fdr_probe_site_optimized(rsite)) {
				fprintf(stderr, "bench-probe: the return probe: %s\n",
					ret < 0 ? strerror(-ret) : "not optimised");
				return -1;
			}
		}
		hits = 0;
		loop_ns(pt_nop5, n / 10);
		armed = loop_ns(pt_nop5, n);
		ret = fdr_probe_disarm(site);
		if (rsite && ret == 0)
			ret = fdr_probe_disarm(rsite);
		if (ret < 0 || hits != (uint64_t)(n + n / 10) * (ret_too ? 2 : 1)) {
			fprintf(stderr,
				"bench-probe: %s run %d: %lu hits of %ld calls, disarm %d\n",
				metric, r, (unsigned long)hits, n + n / 10, ret);
			return -1;
		}
		cost[r] = armed - base;
		fprintf(stderr,
			"bench-probe: %s run %d: %.1f ns per call optimised, %.1f unarmed; "
			"optimise %.1f us\n",
			metric, r, armed, base, t_opt / 1e3);
	}
	qsort(cost, RUNS, sizeof(cost[0]), cmp_double);
	printf("METRIC %s fdr=%.1f\n", metric, cost[RUNS / 2]);
	return 0;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : 200000;
	double cost[RUNS];
	cpu_set_t set;
	int r;

	if (n <= 0) {
		fprintf(stderr, "bench-probe: N must be a positive number, got '%s'\n", argv[1]);
		return 2;
	}
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	sched_setaffinity(0, sizeof(set), &set);
	{
		/* the floor, before the engine owns SIGTRAP: a trap and an empty handler */
		struct sigaction sa, dfl;
		double floor_ns[RUNS];

		memset(&sa, 0, sizeof(sa));
		sa.sa_sigaction = empty_handler;
		sa.sa_flags = SA_SIGINFO | SA_NODEFER | SA_ONSTACK | SA_RESTART;
		sigaction(SIGTRAP, &sa, &dfl);
		for (r = 0; r < RUNS; r++)
			floor_ns[r] = loop_ns(pt_own_int3, n) - loop_ns(pt_nop, n);
		sigaction(SIGTRAP, &dfl, NULL);
		qsort(floor_ns, RUNS, sizeof(floor_ns[0]), cmp_double);
		fprintf(stderr,
			"bench-probe: floor, an int3 and an empty SA_SIGINFO handler without "
			"fdr: %.0f ns (median)\n",
			floor_ns[RUNS / 2]);
	}
	for (r = 0; r < RUNS; r++) {
		struct fdr_probe_site *site;
		double base, armed, t_arm, t_disarm;
		int ret;

		loop_ns(pt_nop, n / 10); /* warm-up */
		base = loop_ns(pt_nop, n);
		t_arm = now_ns();
		ret = fdr_probe_arm((uintptr_t)(void *)pt_nop, count, NULL, &site);
		t_arm = now_ns() - t_arm;
		if (ret < 0) {
			fprintf(stderr, "bench-probe: arming pt_nop: %s\n", strerror(-ret));
			return 1;
		}
		hits = 0;
		loop_ns(pt_nop, n / 10);
		armed = loop_ns(pt_nop, n);
		t_disarm = now_ns();
		ret = fdr_probe_disarm(site);
		t_disarm = now_ns() - t_disarm;
		if (ret < 0 || hits != (uint64_t)(n + n / 10)) {
			fprintf(stderr, "bench-probe: run %d: %lu hits of %ld calls, disarm %d\n",
				r, (unsigned long)hits, n + n / 10, ret);
			return 1;
		}
		cost[r] = armed - base;
		fprintf(stderr,
			"bench-probe: run %d: %.1f ns per call armed, %.1f unarmed; "
			"arm %.1f us, disarm %.1f us\n",
			r, armed, base, t_arm / 1e3, t_disarm / 1e3);
	}
	qsort(cost, RUNS, sizeof(cost[0]), cmp_double);
	printf("METRIC probe_int3_handler_ns fdr=%.0f\n", cost[RUNS / 2]);
	if (jmp_runs(n, FDR_PROBE_ARM_NOVEC | FDR_PROBE_ARM_NOCOUNT, 0, "probe_jmp_ns") < 0 ||
	    jmp_runs(n, 0, 0, "probe_jmp_vcall_ns") < 0 ||
	    jmp_runs(n, FDR_PROBE_ARM_NOVEC | FDR_PROBE_ARM_NOCOUNT, 1, "probe_jmp_entry_ret_ns") <
		    0)
		return 1;
	return 0;
}
