// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * agent.c - the probe agent: arms, in this process, the probe locations of the
 * session's probes file (struct fdr_abi_probes, written by uprobe_events).
 *
 * libfdr's agent thread calls fdr_probe_agent_sync() (found with dlsym: libfdr
 * never links this library) at every control change and at least once a
 * second, and with NULL when the process detached. A sync:
 *
 *   0. returns at once if neither control.gen nor the dynamic linker's counts
 *      of objects loaded and unloaded (dl_iterate_phdr) moved since the last
 *      full sync, and disarms everything if no slot is live;
 *   1. maps the session's "probes" file (fdr_session_probes(), once per session);
 *   2. for each LIVE slot (below the file's slots_bound), on a private copy
 *      checked by fdr_shm_check_probe_slot() (state and gen read again after
 *      the copy, the fetch program by fdr_fetch_check()), whose event
 *      (control.events[event_slot], the id it had when defined) is enabled or
 *      has triggers in some instance: each executable mapping of the slot's
 *      (dev, ino) that holds its offset gives an address, start + offset -
 *      file offset; that is a location wanted. The mappings: first the fast
 *      way (pa_fast_maps(): the dynamic linker's objects of the same name,
 *      each address checked by one PROCMAP_QUERY ioctl); else, and after the
 *      arms of step 3 in any case, for files mapped by other means, every file
 *      mapping of /proc/self/maps (PROCMAP_QUERY, else the text). A
 *      definition alone reads nothing;
 *   3. disarms the armed locations that are no longer wanted (slot freed or
 *      changed, event disabled everywhere, file unmapped; where an object was
 *      unloaded, first forgets those whose text went, fdr_probe_forget(),
 *      without writing into the page now there), then arms the new
 *      ones: the function holding the offset from the file's symbols
 *      (elf-func.c), fdr_probe_check(), the slot's SDT semaphore (its
 *      ref_ctr_offset, in a writable mapping of the same file) + 1, then
 *      fdr_probe_arm(); a disarm takes the 1 away again. A refusal is told to
 *      the top instance's error_log once per slot generation, with the engine's
 *      message.
 *
 * A hit (pa_hit(), in the SIGTRAP handler: async-signal-safe) adds 1 to the
 * slot's hits, runs the checked program into a record on the stack and hands
 * it to libfdr's fdr_event_commit_slot(), the path static events take
 * (filters, triggers, pid lists, every instance it is enabled in). A record no
 * ring took (full in discard mode, nesting) adds 1 to the slot's misses, as
 * do the hits the engine saw nested in another handler (added at each sync).
 *
 * Return probes (FDR_PROBE_F_RETURN) are armed with FDR_PROBE_ARM_RETURN on
 * the function's first instruction (an offset inside the function is refused:
 * only there is the return address at %sp); pa_hit() then runs at the return,
 * with the return's registers, and the fetch program (FDR_FETCH_F_RETURN, which
 * must agree with the slot's flag) writes __probe_func and __probe_ret_ip.
 *
 * Before the first new location of a sync is armed, the blocked signals of
 * every thread are read (/proc/self/task/TID/stat; a thread read within the
 * last second is not read again): a thread that keeps SIGTRAP blocked would be
 * killed by a hit, and this library's pthread_sigmask() cannot have kept it
 * open if the mask came first (fdr attach) or the library was dlopen()ed. The
 * locations then wait, with a line in error_log, until no thread blocks it.
 * Where the library was linked or preloaded (its sigprocmask() and
 * pthread_sigmask() the program's since it had one thread) the check is not
 * made: no mask set through libc can block SIGTRAP there (pa_masks_ours).
 *
 * One /proc/self/maps serves every PROCMAP_QUERY of a sync (patch.c's
 * fdr_patch_maps_hold()), and FDR_PROBE_ARM_TRACE=1 times each step of a sync
 * that arms (pa_trace_flush()).
 *
 * fdr attach and fdr detach (cli/attach.c) call fdr_probe_attach() and
 * fdr_probe_detach() from code they inject into the process (probes.md,
 * "fdr attach").
 *
 * After fork the child has the int3s (copy-on-write pages), the engine's
 * tables and these ones: libfdr restarts its agent in the child, whose syncs
 * carry on from the parent's state; the locks are made anew (pthread_atfork).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/rseq.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "core/core-local.h"
#include "core/rseq.h"
#include "engine.h"
#include "fetch.h"
#include "probe-agent.h"
#include "probe-local.h"
#include "record.h"
#include "reloc.h"

#ifdef FDR_HIT_NOVEC
#define PA_ARM_NOVEC FDR_PROBE_ARM_NOVEC /* pa_hit() touches no vector register */
#else
#define PA_ARM_NOVEC 0u
#endif
#define PA_MAX_LOCS 1024 /* armed locations per process */
#define PA_MAX_MAPS 4096 /* executable file mappings looked at */

/* What a hit needs (record.h); freed only after fdr_probe_disarm() returned. */
struct pa_arg {
	struct fdr_probe_rec rec; /* first: the engine's inline hit takes it as the argument */
	size_t prog_len;
	_Alignas(8) unsigned char prog[]; /* checked copy of the slot's program */
};

struct pa_loc {
	int used;
	uint32_t slot;
	uint32_t gen;
	int wanted; /* during a sync */
	uintptr_t addr;
	struct fdr_probe_site *site;
	struct pa_arg *arg;
	uint64_t misses_seen; /* the engine's nested misses already added to the slot */
	uint16_t *sem; /* the SDT semaphore this location added 1 to, or NULL */
	int opt_counted; /* 1: counted in the slot's optimized (jump form) */
	char opt_why[96]; /* why fdr_probe_optimize() refused (debuggers, core dumps) */
	uintptr_t opt_func; /* to optimise at the end of the sync (pa_optimize_pending()) */
	size_t opt_len; /* its function's length; 0: nothing pending */
};

struct pa_map {
	uintptr_t start, end;
	uint64_t off, dev, ino;
	int exec; /* r-x text; else a private writable mapping (SDT semaphores) */
	char path[256];
};

static pthread_mutex_t pa_lock = PTHREAD_MUTEX_INITIALIZER;
static struct pa_loc pa_locs[PA_MAX_LOCS];
static unsigned int pa_nlocs; /* pa_locs[pa_nlocs..] were never used (pa_lock) */
static struct fdr_session *pa_sess; /* the session the mapping below is of */
static struct fdr_abi_probes *pa_probes; /* pa_sess's, fdr_session_probes() */
static uint32_t pa_reported[FDR_MAX_PROBES]; /* gen + 1 of the slot last reported */
static uint32_t pa_sem_missed[FDR_MAX_PROBES]; /* gen + 1: its semaphore was not mapped */
/* options/probe_optimize as last applied (pa_lock); -1: not yet read */
static int pa_optimize = -1;
/* fdr attach's entries (pa_lock): 0 never called, 1 attached, 2 detached */
static int pa_attach_state;

/*
 * The dynamic linker's counts of objects loaded and unloaded (dl_iterate_phdr's
 * dlpi_adds, dlpi_subs): a periodic sync with no control change reads
 * /proc/self/maps again only if they moved.
 */
struct pa_dl {
	unsigned long long adds, subs;
};
static struct pa_dl pa_dl; /* at the last full sync (pa_lock) */
static uint32_t pa_ctl_gen; /* control gen at the last full sync (pa_lock) */
static int pa_seen_ctl; /* pa_dl and pa_ctl_gen are valid (pa_lock) */

/*
 * FDR_PROBE_ARM_TRACE=1: the steps of a sync that armed something, each
 * timed (CLOCK_MONOTONIC) by FDR_PROBE_TRACE() (probe-local.h), told on
 * stderr at the end of the sync: "fdr-probe: arm trace: pid P at T us: STEP
 * +US ...", each step's time since the mark before it, the first since the
 * sync began (T, on the clock bench-uprobes prints its t0 on).
 */
#define PA_TRACE_MAX 48
int fdr_probe_trace_on;
static struct {
	const char *step;
	uint64_t ns;
	long faults; /* the thread's page faults so far (getrusage) */
} pa_trace[PA_TRACE_MAX];
static unsigned int pa_ntrace; /* pa_lock (the engine's marks: under it too, in a sync) */
static int pa_trace_armed; /* this sync armed a location */

void fdr_probe_trace_mark(const char *step)
{
	struct timespec ts;
	struct rusage ru;

	if (pa_ntrace >= PA_TRACE_MAX)
		return;
	if (getrusage(RUSAGE_THREAD, &ru))
		ru.ru_minflt = ru.ru_majflt = 0;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	pa_trace[pa_ntrace].faults = ru.ru_minflt + ru.ru_majflt;
	pa_trace[pa_ntrace].step = step;
	pa_trace[pa_ntrace].ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	pa_ntrace++;
}

/* The sync's marks on stderr (one write), if it armed something; then none. */
static void pa_trace_flush(void)
{
	char buf[64 * PA_TRACE_MAX];
	size_t len;
	unsigned int k;

	if (!fdr_probe_trace_on)
		return;
	if (pa_trace_armed && pa_ntrace > 1) {
		/* integers: this file is built without vector registers (pa_hit()) */
		len = (size_t)snprintf(buf, sizeof(buf),
				       "fdr-probe: arm trace: pid %d at %llu.%llu us:",
				       (int)getpid(), (unsigned long long)(pa_trace[0].ns / 1000),
				       (unsigned long long)(pa_trace[0].ns % 1000 / 100));
		for (k = 1; k < pa_ntrace && len < sizeof(buf); k++) {
			uint64_t d = pa_trace[k].ns - pa_trace[k - 1].ns;
			long f = pa_trace[k].faults - pa_trace[k - 1].faults;

			len += (size_t)snprintf(buf + len, sizeof(buf) - len, " %s +%llu.%llu",
						pa_trace[k].step, (unsigned long long)(d / 1000),
						(unsigned long long)(d % 1000 / 100));
			if (f > 0 && len < sizeof(buf))
				len += (size_t)snprintf(buf + len, sizeof(buf) - len, "/%ldf", f);
		}
		if (len < sizeof(buf))
			len += (size_t)snprintf(buf + len, sizeof(buf) - len, "\n");
		if (len > sizeof(buf))
			len = sizeof(buf);
		(void)!write(2, buf, len);
	}
	pa_ntrace = 0;
	pa_trace_armed = 0;
}

/* ---- the hit ------------------------------------------------------------------------------- */

long fdr_probe_rec_rseq_off; /* record.h */

/* glibc's rseq area, if it registered one for every thread (glibc 2.35 and later) */
static void pa_rseq_init(void)
{
	if (__rseq_size >= 20 && __rseq_offset != 0)
		fdr_probe_rec_rseq_off = (long)__rseq_offset;
}

/* pa_hit() with the interpreter: a record of up to FDR_MAX_RECORD bytes */
static __attribute__((noinline)) int pa_hit_prog(const struct fdr_probe_regs *regs,
						 const struct pa_arg *a)
{
	/* 16 bytes of headroom (the record header) and 8 of tailroom: fdr_event_commit_slot() */
	unsigned char raw[16 + FDR_MAX_RECORD + 8] __attribute__((aligned(8)));
	int len = fdr_fetch_run((const struct fdr_fetch_prog *)a->prog, regs, raw + 16,
				FDR_MAX_RECORD);
	int k;

	if (len < 0)
		return len;
	for (k = len; k & 7; k++) { /* the padding (event-nv.c) */
		raw[16 + k] = 0;
		__asm__("" ::: "memory"); /* not a memset() call (clang): a hit calls no libc */
	}
	return fdr_event_commit_slot_nv(a->rec.event_slot, a->rec.event_id, raw + 16, (size_t)len);
}

/*
 * Armed with FDR_PROBE_ARM_NOVEC where the build has FDR_HIT_NOVEC: this file
 * is then compiled with -mgeneral-regs-only, and pa_hit() calls only fetch.c's
 * run path and libfdr's fdr_event_commit_slot_nv(), which use no vector
 * register either, so a jump hit needs no vector state saved
 * (docs/design/probes.md, "A hit without the vector state";
 * tests/unit/check-hit-path.py checks the machine code). A program with the
 * table form takes record.h's fdr_probe_rec_fast(), which the engine also
 * runs inline (FDR_PROBE_ARM_RECORD); any other the interpreter.
 */
static void pa_hit(const struct fdr_probe_regs *regs, void *argp)
{
	struct pa_arg *a = argp;

	if (__builtin_expect(a->rec.fast.nr != 0, 1)) {
		fdr_probe_rec_fast(&a->rec, regs);
		return;
	}
	fdr_probe_rec_count(&a->rec);
	if (pa_hit_prog(regs, a) < 0)
		fdr_probe_rec_missed(&a->rec);
}

/* ---- reporting -------------------------------------------------------------------------- */

/* Tell the top instance's error_log, once per slot generation. */
static void pa_report(struct fdr_session *s, uint32_t slot, uint32_t gen, const char *line,
		      const char *what)
{
	char msg[FDR_ERROR_TEXT_LEN];

	if (pa_reported[slot] == gen + 1)
		return;
	snprintf(msg, sizeof(msg), "pid %d: probe not armed: %s", (int)getpid(), what);
	if (fdr_session_lock_ms(s, 100)) {
		pa_seen_ctl = 0; /* busy: the next sync tries again */
		return;
	}
	fdr_session_error(s, 0, "trace_uprobe", msg, line, -1);
	fdr_session_unlock(s);
	pa_reported[slot] = gen + 1;
}

/* ---- the probes file and the mappings ------------------------------------------------------- */

/*
 * Map @s's probes file (fdr_session_probes(): the mapping is the session's,
 * kept until it is closed, its header checked); 0 or a negative errno. A file
 * not (yet) whole is looked at again at the next sync. Each page of its
 * per-CPU hit rows (2 KiB a CPU) is read once then: a process's first hits
 * each wrote one into place (a page fault in the first hit on each pair of
 * CPUs, in the first record's time: 2 of bench-uprobes arm's); a read maps
 * several at a time and, the file being shared memory, writable.
 */
static int pa_map_probes(struct fdr_session *s)
{
	const char *rows;
	uint32_t ncpus;
	size_t len, off;
	int ret;

	if (pa_probes)
		return 0;
	ret = fdr_session_probes(s, &pa_probes);
	if (ret < 0)
		return ret;
	rows = (const char *)fdr_probe_hit_rows(pa_probes, &ncpus);
	len = (size_t)ncpus * FDR_MAX_PROBES * sizeof(uint64_t);
	for (off = 0; off < len; off += 4096)
		(void)__atomic_load_n(rows + off, __ATOMIC_RELAXED);
	if (len)
		(void)__atomic_load_n(rows + len - 1, __ATOMIC_RELAXED);
	return 0;
}

/*
 * One pass of pa_query_maps(): the file mappings with the permissions @flags
 * asks for (the kernel skips the others), appended to @maps from @n; the new
 * count, or -1 if the kernel has no such ioctl.
 */
static int pa_query_pass(int fd, uint64_t flags, struct pa_map *maps, int n, int max)
{
	uint64_t addr = 0;

	while (n < max) {
		struct fdr_procmap_query q;
		int r;

		/* a path of 256 bytes or more is kept empty: its open() fails (reported) */
		r = fdr_procmap_query(fd, addr, FDR_PMQ_NEXT | FDR_PMQ_FILE | flags, maps[n].path,
				      sizeof(maps[n].path), &q);
		/* ENOENT: no more; anything else (ENOTTY before 6.11): the text instead */
		if (r < 0)
			return r == -ENOENT ? n : -1;
		if (q.vma_end <= addr)
			return -1; /* never: the kernel answers a mapping at or past addr */
		addr = q.vma_end;
		if (!q.inode)
			continue;
		/* the writable pass: private ones only, and not those the exec pass took */
		if (!(flags & FDR_PMQ_EXEC) && (q.vma_flags & (FDR_PMQ_SHARED | FDR_PMQ_EXEC)))
			continue;
		maps[n].exec = (q.vma_flags & FDR_PMQ_EXEC) != 0;
		maps[n].start = (uintptr_t)q.vma_start;
		maps[n].end = (uintptr_t)q.vma_end;
		maps[n].off = q.vma_offset;
		maps[n].dev = makedev(q.dev_major, q.dev_minor);
		maps[n].ino = q.inode;
		maps[n].path[sizeof(maps[n].path) - 1] = 0;
		n++;
	}
	return n;
}

/*
 * pa_read_maps() by PROCMAP_QUERY on @fd: the executable file mappings, then,
 * if @writable, the writable ones (two passes ask the kernel for fewer
 * mappings than one over every file mapping); how many, or -1 if the kernel
 * has no such ioctl.
 */
static int pa_query_maps(int fd, struct pa_map *maps, int max, int writable)
{
	int n = pa_query_pass(fd, FDR_PMQ_EXEC, maps, 0, max);

	return n < 0 || !writable ? n : pa_query_pass(fd, FDR_PMQ_WRITE, maps, n, max);
}

/*
 * The executable file mappings of this process, and the private writable ones
 * (where an SDT semaphore lives: with @writable, or where the text is read);
 * how many (at most @max). By PROCMAP_QUERY,
 * else from the text; FDR_PROBE_MAPS=text forces the text (the tests run the
 * agent both ways).
 */
static int pa_read_maps(struct pa_map *maps, int max, int writable)
{
	const char *how = getenv("FDR_PROBE_MAPS");
	char line[4096 + 256];
	FILE *f;
	int n = -1, fd;

	if (!(how && !strcmp(how, "text"))) {
		fd = fdr_patch_maps_fd(); /* the sync's own (patch.c) */
		if (fd < 0)
			return 0;
		n = pa_query_maps(fd, maps, max, writable);
		fdr_patch_maps_put(fd);
	}
	if (n >= 0)
		return n;
	n = 0;
	f = fopen("/proc/self/maps", "re");
	if (!f)
		return 0;
	while (n < max && fgets(line, sizeof(line), f)) {
		const char *sp = strchr(line, ' ');
		unsigned long start, end, off, ino;
		unsigned int maj, min;
		char perms[8];
		int pos = 0;

		/* "START-END PERMS ...": most mappings are of neither kind, skipped unparsed */
		if (!sp || strnlen(sp, 5) < 5 || (sp[3] != 'x' && (sp[2] != 'w' || sp[4] != 'p')))
			continue;
		if (sscanf(line, "%lx-%lx %7s %lx %x:%x %lu %n", &start, &end, perms, &off, &maj,
			   &min, &ino, &pos) < 7 ||
		    !ino || (perms[2] != 'x' && (perms[1] != 'w' || perms[3] != 'p')))
			continue;
		maps[n].exec = perms[2] == 'x';
		maps[n].start = start;
		maps[n].end = end;
		maps[n].off = off;
		maps[n].dev = makedev(maj, min);
		maps[n].ino = ino;
		snprintf(maps[n].path, sizeof(maps[n].path), "%.*s", (int)strcspn(line + pos, "\n"),
			 line + pos);
		n++;
	}
	fclose(f);
	return n;
}

static int pa_dl_count(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct pa_dl *d = arg;

	if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof(info->dlpi_subs)) {
		d->adds = info->dlpi_adds;
		d->subs = info->dlpi_subs;
	}
	return 1; /* the counts are the same in every entry: the first is enough */
}

/* Where @m maps slot @c's file offset: 1 and *@addr, or 0 (another file, or outside) */
static int pa_map_addr(const struct pa_map *m, const struct fdr_abi_probe_slot *c, uintptr_t *addr)
{
	if (!m->exec || m->dev != c->dev || m->ino != c->ino || c->offset < m->off ||
	    c->offset - m->off >= m->end - m->start)
		return 0;
	*addr = m->start + (uintptr_t)(c->offset - m->off);
	return 1;
}

/*
 * The fast way to the mappings a sync needs, without walking every mapping of
 * the process: the objects the dynamic linker loaded (dl_iterate_phdr(), in
 * memory) whose name ends as the slot's path does (the program itself has no
 * name there: always looked at) give, from their executable PT_LOAD segment
 * holding the slot's file offset, an address; one PROCMAP_QUERY on it says
 * which mapping is really there, and only a mapping of the slot's (dev, ino)
 * is kept. Cold, a walk of every file mapping costs the first arm 80 to 170
 * us (a dozen ioctls in bench-uprobes' process), this one or two.
 */
struct pa_fast {
	struct fdr_abi_probe_slot *const *pend;
	uint32_t bound;
	struct pa_map *maps;
	int n, max, fd, failed;
};

/* Keep the mapping at @addr if it maps slot @c's file there (see above). */
static void pa_fast_verify(struct pa_fast *f, uintptr_t addr, const struct fdr_abi_probe_slot *c)
{
	struct fdr_procmap_query q;
	struct pa_map *m;
	int j, r;

	for (j = 0; j < f->n; j++)
		if (addr >= f->maps[j].start && addr < f->maps[j].end)
			return; /* known already */
	if (f->n >= f->max) {
		f->failed = 1;
		return;
	}
	m = &f->maps[f->n];
	r = fdr_procmap_query(f->fd, addr, FDR_PMQ_FILE | FDR_PMQ_EXEC, m->path, sizeof(m->path),
			      &q);
	if (r < 0) {
		/* ENOENT: no such mapping there (another file, or gone); else no PROCMAP_QUERY */
		if (r != -ENOENT)
			f->failed = 1;
		return;
	}
	if (q.vma_start > addr || q.vma_end <= addr || q.inode != c->ino ||
	    (uint64_t)makedev(q.dev_major, q.dev_minor) != c->dev)
		return;
	m->exec = 1;
	m->start = (uintptr_t)q.vma_start;
	m->end = (uintptr_t)q.vma_end;
	m->off = q.vma_offset;
	m->dev = c->dev;
	m->ino = c->ino;
	m->path[sizeof(m->path) - 1] = 0;
	f->n++;
}

static const char *pa_base(const char *path)
{
	const char *b = strrchr(path, '/');

	return b ? b + 1 : path;
}

static int pa_fast_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct pa_fast *f = arg;
	const char *name = info->dlpi_name ? info->dlpi_name : "";
	uint32_t i;
	int k;

	(void)size;
	for (i = 0; i < f->bound && !f->failed; i++) {
		const struct fdr_abi_probe_slot *c = f->pend[i];

		if (!c || (name[0] && strcmp(pa_base(name), pa_base(c->path))))
			continue;
		for (k = 0; k < info->dlpi_phnum && !f->failed; k++) {
			const ElfW(Phdr) *ph = &info->dlpi_phdr[k];

			if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X) ||
			    c->offset < ph->p_offset || c->offset - ph->p_offset >= ph->p_filesz)
				continue;
			pa_fast_verify(f,
				       (uintptr_t)(info->dlpi_addr + ph->p_vaddr +
						   (c->offset - ph->p_offset)),
				       c);
		}
	}
	return f->failed;
}

/*
 * The mappings of the live slots @pend (@bound of them) the fast way; how
 * many, or -1 where only a walk of every mapping will do: a slot with an SDT
 * semaphore (@sems: the writable mappings are wanted too), a slot none of
 * whose mappings was found so, a location armed where no mapping found so
 * is (a file mapped by other means than the dynamic linker), no
 * PROCMAP_QUERY, or FDR_PROBE_MAPS set (the tests' choice of a way).
 */
static int pa_fast_maps(struct fdr_abi_probe_slot *const *pend, uint32_t bound, int sems,
			struct pa_map *maps, int max)
{
	struct pa_fast f = { pend, bound, maps, 0, max, -1, 0 };
	uint32_t i;
	unsigned int k;
	int j;

	if (sems || getenv("FDR_PROBE_MAPS"))
		return -1;
	f.fd = fdr_patch_maps_fd();
	if (f.fd < 0)
		return -1;
	dl_iterate_phdr(pa_fast_object, &f);
	fdr_patch_maps_put(f.fd);
	if (f.failed)
		return -1;
	for (i = 0; i < bound; i++) {
		uintptr_t a;

		if (!pend[i])
			continue;
		for (j = 0; j < f.n && !pa_map_addr(&maps[j], pend[i], &a); j++)
			;
		if (j == f.n)
			return -1;
	}
	for (k = 0; k < pa_nlocs; k++) {
		const struct pa_loc *l = &pa_locs[k];
		uintptr_t a = 0;

		if (!l->used || l->slot >= bound || !pend[l->slot] || pend[l->slot]->gen != l->gen)
			continue;
		for (j = 0; j < f.n && !(pa_map_addr(&maps[j], pend[l->slot], &a) && a == l->addr);
		     j++)
			;
		if (j == f.n)
			return -1;
	}
	return f.n;
}

/* ---- arming and disarming ----------------------------------------------------------------- */

/*
 * uprobe_profile's "[OPTIMIZED N]": @l counted (1) or not (0) in its slot's
 * optimized, the locations in jump form of all processes (pa_lock held). Only
 * while the slot is still the definition @l armed (its gen): a slot defined
 * afresh starts at 0. A gauge, not a log: a process killed (or ended by
 * _exit()) while its probes are jump probes leaves its 1s there until the slot
 * is defined again; a normal exit takes them out (pa_opt_exit()).
 */
static void pa_opt_count(struct pa_loc *l, int on)
{
	struct fdr_abi_probe_slot *sl;
	uint32_t v;

	if (!pa_probes || !l->arg || on == l->opt_counted)
		return;
	sl = l->arg->rec.shm;
	l->opt_counted = on;
	if (__atomic_load_n(&sl->gen, __ATOMIC_ACQUIRE) != l->gen)
		return;
	if (on) {
		__atomic_fetch_add(&sl->optimized, 1, __ATOMIC_RELAXED);
		return;
	}
	v = __atomic_load_n(&sl->optimized, __ATOMIC_RELAXED);
	while (v && !__atomic_compare_exchange_n(&sl->optimized, &v, v - 1, 0, __ATOMIC_RELAXED,
						 __ATOMIC_RELAXED))
		;
}

/*
 * A process that exits normally (exit(), main's return) takes its jump probes
 * out of the counts: its text goes, and with it its jmps. A sync in progress
 * (the agent's, after a control change: its optimisation may take
 * milliseconds, more under a sanitizer) is waited for, up to PA_EXIT_WAIT_MS:
 * skipped at once, as it was, an exit during one left the process's 1s in the
 * counts (likely what integration/probe-agent's optimized_record saw once in
 * an ASan build: "[OPTIMIZED 2]" after the case before it, whose target exits
 * just after a control change). Past the wait (an exit from inside a sync:
 * this thread holds the lock) it is skipped; _exit() and a kill leave them.
 */
#define PA_EXIT_WAIT_MS 200

__attribute__((destructor)) static void pa_opt_exit(void)
{
	struct timespec until = fdr_deadline_ms(PA_EXIT_WAIT_MS);
	unsigned int k;

	if (pthread_mutex_timedlock(&pa_lock, &until))
		return;
	for (k = 0; k < pa_nlocs; k++)
		if (pa_locs[k].used)
			pa_opt_count(&pa_locs[k], 0);
	pthread_mutex_unlock(&pa_lock);
}

/* Every location's count as the engine has it now (a switch, a probe joining a window) */
static void pa_opt_recount(void)
{
	unsigned int k;

	for (k = 0; k < pa_nlocs; k++)
		if (pa_locs[k].used)
			pa_opt_count(&pa_locs[k], fdr_probe_site_optimized(pa_locs[k].site));
}

/*
 * Disarm @l (pa_lock held). A location whose library was unloaded (its text
 * unmapped, or mapped afresh: the same file or another one loaded at that
 * address) is forgotten without a write: writing the byte back would fail, or
 * corrupt the new code. Either way the engine's handler is done with l->arg.
 */
static void pa_disarm(struct pa_loc *l)
{
	pa_opt_count(l, 0);
	if (fdr_probe_forget(l->site) == -EBUSY) {
		(void)fdr_probe_disarm(l->site);
		/* the object is still loaded (its text still ours): so is its semaphore */
		if (l->sem)
			__atomic_fetch_sub(l->sem, 1, __ATOMIC_RELAXED);
	}
	free(l->arg);
	memset(l, 0, sizeof(*l));
}

/* Add the hits the engine saw nested in another handler to the slot (hits and misses). */
static void pa_count_nested(struct pa_loc *l)
{
	uint64_t m = fdr_probe_site_misses(l->site);

	if (m > l->misses_seen && pa_probes) {
		__atomic_fetch_add(&l->arg->rec.shm->hits, m - l->misses_seen, __ATOMIC_RELAXED);
		__atomic_fetch_add(&l->arg->rec.shm->misses, m - l->misses_seen, __ATOMIC_RELAXED);
	}
	l->misses_seen = m;
}

static void pa_disarm_all(void)
{
	unsigned int i;

	for (i = 0; i < pa_nlocs; i++)
		if (pa_locs[i].used) {
			pa_count_nested(&pa_locs[i]);
			pa_disarm(&pa_locs[i]);
		}
}

/*
 * An object was unloaded since the last sync (pa_lock held): forget the
 * locations whose text went with it, even where the address is mapped again
 * (dlclose() then dlopen() between two syncs: the new page holds no int3). The
 * arm pass then arms what is wanted there anew. Their semaphores went with the
 * object: nothing is written there.
 */
static void pa_forget_unloaded(void)
{
	unsigned int k;

	for (k = 0; k < PA_MAX_LOCS; k++) {
		struct pa_loc *l = &pa_locs[k];

		if (!l->used || fdr_probe_forget(l->site) < 0)
			continue;
		pa_count_nested(l);
		pa_opt_count(l, 0);
		free(l->arg);
		memset(l, 0, sizeof(*l));
	}
}

static struct pa_loc *pa_find(uint32_t slot, uint32_t gen, uintptr_t addr)
{
	unsigned int i;

	for (i = 0; i < pa_nlocs; i++)
		if (pa_locs[i].used && pa_locs[i].slot == slot && pa_locs[i].gen == gen &&
		    pa_locs[i].addr == addr)
			return &pa_locs[i];
	return NULL;
}

/*
 * Slot @c's SDT semaphore in the object mapped by @m: the private writable
 * mapping of the same file whose range holds the 2 bytes at file offset
 * ref_ctr_offset (as the kernel's uprobes find it), the one nearest @m if the
 * file is mapped more than once. NULL if there is none (yet).
 */
static uint16_t *pa_sem_addr(const struct pa_map *maps, int nmaps, const struct pa_map *m,
			     const struct fdr_abi_probe_slot *c)
{
	uint64_t off = c->ref_ctr_offset;
	uintptr_t best = 0, dist = UINTPTR_MAX;
	int j;

	for (j = 0; j < nmaps; j++) {
		const struct pa_map *w = &maps[j];
		uintptr_t d = w->start > m->start ? w->start - m->start : m->start - w->start;

		if (w->exec || w->dev != c->dev || w->ino != c->ino || off < w->off ||
		    off - w->off > w->end - w->start - sizeof(uint16_t) || d >= dist)
			continue;
		best = w->start + (uintptr_t)(off - w->off);
		dist = d;
	}
	return (uint16_t *)best;
}

/*
 * Arm slot @i (copied in @c) at @addr of mapping @m (@maps: all of them, for
 * the semaphore). 0, or a negative errno with @why; -EAGAIN: its semaphore is
 * not mapped (yet).
 */
static int pa_arm(struct fdr_session *s, uint32_t i, const struct fdr_abi_probe_slot *c,
		  const struct pa_map *maps, int nmaps, const struct pa_map *m, uintptr_t addr,
		  char *why, size_t n)
{
	uint64_t vaddr = 0, func = 0, flen = 0;
	struct pa_loc *l = NULL;
	uint16_t *sem = NULL;
	struct pa_arg *a;
	struct stat st;
	unsigned int k;
	int fd, ret;

	for (k = 0; k < PA_MAX_LOCS && !l; k++)
		if (!pa_locs[k].used)
			l = &pa_locs[k];
	if (!l) {
		snprintf(why, n, "more than %u locations armed in this process", PA_MAX_LOCS);
		return -ENOSPC;
	}
	/* the mapped file itself, if it is still the one the slot names */
	fd = open(m->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) || (uint64_t)st.st_dev != c->dev ||
	    (uint64_t)st.st_ino != c->ino) {
		snprintf(why, n, "cannot open %s (the mapped file) to read its symbols", m->path);
		if (fd >= 0)
			close(fd);
		return -ENOENT;
	}
	ret = fdr_elf_func_at(fd, &st, c->offset, &vaddr, &func, &flen);
	close(fd);
	FDR_PROBE_TRACE("elf");
	if (ret < 0) {
		snprintf(why, n, "no function symbol of %s holds offset 0x%llx", m->path,
			 (unsigned long long)c->offset);
		return ret;
	}
	ret = fdr_probe_check(addr - (uintptr_t)(vaddr - func), (size_t)flen, addr, why, n);
	FDR_PROBE_TRACE("check");
	if (ret < 0)
		return ret;
	if ((c->flags & FDR_PROBE_F_RETURN) && vaddr != func) {
		snprintf(why, n,
			 "a return probe must be at a function's first instruction: %s+0x%llx is "
			 "0x%llx bytes into its function",
			 m->path, (unsigned long long)c->offset,
			 (unsigned long long)(vaddr - func));
		return -EINVAL;
	}
	if (c->ref_ctr_offset) {
		sem = c->ref_ctr_offset & 1 ? NULL : pa_sem_addr(maps, nmaps, m, c);
		if (!sem) {
			snprintf(
				why, n,
				c->ref_ctr_offset & 1 ?
					"its reference counter's file offset 0x%llx in %s is odd" :
					"no writable mapping of its reference counter (file offset "
					"0x%llx of %s)",
				(unsigned long long)c->ref_ctr_offset, m->path);
			return c->ref_ctr_offset & 1 ? -EINVAL : -EAGAIN;
		}
	}
	a = malloc(sizeof(*a) + c->prog_len);
	if (!a) {
		snprintf(why, n, "out of memory");
		return -ENOMEM;
	}
	a->rec.event_slot = c->event_slot;
	a->rec.event_id = __atomic_load_n(&s->ctl->events[c->event_slot].id, __ATOMIC_RELAXED);
	a->rec.shm = &pa_probes->probes[i];
	a->rec.hits = fdr_probe_hit_rows(pa_probes, &a->rec.hit_cpus) + i;
	a->prog_len = c->prog_len;
	memcpy(a->prog, c->prog, c->prog_len);
	fdr_fetch_fast_make((const struct fdr_fetch_prog *)a->prog, &a->rec.fast);
	/* the SDT semaphore first, as the kernel does: the program runs its probe site */
	if (sem)
		__atomic_fetch_add(sem, 1, __ATOMIC_RELAXED);
	ret = fdr_probe_arm_flags(
		addr,
		(c->flags & FDR_PROBE_F_RETURN ? FDR_PROBE_ARM_RETURN : 0) | PA_ARM_NOVEC |
			FDR_PROBE_ARM_NOCOUNT | /* pa_hit() counts in the probes file */
			(a->rec.fast.nr ? FDR_PROBE_ARM_RECORD : 0),
		pa_hit, a, &l->site);
	FDR_PROBE_TRACE("arm");
	if (ret < 0) {
		if (sem)
			__atomic_fetch_sub(sem, 1, __ATOMIC_RELAXED);
		free(a);
		snprintf(why, n, "%s at 0x%lx (%s+0x%llx)",
			 ret == -EBUSY	? "4 probes are armed there already" :
			 ret == -EPERM	? "the page is writable and executable" :
			 ret == -EFAULT ? "not in an executable mapping" :
					  strerror(-ret),
			 (unsigned long)addr, m->path, (unsigned long long)c->offset);
		return ret;
	}
	l->used = 1;
	if (pa_nlocs <= (unsigned int)(l - pa_locs))
		pa_nlocs = (unsigned int)(l - pa_locs) + 1;
	l->slot = i;
	l->gen = c->gen;
	l->addr = addr;
	l->arg = a;
	l->wanted = 1;
	l->misses_seen = fdr_probe_site_misses(l->site);
	l->sem = sem;
	pa_trace_armed = 1;
	/*
	 * Best effort: a jmp to a trampoline where the window is safe ("Jump
	 * probes"), once the sync has armed everything (pa_optimize_pending()).
	 * A return probe too: its trampoline hijacks the return address as the
	 * int3 form does.
	 */
	l->opt_func = addr - (uintptr_t)(vaddr - func);
	l->opt_len = (size_t)flen;
	return 0;
}

/*
 * The jump form of the locations this sync armed (pa_lock held). A refusal
 * leaves the int3, which works; its reason stays in opt_why, and
 * uprobe_profile's " [OPTIMIZED N]" counts the jump probes (pa_opt_recount()).
 *
 * Not at once: the int3s work already, and optimising one takes the agent
 * 0.3 to 0.9 ms (the trampoline, a signal to every thread and their answers,
 * two text writes and barriers) that the program's threads, the ones that
 * will run the probe, wait behind on a machine with few CPUs (the agent runs
 * with the shortest slice: event.c). So the agent first yields its CPU once
 * (sched_yield(): at once where nothing else waits for it), as the kernel's
 * kprobe optimiser waits a few jiffies (OPTIMIZE_DELAY) before it replaces
 * breakpoints with jumps. bench-uprobes arm on the 2-vCPU VM (load 4 to 7,
 * 15 runs each, alternating): the first record 151 us after the int3 (median)
 * when optimising at once, 69 us after a yield, 72 us after a 1 ms sleep.
 */
static void pa_optimize_pending(void)
{
	unsigned int k;
	int yielded = 0;

	for (k = 0; k < pa_nlocs; k++) {
		struct pa_loc *l = &pa_locs[k];

		if (!l->used || !l->opt_len)
			continue;
		if (!yielded && fdr_probe_optimize_enabled()) {
			sched_yield();
			yielded = 1;
		}
		(void)fdr_probe_optimize(l->site, l->opt_func, l->opt_len, l->opt_why,
					 sizeof(l->opt_why));
		l->opt_len = 0;
	}
	if (yielded)
		FDR_PROBE_TRACE("optimize");
}

/*
 * options/probe_optimize (the top instance's FDR_OPT_PROBE_OPTIMIZE), the
 * switch of debug.kprobes-optimization: applied with fdr_probe_set_optimize()
 * when it changes. Its first value is applied only if it is off, so that
 * FDR_PROBE_OPTIMIZE=0 in the environment holds until the option is written.
 */
static void pa_apply_optimize(struct fdr_session *s)
{
	int on = !!(__atomic_load_n(&s->ctl->instances[0].options, __ATOMIC_ACQUIRE) &
		    FDR_OPT_PROBE_OPTIMIZE);

	if (on == pa_optimize)
		return;
	if (pa_optimize >= 0 || !on)
		(void)fdr_probe_set_optimize(on);
	pa_optimize = on;
}

/*
 * The check below (pa_sigtrap_blocker()) is made where a thread may have
 * blocked SIGTRAP through libc: where this library's sigprocmask() and
 * pthread_sigmask() are not the program's (dlopen()ed: libfdr's agent, fdr
 * attach), or a thread blocked it before they came. Where they are the
 * program's and no thread blocked SIGTRAP when the library was loaded (linked,
 * or LD_PRELOADed: pa_masks_ours, the check made once by the constructor),
 * every mask set through libc since keeps it open, a new thread starts with
 * its creator's, and the check could only find a mask set with the raw system
 * call, which no check at arm time covers (signal.c: it kills the process on
 * a hit; tested), for 70 to 140 us an arm (the first, in a process with 5
 * threads). FDR_PROBE_SIGBLK_CHECK=1 makes it everywhere (a program whose
 * runtime blocks signals with the raw call in threads that run probed code),
 * =0 nowhere: for runtimes that keep a thread of their own with every signal
 * blocked and never run program code in it, ThreadSanitizer's background
 * thread (the TSan test runs set it).
 */
static int pa_sigblk_check = -1; /* 1 always, 0 never, -1 unless pa_masks_ours */
static int pa_masks_ours;

__attribute__((constructor)) static void pa_sigblk_env(void)
{
	const char *e = getenv("FDR_PROBE_SIGBLK_CHECK");
	const char *t = getenv("FDR_PROBE_ARM_TRACE");

	pa_sigblk_check = !e ? -1 : !strcmp(e, "0") ? 0 : !strcmp(e, "1") ? 1 : -1;
	fdr_probe_trace_on = t && !strcmp(t, "1");
}

/*
 * Whether thread @tid blocks SIGTRAP: 1, 0, or -1 (gone, or unreadable). Its
 * stat in the /proc/self/task directory @dir (field 32, "blocked": the mask of
 * signals 1 to 31, in decimal), in one read(): the same bit as SigBlk of
 * .../status, which is longer for the kernel to make.
 */
static int pa_blocks_sigtrap(int dir, pid_t tid)
{
	char path[32], buf[1024];
	const char *p;
	unsigned long long blk;
	ssize_t n;
	int fd, field;

	snprintf(path, sizeof(path), "%d/stat", (int)tid);
	fd = openat(dir, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	/* "PID (COMM) STATE ...": the name may hold ')' and spaces; field 3 follows the last ')' */
	p = strrchr(buf, ')');
	if (!p)
		return -1;
	for (field = 2; field < 32 && p; field++)
		p = strchr(p + 1, ' ');
	if (!p || sscanf(p, " %llu", &blk) != 1)
		return -1;
	return (blk & (1ull << (SIGTRAP - 1))) != 0;
}

/*
 * The threads last found not blocking SIGTRAP, each with the time it was read
 * (CLOCK_MONOTONIC; pa_lock). A thread read less than PA_SIGOK_TTL_NS ago is
 * not read again: reading every thread's stat cost 70 to 140 us a sync (5
 * threads, cold, on the development VM and the 16-core machine), most of the
 * SIGTRAP check, and a sync that arms one location after another (each
 * definition and enable of a session, fdr attach's) read them all each time.
 * A thread no longer listed leaves the table (its id may come back for
 * another thread: one id reused within the TTL, and missed by the listings
 * in between, is the only way a new thread goes unread).
 *
 * The window this opens: a thread read, which then blocks SIGTRAP (with the
 * raw system call, or with a libc whose pthread_sigmask() is not this
 * library's: fdr attach, a dlopen()ed libfdr-probe), is not seen doing so by
 * the arms of the next second; read every time, it would be, and its first hit
 * on a new location would not kill the process. The probes already armed in
 * that process would kill it all the same: no check made at arm time covers a
 * mask changed after it, so the TTL extends that known window (probes.md,
 * "Sharing signals with the program") by at most a second for new locations.
 * Threads not listed before (new ones) are always read; one found blocking is
 * read again at each check (pa_sigtrap_blocker_stable()).
 */
#define PA_SIGOK_MAX 256
#define PA_SIGOK_TTL_NS 1000000000ull
struct pa_sigok {
	pid_t tid;
	uint64_t ns;
};
static struct pa_sigok pa_sigok[PA_SIGOK_MAX];
static unsigned int pa_nsigok;

static uint64_t pa_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* When @tid was last found not blocking SIGTRAP (pa_sigok), or 0 */
static uint64_t pa_sigok_at(pid_t tid)
{
	unsigned int k;

	for (k = 0; k < pa_nsigok; k++)
		if (pa_sigok[k].tid == tid)
			return pa_sigok[k].ns;
	return 0;
}

/*
 * A thread of this process that blocks SIGTRAP, or 0. libfdr-probe's
 * sigprocmask()/pthread_sigmask() keep SIGTRAP open only for masks set
 * through them: a thread that blocked it before the library was loaded (fdr
 * attach, or libfdr's dlopen() of it) or with the raw system call would be
 * killed by its first hit (the kernel forces a blocked int3 SIGTRAP). The
 * threads are listed with getdents64() on /proc/self/task (no stdio, no
 * 32 KiB buffer), and each one's stat opened relative to it; those read
 * within the last second are not read again (pa_sigok, above).
 */
static pid_t pa_sigtrap_blocker(void)
{
	static struct pa_sigok next[PA_SIGOK_MAX]; /* pa_lock */
	pid_t self = (pid_t)syscall(SYS_gettid), found = 0;
	int dir = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	uint64_t mine = 0, now = pa_mono_ns();
	unsigned int nnext = 0;
	char buf[4096] __attribute__((aligned(8)));
	ssize_t n;

	if (dir < 0)
		return 0;
	/*
	 * this thread's own mask from the kernel, not /proc (fdr attach runs
	 * this in a program's thread); the raw call: the interposed one is ours
	 */
	if (syscall(SYS_rt_sigprocmask, SIG_BLOCK, NULL, &mine, sizeof(mine)) == 0 &&
	    (mine & (1ull << (SIGTRAP - 1))))
		found = self;
	while (!found && (n = getdents64(dir, buf, sizeof(buf))) > 0) {
		ssize_t off = 0;

		while (!found && off < n) {
			const struct dirent64 *e = (const struct dirent64 *)(void *)(buf + off);
			char *end;
			long v;
			uint64_t at;
			pid_t tid;
			int r;

			if (e->d_reclen == 0 || e->d_reclen > n - off)
				break;
			off += e->d_reclen;
			if (e->d_name[0] < '1' || e->d_name[0] > '9')
				continue;
			v = strtol(e->d_name, &end, 10);
			if (*end || v <= 0 || v > INT32_MAX || (pid_t)v == self)
				continue;
			tid = (pid_t)v;
			at = pa_sigok_at(tid);
			if (at && now - at < PA_SIGOK_TTL_NS) {
				r = 0; /* read within the TTL */
			} else {
				r = pa_blocks_sigtrap(dir, tid);
				at = now;
			}
			if (r == 1)
				found = tid;
			else if (r == 0 && nnext < PA_SIGOK_MAX)
				next[nnext++] = (struct pa_sigok){ tid, at };
		}
	}
	close(dir);
	/* the threads listed (up to the one found blocking): the others are gone */
	memcpy(pa_sigok, next, nnext * sizeof(next[0]));
	pa_nsigok = nnext;
	return found;
}

/*
 * A thread that keeps blocking SIGTRAP for 20 ms, or 0: glibc blocks every
 * signal for a moment in a thread being created (pthread_create), and in
 * some of its own functions; only a mask that stays counts.
 */
static pid_t pa_sigtrap_blocker_stable(void)
{
	struct timespec ms = { 0, 1000 * 1000 };
	pid_t t = pa_sigtrap_blocker();
	int i;

	for (i = 0; t && i < 20; i++) {
		nanosleep(&ms, NULL);
		t = pa_sigtrap_blocker();
	}
	return t;
}

/*
 * Copy slot @i into @c and check it: 1 (live, whole, its event enabled
 * somewhere), 0 (nothing to arm), or -EUCLEAN with @why (refused).
 */
static int pa_slot_copy(struct fdr_session *s, uint32_t i, struct fdr_abi_probe_slot *c, char *why,
			size_t n)
{
	const struct fdr_abi_probe_slot *p = &pa_probes->probes[i];
	const struct fdr_abi_event *e;
	const char *fwhy = NULL;
	uint32_t gen;

	if (__atomic_load_n(&p->state, __ATOMIC_ACQUIRE) != FDR_PROBE_SLOT_LIVE)
		return 0;
	gen = __atomic_load_n(&p->gen, __ATOMIC_ACQUIRE);
	memcpy(c, p, sizeof(*c));
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	if (__atomic_load_n(&p->state, __ATOMIC_RELAXED) != FDR_PROBE_SLOT_LIVE ||
	    __atomic_load_n(&p->gen, __ATOMIC_RELAXED) != gen)
		return 0; /* changing: the change's control gen brings another sync */
	c->gen = gen;
	c->line[sizeof(c->line) - 1] = 0;
	if (fdr_shm_check_probe_slot(c, i) < 0) {
		snprintf(why, n, "%s", fdr_shm_error());
		return -EUCLEAN;
	}
	if (fdr_fetch_check((const struct fdr_fetch_prog *)c->prog, c->prog_len, &fwhy) < 0) {
		snprintf(why, n, "slot %u's fetch program: %s", i, fwhy ? fwhy : "refused");
		return -EUCLEAN;
	}
	e = &s->ctl->events[c->event_slot];
	if (__atomic_load_n(&e->state, __ATOMIC_ACQUIRE) != FDR_EVENT_READY ||
	    !fdr_probe_event_armed(s->ctl, c->event_slot))
		return 0;
	if (!(c->flags & FDR_PROBE_F_RETURN) !=
	    !(((const struct fdr_fetch_prog *)c->prog)->flags & FDR_FETCH_F_RETURN)) {
		snprintf(why, n, "slot %u: a return probe flag 0x%x with a program for %s", i,
			 c->flags, c->flags & FDR_PROBE_F_RETURN ? "an entry" : "a return");
		return -EUCLEAN;
	}
	return 1;
}

/*
 * Arm the locations of the live slots @pend (copies, @bound of them) in the
 * mappings @maps that are not armed yet (pa_lock held). *@blocker: -1 until
 * the SIGTRAP check ran (once per sync, before the first new location), then
 * its answer.
 */
static void pa_arm_pass(struct fdr_session *s, struct fdr_abi_probe_slot *const *pend,
			uint32_t bound, const struct pa_map *maps, int nmaps, pid_t *blocker)
{
	char why[FDR_ERROR_TEXT_LEN / 2];
	uint32_t i;
	int j, ret;

	for (i = 0; i < bound; i++) {
		const struct fdr_abi_probe_slot *c = pend[i];

		if (!c)
			continue;
		for (j = 0; j < nmaps; j++) {
			uintptr_t addr;

			if (!pa_map_addr(&maps[j], c, &addr))
				continue;
			if (pa_find(i, c->gen, addr))
				continue;
			/* no thread may block SIGTRAP */
			if (*blocker < 0)
				*blocker = pa_sigblk_check > 0 ||
							   (pa_sigblk_check < 0 && !pa_masks_ours) ?
						   pa_sigtrap_blocker_stable() :
						   0;
			FDR_PROBE_TRACE("sigtrap");
			if (*blocker > 0) {
				snprintf(why, sizeof(why),
					 "thread %d blocks SIGTRAP (its mask was set before "
					 "libfdr-probe was loaded, or with the raw system call): "
					 "a hit there would kill the process",
					 (int)*blocker);
				pa_report(s, i, c->gen, c->line, why);
				pa_seen_ctl = 0; /* looked at again at the next sync */
				break;
			}
			ret = pa_arm(s, i, c, maps, nmaps, &maps[j], addr, why, sizeof(why));
			/*
			 * A semaphore not mapped: perhaps a dlopen() under way (its
			 * text mapped, its data not yet). The next sync looks again;
			 * told only if it is still missing then.
			 */
			if (ret == -EAGAIN) {
				pa_seen_ctl = 0;
				if (pa_sem_missed[i] != c->gen + 1) {
					pa_sem_missed[i] = c->gen + 1;
					continue;
				}
			}
			if (ret < 0)
				pa_report(s, i, c->gen, c->line, why);
		}
	}
}

/*
 * The process's first sync (pa_lock held): what arming touches first, touched
 * now, so that the first probe defined later is armed without faulting it in
 * (bench-uprobes arm with FDR_PROBE_ARM_TRACE=1, which counts each step's
 * page faults: 20 in a process's first arm, at 2 to 15 us each on the virtual
 * machines measured; docs/design/probes.md, "Arming in a busy process"): the
 * sync's /proc/self/maps (patch.c keeps it from one sync to the next), the
 * first page of @maps (the mappings a sync finds), the probes file's header
 * and first slots if it exists (a read: the file's pages are allocated
 * already), the engine's list of sites and /proc/self/mem (fdr_probe_warm():
 * one descriptor, which the first text write would open anyway). The agent
 * thread's malloc arena and stack are warmed by libfdr when the thread starts
 * (event.c, ev_agent_warm()).
 */
static void pa_warm(struct pa_map *maps)
{
	int fd = fdr_patch_maps_fd(); /* held: kept for the syncs to come */

	fdr_patch_maps_put(fd);
	memset(maps, 0, sizeof(*maps));
	if (pa_probes)
		(void)__atomic_load_n(&pa_probes->probes[0].state, __ATOMIC_RELAXED);
	fdr_probe_warm();
}

/**
 * fdr_probe_agent_sync - arm and disarm this process's probe locations
 * @s: libfdr's session (attached), or NULL: disarm everything
 *
 * Called by libfdr's agent thread (event.c, ev_probe_round()), never from a
 * signal handler. See the essay at the top.
 */
void fdr_probe_agent_sync(struct fdr_session *s)
{
	static struct pa_map maps[PA_MAX_MAPS]; /* under pa_lock */
	static struct fdr_abi_probe_slot *pend[FDR_MAX_PROBES]; /* copies to arm (pa_lock) */
	static int warmed; /* pa_warm() ran (pa_lock) */
	struct fdr_abi_probe_slot *c;
	char why[FDR_ERROR_TEXT_LEN / 2];
	struct pa_dl dl = { 0, 0 };
	uint32_t i, ctl_gen, bound;
	unsigned int k, nlive = 0;
	int nmaps, j, sems = 0, fast;
	pid_t blocker = -1;

	pthread_mutex_lock(&pa_lock);
	FDR_PROBE_TRACE("sync");
	fdr_patch_maps_hold(1); /* one /proc/self/maps for the sync's queries */
	if (s != pa_sess) {
		pa_disarm_all();
		pa_probes = NULL;
		memset(pa_reported, 0, sizeof(pa_reported));
		memset(pa_sem_missed, 0, sizeof(pa_sem_missed));
		pa_sess = s;
		pa_seen_ctl = 0;
	}
	if (!warmed) {
		if (s)
			(void)pa_map_probes(s);
		pa_warm(maps);
		warmed = 1;
	}
	if (!s || pa_map_probes(s) < 0 || !__atomic_load_n(&pa_probes->nr_live, __ATOMIC_ACQUIRE)) {
		pa_disarm_all();
		pa_seen_ctl = 0;
		goto out;
	}
	pa_apply_optimize(s);
	/* nothing changed since the last sync: no control change, no object loaded or unloaded */
	ctl_gen = __atomic_load_n(&s->ctl->gen, __ATOMIC_ACQUIRE);
	dl_iterate_phdr(pa_dl_count, &dl);
	if (pa_seen_ctl && ctl_gen == pa_ctl_gen && dl.adds == pa_dl.adds && dl.subs == pa_dl.subs)
		goto out;
	if (dl.subs != pa_dl.subs)
		pa_forget_unloaded();
	pa_seen_ctl = 1;
	pa_ctl_gen = ctl_gen;
	pa_dl = dl;
	for (k = 0; k < pa_nlocs; k++)
		pa_locs[k].wanted = 0;
	/*
	 * Each live slot copied and checked once (pend[i], kept to the end of the
	 * sync); then, if some slot is wanted, its mappings (pa_fast_maps(), else
	 * pa_read_maps(): the writable mappings too only if a slot has an SDT
	 * semaphore). The armed locations a slot wants are marked, the others
	 * disarmed, then the new ones armed.
	 */
	c = NULL;
	bound = fdr_probe_slots_bound(pa_probes);
	for (i = 0; i < bound; i++) {
		int r;

		if (!c && !(c = malloc(sizeof(*c))))
			break;
		r = pa_slot_copy(s, i, c, why, sizeof(why));
		if (r < 0)
			pa_report(s, i, c->gen, c->line, why);
		if (r <= 0)
			continue;
		pend[i] = c;
		c = NULL;
		nlive++;
		sems |= pend[i]->ref_ctr_offset != 0;
	}
	free(c);
	FDR_PROBE_TRACE("copies");
	if (i < bound) {
		/* out of memory: nothing changes, the next sync tries again */
		for (i = 0; i < FDR_MAX_PROBES; i++) {
			free(pend[i]);
			pend[i] = NULL;
		}
		pa_seen_ctl = 0;
		goto out;
	}
	nmaps = nlive ? pa_fast_maps(pend, bound, sems, maps, PA_MAX_MAPS) : 0;
	fast = nmaps > 0;
	if (nmaps < 0)
		nmaps = pa_read_maps(maps, PA_MAX_MAPS, sems);
	FDR_PROBE_TRACE(fast ? "maps(fast)" : "maps");
	for (i = 0; i < bound; i++) {
		c = pend[i];
		if (!c)
			continue;
		for (j = 0; j < nmaps; j++) {
			struct pa_loc *l;
			uintptr_t addr;

			if (pa_map_addr(&maps[j], c, &addr) && (l = pa_find(i, c->gen, addr)))
				l->wanted = 1;
		}
	}
	for (k = 0; k < pa_nlocs; k++) {
		if (!pa_locs[k].used)
			continue;
		pa_count_nested(&pa_locs[k]);
		if (!pa_locs[k].wanted)
			pa_disarm(&pa_locs[k]);
	}
	/* arm what is wanted and not armed (a slot changed since its copy: the next sync) */
	pa_arm_pass(s, pend, bound, maps, nmaps, &blocker);
	/*
	 * Found the fast way: the locations of the other mappings of the same
	 * files, if any (a file mapped by hand, not by the dynamic linker), are
	 * armed after these, from a walk of every mapping.
	 */
	if (fast && blocker <= 0) {
		nmaps = pa_read_maps(maps, PA_MAX_MAPS, 0);
		FDR_PROBE_TRACE("walk");
		pa_arm_pass(s, pend, bound, maps, nmaps, &blocker);
	}
	for (i = 0; i < bound; i++) {
		free(pend[i]);
		pend[i] = NULL;
	}
	pa_optimize_pending();
out:
	pa_opt_recount();
	fdr_patch_maps_hold(0);
	pa_trace_flush();
	pthread_mutex_unlock(&pa_lock);
}

/** fdr_probe_agent_armed - how many locations this process has armed (tests) */
unsigned int fdr_probe_agent_armed(void)
{
	unsigned int k, n = 0;

	pthread_mutex_lock(&pa_lock);
	for (k = 0; k < pa_nlocs; k++)
		n += pa_locs[k].used != 0;
	pthread_mutex_unlock(&pa_lock);
	return n;
}

/*
 * Decode a few common first instructions once, at load: the decoder's code
 * and tables are then in memory, instead of being faulted in by the first
 * arm's fdr_probe_check() (30 to 90 us of it on the development VM; the
 * same, once, at load).
 */
static void pa_warm_decoder(void)
{
	/* clang-format off */
	static const uint8_t code[] = {
		0xf3, 0x0f, 0x1e, 0xfa,		/* endbr64 */
		0x55,				/* push %rbp */
		0x48, 0x89, 0xe5,		/* mov %rsp,%rbp */
		0x48, 0x83, 0xec, 0x10,		/* sub $0x10,%rsp */
		0x89, 0xf8,			/* mov %edi,%eax */
		0x48, 0x8d, 0x05, 0, 0, 0, 0,	/* lea 0x0(%rip),%rax */
		0xe8, 0, 0, 0, 0,		/* call rel32 */
		0x74, 0x02,			/* je +2 */
		0xc3,				/* ret */
	};
	/* clang-format on */
	struct fdr_reloc_insn insn;
	size_t off = 0;

	while (off < sizeof(code)) {
		int len = fdr_reloc_length(code + off, sizeof(code) - off, NULL, 0);

		if (len <= 0)
			break;
		fdr_reloc_decode((uintptr_t)code + off, code + off, sizeof(code) - off, &insn, NULL,
				 0);
		off += (size_t)len;
	}
}

/**
 * fdr_probe_attach - fdr attach's entry (docs/design/probes.md, "fdr attach"):
 * record into the session at @dir, arm its probes, keep syncing
 * @dir: the session directory fdr attach names
 *
 * Called by the code fdr attach injects, in whichever thread it interrupted,
 * right after it dlopen()ed this library (whose constructor has already
 * attached to @dir: fdr_agent_attach_prepare() ran before). Returns 0
 * (attached), 1 (attached already by an earlier fdr attach), -EEXIST (the
 * library came in otherwise: linked, LD_PRELOAD, libfdr's own agent), -ENOENT
 * (no live session at @dir), -EINVAL, -ENOMEM.
 */
int fdr_probe_attach(const char *dir)
{
	int ret, first;

	if (!dir || !*dir)
		return -EINVAL;
	if (!fdr_agent_attach_mode())
		return -EEXIST;
	pthread_mutex_lock(&pa_lock);
	first = pa_attach_state != 1;
	pthread_mutex_unlock(&pa_lock);
	ret = fdr_agent_attach_dir(dir, fdr_probe_agent_sync);
	if (ret < 0)
		return ret;
	pthread_mutex_lock(&pa_lock);
	pa_attach_state = 1;
	pthread_mutex_unlock(&pa_lock);
	return first ? 0 : ret;
}

/**
 * fdr_probe_detach - fdr detach's entry: every probe of this process disarmed
 * (original bytes back), the session left, no other attached until the next
 * fdr attach; SIGTRAP given back to the program (a return still pending on a
 * thread's stack goes through the return trampoline, which needs no signal).
 * The library stays mapped (see probes.md).
 * Returns 0, 1 (not attached), -EEXIST (the library came in otherwise).
 */
int fdr_probe_detach(void)
{
	int ret = fdr_agent_detach_dir();
	/* a trap fetched before the last disarm's serialisation is handled by then */
	struct timespec ts = { 0, 10 * 1000 * 1000 };

	if (ret < 0)
		return ret;
	pthread_mutex_lock(&pa_lock);
	pa_disarm_all(); /* the sync with NULL did it already; nothing armed after this */
	fdr_patch_close_fds();
	pa_attach_state = 2;
	pthread_mutex_unlock(&pa_lock);
	nanosleep(&ts, NULL);
	if (fdr_probe_agent_armed() == 0)
		fdr_probe_sig_release(SIGTRAP);
	return ret;
}

static void pa_atfork_child(void)
{
	unsigned int k;

	pthread_mutex_init(&pa_lock, NULL);
	pa_nsigok = 0; /* the parent's threads: the child has one, new */
	/* the child's jump probes are counted anew, its own (pa_opt_recount()) */
	for (k = 0; k < pa_nlocs; k++)
		pa_locs[k].opt_counted = 0;
}

/* Whether this process has a single thread (/proc/self/stat's num_threads); 0 if unknown. */
static int pa_one_thread(void)
{
	char buf[1024];
	const char *p;
	int i;

	if (fdr_proc_read("/proc/self/stat", buf, sizeof(buf)) < 0)
		return 0;
	/* after the comm, which may hold spaces and parentheses: state is field 3 */
	p = strrchr(buf, ')');
	for (i = 0; i < 18 && p; i++)
		p = strchr(p + 1, ' ');
	return p && strtol(p + 1, NULL, 10) == 1; /* field 20 */
}

/*
 * Loaded (linked, LD_PRELOADed, or dlopen'ed by libfdr's agent): make sure
 * libfdr's agent runs in this process, and arm what is defined already.
 */
__attribute__((constructor)) static void pa_init(void)
{
	int one = pa_one_thread();

	pa_rseq_init();
	pthread_atfork(NULL, NULL, pa_atfork_child);
	/*
	 * The membarrier registration costs nothing before the program's threads
	 * exist (linked, preloaded); dlopen()ed into a process with threads
	 * (libfdr's agent, fdr attach) it would wait for an RCU grace period in
	 * the loading thread, and is left to the first arm.
	 */
	if (one)
		fdr_patch_prepare();
	/*
	 * the SIGTRAP check's condition (pa_masks_ours, above): this library's
	 * sigprocmask() and pthread_sigmask() are the program's, and no thread
	 * blocks SIGTRAP now (the threads made before: libfdr's agent, started
	 * by libfdr.so's constructor, which ran first; read once, here)
	 */
	if (fdr_probe_sig_masks_ours()) {
		pthread_mutex_lock(&pa_lock);
		pa_masks_ours = pa_sigtrap_blocker_stable() ==
				0; /* a thread being made blocks all */
		pthread_mutex_unlock(&pa_lock);
	}
	pa_warm_decoder();
	fdr_agent_probes_start(fdr_probe_agent_sync);
}
