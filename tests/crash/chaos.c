// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * chaos.c - the shared-memory chaos test: corrupt what writers and readers read,
 * and check that nobody hangs or dies.
 *
 * usage: fdr-chaos FDR_CLI CHAOS_WRITER
 *   FDR_CHAOS_SEED=N    replay a run (the seed is printed first)
 *   FDR_CHAOS_ROUNDS=N  rounds (default 400, about 2500 mutations; CTest sets
 *                       250, and 50 under ASan, 20 under TSan)
 *   FDR_CHAOS_TIMEOUT=S seconds a tool may take before it counts as hung (10)
 *
 * A session (in $TMPDIR) has the top instance and instances/a, a filter and
 * triggers on chaos:tick, snapshot buffers in both, and two writers
 * (fdr-chaos-writer) writing all the time. Every round:
 *   1. mutates 1 to 12 fields of what writers and readers read: the
 *      control header, instances, the event registry, hook slots, compiled
 *      filters, triggers, cmdlines, ring headers, per-CPU headers, sub-buffer
 *      and record headers, with boundary values (0, 1, 2^31-1, 2^31+1, ~0, and
 *      random ones);
 *   2. starts a third writer that must register, map the rings, write 200
 *      events and exit 0 (this is where a traced program used to hang in its
 *      constructor);
 *   3. runs some of fdr show, pipe (stopped with SIGINT), stat, record (of a
 *      short command), extract, export ctf and export perfetto: each must end
 *      within the bound with 0, or 1 and a message on stderr; never a signal;
 *   4. checks that both writers are alive and their counters still move;
 *   5. puts the mutated bytes back.
 * Every 20 rounds (and after a round that left the session unusable) the session
 * is made again. A failure prints the round, its mutations and the seed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fdr/fdr-abi.h"
#include "proc.h"

static const char *cli, *writer_exe;
static char root[PATH_MAX - 64], dir[PATH_MAX], counters[PATH_MAX], out[PATH_MAX];
static uint64_t rng, seed;
static int timeout_s = 10;
static pid_t writers[2];
static volatile uint64_t *counter;
static int failures, round_no;
static unsigned long nr_mutations, nr_tools, nr_euclean;

static uint64_t rnd(void)
{
	/* xorshift64*: replayable from the seed */
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 2685821657736338717ull;
}

static uint64_t now_ms(void)
{
	return sc_now_ns() / 1000000;
}

static void sleep_ms(long ms)
{
	sc_sleep_us((uint64_t)ms * 1000);
}

/* ---- mutations ------------------------------------------------------------------------- */

#define MAX_MUTS 64

struct mutation {
	char file[64];
	uint64_t off;
	uint32_t size;
	unsigned char old[8];
	char what[160];
};

static struct mutation muts[MAX_MUTS];
static int nr_muts;

static uint64_t boundary(uint32_t size)
{
	static const uint64_t v32[] = { 0, 1, 0x7fffffffull, 0x80000001ull, 0xffffffffull };
	static const uint64_t v64[] = { 0,     1,	   0x7fffffffull, 0x80000001ull,
					~0ull, 1ull << 63, 0xffffffffull };
	uint64_t r = rnd();

	if (rnd() % 4 == 0)
		return size == 8 ? r :
		       size == 4 ? (uint32_t)r :
		       size == 2 ? (uint16_t)r :
				   (uint8_t)r;
	if (size == 8)
		return v64[r % (sizeof(v64) / sizeof(v64[0]))];
	if (size == 4)
		return v32[r % (sizeof(v32) / sizeof(v32[0]))];
	if (size == 2) {
		static const uint64_t v16[] = { 0, 1, 0x7fff, 0x8001, 0xffff };

		return v16[r % 5];
	}
	return (const uint64_t[]){ 0, 1, 0x7f, 0x81, 0xff }[r % 5];
}

/* Write @size bytes of @v at @off of session file @name, remembering the old bytes. */
static void mutate(const char *name, uint64_t off, uint32_t size, const char *field)
{
	char path[PATH_MAX + 64];
	struct mutation *m;
	uint64_t v = boundary(size);
	int fd;

	if (nr_muts == MAX_MUTS)
		return;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return;
	m = &muts[nr_muts];
	if (pread(fd, m->old, size, (off_t)off) != (ssize_t)size ||
	    pwrite(fd, &v, size, (off_t)off) != (ssize_t)size) {
		close(fd);
		return;
	}
	close(fd);
	snprintf(m->file, sizeof(m->file), "%s", name);
	m->off = off;
	m->size = size;
	snprintf(m->what, sizeof(m->what), "%s %s @%llu = %#llx", name, field,
		 (unsigned long long)off, (unsigned long long)v);
	nr_muts++;
	nr_mutations++;
}

static void restore(void)
{
	char path[PATH_MAX + 64];

	while (nr_muts > 0) {
		struct mutation *m = &muts[--nr_muts];
		int fd;

		snprintf(path, sizeof(path), "%s/%s", dir, m->file);
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (pwrite(fd, m->old, m->size, (off_t)m->off) != (ssize_t)m->size)
			perror("restore");
		close(fd);
	}
}

/* A control file field: @base_off + offsetof, sized. */
#define CTL_FIELD(base, type, field)                                                             \
	do {                                                                                     \
		mutate("control", (base) + offsetof(type, field),                                \
		       sizeof(((type *)0)->field) > 8 ? 8 : sizeof(((type *)0)->field), #field); \
	} while (0)

static uint32_t cur_gen(uint32_t inst)
{
	char path[PATH_MAX + 16];
	uint32_t gen = 0;
	int fd;

	snprintf(path, sizeof(path), "%s/control", dir);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	if (pread(fd, &gen, 4,
		  (off_t)(offsetof(struct fdr_abi_control, instances) +
			  inst * sizeof(struct fdr_abi_instance) +
			  offsetof(struct fdr_abi_instance, ring_gen))) != 4)
		gen = 0;
	close(fd);
	return gen;
}

static void mutate_control(void)
{
	static const struct {
		uint32_t off, size;
		const char *name;
	} hdr[] = {
#define H(f) { offsetof(struct fdr_abi_control, f), sizeof(((struct fdr_abi_control *)0)->f), #f }
		H(struct_size),	 H(version),	  H(magic),
		H(state),	 H(nr_cpus),	  H(gen),
		H(ts_source),	 H(session_id),	  H(cal_tsc),
		H(cal_mono_ns),	 H(tsc_khz),	  H(next_event_id),
		H(nr_events),	 H(cmdline_size), H(dropped_no_slot),
		H(hooks_active), H(pids_active),  H(instances_bound),
		H(events_bound),
#undef H
	};
	unsigned i = (unsigned)(rnd() % (sizeof(hdr) / sizeof(hdr[0])));

	/* the identity fields make everything refuse the session: rarely */
	if (hdr[i].off < offsetof(struct fdr_abi_control, state) && rnd() % 4)
		i = 4;
	mutate("control", hdr[i].off, hdr[i].size, hdr[i].name);
}

static void mutate_instance(void)
{
	uint32_t inst = (uint32_t)(rnd() % 2);
	uint64_t b = offsetof(struct fdr_abi_control, instances) +
		     inst * sizeof(struct fdr_abi_instance);
	uint64_t x = offsetof(struct fdr_abi_control, inst_ext) +
		     inst * sizeof(struct fdr_abi_instance_ext);

	switch (rnd() % 14) {
	case 0:
		CTL_FIELD(b, struct fdr_abi_instance, state);
		break;
	case 1:
		CTL_FIELD(b, struct fdr_abi_instance, tracing_on);
		break;
	case 2:
		CTL_FIELD(b, struct fdr_abi_instance, options);
		break;
	case 3:
		CTL_FIELD(b, struct fdr_abi_instance, clock);
		break;
	case 4:
		CTL_FIELD(b, struct fdr_abi_instance, ring_gen);
		break;
	case 5:
		CTL_FIELD(b, struct fdr_abi_instance, subbuf_size);
		break;
	case 6:
		CTL_FIELD(b, struct fdr_abi_instance, buffer_percent);
		break;
	case 7:
		CTL_FIELD(b, struct fdr_abi_instance, nr_pids);
		break;
	case 8:
		CTL_FIELD(b, struct fdr_abi_instance, pids[0]);
		break;
	case 9:
		CTL_FIELD(b, struct fdr_abi_instance, nr_pending);
		break;
	case 10:
		CTL_FIELD(b, struct fdr_abi_instance, error_seq);
		break;
	case 11:
		CTL_FIELD(x, struct fdr_abi_instance_ext, nr_notrace_pids);
		break;
	case 12:
		CTL_FIELD(x, struct fdr_abi_instance_ext, notrace_pids[0]);
		break;
	default:
		mutate("control",
		       b + offsetof(struct fdr_abi_instance, errors) +
			       (rnd() % FDR_ERROR_LOG_ENTRIES) * sizeof(struct fdr_abi_error) +
			       offsetof(struct fdr_abi_error, len),
		       4, "errors[].len");
	}
}

static void mutate_event(void)
{
	/* the first slots hold the built-in events and chaos:tick */
	uint64_t b = offsetof(struct fdr_abi_control, events) +
		     (rnd() % 8) * sizeof(struct fdr_abi_event);
	uint64_t f = b + offsetof(struct fdr_abi_event, fields) +
		     (rnd() % 8) * sizeof(struct fdr_abi_field);

	switch (rnd() % 12) {
	case 0:
		CTL_FIELD(b, struct fdr_abi_event, state);
		break;
	case 1:
		CTL_FIELD(b, struct fdr_abi_event, id);
		break;
	case 2:
		CTL_FIELD(b, struct fdr_abi_event, enabled[0]);
		break;
	case 3:
		CTL_FIELD(b, struct fdr_abi_event, nr_fields);
		break;
	case 4:
		CTL_FIELD(b, struct fdr_abi_event, payload_size);
		break;
	case 5:
		CTL_FIELD(b, struct fdr_abi_event, nr_print_args);
		break;
	case 6:
		CTL_FIELD(b, struct fdr_abi_event, print_args[rnd() % 4]);
		break;
	case 7:
		CTL_FIELD(f, struct fdr_abi_field, offset);
		break;
	case 8:
		CTL_FIELD(f, struct fdr_abi_field, size);
		break;
	case 9:
		CTL_FIELD(f, struct fdr_abi_field, kind);
		break;
	case 10:
		mutate("control", b + offsetof(struct fdr_abi_event, name) + FDR_NAME_LEN - 1, 1,
		       "name[last]");
		break;
	default:
		mutate("control", b + offsetof(struct fdr_abi_event, print_fmt) + rnd() % 16, 1,
		       "print_fmt[]");
	}
}

static void mutate_hooks(void)
{
	uint64_t h = offsetof(struct fdr_abi_control, hooks) +
		     (rnd() % 8) * sizeof(struct fdr_abi_hooks);
	uint64_t fl = offsetof(struct fdr_abi_control, filters) +
		      (rnd() % 4) * sizeof(struct fdr_abi_filter);
	uint64_t tr = offsetof(struct fdr_abi_control, triggers) +
		      (rnd() % 4) * sizeof(struct fdr_abi_trigger);
	uint64_t c = offsetof(struct fdr_abi_control, cmdlines) +
		     (rnd() % FDR_CMDLINE_SLOTS) * sizeof(struct fdr_abi_cmdline);

	switch (rnd() % 14) {
	case 0:
		CTL_FIELD(h, struct fdr_abi_hooks, filtered[0]);
		break;
	case 1:
		CTL_FIELD(h, struct fdr_abi_hooks, triggered[0]);
		break;
	case 2:
		CTL_FIELD(h, struct fdr_abi_hooks, filter[rnd() % 2]);
		break;
	case 3:
		CTL_FIELD(h, struct fdr_abi_hooks, trigger[rnd() % 2]);
		break;
	case 4:
		CTL_FIELD(fl, struct fdr_abi_filter, state);
		break;
	case 5:
		CTL_FIELD(fl, struct fdr_abi_filter, event_slot);
		break;
	case 6:
		mutate("control", fl + offsetof(struct fdr_abi_filter, prog) + 8 * (rnd() % 64),
		       1 << (rnd() % 4), "prog[]");
		break;
	case 7:
		CTL_FIELD(tr, struct fdr_abi_trigger, next);
		break;
	case 8:
		CTL_FIELD(tr, struct fdr_abi_trigger, cmd);
		break;
	case 9:
		CTL_FIELD(tr, struct fdr_abi_trigger, count);
		break;
	case 10:
		CTL_FIELD(tr, struct fdr_abi_trigger, target);
		break;
	case 11:
		CTL_FIELD(tr, struct fdr_abi_trigger, filter);
		break;
	case 12:
		CTL_FIELD(c, struct fdr_abi_cmdline, pid);
		break;
	default:
		mutate("control", c + offsetof(struct fdr_abi_cmdline, comm) + rnd() % FDR_COMM_LEN,
		       1, "comm[]");
	}
}

/* Read the header and CPU entries of ring.I.G to aim at its sub-buffers. */
static int ring_layout(const char *name, struct fdr_abi_ring *h, struct fdr_abi_cpu *c, uint32_t i)
{
	char path[PATH_MAX + 64];
	int fd, ok;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ok = pread(fd, h, sizeof(*h), 0) == (ssize_t)sizeof(*h) && h->nr_cpus &&
	     h->nr_cpus <= FDR_MAX_CPUS &&
	     pread(fd, c, sizeof(*c),
		   (off_t)(h->cpu_off + (uint64_t)(i % (2 * h->nr_cpus)) * sizeof(*c))) ==
		     (ssize_t)sizeof(*c);
	close(fd);
	return ok ? 0 : -1;
}

static void mutate_ring(void)
{
	uint32_t inst = (uint32_t)(rnd() % 2), entry = (uint32_t)rnd();
	char name[64];
	struct fdr_abi_ring h;
	struct fdr_abi_cpu c;
	uint64_t cb;

	snprintf(name, sizeof(name), "ring.%u.%u", inst, cur_gen(inst));
	if (ring_layout(name, &h, &c, entry))
		return;
	entry %= 2 * h.nr_cpus;
	cb = h.cpu_off + (uint64_t)entry * sizeof(c);
	switch (rnd() % 6) {
	case 0: {
		static const struct {
			uint32_t off, size;
			const char *name;
		} f[] = {
#define H(x) { offsetof(struct fdr_abi_ring, x), sizeof(((struct fdr_abi_ring *)0)->x), #x }
			H(magic),	    H(version),	  H(struct_size),  H(file_size),
			H(nr_cpus),	    H(gen),	  H(subbuf_size),  H(cpu_off),
			H(spare_allocated), H(snap_seq),  H(snap_lock_ns), H(saver_pid),
			H(saver_beat_ns),   H(saved_seq),
#undef H
		};
		unsigned i = (unsigned)(rnd() % (sizeof(f) / sizeof(f[0])));

		mutate(name, f[i].off, f[i].size, f[i].name);
		break;
	}
	case 1:
	case 2: {
		static const struct {
			uint32_t off, size;
			const char *name;
		} f[] = {
#define C(x) { offsetof(struct fdr_abi_cpu, x), sizeof(((struct fdr_abi_cpu *)0)->x), #x }
			C(head),      C(hdr_tag_a),  C(hdr_pos),      C(hdr_cum),
			C(hdr_tag_b), C(consumed),   C(consumed_cum), C(read_events),
			C(overrun),   C(base_cum),   C(reader_pid),   C(lost_pending),
			C(dropped),   C(nr_subbufs), C(subbuf_size),  C(data_off),
			C(active),    C(swap_ns),    C(subbuf_size),  C(nr_subbufs),
			C(data_off),
#undef C
		};
		unsigned i = (unsigned)(rnd() % (sizeof(f) / sizeof(f[0])));
		char what[64];

		snprintf(what, sizeof(what), "cpu entry %u %s", entry, f[i].name);
		mutate(name, cb + f[i].off, f[i].size, what);
		break;
	}
	default: {
		/* a sub-buffer header, or a record header somewhere in the data */
		uint64_t ss = c.subbuf_size, n = c.nr_subbufs, sb, off;

		if (ss < 4096 || ss > (1 << 20) || (ss & (ss - 1)) || n < 3 || n > 65536 ||
		    c.data_off + n * ss > h.file_size)
			return;
		sb = c.data_off + (rnd() % n) * ss;
		if (rnd() % 2) {
			static const char *const names[] = { "sub-buffer pos", "sub-buffer cum",
							     "sub-buffer cal_tsc" };
			unsigned i = (unsigned)(rnd() % 3);

			mutate(name, sb + 8 * i, 8, names[i]);
		} else {
			off = FDR_SUBBUF_HDR + 8 * (rnd() % ((ss - FDR_SUBBUF_HDR) / 8));
			mutate(name, sb + off, 4, "record len_type?");
		}
	}
	}
}

static void mutate_some(int n)
{
	int i;

	for (i = 0; i < n; i++) {
		switch (rnd() % 8) {
		case 0:
			mutate_control();
			break;
		case 1:
			mutate_instance();
			break;
		case 2:
			mutate_event();
			break;
		case 3:
			mutate_hooks();
			break;
		default:
			mutate_ring();
		}
	}
}

/* ---- processes ------------------------------------------------------------------------- */

static char last_err[4096];

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fail(const char *fmt, ...)
{
	va_list ap;
	int i;

	fprintf(stderr, "FAIL round %d: ", round_no);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n  mutations of the round:\n");
	for (i = 0; i < nr_muts; i++)
		fprintf(stderr, "    %s\n", muts[i].what);
	fprintf(stderr, "  replay: FDR_CHAOS_SEED=%llu FDR_CHAOS_ROUNDS=%d\n",
		(unsigned long long)seed, round_no + 1);
	failures++;
}

/* The output of the last run_tool(): how many bytes it wrote to stdout. */
static int out_fd = -1;

static pid_t spawn(char *const argv[], int err_fd)
{
	pid_t pid = fork();

	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);

		dup2(null, 0);
		dup2(out_fd >= 0 ? out_fd : null, 1);
		dup2(err_fd >= 0 ? err_fd : null, 2);
		setenv("FDR_DIR", dir, 1);
		execv(argv[0], argv);
		_exit(127);
	}
	return pid;
}

/*
 * Wait for @pid at most @ms; SIGKILL it after that. Returns its wait status,
 * or -1 if it had to be killed.
 */
static int wait_bounded(pid_t pid, long ms)
{
	int st = 0, ret = sc_wait(pid, &st, (int)ms, 0);

	if (ret == 0)
		return st;
	if (ret == -ETIMEDOUT && getenv("FDR_CHAOS_GDB")) {
		char cmd[128];

		/* where it hangs, for whoever replays the seed */
		snprintf(cmd, sizeof(cmd),
			 "gdb -p %d -batch -ex 'thread apply all bt' 2>&1 | grep '^#' >&2",
			 (int)pid);
		if (system(cmd) < 0)
			perror("gdb");
	}
	if (ret == -ETIMEDOUT)
		sc_kill_reap(pid, 5000, NULL, 0);
	return -1;
}

/*
 * Run a tool: it must end within the bound (after SIGINT at @int_ms if >= 0),
 * with 0, or with 1 or 2 (fdr(1)'s exit statuses) and something on stderr; never
 * by a signal.
 */
static void run_tool(const char *label, char *const argv[], long int_ms)
{
	char errpath[PATH_MAX + 16];
	int fd, st;
	pid_t pid;
	ssize_t n;

	snprintf(errpath, sizeof(errpath), "%s/stderr", root);
	fd = open(errpath, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	snprintf(errpath, sizeof(errpath), "%s/stdout", root);
	out_fd = open(errpath, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	pid = spawn(argv, fd);
	if (int_ms >= 0) {
		sleep_ms(int_ms);
		kill(pid, SIGINT);
	}
	st = wait_bounded(pid, (long)timeout_s * 1000);
	n = pread(fd, last_err, sizeof(last_err) - 1, 0);
	last_err[n > 0 ? n : 0] = 0;
	close(fd);
	nr_tools++;
	if (strstr(last_err, "Structure needs cleaning") || strstr(last_err, "corrupt"))
		nr_euclean++;
	if (st == -1)
		fail("%s: hung (killed after %d s)", label, timeout_s);
	else if (strstr(last_err, "Sanitizer") || strstr(last_err, "runtime error:"))
		fail("%s: a sanitizer found a bug\n%s", label, last_err);
	else if (WIFSIGNALED(st) && !(int_ms >= 0 && WTERMSIG(st) == SIGINT))
		/* (our SIGINT may come before the tool has its handler: that is not a crash) */
		fail("%s: killed by signal %d\n%s", label, WTERMSIG(st), last_err);
	else if (WIFSIGNALED(st))
		;
	else if (WEXITSTATUS(st) > 2)
		fail("%s: exit status %d (expected 0, 1 or 2: fdr(1))\n%s", label, WEXITSTATUS(st),
		     last_err);
	else if (WEXITSTATUS(st) && !last_err[0])
		fail("%s: exit status %d without a message", label, WEXITSTATUS(st));
	else if (!WEXITSTATUS(st) && !strncmp(label, "fdr s", 5) && lseek(out_fd, 0, SEEK_END) <= 0)
		/* show and stat print a header whatever the buffers hold */
		fail("%s: exit status 0 without output", label);
	close(out_fd);
	out_fd = -1;
}

static void cli_run(const char *label, long int_ms, ...)
{
	char *argv[32];
	va_list ap;
	int n = 0;

	argv[n++] = (char *)cli;
	va_start(ap, int_ms);
	while (n < 31 && (argv[n] = va_arg(ap, char *)))
		n++;
	va_end(ap);
	argv[n] = NULL;
	run_tool(label, argv, int_ms);
}

/* A setup command: must succeed. */
static int cli_must(const char *a, const char *b, const char *c, const char *d)
{
	char *argv[] = { (char *)cli, (char *)a, (char *)b, (char *)c, (char *)d, NULL };
	char errpath[PATH_MAX + 16], msg[4096];
	int fd, st;
	ssize_t n;

	snprintf(errpath, sizeof(errpath), "%s/stderr", root);
	fd = open(errpath, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	st = wait_bounded(spawn(argv, fd), 30000);
	n = pread(fd, msg, sizeof(msg) - 1, 0);
	msg[n > 0 ? n : 0] = 0;
	close(fd);
	if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st)) {
		fprintf(stderr, "setup: fdr %s %s %s %s failed:\n%s", a, b ? b : "", c ? c : "",
			d ? d : "", msg);
		return -1;
	}
	return 0;
}

/* Is chaos:tick registered yet (fdr cat events/chaos/tick/id succeeds)? */
static int cli_quiet_ok(void)
{
	char *argv[] = { (char *)cli, (char *)"cat", (char *)"events/chaos/tick/id", NULL };
	pid_t pid = spawn(argv, -1);
	int st = wait_bounded(pid, 30000);

	return st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

static pid_t start_writer(int wid, const char *count, const char *rate)
{
	char w[16];
	char *argv[] = { (char *)writer_exe, counters, w, (char *)count, (char *)rate, NULL };

	snprintf(w, sizeof(w), "%d", wid);
	return spawn(argv, -1);
}

static int rm_cb(const char *p, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)type;
	(void)ftw;
	remove(p);
	return 0;
}

static void stop_session(void)
{
	int i;

	for (i = 0; i < 2; i++) {
		if (writers[i] > 0) {
			kill(writers[i], SIGKILL);
			waitpid(writers[i], NULL, 0);
			writers[i] = 0;
		}
	}
	nftw(dir, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
}

static int make_session(void)
{
	int i;

	stop_session();
	if (cli_must("start", "-b", "16", NULL) || cli_must("mkdir", "instances/a", NULL, NULL) ||
	    cli_must("enable", "chaos:*", NULL, NULL) || cli_must("enable", "-i", "a", "chaos:*"))
		return -1;
	for (i = 0; i < 2; i++)
		writers[i] = start_writer(i, "0", "300");
	/* the writers register chaos:tick: then it has filter and trigger files */
	for (i = 0; i < 500 && !cli_quiet_ok(); i++)
		sleep_ms(10);
	if (cli_must("write", "events/chaos/tick/filter", "seq != 3", NULL) ||
	    cli_must("write", "instances/a/events/chaos/tick/filter", "wid < 60", NULL) ||
	    cli_must("write", "events/chaos/tick/trigger", "traceon if wid == 0", NULL) ||
	    cli_must("write", "instances/a/events/chaos/tick/trigger", "snapshot:3", NULL) ||
	    cli_must("snapshot", "alloc", NULL, NULL) || cli_must("snapshot", "alloc", "-i", "a"))
		return -1;
	return 0;
}

/* Both writers alive, and each counter moves within the bound. */
static void check_writers(void)
{
	int i;

	for (i = 0; i < 2; i++) {
		uint64_t before = __atomic_load_n(&counter[i], __ATOMIC_ACQUIRE), end;
		int st;

		if (waitpid(writers[i], &st, WNOHANG) == writers[i]) {
			fail("writer %d died (%s %d)", i, WIFSIGNALED(st) ? "signal" : "status",
			     WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
			writers[i] = start_writer(i, "0", "300");
			continue;
		}
		end = now_ms() + (uint64_t)timeout_s * 1000;
		while (__atomic_load_n(&counter[i], __ATOMIC_ACQUIRE) == before && now_ms() < end)
			sleep_ms(2);
		if (__atomic_load_n(&counter[i], __ATOMIC_ACQUIRE) == before)
			fail("writer %d made no progress in %d s", i, timeout_s);
	}
}

static void one_round(void)
{
	char wid[] = "2", count[] = "200", rate[] = "0";
	char *argv[] = { (char *)writer_exe, counters, wid, count, rate, NULL };
	char o1[PATH_MAX + 32], o2[PATH_MAX + 32];
	int st, k;
	pid_t pid;

	mutate_some(1 + (int)(rnd() % 12));
	/* a traced program starting now: registers, maps the rings, writes, exits */
	pid = spawn(argv, -1);
	st = wait_bounded(pid, (long)timeout_s * 1000);
	if (st == -1)
		fail("a new traced program hung (killed after %d s)", timeout_s);
	else if (!WIFEXITED(st) || WEXITSTATUS(st))
		fail("a new traced program ended with %s %d", WIFSIGNALED(st) ? "signal" : "status",
		     WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
	/* three of the readers each round, in turn */
	for (k = 0; k < 3; k++) {
		switch ((round_no * 3 + k) % 9) {
		case 0:
			cli_run("fdr show", -1, "show", NULL);
			break;
		case 1:
			cli_run("fdr show -i a", -1, "show", "-i", "a", NULL);
			break;
		case 2:
			cli_run("fdr pipe", 150, "pipe", NULL);
			break;
		case 3:
			cli_run("fdr stat", -1, "stat", NULL);
			break;
		case 4:
			snprintf(o1, sizeof(o1), "%s/r.dat", out);
			cli_run("fdr record", -1, "record", "-o", o1, "--", "/bin/true", NULL);
			break;
		case 5:
			snprintf(o1, sizeof(o1), "%s/x.dat", out);
			cli_run("fdr extract", -1, "extract", "-o", o1, NULL);
			break;
		case 6:
			snprintf(o2, sizeof(o2), "%s/ctf", out);
			cli_run("fdr export ctf", -1, "export", "--format", "ctf", "-o", o2, NULL);
			break;
		case 7:
			snprintf(o2, sizeof(o2), "%s/p.pftrace", out);
			cli_run("fdr export perfetto", -1, "export", "--format", "perfetto", "-o",
				o2, "-i", "a", NULL);
			break;
		default:
			cli_run("fdr stat -i a", -1, "stat", "-i", "a", NULL);
		}
	}
	check_writers();
}

int main(int argc, char **argv)
{
	const char *tmp = getenv("TMPDIR");
	int rounds, fd;

	if (argc != 3) {
		fprintf(stderr, "usage: %s FDR_CLI CHAOS_WRITER\n", argv[0]);
		return 2;
	}
	cli = argv[1];
	writer_exe = argv[2];
	seed = getenv("FDR_CHAOS_SEED") ? strtoull(getenv("FDR_CHAOS_SEED"), NULL, 0) :
					  (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
	rounds = getenv("FDR_CHAOS_ROUNDS") ? atoi(getenv("FDR_CHAOS_ROUNDS")) : 400;
	if (getenv("FDR_CHAOS_TIMEOUT"))
		timeout_s = atoi(getenv("FDR_CHAOS_TIMEOUT"));
	rng = seed ? seed : 1;
	printf("chaos: seed %llu (replay with FDR_CHAOS_SEED=%llu), %d rounds\n",
	       (unsigned long long)seed, (unsigned long long)seed, rounds);
	fflush(stdout);
	snprintf(root, sizeof(root), "%s/fdr-chaos.%d", tmp ? tmp : "/tmp", (int)getpid());
	snprintf(dir, sizeof(dir), "%s/s", root);
	snprintf(out, sizeof(out), "%s/out", root);
	snprintf(counters, sizeof(counters), "%s/counters", root);
	if (mkdir(root, 0700) || mkdir(out, 0700)) {
		perror(root);
		return 1;
	}
	fd = open(counters, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0 || ftruncate(fd, 4096))
		return 1;
	counter = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (counter == MAP_FAILED)
		return 1;
	signal(SIGPIPE, SIG_IGN);
	for (round_no = 0; round_no < rounds && failures < 5; round_no++) {
		if (round_no % 20 == 0 && make_session()) {
			failures++;
			break;
		}
		one_round();
		restore();
	}
	stop_session();
	nftw(root, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
	if (rounds > 0 && nr_mutations < (unsigned long)rounds) {
		fprintf(stderr,
			"FAIL: only %lu mutations in %d rounds: the session files were "
			"not there to mutate\n",
			nr_mutations, round_no);
		failures++;
	}
	printf("chaos: %d rounds, %lu mutations, %lu tool runs (%lu said the memory is "
	       "corrupt), %d failures\n",
	       round_no, nr_mutations, nr_tools, nr_euclean, failures);
	return failures ? 1 : 0;
}
