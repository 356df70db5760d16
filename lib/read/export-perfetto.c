// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * export-perfetto.c - a trace as Chrome JSON trace events, the layout that
 * ui.perfetto.dev, trace_processor and chrome://tracing load:
 *
 *   {"displayTimeUnit":"ns","traceEvents":[
 *   {"name":"request","cat":"demo","ph":"i","s":"t","ts":1234.567,"pid":42,"tid":42,
 *    "args":{"status":200,"latency_ns":81234,"path":"/api/users"}},
 *   ...
 *   {"name":"thread_name","ph":"M","pid":42,"tid":42,"args":{"name":"fdr-demo"}}],
 *   "metadata":{"source":"fdr",...}}
 *
 * One line per trace event, so the file can be read with grep as well.
 *
 *  - ts is in microseconds with the nanoseconds as three decimals, on the
 *    source's trace clock (x86-tsc counts scaled to ns by the TSC's rate) (metadata gives the offset to CLOCK_REALTIME: absolute
 *    times in ns would not fit a double's 53 bits).
 *  - tid is the record's common_pid (the kernel's pid is a thread id), pid its
 *    process, from the session's saved_tgids (the tid itself where that is not
 *    known: trace.dat files carry no tgids). Each thread seen gets a
 *    thread_name and each process a process_name metadata ("M") event: the comm
 *    of the thread, of the process's main thread.
 *  - An event named NAME_begin or NAME_entry opens a slice NAME ("B") on its
 *    thread; NAME_end or NAME_exit closes it ("E"). Every other event is a
 *    thread-scoped instant ("i", "s":"t"). The category is the event's system.
 *  - ftrace:print (trace_marker) is an instant named by its text (without the
 *    final newline), with args ip and buf; losses are global instants
 *    "lost events" with args cpu and count.
 *  - args hold every field: integers as JSON numbers (as strings beyond 2^53,
 *    where doubles lose digits), bool as true/false (a number if neither 0 nor
 *    1), strings and char arrays as JSON strings, byte arrays as a hex string,
 *    addresses as "0x..." strings; a field outside a short record is null.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "read-local.h"
#include "export-local.h"
#include "trace-src.h"

#define JSON_SAFE_INT (1ull << 53)
/* Append a string literal. */
#define PF_LIT(b, s) fdr_buf_add((b), (s), sizeof(s) - 1)

/* ---- JSON strings ---------------------------------------------------------------------- */

/* Length of the valid UTF-8 sequence at @s (1-4), or 0 if it is not valid. */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
	unsigned char c = s[0];
	size_t len, i;
	unsigned char lo = 0x80, hi = 0xbf;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		len = 2;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4;
	else
		return 0;
	if (len > n)
		return 0;
	/* no overlong forms, no surrogates, nothing above U+10FFFF */
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (i = 2; i < len; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return len;
}

/**
 * fdr_export_json_string - @n bytes of @s as a JSON string, quotes included:
 * '"' and '\' escaped, control characters as \n, \t... or \u00XX, valid UTF-8
 * copied, and each byte of an invalid sequence as U+FFFD
 *
 * Returns: 0 or -ENOMEM.
 */
int fdr_export_json_string(const void *s, size_t n, struct fdr_buf *b)
{
	const unsigned char *p = s, *end = p + n;
	int ret = PF_LIT(b, "\"");

	while (p < end && !ret) {
		const unsigned char *run = p;
		size_t k;

		/* copy plain runs in one go */
		while (p < end && *p >= 0x20 && *p < 0x80 && *p != '"' && *p != '\\')
			p++;
		if (p > run)
			ret |= fdr_buf_add(b, run, (size_t)(p - run));
		if (p >= end)
			break;
		if (*p < 0x80) {
			char esc[8];

			switch (*p) {
			case '"':
				ret |= PF_LIT(b, "\\\"");
				break;
			case '\\':
				ret |= PF_LIT(b, "\\\\");
				break;
			case '\n':
				ret |= PF_LIT(b, "\\n");
				break;
			case '\t':
				ret |= PF_LIT(b, "\\t");
				break;
			case '\r':
				ret |= PF_LIT(b, "\\r");
				break;
			case '\b':
				ret |= PF_LIT(b, "\\b");
				break;
			case '\f':
				ret |= PF_LIT(b, "\\f");
				break;
			default:
				snprintf(esc, sizeof(esc), "\\u%04x", *p);
				ret |= fdr_buf_add(b, esc, 6);
				break;
			}
			p++;
			continue;
		}
		k = utf8_seq(p, (size_t)(end - p));
		if (k) {
			ret |= fdr_buf_add(b, p, k);
			p += k;
		} else {
			ret |= PF_LIT(b, "\\ufffd");
			p++;
		}
	}
	return ret | PF_LIT(b, "\"") ? -ENOMEM : 0;
}

static int json_cstr(const char *s, size_t max, struct fdr_buf *b)
{
	return fdr_export_json_string(s, strnlen(s, max), b);
}

/* ---- fields ---------------------------------------------------------------------------- */

static int pf_hex(struct fdr_buf *b, const unsigned char *s, uint32_t n)
{
	static const char hex[] = "0123456789abcdef";
	uint32_t i;
	int ret = PF_LIT(b, "\"");

	for (i = 0; i < n && !ret; i++) {
		char h[2] = { hex[s[i] >> 4], hex[s[i] & 15] };

		ret = fdr_buf_add(b, h, 2);
	}
	return ret | PF_LIT(b, "\"");
}

static int pf_value(const struct fdr_abi_field *f, const unsigned char *p, uint32_t len,
		    struct fdr_buf *b)
{
	const unsigned char *s;
	uint32_t n, i;
	uint64_t v;
	int64_t iv;
	int ret = 0;

	switch (f->kind) {
	case FDR_KIND_CHARS:
	case FDR_KIND_STRING:
	case FDR_KIND_TAIL_CHARS:
		if (fdr_field_get_bytes(f, p, len, &s, &n))
			return PF_LIT(b, "null");
		return fdr_export_json_string(s, n, b);
	case FDR_KIND_BYTES:
		if (fdr_field_get_bytes(f, p, len, &s, &n))
			return PF_LIT(b, "null");
		return pf_hex(b, s, n);
	case FDR_KIND_ULONG_ARRAY:
		if ((uint32_t)f->offset + f->size > len)
			return PF_LIT(b, "null");
		ret = PF_LIT(b, "[");
		for (i = 0; i < f->size / 8u; i++) {
			memcpy(&v, p + f->offset + 8 * i, 8);
			ret |= fdr_buf_printf(b, "%s\"0x%" PRIx64 "\"", i ? "," : "", v);
		}
		return ret | PF_LIT(b, "]");
	case FDR_KIND_ULONG_IP:
		if (fdr_field_get_int(f, p, len, &iv))
			return PF_LIT(b, "null");
		v = (uint64_t)iv;
		return fdr_buf_printf(b, "\"0x%" PRIx64 "\"", v);
	case FDR_KIND_BOOL:
		if (fdr_field_get_int(f, p, len, &iv))
			return PF_LIT(b, "null");
		v = (uint64_t)iv;
		if (v <= 1)
			return v ? PF_LIT(b, "true") : PF_LIT(b, "false");
		return fdr_buf_printf(b, "%" PRIu64, v);
	default:
		if (fdr_field_get_int(f, p, len, &iv))
			return PF_LIT(b, "null");
		v = (uint64_t)iv;
		if (f->is_signed) {
			int64_t sv = (int64_t)v;

			if (sv > (int64_t)JSON_SAFE_INT || sv < -(int64_t)JSON_SAFE_INT)
				return fdr_buf_printf(b, "\"%" PRId64 "\"", sv);
			return fdr_buf_printf(b, "%" PRId64, sv);
		}
		if (v > JSON_SAFE_INT)
			return fdr_buf_printf(b, "\"%" PRIu64 "\"", v);
		return fdr_buf_printf(b, "%" PRIu64, v);
	}
}

/* ---- records --------------------------------------------------------------------------- */

struct pf_writer {
	struct fdr_export_out out;
	struct fdr_trace *t;
	struct fdr_buf b;
	struct fdr_tid_set tids, tgids; /* the threads seen, and their processes */
	int first; /* no trace event written yet */
	struct fdr_export_stats st;
};

static int pf_begin_event(struct pf_writer *w)
{
	int ret = fdr_buf_add(&w->b, w->first ? "\n" : ",\n", w->first ? 1 : 2);

	w->first = 0;
	return ret;
}

/* A record's ts in ns: a clock that counts (x86-tsc) is scaled by its known rate. */
static uint64_t pf_ns(const struct fdr_trace_info *in, uint64_t ts)
{
	if (!in->ts_hz || in->ts_hz == 1000000000u)
		return ts;
	return (uint64_t)((unsigned __int128)ts * 1000000000u / in->ts_hz);
}

static int pf_ts(struct fdr_buf *b, uint64_t ts)
{
	return fdr_buf_printf(b, "\"ts\":%" PRIu64 ".%03u", ts / 1000u, (unsigned)(ts % 1000u));
}

/* Does @name end in @suffix? Then its length without it. */
static size_t pf_suffix(const char *name, size_t len, const char *suffix)
{
	size_t n = strlen(suffix);

	return len > n && !memcmp(name + len - n, suffix, n) ? len - n : 0;
}

static int pf_record(struct pf_writer *w, const struct fdr_trace_rec *rec)
{
	const struct fdr_abi_event *e = rec->ev;
	struct fdr_buf *b = &w->b;
	struct fdr_common c;
	int32_t tgid;
	size_t nlen = strnlen(e->name, FDR_NAME_LEN), stem;
	const char *ph = "i";
	uint32_t i, nf = e->nr_fields < FDR_MAX_FIELDS ? e->nr_fields : FDR_MAX_FIELDS;
	int ret,
		marker = e->id == FDR_EVENT_ID_PRINT && !strncmp(e->system, "ftrace", FDR_NAME_LEN);

	memcpy(&c, rec->payload, sizeof(c));
	tgid = fdr_trace_tgid(w->t, c.pid);
	ret = fdr_tid_set_add(&w->tids, c.pid);
	ret = ret < 0 ? ret : 0;
	ret |= pf_begin_event(w);
	ret |= PF_LIT(b, "{\"name\":");
	if (marker) {
		const unsigned char *t = rec->payload + 16;
		uint32_t n = rec->len > 16 ? (uint32_t)strnlen((const char *)t, rec->len - 16) : 0;

		if (n && t[n - 1] == '\n')
			n--;
		ret |= fdr_export_json_string(t, n, b);
		stem = 0;
	} else if ((stem = pf_suffix(e->name, nlen, "_begin")) ||
		   (stem = pf_suffix(e->name, nlen, "_entry"))) {
		ph = "B";
	} else if ((stem = pf_suffix(e->name, nlen, "_end")) ||
		   (stem = pf_suffix(e->name, nlen, "_exit"))) {
		ph = "E";
	}
	if (!marker)
		ret |= fdr_export_json_string(e->name, stem ? stem : nlen, b);
	ret |= PF_LIT(b, ",\"cat\":");
	ret |= json_cstr(e->system, FDR_NAME_LEN, b);
	ret |= fdr_buf_printf(b, ",\"ph\":\"%s\",%s", ph, *ph == 'i' ? "\"s\":\"t\"," : "");
	ret |= pf_ts(b, pf_ns(fdr_trace_get_info(w->t), rec->ts));
	ret |= fdr_buf_printf(b, ",\"pid\":%d,\"tid\":%d,\"args\":{", tgid, c.pid);
	for (i = 0; i < nf; i++) {
		const struct fdr_abi_field *f = &e->fields[i];

		if (i)
			ret |= PF_LIT(b, ",");
		ret |= json_cstr(f->name, FDR_FIELD_NAME_LEN, b);
		ret |= PF_LIT(b, ":");
		ret |= pf_value(f, rec->payload, rec->len, b);
	}
	ret |= PF_LIT(b, "}}");
	return ret ? -ENOMEM : 0;
}

static int pf_lost(struct pf_writer *w, const struct fdr_trace_rec *rec)
{
	int ret = pf_begin_event(w);

	ret |= PF_LIT(&w->b, "{\"name\":\"lost events\",\"cat\":\"fdr\",\"ph\":\"i\",\"s\":\"g\",");
	ret |= pf_ts(&w->b, pf_ns(fdr_trace_get_info(w->t), rec->ts));
	ret |= fdr_buf_printf(&w->b,
			      ",\"pid\":0,\"tid\":0,\"args\":{\"cpu\":%u,\"count\":%" PRIu64 "}}",
			      rec->cpu, rec->lost_before);
	return ret ? -ENOMEM : 0;
}

/* One "M" (metadata) event: what ("process_name", "thread_name"), whose, the name. */
static int pf_name(struct pf_writer *w, const char *what, int32_t pid, int32_t tid,
		   const char *name)
{
	int ret = pf_begin_event(w);

	ret |= fdr_buf_printf(&w->b,
			      "{\"name\":\"%s\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,"
			      "\"args\":{\"name\":",
			      what, pid, tid);
	ret |= json_cstr(name, FDR_COMM_LEN + 8, &w->b);
	ret |= PF_LIT(&w->b, "}}");
	return ret ? -ENOMEM : 0;
}

/*
 * The names of thread @tid and, the first time it is seen, of its process (the
 * comm of the thread whose id is the tgid, else this thread's).
 */
static int pf_names(struct pf_writer *w, int32_t tid)
{
	char comm[FDR_COMM_LEN + 8], pcomm[FDR_COMM_LEN + 8];
	const char *name = fdr_trace_comm(w->t, tid, comm, sizeof(comm)), *pname;
	int32_t tgid = tid ? fdr_trace_tgid(w->t, tid) : 0;
	int ret = fdr_tid_set_add(&w->tgids, tgid);

	if (ret < 0)
		return ret;
	if (ret) {
		pname = tgid == tid ? name : fdr_trace_comm(w->t, tgid, pcomm, sizeof(pcomm));
		if (!strcmp(pname, "<...>"))
			pname = name;
		ret = pf_name(w, "process_name", tgid, tgid, pname);
	}
	return ret ?: pf_name(w, "thread_name", tgid, tid, name);
}

static int pf_metadata(struct pf_writer *w)
{
	const struct fdr_trace_info *in = fdr_trace_get_info(w->t);
	struct fdr_buf *b = &w->b;
	int ret = PF_LIT(b, "\n],\n\"metadata\":{\"source\":\"fdr\",\"fdr-version\":");

	ret |= json_cstr(fdr_version(), 64, b);
	ret |= PF_LIT(b, ",\"origin\":");
	ret |= json_cstr(in->origin, sizeof(in->origin), b);
	ret |= PF_LIT(b, ",\"hostname\":");
	ret |= json_cstr(in->hostname, sizeof(in->hostname), b);
	ret |= PF_LIT(b, ",\"sysname\":");
	ret |= json_cstr(in->sysname, sizeof(in->sysname), b);
	ret |= PF_LIT(b, ",\"release\":");
	ret |= json_cstr(in->release, sizeof(in->release), b);
	ret |= PF_LIT(b, ",\"trace-clock\":");
	ret |= json_cstr(in->clock_name, sizeof(in->clock_name), b);
	ret |= fdr_buf_printf(b,
			      ",\"ts-unit\":\"%s\",\"clock-offset-ns\":\"%" PRIu64
			      "\",\"nr-cpus\":%u,\"events\":%" PRIu64 ",\"lost\":%" PRIu64
			      ",\"unknown\":%" PRIu64 "}}\n",
			      fdr_clock_is_ns(in->clock) || in->ts_hz ? "ns" : "counts",
			      in->offset_ns, in->nr_cpus, w->st.events, w->st.lost, w->st.unknown);
	return ret ? -ENOMEM : 0;
}

/**
 * fdr_export_perfetto - write @t as a Chrome JSON trace (ui.perfetto.dev,
 * trace_processor); the mapping is in the comment at the top of this file
 * @path: the file, or NULL for standard output
 * @st: counts (may be NULL)
 *
 * Returns: 0 or a negative errno (message in @err).
 */
int fdr_export_perfetto(struct fdr_trace *t, const char *path, struct fdr_export_stats *st,
			struct fdr_buf *err)
{
	struct pf_writer w;
	struct fdr_trace_rec rec;
	size_t i;
	int ret;

	memset(&w, 0, sizeof(w));
	w.t = t;
	w.first = 1;
	ret = fdr_export_file_open(&w.out, path, err);
	if (ret)
		return ret;
	ret = PF_LIT(&w.b, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[");
	while (!ret && (ret = fdr_trace_next(t, &rec)) > 0) {
		ret = 0;
		if (rec.lost_before) {
			w.st.lost += rec.lost_before;
			ret = pf_lost(&w, &rec);
		}
		if (!rec.ev || rec.len < sizeof(struct fdr_common))
			w.st.unknown++;
		else if (!ret && !(ret = pf_record(&w, &rec)))
			w.st.events++;
		if (!ret)
			ret = fdr_export_flush(&w.out, w.out.fd, NULL, &w.b, FDR_EXPORT_FLUSH);
	}
	if (ret < 0 && !(err && err->len))
		fdr_export_fail(err, -ret, fdr_trace_get_info(t)->origin, "read");
	if (!ret && w.tids.has0)
		ret = pf_names(&w, 0);
	for (i = 0; !ret && i < w.tids.slots; i++)
		if (w.tids.v[i])
			ret = pf_names(&w, w.tids.v[i]);
	if (!ret && pf_metadata(&w))
		ret = fdr_export_fail(err, ENOMEM, "perfetto", NULL);
	if (!ret)
		ret = fdr_export_flush(&w.out, w.out.fd, NULL, &w.b, 0);
	fdr_buf_free(&w.b);
	free(w.tids.v);
	free(w.tgids.v);
	if (!ret)
		ret = fdr_export_commit(&w.out);
	else
		fdr_export_abort(&w.out);
	if (st)
		*st = w.st;
	return ret;
}
