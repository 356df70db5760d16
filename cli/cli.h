/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cli.h - what the fdr command's verbs share: the session selected by -s/-d,
 * error reporting, the stop flag of SIGINT/SIGTERM (main.c), the selection of a
 * session and the setting up of one (session.c), the reading and writing of
 * control files (files.c); and the verbs, one file per group, that main.c's
 * table dispatches to.
 */
#ifndef FDR_CLI_H
#define FDR_CLI_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "fdr/fdr-ctl.h"

#define EXIT_USAGE 2

extern const char *session_name;
extern const char *session_path; /* --dir PATH, or $FDR_DIR */
extern const char *verb;
extern volatile sig_atomic_t stop_requested;

void install_signals(void);
/* "fdr VERB: MESSAGE" on stderr; returns @code */
int die(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* "fdr VERB: MESSAGE: strerror(-err)"; -EUCLEAN as "session DIR is corrupted: ..." */
int die_err(int code, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* a usage error about argument @argi, with a caret under it; returns EXIT_USAGE */
int usage_error(int argc, char **argv, int argi, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* the session being used, for messages (die_err()) */
extern char cur_session_dir[4096];
/* a decimal argument from @min to @max, else a usage error (returns EXIT_USAGE) */
int parse_num_arg(int argc, char **argv, int argi, const char *what, unsigned long min,
		  unsigned long max, unsigned long *out);
int parse_uint_arg(int argc, char **argv, int argi, const char *what, unsigned long max,
		   unsigned long *out);
/* "-i INSTANCE" and "-c CPU" (@cpu NULL: no -c); the next argument, or -1 with *@ret */
int common_opts(int argc, char **argv, const char **inst, int *cpu, int *ret);

/* session.c */
#define CLI_MAX_EVENTS 64 /* -e options of start and record */

/* What fdr start (and fdr record) sets a session up with: cli_session_setup(). */
struct cli_start_opts {
	struct fdr_session_opts so; /* -b, -S (0: as they are; a new session's defaults) */
	int mode; /* -m: 1 overwrite, -1 discard, 0 as it is */
	const char *clock; /* -C: trace_clock, or NULL */
	const char *inst; /* -i: the instance (created if needed), or NULL for the top one */
	const char *const *events; /* -e: rules appended to set_event, in order */
	int nr_events;
	const char *const *kevents; /* -k: kernel events of a linked kernel instance */
	int nr_kevents;
	/* the verb's command line, for the usage error of -b's bound (argument b_argi) */
	int argc;
	char **argv;
	int b_argi;
};

int session_dir(char *dir, size_t len);
int open_session(struct fdr_session **s);
/* the index of instance @inst ("" or NULL: the top one), FDR_MAX_INSTANCES if none */
uint32_t inst_index(const struct fdr_abi_control *c, const char *inst);
void inst_prefix(const char *inst, char *buf, size_t len);
int cli_parse_mode(int argc, char **argv, int argi, const char *arg, int *mode);
int cli_session_setup(const struct cli_start_opts *o);
int cmd_start(int argc, char **argv);
int cmd_stop(int argc, char **argv);
int cmd_destroy(int argc, char **argv);

/* ktrace.c: a session's linked kernel instance (docs/design/kernel-timeline.md) */
#define CLI_MAX_KEVENTS 64 /* -k options of start */
/* the link in session directory @dir: 0, -ENOENT (none) or -EUCLEAN (not one fdr wrote) */
int ktrace_read_link(const char *dir, struct fdr_kernel_link *l);
int ktrace_link(const char *dir, const char *const *specs, int nr, int overwrite, uint32_t clock,
		uint32_t ts_source, uint32_t buffer_kb);
/* tracing_on of the linked instance (none linked: nothing); 0 or the exit code */
int ktrace_onoff(const char *dir, int on);
/* remove the linked instance and the link (none: nothing); 0 or the exit code */
int ktrace_unlink(const char *dir);
/* remove the kernel instances fdr made whose sessions are gone */
void ktrace_reap(void);
/* fdr record -k: what the trace.dat needs of the linked kernel instance */
struct fdr_tracedat_kbuf;
struct fdr_buf;
struct ktrace_rec {
	struct fdr_kernel_link l;
	uint32_t max_id; /* the largest id of the instance's events */
	uint32_t nr; /* its enabled events: system, format text */
	char **sys, **text;
	uint32_t nr_cpus, page_size;
	int *fds; /* per CPU: trace_pipe_raw, from ktrace_rec_open() on */
	int *spool; /* per CPU: a file of the pages spliced while recording */
	uint64_t *spool_len; /* per CPU: its bytes (whole pages) */
	int pipe[2], have_pipe; /* splice goes through it */
	char *cmdlines;
	uint64_t lost; /* the kernel's own count: overrun + dropped events, all CPUs */
};
/* the link of session @dir, the formats of its enabled events; 0 or the exit code */
int ktrace_rec_begin(const char *dir, struct ktrace_rec *k);
/* before recording: the raw pipes open, a spool file per CPU next to @out_path; 0 or exit code */
int ktrace_rec_open(struct ktrace_rec *k, const char *out_path);
/* while recording: each CPU's full pages spliced into its spool; bytes moved, or -errno */
int64_t ktrace_rec_take(struct ktrace_rec *k);
/* at the end: the instance off, its losses, its names; @kb filled; 0 or exit code */
int ktrace_rec_end(struct ktrace_rec *k, struct fdr_tracedat_kbuf *kb);
void ktrace_rec_free(struct ktrace_rec *k);
/* fdr's user event ids of @n raw pages of @ps bytes moved up by @shift (record.c) */
void rec_shift_ids(unsigned char *buf, size_t ps, size_t n, uint32_t shift);
/* @kb filled from what ktrace_rec_open() and later calls made (no tracing_on change) */
int ktrace_rec_kbuf(struct ktrace_rec *k, struct fdr_tracedat_kbuf *kb);
/* fdr snapshot save of a linked session: the kernel instance frozen with each snapshot */
int ktrace_snap_freeze(const struct fdr_kernel_link *l, int *was_on); /* 0 or -errno */
int ktrace_snap_resume(const struct fdr_kernel_link *l, int was_on); /* 0 or -errno */
/* its trace text into @k, then emptied; 0 or -errno */
int ktrace_snap_text(const struct fdr_kernel_link *l, struct fdr_buf *k);
/* fdr's text @a and the kernel's @k merged into @out, as fdr show; 0, -ENOMEM or -EIO */
int ktrace_snap_merge(const struct fdr_buf *a, const struct fdr_buf *k,
		      const struct fdr_kernel_link *l, FILE *out);
/* every page of the frozen instance into spool files next to @out_path; 0 or exit code */
int ktrace_snap_pages(struct ktrace_rec *k, const char *out_path);

/* files.c */
struct fdr_buf;
int write_path(struct fdr_session *s, const char *path, const char *text, int flags);
/* copy control file @path to stdout (a pipe: until SIGINT/SIGTERM) */
int cat_path(struct fdr_session *s, const char *path, int follow_hint);
/* read a whole control file into @b; 0 or a negative errno */
int slurp(struct fdr_session *s, const char *path, struct fdr_buf *b);
/* @argv joined with spaces and a final newline, as echo writes them; free() it */
char *join_args(int argc, char **argv);
int cmd_cat(int argc, char **argv);
int cmd_write(int argc, char **argv);
int cmd_append(int argc, char **argv);
int cmd_ls(int argc, char **argv);
int cmd_mkdir(int argc, char **argv);
int cmd_rmdir(int argc, char **argv);

/* events.c */
int cmd_list(int argc, char **argv);
int cmd_enable(int argc, char **argv);
int cmd_disable(int argc, char **argv);

/* show.c */
int cmd_show(int argc, char **argv);
int cmd_pipe(int argc, char **argv);
int cmd_stat(int argc, char **argv);

/* snapshot.c */
int cmd_snapshot(int argc, char **argv);
/* relay.c: fdr relay, and what it shares with fdr snapshot save --relayd */
#define CLI_RELAY_NAME_LEN (2 * FDR_NAME_LEN + 8)
/* @in as a name the relay daemon can make a directory of: [A-Za-z0-9._-], others '_' */
void cli_relay_name(const char *in, char *out, size_t len);
/* --hostname @opt, else $FDR_HOSTNAME, else the machine's; EXIT_USAGE (said) if bad */
int cli_relay_hostname(const char *opt, char *out, size_t len);
/* the session's name on the daemon: the fdr session's, "-INSTANCE" for an instance */
void cli_relay_session_name(struct fdr_session *s, const char *inst, char *out, size_t len);
/* export.c: @t (of session @s's instance @idx, or of trace.dat @file) sent as one chunk; 0 or exit code */
struct fdr_relay_url;
struct fdr_trace;
struct fdr_export_stats;
int cli_export_relay(struct fdr_trace *t, const struct fdr_relay_url *url, const char *hostname,
		     struct fdr_session *s, const char *inst, uint32_t idx, const char *file,
		     struct fdr_export_stats *st);
int cmd_relay(int argc, char **argv);

/* mount-cmd.c */
int cmd_mount(int argc, char **argv);

/* attach.c */
int cmd_attach(int argc, char **argv);
int cmd_detach(int argc, char **argv);

/* export.c */
int cmd_export(int argc, char **argv);
/* report.c */
int cmd_report(int argc, char **argv);
/* probe.c */
int cmd_probe(int argc, char **argv);
/* record.c */
int cmd_record(int argc, char **argv);
int cmd_extract(int argc, char **argv);

#endif /* FDR_CLI_H */
