/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * readout.h - what the selfcheck-style tests (stress/snapshot.c,
 * stress/accounting.c, crash/kill.c) share on top of selfcheck.h: reading a buffer and checking each writer's
 * sequence numbers against the losses the reader counted. Include it in exactly
 * one file of a binary (it includes selfcheck.h, which defines stress:rec).
 *
 * A "readout" is what one read of a buffer (live or snapshot) returned, per
 * writer id: first and last seq, how many, and per CPU the records lost_before
 * counted. A gap in a writer's sequence is fine only if the reader counted at
 * least that many records lost on the writer's CPU in between: records are
 * never torn and never silently missing.
 */
#ifndef FDR_TEST_READOUT_H
#define FDR_TEST_READOUT_H

#include "selfcheck.h"

#define FL_MAX_W 4096 /* writer ids 0 .. FL_MAX_W-1 */
#define FL_CPUS 256
#define FL_NONE INT64_MIN

static uint64_t fl_seed;
static uint32_t fl_ev_id;
static int fl_shown;
/* if set, the CPU each writer id is pinned to (-1: not pinned) */
static volatile int *fl_wcpu;
/* records of other events (markers) are counted in ->other instead of being bad */
static int fl_allow_other;

struct fl_wseen {
	int64_t first, last; /* seq, FL_NONE if none */
	uint64_t lost_at_first; /* CPU losses counted up to and including the first */
	uint64_t lost_at_last; /* ... the last */
	uint64_t n;
};

struct fl_readout {
	struct fl_wseen w[FL_MAX_W];
	uint64_t lost[FL_CPUS]; /* per CPU, sum of lost_before */
	uint64_t nread[FL_CPUS];
	uint64_t records, bad, disorder, gaps, lost_total, other;
};

static SC_UNUSED void fl_readout_init(struct fl_readout *ro)
{
	int i;

	memset(ro, 0, sizeof(*ro));
	for (i = 0; i < FL_MAX_W; i++)
		ro->w[i].first = ro->w[i].last = FL_NONE;
}

static SC_UNUSED struct fl_readout *fl_readout_new(void)
{
	struct fl_readout *ro = malloc(sizeof(*ro));

	if (!ro) {
		perror("malloc");
		exit(2);
	}
	fl_readout_init(ro);
	return ro;
}

/*
 * Check one record and account it; @what names the read in messages. Returns the
 * writer id, or -1 for a bad record (reported).
 */
static SC_UNUSED int fl_take(struct fdr_session *s, struct fl_readout *ro,
			     const struct fdr_record *rec, const char *what)
{
	char why[256], msg[400];
	uint32_t wid, cpu = rec->cpu < FL_CPUS ? rec->cpu : 0;
	uint64_t seq;
	struct fl_wseen *w;

	ro->records++;
	ro->lost[cpu] += rec->lost_before;
	ro->lost_total += rec->lost_before;
	if (fl_allow_other && rec->len >= sizeof(struct fdr_common) && fl_ev_id &&
	    ((const struct fdr_common *)(const void *)rec->payload)->type != fl_ev_id) {
		ro->other++;
		return -1;
	}
	if (sc_check(s, &fl_ev_id, fl_seed, rec, &wid, &seq, why, sizeof(why))) {
		ro->bad++;
		snprintf(msg, sizeof(msg), "%s: %s", what, why);
		sc_report(&fl_shown, "FAIL", msg);
		return -1;
	}
	if (wid >= FL_MAX_W) {
		ro->bad++;
		snprintf(msg, sizeof(msg), "%s: unknown writer %#x", what, wid);
		sc_report(&fl_shown, "FAIL", msg);
		return -1;
	}
	if (fl_wcpu && fl_wcpu[wid] >= 0 && rec->cpu != (uint32_t)fl_wcpu[wid]) {
		ro->bad++;
		snprintf(msg, sizeof(msg), "%s: writer %u pinned to CPU %d, record on CPU %u", what,
			 wid, fl_wcpu[wid], rec->cpu);
		sc_report(&fl_shown, "FAIL", msg);
		return -1;
	}
	ro->nread[cpu]++;
	w = &ro->w[wid];
	if (w->last != FL_NONE) {
		if ((int64_t)seq <= w->last) {
			ro->disorder++;
			snprintf(msg, sizeof(msg), "%s: writer %u: seq %llu after %lld", what, wid,
				 (unsigned long long)seq, (long long)w->last);
			sc_report(&fl_shown, "FAIL", msg);
			return -1;
		}
		if ((uint64_t)((int64_t)seq - w->last - 1) > ro->lost[cpu] - w->lost_at_last) {
			ro->gaps++;
			snprintf(
				msg, sizeof(msg),
				"%s: writer %u: seq %lld then %llu, but only %llu records counted lost on CPU %u",
				what, wid, (long long)w->last, (unsigned long long)seq,
				(unsigned long long)(ro->lost[cpu] - w->lost_at_last), cpu);
			sc_report(&fl_shown, "FAIL", msg);
		}
	} else {
		w->first = (int64_t)seq;
		w->lost_at_first = ro->lost[cpu];
	}
	w->last = (int64_t)seq;
	w->lost_at_last = ro->lost[cpu];
	w->n++;
	return (int)wid;
}

/* Read all there is now of instance 0 (@flags: 0 or FDR_READ_SNAPSHOT) into @ro. */
static SC_UNUSED int fl_read(struct fdr_session *s, unsigned flags, struct fl_readout *ro,
			     const char *what)
{
	struct fdr_reader *r;
	struct fdr_record rec;
	int ret;

	fl_readout_init(ro);
	ret = fdr_reader_open(s, 0, -1, flags, &r);
	if (ret)
		return ret;
	while ((ret = fdr_reader_next(r, &rec)) > 0)
		fl_take(s, ro, &rec, what);
	fdr_reader_close(r);
	return ret;
}

/*
 * Read the live buffer of instance 0 from its start until each of the @nr writer
 * ids in @wids was seen once, at most @max records or @ms milliseconds (writers
 * at full speed would keep a reader busy forever).
 */
static SC_UNUSED int fl_read_heads(struct fdr_session *s, struct fl_readout *ro, const int *wids,
				   int nr, uint64_t max, int ms)
{
	struct fdr_reader *r;
	struct fdr_record rec;
	uint64_t end = sc_now_ns() + (uint64_t)ms * 1000000ull, n = 0;
	int seen = 0, ret, i;

	fl_readout_init(ro);
	ret = fdr_reader_open(s, 0, -1, 0, &r);
	if (ret)
		return ret;
	while (seen < nr && n < max && sc_now_ns() < end) {
		int wid;

		ret = fdr_reader_next(r, &rec);
		if (ret < 0)
			break;
		if (ret == 0) {
			sc_sleep_us(100);
			continue;
		}
		n++;
		wid = fl_take(s, ro, &rec, "live");
		if (wid < 0 || ro->w[wid].n != 1)
			continue;
		for (i = 0; i < nr; i++)
			if (wids[i] == wid)
				seen++;
	}
	fdr_reader_close(r);
	return ret < 0 ? ret : 0;
}

/* Does @ro hold nothing bad: no torn record, no disorder, no uncounted gap? */
static SC_UNUSED int fl_clean(const struct fl_readout *ro, const char *what)
{
	return sc_ok(ro->bad == 0 && ro->disorder == 0 && ro->gaps == 0,
		     "%s: %llu bad records, %llu out of order, %llu uncounted gaps", what,
		     (unsigned long long)ro->bad, (unsigned long long)ro->disorder,
		     (unsigned long long)ro->gaps);
}

/* Back the snapshot buffers of the top instance. */
static SC_UNUSED int fl_snapshot_alloc(struct fdr_session *s)
{
	int ret = fdr_session_lock(s);

	if (ret)
		return ret;
	ret = fdr_session_snapshot_alloc(s, 0, 1);
	fdr_session_unlock(s);
	return ret;
}

/* Count the (non-overlapping) occurrences of @needle in @hay. */
static SC_UNUSED size_t fl_count(const char *hay, const char *needle)
{
	size_t n = 0, len = strlen(needle);

	while (len && (hay = strstr(hay, needle))) {
		n++;
		hay += len;
	}
	return n;
}

/* One write to a control file, errors ignored (for processes about to be killed). */
static SC_UNUSED ssize_t fl_write_quiet(struct fdr_session *s, const char *path, int flags,
					const char *text)
{
	struct fdr_file *f;
	ssize_t ret = fdr_file_open(s, path, O_WRONLY | flags, &f);

	if (ret)
		return ret;
	ret = fdr_file_write(f, text, strlen(text));
	fdr_file_close(f);
	return ret;
}

/* Read a whole control file (non-blocking); a new string to free(), or NULL with *err. */
static SC_UNUSED char *fl_cat(struct fdr_session *s, const char *path, int *err)
{
	struct fdr_file *f;
	size_t cap = 1 << 16, n = 0;
	char *buf;
	ssize_t r;

	*err = fdr_file_open(s, path, O_RDONLY | O_NONBLOCK, &f);
	if (*err)
		return NULL;
	buf = malloc(cap + 1);
	while (buf) {
		if (cap - n < 4096) {
			char *nb = realloc(buf, cap * 2 + 1);

			if (!nb) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = nb;
			cap *= 2;
		}
		r = fdr_file_read(f, buf + n, cap - n);
		if (r <= 0) {
			if (r < 0 && r != -EAGAIN)
				*err = (int)r;
			break;
		}
		n += (size_t)r;
	}
	fdr_file_close(f);
	if (!buf) {
		*err = -ENOMEM;
		return NULL;
	}
	buf[n] = 0;
	if (*err) {
		free(buf);
		return NULL;
	}
	return buf;
}

#endif /* FDR_TEST_READOUT_H */
