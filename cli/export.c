// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * export.c - fdr export --format ctf|perfetto|perfetto-proto|text -o OUT [-i INSTANCE] [--snapshot] [FILE]
 *            fdr export --relayd URL [--hostname H] [-i INSTANCE] [--snapshot] [FILE]
 *
 * Without FILE the source is the session's instance (or its snapshot), read
 * without consuming it; with FILE, a trace.dat file, all its buffers (the
 * kernel instance's of `fdr record -k` too). The conversion itself is in
 * lib/read/export*.c; here are the arguments and the messages. --relayd sends
 * the source as CTF to LTTng's relay daemon instead, as one trace chunk of a
 * snapshot session (docs/design/relay.md, "fdr export --relayd").
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "fdr/fdr-export.h"
#include "fdr/fdr-read.h"
#include "fdr/fdr-relay.h"
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

/*
 * --relayd: @t as one chunk "export-YYYYMMDD-HHMMSS" of a snapshot session on
 * the daemon. The session: the fdr session's (its name, id and creation date,
 * as fdr snapshot save --relayd names it, so exports land next to its
 * snapshots), or, for a FILE, the file's name (without .dat), its id a hash
 * of its real path and its date the file's modification time.
 */
int cli_export_relay(struct fdr_trace *t, const struct fdr_relay_url *url, const char *hostname,
		     struct fdr_session *s, const char *inst, uint32_t idx, const char *file,
		     struct fdr_export_stats *st)
{
	char name[CLI_RELAY_NAME_LEN], chunk[64], path[4096], stamp[32];
	struct fdr_relay_session rs = { 0 };
	struct fdr_buf err = { 0 };
	struct fdr_relay *r = NULL;
	time_t now = time(NULL);
	struct tm tm;
	int ret;

	if (s) {
		const struct fdr_abi_control *c = fdr_session_control(s);

		cli_relay_session_name(s, inst, name, sizeof(name));
		rs.id = c->session_id + idx;
		rs.creation_time = c->cal_real_ns / 1000000000u;
	} else {
		char real[4096], base[256], *dot;
		const char *slash = strrchr(file, '/');
		struct stat sb;
		uint64_t h = 14695981039346656037ull;
		size_t i;

		snprintf(base, sizeof(base), "%s", slash ? slash + 1 : file);
		dot = strrchr(base, '.');
		if (dot && dot != base && !strcmp(dot, ".dat"))
			*dot = 0;
		cli_relay_name(base, name, sizeof(name));
		if (!realpath(file, real))
			snprintf(real, sizeof(real), "%s", file);
		for (i = 0; real[i]; i++)
			h = (h ^ (unsigned char)real[i]) * 1099511628211ull;
		rs.id = h;
		rs.creation_time = stat(file, &sb) == 0 ? (uint64_t)sb.st_mtime : (uint64_t)now;
	}
	rs.name = name;
	rs.hostname = hostname;
	rs.snapshot = 1;
	localtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
	snprintf(chunk, sizeof(chunk), "export-%s", stamp);
	ret = fdr_relay_open(url, &rs, &r, &err);
	if (!ret)
		ret = fdr_relay_send_chunk(r, t, (uint64_t)now, chunk, path, sizeof(path), st,
					   &err);
	fdr_relay_close(r);
	if (ret == -EUCLEAN && !file)
		ret = die_err(1, ret, "reading the source");
	else if (ret)
		ret = die(1, "cannot send to the relay daemon %s: %.*s", url->host, (int)err.len,
			  err.data ? err.data : strerror(-ret));
	else
		printf("%s\n", path);
	fdr_buf_free(&err);
	return ret;
}

int cmd_export(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "instance", required_argument, NULL, 'i' },
		{ "snapshot", no_argument, NULL, 'S' },
		{ "relayd", required_argument, NULL, 'R' },
		{ "hostname", required_argument, NULL, 'H' },
		{ NULL, 0, NULL, 0 },
	};
	const char *relayd = NULL, *hostname = NULL;
	struct fdr_relay_url url;
	char host[256];
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
		case 'R':
			relayd = optarg;
			if (fdr_relay_parse_url(relayd, &url, &err)) {
				ret = usage_error(argc, argv, optind - 1, "%.*s", (int)err.len,
						  err.data);
				fdr_buf_free(&err);
				return ret;
			}
			break;
		case 'H':
			hostname = optarg;
			break;
		default:
			return usage_error(argc, argv, optind - 1, "unknown option");
		}
	}
	if (relayd && (fmt != EXP_NONE || out))
		return usage_error(argc, argv, -1,
				   "expected no --format or -o with --relayd (the relay daemon "
				   "stores CTF)");
	if (hostname && !relayd)
		return usage_error(argc, argv, -1, "expected --hostname with --relayd only");
	if (!relayd && fmt == EXP_NONE)
		return usage_error(argc, argv, -1,
				   "expected --format ctf, perfetto, perfetto-proto or text, found "
				   "no --format");
	if (!relayd && !out)
		return usage_error(argc, argv, -1, "expected -o OUT, found no -o");
	if (relayd) {
		ret = cli_relay_hostname(hostname, host, sizeof(host));
		if (ret)
			return ret;
		fmt = EXP_CTF;
	}
	if (optind < argc)
		file = argv[optind++];
	if (optind < argc)
		return usage_error(argc, argv, optind,
				   "expected at most one trace.dat FILE, found '%s' too",
				   argv[optind]);
	if (fmt == EXP_CTF && out && !strcmp(out, "-"))
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
	if (relayd) {
		uint32_t idx = s ? inst_index(fdr_session_control(s), inst) : 0;

		ret = cli_export_relay(t, &url, host, s, inst, idx, file, &st);
		fdr_trace_close(t);
		fdr_session_close(s);
		return ret;
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
