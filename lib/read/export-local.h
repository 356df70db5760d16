/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * export-local.h - what the exporters share: output that appears at its final
 * name only when complete (a temporary file or directory renamed into place),
 * and write errors reported with the file's name.
 */
#ifndef FDR_EXPORT_LOCAL_H
#define FDR_EXPORT_LOCAL_H

#include "fdr/fdr-export.h"

#define FDR_EXPORT_FLUSH (1u << 20) /* bytes buffered before a write(2) */

struct fdr_export_out {
	char *path; /* the destination; NULL: standard output */
	char *tmp; /* where it is written until complete */
	int fd; /* the file (or the directory for fdr_export_dir_*) */
	int is_dir;
	struct fdr_buf *err;
};

/* A file at @path (NULL: standard output), written under a temporary name. */
int fdr_export_file_open(struct fdr_export_out *o, const char *path, struct fdr_buf *err);
/* A directory at @path that must not exist or be empty, written under a temporary name. */
int fdr_export_dir_open(struct fdr_export_out *o, const char *path, struct fdr_buf *err);
/* Create file @name in the directory; returns an fd or a negative errno (message in err). */
int fdr_export_dir_file(struct fdr_export_out *o, const char *name);
/* Write all of @n bytes to @fd (named @name in messages); 0 or a negative errno. */
int fdr_export_write(struct fdr_export_out *o, int fd, const char *name, const void *p, size_t n);
/* Write and empty @b if it holds @min bytes or more. */
int fdr_export_flush(struct fdr_export_out *o, int fd, const char *name, struct fdr_buf *b,
		     size_t min);
/* Close and move into place; on failure everything written is removed. */
int fdr_export_commit(struct fdr_export_out *o);
/* Remove everything written (safe after a failed commit or open). */
void fdr_export_abort(struct fdr_export_out *o);
/* Set the message of a failure to @errnum about @what; returns -@errnum. */
int fdr_export_fail(struct fdr_buf *err, int errnum, const char *what, const char *detail);

/* A set of thread or process ids: open addressing, 0 = empty, id 0 kept in has0. */
struct fdr_tid_set {
	int32_t *v;
	size_t n, slots;
	int has0;
};
/* Add @tid to @set: 1 if it was not there, 0 if it was, -ENOMEM. free(set->v) at the end. */
int fdr_tid_set_add(struct fdr_tid_set *set, int32_t tid);

/*
 * Where the CTF writer (export-ctf.c) puts a trace: a directory (fdr export,
 * fdr snapshot save --format ctf) or a relay daemon's connection (relay.c).
 * The writer makes the packets; a sink only stores or sends them. Each call
 * returns 0 or a negative errno with a message in @err.
 */
struct fdr_ctf_packet {
	uint64_t bits; /* packet_size = content_size, in bits */
	uint64_t ts_begin, ts_end; /* the packet context's, in the trace clock */
	uint64_t discarded; /* events_discarded: cumulative for the CPU */
	uint32_t cpu;
	uint32_t stream_class; /* the CTF stream class (the source's buffer) */
};

struct fdr_ctf_sink {
	/* create stream @name ("stream_N"); *@h: its handle for packet() and close() */
	int (*open)(struct fdr_ctf_sink *k, const char *name, int *h);
	/* one whole packet: @hdr (header + context) then @body, described by @pi */
	int (*packet)(struct fdr_ctf_sink *k, int h, const void *hdr, size_t hn, const void *body,
		      size_t bn, const struct fdr_ctf_packet *pi);
	/*
	 * the trace's metadata text, whole: once after every packet, or (live) each
	 * time it grew, before the packets that need it; a later text begins with
	 * the earlier one
	 */
	int (*metadata)(struct fdr_ctf_sink *k, const void *p, size_t n);
	/* stream @h is complete */
	int (*close)(struct fdr_ctf_sink *k, int h);
	/* live only (may be NULL): stream @h has nothing new up to @ts (trace clock) */
	int (*idle)(struct fdr_ctf_sink *k, int h, uint64_t ts);
	struct fdr_buf *err;
};

/*
 * Read @t to its end and write it as CTF 1.8 to @k: the packets of each CPU,
 * then the metadata, then every stream closed. The caller commits or aborts
 * what the sink holds. Returns 0 or a negative errno (message in @k->err).
 */
int fdr_export_ctf_sink(struct fdr_trace *t, struct fdr_ctf_sink *k, struct fdr_export_stats *st);

/*
 * The same for a session's snapshot, its CPUs read and encoded by up to
 * @threads threads side by side (the calling one among them), each handing its
 * packets to @k in turn (the calls are serialized, @k need not be thread-safe);
 * the metadata and the closes follow as above. Other sources, one CPU or
 * @threads < 2: fdr_export_ctf_sink(). Returns 0 or a negative errno (message
 * in @k->err).
 */
int fdr_export_ctf_sink_split(struct fdr_trace *t, struct fdr_ctf_sink *k, uint32_t threads,
			      struct fdr_export_stats *st);

/* The same in steps, for live streaming (export-ctf.c has each call's comment). */
struct fdr_ctf_writer;
int fdr_ctf_writer_new(struct fdr_trace *t, struct fdr_ctf_sink *k, struct fdr_ctf_writer **out);
int fdr_ctf_writer_read(struct fdr_ctf_writer *w);
int fdr_ctf_writer_tick(struct fdr_ctf_writer *w, uint32_t nr_cpus, uint64_t now);
int fdr_ctf_writer_finish(struct fdr_ctf_writer *w);
void fdr_ctf_writer_stats(const struct fdr_ctf_writer *w, struct fdr_export_stats *st);
void fdr_ctf_writer_free(struct fdr_ctf_writer *w, struct fdr_export_stats *st);

#endif /* FDR_EXPORT_LOCAL_H */
