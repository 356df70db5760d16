/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * comm.h - reading a task's name out of the session's cmdline slots (struct
 * fdr_abi_cmdline, docs/design/abi.md): a slot is read as two words and its pid
 * word, and a read that saw the pid change is "unknown". The text formats cache
 * the "comm-pid" column by the slot as read (lib/read/format.c); fdr_comm_lookup()
 * and fdr_tgid_lookup() (comm.c, declared in fdr-read.h) are the one-off reads.
 * Never installed.
 */
#ifndef FDR_COMMON_COMM_H
#define FDR_COMMON_COMM_H

#include <stdint.h>
#include <string.h>

#include "fdr/fdr-abi.h"

/*
 * One cmdline slot as read at one moment: its pid word and its comm bytes, kept
 * as two words so that comparing two reads is two compares (no byte copies that
 * later word loads would have to wait on).
 */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define COMM_FIRST_BYTE ((uint64_t)0xff) /* of w[0] */
#define COMM_LAST_BYTE ((uint64_t)0xff << 56) /* of w[1] */
#else
#define COMM_FIRST_BYTE ((uint64_t)0xff << 56)
#define COMM_LAST_BYTE ((uint64_t)0xff)
#endif

struct comm_slot {
	uint64_t pid;
	uint64_t w[2]; /* comm, NUL-terminated at its last byte at the latest */
};

/* Read the slot that would hold @pid; the result names a task through comm_name(). */
static inline void comm_slot_read(const struct fdr_abi_control *ctl, int32_t pid,
				  struct comm_slot *sl)
{
	const struct fdr_abi_cmdline *c = &ctl->cmdlines[(uint32_t)pid % FDR_CMDLINE_SLOTS];
	uint32_t p1, p2;

	_Static_assert(FDR_COMM_LEN == sizeof(sl->w), "comm_slot holds a comm");
	/* acquire: pairs with the release store of pid after comm in the writer */
	p1 = __atomic_load_n(&c->pid, __ATOMIC_ACQUIRE);
	memcpy(sl->w, c->comm, sizeof(sl->w));
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	p2 = __atomic_load_n(&c->pid, __ATOMIC_RELAXED);
	sl->pid = p1;
	sl->w[1] &= ~COMM_LAST_BYTE;
	if (p2 != p1)
		sl->w[0] = 0; /* changed while read: unknown */
}

/* The name a slot read for @pid gives: a function of (@pid, @sl) only. */
static inline const char *comm_name(int32_t pid, const struct comm_slot *sl)
{
	if (pid == 0)
		return "<idle>";
	if (sl->pid != (uint32_t)pid || !(sl->w[0] & COMM_FIRST_BYTE))
		return "<...>";
	return (const char *)sl->w;
}

#endif /* FDR_COMMON_COMM_H */
