/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * selfcheck.h - self-checking records, the reporting of checks (sc_ok()), private
 * roots and sessions for the stress and crash tests (tests/stress, tests/crash);
 * time and child processes come from proc.h, which it includes. Include it in
 * exactly one file of a binary: it defines the event stress:rec and a constructor.
 *
 * A record is the event stress:rec {wid, seq, len, csum, data[len]}:
 *   wid   writer id: one per writing thread; SC_SIG_BIT is set for records written
 *         from that thread's signal handler (a second, independent sequence)
 *   seq   0, 1, 2, ... per wid: one per call of the event, written or not
 *   len   bytes of data; a function of (seed, wid, seq), so it is checked too
 *   data  bytes that are a function of (wid, seq, i)
 *   csum  FNV-1a over wid, seq, len and data
 * A reader can thus tell a torn, shifted or invented record from a good one, and
 * count the records it missed from the gaps in each writer's sequence.
 *
 * A writer linked with libfdr only (no libfdr-ctl) defines SC_WRITER_ONLY first:
 * the helpers that use the control tree or readers are then left out (at -O0
 * unused static functions are still emitted, with their references).
 *
 * Isolation: the constructor below runs before the event's constructor and points
 * FDR_ROOT at a fresh private directory (inherited by the children we spawn), so
 * these tests never touch the user's sessions.
 *
 * The first process of a test (the driver) runs without libfdr's agent thread
 * (FDR_NO_AGENT=1) and attaches with fdr_sync(): libfdr never frees a session it
 * detached from (writers may still hold it), so a driver whose agent noticed the
 * session's destruction before exit would show that as a leak under ASan, or not,
 * depending on timing. The children it spawns get their agent back.
 */
#ifndef FDR_TEST_SELFCHECK_H
#define FDR_TEST_SELFCHECK_H

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fdr/fdr.h"
#include "fdr/fdr-ctl.h"
#include "fdr/fdr-read.h"
#include "proc.h"

/* clang-format off */
FDR_EVENT(stress, rec,
	FDR_PROTO(uint32_t wid, uint64_t seq, uint32_t len, uint32_t csum, const void *data),
	FDR_ARGS(wid, seq, len, csum, data),
	FDR_FIELDS(
		fdr_field_int(uint32_t, wid, wid)
		fdr_field_int(uint64_t, seq, seq)
		fdr_field_int(uint32_t, len, len)
		fdr_field_int(uint32_t, csum, csum)
		fdr_field_bytes(data, data, len)))
/* clang-format on */

typedef struct fdr__rec_stress_rec sc_rec_t;

#define SC_SIG_BIT 0x80000000u
#define SC_MAX_DATA 2000u

/* ---- record contents ------------------------------------------------------------------ */

static inline uint64_t sc_mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* A seed that gives every record @len data bytes (for boundary tests). */
#define SC_FIXED_SEED(len) (0xf1ed000000000000ull | (uint64_t)(len))

/* Mostly small records, some that fill a good part of a 4 KiB sub-buffer. */
static inline uint32_t sc_len(uint64_t seed, uint32_t wid, uint64_t seq)
{
	uint64_t r = sc_mix(seed ^ sc_mix(((uint64_t)wid << 40) ^ seq));
	uint32_t p = (uint32_t)(r % 100);

	if (seed >> 48 == 0xf1ed)
		return (uint32_t)(seed & 0xffff) < SC_MAX_DATA ? (uint32_t)(seed & 0xffff) :
								 SC_MAX_DATA;

	r >>= 8;
	if (p < 90)
		return (uint32_t)(r % 64);
	if (p < 99)
		return 64 + (uint32_t)(r % 448);
	return 512 + (uint32_t)(r % (SC_MAX_DATA - 512));
}

static inline void sc_fill(uint32_t wid, uint64_t seq, uint32_t len, unsigned char *buf)
{
	uint64_t x = sc_mix(((uint64_t)wid << 32) ^ seq ^ 0x5ca1ab1eull);
	uint32_t i;

	for (i = 0; i < len; i++) {
		if ((i & 7) == 0)
			x = sc_mix(x);
		buf[i] = (unsigned char)(x >> ((i & 7) * 8));
	}
}

static inline uint32_t sc_fnv(uint32_t h, const void *p, size_t n)
{
	const unsigned char *c = p;

	while (n--)
		h = (h ^ *c++) * 16777619u;
	return h;
}

static inline uint32_t sc_csum(uint32_t wid, uint64_t seq, uint32_t len, const unsigned char *d)
{
	uint32_t h = 2166136261u;

	h = sc_fnv(h, &wid, sizeof(wid));
	h = sc_fnv(h, &seq, sizeof(seq));
	h = sc_fnv(h, &len, sizeof(len));
	return sc_fnv(h, d, len);
}

/* Write record (wid, seq): async-signal-safe (the buffer is on the stack). */
static inline void sc_write(uint64_t seed, uint32_t wid, uint64_t seq)
{
	unsigned char buf[SC_MAX_DATA];
	uint32_t len = sc_len(seed, wid, seq);

	sc_fill(wid, seq, len, buf);
	fdr_stress_rec(wid, seq, len, sc_csum(wid, seq, len, buf), buf);
}

/* The id stress:rec has in the session's registry, or 0 if not registered yet. */
static SC_UNUSED uint32_t sc_event_id(struct fdr_session *s)
{
	const struct fdr_abi_control *c = fdr_session_control(s);
	uint32_t i;

	for (i = 0; i < FDR_MAX_EVENTS; i++) {
		const struct fdr_abi_event *e = &c->events[i];

		if (__atomic_load_n(&e->state, __ATOMIC_ACQUIRE) == FDR_EVENT_READY &&
		    strncmp(e->system, "stress", FDR_NAME_LEN) == 0 &&
		    strncmp(e->name, "rec", FDR_NAME_LEN) == 0)
			return e->id;
	}
	return 0;
}

/*
 * Check one record read back. @id: stress:rec's id (0: look it up). Fills
 * @wid/@seq and returns 0, or returns -1 with the reason in @why.
 */
static SC_UNUSED int sc_check(struct fdr_session *s, uint32_t *id, uint64_t seed,
			      const struct fdr_record *rec, uint32_t *wid, uint64_t *seq, char *why,
			      size_t why_len)
{
	unsigned char want[SC_MAX_DATA];
	sc_rec_t r;
	uint32_t off, dlen;

	if (rec->len < sizeof(r)) {
		snprintf(why, why_len, "record of %u bytes, shorter than the fixed part", rec->len);
		return -1;
	}
	memcpy(&r, rec->payload, sizeof(r));
	if (!*id)
		*id = sc_event_id(s);
	if (!*id || r.fdr__common.type != *id) {
		snprintf(why, why_len, "type %u, expected stress:rec (%u)", r.fdr__common.type,
			 *id);
		return -1;
	}
	*wid = r.wid;
	*seq = r.seq;
	off = r.data & 0xffff;
	dlen = r.data >> 16;
	if (off != sizeof(r) || dlen != r.len || rec->len != ((sizeof(r) + dlen + 7) & ~7u)) {
		snprintf(why, why_len,
			 "wid %#x seq %llu: torn length: rec %u, data_loc %u@%u, len %u", r.wid,
			 (unsigned long long)r.seq, rec->len, dlen, off, r.len);
		return -1;
	}
	if (r.len != sc_len(seed, r.wid, r.seq)) {
		snprintf(why, why_len, "wid %#x seq %llu: len %u, expected %u", r.wid,
			 (unsigned long long)r.seq, r.len, sc_len(seed, r.wid, r.seq));
		return -1;
	}
	sc_fill(r.wid, r.seq, r.len, want);
	if (memcmp(want, rec->payload + off, r.len) != 0 ||
	    sc_csum(r.wid, r.seq, r.len, rec->payload + off) != r.csum) {
		snprintf(why, why_len, "wid %#x seq %llu: bad data or checksum", r.wid,
			 (unsigned long long)r.seq);
		return -1;
	}
	if (r.fdr__common.pid <= 0 ||
	    r.fdr__common.preempt_count > ((r.wid & SC_SIG_BIT) ? 1 : 0)) {
		snprintf(why, why_len, "wid %#x seq %llu: bad common header (pid %d, depth %u)",
			 r.wid, (unsigned long long)r.seq, r.fdr__common.pid,
			 r.fdr__common.preempt_count);
		return -1;
	}
	return 0;
}

/* ---- reporting ---------------------------------------------------------------------- */

static int sc_passed, sc_failed;

static SC_UNUSED __attribute__((format(printf, 2, 3))) int sc_ok(int cond, const char *fmt, ...)
{
	va_list ap;

	if (cond) {
		sc_passed++;
		return 1;
	}
	sc_failed++;
	printf("FAIL: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	return 0;
}

static SC_UNUSED int sc_summary(void)
{
	printf("%d passed, %d failed\n", sc_passed, sc_failed);
	fflush(stdout);
	return sc_failed ? 1 : 0;
}

/*
 * Check that child @pid exits with status 0 within @timeout_ms (after that it is
 * SIGKILLed and reaped, and the check fails as a hang); @who names it.
 */
static SC_UNUSED int sc_exited_ok(pid_t pid, int timeout_ms, const char *who)
{
	char buf[80];
	int st = 0, ret;

	if (pid <= 0)
		return sc_ok(0, "%s did not start", who);
	ret = sc_wait(pid, &st, timeout_ms, 0);
	if (ret == -ETIMEDOUT) {
		sc_kill_reap(pid, 5000, NULL, 0);
		return sc_ok(0, "%s hung (still running after %d ms)", who, timeout_ms);
	}
	return sc_ok(ret == 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s: %s", who,
		     ret ? strerror(-ret) : sc_status_str(st, buf, sizeof(buf)));
}

/* ---- isolation and sessions ------------------------------------------------------------ */

static char sc_root[PATH_MAX]; /* set in the process that made the root */

/*
 * Before the event constructor: the first process of a test makes a private
 * FDR_ROOT; the children it spawns find SC_TEST_ROOT and share it.
 */
__attribute__((constructor(101))) static void sc_isolate(void)
{
	const char *tmp = getenv("TMPDIR");
	const char *have = getenv("SC_TEST_ROOT");
	char dir[PATH_MAX];

	if (have && *have) {
		setenv("FDR_ROOT", have, 1);
	} else {
		/* /dev/shm if we can: a disk-backed ring would be written back to disk */
		snprintf(dir, sizeof(dir), "/dev/shm/fdr-test.XXXXXX");
		if (!mkdtemp(dir)) {
			snprintf(dir, sizeof(dir), "%s/fdr-test.XXXXXX",
				 tmp && *tmp ? tmp : "/tmp");
			if (!mkdtemp(dir)) {
				perror("mkdtemp");
				_exit(2);
			}
		}
		snprintf(sc_root, sizeof(sc_root), "%s", dir);
		setenv("SC_TEST_ROOT", dir, 1);
		setenv("FDR_ROOT", dir, 1);
		setenv("FDR_NO_AGENT", "1", 1);
	}
	setenv("FDR_SESSION", "t", 1);
}

static int sc_rm(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)type;
	(void)ftw;
	remove(path);
	return 0;
}

/* Remove the private root (in the process that made it); idempotent. FDR_TEST_KEEP=1 keeps it. */
static SC_UNUSED void sc_cleanup_root(void)
{
	const char *keep = getenv("FDR_TEST_KEEP");

	if (sc_root[0] && keep && *keep == '1')
		printf("kept %s\n", sc_root);
	else if (sc_root[0])
		nftw(sc_root, sc_rm, 16, FTW_DEPTH | FTW_PHYS);
	sc_root[0] = 0;
}

static SC_UNUSED int sc_session_dir(char *buf, size_t len)
{
	return fdr_session_dir("t", buf, len);
}

#ifndef SC_WRITER_ONLY /* the control tree and readers are in libfdr-ctl */
/* One write(2) to a control file; returns what fdr_file_write() returned. */
static SC_UNUSED ssize_t sc_ctl_write(struct fdr_session *s, const char *path, int flags,
				      const char *text)
{
	struct fdr_file *f;
	ssize_t ret = fdr_file_open(s, path, O_WRONLY | flags, &f);

	if (ret)
		return ret;
	ret = fdr_file_write(f, text, strlen(text));
	if (ret < 0)
		fprintf(stderr, "write %s '%s': %s\n", path, text, fdr_file_error(f));
	fdr_file_close(f);
	return ret;
}

/* Create session "t" in the private root and enable stress:* (also when registered later). */
static SC_UNUSED int sc_session_create(const struct fdr_session_opts *o, struct fdr_session **out)
{
	char dir[PATH_MAX];
	ssize_t w;
	int ret = sc_session_dir(dir, sizeof(dir));

	if (ret)
		return ret;
	ret = fdr_session_create(dir, o, out);
	if (ret)
		return ret;
	w = sc_ctl_write(*out, "set_event", O_TRUNC, "stress:*");
	return w < 0 ? (int)w : 0;
}

#endif /* SC_WRITER_ONLY */

/* In a writer: wait until stress:rec records (attach + enable), at most @ms. */
static SC_UNUSED int sc_wait_enabled(int ms)
{
	uint64_t end = sc_now_ns() + (uint64_t)ms * 1000000ull;

	while (!fdr_event_enabled(stress, rec)) {
		if (sc_now_ns() > end)
			return -ETIMEDOUT;
		fdr_sync();
		if (!fdr_event_enabled(stress, rec))
			sc_sleep_us(1000);
	}
	return 0;
}

/* The CPUs the first caller of sc_pin() could run on (once, for all threads). */
static cpu_set_t sc_allowed;
static int sc_allowed_ok;
static pthread_once_t sc_allowed_once = PTHREAD_ONCE_INIT;

static SC_UNUSED void sc_allowed_init(void)
{
	CPU_ZERO(&sc_allowed);
	sc_allowed_ok = sched_getaffinity(0, sizeof(sc_allowed), &sc_allowed) == 0;
}

/* Pin the calling thread to the @idx-th CPU it may run on; returns the CPU or -1. */
static SC_UNUSED int sc_pin(int idx)
{
	cpu_set_t one;
	int cpu, k = 0;

	/* threads pin themselves concurrently: the set is made once (TSan saw the race) */
	pthread_once(&sc_allowed_once, sc_allowed_init);
	if (!sc_allowed_ok)
		return -1;
	for (cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		if (!CPU_ISSET(cpu, &sc_allowed) || k++ != idx)
			continue;
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		return sched_setaffinity(0, sizeof(one), &one) ? -1 : cpu;
	}
	return -1;
}

/* ---- writers to kill ------------------------------------------------------------------- */

/* Write records (wid @wid, seq 0, 1, ...) at full speed: @cap of them (0: forever). */
static SC_UNUSED void sc_write_run(uint64_t seed, uint32_t wid, uint64_t cap)
{
	uint64_t seq;

	for (seq = 0; !cap || seq < cap; seq++)
		sc_write(seed, wid, seq);
}

/* What sc_writer_child()'s second thread and signal handler write (one child each). */
static struct {
	uint64_t seed, cap, sig_seq;
	uint32_t wid;
} sc_child;

static SC_UNUSED void *sc_child_thread(void *arg)
{
	(void)arg;
	sc_write_run(sc_child.seed, sc_child.wid + 1, sc_child.cap);
	for (;;)
		pause();
	return NULL;
}

static SC_UNUSED void sc_child_on_prof(int sig)
{
	int saved = errno;

	(void)sig;
	sc_write(sc_child.seed, (sc_child.wid + 3) | SC_SIG_BIT, sc_child.sig_seq++);
	errno = saved;
}

/*
 * A forked (not exec'd: it is attached already) full-speed writer, to be
 * SIGKILLed or SIGSTOPped anywhere; never returns. It writes wid @wid, and with
 * @variant 1 also wid + 1 from a second thread; 2: pinned to the first allowed
 * CPU; 3: a SIGPROF timer whose handler writes nested records as wid
 * (@wid + 3) | SC_SIG_BIT. It writes 'r' to @ready_fd (if >= 0) before its first
 * record. With @cap, each thread stops after @cap records and waits (so that a
 * late kill overwrites nothing); SIGALRM ends it after 10 s if nobody did.
 */
static SC_UNUSED __attribute__((noreturn)) void
sc_writer_child(uint64_t seed, uint32_t wid, int variant, int ready_fd, uint64_t cap)
{
	pthread_t t;

	sc_child.seed = seed;
	sc_child.wid = wid;
	sc_child.cap = cap;
	signal(SIGALRM, SIG_DFL); /* not the parent's handler: this is no reader */
	alarm(10); /* if the parent is gone, do not write forever */
	if (variant == 1 && pthread_create(&t, NULL, sc_child_thread, NULL))
		_exit(4);
	if (variant == 2)
		sc_pin(0);
	if (variant == 3) {
		struct sigaction sa;
		struct itimerval it = { { 0, 50 }, { 0, 50 } };

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = sc_child_on_prof;
		sa.sa_flags = SA_RESTART;
		sigaction(SIGPROF, &sa, NULL);
		setitimer(ITIMER_PROF, &it, NULL);
	}
	if (ready_fd >= 0 && write(ready_fd, "r", 1) != 1)
		_exit(5);
	sc_write_run(seed, wid, cap);
	for (;;)
		pause();
}

/*
 * Run the test-point writer (tests/crash/tp-writer.c, linked with fdr_testpoints)
 * at @path: @count records as wid @wid, pinned to the @cpu_idx-th allowed CPU
 * (-1: not pinned), @rate_us apart, with FDR_FAULT=@fault (NULL: none); @ready_fd
 * and @go_fd (-1: none) are its handshake. Returns its pid or -errno.
 */
static SC_UNUSED pid_t sc_spawn_tpwriter(const char *path, uint64_t seed, const char *fault,
					 uint32_t wid, uint64_t count, int cpu_idx,
					 uint64_t rate_us, int ready_fd, int go_fd)
{
	char a_wid[16], a_count[32], a_seed[32], a_cpu[16], a_rate[32], a_ready[16], a_go[16];
	char env[96], self[] = "fdr-crash-tpwriter";
	char *args[] = { self, a_wid, a_count, a_seed, a_cpu, a_rate, a_ready, a_go, NULL };
	char *extra[] = { env, NULL };
	int keep[2] = { -1, -1 }, nr_keep = 0;

	snprintf(a_wid, sizeof(a_wid), "%u", wid);
	snprintf(a_count, sizeof(a_count), "%llu", (unsigned long long)count);
	snprintf(a_seed, sizeof(a_seed), "%#llx", (unsigned long long)seed);
	snprintf(a_cpu, sizeof(a_cpu), "%d", cpu_idx);
	snprintf(a_rate, sizeof(a_rate), "%llu", (unsigned long long)rate_us);
	snprintf(a_ready, sizeof(a_ready), "%d", ready_fd);
	snprintf(a_go, sizeof(a_go), "%d", go_fd);
	snprintf(env, sizeof(env), "FDR_FAULT=%s", fault ? fault : "");
	if (ready_fd >= 0)
		keep[nr_keep++] = ready_fd;
	if (go_fd >= 0)
		keep[nr_keep++] = go_fd;
	return sc_spawn_path(path, args, extra, keep, nr_keep);
}

#ifndef SC_WRITER_ONLY
/* ---- reader loops --------------------------------------------------------------------- */

#define SC_MAX_REPORTS 20

/* Print the first failures of a reader, then only count them. */
static SC_UNUSED void sc_report(int *nr, const char *who, const char *why)
{
	if ((*nr)++ < SC_MAX_REPORTS)
		printf("%s: %s\n", who, why);
	else if (*nr == SC_MAX_REPORTS + 1)
		printf("%s: (more failures not shown)\n", who);
}

/* Has the writing end of pipe @fd been closed (and nothing is left to read)? */
static SC_UNUSED int sc_done_now(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	char c;

	if (poll(&p, 1, 0) <= 0)
		return 0;
	return read(fd, &c, 1) == 0;
}

static SC_UNUSED int sc_open_session(struct fdr_session **s)
{
	char dir[PATH_MAX];
	int ret = sc_session_dir(dir, sizeof(dir));

	return ret ? ret : fdr_session_open(dir, s);
}

/*
 * A peeker: until @done_fd reaches end of file, open non-consuming readers on
 * all CPUs and check every record they return (at most 20000 per pass), read the
 * stats of each CPU and now and then a raw page. Returns 0, or 1 if anything was
 * wrong. For a child process of its own (it arms alarm()).
 */
static SC_UNUSED int sc_run_peeker(uint64_t seed, int done_fd)
{
	int shown = 0, nr_cpus, ret, tsc;
	uint64_t bad = 0, seen = 0, passes = 0;
	struct fdr_session *s = NULL;
	uint32_t id = 0;
	unsigned char page[4096];
	char why[256];

	alarm(600);
	ret = sc_open_session(&s);
	if (ret) {
		printf("peeker: cannot open the session: %s\n", strerror(-ret));
		return 2;
	}
	nr_cpus = fdr_ring_nr_cpus(s, 0);
	tsc = fdr_session_control(s)->ts_source == FDR_TS_TSC;
	while (!sc_done_now(done_fd)) {
		struct fdr_reader *r;
		struct fdr_record rec;
		uint64_t last[FDR_MAX_CPUS / 8] = { 0 };
		int cpu, n = 0;

		passes++;
		ret = fdr_reader_open(s, 0, -1, 0, &r);
		if (ret) {
			bad++;
			sc_report(&shown, "peeker", "fdr_reader_open failed");
			break;
		}
		while (n++ < 20000 && (ret = fdr_reader_next(r, &rec)) > 0) {
			uint32_t wid;
			uint64_t seq;

			seen++;
			if (sc_check(s, &id, seed, &rec, &wid, &seq, why, sizeof(why))) {
				bad++;
				sc_report(&shown, "peeker", why);
			}
			if (tsc && rec.cpu < FDR_MAX_CPUS / 8) {
				if (rec.raw_ts < last[rec.cpu]) {
					bad++;
					sc_report(&shown, "peeker", "timestamp went backwards");
				}
				last[rec.cpu] = rec.raw_ts;
			}
		}
		if (ret < 0) {
			bad++;
			sc_report(&shown, "peeker", "fdr_reader_next failed");
		}
		fdr_reader_close(r);
		for (cpu = 0; cpu < nr_cpus; cpu++) {
			struct fdr_cpu_stats st;

			if (fdr_ring_stats(s, 0, (uint32_t)cpu, &st)) {
				bad++;
				sc_report(&shown, "peeker", "fdr_ring_stats failed");
			} else if (st.bytes < st.entries * 24) {
				bad++;
				sc_report(&shown, "peeker",
					  "stats: fewer bytes than entries allow");
			}
			if (passes % 8 == 0 && fdr_reader_open(s, 0, cpu, 0, &r) == 0) {
				if (fdr_reader_raw_page(r, page, sizeof(page)) < 0) {
					bad++;
					sc_report(&shown, "peeker", "fdr_reader_raw_page failed");
				}
				fdr_reader_close(r);
			}
		}
	}
	fdr_session_close(s);
	printf("peeker: %llu passes, %llu records checked, %llu bad\n", (unsigned long long)passes,
	       (unsigned long long)seen, (unsigned long long)bad);
	return bad ? 1 : 0;
}

#endif /* SC_WRITER_ONLY */

#endif /* FDR_TEST_SELFCHECK_H */
