// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * event-nv.c - a dynamic probe's record, written without touching a vector
 * register: the end of a jump probe's hit (docs/design/probes.md, "A hit
 * without the vector state").
 *
 * A jump probe's trampoline (lib/probe/jump.c) saves the general registers
 * and the flags, not the x87/SSE/AVX state: saving that (XSAVEC and XRSTOR)
 * cost two thirds of a hit. The code it runs must then leave every vector
 * register as it found it. This file is that code's libfdr part, compiled
 * with -mgeneral-regs-only (lib/CMakeLists.txt), so the compiler uses no
 * vector register in it; it calls nothing in libc (whose memcpy() and
 * memset() do), and everything else it calls is either compiled the same way
 * (inline helpers from event-path.h, ring-fast.h and rseq.h) or called
 * through fdr_vcall() (vcall.S), which saves and restores the vector state
 * around the call:
 *
 *	fdr_event_commit_slot_nv()         common case: every ring of the
 *	                                   event's instances, rseq + rdtsc
 *	  fdr_vcall(fdr_event_commit_slot) first record of a thread in this
 *	                                   session (its comm is saved), nesting
 *	                                   too deep, a filter, a trigger or a pid
 *	                                   list on the event: libfdr's full path
 *	  fdr_ring_write_nv()              a ring's slow path (sub-buffer switch,
 *	                                   CLOCK_MONOTONIC timestamps; ring-write.c,
 *	                                   compiled as this file is, its clocks
 *	                                   through fdr_vcall())
 *
 * tests/unit/check-hit-path.py disassembles the built libraries and fails if any
 * function reachable from the hit uses a vector or x87 register, or calls
 * anything but these functions and fdr_vcall().
 *
 * fdr_vcall()'s save: XSAVEC where the CPU has it (XSAVE, else FXSAVE) of the
 * components enabled in XCR0 among x87, SSE, AVX, opmask and ZMM (mask 0xe7:
 * not AMX tiles nor PKRU), as jump.c's trampoline did; fdr_vsave_init()
 * measures it when libfdr loads.
 */
#define _GNU_SOURCE
#include <cpuid.h>
#include <errno.h>

#include "core-local.h"
#include "event-path.h"
#include "ring-fast.h"

/* fdr_vcall()'s save (vcall.S): 0 FXSAVE, 1 XSAVE, 2 XSAVEC; mask; bytes */
FDR_HIDDEN uint32_t fdr_vsave_kind, fdr_vsave_mask, fdr_vsave_size = 512;

__attribute__((constructor)) static void fdr_vsave_init(void)
{
	unsigned int a, b, c, d, i;
	uint32_t lo, hi, size = 576;

	if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_OSXSAVE))
		return; /* FXSAVE, 512 bytes */
	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	fdr_vsave_mask = lo & 0xe7; /* x87, SSE, AVX, opmask, ZMM_Hi256, Hi16_ZMM */
	/* the standard format's size covers the compacted one */
	for (i = 2; i < 8; i++) {
		if (!(fdr_vsave_mask & (1u << i)))
			continue;
		__cpuid_count(0xd, i, a, b, c, d);
		if (b + a > size)
			size = b + a;
	}
	__cpuid_count(0xd, 1, a, b, c, d);
	fdr_vsave_size = size;
	fdr_vsave_kind = (a & 2) ? 2 : 1;
}

/* fdr_event_commit_slot_nv() past its common case: every check, every instance */
static __attribute__((noinline)) int nv_commit_all(uint32_t slot, uint32_t id,
						   unsigned char *payload, size_t len)
{
	struct fdr_session *s = atomic_load_explicit(&fdr_proc_session, memory_order_acquire);
	unsigned char *rec = payload - sizeof(struct fdr_abi_rec);
	const struct fdr_abi_event *e;
	size_t total;
	uint32_t w, gen;
	int tried = 0, ok = 0;

	if (!s)
		return -ENOENT;
	if (slot >= FDR_MAX_EVENTS || len < sizeof(struct fdr_common) || len > FDR_MAX_RECORD)
		return -EINVAL;
	if (__builtin_expect(fdr_ev_self.nest >= FDR_MAX_NESTING ||
				     fdr_ev_self.cmd_sid != s->session_id || !fdr_ev_self.tid,
			     0))
		return (int)fdr_vcall((void *)fdr_event_commit_slot, slot, id, (long)payload,
				      (long)len, 0);
	e = &s->ctl->events[slot];
	/* acquire: the fields the route was computed from are read after gen */
	gen = __atomic_load_n(&s->ctl->gen, __ATOMIC_ACQUIRE);
	if (__atomic_load_n(&e->state, __ATOMIC_ACQUIRE) != FDR_EVENT_READY ||
	    __atomic_load_n(&e->id, __ATOMIC_RELAXED) != id)
		return -ESTALE;
	if (!(ev_route_get(s, slot, gen) & EV_ROUTE_KNOWN))
		ev_route_set(s, e->enabled, slot, gen); /* for the next record */
	ev_common((struct fdr_common *)payload, (uint16_t)id, 0, fdr_ev_self.tid);
	total = ev_rec_head(payload, len); /* the caller zeroed the padding */
	if (__atomic_load_n(&s->ctl->hooks_active, __ATOMIC_ACQUIRE) && ev_hooked(s->ctl, slot))
		return (int)fdr_vcall((void *)fdr_event_commit_slot, slot, id, (long)payload,
				      (long)len, 0);
	fdr_ev_self.nest++;
	for (w = 0; w < FDR_MAX_INSTANCES / 64; w++) {
		uint64_t bits = __atomic_load_n(&e->enabled[w], __ATOMIC_RELAXED);

		while (bits) {
			uint32_t i = w * 64 + (uint32_t)__builtin_ctzll(bits);
			struct fdr_ring_map *m;
			long rs = fdr_rseq_off;
			uint32_t cpu;

			bits &= bits - 1;
			if (!s->ctl->instances[i].tracing_on)
				continue;
			m = atomic_load_explicit(&s->rings[i], memory_order_acquire);
			tried = 1;
			if (!m) {
				fdr_ring_unmapped(s); /* a new instance: the agent maps it */
				continue;
			}
			cpu = rb_cpu_start(rs);
#ifdef FDR_TESTPOINTS
			cpu = UINT32_MAX; /* as fdr_ring_write_fast(): the path with test points */
#endif
			if (__builtin_expect(cpu < m->nr_cpus && fdr_ring_tsc, 1) &&
			    rb_append_tsc(rs, cpu, &m->pcpu[cpu], rec, total) == RB_OK)
				ok++;
			else if (fdr_ring_write_nv(s, i, m, rec, total) == 0)
				ok++;
		}
	}
	fdr_ev_self.nest--;
	return !tried ? 0 : ok == 0 ? -ENOSPC : ok;
}

/**
 * fdr_event_commit_slot_nv - fdr_event_commit_slot(), for code that must not
 * touch a vector register (a jump probe's hit): the same arguments, the same
 * results, the same records, but the payload's padding (from @len to the next
 * multiple of 8) is the caller's to zero: the fetch writes it with the last
 * field's word, where a separate store of the padding could not be forwarded
 * to the ring's 8-byte loads (fetch.h). Async-signal-safe; errno is kept.
 */
int fdr_event_commit_slot_nv(uint32_t slot, uint32_t id, unsigned char *payload, size_t len)
{
	struct fdr_session *s = atomic_load_explicit(&fdr_proc_session, memory_order_acquire);

	/*
	 * fdr_event_commit()'s common case: a small record, a thread that has
	 * recorded its comm, one instance, no filter, trigger nor pid list (the
	 * route says so, at this gen), rdtsc; the rest in nv_commit_all().
	 */
	if (__builtin_expect(s != NULL && slot < FDR_MAX_EVENTS &&
				     len >= sizeof(struct fdr_common) &&
				     len <= RB_SMALL_MAX - sizeof(struct fdr_abi_rec) &&
				     fdr_ev_self.nest < FDR_MAX_NESTING &&
				     fdr_ev_self.cmd_sid == s->session_id && fdr_ev_self.tid,
			     1)) {
		/* acquire: the fields the route was computed from are read after gen */
		uint32_t gen = __atomic_load_n(&s->ctl->gen, __ATOMIC_ACQUIRE);
		uint32_t route = ev_route_get(s, slot, gen);
		const struct fdr_abi_event *e = &s->ctl->events[slot];

		if (__builtin_expect((route & EV_ROUTE_FAST) && EV_ROUTE_INST(route) &&
					     !EV_ROUTE_FILTER(route) &&
					     __atomic_load_n(&e->state, __ATOMIC_ACQUIRE) ==
						     FDR_EVENT_READY &&
					     __atomic_load_n(&e->id, __ATOMIC_RELAXED) == id,
				     1)) {
			uint32_t i = (EV_ROUTE_INST(route) - 1) % FDR_MAX_INSTANCES;
			struct fdr_ring_map *m =
				atomic_load_explicit(&s->rings[i], memory_order_acquire);
			long rs = fdr_rseq_off;
			uint32_t cpu = rb_cpu_start(rs);

#ifdef FDR_TESTPOINTS
			cpu = UINT32_MAX; /* as fdr_ring_write_fast(): the path with test points */
#endif
			if (__builtin_expect(m != NULL && cpu < m->nr_cpus, 1)) {
				size_t total;
				int ret;

				ev_common((struct fdr_common *)payload, (uint16_t)id, 0,
					  fdr_ev_self.tid);
				/* the caller zeroed the padding */
				total = ev_rec_head(payload, len);
				fdr_ev_self.nest++;
				ret = rb_append_small((uint64_t)rs, cpu, &m->pcpu[cpu], payload,
						      total);
				if (__builtin_expect(ret != RB_OK, 0))
					ret = fdr_ring_write_nv(
						s, i, m, payload - sizeof(struct fdr_abi_rec),
						total);
				fdr_ev_self.nest--;
				return ret == 0 ? 1 : -ENOSPC;
			}
		}
	}
	return nv_commit_all(slot, id, payload, len);
}
