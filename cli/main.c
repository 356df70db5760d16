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
 *
 * This file holds what every verb shares: the session options, error reporting,
 * the parsing of numbers and of -i/-c, the table of verbs with their usage and
 * help, and the dispatch. The verbs live in one file per group (cli.h lists
 * them): session.c (start, stop, destroy), files.c (cat, write, append, ls,
 * mkdir, rmdir), events.c (list, enable, disable), show.c (show, pipe, stat),
 * snapshot.c, record.c (record, extract), report.c, export.c, probe.c and
 * mount-cmd.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fdr/fdr-ctl.h"
#include "fdr/fdr-trace.h"
#include "cli.h"
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
char cur_session_dir[4096]; /* the session being used, for messages */

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
/* Parse "-i INSTANCE" and "-c CPU" for show/pipe/stop/enable...; returns next argi. */
int common_opts(int argc, char **argv, const char **inst, int *cpu, int *ret)
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
static int cmd_help(int argc, char **argv);

static const struct verb verbs[] = {
	{ "start", cmd_start,
	  "start [-b KB] [-m overwrite|discard] [-e EVENTS]... [-k KEVENTS]... [-S SUBBUF_KB] [-C CLOCK] [-i INSTANCE]",
	  "Create the session if needed, apply the options, enable EVENTS (names or globs,\n"
	  "also of events not registered yet) and turn tracing on. -k KEVENTS (kernel\n"
	  "events, 'sched:sched_switch,irq:*') links a kernel tracefs instance fdr-NAME-HASH\n"
	  "recording them on fdr's clock: fdr show merges its lines (marked 'K'), fdr stop\n"
	  "stops it, fdr destroy removes it." },
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
	  "snapshot [take|show|clear|alloc|free|save [--format F] DIR|\n"
	  "          save --relayd net://HOST[:CPORT[:DPORT]] [--hostname H] [DIR]]\n"
	  "         [-i INSTANCE] [-c CPU]",
	  "take (the default): swap in the spare buffers, freezing what was recorded while\n"
	  "tracing goes on (allocates the spare buffers first if needed); show: print the\n"
	  "snapshot ('snapshot' file); clear: empty it; alloc: allocate the spare buffers so\n"
	  "that applications (fdr_snapshot()) can take snapshots; free: release them;\n"
	  "save DIR: allocate, then write every snapshot taken from now on, by anyone, to\n"
	  "its own file in DIR until Ctrl-C (a snapshot is refused until the previous one\n"
	  "is written, so each file is whole); --format text (the default, as 'show'),\n"
	  "dat (trace.dat, for trace-cmd and KernelShark), ctf (a CTF directory, for\n"
	  "babeltrace2 and Trace Compass) or perfetto (JSON, for ui.perfetto.dev).\n"
	  "save --relayd URL: send each snapshot to LTTng's lttng-relayd instead, as a trace\n"
	  "chunk of a snapshot session under HOST (--hostname, $FDR_HOSTNAME or the\n"
	  "machine's); one it cannot send is kept as CTF in DIR (fdr-relay-unsent)." },
	{ "relay", cmd_relay,
	  "relay net://HOST[:CPORT[:DPORT]] [--live-timer US] [--hostname H] [-r PRIO] [-i INSTANCE]",
	  "Stream the instance live to LTTng's lttng-relayd (consuming it, as 'pipe'),\n"
	  "one packet per CPU every live timer period (default 1000000 us), for\n"
	  "babeltrace2 -i lttng-live; Ctrl-C stops. HOST: --hostname, $FDR_HOSTNAME or\n"
	  "the machine's. -r PRIO: read at SCHED_FIFO priority PRIO (1-99)." },
	{ "export", cmd_export,
	  "export --format ctf|perfetto|perfetto-proto|text -o OUT [-i INSTANCE] [--snapshot] [FILE]\n"
	  "       export --relayd net://HOST[:CPORT[:DPORT]] [--hostname H] [-i INSTANCE] [--snapshot] [FILE]",
	  "Write the trace in another tool's format, without consuming it: ctf (a CTF 1.8\n"
	  "directory for babeltrace2 and Trace Compass), perfetto (Chrome JSON for\n"
	  "ui.perfetto.dev and trace_processor), perfetto-proto (Perfetto's protobuf: the\n"
	  "kernel's sched_switch/sched_wakeup records as CPU and thread-state tracks) or\n"
	  "text (the 'trace' file). The source is the session's instance (its snapshot\n"
	  "with --snapshot), or the trace.dat FILE, all its buffers (fdr record -k: fdr's\n"
	  "and the kernel's). OUT appears only when complete; '-o -' writes perfetto,\n"
	  "perfetto-proto or text to stdout. --relayd sends it as CTF to LTTng's lttng-relayd,\n"
	  "one trace chunk HOST/NAME-DATE/export-DATE (NAME: the session's, or FILE's)." },
	{ "record", cmd_record,
	  "record [-i INSTANCE] [-e EVENTS]... [-k KEVENTS]... [-o FILE] [-b KB] [-m overwrite|discard]\n"
	  "       [-r PRIO] [--relayd net://HOST[:CPORT[:DPORT]] [--hostname H]] [[--] CMD [ARGS...]]",
	  "Like trace-cmd record: enable EVENTS (creating the session if needed, as start\n"
	  "does), empty the buffers, run CMD (pointed at the session) and record every\n"
	  "CPU's buffer, consuming it, until CMD exits or Ctrl-C/SIGTERM, into FILE (default\n"
	  "trace.dat), a trace-cmd file (version 7) for trace-cmd report and KernelShark,\n"
	  "valid at every moment while it grows. Shows progress on a terminal and a per-CPU\n"
	  "summary (events, bytes, lost) at the end; exits with CMD's status. tracing_on is\n"
	  "left as it was before (off for a new session).\n"
	  "-r PRIO (--realtime): read each CPU's buffer from a thread pinned to that CPU at\n"
	  "SCHED_FIFO priority PRIO (1-99), so that the reader runs whenever the writers\n"
	  "there do (for machines that keep a reader off its CPU longer than a buffer lasts).\n"
	  "-k KEVENTS (--kernel-events): also record those kernel events (as start -k) in a\n"
	  "kernel tracefs instance made for the recording; its pages go into FILE as a\n"
	  "second buffer (spliced from trace_pipe_raw while recording), so trace-cmd report,\n"
	  "fdr report and fdr export show both interleaved; fdr's event ids are moved above\n"
	  "the kernel's; the instance is removed at the end.\n"
	  "--relayd URL: at the end FILE is also sent to LTTng's lttng-relayd, as\n"
	  "'export --relayd FILE' sends it (FILE stays)." },
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
	{ "probe", cmd_probe,
	  "probe -x BINARY|-p PID [-n] [-v|-q] [-f] [-a] '[[GROUP:]EVENT=]POINT [ARG...]'...\n"
	  "       probe [-n] -d [GROUP:]EVENT_GLOB...  |  probe -l\n"
	  "       probe -x BINARY -F [FILTER]  |  probe -x BINARY -V POINT [--externs]\n"
	  "       probe -x BINARY -L 'FUNC[@SRC][:START[+NUM|-END]]' | -L 'SRC[:START[+NUM|-END]]'",
	  "Like perf probe: define probe events from the debug information (DWARF) of\n"
	  "BINARY and append them to uprobe_events. POINT is FUNC[@SRC][+OFF|:RELLINE|%return]\n"
	  "or SRC:LINE; ARG is VAR, VAR->MEMBER, VAR.MEMBER, VAR[N] and chains of them,\n"
	  "NAME=ARG, ARG:TYPE (:string for char *), $params, $vars, $retval (%return) or any\n"
	  "raw fetch argument. The group is probe_BINARY, the event FUNC (FUNC_L<line>,\n"
	  "FUNC__return); -f adds _1, _2... to a name in use. -n: print, add nothing;\n"
	  "-v: print each uprobe_events line (\"Writing event: ...\"); -q: quiet; -p PID: the\n"
	  "executable of process PID as BINARY.\n"
	  "-d: remove the matching probe events; -l: list them. -F: the symbols that can be\n"
	  "probed (FILTER: a glob); -V: the variables available at POINT, with their types\n"
	  "(--externs: and the file's globals; --no-inlines, for -V and --add: functions\n"
	  "without code of their own are left out); -L: the source, the lines that can be probed\n"
	  "numbered (from FUNC's declaration, or of SRC)." },
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
	{ "attach", cmd_attach, "attach PID",
	  "Bring the probe agent into running process PID, which neither links libfdr nor\n"
	  "runs with LD_PRELOAD: it then arms the session's dynamic probes (uprobe_events)\n"
	  "and records their hits into the session. Needs the right to ptrace PID (the same\n"
	  "user, or CAP_SYS_PTRACE); one thread is stopped for well under a millisecond\n"
	  "typically, and fdr may die at any point without harm to PID. x86-64, glibc 2.34+." },
	{ "detach", cmd_detach, "detach PID",
	  "Take the probe agent of 'fdr attach' out of PID again: every probe disarmed (the\n"
	  "original bytes back), the session left. The library stays loaded, idle." },
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
			/* kernel instances of sessions that are gone (fdr killed) */
			if (verbs[i].fn != cmd_help)
				ktrace_reap();
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
