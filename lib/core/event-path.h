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
 * its header before (ev_rec_head(), for a payload whose padding is zero
 * already), zeroed padding after. Returns the record's total length.
 */
static inline __attribute__((always_inline)) size_t ev_rec_head(unsigned char *payload, size_t len)
{
	struct fdr_abi_rec *r = (void *)(payload - sizeof(struct fdr_abi_rec));
	size_t total = (sizeof(struct fdr_abi_rec) + len + 7) & ~(size_t)7;

	/* one 8-byte store: the copy reads the record in 8-byte words (see ev_common) */
	const uint64_t word = (uint64_t)((uint32_t)total | FDR_REC_DATA << FDR_REC_TYPE_SHIFT);

	memcpy(&r->len_type, &word, sizeof(word)); /* len_type, then reserved = 0 */
	return total;
}

static inline __attribute__((always_inline)) size_t ev_rec_seal(unsigned char *payload, size_t len)
{
	const uint64_t zero = 0;

	memcpy(payload + len, &zero, sizeof(zero)); /* the padding bytes */
	return ev_rec_head(payload, len);
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

/*
 * The route cache. Most events go to one instance, with no trigger or pid list
 * and at most that instance's filter. For those, finding the instance (the
 * event's registry entry and id, the session's hooks flag, both words of the
 * enable mask, the instance's tracing_on, the hooks) cost about a fifth of an
 * event. So the event path remembers the answer per registry slot (the
 * instance, and the filter slot to evaluate), with the control generation it
 * read before it looked, and reuses it while control.gen has not moved. Every
 * change of what the answer depends on (enable masks, tracing_on, filters,
 * triggers, pid lists, instances, registrations) bumps control.gen after the
 * change; a route computed from fields read before a change carries the older
 * gen, so it is never used after the bump. The ring mapping is loaded on each
 * use, so a resize (the agent swaps the mapping) needs nothing more. Plain
 * stores and loads of one 64-bit word: threads racing on a slot at worst store
 * equally valid routes. In this header: event-nv.c's path (a dynamic probe's
 * record) takes the same route as a static event's.
 */
#define EV_ROUTE_INST(r) ((r)&0xffu) /* instance + 1, 0: no route (another path) */
#define EV_ROUTE_FILTER(r) (((r) >> 8) & 0x1ffu) /* filter slot + 1, 0: none */
#define EV_ROUTE_KNOWN (1u << 31) /* computed at this gen (with or without a route) */
/* fdr_event_commit()'s common case: an instance, rdtsc timestamps */
#define EV_ROUTE_FAST (1u << 30)

static inline uint32_t ev_route_get(struct fdr_session *s, uint32_t slot, uint32_t gen)
{
	uint64_t r = __atomic_load_n(&s->routes[slot % FDR_MAX_EVENTS], __ATOMIC_RELAXED);

	return r >> 32 == gen ? (uint32_t)r : 0;
}

/*
 * Compute the route of @slot from fields read after @gen was, and cache it, or
 * that there is none (the event then takes the full path until gen moves).
 */
static inline void ev_route_set(struct fdr_session *s, const uint64_t *mask, uint32_t slot,
				uint32_t gen)
{
	const struct fdr_abi_control *ctl = s->ctl;
	const struct fdr_abi_hooks *h = &ctl->hooks[slot % FDR_MAX_EVENTS];
	uint32_t w, inst = FDR_MAX_INSTANCES, n = 0, f = 0;

	uint32_t route = EV_ROUTE_KNOWN; /* no route: until gen moves, do not look again */

	if (__atomic_load_n(&ctl->pids_active, __ATOMIC_ACQUIRE))
		goto out;
	for (w = 0; w < FDR_MAX_INSTANCES / 64; w++) {
		uint64_t bits = __atomic_load_n(&mask[w], __ATOMIC_RELAXED);

		if (__atomic_load_n(&h->triggered[w], __ATOMIC_ACQUIRE))
			goto out;
		if (!bits)
			continue;
		n += (bits & (bits - 1)) ? 2 : 1; /* one bit, or more */
		inst = w * 64 + (uint32_t)__builtin_ctzll(bits);
	}
	if (n != 1 || !__atomic_load_n(&ctl->instances[inst].tracing_on, __ATOMIC_ACQUIRE))
		goto out;
	if (__atomic_load_n(&h->filtered[inst / 64], __ATOMIC_ACQUIRE) & (1ull << (inst % 64))) {
		f = __atomic_load_n(&h->filter[inst], __ATOMIC_ACQUIRE);
		if (f > FDR_MAX_FILTERS)
			goto out; /* hostile: the hooks path copes */
	}
	route |= f << 8 | (inst + 1);
	if (__atomic_load_n(&ctl->ts_source, __ATOMIC_RELAXED) == FDR_TS_TSC)
		route |= EV_ROUTE_FAST;
out:
	__atomic_store_n(&s->routes[slot % FDR_MAX_EVENTS], (uint64_t)gen << 32 | route,
			 __ATOMIC_RELAXED);
}

#endif /* FDR_EVENT_PATH_H */
