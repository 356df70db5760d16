// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * lttng-bench.c - the LTTng-UST side of bench/compare-lttng (see bench-main.h).
 *
 * The session is set up by the script with the lttng CLI before this process
 * starts; liblttng-ust's constructor waits for the session daemon's registration
 * (LTTNG_UST_REGISTER_TIMEOUT), so by main() the tracepoints the session enables
 * are armed. This program checks that: bench:int3 and bench:str must be enabled,
 * bench:off must not be; for filter-out/filter-pass, bench:nof and bench:flt
 * must be (the script enables bench:flt with --filter 'a >= 500').
 *
 * LTTng's snapshots are taken by `lttng snapshot record`, which the script times
 * after fill-cpus; "snap" is fdr's only. fill-cpus writes as many bench:int3
 * records per CPU as take 1.25 times the buffer at the smallest size LTTng can
 * give them (24 bytes: a 4-byte compact header, then 4 + 8 + 8 bytes of fields),
 * so the buffer is full and wrapping; the script checks the snapshot's size.
 */
#define _GNU_SOURCE
#include "lttng-bench-tp.h"

#define BENCH_TRACER "lttng"
#define BENCH_INT3(a, b, c) lttng_ust_tracepoint(bench, int3, a, b, c)
#define BENCH_STR(a, s) lttng_ust_tracepoint(bench, str, a, s)
#define BENCH_OFF(a, b, c) lttng_ust_tracepoint(bench, off, a, b, c)
#define BENCH_NOF(a, b, c) lttng_ust_tracepoint(bench, nof, a, b, c)
#define BENCH_FLT(a, b, c) lttng_ust_tracepoint(bench, flt, a, b, c)
#define BENCH_LTTNG_MIN_RECORD 24

#include "bench-main.h"

static int bench_tracer_setup(enum bench_mode mode, uint64_t n)
{
	int on;

	(void)n;
	switch (mode) {
	case BENCH_NS_STR:
		on = lttng_ust_tracepoint_enabled(bench, str);
		break;
	case BENCH_FILTER_OUT:
	case BENCH_FILTER_PASS:
		on = lttng_ust_tracepoint_enabled(bench, nof) &&
		     lttng_ust_tracepoint_enabled(bench, flt);
		break;
	case BENCH_SNAP:
		fprintf(stderr, "lttng-bench: snap is fdr's; LTTng snapshots are taken by "
				"`lttng snapshot record`\n");
		return -1;
	case BENCH_NS_OFF:
		if (lttng_ust_tracepoint_enabled(bench, off)) {
			fprintf(stderr, "lttng-bench: bench:off is enabled by some session\n");
			return -1;
		}
		return 0;
	default:
		on = lttng_ust_tracepoint_enabled(bench, int3);
		break;
	}
	if (!on) {
		fprintf(stderr, "lttng-bench: tracepoint not enabled: is the session set up "
				"and lttng-sessiond running?\n");
		return -1;
	}
	return 0;
}

static int bench_tracer_check(enum bench_mode mode)
{
	(void)mode;
	return 0;
}

static void bench_tracer_teardown(enum bench_mode mode)
{
	(void)mode;
}

/* the filter is part of the session's event rule: nothing to do here */
static int bench_tracer_filter_on(void)
{
	return 0;
}

static int bench_tracer_filter_off(void)
{
	return 0;
}

static int bench_cpu_filled(int cpu, uint64_t written, uint64_t kb)
{
	(void)cpu;
	return written * BENCH_LTTNG_MIN_RECORD >= kb * 1024 * 5 / 4;
}
