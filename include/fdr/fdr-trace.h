/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fdr-trace.h - a recorded trace as one source of records, whatever it was read
 * from: a live session's instance (its buffers or its snapshot) or a trace.dat
 * file. `fdr report`, `fdr export` and the text formats read through it.
 *
 * A source gives its events as struct fdr_abi_event descriptions (the same ones
 * the session registry holds, so fdr_format_body() prints any of them), its
 * pid->comm names, and its records merged in time order.
 */
#ifndef FDR_TRACE_H
#define FDR_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "fdr/fdr-abi.h"
#include "fdr/fdr-session.h"
#include "fdr/fdr-read.h"

#ifdef __cplusplus
extern "C" {
#endif

struct fdr_trace;

struct fdr_trace_info {
	uint32_t nr_cpus;
	uint32_t clock; /* enum fdr_abi_clock of the records' ts */
	uint32_t page_size; /* sub-buffer / page size of the source, bytes */
	uint32_t long_size; /* 8 */
	char clock_name[32]; /* "local", "mono", ... as trace_clock shows it */
	char origin[256]; /* session directory or file path */
	char hostname[65]; /* where the trace was recorded ("" if unknown) */
	char sysname[65]; /* uname: "Linux" */
	char release[65]; /* uname: kernel release */
	/*
	 * CLOCK_REALTIME ns at ts = 0 (0 if unknown): a record's wall-clock time
	 * is offset_ns + ts in ns (ts * 10^9 / ts_hz for a clock that counts).
	 */
	uint64_t offset_ns;
	/* ticks per second of ts: 10^9 for ns clocks, the TSC's rate for x86-tsc, 0 unknown */
	uint64_t ts_hz;
};

struct fdr_trace_rec {
	uint32_t cpu;
	uint32_t len; /* payload bytes, common header included */
	uint64_t ts; /* in the source's clock: ns for ns clocks, else raw counts */
	const unsigned char *payload; /* valid until the next fdr_trace_next() */
	uint64_t lost_before; /* records lost on this CPU just before this one; UINT64_MAX:
			       some, count unknown (a trace.dat page without the count) */
	const struct fdr_abi_event *ev; /* NULL if the source has no such event id */
};

/* flags: FDR_READ_SNAPSHOT reads the snapshot; FDR_READ_CONSUME consumes */
FDR_API int fdr_trace_open_session(struct fdr_session *s, uint32_t inst, unsigned flags,
				   struct fdr_trace **out);
/*
 * Opens a trace.dat file (versions 6 and 7 without compression). On a malformed
 * file returns -EINVAL and, if @err is not NULL, a message saying what was
 * expected, what was found and at which offset.
 */
FDR_API int fdr_trace_open_file(const char *path, struct fdr_trace **out, struct fdr_buf *err);
/*
 * With FDR_TRACE_ALL_BUFFERS, every buffer (instance) of the file, merged by
 * time: `fdr record -k` writes fdr's CPUs as the top buffer and the linked
 * kernel instance's as a second one. Without flags, as fdr_trace_open_file().
 */
#define FDR_TRACE_ALL_BUFFERS (1u << 0)
FDR_API int fdr_trace_open_file_ex(const char *path, unsigned flags, struct fdr_trace **out,
				   struct fdr_buf *err);
/*
 * The buffers a source reads: 1 for a session's instance or a file opened
 * without FDR_TRACE_ALL_BUFFERS. Buffer 0 is the one read first (the file's
 * top buffer, fdr's own in `fdr record -k` output); the name of each is its
 * trace.dat instance name ("" for the top buffer), NULL past the last.
 */
FDR_API uint32_t fdr_trace_nr_buffers(const struct fdr_trace *t);
FDR_API const char *fdr_trace_buffer_name(const struct fdr_trace *t, uint32_t i);
/* The buffer (0..fdr_trace_nr_buffers()-1) that @rec, just returned by fdr_trace_next(), came from. */
FDR_API uint32_t fdr_trace_rec_buffer(const struct fdr_trace *t, const struct fdr_trace_rec *rec);
FDR_API void fdr_trace_close(struct fdr_trace *t);
FDR_API const struct fdr_trace_info *fdr_trace_get_info(const struct fdr_trace *t);
/* Returns 1 and fills @rec, 0 at the end, or a negative errno. */
FDR_API int fdr_trace_next(struct fdr_trace *t, struct fdr_trace_rec *rec);
/* Events: by index (0..fdr_trace_nr_events()-1) and by id; NULL if none. */
FDR_API size_t fdr_trace_nr_events(const struct fdr_trace *t);
FDR_API const struct fdr_abi_event *fdr_trace_event_at(const struct fdr_trace *t, size_t i);
FDR_API const struct fdr_abi_event *fdr_trace_event(const struct fdr_trace *t, uint32_t id);
/* The command name of @pid ("<...>" if unknown), in @buf. */
FDR_API const char *fdr_trace_comm(const struct fdr_trace *t, int32_t pid, char *buf, size_t len);
/*
 * The process (thread group) of thread @pid: from the session's saved_tgids;
 * @pid itself where it is not known (trace.dat files carry no tgids).
 */
FDR_API int32_t fdr_trace_tgid(const struct fdr_trace *t, int32_t pid);
/*
 * One record as a line of the `trace` file, newline included:
 * "            demo-1234    [001] ..... 12.345678: request: status=200 ..."
 */
FDR_API int fdr_trace_format(const struct fdr_trace *t, const struct fdr_trace_rec *rec,
			     struct fdr_buf *b);

/* The name trace_clock shows for an enum fdr_abi_clock ("local", "mono", ...). */
FDR_API const char *fdr_trace_clock_name(uint32_t clock);
/* The enum fdr_abi_clock of a trace_clock name, or -1. */
FDR_API int fdr_trace_clock_by_name(const char *name);

#ifdef __cplusplus
}
#endif

#endif /* FDR_TRACE_H */
