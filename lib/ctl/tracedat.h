/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * tracedat.h - inside the trace.dat reader (tracedat-read.c): the entry points
 * the fuzz target and the format-file tests use besides fdr_trace_open_file().
 */
#ifndef FDR_CTL_TRACEDAT_H
#define FDR_CTL_TRACEDAT_H

#include "ctl/trace-src.h"
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

/*
 * A recording written as it goes (tracedat-write.c, docs/design/record.md): a
 * valid trace.dat from creation on, whatever happens to the process, holding
 * every page fdr_tracedat_live_append() wrote; made compact at the end by
 * fdr_tracedat_live_finish().
 */
struct fdr_tracedat_live;
FDR_API int fdr_tracedat_live_create(const char *path, struct fdr_session *s, uint32_t inst,
				     uint32_t page_size, uint32_t nr_cpus,
				     struct fdr_tracedat_live **out);
FDR_API int fdr_tracedat_live_append(struct fdr_tracedat_live *l, uint32_t cpu, const void *pages,
				     size_t len);
FDR_API int fdr_tracedat_live_update(struct fdr_tracedat_live *l, int force);
FDR_API uint64_t fdr_tracedat_live_bytes(const struct fdr_tracedat_live *l, uint32_t cpu);
FDR_API int fdr_tracedat_live_finish(struct fdr_tracedat_live *l,
				     const struct fdr_tracedat_cpu *cpus);
FDR_API void fdr_tracedat_live_close(struct fdr_tracedat_live *l, int remove);

#endif /* FDR_CTL_TRACEDAT_H */
