// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * hooks.c - filters, pid lists and triggers, run in the writer (docs/tracefs.md).
 *
 * While the session has none (control.hooks_active == 0) the event path never
 * comes here. Otherwise, for each instance where the event is enabled or has
 * triggers:
 *
 *	pid lists                 the writer's tid or tgid must be listed in
 *	                          set_event_pid (if it lists any) and not in
 *	                          set_event_notrace_pid
 *	tracing_cpumask           the record is written only on the CPUs set
 *	options/stacktrace        an ftrace:user_stack record follows each record
 *	filter                    evaluated on the payload before anything is
 *	                          reserved: a record that does not match costs no
 *	                          buffer space
 *	record                    if enabled and tracing_on
 *	triggers                  then, synchronously, newest first: each with its
 *	                          own "if FILTER" and count
 *
 * so a `snapshot if status >= 500` trigger swaps the buffers right after the
 * failing event is committed: the snapshot ends with it, and everything before
 * it is there. Everything here is async-signal-safe and bounded; hooks come from
 * shared memory and are validated before use (a bad filter program records).
 * Counts follow the kernel: traceon/traceoff/enable_event/disable_event count
 * only the fires that change something, snapshot and stacktrace every fire.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <execinfo.h>
#include <limits.h>
#include <linux/futex.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core-local.h"
#include "ring-fast.h"
#include "common/filter.h"

static __thread __attribute__((tls_model("initial-exec"))) struct {
	char comm[FDR_COMM_LEN];
	int32_t tgid;
	int have;
} hk_self;

/* Forget the cached comm/tgid (after fork or a rename). */
void fdr_hooks_forget_self(void)
{
	hk_self.have = 0;
}

static void hk_fill_ctx(struct fdr_filter_ctx *ctx)
{
	struct rseq *rs = rb_rseq_area();

	if (!hk_self.have) {
		memset(hk_self.comm, 0, sizeof(hk_self.comm));
		prctl(PR_GET_NAME, hk_self.comm);
		hk_self.tgid = (int32_t)getpid();
		hk_self.have = 1;
	}
	ctx->cpu = __atomic_load_n(&rs->cpu_id_start, __ATOMIC_RELAXED);
	memcpy(ctx->comm, hk_self.comm, sizeof(ctx->comm));
}

/* Is @tid (or this process, tgid) in the list @pids of @nr entries? */
static int hk_pid_listed(const int32_t *pids, uint32_t n, int32_t tid)
{
	uint32_t i;

	if (n > FDR_MAX_PIDS)
		n = FDR_MAX_PIDS;
	for (i = 0; i < n; i++) {
		int32_t p = __atomic_load_n(&pids[i], __ATOMIC_RELAXED);

		if (p == tid || p == hk_self.tgid)
			return 1;
	}
	return 0;
}

/*
 * May @tid record in instance @i? As the kernel's trace_ignore_this_task():
 * not if set_event_pid has entries and lists neither its tid nor its tgid, nor
 * if set_event_notrace_pid lists either.
 */
static int hk_pid_ok(const struct fdr_abi_control *ctl, uint32_t i, int32_t tid)
{
	const struct fdr_abi_instance *in = &ctl->instances[i];
	const struct fdr_abi_instance_ext *x = &ctl->inst_ext[i];
	uint32_t n = __atomic_load_n(&in->nr_pids, __ATOMIC_ACQUIRE);

	if (n && !hk_pid_listed(in->pids, n, tid))
		return 0;
	n = __atomic_load_n(&x->nr_notrace_pids, __ATOMIC_ACQUIRE);
	return !n || !hk_pid_listed(x->notrace_pids, n, tid);
}

/* Does tracing_cpumask let the instance record on @cpu? */
static int hk_cpu_ok(const struct fdr_abi_instance *in, uint32_t cpu)
{
	if (cpu >= FDR_MAX_CPUS)
		return 1;
	return (__atomic_load_n(&in->cpumask[cpu / 64], __ATOMIC_RELAXED) >> (cpu % 64)) & 1;
}

/* Evaluate filter slot @f (slot + 1) on a payload; 1 = record. */
static int hk_filter(const struct fdr_abi_control *ctl, uint32_t f, const unsigned char *payload,
		     uint32_t len, struct fdr_filter_ctx *ctx)
{
	const struct fdr_filter_prog *p;

	if (!f || f > FDR_MAX_FILTERS)
		return 1;
	p = (const void *)ctl->filters[f - 1].prog;
	if (p->flags & FDR_FILTER_F_COMM) {
		/* the current name: a thread may rename itself at any time */
		memset(ctx->comm, 0, sizeof(ctx->comm));
		prctl(PR_GET_NAME, ctx->comm);
	}
	return fdr_filter_eval(p, payload, len, ctx);
}

/*
 * fdr_hooks_filter - evaluate filter slot @f (slot + 1) on a payload, for the
 * event path's route cache (an event whose only hook is one instance's filter).
 * Returns 1 to record.
 */
int fdr_hooks_filter(struct fdr_session *s, uint32_t f, const unsigned char *payload, uint32_t len)
{
	struct fdr_filter_ctx ctx;

	hk_fill_ctx(&ctx);
	return hk_filter(s->ctl, f, payload, len, &ctx);
}

/* Take one fire from a trigger's count; 0 when it is used up. */
static int hk_take(struct fdr_abi_trigger *t)
{
	int32_t c = __atomic_load_n(&t->count, __ATOMIC_ACQUIRE);

	for (;;) {
		if (c < 0)
			return 1;
		if (c == 0)
			return 0;
		if (__atomic_compare_exchange_n(&t->count, &c, c - 1, 0, __ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE))
			return 1;
	}
}

/* Tell attached processes an enable changed (a futex wake is async-signal-safe). */
static void hk_changed(struct fdr_abi_control *ctl)
{
	__atomic_fetch_add(&ctl->gen, 1, __ATOMIC_RELEASE);
	syscall(SYS_futex, &ctl->gen, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

/* Record the calling thread's user stack (the stacktrace trigger) into @inst. */
static void hk_stack(struct fdr_session *s, uint32_t inst, int32_t tid)
{
	unsigned char raw[16 + 16 + 8 * FDR_STACK_DEPTH + 8] __attribute__((aligned(8)));
	unsigned char *p = raw + 16;
	struct fdr_common *c = (void *)p;
	struct fdr_abi_rec *r = (void *)raw;
	void *frames[FDR_STACK_DEPTH + 3];
	uint64_t addr[FDR_STACK_DEPTH] = { 0 };
	uint32_t tgid = (uint32_t)hk_self.tgid;
	struct fdr_ring_map *m = atomic_load_explicit(&s->rings[inst], memory_order_acquire);
	int n, i;

	if (!m || !__atomic_load_n(&s->ctl->instances[inst].tracing_on, __ATOMIC_ACQUIRE))
		return;
	/* skip this function, the hook runner and the event path */
	n = backtrace(frames, FDR_STACK_DEPTH + 3);
	for (i = 3; i < n && i - 3 < FDR_STACK_DEPTH; i++)
		addr[i - 3] = (uint64_t)(uintptr_t)frames[i];
	memset(raw, 0, sizeof(raw));
	c->type = FDR_EVENT_ID_USER_STACK;
	c->pid = tid;
	memcpy(p + 8, &tgid, 4);
	memcpy(p + 16, addr, sizeof(addr));
	r->len_type = (uint32_t)(16 + 16 + sizeof(addr)) | FDR_REC_DATA << FDR_REC_TYPE_SHIFT;
	fdr_ring_write_fast(s, inst, m, raw, 16 + 16 + sizeof(addr));
}

static void hk_run_triggers(struct fdr_session *s, struct fdr_abi_hooks *h, uint32_t inst,
			    const unsigned char *payload, uint32_t len, struct fdr_filter_ctx *ctx,
			    int32_t tid)
{
	struct fdr_abi_control *ctl = s->ctl;
	struct fdr_abi_instance *in = &ctl->instances[inst];
	uint32_t t = __atomic_load_n(&h->trigger[inst], __ATOMIC_ACQUIRE), steps;

	for (steps = 0; t && t <= FDR_MAX_TRIGGERS && steps < FDR_MAX_TRIGGERS; steps++) {
		struct fdr_abi_trigger *tr = &ctl->triggers[t - 1];
		uint32_t next = __atomic_load_n(&tr->next, __ATOMIC_ACQUIRE);

		t = next;
		if (__atomic_load_n(&tr->state, __ATOMIC_ACQUIRE) != FDR_SLOT_USED)
			continue;
		if (tr->filter && !hk_filter(ctl, tr->filter, payload, len, ctx))
			continue;
		switch (tr->cmd) {
		case FDR_TRIG_TRACEON:
		case FDR_TRIG_TRACEOFF: {
			uint32_t want = tr->cmd == FDR_TRIG_TRACEON;

			if (__atomic_load_n(&in->tracing_on, __ATOMIC_ACQUIRE) == want ||
			    !hk_take(tr))
				break;
			__atomic_store_n(&in->tracing_on, want, __ATOMIC_RELEASE);
			hk_changed(ctl);
			break;
		}
		case FDR_TRIG_ENABLE_EVENT:
		case FDR_TRIG_DISABLE_EVENT: {
			struct fdr_abi_event *te;
			int on = tr->cmd == FDR_TRIG_ENABLE_EVENT;

			if (tr->target >= FDR_MAX_EVENTS)
				break;
			te = &ctl->events[tr->target];
			if (fdr_event_is_enabled(te, inst) == on || !hk_take(tr))
				break;
			fdr_event_set_enabled(te, inst, on);
			/* this process records the target at once, before its agent runs */
			if (on)
				fdr_event_enabled_hint(tr->target);
			hk_changed(ctl);
			break;
		}
		case FDR_TRIG_SNAPSHOT: {
			struct fdr_ring_map *m =
				atomic_load_explicit(&s->rings[inst], memory_order_acquire);

			/* a refused swap (saver busy, not allocated) does not use up a count */
			if (m && hk_take(tr) && fdr_ring_swap(m, -1) < 0 &&
			    __atomic_load_n(&tr->count, __ATOMIC_ACQUIRE) >= 0)
				__atomic_fetch_add(&tr->count, 1, __ATOMIC_RELEASE);
			break;
		}
		case FDR_TRIG_STACKTRACE:
			if (hk_take(tr))
				hk_stack(s, inst, tid);
			break;
		default:
			break;
		}
	}
}

/**
 * fdr_hooks_commit - the event path when the session has hooks
 * @s: session
 * @enabled: the instances the event is enabled in (the registry entry's mask)
 * @slot: the event's registry slot
 * @rec: the record (struct fdr_abi_rec header, payload), @total bytes
 *
 * Writes the record where it passes the pid list and filter, then runs the
 * triggers. Async-signal-safe, bounded.
 */
void fdr_hooks_commit(struct fdr_session *s, const uint64_t *enabled, uint32_t slot,
		      unsigned char *rec, size_t total)
{
	struct fdr_abi_control *ctl = s->ctl;
	struct fdr_abi_hooks *h = &ctl->hooks[slot % FDR_MAX_EVENTS];
	const unsigned char *payload = rec + sizeof(struct fdr_abi_rec);
	uint32_t len = (uint32_t)(total - sizeof(struct fdr_abi_rec));
	const struct fdr_common *c = (const void *)payload;
	struct fdr_filter_ctx ctx;
	uint32_t w;

	hk_fill_ctx(&ctx);
	for (w = 0; w < FDR_MAX_INSTANCES / 64; w++) {
		uint64_t en = __atomic_load_n(&enabled[w], __ATOMIC_ACQUIRE);
		uint64_t tr = __atomic_load_n(&h->triggered[w], __ATOMIC_ACQUIRE);
		uint64_t fl = __atomic_load_n(&h->filtered[w], __ATOMIC_ACQUIRE);
		uint64_t bits = en | tr;

		while (bits) {
			uint32_t b = (uint32_t)__builtin_ctzll(bits), i = w * 64 + b;
			uint64_t bit = 1ull << b;
			struct fdr_abi_instance *in = &ctl->instances[i];

			bits &= bits - 1;
			if (!hk_pid_ok(ctl, i, c->pid))
				continue;
			/* tracing_cpumask keeps the record out, not the triggers (kernel) */
			if ((en & bit) && in->tracing_on && hk_cpu_ok(in, ctx.cpu) &&
			    (!(fl & bit) ||
			     hk_filter(ctl, __atomic_load_n(&h->filter[i], __ATOMIC_ACQUIRE),
				       payload, len, &ctx))) {
				struct fdr_ring_map *m =
					atomic_load_explicit(&s->rings[i], memory_order_acquire);

				if (m) {
					fdr_ring_write_fast(s, i, m, rec, total);
					/* options/stacktrace: the stack after each record */
					if (__atomic_load_n(&in->options, __ATOMIC_RELAXED) &
					    FDR_OPT_STACKTRACE)
						hk_stack(s, i, c->pid);
				} else {
					fdr_ring_unmapped(s);
				}
			}
			if (tr & bit)
				hk_run_triggers(s, h, i, payload, len, &ctx, c->pid);
		}
	}
}

/* Load the unwinder now, in the agent, so backtrace() in a writer does not. */
void fdr_hooks_prepare(void)
{
	void *f[2];

	backtrace(f, 2);
}
