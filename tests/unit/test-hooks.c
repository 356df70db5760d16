// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test-hooks.c - filters, triggers and set_event_pid through the control tree
 * (docs/tracefs.md, Filters and Triggers; issue 3): what the files accept, refuse and read
 * back, what error_log says and where its caret points, and what the writer then
 * records. test-filter.c tests the filter engine itself; here it is the files
 * and their effect on recording, table by table.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "fdr-criterion.h"
#include "fdr-test.h"

/* clang-format off */
FDR_EVENT(flt, req,
	FDR_PROTO(int32_t status, uint64_t lat, uint8_t flags, const char *path, const char *host),
	FDR_ARGS(status, lat, flags, path, host),
	FDR_FIELDS(
		fdr_field_int(int32_t, status, status)
		fdr_field_int(uint64_t, lat, lat)
		fdr_field_int(uint8_t, flags, flags)
		fdr_field_string(path, path)
		fdr_field_chars(host, 16, host)))
FDR_EVENT(flt, other, FDR_PROTO(int32_t status, int32_t code), FDR_ARGS(status, code),
	FDR_FIELDS(fdr_field_int(int32_t, status, status) fdr_field_int(int32_t, code, code)))
FDR_EVENT(flt, tick, FDR_PROTO(int32_t n), FDR_ARGS(n), FDR_FIELDS(fdr_field_int(int32_t, n, n)))
/* clang-format on */

typedef struct fdr__rec_flt_req req_rec_t;
typedef struct fdr__rec_flt_tick tick_rec_t;

static struct fdr_test_env env;

static void init(void)
{
	cr_assert_eq(fdr_test_setup(&env, NULL), 0, "session setup failed");
	cr_assert(fdr_ev_flt_req.slot && fdr_ev_flt_tick.slot, "test events not registered");
}

static void fini(void)
{
	fdr_test_teardown(&env);
}

TestSuite(filter, .init = init, .fini = fini, .timeout = 60);
TestSuite(trigger, .init = init, .fini = fini, .timeout = 60);
TestSuite(pid, .init = init, .fini = fini, .timeout = 60);

/* ---- helpers ------------------------------------------------------------------------------ */

/* One write (">" is O_TRUNC, ">>" O_APPEND), then let this process see the change. */
static ssize_t wr(const char *path, int flags, const char *text, char *msg, size_t msg_len)
{
	ssize_t ret = fdr_test_write(env.s, path, flags, text, strlen(text), msg, msg_len);

	fdr_sync();
	return ret;
}

static void ok_wr(const char *path, int flags, const char *text)
{
	char msg[1024];
	ssize_t ret = wr(path, flags, text, msg, sizeof(msg));

	cr_assert_eq(ret, (ssize_t)strlen(text), "write '%s' to %s: %s (%s)", text, path,
		     strerror((int)-ret), msg);
}

static char *cat(const char *path)
{
	int err;
	char *t = fdr_test_read(env.s, path, 0, NULL, &err);

	cr_assert_not_null(t, "read %s: %s", path, strerror(-err));
	return t;
}

static void expect_file(const char *path, const char *want)
{
	char *t = cat(path);

	cr_expect_str_eq(t, want, "%s reads\n%s\nexpected\n%s", path, t, want);
	free(t);
}

/* The last entry of error_log, without its "[ts] " prefix (a new string). */
static char *last_error(const char *inst_prefix)
{
	char path[128], *t, *p, *last = NULL;

	snprintf(path, sizeof(path), "%serror_log", inst_prefix);
	t = cat(path);
	for (p = t; (p = strchr(p, '[')); p++)
		if (p == t || p[-1] == '\n')
			last = p;
	cr_assert_not_null(last, "error_log is empty");
	p = strstr(last, "] ");
	cr_assert_not_null(p, "error_log entry without a timestamp: %s", last);
	p = strdup(p + 2);
	free(t);
	return p;
}

struct req {
	int32_t status;
	uint64_t lat;
	uint8_t flags;
	const char *path;
	const char *host;
};

static const struct req reqs[] = {
	{ 200, 1000, 0x00, "/api/users", "alpha" },
	{ 404, 20, 0x01, "/api/orders", "beta" },
	{ 500, 800000000, 0x03, "/static/app.js", "gamma" },
	{ 503, 5, 0x04, "/index.html", "alpha-2" },
	{ -1, 0, 0x80, "", "x" },
	{ 301, 12345, 0x10, "/api/search", "beta" },
	{ 200, 99, 0x05, "/api/users/7", "delta" },
	{ 502, 1ull << 40, 0xff, "/static/style.css", "alpha" },
	{ 0, 7, 0x08, "/api/*", "*" },
	{ 404, 100, 0x02, "/Api/Orders", "Beta" },
};
#define NR_REQS (sizeof(reqs) / sizeof(reqs[0]))

static void emit_reqs(void)
{
	size_t i;

	for (i = 0; i < NR_REQS; i++)
		fdr_flt_req(reqs[i].status, reqs[i].lat, reqs[i].flags, reqs[i].path, reqs[i].host);
}

/* Which of reqs[] are in instance @inst's buffer (by their position: lat is unique). */
static unsigned recorded_mask(uint32_t inst, size_t *n_other)
{
	struct fdr_test_recs r;
	unsigned mask = 0;
	size_t i, k;

	cr_assert_eq(fdr_test_collect(env.s, inst, -1, 0, &r), 0, "read the trace");
	if (n_other)
		*n_other = 0;
	for (i = 0; i < r.nr; i++) {
		req_rec_t q;

		if (r.v[i].len < sizeof(q) ||
		    ((struct fdr_common *)(void *)r.v[i].payload)->type != fdr_ev_flt_req.id) {
			if (n_other)
				(*n_other)++;
			continue;
		}
		memcpy(&q, r.v[i].payload, sizeof(q));
		for (k = 0; k < NR_REQS; k++)
			if (reqs[k].lat == q.lat && reqs[k].status == q.status)
				mask |= 1u << k;
	}
	fdr_test_recs_free(&r);
	return mask;
}

static void clear_trace(void)
{
	ok_wr("trace", O_TRUNC, "");
}

static uint64_t cpu_entries(uint32_t inst)
{
	int nr = fdr_ring_nr_cpus(env.s, inst), c;
	uint64_t n = 0;

	for (c = 0; c < nr; c++) {
		struct fdr_cpu_stats st;

		cr_assert_eq(fdr_ring_stats(env.s, inst, (uint32_t)c, &st), 0);
		cr_assert_eq(st.overrun, 0, "records overwritten");
		n += st.entries;
	}
	return n;
}

/* ---- the grammar, by what gets recorded ------------------------------------------------------ */

static int32_t my_tid(void)
{
	return (int32_t)syscall(SYS_gettid);
}

/*
 * One row: the filter text ("%d" in it takes @arg: the pid, CPU, ...) and which
 * of reqs[] it lets through. The emitting thread is pinned to the first allowed
 * CPU and named "flt-emit".
 */
struct grammar_case {
	const char *text;
	enum { ARG_NONE, ARG_TID, ARG_CPU, ARG_OTHER_CPU } arg;
	int (*match)(const struct req *r);
};

#define M(name, expr)                        \
	static int name(const struct req *r) \
	{                                    \
		(void)r;                     \
		return (expr);               \
	}
M(m_ge500, r->status >= 500)
M(m_eq404, r->status == 404)
M(m_ne200, r->status != 200)
M(m_lt0, r->status < 0)
M(m_le0, r->status <= 0)
M(m_gt1m, r->lat > 1000000)
M(m_band3, (r->flags & 3) != 0)
M(m_band16, (r->flags & 0x10) != 0)
M(m_path_eq, strcmp(r->path, "/api/users") == 0)
M(m_path_api, strncmp(r->path, "/api/", 5) == 0)
M(m_path_js, strlen(r->path) >= 3 && strcmp(r->path + strlen(r->path) - 3, ".js") == 0)
M(m_path_q, strcmp(r->path, "/api/orders") == 0)
M(m_path_cls, strlen(r->path) && strchr("sh", r->path[strlen(r->path) - 1]))
M(m_path_star_lit, strcmp(r->path, "/api/*") == 0)
M(m_path_ne_empty, r->path[0] != 0)
M(m_host_eq, strcmp(r->host, "alpha") == 0)
M(m_host_pre, strncmp(r->host, "alpha", 5) == 0)
M(m_host_ne, strcmp(r->host, "beta") != 0)
M(m_host_substr, strstr(r->host, "et") != NULL)
M(m_and, r->status >= 500 && strncmp(r->path, "/static/", 8) == 0)
M(m_or, r->status == 200 || r->status == 404)
M(m_not, !(r->status == 200))
M(m_not_and, !(r->status >= 400 && r->status < 500) && r->lat < 100)
M(m_paren, (r->status == 404 || r->status == 503) && ((r->flags & 4) || (r->flags & 1)))
M(m_prec, r->status == 500 || (r->status == 404 && (r->flags & 1)))
M(m_prec2, (r->status == 500 || r->status == 404) && (r->flags & 1))
M(m_notnot, !!(r->status == 301))
M(m_all, 1)
M(m_none, 0)
M(m_hex, r->status == 0x1f6)
M(m_oct, r->status == 0764)
M(m_neg, r->status == -1)
M(m_u64, r->lat == (1ull << 40))
M(m_u8, r->flags == 255)
#undef M

static const struct grammar_case grammar[] = {
	{ "status >= 500", ARG_NONE, m_ge500 },
	{ "status == 404", ARG_NONE, m_eq404 },
	{ "status != 200", ARG_NONE, m_ne200 },
	{ "status < 0", ARG_NONE, m_lt0 },
	{ "status <= 0", ARG_NONE, m_le0 },
	{ "lat > 1000000", ARG_NONE, m_gt1m },
	{ "flags & 3", ARG_NONE, m_band3 },
	{ "flags & 0x10", ARG_NONE, m_band16 },
	{ "path == \"/api/users\"", ARG_NONE, m_path_eq },
	{ "path ~ \"/api/*\"", ARG_NONE, m_path_api },
	{ "path ~ \"*.js\"", ARG_NONE, m_path_js },
	{ "path ~ \"/api/?rders\"", ARG_NONE, m_path_q },
	{ "path ~ \"*[sh]\"", ARG_NONE, m_path_cls },
	{ "path == \"/api/*\"", ARG_NONE, m_path_star_lit },
	{ "path != ''", ARG_NONE, m_path_ne_empty },
	{ "host == \"alpha\"", ARG_NONE, m_host_eq },
	{ "host ~ 'alpha*'", ARG_NONE, m_host_pre },
	{ "host != 'beta'", ARG_NONE, m_host_ne },
	{ "host ~ \"*et*\"", ARG_NONE, m_host_substr },
	{ "status >= 500 && path ~ \"/static/*\"", ARG_NONE, m_and },
	{ "status == 200 || status == 404", ARG_NONE, m_or },
	{ "!(status == 200)", ARG_NONE, m_not },
	{ "!(status >= 400 && status < 500) && lat < 100", ARG_NONE, m_not_and },
	{ "(status == 404 || status == 503) && (flags & 4 || flags & 1)", ARG_NONE, m_paren },
	{ "status == 500 || status == 404 && flags & 1", ARG_NONE, m_prec },
	{ "(status == 500 || status == 404) && flags & 1", ARG_NONE, m_prec2 },
	{ "!!(status == 301)", ARG_NONE, m_notnot },
	{ "((((status == 301))))", ARG_NONE, m_notnot },
	{ "status == 0x1f6", ARG_NONE, m_hex },
	{ "status == 0764", ARG_NONE, m_oct },
	{ "status == -1", ARG_NONE, m_neg },
	{ "lat == 1099511627776", ARG_NONE, m_u64 },
	{ "flags == 255", ARG_NONE, m_u8 },
	{ "common_pid == %d", ARG_TID, m_all },
	{ "common_pid != %d", ARG_TID, m_none },
	{ "common_pid == %d && status == 404", ARG_TID, m_eq404 },
	{ "CPU == %d", ARG_CPU, m_all },
	{ "cpu != %d", ARG_CPU, m_none },
	{ "common_cpu == %d", ARG_OTHER_CPU, m_none },
	{ "CPU & CPUS{%d}", ARG_CPU, m_all },
	{ "COMM == \"flt-emit\"", ARG_NONE, m_all },
	{ "comm ~ \"flt-*\" && status == 404", ARG_NONE, m_eq404 },
	{ "COMM ~ \"*nomatch*\"", ARG_NONE, m_none },
};

/* @tmpl with its "%d" replaced by @v */
static void subst(char *buf, size_t len, const char *tmpl, int v)
{
	const char *p = strstr(tmpl, "%d");

	cr_assert_not_null(p, "no %%d in '%s'", tmpl);
	snprintf(buf, len, "%.*s%d%s", (int)(p - tmpl), tmpl, v, p + 2);
}

struct emit_arg {
	int cpu;
	int32_t tid;
};

static void *emit_thread(void *arg)
{
	struct emit_arg *a = arg;

	prctl(PR_SET_NAME, "flt-emit");
	a->cpu = fdr_test_pin(0);
	a->tid = my_tid();
	emit_reqs();
	return NULL;
}

Test(filter, grammar_table)
{
	size_t k;
	int cpu, other_cpu;

	ok_wr("events/flt/req/enable", O_TRUNC, "1");
	for (k = 0; k < sizeof(grammar) / sizeof(grammar[0]); k++) {
		const struct grammar_case *g = &grammar[k];
		struct emit_arg a = { -1, 0 };
		char text[256], want[300];
		unsigned expect = 0, got;
		pthread_t t;
		size_t i, n_other;

		/* the emitter: a fresh thread (or this one for the pid rows) on the first CPU */
		cpu = fdr_test_pin(0);
		other_cpu = cpu + 1;
		switch (g->arg) {
		case ARG_NONE:
			snprintf(text, sizeof(text), "%s", g->text);
			break;
		case ARG_TID:
			/* the emitter is this thread for pid rows */
			subst(text, sizeof(text), g->text, (int)my_tid());
			break;
		case ARG_CPU:
			subst(text, sizeof(text), g->text, cpu);
			break;
		case ARG_OTHER_CPU:
			subst(text, sizeof(text), g->text, other_cpu);
			break;
		}
		ok_wr("events/flt/req/filter", O_TRUNC, text);
		snprintf(want, sizeof(want), "%s\n", text);
		expect_file("events/flt/req/filter", want);
		clear_trace();
		if (g->arg == ARG_TID) {
			prctl(PR_SET_NAME, "flt-emit");
			emit_reqs();
		} else {
			cr_assert_eq(pthread_create(&t, NULL, emit_thread, &a), 0);
			pthread_join(t, NULL);
			cr_assert_eq(a.cpu, cpu, "the emitter could not be pinned");
		}
		for (i = 0; i < NR_REQS; i++)
			if (g->match(&reqs[i]))
				expect |= 1u << i;
		got = recorded_mask(0, &n_other);
		cr_expect_eq(got, expect, "filter '%s': recorded requests %#x, expected %#x", text,
			     got, expect);
		/* a filtered-out event costs no buffer space */
		cr_expect_eq(cpu_entries(0), (uint64_t)__builtin_popcount(expect),
			     "filter '%s': %" PRIu64 " entries in the buffer, %d records match",
			     text, cpu_entries(0), __builtin_popcount(expect));
	}
	/* "0" clears: everything is recorded again */
	ok_wr("events/flt/req/filter", O_TRUNC, "0");
	expect_file("events/flt/req/filter", "none\n");
	clear_trace();
	emit_reqs();
	cr_expect_eq(recorded_mask(0, NULL), (1u << NR_REQS) - 1, "after '0' everything records");
}

/*
 * COMM is the name of the thread now (docs/tracefs.md, Filters), also after
 * the thread renamed itself.
 */
static void *rename_thread(void *arg)
{
	(void)arg;
	prctl(PR_SET_NAME, "flt-before");
	fdr_flt_req(1, 1, 0, "/before", "h");
	prctl(PR_SET_NAME, "flt-after");
	fdr_flt_req(2, 2, 0, "/after", "h");
	return NULL;
}

Test(filter, comm_follows_rename)
{
	struct fdr_test_recs r;
	pthread_t t;
	size_t i;
	int32_t seen[2] = { 0, 0 };

	ok_wr("events/flt/req/enable", O_TRUNC, "1");
	ok_wr("events/flt/req/filter", O_TRUNC, "COMM == \"flt-after\"");
	cr_assert_eq(pthread_create(&t, NULL, rename_thread, NULL), 0);
	pthread_join(t, NULL);
	cr_assert_eq(fdr_test_collect(env.s, 0, -1, 0, &r), 0);
	for (i = 0; i < r.nr; i++) {
		req_rec_t q;

		memcpy(&q, r.v[i].payload, sizeof(q));
		if (q.status == 1 || q.status == 2)
			seen[q.status - 1]++;
	}
	fdr_test_recs_free(&r);
	cr_expect(
		seen[0] == 0 && seen[1] == 1,
		"COMM == \"flt-after\": recorded %d events named flt-before (expected 0) and %d named flt-after (expected 1): the filter saw a stale thread name",
		seen[0], seen[1]);
}

/* ---- errors: the filter file, error_log and its caret, the old filter kept ------------------ */

/*
 * Each row: the text, the position the parser blames (the kernel's lasterr_pos:
 * for errors inside a predicate the byte after the one it stood on, docs/tracefs.md, Filters)
 * and the message. The filter file puts its caret under min(pos, length of the
 * text); error_log puts it under byte pos of the command, 11 columns in.
 */
static const struct {
	const char *text;
	int pos;
	const char *msg;
} filter_errors[] = {
	{ "nosuch == 1", 7, "Field not found" },
	{ "status = 1", 8, "Invalid operator" },
	{ "status !~ \"a\"", 8, "Invalid operator" },
	{ "status == \"500\"", 11, "Expecting numeric field" },
	{ "status ~ \"5*\"", 10, "Expecting numeric field" },
	{ "path == 5", 9, "Expecting string field" },
	{ "path < \"a\"", 8, "Illegal operation for field type" },
	{ "path & CPUS{0}", 8, "Illegal operation for field type" },
	{ "path == abc", 9, "Invalid value (did you forget quotes)?" },
	{ "status == 5000000000", 11, "Illegal integer value" },
	{ "status == 12x", 11, "Illegal integer value" },
	{ "status < 1 > 2", 11, "Too many terms in predicate expression" },
	{ "status == 1 & status == 2", 12, "Too many terms in predicate expression" },
	{ "(status == 1", 0, "Too many '('" },
	{ "status == 1)", 11, "Too few '('" },
	{ "status == 1 || )", 15, "Too few '('" },
	{ "path == \"abc", 8, "Missing matching quote" },
	{ "path == 'ab\"c", 8, "Missing matching quote" },
	{ "CPU & CPUS1", 12, "Missing '{'" },
	{ "CPU & CPUS{1", 13, "Missing '}'" },
	{ "CPU & CPUS{x}", 13, "Invalid cpulist" },
	{ "CPU & CPUS{}", 12, "Invalid cpulist" },
	{ "status == 1 &&", 12, "Meaningless filter expression" },
	{ "&& status == 1", 0, "Meaningless filter expression" },
	{ "!", 1, "No filter found" },
};

static void check_error_row(const char *text, int pos, const char *msg, int log_caret)
{
	char want_file[1400], want_log[1400], m[1024], *log, *t;
	int len = (int)strlen(text), fpos = pos < len ? pos : len;
	ssize_t ret;

	ret = wr("events/flt/req/filter", O_TRUNC, text, m, sizeof(m));
	cr_expect_eq(ret, -EINVAL, "filter '%s': write returned %zd, expected -EINVAL", text, ret);
	snprintf(want_file, sizeof(want_file), "%s\n%*s^\nparse_error: %s\n\n", text, fpos, "",
		 msg);
	t = cat("events/flt/req/filter");
	cr_expect_str_eq(t, want_file,
			 "filter '%s': the filter file reads\n%s\nexpected (caret at %d)\n%s", text,
			 t, fpos, want_file);
	free(t);
	log = last_error("");
	if (log_caret)
		snprintf(want_log, sizeof(want_log),
			 "event filter parse error: error: %s\n  Command: %s\n%*s^\n", msg, text,
			 11 + pos, "");
	else
		snprintf(want_log, sizeof(want_log),
			 "event filter parse error: error: %s\n  Command: %s\n", msg, text);
	cr_expect_str_eq(log, want_log, "filter '%s': error_log entry\n%s\nexpected\n%s", text, log,
			 want_log);
	free(log);
}

Test(filter, error_table_keeps_previous_filter)
{
	size_t k;
	unsigned want = 0, got;

	ok_wr("events/flt/req/enable", O_TRUNC, "1");
	ok_wr("events/flt/req/filter", O_TRUNC, "status >= 500");
	for (k = 0; k < NR_REQS; k++)
		if (reqs[k].status >= 500)
			want |= 1u << k;
	for (k = 0; k < sizeof(filter_errors) / sizeof(filter_errors[0]); k++) {
		check_error_row(filter_errors[k].text, filter_errors[k].pos, filter_errors[k].msg,
				1);
		/* the rejected filter did not replace the previous one */
		clear_trace();
		emit_reqs();
		got = recorded_mask(0, NULL);
		cr_expect_eq(
			got, want,
			"after the rejected '%s': recorded %#x, expected %#x (status >= 500 still active)",
			filter_errors[k].text, got, want);
	}
	/* an empty write: EINVAL, "Error: (0)" in the file, "Error" in error_log */
	{
		char m[256];
		ssize_t ret = wr("events/flt/req/filter", O_TRUNC, "\n", m, sizeof(m));
		char *log;

		cr_expect_eq(ret, -EINVAL, "an empty filter: %zd", ret);
		expect_file("events/flt/req/filter", "\nError: (0)\n\n");
		log = last_error("");
		cr_expect(strncmp(log, "event filter parse error: error: Error\n", 39) == 0,
			  "error_log after an empty filter: %s", log);
		free(log);
	}
	clear_trace();
	emit_reqs();
	cr_expect_eq(recorded_mask(0, NULL), want, "status >= 500 is still the filter");
	/* a good filter replaces the error text; "0" clears */
	ok_wr("events/flt/req/filter", O_TRUNC, "status == 404");
	expect_file("events/flt/req/filter", "status == 404\n");
	ok_wr("events/flt/req/filter", O_TRUNC, "0");
	expect_file("events/flt/req/filter", "none\n");
}

/*
 * A quoted operand longer than 255 bytes: blamed at its closing quote. The filter
 * file shows the whole block, message included. (An error_log entry has no room
 * for a caret that far: the caret is not checked there.)
 */
Test(filter, operand_too_long)
{
	char big[400];

	ok_wr("events/flt/req/enable", O_TRUNC, "1");
	snprintf(big, sizeof(big), "path == \"%0260d\"", 0);
	check_error_row(big, 1 + 269, "Operand too long", 0);
}

/* A script that adjusts a filter in a loop: every write is taken. */
Test(filter, rewritten_many_times)
{
	char text[64], m[512];
	int i;
	ssize_t ret = 0;

	ok_wr("events/flt/req/enable", O_TRUNC, "1");
	for (i = 0; i < 300; i++) {
		snprintf(text, sizeof(text), "status >= %d", i);
		ret = wr("events/flt/req/filter", O_TRUNC, text, m, sizeof(m));
		if (ret < 0)
			break;
	}
	cr_expect_eq(i, 300, "filter write %d of 300 ('%s') failed: %s (%s)", i + 1, text,
		     strerror((int)-ret), m);
}

/* events/SYS/filter: every event that has the fields; the others keep theirs */
Test(filter, system_filter)
{
	char *t;

	ok_wr("events/flt/enable", O_TRUNC, "1");
	ok_wr("events/flt/tick/filter", O_TRUNC, "n > 10");
	ok_wr("events/flt/filter", O_TRUNC, "status >= 500");
	t = cat("events/flt/filter");
	cr_expect(strncmp(t, "### global filter ###\n", 22) == 0, "events/flt/filter reads %s", t);
	free(t);
	expect_file("events/flt/req/filter", "status >= 500\n");
	expect_file("events/flt/other/filter", "status >= 500\n");
	/* tick has no field 'status': it keeps n > 10, its file says why */
	t = cat("events/flt/tick/filter");
	cr_expect(
		strstr(t, "status >= 500\n") == t &&
			strstr(t,
			       "parse_error: Couldn't find or set field in one of a subsystem's events\n"),
		"events/flt/tick/filter after a system filter it lacks the field of:\n%s", t);
	free(t);
	clear_trace();
	emit_reqs();
	fdr_flt_other(200, 1);
	fdr_flt_other(501, 2);
	fdr_flt_tick(5);
	fdr_flt_tick(50);
	{
		struct fdr_test_recs r;
		size_t i, n_req = 0, n_other = 0, n_tick = 0;

		cr_assert_eq(fdr_test_collect(env.s, 0, -1, 0, &r), 0);
		for (i = 0; i < r.nr; i++) {
			const struct fdr_common *c = (const void *)r.v[i].payload;
			int32_t v;

			memcpy(&v, r.v[i].payload + 8, 4);
			if (c->type == fdr_ev_flt_req.id) {
				n_req++;
				cr_expect(v >= 500, "req %d passed status >= 500", v);
			} else if (c->type == fdr_ev_flt_other.id) {
				n_other++;
				cr_expect(v >= 500, "other %d passed status >= 500", v);
			} else if (c->type == fdr_ev_flt_tick.id) {
				n_tick++;
				cr_expect(v > 10, "tick %d passed n > 10", v);
			}
		}
		fdr_test_recs_free(&r);
		cr_expect(n_req == 3 && n_other == 1 && n_tick == 1,
			  "system filter: %zu req, %zu other, %zu tick recorded, expected 3, 1, 1",
			  n_req, n_other, n_tick);
	}
	/* a filter on a common field reaches every event; "0" clears them all */
	{
		char text[64];

		snprintf(text, sizeof(text), "common_pid != %d", (int)my_tid());
		ok_wr("events/flt/filter", O_TRUNC, text);
		clear_trace();
		emit_reqs();
		fdr_flt_tick(50);
		cr_expect_eq(recorded_mask(0, NULL), 0u,
			     "common_pid != me: nothing of mine recorded");
		cr_expect_eq(cpu_entries(0), 0, "common_pid != me: the buffer is empty");
	}
	ok_wr("events/flt/filter", O_TRUNC, "0");
	expect_file("events/flt/req/filter", "none\n");
	expect_file("events/flt/tick/filter", "none\n");
	clear_trace();
	emit_reqs();
	cr_expect_eq(recorded_mask(0, NULL), (1u << NR_REQS) - 1, "after '0' everything records");
	/* a system filter no event can take: EINVAL */
	{
		char m[512];
		ssize_t ret = wr("events/flt/filter", O_TRUNC, "nosuch == 1", m, sizeof(m));

		cr_expect_eq(ret, -EINVAL, "a system filter no event takes: %zd", ret);
	}
}

/* ---- triggers --------------------------------------------------------------------------------- */

#define TRIG "events/flt/req/trigger"
#define NO_TRIGGERS \
	"# Available triggers:\n# traceon traceoff snapshot stacktrace enable_event disable_event\n"

/* Accepted commands and how the trigger file lists each; then removed with '!'. */
static const struct {
	const char *cmd, *listed, *remove;
} trig_ok[] = {
	{ "traceoff", "traceoff:unlimited\n", "!traceoff" },
	{ "traceon:5", "traceon:count=5\n", "!traceon" },
	{ "traceoff:1 if status >= 500", "traceoff:count=1 if status >= 500\n",
	  "!traceoff:7 if nonsense" },
	{ "stacktrace", "stacktrace:unlimited\n", "!stacktrace" },
	{ "stacktrace:2 if path ~ \"/api/*\"", "stacktrace:count=2 if path ~ \"/api/*\"\n",
	  "!stacktrace:2" },
	{ "snapshot", "snapshot:unlimited\n", "!snapshot" },
	{ "snapshot:3 if status >= 500 && flags & 1",
	  "snapshot:count=3 if status >= 500 && flags & 1\n", "!snapshot" },
	{ "enable_event:flt:tick", "enable_event:flt:tick:unlimited\n", "!enable_event:flt:tick" },
	{ "disable_event:flt:tick:2", "disable_event:flt:tick:count=2\n",
	  "!disable_event:flt:tick:2" },
	{ "enable_event:flt:tick:1 if status == 500",
	  "enable_event:flt:tick:count=1 if status == 500\n", "!enable_event:flt:tick" },
	{ "  traceoff:0", "traceoff:count=0\n", "!traceoff" },
};

/* Refused commands: EINVAL, error_log "event trigger parse error" with the caret at '^'. */
static const char *const trig_bad[] = {
	"^nosuch",
	"^traceof",
	"traceoff:^x",
	"traceoff:^-1",
	"traceoff:^",
	"traceoff:^3x",
	"traceoff ^junk",
	"traceoff ^iff status == 1",
	"enable_event^",
	"enable_event:^flt",
	"enable_event:^flt:nosuch",
	"enable_event:^nosys:tick",
	"stacktrace if nosuch ^== 1",
	"snapshot:2 if status =^ 1",
};

Test(trigger, syntax_listing_removal)
{
	size_t k;

	expect_file(TRIG, NO_TRIGGERS);
	for (k = 0; k < sizeof(trig_ok) / sizeof(trig_ok[0]); k++) {
		ok_wr(TRIG, O_APPEND, trig_ok[k].cmd);
		expect_file(TRIG, trig_ok[k].listed);
		ok_wr(TRIG, O_APPEND, trig_ok[k].remove);
		expect_file(TRIG, NO_TRIGGERS);
	}
	for (k = 0; k < sizeof(trig_bad) / sizeof(trig_bad[0]); k++) {
		const char *caret = strchr(trig_bad[k], '^');
		int pos = (int)(caret - trig_bad[k]);
		char text[256], m[1024], want[600], *log;
		ssize_t ret;

		snprintf(text, sizeof(text), "%.*s%s", pos, trig_bad[k], caret + 1);
		ret = wr(TRIG, O_APPEND, text, m, sizeof(m));
		cr_expect_eq(ret, -EINVAL, "trigger '%s': %zd, expected -EINVAL", text, ret);
		expect_file(TRIG, NO_TRIGGERS);
		log = last_error("");
		snprintf(want, sizeof(want), "event trigger parse error: error: ");
		cr_expect(strncmp(log, want, strlen(want)) == 0, "trigger '%s': error_log: %s",
			  text, log);
		snprintf(want, sizeof(want), "\n  Command: %s\n%*s^\n", text, 11 + pos, "");
		cr_expect(strlen(log) > strlen(want) &&
				  strcmp(log + strlen(log) - strlen(want), want) == 0,
			  "trigger '%s': error_log entry\n%s\nshould end with\n%s", text, log,
			  want);
		free(log);
	}
	/* removing something absent succeeds silently */
	ok_wr(TRIG, O_APPEND, "!stacktrace");
	ok_wr(TRIG, O_APPEND, "!enable_event:flt:tick");
	expect_file(TRIG, NO_TRIGGERS);
}

Test(trigger, duplicates_and_order)
{
	char m[512];

	ok_wr(TRIG, O_APPEND, "traceoff");
	cr_expect_eq(wr(TRIG, O_APPEND, "traceoff", m, sizeof(m)), -EEXIST, "traceoff twice");
	cr_expect_eq(wr(TRIG, O_APPEND, "traceon:3", m, sizeof(m)), -EEXIST,
		     "traceon after traceoff (they share a slot)");
	ok_wr(TRIG, O_APPEND, "stacktrace:2");
	cr_expect_eq(wr(TRIG, O_APPEND, "stacktrace if status > 1", m, sizeof(m)), -EEXIST,
		     "stacktrace twice");
	ok_wr(TRIG, O_APPEND, "enable_event:flt:tick");
	cr_expect_eq(wr(TRIG, O_APPEND, "disable_event:flt:tick", m, sizeof(m)), -EEXIST,
		     "enable_event and disable_event of the same target");
	cr_expect_eq(wr(TRIG, O_APPEND, "enable_event:flt:tick:5", m, sizeof(m)), -EEXIST,
		     "enable_event twice");
	ok_wr(TRIG, O_APPEND, "disable_event:flt:other");
	ok_wr(TRIG, O_APPEND, "snapshot:1");
	cr_expect_eq(wr(TRIG, O_APPEND, "snapshot", m, sizeof(m)), -EEXIST, "snapshot twice");
	/* O_TRUNC (">") does not clear: it adds */
	cr_expect_eq(wr(TRIG, O_TRUNC, "traceoff", m, sizeof(m)), -EEXIST, "'>' does not clear");
	/* newest first */
	expect_file(TRIG, "snapshot:count=1\n"
			  "disable_event:flt:other:unlimited\n"
			  "enable_event:flt:tick:unlimited\n"
			  "stacktrace:count=2\n"
			  "traceoff:unlimited\n");
	/* removing one target leaves the other */
	ok_wr(TRIG, O_APPEND, "!enable_event:flt:tick");
	ok_wr(TRIG, O_APPEND, "!stacktrace");
	expect_file(TRIG, "snapshot:count=1\n"
			  "disable_event:flt:other:unlimited\n"
			  "traceoff:unlimited\n");
	/* an instance has its own triggers */
	cr_assert_eq(fdr_tree_mkdir(env.s, "instances/i1"), 0);
	expect_file("instances/i1/events/flt/req/trigger", NO_TRIGGERS);
}

static char *enable_of(const char *ev)
{
	char path[128];

	snprintf(path, sizeof(path), "events/flt/%s/enable", ev);
	return cat(path);
}

static void expect_enable(const char *ev, const char *want)
{
	char *t = enable_of(ev);

	cr_expect_str_eq(t, want, "events/flt/%s/enable reads %s, expected %s", ev, t, want);
	free(t);
}

/* How many records of each kind the top instance holds. */
static void count_recs(size_t *req, size_t *tick, size_t *stack, size_t *other)
{
	struct fdr_test_recs r;
	size_t i;

	*req = *tick = *stack = *other = 0;
	cr_assert_eq(fdr_test_collect(env.s, 0, -1, 0, &r), 0);
	for (i = 0; i < r.nr; i++) {
		uint16_t type = ((const struct fdr_common *)(const void *)r.v[i].payload)->type;

		if (type == fdr_ev_flt_req.id)
			(*req)++;
		else if (type == fdr_ev_flt_tick.id)
			(*tick)++;
		else if (type == FDR_EVENT_ID_USER_STACK)
			(*stack)++;
		else
			(*other)++;
	}
	fdr_test_recs_free(&r);
}

Test(trigger, soft_mode_and_enable_event)
{
	size_t n_req, n_tick, n_stack, n_other;

	/* armed by a trigger while disabled: 0*, and the target too */
	ok_wr(TRIG, O_APPEND, "enable_event:flt:tick");
	expect_enable("req", "0*\n");
	expect_enable("tick", "0*\n");
	expect_enable("other", "0\n");
	fdr_flt_tick(1); /* tick is off: not recorded */
	fdr_flt_req(200, 1, 0, "/", "h"); /* req is off, but its trigger runs */
	/*
	 * Triggers run synchronously in the writer (issue 3): the target is on for
	 * the very next event, as in the kernel, not once some other thread noticed.
	 */
	fdr_flt_tick(2);
	count_recs(&n_req, &n_tick, &n_stack, &n_other);
	cr_expect(
		n_req == 0 && n_tick == 1,
		"enable_event fired by a disabled event: %zu req, %zu tick recorded right after it fired, expected 0, 1",
		n_req, n_tick);
	fdr_sync();
	fdr_flt_tick(3);
	count_recs(&n_req, &n_tick, &n_stack, &n_other);
	cr_expect(n_req == 0 && n_tick >= 1,
		  "enable_event: %zu req, %zu tick recorded after a resync, expected 0, >= 1",
		  n_req, n_tick);
	expect_enable("tick", "1*\n");
	ok_wr("events/flt/req/enable", O_TRUNC, "1");
	expect_enable("req", "1*\n");
	/* removing the trigger drops the stars */
	ok_wr(TRIG, O_APPEND, "!enable_event:flt:tick");
	expect_enable("req", "1\n");
	expect_enable("tick", "1\n");

	/* disable_event turns the target off */
	clear_trace();
	ok_wr(TRIG, O_APPEND, "disable_event:flt:tick:1");
	fdr_flt_tick(3);
	fdr_flt_req(200, 2, 0, "/", "h");
	fdr_flt_tick(4);
	count_recs(&n_req, &n_tick, &n_stack, &n_other);
	cr_expect(n_req == 1 && n_tick == 1,
		  "disable_event: %zu req, %zu tick recorded, expected 1, 1", n_req, n_tick);
	expect_enable("tick", "0*\n");
	expect_file(TRIG, "disable_event:flt:tick:count=0\n");
	ok_wr(TRIG, O_APPEND, "!disable_event:flt:tick");

	/* enable_event counts only the fires that change something */
	ok_wr(TRIG, O_APPEND, "enable_event:flt:tick:2");
	fdr_flt_req(200, 3, 0, "/", "h");
	fdr_flt_req(200, 4, 0, "/", "h");
	fdr_flt_req(200, 5, 0, "/", "h");
	expect_file(TRIG, "enable_event:flt:tick:count=1\n");
}

Test(trigger, traceoff_counts_and_if)
{
	size_t n_req, n_tick, n_stack, n_other;

	ok_wr("events/flt/req/enable", O_TRUNC, "1");
	/* traceoff:1 decrements once: the triggering record is written */
	ok_wr(TRIG, O_APPEND, "traceoff:1");
	fdr_flt_req(200, 1, 0, "/", "h");
	fdr_flt_req(200, 2, 0, "/", "h");
	expect_file("tracing_on", "0\n");
	expect_file(TRIG, "traceoff:count=0\n");
	count_recs(&n_req, &n_tick, &n_stack, &n_other);
	cr_expect_eq(n_req, 1, "traceoff: %zu records, expected the triggering one only", n_req);
	ok_wr("tracing_on", O_TRUNC, "1");
	fdr_flt_req(200, 3, 0, "/", "h");
	expect_file("tracing_on", "1\n");
	expect_file(TRIG, "traceoff:count=0\n");
	count_recs(&n_req, &n_tick, &n_stack, &n_other);
	cr_expect_eq(n_req, 2, "a used-up traceoff:1 stopped tracing again (%zu records)", n_req);
	ok_wr(TRIG, O_APPEND, "!traceoff");

	/* traceoff:2 while tracing is already off: no change, no decrement */
	ok_wr("tracing_on", O_TRUNC, "0");
	ok_wr(TRIG, O_APPEND, "traceoff:2");
	fdr_flt_req(200, 4, 0, "/", "h");
	fdr_flt_req(200, 5, 0, "/", "h");
	expect_file(TRIG, "traceoff:count=2\n");
	ok_wr(TRIG, O_APPEND, "!traceoff");

	/* traceon:1 turns it back on; the triggering record is not written (tracing was off) */
	clear_trace();
	ok_wr(TRIG, O_APPEND, "traceon:1 if status == 201");
	fdr_flt_req(200, 6, 0, "/", "h");
	expect_file("tracing_on", "0\n");
	fdr_flt_req(201, 7, 0, "/", "h");
	expect_file("tracing_on", "1\n");
	expect_file(TRIG, "traceon:count=0 if status == 201\n");
	fdr_flt_req(202, 8, 0, "/", "h");
	count_recs(&n_req, &n_tick, &n_stack, &n_other);
	cr_expect_eq(n_req, 1, "after traceon: %zu records, expected 1", n_req);
	ok_wr(TRIG, O_APPEND, "!traceon");

	/* traceoff if status >= 500: the 500 is the last record */
	clear_trace();
	ok_wr(TRIG, O_APPEND, "traceoff if status >= 500");
	emit_reqs();
	expect_file("tracing_on", "0\n");
	cr_expect_eq(recorded_mask(0, NULL), 0x7u,
		     "traceoff if status >= 500: recorded %#x, expected the first three requests",
		     recorded_mask(0, NULL));
}

/* The frames of the user stack record must include this function's return address. */
static __attribute__((noinline)) void stack_emitter(int32_t status)
{
	fdr_flt_req(status, 42, 0, "/stack", "h");
	__asm__ volatile("" ::: "memory"); /* not a tail call */
}

Test(trigger, stacktrace)
{
	struct fdr_test_recs r;
	size_t i, n_stack = 0;
	char *t;

	ok_wr("events/flt/req/enable", O_TRUNC, "1");
	ok_wr(TRIG, O_APPEND, "stacktrace:2 if status >= 500");
	fdr_test_pin(0);
	stack_emitter(200);
	stack_emitter(500);
	stack_emitter(501);
	stack_emitter(502);
	expect_file(TRIG, "stacktrace:count=0 if status >= 500\n");
	cr_assert_eq(fdr_test_collect(env.s, 0, -1, 0, &r), 0);
	cr_assert_eq(r.nr, 6, "%zu records, expected 4 requests and 2 user stacks", r.nr);
	for (i = 0; i < r.nr; i++) {
		const struct fdr_common *c = (const void *)r.v[i].payload;
		req_rec_t q;

		if (c->type != FDR_EVENT_ID_USER_STACK)
			continue;
		n_stack++;
		/* right after the triggering event, same thread, its tgid, our frames */
		cr_assert(i > 0, "a user stack record before any request");
		memcpy(&q, r.v[i - 1].payload, sizeof(q));
		cr_expect(q.fdr__common.type == fdr_ev_flt_req.id && q.status >= 500 &&
				  q.status <= 501,
			  "the user stack record follows a request of status %d", q.status);
		cr_expect_eq(c->pid, q.fdr__common.pid, "user stack of another thread");
		{
			uint32_t tgid;
			uint64_t addr[FDR_STACK_DEPTH];
			uintptr_t fn = (uintptr_t)stack_emitter;
			int k, found = 0;

			cr_assert_geq(r.v[i].len, 16 + sizeof(addr));
			memcpy(&tgid, r.v[i].payload + 8, 4);
			memcpy(addr, r.v[i].payload + 16, sizeof(addr));
			cr_expect_eq(tgid, (uint32_t)getpid());
			for (k = 0; k < FDR_STACK_DEPTH; k++)
				if (addr[k] > fn && addr[k] < fn + 256)
					found = 1;
			cr_expect(found,
				  "no frame of the user stack returns into stack_emitter() (%#lx)",
				  (unsigned long)fn);
		}
	}
	fdr_test_recs_free(&r);
	cr_expect_eq(n_stack, 2, "stacktrace:2: %zu user stack records", n_stack);
	/* the text: "<user stack trace>" on the line after the event */
	t = cat("trace");
	{
		char *a = strstr(t, "status=500"), *nl = a ? strchr(a, '\n') : NULL;

		cr_expect(nl && strstr(nl + 1, "<user stack trace>") &&
				  strstr(nl + 1, "<user stack trace>") < strstr(nl + 1, "status="),
			  "trace: no <user stack trace> line right after the status=500 line:\n%s",
			  t);
		cr_expect(strstr(t, " =>  <"), "trace: no ' =>  <address>' lines:\n%s", t);
	}
	free(t);
}

/* The C counterpart of the demo test: snapshot if status >= 500. */
Test(trigger, snapshot_on_error)
{
	static const int32_t statuses[] = { 200, 404, 200, 301, 200, 200, 500, 200, 503, 200 };
	struct fdr_test_recs r;
	size_t i;
	char *t;

	ok_wr("events/flt/req/enable", O_TRUNC, "1");
	ok_wr(TRIG, O_APPEND, "snapshot:1 if status >= 500");
	t = cat("snapshot"); /* registering the trigger allocated the spare buffers */
	cr_expect(strstr(t, "# * Snapshot is allocated *"), "snapshot reads:\n%s", t);
	free(t);
	for (i = 0; i < sizeof(statuses) / sizeof(statuses[0]); i++)
		fdr_flt_req(statuses[i], i, 0, "/x", "h");
	expect_file(TRIG, "snapshot:count=0 if status >= 500\n");
	/* the snapshot: the seven requests up to the 500, in order, the 500 last */
	cr_assert_eq(fdr_test_collect(env.s, 0, -1, FDR_READ_SNAPSHOT, &r), 0);
	cr_expect_eq(r.nr, 7, "the snapshot holds %zu records, expected 7", r.nr);
	for (i = 0; i < r.nr && i < 7; i++) {
		req_rec_t q;

		memcpy(&q, r.v[i].payload, sizeof(q));
		cr_expect(q.lat == i && q.status == statuses[i],
			  "snapshot record %zu: status %d lat %" PRIu64 ", expected status %d", i,
			  q.status, q.lat, statuses[i]);
	}
	fdr_test_recs_free(&r);
	/* the live buffer goes on from the next one */
	cr_assert_eq(fdr_test_collect(env.s, 0, -1, 0, &r), 0);
	cr_expect_eq(r.nr, 3, "the live buffer holds %zu records, expected 3", r.nr);
	for (i = 0; i < r.nr && i < 3; i++) {
		req_rec_t q;

		memcpy(&q, r.v[i].payload, sizeof(q));
		cr_expect_eq(q.lat, 7 + i, "live record %zu is request %" PRIu64, i, q.lat);
	}
	fdr_test_recs_free(&r);
	/* the snapshot file shows it as text, the 500 last */
	t = cat("snapshot");
	{
		char *last = NULL, *p;

		for (p = t; (p = strstr(p, " req: ")); p++)
			last = p;
		cr_expect(last && strncmp(last, " req: status=500 ", 17) == 0,
			  "the snapshot's last request line is not the 500:\n%s", t);
	}
	free(t);
}

/* ---- set_event_pid -------------------------------------------------------------------------- */

static void *pid_thread(void *arg)
{
	int32_t *tid = arg;

	*tid = my_tid();
	fdr_flt_req(2, 2, 0, "/thread", "h");
	return NULL;
}

Test(pid, set_event_pid)
{
	char buf[64], m[512];
	size_t n_req, n_tick, n_stack, n_other;
	pthread_t t;
	int32_t tid = 0;

	ok_wr("events/flt/enable", O_TRUNC, "1");
	ok_wr("set_event_pid", O_TRUNC, "1"); /* init: not us */
	fdr_flt_req(1, 1, 0, "/", "h");
	count_recs(&n_req, &n_tick, &n_stack, &n_other);
	cr_expect_eq(n_req, 0, "set_event_pid 1: our event was recorded");
	snprintf(buf, sizeof(buf), "%d", (int)getpid());
	ok_wr("set_event_pid", O_APPEND, buf);
	snprintf(buf, sizeof(buf), "1\n%d\n", (int)getpid());
	expect_file("set_event_pid", buf);
	fdr_flt_req(1, 1, 0, "/", "h");
	cr_assert_eq(pthread_create(&t, NULL, pid_thread, &tid), 0); /* a thread: our tgid */
	pthread_join(t, NULL);
	count_recs(&n_req, &n_tick, &n_stack, &n_other);
	cr_expect_eq(n_req, 2, "our pid listed: %zu records, expected 2", n_req);
	/* only this thread's tid */
	clear_trace();
	snprintf(buf, sizeof(buf), "%d", (int)my_tid());
	ok_wr("set_event_pid", O_TRUNC, buf);
	fdr_flt_req(1, 1, 0, "/", "h");
	cr_assert_eq(pthread_create(&t, NULL, pid_thread, &tid), 0);
	pthread_join(t, NULL);
	count_recs(&n_req, &n_tick, &n_stack, &n_other);
	cr_expect_eq(n_req, 1 + (my_tid() == (int32_t)getpid() ? 1 : 0),
		     "only our tid listed: %zu records", n_req);
	/* bad input */
	cr_expect_eq(wr("set_event_pid", O_APPEND, "12 abc", m, sizeof(m)), -EINVAL);
	{
		char *log = last_error("");

		cr_expect(strstr(log, "set_event_pid: error: ") == log &&
				  strstr(log, "\n  Command: 12 abc\n              ^\n"),
			  "error_log for set_event_pid '12 abc':\n%s", log);
		free(log);
	}
	/* '>' clears: everyone records */
	clear_trace();
	ok_wr("set_event_pid", O_TRUNC, "");
	expect_file("set_event_pid", "");
	cr_assert_eq(pthread_create(&t, NULL, pid_thread, &tid), 0);
	pthread_join(t, NULL);
	count_recs(&n_req, &n_tick, &n_stack, &n_other);
	cr_expect_eq(n_req, 1, "set_event_pid cleared: %zu records", n_req);
}

/* ---- set_event_notrace_pid, options/event-fork ---------------------------------------------- */

/* Records of flt:req written by @pid (any pid: -1). */
static size_t count_req_of(int32_t pid)
{
	struct fdr_test_recs r;
	size_t i, n = 0;

	cr_assert_eq(fdr_test_collect(env.s, 0, -1, 0, &r), 0);
	for (i = 0; i < r.nr; i++) {
		const struct fdr_common *c = (const void *)r.v[i].payload;

		if (c->type == fdr_ev_flt_req.id && (pid < 0 || c->pid == pid))
			n++;
	}
	fdr_test_recs_free(&r);
	return n;
}

/*
 * Fork a child that says it runs, waits for a byte on a pipe, writes one
 * flt:req, and ends with exit() (@clean) or _exit(). Returns its pid; *go is the
 * pipe's end that lets it go. (event-fork adds the child from the child, as fork()
 * returns there: the parent waits until it runs.)
 */
static pid_t req_child(int clean, int *go)
{
	int p[2], r[2];
	pid_t pid;
	char c;

	cr_assert_eq(pipe(p), 0);
	cr_assert_eq(pipe(r), 0);
	pid = fork();
	cr_assert(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		close(p[1]);
		close(r[0]);
		if (write(r[1], "r", 1) != 1 || read(p[0], &c, 1) != 1)
			_exit(3);
		fdr_flt_req(7, 7, 0, "/child", "h");
		if (clean)
			exit(0); /* libfdr's destructor runs */
		_exit(0);
	}
	close(p[0]);
	close(r[1]);
	cr_assert_eq(read(r[0], &c, 1), 1, "the child did not start");
	close(r[0]);
	*go = p[1];
	return pid;
}

static void child_end(pid_t pid, int go)
{
	int st;

	cr_assert_eq(write(go, "x", 1), 1);
	close(go);
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child status %#x", st);
}

/* "A\nB\n", ascending */
static void two_pids(char *buf, size_t len, int a, int b)
{
	snprintf(buf, len, "%d\n%d\n", a < b ? a : b, a < b ? b : a);
}

Test(pid, set_event_notrace_pid)
{
	char buf[64], m[512];
	pthread_t t;
	int32_t tid = 0;
	pid_t child;
	int go;

	ok_wr("events/flt/enable", O_TRUNC, "1");
	ok_wr("set_event_notrace_pid", O_TRUNC, "1"); /* init: not us */
	fdr_flt_req(1, 1, 0, "/", "h");
	cr_expect_eq(count_req_of(-1), 1, "notrace 1: our event was not recorded");
	/* our pid: this process's threads record nothing, another process does */
	clear_trace();
	snprintf(buf, sizeof(buf), "%d", (int)getpid());
	ok_wr("set_event_notrace_pid", O_APPEND, buf);
	snprintf(buf, sizeof(buf), "1\n%d\n", (int)getpid());
	expect_file("set_event_notrace_pid", buf);
	child = req_child(0, &go); /* event-fork is off: the child is not added */
	expect_file("set_event_notrace_pid", buf);
	fdr_flt_req(1, 1, 0, "/", "h");
	cr_assert_eq(pthread_create(&t, NULL, pid_thread, &tid), 0); /* our tgid */
	pthread_join(t, NULL);
	child_end(child, go);
	cr_expect_eq(count_req_of((int32_t)getpid()) + count_req_of(tid), 0,
		     "our pid in set_event_notrace_pid: we recorded");
	cr_expect_eq(count_req_of(child), 1, "the child, not listed, did not record");
	cr_expect_eq(count_req_of(-1), 1, "records of others");
	/* notrace wins over set_event_pid */
	clear_trace();
	snprintf(buf, sizeof(buf), "%d", (int)getpid());
	ok_wr("set_event_pid", O_TRUNC, buf);
	fdr_flt_req(1, 1, 0, "/", "h");
	cr_expect_eq(count_req_of(-1), 0, "listed in both: recorded");
	ok_wr("set_event_pid", O_TRUNC, "");
	/* bad input: refused, the list as it was, an error_log entry */
	snprintf(buf, sizeof(buf), "1\n%d\n", (int)getpid());
	cr_expect_eq(wr("set_event_notrace_pid", O_APPEND, "12 abc", m, sizeof(m)), -EINVAL);
	expect_file("set_event_notrace_pid", buf);
	{
		char *log = last_error("");

		cr_expect(strstr(log, "set_event_notrace_pid: error: ") == log &&
				  strstr(log, "\n  Command: 12 abc\n              ^\n"),
			  "error_log for set_event_notrace_pid '12 abc':\n%s", log);
		free(log);
	}
	/* '>' with nothing clears: we record again */
	clear_trace();
	ok_wr("set_event_notrace_pid", O_TRUNC, "");
	expect_file("set_event_notrace_pid", "");
	fdr_flt_req(1, 1, 0, "/", "h");
	cr_expect_eq(count_req_of((int32_t)getpid()), 1, "notrace cleared: not recorded");
}

Test(pid, event_fork)
{
	char buf[64], two[64];
	pid_t child;
	int go;

	ok_wr("events/flt/enable", O_TRUNC, "1");
	snprintf(buf, sizeof(buf), "%d\n", (int)getpid());
	ok_wr("set_event_pid", O_TRUNC, buf);
	/* off: a child of ours is not followed */
	expect_file("options/event-fork", "0\n");
	child = req_child(1, &go);
	expect_file("set_event_pid", buf);
	child_end(child, go);
	cr_expect_eq(count_req_of(child), 0, "event-fork off: the child recorded");
	/* on: the child is listed while it lives, records, and leaves at exit() */
	ok_wr("options/event-fork", O_TRUNC, "1");
	child = req_child(1, &go);
	two_pids(two, sizeof(two), (int)getpid(), (int)child);
	expect_file("set_event_pid", two);
	child_end(child, go);
	cr_expect_eq(count_req_of(child), 1, "event-fork on: the child did not record");
	expect_file("set_event_pid", buf);
	/* a child that ends with _exit() (no destructor) is pruned once reaped */
	child = req_child(0, &go);
	two_pids(two, sizeof(two), (int)getpid(), (int)child);
	expect_file("set_event_pid", two);
	child_end(child, go);
	cr_expect_eq(count_req_of(child), 1, "event-fork on: the _exit child did not record");
	expect_file("set_event_pid", buf);
	/* set_event_notrace_pid follows forks too: the child records nothing */
	ok_wr("set_event_pid", O_TRUNC, "");
	ok_wr("set_event_notrace_pid", O_TRUNC, buf);
	child = req_child(0, &go);
	two_pids(two, sizeof(two), (int)getpid(), (int)child);
	expect_file("set_event_notrace_pid", two);
	child_end(child, go);
	cr_expect_eq(count_req_of(child), 0, "a notrace pid's child recorded");
	expect_file("set_event_notrace_pid", buf);
	ok_wr("set_event_notrace_pid", O_TRUNC, "");
}
