// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test-filter.c - event filters (lib/common/filter*.c), table by table:
 *
 *   match       expressions on one record: every operator on every field kind,
 *               the pseudo-fields, precedence, quoting, white space
 *   errors      every message the compiler emits, with the kernel's position
 *               (the kernel's live examples first)
 *   text        the filter file's content: accepted text, the caret block
 *   short       the short-circuit: predicates that must NOT be evaluated
 *   random      random expressions against a reference evaluator: same answer,
 *               same predicates visited
 *   hostile     corrupted programs and records: never a crash, answer 1
 *   limits      predicates, nesting and pool at and past their limits
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <criterion/criterion.h>

#include "fdr-criterion.h"
#include "filter-test-event.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static struct fdr_abi_event ev, print_ev;
static struct fdr_filter_prog prog;
static unsigned char rec[1024];
static uint32_t rec_len;
static const struct fdr_filter_ctx ctx = { .cpu = 2, .comm = "worker" };

static void setup(void)
{
	ft_event(&ev);
	ft_print_event(&print_ev);
	rec_len = ft_payload(rec, &ft_defaults);
}

TestSuite(filter, .init = setup, .timeout = 60);

/* Compile @text for @e, which must succeed and validate; returns the match on @p. */
static int match(const struct fdr_abi_event *e, const char *text, const unsigned char *p,
		 uint32_t len, const struct fdr_filter_ctx *c)
{
	struct fdr_filter_error err = { -1, -1, 0 };
	int ret = fdr_filter_compile(e, text, &prog, &err);

	cr_assert_eq(ret, 0, "compile '%s': %d, %s at %d", text, ret, fdr_filter_strerror(err.code),
		     err.pos);
	cr_assert_eq(err.code, 0, "'%s': err.code set on success", text);
	cr_assert_eq(fdr_filter_validate(&prog), 0, "'%s': compiled program does not validate",
		     text);
	return fdr_filter_eval(&prog, p, len, c);
}

/* ---- match --------------------------------------------------------------------------- */

static const struct {
	const char *text;
	int want;
} match_cases[] = {
	/* integers: every operator, signed and unsigned, every width */
	{ "prev_pid == 42", 1 },
	{ "prev_pid != 42", 0 },
	{ "prev_pid < 43", 1 },
	{ "prev_pid < 42", 0 },
	{ "prev_pid <= 42", 1 },
	{ "prev_pid <= 41", 0 },
	{ "prev_pid > 41", 1 },
	{ "prev_pid > 42", 0 },
	{ "prev_pid >= 42", 1 },
	{ "prev_pid >= 43", 0 },
	{ "prev_pid & 2", 1 },
	{ "prev_pid & 1", 0 },
	{ "status >= 500", 0 },
	{ "status < 500", 1 },
	{ "prev_pid > -1", 1 },
	{ "prev_pid == 0x2a", 1 },
	{ "prev_pid == 0X2A", 1 },
	{ "prev_pid == 052", 1 },
	{ "prev_pid == -0x2a", 0 },
	{ "small == -5", 1 },
	{ "small < 0", 1 },
	{ "small > -6", 1 },
	{ "small == 0xfb", 1 }, /* a hex bit pattern of the s8 */
	{ "small & 0x80", 1 },
	{ "code == 404", 1 },
	{ "code == 0x194", 1 },
	{ "code == 0624", 1 },
	{ "code > 403", 1 },
	{ "code < 0", 0 },
	{ "flag == 1", 1 },
	{ "flag != 0", 1 },
	{ "mask & 0x8", 1 },
	{ "mask & 0x10", 0 },
	{ "big == 0xffffffffffffffff", 1 },
	{ "big == 18446744073709551615", 1 },
	{ "big > 0", 1 },
	{ "big > 18446744073709551614", 1 },
	{ "sbig == -1", 1 },
	{ "sbig < 0", 1 },
	{ "sbig == 0xffffffffffffffff", 1 },
	{ "sbig > -9223372036854775808", 1 },
	{ "s16f == -300", 1 },
	{ "s16f < -299", 1 },
	{ "s16f > -300", 0 },
	{ "u8f == 200", 1 },
	{ "u8f > 199", 1 },
	{ "u8f >= 0", 1 },
	{ "target_cpu == 3", 1 },
	/* the common header */
	{ "common_pid == 1234", 1 },
	{ "common_type == 1000", 1 },
	{ "common_flags == 1", 1 },
	{ "common_preempt_count == 2", 1 },
	{ "common_pid < 0", 0 },
	/* pseudo-fields: the writer's CPU (2) and thread name ("worker") */
	{ "CPU == 2", 1 },
	{ "cpu == 2", 1 },
	{ "common_cpu == 2", 1 },
	{ "CPU > 2", 0 },
	{ "CPU != 2", 0 },
	{ "CPU & 2", 1 },
	{ "CPU == -1", 0 },
	{ "COMM == \"worker\"", 1 },
	{ "comm == 'worker'", 1 },
	{ "comm ~ \"w*\"", 1 },
	{ "comm != \"bash\"", 1 },
	/* CPUS{} */
	{ "CPU & CPUS{2}", 1 },
	{ "CPU & CPUS{0-1,3}", 0 },
	{ "CPU & CPUS{0-3}", 1 },
	{ "CPU & CPUS{0-7:1/2}", 1 }, /* 0,2,4,6 */
	{ "CPU & CPUS{1-7:1/2}", 0 }, /* 1,3,5,7 */
	{ "CPU & CPUS{ 5 , 2 }", 1 },
	{ "CPU & CPUS{1023,2}", 1 },
	{ "CPU & CPUS{1 2}", 1 }, /* blanks separate regions too */
	{ "CPU & CPUS{all}", 1 },
	{ "CPU & CPUS{3-N}", 0 },
	{ "CPU & CPUS{0-7:0/2}", 0 }, /* an empty set */
	{ "CPU & CPUS{ }", 0 },
	{ "CPU != CPUS{ }", 1 },
	{ "CPU == CPUS{2}", 1 },
	{ "CPU != CPUS{2}", 0 },
	{ "CPU == CPUS{1,2}", 0 }, /* the kernel: one CPU never equals a set */
	{ "CPU != CPUS{1,2}", 1 },
	{ "target_cpu & CPUS{3,5}", 1 },
	{ "target_cpu & CPUS{4,5}", 0 },
	{ "target_cpu & CPUS{3}", 1 },
	{ "s16f & CPUS{1,2}", 0 }, /* -300 read as unsigned is no CPU */
	/* strings: == and != are exact, ~ is a glob */
	{ "prev_comm == \"bash\"", 1 },
	{ "prev_comm == 'bash'", 1 },
	{ "prev_comm != \"bash\"", 0 },
	{ "prev_comm == \"bas\"", 0 },
	{ "prev_comm == \"bash \"", 0 },
	{ "prev_comm == \"ba*\"", 0 },
	{ "prev_comm ~ \"ba*\"", 1 },
	{ "prev_comm ~ \"*sh\"", 1 },
	{ "prev_comm ~ \"*as*\"", 1 },
	{ "prev_comm ~ \"*x*\"", 0 },
	{ "prev_comm ~ \"b?sh\"", 1 },
	{ "prev_comm ~ \"[a-c]ash\"", 1 },
	{ "prev_comm ~ \"[!b]ash\"", 0 },
	{ "prev_comm ~ \"b*h\"", 1 },
	{ "prev_comm ~ \"b*x\"", 0 },
	{ "prev_comm ~ \"*\"", 1 },
	{ "prev_comm ~ \"**\"", 1 },
	{ "prev_comm ~ \"\"", 0 },
	{ "prev_comm ~ \"bash\"", 1 },
	{ "prev_comm ~ \"!bash\"", 0 }, /* no '!' quirk: a literal '!' */
	{ "prev_comm ~ \"b\\ash\"", 1 },
	{ "prev_comm == \"it's\"", 0 },
	{ "prev_comm == 'say \"hi\"'", 0 },
	{ "prev_comm == \"(a && b)\"", 0 },
	{ "path == \"/usr/bin/ls\"", 1 },
	{ "path ~ \"/usr/*\"", 1 },
	{ "path ~ \"*/ls\"", 1 },
	{ "path ~ \"*bin*\"", 1 },
	{ "path ~ \"/usr/*/ls\"", 1 },
	{ "path ~ \"/opt*\"", 0 },
	{ "path != \"/usr/bin/ls\"", 0 },
	{ "blob == \"ab\"", 1 },
	{ "blob ~ \"a*\"", 1 },
	/* && binds tighter than ||; ! and parentheses */
	{ "prev_pid == 42 && status == 200", 1 },
	{ "prev_pid == 42 && status == 201", 0 },
	{ "prev_pid == 1 || status == 200", 1 },
	{ "prev_pid == 1 || status == 201", 0 },
	{ "prev_pid == 1 || prev_pid == 2 && status == 200", 0 },
	{ "prev_pid == 42 || prev_pid == 2 && status == 0", 1 },
	{ "(prev_pid == 42 || prev_pid == 2) && status == 0", 0 },
	{ "(prev_pid == 1 || prev_pid == 42) && status == 200", 1 },
	{ "!prev_pid == 42", 0 },
	{ "!(prev_pid == 42)", 0 },
	{ "!!(prev_pid == 42)", 1 },
	{ "! ! ! prev_pid == 42", 0 },
	{ "!(prev_pid == 1 || status == 1)", 1 },
	{ "!(prev_pid == 42 && status == 1) && code == 404", 1 },
	{ "((((prev_pid == 42))))", 1 },
	{ "prev_pid==42&&status==200", 1 },
	{ "prev_pid==42||status==1", 1 },
	{ "\tprev_pid\t==\t42\n&&\nstatus == 200\n", 1 },
	{ "   prev_pid == 42   ", 1 },
	{ "prev_comm ~ \"*sh\" && (path ~ \"/opt/*\" || code >= 400) && !(CPU == 3)", 1 },
};

Test(filter, match_table)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(match_cases); i++) {
		int got = match(&ev, match_cases[i].text, rec, rec_len, &ctx);

		cr_expect_eq(got, match_cases[i].want, "'%s': got %d, want %d", match_cases[i].text,
			     got, match_cases[i].want);
	}
}

Test(filter, full_width_char_array)
{
	struct ft_vals v = ft_defaults;

	v.comm = "0123456789abcdef"; /* all 16 bytes, no NUL */
	rec_len = ft_payload(rec, &v);
	cr_expect_eq(match(&ev, "prev_comm == \"0123456789abcdef\"", rec, rec_len, &ctx), 1);
	cr_expect_eq(match(&ev, "prev_comm == \"0123456789abcdefg\"", rec, rec_len, &ctx), 0);
	cr_expect_eq(match(&ev, "prev_comm ~ \"*def\"", rec, rec_len, &ctx), 1);
	v.comm = "";
	rec_len = ft_payload(rec, &v);
	cr_expect_eq(match(&ev, "prev_comm == \"\"", rec, rec_len, &ctx), 1);
	cr_expect_eq(match(&ev, "prev_comm ~ \"*\"", rec, rec_len, &ctx), 1);
	cr_expect_eq(match(&ev, "prev_comm ~ \"?*\"", rec, rec_len, &ctx), 0);
}

Test(filter, print_event_tail_buffer)
{
	unsigned char p[64] = { 0 };
	uint64_t ip = 0x1234;
	uint32_t len = 16 + 14;

	memcpy(p + 8, &ip, 8);
	memcpy(p + 16, "hello marker\n", 14);
	cr_expect_eq(match(&print_ev, "buf ~ \"*marker*\"", p, len, &ctx), 1);
	cr_expect_eq(match(&print_ev, "buf == \"hello marker\n\"", p, len, &ctx), 1);
	cr_expect_eq(match(&print_ev, "buf ~ \"hello*\" && ip == 0x1234", p, len, &ctx), 1);
	cr_expect_eq(match(&print_ev, "ip > 0x1234", p, len, &ctx), 0);
	/* no NUL: the string runs to the record's end */
	cr_expect_eq(match(&print_ev, "buf == \"hello\"", p, 16 + 5, &ctx), 1);
	/* empty tail */
	cr_expect_eq(match(&print_ev, "buf == \"\"", p, 16, &ctx), 1);
}

Test(filter, event_fields_shadow_pseudo_fields)
{
	struct fdr_abi_event e;
	unsigned char p[40] = { 0 };
	uint32_t five = 5;

	memset(&e, 0, sizeof(e));
	ft_field(&e, "cpu", "u32", 8, 4, FDR_KIND_INT, 0);
	ft_field(&e, "comm", "char", 12, 16, FDR_KIND_CHARS, 0);
	memcpy(p + 8, &five, 4);
	memcpy(p + 12, "fieldcomm", 9);
	cr_expect_eq(match(&e, "cpu == 5", p, sizeof(p), &ctx), 1);
	cr_expect_eq(match(&e, "CPU == 2", p, sizeof(p), &ctx), 1);
	cr_expect_eq(match(&e, "comm == \"fieldcomm\"", p, sizeof(p), &ctx), 1);
	cr_expect_eq(match(&e, "COMM == \"worker\"", p, sizeof(p), &ctx), 1);
	cr_expect_eq(prog.flags, FDR_FILTER_F_COMM);
}

Test(filter, no_event_common_fields_only)
{
	struct fdr_filter_error err;

	cr_expect_eq(match(NULL, "common_pid == 1234 && CPU == 2", rec, rec_len, &ctx), 1);
	cr_expect_eq(prog.event_id, 0);
	cr_expect_eq(fdr_filter_compile(NULL, "prev_pid == 1", &prog, &err), -EINVAL);
	cr_expect_eq(err.code, FDR_FILTER_ERR_FIELD_NOT_FOUND);
}

Test(filter, header_and_flags)
{
	match(&ev, "status >= 500", rec, rec_len, &ctx);
	cr_expect_eq(prog.struct_size, FDR_FILTER_PROG_SIZE);
	cr_expect_eq(prog.magic, FDR_FILTER_MAGIC);
	cr_expect_eq(prog.version, FDR_FILTER_VERSION);
	cr_expect_eq(prog.nr_insns, 1);
	cr_expect_eq(prog.event_id, 1000);
	cr_expect_eq(prog.layout_hash, 0x1234);
	cr_expect_eq(prog.flags, 0);
	/* the event path may skip the context when flags say so */
	cr_expect_eq(fdr_filter_eval(&prog, rec, rec_len, NULL), 0);
	match(&ev, "CPU == 1 || comm == \"x\"", rec, rec_len, &ctx);
	cr_expect_eq(prog.flags, FDR_FILTER_F_CPU | FDR_FILTER_F_COMM);
	match(&ev, "CPU & CPUS{1,3}", rec, rec_len, &ctx);
	cr_expect_eq(prog.flags, FDR_FILTER_F_CPU);
}

/* ---- clear ------------------------------------------------------------------------------ */

Test(filter, zero_clears)
{
	static const char *const zeros[] = { "0", "0\n", "  0  ", "\t0\n" };
	struct fdr_filter_error err;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(zeros); i++) {
		memset(&prog, 0xab, sizeof(prog));
		cr_expect_eq(fdr_filter_compile(&ev, zeros[i], &prog, &err), FDR_FILTER_CLEAR,
			     "'%s' does not clear", zeros[i]);
		cr_expect_eq(fdr_filter_validate(&prog), 0);
		cr_expect_eq(prog.nr_insns, 0);
		cr_expect_eq(fdr_filter_eval(&prog, rec, rec_len, &ctx), 1);
	}
	/* "00" and "0 0" are not "0" */
	cr_expect_eq(fdr_filter_compile(&ev, "00", &prog, &err), -EINVAL);
	cr_expect_eq(fdr_filter_compile(&ev, "0 0", &prog, &err), -EINVAL);
}

/* ---- errors ----------------------------------------------------------------------------- */

#define E(x) FDR_FILTER_ERR_##x

static const struct {
	const char *text;
	int code;
	int pos;
} error_cases[] = {
	/* seen live on the reference kernel (docs/tracefs.md, Filters) */
	{ "prev_comm == bash", E(INVALID_VALUE), 14 },
	{ "prev_comm < \"a\"", E(ILLEGAL_FIELD_OP), 13 },
	{ "prev_pid == \"5\"", E(EXPECT_DIGIT), 13 },
	{ "(prev_pid == 1", E(TOO_MANY_OPEN), 0 },
	{ "prev_pid == 1)", E(TOO_MANY_CLOSE), 13 },
	{ "prev_pid = 1", E(INVALID_OP), 10 },
	{ "prev_pid < 1 > 2", E(TOO_MANY_PREDS), 13 },
	{ "nosuch == 1", E(FIELD_NOT_FOUND), 7 },
	/* operators */
	{ "prev_pid", E(INVALID_OP), 9 },
	{ "prev_pid =< 1", E(INVALID_OP), 10 },
	{ "prev_comm !~ \"a\"", E(INVALID_OP), 11 },
	{ "prev_pid .ustring == 1", E(INVALID_OP), 10 },
	/* parentheses and quotes: the kernel's calc_stack positions */
	{ "prev_pid == 1 && (status == 2", E(TOO_MANY_OPEN), 17 },
	{ "((prev_pid == 1) && (status == 2)", E(TOO_MANY_OPEN), 0 },
	{ "(prev_pid == 1))", E(TOO_MANY_CLOSE), 15 },
	{ ")(", E(TOO_MANY_CLOSE), 0 },
	{ "prev_comm == \"bash", E(MISSING_QUOTE), 13 },
	{ "prev_comm == 'bash\"", E(MISSING_QUOTE), 13 },
	{ "prev_comm == \"a\" || prev_comm == 'b", E(MISSING_QUOTE), 33 },
	/* a quote hides parentheses and operators */
	{ "prev_comm == \")\" && prev_pid == 1)", E(TOO_MANY_CLOSE), 33 },
	/* values */
	{ "prev_comm == 5", E(EXPECT_STRING), 14 },
	{ "comm == 5", E(EXPECT_STRING), 9 },
	{ "prev_pid ~ 5", E(ILLEGAL_FIELD_OP), 12 },
	{ "prev_pid ~ \"5\"", E(EXPECT_DIGIT), 12 },
	{ "CPU == \"5\"", E(EXPECT_DIGIT), 8 },
	{ "prev_comm & \"a\"", E(ILLEGAL_FIELD_OP), 13 },
	{ "prev_comm >= \"a\"", E(ILLEGAL_FIELD_OP), 14 },
	{ "prev_pid ==", E(INVALID_VALUE), 12 },
	{ "prev_pid == x", E(INVALID_VALUE), 13 },
	{ "prev_pid == +1", E(INVALID_VALUE), 13 },
	{ "prev_comm == `bash`", E(INVALID_VALUE), 14 },
	{ "odd == 1", E(ILLEGAL_FIELD_OP), 8 },
	/* integers: syntax and range */
	{ "prev_pid == 08", E(ILLEGAL_INTVAL), 13 },
	{ "prev_pid == 0x", E(ILLEGAL_INTVAL), 13 },
	{ "prev_pid == 1a", E(ILLEGAL_INTVAL), 13 },
	{ "prev_pid == -", E(ILLEGAL_INTVAL), 13 },
	{ "prev_pid == 2147483648", E(ILLEGAL_INTVAL), 13 },
	{ "prev_pid == -2147483649", E(ILLEGAL_INTVAL), 13 },
	{ "prev_pid == 0x100000000", E(ILLEGAL_INTVAL), 13 },
	{ "code == -1", E(ILLEGAL_INTVAL), 9 },
	{ "code == 65536", E(ILLEGAL_INTVAL), 9 },
	{ "small == 128", E(ILLEGAL_INTVAL), 10 },
	{ "small == -129", E(ILLEGAL_INTVAL), 10 },
	{ "small == 255", E(ILLEGAL_INTVAL), 10 },
	{ "small == 0x100", E(ILLEGAL_INTVAL), 10 },
	{ "u8f == 256", E(ILLEGAL_INTVAL), 8 },
	{ "flag == 256", E(ILLEGAL_INTVAL), 9 },
	{ "big == 18446744073709551616", E(ILLEGAL_INTVAL), 8 },
	{ "big == -1", E(ILLEGAL_INTVAL), 8 },
	{ "sbig == 9223372036854775808", E(ILLEGAL_INTVAL), 9 },
	{ "CPU == 2147483648", E(ILLEGAL_INTVAL), 8 },
	{ "prev_pid == 12345678901234567890123", E(ILLEGAL_INTVAL), 13 },
	{ "prev_pid == 123456789012345678901234", E(OPERAND_TOO_LONG), 37 },
	/* CPUS{} */
	{ "CPU & CPUS 1}", E(MISSING_BRACE_OPEN), 12 },
	{ "CPU & CPUS", E(MISSING_BRACE_OPEN), 12 }, /* 2 past the end, as the kernel */
	{ "CPU & CPUS{1", E(MISSING_BRACE_CLOSE), 13 },
	{ "CPU & CPUS{}", E(INVALID_CPULIST), 12 },
	{ "CPU & CPUS{x}", E(INVALID_CPULIST), 13 },
	{ "CPU & CPUS{1024}", E(INVALID_CPULIST), 16 },
	{ "CPU & CPUS{3-1}", E(INVALID_CPULIST), 15 },
	{ "CPU & CPUS{1-}", E(INVALID_CPULIST), 14 },
	{ "CPU & CPUS{0-7:3/2}", E(INVALID_CPULIST), 19 },
	{ "CPU & CPUS{0-7:1/0}", E(INVALID_CPULIST), 19 },
	{ "CPU & CPUS{1;2}", E(INVALID_CPULIST), 15 },
	{ "CPU & CPUS{0-7:1}", E(INVALID_CPULIST), 17 },
	{ "CPU & CPUS{alll}", E(INVALID_CPULIST), 16 },
	{ "CPU < CPUS{1}", E(ILLEGAL_FIELD_OP), 7 },
	{ "comm & CPUS{1}", E(ILLEGAL_FIELD_OP), 8 },
	{ "prev_comm == CPUS{1}", E(ILLEGAL_FIELD_OP), 14 },
	/* terms */
	{ "prev_pid == 1 & status == 2", E(TOO_MANY_PREDS), 14 },
	{ "prev_pid == 1 | status == 2", E(TOO_MANY_PREDS), 14 },
	{ "prev_pid == 1 status == 2", E(TOO_MANY_PREDS), 14 },
	{ "prev_pid == 1 (status == 2)", E(TOO_MANY_PREDS), 14 },
	{ "prev_pid == 1 !status == 2", E(TOO_MANY_PREDS), 14 },
	{ "prev_comm == \"a\"b", E(TOO_MANY_PREDS), 16 },
	{ "(prev_pid == 1) status == 2", E(TOO_MANY_PREDS), 16 },
	/* an operator with no operand (fdr: the kernel accepts a trailing one) */
	{ "prev_pid == 1 &&", E(INVALID_FILTER), 14 },
	{ "prev_pid == 1 ||", E(INVALID_FILTER), 14 },
	{ "prev_pid == 1 && !", E(INVALID_FILTER), 14 },
	{ "prev_pid == 1 && (", E(TOO_MANY_OPEN), 17 },
	{ "prev_pid == 1 || || status == 2", E(INVALID_FILTER), 17 },
	{ "&& prev_pid == 1", E(INVALID_FILTER), 0 },
	{ "(prev_pid == 1 && )", E(INVALID_FILTER), 18 },
	/* no field name where one belongs */
	{ "\"x\" == 1", E(FIELD_NOT_FOUND), 1 },
	{ "!= 1", E(FIELD_NOT_FOUND), 1 },
	{ "== 1", E(FIELD_NOT_FOUND), 1 },
	{ "prev_pid == 1 && nosuch == 2", E(FIELD_NOT_FOUND), 24 },
	{ "prev_pidx == 1", E(FIELD_NOT_FOUND), 10 },
	{ "nosuch", E(FIELD_NOT_FOUND), 7 },
	/* nothing but '!' */
	{ "!", E(NO_FILTER), 1 },
	{ "!!", E(NO_FILTER), 2 },
	{ "( ! )", E(INVALID_FILTER), 4 },
	/* fdr: control bytes outside strings, named with their offset */
	{ "prev_pid == 1 \x01", E(BAD_CHAR), 14 },
	{ "prev\x01pid == 1", E(BAD_CHAR), 4 },
	{ "prev_pid == 1 &&\x1b[2J", E(BAD_CHAR), 16 },
	{ "\x7f", E(BAD_CHAR), 0 },
	/* nothing at all: the kernel's "Error: (0)" */
	{ "", E(NONE), 0 },
	{ "   \n", E(NONE), 0 },
	{ "()", E(NONE), 0 },
	{ "(( ))", E(NONE), 0 },
};

Test(filter, error_table)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(error_cases); i++) {
		struct fdr_filter_error err = { -1, -1, 0 };
		int ret;

		memset(&prog, 0x5a, sizeof(prog));
		ret = fdr_filter_compile(&ev, error_cases[i].text, &prog, &err);
		cr_expect_eq(ret, -EINVAL, "'%s': returned %d", error_cases[i].text, ret);
		cr_expect(err.code == error_cases[i].code && err.pos == error_cases[i].pos,
			  "'%s': got \"%s\" at %d, want \"%s\" at %d", error_cases[i].text,
			  fdr_filter_strerror(err.code), err.pos,
			  fdr_filter_strerror(error_cases[i].code), error_cases[i].pos);
		/* a rejected filter leaves the output alone */
		cr_expect_eq(prog.magic, 0x5a5a5a5a, "'%s': output touched on error",
			     error_cases[i].text);
	}
}

Test(filter, every_message_is_the_kernels)
{
	/* the kernel's table, in its order (kernel/trace/trace_events_filter.c) */
	static const char *const kernel[] = {
		"No error",
		"Invalid operator",
		"Too many '('",
		"Too few '('",
		"Missing matching quote",
		"Missing '{'",
		"Missing '}'",
		"Operand too long",
		"Expecting string field",
		"Expecting numeric field",
		"Illegal operation for field type",
		"Field not found",
		"Illegal integer value",
		"Couldn't find or set field in one of a subsystem's events",
		"Too many terms in predicate expression",
		"Meaningless filter expression",
		"Invalid cpulist",
		"Only 'ip' field is supported for function trace",
		"Invalid value (did you forget quotes)?",
		"Function not found",
		"Error",
		"No filter found",
	};
	struct fdr_filter_error err = { 0, 0, 0 };
	size_t i;

	/* the kernel's codes and texts, then fdr's own */
	cr_assert_eq(ARRAY_SIZE(kernel), FDR_FILTER_ERR_BAD_CHAR);
	cr_assert_eq(FDR_FILTER_ERR_BAD_CHAR + 1, FDR_FILTER_ERR_NR);
	for (i = 0; i < ARRAY_SIZE(kernel); i++)
		cr_expect_str_eq(fdr_filter_strerror((int)i), kernel[i]);
	cr_expect_str_eq(fdr_filter_strerror(-1), "Unknown error");
	cr_expect_str_eq(fdr_filter_strerror(FDR_FILTER_ERR_NR), "Unknown error");
	cr_expect_str_eq(fdr_filter_error_message(&err), "Error");
	err.code = FDR_FILTER_ERR_FIELD_NOT_FOUND;
	cr_expect_str_eq(fdr_filter_error_message(&err), "Field not found");
}

/* a control byte says which and where; inside a string it is the string's */
Test(filter, control_byte)
{
	struct fdr_filter_error err = { -1, -1, 0 };
	char text[256];

	cr_assert_eq(fdr_filter_compile(&ev, "prev_pid == 1 \x01", &prog, &err), -EINVAL);
	cr_expect_eq(err.code, FDR_FILTER_ERR_BAD_CHAR);
	cr_expect_eq(err.ch, 1);
	cr_expect_str_eq(fdr_filter_error_message(&err),
			 "Unexpected character 0x01 (a control byte) at offset 14");
	cr_assert_gt(fdr_filter_format_error("prev_pid == 1 \x01", &err, text, sizeof(text)), 0);
	cr_expect(strstr(text,
			 "parse_error: Unexpected character 0x01 (a control byte) at offset 14"),
		  "filter file: %s", text);
	err = (struct fdr_filter_error){ -1, -1, 0 };
	cr_expect_eq(fdr_filter_compile(&ev, "prev_comm == \"a\x01\"", &prog, &err), 0,
		     "a control byte inside quotes: %s", fdr_filter_strerror(err.code));
}

Test(filter, long_operands)
{
	char text[400], pat[300];
	struct fdr_filter_error err;

	memset(pat, 'x', 255);
	pat[255] = 0;
	snprintf(text, sizeof(text), "prev_comm == \"%s\"", pat);
	cr_expect_eq(fdr_filter_compile(&ev, text, &prog, &err), 0, "255 bytes fit");
	pat[255] = 'x';
	pat[256] = 0;
	snprintf(text, sizeof(text), "prev_comm == \"%s\"", pat);
	cr_expect_eq(fdr_filter_compile(&ev, text, &prog, &err), -EINVAL);
	cr_expect_eq(err.code, FDR_FILTER_ERR_OPERAND_TOO_LONG);
	cr_expect_eq(err.pos, 13 + 257 + 1, "at the closing quote + 1, got %d", err.pos);
}

Test(filter, bad_arguments)
{
	struct fdr_filter_error err;

	cr_expect_eq(fdr_filter_compile(&ev, NULL, &prog, &err), -EINVAL);
	cr_expect_eq(err.code, 0);
	cr_expect_eq(fdr_filter_compile(&ev, "prev_pid == 1", NULL, &err), -EINVAL);
	cr_expect_eq(fdr_filter_compile(&ev, "prev_pid == 1", &prog, NULL), 0);
	cr_expect_eq(fdr_filter_compile(&ev, "nosuch == 1", &prog, NULL), -EINVAL);
	cr_expect_eq(fdr_filter_eval(NULL, rec, rec_len, &ctx), 1);
	cr_expect_eq(fdr_filter_validate(NULL), -EINVAL);
}

Test(filter, hostile_event_descriptor)
{
	struct fdr_abi_event e;
	struct fdr_filter_error err;

	/* unterminated names, too many fields, an unknown kind: read, never overrun */
	memset(&e, 'A', sizeof(e));
	e.nr_fields = 0xffffffffu;
	e.fields[3].kind = 99;
	cr_expect_eq(fdr_filter_compile(&e, "common_pid == 1", &prog, &err), 0);
	cr_expect_eq(fdr_filter_compile(&e, "AAAA == 1", &prog, &err), -EINVAL);
	memcpy(e.fields[3].name, "weird", 6);
	cr_expect_eq(fdr_filter_compile(&e, "weird == 1", &prog, &err), -EINVAL);
	cr_expect_eq(err.code, FDR_FILTER_ERR_ILLEGAL_FIELD_OP);
	/* a field name of exactly 32 bytes, no NUL */
	memset(e.fields[4].name, 'b', sizeof(e.fields[4].name));
	e.fields[4].kind = FDR_KIND_INT;
	e.fields[4].size = 4;
	e.fields[4].offset = 8;
	cr_expect_eq(fdr_filter_compile(&e, "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb == 1", &prog, &err),
		     0);
	cr_expect_eq(fdr_filter_compile(&e, "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb == 1", &prog, &err),
		     -EINVAL);
}

/* ---- the filter file's text ------------------------------------------------------------------- */

static const struct {
	const char *text;
	const char *want;
} text_cases[] = {
	{ "nosuch == 1", "nosuch == 1\n       ^\nparse_error: Field not found\n\n" },
	{ "prev_comm == bash\n",
	  "prev_comm == bash\n              ^\nparse_error: Invalid value (did you forget quotes)?\n\n" },
	{ "(prev_pid == 1", "(prev_pid == 1\n^\nparse_error: Too many '('\n\n" },
	/* the position is clamped to the text (here 7 -> 6) */
	{ "nosuch", "nosuch\n      ^\nparse_error: Field not found\n\n" },
	{ "", "\nError: (0)\n\n" },
	{ "()\n", "()\nError: (0)\n\n" },
};

Test(filter, format_error_text)
{
	char buf[512], small[8];
	size_t i;
	int n;

	for (i = 0; i < ARRAY_SIZE(text_cases); i++) {
		struct fdr_filter_error err;

		cr_assert_eq(fdr_filter_compile(&ev, text_cases[i].text, &prog, &err), -EINVAL);
		n = fdr_filter_format_error(text_cases[i].text, &err, buf, sizeof(buf));
		cr_expect_str_eq(buf, text_cases[i].want, "'%s'", text_cases[i].text);
		cr_expect_eq(n, (int)strlen(text_cases[i].want));
		/* truncates like snprintf */
		n = fdr_filter_format_error(text_cases[i].text, &err, small, sizeof(small));
		cr_expect_eq(n, (int)strlen(text_cases[i].want));
		cr_expect_eq(strncmp(small, text_cases[i].want, sizeof(small) - 1), 0);
		cr_expect_eq(strlen(small), strlen(text_cases[i].want) < sizeof(small) ?
						    strlen(text_cases[i].want) :
						    sizeof(small) - 1);
		cr_expect_eq(fdr_filter_format_error(text_cases[i].text, &err, NULL, 0),
			     (int)strlen(text_cases[i].want));
	}
	n = fdr_filter_format_text("  prev_pid == 1 \n", buf, sizeof(buf));
	cr_expect_str_eq(buf, "  prev_pid == 1\n");
	cr_expect_eq(n, 16);
	cr_expect_eq(fdr_filter_text_len("a \t\n"), 1);
	cr_expect_eq(fdr_filter_text_len(NULL), 0);
}

Test(filter, dump_lists_the_program)
{
	char buf[2048];
	int n;

	match(&ev, "status >= 500", rec, rec_len, &ctx);
	n = fdr_filter_dump(&prog, buf, sizeof(buf));
	cr_expect_gt(n, 0);
	cr_expect_not_null(strstr(buf, "0: s32@28 < 500 (0x1f4) ? discard : record"), "%s", buf);
	match(&ev, "prev_comm ~ \"b*h\" || CPU & CPUS{1,9}", rec, rec_len, &ctx);
	fdr_filter_dump(&prog, buf, sizeof(buf));
	cr_expect_not_null(strstr(buf, "chars@8[16] glob \"b*h\" ? record : 1"), "%s", buf);
	cr_expect_not_null(strstr(buf, "cpu in {0202} ? record : discard"), "%s", buf);
}

/* ---- the short-circuit ----------------------------------------------------------------- */

/* flt:abc: int fields a..h at 8, 12, ..., 36 */
static void abc_event(struct fdr_abi_event *e)
{
	static const char *const names[] = { "a", "b", "c", "d", "e", "f", "g", "h" };
	unsigned i;

	memset(e, 0, sizeof(*e));
	for (i = 0; i < 8; i++)
		ft_field(e, names[i], "int", (uint16_t)(8 + 4 * i), 4, FDR_KIND_INT, 1);
}

static void abc_record(unsigned char *p, const char *vals)
{
	int32_t v;
	unsigned i;

	memset(p, 0, 40);
	for (i = 0; i < 8; i++) {
		v = vals[i] - '0';
		memcpy(p + 8 + 4 * i, &v, 4);
	}
}

/*
 * The kernel's self-test idea (trace_events_filter_test.h): for each record,
 * the answer and the predicates that must stay unevaluated. Values are the
 * fields a..h, one digit each.
 */
static const struct {
	const char *text;
	const char *vals;
	int want;
	const char *not_visited;
} short_cases[] = {
	{ "a == 1 && b == 1", "00000000", 0, "b" },
	{ "a == 1 && b == 1", "11000000", 1, "" },
	{ "a == 1 || b == 1", "10000000", 1, "b" },
	{ "a == 1 || b == 1", "00000000", 0, "" },
	{ "a == 1 && b == 1 || c == 1", "00100000", 1, "b" },
	{ "a == 1 && b == 1 || c == 1", "11000000", 1, "c" },
	{ "a == 1 || b == 1 && c == 1", "10000000", 1, "bc" },
	{ "a == 1 || b == 1 && c == 1", "00000000", 0, "c" },
	{ "(a == 1 || b == 1) && c == 1", "00000000", 0, "c" },
	{ "(a == 1 || b == 1) && c == 1", "10100000", 1, "b" },
	{ "!(a == 1 && b == 1) || c == 1", "00000000", 1, "bc" },
	{ "!(a == 1 || b == 1) && c == 1", "10000000", 0, "bc" },
	{ "a == 1 && !(!b == 1 || (c == 1 && g == 1)) || d == 1 || e == 1 && !f == 1", "11000000",
	  1, "gdef" },
	{ "a == 1 && !(!b == 1 || (c == 1 && g == 1)) || d == 1 || e == 1 && !f == 1", "00001100",
	  0, "bcg" },
	{ "a == 1 && !(!b == 1 || (c == 1 && g == 1)) || d == 1 || e == 1 && !f == 1", "00010000",
	  1, "bcgef" },
	{ "(a == 1 || b == 1) && (c == 1 || d == 1) && (e == 1 || f == 1) && (g == 1 || h == 1)",
	  "10101010", 1, "bdfh" },
	{ "(a == 1 || b == 1) && (c == 1 || d == 1) && (e == 1 || f == 1) && (g == 1 || h == 1)",
	  "01010000", 0, "gh" },
	{ "a == 1 || b == 1 || c == 1 || d == 1 || e == 1 || f == 1 || g == 1 || h == 1",
	  "00000001", 1, "" },
	{ "a == 1 || b == 1 || c == 1 || d == 1 || e == 1 || f == 1 || g == 1 || h == 1",
	  "00010000", 1, "efgh" },
	{ "a == 1 && b == 1 && c == 1 && d == 1 && e == 1 && f == 1 && g == 1 && h == 1",
	  "11100000", 0, "efgh" },
	{ "((a == 1 && (b == 1 || c == 1)) || d == 1) && !(e == 1 && (f == 1 || g == 1)) || h == 1",
	  "10110000", 1, "dfgh" },
	{ "!!(a == 1) && !(!(b == 1))", "00000000", 0, "b" },
};

/* The letters of the predicates, in text order: a field is a letter before " ==". */
static int pred_letters(const char *text, char *out)
{
	int n = 0;
	const char *p;

	for (p = text; *p; p++)
		if (*p >= 'a' && *p <= 'h' && p[1] == ' ' && p[2] == '=')
			out[n++] = *p;
	out[n] = 0;
	return n;
}

Test(filter, short_circuit_table)
{
	struct fdr_abi_event e;
	unsigned char p[40];
	size_t i;

	abc_event(&e);
	for (i = 0; i < ARRAY_SIZE(short_cases); i++) {
		uint8_t visited[FDR_FILTER_MAX_INSNS] = { 0 };
		char letters[16];
		int n, k, got;

		abc_record(p, short_cases[i].vals);
		n = pred_letters(short_cases[i].text, letters);
		cr_assert_eq(match(&e, short_cases[i].text, p, sizeof(p), &ctx),
			     short_cases[i].want, "'%s' on %s", short_cases[i].text,
			     short_cases[i].vals);
		cr_assert_eq(prog.nr_insns, n);
		got = fdr_filter_eval_visited(&prog, p, sizeof(p), &ctx, visited);
		cr_expect_eq(got, short_cases[i].want);
		for (k = 0; k < n; k++) {
			int must_skip = strchr(short_cases[i].not_visited, letters[k]) != NULL;

			cr_expect_eq(visited[k], !must_skip, "'%s' on %s: %c %s",
				     short_cases[i].text, short_cases[i].vals, letters[k],
				     must_skip ? "evaluated but must not be" : "not evaluated");
		}
	}
}

/* A predicate that is never evaluated may name bytes past the record: no effect. */
Test(filter, skipped_predicate_reads_nothing)
{
	unsigned char p[rec_len];

	memcpy(p, rec, rec_len);
	/* sbig lies at 56..63; a record cut at 48 holds prev_pid but not sbig */
	cr_expect_eq(match(&ev, "prev_pid == 1 && sbig == -1", p, 48, &ctx), 0);
	cr_expect_eq(match(&ev, "prev_pid == 42 || sbig == -1", p, 48, &ctx), 1);
	/* when it is evaluated, the unreadable field records the event */
	cr_expect_eq(match(&ev, "prev_pid == 42 && sbig == 5", p, 48, &ctx), 1);
}

/* ---- random expressions against a reference evaluator ----------------------------------- */

struct rnode {
	int kind; /* 0 leaf, 1 &&, 2 || */
	int neg;
	int field, op, val, idx;
	struct rnode *l, *r;
};

static uint64_t rng_state;

static uint32_t rnd(uint32_t n)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (uint32_t)(rng_state % n);
}

static struct rnode *rgen(struct rnode *pool, int *used, int depth, int *leaves)
{
	struct rnode *n = &pool[(*used)++];

	memset(n, 0, sizeof(*n));
	n->neg = rnd(4) == 0;
	if (depth == 0 || *leaves >= 24 || rnd(3) == 0) {
		n->kind = 0;
		n->field = (int)rnd(8);
		n->op = (int)rnd(7);
		n->val = (int)rnd(4) - 1;
		(*leaves)++;
		return n;
	}
	n->kind = 1 + (int)rnd(2);
	n->l = rgen(pool, used, depth - 1, leaves);
	n->r = rgen(pool, used, depth - 1, leaves);
	return n;
}

static const char *const rops[] = { "==", "!=", "<", "<=", ">", ">=", "&" };

static void remit(struct rnode *n, char *out, size_t *len, int *idx, int parent)
{
	static const char *const sp[] = { "", " ", "  ", "\t" };
	int paren;

	if (n->neg)
		*len += (size_t)sprintf(out + *len, "!%s", sp[rnd(4)]);
	if (n->kind == 0) {
		paren = n->neg && rnd(2);
		n->idx = (*idx)++;
		*len += (size_t)sprintf(out + *len, "%s%c%s%s%s%d%s", paren ? "(" : "",
					'a' + n->field, sp[rnd(4)], rops[n->op], sp[rnd(4)], n->val,
					paren ? ")" : "");
		return;
	}
	/* parentheses where precedence or '!' needs them, and sometimes where not */
	paren = n->neg || (parent == 1 && n->kind == 2) || rnd(3) == 0;
	if (paren)
		*len += (size_t)sprintf(out + *len, "(%s", sp[rnd(4)]);
	remit(n->l, out, len, idx, n->kind);
	*len += (size_t)sprintf(out + *len, "%s%s%s", sp[rnd(4)], n->kind == 1 ? "&&" : "||",
				sp[1 + rnd(3)]);
	remit(n->r, out, len, idx, n->kind);
	if (paren)
		*len += (size_t)sprintf(out + *len, "%s)", sp[rnd(4)]);
}

static int rref(const struct rnode *n, const int32_t *f, uint8_t *visited)
{
	int r;

	if (n->kind == 0) {
		int32_t v = f[n->field], c = n->val;

		visited[n->idx] = 1;
		switch (n->op) {
		case 0:
			r = v == c;
			break;
		case 1:
			r = v != c;
			break;
		case 2:
			r = v < c;
			break;
		case 3:
			r = v <= c;
			break;
		case 4:
			r = v > c;
			break;
		case 5:
			r = v >= c;
			break;
		default:
			r = (v & c) != 0;
			break;
		}
	} else if (n->kind == 1) {
		r = rref(n->l, f, visited) && rref(n->r, f, visited);
	} else {
		r = rref(n->l, f, visited) || rref(n->r, f, visited);
	}
	return n->neg ? !r : r;
}

Test(filter, random_expressions_match_reference)
{
	static struct rnode pool[128];
	struct fdr_abi_event e;
	char text[4096];
	int iter;

	rng_state = 0x9e3779b97f4a7c15ull;
	abc_event(&e);
	for (iter = 0; iter < 3000; iter++) {
		int used = 0, leaves = 0, idx = 0, k, j;
		size_t len = 0;
		struct rnode *root = rgen(pool, &used, 6, &leaves);
		struct fdr_filter_error err;

		remit(root, text, &len, &idx, 0);
		cr_assert_eq(fdr_filter_compile(&e, text, &prog, &err), 0, "'%s': %s at %d", text,
			     fdr_filter_strerror(err.code), err.pos);
		cr_assert_eq(fdr_filter_validate(&prog), 0);
		cr_assert_eq(prog.nr_insns, idx);
		for (k = 0; k < 8; k++) {
			int32_t f[8];
			unsigned char p[40] = { 0 };
			uint8_t want_v[FDR_FILTER_MAX_INSNS] = { 0 },
				got_v[FDR_FILTER_MAX_INSNS] = { 0 };
			int want, got;

			for (j = 0; j < 8; j++) {
				f[j] = (int32_t)rnd(4) - 1;
				memcpy(p + 8 + 4 * j, &f[j], 4);
			}
			want = rref(root, f, want_v);
			got = fdr_filter_eval_visited(&prog, p, sizeof(p), &ctx, got_v);
			cr_assert_eq(got, want, "'%s': got %d want %d", text, got, want);
			cr_assert_eq(memcmp(got_v, want_v, sizeof(got_v)), 0,
				     "'%s': visited other predicates than C would", text);
			cr_assert_eq(fdr_filter_eval(&prog, p, sizeof(p), NULL), want);
		}
	}
}

/* ---- globs ------------------------------------------------------------------------------- */

static const struct {
	const char *pat, *s;
	int want;
} glob_cases[] = {
	{ "", "", 1 },		 { "", "a", 0 },	  { "*", "", 1 },
	{ "*", "abc", 1 },	 { "?", "", 0 },	  { "?", "a", 1 },
	{ "a", "a", 1 },	 { "a", "b", 0 },	  { "a*", "abc", 1 },
	{ "*c", "abc", 1 },	 { "a*c", "abc", 1 },	  { "a*c", "ac", 1 },
	{ "a*c", "ab", 0 },	 { "a*b*c", "aXbYc", 1 }, { "a*b*c", "aXcYb", 0 },
	{ "*a*a*a*", "aaa", 1 }, { "*a*a*a*", "aa", 0 },  { "*ab", "aab", 1 },
	{ "*aab", "aaab", 1 },	 { "[abc]", "b", 1 },	  { "[abc]", "d", 0 },
	{ "[!abc]", "b", 0 },	 { "[!abc]", "d", 1 },	  { "[a-c]x", "bx", 1 },
	{ "[a-c]x", "dx", 0 },	 { "[]]", "]", 1 },	  { "[]a]", "a", 1 },
	{ "[!]]", "]", 0 },	 { "[!]]", "x", 1 },	  { "[a-]", "-", 1 },
	{ "[", "[", 1 },	 { "[ab", "[ab", 1 },	  { "[a-", "[a-", 1 },
	{ "\\*", "*", 1 },	 { "\\*", "a", 0 },	  { "\\?x", "?x", 1 },
	{ "a\\", "a\\", 1 },	 { "?*?", "ab", 1 },	  { "?*?", "a", 0 },
	{ "*?", "", 0 },	 { "*[0-9]", "abc7", 1 }, { "*[0-9]*", "abc", 0 },
};

Test(filter, glob_table)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(glob_cases); i++) {
		int got = fdr_filter_glob_match(glob_cases[i].pat, strlen(glob_cases[i].pat),
						glob_cases[i].s, strlen(glob_cases[i].s));

		cr_expect_eq(got, glob_cases[i].want, "glob '%s' on '%s': got %d",
			     glob_cases[i].pat, glob_cases[i].s, got);
	}
}

/* The worst case is bounded: 255-byte pattern against a 64 KiB string. */
Test(filter, glob_worst_case_is_bounded)
{
	static char s[65535], pat[256];
	struct timespec t0, t1;
	double ms;
	int i;

	memset(s, 'a', sizeof(s));
	for (i = 0; i < 254; i += 2) {
		pat[i] = '*';
		pat[i + 1] = 'a';
	}
	pat[254] = 'b';
	clock_gettime(CLOCK_MONOTONIC, &t0);
	cr_expect_eq(fdr_filter_glob_match(pat, 255, s, sizeof(s)), 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
	cr_expect_lt(ms, 2000.0, "worst-case glob took %.1f ms", ms);
}

/* ---- hostile programs and records ---------------------------------------------------------- */

/* Compile @text, apply @mutate, expect validate to fail and eval to answer 1. */
static void expect_rejected(const char *text, void (*mutate)(struct fdr_filter_prog *),
			    const char *what)
{
	struct fdr_filter_error err;

	cr_assert_eq(fdr_filter_compile(&ev, text, &prog, &err), 0, "%s", text);
	mutate(&prog);
	cr_expect_neq(fdr_filter_validate(&prog), 0, "%s: validates", what);
	cr_expect_eq(fdr_filter_eval(&prog, rec, rec_len, &ctx), 1, "%s: not recorded", what);
}

static void m_magic(struct fdr_filter_prog *p)
{
	p->magic ^= 1;
}

static void m_version(struct fdr_filter_prog *p)
{
	p->version = 2;
}

static void m_size(struct fdr_filter_prog *p)
{
	p->struct_size = 4095;
}

static void m_nr_big(struct fdr_filter_prog *p)
{
	p->nr_insns = FDR_FILTER_MAX_INSNS + 1;
}

static void m_pool_big(struct fdr_filter_prog *p)
{
	p->pool_len = FDR_FILTER_POOL_SIZE + 1;
}

static void m_flags(struct fdr_filter_prog *p)
{
	p->flags |= 0x80;
}

static void m_reserved(struct fdr_filter_prog *p)
{
	p->reserved = 1;
}

static void m_jt_back(struct fdr_filter_prog *p)
{
	p->insns[0].jt = 0;
	p->insns[0].jf = 0;
}

static void m_jt_far(struct fdr_filter_prog *p)
{
	p->insns[0].jt = (uint8_t)(p->nr_insns + 2);
	p->insns[0].jf = (uint8_t)(p->nr_insns + 2);
}

static void m_loop(struct fdr_filter_prog *p)
{
	p->insns[1].jt = 0;
	p->insns[1].jf = 0;
}

static void m_op(struct fdr_filter_prog *p)
{
	p->insns[0].op = 99;
}

static void m_op0(struct fdr_filter_prog *p)
{
	p->insns[0].op = 0;
}

static void m_src(struct fdr_filter_prog *p)
{
	p->insns[0].src = 99;
}

static void m_src_kind(struct fdr_filter_prog *p)
{
	p->insns[0].src = FDR_FSRC_CHARS; /* a string source for a numeric op */
}

static void m_size_mismatch(struct fdr_filter_prog *p)
{
	p->insns[0].size = 8;
}

static void m_pool_range(struct fdr_filter_prog *p)
{
	p->insns[0].imm = (uint64_t)(p->pool_len) | 5ull << 16;
}

static void m_pool_high(struct fdr_filter_prog *p)
{
	p->insns[0].imm |= 1ull << 40;
}

static void m_pattern_long(struct fdr_filter_prog *p)
{
	p->pool_len = FDR_FILTER_POOL_SIZE;
	p->insns[0].imm = 300ull << 16;
}

static void m_mask_empty(struct fdr_filter_prog *p)
{
	p->insns[0].imm &= 0xffff;
}

static void m_mask_huge(struct fdr_filter_prog *p)
{
	p->pool_len = FDR_FILTER_POOL_SIZE;
	p->insns[0].imm = 200ull << 16;
}

static void m_cpu_flag(struct fdr_filter_prog *p)
{
	p->flags = 0;
}

static void m_comm_off(struct fdr_filter_prog *p)
{
	p->insns[0].off = 4;
}

Test(filter, hostile_programs_record)
{
	expect_rejected("status >= 500", m_magic, "magic");
	expect_rejected("status >= 500", m_version, "version");
	expect_rejected("status >= 500", m_size, "struct_size");
	expect_rejected("status >= 500", m_nr_big, "nr_insns");
	expect_rejected("status >= 500", m_pool_big, "pool_len");
	expect_rejected("status >= 500", m_flags, "unknown flag");
	expect_rejected("status >= 500", m_reserved, "reserved");
	expect_rejected("status >= 500", m_jt_back, "backward jump");
	expect_rejected("status >= 500", m_jt_far, "jump past the end");
	expect_rejected("status < 500 && prev_pid == 42", m_loop, "loop");
	expect_rejected("status >= 500", m_op, "unknown op");
	expect_rejected("status >= 500", m_op0, "op 0");
	expect_rejected("status >= 500", m_src, "unknown source");
	expect_rejected("status >= 500", m_src_kind, "string source, numeric op");
	expect_rejected("status >= 500", m_size_mismatch, "size");
	expect_rejected("prev_comm == \"bash\"", m_pool_range, "pattern past pool_len");
	expect_rejected("prev_comm == \"bash\"", m_pool_high, "pool reference high bits");
	expect_rejected("prev_comm == \"bash\"", m_pattern_long, "pattern too long");
	expect_rejected("CPU & CPUS{2,3}", m_mask_empty, "empty cpumask");
	expect_rejected("CPU & CPUS{2,3}", m_mask_huge, "cpumask too long");
	expect_rejected("CPU == 2", m_cpu_flag, "CPU without its flag");
	expect_rejected("comm == \"worker\"", m_cpu_flag, "COMM without its flag");
	expect_rejected("comm == \"worker\"", m_comm_off, "COMM with an offset");
}

Test(filter, hostile_records_record)
{
	unsigned char p[256];
	uint32_t loc;

	memcpy(p, rec, rec_len);
	/* the field lies past the record's end */
	cr_expect_eq(match(&ev, "status >= 500", p, 31, &ctx), 1);
	cr_expect_eq(match(&ev, "status >= 500", p, 32, &ctx), 0);
	cr_expect_eq(match(&ev, "prev_comm == \"x\"", p, 23, &ctx), 1);
	cr_expect_eq(match(&ev, "path == \"x\"", p, 35, &ctx), 1);
	cr_expect_eq(match(&print_ev, "buf == \"x\"", p, 15, &ctx), 1);
	/* __data_loc pointing outside the record */
	loc = 100u << 16 | 200;
	memcpy(p + 32, &loc, 4);
	cr_expect_eq(match(&ev, "path == \"x\"", p, rec_len, &ctx), 1);
	loc = 0xffffu << 16 | 80;
	memcpy(p + 32, &loc, 4);
	cr_expect_eq(match(&ev, "path == \"x\"", p, rec_len, &ctx), 1);
	/* __data_loc inside but without a NUL: bounded by its length */
	loc = 3u << 16 | 80;
	memcpy(p + 32, &loc, 4);
	cr_expect_eq(match(&ev, "path == \"/us\"", p, rec_len, &ctx), 1);
	/* no record at all */
	cr_expect_eq(match(&ev, "status >= 500", NULL, 100, &ctx), 1);
	/* no context for a program that needs it */
	cr_expect_eq(match(&ev, "CPU == 2", rec, rec_len, NULL), 1);
	cr_expect_eq(match(&ev, "comm == \"x\"", rec, rec_len, NULL), 1);
}

/* Random corruption of valid programs: never a crash, never a hang; checks agree. */
Test(filter, random_corruption_is_harmless)
{
	static const char *const texts[] = {
		"status >= 500",
		"prev_comm ~ \"b*h\" && (path ~ \"/usr/*\" || code >= 400) && !(CPU == 3)",
		"CPU & CPUS{1,3,5} || comm == \"worker\" || blob ~ \"[a-c]?\"",
		"a == 1 && b == 1 || c == 1 && d == 1 || e == 1 && f == 1 || g == 1 && h == 1",
	};
	struct fdr_abi_event abc;
	struct fdr_filter_prog good;
	unsigned char p[256];
	int iter, t;

	abc_event(&abc);
	rng_state = 12345;
	for (t = 0; t < (int)ARRAY_SIZE(texts); t++) {
		struct fdr_filter_error err;

		cr_assert_eq(fdr_filter_compile(t == 3 ? &abc : &ev, texts[t], &good, &err), 0);
		for (iter = 0; iter < 20000; iter++) {
			uint8_t visited[FDR_FILTER_MAX_INSNS] = { 0 };
			unsigned char *b = (unsigned char *)&prog;
			uint32_t span = FDR_FILTER_HDR_SIZE + 16u * good.nr_insns + good.pool_len;
			int flips = 1 + (int)rnd(4), k, r, valid;

			memcpy(&prog, &good, sizeof(prog));
			for (k = 0; k < flips; k++)
				b[rnd(span)] ^= (unsigned char)(1u << rnd(8));
			valid = fdr_filter_validate(&prog) == 0;
			memcpy(p, rec, rec_len);
			r = fdr_filter_eval_visited(&prog, p, rnd(2) ? rec_len : rnd(rec_len + 1),
						    &ctx, visited);
			cr_assert(r == 0 || r == 1);
			r = fdr_filter_eval(&prog, p, rec_len, rnd(2) ? &ctx : NULL);
			cr_assert(r == 0 || r == 1);
			/* the fast paths and the general loop agree */
			cr_assert_eq(fdr_filter_eval(&prog, p, rec_len, &ctx),
				     fdr_filter_eval_visited(&prog, p, rec_len, &ctx, NULL));
			if (!valid && prog.magic != FDR_FILTER_MAGIC)
				cr_assert_eq(r, 1);
		}
	}
}

/* Programs made of random bytes behind a good header. */
Test(filter, random_programs_are_harmless)
{
	unsigned char *b = (unsigned char *)&prog;
	int iter;
	size_t k;

	rng_state = 777;
	for (iter = 0; iter < 20000; iter++) {
		for (k = 0; k < sizeof(prog); k++)
			b[k] = (unsigned char)rnd(256);
		fdr_filter_init(&prog);
		prog.nr_insns = (uint16_t)rnd(FDR_FILTER_MAX_INSNS + 1);
		prog.pool_len = (uint16_t)rnd(FDR_FILTER_POOL_SIZE + 1);
		prog.flags = FDR_FILTER_F_ALL;
		for (k = 0; k < prog.nr_insns; k++) {
			/* make half of them plausible so that runs go deep */
			struct fdr_filter_insn *in = &prog.insns[k];

			for (size_t j = 0; j < sizeof(*in); j++)
				((unsigned char *)in)[j] = (unsigned char)rnd(256);
			if (rnd(2)) {
				in->op = (uint8_t)(1 + rnd(FDR_FOP_NR - 1));
				in->src = (uint8_t)(1 + rnd(FDR_FSRC_NR - 1));
				in->jt = (uint8_t)(k + 1 + rnd((uint32_t)(prog.nr_insns - k + 1)));
				in->jf = (uint8_t)(k + 1 + rnd((uint32_t)(prog.nr_insns - k + 1)));
				in->off = (uint16_t)rnd(128);
				in->imm &= 0xffffffffull;
			}
		}
		fdr_filter_validate(&prog);
		cr_assert_leq((unsigned)fdr_filter_eval(&prog, rec, rec_len, &ctx), 1u);
		cr_assert_eq(fdr_filter_eval(&prog, rec, rec_len, &ctx),
			     fdr_filter_eval_visited(&prog, rec, rec_len, &ctx, NULL));
	}
}

/* ---- limits ------------------------------------------------------------------------------- */

Test(filter, predicate_limit)
{
	static char text[8192];
	struct fdr_filter_error err;
	size_t len = 0;
	int i;

	for (i = 0; i < FDR_FILTER_MAX_INSNS; i++)
		len += (size_t)sprintf(text + len, "%sprev_pid == %d", i ? " || " : "", i);
	cr_expect_eq(fdr_filter_compile(&ev, text, &prog, &err), 0, "%d predicates fit",
		     FDR_FILTER_MAX_INSNS);
	cr_expect_eq(fdr_filter_validate(&prog), 0);
	cr_expect_eq(fdr_filter_eval(&prog, rec, rec_len, &ctx), 1); /* prev_pid == 42 */
	sprintf(text + len, " || status == 1");
	cr_expect_eq(fdr_filter_compile(&ev, text, &prog, &err), -EINVAL);
	cr_expect_eq(err.code, FDR_FILTER_ERR_TOO_MANY_PREDS);
	cr_expect_eq(err.pos, (int)len + 4);
}

Test(filter, nesting_limit)
{
	static char text[2048];
	struct fdr_filter_error err;
	int n = FDR_FILTER_MAX_DEPTH, i;
	size_t len = 0;

	for (i = 0; i < n; i++)
		text[len++] = i % 2 ? '(' : '!';
	len += (size_t)sprintf(text + len, "prev_pid == 42");
	for (i = 0; i < n / 2; i++)
		text[len++] = ')';
	text[len] = 0;
	cr_expect_eq(fdr_filter_compile(&ev, text, &prog, &err), 0, "%s at %d",
		     fdr_filter_strerror(err.code), err.pos);
	/* 128 '!': an even number */
	cr_expect_eq(fdr_filter_eval(&prog, rec, rec_len, &ctx), 1);
	len = 0;
	for (i = 0; i <= n; i++)
		text[len++] = '(';
	len += (size_t)sprintf(text + len, "prev_pid == 42");
	for (i = 0; i <= n; i++)
		text[len++] = ')';
	text[len] = 0;
	cr_expect_eq(fdr_filter_compile(&ev, text, &prog, &err), -EINVAL);
	cr_expect_eq(err.code, FDR_FILTER_ERR_TOO_MANY_OPEN);
	cr_expect_eq(err.pos, n);
}

Test(filter, pool_limit)
{
	static char text[8192];
	char pat[256];
	struct fdr_filter_error err;
	size_t len = 0, start = 0;
	int i;

	memset(pat, 'p', 255);
	pat[255] = 0;
	for (i = 0; i < 8; i++) {
		start = len + (i ? 4 : 0);
		len += (size_t)sprintf(text + len, "%sprev_comm == \"%s\"", i ? " || " : "", pat);
	}
	/* 7 * 255 fit in the pool, the 8th does not */
	cr_expect_eq(FDR_FILTER_POOL_SIZE / 255, 7);
	cr_expect_eq(fdr_filter_compile(&ev, text, &prog, &err), -EINVAL);
	cr_expect_eq(err.code, FDR_FILTER_ERR_TOO_MANY_PREDS);
	cr_expect_eq(err.pos, (int)start);
}

Test(filter, program_size)
{
	cr_expect_eq(sizeof(struct fdr_filter_prog), 4096);
	cr_expect_eq(sizeof(struct fdr_filter_insn), 16);
	cr_expect_eq(FDR_FILTER_POOL_SIZE, 2016);
}
