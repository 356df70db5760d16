// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * session.c - the session verbs of fdr: start (create the session if needed,
 * apply the options, enable events, tracing on), stop (tracing off) and destroy;
 * and the selection of the session every verb uses (-s NAME, -d DIR, their
 * environment variables) and of an instance in it.
 *
 * cli_session_setup() is what fdr start does once its options are parsed; fdr
 * record calls it too, so that both set a session up the same way, through the
 * same control files a shell would write.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fdr/fdr-ctl.h"
#include "cli.h"
int session_dir(char *dir, size_t len)
{
	int ret;

	if (session_path) {
		if ((size_t)snprintf(dir, len, "%s", session_path) >= len)
			return die(1, "session path too long");
		return 0;
	}
	ret = fdr_session_dir(session_name, dir, len);

	if (ret == -EINVAL)
		return die(EXIT_USAGE,
			   "expected a session name of 1 to 63 bytes without '/', found '%s'",
			   session_name);
	if (ret)
		return die(1, "session path too long");
	return 0;
}
/* Report an error of fdr_session_open(@dir); returns the exit code (1). */
static int open_error(const char *dir, int ret)
{
	if (ret == -ENOENT)
		return die(1, "no session '%s' (expected one created by 'fdr start'; looked in %s)",
			   session_name, dir);
	if (ret == -EPERM)
		return die(1, "%s is not a private directory of this user (mode 0700 expected)",
			   dir);
	if (ret == -EUCLEAN)
		return die_err(1, ret, "its control file");
	return die_err(1, ret, "cannot open session %s", dir);
}
int open_session(struct fdr_session **s)
{
	char dir[4096];
	int ret = session_dir(dir, sizeof(dir));

	if (ret)
		return ret;
	snprintf(cur_session_dir, sizeof(cur_session_dir), "%s", dir);
	ret = fdr_session_open(dir, s);
	return ret ? open_error(dir, ret) : 0;
}
/* The index of instance @inst (0 for none or ""), FDR_MAX_INSTANCES if none such. */
uint32_t inst_index(const struct fdr_abi_control *c, const char *inst)
{
	uint32_t idx;

	if (!inst || !*inst)
		return 0;
	for (idx = 1; idx < FDR_MAX_INSTANCES; idx++)
		if (c->instances[idx].state == FDR_INST_LIVE &&
		    strncmp(c->instances[idx].name, inst, FDR_NAME_LEN) == 0)
			break;
	return idx;
}
/* Prefix of an instance's files: "" or "instances/NAME/". */
void inst_prefix(const char *inst, char *buf, size_t len)
{
	if (inst && *inst)
		snprintf(buf, len, "instances/%s/", inst);
	else
		buf[0] = 0;
}
/* -m @arg of start and record: 'overwrite' (1) or 'discard' (-1) into *@mode. */
int cli_parse_mode(int argc, char **argv, int argi, const char *arg, int *mode)
{
	if (strcmp(arg, "overwrite") == 0)
		*mode = 1;
	else if (strcmp(arg, "discard") == 0)
		*mode = -1;
	else
		return usage_error(argc, argv, argi,
				   "expected a mode 'overwrite' or 'discard', found '%s'", arg);
	return 0;
}

/*
 * What fdr start does once its options are parsed (fdr record does the same):
 * create the session if needed, create the instance if one is named, and write
 * buffer_size_kb (an existing session keeps its buffers unless a size is asked
 * for), options/overwrite, trace_clock, set_event and tracing_on, each through
 * the control tree as a shell would write it. Returns 0 or the exit code.
 */
int cli_session_setup(const struct cli_start_opts *o)
{
	struct fdr_session_opts so = o->so;
	struct fdr_session *s;
	char dir[4096], pre[FDR_NAME_LEN + 16], path[256];
	const char *inst = o->inst;
	int ret, i, created;

	if (so.buffer_size_kb > fdr_session_max_kb(so.subbuf_size ? so.subbuf_size : 4096))
		return usage_error(o->argc, o->argv, o->b_argi,
				   "expected a buffer size in KiB per CPU (a number from 1 to %u "
				   "with %u KiB sub-buffers), found '%u'",
				   fdr_session_max_kb(so.subbuf_size ? so.subbuf_size : 4096),
				   (so.subbuf_size ? so.subbuf_size : 4096) / 1024,
				   so.buffer_size_kb);
	so.overwrite = o->mode;
	ret = session_dir(dir, sizeof(dir));
	if (ret)
		return ret;
	{
		char ctl[4200];

		/* a directory made beforehand (mkdir -m 700 DIR) holds no session yet */
		snprintf(ctl, sizeof(ctl), "%s/control", dir);
		created = access(ctl, F_OK) != 0;
	}
	snprintf(cur_session_dir, sizeof(cur_session_dir), "%s", dir);
	ret = fdr_session_create(dir, &so, &s);
	if (ret == -EPERM)
		return die(
			1,
			"%s or its parent is not a private directory of this user (mode 0700 expected)",
			dir);
	if (ret)
		return die_err(1, ret, "cannot create session in %s", dir);
	if (inst && *inst) {
		snprintf(path, sizeof(path), "instances/%s", inst);
		ret = fdr_tree_mkdir(s, path);
		if (ret && ret != -EEXIST) {
			fdr_session_close(s);
			return die_err(1, ret, "instance '%s'", inst);
		}
	}
	inst_prefix(inst, pre, sizeof(pre));
	/* an existing session keeps its buffers unless a size or mode is asked for */
	if (!created && so.buffer_size_kb) {
		char kb[32];

		snprintf(path, sizeof(path), "%sbuffer_size_kb", pre);
		snprintf(kb, sizeof(kb), "%u\n", so.buffer_size_kb);
		ret = write_path(s, path, kb, O_TRUNC);
	}
	if (!ret && (o->mode || (inst && *inst))) {
		snprintf(path, sizeof(path), "%soptions/overwrite", pre);
		ret = write_path(s, path, o->mode < 0 ? "0\n" : "1\n", O_TRUNC);
	}
	if (!ret && o->clock) {
		char *text = join_args(1, (char **)&o->clock);

		snprintf(path, sizeof(path), "%strace_clock", pre);
		ret = text ? write_path(s, path, text, O_TRUNC) : 1;
		free(text);
	}
	for (i = 0; i < o->nr_events && !ret; i++) {
		char *text = join_args(1, (char **)&o->events[i]);

		snprintf(path, sizeof(path), "%sset_event", pre);
		ret = text ? write_path(s, path, text, O_APPEND) : 1;
		free(text);
	}
	if (!ret) {
		snprintf(path, sizeof(path), "%stracing_on", pre);
		ret = write_path(s, path, "1\n", O_TRUNC);
	}
	if (!ret && o->nr_kevents) {
		const struct fdr_abi_control *c = fdr_session_control(s);
		uint32_t idx = inst_index(c, inst);

		if (idx == FDR_MAX_INSTANCES)
			idx = 0;
		ret = ktrace_link(dir, o->kevents, o->nr_kevents,
				  !!(c->instances[idx].options & FDR_OPT_OVERWRITE),
				  c->instances[idx].clock, c->ts_source, so.buffer_size_kb);
	} else if (!ret) {
		ret = ktrace_onoff(dir, 1); /* a linked session started again */
	}
	if (!ret) {
		/* -d names the session by its directory: there is no other name to show */
		if (session_path)
			fprintf(stderr, "fdr: session %s %s\n", dir,
				created ? "created" : "started");
		else
			fprintf(stderr, "fdr: session '%s' %s in %s\n", session_name,
				created ? "created" : "started", dir);
	}
	fdr_session_close(s);
	return ret;
}

int cmd_start(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "buffer-size", required_argument, NULL, 'b' },
		{ "mode", required_argument, NULL, 'm' },
		{ "events", required_argument, NULL, 'e' },
		{ "subbuf-size", required_argument, NULL, 'S' },
		{ "clock", required_argument, NULL, 'C' },
		{ "instance", required_argument, NULL, 'i' },
		{ "kernel-events", required_argument, NULL, 'k' },
		{ NULL, 0, NULL, 0 },
	};
	const char *events[CLI_MAX_EVENTS], *kevents[CLI_MAX_KEVENTS];
	struct cli_start_opts o = {
		.events = events, .kevents = kevents, .argc = argc, .argv = argv, .b_argi = -1
	};
	unsigned long v;
	int c, ret;

	optind = 0; /* 0, not 1: glibc then resets its permutation state too */
	while ((c = getopt_long(argc, argv, "+b:m:e:S:C:i:k:", opts, NULL)) != -1) {
		switch (c) {
		case 'b':
			/* the bound depends on -S: checked by cli_session_setup() */
			ret = parse_uint_arg(argc, argv, optind - 1, "a buffer size in KiB per CPU",
					     UINT32_MAX, &v);
			if (ret)
				return ret;
			o.so.buffer_size_kb = (uint32_t)v;
			o.b_argi = optind - 1;
			break;
		case 'S':
			ret = parse_uint_arg(argc, argv, optind - 1, "a sub-buffer size in KiB",
					     512, &v);
			if (ret)
				return ret;
			o.so.subbuf_size = 4096;
			while (o.so.subbuf_size < v * 1024)
				o.so.subbuf_size <<= 1;
			break;
		case 'm':
			ret = cli_parse_mode(argc, argv, optind - 1, optarg, &o.mode);
			if (ret)
				return ret;
			break;
		case 'e':
			if (o.nr_events == CLI_MAX_EVENTS)
				return usage_error(argc, argv, optind - 1,
						   "expected at most 64 -e options");
			events[o.nr_events++] = optarg;
			break;
		case 'C':
			o.clock = optarg;
			break;
		case 'i':
			o.inst = optarg;
			break;
		case 'k':
			if (o.nr_kevents == CLI_MAX_KEVENTS)
				return usage_error(argc, argv, optind - 1,
						   "expected at most 64 -k options");
			if (!*optarg)
				return usage_error(argc, argv, optind - 1,
						   "expected kernel events (SYSTEM:EVENT,...), "
						   "found ''");
			kevents[o.nr_kevents++] = optarg;
			break;
		default:
			return usage_error(argc, argv, optind - 1, "unknown option");
		}
	}
	if (optind < argc)
		return usage_error(argc, argv, optind, "expected options only, found '%s'",
				   argv[optind]);
	return cli_session_setup(&o);
}
static int cmd_onoff(int argc, char **argv, const char *val)
{
	struct fdr_session *s;
	const char *inst = NULL;
	char pre[FDR_NAME_LEN + 16], path[256];
	int ret, argi = common_opts(argc, argv, &inst, NULL, &ret);

	if (argi < 0)
		return ret;
	if (argi < argc)
		return usage_error(argc, argv, argi, "expected no argument, found '%s'",
				   argv[argi]);
	ret = open_session(&s);
	if (ret)
		return ret;
	inst_prefix(inst, pre, sizeof(pre));
	snprintf(path, sizeof(path), "%stracing_on", pre);
	ret = write_path(s, path, val, O_TRUNC);
	/* the linked kernel instance goes with the session's top instance */
	if (!ret && !(inst && *inst))
		ret = ktrace_onoff(fdr_session_path(s), val[0] == '1');
	fdr_session_close(s);
	return ret;
}
int cmd_stop(int argc, char **argv)
{
	return cmd_onoff(argc, argv, "0\n");
}
/*
 * Remove a session whose control file cannot be used (fdr_session_destroy()
 * needs it): only the names fdr makes there, then the directory if that left it
 * empty. Returns 0 or a negative errno.
 */
static int destroy_corrupted(const char *dir)
{
	struct dirent *de;
	DIR *d = opendir(dir);
	int ret = 0;

	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		unsigned a, b;
		char tail;

		if (strcmp(de->d_name, "control") == 0 || strcmp(de->d_name, "kernel") == 0 ||
		    sscanf(de->d_name, "ring.%u.%u%c", &a, &b, &tail) == 2 ||
		    strncmp(de->d_name, ".tmp.", 5) == 0)
			if (unlinkat(dirfd(d), de->d_name, 0) < 0 && !ret)
				ret = -errno;
	}
	closedir(d);
	if (!ret && rmdir(dir) < 0)
		ret = -errno;
	return ret;
}
int cmd_destroy(int argc, char **argv)
{
	struct fdr_session *s;
	char dir[4096];
	int ret;

	if (argc > 1)
		return usage_error(argc, argv, 1, "expected no argument, found '%s'", argv[1]);
	ret = session_dir(dir, sizeof(dir));
	if (ret)
		return ret;
	snprintf(cur_session_dir, sizeof(cur_session_dir), "%s", dir);
	ret = fdr_session_open(dir, &s);
	if (ret == -EUCLEAN) {
		/* a corrupted session is removed all the same: that is the way out of it */
		ret = ktrace_unlink(dir);
		if (ret)
			return ret;
		ret = destroy_corrupted(dir);
		if (ret)
			return die(1, "cannot remove the corrupted session %s: %s", dir,
				   strerror(-ret));
		fprintf(stderr, "fdr destroy: removed the corrupted session %s\n", dir);
		return 0;
	}
	if (ret)
		return open_error(dir, ret);
	ret = ktrace_unlink(dir);
	if (ret) {
		fdr_session_close(s);
		return ret;
	}
	ret = fdr_session_destroy(s);
	fdr_session_close(s);
	if (ret)
		return die_err(1, ret, "cannot remove the session");
	return 0;
}
