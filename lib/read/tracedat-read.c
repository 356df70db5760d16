// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * tracedat-read.c - trace-cmd's trace.dat files (versions 6 and 7, without
 * compression) as a struct fdr_trace source.
 *
 * The format is trace-cmd's (Documentation/trace-cmd/trace-cmd.dat.v6.txt and
 * .v7.txt in trace-cmd), and that is the contract: the kernel's own files and
 * the ones fdr writes are read the same way. All numbers are in the file's byte
 * order; we read little-endian files and refuse big-endian ones.
 *
 *   v6:  magic "\027\010\104tracing" "6\0" endian(1) long_size(1) page_size(4)
 *        "header_page\0" size(8) text  "header_event\0" size(8) text
 *        ftrace formats: count(4) { size(8) text }
 *        event formats:  nr_systems(4) { "sys\0" count(4) { size(8) text } }
 *        kallsyms: size(4) text   printk: size(4) text   cmdlines: size(8) text
 *        nr_cpus(4)  ["options  \0" { id(2) size(4) data } id 0]
 *        "flyrecord\0" nr_cpus x { offset(8) size(8) } [trace_clock: size(8) text]
 *   v7:  magic "7\0" endian long_size page_size "none\0" "\0" options_offset(8)
 *        then sections, each: id(2) flags(2) description(4) size(8) data.
 *        Options sections (id 0) hold { id(2) size(4) data } and end with DONE
 *        (id 0), whose data is the offset of the next options section or 0.
 *        Options 16..21 give the offsets of the header, ftrace formats, event
 *        formats, kallsyms, printk and cmdlines sections (same contents as v6);
 *        BUFFER (3) describes one instance's data: offset(8) "name\0"
 *        "clock\0" page_size(4) nr_cpus(4) { cpu(4) offset(8) size(8) }.
 *
 * A CPU's data is a run of pages in the kernel's ring-buffer page format (the
 * one trace_pipe_raw gives, see fdr_reader_raw_page()):
 *
 *   +-----------+-------------------+------------------------------+---------+
 *   | ts (u64)  | commit (4/8 bytes)| records ...                  | [lost]  |
 *   +-----------+-------------------+------------------------------+---------+
 *                 bits 0-26: bytes of records; bit 31: events were lost before
 *                 this page; bit 30: their count (a long) follows the records
 *
 *   record header (u32): type_len:5 | time_delta:27
 *     1..28  data of type_len * 4 bytes follows
 *     0      u32 length (data bytes + 4) follows, then the data
 *     29     padding: delta 0 ends the page, else u32 length, then that many bytes
 *     30     time extend: u32 high bits; delta += high << 27
 *     31     absolute time stamp: u32 high bits; ts = high << 27 | delta
 *
 * The page's ts plus the deltas give each record's time. CPUs are merged by a
 * linear scan for the smallest next timestamp (ties: lower CPU first).
 *
 * Every byte of the file is hostile: each offset and length is checked against
 * the file and its section before it is used, sizes are never trusted to
 * allocate, and a malformed file gives -EINVAL with "trace.dat: expected X,
 * found Y at offset Z". The pages are walked once at open to check them, so a
 * broken file is refused up front; the iterator checks again anyway, since a
 * mapped file can change under us.
 */
#define _GNU_SOURCE
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "tracedat.h"

#define TD_MAGIC "\027\010\104tracing"
#define TD_MAGIC_LEN 10
#define TD_MAX_OPTION_SECTIONS 64
#define TD_MAX_BUFFERS 256
#define TD_MAX_CPU 65536 /* cpu ids at or above are refused */
#define TD_COMMIT_MASK ((1u << 27) - 1)
#define TD_MISSED_EVENTS (1ull << 31)
#define TD_MISSED_STORED (1ull << 30)
#define TD_TS_MSB (0x1full << 59)
#define TD_LOST_UNKNOWN UINT64_MAX

/* A window of the file: reads are checked against [start, end). */
struct td_in {
	const unsigned char *p; /* the whole file */
	uint64_t start, end;
	struct fdr_buf *err;
	int *failed;
};

struct td_cpu_data {
	uint32_t cpu;
	uint64_t off, size;
};

struct td_buffer {
	char name[FDR_NAME_LEN];
	char clock[32];
	uint64_t off; /* v6: where "flyrecord" and the table are; v7: the section */
	uint32_t page_size;
	uint32_t nr_cpus;
	struct td_cpu_data *cpus;
	int latency;
};

/* Decoding state of one CPU's pages. */
struct td_cursor {
	uint32_t cpu;
	uint64_t off, end; /* the CPU's data in the file */
	uint32_t page_size; /* of its buffer */
	uint64_t page; /* current page; == end when done */
	uint64_t pos, data_end; /* next record header; end of the page's records */
	uint64_t ts; /* raw, the last record's */
	uint64_t lost; /* pending for the next record */
	int started;
};

struct td_cpu {
	struct td_cursor cur;
	uint32_t buf; /* index into td_src.sel[] */
	int have; /* rec holds this CPU's next record */
	struct fdr_trace_rec rec;
};

struct td_cmdline {
	int32_t pid;
	char comm[FDR_COMM_LEN];
};

struct td_src {
	const unsigned char *data;
	size_t size;
	void *map; /* mmap'd by fdr_trace_open_file(); NULL when borrowed */
	uint32_t version, long_size, page_size, commit_size, hdr_size;
	struct fdr_abi_event *events;
	size_t nr_events, cap_events;
	uint32_t *id_map; /* common_type -> event index + 1 */
	struct td_cmdline *cmdlines;
	size_t nr_cmdlines;
	struct td_buffer bufs[TD_MAX_BUFFERS];
	uint32_t nr_bufs;
	int have_top; /* bufs[0] is the top instance */
	int all_buffers; /* FDR_TRACE_ALL_BUFFERS: every buffer's CPUs, merged */
	struct td_buffer *sel[TD_MAX_BUFFERS]; /* the buffers read: sel[0] first */
	uint32_t nr_sel;
	struct td_cpu *cpus;
	uint32_t nr_cpus; /* entries of cpus[]: the CPUs with data */
	uint32_t hdr_cpus; /* v6: the CPU count of the header */
	uint64_t sec_off[TD_OPT_NR_SECTIONS]; /* v7 section offsets, 0 = absent */
	char clock_opt[32]; /* from TRACECLOCK */
	int have_clock_opt;
	uint32_t cpucount;
	int64_t ts_offset; /* OFFSET option */
	uint32_t tsc_mult, tsc_shift;
	uint64_t fdr_real0, fdr_hz; /* TD_OPT_FDR_CLOCK; 0 if absent */
	int failed;
};

/* ---- errors and reads ------------------------------------------------------------------ */

static int td_fail(const struct td_in *in, uint64_t off, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int td_fail(const struct td_in *in, uint64_t off, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	if (in->failed && *in->failed)
		return -EINVAL; /* the first error is the one worth showing */
	if (in->failed)
		*in->failed = 1;
	if (!in->err)
		return -EINVAL;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fdr_buf_printf(in->err, "trace.dat: %s at offset %" PRIu64, msg, off);
	return -EINVAL;
}

/* Is [off, off + n) inside the window? (no overflow) */
static int td_has(const struct td_in *in, uint64_t off, uint64_t n)
{
	return off >= in->start && off <= in->end && n <= in->end - off;
}

static int td_u16(const struct td_in *in, uint64_t off, uint16_t *v, const char *what)
{
	uint16_t x;

	if (!td_has(in, off, 2))
		return td_fail(in, off, "expected %s (2 bytes), found the end of the data", what);
	memcpy(&x, in->p + off, 2);
	*v = le16toh(x);
	return 0;
}

static int td_u32(const struct td_in *in, uint64_t off, uint32_t *v, const char *what)
{
	uint32_t x;

	*v = 0; /* defined on every path: callers read it only on success */
	if (!td_has(in, off, 4))
		return td_fail(in, off, "expected %s (4 bytes), found the end of the data", what);
	memcpy(&x, in->p + off, 4);
	*v = le32toh(x);
	return 0;
}

static int td_u64(const struct td_in *in, uint64_t off, uint64_t *v, const char *what)
{
	uint64_t x;

	*v = 0;
	if (!td_has(in, off, 8))
		return td_fail(in, off, "expected %s (8 bytes), found the end of the data", what);
	memcpy(&x, in->p + off, 8);
	*v = le64toh(x);
	return 0;
}

static uint32_t td_get32(const unsigned char *p)
{
	uint32_t x;

	memcpy(&x, p, 4);
	return le32toh(x);
}

static uint64_t td_get64(const unsigned char *p)
{
	uint64_t x;

	memcpy(&x, p, 8);
	return le64toh(x);
}

/* A NUL-terminated string at @off; *len excludes the NUL. */
static int td_str(const struct td_in *in, uint64_t off, const char **s, size_t *len,
		  const char *what)
{
	const unsigned char *nul;

	*s = "";
	*len = 0;
	if (!td_has(in, off, 1))
		return td_fail(in, off, "expected %s, found the end of the data", what);
	nul = memchr(in->p + off, 0, in->end - off);
	if (!nul)
		return td_fail(in, off, "expected %s ending in a NUL byte, found none", what);
	*s = (const char *)in->p + off;
	*len = (size_t)(nul - (in->p + off));
	return 0;
}

/* A u64 size then that many bytes: *text, *len; *next after them. */
static int td_sized(const struct td_in *in, uint64_t off, unsigned size_bytes, const char **text,
		    uint64_t *len, uint64_t *next, const char *what)
{
	uint64_t n = 0;
	uint32_t n32 = 0;
	int ret;

	*text = "";
	*len = 0;
	*next = off;
	if (size_bytes == 4) {
		ret = td_u32(in, off, &n32, what);
		n = n32;
	} else {
		ret = td_u64(in, off, &n, what);
	}
	if (ret)
		return ret;
	off += size_bytes;
	if (!td_has(in, off, n))
		return td_fail(in, off - size_bytes,
			       "expected %s of %" PRIu64 " bytes, found %" PRIu64 " bytes left",
			       what, n, off <= in->end ? in->end - off : 0);
	*text = (const char *)in->p + off;
	*len = n;
	*next = off + n;
	return 0;
}

/* ---- event format files ---------------------------------------------------------------- */

/* Decimal number at *p (after spaces); advances *p. Returns 0 or -1 (none, overflow). */
static int fmt_num(const char **p, const char *end, uint64_t max, uint64_t *v)
{
	const char *s = *p;
	uint64_t n = 0;
	int digits = 0;

	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	while (s < end && *s >= '0' && *s <= '9') {
		n = n * 10 + (uint64_t)(*s - '0');
		if (n > max)
			return -1;
		s++;
		digits++;
	}
	if (!digits)
		return -1;
	*p = s;
	*v = n;
	return 0;
}

/* "key:" followed by a number, searched in [p, end). */
static int fmt_key(const char *p, const char *end, const char *key, uint64_t max, uint64_t *v)
{
	size_t klen = strlen(key);
	const char *s;

	for (s = p; s + klen <= end; s++) {
		if (memcmp(s, key, klen) == 0 &&
		    (s == p || s[-1] == '\t' || s[-1] == ' ' || s[-1] == ';')) {
			s += klen;
			return fmt_num(&s, end, max, v);
		}
	}
	return -1;
}

static int fmt_is_ident(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_';
}

static const char *fmt_skip_ws(const char *s, const char *end)
{
	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	return s;
}

/* Copy [s, e) without surrounding blanks into @buf (NUL-terminated, cut to fit). */
static void fmt_copy_trim(char *buf, size_t size, const char *s, const char *e)
{
	size_t n;

	s = fmt_skip_ws(s, e);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
		e--;
	n = (size_t)(e - s) < size - 1 ? (size_t)(e - s) : size - 1;
	memcpy(buf, s, n);
	buf[n] = 0;
}

/*
 * One "field:TYPE NAME;\toffset:N;\tsize:N;\tsigned:N;" line (from after
 * "field:" to the line's end). Adds the field to @e unless it is a common_*
 * field or one fdr cannot show. Returns 0, or 1 with @why for a malformed line.
 */
static int fmt_field(const char *system, const char *s, const char *end, struct fdr_abi_event *e,
		     const char **why)
{
	const char *semi = memchr(s, ';', (size_t)(end - s)), *decl_end, *name_s, *name_e,
		   *arr = NULL;
	char type[128], elem[128];
	uint64_t off, size, sgn = 0;
	struct fdr_abi_field *f;
	uint8_t kind;
	size_t nlen;

	if (!semi) {
		*why = "a field line without ';'";
		return 1;
	}
	if (fmt_key(semi, end, "offset:", UINT16_MAX, &off) ||
	    fmt_key(semi, end, "size:", UINT16_MAX, &size)) {
		*why = "a field without offset or size (or one above 65535)";
		return 1;
	}
	if (fmt_key(semi, end, "signed:", 1, &sgn))
		sgn = 0;
	if (off + size > UINT16_MAX) {
		*why = "a field ending beyond 65535 bytes";
		return 1;
	}
	decl_end = semi;
	while (decl_end > s && (decl_end[-1] == ' ' || decl_end[-1] == '\t'))
		decl_end--;
	name_e = decl_end;
	if (name_e > s && name_e[-1] == ']') {
		arr = name_e - 1;
		while (arr > s && *arr != '[')
			arr--;
		if (*arr != '[') {
			*why = "a field with an unmatched ']'";
			return 1;
		}
		name_e = arr;
	}
	name_s = name_e;
	while (name_s > s && fmt_is_ident(name_s[-1]))
		name_s--;
	nlen = (size_t)(name_e - name_s);
	if (!nlen) {
		*why = "a field without a name";
		return 1;
	}
	if (nlen >= 7 && memcmp(name_s, "common_", 7) == 0)
		return 0; /* the common header: struct fdr_common */
	fmt_copy_trim(type, sizeof(type), s, name_s);
	if (nlen >= FDR_FIELD_NAME_LEN || e->nr_fields >= FDR_MAX_FIELDS)
		return 0; /* not representable: left out of the description */
	snprintf(elem, sizeof(elem), "%s", type);
	if (strncmp(elem, "const ", 6) == 0)
		memmove(elem, elem + 6, strlen(elem + 6) + 1);

	if (strncmp(type, "__data_loc", 10) == 0) {
		if (size != 4)
			return 0;
		kind = strcmp(type, "__data_loc char[]") == 0 ||
				       strcmp(type, "__data_loc const char[]") == 0 ?
			       FDR_KIND_STRING :
			       FDR_KIND_BYTES;
	} else if (strncmp(type, "__rel_loc", 9) == 0) {
		return 0; /* relative locations: fdr has no kind for them */
	} else if (arr && arr + 2 == decl_end) { /* NAME[] */
		if (strcmp(elem, "char") != 0)
			return 0;
		kind = FDR_KIND_TAIL_CHARS;
	} else if (arr) { /* NAME[N] */
		const char *q = arr + 1;
		uint64_t n;

		if (fmt_num(&q, decl_end - 1, UINT16_MAX, &n) || q != decl_end - 1 || !n)
			return 0; /* [len] and the like: not a fixed array */
		if (strcmp(elem, "char") == 0 || strcmp(elem, "signed char") == 0) {
			if (size != n)
				return 0;
			kind = FDR_KIND_CHARS;
		} else if (strcmp(system, "ftrace") == 0 && strcmp(elem, "unsigned long") == 0 &&
			   size == n * 8) {
			kind = FDR_KIND_ULONG_ARRAY; /* user_stack's caller[] */
		} else {
			return 0;
		}
	} else if (strcmp(type, "bool") == 0 && size == 1) {
		kind = FDR_KIND_BOOL;
	} else if (size == 1 || size == 2 || size == 4 || size == 8) {
		kind = FDR_KIND_INT;
		if (strcmp(system, "ftrace") == 0 && nlen == 2 && memcmp(name_s, "ip", 2) == 0 &&
		    size == 8)
			kind = FDR_KIND_ULONG_IP;
	} else {
		return 0;
	}
	f = &e->fields[e->nr_fields++];
	memset(f, 0, sizeof(*f));
	memcpy(f->name, name_s, nlen);
	memcpy(f->type, type, strnlen(type, sizeof(f->type) - 1));
	f->offset = (uint16_t)off;
	f->size = (uint16_t)size;
	f->is_signed = sgn ? 1 : 0;
	f->kind = kind;
	if (kind != FDR_KIND_TAIL_CHARS && off + size > e->payload_size)
		e->payload_size = (uint32_t)(off + size);
	return 0;
}

static int fmt_find_field(const struct fdr_abi_event *e, const char *name, size_t n)
{
	uint32_t i;

	for (i = 0; i < e->nr_fields; i++)
		if (strnlen(e->fields[i].name, FDR_FIELD_NAME_LEN) == n &&
		    memcmp(e->fields[i].name, name, n) == 0)
			return (int)i;
	return -1;
}

/* "PREFIXident)" -> the field index, or -1. @a has no blanks. */
static int fmt_arg_call(const struct fdr_abi_event *e, const char *a, size_t n, const char *pre)
{
	size_t pl = strlen(pre);

	if (n <= pl + 1 || memcmp(a, pre, pl) != 0 || a[n - 1] != ')')
		return -1;
	return fmt_find_field(e, a + pl, n - pl - 1);
}

/* One print argument, blanks removed, as a field index; -1 if not a plain field. */
static int fmt_arg(const struct fdr_abi_event *e, const char *a, size_t n, int *hex)
{
	int i;

	*hex = 0;
	if (n > 5 && memcmp(a, "REC->", 5) == 0) {
		i = fmt_find_field(e, a + 5, n - 5);
		return i >= 0 && e->fields[i].kind != FDR_KIND_BYTES &&
				       e->fields[i].kind != FDR_KIND_ULONG_ARRAY ?
			       i :
			       -1;
	}
	i = fmt_arg_call(e, a, n, "__get_str(");
	if (i >= 0)
		return e->fields[i].kind == FDR_KIND_STRING ? i : -1;
	/* fdr's own files: __print_hex_str(__get_dynamic_array(X),__get_dynamic_array_len(X)) */
	if (n > 16 && memcmp(a, "__print_hex_str(", 16) == 0 && a[n - 1] == ')') {
		const char *comma = memchr(a, ',', n);
		char second[FDR_FIELD_NAME_LEN + 32];

		if (!comma)
			return -1;
		i = fmt_arg_call(e, a + 16, (size_t)(comma - (a + 16)), "__get_dynamic_array(");
		if (i < 0 || e->fields[i].kind != FDR_KIND_BYTES)
			return -1;
		snprintf(second, sizeof(second), "__get_dynamic_array_len(%s))", e->fields[i].name);
		if (strlen(second) != (size_t)(a + n - comma - 1) ||
		    memcmp(second, comma + 1, strlen(second)) != 0)
			return -1;
		*hex = 1;
		return i;
	}
	return -1;
}

/*
 * The print fmt line: "FORMAT", ARG, ... Kept as fdr's print_fmt + print_args
 * only when fdr_format_body() prints it as the kernel would: every argument a
 * plain field (REC->x, __get_str(x)), every conversion one of %d %i %u %x %X %o
 * %c %s %p with flags, width, precision and length, the types matching. Anything
 * else leaves print_fmt empty: the default name=value print.
 */
static void fmt_print(const char *s, const char *end, struct fdr_abi_event *e)
{
	char fmt[FDR_PRINT_FMT_LEN];
	uint8_t args[FDR_PRINT_ARGS_MAX];
	int hexes[FDR_PRINT_ARGS_MAX];
	size_t n = 0, nargs = 0, k, conv = 0;

	s = fmt_skip_ws(s, end);
	if (s >= end || *s != '"')
		return;
	for (s++; s < end && *s != '"'; s++) {
		char c = *s;

		if (c == '\\') {
			if (++s >= end)
				return;
			switch (*s) {
			case 'n':
				c = '\n';
				break;
			case 't':
				c = '\t';
				break;
			case '\\':
			case '"':
				c = *s;
				break;
			default:
				return;
			}
		} else if (c == '\n') {
			return;
		}
		if (n + 1 >= sizeof(fmt))
			return;
		fmt[n++] = c;
	}
	if (s >= end)
		return;
	fmt[n] = 0;
	for (s++;;) {
		char a[160];
		size_t an = 0;
		int depth = 0, idx, hex;

		s = fmt_skip_ws(s, end);
		if (s >= end || *s == '\n' || *s == 0)
			break;
		if (*s != ',' || nargs >= FDR_PRINT_ARGS_MAX)
			return;
		for (s++; s < end && *s != '\n' && *s != 0 && (depth || *s != ','); s++) {
			if (*s == '"' || *s == '\'' || *s == '?')
				return;
			if (*s == '(')
				depth++;
			else if (*s == ')' && --depth < 0)
				return;
			if (*s == ' ' || *s == '\t')
				continue;
			if (an + 1 >= sizeof(a))
				return;
			a[an++] = *s;
		}
		idx = fmt_arg(e, a, an, &hex);
		if (idx < 0)
			return;
		hexes[nargs] = hex;
		args[nargs++] = (uint8_t)idx;
	}
	/* the conversions, scanned as fdr_format_body() scans them */
	for (k = 0; k < n; k++) {
		const struct fdr_abi_field *f;
		char c;

		if (fmt[k] != '%')
			continue;
		if (k + 1 < n && fmt[k + 1] == '%') {
			k++;
			continue;
		}
		for (k++; k < n && strchr("-+ #0123456789.hlLqjzt", fmt[k]); k++)
			;
		if (k >= n || !strchr("diuxXocsp", fmt[k]) || conv >= nargs)
			return;
		c = fmt[k];
		if (c == 'p' && k + 1 < n && fmt_is_ident(fmt[k + 1]))
			return; /* %pS, %pM, ...: kernel extensions */
		f = &e->fields[args[conv]];
		if (c == 's') {
			if (f->kind != FDR_KIND_STRING && f->kind != FDR_KIND_CHARS &&
			    f->kind != FDR_KIND_TAIL_CHARS &&
			    !(f->kind == FDR_KIND_BYTES && hexes[conv]))
				return;
		} else if (f->kind != FDR_KIND_INT && f->kind != FDR_KIND_BOOL &&
			   f->kind != FDR_KIND_ULONG_IP) {
			return;
		}
		conv++;
	}
	if (conv != nargs)
		return;
	memcpy(e->print_fmt, fmt, n + 1);
	memcpy(e->print_args, args, nargs);
	e->nr_print_args = (uint8_t)nargs;
}

static uint64_t fmt_hash(uint64_t h, const void *p, size_t n)
{
	const unsigned char *c = p;

	while (n--)
		h = (h ^ *c++) * 0x100000001b3ull;
	return h;
}

/**
 * fdr_tracedat_parse_format - one kernel format file as an fdr event description
 * @system: the event's system ("ftrace" for the ftrace section)
 * @text, @len: the format file (need not be NUL-terminated)
 * @e: filled on success
 * @why: on 1, what was wrong (a static string)
 *
 * Fields fdr has no kind for (arrays other than char, __rel_loc, odd sizes)
 * and those past FDR_MAX_FIELDS are left out; the others keep their offsets.
 * Returns 0, or 1 when the text does not describe an event.
 */
int fdr_tracedat_parse_format(const char *system, const char *text, size_t len,
			      struct fdr_abi_event *e, const char **why)
{
	const char *p = text, *end = text + len, *pf = NULL;
	int have_name = 0, have_id = 0;
	uint64_t h = 0xcbf29ce484222325ull, id;

	*why = "";
	memset(e, 0, sizeof(*e));
	if (strlen(system) >= FDR_NAME_LEN || !system[0]) {
		*why = "a system name longer than 63 bytes";
		return 1;
	}
	snprintf(e->system, sizeof(e->system), "%s", system);
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p)), *le = nl ? nl : end;
		const char *s = fmt_skip_ws(p, le);

		if (memchr(p, 0, (size_t)(le - p))) {
			*why = "a NUL byte in the format text";
			return 1;
		}
		if (!have_name && le - s > 6 && memcmp(s, "name: ", 6) == 0) {
			fmt_copy_trim(e->name, sizeof(e->name), s + 6, le);
			if ((size_t)(le - s - 6) >= FDR_NAME_LEN || !e->name[0]) {
				*why = "an event name empty or longer than 63 bytes";
				return 1;
			}
			have_name = 1;
		} else if (!have_id && le - s > 3 && memcmp(s, "ID:", 3) == 0) {
			const char *q = s + 3;

			if (fmt_num(&q, le, UINT16_MAX, &id)) {
				*why = "an ID that is not a number from 0 to 65535";
				return 1;
			}
			e->id = (uint32_t)id;
			have_id = 1;
		} else if (le - s > 6 && memcmp(s, "field:", 6) == 0) {
			if (fmt_field(system, s + 6, le, e, why))
				return 1;
		} else if (le - s >= 10 && memcmp(s, "print fmt:", 10) == 0) {
			pf = s + 10;
			break;
		}
		p = nl ? nl + 1 : end;
	}
	if (!have_name || !have_id) {
		*why = "no 'name:' or no 'ID:' line";
		return 1;
	}
	if (e->payload_size < sizeof(struct fdr_common))
		e->payload_size = sizeof(struct fdr_common);
	if (pf)
		fmt_print(pf, end, e);
	e->state = FDR_EVENT_READY;
	h = fmt_hash(h, e->fields, sizeof(e->fields[0]) * e->nr_fields);
	h = fmt_hash(h, e->print_fmt, sizeof(e->print_fmt));
	e->layout_hash = h;
	return 0;
}

/* ---- the header sections ---------------------------------------------------------------- */

static int td_add_event(struct td_src *td, const char *system, const char *text, uint64_t len)
{
	struct fdr_abi_event *e;
	const char *why;

	if (td->nr_events == td->cap_events) {
		size_t cap = td->cap_events ? td->cap_events * 2 : 64;
		struct fdr_abi_event *grown = realloc(td->events, cap * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		td->events = grown;
		td->cap_events = cap;
	}
	e = &td->events[td->nr_events];
	if (fdr_tracedat_parse_format(system, text, (size_t)len, e, &why))
		return 0; /* like trace-cmd: an event we cannot parse is left out */
	if (td->id_map[e->id])
		return 0; /* the first description of an id wins */
	td->id_map[e->id] = (uint32_t)++td->nr_events;
	return 0;
}

static int td_header_page(struct td_src *td, const struct td_in *in, uint64_t at, const char *text,
			  uint64_t len)
{
	const char *p = text, *end = text + len;
	uint64_t size = 0, off = 0;

	/* "\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;" */
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p)), *le = nl ? nl : end;
		const char *c = memchr(p, ';', (size_t)(le - p));

		if (c && c - p >= 7 && memcmp(c - 7, " commit", 7) == 0) {
			if (fmt_key(c, le, "offset:", 64, &off) ||
			    fmt_key(c, le, "size:", 64, &size))
				size = 0;
			break;
		}
		p = nl ? nl + 1 : end;
	}
	if (off != 8 || (size != 4 && size != 8))
		return td_fail(in, at,
			       "expected header_page's commit field at offset 8 of size 4 or 8, "
			       "found offset %" PRIu64 " size %" PRIu64,
			       off, size);
	td->commit_size = (uint32_t)size;
	td->hdr_size = 8 + (uint32_t)size;
	return 0;
}

/* header_page and header_event, from @off; *next after them. */
static int td_headers(struct td_src *td, const struct td_in *in, uint64_t off, uint64_t *next)
{
	const char *text;
	uint64_t len;
	int ret;

	if (!td_has(in, off, 12) || memcmp(in->p + off, "header_page", 12) != 0)
		return td_fail(in, off, "expected \"header_page\", found %s",
			       td_has(in, off, 12) ? "something else" : "the end of the data");
	ret = td_sized(in, off + 12, 8, &text, &len, &off, "header_page");
	if (ret)
		return ret;
	ret = td_header_page(td, in, off - len, text, len);
	if (ret)
		return ret;
	if (!td_has(in, off, 13) || memcmp(in->p + off, "header_event", 13) != 0)
		return td_fail(in, off, "expected \"header_event\", found %s",
			       td_has(in, off, 13) ? "something else" : "the end of the data");
	return td_sized(in, off + 13, 8, &text, &len, next, "header_event");
}

static int td_ftrace_formats(struct td_src *td, const struct td_in *in, uint64_t off,
			     uint64_t *next)
{
	uint32_t count = 0, i;
	const char *text;
	uint64_t len;
	int ret = td_u32(in, off, &count, "the number of ftrace formats");

	off += 4;
	for (i = 0; !ret && i < count; i++) {
		ret = td_sized(in, off, 8, &text, &len, &off, "an ftrace format file");
		if (!ret)
			ret = td_add_event(td, "ftrace", text, len);
	}
	*next = off;
	return ret;
}

static int td_event_formats(struct td_src *td, const struct td_in *in, uint64_t off, uint64_t *next)
{
	uint32_t nr_sys = 0, count = 0, i, j;
	const char *text, *sys;
	uint64_t len;
	size_t slen;
	int ret = td_u32(in, off, &nr_sys, "the number of event systems");

	off += 4;
	for (i = 0; !ret && i < nr_sys; i++) {
		ret = td_str(in, off, &sys, &slen, "a system name");
		if (ret)
			break;
		off += slen + 1;
		ret = td_u32(in, off, &count, "the number of events of a system");
		off += 4;
		for (j = 0; !ret && j < count; j++) {
			ret = td_sized(in, off, 8, &text, &len, &off, "an event format file");
			if (!ret)
				ret = td_add_event(td, sys, text, len);
		}
	}
	*next = off;
	return ret;
}

static int td_cmdline_cmp(const void *a, const void *b)
{
	const struct td_cmdline *x = a, *y = b;

	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* saved_cmdlines: "PID COMM\n" lines */
static int td_cmdlines(struct td_src *td, const char *text, uint64_t len)
{
	const char *p = text, *end = text + len;
	size_t cap = 0;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p)), *le = nl ? nl : end, *q = p;
		uint64_t pid;

		if (fmt_num(&q, le, INT32_MAX, &pid) == 0 && q < le && *q == ' ' && q + 1 < le) {
			struct td_cmdline *c;

			if (td->nr_cmdlines == cap) {
				size_t ncap = cap ? cap * 2 : 256;
				struct td_cmdline *grown =
					realloc(td->cmdlines, ncap * sizeof(*grown));

				if (!grown)
					return -ENOMEM;
				td->cmdlines = grown;
				cap = ncap;
			}
			c = &td->cmdlines[td->nr_cmdlines++];
			c->pid = (int32_t)pid;
			fmt_copy_trim(c->comm, sizeof(c->comm), q + 1, le);
			if (memchr(q + 1, 0, (size_t)(le - q - 1)))
				td->nr_cmdlines--; /* a NUL inside: not a name */
		}
		p = nl ? nl + 1 : end;
	}
	if (td->nr_cmdlines)
		qsort(td->cmdlines, td->nr_cmdlines, sizeof(*td->cmdlines), td_cmdline_cmp);
	return 0;
}

/* "[local] global counter" or "local": the name in brackets, else the first word. */
static void td_clock_name(const char *text, size_t len, char *out, size_t size)
{
	const char *end = text + strnlen(text, len), *lb = memchr(text, '[', (size_t)(end - text));
	const char *s = lb ? lb + 1 : fmt_skip_ws(text, end), *e = s;

	while (e < end && *e != ']' && *e != ' ' && *e != '\n' && *e != '\t')
		e++;
	fmt_copy_trim(out, size, s, e);
}

/* Parse a decimal or 0x-hex signed number from option text. */
static int td_opt_number(const char *text, size_t len, long long *v)
{
	char tmp[32], *end;

	if (!len || len >= sizeof(tmp))
		return -1;
	memcpy(tmp, text, len);
	tmp[len] = 0;
	errno = 0;
	*v = strtoll(tmp, &end, 0);
	return errno || end == tmp ? -1 : 0;
}

/* BUFFER: v6 offset + name; v7 adds the clock, page size and the CPU table. */
static int td_opt_buffer(struct td_src *td, const struct td_in *in, uint16_t id, uint64_t off,
			 uint64_t size)
{
	struct td_in w = *in;
	struct td_buffer *b;
	const char *name, *clock;
	size_t nlen, clen;
	uint64_t p, boff = 0;
	uint32_t i, ps = 0, nr = 0;
	int ret;

	w.start = off;
	w.end = off + size;
	ret = td_u64(&w, off, &boff, "a buffer's offset");
	if (!ret)
		ret = td_str(&w, off + 8, &name, &nlen, "a buffer's name");
	if (ret)
		return ret;
	if (nlen >= FDR_NAME_LEN)
		return td_fail(in, off + 8,
			       "expected a buffer name shorter than %d bytes, found %zu",
			       FDR_NAME_LEN, nlen);
	if (td->nr_bufs >= TD_MAX_BUFFERS)
		return td_fail(in, off, "expected at most %d buffers, found more", TD_MAX_BUFFERS);
	if (!nlen && td->have_top)
		return td_fail(in, off, "expected one top buffer, found a second");
	if (!nlen) { /* the top buffer goes first */
		memmove(&td->bufs[1], &td->bufs[0], td->nr_bufs * sizeof(td->bufs[0]));
		b = &td->bufs[0];
		td->have_top = 1;
	} else {
		b = &td->bufs[td->nr_bufs];
	}
	td->nr_bufs++;
	memset(b, 0, sizeof(*b));
	memcpy(b->name, name, nlen);
	b->off = boff;
	if (td->version < 7)
		return 0;
	p = off + 8 + nlen + 1;
	ret = td_str(&w, p, &clock, &clen, "a buffer's trace clock");
	if (ret)
		return ret;
	td_clock_name(clock, clen, b->clock, sizeof(b->clock));
	p += clen + 1;
	if (id == TD_OPT_BUFFER_TEXT) { /* a latency trace: text, not pages */
		b->latency = 1;
		return 0;
	}
	ret = td_u32(&w, p, &ps, "a buffer's page size");
	if (!ret)
		ret = td_u32(&w, p + 4, &nr, "a buffer's number of CPUs");
	if (ret)
		return ret;
	p += 8;
	if ((uint64_t)nr * 20 > w.end - p)
		return td_fail(in, p - 4,
			       "expected %u CPU entries of 20 bytes, found %" PRIu64 " bytes", nr,
			       w.end - p);
	b->page_size = ps;
	b->cpus = calloc(nr ? nr : 1, sizeof(*b->cpus));
	if (!b->cpus)
		return -ENOMEM;
	b->nr_cpus = nr;
	for (i = 0; i < nr; i++, p += 20) {
		b->cpus[i].cpu = td_get32(in->p + p);
		b->cpus[i].off = td_get64(in->p + p + 4);
		b->cpus[i].size = td_get64(in->p + p + 12);
	}
	return 0;
}

/* One option; [off, off + size) is its data, inside the file. */
static int td_option(struct td_src *td, const struct td_in *in, uint16_t id, uint64_t off,
		     uint64_t size, struct fdr_trace_info *info)
{
	const char *text = (const char *)in->p + off;
	long long v;

	switch (id) {
	case TD_OPT_DATE:
		if (td_opt_number(text, strnlen(text, size), &v) == 0 && v > 0 &&
		    v < (long long)(UINT64_MAX / 2000))
			info->offset_ns = (uint64_t)v * 1000;
		return 0;
	case TD_OPT_BUFFER:
	case TD_OPT_BUFFER_TEXT:
		return td_opt_buffer(td, in, id, off, size);
	case TD_OPT_TRACECLOCK:
		td->have_clock_opt = 1;
		td_clock_name(text, size, td->clock_opt, sizeof(td->clock_opt));
		return 0;
	case TD_OPT_UNAME: {
		/* "sysname nodename release version machine" */
		char u[512], *save = NULL, *w;

		fmt_copy_trim(u, sizeof(u), text, text + strnlen(text, size));
		w = strtok_r(u, " ", &save);
		if (w)
			snprintf(info->sysname, sizeof(info->sysname), "%s", w);
		w = strtok_r(NULL, " ", &save);
		if (w)
			snprintf(info->hostname, sizeof(info->hostname), "%s", w);
		w = strtok_r(NULL, " ", &save);
		if (w)
			snprintf(info->release, sizeof(info->release), "%s", w);
		return 0;
	}
	case TD_OPT_OFFSET:
		if (td_opt_number(text, strnlen(text, size), &v) == 0)
			td->ts_offset = v;
		return 0;
	case TD_OPT_CPUCOUNT:
		if (size >= 4)
			td->cpucount = td_get32(in->p + off);
		return 0;
	case TD_OPT_FDR_CLOCK: {
		char t[128], *p;
		unsigned long long real0 = 0, hz = 0;

		fmt_copy_trim(t, sizeof(t), text, text + strnlen(text, size));
		p = strstr(t, "realtime_ns_at_0=");
		if (p)
			real0 = strtoull(p + 17, NULL, 10);
		p = strstr(t, "ts_hz=");
		if (p)
			hz = strtoull(p + 6, NULL, 10);
		/* a rate from 1 kHz to 100 GHz; anything else is not trusted */
		if (real0 && real0 < UINT64_MAX / 2 && hz >= 1000 && hz <= 100000000000ull) {
			td->fdr_real0 = real0;
			td->fdr_hz = hz;
		}
		return 0;
	}
	case TD_OPT_TSC2NSEC:
		if (size >= 16) {
			td->tsc_mult = td_get32(in->p + off);
			td->tsc_shift = td_get32(in->p + off + 4);
			if (td->tsc_shift > 63)
				td->tsc_mult = 0;
		}
		return 0;
	default:
		if (id >= TD_OPT_HEADER_INFO && id <= TD_OPT_CMDLINES && td->version >= 7) {
			if (size < 8)
				return td_fail(in, off,
					       "expected an 8-byte section offset in option "
					       "%u, found %" PRIu64 " bytes",
					       id, size);
			td->sec_off[id] = td_get64(in->p + off);
		}
		return 0; /* unknown options are skipped, as trace-cmd does */
	}
}

/* v6 options: { id(2) size(4) data } until id 0. *next after the 0. */
static int td_options_v6(struct td_src *td, const struct td_in *in, uint64_t off, uint64_t *next,
			 struct fdr_trace_info *info)
{
	for (;;) {
		uint16_t id = 0;
		uint32_t size = 0;
		int ret = td_u16(in, off, &id, "an option id");

		if (ret)
			return ret;
		off += 2;
		if (id == TD_OPT_DONE)
			break;
		ret = td_u32(in, off, &size, "an option size");
		if (ret)
			return ret;
		off += 4;
		if (!td_has(in, off, size))
			return td_fail(in, off - 4,
				       "expected option %u of %u bytes, found %" PRIu64
				       " bytes left",
				       id, size, in->end - off);
		ret = td_option(td, in, id, off, size, info);
		if (ret)
			return ret;
		off += size;
	}
	*next = off;
	return 0;
}

/* v7: the section header at @off; [*data, *end) its contents. */
static int td_section(const struct td_in *in, uint64_t off, uint16_t want, uint64_t *data,
		      uint64_t *end)
{
	uint16_t id = 0, flags = 0;
	uint64_t size = 0;
	int ret = td_u16(in, off, &id, "a section id");

	if (!ret)
		ret = td_u16(in, off + 2, &flags, "section flags");
	if (!ret)
		ret = td_u64(in, off + 8, &size, "a section size");
	if (ret)
		return ret;
	if (id != want)
		return td_fail(in, off, "expected section %u, found section %u", want, id);
	if (flags & 1)
		return td_fail(in, off,
			       "expected an uncompressed section, found a compressed one (fdr "
			       "reads uncompressed files: trace-cmd convert --compression none)");
	if (!td_has(in, off + 16, size))
		return td_fail(in, off + 8,
			       "expected a section of %" PRIu64 " bytes, found %" PRIu64
			       " bytes left",
			       size, in->end > off + 16 ? in->end - off - 16 : 0);
	*data = off + 16;
	*end = off + 16 + size;
	return 0;
}

static int td_options_v7(struct td_src *td, const struct td_in *in, uint64_t off,
			 struct fdr_trace_info *info)
{
	int n;

	for (n = 0; off; n++) {
		uint64_t p, end;
		int done = 0, ret;

		if (n >= TD_MAX_OPTION_SECTIONS)
			return td_fail(in, off, "expected at most %d options sections, found more",
				       TD_MAX_OPTION_SECTIONS);
		ret = td_section(in, off, TD_OPT_DONE, &p, &end);
		if (ret)
			return ret;
		while (!done) {
			struct td_in w = *in;
			uint16_t id = 0;
			uint32_t size = 0;

			w.start = p;
			w.end = end;
			ret = td_u16(&w, p, &id, "an option id (or DONE)");
			if (!ret)
				ret = td_u32(&w, p + 2, &size, "an option size");
			if (ret)
				return ret;
			p += 6;
			if (!td_has(&w, p, size))
				return td_fail(in, p - 4,
					       "expected option %u of %u bytes, found %" PRIu64
					       " bytes left in its section",
					       id, size, end - p);
			if (id == TD_OPT_DONE) {
				if (size < 8)
					return td_fail(in, p,
						       "expected DONE's 8-byte offset, found %u "
						       "bytes",
						       size);
				off = td_get64(in->p + p);
				done = 1;
			} else {
				ret = td_option(td, in, id, p, size, info);
				if (ret)
					return ret;
			}
			p += size;
		}
	}
	return 0;
}

/* v6 buffers: "flyrecord\0" then nr_cpus x { offset(8) size(8) } at @off. */
static int td_flyrecord_v6(struct td_src *td, const struct td_in *in, struct td_buffer *b,
			   uint64_t off, uint64_t *next)
{
	uint32_t i;

	if (!td_has(in, off, 10))
		return td_fail(in, off, "expected \"flyrecord\", found the end of the data");
	if (memcmp(in->p + off, "latency  ", 10) == 0) {
		b->latency = 1;
		*next = off + 10;
		return 0;
	}
	if (memcmp(in->p + off, "flyrecord", 10) != 0)
		return td_fail(in, off, "expected \"flyrecord\" or \"latency\", found \"%.9s\"",
			       (const char *)in->p + off);
	off += 10;
	if ((uint64_t)td->hdr_cpus * 16 > in->end - off)
		return td_fail(in, off,
			       "expected %u CPU entries of 16 bytes, found %" PRIu64 " bytes",
			       td->hdr_cpus, in->end - off);
	if (b->cpus)
		return td_fail(in, off, "expected one CPU table per buffer, found a second");
	b->cpus = calloc(td->hdr_cpus ? td->hdr_cpus : 1, sizeof(*b->cpus));
	if (!b->cpus)
		return -ENOMEM;
	b->nr_cpus = td->hdr_cpus;
	b->page_size = td->page_size;
	for (i = 0; i < td->hdr_cpus; i++, off += 16) {
		b->cpus[i].cpu = i;
		b->cpus[i].off = td_get64(in->p + off);
		b->cpus[i].size = td_get64(in->p + off + 8);
	}
	*next = off;
	return 0;
}

static int td_read_v6(struct td_src *td, const struct td_in *in, uint64_t off,
		      struct fdr_trace_info *info)
{
	const char *text;
	uint64_t len, top_off;
	uint32_t i;
	int ret;

	ret = td_headers(td, in, off, &off);
	if (!ret)
		ret = td_ftrace_formats(td, in, off, &off);
	if (!ret)
		ret = td_event_formats(td, in, off, &off);
	if (!ret)
		ret = td_sized(in, off, 4, &text, &len, &off, "kallsyms");
	if (!ret)
		ret = td_sized(in, off, 4, &text, &len, &off, "printk formats");
	if (!ret)
		ret = td_sized(in, off, 8, &text, &len, &off, "saved cmdlines");
	if (!ret)
		ret = td_cmdlines(td, text, len);
	if (!ret)
		ret = td_u32(in, off, &td->hdr_cpus, "the number of CPUs");
	if (ret)
		return ret;
	off += 4;
	if (td->hdr_cpus > TD_MAX_CPU)
		return td_fail(in, off - 4, "expected at most %d CPUs, found %u", TD_MAX_CPU,
			       td->hdr_cpus);
	if (td_has(in, off, 10) && memcmp(in->p + off, "options  ", 10) == 0) {
		ret = td_options_v6(td, in, off + 10, &off, info);
		if (ret)
			return ret;
	}
	top_off = off;
	if (td->have_top)
		return td_fail(in, off, "expected no BUFFER option for the top buffer, found one");
	if (td->nr_bufs >= TD_MAX_BUFFERS)
		return td_fail(in, off, "expected at most %d buffers, found more", TD_MAX_BUFFERS);
	memmove(&td->bufs[1], &td->bufs[0], td->nr_bufs * sizeof(td->bufs[0]));
	memset(&td->bufs[0], 0, sizeof(td->bufs[0]));
	td->nr_bufs++;
	td->have_top = 1;
	ret = td_flyrecord_v6(td, in, &td->bufs[0], top_off, &off);
	if (ret)
		return ret;
	/*
	 * v6 keeps the trace_clock file after the CPU table when TRACECLOCK is set;
	 * when it is not there, trace-cmd falls back to "local", and so do we.
	 */
	if (td->have_clock_opt && !td->bufs[0].latency) {
		struct td_in quiet = { in->p, in->start, in->end, NULL, NULL };

		if (td_sized(&quiet, off, 8, &text, &len, &off, "trace_clock") == 0)
			td_clock_name(text, (size_t)len, td->clock_opt, sizeof(td->clock_opt));
		else
			snprintf(td->clock_opt, sizeof(td->clock_opt), "local");
	}
	for (i = 1; i < td->nr_bufs; i++) {
		ret = td_flyrecord_v6(td, in, &td->bufs[i], td->bufs[i].off, &off);
		if (ret)
			return ret;
	}
	return 0;
}

static int td_read_v7(struct td_src *td, const struct td_in *in, uint64_t off,
		      struct fdr_trace_info *info)
{
	const char *cname, *cver, *text;
	size_t nlen, vlen;
	uint64_t opt_off = 0, s = 0, e = 0, next, len;
	uint32_t i;
	int ret;

	ret = td_str(in, off, &cname, &nlen, "the compression name");
	if (!ret)
		ret = td_str(in, off + nlen + 1, &cver, &vlen, "the compression version");
	if (ret)
		return ret;
	if (strcmp(cname, "none") != 0)
		return td_fail(
			in, off,
			"expected an uncompressed file (\"none\"), found compression \"%.32s\" "
			"(fdr reads uncompressed files: trace-cmd convert --compression none)",
			cname);
	off += nlen + 1 + vlen + 1;
	ret = td_u64(in, off, &opt_off, "the offset of the first options section");
	if (!ret)
		ret = td_options_v7(td, in, opt_off, info);
	if (ret)
		return ret;
	if (!td->sec_off[TD_OPT_HEADER_INFO])
		return td_fail(in, opt_off, "expected a HEADER_INFO option, found none");
	ret = td_section(in, td->sec_off[TD_OPT_HEADER_INFO], TD_OPT_HEADER_INFO, &s, &e);
	if (!ret) {
		struct td_in w = *in;

		w.start = s;
		w.end = e;
		ret = td_headers(td, &w, s, &next);
	}
	if (!ret && td->sec_off[TD_OPT_FTRACE_EVENTS]) {
		ret = td_section(in, td->sec_off[TD_OPT_FTRACE_EVENTS], TD_OPT_FTRACE_EVENTS, &s,
				 &e);
		if (!ret) {
			struct td_in w = *in;

			w.start = s;
			w.end = e;
			ret = td_ftrace_formats(td, &w, s, &next);
		}
	}
	if (!ret && td->sec_off[TD_OPT_EVENT_FORMATS]) {
		ret = td_section(in, td->sec_off[TD_OPT_EVENT_FORMATS], TD_OPT_EVENT_FORMATS, &s,
				 &e);
		if (!ret) {
			struct td_in w = *in;

			w.start = s;
			w.end = e;
			ret = td_event_formats(td, &w, s, &next);
		}
	}
	if (!ret && td->sec_off[TD_OPT_CMDLINES]) {
		ret = td_section(in, td->sec_off[TD_OPT_CMDLINES], TD_OPT_CMDLINES, &s, &e);
		if (!ret) {
			struct td_in w = *in;

			w.start = s;
			w.end = e;
			ret = td_sized(&w, s, 8, &text, &len, &next, "saved cmdlines");
			if (!ret)
				ret = td_cmdlines(td, text, len);
		}
	}
	for (i = 0; !ret && i < td->nr_bufs; i++) {
		struct td_buffer *b = &td->bufs[i];

		/* the buffer's own section header: refuse it compressed */
		ret = td_section(in, b->off, b->latency ? TD_OPT_BUFFER_TEXT : TD_OPT_BUFFER, &s,
				 &e);
	}
	return ret;
}

/* ---- pages ------------------------------------------------------------------------------- */

/*
 * Load the page at cur->page: its header, its commit and the lost-events count.
 * Returns 0, or -EINVAL for a page that does not check out.
 */
static int td_page_load(const struct td_src *td, const struct td_in *in, struct td_cursor *c)
{
	uint64_t plen = c->end - c->page, commit, size;

	if (plen > c->page_size)
		plen = c->page_size;
	if (plen < td->hdr_size)
		return td_fail(in, c->page,
			       "expected a page header of %u bytes on CPU %u, found %" PRIu64
			       " bytes",
			       td->hdr_size, c->cpu, plen);
	c->ts = td_get64(in->p + c->page);
	commit = td->commit_size == 8 ? td_get64(in->p + c->page + 8) :
					td_get32(in->p + c->page + 8);
	size = commit & TD_COMMIT_MASK;
	if (size > plen - td->hdr_size)
		return td_fail(in, c->page + 8,
			       "expected a page commit of at most %" PRIu64
			       " bytes on CPU %u, found %" PRIu64,
			       plen - td->hdr_size, c->cpu, size);
	c->pos = c->page + td->hdr_size;
	c->data_end = c->pos + size;
	if (commit & TD_MISSED_EVENTS) {
		if (commit & TD_MISSED_STORED) {
			uint64_t n;

			if (size + td->commit_size > plen - td->hdr_size)
				return td_fail(in, c->data_end,
					       "expected the lost-events count after the records "
					       "on CPU %u, found the page's end",
					       c->cpu);
			n = td->commit_size == 8 ? td_get64(in->p + c->data_end) :
						   td_get32(in->p + c->data_end);
			if (c->lost != TD_LOST_UNKNOWN)
				c->lost = n > TD_LOST_UNKNOWN - 1 - c->lost ? TD_LOST_UNKNOWN - 1 :
									      c->lost + n;
		} else {
			c->lost = TD_LOST_UNKNOWN;
		}
	}
	return 0;
}

/*
 * The next data record of one CPU: returns 1 (*payload, *len, c->ts set), 0 at
 * the end of the CPU's data, or -EINVAL.
 */
static int td_cursor_next(const struct td_src *td, const struct td_in *in, struct td_cursor *c,
			  const unsigned char **payload, uint32_t *len)
{
	for (;;) {
		uint32_t w, type, delta, a0;
		uint64_t dlen, data;

		if (c->pos >= c->data_end) {
			int ret;

			if (!c->started) {
				c->started = 1;
				c->page = c->off;
			} else if (c->page < c->end) {
				c->page = c->page_size < c->end - c->page ? c->page + c->page_size :
									    c->end;
			}
			if (c->page >= c->end)
				return 0;
			ret = td_page_load(td, in, c);
			if (ret)
				return ret;
			continue;
		}
		if (c->data_end - c->pos < 4)
			return td_fail(in, c->pos,
				       "expected a record header on CPU %u, found %" PRIu64
				       " bytes before the commit",
				       c->cpu, c->data_end - c->pos);
		w = td_get32(in->p + c->pos);
		type = w & 31;
		delta = w >> 5;
		if (type != 29 || delta) {
			if (type == 0 || type >= 29) {
				if (c->data_end - c->pos < 8)
					return td_fail(
						in, c->pos,
						"expected an 8-byte record header (type %u) on "
						"CPU %u, found %" PRIu64 " bytes",
						type, c->cpu, c->data_end - c->pos);
				a0 = td_get32(in->p + c->pos + 4);
			} else {
				a0 = 0;
			}
		} else {
			a0 = 0;
		}
		switch (type) {
		case 29: /* padding: delta 0 ends the page's records */
			if (!delta) {
				c->pos = c->data_end;
				continue;
			}
			if (a0 < 4)
				return td_fail(in, c->pos + 4,
					       "expected a padding length of at least "
					       "4 on CPU %u, found %u",
					       c->cpu, a0);
			c->ts += delta; /* as trace-cmd (kbuffer) counts it */
			/* padding may run to the page's end, past the commit: stop there */
			c->pos = a0 > c->data_end - c->pos - 4 ? c->data_end : c->pos + 4 + a0;
			continue;
		case 30: /* time extend */
			c->ts += ((uint64_t)a0 << 27) + delta;
			c->pos += 8;
			continue;
		case 31: { /* absolute time stamp: the kernel's rb_fix_abs_ts() */
			uint64_t abs = ((uint64_t)a0 << 27) | delta;

			if (c->ts & TD_TS_MSB) {
				abs |= c->ts & TD_TS_MSB;
				if (abs < c->ts)
					abs += 1ull << 59;
			}
			c->ts = abs;
			c->pos += 8;
			continue;
		}
		case 0:
			if (a0 < 4)
				return td_fail(in, c->pos + 4,
					       "expected a record length of at least 4 "
					       "on CPU %u, found %u",
					       c->cpu, a0);
			dlen = ((uint64_t)a0 - 4 + 3) & ~3ull;
			data = c->pos + 8;
			break;
		default:
			dlen = (uint64_t)type * 4;
			data = c->pos + 4;
			break;
		}
		if (dlen > c->data_end - data)
			return td_fail(in, c->pos,
				       "expected a record of %" PRIu64 " bytes on CPU %u, "
				       "found %" PRIu64 " bytes before the commit",
				       dlen, c->cpu, c->data_end - data);
		c->ts += delta;
		c->pos = data + dlen;
		*payload = in->p + data;
		*len = (uint32_t)dlen;
		return 1;
	}
}

/* The trace clock's time of a raw timestamp: TSC2NSEC and OFFSET, as trace-cmd applies them. */
static uint64_t td_ts(const struct td_src *td, uint64_t ts)
{
	if (td->tsc_mult)
		ts = (uint64_t)(((unsigned __int128)ts * td->tsc_mult) >> td->tsc_shift);
	return ts + (uint64_t)td->ts_offset;
}

/* Fill c->rec with the CPU's next record; c->have = 0 at its end. */
static int td_fill(struct td_src *td, struct td_cpu *c)
{
	struct td_in in = { td->data, 0, td->size, NULL, NULL };
	const unsigned char *p;
	uint32_t len;
	int ret = td_cursor_next(td, &in, &c->cur, &p, &len);

	c->have = ret == 1;
	if (ret <= 0)
		return ret;
	c->rec.cpu = c->cur.cpu;
	c->rec.len = len;
	c->rec.ts = td_ts(td, c->cur.ts);
	c->rec.payload = p;
	c->rec.lost_before = c->cur.lost;
	c->cur.lost = 0;
	c->rec.ev = NULL;
	if (len >= sizeof(struct fdr_common)) {
		uint16_t type;
		uint32_t idx;

		memcpy(&type, p, 2);
		idx = td->id_map[type];
		if (idx && idx <= td->nr_events)
			c->rec.ev = &td->events[idx - 1];
	}
	return 1;
}

/* ---- the source's operations ----------------------------------------------------------- */

static int td_next(struct fdr_trace *t, struct fdr_trace_rec *out)
{
	struct td_src *td = t->priv;
	struct td_cpu *best = NULL;
	uint32_t i;
	int ret;

	for (i = 0; i < td->nr_cpus; i++) {
		struct td_cpu *c = &td->cpus[i];

		if (!c->have)
			continue;
		if (!best || c->rec.ts < best->rec.ts)
			best = c;
	}
	if (!best)
		return 0;
	*out = best->rec;
	/* the payload stays valid: it points into the file, which stays mapped */
	ret = td_fill(td, best);
	return ret < 0 ? ret : 1;
}

static size_t td_nr_events(const struct fdr_trace *t)
{
	const struct td_src *td = t->priv;

	return td->nr_events;
}

static const struct fdr_abi_event *td_event_at(const struct fdr_trace *t, size_t i)
{
	const struct td_src *td = t->priv;

	return i < td->nr_events ? &td->events[i] : NULL;
}

static const struct fdr_abi_event *td_event(const struct fdr_trace *t, uint32_t id)
{
	const struct td_src *td = t->priv;
	uint32_t idx = id <= UINT16_MAX ? td->id_map[id] : 0;

	return idx ? &td->events[idx - 1] : NULL;
}

static const char *td_comm(const struct fdr_trace *t, int32_t pid, char *buf, size_t len)
{
	const struct td_src *td = t->priv;
	struct td_cmdline key = { .pid = pid };
	const struct td_cmdline *c;

	if (pid == 0)
		return "<idle>";
	if (!td->nr_cmdlines || len < FDR_COMM_LEN)
		return "<...>";
	c = bsearch(&key, td->cmdlines, td->nr_cmdlines, sizeof(key), td_cmdline_cmp);
	if (!c || !c->comm[0])
		return "<...>";
	snprintf(buf, len, "%s", c->comm);
	return buf;
}

static void td_free(struct td_src *td)
{
	uint32_t i;

	if (!td)
		return;
	for (i = 0; i < td->nr_bufs; i++)
		free(td->bufs[i].cpus);
	free(td->cpus);
	free(td->cmdlines);
	free(td->id_map);
	free(td->events);
	if (td->map)
		munmap(td->map, td->size);
	free(td);
}

static void td_close(struct fdr_trace *t)
{
	td_free(t->priv);
	free(t);
}

static uint32_t td_nr_buffers(const struct fdr_trace *t)
{
	const struct td_src *td = t->priv;

	return td->nr_sel;
}

static const char *td_buffer_name(const struct fdr_trace *t, uint32_t i)
{
	const struct td_src *td = t->priv;

	return i < td->nr_sel ? td->sel[i]->name : NULL;
}

/* The buffer of a record: the one whose CPU data holds its payload. */
static uint32_t td_rec_buffer(const struct fdr_trace *t, const struct fdr_trace_rec *rec)
{
	const struct td_src *td = t->priv;
	uint64_t off;
	uint32_t i;

	if (!rec->payload || rec->payload < td->data || rec->payload >= td->data + td->size)
		return 0;
	off = (uint64_t)(rec->payload - td->data);
	for (i = 0; i < td->nr_cpus; i++)
		if (off >= td->cpus[i].cur.off && off < td->cpus[i].cur.end)
			return td->cpus[i].buf;
	return 0;
}

static const struct fdr_trace_ops td_ops = {
	.next = td_next,
	.nr_buffers = td_nr_buffers,
	.buffer_name = td_buffer_name,
	.rec_buffer = td_rec_buffer,
	.nr_events = td_nr_events,
	.event_at = td_event_at,
	.event = td_event,
	.comm = td_comm,
	.close = td_close,
};

/* ---- opening ------------------------------------------------------------------------------ */

/* The buffer to read: the top one if it has data, else the first instance with data. */
static struct td_buffer *td_pick(struct td_src *td)
{
	uint32_t i, j;

	for (i = 0; i < td->nr_bufs; i++) {
		if (td->bufs[i].latency)
			continue;
		for (j = 0; j < td->bufs[i].nr_cpus; j++)
			if (td->bufs[i].cpus[j].size)
				return &td->bufs[i];
	}
	for (i = 0; i < td->nr_bufs; i++)
		if (!td->bufs[i].latency)
			return &td->bufs[i];
	return NULL;
}

/* A buffer's page size: its own (v7), else the file's; 0 if not a power of two from 64 to 16 MiB. */
static uint32_t td_buf_page_size(const struct td_src *td, const struct td_buffer *b)
{
	uint32_t ps = b->page_size ? b->page_size : td->page_size;

	if (ps < 64 || ps > (1u << 24) || (ps & (ps - 1)))
		return 0;
	return ps;
}

/*
 * The cursors of the CPUs with data of the buffers in td->sel[], and @info
 * from the first of them (its clock, its page size).
 */
static int td_setup_cpus(struct td_src *td, const struct td_in *in, struct fdr_trace_info *info)
{
	struct td_buffer *b = td->sel[0];
	uint32_t i, k, max_cpu = 0;
	size_t total = 0;
	const char *clock;
	int known;

	for (k = 0; k < td->nr_sel; k++) {
		if (!td_buf_page_size(td, td->sel[k]))
			return td_fail(in, 0,
				       "expected a page size that is a power of two from 64 to "
				       "16 MiB, found %u",
				       td->sel[k]->page_size ? td->sel[k]->page_size :
							       td->page_size);
		total += td->sel[k]->nr_cpus;
	}
	td->page_size = td_buf_page_size(td, b);
	td->cpus = calloc(total ? total : 1, sizeof(*td->cpus));
	if (!td->cpus)
		return -ENOMEM;
	for (k = 0; k < td->nr_sel; k++) {
		const struct td_buffer *sb = td->sel[k];

		for (i = 0; i < sb->nr_cpus; i++) {
			const struct td_cpu_data *d = &sb->cpus[i];
			struct td_cpu *c = &td->cpus[td->nr_cpus];

			if (d->cpu >= TD_MAX_CPU)
				return td_fail(in, sb->off, "expected CPU ids below %d, found %u",
					       TD_MAX_CPU, d->cpu);
			if (d->cpu + 1 > max_cpu)
				max_cpu = d->cpu + 1;
			if (!d->size)
				continue;
			if (d->off > td->size || d->size > td->size - d->off)
				return td_fail(
					in, sb->off,
					"expected CPU %u's data (%" PRIu64 " bytes at %" PRIu64
					") inside the file of %zu bytes, found it past the end",
					d->cpu, d->size, d->off, td->size);
			c->cur.cpu = d->cpu;
			c->cur.off = d->off;
			c->cur.end = d->off + d->size;
			c->cur.page_size = td_buf_page_size(td, sb);
			c->buf = k;
			td->nr_cpus++;
		}
	}
	info->nr_cpus = td->cpucount > max_cpu ? td->cpucount : max_cpu;
	/* trace-cmd takes TRACECLOCK first: 3.1.6 writes "local" in every BUFFER option */
	clock = td->clock_opt[0] ? td->clock_opt : b->clock[0] ? b->clock : "local";
	snprintf(info->clock_name, sizeof(info->clock_name), "%s", clock);
	known = fdr_trace_clock_by_name(clock);
	info->clock = known >= 0 ? (uint32_t)known : FDR_CLOCK_LOCAL;
	if (td->tsc_mult && !fdr_clock_is_ns(info->clock))
		info->clock = FDR_CLOCK_LOCAL; /* converted to ns by TSC2NSEC */
	if (fdr_clock_is_ns(info->clock))
		info->ts_hz = 1000000000u;
	/* fdr record's wall-clock point; a DATE option (trace-cmd record --date) wins */
	if (td->fdr_hz && !td->tsc_mult &&
	    (fdr_clock_is_ns(info->clock) ? td->fdr_hz == 1000000000u :
					    info->clock == FDR_CLOCK_X86_TSC)) {
		info->ts_hz = td->fdr_hz;
		if (!info->offset_ns)
			info->offset_ns = td->fdr_real0;
	}
	info->page_size = td->page_size;
	info->long_size = td->long_size;
	return 0;
}

/* Walk every page once: a broken file is refused at open, with its offset. */
static int td_check_pages(struct td_src *td, const struct td_in *in)
{
	uint32_t i;

	for (i = 0; i < td->nr_cpus; i++) {
		struct td_cursor c = td->cpus[i].cur;
		const unsigned char *p;
		uint32_t len;
		int ret;

		while ((ret = td_cursor_next(td, in, &c, &p, &len)) == 1)
			;
		if (ret)
			return ret;
	}
	return 0;
}

static int td_open(struct td_src *td, const char *origin, struct fdr_trace **out,
		   struct fdr_buf *err)
{
	struct td_in in = { td->data, 0, td->size, err, &td->failed };
	struct fdr_trace *t = NULL;
	struct td_buffer *b;
	const char *ver;
	size_t vlen;
	uint64_t off;
	uint32_t i;
	int ret;

	t = calloc(1, sizeof(*t));
	td->id_map = calloc(UINT16_MAX + 1, sizeof(*td->id_map));
	if (!t || !td->id_map) {
		ret = -ENOMEM;
		goto err;
	}
	if (td->size < TD_MAGIC_LEN || memcmp(td->data, TD_MAGIC, TD_MAGIC_LEN) != 0) {
		ret = td_fail(&in, 0, "expected the magic \"\\027\\010\\104tracing\", found %s",
			      td->size < TD_MAGIC_LEN ? "a shorter file" : "other bytes");
		goto err;
	}
	ret = td_str(&in, TD_MAGIC_LEN, &ver, &vlen, "the version string");
	if (ret)
		goto err;
	if ((vlen != 1 || (ver[0] != '6' && ver[0] != '7')))
		ret = td_fail(&in, TD_MAGIC_LEN, "expected version \"6\" or \"7\", found \"%.16s\"",
			      ver);
	if (ret)
		goto err;
	td->version = (uint32_t)(ver[0] - '0');
	off = TD_MAGIC_LEN + vlen + 1;
	if (!td_has(&in, off, 6)) {
		ret = td_fail(&in, off,
			      "expected endianness, long size and page size, found the "
			      "end of the file");
		goto err;
	}
	if (td->data[off] != 0) {
		ret = td_fail(&in, off,
			      "expected a little-endian file (0), found %u (big-endian files are "
			      "not supported)",
			      td->data[off]);
		goto err;
	}
	td->long_size = td->data[off + 1];
	if (td->long_size != 4 && td->long_size != 8) {
		ret = td_fail(&in, off + 1, "expected a long size of 4 or 8, found %u",
			      td->long_size);
		goto err;
	}
	td->page_size = td_get32(td->data + off + 2);
	off += 6;
	t->info.long_size = td->long_size;
	ret = td->version == 6 ? td_read_v6(td, &in, off, &t->info) :
				 td_read_v7(td, &in, off, &t->info);
	if (ret)
		goto err;
	b = td_pick(td);
	if (!b) {
		ret = td_fail(&in, 0, "expected trace data (flyrecord), found %s",
			      td->nr_bufs ? "only latency (text) traces, which fdr does not read" :
					    "no buffer");
		goto err;
	}
	td->sel[td->nr_sel++] = b;
	/* the other buffers with data (an empty top buffer is not one of them) */
	for (i = 0; td->all_buffers && i < td->nr_bufs; i++) {
		uint32_t j;

		if (&td->bufs[i] == b || td->bufs[i].latency)
			continue;
		for (j = 0; j < td->bufs[i].nr_cpus; j++)
			if (td->bufs[i].cpus[j].size)
				break;
		if (j < td->bufs[i].nr_cpus)
			td->sel[td->nr_sel++] = &td->bufs[i];
	}
	ret = td_setup_cpus(td, &in, &t->info);
	if (!ret)
		ret = td_check_pages(td, &in);
	for (i = 0; !ret && i < td->nr_cpus; i++)
		ret = td_fill(td, &td->cpus[i]) < 0 ? -EINVAL : 0;
	if (ret)
		goto err;
	if (b->name[0])
		snprintf(t->info.origin, sizeof(t->info.origin), "%.180s (instance %.63s)", origin,
			 b->name);
	else
		snprintf(t->info.origin, sizeof(t->info.origin), "%s", origin);
	t->ops = &td_ops;
	t->priv = td;
	*out = t;
	return 0;
err:
	if (ret == -EINVAL && err && !td->failed)
		fdr_buf_printf(err, "trace.dat: malformed file");
	td_free(td);
	free(t);
	return ret;
}

/**
 * fdr_tracedat_open_mem - a trace.dat image in memory as a source
 * @data, @size: the image; borrowed, it must outlive the source
 * @origin: shown as the source's origin
 *
 * Returns 0, -ENOMEM, or -EINVAL with a message in @err.
 */
int fdr_tracedat_open_mem(const void *data, size_t size, const char *origin, struct fdr_trace **out,
			  struct fdr_buf *err)
{
	return fdr_tracedat_open_mem_ex(data, size, origin, 0, out, err);
}

/** fdr_tracedat_open_mem_ex - fdr_tracedat_open_mem() with fdr_trace_open_file_ex()'s @flags */
int fdr_tracedat_open_mem_ex(const void *data, size_t size, const char *origin, unsigned flags,
			     struct fdr_trace **out, struct fdr_buf *err)
{
	struct td_src *td = calloc(1, sizeof(*td));

	if (!td)
		return -ENOMEM;
	td->data = data;
	td->size = size;
	td->all_buffers = !!(flags & FDR_TRACE_ALL_BUFFERS);
	return td_open(td, origin, out, err);
}

/**
 * fdr_trace_open_file_ex - a trace.dat file (trace-cmd's versions 6 and 7, not
 * compressed, little-endian) as a source of records
 * @path: the file
 * @flags: FDR_TRACE_ALL_BUFFERS: every buffer (instance) of the file, merged by
 *	time, as trace-cmd report prints them (fdr record -k's file: fdr's CPUs and
 *	the kernel instance's); fdr_trace_rec_buffer() says whose a record is
 * @out: the source; close it with fdr_trace_close()
 * @err: if not NULL, receives the reason a file is refused
 *
 * The file is mapped read-only; records point into the mapping until the
 * source is closed. The top instance's data is read first if it has any, else
 * the first instance's with data (info.origin then names the instance; the
 * source's clock and page size are that buffer's).
 *
 * Returns 0, -EINVAL (malformed or unsupported file: see @err), -ENOMEM, or the
 * errno of open(), fstat() or mmap().
 */
int fdr_trace_open_file_ex(const char *path, unsigned flags, struct fdr_trace **out,
			   struct fdr_buf *err)
{
	struct td_src *td;
	struct stat st;
	void *map;
	int fd, ret;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		ret = -errno;
		close(fd);
		return ret;
	}
	if (!S_ISREG(st.st_mode) || st.st_size <= 0) {
		close(fd);
		if (err)
			fdr_buf_printf(
				err, "trace.dat: expected a regular file with data, found %s",
				S_ISREG(st.st_mode) ? "an empty file" : "another kind of file");
		return -EINVAL;
	}
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	ret = map == MAP_FAILED ? -errno : 0;
	close(fd);
	if (ret)
		return ret;
	td = calloc(1, sizeof(*td));
	if (!td) {
		munmap(map, (size_t)st.st_size);
		return -ENOMEM;
	}
	td->map = map;
	td->data = map;
	td->size = (size_t)st.st_size;
	td->all_buffers = !!(flags & FDR_TRACE_ALL_BUFFERS);
	return td_open(td, path, out, err);
}

/**
 * fdr_trace_open_file - fdr_trace_open_file_ex() without flags: the top
 * instance's data if it has any, else the first instance's with data
 */
int fdr_trace_open_file(const char *path, struct fdr_trace **out, struct fdr_buf *err)
{
	return fdr_trace_open_file_ex(path, 0, out, err);
}
