/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * regs.h - the registers a probe hit saw, as the fetch programs read them.
 *
 * Contract with the breakpoint engine (lib/probe, SIGTRAP handler): on a hit it
 * copies the interrupted context's general registers out of the ucontext
 * (uc_mcontext.gregs[REG_RAX] into gpr[FDR_REG_AX], and so on) before the
 * displaced instruction runs, and sets:
 *   gpr[FDR_REG_IP]  entry probe: the address of the probed instruction (the
 *                    int3's address, not the RIP after it); return probe: the
 *                    address the function returns to (what %ip shows then)
 *   gpr[FDR_REG_SP]  RSP as the probed instruction sees it
 *   gpr[FDR_REG_FLAGS] EFLAGS; gpr[FDR_REG_CS]/[FDR_REG_SS] from REG_CSGSFS
 *   probe_addr       the probed instruction's address (return probes: the
 *                    function's, the kernel's __probe_func)
 * and for a return probe gpr[FDR_REG_AX] is RAX at the return ($retval).
 * The fetch executor (fetch.c) only reads this struct; nothing in it is trusted
 * beyond being 64-bit words (an address read through it never faults).
 */
#ifndef FDR_PROBE_REGS_H
#define FDR_PROBE_REGS_H

#include <stdint.h>

/* Register numbers, in the kernel's x86-64 names for %REG (trace_probe). */
enum fdr_reg {
	FDR_REG_AX,
	FDR_REG_BX,
	FDR_REG_CX,
	FDR_REG_DX,
	FDR_REG_SI,
	FDR_REG_DI,
	FDR_REG_BP,
	FDR_REG_SP,
	FDR_REG_R8,
	FDR_REG_R9,
	FDR_REG_R10,
	FDR_REG_R11,
	FDR_REG_R12,
	FDR_REG_R13,
	FDR_REG_R14,
	FDR_REG_R15,
	FDR_REG_IP,
	FDR_REG_FLAGS,
	FDR_REG_CS,
	FDR_REG_SS,
	FDR_REG_NR
};

struct fdr_probe_regs {
	uint64_t gpr[FDR_REG_NR]; /* indexed by enum fdr_reg */
	uint64_t probe_addr; /* the probed instruction (entry) or function (return) */
};

#endif
