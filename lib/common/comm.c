// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * comm.c - the name and the process of a thread, as the session's cmdline slots
 * hold them (comm.h says how a slot is read).
 */
#include <stdint.h>
#include <string.h>

#include "fdr/fdr-read.h"
#include "common/comm.h"

/**
 * fdr_comm_lookup - the comm saved for @pid, "<idle>" for 0, "<...>" if unknown
 * @buf: at least FDR_COMM_LEN bytes; the result may point to it
 */
const char *fdr_comm_lookup(const struct fdr_abi_control *ctl, int32_t pid, char *buf, size_t len)
{
	struct comm_slot sl;
	const char *name;

	if (pid == 0)
		return "<idle>";
	if (len < FDR_COMM_LEN)
		return "<...>";
	comm_slot_read(ctl, pid, &sl);
	name = comm_name(pid, &sl);
	if (name != (const char *)sl.w)
		return name;
	memcpy(buf, sl.w, FDR_COMM_LEN);
	return buf;
}

/**
 * fdr_tgid_lookup - the process id (tgid) saved for thread @pid, 0 if unknown
 * (no slot for @pid, or the slot changed while it was read)
 */
int32_t fdr_tgid_lookup(const struct fdr_abi_control *ctl, int32_t pid)
{
	const struct fdr_abi_cmdline *c = &ctl->cmdlines[(uint32_t)pid % FDR_CMDLINE_SLOTS];
	uint32_t p1, tgid;

	if (pid <= 0)
		return 0;
	/* acquire: pairs with the release store of pid after tgid in the writer */
	p1 = __atomic_load_n(&c->pid, __ATOMIC_ACQUIRE);
	tgid = __atomic_load_n(&c->tgid, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	if (p1 != (uint32_t)pid || __atomic_load_n(&c->pid, __ATOMIC_RELAXED) != p1 ||
	    tgid > INT32_MAX)
		return 0;
	return (int32_t)tgid;
}
