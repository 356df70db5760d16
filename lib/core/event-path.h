/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * event-path.h - what event.c's commit path and event-nv.c's share: the
 * thread's event state and the record's header. lib/core only.
 */
#ifndef FDR_EVENT_PATH_H
#define FDR_EVENT_PATH_H

#include <string.h>

#include "core-local.h"

/* initial-exec: a plain %fs-relative access on the event path, no __tls_get_addr */
#define EV_TLS __thread __attribute__((tls_model("initial-exec")))

/* one TLS block: the event path finds all three with one load of its offset */
struct fdr_ev_self {
	int nest;
	int32_t tid;
	uint64_t cmd_sid; /* session whose saved_cmdlines has our comm */
};
FDR_HIDDEN extern EV_TLS struct fdr_ev_self fdr_ev_self; /* event.c */

/* Does anything besides recording apply to the event in registry @slot? */
static inline int ev_hooked(const struct fdr_abi_control *ctl, uint32_t slot)
{
	const struct fdr_abi_hooks *h = &ctl->hooks[slot % FDR_MAX_EVENTS];
	uint32_t w;

	if (__atomic_load_n(&ctl->pids_active, __ATOMIC_ACQUIRE))
		return 1;
	for (w = 0; w < FDR_MAX_INSTANCES / 64; w++)
		if (__atomic_load_n(&h->filtered[w], __ATOMIC_ACQUIRE) |
		    __atomic_load_n(&h->triggered[w], __ATOMIC_ACQUIRE))
			return 1;
	return 0;
}

/*
 * Make the record around a payload (16 bytes of headroom, 8 bytes of tailroom):
 * its header before, zeroed padding after. Returns the record's total length.
 */
static inline __attribute__((always_inline)) size_t ev_rec_seal(unsigned char *payload, size_t len)
{
	struct fdr_abi_rec *r = (void *)(payload - sizeof(struct fdr_abi_rec));
	size_t total = (sizeof(struct fdr_abi_rec) + len + 7) & ~(size_t)7;
	const uint64_t zero = 0;

	/* one 8-byte store: the copy reads the record in 8-byte words (see ev_common) */
	const uint64_t word = (uint64_t)((uint32_t)total | FDR_REC_DATA << FDR_REC_TYPE_SHIFT);

	memcpy(payload + len, &zero, sizeof(zero)); /* the padding bytes */
	memcpy(&r->len_type, &word, sizeof(word)); /* len_type, then reserved = 0 */
	return total;
}

/*
 * Fill the common header with one 8-byte store. The ring's copy reads the record
 * in 8-byte words right after it is built; a word written by several narrower
 * stores cannot be forwarded from the store buffer, and each such load waits for
 * the stores to reach the cache (measured: a few ns per event).
 */
static inline void ev_common(struct fdr_common *c, uint16_t type, uint8_t preempt, int32_t pid)
{
	const uint64_t word = (uint64_t)type | (uint64_t)preempt << 24 |
			      (uint64_t)(uint32_t)pid << 32;

	_Static_assert(
		offsetof(struct fdr_common, type) == 0 && offsetof(struct fdr_common, flags) == 2 &&
			offsetof(struct fdr_common, preempt_count) == 3 &&
			offsetof(struct fdr_common, pid) == 4 && sizeof(struct fdr_common) == 8,
		"fdr_common layout");
	memcpy(c, &word, sizeof(word)); /* flags 0 */
}

#endif /* FDR_EVENT_PATH_H */
