// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * record.c - fdr record and fdr extract: trace.dat files for trace-cmd report
 * and KernelShark.
 *
 * fdr record works like trace-cmd record. It enables the events (creating the
 * session if needed, as fdr start does), empties the instance's buffers, runs
 * the command if one is given, and until it exits (or SIGINT/SIGTERM) consumes
 * every CPU's buffer (docs/design/record.md):
 *
 *   recording   each round moves every CPU's completed sub-buffers, as they are,
 *               into that CPU's stage in memory (fdr_reader_take_subbufs_mem():
 *               one memcpy per contiguous run, no per-record work),
 *               RECORD_TAKE_CHUNK bytes per take, so that a discard-mode writer
 *               gets room back early. The flusher thread writes each stage to
 *               the CPU's spool file, in order, with direct I/O where the file
 *               system has it; a full stage leaves the rest in the ring until
 *               the flusher catches up. A round that moved less than RECORD_BUSY
 *               sleeps RECORD_IDLE_US: short enough that a 4 MiB buffer filled at
 *               1 GB/s does not overflow meanwhile, long enough that the
 *               recorder does not spin on tiny takes.
 *   stop        the writers' current sub-buffers are read record by record into
 *               pages (the tail); then each spool is read back through the
 *               reader's checks (fdr_reader_open_spool(): it came from shared
 *               memory) and turned into the kernel's ring-buffer pages: the
 *               per-record work, in user space, done once at the end (the ring's
 *               record layout is not the kernel's); then the tail's pages. They
 *               are copied into the trace.dat behind its header in the kernel
 *               (copy_file_range).
 *
 * Lost records are counted exactly, per CPU: records overwritten before they
 * were read (overwrite mode) from the gaps in the rings' record counts, and
 * records refused (discard mode: buffer full) from the rings' counters. Both are
 * flagged in the pages trace-cmd report shows as "CPU:N [M EVENTS DROPPED]";
 * a refused count is attached to the page holding the first record taken after
 * it was seen.
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
#include <sys/mman.h>
#include <sys/wait.h>

#include "fdr/fdr-ctl.h"
#include "fdr/fdr-read.h"
#include "fdr/fdr-tracedat.h"
#include "cli.h"

#define RECORD_BATCH 256 /* pages per write: 1 MiB of 4 KiB pages */
#define RECORD_CONVERT_BATCH 16 /* pages per write at the stop: they stay in the cache */
#define RECORD_TAKE_MAX (16u << 20) /* bytes of sub-buffers per CPU per round */
#define RECORD_TAKE_CHUNK (512u << 10) /* bytes per take */
#define RECORD_IDLE_US 500
#define RECORD_BUSY (256u << 10) /* a round that moved less sleeps RECORD_IDLE_US */
#define RECORD_DRAIN_NS (2ull * 1000 * 1000 * 1000) /* at most, after the stop */
#define RECORD_STAGE_CPU (64ull << 20) /* one CPU's stage, at most */
#define RECORD_STAGE_ALL (512ull << 20) /* all CPUs' stages together, at most ... */
#define RECORD_STAGE_MIN (4ull << 20) /* ... but each at least this */
#define RECORD_FLUSH_MAX (4u << 20) /* bytes per write of the flusher */
#define RECORD_FLUSH_IDLE_US 200
#define RECORD_WATCH_MS 10 /* the main thread's look at the command, the stop, the progress */

/* Records refused (discard mode) seen when the spool held @at records: flagged there. */
struct rec_mark {
	uint64_t at;
	uint64_t refused;
};

struct rec_cpu {
	struct fdr_reader *r;
	int spool_fd; /* the ring's sub-buffers as they were (fdr_reader_take_subbufs) */
	struct fdr_spool sp;
	/*
	 * The stage: sub-buffers taken from the ring (memcpy, so the ring's room
	 * comes back at once) and not yet written to the spool by the flusher
	 * thread. Positions count bytes since the start; the stage is a ring of
	 * stage_size bytes. stage_taken is the recorder's, stage_flushed the
	 * flusher's (atomics); stage_base (the position of spool offset 0) moves
	 * only while the stage is empty.
	 */
	unsigned char *stage;
	uint64_t stage_size;
	uint64_t stage_taken;
	uint64_t stage_flushed;
	uint64_t stage_base;
	int direct_fd; /* spool_fd opened again with O_DIRECT, -1: none (or refused) */
	int stalled; /* the last round found the stage full */
	struct rec_mark *marks; /* refused counts to flag in the pages made from sp */
	size_t nr_marks, max_marks;
	uint64_t unflagged; /* refused, to flag in the next page made */
	struct fdr_tracedat_cpu out; /* pages: spool fd, bytes, records, lost */
	unsigned char *tail; /* pages of the writer's last sub-buffer, read at the stop */
	size_t tail_pages;
	uint64_t refused_seen; /* the ring's refused count already accounted */
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

/*
 * The flusher: one thread that writes every CPU's staged sub-buffers to its
 * spool file, in order, at most RECORD_FLUSH_MAX bytes per write, with direct
 * I/O where the file system has it: the device then reads the stage itself, so
 * neither a CPU nor the page cache copies the data again. (Measured on the
 * development VM: copying 700 MB/s of sub-buffers into ext4 through the page
 * cache, copy_file_range from the ring, took 0.8 of a CPU and still lost records
 * when the disk or the flusher threads stalled it; memcpy into the stage takes
 * under a tenth of that, and the stage absorbs the disk's stalls.)
 */
struct rec_flusher {
	struct rec_cpu *cpus;
	uint32_t nr;
	int stop; /* atomic: the recorder is done taking; drain, then end */
	int err; /* atomic: the first failed write's negative errno */
	uint32_t err_cpu;
};

static int rec_flush_write(struct rec_cpu *c, const unsigned char *p, uint64_t n, uint64_t off)
{
	while (n) {
		int fd = c->direct_fd >= 0 ? c->direct_fd : c->spool_fd;
		ssize_t w = pwrite(fd, p, n, (off_t)off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && fd == c->direct_fd && (errno == EINVAL || errno == EOPNOTSUPP)) {
			close(c->direct_fd); /* not for this file: through the cache from now on */
			c->direct_fd = -1;
			continue;
		}
		if (w < 0)
			return -errno;
		if (w == 0)
			return -EIO;
		p += w;
		off += (uint64_t)w;
		n -= (uint64_t)w;
	}
	return 0;
}

static void *rec_flush_main(void *arg)
{
	struct rec_flusher *f = arg;

	for (;;) {
		int idle = 1;
		uint32_t cpu;

		for (cpu = 0; cpu < f->nr; cpu++) {
			struct rec_cpu *c = &f->cpus[cpu];
			/* acquire: the stage's bytes up to taken are in place, base with them */
			uint64_t taken = __atomic_load_n(&c->stage_taken, __ATOMIC_ACQUIRE);
			uint64_t done = __atomic_load_n(&c->stage_flushed, __ATOMIC_RELAXED);
			uint64_t at, n;
			int ret;

			if (taken == done)
				continue;
			at = done & (c->stage_size - 1);
			n = taken - done;
			if (n > c->stage_size - at)
				n = c->stage_size - at;
			if (n > RECORD_FLUSH_MAX)
				n = RECORD_FLUSH_MAX;
			ret = rec_flush_write(c, c->stage + at, n, done - c->stage_base);
			if (ret) {
				f->err_cpu = cpu;
				__atomic_store_n(&f->err, ret, __ATOMIC_RELEASE);
				return NULL;
			}
			/* release: the recorder may reuse the stage's bytes, or read the spool */
			__atomic_store_n(&c->stage_flushed, done + n, __ATOMIC_RELEASE);
			idle = 0;
		}
		if (idle) {
			struct timespec d = { 0, RECORD_FLUSH_IDLE_US * 1000 };

			if (__atomic_load_n(&f->stop, __ATOMIC_ACQUIRE))
				return NULL;
			nanosleep(&d, NULL);
		}
	}
}

/* Wait until the flusher has written CPU @c's whole stage. Returns 0 or its error. */
static int rec_stage_drain(struct rec_flusher *f, struct rec_cpu *c)
{
	while (__atomic_load_n(&c->stage_flushed, __ATOMIC_ACQUIRE) != c->stage_taken) {
		struct timespec d = { 0, RECORD_FLUSH_IDLE_US * 1000 };
		int err = __atomic_load_n(&f->err, __ATOMIC_ACQUIRE);

		if (err)
			return err;
		nanosleep(&d, NULL);
	}
	return 0;
}

/* Map CPU @c's stage: @per_cpu bytes (a power of two, of whole sub-buffers). */
static int rec_stage_init(struct rec_cpu *c, uint64_t per_cpu)
{
	const char *direct = getenv("FDR_RECORD_DIRECT");
	void *p = mmap(NULL, per_cpu, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (p == MAP_FAILED)
		return -errno;
	c->stage = p;
	c->stage_size = per_cpu;
	c->direct_fd = -1;
	if (!direct || strcmp(direct, "0") != 0) {
		char path[64];

		snprintf(path, sizeof(path), "/proc/self/fd/%d", c->spool_fd);
		c->direct_fd = open(path, O_WRONLY | O_DIRECT | O_CLOEXEC);
	}
	return 0;
}

/* Bytes of stage per CPU for @nr CPUs (see RECORD_STAGE_*). */
static uint64_t rec_stage_size(uint32_t nr)
{
	uint64_t want = RECORD_STAGE_ALL / (nr ? nr : 1), size = RECORD_STAGE_MIN;

	if (want > RECORD_STAGE_CPU)
		want = RECORD_STAGE_CPU;
	while (size * 2 <= want)
		size *= 2;
	return size;
}

static void rec_close_cpus(struct rec_cpu *cpus, uint32_t nr)
{
	uint32_t i;

	for (i = 0; cpus && i < nr; i++) {
		fdr_reader_close(cpus[i].r);
		if (cpus[i].out.fd >= 0)
			close(cpus[i].out.fd);
		if (cpus[i].spool_fd >= 0)
			close(cpus[i].spool_fd);
		if (cpus[i].direct_fd >= 0)
			close(cpus[i].direct_fd);
		if (cpus[i].stage)
			munmap(cpus[i].stage, cpus[i].stage_size);
		free(cpus[i].marks);
		free(cpus[i].tail);
	}
	free(cpus);
}

/* Append @n pages of @buf to the CPU's pages. */
static int rec_put_pages(struct rec_cpu *c, unsigned char *buf, size_t n, uint32_t ps)
{
	int ret;

	if (!n)
		return 0;
	if (c->unflagged) {
		fdr_raw_page_add_missed(buf, ps, c->unflagged);
		c->unflagged = 0;
	}
	ret = fdr_write_all(c->out.fd, buf, n * ps);
	if (!ret)
		c->out.size += (uint64_t)n * ps;
	return ret;
}

/*
 * Turn the CPU's spool of sub-buffers into pages (fdr_reader_open_spool() checks
 * every header and record, as a live read does) appended to its pages, then empty
 * the spool. Refused counts are flagged in the page holding the spool's record
 * they were seen at. Returns 0 or a negative errno.
 */
static int rec_convert(struct fdr_session *s, uint32_t inst, struct rec_cpu *c, unsigned char *buf,
		       uint32_t ps)
{
	struct fdr_reader *sr = NULL;
	uint64_t done = 0;
	size_t k = 0, m = 0;
	int n, ret = 0;

	if (c->sp.bytes) {
		ret = fdr_reader_open_spool(s, inst, c->spool_fd, &c->sp, &sr);
		if (ret)
			return ret;
	}
	while (sr) {
		struct fdr_raw_stats st = { 0 };
		unsigned char *page = buf + k * ps;

		/* one page per call: the records it holds place the refused flags */
		n = fdr_reader_raw_pages(sr, page, ps, 1, &st);
		if (n < 0) {
			ret = n;
			break;
		}
		if (n == 0)
			break;
		for (; m < c->nr_marks && c->marks[m].at < done + st.records; m++)
			fdr_raw_page_add_missed(page, ps, c->marks[m].refused);
		done += st.records;
		c->out.records += st.records;
		c->overwritten += st.lost;
		if (++k == RECORD_CONVERT_BATCH) {
			ret = rec_put_pages(c, buf, k, ps);
			k = 0;
			if (ret)
				break;
		}
	}
	fdr_reader_close(sr);
	if (!ret)
		ret = rec_put_pages(c, buf, k, ps);
	for (; m < c->nr_marks; m++)
		c->unflagged += c->marks[m].refused; /* no record after them: the next page */
	c->nr_marks = 0;
	memset(&c->sp, 0, sizeof(c->sp));
	if (!ret && ftruncate(c->spool_fd, 0) < 0)
		ret = -errno;
	return ret;
}

static int rec_mark(struct rec_cpu *c, uint64_t at, uint64_t refused)
{
	if (c->nr_marks == c->max_marks) {
		size_t max = c->max_marks ? 2 * c->max_marks : 16;
		struct rec_mark *p = realloc(c->marks, max * sizeof(*p));

		if (!p)
			return -ENOMEM;
		c->marks = p;
		c->max_marks = max;
	}
	c->marks[c->nr_marks++] = (struct rec_mark){ at, refused };
	return 0;
}

/* Publish CPU @c's figures for the progress line (the spools' headers' counts). */
static void rec_publish(struct rec_cpu *c)
{
	__atomic_store_n(&c->prog_events, c->out.records + c->sp.records, __ATOMIC_RELAXED);
	__atomic_store_n(&c->prog_bytes, c->out.size + c->sp.bytes, __ATOMIC_RELAXED);
	__atomic_store_n(&c->prog_lost, c->overwritten + c->sp.lost + c->refused, __ATOMIC_RELAXED);
}

/*
 * One round over one CPU: move its completed sub-buffers into its spool, in the
 * kernel. Returns the sub-buffers moved, or a negative errno.
 */
static int rec_pump(struct fdr_session *s, uint32_t inst, uint32_t cpu, struct rec_cpu *c,
		    struct rec_flusher *fl, unsigned char *buf, uint32_t ps)
{
	uint64_t refused, at = c->sp.records;
	uint64_t ss = fdr_session_control(s)->instances[inst].subbuf_size, chunk;
	int n, k = 0, ret;

	if (ss < 4096 || ss > (1u << 20) || (ss & (ss - 1)))
		ss = 4096; /* not a sub-buffer size (shared memory): the take checks its own */
	chunk = RECORD_TAKE_CHUNK > ss ? RECORD_TAKE_CHUNK : ss;

	/*
	 * In chunks: each take publishes the reader position when its copy is done,
	 * so a discard-mode writer gets room back every RECORD_TAKE_CHUNK bytes.
	 */
	n = 0;
	c->stalled = 0;
	do {
		uint64_t taken = c->stage_taken, before = c->sp.bytes;
		uint64_t pos = taken & (c->stage_size - 1), max = chunk;
		uint64_t room = c->stage_size -
				(taken - __atomic_load_n(&c->stage_flushed, __ATOMIC_ACQUIRE));

		if (max > room)
			max = room;
		if (max > c->stage_size - pos)
			max = c->stage_size - pos; /* the stage's end: the rest at its start */
		if (max < ss || ss > c->stage_size) {
			c->stalled = 1; /* the flusher is behind: the ring holds the rest */
			break;
		}
		k = fdr_reader_take_subbufs_mem(c->r, c->stage + pos, max, &c->sp);
		if (c->sp.bytes > before)
			/* release: the stage's bytes before the flusher sees them */
			__atomic_store_n(&c->stage_taken, taken + (c->sp.bytes - before),
					 __ATOMIC_RELEASE);
		if (k > 0)
			n += k;
		/* a take that was not full took all there was: the rest waits a round */
	} while (k > 0 && (uint64_t)k * ss >= chunk && (uint64_t)n * ss < RECORD_TAKE_MAX);
	if (k < 0 && !c->stalled)
		n = k;
	if (n == -ESTALE) {
		/* resized, or a snapshot swapped the buffers: keep what we have, follow */
		ret = rec_stage_drain(fl, c);
		if (!ret)
			ret = rec_convert(s, inst, c, buf, ps);
		if (ret)
			return ret;
		c->stage_base = c->stage_taken; /* the spool is empty again */
		fdr_reader_close(c->r);
		c->r = NULL;
		ret = fdr_reader_open(s, inst, (int)cpu, FDR_READ_CONSUME, &c->r);
		if (ret)
			return ret;
		c->refused_seen = fdr_reader_refused(c->r);
		return 0;
	}
	if (n <= 0)
		return n;
	refused = fdr_reader_refused(c->r);
	if (refused > c->refused_seen) {
		ret = rec_mark(c, at, refused - c->refused_seen);
		if (ret)
			return ret;
		c->refused += refused - c->refused_seen;
	}
	c->refused_seen = refused; /* lower: somebody cleared the counters */
	rec_publish(c);
	return n;
}

/*
 * At the stop: the records of the writer's current sub-buffer (not complete, so
 * not taken) go through the record path into pages, kept until the spool is
 * converted. Returns 0 or a negative errno.
 */
static int rec_tail(struct rec_cpu *c, uint32_t ps)
{
	struct fdr_raw_stats st = { 0 };
	uint64_t refused;
	int n;

	c->tail = malloc((size_t)RECORD_BATCH * ps);
	if (!c->tail)
		return -ENOMEM;
	n = fdr_reader_raw_pages(c->r, c->tail, ps, RECORD_BATCH, &st);
	if (n <= 0)
		return n == -ESTALE ? 0 : n;
	c->tail_pages = (size_t)n;
	c->out.records += st.records;
	c->overwritten += st.lost;
	refused = fdr_reader_refused(c->r);
	if (refused > c->refused_seen) {
		fdr_raw_page_add_missed(c->tail, ps, refused - c->refused_seen);
		c->refused += refused - c->refused_seen;
	}
	c->refused_seen = refused;
	return 0;
}

/* Account the refused records no page carried (none was read after them). */
static void rec_final_refused(struct rec_cpu *c)
{
	uint64_t refused = c->r ? fdr_reader_refused(c->r) : c->refused_seen;

	if (refused > c->refused_seen)
		c->refused += refused - c->refused_seen;
	c->refused_seen = refused;
}

/*
 * A taker: the thread that moves the completed sub-buffers of CPUs [first,
 * first + n) into their stages (rec_pump()), round after round, until the main
 * thread says stop; then it drains what was written before the stop and ends.
 * fdr record runs one for all CPUs, unpinned; with -r PRIO, one per CPU, pinned
 * to its CPU at SCHED_FIFO priority PRIO. The flusher stays unpinned, at normal
 * priority: the stage absorbs its pauses.
 *
 * Why -r: on a shared machine a reader can be kept off its CPU for longer than
 * a buffer lasts (on the development VM, 20-30 ms, while 4 MiB of 48-byte
 * records lasts 4.4 ms at 20 M/s), whatever it does. A reader on the writers'
 * own CPU, at a priority that preempts them, runs whenever they do: when the
 * machine stops that CPU, it stops the writers too. The price is that the
 * copies are made on the writers' CPUs (about an eighth of a CPU per GB/s).
 */
struct rec_taker {
	struct fdr_session *s;
	uint32_t idx, ps, first, n;
	struct rec_cpu *cpus;
	struct rec_flusher *fl;
	int pin; /* the CPU to run on, -1: anywhere */
	int prio; /* SCHED_FIFO priority, 0: normal */
	unsigned char *buf; /* pages for rec_convert() after -ESTALE */
	pthread_t th;
	int started;
	/* read after the join */
	int err; /* a failed take's negative errno */
	uint32_t err_cpu;
	int pin_err, prio_err; /* refused affinity, priority: it ran anyway */
	uint64_t max_gap; /* longest time between two rounds' starts, before the stop */
	uint64_t nr_stalled; /* rounds that found a stage full */
};

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
		int got = 0, stalled = 0;
		uint64_t now = rec_now_ns();
		uint32_t i;

		if (!stopping && now - t_round > t->max_gap)
			t->max_gap = now - t_round; /* a round's work, sleep and time off the CPU */
		t_round = now;
		if (!stopping && __atomic_load_n(&rec_stop_flag, __ATOMIC_ACQUIRE))
			stopping = 1; /* this round drains what was written before the stop */
		for (i = 0; i < t->n; i++) {
			uint32_t cpu = t->first + i;
			int k = rec_pump(t->s, t->idx, cpu, &t->cpus[cpu], t->fl, t->buf, t->ps);

			if (k < 0) {
				t->err = k;
				t->err_cpu = cpu;
				__atomic_store_n(&rec_failed, 1, __ATOMIC_RELEASE);
				return NULL;
			}
			got += k;
			stalled |= t->cpus[cpu].stalled;
		}
		t->nr_stalled += (uint64_t)stalled;
		if (__atomic_load_n(&rec_failed, __ATOMIC_ACQUIRE) ||
		    __atomic_load_n(&t->fl->err, __ATOMIC_ACQUIRE))
			return NULL;
		if (stopping &&
		    ((!got && !stalled) || rec_now_ns() - rec_stop_at > RECORD_DRAIN_NS))
			return NULL;
		if ((uint64_t)got * t->ps < RECORD_BUSY) {
			/*
			 * Little to do: sleep rather than spin on small takes. A recorder
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

/* The child: the command to record, pointed at our session. */
static void rec_exec(char **cmd)
{
	if (session_path)
		setenv("FDR_DIR", session_path, 1);
	else
		setenv("FDR_SESSION", session_name, 1);
	execvp(cmd[0], cmd);
	fprintf(stderr, "fdr record: cannot run %s: %s\n", cmd[0], strerror(errno));
	_exit(127);
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
	int start_argc = 0, c, ret, nev = 0, tracing_before, out_fd = -1, progress;
	struct fdr_session *s = NULL;
	struct rec_cpu *cpus = NULL;
	unsigned char *buf = NULL;
	uint32_t idx, cpu, nr = 0, ps;
	uint64_t t0 = 0, t_end = 0, t_last, ev_last = 0, total = 0, bytes = 0, lost = 0;
	uint64_t max_gap = 0, nr_stalled = 0;
	struct rec_taker *takers = NULL;
	uint32_t nt = 0, ti;
	int rt_prio = 0, warned = 0;
	uint64_t stage_size;
	pid_t child = -1;
	int child_status = 0, child_done = 0, nr_cpus, cmd_at, fl_started = 0;
	struct rec_flusher fl = { 0 };
	pthread_t fl_thread;
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
	out_fd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (out_fd < 0) {
		ret = die(1, "cannot create %s: %s", out_path, strerror(errno));
		goto out;
	}
	buf = malloc((size_t)RECORD_BATCH * ps);
	cpus = calloc((size_t)nr_cpus, sizeof(*cpus));
	if (!buf || !cpus) {
		ret = die(1, "out of memory");
		goto out;
	}
	stage_size = rec_stage_size((uint32_t)nr_cpus);
	for (cpu = 0; cpu < (uint32_t)nr_cpus; cpu++)
		cpus[cpu].out.fd = cpus[cpu].spool_fd = cpus[cpu].direct_fd = -1;
	/* like trace-cmd record: the file holds what happens from now on */
	fdr_ring_clear(s, idx, -1);
	for (cpu = 0; cpu < (uint32_t)nr_cpus; cpu++, nr++) {
		struct rec_cpu *rc = &cpus[cpu];

		rc->out.fd = fdr_tracedat_spool_open(out_path);
		if (rc->out.fd >= 0) {
			rc->spool_fd = fdr_tracedat_spool_open(out_path);
			if (rc->spool_fd < 0) {
				close(rc->out.fd);
				rc->out.fd = rc->spool_fd;
			}
		}
		if (rc->out.fd < 0) {
			ret = die(1, "cannot create a temporary file next to %s: %s", out_path,
				  strerror(-rc->out.fd));
			nr++;
			goto out;
		}
		ret = rec_stage_init(rc, stage_size);
		if (ret) {
			ret = die(1, "cannot map %" PRIu64 " MiB of stage memory: %s",
				  stage_size >> 20, strerror(-ret));
			nr++;
			goto out;
		}
		ret = fdr_reader_open(s, idx, (int)cpu, FDR_READ_CONSUME, &rc->r);
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
	install_signals();
	if (cmd_at < argc) {
		fflush(NULL);
		child = fork();
		if (child < 0) {
			ret = die(1, "cannot fork: %s", strerror(errno));
			goto out;
		}
		if (child == 0)
			rec_exec(argv + cmd_at);
	}
	/* after the fork: the child execs with no other thread around */
	fl.cpus = cpus;
	fl.nr = nr;
	if (pthread_create(&fl_thread, NULL, rec_flush_main, &fl)) {
		ret = die(1, "cannot start the flusher thread");
		goto out;
	}
	fl_started = 1;
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

		sigfillset(&all);
		pthread_sigmask(SIG_BLOCK, &all, &old);
		for (ti = 0; ti < nt; ti++) {
			struct rec_taker *t = &takers[ti];

			*t = (struct rec_taker){ .s = s,
						 .idx = idx,
						 .ps = ps,
						 .cpus = cpus,
						 .fl = &fl,
						 .first = rt_prio ? ti : 0,
						 .n = rt_prio ? 1 : nr,
						 .pin = rt_prio ? (int)ti : -1,
						 .prio = rt_prio,
						 .buf = buf };
			if (rt_prio)
				t->buf = malloc((size_t)RECORD_BATCH * ps);
			if (!t->buf || pthread_create(&t->th, NULL, rec_take_main, t)) {
				pthread_sigmask(SIG_SETMASK, &old, NULL);
				ret = die(1, "cannot start the reader threads");
				goto stop;
			}
			t->started = 1;
		}
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
	t0 = t_last = rec_now_ns();
	for (;;) {
		struct timespec d = { 0, RECORD_WATCH_MS * 1000 * 1000 };
		uint64_t now;

		if (__atomic_load_n(&rec_failed, __ATOMIC_ACQUIRE) ||
		    __atomic_load_n(&fl.err, __ATOMIC_ACQUIRE))
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
		if (progress && now - t_last >= 1000000000ull) {
			uint64_t ev = 0, by = 0, lo = 0;
			char hb[32];

			for (cpu = 0; cpu < nr; cpu++) {
				ev += __atomic_load_n(&cpus[cpu].prog_events, __ATOMIC_RELAXED);
				by += __atomic_load_n(&cpus[cpu].prog_bytes, __ATOMIC_RELAXED);
				lo += __atomic_load_n(&cpus[cpu].prog_lost, __ATOMIC_RELAXED);
			}
			rec_human(by, hb, sizeof(hb));
			fprintf(stderr,
				"\r%.2f M events/s, %" PRIu64 " events, %s, %" PRIu64 " lost   ",
				(double)(ev - ev_last) * 1e3 / (double)(now - t_last), ev, hb, lo);
			ev_last = ev;
			t_last = now;
		}
		nanosleep(&d, NULL);
	}
	rec_takers_join(takers, nt);
	for (ti = 0; ti < nt; ti++) {
		struct rec_taker *t = &takers[ti];

		if (t->err && !ret)
			ret = die(1, "CPU %u: %s", t->err_cpu, strerror(-t->err));
		if (t->max_gap > max_gap)
			max_gap = t->max_gap;
		nr_stalled += t->nr_stalled;
		if ((t->pin_err || t->prio_err) && !warned) {
			fprintf(stderr, "fdr record: -r: a reader ran %s: %s\n",
				t->pin_err ? "unpinned" : "at normal priority",
				strerror(t->pin_err ? t->pin_err : t->prio_err));
			warned = 1;
		}
	}
	{
		int err = __atomic_load_n(&fl.err, __ATOMIC_ACQUIRE);

		if (err && !ret)
			ret = die(1, "CPU %u: cannot write its spool next to %s: %s", fl.err_cpu,
				  out_path, strerror(-err));
	}
	if (ret)
		goto stop;
	ret = 0;
stop:
	rec_takers_join(takers, nt);
	t_end = rec_now_ns();
	if (progress)
		fprintf(stderr, "\r%*s\r", 72, "");
	if (fl_started) {
		int err;

		/* the flusher writes out what is staged, then ends */
		__atomic_store_n(&fl.stop, 1, __ATOMIC_RELEASE);
		pthread_join(fl_thread, NULL);
		fl_started = 0;
		err = __atomic_load_n(&fl.err, __ATOMIC_ACQUIRE);
		if (err && !ret)
			ret = die(1, "CPU %u: cannot write its spool next to %s: %s", fl.err_cpu,
				  out_path, strerror(-err));
	}
	/* the writers' current sub-buffers, before anything slower */
	for (cpu = 0; cpu < nr && !ret; cpu++) {
		ret = rec_tail(&cpus[cpu], ps);
		if (ret)
			ret = die(1, "CPU %u: %s", cpu, strerror(-ret));
	}
	for (cpu = 0; cpu < nr; cpu++)
		rec_final_refused(&cpus[cpu]);
	if (tracing_before == 0 || tracing_before == -1)
		rec_set_tracing(s, inst, 0); /* as it was (a new session: off) */
	for (cpu = 0; cpu < nr && !ret; cpu++) {
		struct rec_cpu *rc = &cpus[cpu];

		fdr_reader_close(rc->r);
		rc->r = NULL; /* other readers may consume again */
		/* the spool's sub-buffers become pages, then the tail's pages follow */
		ret = rec_convert(s, idx, rc, buf, ps);
		if (!ret)
			ret = rec_put_pages(rc, rc->tail, rc->tail_pages, ps);
		if (ret)
			ret = die(1, "CPU %u: cannot write its pages: %s", cpu, strerror(-ret));
		rc->out.lost = rc->overwritten + rc->refused;
	}
	if (!ret) {
		{
			/* the writer takes an array of the CPUs' spools and figures */
			struct fdr_tracedat_cpu *tc = calloc(nr, sizeof(*tc));

			for (cpu = 0; tc && cpu < nr; cpu++)
				tc[cpu] = cpus[cpu].out;
			ret = tc ? fdr_tracedat_write(out_fd, s, idx, 0, ps, tc, nr) : -ENOMEM;
			free(tc);
		}
		if (ret) {
			ret = die(1, "cannot write %s: %s", out_path, strerror(-ret));
		} else if (close(out_fd) < 0) {
			out_fd = -1;
			ret = die(1, "cannot write %s: %s", out_path, strerror(errno));
		} else {
			double secs = (double)(t_end - t0) / 1e9; /* recording, not assembling */
			char hb[32];

			out_fd = -1;
			for (cpu = 0; cpu < nr; cpu++) {
				const struct rec_cpu *rc = &cpus[cpu];

				rec_human(rc->out.size, hb, sizeof(hb));
				fprintf(stderr,
					"  CPU%u: %" PRIu64 " events, %s, %" PRIu64
					" lost (%" PRIu64 " overwritten, %" PRIu64 " refused)\n",
					cpu, rc->out.records, hb, rc->out.lost, rc->overwritten,
					rc->refused);
				total += rc->out.records;
				bytes += rc->out.size;
				lost += rc->out.lost;
			}
			rec_human(bytes, hb, sizeof(hb));
			fprintf(stderr,
				"fdr record: %" PRIu64 " events, %" PRIu64
				" lost, %s of pages recorded in %.2f s (%.2f M events/s), written to %s\n",
				total, lost, hb, secs, secs > 0 ? (double)total / secs / 1e6 : 0.0,
				out_path);
			if (lost)
				/* why: long pauses want bigger buffers, full stages a faster disk */
				fprintf(stderr,
					"fdr record: longest pause between rounds %.1f ms; "
					"rounds that found a stage full (the disk behind): %" PRIu64
					"\n",
					(double)max_gap / 1e6, nr_stalled);
		}
	}
out:
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
	}
	rec_takers_join(takers, nt);
	for (ti = 0; takers && ti < nt; ti++)
		if (takers[ti].buf != buf)
			free(takers[ti].buf);
	free(takers);
	if (fl_started) {
		__atomic_store_n(&fl.stop, 1, __ATOMIC_RELEASE);
		pthread_join(fl_thread, NULL);
	}
	if (out_fd >= 0)
		close(out_fd);
	rec_close_cpus(cpus, nr);
	free(buf);
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
