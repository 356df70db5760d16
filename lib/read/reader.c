// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * reader.c - reading per-CPU rings (see lib/core/ring.c for the writer).
 *
 * A cursor per CPU holds a private copy of one sub-buffer. To read sub-buffer S
 * (a linear position, a multiple of subbuf_size) it:
 *   1. reads head (acquire) and derives the writer's linear position W: the
 *      writer's sub-buffer header gives its linear start (or, at offset 0, the
 *      previous header's start + subbuf_size);
 *   2. if S is older than the oldest sub-buffer still in the ring
 *      (W's sub-buffer - (nr_subbufs - 1) sub-buffers), the records between are
 *      lost: the count comes from the cumulative record counts in the headers;
 *   3. copies S, then re-reads head: if the writer has since entered S's slot one
 *      lap later, the copy may be torn and is thrown away (step 2 then counts it);
 *   4. checks the copy's header (its position must be S) and parses records with
 *      every length checked; a sub-buffer that does not check out is skipped and
 *      its records are counted as lost through the next header's count.
 * Bytes of the sub-buffer the writer is still in are valid up to the head read
 * in step 1: the writer publishes head only after the record's bytes.
 *
 * Several CPUs are merged by timestamp (a k-way merge over peeked records).
 *
 * A consuming reader of the live buffers (trace_pipe, fdr pipe, fdr record) has
 * a cursor on each of the CPU's two buffers, each following its buffer's writer
 * in that buffer's own positions and counts, merged by raw timestamp
 * (rd_pick()): what a snapshot swap moved into the snapshot before it was read
 * is read from there, and the snapshot is not changed (the reader publishes its
 * position into the live buffer's entry only). Its counts (read, overrun) are
 * the CPU's, in the buffer-0 entry; swaps leave them alone. See
 * docs/design/ring.md, "Snapshots" and "Loss accounting".
 *
 * fdr record moves whole sub-buffers instead (fdr_reader_take_subbufs(): copied
 * by the kernel from the ring file into a spool file, then step 3's check, with
 * the sub-buffers the writer re-entered cut from the spool), and reads the spool
 * back later with a cursor of the same kind (fdr_reader_open_spool()): only where
 * a sub-buffer comes from differs (rd_refresh_ring(), rd_refresh_spool()); the
 * record check (rd_rec_len()), the loss count (rd_enter()) and the page builder
 * are shared. See docs/design/record.md.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/sendfile.h>

#include "fdr/fdr-read.h"
#include "read-local.h"

struct rd_ring {
	struct fdr_abi_ring h; /* private copy of the header, checked: layout from here */
	const struct fdr_abi_ring *hdr; /* the mapped header: its snapshot words only */
	const unsigned char *base;
	size_t size;
	uint32_t nr_cpus;
	char name[32]; /* "ring.<inst>.<gen>", for messages */
};

/* a following reader's drained snapshot cursor is looked at once in this many picks */
#define RD_QUIET_LOOKS 4096u

/* looks that raced with a switch after which a following reader stops waiting (rd_pick()) */
#define RD_RACED_MAX 64

/* polls of an idle CPU that may trust an unchanged head (rd_refresh_ring()) */
#define RD_IDLE_SKIPS 64

struct rd_cpu {
	uint32_t cpu;
	uint32_t bi; /* which of the CPU's two buffers this cursor reads */
	struct fdr_abi_cpu *c; /* that buffer's control entry */
	struct fdr_abi_cpu *c0; /* the CPU's buffer-0 entry: active index, swap time */
	struct fdr_abi_cpu *slot; /* holds our consuming-reader slot, or NULL */
	int bad; /* this CPU's buffers did not check out: skipped (see fdr_reader_error()) */
	const unsigned char *data;
	uint32_t ss, shift, n; /* checked copies (rd_cpu_init()) */
	uint64_t data_off[FDR_RING_BUFS]; /* of each buffer, checked copies */
	unsigned char *buf; /* private copy of one sub-buffer */
	uint64_t buf_pos; /* linear start of the copy, UINT64_MAX if none */
	uint32_t buf_valid; /* bytes of the copy that hold records */
	int buf_final; /* the writer had left that sub-buffer */
	uint64_t pos; /* linear position of the next record */
	uint64_t cum; /* records before pos */
	uint64_t lost; /* lost since the last record returned (its lost_before) */
	uint64_t lost_pub; /* of lost, already published as overrun (rd_publish_lost()) */
	uint64_t held_n, held_lost; /* FDR_READ_HOLD: read and lost, not yet published */
	int complete_only; /* FDR_READ_COMPLETE: not the writer's sub-buffer */
	int have; /* rec is a peeked record */
	struct fdr_record rec;
	uint64_t rec_pos_after;
	uint32_t raced; /* looks in a row that raced with a switch (rd_refresh_ring()) */
	int cum_mono; /* a following reader's: record counts never go back (rd_enter()) */
	uint32_t quiet; /* a following reader's snapshot cursor read to its end: rd_pick() */
	uint64_t quiet_seq; /* ... as long as snap_seq keeps this value */
	uint64_t quiet_cum; /* ... and the buffer's hdr_cum this one (a reset changes it) */
	uint64_t seen_head; /* head as rd_refresh_ring()'s last look read it first (rd_pick()) */
	uint64_t idle_head; /* head when rd_refresh_ring() last found nothing new */
	uint64_t idle_cum; /* hdr_cum then: a reset can bring head back to a value it had */
	uint32_t idle_left; /* how many more polls may trust idle_head; 0: none */
	/*
	 * The CPU's last record taken (rd_take_local()), converted (in its first cursor,
	 * cpus[i]): no later record of the CPU is given an earlier time (rd_pick())
	 */
	uint64_t ts_floor;
	int bounded; /* a snapshot reader stops at the writer position seen at open */
	uint32_t end_off;
	uint64_t end_sub;
	int spool_fd; /* a spool reader's file (borrowed), -1 for a ring cursor */
	int spool_dfd; /* the same opened again with O_DIRECT (owned), -1: none */
	uint64_t spool_off; /* next sub-buffer to read from it */
	uint64_t spool_end; /* its length in whole sub-buffers */
	unsigned char *spool_batch; /* sub-buffers read from it in one pread() */
	uint32_t spool_batch_nr; /* room in spool_batch, in sub-buffers */
	uint32_t spool_batch_at, spool_batch_have; /* next one to use, how many were read */
};

struct fdr_reader {
	struct fdr_session *s;
	uint32_t inst;
	unsigned flags;
	uint32_t gen;
	struct rd_ring ring;
	struct fdr_clock_conv conv;
	uint32_t nr;
	struct rd_cpu *cpus;
	int spool; /* opened by fdr_reader_open_spool(): no ring behind it */
	int ring_fd; /* the ring file, read-only, for fdr_reader_take_subbufs(); -1: not open */
	int copy_mode; /* how takes copy: 0 copy_file_range, 1 sendfile, 2 write */
	/*
	 * A consuming reader of the live buffers follows both buffers of each CPU:
	 * cursor cpus[b * nr + i] reads buffer b of the i-th CPU, so what a swap
	 * moved into the snapshot before it was read is read from there (see
	 * rd_pick()). nr_cur: the cursors allocated (nr, or 2 * nr when following).
	 */
	int follow;
	uint32_t nr_cur;
	/*
	 * Takes (fdr_reader_take_subbufs()) from both buffers go into one spool, in
	 * one sequence of positions and record counts: the next sub-buffer taken is
	 * given position v_next and v_cum records before it (see rd_take_from()).
	 */
	uint64_t v_next, v_cum;
	/* takes that found the snapshot buffer not takeable and so left the live one */
	uint32_t old_waits;
	char error[FDR_SHM_ERROR_LEN]; /* the first part skipped as corrupt, "" if none */
	uint32_t clock, subbuf_size; /* of the instance, checked (fdr_shm_check_instance()) */
	/* FDR_READ_UNORDERED: the CPU (index) read last, and how many more it may give */
	uint32_t stay_i, stay_left;
};

#define RD_STAY_MAX 4096 /* FDR_READ_UNORDERED: records in a row from one CPU */

/*
 * Check a ring mapping's header (fdr_shm_check_ring(), the one check that libfdr's
 * writers run too); fills @r with a copy of it. The CPUs' geometry is checked
 * per CPU when a cursor is made (rd_cpu_init()), so that a bad CPU is skipped
 * rather than the whole ring refused. Returns 0 or -EUCLEAN (fdr_shm_error()).
 */
static int rd_ring_check(const void *base, size_t size, uint32_t inst, uint32_t gen,
			 struct rd_ring *r)
{
	snprintf(r->name, sizeof(r->name), "ring.%u.%u", inst, gen);
	if (fdr_shm_check_ring(base, size, r->name, &r->h))
		return -EUCLEAN;
	r->hdr = base;
	r->base = base;
	r->size = size;
	r->nr_cpus = r->h.nr_cpus;
	return 0;
}

/* Buffer @bi of @cpu (< nr_cpus): the header copy placed the entries inside the file. */
static struct fdr_abi_cpu *rd_entry(const struct rd_ring *r, uint32_t bi, uint32_t cpu)
{
	return (struct fdr_abi_cpu *)((const char *)r->base + r->h.cpu_off) +
	       (size_t)bi * r->nr_cpus + cpu;
}

/*
 * Both buffers of @cpu checked (fdr_shm_check_cpu(), the check libfdr's writers
 * run at fdr_ring_map_open()) into @g[0] and @g[1]; 0 or -EUCLEAN (text in
 * fdr_shm_error()).
 */
static int rd_cpu_geom(const struct rd_ring *r, uint32_t cpu, struct fdr_shm_geom g[FDR_RING_BUFS])
{
	uint32_t bi;

	memset(g, 0, FDR_RING_BUFS * sizeof(*g));
	for (bi = 0; bi < FDR_RING_BUFS; bi++) {
		if (bi)
			g[bi] = g[0]; /* the spare buffer must have the live one's geometry */
		if (fdr_shm_check_cpu(&r->h, r->base, r->name, cpu, bi, &g[bi]))
			return -EUCLEAN;
	}
	return 0;
}

/* The reader's first complaint about shared memory (also in fdr_shm_error()). */
static void rd_complain(struct fdr_reader *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void rd_complain(struct fdr_reader *r, const char *fmt, ...)
{
	char text[FDR_SHM_ERROR_LEN];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	fdr_shm_errorf("%s", text);
	if (r && !r->error[0])
		snprintf(r->error, sizeof(r->error), "%s", text);
}

/* Stop reading @rc's CPU: what it holds is corrupt (said once, in r->error). */
static void rd_cpu_bad(struct fdr_reader *r, struct rd_cpu *rc, const char *why)
{
	rd_complain(r, "%s", why);
	rc->bad = 1;
	rc->have = 0;
}

/*
 * Make the cursor of @cpu, buffer @bi. A CPU whose geometry does not check out
 * gets a cursor marked bad (no records, no buffer; said in r->error).
 */
static int rd_cpu_init(struct fdr_reader *r, struct rd_cpu *rc, const struct rd_ring *ring,
		       uint32_t cpu, uint32_t bi)
{
	struct fdr_shm_geom g[FDR_RING_BUFS];
	uint32_t b;

	memset(rc, 0, sizeof(*rc));
	rc->cpu = cpu;
	rc->bi = bi;
	rc->c0 = rd_entry(ring, 0, cpu);
	rc->c = rd_entry(ring, bi, cpu);
	rc->buf_pos = UINT64_MAX;
	rc->spool_fd = -1;
	rc->spool_dfd = -1;
	if (rd_cpu_geom(ring, cpu, g)) {
		rd_cpu_bad(r, rc, fdr_shm_error());
		return 0;
	}
	for (b = 0; b < FDR_RING_BUFS; b++)
		rc->data_off[b] = g[b].data_off;
	rc->ss = g[0].subbuf_size;
	rc->shift = g[0].shift;
	rc->n = g[0].nr_subbufs;
	rc->data = ring->base + rc->data_off[bi];
	rc->buf = malloc(rc->ss);
	return rc->buf ? 0 : -ENOMEM;
}

/*
 * The writer's position: @w_sub = linear start of its sub-buffer, @w_off = offset
 * in it. Returns 0, -EAGAIN (raced with a switch), -EUCLEAN (garbage head).
 */
static int rd_writer(const struct rd_cpu *rc, uint64_t *w_sub, uint32_t *w_off)
{
	/* acquire: pairs with the commit store of head in the writer */
	uint64_t head = __atomic_load_n(&rc->c->head, __ATOMIC_ACQUIRE);
	uint32_t doff = (uint32_t)head;
	uint32_t idx = doff >> rc->shift, off = doff & (rc->ss - 1), hidx;
	const struct fdr_abi_subbuf *h;
	uint64_t pos;

	if (idx >= rc->n)
		return -EUCLEAN;
	hidx = off ? idx : (idx == 0 ? rc->n - 1 : idx - 1);
	h = (const void *)(rc->data + ((size_t)hidx << rc->shift));
	pos = __atomic_load_n(&h->pos, __ATOMIC_ACQUIRE);
	if (!off)
		pos += rc->ss;
	if ((pos & (rc->ss - 1)) || ((pos >> rc->shift) % rc->n) != idx)
		return -EAGAIN;
	*w_sub = pos;
	*w_off = off;
	return 0;
}

static int rd_writer_retry(const struct rd_cpu *rc, uint64_t *w_sub, uint32_t *w_off)
{
	int i, ret = -EAGAIN;

	for (i = 0; i < 100 && ret == -EAGAIN; i++)
		ret = rd_writer(rc, w_sub, w_off);
	return ret;
}

/* Copy sub-buffer @S into rc->buf; returns 0, -EAGAIN (overwritten meanwhile). */
static int rd_copy(struct rd_cpu *rc, uint64_t S, uint64_t w_sub, uint32_t w_off)
{
	uint64_t w2_sub;
	uint32_t w2_off;
	size_t slot = (size_t)((S >> rc->shift) % rc->n);

	memcpy(rc->buf, rc->data + (slot << rc->shift), rc->ss);
	/* acquire: the copy above is done before head is read again */
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	if (rd_writer_retry(rc, &w2_sub, &w2_off))
		return -EAGAIN;
	if (w2_sub >= S + (uint64_t)rc->n * rc->ss)
		return -EAGAIN;
	rc->buf_pos = S;
	rc->buf_final = w_sub > S;
	rc->buf_valid = rc->buf_final ? rc->ss : w_off;
	return 0;
}

static const struct fdr_abi_subbuf *rd_hdr(const struct rd_cpu *rc)
{
	return (const void *)rc->buf;
}

/*
 * The one record check, shared by everything that parses a sub-buffer copy (live
 * reads, the stats walk, spools): is there a data record at @off of @buf, whose
 * first @valid bytes hold records? Returns its length (header included), or 0:
 * padding, garbage, or not written yet.
 */
static uint32_t rd_rec_len(const unsigned char *buf, uint32_t off, uint32_t valid)
{
	const struct fdr_abi_rec *h;
	uint32_t len;

	if (off > valid || valid - off < sizeof(*h))
		return 0;
	h = (const void *)(buf + off);
	len = h->len_type & FDR_REC_LEN_MASK;
	if ((h->len_type >> FDR_REC_TYPE_SHIFT) != FDR_REC_DATA || len < sizeof(*h) + 8 ||
	    (len & 7) || len > valid - off)
		return 0;
	return len;
}

/*
 * The copy in rc->buf checked out as sub-buffer @S. If the cursor enters it (its
 * position is before the first record, or before @S: the sub-buffers between were
 * lost), the header says how many records came before it: any gap is lost.
 */
static void rd_enter(struct rd_cpu *rc, uint64_t S)
{
	const struct fdr_abi_subbuf *h = rd_hdr(rc);

	/*
	 * Already inside: a re-copy of the writer's sub-buffer, or a spool's
	 * start. Unless the header counts more records before the sub-buffer
	 * than the cursor has before its position inside it: the buffer was
	 * reset under the cursor (a snapshot freed and allocated again starts
	 * over at position 0, its count going on), and this is a new sub-buffer
	 * at the same position, after the records the reset threw away.
	 */
	if (rc->pos >= S && rc->pos - S >= FDR_SUBBUF_HDR && h->cum <= rc->cum)
		return;
	if (h->cum > rc->cum)
		rc->lost += h->cum - rc->cum;
	/*
	 * A following reader's buffers count on forever (a snapshot freed and
	 * allocated again goes on from its count): a lower one is a header read
	 * while the buffer was being freed, not a count to go back to.
	 */
	if (h->cum >= rc->cum || !rc->cum_mono)
		rc->cum = h->cum;
	rc->pos = S + FDR_SUBBUF_HDR;
}

/*
 * Is the sub-buffer at @S in the ring the one copied into rc->buf, as its
 * header's record count says? Not after a reset (rd_enter()): the writer is
 * back at the same position and offset with a higher count.
 */
static int rd_same_subbuf(const struct rd_cpu *rc, uint64_t S)
{
	size_t slot = (size_t)((S >> rc->shift) % rc->n);
	const struct fdr_abi_subbuf *h = (const void *)(rc->data + (slot << rc->shift));

	return __atomic_load_n(&h->cum, __ATOMIC_RELAXED) == rd_hdr(rc)->cum;
}

/*
 * Read the next ring sub-buffer for rd_peek() into rc->buf. Returns 1 (go on:
 * the cursor has a copy or moved), 0 (nothing new now), or a negative errno.
 */
static int rd_refresh_ring(struct rd_cpu *rc)
{
	const uint64_t mask = rc->ss - 1;
	/* acquire: as in rd_writer(); read before it, see the idle shortcut below */
	uint64_t head = __atomic_load_n(&rc->c->head, __ATOMIC_ACQUIRE);
	/* on head's cache line: the count of the sub-buffer head is in (see idle_cum) */
	uint64_t hcum = __atomic_load_n(&rc->c->hdr_cum, __ATOMIC_RELAXED);
	uint64_t S = rc->pos & ~mask, w_sub, oldest;
	uint32_t w_off;
	int ret;

	rc->seen_head = head; /* what a look that finds nothing found it as of */

	/*
	 * The idle shortcut: this CPU had nothing new when head read rc->idle_head,
	 * and head has not moved since (switch_gen and the record count are in it: an
	 * equal head after writes needs 65536 sub-buffer switches), nor has the
	 * count in hdr_cum: a reset of the buffer (a snapshot freed and allocated
	 * again) brings head back to its first value, its count going on. A merge
	 * polls every idle CPU for each record of the busy ones; this makes that
	 * one cache line. At most RD_IDLE_SKIPS in a row, then a full look anyway.
	 */
	if (rc->idle_left && head == rc->idle_head && hcum == rc->idle_cum) {
		rc->idle_left--;
		return 0;
	}
	rc->idle_left = 0;
	ret = rd_writer_retry(rc, &w_sub, &w_off);
	if (ret == -EAGAIN) {
		rc->raced++; /* nothing now, but maybe something: see rd_pick() */
		return 0;
	}
	rc->raced = 0;
	if (ret)
		return ret;
	oldest = w_sub >= (uint64_t)(rc->n - 1) * rc->ss ? w_sub - (uint64_t)(rc->n - 1) * rc->ss :
							   0;
	if (rc->bounded && (w_sub > rc->end_sub || (w_sub == rc->end_sub && w_off > rc->end_off))) {
		/* the snapshot became live again: what came after it is not ours */
		w_sub = rc->end_sub;
		w_off = rc->end_off;
	}
	if (S < oldest) {
		S = oldest;
		rc->pos = S;
	}
	if (S > w_sub) {
		/* beyond the writer: a stale or bogus consumed position */
		rc->pos = w_sub;
		S = w_sub;
	}
	/*
	 * The writer's sub-buffer: once it has left it. Not in a buffer a swap
	 * took out of the writers' way (a following reader's snapshot cursor):
	 * nobody fills that one any more, so it is read as it is.
	 */
	if (rc->complete_only && S == w_sub &&
	    (!rc->c0 || (__atomic_load_n(&rc->c0->active, __ATOMIC_ACQUIRE) & 1) == rc->bi))
		return 0;
	if ((S == w_sub && w_off == 0) ||
	    (S == w_sub && rc->buf_pos == S && rc->buf_valid == w_off &&
	     (rc->pos & mask) >= w_off && rd_same_subbuf(rc, S))) {
		/* nothing new: as of head's later read, so as of the earlier one too */
		rc->idle_head = head;
		rc->idle_cum = hcum;
		rc->idle_left = RD_IDLE_SKIPS;
		return 0;
	}
	if (rd_copy(rc, S, w_sub, w_off) < 0)
		return 1;
	if (rd_hdr(rc)->pos != S) {
		rc->buf_pos = UINT64_MAX;
		rc->pos = S + rc->ss;
		return S + rc->ss > w_sub ? 0 : 1;
	}
	rd_enter(rc, S);
	return 1;
}

/*
 * Read the next sub-buffer of a spool (fdr_reader_open_spool()) into rc->buf. A
 * spool holds whole sub-buffers as fdr_reader_take_subbufs() copied them from the
 * ring, in order; it is checked as the ring is: a header whose position is not a
 * sub-buffer start at or after the cursor's is skipped (cut, or garbage), one
 * further on means sub-buffers were lost, counted through its record count.
 * Returns 1 (go on), 0 (end of the spool), or a negative errno.
 */
static int rd_refresh_spool(struct rd_cpu *rc)
{
	const uint64_t mask = rc->ss - 1;
	const struct fdr_abi_subbuf *h = rd_hdr(rc);
	uint64_t S = rc->pos & ~mask;

	rc->buf_pos = UINT64_MAX;
	if (rc->spool_batch_at == rc->spool_batch_have) {
		/* the next batch: whole sub-buffers only (a torn end is not read) */
		uint64_t left = rc->spool_end > rc->spool_off ? rc->spool_end - rc->spool_off : 0;
		size_t want = (size_t)rc->spool_batch_nr << rc->shift, got = 0;

		if (left < want)
			want = (size_t)(left & ~(uint64_t)mask);
		while (got < want) {
			int fd = rc->spool_dfd >= 0 ? rc->spool_dfd : rc->spool_fd;
			ssize_t n = pread(fd, rc->spool_batch + got, want - got,
					  (off_t)(rc->spool_off + got));

			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0 && fd == rc->spool_dfd && errno == EINVAL) {
				close(rc->spool_dfd); /* not aligned for it: through the cache */
				rc->spool_dfd = -1;
				continue;
			}
			if (n < 0)
				return -errno;
			if (n == 0)
				break; /* shorter than it was said to be */
			got += (size_t)n;
		}
		rc->spool_off += got;
		rc->spool_batch_at = 0;
		rc->spool_batch_have = (uint32_t)(got >> rc->shift);
		if (!rc->spool_batch_have)
			return 0;
	}
	memcpy(rc->buf, rc->spool_batch + ((size_t)rc->spool_batch_at++ << rc->shift), rc->ss);
	if ((h->pos & mask) || h->pos < S)
		return 1;
	rc->buf_pos = h->pos;
	rc->buf_final = 1;
	rc->buf_valid = rc->ss;
	rd_enter(rc, h->pos);
	return 1;
}

/* A CPU whose ring turned out corrupt while reading it: skip it from now on. */
static void rd_cpu_corrupt(struct fdr_reader *r, struct rd_cpu *rc, const char *what)
{
	char why[FDR_SHM_ERROR_LEN];
	uint64_t head = __atomic_load_n(&rc->c->head, __ATOMIC_RELAXED);

	if (strcmp(what, "head") == 0)
		snprintf(why, sizeof(why),
			 "%s: cpu %u buffer %u: head %#llx: offset %u is not inside its %u "
			 "sub-buffers of %u",
			 r->ring.name, rc->cpu, rc->bi, (unsigned long long)head, (uint32_t)head,
			 rc->n, rc->ss);
	else
		snprintf(why, sizeof(why), "%s: cpu %u buffer %u: %s", r->ring.name, rc->cpu,
			 rc->bi, what);
	rd_cpu_bad(r, rc, why);
}

/*
 * Peek the next record of one CPU into rc->rec. Returns 1 (have one), 0 (none
 * now), or a negative errno for a ring that cannot be read.
 */
static int rd_peek(struct fdr_reader *r, struct rd_cpu *rc)
{
	const uint64_t mask = rc->ss - 1;
	int guard;

	if (rc->have)
		return 1;
	if (rc->bad)
		return 0; /* skipped: said once in r->error */
	/*
	 * Each round returns, moves to another sub-buffer or re-reads head: bounded.
	 * A spool read consumes a sub-buffer of the spool each time: bounded by its size.
	 */
	for (guard = 0; guard < 4 * (int)rc->n + 64;) {
		uint64_t S = rc->pos & ~mask;
		int ret;

		if (rc->pos & 7) {
			/* records are 8-aligned: a bogus position (hostile consumed) skips on */
			rc->pos = S + rc->ss;
			guard++;
			continue;
		}

		if (rc->buf_pos == S && (rc->pos & mask) >= FDR_SUBBUF_HDR) {
			uint32_t off = (uint32_t)(rc->pos & mask);
			uint32_t len = rd_rec_len(rc->buf, off, rc->buf_valid);

			if (len) {
				const struct fdr_abi_rec *h = (const void *)(rc->buf + off);

				rc->rec.cpu = rc->cpu;
				rc->rec.len = len - (uint32_t)sizeof(*h);
				rc->rec.payload = rc->buf + off + sizeof(*h);
				rc->rec.raw_ts = h->ts;
				/* the header stays in rc->buf as long as the payload does */
				rc->rec.subbuf = rd_hdr(rc);
				rc->rec.ts = fdr_clock_conv(&r->conv, h->ts, rc->rec.subbuf);
				rc->rec.lost_before = rc->lost;
				rc->rec_pos_after = rc->pos + len;
				rc->have = 1;
				return 1;
			}
			if (rc->buf_final) {
				/* padding, garbage, or the end: the rest of this sub-buffer is skipped */
				rc->pos = S + rc->ss;
				guard += rc->spool_fd < 0;
				continue;
			}
			/* the writer's sub-buffer: not there yet */
		}
		if (rc->spool_fd >= 0) {
			ret = rd_refresh_spool(rc);
		} else {
			ret = rd_refresh_ring(rc);
			guard++;
		}
		if (ret == -EUCLEAN && rc->spool_fd < 0) {
			rd_cpu_corrupt(r, rc, "head");
			return 0;
		}
		if (ret <= 0)
			return ret;
	}
	if (rc->spool_fd < 0) {
		rd_cpu_corrupt(r, rc,
			       "no record found in a bounded walk from the reader's position");
		return 0;
	}
	return -EUCLEAN;
}

/*
 * A following reader's cursor @rc found nothing: if its buffer is the snapshot,
 * no swap came since snap_seq read @seq (before the look) and the writers in
 * flight at the last swap are done (2 ms, see rd_snapshot_settle()), nothing
 * more should come into it until the next swap: mark it quiet. A writer that
 * comes later all the same moves head, which rd_pick() compares.
 */
static void rd_quiet_check(struct fdr_reader *r, struct rd_cpu *rc, uint64_t seq)
{
	uint64_t last;

	if ((seq & 1) || (__atomic_load_n(&rc->c0->active, __ATOMIC_ACQUIRE) & 1) == rc->bi)
		return;
	last = __atomic_load_n(&rc->c0->swap_ns, __ATOMIC_ACQUIRE);
	if (last && fdr_lease_age(fdr_session_lease_ns(r->s), last) < 2000000)
		return;
	/* acquire: active and swap_ns were read before snap_seq is read again */
	if (__atomic_load_n(&r->ring.hdr->snap_seq, __ATOMIC_ACQUIRE) != seq)
		return;
	rc->quiet = RD_QUIET_LOOKS;
	rc->quiet_seq = seq;
	rc->quiet_cum = __atomic_load_n(&rc->c->hdr_cum, __ATOMIC_RELAXED);
}

static void rd_publish_lost(struct fdr_reader *r, struct rd_cpu *rc);

/*
 * The cursor of the @i-th CPU of the reader whose record comes next: a
 * following reader (r->follow) has one per buffer, and both buffers of a CPU
 * are written by that CPU's writers one critical section after the other, with
 * the timestamp taken inside it, so their records merge by timestamp into the
 * order they were written in, however many swaps came between. NULL if none now;
 * *@err gets a cursor's negative errno, if any.
 *
 * That holds only if a cursor that found nothing had nothing older than the
 * record picked from the other one. A writer commits into the buffer that was
 * live when its critical section began: one whose virtual CPU the hypervisor
 * stopped inside it (no preemption the guest sees, so rseq does not abort it)
 * commits into the snapshot buffer milliseconds after the swap, and its thread
 * then goes on in the live buffer; and within one pick, the empty buffer may be
 * looked at before a commit into it that came before the other buffer's record.
 * So after the pick, each cursor of the CPU that found nothing has its
 * buffer's head read again, after the other cursor's (acquire): unchanged, the
 * buffer had nothing before the picked record (every commit into it that came
 * before that record's is visible by then); moved, the pick is made again
 * (stress/accounting saw a writer's record read 2024 records late, unit test
 * ring/late_commit_into_snapshot_keeps_order forges one).
 */
static inline __attribute__((always_inline)) struct rd_cpu *rd_pick(struct fdr_reader *r,
								    uint32_t i, int *err)
{
	struct rd_cpu *best, *empty[FDR_RING_BUFS];
	uint64_t seq = 0;
	uint32_t b, spare = 1, n_empty, k, tries = 0;
	int doubt, moved;

again:
	best = NULL;
	n_empty = 0;
	doubt = 0;
	*err = 0;
	if (r->follow) {
		seq = __atomic_load_n(&r->ring.hdr->snap_seq, __ATOMIC_ACQUIRE);
		spare = __atomic_load_n(&r->ring.hdr->spare_allocated, __ATOMIC_ACQUIRE);
	}
	for (b = 0; b < (r->follow ? FDR_RING_BUFS : 1u); b++) {
		struct rd_cpu *rc = &r->cpus[b * r->nr + i];
		int ret;

		if (rc->bad)
			continue; /* skipped: said once in r->error */
		/*
		 * The snapshot buffer read to its end, with no swap since, no reset
		 * (its hdr_cum as it was) and no commit (its head as it was): it
		 * costs three loads of one cache line that no writer touches (the
		 * merge looks at every cursor for each record it hands out). Looked
		 * at in full all the same every RD_QUIET_LOOKS times.
		 */
		if (rc->quiet && !rc->have && rc->quiet_seq == seq &&
		    __atomic_load_n(&rc->c->hdr_cum, __ATOMIC_RELAXED) == rc->quiet_cum &&
		    __atomic_load_n(&rc->c->head, __ATOMIC_RELAXED) == rc->seen_head &&
		    --rc->quiet) {
			empty[n_empty++] = rc;
			continue;
		}
		/*
		 * Snapshot buffers freed: the buffer that is not live has no memory;
		 * what the cursor had not read there is counted lost when they are
		 * allocated again (their count goes on, fdr_ring_buffer_reset()).
		 */
		if (!spare && !rc->have &&
		    (__atomic_load_n(&rc->c0->active, __ATOMIC_ACQUIRE) & 1) != rc->bi)
			continue;
		rc->quiet = 0;
		ret = rd_peek(r, rc);
		rd_publish_lost(r, rc);
		if (ret == 0 && r->follow && rc->raced && rc->raced < RD_RACED_MAX)
			doubt = 1;
		if (ret == 0 && r->follow && !rc->lost && !rc->raced)
			rd_quiet_check(r, rc, seq);
		if (ret == 0 && r->follow && !rc->bad)
			empty[n_empty++] = rc;
		if (ret < 0)
			*err = ret;
		/* the raw stamps: one clock for both buffers, before any conversion */
		else if (ret && (!best || rc->rec.raw_ts < best->rec.raw_ts))
			best = rc;
	}
	/*
	 * A cursor that found nothing because it raced with its writer's switch
	 * may hold an older record than the other's: nothing from this CPU now
	 * (the next look settles it; a head that never checks out stops counting
	 * after RD_RACED_MAX looks).
	 */
	if (doubt)
		return NULL;
	/*
	 * A CPU's records come in the order of their raw stamps, and are given
	 * times no earlier than the last one handed out: each sub-buffer converts
	 * from its own calibration point (clock.c), taken by whichever thread
	 * opened it, and two points' errors (under a microsecond, more where a
	 * stopped virtual CPU spoilt every try) can set the first records of a
	 * sub-buffer before the last of the one before, out of order against the
	 * other CPUs' and the kernel's (fdr show -k)
	 */
	if (best && best->rec.ts < r->cpus[i].ts_floor)
		best->rec.ts = r->cpus[i].ts_floor;
	if (!best || !n_empty)
		return best;
	/* the empty cursors, again: see above */
	moved = 0;
	for (k = 0; k < n_empty; k++) {
		/* acquire: after the picked record's head was read; pairs with the commit */
		if (__atomic_load_n(&empty[k]->c->head, __ATOMIC_ACQUIRE) != empty[k]->seen_head) {
			empty[k]->quiet = 0;
			moved = 1;
		}
	}
	if (!moved)
		return best;
	if (++tries < 4)
		goto again;
	return NULL; /* a writer that keeps moving: the next call looks again */
}

/*
 * Publish what a consuming reader took from cursor @rc: @n records read, @lost
 * found missing before them. Counters: a reader of the live buffers counts into
 * the CPU's buffer-0 entry, whichever buffer the records were in (the CPU's
 * counts since the last clear, which swaps leave alone); its position goes to
 * the buffer's entry only while that buffer is live, and only forward (a swap
 * moved it to the writer; what this cursor reads behind it came from an
 * earlier live period), so that what the snapshot file shows never changes.
 * A consumer of the snapshot (snapshot_raw) moves the snapshot's position only.
 */
static void rd_publish_now(struct fdr_reader *r, struct rd_cpu *rc, uint64_t n, uint64_t lost)
{
	if (!(r->flags & FDR_READ_CONSUME) || (!n && !lost))
		return;
	if (r->follow) {
		if (lost)
			__atomic_fetch_add(&rc->c0->overrun, lost, __ATOMIC_RELAXED);
		__atomic_fetch_add(&rc->c0->read_events, n, __ATOMIC_RELAXED);
		if ((__atomic_load_n(&rc->c0->active, __ATOMIC_ACQUIRE) & 1) != rc->bi ||
		    __atomic_load_n(&rc->c->consumed, __ATOMIC_RELAXED) > rc->pos)
			return;
	}
	__atomic_store_n(&rc->c->consumed_cum, rc->cum, __ATOMIC_RELAXED);
	/* release: pairs with the acquire of consumed in the discard-mode writer */
	__atomic_store_n(&rc->c->consumed, rc->pos, __ATOMIC_RELEASE);
}

/*
 * As rd_publish_now(), or, for a FDR_READ_HOLD reader, kept in the cursor until
 * fdr_reader_commit(), once the caller has what it read safe.
 */
static void rd_publish(struct fdr_reader *r, struct rd_cpu *rc, uint64_t n, uint64_t lost)
{
	if ((r->flags & (FDR_READ_HOLD | FDR_READ_CONSUME)) == (FDR_READ_HOLD | FDR_READ_CONSUME)) {
		rc->held_n += n;
		rc->held_lost += lost;
		return;
	}
	rd_publish_now(r, rc, n, lost);
}

/*
 * Consume the peeked record of @rc locally: the shared reader position and
 * counters are published by the caller (rd_take() at once, a page's once per
 * page: rd_publish()). Its time, no earlier than the CPU's last (rd_pick()),
 * is the CPU's floor from now on.
 */
static void rd_take_local(struct fdr_reader *r, struct rd_cpu *rc)
{
	r->cpus[(uint32_t)(rc - r->cpus) % r->nr].ts_floor = rc->rec.ts;
	rc->have = 0;
	rc->pos = rc->rec_pos_after;
	rc->cum++;
	rc->lost = 0;
	rc->lost_pub = 0;
}

static void rd_take(struct fdr_reader *r, struct rd_cpu *rc)
{
	uint64_t lost = rc->lost - rc->lost_pub; /* the rest was published when found */

	rd_take_local(r, rc);
	rd_publish(r, rc, 1, lost);
}

/*
 * A consuming reader of the live buffers publishes what its cursor @rc found
 * lost as soon as it finds it (overrun), not with the cursor's next record: a
 * buffer that gets none for a long time, or ever (a snapshot freed with records
 * the reader had not read, on a CPU that records no more), would leave the
 * CPU's counts short meanwhile. Once only: rc->lost_pub says how much of
 * rc->lost is published, and the record that reports the loss (lost_before)
 * publishes only the rest.
 */
static void rd_publish_lost(struct fdr_reader *r, struct rd_cpu *rc)
{
	if (!r->follow || !(r->flags & FDR_READ_CONSUME) || rc->lost <= rc->lost_pub)
		return;
	rd_publish(r, rc, 0, rc->lost - rc->lost_pub);
	rc->lost_pub = rc->lost;
}

/* Take back what rd_publish_lost() published of rc->lost (it is to be counted again). */
static void rd_unpublish_lost(struct fdr_reader *r, struct rd_cpu *rc)
{
	uint64_t n = rc->lost_pub;

	rc->lost_pub = 0;
	if (!n)
		return;
	if (r->flags & FDR_READ_HOLD) {
		rc->held_lost -= n < rc->held_lost ? n : rc->held_lost;
		return;
	}
	__atomic_fetch_sub(&rc->c0->overrun, n, __ATOMIC_RELAXED);
}

/**
 * fdr_reader_take_lost - the records found lost on the reader's @i-th CPU that no
 * record has reported yet (lost_before), as a reader that ends reports them
 * (fdr pipe's last "[LOST N EVENTS]" lines)
 * @cpu: the CPU's number
 * @lost: the count; they are counted (overrun) if they were not, and count as
 *        reported from now on: a record peeked but not returned no longer
 *        carries them
 *
 * Returns 0, or -ENOENT when @i is not below the reader's CPUs.
 */
int fdr_reader_take_lost(struct fdr_reader *r, uint32_t i, uint32_t *cpu, uint64_t *lost)
{
	uint32_t b;

	if (i >= r->nr)
		return -ENOENT;
	*cpu = r->cpus[i].cpu;
	*lost = 0;
	for (b = 0; b < (r->follow ? FDR_RING_BUFS : 1u); b++) {
		struct rd_cpu *rc = &r->cpus[b * r->nr + i];

		if (!rc->lost)
			continue;
		rd_publish_lost(r, rc);
		if (!r->follow && (r->flags & FDR_READ_CONSUME))
			rd_publish(r, rc, 0, rc->lost);
		*lost += rc->lost;
		rc->lost = 0;
		rc->lost_pub = 0;
		rc->rec.lost_before = 0;
	}
	return 0;
}

/* Has the ring been resized (new file) since we opened it? Then reopen. */
/* Map an instance's current ring file and validate it. */
static int rd_ring_get(struct fdr_session *s, uint32_t inst, struct rd_ring *ring, uint32_t *gen)
{
	void *base;
	size_t size;
	uint32_t g;
	int ret;

	if (inst >= FDR_MAX_INSTANCES)
		return -ENOENT;
	/*
	 * Read before the file is mapped: if a resize comes between, the reader
	 * finds itself stale at once and reopens (rd_stale()).
	 */
	g = __atomic_load_n(&fdr_session_control(s)->instances[inst].ring_gen, __ATOMIC_ACQUIRE);
	ret = fdr_session_ring(s, inst, &base, &size);
	if (ret)
		return ret;
	if (gen)
		*gen = g;
	return rd_ring_check(base, size, inst, g, ring);
}

static int rd_map(struct fdr_reader *r)
{
	uint32_t i;
	int ret;

	ret = rd_ring_get(r->s, r->inst, &r->ring, &r->gen);
	if (ret)
		return ret;
	if (r->cpus) {
		for (i = 0; i < r->nr_cur; i++)
			free(r->cpus[i].buf);
		free(r->cpus);
		r->cpus = NULL;
	}
	return 0;
}

/*
 * Copy and check the reader's instance slot (fdr_shm_check_instance(), and
 * fdr_shm_check_instance_ext() for its more fields): the
 * reader uses the copy's clock and sub-buffer size. Returns 0, -ENOENT (no such
 * instance), -EUCLEAN.
 */
static int rd_instance(struct fdr_reader *r)
{
	struct fdr_abi_instance in;
	struct fdr_abi_instance_ext x;

	if (r->inst >= FDR_MAX_INSTANCES)
		return -ENOENT;
	memcpy(&in, &fdr_session_control(r->s)->instances[r->inst], sizeof(in));
	memcpy(&x, &fdr_session_control(r->s)->inst_ext[r->inst], sizeof(x));
	if (fdr_shm_check_instance(&in, r->inst) || fdr_shm_check_instance_ext(&x, r->inst)) {
		rd_complain(r, "%s", fdr_shm_error());
		return -EUCLEAN;
	}
	if (in.state != FDR_INST_LIVE)
		return -ENOENT;
	r->clock = in.clock;
	r->subbuf_size = in.subbuf_size;
	return 0;
}

/* The instance's sub-buffer size as the reader checked it at open. */
uint32_t fdr_reader_subbuf_size(const struct fdr_reader *r)
{
	return r->subbuf_size;
}

/* A complaint of another part of libfdr-ctl about what this reader reads. */
void fdr_reader_complain(struct fdr_reader *r, const char *text)
{
	rd_complain(r, "%s", text);
}

/* Does @pid run? A zombie (never reaped, as under some container inits) does not. */
static int rd_pid_alive(pid_t pid)
{
	char path[64], buf[256], *p;
	FILE *f;
	size_t n;

	if (kill(pid, 0) < 0 && errno == ESRCH)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return 1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	p = strrchr(buf, ')');
	return !(p && p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X'));
}

/*
 * Take a CPU's consuming-reader slot (trace_pipe is exclusive per CPU, also
 * within one process). A slot whose holder died is taken over.
 */
static int rd_slot_take(struct fdr_abi_cpu *c)
{
	uint32_t me = (uint32_t)getpid();
	uint32_t holder = __atomic_load_n(&c->reader_pid, __ATOMIC_ACQUIRE);

	if (holder == me)
		return -EBUSY;
	if (holder && rd_pid_alive((pid_t)holder))
		return -EBUSY;
	if (!__atomic_compare_exchange_n(&c->reader_pid, &holder, me, 0, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE))
		return -EBUSY;
	return 0;
}

/*
 * Before reading a snapshot, let the writers that were inside their critical
 * section at the swap finish into it: a swap in progress is waited for (at most
 * 100 ms, then it is considered abandoned), and reading starts at least 2 ms
 * after the last swap. Running critical sections take nanoseconds; a preempted
 * one aborts instead of finishing, so this bound is generous.
 */
static void rd_snapshot_settle(struct fdr_session *s, const struct rd_ring *r, uint32_t first,
			       uint32_t nr)
{
	uint64_t now, last = 0, age;
	uint32_t i;
	int k;

	for (k = 0; k < 100 && (__atomic_load_n(&r->hdr->snap_seq, __ATOMIC_ACQUIRE) & 1); k++) {
		struct timespec d = { 0, 1000 * 1000 };

		nanosleep(&d, NULL);
	}
	for (i = 0; i < nr; i++) {
		uint64_t t = __atomic_load_n(&rd_entry(r, 0, first + i)->swap_ns, __ATOMIC_ACQUIRE);

		if (t > last)
			last = t;
	}
	/* the swap times are on the session's lease clock (see fdr_session_lease_ns()) */
	now = fdr_session_lease_ns(s);
	age = last ? fdr_lease_age(now, last) : UINT64_MAX;
	if (age < 2000000) {
		struct timespec d = { 0, (long)(2000000 - age) };

		nanosleep(&d, NULL);
	}
}

/*
 * The writer's linear position and the number of records written before it,
 * read consistently: head, then the header of its sub-buffer, then head again,
 * unchanged. Returns 0, -EAGAIN (the writer kept moving), -EUCLEAN.
 */
static int rd_writer_end(const struct rd_cpu *rc, uint64_t *pos, uint64_t *cum)
{
	int i;

	for (i = 0; i < 100; i++) {
		/* acquire: pairs with the commit store of head in the writer */
		uint64_t head = __atomic_load_n(&rc->c->head, __ATOMIC_ACQUIRE);
		uint32_t doff = (uint32_t)head;
		uint32_t idx = doff >> rc->shift, off = doff & (rc->ss - 1), hidx;
		const struct fdr_abi_subbuf *h;
		uint64_t p, n;

		if (idx >= rc->n)
			return -EUCLEAN;
		hidx = off ? idx : (idx == 0 ? rc->n - 1 : idx - 1);
		h = (const void *)(rc->data + ((size_t)hidx << rc->shift));
		p = __atomic_load_n(&h->pos, __ATOMIC_ACQUIRE);
		n = __atomic_load_n(&h->cum, __ATOMIC_ACQUIRE);
		/* acquire: the header is read before head is read again */
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&rc->c->head, __ATOMIC_RELAXED) != head)
			continue;
		if (!off)
			p += rc->ss;
		if ((p & (rc->ss - 1)) || ((p >> rc->shift) % rc->n) != idx)
			continue;
		*pos = p + off;
		/* head counts the records of its sub-buffer (between the steps of a
		 * switch, of the finished one, whose header is the one read) */
		*cum = n + ((head >> 32) & 0xffff);
		return 0;
	}
	return -EAGAIN;
}

/*
 * rd_writer_end() for a buffer whose memory may be released (the snapshot
 * buffer, freed): from head and the header mirror next to it only, never the
 * data area (a page fault there allocates a page of the session's file system;
 * on a full one, that is SIGBUS). Returns 0, or -EAGAIN when the mirror does
 * not hold the header of head's sub-buffer.
 */
static int rd_writer_end_nodata(const struct rd_cpu *rc, uint64_t *pos, uint64_t *cum)
{
	const struct fdr_abi_cpu *c = rc->c;
	uint64_t head = __atomic_load_n(&c->head, __ATOMIC_ACQUIRE);
	uint32_t doff = (uint32_t)head, idx = doff >> rc->shift, off = doff & (rc->ss - 1);
	uint32_t hidx = off ? idx : (idx == 0 ? rc->n - 1 : idx - 1);
	/* the head value step 2 stored when it wrote that header (ring.c, the swap) */
	uint64_t tag = (((head >> 48) - (off ? 0 : 1)) & 0xffff) << 48 |
		       (((uint64_t)hidx << rc->shift) + FDR_SUBBUF_HDR);
	uint64_t tb, p, n;

	if (idx >= rc->n)
		return -EUCLEAN;
	/* acquire on each: tag_b before pos and cum, those before tag_a (as written) */
	tb = __atomic_load_n(&c->hdr_tag_b, __ATOMIC_ACQUIRE);
	p = __atomic_load_n(&c->hdr_pos, __ATOMIC_ACQUIRE);
	n = __atomic_load_n(&c->hdr_cum, __ATOMIC_ACQUIRE);
	if (tb != tag || __atomic_load_n(&c->hdr_tag_a, __ATOMIC_ACQUIRE) != tag)
		return -EAGAIN;
	*pos = p + (off ? off : rc->ss);
	*cum = n + ((head >> 32) & 0xffff);
	return 0;
}

/*
 * The writer position and record count of the buffer of @rc, which may be the
 * snapshot buffer: from the mirror only while the snapshot buffers are freed.
 */
static int rd_writer_end_any(const struct rd_ring *ring, const struct rd_cpu *rc, uint64_t *pos,
			     uint64_t *cum)
{
	if (!__atomic_load_n(&ring->hdr->spare_allocated, __ATOMIC_ACQUIRE) &&
	    (__atomic_load_n(&rc->c0->active, __ATOMIC_ACQUIRE) & 1) != rc->bi)
		return rd_writer_end_nodata(rc, pos, cum);
	return rd_writer_end(rc, pos, cum);
}

/*
 * Set up the second cursor of the @i-th CPU of a following reader, on the
 * buffer that is not live (@act is the live one, whose cursor is set up at its
 * reader position): it starts at that buffer's writer, so the snapshot it holds
 * now is not read, and everything written into it from now on is (by writers
 * that were in flight at a swap, and after the next swap). If a swap came in
 * between, that buffer is the live one and the swap put its reader position at
 * its writer: the cursor starts there. Returns 0 or a negative errno.
 */
static int rd_follow_init(struct fdr_reader *r, uint32_t i, uint32_t act)
{
	struct rd_cpu *live = &r->cpus[i], *other = &r->cpus[r->nr + i];
	int ret = rd_cpu_init(r, other, &r->ring, live->cpu, act ^ 1);

	if (ret)
		return ret;
	if (rd_writer_end_any(&r->ring, other, &other->pos, &other->cum) ||
	    (__atomic_load_n(&live->c0->active, __ATOMIC_ACQUIRE) & 1) != act) {
		other->pos = __atomic_load_n(&other->c->consumed, __ATOMIC_ACQUIRE);
		other->cum = __atomic_load_n(&other->c->consumed_cum, __ATOMIC_RELAXED);
	}
	return 0;
}

/**
 * fdr_reader_open - iterate the records of an instance
 * @s: session
 * @inst: instance
 * @cpu: one CPU, or -1 for all, merged by time
 * @flags: FDR_READ_CONSUME to consume (trace_pipe): -EBUSY if another reader
 *         holds the CPU's reader slot; FDR_READ_SNAPSHOT to read the snapshot
 *         (the spare buffers) instead of the live buffers
 * @out: the reader; fdr_reader_close() it
 */
int fdr_reader_open(struct fdr_session *s, uint32_t inst, int cpu, unsigned flags,
		    struct fdr_reader **out)
{
	struct fdr_reader *r = calloc(1, sizeof(*r));
	uint32_t i, first, nr;
	int ret;

	if (!r)
		return -ENOMEM;
	r->s = s;
	r->inst = inst;
	r->flags = flags;
	r->ring_fd = -1;
	ret = rd_instance(r);
	if (ret)
		goto err;
	ret = rd_map(r);
	if (ret)
		goto err;
	if (cpu >= 0 && (uint32_t)cpu >= r->ring.nr_cpus) {
		ret = -ENOENT;
		goto err;
	}
	first = cpu >= 0 ? (uint32_t)cpu : 0;
	nr = cpu >= 0 ? 1 : r->ring.nr_cpus;
	r->follow = (flags & (FDR_READ_CONSUME | FDR_READ_SNAPSHOT)) == FDR_READ_CONSUME;
	r->cpus = calloc((size_t)nr * (r->follow ? FDR_RING_BUFS : 1), sizeof(*r->cpus));
	if (!r->cpus) {
		ret = -ENOMEM;
		goto err;
	}
	r->nr = nr;
	fdr_clock_conv_init(&r->conv, fdr_session_control(s), r->clock);
	if (flags & FDR_READ_SNAPSHOT)
		rd_snapshot_settle(s, &r->ring, first, nr);
	for (i = 0; i < nr; i++) {
		struct rd_cpu *rc = &r->cpus[i];
		uint32_t act = __atomic_load_n(&rd_entry(&r->ring, 0, first + i)->active,
					       __ATOMIC_ACQUIRE) &
			       1;

		ret = rd_cpu_init(r, rc, &r->ring, first + i,
				  (flags & FDR_READ_SNAPSHOT) ? act ^ 1 : act);
		r->nr_cur = i + 1;
		if (ret)
			goto err;
		if (rc->bad) {
			if (r->follow) {
				/* its other buffer's cursor: as bad (one geometry for both) */
				struct rd_cpu *o = &r->cpus[nr + i];

				o->cpu = rc->cpu;
				o->bi = rc->bi ^ 1;
				o->c0 = rc->c0;
				o->c = rd_entry(&r->ring, o->bi, o->cpu);
				o->buf_pos = UINT64_MAX;
				o->spool_fd = o->spool_dfd = -1;
				o->bad = 1;
			}
			continue; /* skipped, and never consumed: r->error says why */
		}
		rc->pos = __atomic_load_n(&rc->c->consumed, __ATOMIC_ACQUIRE);
		rc->cum = __atomic_load_n(&rc->c->consumed_cum, __ATOMIC_RELAXED);
		rc->complete_only = !!(flags & FDR_READ_COMPLETE);
		if (r->follow) {
			ret = rd_follow_init(r, i, act);
			if (ret)
				goto err;
			rc->cum_mono = 1;
			r->cpus[nr + i].cum_mono = 1;
			r->cpus[nr + i].complete_only = rc->complete_only;
		}
		if ((flags & FDR_READ_SNAPSHOT) &&
		    rd_writer_retry(rc, &rc->end_sub, &rc->end_off) == 0)
			rc->bounded = 1;
		if (flags & FDR_READ_CONSUME) {
			/* one consuming reader per CPU: the live one and the snapshot's */
			ret = rd_slot_take(
				rd_entry(&r->ring, (flags & FDR_READ_SNAPSHOT) ? 1 : 0, first + i));
			if (ret)
				goto err;
			rc->slot =
				rd_entry(&r->ring, (flags & FDR_READ_SNAPSHOT) ? 1 : 0, first + i);
		}
		if (r->follow && r->cpus[i].bi != 0) {
			/* cursor b * nr + i reads buffer b (rd_pick(), the takes) */
			struct rd_cpu t = r->cpus[i];

			r->cpus[i] = r->cpus[nr + i];
			r->cpus[nr + i] = t;
		}
	}
	if (r->follow)
		r->nr_cur = FDR_RING_BUFS * nr;
	*out = r;
	return 0;
err:
	if (r->follow && r->cpus)
		r->nr_cur = FDR_RING_BUFS * r->nr; /* the second cursors set up so far too */
	fdr_reader_close(r);
	return ret;
}

/** fdr_reader_close - release a reader (and its CPUs' reader slots); NULL is a no-op */
void fdr_reader_close(struct fdr_reader *r)
{
	uint32_t i;

	if (!r)
		return;
	for (i = 0; i < r->nr_cur; i++) {
		struct rd_cpu *rc = &r->cpus[i];

		if (rc->slot) {
			uint32_t me = (uint32_t)getpid();

			__atomic_compare_exchange_n(&rc->slot->reader_pid, &me, 0, 0,
						    __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
		}
		free(rc->buf);
		free(rc->spool_batch);
		if (r->spool && rc->spool_dfd >= 0)
			close(rc->spool_dfd);
	}
	if (r->ring_fd >= 0)
		close(r->ring_fd);
	free(r->cpus);
	free(r);
}

/* Have the instance's buffers been replaced (resized) since the reader opened? */
static int rd_stale(struct fdr_reader *r)
{
	return !r->spool && fdr_session_control(r->s)->instances[r->inst].ring_gen != r->gen;
}

/**
 * fdr_reader_next - the next record in time order
 * Returns 1 (@rec filled; valid until the next call), 0 (nothing available now),
 * -ESTALE (the instance's buffers were replaced: reopen), or another negative errno.
 */
int fdr_reader_next(struct fdr_reader *r, struct fdr_record *rec)
{
	struct rd_cpu *best = NULL;
	uint32_t i;

	if (rd_stale(r))
		return -ESTALE;
	if (r->stay_left) {
		/* unordered: the same CPU while it has records (its own order kept) */
		int err;
		struct rd_cpu *rc = rd_pick(r, r->stay_i, &err);

		r->stay_left--;
		if (rc) {
			*rec = rc->rec;
			rd_take(r, rc);
			return 1;
		}
		r->stay_left = 0;
	}
	for (i = 0; i < r->nr; i++) {
		int err;
		struct rd_cpu *rc = rd_pick(r, i, &err);

		/* a corrupted CPU ring (err) does not stop the others */
		if (rc && (!best || rc->rec.ts < best->rec.ts))
			best = rc;
	}
	if (!best)
		return 0;
	if (r->flags & FDR_READ_UNORDERED) {
		/* the index of best's CPU: cursors cpus[b * nr + i] */
		r->stay_i = (uint32_t)(best - r->cpus) % r->nr;
		r->stay_left = RD_STAY_MAX - 1;
	}
	*rec = best->rec;
	rd_take(r, best); /* the payload stays in best->buf until its next peek */
	return 1;
}

/**
 * fdr_reader_wait - wait until a CPU of the reader has unread records
 * @timeout_ms: -1 forever
 * Returns 1 (data), 0 (timeout), -EINTR (a signal arrived).
 */
int fdr_reader_wait(struct fdr_reader *r, int timeout_ms)
{
	struct timespec d = { 0, 2 * 1000 * 1000 };
	int waited = 0;

	for (;;) {
		uint32_t i;

		for (i = 0; i < r->nr_cur; i++) {
			struct rd_cpu *rc = &r->cpus[i];

			if (rc->have || rd_peek(r, rc) > 0)
				return 1;
		}
		if (timeout_ms >= 0 && waited >= timeout_ms)
			return 0;
		if (nanosleep(&d, NULL) < 0 && errno == EINTR)
			return -EINTR; /* a signal: let the caller decide */
		waited += 2;
		if (waited > 50)
			d.tv_nsec = 10 * 1000 * 1000;
		if (d.tv_nsec == 10 * 1000 * 1000)
			waited += 8;
	}
}

/** fdr_reader_clock - the reader's timestamp converter; borrowed */
const struct fdr_clock_conv *fdr_reader_clock(struct fdr_reader *r)
{
	return &r->conv;
}

/* ---- kernel ring-buffer page format ------------------------------------------------- */

/*
 * Fill one page in the kernel's ring-buffer page format from cursor @rc.
 * A page holds records without a gap between them: records lost before one
 * (overwritten) start a new page whose header flags them (missed events, and
 * the count stored after the data, as the kernel does when it fits: room is kept
 * for it, so the count is always there). A timestamp
 * going backwards also starts a new page, so every delta stays exact.
 * Returns the records put (0: none available) or a negative errno; *@lost gets
 * the records flagged as lost in this page.
 */
static int rd_fill_page(struct fdr_reader *r, uint32_t cpu_i, unsigned char *page, size_t page_size,
			uint64_t *lost)
{
	size_t off = 16, cap = page_size;
	uint64_t base_ts = 0, prev = 0, commit, missed = 0, missed_pub = 0;
	/* records taken from each of the CPU's cursors, published once per page */
	uint64_t taken[FDR_RING_BUFS] = { 0 };
	struct rd_cpu *first = NULL;
	int n = 0, ret = 0;
	uint32_t b;

	*lost = 0;
	for (;;) {
		const struct fdr_record *rec;
		struct rd_cpu *rc = rd_pick(r, cpu_i, &ret);
		size_t need, len4;
		uint64_t delta;

		if (!rc)
			break;
		ret = 0;
		rec = &rc->rec;
		len4 = ((size_t)rec->len + 3) & ~(size_t)3;
		if (n == 0) {
			base_ts = rec->ts;
			prev = rec->ts;
			missed = rec->lost_before;
			missed_pub = rc->lost_pub; /* published when found (rd_publish_lost()) */
			first = rc;
			/*
			 * Room for the count of the records lost before it, so that it is
			 * exact; a spool's pages, and a holding reader's (fdr record's),
			 * keep it in every page, for the refused counts fdr record adds
			 * (fdr_raw_page_add_missed()).
			 */
			if (missed || r->spool || (r->flags & FDR_READ_HOLD))
				cap = page_size - 8;
		} else if (rec->lost_before || rec->ts < prev) {
			break; /* a gap or a step back starts a new page */
		}
		delta = rec->ts - prev;
		need = (delta >= (1u << 27) ? 8 : 0) + (len4 <= 112 ? 4 : 8) + len4;
		if (off + need > cap) {
			if (n == 0) {
				/* cannot fit in any page: skip it, counted as lost */
				rd_take_local(r, rc);
				rc->lost = missed + 1;
				rc->lost_pub = missed_pub;
				missed = 0;
				missed_pub = 0;
				first = NULL;
				continue;
			}
			break;
		}
		if (delta >= (1u << 27)) {
			/* time extend: type 30, low 27 bits in time_delta, the rest in array[0] */
			uint32_t w[2] = { 30u | (uint32_t)(delta & ((1u << 27) - 1)) << 5,
					  (uint32_t)(delta >> 27) };

			memcpy(page + off, w, 8);
			off += 8;
			delta = 0;
		}
		if (len4 <= 112) {
			uint32_t w = (uint32_t)(len4 / 4) | (uint32_t)delta << 5;

			memcpy(page + off, &w, 4);
			off += 4;
		} else {
			uint32_t w[2] = { (uint32_t)delta << 5, (uint32_t)len4 + 4 };

			memcpy(page + off, w, 8);
			off += 8;
		}
		memcpy(page + off, rec->payload, rec->len);
		if (len4 > rec->len)
			memset(page + off + rec->len, 0, len4 - rec->len);
		off += len4;
		prev = rec->ts;
		n++;
		taken[rc->bi]++;
		rd_take_local(r, rc);
	}
	if (n == 0)
		return ret < 0 ? ret : 0;
	for (b = 0; b < (r->follow ? FDR_RING_BUFS : 1u); b++) {
		struct rd_cpu *rc = &r->cpus[b * r->nr + cpu_i];
		uint64_t k = r->follow ? taken[rc->bi] : (uint64_t)n;

		rd_publish(r, rc, k, rc == first ? missed - missed_pub : 0);
	}
	commit = off - 16;
	if (missed) {
		commit |= 1ull << 31;
		if (off + 8 <= cap) {
			memcpy(page + off, &missed, 8);
			commit |= 1ull << 30;
			off += 8;
		}
	}
	memcpy(page, &base_ts, 8);
	memcpy(page + 8, &commit, 8);
	memset(page + off, 0, cap - off);
	*lost = missed;
	return n;
}

/**
 * fdr_reader_raw_page - fill one page in the kernel's ring-buffer page format
 * (what trace_pipe_raw returns) with the next records of a one-CPU reader
 * @page: page_size bytes (header: u64 timestamp, u64 commit; then data)
 *
 * Consumes them if the reader consumes. Timestamps are the reader's: ns in the
 * instance's trace clock (raw counts for counter clocks).
 * Returns the number of records put (0 = none available), -EINVAL (not a
 * one-CPU reader, or a page smaller than 64 bytes), -ESTALE (the buffers were
 * replaced: reopen), or a negative errno.
 */
int fdr_reader_raw_page(struct fdr_reader *r, void *page, size_t page_size)
{
	uint64_t lost;

	if (page_size < 64 || r->nr != 1)
		return -EINVAL;
	if (rd_stale(r))
		return -ESTALE;
	return rd_fill_page(r, 0, page, page_size, &lost);
}

/**
 * fdr_reader_raw_pages - fill up to @nr_pages consecutive pages, as
 * fdr_reader_raw_page() fills one, in one call
 * @buf: nr_pages * page_size bytes
 * @st: if not NULL, the records put and the records flagged lost are added to it
 *
 * The reader position is published once per page, not per record, so a
 * consuming reader costs the writers little.
 * Returns the number of pages filled (0 = no record available), -EINVAL, or a
 * negative errno (only if no page was filled).
 */
int fdr_reader_raw_pages(struct fdr_reader *r, void *buf, size_t page_size, size_t nr_pages,
			 struct fdr_raw_stats *st)
{
	unsigned char *p = buf;
	size_t i;

	if (page_size < 64 || r->nr != 1)
		return -EINVAL;
	if (rd_stale(r))
		return -ESTALE;
	for (i = 0; i < nr_pages; i++) {
		uint64_t lost;
		int n = rd_fill_page(r, 0, p + i * page_size, page_size, &lost);

		if (n <= 0) {
			if (n < 0 && i == 0)
				return n;
			break;
		}
		if (st) {
			st->records += (uint64_t)n;
			st->lost += lost;
		}
	}
	return (int)i;
}

/**
 * fdr_raw_page_add_missed - flag @missed more records as lost before the first
 * record of a page filled by fdr_reader_raw_page() (as the kernel flags
 * overwritten records): the commit word's missed-events bit, and the count after
 * the data when it fits
 */
void fdr_raw_page_add_missed(void *page_v, size_t page_size, uint64_t missed)
{
	unsigned char *page = page_v;
	uint64_t commit, len, old = 0;

	if (!missed || page_size < 64)
		return;
	memcpy(&commit, page + 8, 8);
	len = commit & ((1ull << 30) - 1);
	if (len > page_size - 16)
		return;
	if (commit & (1ull << 30))
		memcpy(&old, page + 16 + len, 8);
	else if (commit & (1ull << 31))
		return; /* flagged without a count: stays "some were lost" */
	commit = len | 1ull << 31;
	if (16 + len + 8 <= page_size) {
		old += missed;
		memcpy(page + 16 + len, &old, 8);
		commit |= 1ull << 30;
	}
	memcpy(page + 8, &commit, 8);
}

/**
 * fdr_reader_commit - publish what a FDR_READ_HOLD reader read since the last
 * commit as consumed: the reader position (so a discard-mode writer gets the
 * room back), read_events and the overrun counted on the way
 *
 * Until then those records are unread in the ring: a reader killed before its
 * commit leaves them to the next reader, or to the overrun count if the writers
 * overwrite them. No-op for other readers.
 */
void fdr_reader_commit(struct fdr_reader *r)
{
	uint32_t i;

	if ((r->flags & (FDR_READ_HOLD | FDR_READ_CONSUME)) != (FDR_READ_HOLD | FDR_READ_CONSUME))
		return;
	/* every cursor: a following reader has two per CPU (cpus[b * nr + i]) */
	for (i = 0; i < r->nr_cur; i++) {
		struct rd_cpu *rc = &r->cpus[i];

		if (!rc->held_n && !rc->held_lost)
			continue;
		rd_publish_now(r, rc, rc->held_n, rc->held_lost);
		rc->held_n = rc->held_lost = 0;
	}
}

/**
 * fdr_reader_set_complete - turn FDR_READ_COMPLETE on or off in an open reader:
 * with @on 0, the writers' current sub-buffers are read too from now on (fdr
 * record's stop)
 *
 * Every cursor stays where it is. Reopening the reader instead would not do: a
 * following reader's second cursor starts at the snapshot buffer's writer, and
 * the live one at the reader position a swap moved to the writer, so whatever a
 * swap took out of the live buffer since the last read would be skipped without
 * being counted lost (fdr record on a loaded machine, a snapshot trigger firing:
 * 89 of 1980 events recorded, "0 lost"; docs/design/record.md, "The stop").
 */
void fdr_reader_set_complete(struct fdr_reader *r, int on)
{
	uint32_t i;

	if (!r)
		return;
	if (on)
		r->flags |= FDR_READ_COMPLETE;
	else
		r->flags &= ~FDR_READ_COMPLETE;
	for (i = 0; i < r->nr_cur; i++) {
		r->cpus[i].complete_only = !!on;
		r->cpus[i].idle_left = 0; /* look again, with the new rule */
	}
}

/**
 * fdr_reader_refused - records the writers refused on the reader's CPUs so far
 * (buffer full in discard mode, too big, nested too deep), read without a scan:
 * cheap enough to call between batches
 */
uint64_t fdr_reader_refused(struct fdr_reader *r)
{
	uint64_t n = 0;
	uint32_t i, b;

	/* both buffers of each CPU: the counters are the CPU's, whichever was live */
	for (i = 0; i < r->nr && !r->spool; i++) {
		for (b = 0; b < FDR_RING_BUFS; b++) {
			const struct fdr_abi_cpu *c = rd_entry(&r->ring, b, r->cpus[i].cpu);

			n += __atomic_load_n(&c->dropped, __ATOMIC_RELAXED) +
			     __atomic_load_n(&c->too_big, __ATOMIC_RELAXED) +
			     __atomic_load_n(&c->nested, __ATOMIC_RELAXED);
		}
	}
	return n;
}

/**
 * fdr_reader_error - what the reader skipped as corrupt, and where: the first
 * CPU whose buffers did not check out ("ring.0.0: cpu 1 buffer 0: subbuf_size
 * 2147483649 is not a power of two in 4096..1048576"), or "" if none. The other
 * CPUs are read as usual. Borrowed; valid until fdr_reader_close().
 */
const char *fdr_reader_error(const struct fdr_reader *r)
{
	return r->error;
}

#define RD_SPOOL_BATCH (64u << 10) /* bytes a spool reader reads per pread() */
#define RD_SPOOL_DIRECT_BATCH (1u << 20) /* the same with direct I/O (no cache to stay in) */

/* ---- whole sub-buffers into a file: fdr record ------------------------------------------ */

/*
 * The ring file of the reader, opened read-only for the kernel to copy from, and
 * checked to be the file the reader has mapped (same header, same size). Returns
 * 0, or a negative errno: takes then copy from the mapping with write().
 */
static int rd_ring_fd(struct fdr_reader *r)
{
	struct fdr_abi_ring h;
	char path[4096];
	int fd;

	if (r->ring_fd >= 0)
		return 0;
	snprintf(path, sizeof(path), "%s/ring.%u.%u", fdr_session_path(r->s), r->inst, r->gen);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (pread(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h) ||
	    memcmp(&h, &r->ring.h, offsetof(struct fdr_abi_ring, cpu_off)) ||
	    h.file_size != r->ring.size) {
		close(fd);
		return -ESTALE;
	}
	r->ring_fd = fd;
	return 0;
}

/*
 * Copy @len bytes of the ring at @src (file offset @off) to @fd at @out_off:
 * copy_file_range(2) (within a filesystem), else sendfile(2) (from tmpfs to
 * another filesystem: copy_file_range gives EXDEV there), else write(2) from the
 * mapping. The kernel copies in every case; the first two never map the data in
 * user space. The mode that works is kept for the reader's next takes.
 */
static int rd_copy_out(struct fdr_reader *r, const unsigned char *src, uint64_t off, int fd,
		       uint64_t out_off, size_t len)
{
	int seeked = 0;

	if (r->copy_mode < 2 && rd_ring_fd(r) < 0)
		r->copy_mode = 2;
	while (len) {
		ssize_t n;

		if (r->copy_mode == 0) {
			loff_t in = (loff_t)off, out = (loff_t)out_off;

			n = copy_file_range(r->ring_fd, &in, fd, &out, len, 0);
			if (n < 0 && (errno == EXDEV || errno == EINVAL || errno == ENOSYS ||
				      errno == EOPNOTSUPP || errno == EBADF)) {
				r->copy_mode = 1;
				continue;
			}
		} else if (r->copy_mode == 1) {
			off_t in = (off_t)off;

			if (!seeked && lseek(fd, (off_t)out_off, SEEK_SET) < 0)
				return -errno;
			seeked = 1;
			n = sendfile(fd, r->ring_fd, &in, len);
			if (n < 0 && (errno == EINVAL || errno == ENOSYS)) {
				r->copy_mode = 2;
				continue;
			}
		} else {
			n = pwrite(fd, src, len, (off_t)out_off);
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EIO;
		src += n;
		off += (uint64_t)n;
		out_off += (uint64_t)n;
		len -= (size_t)n;
	}
	return 0;
}

/* A copied sub-buffer the writer may have overwritten: its position can match nothing. */
static int rd_spool_cut(int fd, uint64_t at)
{
	static const uint64_t bad = UINT64_MAX; /* not a sub-buffer start */

	return pwrite(fd, &bad, sizeof(bad), (off_t)at) == (ssize_t)sizeof(bad) ? 0 : -EIO;
}

/**
 * fdr_reader_take_subbufs - move the completed sub-buffers of a one-CPU consuming
 * reader into a file, as they are in the ring
 * @r: a reader opened with FDR_READ_CONSUME (not FDR_READ_SNAPSHOT) on one CPU
 * @fd: the spool: a file written at offset @sp->bytes (not its file position)
 * @max_bytes: take at most this much (at least one sub-buffer's size)
 * @sp: the spool's description, zeroed before the first take: updated
 *
 * Takes the sub-buffers from the reader position up to the one the writer is in
 * (that one stays: it is not complete) and copies them in the kernel, one call
 * per contiguous run of the ring (copy_file_range, sendfile or write, see
 * rd_copy_out()), with no per-record work. Then it re-reads the writer position:
 * sub-buffers the writer entered again during the copy (overwrite mode, a reader
 * more than a lap behind) are cut, never kept half-overwritten: their position in
 * the spool is spoiled, and what they held counts as lost. Finally it publishes
 * the reader position as consuming reads do, so that discard-mode writers get the
 * room back.
 *
 * The spool is not trusted more than the ring: fdr_reader_open_spool() checks
 * every header and record again. @sp->records and @sp->lost are what the
 * sub-buffers' record counts say (for progress figures); the first take into an
 * empty spool sets @sp->start_pos, @sp->start_cum, @sp->subbuf_size and @sp->cpu.
 * A reader may be mid sub-buffer (after fdr_ring_clear() or records read one by
 * one): that sub-buffer is copied whole, and the spool reader starts at
 * @sp->start_pos in it. The writer's current sub-buffer is left to the record
 * path (fdr_reader_raw_pages()) at the end.
 *
 * Returns the number of sub-buffers kept (0: none complete now), -EINVAL (not a
 * one-CPU consuming reader, @max_bytes below the sub-buffer size, or a spool of

 * another sub-buffer size), -ESTALE (the buffers were resized: convert the
 * spool, then reopen), -EUCLEAN (a corrupt ring), or the negative errno of a
 * failed copy (the spool is then cut back to @sp->bytes).
 *
 * A snapshot swap does not stop it: the reader follows both buffers of the CPU
 * (see rd_pick()). What a swap took into the snapshot before it was taken is
 * taken from there first, up to the snapshot's writer (its last, incomplete
 * sub-buffer too, once the writers that were in flight at the swap are done,
 * see rd_take_partial()), then the live buffer's. The two buffers count
 * positions and records each on their own; the sub-buffers go into the spool
 * in one sequence, their headers rewritten (see rd_take_from()).
 */

/* Write @len bytes at @at of a take's output: memory @mem, or the spool @fd. */
static int rd_out_write(int fd, unsigned char *mem, uint64_t at, const void *p, size_t len)
{
	if (mem) {
		memcpy(mem + at, p, len);
		return 0;
	}
	return pwrite(fd, p, len, (off_t)at) == (ssize_t)len ? 0 : -EIO;
}

/* Read @len bytes at @at of a take's output back. */
static int rd_out_read(int fd, const unsigned char *mem, uint64_t at, void *p, size_t len)
{
	if (mem) {
		memcpy(p, mem + at, len);
		return 0;
	}
	return pread(fd, p, len, (off_t)at) == (ssize_t)len ? 0 : -EIO;
}

/*
 * Give the sub-buffers [@from, @nr) just taken from @rc (at output offset @out0,
 * the first one at position @S0) their place in the spool's one sequence: a
 * position @dpos further and @dcum more records before them. When @compact, the
 * cursor was inside the first one (records before it were read already, or
 * belong to an earlier spool): its records from the cursor on are moved to the
 * sub-buffer's start, and the header counts the records before the cursor.
 * Returns 0 or a negative errno.
 */
static int rd_take_rebase(struct rd_cpu *rc, int fd, unsigned char *mem, uint64_t out0, uint64_t S0,
			  uint64_t from, uint64_t nr, uint64_t dpos, uint64_t dcum, int compact)
{
	uint64_t k;
	int ret;

	for (k = from; k < nr; k++) {
		uint64_t at = out0 + (k << rc->shift), hp[2];

		if (k == 0 && compact) {
			uint32_t o = (uint32_t)(rc->pos & (rc->ss - 1));
			struct fdr_abi_subbuf *h = (void *)rc->buf;

			ret = rd_out_read(fd, mem, at, rc->buf, rc->ss);
			if (ret)
				return ret;
			if (h->pos != S0)
				continue;
			memmove(rc->buf + FDR_SUBBUF_HDR, rc->buf + o, rc->ss - o);
			h->pos = S0 + dpos;
			h->cum = rc->cum + dcum;
			ret = rd_out_write(fd, mem, at, rc->buf, rc->ss);
			if (ret)
				return ret;
			continue;
		}
		ret = rd_out_read(fd, mem, at, hp, sizeof(hp));
		if (ret)
			return ret;
		if (hp[0] != S0 + (k << rc->shift))
			continue; /* cut, or not a header: the spool reader skips it */
		hp[0] += dpos;
		hp[1] += dcum;
		ret = rd_out_write(fd, mem, at, hp, sizeof(hp));
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * Take the completed sub-buffers of cursor @rc (the take itself: into the spool
 * file @fd at @sp->bytes, or into memory at @mem when @fd < 0). Returns the
 * sub-buffers kept, 0, or a negative errno.
 */
static int rd_take_from(struct fdr_reader *r, struct rd_cpu *rc, int fd, unsigned char *mem,
			uint64_t max_bytes, struct fdr_spool *sp)
{
	struct fdr_abi_subbuf h_end, h_first;
	uint64_t mask, S0, E, w_sub, w2_sub, oldest, nr, i, cut, off0, lost = 0, records = 0;
	uint64_t dpos, dcum, cum0;
	uint32_t w_off, w2_off;
	int ret, compact;

	mask = rc->ss - 1;
	ret = rd_writer_retry(rc, &w_sub, &w_off);
	if (ret == -EUCLEAN) {
		rd_cpu_corrupt(r, rc, "head");
		return 0; /* skipped from now on, like a CPU that did not check out */
	}
	if (ret)
		return ret == -EAGAIN ? 0 : ret;
	oldest = w_sub >= (uint64_t)(rc->n - 1) * rc->ss ? w_sub - (uint64_t)(rc->n - 1) * rc->ss :
							   0;
	S0 = rc->pos & ~mask;
	if (S0 < oldest)
		rc->pos = S0 = oldest; /* overwritten meanwhile: lost, counted below */
	if (S0 > w_sub)
		rc->pos = S0 = w_sub;
	/* E: the end, a sub-buffer whose header is written (its count is the position's) */
	if (w_off >= FDR_SUBBUF_HDR)
		E = w_sub;
	else if (w_sub >= rc->ss)
		E = w_sub - rc->ss;
	else
		return 0;
	if (E <= S0)
		return 0;
	nr = (E - S0) >> rc->shift;
	if (nr > max_bytes >> rc->shift)
		nr = max_bytes >> rc->shift;
	E = S0 + (nr << rc->shift);
	memcpy(&h_end, rc->data + (((E >> rc->shift) % rc->n) << rc->shift), sizeof(h_end));
	/*
	 * The first sub-buffer's header, before the copy: if the copy is not cut,
	 * nothing entered that sub-buffer again until after it (see cut below), so
	 * this is what the spool got, and it need not be read back.
	 */
	memcpy(&h_first, rc->data + (((S0 >> rc->shift) % rc->n) << rc->shift), sizeof(h_first));

	rc->have = 0; /* a peeked record is in the copy */
	rc->buf_pos = UINT64_MAX;
	off0 = sp->bytes;
	if (!off0) {
		sp->start_pos = rc->pos;
		sp->start_cum = rc->cum;
		sp->subbuf_size = rc->ss;
		sp->cpu = rc->cpu;
		r->v_next = S0;
		r->v_cum = rc->cum;
	}
	/*
	 * Where these go in the spool's sequence: right after what was taken last
	 * (from this buffer, that is where they are, and nothing changes; from
	 * the other buffer, after its last sub-buffer), with the records counted
	 * since. A cursor inside S0 in a spool that has something already: S0
	 * was taken before up to where its writer was, or read record by record.
	 */
	dpos = r->v_next - S0;
	dcum = r->v_cum - rc->cum;
	cum0 = rc->cum;
	compact = off0 && (rc->pos & mask) > FDR_SUBBUF_HDR;
	for (i = 0; i < nr;) {
		uint64_t slot = ((S0 >> rc->shift) + i) % rc->n, run = rc->n - slot;
		const unsigned char *src = rc->data + (slot << rc->shift);

		if (run > nr - i)
			run = nr - i;
		if (mem) {
			memcpy(mem + (i << rc->shift), src, (size_t)(run << rc->shift));
			i += run;
			continue;
		}
		ret = rd_copy_out(r, src, (uint64_t)(src - r->ring.base), fd,
				  off0 + (i << rc->shift), (size_t)(run << rc->shift));
		if (ret) {
			if (ftruncate(fd, (off_t)off0) < 0)
				ret = -errno;
			return ret;
		}
		i += run;
	}
	/* acquire: the copies (and h_end) are done before head is read again */
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	ret = rd_writer_retry(rc, &w2_sub, &w2_off);
	if (ret) {
		/* cannot tell whether the copy is whole: drop it, the next take copies again */
		if (!mem && ftruncate(fd, (off_t)off0) < 0)
			return -errno;
		return ret == -EAGAIN ? 0 : ret;
	}
	/* S was entered one lap later (maybe during its copy) iff w2_sub >= S + n * ss */
	cut = 0;
	if (w2_sub >= S0 + (uint64_t)rc->n * rc->ss) {
		cut = ((w2_sub - S0 - (uint64_t)rc->n * rc->ss) >> rc->shift) + 1;
		if (cut > nr)
			cut = nr;
	}
	sp->cut += cut;
	if (cut == nr) {
		/* all overwritten: nothing kept; the next take starts at the oldest */
		if (!mem && ftruncate(fd, (off_t)off0) < 0)
			return -errno;
		if (w2_sub >= (uint64_t)(rc->n - 1) * rc->ss &&
		    w2_sub - (uint64_t)(rc->n - 1) * rc->ss > rc->pos)
			rc->pos = w2_sub - (uint64_t)(rc->n - 1) * rc->ss;
		return 0;
	}
	for (i = 0; i < cut; i++) {
		static const uint64_t bad = UINT64_MAX; /* not a sub-buffer start */

		if (mem) {
			memcpy(mem + (i << rc->shift), &bad, sizeof(bad));
			continue;
		}
		ret = rd_spool_cut(fd, off0 + (i << rc->shift));
		if (ret)
			return ret;
	}
	if (mem && cut)
		memcpy(&h_first, mem + (cut << rc->shift), sizeof(h_first));
	/* the records lost before the first kept sub-buffer, from its checked copy */
	if ((!cut || mem ||
	     pread(fd, &h_first, sizeof(h_first), (off_t)(off0 + (cut << rc->shift))) ==
		     (ssize_t)sizeof(h_first)) &&
	    h_first.pos == S0 + (cut << rc->shift) && h_first.cum > rc->cum)
		lost = h_first.cum - rc->cum;
	if (dpos || dcum || compact) {
		ret = rd_take_rebase(rc, fd, mem, mem ? 0 : off0, S0, cut, nr, dpos, dcum,
				     compact && !cut);
		if (ret) {
			if (!mem && ftruncate(fd, (off_t)off0) < 0)
				ret = -errno;
			return ret;
		}
	}
	if (h_end.pos == E) {
		if (h_end.cum >= rc->cum + lost)
			records = h_end.cum - rc->cum - lost;
		rc->cum = h_end.cum;
	} /* else a corrupt header: the spool reader counts what the sub-buffers hold */
	rc->pos = E;
	sp->bytes = off0 + (nr << rc->shift);
	sp->records += records;
	sp->lost += lost;
	r->v_next = E + dpos;
	r->v_cum = (h_end.pos == E ? rc->cum : cum0 + lost + records) + dcum;
	rd_publish(r, rc, records, lost);
	return (int)(nr - cut);
}

/*
 * The last sub-buffer of a buffer that is the snapshot now, which its writer
 * will not complete before the buffer is live again: the records in it that
 * @rc has not taken, copied to the start of a sub-buffer of the output, with a
 * padding record after them and a header in the spool's sequence. Returns 1
 * (taken), 0 (nothing to take), or a negative errno.
 */
static int rd_take_partial(struct fdr_reader *r, struct rd_cpu *rc, int fd, unsigned char *mem,
			   struct fdr_spool *sp)
{
	const uint64_t mask = rc->ss - 1;
	struct fdr_abi_subbuf *h = (void *)rc->buf;
	struct fdr_abi_rec pad = { 0 };
	uint64_t W, wcum, S, o, lost = 0, before, records, dcum;
	uint32_t woff, end;
	int ret, whole;

	if (rd_writer_end(rc, &W, &wcum))
		return 0;
	woff = (uint32_t)(W & mask);
	/*
	 * At offset 0 the swap came between the two steps of a switch: the last
	 * sub-buffer is complete (padded), but the next header, whose count the
	 * take of complete sub-buffers needs, was never written: take it here.
	 */
	whole = woff == 0 && W >= rc->ss;
	S = whole ? W - rc->ss : W & ~mask;
	if (W <= rc->pos || (!whole && woff <= FDR_SUBBUF_HDR) || (rc->pos & ~mask) != S)
		return 0;
	rc->have = 0; /* a peeked record is in the copy */
	if (rd_copy(rc, S, whole ? W : S, whole ? 0 : woff) < 0) {
		rc->buf_pos = UINT64_MAX;
		return 0;
	}
	rc->buf_pos = UINT64_MAX;
	if (!sp->bytes) {
		sp->start_pos = S;
		sp->start_cum = rc->cum;
		sp->subbuf_size = rc->ss;
		sp->cpu = rc->cpu;
		r->v_next = S;
		r->v_cum = rc->cum;
	}
	dcum = r->v_cum - rc->cum;
	/*
	 * Not the header it should be (shared memory), or head not where a writer
	 * leaves it (records are 8-aligned, 8 bytes stay free): what it held is lost.
	 */
	if (h->pos != S || h->cum > wcum || (!whole && (woff & 7 || woff > rc->ss - 8))) {
		lost = wcum > rc->cum ? wcum - rc->cum : 0;
		rc->pos = W;
		rc->cum = wcum;
		sp->lost += lost;
		r->v_cum += lost;
		rd_publish(r, rc, 0, lost);
		return 0;
	}
	o = rc->pos - S;
	if (o < FDR_SUBBUF_HDR) {
		/* entering it: records before it that the cursor did not see are lost */
		if (h->cum > rc->cum)
			lost = h->cum - rc->cum;
		before = h->cum;
		o = FDR_SUBBUF_HDR;
	} else {
		before = rc->cum;
	}
	if (whole) {
		/* its padding record comes along and still ends it */
		memmove(rc->buf + FDR_SUBBUF_HDR, rc->buf + o, rc->ss - o);
	} else {
		memmove(rc->buf + FDR_SUBBUF_HDR, rc->buf + o, woff - o);
		end = FDR_SUBBUF_HDR + (uint32_t)(woff - o);
		/* at least 8 bytes follow the last record (RB_LIMIT): room for a padding record */
		pad.len_type = (rc->ss - end) | FDR_REC_PAD << FDR_REC_TYPE_SHIFT;
		memcpy(rc->buf + end, &pad, 8);
	}
	h->pos = r->v_next;
	h->cum = before + dcum;
	ret = rd_out_write(fd, mem, mem ? 0 : sp->bytes, rc->buf, rc->ss);
	if (ret)
		return ret;
	records = wcum - before;
	rc->pos = W;
	rc->cum = wcum;
	sp->bytes += rc->ss;
	sp->records += records;
	sp->lost += lost;
	r->v_next += rc->ss;
	r->v_cum = wcum + dcum;
	rd_publish(r, rc, records, lost);
	return 1;
}

static int rd_take_subbufs(struct fdr_reader *r, int fd, unsigned char *mem, uint64_t max_bytes,
			   struct fdr_spool *sp)
{
	struct rd_cpu *live, *old;
	uint64_t mask, W, wcum;
	uint32_t act, b;
	int ret;

	/* a holding reader publishes what it read at its commits: not with takes */
	if (r->spool || r->nr != 1 || (fd < 0 && !mem) || !r->follow || (r->flags & FDR_READ_HOLD))
		return -EINVAL;
	if (r->cpus[0].bad || r->cpus[1].bad)
		return 0; /* skipped: nothing can be taken from it (r->error says why) */
	mask = r->cpus[0].ss - 1;
	if (max_bytes < r->cpus[0].ss || (sp->bytes & mask) ||
	    (sp->bytes && sp->subbuf_size != r->cpus[0].ss))
		return -EINVAL;
	if (rd_stale(r))
		return -ESTALE;
	for (b = 0; b < FDR_RING_BUFS; b++) {
		struct rd_cpu *rc = &r->cpus[b];

		if (rc->pos & 7)
			rc->pos = (rc->pos & ~mask) + rc->ss; /* as rd_peek(): a bogus position */
		if (rc->lost) {
			/*
			 * A read entered a sub-buffer after a gap and has not handed out
			 * a record since (that would have reported the gap): step back
			 * before that sub-buffer's header, so that this take counts it.
			 */
			rc->cum -= rc->lost;
			rc->pos &= ~mask;
			rd_unpublish_lost(r, rc);
			rc->lost = 0;
			rc->have = 0;
		}
	}
	act = __atomic_load_n(&r->cpus[0].c0->active, __ATOMIC_ACQUIRE) & 1;
	live = &r->cpus[act];
	old = &r->cpus[act ^ 1];
	if (!__atomic_load_n(&r->ring.hdr->spare_allocated, __ATOMIC_ACQUIRE))
		goto take_live; /* freed: see rd_pick() */
	/* first what a swap took into the snapshot before it was taken */
	ret = rd_take_from(r, old, fd, mem, max_bytes, sp);
	if (ret)
		return ret;
	if (!rd_writer_end(old, &W, &wcum) && (W > old->pos || wcum > old->cum)) {
		/*
		 * Not waiting for the writers that were in flight at the swap: they
		 * were inside a critical section on another CPU, which ends within
		 * nanoseconds (a preempted one aborts and goes to the live buffer),
		 * long before a reader sees the swap. One that comes later all the
		 * same is taken by a later take, after newer records: order, never
		 * a record, is what that costs. (Waiting 2 ms, as snapshot readers
		 * do, made fdr record's last round end with the live buffer's
		 * sub-buffers untaken.)
		 */
		ret = rd_take_partial(r, old, fd, mem, sp);
		if (ret) {
			r->old_waits = 0;
			return ret;
		}
		if (!rd_writer_end(old, &W, &wcum) && W <= old->pos && wcum > old->cum) {
			/*
			 * The writer is behind the cursor: the buffer was reset (the
			 * snapshot freed, or allocated again; its count went on, see
			 * fdr_ring_buffer_reset()). What the cursor did not get is lost;
			 * it goes on from the writer.
			 */
			uint64_t lost = wcum - old->cum;

			old->pos = W;
			old->cum = wcum;
			sp->lost += lost;
			r->v_cum += lost;
			rd_publish(r, old, 0, lost);
		} else if (W > old->pos && ++r->old_waits < 64) {
			return 0; /* not takeable this time (a race): the live buffer waits */
		}
	}
	r->old_waits = 0;
take_live:
	return rd_take_from(r, live, fd, mem, max_bytes, sp);
}

/* See rd_take_subbufs(). */
int fdr_reader_take_subbufs(struct fdr_reader *r, int fd, uint64_t max_bytes, struct fdr_spool *sp)
{
	if (fd < 0)
		return -EINVAL;
	return rd_take_subbufs(r, fd, NULL, max_bytes, sp);
}

/**
 * fdr_reader_take_subbufs_mem - fdr_reader_take_subbufs() into memory
 * @r: as there
 * @dst: where the sub-buffers go, in ring order, from @dst on
 * @room: bytes at @dst (at least one sub-buffer)
 * @sp: as there: @sp->bytes grows by what was taken, as if a spool file had got
 *      it at that offset; the caller writes @dst there later
 *
 * The same take, with the same checks and counts, for a caller that stages the
 * sub-buffers in its own memory (fdr record, so that a slow disk never holds the
 * ring: it writes the stage out from another thread, with direct I/O). Cut
 * sub-buffers are spoiled in @dst as they would be in the file. Same returns.
 */
int fdr_reader_take_subbufs_mem(struct fdr_reader *r, unsigned char *dst, uint64_t room,
				struct fdr_spool *sp)
{
	if (!dst)
		return -EINVAL;
	return rd_take_subbufs(r, -1, dst, room, sp);
}

/**
 * fdr_reader_open_spool - read a spool that fdr_reader_take_subbufs() wrote, as a
 * one-CPU reader: fdr_reader_next(), fdr_reader_raw_page() and
 * fdr_reader_raw_pages() then return its records
 * @s: the session the sub-buffers came from (its clock conversion)
 * @inst: their instance (its trace clock)
 * @fd: the spool (borrowed: keep it open until fdr_reader_close())
 * @sp: its description (copied)
 * @out: the reader; fdr_reader_close() it
 *
 * The spool came from shared memory and is checked exactly as the ring is, by the
 * same code: every header's position, every record's type and length; timestamps
 * are converted with each sub-buffer's calibration point; gaps in the record
 * counts are reported as lost (lost_before, the pages' missed-events flag).
 * Returns 0, -EINVAL (a bad sub-buffer size or spool length, or no such instance),
 * -ENOMEM.
 */
int fdr_reader_open_spool(struct fdr_session *s, uint32_t inst, int fd, const struct fdr_spool *sp,
			  struct fdr_reader **out)
{
	struct fdr_reader *r;
	struct rd_cpu *rc;
	int shift = fdr_shm_log2(sp->subbuf_size);

	if (shift < FDR_SHM_SUBBUF_SHIFT_MIN || shift > FDR_SHM_SUBBUF_SHIFT_MAX ||
	    inst >= FDR_MAX_INSTANCES || fd < 0 || (sp->bytes & (sp->subbuf_size - 1)))
		return -EINVAL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->s = s;
	r->inst = inst;
	r->spool = 1;
	r->ring_fd = -1;
	r->nr = 1;
	r->nr_cur = 1;
	r->cpus = calloc(1, sizeof(*r->cpus));
	rc = r->cpus;
	if (rc)
		rc->spool_dfd = -1; /* before anything can fail: fdr_reader_close() closes it */
	if (!rc || !(rc->buf = malloc(sp->subbuf_size))) {
		fdr_reader_close(r);
		return -ENOMEM;
	}
	rc->cpu = sp->cpu;
	rc->ss = sp->subbuf_size;
	rc->shift = (uint32_t)shift;
	rc->n = 1;
	rc->buf_pos = UINT64_MAX;
	rc->pos = sp->start_pos;
	rc->cum = sp->start_cum;
	rc->spool_fd = fd;
	rc->spool_end = sp->bytes;
	/*
	 * Direct I/O where the file system has it: fdr record's flusher wrote the
	 * spool that way, so its pages are not in the cache, and a buffered read
	 * costs a kernel copy out of cold pages on top of the disk (perf: 31 % of
	 * all the samples of a 2 s recording and its stop). Whole sub-buffers at
	 * sub-buffer offsets suit it; a refusal (EINVAL) goes back to the cache.
	 */
	{
		char path[64];

		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		rc->spool_dfd = open(path, O_RDONLY | O_DIRECT | O_CLOEXEC);
	}
	rc->spool_batch_nr =
		((rc->spool_dfd >= 0 ? RD_SPOOL_DIRECT_BATCH : RD_SPOOL_BATCH) >> shift) ?: 1;
	if (posix_memalign((void **)&rc->spool_batch, 4096, (size_t)rc->spool_batch_nr << shift)) {
		rc->spool_batch = NULL;
		fdr_reader_close(r);
		return -ENOMEM;
	}
	fdr_clock_conv_init(&r->conv, fdr_session_control(s),
			    fdr_session_control(s)->instances[inst].clock);
	*out = r;
	return 0;
}

/* ---- statistics and clearing ---------------------------------------------------------- */

struct rd_scan {
	uint64_t w_sub, W, cum_w, start_cum, entries, bytes, first_raw;
	uint32_t w_off;
	int have_first;
	struct fdr_abi_subbuf first_sb;
};

/*
 * Walk one CPU's ring from @from (a linear position) to the writer, counting
 * records and bytes. Fills sc; returns 0 or a negative errno.
 */
static int rd_scan_cpu(struct rd_cpu *rc, uint64_t from, struct rd_scan *sc)
{
	uint64_t oldest, S;
	int tries;

	memset(sc, 0, sizeof(*sc));
	if (rc->bad)
		return -EUCLEAN;
	for (tries = 0; tries < 100; tries++) {
		int ret = rd_writer_retry(rc, &sc->w_sub, &sc->w_off);

		if (ret == -EAGAIN)
			/*
			 * 100 reads of head, each finding a header that does not hold
			 * the writer's position: not a race (a switch takes nanoseconds)
			 * but a corrupt header. Callers wait on -EAGAIN: say what it is.
			 */
			return fdr_shm_errorf("cpu %u buffer %u: the header of the writer's "
					      "sub-buffer does not hold its position",
					      rc->cpu, rc->bi);
		if (ret)
			return ret;
		oldest = sc->w_sub >= (uint64_t)(rc->n - 1) * rc->ss ?
				 sc->w_sub - (uint64_t)(rc->n - 1) * rc->ss :
				 0;
		S = from & ~(uint64_t)(rc->ss - 1);
		if (S < oldest)
			from = S = oldest;
		if (S > sc->w_sub)
			from = S = sc->w_sub;
		sc->entries = sc->bytes = 0;
		sc->have_first = 0;
		sc->start_cum = UINT64_MAX;
		for (; S <= sc->w_sub; S += rc->ss) {
			uint32_t off, first;

			if (S == sc->w_sub && sc->w_off == 0)
				break;
			if (rd_copy(rc, S, sc->w_sub, sc->w_off) < 0)
				break;
			if (rd_hdr(rc)->pos != S)
				continue;
			if (sc->start_cum == UINT64_MAX)
				sc->start_cum = rd_hdr(rc)->cum;
			first = (from > S && from - S >= FDR_SUBBUF_HDR) ? (uint32_t)(from - S) :
									   FDR_SUBBUF_HDR;
			for (off = FDR_SUBBUF_HDR;;) {
				const struct fdr_abi_rec *h = (const void *)(rc->buf + off);
				uint32_t len = rd_rec_len(rc->buf, off, rc->buf_valid);

				if (!len)
					break;
				if (off < first) {
					if (sc->start_cum != UINT64_MAX &&
					    S == (from & ~(uint64_t)(rc->ss - 1)))
						sc->start_cum++;
				} else {
					if (!sc->have_first) {
						sc->have_first = 1;
						sc->first_raw = h->ts;
						sc->first_sb = *rd_hdr(rc);
					}
					sc->entries++;
					sc->bytes += len;
				}
				off += len;
			}
		}
		if (S > sc->w_sub || (S == sc->w_sub && sc->w_off == 0))
			break; /* walked all the way without being overtaken */
	}
	if (sc->start_cum == UINT64_MAX)
		sc->start_cum = __atomic_load_n(&rc->c->consumed_cum, __ATOMIC_RELAXED);
	sc->cum_w = sc->start_cum + sc->entries;
	sc->W = sc->w_sub + sc->w_off;
	return 0;
}

static int rd_open_cpu(struct fdr_session *s, uint32_t inst, uint32_t cpu, unsigned flags,
		       struct fdr_reader **r)
{
	return fdr_reader_open(s, inst, (int)cpu, flags & FDR_READ_SNAPSHOT, r);
}

/**
 * fdr_ring_stats - the counters of per_cpu/cpuN/stats
 * Returns 0, -ENOENT (no such instance or CPU), or a negative errno.
 */
int fdr_ring_stats(struct fdr_session *s, uint32_t inst, uint32_t cpu, struct fdr_cpu_stats *st)
{
	return fdr_ring_stats_ex(s, inst, cpu, 0, st);
}

/*
 * The records written into the other buffer of @rc's CPU (not the one @rc
 * reads) since the last clear: its writer's record count less its base_cum.
 */
static uint64_t rd_other_written(struct fdr_reader *r, const struct rd_cpu *rc)
{
	struct rd_cpu o;
	uint64_t pos, cum, base;
	int ret = rd_cpu_init(r, &o, &r->ring, rc->cpu, rc->bi ^ 1);

	if (!ret)
		ret = rd_writer_end_any(&r->ring, &o, &pos, &cum);
	free(o.buf);
	if (ret)
		return 0;
	base = __atomic_load_n(&o.c->base_cum, __ATOMIC_RELAXED);
	return cum > base ? cum - base : 0;
}

/**
 * fdr_ring_stats_ex - fdr_ring_stats() of the live or (FDR_READ_SNAPSHOT) the snapshot buffer
 *
 * Live: entries, bytes and the oldest record are the live buffer's; the counters
 * are the CPU's since the last clear, whichever buffer was live (swaps leave them
 * alone): overrun (found by consuming readers, and overwritten unread since),
 * read, dropped, and snapshot, the records written since the last clear that are
 * none of the others: swaps took them out of the live buffer before any
 * consuming reader had them (see docs/design/ring.md, "Loss accounting"). So
 * entries + overrun + read + snapshot = the records written since the last clear.
 * Snapshot: entries, bytes, the oldest record and overrun (overwritten before the
 * swap, since its reader position) are the snapshot buffer's; the rest is 0.
 */
int fdr_ring_stats_ex(struct fdr_session *s, uint32_t inst, uint32_t cpu, unsigned flags,
		      struct fdr_cpu_stats *st)
{
	struct fdr_reader *r;
	struct rd_cpu *rc;
	struct rd_scan sc;
	uint64_t consumed, consumed_cum, pending = 0, written, other;
	int ret = rd_open_cpu(s, inst, cpu, flags, &r);
	uint32_t b;

	if (ret)
		return ret;
	rc = &r->cpus[0];
	consumed = __atomic_load_n(&rc->c->consumed, __ATOMIC_ACQUIRE);
	consumed_cum = __atomic_load_n(&rc->c->consumed_cum, __ATOMIC_RELAXED);
	ret = rd_scan_cpu(rc, consumed, &sc);
	if (ret)
		goto out;
	if (sc.start_cum > consumed_cum)
		pending = sc.start_cum - consumed_cum;
	memset(st, 0, sizeof(*st));
	st->entries = sc.entries;
	st->bytes = sc.bytes;
	st->overrun = pending;
	st->now_ts = fdr_clock_now(&r->conv);
	st->oldest_ts = sc.have_first ? fdr_clock_conv(&r->conv, sc.first_raw, &sc.first_sb) : 0;
	if (!(flags & FDR_READ_SNAPSHOT)) {
		st->overrun += __atomic_load_n(&rc->c0->overrun, __ATOMIC_RELAXED);
		st->commit_overrun = __atomic_load_n(&rc->c->commit_overrun, __ATOMIC_RELAXED);
		for (b = 0; b < FDR_RING_BUFS; b++) {
			const struct fdr_abi_cpu *c = rd_entry(&r->ring, b, rc->cpu);

			st->dropped += __atomic_load_n(&c->dropped, __ATOMIC_RELAXED) +
				       __atomic_load_n(&c->too_big, __ATOMIC_RELAXED) +
				       __atomic_load_n(&c->nested, __ATOMIC_RELAXED);
		}
		st->read = __atomic_load_n(&rc->c0->read_events, __ATOMIC_RELAXED);
		/* what both buffers were given since the last clear */
		written = sc.cum_w - __atomic_load_n(&rc->c->base_cum, __ATOMIC_RELAXED);
		if (written > sc.cum_w)
			written = 0; /* a base beyond the writer: cleared meanwhile */
		other = rd_other_written(r, rc);
		written += other;
		if (written > st->entries + st->overrun + st->read)
			st->snapshot = written - st->entries - st->overrun - st->read;
	}
	st->written = st->entries + st->overrun;
out:
	fdr_reader_close(r);
	return ret;
}

/**
 * fdr_ring_clear - empty an instance's buffers (one CPU, or -1 for all) and reset
 * their counters, as "echo > trace" does. Writers go on meanwhile.
 */
int fdr_ring_clear(struct fdr_session *s, uint32_t inst, int cpu)
{
	return fdr_ring_clear_ex(s, inst, cpu, 0);
}

/**
 * fdr_ring_clear_ex - fdr_ring_clear() of the live or (FDR_READ_SNAPSHOT) the snapshot buffers
 *
 * Live: the live buffers are emptied and the CPUs' counters start again from 0
 * (both buffers' base_cum move to their writers: nothing was written since).
 * Snapshot: the snapshot buffers are emptied; the counters stay.
 */
int fdr_ring_clear_ex(struct fdr_session *s, uint32_t inst, int cpu, unsigned flags)
{
	struct fdr_reader *r;
	uint32_t i, b;
	int ret = fdr_reader_open(s, inst, cpu, flags & FDR_READ_SNAPSHOT, &r);

	if (ret)
		return ret;
	for (i = 0; i < r->nr; i++) {
		struct rd_cpu *rc = &r->cpus[i];
		struct rd_scan sc;
		uint64_t consumed = __atomic_load_n(&rc->c->consumed, __ATOMIC_ACQUIRE);

		if (rd_scan_cpu(rc, consumed, &sc))
			continue;
		__atomic_store_n(&rc->c->consumed_cum, sc.cum_w, __ATOMIC_RELAXED);
		if (!(flags & FDR_READ_SNAPSHOT)) {
			struct rd_cpu o;
			uint64_t pos, cum;

			__atomic_store_n(&rc->c->base_cum, sc.cum_w, __ATOMIC_RELAXED);
			if (!rd_cpu_init(r, &o, &r->ring, rc->cpu, rc->bi ^ 1) &&
			    !rd_writer_end_any(&r->ring, &o, &pos, &cum))
				__atomic_store_n(&o.c->base_cum, cum, __ATOMIC_RELAXED);
			free(o.buf);
			__atomic_store_n(&rc->c0->overrun, 0, __ATOMIC_RELAXED);
			__atomic_store_n(&rc->c0->read_events, 0, __ATOMIC_RELAXED);
			for (b = 0; b < FDR_RING_BUFS; b++) {
				struct fdr_abi_cpu *c = rd_entry(&r->ring, b, rc->cpu);

				__atomic_store_n(&c->dropped, 0, __ATOMIC_RELAXED);
				__atomic_store_n(&c->too_big, 0, __ATOMIC_RELAXED);
				__atomic_store_n(&c->nested, 0, __ATOMIC_RELAXED);
			}
		}
		/* release: pairs with the discard-mode writer's acquire of consumed */
		__atomic_store_n(&rc->c->consumed, sc.W, __ATOMIC_RELEASE);
	}
	fdr_reader_close(r);
	return 0;
}

/** fdr_ring_nr_cpus - CPUs of an instance's ring, or a negative errno */
int fdr_ring_nr_cpus(struct fdr_session *s, uint32_t inst)
{
	struct rd_ring ring;
	int ret = rd_ring_get(s, inst, &ring, NULL);

	return ret ? ret : (int)ring.nr_cpus;
}

/** fdr_ring_cpu_size_kb - buffer_size_kb of one CPU, as the kernel computes it */
int fdr_ring_cpu_size_kb(struct fdr_session *s, uint32_t inst, uint32_t cpu)
{
	struct rd_ring ring;
	struct fdr_shm_geom g[FDR_RING_BUFS];
	int ret = rd_ring_get(s, inst, &ring, NULL);

	if (ret)
		return ret;
	if (cpu >= ring.nr_cpus)
		return -ENOENT;
	ret = rd_cpu_geom(&ring, cpu, g);
	if (ret)
		return ret;
	return (int)((uint64_t)(g[0].nr_subbufs - 1) * (g[0].subbuf_size - 16) / 1024);
}
