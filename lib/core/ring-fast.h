/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * ring-fast.h - the rseq fast path of the ring writer, inlined into the event path.
 * See ring.c for the protocol.
 */
#ifndef FDR_RING_FAST_H
#define FDR_RING_FAST_H

#include "core-local.h"
#include "rseq.h"

#if !defined(__x86_64__)
#error "fdr's ring writer is implemented for x86_64 only (rseq critical sections in asm)"
#endif

/*
 * A record never ends exactly at the end of its sub-buffer: at least one 8-byte
 * padding record follows the last one. So the fast path never moves head to a
 * sub-buffer boundary; only step 1 does (checking room in discard mode, bumping
 * switch_gen, wrapping at the end of the ring). A record of @len fits at offset
 * off of its sub-buffer (off > 0: the header is written) if off + len + 8 <=
 * subbuf_size, i.e. off + len + 7 <= ss_mask: the fast path checks that, for any
 * len (a record too big for any sub-buffer fails it and goes to the slow path,
 * which counts it in too_big).
 */
#define RB_MAX_LEN(pc) ((pc)->subbuf_size - FDR_SUBBUF_HDR - 8)

/* Return codes of the critical sections. */
enum { RB_OK = 0, RB_ABORT = 1, RB_SLOW = 2, RB_CMPFAIL = 3 };

/* head bits 32-47: records in the current sub-buffer (kept through step 1 of a switch) */
#define RB_NREC_MASK (0xffffull << 32)

/*
 * Fast path, one rseq critical section. @pc is this CPU's struct fdr_pcpu. The
 * section reads the CPU's active word (in buffer 0's struct fdr_abi_cpu) to pick
 * the live buffer, so a writer that started before a snapshot swap either commits
 * into the old buffer before it is read (readers of a snapshot wait for that, see
 * reader.c) or is interrupted and retries in the new buffer. It loads both
 * buffers' heads and data pointers right after the active word (program order:
 * after it, which x86 keeps for loads) and keeps the active ones with cmovs:
 * the chain of dependent loads from @pc to the record's address is two deep
 * instead of five (pointer to the active word, the word, pointer to the head,
 * the head, then the data pointer): 25.7 -> 23.5 ns an event for the heads,
 * medians of 21 interleaved runs. ss_mask and ring_bytes are read from buffer
 * 0: both buffers have the same geometry (fdr_ring_map_open() checks it; a
 * resize makes a new ring file). It copies @len bytes (a multiple of 8, at least
 * 16) from @src to head if the record fits in the current sub-buffer, and
 * publishes it with the single store of the new head, which also counts the
 * record (bits 32-47, see fdr-abi.h). STAMP_READ reads the TSC first thing in
 * the section (its latency overlaps the rest; inside the section, so timestamps
 * never go backwards on a CPU) and STAMP_STORE writes it at offset 8 of the
 * copied record; without them the caller put it in src+8. @rs is the rseq
 * area's offset from the thread pointer (%fs). A head whose offset would put the
 * record outside the buffer (shared memory is not trusted, even by writers) goes
 * to the slow path, which refuses it.
 */
#define RB_STAMP_TSC_READ     \
	"rdtsc\n\t"           \
	"shlq $32, %%rdx\n\t" \
	"orq %%rax, %%rdx\n\t"
#define RB_STAMP_TSC_STORE       \
	"subq %[len], %%rdi\n\t" \
	"movq %%rdx, 8(%%rdi)\n\t"
#define RB_STAMP_NONE ""

#define RB_APPEND_ASM(STAMP_READ, STAMP_STORE)                                                     \
	__asm__ goto(RB_CS_BEGIN STAMP_READ "movq 0(%[pc]), %%rsi\n\t"                             \
					    "movq 32(%[pc]), %%rdi\n\t"                            \
					    "movl %c[aoff](%%rsi), %%r9d\n\t"                      \
					    "movq (%%rsi), %%r8\n\t"                               \
					    "movq (%%rdi), %%rcx\n\t"                              \
					    "movq 8(%[pc]), %%rsi\n\t"                             \
					    "movq 40(%[pc]), %%rdi\n\t"                            \
					    "andl $1, %%r9d\n\t"                                   \
					    "cmovnzq %%rcx, %%r8\n\t"                              \
					    "cmovnzq %%rdi, %%rsi\n\t"                             \
					    "shll $5, %%r9d\n\t"                                   \
					    "addq %[pc], %%r9\n\t"                                 \
					    "movl %%r8d, %%ecx\n\t"                                \
					    "andq 16(%[pc]), %%rcx\n\t"                            \
					    "jz %l[slow]\n\t"                                      \
					    "leaq 7(%%rcx,%[len]), %%rcx\n\t"                      \
					    "cmpq 16(%[pc]), %%rcx\n\t"                            \
					    "ja %l[slow]\n\t"                                      \
					    "movl %%r8d, %%edi\n\t"                                \
					    "leaq (%%rdi,%[len]), %%rax\n\t"                       \
					    "cmpq 24(%[pc]), %%rax\n\t"                            \
					    "ja %l[slow]\n\t"                                      \
					    "addq %%rsi, %%rdi\n\t"                                \
					    "movq %[src], %%rsi\n\t"                               \
					    "movq %[len], %%rcx\n\t"                               \
					    "shrq $3, %%rcx\n\t"                                   \
					    "5:\n\t"                                               \
					    "movq (%%rsi), %%rax\n\t"                              \
					    "movq %%rax, (%%rdi)\n\t"                              \
					    "addq $8, %%rsi\n\t"                                   \
					    "addq $8, %%rdi\n\t"                                   \
					    "decq %%rcx\n\t"                                       \
					    "jnz 5b\n\t" STAMP_STORE "rolq $32, %%r8\n\t"          \
					    "incq %%r8\n\t"                                        \
					    "rolq $32, %%r8\n\t"                                   \
					    "addq %[len], %%r8\n\t"                                \
					    "movq 0(%%r9), %%rsi\n\t"                              \
					    "movq %%r8, (%%rsi)\n\t" RB_CS_END                     \
		     :                                                                             \
		     : [rs] "r"(rs), [cpu] "r"(cpu), [pc] "r"(pc), [src] "r"(src), [len] "r"(len), \
		       [aoff] "i"(offsetof(struct fdr_abi_cpu, active))                            \
		     : "rax", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "memory", "cc"               \
		     : abort, slow)

static inline int rb_append_tsc(long rs, uint32_t cpu, struct fdr_pcpu *pc, unsigned char *src,
				uint64_t len)
{
	RB_APPEND_ASM(RB_STAMP_TSC_READ, RB_STAMP_TSC_STORE);
	return RB_OK;
abort:
	return RB_ABORT;
slow:
	return RB_SLOW;
}

/* The same without rdtsc: the caller stored the timestamp in src+8. */
static inline int rb_append_nots(long rs, uint32_t cpu, struct fdr_pcpu *pc, unsigned char *src,
				 uint64_t len)
{
	RB_APPEND_ASM(RB_STAMP_NONE, RB_STAMP_NONE);
	return RB_OK;
abort:
	return RB_ABORT;
slow:
	return RB_SLOW;
}

/*
 * The event path's own critical section (fdr_event_commit() in event.c), for
 * records of 2 to 16 words in rdtsc mode: the protocol of RB_APPEND_ASM with the
 * copy unrolled (NW words; the timestamp's word is not copied, it is stored)
 * and with as few registers as it can do with: rs and cpu are reused as scratch
 * once the section has compared the CPU, t is scratch, and the data pointer is
 * read after the active word instead of both being loaded. The event path then
 * keeps almost everything in call-clobbered registers and saves only two (the
 * version with the loop and seven clobbered registers pushed and popped six).
 * Measured with the rest of that path, in fdr-bench ns-int3's chunks: 18.8 ->
 * 16.3 ns an event in the machine's fast mode, 30.6 -> 26.9 ns in its slow
 * one (p10 and p90 of 41 chunks, medians of 10 interleaved runs).
 */
#define RB_SMALL_ASM(NW)                                                                         \
	__asm__ volatile goto(                                                                   \
		RB_CS_BEGIN "rdtsc\n\t"                                                          \
			    "shlq $32, %%rdx\n\t"                                                \
			    "orq %%rax, %%rdx\n\t"                                               \
			    "movq 0(%[pc]), %%rax\n\t"                                           \
			    "movq 32(%[pc]), %[t]\n\t"                                           \
			    "movl %c[aoff](%%rax), %k[cpu]\n\t"                                  \
			    "movq (%%rax), %%rax\n\t"                                            \
			    "movq (%[t]), %[t]\n\t"                                              \
			    "andl $1, %k[cpu]\n\t"                                               \
			    "cmovnzq %[t], %%rax\n\t"                                            \
			    "shll $5, %k[cpu]\n\t"                                               \
			    "addq %[pc], %[cpu]\n\t"                                             \
			    "movl %%eax, %k[t]\n\t"                                              \
			    "andq 16(%[pc]), %[t]\n\t"                                           \
			    "jz %l[slow]\n\t"                                                    \
			    "leaq 7+8*" #NW "(%[t]), %[t]\n\t"                                   \
			    "cmpq 16(%[pc]), %[t]\n\t"                                           \
			    "ja %l[slow]\n\t"                                                    \
			    "movl %%eax, %k[t]\n\t"                                              \
			    "leaq 8*" #NW "(%[t]), %[rs]\n\t"                                    \
			    "cmpq 24(%[pc]), %[rs]\n\t"                                          \
			    "ja %l[slow]\n\t"                                                    \
			    "addq 8(%[cpu]), %[t]\n\t"                                           \
			    ".set .Lrb_o, 0\n\t"                                                 \
			    ".rept " #NW "\n\t"                                                  \
			    ".if .Lrb_o - 8\n\t"                                                 \
			    "movq .Lrb_o-16(%[src]), %[rs]\n\t"                                  \
			    "movq %[rs], .Lrb_o(%[t])\n\t"                                       \
			    ".endif\n\t"                                                         \
			    ".set .Lrb_o, .Lrb_o + 8\n\t"                                        \
			    ".endr\n\t"                                                          \
			    "movq %%rdx, 8(%[t])\n\t"                                            \
			    "movabsq $(1 << 32) + 8*" #NW ", %%rdx\n\t"                          \
			    "addq %%rdx, %%rax\n\t"                                              \
			    "movq 0(%[cpu]), %[t]\n\t"                                           \
			    "movq %%rax, (%[t])\n\t" RB_CS_END                                   \
		: [rs] "+&r"(rs), [cpu] "+&r"(cpu), [t] "=&r"(t)                                 \
		: [pc] "r"(pc), [src] "r"(src), [aoff] "i"(offsetof(struct fdr_abi_cpu, active)) \
		: "rax", "rdx", "memory", "cc"                                                   \
		: abort, slow)
_Static_assert(sizeof(struct fdr_abi_rec) == 16, "RB_SMALL_ASM copies from src - 16");
#define RB_SMALL_MAX 128 /* bytes: the largest record rb_append_small() takes */
#define RB_SMALL_CASE(NW)         \
	case (NW)*8:              \
		RB_SMALL_ASM(NW); \
		return RB_OK;

/*
 * rb_append_small - the event path's critical section for a record of @len bytes,
 * 16 to 128 (rdtsc mode; see RB_SMALL_ASM), that starts 16 bytes before @src
 * (the payload: one register for both). @len must be a multiple of 8 from 16 to
 * RB_SMALL_MAX: the caller checks (so the dispatch needs no range check).
 * Returns RB_OK, RB_ABORT (preempted, migrated or signalled: try again), or
 * RB_SLOW (the record does not fit in the current sub-buffer, or the head is out
 * of bounds: fdr_ring_write() handles it).
 */
static inline __attribute__((always_inline)) int
rb_append_small(uint64_t rs, uint64_t cpu, struct fdr_pcpu *pc, unsigned char *src, uint64_t len)
{
	uint64_t t;

	switch (len) {
		RB_SMALL_CASE(2)
		RB_SMALL_CASE(3)
		RB_SMALL_CASE(4)
		RB_SMALL_CASE(5)
		RB_SMALL_CASE(6)
		RB_SMALL_CASE(7)
		RB_SMALL_CASE(8)
		RB_SMALL_CASE(9)
		RB_SMALL_CASE(10)
		RB_SMALL_CASE(11)
		RB_SMALL_CASE(12)
		RB_SMALL_CASE(13)
		RB_SMALL_CASE(14)
		RB_SMALL_CASE(15)
		RB_SMALL_CASE(16)
	default:
		__builtin_unreachable(); /* the callers check @len */
	}
abort:
	return RB_ABORT;
slow:
	return RB_SLOW;
}

/* Set at attach: record timestamps are rdtsc (1) or CLOCK_MONOTONIC (0). */
FDR_HIDDEN extern int fdr_ring_tsc;
/*
 * fdr_ring_write_fast - the common case inline: rdtsc mode, the record fits in the
 * current sub-buffer and no preemption hits the critical section. Everything else
 * goes to fdr_ring_write().
 */
static inline __attribute__((always_inline)) int fdr_ring_write_fast(struct fdr_session *s,
								     uint32_t inst,
								     struct fdr_ring_map *m,
								     unsigned char *rec, size_t len)
{
	long rs = fdr_rseq_off;
	uint32_t cpu = rb_cpu_start(rs);

#ifdef FDR_TESTPOINTS
	cpu = UINT32_MAX; /* the test build always takes the path with test points */
#endif
	if (__builtin_expect(cpu < m->nr_cpus && fdr_ring_tsc, 1)) {
		struct fdr_pcpu *pc = &m->pcpu[cpu];

		if (rb_append_tsc(rs, cpu, pc, rec, len) == RB_OK)
			return 0;
	}
	return fdr_ring_write(s, inst, m, rec, len);
}

#endif /* FDR_RING_FAST_H */
