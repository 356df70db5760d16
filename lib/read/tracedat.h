/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * tracedat.h - inside the trace.dat reader (tracedat-read.c): the entry points
 * the fuzz target and the format-file tests use besides fdr_trace_open_file().
 * (The live trace.dat writer the CLI uses is public: fdr-tracedat.h.)
 */
#ifndef FDR_CTL_TRACEDAT_H
#define FDR_CTL_TRACEDAT_H

#include "trace-src.h"
#include "fdr/fdr-tracedat.h"

/*
 * Open a trace.dat image held in memory. @data is borrowed: it must stay valid
 * and unchanged until fdr_trace_close(). Errors as fdr_trace_open_file().
 */
int fdr_tracedat_open_mem(const void *data, size_t size, const char *origin, struct fdr_trace **out,
			  struct fdr_buf *err);

/*
 * Parse one kernel event format file (events/SYS/EVENT/format) into @e.
 * Returns 0, or 1 when the text is not an event fdr can describe (no name, no
 * ID, a field that does not fit; @why says which), never an error.
 */
int fdr_tracedat_parse_format(const char *system, const char *text, size_t len,
			      struct fdr_abi_event *e, const char **why);

#endif /* FDR_CTL_TRACEDAT_H */
