/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * jump.h - jump-optimised probes (lib/probe/jump.c): what the engine calls.
 * Everything here runs under the engine lock. docs/design/probes.md, "Jump probes".
 */
#ifndef FDR_PROBE_JUMP_H
#define FDR_PROBE_JUMP_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#define FDR_PROBE_SITES 4096u /* engine.c's site table: jump.c keeps one entry per site */

struct fdr_probe_site;
struct fdr_probe_regs;
struct fdr_reloc_insn;

/* jump.c, called by engine.c (sites by their index in engine.c's table) */
void fdr_jump_orig_bytes(uintptr_t addr, uint8_t *buf, size_t len);
int fdr_jump_before_arm(uintptr_t addr);
int fdr_jump_before_disarm(unsigned int idx);
void fdr_jump_forget(unsigned int idx);
int fdr_jump_patched(uintptr_t addr);

/* engine.c, called by jump.c */
size_t fdr_probe_read_orig(uintptr_t addr, uint8_t *buf, size_t len);
unsigned int fdr_probe_index(const struct fdr_probe_site *p);
int fdr_probe_is_on(const struct fdr_probe_site *p);
unsigned int fdr_probe_nused(void);
unsigned int fdr_probe_used_at(unsigned int k);
uintptr_t fdr_probe_addr_at(unsigned int i);
int fdr_probe_armed_at(unsigned int i);
const struct fdr_reloc_insn *fdr_probe_insn_at(unsigned int i);
uintptr_t fdr_probe_slot_at(unsigned int i);
void *fdr_probe_site_at(unsigned int i);
void fdr_probe_set_resume_at(unsigned int i, uintptr_t resume);
void fdr_probe_wait_idle_at(unsigned int i);
int fdr_probe_in_handler(void);
/*
 * Set by fdr_probe_fire() in the FLAGS it was given where it hijacked the
 * return address: bit 31, reserved (0) in the real register; the trampoline
 * then calls the displaced instructions (jump.c, jp_emit_slow())
 */
#define FDR_PROBE_FLAGS_CALL (1ull << 31)
void fdr_probe_fire(void *site, struct fdr_probe_regs *regs);
void fdr_probe_infl_enable(void);

#endif /* FDR_PROBE_JUMP_H */
