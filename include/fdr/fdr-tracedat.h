/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fdr-tracedat.h - writing trace-cmd's trace.dat (file format version 6), which
 * trace-cmd report, KernelShark and libtracecmd read.
 *
 * A trace.dat is a header (the session's event formats, pid->comm names, options)
 * followed by each CPU's data: pages in the kernel's ring-buffer page format, as
 * fdr_reader_raw_pages() makes them. The CPUs' pages are gathered first (in spool
 * files), the file is assembled at the end: the events that appeared meanwhile
 * are then described too. trace-cmd record works the same way.
 */
#ifndef FDR_TRACEDAT_H
#define FDR_TRACEDAT_H

#include <stddef.h>
#include <stdint.h>

#include "fdr/fdr-session.h"
#include "fdr/fdr-read.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One CPU's pages, for fdr_tracedat_write(). */
struct fdr_tracedat_cpu {
	int fd; /* a file holding the pages from offset 0; -1: none */
	uint64_t size; /* bytes: a multiple of the page size */
	uint64_t records; /* records in the pages (for the CPU's statistics) */
	uint64_t lost; /* records lost on this CPU while they were gathered */
};

FDR_API int fdr_tracedat_write(int fd, struct fdr_session *s, uint32_t inst, unsigned flags,
			       uint32_t page_size, const struct fdr_tracedat_cpu *cpus,
			       uint32_t nr_cpus);
FDR_API int fdr_tracedat_spool_open(const char *out_path);
FDR_API int fdr_tracedat_extract(struct fdr_session *s, uint32_t inst, unsigned flags,
				 const char *path, struct fdr_tracedat_cpu *cpus, uint32_t max_cpus,
				 uint32_t *nr_cpus);
FDR_API int fdr_tracedat_page_size(struct fdr_session *s, uint32_t inst);

/*
 * A recording written as it goes (docs/design/record.md): a
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

/*
 * fdr record -k (docs/design/kernel-timeline.md): a kernel tracefs instance's
 * buffer, added to the file at the end as a second buffer (the BUFFER option
 * trace-cmd record -B writes for an instance).
 */
struct fdr_tracedat_kbuf {
	const char *name; /* the buffer's name: the kernel instance's */
	const char *clock; /* its trace_clock */
	uint32_t page_size; /* the kernel's sub-buffer size */
	uint32_t nr_cpus;
	const int *raw_fds; /* per CPU: per_cpu/cpuN/trace_pipe_raw, O_NONBLOCK (-1: none) */
	uint32_t nr_formats; /* the kernel's events/SYS/EVENT/format texts */
	const char *const *fmt_system;
	const char *const *fmt_text;
	const char *cmdlines; /* "pid comm\n" lines of the kernel's, or NULL */
	uint64_t *bytes_out; /* if not NULL: [0] bytes of kernel pages, [1] of them spliced */
	/*
	 * If not NULL, per CPU: a file (-1: none) holding the pages spliced from
	 * raw_fds while recording, spool_len bytes of whole pages from offset 0;
	 * they go into the file first (copy_file_range(2), in the kernel), then
	 * what raw_fds still holds
	 */
	const int *spool_fds;
	const uint64_t *spool_len;
};
FDR_API int fdr_tracedat_live_set_id_shift(struct fdr_tracedat_live *l, uint32_t shift);
FDR_API int fdr_tracedat_live_finish_kernel(struct fdr_tracedat_live *l,
					    const struct fdr_tracedat_cpu *cpus,
					    const struct fdr_tracedat_kbuf *kb);

#ifdef __cplusplus
}
#endif

#endif /* FDR_TRACEDAT_H */
