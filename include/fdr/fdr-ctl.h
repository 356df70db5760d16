/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fdr-ctl.h - sessions and the control tree, for the fdr CLI, the FUSE server and
 * third-party tools. Applications need only <fdr/fdr.h>.
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

#ifdef __cplusplus
extern "C" {
#endif

struct fdr_session;

/* Options for fdr_session_create(); zero means "the default". */
struct fdr_session_opts {
	uint32_t buffer_size_kb; /* per CPU, default 1408 (the kernel's) */
	uint32_t subbuf_size; /* bytes, default 4096 */
	int overwrite; /* 0 (default) or 1: overwrite the oldest; -1: discard the newest */
};

/* Sessions live in FDR_ROOT (default /dev/shm/fdr-<uid>) under their name. */
FDR_API int fdr_session_root(char *buf, size_t len);
FDR_API int fdr_session_dir(const char *name, char *buf, size_t len);
FDR_API const char *fdr_session_default_name(void);
FDR_API int fdr_session_default_dir(char *buf, size_t len);
FDR_API int fdr_session_create(const char *dir, const struct fdr_session_opts *o,
			       struct fdr_session **out);
FDR_API int fdr_session_open(const char *dir, struct fdr_session **out);
FDR_API void fdr_session_close(struct fdr_session *s);
FDR_API int fdr_session_destroy(struct fdr_session *s);
FDR_API struct fdr_abi_control *fdr_session_control(struct fdr_session *s);
FDR_API const char *fdr_session_path(struct fdr_session *s);
FDR_API int fdr_session_lock(struct fdr_session *s);
FDR_API void fdr_session_unlock(struct fdr_session *s);
FDR_API void fdr_session_changed(struct fdr_session *s);
FDR_API int fdr_session_ring(struct fdr_session *s, uint32_t inst, void **base, size_t *size);

/*
 * Checks of shared memory (lib/core/shm-check.c, docs/design/abi.md): one per
 * structure, on a private copy; -EUCLEAN with the text in fdr_shm_error().
 */
#define FDR_SHM_ERROR_LEN 256
#define FDR_SHM_SUBBUF_SHIFT_MIN 12 /* sub-buffers of 4 KiB .. */
#define FDR_SHM_SUBBUF_SHIFT_MAX 20 /* .. 1 MiB */
struct fdr_shm_geom {
	uint32_t nr_subbufs;
	uint32_t subbuf_size;
	uint32_t shift; /* log2(subbuf_size) */
	uint32_t reserved;
	uint64_t data_off; /* from the start of the ring file */
};
FDR_API const char *fdr_shm_error(void);
FDR_API int fdr_shm_errorf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
FDR_API int fdr_shm_log2(uint32_t v);
FDR_API int fdr_shm_check_control(const struct fdr_abi_control *c, uint64_t size);
FDR_API int fdr_shm_check_instance(const struct fdr_abi_instance *in, uint32_t inst);
FDR_API int fdr_shm_check_instance_ext(const struct fdr_abi_instance_ext *x, uint32_t inst);
FDR_API int fdr_shm_check_event(const struct fdr_abi_event *e, uint32_t slot);
FDR_API int fdr_shm_check_ring(const void *base, uint64_t size, const char *name,
			       struct fdr_abi_ring *h);
FDR_API int fdr_shm_check_cpu(const struct fdr_abi_ring *h, const void *base, const char *name,
			      uint32_t cpu, uint32_t bi, struct fdr_shm_geom *g);
/* now on the clock of the ring header's snap_lock_ns, saver_beat_ns and swap_ns */
FDR_API uint64_t fdr_session_lease_ns(struct fdr_session *s);

/*
 * How long ago @then was, on the lease clock: 0 if @then is up to a millisecond
 * ahead (another CPU's TSC), UINT64_MAX (long ago) if further ahead: a value that
 * is not from this clock (another boot, hostile memory) must not hold a lease.
 */
static inline uint64_t fdr_lease_age(uint64_t now, uint64_t then)
{
	if ((int64_t)(now - then) >= 0)
		return now - then;
	return then - now < 1000000 ? 0 : UINT64_MAX;
}
FDR_API int fdr_session_resize(struct fdr_session *s, uint32_t inst, int cpu, uint32_t size_kb,
			       uint32_t subbuf_size);
FDR_API int fdr_session_snapshot(struct fdr_session *s, uint32_t inst, int cpu);
FDR_API int fdr_session_snapshot_alloc(struct fdr_session *s, uint32_t inst, int on);
FDR_API int fdr_session_instance_new(struct fdr_session *s, const char *name, uint32_t *out);
FDR_API int fdr_session_instance_free(struct fdr_session *s, uint32_t inst);
FDR_API int fdr_session_write(struct fdr_session *s, uint32_t inst, const void *payload,
			      size_t len);
FDR_API int fdr_session_error(struct fdr_session *s, uint32_t inst, const char *location,
			      const char *msg, const char *cmd, int pos);
FDR_API uint32_t fdr_session_subbufs_for_kb(uint32_t size_kb, uint32_t subbuf_size);
FDR_API uint32_t fdr_session_max_kb(uint32_t subbuf_size);
FDR_API int fdr_session_register_event(struct fdr_session *s, const struct fdr_abi_event *tmpl,
				       uint32_t *slot_out);
FDR_API void fdr_session_apply_pending(struct fdr_session *s, uint32_t slot);
FDR_API int fdr_event_rule_match(const char *rule, const char *system, const char *event);
FDR_API int fdr_event_def_to_abi(const struct fdr_event_def *def, struct fdr_abi_event *out);

/* Timestamp conversion: raw record timestamps to the instance's trace clock. */
struct fdr_clock_conv {
	uint32_t clock; /* enum fdr_abi_clock */
	uint32_t ts_source; /* enum fdr_abi_ts_source */
	long double ns_per_tick; /* TSC: nanoseconds per tick */
	uint64_t ref_tsc, ref_mono_ns, ref_boot_ns;
	uint64_t mult; /* ns_per_tick in 32.32 fixed point */
};
FDR_API void fdr_clock_conv_init(struct fdr_clock_conv *c, const struct fdr_abi_control *ctl,
				 uint32_t clock);
FDR_API uint64_t fdr_clock_conv(const struct fdr_clock_conv *c, uint64_t raw,
				const struct fdr_abi_subbuf *cal);
FDR_API uint64_t fdr_clock_now(const struct fdr_clock_conv *c);
FDR_API int fdr_clock_is_ns(uint32_t clock);

/*
 * The control tree: tracefs-like virtual files over a session. Paths are relative
 * to the tree's root ("trace", "events/demo/enable", "instances/x/trace_pipe").
 * Flags are open(2)'s: O_RDONLY/O_WRONLY/O_RDWR, O_TRUNC (shell ">"), O_APPEND
 * (">>"), O_NONBLOCK. Errors are negative errnos as tracefs returns them; a write
 * refused for bad input also leaves a message in fdr_file_error() and an entry in
 * the instance's error_log.
 */
struct fdr_file;

struct fdr_dirent {
	char name[80];
	int is_dir;
	unsigned mode; /* 0640 rw, 0440 ro, 0220 wo, 0750 dirs */
};

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
