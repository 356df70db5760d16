/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * probes.h - the control side of dynamic probes: uprobe_events and
 * dynamic_events lines applied to the session's probes file and event registry,
 * their read-back and uprobe_profile (lib/ctl/probes.c, docs/design/uprobes.md).
 * Internal to libfdr-ctl.
 */
#ifndef FDR_CTL_PROBES_H
#define FDR_CTL_PROBES_H

#include "ctl-local.h"
#include "ctl/uprobe.h"

/*
 * What a refused line says: errno, message and caret position (in @cmd, the
 * line made a command as fdr_uprobe_command() makes it), for error_log under
 * "trace_uprobe".
 */
struct fdr_probes_err {
	int code; /* negative errno */
	int pos; /* -1: no caret */
	char msg[256];
	char cmd[512];
};

FDR_CTL_HIDDEN int fdr_probes_line(struct fdr_session *s, const char *line,
				   struct fdr_probes_err *err);
FDR_CTL_HIDDEN int fdr_probes_clear(struct fdr_session *s, struct fdr_probes_err *err);
FDR_CTL_HIDDEN int fdr_probes_render(struct fdr_session *s, struct fdr_buf *b);
FDR_CTL_HIDDEN int fdr_probes_profile(struct fdr_session *s, struct fdr_buf *b);

#endif
