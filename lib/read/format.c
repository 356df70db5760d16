// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * format.c - the kernel's text formats: event format files, header_page and
 * header_event, the trace header and record lines (docs/tracefs.md, Text output).
 *
 * Record payloads come from shared memory and are hostile: every field is read
 * through fdr_field_get_int() or fdr_field_get_bytes(), which check offset +
 * size against the record length (and a __data_loc word's offset and length the
 * same way), or, on the cached plan's fast path (fdr_format_record()), after the
 * same offset + size check inline. A field that does not check out prints as
 * "<bad>" instead of being read.
 *
 * A custom print format is printf-like; each conversion takes the next field in
 * the event's print_args list. Integer conversions get the field's value whatever
 * the length modifier written (we pass long long and rewrite the modifier), %s
 * takes a string or char-array field, %p prints 0x%lx like the kernel's %p with
 * hashing off. Anything else is copied literally.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fdr/fdr-read.h"
#include "common/bounds.h"
#include "common/comm.h"
#include "common/numbers.h"
#include "common/strbuf.h"
#include "read-local.h"

/* ---- registry lookups ------------------------------------------------------------------ */

/** fdr_event_by_id - the registry entry with this id, or NULL; borrowed */
const struct fdr_abi_event *fdr_event_by_id(const struct fdr_abi_control *ctl, uint32_t id)
{
	uint32_t i, bound = fdr_events_bound(ctl);

	/*
	 * to the bound: each record of an event removed since (a probe event's -:)
	 * comes here, and a scan of the whole registry made formatting a million
	 * of them 3 times slower (1.2 s against 0.38)
	 */
	for (i = 0; i < bound; i++) {
		const struct fdr_abi_event *e = &ctl->events[i];

		if (e->state == FDR_EVENT_READY && e->id == id)
			return e;
	}
	return NULL;
}

/* ---- format files ----------------------------------------------------------------------- */

static int fmt_is_string(const struct fdr_abi_field *f)
{
	return f->kind == FDR_KIND_STRING || f->kind == FDR_KIND_CHARS ||
	       f->kind == FDR_KIND_TAIL_CHARS;
}

static const char *fmt_int_conv(const struct fdr_abi_field *f)
{
	if (f->size == 8)
		return f->is_signed ? "%lld" : "%llu";
	return f->is_signed ? "%d" : "%u";
}

/* The print fmt line's argument for field f. */
static int fmt_print_arg(const struct fdr_abi_field *f, struct fdr_buf *b)
{
	char name[FDR_FIELD_NAME_LEN + 1];

	memcpy(name, f->name, FDR_FIELD_NAME_LEN);
	name[FDR_FIELD_NAME_LEN] = 0;
	switch (f->kind) {
	case FDR_KIND_STRING:
		return fdr_buf_printf(b, ", __get_str(%s)", name);
	case FDR_KIND_BYTES:
		return fdr_buf_printf(
			b,
			", __print_hex_str(__get_dynamic_array(%s), __get_dynamic_array_len(%s))",
			name, name);
	default:
		return fdr_buf_printf(b, ", REC->%s", name);
	}
}

static uint32_t fmt_nr_fields(const struct fdr_abi_event *e)
{
	return e->nr_fields < FDR_MAX_FIELDS ? e->nr_fields : FDR_MAX_FIELDS;
}

/** fdr_format_event_file - the events/SYS/EVENT/format text of an event */
int fdr_format_event_file(const struct fdr_abi_event *e, struct fdr_buf *b)
{
	char name[FDR_NAME_LEN + 1], fname[FDR_FIELD_NAME_LEN + 1], type[FDR_FIELD_TYPE_LEN + 1];
	uint32_t i, nf = fmt_nr_fields(e);
	int ret = 0;

	memcpy(name, e->name, FDR_NAME_LEN);
	name[FDR_NAME_LEN] = 0;
	ret |= fdr_buf_printf(b, "name: %s\nID: %u\nformat:\n", name, e->id);
	ret |= fdr_buf_printf(
		b, "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
		   "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
		   "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
		   "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n");
	for (i = 0; i < nf; i++) {
		const struct fdr_abi_field *f = &e->fields[i];

		memcpy(fname, f->name, FDR_FIELD_NAME_LEN);
		fname[FDR_FIELD_NAME_LEN] = 0;
		memcpy(type, f->type, FDR_FIELD_TYPE_LEN);
		type[FDR_FIELD_TYPE_LEN] = 0;
		if (f->kind == FDR_KIND_CHARS)
			ret |= fdr_buf_printf(b, "\tfield:char %s[%u];", fname, f->size);
		else if (f->kind == FDR_KIND_ULONG_ARRAY)
			ret |= fdr_buf_printf(b, "\tfield:unsigned long %s[%u];", fname,
					      f->size / 8);
		else if (f->kind == FDR_KIND_TAIL_CHARS)
			ret |= fdr_buf_printf(b, "\tfield:char %s[];", fname);
		else if (f->kind == FDR_KIND_ARRAY) /* a probe's array, as the kernel shows it */
			ret |= fdr_buf_printf(b, "\tfield:%s %s[];", type, fname);
		else if (f->kind == FDR_KIND_STRING || f->kind == FDR_KIND_BYTES)
			ret |= fdr_buf_printf(b, "\tfield:%s %s;", type, fname);
		else
			ret |= fdr_buf_printf(b, "\tfield:%s %s;", type, fname);
		ret |= fdr_buf_printf(b, "\toffset:%u;\tsize:%u;\tsigned:%u;\n", f->offset, f->size,
				      f->is_signed ? 1 : 0);
	}
	ret |= fdr_buf_printf(b, "\nprint fmt: ");
	if (e->id == FDR_EVENT_ID_PRINT && strcmp(e->system, "ftrace") == 0) {
		ret |= fdr_buf_printf(b, "\"%%ps: %%s\", (void *)REC->ip, REC->buf\n");
		return ret ? -ENOMEM : 0;
	}
	if (e->id == FDR_EVENT_ID_USER_STACK && strcmp(e->system, "ftrace") == 0) {
		ret |= fdr_buf_add(b, "\"", 1);
		for (i = 0; i < FDR_STACK_DEPTH; i++)
			ret |= fdr_buf_printf(b, "\\t=> %%ps\\n");
		ret |= fdr_buf_add(b, "\"", 1);
		for (i = 0; i < FDR_STACK_DEPTH; i++)
			ret |= fdr_buf_printf(b, ", (void *)REC->caller[%u]", i);
		ret |= fdr_buf_add(b, "\n", 1);
		return ret ? -ENOMEM : 0;
	}
	if (e->probe) {
		ret |= fdr_probe_print_fmt(e, b);
	} else if (e->print_fmt[0]) {
		char pf[FDR_PRINT_FMT_LEN + 1];
		uint32_t n = e->nr_print_args < FDR_PRINT_ARGS_MAX ? e->nr_print_args :
								     FDR_PRINT_ARGS_MAX;

		memcpy(pf, e->print_fmt, FDR_PRINT_FMT_LEN);
		pf[FDR_PRINT_FMT_LEN] = 0;
		ret |= fb_add(b, "\"", 1);
		for (i = 0; pf[i]; i++) {
			if (pf[i] == '"' || pf[i] == '\\')
				ret |= fb_add(b, "\\", 1);
			ret |= fb_add(b, &pf[i], 1);
		}
		ret |= fb_add(b, "\"", 1);
		for (i = 0; i < n; i++) {
			uint8_t pa = e->print_args[i]; /* one read: @e may be shared memory */

			if (pa < nf)
				ret |= fmt_print_arg(&e->fields[pa], b);
		}
	} else {
		ret |= fb_add(b, "\"", 1);
		for (i = 0; i < nf; i++) {
			const struct fdr_abi_field *f = &e->fields[i];

			memcpy(fname, f->name, FDR_FIELD_NAME_LEN);
			fname[FDR_FIELD_NAME_LEN] = 0;
			ret |= fdr_buf_printf(b, "%s%s=%s", i ? " " : "", fname,
					      fmt_is_string(f) || f->kind == FDR_KIND_BYTES ?
						      "%s" :
						      fmt_int_conv(f));
		}
		ret |= fb_add(b, "\"", 1);
		for (i = 0; i < nf; i++)
			ret |= fmt_print_arg(&e->fields[i], b);
	}
	ret |= fb_add(b, "\n", 1);
	return ret ? -ENOMEM : 0;
}

/** fdr_format_header_page - events/header_page for a sub-buffer size */
int fdr_format_header_page(uint32_t subbuf_size, struct fdr_buf *b)
{
	return fdr_buf_printf(b,
			      "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
			      "\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"
			      "\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
			      "\tfield: char data;\toffset:16;\tsize:%u;\tsigned:0;\n",
			      subbuf_size - 16);
}

/** fdr_format_header_event - events/header_event */
int fdr_format_header_event(struct fdr_buf *b)
{
	return fdr_buf_printf(b, "# compressed entry header\n"
				 "\ttype_len    :    5 bits\n"
				 "\ttime_delta  :   27 bits\n"
				 "\tarray       :   32 bits\n"
				 "\n"
				 "\tpadding     : type == 29\n"
				 "\ttime_extend : type == 30\n"
				 "\ttime_stamp : type == 31\n"
				 "\tdata max type_len  == 28\n");
}

/* ---- the trace header ----------------------------------------------------------------- */

/** fdr_format_trace_header - the header of trace and per_cpu/cpuN/trace */
int fdr_format_trace_header(struct fdr_session *s, uint32_t inst, struct fdr_buf *b)
{
	return fdr_format_trace_header_ex(s, inst, 0, b);
}

/** fdr_format_trace_header_ex - the same for the live or (FDR_READ_SNAPSHOT) snapshot buffers */
int fdr_format_trace_header_ex(struct fdr_session *s, uint32_t inst, unsigned flags,
			       struct fdr_buf *b)
{
	const struct fdr_abi_instance *in = &fdr_session_control(s)->instances[inst];
	uint64_t entries = 0, written = 0;
	int nr = fdr_ring_nr_cpus(s, inst), cpu, ret = 0;
	const char *pad = (in->options & FDR_OPT_RECORD_TGID) ? "          " : "";

	ret |= fdr_buf_printf(b, "# tracer: nop\n#\n");
	if (!(in->options & FDR_OPT_CONTEXT_INFO))
		return ret ? -ENOMEM : 0;
	for (cpu = 0; cpu < nr; cpu++) {
		struct fdr_cpu_stats st;

		if (fdr_ring_stats_ex(s, inst, (uint32_t)cpu, flags, &st) == 0) {
			entries += st.entries;
			written += st.written;
		}
	}
	ret |= fdr_buf_printf(b,
			      "# entries-in-buffer/entries-written: %" PRIu64 "/%" PRIu64
			      "   #P:%d\n#\n",
			      entries, written, nr > 0 ? nr : 0);
	if (in->options & FDR_OPT_IRQ_INFO) {
		ret |= fdr_buf_printf(
			b,
			"#                            %s    _-----=> irqs-off/BH-disabled\n"
			"#                            %s   / _----=> need-resched\n"
			"#                            %s  | / _---=> hardirq/softirq\n"
			"#                            %s  || / _--=> preempt-depth\n"
			"#                            %s  ||| / _-=> migrate-disable\n"
			"#                            %s  |||| /     delay\n",
			pad, pad, pad, pad, pad, pad);
		if (in->options & FDR_OPT_RECORD_TGID)
			ret |= fdr_buf_printf(
				b,
				"#           TASK-PID       TGID    CPU#  |||||  TIMESTAMP  FUNCTION\n"
				"#              | |           |       |   |||||     |         |\n");
		else
			ret |= fdr_buf_printf(
				b, "#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION\n"
				   "#              | |         |   |||||     |         |\n");
	} else if (in->options & FDR_OPT_RECORD_TGID) {
		ret |= fdr_buf_printf(
			b, "#           TASK-PID       TGID    CPU#     TIMESTAMP  FUNCTION\n"
			   "#              | |           |       |         |         |\n");
	} else {
		ret |= fdr_buf_printf(b, "#           TASK-PID     CPU#     TIMESTAMP  FUNCTION\n"
					 "#              | |         |         |         |\n");
	}
	return ret ? -ENOMEM : 0;
}

/* "%06u" of the microseconds in @ns (< 10^9) */
static inline char *fb_put_usec(char *d, uint64_t ns)
{
	uint32_t us = (uint32_t)(ns / 1000u), hi = us / 10000u, lo = us % 10000u;

	fb_2digits(d, hi);
	fb_2digits(d + 2, lo / 100u);
	fb_2digits(d + 4, lo % 100u);
	return d + 6;
}

/* A timestamp as the trace file shows it, unchecked: at most 22 bytes */
static inline char *fb_put_ts(char *d, uint32_t clock, uint64_t ts)
{
	unsigned n;

	*d++ = ' ';
	if (!fdr_clock_is_ns(clock)) {
		for (n = fb_dec_len(ts); n < 12; n++)
			*d++ = ' ';
		return fb_put_u64(d, ts);
	}
	ts += 500; /* rounded to the microsecond, as the kernel prints it */
	for (n = fb_dec_len(ts / 1000000000u); n < 5; n++)
		*d++ = ' ';
	d = fb_put_u64(d, ts / 1000000000u);
	*d++ = '.';
	return fb_put_usec(d, ts % 1000000000u);
}

/** fdr_format_ts - " %5lu.%06lu" (rounded to the µs) or " %12llu" for counter clocks */
int fdr_format_ts(uint32_t clock, uint64_t ts, struct fdr_buf *b)
{
	char *d;

	if (fdr_buf_reserve(b, 24))
		return -ENOMEM;
	d = fb_put_ts(b->data + b->len, clock, ts);
	b->len = (size_t)(d - b->data);
	*d = '\0';
	return 0;
}

/* ---- bodies ------------------------------------------------------------------------- */

/* The integer of @size (1, 2, 4; anything else: 8) bytes at @p, sign-extended if @is_signed */
static inline int64_t fmt_load_int(const unsigned char *p, unsigned size, int is_signed)
{
	uint8_t u8;
	uint16_t u16;
	uint32_t u32;
	uint64_t u64;

	switch (size) {
	case 1:
		memcpy(&u8, p, 1);
		return is_signed ? (int64_t)(int8_t)u8 : (int64_t)u8;
	case 2:
		memcpy(&u16, p, 2);
		return is_signed ? (int64_t)(int16_t)u16 : (int64_t)u16;
	case 4:
		memcpy(&u32, p, 4);
		return is_signed ? (int64_t)(int32_t)u32 : (int64_t)u32;
	default:
		memcpy(&u64, p, 8);
		return (int64_t)u64;
	}
}

/**
 * fdr_field_get_int - read an integer field (sign-extended if signed), checked
 * against the record; returns 0 or -1 (format.c, the exporters)
 */
int fdr_field_get_int(const struct fdr_abi_field *f, const unsigned char *p, uint32_t len,
		      int64_t *v)
{
	uint16_t size = f->size;

	if ((uint32_t)f->offset + size > len || (size != 1 && size != 2 && size != 4 && size != 8))
		return -1;
	*v = fmt_load_int(p + f->offset, size, f->is_signed);
	return 0;
}

/**
 * fdr_field_get_bytes - locate a string or byte field's bytes in the record;
 * returns 0 or -1. *n excludes a final NUL. (format.c, the exporters)
 */
int fdr_field_get_bytes(const struct fdr_abi_field *f, const unsigned char *p, uint32_t len,
			const unsigned char **s, uint32_t *n)
{
	uint32_t loc, off, l;

	switch (f->kind) {
	case FDR_KIND_CHARS:
		if ((uint32_t)f->offset + f->size > len)
			return -1;
		*s = p + f->offset;
		*n = (uint32_t)strnlen((const char *)*s, f->size);
		return 0;
	case FDR_KIND_TAIL_CHARS:
		if (f->offset > len)
			return -1;
		*s = p + f->offset;
		*n = (uint32_t)strnlen((const char *)*s, len - f->offset);
		return 0;
	case FDR_KIND_STRING:
	case FDR_KIND_BYTES:
		if ((uint32_t)f->offset + 4 > len)
			return -1;
		memcpy(&loc, p + f->offset, 4);
		off = loc & 0xffff;
		l = loc >> 16;
		if (off > len || l > len - off)
			return -1;
		*s = p + off;
		*n = f->kind == FDR_KIND_STRING ? (uint32_t)strnlen((const char *)*s, l) : l;
		return 0;
	default:
		return -1;
	}
}

/*
 * A field's value as the default print shows it, unchecked: the caller reserved
 * FMT_VALUE_MAX(len) bytes (an integer, "<bad>", a string of at most @len bytes
 * or @len bytes in hex). Returns the new end.
 */
#define FMT_VALUE_MAX(len) (21 + 2 * (size_t)(len))
static char *fmt_put_value(char *d, const struct fdr_abi_field *f, const unsigned char *p,
			   uint32_t len)
{
	static const char hex[] = "0123456789abcdef";
	uint8_t kind = __atomic_load_n(&f->kind, __ATOMIC_RELAXED); /* read once */
	const unsigned char *str;
	uint32_t n, i;
	int64_t v;

	if (kind == FDR_KIND_BYTES || kind == FDR_KIND_STRING || kind == FDR_KIND_CHARS ||
	    kind == FDR_KIND_TAIL_CHARS) {
		struct fdr_abi_field fc = *f;

		fc.kind = kind;
		if (fdr_field_get_bytes(&fc, p, len, &str, &n) || n > len)
			goto bad;
		if (kind != FDR_KIND_BYTES) {
			memcpy(d, str, n);
			return d + n;
		}
		for (i = 0; i < n; i++) {
			*d++ = hex[str[i] >> 4];
			*d++ = hex[str[i] & 15];
		}
		return d;
	}
	if (fdr_field_get_int(f, p, len, &v))
		goto bad;
	return f->is_signed ? fb_put_s64(d, v) : fb_put_u64(d, (uint64_t)v);
bad:
	memcpy(d, "<bad>", 5);
	return d + 5;
}

/* fmt_put_value() appended to @b, room reserved first; 0 or -ENOMEM */
static int fmt_value_default(const struct fdr_abi_field *f, const unsigned char *p, uint32_t len,
			     struct fdr_buf *b)
{
	char *d;

	if (fdr_buf_reserve(b, FMT_VALUE_MAX(len)))
		return -ENOMEM;
	d = fmt_put_value(b->data + b->len, f, p, len);
	b->len = (size_t)(d - b->data);
	*d = '\0';
	return 0;
}

/* The format below is built from a checked conversion spec, never from raw input. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
/* One conversion of a custom print format applied to one field. */
static int fmt_conv(const char *spec, size_t spec_len, char conv, const struct fdr_abi_field *f,
		    const unsigned char *p, uint32_t len, struct fdr_buf *b)
{
	char fmt[64];
	const unsigned char *s;
	uint32_t n;
	int64_t v;
	size_t k = 0, i;

	/* keep flags, width and precision; drop length modifiers */
	for (i = 0; i < spec_len && k + 4 < sizeof(fmt); i++)
		if (!strchr("hlLqjzt", spec[i]))
			fmt[k++] = spec[i];
	if (conv == 's') {
		char tmp[FDR_MAX_RECORD + 1];

		if (!f || fdr_field_get_bytes(f, p, len, &s, &n))
			return fdr_buf_printf(b, "<bad>");
		if (f->kind == FDR_KIND_BYTES)
			return fmt_value_default(f, p, len, b);
		memcpy(tmp, s, n < FDR_MAX_RECORD ? n : FDR_MAX_RECORD);
		tmp[n < FDR_MAX_RECORD ? n : FDR_MAX_RECORD] = 0;
		fmt[k++] = 's';
		fmt[k] = 0;
		return fdr_buf_printf(b, fmt, tmp);
	}
	if (!f || fmt_is_string(f) || f->kind == FDR_KIND_BYTES || fdr_field_get_int(f, p, len, &v))
		return fdr_buf_printf(b, "<bad>");
	if (conv == 'p') {
		return fdr_buf_printf(b, "0x%" PRIx64, (uint64_t)v);
	}
	if (conv == 'c') {
		fmt[k++] = 'c';
		fmt[k] = 0;
		return fdr_buf_printf(b, fmt, (int)v);
	}
	fmt[k++] = 'l';
	fmt[k++] = 'l';
	fmt[k++] = conv == 'i' ? 'd' : conv;
	fmt[k] = 0;
	if (conv == 'd' || conv == 'i')
		return fdr_buf_printf(b, fmt, (long long)v);
	/* unsigned conversions see the field's own width, as printf on the C type would */
	if (f->size == 4 || (f->size < 4 && f->is_signed && v < 0) ||
	    (f->size < 4 && !f->is_signed))
		v &= (int64_t)0xffffffffull; /* promoted to int, as C passes it to printf */
	return fdr_buf_printf(b, fmt, (unsigned long long)v);
}
#pragma GCC diagnostic pop

/*
 * Per-event formatting plan, cached by id: the literal pieces of a default print
 * ("name: ", " field=") with their lengths, so the per-record path does no strlen.
 * Entries are checked against the registry entry and its layout hash on each use.
 */
struct fmt_plan {
	const struct fdr_abi_control *ctl;
	const struct fdr_abi_event *e;
	uint64_t layout_hash;
	uint32_t id;
	uint32_t nf;
	uint8_t name_len;
	uint8_t lit_len[FDR_MAX_FIELDS];
	char name[FDR_NAME_LEN + 2];
	char lit[FDR_MAX_FIELDS][FDR_FIELD_NAME_LEN + 2];
	struct fmt_int {
		uint16_t offset;
		uint8_t size; /* 1, 2, 4 or 8; 0: not an integer, fmt_put_value() prints it */
		uint8_t is_signed;
	} ints[FDR_MAX_FIELDS]; /* the integer fields' layout, copied once */
};

#define FMT_PLANS 64

/*
 * The "comm-pid " column of recent pids, so most records copy it in one go. The
 * key is the pid and its cmdline slot as read (its pid word and comm bytes): the
 * name is a function of those alone, so an unchanged slot means unchanged text,
 * whatever the session.
 */
struct fmt_task {
	int32_t pid;
	uint32_t len; /* of text; 0 = empty entry */
	struct comm_slot slot;
	char text[48];
};
#define FMT_TASKS 64

/* The " %5lu." part of the last nanosecond timestamp's second, formatted once. */
struct fmt_sec {
	uint64_t sec;
	uint32_t len; /* of text; 0 = empty */
	char text[24];
};

/*
 * Each thread's caches, behind one initial-exec TLS pointer: a general-dynamic
 * __thread array costs a __tls_get_addr() call per use in a shared library.
 */
struct fmt_cache {
	struct fmt_plan plans[FMT_PLANS];
	struct fmt_task tasks[FMT_TASKS];
	struct fmt_sec sec;
};
static __thread __attribute__((tls_model("initial-exec"))) struct fmt_cache *fmt_cache_tls;
static pthread_key_t fmt_cache_key;
static pthread_once_t fmt_cache_once = PTHREAD_ONCE_INIT;

static void fmt_cache_key_init(void)
{
	if (pthread_key_create(&fmt_cache_key, free) != 0)
		fmt_cache_key = (pthread_key_t)-1;
}

/* This thread's caches, or NULL without memory (then nothing is cached). */
static struct fmt_cache *fmt_cache_get(void)
{
	struct fmt_cache *c = fmt_cache_tls;

	if (__builtin_expect(c != NULL, 1))
		return c;
	pthread_once(&fmt_cache_once, fmt_cache_key_init);
	if (fmt_cache_key == (pthread_key_t)-1)
		return NULL;
	c = calloc(1, sizeof(*c));
	if (c && pthread_setspecific(fmt_cache_key, c) != 0) {
		free(c);
		c = NULL;
	}
	fmt_cache_tls = c;
	return c;
}

/* The plan's copy of field @f: its layout if fmt_put_value() would print an integer */
static struct fmt_int fmt_int_of(const struct fdr_abi_field *f)
{
	struct fmt_int r = { 0, 0, 0 };
	struct fdr_abi_field fc = *f; /* one read of the shared entry */

	if (fmt_is_string(&fc) || fc.kind == FDR_KIND_BYTES)
		return r;
	if (fc.size != 1 && fc.size != 2 && fc.size != 4 && fc.size != 8)
		return r;
	r.offset = fc.offset;
	r.size = (uint8_t)fc.size;
	r.is_signed = fc.is_signed != 0;
	return r;
}

/* fmt_put_value() of an integer field through its plan copy: the same text */
static inline char *fmt_put_int(char *d, const struct fmt_int *fi, const unsigned char *p)
{
	int64_t v = fmt_load_int(p + fi->offset, fi->size, fi->is_signed);

	return fi->is_signed ? fb_put_s64(d, v) : fb_put_u64(d, (uint64_t)v);
}

static const struct fmt_plan *fmt_plan_get(struct fmt_cache *cache,
					   const struct fdr_abi_control *ctl, uint32_t id)
{
	struct fmt_plan *pl = &cache->plans[id % FMT_PLANS];
	const struct fdr_abi_event *e;
	uint32_t i;

	/* the entry must belong to this control block before it is looked at */
	if (pl->e && pl->ctl == ctl && pl->id == id &&
	    (const void *)pl->e >= (const void *)ctl->events &&
	    (const void *)pl->e < (const void *)(ctl->events + FDR_MAX_EVENTS) && pl->e->id == id &&
	    pl->e->state == FDR_EVENT_READY && pl->e->layout_hash == pl->layout_hash)
		return pl;
	e = fdr_event_by_id(ctl, id);
	if (!e)
		return NULL;
	memset(pl, 0, sizeof(*pl));
	pl->ctl = ctl;
	pl->e = e;
	pl->id = id;
	pl->layout_hash = e->layout_hash;
	pl->nf = fmt_nr_fields(e);
	pl->name_len = (uint8_t)strnlen(e->name, FDR_NAME_LEN);
	memcpy(pl->name, e->name, pl->name_len);
	memcpy(pl->name + pl->name_len, ": ", 2);
	pl->name_len += 2;
	for (i = 0; i < pl->nf; i++) {
		size_t n = strnlen(e->fields[i].name, FDR_FIELD_NAME_LEN), k = 0;

		if (i)
			pl->lit[i][k++] = ' ';
		memcpy(pl->lit[i] + k, e->fields[i].name, n);
		pl->lit[i][k + n] = '=';
		pl->lit_len[i] = (uint8_t)(k + n + 1);
		pl->ints[i] = fmt_int_of(&e->fields[i]);
	}
	return pl;
}

/**
 * fdr_format_body - the part of a record line after "NAME: "
 * @e: the event (registry entry)
 * @p, @len: the payload, common header included
 */
int fdr_format_body(const struct fdr_abi_event *e, const unsigned char *p, uint32_t len,
		    struct fdr_buf *b)
{
	uint32_t i, nf = fmt_nr_fields(e);
	int ret = 0;

	if (e->probe)
		return fdr_probe_format_body(e, p, len, b);
	if (e->print_fmt[0]) {
		const char *f = e->print_fmt,
			   *end = e->print_fmt + strnlen(e->print_fmt, FDR_PRINT_FMT_LEN);
		uint32_t arg = 0, nargs = e->nr_print_args < FDR_PRINT_ARGS_MAX ?
						  e->nr_print_args :
						  FDR_PRINT_ARGS_MAX;

		while (f < end && !ret) {
			const char *pc = memchr(f, '%', (size_t)(end - f)), *q;

			if (!pc) {
				ret = fb_add(b, f, (size_t)(end - f));
				break;
			}
			ret = fb_add(b, f, (size_t)(pc - f));
			if (pc + 1 < end && pc[1] == '%') {
				ret |= fb_add(b, "%", 1);
				f = pc + 2;
				continue;
			}
			q = pc + 1;
			while (q < end && strchr("-+ #0123456789.hlLqjzt", *q))
				q++;
			if (q >= end || !strchr("diuxXocsp", *q)) {
				ret |= fb_add(b, pc, (size_t)(q - pc));
				f = q;
				continue;
			}
			{
				const struct fdr_abi_field *fld = NULL;
				/* read once: @e may be shared memory */
				uint8_t pa = arg < nargs ? e->print_args[arg] : 0xff;

				if (pa < nf)
					fld = &e->fields[pa];
				arg++;
				ret |= fmt_conv(pc, (size_t)(q - pc), *q, fld, p, len, b);
			}
			f = q + 1;
		}
		return ret ? -ENOMEM : 0;
	}
	for (i = 0; i < nf && !ret; i++) {
		const char *fname = e->fields[i].name;

		if (i)
			ret |= fb_add(b, " ", 1);
		ret |= fb_add(b, fname, strnlen(fname, FDR_FIELD_NAME_LEN));
		ret |= fb_add(b, "=", 1);
		ret |= fmt_value_default(&e->fields[i], p, len, b);
	}
	return ret ? -ENOMEM : 0;
}

/*
 * The built-in ftrace events print as the kernel prints them: "tracing_mark_write:
 * TEXT" and "<user stack trace>" lines. Returns 1 when @e is one of them (printed,
 * newline included), 0 when not, or a negative errno.
 */
static int fmt_builtin(const struct fdr_abi_event *e, const unsigned char *payload, uint32_t len,
		       struct fdr_buf *b)
{
	int ret = 0;

	if ((e->id != FDR_EVENT_ID_PRINT && e->id != FDR_EVENT_ID_USER_STACK) ||
	    strncmp(e->system, "ftrace", FDR_NAME_LEN) != 0)
		return 0;
	if (e->id == FDR_EVENT_ID_PRINT) {
		const unsigned char *t = payload + 16;
		uint32_t n = len > 16 ? (uint32_t)strnlen((const char *)t, len - 16) : 0;

		/* the text carries its own newline; an embedded NUL cuts it, as in the kernel */
		ret |= fb_add(b, "tracing_mark_write: ", 20);
		ret |= fb_add(b, t, n);
		return ret ? -ENOMEM : 1;
	}
	if (e->id == FDR_EVENT_ID_USER_STACK) {
		uint32_t k;

		/* the kernel's user stack lines: " =>  <%016lx>" per address */
		ret |= fb_add(b, "<user stack trace>\n", 19);
		for (k = 0; k < FDR_STACK_DEPTH && 16 + 8 * (k + 1) <= len; k++) {
			uint64_t ip;

			memcpy(&ip, payload + 16 + 8 * k, 8);
			if (ip)
				ret |= fdr_buf_printf(b, " =>  <%016" PRIx64 ">\n", ip);
		}
		return ret ? -ENOMEM : 1;
	}
	return 0;
}

/**
 * fdr_format_event_line - "NAME: BODY\n" of a record of event @e, as the kernel's
 * trace file shows it after the timestamp (any event description, any source)
 */
int fdr_format_event_line(const struct fdr_abi_event *e, const unsigned char *payload, uint32_t len,
			  struct fdr_buf *b)
{
	int ret = fmt_builtin(e, payload, len, b);

	if (ret)
		return ret < 0 ? ret : 0;
	ret = fb_add(b, e->name, strnlen(e->name, FDR_NAME_LEN));
	ret |= fb_add(b, ": ", 2);
	ret |= fdr_format_body(e, payload, len, b);
	ret |= fb_add(b, "\n", 1);
	return ret ? -ENOMEM : 0;
}

/* fb_put_ts(), the second's part copied from @cs while the second stays the same */
static inline char *fmt_put_ts_cached(char *d, struct fmt_sec *cs, uint32_t clock, uint64_t ts)
{
	uint64_t sec;

	if (!fdr_clock_is_ns(clock))
		return fb_put_ts(d, clock, ts);
	ts += 500; /* rounded to the microsecond, as fb_put_ts() does */
	sec = ts / 1000000000u;
	if (cs->sec != sec || !cs->len) {
		char *e = fb_put_ts(cs->text, clock, sec * 1000000000u);

		cs->len = (uint32_t)(e - cs->text) - 6; /* " %5lu." without the ".000000" digits */
		cs->sec = sec;
	}
	memcpy(d, cs->text, sizeof(cs->text)); /* room: the caller reserved 64 */
	return fb_put_usec(d + cs->len, ts - sec * 1000000000u);
}

/* Build @tk, the "%16s-%-7d " column of @pid whose cmdline slot read as @sl. */
static void fmt_task_build(struct fmt_task *tk, int32_t pid, const struct comm_slot *sl)
{
	const char *name = comm_name(pid, sl);
	struct fdr_buf t = { tk->text, 0, sizeof(tk->text) };
	char tmp[24], *d = fb_digits(pid < 0 ? -(uint64_t)(int64_t)pid : (uint64_t)pid,
				     tmp + sizeof(tmp));

	if (pid < 0)
		*--d = '-';
	/* fits: a name is under FDR_COMM_LEN; 16 + 1 + 11 + 1 < sizeof(text), t never grows */
	fb_pad(&t, name, strlen(name), 16, 0);
	fb_add(&t, "-", 1);
	fb_pad(&t, d, (size_t)(tmp + sizeof(tmp) - d), 7, 1);
	fb_add(&t, " ", 1);
	tk->pid = pid;
	tk->slot = *sl;
	tk->len = (uint32_t)t.len;
}

/**
 * fdr_format_record - one line of trace / trace_pipe output for a record
 * ("%16s-%-7d [%03d] ..... %5lu.%06lu: NAME: BODY\n", as the kernel prints it)
 */
int fdr_format_record(struct fdr_session *s, uint32_t inst, const struct fdr_record *rec,
		      struct fdr_buf *b)
{
	const struct fdr_abi_control *ctl = fdr_session_control(s);
	const struct fdr_abi_instance *in = &ctl->instances[inst];
	const struct fdr_abi_event *e;
	const struct fmt_plan *plan;
	struct fmt_cache *cache = fmt_cache_get();
	struct fdr_common c;
	int ret = 0, builtin;

	if (rec->len < sizeof(c))
		return 0;
	memcpy(&c, rec->payload, sizeof(c));
	if (in->options & FDR_OPT_CONTEXT_INFO) {
		struct fmt_task none,
			*tk = cache ? &cache->tasks[(uint32_t)c.pid % FMT_TASKS] : &none;
		struct comm_slot sl;

		none.len = 0; /* only this is read before the entry is built */
		comm_slot_read(ctl, c.pid, &sl);
		/* "%16s-%-7d ", remembered per pid while its cmdline slot stays the same */
		if (tk->len == 0 || tk->pid != c.pid || tk->slot.pid != sl.pid ||
		    tk->slot.w[0] != sl.w[0] || tk->slot.w[1] != sl.w[1])
			fmt_task_build(tk, c.pid, &sl);
		ret |= fb_add(b, tk->text, tk->len);
		if (in->options & FDR_OPT_RECORD_TGID) {
			const struct fdr_abi_cmdline *cl =
				&ctl->cmdlines[(uint32_t)c.pid % FDR_CMDLINE_SLOTS];
			uint32_t tgid = cl->tgid;

			if (__atomic_load_n(&cl->pid, __ATOMIC_ACQUIRE) == (uint32_t)c.pid && tgid)
				ret |= fdr_buf_printf(b, "(%7u) ", tgid);
			else
				ret |= fdr_buf_printf(b, "(-------) ");
		}
		if (fdr_buf_reserve(b, 64))
			return -ENOMEM;
		{
			char *d = b->data + b->len;

			*d++ = '[';
			d = fb_put_zpad(d, rec->cpu, 3);
			*d++ = ']';
			*d++ = ' ';
			if (in->options & FDR_OPT_IRQ_INFO) {
				memcpy(d, ".....", 5);
				if (c.preempt_count)
					d[3] = "0123456789abcdef"[c.preempt_count & 0xf];
				d += 5;
			}
			d = cache ? fmt_put_ts_cached(d, &cache->sec, in->clock, rec->ts) :
				    fb_put_ts(d, in->clock, rec->ts);
			*d++ = ':';
			*d++ = ' ';
			*d = '\0';
			b->len = (size_t)(d - b->data);
		}
	}
	if (!cache) {
		e = fdr_event_by_id(ctl, c.type);
		if (!e)
			return fdr_buf_printf(b, "type: %u\n", c.type) | ret ? -ENOMEM : 0;
		return fdr_format_event_line(e, rec->payload, rec->len, b) | ret ? -ENOMEM : 0;
	}
	plan = fmt_plan_get(cache, ctl, c.type);
	if (!plan)
		return fdr_buf_printf(b, "type: %u\n", c.type) | ret ? -ENOMEM : 0;
	e = plan->e;
	builtin = fmt_builtin(e, rec->payload, rec->len, b);
	if (builtin)
		return builtin < 0 || ret ? -ENOMEM : 0;
	if (e->print_fmt[0] || e->probe) {
		ret |= fb_add(b, plan->name, plan->name_len);
		ret |= fdr_format_body(e, rec->payload, rec->len, b);
		ret |= fb_add(b, "\n", 1);
		return ret ? -ENOMEM : 0;
	}
	/* the default print, unchecked after one reservation for the worst case */
	if (ret || fdr_buf_reserve(b, plan->name_len + 2 +
					      plan->nf * (FDR_FIELD_NAME_LEN + 2 +
							  FMT_VALUE_MAX(rec->len))))
		return -ENOMEM;
	{
		char *d = b->data + b->len;
		uint32_t i;

		memcpy(d, plan->name, plan->name_len);
		d += plan->name_len;
		for (i = 0; i < plan->nf; i++) {
			const struct fmt_int *fi = &plan->ints[i];

			memcpy(d, plan->lit[i], plan->lit_len[i]);
			d += plan->lit_len[i];
			if (fi->size && (uint32_t)fi->offset + fi->size <= rec->len)
				d = fmt_put_int(d, fi, rec->payload);
			else
				d = fmt_put_value(d, &e->fields[i], rec->payload, rec->len);
		}
		*d++ = '\n';
		*d = '\0';
		b->len = (size_t)(d - b->data);
	}
	return 0;
}
