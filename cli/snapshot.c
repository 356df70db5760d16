// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * snapshot.c - fdr snapshot: take, show, clear, alloc and free an instance's
 * snapshot through its 'snapshot' file, and save DIR, which writes every
 * snapshot taken from now on, by anyone, to its own file (text, trace.dat, CTF
 * or Perfetto); save --relayd URL sends each to LTTng's relay daemon instead
 * (docs/design/relay.md), keeping in DIR the ones it could not send.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fdr/fdr-ctl.h"
#include "fdr/fdr-export.h"
#include "fdr/fdr-read.h"
#include "fdr/fdr-relay.h"
#include "fdr/fdr-trace.h"
#include "fdr/fdr-tracedat.h"
#include "cli.h"
/*
 * fdr snapshot save DIR: write every snapshot taken from now on, by anyone, to
 * its own file in DIR. While we run, the instance refuses a new snapshot until
 * the previous one is written (see fdr_ring_swap()), so each file is whole.
 */
/* What fdr snapshot save writes each snapshot as (--format). */
enum save_format { SAVE_TEXT, SAVE_DAT, SAVE_CTF, SAVE_PERFETTO };

static const struct {
	const char *name, *suffix;
} save_formats[] = {
	[SAVE_TEXT] = { "text", ".txt" },
	[SAVE_DAT] = { "dat", ".dat" },
	[SAVE_CTF] = { "ctf", ".ctf" },
	[SAVE_PERFETTO] = { "perfetto", ".json" },
};

/*
 * Write the snapshot of instance @inst as @fmt into @file, whole or not at all
 * (through @tmp, renamed; CTF and Perfetto exports do that themselves). Returns 0,
 * or a positive errno with *@what saying whether reading or writing failed.
 */
static int save_one(struct fdr_session *s, uint32_t inst, const char *path, enum save_format fmt,
		    const char *file, const char *tmp, const char **what)
{
	struct fdr_export_stats st = { 0 };
	struct fdr_buf b = { 0 }, err = { 0 };
	struct fdr_tracedat_cpu *cpus;
	struct fdr_trace *t = NULL;
	uint32_t nr = 0;
	FILE *out;
	int ret = 0;

	*what = "write";
	switch (fmt) {
	case SAVE_DAT:
		cpus = calloc(FDR_MAX_CPUS, sizeof(*cpus));
		if (!cpus)
			return ENOMEM;
		ret = -fdr_tracedat_extract(s, inst, FDR_READ_SNAPSHOT, tmp, cpus, FDR_MAX_CPUS,
					    &nr);
		free(cpus);
		if (ret == EUCLEAN)
			*what = "read";
		if (!ret && rename(tmp, file) != 0)
			ret = errno;
		if (ret)
			unlink(tmp);
		return ret;
	case SAVE_CTF:
	case SAVE_PERFETTO:
		ret = -fdr_trace_open_session(s, inst, FDR_READ_SNAPSHOT, &t);
		if (ret) {
			*what = "read";
			return ret;
		}
		ret = -(fmt == SAVE_CTF ? fdr_export_ctf(t, file, &st, &err) :
					  fdr_export_perfetto(t, file, &st, &err));
		if (ret && err.len)
			fprintf(stderr, "fdr snapshot: %.*s%s", (int)err.len, err.data,
				err.data[err.len - 1] == '\n' ? "" : "\n");
		fdr_trace_close(t);
		fdr_buf_free(&err);
		return ret;
	default:
		break;
	}
	ret = -slurp(s, path, &b);
	if (ret) {
		*what = "read";
		fdr_buf_free(&b);
		return ret;
	}
	out = fopen(tmp, "we");
	if (!out) {
		ret = errno;
	} else {
		errno = 0;
		if (fwrite(b.data, 1, b.len, out) != b.len)
			ret = errno ? errno : EIO;
		if (fclose(out) != 0 && !ret)
			ret = errno;
	}
	if (!ret && rename(tmp, file) != 0)
		ret = errno;
	fdr_buf_free(&b);
	if (ret)
		unlink(tmp); /* a full disk leaves no partial file behind */
	return ret;
}

/*
 * A session linked to a kernel instance (fdr start -k): each snapshot of its top
 * instance freezes the kernel instance too, as soon as the saver sees the
 * snapshot (woken by the swap: fdr_saver_wait()), and the file holds both
 * (docs/design/kernel-timeline.md, Snapshots of both).
 */
struct ksave {
	int linked;
	struct fdr_kernel_link l;
	const char *dir; /* the session directory */
	uint64_t *lag_ns; /* per snapshot: from fdr's swap to the kernel's freeze */
	size_t n, cap;
	/* the snapshot being saved: ks_freeze()'s outcome */
	int freeze_err, was_on;
	uint64_t snap_ns, t0;
};

/* fdr start -k: the session's kernel instance is saved with each snapshot of the top instance */
static void ks_init(struct ksave *ks, struct fdr_session *s, uint32_t inst)
{
	int ret;

	memset(ks, 0, sizeof(*ks));
	ks->dir = fdr_session_path(s);
	if (inst != 0)
		return;
	ret = ktrace_read_link(ks->dir, &ks->l);
	ks->linked = ret == 0;
	if (ret && ret != -ENOENT)
		fprintf(stderr,
			"fdr snapshot: %s/kernel: not a link to a kernel instance fdr made: "
			"snapshots hold fdr's records alone\n",
			ks->dir);
}

/* The median of the freezes' lags, when it stops; the table freed. */
static void ks_done(struct ksave *ks)
{
	size_t i, j;

	if (ks->n) {
		/* a few thousand at most: an insertion sort for the median */
		for (i = 1; i < ks->n; i++)
			for (j = i; j > 0 && ks->lag_ns[j - 1] > ks->lag_ns[j]; j--) {
				uint64_t x = ks->lag_ns[j];

				ks->lag_ns[j] = ks->lag_ns[j - 1];
				ks->lag_ns[j - 1] = x;
			}
		fprintf(stderr,
			"fdr snapshot: kernel instance %s stopped %.1f us after fdr's snapshot "
			"(median of %zu; %.1f to %.1f us)\n",
			ks->l.instance, (double)ks->lag_ns[ks->n / 2] / 1e3, ks->n,
			(double)ks->lag_ns[0] / 1e3, (double)ks->lag_ns[ks->n - 1] / 1e3);
	}
	free(ks->lag_ns);
	ks->lag_ns = NULL;
}

/* Stop the kernel instance: the first thing the saver does when a snapshot waits. */
static void ks_freeze(struct fdr_saver *sv, struct ksave *ks, struct fdr_session *s)
{
	ks->snap_ns = __atomic_load_n(&sv->hdr->snap_lock_ns, __ATOMIC_RELAXED);
	ks->freeze_err = ktrace_snap_freeze(&ks->l, &ks->was_on);
	ks->t0 = fdr_session_lease_ns(s);
	if (!ks->freeze_err && ks->t0 > ks->snap_ns && ks->n < 1000000) {
		if (ks->n == ks->cap) {
			size_t nc = ks->cap ? ks->cap * 2 : 64;
			uint64_t *v = realloc(ks->lag_ns, nc * sizeof(*v));

			if (v) {
				ks->lag_ns = v;
				ks->cap = nc;
			}
		}
		if (ks->n < ks->cap)
			ks->lag_ns[ks->n++] = ks->t0 - ks->snap_ns;
	}
}

/*
 * fdr's snapshot of instance @inst and the frozen kernel instance's pages
 * (@k, ktrace_snap_pages()) as one trace.dat at @path: fdr's CPUs, then the
 * kernel's as a second buffer, fdr's ids moved above the kernel's (as fdr
 * record -k writes it). Returns 0 or a negative errno; nothing left at @path
 * on an error.
 */
static int save_both_dat(struct fdr_session *s, uint32_t inst, struct ktrace_rec *k,
			 const char *path)
{
	enum { BATCH = 64 };
	int nr = fdr_ring_nr_cpus(s, inst), ps = fdr_tracedat_page_size(s, inst), ret, n;
	struct fdr_tracedat_live *live = NULL;
	struct fdr_tracedat_cpu *tc = NULL;
	struct fdr_tracedat_kbuf kb;
	unsigned char *buf = NULL;
	uint32_t cpu, shift = 0;

	if (nr <= 0 || ps < 0)
		return nr <= 0 ? (nr ? nr : -ENODEV) : ps;
	ret = fdr_tracedat_live_create(path, s, inst, (uint32_t)ps, (uint32_t)nr, &live);
	if (ret)
		return ret;
	if (k->max_id >= FDR_EVENT_ID_FIRST_USER)
		shift = k->max_id + 1 - FDR_EVENT_ID_FIRST_USER;
	ret = fdr_tracedat_live_set_id_shift(live, shift);
	tc = calloc((size_t)nr, sizeof(*tc));
	buf = malloc((size_t)BATCH * (size_t)ps);
	if (!ret && (!tc || !buf))
		ret = -ENOMEM;
	for (cpu = 0; cpu < (uint32_t)nr && !ret; cpu++) {
		struct fdr_reader *r = NULL;
		struct fdr_cpu_stats cs;

		tc[cpu].fd = -1;
		ret = fdr_reader_open(s, inst, (int)cpu, FDR_READ_SNAPSHOT, &r);
		while (!ret) {
			struct fdr_raw_stats st = { 0 };

			n = fdr_reader_raw_pages(r, buf, (uint32_t)ps, BATCH, &st);
			if (n <= 0) {
				ret = n;
				break;
			}
			rec_shift_ids(buf, (size_t)ps, (size_t)n, shift);
			ret = fdr_tracedat_live_append(live, cpu, buf, (size_t)n * (size_t)ps);
			tc[cpu].records += st.records;
			tc[cpu].lost += st.lost;
		}
		if (!ret && fdr_ring_stats_ex(s, inst, cpu, FDR_READ_SNAPSHOT, &cs) == 0)
			tc[cpu].lost += cs.dropped;
		fdr_reader_close(r);
	}
	if (!ret)
		ret = ktrace_rec_kbuf(k, &kb) ? -EIO : 0;
	if (!ret)
		ret = fdr_tracedat_live_finish_kernel(live, tc, &kb);
	fdr_tracedat_live_close(live, ret != 0);
	free(tc);
	free(buf);
	return ret;
}

/*
 * After ks_freeze(): the kernel instance's records taken out (@kt: its trace
 * text, then emptied; else @k: its pages, spooled next to @near), tracing_on
 * back as it was, and the line saying when it stopped and for how long.
 * Returns 0, or 1 when this snapshot must hold fdr's records alone (said).
 */
static int ks_take(struct ksave *ks, struct fdr_session *s, struct fdr_buf *kt,
		   struct ktrace_rec *k, const char *near)
{
	uint64_t t1, lag = ks->t0 > ks->snap_ns ? ks->t0 - ks->snap_ns : 0;
	int ret, kret;

	if (ks->freeze_err) {
		fprintf(stderr,
			"fdr snapshot: kernel instance %s: cannot stop it (%s): this snapshot "
			"holds fdr's records alone\n",
			ks->l.instance, strerror(-ks->freeze_err));
		return 1;
	}
	if (kt)
		kret = ktrace_snap_text(&ks->l, kt) ? 1 : 0;
	else
		kret = ktrace_rec_begin(ks->dir, k) ?: ktrace_snap_pages(k, near);
	ret = ktrace_snap_resume(&ks->l, ks->was_on);
	t1 = fdr_session_lease_ns(s);
	if (ret)
		fprintf(stderr, "fdr snapshot: kernel instance %s: cannot start it again: %s\n",
			ks->l.instance, strerror(-ret));
	fprintf(stderr,
		"fdr snapshot: kernel instance %s stopped %.1f us after fdr's snapshot, for %.2f "
		"ms while its records were taken\n",
		ks->l.instance, (double)lag / 1e3, (double)(t1 - ks->t0) / 1e6);
	if (kret) {
		fprintf(stderr,
			"fdr snapshot: kernel instance %s: cannot take its records: this snapshot "
			"holds fdr's records alone\n",
			ks->l.instance);
		if (kt)
			fdr_buf_free(kt);
		else
			ktrace_rec_free(k);
		return 1;
	}
	return 0;
}

/*
 * save_one() of a snapshot of a linked session's top instance: the kernel
 * instance frozen first (ks_freeze()), its records taken out (ks_take()), then
 * the file written with both. A kernel instance that cannot be frozen or read
 * leaves the snapshot with fdr's records alone, said on stderr.
 */
static int save_one_both(struct ksave *ks, struct fdr_session *s, uint32_t inst, const char *path,
			 enum save_format fmt, const char *file, const char *tmp, const char **what)
{
	struct fdr_buf a = { 0 }, kt = { 0 }, err = { 0 };
	char dat[4300];
	struct ktrace_rec k;
	int ret;
	FILE *out;

	memset(&k, 0, sizeof(k));
	if (ks_take(ks, s, fmt == SAVE_TEXT ? &kt : NULL, &k, file))
		return save_one(s, inst, path, fmt, file, tmp, what);
	*what = "write";
	if (fmt == SAVE_TEXT) {
		ret = -slurp(s, path, &a);
		if (ret) {
			*what = "read";
		} else if (!(out = fopen(tmp, "we"))) {
			ret = errno;
		} else {
			errno = 0;
			ret = -ktrace_snap_merge(&a, &kt, &ks->l, out);
			if (ret == EIO)
				ret = errno ? errno : EIO;
			if (fclose(out) != 0 && !ret)
				ret = errno;
			if (!ret && rename(tmp, file) != 0)
				ret = errno;
			if (ret)
				unlink(tmp);
		}
		fdr_buf_free(&a);
		fdr_buf_free(&kt);
		return ret;
	}
	/* a trace.dat with both buffers; CTF and Perfetto are exported from it */
	if (fmt == SAVE_DAT)
		snprintf(dat, sizeof(dat), "%s", tmp);
	else
		snprintf(dat, sizeof(dat), "%s.dat", tmp);
	ret = -save_both_dat(s, inst, &k, dat);
	ktrace_rec_free(&k);
	if (!ret && fmt == SAVE_DAT && rename(dat, file) != 0)
		ret = errno;
	if (!ret && fmt != SAVE_DAT) {
		struct fdr_export_stats st = { 0 };
		struct fdr_trace *t = NULL;

		ret = -fdr_trace_open_file_ex(dat, FDR_TRACE_ALL_BUFFERS, &t, &err);
		if (ret)
			*what = "read";
		else
			ret = -(fmt == SAVE_CTF ? fdr_export_ctf(t, file, &st, &err) :
						  fdr_export_perfetto(t, file, &st, &err));
		if (ret && err.len)
			fprintf(stderr, "fdr snapshot: %.*s%s", (int)err.len, err.data,
				err.data[err.len - 1] == '\n' ? "" : "\n");
		if (t)
			fdr_trace_close(t);
		fdr_buf_free(&err);
	}
	if (fmt != SAVE_DAT || ret)
		unlink(dat);
	return ret;
}

/*
 * While a snapshot is written out, a thread keeps the saver's heartbeat: writing
 * a large trace.dat or export takes longer than the beat's 1 s lease, and a
 * swap that took the saver for gone would reuse the buffer being read.
 */
struct save_beat {
	struct fdr_saver *sv;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int done;
};

static void *save_beat_thread(void *arg)
{
	struct save_beat *b = arg;
	struct timespec t;

	pthread_mutex_lock(&b->mu);
	while (!b->done) {
		clock_gettime(CLOCK_MONOTONIC, &t);
		t.tv_nsec += 100 * 1000 * 1000;
		if (t.tv_nsec >= 1000000000) {
			t.tv_sec++;
			t.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&b->cv, &b->mu, &t);
		if (!b->done)
			fdr_saver_beat(b->sv);
	}
	pthread_mutex_unlock(&b->mu);
	return NULL;
}

/* Start the heartbeat thread of @sv (none if it cannot start: *@started 0). */
static void beat_start(struct save_beat *b, struct fdr_saver *sv, pthread_t *th, int *started)
{
	pthread_condattr_t ca;

	b->sv = sv;
	b->done = 0;
	pthread_mutex_init(&b->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&b->cv, &ca);
	pthread_condattr_destroy(&ca);
	*started = pthread_create(th, NULL, save_beat_thread, b) == 0;
}

static void beat_stop(struct save_beat *b, pthread_t th, int started)
{
	if (started) {
		pthread_mutex_lock(&b->mu);
		b->done = 1;
		pthread_cond_signal(&b->cv);
		pthread_mutex_unlock(&b->mu);
		pthread_join(th, NULL);
	}
	pthread_cond_destroy(&b->cv);
	pthread_mutex_destroy(&b->mu);
}

/* save_one() with the heartbeat kept by a thread (without one, if none starts) */
static int save_one_beating(struct fdr_saver *sv, struct ksave *ks, struct fdr_session *s,
			    uint32_t inst, const char *path, enum save_format fmt, const char *file,
			    const char *tmp, const char **what)
{
	struct save_beat b;
	pthread_t th;
	int err, started;

	beat_start(&b, sv, &th, &started);
	err = ks->linked ? save_one_both(ks, s, inst, path, fmt, file, tmp, what) :
			   save_one(s, inst, path, fmt, file, tmp, what);
	beat_stop(&b, th, started);
	return err;
}

static int snapshot_save(struct fdr_session *s, uint32_t inst, const char *pre, const char *dir,
			 enum save_format fmt)
{
	char path[256], file[4096], tmp[4200];
	struct fdr_saver sv;
	struct ksave ks;
	unsigned saved = 0;
	int ret = 0;

	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return die(1, "%s: %s", dir, strerror(errno));
	snprintf(path, sizeof(path), "%ssnapshot", pre);
	ks_init(&ks, s, inst);
	fdr_saver_init(&sv, s, inst);
	/*
	 * Attached before it says so: a snapshot taken once the message is out is
	 * one it saves (a first poll never finds one waiting: attaching marks what
	 * exists as not its business).
	 */
	{
		uint64_t seq0;
		int r0 = fdr_saver_poll(&sv, &seq0);

		if (r0 < 0)
			return die_err(1, r0, "instance gone");
	}
	fprintf(stderr, "fdr snapshot: saving every snapshot into %s%s%s (Ctrl-C stops)\n", dir,
		ks.linked ? " with kernel instance " : "", ks.linked ? ks.l.instance : "");
	for (;;) {
		/* after a stop request, one more round saves a snapshot already taken */
		int last_round = stop_requested;
		uint64_t seq = 0;
		int waiting = fdr_saver_poll(&sv, &seq);

		if (waiting < 0) {
			ret = die_err(1, waiting, "instance gone");
			break;
		}
		if (waiting) {
			struct timespec rt;
			const char *what;
			int err;

			if (ks.linked)
				ks_freeze(&sv, &ks,
					  s); /* first: as close to fdr's swap as can be */
			clock_gettime(CLOCK_REALTIME, &rt);
			snprintf(file, sizeof(file), "%s/snapshot-%06u-%lld.%03ld%s", dir, ++saved,
				 (long long)rt.tv_sec, rt.tv_nsec / 1000000,
				 save_formats[fmt].suffix);
			snprintf(tmp, sizeof(tmp), "%s.tmp", file);
			err = save_one_beating(&sv, &ks, s, inst, path, fmt, file, tmp, &what);
			if (err && !strcmp(what, "read")) {
				ret = die_err(1, -err, "reading the snapshot");
				break;
			}
			if (err) {
				ret = die(1, "cannot write %s: %s", file, strerror(err));
				break;
			}
			fdr_saver_saved(&sv, seq);
			printf("%s\n", file);
			fflush(stdout);
		} else if (!last_round) {
			/* until a swap wakes it (a signal, or 50 ms: the beat is due every 100) */
			fdr_saver_wait(&sv, 50 * 1000 * 1000);
		}
		if (last_round)
			break;
	}
	fdr_saver_detach(&sv);
	fprintf(stderr,
		"fdr snapshot: %u snapshot%s saved, %" PRIu64 " refused (taken before the previous "
		"one was saved, or during another swap)\n",
		saved, saved == 1 ? "" : "s", sv.refused);
	ks_done(&ks);
	return ret;
}

/*
 * fdr snapshot save --relayd URL [DIR]: each snapshot goes to the relay daemon
 * as one trace chunk of a snapshot session. The session on the daemon is named
 * after the fdr session (and instance), dated by the fdr session's creation,
 * and identified by its random id, so every snapshot of one fdr session lands
 * in one directory: OUTPUT/HOSTNAME/NAME-YYYYMMDD-HHMMSS/snapshot-N-.../fdr/.
 * A connection is made for each snapshot, so a daemon restarted between two
 * snapshots gets the next one. A snapshot that cannot be sent (daemon absent,
 * refusing, killed or too slow) is written as CTF into DIR instead and said so;
 * the loop goes on and the exit status is 1. Only this tool waits on the
 * network: the traced programs only see their snapshot refused while one is
 * being saved, as with save DIR.
 */
struct relay_save {
	struct fdr_relay_url url;
	struct fdr_relay_session rs;
	char hostname[256];
	char name[CLI_RELAY_NAME_LEN];
	const char *keep_dir;
	unsigned sent, kept;
	struct ksave ks; /* a linked kernel instance: frozen and sent with each snapshot */
};

static int relay_save_one(struct relay_save *rv, struct fdr_session *s, uint32_t inst, uint64_t seq,
			  const char **what)
{
	struct fdr_export_stats st = { 0 };
	struct fdr_buf err = { 0 };
	struct fdr_relay *r = NULL;
	struct fdr_trace *t = NULL;
	char chunk[96], path[4096], stamp[32], file[4300], dat[4200];
	struct timespec rt;
	struct tm tm;
	int ret, have_dat = 0;

	*what = "read";
	clock_gettime(CLOCK_REALTIME, &rt);
	localtime_r(&rt.tv_sec, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
	snprintf(chunk, sizeof(chunk), "snapshot-%" PRIu64 "-%s", seq / 2, stamp);
	if (rv->ks.linked) {
		/* fdr's snapshot and the frozen kernel instance's pages, as one trace.dat */
		struct ktrace_rec k;

		memset(&k, 0, sizeof(k));
		snprintf(dat, sizeof(dat), "%s/fdr-relay-%d-%" PRIu64 ".dat",
			 getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
			 (int)getpid(), seq / 2);
		if (!ks_take(&rv->ks, s, NULL, &k, dat)) {
			ret = save_both_dat(s, inst, &k, dat);
			ktrace_rec_free(&k);
			if (!ret)
				ret = fdr_trace_open_file_ex(dat, FDR_TRACE_ALL_BUFFERS, &t, &err);
			if (ret) {
				fprintf(stderr,
					"fdr snapshot: snapshot %" PRIu64
					" with the kernel's records: "
					"%s: sent with fdr's alone\n",
					seq / 2, err.len ? err.data : strerror(-ret));
				fdr_buf_free(&err);
				unlink(dat);
				t = NULL;
			} else {
				have_dat = 1;
			}
		}
	}
	ret = t ? 0 : fdr_trace_open_session(s, inst, FDR_READ_SNAPSHOT, &t);
	if (ret)
		return -ret;
	*what = "send";
	ret = fdr_relay_open(&rv->url, &rv->rs, &r, &err);
	if (!ret)
		ret = fdr_relay_send_chunk(r, t, seq / 2, chunk, path, sizeof(path), &st, &err);
	fdr_relay_close(r);
	fdr_trace_close(t);
	t = NULL;
	if (!ret) {
		rv->sent++;
		printf("%s\n", path);
		fflush(stdout);
		fdr_buf_free(&err);
		if (have_dat)
			unlink(dat);
		return 0;
	}
	fprintf(stderr, "fdr snapshot: cannot send snapshot %" PRIu64 ": %.*s\n", seq / 2,
		(int)err.len, err.data ? err.data : "");
	fdr_buf_free(&err);
	/* keep it: the snapshot buffer is still ours until fdr_saver_saved() */
	snprintf(file, sizeof(file), "%s/%s.ctf", rv->keep_dir, chunk);
	*what = "keep";
	if (mkdir(rv->keep_dir, 0700) < 0 && errno != EEXIST) {
		ret = errno;
		fprintf(stderr, "fdr snapshot: cannot keep snapshot %" PRIu64 " in %s: %s\n",
			seq / 2, rv->keep_dir, strerror(ret));
		if (have_dat)
			unlink(dat);
		return ret;
	}
	ret = have_dat ? -fdr_trace_open_file_ex(dat, FDR_TRACE_ALL_BUFFERS, &t, &err) :
			 -fdr_trace_open_session(s, inst, FDR_READ_SNAPSHOT, &t);
	if (have_dat)
		unlink(dat);
	if (!ret)
		ret = -fdr_export_ctf(t, file, &st, &err);
	fdr_trace_close(t);
	if (ret)
		fprintf(stderr, "fdr snapshot: cannot keep snapshot %" PRIu64 ": %.*s\n", seq / 2,
			(int)err.len, err.data ? err.data : strerror(ret));
	else
		fprintf(stderr, "fdr snapshot: snapshot %" PRIu64 " kept in %s\n", seq / 2, file);
	fdr_buf_free(&err);
	rv->kept += !ret;
	return ret ? ret : ECOMM;
}

/* relay_save_one() with the heartbeat kept by a thread: sending can take seconds */
static int relay_save_beating(struct fdr_saver *sv, struct relay_save *rv, struct fdr_session *s,
			      uint32_t inst, uint64_t seq, const char **what)
{
	struct save_beat b;
	pthread_t th;
	int err, started;

	beat_start(&b, sv, &th, &started);
	err = relay_save_one(rv, s, inst, seq, what);
	beat_stop(&b, th, started);
	return err;
}

static int relay_save_loop(struct fdr_session *s, uint32_t inst, const char *inst_name,
			   struct relay_save *rv)
{
	const struct fdr_abi_control *c = fdr_session_control(s);
	struct fdr_saver sv;
	unsigned failed = 0;
	int ret = 0;

	cli_relay_session_name(s, inst_name, rv->name, sizeof(rv->name));
	rv->rs.name = rv->name;
	rv->rs.hostname = rv->hostname;
	rv->rs.id = c->session_id + inst; /* instances are sessions of their own on the daemon */
	rv->rs.creation_time = c->cal_real_ns / 1000000000u;
	rv->rs.snapshot = 1;
	ks_init(&rv->ks, s, inst);
	fdr_saver_init(&sv, s, inst);
	{
		uint64_t seq0;
		int r0 = fdr_saver_poll(&sv, &seq0);

		if (r0 < 0)
			return die_err(1, r0, "instance gone");
	}
	fprintf(stderr,
		"fdr snapshot: sending every snapshot to %s:%u (data port %u) as host %s, session "
		"%s%s%s; unsent ones are kept in %s (Ctrl-C stops)\n",
		rv->url.host, rv->url.ctrl_port, rv->url.data_port, rv->hostname, rv->name,
		rv->ks.linked ? ", with kernel instance " : "",
		rv->ks.linked ? rv->ks.l.instance : "", rv->keep_dir);
	for (;;) {
		int last_round = stop_requested;
		uint64_t seq = 0;
		int waiting = fdr_saver_poll(&sv, &seq);

		if (waiting < 0) {
			ret = die_err(1, waiting, "instance gone");
			break;
		}
		if (waiting) {
			const char *what;
			int err;

			if (rv->ks.linked)
				ks_freeze(&sv, &rv->ks,
					  s); /* first: as close to fdr's swap as can be */
			err = relay_save_beating(&sv, rv, s, inst, seq, &what);

			if (err && !strcmp(what, "read")) {
				ret = die_err(1, -err, "reading the snapshot");
				break;
			}
			if (err)
				failed++;
			fdr_saver_saved(&sv, seq);
		} else if (!last_round) {
			/* until a swap wakes it (a signal, or 50 ms: the beat is due every 100) */
			fdr_saver_wait(&sv, 50 * 1000 * 1000);
		}
		if (last_round)
			break;
	}
	fdr_saver_detach(&sv);
	ks_done(&rv->ks);
	fprintf(stderr,
		"fdr snapshot: %u snapshot%s sent, %u not sent (%u kept in %s), %" PRIu64
		" refused (taken before the previous one was saved, or during another swap)\n",
		rv->sent, rv->sent == 1 ? "" : "s", failed, rv->kept, rv->keep_dir, sv.refused);
	return ret ? ret : failed ? 1 : 0;
}

/* "1 > snapshot_allocated": the file the tree and the mount give, without its messages */
static int snapshot_alloc(struct fdr_session *s, const char *pre)
{
	char path[256];
	struct fdr_file *f;
	ssize_t n;
	int ret;

	snprintf(path, sizeof(path), "%ssnapshot_allocated", pre);
	ret = fdr_file_open(s, path, O_WRONLY, &f);
	if (ret)
		return ret;
	n = fdr_file_write(f, "1\n", 2);
	fdr_file_close(f);
	return n < 0 ? (int)n : 0;
}

/* fdr snapshot [take|show|clear|alloc|free|save DIR] [-i INSTANCE] [-c CPU] */
int cmd_snapshot(int argc, char **argv)
{
	struct fdr_session *s;
	const char *inst = NULL, *action = "take", *save_dir = NULL, *fmt_name = NULL;
	const char *relayd = NULL, *hostname = NULL;
	char pre[FDR_NAME_LEN + 16], path[256];
	enum save_format fmt = SAVE_TEXT;
	struct relay_save rv;
	int cpu = -1, ret, argi, i, k, fmt_argi = -1;

	memset(&rv, 0, sizeof(rv));
	/*
	 * --format F, --relayd URL, --hostname NAME (save only; also as --opt=VALUE),
	 * taken out before the rest
	 */
	for (i = 1; i < argc; i++) {
		static const char *const opts[] = { "--format", "--relayd", "--hostname" };
		const char **dst[] = { &fmt_name, &relayd, &hostname };
		int take = 0, o;

		if (!strcmp(argv[i], "--"))
			break;
		for (o = 0; o < 3 && !take; o++) {
			size_t n = strlen(opts[o]);

			if (!strcmp(argv[i], opts[o])) {
				if (i + 1 >= argc)
					return usage_error(argc, argv, i,
							   "expected a value after %s", opts[o]);
				*dst[o] = argv[i + 1];
				take = 2;
			} else if (!strncmp(argv[i], opts[o], n) && argv[i][n] == '=') {
				*dst[o] = argv[i] + n + 1;
				take = 1;
			}
		}
		if (!take)
			continue;
		o--;
		if (o == 0) {
			for (k = 0; k < (int)(sizeof(save_formats) / sizeof(save_formats[0])); k++)
				if (!strcmp(fmt_name, save_formats[k].name))
					break;
			if (k == (int)(sizeof(save_formats) / sizeof(save_formats[0])))
				return usage_error(
					argc, argv, i + take - 1,
					"expected a format text, dat, ctf or perfetto, found '%s'",
					fmt_name);
			fmt = (enum save_format)k;
			fmt_argi = i;
		} else if (o == 1) {
			struct fdr_buf err = { 0 };

			if (fdr_relay_parse_url(relayd, &rv.url, &err)) {
				ret = usage_error(argc, argv, i + take - 1, "%.*s", (int)err.len,
						  err.data);
				fdr_buf_free(&err);
				return ret;
			}
		}
		memmove(&argv[i], &argv[i + take], (size_t)(argc - i - take + 1) * sizeof(*argv));
		argc -= take;
		i--;
	}
	argi = common_opts(argc, argv, &inst, &cpu, &ret);
	if (argi < 0)
		return ret;
	if (argi < argc)
		action = argv[argi++];
	if (!strcmp(action, "save")) {
		if (argi < argc)
			save_dir = argv[argi++];
		else if (!relayd)
			return usage_error(argc, argv, -1, "expected save DIR, found no DIR");
		if (cpu >= 0)
			return usage_error(argc, argv, -1, "expected no -c CPU with save");
		if (relayd && fmt_argi >= 0)
			return usage_error(argc, argv, -1,
					   "expected no --format with --relayd (the relay daemon "
					   "stores CTF)");
	} else if (fmt_name || relayd || hostname) {
		return usage_error(argc, argv, -1,
				   "expected --format, --relayd and --hostname with save only");
	}
	if (hostname && !relayd)
		return usage_error(argc, argv, -1, "expected --hostname with --relayd only");
	if (relayd) {
		ret = cli_relay_hostname(hostname, rv.hostname, sizeof(rv.hostname));
		if (ret)
			return ret;
		rv.keep_dir = save_dir ? save_dir : "fdr-relay-unsent";
	}
	if (argi < argc)
		return usage_error(argc, argv, argi,
				   "expected nothing after the action, found '%s'", argv[argi]);
	if (strcmp(action, "take") && strcmp(action, "show") && strcmp(action, "clear") &&
	    strcmp(action, "alloc") && strcmp(action, "free") && strcmp(action, "save"))
		return usage_error(
			argc, argv, argi - 1,
			"expected take, show, clear, alloc, free or save DIR, found '%s'", action);
	if (!strcmp(action, "free") && cpu >= 0)
		return usage_error(argc, argv, -1,
				   "expected no -c CPU with free (frees every CPU's)");
	ret = open_session(&s);
	if (ret)
		return ret;
	install_signals();
	inst_prefix(inst, pre, sizeof(pre));
	if (cpu >= 0)
		snprintf(path, sizeof(path), "%sper_cpu/cpu%d/snapshot", pre, cpu);
	else
		snprintf(path, sizeof(path), "%ssnapshot", pre);
	if (!strcmp(action, "show")) {
		ret = cat_path(s, path, 0);
	} else if (!strcmp(action, "take")) {
		ret = write_path(s, path, "1\n", O_TRUNC);
	} else if (!strcmp(action, "clear")) {
		ret = write_path(s, path, "2\n", O_TRUNC);
	} else if (!strcmp(action, "free")) {
		ret = write_path(s, path, "0\n", O_TRUNC);
	} else {
		uint32_t idx = 0;

		idx = inst_index(fdr_session_control(s), inst);
		ret = idx == FDR_MAX_INSTANCES ? -ENOENT : snapshot_alloc(s, pre);
		if (ret)
			ret = die_err(1, ret, "cannot allocate the snapshot buffers");
		else if (relayd)
			ret = relay_save_loop(s, idx, inst, &rv);
		else if (save_dir)
			ret = snapshot_save(s, idx, pre, save_dir, fmt);
	}
	fdr_session_close(s);
	return ret;
}
