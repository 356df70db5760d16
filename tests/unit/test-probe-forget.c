// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test-probe-forget.c - fdr_probe_forget() (lib/probe/engine.c): a probe whose
 * text was unmapped (a library dlclose()d) is dropped without a write.
 *
 * The probed code is a file mapped r-x, MAP_PRIVATE, as the dynamic linker
 * maps a library's text: F (mov %edi,%eax; add $1,%eax; ret) and G, whose first
 * instruction is an int3 of its own (int3; mov $7,%eax; ret). Each test arms a
 * probe on F, then unmaps it, or maps F or G afresh over it (what dlclose()
 * then dlopen() between two syncs of the agent leave), and checks that the
 * engine forgets the site only then, writes nothing into the new code, lets
 * another probe be armed at the same address, and passes G's own int3 to the
 * program's SIGTRAP handler instead of taking it for a trap of its old site.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "engine.h"

static const uint8_t code_f[] = { 0x89, 0xf8, 0x83, 0xc0, 0x01, 0xc3 };
static const uint8_t code_g[] = { 0xcc, 0xb8, 0x07, 0x00, 0x00, 0x00, 0xc3 };

typedef int (*fn_t)(int);

static atomic_int hits;

static void on_hit(const struct fdr_probe_regs *r, void *arg)
{
	(void)r;
	(void)arg;
	atomic_fetch_add(&hits, 1);
}

/* A page-sized file in TMPDIR holding @code, the rest nops; its fd. */
static int code_file(const uint8_t *code, size_t len)
{
	const char *dir = getenv("TMPDIR");
	char path[4096];
	uint8_t page[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/probe-forget-XXXXXX", dir && *dir ? dir : "/tmp");
	fd = mkstemp(path);
	cr_assert(fd >= 0, "mkstemp %s: %s", path, strerror(errno));
	unlink(path);
	memset(page, 0x90, sizeof(page));
	memcpy(page, code, len);
	cr_assert_eq(write(fd, page, sizeof(page)), (ssize_t)sizeof(page));
	return fd;
}

/* Map @fd r-x at @at (MAP_FIXED over what is there), or anywhere if @at is NULL. */
static uint8_t *map_code(int fd, void *at)
{
	void *p = mmap(at, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | (at ? MAP_FIXED : 0), fd, 0);

	cr_assert(p != MAP_FAILED, "mmap: %s", strerror(errno));
	if (at)
		cr_assert_eq(p, at);
	return p;
}

/* F mapped and probed: one call, one hit; the site is not forgotten while it is there. */
static struct fdr_probe_site *armed_f(int fd, uint8_t **base)
{
	struct fdr_probe_site *site = NULL;

	*base = map_code(fd, NULL);
	cr_assert_eq(fdr_probe_arm((uintptr_t)*base, on_hit, NULL, &site), 0);
	cr_assert_eq((*base)[0], 0xcc);
	cr_assert_eq(((fn_t)(void *)*base)(5), 6);
	cr_assert_eq(atomic_load(&hits), 1);
	cr_assert_eq(fdr_probe_forget(site), -EBUSY, "the int3 is still in place");
	cr_assert_eq((*base)[0], 0xcc);
	return site;
}

Test(forget, unmapped_then_same_file_again)
{
	int fd = code_file(code_f, sizeof(code_f));
	struct fdr_probe_site *site, *again = NULL;
	uint8_t *base;

	site = armed_f(fd, &base);
	cr_assert_eq(munmap(base, 4096), 0);
	cr_assert_eq(fdr_probe_forget(site), 0);
	cr_assert_eq(fdr_probe_forget(site), -EINVAL, "forgotten once");
	/* the same file at the same address: its own bytes, and a probe may go there again */
	map_code(fd, base);
	cr_assert_eq(base[0], 0x89);
	cr_assert_eq(fdr_probe_arm((uintptr_t)base, on_hit, NULL, &again), 0);
	cr_assert_eq(((fn_t)(void *)base)(41), 42);
	cr_assert_eq(atomic_load(&hits), 2);
	cr_assert_eq(fdr_probe_disarm(again), 0);
	cr_assert_eq(memcmp(base, code_f, sizeof(code_f)), 0);
}

/* dlclose() then dlopen() of the same file between two looks: mapped, but not our page */
Test(forget, replaced_by_the_same_file)
{
	int fd = code_file(code_f, sizeof(code_f));
	struct fdr_probe_site *site;
	uint8_t *base;

	site = armed_f(fd, &base);
	map_code(fd, base);
	cr_assert_eq(base[0], 0x89, "a fresh mapping of the file");
	cr_assert_eq(fdr_probe_forget(site), 0);
	cr_assert_eq(memcmp(base, code_f, sizeof(code_f)), 0, "nothing written into it");
	cr_assert_eq(((fn_t)(void *)base)(1), 2);
	cr_assert_eq(atomic_load(&hits), 1, "no hit: nothing armed there now");
}

static atomic_int own_traps;

static void own_sigtrap(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)si;
	(void)uc;
	atomic_fetch_add(&own_traps, 1); /* RIP is past the int3: the code goes on */
}

/*
 * Another library at the address, with an int3 of its own there: the site
 * forgotten, that int3 is the program's (its handler runs, once), and the old
 * byte is never written into the new code.
 */
Test(forget, replaced_by_code_with_its_own_int3, .timeout = 10)
{
	int fd = code_file(code_f, sizeof(code_f));
	int fd_g = code_file(code_g, sizeof(code_g));
	struct sigaction sa;
	struct fdr_probe_site *site;
	uint8_t *base;

	site = armed_f(fd, &base);
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = own_sigtrap;
	sa.sa_flags = SA_SIGINFO;
	cr_assert_eq(sigaction(SIGTRAP, &sa, NULL), 0);
	map_code(fd_g, base);
	cr_assert_eq(fdr_probe_forget(site), 0);
	cr_assert_eq(memcmp(base, code_g, sizeof(code_g)), 0, "nothing written into it");
	cr_assert_eq(((fn_t)(void *)base)(1), 7);
	cr_assert_eq(atomic_load(&own_traps), 1);
	cr_assert_eq(atomic_load(&hits), 1);
}

Test(forget, refused_arguments)
{
	cr_assert_eq(fdr_probe_forget(NULL), -EINVAL);
}
