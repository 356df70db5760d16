/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fdr-export.h - a recorded trace (struct fdr_trace: a session's instance, its
 * snapshot or a trace.dat file) written in another tool's format:
 *
 *   ctf       a CTF 1.8 trace directory, for babeltrace2 and Trace Compass
 *   perfetto  Chrome JSON trace events, for ui.perfetto.dev and trace_processor
 *   perfetto-proto  Perfetto's protobuf trace: the kernel's scheduling records
 *             (fdr record -k) as ftrace events, which Perfetto shows as CPU
 *             and thread-state tracks, and the other records on their threads
 *   text      the kernel's `trace` file text, as `fdr show` prints it
 *
 * docs/design/export.md says how events and fields map to each format.
 *
 * Each call reads @t to its end. Output goes to a temporary name next to the
 * destination and is renamed into place once complete; on any error it is
 * removed, so a destination never holds a partial export. A NULL @path writes
 * perfetto or text output to standard output instead.
 *
 * Errors: a negative errno (-ENOSPC, -EIO, -EEXIST, -ENOTEMPTY, -ENOMEM...) and,
 * if @err is not NULL, a message naming the file and what failed.
 */
#ifndef FDR_EXPORT_H
#define FDR_EXPORT_H

#include <stddef.h>
#include <stdint.h>

#include "fdr/fdr-trace.h"

#ifdef __cplusplus
extern "C" {
#endif

struct fdr_export_stats {
	uint64_t events; /* records written */
	uint64_t lost; /* records the source reported lost (sum of lost_before) */
	uint64_t unknown; /* records of event ids the source does not describe: skipped */
	uint64_t clamped; /* ctf: timestamps raised to their stream's previous one */
};

FDR_API int fdr_export_ctf(struct fdr_trace *t, const char *dir, struct fdr_export_stats *st,
			   struct fdr_buf *err);
FDR_API int fdr_export_perfetto(struct fdr_trace *t, const char *path, struct fdr_export_stats *st,
				struct fdr_buf *err);
FDR_API int fdr_export_perfetto_proto(struct fdr_trace *t, const char *path,
				      struct fdr_export_stats *st, struct fdr_buf *err);
FDR_API int fdr_export_text(struct fdr_trace *t, const char *path, struct fdr_export_stats *st,
			    struct fdr_buf *err);

/* The TSDL metadata of @t's events (what fdr_export_ctf() writes as "metadata"). */
FDR_API int fdr_export_ctf_metadata(struct fdr_trace *t, const unsigned char uuid[16],
				    struct fdr_buf *b);
/* @name as a CTF identifier: "_" + name, bytes other than [A-Za-z0-9_] as '_'. */
FDR_API int fdr_export_ctf_ident(const char *name, size_t len, struct fdr_buf *b);
/* @n bytes of @s as a JSON string, quotes included (invalid UTF-8 as U+FFFD). */
FDR_API int fdr_export_json_string(const void *s, size_t n, struct fdr_buf *b);

#ifdef __cplusplus
}
#endif

#endif /* FDR_EXPORT_H */
