// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * probe-live.c - live patching stress for libfdr-probe (label "stress", so the
 * TSan build runs it too): 4 threads on 2 CPUs call pt_slow (first instruction:
 * a load that misses the caches) and pt_add and check every result, while the
 * main thread arms and disarms probes on both CYCLES times (default 10000,
 * argv[1]). Every other cycle, a return probe joins the entry probe on pt_add,
 * and the two leave in either order (the int3 goes with the last); its
 * argument is cleared as soon as its disarm returns, so a handler running late
 * would see it. Zero wrong results and zero crashes are required; each handler
 * checks the arguments it sees against the thread's record of the call.
 * FDR_PROBE_PATCH and FDR_PROBE_XOL_ALL select the paths as in the unit test;
 * with PROBE_LIVE_JUMP=1 each probe is also jump-optimised after it is armed
 * (lib/probe/jump.c), and every other cycle switched back to int3 and on again
 * before the disarm (the patched windows are 6 bytes, two instructions each);
 * pt_add's return probe joins its window before the optimisation in some
 * cycles and after it in others, and the window must stay a jmp with it.
 * Prints the counts and "N passed, N failed"; exit status 1 on any failure.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "engine.h"

uint64_t pt_add(uint64_t a, uint64_t b);
uint64_t pt_slow(const uint64_t *p, uint64_t x);
extern char pt_add_end[], pt_slow_end[];

#define COLD_WORDS (8u << 20) /* 64 MiB */
#define RUNNERS 4

struct runner {
	pthread_t th;
	int id;
	const uint64_t *cold;
	uint64_t calls, wrong;
};

static atomic_int stop;
static atomic_ulong hits_slow, hits_add, hits_ret, bad_args;

#define RET_MAGIC 0x5eed5eedu
static atomic_uint ret_arg; /* RET_MAGIC while the return probe is armed */
static uint64_t *cold;

/* pt_slow(p, x): p must point into the cold array; pt_add(a, b): b is a call count */
static void on_slow(const struct fdr_probe_regs *r, void *arg)
{
	(void)arg;
	if (r->gpr[FDR_REG_DI] < (uintptr_t)cold ||
	    r->gpr[FDR_REG_DI] >= (uintptr_t)(cold + COLD_WORDS) || r->gpr[FDR_REG_DI] % 8)
		atomic_fetch_add(&bad_args, 1);
	atomic_fetch_add_explicit(&hits_slow, 1, memory_order_relaxed);
}

static void on_add(const struct fdr_probe_regs *r, void *arg)
{
	(void)arg;
	if (r->gpr[FDR_REG_SI] > (1ull << 40))
		atomic_fetch_add(&bad_args, 1);
	atomic_fetch_add_explicit(&hits_add, 1, memory_order_relaxed);
}

/* pt_add's return: its argument must still be valid (the disarm waits for this handler) */
static void on_add_ret(const struct fdr_probe_regs *r, void *arg)
{
	(void)r;
	if (atomic_load((atomic_uint *)arg) != RET_MAGIC)
		atomic_fetch_add(&bad_args, 1);
	atomic_fetch_add_explicit(&hits_ret, 1, memory_order_relaxed);
}

static void *run(void *arg)
{
	struct runner *r = arg;
	uint64_t x = 0x9e3779b97f4a7c15ull * (uint64_t)(r->id + 1);
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(r->id % 2, &set);
	(void)pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		size_t idx;

		x = x * 6364136223846793005ull + 1442695040888963407ull;
		idx = (size_t)(x >> 40) % COLD_WORDS;
		if (pt_slow(&r->cold[idx], x) != r->cold[idx] + x)
			r->wrong++;
		if (pt_add(x, r->calls) != x + r->calls)
			r->wrong++;
		r->calls++;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	long cycles = argc > 1 ? strtol(argv[1], NULL, 10) : 10000;
	const char *jump_env = getenv("PROBE_LIVE_JUMP");
	int jump = jump_env && jump_env[0] == '1';
	unsigned long optimised = 0, not_optimised = 0;
	struct runner rs[RUNNERS];
	uint8_t before_slow[16], before_add[16];
	int passed = 0, failed = 0, i;
	long c;

	if (cycles <= 0) {
		fprintf(stderr, "probe-live: CYCLES must be positive\n");
		return 2;
	}
	cold = mmap(NULL, COLD_WORDS * 8, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
		    0);
	if (cold == MAP_FAILED)
		return 1;
	for (size_t k = 0; k < COLD_WORDS; k++)
		cold[k] = k * 2654435761u;
	memcpy(before_slow, (const void *)(uintptr_t)pt_slow, 16);
	memcpy(before_add, (const void *)(uintptr_t)pt_add, 16);
	for (i = 0; i < RUNNERS; i++) {
		rs[i] = (struct runner){ .id = i, .cold = cold };
		if (pthread_create(&rs[i].th, NULL, run, &rs[i]))
			return 1;
	}
	for (c = 0; c < cycles; c++) {
		struct fdr_probe_site *s1, *s2, *s3 = NULL;
		int r1 = fdr_probe_arm((uintptr_t)pt_slow, on_slow, NULL, &s1);
		int r2 = fdr_probe_arm((uintptr_t)pt_add, on_add, NULL, &s2);
		int r3 = 0, d = 0, ret_late = jump && (c & 5) == 5;

		if ((c & 1) && !ret_late) {
			atomic_store(&ret_arg, RET_MAGIC);
			r3 = fdr_probe_arm_flags((uintptr_t)pt_add, FDR_PROBE_ARM_RETURN,
						 on_add_ret, &ret_arg, &s3);
		}
		if (r1 || r2 || r3) {
			fprintf(stderr, "probe-live: cycle %ld: arm %d %d %d\n", c, r1, r2, r3);
			failed++;
			break;
		}
		if (jump) {
			char why[256];
			uintptr_t f1 = (uintptr_t)pt_slow, f2 = (uintptr_t)pt_add;

			r1 = fdr_probe_optimize(s1, f1, (uintptr_t)pt_slow_end - f1, why,
						sizeof(why));
			if (r1 && r1 != -ETIMEDOUT)
				fprintf(stderr, "probe-live: cycle %ld: pt_slow: %s\n", c, why);
			r2 = fdr_probe_optimize(s2, f2, (uintptr_t)pt_add_end - f2, why,
						sizeof(why));
			if (ret_late) {
				/* a return probe joins the optimised window: it stays a jmp */
				atomic_store(&ret_arg, RET_MAGIC);
				r3 = fdr_probe_arm_flags((uintptr_t)pt_add, FDR_PROBE_ARM_RETURN,
							 on_add_ret, &ret_arg, &s3);
				if (r3) {
					fprintf(stderr, "probe-live: cycle %ld: arm %d\n", c, r3);
					failed++;
					break;
				}
				if (r2 == 0 && !fdr_probe_site_optimized(s3)) {
					snprintf(why, sizeof(why), "a return probe unoptimised it");
					r2 = -EINVAL;
				}
			}
			if (r2 && r2 != -ETIMEDOUT)
				fprintf(stderr, "probe-live: cycle %ld: pt_add: %s\n", c, why);
			optimised += (r1 == 0) + (r2 == 0);
			not_optimised += (r1 != 0) + (r2 != 0);
			if ((r1 && r1 != -ETIMEDOUT) || (r2 && r2 != -ETIMEDOUT)) {
				failed++;
				break;
			}
		}
		if (c % 16 == 0)
			sched_yield();
		if (jump && c % 2 &&
		    (fdr_probe_set_optimize(0) < 0 || fdr_probe_set_optimize(1) < 0)) {
			fprintf(stderr, "probe-live: cycle %ld: switching off and on failed\n", c);
			failed++;
			break;
		}
		d |= fdr_probe_disarm(s1);
		if (s3 && (c & 2)) {
			d |= fdr_probe_disarm(s3);
			atomic_store(&ret_arg, 0);
		}
		d |= fdr_probe_disarm(s2);
		if (s3 && !(c & 2)) {
			d |= fdr_probe_disarm(s3);
			atomic_store(&ret_arg, 0);
		}
		if (d) {
			fprintf(stderr, "probe-live: cycle %ld: disarm failed\n", c);
			failed++;
			break;
		}
	}
	atomic_store(&stop, 1);
	for (i = 0; i < RUNNERS; i++) {
		pthread_join(rs[i].th, NULL);
		printf("thread %d: %lu calls, %lu wrong\n", i, (unsigned long)rs[i].calls,
		       (unsigned long)rs[i].wrong);
		if (rs[i].wrong)
			failed++;
		else
			passed++;
	}
	printf("%ld cycles, hits %lu + %lu, returns %lu, bad arguments %lu\n", c,
	       (unsigned long)atomic_load(&hits_slow), (unsigned long)atomic_load(&hits_add),
	       (unsigned long)atomic_load(&hits_ret), (unsigned long)atomic_load(&bad_args));
	if (jump) {
		printf("optimised %lu, left int3 (a thread did not answer in time) %lu\n",
		       optimised, not_optimised);
		if (optimised < (unsigned long)c)
			failed++;
		else
			passed++;
	}
	if (atomic_load(&bad_args) || !(atomic_load(&hits_slow) + atomic_load(&hits_add)))
		failed++;
	else
		passed++;
	if (memcmp(before_slow, (const void *)(uintptr_t)pt_slow, 16) ||
	    memcmp(before_add, (const void *)(uintptr_t)pt_add, 16))
		failed++;
	else
		passed++;
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
