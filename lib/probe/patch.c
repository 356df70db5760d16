// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * patch.c - writing into running code without a W+X page, and pages near it.
 *
 * Two ways to change bytes of a mapped r-x page, neither of which ever makes
 * a page writable and executable at once:
 *
 * 1. /proc/self/mem (preferred). pwrite() at the address: the kernel writes
 *    with FOLL_FORCE, breaking copy-on-write into a private copy of the page
 *    (the file on disk is untouched) while the mapping stays r-x. The store
 *    of one byte is a single store from other threads' point of view: they
 *    see the old byte or the new one, never a mix. Kernels booted with
 *    proc_mem.force_override=never refuse (EIO/EPERM), hence:
 *
 * 2. mremap. Copy the page into a fresh anonymous RW mapping, change the
 *    bytes there, mprotect() it to the original page's protection (r-x), and
 *    mremap(MREMAP_FIXED|MREMAP_MAYMOVE) it over the original page. The
 *    kernel swaps the page table entry under the mmap lock: a thread running
 *    in that page faults and waits or sees the whole new page, never a hole.
 *    The page loses its file backing (as a COW copy would anyway).
 *
 * FDR_PROBE_PATCH=mem|mremap in the environment, or fdr_probe_set_patch_method(),
 * forces one (the tests run both).
 *
 * Why an int3 can be written while other threads execute the instruction:
 * the kernel's text_poke_bp() rests on the rule that a CPU executing an
 * instruction whose first byte is concurrently replaced by int3 runs either
 * the old instruction whole or traps: never a mix of the two. One byte, the
 * first, is the only change, so no thread can decode half-old, half-new bytes.
 * A CPU may however keep running the old byte from its instruction cache or
 * pipeline for a while: after each change we make every thread of the
 * process execute a serialising instruction, with
 * membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE) (registered once, at
 * load: fdr_patch_prepare()).
 * Where that is missing (kernels before 4.16, or seccomp) we fall back to
 * MEMBARRIER_CMD_PRIVATE_EXPEDITED: its IPI interrupts each CPU running a
 * thread of ours, and the return from an interrupt to user space is an IRET,
 * which is serialising on x86. Without either (no membarrier at all), the
 * int3 form is still correct: a thread that runs the old byte a little
 * longer misses a hit, and one that traps on a removed int3 is sent back to
 * the original instruction (engine.c, "already gone"). Issue 16's multi-byte
 * windows need the barrier; patch_sync() returns which one was used.
 *
 * Pages near code: a RIP-relative operand or a jmp rel32 reaches ±2 GiB, so
 * out-of-line copies live in pages allocated as close as possible to the
 * probed code: fdr_patch_alloc_near() maps free pages next to the mapping of
 * the address, found with a few PROCMAP_QUERY ioctls (the pages just below
 * the file's start, or below the mapping, else the first gap above), else the free page nearest to the address in
 * the text of /proc/self/maps (MAP_FIXED_NOREPLACE, never over a mapping).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/membarrier.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "probe-local.h"

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

static int pt_mem_fd = -1; /* /proc/self/mem, O_RDWR; under the engine lock */
static int pt_mem_broken; /* a pwrite failed: the kernel refuses FOLL_FORCE writes */
static enum fdr_probe_patch_method pt_forced;
static enum fdr_probe_patch_method pt_last_used;
static int pt_membarrier = -1; /* -1 unknown, else enum fdr_patch_sync */
static pid_t pt_pid; /* whose /proc/self/mem pt_mem_fd is */

/*
 * A descriptor fdr keeps open in the program (/proc/self/mem, /proc/self/maps)
 * and the file it was opened on: before reusing or closing it, fstat() must
 * find the same device and inode, else the program closed it or took the
 * number over, and it is not fdr's to touch.
 */
struct pt_fd_id {
	dev_t dev;
	ino_t ino;
};

/* Record @fd's identity in @id; 0, or -1 if fstat() fails (then @fd is not kept). */
static int pt_fd_id_of(int fd, struct pt_fd_id *id)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -1;
	id->dev = st.st_dev;
	id->ino = st.st_ino;
	return 0;
}

/* Whether @fd is still the file @id records. */
static int pt_fd_is(int fd, const struct pt_fd_id *id)
{
	struct stat st;

	return fd >= 0 && fstat(fd, &st) == 0 && st.st_dev == id->dev && st.st_ino == id->ino;
}

static struct pt_fd_id pt_mem_id; /* pt_mem_fd's, for fdr_patch_close_fds() */
static pid_t pt_membarrier_pid; /* who registered pt_membarrier */

/**
 * fdr_probe_set_patch_method - choose how text is written
 * @m: FDR_PROBE_PATCH_AUTO, _MEM or _MREMAP
 *
 * Overrides FDR_PROBE_PATCH. For tests and for kernels where one way is known
 * to be refused. Returns: 0, or -EINVAL for an unknown @m.
 */
int fdr_probe_set_patch_method(enum fdr_probe_patch_method m)
{
	if (m != FDR_PROBE_PATCH_AUTO && m != FDR_PROBE_PATCH_MEM && m != FDR_PROBE_PATCH_MREMAP)
		return -EINVAL;
	fdr_probe_lock();
	pt_forced = m;
	pt_mem_broken = 0;
	fdr_probe_unlock();
	return 0;
}

/** fdr_probe_patch_method_used - how the last text write was done (0 if none yet). */
enum fdr_probe_patch_method fdr_probe_patch_method_used(void)
{
	return pt_last_used;
}

static enum fdr_probe_patch_method pt_method(void)
{
	const char *e;

	if (pt_forced != FDR_PROBE_PATCH_AUTO)
		return pt_forced;
	e = getenv("FDR_PROBE_PATCH");
	if (e && !strcmp(e, "mem"))
		return FDR_PROBE_PATCH_MEM;
	if (e && !strcmp(e, "mremap"))
		return FDR_PROBE_PATCH_MREMAP;
	return FDR_PROBE_PATCH_AUTO;
}

/* Under the engine lock: pt_mem_fd open on this process's /proc/self/mem; 0 or -errno. */
static int pt_mem_open(void)
{
	/* after fork, /proc/self/mem still names the parent's memory through our fd */
	if (pt_mem_fd >= 0 && pt_pid != getpid()) {
		close(pt_mem_fd);
		pt_mem_fd = -1;
	}
	if (pt_mem_fd < 0) {
		pt_mem_fd = open("/proc/self/mem", O_RDWR | O_CLOEXEC);
		if (pt_mem_fd < 0)
			return -errno;
		pt_pid = getpid();
		if (pt_fd_id_of(pt_mem_fd, &pt_mem_id) < 0)
			pt_mem_id =
				(struct pt_fd_id){ 0,
						   0 }; /* never closed by fdr_patch_close_fds() */
	}
	return 0;
}

/* Whether text is written through /proc/self/mem here (method @m, no failure seen). */
static int pt_mem_wanted(enum fdr_probe_patch_method m)
{
	return m == FDR_PROBE_PATCH_MEM || (m == FDR_PROBE_PATCH_AUTO && !pt_mem_broken);
}

static int pt_write_mem(uintptr_t addr, const void *buf, size_t len)
{
	ssize_t w;
	int ret = pt_mem_open();

	if (ret < 0)
		return ret;
	w = pwrite(pt_mem_fd, buf, len, (off_t)addr);
	if (w < 0)
		return -errno;
	return (size_t)w == len ? 0 : -EIO;
}

/**
 * fdr_procmap_query - one PROCMAP_QUERY on @fd (/proc/self/maps)
 * @addr: the mapping covering it; with FDR_PMQ_NEXT in @flags, the first one
 *        at or above it (the kernel skips those the other flags do not want)
 * @name: if not NULL, gets the mapping's path (@name_len bytes); a path that
 *        does not fit is left empty
 *
 * Returns 0 and *@q, -ENOENT (no such mapping), or -ENOTTY (a kernel before
 * 6.11, or an answer that makes no sense: read the text instead).
 */
int fdr_procmap_query(int fd, uintptr_t addr, uint64_t flags, char *name, size_t name_len,
		      struct fdr_procmap_query *q)
{
	int r;

	memset(q, 0, sizeof(*q));
	q->size = sizeof(*q);
	q->query_flags = flags;
	q->query_addr = addr;
	if (name && name_len) {
		name[0] = 0;
		q->vma_name_addr = (uintptr_t)name;
		q->vma_name_size = (uint32_t)name_len;
	}
	r = ioctl(fd, FDR_PROCMAP_QUERY, q);
	if (r < 0 && errno == E2BIG && q->vma_name_size) {
		q->vma_name_addr = 0;
		q->vma_name_size = 0;
		r = ioctl(fd, FDR_PROCMAP_QUERY, q);
	}
	if (r == 0)
		return q->vma_start < q->vma_end ? 0 : -ENOTTY;
	return errno == ENOENT ? -ENOENT : -ENOTTY;
}

/*
 * One /proc/self/maps for every PROCMAP_QUERY of a sync. Each open() of it
 * costs 5 to 40 us cold, and an arm opened it up to four times (the agent's
 * fast way, the page's protection, the XOL page's search, the walk after the
 * arms). Between fdr_patch_maps_hold(1) and fdr_patch_maps_hold(0) (the
 * agent's sync), fdr_patch_maps_fd() gives the calling thread the same fd,
 * opened at its first use (or kept from the last sync: below); elsewhere,
 * and in every other thread, a fresh one that fdr_patch_maps_put() closes. Thread-local:
 * another thread arming meanwhile never sees this one closed under it. The
 * text of the file is always read from a descriptor of its own (stdio closes
 * it). A child after fork() has none held: the agent's sync does not run in
 * the forking thread.
 */
static __thread int pt_maps_hold;
static __thread int pt_maps_held = -1;

/*
 * The held descriptor is kept from one sync to the next (only the agent's
 * sync holds one, under its lock, so these need no other): opening
 * /proc/self/maps was the largest part of a first arm's look at the
 * mappings, 20 to 40 us of the 36 to 68 us of that step on the 16-CPU VM
 * (docs/design/probes.md, "Arming in a busy process"). Before its reuse it is
 * checked: still this process's (a child after fork() closes the one it
 * inherited) and still the file it was (fstat(): same device and inode).
 * If the program closed it, or its own file got the number, the number is
 * left alone (never closed by us) and a new one opened.
 */
static int pt_maps_kept = -1;
static pid_t pt_maps_kept_pid;
static struct pt_fd_id pt_maps_kept_id;

/* The kept descriptor if it is still ours, else -1 (a stale one forgotten). */
static int pt_maps_kept_fd(void)
{
	int same;

	if (pt_maps_kept < 0)
		return -1;
	same = pt_fd_is(pt_maps_kept, &pt_maps_kept_id);
	if (same && pt_maps_kept_pid == getpid())
		return pt_maps_kept;
	if (same)
		close(pt_maps_kept); /* the parent's, inherited through fork() */
	pt_maps_kept = -1;
	return -1;
}

/** fdr_patch_maps_hold - hold one /proc/self/maps for this thread (@on), or release it */
void fdr_patch_maps_hold(int on)
{
	/* the kept one stays for the next hold; one not kept (no fstat()) is closed */
	if (!on && pt_maps_held >= 0 && pt_maps_held != pt_maps_kept)
		close(pt_maps_held);
	pt_maps_held = -1;
	pt_maps_hold = on;
}

/** fdr_patch_maps_fd - /proc/self/maps for PROCMAP_QUERY: the one held, else a new one; or -errno */
int fdr_patch_maps_fd(void)
{
	int fd;

	if (pt_maps_hold && pt_maps_held >= 0)
		return pt_maps_held;
	if (pt_maps_hold && (fd = pt_maps_kept_fd()) >= 0) {
		pt_maps_held = fd;
		return fd;
	}
	fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (pt_maps_hold) {
		pt_maps_held = fd;
		if (pt_fd_id_of(fd, &pt_maps_kept_id) == 0) {
			pt_maps_kept = fd;
			pt_maps_kept_pid = getpid();
		}
	}
	return fd;
}

/**
 * fdr_patch_close_fds - fdr detach: close the descriptors kept between text
 * writes (/proc/self/mem) and between syncs (/proc/self/maps), each only if
 * it is still the file it was (a number the program took over stays open)
 */
void fdr_patch_close_fds(void)
{
	int fd;

	fdr_probe_lock();
	if (pt_fd_is(pt_mem_fd, &pt_mem_id))
		close(pt_mem_fd);
	pt_mem_fd = -1;
	fdr_probe_unlock();
	fd = pt_maps_kept_fd(); /* the agent's lock is held: fdr_probe_detach() */
	if (fd >= 0)
		close(fd);
	pt_maps_kept = -1;
}

/** fdr_patch_maps_put - done with @fd from fdr_patch_maps_fd(): closed unless it is the one held */
void fdr_patch_maps_put(int fd)
{
	if (fd >= 0 && !(pt_maps_hold && fd == pt_maps_held))
		close(fd);
}

/*
 * fdr_patch_page_prot - the protection of the mapping holding @page: one
 * PROCMAP_QUERY, else from the text of /proc/self/maps; -EFAULT if unmapped.
 */
int fdr_patch_page_prot(uintptr_t page, int *prot)
{
	struct fdr_procmap_query q;
	char line[512];
	int fd = fdr_patch_maps_fd();
	int ret;
	FILE *f;

	if (fd < 0)
		return fd;
	ret = fdr_procmap_query(fd, page, 0, NULL, 0, &q);
	fdr_patch_maps_put(fd);
	if (ret != -ENOTTY) {
		if (ret < 0)
			return -EFAULT;
		*prot = (q.vma_flags & FDR_PMQ_READ ? PROT_READ : 0) |
			(q.vma_flags & FDR_PMQ_WRITE ? PROT_WRITE : 0) |
			(q.vma_flags & FDR_PMQ_EXEC ? PROT_EXEC : 0);
		return 0;
	}
	f = fopen("/proc/self/maps", "re");
	if (!f)
		return -errno;
	ret = -EFAULT;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		char perms[8];

		if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) != 3)
			continue;
		if (page < lo || page >= hi)
			continue;
		*prot = (perms[0] == 'r' ? PROT_READ : 0) | (perms[1] == 'w' ? PROT_WRITE : 0) |
			(perms[2] == 'x' ? PROT_EXEC : 0);
		ret = 0;
		break;
	}
	fclose(f);
	return ret;
}

static int pt_write_mremap(uintptr_t addr, const void *buf, size_t len)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	uintptr_t page = addr & ~(uintptr_t)(pg - 1);
	void *fresh, *moved;
	int prot, ret;

	if (((addr + len - 1) & ~(uintptr_t)(pg - 1)) != page)
		return -EINVAL; /* callers split writes at page boundaries */
	ret = fdr_patch_page_prot(page, &prot);
	if (ret < 0)
		return ret;
	if ((prot & PROT_WRITE) && (prot & PROT_EXEC))
		return -EPERM; /* never make or keep a W+X page */
	fresh = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (fresh == MAP_FAILED)
		return -errno;
	memcpy(fresh, (const void *)page, pg);
	memcpy((char *)fresh + (addr - page), buf, len);
	if (mprotect(fresh, pg, prot) < 0) {
		ret = -errno;
		munmap(fresh, pg);
		return ret;
	}
	moved = mremap(fresh, pg, pg, MREMAP_FIXED | MREMAP_MAYMOVE, (void *)page);
	if (moved == MAP_FAILED) {
		ret = -errno;
		munmap(fresh, pg);
		return ret;
	}
	return 0;
}

/**
 * fdr_patch_write - write @len bytes at @addr in a mapped page, keeping its protection
 *
 * Caller holds the engine lock. The bytes must not cross a page boundary for the
 * mremap path (callers write one byte, or one slot). Does not serialise: call
 * fdr_patch_sync() once the change must be visible to every thread.
 * Returns: 0, or a negative errno from both ways (the last one tried).
 */
int fdr_patch_write(uintptr_t addr, const void *buf, size_t len)
{
	enum fdr_probe_patch_method m = pt_method();
	int ret = -ENOSYS;

	if (pt_mem_wanted(m)) {
		ret = pt_write_mem(addr, buf, len);
		if (ret == 0) {
			pt_last_used = FDR_PROBE_PATCH_MEM;
			return 0;
		}
		if (m == FDR_PROBE_PATCH_MEM)
			return ret;
		pt_mem_broken = 1;
	}
	ret = pt_write_mremap(addr, buf, len);
	if (ret == 0)
		pt_last_used = FDR_PROBE_PATCH_MREMAP;
	return ret;
}

/* Register this process for the membarrier we use, once (engine lock held). */
static void pt_membarrier_register(void)
{
	/* a child after fork has a new mm, not registered (its pid tells) */
	if (pt_membarrier >= 0 && pt_membarrier_pid != getpid())
		pt_membarrier = -1;
	if (pt_membarrier < 0) {
		pt_membarrier_pid = getpid();
		if (syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE, 0,
			    0) == 0)
			pt_membarrier = FDR_PATCH_SYNC_CORE;
		else if (syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) ==
			 0)
			pt_membarrier = FDR_PATCH_SYNC_IPI;
		else
			pt_membarrier = FDR_PATCH_SYNC_NONE;
	}
}

/**
 * fdr_patch_prepare - register for the membarrier fdr_patch_sync() uses, now
 *
 * In a process that already has other threads the registration waits for an
 * RCU grace period (4 to 12 ms measured on the development VM), which the
 * first arm would otherwise spend with the engine's lock (and the agent's)
 * held. libfdr-probe's constructor calls this when the process has a single
 * thread (linked or preloaded: before the program's threads exist), where the
 * registration costs nothing; dlopen()ed into a process with threads, the
 * first arm registers, as before.
 */
void fdr_patch_prepare(void)
{
	fdr_probe_lock();
	pt_membarrier_register();
	fdr_probe_unlock();
}

/**
 * fdr_patch_warm - open what the first text write uses, ahead of it
 *
 * /proc/self/mem, if that is the way text is written here (kept open, as after
 * any write); called by the agent before a process's first arm (agent.c,
 * pa_warm()). Nothing is written.
 */
void fdr_patch_warm(void)
{
	enum fdr_probe_patch_method m = pt_method();

	fdr_probe_lock();
	if (pt_mem_wanted(m))
		(void)pt_mem_open();
	fdr_probe_unlock();
}

/**
 * fdr_patch_sync - make every thread of the process serialise its instruction stream
 *
 * Returns: the barrier used (FDR_PATCH_SYNC_CORE, FDR_PATCH_SYNC_IPI or
 * FDR_PATCH_SYNC_NONE); see the essay above for what each guarantees.
 */
int fdr_patch_sync(void)
{
	pt_membarrier_register();
	switch (pt_membarrier) {
	case FDR_PATCH_SYNC_CORE:
		if (syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE, 0, 0) == 0)
			return FDR_PATCH_SYNC_CORE;
		break;
	case FDR_PATCH_SYNC_IPI:
		if (syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0)
			return FDR_PATCH_SYNC_IPI;
		break;
	default:
		break;
	}
	return FDR_PATCH_SYNC_NONE;
}

/* @size bytes r-x at @cand exactly, never over a mapping: 1, or 0 (taken) */
static int pt_map_at(uintptr_t cand, size_t size)
{
	void *p = mmap((void *)cand, size, PROT_READ | PROT_EXEC,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);

	if (p == (void *)cand)
		return 1;
	if (p != MAP_FAILED)
		munmap(p, size); /* an old kernel ignoring MAP_FIXED_NOREPLACE */
	return 0;
}

/*
 * fdr_patch_alloc_near()'s first try, by PROCMAP_QUERY: the pages just below
 * the start of the file mapped at @addr, or below its mapping, else the first
 * gap above it (at most 16 mappings
 * further up), within [@lo_lim, @hi_lim]. A few ioctls where the text of
 * /proc/self/maps costs 50 to 180 us; 0 if none is found so (or the kernel
 * has no PROCMAP_QUERY): then the text is read, and the nearest gap taken.
 */
static uintptr_t pt_alloc_query(uintptr_t addr, size_t size, uintptr_t lo_lim, uintptr_t hi_lim)
{
	struct fdr_procmap_query q;
	uintptr_t end, got = 0;
	int fd = fdr_patch_maps_fd();
	int i, r;

	if (fd < 0)
		return 0;
	if (fdr_procmap_query(fd, addr, 0, NULL, 0, &q) < 0)
		goto out;
	/*
	 * The code of a file is mostly mapped after its first pages (the
	 * headers and read-only data: an r-- mapping right below the r-x one),
	 * so the pages below the mapping are taken; below the file's start
	 * (mapped at start - file offset, as the dynamic linker lays a file
	 * out) is free more often than not (a PIE program's: ASLR's gap). Tried
	 * first: one mmap() where the walk up takes a query per mapping. Then
	 * the pages just below the mapping (a file whose code is its first
	 * mapping), then the walk up.
	 */
	if (q.inode && q.vma_offset && q.vma_offset < q.vma_start) {
		uintptr_t base = (uintptr_t)(q.vma_start - q.vma_offset); /* both page-aligned */

		if (base >= lo_lim + size && base - size <= hi_lim &&
		    pt_map_at(base - size, size)) {
			got = base - size;
			goto out;
		}
	}
	if (q.vma_start >= lo_lim + size && q.vma_start - size <= hi_lim &&
	    pt_map_at((uintptr_t)q.vma_start - size, size)) {
		got = (uintptr_t)q.vma_start - size;
		goto out;
	}
	end = (uintptr_t)q.vma_end;
	for (i = 0; i < 16 && end >= lo_lim && end <= hi_lim; i++) {
		r = fdr_procmap_query(fd, end, FDR_PMQ_NEXT, NULL, 0, &q);
		if (r == -ENOTTY)
			break;
		/* a gap of @size at end (none above it: the rest of the address space) */
		if ((r == -ENOENT || (q.vma_start >= end && q.vma_start - end >= size)) &&
		    pt_map_at(end, size)) {
			got = end;
			break;
		}
		if (r == -ENOENT)
			break;
		end = (uintptr_t)q.vma_end;
	}
out:
	fdr_patch_maps_put(fd);
	return got;
}

/**
 * fdr_patch_alloc_near - map @size bytes PROT_READ|PROT_EXEC as close as possible to @addr
 * @addr: the code the pages must reach with a rel32/disp32
 * @size: a multiple of the page size
 *
 * The pages are anonymous, private and zero; write them with fdr_patch_write().
 * Returns: the address, or 0 if nothing within ±2 GiB of @addr is free.
 */
uintptr_t fdr_patch_alloc_near(uintptr_t addr, size_t size)
{
	const uintptr_t reach = (uintptr_t)1 << 31;
	uintptr_t lo_lim = addr > reach ? addr - reach + size : 0x10000;
	uintptr_t hi_lim = addr + reach - size;
	uintptr_t prev_end = 0x10000, best = 0, best_dist = UINTPTR_MAX;
	char line[512];
	FILE *f;
	int tries;

	best = pt_alloc_query(addr, size, lo_lim, hi_lim);
	if (best)
		return best;
	for (tries = 0; tries < 8; tries++) {
		f = fopen("/proc/self/maps", "re");
		if (!f)
			return 0;
		best = 0;
		best_dist = UINTPTR_MAX;
		prev_end = 0x10000;
		for (;;) {
			unsigned long lo = 0, hi = 0;
			int last = !fgets(line, sizeof(line), f);

			if (!last && sscanf(line, "%lx-%lx", &lo, &hi) != 2)
				continue;
			if (last)
				lo = 0x7ffffffff000ul; /* end of the user address space */
			/* the free gap [prev_end, lo): the page in it nearest to addr */
			if (lo > prev_end && lo - prev_end >= size) {
				uintptr_t cand = addr < prev_end  ? prev_end :
						 addr + size > lo ? lo - size :
								    addr;
				uintptr_t dist = cand > addr ? cand - addr : addr - cand;

				cand &= ~(uintptr_t)(sysconf(_SC_PAGESIZE) - 1);
				if (cand >= prev_end && cand >= lo_lim && cand <= hi_lim &&
				    dist < best_dist) {
					best = cand;
					best_dist = dist;
				}
			}
			if (last)
				break;
			if (hi > prev_end)
				prev_end = hi;
		}
		fclose(f);
		if (!best)
			return 0;
		void *p = mmap((void *)best, size, PROT_READ | PROT_EXEC,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
		if (p == (void *)best)
			return best;
		if (p != MAP_FAILED)
			munmap(p, size); /* an old kernel ignoring MAP_FIXED_NOREPLACE */
		/* EEXIST: another thread mapped it meanwhile; read the map again */
	}
	return 0;
}

/*
 * fdr_proc_read - the start of a /proc file, in one read()
 * @path: the file (a /proc file's text is made at the read: one is enough)
 * @buf, @size: where; the text is NUL-terminated, at most @size - 1 bytes
 *
 * Returns its length, > 0; -1 if it cannot be opened or read, or is empty.
 * Async-signal-safe.
 */
ssize_t fdr_proc_read(const char *path, char *buf, size_t size)
{
	ssize_t len;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	len = read(fd, buf, size - 1);
	close(fd);
	if (len <= 0)
		return -1;
	buf[len] = 0;
	return len;
}
