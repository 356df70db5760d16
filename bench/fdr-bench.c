// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * fdr-bench.c - the fdr side of bench/compare-lttng (see bench-main.h).
 *
 * The process creates its own session, $FDR_SESSION under $FDR_ROOT (both must
 * be set: the script points FDR_ROOT at a private directory), attaches to it with
 * fdr_sync(), enables the measured event in the top instance and checks that the
 * event's enabled word really changed. After the measurement it checks from the
 * ring's own counters that records were written (and the ring wrapped), or that
 * nothing was written for the disabled case. The session is destroyed at exit,
 * except after "fill", whose records the text-format test reads afterwards.
 *
 * Environment: BENCH_BUFFER_KB (per CPU, default 256), BENCH_SUBBUF_KB (default 4).
 */
#define _GNU_SOURCE
#include <fdr/fdr.h>
#include <fdr/fdr-ctl.h>

#define BENCH_TRACER "fdr"

FDR_EVENT(bench, int3,
	FDR_PROTO(int32_t a, int64_t b, uint64_t c),
	FDR_ARGS(a, b, c),
	FDR_FIELDS(
		fdr_field_int(int32_t, a, a)
		fdr_field_int(int64_t, b, b)
		fdr_field_int(uint64_t, c, c)))

FDR_EVENT(bench, str,
	FDR_PROTO(int32_t a, const char *s),
	FDR_ARGS(a, s),
	FDR_FIELDS(
		fdr_field_int(int32_t, a, a)
		fdr_field_string(s, s)))

FDR_EVENT(bench, off,
	FDR_PROTO(int32_t a, int64_t b, uint64_t c),
	FDR_ARGS(a, b, c),
	FDR_FIELDS(
		fdr_field_int(int32_t, a, a)
		fdr_field_int(int64_t, b, b)
		fdr_field_int(uint64_t, c, c)))

#define BENCH_INT3(a, b, c) fdr_bench_int3(a, b, c)
#define BENCH_STR(a, s) fdr_bench_str(a, s)
#define BENCH_OFF(a, b, c) fdr_bench_off(a, b, c)

#include "bench-main.h"

static struct fdr_session *bench_session;

/* Ring counters of the top instance, summed over CPUs. */
struct bench_ring_stats {
	uint64_t switches; /* sub-buffer switches (the switch_gen half of head) */
	uint64_t refused; /* dropped + too_big + nested */
	uint64_t ring_subbufs; /* sub-buffers per CPU */
};

static struct bench_ring_stats bench_before;

static unsigned long bench_env(const char *name, unsigned long def)
{
	const char *v = getenv(name);

	return v && *v ? strtoul(v, NULL, 10) : def;
}

static int bench_ring_stats(struct bench_ring_stats *st)
{
	const struct fdr_abi_ring *h;
	const struct fdr_abi_cpu *c;
	void *base;
	size_t size;
	uint32_t cpu;
	int ret;

	memset(st, 0, sizeof(*st));
	ret = fdr_session_ring(bench_session, 0, &base, &size);
	if (ret) {
		fprintf(stderr, "fdr-bench: fdr_session_ring: %s\n", strerror(-ret));
		return -1;
	}
	h = base;
	c = (const void *)((const char *)base + h->cpu_off);
	for (cpu = 0; cpu < h->nr_cpus; cpu++) {
		st->switches += __atomic_load_n(&c[cpu].head, __ATOMIC_ACQUIRE) >> 32;
		st->refused += c[cpu].dropped + c[cpu].too_big + c[cpu].nested;
		st->ring_subbufs = c[cpu].nr_subbufs;
	}
	st->refused += fdr_session_control(bench_session)->dropped_no_slot;
	return 0;
}

/* Enable system:name in the top instance and wait until this process sees it. */
static int bench_enable(struct fdr_event_def *def)
{
	struct fdr_abi_control *ctl = fdr_session_control(bench_session);
	uint32_t i;
	int ret;

	if (!def->slot) {
		fprintf(stderr, "fdr-bench: %s:%s is not registered in the session\n",
			def->system, def->name);
		return -1;
	}
	ret = fdr_session_lock(bench_session);
	if (ret) {
		fprintf(stderr, "fdr-bench: fdr_session_lock: %s\n", strerror(-ret));
		return -1;
	}
	for (i = 0; i < FDR_MAX_EVENTS; i++) {
		struct fdr_abi_event *e = &ctl->events[i];

		if (e->state == FDR_EVENT_READY && !strcmp(e->system, def->system) &&
		    !strcmp(e->name, def->name))
			break;
	}
	if (i < FDR_MAX_EVENTS)
		__atomic_fetch_or(&ctl->events[i].enabled[0], 1ull, __ATOMIC_SEQ_CST);
	fdr_session_unlock(bench_session);
	if (i == FDR_MAX_EVENTS) {
		fprintf(stderr, "fdr-bench: %s:%s not found in the registry\n", def->system,
			def->name);
		return -1;
	}
	fdr_session_changed(bench_session);
	ret = fdr_sync();
	if (ret || !def->enabled) {
		fprintf(stderr, "fdr-bench: %s:%s still disabled after enabling (fdr_sync %d)\n",
			def->system, def->name, ret);
		return -1;
	}
	return 0;
}

static int bench_tracer_setup(enum bench_mode mode, uint64_t n)
{
	struct fdr_session_opts o = { 0 };
	const char *name = getenv("FDR_SESSION");
	char dir[4096];
	int ret;

	if (!getenv("FDR_ROOT") || !name) {
		fprintf(stderr, "fdr-bench: set FDR_ROOT and FDR_SESSION\n");
		return -1;
	}
	o.buffer_size_kb = (uint32_t)bench_env("BENCH_BUFFER_KB", 256);
	o.subbuf_size = (uint32_t)bench_env("BENCH_SUBBUF_KB", 4) * 1024;
	o.overwrite = 1;
	if (mode == BENCH_FILL) {
		/* keep all n records: room for 64 bytes per record, discard mode */
		o.buffer_size_kb = (uint32_t)(n * 64 / 1024 + 1024);
		o.overwrite = 0;
	}
	ret = fdr_session_dir(name, dir, sizeof(dir));
	if (!ret)
		ret = fdr_session_create(dir, &o, &bench_session);
	if (ret) {
		fprintf(stderr, "fdr-bench: creating session %s: %s\n", name, strerror(-ret));
		return -1;
	}
	ret = fdr_sync();
	if (ret) {
		fprintf(stderr, "fdr-bench: fdr_sync: %s\n", strerror(-ret));
		return -1;
	}
	switch (mode) {
	case BENCH_NS_STR:
		ret = bench_enable(&fdr_ev_bench_str);
		break;
	case BENCH_NS_OFF:
		/* registered, session live, enabled nowhere */
		if (!fdr_ev_bench_off.slot || fdr_ev_bench_off.enabled) {
			fprintf(stderr, "fdr-bench: bench:off: slot %u enabled %u\n",
				fdr_ev_bench_off.slot, fdr_ev_bench_off.enabled);
			ret = -1;
		}
		break;
	default:
		ret = bench_enable(&fdr_ev_bench_int3);
		break;
	}
	if (ret)
		return -1;
	return bench_ring_stats(&bench_before);
}

static int bench_tracer_check(enum bench_mode mode)
{
	struct bench_ring_stats after;
	uint64_t sw;

	if (bench_ring_stats(&after))
		return -1;
	sw = after.switches - bench_before.switches;
	if (after.refused != bench_before.refused) {
		fprintf(stderr, "fdr-bench: %llu records refused\n",
			(unsigned long long)(after.refused - bench_before.refused));
		return -1;
	}
	if (mode == BENCH_NS_OFF) {
		if (sw) {
			fprintf(stderr, "fdr-bench: disabled event wrote records\n");
			return -1;
		}
		return 0;
	}
	if (mode != BENCH_FILL && sw < 2 * after.ring_subbufs) {
		fprintf(stderr, "fdr-bench: ring did not wrap (%llu sub-buffer switches)\n",
			(unsigned long long)sw);
		return -1;
	}
	if (mode == BENCH_FILL && sw == 0) {
		fprintf(stderr, "fdr-bench: nothing was recorded\n");
		return -1;
	}
	if (getenv("BENCH_VERBOSE"))
		fprintf(stderr, "fdr-bench: %llu sub-buffer switches (%.1f ring wraps)\n",
			(unsigned long long)sw, (double)sw / (double)after.ring_subbufs);
	return 0;
}

static void bench_tracer_teardown(enum bench_mode mode)
{
	if (!bench_session)
		return;
	if (mode != BENCH_FILL)
		fdr_session_destroy(bench_session);
	fdr_session_close(bench_session);
	bench_session = NULL;
}
