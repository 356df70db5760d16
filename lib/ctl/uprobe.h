/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * uprobe.h - uprobe_events lines: parse, read back, compile, describe the event
 * (lib/ctl/uprobe-parse.c, lib/ctl/uprobe-elf.c; docs/design/uprobes.md).
 * Internal to libfdr-ctl.
 */
#ifndef FDR_CTL_UPROBE_H
#define FDR_CTL_UPROBE_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "fdr/fdr-abi.h"
#include "probe/fetch.h"

#define FDR_UPROBE_MAX_ARGS 128 /* the kernel's MAX_TRACE_ARGS */
#define FDR_UPROBE_NAME_LEN 64 /* the kernel's MAX_EVENT_NAME_LEN: at most 63 characters */
#define FDR_UPROBE_ARG_NAME_LEN 32 /* fdr: 31 characters (FDR_FIELD_NAME_LEN); kernel 32 */
#define FDR_UPROBE_ARG_LEN 64 /* the kernel's MAX_ARGSTR_LEN (63) + NUL */
#define FDR_UPROBE_SYM_LEN 256
#define FDR_UPROBE_ARG_INSNS 16 /* loads (at most 15, as the kernel) and the store */
#define FDR_UPROBE_GROUP "uprobes"

enum fdr_uprobe_op {
	FDR_UPROBE_NONE = 0, /* an empty line or a comment */
	FDR_UPROBE_ADD, /* p or r */
	FDR_UPROBE_DEL, /* -: */
};

/* How an argument prints (the kernel's type names) */
enum fdr_uprobe_tkind {
	FDR_UT_U = 1, /* uN, bitfields */
	FDR_UT_S, /* sN */
	FDR_UT_X, /* xN */
	FDR_UT_CHAR, /* char: a u8 printed '%c' */
	FDR_UT_STRING, /* string, ustring: __data_loc char[] */
};

struct fdr_uprobe_arg {
	char name[FDR_UPROBE_ARG_NAME_LEN];
	char body[FDR_UPROBE_ARG_LEN]; /* FETCHARG[:TYPE] as written: the read-back */
	uint8_t tkind; /* enum fdr_uprobe_tkind */
	uint8_t size; /* bytes of one element (4 for a string: its __data_loc) */
	uint8_t count; /* array elements; 0 = not an array */
	uint8_t nr_insns;
	uint16_t field; /* offset of its field in the record */
	uint16_t pos; /* where the argument starts in the command (error carets) */
	struct fdr_fetch_insn
		insns[FDR_UPROBE_ARG_INSNS]; /* ST_DATA: imm = body offset << 16 | len */
};

struct fdr_uprobe_cmd {
	int op; /* enum fdr_uprobe_op */
	int is_return;
	int has_group; /* the line named the group (-: without one matches any group) */
	char group[FDR_UPROBE_NAME_LEN];
	char event[FDR_UPROBE_NAME_LEN]; /* "" for -: only if the line named none */
	char path[PATH_MAX];
	uint16_t path_pos; /* where PATH starts in the command */
	/* PATH's device and inode: the parser's stat() (the resolver's fstat() for a symbol) */
	uint64_t dev;
	uint64_t ino;
	uint64_t offset; /* file offset (after fdr_uprobe_resolve() for a symbol) */
	char symbol[FDR_UPROBE_SYM_LEN]; /* fdr: PATH:SYMBOL[+OFFS]; "" for PATH:OFFSET */
	uint64_t sym_offset; /* the +OFFS after the symbol */
	int has_ref_ctr;
	uint64_t ref_ctr_offset;
	uint32_t cmd_len; /* of the command the positions refer to */
	uint32_t nr_args;
	uint32_t fixed_size; /* record bytes before the strings, common header included */
	struct fdr_uprobe_arg args[FDR_UPROBE_MAX_ARGS];
};

struct fdr_uprobe_err {
	int code; /* negative errno */
	int pos; /* byte offset in the command (fdr_uprobe_command()), -1: no caret */
	const char *msg; /* static text, the kernel's where it has one */
};

size_t fdr_uprobe_command(const char *line, char *buf, size_t size);
int fdr_uprobe_parse(const char *line, struct fdr_uprobe_cmd *out, struct fdr_uprobe_err *err);
int fdr_uprobe_format(const struct fdr_uprobe_cmd *c, char *buf, size_t size);
int fdr_uprobe_same_args(const struct fdr_uprobe_cmd *a, const struct fdr_uprobe_cmd *b,
			 struct fdr_uprobe_err *err);
int fdr_uprobe_compile(const struct fdr_uprobe_cmd *c, struct fdr_fetch_prog *prog, size_t cap,
		       size_t *len);
int fdr_uprobe_event(const struct fdr_uprobe_cmd *c, struct fdr_abi_event *e,
		     struct fdr_uprobe_err *err);
int fdr_uprobe_resolve(struct fdr_uprobe_cmd *c, struct fdr_uprobe_err *err);
void fdr_uprobe_default_event(struct fdr_uprobe_cmd *c);

#endif
