// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * snapshot.c - snapshots taken while writers run at full speed (docs/tracefs.md, Snapshots).
 *
 *   fdr-stress-snapshot live
 *	FDR_FLIGHT_PROCS (2) writer processes of 2 threads each, thread t pinned to
 *	the t-th allowed CPU, write self-checking stress:rec records (see
 *	tests/harness/selfcheck.h) as fast as they can. The controller takes
 *	snapshots one after the other for FDR_FLIGHT_SECONDS (4): in turn with
 *	fdr_session_snapshot() itself, and by asking a writer thread to call
 *	fdr_snapshot() between two of its records. After each one it reads the
 *	first records of the live buffer, then the whole snapshot, and checks:
 *	  - no record is torn (length, data and checksum of every record);
 *	  - per writer, sequence numbers increase, and every gap is covered by
 *	    the losses the reader counted (lost_before) on the writer's CPU;
 *	  - the snapshot starts where the previous one ended (up to counted
 *	    losses) and the live buffer continues where the snapshot ends: the
 *	    first live record of each writer follows the snapshot's last one,
 *	    up to counted losses (exactly, when none were counted);
 *	  - where both ends are known exactly, per CPU: records written in the
 *	    period == records in the snapshot + counted losses;
 *	  - the snapshot's stats agree with what was read.
 *
 *   fdr-stress-snapshot timing
 *	Buffers of 1 MiB and of 64 MiB per CPU, full and wrapping (writers keep
 *	writing meanwhile): times fdr_session_snapshot() and fdr_snapshot(), then
 *	checks every record of a full 64 MiB snapshot.
 *	Prints min/median/max; the median must be under 5 ms (the design is
 *	O(CPUs): well under a millisecond, whatever the size).
 *
 *   fdr-stress-snapshot reread
 *	A snapshot read while another snapshot is taken: the reader must return
 *	the snapshot's records only, never records written into the buffer after
 *	it went live again, and never an uncounted gap.
 *
 * FDR_FLIGHT_SEED repeats a run (the seed is printed).
 */
#include "readout.h"

#include <pthread.h>
#include <sys/mman.h>
#include <sys/resource.h>

#define MAX_PROCS 8
#define THREADS 2
#define MAX_W (MAX_PROCS * THREADS)
#define NONE FL_NONE
#define INF INT64_MAX

#define seed fl_seed

/* ---- shared between the controller and the writer processes ---------------------------- */

struct shared {
	volatile int stop;
	volatile uint64_t req[MAX_PROCS]; /* controller: "take snapshot number N" */
	volatile uint64_t done[MAX_PROCS]; /* writer: "took number N" */
	volatile int result[MAX_PROCS]; /* fdr_snapshot()'s return */
	volatile int64_t at_seq[MAX_PROCS]; /* the last seq the writer wrote before it */
	volatile int cpu[FL_MAX_W]; /* the CPU each writer is pinned to */
	volatile int ready[MAX_W];
	volatile uint64_t written[MAX_W]; /* at the end */
};

static struct shared *sh;

struct wargs {
	int proc, thread;
};

static void *writer_thread(void *arg)
{
	const struct wargs *a = arg;
	uint32_t wid = (uint32_t)(a->proc * THREADS + a->thread);
	int cpu = sc_pin(a->thread % THREADS);
	uint64_t seq;

	sh->cpu[wid] = cpu;
	__atomic_store_n(&sh->ready[wid], 1, __ATOMIC_RELEASE);
	for (seq = 0; !__atomic_load_n(&sh->stop, __ATOMIC_ACQUIRE); seq++) {
		sc_write(seed, wid, seq);
		if (a->thread == 0 &&
		    __atomic_load_n(&sh->req[a->proc], __ATOMIC_ACQUIRE) != sh->done[a->proc]) {
			/* between two records: seq is in the snapshot, seq + 1 will not be */
			sh->at_seq[a->proc] = (int64_t)seq;
			sh->result[a->proc] = fdr_snapshot();
			__atomic_store_n(&sh->done[a->proc], sh->req[a->proc], __ATOMIC_RELEASE);
		}
	}
	sh->written[wid] = seq;
	return NULL;
}

/* A forked writer process: THREADS pinned threads until sh->stop. Never returns. */
static void writer_process(int proc)
{
	pthread_t t[THREADS];
	struct wargs a[THREADS];
	int i;

	alarm(120); /* never outlive the test */
	/* the controller must get the CPU when it wants it; we take the rest */
	setpriority(PRIO_PROCESS, 0, 10);
	for (i = 0; i < THREADS; i++) {
		a[i].proc = proc;
		a[i].thread = i;
		if (pthread_create(&t[i], NULL, writer_thread, &a[i]))
			_exit(4);
	}
	for (i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	_exit(0);
}

/* ---- live ---------------------------------------------------------------------------------- */

static int nr_w; /* writer ids 0 .. nr_w - 1 */

struct bound {
	int64_t lo, hi; /* the first seq a writer wrote after a swap is in [lo, hi] */
};

/*
 * Go on taking snapshots? For at least FDR_FLIGHT_SECONDS, and on until 10
 * snapshots (3 by writers) were checked: on a loaded machine fewer fit in the
 * time, and the test is about what each snapshot holds, not how fast they come.
 * At most a minute more.
 */
static int live_more(uint64_t k, uint64_t by_writer, uint64_t t_end, uint64_t t_cap)
{
	uint64_t now = sc_now_ns();

	return now < t_cap && (now < t_end || k <= 10 || by_writer < 3);
}

static int run_live(void)
{
	struct fdr_session_opts o = { .buffer_size_kb = 8192, .subbuf_size = 4096, .overwrite = 1 };
	int procs = (int)sc_env_u64("FDR_FLIGHT_PROCS", 2);
	uint64_t secs = sc_env_u64("FDR_FLIGHT_SECONDS", 4), t_end, t_cap;
	struct fdr_session *s = NULL;
	struct bound prev[MAX_W], cur[MAX_W];
	struct fl_readout *live = fl_readout_new(), *snap = fl_readout_new();
	pid_t pids[MAX_PROCS];
	int wids[MAX_W];
	uint64_t k = 0, by_writer = 0, exact_cpu_checks = 0, exact_heads = 0, total_read = 0;
	uint64_t total_lost = 0, t_swap_max = 0;
	int nr_cpus, i, ret;
	char buf[80];

	if (procs < 2 || procs > MAX_PROCS)
		procs = 2;
	nr_w = procs * THREADS;
	printf("live: %d processes x %d threads, %llu s, 8 MiB per CPU\n", procs, THREADS,
	       (unsigned long long)secs);
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return sc_ok(0, "mmap: %s", strerror(errno));
	for (i = 0; i < FL_MAX_W; i++)
		sh->cpu[i] = -1;
	fl_wcpu = sh->cpu;
	ret = sc_session_create(&o, &s);
	if (!sc_ok(ret == 0, "create the session: %s", strerror(-ret)))
		return 1;
	ret = sc_wait_enabled(10000);
	if (!sc_ok(ret == 0, "stress:rec never got enabled"))
		goto out;
	ret = fdr_session_lock(s);
	if (!ret) {
		ret = fdr_session_snapshot_alloc(s, 0, 1);
		fdr_session_unlock(s);
	}
	if (!sc_ok(ret == 0, "allocate the snapshot buffers: %s", strerror(-ret)))
		goto out;
	nr_cpus = fdr_ring_nr_cpus(s, 0);
	for (i = 0; i < procs; i++) {
		fflush(NULL);
		pids[i] = fork();
		if (pids[i] == 0)
			writer_process(i);
		if (pids[i] < 0) {
			sc_ok(0, "fork: %s", strerror(errno));
			procs = i;
			goto stop;
		}
	}
	for (i = 0; i < nr_w; i++) {
		uint64_t end = sc_now_ns() + 10000000000ull;

		while (!__atomic_load_n(&sh->ready[i], __ATOMIC_ACQUIRE) && sc_now_ns() < end)
			sc_sleep_us(1000);
		if (!sc_ok(sh->ready[i], "writer %d did not start", i))
			goto stop;
		if (sh->cpu[i] < 0 || sh->cpu[i] >= nr_cpus) {
			sc_ok(0, "writer %d could not be pinned (cpu %d)", i, sh->cpu[i]);
			goto stop;
		}
	}
	for (i = 0; i < nr_w; i++) {
		prev[i].lo = prev[i].hi = 0; /* the first snapshot holds everything from seq 0 */
		wids[i] = i;
	}
	sc_sleep_us(20000);

	t_end = sc_now_ns() + secs * 1000000000ull;
	t_cap = t_end + 60000000000ull;
	for (k = 1; sc_failed < 20 && live_more(k, by_writer, t_end, t_cap); k++) {
		const struct fdr_abi_ring *h;
		void *base;
		size_t size;
		uint64_t seq0, seq1, t0;
		int actor = (int)(k % (uint64_t)(procs + 1)) - 1; /* -1: the controller */
		int w, c;

		ret = fdr_session_ring(s, 0, &base, &size);
		if (!sc_ok(ret == 0, "map the ring: %s", strerror(-ret)))
			break;
		h = base;
		seq0 = __atomic_load_n(&h->snap_seq, __ATOMIC_ACQUIRE);
		t0 = sc_now_ns();
		if (actor < 0) {
			ret = fdr_session_snapshot(s, 0, -1);
			t0 = sc_now_ns() - t0;
			if (t0 > t_swap_max)
				t_swap_max = t0;
		} else {
			uint64_t end = sc_now_ns() + 2000000000ull;

			__atomic_store_n(&sh->req[actor], k, __ATOMIC_RELEASE);
			while (__atomic_load_n(&sh->done[actor], __ATOMIC_ACQUIRE) != k &&
			       sc_now_ns() < end)
				sc_sleep_us(50);
			if (!sc_ok(sh->done[actor] == k,
				   "snapshot %llu: writer process %d did not call fdr_snapshot() within 2 s",
				   (unsigned long long)k, actor))
				break;
			ret = sh->result[actor];
			by_writer++;
		}
		if (!sc_ok(ret == 0, "snapshot %llu (%s): %s", (unsigned long long)k,
			   actor < 0 ? "fdr_session_snapshot" : "fdr_snapshot", strerror(-ret)))
			break;
		ret = fl_read_heads(s, live, wids, nr_w, 100000, 200);
		if (!sc_ok(ret == 0, "snapshot %llu: read the live buffer: %s",
			   (unsigned long long)k, strerror(-ret)))
			break;
		ret = fl_read(s, FDR_READ_SNAPSHOT, snap, "snapshot");
		if (!sc_ok(ret == 0, "snapshot %llu: read it: %s", (unsigned long long)k,
			   strerror(-ret)))
			break;
		seq1 = __atomic_load_n(&h->snap_seq, __ATOMIC_ACQUIRE);
		if (!sc_ok(seq1 == seq0 + 2, "snapshot %llu: snap_seq went from %llu to %llu",
			   (unsigned long long)k, (unsigned long long)seq0,
			   (unsigned long long)seq1))
			break;
		sc_ok(snap->bad == 0 && snap->disorder == 0 && snap->gaps == 0,
		      "snapshot %llu: %llu bad records, %llu out of order, %llu uncounted gaps",
		      (unsigned long long)k, (unsigned long long)snap->bad,
		      (unsigned long long)snap->disorder, (unsigned long long)snap->gaps);
		sc_ok(live->bad == 0 && live->disorder == 0 && live->gaps == 0,
		      "after snapshot %llu: live buffer: %llu bad records, %llu out of order, %llu uncounted gaps",
		      (unsigned long long)k, (unsigned long long)live->bad,
		      (unsigned long long)live->disorder, (unsigned long long)live->gaps);
		sc_ok(snap->records > 0, "snapshot %llu is empty", (unsigned long long)k);
		total_read += snap->records;
		for (c = 0; c < nr_cpus && c < FL_CPUS; c++)
			total_lost += snap->lost[c];

		for (w = 0; w < nr_w; w++) {
			const struct fl_wseen *sw = &snap->w[w], *lw = &live->w[w];
			uint32_t cpu = (uint32_t)sh->cpu[w];

			/* where the snapshot starts: after the previous one, up to losses */
			if (sw->first != NONE) {
				sc_ok(sw->first >= prev[w].lo,
				      "snapshot %llu: writer %d starts at seq %lld, but seq %lld was written before the previous snapshot",
				      (unsigned long long)k, w, (long long)sw->first,
				      (long long)prev[w].lo - 1);
				sc_ok(prev[w].hi == INF ||
					      sw->first - (int64_t)sw->lost_at_first <= prev[w].hi,
				      "snapshot %llu: writer %d starts at seq %lld; the previous snapshot ended before seq %lld and only %llu records were counted lost",
				      (unsigned long long)k, w, (long long)sw->first,
				      (long long)prev[w].hi, (unsigned long long)sw->lost_at_first);
			}
			/* where it ends: the first seq written after this swap */
			cur[w].lo = sw->last != NONE ? sw->last + 1 : prev[w].lo;
			cur[w].hi = INF;
			if (lw->first != NONE) {
				if (lw->first < cur[w].hi)
					cur[w].hi = lw->first;
				if (lw->first - (int64_t)lw->lost_at_first > cur[w].lo)
					cur[w].lo = lw->first - (int64_t)lw->lost_at_first;
			}
			if (actor >= 0 && w == actor * THREADS) {
				/* this writer took the snapshot: we know exactly */
				int64_t b = sh->at_seq[actor] + 1;

				sc_ok(b >= cur[w].lo && b <= cur[w].hi,
				      "snapshot %llu (fdr_snapshot() by writer %d after its seq %lld): the snapshot ends at seq %lld, the live buffer starts at %lld",
				      (unsigned long long)k, w, (long long)sh->at_seq[actor],
				      (long long)sw->last, (long long)lw->first);
				cur[w].lo = cur[w].hi = b;
			}
			if (!sc_ok(cur[w].lo <= cur[w].hi,
				   "snapshot %llu: writer %d: the snapshot ends at seq %lld, the live buffer starts at seq %lld with %llu records counted lost before it (CPU %u)",
				   (unsigned long long)k, w, (long long)sw->last,
				   (long long)lw->first, (unsigned long long)lw->lost_at_first,
				   cpu))
				cur[w].hi = INF;
			if (sw->last != NONE && lw->first != NONE && lw->lost_at_first == 0)
				exact_heads++;
		}
		/* per CPU: written in the period == read + counted lost, where both ends are exact */
		for (c = 0; c < nr_cpus && c < FL_CPUS; c++) {
			int64_t written = 0;
			int exact = 1, any = 0;

			for (w = 0; w < nr_w; w++) {
				if (sh->cpu[w] != c)
					continue;
				any = 1;
				if (prev[w].lo != prev[w].hi || cur[w].lo != cur[w].hi)
					exact = 0;
				else
					written += cur[w].lo - prev[w].lo;
			}
			if (!any || !exact)
				continue;
			exact_cpu_checks++;
			sc_ok((uint64_t)written == snap->nread[c] + snap->lost[c],
			      "snapshot %llu, CPU %d: %lld records written in the period, the snapshot has %llu and counts %llu lost",
			      (unsigned long long)k, c, (long long)written,
			      (unsigned long long)snap->nread[c],
			      (unsigned long long)snap->lost[c]);
		}
		/* the stats of the snapshot agree with what was read */
		for (c = 0; c < nr_cpus && c < FL_CPUS; c++) {
			struct fdr_cpu_stats stt;

			ret = fdr_ring_stats_ex(s, 0, (uint32_t)c, FDR_READ_SNAPSHOT, &stt);
			sc_ok(ret == 0 && stt.entries == snap->nread[c] &&
				      stt.overrun == snap->lost[c],
			      "snapshot %llu, CPU %d stats (%s): entries %llu overrun %llu, read %llu lost %llu",
			      (unsigned long long)k, c, strerror(-ret),
			      (unsigned long long)stt.entries, (unsigned long long)stt.overrun,
			      (unsigned long long)snap->nread[c],
			      (unsigned long long)snap->lost[c]);
		}
		memcpy(prev, cur, sizeof(prev));
	}
	k--;
	printf("live: %llu snapshots (%llu by fdr_snapshot() in a writer), %llu records checked, %llu counted lost\n",
	       (unsigned long long)k, (unsigned long long)by_writer, (unsigned long long)total_read,
	       (unsigned long long)total_lost);
	printf("live: %llu exact writer continuations, %llu exact per-CPU counts; slowest fdr_session_snapshot() %.1f us\n",
	       (unsigned long long)exact_heads, (unsigned long long)exact_cpu_checks,
	       (double)t_swap_max / 1e3);
	sc_ok(k >= 10, "only %llu snapshots taken", (unsigned long long)k);
	sc_ok(by_writer >= 3, "only %llu snapshots taken by fdr_snapshot()",
	      (unsigned long long)by_writer);
	sc_ok(exact_heads >= k, "only %llu of %llu writer continuations could be checked exactly",
	      (unsigned long long)exact_heads, (unsigned long long)k * (uint64_t)nr_w);
stop:
	__atomic_store_n(&sh->stop, 1, __ATOMIC_RELEASE);
	for (i = 0; i < procs; i++) {
		snprintf(buf, sizeof(buf), "writer process %d", i);
		sc_exited_ok(pids[i], 20000, buf);
	}
	for (i = 0; i < nr_w; i++)
		printf("live: writer %d (CPU %d): %llu records\n", i, sh->cpu[i],
		       (unsigned long long)sh->written[i]);
out:
	free(live);
	free(snap);
	fdr_session_destroy(s);
	fdr_session_close(s);
	return 0;
}

/* ---- timing --------------------------------------------------------------------------------- */

static volatile int t_stop;
static uint64_t t_written[2];
static volatile int t_cpu[2], t_ready[2];

static void *timing_writer(void *arg)
{
	int idx = (int)(uintptr_t)arg;
	uint64_t seq;

	t_cpu[idx] = sc_pin(idx);
	__atomic_store_n(&t_ready[idx], 1, __ATOMIC_RELEASE);
	for (seq = 0; !__atomic_load_n(&t_stop, __ATOMIC_ACQUIRE); seq++)
		sc_write(seed, (uint32_t)idx, seq);
	t_written[idx] = seq;
	return NULL;
}

/* Wait until the live buffer of each writer's CPU has wrapped (at most 20 s). */
static int wait_wrapped(struct fdr_session *s, int nthreads, int nr_cpus)
{
	uint64_t end = sc_now_ns() + 20000000000ull;

	while (sc_now_ns() < end) {
		int c, wrapped = 1;

		for (c = 0; c < nthreads; c++) {
			struct fdr_cpu_stats st;

			if (!t_ready[c] || t_cpu[c] < 0 || t_cpu[c] >= nr_cpus ||
			    fdr_ring_stats(s, 0, (uint32_t)t_cpu[c], &st) || st.overrun == 0)
				wrapped = 0;
		}
		if (wrapped)
			return 1;
		sc_sleep_us(2000);
	}
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

#define TIMING_ROUNDS 25

static void timing_one(uint32_t kb)
{
	struct fdr_session_opts o = { .buffer_size_kb = kb, .subbuf_size = 4096, .overwrite = 1 };
	struct fdr_session *s = NULL;
	uint64_t t_sess[TIMING_ROUNDS], t_app[TIMING_ROUNDS];
	pthread_t th[2];
	int nr_cpus, nthreads, i, ret, c;

	ret = sc_session_create(&o, &s);
	if (!sc_ok(ret == 0, "%u KiB: create the session: %s", kb, strerror(-ret)))
		return;
	ret = sc_wait_enabled(10000);
	if (!sc_ok(ret == 0, "%u KiB: stress:rec never got enabled", kb))
		goto out;
	ret = fdr_session_lock(s);
	if (!ret) {
		ret = fdr_session_snapshot_alloc(s, 0, 1);
		fdr_session_unlock(s);
	}
	if (!sc_ok(ret == 0, "%u KiB: allocate the snapshot buffers: %s", kb, strerror(-ret)))
		goto out;
	nr_cpus = fdr_ring_nr_cpus(s, 0);
	{
		cpu_set_t allowed;

		CPU_ZERO(&allowed);
		sched_getaffinity(0, sizeof(allowed), &allowed);
		nthreads = CPU_COUNT(&allowed) >= 2 ? 2 : 1;
	}
	t_stop = 0;
	t_ready[0] = t_ready[1] = 0;
	for (i = 0; i < nthreads; i++)
		pthread_create(&th[i], NULL, timing_writer, (void *)(uintptr_t)i);
	/* fill both buffers and wrap them: swap once the live one has wrapped, twice */
	for (i = 0; i < 2; i++) {
		sc_ok(wait_wrapped(s, nthreads, nr_cpus),
		      "%u KiB: the buffers did not wrap within 20 s", kb);
		ret = fdr_session_snapshot(s, 0, -1);
		sc_ok(ret == 0, "%u KiB: snapshot: %s", kb, strerror(-ret));
	}
	for (i = 0; i < TIMING_ROUNDS; i++) {
		uint64_t t0;

		sc_sleep_us(2000);
		t0 = sc_now_ns();
		ret = fdr_session_snapshot(s, 0, -1);
		t_sess[i] = sc_now_ns() - t0;
		sc_ok(ret == 0, "%u KiB: fdr_session_snapshot: %s", kb, strerror(-ret));
		sc_sleep_us(2000);
		t0 = sc_now_ns();
		ret = fdr_snapshot();
		t_app[i] = sc_now_ns() - t0;
		sc_ok(ret == 0, "%u KiB: fdr_snapshot: %s", kb, strerror(-ret));
	}
	/* a last one of a full and wrapped buffer: every record in it checks out */
	sc_ok(wait_wrapped(s, nthreads, nr_cpus), "%u KiB: the buffers did not wrap within 20 s",
	      kb);
	ret = fdr_session_snapshot(s, 0, -1);
	sc_ok(ret == 0, "%u KiB: snapshot: %s", kb, strerror(-ret));
	__atomic_store_n(&t_stop, 1, __ATOMIC_RELEASE);
	for (i = 0; i < nthreads; i++)
		pthread_join(th[i], NULL);
	{
		struct fl_readout *ro = fl_readout_new();

		nr_w = nthreads;
		for (c = 0; c < nthreads; c++)
			sh->cpu[c] = t_cpu[c];
		ret = fl_read(s, FDR_READ_SNAPSHOT, ro, "snapshot");
		sc_ok(ret == 0 && ro->records > 0 && ro->lost_total > 0,
		      "%u KiB: a full snapshot: %s, %llu records, %llu counted lost", kb,
		      strerror(-ret), (unsigned long long)ro->records,
		      (unsigned long long)ro->lost_total);
		fl_clean(ro, "a full snapshot");
		printf("timing: %6u KiB per CPU: a full snapshot holds %llu records, all whole\n",
		       kb, (unsigned long long)ro->records);
		free(ro);
	}
	qsort(t_sess, TIMING_ROUNDS, sizeof(t_sess[0]), cmp_u64);
	qsort(t_app, TIMING_ROUNDS, sizeof(t_app[0]), cmp_u64);
	printf("timing: %6u KiB per CPU: fdr_session_snapshot min %.1f us median %.1f us max %.1f us; "
	       "fdr_snapshot min %.1f us median %.1f us max %.1f us (%llu + %llu records written)\n",
	       kb, t_sess[0] / 1e3, t_sess[TIMING_ROUNDS / 2] / 1e3,
	       t_sess[TIMING_ROUNDS - 1] / 1e3, t_app[0] / 1e3, t_app[TIMING_ROUNDS / 2] / 1e3,
	       t_app[TIMING_ROUNDS - 1] / 1e3, (unsigned long long)t_written[0],
	       (unsigned long long)t_written[1]);
	sc_ok(t_sess[TIMING_ROUNDS / 2] < 5000000ull,
	      "%u KiB per CPU: fdr_session_snapshot takes %.3f ms (median), expected < 5 ms", kb,
	      t_sess[TIMING_ROUNDS / 2] / 1e6);
	sc_ok(t_app[TIMING_ROUNDS / 2] < 5000000ull,
	      "%u KiB per CPU: fdr_snapshot takes %.3f ms (median), expected < 5 ms", kb,
	      t_app[TIMING_ROUNDS / 2] / 1e6);
out:
	fdr_session_destroy(s);
	fdr_session_close(s);
	fdr_sync(); /* detach */
}

static int run_timing(void)
{
	int i;

	/* big records of one size: the buffers fill (and wrap) in a fraction of a second */
	seed = SC_FIXED_SEED(1800);

	sh = calloc(1, sizeof(*sh));
	if (!sh)
		return 1;
	for (i = 0; i < FL_MAX_W; i++)
		sh->cpu[i] = -1;
	fl_wcpu = sh->cpu;
	timing_one(1024);
	timing_one(65536);
	return 0;
}

/* ---- reread --------------------------------------------------------------------------------- */

static void write_n(uint32_t wid, uint64_t *seq, uint64_t n)
{
	uint64_t i;

	for (i = 0; i < n; i++, (*seq)++)
		sc_write(seed, wid, *seq);
}

static int run_reread(void)
{
	struct fdr_session_opts o = { .buffer_size_kb = 1024, .subbuf_size = 4096, .overwrite = 1 };
	const uint64_t n1 = 3000, n2 = 500, n3 = 500;
	struct fdr_session *s = NULL;
	struct fdr_reader *r = NULL;
	struct fdr_record rec;
	struct fl_readout *ro = fl_readout_new();
	uint64_t seq = 0, got = 0, beyond = 0;
	int ret, i;

	sh = calloc(1, sizeof(*sh));
	if (!ro || !sh)
		return 1;
	nr_w = 1;
	for (i = 0; i < FL_MAX_W; i++)
		sh->cpu[i] = -1;
	fl_wcpu = sh->cpu;
	sh->cpu[0] = sc_pin(0);
	ret = sc_session_create(&o, &s);
	if (!sc_ok(ret == 0, "create the session: %s", strerror(-ret)))
		return 1;
	ret = sc_wait_enabled(10000);
	if (!sc_ok(ret == 0, "stress:rec never got enabled"))
		goto out;
	ret = fdr_session_lock(s);
	if (!ret) {
		ret = fdr_session_snapshot_alloc(s, 0, 1);
		fdr_session_unlock(s);
	}
	if (!sc_ok(ret == 0, "allocate the snapshot buffers: %s", strerror(-ret)))
		goto out;
	/* snapshot 1 holds seq 0 .. n1-1 */
	write_n(0, &seq, n1);
	ret = fdr_session_snapshot(s, 0, -1);
	sc_ok(ret == 0, "snapshot 1: %s", strerror(-ret));
	write_n(0, &seq, n2); /* into the other buffer */
	fl_readout_init(ro);
	ret = fdr_reader_open(s, 0, -1, FDR_READ_SNAPSHOT, &r);
	if (!sc_ok(ret == 0, "open the snapshot: %s", strerror(-ret)))
		goto out;
	while (got < n1 / 2 && (ret = fdr_reader_next(r, &rec)) > 0) {
		fl_take(s, ro, &rec, "snapshot 1");
		got++;
	}
	/* meanwhile somebody takes the next snapshot: the buffer being read goes live */
	ret = fdr_snapshot();
	sc_ok(ret == 0, "snapshot 2: %s", strerror(-ret));
	write_n(0, &seq, n3);
	while ((ret = fdr_reader_next(r, &rec)) > 0) {
		int wid = fl_take(s, ro, &rec, "snapshot 1, read across snapshot 2");

		if (wid == 0 && ro->w[0].last >= (int64_t)n1)
			beyond++;
	}
	fdr_reader_close(r);
	printf("reread: snapshot 1 holds seq 0..%llu; its reader returned %llu records, seq %lld..%lld, %llu counted lost, %llu written after snapshot 2\n",
	       (unsigned long long)n1 - 1, (unsigned long long)ro->records,
	       (long long)ro->w[0].first, (long long)ro->w[0].last,
	       (unsigned long long)ro->lost[sh->cpu[0] >= 0 ? sh->cpu[0] : 0],
	       (unsigned long long)beyond);
	sc_ok(ret == 0, "reading the snapshot: %s", strerror(-ret));
	sc_ok(ro->bad == 0 && ro->disorder == 0 && ro->gaps == 0,
	      "a snapshot read across another snapshot: %llu bad, %llu out of order, %llu uncounted gaps",
	      (unsigned long long)ro->bad, (unsigned long long)ro->disorder,
	      (unsigned long long)ro->gaps);
	sc_ok(beyond == 0,
	      "a snapshot read across another snapshot returned %llu records written after that snapshot (seq >= %llu), as if they were part of it",
	      (unsigned long long)beyond, (unsigned long long)n1);
	/* and snapshot 2 read now holds exactly seq n1 .. n1+n2-1 */
	ret = fl_read(s, FDR_READ_SNAPSHOT, ro, "snapshot");
	sc_ok(ret == 0 && ro->bad == 0 && ro->gaps == 0 && ro->w[0].first == (int64_t)n1 &&
		      ro->w[0].last == (int64_t)(n1 + n2 - 1) && ro->w[0].n == n2,
	      "snapshot 2: %s, seq %lld..%lld (%llu records), expected %llu..%llu", strerror(-ret),
	      (long long)ro->w[0].first, (long long)ro->w[0].last, (unsigned long long)ro->w[0].n,
	      (unsigned long long)n1, (unsigned long long)(n1 + n2 - 1));
out:
	free(ro);
	fdr_session_destroy(s);
	fdr_session_close(s);
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	seed = sc_env_u64("FDR_FLIGHT_SEED", sc_mix(sc_now_ns() ^ (uint64_t)getpid()));
	printf("flight snapshot: seed %#llx (FDR_FLIGHT_SEED to repeat)\n",
	       (unsigned long long)seed);
	if (argc == 2 && strcmp(argv[1], "live") == 0) {
		alarm(100);
		run_live();
	} else if (argc == 2 && strcmp(argv[1], "timing") == 0) {
		alarm(100);
		run_timing();
	} else if (argc == 2 && strcmp(argv[1], "reread") == 0) {
		alarm(60);
		run_reread();
	} else {
		fprintf(stderr, "usage: %s live|timing|reread\n", argv[0]);
		sc_cleanup_root();
		return 2;
	}
	sc_cleanup_root();
	return sc_summary();
}
