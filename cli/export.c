// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * export.c - fdr export --format ctf|perfetto|perfetto-proto|text -o OUT [-i INSTANCE] [--snapshot] [FILE]
 *
 * Without FILE the source is the session's instance (or its snapshot), read
 * without consuming it; with FILE, a trace.dat file, all its buffers (the
 * kernel instance's of `fdr record -k` too). The conversion itself is in
 * lib/read/export*.c; here are the arguments and the messages.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "fdr/fdr-export.h"
#include "fdr/fdr-read.h"
#include "fdr/fdr-trace.h"

#include "cli.h"

enum exp_format { EXP_NONE, EXP_CTF, EXP_PERFETTO, EXP_PERFETTO_PROTO, EXP_TEXT };

static int exp_run(enum exp_format fmt, struct fdr_trace *t, const char *out,
		   struct fdr_export_stats *st, struct fdr_buf *err)
{
	const char *path = strcmp(out, "-") ? out : NULL;

	switch (fmt) {
	case EXP_CTF:
		return fdr_export_ctf(t, out, st, err);
	case EXP_PERFETTO:
		return fdr_export_perfetto(t, path, st, err);
	case EXP_PERFETTO_PROTO:
		return fdr_export_perfetto_proto(t, path, st, err);
	default:
		return fdr_export_text(t, path, st, err);
	}
}

int cmd_export(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "instance", required_argument, NULL, 'i' },
		{ "snapshot", no_argument, NULL, 'S' },
		{ NULL, 0, NULL, 0 },
	};
	enum exp_format fmt = EXP_NONE;
	const char *out = NULL, *inst = NULL, *file = NULL;
	struct fdr_export_stats st = { 0 };
	struct fdr_buf err = { 0 };
	struct fdr_session *s = NULL;
	struct fdr_trace *t = NULL;
	int c, ret, snapshot = 0, inst_argi = -1, snap_argi = -1;

	optind = 0; /* 0, not 1: glibc then resets its permutation state too */
	while ((c = getopt_long(argc, argv, "f:o:i:", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			if (!strcmp(optarg, "ctf"))
				fmt = EXP_CTF;
			else if (!strcmp(optarg, "perfetto"))
				fmt = EXP_PERFETTO;
			else if (!strcmp(optarg, "perfetto-proto"))
				fmt = EXP_PERFETTO_PROTO;
			else if (!strcmp(optarg, "text"))
				fmt = EXP_TEXT;
			else
				return usage_error(
					argc, argv, optind - 1,
					"expected a format ctf, perfetto, perfetto-proto or text, "
					"found '%s'",
					optarg);
			break;
		case 'o':
			if (!*optarg)
				return usage_error(argc, argv, optind - 1,
						   "expected an output path, found ''");
			out = optarg;
			break;
		case 'i':
			inst = optarg;
			inst_argi = optind - 1;
			break;
		case 'S':
			snapshot = 1;
			snap_argi = optind - 1;
			break;
		default:
			return usage_error(argc, argv, optind - 1, "unknown option");
		}
	}
	if (fmt == EXP_NONE)
		return usage_error(argc, argv, -1,
				   "expected --format ctf, perfetto, perfetto-proto or text, found "
				   "no --format");
	if (!out)
		return usage_error(argc, argv, -1, "expected -o OUT, found no -o");
	if (optind < argc)
		file = argv[optind++];
	if (optind < argc)
		return usage_error(argc, argv, optind,
				   "expected at most one trace.dat FILE, found '%s' too",
				   argv[optind]);
	if (fmt == EXP_CTF && !strcmp(out, "-"))
		return usage_error(argc, argv, -1,
				   "expected a directory for -o with --format ctf, found '-'");
	if (file && inst)
		return usage_error(argc, argv, inst_argi,
				   "expected -i INSTANCE only without FILE (it selects the "
				   "session's instance)");
	if (file && snapshot)
		return usage_error(argc, argv, snap_argi,
				   "expected --snapshot only without FILE (it selects the "
				   "session's snapshot)");

	if (file) {
		ret = fdr_trace_open_file_ex(file, FDR_TRACE_ALL_BUFFERS, &t, &err);
		if (ret) {
			if (err.len)
				ret = die(ret == -EINVAL ? EXIT_USAGE : 1, "%s", err.data);
			else
				ret = die(1, "%s: %s", file, strerror(-ret));
			fdr_buf_free(&err);
			return ret;
		}
	} else {
		uint32_t idx;

		ret = open_session(&s);
		if (ret)
			return ret;
		idx = inst_index(fdr_session_control(s), inst);
		if (idx == FDR_MAX_INSTANCES) {
			fdr_session_close(s);
			return usage_error(argc, argv, inst_argi,
					   "expected an instance of the session, found '%s'", inst);
		}
		if (!inst) {
			struct fdr_kernel_link l;

			/*
			 * A linked kernel instance's records can only be read raw by
			 * consuming them (trace_pipe_raw), which an export must not
			 * do: say so (kernel-timeline.md, "fdr export").
			 */
			if (ktrace_read_link(fdr_session_path(s), &l) == 0)
				fprintf(stderr,
					"fdr export: note: the kernel instance %s linked to this "
					"session is not in the export (its raw pages can only be "
					"read by consuming them); 'fdr record -k' writes a "
					"trace.dat with both, which fdr export reads\n",
					l.instance);
		}
		ret = fdr_trace_open_session(s, idx, snapshot ? FDR_READ_SNAPSHOT : 0, &t);
		if (ret) {
			fdr_session_close(s);
			if (snapshot && ret == -ENODEV)
				return die(1, "no snapshot in this instance (take one with "
					      "'fdr snapshot')");
			return die_err(1, ret, "cannot read the %s",
				       snapshot ? "snapshot" : "instance");
		}
	}
	ret = exp_run(fmt, t, out, &st, &err);
	if (ret == -EUCLEAN && !file)
		ret = die_err(1, ret, "reading the %s", snapshot ? "snapshot" : "instance");
	else if (ret)
		ret = die(1, "%s", err.len ? err.data : strerror(-ret));
	else if (st.unknown || st.lost || st.clamped)
		fprintf(stderr,
			"fdr export: %" PRIu64 " events written; %" PRIu64
			" lost in the source, %" PRIu64 " of unknown event ids skipped, %" PRIu64
			" timestamps raised to keep "
			"each CPU's time going forward\n",
			st.events, st.lost, st.unknown, st.clamped);
	fdr_buf_free(&err);
	fdr_trace_close(t);
	fdr_session_close(s);
	return ret;
}
