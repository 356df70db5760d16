/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench-main.h - the measurement driver shared by fdr-bench.c and lttng-bench.c.
 *
 * Both benchmark programs define their call sites and three hooks, then include
 * this file, which supplies main(). The loops, the clock, the CPU pinning and the
 * threads are therefore the same machine code pattern for both tracers; only the
 * call sites and the session setup differ.
 *
 *   BENCH_TRACER              "fdr" or "lttng", for messages
 *   BENCH_INT3(a, b, c)       call site of bench:int3 (int32_t, int64_t, uint64_t)
 *   BENCH_STR(a, s)           call site of bench:str (int32_t, 16-char string)
 *   BENCH_OFF(a, b, c)        call site of bench:off, which no session enables
 *   BENCH_NOF(a, b, c)        call site of bench:nof, enabled, never filtered
 *   BENCH_FLT(a, b, c)        call site of bench:flt, enabled with the filter
 *                             "a >= 500" (same fields as bench:int3)
 *   bench_tracer_setup(mode, n)   before anything is measured; 0 or -1
 *   bench_tracer_check(mode)      after the measurement: did it really record?
 *   bench_tracer_teardown(mode)
 *   bench_tracer_filter_on()      before each timed bench:flt loop: set the filter
 *                                 "a >= 500" of bench:flt (if the tracer needs to)
 *   bench_tracer_filter_off()     after it: clear it again
 *   bench_tracer_snapshot(us)     take one snapshot of the session the process
 *                                 writes to, *us = its duration in microseconds
 *   bench_cpu_filled(cpu, written, kb)  is this CPU's buffer of kb KiB full and
 *                                 wrapping (1.25 times its size written since the
 *                                 fill began), @written bench:int3 calls into the
 *                                 fill? (written == 0: the fill of this CPU begins)
 *   BENCH_HAVE_SNAPSHOT       defined where bench_tracer_snapshot() works (fdr)
 *
 * Usage: PROG MODE ARG, one measurement per process (the script interleaves the
 * tracers' runs and takes medians):
 *   ns-int3 N   ns per call of N bench:int3 calls on CPU 0, after N/10 warm-up calls
 *   ns-str N    the same with bench:str
 *   ns-off N    the same with bench:off (disabled)
 *   scale MS    throughput of bench:int3 writers for MS milliseconds: one thread on
 *               CPU 0, then two threads on CPUs 0 and 1; prints
 *               "SCALING THR1 THR2" (events/s; SCALING = THR2 / THR1)
 *   fill N      write N bench:int3 events on CPU 0 and keep them (text-format test)
 *   filter-out N   ns per call of bench:nof calls, then of bench:flt calls with
 *               the filter "a >= 500" set, whose a is below 500 nine times in ten
 *               (pseudo-random order), N calls of each in 5 alternating rounds;
 *               prints "DIFF NOF FLT" (ns per call, medians of the rounds)
 *   filter-pass N  the same with every a >= 500: each bench:flt call is recorded
 *   fill-cpus KB   write bench:int3 on every CPU at once (one pinned thread per
 *               CPU) until each CPU's buffer of KB KiB is full and wrapping; with
 *               BENCH_HAVE_SNAPSHOT, take a snapshot and fill the other buffer
 *               too. The session is kept (snapshot_cli_ms, LTTng's snapshot_*_us)
 *   snap KB     fill-cpus KB, then time a snapshot taken by the process itself,
 *               twice: once with every writer stopped (IDLE), then once while
 *               one pinned writer per CPU keeps writing (LIVE); prints
 *               "LIVE_US IDLE_US" (fdr only)
 *   rate MS     one writer on CPU 0 writes bench:int3 for MS milliseconds into a
 *               session set up beforehand (by `fdr record`, or an LTTng session
 *               writing to disk), at full speed or, with BENCH_PACE=N, at no more
 *               than N events per second (it spins when ahead); prints
 *               "EVENTS EVENTS_PER_S" (record_mev_s)
 *
 * Results go to stdout, one line; diagnostics to stderr; exit status 1 on any
 * failure, so the script never turns a broken run into a figure.
 */
#ifndef BENCH_MAIN_H
#define BENCH_MAIN_H

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum bench_mode {
	BENCH_NS_INT3,
	BENCH_NS_STR,
	BENCH_NS_OFF,
	BENCH_SCALE,
	BENCH_FILL,
	BENCH_FILTER_OUT,
	BENCH_FILTER_PASS,
	BENCH_FILL_CPUS,
	BENCH_SNAP,
	BENCH_RATE,
};

static int bench_tracer_setup(enum bench_mode mode, uint64_t n);
static int bench_tracer_check(enum bench_mode mode);
static void bench_tracer_teardown(enum bench_mode mode);
static int bench_tracer_filter_on(void);
static int bench_tracer_filter_off(void);
#ifdef BENCH_HAVE_SNAPSHOT
static int bench_tracer_snapshot(double *us);
#endif
static int bench_cpu_filled(int cpu, uint64_t written, uint64_t kb);

/*
 * Values of the field "a" for the filter modes: 4096 of them, used in turn. For
 * filter-out, one in ten is >= 500 (500..1499) and the others are below (0..499),
 * in a pseudo-random order, so the branch predictor sees what it would see on a
 * real event stream; for filter-pass all are >= 500. bench_vals_pass counts those
 * that pass "a >= 500".
 */
#define BENCH_NR_VALS 4096
static int32_t bench_vals[BENCH_NR_VALS];
static uint32_t bench_vals_pass;

static void bench_vals_init(int all_pass)
{
	uint64_t x = 88172645463325252ull;
	int i;

	bench_vals_pass = 0;
	for (i = 0; i < BENCH_NR_VALS; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		if (all_pass || x % 10 == 0)
			bench_vals[i] = 500 + (int32_t)((x >> 8) % 1000);
		else
			bench_vals[i] = (int32_t)((x >> 8) % 500);
		bench_vals_pass += bench_vals[i] >= 500;
	}
}

/* Four distinct 16-character strings, so nothing can be folded at compile time. */
static const char *const bench_strs[4] = {
	"0123456789abcdef",
	"fedcba9876543210",
	"abcdefghijklmnop",
	"ponmlkjihgfedcba",
};

static uint64_t bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int bench_pin(int cpu)
{
	cpu_set_t set;
	int ret;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	ret = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	if (ret) {
		fprintf(stderr, "%s-bench: cannot pin to CPU %d: %s\n", BENCH_TRACER, cpu,
			strerror(ret));
		return -1;
	}
	return 0;
}

/* The loops: noinline so each is one tight loop around the call site. */
static __attribute__((noinline)) void bench_loop_int3(uint64_t start, uint64_t n)
{
	uint64_t i;

	for (i = start; i < start + n; i++)
		BENCH_INT3((int32_t)i, (int64_t)(i * 3), i ^ 0x9e3779b97f4a7c15ull);
}

static __attribute__((noinline)) void bench_loop_str(uint64_t start, uint64_t n)
{
	uint64_t i;

	for (i = start; i < start + n; i++)
		BENCH_STR((int32_t)i, bench_strs[i & 3]);
}

static __attribute__((noinline)) void bench_loop_off(uint64_t start, uint64_t n)
{
	uint64_t i;

	for (i = start; i < start + n; i++)
		BENCH_OFF((int32_t)i, (int64_t)(i * 3), i ^ 0x9e3779b97f4a7c15ull);
}

/* The two filter loops differ only in the event they call. */
static __attribute__((noinline)) void bench_loop_nof(uint64_t start, uint64_t n)
{
	uint64_t i;

	for (i = start; i < start + n; i++)
		BENCH_NOF(bench_vals[i & (BENCH_NR_VALS - 1)], (int64_t)(i * 3),
			  i ^ 0x9e3779b97f4a7c15ull);
}

static __attribute__((noinline)) void bench_loop_flt(uint64_t start, uint64_t n)
{
	uint64_t i;

	for (i = start; i < start + n; i++)
		BENCH_FLT(bench_vals[i & (BENCH_NR_VALS - 1)], (int64_t)(i * 3),
			  i ^ 0x9e3779b97f4a7c15ull);
}

static void bench_loop(enum bench_mode mode, uint64_t start, uint64_t n)
{
	switch (mode) {
	case BENCH_NS_STR:
		bench_loop_str(start, n);
		break;
	case BENCH_NS_OFF:
		bench_loop_off(start, n);
		break;
	default:
		bench_loop_int3(start, n);
		break;
	}
}

/* ---- ns per call, one thread ---------------------------------------------------- */

static double bench_ns_per_call(enum bench_mode mode, uint64_t n)
{
	uint64_t t0, t1;

	bench_loop(mode, 0, n / 10 + 1); /* warm-up: fault in pages, wrap the ring */
	t0 = bench_now_ns();
	bench_loop(mode, 0, n);
	t1 = bench_now_ns();
	return (double)(t1 - t0) / (double)n;
}

/*
 * ---- filter cost: bench:nof without a filter, then bench:flt with one --------------
 * BENCH_FILTER_ROUNDS rounds of: n/ROUNDS bench:nof calls timed while the session
 * has no filter at all (for fdr that matters: any filter in a session sends every
 * event of the session through the hooks path), then the filter is set, n/ROUNDS
 * bench:flt calls are timed, and the filter is cleared again. Pairing the two
 * loops this closely keeps a shared machine's drift out of their difference.
 * Each loop is warmed up with n/10 calls first. *nof and *flt are the medians of
 * the rounds' ns per call, *diff the median of the rounds' differences.
 */
#define BENCH_FILTER_ROUNDS 5

static int bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double bench_median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), bench_cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int bench_filter_cost(uint64_t n, double *diff, double *nof, double *flt)
{
	double d[BENCH_FILTER_ROUNDS], a[BENCH_FILTER_ROUNDS], b[BENCH_FILTER_ROUNDS];
	uint64_t t0, t1, m = n / BENCH_FILTER_ROUNDS + 1;
	int r;

	bench_loop_nof(0, n / 10 + 1);
	for (r = 0; r < BENCH_FILTER_ROUNDS; r++) {
		t0 = bench_now_ns();
		bench_loop_nof(0, m);
		t1 = bench_now_ns();
		a[r] = (double)(t1 - t0) / (double)m;
		if (bench_tracer_filter_on())
			return -1;
		if (r == 0)
			bench_loop_flt(0, n / 10 + 1);
		t0 = bench_now_ns();
		bench_loop_flt(0, m);
		t1 = bench_now_ns();
		b[r] = (double)(t1 - t0) / (double)m;
		d[r] = b[r] - a[r];
		if (bench_tracer_filter_off())
			return -1;
	}
	*diff = bench_median(d, BENCH_FILTER_ROUNDS);
	*nof = bench_median(a, BENCH_FILTER_ROUNDS);
	*flt = bench_median(b, BENCH_FILTER_ROUNDS);
	return 0;
}

/* ---- fill every CPU's buffer: one pinned bench:int3 writer per CPU ----------------- */

struct bench_filler {
	pthread_t thread;
	int cpu;
	int failed;
	uint64_t kb;
	uint64_t written;
};

static void *bench_filler_main(void *arg)
{
	struct bench_filler *w = arg;
	uint64_t i = 0;

	if (bench_pin(w->cpu)) {
		w->failed = 1;
		return NULL;
	}
	while (!bench_cpu_filled(w->cpu, i, w->kb)) {
		bench_loop_int3(i, 4096);
		i += 4096;
	}
	w->written = i;
	return NULL;
}

static int bench_fill_cpus(uint64_t kb)
{
	long nr = sysconf(_SC_NPROCESSORS_ONLN);
	struct bench_filler *w;
	int i, failed = 0;

	if (nr < 1)
		nr = 1;
	w = calloc((size_t)nr, sizeof(*w));
	if (!w)
		return -1;
	for (i = 0; i < nr; i++) {
		w[i].cpu = i;
		w[i].kb = kb;
		if (pthread_create(&w[i].thread, NULL, bench_filler_main, &w[i])) {
			fprintf(stderr, "%s-bench: pthread_create failed\n", BENCH_TRACER);
			exit(1);
		}
	}
	for (i = 0; i < nr; i++) {
		pthread_join(w[i].thread, NULL);
		failed |= w[i].failed;
		if (getenv("BENCH_VERBOSE"))
			fprintf(stderr, "%s-bench: fill: CPU %d: %llu events\n", BENCH_TRACER, i,
				(unsigned long long)w[i].written);
	}
	free(w);
	return failed ? -1 : 0;
}

/* ---- throughput of 1 and 2 pinned writers ---------------------------------------- */

#define BENCH_CHUNK 256

struct bench_worker {
	pthread_t thread;
	int cpu;
	int failed;
	uint64_t count;
};

static atomic_int bench_ready;
static atomic_int bench_go;
static atomic_int bench_stop;

static void *bench_worker_main(void *arg)
{
	struct bench_worker *w = arg;
	uint64_t i = 0;

	if (bench_pin(w->cpu)) {
		w->failed = 1;
		atomic_fetch_add(&bench_ready, 1);
		return NULL;
	}
	bench_loop_int3(0, 200000); /* warm-up */
	atomic_fetch_add(&bench_ready, 1);
	while (!atomic_load_explicit(&bench_go, memory_order_acquire))
		sched_yield();
	while (!atomic_load_explicit(&bench_stop, memory_order_relaxed)) {
		bench_loop_int3(i, BENCH_CHUNK);
		i += BENCH_CHUNK;
	}
	w->count = i;
	return NULL;
}

/*
 * Start @nr bench_worker_main() threads pinned on CPUs 0..nr-1 and wait until
 * each has warmed up; they write once bench_go is set.
 */
static void bench_workers_start(struct bench_worker *w, int nr)
{
	int i;

	atomic_store(&bench_ready, 0);
	atomic_store(&bench_go, 0);
	atomic_store(&bench_stop, 0);
	memset(w, 0, (size_t)nr * sizeof(*w));
	for (i = 0; i < nr; i++) {
		w[i].cpu = i;
		if (pthread_create(&w[i].thread, NULL, bench_worker_main, &w[i])) {
			fprintf(stderr, "%s-bench: pthread_create failed\n", BENCH_TRACER);
			exit(1);
		}
	}
	while (atomic_load(&bench_ready) < nr)
		sched_yield();
}

/* Join the @nr workers (bench_stop set before); -1 if any failed, else 0; adds their counts. */
static int bench_workers_join(struct bench_worker *w, int nr, uint64_t *total)
{
	int i, failed = 0;

	for (i = 0; i < nr; i++) {
		pthread_join(w[i].thread, NULL);
		failed |= w[i].failed;
		*total += w[i].count;
	}
	return failed ? -1 : 0;
}

/* Events per second of @nr writers on CPUs 0..nr-1 during @ms milliseconds. */
static double bench_throughput(int nr, unsigned int ms)
{
	struct bench_worker w[2];
	struct timespec d = { ms / 1000, (long)(ms % 1000) * 1000000L };
	uint64_t t0, t1, total = 0;

	bench_workers_start(w, nr);
	t0 = bench_now_ns();
	atomic_store_explicit(&bench_go, 1, memory_order_release);
	nanosleep(&d, NULL);
	atomic_store(&bench_stop, 1);
	t1 = bench_now_ns();
	if (bench_workers_join(w, nr, &total))
		return -1;
	return (double)total * 1e9 / (double)(t1 - t0);
}

#ifdef BENCH_HAVE_SNAPSHOT
/*
 * Time one snapshot taken while one pinned bench:int3 writer per CPU keeps
 * writing (the buffers were filled before: they are full and wrapping), as a
 * flight recorder is used: the process that snapshots is tracing right then.
 */
static int bench_snapshot_live(double *us)
{
	long nr = sysconf(_SC_NPROCESSORS_ONLN);
	struct bench_worker *w;
	struct timespec d = { 0, 20 * 1000 * 1000 };
	uint64_t total = 0;
	int ret, failed;

	if (nr < 1)
		nr = 1;
	w = calloc((size_t)nr, sizeof(*w));
	if (!w)
		return -1;
	bench_workers_start(w, (int)nr);
	atomic_store_explicit(&bench_go, 1, memory_order_release);
	nanosleep(&d, NULL);
	ret = bench_tracer_snapshot(us);
	atomic_store(&bench_stop, 1);
	failed = bench_workers_join(w, (int)nr, &total);
	free(w);
	return ret || failed ? -1 : 0;
}

#define BENCH_SNAP_REPS 5 /* live snapshots per run (BENCH_SNAP_REPS overrides) */
static unsigned long bench_snap_live_done; /* live snapshots taken (the check counts them) */

/*
 * BENCH_SNAP_REPS (default 5) live snapshots of buffers of @kb per CPU, each
 * after the buffers were filled again (a snapshot swaps the other buffer in: the
 * next one must find the live buffer full and wrapping too); @us is their
 * median. One snapshot is a few hundred ns of cache and TLB misses whose number
 * depends on what ran just before: a median of several is the figure of a run.
 */
static int bench_snapshot_live_median(uint64_t kb, double *us)
{
	const char *env = getenv("BENCH_SNAP_REPS");
	unsigned long reps = env && *env ? strtoul(env, NULL, 10) : BENCH_SNAP_REPS, i;
	double v[64];

	if (reps < 1 || reps > 64)
		reps = BENCH_SNAP_REPS;
	for (i = 0; i < reps; i++) {
		if (i && bench_fill_cpus(kb))
			return -1;
		if (bench_snapshot_live(&v[i]))
			return -1;
		bench_snap_live_done++;
	}
	*us = bench_median(v, (int)reps);
	if (getenv("BENCH_VERBOSE")) {
		fprintf(stderr, "%s-bench: live snapshots, sorted (us):", BENCH_TRACER);
		for (i = 0; i < reps; i++)
			fprintf(stderr, " %.3f", v[i]);
		fprintf(stderr, "\n");
	}
	return 0;
}
#endif

/* ---- rate: one paced writer ---------------------------------------------------------- */

/* Write bench:int3 on CPU 0 for @ms ms, at most @pace events/s (0: no limit). */
static int bench_rate(unsigned int ms, uint64_t pace, uint64_t *events, double *per_s)
{
	uint64_t t0, t, end, i = 0;

	if (bench_pin(0))
		return -1;
	t0 = bench_now_ns();
	end = t0 + (uint64_t)ms * 1000000ull;
	for (;;) {
		bench_loop_int3(i, BENCH_CHUNK);
		i += BENCH_CHUNK;
		t = bench_now_ns();
		if (t >= end)
			break;
		/* ahead of the pace: wait until the schedule catches up */
		while (pace && (double)i * 1e9 > (double)pace * (double)(t - t0) && t < end)
			t = bench_now_ns();
	}
	*events = i;
	*per_s = (double)i * 1e9 / (double)(t - t0);
	return 0;
}

/* ---- main -------------------------------------------------------------------------- */

static int bench_usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s ns-int3|ns-str|ns-off|fill|filter-out|filter-pass N | scale MS |\n"
		"       fill-cpus|snap KB | rate MS\n",
		prog);
	return 2;
}

int main(int argc, char **argv)
{
	enum bench_mode mode;
	uint64_t n;
	char *end;
	int ret = 1;

	if (argc != 3)
		return bench_usage(argv[0]);
	if (!strcmp(argv[1], "ns-int3"))
		mode = BENCH_NS_INT3;
	else if (!strcmp(argv[1], "ns-str"))
		mode = BENCH_NS_STR;
	else if (!strcmp(argv[1], "ns-off"))
		mode = BENCH_NS_OFF;
	else if (!strcmp(argv[1], "scale"))
		mode = BENCH_SCALE;
	else if (!strcmp(argv[1], "fill"))
		mode = BENCH_FILL;
	else if (!strcmp(argv[1], "filter-out"))
		mode = BENCH_FILTER_OUT;
	else if (!strcmp(argv[1], "filter-pass"))
		mode = BENCH_FILTER_PASS;
	else if (!strcmp(argv[1], "fill-cpus"))
		mode = BENCH_FILL_CPUS;
	else if (!strcmp(argv[1], "snap"))
		mode = BENCH_SNAP;
	else if (!strcmp(argv[1], "rate"))
		mode = BENCH_RATE;
	else
		return bench_usage(argv[0]);
	errno = 0;
	n = strtoull(argv[2], &end, 10);
	if (errno || *end || n == 0)
		return bench_usage(argv[0]);

	if (mode == BENCH_SCALE && sysconf(_SC_NPROCESSORS_ONLN) < 2) {
		fprintf(stderr, "%s-bench: scale needs 2 CPUs\n", BENCH_TRACER);
		return 1;
	}
	if (mode == BENCH_FILTER_OUT || mode == BENCH_FILTER_PASS)
		bench_vals_init(mode == BENCH_FILTER_PASS);
	if (bench_tracer_setup(mode, n))
		return 1;
	if (mode == BENCH_FILTER_OUT || mode == BENCH_FILTER_PASS) {
		double diff, nof, flt;

		if (bench_pin(0))
			goto out;
		if (bench_filter_cost(n, &diff, &nof, &flt))
			goto out;
		if (bench_tracer_check(mode))
			goto out;
		printf("%.3f %.3f %.3f\n", diff, nof, flt);
	} else if (mode == BENCH_FILL_CPUS || mode == BENCH_SNAP) {
		double us = 0, us_idle = 0;

		if (bench_fill_cpus(n))
			goto out;
#ifdef BENCH_HAVE_SNAPSHOT
		/* both buffers full: the spare swapped in is a wrapped one too */
		if (bench_tracer_snapshot(&us) || bench_fill_cpus(n))
			goto out;
		if (mode == BENCH_SNAP && bench_tracer_snapshot(&us_idle))
			goto out;
		if (mode == BENCH_SNAP && bench_snapshot_live_median(n, &us))
			goto out;
#endif
		if (bench_tracer_check(mode))
			goto out;
		if (mode == BENCH_SNAP)
			printf("%.3f %.3f\n", us, us_idle);
		else
			printf("%llu\n", (unsigned long long)n);
	} else if (mode == BENCH_SCALE) {
		double thr1 = bench_throughput(1, (unsigned int)n);
		double thr2 = bench_throughput(2, (unsigned int)n);

		if (thr1 <= 0 || thr2 <= 0)
			goto out;
		if (bench_tracer_check(mode))
			goto out;
		printf("%.4f %.0f %.0f\n", thr2 / thr1, thr1, thr2);
	} else if (mode == BENCH_RATE) {
		const char *pace = getenv("BENCH_PACE");
		uint64_t events;
		double per_s;

		if (bench_rate((unsigned int)n, pace ? strtoull(pace, NULL, 10) : 0, &events,
			       &per_s))
			goto out;
		if (bench_tracer_check(mode))
			goto out;
		printf("%llu %.0f\n", (unsigned long long)events, per_s);
	} else if (mode == BENCH_FILL) {
		if (bench_pin(0))
			goto out;
		bench_loop_int3(0, n);
		if (bench_tracer_check(mode))
			goto out;
		printf("%llu\n", (unsigned long long)n);
	} else {
		double ns;

		if (bench_pin(0))
			goto out;
		ns = bench_ns_per_call(mode, n);
		if (bench_tracer_check(mode))
			goto out;
		printf("%.3f\n", ns);
	}
	ret = 0;
out:
	fflush(stdout);
	bench_tracer_teardown(mode);
	return ret;
}

#endif /* BENCH_MAIN_H */
