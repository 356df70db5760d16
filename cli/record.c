// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * record.c - fdr record and fdr extract: trace.dat files for trace-cmd report
 * and KernelShark.
 *
 * fdr record works like trace-cmd record. It enables the events (creating the
 * session if needed, as fdr start does), empties the instance's buffers, runs
 * the command if one is given, and until it exits (or SIGINT/SIGTERM) consumes
 * every CPU's buffer into the output file, written as it goes
 * (docs/design/record.md):
 *
 *   create      the file is a valid trace.dat from the start (version 7: the
 *               formats, then a sparse slot per CPU, fdr_tracedat_live_create());
 *   recording   each round turns the records of the sub-buffers the writers
 *               have left into the kernel's ring-buffer pages
 *               (fdr_reader_raw_pages(), on the taker threads), writes them at
 *               the end of the CPU's slot, then its size
 *               (fdr_tracedat_live_append()), and only then publishes them as
 *               consumed (the reader holds them until fdr_reader_commit()):
 *               whatever happens to fdr record, a record is either in the file
 *               or still in the ring (or counted there as overwritten);
 *   stop        the takers drain what was written before the stop, the writers'
 *               current sub-buffers included; then the CPUs' pages are moved
 *               together in place and the file is cut after its final formats
 *               and statistics (fdr_tracedat_live_finish()). A kill at any
 *               moment leaves a file trace-cmd report and fdr report read, with
 *               every page written so far.
 *
 * Lost records are counted exactly, per CPU: records overwritten before they
 * were read (overwrite mode) from the gaps in the rings' record counts, and
 * records refused (discard mode: buffer full) from the rings' counters. Both are
 * flagged in the pages trace-cmd report shows as "CPU:N [M EVENTS DROPPED]";
 * a refused count is attached to the first page written after it was seen.
 *
 * fdr record exits with the command's status, as time and perf record do (128 +
 * the signal that killed it, 127 when it cannot be found, 126 when it cannot be
 * run), once the file is written; 1 when fdr record itself fails.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

#include "fdr/fdr-ctl.h"
#include "fdr/fdr-read.h"
#include "fdr/fdr-tracedat.h"
#include "cli.h"

#define RECORD_BATCH_BYTES (1u << 20) /* pages per write */
#define RECORD_TAKE_MAX (16u << 20) /* bytes of pages per CPU per round */
#define RECORD_IDLE_US 500
#define RECORD_BUSY (256u << 10) /* a round that wrote less sleeps RECORD_IDLE_US */
#define RECORD_DRAIN_NS (2ull * 1000 * 1000 * 1000) /* at most, after the stop */
#define RECORD_WATCH_MS 10 /* the main thread's look at the command, the stop, the progress */
#define RECORD_META_MS 50 /* new events go into the file this soon */
#define RECORD_NAMES_MS 250 /* new pid->comm names this soon */
/* while recording: complete sub-buffers only, so that pages are full (none is a
 * round's few records); at the stop, everything */
#define RECORD_READ_FLAGS (FDR_READ_CONSUME | FDR_READ_HOLD | FDR_READ_COMPLETE)
#define RECORD_DRAIN_FLAGS (FDR_READ_CONSUME | FDR_READ_HOLD)

struct rec_cpu {
	struct fdr_reader *r; /* consuming, holding: committed once written */
	uint64_t refused_seen; /* the ring's refused count already accounted */
	uint64_t unflagged; /* refused, to flag in the next page written */
	uint64_t records; /* in the file */
	uint64_t bytes; /* of pages in the file */
	uint64_t overwritten; /* lost to overwrite (flagged in pages) */
	uint64_t refused; /* lost to discard, too big, nesting */
	/* for the progress line (atomics: the taker writes, the main thread reads) */
	uint64_t prog_events, prog_bytes, prog_lost;
};

static uint64_t rec_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void rec_close_cpus(struct rec_cpu *cpus, uint32_t nr)
{
	uint32_t i;

	for (i = 0; cpus && i < nr; i++)
		fdr_reader_close(cpus[i].r);
	free(cpus);
}

/* Account the records CPU @c's writers refused since the last look. */
static void rec_refused(struct rec_cpu *c)
{
	uint64_t refused = c->r ? fdr_reader_refused(c->r) : c->refused_seen;

	if (refused > c->refused_seen) {
		c->refused += refused - c->refused_seen;
		c->unflagged += refused - c->refused_seen;
	}
	c->refused_seen = refused; /* lower: somebody cleared the counters */
}

/*
 * A taker: the thread that moves the records of CPUs [first, first + n) into
 * the file (rec_pump()), round after round, until the main thread says stop;
 * then it drains what was written before the stop and ends. fdr record runs one
 * for all CPUs, unpinned; with -r PRIO, one per CPU, pinned to its CPU at
 * SCHED_FIFO priority PRIO.
 *
 * Why -r: on a shared machine a reader can be kept off its CPU for longer than
 * a buffer lasts (on the development VM, 20-30 ms, while 4 MiB of 48-byte
 * records lasts 4.4 ms at 20 M/s), whatever it does. A reader on the writers'
 * own CPU, at a priority that preempts them, runs whenever they do: when the
 * machine stops that CPU, it stops the writers too. The price is that the
 * pages are made on the writers' CPUs.
 */
struct rec_taker {
	struct fdr_session *s;
	struct fdr_tracedat_live *live;
	uint32_t idx, ps, first, n;
	size_t batch; /* pages per write */
	struct rec_cpu *cpus;
	int pin; /* the CPU to run on, -1: anywhere */
	int prio; /* SCHED_FIFO priority, 0: normal */
	unsigned char *buf; /* batch pages */
	pthread_t th;
	int started;
	/* read after the join */
	int err; /* a failed round's negative errno */
	int err_write; /* it was the file's write */
	uint32_t err_cpu;
	int pin_err, prio_err; /* refused affinity, priority: it ran anyway */
	uint64_t max_gap; /* longest time between two rounds' starts, before the stop */
	int draining; /* the readers take the writers' current sub-buffers too */
};

/*
 * At the stop: reopen CPU @cpu's reader without FDR_READ_COMPLETE, so that the
 * writer's current sub-buffer is taken too. Everything read was committed (each
 * round commits what it wrote), so the new reader starts where the old ended.
 */
static int rec_drain_reader(struct rec_taker *t, uint32_t cpu, struct rec_cpu *c)
{
	fdr_reader_close(c->r);
	c->r = NULL;
	return fdr_reader_open(t->s, t->idx, (int)cpu, RECORD_DRAIN_FLAGS, &c->r);
}

/*
 * One round over one CPU: its new records become pages, written to the file,
 * then committed. Returns the pages written, or a negative errno (t->err_write
 * set when it was the file's). What was read but not written stays in the ring.
 */
static int rec_pump(struct rec_taker *t, uint32_t cpu, struct rec_cpu *c)
{
	uint64_t moved = 0;
	int n, ret;

	do {
		struct fdr_raw_stats st = { 0 };

		rec_refused(c);
		n = fdr_reader_raw_pages(c->r, t->buf, t->ps, t->batch, &st);
		if (n == -ESTALE) {
			/* the buffers were resized: follow them (nothing was read) */
			fdr_reader_close(c->r);
			c->r = NULL;
			ret = fdr_reader_open(t->s, t->idx, (int)cpu,
					      t->draining ? RECORD_DRAIN_FLAGS : RECORD_READ_FLAGS,
					      &c->r);
			if (ret)
				return ret;
			c->refused_seen = fdr_reader_refused(c->r);
			return 0;
		}
		if (n <= 0)
			break;
		if (c->unflagged) {
			fdr_raw_page_add_missed(t->buf, t->ps, c->unflagged);
			c->unflagged = 0;
		}
		ret = fdr_tracedat_live_append(t->live, cpu, t->buf, (size_t)n * t->ps);
		if (ret) {
			t->err_write = 1;
			return ret; /* not committed: still in the ring */
		}
		/* in the file: now it is read */
		fdr_reader_commit(c->r);
		c->records += st.records;
		c->overwritten += st.lost;
		c->bytes += (uint64_t)n * t->ps;
		moved += (uint64_t)n * t->ps;
	} while ((size_t)n == t->batch && moved < RECORD_TAKE_MAX);
	__atomic_store_n(&c->prog_events, c->records, __ATOMIC_RELAXED);
	__atomic_store_n(&c->prog_bytes, c->bytes, __ATOMIC_RELAXED);
	__atomic_store_n(&c->prog_lost, c->overwritten + c->refused, __ATOMIC_RELAXED);
	return n < 0 ? n : (int)(moved / t->ps);
}

static int rec_stop_flag; /* atomic: takers drain, then end */
static int rec_failed; /* atomic: a taker failed, the others end at once */
static uint64_t rec_stop_at; /* when the stop was asked (before rec_stop_flag) */

static void *rec_take_main(void *arg)
{
	struct rec_taker *t = arg;
	uint64_t t_round;
	int stopping = 0;

	if (t->pin >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET((size_t)t->pin, &set);
		t->pin_err = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	}
	if (t->prio > 0) {
		struct sched_param sp = { .sched_priority = t->prio };

		t->prio_err = pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
	}
	t_round = rec_now_ns();
	for (;;) {
		uint64_t now = rec_now_ns(), got = 0;
		uint32_t i;

		if (!stopping && now - t_round > t->max_gap)
			t->max_gap = now - t_round; /* a round's work, sleep and time off the CPU */
		t_round = now;
		if (!stopping && __atomic_load_n(&rec_stop_flag, __ATOMIC_ACQUIRE)) {
			stopping = 1; /* this round drains what was written before the stop */
			t->draining = 1;
			for (i = 0; i < t->n; i++) {
				int err = rec_drain_reader(t, t->first + i, &t->cpus[t->first + i]);

				if (err) {
					t->err = err;
					t->err_cpu = t->first + i;
					__atomic_store_n(&rec_failed, 1, __ATOMIC_RELEASE);
					return NULL;
				}
			}
		}
		for (i = 0; i < t->n; i++) {
			uint32_t cpu = t->first + i;
			int k = rec_pump(t, cpu, &t->cpus[cpu]);

			if (k < 0) {
				t->err = k;
				t->err_cpu = cpu;
				__atomic_store_n(&rec_failed, 1, __ATOMIC_RELEASE);
				return NULL;
			}
			got += (uint64_t)k;
		}
		if (__atomic_load_n(&rec_failed, __ATOMIC_ACQUIRE))
			return NULL;
		if (stopping && (!got || rec_now_ns() - rec_stop_at > RECORD_DRAIN_NS))
			return NULL;
		if (got * t->ps < RECORD_BUSY) {
			/*
			 * Little to do: sleep rather than spin on small rounds. A recorder
			 * that sleeps is woken promptly when it shares its CPU; one that
			 * spins gets its fair share, and waits tens of ms on a busy machine.
			 */
			struct timespec d = { 0, RECORD_IDLE_US * 1000 };

			nanosleep(&d, NULL);
		}
	}
}

/* Tell the takers to drain and end (or to end, after a failure); wait for them. */
static void rec_takers_join(struct rec_taker *t, uint32_t nt)
{
	uint32_t i;

	rec_stop_at = rec_now_ns();
	__atomic_store_n(&rec_stop_flag, 1, __ATOMIC_RELEASE);
	for (i = 0; t && i < nt; i++) {
		if (t[i].started)
			pthread_join(t[i].th, NULL);
		t[i].started = 0;
	}
}

static void rec_human(uint64_t bytes, char *buf, size_t len)
{
	if (bytes >= 10ull << 20)
		snprintf(buf, len, "%.1f MiB", (double)bytes / (1 << 20));
	else
		snprintf(buf, len, "%.1f KiB", (double)bytes / 1024);
}

static int rec_set_tracing(struct fdr_session *s, const char *inst, int on)
{
	char pre[FDR_NAME_LEN + 16], path[256];

	inst_prefix(inst, pre, sizeof(pre));
	snprintf(path, sizeof(path), "%stracing_on", pre);
	return write_path(s, path, on ? "1\n" : "0\n", O_TRUNC);
}

/*
 * The child: the command to record, pointed at our session, once the parent
 * reads the buffers (a byte on @go; end of file: it gave up).
 */
static void rec_exec(char **cmd, int go)
{
	char c;

	if (read(go, &c, 1) != 1)
		_exit(126);
	close(go);
	if (session_path)
		setenv("FDR_DIR", session_path, 1);
	else
		setenv("FDR_SESSION", session_name, 1);
	execvp(cmd[0], cmd);
	fprintf(stderr, "fdr record: cannot run %s: %s\n", cmd[0], strerror(errno));
	/* as the shell says it: 127 not found, 126 found but not runnable */
	_exit(errno == ENOENT || errno == ENOTDIR ? 127 : 126);
}

/* tracing_on of instance @inst of the selected session, -1 if it does not exist yet. */
static int rec_tracing_before(const char *inst)
{
	struct fdr_session *s;
	char dir[4096];
	uint32_t idx;
	int on = -1;

	if (session_path)
		snprintf(dir, sizeof(dir), "%s", session_path);
	else if (fdr_session_dir(session_name, dir, sizeof(dir)))
		return -1;
	if (fdr_session_open(dir, &s))
		return -1;
	idx = inst_index(fdr_session_control(s), inst);
	if (idx < FDR_MAX_INSTANCES)
		on = (int)fdr_session_control(s)->instances[idx].tracing_on;
	fdr_session_close(s);
	return on;
}

/* The status fdr record exits with for the command's wait status @st. */
static int rec_cmd_status(int st)
{
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return 1;
}

/* The progress line (a terminal only): elapsed, events, MB/s, lost. */
static void rec_progress(const struct rec_cpu *cpus, uint32_t nr, uint64_t t0, uint64_t now,
			 uint64_t *t_last, uint64_t *by_last)
{
	uint64_t ev = 0, by = 0, lo = 0;
	uint32_t cpu;

	for (cpu = 0; cpu < nr; cpu++) {
		ev += __atomic_load_n(&cpus[cpu].prog_events, __ATOMIC_RELAXED);
		by += __atomic_load_n(&cpus[cpu].prog_bytes, __ATOMIC_RELAXED);
		lo += __atomic_load_n(&cpus[cpu].prog_lost, __ATOMIC_RELAXED);
	}
	fprintf(stderr, "\r%.1f s, %" PRIu64 " events, %.1f MB/s, %" PRIu64 " lost     ",
		(double)(now - t0) / 1e9, ev,
		now > *t_last ? (double)(by - *by_last) * 1e3 / (double)(now - *t_last) : 0.0, lo);
	*t_last = now;
	*by_last = by;
}

int cmd_record(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "instance", required_argument, NULL, 'i' },
		{ "events", required_argument, NULL, 'e' },
		{ "output", required_argument, NULL, 'o' },
		{ "buffer-size", required_argument, NULL, 'b' },
		{ "mode", required_argument, NULL, 'm' },
		{ "realtime", required_argument, NULL, 'r' },
		{ NULL, 0, NULL, 0 },
	};
	const char *inst = NULL, *out_path = "trace.dat", *mode = NULL, *kb = NULL;
	char *start_argv[2 * 64 + 8];
	int start_argc = 0, c, ret, nev = 0, tracing_before, progress;
	struct fdr_session *s = NULL;
	struct fdr_tracedat_live *live = NULL;
	struct rec_cpu *cpus = NULL;
	uint32_t idx, cpu, nr = 0, ps;
	uint64_t t0 = 0, t_end = 0, t_last, by_last = 0, t_meta, t_names, total = 0, bytes = 0;
	uint64_t lost = 0, max_gap = 0;
	struct rec_taker *takers = NULL;
	uint32_t nt = 0, ti;
	int rt_prio = 0, warned = 0, meta_warned = 0, write_failed = 0;
	pid_t child = -1;
	int child_status = 0, child_done = 0, nr_cpus, cmd_at, go[2] = { -1, -1 };
	unsigned long v;

	start_argv[start_argc++] = (char *)"record";
	optind = 0; /* 0, not 1: glibc then resets its permutation state too */
	while ((c = getopt_long(argc, argv, "+i:e:o:b:m:r:", opts, NULL)) != -1) {
		switch (c) {
		case 'i':
			inst = optarg;
			break;
		case 'e':
			if (nev == 64)
				return usage_error(argc, argv, optind - 1,
						   "expected at most 64 -e options");
			start_argv[start_argc++] = (char *)"-e";
			start_argv[start_argc++] = optarg;
			nev++;
			break;
		case 'o':
			if (!*optarg)
				return usage_error(argc, argv, optind - 1,
						   "expected an output file name, found ''");
			out_path = optarg;
			break;
		case 'b':
			ret = parse_uint_arg(argc, argv, optind - 1, "a buffer size in KiB per CPU",
					     4u << 20, &v);
			if (ret)
				return ret;
			kb = optarg;
			break;
		case 'm':
			if (strcmp(optarg, "overwrite") && strcmp(optarg, "discard"))
				return usage_error(
					argc, argv, optind - 1,
					"expected a mode 'overwrite' or 'discard', found '%s'",
					optarg);
			mode = optarg;
			break;
		case 'r':
			ret = parse_uint_arg(argc, argv, optind - 1,
					     "a SCHED_FIFO priority from 1 to 99", 99, &v);
			if (ret)
				return ret;
			if (v == 0)
				return usage_error(argc, argv, optind - 1,
						   "expected a SCHED_FIFO priority from 1 to 99, "
						   "found 0");
			rt_prio = (int)v;
			break;
		default:
			return usage_error(argc, argv, optind - 1, "unknown option");
		}
	}
	cmd_at = optind; /* cmd_start() parses options again */
	if (kb) {
		start_argv[start_argc++] = (char *)"-b";
		start_argv[start_argc++] = (char *)kb;
	}
	if (mode) {
		start_argv[start_argc++] = (char *)"-m";
		start_argv[start_argc++] = (char *)mode;
	}
	if (inst) {
		start_argv[start_argc++] = (char *)"-i";
		start_argv[start_argc++] = (char *)inst;
	}
	start_argv[start_argc] = NULL;

	/* the session, the events, tracing on: what fdr start does */
	tracing_before = rec_tracing_before(inst);
	ret = cmd_start(start_argc, start_argv);
	if (ret)
		return ret;
	ret = open_session(&s);
	if (ret)
		return ret;
	idx = inst_index(fdr_session_control(s), inst);
	if (idx == FDR_MAX_INSTANCES) {
		ret = die(1, "no instance '%s'", inst);
		goto out;
	}
	nr_cpus = fdr_ring_nr_cpus(s, idx);
	ret = fdr_tracedat_page_size(s, idx);
	if (nr_cpus <= 0 || ret < 0) {
		ret = die(1, "cannot read the instance's buffers: %s",
			  strerror(nr_cpus <= 0 ? -nr_cpus : -ret));
		goto out;
	}
	ps = (uint32_t)ret;
	cpus = calloc((size_t)nr_cpus, sizeof(*cpus));
	if (!cpus) {
		ret = die(1, "out of memory");
		goto out;
	}
	/* like trace-cmd record: the file holds what happens from now on */
	fdr_ring_clear(s, idx, -1);
	for (cpu = 0; cpu < (uint32_t)nr_cpus; cpu++, nr++) {
		struct rec_cpu *rc = &cpus[cpu];

		ret = fdr_reader_open(s, idx, (int)cpu, RECORD_READ_FLAGS, &rc->r);
		if (ret) {
			nr++;
			ret = ret == -EBUSY ? die(1,
						  "CPU %u: another process consumes this buffer "
						  "(fdr pipe or another fdr record?)",
						  cpu) :
					      die(1, "CPU %u: cannot read its buffer: %s", cpu,
						  strerror(-ret));
			goto out;
		}
		rc->refused_seen = fdr_reader_refused(rc->r);
	}
	/* a valid trace.dat from here on, whatever happens to this process */
	ret = fdr_tracedat_live_create(out_path, s, idx, ps, nr, &live);
	if (ret) {
		ret = ret == -EINVAL ?
			      die(1, "cannot write %s: expected a regular file", out_path) :
			      die(1, "cannot write %s: %s", out_path, strerror(-ret));
		goto out;
	}
	install_signals();
	if (cmd_at < argc) {
		if (pipe2(go, O_CLOEXEC) < 0) {
			ret = die(1, "cannot make a pipe: %s", strerror(errno));
			goto out;
		}
		fflush(NULL);
		child = fork();
		if (child < 0) {
			ret = die(1, "cannot fork: %s", strerror(errno));
			goto out;
		}
		if (child == 0) {
			close(go[1]);
			rec_exec(argv + cmd_at, go[0]);
		}
		close(go[0]);
		go[0] = -1;
	}
	/* after the fork: the child execs with no other thread around */
	progress = isatty(STDERR_FILENO);
	fprintf(stderr, "fdr record: recording %u CPU%s into %s%s\n", nr, nr == 1 ? "" : "s",
		out_path, child > 0 ? "" : " (Ctrl-C stops)");
	/*
	 * The takers: one for every CPU, or with -r one per CPU, pinned, at
	 * SCHED_FIFO priority. They block the signals: SIGINT and SIGTERM reach this
	 * thread, which watches the command, the stop and the progress.
	 */
	nt = rt_prio ? nr : 1;
	takers = calloc(nt, sizeof(*takers));
	if (!takers) {
		ret = die(1, "out of memory");
		goto stop;
	}
	{
		sigset_t all, old;
		size_t batch = RECORD_BATCH_BYTES / ps ? RECORD_BATCH_BYTES / ps : 1;

		sigfillset(&all);
		pthread_sigmask(SIG_BLOCK, &all, &old);
		for (ti = 0; ti < nt; ti++) {
			struct rec_taker *t = &takers[ti];

			*t = (struct rec_taker){ .s = s,
						 .live = live,
						 .idx = idx,
						 .ps = ps,
						 .batch = batch,
						 .cpus = cpus,
						 .first = rt_prio ? ti : 0,
						 .n = rt_prio ? 1 : nr,
						 .pin = rt_prio ? (int)ti : -1,
						 .prio = rt_prio };
			t->buf = malloc(batch * ps);
			if (!t->buf || pthread_create(&t->th, NULL, rec_take_main, t)) {
				pthread_sigmask(SIG_SETMASK, &old, NULL);
				ret = die(1, "cannot start the reader threads");
				goto stop;
			}
			t->started = 1;
		}
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
	t0 = t_last = t_meta = t_names = rec_now_ns();
	if (go[1] >= 0) {
		/* the takers run: the command may start */
		if (write(go[1], "g", 1) != 1)
			ret = die(1, "cannot start %s: %s", argv[cmd_at], strerror(errno));
		close(go[1]);
		go[1] = -1;
		if (ret)
			goto stop;
	}
	for (;;) {
		struct timespec d = { 0, RECORD_WATCH_MS * 1000 * 1000 };
		uint64_t now;

		if (__atomic_load_n(&rec_failed, __ATOMIC_ACQUIRE))
			break; /* the takers end; the error is reported below */
		if (child > 0 && !child_done && waitpid(child, &child_status, WNOHANG) == child)
			child_done = 1;
		if (stop_requested || child_done) {
			/* the takers drain what was written before the stop, then end */
			if (child > 0 && !child_done)
				kill(child, SIGTERM);
			break;
		}
		now = rec_now_ns();
		if (now - t_meta >= RECORD_META_MS * 1000000ull) {
			/* new events (and, less often, new names) into the file's metadata */
			int force = now - t_names >= RECORD_NAMES_MS * 1000000ull;
			int err = fdr_tracedat_live_update(live, force);

			if (err && !meta_warned) {
				fprintf(stderr,
					"fdr record: cannot add new event formats to %s: %s\n",
					out_path, strerror(-err));
				meta_warned = 1;
			}
			t_meta = now;
			if (force)
				t_names = now;
		}
		if (progress && now - t_last >= 1000000000ull)
			rec_progress(cpus, nr, t0, now, &t_last, &by_last);
		nanosleep(&d, NULL);
	}
	rec_takers_join(takers, nt);
	for (ti = 0; ti < nt; ti++) {
		struct rec_taker *t = &takers[ti];

		if (t->err && !ret) {
			ret = t->err_write ? die(1, "CPU %u: cannot write %s: %s", t->err_cpu,
						 out_path, strerror(-t->err)) :
					     die(1, "CPU %u: %s", t->err_cpu, strerror(-t->err));
			write_failed = t->err_write;
		}
		if (t->max_gap > max_gap)
			max_gap = t->max_gap;
		if ((t->pin_err || t->prio_err) && !warned) {
			fprintf(stderr, "fdr record: -r: a reader ran %s: %s\n",
				t->pin_err ? "unpinned" : "at normal priority",
				strerror(t->pin_err ? t->pin_err : t->prio_err));
			warned = 1;
		}
	}
stop:
	rec_takers_join(takers, nt);
	t_end = rec_now_ns();
	if (progress)
		fprintf(stderr, "\r%*s\r", 72, "");
	for (cpu = 0; cpu < nr; cpu++) {
		rec_refused(&cpus[cpu]); /* those after the last page: counted, flagged nowhere */
		fdr_reader_close(cpus[cpu].r);
		cpus[cpu].r = NULL; /* other readers may consume again */
		total += cpus[cpu].records;
		bytes += cpus[cpu].bytes;
		lost += cpus[cpu].overwritten + cpus[cpu].refused;
	}
	if (tracing_before == 0 || tracing_before == -1)
		rec_set_tracing(s, inst, 0); /* as it was (a new session: off) */
	if (ret && live && !bytes) {
		/* nothing recorded: no file rather than an empty one */
		fdr_tracedat_live_close(live, 1);
		live = NULL;
	} else if (ret && live) {
		fdr_tracedat_live_update(live, 1); /* the names known now, if it can */
		fprintf(stderr,
			"fdr record: %s holds the %" PRIu64 " events recorded before the error"
			"%s\n",
			out_path, total,
			write_failed ?
				"; the rest is still in the buffers (fdr show, fdr extract)" :
				"");
	}
	if (!ret && live) {
		struct fdr_tracedat_cpu *tc = calloc(nr, sizeof(*tc));
		double secs = (double)(t_end - t0) / 1e9; /* recording, not assembling */
		char hb[32];
		int err = tc ? 0 : -ENOMEM;

		for (cpu = 0; cpu < nr; cpu++) {
			const struct rec_cpu *rc = &cpus[cpu];

			rec_human(rc->bytes, hb, sizeof(hb));
			fprintf(stderr,
				"  CPU%u: %" PRIu64 " events, %s, %" PRIu64 " lost (%" PRIu64
				" overwritten, %" PRIu64 " refused)\n",
				cpu, rc->records, hb, rc->overwritten + rc->refused,
				rc->overwritten, rc->refused);
			if (tc)
				tc[cpu] = (struct fdr_tracedat_cpu){
					.fd = -1,
					.records = rc->records,
					.lost = rc->overwritten + rc->refused,
				};
		}
		/* compact, with every format and name: next to it, then renamed onto it */
		if (!err)
			err = fdr_tracedat_live_finish(live, tc);
		free(tc);
		if (err)
			fprintf(stderr,
				"fdr record: cannot write %s in its final form (%s): it is kept as "
				"recorded (trace.dat version 7, sparse), complete\n",
				out_path, strerror(-err));
		rec_human(bytes, hb, sizeof(hb));
		fprintf(stderr,
			"fdr record: %" PRIu64 " events, %" PRIu64
			" lost, %s of pages recorded in %.2f s (%.2f M events/s), written to %s\n",
			total, lost, hb, secs, secs > 0 ? (double)total / secs / 1e6 : 0.0,
			out_path);
		if (lost)
			/* why: long pauses want bigger buffers (-b) or -r */
			fprintf(stderr,
				"fdr record: longest pause between rounds %.1f ms; larger buffers "
				"(-b) or -r keep what such pauses lose\n",
				(double)max_gap / 1e6);
	}
out:
	if (go[1] >= 0)
		close(go[1]); /* the command does not run: fdr record failed before */
	if (go[0] >= 0)
		close(go[0]);
	if (child > 0 && !child_done) {
		int i;

		for (i = 0; i < 200 && waitpid(child, &child_status, WNOHANG) != child; i++) {
			struct timespec d = { 0, 10 * 1000 * 1000 };

			nanosleep(&d, NULL);
		}
		if (i == 200)
			fprintf(stderr, "fdr record: %s (pid %d) is still running\n", argv[cmd_at],
				(int)child);
		else
			child_done = 1;
	}
	if (child > 0 && child_done && !ret) {
		if (WIFEXITED(child_status) && WEXITSTATUS(child_status))
			fprintf(stderr, "fdr record: %s exited with status %d\n", argv[cmd_at],
				WEXITSTATUS(child_status));
		else if (WIFSIGNALED(child_status))
			fprintf(stderr, "fdr record: %s was killed by signal %d\n", argv[cmd_at],
				WTERMSIG(child_status));
		ret = rec_cmd_status(child_status); /* as time and perf record do */
	}
	rec_takers_join(takers, nt);
	for (ti = 0; takers && ti < nt; ti++)
		free(takers[ti].buf);
	free(takers);
	fdr_tracedat_live_close(live, 0);
	rec_close_cpus(cpus, nr);
	fdr_session_close(s);
	return ret;
}

int cmd_extract(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "instance", required_argument, NULL, 'i' },
		{ "snapshot", no_argument, NULL, 'S' },
		{ "output", required_argument, NULL, 'o' },
		{ NULL, 0, NULL, 0 },
	};
	const char *inst = NULL, *out_path = "trace.dat";
	struct fdr_tracedat_cpu cpus[FDR_MAX_CPUS];
	struct fdr_session *s;
	unsigned flags = 0;
	uint32_t idx, nr = 0, cpu;
	uint64_t total = 0, lost = 0, bytes = 0;
	int c, ret;

	optind = 0;
	while ((c = getopt_long(argc, argv, "i:o:", opts, NULL)) != -1) {
		switch (c) {
		case 'i':
			inst = optarg;
			break;
		case 'S':
			flags |= FDR_READ_SNAPSHOT;
			break;
		case 'o':
			if (!*optarg)
				return usage_error(argc, argv, optind - 1,
						   "expected an output file name, found ''");
			out_path = optarg;
			break;
		default:
			return usage_error(argc, argv, optind - 1, "unknown option");
		}
	}
	if (optind < argc)
		return usage_error(argc, argv, optind, "expected options only, found '%s'",
				   argv[optind]);
	ret = open_session(&s);
	if (ret)
		return ret;
	idx = inst_index(fdr_session_control(s), inst);
	if (idx == FDR_MAX_INSTANCES) {
		fdr_session_close(s);
		return die(1, "no instance '%s'", inst);
	}
	{
		/* a place we cannot write to is said as such before anything is read */
		char dir[4096];
		const char *slash = strrchr(out_path, '/');

		if (!slash)
			snprintf(dir, sizeof(dir), ".");
		else if (slash == out_path)
			snprintf(dir, sizeof(dir), "/");
		else
			snprintf(dir, sizeof(dir), "%.*s", (int)(slash - out_path), out_path);
		if (access(dir, W_OK | X_OK) < 0) {
			ret = errno;
			fdr_session_close(s);
			return die(1, "cannot write %s: %s", out_path, strerror(ret));
		}
	}
	ret = fdr_tracedat_extract(s, idx, flags, out_path, cpus, FDR_MAX_CPUS, &nr);
	fdr_session_close(s);
	if (ret == -EUCLEAN)
		return die_err(1, ret, "reading the %s", flags ? "snapshot" : "instance");
	if (ret)
		return die(1, "cannot save the %s to %s: %s", flags ? "snapshot" : "instance",
			   out_path, strerror(-ret));
	for (cpu = 0; cpu < nr; cpu++) {
		total += cpus[cpu].records;
		lost += cpus[cpu].lost;
		bytes += cpus[cpu].size;
	}
	fprintf(stderr,
		"fdr extract: %" PRIu64 " events (%" PRIu64 " lost before) from %u CPU%s, %" PRIu64
		" bytes of pages, written to %s\n",
		total, lost, nr, nr == 1 ? "" : "s", bytes, out_path);
	return 0;
}
