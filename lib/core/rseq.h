/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rseq.h - where this thread's rseq area is (rseq.c): what the ring writer's
 * critical sections (ring-fast.h, ring.c), the triggers (hooks.c) and the event
 * path (event.c) need of restartable sequences, and nothing else of those files.
 */
#ifndef FDR_RSEQ_H
#define FDR_RSEQ_H

#include <stddef.h>
#include <stdint.h>
#include <sys/rseq.h>

#include "core-local.h"

/* The signature before each abort handler, as the asm writes it (glibc's RSEQ_SIG). */
#define RSEQ_SIG_STR "0x53053053"

/*
 * fdr_rseq_off, set when libfdr loads: where the rseq area is, from the thread
 * pointer. glibc's __rseq_offset where glibc registers an area for every thread;
 * our own copy is one load, glibc's variable is reached through the GOT, two
 * loads in a row at the head of the event path's chain of loads. Where glibc
 * does not (glibc.pthread.rseq=0), the offset of libfdr's own area, which each
 * thread registers on its first event: fdr_rseq_ready().
 */
FDR_HIDDEN extern long fdr_rseq_off;
FDR_HIDDEN int fdr_rseq_ready(void);

/* This thread's rseq area: glibc's, or libfdr's own (see fdr_rseq_ready()). */
static inline struct rseq *rb_rseq_area(void)
{
	return (struct rseq *)((char *)__builtin_thread_pointer() + fdr_rseq_off);
}

/* This thread's rseq cpu_id_start, read %fs-relative at @off (fdr_rseq_off). */
static inline uint32_t rb_cpu_start(long off)
{
	uint32_t cpu;

	__asm__ volatile("movl %%fs:%c[f](%[off]), %[cpu]"
			 : [cpu] "=r"(cpu)
			 : [f] "i"(offsetof(struct rseq, cpu_id_start)), [off] "r"(off));
	return cpu;
}

/*
 * The frame of a critical section (the ring's in ring-fast.h, the probe
 * agent's hit count in lib/probe/agent.c). RB_CS_BEGIN: the section's
 * descriptor in __rseq_cs (start 1:, end 2:, abort 4:), its address stored in
 * this thread's rseq_cs (operand rs: the rseq area's offset from %fs), then the
 * check that the thread still runs on operand cpu. RB_CS_END: the end label and
 * the abort handler, behind the signature the kernel checks, which jumps to the
 * C label abort.
 */
#define RB_CS_BEGIN                          \
	".pushsection __rseq_cs, \"aw\"\n\t" \
	".balign 32\n\t"                     \
	"3:\n\t"                             \
	".long 0x0, 0x0\n\t"                 \
	".quad 1f, (2f - 1f), 4f\n\t"        \
	".popsection\n\t"                    \
	"leaq 3b(%%rip), %%rax\n\t"          \
	"movq %%rax, %%fs:8(%[rs])\n\t"      \
	"1:\n\t"                             \
	"cmpl %k[cpu], %%fs:4(%[rs])\n\t"    \
	"jnz 4f\n\t"
#define RB_CS_END                                 \
	"2:\n\t"                                  \
	".pushsection __rseq_failure, \"ax\"\n\t" \
	".byte 0x0f, 0xb9, 0x3d\n\t"              \
	".long " RSEQ_SIG_STR "\n\t"              \
	"4:\n\t"                                  \
	"jmp %l[abort]\n\t"                       \
	".popsection\n\t"

#endif /* FDR_RSEQ_H */
