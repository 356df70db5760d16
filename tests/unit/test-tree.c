// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test-tree.c - the control tree, file by file (docs/tracefs.md):
 * what each write is accepted or refused with, what reads back afterwards, the
 * error_log entry and its caret, errno values, directory listings, instances.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

#include <criterion/criterion.h>

#include "fdr-criterion.h"
#include "fdr-test.h"

/* clang-format off */
FDR_EVENT(ttree, alpha, FDR_PROTO(int v), FDR_ARGS(v), FDR_FIELDS(fdr_field_int(int, v, v)))
FDR_EVENT(ttree, beta, FDR_PROTO(int v), FDR_ARGS(v), FDR_FIELDS(fdr_field_int(int, v, v)))
FDR_EVENT(tother, alpha, FDR_PROTO(int v), FDR_ARGS(v), FDR_FIELDS(fdr_field_int(int, v, v)))
FDR_EVENT(tother, gamma, FDR_PROTO(int v), FDR_ARGS(v), FDR_FIELDS(fdr_field_int(int, v, v)))
/* clang-format on */

#define OK 0 /* expected: the whole write accepted */

static struct fdr_test_env env;

static void init(void)
{
	cr_assert_eq(fdr_test_setup(&env, NULL), 0, "session setup failed");
	cr_assert(fdr_ev_ttree_alpha.slot && fdr_ev_tother_gamma.slot,
		  "test events not registered");
}

static void fini(void)
{
	fdr_test_teardown(&env);
}

TestSuite(tree, .init = init, .fini = fini, .timeout = 30);

static char *cat(const char *path)
{
	int err;
	char *t = fdr_test_read(env.s, path, 0, NULL, &err);

	cr_assert_not_null(t, "read %s: %s", path, strerror(-err));
	return t;
}

static int cmp_line(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* @s with its lines sorted: list files (set_event) promise no order. */
static char *sorted_lines(const char *s)
{
	char *copy = strdup(s), *out = calloc(1, strlen(s) + 2), *save = NULL, *tok;
	char **v = calloc(strlen(s) + 1, sizeof(*v));
	size_t n = 0, i;

	cr_assert(copy && out && v);
	for (tok = strtok_r(copy, "\n", &save); tok; tok = strtok_r(NULL, "\n", &save))
		v[n++] = tok;
	qsort(v, n, sizeof(*v), cmp_line);
	for (i = 0; i < n; i++) {
		strcat(out, v[i]);
		strcat(out, "\n");
	}
	free(v);
	free(copy);
	return out;
}

static void expect_content(const char *path, const char *want, const char *ctx)
{
	char *t = cat(path);

	if (strstr(path, "set_event")) {
		char *a = sorted_lines(t), *b = sorted_lines(want);

		cr_assert_str_eq(a, b, "%s: %s reads\n'%s'\nexpected (in any order)\n'%s'", ctx,
				 path, t, want);
		free(a);
		free(b);
	} else {
		cr_assert_str_eq(t, want, "%s: %s reads\n'%s'\nexpected\n'%s'", ctx, path, t, want);
	}
	free(t);
}

static void expect_write(const char *path, int flags, const char *in, int want_err, const char *ctx)
{
	char msg[1024];
	ssize_t r = fdr_test_write(env.s, path, flags, in, strlen(in), msg, sizeof(msg));

	if (want_err == OK)
		cr_assert_eq(r, (ssize_t)strlen(in),
			     "%s: write '%s' to %s returned %zd (%s), expected success", ctx, in,
			     path, r, msg);
	else
		cr_assert_eq(r, -want_err, "%s: write '%s' to %s returned %zd, expected -%d", ctx,
			     in, path, r, want_err);
}

/* ---- tables of writes: input -> result -> what reads back ---- */

struct wcase {
	const char *path;
	int flags;
	const char *in; /* NULL: no write, only the check */
	int err; /* OK or an errno */
	const char *check; /* file to read afterwards (NULL: path) */
	const char *want; /* its content afterwards (NULL: not checked) */
};

static void run_table(const struct wcase *t, size_t n, const char *name)
{
	size_t i;

	for (i = 0; i < n; i++) {
		char ctx[128];

		snprintf(ctx, sizeof(ctx), "%s[%zu]", name, i);
		if (t[i].in)
			expect_write(t[i].path, t[i].flags, t[i].in, t[i].err, ctx);
		if (t[i].want)
			expect_content(t[i].check ? t[i].check : t[i].path, t[i].want, ctx);
	}
}

#define TABLE(t) run_table(t, sizeof(t) / sizeof(t[0]), #t)

Test(tree, tracing_on)
{
	static const struct wcase t[] = {
		{ "tracing_on", O_TRUNC, "0\n", OK, NULL, "0\n" },
		{ "tracing_on", O_TRUNC, "1\n", OK, NULL, "1\n" },
		{ "tracing_on", O_TRUNC, "0", OK, NULL, "0\n" },
		{ "tracing_on", O_TRUNC, "7\n", OK, NULL, "1\n" }, /* any other non-negative: 1 */
		{ "tracing_on", O_TRUNC, "0\n", OK, NULL, "0\n" },
		{ "tracing_on", O_TRUNC, "+1\n", OK, NULL,
		  "1\n" }, /* the kernel parser takes '+' */
		/* refused, and nothing changes */
		{ "tracing_on", O_TRUNC, "-1\n", EINVAL, NULL, "1\n" },
		{ "tracing_on", O_TRUNC, "abc\n", EINVAL, NULL, "1\n" },
		{ "tracing_on", O_TRUNC, " 1\n", EINVAL, NULL, "1\n" },
		{ "tracing_on", O_TRUNC, "1k\n", EINVAL, NULL, "1\n" },
		{ "tracing_on", O_TRUNC, "\n", EINVAL, NULL, "1\n" },
		{ "tracing_on", O_TRUNC, "1\n\n", EINVAL, NULL, "1\n" },
		{ "tracing_on", O_TRUNC, "0x0\n", EINVAL, NULL, "1\n" },
		{ "tracing_on", O_TRUNC, "0 \n", EINVAL, NULL, "1\n" },
		{ "tracing_on", O_TRUNC, "99999999999999999999999\n", EINVAL, NULL, "1\n" },
	};

	TABLE(t);
}

Test(tree, options_files)
{
	static const struct wcase t[] = {
		{ "options/overwrite", O_TRUNC, "0\n", OK, NULL, "0\n" },
		{ "options/overwrite", O_TRUNC, "1\n", OK, NULL, "1\n" },
		{ "options/overwrite", O_TRUNC, "2\n", EINVAL, NULL, "1\n" }, /* 0/1 only */
		{ "options/overwrite", O_TRUNC, "on\n", EINVAL, NULL, "1\n" },
		{ "options/overwrite", O_TRUNC, "\n", EINVAL, NULL, "1\n" },
		{ "options/record-tgid", O_TRUNC, "1\n", OK, NULL, "1\n" },
		{ "options/irq-info", O_TRUNC, "0\n", OK, NULL, "0\n" },
		{ "options/markers", O_TRUNC, "0\n", OK, NULL, "0\n" },
		{ "options/context-info", O_TRUNC, "0\n", OK, NULL, "0\n" },
		{ "options/record-cmd", O_TRUNC, "1\n", OK, NULL, "1\n" },
	};

	TABLE(t);
}

/*
 * set_event_pid and set_event_notrace_pid, as the kernel's (checked on a live
 * one: tests/integration/parity.sh): '>' replaces, '>>' adds, pids read as
 * kstrtoul does (base 0, '+' taken), any whitespace between them, duplicates
 * once, listed ascending; a bad token refuses the whole write.
 */
static void pid_file_table(const char *f)
{
	const struct wcase t[] = {
		{ f, O_TRUNC, "", OK, NULL, "" },
		{ f, O_TRUNC, "5 3 7\n", OK, NULL, "3\n5\n7\n" },
		{ f, O_APPEND, "1 2 3\n", OK, NULL, "1\n2\n3\n5\n7\n" },
		{ f, O_APPEND, "9 abc\n", EINVAL, NULL, "1\n2\n3\n5\n7\n" },
		{ f, O_APPEND, "-1\n", EINVAL, NULL, "1\n2\n3\n5\n7\n" },
		{ f, O_APPEND, "4,5\n", EINVAL, NULL, "1\n2\n3\n5\n7\n" },
		{ f, O_APPEND, "2147483648\n", EINVAL, NULL, "1\n2\n3\n5\n7\n" },
		{ f, O_APPEND, "+\n", EINVAL, NULL, "1\n2\n3\n5\n7\n" },
		{ f, O_APPEND, "0x\n", EINVAL, NULL, "1\n2\n3\n5\n7\n" },
		{ f, O_APPEND, "", OK, NULL, "1\n2\n3\n5\n7\n" }, /* nothing added */
		/* '>' empties at open, even if the write is then refused (kernel) */
		{ f, O_TRUNC, "9 abc\n", EINVAL, NULL, "" },
		{ f, O_TRUNC, "3 3\n", OK, NULL, "3\n" },
		{ f, O_TRUNC, "\n", OK, NULL, "" },
		{ f, O_TRUNC, "0x10 00012 +4\t 0\n", OK, NULL, "0\n4\n10\n16\n" },
		{ f, O_TRUNC, " 4 \n", OK, NULL, "4\n" },
		{ f, O_TRUNC, "2147483647\n", OK, NULL, "2147483647\n" },
		{ f, O_TRUNC, "", OK, NULL, "" },
	};
	char in[512], want[512];
	size_t off = 0, woff = 0;
	int i;

	run_table(t, sizeof(t) / sizeof(t[0]), f);
	/* at most FDR_MAX_PIDS: one more refuses the write and changes nothing */
	for (i = 1; i <= FDR_MAX_PIDS; i++) {
		off += (size_t)snprintf(in + off, sizeof(in) - off, "%d ", i * 10);
		woff += (size_t)snprintf(want + woff, sizeof(want) - woff, "%d\n", i * 10);
	}
	expect_write(f, O_TRUNC, in, OK, f);
	expect_write(f, O_APPEND, "5", EINVAL, f);
	expect_write(f, O_APPEND, "10 20", OK, f); /* listed already: nothing added */
	{
		char *got = cat(f); /* ascending, not in the order written */

		cr_assert_str_eq(got, want, "%s reads\n%s", f, got);
		free(got);
	}
	expect_write(f, O_TRUNC, "", OK, f);
}

Test(tree, set_event_pid)
{
	pid_file_table("set_event_pid");
}

Test(tree, set_event_notrace_pid)
{
	pid_file_table("set_event_notrace_pid");
	/* each list is its own, and each instance's */
	expect_write("set_event_notrace_pid", O_TRUNC, "3", OK, "notrace");
	expect_write("set_event_pid", O_TRUNC, "4", OK, "pid");
	cr_assert_eq(fdr_tree_mkdir(env.s, "instances/np"), 0);
	expect_write("instances/np/set_event_notrace_pid", O_TRUNC, "5", OK, "instance");
	expect_content("set_event_notrace_pid", "3\n", "top notrace");
	expect_content("set_event_pid", "4\n", "top pid");
	expect_content("instances/np/set_event_notrace_pid", "5\n", "instance notrace");
	expect_content("instances/np/set_event_pid", "", "instance pid");
	/* rmdir + mkdir: the slot comes back empty */
	cr_assert_eq(fdr_tree_rmdir(env.s, "instances/np"), 0);
	cr_assert_eq(fdr_tree_mkdir(env.s, "instances/np"), 0);
	expect_content("instances/np/set_event_notrace_pid", "", "a new instance");
}

Test(tree, event_fork_option)
{
	static const struct wcase t[] = {
		{ "options/event-fork", 0, NULL, OK, NULL, "0\n" }, /* off by default */
		{ "options/event-fork", O_TRUNC, "1\n", OK, NULL, "1\n" },
		{ "options/event-fork", O_TRUNC, "0\n", OK, NULL, "0\n" },
		{ "options/event-fork", O_TRUNC, "01\n", OK, NULL, "1\n" },
		{ "options/event-fork", O_TRUNC, "2\n", EINVAL, NULL, "1\n" },
		{ "options/event-fork", O_TRUNC, " 1\n", EINVAL, NULL, "1\n" },
		{ "options/event-fork", O_TRUNC, "0x1\n", EINVAL, NULL, "1\n" },
		{ "options/event-fork", O_TRUNC, "abc\n", EINVAL, NULL, "1\n" },
		{ "trace_options", O_TRUNC, "noevent-fork\n", OK, "options/event-fork", "0\n" },
		{ "trace_options", O_TRUNC, "event-fork\n", OK, "options/event-fork", "1\n" },
		/*
		 * on: the pids of tasks that do not exist are dropped as the lists
		 * are read or written (4194304 is above any pid_max); the last pid
		 * of set_event_pid stays, as an emptied list would admit everyone
		 */
		{ "set_event_notrace_pid", O_TRUNC, "1 4194304", OK, NULL, "1\n" },
		{ "set_event_notrace_pid", O_TRUNC, "4194304", OK, NULL, "" },
		{ "set_event_pid", O_TRUNC, "1 4194304", OK, NULL, "1\n" },
		{ "set_event_pid", O_TRUNC, "4194304", OK, NULL, "4194304\n" },
		{ "set_event_pid", O_TRUNC, "", OK, NULL, "" },
		/* off: kept */
		{ "options/event-fork", O_TRUNC, "0\n", OK, NULL, "0\n" },
		{ "set_event_notrace_pid", O_TRUNC, "1 4194304", OK, NULL, "1\n4194304\n" },
		{ "set_event_notrace_pid", O_TRUNC, "", OK, NULL, "" },
	};
	char *txt;

	TABLE(t);
	expect_write("options/event-fork", O_TRUNC, "1\n", OK, "on at the top");
	txt = cat("trace_options");
	cr_assert_not_null(strstr(txt, "\nevent-fork\n"), "trace_options:\n%s", txt);
	free(txt);
	/* a new instance starts with it off, as the kernel's (ZEROED_TRACE_FLAGS) */
	cr_assert_eq(fdr_tree_mkdir(env.s, "instances/ef"), 0);
	expect_content("instances/ef/options/event-fork", "0\n", "a new instance");
	txt = cat("instances/ef/trace_options");
	cr_assert_not_null(strstr(txt, "noevent-fork\n"), "trace_options:\n%s", txt);
	free(txt);
}

Test(tree, trace_options)
{
	static const struct wcase t[] = {
		{ "trace_options", O_TRUNC, "nooverwrite\n", OK, "options/overwrite", "0\n" },
		{ "trace_options", O_TRUNC, "overwrite\n", OK, "options/overwrite", "1\n" },
		{ "trace_options", O_TRUNC, "  noirq-info \n", OK, "options/irq-info", "0\n" },
		{ "trace_options", O_APPEND, "irq-info", OK, "options/irq-info", "1\n" },
		{ "trace_options", O_TRUNC, "record-tgid\n", OK, "options/record-tgid", "1\n" },
		{ "trace_options", O_TRUNC, "norecord-tgid\n", OK, "options/record-tgid", "0\n" },
		/* refused */
		{ "trace_options", O_TRUNC, "bogus\n", EINVAL, "options/overwrite", "1\n" },
		{ "trace_options", O_TRUNC, "nobogus\n", EINVAL, "options/overwrite", "1\n" },
		{ "trace_options", O_TRUNC, "overwrite print-parent\n", EINVAL, "options/overwrite",
		  "1\n" },
		{ "trace_options", O_TRUNC, "nooverwrite irq-info\n", EINVAL, "options/overwrite",
		  "1\n" },
		{ "trace_options", O_TRUNC, "\n", EINVAL, NULL, NULL },
		{ "trace_options", O_TRUNC, "no\n", EINVAL, NULL, NULL },
	};
	char *txt;

	TABLE(t);
	txt = cat("trace_options");
	cr_assert_not_null(strstr(txt, "overwrite\n"), "trace_options:\n%s", txt);
	cr_assert_not_null(strstr(txt, "norecord-tgid\n"), "trace_options:\n%s", txt);
	cr_assert_not_null(strstr(txt, "irq-info\n"));
	cr_assert_not_null(strstr(txt, "markers\n"));
	cr_assert_not_null(strstr(txt, "context-info\n"));
	cr_assert_null(strstr(txt, "nooverwrite\n"));
	free(txt);
}

static const char *const clock_names[] = { "local", "global",	"counter", "uptime", "perf",
					   "mono",  "mono_raw", "boot",	   "tai",    "x86-tsc" };

/* The trace_clock text with clock @cur in brackets (docs/tracefs.md, trace_clock). */
static void clock_line(const char *cur, char *buf, size_t len)
{
	size_t i, off = 0;

	for (i = 0; i < sizeof(clock_names) / sizeof(clock_names[0]); i++) {
		int sel = strcmp(clock_names[i], cur) == 0;

		off += (size_t)snprintf(buf + off, len - off, "%s%s%s%s", i ? " " : "",
					sel ? "[" : "", clock_names[i], sel ? "]" : "");
	}
	snprintf(buf + off, len - off, "\n");
}

Test(tree, trace_clock)
{
	char in[32], want[160];
	size_t i;

	expect_content("trace_clock",
		       "[local] global counter uptime perf mono mono_raw boot tai x86-tsc\n",
		       "default");
	for (i = 0; i < sizeof(clock_names) / sizeof(clock_names[0]); i++) {
		snprintf(in, sizeof(in), "%s\n", clock_names[i]);
		expect_write("trace_clock", O_TRUNC, in, OK, clock_names[i]);
		clock_line(clock_names[i], want, sizeof(want));
		expect_content("trace_clock", want, clock_names[i]);
	}
	expect_write("trace_clock", O_TRUNC, "  mono \n", OK, "whitespace stripped");
	expect_content("trace_clock",
		       "local global counter uptime perf [mono] mono_raw boot tai x86-tsc\n",
		       "mono");
	expect_write("trace_clock", O_TRUNC, "bogus\n", EINVAL, "unknown clock");
	expect_write("trace_clock", O_TRUNC, "mono boot\n", EINVAL, "two names");
	expect_write("trace_clock", O_TRUNC, "MONO\n", EINVAL, "names are case-sensitive");
	expect_write("trace_clock", O_TRUNC, "\n", EINVAL, "empty");
	expect_content("trace_clock",
		       "local global counter uptime perf [mono] mono_raw boot tai x86-tsc\n",
		       "unchanged after refusals");
}

Test(tree, buffer_size_kb)
{
	/* spec 6.2, 4 KiB sub-buffers: KiB written -> KiB read back */
	static const struct {
		const char *in;
		const char *want;
	} t[] = {
		{ "1\n", "7\n" },	{ "5\n", "7\n" },	{ "100\n", "103\n" },
		{ "1000\n", "1000\n" }, { "1408\n", "1410\n" },
	};
	static const struct wcase bad[] = {
		{ "buffer_size_kb", O_TRUNC, "0\n", EINVAL, NULL, "1410\n" },
		{ "buffer_size_kb", O_TRUNC, "abc\n", EINVAL, NULL, "1410\n" },
		{ "buffer_size_kb", O_TRUNC, "1408k\n", EINVAL, NULL, "1410\n" },
		{ "buffer_size_kb", O_TRUNC, "-5\n", EINVAL, NULL, "1410\n" },
		{ "buffer_size_kb", O_TRUNC, " 5\n", EINVAL, NULL, "1410\n" },
		{ "buffer_total_size_kb", 0, "1\n", EACCES, NULL, NULL }, /* read-only */
	};
	int nr = fdr_ring_nr_cpus(env.s, 0);
	size_t i;

	cr_assert_gt(nr, 0);
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		char total[32];

		expect_write("buffer_size_kb", O_TRUNC, t[i].in, OK, t[i].in);
		expect_content("buffer_size_kb", t[i].want, t[i].in);
		expect_content("per_cpu/cpu0/buffer_size_kb", t[i].want, t[i].in);
		snprintf(total, sizeof(total), "%d\n", atoi(t[i].want) * nr);
		expect_content("buffer_total_size_kb", total, t[i].in);
	}
	TABLE(bad);
}

Test(tree, buffer_size_kb_per_cpu)
{
	if (fdr_ring_nr_cpus(env.s, 0) < 2)
		cr_skip_test("needs two CPUs");
	expect_write("per_cpu/cpu1/buffer_size_kb", O_TRUNC, "100\n", OK, "one CPU");
	expect_content("per_cpu/cpu1/buffer_size_kb", "103\n", "resized CPU");
	expect_content("per_cpu/cpu0/buffer_size_kb", "1410\n", "other CPU untouched");
	expect_content("buffer_size_kb", "X\n", "CPUs differ");
	expect_write("buffer_size_kb", O_TRUNC, "5\n", OK, "all CPUs");
	expect_content("buffer_size_kb", "7\n", "equal again");
	expect_content("per_cpu/cpu1/buffer_size_kb", "7\n", "equal again");
}

Test(tree, buffer_subbuf_size_kb)
{
	static const struct wcase t[] = {
		{ "buffer_subbuf_size_kb", O_TRUNC, "1\n", OK, NULL,
		  "4\n" }, /* rounded up to pages */
		{ "buffer_subbuf_size_kb", O_TRUNC, "5\n", OK, NULL,
		  "8\n" }, /* to a power of two */
		{ "buffer_subbuf_size_kb", O_TRUNC, "8\n", OK, NULL, "8\n" },
		{ "buffer_subbuf_size_kb", O_TRUNC, "0\n", EINVAL, NULL, "8\n" },
		{ "buffer_subbuf_size_kb", O_TRUNC, "513\n", EINVAL, NULL, "8\n" },
		{ "buffer_subbuf_size_kb", O_TRUNC, "x\n", EINVAL, NULL, "8\n" },
	};

	expect_content("buffer_subbuf_size_kb", "4\n", "default");
	TABLE(t);
	/* header_page follows the sub-buffer size: data = size - 16 */
	expect_content("events/header_page",
		       "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
		       "\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"
		       "\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
		       "\tfield: char data;\toffset:16;\tsize:8176;\tsigned:0;\n",
		       "8 KiB sub-buffers");
}

Test(tree, current_tracer)
{
	static const struct wcase t[] = {
		{ "current_tracer", O_TRUNC, "nop\n", OK, NULL, "nop\n" },
		{ "current_tracer", O_TRUNC, " nop \n", OK, NULL, "nop\n" },
		{ "current_tracer", O_TRUNC, "function\n", EINVAL, NULL, "nop\n" },
		{ "current_tracer", O_TRUNC, "\n", EINVAL, NULL, "nop\n" },
		{ "available_tracers", O_TRUNC, "nop\n", EACCES, NULL, "nop\n" },
	};

	TABLE(t);
}

Test(tree, read_only_files)
{
	static const struct {
		const char *path;
		const char *want;
	} t[] = {
		{ "timestamp_mode", "[delta] absolute\n" },
		{ "available_tracers", "nop\n" },
		{ "current_tracer", "nop\n" },
		{ "buffer_subbuf_size_kb", "4\n" },
		{ "tracing_on", "1\n" },
		{ "set_event", "" },
		{ "error_log", "" },
		{ "events/ftrace/print/id", "5\n" },
		{ "events/header_event", "# compressed entry header\n"
					 "\ttype_len    :    5 bits\n"
					 "\ttime_delta  :   27 bits\n"
					 "\tarray       :   32 bits\n"
					 "\n"
					 "\tpadding     : type == 29\n"
					 "\ttime_extend : type == 30\n"
					 "\ttime_stamp : type == 31\n"
					 "\tdata max type_len  == 28\n" },
		{ "events/header_page",
		  "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
		  "\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"
		  "\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
		  "\tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;\n" },
	};
	static const char *const ro[] = { "timestamp_mode",
					  "available_events",
					  "available_tracers",
					  "README",
					  "saved_cmdlines",
					  "saved_tgids",
					  "printk_formats",
					  "buffer_total_size_kb",
					  "events/header_page",
					  "events/header_event",
					  "events/ttree/alpha/format",
					  "events/ttree/alpha/id",
					  "trace_pipe",
					  "per_cpu/cpu0/stats" };
	size_t i;
	char want[32], *txt;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		expect_content(t[i].path, t[i].want, t[i].path);
	snprintf(want, sizeof(want), "%u\n", fdr_ev_ttree_alpha.id);
	expect_content("events/ttree/alpha/id", want, "event id");
	for (i = 0; i < sizeof(ro) / sizeof(ro[0]); i++) {
		struct fdr_file *f = NULL;
		int r = fdr_file_open(env.s, ro[i], O_WRONLY, &f);

		cr_assert_eq(r, -EACCES, "opening read-only %s for writing: %d", ro[i], r);
		cr_assert_null(f);
	}
	txt = cat("available_events");
	cr_assert_not_null(strstr(txt, "ttree:alpha\n"));
	cr_assert_not_null(strstr(txt, "ttree:beta\n"));
	cr_assert_not_null(strstr(txt, "tother:alpha\n"));
	cr_assert_not_null(strstr(txt, "tother:gamma\n"));
	cr_assert_null(strstr(txt, "ftrace:print"), "internal record types are not listed");
	free(txt);
	txt = cat("README");
	cr_assert_not_null(strstr(txt, "set_event"), "README must describe our syntax");
	free(txt);
}

Test(tree, reads_by_offset)
{
	struct fdr_file *f;
	char *whole = cat("README"), piece[7], *got;
	size_t len = strlen(whole), off = 0;
	ssize_t n;

	got = malloc(len + 1);
	cr_assert_not_null(got);
	cr_assert_eq(fdr_file_open(env.s, "README", O_RDONLY, &f), 0);
	while ((n = fdr_file_read(f, piece, sizeof(piece))) > 0) {
		cr_assert_leq(off + (size_t)n, len);
		memcpy(got + off, piece, (size_t)n);
		off += (size_t)n;
	}
	cr_assert_eq(n, 0, "EOF after the last piece");
	fdr_file_close(f);
	cr_assert_eq(off, len);
	cr_assert_eq(memcmp(got, whole, len), 0, "7-byte reads continue where they stopped");
	free(got);
	free(whole);
}

/* ---- set_event ---- */

Test(tree, set_event_tokens)
{
	static const struct wcase t[] = {
		{ "set_event", O_TRUNC, "ttree:alpha\n", OK, NULL, "ttree:alpha\n" },
		{ "set_event", O_APPEND, "ttree:beta\n", OK, NULL, "ttree:alpha\nttree:beta\n" },
		{ "set_event", O_APPEND, "!ttree:alpha\n", OK, NULL, "ttree:beta\n" },
		{ "set_event", O_TRUNC, "ttree:*\n", OK, NULL, "ttree:alpha\nttree:beta\n" },
		{ "set_event", O_TRUNC, "ttree:\n", OK, NULL, "ttree:alpha\nttree:beta\n" },
		{ "set_event", O_TRUNC, "*:alpha\n", OK, NULL, "ttree:alpha\ntother:alpha\n" },
		{ "set_event", O_TRUNC, "alpha\n", OK, NULL,
		  "ttree:alpha\ntother:alpha\n" }, /* bare event */
		{ "set_event", O_TRUNC, "tother\n", OK, NULL,
		  "tother:alpha\ntother:gamma\n" }, /* bare system */
		{ "set_event", O_TRUNC, "*:*\n", OK, NULL,
		  "ttree:alpha\nttree:beta\ntother:alpha\ntother:gamma\n" },
		{ "set_event", O_APPEND, "!tother:*\n", OK, NULL, "ttree:alpha\nttree:beta\n" },
		{ "set_event", O_TRUNC, "*:\n", OK, NULL,
		  "ttree:alpha\nttree:beta\ntother:alpha\ntother:gamma\n" },
		{ "set_event", O_APPEND, "!*:*\n", OK, NULL, "" },
		{ "set_event", O_TRUNC, "ttree:alpha ttree:beta\ttother:gamma\n", OK, NULL,
		  "ttree:alpha\nttree:beta\ntother:gamma\n" },
		{ "set_event", O_TRUNC, "\n", OK, NULL, "" }, /* echo > set_event */
		{ "set_event", O_TRUNC, "ttree:al*\n", OK, NULL,
		  "ttree:alpha\n" }, /* globs: fdr extension */
		{ "set_event", O_TRUNC, "t*:?amma\n", OK, NULL, "tother:gamma\n" },
		/* the kernel's ':EVENT' (any system) and ':' (every event) */
		{ "set_event", O_TRUNC, ":alpha\n", OK, NULL, "ttree:alpha\ntother:alpha\n" },
		{ "set_event", O_TRUNC, ":\n", OK, NULL,
		  "ttree:alpha\nttree:beta\ntother:alpha\ntother:gamma\n" },
		/* refused */
		{ "set_event", O_TRUNC, "ttree:al$pha\n", EINVAL, NULL, "" },
		{ "set_event", O_TRUNC, "ttree;alpha\n", EINVAL, NULL, "" },
		{ "set_event", O_TRUNC, "a:b:c\n", EINVAL, NULL, "" },
		{ "set_event", O_TRUNC, "!\n", EINVAL, NULL, "" },
		{ "set_event", O_TRUNC, "!:\n", OK, NULL, "" },
		{ "set_event", O_TRUNC, "!nosuch:event\n", EINVAL, NULL,
		  "" }, /* '!' that matches nothing */
	};

	TABLE(t);
}

Test(tree, set_event_trunc_clears_even_on_error)
{
	expect_write("set_event", O_TRUNC, "ttree:alpha\n", OK, "enable");
	expect_write("set_event", O_TRUNC, "bad$token\n", EINVAL, "bad token");
	expect_content("set_event", "", "O_TRUNC disables everything before parsing");
	expect_write("set_event", O_APPEND, "ttree:alpha\n", OK, "enable");
	expect_write("set_event", O_APPEND, "bad$token\n", EINVAL, "bad token");
	expect_content("set_event", "ttree:alpha\n", "O_APPEND keeps what was there");
}

Test(tree, set_event_pending_rules)
{
	char *txt;

	/* an unknown name is kept as a pending rule (fdr extension), not an error */
	expect_write("set_event", O_APPEND, "nosuch:event\n", OK, "pending");
	expect_content("set_event", "", "nothing registered is enabled");
	txt = cat("set_event_pending");
	cr_assert_not_null(strstr(txt, "nosuch:event\n"), "set_event_pending:\n%s", txt);
	free(txt);
	expect_write("set_event", O_APPEND, "!nosuch:event\n", OK, "removing a pending rule");
	txt = cat("set_event_pending");
	cr_assert_null(strstr(txt, "nosuch:event\n"), "set_event_pending still has it:\n%s", txt);
	free(txt);
	expect_write("set_event", O_APPEND, "!nosuch:event\n", EINVAL, "now it matches nothing");
}

Test(tree, enable_files)
{
	static const struct wcase t[] = {
		{ "events/ttree/alpha/enable", O_TRUNC, "1\n", OK, "set_event", "ttree:alpha\n" },
		{ "events/ttree/alpha/enable", O_TRUNC, "1\n", OK, NULL, "1\n" },
		{ "events/ttree/enable", 0, NULL, OK, NULL, "X\n" }, /* mixed */
		{ "events/enable", 0, NULL, OK, NULL, "X\n" },
		{ "events/ttree/enable", O_TRUNC, "1\n", OK, NULL, "1\n" },
		{ "events/tother/enable", 0, NULL, OK, NULL, "0\n" },
		{ "events/enable", O_TRUNC, "1\n", OK, "set_event",
		  "ttree:alpha\nttree:beta\ntother:alpha\ntother:gamma\n" },
		{ "events/enable", 0, NULL, OK, NULL, "1\n" },
		{ "events/tother/gamma/enable", O_TRUNC, "0\n", OK, "events/tother/enable", "X\n" },
		{ "events/enable", O_TRUNC, "0\n", OK, "set_event", "" },
		{ "events/ttree/alpha/enable", O_TRUNC, "2\n", EINVAL, NULL, "0\n" },
		{ "events/ttree/enable", O_TRUNC, "yes\n", EINVAL, NULL, "0\n" },
	};

	TABLE(t);
	cr_assert_eq(fdr_ev_ttree_alpha.enabled, 0);
	expect_write("events/ttree/alpha/enable", O_TRUNC, "1\n", OK, "enable");
	fdr_sync();
	cr_assert_neq(fdr_ev_ttree_alpha.enabled, 0, "writing enable must reach the call site");
}

/* ---- error_log ---- */

struct ecase {
	const char *path;
	const char *in; /* written with O_TRUNC, "\n" appended */
	const char *location;
	int pos; /* byte of @in the caret must point at */
};

static const struct ecase ecases[] = {
	{ "tracing_on", "abc", "tracing_on", 0 },
	{ "tracing_on", "12x", "tracing_on", 2 },
	{ "tracing_on", "1k", "tracing_on", 1 },
	{ "tracing_on", " 1", "tracing_on", 0 },
	{ "tracing_on", "-1", "tracing_on", 0 },
	{ "options/overwrite", "2", "overwrite", 0 },
	{ "buffer_size_kb", "12a", "buffer_size_kb", 2 },
	{ "buffer_size_kb", "0", "buffer_size_kb", 0 },
	{ "trace_clock", "  bogus", "trace_clock", 2 },
	{ "trace_options", "bogus", "trace_options", 0 },
	{ "trace_options", "nobogus", "trace_options", 2 },
	{ "current_tracer", " function", "current_tracer", 1 },
	{ "events/enable", "2", "enable", 0 },
	{ "events/ttree/enable", "1x", "enable", 1 },
	{ "events/ttree/alpha/enable", "on", "enable", 0 },
};

static const struct ecase set_event_ecases[] = {
	{ "set_event", "ttree:alpha bad$x", "set_event", 15 },
	{ "set_event", "!nosuch:x", "set_event", 1 },
	{ "set_event", "a:b:c", "set_event", 3 },
};

/* The last entry of error_log: "[ts] LOC: error: MSG\n  Command: CMD\n<caret line>" */
static void check_last_entry(const struct ecase *c, const char *log)
{
	const char *e = log, *p, *nl1, *nl2, *nl3;
	char head[160], cmdline[256];
	regex_t re;
	size_t col;

	/* find the last entry: the last line starting with '[' */
	for (p = log; (p = strchr(p, '[')); p++)
		if (p == log || p[-1] == '\n')
			e = p;
	cr_assert_eq(regcomp(&re, "^\\[[ 0-9]{5,}\\.[0-9]{6}\\] ", REG_EXTENDED | REG_NOSUB), 0);
	cr_assert_eq(regexec(&re, e, 0, NULL, 0), 0,
		     "%s '%s': timestamp not '[%%5llu.%%06lu] ':\n%s", c->path, c->in, e);
	regfree(&re);
	snprintf(head, sizeof(head), "] %s: error: ", c->location);
	cr_assert_not_null(strstr(e, head), "%s '%s': entry does not start with '%s':\n%s", c->path,
			   c->in, head, e);
	nl1 = strchr(e, '\n');
	cr_assert_not_null(nl1);
	nl2 = strchr(nl1 + 1, '\n');
	cr_assert_not_null(nl2, "no Command line:\n%s", e);
	snprintf(cmdline, sizeof(cmdline), "  Command: %s", c->in);
	cr_assert_eq((size_t)(nl2 - nl1 - 1), strlen(cmdline),
		     "%s: command line '%.*s', expected '%s'", c->path, (int)(nl2 - nl1 - 1),
		     nl1 + 1, cmdline);
	cr_assert_eq(strncmp(nl1 + 1, cmdline, strlen(cmdline)), 0);
	nl3 = strchr(nl2 + 1, '\n');
	cr_assert_not_null(nl3, "%s '%s': no caret line:\n%s", c->path, c->in, e);
	col = strspn(nl2 + 1, " ");
	cr_assert_eq(nl2[1 + col], '^', "caret line '%.*s'", (int)(nl3 - nl2 - 1), nl2 + 1);
	cr_assert_eq((size_t)(nl3 - nl2 - 1), col + 1,
		     "caret line has more than spaces and a caret");
	cr_assert_eq(col, 11 + (size_t)c->pos,
		     "%s '%s': caret at column %zu, expected %d (11 + %d):\n%s", c->path, c->in,
		     col, 11 + c->pos, c->pos, e);
	cr_assert_eq(nl3[1], 0, "the entry must be the last thing in error_log");
}

static void check_error_case(const struct ecase *c)
{
	char in[128], msg[1024], *log, *nl;
	ssize_t r;
	size_t col;

	snprintf(in, sizeof(in), "%s\n", c->in);
	expect_write("error_log", O_TRUNC, "\n", OK, "clear error_log");
	r = fdr_test_write(env.s, c->path, O_TRUNC, in, strlen(in), msg, sizeof(msg));
	cr_assert_eq(r, -EINVAL, "%s '%s' must be refused with EINVAL, got %zd", c->path, c->in, r);
	/* the handle's message: the command on its own line, then the caret */
	snprintf(in, sizeof(in), "\n  %s\n", c->in);
	nl = strstr(msg, in);
	cr_assert_not_null(nl, "message lacks the command line '  %s':\n%s", c->in, msg);
	nl += 3;
	col = strspn(nl + strlen(c->in) + 1, " ");
	cr_assert_eq(nl[strlen(c->in) + 1 + col], '^', "message without caret:\n%s", msg);
	{
		/* column of the command's first byte on its line */
		const char *bol = nl;

		while (bol > msg && bol[-1] != '\n')
			bol--;
		cr_assert_eq(col, (size_t)(nl - bol) + (size_t)c->pos,
			     "%s '%s': message caret at %zu:\n%s", c->path, c->in, col, msg);
	}
	log = cat("error_log");
	cr_assert_eq(fdr_test_count(log, ": error: "), 1,
		     "%s '%s': error_log must have one entry:\n%s", c->path, c->in, log);
	check_last_entry(c, log);
	free(log);
}

/* Every refused write leaves its entry, caret under the blamed byte. */
Test(tree, error_log_entries_and_carets)
{
	size_t i;

	for (i = 0; i < sizeof(ecases) / sizeof(ecases[0]); i++)
		check_error_case(&ecases[i]);
}

/* set_event refusals too (the same rules; they are parsed under the session lock). */
Test(tree, error_log_set_event)
{
	size_t i;

	for (i = 0; i < sizeof(set_event_ecases) / sizeof(set_event_ecases[0]); i++)
		check_error_case(&set_event_ecases[i]);
}

Test(tree, error_log_keeps_eight)
{
	char *log;
	int i;

	for (i = 0; i < 10; i++) {
		char in[32];

		snprintf(in, sizeof(in), "bad%d\n", i);
		expect_write("tracing_on", O_TRUNC, in, EINVAL, "bad number");
	}
	log = cat("error_log");
	cr_assert_eq(fdr_test_count(log, ": error: "), 8, "at most 8 entries:\n%s", log);
	cr_assert_null(strstr(log, "Command: bad0\n"), "the oldest drop off");
	cr_assert_null(strstr(log, "Command: bad1\n"));
	cr_assert_not_null(strstr(log, "Command: bad2\n"));
	cr_assert_not_null(strstr(log, "Command: bad9\n"));
	cr_assert_lt(strstr(log, "bad2"), strstr(log, "bad9"), "oldest first");
	free(log);
	expect_write("error_log", O_TRUNC, "\n", OK, "echo > error_log");
	expect_content("error_log", "", "cleared");
	expect_write("tracing_on", O_TRUNC, "again\n", EINVAL, "bad number");
	log = cat("error_log");
	cr_assert_eq(fdr_test_count(log, ": error: "), 1, "after clearing, only new entries:\n%s",
		     log);
	free(log);
}

Test(tree, error_log_per_instance)
{
	char *log;

	cr_assert_eq(fdr_tree_mkdir(env.s, "instances/e"), 0);
	expect_write("instances/e/tracing_on", O_TRUNC, "zz\n", EINVAL, "instance");
	expect_content("error_log", "", "an instance's error goes to its own error_log");
	log = cat("instances/e/error_log");
	cr_assert_eq(fdr_test_count(log, ": error: "), 1, "instance error_log:\n%s", log);
	free(log);
}

/* ---- errno values ---- */

Test(tree, open_errors)
{
	static const struct {
		const char *path;
		int flags;
		int err;
	} t[] = {
		{ "nosuch", O_RDONLY, ENOENT },
		{ "events/nosys/enable", O_WRONLY, ENOENT },
		{ "events/ttree/nosuch/enable", O_WRONLY, ENOENT },
		{ "events/ttree/alpha/nosuch", O_RDONLY, ENOENT },
		{ "events/ftrace/print/enable", O_WRONLY,
		  ENOENT }, /* print has format and id only */
		{ "per_cpu/cpu99999/trace", O_RDONLY, ENOENT },
		{ "per_cpu/cpux/trace", O_RDONLY, ENOENT },
		{ "per_cpu/cpu0/nosuch", O_RDONLY, ENOENT },
		{ "instances/nope/trace", O_RDONLY, ENOENT },
		{ "options/bogus", O_RDONLY, ENOENT },
		{ "trace/more", O_RDONLY, ENOENT },
		{ "", O_RDONLY, EISDIR },
		{ "events", O_RDONLY, EISDIR },
		{ "events/ttree", O_RDONLY, EISDIR },
		{ "events/ttree/alpha", O_RDONLY, EISDIR },
		{ "per_cpu", O_RDONLY, EISDIR },
		{ "per_cpu/cpu0", O_RDONLY, EISDIR },
		{ "instances", O_RDONLY, EISDIR },
		{ "options", O_RDONLY, EISDIR },
		{ "trace_marker", O_RDONLY, EACCES }, /* write-only */
		{ "events/ttree/alpha/format", O_WRONLY, EACCES },
		{ "README", O_RDWR, EACCES },
	};
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct fdr_file *f = NULL;
		int r = fdr_file_open(env.s, t[i].path, t[i].flags, &f);

		cr_assert_eq(r, -t[i].err, "open('%s', %#x) = %d, expected -%d", t[i].path,
			     t[i].flags, r, t[i].err);
		cr_assert_null(f, "no handle on failure");
	}
}

Test(tree, rw_errors)
{
	struct fdr_file *f;
	char buf[16];

	/* write to a handle opened for reading, read from one opened for writing */
	cr_assert_eq(fdr_file_open(env.s, "tracing_on", O_RDONLY, &f), 0);
	cr_assert_eq(fdr_file_write(f, "0\n", 2), -EBADF);
	fdr_file_close(f);
	cr_assert_eq(fdr_file_open(env.s, "tracing_on", O_WRONLY, &f), 0);
	cr_assert_eq(fdr_file_read(f, buf, sizeof(buf)), -EINVAL);
	fdr_file_close(f);
	expect_content("tracing_on", "1\n", "unchanged");
	/* a NUL inside a command */
	cr_assert_eq(fdr_test_write(env.s, "tracing_on", O_TRUNC, "0\0001", 3, NULL, 0), -EINVAL);
	expect_content("tracing_on", "1\n", "unchanged");
}

Test(tree, trace_marker_errors)
{
	char *txt;

	cr_assert_eq(fdr_test_puts(env.s, "trace_marker", 0, "hello"), 5,
		     "a marker write returns its length");
	expect_write("tracing_on", O_TRUNC, "0\n", OK, "off");
	cr_assert_eq(fdr_test_puts(env.s, "trace_marker", 0, "while off"), -EBADF,
		     "tracing off: EBADF");
	expect_write("tracing_on", O_TRUNC, "1\n", OK, "on");
	expect_write("options/markers", O_TRUNC, "0\n", OK, "markers off");
	cr_assert_eq(fdr_test_puts(env.s, "trace_marker", 0, "no markers"), -EINVAL,
		     "markers=0: EINVAL");
	expect_write("options/markers", O_TRUNC, "1\n", OK, "markers on");
	cr_assert_eq(fdr_test_puts(env.s, "trace_marker", 0, ""), 0,
		     "a 0-byte write records an empty line");
	txt = cat("trace");
	cr_assert_eq(fdr_test_count(txt, "tracing_mark_write: "), 2, "trace:\n%s", txt);
	cr_assert_not_null(strstr(txt, "tracing_mark_write: hello\n"));
	cr_assert_not_null(strstr(txt, "tracing_mark_write: \n"), "the empty marker line");
	cr_assert_null(strstr(txt, "while off"));
	cr_assert_null(strstr(txt, "no markers"));
	free(txt);
}

Test(tree, trace_marker_long_is_cut)
{
	char *big = malloc(5001), *txt, *p;
	ssize_t r;
	size_t n;

	cr_assert_not_null(big);
	memset(big, 'm', 5000);
	big[5000] = 0;
	r = fdr_test_puts(env.s, "trace_marker", 0, big);
	cr_assert_eq(r, 3982, "the write is cut to 3982 bytes (differences.md), and says so: %zd",
		     r);
	txt = cat("trace");
	p = strstr(txt, "tracing_mark_write: ");
	cr_assert_not_null(p);
	p += strlen("tracing_mark_write: ");
	n = strspn(p, "m");
	cr_assert_eq((ssize_t)n, r, "recorded %zu bytes, the write returned %zd", n, r);
	cr_assert_eq(p[n], '\n');
	free(txt);
	free(big);
}

Test(tree, trace_pipe_busy_and_nonblock)
{
	struct fdr_file *a, *b = NULL;
	char buf[64];
	int r;

	cr_assert_eq(fdr_file_open(env.s, "trace_pipe", O_RDONLY | O_NONBLOCK, &a), 0);
	cr_assert_eq(fdr_file_read(a, buf, sizeof(buf)), -EAGAIN, "empty pipe, O_NONBLOCK");
	cr_assert_eq(fdr_file_poll(a, 0), 0, "nothing to read");
	r = fdr_file_open(env.s, "trace_pipe", O_RDONLY | O_NONBLOCK, &b);
	cr_assert_eq(r, -EBUSY, "a second trace_pipe open must be EBUSY (spec 5.1), got %d", r);
	fdr_file_close(b);
	b = NULL;
	r = fdr_file_open(env.s, "per_cpu/cpu0/trace_pipe", O_RDONLY | O_NONBLOCK, &b);
	cr_assert_eq(r, -EBUSY, "per_cpu trace_pipe while the all-CPU pipe is open: EBUSY, got %d",
		     r);
	fdr_file_close(b);
	fdr_file_close(a);
	cr_assert_eq(fdr_file_open(env.s, "per_cpu/cpu0/trace_pipe", O_RDONLY | O_NONBLOCK, &a), 0,
		     "free again after close");
	fdr_file_close(a);
}

Test(tree, trace_pipe_poll_and_consume)
{
	struct fdr_file *a;
	char buf[4096];
	ssize_t n;

	cr_assert_eq(fdr_file_open(env.s, "trace_pipe", O_RDONLY | O_NONBLOCK, &a), 0);
	cr_assert_eq(fdr_test_puts(env.s, "trace_marker", 0, "one\n"), 4);
	cr_assert_eq(fdr_file_poll(a, 1000), 1, "poll must report the new record");
	n = fdr_file_read(a, buf, sizeof(buf) - 1);
	cr_assert_gt(n, 0);
	buf[n] = 0;
	cr_assert_not_null(strstr(buf, "tracing_mark_write: one\n"), "trace_pipe:\n%s", buf);
	cr_assert_null(strstr(buf, "# tracer"), "trace_pipe has no header");
	cr_assert_eq(fdr_file_read(a, buf, sizeof(buf)), -EAGAIN, "consumed");
	fdr_file_close(a);
	expect_content("trace_pipe", "", "consumed for every reader");
}

Test(tree, trace_pipe_short_reads_keep_the_tail)
{
	struct fdr_file *a;
	char whole[4096], piece[8];
	size_t got = 0;
	ssize_t n;
	int i;

	for (i = 0; i < 3; i++)
		cr_assert_eq(fdr_test_puts(env.s, "trace_marker", 0, "abcdefghijklmnopqrstuvwxyz"),
			     26);
	cr_assert_eq(fdr_file_open(env.s, "trace_pipe", O_RDONLY | O_NONBLOCK, &a), 0);
	while ((n = fdr_file_read(a, piece, sizeof(piece))) > 0) {
		cr_assert_lt(got + (size_t)n, sizeof(whole));
		memcpy(whole + got, piece, (size_t)n);
		got += (size_t)n;
	}
	whole[got] = 0;
	fdr_file_close(a);
	cr_assert_eq(fdr_test_count(whole, "tracing_mark_write: abcdefghijklmnopqrstuvwxyz\n"), 3,
		     "8-byte reads must deliver every line whole:\n%s", whole);
}

/* ---- directories ---- */

static int has_ent(const struct fdr_dirent *e, size_t n, const char *name, int is_dir,
		   unsigned mode)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(e[i].name, name) == 0)
			return e[i].is_dir == is_dir && (mode == 0 || e[i].mode == mode) ? 1 : -1;
	return 0;
}

static void expect_listing(const char *path, const char *const *names, size_t nn,
			   const char *const *absent, size_t na)
{
	struct fdr_dirent *e;
	size_t n, i, j;

	cr_assert_eq(fdr_tree_readdir(env.s, path, &e, &n), 0, "readdir %s", path);
	for (i = 0; i < nn; i++) {
		int dir = names[i][strlen(names[i]) - 1] == '/';
		char nm[80];

		snprintf(nm, sizeof(nm), "%.*s", (int)(strlen(names[i]) - (size_t)dir), names[i]);
		cr_assert_eq(has_ent(e, n, nm, dir, 0), 1, "%s: missing or wrong type: %s", path,
			     names[i]);
	}
	for (i = 0; i < na; i++)
		cr_assert_eq(has_ent(e, n, absent[i], 0, 0) + has_ent(e, n, absent[i], 1, 0), 0,
			     "%s must not list %s", path, absent[i]);
	for (i = 0; i < n; i++)
		for (j = i + 1; j < n; j++)
			cr_assert_str_neq(e[i].name, e[j].name, "%s lists %s twice", path,
					  e[i].name);
	free(e);
}

#define LIST(p, names, absent)                                             \
	expect_listing(p, names, sizeof(names) / sizeof(names[0]), absent, \
		       sizeof(absent) / sizeof(absent[0]))

Test(tree, readdir_listings)
{
	static const char *const root[] = { "README",
					    "available_events",
					    "available_tracers",
					    "buffer_size_kb",
					    "buffer_subbuf_size_kb",
					    "buffer_total_size_kb",
					    "current_tracer",
					    "error_log",
					    "events/",
					    "instances/",
					    "options/",
					    "per_cpu/",
					    "printk_formats",
					    "saved_cmdlines",
					    "saved_cmdlines_size",
					    "saved_tgids",
					    "set_event",
					    "timestamp_mode",
					    "trace",
					    "trace_clock",
					    "trace_marker",
					    "trace_options",
					    "trace_pipe",
					    "tracing_on",
					    "dynamic_events",
					    "uprobe_events",
					    "uprobe_profile" };
	static const char *const inst[] = { "available_tracers",
					    "buffer_size_kb",
					    "buffer_subbuf_size_kb",
					    "buffer_total_size_kb",
					    "current_tracer",
					    "error_log",
					    "events/",
					    "options/",
					    "per_cpu/",
					    "set_event",
					    "timestamp_mode",
					    "trace",
					    "trace_clock",
					    "trace_marker",
					    "trace_options",
					    "trace_pipe",
					    "tracing_on" };
	static const char *const inst_absent[] = {
		"README",	  "available_events",	 "instances",
		"saved_cmdlines", "saved_cmdlines_size", "saved_tgids",
		"printk_formats", "dynamic_events",	 "uprobe_events",
		"uprobe_profile"
	};
	static const char *const none[] = { "" };
	static const char *const events[] = { "enable",	 "header_page", "header_event",
					      "ftrace/", "ttree/",	"tother/" };
	static const char *const sys[] = { "enable", "alpha/", "beta/" };
	static const char *const sys_absent[] = { "gamma" };
	static const char *const ev[] = { "enable", "format", "id" };
	static const char *const print[] = { "format", "id" };
	static const char *const print_absent[] = { "enable" };
	static const char *const cpu[] = { "buffer_size_kb", "stats", "trace", "trace_pipe",
					   "trace_pipe_raw" };
	static const char *const opts[] = { "context-info", "record-cmd", "record-tgid",
					    "overwrite",    "irq-info",	  "markers" };
	static const char *const iopts[] = { "context-info", "record-tgid", "overwrite", "irq-info",
					     "markers" };
	static const char *const iopts_absent[] = { "record-cmd" };
	struct fdr_dirent *e;
	size_t n, i;
	int nr = fdr_ring_nr_cpus(env.s, 0);

	LIST("", root, none);
	LIST("events", events, none);
	LIST("events/ttree", sys, sys_absent);
	LIST("events/ttree/alpha", ev, none);
	LIST("events/ftrace/print", print, print_absent);
	LIST("per_cpu/cpu0", cpu, none);
	LIST("options", opts, none);
	cr_assert_eq(fdr_tree_mkdir(env.s, "instances/foo"), 0);
	LIST("instances/foo", inst, inst_absent);
	LIST("instances/foo/options", iopts, iopts_absent);

	/* modes as tracefs shows them */
	cr_assert_eq(fdr_tree_readdir(env.s, "", &e, &n), 0);
	cr_assert_eq(has_ent(e, n, "trace_marker", 0, 0220), 1, "trace_marker is 0220");
	cr_assert_eq(has_ent(e, n, "trace", 0, 0640), 1, "trace is 0640");
	cr_assert_eq(has_ent(e, n, "README", 0, 0440), 1, "README is 0440");
	cr_assert_eq(has_ent(e, n, "trace_pipe", 0, 0440), 1, "trace_pipe is 0440");
	cr_assert_eq(has_ent(e, n, "events", 1, 0750), 1, "directories are 0750");
	free(e);
	cr_assert_eq(fdr_tree_readdir(env.s, "per_cpu", &e, &n), 0);
	cr_assert_eq((int)n, nr, "per_cpu lists %zu CPUs, the ring has %d", n, nr);
	for (i = 0; i < n; i++) {
		char want[32];

		snprintf(want, sizeof(want), "cpu%zu", i);
		cr_assert_eq(has_ent(e, n, want, 1, 0), 1, "per_cpu lacks %s", want);
	}
	free(e);
	cr_assert_eq(fdr_tree_readdir(env.s, "instances", &e, &n), 0);
	cr_assert_eq(n, 1);
	cr_assert_str_eq(e[0].name, "foo");
	cr_assert(e[0].is_dir);
	free(e);
	/* errors */
	cr_assert_eq(fdr_tree_readdir(env.s, "trace", &e, &n), -ENOTDIR);
	cr_assert_eq(fdr_tree_readdir(env.s, "nosuch", &e, &n), -ENOENT);
	{
		int is_dir;
		unsigned mode;

		cr_assert_eq(fdr_tree_stat(env.s, "trace_marker", &is_dir, &mode), 0);
		cr_assert(!is_dir && mode == 0220);
		cr_assert_eq(fdr_tree_stat(env.s, "instances/foo", &is_dir, &mode), 0);
		cr_assert(is_dir);
		cr_assert_eq(fdr_tree_stat(env.s, "instances/bar", &is_dir, &mode), -ENOENT);
	}
}

/* ---- instances ---- */

Test(tree, mkdir_rmdir)
{
	static const struct {
		int mk;
		const char *path;
		int err;
	} t[] = {
		{ 1, "instances/foo", 0 },	   { 1, "instances/foo", EEXIST },
		{ 1, "instances/foo/bar", EPERM }, { 1, "foo", EPERM },
		{ 1, "events/foo", EPERM },	   { 1, "instances/bar", 0 },
		{ 0, "instances/foo", 0 },	   { 0, "instances/foo", ENOENT },
		{ 0, "instances/bar/x", EPERM },   { 0, "trace", EPERM },
		{ 0, "instances/bar", 0 },	   { 1, "instances/foo", 0 },
	};
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		int r = t[i].mk ? fdr_tree_mkdir(env.s, t[i].path) :
				  fdr_tree_rmdir(env.s, t[i].path);

		cr_assert_eq(r, -t[i].err, "[%zu] %s %s = %d, expected -%d", i,
			     t[i].mk ? "mkdir" : "rmdir", t[i].path, r, t[i].err);
	}
}

Test(tree, instance_defaults)
{
	expect_write("options/overwrite", O_TRUNC, "0\n", OK, "top in discard mode");
	expect_write("tracing_on", O_TRUNC, "0\n", OK, "top off");
	expect_write("trace_clock", O_TRUNC, "mono\n", OK, "top clock");
	expect_write("set_event", O_TRUNC, "ttree:alpha\n", OK, "top event");
	cr_assert_eq(fdr_tree_mkdir(env.s, "instances/n"), 0);
	expect_content("instances/n/tracing_on", "1\n", "a new instance records");
	expect_content("instances/n/buffer_size_kb", "1410\n", "default size, expanded");
	expect_content("instances/n/trace_clock",
		       "[local] global counter uptime perf mono mono_raw boot tai x86-tsc\n",
		       "clock local");
	expect_content("instances/n/set_event", "", "events all off");
	expect_content("instances/n/options/overwrite", "0\n", "options inherited from the top");
	expect_content("instances/n/error_log", "", "its own error_log");
}

Test(tree, instance_routing)
{
	struct fdr_test_recs top, in;
	char *txt;

	cr_assert_eq(fdr_tree_mkdir(env.s, "instances/i1"), 0);
	expect_write("instances/i1/events/ttree/alpha/enable", O_TRUNC, "1\n", OK,
		     "enable in i1 only");
	expect_write("set_event", O_TRUNC, "ttree:beta\n", OK, "beta in the top only");
	fdr_sync();
	fdr_ttree_alpha(1);
	fdr_ttree_alpha(2);
	fdr_ttree_beta(3);
	cr_assert_eq(fdr_test_collect(env.s, 0, -1, 0, &top), 0);
	cr_assert_eq(fdr_test_collect(env.s, 1, -1, 0, &in), 0);
	cr_assert_eq(top.nr, 1, "top must hold only beta, has %zu records", top.nr);
	cr_assert_eq(in.nr, 2, "i1 must hold only the two alphas, has %zu records", in.nr);
	fdr_test_recs_free(&top);
	fdr_test_recs_free(&in);
	txt = cat("instances/i1/trace");
	cr_assert_eq(fdr_test_count(txt, " alpha: v="), 2, "instances/i1/trace:\n%s", txt);
	cr_assert_eq(fdr_test_count(txt, " beta: "), 0);
	free(txt);
	expect_content("instances/i1/set_event", "ttree:alpha\n", "i1 set_event");
	expect_content("set_event", "ttree:beta\n", "top set_event");
	/* markers to an instance stay there */
	cr_assert_eq(fdr_test_puts(env.s, "instances/i1/trace_marker", 0, "only-i1"), 7);
	txt = cat("trace");
	cr_assert_null(strstr(txt, "only-i1"), "instance marker leaked to the top:\n%s", txt);
	free(txt);
	/* tracing_on per instance */
	expect_write("instances/i1/tracing_on", O_TRUNC, "0\n", OK, "i1 off");
	fdr_sync();
	fdr_ttree_alpha(4);
	fdr_ttree_beta(5);
	cr_assert_eq(fdr_test_collect(env.s, 0, -1, 0, &top), 0);
	cr_assert_eq(fdr_test_collect(env.s, 1, -1, 0, &in), 0);
	cr_assert_eq(top.nr, 2, "the top still records");
	cr_assert_eq(in.nr, 3, "i1 is off: its 2 alphas and the marker only, got %zu", in.nr);
	fdr_test_recs_free(&top);
	fdr_test_recs_free(&in);
	/* rmdir disables the instance's events */
	cr_assert_eq(fdr_tree_rmdir(env.s, "instances/i1"), 0);
	fdr_sync();
	cr_assert_eq(fdr_ev_ttree_alpha.enabled, 0,
		     "alpha was enabled only in the removed instance");
}

Test(tree, rmdir_busy_instance)
{
	struct fdr_file *f;
	int r;

	cr_assert_eq(fdr_tree_mkdir(env.s, "instances/busy"), 0);
	cr_assert_eq(fdr_file_open(env.s, "instances/busy/trace_pipe", O_RDONLY | O_NONBLOCK, &f),
		     0);
	r = fdr_tree_rmdir(env.s, "instances/busy");
	cr_assert_eq(
		r, -EBUSY,
		"rmdir of an instance whose trace_pipe is open: expected -EBUSY (spec 8), got %d",
		r);
	fdr_file_close(f);
	cr_assert_eq(fdr_tree_rmdir(env.s, "instances/busy"), 0, "rmdir once nothing is open");
}

/* saved_tgids: "PID TGID" of the threads that wrote events; printk_formats: empty */
Test(tree, saved_tgids_and_printk_formats)
{
	char want[64], *txt;

	expect_write("set_event", O_TRUNC, "ttree:alpha\n", OK, "enable alpha");
	fdr_sync();
	fdr_ttree_alpha(7);
	snprintf(want, sizeof(want), "%ld %ld\n", (long)syscall(SYS_gettid), (long)getpid());
	txt = cat("saved_tgids");
	cr_assert_not_null(strstr(txt, want), "saved_tgids lacks \"%s\":\n%s", want, txt);
	free(txt);
	expect_content("printk_formats", "", "printk_formats");
}

/*
 * Every entry a listing shows, in the top instance and in another, is what stat
 * says it is (directory or file, same mode), a directory lists without error, and a
 * file opens as its mode allows and no further (the table in tree.c is the one
 * source of the three).
 */
static void walk_check(const char *dir, int depth, size_t *nr_files)
{
	struct fdr_dirent *e;
	size_t n, i;

	cr_assert_eq(fdr_tree_readdir(env.s, dir, &e, &n), 0, "readdir '%s'", dir);
	cr_assert_gt(n, 0, "'%s' lists nothing", dir);
	for (i = 0; i < n; i++) {
		char path[512];
		unsigned mode = 0;
		int is_dir = -1;

		int w = snprintf(path, sizeof(path), "%s%s%s", dir, *dir ? "/" : "", e[i].name);

		cr_assert(w > 0 && (size_t)w < sizeof(path), "path too long under '%s'", dir);
		cr_assert_eq(fdr_tree_stat(env.s, path, &is_dir, &mode), 0, "stat %s", path);
		cr_assert_eq(is_dir, e[i].is_dir, "%s: readdir and stat disagree on its type",
			     path);
		cr_assert_eq(mode, e[i].mode, "%s: readdir says %o, stat %o", path, e[i].mode,
			     mode);
		if (is_dir) {
			struct fdr_file *f = NULL;

			cr_assert_eq(fdr_file_open(env.s, path, O_RDONLY, &f), -EISDIR, "open %s",
				     path);
			/* instances/NAME/instances does not exist: the walk ends */
			if (depth < 6 && strcmp(e[i].name, "instances") != 0)
				walk_check(path, depth + 1, nr_files);
			else if (strcmp(e[i].name, "instances") == 0 && depth == 0)
				walk_check(path, depth + 1, nr_files);
			continue;
		}
		(*nr_files)++;
		{
			struct fdr_file *f = NULL;
			int r = fdr_file_open(env.s, path, O_RDONLY | O_NONBLOCK, &f);

			cr_assert_eq(r, mode & 0400 ? 0 : -EACCES, "open %s for reading: %d", path,
				     r);
			fdr_file_close(f);
			f = NULL;
			r = fdr_file_open(env.s, path, O_WRONLY, &f);
			cr_assert_eq(r, mode & 0200 ? 0 : -EACCES, "open %s for writing: %d", path,
				     r);
			fdr_file_close(f);
		}
		{
			char below[600];
			int d = -1;
			unsigned m = 0;

			snprintf(below, sizeof(below), "%s/x", path);
			cr_assert_eq(fdr_tree_stat(env.s, below, &d, &m), -ENOENT, "stat %s",
				     below);
		}
	}
	free(e);
}

Test(tree, walk_listings_stat_open_agree)
{
	size_t nr_files = 0;
	int d = 0;
	unsigned m = 0;

	cr_assert_eq(fdr_tree_mkdir(env.s, "instances/w"), 0);
	walk_check("", 0, &nr_files);
	/* 28 root files and dirs, 3 in events/, the options, per-CPU and per-event files */
	cr_assert_gt(nr_files, 60, "only %zu files found", nr_files);
	/* files of the top only, and enable/filter of fdr's own record types, are absent */
	cr_assert_eq(fdr_tree_stat(env.s, "instances/w/README", &d, &m), -ENOENT);
	cr_assert_eq(fdr_tree_stat(env.s, "instances/w/options/record-cmd", &d, &m), -ENOENT);
	cr_assert_eq(fdr_tree_stat(env.s, "instances/w/instances", &d, &m), -ENOENT);
	cr_assert_eq(fdr_tree_rmdir(env.s, "instances/w"), 0);
}

/* lib/core/control.c: the one writer of each small protocol, read back by its readers */
Test(tree, control_protocols)
{
	struct fdr_abi_control *c = fdr_session_control(env.s);
	static unsigned char big[FDR_MARKER_MAX + 100], payload[FDR_MAX_RECORD];
	struct fdr_common hdr;
	char comm[FDR_COMM_LEN] = "ctl-proto", buf[FDR_COMM_LEN];
	struct fdr_abi_event *e = &c->events[fdr_ev_ttree_beta.slot - 1];
	size_t len, taken;

	/* a marker: header, ip 0, text, one newline added (never two), NUL */
	len = fdr_marker_record(payload, "hi", 2, 4242, 3, &taken);
	memcpy(&hdr, payload, sizeof(hdr));
	cr_assert_eq(taken, 2);
	cr_assert_eq(len, 16 + 3 + 1);
	cr_assert(hdr.type == FDR_EVENT_ID_PRINT && hdr.pid == 4242 && hdr.preempt_count == 3 &&
		  hdr.flags == 0);
	cr_assert_str_eq((char *)payload + 16, "hi\n");
	len = fdr_marker_record(payload, "hi\n", 3, 1, 0, &taken);
	cr_assert_eq(len, 16 + 3 + 1);
	cr_assert_str_eq((char *)payload + 16, "hi\n");
	memset(big, 'x', sizeof(big));
	len = fdr_marker_record(payload, big, sizeof(big), 1, 0, &taken);
	cr_assert_eq(taken, FDR_MARKER_MAX);
	cr_assert_eq(len, FDR_MAX_RECORD, "a cut marker fills the record exactly");
	cr_assert_eq(payload[FDR_MAX_RECORD - 2], '\n');
	cr_assert_eq(payload[FDR_MAX_RECORD - 1], 0);

	/* a cmdline slot, read back by the formatters' readers */
	fdr_cmdline_save(c, 777001, 777000, comm);
	cr_assert_str_eq(fdr_comm_lookup(c, 777001, buf, sizeof(buf)), "ctl-proto");
	cr_assert_eq(fdr_tgid_lookup(c, 777001), 777000);
	/* the same slot, another thread: the last writer wins */
	fdr_cmdline_save(c, 777001 + FDR_CMDLINE_SLOTS, 5, comm);
	cr_assert_str_eq(fdr_comm_lookup(c, 777001, buf, sizeof(buf)), "<...>");
	cr_assert_eq(fdr_tgid_lookup(c, 777001), 0);

	/* enable bits: one instance's bit, the others untouched */
	fdr_event_set_enabled(e, 0, 0);
	fdr_event_set_enabled(e, 70, 1);
	cr_assert_eq(fdr_event_is_enabled(e, 70), 1);
	cr_assert_eq(fdr_event_is_enabled(e, 6), 0);
	cr_assert_eq(fdr_event_is_enabled(e, 0), 0);
	fdr_event_set_enabled(e, 70, 0);
	cr_assert_eq(fdr_event_is_enabled(e, 70), 0);
}

/* snapshot_allocated (fdr only): allocate without taking, free, refuse other values */
Test(tree, snapshot_allocated_file)
{
	char *t;

	cr_assert_eq(fdr_test_puts(env.s, "snapshot_allocated", O_TRUNC, "0\n"), 2);
	t = cat("snapshot_allocated");
	cr_assert_str_eq(t, "0\n");
	free(t);
	cr_assert_eq(fdr_test_puts(env.s, "snapshot_allocated", O_TRUNC, "1\n"), 2);
	t = cat("snapshot_allocated");
	cr_assert_str_eq(t, "1\n");
	free(t);
	/* allocated, not taken: the snapshot file says so, and holds nothing */
	t = cat("snapshot");
	cr_assert_not_null(strstr(t, "Snapshot is allocated"), "%s", t);
	free(t);
	cr_assert_eq(fdr_test_puts(env.s, "snapshot_allocated", O_TRUNC, "2\n"), -EINVAL);
	t = cat("snapshot_allocated");
	cr_assert_str_eq(t, "1\n", "a refused write keeps the buffers");
	free(t);
	/* "0 > snapshot" frees the same buffers */
	cr_assert_eq(fdr_test_puts(env.s, "snapshot", O_TRUNC, "0\n"), 2);
	t = cat("snapshot_allocated");
	cr_assert_str_eq(t, "0\n");
	free(t);
}

/* The saver handshake (lib/core/ring.c): a snapshot waits for the saver before the next */
Test(tree, saver_handshake)
{
	struct fdr_saver sv;
	const struct fdr_abi_ring *h;
	uint64_t seq = 0, seq2 = 0;
	void *base;
	size_t size;

	cr_assert_eq(fdr_test_puts(env.s, "snapshot_allocated", O_TRUNC, "1\n"), 2);
	fdr_saver_init(&sv, env.s, 0);
	cr_assert_eq(fdr_saver_poll(&sv, &seq), 0, "nothing to save at attach");
	cr_assert_eq(fdr_session_ring(env.s, 0, &base, &size), 0);
	h = base;
	cr_assert_eq(h->saver_pid, (uint32_t)getpid());
	cr_assert_eq(fdr_test_puts(env.s, "snapshot", O_TRUNC, "1\n"), 2);
	cr_assert_eq(fdr_saver_poll(&sv, &seq), 1, "the snapshot waits for the saver");
	cr_assert_eq(fdr_test_puts(env.s, "snapshot", O_TRUNC, "1\n"), -EBUSY,
		     "no second snapshot before the first is saved");
	cr_assert_eq(fdr_saver_poll(&sv, &seq2), 1);
	cr_assert_eq(seq2, seq, "the refused swap changed nothing");
	cr_assert_geq(sv.refused, 1);
	/*
	 * A save that takes longer than the beat's 1 s lease: the beat alone
	 * (fdr_saver_beat(), from the thread that keeps it meanwhile) still holds
	 * the next snapshot back; the buffer being read is not reused.
	 */
	for (int k = 0; k < 15; k++) {
		struct timespec d = { 0, 100 * 1000 * 1000 };

		nanosleep(&d, NULL);
		fdr_saver_beat(&sv);
	}
	cr_assert_eq(fdr_test_puts(env.s, "snapshot", O_TRUNC, "1\n"), -EBUSY,
		     "a saver 1.5 s into a save, beating, still holds the next snapshot back");
	fdr_saver_saved(&sv, seq);
	cr_assert_eq(fdr_saver_poll(&sv, &seq2), 0);
	cr_assert_eq(fdr_test_puts(env.s, "snapshot", O_TRUNC, "1\n"), 2,
		     "saved: the next is taken");
	cr_assert_eq(fdr_saver_poll(&sv, &seq2), 1);
	cr_assert_gt(seq2, seq);
	fdr_saver_detach(&sv);
	cr_assert_eq(h->saver_pid, 0);
	cr_assert_eq(fdr_test_puts(env.s, "snapshot", O_TRUNC, "1\n"), 2,
		     "detached: not held back");
}
