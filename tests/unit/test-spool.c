// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test-spool.c - whole sub-buffers moved into a file (fdr_reader_take_subbufs)
 * and read back (fdr_reader_open_spool): every record comes back once, in order;
 * taking makes room in discard mode; overwritten records are counted exactly;
 * and a hostile spool (truncated, bad record lengths, bad header positions) is
 * read as the ring reader reads a hostile ring: what checks out, the rest
 * skipped and counted, never a crash.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "fdr-criterion.h"
#include "fdr-test.h"

/* clang-format off */
FDR_EVENT(tspool, seq,
	FDR_PROTO(uint32_t seq, const char *s),
	FDR_ARGS(seq, s),
	FDR_FIELDS(
		fdr_field_int(uint32_t, seq, seq)
		fdr_field_string(s, s)))
/* clang-format on */

typedef struct fdr__rec_tspool_seq rec_seq;

static struct fdr_test_env env;

static void fini(void)
{
	fdr_test_teardown(&env);
}

TestSuite(spool, .fini = fini, .timeout = 30);

static void setup(uint32_t kb, int overwrite)
{
	struct fdr_session_opts o = { .buffer_size_kb = kb, .overwrite = overwrite };

	cr_assert_eq(fdr_test_setup(&env, &o), 0, "session setup failed");
	cr_assert_eq(fdr_test_set_enabled(env.s, &fdr_ev_tspool_seq, 0, 1), 0);
}

static void write_seq(uint32_t from, uint32_t n)
{
	char s[48];
	uint32_t i;

	for (i = from; i < from + n; i++) {
		/* lengths vary, so records straddle sub-buffer ends at many offsets */
		snprintf(s, sizeof(s), "s-%u-%.*s", i, (int)(i % 23), "abcdefghijklmnopqrstuvw");
		fdr_tspool_seq(i, s);
	}
}

/* The seq of a record, after checking that its string is the one written with it. */
static uint32_t seq_of(const struct fdr_record *rec)
{
	char want[48];
	rec_seq h;
	uint32_t off, len;

	cr_assert_geq(rec->len, sizeof(h));
	memcpy(&h, rec->payload, sizeof(h));
	cr_assert_eq(h.fdr__common.type, fdr_ev_tspool_seq.id);
	off = h.s & 0xffff;
	len = h.s >> 16;
	cr_assert(off + len <= rec->len && len >= 1, "__data_loc beyond the record");
	snprintf(want, sizeof(want), "s-%u-%.*s", h.seq, (int)(h.seq % 23),
		 "abcdefghijklmnopqrstuvw");
	cr_assert_str_eq((const char *)rec->payload + off, want, "a torn record (seq %u)", h.seq);
	return h.seq;
}

/* What a reader gave: the seqs in order and the records it said were lost. */
struct got {
	uint32_t *seq;
	size_t nr, cap;
	uint64_t lost;
};

/* Read @r dry with fdr_reader_next(), appending to @g. */
static void drain(struct fdr_reader *r, struct got *g)
{
	struct fdr_record rec;
	int ret;

	while ((ret = fdr_reader_next(r, &rec)) > 0) {
		if (g->nr == g->cap) {
			/* doubling: one realloc a record was quadratic (ASan's realloc copies) */
			g->cap = g->cap ? 2 * g->cap : 1024;
			g->seq = realloc(g->seq, g->cap * sizeof(*g->seq));
			cr_assert_not_null(g->seq);
		}
		g->seq[g->nr++] = seq_of(&rec);
		g->lost += rec.lost_before;
	}
	cr_assert_eq(ret, 0, "reader error %d", ret);
}

/*
 * spool_on_disk: an unnamed file in the working directory (the build tree, on
 * disk), which the spool reader reads with direct I/O, as fdr record's spools;
 * otherwise a memfd (shmem has no direct I/O: the reader goes through the cache).
 */
static int spool_on_disk;

static int spool_file(void)
{
	int fd = spool_on_disk ? open(".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600) :
				 memfd_create("spool", MFD_CLOEXEC);

	cr_assert_geq(fd, 0, "spool file: %s", strerror(errno));
	return fd;
}

/*
 * One take into @fd: with fdr_reader_take_subbufs(), or (take_into_memory) with
 * fdr_reader_take_subbufs_mem() into a buffer written to @fd at the spool's
 * offset afterwards, as fdr record's stage and flusher do.
 */
static int take_into_memory;

static int take(struct fdr_reader *r, int fd, uint64_t max, struct fdr_spool *sp)
{
	uint64_t before = sp->bytes;
	unsigned char *buf;
	int n;

	if (!take_into_memory)
		return fdr_reader_take_subbufs(r, fd, max, sp);
	buf = aligned_alloc(4096, max);
	cr_assert_not_null(buf);
	n = fdr_reader_take_subbufs_mem(r, buf, max, sp);
	cr_assert_leq(sp->bytes - before, max);
	if (sp->bytes > before)
		cr_assert_eq(pwrite(fd, buf, sp->bytes - before, (off_t)before),
			     (ssize_t)(sp->bytes - before));
	else
		cr_assert_eq(sp->bytes, before);
	free(buf);
	return n;
}

/* Take everything complete from CPU @cpu's ring into @fd. Returns sub-buffers kept. */
static int take_all(struct fdr_reader *r, int fd, struct fdr_spool *sp)
{
	int n, total = 0;

	while ((n = take(r, fd, 1u << 20, sp)) > 0)
		total += n;
	cr_assert_eq(n, 0, "take: %d", n);
	return total;
}

/* Read a spool with fdr_reader_next(), and again as pages: both must agree. */
static void read_spool(int fd, const struct fdr_spool *sp, struct got *g)
{
	struct fdr_raw_stats st = { 0 };
	struct fdr_reader *r;
	unsigned char *pages = malloc(64 * 4096);
	int n;

	cr_assert_not_null(pages);
	cr_assert_eq(fdr_reader_open_spool(env.s, 0, fd, sp, &r), 0);
	drain(r, g);
	fdr_reader_close(r);
	cr_assert_eq(fdr_reader_open_spool(env.s, 0, fd, sp, &r), 0);
	while ((n = fdr_reader_raw_pages(r, pages, 4096, 64, &st)) > 0)
		;
	cr_assert_eq(n, 0);
	fdr_reader_close(r);
	cr_assert_eq(st.records, g->nr, "pages hold %llu records, the reader gave %zu",
		     (unsigned long long)st.records, g->nr);
	cr_assert_eq(st.lost, g->lost, "pages flag %llu lost, the reader said %llu",
		     (unsigned long long)st.lost, (unsigned long long)g->lost);
	free(pages);
}

static void check_in_order(const struct got *g, uint32_t first)
{
	size_t i;

	for (i = 0; i < g->nr; i++)
		cr_assert_eq(g->seq[i], first + i, "record %zu is seq %u, expected %zu", i,
			     g->seq[i], first + i);
}

static void take_then_tail_every_record_once(void);

Test(spool, take_then_tail_every_record_once)
{
	take_then_tail_every_record_once();
}

/* the same spool on disk: read back with direct I/O, 1 MiB at a time */
Test(spool, take_then_tail_every_record_once_on_disk)
{
	spool_on_disk = 1;
	take_then_tail_every_record_once();
}

static void take_then_tail_every_record_once(void)
{
	struct fdr_spool sp = { 0 };
	struct fdr_reader *r;
	struct got g = { 0 };
	int fd = spool_file(), n;
	size_t from_spool;

	setup(256, -1);
	cr_assert_geq(fdr_test_pin(0), 0);
	cr_assert_eq(fdr_reader_open(env.s, 0, 0, FDR_READ_CONSUME, &r), 0);
	write_seq(0, 2000);
	n = take_all(r, fd, &sp);
	cr_assert_gt(n, 3, "2000 records fill more than 3 sub-buffers (%d taken)", n);
	cr_assert_eq(sp.bytes, (uint64_t)n * 4096);
	cr_assert_eq(sp.subbuf_size, 4096);
	cr_assert_eq(sp.lost, 0);
	cr_assert_eq(lseek(fd, 0, SEEK_END), (off_t)sp.bytes);
	read_spool(fd, &sp, &g);
	cr_assert_eq(g.nr, sp.records, "spool holds %zu records, headers say %llu", g.nr,
		     (unsigned long long)sp.records);
	from_spool = g.nr;
	/* the writer's sub-buffer: through the record path, from where the take ended */
	drain(r, &g);
	cr_assert_gt(g.nr, from_spool, "the last sub-buffer is left to the record path");
	cr_assert_eq(g.nr, 2000, "read %zu records of 2000", g.nr);
	cr_assert_eq(g.lost, 0);
	check_in_order(&g, 0);
	fdr_reader_close(r);
	free(g.seq);
	close(fd);
}

Test(spool, take_mid_subbuf_starts_there)
{
	struct fdr_spool sp = { 0 };
	struct fdr_reader *r;
	struct got g = { 0 };
	struct fdr_record rec;
	int fd = spool_file(), i;

	setup(256, -1);
	cr_assert_geq(fdr_test_pin(0), 0);
	cr_assert_eq(fdr_reader_open(env.s, 0, 0, FDR_READ_CONSUME, &r), 0);
	write_seq(0, 1500);
	/* read 10 one by one: the reader is now inside the first sub-buffer */
	for (i = 0; i < 10; i++) {
		cr_assert_eq(fdr_reader_next(r, &rec), 1);
		cr_assert_eq(seq_of(&rec), (uint32_t)i);
	}
	/* and one peeked, not taken: it must not be lost or doubled */
	cr_assert_eq(fdr_reader_wait(r, 0), 1);
	cr_assert_gt(take_all(r, fd, &sp), 0);
	cr_assert_gt(sp.start_pos & 4095, 48, "the spool starts inside its first sub-buffer");
	cr_assert_eq(sp.start_cum, 10);
	read_spool(fd, &sp, &g);
	drain(r, &g);
	cr_assert_eq(g.nr, 1490);
	cr_assert_eq(g.lost, 0);
	check_in_order(&g, 10);
	fdr_reader_close(r);
	free(g.seq);
	close(fd);
}

Test(spool, take_gives_room_back_in_discard_mode)
{
	struct fdr_spool sp = { 0 };
	struct fdr_reader *r;
	struct fdr_cpu_stats st;
	struct got g = { 0 };
	int fd = spool_file(), cpu;

	setup(16, -1);
	cpu = fdr_test_pin(0);
	cr_assert_geq(cpu, 0);
	cr_assert_eq(fdr_reader_open(env.s, 0, cpu, FDR_READ_CONSUME, &r), 0);
	write_seq(0, 2000); /* far more than 16 KiB: the rest is refused */
	cr_assert_eq(fdr_ring_stats(env.s, 0, (uint32_t)cpu, &st), 0);
	cr_assert_gt(st.dropped, 0);
	cr_assert_gt(take_all(r, fd, &sp), 0);
	/* consumed moved: the writer has room again */
	write_seq(100000, 50);
	read_spool(fd, &sp, &g);
	drain(r, &g);
	cr_assert_eq(g.lost, 0);
	cr_assert_eq(fdr_ring_stats(env.s, 0, (uint32_t)cpu, &st), 0);
	cr_assert_eq(g.nr + st.dropped, 2050, "read %zu + refused %llu != written 2050", g.nr,
		     (unsigned long long)st.dropped);
	cr_assert_eq(g.seq[g.nr - 1], 100049, "the records written after the take are there");
	cr_assert_eq(st.read, g.nr, "read_events counts what the takes and reads consumed");
	fdr_reader_close(r);
	free(g.seq);
	close(fd);
}

static void overwrite_lost_counted_exactly(void);

Test(spool, overwrite_lost_counted_exactly)
{
	overwrite_lost_counted_exactly();
}

Test(spool, overwrite_lost_counted_exactly_via_memory)
{
	take_into_memory = 1;
	overwrite_lost_counted_exactly();
}

Test(spool, overwrite_lost_counted_exactly_via_memory_on_disk)
{
	take_into_memory = 1;
	spool_on_disk = 1;
	overwrite_lost_counted_exactly();
}

static void overwrite_lost_counted_exactly(void)
{
	struct fdr_spool sp = { 0 };
	struct fdr_reader *r;
	struct got g = { 0 };
	int fd = spool_file(), round;
	uint32_t next = 0;

	setup(16, 1);
	cr_assert_geq(fdr_test_pin(0), 0);
	cr_assert_eq(fdr_reader_open(env.s, 0, 0, FDR_READ_CONSUME, &r), 0);
	/* wrap the ring between takes, several times */
	for (round = 0; round < 5; round++) {
		write_seq(next, 1500);
		next += 1500;
		take_all(r, fd, &sp);
	}
	cr_assert_gt(sp.lost, 0, "16 KiB cannot hold 1500 records: some were overwritten");
	read_spool(fd, &sp, &g);
	cr_assert_eq(g.lost, sp.lost, "the spool reader finds the gaps the takes counted");
	drain(r, &g);
	cr_assert_eq(g.nr + g.lost, next, "read %zu + lost %llu != written %u", g.nr,
		     (unsigned long long)g.lost, next);
	for (size_t i = 1; i < g.nr; i++)
		cr_assert_gt(g.seq[i], g.seq[i - 1], "out of order at %zu", i);
	cr_assert_eq(g.seq[g.nr - 1], next - 1, "the newest record is there");
	fdr_reader_close(r);
	free(g.seq);
	close(fd);
}

struct race {
	int cpu; /* the writer's CPU, or -1 if pinning failed */
	uint32_t n;
	volatile int done;
};

static void *race_writer(void *arg)
{
	struct race *w = arg;

	w->cpu = fdr_test_pin(1);
	if (w->cpu >= 0)
		write_seq(0, w->n);
	__atomic_store_n(&w->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * Overwrite mode, a writer on another CPU lapping a 12 KiB ring while takes copy
 * it: sub-buffers overwritten during their copy must be cut, never read torn (each
 * record's string is checked against its seq), and every record is read or
 * counted lost.
 */
static void overwrite_race_never_torn(void);

Test(spool, overwrite_race_never_torn, .timeout = 60)
{
	overwrite_race_never_torn();
}

Test(spool, overwrite_race_never_torn_via_memory, .timeout = 60)
{
	take_into_memory = 1;
	overwrite_race_never_torn();
}

static void overwrite_race_never_torn(void)
{
	struct race w = { .cpu = -1, .n = 400000 };
	struct fdr_spool sp = { 0 };
	struct fdr_reader *r;
	struct got g = { 0 };
	pthread_t t;
	int fd = spool_file(), takes = 0, cpu;
	size_t i;

	if (fdr_test_nr_allowed_cpus() < 2)
		cr_skip_test("needs 2 CPUs");
	setup(8, 1);
	cpu = fdr_test_pin(0);
	cr_assert_geq(cpu, 0);
	/* the writer's CPU is the second allowed one: find it as the thread will */
	cr_assert_eq(pthread_create(&t, NULL, race_writer, &w), 0);
	while (!__atomic_load_n(&w.done, __ATOMIC_ACQUIRE) && w.cpu < 0)
		sched_yield();
	cr_assert_geq(w.cpu, 0, "cannot pin the writer");
	cr_assert_eq(fdr_reader_open(env.s, 0, w.cpu, FDR_READ_CONSUME, &r), 0);
	while (!__atomic_load_n(&w.done, __ATOMIC_ACQUIRE)) {
		int n = take(r, fd, 8192, &sp);

		cr_assert_geq(n, 0, "take: %d", n);
		takes++;
	}
	pthread_join(t, NULL);
	take_all(r, fd, &sp);
	read_spool(fd, &sp, &g);
	drain(r, &g);
	cr_log_info("%d takes, %llu sub-buffers cut, %zu read, %llu lost", takes,
		    (unsigned long long)sp.cut, g.nr, (unsigned long long)g.lost);
	cr_assert_gt(g.nr, 0);
	cr_assert_eq(g.nr + g.lost, w.n, "read %zu + lost %llu != written %u", g.nr,
		     (unsigned long long)g.lost, w.n);
	for (i = 1; i < g.nr; i++)
		cr_assert_gt(g.seq[i], g.seq[i - 1], "out of order at %zu", i);
	fdr_reader_close(r);
	free(g.seq);
	close(fd);
}

/*
 * A read (fdr_reader_wait() peeks) finds the gap of an overwrite before a take:
 * the take must count it, not drop it.
 */
Test(spool, gap_seen_by_a_peek_is_counted_by_the_take)
{
	struct fdr_spool sp = { 0 };
	struct fdr_reader *r;
	struct got g = { 0 };
	int fd = spool_file();

	setup(16, 1);
	cr_assert_geq(fdr_test_pin(0), 0);
	cr_assert_eq(fdr_reader_open(env.s, 0, 0, FDR_READ_CONSUME, &r), 0);
	write_seq(0, 3000); /* 16 KiB wraps many times */
	cr_assert_eq(fdr_reader_wait(r, 0), 1, "a record to peek");
	take_all(r, fd, &sp);
	cr_assert_gt(sp.lost, 0, "the take reports the gap the peek found");
	read_spool(fd, &sp, &g);
	cr_assert_eq(g.lost, sp.lost, "and the spool's pages flag it");
	drain(r, &g);
	cr_assert_eq(g.nr + g.lost, 3000, "read %zu + lost %llu != written 3000", g.nr,
		     (unsigned long long)g.lost);
	check_in_order(&g, 3000 - (uint32_t)g.nr);
	fdr_reader_close(r);
	free(g.seq);
	close(fd);
}

Test(spool, take_refuses_what_it_cannot_do)
{
	struct fdr_spool sp = { 0 };
	struct fdr_reader *r;
	int fd = spool_file();

	setup(64, -1);
	cr_assert_eq(fdr_reader_open(env.s, 0, 0, 0, &r), 0);
	cr_assert_eq(fdr_reader_take_subbufs(r, fd, 1u << 20, &sp), -EINVAL,
		     "a reader that does not consume");
	fdr_reader_close(r);
	cr_assert_eq(fdr_reader_open(env.s, 0, -1, FDR_READ_CONSUME, &r), 0);
	if (fdr_ring_nr_cpus(env.s, 0) > 1)
		cr_assert_eq(fdr_reader_take_subbufs(r, fd, 1u << 20, &sp), -EINVAL,
			     "a reader of several CPUs");
	fdr_reader_close(r);
	cr_assert_eq(fdr_reader_open(env.s, 0, 0, FDR_READ_CONSUME, &r), 0);
	cr_assert_eq(fdr_reader_take_subbufs(r, fd, 100, &sp), -EINVAL, "less than a sub-buffer");
	sp.bytes = 100;
	cr_assert_eq(fdr_reader_take_subbufs(r, fd, 1u << 20, &sp), -EINVAL, "a torn spool");
	fdr_reader_close(r);
	close(fd);
}

/* ---- hostile spools ------------------------------------------------------------------------ */

/* A valid spool of at least 4 whole sub-buffers, from position 0 (a fresh session). */
static unsigned char *valid_spool(struct fdr_spool *sp)
{
	struct fdr_reader *r;
	unsigned char *img;
	int fd = spool_file();

	setup(256, -1);
	cr_assert_geq(fdr_test_pin(0), 0);
	cr_assert_eq(fdr_reader_open(env.s, 0, 0, FDR_READ_CONSUME, &r), 0);
	write_seq(0, 3000);
	memset(sp, 0, sizeof(*sp));
	cr_assert_geq(take_all(r, fd, sp), 4);
	fdr_reader_close(r);
	cr_assert_eq(sp->start_pos, 0);
	cr_assert_eq(sp->start_cum, 0);
	img = malloc(sp->bytes);
	cr_assert_not_null(img);
	cr_assert_eq(pread(fd, img, sp->bytes, 0), (ssize_t)sp->bytes);
	close(fd);
	return img;
}

static struct fdr_abi_subbuf *hdr(unsigned char *img, int k)
{
	return (struct fdr_abi_subbuf *)(img + (size_t)k * 4096);
}

/* The record number @i (from 0) of sub-buffer @k. */
static struct fdr_abi_rec *rec_at(unsigned char *img, int k, int i)
{
	uint32_t off = FDR_SUBBUF_HDR;

	while (i-- > 0)
		off += ((struct fdr_abi_rec *)(img + (size_t)k * 4096 + off))->len_type &
		       FDR_REC_LEN_MASK;
	return (struct fdr_abi_rec *)(img + (size_t)k * 4096 + off);
}

enum expect {
	EXACT, /* every record read or counted lost: read + lost == all */
	SKIPS, /* some records skipped uncounted (a header that lies): read + lost <= all */
};

static const struct hostile {
	const char *name;
	void (*spoil)(unsigned char *img, struct fdr_spool *sp);
	enum expect expect;
	uint64_t file_bytes; /* the file is cut to this (0: as long as sp->bytes) */
} * cur;

static void sp_len_7(unsigned char *img, struct fdr_spool *sp)
{
	(void)sp;
	rec_at(img, 1, 3)->len_type = FDR_REC_DATA << FDR_REC_TYPE_SHIFT | 7;
}

static void sp_len_huge(unsigned char *img, struct fdr_spool *sp)
{
	(void)sp;
	rec_at(img, 1, 0)->len_type = FDR_REC_DATA << FDR_REC_TYPE_SHIFT | FDR_REC_LEN_MASK;
}

static void sp_len_past_end(unsigned char *img, struct fdr_spool *sp)
{
	(void)sp;
	rec_at(img, 2, 5)->len_type = FDR_REC_DATA << FDR_REC_TYPE_SHIFT | 4096;
}

static void sp_len_short(unsigned char *img, struct fdr_spool *sp)
{
	(void)sp;
	rec_at(img, 1, 2)->len_type = FDR_REC_DATA << FDR_REC_TYPE_SHIFT | 16;
}

static void sp_len_zero(unsigned char *img, struct fdr_spool *sp)
{
	(void)sp;
	rec_at(img, 2, 1)->len_type = FDR_REC_DATA << FDR_REC_TYPE_SHIFT;
}

static void sp_type_pad(unsigned char *img, struct fdr_spool *sp)
{
	(void)sp;
	rec_at(img, 1, 4)->len_type |= FDR_REC_PAD << FDR_REC_TYPE_SHIFT;
}

static void sp_type_bad(unsigned char *img, struct fdr_spool *sp)
{
	(void)sp;
	rec_at(img, 1, 4)->len_type = (rec_at(img, 1, 4)->len_type & FDR_REC_LEN_MASK) |
				      0x7fu << FDR_REC_TYPE_SHIFT;
}

static void sp_pos_unaligned(unsigned char *img, struct fdr_spool *sp)
{
	(void)sp;
	hdr(img, 1)->pos += 8;
}

static void sp_pos_cut(unsigned char *img, struct fdr_spool *sp)
{
	(void)sp;
	hdr(img, 2)->pos = UINT64_MAX; /* what a take leaves on a cut sub-buffer */
}

static void sp_pos_replayed(unsigned char *img, struct fdr_spool *sp)
{
	(void)sp;
	memcpy(img + 2 * 4096, img, 4096); /* sub-buffer 0 again in place of 2 */
}

static void sp_pos_ahead(unsigned char *img, struct fdr_spool *sp)
{
	(void)sp;
	hdr(img, 1)->pos += 1000 * 4096; /* the later ones then look old: skipped */
	hdr(img, 1)->cum = 0;
}

static void sp_cum_backwards(unsigned char *img, struct fdr_spool *sp)
{
	(void)sp;
	hdr(img, 2)->cum = 1;
}

static void sp_all_ff(unsigned char *img, struct fdr_spool *sp)
{
	memset(img, 0xff, sp->bytes);
}

static void sp_all_zero(unsigned char *img, struct fdr_spool *sp)
{
	memset(img, 0, sp->bytes); /* pos 0, as the first sub-buffer's: no records */
}

static void sp_file_short(unsigned char *img, struct fdr_spool *sp)
{
	(void)img;
	(void)sp; /* the file ends 1.5 sub-buffers in, the description says more */
}

static void sp_start_unaligned(unsigned char *img, struct fdr_spool *sp)
{
	(void)img;
	sp->start_pos = 4096 + 13;
}

static void sp_start_beyond(unsigned char *img, struct fdr_spool *sp)
{
	(void)img;
	sp->start_pos = UINT64_MAX - 4095;
}

static const struct hostile hostile[] = {
	{ "record length 7", sp_len_7, EXACT, 0 },
	{ "record length 0xffffff", sp_len_huge, EXACT, 0 },
	{ "record running past the sub-buffer", sp_len_past_end, EXACT, 0 },
	{ "record shorter than its header + common", sp_len_short, EXACT, 0 },
	{ "record length 0", sp_len_zero, EXACT, 0 },
	{ "padding record mid sub-buffer", sp_type_pad, EXACT, 0 },
	{ "unknown record type", sp_type_bad, EXACT, 0 },
	{ "header position not a sub-buffer start", sp_pos_unaligned, EXACT, 0 },
	{ "header spoiled by a cut", sp_pos_cut, EXACT, 0 },
	{ "an older sub-buffer replayed", sp_pos_replayed, EXACT, 0 },
	{ "header position far ahead", sp_pos_ahead, SKIPS, 0 },
	{ "record count going backwards", sp_cum_backwards, SKIPS, 0 },
	{ "all 0xff", sp_all_ff, SKIPS, 0 },
	{ "all zero", sp_all_zero, SKIPS, 0 },
	{ "file shorter than the spool says", sp_file_short, SKIPS, 4096 + 2048 },
	{ "start position not 8-aligned", sp_start_unaligned, SKIPS, 0 },
	{ "start position at the end of positions", sp_start_beyond, SKIPS, 0 },
};

Test(spool, hostile_spools)
{
	struct fdr_spool good;
	unsigned char *img = valid_spool(&good), *bad = malloc(good.bytes);
	size_t k;

	cr_assert_not_null(bad);
	{
		/* the valid one reads back whole */
		struct got g = { 0 };
		int fd = spool_file();

		cr_assert_eq(pwrite(fd, img, good.bytes, 0), (ssize_t)good.bytes);
		read_spool(fd, &good, &g);
		cr_assert_eq(g.nr, good.records);
		cr_assert_eq(g.lost, 0);
		check_in_order(&g, 0);
		free(g.seq);
		close(fd);
	}
	for (k = 0; k < sizeof(hostile) / sizeof(hostile[0]); k++) {
		struct fdr_spool sp = good;
		struct got g = { 0 };
		int fd = spool_file();
		size_t i;

		cur = &hostile[k];
		memcpy(bad, img, good.bytes);
		cur->spoil(bad, &sp);
		cr_assert_eq(pwrite(fd, bad, cur->file_bytes ? cur->file_bytes : sp.bytes, 0),
			     (ssize_t)(cur->file_bytes ? cur->file_bytes : sp.bytes));
		read_spool(fd, &sp, &g);
		/* never a record twice or out of order, never more than there was */
		for (i = 1; i < g.nr; i++)
			cr_assert_gt(g.seq[i], g.seq[i - 1], "%s: out of order at %zu", cur->name,
				     i);
		for (i = 0; i < g.nr; i++)
			cr_assert_lt(g.seq[i], good.records, "%s: seq %u was never written",
				     cur->name, g.seq[i]);
		if (cur->expect == EXACT) {
			cr_assert_lt(g.nr, good.records, "%s: nothing was skipped", cur->name);
			cr_assert_eq(g.nr + g.lost, good.records,
				     "%s: read %zu + lost %llu != %llu in the spool", cur->name,
				     g.nr, (unsigned long long)g.lost,
				     (unsigned long long)good.records);
		}
		free(g.seq);
		close(fd);
	}
	/* a length that is not whole sub-buffers, or a bad sub-buffer size: refused */
	{
		struct fdr_spool sp = good;
		struct fdr_reader *r;
		int fd = spool_file();

		sp.bytes = good.bytes - 100;
		cr_assert_eq(fdr_reader_open_spool(env.s, 0, fd, &sp, &r), -EINVAL);
		sp = good;
		sp.subbuf_size = 3000;
		cr_assert_eq(fdr_reader_open_spool(env.s, 0, fd, &sp, &r), -EINVAL);
		sp.subbuf_size = 2u << 20;
		cr_assert_eq(fdr_reader_open_spool(env.s, 0, fd, &sp, &r), -EINVAL);
		close(fd);
	}
	free(bad);
	free(img);
}
