/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fdr-session.h - libfdr's side of a session for tools: attach to a session,
 * its control block and lock, its ring files, the checks of shared memory, a
 * marker or an error_log entry written from outside a traced program, and the
 * conversion of record timestamps. These functions are in libfdr (-lfdr) because
 * a traced application does the same; libfdr-read and libfdr-ctl build on them.
 * Creating, destroying and administering sessions is libfdr-ctl's (fdr-ctl.h).
 *
 * All functions return 0 or a negative errno unless said otherwise.
 */
#ifndef FDR_SESSION_H
#define FDR_SESSION_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "fdr/fdr.h"
#include "fdr/fdr-abi.h"

#ifdef __cplusplus
extern "C" {
#endif

struct fdr_session;

/* Sessions live in FDR_ROOT (default /dev/shm/fdr-<uid>) under their name. */
FDR_API int fdr_session_root(char *buf, size_t len);
FDR_API int fdr_session_dir(const char *name, char *buf, size_t len);
FDR_API const char *fdr_session_default_name(void);
FDR_API int fdr_session_default_dir(char *buf, size_t len);
FDR_API int fdr_session_open(const char *dir, struct fdr_session **out);
FDR_API void fdr_session_close(struct fdr_session *s);
FDR_API struct fdr_abi_control *fdr_session_control(struct fdr_session *s);
FDR_API const char *fdr_session_path(struct fdr_session *s);
FDR_API int fdr_session_lock(struct fdr_session *s);
FDR_API void fdr_session_unlock(struct fdr_session *s);
FDR_API void fdr_session_changed(struct fdr_session *s);
FDR_API int fdr_session_ring(struct fdr_session *s, uint32_t inst, void **base, size_t *size);
FDR_API int fdr_session_snapshot(struct fdr_session *s, uint32_t inst, int cpu);
FDR_API int fdr_session_write(struct fdr_session *s, uint32_t inst, const void *payload,
			      size_t len);
FDR_API int fdr_session_probes(struct fdr_session *s, struct fdr_abi_probes **out);
FDR_API int fdr_session_error(struct fdr_session *s, uint32_t inst, const char *location,
			      const char *msg, const char *cmd, int pos);
FDR_API int fdr_event_rule_match(const char *rule, const char *system, const char *event);

/*
 * The control block's small protocols, one home each (lib/core/control.c): a
 * cmdline slot, an event's enable bit, the record of a trace_marker write.
 */
#define FDR_MARKER_MAX (FDR_MAX_RECORD - 16 - 2) /* bytes of text a marker keeps */
FDR_API void fdr_cmdline_save(struct fdr_abi_control *ctl, int32_t pid, int32_t tgid,
			      const char *comm);
FDR_API int fdr_event_is_enabled(const struct fdr_abi_event *e, uint32_t inst);
FDR_API void fdr_event_set_enabled(struct fdr_abi_event *e, uint32_t inst, int on);
FDR_API size_t fdr_marker_record(void *payload, const void *text, size_t len, int32_t pid,
				 uint8_t depth, size_t *taken);

/*
 * A snapshot saver (lib/core/ring.c): a process that keeps every snapshot of an
 * instance; while it is attached, a snapshot is refused until it has saved the
 * previous one. Caller-allocated; fdr_saver_init() fills it.
 */
struct fdr_saver {
	struct fdr_session *s;
	uint32_t inst;
	uint32_t reserved;
	struct fdr_abi_ring *hdr; /* the ring header of the last poll; borrowed */
	uint64_t beat_ns; /* the last heartbeat written (lease clock) */
	uint64_t refused_seen; /* hdr->snap_refused at the last poll */
	uint64_t refused; /* snapshots refused while attached */
};
FDR_API void fdr_saver_init(struct fdr_saver *sv, struct fdr_session *s, uint32_t inst);
FDR_API int fdr_saver_poll(struct fdr_saver *sv, uint64_t *seq);
FDR_API void fdr_saver_wait(struct fdr_saver *sv, uint64_t max_ns);
FDR_API void fdr_saver_saved(struct fdr_saver *sv, uint64_t seq);
FDR_API void fdr_saver_beat(struct fdr_saver *sv);
FDR_API void fdr_saver_detach(struct fdr_saver *sv);

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
FDR_API int fdr_shm_check_probes(const struct fdr_abi_probes *p, uint64_t size);
FDR_API int fdr_shm_check_probe_slot(const struct fdr_abi_probe_slot *sl, uint32_t idx);
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

#ifdef __cplusplus
}
#endif

#endif /* FDR_SESSION_H */
