// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * probe-preload.c - libfdr-probe brought in with LD_PRELOAD into a program that
 * was not linked with it (as fdr's agent will be): its references to
 * sigaction@GLIBC_2.2.5, signal and pthread_sigmask must still reach
 * libfdr-probe's versions (which are unversioned for that reason). The engine
 * is found with dlsym(), as an agent would. Prints "N passed, N failed";
 * exit status 1 on any failure, 2 if libfdr-probe is not preloaded.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "engine.h"

uint64_t pt_add(uint64_t a, uint64_t b);
uint64_t pt_own_int3(void);

static int passed, failed;
static atomic_int hits, own;

#define CHECK(cond, what)                                                              \
	do {                                                                           \
		if (cond) {                                                            \
			passed++;                                                      \
		} else {                                                               \
			failed++;                                                      \
			fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, what); \
		}                                                                      \
	} while (0)

static void on_hit(const struct fdr_probe_regs *r, void *arg)
{
	(void)arg;
	if (r->gpr[FDR_REG_DI] == 20 && r->gpr[FDR_REG_SI] == 22)
		atomic_fetch_add(&hits, 1);
}

static void own_trap(int sig)
{
	if (sig == SIGTRAP)
		atomic_fetch_add(&own, 1);
}

static void *blocked(void *arg)
{
	sigset_t all;

	(void)arg;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	return (void *)(uintptr_t)(pt_add(20, 22) == 42);
}

int main(void)
{
	int (*arm)(uintptr_t, fdr_probe_handler, void *, struct fdr_probe_site **);
	int (*disarm)(struct fdr_probe_site *);
	struct fdr_probe_site *site;
	struct sigaction sa;
	pthread_t th;
	void *ok = NULL;

	*(void **)&arm = dlsym(RTLD_DEFAULT, "fdr_probe_arm");
	*(void **)&disarm = dlsym(RTLD_DEFAULT, "fdr_probe_disarm");
	if (!arm || !disarm) {
		fprintf(stderr, "probe-preload: run with LD_PRELOAD=libfdr-probe.so\n");
		return 2;
	}
	CHECK(arm((uintptr_t)(void *)pt_add, on_hit, NULL, &site) == 0, "arm pt_add");
	CHECK(pt_add(20, 22) == 42 && atomic_load(&hits) == 1, "a hit");
	/* the program installs its SIGTRAP handler after the engine */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = own_trap;
	CHECK(sigaction(SIGTRAP, &sa, NULL) == 0, "sigaction");
	CHECK(pt_own_int3() == 42 && atomic_load(&own) == 1, "the program's int3 reaches it");
	CHECK(pt_add(20, 22) == 42 && atomic_load(&hits) == 2, "the probe still works");
	CHECK(signal(SIGTRAP, own_trap) == own_trap, "signal() reports the program's handler");
	CHECK(pt_own_int3() == 42 && atomic_load(&own) == 2, "and it still runs");
	CHECK(pthread_create(&th, NULL, blocked, NULL) == 0 && pthread_join(th, &ok) == 0 && ok,
	      "a thread blocking every signal");
	CHECK(atomic_load(&hits) == 3, "is probed");
	CHECK(disarm(site) == 0 && pt_add(20, 22) == 42 && atomic_load(&hits) == 3, "disarm");
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
