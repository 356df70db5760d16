// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * uprobe-parse.c - the uprobe_events grammar (docs/design/uprobes.md).
 *
 * One line defines or removes one probe, the way the kernel's uprobe_events does:
 *
 *   p:app/req /usr/bin/app:0x1149 fd=%di:s32 path=+0(%si):string
 *   |  |   |  |             |      |  |      |
 *   |  |   |  PATH          OFFSET NAME=FETCHARG:TYPE ...
 *   |  |   EVENT (default p_<basename>_0x<offset>)
 *   |  GRP (default "uprobes")
 *   p: entry, r: return (also PATH:OFFSET%return), -: removes [GRP/]EVENT
 *
 * fdr also takes PATH:SYMBOL[+OFFS], resolved to a file offset through the ELF
 * symbol tables (uprobe-elf.c) and read back as the kernel would show the offset.
 *
 * The line is first made a command the kernel's way: a '#' ends it, and words
 * are joined by one space (fdr_uprobe_command()). Every error position is a byte
 * offset in that command, where error_log puts its caret; messages are the
 * kernel's (trace_probe's error table) wherever it has one for the case.
 *
 * Each argument is parsed into a short program (fetch.h): the loads of its
 * FETCHARG, innermost first, then one store that writes its field. The last
 * dereference of a memory argument is folded into the store, which then reads
 * exactly the bytes of the type:
 *
 *   x=+8(+0(%si)):u16   REG si; DEREF 0; ST_MEM imm=8 size=2
 *   s=+0(%si):string    REG si; ST_STRING imm=0
 *   v=%di:b4@1/32       REG di; ST_RAW size=4 bf=4@1
 *   \"text"             ST_DATA (the bytes are copied into the program's data)
 *
 * The record is laid out as the kernel lays it out: __probe_ip (or __probe_func
 * and __probe_ret_ip) after the 8-byte common header, then the arguments packed
 * with no padding, strings as 4-byte __data_loc words.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ctl/uprobe.h"
#include "fdr/fdr.h"

_Static_assert(FDR_FETCH_MAX_RECORD == FDR_MAX_RECORD, "a probe record is an fdr record");

/* Error texts: the kernel's (trace_probe.h ERRORS) where it has one, else fdr's. */
#define UP_ERRORS                                                                      \
	C(FILE_NOT_FOUND, "Failed to find the given file")                             \
	C(NO_REGULAR_FILE, "Not a regular file")                                       \
	C(BAD_REFCNT, "Invalid reference counter offset")                              \
	C(REFCNT_OPEN_BRACE, "Reference counter brace is not closed")                  \
	C(BAD_REFCNT_SUFFIX, "Reference counter has wrong suffix")                     \
	C(BAD_UPROBE_OFFS, "Invalid uprobe offset")                                    \
	C(BAD_ADDR_SUFFIX, "Invalid probed address suffix")                            \
	C(NO_GROUP_NAME, "Group name is not specified")                                \
	C(GROUP_TOO_LONG, "Group name is too long")                                    \
	C(BAD_GROUP_NAME, "Group name must follow the same rules as C identifiers")    \
	C(NO_EVENT_NAME, "Event name is not specified")                                \
	C(EVENT_TOO_LONG, "Event name is too long")                                    \
	C(BAD_EVENT_NAME, "Event name must follow the same rules as C identifiers")    \
	C(RETVAL_ON_PROBE, "$retval is not available on probe")                        \
	C(BAD_ARG_NUM, "Invalid argument number")                                      \
	C(NOFENTRY_ARGS, "$arg* can be used only on function entry or exit")           \
	C(BAD_VAR, "Invalid $-variable specified")                                     \
	C(BAD_REG_NAME, "Invalid register name")                                       \
	C(BAD_MEM_ADDR, "Invalid memory address")                                      \
	C(BAD_IMM, "Invalid immediate value")                                          \
	C(IMMSTR_NO_CLOSE, "String is not closed with '\"'")                           \
	C(BAD_FILE_OFFS, "Invalid file offset value")                                  \
	C(SYM_ON_UPROBE, "Symbol is not available with uprobe")                        \
	C(TOO_MANY_OPS, "Dereference is too much nested")                              \
	C(DEREF_NEED_BRACE, "Dereference needs a brace")                               \
	C(BAD_DEREF_OFFS, "Invalid dereference offset")                                \
	C(DEREF_OPEN_BRACE, "Dereference brace is not closed")                         \
	C(COMM_CANT_DEREF, "$comm can not be dereferenced")                            \
	C(BAD_FETCH_ARG, "Invalid fetch argument")                                     \
	C(ARRAY_NO_CLOSE, "Array is not closed")                                       \
	C(BAD_ARRAY_SUFFIX, "Array has wrong suffix")                                  \
	C(BAD_ARRAY_NUM, "Invalid array size")                                         \
	C(ARRAY_TOO_BIG, "Array number is too big")                                    \
	C(BAD_TYPE, "Unknown type is specified")                                       \
	C(BAD_STRING, "String accepts only memory argument")                           \
	C(BAD_BITFIELD, "Invalid bitfield")                                            \
	C(ARG_NAME_TOO_LONG, "Argument name is too long")                              \
	C(NO_ARG_NAME, "Argument name is not specified")                               \
	C(BAD_ARG_NAME, "Argument name must follow the same rules as C identifiers")   \
	C(USED_ARG_NAME, "This argument name is already used")                         \
	C(ARG_TOO_LONG, "Argument expression is too long")                             \
	C(NO_ARG_BODY, "No argument expression")                                       \
	C(TOO_MANY_ARGS, "Too many arguments are specified")                           \
	C(NOSUP_BTFARG, "BTF is not available or not supported")                       \
	C(BAD_TYPE4STR, "$comm and immediate-string only accepts string type")         \
	C(DIFF_PROBE_TYPE, "Probe type is different from existing probe")              \
	C(DIFF_ARG_TYPE, "Argument type or name is different from existing probe")     \
	C(SAME_PROBE, "There is already the exact same probe event")                   \
	/* fdr's own: the kernel gives a bare EINVAL for these, or has no such case */ \
	C(BAD_CMD, "Unknown probe command (expected 'p', 'r' or '-:')")                \
	C(MAXACT_UPROBE, "Maxactive is not available with uprobe")                     \
	C(NO_PLACE, "Probe place is not specified (PATH:OFFSET or PATH:SYMBOL)")       \
	C(BAD_PLACE, "Probe place must be PATH:OFFSET or PATH:SYMBOL[+OFFS]")          \
	C(DEL_EXTRA, "Removing a probe takes only its name")                           \
	C(DEREF_SUFFIX, "Unexpected text after the dereference's closing brace")       \
	C(STRING_ARRAY, "Arrays of strings are not supported by fdr")                  \
	C(TOO_MANY_FIELDS, "Too many arguments for one fdr event")                     \
	C(EVENT_TOO_BIG, "Event is too big")

#define C(a, b) UP_##a,
enum up_error { UP_ERRORS UP_NR_ERRORS };
#undef C
#define C(a, b) b,
static const char *const up_texts[] = { UP_ERRORS };
#undef C

static int up_err(struct fdr_uprobe_err *err, int code, enum up_error e, long pos)
{
	if (err) {
		err->code = code;
		err->pos = pos < 0 ? -1 : (int)pos;
		err->msg = up_texts[e];
	}
	return code;
}

/* ---- the command ------------------------------------------------------------------- */

/**
 * fdr_uprobe_command - the command a line stands for, as the kernel rebuilds it
 * @line: one line as written (a '#' starts a comment; ends at NUL or newline)
 * @buf, @size: where to write it (always NUL-terminated if @size > 0)
 *
 * Words are joined by single spaces. Error positions (struct fdr_uprobe_err)
 * and error_log carets refer to this text. Returns its length (which may be
 * >= @size: then it was cut).
 */
size_t fdr_uprobe_command(const char *line, char *buf, size_t size)
{
	size_t n = 0, i = 0;

	for (;;) {
		size_t start;

		while (line[i] == ' ' || line[i] == '\t')
			i++;
		if (!line[i] || line[i] == '#' || line[i] == '\n')
			break;
		start = i;
		while (line[i] && line[i] != ' ' && line[i] != '\t' && line[i] != '#' &&
		       line[i] != '\n')
			i++;
		if (n && n + 1 < size)
			buf[n] = ' ';
		n += n ? 1 : 0;
		if (n < size) {
			size_t k = i - start < size - n ? i - start : size - n;

			memcpy(buf + n, line + start, k);
		}
		n += i - start;
	}
	if (size)
		buf[n < size ? n : size - 1] = 0;
	return n;
}

/* ---- numbers, as the kernel's kstrto*() take them ------------------------------------ */

/* An unsigned number in base 0 (0x hex, 0 octal, else decimal) filling s[0..n). */
static int up_strtou64(const char *s, size_t n, uint64_t *v)
{
	unsigned base = 10;
	uint64_t x = 0;
	size_t i = 0;

	if (n && s[0] == '+')
		i++;
	if (n - i >= 2 && s[i] == '0' && (s[i + 1] == 'x' || s[i + 1] == 'X')) {
		base = 16;
		i += 2;
	} else if (n - i >= 2 && s[i] == '0') {
		base = 8;
		i++;
	}
	if (i >= n)
		return -EINVAL;
	for (; i < n; i++) {
		unsigned d;

		if (s[i] >= '0' && s[i] <= '9')
			d = (unsigned)(s[i] - '0');
		else if (s[i] >= 'a' && s[i] <= 'f')
			d = (unsigned)(s[i] - 'a' + 10);
		else if (s[i] >= 'A' && s[i] <= 'F')
			d = (unsigned)(s[i] - 'A' + 10);
		else
			return -EINVAL;
		if (d >= base)
			return -EINVAL;
		if (x > (UINT64_MAX - d) / base)
			return -ERANGE;
		x = x * base + d;
	}
	*v = x;
	return 0;
}

static int up_strtos64(const char *s, size_t n, int64_t *v)
{
	uint64_t x;
	int ret;

	if (n && s[0] == '-') {
		ret = up_strtou64(s + 1, n - 1, &x);
		if (ret)
			return ret;
		if (x > (uint64_t)INT64_MAX + 1)
			return -ERANGE;
		*v = (int64_t)(0 - x);
		return 0;
	}
	ret = up_strtou64(s, n, &x);
	if (ret)
		return ret;
	if (x > (uint64_t)INT64_MAX)
		return -ERANGE;
	*v = (int64_t)x;
	return 0;
}

static int up_good_name(const char *s, size_t n)
{
	size_t i;

	if (!n || (!isalpha((unsigned char)s[0]) && s[0] != '_'))
		return 0;
	for (i = 1; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '_')
			return 0;
	return 1;
}

/* ---- registers ---------------------------------------------------------------------- */

static const struct {
	const char *name;
	int reg; /* enum fdr_reg; -1: orig_ax, always -1 on a breakpoint (as in the kernel) */
} up_regs[] = {
	{ "ax", FDR_REG_AX },	{ "bx", FDR_REG_BX },	{ "cx", FDR_REG_CX },
	{ "dx", FDR_REG_DX },	{ "si", FDR_REG_SI },	{ "di", FDR_REG_DI },
	{ "bp", FDR_REG_BP },	{ "sp", FDR_REG_SP },	{ "r8", FDR_REG_R8 },
	{ "r9", FDR_REG_R9 },	{ "r10", FDR_REG_R10 }, { "r11", FDR_REG_R11 },
	{ "r12", FDR_REG_R12 }, { "r13", FDR_REG_R13 }, { "r14", FDR_REG_R14 },
	{ "r15", FDR_REG_R15 }, { "ip", FDR_REG_IP },	{ "flags", FDR_REG_FLAGS },
	{ "cs", FDR_REG_CS },	{ "ss", FDR_REG_SS },	{ "orig_ax", -1 },
};

/* ---- one FETCHARG ----------------------------------------------------------------------- */

struct up_ctx {
	const char *cmd;
	struct fdr_uprobe_cmd *c;
	struct fdr_uprobe_arg *a;
	struct fdr_uprobe_err *err;
	uint32_t body_pos; /* of the argument's body in cmd */
};

static int up_emit(struct up_ctx *x, uint8_t op, int64_t imm, long pos)
{
	struct fdr_fetch_insn *in;

	if (x->a->nr_insns >= FDR_UPROBE_ARG_INSNS - 1) /* one left for the store */
		return up_err(x->err, -EINVAL, UP_TOO_MANY_OPS, pos);
	in = &x->a->insns[x->a->nr_insns++];
	memset(in, 0, sizeof(*in));
	in->op = op;
	in->imm = imm;
	return 0;
}

/* The $-variables: retval, stack, stackN, comm, argN (fdr: System V arguments). */
static int up_parse_var(struct up_ctx *x, const char *s, size_t n, long pos)
{
	uint64_t v;

	if (n == 6 && memcmp(s, "retval", 6) == 0) {
		if (!x->c->is_return)
			return up_err(x->err, -EINVAL, UP_RETVAL_ON_PROBE, pos);
		return up_emit(x, FDR_FOP_RETVAL, 0, pos);
	}
	if (n >= 5 && memcmp(s, "stack", 5) == 0) {
		if (n == 5)
			return up_emit(x, FDR_FOP_STACKP, 0, pos);
		if (!isdigit((unsigned char)s[5]))
			return up_err(x->err, -EINVAL, UP_BAD_VAR, pos);
		/* base 10 only, as the kernel reads $stackN */
		for (v = 0, n -= 5, s += 5; n; n--, s++) {
			if (!isdigit((unsigned char)*s) || v > (1u << 20))
				return up_err(x->err, -EINVAL, UP_BAD_VAR, pos);
			v = v * 10 + (uint64_t)(*s - '0');
		}
		if (v > (1u << 20)) /* fdr: a stack word further than 8 MiB is refused */
			return up_err(x->err, -EINVAL, UP_BAD_VAR, pos);
		return up_emit(x, FDR_FOP_STACK, (int64_t)v, pos);
	}
	if (n == 4 && (memcmp(s, "comm", 4) == 0 || memcmp(s, "COMM", 4) == 0))
		return up_emit(x, FDR_FOP_ST_COMM, 0, pos); /* turned into the store later */
	if (n >= 3 && memcmp(s, "arg", 3) == 0) {
		size_t i;

		for (v = 0, i = 3; i < n; i++) {
			if (!isdigit((unsigned char)s[i]) || v > 1024)
				return up_err(x->err, -EINVAL, UP_BAD_VAR, pos);
			v = v * 10 + (uint64_t)(s[i] - '0');
		}
		if (n == 3)
			return up_err(x->err, -EINVAL, UP_BAD_VAR, pos);
		if (v == 0 || v > 1024)
			return up_err(x->err, -EINVAL, UP_BAD_ARG_NUM, pos);
		if (x->c->is_return)
			return up_err(x->err, -EINVAL, UP_NOFENTRY_ARGS, pos);
		return up_emit(x, FDR_FOP_ARG, (int64_t)v, pos);
	}
	return up_err(x->err, -EINVAL, UP_BAD_VAR, pos);
}

/* s[0..n) at cmd offset pos: appends its loads to x->a->insns. */
static int up_parse_fetch(struct up_ctx *x, const char *s, size_t n, long pos)
{
	uint64_t u;
	int64_t off;
	size_t i;
	int ret;

	if (!n)
		return up_err(x->err, -EINVAL, UP_BAD_FETCH_ARG, pos);
	switch (s[0]) {
	case '$':
		return up_parse_var(x, s + 1, n - 1, pos);
	case '%':
		for (i = 0; i < sizeof(up_regs) / sizeof(up_regs[0]); i++)
			if (strlen(up_regs[i].name) == n - 1 &&
			    memcmp(up_regs[i].name, s + 1, n - 1) == 0)
				return up_regs[i].reg < 0 ?
					       up_emit(x, FDR_FOP_IMM, -1, pos) :
					       up_emit(x, FDR_FOP_REG, up_regs[i].reg, pos);
		return up_err(x->err, -EINVAL, UP_BAD_REG_NAME, pos);
	case '@':
		if (n > 1 && isdigit((unsigned char)s[1])) {
			ret = up_strtou64(s + 1, n - 1, &u);
			if (ret)
				return up_err(x->err, ret, UP_BAD_MEM_ADDR, pos);
			ret = up_emit(x, FDR_FOP_IMM, (int64_t)u, pos);
		} else if (n > 1 && s[1] == '+') {
			ret = up_strtos64(s + 2, n - 2, &off);
			if (ret)
				return up_err(x->err, ret, UP_BAD_FILE_OFFS, pos);
			ret = up_emit(x, FDR_FOP_FOFFS, off, pos);
		} else {
			return up_err(x->err, -EINVAL, UP_SYM_ON_UPROBE, pos);
		}
		return ret ? ret : up_emit(x, FDR_FOP_DEREF, 0, pos);
	case '+':
	case '-': {
		const char *num = s, *open, *close;
		size_t k = 1;
		long inner;

		if (n > 1 && s[1] == 'u')
			k = 2; /* user memory: every uprobe dereference is one */
		open = memchr(s, '(', n);
		if (!open)
			return up_err(x->err, -EINVAL, UP_DEREF_NEED_BRACE, pos);
		if (s[0] == '+') {
			ret = up_strtos64(num + k, (size_t)(open - num) - k, &off);
		} else {
			char tmp[FDR_UPROBE_ARG_LEN];
			size_t l = (size_t)(open - num) - k;

			tmp[0] = '-';
			memcpy(tmp + 1, num + k, l < sizeof(tmp) - 1 ? l : sizeof(tmp) - 2);
			ret = l < sizeof(tmp) - 1 ? up_strtos64(tmp, l + 1, &off) : -EINVAL;
		}
		if (ret)
			return up_err(x->err, ret, UP_BAD_DEREF_OFFS, pos);
		inner = pos + (open + 1 - s);
		close = NULL;
		for (i = n; i > (size_t)(open - s) + 1; i--)
			if (s[i - 1] == ')') {
				close = s + i - 1;
				break;
			}
		if (!close)
			return up_err(x->err, -EINVAL, UP_DEREF_OPEN_BRACE,
				      inner + (long)(s + n - (open + 1)));
		if (close != s + n - 1)
			return up_err(x->err, -EINVAL, UP_DEREF_SUFFIX, pos + (close + 1 - s));
		ret = up_parse_fetch(x, open + 1, (size_t)(close - open - 1), inner);
		if (ret)
			return ret;
		if (x->a->insns[x->a->nr_insns - 1].op == FDR_FOP_ST_COMM ||
		    x->a->insns[x->a->nr_insns - 1].op == FDR_FOP_ST_DATA)
			return up_err(x->err, -EINVAL, UP_COMM_CANT_DEREF, inner);
		return up_emit(x, FDR_FOP_DEREF, off, inner); /* the kernel blames the inner */
	}
	case '\\':
		if (n > 1 && s[1] == '"') {
			if (n < 3 || s[n - 1] != '"')
				return up_err(x->err, -EINVAL, UP_IMMSTR_NO_CLOSE, pos + (long)n);
			/* the bytes stay in the body; compile copies them into the program */
			return up_emit(x, FDR_FOP_ST_DATA,
				       (int64_t)((uint64_t)(pos + 2 - x->body_pos) << 16 | (n - 3)),
				       pos);
		}
		if (n > 1 && isdigit((unsigned char)s[1]))
			ret = up_strtou64(s + 1, n - 1, &u);
		else if (n > 1 && (s[1] == '-' || s[1] == '+'))
			ret = up_strtos64(s + (s[1] == '+' ? 2 : 1), n - (s[1] == '+' ? 2 : 1),
					  (int64_t *)&u);
		else
			ret = -EINVAL;
		if (ret)
			return up_err(x->err, ret, UP_BAD_IMM, pos + 1);
		return up_emit(x, FDR_FOP_IMM, (int64_t)u, pos);
	default:
		if (isalpha((unsigned char)s[0]) || s[0] == '_')
			return up_err(x->err, -EINVAL, UP_NOSUP_BTFARG, pos);
		return up_err(x->err, -EINVAL, UP_BAD_FETCH_ARG, pos);
	}
}

/* ---- :TYPE ------------------------------------------------------------------------------ */

struct up_type {
	uint8_t tkind, size, bf_width, bf_offset;
};

/* t[0..n) (no array suffix) at cmd offset pos; NULL t: the default x64. */
static int up_parse_type(struct up_ctx *x, const char *t, size_t n, long pos, struct up_type *ty)
{
	static const struct {
		const char *name;
		uint8_t tkind, size;
	} types[] = {
		{ "u8", FDR_UT_U, 1 },		 { "u16", FDR_UT_U, 2 },
		{ "u32", FDR_UT_U, 4 },		 { "u64", FDR_UT_U, 8 },
		{ "s8", FDR_UT_S, 1 },		 { "s16", FDR_UT_S, 2 },
		{ "s32", FDR_UT_S, 4 },		 { "s64", FDR_UT_S, 8 },
		{ "x8", FDR_UT_X, 1 },		 { "x16", FDR_UT_X, 2 },
		{ "x32", FDR_UT_X, 4 },		 { "x64", FDR_UT_X, 8 },
		{ "char", FDR_UT_CHAR, 1 },	 { "string", FDR_UT_STRING, 4 },
		{ "ustring", FDR_UT_STRING, 4 },
	};
	size_t i;

	memset(ty, 0, sizeof(*ty));
	if (!t) {
		ty->tkind = FDR_UT_X;
		ty->size = 8;
		return 0;
	}
	if (n && t[0] == 'b') {
		const char *slash = memchr(t, '/', n), *at, *end = t + n;
		uint64_t bits, w, o;
		size_t k;

		/* the container size first (the type), then width and offset */
		if (!slash || up_strtou64(slash + 1, (size_t)(end - slash - 1), &bits) ||
		    (bits != 8 && bits != 16 && bits != 32 && bits != 64))
			return up_err(x->err, -EINVAL, UP_BAD_TYPE, pos);
		/* simple_strtoul(): the digits it can take, then '@' / '/' must follow */
		for (k = 1; t + k < slash && isxdigit((unsigned char)t[k]) | (t[k] == 'x'); k++)
			;
		at = t + k;
		if (at >= slash || *at != '@' || up_strtou64(t + 1, k - 1, &w) || w == 0)
			return up_err(x->err, -EINVAL, UP_BAD_BITFIELD, pos + 3);
		if (at + 1 == slash || up_strtou64(at + 1, (size_t)(slash - at - 1), &o))
			return up_err(x->err, -EINVAL, UP_BAD_BITFIELD, pos + 3);
		if (w + o > bits)
			return up_err(x->err, -EINVAL, UP_BAD_BITFIELD, pos + 3);
		ty->tkind = FDR_UT_U;
		ty->size = (uint8_t)(bits / 8);
		ty->bf_width = (uint8_t)w;
		ty->bf_offset = (uint8_t)o;
		return 0;
	}
	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (strlen(types[i].name) == n && memcmp(types[i].name, t, n) == 0) {
			ty->tkind = types[i].tkind;
			ty->size = types[i].size;
			return 0;
		}
	return up_err(x->err, -EINVAL, UP_BAD_TYPE, pos);
}

/* ---- one argument ------------------------------------------------------------------------ */

static int up_name_used(const struct fdr_uprobe_cmd *c, uint32_t upto, const char *name)
{
	static const char *const reserved[] = { "common_type",		"common_flags",
						"common_preempt_count", "common_pid",
						"common_tgid",		"__probe_ip",
						"__probe_ret_ip",	"__probe_func" };
	uint32_t i;

	for (i = 0; i < sizeof(reserved) / sizeof(reserved[0]); i++)
		if (strcmp(reserved[i], name) == 0)
			return 1;
	for (i = 0; i < upto; i++)
		if (strcmp(c->args[i].name, name) == 0)
			return 1;
	return 0;
}

static int up_parse_arg(struct up_ctx *x, uint32_t idx, const char *tok, size_t n, long pos)
{
	struct fdr_uprobe_arg *a = &x->c->args[idx];
	const char *eq = memchr(tok, '=', n), *body, *colon, *t = NULL, *br;
	size_t blen, tlen = 0, elen;
	struct up_type ty;
	struct fdr_fetch_insn *last, *st;
	uint64_t count = 0;
	long bpos;
	int ret;

	memset(a, 0, sizeof(*a));
	a->pos = (uint16_t)(pos > 0xffff ? 0xffff : pos);
	x->a = a;
	if (eq) {
		size_t nl = (size_t)(eq - tok);

		if (!nl)
			return up_err(x->err, -EINVAL, UP_NO_ARG_NAME, pos);
		if (nl >= FDR_UPROBE_ARG_NAME_LEN)
			return up_err(x->err, -EINVAL, UP_ARG_NAME_TOO_LONG, pos);
		if (!up_good_name(tok, nl))
			return up_err(x->err, -EINVAL, UP_BAD_ARG_NAME, pos);
		memcpy(a->name, tok, nl);
		body = eq + 1;
	} else {
		snprintf(a->name, sizeof(a->name), "arg%u", idx + 1);
		body = tok;
	}
	if (up_name_used(x->c, idx, a->name))
		return up_err(x->err, -EINVAL, UP_USED_ARG_NAME, pos);
	blen = n - (size_t)(body - tok);
	bpos = pos + (body - tok);
	if (blen >= FDR_UPROBE_ARG_LEN)
		return up_err(x->err, -E2BIG, UP_ARG_TOO_LONG, bpos);
	if (!blen)
		return up_err(x->err, -EINVAL, UP_NO_ARG_BODY, bpos);
	memcpy(a->body, body, blen);
	x->body_pos = (uint32_t)bpos;

	/* FETCHARG:TYPE[N] */
	elen = blen;
	colon = memchr(body, ':', blen);
	if (colon) {
		elen = (size_t)(colon - body);
		t = colon + 1;
		tlen = blen - elen - 1;
		br = memchr(t, '[', tlen);
		if (br) {
			const char *cl = memchr(br, ']', (size_t)(t + tlen - br));
			long npos = bpos + (br + 1 - body);

			if (!cl)
				return up_err(x->err, -EINVAL, UP_ARRAY_NO_CLOSE,
					      bpos + (long)blen);
			if (cl != t + tlen - 1)
				return up_err(x->err, -EINVAL, UP_BAD_ARRAY_SUFFIX,
					      bpos + (cl + 1 - body));
			ret = up_strtou64(br + 1, (size_t)(cl - br - 1), &count);
			if (ret || !count || count > UINT32_MAX)
				return up_err(x->err, -EINVAL, UP_BAD_ARRAY_NUM, npos);
			if (count > FDR_FETCH_MAX_ARRAY)
				return up_err(x->err, -EINVAL, UP_ARRAY_TOO_BIG, npos);
			tlen = (size_t)(br - t);
		}
	}
	/* $comm and \"STR" are strings, and only strings */
	if ((elen == 5 && (memcmp(body, "$comm", 5) == 0 || memcmp(body, "$COMM", 5) == 0)) ||
	    (elen >= 2 && body[0] == '\\' && body[1] == '"')) {
		if (count || (t && (tlen != 6 || memcmp(t, "string", 6) != 0)))
			return up_err(x->err, -EINVAL, UP_BAD_TYPE4STR,
				      t ? bpos + (t - body) : bpos);
		ty.tkind = FDR_UT_STRING;
		ty.size = 4;
		ty.bf_width = ty.bf_offset = 0;
	} else {
		ret = up_parse_type(x, t, tlen, t ? bpos + (t - body) : bpos, &ty);
		if (ret)
			return ret;
	}
	if (ty.tkind == FDR_UT_STRING && count)
		return up_err(x->err, -EINVAL, UP_STRING_ARRAY, bpos + (t - body));
	ret = up_parse_fetch(x, body, elen, bpos);
	if (ret)
		return ret;

	/* the store */
	last = &a->insns[a->nr_insns - 1];
	a->tkind = ty.tkind;
	a->size = ty.size;
	a->count = (uint8_t)count;
	if (ty.tkind == FDR_UT_STRING) {
		if (last->op == FDR_FOP_DEREF) {
			last->op = FDR_FOP_ST_STRING;
		} else if (last->op == FDR_FOP_IMM) {
			st = &a->insns[a->nr_insns++];
			memset(st, 0, sizeof(*st));
			st->op = FDR_FOP_ST_STRING;
		} else if (last->op != FDR_FOP_ST_COMM && last->op != FDR_FOP_ST_DATA) {
			return up_err(x->err, -EINVAL, UP_BAD_STRING, t ? bpos + (t - body) : bpos);
		}
	} else if (last->op == FDR_FOP_ST_COMM || last->op == FDR_FOP_ST_DATA) {
		return up_err(x->err, -EINVAL, UP_BAD_TYPE4STR, t ? bpos + (t - body) : bpos);
	} else if (last->op == FDR_FOP_DEREF) {
		last->op = FDR_FOP_ST_MEM;
	} else if (count) {
		return up_err(x->err, -EINVAL, UP_BAD_STRING, t ? bpos + (t - body) : bpos);
	} else {
		st = &a->insns[a->nr_insns++];
		memset(st, 0, sizeof(*st));
		st->op = FDR_FOP_ST_RAW;
	}
	st = &a->insns[a->nr_insns - 1];
	st->size = ty.size;
	st->count = (uint8_t)(count ? count : 1);
	st->bf_width = ty.bf_width;
	st->bf_offset = ty.bf_offset;
	st->field = (uint16_t)x->c->fixed_size;
	a->field = st->field;
	x->c->fixed_size += (uint32_t)ty.size * (count ? (uint32_t)count : 1);
	if (x->c->fixed_size > FDR_FETCH_MAX_RECORD)
		return up_err(x->err, -E2BIG, UP_EVENT_TOO_BIG, pos);
	return 0;
}

/* ---- the probe's name and place ------------------------------------------------------ */

/* [GRP/]EVENT (or GRP.EVENT) at cmd offset pos; @del: an event name is required. */
static int up_parse_name(struct fdr_uprobe_cmd *c, const char *s, size_t n, long pos, int del,
			 struct fdr_uprobe_err *err)
{
	const char *slash = memchr(s, '/', n);

	if (!slash)
		slash = memchr(s, '.', n);
	if (slash) {
		size_t gl = (size_t)(slash - s);

		if (!gl)
			return up_err(err, -EINVAL, UP_NO_GROUP_NAME, pos);
		if (gl + 1 > FDR_UPROBE_NAME_LEN)
			return up_err(err, -EINVAL, UP_GROUP_TOO_LONG, pos);
		if (!up_good_name(s, gl))
			return up_err(err, -EINVAL, UP_BAD_GROUP_NAME, pos);
		memset(c->group, 0, sizeof(c->group));
		memcpy(c->group, s, gl);
		c->has_group = 1;
		pos += (long)gl + 1;
		n -= gl + 1;
		s = slash + 1;
	}
	if (!n) {
		if (del)
			return up_err(err, -EINVAL, UP_NO_EVENT_NAME, pos);
		return 0; /* the default name, once the offset is known */
	}
	if (n >= FDR_UPROBE_NAME_LEN)
		return up_err(err, -EINVAL, UP_EVENT_TOO_LONG, pos);
	if (!up_good_name(s, n))
		return up_err(err, -EINVAL, UP_BAD_EVENT_NAME, pos);
	memcpy(c->event, s, n);
	return 0;
}

/* PATH:OFFSET[%return][(REF_CTR_OFFSET)] or fdr's PATH:SYMBOL[+OFFS][%return] */
static int up_parse_place(struct fdr_uprobe_cmd *c, const char *s, size_t n, long pos,
			  struct fdr_uprobe_err *err)
{
	const char *colon = NULL, *end = s + n, *pct, *paren;
	struct stat st;
	size_t i;
	int ret;

	for (i = n; i > 0; i--)
		if (s[i - 1] == ':') {
			colon = s + i - 1;
			break;
		}
	if (!colon || colon == s || colon + 1 == end)
		return up_err(err, -EINVAL, UP_BAD_PLACE, pos);
	if ((size_t)(colon - s) >= sizeof(c->path))
		return up_err(err, -ENAMETOOLONG, UP_FILE_NOT_FOUND, pos);
	memcpy(c->path, s, (size_t)(colon - s));
	c->path_pos = (uint16_t)(pos > 0xffff ? 0xffff : pos);
	/* (REF_CTR_OFFSET) */
	paren = memchr(colon, '(', (size_t)(end - colon));
	if (paren) {
		const char *cl = memchr(paren, ')', (size_t)(end - paren));

		if (!cl)
			return up_err(err, -EINVAL, UP_REFCNT_OPEN_BRACE, pos + (long)n);
		if (cl + 1 != end)
			return up_err(err, -EINVAL, UP_BAD_REFCNT_SUFFIX, pos + (cl + 1 - s));
		if (up_strtou64(paren + 1, (size_t)(cl - paren - 1), &c->ref_ctr_offset))
			return up_err(err, -EINVAL, UP_BAD_REFCNT, pos + (paren + 1 - s));
		c->has_ref_ctr = 1;
		end = paren;
	}
	pct = memchr(colon, '%', (size_t)(end - colon));
	if (pct) {
		if (end - pct != 7 || memcmp(pct, "%return", 7) != 0)
			return up_err(err, -EINVAL, UP_BAD_ADDR_SUFFIX, pos + (pct - s));
		c->is_return = 1;
		end = pct;
	}
	if (colon + 1 == end)
		return up_err(err, -EINVAL, UP_BAD_UPROBE_OFFS, pos + (colon + 1 - s));
	if (isdigit((unsigned char)colon[1])) {
		ret = up_strtou64(colon + 1, (size_t)(end - colon - 1), &c->offset);
		if (ret)
			return up_err(err, ret, UP_BAD_UPROBE_OFFS, pos + (colon + 1 - s));
	} else {
		/* fdr: SYMBOL[+OFFS] */
		const char *plus = memchr(colon + 1, '+', (size_t)(end - colon - 1));
		const char *se = plus ? plus : end;
		const char *p;

		if (se == colon + 1 || (size_t)(se - colon - 1) >= sizeof(c->symbol) ||
		    (!isalpha((unsigned char)colon[1]) && colon[1] != '_' && colon[1] != '.'))
			return up_err(err, -EINVAL, UP_BAD_UPROBE_OFFS, pos + (colon + 1 - s));
		for (p = colon + 1; p < se; p++)
			if (!isalnum((unsigned char)*p) && *p != '_' && *p != '.' && *p != '@' &&
			    *p != '$')
				return up_err(err, -EINVAL, UP_BAD_UPROBE_OFFS, pos + (p - s));
		memcpy(c->symbol, colon + 1, (size_t)(se - colon - 1));
		if (plus && up_strtou64(plus + 1, (size_t)(end - plus - 1), &c->sym_offset))
			return up_err(err, -EINVAL, UP_BAD_UPROBE_OFFS, pos + (plus + 1 - s));
	}
	if (stat(c->path, &st) != 0)
		return up_err(err,
			      errno == ENOTDIR ? -ENOENT :
			      -errno	       ? -errno :
						 -ENOENT,
			      UP_FILE_NOT_FOUND, pos);
	if (!S_ISREG(st.st_mode))
		return up_err(err, -EINVAL, UP_NO_REGULAR_FILE, pos);
	c->dev = (uint64_t)st.st_dev;
	c->ino = (uint64_t)st.st_ino;
	return 0;
}

/*
 * p_<basename up to its first '.', '-' or '_'>_0x<offset> (the kernel's default);
 * also for a PATH:SYMBOL line once fdr_uprobe_resolve() knows the offset
 */
void fdr_uprobe_default_event(struct fdr_uprobe_cmd *c)
{
	const char *b = strrchr(c->path, '/');
	size_t n;

	b = b ? b + 1 : c->path;
	n = strcspn(b, ".-_");
	snprintf(c->event, sizeof(c->event), "p_%.*s_0x%llx", (int)n, b,
		 (unsigned long long)c->offset);
}

/**
 * fdr_uprobe_parse - parse one uprobe_events line
 * @line: the line (NUL- or newline-terminated; a '#' starts a comment)
 * @out: filled on success (and partly on failure)
 * @err: on failure, the errno, the message and its position in the command
 *       (fdr_uprobe_command()); may be NULL
 *
 * An empty line or a comment gives op FDR_UPROBE_NONE. An added probe is
 * checked completely (names, place, the file is a regular file, every argument)
 * and its arguments compiled; a PATH:SYMBOL place keeps offset 0 and an empty
 * default name until fdr_uprobe_resolve(). Returns 0, or the negative errno of
 * the first error: -EINVAL, -E2BIG (an argument or the event too long), -ERANGE
 * (a number out of range), -ENOENT (no such file), -ENOMEM.
 */
int fdr_uprobe_parse(const char *line, struct fdr_uprobe_cmd *out, struct fdr_uprobe_err *err)
{
	struct up_ctx x = { 0 };
	size_t len = fdr_uprobe_command(line, NULL, 0), starts[FDR_UPROBE_MAX_ARGS + 3];
	size_t lens[FDR_UPROBE_MAX_ARGS + 3], argc = 0, i;
	char *cmd;
	const char *t0;
	int ret = 0;

	memset(out, 0, offsetof(struct fdr_uprobe_cmd, args));
	if (err) {
		err->code = 0;
		err->pos = -1;
		err->msg = NULL;
	}
	cmd = malloc(len + 1);
	if (!cmd)
		return up_err(err, -ENOMEM, UP_BAD_CMD, -1);
	fdr_uprobe_command(line, cmd, len + 1);
	out->cmd_len = (uint32_t)len;
	for (i = 0; i < len;) {
		size_t e = i;

		while (e < len && cmd[e] != ' ')
			e++;
		if (argc == FDR_UPROBE_MAX_ARGS + 3) {
			ret = up_err(err, -E2BIG, UP_TOO_MANY_ARGS, (long)i);
			goto out;
		}
		starts[argc] = i;
		lens[argc++] = e - i;
		i = e + 1;
	}
	if (!argc)
		goto out; /* FDR_UPROBE_NONE */
	t0 = cmd;
	x.cmd = cmd;
	x.c = out;
	x.err = err;
	snprintf(out->group, sizeof(out->group), "%s", FDR_UPROBE_GROUP);
	if (t0[0] == '-') {
		out->op = FDR_UPROBE_DEL;
		if (lens[0] < 2 || t0[1] != ':') {
			ret = up_err(err, -EINVAL, UP_BAD_CMD, 0);
			goto out;
		}
		ret = up_parse_name(out, t0 + 2, lens[0] - 2, 2, 1, err);
		if (!ret && argc > 1)
			ret = up_err(err, -EINVAL, UP_DEL_EXTRA, (long)starts[1]);
		goto out;
	}
	if (t0[0] != 'p' && t0[0] != 'r') {
		ret = up_err(err, -EINVAL, UP_BAD_CMD, 0);
		goto out;
	}
	out->op = FDR_UPROBE_ADD;
	out->is_return = t0[0] == 'r';
	if (lens[0] > 1 && isdigit((unsigned char)t0[1])) {
		ret = up_err(err, -EINVAL, UP_MAXACT_UPROBE, 1);
		goto out;
	}
	if (lens[0] > 1 && t0[1] != ':') {
		ret = up_err(err, -EINVAL, UP_BAD_CMD, 0);
		goto out;
	}
	if (lens[0] > 2) {
		ret = up_parse_name(out, t0 + 2, lens[0] - 2, 2, 0, err);
		if (ret)
			goto out;
	}
	if (argc < 2) {
		ret = up_err(err, -EINVAL, UP_NO_PLACE, (long)len + 1);
		goto out;
	}
	ret = up_parse_place(out, cmd + starts[1], lens[1], (long)starts[1], err);
	if (ret)
		goto out;
	if (argc - 2 > FDR_UPROBE_MAX_ARGS) {
		ret = up_err(err, -E2BIG, UP_TOO_MANY_ARGS, (long)starts[2 + FDR_UPROBE_MAX_ARGS]);
		goto out;
	}
	out->fixed_size = out->is_return ? 24 : 16;
	for (i = 2; i < argc; i++) {
		ret = up_parse_arg(&x, (uint32_t)(i - 2), cmd + starts[i], lens[i],
				   (long)starts[i]);
		if (ret)
			goto out;
		out->nr_args++;
	}
	if (!out->event[0] && !out->symbol[0])
		fdr_uprobe_default_event(out);
out:
	free(cmd);
	return ret;
}

/* ---- read-back, comparison ---------------------------------------------------------- */

/**
 * fdr_uprobe_format - the line uprobe_events shows for a probe, newline included:
 * "p:GRP/EVENT PATH:0x%016lx[(0x%lx)] NAME=FETCHARG[:TYPE] ..." (r: for returns)
 * Returns the length (>= @size: cut), or -EINVAL for a command that adds nothing.
 */
int fdr_uprobe_format(const struct fdr_uprobe_cmd *c, char *buf, size_t size)
{
	size_t n;
	uint32_t i;
	int k;

	if (c->op != FDR_UPROBE_ADD)
		return -EINVAL;
	k = snprintf(buf, size, "%c:%s/%s %s:0x%016llx", c->is_return ? 'r' : 'p', c->group,
		     c->event, c->path, (unsigned long long)c->offset);
	if (k < 0)
		return -EINVAL;
	n = (size_t)k;
	if (c->has_ref_ctr) {
		k = snprintf(n < size ? buf + n : NULL, n < size ? size - n : 0, "(0x%llx)",
			     (unsigned long long)c->ref_ctr_offset);
		n += k > 0 ? (size_t)k : 0;
	}
	for (i = 0; i < c->nr_args; i++) {
		k = snprintf(n < size ? buf + n : NULL, n < size ? size - n : 0, " %s=%s",
			     c->args[i].name, c->args[i].body);
		n += k > 0 ? (size_t)k : 0;
	}
	if (n + 1 < size) {
		buf[n] = '\n';
		buf[n + 1] = 0;
	}
	return (int)(n + 1);
}

/* The kernel's type identity: the fetch type (bitfields are their container) and count */
static int up_same_type(const struct fdr_uprobe_arg *a, const struct fdr_uprobe_arg *b)
{
	return a->tkind == b->tkind && a->size == b->size && a->count == b->count;
}

/**
 * fdr_uprobe_same_args - may @b (a new line) join the existing event of @a?
 *
 * The kernel's rules for a second location of an event: same kind (p or r),
 * same argument names and types, and not the very same probe. Returns 0 if @b
 * may be added, else -EEXIST with the kernel's message, its caret on @b's
 * command (the first argument that differs).
 */
int fdr_uprobe_same_args(const struct fdr_uprobe_cmd *a, const struct fdr_uprobe_cmd *b,
			 struct fdr_uprobe_err *err)
{
	uint32_t i, n = a->nr_args < b->nr_args ? a->nr_args : b->nr_args;

	if (a->is_return != b->is_return)
		return up_err(err, -EEXIST, UP_DIFF_PROBE_TYPE, 0);
	for (i = 0; i < n; i++)
		if (strcmp(a->args[i].name, b->args[i].name) != 0 ||
		    !up_same_type(&a->args[i], &b->args[i]))
			return up_err(err, -EEXIST, UP_DIFF_ARG_TYPE, b->args[i].pos);
	if (a->nr_args != b->nr_args)
		return up_err(err, -EEXIST, UP_DIFF_ARG_TYPE,
			      n < b->nr_args ? (long)b->args[n].pos : (long)b->cmd_len + 1);
	if (strcmp(a->path, b->path) == 0 && a->offset == b->offset) {
		for (i = 0; i < n; i++)
			if (strcmp(a->args[i].body, b->args[i].body) != 0)
				return 0;
		return up_err(err, -EEXIST, UP_SAME_PROBE, 0);
	}
	return 0;
}

/* ---- the fetch program ------------------------------------------------------------- */

/**
 * fdr_uprobe_compile - the fetch program of a parsed probe
 * @c: a command fdr_uprobe_parse() accepted (op FDR_UPROBE_ADD)
 * @prog, @cap: where to write it, and its room in bytes
 * @len: set to the program's size
 *
 * The program is self-contained (offsets only) and passes fdr_fetch_check().
 * Returns 0, -ENOSPC if @cap is too small, -EINVAL for a command with nothing
 * to compile.
 */
int fdr_uprobe_compile(const struct fdr_uprobe_cmd *c, struct fdr_fetch_prog *prog, size_t cap,
		       size_t *len)
{
	size_t nr_insns = 0, data_len = 0, bytes, k = 0, d = 0;
	unsigned char *data;
	uint32_t i, j;

	if (c->op != FDR_UPROBE_ADD || c->nr_args > FDR_FETCH_MAX_ARGS)
		return -EINVAL;
	for (i = 0; i < c->nr_args; i++) {
		nr_insns += c->args[i].nr_insns;
		for (j = 0; j < c->args[i].nr_insns; j++)
			if (c->args[i].insns[j].op == FDR_FOP_ST_DATA)
				data_len += (uint64_t)c->args[i].insns[j].imm & 0xffff;
	}
	bytes = fdr_fetch_prog_bytes(nr_insns, data_len);
	if (nr_insns > FDR_FETCH_MAX_INSNS || bytes > FDR_FETCH_MAX_SIZE)
		return -E2BIG;
	if (bytes > cap)
		return -ENOSPC;
	memset(prog, 0, bytes);
	prog->magic = FDR_FETCH_MAGIC;
	prog->version = FDR_FETCH_VERSION;
	prog->flags = c->is_return ? FDR_FETCH_F_RETURN : 0;
	prog->size = (uint32_t)bytes;
	prog->nr_insns = (uint16_t)nr_insns;
	prog->nr_args = (uint16_t)c->nr_args;
	prog->fixed_size = (uint16_t)c->fixed_size;
	prog->data_len = (uint16_t)data_len;
	prog->probe_offset = c->offset;
	data = (unsigned char *)&prog->insns[nr_insns];
	for (i = 0; i < c->nr_args; i++)
		for (j = 0; j < c->args[i].nr_insns; j++) {
			struct fdr_fetch_insn in = c->args[i].insns[j];

			if (in.op == FDR_FOP_ST_DATA) {
				size_t off = (uint64_t)in.imm >> 16, l = (uint64_t)in.imm & 0xffff;

				memcpy(data + d, c->args[i].body + off, l);
				in.imm = (int64_t)(d << 16 | l);
				d += l;
			}
			prog->insns[k++] = in;
		}
	*len = bytes;
	return fdr_fetch_check(prog, bytes, NULL);
}

/* ---- the event ------------------------------------------------------------------------- */

static const char *up_type_name(uint8_t tkind, uint8_t size)
{
	static const char *const u[] = { "u8", "u16", "u32", "u64" };
	static const char *const s[] = { "s8", "s16", "s32", "s64" };
	int i = size == 1 ? 0 : size == 2 ? 1 : size == 4 ? 2 : 3;

	return tkind == FDR_UT_S ? s[i] : u[i];
}

static uint64_t up_hash(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;

	while (n--)
		h = (h ^ *b++) * 0x100000001b3ull;
	return h;
}

/**
 * fdr_uprobe_event - describe a probe's event for the registry
 * @c: a command fdr_uprobe_parse() accepted, its offset resolved
 * @e: filled: group, name, fields as the kernel's format file lists them,
 *     FDR_PROBE_ENTRY or FDR_PROBE_RETURN (the format machinery prints the
 *     kernel's print fmt and text line from the fields); id and state are the
 *     registry's
 *
 * Returns 0, or -E2BIG (message in @err) when the arguments need more fields
 * than an fdr event has (FDR_MAX_FIELDS, the probe's own fields included).
 */
int fdr_uprobe_event(const struct fdr_uprobe_cmd *c, struct fdr_abi_event *e,
		     struct fdr_uprobe_err *err)
{
	uint32_t first = c->is_return ? 2 : 1, i;
	uint64_t h = 0xcbf29ce484222325ull;

	memset(e, 0, sizeof(*e));
	if (c->op != FDR_UPROBE_ADD || !c->event[0])
		return -EINVAL;
	if (c->nr_args + first > FDR_MAX_FIELDS)
		return up_err(err, -E2BIG, UP_TOO_MANY_FIELDS, c->args[FDR_MAX_FIELDS - first].pos);
	snprintf(e->system, sizeof(e->system), "%s", c->group);
	snprintf(e->name, sizeof(e->name), "%s", c->event);
	e->probe = c->is_return ? FDR_PROBE_RETURN : FDR_PROBE_ENTRY;
	e->nr_fields = first + c->nr_args;
	e->payload_size = c->fixed_size;
	snprintf(e->fields[0].name, FDR_FIELD_NAME_LEN, "%s",
		 c->is_return ? "__probe_func" : "__probe_ip");
	if (c->is_return)
		snprintf(e->fields[1].name, FDR_FIELD_NAME_LEN, "__probe_ret_ip");
	for (i = 0; i < first; i++) {
		snprintf(e->fields[i].type, FDR_FIELD_TYPE_LEN, "unsigned long");
		e->fields[i].offset = (uint16_t)(8 + 8 * i);
		e->fields[i].size = 8;
		e->fields[i].kind = FDR_KIND_INT;
		e->fields[i].print = FDR_PRINT_HEX;
	}
	for (i = 0; i < c->nr_args; i++) {
		const struct fdr_uprobe_arg *a = &c->args[i];
		struct fdr_abi_field *f = &e->fields[first + i];

		snprintf(f->name, sizeof(f->name), "%s", a->name);
		f->offset = a->field;
		if (a->tkind == FDR_UT_STRING) {
			snprintf(f->type, sizeof(f->type), "__data_loc char[]");
			f->size = 4;
			f->is_signed = 1; /* as the kernel's format file says */
			f->kind = FDR_KIND_STRING;
			continue;
		}
		snprintf(f->type, sizeof(f->type), "%s", up_type_name(a->tkind, a->size));
		f->is_signed = a->tkind == FDR_UT_S;
		f->print = a->tkind == FDR_UT_X	   ? FDR_PRINT_HEX :
			   a->tkind == FDR_UT_CHAR ? FDR_PRINT_CHAR :
						     FDR_PRINT_DEC;
		if (a->count) {
			f->kind = FDR_KIND_ARRAY;
			f->count = a->count;
			f->size = (uint16_t)(a->size * a->count);
		} else {
			f->kind = FDR_KIND_INT;
			f->size = a->size;
		}
	}
	h = up_hash(h, &e->nr_fields, sizeof(e->nr_fields));
	h = up_hash(h, &e->payload_size, sizeof(e->payload_size));
	h = up_hash(h, e->fields, sizeof(e->fields[0]) * e->nr_fields);
	h = up_hash(h, e->print_fmt, sizeof(e->print_fmt));
	h = up_hash(h, e->print_args, sizeof(e->print_args));
	h = up_hash(h, &e->probe, sizeof(e->probe));
	e->layout_hash = h;
	return 0;
}
