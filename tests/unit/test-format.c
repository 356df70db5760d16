// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test-format.c - encoding and the kernel's text formats: the format file of an
 * event with every field kind, record lines (spacing, timestamp rounding, comm
 * and pid columns, options), default and custom prints, trace_marker lines,
 * header_page/header_event and the trace header. Also what must not happen: a
 * hostile record never makes the formatter read outside it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "fdr-criterion.h"
#include "fdr-test.h"
/* fdr_event_def_to_abi(), fdr_session_register_event(): libfdr internals */
#include "core/core-local.h"

/* clang-format off */
FDR_EVENT(tfmt, allkinds,
	FDR_PROTO(int8_t a, uint8_t b, int16_t c, uint16_t d, int32_t e, uint32_t f, int64_t g,
		  uint64_t h, bool i, const char *j, const char *k, const void *l, size_t llen),
	FDR_ARGS(a, b, c, d, e, f, g, h, i, j, k, l, llen),
	FDR_FIELDS(
		fdr_field_int(int8_t, s8, a)
		fdr_field_int(uint8_t, u8, b)
		fdr_field_int(int16_t, s16, c)
		fdr_field_int(uint16_t, u16, d)
		fdr_field_int(int32_t, s32, e)
		fdr_field_int(uint32_t, u32, f)
		fdr_field_int(int64_t, s64, g)
		fdr_field_int(uint64_t, u64, h)
		fdr_field_bool(flag, i)
		fdr_field_chars(name, 16, j)
		fdr_field_string(str, k)
		fdr_field_bytes(blob, l, llen)))

FDR_EVENT_FMT(tfmt, custom,
	FDR_PROTO(int32_t a, uint32_t b, uint32_t x, const char *s, int8_t ch, int64_t big),
	FDR_ARGS(a, b, x, s, ch, big),
	FDR_FIELDS(
		fdr_field_int(int32_t, a, a)
		fdr_field_int(uint32_t, b, b)
		fdr_field_int(uint32_t, x, x)
		fdr_field_string(s, s)
		fdr_field_int(int8_t, ch, ch)
		fdr_field_int(int64_t, big, big)),
	"a=%d b=%u x=%x X=%08X s=%s c=%c w=[%5d] l=[%-4u] big=%lld 100%%", a, b, x, x, s, ch, a, b, big)

/* Fields for the table of conversions below; the print format is replaced per row. */
FDR_EVENT(tfmt, vals,
	FDR_PROTO(int32_t a, uint32_t b, uint32_t x, const char *s, int8_t ch, int64_t big,
		  uint64_t ubig, const char *nm, uint8_t small, int16_t neg),
	FDR_ARGS(a, b, x, s, ch, big, ubig, nm, small, neg),
	FDR_FIELDS(
		fdr_field_int(int32_t, a, a)
		fdr_field_int(uint32_t, b, b)
		fdr_field_int(uint32_t, x, x)
		fdr_field_string(s, s)
		fdr_field_int(int8_t, ch, ch)
		fdr_field_int(int64_t, big, big)
		fdr_field_int(uint64_t, ubig, ubig)
		fdr_field_chars(nm, 8, nm)
		fdr_field_int(uint8_t, small, small)
		fdr_field_int(int16_t, neg, neg)))
/* clang-format on */

typedef struct fdr__rec_tfmt_allkinds rec_all;
typedef struct fdr__rec_tfmt_custom rec_custom;
typedef struct fdr__rec_tfmt_vals rec_vals;

static struct fdr_test_env env;

static void fini(void)
{
	fdr_test_teardown(&env);
}

TestSuite(format, .fini = fini, .timeout = 30);

static void setup(void)
{
	cr_assert_eq(fdr_test_setup(&env, NULL), 0, "session setup failed");
	prctl(PR_SET_NAME, "fdrtest");
}

static char *cat(const char *path)
{
	int err;
	char *t = fdr_test_read(env.s, path, 0, NULL, &err);

	cr_assert_not_null(t, "read %s: %s", path, strerror(-err));
	return t;
}

/* ---- the format file ---- */

#define COMMON_FIELDS                                                                  \
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"         \
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"         \
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n" \
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"                     \
	"\n"

Test(format, event_format_file_all_kinds)
{
	char want[2048], *txt;

	/* the binary layout the format file must describe */
	_Static_assert(offsetof(rec_all, s8) == 8 && offsetof(rec_all, u8) == 9, "layout");
	_Static_assert(offsetof(rec_all, s16) == 10 && offsetof(rec_all, u16) == 12, "layout");
	_Static_assert(offsetof(rec_all, s32) == 16 && offsetof(rec_all, u32) == 20, "layout");
	_Static_assert(offsetof(rec_all, s64) == 24 && offsetof(rec_all, u64) == 32, "layout");
	_Static_assert(offsetof(rec_all, flag) == 40 && offsetof(rec_all, name) == 41, "layout");
	_Static_assert(offsetof(rec_all, str) == 60 && offsetof(rec_all, blob) == 64, "layout");

	setup();
	snprintf(
		want, sizeof(want),
		"name: allkinds\n"
		"ID: %u\n"
		"format:\n" COMMON_FIELDS "\tfield:s8 s8;\toffset:8;\tsize:1;\tsigned:1;\n"
		"\tfield:u8 u8;\toffset:9;\tsize:1;\tsigned:0;\n"
		"\tfield:s16 s16;\toffset:10;\tsize:2;\tsigned:1;\n"
		"\tfield:u16 u16;\toffset:12;\tsize:2;\tsigned:0;\n"
		"\tfield:int s32;\toffset:16;\tsize:4;\tsigned:1;\n"
		"\tfield:unsigned int u32;\toffset:20;\tsize:4;\tsigned:0;\n"
		"\tfield:s64 s64;\toffset:24;\tsize:8;\tsigned:1;\n"
		"\tfield:u64 u64;\toffset:32;\tsize:8;\tsigned:0;\n"
		"\tfield:bool flag;\toffset:40;\tsize:1;\tsigned:0;\n"
		"\tfield:char name[16];\toffset:41;\tsize:16;\tsigned:0;\n"
		"\tfield:__data_loc char[] str;\toffset:60;\tsize:4;\tsigned:0;\n"
		"\tfield:__data_loc unsigned char[] blob;\toffset:64;\tsize:4;\tsigned:0;\n"
		"\n"
		"print fmt: \"s8=%%d u8=%%u s16=%%d u16=%%u s32=%%d u32=%%u s64=%%lld u64=%%llu flag=%%u "
		"name=%%s str=%%s blob=%%s\", REC->s8, REC->u8, REC->s16, REC->u16, REC->s32, REC->u32, "
		"REC->s64, REC->u64, REC->flag, REC->name, __get_str(str), "
		"__print_hex_str(__get_dynamic_array(blob), __get_dynamic_array_len(blob))\n",
		fdr_ev_tfmt_allkinds.id);
	txt = cat("events/tfmt/allkinds/format");
	cr_assert_str_eq(txt, want, "format file:\n%s\nexpected:\n%s", txt, want);
	free(txt);
}

Test(format, event_format_file_custom_print)
{
	char want[2048], *txt;

	setup();
	snprintf(
		want, sizeof(want),
		"name: custom\n"
		"ID: %u\n"
		"format:\n" COMMON_FIELDS "\tfield:int a;\toffset:8;\tsize:4;\tsigned:1;\n"
		"\tfield:unsigned int b;\toffset:12;\tsize:4;\tsigned:0;\n"
		"\tfield:unsigned int x;\toffset:16;\tsize:4;\tsigned:0;\n"
		"\tfield:__data_loc char[] s;\toffset:20;\tsize:4;\tsigned:0;\n"
		"\tfield:s8 ch;\toffset:24;\tsize:1;\tsigned:1;\n"
		"\tfield:s64 big;\toffset:32;\tsize:8;\tsigned:1;\n"
		"\n"
		"print fmt: \"a=%%d b=%%u x=%%x X=%%08X s=%%s c=%%c w=[%%5d] l=[%%-4u] big=%%lld 100%%%%\", "
		"REC->a, REC->b, REC->x, REC->x, __get_str(s), REC->ch, REC->a, REC->b, REC->big\n",
		fdr_ev_tfmt_custom.id);
	txt = cat("events/tfmt/custom/format");
	cr_assert_str_eq(txt, want, "format file:\n%s\nexpected:\n%s", txt, want);
	free(txt);
}

Test(format, print_event_format_file)
{
	char *txt;

	setup();
	txt = cat("events/ftrace/print/format");
	cr_assert_str_eq(txt,
			 "name: print\n"
			 "ID: 5\n"
			 "format:\n" COMMON_FIELDS
			 "\tfield:unsigned long ip;\toffset:8;\tsize:8;\tsigned:0;\n"
			 "\tfield:char buf[];\toffset:16;\tsize:0;\tsigned:0;\n"
			 "\n"
			 "print fmt: \"%ps: %s\", (void *)REC->ip, REC->buf\n",
			 "ftrace/print/format:\n%s", txt);
	free(txt);
}

Test(format, header_page_and_event)
{
	struct fdr_buf b = { 0 };

	cr_assert_eq(fdr_format_header_page(4096, &b), 0);
	cr_assert_str_eq(b.data, "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
				 "\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"
				 "\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
				 "\tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;\n");
	fdr_buf_free(&b);
	cr_assert_eq(fdr_format_header_page(8192, &b), 0);
	cr_assert_not_null(
		strstr(b.data, "\tfield: char data;\toffset:16;\tsize:8176;\tsigned:0;\n"));
	fdr_buf_free(&b);
	cr_assert_eq(fdr_format_header_event(&b), 0);
	cr_assert_str_eq(b.data, "# compressed entry header\n"
				 "\ttype_len    :    5 bits\n"
				 "\ttime_delta  :   27 bits\n"
				 "\tarray       :   32 bits\n"
				 "\n"
				 "\tpadding     : type == 29\n"
				 "\ttime_extend : type == 30\n"
				 "\ttime_stamp : type == 31\n"
				 "\tdata max type_len  == 28\n");
	fdr_buf_free(&b);
}

/* ---- timestamps ---- */

Test(format, timestamp_rounding)
{
	static const struct {
		uint32_t clock;
		uint64_t ts;
		const char *want;
	} t[] = {
		{ FDR_CLOCK_LOCAL, 0, "     0.000000" },
		{ FDR_CLOCK_LOCAL, 499, "     0.000000" },
		{ FDR_CLOCK_LOCAL, 500, "     0.000001" }, /* rounded: ns + 500, then / 1000 */
		{ FDR_CLOCK_LOCAL, 1499, "     0.000001" },
		{ FDR_CLOCK_LOCAL, 1500, "     0.000002" },
		{ FDR_CLOCK_LOCAL, 999999499, "     0.999999" },
		{ FDR_CLOCK_LOCAL, 999999500, "     1.000000" }, /* carries into the seconds */
		{ FDR_CLOCK_MONO, 409631935000ull, "   409.631935" },
		{ FDR_CLOCK_BOOT, 99999999999499ull, " 99999.999999" },
		{ FDR_CLOCK_MONO, 123456789000000000ull, " 123456789.000000" }, /* wider than 5 */
		{ FDR_CLOCK_X86_TSC, 2, "            2" }, /* raw counters: " %12llu" */
		{ FDR_CLOCK_COUNTER, 123456789012345ull, " 123456789012345" },
		{ FDR_CLOCK_UPTIME, 7, "            7" },
	};
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct fdr_buf b = { 0 };

		cr_assert_eq(fdr_format_ts(t[i].clock, t[i].ts, &b), 0);
		cr_assert_str_eq(b.data, t[i].want, "[%zu] ts %llu: '%s', expected '%s'", i,
				 (unsigned long long)t[i].ts, b.data, t[i].want);
		fdr_buf_free(&b);
	}
}

/* ---- record lines ---- */

/* Put a saved comm for @pid into the session, as a writer does. */
static void save_comm(int32_t pid, const char *comm, uint32_t tgid)
{
	struct fdr_abi_cmdline *c =
		&fdr_session_control(env.s)->cmdlines[(uint32_t)pid % FDR_CMDLINE_SLOTS];

	memset(c->comm, 0, sizeof(c->comm));
	snprintf(c->comm, sizeof(c->comm), "%s", comm);
	c->tgid = tgid;
	__atomic_store_n(&c->pid, (uint32_t)pid, __ATOMIC_RELEASE);
}

/* A tfmt:vals payload with a=@a (the body then reads "a=..." first). */
static uint32_t vals_payload(unsigned char *buf, int32_t pid, uint8_t preempt)
{
	rec_vals r;

	memset(&r, 0, sizeof(r));
	r.fdr__common.type = (uint16_t)fdr_ev_tfmt_vals.id;
	r.fdr__common.pid = pid;
	r.fdr__common.preempt_count = preempt;
	r.a = 42;
	r.s = (3u << 16) | (uint32_t)sizeof(r);
	memcpy(buf, &r, sizeof(r));
	memcpy(buf + sizeof(r), "hi", 3);
	return (uint32_t)sizeof(r) + 8;
}

static const char vals_body[] = "vals: a=42 b=0 x=0 s=hi ch=0 big=0 ubig=0 nm= small=0 neg=0\n";

static void expect_line(int32_t pid, uint8_t preempt, uint32_t cpu, uint64_t ts,
			const char *want_prefix, const char *ctx)
{
	unsigned char payload[256] __attribute__((aligned(8)));
	struct fdr_record rec = { 0 };
	struct fdr_buf b = { 0 };
	char want[512];

	rec.cpu = cpu;
	rec.ts = ts;
	rec.len = vals_payload(payload, pid, preempt);
	rec.payload = payload;
	cr_assert_eq(fdr_format_record(env.s, 0, &rec, &b), 0);
	snprintf(want, sizeof(want), "%s%s", want_prefix, vals_body);
	cr_assert_str_eq(b.data, want, "%s:\n'%s'\nexpected\n'%s'", ctx, b.data, want);
	fdr_buf_free(&b);
}

Test(format, record_line_columns)
{
	setup();
	cr_assert_eq(fdr_sync(), 0);
	save_comm(1234, "bash", 1234);
	save_comm(77, "abcdefghijklmno", 70);
	save_comm(1234567, "long-pid", 1);
	/* "%16s-%-7d [%03d] ..... %5lu.%06lu: NAME: BODY" */
	expect_line(1234, 0, 0, 409631935000ull,
		    "            bash-1234    [000] .....   409.631935: ", "plain");
	expect_line(77, 0, 1, 1500,
		    " abcdefghijklmno-77      [001] .....     0.000002: ", "15-char comm");
	expect_line(1234567, 0, 12, 999999500,
		    "        long-pid-1234567 [012] .....     1.000000: ", "7-digit pid");
	expect_line(0, 0, 0, 0, "          <idle>-0       [000] .....     0.000000: ", "pid 0");
	expect_line(4242, 0, 0, 0,
		    "           <...>-4242    [000] .....     0.000000: ", "unknown comm");
	expect_line(1234, 1, 3, 5000000000ull,
		    "            bash-1234    [003] ...1.     5.000000: ",
		    "nested write: preempt-depth column");
	/* a comm saved for another pid in the same slot must not be shown */
	expect_line(1234 + FDR_CMDLINE_SLOTS, 0, 0, 0,
		    "           <...>-9426    [000] .....     0.000000: ", "slot of another pid");
}

Test(format, record_line_options)
{
	setup();
	save_comm(1234, "bash", 1200);
	save_comm(55, "notgid", 0);
	cr_assert_eq(fdr_test_puts(env.s, "options/record-tgid", O_TRUNC, "1\n"), 2);
	expect_line(1234, 0, 0, 409631935000ull,
		    "            bash-1234    (   1200) [000] .....   409.631935: ", "record-tgid");
	expect_line(55, 0, 0, 0, "          notgid-55      (-------) [000] .....     0.000000: ",
		    "unknown tgid");
	cr_assert_eq(fdr_test_puts(env.s, "options/record-tgid", O_TRUNC, "0\n"), 2);
	cr_assert_eq(fdr_test_puts(env.s, "options/irq-info", O_TRUNC, "0\n"), 2);
	/* "[%03d] " then " %5lu.%06lu": the flags column and nothing in its place */
	expect_line(1234, 0, 0, 409631935000ull,
		    "            bash-1234    [000]    409.631935: ", "irq-info off");
	cr_assert_eq(fdr_test_puts(env.s, "options/context-info", O_TRUNC, "0\n"), 2);
	expect_line(1234, 0, 0, 409631935000ull, "", "context-info off");
	cr_assert_eq(fdr_test_puts(env.s, "options/context-info", O_TRUNC, "1\n"), 2);
	cr_assert_eq(fdr_test_puts(env.s, "options/irq-info", O_TRUNC, "1\n"), 2);
	cr_assert_eq(fdr_test_puts(env.s, "trace_clock", O_TRUNC, "x86-tsc\n"), 8);
	expect_line(1234, 0, 0, 2,
		    "            bash-1234    [000] .....            2: ", "counter clock");
}

/* ---- bodies ---- */

Test(format, default_print_all_kinds)
{
	struct fdr_abi_event e;
	unsigned char buf[256] __attribute__((aligned(8)));
	rec_all r;
	struct fdr_buf b = { 0 };
	static const unsigned char blob[] = { 0xde, 0xad, 0xbe, 0xef };

	cr_assert_eq(fdr_event_def_to_abi(&fdr_ev_tfmt_allkinds, &e), 0);
	memset(&r, 0, sizeof(r));
	r.s8 = -8;
	r.u8 = 200;
	r.s16 = -16000;
	r.u16 = 60000;
	r.s32 = -2000000000;
	r.u32 = 4000000000u;
	r.s64 = -9000000000000000000ll;
	r.u64 = 18000000000000000000ull;
	r.flag = 1;
	memcpy(r.name, "abcdefghijklmno", 16);
	r.str = (6u << 16) | (uint32_t)sizeof(r);
	r.blob = (4u << 16) | (uint32_t)(sizeof(r) + 6);
	memcpy(buf, &r, sizeof(r));
	memcpy(buf + sizeof(r), "hello", 6);
	memcpy(buf + sizeof(r) + 6, blob, 4);
	cr_assert_eq(fdr_format_body(&e, buf, (uint32_t)sizeof(r) + 10, &b), 0);
	cr_assert_str_eq(
		b.data,
		"s8=-8 u8=200 s16=-16000 u16=60000 s32=-2000000000 u32=4000000000 "
		"s64=-9000000000000000000 u64=18000000000000000000 flag=1 name=abcdefghijklmno "
		"str=hello blob=deadbeef");
	fdr_buf_free(&b);
}

/*
 * The record line's default print writes integers through the event's cached plan,
 * fdr_format_body() through the registry: both must print every value alike, and
 * as printf does. Values at each digit-count edge, the extremes, and random ones.
 */
Test(format, record_line_integers_match_printf)
{
	static const uint64_t edges[] = { 0,
					  9,
					  10,
					  99,
					  100,
					  999,
					  1000,
					  9999,
					  10000,
					  99999999,
					  100000000,
					  4294967295u,
					  4294967296ull,
					  9999999999999999ull,
					  10000000000000000ull,
					  9223372036854775807ull,
					  9223372036854775808ull,
					  18446744073709551615ull };
	unsigned char buf[256] __attribute__((aligned(8)));
	uint64_t seed = 0x9e3779b97f4a7c15ull;
	int k;

	setup();
	cr_assert_eq(fdr_sync(), 0);
	save_comm(4321, "ints", 4321);
	for (k = 0; k < 4000; k++) {
		const struct fdr_abi_event *e =
			fdr_event_by_id(fdr_session_control(env.s), fdr_ev_tfmt_allkinds.id);
		struct fdr_record rec = { 0 };
		struct fdr_buf line = { 0 }, body = { 0 };
		char want[512];
		uint64_t v[8];
		rec_all r;
		int i;

		cr_assert_not_null(e);
		for (i = 0; i < 8; i++) {
			seed ^= seed << 13;
			seed ^= seed >> 7;
			seed ^= seed << 17;
			v[i] = k < (int)(sizeof(edges) / sizeof(edges[0])) ?
				       edges[k] - (uint64_t)i * (k & 1) :
				       seed >> (seed % 64);
		}
		memset(&r, 0, sizeof(r));
		r.fdr__common.type = (uint16_t)fdr_ev_tfmt_allkinds.id;
		r.fdr__common.pid = 4321;
		r.s8 = (int8_t)v[0];
		r.u8 = (uint8_t)v[1];
		r.s16 = (int16_t)v[2];
		r.u16 = (uint16_t)v[3];
		r.s32 = (int32_t)v[4];
		r.u32 = (uint32_t)v[5];
		r.s64 = (int64_t)v[6];
		r.u64 = v[7];
		r.flag = k & 1;
		r.str = (uint32_t)sizeof(r); /* empty strings */
		r.blob = (uint32_t)sizeof(r);
		memcpy(buf, &r, sizeof(r));
		rec.ts = (uint64_t)k * 1000;
		rec.len = (uint32_t)sizeof(r) + 8;
		rec.payload = buf;
		memset(buf + sizeof(r), 0, 8);
		cr_assert_eq(fdr_format_record(env.s, 0, &rec, &line), 0);
		cr_assert_eq(fdr_format_body(e, buf, rec.len, &body), 0);
		snprintf(want, sizeof(want),
			 "s8=%d u8=%u s16=%d u16=%u s32=%d u32=%u s64=%lld u64=%llu flag=%d name= "
			 "str= blob=",
			 r.s8, r.u8, r.s16, r.u16, r.s32, r.u32, (long long)r.s64,
			 (unsigned long long)r.u64, r.flag);
		cr_assert_str_eq(body.data, want, "record %d: body", k);
		cr_assert(strstr(line.data, ": allkinds: ") != NULL, "record %d: '%s'", k,
			  line.data);
		cr_assert(fdr_buf_printf(&body, "\n") == 0);
		cr_assert_str_eq(strstr(line.data, ": allkinds: ") + 12, body.data,
				 "record %d: the line's body differs from fdr_format_body()", k);
		fdr_buf_free(&line);
		fdr_buf_free(&body);
	}
}

/*
 * The line's "comm-pid" column and the seconds of its timestamp are remembered
 * from record to record: a comm saved again, a pid sharing the slot, or another
 * second must show at once.
 */
Test(format, record_line_caches_follow_changes)
{
	setup();
	cr_assert_eq(fdr_sync(), 0);
	save_comm(1234, "bash", 1234);
	expect_line(1234, 0, 0, 5000001000ull,
		    "            bash-1234    [000] .....     5.000001: ", "first");
	expect_line(1234, 0, 0, 5999999000ull,
		    "            bash-1234    [000] .....     5.999999: ", "same second");
	save_comm(1234, "zsh", 1234);
	expect_line(1234, 0, 0, 5999999500ull,
		    "             zsh-1234    [000] .....     6.000000: ",
		    "comm saved again; rounded into the next second");
	save_comm(1234 + FDR_CMDLINE_SLOTS, "other", 1);
	expect_line(1234, 0, 0, 5000002000ull,
		    "           <...>-1234    [000] .....     5.000002: ",
		    "slot taken by another pid; back a second");
	expect_line(1234 + FDR_CMDLINE_SLOTS, 0, 0, 123456789000000000ull,
		    "           other-9426    [000] ..... 123456789.000000: ", "that pid");
	save_comm(1234, "bash", 1234);
	expect_line(1234, 0, 0, 0,
		    "            bash-1234    [000] .....     0.000000: ", "saved again");
}

Test(format, custom_print)
{
	struct fdr_abi_event e;
	unsigned char buf[128] __attribute__((aligned(8)));
	rec_custom r;
	struct fdr_buf b = { 0 };

	cr_assert_eq(fdr_event_def_to_abi(&fdr_ev_tfmt_custom, &e), 0);
	cr_assert_eq(e.nr_print_args, 9, "print args a, b, x, x, s, ch, a, b, big");
	memset(&r, 0, sizeof(r));
	r.a = -5;
	r.b = 7;
	r.x = 0xbeef;
	r.ch = 'Z';
	r.big = -1234567890123ll;
	r.s = (3u << 16) | (uint32_t)sizeof(r);
	memcpy(buf, &r, sizeof(r));
	memcpy(buf + sizeof(r), "hi", 3);
	cr_assert_eq(fdr_format_body(&e, buf, (uint32_t)sizeof(r) + 3, &b), 0);
	cr_assert_str_eq(
		b.data,
		"a=-5 b=7 x=beef X=0000BEEF s=hi c=Z w=[   -5] l=[7   ] big=-1234567890123 100%");
	fdr_buf_free(&b);
}

/* One row: a print format, the fields it names, the expected body. */
struct pcase {
	const char *fmt;
	const char *args;
	const char *want;
};

static const struct pcase pcases[] = {
	{ "%d", "a", "-5" },
	{ "%i", "a", "-5" },
	{ "%u", "b", "7" },
	{ "%x", "x", "beef" },
	{ "%X", "x", "BEEF" },
	{ "%08x", "x", "0000beef" },
	{ "%#x", "x", "0xbeef" },
	{ "%5d|", "a", "   -5|" },
	{ "%-5d|", "a", "-5   |" },
	{ "%+d", "b", "+7" },
	{ "%05d", "a", "-0005" },
	{ "%s", "s", "hi" },
	{ "%5s|", "s", "   hi|" },
	{ "%-5s|", "s", "hi   |" },
	{ "%.1s", "s", "h" },
	{ "[%s]", "nm", "[abc]" }, /* a char array */
	{ "%c%c", "ch, ch", "ZZ" },
	{ "%ld", "a", "-5" },
	{ "%lld", "big", "-1234567890123" },
	{ "%llu", "ubig", "18446744073709551615" },
	{ "%lu", "ubig", "18446744073709551615" },
	{ "%llx", "ubig", "ffffffffffffffff" },
	{ "%d", "small", "200" }, /* u8 is not sign-extended */
	{ "%d", "neg", "-300" }, /* s16 is */
	{ "%hd", "neg", "-300" },
	{ "%p", "x", "0xbeef" },
	{ "a=%d b=%u s=%s", "a b s", "a=-5 b=7 s=hi" },
	{ "%d,%d", "a,b", "-5,7" },
	{ "%%d", "a", "%d" }, /* a field listed but not used */
};

static void vals_record(unsigned char *buf, uint32_t *len)
{
	rec_vals r;

	memset(&r, 0, sizeof(r));
	r.a = -5;
	r.b = 7;
	r.x = 0xbeef;
	r.ch = 'Z';
	r.big = -1234567890123ll;
	r.ubig = UINT64_MAX;
	memcpy(r.nm, "abc", 4);
	r.small = 200;
	r.neg = -300;
	r.s = (3u << 16) | (uint32_t)sizeof(r);
	memcpy(buf, &r, sizeof(r));
	memcpy(buf + sizeof(r), "hi", 3);
	*len = (uint32_t)sizeof(r) + 3;
}

/* Build the registry form of tfmt:vals with another print format. */
static void vals_event(const char *fmt, const char *args, struct fdr_abi_event *e)
{
	struct fdr_event_def d = fdr_ev_tfmt_vals;

	d.print_fmt = fmt;
	d.print_args = args;
	cr_assert_eq(fdr_event_def_to_abi(&d, e), 0);
}

static void run_pcases(const struct pcase *t, size_t n)
{
	unsigned char buf[128] __attribute__((aligned(8)));
	uint32_t len;
	size_t i;

	vals_record(buf, &len);
	for (i = 0; i < n; i++) {
		const struct pcase *pc = &t[i];
		struct fdr_abi_event e;
		struct fdr_buf b = { 0 };

		vals_event(pc->fmt, pc->args, &e);
		cr_assert_eq(fdr_format_body(&e, buf, len, &b), 0);
		cr_expect_str_eq(b.data ? b.data : "", pc->want,
				 "[%zu] \"%s\", %s: '%s', expected '%s'", i, pc->fmt, pc->args,
				 b.data ? b.data : "", pc->want);
		fdr_buf_free(&b);
	}
}

Test(format, custom_print_conversions)
{
	run_pcases(pcases, sizeof(pcases) / sizeof(pcases[0]));
}

/*
 * printf semantics for a signed field under an unsigned conversion: the format
 * file says "%x", REC->a for an int, which the kernel and libtraceevent print
 * as 32 bits.
 */
Test(format, custom_print_signed_field_unsigned_conversion)
{
	static const struct pcase t[] = {
		{ "%x", "a", "fffffffb" },
		{ "%u", "a", "4294967291" },
		{ "%x", "neg", "fffffed4" }, /* s16 promoted to int */
		{ "%x", "ch", "5a" },
	};

	run_pcases(t, sizeof(t) / sizeof(t[0]));
}

/* FDR_EVENT_FMT(..., "text") with no field: the custom print is still the print. */
Test(format, custom_print_without_fields)
{
	static const struct pcase t[] = {
		{ "no conversions", "", "no conversions" },
		{ "100%%", "", "100%" },
	};

	run_pcases(t, sizeof(t) / sizeof(t[0]));
}

/* What must not happen: a missing argument or a mismatched conversion reads nothing it should not. */
Test(format, custom_print_mismatches)
{
	static const struct pcase bad[] = {
		{ "%d %d", "a", "-5 <bad>" }, /* more conversions than fields */
		{ "%s", "a", "<bad>" }, /* a string conversion of an integer */
		{ "%d", "s", "<bad>" }, /* an integer conversion of a string */
	};
	unsigned char buf[128] __attribute__((aligned(8)));
	uint32_t len;
	size_t i;

	vals_record(buf, &len);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct fdr_abi_event e;
		struct fdr_buf b = { 0 };

		vals_event(bad[i].fmt, bad[i].args, &e);
		cr_assert_eq(fdr_format_body(&e, buf, len, &b), 0);
		cr_assert_str_eq(b.data, bad[i].want, "[%zu] \"%s\": '%s'", i, bad[i].fmt, b.data);
		fdr_buf_free(&b);
	}
	/* an unknown field name in the definition: the custom print is not used */
	{
		struct fdr_abi_event e;

		vals_event("%d", "nosuch", &e);
		cr_assert_eq(e.nr_print_args, 0);
		cr_assert_str_empty(e.print_fmt,
				    "a print naming an unknown field falls back to the default");
	}
}

/* Hostile records: lengths and __data_loc words that point outside the record. */
Test(format, hostile_records_stay_inside)
{
	struct fdr_abi_event e;
	unsigned char *buf;
	rec_all r;
	size_t i;
	static const struct {
		uint32_t len; /* record length given to the formatter */
		uint32_t str_loc;
		const char *must; /* substring the body must contain */
	} t[] = {
		{ 8, 0, "s8=<bad>" }, /* only the common header */
		{ 12, 0, "s32=<bad>" }, /* cut inside the fixed part */
		{ sizeof(rec_all), (5u << 16) | 1000, "str=<bad>" }, /* offset beyond the record */
		{ sizeof(rec_all), (0xffffu << 16) | sizeof(rec_all),
		  "str=<bad>" }, /* length beyond */
		{ sizeof(rec_all) + 4, (4u << 16) | sizeof(rec_all),
		  "str=xxxx " }, /* no NUL: stops at len */
	};

	cr_assert_eq(fdr_event_def_to_abi(&fdr_ev_tfmt_allkinds, &e), 0);
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct fdr_buf b = { 0 };

		memset(&r, 0, sizeof(r));
		r.str = t[i].str_loc;
		r.blob = (uint32_t)sizeof(r) << 0;
		/* the record is copied to the end of an exact-size allocation (ASan) */
		buf = malloc(t[i].len);
		cr_assert_not_null(buf);
		memcpy(buf, &r, t[i].len < sizeof(r) ? t[i].len : sizeof(r));
		if (t[i].len > sizeof(r))
			memset(buf + sizeof(r), 'x', t[i].len - sizeof(r));
		cr_assert_eq(fdr_format_body(&e, buf, t[i].len, &b), 0);
		cr_assert_not_null(strstr(b.data, t[i].must), "[%zu] body '%s' lacks '%s'", i,
				   b.data, t[i].must);
		fdr_buf_free(&b);
		free(buf);
	}
}

/* ---- end to end: the event macro, the ring, the trace file ---- */

Test(format, trace_lines_end_to_end)
{
	static const unsigned char blob[] = { 0x00, 0x01, 0xfe, 0xff };
	char *txt, want[512], *line;
	regex_t re;
	pid_t tid = (pid_t)syscall(SYS_gettid);

	setup();
	cr_assert_eq(fdr_test_set_enabled(env.s, &fdr_ev_tfmt_allkinds, 0, 1), 0);
	cr_assert_eq(fdr_test_set_enabled(env.s, &fdr_ev_tfmt_custom, 0, 1), 0);
	fdr_tfmt_allkinds(-128, 255, -32768, 65535, INT32_MIN, UINT32_MAX, INT64_MIN, UINT64_MAX,
			  true, "a-name-longer-than-sixteen", "dyn string", blob, sizeof(blob));
	fdr_tfmt_custom(12, 34, 0xabc, "str", 'q', 1ll << 40);
	fdr_tfmt_allkinds(0, 0, 0, 0, 0, 0, 0, 0, false, NULL, NULL, NULL, 0);
	txt = cat("trace");
	snprintf(want, sizeof(want),
		 "allkinds: s8=-128 u8=255 s16=-32768 u16=65535 s32=-2147483648 u32=4294967295 "
		 "s64=-9223372036854775808 u64=18446744073709551615 flag=1 name=a-name-longer-t "
		 "str=dyn string blob=0001feff\n");
	cr_assert_not_null(strstr(txt, want), "trace lacks\n%s\ntrace:\n%s", want, txt);
	cr_assert_not_null(strstr(txt,
				  "custom: a=12 b=34 x=abc X=00000ABC s=str c=q w=[   12] l=[34  ] "
				  "big=1099511627776 100%\n"),
			   "trace:\n%s", txt);
	cr_assert_not_null(
		strstr(txt, "allkinds: s8=0 u8=0 s16=0 u16=0 s32=0 u32=0 s64=0 u64=0 flag=0 name= "
			    "str= blob=\n"),
		"NULL strings and empty arrays print empty:\n%s", txt);
	/* the context columns of a real line */
	snprintf(
		want, sizeof(want),
		"^         fdrtest-%-7d \\[[0-9]{3}\\] \\.\\.\\.\\.\\. +[0-9]+\\.[0-9]{6}: custom: ",
		(int)tid);
	cr_assert_eq(regcomp(&re, want, REG_EXTENDED | REG_NEWLINE | REG_NOSUB), 0);
	line = strstr(txt, "custom: ");
	cr_assert_not_null(line);
	cr_assert_eq(regexec(&re, txt, 0, NULL, 0), 0, "no line matches '%s':\n%s", want, txt);
	regfree(&re);
	free(txt);
}

/* ---- trace_marker lines ---- */

static const char *after(const char *hay, const char *needle)
{
	const char *p = strstr(hay, needle);

	return p ? p + strlen(needle) : NULL;
}

Test(format, marker_lines)
{
	static const struct {
		const char *text;
		size_t len;
		const char *want; /* what follows "tracing_mark_write: " */
		size_t want_len;
	} t[] = {
		{ "hello", 5, "hello\n", 6 }, /* a newline is added */
		{ "with nl\n", 8, "with nl\n", 8 }, /* not doubled */
		{ "", 0, "\n", 1 }, /* an empty write is an empty line */
		{ "two\nlines", 9, "two\nlines\n", 10 },
		{ "ab\0cd", 5, "ab", 2 }, /* a NUL cuts the text, newline included */
	};
	char *txt;
	const char *p;
	size_t i;

	setup();
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		cr_assert_eq(fdr_test_write(env.s, "trace", O_TRUNC, "\n", 1, NULL, 0), 1);
		cr_assert_geq(fdr_marker_write(t[i].text, t[i].len), 0, "[%zu] marker refused", i);
		cr_assert_gt(fdr_marker_write("next", 4), 0);
		txt = cat("trace");
		p = after(txt, "tracing_mark_write: ");
		cr_assert_not_null(p, "[%zu] no marker line:\n%s", i, txt);
		cr_assert_eq(strncmp(p, t[i].want, t[i].want_len), 0,
			     "[%zu] marker shows '%.*s', expected '%.*s'", i, (int)t[i].want_len, p,
			     (int)t[i].want_len, t[i].want);
		/* the next record follows right after (no newline after a NUL-cut text) */
		cr_assert_neq(p[t[i].want_len], '\n', "[%zu] extra newline after the marker text",
			      i);
		cr_assert_eq(strncmp(after(p, "tracing_mark_write: "), "next\n", 5), 0);
		free(txt);
	}
	/* fdr_marker() formats */
	cr_assert_eq(fdr_test_write(env.s, "trace", O_TRUNC, "\n", 1, NULL, 0), 1);
	cr_assert_gt(fdr_marker("x=%d s=%s", 42, "str"), 0);
	txt = cat("trace");
	cr_assert_not_null(strstr(txt, "tracing_mark_write: x=42 s=str\n"), "trace:\n%s", txt);
	free(txt);
}

Test(format, marker_file_lines)
{
	char *txt;

	setup();
	cr_assert_eq(fdr_test_write(env.s, "trace_marker", 0, "ab\0cd", 5, NULL, 0), 5);
	cr_assert_eq(fdr_test_puts(env.s, "trace_marker", 0, "hi\n"), 3);
	txt = cat("trace");
	cr_assert_not_null(strstr(txt, "tracing_mark_write: ab"), "trace:\n%s", txt);
	cr_assert_null(strstr(txt, "tracing_mark_write: ab\n"),
		       "the NUL-cut line has no newline:\n%s", txt);
	cr_assert_null(strstr(txt, "cd"), "nothing after the NUL is shown");
	cr_assert_not_null(strstr(txt, "tracing_mark_write: hi\n"), "trace:\n%s", txt);
	cr_assert_eq(fdr_test_count(txt, "tracing_mark_write: hi\n"), 1);
	free(txt);
}

/* ---- the trace header ---- */

static const char hdr_legend[] = "#                                _-----=> irqs-off/BH-disabled\n"
				 "#                               / _----=> need-resched\n"
				 "#                              | / _---=> hardirq/softirq\n"
				 "#                              || / _--=> preempt-depth\n"
				 "#                              ||| / _-=> migrate-disable\n"
				 "#                              |||| /     delay\n";

Test(format, trace_header)
{
	char want[2048], *txt;
	int nr;

	setup();
	nr = fdr_ring_nr_cpus(env.s, 0);
	snprintf(want, sizeof(want),
		 "# tracer: nop\n"
		 "#\n"
		 "# entries-in-buffer/entries-written: 0/0   #P:%d\n"
		 "#\n"
		 "%s"
		 "#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION\n"
		 "#              | |         |   |||||     |         |\n",
		 nr, hdr_legend);
	txt = cat("trace");
	cr_assert_str_eq(txt, want, "empty trace:\n%s\nexpected:\n%s", txt, want);
	free(txt);

	/* irq-info off */
	cr_assert_eq(fdr_test_puts(env.s, "options/irq-info", O_TRUNC, "0\n"), 2);
	snprintf(want, sizeof(want),
		 "# tracer: nop\n"
		 "#\n"
		 "# entries-in-buffer/entries-written: 0/0   #P:%d\n"
		 "#\n"
		 "#           TASK-PID     CPU#     TIMESTAMP  FUNCTION\n"
		 "#              | |         |         |         |\n",
		 nr);
	txt = cat("trace");
	cr_assert_str_eq(txt, want, "irq-info off:\n%s", txt);
	free(txt);
	cr_assert_eq(fdr_test_puts(env.s, "options/irq-info", O_TRUNC, "1\n"), 2);

	/* record-tgid: legend and columns shifted by 10 */
	cr_assert_eq(fdr_test_puts(env.s, "options/record-tgid", O_TRUNC, "1\n"), 2);
	txt = cat("trace");
	cr_assert_not_null(
		strstr(txt,
		       "#                                          _-----=> irqs-off/BH-disabled\n"),
		"record-tgid legend:\n%s", txt);
	cr_assert_not_null(
		strstr(txt, "#           TASK-PID       TGID    CPU#  |||||  TIMESTAMP  FUNCTION\n"
			    "#              | |           |       |   |||||     |         |\n"),
		"record-tgid columns:\n%s", txt);
	free(txt);
	cr_assert_eq(fdr_test_puts(env.s, "options/record-tgid", O_TRUNC, "0\n"), 2);

	/* context-info off: two lines only */
	cr_assert_eq(fdr_test_puts(env.s, "options/context-info", O_TRUNC, "0\n"), 2);
	txt = cat("trace");
	cr_assert_str_eq(txt, "# tracer: nop\n#\n", "context-info off:\n%s", txt);
	free(txt);
}

Test(format, trace_header_counts)
{
	char want[128], *txt;
	int i;

	setup();
	for (i = 0; i < 5; i++)
		cr_assert_gt(fdr_marker("m%d", i), 0);
	snprintf(want, sizeof(want), "# entries-in-buffer/entries-written: 5/5   #P:%d\n",
		 fdr_ring_nr_cpus(env.s, 0));
	txt = cat("trace");
	cr_assert_not_null(strstr(txt, want), "trace:\n%s", txt);
	cr_assert_eq(fdr_test_count(txt, "tracing_mark_write: m"), 5);
	free(txt);
	/* per_cpu/cpuN/trace prints the all-CPU totals in its header too */
	txt = cat("per_cpu/cpu0/trace");
	cr_assert_not_null(strstr(txt, want), "per_cpu/cpu0/trace:\n%s", txt);
	free(txt);
}
