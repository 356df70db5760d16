// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * hooks-ctl.c - the control side of filters, triggers and pid lists: the
 * filter, trigger and set_event_pid files (docs/tracefs.md). lib/core/hooks.c runs
 * them in the writers.
 *
 * Every change is made under the session lock and published so that a writer
 * reading concurrently sees either the old hook or the new one, whole:
 *  - a filter is compiled into a free slot, then the slot's index is stored in
 *    hooks.filter[instance]; the old slot is freed, and free slots are reused
 *    only after FDR_HOOK_GRACE_NS;
 *  - a trigger is filled in a free slot and pushed at the head of its list
 *    (triggers list newest first, as the kernel shows them); removing one
 *    unlinks it, and its slot waits out the grace period too.
 * control.hooks_active tells writers whether to look at hooks at all.
 *
 * Deliberate differences from the kernel: a rejected filter keeps the previous
 * one active (the kernel drops it); the filter file still shows the rejected
 * text with its caret and message, as the kernel's does.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/bounds.h"
#include "common/filter.h"
#include "ctl-local.h"

_Static_assert(sizeof(struct fdr_filter_prog) == FDR_FILTER_PROG_BYTES, "filter slot size");

static uint64_t hc_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void bit_set(uint64_t *m, uint32_t i, int on)
{
	if (on)
		__atomic_fetch_or(&m[i / 64], 1ull << (i % 64), __ATOMIC_RELEASE);
	else
		__atomic_fetch_and(&m[i / 64], ~(1ull << (i % 64)), __ATOMIC_RELEASE);
}

static int bit_get(const uint64_t *m, uint32_t i)
{
	return (int)((__atomic_load_n(&m[i / 64], __ATOMIC_ACQUIRE) >> (i % 64)) & 1);
}

/*
 * Recompute control.hooks_active and pids_active (lock held): pids_active says
 * an instance checks each writer (set_event_pid or set_event_notrace_pid with
 * entries, a tracing_cpumask that leaves a CPU out, the stacktrace option), so
 * no event takes a cached route.
 */
void fdr_hooks_recount(struct fdr_abi_control *c)
{
	uint32_t i, w, any = 0, pids = 0, events = fdr_events_bound(c),
		       instances = fdr_instances_bound(c);

	/*
	 * Only registered events hold hooks (a removed one's are cleared with it:
	 * fdr_hooks_event_clear()), and only instances below their bound live.
	 * Scanning every slot touched 40 pages, each a page fault in a process
	 * that had not touched them yet: 1.7 ms of a first '-:' on the test VM.
	 */
	for (i = 0; i < events && !any; i++)
		for (w = 0; w < FDR_MAX_INSTANCES / 64; w++)
			if (c->hooks[i].filtered[w] || c->hooks[i].triggered[w])
				any = 1;
	for (i = 0; i < instances && !pids; i++) {
		const struct fdr_abi_instance *in = &c->instances[i];
		uint32_t cpu, n = c->nr_cpus < FDR_MAX_CPUS ? c->nr_cpus : FDR_MAX_CPUS;

		if (in->state != FDR_INST_LIVE)
			continue;
		if (in->nr_pids || c->inst_ext[i].nr_notrace_pids ||
		    (in->options & FDR_OPT_STACKTRACE))
			pids = 1;
		for (cpu = 0; cpu < n && !pids; cpu++)
			if (!((in->cpumask[cpu / 64] >> (cpu % 64)) & 1))
				pids = 1; /* tracing_cpumask leaves a CPU out */
	}
	__atomic_store_n(&c->pids_active, pids, __ATOMIC_RELEASE);
	__atomic_store_n(&c->hooks_active, any | pids, __ATOMIC_RELEASE);
}

/*
 * A free filter slot: one that has been free for the grace period if there is
 * one, else the one freed longest ago. Reusing a slot early is still safe for a
 * writer that would be evaluating it (the evaluator checks everything it reads);
 * at worst that one event is filtered by a mix of the two programs.
 */
static int filter_slot_new(struct fdr_abi_control *c, uint32_t event_slot)
{
	uint64_t now = hc_now(), oldest = UINT64_MAX;
	uint32_t i;
	int pick = -1;

	for (i = 0; i < FDR_MAX_FILTERS; i++) {
		struct fdr_abi_filter *f = &c->filters[i];

		if (f->state != FDR_SLOT_FREE)
			continue;
		if (!f->freed_ns || now - f->freed_ns > FDR_HOOK_GRACE_NS) {
			pick = (int)i;
			break;
		}
		if (f->freed_ns < oldest) {
			oldest = f->freed_ns;
			pick = (int)i;
		}
	}
	if (pick < 0)
		return -ENOSPC;
	c->filters[pick].state = FDR_SLOT_USED;
	c->filters[pick].event_slot = event_slot;
	return pick;
}

static void filter_slot_free(struct fdr_abi_control *c, uint32_t slot_plus1)
{
	struct fdr_abi_filter *f;

	if (!slot_plus1 || slot_plus1 > FDR_MAX_FILTERS)
		return;
	f = &c->filters[slot_plus1 - 1];
	f->freed_ns = hc_now();
	__atomic_store_n(&f->state, FDR_SLOT_FREE, __ATOMIC_RELEASE);
}

/* Slot of an event's registry entry. */
static uint32_t event_slot(const struct fdr_abi_control *c, const struct fdr_abi_event *e)
{
	return (uint32_t)(e - c->events);
}

/* Free an error-text slot: writers never read those, so it is reusable at once. */
static void err_slot_free(struct fdr_abi_control *c, uint32_t slot_plus1)
{
	if (!slot_plus1 || slot_plus1 > FDR_MAX_FILTERS)
		return;
	c->filters[slot_plus1 - 1].freed_ns = 0;
	__atomic_store_n(&c->filters[slot_plus1 - 1].state, FDR_SLOT_FREE, __ATOMIC_RELEASE);
}

/**
 * fdr_hooks_filter_set - set an event's filter in an instance (lock held)
 * @text: the expression; "0" clears
 * @sys_error: set by a system filter: an event that rejects the expression
 *             shows the kernel's "Couldn't find or set field in one of a
 *             subsystem's events" instead of its own error
 * @msg, @pos: on -EINVAL the message and the byte the parser blames
 *
 * Only a filter that compiles takes a new program slot; clearing takes none and
 * a rejected one reuses the event's error slot, so rewriting a filter any
 * number of times never runs out of slots. Returns 0, -EINVAL (rejected: the
 * previous filter stays; the filter file shows the error), -ENOSPC (no free
 * slot), -ENOMEM.
 */
int fdr_hooks_filter_set(struct fdr_abi_control *c, uint32_t inst, const struct fdr_abi_event *e,
			 const char *text, int sys_error, const char **msg, int *pos)
{
	uint32_t es = event_slot(c, e);
	struct fdr_abi_hooks *h = &c->hooks[es];
	struct fdr_filter_error err = { 0, 0, 0 };
	struct fdr_filter_prog *prog = malloc(sizeof(*prog));
	int slot, ret;

	if (!prog)
		return -ENOMEM;
	ret = fdr_filter_compile(e, text, prog, &err);
	if (ret == FDR_FILTER_CLEAR) {
		uint16_t old = h->filter[inst];

		bit_set(h->filtered, inst, 0);
		__atomic_store_n(&h->filter[inst], 0, __ATOMIC_RELEASE);
		filter_slot_free(c, old);
		err_slot_free(c, h->filter_err[inst]);
		h->filter_err[inst] = 0;
		fdr_hooks_recount(c);
		free(prog);
		return 0;
	}
	if (ret < 0) {
		/* keep the old filter; an error slot keeps the text for the filter file */
		uint32_t es_slot = h->filter_err[inst];

		if (sys_error && err.code == FDR_FILTER_ERR_FIELD_NOT_FOUND) {
			/* the kernel's words for an event of the system that lacks a field */
			err.code = FDR_FILTER_ERR_BAD_SUBSYS_FILTER;
			err.pos = 0;
		}
		if (!es_slot || es_slot > FDR_MAX_FILTERS) {
			slot = filter_slot_new(c, es);
			es_slot = slot >= 0 ? (uint32_t)slot + 1 : 0;
		}
		if (es_slot) {
			fdr_filter_format_error(text, &err, c->filters[es_slot - 1].text,
						sizeof(c->filters[es_slot - 1].text));
			h->filter_err[inst] = (uint16_t)es_slot;
		}
		*msg = fdr_filter_error_message(&err);
		*pos = err.pos;
		free(prog);
		return -EINVAL;
	}
	slot = filter_slot_new(c, es);
	if (slot < 0) {
		free(prog);
		return slot;
	}
	memcpy(c->filters[slot].prog, prog, sizeof(*prog));
	free(prog);
	snprintf(c->filters[slot].text, sizeof(c->filters[slot].text), "%s", text);
	{
		uint16_t old = h->filter[inst];

		/* release: the program is complete before writers can find it */
		__atomic_store_n(&h->filter[inst], (uint16_t)(slot + 1), __ATOMIC_RELEASE);
		bit_set(h->filtered, inst, 1);
		filter_slot_free(c, old);
		err_slot_free(c, h->filter_err[inst]);
		h->filter_err[inst] = 0;
	}
	fdr_hooks_recount(c);
	return 0;
}

/** fdr_hooks_filter_text - the filter file's content for an event in an instance */
int fdr_hooks_filter_text(const struct fdr_abi_control *c, uint32_t inst,
			  const struct fdr_abi_event *e, struct fdr_buf *b)
{
	const struct fdr_abi_hooks *h = &c->hooks[event_slot(c, e)];
	uint32_t f = h->filter_err[inst];
	char tmp[FDR_FILTER_TEXT_LEN + 8];

	if (f && f <= FDR_MAX_FILTERS) {
		const char *t = c->filters[f - 1].text;

		return fdr_buf_add(b, t, strnlen(t, FDR_FILTER_TEXT_LEN));
	}
	f = h->filter[inst];
	if (!f || f > FDR_MAX_FILTERS)
		return fdr_buf_printf(b, "none\n");
	{
		char out[FDR_FILTER_TEXT_LEN + 8];

		snprintf(tmp, sizeof(tmp), "%.*s", FDR_FILTER_TEXT_LEN, c->filters[f - 1].text);
		fdr_filter_format_text(tmp, out, sizeof(out));
		return fdr_buf_add(b, out, strlen(out));
	}
}

/* ---- triggers ------------------------------------------------------------------------- */

static const char *const trig_names[] = {
	[FDR_TRIG_TRACEON] = "traceon",		  [FDR_TRIG_TRACEOFF] = "traceoff",
	[FDR_TRIG_SNAPSHOT] = "snapshot",	  [FDR_TRIG_STACKTRACE] = "stacktrace",
	[FDR_TRIG_ENABLE_EVENT] = "enable_event", [FDR_TRIG_DISABLE_EVENT] = "disable_event",
};

/* Unique per event: traceon/traceoff share a slot; one per target for enable/disable. */
static int trig_conflicts(const struct fdr_abi_trigger *a, uint32_t cmd, uint32_t target)
{
	int on_off = (a->cmd == FDR_TRIG_TRACEON || a->cmd == FDR_TRIG_TRACEOFF) &&
		     (cmd == FDR_TRIG_TRACEON || cmd == FDR_TRIG_TRACEOFF);
	int ev = (a->cmd == FDR_TRIG_ENABLE_EVENT || a->cmd == FDR_TRIG_DISABLE_EVENT) &&
		 (cmd == FDR_TRIG_ENABLE_EVENT || cmd == FDR_TRIG_DISABLE_EVENT) &&
		 a->target == target;

	return on_off || ev ||
	       (a->cmd == cmd && cmd != FDR_TRIG_ENABLE_EVENT && cmd != FDR_TRIG_DISABLE_EVENT);
}

static int trig_same(const struct fdr_abi_trigger *a, uint32_t cmd, uint32_t target)
{
	if (a->cmd != cmd)
		return 0;
	return !(cmd == FDR_TRIG_ENABLE_EVENT || cmd == FDR_TRIG_DISABLE_EVENT) ||
	       a->target == target;
}

/* A free trigger slot, as filter_slot_new() picks them. */
static int trig_slot_new(struct fdr_abi_control *c)
{
	uint64_t now = hc_now(), oldest = UINT64_MAX;
	uint32_t i;
	int pick = -1;

	for (i = 0; i < FDR_MAX_TRIGGERS; i++) {
		struct fdr_abi_trigger *t = &c->triggers[i];

		if (t->state != FDR_SLOT_FREE)
			continue;
		if (!t->freed_ns || now - t->freed_ns > FDR_HOOK_GRACE_NS)
			return (int)i;
		if (t->freed_ns < oldest) {
			oldest = t->freed_ns;
			pick = (int)i;
		}
	}
	return pick < 0 ? -ENOSPC : pick;
}

/*
 * Is any trigger of instance @inst targeting event @target (for soft mode)? Only
 * registered events hold triggers: the scan stops at their bound, not at
 * FDR_MAX_EVENTS (fdr_hooks_recount())
 */
static int trig_targets(const struct fdr_abi_control *c, uint32_t inst, uint32_t target)
{
	uint32_t es, t, n, bound = fdr_events_bound(c);

	for (es = 0; es < bound; es++) {
		if (!bit_get(c->hooks[es].triggered, inst))
			continue;
		for (t = c->hooks[es].trigger[inst], n = 0;
		     t && t <= FDR_MAX_TRIGGERS && n < FDR_MAX_TRIGGERS;
		     t = c->triggers[t - 1].next, n++)
			if ((c->triggers[t - 1].cmd == FDR_TRIG_ENABLE_EVENT ||
			     c->triggers[t - 1].cmd == FDR_TRIG_DISABLE_EVENT) &&
			    c->triggers[t - 1].target == target)
				return 1;
	}
	return 0;
}

static void soft_recount(struct fdr_abi_control *c, uint32_t inst)
{
	uint32_t es, bound = fdr_events_bound(c);

	for (es = 0; es < bound; es++) {
		if (c->events[es].state != FDR_EVENT_READY)
			continue;
		bit_set(c->hooks[es].soft, inst,
			bit_get(c->hooks[es].triggered, inst) || trig_targets(c, inst, es));
	}
}

/**
 * fdr_hooks_trigger_cmd - one write to an event's trigger file (lock held)
 * @cmd: "[!]CMD[:COUNT] [if FILTER]"
 * @find_event: resolves "SYS:EVENT" for enable_event/disable_event
 * @msg, @pos: why and where, on -EINVAL
 *
 * Returns 0, -EINVAL, -EEXIST (already there), -ENOSPC, or the snapshot
 * allocation's error (a snapshot trigger allocates the spare buffers).
 */
int fdr_hooks_trigger_cmd(struct fdr_session *s, uint32_t inst, const struct fdr_abi_event *e,
			  const char *cmd, char *msg, size_t msg_len, int *pos)
{
	struct fdr_abi_control *c = fdr_session_control(s);
	uint32_t es = event_slot(c, e), target = 0, kind = 0, k, t, prev = 0, n, bound;
	struct fdr_abi_hooks *h = &c->hooks[es];
	const char *p = cmd, *word, *ifp;
	size_t wlen;
	int remove = 0, count = -1, slot, ret, fslot = -1;

	while (isspace((unsigned char)*p))
		p++;
	if (*p == '!') {
		remove = 1;
		p++;
	}
	word = p;
	wlen = strcspn(p, ": \t");
	for (k = 1; k < sizeof(trig_names) / sizeof(trig_names[0]); k++)
		if (strlen(trig_names[k]) == wlen && strncmp(word, trig_names[k], wlen) == 0)
			kind = k;
	if (!kind) {
		*pos = (int)(word - cmd);
		snprintf(
			msg, msg_len,
			"expected traceon, traceoff, snapshot, stacktrace, enable_event or disable_event, found '%.*s'",
			(int)wlen, word);
		return -EINVAL;
	}
	p += wlen;
	if (kind == FDR_TRIG_ENABLE_EVENT || kind == FDR_TRIG_DISABLE_EVENT) {
		char sys[FDR_NAME_LEN], ev[FDR_NAME_LEN];
		size_t sl, el;
		const struct fdr_abi_event *te = NULL;

		if (*p != ':') {
			*pos = (int)(p - cmd);
			snprintf(msg, msg_len, "expected :SYSTEM:EVENT after %s", trig_names[kind]);
			return -EINVAL;
		}
		p++;
		sl = strcspn(p, ":");
		if (p[sl] != ':' || sl == 0 || sl >= sizeof(sys)) {
			*pos = (int)(p - cmd);
			snprintf(msg, msg_len, "expected SYSTEM:EVENT, found '%.*s'",
				 (int)strcspn(p, " \t"), p);
			return -EINVAL;
		}
		memcpy(sys, p, sl);
		sys[sl] = 0;
		el = strcspn(p + sl + 1, ": \t");
		if (el == 0 || el >= sizeof(ev)) {
			*pos = (int)(p + sl + 1 - cmd);
			snprintf(msg, msg_len, "expected an event name after '%s:'", sys);
			return -EINVAL;
		}
		memcpy(ev, p + sl + 1, el);
		ev[el] = 0;
		for (k = 0, bound = fdr_events_bound(c); k < bound; k++)
			if (c->events[k].state == FDR_EVENT_READY &&
			    strncmp(c->events[k].system, sys, FDR_NAME_LEN) == 0 &&
			    strncmp(c->events[k].name, ev, FDR_NAME_LEN) == 0)
				te = &c->events[k];
		if (!te || te->id == FDR_EVENT_ID_PRINT) {
			*pos = (int)(p - cmd);
			snprintf(msg, msg_len, "no event %s:%s is registered", sys, ev);
			return -EINVAL;
		}
		target = event_slot(c, te);
		p += sl + 1 + el;
	}
	if (*p == ':' && remove) {
		/*
		 * As the kernel: a removal matches on the command (and the target
		 * event) only, so the count is not read: the file's own text
		 * ("traceoff:unlimited", "snapshot:count=0") removes its trigger.
		 */
		p += strcspn(p, " \t");
	} else if (*p == ':') {
		char *end;
		long v;

		p++;
		v = strtol(p, &end, 10);
		if (end == p || v < 0 || v > INT32_MAX || (*end && !isspace((unsigned char)*end))) {
			*pos = (int)(p - cmd);
			snprintf(msg, msg_len, "expected a count (a decimal number), found '%.*s'",
				 (int)strcspn(p, " \t"), p);
			return -EINVAL;
		}
		count = (int)v;
		p = end;
	}
	while (isspace((unsigned char)*p))
		p++;
	ifp = NULL;
	if (*p) {
		if (strncmp(p, "if", 2) || !isspace((unsigned char)p[2])) {
			*pos = (int)(p - cmd);
			snprintf(msg, msg_len,
				 "expected 'if FILTER' or nothing after the command, found '%s'",
				 p);
			return -EINVAL;
		}
		ifp = p + 3;
	}
	if (remove) {
		/* count and filter may be given but do not take part in matching */
		for (t = h->trigger[inst], n = 0;
		     t && t <= FDR_MAX_TRIGGERS && n < FDR_MAX_TRIGGERS;
		     prev = t, t = c->triggers[t - 1].next, n++) {
			struct fdr_abi_trigger *tr = &c->triggers[t - 1];

			if (!trig_same(tr, kind, target))
				continue;
			if (prev)
				__atomic_store_n(&c->triggers[prev - 1].next, tr->next,
						 __ATOMIC_RELEASE);
			else
				__atomic_store_n(&h->trigger[inst], (uint16_t)tr->next,
						 __ATOMIC_RELEASE);
			filter_slot_free(c, tr->filter);
			tr->freed_ns = hc_now();
			__atomic_store_n(&tr->state, FDR_SLOT_FREE, __ATOMIC_RELEASE);
			break;
		}
		if (!h->trigger[inst])
			bit_set(h->triggered, inst, 0);
		soft_recount(c, inst);
		fdr_hooks_recount(c);
		return 0; /* removing something absent succeeds silently */
	}
	for (t = h->trigger[inst], n = 0; t && t <= FDR_MAX_TRIGGERS && n < FDR_MAX_TRIGGERS;
	     t = c->triggers[t - 1].next, n++)
		if (trig_conflicts(&c->triggers[t - 1], kind, target))
			return -EEXIST;
	if (kind == FDR_TRIG_SNAPSHOT) {
		ret = fdr_session_snapshot_alloc(s, inst, 1);
		if (ret)
			return ret;
	}
	slot = trig_slot_new(c);
	if (slot < 0)
		return slot;
	if (ifp) {
		struct fdr_filter_error err = { 0, 0, 0 };

		fslot = filter_slot_new(c, es);
		if (fslot < 0)
			return fslot;
		ret = fdr_filter_compile(
			e, ifp, (struct fdr_filter_prog *)(void *)c->filters[fslot].prog, &err);
		if (ret != 0) {
			filter_slot_free(c, (uint32_t)fslot + 1);
			*pos = (int)(ifp - cmd) + err.pos;
			snprintf(msg, msg_len, "%s",
				 ret == FDR_FILTER_CLEAR ?
					 "expected a filter after 'if', found '0'" :
					 fdr_filter_error_message(&err));
			return -EINVAL;
		}
		snprintf(c->filters[fslot].text, sizeof(c->filters[fslot].text), "%s", ifp);
	}
	{
		struct fdr_abi_trigger *tr = &c->triggers[slot];

		tr->cmd = kind;
		tr->count = count;
		tr->target = target;
		tr->filter = fslot >= 0 ? (uint32_t)fslot + 1 : 0;
		tr->next = h->trigger[inst];
		tr->freed_ns = 0;
		__atomic_store_n(&tr->state, FDR_SLOT_USED, __ATOMIC_RELEASE);
		/* release: the trigger is complete before writers can reach it */
		__atomic_store_n(&h->trigger[inst], (uint16_t)(slot + 1), __ATOMIC_RELEASE);
		bit_set(h->triggered, inst, 1);
	}
	soft_recount(c, inst);
	fdr_hooks_recount(c);
	return 0;
}

/** fdr_hooks_trigger_text - the trigger file: one line per trigger, newest first */
int fdr_hooks_trigger_text(const struct fdr_abi_control *c, uint32_t inst,
			   const struct fdr_abi_event *e, struct fdr_buf *b)
{
	const struct fdr_abi_hooks *h = &c->hooks[event_slot(c, e)];
	uint32_t t, n;
	int ret = 0;

	if (!h->trigger[inst])
		return fdr_buf_printf(
			b, "# Available triggers:\n"
			   "# traceon traceoff snapshot stacktrace enable_event disable_event\n");
	for (t = h->trigger[inst], n = 0; t && t <= FDR_MAX_TRIGGERS && n < FDR_MAX_TRIGGERS;
	     t = c->triggers[t - 1].next, n++) {
		const struct fdr_abi_trigger *tr = &c->triggers[t - 1];
		const char *name = tr->cmd < sizeof(trig_names) / sizeof(trig_names[0]) &&
						   trig_names[tr->cmd] ?
					   trig_names[tr->cmd] :
					   "unknown";

		if (tr->state != FDR_SLOT_USED)
			continue;
		ret |= fdr_buf_printf(b, "%s", name);
		if ((tr->cmd == FDR_TRIG_ENABLE_EVENT || tr->cmd == FDR_TRIG_DISABLE_EVENT) &&
		    tr->target < FDR_MAX_EVENTS)
			ret |= fdr_buf_printf(b, ":%.*s:%.*s", FDR_NAME_LEN,
					      c->events[tr->target].system, FDR_NAME_LEN,
					      c->events[tr->target].name);
		if (tr->count < 0)
			ret |= fdr_buf_printf(b, ":unlimited");
		else
			ret |= fdr_buf_printf(b, ":count=%d", tr->count);
		if (tr->filter && tr->filter <= FDR_MAX_FILTERS) {
			char ft[FDR_FILTER_TEXT_LEN + 1];
			size_t l;

			snprintf(ft, sizeof(ft), "%.*s", FDR_FILTER_TEXT_LEN,
				 c->filters[tr->filter - 1].text);
			l = fdr_filter_text_len(ft);
			ret |= fdr_buf_printf(b, " if %.*s", (int)l, ft);
		}
		ret |= fdr_buf_add(b, "\n", 1);
	}
	return ret ? -ENOMEM : 0;
}

/** fdr_hooks_soft - is an event armed by a trigger in an instance ('*' in enable) */
int fdr_hooks_soft(const struct fdr_abi_control *c, uint32_t inst, const struct fdr_abi_event *e)
{
	return bit_get(c->hooks[event_slot(c, e)].soft, inst);
}

/** fdr_hooks_instance_clear - drop every hook of an instance (rmdir; lock held) */
void fdr_hooks_instance_clear(struct fdr_abi_control *c, uint32_t inst)
{
	uint32_t es, t, n, bound = fdr_events_bound(c);

	for (es = 0; es < bound; es++) {
		struct fdr_abi_hooks *h = &c->hooks[es];

		bit_set(h->filtered, inst, 0);
		bit_set(h->triggered, inst, 0);
		bit_set(h->soft, inst, 0);
		filter_slot_free(c, h->filter[inst]);
		err_slot_free(c, h->filter_err[inst]);
		h->filter[inst] = 0;
		h->filter_err[inst] = 0;
		for (t = h->trigger[inst], n = 0;
		     t && t <= FDR_MAX_TRIGGERS && n < FDR_MAX_TRIGGERS;
		     t = c->triggers[t - 1].next, n++) {
			filter_slot_free(c, c->triggers[t - 1].filter);
			c->triggers[t - 1].freed_ns = hc_now();
			c->triggers[t - 1].state = FDR_SLOT_FREE;
		}
		h->trigger[inst] = 0;
	}
	c->instances[inst].nr_pids = 0;
	memset(&c->inst_ext[inst], 0, sizeof(c->inst_ext[inst])); /* set_event_notrace_pid */
	fdr_hooks_recount(c);
}

/*
 * fdr_hooks_event_busy - does a trigger hold event @es in some instance: a
 * trigger of its own, or an enable_event/disable_event trigger that names it
 * (the kernel's soft mode)? A probe event held so cannot be removed (EBUSY).
 */
int fdr_hooks_event_busy(const struct fdr_abi_control *c, uint32_t es)
{
	uint32_t i, w, bound = fdr_instances_bound(c);

	for (w = 0; w < FDR_MAX_INSTANCES / 64; w++)
		if (__atomic_load_n(&c->hooks[es].triggered[w], __ATOMIC_ACQUIRE))
			return 1;
	for (i = 0; i < bound; i++)
		if (c->instances[i].state == FDR_INST_LIVE && trig_targets(c, i, es))
			return 1;
	return 0;
}

/**
 * fdr_hooks_event_clear - drop the filters of event @es in every instance, before
 * its registry entry is freed (a removed probe event; lock held, no trigger
 * left: fdr_hooks_event_busy())
 */
void fdr_hooks_event_clear(struct fdr_abi_control *c, uint32_t es)
{
	struct fdr_abi_hooks *h = &c->hooks[es];
	uint32_t inst;

	for (inst = 0; inst < FDR_MAX_INSTANCES; inst++) {
		bit_set(h->filtered, inst, 0);
		bit_set(h->soft, inst, 0);
		filter_slot_free(c, h->filter[inst]);
		err_slot_free(c, h->filter_err[inst]);
		h->filter[inst] = 0;
		h->filter_err[inst] = 0;
	}
	fdr_hooks_recount(c);
}
