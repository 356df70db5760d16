/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * tracedat.h - inside the trace.dat reader (tracedat-read.c) and writer
 * (tracedat-write.c): trace-cmd's option ids, and the entry points the fuzz
 * target and the format-file tests use besides fdr_trace_open_file(). (The
 * live trace.dat writer the CLI uses is public: fdr-tracedat.h.)
 */
#ifndef FDR_CTL_TRACEDAT_H
#define FDR_CTL_TRACEDAT_H

#include "trace-src.h"
#include "fdr/fdr-tracedat.h"

/* trace-cmd's option ids (its trace-cmd-private.h), those fdr reads or writes */
enum {
	TD_OPT_DONE = 0,
	TD_OPT_DATE = 1,
	TD_OPT_CPUSTAT = 2,
	TD_OPT_BUFFER = 3,
	TD_OPT_TRACECLOCK = 4,
	TD_OPT_UNAME = 5,
	TD_OPT_OFFSET = 7,
	TD_OPT_CPUCOUNT = 8,
	TD_OPT_VERSION = 9,
	TD_OPT_TSC2NSEC = 14,
	TD_OPT_HEADER_INFO = 16,
	TD_OPT_FTRACE_EVENTS = 17,
	TD_OPT_EVENT_FORMATS = 18,
	TD_OPT_KALLSYMS = 19,
	TD_OPT_PRINTK = 20,
	TD_OPT_CMDLINES = 21,
	TD_OPT_BUFFER_TEXT = 22,
	TD_OPT_NR_SECTIONS = 26,
	/* fdr's own (trace-src.h): the wall-clock time of ts 0 and the clock's rate */
	TD_OPT_FDR_CLOCK = FDR_TD_OPT_CLOCK,
};

/*
 * Open a trace.dat image held in memory. @data is borrowed: it must stay valid
 * and unchanged until fdr_trace_close(). Errors as fdr_trace_open_file().
 */
int fdr_tracedat_open_mem(const void *data, size_t size, const char *origin, struct fdr_trace **out,
			  struct fdr_buf *err);
/* The same with fdr_trace_open_file_ex()'s @flags (FDR_TRACE_ALL_BUFFERS). */
int fdr_tracedat_open_mem_ex(const void *data, size_t size, const char *origin, unsigned flags,
			     struct fdr_trace **out, struct fdr_buf *err);

/*
 * Parse one kernel event format file (events/SYS/EVENT/format) into @e.
 * Returns 0, or 1 when the text is not an event fdr can describe (no name, no
 * ID, a field that does not fit; @why says which), never an error.
 */
int fdr_tracedat_parse_format(const char *system, const char *text, size_t len,
			      struct fdr_abi_event *e, const char **why);

#endif /* FDR_CTL_TRACEDAT_H */
