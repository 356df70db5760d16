/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * record.h - a probe hit that writes an fdr event: the probe agent's
 * (agent.c), which the engine also runs inline (engine.c).
 *
 * The agent arms each location of a uprobe_events line with a struct
 * fdr_probe_rec as its argument: the event's registry slot and id, the hit
 * counters of its slot in the probes file, and the fetch program as a table
 * where it has one (fetch.h). A hit counts itself in this CPU's row, builds
 * the record and commits it (libfdr's fdr_event_commit_slot_nv()). Armed
 * with FDR_PROBE_ARM_RECORD (the table form only), the probe's jump hit does
 * that inside fdr_probe_fire() when it is the only probe of its address,
 * without the call to the handler: a call less in the hit, about 1 ns of 26
 * here (docs/design/probes.md, "The agent's hit, inline"). The
 * breakpoint form, and the jump form with other probes on the address, call
 * the handler (agent.c's pa_hit()), which runs the same code.
 *
 * Compiled without vector registers (engine.c and agent.c: FDR_HIT_FLAGS).
 */
#ifndef FDR_PROBE_RECORD_H
#define FDR_PROBE_RECORD_H

#include <stdint.h>

#include "core/core-local.h"
#include "core/rseq.h"
#include "fetch.h"
#include "fdr/fdr-abi.h"

struct fdr_probe_rec {
	uint32_t event_slot;
	uint32_t event_id;
	struct fdr_abi_probe_slot *shm; /* hits, misses (the probes file mapping) */
	uint64_t *hits; /* the slot's counter in row 0 of the per-CPU hit counts */
	uint32_t hit_cpus; /* rows fdr_probe_rec_count() may use; 0: shm->hits only */
	struct fdr_fetch_fast fast; /* the program as a table, if it can be (fast.nr > 0) */
};

/* glibc's __rseq_offset; 0: no rows (agent.c sets it when it starts) */
__attribute__((visibility("hidden"))) extern long fdr_probe_rec_rseq_off;

/*
 * Count a hit in this CPU's row of the probes file (fdr-abi.h): a restartable
 * sequence whose last instruction, the commit, is an add without a lock prefix
 * to the counter of the CPU the thread runs on. Preempted, migrated or
 * signalled before the add, the kernel sends it to the abort label (no add
 * done); after it, the count is in. So two threads, of any processes, never
 * add to one counter at once, and a hit costs no locked instruction
 * (docs/design/probes.md, "The probe agent", has what it saves). Where it
 * cannot (glibc registered no rseq area, a CPU past the rows, an abort), the
 * slot's hits take a locked add.
 */
static inline __attribute__((always_inline)) void fdr_probe_rec_count(const struct fdr_probe_rec *r)
{
	long rs = fdr_probe_rec_rseq_off;
	uint32_t cpu;
	uint64_t *ctr;

	if (__builtin_expect(!rs || !r->hit_cpus, 0))
		goto locked;
	cpu = rb_cpu_start(rs);
	if (__builtin_expect(cpu >= r->hit_cpus, 0))
		goto locked;
	ctr = r->hits + (size_t)cpu * FDR_MAX_PROBES;
	__asm__ goto(RB_CS_BEGIN "addq $1, (%[ctr])\n\t" RB_CS_END
		     :
		     : [rs] "r"(rs), [cpu] "r"(cpu), [ctr] "r"(ctr)
		     : "rax", "memory", "cc"
		     : abort);
	return;
abort:
locked:
	__atomic_fetch_add(&r->shm->hits, 1, __ATOMIC_RELAXED);
}

/* A record not written (no ring took it, nested too deep, detached, the event changed) */
static inline void fdr_probe_rec_missed(const struct fdr_probe_rec *r)
{
	__atomic_fetch_add(&r->shm->misses, 1, __ATOMIC_RELAXED);
}

/* A hit of a probe whose program has the table form (r->fast.nr > 0). */
static inline __attribute__((always_inline)) void
fdr_probe_rec_fast(const struct fdr_probe_rec *r, const struct fdr_probe_regs *regs)
{
	/* the record with its 16 bytes of headroom: at most 16 + 128 bytes */
	uint64_t raw[(16 + FDR_FETCH_FAST_WORDS * 8) / 8];
	int len;

	fdr_probe_rec_count(r);
	len = fdr_fetch_fast_run(&r->fast, regs, raw + 2);
	if (fdr_event_commit_slot_nv(r->event_slot, r->event_id, (unsigned char *)(raw + 2),
				     (size_t)len) < 0)
		fdr_probe_rec_missed(r);
}

#endif
