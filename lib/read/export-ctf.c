// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * export-ctf.c - a trace as a CTF 1.8 trace directory (babeltrace2, Trace Compass).
 *
 *   OUT/metadata     TSDL text: trace, env, clock, one stream, one event class
 *                    per fdr event (docs/design/export.md has the type mapping)
 *   OUT/stream_N     the records of CPU N, as a sequence of packets:
 *
 *   +----------------------- packet ------------------------------------------+
 *   | header:  magic 0xc1fc1fc1 | uuid[16] | stream_id = 0                      |
 *   | context: timestamp_begin | timestamp_end | content_size | packet_size     |
 *   |          events_discarded (cumulative, per CPU) | cpu_id                  |
 *   | event:   id (u32) | timestamp (u64 ns) | vtid | procname | flags | pc    |
 *   |          fields, in the event's order                                     |
 *   | event ...                                                                 |
 *   +---------------------------------------------------------------------------+
 *
 * Every type is byte-aligned, so an event is its fields back to back with no
 * padding, and packet_size = content_size (no padding at a packet's end either).
 * A packet ends after about 1 MiB of events, and before a record that follows
 * a loss: events_discarded grows by the loss there, which readers report as
 * discarded events between the two packets.
 *
 * Integers keep the host's byte order (byte_order in the trace block says which).
 * Timestamps are the source's, mapped to a clock that ticks at the source's
 * rate (ns, or the TSC's for x86-tsc) and whose offset is the source's
 * offset_ns, so a reader's wall-clock times are CLOCK_REALTIME at record time.
 *
 * The writer makes packets and hands each to a sink (struct fdr_ctf_sink,
 * export-local.h): the directory below for fdr export, or a connection to
 * LTTng's relay daemon (relay.c, docs/design/relay.md), which stores the same
 * streams. The metadata is handed over last, after every packet, because
 * events first seen while reading are described in it.
 *
 * Per record, the writer does what an event's plan says (struct ctf_plan, made
 * once per event): its fixed-size fields are copied as they are, fields that
 * follow each other in the record in one copy. A snapshot sent to the relay
 * daemon is read one CPU per thread (fdr_export_ctf_sink_split()): each CPU's
 * stream is the same bytes the one-thread export makes of it.
 *
 * Names: CTF identifiers cannot be TSDL keywords ("event", "struct", "align"...)
 * and allow only [A-Za-z0-9_]. Each field name is written as "_" + the name with
 * any other byte replaced by '_'; readers strip one leading underscore (CTF 1.8
 * §4.1.2), so a field "align" shows as "align" and "x-y" shows as "x_y". A name
 * that collides after mangling gets "_2", "_3"... Event names are strings and
 * keep their bytes, except '"', '\' and bytes outside 0x20-0x7e, written as '_'.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/random.h>

#include "common/strbuf.h"
#include "read-local.h"
#include "export-local.h"
#include "trace-src.h"

#define CTF_MAGIC 0xc1fc1fc1u
#define CTF_PACKET_HDR 68 /* header + context, bytes */
#define CTF_NAME_MAX 80
#define CTF_MAX_BUFS 8 /* stream classes: buffers of the source (ctf_seen's bits) */
#define CTF_COMMIT_EVERY 4096 /* records read between two commits (fdr_trace_commit()) */

/* ---- names ----------------------------------------------------------------------------- */

/**
 * fdr_export_ctf_ident - @len bytes of @name as a CTF identifier: "_" + the name,
 * every byte other than [A-Za-z0-9_] replaced by '_'
 *
 * Returns: 0 or -ENOMEM.
 */
int fdr_export_ctf_ident(const char *name, size_t len, struct fdr_buf *b)
{
	size_t i;
	int ret = fdr_buf_add(b, "_", 1);

	for (i = 0; i < len && name[i] && !ret; i++) {
		char c = name[i];
		int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			 (c >= '0' && c <= '9') || c == '_';

		ret = fdr_buf_add(b, ok ? &c : "_", 1);
	}
	return ret;
}

/* A TSDL string literal: '"', '\' and bytes outside 0x20-0x7e become '_'. */
static int ctf_string(const char *s, size_t len, struct fdr_buf *b)
{
	size_t i;
	int ret = fdr_buf_add(b, "\"", 1);

	for (i = 0; i < len && s[i] && !ret; i++) {
		unsigned char c = (unsigned char)s[i];

		ret = fdr_buf_add(b, c >= 0x20 && c < 0x7f && c != '"' && c != '\\' ? &s[i] : "_",
				  1);
	}
	return ret | fdr_buf_add(b, "\"", 1);
}

/* The metadata names of an event's fields, and of the length fields of byte arrays. */
struct ctf_names {
	char field[FDR_MAX_FIELDS][CTF_NAME_MAX];
	char length[FDR_MAX_FIELDS][CTF_NAME_MAX];
};

static int ctf_name_taken(const struct ctf_names *n, uint32_t upto, const char *name)
{
	uint32_t i;

	for (i = 0; i < FDR_MAX_FIELDS; i++)
		if ((i < upto && !strcmp(n->field[i], name)) ||
		    (n->length[i][0] && n->length[i] != name && !strcmp(n->length[i], name)))
			return 1;
	return 0;
}

/* Make @name unique among the names set so far ("_2", "_3"... appended). */
static void ctf_name_unique(const struct ctf_names *n, uint32_t upto, char *name)
{
	char base[64];
	unsigned k = 2;

	if (!ctf_name_taken(n, upto, name))
		return;
	snprintf(base, sizeof(base), "%.60s", name);
	do
		snprintf(name, CTF_NAME_MAX, "%.60s_%u", base, k++ % 100000u);
	while (ctf_name_taken(n, upto, name));
}

/*
 * Field names first, each made unique among the earlier ones; then the length
 * fields of byte arrays ("_" + the array's name + "_length"), unique among all
 * of them, so a user field keeps its name whatever follows it.
 */
static int ctf_event_names(const struct fdr_abi_event *e, struct ctf_names *n)
{
	uint32_t i, nf = e->nr_fields < FDR_MAX_FIELDS ? e->nr_fields : FDR_MAX_FIELDS;
	struct fdr_buf b = { 0 };

	memset(n, 0, sizeof(*n));
	for (i = 0; i < nf; i++) {
		const struct fdr_abi_field *f = &e->fields[i];
		size_t len = strnlen(f->name, FDR_FIELD_NAME_LEN);

		b.len = 0;
		if (len ? fdr_export_ctf_ident(f->name, len, &b) :
			  fdr_buf_printf(&b, "_field%u", i)) {
			fdr_buf_free(&b);
			return -ENOMEM;
		}
		snprintf(n->field[i], CTF_NAME_MAX, "%s", b.data);
		ctf_name_unique(n, i, n->field[i]);
	}
	fdr_buf_free(&b);
	for (i = 0; i < nf; i++) {
		if (e->fields[i].kind != FDR_KIND_BYTES)
			continue;
		snprintf(n->length[i], CTF_NAME_MAX, "_%.60s_length", n->field[i]);
		ctf_name_unique(n, nf, n->length[i]);
	}
	return 0;
}

/* ---- metadata -------------------------------------------------------------------------- */

static uint32_t ctf_nr_fields(const struct fdr_abi_event *e)
{
	return e->nr_fields < FDR_MAX_FIELDS ? e->nr_fields : FDR_MAX_FIELDS;
}

static int ctf_int_type(struct fdr_buf *b, unsigned bits, int is_signed, int base)
{
	return fdr_buf_printf(b,
			      "integer { size = %u; align = 8; signed = %s; encoding = none; "
			      "base = %d; }",
			      bits, is_signed ? "true" : "false", base);
}

static int ctf_event_meta(const struct fdr_abi_event *e, uint32_t stream, struct fdr_buf *b)
{
	struct ctf_names *n = malloc(sizeof(*n));
	uint32_t i, nf = ctf_nr_fields(e);
	int ret;

	if (!n || ctf_event_names(e, n)) {
		free(n);
		return -ENOMEM;
	}
	ret = fdr_buf_printf(b, "event {\n\tname = ");
	{
		char full[2 * FDR_NAME_LEN + 2];

		snprintf(full, sizeof(full), "%.*s:%.*s", FDR_NAME_LEN, e->system, FDR_NAME_LEN,
			 e->name);
		ret |= ctf_string(full, strlen(full), b);
	}
	ret |= fdr_buf_printf(b, ";\n\tid = %u;\n\tstream_id = %u;\n\tfields := struct {\n", e->id,
			      stream);
	for (i = 0; i < nf; i++) {
		const struct fdr_abi_field *f = &e->fields[i];

		ret |= fdr_buf_add(b, "\t\t", 2);
		switch (f->kind) {
		case FDR_KIND_INT:
		case FDR_KIND_BOOL:
		case FDR_KIND_ULONG_IP:
			if (f->size == 1 || f->size == 2 || f->size == 4 || f->size == 8) {
				ret |= ctf_int_type(b, f->size * 8u,
						    f->kind == FDR_KIND_INT && f->is_signed,
						    f->kind == FDR_KIND_ULONG_IP ? 16 : 10);
				ret |= fdr_buf_printf(b, " %s;\n", n->field[i]);
			} else {
				/* not an integer width: its bytes */
				ret |= ctf_int_type(b, 8, 0, 16);
				ret |= fdr_buf_printf(b, " %s[%u];\n", n->field[i], f->size);
			}
			break;
		case FDR_KIND_CHARS:
			ret |= fdr_buf_printf(b,
					      "integer { size = 8; align = 8; signed = false; "
					      "encoding = UTF8; base = 10; } %s[%u];\n",
					      n->field[i], f->size);
			break;
		case FDR_KIND_STRING:
		case FDR_KIND_TAIL_CHARS:
			ret |= fdr_buf_printf(b, "string %s;\n", n->field[i]);
			break;
		case FDR_KIND_BYTES:
			ret |= ctf_int_type(b, 32, 0, 10);
			ret |= fdr_buf_printf(b, " %s;\n\t\t", n->length[i]);
			ret |= ctf_int_type(b, 8, 0, 16);
			ret |= fdr_buf_printf(b, " %s[%s];\n", n->field[i], n->length[i]);
			break;
		case FDR_KIND_ULONG_ARRAY:
			ret |= ctf_int_type(b, 64, 0, 16);
			ret |= fdr_buf_printf(b, " %s[%u];\n", n->field[i], f->size / 8u);
			break;
		default:
			/* unknown kind: its bytes, so the record still decodes */
			ret |= ctf_int_type(b, 8, 0, 16);
			ret |= fdr_buf_printf(b, " %s[%u];\n", n->field[i], f->size);
			break;
		}
	}
	ret |= fdr_buf_printf(b, "\t};\n};\n\n");
	free(n);
	return ret ? -ENOMEM : 0;
}

static void ctf_uuid_str(const unsigned char u[16], char *s)
{
	snprintf(s, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12],
		 u[13], u[14], u[15]);
}

/**
 * fdr_export_ctf_metadata - the TSDL metadata of a CTF export of @t: trace, env,
 * clock and stream blocks, and one event class per event @t describes (events
 * first seen while reading are included when called after the read)
 * @uuid: the trace's UUID (every packet header repeats it)
 *
 * Returns: 0 or -ENOMEM.
 */
/*
 * Which event classes each stream class declares: stream class k (buffer k of
 * the source) those whose ids @seen[k] marks (bit 0: seen in buffer k), and
 * stream class 0 every event of the source but those seen only in other
 * buffers. @seen NULL: one stream class, every event.
 */
struct ctf_seen {
	uint32_t nr_bufs;
	uint8_t *seen; /* [id] bit k: an event of this id was written from buffer k (k < 8) */
};

static int ctf_metadata(struct fdr_trace *t, struct fdr_trace *const *more, uint32_t nr_more,
			const unsigned char uuid[16], const struct ctf_seen *sn, struct fdr_buf *b);

int fdr_export_ctf_metadata(struct fdr_trace *t, const unsigned char uuid[16], struct fdr_buf *b)
{
	return ctf_metadata(t, NULL, 0, uuid, NULL, b);
}

static int ctf_stream_meta(struct fdr_buf *b, uint32_t id)
{
	return fdr_buf_printf(b,
			      "stream {\n"
			      "\tid = %u;\n"
			      "\tevent.header := struct {\n"
			      "\t\tuint32_t id;\n"
			      "\t\ttrace_clock_t timestamp;\n"
			      "\t};\n"
			      "\tpacket.context := struct {\n"
			      "\t\ttrace_clock_t timestamp_begin;\n"
			      "\t\ttrace_clock_t timestamp_end;\n"
			      "\t\tuint64_t content_size;\n"
			      "\t\tuint64_t packet_size;\n"
			      "\t\tuint64_t events_discarded;\n"
			      "\t\tuint32_t cpu_id;\n"
			      "\t};\n"
			      "\tevent.context := struct {\n"
			      "\t\tinteger { size = 32; align = 8; signed = true; } _vtid;\n"
			      "\t\tstring _procname;\n"
			      "\t\tuint8_t _common_flags;\n"
			      "\t\tuint8_t _common_preempt_count;\n"
			      "\t};\n"
			      "};\n\n",
			      id);
}

/*
 * @more (@nr_more sources, may be 0): the sources a snapshot was split into
 * (fdr_export_ctf_sink_split()); their events that @t does not list are
 * described too, each id once.
 */
static int ctf_metadata(struct fdr_trace *t, struct fdr_trace *const *more, uint32_t nr_more,
			const unsigned char uuid[16], const struct ctf_seen *sn, struct fdr_buf *b)
{
	const struct fdr_trace_info *in = fdr_trace_get_info(t);
	unsigned major = 0, minor = 0, patch = 0;
	char us[37];
	size_t i, nr;
	uint32_t k, src;
	uint8_t *done = NULL; /* with @more: the ids described so far */
	int ret;

	ctf_uuid_str(uuid, us);
	sscanf(fdr_version(), "%u.%u.%u", &major, &minor, &patch);
	ret = fdr_buf_printf(
		b,
		"/* CTF 1.8 */\n\n"
		"/* written by fdr export, the flight data recorder (docs/design/export.md) */\n\n"
		"typealias integer { size = 8; align = 8; signed = false; } := uint8_t;\n"
		"typealias integer { size = 32; align = 8; signed = false; } := uint32_t;\n"
		"typealias integer { size = 64; align = 8; signed = false; } := uint64_t;\n\n"
		"trace {\n"
		"\tmajor = 1;\n"
		"\tminor = 8;\n"
		"\tuuid = \"%s\";\n"
		"\tbyte_order = %s;\n"
		"\tpacket.header := struct {\n"
		"\t\tuint32_t magic;\n"
		"\t\tuint8_t uuid[16];\n"
		"\t\tuint32_t stream_id;\n"
		"\t};\n"
		"};\n\n"
		"env {\n"
		"\tdomain = \"ust\";\n"
		"\ttracer_name = \"fdr\";\n"
		"\ttracer_major = %u;\n"
		"\ttracer_minor = %u;\n"
		"\ttracer_patchlevel = %u;\n",
		us, __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__ ? "be" : "le", major, minor, patch);
	ret |= fdr_buf_printf(b, "\thostname = ");
	ret |= ctf_string(in->hostname, sizeof(in->hostname), b);
	ret |= fdr_buf_printf(b, ";\n\tsysname = ");
	ret |= ctf_string(in->sysname, sizeof(in->sysname), b);
	ret |= fdr_buf_printf(b, ";\n\tkernel_release = ");
	ret |= ctf_string(in->release, sizeof(in->release), b);
	ret |= fdr_buf_printf(b, ";\n\ttrace_clock = ");
	ret |= ctf_string(in->clock_name, sizeof(in->clock_name), b);
	ret |= fdr_buf_printf(b, ";\n\tfdr_origin = ");
	ret |= ctf_string(in->origin, sizeof(in->origin), b);
	for (k = 1; sn && k < sn->nr_bufs; k++) {
		/* which instance each further stream class holds (fdr record -k: the kernel's) */
		const char *name = fdr_trace_buffer_name(t, k);

		ret |= fdr_buf_printf(b, ";\n\tfdr_stream_%u = ", k);
		ret |= ctf_string(name ? name : "", CTF_NAME_MAX, b);
	}
	ret |= fdr_buf_printf(b, ";\n};\n\n");
	ret |= fdr_buf_printf(b, "clock {\n"
				 "\tname = \"trace_clock\";\n"
				 "\tdescription = ");
	{
		char desc[128];

		snprintf(desc, sizeof(desc), "fdr trace clock %.32s%s", in->clock_name,
			 fdr_clock_is_ns(in->clock) ? "" : " (counts, not ns)");
		ret |= ctf_string(desc, strlen(desc), b);
	}
	{
		/*
		 * The clock ticks at ts_hz (the TSC's rate for x86-tsc); its offset
		 * is the wall-clock time of tick 0: whole seconds, then the rest in
		 * ticks. Without a known rate, ns.
		 */
		uint64_t hz = in->ts_hz ? in->ts_hz : 1000000000u;
		uint64_t rest = (uint64_t)((unsigned __int128)(in->offset_ns % 1000000000u) * hz /
					   1000000000u);

		ret |= fdr_buf_printf(b,
				      ";\n\tfreq = %" PRIu64 ";\n"
				      "\tprecision = 1;\n"
				      "\toffset_s = %" PRIu64 ";\n"
				      "\toffset = %" PRIu64 ";\n"
				      "\tabsolute = %s;\n"
				      "};\n\n",
				      hz, in->offset_ns / 1000000000u, rest,
				      in->offset_ns ? "true" : "false");
	}
	ret |= fdr_buf_printf(b, "typealias integer { size = 64; align = 8; signed = false; "
				 "map = clock.trace_clock.value; } := trace_clock_t;\n\n");
	for (k = 0; k < (sn ? sn->nr_bufs : 1); k++)
		ret |= ctf_stream_meta(b, k);
	if (nr_more && !ret && !(done = calloc((UINT16_MAX + 1) / 8, 1)))
		ret = -ENOMEM;
	for (src = 0; src <= nr_more && !ret; src++) {
		struct fdr_trace *from = src ? more[src - 1] : t;

		nr = fdr_trace_nr_events(from);
		for (i = 0; i < nr && !ret; i++) {
			const struct fdr_abi_event *e = fdr_trace_event_at(from, i);
			uint8_t m = sn && e && e->id <= UINT16_MAX ? sn->seen[e->id] : 0;

			if (!e || (done && e->id > UINT16_MAX && src))
				continue;
			if (done && e->id <= UINT16_MAX) {
				if (done[e->id / 8] & (1u << (e->id % 8)))
					continue; /* described already */
				done[e->id / 8] |= (uint8_t)(1u << (e->id % 8));
			}
			/* stream class 0: every event, but those seen only in other buffers */
			if (!m || (m & 1))
				ret = ctf_event_meta(e, 0, b);
			for (k = 1; !ret && sn && k < sn->nr_bufs; k++)
				if (m & (1u << k))
					ret = ctf_event_meta(e, k, b);
		}
	}
	free(done);
	return ret ? -ENOMEM : 0;
}

/* ---- streams --------------------------------------------------------------------------- */

struct ctf_stream {
	int h; /* the sink's handle; -1: not created yet */
	struct fdr_buf pkt; /* events of the current packet */
	uint64_t ts_begin, ts_end; /* of the current packet */
	uint64_t last_ts; /* of the last event written, for monotonicity */
	uint64_t discarded; /* lost records so far on this CPU (cumulative) */
	uint32_t nr; /* events in the current packet */
	/* the procname of the last thread seen on this CPU (one lookup per run of its records) */
	int comm_valid; /* cleared at each fdr_ctf_writer_read() */
	int32_t comm_pid;
	uint32_t comm_len; /* without the NUL */
	char comm[FDR_COMM_LEN + 8];
};

/*
 * How an event's fields are written, worked out once per event (ctf_plan_get()):
 * the fields of a fixed size (integers, char arrays, fixed arrays) are their
 * record bytes as they are, so fields that follow each other in the record are
 * one copy; strings and byte arrays are read from their __data_loc. A record
 * too short for a fixed field takes ctf_fields_slow() (zeros for what is missing).
 */
struct ctf_op {
	uint16_t off, size; /* copy: record bytes [off, off + size); else the field's offset */
	uint8_t kind; /* CTF_OP_COPY or the field's kind (STRING, TAIL_CHARS, BYTES) */
	uint8_t field; /* index of the field (for fdr_field_get_bytes()) */
};

#define CTF_OP_COPY 0

struct ctf_plan {
	const struct fdr_abi_event *ev; /* the description it was made from */
	uint32_t fixed_end; /* the end of the last fixed field: records this long take the plan */
	uint32_t fixed_bytes; /* bytes the copies write */
	uint32_t nr_var; /* strings and byte arrays: each at most the record's length + 5 */
	uint32_t nr_ops;
	struct ctf_op ops[FDR_MAX_FIELDS];
};

/* The streams of one stream class: one buffer of the source, one stream per CPU. */
struct ctf_side {
	struct ctf_stream *streams;
	uint32_t nr_streams;
};

struct fdr_ctf_writer {
	struct fdr_ctf_sink *k;
	struct fdr_trace *t;
	unsigned char uuid[16];
	struct ctf_side sides[CTF_MAX_BUFS];
	struct ctf_seen seen;
	size_t meta_events; /* events the metadata last handed over described */
	int meta_sent;
	struct fdr_export_stats st;
	struct ctf_plan **plans; /* [id], made when an id is first written */
	struct fdr_trace *const *more; /* split: the other sources the metadata describes */
	uint32_t nr_more;
};

static struct ctf_stream *ctf_stream_get(struct fdr_ctf_writer *w, uint32_t buf, uint32_t cpu)
{
	struct ctf_side *sd = &w->sides[buf];
	struct ctf_stream *s;
	uint32_t n;

	if (cpu >= FDR_MAX_CPUS * 64u || buf >= CTF_MAX_BUFS)
		return NULL;
	if (cpu >= sd->nr_streams) {
		n = cpu + 1;
		s = realloc(sd->streams, n * sizeof(*s));
		if (!s)
			return NULL;
		memset(s + sd->nr_streams, 0, (n - sd->nr_streams) * sizeof(*s));
		for (; sd->nr_streams < n; sd->nr_streams++)
			s[sd->nr_streams].h = -1;
		sd->streams = s;
	}
	return &sd->streams[cpu];
}

static void ctf_put(unsigned char **p, const void *v, size_t n)
{
	memcpy(*p, v, n);
	*p += n;
}

static int ctf_meta(struct fdr_ctf_writer *w);

/*
 * Hand the current packet of stream @cpu of buffer @buf to the sink: header,
 * context, events. Buffer 0's streams are "stream_N", buffer k's
 * "bufferK_stream_N".
 */
static int ctf_flush(struct fdr_ctf_writer *w, uint32_t buf, uint32_t cpu)
{
	struct ctf_stream *s = &w->sides[buf].streams[cpu];
	unsigned char hdr[CTF_PACKET_HDR], *p = hdr;
	uint32_t magic = CTF_MAGIC, sid = buf;
	struct fdr_ctf_packet pi = {
		.bits = (CTF_PACKET_HDR + (uint64_t)s->pkt.len) * 8,
		.ts_begin = s->ts_begin,
		.ts_end = s->ts_end,
		.discarded = s->discarded,
		.cpu = cpu,
		.stream_class = buf,
	};
	int ret;

	/* live: the viewers may read this packet at once, so its events are described first */
	if (w->k->idle && (ret = ctf_meta(w)))
		return ret;
	if (s->h < 0) {
		char name[40];

		if (buf)
			snprintf(name, sizeof(name), "buffer%u_stream_%u", buf, cpu);
		else
			snprintf(name, sizeof(name), "stream_%u", cpu);
		ret = w->k->open(w->k, name, &s->h);
		if (ret)
			return ret;
	}
	ctf_put(&p, &magic, 4);
	ctf_put(&p, w->uuid, 16);
	ctf_put(&p, &sid, 4);
	ctf_put(&p, &s->ts_begin, 8);
	ctf_put(&p, &s->ts_end, 8);
	ctf_put(&p, &pi.bits, 8); /* content_size */
	ctf_put(&p, &pi.bits, 8); /* packet_size: no padding */
	ctf_put(&p, &s->discarded, 8);
	ctf_put(&p, &cpu, 4);
	ret = w->k->packet(w->k, s->h, hdr, sizeof(hdr), s->pkt.data, s->pkt.len, &pi);
	s->pkt.len = 0;
	s->nr = 0;
	return ret;
}

/* Fixed-size bytes of field @f, zeros where the record is too short. */
static int ctf_fixed(struct fdr_buf *b, const struct fdr_abi_field *f, size_t size,
		     const unsigned char *p, uint32_t len)
{
	static const unsigned char zeros[64];
	size_t done = 0;
	int ret = 0;

	if ((uint32_t)f->offset + size <= len)
		return fb_add(b, p + f->offset, size);
	while (done < size && !ret) {
		size_t k = size - done < sizeof(zeros) ? size - done : sizeof(zeros);

		ret = fb_add(b, zeros, k);
		done += k;
	}
	return ret;
}

/* @n records lost before the next one on @cpu of @buf: end the packet, count them. */
static int ctf_lost(struct fdr_ctf_writer *w, uint32_t buf, uint32_t cpu, uint64_t n)
{
	struct ctf_stream *s = ctf_stream_get(w, buf, cpu);
	int ret;

	if (!s)
		return fdr_export_fail(w->k->err, ENOMEM, "ctf", NULL);
	if (s->nr && (ret = ctf_flush(w, buf, cpu)))
		return ret;
	s->discarded += n;
	return 0;
}

/* The fields of @rec, field by field: any record, however short (the fallback of the plan). */
static int ctf_fields_slow(struct fdr_buf *b, const struct fdr_abi_event *e,
			   const struct fdr_trace_rec *rec)
{
	uint32_t i, nf = ctf_nr_fields(e);
	int ret = 0;

	for (i = 0; i < nf && !ret; i++) {
		const struct fdr_abi_field *f = &e->fields[i];
		const unsigned char *bytes;
		uint32_t n;

		switch (f->kind) {
		case FDR_KIND_STRING:
		case FDR_KIND_TAIL_CHARS:
			if (fdr_field_get_bytes(f, rec->payload, rec->len, &bytes, &n))
				n = 0;
			ret = fb_add(b, bytes, n);
			ret |= fb_add(b, "", 1);
			break;
		case FDR_KIND_BYTES:
			if (fdr_field_get_bytes(f, rec->payload, rec->len, &bytes, &n))
				n = 0;
			ret = fb_add(b, &n, 4);
			ret |= fb_add(b, bytes, n);
			break;
		case FDR_KIND_ULONG_ARRAY:
			ret = ctf_fixed(b, f, f->size / 8u * 8u, rec->payload, rec->len);
			break;
		default:
			/* integers, bool, char arrays and unknown kinds: the bytes as they are */
			ret = ctf_fixed(b, f, f->size, rec->payload, rec->len);
			break;
		}
	}
	return ret;
}

/* Copy @n bytes without a call for the short ones (most fields are a few bytes). */
static inline void ctf_copy(unsigned char *d, const unsigned char *src, uint32_t n)
{
	if (n >= 8 && n <= 16) {
		memcpy(d, src, 8);
		memcpy(d + n - 8, src + n - 8, 8); /* overlaps the first for n < 16 */
	} else if (n >= 4 && n < 8) {
		memcpy(d, src, 4);
		memcpy(d + n - 4, src + n - 4, 4);
	} else if (n < 4) {
		uint32_t i;

		for (i = 0; i < n; i++)
			d[i] = src[i];
	} else {
		memcpy(d, src, n);
	}
}

/* The plan of event @e (made the first time its id is written); NULL: no memory. */
static const struct ctf_plan *ctf_plan_get(struct fdr_ctf_writer *w, const struct fdr_abi_event *e)
{
	struct ctf_plan *pl;
	uint32_t i, nf = ctf_nr_fields(e);

	if (e->id <= UINT16_MAX && w->plans[e->id] && w->plans[e->id]->ev == e)
		return w->plans[e->id];
	if (e->id > UINT16_MAX)
		return NULL;
	pl = w->plans[e->id] ? w->plans[e->id] : malloc(sizeof(*pl));
	if (!pl)
		return NULL;
	memset(pl, 0, sizeof(*pl));
	pl->ev = e;
	for (i = 0; i < nf; i++) {
		const struct fdr_abi_field *f = &e->fields[i];
		struct ctf_op *prev = pl->nr_ops ? &pl->ops[pl->nr_ops - 1] : NULL;
		uint32_t size = f->kind == FDR_KIND_ULONG_ARRAY ? f->size / 8u * 8u : f->size;

		if (f->kind == FDR_KIND_STRING || f->kind == FDR_KIND_TAIL_CHARS ||
		    f->kind == FDR_KIND_BYTES) {
			pl->ops[pl->nr_ops++] = (struct ctf_op){ .off = f->offset,
								 .kind = f->kind,
								 .field = (uint8_t)i };
			pl->nr_var++;
			continue;
		}
		if (f->offset + size > pl->fixed_end)
			pl->fixed_end = f->offset + size;
		pl->fixed_bytes += size;
		if (prev && prev->kind == CTF_OP_COPY && prev->off + prev->size == f->offset &&
		    prev->size + size <= UINT16_MAX)
			prev->size = (uint16_t)(prev->size + size); /* follows the previous copy */
		else
			pl->ops[pl->nr_ops++] = (struct ctf_op){ .off = f->offset,
								 .size = (uint16_t)size,
								 .kind = CTF_OP_COPY,
								 .field = (uint8_t)i };
	}
	w->plans[e->id] = pl;
	return pl;
}

static int ctf_event(struct fdr_ctf_writer *w, uint32_t buf, const struct fdr_trace_rec *rec)
{
	const struct fdr_abi_event *e = rec->ev;
	struct ctf_stream *s = ctf_stream_get(w, buf, rec->cpu);
	const struct ctf_plan *pl = ctf_plan_get(w, e);
	struct fdr_common c;
	uint32_t i, id = e->id;
	uint64_t ts = rec->ts;
	struct fdr_buf *b;
	unsigned char *p;
	size_t need;
	int ret;

	if (!s || !pl)
		return fdr_export_fail(w->k->err, ENOMEM, "ctf", NULL);
	if (rec->lost_before && (ret = ctf_lost(w, buf, rec->cpu, rec->lost_before)))
		return ret;
	if (id <= UINT16_MAX)
		w->seen.seen[id] |= (uint8_t)(1u << buf);
	if (ts < s->last_ts) {
		ts = s->last_ts; /* readers require each stream's time to go forward */
		w->st.clamped++;
	}
	s->last_ts = ts;
	if (!s->nr)
		s->ts_begin = ts;
	s->ts_end = ts;
	s->nr++;
	b = &s->pkt;
	memset(&c, 0, sizeof(c));
	memcpy(&c, rec->payload, rec->len < sizeof(c) ? rec->len : sizeof(c));
	if (!s->comm_valid || s->comm_pid != c.pid) {
		const char *name = fdr_trace_comm(w->t, c.pid, s->comm, sizeof(s->comm));

		s->comm_len = (uint32_t)strnlen(name, sizeof(s->comm) - 1);
		if (name != s->comm)
			memcpy(s->comm, name, s->comm_len);
		s->comm[s->comm_len] = '\0';
		s->comm_pid = c.pid;
		s->comm_valid = 1;
	}
	/* header, context, fixed fields and at most len + 5 bytes per string or byte array */
	need = 4 + 8 + 4 + sizeof(s->comm) + 2 + pl->fixed_bytes +
	       (size_t)pl->nr_var * (rec->len + 5u);
	if (__builtin_expect(b->len + need + 1 > b->size, 0) && fdr_buf_reserve(b, need))
		return fdr_export_fail(w->k->err, ENOMEM, "ctf", NULL);
	p = (unsigned char *)b->data + b->len;
	memcpy(p, &id, 4);
	memcpy(p + 4, &ts, 8);
	memcpy(p + 12, &c.pid, 4);
	memcpy(p + 16, s->comm, sizeof(s->comm)); /* whole: what follows the NUL is overwritten */
	p += 16 + s->comm_len + 1;
	*p++ = c.flags;
	*p++ = c.preempt_count;
	if (rec->len < pl->fixed_end) {
		/* a fixed field past the record's end: field by field, with zeros */
		b->len = (size_t)((char *)p - b->data);
		ret = ctf_fields_slow(b, e, rec);
		if (ret)
			return fdr_export_fail(w->k->err, ENOMEM, "ctf", NULL);
		p = (unsigned char *)b->data + b->len;
	} else {
		for (i = 0; i < pl->nr_ops; i++) {
			const struct ctf_op *op = &pl->ops[i];
			const unsigned char *bytes;
			uint32_t n;

			if (op->kind == CTF_OP_COPY) {
				ctf_copy(p, rec->payload + op->off, op->size);
				p += op->size;
				continue;
			}
			if (fdr_field_get_bytes(&e->fields[op->field], rec->payload, rec->len,
						&bytes, &n))
				n = 0;
			if (op->kind == FDR_KIND_BYTES) {
				memcpy(p, &n, 4);
				p += 4;
			}
			if (n)
				memcpy(p, bytes, n);
			p += n;
			if (op->kind != FDR_KIND_BYTES)
				*p++ = '\0';
		}
	}
	b->len = (size_t)((char *)p - b->data);
	b->data[b->len] = '\0';
	w->st.events++;
	if (b->len >= FDR_EXPORT_FLUSH)
		return ctf_flush(w, buf, rec->cpu);
	return 0;
}

/**
 * fdr_ctf_writer_new - a CTF writer of @t's records into sink @k
 *
 * Returns: 0 and *@out (fdr_ctf_writer_free() it), or a negative errno.
 */
int fdr_ctf_writer_new(struct fdr_trace *t, struct fdr_ctf_sink *k, struct fdr_ctf_writer **out)
{
	struct fdr_ctf_writer *w = calloc(1, sizeof(*w));

	*out = NULL;
	if (w) {
		w->seen.seen = calloc(UINT16_MAX + 1, 1);
		w->plans = calloc(UINT16_MAX + 1, sizeof(*w->plans));
	}
	if (!w || !w->seen.seen || !w->plans) {
		if (w) {
			free(w->seen.seen);
			free(w->plans);
		}
		free(w);
		return fdr_export_fail(k->err, ENOMEM, "ctf", NULL);
	}
	w->t = t;
	w->k = k;
	w->seen.nr_bufs = fdr_trace_nr_buffers(t);
	if (w->seen.nr_bufs > CTF_MAX_BUFS)
		w->seen.nr_bufs =
			CTF_MAX_BUFS; /* the records of the others are counted as unknown */
	if (!w->seen.nr_bufs)
		w->seen.nr_bufs = 1;
	if (getrandom(w->uuid, sizeof(w->uuid), 0) != sizeof(w->uuid)) {
		int e = errno;

		fdr_ctf_writer_free(w, NULL);
		return fdr_export_fail(k->err, e, "getrandom", NULL);
	}
	w->uuid[6] = (w->uuid[6] & 0x0f) | 0x40; /* version 4 */
	w->uuid[8] = (w->uuid[8] & 0x3f) | 0x80; /* RFC 4122 variant */
	*out = w;
	return 0;
}

/**
 * fdr_ctf_writer_read - read what @t holds now into packets (handed to the sink
 * as they fill): to its end for a snapshot or a file; for a consuming read of
 * live buffers, what was written so far (call again for more)
 *
 * Returns: 0 or a negative errno (message in the sink's err).
 */
int fdr_ctf_writer_read(struct fdr_ctf_writer *w)
{
	struct fdr_trace_rec rec;
	uint32_t b, cpu, n = 0;
	int ret;

	/* the procnames cached from the last read may have changed since */
	for (b = 0; b < CTF_MAX_BUFS; b++)
		for (cpu = 0; cpu < w->sides[b].nr_streams; cpu++)
			w->sides[b].streams[cpu].comm_valid = 0;
	while ((ret = fdr_trace_next(w->t, &rec)) > 0) {
		b = w->seen.nr_bufs > 1 ? fdr_trace_rec_buffer(w->t, &rec) : 0;
		/* a consuming read that holds what it read: the room back to the writers */
		if (!(++n % CTF_COMMIT_EVERY))
			fdr_trace_commit(w->t);

		if (!rec.ev || rec.len < sizeof(struct fdr_common) || b >= w->seen.nr_bufs) {
			w->st.unknown++;
			w->st.lost += rec.lost_before;
			if (b < w->seen.nr_bufs && rec.lost_before &&
			    (ret = ctf_lost(w, b, rec.cpu, rec.lost_before)))
				break;
			continue;
		}
		w->st.lost += rec.lost_before;
		ret = ctf_event(w, b, &rec);
		if (ret)
			break;
	}
	fdr_trace_commit(w->t);
	if (ret < 0 && !(w->k->err && w->k->err->len))
		fdr_export_fail(w->k->err, -ret, fdr_trace_get_info(w->t)->origin, "read");
	return ret < 0 ? ret : 0;
}

/* Hand the metadata over if it describes more events than last time. */
static int ctf_meta(struct fdr_ctf_writer *w)
{
	struct fdr_buf meta = { 0 };
	size_t nr = fdr_trace_nr_events(w->t);
	int ret;

	if (w->meta_sent && nr == w->meta_events)
		return 0;
	if (ctf_metadata(w->t, w->more, w->nr_more, w->uuid, w->seen.nr_bufs > 1 ? &w->seen : NULL,
			 &meta)) {
		fdr_buf_free(&meta);
		return fdr_export_fail(w->k->err, ENOMEM, "ctf metadata", NULL);
	}
	ret = w->k->metadata(w->k, meta.data, meta.len);
	fdr_buf_free(&meta);
	w->meta_sent = 1;
	w->meta_events = nr;
	return ret;
}

/**
 * fdr_ctf_writer_tick - live streaming, every live timer period: the metadata
 * if it grew, then for CPUs 0..@nr_cpus-1 (and any other with a stream) the
 * packet of what was read since the last tick; a CPU without a packet yet gets
 * an empty one, and a CPU with nothing new is reported idle up to @now (the
 * trace clock, taken before the read), so live readers do not wait for it.
 * Records read later with an earlier time are raised to it (counted as clamped).
 * (Live sources are a session's instance: one buffer, stream class 0.)
 *
 * Returns: 0 or a negative errno.
 */
int fdr_ctf_writer_tick(struct fdr_ctf_writer *w, uint32_t nr_cpus, uint64_t now)
{
	uint32_t buf, cpu;
	int ret = ctf_meta(w);

	if (!ret && nr_cpus && !ctf_stream_get(w, 0, nr_cpus - 1))
		ret = fdr_export_fail(w->k->err, ENOMEM, "ctf", NULL);
	for (buf = 0; buf < w->seen.nr_bufs; buf++) {
		struct ctf_side *sd = &w->sides[buf];

		for (cpu = 0; cpu < sd->nr_streams && !ret; cpu++) {
			struct ctf_stream *s = &sd->streams[cpu];

			if (s->nr) {
				ret = ctf_flush(w, buf, cpu);
			} else if (s->h < 0) {
				/* an empty packet opens the stream: [now, now] */
				if (now > s->last_ts)
					s->last_ts = now;
				s->ts_begin = s->ts_end = s->last_ts;
				ret = ctf_flush(w, buf, cpu);
			} else if (w->k->idle) {
				if (now > s->last_ts)
					s->last_ts = now;
				ret = w->k->idle(w->k, s->h, s->last_ts);
			}
		}
	}
	return ret;
}

/**
 * fdr_ctf_writer_finish - the last packets, the metadata, every stream closed
 *
 * Returns: 0 or a negative errno.
 */
/* The last packet of every stream that has records (or losses) not handed over. */
static int ctf_flush_all(struct fdr_ctf_writer *w)
{
	uint32_t buf, cpu;
	int ret = 0;

	for (buf = 0; buf < w->seen.nr_bufs; buf++)
		for (cpu = 0; cpu < w->sides[buf].nr_streams && !ret; cpu++)
			if (w->sides[buf].streams[cpu].nr || w->sides[buf].streams[cpu].discarded)
				ret = ctf_flush(w, buf, cpu);
	return ret;
}

/* Close every stream of @w that was opened. */
static int ctf_close_all(struct fdr_ctf_writer *w)
{
	uint32_t buf, cpu;
	int ret = 0;

	for (buf = 0; buf < w->seen.nr_bufs; buf++)
		for (cpu = 0; cpu < w->sides[buf].nr_streams && !ret; cpu++) {
			struct ctf_stream *s = &w->sides[buf].streams[cpu];

			if (s->h >= 0)
				ret = w->k->close(w->k, s->h);
			s->h = -1;
		}
	return ret;
}

int fdr_ctf_writer_finish(struct fdr_ctf_writer *w)
{
	int ret = ctf_flush_all(w);

	if (!ret && !w->st.events) {
		/* no record at all: one empty packet, so readers see a valid empty trace */
		ret = ctf_stream_get(w, 0, 0) ? ctf_flush(w, 0, 0) : -ENOMEM;
	}
	if (!ret) {
		w->meta_sent = 0; /* whole, with what every buffer turned out to hold */
		ret = ctf_meta(w);
	}
	if (!ret)
		ret = ctf_close_all(w);
	return ret;
}

/* The counts of @w so far. */
void fdr_ctf_writer_stats(const struct fdr_ctf_writer *w, struct fdr_export_stats *st)
{
	*st = w->st;
}

/* Free @w (NULL: nothing); its counts into @st (may be NULL). */
void fdr_ctf_writer_free(struct fdr_ctf_writer *w, struct fdr_export_stats *st)
{
	uint32_t buf, cpu;

	if (!w)
		return;
	for (buf = 0; buf < CTF_MAX_BUFS; buf++) {
		for (cpu = 0; cpu < w->sides[buf].nr_streams; cpu++)
			fdr_buf_free(&w->sides[buf].streams[cpu].pkt);
		free(w->sides[buf].streams);
	}
	free(w->seen.seen);
	for (cpu = 0; w->plans && cpu <= UINT16_MAX; cpu++)
		free(w->plans[cpu]);
	free(w->plans);
	if (st)
		*st = w->st;
	free(w);
}

/**
 * fdr_export_ctf_sink - read @t to its end and write it as CTF 1.8 to @k: the
 * packets of each CPU with records, the metadata, then every stream closed
 * @st: counts (may be NULL)
 *
 * Returns: 0 or a negative errno (message in @k->err); the caller commits or
 * aborts what the sink holds.
 */
int fdr_export_ctf_sink(struct fdr_trace *t, struct fdr_ctf_sink *k, struct fdr_export_stats *st)
{
	struct fdr_ctf_writer *w;
	int ret = fdr_ctf_writer_new(t, k, &w);

	if (ret)
		return ret;
	ret = fdr_ctf_writer_read(w);
	if (!ret)
		ret = fdr_ctf_writer_finish(w);
	fdr_ctf_writer_free(w, st);
	return ret;
}

/* ---- a snapshot's CPUs side by side ----------------------------------------------------- */

/*
 * fdr_export_ctf_sink_split(): one writer per CPU (a source over that CPU
 * alone, fdr_trace_split_cpu()), all with the same uuid, so that each CPU's
 * stream is what the one writer of fdr_export_ctf_sink() makes of it, byte for
 * byte. Threads take CPUs j, j + T, j + 2T... and hand their packets to the
 * sink through a lock: one packet goes out whole while the others encode. Then
 * the calling thread, as fdr_ctf_writer_finish() does: an empty packet if no CPU
 * had a record, the metadata (the events of every source, each once), the closes.
 */
struct ctf_locked {
	struct fdr_ctf_sink k; /* what the CPU's writer sees; k.err: its own messages */
	struct ctf_split *sp;
	struct fdr_buf err;
};

struct ctf_split {
	struct fdr_ctf_sink *k;
	pthread_mutex_t mu;
	int failed; /* a sink call failed: the others stop at their next packet */
	struct fdr_ctf_writer **w; /* [cpu] */
	struct ctf_locked *lk; /* [cpu] */
	uint32_t nr, threads;
	int *ret; /* [thread] */
};

static int lk_enter(struct ctf_locked *l)
{
	pthread_mutex_lock(&l->sp->mu);
	if (l->sp->failed) {
		pthread_mutex_unlock(&l->sp->mu);
		return -ECANCELED; /* another CPU's failure, said in the sink's err */
	}
	return 0;
}

static int lk_leave(struct ctf_locked *l, int ret)
{
	if (ret)
		l->sp->failed = 1;
	pthread_mutex_unlock(&l->sp->mu);
	return ret;
}

static int lk_open(struct fdr_ctf_sink *k, const char *name, int *h)
{
	struct ctf_locked *l = (struct ctf_locked *)k;
	int ret = lk_enter(l);

	return ret ? ret : lk_leave(l, l->sp->k->open(l->sp->k, name, h));
}

static int lk_packet(struct fdr_ctf_sink *k, int h, const void *hdr, size_t hn, const void *body,
		     size_t bn, const struct fdr_ctf_packet *pi)
{
	struct ctf_locked *l = (struct ctf_locked *)k;
	int ret = lk_enter(l);

	return ret ? ret : lk_leave(l, l->sp->k->packet(l->sp->k, h, hdr, hn, body, bn, pi));
}

static int lk_metadata(struct fdr_ctf_sink *k, const void *p, size_t n)
{
	struct ctf_locked *l = (struct ctf_locked *)k;

	return l->sp->k->metadata(l->sp->k, p, n); /* the calling thread, alone by then */
}

static int lk_close(struct fdr_ctf_sink *k, int h)
{
	struct ctf_locked *l = (struct ctf_locked *)k;

	return l->sp->k->close(l->sp->k, h);
}

struct ctf_job {
	struct ctf_split *sp;
	uint32_t first;
};

static void *ctf_split_run(void *arg)
{
	const struct ctf_job *j = arg;
	struct ctf_split *sp = j->sp;
	uint32_t cpu;
	int ret = 0;

	for (cpu = j->first; cpu < sp->nr && !ret; cpu += sp->threads) {
		ret = fdr_ctf_writer_read(sp->w[cpu]);
		if (!ret)
			ret = ctf_flush_all(sp->w[cpu]);
	}
	sp->ret[j->first] = ret;
	if (ret) {
		pthread_mutex_lock(&sp->mu);
		sp->failed = 1;
		pthread_mutex_unlock(&sp->mu);
	}
	return NULL;
}

int fdr_export_ctf_sink_split(struct fdr_trace *t, struct fdr_ctf_sink *k, uint32_t threads,
			      struct fdr_export_stats *st)
{
	struct ctf_split sp = { .k = k };
	struct fdr_trace **src = NULL;
	struct ctf_job *jobs = NULL;
	pthread_t *th = NULL;
	char *up = NULL; /* [thread] started */
	uint32_t i, nr = fdr_trace_get_info(t)->nr_cpus;
	uint64_t events = 0;
	int ret = 0;

	if (st)
		memset(st, 0, sizeof(*st));
	if (threads < 2 || nr < 2)
		return fdr_export_ctf_sink(t, k, st);
	if (threads > nr)
		threads = nr;
	src = calloc(nr, sizeof(*src));
	sp.w = calloc(nr, sizeof(*sp.w));
	sp.lk = calloc(nr, sizeof(*sp.lk));
	sp.ret = calloc(threads, sizeof(*sp.ret));
	jobs = calloc(threads, sizeof(*jobs));
	th = calloc(threads, sizeof(*th));
	up = calloc(threads, 1);
	if (!src || !sp.w || !sp.lk || !sp.ret || !jobs || !th || !up) {
		ret = fdr_export_fail(k->err, ENOMEM, "ctf", NULL);
		goto out;
	}
	for (i = 0; i < nr && !ret; i++) {
		ret = fdr_trace_split_cpu(t, i, &src[i]);
		if (ret == -EOPNOTSUPP && !i) {
			ret = 0; /* not a snapshot: one writer */
			free(src);
			src = NULL;
			break;
		}
		if (ret) {
			fdr_export_fail(k->err, -ret, fdr_trace_get_info(t)->origin, "read");
			break;
		}
		sp.lk[i] = (struct ctf_locked){
			.k = { .open = lk_open,
			       .packet = lk_packet,
			       .metadata = lk_metadata,
			       .close = lk_close,
			       .err = &sp.lk[i].err },
			.sp = &sp,
		};
		ret = fdr_ctf_writer_new(src[i], &sp.lk[i].k, &sp.w[i]);
		if (ret)
			break;
		if (i)
			memcpy(sp.w[i]->uuid, sp.w[0]->uuid, sizeof(sp.w[0]->uuid));
	}
	if (!src && !ret) {
		ret = fdr_export_ctf_sink(t, k, st);
		goto out;
	}
	if (ret)
		goto out;
	pthread_mutex_init(&sp.mu, NULL);
	sp.nr = nr;
	sp.threads = threads;
	for (i = 0; i < threads; i++)
		jobs[i] = (struct ctf_job){ .sp = &sp, .first = i };
	for (i = 1; i < threads; i++)
		up[i] = !pthread_create(&th[i], NULL, ctf_split_run, &jobs[i]);
	ctf_split_run(&jobs[0]);
	for (i = 1; i < threads; i++) {
		if (up[i])
			pthread_join(th[i], NULL);
		else
			ctf_split_run(&jobs[i]); /* no thread for it: here, after the rest */
	}
	pthread_mutex_destroy(&sp.mu);
	for (i = 0; i < threads && !ret; i++)
		ret = sp.ret[i];
	for (i = 0; i < nr; i++)
		events += sp.w[i]->st.events;
	if (!ret && !events)
		ret = ctf_stream_get(sp.w[0], 0, 0) ? ctf_flush(sp.w[0], 0, 0) : -ENOMEM;
	if (!ret) {
		/* the metadata of every source, with CPU 0's writer and uuid */
		sp.w[0]->more = src;
		sp.w[0]->nr_more = nr;
		sp.w[0]->t = t;
		ret = ctf_meta(sp.w[0]);
		sp.w[0]->t = src[0];
	}
	for (i = 0; i < nr && !ret; i++)
		ret = ctf_close_all(sp.w[i]);
out:
	for (i = 0; sp.lk && i < nr; i++) {
		struct fdr_buf *e = &sp.lk[i].err;

		if (ret && e->len && k->err && !k->err->len)
			fdr_buf_add(k->err, e->data, e->len); /* the first CPU's message */
		fdr_buf_free(e);
	}
	for (i = 0; sp.w && i < nr; i++) {
		struct fdr_export_stats s1;

		if (!sp.w[i])
			continue;
		fdr_ctf_writer_free(sp.w[i], &s1);
		if (st) {
			st->events += s1.events;
			st->lost += s1.lost;
			st->unknown += s1.unknown;
			st->clamped += s1.clamped;
		}
	}
	for (i = 0; src && i < nr; i++)
		fdr_trace_close(src[i]);
	free(src);
	free(sp.w);
	free(sp.lk);
	free(sp.ret);
	free(jobs);
	free(th);
	free(up);
	return ret;
}

/* ---- a directory on disk ---------------------------------------------------------------- */

struct ctf_dir {
	struct fdr_ctf_sink k;
	struct fdr_export_out out;
	int *fd; /* by handle; -1 once closed */
	char (*name)[32];
	int nr;
};

static int dir_open(struct fdr_ctf_sink *k, const char *name, int *h)
{
	struct ctf_dir *d = (struct ctf_dir *)k;
	int *fd = realloc(d->fd, (size_t)(d->nr + 1) * sizeof(*fd));
	char(*nm)[32];

	if (fd)
		d->fd = fd;
	nm = fd ? realloc(d->name, (size_t)(d->nr + 1) * sizeof(*nm)) : NULL;
	if (!nm)
		return fdr_export_fail(k->err, ENOMEM, "ctf", NULL);
	d->name = nm;
	snprintf(d->name[d->nr], sizeof(d->name[0]), "%s", name);
	d->fd[d->nr] = fdr_export_dir_file(&d->out, name);
	if (d->fd[d->nr] < 0)
		return d->fd[d->nr];
	*h = d->nr++;
	return 0;
}

static int dir_packet(struct fdr_ctf_sink *k, int h, const void *hdr, size_t hn, const void *body,
		      size_t bn, const struct fdr_ctf_packet *pi)
{
	struct ctf_dir *d = (struct ctf_dir *)k;
	int ret = fdr_export_write(&d->out, d->fd[h], d->name[h], hdr, hn);

	(void)pi;
	if (!ret && bn)
		ret = fdr_export_write(&d->out, d->fd[h], d->name[h], body, bn);
	return ret;
}

static int dir_metadata(struct fdr_ctf_sink *k, const void *p, size_t n)
{
	struct ctf_dir *d = (struct ctf_dir *)k;
	int fd = fdr_export_dir_file(&d->out, "metadata");
	int ret = fd < 0 ? fd : fdr_export_write(&d->out, fd, "metadata", p, n);

	if (fd >= 0 && close(fd) < 0 && !ret)
		ret = fdr_export_fail(k->err, errno, d->out.path, "metadata");
	return ret;
}

static int dir_close(struct fdr_ctf_sink *k, int h)
{
	struct ctf_dir *d = (struct ctf_dir *)k;
	int ret = close(d->fd[h]) < 0 ? fdr_export_fail(k->err, errno, d->out.path, d->name[h]) : 0;

	d->fd[h] = -1;
	return ret;
}

/**
 * fdr_export_ctf - write @t as a CTF 1.8 trace directory @dir (created; it must
 * not exist or be empty): "metadata" and one "stream_N" file per CPU with records
 * @st: counts (may be NULL)
 *
 * Returns: 0 or a negative errno (-ENOTEMPTY, -EEXIST, -ENOSPC, -ENOMEM, a read
 * error of the source...; message in @err).
 */
int fdr_export_ctf(struct fdr_trace *t, const char *dir, struct fdr_export_stats *st,
		   struct fdr_buf *err)
{
	struct ctf_dir d = {
		.k = { .open = dir_open,
		       .packet = dir_packet,
		       .metadata = dir_metadata,
		       .close = dir_close,
		       .err = err },
	};
	int i, ret;

	if (st)
		memset(st, 0, sizeof(*st));
	ret = fdr_export_dir_open(&d.out, dir, err);
	if (ret)
		return ret;
	ret = fdr_export_ctf_sink(t, &d.k, st);
	for (i = 0; i < d.nr; i++)
		if (d.fd[i] >= 0)
			close(d.fd[i]);
	free(d.fd);
	free(d.name);
	if (!ret)
		ret = fdr_export_commit(&d.out);
	else
		fdr_export_abort(&d.out);
	return ret;
}
