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
#include <sys/mman.h>
#include <sys/prctl.h>
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
	{ "p:fdrchk/e1 /bin/true:0x1149 a=%di a=%si", -22, "This argument name is already used", 35 },
	{ "p:fdrchk/e1 /bin/true:0x1149 1a=%di", -22, "Argument name must follow the same rules as C identifiers", 29 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a=%di:string", -22, "String accepts only memory argument", 35 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a=%di:u8[2]", -22, "String accepts only memory argument", 35 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a=+0(%di):u8[65]", -22, "Array number is too big", 42 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a=+0(%di):u8[0]", -22, "Invalid array size", 42 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a=+0(%di):u8[2", -22, "Array is not closed", 43 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a=+0(%di):u8[2]x", -22, "Array has wrong suffix", 44 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a=+0(%di", -22, "Dereference brace is not closed", 37 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a=+0%di", -22, "Dereference needs a brace", 31 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a=+z(%di)", -22, "Invalid dereference offset", 31 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a=+0($comm)", -22, "$comm can not be dereferenced", 34 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a=$comm:u32", -22, "$comm and immediate-string only accepts string type", 37 },
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
	{ "p:fdrchk/e1 /bin/true:0x1149 abcd=+0(+0(%si)):u8[99]", -22, "Array number is too big", 49 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a=+0(%di):b65@0/64", -22, "Invalid bitfield", 42 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a=+0(%di):b1@3/8x", -22, "Unknown type is specified", 39 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a=", -22, "No argument expression", 31 },
	{ "p:fdrchk/e1 /bin/true:0x1149 =%di", -22, "Argument name is not specified", 29 },
	{ "p:fdrchk/e1 /bin/true:0x1149 aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa=%di", -22, "Argument name is too long", 29 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a=+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(%di))))))))))))))))", -7, "Argument expression is too long", 31 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a=+0(%di):symbol", -22, "Unknown type is specified", 39 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a=+0(%di):%pd", -22, "Unknown type is specified", 39 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a=+0(%di):symstr", -22, "Unknown type is specified", 39 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a=\\\"abc", -22, "String is not closed with '\"'", 36 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a=common_pid", -22, "BTF is not available or not supported", 31 },
	{ "p:fdrchk/e1 /bin/true:0x1149 __probe_ip=%di", -22, "This argument name is already used", 29 },
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
	{ "p:1fdrchk/e1 /bin/true:0x1149", -22, "Group name must follow the same rules as C identifiers", 2 },
	{ "p:fdrchk/1e /bin/true:0x1149", -22, "Event name must follow the same rules as C identifiers", 9 },
	{ "p:fdrchk/e-1 /bin/true:0x1149", -22, "Event name must follow the same rules as C identifiers", 9 },
	{ "p:fdrchk/e.1 /bin/true:0x1149", -22, "Event name must follow the same rules as C identifiers", 9 },
	{ "p:fdr.chk/e1 /bin/true:0x1149", -22, "Group name must follow the same rules as C identifiers", 2 },
	{ "p:fdrchk/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa /bin/true:0x1149", -22, "Event name is too long", 9 },
	{ "p:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa/e1 /bin/true:0x1149", -22, "Group name is too long", 2 },
	{ "p:fdrchk/e1 /tmp:0x1149", -22, "Not a regular file", 12 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a=$arg0", -22, "Invalid argument number", 31 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a=\\0x", -22, "Invalid immediate value", 32 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a=%di:x64:u8", -22, "Unknown type is specified", 35 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a=%di:", -22, "Unknown type is specified", 35 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a=%di b", -22, "BTF is not available or not supported", 35 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a=+0x(%di)", -22, "Invalid dereference offset", 31 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a=@-1", -22, "Symbol is not available with uprobe", 31 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a=@+", -22, "Invalid file offset value", 31 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a=\\\"abc\":u8", -22, "$comm and immediate-string only accepts string type", 38 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a=$comm:string[2]", -22, "$comm and immediate-string only accepts string type", 37 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a=$comm:s8", -22, "$comm and immediate-string only accepts string type", 37 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a=+0(%di):string:x", -22, "Unknown type is specified", 39 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a=$stack:string", -22, "String accepts only memory argument", 38 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a=+0(%di):u8[]", -22, "Invalid array size", 42 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a=+0(%di):[2]", -22, "Unknown type is specified", 39 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a=+18446744073709551615(%di)", -34, "Invalid dereference offset", 31 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a=\\18446744073709551616", -34, "Invalid immediate value", 32 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a=%di=%si", -22, "Invalid register name", 31 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a==%si", -22, "Invalid fetch argument", 31 },
	{ "p:fdrchk/e1 /bin/true:0x1149 arg2=%si %di", -22, "This argument name is already used", 38 },
	{ "p:fdrchk/e1 /bin/true:0x1149 %di arg1=%si", -22, "This argument name is already used", 33 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a=$retval:s64", -22, "$retval is not available on probe", 31 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a=+0($retval)", -22, "$retval is not available on probe", 34 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a=+0(\\\"s\")", -22, "$comm can not be dereferenced", 34 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a=+0(%di):U8", -22, "Unknown type is specified", 39 },
	{ "p:fdrchk/e1 /bin/true:0x1149 a=+0(%di) b=+1(%dx", -22, "Dereference brace is not closed", 47 },
	{ "r:fdrchk/e1 /bin/true:0x1149 a=$arg1", -22, "$arg* can be used only on function entry or exit", 31 },
	{ "p:fdrchk/o6 /bin/true:0x1149 a=+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(%di))))))))))))))) b=+0(%di):b64@0/64 c=+0(%di):b1@0x3/0x8 d=@0x1000:string e=\\0x1000:string", -22, "Dereference is too much nested", 34 },
};

/* fdr's own: the kernel gives a bare EINVAL (no error_log entry) or differs */
static const struct err_row fdr_errors[] = {
	{ "q:fdrchk/e1 /bin/true:0x1149", -22, "Unknown probe command (expected 'p', 'r' or '-:')", 0 },
	{ "p:fdrchk/e1 /bin/true", -22, "Probe place must be PATH:OFFSET or PATH:SYMBOL[+OFFS]", 12 },
	{ "p:fdrchk/e1 /bin/true:", -22, "Probe place must be PATH:OFFSET or PATH:SYMBOL[+OFFS]", 12 },
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

struct ok_row {
	const char *line, *readback, *format;
};

/* live kernel: read-back and the format file from __probe_ip on */
static const struct ok_row kernel_ok[] = {
	{ "p:fdrchk/tfn /bin/true:0x1149 x=%di:s64 s=+0(%si):string sh=%dx:x16 a=%cx:s32 b=%di:u64 bf=+0(%cx):b4@1/32 ar=+0(%dx):u8[4] c=+0(%si):char",
	  "p:fdrchk/tfn /bin/true:0x0000000000001149 x=%di:s64 s=+0(%si):string sh=%dx:x16 a=%cx:s32 b=%di:u64 bf=+0(%cx):b4@1/32 ar=+0(%dx):u8[4] c=+0(%si):char\n",
	  "\tfield:unsigned long __probe_ip;\toffset:8;\tsize:8;\tsigned:0;\n\tfield:s64 x;\toffset:16;\tsize:8;\tsigned:1;\n\tfield:__data_loc char[] s;\toffset:24;\tsize:4;\tsigned:1;\n\tfield:u16 sh;\toffset:28;\tsize:2;\tsigned:0;\n\tfield:s32 a;\toffset:30;\tsize:4;\tsigned:1;\n\tfield:u64 b;\toffset:34;\tsize:8;\tsigned:0;\n\tfield:u32 bf;\toffset:42;\tsize:4;\tsigned:0;\n\tfield:u8 ar[];\toffset:46;\tsize:4;\tsigned:0;\n\tfield:u8 c;\toffset:50;\tsize:1;\tsigned:0;\n\nprint fmt: \"(%lx) x=%Ld s=\\\"%s\\\" sh=0x%x a=%d b=%Lu bf=%u ar={%u,%u,%u,%u} c='%c'\", REC->__probe_ip, REC->x, __get_str(s), REC->sh, REC->a, REC->b, REC->bf, REC->ar[0], REC->ar[1], REC->ar[2], REC->ar[3], REC->c\n" },
	{ "r:fdrchk/tfn_ret /bin/true:0x1149 rv=$retval:s64",
	  "r:fdrchk/tfn_ret /bin/true:0x0000000000001149 rv=$retval:s64\n",
	  "\tfield:unsigned long __probe_func;\toffset:8;\tsize:8;\tsigned:0;\n\tfield:unsigned long __probe_ret_ip;\toffset:16;\tsize:8;\tsigned:0;\n\tfield:s64 rv;\toffset:24;\tsize:8;\tsigned:1;\n\nprint fmt: \"(%lx <- %lx) rv=%Ld\", REC->__probe_func, REC->__probe_ret_ip, REC->rv\n" },
	{ "p:fdrchk/t2 /bin/true:0x1149 %di +0(%si) $stack $stack3 $comm \\1234 @0x1000 @+0x2000",
	  "p:fdrchk/t2 /bin/true:0x0000000000001149 arg1=%di arg2=+0(%si) arg3=$stack arg4=$stack3 arg5=$comm arg6=\\1234 arg7=@0x1000 arg8=@+0x2000\n",
	  "\tfield:unsigned long __probe_ip;\toffset:8;\tsize:8;\tsigned:0;\n\tfield:u64 arg1;\toffset:16;\tsize:8;\tsigned:0;\n\tfield:u64 arg2;\toffset:24;\tsize:8;\tsigned:0;\n\tfield:u64 arg3;\toffset:32;\tsize:8;\tsigned:0;\n\tfield:u64 arg4;\toffset:40;\tsize:8;\tsigned:0;\n\tfield:__data_loc char[] arg5;\toffset:48;\tsize:4;\tsigned:1;\n\tfield:u64 arg6;\toffset:52;\tsize:8;\tsigned:0;\n\tfield:u64 arg7;\toffset:60;\tsize:8;\tsigned:0;\n\tfield:u64 arg8;\toffset:68;\tsize:8;\tsigned:0;\n\nprint fmt: \"(%lx) arg1=0x%Lx arg2=0x%Lx arg3=0x%Lx arg4=0x%Lx arg5=\\\"%s\\\" arg6=0x%Lx arg7=0x%Lx arg8=0x%Lx\", REC->__probe_ip, REC->arg1, REC->arg2, REC->arg3, REC->arg4, __get_str(arg5), REC->arg6, REC->arg7, REC->arg8\n" },
	{ "p:fdrchk/o1 /bin/true:0x1149 a=+u0(%di) b=-u8(%di) c=\\-5 d=\\+5 e=\\0x10:s8 f=$COMM g=@+-4 h=@+0x10:s16",
	  "p:fdrchk/o1 /bin/true:0x0000000000001149 a=+u0(%di) b=-u8(%di) c=\\-5 d=\\+5 e=\\0x10:s8 f=$COMM g=@+-4 h=@+0x10:s16\n",
	  "\tfield:unsigned long __probe_ip;\toffset:8;\tsize:8;\tsigned:0;\n\tfield:u64 a;\toffset:16;\tsize:8;\tsigned:0;\n\tfield:u64 b;\toffset:24;\tsize:8;\tsigned:0;\n\tfield:u64 c;\toffset:32;\tsize:8;\tsigned:0;\n\tfield:u64 d;\toffset:40;\tsize:8;\tsigned:0;\n\tfield:s8 e;\toffset:48;\tsize:1;\tsigned:1;\n\tfield:__data_loc char[] f;\toffset:49;\tsize:4;\tsigned:1;\n\tfield:u64 g;\toffset:53;\tsize:8;\tsigned:0;\n\tfield:s16 h;\toffset:61;\tsize:2;\tsigned:1;\n\nprint fmt: \"(%lx) a=0x%Lx b=0x%Lx c=0x%Lx d=0x%Lx e=%d f=\\\"%s\\\" g=0x%Lx h=%d\", REC->__probe_ip, REC->a, REC->b, REC->c, REC->d, REC->e, __get_str(f), REC->g, REC->h\n" },
	{ "p:fdrchk/o2 /bin/true:4425%return a=$retval b=$stack c=$comm",
	  "r:fdrchk/o2 /bin/true:0x0000000000001149 a=$retval b=$stack c=$comm\n",
	  "\tfield:unsigned long __probe_func;\toffset:8;\tsize:8;\tsigned:0;\n\tfield:unsigned long __probe_ret_ip;\toffset:16;\tsize:8;\tsigned:0;\n\tfield:u64 a;\toffset:24;\tsize:8;\tsigned:0;\n\tfield:u64 b;\toffset:32;\tsize:8;\tsigned:0;\n\tfield:__data_loc char[] c;\toffset:40;\tsize:4;\tsigned:1;\n\nprint fmt: \"(%lx <- %lx) a=0x%Lx b=0x%Lx c=\\\"%s\\\"\", REC->__probe_func, REC->__probe_ret_ip, REC->a, REC->b, __get_str(c)\n" },
	{ "p:fdrchk/o3 /bin/true:0x1149 a=+0(%di):x8[3] b=+0(%di):s16[2] c=+0(%di):char[3] d=+0(%di):b3@2/8[2] f=\\\"abc\" g=+0(%di):ustring h=+0(+8(%di)):u8",
	  "p:fdrchk/o3 /bin/true:0x0000000000001149 a=+0(%di):x8[3] b=+0(%di):s16[2] c=+0(%di):char[3] d=+0(%di):b3@2/8[2] f=\\\"abc\" g=+0(%di):ustring h=+0(+8(%di)):u8\n",
	  "\tfield:unsigned long __probe_ip;\toffset:8;\tsize:8;\tsigned:0;\n\tfield:u8 a[];\toffset:16;\tsize:3;\tsigned:0;\n\tfield:s16 b[];\toffset:19;\tsize:4;\tsigned:1;\n\tfield:u8 c[];\toffset:23;\tsize:3;\tsigned:0;\n\tfield:u8 d[];\toffset:26;\tsize:2;\tsigned:0;\n\tfield:__data_loc char[] f;\toffset:28;\tsize:4;\tsigned:1;\n\tfield:__data_loc char[] g;\toffset:32;\tsize:4;\tsigned:1;\n\tfield:u8 h;\toffset:36;\tsize:1;\tsigned:0;\n\nprint fmt: \"(%lx) a={0x%x,0x%x,0x%x} b={%d,%d} c={'%c','%c','%c'} d={%u,%u} f=\\\"%s\\\" g=\\\"%s\\\" h=%u\", REC->__probe_ip, REC->a[0], REC->a[1], REC->a[2], REC->b[0], REC->b[1], REC->c[0], REC->c[1], REC->c[2], REC->d[0], REC->d[1], __get_str(f), __get_str(g), REC->h\n" },
	{ "p:fdrchk/o4 /bin/true:0x1149 %di:u32 x=%si %dx:b4@1/32 $stack3:s64 +0x10(%sp) -0x10(%bp):x16 @0x1000:u8 $stack99999",
	  "p:fdrchk/o4 /bin/true:0x0000000000001149 arg1=%di:u32 x=%si arg3=%dx:b4@1/32 arg4=$stack3:s64 arg5=+0x10(%sp) arg6=-0x10(%bp):x16 arg7=@0x1000:u8 arg8=$stack99999\n",
	  "\tfield:unsigned long __probe_ip;\toffset:8;\tsize:8;\tsigned:0;\n\tfield:u32 arg1;\toffset:16;\tsize:4;\tsigned:0;\n\tfield:u64 x;\toffset:20;\tsize:8;\tsigned:0;\n\tfield:u32 arg3;\toffset:28;\tsize:4;\tsigned:0;\n\tfield:s64 arg4;\toffset:32;\tsize:8;\tsigned:1;\n\tfield:u64 arg5;\toffset:40;\tsize:8;\tsigned:0;\n\tfield:u16 arg6;\toffset:48;\tsize:2;\tsigned:0;\n\tfield:u8 arg7;\toffset:50;\tsize:1;\tsigned:0;\n\tfield:u64 arg8;\toffset:51;\tsize:8;\tsigned:0;\n\nprint fmt: \"(%lx) arg1=%u x=0x%Lx arg3=%u arg4=%Ld arg5=0x%Lx arg6=0x%x arg7=%u arg8=0x%Lx\", REC->__probe_ip, REC->arg1, REC->x, REC->arg3, REC->arg4, REC->arg5, REC->arg6, REC->arg7, REC->arg8\n" },
	{ "p:fdrchk/o5 /bin/true:0x1149 a=%bx b=%cx c=%dx d=%si e=%di f=%bp g=%r8 h=%r9 i=%r10 j=%r11 k=%r12 l=%r13 m=%r14 n=%r15 o=%ax p=%sp q=%ip r=%flags s=%cs t=%ss u=%orig_ax",
	  "p:fdrchk/o5 /bin/true:0x0000000000001149 a=%bx b=%cx c=%dx d=%si e=%di f=%bp g=%r8 h=%r9 i=%r10 j=%r11 k=%r12 l=%r13 m=%r14 n=%r15 o=%ax p=%sp q=%ip r=%flags s=%cs t=%ss u=%orig_ax\n",
	  "\tfield:unsigned long __probe_ip;\toffset:8;\tsize:8;\tsigned:0;\n\tfield:u64 a;\toffset:16;\tsize:8;\tsigned:0;\n\tfield:u64 b;\toffset:24;\tsize:8;\tsigned:0;\n\tfield:u64 c;\toffset:32;\tsize:8;\tsigned:0;\n\tfield:u64 d;\toffset:40;\tsize:8;\tsigned:0;\n\tfield:u64 e;\toffset:48;\tsize:8;\tsigned:0;\n\tfield:u64 f;\toffset:56;\tsize:8;\tsigned:0;\n\tfield:u64 g;\toffset:64;\tsize:8;\tsigned:0;\n\tfield:u64 h;\toffset:72;\tsize:8;\tsigned:0;\n\tfield:u64 i;\toffset:80;\tsize:8;\tsigned:0;\n\tfield:u64 j;\toffset:88;\tsize:8;\tsigned:0;\n\tfield:u64 k;\toffset:96;\tsize:8;\tsigned:0;\n\tfield:u64 l;\toffset:104;\tsize:8;\tsigned:0;\n\tfield:u64 m;\toffset:112;\tsize:8;\tsigned:0;\n\tfield:u64 n;\toffset:120;\tsize:8;\tsigned:0;\n\tfield:u64 o;\toffset:128;\tsize:8;\tsigned:0;\n\tfield:u64 p;\toffset:136;\tsize:8;\tsigned:0;\n\tfield:u64 q;\toffset:144;\tsize:8;\tsigned:0;\n\tfield:u64 r;\toffset:152;\tsize:8;\tsigned:0;\n\tfield:u64 s;\toffset:160;\tsize:8;\tsigned:0;\n\tfield:u64 t;\toffset:168;\tsize:8;\tsigned:0;\n\tfield:u64 u;\toffset:176;\tsize:8;\tsigned:0;\n\nprint fmt: \"(%lx) a=0x%Lx b=0x%Lx c=0x%Lx d=0x%Lx e=0x%Lx f=0x%Lx g=0x%Lx h=0x%Lx i=0x%Lx j=0x%Lx k=0x%Lx l=0x%Lx m=0x%Lx n=0x%Lx o=0x%Lx p=0x%Lx q=0x%Lx r=0x%Lx s=0x%Lx t=0x%Lx u=0x%Lx\", REC->__probe_ip, REC->a, REC->b, REC->c, REC->d, REC->e, REC->f, REC->g, REC->h, REC->i, REC->j, REC->k, REC->l, REC->m, REC->n, REC->o, REC->p, REC->q, REC->r, REC->s, REC->t, REC->u\n" },
	{ "p:fdrchk/o7 /bin/true:0x1149 a=\\\"ab\"c\" b=+0(\\123) c=+0(@+0x10) d=+0($stack) e=-0(%di) f=+-8(%di) g=+0(%di):u8[0x3]",
	  "p:fdrchk/o7 /bin/true:0x0000000000001149 a=\\\"ab\"c\" b=+0(\\123) c=+0(@+0x10) d=+0($stack) e=-0(%di) f=+-8(%di) g=+0(%di):u8[0x3]\n",
	  "\tfield:unsigned long __probe_ip;\toffset:8;\tsize:8;\tsigned:0;\n\tfield:__data_loc char[] a;\toffset:16;\tsize:4;\tsigned:1;\n\tfield:u64 b;\toffset:20;\tsize:8;\tsigned:0;\n\tfield:u64 c;\toffset:28;\tsize:8;\tsigned:0;\n\tfield:u64 d;\toffset:36;\tsize:8;\tsigned:0;\n\tfield:u64 e;\toffset:44;\tsize:8;\tsigned:0;\n\tfield:u64 f;\toffset:52;\tsize:8;\tsigned:0;\n\tfield:u8 g[];\toffset:60;\tsize:3;\tsigned:0;\n\nprint fmt: \"(%lx) a=\\\"%s\\\" b=0x%Lx c=0x%Lx d=0x%Lx e=0x%Lx f=0x%Lx g={%u,%u,%u}\", REC->__probe_ip, __get_str(a), REC->b, REC->c, REC->d, REC->e, REC->f, REC->g[0], REC->g[1], REC->g[2]\n" },
	{ "p:fdrchk.o8 /bin/true:0x1149 aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa=%di",
	  "p:fdrchk/o8 /bin/true:0x0000000000001149 aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa=%di\n",
	  "\tfield:unsigned long __probe_ip;\toffset:8;\tsize:8;\tsigned:0;\n\tfield:u64 aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa;\toffset:16;\tsize:8;\tsigned:0;\n\nprint fmt: \"(%lx) aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa=0x%Lx\", REC->__probe_ip, REC->aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n" },
	{ "p:fdrchk/ /bin/true:0x1149",
	  "p:fdrchk/p_true_0x1149 /bin/true:0x0000000000001149\n",
	  "\tfield:unsigned long __probe_ip;\toffset:8;\tsize:8;\tsigned:0;\n\nprint fmt: \"(%lx)\", REC->__probe_ip\n" },
	{ "p:fdrchk/o9 /bin/true:1149 %di %si %di",
	  "p:fdrchk/o9 /bin/true:0x000000000000047d arg1=%di arg2=%si arg3=%di\n",
	  "\tfield:unsigned long __probe_ip;\toffset:8;\tsize:8;\tsigned:0;\n\tfield:u64 arg1;\toffset:16;\tsize:8;\tsigned:0;\n\tfield:u64 arg2;\toffset:24;\tsize:8;\tsigned:0;\n\tfield:u64 arg3;\toffset:32;\tsize:8;\tsigned:0;\n\nprint fmt: \"(%lx) arg1=0x%Lx arg2=0x%Lx arg3=0x%Lx\", REC->__probe_ip, REC->arg1, REC->arg2, REC->arg3\n" },
	{ "p:fdrchk/o10 /bin/true:0x100000000 a=$comm:string",
	  "p:fdrchk/o10 /bin/true:0x0000000100000000 a=$comm:string\n",
	  "\tfield:unsigned long __probe_ip;\toffset:8;\tsize:8;\tsigned:0;\n\tfield:__data_loc char[] a;\toffset:16;\tsize:4;\tsigned:1;\n\nprint fmt: \"(%lx) a=\\\"%s\\\"\", REC->__probe_ip, __get_str(a)\n" },
	{ "p:fdrchk/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa /bin/true:0x1149",
	  "p:fdrchk/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa /bin/true:0x0000000000001149\n",
	  "\tfield:unsigned long __probe_ip;\toffset:8;\tsize:8;\tsigned:0;\n\nprint fmt: \"(%lx)\", REC->__probe_ip\n" },
	{ "p:fdrchk/o11 /bin/true:0x1149(0x10) a=%di",
	  "p:fdrchk/o11 /bin/true:0x0000000000001149(0x10) a=%di\n",
	  "\tfield:unsigned long __probe_ip;\toffset:8;\tsize:8;\tsigned:0;\n\tfield:u64 a;\toffset:16;\tsize:8;\tsigned:0;\n\nprint fmt: \"(%lx) a=0x%Lx\", REC->__probe_ip, REC->a\n" },
};

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
		cr_expect(strcmp(tail, r->format) == 0, "%s:\n%s\nwant\n%s", r->line, tail, r->format);
		free(tail);
		cr_expect_eq(fdr_uprobe_compile(&c, prog, sizeof(prog), &len), 0, "%s", r->line);
		cr_expect_eq(fdr_fetch_check(prog, len, NULL), 0, "%s", r->line);
	}
}

Test(uprobe, command_and_comments)
{
	static struct fdr_uprobe_cmd c;
	static const char *const empty[] = { "", "   ", "\n", "# all comment", "  \t# x", "#p:a/b x:1" };
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
	cr_assert_eq(fdr_uprobe_parse("  p:fdrchk/c   /bin/true:0x1149   x=%di  # trailing", &c, &e),
		     0);
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
	cr_assert_eq(fdr_uprobe_parse("p:fdrchk/a /bin/true:0x1149 a=$arg1 b=$arg7:s32", &c, &e), 0);
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
