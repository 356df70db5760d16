/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bounds.h - where the scans of a session's big shared tables stop: the event
 * registry (1024 slots of 2.7 KiB) and the instances (128). Used by libfdr,
 * libfdr-ctl and the readers (libfdr-read: a record of an event that is gone
 * looks its id up in the registry). All inline. Never installed.
 */
#ifndef FDR_COMMON_BOUNDS_H
#define FDR_COMMON_BOUNDS_H

#include <stdint.h>

#include "fdr/fdr-abi.h"

/*
 * The registry slots that can hold an event, [0, bound), for the scans by
 * name: the registry is 2.8 MiB, and a scan of all of it faults in 688 pages
 * of a process's new mapping (300 us to 1.5 ms of a uprobe_events write, 4 ms
 * on a VM whose faults cost 35 us). A registration (locked) takes the first
 * free slot and raises events_bound over it before the slot is ready; the
 * bound is never lowered, so every ready slot is below it (nr_events, the
 * count of registrations, was the bound before ABI version 5: it grew past
 * every slot once probes had come and gone a thousand times). A slot at the
 * bound that is ready, or a bound out of range, can only be the shared
 * memory's damage, and makes the bound the whole table.
 */
static inline uint32_t fdr_events_bound(const struct fdr_abi_control *c)
{
	/* acquire: pairs with the raise's release, before the slot's state */
	uint32_t n = __atomic_load_n(&c->events_bound, __ATOMIC_ACQUIRE);

	if (n >= FDR_MAX_EVENTS ||
	    __atomic_load_n(&c->events[n].state, __ATOMIC_RELAXED) == FDR_EVENT_READY)
		return FDR_MAX_EVENTS;
	return n;
}
/*
 * How many instances a scan looks at: every live one has an index below
 * instances_bound (raised under the control lock before an instance goes
 * live, never lowered). Read from shared memory, so clamped to [1, 128].
 */
static inline uint32_t fdr_instances_bound(const struct fdr_abi_control *c)
{
	uint32_t n = __atomic_load_n(&c->instances_bound, __ATOMIC_ACQUIRE);

	return n < 1 ? 1 : n > FDR_MAX_INSTANCES ? FDR_MAX_INSTANCES : n;
}

#endif
