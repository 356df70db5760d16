// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fdr - the command line of the flight data recorder.
 *
 *   fdr [-s SESSION] VERB [ARGS...]
 *
 * Raw verbs reach the control tree exactly as a shell reaches tracefs: cat (read),
 * write (">"), append (">>"), ls, mkdir, rmdir. The other verbs are shorthands
 * built on the same files. Exit codes: 0 success, 1 runtime failure, 2 bad usage
 * or bad input (the message says what was expected, what was found and where).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <inttypes.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
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
#ifdef FDR_HAVE_FUSE
#include "mount.h"
#endif

const char *session_name;
const char *session_path; /* --dir PATH, or $FDR_DIR */
const char *verb = "fdr";
volatile sig_atomic_t stop_requested;

struct verb {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *usage;
	const char *help;
};

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

void install_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGPIPE, &sa, NULL);
}

int die(int code, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "fdr %s: ", verb);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return code;
}

static char cur_session_dir[4096]; /* the session being used, for messages */

/*
 * "fdr VERB: CONTEXT: strerror(-err)", where CONTEXT is @fmt. -EUCLEAN, which
 * the library returns when a session's shared memory holds values it cannot use
 * (a corrupted or hostile file), is worded as what it is and where, since the
 * bare "Structure needs cleaning" says neither.
 */
int die_err(int code, int err, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "fdr %s: ", verb);
	if (err == -EUCLEAN)
		fprintf(stderr, "session %s is corrupted: ",
			*cur_session_dir ? cur_session_dir : "(unknown)");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	if (err == -EUCLEAN)
		fprintf(stderr,
			": a shared file of the session holds values fdr cannot use (%s); "
			"'fdr destroy' removes the session\n",
			strerror(EUCLEAN));
	else
		fprintf(stderr, ": %s\n", strerror(-err));
	return code;
}

/* A usage error about argument @argi of the verb, with a caret under it. */
int usage_error(int argc, char **argv, int argi, const char *fmt, ...)
{
	va_list ap;
	int i, col = 0;

	fprintf(stderr, "fdr %s: ", verb);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	if (argi >= 0 && argi < argc) {
		fprintf(stderr, "  fdr %s", verb);
		col = 6 + (int)strlen(verb);
		for (i = 1; i < argc; i++) {
			if (i == argi)
				col += 1;
			else if (i < argi)
				col += 1 + (int)strlen(argv[i]);
			fprintf(stderr, " %s", argv[i]);
		}
		fprintf(stderr, "\n%*s^\n", col, "");
	}
	fprintf(stderr, "Try 'fdr help %s'.\n", verb);
	return EXIT_USAGE;
}

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

/* Open @path, reporting the error tracefs-style. */
static int open_file(struct fdr_session *s, const char *path, int flags, struct fdr_file **f)
{
	int ret = fdr_file_open(s, path, flags, f);

	if (!ret)
		return 0;
	if (ret == -ENOENT)
		return die(1, "%s: no such file in the control tree (try 'fdr ls')", path);
	if (ret == -EBUSY)
		return die(1, "%s: busy: another process is consuming it", path);
	return die_err(1, ret, "%s", path);
}

/* write(2) everything; stdout is written directly, no stdio copy on the data path. */
static int write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR && !stop_requested)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static int cat_path(struct fdr_session *s, const char *path, int follow_hint)
{
	struct fdr_file *f;
	char buf[65536];
	ssize_t n;
	/*
	 * Pipes are read without blocking, waiting in 100 ms steps in between, so
	 * that Ctrl-C and SIGTERM stop us whenever they come.
	 */
	int pipe = strstr(path, "trace_pipe") != NULL || strstr(path, "snapshot_raw") != NULL;
	int ret = open_file(s, path, O_RDONLY | (pipe ? O_NONBLOCK : 0), &f);

	(void)follow_hint;
	if (ret)
		return ret;
	while (!stop_requested) {
		n = fdr_file_read(f, buf, sizeof(buf));
		if (n == -EAGAIN || n == -EINTR) {
			if (n == -EAGAIN)
				fdr_file_poll(f, 100);
			continue; /* the loop condition sees a stop request */
		}
		if (n < 0) {
			ret = die_err(1, (int)n, "%s: read", path);
			break;
		}
		if (n == 0)
			break;
		if (write_all(STDOUT_FILENO, buf, (size_t)n)) {
			ret = stop_requested ?
				      0 :
				      die(1, "write to standard output: %s", strerror(errno));
			break;
		}
	}
	/*
	 * Stopped: what the file formatted from records it took, and the losses
	 * found that no record reported yet (fdr_file_end()), go out before we end.
	 */
	if (pipe && stop_requested && !ret && fdr_file_end(f) == 0)
		while ((n = fdr_file_read(f, buf, sizeof(buf))) > 0)
			if (write_all(STDOUT_FILENO, buf, (size_t)n))
				break;
	fdr_file_close(f);
	fflush(stdout);
	return ret;
}

/* Join argv with spaces and a final newline, as echo does. */
static char *join_args(int argc, char **argv)
{
	size_t len = 2;
	char *s;
	int i;

	for (i = 0; i < argc; i++)
		len += strlen(argv[i]) + 1;
	s = calloc(1, len);
	if (!s)
		return NULL;
	for (i = 0; i < argc; i++) {
		if (i)
			strcat(s, " ");
		strcat(s, argv[i]);
	}
	strcat(s, "\n");
	return s;
}

int write_path(struct fdr_session *s, const char *path, const char *text, int flags)
{
	struct fdr_file *f;
	ssize_t n;
	int ret = open_file(s, path, O_WRONLY | flags, &f);

	if (ret)
		return ret;
	n = fdr_file_write(f, text, strlen(text));
	if (n >= 0 && *fdr_file_notice(f))
		fprintf(stderr, "fdr %s: %s: %s\n", verb, path, fdr_file_notice(f));
	if (n < 0) {
		const char *msg = fdr_file_error(f);

		if (n == -EINVAL && *msg)
			fprintf(stderr, "fdr %s: %s", verb, msg);
		else if (n == -EINVAL)
			fprintf(stderr, "fdr %s: %s: invalid value '%.*s'\n", verb, path,
				(int)strcspn(text, "\n"), text);
		else
			die_err(1, (int)n, "%s", path);
		ret = n == -EINVAL ? EXIT_USAGE : 1;
	}
	fdr_file_close(f);
	return ret;
}

/* ---- raw verbs ----------------------------------------------------------------------- */

/*
 * The leading "-i INSTANCE" (also -iINSTANCE, --instance[=]INSTANCE) of cat,
 * write and append: the paths after it are the instance's. Consumes it from
 * @argc/@argv (argv[0] stays the verb); returns 0, or the usage error's status.
 */
static int raw_instance(int *argc, char ***argv, const char **inst)
{
	char **v = *argv;
	const char *a = *argc > 1 ? v[1] : "", *name = NULL;
	int used = 0;

	*inst = NULL;
	if (!strcmp(a, "-i") || !strcmp(a, "--instance")) {
		if (*argc < 3)
			return usage_error(*argc, v, 1, "expected an instance name after %s", a);
		name = v[2];
		used = 2;
	} else if (!strncmp(a, "-i", 2)) {
		name = a + 2;
		used = 1;
	} else if (!strncmp(a, "--instance=", 11)) {
		name = a + 11;
		used = 1;
	}
	if (!used)
		return 0;
	if (!*name || strchr(name, '/'))
		return usage_error(*argc, v, 1 + (used == 2),
				   "expected an instance name (no '/'), found '%s'", name);
	*inst = name;
	v[used] = v[0];
	*argv = v + used;
	*argc -= used;
	return 0;
}

/* PATH inside instance @inst ("instances/INST/PATH"), or PATH itself; free() it. */
static char *raw_path(const char *inst, const char *path)
{
	char *p;

	if (!inst)
		return strdup(path);
	if (asprintf(&p, "instances/%s/%s", inst, path) < 0)
		return NULL;
	return p;
}

static int cmd_cat(int argc, char **argv)
{
	struct fdr_session *s;
	const char *inst;
	int i, ret = raw_instance(&argc, &argv, &inst);

	if (ret)
		return ret;
	if (argc < 2)
		return usage_error(argc, argv, -1,
				   "expected PATH (a file of the control tree), found nothing");
	ret = open_session(&s);
	if (ret)
		return ret;
	install_signals();
	for (i = 1; i < argc && !ret; i++) {
		char *path = raw_path(inst, argv[i]);

		ret = path ? cat_path(s, path, 0) : die(1, "out of memory");
		free(path);
	}
	fdr_session_close(s);
	return ret;
}

static int cmd_write_common(int argc, char **argv, int flags)
{
	struct fdr_session *s;
	const char *inst;
	char *text, *path;
	int ret = raw_instance(&argc, &argv, &inst);

	if (ret)
		return ret;
	if (argc < 2)
		return usage_error(argc, argv, -1, "expected PATH VALUE..., found nothing");
	ret = open_session(&s);
	if (ret)
		return ret;
	text = join_args(argc - 2, argv + 2);
	path = raw_path(inst, argv[1]);
	if (!text || !path) {
		free(text);
		free(path);
		fdr_session_close(s);
		return die(1, "out of memory");
	}
	ret = write_path(s, path, text, flags);
	free(text);
	free(path);
	fdr_session_close(s);
	return ret;
}

static int cmd_write(int argc, char **argv)
{
	return cmd_write_common(argc, argv, O_TRUNC);
}

static int cmd_append(int argc, char **argv)
{
	return cmd_write_common(argc, argv, O_APPEND);
}

static int cmd_ls(int argc, char **argv)
{
	struct fdr_session *s;
	struct fdr_dirent *ents;
	const char *path = "";
	int ret, long_fmt = 0, i, is_dir;
	unsigned mode;
	size_t n, k;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-l") == 0)
			long_fmt = 1;
		else
			path = argv[i];
	}
	ret = open_session(&s);
	if (ret)
		return ret;
	ret = fdr_tree_stat(s, path, &is_dir, &mode);
	if (ret) {
		fdr_session_close(s);
		return die(1, "%s: no such file or directory in the control tree", path);
	}
	if (!is_dir) {
		printf("%s\n", path);
		fdr_session_close(s);
		return 0;
	}
	ret = fdr_tree_readdir(s, path, &ents, &n);
	if (ret) {
		fdr_session_close(s);
		return die(1, "%s: %s", path, strerror(-ret));
	}
	for (k = 0; k < n; k++) {
		if (long_fmt)
			printf("%c%c%c%c%c%c%c--- %s%s\n", ents[k].is_dir ? 'd' : '-',
			       ents[k].mode & 0400 ? 'r' : '-', ents[k].mode & 0200 ? 'w' : '-',
			       ents[k].mode & 0100 ? 'x' : '-', ents[k].mode & 040 ? 'r' : '-',
			       ents[k].mode & 020 ? 'w' : '-', ents[k].mode & 010 ? 'x' : '-',
			       ents[k].name, ents[k].is_dir ? "/" : "");
		else
			printf("%s%s\n", ents[k].name, ents[k].is_dir ? "/" : "");
	}
	free(ents);
	fdr_session_close(s);
	return 0;
}

static int cmd_mkdir_rmdir(int argc, char **argv, int mk)
{
	struct fdr_session *s;
	int ret, i;

	if (argc < 2)
		return usage_error(argc, argv, -1, "expected instances/NAME, found nothing");
	ret = open_session(&s);
	if (ret)
		return ret;
	for (i = 1; i < argc && !ret; i++) {
		int r = mk ? fdr_tree_mkdir(s, argv[i]) : fdr_tree_rmdir(s, argv[i]);

		if (r == -EPERM)
			ret = usage_error(argc, argv, i, "expected instances/NAME, found '%s'",
					  argv[i]);
		else if (r)
			ret = die_err(1, r, "%s", argv[i]);
	}
	fdr_session_close(s);
	return ret;
}

static int cmd_mkdir(int argc, char **argv)
{
	return cmd_mkdir_rmdir(argc, argv, 1);
}

static int cmd_rmdir(int argc, char **argv)
{
	return cmd_mkdir_rmdir(argc, argv, 0);
}

/* ---- verbs ------------------------------------------------------------------------------ */

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

/*
 * The one parser of the verbs' numeric arguments: argument @argi (or, when it is
 * an option with its value attached, "-c5" or "--cpu=5", getopt's optarg inside
 * it) as a decimal number from @min to @max, digits only (no sign, no spaces, no
 * suffix), range-checked before it is narrowed, so that 4294967297 is an error
 * and never CPU 1.
 */
int parse_num_arg(int argc, char **argv, int argi, const char *what, unsigned long min,
		  unsigned long max, unsigned long *out)
{
	const char *arg = argv[argi], *p;
	unsigned long v = 0;

	if (optarg && optarg >= arg && optarg <= arg + strlen(arg))
		arg = optarg;

	for (p = arg; *p >= '0' && *p <= '9'; p++) {
		if (v > (ULONG_MAX - 9) / 10) {
			v = ULONG_MAX; /* out of range whatever follows */
			break;
		}
		v = v * 10 + (unsigned long)(*p - '0');
	}
	if (p == arg || (*p && v != ULONG_MAX) || v < min || v > max)
		return usage_error(argc, argv, argi,
				   "expected %s (a number from %lu to %lu), found '%s'", what, min,
				   max, arg);
	*out = v;
	return 0;
}

int parse_uint_arg(int argc, char **argv, int argi, const char *what, unsigned long max,
		   unsigned long *out)
{
	return parse_num_arg(argc, argv, argi, what, 1, max, out);
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
		{ NULL, 0, NULL, 0 },
	};
	struct fdr_session_opts so = { 0 };
	struct fdr_session *s;
	char dir[4096], pre[FDR_NAME_LEN + 16], path[256];
	const char *events[64], *clock = NULL, *inst = NULL;
	unsigned long v;
	int nev = 0, c, ret, i, mode = 0, created, b_argi = -1;

	optind = 0; /* 0, not 1: glibc then resets its permutation state too */
	while ((c = getopt_long(argc, argv, "+b:m:e:S:C:i:", opts, NULL)) != -1) {
		switch (c) {
		case 'b':
			/* the bound depends on -S: checked below, after every option */
			ret = parse_uint_arg(argc, argv, optind - 1, "a buffer size in KiB per CPU",
					     UINT32_MAX, &v);
			if (ret)
				return ret;
			so.buffer_size_kb = (uint32_t)v;
			b_argi = optind - 1;
			break;
		case 'S':
			ret = parse_uint_arg(argc, argv, optind - 1, "a sub-buffer size in KiB",
					     512, &v);
			if (ret)
				return ret;
			so.subbuf_size = 4096;
			while (so.subbuf_size < v * 1024)
				so.subbuf_size <<= 1;
			break;
		case 'm':
			if (strcmp(optarg, "overwrite") == 0)
				mode = 1;
			else if (strcmp(optarg, "discard") == 0)
				mode = -1;
			else
				return usage_error(
					argc, argv, optind - 1,
					"expected a mode 'overwrite' or 'discard', found '%s'",
					optarg);
			so.overwrite = mode;
			break;
		case 'e':
			if (nev == 64)
				return usage_error(argc, argv, optind - 1,
						   "expected at most 64 -e options");
			events[nev++] = optarg;
			break;
		case 'C':
			clock = optarg;
			break;
		case 'i':
			inst = optarg;
			break;
		default:
			return usage_error(argc, argv, optind - 1, "unknown option");
		}
	}
	if (optind < argc)
		return usage_error(argc, argv, optind, "expected options only, found '%s'",
				   argv[optind]);
	if (so.buffer_size_kb > fdr_session_max_kb(so.subbuf_size ? so.subbuf_size : 4096))
		return usage_error(argc, argv, b_argi,
				   "expected a buffer size in KiB per CPU (a number from 1 to %u "
				   "with %u KiB sub-buffers), found '%u'",
				   fdr_session_max_kb(so.subbuf_size ? so.subbuf_size : 4096),
				   (so.subbuf_size ? so.subbuf_size : 4096) / 1024,
				   so.buffer_size_kb);
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
	if (!ret && (mode || (inst && *inst))) {
		snprintf(path, sizeof(path), "%soptions/overwrite", pre);
		ret = write_path(s, path, mode < 0 ? "0\n" : "1\n", O_TRUNC);
	}
	if (!ret && clock) {
		char *text = join_args(1, (char **)&clock);

		snprintf(path, sizeof(path), "%strace_clock", pre);
		ret = text ? write_path(s, path, text, O_TRUNC) : 1;
		free(text);
	}
	for (i = 0; i < nev && !ret; i++) {
		char *text = join_args(1, (char **)&events[i]);

		snprintf(path, sizeof(path), "%sset_event", pre);
		ret = text ? write_path(s, path, text, O_APPEND) : 1;
		free(text);
	}
	if (!ret) {
		snprintf(path, sizeof(path), "%stracing_on", pre);
		ret = write_path(s, path, "1\n", O_TRUNC);
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

/* Parse "-i INSTANCE" and "-c CPU" for show/pipe/stop/enable...; returns next argi. */
static int common_opts(int argc, char **argv, const char **inst, int *cpu, int *ret)
{
	int c;

	optind = 0; /* 0, not 1: glibc then resets its permutation state too */
	*ret = 0;
	/* options anywhere among the verb's words (GNU getopt permutes them) */
	while ((c = getopt(argc, argv, "i:c:")) != -1) {
		unsigned long v;

		switch (c) {
		case 'i':
			*inst = optarg;
			break;
		case 'c':
			if (!cpu) {
				*ret = usage_error(argc, argv, optind - 1,
						   "unknown option -c for this verb");
				return -1;
			}
			*ret = parse_num_arg(argc, argv, optind - 1, "a CPU number", 0,
					     FDR_MAX_CPUS - 1, &v);
			if (*ret)
				return -1;
			*cpu = (int)v;
			break;
		default:
			*ret = usage_error(argc, argv, optind - 1, "unknown option");
			return -1;
		}
	}
	return optind;
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
	fdr_session_close(s);
	return ret;
}

static int cmd_stop(int argc, char **argv)
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

		if (strcmp(de->d_name, "control") == 0 ||
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

static int cmd_destroy(int argc, char **argv)
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
		ret = destroy_corrupted(dir);
		if (ret)
			return die(1, "cannot remove the corrupted session %s: %s", dir,
				   strerror(-ret));
		fprintf(stderr, "fdr destroy: removed the corrupted session %s\n", dir);
		return 0;
	}
	if (ret)
		return open_error(dir, ret);
	ret = fdr_session_destroy(s);
	fdr_session_close(s);
	if (ret)
		return die_err(1, ret, "cannot remove the session");
	return 0;
}

static int cmd_enable_common(int argc, char **argv, int on)
{
	struct fdr_session *s;
	const char *inst = NULL;
	char pre[FDR_NAME_LEN + 16], path[256];
	int ret, i, argi = common_opts(argc, argv, &inst, NULL, &ret);

	if (argi < 0)
		return ret;
	if (argi >= argc)
		return usage_error(
			argc, argv, -1,
			"expected EVENTS (SYSTEM:EVENT, SYSTEM:*, *:EVENT, NAME; globs allowed), found nothing");
	ret = open_session(&s);
	if (ret)
		return ret;
	inst_prefix(inst, pre, sizeof(pre));
	snprintf(path, sizeof(path), "%sset_event", pre);
	for (i = argi; i < argc && !ret; i++) {
		char tok[512];

		if (argv[i][0] == '!' && on)
			snprintf(tok, sizeof(tok), "%s\n", argv[i]);
		else
			snprintf(tok, sizeof(tok), "%s%s\n", on ? "" : "!", argv[i]);
		ret = write_path(s, path, tok, O_APPEND);
	}
	fdr_session_close(s);
	return ret;
}

static int cmd_enable(int argc, char **argv)
{
	return cmd_enable_common(argc, argv, 1);
}

static int cmd_disable(int argc, char **argv)
{
	return cmd_enable_common(argc, argv, 0);
}

static int cmd_list(int argc, char **argv)
{
	struct fdr_session *s;
	const struct fdr_abi_control *c;
	const char *inst = NULL;
	uint32_t i, idx = 0;
	int ret, argi = common_opts(argc, argv, &inst, NULL, &ret);

	if (argi < 0)
		return ret;
	ret = open_session(&s);
	if (ret)
		return ret;
	c = fdr_session_control(s);
	idx = inst_index(c, inst);
	if (idx == FDR_MAX_INSTANCES) {
		fdr_session_close(s);
		return die(1, "no instance '%s'", inst);
	}
	for (i = 0; i < FDR_MAX_EVENTS; i++) {
		const struct fdr_abi_event *e = &c->events[i];
		char name[2 * FDR_NAME_LEN + 2];
		int k, match = argi >= argc;

		if (e->state != FDR_EVENT_READY || strncmp(e->system, "ftrace", FDR_NAME_LEN) == 0)
			continue; /* fdr's own record types: not events to enable */
		snprintf(name, sizeof(name), "%.*s:%.*s", FDR_NAME_LEN, e->system, FDR_NAME_LEN,
			 e->name);
		for (k = argi; k < argc && !match; k++) {
			char sys[FDR_NAME_LEN + 1], ev[FDR_NAME_LEN + 1];

			snprintf(sys, sizeof(sys), "%.*s", FDR_NAME_LEN, e->system);
			snprintf(ev, sizeof(ev), "%.*s", FDR_NAME_LEN, e->name);
			match = fdr_event_rule_match(argv[k], sys, ev);
		}
		if (match)
			printf("%s%s\n", name,
			       (e->enabled[idx / 64] >> (idx % 64)) & 1 ? " [enabled]" : "");
	}
	{
		const struct fdr_abi_instance *in = &c->instances[idx];

		for (i = 0; i < in->nr_pending && i < FDR_PENDING_RULES; i++)
			printf("%.*s [pending]\n", FDR_RULE_LEN, in->pending[i]);
	}
	fdr_session_close(s);
	return 0;
}

static int cmd_show_pipe(int argc, char **argv, int pipe)
{
	struct fdr_session *s;
	const char *inst = NULL;
	char pre[FDR_NAME_LEN + 16], path[256];
	int cpu = -1, ret, argi = common_opts(argc, argv, &inst, &cpu, &ret);

	if (argi < 0)
		return ret;
	if (argi < argc)
		return usage_error(argc, argv, argi, "expected no argument, found '%s'",
				   argv[argi]);
	ret = open_session(&s);
	if (ret)
		return ret;
	install_signals();
	inst_prefix(inst, pre, sizeof(pre));
	if (cpu >= 0)
		snprintf(path, sizeof(path), "%sper_cpu/cpu%d/%s", pre, cpu,
			 pipe ? "trace_pipe" : "trace");
	else
		snprintf(path, sizeof(path), "%s%s", pre, pipe ? "trace_pipe" : "trace");
	ret = cat_path(s, path, pipe);
	fdr_session_close(s);
	return ret;
}

static int cmd_show(int argc, char **argv)
{
	return cmd_show_pipe(argc, argv, 0);
}

static int cmd_pipe(int argc, char **argv)
{
	return cmd_show_pipe(argc, argv, 1);
}

/* Read a whole control file into @b. */
static int slurp(struct fdr_session *s, const char *path, struct fdr_buf *b)
{
	struct fdr_file *f;
	char buf[65536];
	ssize_t n;
	int ret = fdr_file_open(s, path, O_RDONLY, &f);

	if (ret)
		return ret;
	while ((n = fdr_file_read(f, buf, sizeof(buf))) > 0)
		if (fdr_buf_add(b, buf, (size_t)n)) {
			n = -ENOMEM;
			break;
		}
	fdr_file_close(f);
	return n < 0 ? (int)n : 0;
}

static int cmd_stat(int argc, char **argv)
{
	struct fdr_session *s;
	const struct fdr_abi_control *c;
	const char *inst = NULL;
	char pre[FDR_NAME_LEN + 16], path[256];
	int ret, cpu, nr, argi = common_opts(argc, argv, &inst, NULL, &ret);
	uint32_t idx = 0, i;

	if (argi < 0)
		return ret;
	ret = open_session(&s);
	if (ret)
		return ret;
	c = fdr_session_control(s);
	inst_prefix(inst, pre, sizeof(pre));
	idx = inst_index(c, inst);
	if (idx == FDR_MAX_INSTANCES) {
		fdr_session_close(s);
		return die(1, "no instance '%s'", inst);
	}
	if (session_path)
		printf("session: %s\n", fdr_session_path(s));
	else
		printf("session: %s (%s)\n", session_name, fdr_session_path(s));
	printf("instance: %s\n", idx ? inst : "(top)");
	printf("tracing_on: %u\n", c->instances[idx].tracing_on);
	printf("mode: %s\n",
	       c->instances[idx].options & FDR_OPT_OVERWRITE ? "overwrite" : "discard");
	printf("timestamps: %s\n",
	       c->ts_source == FDR_TS_TSC ? "tsc" : "clock_gettime(CLOCK_MONOTONIC)");
	printf("events enabled:");
	for (i = 0; i < FDR_MAX_EVENTS; i++) {
		const struct fdr_abi_event *e = &c->events[i];

		if (e->state == FDR_EVENT_READY && ((e->enabled[idx / 64] >> (idx % 64)) & 1))
			printf(" %.*s:%.*s", FDR_NAME_LEN, e->system, FDR_NAME_LEN, e->name);
	}
	printf("\n");
	if (c->dropped_no_slot)
		printf("dropped (no CPU slot / nesting / no rseq): %" PRIu64 "\n",
		       c->dropped_no_slot);
	{
		void *base;
		size_t size;

		if (fdr_session_ring(s, idx, &base, &size) == 0) {
			const struct fdr_abi_ring *h = base;

			printf("snapshot: %s, %" PRIu64 " taken, %" PRIu64 " refused%s\n",
			       h->spare_allocated ? "allocated" : "freed", h->snap_count,
			       h->snap_refused, h->saver_pid ? ", a saver is attached" : "");
		}
	}
	nr = fdr_ring_nr_cpus(s, idx);
	if (nr < 0) {
		fflush(stdout);
		ret = die_err(1, nr, "the ring file of instance %s", idx ? inst : "(top)");
	}
	/* every CPU, even after one that failed (a corrupt one is skipped, said once) */
	for (cpu = 0; cpu < nr; cpu++) {
		struct fdr_buf kb = { 0 };
		int r;

		snprintf(path, sizeof(path), "%sper_cpu/cpu%d/buffer_size_kb", pre, cpu);
		/* the file, not the geometry: it reads back the size written (tree.c) */
		if (slurp(s, path, &kb) == 0 && kb.len)
			printf("cpu%d: buffer_size_kb %.*s", cpu, (int)kb.len, kb.data);
		else
			printf("cpu%d: buffer_size_kb %d\n", cpu,
			       fdr_ring_cpu_size_kb(s, idx, (uint32_t)cpu));
		fdr_buf_free(&kb);
		fflush(stdout);
		snprintf(path, sizeof(path), "%sper_cpu/cpu%d/stats", pre, cpu);
		r = cat_path(s, path, 0);
		if (r && !ret)
			ret = r;
	}
	fdr_session_close(s);
	return ret;
}

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
	uint64_t last_beat = 0, refused = 0, refused_seen = 0;
	const struct fdr_abi_ring *seen_h = NULL;
	unsigned saved = 0;
	int ret = 0;

	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return die(1, "%s: %s", dir, strerror(errno));
	snprintf(path, sizeof(path), "%ssnapshot", pre);
	fprintf(stderr, "fdr snapshot: saving every snapshot into %s (Ctrl-C stops)\n", dir);
	for (;;) {
		/* after a stop request, one more round saves a snapshot already taken */
		int last_round = stop_requested;
		struct fdr_abi_ring *h;
		void *base;
		size_t size;
		/* the heartbeat is on the lease clock, which fdr_ring_swap() compares with */
		uint64_t seq, now = fdr_session_lease_ns(s);

		ret = fdr_session_ring(s, inst, &base, &size);
		if (ret) {
			ret = die_err(1, ret, "instance gone");
			break;
		}
		h = base;
		/*
		 * The snapshots refused while we run (mostly: taken before we had
		 * written the previous one), for the summary; a new ring file (a
		 * resize) counts from its own start.
		 */
		{
			uint64_t r = __atomic_load_n(&h->snap_refused, __ATOMIC_RELAXED);

			if (h == seen_h && r >= refused_seen)
				refused += r - refused_seen;
			seen_h = h;
			refused_seen = r;
		}
		if (__atomic_load_n(&h->saver_pid, __ATOMIC_ACQUIRE) != (uint32_t)getpid()) {
			/* attach (again, after a resize made a new ring file) */
			__atomic_store_n(&h->saved_seq,
					 __atomic_load_n(&h->snap_seq, __ATOMIC_ACQUIRE) & ~1ull,
					 __ATOMIC_RELEASE);
			__atomic_store_n(&h->saver_beat_ns, now, __ATOMIC_RELEASE);
			__atomic_store_n(&h->saver_pid, (uint32_t)getpid(), __ATOMIC_RELEASE);
		}
		if (fdr_lease_age(now, last_beat) > 100000000ull) {
			__atomic_store_n(&h->saver_beat_ns, now, __ATOMIC_RELEASE);
			last_beat = now;
		}
		seq = __atomic_load_n(&h->snap_seq, __ATOMIC_ACQUIRE);
		if (!(seq & 1) && seq != __atomic_load_n(&h->saved_seq, __ATOMIC_ACQUIRE)) {
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
			/* release: the next snapshot may be taken now */
			__atomic_store_n(&h->saved_seq, seq, __ATOMIC_RELEASE);
			printf("%s\n", file);
			fflush(stdout);
		} else if (!last_round) {
			struct timespec d = { 0, 2 * 1000 * 1000 };

			nanosleep(&d, NULL);
		}
		if (last_round)
			break;
	}
	{
		void *base;
		size_t size;

		if (fdr_session_ring(s, inst, &base, &size) == 0) {
			uint32_t me = (uint32_t)getpid();

			__atomic_compare_exchange_n(&((struct fdr_abi_ring *)base)->saver_pid, &me,
						    0, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
		}
	}
	fprintf(stderr,
		"fdr snapshot: %u snapshot%s saved, %" PRIu64 " refused (taken before the previous "
		"one was saved, or during another swap)\n",
		saved, saved == 1 ? "" : "s", refused);
	return ret;
}

/* fdr snapshot [take|show|clear|alloc|free|save DIR] [-i INSTANCE] [-c CPU] */
static int cmd_snapshot(int argc, char **argv)
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
		ret = idx == FDR_MAX_INSTANCES ? -ENOENT : fdr_session_lock(s);
		if (!ret) {
			ret = fdr_session_snapshot_alloc(s, idx, 1);
			fdr_session_unlock(s);
		}
		if (ret)
			ret = die_err(1, ret, "cannot allocate the snapshot buffers");
		else if (save_dir)
			ret = snapshot_save(s, idx, pre, save_dir, fmt);
	}
	fdr_session_close(s);
	return ret;
}

/* fdr mount [-f] [--allow-other] [--debug] MOUNTPOINT */
#ifdef FDR_HAVE_FUSE
/*
 * -o OPTS of fdr mount: tracefs's uid=N and gid=N (numbers, or user and group
 * names), comma-separated; the owner of every file of the mount.
 */
static int mount_opts(int argc, char **argv, int at, const char *opts, struct fdr_mount_opts *mo)
{
	char *copy = strdup(opts), *tok, *save = NULL;
	int ret = 0;

	if (!copy)
		return die(1, "out of memory");
	for (tok = strtok_r(copy, ",", &save); tok && !ret; tok = strtok_r(NULL, ",", &save)) {
		char *v = strchr(tok, '='), *end;
		long n;

		if (!v || (strncmp(tok, "uid=", 4) && strncmp(tok, "gid=", 4))) {
			ret = usage_error(
				argc, argv, at,
				"expected -o uid=N or gid=N (comma-separated), found '%s'", tok);
			break;
		}
		v++;
		errno = 0;
		n = strtol(v, &end, 10);
		if (*v && !*end && !errno && n >= 0 && n < UINT32_MAX) {
			/* a number */
		} else if (tok[0] == 'u' && getpwnam(v)) {
			n = (long)getpwnam(v)->pw_uid;
		} else if (tok[0] == 'g' && getgrnam(v)) {
			n = (long)getgrnam(v)->gr_gid;
		} else {
			ret = usage_error(argc, argv, at,
					  "expected a %s number or name after %.4s, found '%s'",
					  tok[0] == 'u' ? "user" : "group", tok, v);
			break;
		}
		if (tok[0] == 'u')
			mo->uid = n;
		else
			mo->gid = n;
	}
	free(copy);
	return ret;
}

static int cmd_mount(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "foreground", no_argument, NULL, 'f' },
		{ "allow-other", no_argument, NULL, 'a' },
		{ "debug", no_argument, NULL, 'D' },
		{ NULL, 0, NULL, 0 },
	};
	struct fdr_mount_opts mo = { .uid = -1, .gid = -1 };
	struct fdr_session *s;
	int c, ret;

	optind = 0; /* 0, not 1: glibc then resets its permutation state too */
	while ((c = getopt_long(argc, argv, "fo:", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			mo.foreground = 1;
			break;
		case 'a':
			mo.allow_other = 1;
			break;
		case 'o':
			ret = mount_opts(argc, argv, optind - 1, optarg, &mo);
			if (ret)
				return ret;
			break;
		case 'D':
			mo.debug = mo.foreground = 1;
			break;
		default:
			return usage_error(argc, argv, optind - 1, "unknown option");
		}
	}
	if (optind >= argc)
		return usage_error(argc, argv, -1,
				   "expected MOUNTPOINT (a directory), found nothing");
	if (optind + 1 < argc)
		return usage_error(argc, argv, optind + 1, "expected one MOUNTPOINT, found '%s'",
				   argv[optind + 1]);
	ret = open_session(&s);
	if (ret)
		return ret;
	mo.name = session_path ? NULL : session_name;
	ret = fdr_mount_run(s, argv[optind], &mo);
	fdr_session_close(s);
	return ret;
}
#else
static int cmd_mount(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return die(1, "this fdr was built without FUSE support (libfuse3 >= 3.12 was not found "
		      "when it was configured; on Debian install libfuse3-dev and rebuild)");
}
#endif

static int cmd_help(int argc, char **argv);

static const struct verb verbs[] = {
	{ "start", cmd_start,
	  "start [-b KB] [-m overwrite|discard] [-e EVENTS]... [-S SUBBUF_KB] [-C CLOCK] [-i INSTANCE]",
	  "Create the session if needed, apply the options, enable EVENTS (names or globs,\n"
	  "also of events not registered yet) and turn tracing on." },
	{ "stop", cmd_stop, "stop [-i INSTANCE]",
	  "Turn tracing off (tracing_on = 0); the buffers are kept." },
	{ "destroy", cmd_destroy, "destroy",
	  "Remove the session and everything recorded in it (a corrupted one too)." },
	{ "list", cmd_list, "list [-i INSTANCE] [PATTERN...]",
	  "List registered events ([enabled] marks the enabled ones) and pending rules." },
	{ "enable", cmd_enable, "enable [-i INSTANCE] EVENTS...",
	  "Enable events: SYSTEM:EVENT, SYSTEM:*, *:EVENT or NAME, globs allowed (set_event >>)." },
	{ "disable", cmd_disable, "disable [-i INSTANCE] EVENTS...",
	  "Disable events (set_event >> !EVENTS)." },
	{ "show", cmd_show, "show [-i INSTANCE] [-c CPU]",
	  "Print the trace (the 'trace' file), without consuming it." },
	{ "pipe", cmd_pipe, "pipe [-i INSTANCE] [-c CPU]",
	  "Follow the trace, consuming it ('trace_pipe'); Ctrl-C stops." },
	{ "snapshot", cmd_snapshot,
	  "snapshot [take|show|clear|alloc|free|save [--format F] DIR] [-i INSTANCE] [-c CPU]",
	  "take (the default): swap in the spare buffers, freezing what was recorded while\n"
	  "tracing goes on (allocates the spare buffers first if needed); show: print the\n"
	  "snapshot ('snapshot' file); clear: empty it; alloc: allocate the spare buffers so\n"
	  "that applications (fdr_snapshot()) can take snapshots; free: release them;\n"
	  "save DIR: allocate, then write every snapshot taken from now on, by anyone, to\n"
	  "its own file in DIR until Ctrl-C (a snapshot is refused until the previous one\n"
	  "is written, so each file is whole); --format text (the default, as 'show'),\n"
	  "dat (trace.dat, for trace-cmd and KernelShark), ctf (a CTF directory, for\n"
	  "babeltrace2 and Trace Compass) or perfetto (JSON, for ui.perfetto.dev)." },
	{ "export", cmd_export,
	  "export --format ctf|perfetto|text -o OUT [-i INSTANCE] [--snapshot] [FILE]",
	  "Write the trace in another tool's format, without consuming it: ctf (a CTF 1.8\n"
	  "directory for babeltrace2 and Trace Compass), perfetto (Chrome JSON for\n"
	  "ui.perfetto.dev and trace_processor) or text (the 'trace' file). The source is\n"
	  "the session's instance (its snapshot with --snapshot), or the trace.dat FILE.\n"
	  "OUT appears only when complete; '-o -' writes perfetto or text to stdout." },
	{ "record", cmd_record,
	  "record [-i INSTANCE] [-e EVENTS]... [-o FILE] [-b KB] [-m overwrite|discard] [-r PRIO]\n"
	  "       [[--] CMD [ARGS...]]",
	  "Like trace-cmd record: enable EVENTS (creating the session if needed, as start\n"
	  "does), empty the buffers, run CMD (pointed at the session) and record every\n"
	  "CPU's buffer, consuming it, until CMD exits or Ctrl-C/SIGTERM, into FILE (default\n"
	  "trace.dat), a trace-cmd file (version 7) for trace-cmd report and KernelShark,\n"
	  "valid at every moment while it grows. Shows progress on a terminal and a per-CPU\n"
	  "summary (events, bytes, lost) at the end; exits with CMD's status. tracing_on is\n"
	  "left as it was before (off for a new session).\n"
	  "-r PRIO (--realtime): read each CPU's buffer from a thread pinned to that CPU at\n"
	  "SCHED_FIFO priority PRIO (1-99), so that the reader runs whenever the writers\n"
	  "there do (for machines that keep a reader off its CPU longer than a buffer lasts)." },
	{ "extract", cmd_extract, "extract [-i INSTANCE] [--snapshot] [-o FILE]",
	  "Save what the buffers hold now (not consuming them), or the snapshot, as a\n"
	  "trace-cmd file FILE (default trace.dat)." },
	{ "report", cmd_report, "report [-i FILE] [-e EVENTS]... [-F FILTER]... [--cpu N] [FILE]",
	  "Print a trace.dat file (trace-cmd's format, versions 6 and 7, uncompressed; the\n"
	  "default FILE is trace.dat) as 'show' prints a trace: -e selects events (names\n"
	  "and globs, as 'enable' takes them; repeat or separate with commas), -F keeps the\n"
	  "records that match a filter in the kernel's grammar (events without its fields\n"
	  "are left out), --cpu (-c) keeps one CPU." },
	{ "stat", cmd_stat, "stat [-i INSTANCE]",
	  "Show the session's state and per-CPU statistics." },
	{ "cat", cmd_cat, "cat [-i INSTANCE] PATH...",
	  "Read control-tree files, like cat on tracefs; -i: the instance's files." },
	{ "write", cmd_write, "write [-i INSTANCE] PATH VALUE...",
	  "Write VALUE... to PATH, like 'echo VALUE... > PATH'." },
	{ "append", cmd_append, "append [-i INSTANCE] PATH VALUE...",
	  "Append to PATH, like 'echo VALUE... >> PATH'." },
	{ "ls", cmd_ls, "ls [-l] [PATH]", "List a directory of the control tree." },
	{ "mkdir", cmd_mkdir, "mkdir instances/NAME...",
	  "Create instances (independent buffers)." },
	{ "rmdir", cmd_rmdir, "rmdir instances/NAME...", "Remove instances." },
	{ "mount", cmd_mount, "mount [-f] [--allow-other] [-o uid=N,gid=N] [--debug] MOUNTPOINT",
	  "Serve the control tree as a filesystem on MOUNTPOINT (FUSE), so that echo, cat,\n"
	  "mkdir, rmdir and trace-cmd (see fdr-tracecmd) use it as they use tracefs. Goes\n"
	  "to the background once the mount is ready, unless -f; unmount with\n"
	  "'fusermount3 -u MOUNTPOINT' or stop the server with SIGINT/SIGTERM.\n"
	  "--allow-other lets other users in (file modes still apply; non-root users need\n"
	  "user_allow_other in /etc/fuse.conf); -o uid=N,gid=N makes every file that user's\n"
	  "and group's (names or numbers), as tracefs's mount options do, to hand tracing to\n"
	  "a group; chown and chgrp change one file's owner for the life of the mount;\n"
	  "--debug prints libfuse's requests (implies -f)." },
	{ "help", cmd_help, "help [VERB]", "Show help." },
};
#define NR_VERBS (sizeof(verbs) / sizeof(verbs[0]))

static void usage(FILE *out)
{
	size_t i;

	fprintf(out,
		"usage: fdr [-s SESSION | -d DIR] VERB [ARGS...]\n"
		"       fdr --version | --help\n\n"
		"The session is -s SESSION, else $FDR_SESSION, else 'default'; sessions live in\n"
		"$FDR_ROOT (default /dev/shm/fdr-UID). -d DIR (or $FDR_DIR) names a session\n"
		"directory anywhere, e.g. on disk: it outlives every process, and it can be\n"
		"copied to another machine and read there.\n\nVerbs:\n");
	for (i = 0; i < NR_VERBS; i++)
		fprintf(out, "  %s\n", verbs[i].usage);
	fprintf(out,
		"\nPaths are those of tracefs: trace, trace_pipe, set_event, events/SYS/EVENT/enable...\n"
		"See fdr(1).\n");
}

static void verb_usage(size_t i)
{
	printf("usage: fdr [-s SESSION | -d DIR] %s\n\n%s\n", verbs[i].usage, verbs[i].help);
}

/*
 * Does the verb's command line ask for its usage? -h or --help among its
 * options (before "--"); for cat, write and append, whose other arguments are
 * paths and values, only as the first argument.
 */
static int wants_help(int argc, char **argv)
{
	int raw = !strcmp(argv[0], "cat") || !strcmp(argv[0], "write") ||
		  !strcmp(argv[0], "append"),
	    i;

	for (i = 1; i < argc && (!raw || i == 1) && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
			return 1;
	return 0;
}

static int cmd_help(int argc, char **argv)
{
	size_t i;

	if (argc < 2) {
		usage(stdout);
		return 0;
	}
	for (i = 0; i < NR_VERBS; i++) {
		if (strcmp(verbs[i].name, argv[1]) == 0) {
			verb_usage(i);
			return 0;
		}
	}
	return usage_error(argc, argv, 1, "expected a verb (see 'fdr help'), found '%s'", argv[1]);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "session", required_argument, NULL, 's' },
		{ "dir", required_argument, NULL, 'd' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	size_t i;
	int c;

	session_name = fdr_session_default_name();
	if (getenv("FDR_DIR") && *getenv("FDR_DIR"))
		session_path = getenv("FDR_DIR");
	while ((c = getopt_long(argc, argv, "+s:d:hV", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			session_name = optarg;
			session_path = NULL;
			break;
		case 'd':
			session_path = optarg;
			break;
		case 'V':
			printf("fdr %s\n", fdr_version());
			return 0;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return EXIT_USAGE;
	}
	for (i = 0; i < NR_VERBS; i++) {
		if (strcmp(verbs[i].name, argv[optind]) == 0) {
			int ret;

			verb = verbs[i].name;
			if (wants_help(argc - optind, argv + optind)) {
				verb_usage(i);
				return 0;
			}
			ret = verbs[i].fn(argc - optind, argv + optind);
			/* what the libraries skipped or refused as corrupt, and where */
			if (fdr_shm_error()[0])
				fprintf(stderr, "fdr %s: corrupt shared memory: %s\n", verb,
					fdr_shm_error());
			return ret;
		}
	}
	fprintf(stderr,
		"fdr: expected a verb (start, stop, show, pipe, cat, write, ... see 'fdr help'), found '%s'\n",
		argv[optind]);
	return EXIT_USAGE;
}
