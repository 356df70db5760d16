// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test-uprobe.c - uprobe_events lines (lib/ctl/uprobe-parse.c), their fetch
 * programs (lib/probe/fetch.c), ELF symbol resolution (lib/ctl/uprobe-elf.c) and
 * the probe event's format and text line (lib/ctl/format-probe.c).
 *
 * The tables marked "live kernel" were produced by writing each line to the
 * kernel's /sys/kernel/tracing/uprobe_events (6.18, probes of a private group
 * appended with >> and removed with -:, never truncated): its errno, error_log
 * message and caret column, its read-back and its format file. The text lines
 * are the kernel's trace lines for the same definitions on a test program.
 * fdr's deliberate differences (docs/design/uprobes.md) have their own table.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <elf.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "ctl/uprobe.h"
#include "fdr/fdr-read.h"
#include "probe/fetch.h"

struct err_row {
	const char *line;
	int code;
	const char *msg;
	int pos;
};

/* live kernel: errno, error_log message, caret position (NULL, -1: no entry) */
static const struct err_row kernel_errors[] = {
	{ "p:fdrchk/e1 /bin/nosuch:0x1149", -2, "Failed to find the given file", 12 },
	{ "p:fdrchk/e1 /bin/true:0x1149 %zz", -22, "Invalid register name", 29 },
	{ "p:fdrchk/e1 /bin/true:0x1149 x=%di:u7", -22, "Unknown type is specified", 35 },
	{ "p:fdrchk/e1 /bin/true:0x1149 $retval", -22, "$retval is not available on probe", 29 },
	{ "p:fdrchk/e1 /bin/true:0x1149 @sym", -22, "Symbol is not available with uprobe", 29 },
	{ "p:fdrchk/e1 /bin/true:0x1149 foo", -22, "BTF is not available or not supported", 29 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a=%di a=%si", -22, "This argument name is already used",
	  35 },
	{ "p:fdrchk/e1 /bin/true:0x1149 1a=%di", -22,
	  "Argument name must follow the same rules as C identifiers", 29 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a=%di:string", -22, "String accepts only memory argument",
	  35 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a=%di:u8[2]", -22, "String accepts only memory argument",
	  35 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a=+0(%di):u8[65]", -22, "Array number is too big", 42 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a=+0(%di):u8[0]", -22, "Invalid array size", 42 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a=+0(%di):u8[2", -22, "Array is not closed", 43 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a=+0(%di):u8[2]x", -22, "Array has wrong suffix", 44 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a=+0(%di", -22, "Dereference brace is not closed", 37 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a=+0%di", -22, "Dereference needs a brace", 31 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a=+z(%di)", -22, "Invalid dereference offset", 31 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a=+0($comm)", -22, "$comm can not be dereferenced", 34 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a=$comm:u32", -22,
	  "$comm and immediate-string only accepts string type", 37 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a=\\zz", -22, "Invalid immediate value", 32 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a=@zz", -22, "Symbol is not available with uprobe", 31 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a=@0xzz", -22, "Invalid memory address", 31 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a=@+zz", -22, "Invalid file offset value", 31 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a=$stackx", -22, "Invalid $-variable specified", 31 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a=$foo", -22, "Invalid $-variable specified", 31 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a=+0(%di):b0@1/32", -22, "Invalid bitfield", 42 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a=+0(%di):b4@30/32", -22, "Invalid bitfield", 42 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a=+0(%di):b4@1/24", -22, "Unknown type is specified", 39 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a=+0(%di):b4/32", -22, "Invalid bitfield", 42 },
	{ "p:fdrchk/e1 /bin/true:0x1149 abcd=+0(+0(%si)):b4@30/32", -22, "Invalid bitfield", 49 },
	{ "p:fdrchk/e1 /bin/true:0x1149 abcd=+0(+0(%si)):u8[99]", -22, "Array number is too big",
	  49 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a=+0(%di):b65@0/64", -22, "Invalid bitfield", 42 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a=+0(%di):b1@3/8x", -22, "Unknown type is specified", 39 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a=", -22, "No argument expression", 31 },
	{ "p:fdrchk/e1 /bin/true:0x1149 =%di", -22, "Argument name is not specified", 29 },
	{ "p:fdrchk/e1 /bin/true:0x1149 aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa=%di", -22,
	  "Argument name is too long", 29 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a=+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(%di))))))))))))))))",
	  -7, "Argument expression is too long", 31 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a=+0(%di):symbol", -22, "Unknown type is specified", 39 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a=+0(%di):%pd", -22, "Unknown type is specified", 39 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a=+0(%di):symstr", -22, "Unknown type is specified", 39 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a=\\\"abc", -22, "String is not closed with '\"'", 36 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a=common_pid", -22, "BTF is not available or not supported",
	  31 },
	{ "p:fdrchk/e1 /bin/true:0x1149 __probe_ip=%di", -22, "This argument name is already used",
	  29 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a=+0u(%di)", -22, "Invalid dereference offset", 31 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a=%ax b=%rax", -22, "Invalid register name", 37 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a=%es", -22, "Invalid register name", 31 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a=%fs_base", -22, "Invalid register name", 31 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a=%eax", -22, "Invalid register name", 31 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a=%rip", -22, "Invalid register name", 31 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a=%DI", -22, "Invalid register name", 31 },
	{ "p:fdrchk/e1 /bin/true:0x1149%ret", -22, "Invalid probed address suffix", 28 },
	{ "p:fdrchk/e1 /bin/true:0x1149(zz)", -22, "Invalid reference counter offset", 29 },
	{ "p:fdrchk/e1 /bin/true:0x1149(0x10", -22, "Reference counter brace is not closed", 33 },
	{ "p:fdrchk/e1 /bin/true:0x1149(0x10)x", -22, "Reference counter has wrong suffix", 34 },
	{ "p:/e1 /bin/true:0x1149", -22, "Group name is not specified", 2 },
	{ "p:1fdrchk/e1 /bin/true:0x1149", -22,
	  "Group name must follow the same rules as C identifiers", 2 },
	{ "p:fdrchk/1e /bin/true:0x1149", -22,
	  "Event name must follow the same rules as C identifiers", 9 },
	{ "p:fdrchk/e-1 /bin/true:0x1149", -22,
	  "Event name must follow the same rules as C identifiers", 9 },
	{ "p:fdrchk/e.1 /bin/true:0x1149", -22,
	  "Event name must follow the same rules as C identifiers", 9 },
	{ "p:fdr.chk/e1 /bin/true:0x1149", -22,
	  "Group name must follow the same rules as C identifiers", 2 },
	{ "p:fdrchk/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa /bin/true:0x1149",
	  -22, "Event name is too long", 9 },
	{ "p:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa/e1 /bin/true:0x1149",
	  -22, "Group name is too long", 2 },
	{ "p:fdrchk/e1 /tmp:0x1149", -22, "Not a regular file", 12 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a=$arg0", -22, "Invalid argument number", 31 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a=\\0x", -22, "Invalid immediate value", 32 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a=%di:x64:u8", -22, "Unknown type is specified", 35 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a=%di:", -22, "Unknown type is specified", 35 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a=%di b", -22, "BTF is not available or not supported",
	  35 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a=+0x(%di)", -22, "Invalid dereference offset", 31 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a=@-1", -22, "Symbol is not available with uprobe", 31 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a=@+", -22, "Invalid file offset value", 31 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a=\\\"abc\":u8", -22,
	  "$comm and immediate-string only accepts string type", 38 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a=$comm:string[2]", -22,
	  "$comm and immediate-string only accepts string type", 37 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a=$comm:s8", -22,
	  "$comm and immediate-string only accepts string type", 37 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a=+0(%di):string:x", -22, "Unknown type is specified", 39 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a=$stack:string", -22,
	  "String accepts only memory argument", 38 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a=+0(%di):u8[]", -22, "Invalid array size", 42 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a=+0(%di):[2]", -22, "Unknown type is specified", 39 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a=+18446744073709551615(%di)", -34,
	  "Invalid dereference offset", 31 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a=\\18446744073709551616", -34, "Invalid immediate value",
	  32 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a=%di=%si", -22, "Invalid register name", 31 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a==%si", -22, "Invalid fetch argument", 31 },
	{ "p:fdrchk/e1 /bin/true:0x1149 arg2=%si %di", -22, "This argument name is already used",
	  38 },
	{ "p:fdrchk/e1 /bin/true:0x1149 %di arg1=%si", -22, "This argument name is already used",
	  33 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a=$retval:s64", -22, "$retval is not available on probe",
	  31 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a=+0($retval)", -22, "$retval is not available on probe",
	  34 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a=+0(\\\"s\")", -22, "$comm can not be dereferenced", 34 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a=+0(%di):U8", -22, "Unknown type is specified", 39 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a=+0(%di) b=+1(%dx", -22, "Dereference brace is not closed",
	  47 },
	{ "r:fdrchk/e1 /bin/true:0x1149 a=$arg1", -22,
	  "$arg* can be used only on function entry or exit", 31 },
	{ "p:fdrchk/o6 /bin/true:0x1149 a=+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(%di))))))))))))))) b=+0(%di):b64@0/64 c=+0(%di):b1@0x3/0x8 d=@0x1000:string e=\\0x1000:string",
	  -22, "Dereference is too much nested", 34 },
};

/* fdr's own: the kernel gives a bare EINVAL (no error_log entry) or differs */
static const struct err_row fdr_errors[] = {
	{ "q:fdrchk/e1 /bin/true:0x1149", -22, "Unknown probe command (expected 'p', 'r' or '-:')",
	  0 },
	{ "p:fdrchk/e1 /bin/true", -22, "Probe place must be PATH:OFFSET or PATH:SYMBOL[+OFFS]",
	  12 },
	{ "p:fdrchk/e1 /bin/true:", -22, "Probe place must be PATH:OFFSET or PATH:SYMBOL[+OFFS]",
	  12 },
	{ "p:fdrchk/e1 /bin/true:-1", -22, "Invalid uprobe offset", 22 },
	{ "p:fdrchk/e1 /bin/true:0x12g", -22, "Invalid uprobe offset", 22 },
	{ "p:fdrchk/e1 /bin/true:sym+zz", -22, "Invalid uprobe offset", 26 },
	{ "p", -22, "Probe place is not specified (PATH:OFFSET or PATH:SYMBOL)", 2 },
	{ "p:fdrchk/e1", -22, "Probe place is not specified (PATH:OFFSET or PATH:SYMBOL)", 12 },
	{ "px /bin/true:0x1149", -22, "Unknown probe command (expected 'p', 'r' or '-:')", 0 },
	/* the kernel accepts r5: for a uprobe and drops the name: not copied */
	{ "r5:fdrchk/e1 /bin/true:0x1149", -22, "Maxactive is not available with uprobe", 1 },
	/* the kernel ignores text after a dereference's last ')' */
	{ "p:fdrchk/e1 /bin/true:0x1149 a=+1(%di)x", -22,
	  "Unexpected text after the dereference's closing brace", 38 },
	/* 32 characters: the kernel takes them, an fdr field name has 31 */
	{ "p:fdrchk/e1 /bin/true:0x1149 aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa=%di", -22,
	  "Argument name is too long", 29 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a=+0(%di):string[2]", -22,
	  "Arrays of strings are not supported by fdr", 39 },
	{ "-:fdrchk/e1 x", -22, "Removing a probe takes only its name", 12 },
	{ "-:fdrchk/", -22, "Event name is not specified", 9 },
	{ "-:", -22, "Event name is not specified", 2 },
	{ "-x", -22, "Unknown probe command (expected 'p', 'r' or '-:')", 0 },
};

#include "uprobe-kernel-rows.h"

static void check_error(const struct err_row *r)
{
	static struct fdr_uprobe_cmd c;
	struct fdr_uprobe_err e;
	int ret = fdr_uprobe_parse(r->line, &c, &e);

	cr_expect_eq(ret, r->code, "%s: returned %d, want %d", r->line, ret, r->code);
	cr_expect_eq(e.code, r->code, "%s: err.code %d", r->line, e.code);
	if (r->msg)
		cr_expect(e.msg && strcmp(e.msg, r->msg) == 0, "%s: message '%s', want '%s'",
			  r->line, e.msg ? e.msg : "(null)", r->msg);
	cr_expect_eq(e.pos, r->pos, "%s: position %d, want %d", r->line, e.pos, r->pos);
}

Test(uprobe, kernel_errors)
{
	size_t i;

	for (i = 0; i < sizeof(kernel_errors) / sizeof(kernel_errors[0]); i++)
		check_error(&kernel_errors[i]);
}

Test(uprobe, fdr_errors)
{
	size_t i;

	for (i = 0; i < sizeof(fdr_errors) / sizeof(fdr_errors[0]); i++)
		check_error(&fdr_errors[i]);
}

/* The format file's part from the first probe field on (ids and names differ). */
static char *format_tail(const struct fdr_abi_event *e)
{
	struct fdr_buf b = { 0 };
	char *p, *ret;

	cr_assert_eq(fdr_format_event_file(e, &b), 0);
	p = strstr(b.data, "\tfield:unsigned long __probe");
	cr_assert(p, "%s", b.data);
	ret = strdup(p);
	fdr_buf_free(&b);
	return ret;
}

Test(uprobe, kernel_readback_and_format)
{
	static struct fdr_uprobe_cmd c;
	static struct fdr_fetch_prog prog[FDR_FETCH_MAX_SIZE / sizeof(struct fdr_fetch_prog)];
	struct fdr_uprobe_err e;
	struct fdr_abi_event ev;
	char buf[4096];
	size_t i, len;

	for (i = 0; i < sizeof(kernel_ok) / sizeof(kernel_ok[0]); i++) {
		const struct ok_row *r = &kernel_ok[i];
		char *tail;
		int ret = fdr_uprobe_parse(r->line, &c, &e);

		cr_assert_eq(ret, 0, "%s: %d %s at %d", r->line, ret, e.msg, e.pos);
		cr_expect_eq(c.op, FDR_UPROBE_ADD);
		fdr_uprobe_format(&c, buf, sizeof(buf));
		cr_expect_str_eq(buf, r->readback, "%s", r->line);
		cr_assert_eq(fdr_uprobe_event(&c, &ev, &e), 0, "%s", r->line);
		tail = format_tail(&ev);
		cr_expect(strcmp(tail, r->format) == 0, "%s:\n%s\nwant\n%s", r->line, tail,
			  r->format);
		free(tail);
		cr_expect_eq(fdr_uprobe_compile(&c, prog, sizeof(prog), &len), 0, "%s", r->line);
		cr_expect_eq(fdr_fetch_check(prog, len, NULL), 0, "%s", r->line);
	}
}

Test(uprobe, command_and_comments)
{
	static struct fdr_uprobe_cmd c;
	static const char *const empty[] = { "",	"   ",	     "\n", "# all comment",
					     "  \t# x", "#p:a/b x:1" };
	struct fdr_uprobe_err e;
	char buf[256];
	size_t i;

	for (i = 0; i < sizeof(empty) / sizeof(empty[0]); i++) {
		cr_expect_eq(fdr_uprobe_parse(empty[i], &c, &e), 0, "'%s'", empty[i]);
		cr_expect_eq(c.op, FDR_UPROBE_NONE, "'%s'", empty[i]);
	}
	cr_expect_eq(fdr_uprobe_command("  p:a/b \t /x:1   x=%di # c d\n", buf, sizeof(buf)), 16);
	cr_expect_str_eq(buf, "p:a/b /x:1 x=%di");
	/* a trailing comment is dropped; words are joined by one space (live kernel) */
	cr_assert_eq(
		fdr_uprobe_parse("  p:fdrchk/c   /bin/true:0x1149   x=%di  # trailing", &c, &e), 0);
	fdr_uprobe_format(&c, buf, sizeof(buf));
	cr_expect_str_eq(buf, "p:fdrchk/c /bin/true:0x0000000000001149 x=%di\n");
	/* deletion */
	cr_assert_eq(fdr_uprobe_parse("-:fdrchk/e1", &c, &e), 0);
	cr_expect(c.op == FDR_UPROBE_DEL && c.has_group && !strcmp(c.group, "fdrchk") &&
		  !strcmp(c.event, "e1"));
	cr_assert_eq(fdr_uprobe_parse("-:e1", &c, &e), 0);
	cr_expect(c.op == FDR_UPROBE_DEL && !c.has_group && !strcmp(c.event, "e1"));
	cr_assert_eq(fdr_uprobe_parse("-:grp.ev", &c, &e), 0);
	cr_expect(!strcmp(c.group, "grp") && !strcmp(c.event, "ev"));
	cr_expect_eq(fdr_uprobe_format(&c, buf, sizeof(buf)), -EINVAL);
	/* offsets: hex, decimal, octal; %return */
	cr_assert_eq(fdr_uprobe_parse("p /bin/true:4425", &c, &e), 0);
	cr_expect_eq(c.offset, 0x1149);
	cr_expect_str_eq(c.group, "uprobes");
	cr_expect_str_eq(c.event, "p_true_0x1149");
	cr_assert_eq(fdr_uprobe_parse("p /bin/true:010%return", &c, &e), 0);
	cr_expect(c.offset == 8 && c.is_return);
	fdr_uprobe_format(&c, buf, sizeof(buf));
	cr_expect_str_eq(buf, "r:uprobes/p_true_0x8 /bin/true:0x0000000000000008\n");
	/* fdr's $argN, entry probes only (the live kernel: "$arg* can be used only on
	 * function entry or exit" at the '$', for p and r alike) */
	cr_assert_eq(fdr_uprobe_parse("p:fdrchk/a /bin/true:0x1149 a=$arg1 b=$arg7:s32", &c, &e),
		     0);
	cr_expect_eq(c.args[1].insns[0].op, FDR_FOP_ARG);
	cr_expect_eq(c.args[1].insns[0].imm, 7);
}

Test(uprobe, too_many_args)
{
	static struct fdr_uprobe_cmd c;
	struct fdr_uprobe_err e;
	struct fdr_abi_event ev;
	char line[8192];
	int n, i;

	n = snprintf(line, sizeof(line), "p:fdrchk/m /bin/true:0x1149");
	for (i = 0; i < 128; i++)
		n += snprintf(line + n, sizeof(line) - (size_t)n, " %%di");
	cr_assert_eq(fdr_uprobe_parse(line, &c, &e), 0);
	cr_expect_eq(c.nr_args, 128);
	/* the kernel takes 128; an fdr event has FDR_MAX_FIELDS fields */
	cr_expect_eq(fdr_uprobe_event(&c, &ev, &e), -E2BIG);
	cr_expect_str_eq(e.msg, "Too many arguments for one fdr event");
	cr_expect_eq(e.pos, c.args[31].pos);
	n += snprintf(line + n, sizeof(line) - (size_t)n, " %%si");
	cr_expect_eq(fdr_uprobe_parse(line, &c, &e), -E2BIG);
	cr_expect_str_eq(e.msg, "Too many arguments are specified");
}

/* live kernel: a second probe line for an existing event */
Test(uprobe, same_event_twice)
{
	static struct fdr_uprobe_cmd a, b;
	struct fdr_uprobe_err e;

	cr_assert_eq(fdr_uprobe_parse("p:fdrchk/a /bin/true:0x1149", &a, &e), 0);
	cr_assert_eq(fdr_uprobe_parse("p:fdrchk/a /bin/true:0x114a", &b, &e), 0);
	cr_expect_eq(fdr_uprobe_same_args(&a, &b, &e), 0);
	cr_assert_eq(fdr_uprobe_parse("p:fdrchk/a /bin/true:0x1149 x=%di", &b, &e), 0);
	cr_expect_eq(fdr_uprobe_same_args(&a, &b, &e), -EEXIST);
	cr_expect_str_eq(e.msg, "Argument type or name is different from existing probe");
	cr_expect_eq(e.pos, 28);
	cr_assert_eq(fdr_uprobe_parse("p:fdrchk/b /bin/true:0x1149 x=%di", &a, &e), 0);
	cr_expect_eq(fdr_uprobe_same_args(&a, &a, &e), -EEXIST);
	cr_expect_str_eq(e.msg, "There is already the exact same probe event");
	cr_expect_eq(e.pos, 0);
	cr_assert_eq(fdr_uprobe_parse("r:fdrchk/b /bin/true:0x1150 x=%di", &b, &e), 0);
	cr_expect_eq(fdr_uprobe_same_args(&a, &b, &e), -EEXIST);
	cr_expect_str_eq(e.msg, "Probe type is different from existing probe");
}

/* ---- fetch programs run on crafted registers, printed as the kernel prints --------- */

struct bf {
	unsigned a : 1, b : 4, c : 3;
};

static struct fdr_fetch_prog *compile(const char *line, struct fdr_abi_event *ev, size_t *len)
{
	static struct fdr_uprobe_cmd c;
	struct fdr_fetch_prog *prog = malloc(FDR_FETCH_MAX_SIZE);
	struct fdr_uprobe_err e;
	int ret;

	cr_assert(prog);
	ret = fdr_uprobe_parse(line, &c, &e);
	cr_assert_eq(ret, 0, "%s: %d %s at %d", line, ret, e.msg, e.pos);
	cr_assert_eq(fdr_uprobe_compile(&c, prog, FDR_FETCH_MAX_SIZE, len), 0, "%s", line);
	cr_assert_eq(fdr_fetch_check(prog, *len, NULL), 0, "%s", line);
	if (ev)
		cr_assert_eq(fdr_uprobe_event(&c, ev, &e), 0, "%s", line);
	return prog;
}

/* Run @line's program on @regs and return the record's text (after "NAME: "). */
static char *run_text(const char *line, const struct fdr_probe_regs *regs, size_t cap)
{
	struct fdr_abi_event ev;
	unsigned char rec[FDR_FETCH_MAX_RECORD];
	struct fdr_buf b = { 0 };
	size_t len;
	struct fdr_fetch_prog *prog = compile(line, &ev, &len);
	int n;
	char *ret;

	memset(rec, 0xa5, sizeof(rec));
	n = fdr_fetch_run(prog, regs, rec, cap);
	cr_assert_geq(n, (int)prog->fixed_size, "%s: %d", line, n);
	cr_assert_leq(n, (int)cap);
	cr_assert_eq(fdr_format_body(&ev, rec, (uint32_t)n, &b), 0);
	ret = strdup(b.data);
	fdr_buf_free(&b);
	free(prog);
	return ret;
}

static const char hello[] = "hello-uprobe";
static unsigned char ar[4] = { 7, 0, 0, 0 };
static struct bf bfv = { 1, 5, 2 };

static void tfn_regs(struct fdr_probe_regs *r, uint64_t x)
{
	memset(r, 0, sizeof(*r));
	r->gpr[FDR_REG_DI] = x;
	r->gpr[FDR_REG_SI] = (uintptr_t)hello;
	r->gpr[FDR_REG_DX] = (uintptr_t)ar;
	r->gpr[FDR_REG_CX] = (uintptr_t)&bfv;
	r->gpr[FDR_REG_IP] = 0x55b452e29149;
	r->probe_addr = 0x55b452e29149;
}

static void check_tfn(void)
{
	struct fdr_probe_regs r;
	char want[256];
	char *got;

	tfn_regs(&r, 2);
	/* live kernel, the same definition on a program passing the same values:
	 * tfn: (0x5602968a9149) x=2 s="hello-uprobe" sh=0x841c a=1881965592 b=2 bf=5
	 * ar={7,0,0,0} c='h'   (sh and a are the low bits of pointers) */
	got = run_text("p:fdrchk/tfn /bin/true:0x1149 x=%di:s64 s=+0(%si):string sh=%dx:x16 "
		       "a=%cx:s32 b=%di:u64 bf=+0(%cx):b4@1/32 ar=+0(%dx):u8[4] c=+0(%si):char",
		       &r, FDR_FETCH_MAX_RECORD);
	snprintf(want, sizeof(want),
		 "(0x55b452e29149) x=2 s=\"hello-uprobe\" sh=0x%x a=%d b=2 bf=5 ar={7,0,0,0} c='h'",
		 (unsigned)(uint16_t)(uintptr_t)ar, (int)(int32_t)(uintptr_t)&bfv);
	cr_expect_str_eq(got, want);
	free(got);
	/* x=-1 as s64, u64 */
	tfn_regs(&r, (uint64_t)-1);
	got = run_text(
		"p:fdrchk/n /bin/true:0x1149 x=%di:s64 y=%di:u64 z=%di:s8 w=%di:x8 v=%di:s32", &r,
		FDR_FETCH_MAX_RECORD);
	cr_expect_str_eq(got, "(0x55b452e29149) x=-1 y=18446744073709551615 z=-1 w=0xff v=-1");
	free(got);
}

Test(fetch, kernel_text_lines)
{
	check_tfn();
}

Test(fetch, kernel_text_lines_pipe)
{
	fdr_fetch_set_read_mode(FDR_FETCH_READ_PIPE);
	check_tfn();
	fdr_fetch_set_read_mode(FDR_FETCH_READ_AUTO);
}

Test(fetch, return_probe)
{
	struct fdr_probe_regs r;
	char *got;

	memset(&r, 0, sizeof(r));
	r.gpr[FDR_REG_AX] = 24;
	r.gpr[FDR_REG_IP] = 0x55b452e291af; /* where the function returned to */
	r.probe_addr = 0x55b452e29149;
	/* live kernel: tfn_ret: (0x55b452e291af <- 0x55b452e29149) rv=24 */
	got = run_text("r:fdrchk/tfn_ret /bin/true:0x1149 rv=$retval:s64", &r,
		       FDR_FETCH_MAX_RECORD);
	cr_expect_str_eq(got, "(0x55b452e291af <- 0x55b452e29149) rv=24");
	free(got);
}

Test(fetch, faults)
{
	struct fdr_probe_regs r;
	char want[256], *got;

	tfn_regs(&r, 0);
	/* live kernel: flt: (0x55b452e29149) fs=(fault) fu=0 fx=0x0 fa={0,0} ok=0x55b452e2a004 */
	got = run_text("p:fdrchk/flt /bin/true:0x1149 fs=+0(%di):string fu=+0(%di):u64 "
		       "fx=+8(%di):x32 fa=+0(%di):u16[2] ok=%si",
		       &r, FDR_FETCH_MAX_RECORD);
	snprintf(want, sizeof(want),
		 "(0x55b452e29149) fs=(fault) fu=0 fx=0x0 fa={0,0} ok=0x%" PRIxPTR,
		 (uintptr_t)hello);
	cr_expect_str_eq(got, want);
	free(got);
	/* a fault in a nested dereference, then the next argument is fine */
	r.gpr[FDR_REG_DI] = 16;
	got = run_text("p:fdrchk/f2 /bin/true:0x1149 a=+0(+0(+8(%di))):u32 "
		       "b=+0(+0(%di)):string c=+0(%si):u8",
		       &r, FDR_FETCH_MAX_RECORD);
	cr_expect_str_eq(got, "(0x55b452e29149) a=0 b=(fault) c=104");
	free(got);
}

Test(fetch, kernel_t2_line)
{
	struct fdr_probe_regs r;
	uint64_t stack[8] = { 1, 2, 3, 0x4d4d, 5, 6, 7, 8 };
	uint64_t foffs = 0x6c6c656800020001ull;
	char want[512], *got;

	prctl(PR_SET_NAME, "t", 0, 0, 0);
	tfn_regs(&r, 0);
	r.gpr[FDR_REG_SP] = (uintptr_t)stack;
	/* @+0x2000: the probe's address - its file offset + 0x2000 lands on foffs */
	r.probe_addr = (uintptr_t)&foffs + 0x1149 - 0x2000;
	r.gpr[FDR_REG_IP] = r.probe_addr;
	/* live kernel: t2: (0x55b452e29149) arg1=0x0 arg2=0x70752d6f6c6c6568
	 * arg3=0x7ffd7b276cb8 arg4=0x7ffd7b276de8 arg5="t" arg6=0x4d2 arg7=0x0
	 * arg8=0x6c6c656800020001 */
	got = run_text("p:fdrchk/t2 /bin/true:0x1149 %di +0(%si) $stack $stack3 $comm \\1234 "
		       "@0x1000 @+0x2000",
		       &r, FDR_FETCH_MAX_RECORD);
	snprintf(want, sizeof(want),
		 "(0x%" PRIx64 ") arg1=0x0 arg2=0x70752d6f6c6c6568 arg3=0x%" PRIxPTR
		 " arg4=0x4d4d arg5=\"t\" arg6=0x4d2 arg7=0x0 arg8=0x6c6c656800020001",
		 r.probe_addr, (uintptr_t)stack);
	cr_expect_str_eq(got, want);
	free(got);
}

Test(fetch, types_arrays_bitfields)
{
	static const uint64_t words[2] = { 0xf0f0f0f0f0f0f0f1ull, 0x8000000000000000ull };
	static const char *const strs[2] = { "ab", "cd" };
	struct fdr_probe_regs r;
	char *got;

	memset(&r, 0, sizeof(r));
	r.gpr[FDR_REG_DI] = (uintptr_t)words;
	r.gpr[FDR_REG_SI] = (uintptr_t)strs;
	r.gpr[FDR_REG_IP] = 0x1000;
	got = run_text(
		"p:g/e /bin/true:0x1149 a=+0(%di):x8[3] b=+0(%di):s16[2] "
		"c=+0(+0(%si)):u8 d=+0(%di):b3@2/8[2] e=+0(%di):b64@0/64 f=+0(%di):b1@0x3/0x8 "
		"g=+8(%di):s64 h=+0(+8(%si)):string i=\\\"ab\"c\" j=\\0xab:b4@4/8 "
		"k=+0(+0(%si)):char[2]",
		&r, FDR_FETCH_MAX_RECORD);
	cr_expect_str_eq(got, "(0x1000) a={0xf1,0xf0,0xf0} b={-3855,-3856} c=97 d={4,4} "
			      "e=17361641481138401521 f=0 g=-9223372036854775808 h=\"cd\" "
			      "i=\"ab\"c\" j=10 k={'a','b'}");
	free(got);
}

Test(fetch, args_and_stack)
{
	uint64_t stack[4] = { 0xdead /* return address */, 70, 80, 90 };
	struct fdr_probe_regs r;
	char *got;
	int i;

	memset(&r, 0, sizeof(r));
	for (i = 0; i < FDR_REG_NR; i++)
		r.gpr[i] = 100 + (uint64_t)i;
	r.gpr[FDR_REG_SP] = (uintptr_t)stack;
	r.gpr[FDR_REG_IP] = 0x1000;
	got = run_text("p:g/e /bin/true:0x1149 a=$arg1:u8 b=$arg2:u8 c=$arg3:u8 d=$arg4:u8 "
		       "e=$arg5:u8 f=$arg6:u8 g=$arg7:u8 h=$arg8:u8 i=$stack1:u8 j=%orig_ax:s8 "
		       "k=%flags:u8 l=%r15:u8",
		       &r, FDR_FETCH_MAX_RECORD);
	cr_expect_str_eq(got, "(0x1000) a=105 b=104 c=103 d=102 e=108 f=109 g=70 h=80 i=70 j=-1 "
			      "k=117 l=115");
	free(got);
}

/* Reads stop at the bytes the type needs: nothing past a readable page's end. */
Test(fetch, page_edges)
{
	long pg = sysconf(_SC_PAGESIZE);
	unsigned char *m = mmap(NULL, (size_t)pg * 2, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct fdr_probe_regs r;
	char *got;
	int mode;

	cr_assert(m != MAP_FAILED);
	cr_assert_eq(mprotect(m + pg, (size_t)pg, PROT_NONE), 0);
	memcpy(m + pg - 4, "abc", 4); /* a string ending on the page's last byte */
	memset(&r, 0, sizeof(r));
	r.gpr[FDR_REG_IP] = 0x1000;
	for (mode = FDR_FETCH_READ_VM; mode <= FDR_FETCH_READ_PIPE; mode++) {
		fdr_fetch_set_read_mode((enum fdr_fetch_read_mode)mode);
		r.gpr[FDR_REG_DI] = (uintptr_t)(m + pg - 4);
		got = run_text("p:g/e /bin/true:0x1149 s=+0(%di):string a=+3(%di):u8 b=+3(%di):u16 "
			       "c=+2(%di):u8[2] d=+2(%di):u8[3] e=+4(%di):u8",
			       &r, FDR_FETCH_MAX_RECORD);
		cr_expect_str_eq(got, "(0x1000) s=\"abc\" a=0 b=0 c={99,0} d={0,0,0} e=0");
		free(got);
		/* not terminated before the page ends: the whole string faults */
		memcpy(m + pg - 4, "abcd", 4);
		got = run_text("p:g/e /bin/true:0x1149 s=+0(%di):string", &r, FDR_FETCH_MAX_RECORD);
		cr_expect_str_eq(got, "(0x1000) s=(fault)");
		free(got);
		memcpy(m + pg - 4, "abc", 4);
	}
	fdr_fetch_set_read_mode(FDR_FETCH_READ_AUTO);
	munmap(m, (size_t)pg * 2);
}

Test(fetch, record_room)
{
	struct fdr_probe_regs r;
	unsigned char rec[64];
	struct fdr_abi_event ev;
	struct fdr_buf b = { 0 };
	size_t len;
	struct fdr_fetch_prog *p;
	int n;

	tfn_regs(&r, 0);
	p = compile("p:g/e /bin/true:0x1149 s=+0(%si):string t=+0(%si):string", &ev, &len);
	cr_assert_eq(p->fixed_size, 24);
	cr_expect_eq(fdr_fetch_run(p, &r, rec, 23), -ENOSPC);
	/* 4 bytes for strings: the first is cut to "hel", the second gets nothing */
	n = fdr_fetch_run(p, &r, rec, 28);
	cr_assert_eq(n, 28);
	cr_assert_eq(fdr_format_body(&ev, rec, (uint32_t)n, &b), 0);
	cr_expect_str_eq(b.data, "(0x55b452e29149) s=\"hel\" t=(fault)");
	fdr_buf_free(&b);
	free(p);
}

/* Every way a program from shared memory can be wrong is refused. */
static const char *const check_muts[] = {
	"magic",
	"version",
	"flags",
	"short",
	"size",
	"truncated",
	"nr_insns",
	"nr_args",
	"fixed_size small",
	"fixed_size big",
	"bad register",
	"deref first",
	"unknown op",
	"op 0",
	"size 3",
	"count 0",
	"count 65",
	"field in header",
	"field past",
	"bitfield wide",
	"bitfield offset only",
	"store without load",
	"two loads",
	"data outside",
	"string size",
	"stack index",
	"arg 0",
	"comm after load",
	"raw array",
};

static void check_mutate(struct fdr_fetch_prog *p, size_t *len, unsigned i)
{
	/* p: [0] REG di, [1] ST_RAW u32, [2] ST_DATA "abc", [3] REG si, [4] ST_STRING */
	switch (i) {
	case 0:
		p->magic ^= 1;
		break;
	case 1:
		p->version = 2;
		break;
	case 2:
		p->flags = 4;
		break;
	case 3:
		*len = sizeof(*p) - 1;
		break;
	case 4:
		p->size += 16;
		break;
	case 5:
		*len -= 1;
		break;
	case 6:
		p->nr_insns -= 1;
		break;
	case 7:
		p->nr_args += 1;
		break;
	case 8:
		p->fixed_size = 15;
		break;
	case 9:
		p->fixed_size = 4001;
		break;
	case 10:
		p->insns[0].imm = FDR_REG_NR;
		break;
	case 11:
		p->insns[0].op = FDR_FOP_DEREF;
		break;
	case 12:
		p->insns[1].op = FDR_FOP_NR;
		break;
	case 13:
		p->insns[1].op = 0;
		break;
	case 14:
		p->insns[1].size = 3;
		break;
	case 15:
		p->insns[1].count = 0;
		break;
	case 16:
		p->insns[1].count = 65;
		break;
	case 17:
		p->insns[1].field = 8;
		break;
	case 18:
		p->insns[1].field = p->fixed_size;
		break;
	case 19:
		p->insns[1].bf_width = 30;
		p->insns[1].bf_offset = 3;
		break;
	case 20:
		p->insns[1].bf_offset = 1;
		break;
	case 21:
		p->insns[0].op = FDR_FOP_ST_RAW;
		p->insns[0].size = 4;
		p->insns[0].count = 1;
		p->insns[0].field = 16;
		break;
	case 22:
		p->insns[1].op = FDR_FOP_REG;
		break;
	case 23:
		p->insns[2].imm = 1 << 16 | 3;
		break;
	case 24:
		p->insns[4].size = 8;
		break;
	case 25:
		p->insns[0].op = FDR_FOP_STACK;
		p->insns[0].imm = 1 << 21;
		break;
	case 26:
		p->insns[0].op = FDR_FOP_ARG;
		p->insns[0].imm = 0;
		break;
	case 27:
		p->insns[1].op = FDR_FOP_ST_COMM;
		break;
	default:
		p->insns[1].count = 2;
		break;
	}
}

Test(fetch, check_refuses)
{
	struct fdr_fetch_prog *good, *p;
	size_t len;
	unsigned i;
	const char *why;

	good = compile("p:g/e /bin/true:0x1149 a=%di:u32 b=\\\"abc\" c=+0(%si):string", NULL, &len);
	cr_assert_eq(good->nr_insns, 5);
	cr_assert_eq(good->insns[2].op, FDR_FOP_ST_DATA);
	cr_assert_eq(good->insns[4].op, FDR_FOP_ST_STRING);
	p = malloc(len + 64);
	cr_assert(p);
	for (i = 0; i < sizeof(check_muts) / sizeof(check_muts[0]); i++) {
		size_t l = len;

		memcpy(p, good, len);
		check_mutate(p, &l, i);
		why = NULL;
		cr_expect_eq(fdr_fetch_check(p, l, &why), -EINVAL, "%s accepted", check_muts[i]);
		cr_expect(why != NULL, "%s: no reason", check_muts[i]);
	}
	cr_expect_eq(fdr_fetch_check(good, len, &why), 0);
	free(p);
	free(good);
}

/* @p = a copy of @good (@len bytes) with @flips bits flipped, chosen by *@seed */
static void damage(struct fdr_fetch_prog *p, const struct fdr_fetch_prog *good, size_t len,
		   unsigned flips, unsigned *seed)
{
	unsigned k;

	memcpy(p, good, len);
	for (k = 0; k < flips; k++) {
		*seed = *seed * 1103515245 + 12345;
		((unsigned char *)p)[(*seed >> 8) % len] ^=
			(unsigned char)(1u << (*seed >> 28) % 8);
	}
}

/* Random damage: whatever fdr_fetch_check() accepts runs inside its record. */
Test(fetch, check_then_run_random)
{
	struct fdr_probe_regs r;
	struct fdr_fetch_prog *good, *p;
	unsigned char *rec = malloc(FDR_FETCH_MAX_RECORD);
	size_t len;
	unsigned i, seed = 1234;

	good = compile("p:g/e /bin/true:0x1149 a=%di:u32 b=\\\"abc\" c=+0(%si):string "
		       "d=+0(%dx):u8[4] e=+0(%cx):b4@1/32 f=$comm g=@+0x10:s16",
		       NULL, &len);
	p = malloc(len);
	tfn_regs(&r, 1);
	for (i = 0; i < 20000; i++) {
		damage(p, good, len, 1 + i % 4, &seed);
		if (fdr_fetch_check(p, len, NULL) == 0) {
			int n = fdr_fetch_run(p, &r, rec, FDR_FETCH_MAX_RECORD);

			cr_assert(n < 0 || (n >= p->fixed_size && n <= FDR_FETCH_MAX_RECORD));
		}
	}
	free(p);
	free(good);
	free(rec);
}

/*
 * The table form (fdr_fetch_fast_make(), fdr_fetch_fast_run()) writes what the
 * interpreter writes, byte for byte, and zeroes the padding up to a multiple
 * of 8; programs it cannot run are left to the interpreter.
 */
static void fast_vs_run(const struct fdr_fetch_prog *p, const struct fdr_probe_regs *r,
			const char *what)
{
	struct fdr_fetch_fast f;
	uint64_t a[FDR_FETCH_FAST_WORDS + 2], b[FDR_FETCH_FAST_WORDS + 2];
	int n, m;

	if (!fdr_fetch_fast_make(p, &f)) {
		cr_assert_eq(f.nr, 0, "%s", what);
		return;
	}
	cr_assert_gt(f.nr, 0, "%s", what);
	/* zero: bytes no field covers (a damaged program's gaps) are zero in the table form */
	memset(a, 0, sizeof(a));
	memset(b, 0x5a, sizeof(b));
	n = fdr_fetch_run(p, r, a, sizeof(a));
	m = fdr_fetch_fast_run(&f, r, b);
	cr_assert_eq(m, n, "%s: %d %d", what, m, n);
	cr_assert_arr_eq((unsigned char *)a + 8, (unsigned char *)b + 8, (size_t)n - 8, "%s", what);
	for (; m % 8; m++)
		cr_assert_eq(((unsigned char *)b)[m], 0, "%s: padding byte %d", what, m);
	cr_assert_eq(b[m / 8], 0x5a5a5a5a5a5a5a5aull, "%s: wrote past its words", what);
}

Test(fetch, fast_form)
{
	static const struct {
		const char *line;
		int fast;
	} rows[] = {
		{ "p:g/e /bin/true:0x1149 a=%di:u32", 1 },
		{ "p:g/e /bin/true:0x1149 a=%di:u32 b=%si:u32", 1 },
		{ "p:g/e /bin/true:0x1149 a=%ax:u8 b=%bx:s16 c=%cx:x32 d=%dx:u64", 1 },
		{ "p:g/e /bin/true:0x1149 %r8 %r9:s8 %r10:u16 %r11 %r12:x8 %r13 %r14 %r15", 1 },
		{ "p:g/e /bin/true:0x1149 a=$arg1 b=$arg2:u32 c=$arg3:s8 d=$arg4 e=$arg5 f=$arg6",
		  1 },
		{ "p:g/e /bin/true:0x1149 sp=$stack ip=%ip fl=%flags:x32 bp=%bp", 1 },
		{ "r:g/e /bin/true:0x1149 rv=$retval:u32", 1 },
		{ "r:g/e /bin/true:0x1149 rv=$retval a=%di:u8 b=%si:u8 c=%dx:u8", 1 },
		/* packed: a u64 after a u32 lies across two words */
		{ "p:g/e /bin/true:0x1149 a=%di:u32 b=%si:u64", 1 },
		{ "p:g/e /bin/true:0x1149 a=%di:u8 b=%si:u64 c=%dx:u16 d=%cx:s64 e=%r8:u8", 1 },
		{ "p:g/e /bin/true:0x1149 a=+0(%di):u32", 0 },
		{ "p:g/e /bin/true:0x1149 a=+0(%si):string", 0 },
		{ "p:g/e /bin/true:0x1149 a=$comm", 0 },
		{ "p:g/e /bin/true:0x1149 a=%di:b4@1/32", 0 },
		{ "p:g/e /bin/true:0x1149 a=$arg7", 0 },
		{ "p:g/e /bin/true:0x1149 a=\\1", 0 },
		{ "p:g/e /bin/true:0x1149 a=$stack0", 0 },
		{ "p:g/e /bin/true:0x1149 a=@+0x10:s16", 0 },
		{ "p:g/e /bin/true:0x1149 a=%di:u8 b=%si:u8 c=%dx:u8 d=%cx:u8 e=%r8:u8 f=%r9:u8 "
		  "g=%ax:u8 h=%bx:u8 i=%bp:u8",
		  0 }, /* 9 arguments: more than the table holds */
		{ "p:g/e /bin/true:0x1149", 0 },
	};
	struct fdr_probe_regs r;
	unsigned i, k, seed = 99;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		size_t len;
		struct fdr_fetch_prog *p = compile(rows[i].line, NULL, &len);
		struct fdr_fetch_fast f;

		cr_expect_eq(fdr_fetch_fast_make(p, &f), rows[i].fast, "%s", rows[i].line);
		for (k = 0; k < 50; k++) {
			unsigned j;

			for (j = 0; j < sizeof(r) / 8; j++) {
				seed = seed * 1103515245 + 12345;
				((uint64_t *)&r)[j] = (uint64_t)seed << 32 ^ seed * 2654435761u;
			}
			fast_vs_run(p, &r, rows[i].line);
		}
		free(p);
	}
}

/* Random damage: whatever the table form accepts, it runs as the interpreter does. */
Test(fetch, fast_form_random)
{
	struct fdr_probe_regs r;
	struct fdr_fetch_prog *good, *p;
	size_t len;
	unsigned i, seed = 4321, fast = 0;

	good = compile("p:g/e /bin/true:0x1149 a=%di:u32 b=%si:u32 c=%ax:s16 d=%r9:u8 "
		       "e=$arg3:x64 f=$stack",
		       NULL, &len);
	p = malloc(len);
	tfn_regs(&r, 1);
	for (i = 0; i < 20000; i++) {
		damage(p, good, len, 1 + i % 3, &seed);
		if (fdr_fetch_check(p, len, NULL) == 0) {
			struct fdr_fetch_fast f;

			fast += (unsigned)fdr_fetch_fast_make(p, &f);
			fast_vs_run(p, &r, "a damaged program");
		}
	}
	cr_expect_gt(fast, 100, "only %u damaged programs ran in the table form", fast);
	free(p);
	free(good);
}

/* ---- PATH:SYMBOL through the ELF symbol tables ----------------------------------------- */

/* The file offset of @sym in @path as nm and readelf see it: st_value through PT_LOAD. */
static uint64_t nm_offset(const char *path, const char *sym, uint64_t *vaddr)
{
	char cmd[512], line[512], name[256], type;
	unsigned long long v = 0, off, va, pa, fsz, msz;
	int found = 0;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "nm '%s'", path);
	f = popen(cmd, "r");
	cr_assert(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx %c %255s", &v, &type, name) == 3 && strcmp(name, sym) == 0) {
			found = 1;
			break;
		}
	pclose(f);
	cr_assert(found, "nm: no %s in %s", sym, path);
	*vaddr = v;
	snprintf(cmd, sizeof(cmd), "readelf -lW '%s'", path);
	f = popen(cmd, "r");
	cr_assert(f);
	found = 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, " LOAD %llx %llx %llx %llx %llx", &off, &va, &pa, &fsz, &msz) ==
			    5 &&
		    v >= va && v < va + fsz) {
			found = 1;
			break;
		}
	pclose(f);
	cr_assert(found, "readelf: %s's address 0x%llx in no LOAD segment", sym, v);
	return v - va + off;
}

static int resolve(const char *line, struct fdr_uprobe_cmd *c, struct fdr_uprobe_err *e)
{
	int ret = fdr_uprobe_parse(line, c, e);

	cr_assert_eq(ret, 0, "%s: %d %s", line, ret, e->msg);
	return fdr_uprobe_resolve(c, e);
}

static void check_elf(const char *path, int pie)
{
	static struct fdr_uprobe_cmd c;
	struct fdr_uprobe_err e;
	uint64_t want, vaddr;
	char line[512], buf[1024], rb[1024];

	want = nm_offset(path, "uprobe_target_fn", &vaddr);
	if (!pie)
		cr_expect_neq(want, vaddr, "non-PIE: the offset is not the address");
	snprintf(line, sizeof(line), "p:g/fn %s:uprobe_target_fn x=%%di:s64", path);
	cr_assert_eq(resolve(line, &c, &e), 0, "%s: %s", line, e.msg);
	cr_expect_eq(c.offset, want, "%s: 0x%" PRIx64 ", nm/readelf 0x%" PRIx64, path, c.offset,
		     want);
	/* read back as the kernel would show the offset it resolved to */
	fdr_uprobe_format(&c, buf, sizeof(buf));
	snprintf(rb, sizeof(rb), "p:g/fn %s:0x%016" PRIx64 " x=%%di:s64\n", path, want);
	cr_expect_str_eq(buf, rb);
	snprintf(line, sizeof(line), "p %s:uprobe_target_fn+4%%return", path);
	cr_assert_eq(resolve(line, &c, &e), 0, "%s: %s", line, e.msg);
	cr_expect_eq(c.offset, want + 4);
	cr_expect(c.is_return);
	snprintf(buf, sizeof(buf), "p_uprobe_0x%" PRIx64, want + 4);
	cr_expect_str_eq(c.event, buf);
	/* a static function: .symtab only */
	want = nm_offset(path, "uprobe_target_static", &vaddr);
	snprintf(line, sizeof(line), "p:g/st %s:uprobe_target_static", path);
	cr_assert_eq(resolve(line, &c, &e), 0, "%s: %s", line, e.msg);
	cr_expect_eq(c.offset, want);
	/* refused */
	snprintf(line, sizeof(line), "p:g/if %s:uprobe_target_ifunc", path);
	cr_expect_eq(resolve(line, &c, &e), -EOPNOTSUPP);
	cr_expect(strstr(e.msg, "IFUNC") != NULL, "%s", e.msg);
	snprintf(line, sizeof(line), "p:g/no %s:no_such_function", path);
	cr_expect_eq(resolve(line, &c, &e), -ENOENT);
	cr_expect_str_eq(e.msg, "Failed to find the given function symbol");
	cr_expect_eq(e.pos, 7);
	snprintf(line, sizeof(line), "p:g/big %s:uprobe_target_fn+0x100000", path);
	cr_expect_eq(resolve(line, &c, &e), -EINVAL);
	cr_expect_str_eq(e.msg, "Offset is beyond the function's size");
}

Test(elf, pie)
{
	check_elf(FDR_TEST_TARGET_PIE, 1);
}

Test(elf, nopie)
{
	check_elf(FDR_TEST_TARGET_NOPIE, 0);
}

Test(elf, not_elf)
{
	static struct fdr_uprobe_cmd c;
	struct fdr_uprobe_err e;
	char path[] = "/tmp/fdr-uprobe-XXXXXX", line[256];
	int fd = mkstemp(path);

	cr_assert(fd >= 0);
	cr_assert_eq(write(fd, "#!/bin/sh\nexit 0\n", 17), 17);
	close(fd);
	snprintf(line, sizeof(line), "p:g/x %s:main", path);
	cr_expect_eq(resolve(line, &c, &e), -EINVAL);
	cr_expect_str_eq(e.msg, "Not a 64-bit little-endian ELF file");
	unlink(path);
}

/* A hostile file: every truncation and damaged headers; never a crash or a read past. */
Test(elf, hostile)
{
	static struct fdr_uprobe_cmd c;
	struct fdr_uprobe_err e;
	char path[] = "/tmp/fdr-uprobe-XXXXXX", line[256];
	unsigned char *img;
	long size;
	unsigned seed = 99, i, k;
	FILE *f = fopen(FDR_TEST_TARGET_PIE, "rb");
	int fd = mkstemp(path);

	cr_assert(f && fd >= 0);
	fseek(f, 0, SEEK_END);
	size = ftell(f);
	rewind(f);
	img = malloc((size_t)size);
	cr_assert_eq(fread(img, 1, (size_t)size, f), (size_t)size);
	fclose(f);
	snprintf(line, sizeof(line), "p:g/x %s:uprobe_target_fn", path);
	for (i = 0; i < 600; i++) {
		unsigned char *d = malloc((size_t)size);
		long n = size;
		int ret;

		memcpy(d, img, (size_t)size);
		if (i < 200) {
			n = (long)((uint64_t)size * i / 200);
		} else {
			for (k = 0; k < 1 + i % 8; k++) {
				seed = seed * 1103515245 + 12345;
				/* mostly the headers: ELF header, program and section headers */
				d[(seed >> 4) % (k & 1 ? (unsigned)size : 128u)] ^=
					(unsigned char)(seed >> 24);
			}
			if (i % 3 == 0) { /* the section headers, where the tables are found */
				Elf64_Ehdr *eh = (Elf64_Ehdr *)d;

				seed = seed * 1103515245 + 12345;
				if (eh->e_shoff < (uint64_t)size - 64)
					d[eh->e_shoff +
					  (seed >> 8) % ((uint64_t)size - eh->e_shoff)] ^=
						(unsigned char)(seed >> 20);
			}
		}
		cr_assert_eq(ftruncate(fd, 0), 0);
		cr_assert_eq(pwrite(fd, d, (size_t)n, 0), n);
		fdr_uprobe_parse(line, &c, &e);
		ret = fdr_uprobe_resolve(&c, &e);
		cr_expect(ret == 0 || (ret < 0 && e.msg), "%d", ret);
		cr_expect(ret != 0 || c.offset < (uint64_t)n);
		free(d);
	}
	close(fd);
	unlink(path);
	free(img);
}

/* After fork() parent and child never read through the same pipe (pipe fallback). */
Test(fetch, pipe_after_fork)
{
	static const uint64_t a = 0x1111111111111111ull, b = 0x2222222222222222ull;
	uint64_t v;
	int i, bad = 0, status;
	pid_t pid;

	fdr_fetch_set_read_mode(FDR_FETCH_READ_PIPE);
	cr_assert_eq(fdr_fetch_read_mem(&v, (uintptr_t)&a, 8), 0); /* makes the pipe */
	pid = fork();
	cr_assert(pid >= 0);
	for (i = 0; i < 20000; i++) {
		const uint64_t *src = pid == 0 ? &b : &a;

		if (fdr_fetch_read_mem(&v, (uintptr_t)src, 8) || v != *src)
			bad++;
	}
	if (pid == 0)
		_exit(bad ? 1 : 0);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child read wrong bytes");
	cr_expect_eq(bad, 0, "the parent read %d wrong values", bad);
	fdr_fetch_set_read_mode(FDR_FETCH_READ_AUTO);
}

/* The registry check takes a probe event and refuses a damaged one. */
Test(uprobe, event_shm_check)
{
	static struct fdr_uprobe_cmd c;
	struct fdr_uprobe_err e;
	struct fdr_abi_event ev, bad;

	cr_assert_eq(fdr_uprobe_parse("p:g/e /bin/true:0x1149 a=+0(%di):u16[3] s=+0(%si):string",
				      &c, &e),
		     0);
	cr_assert_eq(fdr_uprobe_event(&c, &ev, &e), 0);
	ev.state = FDR_EVENT_READY;
	ev.id = 1000;
	cr_expect_eq(fdr_shm_check_event(&ev, 0), 0);
	bad = ev;
	bad.probe = 3;
	cr_expect_neq(fdr_shm_check_event(&bad, 0), 0);
	bad = ev;
	bad.fields[1].count = 4; /* 6 bytes are not 4 elements */
	cr_expect_neq(fdr_shm_check_event(&bad, 0), 0);
	bad = ev;
	bad.fields[1].count = 0;
	cr_expect_neq(fdr_shm_check_event(&bad, 0), 0);
}

/* A record shorter than its event says, or a string word pointing out: "<bad>". */
Test(uprobe, hostile_record_text)
{
	static struct fdr_uprobe_cmd c;
	struct fdr_uprobe_err e;
	struct fdr_abi_event ev;
	unsigned char rec[64] = { 0 };
	struct fdr_buf b = { 0 };
	uint32_t loc = 40u << 16 | 30; /* 40 bytes at 30: past a 40-byte record */

	cr_assert_eq(fdr_uprobe_parse("p:g/e /bin/true:0x1149 s=+0(%si):string a=+0(%di):u8[4]", &c,
				      &e),
		     0);
	cr_assert_eq(fdr_uprobe_event(&c, &ev, &e), 0);
	memcpy(rec + 16, &loc, 4);
	cr_assert_eq(fdr_format_body(&ev, rec, 40, &b), 0);
	cr_expect_str_eq(b.data, "(0x0) s=<bad> a={0,0,0,0}");
	b.len = 0;
	cr_assert_eq(fdr_format_body(&ev, rec, 22, &b), 0);
	cr_expect_str_eq(b.data, "(0x0) s=<bad> a=<bad>");
	fdr_buf_free(&b);
}
