/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * reloc.h - displaced instructions: decoded once, then relocated or emulated.
 *
 * Shared by the breakpoint engine (issue 15: one instruction, run out of line
 * after an int3) and the jump optimiser (issue 16: the instructions under a
 * 5-byte jmp, run in a trampoline). The essay is at the top of reloc.c.
 */
#ifndef FDR_PROBE_RELOC_H
#define FDR_PROBE_RELOC_H

#include <stddef.h>
#include <stdint.h>

#define FDR_RELOC_MAX_LEN 15 /* longest x86 instruction */
#define FDR_RELOC_SLOT_MAX 32 /* largest fdr_reloc_emit() output for one instruction */

enum fdr_reloc_kind {
	FDR_RELOC_COPY, /* runs anywhere once its RIP-relative operand (if any) is fixed */
	FDR_RELOC_JMP, /* jmp rel8/rel32: RIP = target */
	FDR_RELOC_JCC, /* jcc rel8/rel32: RIP = cond(eflags) ? target : next */
	FDR_RELOC_CALL, /* call rel32: push next; RIP = target */
	FDR_RELOC_CALL_IND, /* call r/m64: push next, then the same operand as a jmp r/m64 */
};

struct fdr_reloc_insn {
	uintptr_t addr; /* where the instruction is in the program */
	uint8_t bytes[FDR_RELOC_MAX_LEN]; /* its original bytes */
	uint8_t len;
	uint8_t kind; /* enum fdr_reloc_kind */
	uint8_t cond; /* FDR_RELOC_JCC: the condition, low 4 bits of the opcode */
	int8_t disp_off; /* offset of a RIP-relative disp32 in bytes, -1 if none */
	int8_t modrm_off; /* FDR_RELOC_CALL_IND: offset of the ModRM byte */
	uintptr_t target; /* JMP, JCC, CALL: the absolute branch target */
	uintptr_t rip_ref; /* the address a RIP-relative operand refers to */
	char mnemonic[24];
};

int fdr_reloc_decode(uintptr_t addr, const uint8_t *code, size_t avail, struct fdr_reloc_insn *out,
		     char *why, size_t n);
int fdr_reloc_length(const uint8_t *code, size_t avail, char *mnemonic, size_t n);
int fdr_reloc_emit(const struct fdr_reloc_insn *in, uintptr_t at, uintptr_t resume, uint8_t *buf,
		   size_t size);
int fdr_reloc_cond_true(unsigned int cond, uint64_t eflags);

#endif /* FDR_PROBE_RELOC_H */
