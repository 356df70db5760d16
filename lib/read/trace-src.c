// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * trace-src.c - struct fdr_trace: the common calls, and the source that reads a
 * live session's instance (its buffers or its snapshot) through a merged reader.
 *
 * The session's event registry is shared memory and may change or be corrupted
 * while we read: descriptions are copied into private memory when first seen, so
 * a record's description stays valid and stable for the whole read.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/utsname.h>

#include "common/bounds.h"
#include "read-local.h"
#include "trace-src.h"

static const char *const trace_clock_names[FDR_CLOCK_NR] = {
	[FDR_CLOCK_LOCAL] = "local",	   [FDR_CLOCK_GLOBAL] = "global",
	[FDR_CLOCK_COUNTER] = "counter",   [FDR_CLOCK_UPTIME] = "uptime",
	[FDR_CLOCK_PERF] = "perf",	   [FDR_CLOCK_MONO] = "mono",
	[FDR_CLOCK_MONO_RAW] = "mono_raw", [FDR_CLOCK_BOOT] = "boot",
	[FDR_CLOCK_TAI] = "tai",	   [FDR_CLOCK_X86_TSC] = "x86-tsc",
};

const char *fdr_trace_clock_name(uint32_t clock)
{
	return clock < FDR_CLOCK_NR && trace_clock_names[clock] ? trace_clock_names[clock] :
								  "local";
}

int fdr_trace_clock_by_name(const char *name)
{
	int k;

	for (k = 0; k < FDR_CLOCK_NR; k++)
		if (trace_clock_names[k] && strcmp(trace_clock_names[k], name) == 0)
			return k;
	return -1;
}

void fdr_trace_info_local(struct fdr_trace_info *info)
{
	struct utsname u;

	if (uname(&u) == 0) {
		snprintf(info->hostname, sizeof(info->hostname), "%s", u.nodename);
		snprintf(info->sysname, sizeof(info->sysname), "%s", u.sysname);
		snprintf(info->release, sizeof(info->release), "%s", u.release);
	}
}

void fdr_trace_clock_point(const struct fdr_abi_control *ctl, uint32_t clock, uint64_t *offset_ns,
			   uint64_t *ts_hz)
{
	/* each read once: the session is shared memory and may change under us */
	uint64_t real = __atomic_load_n(&ctl->cal_real_ns, __ATOMIC_RELAXED);
	uint64_t boot = __atomic_load_n(&ctl->cal_boot_ns, __ATOMIC_RELAXED);
	uint64_t mono = __atomic_load_n(&ctl->cal_mono_ns, __ATOMIC_RELAXED);
	uint64_t tsc = __atomic_load_n(&ctl->cal_tsc, __ATOMIC_RELAXED);
	uint64_t khz = __atomic_load_n(&ctl->tsc_khz, __ATOMIC_RELAXED);

	*offset_ns = 0;
	*ts_hz = fdr_clock_is_ns(clock) ? 1000000000u : 0;
	if (clock == FDR_CLOCK_BOOT && real > boot) {
		*offset_ns = real - boot;
	} else if (fdr_clock_is_ns(clock) && real > mono) {
		*offset_ns = real - mono;
	} else if (clock == FDR_CLOCK_X86_TSC &&
		   __atomic_load_n(&ctl->ts_source, __ATOMIC_RELAXED) == FDR_TS_TSC && khz &&
		   khz < UINT64_MAX / 1000) {
		/* the calibration point: cal_tsc and cal_real_ns are one instant */
		unsigned __int128 since0 = (unsigned __int128)tsc * 1000000u / khz;

		*ts_hz = khz * 1000u;
		if (since0 < real)
			*offset_ns = real - (uint64_t)since0;
	}
}

/* ---- the common calls ------------------------------------------------------------------ */

void fdr_trace_close(struct fdr_trace *t)
{
	if (t)
		t->ops->close(t);
}

const struct fdr_trace_info *fdr_trace_get_info(const struct fdr_trace *t)
{
	return &t->info;
}

int fdr_trace_next(struct fdr_trace *t, struct fdr_trace_rec *rec)
{
	return t->ops->next(t, rec);
}

size_t fdr_trace_nr_events(const struct fdr_trace *t)
{
	return t->ops->nr_events(t);
}

const struct fdr_abi_event *fdr_trace_event_at(const struct fdr_trace *t, size_t i)
{
	return t->ops->event_at(t, i);
}

const struct fdr_abi_event *fdr_trace_event(const struct fdr_trace *t, uint32_t id)
{
	return t->ops->event(t, id);
}

const char *fdr_trace_comm(const struct fdr_trace *t, int32_t pid, char *buf, size_t len)
{
	return t->ops->comm(t, pid, buf, len);
}

int32_t fdr_trace_tgid(const struct fdr_trace *t, int32_t pid)
{
	int32_t tgid = t->ops->tgid ? t->ops->tgid(t, pid) : 0;

	return tgid > 0 ? tgid : pid;
}

uint32_t fdr_trace_nr_buffers(const struct fdr_trace *t)
{
	return t->ops->nr_buffers ? t->ops->nr_buffers(t) : 1;
}

const char *fdr_trace_buffer_name(const struct fdr_trace *t, uint32_t i)
{
	if (t->ops->buffer_name)
		return t->ops->buffer_name(t, i);
	return i ? NULL : "";
}

uint32_t fdr_trace_rec_buffer(const struct fdr_trace *t, const struct fdr_trace_rec *rec)
{
	return t->ops->rec_buffer ? t->ops->rec_buffer(t, rec) : 0;
}

void fdr_trace_commit(struct fdr_trace *t)
{
	if (t->ops->commit)
		t->ops->commit(t);
}

/**
 * fdr_trace_format - one record as a line of the trace file, the kernel's layout:
 * "%16s-%-7d [%03d] ..... %5lu.%06lu: NAME: BODY\n"
 */
int fdr_trace_format(const struct fdr_trace *t, const struct fdr_trace_rec *rec, struct fdr_buf *b)
{
	struct fdr_common c;
	char comm[FDR_COMM_LEN + 8], flags[6] = ".....";
	int ret;

	if (rec->len < sizeof(c))
		return fdr_buf_printf(b, "<record of %u bytes: shorter than its header>\n",
				      rec->len);
	memcpy(&c, rec->payload, sizeof(c));
	if (c.preempt_count)
		flags[3] = "0123456789abcdef"[c.preempt_count & 0xf];
	ret = fdr_buf_printf(b, "%16s-%-7d [%03u] %s", fdr_trace_comm(t, c.pid, comm, sizeof(comm)),
			     c.pid, rec->cpu, flags);
	ret |= fdr_format_ts(t->info.clock, rec->ts, b);
	ret |= fdr_buf_add(b, ": ", 2);
	if (!rec->ev)
		return ret | fdr_buf_printf(b, "type: %u\n", c.type) ? -ENOMEM : 0;
	return ret | fdr_format_event_line(rec->ev, rec->payload, rec->len, b) ? -ENOMEM : 0;
}

/* ---- a session's instance -------------------------------------------------------------- */

struct sess_src {
	struct fdr_session *s;
	struct fdr_reader *r;
	uint32_t inst;
	unsigned flags; /* as opened */
	int cpu; /* -1: all CPUs */
	struct fdr_abi_event **events; /* private copies, in the order first seen */
	size_t nr_events;
	struct fdr_abi_event *by_id[UINT16_MAX + 1]; /* id (common_type) -> copy */
	unsigned char refused[UINT16_MAX + 1]; /* ids whose entry did not check out */
};

/* Copy the description of @id out of the registry (once). */
static const struct fdr_abi_event *sess_event_load(struct sess_src *ss, uint32_t id)
{
	const struct fdr_abi_control *ctl = fdr_session_control(ss->s);
	const struct fdr_abi_event *e;
	struct fdr_abi_event *copy, **grown;

	if (id <= UINT16_MAX && ss->by_id[id])
		return ss->by_id[id];
	if (id <= UINT16_MAX && ss->refused[id])
		return NULL; /* said once: its records print as unknown events */
	e = fdr_event_by_id(ctl, id);
	if (!e || id > UINT16_MAX)
		return NULL;
	copy = malloc(sizeof(*copy));
	grown = realloc(ss->events, (ss->nr_events + 1) * sizeof(*grown));
	if (!copy || !grown) {
		free(copy);
		if (grown)
			ss->events = grown;
		return NULL;
	}
	ss->events = grown;
	/* checked on the copy: the registry may change under us (fdr_shm_check_event()) */
	memcpy(copy, e, sizeof(*copy));
	if (copy->id != id || copy->state != FDR_EVENT_READY ||
	    fdr_shm_check_event(copy, (uint32_t)(e - ctl->events))) {
		if (copy->id == id) {
			fdr_reader_complain(ss->r, fdr_shm_error());
			if (id <= UINT16_MAX)
				ss->refused[id] = 1;
		}
		free(copy);
		return NULL;
	}
	ss->events[ss->nr_events++] = copy;
	ss->by_id[id] = copy;
	return copy;
}

static int sess_next(struct fdr_trace *t, struct fdr_trace_rec *out)
{
	struct sess_src *ss = t->priv;
	struct fdr_record rec;
	struct fdr_common c;
	int ret = fdr_reader_next(ss->r, &rec);

	if (ret <= 0)
		return ret;
	out->cpu = rec.cpu;
	out->len = rec.len;
	out->ts = rec.ts;
	out->payload = rec.payload;
	out->lost_before = rec.lost_before;
	out->ev = NULL;
	if (rec.len >= sizeof(c)) {
		memcpy(&c, rec.payload, sizeof(c));
		out->ev = sess_event_load(ss, c.type);
	}
	return 1;
}

static size_t sess_nr_events(const struct fdr_trace *t)
{
	const struct sess_src *ss = t->priv;

	return ss->nr_events;
}

static const struct fdr_abi_event *sess_event_at(const struct fdr_trace *t, size_t i)
{
	const struct sess_src *ss = t->priv;

	return i < ss->nr_events ? ss->events[i] : NULL;
}

static const struct fdr_abi_event *sess_event(const struct fdr_trace *t, uint32_t id)
{
	return sess_event_load(t->priv, id);
}

static const char *sess_comm(const struct fdr_trace *t, int32_t pid, char *buf, size_t len)
{
	const struct sess_src *ss = t->priv;

	return fdr_comm_lookup(fdr_session_control(ss->s), pid, buf, len);
}

static int32_t sess_tgid(const struct fdr_trace *t, int32_t pid)
{
	const struct sess_src *ss = t->priv;

	return fdr_tgid_lookup(fdr_session_control(ss->s), pid);
}

static void sess_commit(struct fdr_trace *t)
{
	struct sess_src *ss = t->priv;

	fdr_reader_commit(ss->r);
}

static void sess_close(struct fdr_trace *t)
{
	struct sess_src *ss = t->priv;
	size_t i;

	fdr_reader_close(ss->r);
	for (i = 0; i < ss->nr_events; i++)
		free(ss->events[i]);
	free(ss->events);
	free(ss);
	free(t);
}

static const struct fdr_trace_ops sess_ops = {
	.next = sess_next,
	.nr_events = sess_nr_events,
	.event_at = sess_event_at,
	.event = sess_event,
	.comm = sess_comm,
	.tgid = sess_tgid,
	.commit = sess_commit,
	.close = sess_close,
};

/**
 * fdr_trace_open_session - a source over instance @inst of session @s, all CPUs
 * merged in time order
 * @flags: FDR_READ_SNAPSHOT for the snapshot, FDR_READ_CONSUME to consume
 *
 * Every event registered when it opens is listed (fdr_trace_event_at), so
 * exporters can describe events that have no records yet.
 */
static int sess_open(struct fdr_session *s, uint32_t inst, int cpu, unsigned flags,
		     struct fdr_trace **out);

int fdr_trace_open_session(struct fdr_session *s, uint32_t inst, unsigned flags,
			   struct fdr_trace **out)
{
	return sess_open(s, inst, -1, flags, out);
}

/**
 * fdr_trace_split_cpu - a source over CPU @cpu only of @t, a session's snapshot
 * (fdr_trace_open_session() with FDR_READ_SNAPSHOT and nothing else), so that
 * several threads can read a snapshot's CPUs side by side: the records of @cpu
 * are those @t gives for it, with the same losses
 *
 * Returns: 0 and *@out (fdr_trace_close() it), -EOPNOTSUPP for any other
 * source, or another negative errno.
 */
int fdr_trace_split_cpu(struct fdr_trace *t, uint32_t cpu, struct fdr_trace **out)
{
	const struct sess_src *ss = t->priv;

	*out = NULL;
	if (t->ops != &sess_ops || ss->flags != FDR_READ_SNAPSHOT || ss->cpu >= 0)
		return -EOPNOTSUPP;
	if (cpu >= t->info.nr_cpus)
		return -EINVAL;
	return sess_open(ss->s, ss->inst, (int)cpu, ss->flags, out);
}

static int sess_open(struct fdr_session *s, uint32_t inst, int cpu, unsigned flags,
		     struct fdr_trace **out)
{
	const struct fdr_abi_control *ctl = fdr_session_control(s);
	struct fdr_trace *t;
	struct sess_src *ss;
	uint32_t i, clock, bound;
	int ret, n;

	if (inst >= FDR_MAX_INSTANCES)
		return -EINVAL;
	t = calloc(1, sizeof(*t));
	ss = calloc(1, sizeof(*ss));
	if (!t || !ss) {
		free(t);
		free(ss);
		return -ENOMEM;
	}
	ss->s = s;
	ss->inst = inst;
	ss->flags = flags;
	ss->cpu = cpu;
	t->ops = &sess_ops;
	t->priv = ss;
	ret = fdr_reader_open(s, inst, cpu, flags, &ss->r);
	if (ret) {
		free(ss);
		free(t);
		return ret;
	}
	n = fdr_ring_nr_cpus(s, inst);
	t->info.nr_cpus = n > 0 ? (uint32_t)n : 0;
	clock = fdr_reader_clock(ss->r)->clock;
	t->info.clock = clock;
	t->info.page_size = fdr_reader_subbuf_size(ss->r);
	t->info.long_size = sizeof(long);
	snprintf(t->info.clock_name, sizeof(t->info.clock_name), "%s", fdr_trace_clock_name(clock));
	snprintf(t->info.origin, sizeof(t->info.origin), "%s", fdr_session_path(s));
	fdr_trace_info_local(&t->info);
	fdr_trace_clock_point(ctl, clock, &t->info.offset_ns, &t->info.ts_hz);
	for (i = 0, bound = fdr_events_bound(ctl); i < bound; i++) {
		const struct fdr_abi_event *e = &ctl->events[i];

		if (__atomic_load_n(&e->state, __ATOMIC_ACQUIRE) == FDR_EVENT_READY)
			sess_event_load(ss, e->id);
	}
	*out = t;
	return 0;
}
