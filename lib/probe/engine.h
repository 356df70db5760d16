/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * engine.h - libfdr-probe's breakpoint engine (x86-64): internal API.
 *
 * libfdr-probe is loaded only by processes that use dynamic probes (linked,
 * LD_PRELOADed or brought in by "fdr attach"); libfdr never links it. The engine
 * puts an int3 on an instruction boundary, handles the SIGTRAP in the process,
 * calls a handler with the registers, and resumes by running the displaced
 * instruction out of line (relocated, lib/probe/reloc.c) or by emulating it.
 * docs/design/probes.md explains patching, the XOL area, relocation, signal
 * sharing and the disarm race. Each function's contract is in engine.c.
 */
#ifndef FDR_PROBE_ENGINE_H
#define FDR_PROBE_ENGINE_H

#include <stddef.h>
#include <stdint.h>

/*
 * The registers at a probe hit: struct fdr_probe_regs of the fetch side
 * (regs.h). The handler fills gpr[] from the ucontext: FDR_REG_IP is the probed
 * address (not the RIP after the int3), FDR_REG_SP the stack pointer the probed
 * instruction sees, CS and SS from REG_CSGSFS; probe_addr is the probed address.
 */
#include "regs.h"

struct fdr_probe_site;

/* Called on each hit, in the SIGTRAP handler: async-signal-safe code only. */
typedef void (*fdr_probe_handler)(const struct fdr_probe_regs *regs, void *arg);

int fdr_probe_check(uintptr_t func_start, size_t func_len, uintptr_t addr, char *why, size_t n);
int fdr_probe_arm(uintptr_t addr, fdr_probe_handler fn, void *arg, struct fdr_probe_site **out);
/* fdr_probe_arm_flags(): FDR_PROBE_ARM_RETURN makes a return probe (engine.c, "Return probes") */
#define FDR_PROBE_ARM_RETURN 1u
/* ... and FDR_PROBE_ARM_NOVEC: the handler touches no vector register (engine.c) */
#define FDR_PROBE_ARM_NOVEC 2u
/* ... and FDR_PROBE_ARM_NOCOUNT: fdr_probe_site_hits() not kept (the handler counts) */
#define FDR_PROBE_ARM_NOCOUNT 4u
/*
 * ... and FDR_PROBE_ARM_RECORD: @arg is a struct fdr_probe_rec whose program
 * has the table form (record.h); a jump hit of the address's only probe
 * writes the record inline instead of calling @fn, which must do the same
 */
#define FDR_PROBE_ARM_RECORD 8u
int fdr_probe_arm_flags(uintptr_t addr, unsigned int flags, fdr_probe_handler fn, void *arg,
			struct fdr_probe_site **out);
int fdr_probe_disarm(struct fdr_probe_site *site);
/* fdr_probe_forget(): a site whose text was unmapped (dlclose) is dropped without a write */
int fdr_probe_forget(struct fdr_probe_site *site);
uint64_t fdr_probe_site_hits(const struct fdr_probe_site *site);
uint64_t fdr_probe_site_misses(const struct fdr_probe_site *site);
unsigned int fdr_probe_ret_pending(unsigned int *table);

/* Jump optimisation of an armed entry probe (jump.c, docs/design/probes.md "Jump probes") */
int fdr_probe_optimize(struct fdr_probe_site *site, uintptr_t func_start, size_t func_len,
		       char *why, size_t n);
int fdr_probe_site_optimized(const struct fdr_probe_site *site);
int fdr_probe_jump_check(uintptr_t func_start, size_t func_len, uintptr_t addr, char *why,
			 size_t n);
int fdr_probe_set_optimize(int on);
int fdr_probe_optimize_enabled(void);

/* How text is written (docs/design/probes.md, "Patching"). */
enum fdr_probe_patch_method {
	FDR_PROBE_PATCH_AUTO = 0, /* /proc/self/mem, else mremap */
	FDR_PROBE_PATCH_MEM, /* pwrite to /proc/self/mem only */
	FDR_PROBE_PATCH_MREMAP, /* a new R-X page moved over the old one only */
};
int fdr_probe_set_patch_method(enum fdr_probe_patch_method m);
enum fdr_probe_patch_method fdr_probe_patch_method_used(void);

#endif /* FDR_PROBE_ENGINE_H */
