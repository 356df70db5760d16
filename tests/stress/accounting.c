// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * accounting.c - every record written is read or counted lost, with everything
 * happening at once (issue 12, "Accounting tests with everything at once"):
 * writer processes x threads at full speed, snapshots taken over and over
 * (through the control tree, by the fdr command, and by a trigger on the
 * records), a writer process stopped (SIGSTOP, then SIGCONT) and another killed
 * (SIGKILL) while they write, and one reader, in three phases:
 *
 *   fdr-stress-accounting FDR
 *	pipe	a consuming reader of all CPUs (the library's, as fdr pipe and
 *		trace_pipe use it) runs throughout: records read + records it
 *		reported lost (lost_before, the [LOST N EVENTS] lines) = written,
 *		and every record read checks out (not torn, in order per writer, no
 *		gap in a writer's sequence that was not counted lost);
 *	record	fdr record runs throughout (until SIGINT): its summary's events +
 *		lost = written + refused;
 *	show	no consuming reader; when the writers are gone, the records
 *		"fdr show" prints + the overrun, read events and snapshot events of
 *		per_cpu/cpuN/stats = written.
 *
 * "Written" is exact: each phase starts with a clear, and the ring's own count
 * of records written since (per_cpu stats: entries + overrun + read events +
 * snapshot events, docs/design/ring.md) must agree with what the writers say:
 * each thread stores the number of calls it began before each record and the
 * number it finished after it, so the records written by all of them, plus
 * the records the ring refused (dropped events, dropped_no_slot), lie between
 * the two sums; they are equal unless the SIGKILL came inside a call (a record
 * a killed writer was writing is in the ring if its critical section ended,
 * not at all otherwise: nothing half-written is ever counted or shown).
 *
 * Bounded: about 3 s of writing per phase. FDR_FLIGHT_SEED repeats a run.
 */
#include "readout.h"

#include <pthread.h>
#include <sys/mman.h>
#include <sys/resource.h>

#define seed fl_seed

#define PROCS 3
#define THREADS 2
#define NR_W (PROCS * THREADS)
#define WRITE_MS 2500

static char *fdr_cli;

struct shared {
	volatile int stop;
	volatile int ready[NR_W];
	volatile int cpu[NR_W]; /* the CPU each writer is pinned to, -1: none */
	uint64_t began[NR_W]; /* calls begun (seq + 1 before the call) */
	uint64_t done[NR_W]; /* calls finished */
};

static struct shared *sh;
static uint32_t wid_base; /* a phase's writer ids: wid_base + 0 .. NR_W - 1 */

static void *writer_thread(void *arg)
{
	uint32_t w = (uint32_t)(uintptr_t)arg;
	uint64_t seq;

	sh->cpu[w] = sc_pin((int)(w % 2));
	__atomic_store_n(&sh->ready[w], 1, __ATOMIC_RELEASE);
	for (seq = 0; !__atomic_load_n(&sh->stop, __ATOMIC_ACQUIRE); seq++) {
		__atomic_store_n(&sh->began[w], seq + 1, __ATOMIC_RELEASE);
		sc_write(seed, wid_base + w, seq);
		__atomic_store_n(&sh->done[w], seq + 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

/* A forked writer process: THREADS threads until sh->stop. Never returns. */
static void writer_process(int proc)
{
	pthread_t t[THREADS];
	int i;

	alarm(60); /* never outlive the test */
	setpriority(PRIO_PROCESS, 0, 5); /* the driver and the reader get the CPU when they want */
	for (i = 0; i < THREADS; i++)
		if (pthread_create(&t[i], NULL, writer_thread,
				   (void *)(uintptr_t)(proc * THREADS + i)))
			_exit(4);
	for (i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	_exit(0);
}

/* Run the fdr command (argv[0] included) with stdout and stderr into @out; its exit status or -1. */
static int run_fdr(char *const args[], const char *out)
{
	int fd = open(out, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600), ret;

	if (fd < 0)
		return -1;
	ret = sc_run(fdr_cli, args, fd, fd, 30000);
	close(fd);
	return ret;
}

/* The whole of a small file, NUL-terminated; free() it. */
static char *slurp(const char *path)
{
	FILE *f = fopen(path, "re");
	char *buf = NULL;
	size_t len = 0;

	if (!f)
		return NULL;
	if (getdelim(&buf, &len, '\0', f) < 0) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

/* ---- the consuming reader of the pipe phase ---------------------------------------------- */

/*
 * What the pipe phase read: per writer, records and the last seq (each writer's
 * records must come in order); per CPU, records and the losses reported. A
 * writer's gap is not checked against the losses counted just before it (as
 * readout.h does for one buffer): a loss in the snapshot buffer is reported with
 * that buffer's next record, which may come after records of the live buffer
 * written later (docs/design/ring.md); the per-CPU sums are checked instead.
 */
struct pread {
	uint64_t n[NR_W];
	int64_t last[NR_W];
	uint64_t read[FL_CPUS], lost[FL_CPUS];
	uint64_t records, lost_total, bad, disorder;
};

static void pipe_take(struct fdr_session *s, struct pread *pr, const struct fdr_record *rec)
{
	char why[256];
	uint32_t wid, cpu = rec->cpu < FL_CPUS ? rec->cpu : 0;
	uint64_t seq;

	pr->records++;
	pr->read[cpu]++;
	pr->lost[cpu] += rec->lost_before;
	pr->lost_total += rec->lost_before;
	if (sc_check(s, &fl_ev_id, seed, rec, &wid, &seq, why, sizeof(why)) ||
	    wid - wid_base >= NR_W) {
		if (pr->bad++ < 5)
			printf("FAIL: pipe: %s\n", why);
		return;
	}
	wid -= wid_base;
	if (pr->n[wid] && (int64_t)seq <= pr->last[wid]) {
		if (pr->disorder++ < 5)
			printf("FAIL: pipe: writer %u: seq %llu after %lld\n", wid,
			       (unsigned long long)seq, (long long)pr->last[wid]);
	}
	pr->n[wid]++;
	pr->last[wid] = (int64_t)seq;
}

struct piper {
	struct fdr_session *s;
	struct fdr_reader *r; /* opened before the writers are forked */
	struct pread *ro;
	volatile int drain; /* the writers are gone: read what is left, then end */
	int err;
	pthread_t th;
};

static void *pipe_main(void *arg)
{
	struct piper *p = arg;
	struct fdr_reader *r = p->r;
	struct fdr_record rec;
	int idle = 0, ret;

	for (;;) {
		ret = fdr_reader_next(r, &rec);
		if (ret < 0) {
			p->err = ret;
			break;
		}
		if (ret > 0) {
			idle = 0;
			pipe_take(p->s, p->ro, &rec);
			continue;
		}
		/* nothing now: when draining, 50 empty looks 1 ms apart end it */
		if (__atomic_load_n(&p->drain, __ATOMIC_ACQUIRE) && ++idle > 50)
			break;
		sc_sleep_us(1000);
	}
	fdr_reader_close(r);
	return NULL;
}

/* ---- one phase -------------------------------------------------------------------------------- */

/* SIGKILL a writer process and reap it: 1 if it died of that SIGKILL (else says how it ended). */
static int kill_reap(pid_t pid, const char *mode)
{
	char how[80];

	if (sc_kill_reap(pid, 20000, how, sizeof(how)))
		return 1;
	printf("%s: the killed writer: %s\n", mode, how);
	return 0;
}

/* Print each CPU's stats (after a failure: where the records are). */
static void show_stats(struct fdr_session *s, const char *mode)
{
	int cpu, nr = fdr_ring_nr_cpus(s, 0);

	for (cpu = 0; cpu < nr; cpu++) {
		struct fdr_cpu_stats st;

		if (fdr_ring_stats(s, 0, (uint32_t)cpu, &st) == 0)
			printf("%s: cpu%d: entries %llu overrun %llu read %llu snapshot %llu dropped "
			       "%llu\n",
			       mode, cpu, (unsigned long long)st.entries,
			       (unsigned long long)st.overrun, (unsigned long long)st.read,
			       (unsigned long long)st.snapshot, (unsigned long long)st.dropped);
	}
}

/* The ring's count of records written since the last clear, and the refused ones. */
static int ring_counts(struct fdr_session *s, uint64_t *written, uint64_t *refused, uint64_t *other)
{
	int cpu, nr = fdr_ring_nr_cpus(s, 0);

	*written = *refused = 0;
	if (other)
		*other = 0;
	for (cpu = 0; cpu < nr; cpu++) {
		struct fdr_cpu_stats st;
		int ret = fdr_ring_stats(s, 0, (uint32_t)cpu, &st);

		if (ret)
			return ret;
		*written += st.entries + st.overrun + st.read + st.snapshot;
		*refused += st.dropped;
		if (other)
			*other += st.overrun + st.read + st.snapshot;
	}
	*refused += __atomic_load_n(&fdr_session_control(s)->dropped_no_slot, __ATOMIC_RELAXED);
	return nr > 0 ? 0 : nr;
}

/* Count the lines of @text holding @needle. */
static uint64_t count_lines(const char *text, const char *needle)
{
	uint64_t n = 0;
	const char *p = text;

	while (p && *p) {
		const char *nl = strchr(p, '\n'), *hit = strstr(p, needle);

		if (hit && (!nl || hit < nl))
			n++;
		p = nl ? nl + 1 : NULL;
	}
	return n;
}

/* "fdr record: N events, M lost," from the recorder's output */
static int record_summary(const char *text, uint64_t *events, uint64_t *lost)
{
	const char *p = text ? strstr(text, "fdr record: ") : NULL;
	unsigned long long e, l;

	for (; p; p = strstr(p + 1, "fdr record: "))
		if (sscanf(p, "fdr record: %llu events, %llu lost,", &e, &l) == 2) {
			*events = e;
			*lost = l;
			return 0;
		}
	return -1;
}

static void run_phase(struct fdr_session *s, const char *mode, uint32_t base)
{
	char dir[PATH_MAX], dat[PATH_MAX + 16], log[PATH_MAX + 16], out[PATH_MAX + 16];
	char a_s[] = "-s", a_t[] = "t", a_rec[] = "record", a_e[] = "-e", a_ev[] = "stress:rec";
	char a_o[] = "-o", a_snap[] = "snapshot", a_show[] = "show";
	char *rec_args[] = { fdr_cli, a_s, a_t, a_rec, a_e, a_ev, a_o, dat, NULL };
	char *snap_args[] = { fdr_cli, a_s, a_t, a_snap, NULL };
	char *show_args[] = { fdr_cli, a_s, a_t, a_show, NULL };
	struct piper p = { .s = s };
	const struct fdr_abi_ring *h;
	void *rbase;
	size_t rsize;
	pid_t pids[PROCS], rec_pid = -1;
	uint64_t t0, t_end, snaps0, snaps, lo = 0, hi = 0, written, refused, other, k;
	int i, c, ret, stopped = 0, continued = 0, killed = 0, cli_snap = 0;

	printf("%s: %d processes x %d threads for %d ms\n", mode, PROCS, THREADS, WRITE_MS);
	snprintf(dir, sizeof(dir), "%s", getenv("SC_TEST_ROOT") ? getenv("SC_TEST_ROOT") : "/tmp");
	snprintf(dat, sizeof(dat), "%s/rec.dat", dir);
	snprintf(log, sizeof(log), "%s/record.log", dir);
	snprintf(out, sizeof(out), "%s/fdr.out", dir);
	memset(sh, 0, sizeof(*sh));
	wid_base = base;
	if (!sc_ok(sc_ctl_write(s, "trace", O_TRUNC, "") >= 0, "%s: clear the buffers", mode))
		return;
	if (!sc_ok(fdr_session_ring(s, 0, &rbase, &rsize) == 0, "%s: map the ring", mode))
		return;
	h = rbase;
	snaps0 = __atomic_load_n(&h->snap_count, __ATOMIC_RELAXED);

	if (strcmp(mode, "pipe") == 0) {
		/* open now; its thread starts after the fork (no threads before a fork) */
		p.ro = calloc(1, sizeof(*p.ro));
		if (!sc_ok(p.ro != NULL, "pipe: calloc"))
			return;
		ret = fdr_reader_open(s, 0, -1, FDR_READ_CONSUME, &p.r);
		if (!sc_ok(ret == 0, "pipe: open the reader: %s", strerror(-ret)))
			return;
	} else if (strcmp(mode, "record") == 0) {
		int fd = open(log, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

		fflush(NULL);
		rec_pid = fork();
		if (rec_pid == 0) {
			dup2(fd, STDOUT_FILENO);
			dup2(fd, STDERR_FILENO);
			execv(fdr_cli, rec_args);
			_exit(127);
		}
		close(fd);
		/* until it says it records (its readers are open), at most 10 s */
		for (i = 0; i < 1000; i++) {
			char *txt = slurp(log);
			int up = txt && strstr(txt, "recording");

			free(txt);
			if (up)
				break;
			sc_sleep_us(10000);
		}
		sc_sleep_us(50000);
	}

	for (i = 0; i < PROCS; i++) {
		fflush(NULL);
		pids[i] = fork();
		if (pids[i] == 0)
			writer_process(i);
	}
	for (i = 0; i < NR_W; i++) {
		uint64_t end = sc_now_ns() + 10000000000ull;

		while (!__atomic_load_n(&sh->ready[i], __ATOMIC_ACQUIRE) && sc_now_ns() < end)
			sc_sleep_us(1000);
		sc_ok(sh->ready[i], "%s: writer %d did not start", mode, i);
	}
	if (p.r &&
	    !sc_ok(pthread_create(&p.th, NULL, pipe_main, &p) == 0, "pipe: start the reader")) {
		fdr_reader_close(p.r);
		p.r = NULL;
	}

	/* snapshots every 10 ms; process 1 stopped for 300 ms; process 2 killed */
	t0 = sc_now_ns();
	t_end = t0 + WRITE_MS * 1000000ull;
	for (k = 0; sc_now_ns() < t_end; k++) {
		uint64_t ms = (sc_now_ns() - t0) / 1000000;

		sc_ctl_write(s, "snapshot", 0, "1"); /* EBUSY when one is in progress: fine */
		if (!stopped && ms >= 500) {
			stopped = kill(pids[1], SIGSTOP) == 0;
			sc_ok(stopped, "%s: SIGSTOP the writer", mode);
		}
		if (stopped && !continued && ms >= 800)
			continued = kill(pids[1], SIGCONT) == 0;
		if (!cli_snap && ms >= 1000) {
			cli_snap = 1;
			sc_ok(run_fdr(snap_args, out) == 0, "%s: fdr snapshot failed", mode);
		}
		if (!killed && ms >= 1200 + (seed % 300)) {
			killed = 1;
			sc_ok(kill_reap(pids[2], mode), "%s: the writer did not die of our SIGKILL",
			      mode);
			pids[2] = -1;
		}
		sc_sleep_us(10000);
	}
	if (stopped && !continued)
		kill(pids[1], SIGCONT);
	__atomic_store_n(&sh->stop, 1, __ATOMIC_RELEASE);
	for (i = 0; i < PROCS; i++)
		if (pids[i] > 0)
			sc_exited_ok(pids[i], 20000, "a writer");
	for (i = 0; i < NR_W; i++) {
		lo += __atomic_load_n(&sh->done[i], __ATOMIC_ACQUIRE);
		hi += __atomic_load_n(&sh->began[i], __ATOMIC_ACQUIRE);
	}
	snaps = __atomic_load_n(&h->snap_count, __ATOMIC_RELAXED) - snaps0;

	if (p.r) {
		__atomic_store_n(&p.drain, 1, __ATOMIC_RELEASE);
		pthread_join(p.th, NULL);
	} else if (strcmp(mode, "record") == 0) {
		sc_sleep_us(200000);
		kill(rec_pid, SIGINT);
		sc_exited_ok(rec_pid, 30000, "record: fdr record after SIGINT");
	}

	ret = ring_counts(s, &written, &refused, &other);
	if (!sc_ok(ret == 0, "%s: per_cpu stats: %s", mode, strerror(-ret)))
		return;
	printf("%s: %llu written (the writers: %llu to %llu), %llu refused, %llu snapshots taken\n",
	       mode, (unsigned long long)written, (unsigned long long)lo, (unsigned long long)hi,
	       (unsigned long long)refused, (unsigned long long)snaps);
	sc_ok(written + refused >= lo && written + refused <= hi,
	      "%s: the ring counts %llu written + %llu refused, the writers %llu to %llu", mode,
	      (unsigned long long)written, (unsigned long long)refused, (unsigned long long)lo,
	      (unsigned long long)hi);
	sc_ok(snaps >= 10, "%s: only %llu snapshots taken", mode, (unsigned long long)snaps);

	if (strcmp(mode, "pipe") == 0) {
		sc_ok(p.err == 0, "pipe: the reader failed: %s", strerror(-p.err));
		printf("pipe: %llu read, %llu lost\n", (unsigned long long)p.ro->records,
		       (unsigned long long)p.ro->lost_total);
		if (p.ro->records + p.ro->lost_total != written)
			show_stats(s, mode);
		sc_ok(p.ro->records + p.ro->lost_total == written,
		      "pipe: %llu read + %llu lost != %llu written",
		      (unsigned long long)p.ro->records, (unsigned long long)p.ro->lost_total,
		      (unsigned long long)written);
		sc_ok(p.ro->bad == 0 && p.ro->disorder == 0,
		      "pipe: %llu bad records, %llu out of order", (unsigned long long)p.ro->bad,
		      (unsigned long long)p.ro->disorder);
		/* per CPU: the writers pinned there wrote what was read and lost there */
		for (c = 0; c < 2; c++) {
			int cpu = -1;
			uint64_t wlo = 0, whi = 0;

			for (i = 0; i < NR_W; i++) {
				if (i % 2 != c)
					continue;
				wlo += sh->done[i];
				whi += sh->began[i];
				cpu = sh->cpu[i];
			}
			if (cpu < 0 || cpu >= FL_CPUS)
				continue;
			sc_ok(p.ro->read[cpu] + p.ro->lost[cpu] >= wlo &&
				      p.ro->read[cpu] + p.ro->lost[cpu] <= whi,
			      "pipe: CPU %d: %llu read + %llu lost, its writers wrote %llu to %llu",
			      cpu, (unsigned long long)p.ro->read[cpu],
			      (unsigned long long)p.ro->lost[cpu], (unsigned long long)wlo,
			      (unsigned long long)whi);
		}
		free(p.ro);
	} else if (strcmp(mode, "record") == 0) {
		char *txt = slurp(log);
		uint64_t ev = 0, lost = 0;

		if (sc_ok(record_summary(txt, &ev, &lost) == 0, "record: no summary line in:\n%s",
			  txt ? txt : "")) {
			printf("record: %llu events, %llu lost\n", (unsigned long long)ev,
			       (unsigned long long)lost);
			if (ev + lost != written + refused)
				show_stats(s, mode);
			sc_ok(ev + lost == written + refused,
			      "record: %llu events + %llu lost != %llu written + %llu refused",
			      (unsigned long long)ev, (unsigned long long)lost,
			      (unsigned long long)written, (unsigned long long)refused);
		}
		free(txt);
	} else {
		char *txt;
		uint64_t shown, w2, r2, o2;

		ret = run_fdr(show_args, out);
		txt = slurp(out);
		shown = count_lines(txt, " rec: ");
		free(txt);
		sc_ok(ret == 0, "show: fdr show failed");
		/* the stats again: nothing changes while nobody writes */
		if (sc_ok(ring_counts(s, &w2, &r2, &o2) == 0 && w2 == written && o2 == other,
			  "show: the stats changed while nothing was written"))
			printf("show: %llu shown, %llu overrun + read + snapshot\n",
			       (unsigned long long)shown, (unsigned long long)other);
		sc_ok(shown + other == written,
		      "show: %llu shown + %llu overrun, read and snapshot events != %llu written",
		      (unsigned long long)shown, (unsigned long long)other,
		      (unsigned long long)written);
	}
}

int main(int argc, char **argv)
{
	struct fdr_session_opts o = { .buffer_size_kb = 256, .subbuf_size = 4096, .overwrite = 1 };
	struct fdr_session *s = NULL;
	int ret;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc != 2) {
		fprintf(stderr, "usage: %s FDR\n", argv[0]);
		sc_cleanup_root();
		return 2;
	}
	fdr_cli = argv[1];
	alarm(100);
	seed = sc_env_u64("FDR_FLIGHT_SEED", sc_mix(sc_now_ns() ^ (uint64_t)getpid()));
	printf("flight accounting: seed %#llx (FDR_FLIGHT_SEED to repeat)\n",
	       (unsigned long long)seed);
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (!sc_ok(sh != MAP_FAILED, "mmap: %s", strerror(errno)))
		goto out;
	ret = sc_session_create(&o, &s);
	if (!sc_ok(ret == 0, "create the session: %s", strerror(-ret)))
		goto out;
	ret = sc_wait_enabled(10000);
	if (!sc_ok(ret == 0, "stress:rec never got enabled"))
		goto out;
	ret = fl_snapshot_alloc(s);
	if (!sc_ok(ret == 0, "allocate the snapshot buffers: %s", strerror(-ret)))
		goto out;
	/* a trigger too: each writer takes snapshots itself, in its critical moments */
	if (!sc_ok(sc_ctl_write(s, "events/stress/rec/trigger", O_TRUNC,
				"snapshot if seq == 20000 || seq == 60000 || seq == 150000") >= 0,
		   "set the snapshot trigger"))
		goto out;
	run_phase(s, "pipe", 0);
	run_phase(s, "record", 100);
	run_phase(s, "show", 200);
out:
	if (s) {
		fdr_session_destroy(s);
		fdr_session_close(s);
	}
	sc_cleanup_root();
	return sc_summary();
}
