// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * stress.c - many writers, a signal-handler hammer and live readers on one ring.
 *
 * The driver (this binary without --role) creates a private session and runs,
 * each as its own process (this binary again, with --role=...):
 *
 *   reader    one consuming reader on all CPUs (trace_pipe's way). It checks every
 *             record (selfcheck.h: no torn record), that each writer's seq strictly
 *             increases, and at the end the accounting below.
 *   peeker    non-consuming readers opened and closed in a loop, plus fdr_ring_stats
 *             and the raw page format: every record they see must be valid too.
 *   writer xP each with T threads writing stress:rec as fast as they can, and a
 *             hammer thread that pthread_kill()s the writers with SIGUSR1 in a
 *             loop; the handler writes a record of its own (nested in the
 *             interrupted write when it lands in one). At exit each writer
 *             process reports how many records each of its writer ids wrote.
 *
 * When the writers are done the driver closes a pipe, the reader drains the ring
 * and checks, per writer id, read + lost == written (lost = the seqs it never
 * saw), and overall that the library accounted for every record it did not
 * deliver: sum(written - read) == sum(lost_before) + refused, where refused is
 * the per-CPU dropped counters plus control.dropped_no_slot; per CPU the stats
 * must agree with what was read. In discard mode nothing may be overwritten
 * (sum(lost_before) == 0).
 *
 * fdr-stress --boundaries runs a deterministic single-writer test of the ring's
 * sub-buffer boundaries instead (see boundary_case()).
 *
 * Knobs: FDR_STRESS_SECONDS (default 5), FDR_STRESS_PROCS (3), FDR_STRESS_THREADS
 * (2), FDR_STRESS_SEED (default: time-based; printed), FDR_STRESS_HAMMER_US (100);
 * options --mode=overwrite|discard and --kb=N (per-CPU buffer_size_kb).
 */
#include "selfcheck.h"

#include <poll.h>
#include <pthread.h>

#define MAX_PROCS 64
#define MAX_THREADS 64
#define NR_WIDS (MAX_PROCS * MAX_THREADS * 2)

static uint32_t wid_of(uint32_t p, uint32_t t)
{
	return p << 8 | t;
}

/* Index of a writer id in the reader's tables, or -1 for an id no writer has. */
static int wid_index(uint32_t wid)
{
	uint32_t sig = !!(wid & SC_SIG_BIT), p = (wid & ~SC_SIG_BIT) >> 8, t = wid & 0xff;

	if (p >= MAX_PROCS || t >= MAX_THREADS || (wid & ~SC_SIG_BIT) >> 16)
		return -1;
	return (int)((p * MAX_THREADS + t) * 2 + sig);
}

/* ---- writer -------------------------------------------------------------------------- */

static uint64_t w_seed;
static uint32_t w_proc, w_nthreads;
static volatile int w_stop;
static pthread_t w_tids[MAX_THREADS];
static uint64_t w_written[MAX_THREADS]; /* by each thread's loop */
static uint64_t w_sig_written[MAX_THREADS]; /* by its signal handler */
static __thread int w_self; /* thread index + 1, 0 for threads that do not write */

static void w_on_signal(int sig)
{
	int saved = errno, i = w_self - 1;

	(void)sig;
	if (i >= 0) {
		uint64_t seq = w_sig_written[i];

		sc_write(w_seed, wid_of(w_proc, (uint32_t)i) | SC_SIG_BIT, seq);
		__atomic_store_n(&w_sig_written[i], seq + 1, __ATOMIC_RELAXED);
	}
	errno = saved;
}

static void *w_thread(void *arg)
{
	int i = (int)(intptr_t)arg;
	uint32_t wid = wid_of(w_proc, (uint32_t)i);
	uint64_t seq = 0;
	sigset_t set;

	w_self = i + 1;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	while (!__atomic_load_n(&w_stop, __ATOMIC_RELAXED)) {
		int k;

		for (k = 0; k < 64; k++) {
			sc_write(w_seed, wid, seq);
			seq++;
			__atomic_store_n(&w_written[i], seq, __ATOMIC_RELAXED);
		}
	}
	/* no signal may land after the count is final: block it before returning */
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	return NULL;
}

static void *w_hammer(void *arg)
{
	uint64_t us = (uint64_t)(uintptr_t)arg;

	while (!__atomic_load_n(&w_stop, __ATOMIC_RELAXED)) {
		uint32_t i;

		for (i = 0; i < w_nthreads; i++)
			pthread_kill(w_tids[i], SIGUSR1);
		sc_sleep_us(us);
	}
	return NULL;
}

/* --role=writer PROC THREADS SECONDS SEED HAMMER_US */
static int run_writer(char **argv)
{
	double secs = atof(argv[2]);
	uint64_t hammer_us = strtoull(argv[4], NULL, 0);
	char path[PATH_MAX + 32];
	struct sigaction sa;
	sigset_t set;
	pthread_t hammer;
	uint32_t i;
	FILE *f;

	w_proc = (uint32_t)atoi(argv[0]);
	w_nthreads = (uint32_t)atoi(argv[1]);
	w_seed = strtoull(argv[3], NULL, 0);
	if (w_nthreads < 1 || w_nthreads > MAX_THREADS || w_proc >= MAX_PROCS)
		return 2;
	if (sc_wait_enabled(10000)) {
		printf("writer %u: stress:rec never got enabled\n", w_proc);
		return 3;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = w_on_signal;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	sigaction(SIGUSR1, &sa, NULL);
	/* only the writer threads take SIGUSR1 */
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	for (i = 0; i < w_nthreads; i++)
		if (pthread_create(&w_tids[i], NULL, w_thread, (void *)(intptr_t)i))
			return 4;
	if (pthread_create(&hammer, NULL, w_hammer, (void *)(uintptr_t)hammer_us))
		return 4;
	sc_sleep_us((uint64_t)(secs * 1e6));
	__atomic_store_n(&w_stop, 1, __ATOMIC_RELAXED);
	pthread_join(hammer, NULL);
	for (i = 0; i < w_nthreads; i++)
		pthread_join(w_tids[i], NULL);

	snprintf(path, sizeof(path), "%s/written.%u", getenv("FDR_ROOT"), w_proc);
	f = fopen(path, "w");
	if (!f)
		return 5;
	for (i = 0; i < w_nthreads; i++) {
		fprintf(f, "%u %llu\n", wid_of(w_proc, i), (unsigned long long)w_written[i]);
		fprintf(f, "%u %llu\n", wid_of(w_proc, i) | SC_SIG_BIT,
			(unsigned long long)w_sig_written[i]);
	}
	return fclose(f) ? 5 : 0;
}

/* ---- readers ------------------------------------------------------------------------- */

struct wstat {
	int64_t last; /* last seq read, -1 before the first */
	uint64_t read;
	uint64_t gaps; /* seqs skipped between records read */
};

static struct wstat r_w[NR_WIDS];

/* --role=reader PROCS THREADS SEED DONE_FD READY_FD */
static int run_reader(char **argv)
{
	uint32_t procs = (uint32_t)atoi(argv[0]), threads = (uint32_t)atoi(argv[1]);
	uint64_t seed = strtoull(argv[2], NULL, 0);
	int done_fd = atoi(argv[3]), ready_fd = atoi(argv[4]);
	uint64_t *lost_cpu = NULL, *read_cpu = NULL, *last_ts = NULL;
	uint64_t total_read = 0, total_lost = 0, bad = 0, disorder = 0, ts_back = 0;
	uint64_t sum_written = 0, sum_missing = 0, refused = 0, sig_written = 0, sig_read = 0;
	uint64_t nested = 0;
	struct fdr_session *s = NULL;
	struct fdr_reader *r = NULL;
	struct fdr_record rec;
	uint32_t id = 0, cpu, p, i;
	int nr_cpus, done = 0, empty = 0, shown = 0, ret, tsc;
	char why[256];

	alarm(600); /* a hung reader fails the test instead of stalling it */
	for (i = 0; i < NR_WIDS; i++)
		r_w[i].last = -1;
	ret = sc_open_session(&s);
	if (!ret)
		ret = fdr_reader_open(s, 0, -1, FDR_READ_CONSUME, &r);
	if (ret) {
		printf("reader: cannot open: %s\n", strerror(-ret));
		return 2;
	}
	nr_cpus = fdr_ring_nr_cpus(s, 0);
	tsc = fdr_session_control(s)->ts_source == FDR_TS_TSC;
	lost_cpu = calloc((size_t)nr_cpus, sizeof(*lost_cpu));
	read_cpu = calloc((size_t)nr_cpus, sizeof(*read_cpu));
	last_ts = calloc((size_t)nr_cpus, sizeof(*last_ts));
	if (!lost_cpu || !read_cpu || !last_ts)
		return 2;
	if (write(ready_fd, "r", 1) != 1)
		return 2;
	close(ready_fd);

	for (;;) {
		uint32_t wid;
		uint64_t seq;
		int idx;

		ret = fdr_reader_next(r, &rec);
		if (ret < 0) {
			printf("reader: fdr_reader_next: %s\n", strerror(-ret));
			bad++;
			break;
		}
		if (ret == 0) {
			/* after the writers are gone: drained when two looks find nothing */
			if (done && ++empty >= 2)
				break;
			if (!done && sc_done_now(done_fd))
				done = 1;
			if (!done)
				fdr_reader_wait(r, 5);
			continue;
		}
		empty = 0;
		total_read++;
		total_lost += rec.lost_before;
		if (rec.cpu >= (uint32_t)nr_cpus) {
			bad++;
			sc_report(&shown, "reader", "record from a CPU beyond the ring");
			continue;
		}
		read_cpu[rec.cpu]++;
		lost_cpu[rec.cpu] += rec.lost_before;
		if (tsc && rec.raw_ts < last_ts[rec.cpu]) {
			ts_back++;
			snprintf(why, sizeof(why), "cpu %u: timestamp went backwards (%llu < %llu)",
				 rec.cpu, (unsigned long long)rec.raw_ts,
				 (unsigned long long)last_ts[rec.cpu]);
			sc_report(&shown, "reader", why);
		}
		last_ts[rec.cpu] = rec.raw_ts;
		if (sc_check(s, &id, seed, &rec, &wid, &seq, why, sizeof(why))) {
			bad++;
			sc_report(&shown, "reader", why);
			continue;
		}
		idx = wid_index(wid);
		if (idx < 0 || ((wid & ~SC_SIG_BIT) >> 8) >= procs || (wid & 0xff) >= threads) {
			bad++;
			snprintf(why, sizeof(why), "unknown writer id %#x", wid);
			sc_report(&shown, "reader", why);
			continue;
		}
		if ((int64_t)seq <= r_w[idx].last) {
			disorder++;
			snprintf(why, sizeof(why),
				 "writer %#x: seq %llu (cpu %u) after seq %lld: not increasing",
				 wid, (unsigned long long)seq, rec.cpu, (long long)r_w[idx].last);
			sc_report(&shown, "reader", why);
			continue;
		}
		if (wid & SC_SIG_BIT) {
			sig_read++;
			nested += ((const struct fdr_common *)rec.payload)->preempt_count != 0;
		}
		r_w[idx].gaps += seq - (uint64_t)(r_w[idx].last + 1);
		r_w[idx].last = (int64_t)seq;
		r_w[idx].read++;
	}

	/* ---- the accounting ---- */
	sc_ok(bad == 0, "reader: %llu invalid records", (unsigned long long)bad);
	sc_ok(disorder == 0, "reader: %llu records out of their writer's order",
	      (unsigned long long)disorder);
	sc_ok(ts_back == 0, "reader: %llu timestamps went backwards on their CPU",
	      (unsigned long long)ts_back);
	sc_ok(total_read > 0, "reader: read nothing");
	for (p = 0; p < procs; p++) {
		char path[PATH_MAX + 32], line[128];
		FILE *f;
		int lines = 0;

		snprintf(path, sizeof(path), "%s/written.%u", getenv("FDR_ROOT"), p);
		f = fopen(path, "r");
		if (!sc_ok(f != NULL, "reader: no report from writer %u", p))
			continue;
		while (fgets(line, sizeof(line), f)) {
			unsigned long long written, lost;
			unsigned wid;
			struct wstat *w;
			int idx;

			if (sscanf(line, "%u %llu", &wid, &written) != 2 ||
			    (idx = wid_index(wid)) < 0) {
				sc_ok(0, "reader: bad report line '%s'", line);
				continue;
			}
			lines++;
			w = &r_w[idx];
			if (!(wid & SC_SIG_BIT))
				sc_ok(written > 0, "writer %#x wrote nothing", wid);
			if (!sc_ok(w->last < (int64_t)written,
				   "writer %#x: read seq %lld but it wrote only %llu", wid,
				   (long long)w->last, written))
				continue;
			lost = w->gaps + (written - (uint64_t)(w->last + 1));
			sc_ok(w->read + lost == written,
			      "writer %#x: read %llu + lost %llu != written %llu", wid,
			      (unsigned long long)w->read, lost, written);
			sum_written += written;
			if (wid & SC_SIG_BIT)
				sig_written += written;
			sum_missing += written - w->read;
		}
		fclose(f);
		sc_ok(lines == (int)threads * 2, "reader: writer %u reported %d ids", p, lines);
	}
	for (cpu = 0; cpu < (uint32_t)nr_cpus; cpu++) {
		struct fdr_cpu_stats st;

		ret = fdr_ring_stats(s, 0, cpu, &st);
		if (!sc_ok(ret == 0, "reader: fdr_ring_stats(cpu %u): %s", cpu, strerror(-ret)))
			continue;
		refused += st.dropped;
		sc_ok(st.entries == 0, "cpu %u: %llu entries left after draining", cpu,
		      (unsigned long long)st.entries);
		sc_ok(st.read == read_cpu[cpu], "cpu %u: stats read %llu, reader read %llu", cpu,
		      (unsigned long long)st.read, (unsigned long long)read_cpu[cpu]);
		sc_ok(st.overrun == lost_cpu[cpu], "cpu %u: stats overrun %llu, lost_before %llu",
		      cpu, (unsigned long long)st.overrun, (unsigned long long)lost_cpu[cpu]);
		sc_ok(st.written == st.entries + st.overrun,
		      "cpu %u: written %llu != entries %llu + overrun %llu", cpu,
		      (unsigned long long)st.written, (unsigned long long)st.entries,
		      (unsigned long long)st.overrun);
	}
	refused += __atomic_load_n(&fdr_session_control(s)->dropped_no_slot, __ATOMIC_RELAXED);
	printf("reader: from signal handlers: written %llu, read %llu, %llu of them nested in a write\n",
	       (unsigned long long)sig_written, (unsigned long long)sig_read,
	       (unsigned long long)nested);
	sc_ok(sig_written > 0, "reader: the hammer's signal handlers wrote nothing");
	printf("reader: written %llu, read %llu, lost_before %llu, refused %llu\n",
	       (unsigned long long)sum_written, (unsigned long long)total_read,
	       (unsigned long long)total_lost, (unsigned long long)refused);
	sc_ok(sum_missing == total_lost + refused,
	      "reader: %llu records not read, but lost_before says %llu and the drop counters %llu",
	      (unsigned long long)sum_missing, (unsigned long long)total_lost,
	      (unsigned long long)refused);
	if (!(fdr_session_control(s)->instances[0].options & FDR_OPT_OVERWRITE))
		sc_ok(total_lost == 0, "reader: discard mode, yet %llu records were overwritten",
		      (unsigned long long)total_lost);
	fdr_reader_close(r);
	fdr_session_close(s);
	free(lost_cpu);
	free(read_cpu);
	free(last_ts);
	printf("reader: %d checks passed, %d failed\n", sc_passed, sc_failed);
	return sc_failed ? 1 : 0;
}

/* --role=peeker SEED DONE_FD */
static int run_peeker(char **argv)
{
	return sc_run_peeker(strtoull(argv[0], NULL, 0), atoi(argv[1]));
}

/* ---- ring boundaries, deterministic ---------------------------------------------------- */

/*
 * One writer pinned to one CPU fills a ring of 3 sub-buffers with records of one
 * size, many times over. Sizes include ones that fill a sub-buffer exactly
 * (16 + 40 + len must divide 4096 - 48 = 4048: len 32, 120, 128, 312, 1968),
 * so records end exactly at the end of a sub-buffer, the last one included.
 * Overwrite: the newest records must all be there, read + lost == written.
 * Discard: the oldest must all be there, read + dropped == written, and the ring
 * takes records again once read.
 */
static void boundary_case(struct fdr_session *s, uint32_t len, int overwrite)
{
	uint64_t seed = SC_FIXED_SEED(len), count, seq, first = 0, n = 0, lost = 0, more = 0;
	uint32_t total = 16 + ((40 + len + 7) & ~7u), id = 0, wid = 1, last_cpu = 0;
	uint64_t nr_more = total > 1024 ? 2 : 5;
	const char *mode = overwrite ? "overwrite" : "discard";
	struct fdr_reader *r = NULL;
	struct fdr_cpu_stats st;
	struct fdr_record rec;
	int64_t last = -1;
	int pass, ret, bad = 0;
	char why[256];

	count = 13 * (4048 / total) + 7;
	/* an empty ring (it goes on from where the writer is), in the mode we want */
	ret = fdr_ring_clear(s, 0, -1);
	if (!sc_ok(ret == 0, "%s/%u: fdr_ring_clear: %s", mode, len, strerror(-ret)))
		return;
	ret = (int)sc_ctl_write(s, "trace_options", O_TRUNC,
				overwrite ? "overwrite" : "nooverwrite");
	if (!sc_ok(ret > 0, "%s/%u: set the mode: %s", mode, len, strerror(-ret)))
		return;
	for (seq = 0; seq < count; seq++)
		sc_write(seed, wid, seq);
	/* pass 0 reads without consuming, pass 1 consumes: both must agree */
	for (pass = 0; pass < 2; pass++) {
		n = lost = 0;
		last = -1;
		ret = fdr_reader_open(s, 0, -1, pass ? FDR_READ_CONSUME : 0, &r);
		if (!sc_ok(ret == 0, "%s/%u: fdr_reader_open: %s", mode, len, strerror(-ret)))
			return;
		while ((ret = fdr_reader_next(r, &rec)) > 0) {
			uint32_t w;

			lost += rec.lost_before;
			if (sc_check(s, &id, seed, &rec, &w, &seq, why, sizeof(why))) {
				if (bad++ < 5)
					sc_ok(0, "%s/%u: %s", mode, len, why);
				continue;
			}
			if (last < 0)
				first = seq;
			else if (seq != (uint64_t)last + 1 && bad++ < 5)
				sc_ok(0, "%s/%u: seq %llu after %lld", mode, len,
				      (unsigned long long)seq, (long long)last);
			last = (int64_t)seq;
			last_cpu = rec.cpu;
			n++;
		}
		fdr_reader_close(r);
		r = NULL;
		sc_ok(ret == 0, "%s/%u: fdr_reader_next: %s", mode, len, strerror(-ret));
		if (overwrite)
			sc_ok(n > 0 && last == (int64_t)count - 1 && first + n == count &&
				      lost == first,
			      "%s/%u (pass %d): wrote %llu, read seq %llu..%lld (%llu records), %llu lost",
			      mode, len, pass, (unsigned long long)count, (unsigned long long)first,
			      (long long)last, (unsigned long long)n, (unsigned long long)lost);
		else
			sc_ok(n > 0 && first == 0 && last == (int64_t)n - 1 && lost == 0,
			      "%s/%u (pass %d): wrote %llu, read seq %llu..%lld (%llu records), %llu lost",
			      mode, len, pass, (unsigned long long)count, (unsigned long long)first,
			      (long long)last, (unsigned long long)n, (unsigned long long)lost);
		if (pass == 0) {
			memset(&st, 0, sizeof(st));
			ret = fdr_ring_stats(s, 0, last_cpu, &st);
			sc_ok(ret == 0 && st.entries == n &&
				      (overwrite ? st.written == count && st.dropped == 0 :
						   st.overrun == 0 && st.dropped == count - n),
			      "%s/%u: stats (%s): entries %llu written %llu overrun %llu dropped %llu; "
			      "wrote %llu, read %llu",
			      mode, len, strerror(-ret), (unsigned long long)st.entries,
			      (unsigned long long)st.written, (unsigned long long)st.overrun,
			      (unsigned long long)st.dropped, (unsigned long long)count,
			      (unsigned long long)n);
		}
	}
	/* read empty: the ring takes records again, in discard mode too (as many as
	 * surely fit in two sub-buffers) */
	for (seq = count; seq < count + nr_more; seq++)
		sc_write(seed, wid, seq);
	ret = fdr_reader_open(s, 0, -1, FDR_READ_CONSUME, &r);
	while (ret == 0 && fdr_reader_next(r, &rec) > 0) {
		uint32_t w;

		if (sc_check(s, &id, seed, &rec, &w, &seq, why, sizeof(why)) == 0 && seq >= count)
			more++;
	}
	fdr_reader_close(r);
	sc_ok(more == nr_more, "%s/%u: after a full read, %llu of %llu new records read", mode, len,
	      (unsigned long long)more, (unsigned long long)nr_more);
}

static int run_boundaries(void)
{
	static const uint32_t lens[] = { 32, 120, 128, 312, 1968, 0, 8, 1000 };
	struct fdr_session_opts o = { .buffer_size_kb = 1, .subbuf_size = 4096, .overwrite = 1 };
	struct fdr_session *s = NULL;
	size_t i;
	int mode, ret;

	if (!sc_ok(sc_pin(0) >= 0, "pin to one CPU"))
		return sc_summary();
	ret = sc_session_create(&o, &s);
	if (!sc_ok(ret == 0, "create a session: %s", strerror(-ret)))
		goto out;
	if (!sc_ok(sc_wait_enabled(10000) == 0, "stress:rec never got enabled"))
		goto out;
	for (mode = 1; mode >= 0; mode--)
		for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++)
			boundary_case(s, lens[i], mode);
out:
	if (s)
		fdr_session_destroy(s);
	fdr_session_close(s);
	sc_cleanup_root();
	return sc_summary();
}

/* ---- driver ------------------------------------------------------------------------------ */

static char role_reader[] = "--role=reader", role_peeker[] = "--role=peeker",
	    role_writer[] = "--role=writer";

static pid_t spawn_role(char **args, const int *keep, int nr_keep)
{
	pid_t pid = sc_spawn(args, NULL, keep, nr_keep);

	if (pid < 0)
		printf("spawn %s: %s\n", args[1], strerror((int)-pid));
	return pid;
}

int main(int argc, char **argv)
{
	struct fdr_session_opts o = { 0 };
	struct fdr_session *s = NULL;
	double secs = 5;
	uint64_t seed, hammer_us;
	uint32_t procs, threads, p;
	int overwrite = 1, done[2], ready[2], i, ret;
	pid_t reader, peeker, writers[MAX_PROCS];
	char a_procs[16], a_threads[16], a_secs[32], a_seed[32], a_hammer[32], a_done[16],
		a_ready[16], a_p[16];
	char buf[1];

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc >= 2 && strcmp(argv[1], "--role=writer") == 0 && argc == 7)
		return run_writer(argv + 2);
	if (argc >= 2 && strcmp(argv[1], "--role=reader") == 0 && argc == 7)
		return run_reader(argv + 2);
	if (argc >= 2 && strcmp(argv[1], "--role=peeker") == 0 && argc == 4)
		return run_peeker(argv + 2);

	if (argc == 2 && strcmp(argv[1], "--boundaries") == 0)
		return run_boundaries();

	o.buffer_size_kb = 16;
	o.subbuf_size = 4096;
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--mode=overwrite") == 0) {
			overwrite = 1;
		} else if (strcmp(argv[i], "--mode=discard") == 0) {
			overwrite = 0;
		} else if (strncmp(argv[i], "--kb=", 5) == 0) {
			o.buffer_size_kb = (uint32_t)atoi(argv[i] + 5);
		} else {
			fprintf(stderr, "usage: %s [--mode=overwrite|discard] [--kb=N]\n", argv[0]);
			return 2;
		}
	}
	o.overwrite = overwrite ? 1 : -1;
	if (getenv("FDR_STRESS_SECONDS"))
		secs = atof(getenv("FDR_STRESS_SECONDS"));
	procs = (uint32_t)sc_env_u64("FDR_STRESS_PROCS", 3);
	threads = (uint32_t)sc_env_u64("FDR_STRESS_THREADS", 2);
	hammer_us = sc_env_u64("FDR_STRESS_HAMMER_US", 100);
	seed = sc_env_u64("FDR_STRESS_SEED", sc_mix(sc_now_ns() ^ (uint64_t)getpid()));
	if (procs < 1 || procs > MAX_PROCS || threads < 1 || threads > MAX_THREADS || secs <= 0) {
		fprintf(stderr, "bad FDR_STRESS_* settings\n");
		return 2;
	}
	printf("stress: seed %#llx (FDR_STRESS_SEED to repeat), %s mode, %u KiB per CPU, "
	       "%u processes x %u threads, %.1f s, hammer every %llu us\n",
	       (unsigned long long)seed, overwrite ? "overwrite" : "discard", o.buffer_size_kb,
	       procs, threads, secs, (unsigned long long)hammer_us);

	ret = sc_session_create(&o, &s);
	if (ret) {
		printf("cannot create the session: %s\n", strerror(-ret));
		sc_cleanup_root();
		return 1;
	}
	if (pipe2(done, O_CLOEXEC) || pipe2(ready, O_CLOEXEC)) {
		perror("pipe2");
		return 1;
	}
	snprintf(a_procs, sizeof(a_procs), "%u", procs);
	snprintf(a_threads, sizeof(a_threads), "%u", threads);
	snprintf(a_secs, sizeof(a_secs), "%f", secs);
	snprintf(a_seed, sizeof(a_seed), "%#llx", (unsigned long long)seed);
	snprintf(a_hammer, sizeof(a_hammer), "%llu", (unsigned long long)hammer_us);
	snprintf(a_done, sizeof(a_done), "%d", done[0]);
	snprintf(a_ready, sizeof(a_ready), "%d", ready[1]);
	{
		char *args[] = { argv[0], role_reader, a_procs, a_threads,
				 a_seed,  a_done,      a_ready, NULL };
		int keep[] = { done[0], ready[1] };

		reader = spawn_role(args, keep, 2);
	}
	close(ready[1]);
	{
		struct pollfd pf = { .fd = ready[0], .events = POLLIN };

		if (!sc_ok(reader > 0 && poll(&pf, 1, 20000) == 1 && read(ready[0], buf, 1) == 1,
			   "the reader did not start")) {
			if (reader > 0) {
				kill(reader, SIGKILL);
				waitpid(reader, NULL, 0);
			}
			goto out;
		}
	}
	{
		char *args[] = { argv[0], role_peeker, a_seed, a_done, NULL };
		int keep[] = { done[0] };

		peeker = spawn_role(args, keep, 1);
	}
	for (p = 0; p < procs; p++) {
		char *args[] = { argv[0], role_writer, a_p,	 a_threads,
				 a_secs,  a_seed,      a_hammer, NULL };

		snprintf(a_p, sizeof(a_p), "%u", p);
		writers[p] = spawn_role(args, NULL, 0);
	}
	for (p = 0; p < procs; p++) {
		char who[32];

		snprintf(who, sizeof(who), "writer %u", p);
		if (writers[p] > 0)
			sc_exited_ok(writers[p], (int)(secs * 1000) + 60000, who);
		else
			sc_ok(0, "writer %u did not start", p);
	}
	close(done[1]);
	done[1] = -1;
	sc_exited_ok(reader, 120000, "reader");
	if (peeker > 0)
		sc_exited_ok(peeker, 60000, "peeker");
	else
		sc_ok(0, "peeker did not start");
out:
	if (done[1] >= 0)
		close(done[1]);
	if (!getenv("FDR_TEST_KEEP"))
		fdr_session_destroy(s);
	fdr_session_close(s);
	sc_cleanup_root();
	return sc_summary();
}
