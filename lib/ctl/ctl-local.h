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

/* kmerge.c: a linked session's trace and trace_pipe with the kernel instance's lines */
struct fdr_kmerge;
FDR_CTL_HIDDEN void fdr_ctl_compact(struct fdr_buf *b, size_t *off);
FDR_CTL_HIDDEN int fdr_kmerge_open(struct fdr_session *s, int cpu, int consuming,
				   struct fdr_kmerge **out, char *why, size_t why_len);
FDR_CTL_HIDDEN void fdr_kmerge_close(struct fdr_kmerge *m);
FDR_CTL_HIDDEN int fdr_kmerge_header(const struct fdr_kmerge *m, struct fdr_buf *out);
FDR_CTL_HIDDEN struct fdr_buf *fdr_kmerge_fdr_buf(struct fdr_kmerge *m);
FDR_CTL_HIDDEN void fdr_kmerge_fdr_end(struct fdr_kmerge *m);
FDR_CTL_HIDDEN int fdr_kmerge_step(struct fdr_kmerge *m, struct fdr_buf *out, size_t want,
				   int flush, int *need_fdr);
FDR_CTL_HIDDEN int fdr_kmerge_end(struct fdr_kmerge *m);
FDR_CTL_HIDDEN int fdr_kmerge_pending(const struct fdr_kmerge *m);
FDR_CTL_HIDDEN int fdr_kmerge_clear(struct fdr_session *s, int cpu);

#endif /* FDR_CTL_LOCAL_H */
