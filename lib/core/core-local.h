/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * core-local.h - libfdr internals shared by the files of lib/core; not installed.
 *
 * FDR_HIDDEN: inside libfdr only. FDR_INTERNAL: also exported from libfdr.so,
 * in the version node FDR_INTERNAL_0 (lib/libfdr.map, which must list each), for
 * libfdr-ctl's session administration (lib/ctl/session-admin.c) and the tests,
 * which include this header by path. No promise of a stable ABI: libfdr-ctl is
 * built with the same libfdr. Inside libfdr (FDR_CORE_BUILD, set by
 * lib/CMakeLists.txt) they are protected, so calls from inside libfdr stay
 * direct, as for a hidden function; elsewhere they are plain references (an
 * undefined protected reference would have to be resolved in its own object).
 */
#ifndef FDR_CORE_LOCAL_H
#define FDR_CORE_LOCAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>
#include <time.h>

#include "fdr/fdr.h"
#include "fdr/fdr-abi.h"
#include "fdr/fdr-session.h"
#include "common/bounds.h"

#define FDR_HIDDEN __attribute__((visibility("hidden")))
#ifdef FDR_CORE_BUILD
#define FDR_INTERNAL __attribute__((visibility("protected")))
#else
#define FDR_INTERNAL __attribute__((visibility("default")))
#endif

/* One of a CPU's two buffers as mapped by this process (validated at map time). */
struct fdr_pbuf {
	uint64_t *head; /* offset 0: &cpu->head, read by the rseq asm */
	unsigned char *data; /* offset 8: start of this buffer's sub-buffers */
	uint64_t ss_mask; /* offset 16: subbuf_size - 1 */
	uint64_t ring_bytes; /* offset 24: nr_subbufs * subbuf_size, bounds every write */
};

/* Per-CPU view of one ring mapping: the live and the spare (snapshot) buffer. */
struct fdr_pcpu {
	struct fdr_pbuf buf[FDR_RING_BUFS]; /* offsets 0 and 32 */
	uint32_t *active; /* offset 64: &cpu[0]->active, which buffer writers use */
	uint32_t nr_subbufs;
	uint32_t subbuf_size;
	uint32_t ss_shift;
	uint32_t head_bad; /* switched off by a writer: a head past the buffer (ring.c) */
	struct fdr_abi_cpu *cpu[FDR_RING_BUFS];
	char pad_to_128[24]; /* &m->pcpu[cpu] is a shift, not three leas */
};

_Static_assert(offsetof(struct fdr_pbuf, data) == 8 && offsetof(struct fdr_pbuf, ss_mask) == 16 &&
		       offsetof(struct fdr_pbuf, ring_bytes) == 24 &&
		       sizeof(struct fdr_pbuf) == 32 && offsetof(struct fdr_pcpu, active) == 64 &&
		       sizeof(struct fdr_pcpu) == 128 && offsetof(struct fdr_abi_cpu, head) == 0,
	       "the rseq asm in ring-fast.h reads these structs at these offsets "
	       "(buf[0].head is buffer 0's struct fdr_abi_cpu, which holds the active word)");

/* One mapped ring file (one instance, one generation). */
struct fdr_ring_map {
	void *base;
	size_t size;
	uint32_t instance;
	uint32_t gen;
	uint32_t nr_cpus;
	struct fdr_abi_ring *hdr;
	uint64_t lease_mult; /* fdr_lease_ns() of the session, see below */
	uint64_t hdr_bytes; /* the header and the CPU entries, as checked at map time */
	uint32_t nr_bad; /* CPUs disabled at map time: their geometry did not check out */
	int bad_reported; /* the writer's agent told the error_log (once per mapping) */
	char bad_why[FDR_SHM_ERROR_LEN]; /* what was wrong with the first of them */
	/*
	 * CPUs a writer switched off since: a head that pointed past its buffer
	 * (rb_head_corrupt() in ring.c). The first one's CPU, buffer and head, for
	 * the agent's error_log entry, are valid once head_bad_ready is set.
	 */
	uint32_t nr_head_bad;
	uint32_t head_bad_cpu;
	uint32_t head_bad_bi;
	int head_bad_ready;
	uint64_t head_bad_value;
	int head_bad_reported; /* the agent told the error_log (once per mapping) */
	/* nr_cpus entries, in the same allocation: no pointer to load on the way */
	struct fdr_pcpu pcpu[];
};

/* A process's attachment to a session (mapped control file + rings). */
struct fdr_session {
	/* what the event path and fdr_snapshot() read, together at the front */
	struct fdr_abi_control *ctl;
	uint64_t session_id;
	_Atomic(struct fdr_ring_map *) rings[FDR_MAX_INSTANCES];
	/*
	 * Per registry slot, the one instance an event goes to, cached by the event
	 * path: control gen << 32 | known << 31 | filter slot + 1 << 8 | (instance + 1);
	 * instance + 1 = 0: no route at that gen (the full path).
	 * Valid while control.gen is that gen (see ev_route_get() in event-path.h).
	 */
	uint64_t routes[FDR_MAX_EVENTS];
	size_t ctl_size;
	int dir_fd;
	char dir[4096];
	/* the probes file, mapped at the first fdr_session_probes() (NULL until then) */
	_Atomic(struct fdr_abi_probes *) probes;
	/*
	 * Set by a writer that calls fdr_session_changed() itself when it is done
	 * (lib/ctl/probes.c): fdr_session_changed() then bumps control.gen
	 * without waking the agents, so that they wake once, to the whole change
	 * (under the session lock)
	 */
	int quiet_changes;
	/* on event.c's list of sessions detached from, whose dir_fd a probe round closes */
	struct fdr_session *retired_next;
};

/* ring.c */
FDR_HIDDEN int fdr_ring_map_open(struct fdr_session *s, uint32_t inst, uint32_t gen,
				 struct fdr_ring_map **out);
FDR_HIDDEN void fdr_ring_map_retire(struct fdr_ring_map *m);
/* ring-write.c */
FDR_HIDDEN int fdr_ring_write(struct fdr_session *s, uint32_t inst, struct fdr_ring_map *m,
			      unsigned char *rec, size_t len);
FDR_HIDDEN int fdr_ring_write_nv(struct fdr_session *s, uint32_t inst, struct fdr_ring_map *m,
				 unsigned char *rec, size_t len);
FDR_INTERNAL int fdr_ring_file_create(int dir_fd, uint32_t inst, uint32_t gen, uint32_t nr_cpus,
				      uint32_t subbuf_size, const uint32_t *nr_subbufs, int spare);
FDR_HIDDEN int fdr_ring_swap(struct fdr_ring_map *m, int cpu);
FDR_INTERNAL void fdr_ring_buffer_reset(struct fdr_abi_cpu *c, unsigned char *data);

/* clock.c */
FDR_INTERNAL uint64_t fdr_clock_mono_ns(void);
FDR_HIDDEN uint64_t fdr_clock_boot_ns(void);
FDR_INTERNAL uint64_t fdr_clock_real_ns(void);
FDR_INTERNAL int fdr_clock_tsc_usable(void);
FDR_INTERNAL uint64_t fdr_clock_calibrate_khz(void);
FDR_INTERNAL void fdr_clock_boot_id(char *buf, size_t len);
FDR_INTERNAL void fdr_clock_point(uint64_t *tsc, uint64_t *mono, uint64_t *boot);

static inline uint64_t fdr_rdtsc(void)
{
#if defined(__x86_64__)
	uint32_t lo, hi;

	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
#else
	return 0;
#endif
}

/*
 * The lease clock: the time base of the ring header's snap_lock_ns and
 * saver_beat_ns and of each CPU's swap_ns. Those only go into differences (is a
 * swap lock or a saver's heartbeat stale, how long ago was a swap), so they need
 * a clock that every process of the session reads alike, not CLOCK_MONOTONIC
 * itself. With TSC stamps it is the TSC scaled to ns by the session's tsc_khz
 * (@mult: ns per tick in 32.32 fixed point, fdr_lease_mult()): reading it touches
 * no memory, where clock_gettime() reads the vDSO's data pages, which after a
 * long fill of a large buffer were cold and cost a snapshot half a microsecond.
 * With @mult 0 (monotonic stamps) it is CLOCK_MONOTONIC. Compare values as signed
 * differences (fdr_lease_age(), fdr-ctl.h): two CPUs' TSCs may differ by a few cycles.
 */
static inline uint64_t fdr_lease_ns(uint64_t mult)
{
	if (mult)
		return (uint64_t)(((unsigned __int128)fdr_rdtsc() * mult) >> 32);
	return fdr_clock_mono_ns();
}

FDR_HIDDEN uint64_t fdr_lease_mult(const struct fdr_abi_control *ctl);

/*
 * Named test points for the crash tests (tests/crash): compiled only into the
 * fdr_testpoints library. FDR_FAULT=NAME:N[:stop] kills (or stops) the process at
 * the Nth time it passes NAME.
 */
#ifdef FDR_TESTPOINTS
FDR_HIDDEN void fdr_testpoint(const char *name);
#define FDR_TESTPOINT(name) fdr_testpoint(name)
#define FDR_TESTPOINTS_ON 1 /* the event path always takes the way with test points */
#else
#define FDR_TESTPOINTS_ON 0
#define FDR_TESTPOINT(name) \
	do {                \
	} while (0)
#endif

/* event.c: a definition as the registry stores it (also for the tests) */
FDR_INTERNAL int fdr_event_def_to_abi(const struct fdr_event_def *def, struct fdr_abi_event *out);
/* event.c: the process's current session (NULL when detached) */
FDR_HIDDEN extern _Atomic(struct fdr_session *) fdr_proc_session;
FDR_HIDDEN void fdr_agent_kick(void);
FDR_HIDDEN void fdr_event_enabled_hint(uint32_t slot);
/* event.c: libfdr.so's constructor (boot.c) */
FDR_HIDDEN void fdr_agent_boot(void);
/* event.c: for libfdr-probe's agent (lib/probe/agent.c) */
FDR_INTERNAL void fdr_agent_probes_start(void (*sync)(struct fdr_session *s));
/* event.c: fdr attach and fdr detach (docs/design/probes.md, "fdr attach") */
FDR_INTERNAL int fdr_agent_attach_prepare(const char *dir);
FDR_INTERNAL int fdr_agent_attach_mode(void);
FDR_INTERNAL int fdr_agent_attach_dir(const char *dir, void (*sync)(struct fdr_session *s));
FDR_INTERNAL int fdr_agent_detach_dir(void);
FDR_INTERNAL int fdr_event_commit_slot(uint32_t slot, uint32_t id, unsigned char *payload,
				       size_t len);
/*
 * event-nv.c: the same without touching a vector register (a jump probe's hit);
 * the payload's padding (@len up to a multiple of 8) must be zero already
 */
FDR_INTERNAL int fdr_event_commit_slot_nv(uint32_t slot, uint32_t id, unsigned char *payload,
					  size_t len);
/* vcall.S: @fn(a1..a5) with the vector state saved around it (event-nv.c) */
FDR_INTERNAL long fdr_vcall(void *fn, long a1, long a2, long a3, long a4, long a5);

/* hooks.c */
/*
 * A record for an instance whose ring this process has not mapped yet (a new
 * instance, until the agent's next round): counted, as every loss is.
 */
static inline void fdr_ring_unmapped(struct fdr_session *s)
{
	__atomic_fetch_add(&s->ctl->dropped_no_slot, 1, __ATOMIC_RELAXED);
}

FDR_HIDDEN int fdr_hooks_filter(struct fdr_session *s, uint32_t f, const unsigned char *payload,
				uint32_t len);
FDR_HIDDEN void fdr_hooks_commit(struct fdr_session *s, const uint64_t *enabled, uint32_t slot,
				 unsigned char *rec, size_t total);
FDR_HIDDEN void fdr_hooks_forget_self(void);
FDR_HIDDEN void fdr_hooks_prepare(void);

/* session.c */
FDR_INTERNAL int fdr_session_name_ok(const char *name);
FDR_INTERNAL int fdr_session_private_dir(const char *path);
/* registry: find or add an event (locked); used by event.c and the tests */
FDR_INTERNAL int fdr_session_register_event(struct fdr_session *s, const struct fdr_abi_event *tmpl,
					    uint32_t *slot_out);
FDR_HIDDEN void fdr_session_apply_pending(struct fdr_session *s, uint32_t slot);

/* fdr_events_bound(), fdr_instances_bound(): common/bounds.h (the readers use them too) */

/* The CLOCK_REALTIME instant @ms milliseconds from now: a pthread_mutex_timedlock() deadline */
static inline struct timespec fdr_deadline_ms(int ms)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_nsec += (long)(ms % 1000) * 1000000L;
	ts.tv_sec += ms / 1000 + ts.tv_nsec / 1000000000L;
	ts.tv_nsec %= 1000000000L;
	return ts;
}

/*
 * Drop a session file's mapping that another thread may still use: anonymous
 * memory at the same address, so a pointer loaded before cannot fault (it
 * reads zeros, its writes go nowhere) and the file's pages are released. For
 * a detached session's control block, rings and probes file.
 */
static inline void fdr_shm_unback(void *addr, size_t len)
{
	mmap(addr, len, PROT_READ | PROT_WRITE,
	     MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
}

/* raise instances_bound to cover instance @i (control lock held), before it goes live */
static inline void fdr_instances_cover(struct fdr_abi_control *c, uint32_t i)
{
	if (i < FDR_MAX_INSTANCES && c->instances_bound <= i)
		__atomic_store_n(&c->instances_bound, i + 1, __ATOMIC_RELEASE);
}

/*
 * How many probe slots a scan looks at: every slot ever made live has an
 * index below slots_bound (raised under the control lock before a slot goes
 * live, never lowered), clamped to FDR_MAX_PROBES.
 */
static inline uint32_t fdr_probe_slots_bound(const struct fdr_abi_probes *p)
{
	uint32_t n = __atomic_load_n(&p->slots_bound, __ATOMIC_ACQUIRE);

	return n > FDR_MAX_PROBES ? FDR_MAX_PROBES : n;
}

/*
 * Row 0 of @p's per-CPU hit counts (fdr-abi.h; counter i of row c at
 * [c * FDR_MAX_PROBES + i]), and in *@ncpus how many rows a hit may use:
 * hit_cpus, clamped to FDR_MAX_CPUS (the mapping has room for that many).
 */
static inline uint64_t *fdr_probe_hit_rows(const struct fdr_abi_probes *p, uint32_t *ncpus)
{
	uint32_t n = __atomic_load_n(&p->hit_cpus, __ATOMIC_RELAXED);

	*ncpus = n > FDR_MAX_CPUS ? FDR_MAX_CPUS : n;
	return (uint64_t *)(void *)((char *)(uintptr_t)p + sizeof(*p));
}

/* Slot @slot's hits counted in the rows (its slot's hits come on top). */
static inline uint64_t fdr_probe_row_hits(const struct fdr_abi_probes *p, uint32_t slot)
{
	uint32_t c, n;
	const uint64_t *rows = fdr_probe_hit_rows(p, &n);
	uint64_t sum = 0;

	for (c = 0; c < n; c++)
		sum += __atomic_load_n(&rows[(size_t)c * FDR_MAX_PROBES + slot], __ATOMIC_RELAXED);
	return sum;
}

/*
 * Whether the agents arm event @slot's probe locations: enabled in an
 * instance, or a trigger set on it (the kernel's soft mode). The agent's test
 * (lib/probe/agent.c), and the definer's, which wakes the agents only then
 * (lib/ctl/probes.c).
 */
static inline int fdr_probe_event_armed(const struct fdr_abi_control *c, uint32_t slot)
{
	uint32_t w;

	for (w = 0; w < FDR_MAX_INSTANCES / 64; w++)
		if (__atomic_load_n(&c->events[slot].enabled[w], __ATOMIC_ACQUIRE) ||
		    __atomic_load_n(&c->hooks[slot].triggered[w], __ATOMIC_ACQUIRE))
			return 1;
	return 0;
}

FDR_INTERNAL void fdr_session_lock_init(struct fdr_abi_control *ctl);
/* the control lock, waiting at most @timeout_ms (no orphan recovery: fdr_session_lock()) */
FDR_INTERNAL int fdr_session_lock_ms(struct fdr_session *s, int timeout_ms);
FDR_INTERNAL struct fdr_ring_map *fdr_session_ring_map(struct fdr_session *s, uint32_t inst,
						       int *err);

#endif /* FDR_CORE_LOCAL_H */
