// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * tree.c - the control tree: tracefs files over a session (docs/tracefs.md;
 * docs/design/differences.md says where fdr differs from the kernel's tracefs).
 *
 * A path resolves to a node: an instance (the top one, or instances/NAME), a
 * directory or a file, and for some files a CPU, an event system and name. The
 * CLI and the FUSE server both go through fdr_file_open/read/write/close, so a
 * path behaves the same way whichever front end reaches it.
 *
 * The table. Every file and every fixed directory of the tree is one row of
 * tree_files[] (struct tree_file): its name, the kind of directory it appears in
 * (@in: the root of an instance, events/, events/SYS/, events/SYS/EVENT/,
 * options/, per_cpu/cpuN/), its mode, flags saying where it is hidden (TF_TOP_ONLY:
 * only in the top instance; TF_NOT_FTRACE: not under events/ftrace, fdr's own
 * record types) and what an open handle does (TF_NO_HOLD: does not keep an
 * instance busy), and its handlers. A row with @sub set is a directory and names
 * the kind of directory it opens. The directories whose entries come from the
 * session (instances/NAME, events/SYS, events/SYS/EVENT, per_cpu/cpuN) are the
 * "dynamic children" of tree_dirs[], one lookup and one list function per kind;
 * so are the files of options/, one per line of tree_options[] (the list
 * trace_options reads and takes too), all with option_file's handlers.
 * resolve() walks a path through both: at each component it tries the rows of
 * the current directory kind first (a file row only as the last component), then
 * the directory's dynamic children. fdr_tree_readdir() lists the visible rows in
 * table order, then the dynamic children; fdr_tree_stat() is resolve(). Nothing
 * else in this file names a file: open, read, write and poll call the row's
 * handlers.
 *
 * The handlers of a row (all optional):
 *   open(f)            at open, after the access checks (the pipes take their reader)
 *   trunc(f)           at an open with O_TRUNC for writing (shell '>')
 *   render(f, buf)     an ordinary file: its whole text, made at the first read
 *   read(f, buf, n)    a stream (trace, trace_pipe...): instead of render
 *   write(f, cmd, n)   one command: the bytes as a string, NUL bytes refused, one
 *                      trailing newline removed (@n: the length written)
 *   write_raw(f, buf, n)  the bytes as written (trace_marker), instead of write
 *   poll(f, ms)        a file whose read can block; without it, always readable
 * A file with neither render nor read is write-only (reads give -EINVAL); one
 * with neither write nor write_raw refuses writes (-EACCES). @arg is the row's
 * own datum: the reader flags (FDR_READ_*) of a stream.
 *
 * How to add a file: write its handlers (render_NAME, write_NAME, ...) above the
 * table, then add one row to tree_files[] in the place readdir should list it;
 * that is all (a new kind of directory adds a tree_dir and, if its entries come
 * from the session, a line in tree_dirs[]). An option is a line of tree_options[].
 *
 * Reads: ordinary files are generated whole at the first read and then served by
 * offset, like a seq_file. trace streams: a non-consuming reader is kept in the
 * handle and formats records as the caller reads. trace_pipe and trace_pipe_raw
 * consume (one reader per CPU, EBUSY otherwise), block unless O_NONBLOCK, and keep
 * the unread tail of formatted text in the handle.
 *
 * Writes: each write(2) is one command. Bad input returns -EINVAL, leaves a
 * message in the handle (fdr_file_error) and appends the tracefs-style entry,
 * with a caret under the offending byte, to the instance's error_log. Changes
 * to shared state are made under the session's robust lock, then announced with
 * fdr_session_changed() so attached processes resynchronise at once.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

#include "fdr/fdr-read.h"
#include "fdr/fdr-trace.h"
#include "ctl-local.h"
#include "probes.h"
#include "common/pid-list.h"
#include "core/core-local.h" /* fdr_events_bound() */

/* The kinds of directory: where a row appears, and what a directory row opens. */
enum tree_dir {
	D_NONE, /* a file row's @sub */
	D_ROOT, /* the top instance, or instances/NAME */
	D_INSTANCES,
	D_EVENTS,
	D_SYS, /* events/SYS */
	D_EVENT, /* events/SYS/EVENT */
	D_OPTIONS,
	D_PER_CPU,
	D_CPU, /* per_cpu/cpuN */
	NR_DIRS
};

#define TF_TOP_ONLY 1u /* only in the top instance */
#define TF_NOT_FTRACE 2u /* not under events/ftrace: fdr's record types have no enable, filter */
#define TF_NO_HOLD 4u /* an open handle does not keep its instance busy (rmdir works) */

struct fdr_file;

/* One file or fixed directory of the tree: see the essay above. */
struct tree_file {
	const char *name;
	enum tree_dir in; /* the kind of directory it is in */
	unsigned mode;
	unsigned flags; /* TF_* */
	enum tree_dir sub; /* a directory: its kind; D_NONE for a file */
	uint32_t arg; /* a stream's FDR_READ_* flags */
	int (*open)(struct fdr_file *f);
	int (*trunc)(struct fdr_file *f);
	int (*render)(struct fdr_file *f, struct fdr_buf *b);
	ssize_t (*read)(struct fdr_file *f, void *buf, size_t n);
	int (*write)(struct fdr_file *f, char *cmd, size_t n);
	ssize_t (*write_raw)(struct fdr_file *f, const void *buf, size_t n);
	int (*poll)(struct fdr_file *f, int timeout_ms);
};

/*
 * Options with an effect in fdr, in the kernel's trace_options order: the files
 * of options/ (one per line, the dynamic children of D_OPTIONS) and the names
 * trace_options reads and takes. Adding an option is adding a line.
 */
static const struct {
	const char *name;
	uint32_t bit;
	int top_only;
} tree_options[] = {
	{ "context-info", FDR_OPT_CONTEXT_INFO, 0 },
	{ "record-cmd", FDR_OPT_RECORD_CMD, 1 },
	{ "record-tgid", FDR_OPT_RECORD_TGID, 0 },
	{ "overwrite", FDR_OPT_OVERWRITE, 0 },
	{ "irq-info", FDR_OPT_IRQ_INFO, 0 },
	{ "markers", FDR_OPT_MARKERS, 0 },
	{ "event-fork", FDR_OPT_EVENT_FORK, 0 },
	{ "stacktrace", FDR_OPT_STACKTRACE, 0 },
	/* fdr's own, not the kernel's: jump-optimised dynamic probes (docs/tracefs.md) */
	{ "probe_optimize", FDR_OPT_PROBE_OPTIMIZE, 1 },
};
#define NR_OPTIONS (sizeof(tree_options) / sizeof(tree_options[0]))

/* the order trace_clock lists them in */
static const uint32_t clock_order[] = { FDR_CLOCK_LOCAL,    FDR_CLOCK_GLOBAL, FDR_CLOCK_COUNTER,
					FDR_CLOCK_UPTIME,   FDR_CLOCK_PERF,   FDR_CLOCK_MONO,
					FDR_CLOCK_MONO_RAW, FDR_CLOCK_BOOT,   FDR_CLOCK_TAI,
					FDR_CLOCK_X86_TSC };

/* A resolved path: a directory (@file NULL, of kind @dir) or a file (@file). */
struct tree_path {
	const struct tree_file *file;
	enum tree_dir dir;
	uint32_t inst;
	int cpu; /* per_cpu/cpuN; -1 elsewhere */
	char sys[FDR_NAME_LEN];
	char ev[FDR_NAME_LEN];
	int opt; /* options/NAME: its index in tree_options */
};

struct fdr_file {
	struct fdr_session *s;
	struct tree_path p;
	int flags;
	struct fdr_buf content; /* generated text */
	size_t off; /* read offset in content */
	int generated;
	struct fdr_reader *reader; /* trace, trace_pipe, trace_pipe_raw */
	int header_done;
	int got_data; /* trace_pipe: this fd returned data */
	unsigned char *page; /* trace_pipe_raw: the page being read */
	size_t page_len, page_off;
	char err[1024];
	char notice[256]; /* see fdr_file_notice() */
	int log_pending; /* an error_log entry to write after the command */
	int log_pos;
	char log_loc[64];
	char log_msg[512];
	char log_cmd[512]; /* the command error_log shows, if not the whole write */
	int held; /* counted in the instance's open files (rmdir EBUSY) */
	int32_t writer; /* the thread writes are made for, 0 = the caller */
	int ended; /* fdr_file_end(): a pipe serves what it has, then ends */
	/* a linked session's trace/trace_pipe: the kernel instance's lines merged (kmerge.c) */
	struct fdr_kmerge *km;
	int km_tried; /* looked for the link (at the first read) */
	int no_kernel; /* opened with FDR_FILE_NO_KERNEL */
};

/* ---- path resolution ------------------------------------------------------------------ */

static const struct fdr_abi_control *ctl_of(struct fdr_session *s)
{
	return fdr_session_control(s);
}

static int find_instance(struct fdr_session *s, const char *name, uint32_t *out)
{
	const struct fdr_abi_control *c = ctl_of(s);
	uint32_t i;

	for (i = 1; i < FDR_MAX_INSTANCES; i++)
		if (c->instances[i].state == FDR_INST_LIVE &&
		    strncmp(c->instances[i].name, name, FDR_NAME_LEN) == 0) {
			*out = i;
			return 0;
		}
	return -ENOENT;
}

/* Is there a registered event in @sys (and named @ev, if given)? */
static int event_exists(struct fdr_session *s, const char *sys, const char *ev)
{
	const struct fdr_abi_control *c = ctl_of(s);
	uint32_t i, bound = fdr_events_bound(c);

	for (i = 0; i < bound; i++) {
		const struct fdr_abi_event *e = &c->events[i];

		if (e->state != FDR_EVENT_READY || strncmp(e->system, sys, FDR_NAME_LEN))
			continue;
		if (!ev || strncmp(e->name, ev, FDR_NAME_LEN) == 0)
			return 1;
	}
	return 0;
}

static const struct fdr_abi_event *event_find(struct fdr_session *s, const char *sys,
					      const char *ev)
{
	const struct fdr_abi_control *c = ctl_of(s);
	uint32_t i, bound = fdr_events_bound(c);

	for (i = 0; i < bound; i++) {
		const struct fdr_abi_event *e = &c->events[i];

		if (e->state == FDR_EVENT_READY && strncmp(e->system, sys, FDR_NAME_LEN) == 0 &&
		    strncmp(e->name, ev, FDR_NAME_LEN) == 0)
			return e;
	}
	return NULL;
}

/* ftrace:* are record types of fdr itself (print, user_stack): no enable, no filter. */
static int is_print_event(const char *sys, const char *ev)
{
	(void)ev;
	return strcmp(sys, "ftrace") == 0;
}

/* Split @path into components (at most 8); returns the count or -ENAMETOOLONG. */
static int split_path(const char *path, char comp[8][FDR_NAME_LEN + 16])
{
	int n = 0;

	while (*path) {
		size_t len;

		while (*path == '/')
			path++;
		if (!*path)
			break;
		len = strcspn(path, "/");
		if (n == 8 || len >= FDR_NAME_LEN + 16)
			return -ENAMETOOLONG;
		if (!(len == 1 && path[0] == '.')) {
			memcpy(comp[n], path, len);
			comp[n][len] = 0;
			n++;
		}
		path += len;
	}
	return n;
}

static int parse_cpu_name(const char *name, int nr_cpus)
{
	char *end;
	long v;

	if (strncmp(name, "cpu", 3) || !isdigit((unsigned char)name[3]))
		return -1;
	v = strtol(name + 3, &end, 10);
	if (*end || v < 0 || v >= nr_cpus)
		return -1;
	return (int)v;
}

/* ---- errors --------------------------------------------------------------------------- */

/*
 * Record a bad-input error: message in the handle ("what was expected, what was
 * found, where", plus the command with a caret) and in error_log. Returns -EINVAL.
 */
static int bad_input(struct fdr_file *f, const char *location, const char *cmd, int pos,
		     const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static int bad_input(struct fdr_file *f, const char *location, const char *cmd, int pos,
		     const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	n = snprintf(f->err, sizeof(f->err), "%s: %s\n  %.*s\n", location, msg,
		     (int)strcspn(cmd, "\n"), cmd);
	if (n > 0 && (size_t)n < sizeof(f->err) && pos >= 0 &&
	    (size_t)(n + pos + 4) < sizeof(f->err)) {
		memset(f->err + n, ' ', (size_t)pos + 2);
		snprintf(f->err + n + pos + 2, sizeof(f->err) - (size_t)(n + pos + 2), "^\n");
	}
	/* logged by fdr_file_write() once no lock is held (this may run under it) */
	snprintf(f->log_loc, sizeof(f->log_loc), "%s", location);
	snprintf(f->log_msg, sizeof(f->log_msg), "%s", msg);
	f->log_pos = pos;
	f->log_pending = 1;
	return -EINVAL;
}

static void flush_error_log(struct fdr_file *f, const char *cmd)
{
	if (!f->log_pending)
		return;
	f->log_pending = 0;
	if (f->log_cmd[0])
		cmd = f->log_cmd;
	if (fdr_session_lock(f->s) == 0) {
		fdr_session_error(f->s, f->p.inst, f->log_loc, f->log_msg, cmd, f->log_pos);
		fdr_session_unlock(f->s);
	}
}

/* ---- number and name parsing ------------------------------------------------------------ */

/* Strip one trailing newline; returns the length. */
static size_t chomp(char *s, size_t n)
{
	if (n && s[n - 1] == '\n')
		s[--n] = 0;
	return n;
}

/*
 * Parse a base-10 unsigned number as tracefs does: an optional '+', digits, one
 * optional trailing newline (already removed), nothing else.
 */
static int parse_u64(const char *s, uint64_t *v, int *bad_pos)
{
	const char *p = s;
	uint64_t x = 0;

	if (*p == '+')
		p++;
	if (!isdigit((unsigned char)*p)) {
		*bad_pos = (int)(p - s);
		return -EINVAL;
	}
	for (; isdigit((unsigned char)*p); p++) {
		if (x > (UINT64_MAX - 9) / 10) {
			*bad_pos = (int)(p - s);
			return -ERANGE;
		}
		x = x * 10 + (uint64_t)(*p - '0');
	}
	if (*p) {
		*bad_pos = (int)(p - s);
		return -EINVAL;
	}
	*v = x;
	return 0;
}

static int write_number(struct fdr_file *f, const char *loc, const char *cmd, uint64_t min,
			uint64_t max, uint64_t *v)
{
	int pos = 0, ret = parse_u64(cmd, v, &pos);

	if (ret == -ERANGE || (!ret && (*v < min || *v > max)))
		return bad_input(f, loc, cmd, 0,
				 "expected a number from %" PRIu64 " to %" PRIu64 ", found '%s'",
				 min, max, cmd);
	if (ret)
		return bad_input(
			f, loc, cmd, pos,
			"expected a decimal number (digits only), found '%s' (bad character at offset %d)",
			cmd, pos);
	return 0;
}

static void strip_space(char **s)
{
	char *e;

	while (isspace((unsigned char)**s))
		(*s)++;
	e = *s + strlen(*s);
	while (e > *s && isspace((unsigned char)e[-1]))
		*--e = 0;
}

/* ---- event enabling ----------------------------------------------------------------------- */

/* Apply one rule to registered events (lock held). Returns how many matched. */
static int apply_rule(struct fdr_session *s, uint32_t inst, const char *rule, int on)
{
	struct fdr_abi_control *c = fdr_session_control(s);
	uint32_t i, bound = fdr_events_bound(c);
	int n = 0;

	for (i = 0; i < bound; i++) {
		struct fdr_abi_event *e = &c->events[i];
		char sys[FDR_NAME_LEN + 1], ev[FDR_NAME_LEN + 1];

		if (e->state != FDR_EVENT_READY)
			continue;
		memcpy(sys, e->system, FDR_NAME_LEN);
		sys[FDR_NAME_LEN] = 0;
		memcpy(ev, e->name, FDR_NAME_LEN);
		ev[FDR_NAME_LEN] = 0;
		if (is_print_event(sys, ev))
			continue;
		if (!fdr_event_rule_match(rule, sys, ev))
			continue;
		fdr_event_set_enabled(e, inst, on);
		n++;
	}
	return n;
}

static int pending_find(const struct fdr_abi_instance *in, const char *rule)
{
	uint32_t i, n = in->nr_pending < FDR_PENDING_RULES ? in->nr_pending : FDR_PENDING_RULES;

	for (i = 0; i < n; i++)
		if (strncmp(in->pending[i], rule, FDR_RULE_LEN) == 0)
			return (int)i;
	return -1;
}

static int pending_add(struct fdr_abi_instance *in, const char *rule)
{
	if (pending_find(in, rule) >= 0)
		return 0;
	if (in->nr_pending >= FDR_PENDING_RULES)
		return -ENOSPC;
	snprintf(in->pending[in->nr_pending], FDR_RULE_LEN, "%s", rule);
	in->nr_pending++;
	return 0;
}

static int pending_del(struct fdr_abi_instance *in, const char *rule)
{
	int i = pending_find(in, rule);
	uint32_t n = in->nr_pending < FDR_PENDING_RULES ? in->nr_pending : FDR_PENDING_RULES;

	if (i < 0)
		return 0;
	memmove(in->pending[i], in->pending[i + 1], (n - (uint32_t)i - 1) * FDR_RULE_LEN);
	in->nr_pending = n - 1;
	return 1;
}

static void disable_all(struct fdr_session *s, uint32_t inst)
{
	struct fdr_abi_control *c = fdr_session_control(s);
	uint32_t i, bound = fdr_events_bound(c);

	for (i = 0; i < bound; i++)
		fdr_event_set_enabled(&c->events[i], inst, 0);
	c->instances[inst].nr_pending = 0;
}

static int rule_has_glob(const char *rule)
{
	return strpbrk(rule, "*?[") != NULL || strchr(rule, ':') == NULL ||
	       rule[strlen(rule) - 1] == ':';
}

/* A set_event token must be [!]SPEC with SPEC made of name characters and globs. */
static int check_token(const char *tok, int *bad)
{
	const char *p = tok;
	int colons = 0;

	if (*p == '!')
		p++;
	if (!*p) {
		*bad = (int)(p - tok);
		return -1;
	}
	for (; *p; p++) {
		if (*p == ':') {
			/* ":EVENT" (any system) and "SYS:" (all of SYS) as in the kernel */
			if (++colons > 1) {
				*bad = (int)(p - tok);
				return -1;
			}
			continue;
		}
		if (!(isalnum((unsigned char)*p) || strchr("_-.*?[]", *p))) {
			*bad = (int)(p - tok);
			return -1;
		}
	}
	return 0;
}

/*
 * One set_event token: enable or disable matching events now; rules that can match
 * events registered later are kept as pending rules (an fdr extension).
 */
static int set_event_token(struct fdr_file *f, const char *cmd, const char *tok, int tok_pos)
{
	struct fdr_abi_instance *in = &fdr_session_control(f->s)->instances[f->p.inst];
	int on = tok[0] != '!', bad = 0, n;
	const char *spec = on ? tok : tok + 1;
	char rule[FDR_RULE_LEN];

	if (check_token(tok, &bad))
		return bad_input(
			f, "set_event", cmd, tok_pos + bad,
			"expected [!]SYSTEM:EVENT, SYSTEM:*, *:EVENT or NAME (globs allowed), found '%s'",
			tok);
	if (strlen(spec) >= FDR_RULE_LEN)
		return bad_input(f, "set_event", cmd, tok_pos,
				 "event specification longer than %d bytes", FDR_RULE_LEN - 1);
	snprintf(rule, sizeof(rule), "%s", spec);
	n = apply_rule(f->s, f->p.inst, rule, on);
	if (on) {
		if ((n == 0 || rule_has_glob(rule)) && pending_add(in, rule) < 0)
			return bad_input(
				f, "set_event", cmd, tok_pos,
				"too many pending rules (at most %d); remove some with '!RULE'",
				FDR_PENDING_RULES);
		if (n == 0)
			snprintf(f->notice, sizeof(f->notice),
				 "'%s' matches no registered event yet: kept as a pending rule "
				 "(set_event_pending), it enables the events registered later",
				 rule);
	} else {
		int removed = pending_del(in, rule);

		if (strcmp(rule, "*:*") == 0 || strcmp(rule, "*:") == 0 || strcmp(rule, "*") == 0) {
			in->nr_pending = 0;
			removed = 1;
		}
		if (!n && !removed)
			return bad_input(f, "set_event", cmd, tok_pos + 1,
					 "'%s' matches no registered event and no pending rule",
					 rule);
	}
	return 0;
}

static int write_set_event(struct fdr_file *f, char *cmd)
{
	char *p = cmd;
	int ret = 0;

	while (*p && !ret) {
		char tok[FDR_RULE_LEN + 2];
		size_t len;

		p += strspn(p, " \t\n");
		len = strcspn(p, " \t\n");
		if (!len)
			break;
		if (len >= sizeof(tok)) {
			char shown[FDR_RULE_LEN + 2];

			snprintf(shown, sizeof(shown), "%.*s", (int)(sizeof(shown) - 1), p);
			return bad_input(f, "set_event", cmd, (int)(p - cmd),
					 "event specification longer than %d bytes: '%s...'",
					 FDR_RULE_LEN - 1, shown);
		}
		memcpy(tok, p, len);
		tok[len] = 0;
		ret = set_event_token(f, cmd, tok, (int)(p - cmd));
		p += len;
	}
	return ret;
}

/* Enable state of a set of events: '0', '1', 'X' (mixed) or '?' (no events). */
static char enable_state(struct fdr_session *s, uint32_t inst, const char *sys)
{
	const struct fdr_abi_control *c = ctl_of(s);
	int on = 0, off = 0;
	uint32_t i, bound = fdr_events_bound(c);

	for (i = 0; i < bound; i++) {
		const struct fdr_abi_event *e = &c->events[i];

		if (e->state != FDR_EVENT_READY || is_print_event(e->system, e->name))
			continue;
		if (sys && strncmp(e->system, sys, FDR_NAME_LEN))
			continue;
		if (fdr_event_is_enabled(e, inst))
			on++;
		else
			off++;
	}
	if (!on && !off)
		return '?';
	return on && off ? 'X' : on ? '1' : '0';
}

/* ---- generated files ---------------------------------------------------------------------- */

static const char readme_text[] =
	"fdr tracing mini-HOWTO (user-space flight recorder, tracefs layout):\n"
	"\n"
	"# echo 0 > tracing_on : quick way to disable tracing\n"
	"# echo 1 > tracing_on : quick way to re-enable tracing\n"
	"\n"
	" Use 'fdr write PATH VALUE' for '>' and 'fdr append PATH VALUE' for '>>',\n"
	" or echo and cat on an 'fdr mount' of this tree.\n"
	"\n"
	" Important files:\n"
	"  trace\t\t\t- The static contents of the buffer\n"
	"\t\t\t  To clear the buffer write into this file: echo > trace\n"
	"  trace_pipe\t\t- A consuming read to see the contents of the buffer\n"
	"  current_tracer\t- only 'nop' (events)\n"
	"  available_tracers\t- list of configured tracers for current_tracer\n"
	"  error_log\t- error log for failed commands (that support it)\n"
	"  buffer_size_kb\t- view and modify size of per cpu buffer\n"
	"  buffer_total_size_kb  - view total size of all cpu buffers\n"
	"  buffer_subbuf_size_kb - view and modify the size of the sub-buffers\n"
	"\n"
	"  trace_clock\t\t- change the clock used to order events\n"
	"       local:   CLOCK_MONOTONIC (from the TSC where it is invariant)\n"
	"      global:   same as local\n"
	"     counter:   the raw timestamp (TSC ticks or ns)\n"
	"      uptime:   10 ms ticks of CLOCK_MONOTONIC\n"
	"        perf:   same as local\n"
	"        mono:   CLOCK_MONOTONIC\n"
	"    mono_raw:   CLOCK_MONOTONIC (approximation)\n"
	"        boot:   CLOCK_BOOTTIME\n"
	"         tai:   CLOCK_MONOTONIC (approximation)\n"
	"     x86-tsc:   TSC cycle counter\n"
	"     Changing the clock keeps the recorded data (fdr stores raw stamps).\n"
	"\n"
	"  timestamp_mode\t- view the mode used to timestamp events\n"
	"       delta:   Delta difference against a buffer-wide timestamp\n"
	"\n"
	"  trace_marker\t\t- Writes into this file writes into the kernel buffer\n"
	"  saved_cmdlines\t- pid->comm names of the threads that wrote events\n"
	"  saved_tgids\t\t- pid->tgid of the same threads\n"
	"  per_cpu/\t\t- Directory containing per cpu files\n"
	"    cpuN/trace, trace_pipe, trace_pipe_raw, stats, buffer_size_kb\n"
	"  instances/\t\t- Make sub-buffers with: mkdir instances/foo\n"
	"\t\t\t  Remove them with rmdir instances/foo\n"
	"\n"
	"  events/\t\t- Directory containing all trace event subsystems:\n"
	"      enable\t\t- Write 0/1 to enable/disable tracing of all events\n"
	"  events/<system>/\t- Directory containing all trace events for <system>:\n"
	"      enable\t\t- Write 0/1 to enable/disable tracing of all <system> events\n"
	"  events/<system>/<event>/\t- Directory containing control files for\n"
	"                          <event>:\n"
	"      enable\t\t- Write 0/1 to enable/disable tracing of <event>\n"
	"      format\t\t- the binary layout of <event> records\n"
	"      id\t\t- the event's id (common_type)\n"
	"\n"
	"  set_event\t\t- [!]SYSTEM:EVENT, SYSTEM:*, *:EVENT or NAME per token; '!' disables.\n"
	"\t\t\t  Names and globs of events not registered yet are kept as\n"
	"\t\t\t  pending rules (see set_event_pending) and applied when a\n"
	"\t\t\t  process registers a matching event.\n"
	"  set_event_pending\t- the pending rules (fdr only)\n"
	"  set_event_pid\t\t- only these pids (thread or process ids) record\n"
	"  set_event_notrace_pid\t- these pids (thread or process ids) do not record\n"
	"  events/<system>/<event>/filter - a filter, e.g. 'status >= 500 && path ~ \"/api*\"';\n"
	"\t\t\t  '0' clears; a rejected filter keeps the previous one\n"
	"  events/<system>/<event>/trigger - [!]CMD[:COUNT] [if FILTER], CMD one of\n"
	"\t\t\t  traceon traceoff snapshot stacktrace\n"
	"\t\t\t  enable_event:<system>:<event> disable_event:<system>:<event>\n"
	"  snapshot\t\t- 1: take a snapshot (swap in the spare buffers), 0: free\n"
	"\t\t\t  them, 2: clear; reading shows the snapshot\n"
	"  snapshot_allocated\t- 1: allocate the spare buffers without taking a\n"
	"\t\t\t  snapshot, 0: free them (fdr only)\n"
	"  options/\t\t- context-info record-cmd record-tgid overwrite irq-info markers\n"
	"\t\t\t  event-fork stacktrace\n"
	"\n"
	"  uprobe_events\t\t- Create/append/remove/show the userspace dynamic events\n"
	"\t\t\t  Write into this file to define/undefine new trace events.\n"
	"\t  accepts: p[:[<group>/][<event>]] <path>:<offset>[%return] [<args>]\n"
	"\t\t   r[:[<group>/][<event>]] <path>:<offset> [<args>]\n"
	"\t\t   p|r[:...] <path>:<symbol>[+<offs>] [<args>]  (fdr)\n"
	"\t\t   -:[<group>/]<event>\n"
	"\t    args: <name>=fetcharg[:type]\n"
	"\t fetcharg: %<register>, @<address>, @+<file offset>, $stack<index>, $stack,\n"
	"\t\t   $retval, $comm, $arg<N> (fdr), \\<imm>, +|-[u]<offset>(<fetcharg>)\n"
	"\t     type: s8/16/32/64, u8/16/32/64, x8/16/32/64, char, string, ustring,\n"
	"\t\t   b<bit-width>@<bit-offset>/<container-size>, <type>[<N>]\n"
	"  dynamic_events\t\t- the same lines; lists every dynamic event\n"
	"  uprobe_profile\t\t- hits of each probe location\n";

static int gen_available_events(struct fdr_file *f, struct fdr_buf *b, int only_enabled)
{
	const struct fdr_abi_control *c = ctl_of(f->s);
	uint32_t i, bound = fdr_events_bound(c);
	int ret = 0;

	for (i = 0; i < bound && !ret; i++) {
		const struct fdr_abi_event *e = &c->events[i];

		if (e->state != FDR_EVENT_READY || is_print_event(e->system, e->name))
			continue;
		if (only_enabled && !fdr_event_is_enabled(e, f->p.inst) &&
		    !fdr_hooks_soft(c, f->p.inst, e))
			continue;
		ret = fdr_buf_printf(b, "%.*s:%.*s\n", FDR_NAME_LEN, e->system, FDR_NAME_LEN,
				     e->name);
	}
	return ret;
}

static int render_error_log(struct fdr_file *f, struct fdr_buf *b)
{
	const struct fdr_abi_instance *in = &ctl_of(f->s)->instances[f->p.inst];
	uint32_t seq = in->error_seq,
		 first = seq > FDR_ERROR_LOG_ENTRIES ? seq - FDR_ERROR_LOG_ENTRIES : 0;
	uint32_t k;
	int ret = 0;

	for (k = first; k < seq && !ret; k++) {
		const struct fdr_abi_error *e = &in->errors[k % FDR_ERROR_LOG_ENTRIES];
		uint64_t us = (e->ts_ns + 500) / 1000;
		uint32_t len = e->len < FDR_ERROR_TEXT_LEN ? e->len : FDR_ERROR_TEXT_LEN;

		if (e->seq != k + 1)
			continue;
		ret = fdr_buf_printf(b, "[%5" PRIu64 ".%06" PRIu64 "] ", us / 1000000,
				     us % 1000000);
		ret |= fdr_buf_add(b, e->text, strnlen(e->text, len));
	}
	return ret;
}

/*
 * The buffer_size_kb of one CPU: the instance's as last written when the CPU's
 * geometry is the one that size gives (the geometry rounds up), else what the
 * geometry holds.
 */
static int cpu_kb(struct fdr_session *s, uint32_t inst, uint32_t cpu)
{
	const struct fdr_abi_instance *in = &ctl_of(s)->instances[inst];
	int kb = fdr_ring_cpu_size_kb(s, inst, cpu);
	uint32_t want = in->size_kb, ss = in->subbuf_size;

	if (kb < 0 || !want || ss <= 16)
		return kb;
	if ((uint64_t)(fdr_session_subbufs_for_kb(want, ss) - 1) * (ss - 16) / 1024 == (uint64_t)kb)
		return (int)want;
	return kb;
}

static int cpu_kb_all(struct fdr_session *s, uint32_t inst, int *same, uint64_t *total)
{
	int nr = fdr_ring_nr_cpus(s, inst), cpu, first = -1;

	*same = 1;
	*total = 0;
	for (cpu = 0; cpu < nr; cpu++) {
		int kb = cpu_kb(s, inst, (uint32_t)cpu);

		if (kb < 0)
			return kb;
		if (first < 0)
			first = kb;
		else if (kb != first)
			*same = 0;
		*total += (uint64_t)kb;
	}
	return first;
}

static int render_stats(struct fdr_file *f, struct fdr_buf *b)
{
	struct fdr_cpu_stats st;
	const struct fdr_abi_instance *in = &ctl_of(f->s)->instances[f->p.inst];
	struct fdr_buf ts1 = { 0 }, ts2 = { 0 };
	int ret = fdr_ring_stats(f->s, f->p.inst, (uint32_t)f->p.cpu, &st);

	if (ret)
		return ret;
	if (fdr_clock_is_ns(in->clock)) {
		ret |= fdr_format_ts(in->clock, st.oldest_ts, &ts1);
		ret |= fdr_format_ts(in->clock, st.now_ts, &ts2);
	} else {
		ret |= fdr_buf_printf(&ts1, " %" PRIu64, st.oldest_ts);
		ret |= fdr_buf_printf(&ts2, " %" PRIu64, st.now_ts);
	}
	ret |= fdr_buf_printf(b,
			      "entries: %" PRIu64 "\noverrun: %" PRIu64 "\ncommit overrun: %" PRIu64
			      "\nbytes: %" PRIu64
			      "\noldest event ts:%s\nnow ts:%s\ndropped events: %" PRIu64
			      "\nread events: %" PRIu64 "\nsnapshot events: %" PRIu64 "\n",
			      st.entries, st.overrun, st.commit_overrun, st.bytes,
			      ts1.data ? ts1.data : "", ts2.data ? ts2.data : "", st.dropped,
			      st.read, st.snapshot);
	fdr_buf_free(&ts1);
	fdr_buf_free(&ts2);
	return ret;
}

/*
 * tracing_cpumask, as the kernel prints a CPU mask: hex, in groups of 32 CPUs
 * separated by commas, the highest first; the first group has as many digits
 * as its CPUs need, the others 8 ("3" for 2 CPUs, "ff,ffffffff" for 40).
 */
static int gen_cpumask(const struct fdr_abi_instance *in, uint32_t nr_cpus, struct fdr_buf *b)
{
	uint32_t groups, g, cpu;
	int ret = 0;

	if (nr_cpus == 0 || nr_cpus > FDR_MAX_CPUS)
		nr_cpus = 1;
	groups = (nr_cpus + 31) / 32;
	for (g = groups; g-- > 0;) {
		uint32_t v = 0, bits = g == groups - 1 ? nr_cpus - g * 32 : 32;

		for (cpu = g * 32; cpu < g * 32 + bits; cpu++)
			if ((in->cpumask[cpu / 64] >> (cpu % 64)) & 1)
				v |= 1u << (cpu % 32);
		ret |= fdr_buf_printf(b, g == groups - 1 ? "%0*x" : ",%08x",
				      g == groups - 1 ? (int)((bits + 3) / 4) : 8, v);
	}
	return ret | fdr_buf_add(b, "\n", 1);
}

/* "PID TGID" of every thread that wrote events (fdr keeps both for all of them) */
static int render_saved_tgids(struct fdr_file *f, struct fdr_buf *b)
{
	const struct fdr_abi_control *c = ctl_of(f->s);
	uint32_t i;
	int ret = 0;

	for (i = 0; i < FDR_CMDLINE_SLOTS && !ret; i++) {
		uint32_t pid = __atomic_load_n(&c->cmdlines[i].pid, __ATOMIC_ACQUIRE);
		/* the slot's reader (lib/common/comm.c): 0 when empty or being rewritten */
		int32_t tgid = pid ? fdr_tgid_lookup(c, (int32_t)pid) : 0;

		if (!tgid)
			continue;
		ret = fdr_buf_printf(b, "%u %d\n", pid, (int)tgid);
	}
	return ret;
}

static int render_saved_cmdlines(struct fdr_file *f, struct fdr_buf *b)
{
	const struct fdr_abi_control *c = ctl_of(f->s);
	uint32_t i;
	int ret = 0;

	for (i = 0; i < FDR_CMDLINE_SLOTS && !ret; i++) {
		char comm[FDR_COMM_LEN];
		uint32_t pid = __atomic_load_n(&c->cmdlines[i].pid, __ATOMIC_ACQUIRE);
		const char *name;

		if (!pid)
			continue;
		name = fdr_comm_lookup(c, (int32_t)pid, comm, sizeof(comm));
		if (name[0] == '<')
			continue;
		ret = fdr_buf_printf(b, "%u %s\n", pid, name);
	}
	return ret;
}

/* ---- the handlers of the rows: what a read shows (render) ------------------------------ */

static struct fdr_abi_instance *inst_of(struct fdr_file *f)
{
	return &fdr_session_control(f->s)->instances[f->p.inst];
}

/* the event of an events/SYS/EVENT/ file, or NULL (it was removed since the open) */
static const struct fdr_abi_event *file_event(struct fdr_file *f)
{
	return event_find(f->s, f->p.sys, f->p.ev);
}

static int render_tracing_on(struct fdr_file *f, struct fdr_buf *b)
{
	return fdr_buf_printf(b, "%u\n", inst_of(f)->tracing_on ? 1 : 0);
}

static int render_trace_clock(struct fdr_file *f, struct fdr_buf *b)
{
	const struct fdr_abi_instance *in = inst_of(f);
	int ret = 0;
	size_t k;

	for (k = 0; k < sizeof(clock_order) / sizeof(clock_order[0]); k++) {
		const char *name = fdr_trace_clock_name(clock_order[k]);

		ret |= fdr_buf_printf(b, k ? " %s%s%s" : "%s%s%s",
				      in->clock == clock_order[k] ? "[" : "", name,
				      in->clock == clock_order[k] ? "]" : "");
	}
	return ret | fdr_buf_add(b, "\n", 1);
}

static int render_trace_options(struct fdr_file *f, struct fdr_buf *b)
{
	const struct fdr_abi_instance *in = inst_of(f);
	int ret = 0;
	size_t k;

	for (k = 0; k < NR_OPTIONS; k++) {
		if (tree_options[k].top_only && f->p.inst)
			continue;
		ret |= fdr_buf_printf(b, "%s%s\n", in->options & tree_options[k].bit ? "" : "no",
				      tree_options[k].name);
	}
	return ret;
}

static int render_option(struct fdr_file *f, struct fdr_buf *b)
{
	return fdr_buf_printf(b, "%u\n", inst_of(f)->options & tree_options[f->p.opt].bit ? 1 : 0);
}

static int render_buffer_size_kb(struct fdr_file *f, struct fdr_buf *b)
{
	uint64_t total;
	int same, kb;

	if (f->p.cpu >= 0) {
		kb = cpu_kb(f->s, f->p.inst, (uint32_t)f->p.cpu);
		return kb < 0 ? kb : fdr_buf_printf(b, "%d\n", kb);
	}
	kb = cpu_kb_all(f->s, f->p.inst, &same, &total);
	if (kb < 0)
		return kb;
	return same ? fdr_buf_printf(b, "%d\n", kb) : fdr_buf_printf(b, "X\n");
}

static int render_buffer_total_size_kb(struct fdr_file *f, struct fdr_buf *b)
{
	uint64_t total;
	int same, kb = cpu_kb_all(f->s, f->p.inst, &same, &total);

	if (kb < 0)
		return kb;
	return fdr_buf_printf(b, "%" PRIu64 "\n", total);
}

static int render_subbuf_size_kb(struct fdr_file *f, struct fdr_buf *b)
{
	return fdr_buf_printf(b, "%u\n", inst_of(f)->subbuf_size / 1024);
}

static int render_set_event(struct fdr_file *f, struct fdr_buf *b)
{
	return gen_available_events(f, b, 1);
}

static int render_available_events(struct fdr_file *f, struct fdr_buf *b)
{
	return gen_available_events(f, b, 0);
}

static int render_set_event_pending(struct fdr_file *f, struct fdr_buf *b)
{
	const struct fdr_abi_instance *in = inst_of(f);
	uint32_t i, n = in->nr_pending < FDR_PENDING_RULES ? in->nr_pending : FDR_PENDING_RULES;
	int ret = 0;

	for (i = 0; i < n; i++)
		ret |= fdr_buf_printf(b, "%.*s\n", FDR_RULE_LEN, in->pending[i]);
	return ret;
}

static int render_nop(struct fdr_file *f, struct fdr_buf *b)
{
	(void)f;
	return fdr_buf_printf(b, "nop\n");
}

static int render_timestamp_mode(struct fdr_file *f, struct fdr_buf *b)
{
	(void)f;
	return fdr_buf_printf(b, "[delta] absolute\n");
}

static int render_readme(struct fdr_file *f, struct fdr_buf *b)
{
	(void)f;
	return fdr_buf_add(b, readme_text, sizeof(readme_text) - 1);
}

static int render_empty(struct fdr_file *f, struct fdr_buf *b)
{
	(void)f;
	(void)b;
	return 0; /* printk_formats: no trace_printk() in user space, no formats to list */
}

static int render_saved_cmdlines_size(struct fdr_file *f, struct fdr_buf *b)
{
	(void)f;
	return fdr_buf_printf(b, "%u\n", (unsigned)FDR_CMDLINE_SLOTS);
}

/* events/enable and events/SYS/enable: 0, 1, X (mixed) or ? (no events) */
static int render_group_enable(struct fdr_file *f, struct fdr_buf *b)
{
	return fdr_buf_printf(
		b, "%c\n", enable_state(f->s, f->p.inst, f->p.file->in == D_SYS ? f->p.sys : NULL));
}

static int render_event_enable(struct fdr_file *f, struct fdr_buf *b)
{
	const struct fdr_abi_event *e = file_event(f);

	if (!e)
		return -ENOENT;
	return fdr_buf_printf(b, "%d%s\n", fdr_event_is_enabled(e, f->p.inst),
			      fdr_hooks_soft(fdr_session_control(f->s), f->p.inst, e) ? "*" : "");
}

static int render_event_format(struct fdr_file *f, struct fdr_buf *b)
{
	const struct fdr_abi_event *e = file_event(f);

	return e ? fdr_format_event_file(e, b) : -ENOENT;
}

static int render_event_id(struct fdr_file *f, struct fdr_buf *b)
{
	const struct fdr_abi_event *e = file_event(f);

	return e ? fdr_buf_printf(b, "%u\n", e->id) : -ENOENT;
}

static int render_event_filter(struct fdr_file *f, struct fdr_buf *b)
{
	const struct fdr_abi_event *e = file_event(f);

	return e ? fdr_hooks_filter_text(fdr_session_control(f->s), f->p.inst, e, b) : -ENOENT;
}

static int render_event_trigger(struct fdr_file *f, struct fdr_buf *b)
{
	const struct fdr_abi_event *e = file_event(f);

	return e ? fdr_hooks_trigger_text(fdr_session_control(f->s), f->p.inst, e, b) : -ENOENT;
}

static int render_sys_filter(struct fdr_file *f, struct fdr_buf *b)
{
	(void)f;
	return fdr_buf_printf(
		b, "### global filter ###\n"
		   "# Use this to set filters for multiple events.\n"
		   "# Only events with the given fields will be affected.\n"
		   "# If no events are modified, an error message will be displayed here\n");
}

/* The pid list @notrace (set_event_notrace_pid) or not (set_event_pid) of @inst. */
static void pid_list(struct fdr_session *s, uint32_t inst, int notrace, int32_t **pids,
		     uint32_t **nr)
{
	struct fdr_abi_control *c = fdr_session_control(s);

	if (notrace) {
		*pids = c->inst_ext[inst].notrace_pids;
		*nr = &c->inst_ext[inst].nr_notrace_pids;
	} else {
		*pids = c->instances[inst].pids;
		*nr = &c->instances[inst].nr_pids;
	}
}

static int cmp_pid(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;

	return (x > y) - (x < y);
}

/*
 * A pid list, one pid a line, ascending (the kernel's order). With event-fork
 * on, pids of tasks that are gone are dropped first (the kernel drops them as
 * the tasks exit).
 */
static int gen_pids(struct fdr_file *f, struct fdr_buf *b, int notrace)
{
	struct fdr_abi_control *c = fdr_session_control(f->s);
	struct fdr_abi_instance_ext x;
	int32_t copy[FDR_MAX_PIDS], *pids;
	uint32_t i, n, *nr;
	int ret = 0;

	memcpy(&x, &c->inst_ext[f->p.inst], sizeof(x));
	if (fdr_shm_check_instance_ext(&x, f->p.inst))
		return -EUCLEAN;
	pid_list(f->s, f->p.inst, notrace, &pids, &nr);
	if (__atomic_load_n(&c->instances[f->p.inst].options, __ATOMIC_RELAXED) &
	    FDR_OPT_EVENT_FORK) {
		ret = fdr_session_lock(f->s);
		if (ret)
			return ret;
		if (fdr_pids_prune(pids, nr, !notrace))
			fdr_hooks_recount(c);
		fdr_session_unlock(f->s);
	}
	n = fdr_pids_count(nr);
	for (i = 0; i < n; i++)
		copy[i] = __atomic_load_n(&pids[i], __ATOMIC_RELAXED);
	qsort(copy, n, sizeof(copy[0]), cmp_pid);
	for (i = 0; i < n; i++)
		ret |= fdr_buf_printf(b, "%d\n", copy[i]);
	return ret;
}

static int render_set_event_pid(struct fdr_file *f, struct fdr_buf *b)
{
	return gen_pids(f, b, 0);
}

static int render_set_event_notrace_pid(struct fdr_file *f, struct fdr_buf *b)
{
	return gen_pids(f, b, 1);
}

static int render_cpumask(struct fdr_file *f, struct fdr_buf *b)
{
	return gen_cpumask(inst_of(f), ctl_of(f->s)->nr_cpus, b);
}

static int render_header_page(struct fdr_file *f, struct fdr_buf *b)
{
	return fdr_format_header_page(inst_of(f)->subbuf_size, b);
}

static int render_header_event(struct fdr_file *f, struct fdr_buf *b)
{
	(void)f;
	return fdr_format_header_event(b);
}

static int snapshot_allocated(struct fdr_session *s, uint32_t inst)
{
	void *base;
	size_t size;

	if (fdr_session_ring(s, inst, &base, &size))
		return 0;
	return ((const struct fdr_abi_ring *)base)->spare_allocated != 0;
}

static int snapshot_empty(struct fdr_session *s, uint32_t inst, int cpu)
{
	int nr = fdr_ring_nr_cpus(s, inst), c;

	for (c = cpu < 0 ? 0 : cpu; c < (cpu < 0 ? nr : cpu + 1); c++) {
		struct fdr_cpu_stats st;

		if (fdr_ring_stats_ex(s, inst, (uint32_t)c, FDR_READ_SNAPSHOT, &st) == 0 &&
		    st.entries)
			return 0;
	}
	return 1;
}

/* The text a freed or empty snapshot file shows, as the kernel prints it. */
static int snapshot_help(struct fdr_file *f)
{
	int ret = fdr_buf_printf(&f->content,
				 "# tracer: nop\n#\n#\n# * Snapshot is %s *\n#\n"
				 "# Snapshot commands:\n",
				 snapshot_allocated(f->s, f->p.inst) ? "allocated" : "freed");

	if (f->p.cpu < 0)
		return ret |
		       fdr_buf_printf(
			       &f->content,
			       "# echo 0 > snapshot : Clears and frees snapshot buffer\n"
			       "# echo 1 > snapshot : Allocates snapshot buffer, if not already allocated.\n"
			       "#                      Takes a snapshot of the main buffer.\n"
			       "# echo 2 > snapshot : Clears snapshot buffer (but does not allocate or free)\n"
			       "#                      (Doesn't have to be '2' works with any number that\n"
			       "#                       is not a '0' or '1')\n");
	return ret |
	       fdr_buf_printf(
		       &f->content,
		       "# echo 0 > snapshot : Invalid for per_cpu snapshot file.\n"
		       "# echo 1 > snapshot : Allocates snapshot buffer, if not already allocated.\n"
		       "#                      Takes a snapshot of the main buffer for this cpu.\n"
		       "# echo 2 > snapshot : Clears this cpu's snapshot buffer (but does not allocate)\n"
		       "#                      (Doesn't have to be '2' works with any number that\n"
		       "#                       is not a '0' or '1')\n");
}

/* Files that keep an instance busy while open (rmdir gives EBUSY), as on tracefs. */
static int holds_instance(const struct tree_path *p)
{
	return p->inst != 0 && !(p->file->flags & TF_NO_HOLD);
}

/* Count an open handle on its instance (lock taken here). */
static void hold_instance(struct fdr_file *f, int delta)
{
	struct fdr_abi_instance *in = &fdr_session_control(f->s)->instances[f->p.inst];
	uint32_t me = (uint32_t)getpid(), i, free_slot = FDR_MAX_HOLDERS;

	if (fdr_session_lock(f->s))
		return;
	for (i = 0; i < FDR_MAX_HOLDERS; i++) {
		pid_t pid = (pid_t)in->holders[i].pid;

		if (in->holders[i].pid == me && in->holders[i].count)
			break;
		/* a slot is free when empty, or when its process is gone */
		if ((!in->holders[i].count || (pid && kill(pid, 0) < 0 && errno == ESRCH)) &&
		    free_slot == FDR_MAX_HOLDERS)
			free_slot = i;
	}
	if (delta > 0) {
		if (i == FDR_MAX_HOLDERS && free_slot < FDR_MAX_HOLDERS) {
			i = free_slot;
			in->holders[i].pid = me;
			in->holders[i].count = 0;
		}
		if (i < FDR_MAX_HOLDERS)
			in->holders[i].count++;
		else
			in->open_files++;
		f->held = 1;
	} else if (i < FDR_MAX_HOLDERS) {
		in->holders[i].count--;
	} else if (in->open_files) {
		in->open_files--;
	}
	fdr_session_unlock(f->s);
}

/* Is an instance held open by a live process? (lock held) */
static int instance_busy(const struct fdr_abi_instance *in)
{
	uint32_t i;

	if (in->open_files)
		return 1;
	for (i = 0; i < FDR_MAX_HOLDERS; i++) {
		pid_t pid = (pid_t)in->holders[i].pid;

		if (in->holders[i].count && pid && (kill(pid, 0) == 0 || errno != ESRCH))
			return 1;
	}
	return 0;
}

/* The next record formatted into @dst (a pipe: after its loss line). 1, 0 (none), or -errno. */
static int format_next(struct fdr_file *f, struct fdr_buf *dst, int consuming)
{
	struct fdr_record rec;
	int ret = fdr_reader_next(f->reader, &rec);

	if (ret <= 0)
		return ret;
	if (consuming && rec.lost_before)
		fdr_buf_printf(dst, "CPU:%u [LOST %" PRIu64 " EVENTS]\n", rec.cpu, rec.lost_before);
	ret = fdr_format_record(f->s, f->p.inst, &rec, dst);
	return ret ? ret : 1;
}

/* Format records from f->reader into f->content until it holds at least @want bytes. */
static int fill_records(struct fdr_file *f, size_t want, int consuming)
{
	int ret, n = 0;

	while (f->content.len - f->off < want) {
		ret = format_next(f, &f->content, consuming);
		if (ret <= 0)
			return ret < 0 ? ret : n;
		n++;
	}
	return n;
}

/*
 * A linked session's top instance (fdr start -k): its trace and trace_pipe
 * merge the kernel instance's lines (kmerge.c). At the first read, unless
 * opened with FDR_FILE_NO_KERNEL; the header gets the line naming the kernel
 * instance, or the reason it is not merged.
 */
static int km_setup(struct fdr_file *f, int consuming, struct fdr_buf *hdr)
{
	char why[4600];
	int ret;

	if (f->km_tried)
		return 0;
	f->km_tried = 1;
	if (f->p.inst != 0 || f->no_kernel)
		return 0;
	ret = fdr_kmerge_open(f->s, f->p.cpu, consuming, &f->km, why, sizeof(why));
	if (ret)
		return ret;
	if (f->km)
		return fdr_kmerge_header(f->km, hdr);
	return why[0] ? fdr_buf_printf(hdr, "%s", why) : 0;
}

/* trace of a linked session: fdr's records and the kernel's lines, merged, into content */
static int km_fill_trace(struct fdr_file *f, size_t n)
{
	for (;;) {
		int need, ret = fdr_kmerge_step(f->km, &f->content, f->off + n, 0, &need);

		if (ret < 0)
			return ret;
		if (f->content.len - f->off >= n)
			return 0;
		if (need) {
			int i;

			/* a few records at a time: the merge decides line by line */
			for (i = 0, ret = 1; i < 64 && ret == 1; i++)
				ret = format_next(f, fdr_kmerge_fdr_buf(f->km), 0);
			if (ret < 0)
				return ret;
			if (ret == 0)
				fdr_kmerge_fdr_end(f->km);
			continue;
		}
		if (ret == 0)
			return 0; /* both sides ended */
	}
}

/*
 * trace_pipe of a linked session: what both sides have now, merged. @flush (the
 * reader stops, fdr_file_end()): no more records taken from either side, every
 * line held goes.
 */
static int km_fill_pipe(struct fdr_file *f, size_t n, int flush)
{
	struct fdr_buf *fb = fdr_kmerge_fdr_buf(f->km);
	int need, ret = 1;

	if (flush) {
		ret = fdr_kmerge_end(f->km);
		if (ret)
			return ret;
	}
	while (!flush && ret == 1 && fb->len < 65536)
		ret = format_next(f, fb, 1);
	if (ret < 0)
		return ret;
	ret = fdr_kmerge_step(f->km, &f->content, f->off + n, flush, &need);
	return ret < 0 ? ret : 0;
}

static void content_compact(struct fdr_file *f)
{
	fdr_ctl_compact(&f->content, &f->off);
}

static ssize_t serve(struct fdr_file *f, void *buf, size_t n)
{
	size_t avail = f->content.len - f->off;

	if (n > avail)
		n = avail;
	if (!n)
		return 0;
	memcpy(buf, f->content.data + f->off, n);
	f->off += n;
	return (ssize_t)n;
}

static ssize_t read_trace(struct fdr_file *f, void *buf, size_t n)
{
	int ret;

	if (!f->header_done) {
		unsigned rf = f->p.file->arg & FDR_READ_SNAPSHOT;

		f->header_done = 1;
		if (rf && (!snapshot_allocated(f->s, f->p.inst) ||
			   snapshot_empty(f->s, f->p.inst, f->p.cpu))) {
			ret = snapshot_help(f);
			if (ret)
				return ret;
			return serve(f, buf, n);
		}
		ret = fdr_format_trace_header_ex(f->s, f->p.inst, rf, &f->content);
		if (!ret && !rf)
			ret = km_setup(f, 0, &f->content);
		if (ret)
			return ret;
		ret = fdr_reader_open(f->s, f->p.inst, f->p.cpu, rf, &f->reader);
		if (ret)
			return ret;
	}
	if (!f->reader)
		return serve(f, buf, n);
	content_compact(f);
	ret = f->km ? km_fill_trace(f, n) : fill_records(f, n, 0);
	if (ret < 0)
		return ret;
	return serve(f, buf, n);
}

static int tracing_is_on(struct fdr_file *f)
{
	return ctl_of(f->s)->instances[f->p.inst].tracing_on != 0;
}

static ssize_t read_pipe(struct fdr_file *f, void *buf, size_t n)
{
	int ret;

	if (!f->km_tried && f->p.file->arg == 0) {
		/* a linked session: the kernel's trace_pipe too, its header line first */
		ret = km_setup(f, 1, &f->content);
		if (ret)
			return ret;
	}
	for (;;) {
		content_compact(f);
		if (f->km && (f->content.len == f->off || f->ended)) {
			ret = km_fill_pipe(f, n, f->ended);
			if (ret < 0)
				return ret;
		}
		if (f->content.len > f->off || f->ended)
			break;
		if (!f->km) {
			ret = fill_records(f, n, 1);
			if (ret < 0)
				return ret;
		}
		if (f->content.len > f->off)
			break;
		if (!tracing_is_on(f) && f->got_data && !(f->km && fdr_kmerge_pending(f->km)))
			return 0;
		if (f->flags & O_NONBLOCK)
			return -EAGAIN;
		/* the kernel's side is looked at every 20 ms */
		ret = fdr_reader_wait(f->reader, f->km ? 20 : 100);
		if (ret < 0)
			return ret;
	}
	f->got_data = 1;
	return serve(f, buf, n);
}

static ssize_t read_pipe_raw(struct fdr_file *f, void *buf, size_t n)
{
	uint32_t ss = ctl_of(f->s)->instances[f->p.inst].subbuf_size;
	int ret;

	if (!f->page && !(f->page = malloc(ss)))
		return -ENOMEM;
	while (f->page_off >= f->page_len) {
		ret = fdr_reader_raw_page(f->reader, f->page, ss);
		if (ret < 0)
			return ret;
		if (ret > 0) {
			f->page_len = ss;
			f->page_off = 0;
			break;
		}
		if (f->flags & O_NONBLOCK)
			return -EAGAIN;
		ret = fdr_reader_wait(f->reader, 100);
		if (ret < 0)
			return ret;
	}
	if (n > f->page_len - f->page_off)
		n = f->page_len - f->page_off;
	memcpy(buf, f->page + f->page_off, n);
	f->page_off += n;
	return (ssize_t)n;
}

/* events/enable, events/SYS/enable and events/SYS/EVENT/enable (the row's @in says which) */
static int write_enable(struct fdr_file *f, char *cmd, size_t n)
{
	struct fdr_abi_instance *in = &fdr_session_control(f->s)->instances[f->p.inst];
	enum tree_dir where = f->p.file->in;
	uint64_t v;
	/* the error_log location is the file's name, for the three enable files alike */
	int ret = write_number(f, "enable", cmd, 0, 1, &v);
	char rule[FDR_RULE_LEN];

	(void)n;
	if (ret)
		return ret;
	if (where == D_EVENTS)
		snprintf(rule, sizeof(rule), "*:*");
	else if (where == D_SYS)
		snprintf(rule, sizeof(rule), "%s:*", f->p.sys);
	else
		snprintf(rule, sizeof(rule), "%s:%s", f->p.sys, f->p.ev);
	ret = fdr_session_lock(f->s);
	if (ret)
		return ret;
	apply_rule(f->s, f->p.inst, rule, (int)v);
	if (where != D_EVENT) {
		if (v)
			pending_add(in, rule);
		else if (where == D_EVENTS)
			in->nr_pending = 0;
		else
			pending_del(in, rule);
	}
	fdr_session_unlock(f->s);
	fdr_session_changed(f->s);
	return 0;
}

static int write_clock(struct fdr_file *f, char *cmd, size_t len)
{
	char *name = cmd;
	int clock;

	(void)len;
	strip_space(&name);
	clock = fdr_trace_clock_by_name(name);
	if (clock < 0)
		return bad_input(
			f, "trace_clock", cmd, (int)(name - cmd),
			"expected one of: local global counter uptime perf mono mono_raw boot tai x86-tsc; found '%s'",
			name);
	fdr_session_control(f->s)->instances[f->p.inst].clock = (uint32_t)clock;
	fdr_session_changed(f->s);
	return 0;
}

static int set_option(struct fdr_file *f, size_t k, int on)
{
	struct fdr_abi_instance *in = &fdr_session_control(f->s)->instances[f->p.inst];
	int ret = fdr_session_lock(f->s);

	if (ret)
		return ret;
	if (on)
		in->options |= tree_options[k].bit;
	else
		in->options &= ~tree_options[k].bit;
	fdr_hooks_recount(fdr_session_control(f->s)); /* stacktrace takes the hooks' path */
	fdr_session_unlock(f->s);
	fdr_session_changed(f->s);
	return 0;
}

static int write_trace_options(struct fdr_file *f, char *cmd, size_t len)
{
	char *name = cmd;
	int on = 1;
	size_t k;

	(void)len;
	strip_space(&name);
	if (strncmp(name, "no", 2) == 0) {
		for (k = 0; k < NR_OPTIONS; k++)
			if (strcmp(tree_options[k].name, name) == 0)
				break;
		if (k == NR_OPTIONS) {
			on = 0;
			name += 2;
		}
	}
	for (k = 0; k < NR_OPTIONS; k++)
		if (strcmp(tree_options[k].name, name) == 0 &&
		    (!tree_options[k].top_only || f->p.inst == 0))
			break;
	if (k == NR_OPTIONS)
		return bad_input(
			f, "trace_options", cmd, (int)(name - cmd),
			"expected an option name or no<option> (see trace_options), found '%s'",
			name);
	return set_option(f, k, on);
}

/*
 * buffer_size_kb: 1 to what a ring file can hold with the instance's sub-buffer
 * size (fdr_session_max_kb(): about 4 GiB per CPU, its head being a 32-bit
 * offset); the kernel's only bound is memory (docs/design/differences.md).
 */
static int write_buffer_size(struct fdr_file *f, char *cmd, size_t len)
{
	uint64_t kb;
	uint32_t max = fdr_session_max_kb(ctl_of(f->s)->instances[f->p.inst].subbuf_size);
	int ret = write_number(f, "buffer_size_kb", cmd, 1, max, &kb);

	(void)len;
	if (ret)
		return ret;
	ret = fdr_session_lock(f->s);
	if (ret)
		return ret;
	ret = fdr_session_resize(f->s, f->p.inst, f->p.cpu, (uint32_t)kb, 0);
	fdr_session_unlock(f->s);
	return ret;
}

static int write_subbuf_size(struct fdr_file *f, char *cmd, size_t len)
{
	uint64_t kb;
	uint32_t ss = 4096;
	int ret = write_number(f, "buffer_subbuf_size_kb", cmd, 1, 512, &kb), cpu, nr;

	(void)len;
	if (ret)
		return ret;
	while (ss < kb * 1024)
		ss <<= 1;
	/* each CPU keeps its buffer_size_kb: it must fit sub-buffers of the new size */
	nr = fdr_ring_nr_cpus(f->s, f->p.inst);
	for (cpu = 0; cpu < nr; cpu++) {
		int cur = fdr_ring_cpu_size_kb(f->s, f->p.inst, (uint32_t)cpu);

		if (cur > 0 && (uint32_t)cur > fdr_session_max_kb(ss))
			return bad_input(
				f, "buffer_subbuf_size_kb", cmd, 0,
				"cpu%d's buffer_size_kb %d is more than sub-buffers of %u KiB allow (at most %u); make it smaller first",
				cpu, cur, ss / 1024, fdr_session_max_kb(ss));
	}
	ret = fdr_session_lock(f->s);
	if (ret)
		return ret;
	ret = fdr_session_resize(f->s, f->p.inst, -1, 0, ss);
	fdr_session_unlock(f->s);
	return ret;
}

/* events/SYS/EVENT/filter: compile, keep the old filter on error (see hooks-ctl.c) */
static int write_event_filter(struct fdr_file *f, char *cmd, size_t len)
{
	struct fdr_abi_control *c = fdr_session_control(f->s);
	const struct fdr_abi_event *e = event_find(f->s, f->p.sys, f->p.ev);
	const char *msg = NULL;
	int pos = 0, ret;

	(void)len;
	if (!e)
		return -ENOENT;
	ret = fdr_session_lock(f->s);
	if (ret)
		return ret;
	ret = fdr_hooks_filter_set(c, f->p.inst, e, cmd, 0, &msg, &pos);
	fdr_session_unlock(f->s);
	fdr_session_changed(f->s);
	if (ret == -EINVAL)
		return bad_input(f, "event filter parse error", cmd, pos, "%s",
				 msg ? msg : "Error");
	if (ret == -ENOSPC)
		return bad_input(f, "event filter parse error", cmd, -1,
				 "no room for another filter (at most %d in a session)",
				 FDR_MAX_FILTERS);
	return ret;
}

/*
 * events/SYS/filter: set the filter of every event of SYS that has the fields it
 * names; the others keep theirs and show the error (docs/tracefs.md, Filters). "0" clears all.
 */
static int write_sys_filter(struct fdr_file *f, char *cmd, size_t len)
{
	struct fdr_abi_control *c = fdr_session_control(f->s);
	const char *msg = NULL, *first_msg = NULL;
	int pos = 0, first_pos = 0, set = 0, failed = 0, ret;
	uint32_t i, bound;

	(void)len;
	ret = fdr_session_lock(f->s);
	if (ret)
		return ret;
	bound = fdr_events_bound(c);
	for (i = 0; i < bound; i++) {
		const struct fdr_abi_event *e = &c->events[i];

		if (e->state != FDR_EVENT_READY || strncmp(e->system, f->p.sys, FDR_NAME_LEN))
			continue;
		ret = fdr_hooks_filter_set(c, f->p.inst, e, cmd, 1, &msg, &pos);
		if (ret == 0) {
			set++;
		} else {
			failed++;
			if (!first_msg) {
				first_msg = msg;
				first_pos = pos;
			}
		}
	}
	fdr_session_unlock(f->s);
	fdr_session_changed(f->s);
	if (!set && failed)
		return bad_input(f, "event filter parse error", cmd, first_pos, "%s",
				 first_msg ? first_msg : "Error");
	return 0;
}

/*
 * events/SYS/EVENT/trigger: one trigger command per write of @n bytes; '>' does
 * not clear. As the kernel: a write of nothing does nothing, one of blanks
 * ("echo > trigger") is an error.
 */
static int write_trigger(struct fdr_file *f, char *cmd, size_t n)
{
	const struct fdr_abi_event *e = event_find(f->s, f->p.sys, f->p.ev);
	char msg[512] = "";
	int pos = 0, ret;

	if (!e)
		return -ENOENT;
	if (!n)
		return 0;
	if (!cmd[strspn(cmd, " \t\n")])
		return bad_input(f, "event trigger parse error", cmd, 0,
				 "expected a trigger (traceon, traceoff, snapshot, stacktrace, "
				 "enable_event or disable_event), found nothing");
	ret = fdr_session_lock(f->s);
	if (ret)
		return ret;
	ret = fdr_hooks_trigger_cmd(f->s, f->p.inst, e, cmd, msg, sizeof(msg), &pos);
	fdr_session_unlock(f->s);
	fdr_session_changed(f->s);
	if (ret == -EINVAL)
		return bad_input(f, "event trigger parse error", cmd, pos, "%s", msg);
	if (ret == -ENOSPC)
		return bad_input(f, "event trigger parse error", cmd, -1,
				 "no room for another trigger (at most %d in a session)",
				 FDR_MAX_TRIGGERS);
	return ret;
}

/*
 * tracing_cpumask: the CPUs whose events the instance records, in the format
 * it is read in (groups of up to 8 hex digits for 32 CPUs each, separated by
 * commas, the highest first; an empty group is 0); a CPU beyond the session's
 * is an error, as in the kernel. An empty write: no CPU.
 */
static int write_cpumask(struct fdr_file *f, char *cmd, size_t len)
{
	struct fdr_abi_control *c = fdr_session_control(f->s);
	struct fdr_abi_instance *in = &c->instances[f->p.inst];
	uint64_t mask[FDR_MAX_CPUS / 64] = { 0 };
	const char *s = cmd + strspn(cmd, " \t\n"), *end = s + strcspn(s, " \t\n"), *p, *q;
	uint32_t nr_cpus = c->nr_cpus, groups = 1, g, bit;
	int ret;

	(void)len;
	if (end[strspn(end, " \t\n")])
		return bad_input(f, "tracing_cpumask", cmd, (int)(end - cmd),
				 "expected one hex CPU mask, found more after it");
	for (p = s; p < end; p++)
		groups += *p == ',';
	if (groups > FDR_MAX_CPUS / 32)
		return bad_input(f, "tracing_cpumask", cmd, (int)(s - cmd),
				 "expected at most %d groups of 32 CPUs, found %u",
				 FDR_MAX_CPUS / 32, groups);
	/* group k from the left holds CPUs (groups - 1 - k) * 32 ... */
	for (p = s, g = groups; g-- > 0; p = q + 1) {
		uint64_t v = 0;

		q = p + strcspn(p, ",");
		if (q > end)
			q = end;
		if (q - p > 8) /* an empty group is 0, as in the kernel */
			return bad_input(
				f, "tracing_cpumask", cmd, (int)(p - cmd),
				"expected at most 8 hex digits per group of 32 CPUs, found '%.*s'",
				(int)(q - p), p);
		for (; p < q; p++) {
			if (!isxdigit((unsigned char)*p))
				return bad_input(f, "tracing_cpumask", cmd, (int)(p - cmd),
						 "expected a hex digit, found '%c'", *p);
			v = v << 4 |
			    (uint64_t)(isdigit((unsigned char)*p) ? *p - '0' :
								    (*p | 0x20) - 'a' + 10);
		}
		for (bit = 0; bit < 32; bit++) {
			uint32_t cpu = g * 32 + bit;

			if (!((v >> bit) & 1))
				continue;
			if (cpu >= nr_cpus)
				return bad_input(f, "tracing_cpumask", cmd, (int)(s - cmd),
						 "CPU %u is set, but the session has CPUs 0 to %u",
						 cpu, nr_cpus - 1);
			mask[cpu / 64] |= 1ull << (cpu % 64);
		}
	}
	ret = fdr_session_lock(f->s);
	if (ret)
		return ret;
	/* CPUs beyond the session's stay set: they have no buffer anyway */
	for (g = 0; g < FDR_MAX_CPUS / 64; g++) {
		uint64_t keep = 0;

		for (bit = 0; bit < 64; bit++)
			if (g * 64 + bit >= nr_cpus)
				keep |= 1ull << bit;
		__atomic_store_n(&in->cpumask[g], mask[g] | keep, __ATOMIC_RELEASE);
	}
	fdr_hooks_recount(c);
	fdr_session_unlock(f->s);
	fdr_session_changed(f->s);
	return 0;
}

/*
 * set_event_pid, set_event_notrace_pid: whitespace-separated pids, added to the
 * list (O_TRUNC at open emptied it). Each is read as the kernel reads it
 * (kstrtoul, base 0: decimal, 0x hex or 0 octal, a '+' taken); it must be a
 * pid, 0..INT32_MAX. A bad token or too many pids refuse the whole write, and
 * the list stays as it was.
 */
static int write_pids(struct fdr_file *f, const char *cmd, int notrace)
{
	const char *loc = notrace ? "set_event_notrace_pid" : "set_event_pid";
	struct fdr_abi_control *c = fdr_session_control(f->s);
	int32_t add[FDR_MAX_PIDS], *pids;
	uint32_t nadd = 0, n, i, *nr;
	const char *p = cmd;
	int ret;

	for (;;) {
		const char *tok;
		char *end;
		unsigned long long v;
		size_t len;

		while (*p && isspace((unsigned char)*p))
			p++;
		if (!*p)
			break;
		tok = p;
		for (len = 0; tok[len] && !isspace((unsigned char)tok[len]); len++)
			;
		errno = 0;
		v = strtoull(tok, &end, 0);
		if (*tok == '-' || !isdigit((unsigned char)tok[*tok == '+']) || end != tok + len ||
		    errno || v > INT32_MAX)
			return bad_input(f, loc, cmd, (int)(tok - cmd),
					 "expected a pid (0..%d, as in kstrtoul: decimal, 0x "
					 "hex or 0 octal), found '%.*s'",
					 INT32_MAX, (int)len, tok);
		for (i = 0; i < nadd && add[i] != (int32_t)v; i++)
			;
		if (i == nadd) {
			if (nadd == FDR_MAX_PIDS)
				return bad_input(f, loc, cmd, (int)(tok - cmd),
						 "too many pids (at most %d per instance)",
						 FDR_MAX_PIDS);
			add[nadd++] = (int32_t)v;
		}
		p = tok + len;
	}
	ret = fdr_session_lock(f->s);
	if (ret)
		return ret;
	pid_list(f->s, f->p.inst, notrace, &pids, &nr);
	if (c->instances[f->p.inst].options & FDR_OPT_EVENT_FORK)
		fdr_pids_prune(pids, nr, !notrace && !nadd);
	n = fdr_pids_count(nr);
	for (i = 0; i < nadd; i++)
		n += !fdr_pids_has(pids, nr, add[i]);
	if (n > FDR_MAX_PIDS) {
		fdr_session_unlock(f->s);
		return bad_input(f, loc, cmd, 0, "too many pids (at most %d per instance)",
				 FDR_MAX_PIDS);
	}
	/* added at the end: a writer never sees a list without an entry that stays */
	for (i = 0; i < nadd; i++)
		fdr_pids_add(pids, nr, add[i]);
	fdr_hooks_recount(c);
	fdr_session_unlock(f->s);
	fdr_session_changed(f->s);
	return 0;
}

static int write_set_event_pid(struct fdr_file *f, char *cmd, size_t len)
{
	(void)len;
	return write_pids(f, cmd, 0);
}

static int write_set_event_notrace_pid(struct fdr_file *f, char *cmd, size_t len)
{
	(void)len;
	return write_pids(f, cmd, 1);
}

/*
 * snapshot: 0 frees the spare buffers (EINVAL on a per-CPU file), 1 allocates
 * them if needed and swaps, any other number clears the snapshot (docs/tracefs.md, Snapshots).
 */
static int write_snapshot(struct fdr_file *f, char *cmd, size_t len)
{
	int cpu = f->p.cpu, ret;
	uint64_t v;

	(void)len;
	ret = write_number(f, "snapshot", cmd, 0, UINT64_MAX, &v);
	if (ret)
		return ret;
	if (v == 0) {
		if (cpu >= 0)
			return bad_input(
				f, "snapshot", cmd, 0,
				"0 (free) is invalid for a per_cpu snapshot file; expected 1 (take) or 2 (clear)");
		ret = fdr_session_lock(f->s);
		if (ret)
			return ret;
		ret = fdr_session_snapshot_alloc(f->s, f->p.inst, 0);
		fdr_session_unlock(f->s);
		return ret;
	}
	if (v == 1) {
		if (!snapshot_allocated(f->s, f->p.inst)) {
			ret = fdr_session_lock(f->s);
			if (ret)
				return ret;
			ret = fdr_session_snapshot_alloc(f->s, f->p.inst, 1);
			fdr_session_unlock(f->s);
			if (ret)
				return ret;
		}
		return fdr_session_snapshot(f->s, f->p.inst, cpu);
	}
	if (!snapshot_allocated(f->s, f->p.inst))
		return 0;
	return fdr_ring_clear_ex(f->s, f->p.inst, cpu, FDR_READ_SNAPSHOT);
}

/*
 * snapshot_allocated (fdr only: docs/design/differences.md): whether the instance
 * has snapshot buffers; 1 allocates them without taking a snapshot ("fdr
 * snapshot alloc"), 0 frees them as "0 > snapshot" does.
 */
static int render_snapshot_allocated(struct fdr_file *f, struct fdr_buf *b)
{
	return fdr_buf_printf(b, "%d\n", snapshot_allocated(f->s, f->p.inst));
}

static int write_snapshot_allocated(struct fdr_file *f, char *cmd, size_t len)
{
	uint64_t v;
	int ret = write_number(f, "snapshot_allocated", cmd, 0, 1, &v);

	(void)len;
	if (ret)
		return ret;
	ret = fdr_session_lock(f->s);
	if (ret)
		return ret;
	ret = fdr_session_snapshot_alloc(f->s, f->p.inst, (int)v);
	fdr_session_unlock(f->s);
	return ret;
}

/* Who a marker is from: the thread, its process, its comm and its last CPU (-1). */
struct marker_who {
	int32_t tid, tgid, cpu;
	char comm[FDR_COMM_LEN];
};

/* Read /proc/TID/NAME (or /proc/thread-self/NAME for @tid 0) into @buf; its length or -1. */
static ssize_t proc_read(int32_t tid, const char *name, char *buf, size_t len)
{
	char path[64];
	ssize_t n;
	int fd;

	if (tid)
		snprintf(path, sizeof(path), "/proc/%d/%s", (int)tid, name);
	else
		snprintf(path, sizeof(path), "/proc/thread-self/%s", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = 0;
	return n;
}

/*
 * Fill @w for thread @tid (0: the caller). What /proc does not tell (the thread
 * is gone, or in no namespace we see) stays at the caller's own values.
 */
static void marker_who(int32_t tid, struct marker_who *w)
{
	char buf[1024], *p;
	int field;

	memset(w, 0, sizeof(*w));
	w->tid = (int32_t)syscall(SYS_gettid);
	w->tgid = (int32_t)getpid();
	w->cpu = -1;
	/* the writer's comm; where /proc has none for it, the caller's own */
	if (tid > 0 && proc_read(tid, "comm", buf, sizeof(buf)) > 0) {
		w->tid = tid;
	} else {
		tid = 0;
		if (proc_read(0, "comm", buf, sizeof(buf)) <= 0)
			buf[0] = 0;
	}
	if (buf[0]) {
		buf[strcspn(buf, "\n")] = 0;
		memcpy(w->comm, buf, strnlen(buf, sizeof(w->comm) - 1));
	}
	if (!tid)
		return;
	if (proc_read(tid, "status", buf, sizeof(buf)) > 0 && (p = strstr(buf, "\nTgid:")))
		w->tgid = (int32_t)strtol(p + 6, NULL, 10);
	/* stat: "pid (comm) state ..." with processor the 37th field after ')' */
	if (proc_read(tid, "stat", buf, sizeof(buf)) > 0 && (p = strrchr(buf, ')'))) {
		for (field = 0; field < 37 && p; field++)
			p = strchr(p + 1, ' ');
		if (p)
			w->cpu = (int32_t)strtol(p + 1, NULL, 10);
	}
}

/*
 * trace_marker: one ftrace:print record of the text (cut to what fits, newline
 * added), from the writer (fdr_file_set_writer()): its pid and comm, on its CPU.
 */
static ssize_t write_marker(struct fdr_file *f, const void *buf, size_t n)
{
	unsigned char payload[FDR_MAX_RECORD];
	const struct fdr_abi_instance *in = &ctl_of(f->s)->instances[f->p.inst];
	struct marker_who who;
	cpu_set_t old, one;
	size_t len, taken;
	int ret, pinned = 0;

	if (!(in->options & FDR_OPT_MARKERS))
		return -EINVAL;
	if (!in->tracing_on)
		return -EBADF;
	marker_who(f->writer, &who);
	len = fdr_marker_record(payload, buf, n, who.tid, 0, &taken);
	/* saved_cmdlines and saved_tgids: name the writer */
	fdr_cmdline_save(fdr_session_control(f->s), who.tid, who.tgid, who.comm);
	/* on the writer's CPU, as the kernel records it: here for the write only */
	if (who.cpu >= 0 && who.cpu < CPU_SETSIZE && who.cpu != sched_getcpu() &&
	    sched_getaffinity(0, sizeof(old), &old) == 0) {
		CPU_ZERO(&one);
		CPU_SET(who.cpu, &one);
		pinned = sched_setaffinity(0, sizeof(one), &one) == 0;
	}
	ret = fdr_session_write(f->s, f->p.inst, payload, len);
	if (pinned)
		sched_setaffinity(0, sizeof(old), &old);
	if (ret == -ENOSPC)
		return -EBADF; /* full in discard mode, as the kernel answers */
	if (ret)
		return ret;
	return (ssize_t)taken;
}

/* ---- the handlers of the rows: commands (write), '>' (trunc), streams (open, poll) ------- */

static int write_tracing_on(struct fdr_file *f, char *cmd, size_t len)
{
	uint64_t v;
	int ret = write_number(f, "tracing_on", cmd, 0, UINT32_MAX, &v);

	(void)len;
	if (ret)
		return ret;
	__atomic_store_n(&inst_of(f)->tracing_on, v ? 1u : 0u, __ATOMIC_RELEASE);
	fdr_session_changed(f->s);
	return 0;
}

static int write_set_event_locked(struct fdr_file *f, char *cmd, size_t len)
{
	int ret = fdr_session_lock(f->s);

	(void)len;
	if (ret)
		return ret;
	ret = write_set_event(f, cmd);
	fdr_session_unlock(f->s);
	fdr_session_changed(f->s);
	return ret;
}

static int write_option(struct fdr_file *f, char *cmd, size_t len)
{
	uint64_t v;
	int ret = write_number(f, tree_options[f->p.opt].name, cmd, 0, 1, &v);

	(void)len;
	return ret ? ret : set_option(f, (size_t)f->p.opt, (int)v);
}

static int write_current_tracer(struct fdr_file *f, char *cmd, size_t len)
{
	char *name = cmd;

	(void)len;
	strip_space(&name);
	if (strcmp(name, "nop"))
		return bad_input(f, "current_tracer", cmd, (int)(name - cmd),
				 "expected 'nop' (fdr has only the event tracer), found '%s'",
				 name);
	return 0;
}

/* error_log: O_TRUNC at open cleared it; other writes are taken and ignored */
static int write_ignored(struct fdr_file *f, char *cmd, size_t len)
{
	(void)f;
	(void)cmd;
	(void)len;
	return 0;
}

/* trace, per_cpu/cpuN/trace: any bytes taken and ignored; O_TRUNC at open cleared */
static ssize_t write_raw_ignored(struct fdr_file *f, const void *buf, size_t n)
{
	(void)f;
	(void)buf;
	return (ssize_t)n;
}

static int trunc_trace(struct fdr_file *f)
{
	int ret = fdr_ring_clear(f->s, f->p.inst, f->p.cpu);

	/* a linked session: the kernel instance's buffer too (kmerge.c) */
	if (!ret && f->p.inst == 0 && !f->no_kernel)
		ret = fdr_kmerge_clear(f->s, f->p.cpu);
	return ret;
}

static int trunc_set_event(struct fdr_file *f)
{
	int ret = fdr_session_lock(f->s);

	if (ret)
		return ret;
	disable_all(f->s, f->p.inst);
	fdr_session_unlock(f->s);
	fdr_session_changed(f->s);
	return 0;
}

/* set_event_pid, set_event_notrace_pid ('>'): the list emptied */
static int trunc_pids(struct fdr_file *f, int notrace)
{
	int32_t *pids;
	uint32_t *nr;
	int ret = fdr_session_lock(f->s);

	if (ret)
		return ret;
	pid_list(f->s, f->p.inst, notrace, &pids, &nr);
	__atomic_store_n(nr, 0, __ATOMIC_RELEASE);
	fdr_hooks_recount(fdr_session_control(f->s));
	fdr_session_unlock(f->s);
	fdr_session_changed(f->s);
	return 0;
}

static int trunc_set_event_pid(struct fdr_file *f)
{
	return trunc_pids(f, 0);
}

static int trunc_set_event_notrace_pid(struct fdr_file *f)
{
	return trunc_pids(f, 1);
}

static int trunc_error_log(struct fdr_file *f)
{
	int ret = fdr_session_lock(f->s);

	if (ret)
		return ret;
	memset(inst_of(f)->errors, 0, sizeof(inst_of(f)->errors));
	fdr_session_unlock(f->s);
	return 0;
}

/*
 * uprobe_events, dynamic_events: line by line, as the kernel (probes.c does each
 * line). '#' comments and blank lines are skipped; the first refused line stops
 * the write with its errno, its message in error_log under "trace_uprobe" with
 * the line's command, and the lines before it stay applied.
 */
static int write_uprobe_events(struct fdr_file *f, char *cmd, size_t n)
{
	struct fdr_probes_err err;
	char *line = cmd, *next;
	int ret = 0;

	(void)n;
	for (; line && !ret; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		ret = fdr_probes_line(f->s, line, &err);
	}
	if (!ret)
		return 0;
	snprintf(f->err, sizeof(f->err), "trace_uprobe: %s\n  %s\n", err.msg, err.cmd);
	if (err.pos >= 0 && strlen(f->err) + (size_t)err.pos + 4 < sizeof(f->err)) {
		size_t k = strlen(f->err);

		memset(f->err + k, ' ', (size_t)err.pos + 2);
		snprintf(f->err + k + err.pos + 2, sizeof(f->err) - k - (size_t)err.pos - 2, "^\n");
	}
	snprintf(f->log_loc, sizeof(f->log_loc), "trace_uprobe");
	snprintf(f->log_msg, sizeof(f->log_msg), "%s", err.msg);
	snprintf(f->log_cmd, sizeof(f->log_cmd), "%s", err.cmd[0] ? err.cmd : " ");
	f->log_pos = err.pos;
	f->log_pending = 1;
	return ret;
}

/* uprobe_events, dynamic_events '>': every probe removed, or EBUSY and none */
static int trunc_uprobe_events(struct fdr_file *f)
{
	struct fdr_probes_err err;

	return fdr_probes_clear(f->s, &err);
}

static int render_uprobe_events(struct fdr_file *f, struct fdr_buf *b)
{
	return fdr_probes_render(f->s, b);
}

static int render_uprobe_profile(struct fdr_file *f, struct fdr_buf *b)
{
	return fdr_probes_profile(f->s, b);
}

/* trace_pipe, trace_pipe_raw, snapshot_raw: the consuming reader, taken at open (EBUSY) */
static int open_pipe(struct fdr_file *f)
{
	return fdr_reader_open(f->s, f->p.inst, f->p.cpu, FDR_READ_CONSUME | f->p.file->arg,
			       &f->reader);
}

static int poll_pipe(struct fdr_file *f, int timeout_ms)
{
	if (f->content.len > f->off || (f->page && f->page_off < f->page_len))
		return 1;
	if (f->km) {
		int waited = 0, r;

		/* readable: a merged line can go; a line held for the other side is not */
		for (;;) {
			int step = 20;

			content_compact(f);
			r = km_fill_pipe(f, 4096, f->ended);
			if (r < 0)
				return r;
			if (f->content.len > f->off)
				return 1;
			if (timeout_ms >= 0 && waited >= timeout_ms)
				return 0;
			if (timeout_ms >= 0 && timeout_ms - waited < step)
				step = timeout_ms - waited;
			/* fdr's side, at most 20 ms: the kernel's is looked at again then */
			r = fdr_reader_wait(f->reader, step);
			if (r < 0)
				return r;
			waited += step;
		}
	}
	return fdr_reader_wait(f->reader, timeout_ms);
}

/* ---- the table ------------------------------------------------------------------------------ */

#define DIR_ROW(n, where, kind, fl)                                            \
	{                                                                      \
		.name = n, .in = where, .mode = 0750, .flags = fl, .sub = kind \
	}

/* In each directory, the rows are listed in this order (then the dynamic children). */
static const struct tree_file tree_files[] = {
	/* the root of an instance */
	{ "README", D_ROOT, 0440, TF_TOP_ONLY, .render = render_readme },
	{ "available_events", D_ROOT, 0440, TF_TOP_ONLY, .render = render_available_events },
	{ "available_tracers", D_ROOT, 0440, 0, .render = render_nop },
	{ "buffer_size_kb", D_ROOT, 0640, 0, .render = render_buffer_size_kb,
	  .write = write_buffer_size },
	{ "buffer_subbuf_size_kb", D_ROOT, 0640, 0, .render = render_subbuf_size_kb,
	  .write = write_subbuf_size },
	{ "buffer_total_size_kb", D_ROOT, 0440, 0, .render = render_buffer_total_size_kb },
	{ "current_tracer", D_ROOT, 0640, 0, .render = render_nop, .write = write_current_tracer },
	{ "dynamic_events", D_ROOT, 0640, TF_TOP_ONLY, .trunc = trunc_uprobe_events,
	  .render = render_uprobe_events, .write = write_uprobe_events },
	{ "error_log", D_ROOT, 0640, 0, .trunc = trunc_error_log, .render = render_error_log,
	  .write = write_ignored },
	DIR_ROW("events", D_ROOT, D_EVENTS, 0),
	DIR_ROW("instances", D_ROOT, D_INSTANCES, TF_TOP_ONLY),
	DIR_ROW("options", D_ROOT, D_OPTIONS, 0),
	DIR_ROW("per_cpu", D_ROOT, D_PER_CPU, 0),
	{ "printk_formats", D_ROOT, 0440, TF_TOP_ONLY, .render = render_empty },
	{ "saved_cmdlines", D_ROOT, 0440, TF_TOP_ONLY, .render = render_saved_cmdlines },
	{ "saved_cmdlines_size", D_ROOT, 0440, TF_TOP_ONLY, .render = render_saved_cmdlines_size },
	{ "saved_tgids", D_ROOT, 0440, TF_TOP_ONLY, .render = render_saved_tgids },
	{ "set_event", D_ROOT, 0640, 0, .trunc = trunc_set_event, .render = render_set_event,
	  .write = write_set_event_locked },
	{ "set_event_pending", D_ROOT, 0440, 0, .render = render_set_event_pending },
	{ "set_event_notrace_pid", D_ROOT, 0640, 0, .trunc = trunc_set_event_notrace_pid,
	  .render = render_set_event_notrace_pid, .write = write_set_event_notrace_pid },
	{ "set_event_pid", D_ROOT, 0640, 0, .trunc = trunc_set_event_pid,
	  .render = render_set_event_pid, .write = write_set_event_pid },
	{ "snapshot", D_ROOT, 0640, 0, .arg = FDR_READ_SNAPSHOT, .read = read_trace,
	  .write = write_snapshot },
	{ "snapshot_allocated", D_ROOT, 0640, 0, .render = render_snapshot_allocated,
	  .write = write_snapshot_allocated },
	{ "timestamp_mode", D_ROOT, 0440, 0, .render = render_timestamp_mode },
	{ "tracing_cpumask", D_ROOT, 0640, 0, .render = render_cpumask, .write = write_cpumask },
	{ "trace", D_ROOT, 0640, 0, .trunc = trunc_trace, .read = read_trace,
	  .write_raw = write_raw_ignored },
	{ "trace_clock", D_ROOT, 0640, 0, .render = render_trace_clock, .write = write_clock },
	{ "trace_marker", D_ROOT, 0220, 0, .write_raw = write_marker },
	{ "trace_options", D_ROOT, 0640, 0, .render = render_trace_options,
	  .write = write_trace_options },
	{ "trace_pipe", D_ROOT, 0440, 0, .arg = 0, .open = open_pipe, .read = read_pipe,
	  .poll = poll_pipe },
	{ "tracing_on", D_ROOT, 0640, 0, .render = render_tracing_on, .write = write_tracing_on },
	{ "uprobe_events", D_ROOT, 0640, TF_TOP_ONLY, .trunc = trunc_uprobe_events,
	  .render = render_uprobe_events, .write = write_uprobe_events },
	{ "uprobe_profile", D_ROOT, 0440, TF_TOP_ONLY, .render = render_uprobe_profile },

	/* events/ */
	{ "enable", D_EVENTS, 0640, 0, .render = render_group_enable, .write = write_enable },
	{ "header_event", D_EVENTS, 0440, TF_NO_HOLD, .render = render_header_event },
	{ "header_page", D_EVENTS, 0440, TF_NO_HOLD, .render = render_header_page },

	/* events/SYS/ */
	{ "enable", D_SYS, 0640, TF_NOT_FTRACE, .render = render_group_enable,
	  .write = write_enable },
	{ "filter", D_SYS, 0640, TF_NOT_FTRACE, .render = render_sys_filter,
	  .write = write_sys_filter },

	/* events/SYS/EVENT/ */
	{ "enable", D_EVENT, 0640, TF_NOT_FTRACE, .render = render_event_enable,
	  .write = write_enable },
	{ "filter", D_EVENT, 0640, TF_NOT_FTRACE, .render = render_event_filter,
	  .write = write_event_filter },
	{ "format", D_EVENT, 0440, TF_NO_HOLD, .render = render_event_format },
	{ "id", D_EVENT, 0440, TF_NO_HOLD, .render = render_event_id },
	{ "trigger", D_EVENT, 0640, 0, .render = render_event_trigger, .write = write_trigger },

	/* per_cpu/cpuN/ */
	{ "buffer_size_kb", D_CPU, 0640, 0, .render = render_buffer_size_kb,
	  .write = write_buffer_size },
	{ "snapshot", D_CPU, 0640, 0, .arg = FDR_READ_SNAPSHOT, .read = read_trace,
	  .write = write_snapshot },
	{ "snapshot_raw", D_CPU, 0440, 0, .arg = FDR_READ_SNAPSHOT, .open = open_pipe,
	  .read = read_pipe_raw, .poll = poll_pipe },
	{ "stats", D_CPU, 0440, 0, .render = render_stats },
	{ "trace", D_CPU, 0640, 0, .trunc = trunc_trace, .read = read_trace,
	  .write_raw = write_raw_ignored },
	{ "trace_pipe", D_CPU, 0440, 0, .open = open_pipe, .read = read_pipe, .poll = poll_pipe },
	{ "trace_pipe_raw", D_CPU, 0440, 0, .open = open_pipe, .read = read_pipe_raw,
	  .poll = poll_pipe },
};

#define NR_TREE_FILES (sizeof(tree_files) / sizeof(tree_files[0]))

/* options/NAME: one file per line of tree_options, all with these handlers */
static const struct tree_file option_file = {
	"", D_OPTIONS, 0640, 0, .render = render_option, .write = write_option
};

const char *fdr_file_notice(const struct fdr_file *f)
{
	return f->notice;
}

void fdr_file_set_writer(struct fdr_file *f, int32_t tid)
{
	f->writer = tid > 0 ? tid : 0;
}

/* ---- path resolution: the rows, then the dynamic children ---------------------------------- */

/* Is row @t there for the path @p is at (its instance, its event system)? */
static int row_visible(const struct tree_file *t, const struct tree_path *p)
{
	if ((t->flags & TF_TOP_ONLY) && p->inst != 0)
		return 0;
	if ((t->flags & TF_NOT_FTRACE) && is_print_event(p->sys, p->ev))
		return 0;
	return 1;
}

/* The row named @name in the directory @p is at; a file row only as the last component. */
static const struct tree_file *row_find(const struct tree_path *p, const char *name, int last)
{
	size_t k;

	for (k = 0; k < NR_TREE_FILES; k++) {
		const struct tree_file *t = &tree_files[k];

		if (t->in == p->dir && strcmp(t->name, name) == 0 && row_visible(t, p) &&
		    (t->sub != D_NONE || last))
			return t;
	}
	return NULL;
}

static int child_instance(struct fdr_session *s, struct tree_path *p, const char *name)
{
	if (find_instance(s, name, &p->inst))
		return -ENOENT;
	p->dir = D_ROOT;
	return 0;
}

static int child_system(struct fdr_session *s, struct tree_path *p, const char *name)
{
	if (strlen(name) >= FDR_NAME_LEN || !event_exists(s, name, NULL))
		return -ENOENT;
	memcpy(p->sys, name, strlen(name) + 1); /* checked: shorter than FDR_NAME_LEN */
	p->dir = D_SYS;
	return 0;
}

static int child_event(struct fdr_session *s, struct tree_path *p, const char *name)
{
	if (strlen(name) >= FDR_NAME_LEN || !event_exists(s, p->sys, name))
		return -ENOENT;
	memcpy(p->ev, name, strlen(name) + 1);
	p->dir = D_EVENT;
	return 0;
}

static int child_option(struct fdr_session *s, struct tree_path *p, const char *name)
{
	size_t k;

	(void)s;
	for (k = 0; k < NR_OPTIONS; k++)
		if (strcmp(tree_options[k].name, name) == 0 &&
		    (!tree_options[k].top_only || p->inst == 0)) {
			p->opt = (int)k;
			p->file = &option_file;
			return 0;
		}
	return -ENOENT;
}

static int child_cpu(struct fdr_session *s, struct tree_path *p, const char *name)
{
	p->cpu = parse_cpu_name(name, fdr_ring_nr_cpus(s, p->inst));
	if (p->cpu < 0)
		return -ENOENT;
	p->dir = D_CPU;
	return 0;
}

struct dirents {
	struct fdr_dirent *ents;
	size_t nr, cap;
};

static int ents_add(struct dirents *d, const char *name, int is_dir, unsigned mode);

static int list_instances(struct fdr_session *s, const struct tree_path *p, struct dirents *d)
{
	const struct fdr_abi_control *c = ctl_of(s);
	char name[FDR_NAME_LEN + 1];
	uint32_t i;
	int ret = 0;

	(void)p;
	for (i = 1; i < FDR_MAX_INSTANCES && !ret; i++)
		if (c->instances[i].state == FDR_INST_LIVE) {
			snprintf(name, sizeof(name), "%.*s", FDR_NAME_LEN, c->instances[i].name);
			ret = ents_add(d, name, 1, 0750);
		}
	return ret;
}

/* events/: the systems; events/SYS/: its events */
static int list_events(struct fdr_session *s, const struct tree_path *p, struct dirents *d)
{
	const struct fdr_abi_control *c = ctl_of(s);
	char name[FDR_NAME_LEN + 1];
	uint32_t i, bound = fdr_events_bound(c);
	int ret = 0;

	for (i = 0; i < bound && !ret; i++) {
		const struct fdr_abi_event *e = &c->events[i];

		if (e->state != FDR_EVENT_READY)
			continue;
		if (p->dir == D_SYS && strncmp(e->system, p->sys, FDR_NAME_LEN))
			continue;
		snprintf(name, sizeof(name), "%.*s", FDR_NAME_LEN,
			 p->dir == D_SYS ? e->name : e->system);
		ret = ents_add(d, name, 1, 0750);
	}
	return ret;
}

static int list_options(struct fdr_session *s, const struct tree_path *p, struct dirents *d)
{
	size_t k;
	int ret = 0;

	(void)s;
	for (k = 0; k < NR_OPTIONS && !ret; k++)
		if (!tree_options[k].top_only || p->inst == 0)
			ret = ents_add(d, tree_options[k].name, 0, option_file.mode);
	return ret;
}

static int list_cpus(struct fdr_session *s, const struct tree_path *p, struct dirents *d)
{
	int ncpu = fdr_ring_nr_cpus(s, p->inst), cpu, ret = 0;
	char name[32];

	for (cpu = 0; cpu < ncpu && !ret; cpu++) {
		snprintf(name, sizeof(name), "cpu%d", cpu);
		ret = ents_add(d, name, 1, 0750);
	}
	return ret;
}

/* The entries of a directory kind that come from the session, not from tree_files[]. */
static const struct {
	int (*lookup)(struct fdr_session *s, struct tree_path *p, const char *name);
	int (*list)(struct fdr_session *s, const struct tree_path *p, struct dirents *d);
} tree_dirs[NR_DIRS] = {
	[D_INSTANCES] = { child_instance, list_instances },
	[D_EVENTS] = { child_system, list_events },
	[D_SYS] = { child_event, list_events },
	[D_OPTIONS] = { child_option, list_options },
	[D_PER_CPU] = { child_cpu, list_cpus },
};

/* Resolve a tree path. Returns 0 or -ENOENT/-ENAMETOOLONG. */
static int resolve(struct fdr_session *s, const char *path, struct tree_path *p)
{
	char comp[8][FDR_NAME_LEN + 16];
	int n = split_path(path, comp), i;
	const struct fdr_abi_control *c = ctl_of(s);

	memset(p, 0, sizeof(*p));
	p->cpu = -1;
	p->dir = D_ROOT;
	if (n < 0)
		return n;
	for (i = 0; i < n; i++) {
		const struct tree_file *t;

		if (p->file)
			return -ENOENT; /* below a file */
		/* the files of an instance are there while it lives ("instances" always) */
		if (p->dir == D_ROOT && !(i == 0 && strcmp(comp[0], "instances") == 0) &&
		    c->instances[p->inst].state != FDR_INST_LIVE)
			return -ENOENT;
		t = row_find(p, comp[i], i + 1 == n);
		if (t && t->sub != D_NONE)
			p->dir = t->sub;
		else if (t)
			p->file = t;
		else if (!tree_dirs[p->dir].lookup || tree_dirs[p->dir].lookup(s, p, comp[i]))
			return -ENOENT;
	}
	return 0;
}

/* ---- open / read / write / close ------------------------------------------------------------- */

/**
 * fdr_file_open - open a file of the control tree
 * Returns 0, -ENOENT, -EISDIR, -EACCES (writing a read-only file), -EBUSY
 * (trace_pipe already being consumed), -EINVAL.
 */
int fdr_file_open(struct fdr_session *s, const char *path, int flags, struct fdr_file **out)
{
	struct fdr_file *f;
	int acc = flags & O_ACCMODE, ret;

	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	f->s = s;
	f->no_kernel = !!(flags & FDR_FILE_NO_KERNEL);
	flags &= ~FDR_FILE_NO_KERNEL;
	acc = flags & O_ACCMODE;
	f->flags = flags;
	ret = resolve(s, path, &f->p);
	if (ret)
		goto err;
	if (!f->p.file) {
		ret = -EISDIR;
		goto err;
	}
	if (acc != O_RDONLY && !(f->p.file->mode & 0200)) {
		ret = -EACCES;
		goto err;
	}
	if (acc != O_WRONLY && !(f->p.file->mode & 0400)) {
		ret = -EACCES;
		goto err;
	}
	if (f->p.file->open) {
		ret = f->p.file->open(f);
		if (ret)
			goto err;
	}
	/* shell ">" semantics, applied at open as tracefs does */
	if ((flags & O_TRUNC) && acc != O_RDONLY && f->p.file->trunc) {
		ret = f->p.file->trunc(f);
		if (ret)
			goto err;
	}
	if (holds_instance(&f->p))
		hold_instance(f, 1);
	*out = f;
	return 0;
err:
	fdr_file_close(f);
	return ret;
}

/**
 * fdr_file_end - a reader of trace_pipe stops: reads return what the file has
 * formatted (records it took from the ring), then the losses its reader found
 * that no record has reported yet, as "CPU:N [LOST M EVENTS]" lines, then 0.
 * Without this, a pipe stopped after a loss that its CPU's next record was to
 * report never says it. No effect on other files.
 * Returns 0 or -ENOMEM.
 */
int fdr_file_end(struct fdr_file *f)
{
	uint32_t i, cpu;
	uint64_t lost;
	int ret = 0;

	/* the text pipes: trace_pipe and per_cpu/cpuN/trace_pipe */
	if (f->ended || !f->reader || f->p.file->read != read_pipe)
		return 0;
	f->ended = 1;
	for (i = 0; !ret && fdr_reader_take_lost(f->reader, i, &cpu, &lost) == 0; i++)
		if (lost)
			ret = fdr_buf_printf(f->km ? fdr_kmerge_fdr_buf(f->km) : &f->content,
					     "CPU:%u [LOST %" PRIu64 " EVENTS]\n", cpu, lost);
	return ret;
}

/** fdr_file_error - the message of the last refused write ("" if none); borrowed */
const char *fdr_file_error(const struct fdr_file *f)
{
	return f->err;
}

/** fdr_file_close - close a handle; NULL is a no-op */
void fdr_file_close(struct fdr_file *f)
{
	if (!f)
		return;
	if (f->held)
		hold_instance(f, -1);
	fdr_reader_close(f->reader);
	fdr_kmerge_close(f->km);
	fdr_buf_free(&f->content);
	free(f->page);
	free(f);
}

/**
 * fdr_file_read - read from a file: ordinary files by offset, trace as a stream,
 * trace_pipe/trace_pipe_raw consuming (blocking unless O_NONBLOCK: -EAGAIN;
 * a signal during the wait gives -EINTR)
 * Returns bytes read, 0 at end of file, or a negative errno (-EINVAL for a
 * write-only file, as tracefs).
 */
ssize_t fdr_file_read(struct fdr_file *f, void *buf, size_t n)
{
	const struct tree_file *t = f->p.file;
	int ret;

	if ((f->flags & O_ACCMODE) == O_WRONLY || (!t->read && !t->render))
		return -EINVAL;
	if (t->read)
		return t->read(f, buf, n);
	if (!f->generated) {
		ret = t->render(f, &f->content);
		if (ret)
			return ret < 0 ? ret : -ENOMEM;
		f->generated = 1;
	}
	return serve(f, buf, n);
}

/**
 * fdr_file_poll - wait until a read would not block
 * Returns 1 (readable), 0 (timeout). Ordinary files are always readable.
 */
int fdr_file_poll(struct fdr_file *f, int timeout_ms)
{
	return f->p.file->poll ? f->p.file->poll(f, timeout_ms) : 1;
}

/**
 * fdr_file_write - one write(2) to a control file, i.e. one command
 * Returns the bytes taken, or a negative errno: -EINVAL (bad input: see
 * fdr_file_error() and error_log), -EBADF (trace_marker while tracing is off or
 * the buffer is full in discard mode), -EACCES, -ENOMEM, -ETIMEDOUT (lock).
 */
ssize_t fdr_file_write(struct fdr_file *f, const void *buf, size_t n)
{
	const struct tree_file *t = f->p.file;
	char *cmd;
	ssize_t ret = 0;

	f->err[0] = 0;
	f->notice[0] = 0;
	f->log_cmd[0] = 0;
	if ((f->flags & O_ACCMODE) == O_RDONLY)
		return -EBADF;
	if (t->write_raw)
		return t->write_raw(f, buf, n);
	cmd = malloc(n + 1);
	if (!cmd)
		return -ENOMEM;
	memcpy(cmd, buf, n);
	cmd[n] = 0;
	if (strlen(cmd) != n) {
		ret = bad_input(f, "write", cmd, (int)strlen(cmd),
				"expected text, found a NUL byte");
		goto out;
	}
	chomp(cmd, n);
	ret = t->write ? t->write(f, cmd, n) : -EACCES;
out:
	flush_error_log(f, cmd);
	free(cmd);
	return ret < 0 ? ret : (ssize_t)n;
}

/* ---- directories ----------------------------------------------------------------------------- */

/** fdr_tree_stat - is @path a directory, and its mode. Returns 0 or -ENOENT. */
int fdr_tree_stat(struct fdr_session *s, const char *path, int *is_dir, unsigned *mode)
{
	struct tree_path p;
	int ret = resolve(s, path, &p);

	if (ret)
		return ret;
	*is_dir = !p.file;
	*mode = p.file ? p.file->mode : 0750;
	return 0;
}

static int ents_add(struct dirents *d, const char *name, int is_dir, unsigned mode)
{
	size_t i;

	for (i = 0; i < d->nr; i++)
		if (strcmp(d->ents[i].name, name) == 0)
			return 0;
	if (d->nr == d->cap) {
		size_t ncap = d->cap ? d->cap * 2 : 32;
		struct fdr_dirent *n = realloc(d->ents, ncap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		d->ents = n;
		d->cap = ncap;
	}
	snprintf(d->ents[d->nr].name, sizeof(d->ents[d->nr].name), "%s", name);
	d->ents[d->nr].is_dir = is_dir;
	d->ents[d->nr].mode = mode;
	d->nr++;
	return 0;
}

/**
 * fdr_tree_readdir - list a directory
 * @ents: a new array of @nr entries; free() it
 * Returns 0, -ENOENT, -ENOTDIR, -ENOMEM.
 */
int fdr_tree_readdir(struct fdr_session *s, const char *path, struct fdr_dirent **ents, size_t *nr)
{
	struct dirents d = { 0 };
	struct tree_path p;
	size_t k;
	int ret = resolve(s, path, &p);

	*ents = NULL;
	*nr = 0;
	if (ret)
		return ret;
	if (p.file)
		return -ENOTDIR;
	for (k = 0; k < NR_TREE_FILES && !ret; k++) {
		const struct tree_file *t = &tree_files[k];

		if (t->in == p.dir && row_visible(t, &p))
			ret = ents_add(&d, t->name, t->sub != D_NONE, t->mode);
	}
	if (!ret && tree_dirs[p.dir].list)
		ret = tree_dirs[p.dir].list(s, &p, &d);
	if (ret) {
		free(d.ents);
		return ret;
	}
	*ents = d.ents;
	*nr = d.nr;
	return 0;
}

/* instances/NAME from a path, or an errno as tracefs gives it. */
static int instance_name(const char *path, char *name, size_t len)
{
	char comp[8][FDR_NAME_LEN + 16];
	int n = split_path(path, comp);

	if (n < 0)
		return n;
	if (n >= 3 && strcmp(comp[0], "instances") == 0)
		return -EPERM; /* mkdir below an instance */
	if (n != 2 || strcmp(comp[0], "instances"))
		return -EPERM;
	if (strlen(comp[1]) >= len)
		return -ENAMETOOLONG;
	snprintf(name, len, "%s", comp[1]);
	return 0;
}

/** fdr_tree_mkdir - mkdir instances/NAME: -EEXIST, -EPERM (elsewhere), -ENOSPC (128 used) */
int fdr_tree_mkdir(struct fdr_session *s, const char *path)
{
	char name[FDR_NAME_LEN];
	uint32_t slot;
	int ret = instance_name(path, name, sizeof(name));

	if (ret)
		return ret;
	ret = fdr_session_lock(s);
	if (ret)
		return ret;
	ret = fdr_session_instance_new(s, name, &slot);
	fdr_session_unlock(s);
	return ret;
}

/** fdr_tree_rmdir - rmdir instances/NAME: -ENOENT, -EPERM, -EBUSY (a reader holds it) */
int fdr_tree_rmdir(struct fdr_session *s, const char *path)
{
	char name[FDR_NAME_LEN];
	uint32_t inst;
	int ret = instance_name(path, name, sizeof(name));

	if (ret)
		return ret;
	ret = fdr_session_lock(s);
	if (ret)
		return ret;
	ret = find_instance(s, name, &inst);
	if (!ret && instance_busy(&fdr_session_control(s)->instances[inst]))
		ret = -EBUSY;
	if (!ret) {
		fdr_hooks_instance_clear(fdr_session_control(s), inst);
		ret = fdr_session_instance_free(s, inst);
	}
	fdr_session_unlock(s);
	return ret;
}
