// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * crash.c - writers killed or stopped anywhere: readers must never hang, must
 * read a consistent stream, and must get every record a surviving writer wrote.
 *
 *   fdr-crash kill TPWRITER
 *	Forks writer processes that write stress:rec (selfcheck.h) at full speed,
 *	from one or two threads, some pinned to one CPU, some with a SIGALRM timer
 *	whose handler writes nested records, and SIGKILLs each 0-2 ms after it
 *	started writing (FDR_CRASH_KILLS times, default 300). Meanwhile a consuming
 *	reader and a peeker (non-consuming readers, stats, raw pages) check every
 *	record; half way the consuming reader is SIGKILLed too and a new one must
 *	take its CPU slots over. Afterwards a last writer writes 1000 records slowly
 *	into a ring big enough for them: a non-consuming and then a consuming reader
 *	must return every one of them, with nothing reported lost.
 *
 *   fdr-crash testpoint NAME TPWRITER
 *	For several N, runs TPWRITER (linked with fdr_testpoints) pinned to one CPU
 *	with FDR_FAULT=NAME:N, so it SIGKILLs itself the Nth time the ring writer
 *	passes test point NAME (reserve, commit, switch-pad, switch-header). Checks
 *	it died that way, that its records up to there read back whole and in order
 *	(for commit:N exactly N of them), that the stats agree, and that the ring is
 *	still fully usable: a new writer on the same CPU gets all its records read.
 *
 *   fdr-crash stop TPWRITER
 *	Stops a writer inside the ring writer (FDR_FAULT=NAME:N:stop), SIGKILLs it
 *	there and checks the stream a consuming reader gets and that the CPU is
 *	still usable. (That other writers and readers get through while it is
 *	stopped, and that it goes on when resumed: kill.c's stop, crash/stop-writers.)
 *
 * FDR_CRASH_SEED repeats a run (the seed is printed).
 */
#include "selfcheck.h"

#include <pthread.h>
#include <sys/time.h>

#define NR_WID 65536u
#define SURVIVOR_WID 0xfff0u
#define SURVIVOR_COUNT 1000u

static uint64_t seed;
static char *tpwriter;

/* ---- checking what readers return ------------------------------------------------------ */

struct chk {
	const char *who;
	uint32_t id; /* stress:rec's id, once known */
	int shown;
	uint64_t records, bad, disorder, lost_before;
	int64_t last[NR_WID]; /* last seq read per writer id, -1 if none */
	uint64_t nread[NR_WID];
};

static struct chk *chk_new(const char *who)
{
	struct chk *c = calloc(1, sizeof(*c));
	uint32_t i;

	if (!c) {
		perror("calloc");
		exit(2);
	}
	c->who = who;
	for (i = 0; i < NR_WID; i++)
		c->last[i] = -1;
	return c;
}

static void chk_record(struct chk *c, struct fdr_session *s, const struct fdr_record *rec)
{
	char why[256];
	uint32_t wid;
	uint64_t seq;

	c->records++;
	c->lost_before += rec->lost_before;
	if (sc_check(s, &c->id, seed, rec, &wid, &seq, why, sizeof(why))) {
		c->bad++;
		sc_report(&c->shown, c->who, why);
		return;
	}
	if ((wid & ~SC_SIG_BIT) >= NR_WID) {
		c->bad++;
		snprintf(why, sizeof(why), "unknown writer id %#x", wid);
		sc_report(&c->shown, c->who, why);
		return;
	}
	wid &= ~SC_SIG_BIT; /* crash writers use distinct ids in their handlers */
	if ((int64_t)seq <= c->last[wid]) {
		c->disorder++;
		snprintf(why, sizeof(why), "writer %#x: seq %llu after %lld", wid,
			 (unsigned long long)seq, (long long)c->last[wid]);
		sc_report(&c->shown, c->who, why);
		return;
	}
	c->last[wid] = (int64_t)seq;
	c->nread[wid]++;
}

/* Did we read seq 0..n-1 of @wid, all of them, in order? */
static int chk_complete(const struct chk *c, uint32_t wid, uint64_t n)
{
	return c->nread[wid] == n && c->last[wid] == (int64_t)n - 1;
}

/* Did we read seq 0..m-1 of @wid for some m (returned), no gap? -1 if not. */
static int64_t chk_prefix(const struct chk *c, uint32_t wid)
{
	return c->nread[wid] == (uint64_t)(c->last[wid] + 1) ? (int64_t)c->nread[wid] : -1;
}

static int chk_clean(const struct chk *c)
{
	return sc_ok(c->bad == 0 && c->disorder == 0, "%s: %llu invalid records, %llu out of order",
		     c->who, (unsigned long long)c->bad, (unsigned long long)c->disorder);
}

/* Read everything there is now; returns records read or a negative errno. */
static long read_now(struct fdr_session *s, int cpu, unsigned flags, struct chk *c)
{
	struct fdr_reader *r;
	struct fdr_record rec;
	long n = 0;
	int ret = fdr_reader_open(s, 0, cpu, flags, &r);

	if (ret)
		return ret;
	while ((ret = fdr_reader_next(r, &rec)) > 0) {
		chk_record(c, s, &rec);
		n++;
	}
	fdr_reader_close(r);
	return ret < 0 ? ret : n;
}

/* Sum of the per-CPU stats of instance 0. */
static int stats_total(struct fdr_session *s, struct fdr_cpu_stats *sum)
{
	int nr = fdr_ring_nr_cpus(s, 0), cpu, ret;

	memset(sum, 0, sizeof(*sum));
	for (cpu = 0; cpu < nr; cpu++) {
		struct fdr_cpu_stats st;

		ret = fdr_ring_stats(s, 0, (uint32_t)cpu, &st);
		if (ret)
			return ret;
		sum->entries += st.entries;
		sum->overrun += st.overrun;
		sum->dropped += st.dropped;
		sum->read += st.read;
		sum->written += st.written;
		if (st.written != st.entries + st.overrun)
			return -EPROTO;
	}
	return 0;
}

/* ---- child roles ------------------------------------------------------------------------ */

/* --role=creader SEED DONE_FD READY_FD: a consuming reader until DONE_FD closes, then drain */
static int run_creader(char **argv)
{
	int done_fd = atoi(argv[1]), ready_fd = atoi(argv[2]), done = 0, empty = 0, ret;
	struct chk *c = chk_new("creader");
	struct fdr_session *s = NULL;
	struct fdr_reader *r = NULL;
	struct fdr_record rec;

	seed = strtoull(argv[0], NULL, 0);
	alarm(300);
	ret = sc_open_session(&s);
	if (!ret)
		ret = fdr_reader_open(s, 0, -1, FDR_READ_CONSUME, &r);
	if (ret || write(ready_fd, "r", 1) != 1) {
		printf("creader: cannot open: %s\n", strerror(-ret));
		fdr_reader_close(r);
		fdr_session_close(s);
		free(c);
		return 2;
	}
	close(ready_fd);
	for (;;) {
		ret = fdr_reader_next(r, &rec);
		if (ret < 0) {
			printf("creader: fdr_reader_next: %s\n", strerror(-ret));
			c->bad++;
			break;
		}
		if (ret > 0) {
			empty = 0;
			chk_record(c, s, &rec);
			continue;
		}
		if (done && ++empty >= 2)
			break;
		if (!done && sc_done_now(done_fd))
			done = 1;
		if (!done)
			fdr_reader_wait(r, 5);
	}
	fdr_reader_close(r);
	fdr_session_close(s);
	printf("creader: %llu records, %llu lost before them, %llu bad, %llu out of order\n",
	       (unsigned long long)c->records, (unsigned long long)c->lost_before,
	       (unsigned long long)c->bad, (unsigned long long)c->disorder);
	ret = c->bad || c->disorder;
	free(c);
	return ret;
}

/* ---- (a) writers killed at random --------------------------------------------------------- */

static pid_t spawn_creader(int done_fd)
{
	char a_done[16], a_ready[16], a_seed[32], role[] = "--role=creader", self[] = "fdr-crash";
	char *args[] = { self, role, a_seed, a_done, a_ready, NULL };
	int ready[2], keep[2];
	struct pollfd p;
	pid_t pid;
	char c;

	if (pipe2(ready, O_CLOEXEC))
		return -errno;
	snprintf(a_done, sizeof(a_done), "%d", done_fd);
	snprintf(a_ready, sizeof(a_ready), "%d", ready[1]);
	snprintf(a_seed, sizeof(a_seed), "%#llx", (unsigned long long)seed);
	keep[0] = done_fd;
	keep[1] = ready[1];
	pid = sc_spawn(args, NULL, keep, 2);
	close(ready[1]);
	p.fd = ready[0];
	p.events = POLLIN;
	if (pid > 0 && (poll(&p, 1, 20000) != 1 || read(ready[0], &c, 1) != 1)) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		pid = -EIO;
	}
	close(ready[0]);
	return pid;
}

static pid_t spawn_peeker(int done_fd)
{
	char a_done[16], a_seed[32], role[] = "--role=peeker", self[] = "fdr-crash";
	char *args[] = { self, role, a_seed, a_done, NULL };

	snprintf(a_done, sizeof(a_done), "%d", done_fd);
	snprintf(a_seed, sizeof(a_seed), "%#llx", (unsigned long long)seed);
	return sc_spawn(args, NULL, &done_fd, 1);
}

static int run_kill(void)
{
	struct fdr_session_opts o = { .buffer_size_kb = 256, .subbuf_size = 4096, .overwrite = 1 };
	uint32_t kills = (uint32_t)sc_env_u64("FDR_CRASH_KILLS", 300), i, bad_deaths = 0;
	uint64_t rng = seed, t0 = sc_now_ns();
	struct fdr_session *s = NULL;
	struct fdr_cpu_stats sum;
	struct chk *c;
	pid_t reader, peeker, pid;
	int done[2], st, ret;
	char buf[80];

	printf("kill: %u writers SIGKILLed 0-2 ms after they start writing\n", kills);
	ret = sc_session_create(&o, &s);
	if (!sc_ok(ret == 0, "create the session: %s", strerror(-ret)))
		return 1;
	ret = sc_wait_enabled(10000);
	if (!sc_ok(ret == 0, "stress:rec never got enabled here"))
		goto out;
	if (pipe2(done, O_CLOEXEC))
		goto out;
	reader = spawn_creader(done[0]);
	peeker = spawn_peeker(done[0]);
	sc_ok(reader > 0, "the consuming reader did not start");

	for (i = 0; i < kills; i++) {
		int ready[2], variant;
		uint64_t delay_us;
		char ch;

		rng = sc_mix(rng);
		variant = (int)(rng % 4);
		delay_us = (rng >> 8) % 2001;
		if (i == kills / 2 && reader > 0) {
			/* the consuming reader dies too; a new one must get its slots */
			kill(reader, SIGKILL);
			waitpid(reader, NULL, 0);
			reader = spawn_creader(done[0]);
			sc_ok(reader > 0,
			      "a new consuming reader could not take over a dead one's slots");
		}
		if (pipe2(ready, O_CLOEXEC))
			break;
		fflush(NULL);
		pid = fork();
		if (pid == 0) {
			close(ready[0]);
			sc_writer_child(seed, i * 4, variant, ready[1], 0);
		}
		close(ready[1]);
		if (pid < 0 || read(ready[0], &ch, 1) != 1) {
			sc_ok(0, "writer %u did not start", i);
			close(ready[0]);
			if (pid > 0) {
				kill(pid, SIGKILL);
				waitpid(pid, NULL, 0);
			}
			continue;
		}
		close(ready[0]);
		sc_sleep_us(delay_us);
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
		if (!(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL) && bad_deaths++ < 5)
			sc_ok(0, "writer %u (variant %d) did not die by our SIGKILL: %s", i,
			      variant, sc_status_str(st, buf, sizeof(buf)));
	}
	sc_ok(bad_deaths == 0, "%u writers died of something else than our SIGKILL", bad_deaths);
	printf("kill: %u kills in %.2f s\n", kills, (double)(sc_now_ns() - t0) / 1e9);
	close(done[1]);
	sc_exited_ok(reader, 60000, "consuming reader");
	sc_exited_ok(peeker, 60000, "peeker");

	/* a survivor: a slow writer into a ring that can hold all it writes */
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		uint64_t seq;

		alarm(30);
		for (seq = 0; seq < SURVIVOR_COUNT; seq++) {
			sc_write(seed, SURVIVOR_WID, seq);
			sc_sleep_us(20);
		}
		_exit(0);
	}
	sc_exited_ok(pid, 30000, "the surviving writer");

	/* a non-consuming reader, in a child so that a hang is caught */
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		c = chk_new("trace reader");
		alarm(20);
		sc_failed = 0;
		if (!sc_ok(read_now(s, -1, 0, c) >= 0, "non-consuming read failed"))
			_exit(1);
		chk_clean(c);
		sc_ok(chk_complete(c, SURVIVOR_WID, SURVIVOR_COUNT),
		      "non-consuming read: got %llu of the survivor's %u records (last seq %lld)",
		      (unsigned long long)c->nread[SURVIVOR_WID], SURVIVOR_COUNT,
		      (long long)c->last[SURVIVOR_WID]);
		_exit(sc_failed ? 1 : 0);
	}
	sc_exited_ok(pid, 30000, "non-consuming reader");

	/* and a consuming one, here (the alarm catches a hang) */
	alarm(20);
	c = chk_new("trace_pipe reader");
	ret = (int)read_now(s, -1, FDR_READ_CONSUME, c);
	alarm(0);
	sc_ok(ret >= 0, "consuming read: %s", strerror(-ret));
	chk_clean(c);
	sc_ok(chk_complete(c, SURVIVOR_WID, SURVIVOR_COUNT),
	      "consuming read: got %llu of the survivor's %u records (last seq %lld)",
	      (unsigned long long)c->nread[SURVIVOR_WID], SURVIVOR_COUNT,
	      (long long)c->last[SURVIVOR_WID]);
	sc_ok(c->lost_before == 0, "consuming read: %llu records reported lost",
	      (unsigned long long)c->lost_before);
	free(c);
	ret = stats_total(s, &sum);
	sc_ok(ret == 0, "stats: %s", strerror(-ret));
	sc_ok(sum.entries == 0, "stats: %llu entries left after a consuming read",
	      (unsigned long long)sum.entries);
out:
	fdr_session_destroy(s);
	fdr_session_close(s);
	return 0;
}

/* ---- (b) named test points ------------------------------------------------------------------ */

/* A fresh writer on the same CPU writes @n records: all must come back. */
static void check_usable(struct fdr_session *s, uint32_t wid, const char *after)
{
	const uint64_t n = 500;
	struct fdr_cpu_stats sum;
	struct chk *c = chk_new("reader");
	char who[96];
	int ret;

	snprintf(who, sizeof(who), "a writer after %s", after);
	sc_exited_ok(sc_spawn_tpwriter(tpwriter, seed, NULL, wid, n, 0, 0, -1, -1), 30000, who);
	alarm(20);
	ret = (int)read_now(s, -1, FDR_READ_CONSUME, c);
	alarm(0);
	sc_ok(ret >= 0, "after %s: read: %s", after, strerror(-ret));
	chk_clean(c);
	sc_ok(chk_complete(c, wid, n),
	      "after %s: a new writer's %llu records: read %llu, last %lld", after,
	      (unsigned long long)n, (unsigned long long)c->nread[wid], (long long)c->last[wid]);
	sc_ok(c->lost_before == 0, "after %s: %llu records reported lost", after,
	      (unsigned long long)c->lost_before);
	ret = stats_total(s, &sum);
	sc_ok(ret == 0 && sum.entries == 0, "after %s: stats: %s, %llu entries left", after,
	      strerror(-ret), (unsigned long long)sum.entries);
	free(c);
}

static int run_testpoint(const char *name)
{
	static const uint64_t n_rw[] = { 1, 2, 3, 10, 100, 1000 };
	static const uint64_t n_switch[] = { 1, 2, 3, 10 };
	struct fdr_session_opts o = { .buffer_size_kb = 1024, .subbuf_size = 4096, .overwrite = 1 };
	int is_switch = strncmp(name, "switch-", 7) == 0;
	const uint64_t *ns = is_switch ? n_switch : n_rw;
	size_t nr_ns = is_switch ? 4 : 6, j;
	struct fdr_session *s = NULL;
	int ret;

	if (strcmp(name, "reserve") && strcmp(name, "commit") && strcmp(name, "switch-pad") &&
	    strcmp(name, "switch-header")) {
		fprintf(stderr, "unknown test point '%s'\n", name);
		return 2;
	}
	ret = sc_session_create(&o, &s);
	if (!sc_ok(ret == 0, "create the session: %s", strerror(-ret)))
		return 1;
	for (j = 0; j < nr_ns; j++) {
		uint64_t n = ns[j];
		uint32_t wid = 0x100 + (uint32_t)j;
		struct chk *c1 = chk_new("trace reader"), *c2 = chk_new("trace_pipe reader");
		struct fdr_cpu_stats sum;
		char fault[64], buf[80];
		int64_t m;
		pid_t pid;
		int st;

		snprintf(fault, sizeof(fault), "%s:%llu", name, (unsigned long long)n);
		pid = sc_spawn_tpwriter(tpwriter, seed, fault, wid, 200000, 0, 0, -1, -1);
		ret = pid > 0 ? sc_wait(pid, &st, 30000, 0) : (int)pid;
		if (ret == -ETIMEDOUT) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
		}
		if (!sc_ok(ret == 0 && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL,
			   "FDR_FAULT=%s: the writer did not die at the test point: %s", fault,
			   ret ? strerror(-ret) : sc_status_str(st, buf, sizeof(buf))))
			continue;

		/* what it committed: whole, in order, from seq 0 */
		alarm(20);
		ret = (int)read_now(s, -1, 0, c1);
		alarm(0);
		sc_ok(ret >= 0, "%s: non-consuming read: %s", fault, strerror(-ret));
		chk_clean(c1);
		m = chk_prefix(c1, wid);
		sc_ok(m >= 0,
		      "%s: the killed writer's records have gaps (read %llu, last seq %lld)", fault,
		      (unsigned long long)c1->nread[wid], (long long)c1->last[wid]);
		if (strcmp(name, "commit") == 0)
			sc_ok(m == (int64_t)n, "%s: %lld records read, %llu were committed", fault,
			      (long long)m, (unsigned long long)n);
		else if (strcmp(name, "reserve") == 0)
			sc_ok(m <= (int64_t)n - 1,
			      "%s: %lld records read, at most %llu were committed", fault,
			      (long long)m, (unsigned long long)n - 1);
		else
			sc_ok(m >= 1, "%s: nothing read before the sub-buffer switch", fault);
		ret = stats_total(s, &sum);
		sc_ok(ret == 0 && sum.entries == c1->records && sum.overrun == 0,
		      "%s: stats (%s): entries %llu overrun %llu, but %llu records read", fault,
		      strerror(-ret), (unsigned long long)sum.entries,
		      (unsigned long long)sum.overrun, (unsigned long long)c1->records);

		alarm(20);
		ret = (int)read_now(s, -1, FDR_READ_CONSUME, c2);
		alarm(0);
		sc_ok(ret >= 0, "%s: consuming read: %s", fault, strerror(-ret));
		chk_clean(c2);
		sc_ok(c2->records == c1->records && chk_prefix(c2, wid) == m &&
			      c2->lost_before == 0,
		      "%s: consuming read: %llu records (%llu lost), non-consuming read %llu",
		      fault, (unsigned long long)c2->records, (unsigned long long)c2->lost_before,
		      (unsigned long long)c1->records);
		printf("%s: the writer died after %lld records\n", fault, (long long)m);
		check_usable(s, 0x200 + (uint32_t)j, fault);
		free(c1);
		free(c2);
	}
	fdr_session_destroy(s);
	fdr_session_close(s);
	return 0;
}

/* ---- (c) writers stopped at a test point -------------------------------------------------- */

/*
 * A writer stopped inside the ring writer (@fault: NAME:N:stop), then SIGKILLed
 * there: what a consuming reader gets is whole and in order, its records a run
 * from seq 0, nothing counted lost; run_stop() then checks the CPU is usable.
 * That another writer on the stopped one's CPU, and a reader, get through while
 * it is stopped (200 records within 100 ms) is checked once, by crash/stop-writers
 * (kill.c, stop_at_point(), at the same test points), which resumes it instead.
 */
static void stop_one(struct fdr_session *s, const char *fault, uint32_t j)
{
	uint32_t wid_s = 0x300 + j;
	struct chk *c = chk_new("trace_pipe reader");
	struct fdr_reader *r = NULL;
	struct fdr_record rec;
	char buf[80] = "";
	int st, ret;
	pid_t stopped;

	ret = fdr_reader_open(s, 0, -1, FDR_READ_CONSUME, &r);
	if (!sc_ok(ret == 0, "%s: open a consuming reader: %s", fault, strerror(-ret)))
		goto out;
	stopped = sc_spawn_tpwriter(tpwriter, seed, fault, wid_s, 200000, 0, 0, -1, -1);
	ret = stopped > 0 ? sc_wait(stopped, &st, 20000, WUNTRACED) : (int)stopped;
	if (!sc_ok(ret == 0 && WIFSTOPPED(st) && WSTOPSIG(st) == SIGSTOP,
		   "%s: the writer did not stop at the test point: %s", fault,
		   ret ? strerror(-ret) : sc_status_str(st, buf, sizeof(buf)))) {
		sc_kill_reap(stopped, 5000, NULL, 0);
		goto out;
	}
	sc_ok(sc_kill_reap(stopped, 20000, buf, sizeof(buf)), "%s: stopped writer: %s", fault, buf);
	/* the stream: whole and in order, nothing lost */
	alarm(20);
	while ((ret = fdr_reader_next(r, &rec)) > 0)
		chk_record(c, s, &rec);
	alarm(0);
	chk_clean(c);
	sc_ok(chk_prefix(c, wid_s) >= 0 && c->lost_before == 0,
	      "%s: stopped writer: %llu records (last %lld), %llu lost", fault,
	      (unsigned long long)c->nread[wid_s], (long long)c->last[wid_s],
	      (unsigned long long)c->lost_before);
out:
	fdr_reader_close(r);
	free(c);
}

static int run_stop(void)
{
	static const char *const faults[] = { "reserve:5:stop", "commit:5:stop",
					      "switch-pad:1:stop", "switch-header:1:stop",
					      "switch-header:3:stop" };
	struct fdr_session_opts o = { .buffer_size_kb = 1024, .subbuf_size = 4096, .overwrite = 1 };
	struct fdr_session *s = NULL;
	uint32_t j;
	int ret = sc_session_create(&o, &s);

	if (!sc_ok(ret == 0, "create the session: %s", strerror(-ret)))
		return 1;
	for (j = 0; j < sizeof(faults) / sizeof(faults[0]); j++) {
		stop_one(s, faults[j], j);
		check_usable(s, 0x500 + j, faults[j]);
	}
	fdr_session_destroy(s);
	fdr_session_close(s);
	return 0;
}

int main(int argc, char **argv)
{
	struct sigaction sa;

	setvbuf(stdout, NULL, _IOLBF, 0);
	seed = sc_env_u64("FDR_CRASH_SEED", sc_mix(sc_now_ns() ^ (uint64_t)getpid()));
	if (argc == 5 && strcmp(argv[1], "--role=creader") == 0)
		return run_creader(argv + 2);
	if (argc == 4 && strcmp(argv[1], "--role=peeker") == 0)
		return sc_run_peeker(strtoull(argv[2], NULL, 0), atoi(argv[3]));

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = sc_on_alarm;
	sigaction(SIGALRM, &sa, NULL);
	printf("crash: seed %#llx (FDR_CRASH_SEED to repeat)\n", (unsigned long long)seed);
	if (argc == 3 && strcmp(argv[1], "kill") == 0) {
		tpwriter = argv[2];
		run_kill();
	} else if (argc == 4 && strcmp(argv[1], "testpoint") == 0) {
		tpwriter = argv[3];
		run_testpoint(argv[2]);
	} else if (argc == 3 && strcmp(argv[1], "stop") == 0) {
		tpwriter = argv[2];
		run_stop();
	} else {
		fprintf(stderr, "usage: %s kill|stop TPWRITER | testpoint NAME TPWRITER\n",
			argv[0]);
		sc_cleanup_root();
		return 2;
	}
	sc_cleanup_root();
	return sc_summary();
}
