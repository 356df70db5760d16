// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * control.c - the small protocols of the control block that more than one front
 * end writes (the application's event path, the control tree of the CLI and the
 * FUSE mount, the session code). Each is here once; the others call it.
 *
 * Cmdline slots. The pid -> comm (and tgid) table saved_cmdlines shows and the
 * formatters read: thread PID is named in slot PID % FDR_CMDLINE_SLOTS, the last
 * writer winning. A writer stores pid 0, then comm and tgid, then pid with
 * release; a reader loads pid (acquire), copies comm and tgid, loads pid again
 * and keeps the copy only if both loads gave the pid it looks for (the one
 * reader: lib/common/comm.h, comm_slot_read(); comm.c, fdr_comm_lookup() and
 * fdr_tgid_lookup()). No lock: the writers
 * include signal handlers and threads that must never wait.
 *
 * Enable bits. Event @e is recorded into instance I when bit I % 64 of word
 * I / 64 of e->enabled is set. Set and cleared with one atomic or/and (release)
 * each, so concurrent changes of different instances never lose each other;
 * read with acquire by the event path's agent and the triggers. Who may change
 * them: the control tree (set_event, enable files) and the session code
 * (pending rules, an instance's removal) under the control lock, and the
 * enable_event/disable_event triggers from the event path without it.
 *
 * Marker records. A trace_marker write (the tree's trace_marker, fdr_marker())
 * is one ftrace:print record: the common header (type FDR_EVENT_ID_PRINT, the
 * writer's thread id, the nesting depth as preempt_count), an 8-byte ip of 0,
 * then the text cut to what a record holds, a newline added if it has none, and
 * a NUL. Readers print it as "tracing_mark_write: TEXT" (lib/read/format.c, fmt_builtin()).
 */
#include <string.h>

#include "core-local.h"

/**
 * fdr_cmdline_save - name thread @pid (of process @tgid) @comm in its cmdline slot
 * @comm: FDR_COMM_LEN bytes, NUL-padded
 *
 * A slot that already says exactly this is left as it is. Lock-free and
 * async-signal-safe.
 */
void fdr_cmdline_save(struct fdr_abi_control *ctl, int32_t pid, int32_t tgid, const char *comm)
{
	struct fdr_abi_cmdline *c = &ctl->cmdlines[(uint32_t)pid % FDR_CMDLINE_SLOTS];

	if (__atomic_load_n(&c->pid, __ATOMIC_ACQUIRE) == (uint32_t)pid &&
	    memcmp(c->comm, comm, sizeof(c->comm)) == 0 && c->tgid == (uint32_t)tgid)
		return;
	__atomic_store_n(&c->pid, 0, __ATOMIC_RELAXED);
	memcpy(c->comm, comm, sizeof(c->comm));
	c->tgid = (uint32_t)tgid;
	/* release: readers check pid after reading comm (seqlock-like re-check) */
	__atomic_store_n(&c->pid, (uint32_t)pid, __ATOMIC_RELEASE);
}

/** fdr_event_is_enabled - is @e recorded into instance @inst? (1 or 0) */
int fdr_event_is_enabled(const struct fdr_abi_event *e, uint32_t inst)
{
	inst %= FDR_MAX_INSTANCES;
	return (__atomic_load_n(&e->enabled[inst / 64], __ATOMIC_ACQUIRE) >> (inst % 64)) & 1;
}

/** fdr_event_set_enabled - record @e into instance @inst (@on) or not */
void fdr_event_set_enabled(struct fdr_abi_event *e, uint32_t inst, int on)
{
	uint64_t bit;

	inst %= FDR_MAX_INSTANCES;
	bit = 1ull << (inst % 64);
	if (on)
		__atomic_fetch_or(&e->enabled[inst / 64], bit, __ATOMIC_RELEASE);
	else
		__atomic_fetch_and(&e->enabled[inst / 64], ~bit, __ATOMIC_RELEASE);
}

/**
 * fdr_marker_record - lay out the ftrace:print record of a trace_marker write
 * @payload: FDR_MAX_RECORD bytes (the record's payload: common header first)
 * @text, @len: what was written; only the first FDR_MARKER_MAX bytes are taken
 * @pid: the writer's thread id
 * @depth: the writer's nesting depth (preempt_count), 0 outside an event
 * @taken: set to the bytes of @text taken
 *
 * Returns the payload's length: 16 + the text + its newline + a NUL.
 */
size_t fdr_marker_record(void *payload, const void *text, size_t len, int32_t pid, uint8_t depth,
			 size_t *taken)
{
	unsigned char *p = payload;
	struct fdr_common c = { .type = FDR_EVENT_ID_PRINT, .preempt_count = depth, .pid = pid };
	const uint64_t ip = 0;

	if (len > FDR_MARKER_MAX)
		len = FDR_MARKER_MAX;
	*taken = len;
	memcpy(p, &c, sizeof(c));
	memcpy(p + 8, &ip, sizeof(ip));
	memcpy(p + 16, text, len);
	if (len == 0 || p[16 + len - 1] != '\n')
		p[16 + len++] = '\n';
	p[16 + len] = 0;
	return 16 + len + 1;
}
