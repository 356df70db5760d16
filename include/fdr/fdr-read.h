/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fdr-read.h - reading an instance's rings: records in time order, statistics,
 * the kernel's text format and page format.
 *
 * Readers treat the session's memory as hostile: every length and offset is
 * checked, data is copied before it is parsed, and a sub-buffer the writer
 * overwrote during the copy is counted as lost, never shown half-written.
 */
#ifndef FDR_READ_H
#define FDR_READ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "fdr/fdr-abi.h"
#include "fdr/fdr-session.h"

#ifdef __cplusplus
extern "C" {
#endif

struct fdr_reader;

/* fdr_reader_open() flags */
#define FDR_READ_CONSUME 1u /* trace_pipe: take the CPU's reader slot, consume */
#define FDR_READ_SNAPSHOT 2u /* read the snapshot (spare) buffers */
/*
 * With FDR_READ_CONSUME: what is read is published as consumed (position,
 * read_events, overrun) only by fdr_reader_commit(), once the caller has it
 * safe (fdr record: written to its file). Until then it stays unread in the ring.
 */
#define FDR_READ_HOLD 4u
/*
 * Read only the sub-buffers the writer has left (complete), not the one it is
 * in: whole sub-buffers at a time, so pages made of them are full (fdr record
 * while recording; fdr_reader_set_complete() turns it off to take the rest at
 * the stop).
 */
#define FDR_READ_COMPLETE 8u
/*
 * Each CPU's records in time order, but not merged across CPUs: the reader
 * stays on one CPU for up to 4096 records while it has some, then takes the
 * oldest of all again. For consumers that keep CPUs apart (fdr relay's
 * per-CPU CTF streams): the merge costs more than the rest of the read.
 */
#define FDR_READ_UNORDERED 16u

struct fdr_record {
	uint32_t cpu;
	uint32_t len; /* payload bytes, common header included */
	uint64_t ts; /* in the instance's trace clock */
	uint64_t raw_ts;
	const unsigned char *payload; /* valid until the next fdr_reader_next() */
	uint64_t lost_before; /* consuming reads: records lost on this CPU just before */
	const struct fdr_abi_subbuf *subbuf; /* header of the record's sub-buffer */
};

struct fdr_cpu_stats {
	uint64_t entries; /* unread records in the ring */
	uint64_t overrun; /* lost to overwrite */
	uint64_t commit_overrun;
	uint64_t bytes; /* of unread records, headers included */
	uint64_t oldest_ts; /* trace clock, of the oldest unread record (0 if none) */
	uint64_t now_ts;
	uint64_t dropped; /* refused (discard mode, too big, nesting) */
	uint64_t read; /* consumed by readers */
	uint64_t written; /* entries + overrun */
	/*
	 * written since the last clear, less entries + overrun + read: taken out of
	 * the live buffer by snapshot swaps before a consuming reader had them
	 */
	uint64_t snapshot;
};

FDR_API int fdr_reader_open(struct fdr_session *s, uint32_t inst, int cpu, unsigned flags,
			    struct fdr_reader **out);
FDR_API int fdr_reader_next(struct fdr_reader *r, struct fdr_record *rec);
FDR_API int fdr_reader_wait(struct fdr_reader *r, int timeout_ms);
FDR_API void fdr_reader_close(struct fdr_reader *r);
FDR_API const struct fdr_clock_conv *fdr_reader_clock(struct fdr_reader *r);
FDR_API int fdr_reader_raw_page(struct fdr_reader *r, void *page, size_t page_size);

/* What fdr_reader_raw_pages() put into pages (added to). */
struct fdr_raw_stats {
	uint64_t records; /* records written into the pages */
	uint64_t lost; /* records flagged lost (overwritten) in the pages */
};
FDR_API int fdr_reader_raw_pages(struct fdr_reader *r, void *buf, size_t page_size, size_t nr_pages,
				 struct fdr_raw_stats *st);
FDR_API void fdr_raw_page_add_missed(void *page, size_t page_size, uint64_t missed);

/*
 * A spool: one CPU's sub-buffers as they were in the ring, moved into a file by
 * fdr_reader_take_subbufs() (no per-record work), read back and checked by a
 * reader from fdr_reader_open_spool(). Zero it before the first take.
 */
struct fdr_spool {
	uint64_t start_pos; /* linear position of the first record to read */
	uint64_t start_cum; /* records written on the CPU before it */
	uint64_t bytes; /* length: whole sub-buffers */
	uint64_t records; /* records taken, from the headers' counts */
	uint64_t lost; /* records overwritten before they were taken, from the counts */
	uint64_t cut; /* sub-buffers cut: overwritten while they were copied */
	uint32_t subbuf_size;
	uint32_t cpu;
};
FDR_API int fdr_reader_take_subbufs(struct fdr_reader *r, int fd, uint64_t max_bytes,
				    struct fdr_spool *sp);
FDR_API int fdr_reader_take_subbufs_mem(struct fdr_reader *r, unsigned char *dst, uint64_t room,
					struct fdr_spool *sp);
FDR_API int fdr_reader_open_spool(struct fdr_session *s, uint32_t inst, int fd,
				  const struct fdr_spool *sp, struct fdr_reader **out);
FDR_API uint64_t fdr_reader_refused(struct fdr_reader *r);
FDR_API void fdr_reader_commit(struct fdr_reader *r);
FDR_API void fdr_reader_set_complete(struct fdr_reader *r, int on);
FDR_API int fdr_reader_take_lost(struct fdr_reader *r, uint32_t i, uint32_t *cpu, uint64_t *lost);
FDR_API const char *fdr_reader_error(const struct fdr_reader *r);

FDR_API int fdr_ring_stats(struct fdr_session *s, uint32_t inst, uint32_t cpu,
			   struct fdr_cpu_stats *st);
FDR_API int fdr_ring_clear(struct fdr_session *s, uint32_t inst, int cpu);
FDR_API int fdr_ring_stats_ex(struct fdr_session *s, uint32_t inst, uint32_t cpu, unsigned flags,
			      struct fdr_cpu_stats *st);
FDR_API int fdr_ring_clear_ex(struct fdr_session *s, uint32_t inst, int cpu, unsigned flags);
FDR_API int fdr_ring_nr_cpus(struct fdr_session *s, uint32_t inst);
FDR_API int fdr_ring_cpu_size_kb(struct fdr_session *s, uint32_t inst, uint32_t cpu);

/* Text formatting (format.c). A strbuf-like growable buffer. */
struct fdr_buf {
	char *data;
	size_t len;
	size_t size;
};
FDR_API void fdr_buf_free(struct fdr_buf *b);
FDR_API int fdr_buf_printf(struct fdr_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
FDR_API int fdr_buf_add(struct fdr_buf *b, const void *p, size_t n);
/* write(2) all @n bytes, again after EINTR: 0 or a negative errno (-EIO: wrote 0) */
FDR_API int fdr_write_all(int fd, const void *p, size_t n);
/* the directory @path is in ("." or "/" where it names none) into @dir: 0 or -ENAMETOOLONG */
FDR_API int fdr_path_dir(const char *path, char *dir, size_t len);

/* Look up the registry entry of an event id (NULL if none); borrowed. */
FDR_API const struct fdr_abi_event *fdr_event_by_id(const struct fdr_abi_control *ctl, uint32_t id);
FDR_API int fdr_format_event_file(const struct fdr_abi_event *e, struct fdr_buf *b);
FDR_API int fdr_format_header_page(uint32_t subbuf_size, struct fdr_buf *b);
FDR_API int fdr_format_header_event(struct fdr_buf *b);
FDR_API int fdr_format_trace_header(struct fdr_session *s, uint32_t inst, struct fdr_buf *b);
FDR_API int fdr_format_trace_header_ex(struct fdr_session *s, uint32_t inst, unsigned flags,
				       struct fdr_buf *b);
FDR_API int fdr_format_record(struct fdr_session *s, uint32_t inst, const struct fdr_record *rec,
			      struct fdr_buf *b);
FDR_API int fdr_format_body(const struct fdr_abi_event *e, const unsigned char *p, uint32_t len,
			    struct fdr_buf *b);
/* "NAME: BODY\n" of a record of event @e (built-in ftrace events as the kernel shows them) */
FDR_API int fdr_format_event_line(const struct fdr_abi_event *e, const unsigned char *payload,
				  uint32_t len, struct fdr_buf *b);
FDR_API int fdr_format_ts(uint32_t clock, uint64_t ts, struct fdr_buf *b);
FDR_API const char *fdr_comm_lookup(const struct fdr_abi_control *ctl, int32_t pid, char *buf,
				    size_t len);
/* The process (tgid) of thread @pid as saved_tgids has it; 0 if unknown. */
FDR_API int32_t fdr_tgid_lookup(const struct fdr_abi_control *ctl, int32_t pid);

#ifdef __cplusplus
}
#endif

#endif /* FDR_READ_H */
