// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test-clock.c - trace clocks: a record's time in the 'mono' (and 'local',
 * 'global', 'perf') clock agrees with CLOCK_MONOTONIC taken around the write to
 * within 1 us, 'boot' with CLOCK_BOOTTIME; 'x86-tsc' and 'counter' are the raw
 * stamps printed as numbers; a record's time does not change from one read to
 * the next. Each check runs with both timestamp sources: the TSC (when it is
 * invariant) and clock_gettime() (FDR_CLOCK_SOURCE=mono).
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

#include <criterion/criterion.h>

#include "fdr-criterion.h"
#include "fdr-test.h"

/* clang-format off */
FDR_EVENT(tclk, tick,
	FDR_PROTO(uint32_t n),
	FDR_ARGS(n),
	FDR_FIELDS(fdr_field_int(uint32_t, n, n)))
/* clang-format on */

static struct fdr_test_env env;

static void fini(void)
{
	fdr_test_teardown(&env);
}

TestSuite(clock, .fini = fini, .timeout = 60);

static uint64_t now_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t rdtsc(void)
{
#if defined(__x86_64__)
	uint32_t lo, hi;

	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
#else
	return 0;
#endif
}

/* source: "tsc" or "mono" (FDR_CLOCK_SOURCE at session creation) */
static void setup(const char *source, const char *clock)
{
	char in[32];

	setenv("FDR_CLOCK_SOURCE", strcmp(source, "mono") == 0 ? "mono" : "", 1);
	cr_assert_eq(fdr_test_setup(&env, NULL), 0, "session setup failed");
	if (strcmp(source, "tsc") == 0 && fdr_session_control(env.s)->ts_source != FDR_TS_TSC)
		cr_skip_test("no invariant TSC here");
	if (strcmp(source, "mono") == 0)
		cr_assert_eq(fdr_session_control(env.s)->ts_source, FDR_TS_MONO,
			     "FDR_CLOCK_SOURCE=mono ignored");
	cr_assert_eq(fdr_test_set_enabled(env.s, &fdr_ev_tclk_tick, 0, 1), 0);
	snprintf(in, sizeof(in), "%s\n", clock);
	cr_assert_eq(fdr_test_puts(env.s, "trace_clock", O_TRUNC, in), (ssize_t)strlen(in));
	fdr_test_pin(0);
}

/* The last record's converted time. */
static uint64_t last_ts(uint64_t *raw)
{
	struct fdr_test_recs rr;
	uint64_t ts;

	cr_assert_eq(fdr_test_collect(env.s, 0, -1, 0, &rr), 0);
	cr_assert_gt(rr.nr, 0);
	ts = rr.v[rr.nr - 1].ts;
	if (raw)
		*raw = rr.v[rr.nr - 1].raw_ts;
	fdr_test_recs_free(&rr);
	return ts;
}

/*
 * For each delay after the session's creation: take the reference clock, write,
 * take it again; the record's time must lie in [before - 1 us, after + 1 us].
 */
static void check_bracket(const char *source, const char *clock, clockid_t ref)
{
	static const int delays_ms[] = { 0, 10, 60, 200 };
	uint64_t start;
	size_t i;

	setup(source, clock);
	start = now_ns(CLOCK_MONOTONIC);
	fdr_tclk_tick(0); /* warm the path: first-write costs are not the clock's */
	for (i = 0; i < sizeof(delays_ms) / sizeof(delays_ms[0]); i++) {
		uint64_t t0, t1, ts, until = start + (uint64_t)delays_ms[i] * 1000000ull;
		struct timespec d = { 0, 0 };

		while (now_ns(CLOCK_MONOTONIC) < until) {
			d.tv_nsec = 1000000;
			nanosleep(&d, NULL);
		}
		fdr_tclk_tick(1000 + (uint32_t)i); /* the same cache lines as the measured write */
		t0 = now_ns(ref);
		fdr_tclk_tick((uint32_t)i + 1);
		t1 = now_ns(ref);
		ts = last_ts(NULL);
		cr_expect(ts + 1000 >= t0 && ts <= t1 + 1000,
			  "%s source, clock %s, %d ms after creation: record at %" PRIu64
			  ", reference [%" PRIu64 ", %" PRIu64 "] (%+" PRId64
			  " ns before, %+" PRId64 " ns after)",
			  source, clock, delays_ms[i], ts, t0, t1, (int64_t)(ts - t0),
			  (int64_t)(ts - t1));
	}
}

Test(clock, mono_tsc)
{
	check_bracket("tsc", "mono", CLOCK_MONOTONIC);
}

Test(clock, mono_clock_gettime)
{
	check_bracket("mono", "mono", CLOCK_MONOTONIC);
}

Test(clock, local_global_perf_are_monotonic)
{
	check_bracket("tsc", "local", CLOCK_MONOTONIC);
	fdr_test_teardown(&env);
	check_bracket("tsc", "global", CLOCK_MONOTONIC);
	fdr_test_teardown(&env);
	check_bracket("tsc", "perf", CLOCK_MONOTONIC);
}

Test(clock, boot_tsc)
{
	check_bracket("tsc", "boot", CLOCK_BOOTTIME);
}

Test(clock, boot_clock_gettime)
{
	check_bracket("mono", "boot", CLOCK_BOOTTIME);
}

Test(clock, x86_tsc_is_raw)
{
	uint64_t c0, c1, ts, raw;
	struct fdr_test_recs rr;
	char *txt, want[64];
	regex_t re;
	int err;

	setup("tsc", "x86-tsc");
	fdr_tclk_tick(0);
	c0 = rdtsc();
	fdr_tclk_tick(1);
	c1 = rdtsc();
	ts = last_ts(&raw);
	cr_assert_eq(ts, raw, "x86-tsc shows the raw stamp");
	cr_assert(ts >= c0 && ts <= c1, "tsc %" PRIu64 " outside [%" PRIu64 ", %" PRIu64 "]", ts,
		  c0, c1);
	/* printed as " %12llu", no decimal point */
	txt = fdr_test_read(env.s, "trace", 0, NULL, &err);
	cr_assert_not_null(txt);
	snprintf(want, sizeof(want), " %12" PRIu64 ": tick: n=1\n", ts);
	cr_assert_not_null(strstr(txt, want), "trace lacks '%s':\n%s", want, txt);
	cr_assert_eq(regcomp(&re, "\\] \\.\\.\\.\\.\\. +[0-9]+\\.[0-9]{6}: tick",
			     REG_EXTENDED | REG_NOSUB),
		     0);
	cr_assert_neq(regexec(&re, txt, 0, NULL, 0), 0, "no seconds.micros with x86-tsc:\n%s", txt);
	regfree(&re);
	free(txt);
	/* stats print raw numbers too: "now ts: %llu" */
	cr_assert_eq(fdr_test_collect(env.s, 0, -1, 0, &rr), 0);
	snprintf(want, sizeof(want), "per_cpu/cpu%u/stats", rr.v[0].cpu);
	fdr_test_recs_free(&rr);
	txt = fdr_test_read(env.s, want, 0, NULL, &err);
	cr_assert_not_null(txt);
	cr_assert_eq(regcomp(&re, "\noldest event ts: [0-9]+\nnow ts: [0-9]+\n",
			     REG_EXTENDED | REG_NOSUB),
		     0);
	cr_assert_eq(regexec(&re, txt, 0, NULL, 0), 0, "stats with x86-tsc:\n%s", txt);
	regfree(&re);
	free(txt);
}

Test(clock, counter_is_raw)
{
	uint64_t ts, raw, t0, t1;

	setup("mono", "counter");
	fdr_tclk_tick(0);
	t0 = now_ns(CLOCK_MONOTONIC);
	fdr_tclk_tick(1);
	t1 = now_ns(CLOCK_MONOTONIC);
	ts = last_ts(&raw);
	cr_assert_eq(ts, raw);
	cr_assert(ts >= t0 && ts <= t1,
		  "with clock_gettime stamps the raw value is CLOCK_MONOTONIC ns");
}

Test(clock, uptime_ticks)
{
	uint64_t ts, t0, t1;

	setup("mono", "uptime");
	t0 = now_ns(CLOCK_MONOTONIC) / 10000000ull;
	fdr_tclk_tick(1);
	t1 = now_ns(CLOCK_MONOTONIC) / 10000000ull;
	ts = last_ts(NULL);
	cr_assert(ts >= t0 && ts <= t1,
		  "uptime %" PRIu64 " outside [%" PRIu64 ", %" PRIu64 "] (10 ms ticks)", ts, t0,
		  t1);
}

Test(clock, clock_change_keeps_the_record_time_consistent)
{
	uint64_t mono, boot;
	int64_t off0, off1, diff;

	setup("tsc", "mono");
	fdr_tclk_tick(1);
	mono = last_ts(NULL);
	cr_assert_eq(fdr_test_puts(env.s, "trace_clock", O_TRUNC, "boot\n"), 5);
	boot = last_ts(NULL);
	off0 = (int64_t)(now_ns(CLOCK_BOOTTIME) - now_ns(CLOCK_MONOTONIC));
	off1 = (int64_t)(boot - mono);
	diff = off1 - off0;
	cr_assert(diff >= -2000 && diff <= 2000,
		  "boot - mono of one record (%" PRId64 ") differs from the system's (%" PRId64 ")",
		  off1, off0);
}

/*
 * A record's time is a property of the record: reading it again later (a new
 * reader, the trace file read twice) gives the same value. spec 5.1: 'trace' gives
 * the same output every time while nothing is recorded.
 */
Test(clock, record_ts_stable_across_readers)
{
	struct timespec d = { 0, 60 * 1000 * 1000 };
	uint64_t first, later;
	int i;

	setup("tsc", "mono");
	nanosleep(&d, NULL);
	fdr_tclk_tick(1);
	first = last_ts(NULL);
	for (i = 0; i < 5; i++) {
		nanosleep(&d, NULL);
		later = last_ts(NULL);
		cr_assert_eq(later, first,
			     "read %d: the record's time moved from %" PRIu64 " to %" PRIu64
			     " (%+" PRId64 " ns)",
			     i + 2, first, later, (int64_t)(later - first));
	}
}

Test(clock, record_ts_stable_clock_gettime)
{
	struct timespec d = { 0, 60 * 1000 * 1000 };
	uint64_t first;

	setup("mono", "mono");
	nanosleep(&d, NULL);
	fdr_tclk_tick(1);
	first = last_ts(NULL);
	nanosleep(&d, NULL);
	cr_assert_eq(last_ts(NULL), first);
}
