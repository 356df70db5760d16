/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * pid-list.h - the pid lists of an instance in shared memory (set_event_pid,
 * set_event_notrace_pid), changed under the control lock while writers read
 * them without it.
 *
 * A writer (lib/core/hooks.c) loads the count (acquire), then each entry: so a
 * change must never hide an entry that stays, even for an instant. Hence:
 *
 *	add     the entry is stored past the end, then the count grows (release)
 *	remove  the last entry is first copied over the one removed, then the
 *	        count shrinks; a reader sees the last one twice, or the removed
 *	        one still, never a list without an entry that stays
 *
 * so the entries are in no particular order; the files sort them when they
 * list them. Used by libfdr (event-fork's fork and exit handlers) and
 * libfdr-ctl (the files), hence all static inline. The lock must be held by
 * the caller of each function here.
 */
#ifndef FDR_COMMON_PID_LIST_H
#define FDR_COMMON_PID_LIST_H

#include <errno.h>
#include <signal.h>
#include <stdint.h>

#include "fdr/fdr-abi.h"

/* The count, bounded: shared memory may say anything. */
static inline uint32_t fdr_pids_count(const uint32_t *nr)
{
	uint32_t n = __atomic_load_n(nr, __ATOMIC_ACQUIRE);

	return n < FDR_MAX_PIDS ? n : FDR_MAX_PIDS;
}

/* Is @pid listed? */
static inline int fdr_pids_has(const int32_t *pids, const uint32_t *nr, int32_t pid)
{
	uint32_t i, n = fdr_pids_count(nr);

	for (i = 0; i < n; i++)
		if (__atomic_load_n(&pids[i], __ATOMIC_RELAXED) == pid)
			return 1;
	return 0;
}

/* Add @pid at the end unless listed. Returns 1 if added, 0 if listed, -ENOSPC. */
static inline int fdr_pids_add(int32_t *pids, uint32_t *nr, int32_t pid)
{
	uint32_t n = fdr_pids_count(nr);

	if (fdr_pids_has(pids, nr, pid))
		return 0;
	if (n == FDR_MAX_PIDS)
		return -ENOSPC;
	__atomic_store_n(&pids[n], pid, __ATOMIC_RELAXED);
	__atomic_store_n(nr, n + 1, __ATOMIC_RELEASE);
	return 1;
}

/* Remove entry @i (the last one takes its place). */
static inline void fdr_pids_remove_at(int32_t *pids, uint32_t *nr, uint32_t i)
{
	uint32_t n = fdr_pids_count(nr);

	if (i >= n)
		return;
	__atomic_store_n(&pids[i], __atomic_load_n(&pids[n - 1], __ATOMIC_RELAXED),
			 __ATOMIC_RELEASE);
	__atomic_store_n(nr, n - 1, __ATOMIC_RELEASE);
}

/*
 * Removals by exits (event-fork) keep at least @keep entries: 1 for
 * set_event_pid, whose list, once emptied, would admit every task (count 0
 * means no list), where the kernel's emptied list admits none; 0 for
 * set_event_notrace_pid.
 */

/* Remove @pid if listed (and more than @keep entries are). Returns 1 if removed. */
static inline int fdr_pids_remove(int32_t *pids, uint32_t *nr, int32_t pid, uint32_t keep)
{
	uint32_t i, n = fdr_pids_count(nr);

	if (n <= keep)
		return 0;
	for (i = 0; i < n; i++)
		if (pids[i] == pid) {
			fdr_pids_remove_at(pids, nr, i);
			return 1;
		}
	return 0;
}

/*
 * Remove the pids of tasks that no longer exist (kill(pid, 0) fails with
 * ESRCH; success and EPERM keep it; a zombie exists until it is reaped),
 * keeping at least @keep entries. Returns how many were removed. errno is kept.
 */
static inline uint32_t fdr_pids_prune(int32_t *pids, uint32_t *nr, uint32_t keep)
{
	uint32_t i = 0, gone = 0;
	int saved = errno;

	while (i < fdr_pids_count(nr) && fdr_pids_count(nr) > keep) {
		int32_t p = pids[i];

		if (p > 0 && kill(p, 0) < 0 && errno == ESRCH) {
			fdr_pids_remove_at(pids, nr, i);
			gone++;
		} else {
			i++;
		}
	}
	errno = saved;
	return gone;
}

#endif /* FDR_COMMON_PID_LIST_H */
