/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * probe-agent.h - the probe agent (lib/probe/agent.c): arms, in this process,
 * the locations of the session's probes file. Called by libfdr's agent thread
 * through dlsym(); nothing here is API. docs/design/probes.md, "The probe agent".
 */
#ifndef FDR_PROBE_AGENT_H
#define FDR_PROBE_AGENT_H

#include <stdint.h>

struct fdr_session;

void fdr_probe_agent_sync(struct fdr_session *s);
/* locations armed in this process now (tests) */
unsigned int fdr_probe_agent_armed(void);
/* fdr attach's and fdr detach's entries (called by the code they inject) */
int fdr_probe_attach(const char *dir);
int fdr_probe_detach(void);

/* elf-func.c */
struct stat;
int fdr_elf_func_at(int fd, const struct stat *st, uint64_t offset, uint64_t *vaddr, uint64_t *func,
		    uint64_t *func_len);

#endif
