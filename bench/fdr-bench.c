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
 * except after "fill" and "fill-cpus", whose records the script reads afterwards.
 *
 * filter-out/filter-pass enable bench:nof and bench:flt; each round times
 * bench:nof, writes "a >= 500" to events/bench/flt/filter through the control
 * tree, times bench:flt and writes "0" to clear the filter again. The ring
 * counters must show that bench:flt recorded the share of its calls that passes
 * the filter (within 10 %). fill-cpus/snap allocate the
 * snapshot buffers (fdr_session_snapshot_alloc(s, 0, 1)), fill every CPU's
 * buffer until it has written 1.25 times its sub-buffers (so it is full and
 * wrapping), take a snapshot, and fill the other buffers the same way; snap then
 * times one fdr_snapshot() call.
 *
 * Environment: BENCH_BUFFER_KB (per CPU, default 256), BENCH_SUBBUF_KB (default 4).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <fdr/fdr.h>
#include <fdr/fdr-ctl.h>

#define BENCH_TRACER "fdr"
#define BENCH_HAVE_SNAPSHOT 1

/* clang-format off */
/* bench:int3, bench:off, bench:nof and bench:flt: the same three integers */
#define BENCH_EVENT_INT3(name)                                                          \
	FDR_EVENT(bench, name,                                                          \
		FDR_PROTO(int32_t a, int64_t b, uint64_t c),                            \
		FDR_ARGS(a, b, c),                                                      \
		FDR_FIELDS(                                                             \
			fdr_field_int(int32_t, a, a)                                    \
			fdr_field_int(int64_t, b, b)                                    \
			fdr_field_int(uint64_t, c, c)))

BENCH_EVENT_INT3(int3)
BENCH_EVENT_INT3(off)
BENCH_EVENT_INT3(nof)
BENCH_EVENT_INT3(flt)

FDR_EVENT(bench, str,
	FDR_PROTO(int32_t a, const char *s),
	FDR_ARGS(a, s),
	FDR_FIELDS(
		fdr_field_int(int32_t, a, a)
		fdr_field_string(s, s)))
/* clang-format on */

#define BENCH_INT3(a, b, c) fdr_bench_int3(a, b, c)
#define BENCH_NOF(a, b, c) fdr_bench_nof(a, b, c)
#define BENCH_FLT(a, b, c) fdr_bench_flt(a, b, c)
#define BENCH_STR(a, s) fdr_bench_str(a, s)
#define BENCH_OFF(a, b, c) fdr_bench_off(a, b, c)

#include "bench-main.h"

static struct fdr_session *bench_session;

/* Ring counters of the top instance, summed over CPUs. */
struct bench_ring_stats {
	uint64_t switches; /* sub-buffer switches (from the sub-buffer headers) */
	uint64_t refused; /* dropped + too_big + nested */
	uint64_t ring_subbufs; /* sub-buffers per CPU */
};

static struct bench_ring_stats bench_before;
/* filter modes: sub-buffer switches while bench:nof ran, while bench:flt ran */
static uint64_t bench_sw_nof, bench_sw_flt, bench_sw_mark;

/* fill-cpus/snap: the ring of the top instance, mapped once in setup */
static const struct fdr_abi_ring *bench_ring;
#define BENCH_MAX_CPUS 1024
static uint64_t bench_fill_start[BENCH_MAX_CPUS];

static unsigned long bench_env(const char *name, unsigned long def)
{
	const char *v = getenv(name);

	return v && *v ? strtoul(v, NULL, 10) : def;
}

/*
 * Sub-buffers a CPU buffer has begun since it was made: the linear position of
 * the writer's sub-buffer (its header) over the sub-buffer size. Exact and
 * 64-bit, unlike head's switch_gen (16 bits).
 */
static uint64_t bench_buf_switches(const void *base, const struct fdr_abi_cpu *a)
{
	uint64_t head = __atomic_load_n(&a->head, __ATOMIC_ACQUIRE);
	uint32_t doff = (uint32_t)head, ss = a->subbuf_size, idx = doff / ss;
	const unsigned char *data = (const unsigned char *)base + a->data_off;
	const struct fdr_abi_subbuf *h;

	if (doff % ss)
		h = (const void *)(data + (size_t)idx * ss);
	else /* between the two steps of a switch: the previous header, one further */
		h = (const void *)(data + (size_t)(idx ? idx - 1 : a->nr_subbufs - 1) * ss);
	return h->pos / ss + (doff % ss ? 0 : 1);
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
		/* the buffer writers use now (always buffer 0 without snapshots) */
		const struct fdr_abi_cpu *a = &c[(c[cpu].active & 1) * h->nr_cpus + cpu];

		st->switches += bench_buf_switches(base, a);
		st->ring_subbufs = a->nr_subbufs;
	}
	/* refusals, in both buffers of every CPU (a swap zeroes the new live one's) */
	for (cpu = 0; cpu < FDR_RING_BUFS * h->nr_cpus; cpu++)
		st->refused += c[cpu].dropped + c[cpu].too_big + c[cpu].nested;
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
		fprintf(stderr, "fdr-bench: %s:%s is not registered in the session\n", def->system,
			def->name);
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

/* The sub-buffer switches of @cpu's live buffer, and its sub-buffer count. */
static uint64_t bench_cpu_switches(int cpu, uint32_t *nr_subbufs)
{
	const struct fdr_abi_cpu *c =
		(const void *)((const char *)bench_ring + bench_ring->cpu_off);
	uint32_t act = __atomic_load_n(&c[cpu].active, __ATOMIC_ACQUIRE) & 1;
	const struct fdr_abi_cpu *a = &c[act * bench_ring->nr_cpus + (uint32_t)cpu];

	*nr_subbufs = a->nr_subbufs;
	return bench_buf_switches(bench_ring, a);
}

static int bench_cpu_filled(int cpu, uint64_t written, uint64_t kb)
{
	uint32_t nr;
	uint64_t sw;

	(void)kb; /* the ring's own counters say when it wrapped */
	if (cpu >= BENCH_MAX_CPUS || (uint32_t)cpu >= bench_ring->nr_cpus)
		return 1;
	sw = bench_cpu_switches(cpu, &nr);
	if (!written) {
		bench_fill_start[cpu] = sw;
		return 0;
	}
	return sw - bench_fill_start[cpu] >= nr + nr / 4ull;
}

/* Write @text to events/bench/flt/filter, as `echo TEXT > filter` would. */
static int bench_write_filter(const char *text)
{
	struct fdr_file *f;
	size_t len = strlen(text);
	ssize_t w;
	int ret;

	ret = fdr_file_open(bench_session, "events/bench/flt/filter", O_WRONLY | O_TRUNC, &f);
	if (ret) {
		fprintf(stderr, "fdr-bench: open events/bench/flt/filter: %s\n", strerror(-ret));
		return -1;
	}
	w = fdr_file_write(f, text, len);
	if (w != (ssize_t)len) {
		fprintf(stderr, "fdr-bench: writing '%s' to the filter: %s (%s)\n", text,
			w < 0 ? strerror((int)-w) : "short write",
			fdr_file_error(f) ? fdr_file_error(f) : "");
		fdr_file_close(f);
		return -1;
	}
	fdr_file_close(f);
	ret = fdr_sync();
	if (ret) {
		fprintf(stderr, "fdr-bench: fdr_sync: %s\n", strerror(-ret));
		return -1;
	}
	return 0;
}

/* Sub-buffer switches since the last mark, added to *acc. */
static int bench_account(uint64_t *acc)
{
	struct bench_ring_stats st;

	if (bench_ring_stats(&st))
		return -1;
	*acc += st.switches - bench_sw_mark;
	bench_sw_mark = st.switches;
	return 0;
}

static int bench_tracer_filter_on(void)
{
	if (bench_account(&bench_sw_nof))
		return -1;
	return bench_write_filter("a >= 500");
}

static int bench_tracer_filter_off(void)
{
	if (bench_account(&bench_sw_flt))
		return -1;
	return bench_write_filter("0");
}

/* snap: one fdr_snapshot() in the writing process, timed */
static int bench_tracer_snapshot(double *us)
{
	uint64_t t0, t1;
	int ret;

	t0 = bench_now_ns();
	ret = fdr_snapshot();
	t1 = bench_now_ns();
	if (ret) {
		fprintf(stderr, "fdr-bench: fdr_snapshot: %s\n", strerror(-ret));
		return -1;
	}
	*us = (double)(t1 - t0) / 1000.0;
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
	if (mode == BENCH_FILL_CPUS || mode == BENCH_SNAP) {
		if (n > UINT32_MAX) {
			fprintf(stderr, "fdr-bench: %llu KiB per CPU is too large\n",
				(unsigned long long)n);
			return -1;
		}
		o.buffer_size_kb = (uint32_t)n;
	}
	ret = fdr_session_dir(name, dir, sizeof(dir));
	if (!ret && mode == BENCH_RATE) {
		/* `fdr record -e bench:int3` made the session and enabled the event */
		ret = fdr_session_open(dir, &bench_session);
		if (!ret)
			ret = fdr_sync();
		if (ret) {
			fprintf(stderr, "fdr-bench: opening session %s: %s\n", name,
				strerror(-ret));
			return -1;
		}
		if (!fdr_ev_bench_int3.enabled) {
			fprintf(stderr, "fdr-bench: bench:int3 is not enabled in session %s\n",
				name);
			return -1;
		}
		return 0;
	}
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
	if (mode == BENCH_FILL_CPUS || mode == BENCH_SNAP) {
		void *base;
		size_t size;

		ret = fdr_session_lock(bench_session);
		if (!ret) {
			ret = fdr_session_snapshot_alloc(bench_session, 0, 1);
			fdr_session_unlock(bench_session);
		}
		if (!ret)
			ret = fdr_session_ring(bench_session, 0, &base, &size);
		if (ret) {
			fprintf(stderr, "fdr-bench: allocating the snapshot buffers: %s\n",
				strerror(-ret));
			return -1;
		}
		bench_ring = base;
	}
	switch (mode) {
	case BENCH_NS_STR:
		ret = bench_enable(&fdr_ev_bench_str);
		break;
	case BENCH_FILTER_OUT:
	case BENCH_FILTER_PASS:
		ret = bench_enable(&fdr_ev_bench_nof);
		if (!ret)
			ret = bench_enable(&fdr_ev_bench_flt);
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
	if (bench_ring_stats(&bench_before))
		return -1;
	bench_sw_mark = bench_before.switches;
	return 0;
}

static int bench_tracer_check(enum bench_mode mode)
{
	struct bench_ring_stats after;
	uint64_t sw;

	if (mode == BENCH_RATE)
		return 0; /* fdr record counts what it got and what was lost */

	if (bench_ring_stats(&after))
		return -1;
	sw = after.switches - bench_before.switches;
	if (after.refused != bench_before.refused) {
		fprintf(stderr, "fdr-bench: %llu records refused\n",
			(unsigned long long)(after.refused - bench_before.refused));
		return -1;
	}
	if (mode == BENCH_FILTER_OUT || mode == BENCH_FILTER_PASS) {
		/* bench:nof recorded every call, bench:flt the share that passes */
		uint64_t s1 = bench_sw_nof, s2 = bench_sw_flt;
		double want = (double)s1 * bench_vals_pass / BENCH_NR_VALS;

		if (s1 < 2 * after.ring_subbufs) {
			fprintf(stderr, "fdr-bench: ring did not wrap (%llu sub-buffer switches)\n",
				(unsigned long long)s1);
			return -1;
		}
		if ((double)s2 < 0.9 * want - 2 || (double)s2 > 1.1 * want + 2) {
			fprintf(stderr,
				"fdr-bench: the filter kept %llu sub-buffers of records, "
				"expected %.0f (%u of %u values pass)\n",
				(unsigned long long)s2, want, bench_vals_pass, BENCH_NR_VALS);
			return -1;
		}
		if (getenv("BENCH_VERBOSE"))
			fprintf(stderr,
				"fdr-bench: sub-buffer switches: nof %llu flt %llu (expected %.0f)\n",
				(unsigned long long)s1, (unsigned long long)s2, want);
		return 0;
	}
	if (mode == BENCH_FILL_CPUS || mode == BENCH_SNAP) {
		/* fill-cpus: one; snap: one, the idle one, then the live ones */
		uint64_t want = mode == BENCH_SNAP ? 2 + bench_snap_live_done : 1;

		/* every CPU's buffers are full: bench_fill_cpus() returned only then */
		if (after.refused) {
			fprintf(stderr, "fdr-bench: %llu records refused\n",
				(unsigned long long)after.refused);
			return -1;
		}
		if (bench_ring->snap_count != want) {
			fprintf(stderr, "fdr-bench: %llu snapshots taken, expected %llu\n",
				(unsigned long long)bench_ring->snap_count,
				(unsigned long long)want);
			return -1;
		}
		return 0;
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
	if (mode != BENCH_FILL && mode != BENCH_FILL_CPUS && mode != BENCH_RATE)
		fdr_session_destroy(bench_session);
	fdr_session_close(bench_session);
	bench_session = NULL;
}
