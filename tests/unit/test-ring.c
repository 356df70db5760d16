// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test-ring.c - the ring buffer and its readers: records come back exactly as
 * written, in order, on the CPU that wrote them; overwrite and discard modes
 * keep the right end; consuming reads consume; clearing resets; oversized
 * records are cut but stay valid; stats and the trace_pipe_raw page format;
 * fork() and signal-handler nesting.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <regex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/rseq.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "fdr-criterion.h"
#include "fdr-test.h"

/* clang-format off */
FDR_EVENT(tring, seq,
	FDR_PROTO(uint32_t seq, int64_t val, const char *s),
	FDR_ARGS(seq, val, s),
	FDR_FIELDS(
		fdr_field_int(uint32_t, seq, seq)
		fdr_field_int(int64_t, val, val)
		fdr_field_string(s, s)))

FDR_EVENT(tring, blob,
	FDR_PROTO(uint32_t seq, const void *p, size_t n),
	FDR_ARGS(seq, p, n),
	FDR_FIELDS(
		fdr_field_int(uint32_t, seq, seq)
		fdr_field_bytes(data, p, n)))
/* two strings and bytes: the second field's data starts wherever the first ends */
FDR_EVENT(tring, dyn,
	FDR_PROTO(uint32_t seq, const char *a, const char *b, const void *p, size_t n),
	FDR_ARGS(seq, a, b, p, n),
	FDR_FIELDS(
		fdr_field_int(uint32_t, seq, seq)
		fdr_field_string(a, a)
		fdr_field_string(b, b)
		fdr_field_bytes(c, p, n)))
/* clang-format on */

typedef struct fdr__rec_tring_seq rec_seq;
typedef struct fdr__rec_tring_blob rec_blob;

static struct fdr_test_env env;

static void fini(void)
{
	fdr_test_teardown(&env);
}

TestSuite(ring, .fini = fini, .timeout = 30);

static void setup(uint32_t kb, int overwrite)
{
	struct fdr_session_opts o = { .buffer_size_kb = kb, .overwrite = overwrite };

	cr_assert_eq(fdr_test_setup(&env, &o), 0, "session setup failed");
	cr_assert_eq(fdr_test_set_enabled(env.s, &fdr_ev_tring_seq, 0, 1), 0);
	cr_assert_eq(fdr_test_set_enabled(env.s, &fdr_ev_tring_blob, 0, 1), 0);
	cr_assert_eq(fdr_test_set_enabled(env.s, &fdr_ev_tring_dyn, 0, 1), 0);
	cr_assert(fdr_ev_tring_seq.enabled, "the call site flag must be set once enabled");
}

static pid_t gettid_(void)
{
	return (pid_t)syscall(SYS_gettid);
}

/* Fill the stack below the caller with 0xaa: a record built there must not show it. */
static __attribute__((noinline)) void dirty_stack(void)
{
	volatile unsigned char junk[1024];
	size_t i;

	for (i = 0; i < sizeof(junk); i++)
		junk[i] = 0xaa;
}

static void write_seq(uint32_t from, uint32_t n)
{
	char s[32];
	uint32_t i;

	for (i = from; i < from + n; i++) {
		snprintf(s, sizeof(s), "str-%u", i);
		dirty_stack();
		fdr_tring_seq(i, -3 * (int64_t)i, s);
	}
}

/*
 * The bytes of the __data_loc field whose word is at @loc_off of a record with a
 * fixed part of @fixed bytes, checked to lie inside the record.
 */
static const unsigned char *data_loc(const struct fdr_test_rec *r, size_t fixed, size_t loc_off,
				     uint32_t *len)
{
	uint32_t loc, off;

	cr_assert_geq(r->len, fixed, "record shorter than its fixed part: %u", r->len);
	memcpy(&loc, r->payload + loc_off, 4);
	off = loc & 0xffff;
	*len = loc >> 16;
	cr_assert_leq(off + *len, r->len, "__data_loc beyond the record");
	return r->payload + off;
}

/* A __data_loc field of a tring:dyn record */
#define DYN_FIELD(r, name, len)                                                                   \
	data_loc(r, sizeof(struct fdr__rec_tring_dyn), offsetof(struct fdr__rec_tring_dyn, name), \
		 len)

/* Decode a tring:seq record; returns its seq. */
static uint32_t dec_seq(const struct fdr_test_rec *r, int64_t *val, const char **s, uint32_t *slen)
{
	rec_seq h;
	uint32_t len;
	const unsigned char *str = data_loc(r, sizeof(h), offsetof(rec_seq, s), &len);

	memcpy(&h, r->payload, sizeof(h));
	cr_assert_eq(h.fdr__common.type, fdr_ev_tring_seq.id, "common_type %u, expected %u",
		     h.fdr__common.type, fdr_ev_tring_seq.id);
	cr_assert_geq(len, 1);
	cr_assert_eq(str[len - 1], 0, "dynamic string without its NUL");
	if (val)
		*val = h.val;
	if (s)
		*s = (const char *)str;
	if (slen)
		*slen = len;
	return h.seq;
}

static uint64_t stat_of(uint32_t inst, int cpu, const char *name)
{
	char path[128], *txt;
	uint64_t v;
	int err;

	if (inst)
		snprintf(path, sizeof(path), "instances/i%u/per_cpu/cpu%d/stats", inst, cpu);
	else
		snprintf(path, sizeof(path), "per_cpu/cpu%d/stats", cpu);
	txt = fdr_test_read(env.s, path, 0, NULL, &err);
	cr_assert_not_null(txt, "read %s: %s", path, strerror(-err));
	v = fdr_test_stat_field(txt, name);
	cr_assert_neq(v, UINT64_MAX, "no '%s' in %s:\n%s", name, path, txt);
	free(txt);
	return v;
}

Test(ring, write_read_exact)
{
	struct fdr_test_recs rr;
	int cpu;
	size_t i;

	setup(0, 0);
	cpu = fdr_test_pin(0);
	cr_assert_geq(cpu, 0);
	write_seq(0, 500);
	cr_assert_eq(fdr_test_collect(env.s, 0, -1, 0, &rr), 0);
	cr_assert_eq(rr.nr, 500, "read %zu records, wrote 500", rr.nr);
	cr_assert_eq(rr.lost, 0);
	for (i = 0; i < rr.nr; i++) {
		const struct fdr_test_rec *r = &rr.v[i];
		char want[32];
		const char *s;
		uint32_t slen, seq, k;
		int64_t val;
		rec_seq h;

		seq = dec_seq(r, &val, &s, &slen);
		snprintf(want, sizeof(want), "str-%zu", i);
		cr_assert_eq(seq, i, "record %zu has seq %u: order broken", i, seq);
		cr_assert_eq(val, -3 * (int64_t)i);
		cr_assert_str_eq(s, want);
		cr_assert_eq(slen, strlen(want) + 1);
		memcpy(&h, r->payload, sizeof(h));
		cr_assert_eq(h.fdr__common.pid, gettid_(), "common_pid must be the writer's tid");
		cr_assert_eq(h.fdr__common.flags, 0);
		cr_assert_eq(h.fdr__common.preempt_count, 0, "not nested: depth 0");
		cr_assert_eq(r->cpu, (uint32_t)cpu, "record on cpu %u, writer pinned to %d", r->cpu,
			     cpu);
		/* the fixed part's holes (after seq, after s) are zero, not the stack's bytes */
		for (k = offsetof(rec_seq, seq) + 4; k < offsetof(rec_seq, val); k++)
			cr_assert_eq(r->payload[k], 0, "hole byte %u not zero", k);
		for (k = offsetof(rec_seq, s) + 4; k < sizeof(h); k++)
			cr_assert_eq(r->payload[k], 0, "hole byte %u not zero", k);
		/* the payload is the record padded to 8 bytes, padding zeroed */
		cr_assert_eq(r->len, (sizeof(h) + slen + 7) & ~7u, "payload length %u", r->len);
		for (k = (uint32_t)sizeof(h) + slen; k < r->len; k++)
			cr_assert_eq(r->payload[k], 0, "padding byte %u not zero", k);
		if (i)
			cr_assert_geq(r->ts, rr.v[i - 1].ts, "timestamps go backwards at %zu", i);
	}
	fdr_test_recs_free(&rr);
}

/*
 * Run by CTest twice: as is, and as unit/test-ring-own-rseq with glibc's rseq
 * registration off (FDR_TEST_OWN_RSEQ=1), where every other test of this file
 * records through the area libfdr registers itself. Check that the setting took.
 */
Test(ring, rseq_area_of_the_run)
{
	struct fdr_test_recs rr;

	if (getenv("FDR_TEST_OWN_RSEQ"))
		cr_assert_eq(__rseq_size, 0,
			     "glibc registered rseq (size %u): the run tests nothing", __rseq_size);
	else
		cr_assert_gt(__rseq_size, 0, "glibc registered no rseq area");
	setup(0, 0);
	write_seq(0, 3);
	cr_assert_eq(fdr_test_collect(env.s, 0, -1, 0, &rr), 0);
	cr_assert_eq(rr.nr, 3, "recorded %zu of 3", rr.nr);
	fdr_test_recs_free(&rr);
}

Test(ring, disabled_event_writes_nothing)
{
	struct fdr_test_recs rr;

	setup(0, 0);
	fdr_test_pin(0);
	cr_assert_eq(fdr_test_set_enabled(env.s, &fdr_ev_tring_seq, 0, 0), 0);
	cr_assert_eq(fdr_ev_tring_seq.enabled, 0, "flag must drop when disabled everywhere");
	write_seq(0, 50);
	fdr_tring_blob(1, "x", 1);
	cr_assert_eq(fdr_test_collect(env.s, 0, -1, 0, &rr), 0);
	cr_assert_eq(rr.nr, 1, "only the enabled event may be recorded, got %zu", rr.nr);
	fdr_test_recs_free(&rr);
}

Test(ring, tracing_off_records_nothing)
{
	struct fdr_test_recs rr;

	setup(0, 0);
	fdr_test_pin(0);
	cr_assert_eq(fdr_test_puts(env.s, "tracing_on", O_TRUNC, "0\n"), 2);
	write_seq(0, 50);
	cr_assert_eq(fdr_test_collect(env.s, 0, -1, 0, &rr), 0);
	cr_assert_eq(rr.nr, 0, "tracing_on=0 recorded %zu records", rr.nr);
	fdr_test_recs_free(&rr);
	cr_assert_eq(fdr_test_puts(env.s, "tracing_on", O_TRUNC, "1\n"), 2);
	write_seq(50, 5);
	cr_assert_eq(fdr_test_collect(env.s, 0, -1, 0, &rr), 0);
	cr_assert_eq(rr.nr, 5);
	cr_assert_eq(dec_seq(&rr.v[0], NULL, NULL, NULL), 50);
	fdr_test_recs_free(&rr);
}

Test(ring, per_cpu_counts)
{
	struct fdr_test_recs a, b, all;
	int ca, cb;
	size_t i;
	uint32_t last_a = 0, last_b = 0;
	int seen_a = 0, seen_b = 0;

	if (fdr_test_nr_allowed_cpus() < 2)
		cr_skip_test("needs two CPUs");
	setup(0, 0);
	ca = fdr_test_pin(0);
	write_seq(0, 300);
	cb = fdr_test_pin(1);
	write_seq(1000, 200);
	cr_assert_eq(fdr_test_collect(env.s, 0, ca, 0, &a), 0);
	cr_assert_eq(fdr_test_collect(env.s, 0, cb, 0, &b), 0);
	cr_assert_eq(a.nr, 300, "cpu%d: %zu records, expected 300", ca, a.nr);
	cr_assert_eq(b.nr, 200, "cpu%d: %zu records, expected 200", cb, b.nr);
	for (i = 0; i < a.nr; i++)
		cr_assert_eq(dec_seq(&a.v[i], NULL, NULL, NULL), i);
	for (i = 0; i < b.nr; i++)
		cr_assert_eq(dec_seq(&b.v[i], NULL, NULL, NULL), 1000 + i);
	cr_assert_eq(stat_of(0, ca, "entries"), 300);
	cr_assert_eq(stat_of(0, cb, "entries"), 200);
	{
		char path[64], *txt;
		int err;

		snprintf(path, sizeof(path), "per_cpu/cpu%d/trace", cb);
		txt = fdr_test_read(env.s, path, 0, NULL, &err);
		cr_assert_not_null(txt);
		cr_assert_eq(fdr_test_count(txt, " seq: seq="), 200,
			     "per_cpu/cpu%d/trace shows that CPU only", cb);
		cr_assert_eq(fdr_test_count(txt, " seq: seq=1"), 200);
		free(txt);
	}

	/* merged: everything, in time order, each CPU's order kept */
	cr_assert_eq(fdr_test_collect(env.s, 0, -1, 0, &all), 0);
	cr_assert_eq(all.nr, 500);
	for (i = 0; i < all.nr; i++) {
		uint32_t seq = dec_seq(&all.v[i], NULL, NULL, NULL);

		if (i)
			cr_assert_geq(all.v[i].ts, all.v[i - 1].ts,
				      "merge not in time order at %zu", i);
		if ((int)all.v[i].cpu == ca) {
			cr_assert(!seen_a || seq == last_a + 1);
			last_a = seq;
			seen_a = 1;
		} else {
			cr_assert_eq((int)all.v[i].cpu, cb);
			cr_assert(!seen_b || seq == last_b + 1);
			last_b = seq;
			seen_b = 1;
		}
	}
	fdr_test_recs_free(&a);
	fdr_test_recs_free(&b);
	fdr_test_recs_free(&all);
}

/*
 * A merging reader polls every CPU for each record; one that had nothing is
 * polled cheaply while its head stays put. A record that arrives there must
 * still take its place in time order at once, not some polls later.
 */
static void idle_cpu_joins(unsigned flags)
{
	struct fdr_reader *r;
	struct fdr_record rec;
	int ca, cb, k;

	setup(0, 0);
	ca = fdr_test_pin(0);
	write_seq(0, 200);
	cr_assert_eq(fdr_reader_open(env.s, 0, -1, flags, &r), 0);
	for (k = 0; k < 200; k++) {
		cr_assert_eq(fdr_reader_next(r, &rec), 1);
		cr_assert_eq((int)rec.cpu, ca);
	}
	/* one record on the idle CPU, then more on the busy one: it comes first */
	cb = fdr_test_pin(1);
	write_seq(5000, 1);
	cr_assert_eq(fdr_test_pin(0), ca);
	write_seq(200, 100);
	for (k = 0; k < 101; k++) {
		unsigned char copy[256] __attribute__((aligned(8)));
		struct fdr_test_rec tr = { .payload = copy };
		uint32_t want = k ? 199 + (uint32_t)k : 5000, seq;

		cr_assert_eq(fdr_reader_next(r, &rec), 1, "record %d of 101: none", k);
		cr_assert_leq(rec.len, sizeof(copy));
		memcpy(copy, rec.payload, rec.len);
		tr.len = rec.len;
		seq = dec_seq(&tr, NULL, NULL, NULL);
		cr_assert_eq(seq, want, "record %d: seq %u on cpu %u, expected %u on cpu %d", k,
			     seq, rec.cpu, want, k ? ca : cb);
	}
	cr_assert_eq(fdr_reader_next(r, &rec), 0);
	fdr_reader_close(r);
}

Test(ring, merge_idle_cpu_joins_at_once)
{
	if (fdr_test_nr_allowed_cpus() < 2)
		cr_skip_test("needs two CPUs");
	idle_cpu_joins(0);
}

Test(ring, merge_idle_cpu_joins_at_once_consuming)
{
	if (fdr_test_nr_allowed_cpus() < 2)
		cr_skip_test("needs two CPUs");
	idle_cpu_joins(FDR_READ_CONSUME);
}

/*
 * FDR_READ_UNORDERED (fdr relay): each CPU's records in their order, one CPU
 * at a time instead of merged; with FDR_READ_HOLD nothing is consumed until
 * fdr_reader_commit().
 */
Test(ring, unordered_keeps_each_cpu_in_order)
{
	struct fdr_reader *r;
	struct fdr_record rec;
	uint32_t next[2] = { 0, 1000 };
	int cpu[2], k, last = -1, switches = 0;

	if (fdr_test_nr_allowed_cpus() < 2)
		cr_skip_test("needs two CPUs");
	setup(0, 0);
	cpu[0] = fdr_test_pin(0);
	write_seq(0, 100);
	cpu[1] = fdr_test_pin(1);
	write_seq(1000, 100);
	cr_assert_eq(fdr_test_pin(0), cpu[0]);
	write_seq(100, 100);
	cr_assert_eq(fdr_test_pin(1), cpu[1]);
	write_seq(1100, 100);
	cr_assert_eq(fdr_reader_open(env.s, 0, -1,
				     FDR_READ_CONSUME | FDR_READ_HOLD | FDR_READ_UNORDERED, &r),
		     0);
	for (k = 0; k < 400; k++) {
		unsigned char copy[256] __attribute__((aligned(8)));
		struct fdr_test_rec tr = { .payload = copy };
		int c;

		cr_assert_eq(fdr_reader_next(r, &rec), 1, "record %d of 400: none", k);
		cr_assert_leq(rec.len, sizeof(copy));
		memcpy(copy, rec.payload, rec.len);
		tr.len = rec.len;
		c = (int)rec.cpu == cpu[0] ? 0 : 1;
		cr_assert_eq(dec_seq(&tr, NULL, NULL, NULL), next[c], "record %d on cpu %u", k,
			     rec.cpu);
		next[c]++;
		switches += last >= 0 && c != last;
		last = c;
	}
	cr_assert_eq(fdr_reader_next(r, &rec), 0);
	cr_assert_eq(switches, 1, "the reader went from one CPU to the other %d times, not once",
		     switches);
	cr_assert_eq(stat_of(0, cpu[0], "read events"), 0, "consumed before the commit");
	fdr_reader_commit(r);
	cr_assert_eq(stat_of(0, cpu[0], "read events"), 200);
	cr_assert_eq(stat_of(0, cpu[1], "read events"), 200);
	fdr_reader_close(r);
}

struct thr_arg {
	uint32_t base;
	uint32_t n;
	pid_t tid;
};

static void *thr_writer(void *p)
{
	struct thr_arg *a = p;

	a->tid = gettid_();
	write_seq(a->base, a->n);
	return NULL;
}

Test(ring, threads_each_in_order)
{
	struct thr_arg args[4];
	pthread_t t[4];
	struct fdr_test_recs rr;
	uint32_t next[4] = { 0 };
	size_t i;
	int k;

	setup(4096, 0);
	for (k = 0; k < 4; k++) {
		args[k].base = (uint32_t)k * 100000;
		args[k].n = 2000;
		cr_assert_eq(pthread_create(&t[k], NULL, thr_writer, &args[k]), 0);
	}
	for (k = 0; k < 4; k++)
		pthread_join(t[k], NULL);
	cr_assert_eq(fdr_test_collect(env.s, 0, -1, 0, &rr), 0);
	cr_assert_eq(rr.nr + rr.lost, 8000, "read %zu + lost %llu != written 8000", rr.nr,
		     (unsigned long long)rr.lost);
	cr_assert_eq(rr.lost, 0, "a 4 MiB buffer must hold 8000 small records");
	for (i = 0; i < rr.nr; i++) {
		uint32_t seq = dec_seq(&rr.v[i], NULL, NULL, NULL);
		rec_seq h;

		k = (int)(seq / 100000);
		cr_assert_lt(k, 4);
		memcpy(&h, rr.v[i].payload, sizeof(h));
		cr_assert_eq(h.fdr__common.pid, args[k].tid, "record of thread %d with pid %d", k,
			     h.fdr__common.pid);
		cr_assert_eq(seq % 100000, next[k], "thread %d: seq %u after %u", k, seq % 100000,
			     next[k]);
		next[k]++;
	}
	fdr_test_recs_free(&rr);
}

Test(ring, overwrite_keeps_newest)
{
	struct fdr_test_recs rr;
	int cpu;
	size_t i;
	const uint32_t n = 1000;

	setup(1, 1);
	cpu = fdr_test_pin(0);
	write_seq(0, n);
	cr_assert_eq(fdr_test_collect(env.s, 0, -1, 0, &rr), 0);
	cr_assert_gt(rr.nr, 0);
	cr_assert_lt(rr.nr, n, "a 7 KiB ring cannot hold %u records", n);
	cr_assert_eq(rr.nr + rr.lost, n, "read %zu + lost %llu != written %u", rr.nr,
		     (unsigned long long)rr.lost, n);
	for (i = 0; i < rr.nr; i++)
		cr_assert_eq(dec_seq(&rr.v[i], NULL, NULL, NULL), n - rr.nr + i,
			     "overwrite must keep the newest records, contiguous");
	cr_assert_eq(rr.v[0].lost_before, n - rr.nr,
		     "the loss is reported before the first record");
	cr_assert_eq(stat_of(0, cpu, "entries"), rr.nr);
	cr_assert_eq(stat_of(0, cpu, "overrun"), n - rr.nr);
	cr_assert_eq(stat_of(0, cpu, "dropped events"), 0, "overwrite mode refuses nothing");
	{
		char want[96], *txt;
		int err;

		snprintf(want, sizeof(want),
			 "# entries-in-buffer/entries-written: %zu/%u   #P:", rr.nr, n);
		txt = fdr_test_read(env.s, "trace", 0, NULL, &err);
		cr_assert_not_null(txt);
		cr_assert_not_null(strstr(txt, want), "trace header must read '%s...':\n%.400s",
				   want, txt);
		free(txt);
	}
	fdr_test_recs_free(&rr);
}

Test(ring, overwrite_trace_pipe_lost_line)
{
	char *txt, head[64];
	int cpu, err;
	size_t lines;
	const uint32_t n = 1000;
	uint64_t lost;

	setup(1, 1);
	cpu = fdr_test_pin(0);
	write_seq(0, n);
	txt = fdr_test_read(env.s, "trace_pipe", 0, NULL, &err);
	cr_assert_not_null(txt, "trace_pipe: %s", strerror(-err));
	lines = fdr_test_count(txt, "\n");
	cr_assert_eq(sscanf(txt, "CPU:%*d [LOST %" SCNu64 " EVENTS]\n", &lost), 1,
		     "trace_pipe must start with the LOST line:\n%.200s", txt);
	snprintf(head, sizeof(head), "CPU:%d [LOST %" PRIu64 " EVENTS]\n", cpu, lost);
	cr_assert_eq(strncmp(txt, head, strlen(head)), 0, "expected '%s'", head);
	cr_assert_eq(lost + (lines - 1), n, "lost %" PRIu64 " + %zu lines != %u written", lost,
		     lines - 1, n);
	cr_assert_eq(fdr_test_count(txt, "[LOST"), 1, "one gap, one LOST line");
	free(txt);
	/* consumed: the second read has nothing, and the counters say why */
	txt = fdr_test_read(env.s, "trace_pipe", 0, NULL, &err);
	cr_assert_not_null(txt);
	cr_assert_str_empty(txt, "second consuming read returned data:\n%.200s", txt);
	free(txt);
	cr_assert_eq(stat_of(0, cpu, "read events"), lines - 1);
	cr_assert_eq(stat_of(0, cpu, "entries"), 0);
}

Test(ring, discard_keeps_oldest)
{
	struct fdr_test_recs rr;
	int cpu;
	size_t i;
	const uint32_t n = 1000;
	ssize_t w;

	setup(1, -1);
	cpu = fdr_test_pin(0);
	write_seq(0, n);
	cr_assert_eq(fdr_test_collect(env.s, 0, -1, 0, &rr), 0);
	cr_assert_gt(rr.nr, 0);
	cr_assert_lt(rr.nr, n);
	cr_assert_eq(rr.lost, 0, "discard mode loses nothing already recorded");
	for (i = 0; i < rr.nr; i++)
		cr_assert_eq(dec_seq(&rr.v[i], NULL, NULL, NULL), i,
			     "discard must keep the oldest records");
	cr_assert_eq(stat_of(0, cpu, "dropped events"), n - rr.nr,
		     "refused records are 'dropped events'");
	cr_assert_eq(stat_of(0, cpu, "overrun"), 0);
	cr_assert_eq(stat_of(0, cpu, "entries"), rr.nr);
	{
		char *txt;
		int err;

		txt = fdr_test_read(env.s, "trace_pipe", 0, NULL, &err);
		cr_assert_not_null(txt);
		cr_assert_null(strstr(txt, "[LOST"), "discard mode prints no LOST line");
		cr_assert_eq(fdr_test_count(txt, "\n"), rr.nr);
		free(txt);
		/* trace_pipe consumed them: record them again for the checks below */
		write_seq(0, n);
	}
	/* a marker into the full ring: EBADF, as the kernel */
	w = fdr_test_puts(env.s, "trace_marker", 0, "full");
	cr_assert_eq(w, -EBADF, "trace_marker into a full discard ring: %zd", w);
	fdr_test_recs_free(&rr);

	/* consuming makes room again */
	cr_assert_eq(fdr_test_collect(env.s, 0, -1, FDR_READ_CONSUME, &rr), 0);
	fdr_test_recs_free(&rr);
	write_seq(5000, 10);
	cr_assert_eq(fdr_test_collect(env.s, 0, -1, 0, &rr), 0);
	cr_assert_eq(rr.nr, 10, "after consuming, a discard ring records again (%zu)", rr.nr);
	cr_assert_eq(dec_seq(&rr.v[0], NULL, NULL, NULL), 5000);
	fdr_test_recs_free(&rr);
}

/*
 * Instance 0's ring, mapped: into *@base, and CPU @cpu's entry of its live
 * buffer (the one writers use now), the CPU's buffer-0 entry (which holds
 * 'active') into *@c0.
 */
static struct fdr_abi_cpu *live_entry(int cpu, unsigned char **base, struct fdr_abi_cpu **c0)
{
	const struct fdr_abi_ring *h;
	struct fdr_abi_cpu *cpus;
	void *b;
	size_t size;

	cr_assert_eq(fdr_session_ring(env.s, 0, &b, &size), 0);
	h = b;
	cr_assert_lt((uint32_t)cpu, h->nr_cpus);
	cpus = (struct fdr_abi_cpu *)((unsigned char *)b + h->cpu_off);
	*base = b;
	*c0 = &cpus[cpu];
	return &cpus[(__atomic_load_n(&cpus[cpu].active, __ATOMIC_ACQUIRE) & 1) * h->nr_cpus +
		     (uint32_t)cpu];
}

/* The seq of a tring:seq record read by a reader */
static uint32_t rec_seq_of(const struct fdr_record *rec)
{
	rec_seq h;

	cr_assert_geq(rec->len, sizeof(h), "record of %u bytes", rec->len);
	memcpy(&h, rec->payload, sizeof(h));
	cr_assert_eq(h.fdr__common.type, fdr_ev_tring_seq.id);
	return h.seq;
}

/*
 * A writer whose virtual CPU the hypervisor stops inside its critical section
 * (no preemption the guest sees: rseq does not abort it) commits into the buffer
 * that was live when the section began, milliseconds after a swap made it the
 * snapshot; its thread then goes on in the live buffer. A following reader
 * (trace_pipe, fdr pipe) that had found the snapshot buffer read to its end
 * must still give that record before the thread's next ones (rd_pick(); the
 * stress/accounting pipe phase saw one 2024 records late). The late commit is
 * forged here as the writer makes it: the record's bytes at head, then head.
 */
Test(ring, late_commit_into_snapshot_keeps_order)
{
	struct timespec d = { 0, 5 * 1000 * 1000 };
	struct fdr_reader *r;
	struct fdr_record rec;
	struct fdr_abi_cpu *c0, *old;
	unsigned char *base, *data, *dst;
	uint32_t seqs[16], n = 0, k, len, ss, live;
	uint64_t head, off, ts;
	int cpu, ret;

	setup(0, 1);
	cpu = fdr_test_pin(0);
	cr_assert_geq(cpu, 0);
	cr_assert_eq(fdr_test_puts(env.s, "snapshot_allocated", O_TRUNC, "1\n"), 2);
	cr_assert_eq(fdr_reader_open(env.s, 0, -1, FDR_READ_CONSUME, &r), 0);
	write_seq(0, 10);
	for (k = 0; k < 10; k++) {
		cr_assert_eq(fdr_reader_next(r, &rec), 1, "record %u of 10", k);
		cr_assert_eq(rec_seq_of(&rec), k);
	}
	len = rec.len + (uint32_t)sizeof(struct fdr_abi_rec); /* seq 9's, header included */

	old = live_entry(cpu, &base, &c0); /* the snapshot after the swap */
	live = __atomic_load_n(&c0->active, __ATOMIC_ACQUIRE) & 1;
	cr_assert_eq(fdr_test_puts(env.s, "snapshot", O_TRUNC, "1\n"), 2);
	cr_assert_neq(__atomic_load_n(&c0->active, __ATOMIC_ACQUIRE) & 1, live, "no swap");
	nanosleep(&d, NULL); /* the swap's 2 ms are over */
	cr_assert_eq(fdr_reader_next(r, &rec), 0, "nothing new yet");

	/* seq 10, a copy of seq 9 just after it, one tick later, committed into the snapshot */
	head = __atomic_load_n(&old->head, __ATOMIC_ACQUIRE);
	off = (uint32_t)head;
	ss = old->subbuf_size;
	cr_assert_geq(off & (ss - 1), FDR_SUBBUF_HDR + len, "seq 9 is not just before head");
	cr_assert_leq((off & (ss - 1)) + len + 8, ss, "no room for the forged record");
	data = base + old->data_off;
	dst = data + off;
	memcpy(dst, dst - len, len);
	memcpy(&ts, dst + 8, sizeof(ts));
	ts++;
	memcpy(dst + 8, &ts, sizeof(ts));
	k = 10;
	memcpy(dst + sizeof(struct fdr_abi_rec) + offsetof(rec_seq, seq), &k, sizeof(k));
	__atomic_store_n(&old->head, head + len + (1ull << 32), __ATOMIC_RELEASE);

	/* the thread's next records, in the live buffer */
	write_seq(11, 5);
	for (k = 0; k < 1000 && n < 16; k++) {
		ret = fdr_reader_next(r, &rec);
		cr_assert_geq(ret, 0);
		if (ret)
			seqs[n++] = rec_seq_of(&rec);
	}
	fdr_reader_close(r);
	cr_assert_eq(n, 6, "read %u records, expected seq 10 to 15", n);
	for (k = 0; k < n; k++)
		cr_assert_eq(seqs[k], 10 + k, "record %u is seq %u: the late commit out of order",
			     k, seqs[k]);
}

/*
 * Each sub-buffer converts its records' stamps from its own calibration point
 * (clock.c), taken by the thread that opened it; two points' errors can set the
 * first records of a sub-buffer before the last of the one before. A reader
 * never gives a CPU's record an earlier time than the one before it
 * (rd_pick()): forged here, the second sub-buffer's point put 2 ms early.
 */
Test(ring, calibration_step_back_keeps_time_order)
{
	struct fdr_test_recs rr;
	struct fdr_abi_cpu *c0, *c;
	struct fdr_abi_subbuf *sb;
	unsigned char *base;
	size_t i;
	uint32_t ss, n;
	int cpu;

	setup(0, 0);
	cpu = fdr_test_pin(0);
	cr_assert_geq(cpu, 0);
	if (fdr_session_control(env.s)->ts_source != FDR_TS_TSC)
		cr_skip_test("the stamps are not the TSC here: no calibration point is used");
	c = live_entry(cpu, &base, &c0);
	ss = c->subbuf_size;
	cr_assert_geq(c->nr_subbufs, 4, "%u sub-buffers", c->nr_subbufs);
	n = (uint32_t)(5 * ss / 2 / 48); /* records of 48 bytes or more: past 2 sub-buffers */
	write_seq(0, n);
	cr_assert_geq((uint32_t)__atomic_load_n(&c->head, __ATOMIC_ACQUIRE) / ss, 2,
		      "the records fill fewer than three sub-buffers");
	cr_assert_lt((uint32_t)__atomic_load_n(&c->head, __ATOMIC_ACQUIRE) / ss, c->nr_subbufs,
		     "the ring wrapped");
	sb = (struct fdr_abi_subbuf *)(base + c->data_off + ss);
	cr_assert_eq(sb->pos, ss, "sub-buffer 1 holds position %llu", (unsigned long long)sb->pos);
	sb->cal_mono_ns -= 2000000;

	cr_assert_eq(fdr_test_collect(env.s, 0, cpu, 0, &rr), 0);
	cr_assert_eq(rr.nr, n, "read %zu records, wrote %u", rr.nr, n);
	for (i = 0; i < rr.nr; i++) {
		cr_assert_eq(dec_seq(&rr.v[i], NULL, NULL, NULL), i);
		if (i)
			cr_assert_geq(rr.v[i].ts, rr.v[i - 1].ts,
				      "time goes back at record %zu: %llu after %llu", i,
				      (unsigned long long)rr.v[i].ts,
				      (unsigned long long)rr.v[i - 1].ts);
	}
	fdr_test_recs_free(&rr);
}

Test(ring, consume_twice)
{
	struct fdr_test_recs rr;
	int cpu;

	setup(0, 0);
	cpu = fdr_test_pin(0);
	write_seq(0, 100);
	cr_assert_eq(fdr_test_collect(env.s, 0, -1, FDR_READ_CONSUME, &rr), 0);
	cr_assert_eq(rr.nr, 100);
	fdr_test_recs_free(&rr);
	cr_assert_eq(fdr_test_collect(env.s, 0, -1, FDR_READ_CONSUME, &rr), 0);
	cr_assert_eq(rr.nr, 0, "second consuming read returned %zu records", rr.nr);
	fdr_test_recs_free(&rr);
	cr_assert_eq(fdr_test_collect(env.s, 0, -1, 0, &rr), 0);
	cr_assert_eq(rr.nr, 0, "consumed records must not show in a non-consuming read either");
	fdr_test_recs_free(&rr);
	cr_assert_eq(stat_of(0, cpu, "read events"), 100);
	cr_assert_eq(stat_of(0, cpu, "entries"), 0);
	cr_assert_eq(stat_of(0, cpu, "overrun"), 0);
}

Test(ring, consume_part_then_rest)
{
	struct fdr_reader *r;
	struct fdr_record rec;
	struct fdr_test_recs rr;
	char *txt;
	int cpu, err, k;

	setup(0, 0);
	cpu = fdr_test_pin(0);
	write_seq(0, 5);
	cr_assert_eq(fdr_reader_open(env.s, 0, -1, FDR_READ_CONSUME, &r), 0);
	for (k = 0; k < 2; k++)
		cr_assert_eq(fdr_reader_next(r, &rec), 1);
	fdr_reader_close(r);
	cr_assert_eq(stat_of(0, cpu, "entries"), 3);
	cr_assert_eq(stat_of(0, cpu, "read events"), 2);
	/* spec 5.2: after 2 of 5 were consumed the header reads 3/3 */
	txt = fdr_test_read(env.s, "trace", 0, NULL, &err);
	cr_assert_not_null(txt);
	cr_assert_not_null(strstr(txt, "# entries-in-buffer/entries-written: 3/3   #P:"),
			   "header:\n%s", txt);
	free(txt);
	cr_assert_eq(fdr_test_collect(env.s, 0, -1, FDR_READ_CONSUME, &rr), 0);
	cr_assert_eq(rr.nr, 3);
	cr_assert_eq(dec_seq(&rr.v[0], NULL, NULL, NULL), 2,
		     "consumption resumes after the consumed ones");
	fdr_test_recs_free(&rr);
}

Test(ring, clear_resets)
{
	struct fdr_test_recs rr;
	int cpu;
	size_t i;

	setup(1, 1);
	cpu = fdr_test_pin(0);
	write_seq(0, 1000);
	cr_assert_gt(stat_of(0, cpu, "overrun"), 0);
	cr_assert_eq(fdr_ring_clear(env.s, 0, -1), 0);
	cr_assert_eq(stat_of(0, cpu, "entries"), 0);
	cr_assert_eq(stat_of(0, cpu, "overrun"), 0);
	cr_assert_eq(stat_of(0, cpu, "read events"), 0);
	cr_assert_eq(stat_of(0, cpu, "dropped events"), 0);
	cr_assert_eq(fdr_test_collect(env.s, 0, -1, 0, &rr), 0);
	cr_assert_eq(rr.nr, 0, "cleared ring still shows %zu records", rr.nr);
	fdr_test_recs_free(&rr);
	write_seq(2000, 5);
	cr_assert_eq(fdr_test_collect(env.s, 0, -1, 0, &rr), 0);
	cr_assert_eq(rr.nr, 5);
	cr_assert_eq(rr.lost, 0, "no loss may be reported across a clear");
	for (i = 0; i < 5; i++)
		cr_assert_eq(dec_seq(&rr.v[i], NULL, NULL, NULL), 2000 + i);
	fdr_test_recs_free(&rr);
	cr_assert_eq(stat_of(0, cpu, "entries"), 5);
	cr_assert_eq(stat_of(0, cpu, "overrun"), 0);
}

Test(ring, clear_by_truncating_trace)
{
	struct fdr_test_recs rr;
	int ca, cb;

	setup(0, 0);
	ca = fdr_test_pin(0);
	write_seq(0, 10);
	cr_assert_eq(fdr_test_puts(env.s, "trace", O_TRUNC, "\n"), 1);
	cr_assert_eq(fdr_test_collect(env.s, 0, -1, 0, &rr), 0);
	cr_assert_eq(rr.nr, 0, "'echo > trace' must clear");
	fdr_test_recs_free(&rr);
	if (fdr_test_nr_allowed_cpus() < 2)
		return;
	write_seq(10, 3);
	cb = fdr_test_pin(1);
	write_seq(20, 4);
	{
		char path[64];

		snprintf(path, sizeof(path), "per_cpu/cpu%d/trace", ca);
		cr_assert_eq(fdr_test_puts(env.s, path, O_TRUNC, "\n"), 1);
	}
	cr_assert_eq(fdr_test_collect(env.s, 0, -1, 0, &rr), 0);
	cr_assert_eq(rr.nr, 4, "per_cpu/cpuN/trace clears that CPU only (%zu left)", rr.nr);
	cr_assert_eq((int)rr.v[0].cpu, cb);
	fdr_test_recs_free(&rr);
}

/* @n bytes of a pattern that differs for each @seed and offset, no NUL */
static void dyn_pattern(char *p, size_t n, unsigned seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (char)('A' + (seed * 7 + i * 13) % 26);
}

/*
 * Dynamic data of every length from 0 to 80 bytes, the first string's data at a
 * word boundary, the second's and the bytes' wherever the one before ends: every
 * byte, every NUL and the record's padding (zeros) must come back as written.
 */
Test(ring, dynamic_fields_every_length)
{
	static const size_t lens_b[] = { 0, 1, 6, 7, 8, 9, 15, 16, 17, 63, 64, 65, 100 };
	struct fdr_test_recs rr;
	char a[128], b[128];
	unsigned char c[128];
	uint32_t seq = 0;
	size_t la, kb, i;

	setup(4096, 0);
	fdr_test_pin(0);
	for (la = 0; la <= 80; la++)
		for (kb = 0; kb < sizeof(lens_b) / sizeof(lens_b[0]); kb++) {
			dyn_pattern(a, la, seq);
			a[la] = 0;
			dyn_pattern(b, lens_b[kb], seq + 1);
			b[lens_b[kb]] = 0;
			dyn_pattern((char *)c, la, seq + 2);
			dirty_stack();
			fdr_tring_dyn(seq++, a, b, c, la);
		}
	cr_assert_eq(fdr_test_collect(env.s, 0, -1, 0, &rr), 0);
	cr_assert_eq(rr.nr, seq, "%zu records, expected %u", rr.nr, seq);
	cr_assert_eq(rr.lost, 0);
	for (i = 0; i < rr.nr; i++) {
		const struct fdr_test_rec *r = &rr.v[i];
		struct fdr__rec_tring_dyn h;
		const unsigned char *pa, *pb, *pc;
		uint32_t na, nb, nc, end, k;

		memcpy(&h, r->payload, sizeof(h));
		cr_assert_eq(h.seq, i);
		la = i / (sizeof(lens_b) / sizeof(lens_b[0]));
		kb = lens_b[i % (sizeof(lens_b) / sizeof(lens_b[0]))];
		pa = DYN_FIELD(r, a, &na);
		pb = DYN_FIELD(r, b, &nb);
		pc = DYN_FIELD(r, c, &nc);
		cr_assert_eq(na, la + 1, "record %zu: a is %u bytes, expected %zu", i, na, la + 1);
		cr_assert_eq(nb, kb + 1, "record %zu: b is %u bytes, expected %zu", i, nb, kb + 1);
		cr_assert_eq(nc, la, "record %zu: c is %u bytes, expected %zu", i, nc, la);
		dyn_pattern(a, la, (unsigned)i);
		dyn_pattern(b, kb, (unsigned)i + 1);
		dyn_pattern((char *)c, la, (unsigned)i + 2);
		cr_assert(memcmp(pa, a, la) == 0 && pa[la] == 0, "record %zu: a differs", i);
		cr_assert(memcmp(pb, b, kb) == 0 && pb[kb] == 0, "record %zu: b differs", i);
		cr_assert(memcmp(pc, c, la) == 0, "record %zu: c differs", i);
		cr_assert_eq(pb, pa + na, "record %zu: b does not follow a", i);
		cr_assert_eq(pc, pb + nb, "record %zu: c does not follow b", i);
		/* the padding to the record's 8-byte end: zeros, not the stack's 0xaa */
		end = (uint32_t)(pc + nc - r->payload);
		for (k = end; k < r->len; k++)
			cr_assert_eq(r->payload[k], 0, "record %zu: padding byte %u is 0x%02x", i,
				     k, r->payload[k]);
	}
	fdr_test_recs_free(&rr);
}

/*
 * A string cut where the record reaches FDR_MAX_RECORD keeps a NUL as its last
 * byte, whichever way it is copied: the first string's 3959 characters and NUL,
 * from offset 24, end at 3984, so the second one's data starts at a word
 * boundary with 16 bytes of room left (copied in words); then, one character
 * less, at an odd offset (copied bytewise).
 */
Test(ring, cut_string_keeps_its_nul)
{
	static const size_t first[] = { 3959, 3958 };
	char *big = malloc(4001);
	const char *tail = "abcdefghijklmnopqrstuvwxyz0123456789";
	struct fdr_test_recs rr;
	size_t k;

	cr_assert_not_null(big);
	setup(0, 0);
	fdr_test_pin(0);
	for (k = 0; k < 2; k++) {
		memset(big, 'x', first[k]);
		big[first[k]] = 0;
		fdr_tring_dyn((uint32_t)k, big, tail, NULL, 0);
	}
	cr_assert_eq(fdr_test_collect(env.s, 0, -1, 0, &rr), 0);
	cr_assert_eq(rr.nr, 2);
	for (k = 0; k < 2; k++) {
		uint32_t na, nb;
		const unsigned char *pa = DYN_FIELD(&rr.v[k], a, &na),
				    *pb = DYN_FIELD(&rr.v[k], b, &nb);
		uint32_t room = FDR_MAX_RECORD - (uint32_t)(pb - rr.v[k].payload);

		cr_assert_eq(na, first[k] + 1);
		cr_assert_eq(nb, room, "b got %u bytes, expected the %u left", nb, room);
		cr_assert_lt(nb, strlen(tail) + 1, "b must have been cut");
		cr_assert(memcmp(pb, tail, nb - 1) == 0, "b's bytes before the cut differ");
		cr_assert_eq(pb[nb - 1], 0, "cut string %zu without its NUL", k);
		cr_assert_eq((size_t)(pb - rr.v[k].payload) % 8, k == 0 ? 0u : 7u);
		(void)pa;
	}
	fdr_test_recs_free(&rr);
	free(big);
}

/*
 * Dynamic data that ends at the end of a page, the next page unmapped: the
 * event path may read nothing past a field's last byte (a fault would kill the
 * test). Every length the word-wise copy takes, and around it.
 */
Test(ring, dynamic_fields_end_at_unmapped_page)
{
	long pg = sysconf(_SC_PAGESIZE);
	unsigned char *m = mmap(NULL, (size_t)pg * 2, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct fdr_test_recs rr;
	uint32_t n;

	cr_assert_neq(m, MAP_FAILED);
	cr_assert_eq(mprotect(m + pg, (size_t)pg, PROT_NONE), 0);
	setup(1024, 0);
	fdr_test_pin(0);
	for (n = 0; n <= 70; n++) {
		char *s = (char *)m + pg - (n + 1); /* n characters, the NUL the page's last byte */

		dyn_pattern(s, n, n);
		s[n] = 0;
		fdr_tring_dyn(n, s, s, m + pg - n, n);
	}
	cr_assert_eq(fdr_test_collect(env.s, 0, -1, 0, &rr), 0);
	cr_assert_eq(rr.nr, 71);
	for (n = 0; n <= 70; n++) {
		uint32_t na, nc;
		const unsigned char *pa = DYN_FIELD(&rr.v[n], a, &na),
				    *pc = DYN_FIELD(&rr.v[n], c, &nc);

		char want[80];

		/* as written: the string, and the bytes that were its last n (with the NUL) */
		dyn_pattern(want, n, n);
		want[n] = 0;
		cr_assert_eq(na, n + 1);
		cr_assert_eq(nc, n);
		cr_assert(memcmp(pa, want, n + 1) == 0, "string of %u differs", n);
		cr_assert(memcmp(pc, want + 1, n) == 0, "bytes of %u differ", n);
	}
	fdr_test_recs_free(&rr);
	munmap(m, (size_t)pg * 2);
}

Test(ring, too_big_string_is_cut)
{
	struct fdr_test_recs rr;
	char *big = malloc(6001);
	const char *s;
	uint32_t slen;

	cr_assert_not_null(big);
	memset(big, 'x', 6000);
	big[6000] = 0;
	setup(0, 0);
	fdr_test_pin(0);
	fdr_tring_seq(1, 2, big);
	fdr_tring_seq(2, 3, "after");
	cr_assert_eq(fdr_test_collect(env.s, 0, -1, 0, &rr), 0);
	cr_assert_eq(rr.nr, 2, "an oversized event must be recorded (cut), not dropped");
	cr_assert_eq(rr.v[0].len, FDR_MAX_RECORD, "record length %u, expected FDR_MAX_RECORD",
		     rr.v[0].len);
	cr_assert_eq(dec_seq(&rr.v[0], NULL, &s, &slen), 1);
	cr_assert_eq(slen, FDR_MAX_RECORD - sizeof(rec_seq), "string cut to the room left");
	cr_assert_eq(strlen(s), slen - 1);
	cr_assert_eq(strspn(s, "x"), slen - 1, "the kept part is the start of the string");
	cr_assert_eq(dec_seq(&rr.v[1], NULL, &s, NULL), 2, "the next record is intact");
	cr_assert_str_eq(s, "after");
	fdr_test_recs_free(&rr);
	free(big);
}

Test(ring, too_big_bytes_are_cut)
{
	struct fdr_test_recs rr;
	unsigned char *src = malloc(10000);
	rec_blob h;
	uint32_t off, len, i;

	cr_assert_not_null(src);
	for (i = 0; i < 10000; i++)
		src[i] = (unsigned char)(i * 7 + 1);
	setup(0, 0);
	fdr_test_pin(0);
	fdr_tring_blob(9, src, 10000);
	fdr_tring_blob(10, src, 3);
	cr_assert_eq(fdr_test_collect(env.s, 0, -1, 0, &rr), 0);
	cr_assert_eq(rr.nr, 2);
	memcpy(&h, rr.v[0].payload, sizeof(h));
	off = h.data & 0xffff;
	len = h.data >> 16;
	cr_assert_eq(h.seq, 9);
	cr_assert_eq(off, sizeof(h));
	cr_assert_eq(len, FDR_MAX_RECORD - sizeof(h), "bytes cut to the room left (%u)", len);
	cr_assert_leq(off + len, rr.v[0].len);
	cr_assert_eq(memcmp(rr.v[0].payload + off, src, len), 0);
	memcpy(&h, rr.v[1].payload, sizeof(h));
	cr_assert_eq(h.seq, 10);
	cr_assert_eq(h.data >> 16, 3);
	cr_assert_eq(memcmp(rr.v[1].payload + (h.data & 0xffff), src, 3), 0);
	fdr_test_recs_free(&rr);
	free(src);
}

/*
 * Every record size the event path copies with its own unrolled code (16 to 128
 * bytes) and a few beyond it (the loop), at every offset in the sub-buffers: the
 * bytes read back are the bytes written, the padding is zero, time goes forward.
 */
Test(ring, every_record_size)
{
	enum { MAXN = 160, ROUNDS = 12 };
	static unsigned char src[MAXN + ROUNDS];
	struct fdr_test_recs rr;
	uint32_t n, r, i = 0, k;

	for (k = 0; k < sizeof(src); k++)
		src[k] = (unsigned char)(k * 13 + 5);
	setup(1024, 0);
	fdr_test_pin(0);
	for (r = 0; r < ROUNDS; r++)
		for (n = 0; n <= MAXN; n++) {
			dirty_stack();
			fdr_tring_blob(r * 1000 + n, src + r, n);
		}
	cr_assert_eq(fdr_test_collect(env.s, 0, -1, 0, &rr), 0);
	cr_assert_eq(rr.nr, ROUNDS * (MAXN + 1), "read %zu records", rr.nr);
	cr_assert_eq(rr.lost, 0);
	for (r = 0; r < ROUNDS; r++)
		for (n = 0; n <= MAXN; n++, i++) {
			const struct fdr_test_rec *rec = &rr.v[i];
			rec_blob h;

			memcpy(&h, rec->payload, sizeof(h));
			cr_assert_eq(h.seq, r * 1000 + n, "record %u: seq %u", i, h.seq);
			cr_assert_eq(h.fdr__common.pid, gettid_());
			cr_assert_eq(h.data >> 16, n, "record %u: %u bytes, wrote %u", i,
				     h.data >> 16, n);
			cr_assert_eq(h.data & 0xffff, sizeof(h));
			cr_assert_eq(rec->len, (sizeof(h) + n + 7) & ~7u, "record %u: length %u", i,
				     rec->len);
			cr_assert_eq(memcmp(rec->payload + sizeof(h), src + r, n), 0,
				     "record %u (%u bytes): data differs", i, n);
			for (k = (uint32_t)sizeof(h) + n; k < rec->len; k++)
				cr_assert_eq(rec->payload[k], 0, "record %u: padding byte %u", i,
					     k);
			cr_assert_neq(rec->ts, 0);
			if (i)
				cr_assert_geq(rec->ts, rr.v[i - 1].ts, "time goes back at %u", i);
		}
	fdr_test_recs_free(&rr);
}

Test(ring, stats_file_format)
{
	struct fdr_test_recs rr;
	char path[64], *txt;
	regex_t re;
	int cpu, err;
	uint64_t bytes, sum = 0, oldest_s, oldest_us;
	size_t i;

	setup(0, 0);
	cpu = fdr_test_pin(0);
	write_seq(0, 10);
	cr_assert_eq(fdr_test_collect(env.s, 0, cpu, 0, &rr), 0);
	cr_assert_eq(rr.nr, 10);
	snprintf(path, sizeof(path), "per_cpu/cpu%d/stats", cpu);
	txt = fdr_test_read(env.s, path, 0, NULL, &err);
	cr_assert_not_null(txt);
	cr_assert_eq(regcomp(&re,
			     "^entries: 10\n"
			     "overrun: 0\n"
			     "commit overrun: 0\n"
			     "bytes: [0-9]+\n"
			     "oldest event ts: +[0-9]+\\.[0-9]{6}\n"
			     "now ts: +[0-9]+\\.[0-9]{6}\n"
			     "dropped events: 0\n"
			     "read events: 0\n"
			     /* fdr's line after the kernel's (docs/design/differences.md) */
			     "snapshot events: 0\n$",
			     REG_EXTENDED | REG_NOSUB),
		     0);
	cr_assert_eq(regexec(&re, txt, 0, NULL, 0), 0, "stats text not in the kernel's layout:\n%s",
		     txt);
	regfree(&re);
	/* bytes: the unread records, headers included */
	bytes = fdr_test_stat_field(txt, "bytes");
	for (i = 0; i < rr.nr; i++)
		sum += rr.v[i].len;
	cr_assert(bytes >= sum && bytes <= sum + 16 * rr.nr,
		  "bytes %" PRIu64 " for %" PRIu64 " payload bytes", bytes, sum);
	/* the oldest event's time is the first record's, to the microsecond */
	cr_assert_eq(sscanf(strstr(txt, "oldest event ts:"),
			    "oldest event ts: %" SCNu64 ".%" SCNu64, &oldest_s, &oldest_us),
		     2);
	cr_assert_eq(oldest_s * 1000000 + oldest_us, (rr.v[0].ts + 500) / 1000,
		     "oldest event ts %s", strstr(txt, "oldest"));
	free(txt);
	fdr_test_recs_free(&rr);
}

/* ---- trace_pipe_raw: the kernel's ring-buffer page (spec 6.4 - 6.6) ---- */

struct page_rec {
	uint64_t ts;
	uint32_t len; /* payload bytes, padded to 4 */
	const unsigned char *p;
};

/* Decode one page; returns the number of data records, fills @out. */
static int decode_page(const unsigned char *page, size_t size, struct page_rec *out, int max,
		       uint64_t *commit_out, int *extends)
{
	uint64_t ts, commit;
	size_t off = 16, end;
	int n = 0;

	memcpy(&ts, page, 8);
	memcpy(&commit, page + 8, 8);
	*commit_out = commit;
	end = 16 + (commit & ((1u << 27) - 1));
	cr_assert_leq(end, size, "commit %#llx beyond the page", (unsigned long long)commit);
	*extends = 0;
	while (off + 4 <= end) {
		uint32_t w, type_len, delta, arr;

		memcpy(&w, page + off, 4);
		type_len = w & 0x1f;
		delta = w >> 5;
		if (type_len == 29) {
			cr_assert_neq(delta, 0,
				      "padding with delta 0 means end of data, before commit");
			memcpy(&arr, page + off + 4, 4);
			off += 4 + arr;
			continue;
		}
		if (type_len == 30) {
			memcpy(&arr, page + off + 4, 4);
			ts += ((uint64_t)arr << 27) | delta;
			off += 8;
			(*extends)++;
			continue;
		}
		cr_assert_neq(type_len, 31, "absolute time stamps are not expected in delta mode");
		ts += delta;
		cr_assert_lt(n, max);
		if (type_len == 0) {
			memcpy(&arr, page + off + 4, 4);
			cr_assert_gt(arr, 4u + 112u, "type_len 0 is for payloads over 112 bytes");
			out[n].len = arr - 4;
			out[n].p = page + off + 8;
			off += 4 + arr;
		} else {
			out[n].len = type_len * 4;
			out[n].p = page + off + 4;
			off += 4 + type_len * 4;
		}
		out[n].ts = ts;
		cr_assert_leq(off, end, "record runs past commit");
		n++;
	}
	cr_assert_eq(off, end, "records do not end at commit");
	return n;
}

static uint64_t ts_diff(uint64_t a, uint64_t b)
{
	return a > b ? a - b : b - a;
}

Test(ring, trace_pipe_raw_page)
{
	struct fdr_test_recs rr;
	struct page_rec pr[8];
	struct fdr_file *f;
	unsigned char page[4096], more[16];
	char path[64], longs[151];
	struct timespec gap = { 0, 150 * 1000 * 1000 };
	uint64_t commit;
	ssize_t n;
	int cpu, k, nr, extends;
	size_t i;

	memset(longs, 'L', 150);
	longs[150] = 0;
	setup(0, 0);
	cpu = fdr_test_pin(0);
	fdr_tring_seq(1, 11, "a");
	fdr_tring_seq(2, 22, longs); /* payload > 112 bytes: type_len 0 */
	nanosleep(&gap, NULL); /* delta >= 2^27 ns: a TIME_EXTEND */
	fdr_tring_seq(3, 33, "c");
	cr_assert_eq(fdr_test_collect(env.s, 0, cpu, 0, &rr), 0);
	cr_assert_eq(rr.nr, 3);

	snprintf(path, sizeof(path), "per_cpu/cpu%d/trace_pipe_raw", cpu);
	cr_assert_eq(fdr_file_open(env.s, path, O_RDONLY | O_NONBLOCK, &f), 0);
	n = fdr_file_read(f, page, sizeof(page));
	cr_assert_eq(n, 4096, "a page-sized read returns the whole sub-buffer, got %zd", n);
	nr = decode_page(page, sizeof(page), pr, 8, &commit, &extends);
	cr_assert_eq(nr, 3, "page holds %d records", nr);
	cr_assert_eq(commit >> 30, 0, "no missed-events flags without a loss (commit %#llx)",
		     (unsigned long long)commit);
	cr_assert_eq(extends, 1, "one TIME_EXTEND for the 150 ms gap, got %d", extends);
	{
		uint64_t base;

		memcpy(&base, page, 8);
		cr_assert_eq(base, pr[0].ts, "first record's delta must be 0");
	}
	for (k = 0; k < nr; k++) {
		cr_assert_eq(pr[k].len, (rr.v[k].len + 3) & ~3u, "record %d: length %u vs %u", k,
			     pr[k].len, rr.v[k].len);
		cr_assert_eq(memcmp(pr[k].p, rr.v[k].payload, rr.v[k].len), 0,
			     "record %d payload differs", k);
		/*
		 * Two readers may convert TSC stamps with slightly different rates
		 * (see clock/record_ts_stable_across_readers); an encoding error
		 * (a lost TIME_EXTEND, wrong units) is off by far more than 20 us.
		 */
		cr_assert_leq(ts_diff(pr[k].ts, rr.v[k].ts), 20000,
			      "record %d: page time %llu vs %llu", k, (unsigned long long)pr[k].ts,
			      (unsigned long long)rr.v[k].ts);
	}
	for (i = 16 + (commit & ((1u << 27) - 1)); i < sizeof(page); i++)
		cr_assert_eq(page[i], 0, "byte %zu after the data is not zero", i);
	/* consumed */
	n = fdr_file_read(f, more, sizeof(more));
	cr_assert_eq(n, -EAGAIN, "empty ring, O_NONBLOCK: -EAGAIN, got %zd", n);
	fdr_file_close(f);
	cr_assert_eq(stat_of(0, cpu, "read events"), 3);
	cr_assert_eq(stat_of(0, cpu, "entries"), 0);
	fdr_test_recs_free(&rr);
}

Test(ring, trace_pipe_raw_small_reads)
{
	struct fdr_file *f;
	unsigned char whole[4096];
	size_t got = 0;
	char path[64];
	int cpu;

	setup(0, 0);
	cpu = fdr_test_pin(0);
	write_seq(0, 4);
	snprintf(path, sizeof(path), "per_cpu/cpu%d/trace_pipe_raw", cpu);
	cr_assert_eq(fdr_file_open(env.s, path, O_RDONLY | O_NONBLOCK, &f), 0);
	/* 100 + 100 + the rest: consecutive pieces of the same sub-buffer */
	while (got < sizeof(whole)) {
		size_t want = got < 200 ? 100 : sizeof(whole) - got;
		ssize_t n = fdr_file_read(f, whole + got, want);

		cr_assert_eq(n, (ssize_t)want, "piece at %zu: %zd", got, n);
		got += (size_t)n;
	}
	cr_assert_eq(fdr_file_read(f, whole, 1), -EAGAIN, "one sub-buffer, then nothing");
	fdr_file_close(f);
	{
		struct page_rec pr[8];
		uint64_t commit;
		int ext, k, nr = decode_page(whole, sizeof(whole), pr, 8, &commit, &ext);

		cr_assert_eq(nr, 4);
		for (k = 0; k < 4; k++) {
			rec_seq h;

			memcpy(&h, pr[k].p, sizeof(h));
			cr_assert_eq(h.seq, (uint32_t)k);
		}
	}
}

Test(ring, second_consumer_is_busy)
{
	struct fdr_reader *a, *b;
	pid_t pid;
	int st;

	setup(0, 0);
	cr_assert_eq(fdr_reader_open(env.s, 0, -1, FDR_READ_CONSUME, &a), 0);
	/* another process */
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		int ret = fdr_reader_open(env.s, 0, -1, FDR_READ_CONSUME, &b);

		_exit(ret == -EBUSY ? 0 : 1);
	}
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "a second process must get EBUSY");
	fdr_reader_close(a);
	cr_assert_eq(fdr_reader_open(env.s, 0, -1, FDR_READ_CONSUME, &b), 0,
		     "closing frees the slot");
	fdr_reader_close(b);
}

static void *late_marker(void *p)
{
	struct timespec d = { 0, 100 * 1000 * 1000 };

	(void)p;
	nanosleep(&d, NULL);
	fdr_marker("late");
	return NULL;
}

Test(ring, trace_pipe_blocks_until_data)
{
	struct fdr_file *f;
	pthread_t t;
	char buf[256];
	ssize_t n;

	setup(0, 0);
	cr_assert_eq(fdr_file_open(env.s, "trace_pipe", O_RDONLY, &f), 0);
	cr_assert_eq(pthread_create(&t, NULL, late_marker, NULL), 0);
	n = fdr_file_read(f, buf, sizeof(buf) - 1); /* blocks until the marker */
	pthread_join(t, NULL);
	cr_assert_gt(n, 0, "blocking trace_pipe read: %zd", n);
	buf[n] = 0;
	cr_assert_not_null(strstr(buf, "tracing_mark_write: late\n"), "trace_pipe:\n%s", buf);
	fdr_file_close(f);
}

Test(ring, trace_pipe_eof_when_tracing_off, .timeout = 10)
{
	struct fdr_file *f;
	char buf[256];
	ssize_t n;

	setup(0, 0);
	cr_assert_gt(fdr_marker("one"), 0);
	cr_assert_eq(fdr_test_puts(env.s, "tracing_on", O_TRUNC, "0\n"), 2);
	cr_assert_eq(fdr_marker("two"), -EBADF, "fdr_marker() with tracing off");
	cr_assert_eq(fdr_file_open(env.s, "trace_pipe", O_RDONLY, &f), 0);
	n = fdr_file_read(f, buf, sizeof(buf));
	cr_assert_gt(n, 0);
	/* tracing off and this fd returned data: end of file, not a block */
	n = fdr_file_read(f, buf, sizeof(buf));
	cr_assert_eq(n, 0, "expected EOF, got %zd", n);
	fdr_file_close(f);
}

/* ---- fork ---- */

Test(ring, fork_child_records_own_pid)
{
	struct fdr_test_recs rr;
	pid_t child;
	int st, parent_n = 0, child_n = 0;
	size_t i;
	char *txt;

	setup(0, 0);
	prctl(PR_SET_NAME, "fdrparent");
	write_seq(0, 5);
	child = fork();
	cr_assert_geq(child, 0);
	if (child == 0) {
		prctl(PR_SET_NAME, "fdrchild");
		write_seq(100, 7);
		_exit(0);
	}
	cr_assert_eq(waitpid(child, &st, 0), child);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	write_seq(5, 5);
	cr_assert_eq(fdr_test_collect(env.s, 0, -1, 0, &rr), 0);
	cr_assert_eq(rr.nr, 17);
	for (i = 0; i < rr.nr; i++) {
		rec_seq h;

		memcpy(&h, rr.v[i].payload, sizeof(h));
		if (h.seq >= 100) {
			cr_assert_eq(h.fdr__common.pid, child,
				     "child's record carries pid %d, child is %d",
				     h.fdr__common.pid, child);
			child_n++;
		} else {
			cr_assert_eq(h.fdr__common.pid, gettid_(), "parent's record carries pid %d",
				     h.fdr__common.pid);
			parent_n++;
		}
	}
	cr_assert_eq(child_n, 7);
	cr_assert_eq(parent_n, 10);
	fdr_test_recs_free(&rr);
	/* the child's name was saved too */
	txt = fdr_test_read(env.s, "saved_cmdlines", 0, NULL, &st);
	cr_assert_not_null(txt);
	{
		char want[64];

		snprintf(want, sizeof(want), "%d fdrchild\n", (int)child);
		cr_assert_not_null(strstr(txt, want), "saved_cmdlines lacks '%s':\n%s", want, txt);
		snprintf(want, sizeof(want), "%d fdrparent\n", (int)gettid_());
		cr_assert_not_null(strstr(txt, want), "saved_cmdlines lacks '%s':\n%s", want, txt);
	}
	free(txt);
}

/* ---- signal-handler nesting ---- */

static volatile sig_atomic_t sig_writes;
static volatile uint32_t in_main_write;

static void on_alarm(int sig)
{
	(void)sig;
	fdr_tring_seq(0x80000000u | (uint32_t)sig_writes, in_main_write, "sig");
	sig_writes = sig_writes + 1;
}

Test(ring, signal_handler_nesting, .timeout = 60)
{
	struct itimerval it = { { 0, 50 }, { 0, 50 } };
	struct sigaction sa;
	struct fdr_test_recs rr;
	uint64_t main_writes = 0, nsig, main_read = 0, sig_read = 0, nested = 0, interrupting = 0;
	struct timespec t0, t1;
	size_t i;

	setup(16384, 1);
	fdr_test_pin(0);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sa.sa_flags = SA_RESTART;
	cr_assert_eq(sigaction(SIGALRM, &sa, NULL), 0);
	cr_assert_eq(setitimer(ITIMER_REAL, &it, NULL), 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		in_main_write = 1;
		fdr_tring_seq((uint32_t)main_writes, 0, "main");
		in_main_write = 0;
		main_writes++;
		clock_gettime(CLOCK_MONOTONIC, &t1);
	} while (sig_writes < 400 && main_writes < 150000 && t1.tv_sec - t0.tv_sec < 10);
	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_REAL, &it, NULL);
	signal(SIGALRM, SIG_IGN);
	nsig = (uint64_t)sig_writes;
	cr_assert_gt(nsig, 0, "no signal arrived");

	cr_assert_eq(fdr_test_collect(env.s, 0, -1, 0, &rr), 0);
	cr_assert_eq(rr.nr + rr.lost, main_writes + nsig, "read %zu + lost %llu != written %llu",
		     rr.nr, (unsigned long long)rr.lost, (unsigned long long)(main_writes + nsig));
	cr_assert_eq(rr.lost, 0, "16 MiB holds this run; nothing may be lost");
	for (i = 0; i < rr.nr; i++) {
		rec_seq h;

		memcpy(&h, rr.v[i].payload, sizeof(h));
		if (h.seq & 0x80000000u) {
			cr_assert_eq(h.seq & 0x7fffffffu, sig_read, "handler records out of order");
			sig_read++;
			if (h.val)
				interrupting++;
			if (h.fdr__common.preempt_count)
				nested++;
		} else {
			cr_assert_eq(h.seq, main_read, "main seq %u, expected %llu", h.seq,
				     (unsigned long long)main_read);
			cr_assert_eq(h.fdr__common.preempt_count, 0,
				     "a main-line write is not nested");
			main_read++;
		}
	}
	cr_assert_eq(sig_read, nsig, "signal-handler writes: read %llu of %llu",
		     (unsigned long long)sig_read, (unsigned long long)nsig);
	cr_assert_eq(main_read, main_writes);
	cr_assert_gt(interrupting, 0, "no handler write interrupted a write (out of %llu)",
		     (unsigned long long)nsig);
	cr_log_info(
		"%llu main writes, %llu from the handler, %llu inside a write call, %llu nested in a commit",
		(unsigned long long)main_writes, (unsigned long long)nsig,
		(unsigned long long)interrupting, (unsigned long long)nested);
	fdr_test_recs_free(&rr);
}

/*
 * Step 2 of a switch mirrors the new sub-buffer's header next to head (a
 * seqlock: tag_a, pos, cum, tag_b), so a snapshot swap need not read the data
 * area. After many switches the mirror holds exactly the current header.
 */
Test(ring, header_mirror_matches_current_subbuf)
{
	const struct fdr_abi_ring *h;
	const struct fdr_abi_cpu *c;
	const struct fdr_abi_subbuf *sb;
	void *base;
	size_t size;
	uint64_t head, tag;
	uint32_t doff, ss;
	int cpu, round;

	setup(16, 1);
	cpu = fdr_test_pin(0);
	cr_assert_eq(fdr_session_ring(env.s, 0, &base, &size), 0);
	h = base;
	c = (const void *)((const char *)base + h->cpu_off);
	c += cpu; /* buffer 0 (live: no snapshot was taken) of this CPU */
	ss = c->subbuf_size;
	for (round = 0; round < 5; round++) {
		write_seq((uint32_t)round * 700, 700); /* wraps the 16 KiB ring each round */
		head = __atomic_load_n(&c->head, __ATOMIC_ACQUIRE);
		doff = (uint32_t)head;
		cr_assert_neq(doff % ss, 0, "a single writer leaves head inside a sub-buffer");
		tag = (head >> 48) << 48 | ((doff / ss) * (uint64_t)ss + FDR_SUBBUF_HDR);
		sb = (const void *)((const char *)base + c->data_off + (doff / ss) * (size_t)ss);
		cr_assert_eq(c->hdr_tag_a, tag, "tag_a %#llx, expected %#llx",
			     (unsigned long long)c->hdr_tag_a, (unsigned long long)tag);
		cr_assert_eq(c->hdr_tag_b, tag);
		cr_assert_eq(c->hdr_pos, sb->pos, "mirror pos %llu, header %llu",
			     (unsigned long long)c->hdr_pos, (unsigned long long)sb->pos);
		cr_assert_eq(c->hdr_cum, sb->cum, "mirror cum %llu, header %llu",
			     (unsigned long long)c->hdr_cum, (unsigned long long)sb->cum);
	}
}
