// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * export-pftrace.c - a trace as a Perfetto protobuf trace (ui.perfetto.dev,
 * trace_processor), the format that carries the kernel's scheduling: with it,
 * Perfetto draws a track per CPU (which thread ran when) and each thread's
 * states (running, runnable, sleeping), next to the application's events on
 * the threads that wrote them. The JSON export (export-perfetto.c) cannot:
 * Chrome JSON has slices and instants, no CPUs and no thread states.
 *
 * The file is a perfetto.protos.Trace: field 1 (packet), repeated, each a
 * TracePacket. Field numbers are the ones of Perfetto's protos
 * (protos/perfetto/trace/...), stable by Perfetto's contract; the ones used:
 *
 *   TracePacket      timestamp 8, trusted_packet_sequence_id 10,
 *                    sequence_flags 13 (1: incremental state cleared),
 *                    ftrace_events 1, track_event 11, track_descriptor 60,
 *                    system_info 45
 *   SystemInfo       utsname 1 { sysname 1, release 3 }
 *   FtraceEventBundle cpu 1, event 2 (repeated FtraceEvent)
 *   FtraceEvent      timestamp 1, pid 2, sched_switch 4, sched_wakeup 17,
 *                    sched_waking 20, sched_wakeup_new 114
 *   SchedSwitch      prev_comm 1, prev_pid 2, prev_prio 3, prev_state 4,
 *                    next_comm 5, next_pid 6, next_prio 7
 *   SchedWakeup(ing) comm 1, pid 2, prio 3, success 4, target_cpu 5
 *   TrackDescriptor  uuid 1, name 2, thread 4 { pid 1, tid 2, thread_name 5 }
 *   TrackEvent       type 9 (1 slice begin, 2 slice end, 3 instant),
 *                    track_uuid 11, categories 22, name 23,
 *                    debug_annotations 4 { name 10, bool_value 2,
 *                    uint_value 3, int_value 4, string_value 6,
 *                    pointer_value 7 }
 *
 * What goes where:
 *  - sched:sched_switch, sched_wakeup, sched_waking and sched_wakeup_new
 *    records (the kernel's, from the kernel instance of `fdr record -k`, or any
 *    trace.dat with them) become ftrace events, in one FtraceEventBundle per
 *    CPU and run of records (flushed every 64 KiB and at the end). Their
 *    fields are read by name from the event's format, so any kernel's layout
 *    works; a field the format lacks is left out.
 *  - Every other record is a TrackEvent on the track of the thread that wrote
 *    it (common_pid; its process from fdr_trace_tgid()), described once by a
 *    TrackDescriptor (uuid FDR_PT_THREAD_UUID + tid) with the thread's name:
 *    NAME_begin/_entry opens a slice NAME, NAME_end/_exit closes it, anything
 *    else is an instant; the category is the event's system; ftrace:print is
 *    an instant named by its text; every field is a debug annotation
 *    (integers as int or uint values, bool as bool, addresses as pointers,
 *    strings and char arrays as strings, byte and long arrays as hex strings).
 *  - Losses are instants "lost events" (annotations cpu and count) on a track
 *    of their own.
 *
 * Every packet is on one sequence (id 1), the first with "incremental state
 * cleared"; nothing is interned. Timestamps are the source's in ns (x86-tsc
 * counts scaled by the TSC's rate), on Perfetto's default clock: both the
 * ftrace events and the track events use it, so the two are on one time base
 * (Perfetto's absolute times are then CLOCK_MONOTONIC's for fdr's mono clock,
 * not the boot time the default clock is named after).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "read-local.h"
#include "export-local.h"
#include "trace-src.h"

#define PT_SEQ 1
#define PT_BUNDLE_FLUSH (64u << 10)
#define FDR_PT_THREAD_UUID 0x6664720000000000ull /* "fdr" << 40: thread tracks */
#define FDR_PT_LOST_UUID 0x6664710000000001ull

enum { PT_VARINT = 0, PT_I64 = 1, PT_LEN = 2 };

/* ---- protobuf wire format -------------------------------------------------------------- */

static int pt_varint(struct fdr_buf *b, uint64_t v)
{
	unsigned char p[10];
	size_t n = 0;

	do {
		p[n] = (unsigned char)(v & 0x7f);
		v >>= 7;
		if (v)
			p[n] |= 0x80;
		n++;
	} while (v);
	return fdr_buf_add(b, p, n);
}

static int pt_tag(struct fdr_buf *b, uint32_t field, unsigned wt)
{
	return pt_varint(b, ((uint64_t)field << 3) | wt);
}

static int pt_uint(struct fdr_buf *b, uint32_t field, uint64_t v)
{
	return pt_tag(b, field, PT_VARINT) | pt_varint(b, v);
}

/* int32 and int64 fields: two's complement, 10 bytes when negative (not zigzag). */
static int pt_int(struct fdr_buf *b, uint32_t field, int64_t v)
{
	return pt_uint(b, field, (uint64_t)v);
}

static int pt_bytes(struct fdr_buf *b, uint32_t field, const void *p, size_t n)
{
	return pt_tag(b, field, PT_LEN) | pt_varint(b, n) | fdr_buf_add(b, p, n);
}

/* A string field: bytes outside printable ASCII as '?', so it is valid UTF-8. */
static int pt_str(struct fdr_buf *b, uint32_t field, const void *s, size_t n)
{
	const unsigned char *p = s;
	size_t i;
	int ret = pt_tag(b, field, PT_LEN) | pt_varint(b, n);

	for (i = 0; i < n && !ret; i++)
		ret = fdr_buf_add(b, p[i] >= 0x20 && p[i] < 0x7f ? (const char *)&p[i] : "?", 1);
	return ret;
}

/* A nested message: @m as field @field of @b; @m is emptied. */
static int pt_msg(struct fdr_buf *b, uint32_t field, struct fdr_buf *m)
{
	int ret = pt_bytes(b, field, m->data ? m->data : "", m->len);

	m->len = 0;
	return ret;
}

/* ---- the writer ------------------------------------------------------------------------ */

struct pt_bundle {
	struct fdr_buf ev; /* FtraceEvent fields 2 of the CPU's current bundle */
};

struct pt_writer {
	struct fdr_export_out out;
	struct fdr_trace *t;
	struct fdr_buf b; /* the file's bytes, not yet written */
	struct fdr_buf pkt, te, sub, ann; /* messages being built */
	struct pt_bundle *cpus;
	uint32_t nr_cpus;
	struct fdr_tid_set tids; /* threads described */
	int have_lost, first;
	struct fdr_export_stats st;
};

/* One TracePacket from w->pkt (its fields), with the sequence id; w->pkt is emptied. */
static int pt_packet(struct pt_writer *w)
{
	int ret = pt_uint(&w->pkt, 10, PT_SEQ);

	if (w->first) {
		ret |= pt_uint(&w->pkt, 13, 1); /* SEQ_INCREMENTAL_STATE_CLEARED */
		w->first = 0;
	}
	ret |= pt_msg(&w->b, 1, &w->pkt);
	if (ret)
		return -ENOMEM;
	return fdr_export_flush(&w->out, w->out.fd, NULL, &w->b, FDR_EXPORT_FLUSH);
}

static uint64_t pt_ns(const struct fdr_trace_info *in, uint64_t ts)
{
	if (!in->ts_hz || in->ts_hz == 1000000000u)
		return ts;
	return (uint64_t)((unsigned __int128)ts * 1000000000u / in->ts_hz);
}

/* The TrackDescriptor of thread @tid, the first time it is seen. */
static int pt_thread(struct pt_writer *w, int32_t tid)
{
	char comm[FDR_COMM_LEN + 8];
	const char *name;
	int ret = fdr_tid_set_add(&w->tids, tid);

	if (ret <= 0)
		return ret;
	name = fdr_trace_comm(w->t, tid, comm, sizeof(comm));
	ret = pt_int(&w->sub, 1, tid ? fdr_trace_tgid(w->t, tid) : 0);
	ret |= pt_int(&w->sub, 2, tid);
	ret |= pt_str(&w->sub, 5, name, strlen(name));
	ret |= pt_uint(&w->te, 1, FDR_PT_THREAD_UUID + (uint32_t)tid);
	ret |= pt_msg(&w->te, 4, &w->sub);
	ret |= pt_msg(&w->pkt, 60, &w->te);
	return ret ? -ENOMEM : pt_packet(w);
}

/* The field named @name of @e, or NULL. */
static const struct fdr_abi_field *pt_field(const struct fdr_abi_event *e, const char *name)
{
	uint32_t i, nf = e->nr_fields < FDR_MAX_FIELDS ? e->nr_fields : FDR_MAX_FIELDS;

	for (i = 0; i < nf; i++)
		if (!strncmp(e->fields[i].name, name, FDR_FIELD_NAME_LEN))
			return &e->fields[i];
	return NULL;
}

/* Field @name of the record as an int field @pf of @m; absent or short: left out. */
static int pt_rec_int(struct fdr_buf *m, uint32_t pf, const struct fdr_trace_rec *rec,
		      const char *name)
{
	const struct fdr_abi_field *f = pt_field(rec->ev, name);
	int64_t v;

	if (!f || fdr_field_get_int(f, rec->payload, rec->len, &v))
		return 0;
	return pt_int(m, pf, v);
}

static int pt_rec_str(struct fdr_buf *m, uint32_t pf, const struct fdr_trace_rec *rec,
		      const char *name)
{
	const struct fdr_abi_field *f = pt_field(rec->ev, name);
	const unsigned char *s;
	uint32_t n;

	if (!f || fdr_field_get_bytes(f, rec->payload, rec->len, &s, &n))
		return 0;
	return pt_str(m, pf, s, strnlen((const char *)s, n));
}

/* The FtraceEvent field of a sched record, or 0 if @e is not one Perfetto knows. */
static uint32_t pt_sched_kind(const struct fdr_abi_event *e)
{
	if (strncmp(e->system, "sched", FDR_NAME_LEN))
		return 0;
	if (!strncmp(e->name, "sched_switch", FDR_NAME_LEN))
		return 4;
	if (!strncmp(e->name, "sched_wakeup", FDR_NAME_LEN))
		return 17;
	if (!strncmp(e->name, "sched_waking", FDR_NAME_LEN))
		return 20;
	if (!strncmp(e->name, "sched_wakeup_new", FDR_NAME_LEN))
		return 114;
	return 0;
}

static int pt_bundle_flush(struct pt_writer *w, uint32_t cpu)
{
	struct pt_bundle *bd = &w->cpus[cpu];
	int ret;

	if (!bd->ev.len)
		return 0;
	ret = pt_uint(&w->te, 1, cpu);
	ret |= fdr_buf_add(&w->te, bd->ev.data, bd->ev.len);
	bd->ev.len = 0;
	ret |= pt_msg(&w->pkt, 1, &w->te);
	return ret ? -ENOMEM : pt_packet(w);
}

static int pt_sched(struct pt_writer *w, const struct fdr_trace_rec *rec, uint32_t kind)
{
	struct fdr_common c;
	struct pt_bundle *bd;
	int ret;

	if (rec->cpu >= w->nr_cpus) {
		uint32_t n = rec->cpu + 1;
		struct pt_bundle *grown;

		if (rec->cpu >= FDR_MAX_CPUS * 64u)
			return -EINVAL;
		grown = realloc(w->cpus, n * sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		memset(grown + w->nr_cpus, 0, (n - w->nr_cpus) * sizeof(*grown));
		w->cpus = grown;
		w->nr_cpus = n;
	}
	bd = &w->cpus[rec->cpu];
	memcpy(&c, rec->payload, sizeof(c));
	if (kind == 4) {
		ret = pt_rec_str(&w->sub, 1, rec, "prev_comm");
		ret |= pt_rec_int(&w->sub, 2, rec, "prev_pid");
		ret |= pt_rec_int(&w->sub, 3, rec, "prev_prio");
		ret |= pt_rec_int(&w->sub, 4, rec, "prev_state");
		ret |= pt_rec_str(&w->sub, 5, rec, "next_comm");
		ret |= pt_rec_int(&w->sub, 6, rec, "next_pid");
		ret |= pt_rec_int(&w->sub, 7, rec, "next_prio");
	} else {
		ret = pt_rec_str(&w->sub, 1, rec, "comm");
		ret |= pt_rec_int(&w->sub, 2, rec, "pid");
		ret |= pt_rec_int(&w->sub, 3, rec, "prio");
		ret |= pt_rec_int(&w->sub, 4, rec, "success");
		ret |= pt_rec_int(&w->sub, 5, rec, "target_cpu");
	}
	ret |= pt_uint(&w->ann, 1, pt_ns(fdr_trace_get_info(w->t), rec->ts));
	ret |= pt_uint(&w->ann, 2, (uint32_t)c.pid);
	ret |= pt_msg(&w->ann, kind, &w->sub);
	ret |= pt_msg(&bd->ev, 2, &w->ann);
	if (ret)
		return -ENOMEM;
	return bd->ev.len >= PT_BUNDLE_FLUSH ? pt_bundle_flush(w, rec->cpu) : 0;
}

static int pt_hex(struct fdr_buf *m, uint32_t pf, const unsigned char *s, uint32_t n)
{
	static const char hex[] = "0123456789abcdef";
	struct fdr_buf h = { 0 };
	uint32_t i;
	int ret = 0;

	for (i = 0; i < n && !ret; i++) {
		char x[2] = { hex[s[i] >> 4], hex[s[i] & 15] };

		ret = fdr_buf_add(&h, x, 2);
	}
	ret |= pt_bytes(m, pf, h.data ? h.data : "", h.len);
	fdr_buf_free(&h);
	return ret;
}

/* One field as a DebugAnnotation's value in @m; nothing for a field outside the record. */
static int pt_value(const struct fdr_abi_field *f, const struct fdr_trace_rec *rec,
		    struct fdr_buf *m)
{
	const unsigned char *s;
	uint32_t n;
	int64_t v;

	switch (f->kind) {
	case FDR_KIND_CHARS:
	case FDR_KIND_STRING:
	case FDR_KIND_TAIL_CHARS:
		if (fdr_field_get_bytes(f, rec->payload, rec->len, &s, &n))
			return 0;
		return pt_str(m, 6, s, f->kind == FDR_KIND_CHARS ? strnlen((const char *)s, n) : n);
	case FDR_KIND_BYTES:
		if (fdr_field_get_bytes(f, rec->payload, rec->len, &s, &n))
			return 0;
		return pt_hex(m, 6, s, n);
	case FDR_KIND_ULONG_ARRAY:
		if ((uint32_t)f->offset + f->size > rec->len)
			return 0;
		return pt_hex(m, 6, rec->payload + f->offset, f->size);
	case FDR_KIND_ULONG_IP:
		if (fdr_field_get_int(f, rec->payload, rec->len, &v))
			return 0;
		return pt_uint(m, 7, (uint64_t)v);
	case FDR_KIND_BOOL:
		if (fdr_field_get_int(f, rec->payload, rec->len, &v))
			return 0;
		return (uint64_t)v <= 1 ? pt_uint(m, 2, (uint64_t)v) : pt_uint(m, 3, (uint64_t)v);
	default:
		if (fdr_field_get_int(f, rec->payload, rec->len, &v))
			return 0;
		return f->is_signed ? pt_int(m, 4, v) : pt_uint(m, 3, (uint64_t)v);
	}
}

static size_t pt_suffix(const char *name, size_t len, const char *suffix)
{
	size_t n = strlen(suffix);

	return len > n && !memcmp(name + len - n, suffix, n) ? len - n : 0;
}

/* A record of the application (or a kernel event other than scheduling) on its thread's track. */
static int pt_track_event(struct pt_writer *w, const struct fdr_trace_rec *rec)
{
	const struct fdr_abi_event *e = rec->ev;
	struct fdr_common c;
	size_t nlen = strnlen(e->name, FDR_NAME_LEN), stem = 0;
	uint32_t i, type = 3, nf = e->nr_fields < FDR_MAX_FIELDS ? e->nr_fields : FDR_MAX_FIELDS;
	int ret,
		marker = e->id == FDR_EVENT_ID_PRINT && !strncmp(e->system, "ftrace", FDR_NAME_LEN);

	memcpy(&c, rec->payload, sizeof(c));
	ret = pt_thread(w, c.pid);
	if (ret)
		return ret;
	if (!marker) {
		if ((stem = pt_suffix(e->name, nlen, "_begin")) ||
		    (stem = pt_suffix(e->name, nlen, "_entry")))
			type = 1;
		else if ((stem = pt_suffix(e->name, nlen, "_end")) ||
			 (stem = pt_suffix(e->name, nlen, "_exit")))
			type = 2;
	}
	ret = pt_uint(&w->te, 9, type);
	ret |= pt_uint(&w->te, 11, FDR_PT_THREAD_UUID + (uint32_t)c.pid);
	ret |= pt_str(&w->te, 22, e->system, strnlen(e->system, FDR_NAME_LEN));
	if (marker) {
		const unsigned char *t = rec->payload + 16;
		uint32_t n = rec->len > 16 ? (uint32_t)strnlen((const char *)t, rec->len - 16) : 0;

		if (n && t[n - 1] == '\n')
			n--;
		ret |= pt_str(&w->te, 23, t, n);
	} else {
		ret |= pt_str(&w->te, 23, e->name, stem ? stem : nlen);
	}
	for (i = 0; i < nf && !ret; i++) {
		const struct fdr_abi_field *f = &e->fields[i];
		size_t before;

		ret = pt_str(&w->ann, 10, f->name, strnlen(f->name, FDR_FIELD_NAME_LEN));
		before = w->ann.len;
		ret |= pt_value(f, rec, &w->ann);
		if (!ret && w->ann.len == before) {
			w->ann.len = 0; /* outside a short record: no annotation */
			continue;
		}
		ret |= pt_msg(&w->te, 4, &w->ann);
	}
	ret |= pt_uint(&w->pkt, 8, pt_ns(fdr_trace_get_info(w->t), rec->ts));
	ret |= pt_msg(&w->pkt, 11, &w->te);
	return ret ? -ENOMEM : pt_packet(w);
}

static int pt_lost(struct pt_writer *w, const struct fdr_trace_rec *rec)
{
	static const char name[] = "lost events";
	int ret = 0;

	if (!w->have_lost) {
		w->have_lost = 1;
		ret = pt_uint(&w->te, 1, FDR_PT_LOST_UUID);
		ret |= pt_str(&w->te, 2, name, sizeof(name) - 1);
		ret |= pt_msg(&w->pkt, 60, &w->te);
		if (ret)
			return -ENOMEM;
		ret = pt_packet(w);
		if (ret)
			return ret;
	}
	ret = pt_uint(&w->te, 9, 3);
	ret |= pt_uint(&w->te, 11, FDR_PT_LOST_UUID);
	ret |= pt_str(&w->te, 22, "fdr", 3);
	ret |= pt_str(&w->te, 23, name, sizeof(name) - 1);
	ret |= pt_str(&w->ann, 10, "cpu", 3);
	ret |= pt_uint(&w->ann, 3, rec->cpu);
	ret |= pt_msg(&w->te, 4, &w->ann);
	ret |= pt_str(&w->ann, 10, "count", 5);
	ret |= pt_uint(&w->ann, 3, rec->lost_before);
	ret |= pt_msg(&w->te, 4, &w->ann);
	ret |= pt_uint(&w->pkt, 8, pt_ns(fdr_trace_get_info(w->t), rec->ts));
	ret |= pt_msg(&w->pkt, 11, &w->te);
	return ret ? -ENOMEM : pt_packet(w);
}

/* The first packet: the system (Perfetto reads the kernel's prev_state bits by its release). */
static int pt_system(struct pt_writer *w)
{
	const struct fdr_trace_info *in = fdr_trace_get_info(w->t);
	int ret = pt_str(&w->sub, 1, in->sysname, strnlen(in->sysname, sizeof(in->sysname)));

	ret |= pt_str(&w->sub, 3, in->release, strnlen(in->release, sizeof(in->release)));
	ret |= pt_msg(&w->te, 1, &w->sub);
	ret |= pt_msg(&w->pkt, 45, &w->te);
	return ret ? -ENOMEM : pt_packet(w);
}

/**
 * fdr_export_perfetto_proto - write @t as a Perfetto protobuf trace: the
 * kernel's scheduling records as ftrace events (CPU and thread-state tracks),
 * every other record on its thread's track; the mapping is in the comment at
 * the top of this file
 * @path: the file, or NULL for standard output
 * @st: counts (may be NULL)
 *
 * Returns: 0 or a negative errno (message in @err).
 */
int fdr_export_perfetto_proto(struct fdr_trace *t, const char *path, struct fdr_export_stats *st,
			      struct fdr_buf *err)
{
	struct pt_writer w;
	struct fdr_trace_rec rec;
	uint32_t cpu;
	int ret;

	memset(&w, 0, sizeof(w));
	w.t = t;
	w.first = 1;
	ret = fdr_export_file_open(&w.out, path, err);
	if (ret)
		return ret;
	ret = pt_system(&w);
	while (!ret && (ret = fdr_trace_next(t, &rec)) > 0) {
		uint32_t kind;

		ret = 0;
		if (rec.lost_before) {
			w.st.lost += rec.lost_before == UINT64_MAX ? 0 : rec.lost_before;
			ret = pt_lost(&w, &rec);
		}
		if (ret)
			break;
		if (!rec.ev || rec.len < sizeof(struct fdr_common)) {
			w.st.unknown++;
			continue;
		}
		kind = pt_sched_kind(rec.ev);
		ret = kind ? pt_sched(&w, &rec, kind) : pt_track_event(&w, &rec);
		if (!ret)
			w.st.events++;
	}
	if (ret < 0 && !(err && err->len))
		fdr_export_fail(err, -ret, fdr_trace_get_info(t)->origin,
				ret == -ENOMEM ? "perfetto" : "read");
	for (cpu = 0; !ret && cpu < w.nr_cpus; cpu++)
		ret = pt_bundle_flush(&w, cpu);
	if (!ret)
		ret = fdr_export_flush(&w.out, w.out.fd, NULL, &w.b, 0);
	for (cpu = 0; cpu < w.nr_cpus; cpu++)
		fdr_buf_free(&w.cpus[cpu].ev);
	free(w.cpus);
	free(w.tids.v);
	fdr_buf_free(&w.b);
	fdr_buf_free(&w.pkt);
	fdr_buf_free(&w.te);
	fdr_buf_free(&w.sub);
	fdr_buf_free(&w.ann);
	if (!ret)
		ret = fdr_export_commit(&w.out);
	else
		fdr_export_abort(&w.out);
	if (st)
		*st = w.st;
	return ret;
}
