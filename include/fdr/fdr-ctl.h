/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fdr-ctl.h - libfdr-ctl: session administration (create, destroy, instances,
 * buffer sizes, snapshot buffers) and the control tree, for the fdr CLI, the FUSE
 * server and third-party tools. Link with -lfdr-ctl (which brings libfdr-read and
 * libfdr). Applications need only <fdr/fdr.h>. Attaching to a session, its lock
 * and its rings are libfdr's (<fdr/fdr-session.h>, included here).
 *
 * All functions return 0 or a negative errno unless said otherwise.
 */
#ifndef FDR_CTL_H
#define FDR_CTL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "fdr/fdr.h"
#include "fdr/fdr-abi.h"
#include "fdr/fdr-session.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Options for fdr_session_create(); zero means "the default". */
struct fdr_session_opts {
	uint32_t buffer_size_kb; /* per CPU, default 1408 (the kernel's) */
	uint32_t subbuf_size; /* bytes, default 4096 */
	int overwrite; /* 0 (default) or 1: overwrite the oldest; -1: discard the newest */
};

FDR_API int fdr_session_create(const char *dir, const struct fdr_session_opts *o,
			       struct fdr_session **out);
FDR_API int fdr_session_destroy(struct fdr_session *s);
FDR_API int fdr_session_resize(struct fdr_session *s, uint32_t inst, int cpu, uint32_t size_kb,
			       uint32_t subbuf_size);
FDR_API int fdr_session_snapshot_alloc(struct fdr_session *s, uint32_t inst, int on);
FDR_API int fdr_session_instance_new(struct fdr_session *s, const char *name, uint32_t *out);
FDR_API int fdr_session_instance_free(struct fdr_session *s, uint32_t inst);
FDR_API uint32_t fdr_session_subbufs_for_kb(uint32_t size_kb, uint32_t subbuf_size);
FDR_API uint32_t fdr_session_max_kb(uint32_t subbuf_size);

/*
 * Event filters for tools (lib/ctl/event-filter.c): the kernel's filter grammar,
 * as an event's filter file takes it, compiled for one event's fields and run on
 * its records (fdr report -F). Return 0 or a negative errno; _match 1 or 0.
 */
struct fdr_event_filter;
FDR_API int fdr_event_filter_new(const struct fdr_abi_event *e, const char *text,
				 struct fdr_event_filter **out, char *msg, size_t msg_len,
				 int *pos);
FDR_API int fdr_event_filter_match(const struct fdr_event_filter *f, const unsigned char *payload,
				   uint32_t len, uint32_t cpu, const char *comm);
FDR_API void fdr_event_filter_free(struct fdr_event_filter *f);
FDR_API size_t fdr_event_filter_text_len(const char *text);

/*
 * The control tree: tracefs-like virtual files over a session. Paths are relative
 * to the tree's root ("trace", "events/demo/enable", "instances/x/trace_pipe").
 * Flags are open(2)'s: O_RDONLY/O_WRONLY/O_RDWR, O_TRUNC (shell ">"), O_APPEND
 * (">>"), O_NONBLOCK. Errors are negative errnos as tracefs returns them; a write
 * refused for bad input also leaves a message in fdr_file_error() and an entry in
 * the instance's error_log.
 */
struct fdr_file;

/*
 * A session's link to a kernel tracefs instance (fdr start -k), the file
 * DIR/kernel (docs/design/kernel-timeline.md): read and checked by
 * fdr_kernel_link_read(); the top instance's trace and trace_pipe merge that
 * instance's lines with fdr's.
 */
struct fdr_kernel_link {
	char tracefs[4096]; /* where the kernel's tracefs is mounted */
	char instance[80]; /* fdr-NAME-HASH */
	char clock[32]; /* the kernel instance's trace_clock */
};
FDR_API int fdr_kernel_link_read(const char *session_dir, struct fdr_kernel_link *l);
FDR_API int fdr_kernel_line_ts(const char *line, size_t len, uint64_t *key);

struct fdr_dirent {
	char name[80];
	int is_dir;
	unsigned mode; /* 0640 rw, 0440 ro, 0220 wo, 0750 dirs */
};

/*
 * fdr_file_open() flag: a linked session's trace and trace_pipe serve fdr's
 * lines alone, and a '>' of trace leaves the kernel instance's buffer alone. A
 * FUSE server passes it for the requests of other users: it would read and
 * clear the kernel's files with its own rights, not theirs.
 */
#define FDR_FILE_NO_KERNEL 0x40000000
FDR_API int fdr_file_open(struct fdr_session *s, const char *path, int flags,
			  struct fdr_file **out);
FDR_API ssize_t fdr_file_read(struct fdr_file *f, void *buf, size_t n);
FDR_API ssize_t fdr_file_write(struct fdr_file *f, const void *buf, size_t n);
/*
 * The thread writes through @f are made for (a FUSE server passes its caller's):
 * its trace_marker records carry that thread's id, comm and process, and go into
 * the buffer of the CPU it last ran on, as the kernel records the writer. 0 (the
 * default): the calling thread.
 */
FDR_API void fdr_file_set_writer(struct fdr_file *f, int32_t tid);
FDR_API int fdr_file_poll(struct fdr_file *f, int timeout_ms);
FDR_API const char *fdr_file_error(const struct fdr_file *f);
/*
 * What the last successful write did that its writer may not expect ("" if
 * nothing): e.g. a set_event rule that matches no registered event yet is kept
 * as a pending rule. The CLI prints it on stderr; tracefs has no such channel.
 */
FDR_API const char *fdr_file_notice(const struct fdr_file *f);
FDR_API int fdr_file_end(struct fdr_file *f);
FDR_API void fdr_file_close(struct fdr_file *f);
FDR_API int fdr_tree_stat(struct fdr_session *s, const char *path, int *is_dir, unsigned *mode);
FDR_API int fdr_tree_readdir(struct fdr_session *s, const char *path, struct fdr_dirent **ents,
			     size_t *nr);
FDR_API int fdr_tree_mkdir(struct fdr_session *s, const char *path);
FDR_API int fdr_tree_rmdir(struct fdr_session *s, const char *path);

#ifdef __cplusplus
}
#endif

#endif /* FDR_CTL_H */
