// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * snapshot.c - fdr snapshot: take, show, clear, alloc and free an instance's
 * snapshot through its 'snapshot' file, and save DIR, which writes every
 * snapshot taken from now on, by anyone, to its own file (text, trace.dat, CTF
 * or Perfetto).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fdr/fdr-ctl.h"
#include "fdr/fdr-export.h"
#include "fdr/fdr-read.h"
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

static int snapshot_save(struct fdr_session *s, uint32_t inst, const char *pre, const char *dir,
			 enum save_format fmt)
{
	char path[256], file[4096], tmp[4200];
	struct fdr_saver sv;
	unsigned saved = 0;
	int ret = 0;

	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return die(1, "%s: %s", dir, strerror(errno));
	snprintf(path, sizeof(path), "%ssnapshot", pre);
	fprintf(stderr, "fdr snapshot: saving every snapshot into %s (Ctrl-C stops)\n", dir);
	fdr_saver_init(&sv, s, inst);
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

			clock_gettime(CLOCK_REALTIME, &rt);
			snprintf(file, sizeof(file), "%s/snapshot-%06u-%lld.%03ld%s", dir, ++saved,
				 (long long)rt.tv_sec, rt.tv_nsec / 1000000,
				 save_formats[fmt].suffix);
			snprintf(tmp, sizeof(tmp), "%s.tmp", file);
			err = save_one(s, inst, path, fmt, file, tmp, &what);
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
			struct timespec d = { 0, 2 * 1000 * 1000 };

			nanosleep(&d, NULL);
		}
		if (last_round)
			break;
	}
	fdr_saver_detach(&sv);
	fprintf(stderr,
		"fdr snapshot: %u snapshot%s saved, %" PRIu64 " refused (taken before the previous "
		"one was saved, or during another swap)\n",
		saved, saved == 1 ? "" : "s", sv.refused);
	return ret;
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
	char pre[FDR_NAME_LEN + 16], path[256];
	enum save_format fmt = SAVE_TEXT;
	int cpu = -1, ret, argi, i, k;

	/* --format FORMAT / --format=FORMAT (save only), taken out before the rest */
	for (i = 1; i < argc; i++) {
		int take = 0;

		if (!strcmp(argv[i], "--"))
			break;
		if (!strcmp(argv[i], "--format")) {
			if (i + 1 >= argc)
				return usage_error(argc, argv, i,
						   "expected a format after --format");
			fmt_name = argv[i + 1];
			take = 2;
		} else if (!strncmp(argv[i], "--format=", 9)) {
			fmt_name = argv[i] + 9;
			take = 1;
		}
		if (!take)
			continue;
		for (k = 0; k < (int)(sizeof(save_formats) / sizeof(save_formats[0])); k++)
			if (!strcmp(fmt_name, save_formats[k].name))
				break;
		if (k == (int)(sizeof(save_formats) / sizeof(save_formats[0])))
			return usage_error(
				argc, argv, i + take - 1,
				"expected a format text, dat, ctf or perfetto, found '%s'",
				fmt_name);
		fmt = (enum save_format)k;
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
		if (argi >= argc)
			return usage_error(argc, argv, -1, "expected save DIR, found no DIR");
		save_dir = argv[argi++];
		if (cpu >= 0)
			return usage_error(argc, argv, -1, "expected no -c CPU with save");
	} else if (fmt_name) {
		return usage_error(argc, argv, -1, "expected --format with save DIR only");
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
		else if (save_dir)
			ret = snapshot_save(s, idx, pre, save_dir, fmt);
	}
	fdr_session_close(s);
	return ret;
}
