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

/* jump.c, called by engine.c */
void fdr_jump_orig_bytes(uintptr_t addr, uint8_t *buf, size_t len);
int fdr_jump_before_arm(uintptr_t addr);
int fdr_jump_before_disarm(struct fdr_probe_site *s);

/* engine.c, called by jump.c */
size_t fdr_probe_read_orig(uintptr_t addr, uint8_t *buf, size_t len);
unsigned int fdr_probe_site_index(const struct fdr_probe_site *s);
struct fdr_probe_site *fdr_probe_site_nth(unsigned int i);
uintptr_t fdr_probe_site_addr(const struct fdr_probe_site *s);
int fdr_probe_site_armed(const struct fdr_probe_site *s);
int fdr_probe_site_is_return(const struct fdr_probe_site *s);
const struct fdr_reloc_insn *fdr_probe_site_insn(const struct fdr_probe_site *s);
uintptr_t fdr_probe_site_slot(const struct fdr_probe_site *s);
void fdr_probe_site_set_resume(struct fdr_probe_site *s, uintptr_t resume);
void fdr_probe_site_wait_idle(struct fdr_probe_site *s);
int fdr_probe_in_handler(void);
void fdr_probe_site_fire(struct fdr_probe_site *s, const struct fdr_probe_regs *regs);

#endif /* FDR_PROBE_JUMP_H */
