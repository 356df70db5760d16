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
#include "fdr/fdr-relay.h"
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
	uint32_t id_shift; /* fdr record -k: added to fdr's user event ids in the pages */
};

/*
 * fdr record -k: move fdr's user event ids (FDR_EVENT_ID_FIRST_USER on) of
 * @n pages of @ps bytes up by @shift, clear of the kernel's ids in the same
 * file (the file's formats say the same, fdr_tracedat_live_set_id_shift()).
 * The pages were just made by fdr_reader_raw_pages(): the kernel's page
 * layout, a u64 commit; each data record's payload starts with its u16 type.
 */
void rec_shift_ids(unsigned char *buf, size_t ps, size_t n, uint32_t shift)
{
	size_t i;

	for (i = 0; i < n && shift; i++) {
		unsigned char *page = buf + i * ps;
		uint64_t commit, pos = 16, end;

		memcpy(&commit, page + 8, 8);
		end = 16 + (commit & ((1u << 27) - 1));
		if (end > ps)
			end = ps;
		while (pos + 4 <= end) {
			uint32_t w, type, a0 = 0;
			uint64_t data, dlen;
			uint16_t id;

			memcpy(&w, page + pos, 4);
			type = w & 31;
			if ((type == 0 || type >= 29) && pos + 8 > end)
				break;
			if (type == 0 || type >= 29)
				memcpy(&a0, page + pos + 4, 4);
			if (type == 29) {
				if (!(w >> 5) || a0 < 4)
					break;
				pos += 4 + (uint64_t)a0;
				continue;
			}
			if (type >= 30) {
				pos += 8;
				continue;
			}
			if (type == 0) {
				if (a0 < 4)
					break;
				dlen = ((uint64_t)a0 - 4 + 3) & ~3ull;
				data = pos + 8;
			} else {
				dlen = (uint64_t)type * 4;
				data = pos + 4;
			}
			if (data + dlen > end || dlen < 2)
				break;
			memcpy(&id, page + data, 2);
			if (id >= FDR_EVENT_ID_FIRST_USER) {
				id = (uint16_t)(id + shift);
				memcpy(page + data, &id, 2);
			}
			pos = data + dlen;
		}
	}
}

/*
 * At the stop: CPU @c's reader takes the writer's current sub-buffer too, its
 * cursors where they are. Not a reader opened again: it would start the
 * snapshot buffer's cursor at its writer, and what a swap took out of the live
 * buffer since the last round would be skipped, counted nowhere.
 */
static void rec_drain_reader(struct rec_cpu *c)
{
	fdr_reader_set_complete(c->r, 0);
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
		rec_shift_ids(t->buf, t->ps, (size_t)n, t->id_shift);
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
/*
 * Tests (FDR_RECORD_TEST_LATE set): the takers do no round before the stop, as
 * on a machine that keeps them off the CPU until then; the stop's drain takes
 * everything (tests/integration/accounting.sh).
 */
static int rec_test_late;
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
			for (i = 0; i < t->n; i++)
				rec_drain_reader(&t->cpus[t->first + i]);
		}
		for (i = 0; i < t->n && (stopping || !rec_test_late); i++) {
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

/* One fdr record: what its steps share. */
struct rec {
	/* the options */
	struct cli_start_opts start; /* -i, -e, -b, -m: set up as fdr start does */
	const char *events[CLI_MAX_EVENTS];
	const char *kevents[CLI_MAX_KEVENTS]; /* -k */
	const char *out_path; /* -o */
	int rt_prio; /* -r, 0: none */
	char **cmd; /* the command to run, NULL-terminated; NULL: none */
	/* the recording */
	int tracing_before; /* the instance's tracing_on before, -1: none */
	struct fdr_session *s;
	struct fdr_tracedat_live *live;
	struct rec_cpu *cpus;
	uint32_t idx, nr, ps;
	struct rec_taker *takers;
	uint32_t nt;
	pid_t child;
	int child_status, child_done;
	int go[2]; /* a byte: the command may run */
	int progress; /* a progress line on stderr (a terminal) */
	uint64_t t0, t_end; /* the recording's start, end */
	/* the totals, after the stop */
	uint64_t total, bytes, lost, max_gap;
	int write_failed;
	/* -k: the linked kernel instance, made for this recording, removed at its end */
	int klinked;
	struct ktrace_rec k;
	uint32_t id_shift;
	char dir[4096];
	/* --relayd: the file sent at the end (rec_relay()) */
	int relayd, summarized;
	struct fdr_relay_url relay_url;
	char relay_host[256];
};

/* The options of fdr record into @r; 0, or the usage error's status. */
static int rec_parse(struct rec *r, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "instance", required_argument, NULL, 'i' },
		{ "events", required_argument, NULL, 'e' },
		{ "output", required_argument, NULL, 'o' },
		{ "buffer-size", required_argument, NULL, 'b' },
		{ "mode", required_argument, NULL, 'm' },
		{ "realtime", required_argument, NULL, 'r' },
		{ "kernel-events", required_argument, NULL, 'k' },
		{ "relayd", required_argument, NULL, 'R' },
		{ "hostname", required_argument, NULL, 'H' },
		{ NULL, 0, NULL, 0 },
	};
	struct cli_start_opts *so = &r->start;
	const char *hostname = NULL;
	unsigned long v;
	int c, ret;

	*so = (struct cli_start_opts){
		.events = r->events, .kevents = r->kevents, .argc = argc, .argv = argv, .b_argi = -1
	};
	optind = 0; /* 0, not 1: glibc then resets its permutation state too */
	while ((c = getopt_long(argc, argv, "+i:e:o:b:m:r:k:", opts, NULL)) != -1) {
		switch (c) {
		case 'i':
			so->inst = optarg;
			break;
		case 'e':
			if (so->nr_events == CLI_MAX_EVENTS)
				return usage_error(argc, argv, optind - 1,
						   "expected at most 64 -e options");
			r->events[so->nr_events++] = optarg;
			break;
		case 'k':
			if (so->nr_kevents == CLI_MAX_KEVENTS)
				return usage_error(argc, argv, optind - 1,
						   "expected at most 64 -k options");
			r->kevents[so->nr_kevents++] = optarg;
			break;
		case 'o':
			if (!*optarg)
				return usage_error(argc, argv, optind - 1,
						   "expected an output file name, found ''");
			r->out_path = optarg;
			break;
		case 'b':
			ret = parse_uint_arg(argc, argv, optind - 1, "a buffer size in KiB per CPU",
					     4u << 20, &v);
			if (ret)
				return ret;
			so->so.buffer_size_kb = (uint32_t)v; /* its bound: cli_session_setup() */
			so->b_argi = optind - 1;
			break;
		case 'm':
			ret = cli_parse_mode(argc, argv, optind - 1, optarg, &so->mode);
			if (ret)
				return ret;
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
			r->rt_prio = (int)v;
			break;
		case 'R': {
			struct fdr_buf err = { 0 };

			if (fdr_relay_parse_url(optarg, &r->relay_url, &err)) {
				ret = usage_error(argc, argv, optind - 1, "%.*s", (int)err.len,
						  err.data);
				fdr_buf_free(&err);
				return ret;
			}
			r->relayd = 1;
			break;
		}
		case 'H':
			hostname = optarg;
			break;
		default:
			return usage_error(argc, argv, optind - 1, "unknown option");
		}
	}
	if (hostname && !r->relayd)
		return usage_error(argc, argv, -1, "expected --hostname with --relayd only");
	if (r->relayd) {
		ret = cli_relay_hostname(hostname, r->relay_host, sizeof(r->relay_host));
		if (ret)
			return ret;
	}
	r->cmd = optind < argc ? argv + optind : NULL;
	return 0;
}

/*
 * --relayd: the finished file sent to LTTng's relay daemon as one trace chunk
 * (as fdr export --relayd FILE sends it); it stays on disk either way. 0 or 1.
 */
static int rec_relay(struct rec *r)
{
	struct fdr_export_stats st = { 0 };
	struct fdr_buf err = { 0 };
	struct fdr_trace *t = NULL;
	int ret = fdr_trace_open_file_ex(r->out_path, FDR_TRACE_ALL_BUFFERS, &t, &err);

	if (ret) {
		ret = die(1, "--relayd: cannot read %s: %s", r->out_path,
			  err.len ? err.data : strerror(-ret));
		fdr_buf_free(&err);
		return ret;
	}
	ret = cli_export_relay(t, &r->relay_url, r->relay_host, NULL, NULL, 0, r->out_path, &st);
	fdr_trace_close(t);
	if (ret)
		fprintf(stderr, "fdr record: %s is kept on disk\n", r->out_path);
	return ret ? 1 : 0;
}

/*
 * The instance's buffers, emptied, a consuming reader on each CPU, and the
 * output file, a valid trace.dat from here on. Returns 0 or the exit code.
 */
static int rec_open(struct rec *r)
{
	uint32_t cpu;
	int ret, nr_cpus;

	r->idx = inst_index(fdr_session_control(r->s), r->start.inst);
	if (r->idx == FDR_MAX_INSTANCES)
		return die(1, "no instance '%s'", r->start.inst);
	nr_cpus = fdr_ring_nr_cpus(r->s, r->idx);
	ret = fdr_tracedat_page_size(r->s, r->idx);
	if (nr_cpus <= 0 || ret < 0)
		return die(1, "cannot read the instance's buffers: %s",
			   strerror(nr_cpus <= 0 ? -nr_cpus : -ret));
	r->ps = (uint32_t)ret;
	r->cpus = calloc((size_t)nr_cpus, sizeof(*r->cpus));
	if (!r->cpus)
		return die(1, "out of memory");
	/* like trace-cmd record: the file holds what happens from now on */
	fdr_ring_clear(r->s, r->idx, -1);
	for (cpu = 0; cpu < (uint32_t)nr_cpus; cpu++, r->nr++) {
		struct rec_cpu *rc = &r->cpus[cpu];

		ret = fdr_reader_open(r->s, r->idx, (int)cpu, RECORD_READ_FLAGS, &rc->r);
		if (ret) {
			r->nr++;
			return ret == -EBUSY ? die(1,
						   "CPU %u: another process consumes this buffer "
						   "(fdr pipe or another fdr record?)",
						   cpu) :
					       die(1, "CPU %u: cannot read its buffer: %s", cpu,
						   strerror(-ret));
		}
		rc->refused_seen = fdr_reader_refused(rc->r);
	}
	/* a valid trace.dat from here on, whatever happens to this process */
	ret = fdr_tracedat_live_create(r->out_path, r->s, r->idx, r->ps, r->nr, &r->live);
	if (ret)
		return ret == -EINVAL ?
			       die(1, "cannot write %s: expected a regular file", r->out_path) :
			       die(1, "cannot write %s: %s", r->out_path, strerror(-ret));
	if (r->klinked) {
		/* fdr's ids above the kernel's: the two share the file's one id space */
		ret = ktrace_rec_begin(r->dir, &r->k);
		if (ret)
			return ret;
		if (r->k.max_id >= FDR_EVENT_ID_FIRST_USER)
			r->id_shift = r->k.max_id + 1 - FDR_EVENT_ID_FIRST_USER;
		ret = fdr_tracedat_live_set_id_shift(r->live, r->id_shift);
		if (ret)
			return die(1, "-k: cannot move fdr's event ids above the kernel's %u: %s",
				   r->k.max_id, strerror(-ret));
		/* its pages are taken while recording (rec_watch()), into spool files */
		ret = ktrace_rec_open(&r->k, r->out_path);
		if (ret)
			return ret;
	}
	return 0;
}

/* Fork the command, if there is one; it waits for a byte on r->go[1]. */
static int rec_spawn(struct rec *r)
{
	if (!r->cmd)
		return 0;
	if (pipe2(r->go, O_CLOEXEC) < 0)
		return die(1, "cannot make a pipe: %s", strerror(errno));
	fflush(NULL);
	r->child = fork();
	if (r->child < 0)
		return die(1, "cannot fork: %s", strerror(errno));
	if (r->child == 0) {
		close(r->go[1]);
		rec_exec(r->cmd, r->go[0]);
	}
	close(r->go[0]);
	r->go[0] = -1;
	return 0;
}

/*
 * The takers: one for every CPU, or with -r one per CPU, pinned, at
 * SCHED_FIFO priority. They block the signals: SIGINT and SIGTERM reach this
 * thread, which watches the command, the stop and the progress.
 */
static int rec_takers_start(struct rec *r)
{
	sigset_t all, old;
	size_t batch = RECORD_BATCH_BYTES / r->ps ? RECORD_BATCH_BYTES / r->ps : 1;
	uint32_t ti;

	rec_test_late = getenv("FDR_RECORD_TEST_LATE") != NULL;
	r->nt = r->rt_prio ? r->nr : 1;
	r->takers = calloc(r->nt, sizeof(*r->takers));
	if (!r->takers)
		return die(1, "out of memory");
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	for (ti = 0; ti < r->nt; ti++) {
		struct rec_taker *t = &r->takers[ti];

		*t = (struct rec_taker){ .s = r->s,
					 .live = r->live,
					 .idx = r->idx,
					 .ps = r->ps,
					 .batch = batch,
					 .cpus = r->cpus,
					 .first = r->rt_prio ? ti : 0,
					 .n = r->rt_prio ? 1 : r->nr,
					 .pin = r->rt_prio ? (int)ti : -1,
					 .prio = r->rt_prio,
					 .id_shift = r->id_shift };
		t->buf = malloc(batch * r->ps);
		if (!t->buf || pthread_create(&t->th, NULL, rec_take_main, t)) {
			pthread_sigmask(SIG_SETMASK, &old, NULL);
			return die(1, "cannot start the reader threads");
		}
		t->started = 1;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return 0;
}

/*
 * The main thread while the takers record: until the command exits, a stop is
 * asked or a taker fails, it adds new event formats and names to the file and
 * shows the progress.
 */
static void rec_watch(struct rec *r)
{
	uint64_t t_last = r->t0, t_meta = r->t0, t_names = r->t0, by_last = 0;
	int meta_warned = 0, ktake = r->klinked;

	for (;;) {
		struct timespec d = { 0, RECORD_WATCH_MS * 1000 * 1000 };
		uint64_t now;

		if (__atomic_load_n(&rec_failed, __ATOMIC_ACQUIRE))
			break; /* the takers end; the error is reported after */
		if (r->child > 0 && !r->child_done &&
		    waitpid(r->child, &r->child_status, WNOHANG) == r->child)
			r->child_done = 1;
		if (stop_requested || r->child_done) {
			/* the takers drain what was written before the stop, then end */
			if (r->child > 0 && !r->child_done)
				kill(r->child, SIGTERM);
			break;
		}
		if (ktake) {
			/* -k: the kernel instance's full pages, spliced into its spool files */
			int64_t moved = ktrace_rec_take(&r->k);

			if (moved < 0) {
				fprintf(stderr,
					"fdr record: -k: cannot take the kernel's pages while "
					"recording (%s): they are taken at the end\n",
					strerror((int)-moved));
				ktake = 0;
			}
		}
		now = rec_now_ns();
		if (now - t_meta >= RECORD_META_MS * 1000000ull) {
			/* new events (and, less often, new names) into the file's metadata */
			int force = now - t_names >= RECORD_NAMES_MS * 1000000ull;
			int err = fdr_tracedat_live_update(r->live, force);

			if (err && !meta_warned) {
				fprintf(stderr,
					"fdr record: cannot add new event formats to %s: %s\n",
					r->out_path, strerror(-err));
				meta_warned = 1;
			}
			t_meta = now;
			if (force)
				t_names = now;
		}
		if (r->progress && now - t_last >= 1000000000ull)
			rec_progress(r->cpus, r->nr, r->t0, now, &t_last, &by_last);
		nanosleep(&d, NULL);
	}
}

/* What the joined takers report: the first error (the exit code), warnings. */
static int rec_takers_result(struct rec *r)
{
	uint32_t ti;
	int ret = 0, warned = 0;

	for (ti = 0; ti < r->nt; ti++) {
		struct rec_taker *t = &r->takers[ti];

		if (t->err && !ret) {
			ret = t->err_write ? die(1, "CPU %u: cannot write %s: %s", t->err_cpu,
						 r->out_path, strerror(-t->err)) :
					     die(1, "CPU %u: %s", t->err_cpu, strerror(-t->err));
			r->write_failed = t->err_write;
		}
		if (t->max_gap > r->max_gap)
			r->max_gap = t->max_gap;
		if ((t->pin_err || t->prio_err) && !warned) {
			fprintf(stderr, "fdr record: -r: a reader ran %s: %s\n",
				t->pin_err ? "unpinned" : "at normal priority",
				strerror(t->pin_err ? t->pin_err : t->prio_err));
			warned = 1;
		}
	}
	return ret;
}

/* Record: the takers, then the command, until it ends or a stop; 0 or the exit code. */
static int rec_run(struct rec *r)
{
	int ret;

	/* after the fork: the child execs with no other thread around */
	r->progress = isatty(STDERR_FILENO);
	fprintf(stderr, "fdr record: recording %u CPU%s into %s%s\n", r->nr, r->nr == 1 ? "" : "s",
		r->out_path, r->child > 0 ? "" : " (Ctrl-C stops)");
	ret = rec_takers_start(r);
	if (ret)
		return ret;
	r->t0 = rec_now_ns();
	if (r->go[1] >= 0) {
		/* the takers run: the command may start */
		if (write(r->go[1], "g", 1) != 1)
			ret = die(1, "cannot start %s: %s", r->cmd[0], strerror(errno));
		close(r->go[1]);
		r->go[1] = -1;
		if (ret)
			return ret;
	}
	rec_watch(r);
	rec_takers_join(r->takers, r->nt);
	return rec_takers_result(r);
}

/*
 * After the recording (@ret: its exit code): the readers closed, the totals
 * counted, tracing_on as it was; after a failure, no file if nothing was
 * recorded, else the file as it is, with what it holds said.
 */
static void rec_stop(struct rec *r, int ret)
{
	uint32_t cpu;

	rec_takers_join(r->takers, r->nt);
	r->t_end = rec_now_ns();
	if (r->progress)
		fprintf(stderr, "\r%*s\r", 72, "");
	for (cpu = 0; cpu < r->nr; cpu++) {
		rec_refused(
			&r->cpus[cpu]); /* those after the last page: counted, flagged nowhere */
		fdr_reader_close(r->cpus[cpu].r);
		r->cpus[cpu].r = NULL; /* other readers may consume again */
		r->total += r->cpus[cpu].records;
		r->bytes += r->cpus[cpu].bytes;
		r->lost += r->cpus[cpu].overwritten + r->cpus[cpu].refused;
	}
	if (r->tracing_before == 0 || r->tracing_before == -1)
		rec_set_tracing(r->s, r->start.inst, 0); /* as it was (a new session: off) */
	if (ret && r->live && !r->bytes) {
		/* nothing recorded: no file rather than an empty one */
		fdr_tracedat_live_close(r->live, 1);
		r->live = NULL;
	} else if (ret && r->live) {
		fdr_tracedat_live_update(r->live, 1); /* the names known now, if it can */
		fprintf(stderr,
			"fdr record: %s holds the %" PRIu64 " events recorded before the error"
			"%s\n",
			r->out_path, r->total,
			r->write_failed ?
				"; the rest is still in the buffers (fdr show, fdr extract)" :
				"");
	}
}

/* After a recording without error: the per-CPU summary, the file in its final form. */
static void rec_summary(struct rec *r)
{
	struct fdr_tracedat_cpu *tc = calloc(r->nr, sizeof(*tc));
	double secs = (double)(r->t_end - r->t0) / 1e9; /* recording, not assembling */
	char hb[32];
	int err = tc ? 0 : -ENOMEM;
	uint32_t cpu;

	for (cpu = 0; cpu < r->nr; cpu++) {
		const struct rec_cpu *rc = &r->cpus[cpu];

		rec_human(rc->bytes, hb, sizeof(hb));
		fprintf(stderr,
			"  CPU%u: %" PRIu64 " events, %s, %" PRIu64 " lost (%" PRIu64
			" overwritten, %" PRIu64 " refused)\n",
			cpu, rc->records, hb, rc->overwritten + rc->refused, rc->overwritten,
			rc->refused);
		if (tc)
			tc[cpu] = (struct fdr_tracedat_cpu){
				.fd = -1,
				.records = rc->records,
				.lost = rc->overwritten + rc->refused,
			};
	}
	/* compact, with every format and name: next to it, then renamed onto it */
	if (!err && r->klinked) {
		struct fdr_tracedat_kbuf kb;
		uint64_t kbytes[2] = { 0, 0 };

		/* the kernel instance stopped, its pages behind fdr's (spliced) */
		err = ktrace_rec_end(&r->k, &kb) ? -EIO : 0;
		kb.bytes_out = kbytes;
		if (!err)
			err = fdr_tracedat_live_finish_kernel(r->live, tc, &kb);
		if (!err) {
			uint64_t live = 0;

			for (cpu = 0; cpu < r->k.nr_cpus; cpu++)
				live += r->k.spool_len[cpu];
			rec_human(kbytes[0], hb, sizeof(hb));
			fprintf(stderr,
				"fdr record: kernel instance %s: %u CPU%s, %s of pages (%" PRIu64
				" bytes spliced, %" PRIu64 " of them while recording), %u event "
				"format%s, %" PRIu64 " lost (the kernel's overrun and dropped "
				"counts)\n",
				r->k.l.instance, kb.nr_cpus, kb.nr_cpus == 1 ? "" : "s", hb,
				kbytes[1], live, kb.nr_formats, kb.nr_formats == 1 ? "" : "s",
				r->k.lost);
		}
	} else if (!err) {
		err = fdr_tracedat_live_finish(r->live, tc);
	}
	free(tc);
	if (err)
		fprintf(stderr,
			"fdr record: cannot write %s in its final form (%s): it is kept as "
			"recorded (trace.dat version 7, sparse), complete\n",
			r->out_path, strerror(-err));
	rec_human(r->bytes, hb, sizeof(hb));
	fprintf(stderr,
		"fdr record: %" PRIu64 " events, %" PRIu64
		" lost, %s of pages recorded in %.2f s (%.2f M events/s), written to %s\n",
		r->total, r->lost, hb, secs, secs > 0 ? (double)r->total / secs / 1e6 : 0.0,
		r->out_path);
	if (r->lost)
		/* why: long pauses want bigger buffers (-b) or -r */
		fprintf(stderr,
			"fdr record: longest pause between rounds %.1f ms; larger buffers "
			"(-b) or -r keep what such pauses lose\n",
			(double)r->max_gap / 1e6);
}

/*
 * The command's end, its status what fdr record exits with when fdr record
 * itself did not fail (@ret, returned otherwise). A command that fdr record
 * stopped (it ended, or Ctrl-C) is waited for 2 s at most. A command that still
 * runs because the recording failed under it (a full disk) is the user's work:
 * it is neither killed nor left behind running unseen; fdr record says so and
 * waits for it, until it ends or Ctrl-C.
 */
static int rec_reap(struct rec *r, int ret)
{
	int released = r->go[1] < 0;

	if (r->go[1] >= 0)
		close(r->go[1]); /* the command does not run: fdr record failed before */
	if (r->go[0] >= 0)
		close(r->go[0]);
	if (r->child > 0 && !r->child_done && ret && released && !stop_requested) {
		fprintf(stderr,
			"fdr record: recording stopped; waiting for %s (pid %d) to end "
			"(Ctrl-C stops waiting)\n",
			r->cmd[0], (int)r->child);
		while (!stop_requested) {
			pid_t w = waitpid(r->child, &r->child_status, 0);

			if (w == r->child) {
				r->child_done = 1;
				break;
			}
			if (w < 0 && errno != EINTR)
				break;
		}
	}
	if (r->child > 0 && !r->child_done) {
		int i;

		for (i = 0; i < 200 && waitpid(r->child, &r->child_status, WNOHANG) != r->child;
		     i++) {
			struct timespec d = { 0, 10 * 1000 * 1000 };

			nanosleep(&d, NULL);
		}
		if (i == 200)
			fprintf(stderr, "fdr record: %s (pid %d) is still running\n", r->cmd[0],
				(int)r->child);
		else
			r->child_done = 1;
	}
	if (r->child > 0 && r->child_done && !ret) {
		if (WIFEXITED(r->child_status) && WEXITSTATUS(r->child_status))
			fprintf(stderr, "fdr record: %s exited with status %d\n", r->cmd[0],
				WEXITSTATUS(r->child_status));
		else if (WIFSIGNALED(r->child_status))
			fprintf(stderr, "fdr record: %s was killed by signal %d\n", r->cmd[0],
				WTERMSIG(r->child_status));
		ret = rec_cmd_status(r->child_status); /* as time and perf record do */
	}
	return ret;
}

static void rec_free(struct rec *r)
{
	uint32_t ti;

	rec_takers_join(r->takers, r->nt);
	for (ti = 0; r->takers && ti < r->nt; ti++)
		free(r->takers[ti].buf);
	free(r->takers);
	fdr_tracedat_live_close(r->live, 0);
	rec_close_cpus(r->cpus, r->nr);
	fdr_session_close(r->s);
}

int cmd_record(int argc, char **argv)
{
	struct rec r = { .out_path = "trace.dat", .child = -1, .go = { -1, -1 } };
	int ret = rec_parse(&r, argc, argv), sent;

	if (ret)
		return ret;
	/* the session, the events, tracing on: what fdr start does */
	r.tracing_before = rec_tracing_before(r.start.inst);
	ret = cli_session_setup(&r.start);
	if (ret)
		return ret; /* a kernel instance it could not set up is removed already */
	/* -k linked a kernel instance to the session, the last step: it is this recording's */
	r.klinked = r.start.nr_kevents && session_dir(r.dir, sizeof(r.dir)) == 0;
	ret = open_session(&r.s);
	if (ret) {
		if (r.klinked)
			ktrace_unlink(r.dir);
		return ret;
	}
	ret = rec_open(&r);
	if (!ret) {
		install_signals();
		ret = rec_spawn(&r);
	}
	if (!ret) {
		ret = rec_run(&r);
		rec_stop(&r, ret);
		if (!ret && r.live) {
			rec_summary(&r);
			r.summarized = 1;
		}
	}
	ret = rec_reap(&r, ret);
	if (r.klinked) {
		int kret;

		ktrace_rec_free(&r.k); /* its files closed first: an open one keeps it busy */
		kret = ktrace_unlink(r.dir); /* fdr record's end removes its kernel instance */
		ret = ret ?: kret;
	}
	rec_free(&r);
	/* the file in its final form and closed: sent as it is (a failed recording is not) */
	sent = r.relayd && r.summarized ? rec_relay(&r) : 0;
	return ret ?: sent;
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

		ret = fdr_path_dir(out_path, dir, sizeof(dir));
		if (ret || access(dir, W_OK | X_OK) < 0) {
			ret = ret ? -ret : errno;
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
