/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ctl-local.h - libfdr-ctl internals shared by the files of lib/ctl. */
#ifndef FDR_CTL_LOCAL_H
#define FDR_CTL_LOCAL_H

#include "fdr/fdr-ctl.h"
#include "fdr/fdr-read.h"

#define FDR_CTL_HIDDEN __attribute__((visibility("hidden")))

/* hooks-ctl.c: filters, triggers, soft mode (lock held where it says so) */
FDR_CTL_HIDDEN void fdr_hooks_recount(struct fdr_abi_control *c);
FDR_CTL_HIDDEN int fdr_hooks_filter_set(struct fdr_abi_control *c, uint32_t inst,
					const struct fdr_abi_event *e, const char *text,
					int sys_error, const char **msg, int *pos);
FDR_CTL_HIDDEN int fdr_hooks_filter_text(const struct fdr_abi_control *c, uint32_t inst,
					 const struct fdr_abi_event *e, struct fdr_buf *b);
FDR_CTL_HIDDEN int fdr_hooks_trigger_cmd(struct fdr_session *s, uint32_t inst,
					 const struct fdr_abi_event *e, const char *cmd, char *msg,
					 size_t msg_len, int *pos);
FDR_CTL_HIDDEN int fdr_hooks_trigger_text(const struct fdr_abi_control *c, uint32_t inst,
					  const struct fdr_abi_event *e, struct fdr_buf *b);
FDR_CTL_HIDDEN int fdr_hooks_soft(const struct fdr_abi_control *c, uint32_t inst,
				  const struct fdr_abi_event *e);
FDR_CTL_HIDDEN void fdr_hooks_instance_clear(struct fdr_abi_control *c, uint32_t inst);
FDR_CTL_HIDDEN int fdr_hooks_event_busy(const struct fdr_abi_control *c, uint32_t es);
FDR_CTL_HIDDEN void fdr_hooks_event_clear(struct fdr_abi_control *c, uint32_t es);

#endif /* FDR_CTL_LOCAL_H */
