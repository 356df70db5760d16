/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * uprobe-kernel-rows.h - uprobe_events definitions with what kernel 6.18 read
 * back and printed in their format files (written to its uprobe_events with >>
 * in a private group, fdrchk, and removed with -:). Shared by test-uprobe.c
 * (the parser alone) and test-uprobe-tree.c (through the control tree).
 */
#ifndef FDR_TEST_UPROBE_KERNEL_ROWS_H
#define FDR_TEST_UPROBE_KERNEL_ROWS_H

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
	{ "p:fdrchk/ /bin/true:0x1149", "p:fdrchk/p_true_0x1149 /bin/true:0x0000000000001149\n",
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

#endif
