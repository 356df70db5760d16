/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * trace-src.h - inside struct fdr_trace: each kind of source (a session's
 * instance, a trace.dat file) fills the operations; trace-src.c has the rest.
 */
#ifndef FDR_TRACE_SRC_H
#define FDR_TRACE_SRC_H

#include "fdr/fdr-trace.h"

struct fdr_trace_ops {
	int (*next)(struct fdr_trace *t, struct fdr_trace_rec *rec);
	size_t (*nr_events)(const struct fdr_trace *t);
	const struct fdr_abi_event *(*event_at)(const struct fdr_trace *t, size_t i);
	const struct fdr_abi_event *(*event)(const struct fdr_trace *t, uint32_t id);
	const char *(*comm)(const struct fdr_trace *t, int32_t pid, char *buf, size_t len);
	int32_t (*tgid)(const struct fdr_trace *t, int32_t pid); /* 0 if unknown; may be NULL */
	void (*close)(struct fdr_trace *t);
};

struct fdr_trace {
	const struct fdr_trace_ops *ops;
	struct fdr_trace_info info;
	void *priv;
};

/* Fill the uname and hostname parts of @info from this machine. */
void fdr_trace_info_local(struct fdr_trace_info *info);
/* The name trace_clock shows for an enum fdr_abi_clock ("local", "mono", ...). */
const char *fdr_trace_clock_name(uint32_t clock);
/* The enum fdr_abi_clock of a trace_clock name, or -1. */
int fdr_trace_clock_by_name(const char *name);

#endif /* FDR_TRACE_SRC_H */
