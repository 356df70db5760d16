// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * kill.c - crash-proof sessions (issue 3, "Crash-proof sessions"): every process
 * that uses a session may die at any point; nothing committed is lost, readers
 * and snapshots go on within 100 ms, and nobody hangs (every child is waited for
 * with a deadline, and the driver has an alarm).
 *
 *   fdr-crash-kill creator FDR TPWRITER
 *	SIGKILL the process that created the session right after it did: new
 *	processes (a writer, the fdr command) still trace, snapshot and read. Then
 *	SIGKILL creators at random points of fdr_session_create(): the next
 *	create must succeed and give a working session.
 *   fdr-crash-kill lock FDR
 *	SIGKILL a process holding the control lock: the next fdr_session_lock()
 *	succeeds at once (within its 2 s). Then SIGKILL, at random points, a
 *	process that changes the control tree as fast as it can (instances,
 *	enables, filters, triggers, open files): the tree stays usable, every
 *	instance can be removed, and records still flow.
 *   fdr-crash-kill writers TPWRITER
 *	SIGKILL writers at random points while they write at full speed
 *	(FDR_FLIGHT_KILLS, default 60), taking a snapshot after each death: each
 *	dead writer's records are a gapless run from seq 0, a slow survivor loses
 *	nothing, no record is torn, nothing is counted lost. Then writers killed at
 *	the ring writer's named test points: exactly what they committed is in the
 *	snapshot, and the survivor still loses nothing (crash.c's testpoint checks
 *	the same deaths through the live buffer's readers and stats instead).
 *   fdr-crash-kill snapshotter TPWRITER
 *	SIGKILL a process that loops on fdr_session_snapshot(), 30 times: a new
 *	snapshot is refused only within the 100 ms a dead swap is waited for, it reads
 *	back consistent, and the live buffer goes on.
 *   fdr-crash-kill stop TPWRITER
 *	SIGSTOP writers inside the ring writer (test points) and at random points
 *	while writing at full speed: snapshots are taken and read, and another
 *	writer on the same CPU is read (by a reader and by a consuming reader),
 *	within 100 ms; after SIGCONT the stopped writer goes on where it stopped,
 *	and the snapshot taken meanwhile is unchanged. (A stopped writer SIGKILLed
 *	instead: crash.c's stop.)
 *
 * The writers killed here and in crash.c are the same children
 * (sc_writer_child(), sc_spawn_tpwriter() in tests/harness/selfcheck.h).
 * FDR_FLIGHT_SEED repeats a run (the seed is printed).
 */
#include "readout.h"

#include <pthread.h>
#include <sys/mman.h>
#include <sys/resource.h>

#define seed fl_seed
#define LIMIT_NS (100 * 1000000ull) /* "within 100 ms" */

static char *tpwriter, *fdr_cli;

/* ---- children ------------------------------------------------------------------------------- */

/*
 * Run the fdr command with @args (argv[0] included), stdout into @out (NUL-
 * terminated, cut at @len - 1). Returns its exit status, or -1 (it did not run,
 * was killed or hung: 20 s).
 */
static int run_fdr(char *const args[], char *out, size_t len)
{
	char path[PATH_MAX];
	int fd, ret;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/fdr-out.%d", getenv("SC_TEST_ROOT"), (int)getpid());
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	ret = sc_run(fdr_cli, args, fd, -1, 20000);
	n = pread(fd, out, len - 1, 0);
	out[n > 0 ? n : 0] = 0;
	close(fd);
	unlink(path);
	return ret;
}

/* Lines of @text that contain "wid=@wid seq=". */
static size_t count_wid_lines(const char *text, uint32_t wid)
{
	char needle[48];

	snprintf(needle, sizeof(needle), " wid=%u seq=", wid);
	return fl_count(text, needle);
}

/* ---- (1) the creator dies --------------------------------------------------------------------- */

static int run_creator(void)
{
	struct fdr_session_opts o = { .buffer_size_kb = 1024, .subbuf_size = 4096, .overwrite = 1 };
	struct fl_readout *ro = fl_readout_new();
	struct fdr_session *s = NULL;
	char dir[PATH_MAX], dir2[PATH_MAX], *out = malloc(1 << 22);
	char a0[] = "fdr", a_write[] = "write", a_marker[] = "trace_marker",
	     a_text[] = "after the creator died", a_snap[] = "snapshot", a_take[] = "take",
	     a_cat[] = "cat", a_trace[] = "trace", a_start[] = "start";
	int p[2], i, ret, c, mid = 0;
	uint64_t t0;
	pid_t pid;

	if (!out)
		return 1;
	fl_allow_other = 1; /* trace_marker lines */
	sc_session_dir(dir, sizeof(dir));
	if (pipe2(p, O_CLOEXEC))
		return 1;
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		alarm(30);
		close(p[0]);
		ret = sc_session_create(&o, &s);
		if (!ret)
			ret = fl_snapshot_alloc(s);
		if (ret || write(p[1], "c", 1) != 1)
			_exit(3);
		for (;;)
			pause();
	}
	close(p[1]);
	c = sc_read_byte(p[0], 20000);
	close(p[0]);
	sc_ok(c == 'c', "the creator did not create the session");
	sc_ok(sc_kill_reap(pid, 5000, NULL, 0), "the creator did not die of SIGKILL");
	if (c != 'c')
		goto out;

	/* a new writer traces; the fdr command writes a marker, snapshots, reads */
	sc_exited_ok(sc_spawn_tpwriter(tpwriter, seed, NULL, 1, 1000, -1, 0, -1, -1), 20000,
		     "a writer started after the creator died");
	{
		char *args[] = { a0, a_write, a_marker, a_text, NULL };

		ret = run_fdr(args, out, 1 << 22);
		sc_ok(ret == 0, "fdr write trace_marker after the creator died: exit %d", ret);
	}
	{
		char *args[] = { a0, a_snap, a_take, NULL };

		ret = run_fdr(args, out, 1 << 22);
		sc_ok(ret == 0, "fdr snapshot take after the creator died: exit %d", ret);
	}
	{
		char *args[] = { a0, a_cat, a_snap, NULL };

		ret = run_fdr(args, out, 1 << 22);
		sc_ok(ret == 0 && count_wid_lines(out, 1) == 1000 &&
			      strstr(out, "tracing_mark_write: after the creator died"),
		      "fdr cat snapshot after the creator died: exit %d, %zu of the writer's 1000 records, marker %s",
		      ret, count_wid_lines(out, 1),
		      strstr(out, "after the creator died") ? "there" : "missing");
	}
	sc_exited_ok(sc_spawn_tpwriter(tpwriter, seed, NULL, 2, 300, -1, 0, -1, -1), 20000,
		     "a second writer");
	{
		char *args[] = { a0, a_cat, a_trace, NULL };

		ret = run_fdr(args, out, 1 << 22);
		sc_ok(ret == 0 && count_wid_lines(out, 2) == 300 && count_wid_lines(out, 1) == 0,
		      "fdr cat trace: exit %d, %zu of the second writer's 300 records, %zu from before the snapshot",
		      ret, count_wid_lines(out, 2), count_wid_lines(out, 1));
	}
	{
		char *args[] = { a0, a_start, NULL };

		ret = run_fdr(args, out, 1 << 22);
		sc_ok(ret == 0, "fdr start on the dead creator's session: exit %d", ret);
	}
	ret = sc_open_session(&s);
	if (sc_ok(ret == 0, "open the session: %s", strerror(-ret))) {
		ret = fl_read(s, FDR_READ_SNAPSHOT, ro, "snapshot");
		sc_ok(ret == 0, "read the snapshot: %s", strerror(-ret));
		fl_clean(ro, "the snapshot");
		sc_ok(ro->other == 1, "the snapshot holds %llu other records, expected the marker",
		      (unsigned long long)ro->other);
		sc_ok(ro->w[1].first == 0 && ro->w[1].last == 999 && ro->w[1].n == 1000 &&
			      ro->lost_total == 0,
		      "the snapshot holds seq %lld..%lld (%llu records, %llu lost) of the writer, expected 0..999",
		      (long long)ro->w[1].first, (long long)ro->w[1].last,
		      (unsigned long long)ro->w[1].n, (unsigned long long)ro->lost_total);
		fdr_session_destroy(s);
		fdr_session_close(s);
		s = NULL;
	}

	/* creators killed in the middle of fdr_session_create() */
	fdr_session_dir("t2", dir2, sizeof(dir2));
	for (i = 0; i < 12; i++) {
		uint64_t delay_us = sc_mix(seed + (uint64_t)i) % 70000;
		unsigned char payload[32] = { 0 };
		struct fdr_common *cm = (void *)payload;
		char ctl_path[PATH_MAX + 16];
		struct fdr_reader *r;
		struct fdr_record rec;
		int nrec = 0;

		fflush(NULL);
		pid = fork();
		if (pid == 0) {
			struct fdr_session *cs;

			alarm(30);
			_exit(fdr_session_create(dir2, &o, &cs) ? 3 : 0);
		}
		sc_sleep_us(delay_us);
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		snprintf(ctl_path, sizeof(ctl_path), "%s/control", dir2);
		if (access(ctl_path, F_OK) != 0)
			mid++;
		t0 = sc_now_ns();
		ret = fdr_session_create(dir2, &o, &s);
		if (!sc_ok(ret == 0, "create after a creator was killed %llu us in: %s",
			   (unsigned long long)delay_us, strerror(-ret)))
			continue;
		t0 = sc_now_ns() - t0;
		sc_ok(t0 < 2000000000ull, "create after a killed creator took %.1f ms", t0 / 1e6);
		cm->type = FDR_EVENT_ID_PRINT;
		cm->pid = (int32_t)getpid();
		memcpy(payload + 16, "x\n", 3);
		ret = fdr_session_write(s, 0, payload, 19);
		sc_ok(ret == 0, "write into a session made after a killed creator: %s",
		      strerror(-ret));
		ret = fdr_reader_open(s, 0, -1, 0, &r);
		if (sc_ok(ret == 0, "read a session made after a killed creator: %s",
			  strerror(-ret))) {
			while (fdr_reader_next(r, &rec) > 0)
				nrec++;
			fdr_reader_close(r);
			sc_ok(nrec == 1,
			      "a session made after a killed creator (%llu us): %d records, expected 1",
			      (unsigned long long)delay_us, nrec);
		}
		fdr_session_destroy(s);
		fdr_session_close(s);
		s = NULL;
	}
	printf("creator: 12 creators killed at random points, %d of them before the session existed\n",
	       mid);
out:
	free(out);
	free(ro);
	return 0;
}

/* ---- (2) the control lock -------------------------------------------------------------------- */

/* A child that changes the control tree as fast as it can until killed. */
static void tree_child(int ready_fd)
{
	static const char *const filters[] = { "len < 100", "wid == 3 || seq > 5", "0",
					       "len >= 0 && (seq & 1)", "0" };
	static const char *const triggers[] = { "stacktrace:1",
						"!stacktrace",
						"traceoff:1 if len > 1900",
						"!traceoff",
						"enable_event:stress:rec:1",
						"!enable_event:stress:rec" };
	struct fdr_session *s = NULL;
	uint64_t k;

	alarm(30);
	if (sc_open_session(&s))
		_exit(3);
	if (write(ready_fd, "r", 1) != 1)
		_exit(5);
	for (k = 0;; k++) {
		char path[128], name[32];
		struct fdr_file *f = NULL;

		snprintf(name, sizeof(name), "instances/k%llu", (unsigned long long)(k % 5));
		fdr_tree_mkdir(s, name);
		snprintf(path, sizeof(path), "%s/events/stress/rec/enable", name);
		fl_write_quiet(s, path, O_TRUNC, k & 1 ? "1" : "0");
		snprintf(path, sizeof(path), "%s/trace_pipe", name);
		if (fdr_file_open(s, path, O_RDONLY | O_NONBLOCK, &f) == 0 && (k & 2))
			fdr_file_close(f); /* else left open: we die holding it */
		fl_write_quiet(s, "events/stress/rec/filter", O_TRUNC,
			       filters[k % (sizeof(filters) / sizeof(filters[0]))]);
		fl_write_quiet(s, "events/stress/rec/trigger", O_APPEND,
			       triggers[k % (sizeof(triggers) / sizeof(triggers[0]))]);
		snprintf(path, sizeof(path), "%s/buffer_size_kb", name);
		if (k % 7 == 0)
			fl_write_quiet(s, path, O_TRUNC, k & 8 ? "64" : "128");
		if (k % 3 == 0)
			fdr_tree_rmdir(s, name);
		if (fdr_session_lock(s) == 0) {
			/* hold it a little: a kill often lands here */
			sc_sleep_us(50);
			fdr_session_unlock(s);
		}
	}
}

static int run_lock(void)
{
	struct fdr_session_opts o = { .buffer_size_kb = 1024, .subbuf_size = 4096, .overwrite = 1 };
	struct fl_readout *ro = fl_readout_new();
	struct fdr_session *s = NULL;
	struct fdr_dirent *ents = NULL;
	char out[4096], a0[] = "fdr", a_mkdir[] = "mkdir", a_rmdir[] = "rmdir", a_inst[64];
	uint64_t t0, worst = 0, seq;
	size_t nr = 0, j;
	int i, ret, held = 0, kills = (int)sc_env_u64("FDR_FLIGHT_LOCK_KILLS", 40);

	ret = sc_session_create(&o, &s);
	if (!sc_ok(ret == 0, "create the session: %s", strerror(-ret)))
		return 1;
	ret = sc_wait_enabled(10000);
	if (!sc_ok(ret == 0, "stress:rec never got enabled"))
		goto out;
	ret = fl_snapshot_alloc(s);
	if (!sc_ok(ret == 0, "allocate the snapshot buffers: %s", strerror(-ret)))
		goto out;

	/* (a) a holder of the lock dies */
	for (i = 0; i < 5; i++) {
		int p[2], c;
		pid_t pid;

		if (pipe2(p, O_CLOEXEC))
			break;
		fflush(NULL);
		pid = fork();
		if (pid == 0) {
			struct fdr_session *cs;

			alarm(30);
			close(p[0]);
			if (sc_open_session(&cs) || fdr_session_lock(cs) ||
			    write(p[1], "l", 1) != 1)
				_exit(3);
			for (;;)
				pause();
		}
		close(p[1]);
		c = sc_read_byte(p[0], 20000);
		close(p[0]);
		if (!sc_ok(c == 'l', "the child did not take the lock")) {
			sc_kill_reap(pid, 5000, NULL, 0);
			continue;
		}
		sc_ok(sc_kill_reap(pid, 5000, NULL, 0), "the lock holder did not die of SIGKILL");
		t0 = sc_now_ns();
		ret = fdr_session_lock(s);
		t0 = sc_now_ns() - t0;
		if (t0 > worst)
			worst = t0;
		sc_ok(ret == 0 && t0 < 2000000000ull,
		      "fdr_session_lock after its holder was killed: %s after %.1f ms",
		      strerror(-ret), t0 / 1e6);
		if (ret == 0)
			fdr_session_unlock(s);
		/* and a new fdr process can change the tree */
		snprintf(a_inst, sizeof(a_inst), "instances/after-lock-%d", i);
		{
			char *args[] = { a0, a_mkdir, a_inst, NULL };

			ret = run_fdr(args, out, sizeof(out));
			sc_ok(ret == 0, "fdr mkdir %s after the lock holder died: exit %d", a_inst,
			      ret);
		}
		{
			char *args[] = { a0, a_rmdir, a_inst, NULL };

			ret = run_fdr(args, out, sizeof(out));
			sc_ok(ret == 0, "fdr rmdir %s: exit %d", a_inst, ret);
		}
	}
	printf("lock: a dead holder's lock was taken over in at most %.2f ms\n", worst / 1e6);

	/* (b) a process changing the control tree, killed anywhere */
	worst = 0;
	for (i = 0; i < kills; i++) {
		uint64_t delay_us = sc_mix(seed ^ (uint64_t)i * 7919) % 4000;
		int p[2], c;
		pid_t pid;

		if (pipe2(p, O_CLOEXEC))
			break;
		fflush(NULL);
		pid = fork();
		if (pid == 0) {
			close(p[0]);
			tree_child(p[1]);
		}
		close(p[1]);
		c = sc_read_byte(p[0], 20000);
		close(p[0]);
		sc_sleep_us(delay_us);
		sc_ok(sc_kill_reap(pid, 5000, NULL, 0) && c == 'r',
		      "tree writer %d: did not start or die of SIGKILL", i);
		/* glibc's layout, as lib/core/session.c reads it: the owner's tid */
		if (((pthread_mutex_t *)(void *)fdr_session_control(s)->lock)->__data.__owner)
			held++;
		t0 = sc_now_ns();
		ret = fdr_session_lock(s);
		t0 = sc_now_ns() - t0;
		if (t0 > worst)
			worst = t0;
		if (!sc_ok(ret == 0, "fdr_session_lock after tree writer %d was killed: %s", i,
			   strerror(-ret)))
			continue;
		fdr_session_unlock(s);
		ret = fdr_tree_mkdir(s, "instances/probe");
		sc_ok(ret == 0, "mkdir after tree writer %d was killed: %s", i, strerror(-ret));
		ret = fdr_tree_rmdir(s, "instances/probe");
		sc_ok(ret == 0, "rmdir after tree writer %d was killed: %s", i, strerror(-ret));
	}
	printf("lock: %d tree writers killed, %d of them holding the lock; it was free again within %.2f ms\n",
	       kills, held, worst / 1e6);
	sc_ok(kills < 20 || held > 0, "no tree writer was killed while it held the lock");
	/* every instance the dead left behind can be removed: nobody holds them */
	ret = fdr_tree_readdir(s, "instances", &ents, &nr);
	sc_ok(ret == 0, "readdir instances: %s", strerror(-ret));
	for (j = 0; j < nr; j++) {
		char path[160];

		if (!ents[j].is_dir)
			continue;
		snprintf(path, sizeof(path), "instances/%s", ents[j].name);
		ret = fdr_tree_rmdir(s, path);
		sc_ok(ret == 0, "rmdir %s, left by a killed process: %s", path, strerror(-ret));
	}
	free(ents);
	/* the hooks it left can be removed through the files, and records flow */
	sc_ok(sc_ctl_write(s, "events/stress/rec/filter", O_TRUNC, "0") >= 0, "clear the filter");
	sc_ok(sc_ctl_write(s, "events/stress/rec/trigger", O_APPEND, "!stacktrace") >= 0 &&
		      sc_ctl_write(s, "events/stress/rec/trigger", O_APPEND, "!traceoff") >= 0 &&
		      sc_ctl_write(s, "events/stress/rec/trigger", O_APPEND,
				   "!enable_event:stress:rec") >= 0,
	      "remove the triggers");
	sc_ok(sc_ctl_write(s, "events/stress/rec/enable", O_TRUNC, "1") >= 0 &&
		      sc_ctl_write(s, "tracing_on", O_TRUNC, "1") >= 0,
	      "enable stress:rec, tracing on");
	{
		int err = 0;
		char *t = fl_cat(s, "events/stress/rec/trigger", &err);

		sc_ok(t && strncmp(t, "# Available triggers:", 21) == 0,
		      "the trigger file after the kills: %s", t ? t : strerror(-err));
		free(t);
	}
	fdr_sync();
	ret = fdr_session_snapshot(s, 0, -1); /* start from an empty live buffer */
	sc_ok(ret == 0, "snapshot: %s", strerror(-ret));
	for (seq = 0; seq < 1000; seq++)
		sc_write(seed, 7, seq);
	ret = fdr_session_snapshot(s, 0, -1);
	sc_ok(ret == 0, "snapshot: %s", strerror(-ret));
	ret = fl_read(s, FDR_READ_SNAPSHOT, ro, "snapshot");
	fl_clean(ro, "records written after the kills");
	sc_ok(ret == 0 && ro->w[7].first == 0 && ro->w[7].last == 999 && ro->w[7].n == 1000,
	      "records written after the kills: %s, seq %lld..%lld (%llu), expected 0..999",
	      strerror(-ret), (long long)ro->w[7].first, (long long)ro->w[7].last,
	      (unsigned long long)ro->w[7].n);
out:
	free(ro);
	fdr_session_destroy(s);
	fdr_session_close(s);
	return 0;
}

/* ---- (3) writers killed ---------------------------------------------------------------------- */

/*
 * What a writer killed at a random time writes at most per thread before it
 * waits for its SIGKILL: far less than a CPU's buffer holds in run_writers
 * (about 50000 records), so however late the kill comes on a loaded machine,
 * none of its records (nor the survivor's) is overwritten, and the checks can
 * ask for every one. At full speed it takes about as long as the longest delay
 * before the kill (2 ms), so most kills still land mid-write.
 */
#define KILL_CAP 20000

/* Whether instance 0's live buffers hold an unread record on some CPU. */
static int live_has_records(struct fdr_session *s)
{
	int cpu, n = fdr_ring_nr_cpus(s, 0);

	for (cpu = 0; cpu < n; cpu++) {
		struct fdr_cpu_stats st;

		if (fdr_ring_stats(s, 0, (uint32_t)cpu, &st) == 0 && st.entries)
			return 1;
	}
	return 0;
}

/* Read the snapshot whole into @ro; returns the time of its first record, 0 if none. */
static uint64_t fl_read_snapshot(struct fdr_session *s, struct fl_readout *ro, const char *what)
{
	struct fdr_reader *r;
	struct fdr_record rec;
	uint64_t t_first = 0;
	int ret;

	fl_readout_init(ro);
	ret = fdr_reader_open(s, 0, -1, FDR_READ_SNAPSHOT, &r);
	if (!sc_ok(ret == 0, "%s: open the snapshot: %s", what, strerror(-ret)))
		return 0;
	while ((ret = fdr_reader_next(r, &rec)) > 0) {
		if (!t_first)
			t_first = sc_now_ns();
		fl_take(s, ro, &rec, what);
	}
	fdr_reader_close(r);
	sc_ok(ret == 0, "%s: read the snapshot: %s", what, strerror(-ret));
	return t_first;
}

/* Read the snapshot whole into @ro; returns ms from the open to its first record, or -1. */
static double fl_read_timed(struct fdr_session *s, struct fl_readout *ro, const char *what)
{
	uint64_t t0 = sc_now_ns(), t_first = fl_read_snapshot(s, ro, what);

	return t_first ? (double)(t_first - t0) / 1e6 : -1;
}

/* Take a snapshot and read it whole into @ro; returns ms to the first record, or -1. */
static double snap_and_read(struct fdr_session *s, struct fl_readout *ro, const char *what,
			    double *total_ms)
{
	uint64_t t0 = sc_now_ns(), t_first;
	int ret = fdr_session_snapshot(s, 0, -1);

	if (!sc_ok(ret == 0, "%s: snapshot: %s", what, strerror(-ret))) {
		fl_readout_init(ro);
		return -1;
	}
	t_first = fl_read_snapshot(s, ro, what);
	if (total_ms)
		*total_ms = (double)(sc_now_ns() - t0) / 1e6;
	return t_first ? (double)(t_first - t0) / 1e6 : (double)(sc_now_ns() - t0) / 1e6;
}

#define SURVIVOR 1000u

static int run_writers(void)
{
	struct fdr_session_opts o = { .buffer_size_kb = 8192, .subbuf_size = 4096, .overwrite = 1 };
	static const struct {
		const char *point;
		uint64_t n;
	} tps[] = { { "reserve", 1 },	 { "reserve", 50 },	 { "commit", 1 },
		    { "commit", 50 },	 { "commit", 3000 },	 { "switch-pad", 1 },
		    { "switch-pad", 3 }, { "switch-header", 1 }, { "switch-header", 2 } };
	uint32_t kills = (uint32_t)sc_env_u64("FDR_FLIGHT_KILLS", 60), i;
	struct fl_readout *ro = fl_readout_new();
	struct fdr_session *s = NULL;
	double first_worst = 0, total_worst = 0;
	int64_t surv_next = 0;
	uint64_t dead_records = 0;
	pid_t surv;
	size_t j;
	int ret;

	printf("writers: %u writers SIGKILLed 0-2 ms after they start writing, a snapshot after each\n",
	       kills);
	ret = sc_session_create(&o, &s);
	if (!sc_ok(ret == 0, "create the session: %s", strerror(-ret)))
		return 1;
	ret = sc_wait_enabled(10000);
	if (!sc_ok(ret == 0, "stress:rec never got enabled"))
		goto out;
	ret = fl_snapshot_alloc(s);
	if (!sc_ok(ret == 0, "allocate the snapshot buffers: %s", strerror(-ret)))
		goto out;
	surv = sc_spawn_tpwriter(tpwriter, seed, NULL, SURVIVOR, 1u << 30, -1, 50, -1, -1);
	sc_ok(surv > 0, "the survivor did not start");
	snap_and_read(s, ro, "before the kills", NULL);
	/* the survivor may have begun before that first snapshot: it continues from it */
	fl_clean(ro, "before the kills");
	if (ro->w[SURVIVOR].n)
		surv_next = ro->w[SURVIVOR].last + 1;
	for (i = 0; i < kills; i++) {
		uint64_t rng = sc_mix(seed + i), delay_us = (rng >> 8) % 2001;
		uint32_t wid = 2 + i * 2;
		int variant = (int)(rng % 3), ready[2], c;
		double first_ms, total_ms;
		char what[64];
		pid_t pid;

		if (pipe2(ready, O_CLOEXEC))
			break;
		fflush(NULL);
		pid = fork();
		if (pid == 0) {
			close(ready[0]);
			sc_writer_child(seed, wid, variant, ready[1], KILL_CAP);
		}
		close(ready[1]);
		c = sc_read_byte(ready[0], 20000);
		close(ready[0]);
		sc_sleep_us(delay_us);
		if (!sc_ok(sc_kill_reap(pid, 5000, NULL, 0) && c == 'r',
			   "writer %u did not start or did not die of our SIGKILL", i))
			continue;
		snprintf(what, sizeof(what), "snapshot after kill %u", i);
		first_ms = snap_and_read(s, ro, what, &total_ms);
		if (first_ms > first_worst)
			first_worst = first_ms;
		if (total_ms > total_worst)
			total_worst = total_ms;
		fl_clean(ro, what);
		sc_ok(ro->lost_total == 0, "%s: %llu records counted lost", what,
		      (unsigned long long)ro->lost_total);
		/* the dead writer's records: a gapless run from seq 0 */
		for (c = 0; c < (variant == 1 ? 2 : 1); c++) {
			const struct fl_wseen *w = &ro->w[wid + (uint32_t)c];

			sc_ok(w->n == 0 || (w->first == 0 && w->last == (int64_t)w->n - 1),
			      "%s: dead writer %u: seq %lld..%lld, %llu records: not a gapless run from 0",
			      what, wid + c, (long long)w->first, (long long)w->last,
			      (unsigned long long)w->n);
			dead_records += w->n;
		}
		/* the survivor: nothing lost, it continues where the last snapshot ended */
		if (ro->w[SURVIVOR].n) {
			sc_ok(ro->w[SURVIVOR].first == surv_next,
			      "%s: the survivor continues at seq %lld, expected %lld", what,
			      (long long)ro->w[SURVIVOR].first, (long long)surv_next);
			surv_next = ro->w[SURVIVOR].last + 1;
		}
		sc_ok(first_ms >= 0 && first_ms < LIMIT_NS / 1e6,
		      "%s: the first record came %.1f ms after the kill", what, first_ms);
	}
	printf("writers: %llu records of dead writers checked; snapshot + first record within %.2f ms, whole snapshot read within %.1f ms\n",
	       (unsigned long long)dead_records, first_worst, total_worst);
	sc_ok(surv_next > 0, "the survivor wrote nothing");

	/* killed at the named test points: exactly what was committed is there */
	for (j = 0; j < sizeof(tps) / sizeof(tps[0]); j++) {
		uint32_t wid = 0x300 + (uint32_t)j;
		char fault[64], what[96], buf[80];
		int st = 0;
		pid_t pid;
		const struct fl_wseen *w;

		snprintf(fault, sizeof(fault), "%s:%llu", tps[j].point,
			 (unsigned long long)tps[j].n);
		pid = sc_spawn_tpwriter(tpwriter, seed, fault, wid, 1000000, 0, 0, -1, -1);
		ret = pid > 0 ? sc_wait(pid, &st, 30000, 0) : -1;
		if (ret)
			sc_kill_reap(pid, 5000, NULL, 0);
		if (!sc_ok(ret == 0 && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL,
			   "FDR_FAULT=%s: the writer did not die at the test point: %s", fault,
			   ret ? "hung" : sc_status_str(st, buf, sizeof(buf))))
			continue;
		snprintf(what, sizeof(what), "snapshot after FDR_FAULT=%s", fault);
		snap_and_read(s, ro, what, NULL);
		fl_clean(ro, what);
		w = &ro->w[wid];
		/* "reserve" is passed again after each sub-buffer switch: at most N - 1 */
		sc_ok(ro->lost_total == 0 &&
			      (w->n == 0 ? strcmp(tps[j].point, "commit") != 0 :
					   w->first == 0 && w->last == (int64_t)w->n - 1),
		      "%s: seq %lld..%lld (%llu records, %llu lost): not a gapless run from 0",
		      what, (long long)w->first, (long long)w->last, (unsigned long long)w->n,
		      (unsigned long long)ro->lost_total);
		if (strcmp(tps[j].point, "commit") == 0)
			sc_ok(w->n == tps[j].n, "%s: %llu records, %llu were committed", what,
			      (unsigned long long)w->n, (unsigned long long)tps[j].n);
		if (strcmp(tps[j].point, "reserve") == 0)
			sc_ok(w->n <= tps[j].n - 1, "%s: %llu records, at most %llu were committed",
			      what, (unsigned long long)w->n, (unsigned long long)tps[j].n - 1);
		if (ro->w[SURVIVOR].n) {
			sc_ok(ro->w[SURVIVOR].first == surv_next,
			      "%s: the survivor continues at seq %lld, expected %lld", what,
			      (long long)ro->w[SURVIVOR].first, (long long)surv_next);
			surv_next = ro->w[SURVIVOR].last + 1;
		}
		printf("writers: FDR_FAULT=%s: %llu records in the snapshot\n", fault,
		       (unsigned long long)w->n);
	}
	/* the survivor goes on: SIGKILL it too, its last run must be whole */
	sc_ok(sc_kill_reap(surv, 5000, NULL, 0), "the survivor did not die of SIGKILL");
	snap_and_read(s, ro, "the survivor's last records", NULL);
	fl_clean(ro, "the survivor's last records");
	sc_ok(ro->w[SURVIVOR].n == 0 || ro->w[SURVIVOR].first == surv_next,
	      "the survivor: its last run starts at %lld, expected %lld",
	      (long long)ro->w[SURVIVOR].first, (long long)surv_next);
out:
	free(ro);
	fdr_session_destroy(s);
	fdr_session_close(s);
	return 0;
}

/* ---- (4) a snapshotter killed ---------------------------------------------------------------- */

static int run_snapshotter(void)
{
	struct fdr_session_opts o = { .buffer_size_kb = 4096, .subbuf_size = 4096, .overwrite = 1 };
	struct fl_readout *ro = fl_readout_new(), *live = fl_readout_new();
	struct fdr_session *s = NULL;
	const struct fdr_abi_ring *h;
	void *base;
	size_t size;
	double worst_swap = 0, worst_first = 0;
	int i, ret, mid = 0, rounds = 30, heads[3] = { SURVIVOR, 10, 11 };
	pid_t surv, fast[2] = { -1, -1 };

	ret = sc_session_create(&o, &s);
	if (!sc_ok(ret == 0, "create the session: %s", strerror(-ret)))
		return 1;
	ret = sc_wait_enabled(10000);
	if (!sc_ok(ret == 0, "stress:rec never got enabled"))
		goto out;
	ret = fl_snapshot_alloc(s);
	if (!sc_ok(ret == 0, "allocate the snapshot buffers: %s", strerror(-ret)))
		goto out;
	ret = fdr_session_ring(s, 0, &base, &size);
	if (!sc_ok(ret == 0, "map the ring: %s", strerror(-ret)))
		goto out;
	h = base;
	surv = sc_spawn_tpwriter(tpwriter, seed, NULL, SURVIVOR, 1u << 30, -1, 20, -1, -1);
	for (i = 0; i < 2; i++) {
		fflush(NULL);
		fast[i] = fork();
		if (fast[i] == 0) {
			alarm(60);
			sc_pin(i);
			setpriority(PRIO_PROCESS, 0, 10); /* the controller first */
			sc_write_run(seed, 10 + (uint32_t)i, 0);
			_exit(0);
		}
	}
	sc_sleep_us(20000);
	for (i = 0; i < rounds; i++) {
		uint64_t delay_us = sc_mix(seed ^ (uint64_t)(i + 99)) % 3000, t0, seq, t_dead,
			 t_try;
		uint64_t late_busy = 0;
		double first_ms, swap_ms;
		char what[64];
		pid_t pid;
		int w;

		fflush(NULL);
		pid = fork();
		if (pid == 0) {
			struct fdr_session *cs;

			alarm(30);
			if (sc_open_session(&cs))
				_exit(3);
			for (;;)
				fdr_session_snapshot(cs, 0, -1);
		}
		sc_sleep_us(delay_us);
		sc_ok(sc_kill_reap(pid, 5000, NULL, 0), "snapshotter %d did not die of SIGKILL", i);
		t_dead = sc_now_ns(); /* it died before this: its lease is at least this old */
		seq = __atomic_load_n(&h->snap_seq, __ATOMIC_ACQUIRE);
		if (seq & 1)
			mid++;
		/*
		 * The dead snapshotter swapped in a loop: the live buffer may hold
		 * nothing yet if the writers did not run since (a loaded machine).
		 * Let them write something, so the snapshot below cannot be empty.
		 */
		t0 = sc_now_ns();
		while (!live_has_records(s) && sc_now_ns() - t0 < 2000000000ull)
			sc_sleep_us(200);
		/*
		 * A new snapshot: refused (EBUSY) only while the dead swap's lease is
		 * younger than the 100 ms it is waited for. Each try's start is taken
		 * before the call, so a loaded machine that delays the call only
		 * makes the lease older: a refusal of a try that started 120 ms or
		 * more after the death is a failure whatever the load.
		 */
		t0 = sc_now_ns();
		for (;;) {
			t_try = sc_now_ns();
			ret = fdr_session_snapshot(s, 0, -1);
			if (ret != -EBUSY || t_try - t0 >= 2000000000ull)
				break;
			if (t_try - t_dead >= 120000000ull)
				late_busy++;
			sc_sleep_us(500);
		}
		swap_ms = (double)(sc_now_ns() - t0) / 1e6;
		if (swap_ms > worst_swap)
			worst_swap = swap_ms;
		snprintf(what, sizeof(what), "snapshot after snapshotter %d died%s", i,
			 seq & 1 ? " mid-swap" : "");
		if (!sc_ok(ret == 0, "%s: %s after %.1f ms", what, strerror(-ret), swap_ms))
			continue;
		sc_ok(!late_busy,
		      "%s: refused %llu times more than 120 ms after the death (a dead swap is waited for 100 ms)",
		      what, (unsigned long long)late_busy);
		/* the live buffer goes on: read its first records, then the snapshot */
		fl_read_heads(s, live, heads, 3, 200000, 50);
		first_ms = fl_read_timed(s, ro, what);
		if (first_ms > worst_first)
			worst_first = first_ms;
		sc_ok(first_ms >= 0 && first_ms < LIMIT_NS / 1e6,
		      "%s: its first record read after %.1f ms", what, first_ms);
		fl_clean(ro, what);
		fl_clean(live, "the live buffer");
		for (w = 0; w < FL_MAX_W; w++) {
			if (ro->w[w].n == 0 || live->w[w].n == 0)
				continue;
			sc_ok(live->w[w].first > ro->w[w].last &&
				      live->w[w].first - ro->w[w].last - 1 <=
					      (int64_t)live->w[w].lost_at_first,
			      "%s: writer %d: the snapshot ends at seq %lld, the live buffer starts at %lld (%llu counted lost)",
			      what, w, (long long)ro->w[w].last, (long long)live->w[w].first,
			      (unsigned long long)live->w[w].lost_at_first);
		}
	}
	printf("snapshotter: %d killed, %d of them mid-swap; next snapshot within %.1f ms, its first record read within %.1f ms\n",
	       rounds, mid, worst_swap, worst_first);
	for (i = 0; i < 2; i++)
		sc_ok(sc_kill_reap(fast[i], 5000, NULL, 0), "fast writer %d did not die of SIGKILL",
		      i);
	sc_ok(sc_kill_reap(surv, 5000, NULL, 0), "the survivor did not die of SIGKILL");
out:
	free(ro);
	free(live);
	fdr_session_destroy(s);
	fdr_session_close(s);
	return 0;
}

/* ---- (5) writers stopped --------------------------------------------------------------------- */

static void stop_at_point(struct fdr_session *s, const char *fault, uint32_t j)
{
	const uint64_t n_stopped = 5000, n2 = 200;
	uint32_t wid_s = 0x400 + j, wid_2 = 0x500 + j;
	struct fl_readout *r1 = fl_readout_new(), *r1b = fl_readout_new(), *r2 = fl_readout_new();
	struct fl_readout *r3 = fl_readout_new();
	int ready[2] = { -1, -1 }, go[2] = { -1, -1 }, st = 0, ret;
	uint64_t t0, t_go, t_snap, t_w = 0;
	int64_t expect_n = -1, expect_max = INT64_MAX, s_last;
	char buf[80], what[96];
	pid_t stopped, w2 = -1;

	snprintf(what, sizeof(what), "%s", fault);
	if (strncmp(fault, "commit:", 7) == 0)
		expect_n = strtoll(fault + 7, NULL, 10);
	else if (strncmp(fault, "reserve:", 8) == 0) /* passed again after a sub-buffer switch */
		expect_max = strtoll(fault + 8, NULL, 10) - 1;
	/* an empty live buffer to start from */
	fdr_session_snapshot(s, 0, -1);
	stopped = sc_spawn_tpwriter(tpwriter, seed, fault, wid_s, n_stopped, 0, 0, -1, -1);
	ret = stopped > 0 ? sc_wait(stopped, &st, 20000, WUNTRACED) : -1;
	if (!sc_ok(ret == 0 && WIFSTOPPED(st) && WSTOPSIG(st) == SIGSTOP,
		   "%s: the writer did not stop at the test point: %s", what,
		   ret ? "timeout" : sc_status_str(st, buf, sizeof(buf)))) {
		sc_kill_reap(stopped, 5000, NULL, 0);
		goto out;
	}
	/* a snapshot, read whole, within 100 ms */
	t0 = sc_now_ns();
	ret = fdr_session_snapshot(s, 0, -1);
	sc_ok(ret == 0, "%s: snapshot while a writer is stopped: %s", what, strerror(-ret));
	ret = fl_read(s, FDR_READ_SNAPSHOT, r1, what);
	t_snap = sc_now_ns() - t0;
	sc_ok(ret == 0 && t_snap < LIMIT_NS,
	      "%s: snapshot taken and read in %.1f ms (%s), expected < 100 ms", what, t_snap / 1e6,
	      strerror(-ret));
	fl_clean(r1, what);
	s_last = r1->w[wid_s].n ? r1->w[wid_s].last : -1;
	sc_ok(r1->lost_total == 0 && (r1->w[wid_s].n == 0 || r1->w[wid_s].first == 0) &&
		      s_last == (int64_t)r1->w[wid_s].n - 1 &&
		      (expect_n < 0 || (int64_t)r1->w[wid_s].n == expect_n) &&
		      (int64_t)r1->w[wid_s].n <= expect_max,
	      "%s: the snapshot holds seq %lld..%lld (%llu records, %llu lost) of the stopped writer%s",
	      what, (long long)r1->w[wid_s].first, (long long)r1->w[wid_s].last,
	      (unsigned long long)r1->w[wid_s].n, (unsigned long long)r1->lost_total,
	      expect_n >= 0 ? ", expected exactly what it committed" : "");

	/* another writer on the same CPU, and a reader, get through */
	if (pipe2(ready, O_CLOEXEC) || pipe2(go, O_CLOEXEC))
		goto cont;
	w2 = sc_spawn_tpwriter(tpwriter, seed, NULL, wid_2, n2, 0, 0, ready[1], go[0]);
	close(ready[1]);
	close(go[0]);
	ready[1] = go[0] = -1;
	if (!sc_ok(w2 > 0 && sc_read_byte(ready[0], 20000) == 'r',
		   "%s: second writer did not start", what))
		goto cont;
	t_go = t0 = sc_now_ns();
	if (write(go[1], "g", 1) == 1 && sc_read_byte(ready[0], 20000) == 'd')
		t_w = sc_now_ns() - t0;
	ret = fl_read(s, 0, r2, "live");
	t0 = sc_now_ns() - t0;
	sc_ok(t_w && t_w < LIMIT_NS && t0 < LIMIT_NS && r2->w[wid_2].n == n2,
	      "%s: another writer on the stopped one's CPU: %llu records written in %.1f ms, %llu read after %.1f ms",
	      what, (unsigned long long)n2, t_w / 1e6, (unsigned long long)r2->w[wid_2].n,
	      t0 / 1e6);
	/* a consuming reader (trace_pipe) gets them too, within the same 100 ms */
	ret = fl_read(s, FDR_READ_CONSUME, r3, "live, consuming");
	t0 = sc_now_ns() - t_go;
	sc_ok(ret == 0 && r3->w[wid_2].n == n2 && t0 < LIMIT_NS,
	      "%s: a consuming reader got %llu of the other writer's %llu records after %.1f ms (%s)",
	      what, (unsigned long long)r3->w[wid_2].n, (unsigned long long)n2, t0 / 1e6,
	      strerror(-ret));
	sc_exited_ok(w2, 20000, "the second writer");
	w2 = -1;
cont:
	/* resumed, the stopped writer goes on where it stopped; the snapshot stays */
	kill(stopped, SIGCONT);
	ret = sc_wait(stopped, &st, 20000, 0);
	if (ret)
		sc_kill_reap(stopped, 5000, NULL, 0);
	sc_ok(ret == 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s: the resumed writer: %s", what,
	      ret ? "hung" : sc_status_str(st, buf, sizeof(buf)));
	ret = fl_read(s, FDR_READ_SNAPSHOT, r1b, what);
	sc_ok(ret == 0 && r1b->records == r1->records && r1b->w[wid_s].n == r1->w[wid_s].n &&
		      r1b->w[wid_s].last == r1->w[wid_s].last && r1b->lost_total == 0,
	      "%s: after the stopped writer resumed, the snapshot holds %llu records (seq ..%lld), before %llu (seq ..%lld)",
	      what, (unsigned long long)r1b->records, (long long)r1b->w[wid_s].last,
	      (unsigned long long)r1->records, (long long)r1->w[wid_s].last);
	ret = fdr_session_snapshot(s, 0, -1);
	sc_ok(ret == 0, "%s: snapshot after it resumed: %s", what, strerror(-ret));
	fl_read(s, FDR_READ_SNAPSHOT, r2, what);
	fl_clean(r2, what);
	sc_ok(r2->lost_total == 0 && r2->w[wid_s].first == s_last + 1 &&
		      r2->w[wid_s].last == (int64_t)n_stopped - 1,
	      "%s: after resuming, the writer's records go on at seq %lld..%lld, expected %lld..%llu",
	      what, (long long)r2->w[wid_s].first, (long long)r2->w[wid_s].last,
	      (long long)s_last + 1, (unsigned long long)n_stopped - 1);
	printf("stop: %s: snapshot taken and read in %.2f ms while stopped (%llu records of it), another writer's %llu records in %.2f ms\n",
	       what, t_snap / 1e6, (unsigned long long)r1->w[wid_s].n, (unsigned long long)n2,
	       t_w / 1e6);
out:
	if (ready[0] >= 0)
		close(ready[0]);
	if (go[1] >= 0)
		close(go[1]);
	if (w2 > 0)
		sc_kill_reap(w2, 5000, NULL, 0);
	free(r1);
	free(r1b);
	free(r2);
	free(r3);
}

static int run_stop(void)
{
	static const char *const faults[] = { "reserve:5:stop", "commit:5:stop",
					      "switch-pad:1:stop", "switch-header:1:stop",
					      "switch-header:3:stop" };
	struct fdr_session_opts o = { .buffer_size_kb = 4096, .subbuf_size = 4096, .overwrite = 1 };
	struct fl_readout *ro = fl_readout_new();
	struct fdr_session *s = NULL;
	double worst = 0;
	int64_t next = 0;
	uint64_t stop_lost = 0;
	uint32_t j;
	int ret, i, ready[2];
	pid_t pid;

	ret = sc_session_create(&o, &s);
	if (!sc_ok(ret == 0, "create the session: %s", strerror(-ret)))
		return 1;
	ret = sc_wait_enabled(10000);
	if (!sc_ok(ret == 0, "stress:rec never got enabled"))
		goto out;
	ret = fl_snapshot_alloc(s);
	if (!sc_ok(ret == 0, "allocate the snapshot buffers: %s", strerror(-ret)))
		goto out;
	for (j = 0; j < sizeof(faults) / sizeof(faults[0]); j++)
		stop_at_point(s, faults[j], j);

	/* a full-speed writer stopped anywhere, 20 times, resumed each time */
	if (pipe2(ready, O_CLOEXEC))
		goto out;
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		close(ready[0]);
		sc_writer_child(seed, 0x600, 2, ready[1], 0);
	}
	close(ready[1]);
	if (!sc_ok(sc_read_byte(ready[0], 20000) == 'r', "the writer to stop did not start")) {
		close(ready[0]);
		sc_kill_reap(pid, 5000, NULL, 0);
		goto out;
	}
	close(ready[0]);
	snap_and_read(s, ro, "before stopping", NULL);
	next = ro->w[0x600].n ? ro->w[0x600].last + 1 : 0;
	for (i = 0; i < 20; i++) {
		uint64_t delay_us = sc_mix(seed + (uint64_t)i * 31) % 2000;
		double first_ms, total_ms;
		char what[64];
		int st = 0;

		sc_sleep_us(delay_us);
		kill(pid, SIGSTOP);
		ret = sc_wait(pid, &st, 5000, WUNTRACED);
		if (!sc_ok(ret == 0 && WIFSTOPPED(st), "the writer did not stop"))
			break;
		snprintf(what, sizeof(what), "snapshot while the writer is stopped (%d)", i);
		first_ms = snap_and_read(s, ro, what, &total_ms);
		if (total_ms > worst)
			worst = total_ms;
		fl_clean(ro, what);
		sc_ok(total_ms < LIMIT_NS / 1e6, "%s: taken and read in %.1f ms", what, total_ms);
		/*
		 * (it may not have run at all since it was resumed.) Between two
		 * snapshots it runs for up to 2 ms, far less than the buffer holds,
		 * but a loaded machine may let it run much longer: then the oldest
		 * records are overwritten, and each one must be counted lost: from
		 * next to the last one seen, every record is read or counted.
		 */
		sc_ok(ro->w[0x600].n == 0 ||
			      (ro->lost_total == 0 ?
				       ro->w[0x600].first == next &&
					       ro->w[0x600].last ==
						       next + (int64_t)ro->w[0x600].n - 1 :
				       (int64_t)(ro->w[0x600].n + ro->lost_total) ==
					       ro->w[0x600].last - next + 1),
		      "%s: seq %lld..%lld (%llu records, %llu lost), expected every record from %lld read or counted lost",
		      what, (long long)ro->w[0x600].first, (long long)ro->w[0x600].last,
		      (unsigned long long)ro->w[0x600].n, (unsigned long long)ro->lost_total,
		      (long long)next);
		stop_lost += ro->lost_total;
		if (ro->w[0x600].n)
			next = ro->w[0x600].last + 1;
		(void)first_ms;
		kill(pid, SIGCONT);
	}
	printf("stop: a full-speed writer stopped 20 times: each snapshot taken and read within %.2f ms; %lld records, %llu of them overwritten between snapshots and counted lost\n",
	       worst, (long long)next, (unsigned long long)stop_lost);
	sc_ok(sc_kill_reap(pid, 5000, NULL, 0), "the writer did not die of SIGKILL");
out:
	free(ro);
	fdr_session_destroy(s);
	fdr_session_close(s);
	return 0;
}

int main(int argc, char **argv)
{
	struct sigaction sa;

	setvbuf(stdout, NULL, _IOLBF, 0);
	seed = sc_env_u64("FDR_FLIGHT_SEED", sc_mix(sc_now_ns() ^ (uint64_t)getpid()));
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = sc_on_alarm;
	sigaction(SIGALRM, &sa, NULL);
	alarm(110);
	printf("flight kill: seed %#llx (FDR_FLIGHT_SEED to repeat)\n", (unsigned long long)seed);
	if (argc == 4 && strcmp(argv[1], "creator") == 0) {
		fdr_cli = argv[2];
		tpwriter = argv[3];
		run_creator();
	} else if (argc == 3 && strcmp(argv[1], "lock") == 0) {
		fdr_cli = argv[2];
		run_lock();
	} else if (argc == 3 && strcmp(argv[1], "writers") == 0) {
		tpwriter = argv[2];
		run_writers();
	} else if (argc == 3 && strcmp(argv[1], "snapshotter") == 0) {
		tpwriter = argv[2];
		run_snapshotter();
	} else if (argc == 3 && strcmp(argv[1], "stop") == 0) {
		tpwriter = argv[2];
		run_stop();
	} else {
		fprintf(stderr,
			"usage: %s creator FDR TPWRITER | lock FDR | writers TPWRITER | snapshotter TPWRITER | stop TPWRITER\n",
			argv[0]);
		sc_cleanup_root();
		return 2;
	}
	sc_cleanup_root();
	return sc_summary();
}
