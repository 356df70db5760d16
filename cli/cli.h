/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cli.h - what the fdr command's verbs share (main.c defines it): the session
 * selected by -s/-d, error reporting, the stop flag of SIGINT/SIGTERM.
 */
#ifndef FDR_CLI_H
#define FDR_CLI_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

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
int session_dir(char *dir, size_t len);
int open_session(struct fdr_session **s);
int write_path(struct fdr_session *s, const char *path, const char *text, int flags);
/* the index of instance @inst ("" or NULL: the top one), FDR_MAX_INSTANCES if none */
uint32_t inst_index(const struct fdr_abi_control *c, const char *inst);
void inst_prefix(const char *inst, char *buf, size_t len);
/* a decimal argument from @min to @max, else a usage error (returns EXIT_USAGE) */
int parse_num_arg(int argc, char **argv, int argi, const char *what, unsigned long min,
		  unsigned long max, unsigned long *out);
int parse_uint_arg(int argc, char **argv, int argi, const char *what, unsigned long max,
		   unsigned long *out);
int cmd_start(int argc, char **argv);

/* export.c */
int cmd_export(int argc, char **argv);
/* report.c */
int cmd_report(int argc, char **argv);
/* record.c */
int cmd_record(int argc, char **argv);
int cmd_extract(int argc, char **argv);

#endif /* FDR_CLI_H */
