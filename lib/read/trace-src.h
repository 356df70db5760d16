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
	/* buffers (trace.dat instances); NULL: one, unnamed */
	uint32_t (*nr_buffers)(const struct fdr_trace *t);
	const char *(*buffer_name)(const struct fdr_trace *t, uint32_t i);
	uint32_t (*rec_buffer)(const struct fdr_trace *t, const struct fdr_trace_rec *rec);
	/* publish what was read as consumed (a FDR_READ_HOLD reader); NULL: nothing to do */
	void (*commit)(struct fdr_trace *t);
	void (*close)(struct fdr_trace *t);
};

struct fdr_trace {
	const struct fdr_trace_ops *ops;
	struct fdr_trace_info info;
	void *priv;
};

/*
 * The wall-clock time of ts 0 (@offset_ns, 0 if unknown) and the rate of ts
 * (@ts_hz, 0 if unknown) of a session's records on trace clock @clock, from
 * the session's calibration point.
 */
void fdr_trace_clock_point(const struct fdr_abi_control *ctl, uint32_t clock, uint64_t *offset_ns,
			   uint64_t *ts_hz);
/* fdr's own trace.dat option (trace-cmd skips it): "realtime_ns_at_0=N\nts_hz=N\n" */
#define FDR_TD_OPT_CLOCK 0x4644

/* Fill the uname and hostname parts of @info from this machine. */
void fdr_trace_info_local(struct fdr_trace_info *info);

/*
 * A session opened with FDR_READ_CONSUME | FDR_READ_HOLD: what was read so far
 * is published as consumed (fdr_reader_commit()); other sources: nothing.
 */
__attribute__((visibility("hidden"))) void fdr_trace_commit(struct fdr_trace *t);

/*
 * A source over one CPU of @t, a session's snapshot, for reading its CPUs in
 * threads side by side; -EOPNOTSUPP for another source (trace-src.c).
 */
__attribute__((visibility("hidden"))) int fdr_trace_split_cpu(struct fdr_trace *t, uint32_t cpu,
							      struct fdr_trace **out);

#endif /* FDR_TRACE_SRC_H */
