// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * ring-write.c - the ring's slow path (ring.c has the design): an append
 * that does not fit in the current sub-buffer (the padding record, the next
 * sub-buffer's header), an append the fast path's critical section gave up
 * on, CLOCK_MONOTONIC timestamps.
 *
 * A file of its own, compiled like event-nv.c without vector registers
 * (lib/CMakeLists.txt): a jump probe's record comes here at every sub-buffer
 * switch, from code that must leave the vector state alone
 * (fdr_ring_write_nv()), and the switch used to be called through fdr_vcall(),
 * whose save and restore of the vector state cost a jump hit 1.5 ns on average
 * with a switch every hundred records (docs/design/probes.md, "A hit without
 * the vector state"). Two copies of one inline body:
 * fdr_ring_write() calls libc's clocks directly, fdr_ring_write_nv() through
 * fdr_vcall().
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <sys/rseq.h>

#include "core-local.h"
#include "ring-fast.h"

/* A second copy for rb_cmp_copy_store(): @lenq (> 0) quadwords from @src to @dst. */
struct rb_copy {
	const void *src; /* offset 0 */
	void *dst; /* offset 8 */
	uint64_t lenq; /* offset 16 */
};

/* What a slow-path step copies, and the buffer it is for (read by the asm below). */
struct rb_step {
	const void *src; /* offset 0: @lenq (> 0) quadwords from here ... */
	void *dst; /* offset 8: ... to here */
	uint64_t lenq; /* offset 16 */
	const struct rb_copy *more; /* offset 24: then these, or NULL */
	const uint32_t *active; /* offset 32: the CPU's active index ... */
	uint64_t bi; /* offset 40: ... must still be this buffer's */
};

_Static_assert(offsetof(struct rb_step, more) == 24 && offsetof(struct rb_step, active) == 32 &&
		       offsetof(struct rb_step, bi) == 40,
	       "rb_cmp_copy_store() reads struct rb_step at these offsets");

/*
 * Slow-path step: if the CPU's active buffer is still @st->bi and its head still
 * equals @expect on this CPU, copy @st's quadwords, then @st->more's, and store
 * @newhead. The active index is checked inside the critical section, as the
 * fast path does: a writer that chose the buffer before a snapshot swap and was
 * preempted before its step (for longer than the snapshot reader waits) must
 * not move the head of what is now the snapshot; it fails the compare and
 * retries in the new live buffer.
 */
static inline int rb_cmp_copy_store(struct rseq *rs, uint32_t cpu, struct fdr_pbuf *pc,
				    uint64_t expect, uint64_t newhead, const struct rb_step *st)
{
	__asm__ goto(".pushsection __rseq_cs, \"aw\"\n\t"
		     ".balign 32\n\t"
		     "3:\n\t"
		     ".long 0x0, 0x0\n\t"
		     ".quad 1f, (2f - 1f), 4f\n\t"
		     ".popsection\n\t"
		     "leaq 3b(%%rip), %%rax\n\t"
		     "movq %%rax, 8(%[rs])\n\t"
		     "1:\n\t"
		     "cmpl %[cpu], 4(%[rs])\n\t"
		     "jnz 4f\n\t"
		     "movq 32(%[st]), %%rax\n\t"
		     "movl (%%rax), %%eax\n\t"
		     "andl $1, %%eax\n\t"
		     "cmpq 40(%[st]), %%rax\n\t"
		     "jnz %l[cmpfail]\n\t"
		     "movq 0(%[pc]), %%rax\n\t"
		     "cmpq (%%rax), %[expect]\n\t"
		     "jnz %l[cmpfail]\n\t"
		     "movq 0(%[st]), %%rsi\n\t"
		     "movq 8(%[st]), %%rdi\n\t"
		     "movq 16(%[st]), %%rcx\n\t"
		     "5:\n\t"
		     "movq (%%rsi), %%rax\n\t"
		     "movq %%rax, (%%rdi)\n\t"
		     "addq $8, %%rsi\n\t"
		     "addq $8, %%rdi\n\t"
		     "decq %%rcx\n\t"
		     "jnz 5b\n\t"
		     "movq 24(%[st]), %%rax\n\t"
		     "testq %%rax, %%rax\n\t"
		     "jz 6f\n\t"
		     "movq 0(%%rax), %%rsi\n\t"
		     "movq 8(%%rax), %%rdi\n\t"
		     "movq 16(%%rax), %%rcx\n\t"
		     "7:\n\t"
		     "movq (%%rsi), %%rax\n\t"
		     "movq %%rax, (%%rdi)\n\t"
		     "addq $8, %%rsi\n\t"
		     "addq $8, %%rdi\n\t"
		     "decq %%rcx\n\t"
		     "jnz 7b\n\t"
		     "6:\n\t"
		     "movq 0(%[pc]), %%rax\n\t"
		     "movq %[newhead], (%%rax)\n\t"
		     "2:\n\t"
		     ".pushsection __rseq_failure, \"ax\"\n\t"
		     ".byte 0x0f, 0xb9, 0x3d\n\t"
		     ".long " RSEQ_SIG_STR "\n\t"
		     "4:\n\t"
		     "jmp %l[abort]\n\t"
		     ".popsection\n\t"
		     :
		     : [rs] "r"(rs), [cpu] "r"(cpu), [pc] "r"(pc), [expect] "r"(expect),
		       [newhead] "r"(newhead), [st] "r"(st)
		     : "rax", "rcx", "rsi", "rdi", "memory", "cc"
		     : abort, cmpfail);
	return RB_OK;
abort:
	return RB_ABORT;
cmpfail:
	return RB_CMPFAIL;
}

/*
 * The calibration point a new sub-buffer header carries. clock_gettime() twice
 * per sub-buffer would cost a few ns per event, so each thread reuses its last
 * point for up to about a millisecond (2^21 TSC ticks or ns); readers convert
 * from it with the session-wide rate, so an older point costs nothing in accuracy.
 */
static __thread __attribute__((tls_model("initial-exec"))) struct {
	uint64_t tsc, mono, boot;
} rb_cal;

static inline __attribute__((always_inline)) void rb_calibration(struct fdr_abi_subbuf *h, int nv)
{
	uint64_t now = fdr_rdtsc();

	if (!rb_cal.tsc || now - rb_cal.tsc > (1u << 21) || now < rb_cal.tsc) {
		if (nv) /* clock_gettime() is libc's: the vector state saved around it */
			fdr_vcall((void *)fdr_clock_point, (long)&rb_cal.tsc, (long)&rb_cal.mono,
				  (long)&rb_cal.boot, 0, 0);
		else
			fdr_clock_point(&rb_cal.tsc, &rb_cal.mono, &rb_cal.boot);
	}
	h->cal_tsc = rb_cal.tsc;
	h->cal_mono_ns = rb_cal.mono;
	h->cal_boot_ns = rb_cal.boot;
}

/*
 * rb_switch - move head past the current sub-buffer (step 1) or write the header
 * of the sub-buffer head points at (step 2), in buffer @b of @cpu; @nv: see
 * fdr_ring_write_nv().
 * Returns RB_OK/RB_ABORT/RB_CMPFAIL, or -ENOSPC when discard mode refuses.
 */
static inline __attribute__((always_inline)) int
rb_switch(struct rseq *rs, uint32_t cpu, struct fdr_pcpu *pc, uint32_t bi, int overwrite, int nv)
{
	struct fdr_pbuf *b = &pc->buf[bi];
	struct fdr_abi_cpu *c = pc->cpu[bi];
	uint64_t head = __atomic_load_n(b->head, __ATOMIC_RELAXED);
	uint32_t data_off = (uint32_t)head;
	uint32_t ss = pc->subbuf_size;
	uint32_t off = data_off & (ss - 1);
	uint32_t idx = data_off >> pc->ss_shift;

	if (idx >= pc->nr_subbufs)
		return -EIO; /* corrupted head: never write out of bounds */
	if (off != 0) {
		const struct fdr_abi_subbuf *cur = (const void *)(b->data + (size_t)idx * ss);
		struct fdr_abi_rec pad = {
			.len_type = (ss - off) | FDR_REC_PAD << FDR_REC_TYPE_SHIFT,
		};
		uint32_t next = idx + 1 == pc->nr_subbufs ? 0 : (idx + 1) << pc->ss_shift;
		/*
		 * a new sub-buffer: switch_gen + 1; the record count stays, so step 2
		 * knows how many records the finished sub-buffer holds without reading it
		 */
		uint64_t newhead = ((head >> 48) + 1) << 48 | (head & RB_NREC_MASK) | next;

		if (!overwrite) {
			/* acquire: pairs with the release of consumed in the reader */
			uint64_t consumed = __atomic_load_n(&c->consumed, __ATOMIC_ACQUIRE);
			uint64_t next_pos = cur->pos + ss;

			if (next_pos + ss - consumed > b->ring_bytes)
				return -ENOSPC;
		}
		const struct rb_step st = {
			.src = &pad,
			.dst = b->data + data_off,
			.lenq = 1,
			.active = pc->active,
			.bi = bi,
		};

		FDR_TESTPOINT("switch-pad");
		return rb_cmp_copy_store(rs, cpu, b, head, newhead, &st);
	} else {
		uint32_t pidx = idx == 0 ? pc->nr_subbufs - 1 : idx - 1;
		const unsigned char *prev = b->data + (size_t)pidx * ss;
		const struct fdr_abi_subbuf *ph = (const void *)prev;
		struct fdr_abi_subbuf h;
		uint64_t newhead, mirror[4];
		const struct rb_copy more = { mirror, &c->hdr_tag_a, 4 };

		h.pos = ph->pos + ss;
		h.cum = ph->cum + ((head & RB_NREC_MASK) >> 32);
		rb_calibration(&h, nv);
		h.reserved = 0;
		newhead = (head & ~RB_NREC_MASK) + FDR_SUBBUF_HDR;
		/* the mirror in c (see fdr-abi.h), written in order: tag_a, pos, cum, tag_b */
		mirror[0] = newhead;
		mirror[1] = h.pos;
		mirror[2] = h.cum;
		mirror[3] = newhead;
		const struct rb_step st = {
			.src = &h,
			.dst = b->data + data_off,
			.lenq = FDR_SUBBUF_HDR / 8,
			.more = &more,
			.active = pc->active,
			.bi = bi,
		};

		FDR_TESTPOINT("switch-header");
		return rb_cmp_copy_store(rs, cpu, b, head, newhead, &st);
	}
}

/*
 * A head that points past its buffer (rb_switch() refused it): shared memory was
 * overwritten, and the kernel's answer (RB_WARN_ON) is to stop recording there
 * and say so once, not to count a loss on every event. So CPU @cpu is switched
 * off in this mapping as a bad CPU is at map time: ss_mask 0 sends every append
 * to the slow path (the fast path's bounds check fails for any length), which
 * refuses it and counts it in dropped_no_slot (head_bad); the agent writes the
 * error_log entry once (ev_report_heads() in event.c). The data pointers and
 * sizes stay, so a writer that loaded them before still writes inside the
 * buffer. Async-signal-safe: atomics only; the first CPU's details are stored
 * for the agent, which makes the text.
 */
static void rb_head_corrupt(struct fdr_ring_map *m, uint32_t cpu, struct fdr_pcpu *pc, uint32_t bi)
{
	uint64_t head = __atomic_load_n(pc->buf[bi].head, __ATOMIC_RELAXED);
	uint32_t b;

	if (__atomic_exchange_n(&pc->head_bad, 1, __ATOMIC_RELAXED))
		return; /* another writer switched it off */
	for (b = 0; b < FDR_RING_BUFS; b++)
		__atomic_store_n(&pc->buf[b].ss_mask, 0, __ATOMIC_RELAXED);
	if (__atomic_fetch_add(&m->nr_head_bad, 1, __ATOMIC_RELAXED) == 0) {
		m->head_bad_cpu = cpu;
		m->head_bad_bi = bi;
		m->head_bad_value = head;
		/* release: the agent reads the three above after an acquire of this */
		__atomic_store_n(&m->head_bad_ready, 1, __ATOMIC_RELEASE);
	}
}

static inline __attribute__((always_inline)) int rb_write(struct fdr_session *s, uint32_t inst,
							  struct fdr_ring_map *m,
							  unsigned char *rec, size_t len, int nv)
{
	struct rseq *rs = rb_rseq_area();
	int tsc = s->ctl->ts_source == FDR_TS_TSC;
	int tries, ret = -EAGAIN, saved = nv ? 0 : errno; /* nv: no libc call */

	for (tries = 0; tries < 64; tries++) {
		uint32_t cpu = __atomic_load_n(&rs->cpu_id_start, __ATOMIC_RELAXED);
		struct fdr_pcpu *pc;

		if (cpu >= m->nr_cpus) {
			__atomic_fetch_add(&s->ctl->dropped_no_slot, 1, __ATOMIC_RELAXED);
			ret = -ENODEV;
			goto out;
		}
		pc = &m->pcpu[cpu];
		if (len > RB_MAX_LEN(pc)) {
			__atomic_fetch_add(&pc->cpu[0]->too_big, 1, __ATOMIC_RELAXED);
			ret = -E2BIG;
			goto out;
		}
		FDR_TESTPOINT("reserve");
		if (tsc) {
			ret = rb_append_tsc(fdr_rseq_off, cpu, pc, rec, len);
		} else {
			uint64_t ts =
				nv ? (uint64_t)fdr_vcall((void *)fdr_clock_mono_ns, 0, 0, 0, 0, 0) :
				     fdr_clock_mono_ns();

			memcpy(rec + 8, &ts, sizeof(ts));
			ret = rb_append_nots(fdr_rseq_off, cpu, pc, rec, len);
		}
		if (ret == RB_OK) {
			FDR_TESTPOINT("commit");
			goto out;
		}
		if (ret == RB_SLOW) {
			int overwrite;
			uint32_t bi;

			int off = !pc->nr_subbufs ||
				  __atomic_load_n(&pc->head_bad, __ATOMIC_RELAXED);

			if (__builtin_expect(off, 0)) {
				/* disabled at map time (rb_cpu_disable()) or since (rb_head_corrupt()) */
				__atomic_fetch_add(&s->ctl->dropped_no_slot, 1, __ATOMIC_RELAXED);
				ret = -EUCLEAN;
				goto out;
			}
			overwrite = s->ctl->instances[inst].options & FDR_OPT_OVERWRITE;
			bi = __atomic_load_n(pc->active, __ATOMIC_ACQUIRE) & 1;

			/*
			 * A swap between here and the step makes the step fail its check
			 * of the active index (see rb_cmp_copy_store()); the retry goes to
			 * the new live buffer.
			 */
			ret = rb_switch(rs, cpu, pc, bi, overwrite, nv);
			if (ret < 0) {
				/* -ENOSPC: full in discard mode; -EIO: a corrupted head */
				__atomic_fetch_add(&pc->cpu[bi]->dropped, 1, __ATOMIC_RELAXED);
				if (ret == -EIO)
					rb_head_corrupt(m, cpu, pc, bi);
				goto out;
			}
		}
		ret = -EAGAIN;
	}
	__atomic_fetch_add(&s->ctl->dropped_no_slot, 1, __ATOMIC_RELAXED);
out:
	if (!nv)
		errno = saved; /* nv: errno is libc's, and nothing here changed it */
	return ret;
}

/**
 * fdr_ring_write - append one record to this CPU's ring of an instance
 * @s: the session
 * @inst: instance index
 * @m: the instance's current ring mapping
 * @rec: record: 16 bytes of struct fdr_abi_rec, then the payload; writable
 * @len: total length, a multiple of 8
 *
 * Async-signal-safe, lock-free, never blocks. Returns 0, -ENOSPC (full, discard
 * mode), -E2BIG (larger than a sub-buffer), -ENODEV (CPU beyond the ring's CPUs),
 * -EAGAIN (gave up after repeated aborts), -EIO (this CPU's head pointed past its
 * buffer: the CPU is switched off, see rb_head_corrupt()), -EUCLEAN (this CPU's
 * buffer was disabled at map time, see fdr_ring_map_open(), or since by -EIO).
 * Every refusal is counted.
 */
int fdr_ring_write(struct fdr_session *s, uint32_t inst, struct fdr_ring_map *m, unsigned char *rec,
		   size_t len)
{
	if (fdr_rseq_ready() != 0) {
		__atomic_fetch_add(&s->ctl->dropped_no_slot, 1, __ATOMIC_RELAXED);
		return -ENOSYS;
	}
	return rb_write(s, inst, m, rec, len, 0);
}

/**
 * fdr_ring_write_nv - fdr_ring_write(), for code that must not touch a vector
 * register (event-nv.c): the same arguments and results. The clocks go
 * through fdr_vcall(); a thread whose rseq area is not registered yet, and
 * the build with test points, take fdr_ring_write() through it too.
 */
int fdr_ring_write_nv(struct fdr_session *s, uint32_t inst, struct fdr_ring_map *m,
		      unsigned char *rec, size_t len)
{
#ifndef FDR_TESTPOINTS
	if (__builtin_expect(
		    (int32_t)__atomic_load_n(&rb_rseq_area()->cpu_id, __ATOMIC_RELAXED) >= 0, 1))
		return rb_write(s, inst, m, rec, len, 1);
#endif
	return (int)fdr_vcall((void *)fdr_ring_write, (long)s, inst, (long)m, (long)rec, (long)len);
}
