// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * ring.c - the per-CPU ring buffer, writer side.
 *
 * Design
 * ------
 * Each instance has one ring per CPU. A ring is nr_subbufs sub-buffers of
 * subbuf_size bytes (a power of two). A writer only ever appends to the ring of
 * the CPU it is running on, and it does the whole append inside one restartable
 * sequence (rseq, Linux >= 4.18): read head, check room, copy the record, store
 * the new head. If the thread is preempted, migrated or signalled anywhere before
 * that final store, the kernel moves it to the abort label and nothing was
 * published; it simply retries. So, on one CPU, appends are serialised without a
 * lock and without an atomic instruction, whichever processes the threads belong
 * to, and a writer killed or stopped at any instruction leaves no reservation
 * behind: there is nothing to recover, nobody ever waits for it.
 *
 *        data area of one CPU (nr_subbufs = 4)
 *   +-----------+-----------+-----------+-----------+
 *   |H rec rec P|H rec rec P|H rec re   |H rec rec P|
 *   +-----------+-----------+-----^-----+-----------+
 *    oldest ------------------->  head (writer)   next to be overwritten
 *   H = struct fdr_abi_subbuf, P = padding record up to the sub-buffer's end
 *
  * head = switch_gen << 48 | nrec << 32 | data_off (nrec: records in the current
 * sub-buffer). Three kinds of append, each one rseq critical section ending in
 * the single store of head:
 *  - fast path: the record fits after data_off in the current sub-buffer: copy it,
 *    head += len, nrec += 1. The timestamp (rdtsc) is taken inside the critical section, so
 *    timestamps never go backwards on a CPU.
 *  - step 1 (pad): it does not fit: write a padding record over the rest, move head
 *    to offset 0 of the next sub-buffer and bump switch_gen. In discard mode this
 *    is where a full ring refuses the record.
 *  - step 2 (header): head sits at offset 0: write the sub-buffer header (its
 *    linear position, the count of records before it, a clock calibration point),
 *    head += sizeof(header).
 * Steps 1 and 2 compare head with the value the slow path computed from, so a
  * concurrent append on the same CPU makes them retry; switch_gen makes an ABA on
 * head require 65536 sub-buffer switches during one preemption.
 *
 * The writer never writes outside the sub-buffer that head points into. Readers
 * (lib/read/reader.c) rely on that: they copy a sub-buffer, then re-read head; the
 * copy is good if the writer has not since entered the same slot one lap later.
 *
  * Snapshots: each CPU has two such buffers, the live one and the spare, and a
 * word "active" saying which is live. The fast path reads it inside its
 * critical section. fdr_ring_swap() empties the spare (its reader position
 * moves to its writer position) and flips "active" on every CPU: O(CPUs),
 * whatever the buffer size, and writers never wait for it. It leaves every
 * counter alone: they are the CPU's since the last clear, across both buffers
 * (docs/design/ring.md, "Loss accounting").
 *
 * Mappings are never unmapped while the process lives: a retired mapping (after a
 * resize or when the session goes away) is replaced in place by anonymous memory,
 * so a writer still holding the old pointer writes harmlessly into private pages.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/rseq.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core-local.h"

#include "ring-fast.h"

/* The low 32 bits of the ring header's snap_seq: what a saver sleeps on (futex). */
static uint32_t *rb_seq_word(struct fdr_abi_ring *h)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	return (uint32_t *)&h->snap_seq;
#else
	return (uint32_t *)&h->snap_seq + 1;
#endif
}

/* ring-fast.h: record timestamps are rdtsc (1) or CLOCK_MONOTONIC (0); set at attach (event.c) */
int fdr_ring_tsc;

/*
 * Disable CPU @pc of a mapping: a geometry that makes every append take the slow
 * path (ss_mask 0), where fdr_ring_write() refuses it and counts it in
 * dropped_no_slot (nr_subbufs 0). @c is the CPU's entry in the file (in bounds:
 * the header check placed the entries): the fast path reads its active word and
 * head, and never writes through them while the geometry is empty.
 */
static void rb_cpu_disable(struct fdr_pcpu *pc, struct fdr_abi_cpu *c0, struct fdr_abi_cpu *c1,
			   unsigned char *base)
{
	uint32_t bi;

	memset(pc, 0, sizeof(*pc));
	pc->cpu[0] = c0;
	pc->cpu[1] = c1;
	for (bi = 0; bi < FDR_RING_BUFS; bi++) {
		pc->buf[bi].head = &pc->cpu[bi]->head;
		pc->buf[bi].data = base;
	}
	pc->active = &c0->active;
}

/**
 * fdr_ring_map_open - map ring file ring.<inst>.<gen> of a session and validate it
 * @s: session
 * @inst: instance index
 * @gen: generation
 * @out: new mapping; release with fdr_ring_map_retire()
 *
 * The header is checked first (fdr_shm_check_ring()), then each buffer of each
 * CPU (fdr_shm_check_cpu()), on copies: the mapping keeps only the copies, so a
 * geometry changed later in the file changes nothing here. A CPU whose geometry
 * does not check out is disabled in this mapping: appends on it are refused and
 * counted (control.dropped_no_slot), the others record; @out's nr_bad counts
 * them and bad_why says what the first was (the caller reports it once).
 *
 * Returns 0, -ENOENT, -ENOMEM, or -EUCLEAN if the header is malformed (text in
 * fdr_shm_error()).
 */
int fdr_ring_map_open(struct fdr_session *s, uint32_t inst, uint32_t gen, struct fdr_ring_map **out)
{
	char name[64];
	struct stat st;
	struct fdr_ring_map *m = NULL;
	void *base = MAP_FAILED;
	int fd = -1, ret;
	uint32_t cpu;
	struct fdr_abi_ring h;

	snprintf(name, sizeof(name), "ring.%u.%u", inst, gen);
	fd = openat(s->dir_fd, name, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		ret = -errno;
		goto err;
	}
	if ((size_t)st.st_size < sizeof(struct fdr_abi_ring)) {
		ret = fdr_shm_errorf("%s: file size %llu is smaller than its header (%zu)", name,
				     (unsigned long long)st.st_size, sizeof(struct fdr_abi_ring));
		goto err;
	}
	base = mmap(NULL, st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (base == MAP_FAILED) {
		ret = -errno;
		goto err;
	}
	ret = fdr_shm_check_ring(base, (uint64_t)st.st_size, name, &h);
	if (ret)
		goto err;
	m = calloc(1, sizeof(*m) + (size_t)h.nr_cpus * sizeof(m->pcpu[0]));
	if (!m) {
		ret = -ENOMEM;
		goto err;
	}
	for (cpu = 0; cpu < h.nr_cpus; cpu++) {
		struct fdr_pcpu *pc = &m->pcpu[cpu];
		struct fdr_shm_geom g = { 0 };
		struct fdr_abi_cpu *c[FDR_RING_BUFS];
		uint32_t bi;

		for (bi = 0; bi < FDR_RING_BUFS; bi++)
			c[bi] = (struct fdr_abi_cpu *)((char *)base + h.cpu_off) +
				(size_t)bi * h.nr_cpus + cpu;
		for (bi = 0; bi < FDR_RING_BUFS; bi++) {
			struct fdr_pbuf *b = &pc->buf[bi];

			if (fdr_shm_check_cpu(&h, base, name, cpu, bi, &g))
				break;
			b->head = &c[bi]->head;
			b->data = (unsigned char *)base + g.data_off;
			b->ss_mask = g.subbuf_size - 1;
			b->ring_bytes = (uint64_t)g.nr_subbufs * g.subbuf_size;
			pc->cpu[bi] = c[bi];
		}
		if (bi < FDR_RING_BUFS) {
			if (!m->nr_bad++)
				snprintf(m->bad_why, sizeof(m->bad_why), "%s", fdr_shm_error());
			rb_cpu_disable(pc, c[0], c[1], base);
			continue;
		}
		pc->nr_subbufs = g.nr_subbufs;
		pc->subbuf_size = g.subbuf_size;
		pc->ss_shift = g.shift;
		pc->active = &c[0]->active;
	}
	m->base = base;
	m->size = st.st_size;
	m->instance = inst;
	m->gen = gen;
	m->nr_cpus = h.nr_cpus;
	m->hdr_bytes = h.cpu_off + (uint64_t)FDR_RING_BUFS * h.nr_cpus * sizeof(struct fdr_abi_cpu);
	m->hdr = base;
	m->lease_mult = fdr_lease_mult(s->ctl);
	close(fd);
	*out = m;
	return 0;
err:
	free(m);
	if (base != MAP_FAILED)
		munmap(base, st.st_size);
	if (fd >= 0)
		close(fd);
	return ret;
}

/**
 * fdr_ring_map_retire - drop a ring mapping that writers may still be using
 * @m: the mapping, or NULL
 *
 * The pages are replaced by anonymous memory at the same address, so a writer
 * that loaded the pointer before it was unpublished cannot fault; the file's
 * memory is released. The small struct is leaked on purpose for the same reason.
 */
void fdr_ring_map_retire(struct fdr_ring_map *m)
{
	if (!m)
		return;
	fdr_shm_unback(m->base, m->size);
}

/*
 * The writer position of buffer entry @c (data area @data) and the number of
 * records written before it, from head and the header of head's sub-buffer: the
 * mirror next to head when it holds that header (fdr-abi.h), else the header in
 * the data area. Used by the swap (for the buffer that becomes live) and by a
 * reset (to go on counting where the buffer was).
 */
static void rb_buffer_end(const struct fdr_abi_cpu *c, const unsigned char *data, uint32_t shift,
			  uint32_t nr_subbufs, uint64_t *pos, uint64_t *cum);

/*
 * Reset one buffer of a CPU to empty: sub-buffer 0 header, head, reader state.
 * The record count goes on from where the buffer was (its header says so), so
 * a consuming reader that had not read what the buffer held counts it as lost
 * (see docs/design/ring.md, "Loss accounting"); the counters (dropped, too_big,
 * read_events, overrun) are the CPU's since the last clear and stay.
 */
void fdr_ring_buffer_reset(struct fdr_abi_cpu *c, unsigned char *data)
{
	struct fdr_abi_subbuf *sb = (void *)data;
	uint64_t pos = 0, cum = 0;
	/*
	 * Read once, checked as fdr_shm_check_cpu() checks them. (This used its own
	 * ctz() with "| 1", which made the shift 0 for every size: the check always
	 * failed, and every reset (the free and the allocation of a snapshot
	 * buffer) started the buffer's record count again from 0, under a
	 * following reader's cursor that had counted further: what the freed
	 * buffer held was lost and never counted.)
	 */
	uint32_t ss = c->subbuf_size, n = c->nr_subbufs;
	int shift = fdr_shm_log2(ss);

	if (n >= 3 && shift >= FDR_SHM_SUBBUF_SHIFT_MIN && shift <= FDR_SHM_SUBBUF_SHIFT_MAX)
		rb_buffer_end(c, data, (uint32_t)shift, n, &pos, &cum);
	sb->pos = 0;
	sb->cum = cum;
	fdr_clock_point(&sb->cal_tsc, &sb->cal_mono_ns, &sb->cal_boot_ns);
	sb->reserved = 0;
	c->consumed = 0;
	c->consumed_cum = cum;
	c->lost_pending = 0;
	/* the mirror of that header, as step 2 of a switch writes it (tag_a first) */
	c->hdr_tag_a = FDR_SUBBUF_HDR;
	c->hdr_pos = 0;
	c->hdr_cum = cum;
	c->hdr_tag_b = FDR_SUBBUF_HDR;
	/* release: the header above is in place before writers can use the buffer */
	__atomic_store_n(&c->head, FDR_SUBBUF_HDR, __ATOMIC_RELEASE);
}

/**
 * fdr_ring_file_create - create ring.<inst>.<gen> in a session directory
 * @dir_fd: the session directory
 * @inst: instance index
 * @gen: generation
 * @nr_cpus: CPUs
 * @subbuf_size: bytes, power of two, 4 KiB .. 1 MiB
 * @nr_subbufs: per CPU, at least 3
 * @spare: also back the snapshot buffers with memory
 *
 * Layout: struct fdr_abi_ring, 2 * nr_cpus struct fdr_abi_cpu, the live buffers'
 * data, then the spare buffers' data (reserved in the file, backed by memory only
 * while the snapshot is allocated). Everything writers may store into (headers,
 * live buffers, and the spare ones with @spare) is allocated before the file is
 * published, so a full file system is -ENOSPC here and never a SIGBUS in a
 * writer. The file is written under a temporary name (removed on failure) and
 * renamed, so it is never seen half made. Each CPU's buffer is at most 4 GiB -
 * @subbuf_size (head holds a 32-bit offset; see fdr_session_max_kb()).
 * Returns 0, -EINVAL, -ENOMEM, -ENOSPC or another negative errno.
 */
int fdr_ring_file_create(int dir_fd, uint32_t inst, uint32_t gen, uint32_t nr_cpus,
			 uint32_t subbuf_size, const uint32_t *nr_subbufs, int spare)
{
	char name[64], tmp[80];
	uint64_t size, off, live_end, data;
	struct fdr_abi_ring *h;
	void *base;
	uint32_t cpu, bi;
	int fd, ret = 0;

	if (fdr_shm_log2(subbuf_size) < FDR_SHM_SUBBUF_SHIFT_MIN ||
	    fdr_shm_log2(subbuf_size) > FDR_SHM_SUBBUF_SHIFT_MAX || !nr_cpus ||
	    nr_cpus > FDR_MAX_CPUS)
		return -EINVAL;
	off = (sizeof(*h) + (uint64_t)FDR_RING_BUFS * nr_cpus * sizeof(struct fdr_abi_cpu) + 4095) &
	      ~4095ull;
	size = off;
	for (cpu = 0; cpu < nr_cpus; cpu++) {
		if (nr_subbufs[cpu] < 3)
			return -EINVAL;
		if ((uint64_t)nr_subbufs[cpu] * subbuf_size > (1ull << 32) - subbuf_size)
			return -EINVAL;
		size += (uint64_t)nr_subbufs[cpu] * subbuf_size;
	}
	live_end = size;
	size += live_end - off;
	snprintf(name, sizeof(name), "ring.%u.%u", inst, gen);
	snprintf(tmp, sizeof(tmp), ".tmp.%s.%d", name, (int)getpid());
	fd = openat(dir_fd, tmp, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	/* held while we work on it: the session's leftover reaper leaves it alone */
	flock(fd, LOCK_EX);
	if (ftruncate(fd, (off_t)size) < 0) {
		ret = -errno;
		goto err;
	}
	/* back the memory now: ENOSPC here, not SIGBUS in a traced program later */
	ret = -posix_fallocate(fd, 0, (off_t)(spare ? size : live_end));
	if (ret < 0)
		goto err;
	base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (base == MAP_FAILED) {
		ret = -errno;
		goto err;
	}
	h = base;
	h->struct_size = sizeof(*h);
	h->version = FDR_ABI_VERSION;
	h->file_size = size;
	h->nr_cpus = nr_cpus;
	h->instance = inst;
	h->gen = gen;
	h->subbuf_size = subbuf_size;
	h->cpu_off = sizeof(*h);
	h->spare_allocated = spare ? 1 : 0;
	data = off;
	for (bi = 0; bi < FDR_RING_BUFS; bi++) {
		for (cpu = 0; cpu < nr_cpus; cpu++) {
			struct fdr_abi_cpu *c = (struct fdr_abi_cpu *)((char *)base + h->cpu_off) +
						(size_t)bi * nr_cpus + cpu;

			c->nr_subbufs = nr_subbufs[cpu];
			c->subbuf_size = subbuf_size;
			c->data_off = data;
			if (bi == 0 || spare)
				fdr_ring_buffer_reset(c, (unsigned char *)base + data);
			else
				c->head =
					FDR_SUBBUF_HDR; /* its zero pages read as an empty buffer */
			data += (uint64_t)nr_subbufs[cpu] * subbuf_size;
		}
	}
	/* release: the magic is written last; readers check it first */
	__atomic_store_n(&h->magic, FDR_ABI_MAGIC_RING, __ATOMIC_RELEASE);
	munmap(base, size);
	if (renameat(dir_fd, tmp, dir_fd, name) < 0) {
		ret = -errno;
		goto err;
	}
	close(fd);
	return 0;
err:
	unlinkat(dir_fd, tmp, 0);
	close(fd);
	return ret;
}

/* A swap in progress older than this belongs to a process that died: take over. */
#define RB_SWAP_STALE_NS (100ull * 1000 * 1000)
/* A saver that has not refreshed its heartbeat for this long is gone. */
#define RB_SAVER_STALE_NS (1000ull * 1000 * 1000)

/*
 * Read the header mirror of buffer entry @c (fdr-abi.h): 1 and @pos/@cum if it
 * holds the header step 2 wrote with head value @tag, else 0.
 */
static int rb_mirror_read(const struct fdr_abi_cpu *c, uint64_t tag, uint64_t *pos, uint64_t *cum)
{
	/* acquire on each: tag_b before pos and cum, those before tag_a */
	uint64_t tb = __atomic_load_n(&c->hdr_tag_b, __ATOMIC_ACQUIRE);

	*pos = __atomic_load_n(&c->hdr_pos, __ATOMIC_ACQUIRE);
	*cum = __atomic_load_n(&c->hdr_cum, __ATOMIC_ACQUIRE);
	return tb == tag && __atomic_load_n(&c->hdr_tag_a, __ATOMIC_ACQUIRE) == tag;
}

static void rb_buffer_end(const struct fdr_abi_cpu *c, const unsigned char *data, uint32_t shift,
			  uint32_t nr_subbufs, uint64_t *pos, uint64_t *cum)
{
	uint64_t head = __atomic_load_n(&c->head, __ATOMIC_ACQUIRE);
	uint32_t doff = (uint32_t)head, idx = doff >> shift, off = doff & ((1u << shift) - 1);
	uint32_t hidx = off ? idx : (idx == 0 ? nr_subbufs - 1 : idx - 1);
	/* the head value step 2 stored when it wrote that sub-buffer's header */
	uint64_t gen = (head >> 48) - (off ? 0 : 1);
	uint64_t tag = (gen & 0xffff) << 48 | (((uint64_t)hidx << shift) + FDR_SUBBUF_HDR);
	uint64_t sb_pos, sb_cum;

	*pos = 0;
	*cum = 0;
	if (idx >= nr_subbufs)
		return; /* a corrupted head: start from nothing */
	/*
	 * The header from the mirror next to head (the data area of a large
	 * buffer is cold: reading it cost a TLB and a cache miss per CPU); from
	 * the sub-buffer itself when the mirror does not hold that header.
	 */
	if (!rb_mirror_read(c, tag, &sb_pos, &sb_cum)) {
		const struct fdr_abi_subbuf *sh = (const void *)(data + ((size_t)hidx << shift));

		sb_pos = sh->pos;
		sb_cum = sh->cum;
	}
	/* head counts the sub-buffer's records (no need to read them); between the
	 * steps of a switch, the finished one's */
	*pos = sb_pos + (off ? off : 1u << shift);
	*cum = sb_cum + ((head & RB_NREC_MASK) >> 32);
}

/**
 * fdr_ring_swap - take a snapshot: swap the live and spare buffers of one CPU, or
 * of every CPU (@cpu = -1), of an instance's ring
 * @m: the ring mapping
 *
 * O(CPUs), lock-free for writers: each CPU's new live buffer is emptied (its
 * reader state moves to its writer position, O(one sub-buffer)), then the CPU's
 * active index flips. A writer that read the old index inside its rseq critical
 * section aborts and retries in the new buffer; one that already committed
 * finished into the old one, which is now the snapshot. Readers of the snapshot
 * wait for those (see the reader). Async-signal-safe; never blocks.
 *
 * While a "fdr snapshot save" process is attached, a snapshot is refused until the
 * previous one is saved, so that every snapshot kept is whole.
 *
 * Returns 0, -ENODEV (the snapshot buffers are not allocated), -EBUSY (another
 * swap is in progress, or the previous snapshot is not saved yet), -EINVAL.
 */
int fdr_ring_swap(struct fdr_ring_map *m, int cpu)
{
	struct fdr_abi_ring *h = m->hdr;
	uint32_t c, first = cpu < 0 ? 0 : (uint32_t)cpu,
		    last = cpu < 0 ? m->nr_cpus : (uint32_t)cpu + 1;
	uint64_t seq, now;

	if (cpu >= (int)m->nr_cpus)
		return -EINVAL;
	/*
	 * What this reads and writes is the ring header and a few lines per CPU,
	 * usually cold (a snapshot follows a long time of writing elsewhere): ask
	 * for all of them first, so their misses overlap instead of adding up.
	 */
	for (c = 0; c < sizeof(*h); c += 64)
		__builtin_prefetch((const char *)h + c, 1);
	for (c = first; c < last; c++) {
		const struct fdr_pcpu *pc = &m->pcpu[c];
		uint32_t k, bi;

		__builtin_prefetch(pc->active, 1);
		for (bi = 0; bi < FDR_RING_BUFS; bi++)
			for (k = 0; k < sizeof(struct fdr_abi_cpu); k += 64)
				__builtin_prefetch((const char *)pc->cpu[bi] + k, 1);
	}
	seq = __atomic_load_n(&h->snap_seq, __ATOMIC_ACQUIRE);
	now = fdr_lease_ns(m->lease_mult);
	if (!__atomic_load_n(&h->spare_allocated, __ATOMIC_ACQUIRE)) {
		__atomic_fetch_add(&h->snap_refused, 1, __ATOMIC_RELAXED);
		return -ENODEV;
	}
	if (!(seq & 1) && __atomic_load_n(&h->saver_pid, __ATOMIC_ACQUIRE) &&
	    fdr_lease_age(now, __atomic_load_n(&h->saver_beat_ns, __ATOMIC_ACQUIRE)) <
		    RB_SAVER_STALE_NS &&
	    __atomic_load_n(&h->saved_seq, __ATOMIC_ACQUIRE) != seq) {
		/* the previous snapshot is not saved yet: keep it whole */
		__atomic_fetch_add(&h->snap_refused, 1, __ATOMIC_RELAXED);
		return -EBUSY;
	}
	if ((seq & 1) && fdr_lease_age(now, __atomic_load_n(&h->snap_lock_ns, __ATOMIC_RELAXED)) <
				 RB_SWAP_STALE_NS) {
		__atomic_fetch_add(&h->snap_refused, 1, __ATOMIC_RELAXED);
		return -EBUSY;
	}
	if (!__atomic_compare_exchange_n(&h->snap_seq, &seq, (seq | 1) + ((seq & 1) ? 2 : 0), 0,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		__atomic_fetch_add(&h->snap_refused, 1, __ATOMIC_RELAXED);
		return -EBUSY;
	}
	/*
	 * A free of the spare buffers may have begun since the check above: it
	 * clears spare_allocated, then waits for an odd snap_seq to end before it
	 * releases their memory (fdr_session_snapshot_alloc()). Either it sees our
	 * odd seq, or we see its clear: seq_cst fence, paired with the one there.
	 */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (!__atomic_load_n(&h->spare_allocated, __ATOMIC_RELAXED)) {
		uint64_t mine = (seq | 1) + ((seq & 1) ? 2 : 0);

		__atomic_compare_exchange_n(&h->snap_seq, &mine, seq, 0, __ATOMIC_RELEASE,
					    __ATOMIC_RELAXED);
		__atomic_fetch_add(&h->snap_refused, 1, __ATOMIC_RELAXED);
		return -ENODEV;
	}
	__atomic_store_n(&h->snap_lock_ns, now, __ATOMIC_RELAXED);
	for (c = first; c < last; c++) {
		struct fdr_pcpu *pc = &m->pcpu[c];
		uint32_t act = __atomic_load_n(pc->active, __ATOMIC_ACQUIRE) & 1, nb = act ^ 1;
		struct fdr_abi_cpu *nc = pc->cpu[nb];
		struct fdr_pbuf *b = &pc->buf[nb];
		uint64_t pos, cum;

		/* empty the new live buffer: its reader starts at its writer position */
		rb_buffer_end(nc, b->data, pc->ss_shift, pc->nr_subbufs, &pos, &cum);
		/*
		 * Only the reader position moves: the counters are the CPU's since
		 * the last clear, whichever buffer was live (they used to be zeroed
		 * here, and what they had counted was lost with them).
		 */
		__atomic_store_n(&nc->consumed_cum, cum, __ATOMIC_RELAXED);
		__atomic_store_n(&nc->consumed, pos, __ATOMIC_RELEASE);
		__atomic_store_n(&pc->cpu[0]->swap_ns, now, __ATOMIC_RELAXED);
		/* release: pairs with the load of active inside the writers' rseq section */
		__atomic_store_n(pc->active, nb, __ATOMIC_RELEASE);
	}
	__atomic_fetch_add(&h->snap_count, 1, __ATOMIC_RELAXED);
	/* release: the swap is complete; an even seq tells readers and savers */
	__atomic_fetch_add(&h->snap_seq, 1, __ATOMIC_RELEASE);
	/*
	 * A saver may sleep on the seq (fdr_saver_wait()): wake it, so that it
	 * acts on the snapshot at once (fdr snapshot save freezes a linked kernel
	 * instance then). Only while one is attached: one system call per
	 * snapshot kept, async-signal-safe; without a saver a swap makes none.
	 */
	if (__atomic_load_n(&h->saver_pid, __ATOMIC_RELAXED))
		syscall(SYS_futex, rb_seq_word(h), FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
	return 0;
}

/*
 * The snapshot saver: the other half of the swap's "saver" check above. A saver
 * ("fdr snapshot save DIR", or any tool) keeps every snapshot of an instance;
 * while it is attached, a swap is refused (-EBUSY, counted) until it has saved
 * the previous snapshot, so that each snapshot kept is whole. The two halves
 * agree through four fields of the ring header (docs/design/flight-recorder.md):
 *
 *   attach: saved_seq = snap_seq rounded down to even (what exists now is not
 *           its business), saver_beat_ns = now, then saver_pid (each release);
 *           again after a resize, which makes a new ring file.
 *   beat:   saver_beat_ns = now every 100 ms; a beat 1 s old (RB_SAVER_STALE_NS)
 *           is a saver gone, and snapshots are no longer held back for it.
 *   save:   when snap_seq is even and differs from saved_seq, the snapshot of
 *           that seq waits: the saver reads it, writes it out, then stores
 *           saved_seq = snap_seq (release): the next swap may happen.
 *   detach: saver_pid back to 0 (compare-and-swap: only if still its own).
 *
 * The clock is the lease clock (fdr_session_lease_ns()), which the swap
 * compares the beat with. Not async-signal-safe (it may map a ring file).
 */

/** fdr_saver_init - a saver for instance @inst of @s; not attached until fdr_saver_poll() */
void fdr_saver_init(struct fdr_saver *sv, struct fdr_session *s, uint32_t inst)
{
	memset(sv, 0, sizeof(*sv));
	sv->s = s;
	sv->inst = inst;
}

/**
 * fdr_saver_poll - attach (again, after a resize), beat, count the refusals, and
 * say whether a snapshot waits to be saved: call it every few milliseconds
 * @seq: set to the snapshot's snap_seq when one waits (pass it to fdr_saver_saved())
 *
 * Returns 1 (a snapshot waits), 0 (none), or -ENOENT (the instance is gone) and
 * the errors of fdr_session_ring().
 */
int fdr_saver_poll(struct fdr_saver *sv, uint64_t *seq)
{
	uint64_t now = fdr_session_lease_ns(sv->s), r, cur;
	struct fdr_abi_ring *h;
	void *base;
	size_t size;
	int ret = fdr_session_ring(sv->s, sv->inst, &base, &size);

	if (ret)
		return ret;
	h = base;
	/* the refusals since the last poll; a new ring file counts from its own start */
	r = __atomic_load_n(&h->snap_refused, __ATOMIC_RELAXED);
	if (h == sv->hdr && r >= sv->refused_seen)
		sv->refused += r - sv->refused_seen;
	__atomic_store_n(&sv->hdr, h, __ATOMIC_RELEASE); /* fdr_saver_beat() reads it */
	sv->refused_seen = r;
	if (__atomic_load_n(&h->saver_pid, __ATOMIC_ACQUIRE) != (uint32_t)getpid()) {
		__atomic_store_n(&h->saved_seq,
				 __atomic_load_n(&h->snap_seq, __ATOMIC_ACQUIRE) & ~1ull,
				 __ATOMIC_RELEASE);
		__atomic_store_n(&h->saver_beat_ns, now, __ATOMIC_RELEASE);
		__atomic_store_n(&h->saver_pid, (uint32_t)getpid(), __ATOMIC_RELEASE);
	}
	if (fdr_lease_age(now, sv->beat_ns) > 100000000ull) {
		__atomic_store_n(&h->saver_beat_ns, now, __ATOMIC_RELEASE);
		sv->beat_ns = now;
	}
	cur = __atomic_load_n(&h->snap_seq, __ATOMIC_ACQUIRE);
	if ((cur & 1) || cur == __atomic_load_n(&h->saved_seq, __ATOMIC_ACQUIRE))
		return 0;
	*seq = cur;
	return 1;
}

/**
 * fdr_saver_wait - sleep until a snapshot may wait to be saved, at most @max_ns
 * (a swap wakes the sleeper when a saver is attached), or a signal. Call
 * fdr_saver_poll() after it; without a first poll it sleeps the whole time.
 */
void fdr_saver_wait(struct fdr_saver *sv, uint64_t max_ns)
{
	struct fdr_abi_ring *h = __atomic_load_n(&sv->hdr, __ATOMIC_ACQUIRE);
	struct timespec to = { (time_t)(max_ns / 1000000000ull), (long)(max_ns % 1000000000ull) };
	uint64_t cur;

	if (!h) {
		nanosleep(&to, NULL);
		return;
	}
	cur = __atomic_load_n(&h->snap_seq, __ATOMIC_ACQUIRE);
	/* one waits (or a swap is under way: poll again soon) */
	if ((cur & 1) || cur != __atomic_load_n(&h->saved_seq, __ATOMIC_ACQUIRE))
		return;
	/* the seq's low word: a swap changes it, then wakes (shared: no _PRIVATE) */
	syscall(SYS_futex, rb_seq_word(h), FUTEX_WAIT, (uint32_t)cur, &to, NULL, 0);
}

/** fdr_saver_saved - the snapshot of @seq (from fdr_saver_poll()) is saved: the next may be taken */
void fdr_saver_saved(struct fdr_saver *sv, uint64_t seq)
{
	/* release: the next snapshot may be taken now */
	if (sv->hdr)
		__atomic_store_n(&sv->hdr->saved_seq, seq, __ATOMIC_RELEASE);
}

/**
 * fdr_saver_beat - the heartbeat alone, for a thread that keeps it while the
 * saver's own thread writes a snapshot out (a 256 MiB trace.dat takes longer
 * than RB_SAVER_STALE_NS: without a beat, a swap would take the saver for gone
 * and reuse the buffer it is reading). Safe to call from another thread than
 * fdr_saver_poll()'s; does nothing before the first poll attached the saver, or
 * once another process is the saver.
 */
void fdr_saver_beat(struct fdr_saver *sv)
{
	struct fdr_abi_ring *h = __atomic_load_n(&sv->hdr, __ATOMIC_ACQUIRE);

	if (h && __atomic_load_n(&h->saver_pid, __ATOMIC_ACQUIRE) == (uint32_t)getpid())
		__atomic_store_n(&h->saver_beat_ns, fdr_session_lease_ns(sv->s), __ATOMIC_RELEASE);
}

/** fdr_saver_detach - stop holding snapshots back (if this process is still the saver) */
void fdr_saver_detach(struct fdr_saver *sv)
{
	void *base;
	size_t size;

	if (fdr_session_ring(sv->s, sv->inst, &base, &size) == 0) {
		uint32_t me = (uint32_t)getpid();

		__atomic_compare_exchange_n(&((struct fdr_abi_ring *)base)->saver_pid, &me, 0, 0,
					    __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
	}
}

#ifdef FDR_TESTPOINTS
#include <signal.h>

/* FDR_FAULT=NAME:N[:stop]: SIGKILL (or SIGSTOP) ourselves the Nth time NAME is passed. */
void fdr_testpoint(const char *name)
{
	static __thread unsigned long hits;
	const char *f = getenv("FDR_FAULT");
	size_t n;
	unsigned long want;
	char *end;

	if (!f)
		return;
	n = strcspn(f, ":");
	if (strlen(name) != n || strncmp(f, name, n) || f[n] != ':')
		return;
	want = strtoul(f + n + 1, &end, 10);
	if (++hits != want)
		return;
	raise(strcmp(end, ":stop") == 0 ? SIGSTOP : SIGKILL);
}
#endif
