// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * kmerge.c - a linked session's trace and trace_pipe with the kernel's lines
 * (docs/design/kernel-timeline.md, "One timeline in the control tree").
 *
 * A session linked to a kernel tracefs instance (fdr start -k) names it in the
 * file DIR/kernel, read here as hostile input (anyone who may write the
 * session may write it): the tracefs path must be a tracefs mount, the
 * instance's name must begin with "fdr-" and hold no '/'.
 *
 * The top instance's trace and trace_pipe (and per_cpu/cpuN/...) of such a
 * session merge fdr's lines with the kernel instance's own text (its trace or
 * trace_pipe, the kernel's formatting of every event) by the timestamp each
 * line shows: fdr's header, one line naming the kernel instance, then every
 * record line, the kernel's preceded by "K ", fdr's by two spaces. Both sides
 * come in time order, so this is a two-way merge of streams: of the two head
 * lines the earlier goes out, fdr's first at an equal time; a line without a
 * timestamp (a stack trace's "=>", a "[LOST N EVENTS]") takes the time of the
 * line before it on its side, so it stays with its record.
 *
 * trace reads both non-consuming: the kernel's trace whole at the first read
 * (then closed: while it is open the kernel pauses the instance, its option
 * pause-on-trace), fdr's records a few at a time. trace_pipe consumes both
 * (the kernel's trace_pipe opened O_NONBLOCK); a pipe never ends, so a head
 * line waits for the other side at most KM_HOLD_NS (200 ms) before it goes out
 * alone, as fdr pipe always did. The output is then in time order unless one
 * side delivers a record more than 200 ms after the other delivered a later
 * one.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

#include "ctl-local.h"

#define KM_TRACEFS_MAGIC 0x74726163u
#define KM_HOLD_NS (200ull * 1000 * 1000)

/** fdr_kernel_link_read - the link of session directory @dir to a kernel instance
 *
 * Returns 0, -ENOENT (no link), -EUCLEAN (not a link fdr wrote: a field missing
 * or out of bounds, an instance not named fdr-*, a tracefs path that is not a
 * tracefs mount) or the negative errno of the open.
 */
int fdr_kernel_link_read(const char *dir, struct fdr_kernel_link *l)
{
	char path[4200], line[4200];
	struct statfs sf;
	FILE *f;
	int have = 0;

	memset(l, 0, sizeof(*l));
	if ((size_t)snprintf(path, sizeof(path), "%s/kernel", dir) >= sizeof(path))
		return -ENAMETOOLONG;
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char *v;

		line[strcspn(line, "\n")] = 0;
		if (!strncmp(line, "tracefs ", 8) && line[8] == '/' &&
		    strlen(line + 8) < sizeof(l->tracefs)) {
			strcpy(l->tracefs, line + 8);
			have |= 1;
		} else if (!strncmp(line, "instance ", 9)) {
			v = line + 9;
			if (strncmp(v, "fdr-", 4) || strchr(v, '/') || strlen(v) > 64 ||
			    !strcmp(v + 4, "") || strlen(v) >= sizeof(l->instance))
				continue;
			strcpy(l->instance, v);
			have |= 2;
		} else if (!strncmp(line, "clock ", 6) && strlen(line + 6) < sizeof(l->clock)) {
			strcpy(l->clock, line + 6);
			have |= 4;
		}
	}
	fclose(f);
	if (have != 7 || statfs(l->tracefs, &sf) != 0 || (uint32_t)sf.f_type != KM_TRACEFS_MAGIC)
		return -EUCLEAN;
	return 0;
}

/**
 * fdr_kernel_line_ts - the timestamp of a trace line "COMM-PID [CPU] FLAGS
 * SEC.USEC: ..." (µs) or "... COUNT: ..." (a raw clock's count) into *@key
 * Returns 0, or -1 when the line has none.
 */
int fdr_kernel_line_ts(const char *p, size_t len, uint64_t *key)
{
	const char *e = p + len, *q;

	for (q = p; q + 5 < e; q++) {
		const char *r = q + 1;
		uint64_t sec = 0, frac = 0;
		int nd = 0, nf = 0;

		if (*q != '[')
			continue;
		while (r < e && *r >= '0' && *r <= '9')
			r++;
		if (r == q + 1 || r + 1 >= e || r[0] != ']' || r[1] != ' ')
			continue;
		r += 2;
		while (r < e && *r == ' ')
			r++;
		while (r < e && *r != ' ') /* the flags */
			r++;
		while (r < e && *r == ' ')
			r++;
		for (; r < e && *r >= '0' && *r <= '9'; r++, nd++)
			sec = sec * 10 + (uint64_t)(*r - '0');
		if (r < e && *r == '.')
			for (r++; r < e && *r >= '0' && *r <= '9'; r++, nf++)
				frac = frac * 10 + (uint64_t)(*r - '0');
		if (!nd || nd > 19 || r >= e || *r != ':' || (nf && nf != 6))
			return -1;
		*key = nf ? sec * 1000000ull + frac : sec;
		return 0;
	}
	return -1;
}

/*
 * One side of the merge: text read but not sent (from off), and when each part
 * of it was read: a FIFO of (end, time) in the side's byte count since the open
 * (in = bytes appended, sent = bytes sent), for a pipe's hold.
 */
struct km_side {
	struct fdr_buf b;
	size_t off;
	int eof;
	uint64_t last; /* the key of the last line with one */
	uint64_t in, sent;
	struct km_chunk {
		uint64_t end, t;
	} * q;
	size_t qh, qn, qcap; /* the FIFO: head index, entries, room */
};

struct fdr_kmerge {
	struct fdr_kernel_link l;
	int fd; /* the kernel's trace or trace_pipe */
	int consuming;
	struct km_side k, f;
};

static uint64_t km_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* trace: the kernel's whole file into m->k.b, m->k.eof set. 0 or a negative errno. */
static int km_read_kernel_all(struct fdr_kmerge *m)
{
	char buf[65536];
	ssize_t r;
	int ret;

	for (;;) {
		r = read(m->fd, buf, sizeof(buf));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			break;
		ret = fdr_buf_add(&m->k.b, buf, (size_t)r);
		if (ret)
			return ret;
	}
	m->k.eof = 1;
	if (m->k.b.len && m->k.b.data[m->k.b.len - 1] != '\n')
		return fdr_buf_add(&m->k.b, "\n", 1);
	return 0;
}

/*
 * fdr_kmerge_open - the merge for a file of session @s's top instance (CPU @cpu,
 * -1: all), consuming (trace_pipe) or not (trace). *@out is NULL when the
 * session has no link. When the link is there but the kernel's file cannot be
 * opened, 0 with *@out NULL and @why (of @why_len bytes) saying so: the file
 * serves fdr's lines alone, with that line in its header.
 */
int fdr_kmerge_open(struct fdr_session *s, int cpu, int consuming, struct fdr_kmerge **out,
		    char *why, size_t why_len)
{
	struct fdr_kmerge *m;
	char path[4300];
	int ret;

	*out = NULL;
	why[0] = 0;
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	ret = fdr_kernel_link_read(fdr_session_path(s), &m->l);
	if (ret) {
		if (ret != -ENOENT)
			snprintf(why, why_len,
				 "# kernel: %s/kernel is not a link to a kernel instance fdr made: "
				 "fdr's lines alone\n",
				 fdr_session_path(s));
		free(m);
		return 0;
	}
	if (cpu >= 0)
		snprintf(path, sizeof(path), "%s/instances/%s/per_cpu/cpu%d/%s", m->l.tracefs,
			 m->l.instance, cpu, consuming ? "trace_pipe" : "trace");
	else
		snprintf(path, sizeof(path), "%s/instances/%s/%s", m->l.tracefs, m->l.instance,
			 consuming ? "trace_pipe" : "trace");
	m->fd = open(path, O_RDONLY | O_CLOEXEC | (consuming ? O_NONBLOCK : 0));
	if (m->fd < 0) {
		snprintf(why, why_len, "# kernel: %s: %s: fdr's lines alone\n", path,
			 strerror(errno));
		free(m);
		return 0;
	}
	m->consuming = consuming;
	if (!consuming) {
		/*
		 * trace: read whole now, and closed. While the file is open the kernel
		 * does not record into the instance (its option pause-on-trace, on by
		 * default): a reader that takes its time (less, a FUSE mount's partial
		 * reads) would leave a gap in the kernel's records.
		 */
		ret = km_read_kernel_all(m);
		close(m->fd);
		m->fd = -1;
		if (ret) {
			snprintf(why, why_len, "# kernel: %s: %s: fdr's lines alone\n", path,
				 strerror(-ret));
			fdr_kmerge_close(m);
			return 0;
		}
	}
	*out = m;
	return 0;
}

void fdr_kmerge_close(struct fdr_kmerge *m)
{
	if (!m)
		return;
	if (m->fd >= 0)
		close(m->fd);
	fdr_buf_free(&m->k.b);
	fdr_buf_free(&m->f.b);
	free(m->k.q);
	free(m->f.q);
	free(m);
}

/* The line naming the kernel instance, after fdr's header. */
int fdr_kmerge_header(const struct fdr_kmerge *m, struct fdr_buf *out)
{
	return fdr_buf_printf(out,
			      "# kernel: %s/instances/%s (trace_clock %s); its lines begin with "
			      "'K '\n#\n",
			      m->l.tracefs, m->l.instance, m->l.clock);
}

/* fdr's side: text of whole lines (records) to merge, appended by the caller */
struct fdr_buf *fdr_kmerge_fdr_buf(struct fdr_kmerge *m)
{
	return &m->f.b;
}

void fdr_kmerge_fdr_end(struct fdr_kmerge *m)
{
	m->f.eof = 1;
}

/* The length of @s's head line (with its '\n'), 0 when it has no whole line. */
static size_t km_head(const struct km_side *s)
{
	const char *p = s->b.data + s->off, *nl;

	if (s->off >= s->b.len)
		return 0;
	nl = memchr(p, '\n', s->b.len - s->off);
	if (nl)
		return (size_t)(nl - p) + 1;
	return 0;
}

/* What was appended to @s since the last call was read now (a pipe's hold). */
static int km_mark(struct km_side *s, uint64_t now)
{
	uint64_t total = s->sent + (s->b.len - s->off);

	if (total <= s->in)
		return 0;
	if (s->qn == s->qcap) {
		size_t nc = s->qcap ? s->qcap * 2 : 16, i;
		struct km_chunk *nq = malloc(nc * sizeof(*nq));

		if (!nq)
			return -ENOMEM;
		for (i = 0; i < s->qn; i++)
			nq[i] = s->q[(s->qh + i) % s->qcap];
		free(s->q);
		s->q = nq;
		s->qh = 0;
		s->qcap = nc;
	}
	s->q[(s->qh + s->qn) % s->qcap] = (struct km_chunk){ total, now };
	s->qn++;
	s->in = total;
	return 0;
}

/* When @s's head line was read (the oldest chunk not all sent). */
static uint64_t km_head_time(struct km_side *s)
{
	while (s->qn && s->q[s->qh].end <= s->sent) {
		s->qh = (s->qh + 1) % s->qcap;
		s->qn--;
	}
	return s->qn ? s->q[s->qh].t : 0;
}

/*
 * fdr_ctl_compact - drop what was served (@b's first *@off bytes): all of it at
 * once when everything was, else moved down once more than 64 KiB were (the
 * tree's files and each side of the merge)
 */
void fdr_ctl_compact(struct fdr_buf *b, size_t *off)
{
	if (*off && *off == b->len) {
		b->len = 0;
		*off = 0;
	} else if (*off > 65536) {
		memmove(b->data, b->data + *off, b->len - *off);
		b->len -= *off;
		*off = 0;
	}
}

static void km_compact(struct km_side *s)
{
	fdr_ctl_compact(&s->b, &s->off);
}

/* A pipe: what the kernel's trace_pipe has now, read once without blocking. 0 or -errno. */
static int km_read_kernel(struct fdr_kmerge *m)
{
	char buf[65536];
	ssize_t r;

	km_compact(&m->k);
	r = read(m->fd, buf, sizeof(buf));
	if (r < 0)
		return errno == EAGAIN || errno == EINTR ? 0 : -errno;
	return r ? fdr_buf_add(&m->k.b, buf, (size_t)r) : 0;
}

/* The key of @s's head line of @len bytes (a line without one: the line before's). */
static uint64_t km_key(struct km_side *s, size_t len)
{
	uint64_t key;

	if (fdr_kernel_line_ts(s->b.data + s->off, len, &key) == 0)
		return key;
	return s->last;
}

/* Send @s's head line of @len bytes into @out, marked. */
static int km_send(struct km_side *s, size_t len, const char *mark, struct fdr_buf *out)
{
	uint64_t key;
	int ret;

	if (fdr_kernel_line_ts(s->b.data + s->off, len, &key) == 0)
		s->last = key;
	ret = fdr_buf_add(out, mark, 2);
	if (!ret)
		ret = fdr_buf_add(out, s->b.data + s->off, len);
	s->off += len;
	s->sent += len;
	km_compact(s);
	return ret;
}

/*
 * fdr_kmerge_step - move merged lines into @out until it holds @want bytes or
 * nothing more can go now. fdr's side is what the caller put into
 * fdr_kmerge_fdr_buf() (whole lines), or ended (fdr_kmerge_fdr_end()); the
 * kernel's is read here. @flush: a pipe's reader stops, every line held goes.
 * Returns 1 when a line was moved, 0 when none could be (trace: both sides
 * ended; pipe: each line waits for the other side, or there is none), or a
 * negative errno. *@need_fdr is set when fdr's side has no whole line and has
 * not ended: the caller formats more records (trace: it must, then calls
 * again; pipe: if it has any).
 */
int fdr_kmerge_step(struct fdr_kmerge *m, struct fdr_buf *out, size_t want, int flush,
		    int *need_fdr)
{
	uint64_t now = m->consuming ? km_now() : 0;
	int moved = 0, ret;

	*need_fdr = 0;
	if (m->consuming && (km_mark(&m->f, now) || km_mark(&m->k, now)))
		return -ENOMEM;
	while (out->len < want) {
		size_t fl = km_head(&m->f), kl = km_head(&m->k);
		struct km_side *s;

		if (!kl && !m->k.eof) {
			ret = km_read_kernel(m);
			if (ret)
				return ret;
			if (m->consuming && km_mark(&m->k, now))
				return -ENOMEM;
			kl = km_head(&m->k);
		}
		/* the kernel's own header lines: fdr's and the link's line stand for them */
		if (kl && m->k.b.data[m->k.off] == '#') {
			m->k.off += kl;
			m->k.sent += kl;
			continue;
		}
		if (!fl && !m->f.eof) {
			*need_fdr = 1;
			if (!m->consuming)
				break; /* trace: fdr's next record decides */
		}
		if (!fl && !kl)
			break;
		if (fl && kl) {
			if (km_key(&m->f, fl) <= km_key(&m->k, kl))
				ret = km_send(&m->f, fl, "  ", out);
			else
				ret = km_send(&m->k, kl, "K ", out);
		} else {
			/* one side alone: at the other's end, or (a pipe) after the hold */
			s = fl ? &m->f : &m->k;
			if (!(fl ? m->k.eof : m->f.eof) && !flush &&
			    now - km_head_time(s) < KM_HOLD_NS)
				break;
			ret = km_send(s, fl ? fl : kl, fl ? "  " : "K ", out);
		}
		if (ret)
			return ret;
		moved = 1;
	}
	return moved;
}

/*
 * A pipe's reader stops: what the kernel's trace_pipe has now is read, once,
 * then neither side takes more; later steps send every line held, in order.
 * Returns 0 or a negative errno.
 */
int fdr_kmerge_end(struct fdr_kmerge *m)
{
	int ret = 0;

	if (!m->k.eof) {
		ret = km_read_kernel(m);
		m->k.eof = 1;
		if (!ret && m->k.b.len > m->k.off && m->k.b.data[m->k.b.len - 1] != '\n')
			ret = fdr_buf_add(&m->k.b, "\n", 1);
	}
	m->f.eof = 1;
	return ret;
}

/* Something is held that a later step may send (a pipe's poll). */
int fdr_kmerge_pending(const struct fdr_kmerge *m)
{
	return km_head(&m->k) || km_head(&m->f);
}

/* trace opened with O_TRUNC: the kernel instance's buffer is emptied too. */
int fdr_kmerge_clear(struct fdr_session *s, int cpu)
{
	struct fdr_kernel_link l;
	char path[4300];
	int fd;

	if (fdr_kernel_link_read(fdr_session_path(s), &l))
		return 0;
	if (cpu >= 0)
		snprintf(path, sizeof(path), "%s/instances/%s/per_cpu/cpu%d/trace", l.tracefs,
			 l.instance, cpu);
	else
		snprintf(path, sizeof(path), "%s/instances/%s/trace", l.tracefs, l.instance);
	fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}
