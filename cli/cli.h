/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cli.h - what main.c shares with the verbs kept in their own files.
 */
#ifndef FDR_CLI_H
#define FDR_CLI_H

#include "fdr/fdr-ctl.h"

#define EXIT_USAGE 2

/* Open the session chosen by -s/-d/$FDR_SESSION; prints why not. 0 or an exit code. */
int cli_open_session(struct fdr_session **s);
/* "fdr VERB: MESSAGE" on stderr; returns @code. */
int cli_die(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A usage error about argument @argi (-1: none), with a caret under it; returns 2. */
int cli_usage_error(int argc, char **argv, int argi, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* The index of instance @inst (0 for NULL or ""), FDR_MAX_INSTANCES if none. */
uint32_t cli_inst_index(const struct fdr_abi_control *c, const char *inst);

int cmd_export(int argc, char **argv);

#endif /* FDR_CLI_H */
