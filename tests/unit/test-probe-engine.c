// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test-probe-engine.c - libfdr-probe's breakpoint engine (lib/probe).
 *
 * Criterion runs every test in a process of its own, so each starts with the
 * signal state of a fresh program. The targets are hand-written functions with
 * known first instructions (probe-targets.S). For each kind of displaced
 * instruction (copied, RIP-relative, jmp/jcc/call emulated, indirect call) a
 * probe is armed, the function called many times: every result must be right,
 * the handler must count every call and see the arguments; disarming must put
 * the original bytes back exactly. CTest runs the binary three times: with the
 * default patch path, with FDR_PROBE_PATCH=mremap, and with FDR_PROBE_XOL_ALL=1
 * (branches run out of line through fdr_reloc_emit(), the code issue 16's
 * trampolines reuse, instead of being emulated).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "fdr-criterion.h"
#include "engine.h"
#include "reloc.h"

#include "probe-targets.h"

struct hits {
	atomic_ulong n;
	atomic_ulong sum_rdi, sum_rsi;
	uint64_t last_rdi, last_rsi, last_rip, last_sp, last_probe_addr;
};

static void count_hit(const struct fdr_probe_regs *r, void *arg)
{
	struct hits *h = arg;

	atomic_fetch_add(&h->n, 1);
	atomic_fetch_add(&h->sum_rdi, r->gpr[FDR_REG_DI]);
	atomic_fetch_add(&h->sum_rsi, r->gpr[FDR_REG_SI]);
	h->last_rdi = r->gpr[FDR_REG_DI];
	h->last_rsi = r->gpr[FDR_REG_SI];
	h->last_rip = r->gpr[FDR_REG_IP];
	h->last_sp = r->gpr[FDR_REG_SP];
	h->last_probe_addr = r->probe_addr;
}

/* The patch path the environment asks for must be the one used. */
static void check_method(void)
{
	const char *e = getenv("FDR_PROBE_PATCH");

	if (e && !strcmp(e, "mremap"))
		cr_assert_eq(fdr_probe_patch_method_used(), FDR_PROBE_PATCH_MREMAP);
	else
		cr_assert_eq(fdr_probe_patch_method_used(), FDR_PROBE_PATCH_MEM,
			     "/proc/self/mem is writable here, so it is the path used");
}

TestSuite(probe, .timeout = 120);

/* ---- the decoder: boundaries and relocation classes ---- */

Test(probe, check_boundaries)
{
	char why[256];
	struct fdr_probe_site *s;
	struct hits h = { 0 };

	/* pt_add: mov %rdi,%rax (3) ; add %rsi,%rax (3) ; ret (1) */
	cr_assert_eq(fdr_probe_check(A(pt_add), 7, A(pt_add), why, sizeof(why)), 0, "%s", why);
	cr_assert_eq(fdr_probe_check(A(pt_add), 7, A(pt_add) + 3, why, sizeof(why)), 0, "%s", why);
	cr_assert_eq(fdr_probe_check(A(pt_add), 7, A(pt_add) + 6, why, sizeof(why)), 0, "%s", why);
	cr_assert_eq(fdr_probe_check(A(pt_add), 7, A(pt_add) + 1, why, sizeof(why)), -EILSEQ);
	{
		char want[64];

		snprintf(want, sizeof(want), "'mov' at 0x%lx (length 3)", (unsigned long)A(pt_add));
		cr_assert(strstr(why, want), "message names the instruction: %s", why);
		cr_assert(strstr(why, "byte 1 of"), "%s", why);
	}
	cr_assert_eq(fdr_probe_check(A(pt_add), 7, A(pt_add) + 5, why, sizeof(why)), -EILSEQ);
	cr_assert(strstr(why, "'add'"), "%s", why);
	cr_assert_eq(fdr_probe_check(A(pt_add), 7, A(pt_add) + 7, why, sizeof(why)), -EINVAL);
	cr_assert_eq(fdr_probe_check(A(pt_add), 7, A(pt_add) - 1, why, sizeof(why)), -EINVAL);
	cr_assert_eq(fdr_probe_check(A(pt_add), SIZE_MAX, A(pt_add) + 3, why, sizeof(why)), -EINVAL,
		     "a hostile symbol size is refused, not allocated");
	cr_assert(strstr(why, "bytes long"), "%s", why);
	/* mov pt_global(%rip),%eax is 6 bytes */
	cr_assert_eq(fdr_probe_check(A(pt_riprel), 7, A(pt_riprel) + 2, why, sizeof(why)), -EILSEQ);
	/* int3 cannot be displaced */
	cr_assert_eq(fdr_probe_check(A(pt_own_int3), 7, A(pt_own_int3), why, sizeof(why)),
		     -ENOTSUP);
	cr_assert(strstr(why, "int3"), "%s", why);
	/* with pt_push's first byte an int3, its later boundaries are still found */
	cr_assert_eq(fdr_probe_arm(A(pt_push), count_hit, &h, &s), 0);
	cr_assert_eq(*(volatile uint8_t *)A(pt_push), 0xcc);
	cr_assert_eq(fdr_probe_check(A(pt_push), 10, A(pt_push_pop), why, sizeof(why)), 0, "%s",
		     why);
	cr_assert_eq(fdr_probe_check(A(pt_push), 10, A(pt_push_pop) - 1, why, sizeof(why)),
		     -EILSEQ);
	cr_assert_eq(fdr_probe_disarm(s), 0);
	/*
	 * The same where the int3 changes what follows: pt_riprel's 6-byte mov read
	 * from the int3 on is 'int3 ; add $imm32,%eax'. The check reads the original
	 * byte back and names the mov.
	 */
	cr_assert_eq(fdr_probe_arm(A(pt_riprel), count_hit, &h, &s), 0);
	cr_assert_eq(fdr_probe_check(A(pt_riprel), 7, A(pt_riprel) + 2, why, sizeof(why)), -EILSEQ);
	{
		char want[64];

		snprintf(want, sizeof(want), "'mov' at 0x%lx (length 6)",
			 (unsigned long)A(pt_riprel));
		cr_assert(strstr(why, want), "the original instruction is decoded: %s", why);
	}
	cr_assert_eq(fdr_probe_disarm(s), 0);
}

struct reloc_case {
	const char *name;
	const char *bytes;
	size_t len;
	int ret; /* from fdr_reloc_decode */
	int kind; /* when ret == 0 */
	int insn_len; /* when ret == 0 */
	int disp_off; /* when ret == 0 */
	int64_t target; /* relative to the instruction, for branches */
};

static const struct reloc_case reloc_cases[] = {
	{ "mov %rdi,%rax", "\x48\x89\xf8", 3, 0, FDR_RELOC_COPY, 3, -1, 0 },
	{ "mov 0(%rip),%eax", "\x8b\x05\x10\x00\x00\x00", 6, 0, FDR_RELOC_COPY, 6, 2, 0 },
	{ "lea 0(%rip),%rax", "\x48\x8d\x05\x00\x01\x00\x00", 7, 0, FDR_RELOC_COPY, 7, 3, 0 },
	{ "vmovdqa 0(%rip),%ymm0", "\xc5\xfd\x6f\x05\x00\x00\x00\x00", 8, 0, FDR_RELOC_COPY, 8, 4,
	  0 },
	{ "cmpl $1,0(%rip) (disp then imm)", "\x83\x3d\x00\x00\x00\x00\x01", 7, 0, FDR_RELOC_COPY,
	  7, 2, 0 },
	{ "nopw 0(%rax,%rax) (prefix)", "\x66\x0f\x1f\x44\x00\x00", 6, 0, FDR_RELOC_COPY, 6, -1,
	  0 },
	{ "rep movsq", "\xf3\x48\xa5", 3, 0, FDR_RELOC_COPY, 3, -1, 0 },
	{ "push %rbx", "\x53", 1, 0, FDR_RELOC_COPY, 1, -1, 0 },
	{ "ret", "\xc3", 1, 0, FDR_RELOC_COPY, 1, -1, 0 },
	{ "jmp *%rax", "\xff\xe0", 2, 0, FDR_RELOC_COPY, 2, -1, 0 },
	{ "jmp rel8", "\xeb\x05", 2, 0, FDR_RELOC_JMP, 2, -1, 7 },
	{ "jmp rel32", "\xe9\x00\x01\x00\x00", 5, 0, FDR_RELOC_JMP, 5, -1, 0x105 },
	{ "jl rel8 back", "\x7c\xfe", 2, 0, FDR_RELOC_JCC, 2, -1, 0 },
	{ "je rel32", "\x0f\x84\x10\x00\x00\x00", 6, 0, FDR_RELOC_JCC, 6, -1, 0x16 },
	{ "call rel32", "\xe8\xfb\xff\xff\xff", 5, 0, FDR_RELOC_CALL, 5, -1, 0 },
	{ "call *%rdi", "\xff\xd7", 2, 0, FDR_RELOC_CALL_IND, 2, -1, 0 },
	{ "call *0(%rip)", "\xff\x15\x00\x00\x00\x00", 6, 0, FDR_RELOC_CALL_IND, 6, 2, 0 },
	{ "call *8(%rsp)", "\xff\x54\x24\x08", 4, -ENOTSUP, 0, 0, 0, 0 },
	{ "int3", "\xcc", 1, -ENOTSUP, 0, 0, 0, 0 },
	{ "int $0x80", "\xcd\x80", 2, -ENOTSUP, 0, 0, 0, 0 },
	{ "loop", "\xe2\xfe", 2, -ENOTSUP, 0, 0, 0, 0 },
	{ "jrcxz", "\xe3\x00", 2, -ENOTSUP, 0, 0, 0, 0 },
	{ "xbegin", "\xc7\xf8\x00\x00\x00\x00", 6, -ENOTSUP, 0, 0, 0, 0 },
	{ "lcall *(%rax)", "\xff\x18", 2, -ENOTSUP, 0, 0, 0, 0 },
	{ "truncated mov", "\x48\x89", 2, -EILSEQ, 0, 0, 0, 0 },
	{ "eip-relative (0x67)", "\x67\x8b\x05\x00\x00\x00\x00", 7, -ENOTSUP, 0, 0, 0, 0 },
};

Test(probe, reloc_decode_table)
{
	const uintptr_t at = 0x400000;
	size_t i;

	for (i = 0; i < sizeof(reloc_cases) / sizeof(reloc_cases[0]); i++) {
		const struct reloc_case *c = &reloc_cases[i];
		struct fdr_reloc_insn in;
		char why[160];
		int ret = fdr_reloc_decode(at, (const uint8_t *)c->bytes, c->len, &in, why,
					   sizeof(why));

		cr_assert_eq(ret, c->ret, "%s: got %d, want %d (%s)", c->name, ret, c->ret, why);
		if (ret)
			continue;
		cr_assert_eq(in.kind, c->kind, "%s: kind %d", c->name, in.kind);
		cr_assert_eq(in.len, c->insn_len, "%s: len %d", c->name, in.len);
		cr_assert_eq(in.disp_off, c->disp_off, "%s: disp_off %d", c->name, in.disp_off);
		if (c->kind == FDR_RELOC_JMP || c->kind == FDR_RELOC_JCC ||
		    c->kind == FDR_RELOC_CALL)
			cr_assert_eq((int64_t)(in.target - at), c->target, "%s: target %+ld",
				     c->name, (long)(in.target - at));
	}
}

Test(probe, reloc_emit_reach)
{
	struct fdr_reloc_insn in;
	uint8_t buf[FDR_RELOC_SLOT_MAX];
	const uint8_t mov[] = { 0x8b, 0x05, 0x10, 0x00, 0x00, 0x00 };
	const uint8_t jmp[] = { 0xeb, 0x05 };
	uint64_t abs;
	int32_t d;
	int len;

	cr_assert_eq(fdr_reloc_decode(0x400000, mov, sizeof(mov), &in, NULL, 0), 0);
	/* 1 MiB away: the disp32 is rewritten to reach 0x400016 */
	len = fdr_reloc_emit(&in, 0x500000, 0x400006, buf, sizeof(buf));
	cr_assert_eq(len, 6 + 5);
	memcpy(&d, buf + 2, 4);
	cr_assert_eq(0x500000 + 6 + (int64_t)d, 0x400016);
	cr_assert_eq(buf[6], 0xe9, "jmp rel32 back");
	/* 4 GiB away: the operand cannot reach */
	cr_assert_eq(fdr_reloc_emit(&in, 0x100400000ull, 0x400006, buf, sizeof(buf)), -ERANGE);
	/* a branch 4 GiB away becomes jmp *0(%rip) + the address */
	cr_assert_eq(fdr_reloc_decode(0x400000, jmp, sizeof(jmp), &in, NULL, 0), 0);
	len = fdr_reloc_emit(&in, 0x100400000ull, 0, buf, sizeof(buf));
	cr_assert_eq(len, 14);
	cr_assert_eq(buf[0], 0xff);
	cr_assert_eq(buf[1], 0x25);
	memcpy(&abs, buf + 6, 8);
	cr_assert_eq(abs, 0x400007);
	cr_assert_eq(fdr_reloc_emit(&in, 0x100400000ull, 0, buf, 4), -ENOSPC);
}

Test(probe, reloc_cond)
{
	enum { CF = 1, PF = 4, ZF = 0x40, SF = 0x80, OF = 0x800 };
	/* cond: taken with flags, not taken with flags */
	static const struct {
		unsigned int cond;
		uint64_t yes, no;
	} t[] = {
		{ 0x0, OF, 0 },	      { 0x1, 0, OF },	    { 0x2, CF, 0 }, { 0x3, 0, CF },
		{ 0x4, ZF, 0 },	      { 0x5, 0, ZF },	    { 0x6, ZF, 0 }, { 0x7, 0, CF },
		{ 0x8, SF, 0 },	      { 0x9, 0, SF },	    { 0xa, PF, 0 }, { 0xb, 0, PF },
		{ 0xc, SF, SF | OF }, { 0xd, SF | OF, OF }, { 0xe, ZF, 0 }, { 0xf, SF | OF, ZF },
	};
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		cr_assert_eq(fdr_reloc_cond_true(t[i].cond, t[i].yes), 1, "cond %x", t[i].cond);
		cr_assert_eq(fdr_reloc_cond_true(t[i].cond, t[i].no), 0, "cond %x", t[i].cond);
	}
}

/* ---- issue 16's trampolines: fdr_reloc_emit() output run directly ---- */

struct tramp_case {
	const char *name;
	uintptr_t fn; /* the function; its first >= 5 bytes are relocated */
	uint64_t (*call)(void *f, uint64_t i); /* calls f (the function or its trampoline) */
};

typedef uint64_t (*fn1)(uint64_t);
typedef uint64_t (*fn2)(uint64_t, uint64_t);

static uint64_t t_1(void *f, uint64_t i)
{
	return ((fn1)f)(i);
}
static uint64_t t_2(void *f, uint64_t i)
{
	return ((fn2)f)(i, 3 * i);
}
static uint64_t t_callind(void *f, uint64_t i)
{
	return ((uint64_t(*)(void *, uint64_t))f)((void *)pt_helper_si, i);
}
static uint64_t t_riprel(void *f, uint64_t i)
{
	pt_global = (uint32_t)i;
	return ((uint32_t(*)(void))f)();
}
static uint64_t t_store(void *f, uint64_t i)
{
	uint32_t *p = ((uint32_t * (*)(uint32_t)) f)((uint32_t)i);

	return p == &pt_global2 ? pt_global2 : UINT64_MAX;
}

static const struct tramp_case tramps[] = {
	{ "mov ; add", A(pt_add), t_2 },
	{ "mov rip", A(pt_riprel), t_riprel },
	{ "mov %edi,rip ; lea rip", A(pt_riprel_store), t_store },
	{ "call rel32", A(pt_call), t_1 },
	{ "call rel32 (return address)", A(pt_call_ra), t_1 },
	{ "call *%rdi ; add", A(pt_callind), t_callind },
	{ "call *rip (return address)", A(pt_callind_mem), t_1 },
	{ "jmp rel8 ; ud2 ; ud2", A(pt_jmp), t_1 },
	{ "jmp rel32", A(pt_jmp32), t_1 },
	{ "cmp ; jl rel8", A(pt_jcc), t_1 },
	{ "test ; je rel32", A(pt_jcc32), t_1 },
	{ "mov to the red zone", A(pt_redzone), t_1 },
	{ "push ; mov ; lea", A(pt_push), t_1 },
};

/* A page for trampolines within reach of the test's code and data. */
static uint8_t *tramp_page(void)
{
	uintptr_t base = A(pt_add) & ~(uintptr_t)0xfffff;
	long k;

	for (k = 1; k < 512; k++) {
		uintptr_t hint = base + (uintptr_t)((k & 1) ? k : -k) * 0x100000;
		void *p = mmap((void *)hint, 4096, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);

		if (p == (void *)hint)
			return p;
		if (p != MAP_FAILED)
			munmap(p, 4096);
	}
	return NULL;
}

Test(probe, reloc_trampolines)
{
	uint8_t *page = tramp_page();
	size_t t, used = 0;
	void *entry[sizeof(tramps) / sizeof(tramps[0])];

	cr_assert_not_null(page, "no page near the code");
	/* write every trampoline while the page is RW, then make it R-X: never both */
	for (t = 0; t < sizeof(tramps) / sizeof(tramps[0]); t++) {
		const struct tramp_case *c = &tramps[t];
		size_t off = 0;

		entry[t] = page + used;
		while (off < 5) {
			struct fdr_reloc_insn in;
			uint8_t code[FDR_RELOC_SLOT_MAX];
			char why[160];
			int len, ret;

			ret = fdr_reloc_decode(c->fn + off, (const uint8_t *)(c->fn + off), 15, &in,
					       why, sizeof(why));
			cr_assert_eq(ret, 0, "%s: %s", c->name, why);
			off += in.len;
			/* an emitted instruction's resume: where the next one will be written, or
			 * back in the function after the window */
			/* a near resume gives the length of the rel32 form the real one gets */
			len = fdr_reloc_emit(&in, A(page + used), A(page + used), code,
					     sizeof(code));
			cr_assert_gt(len, 0, "%s", c->name);
			len = fdr_reloc_emit(&in, A(page + used),
					     off >= 5 ? c->fn + off : A(page + used) + (size_t)len,
					     code, sizeof(code));
			cr_assert_gt(len, 0, "%s", c->name);
			cr_assert_leq(used + (size_t)len, 4096);
			memcpy(page + used, code, (size_t)len);
			used += (size_t)len;
		}
	}
	cr_assert_eq(mprotect(page, 4096, PROT_READ | PROT_EXEC), 0);
	for (t = 0; t < sizeof(tramps) / sizeof(tramps[0]); t++) {
		const struct tramp_case *c = &tramps[t];
		uint64_t i;

		for (i = 0; i < 40; i++) {
			uint64_t want = c->call((void *)c->fn, i);
			uint64_t got = c->call(entry[t], i);

			cr_assert_eq(got, want, "%s, %lu: relocated 0x%lx, original 0x%lx", c->name,
				     (unsigned long)i, (unsigned long)got, (unsigned long)want);
		}
	}
	munmap(page, 4096);
}

/* ---- arming: each kind of first instruction ---- */

struct target_case {
	const char *name;
	uintptr_t addr;
	uint64_t (*call)(uint64_t i); /* runs the function with argument i */
	uint64_t (*want)(uint64_t i); /* what it must return */
};

static const struct target_case targets[] = {
	{ "mov %rdi,%rax", A(pt_add), c_add, w_add },
	{ "mov pt_global(%rip),%eax", A(pt_riprel), c_riprel, w_riprel },
	{ "mov %edi,pt_global2(%rip)", A(pt_riprel_store), c_store, w_store },
	{ "lea pt_global2(%rip),%rax", A(pt_riprel_lea), c_store, w_store },
	{ "call rel32", A(pt_call), c_call, w_call },
	{ "call rel32 (return address)", A(pt_call_ra), c_call_ra, w_call_ra },
	{ "call *%rdi", A(pt_callind), c_callind, w_callind },
	{ "call *pt_fnptr(%rip) (return address)", A(pt_callind_mem), c_callind_mem,
	  w_callind_mem },
	{ "jmp rel8", A(pt_jmp), c_jmp, w_jmp },
	{ "jmp rel32", A(pt_jmp32), c_jmp32, w_jmp32 },
	{ "jl rel8", A(pt_jcc_br), c_jcc, w_jcc },
	{ "je rel32", A(pt_jcc32_br), c_jcc32, w_jcc32 },
	{ "red zone leaf, entry", A(pt_redzone), c_redzone, w_redzone },
	{ "red zone leaf, red zone in use", A(pt_redzone_mid), c_redzone, w_redzone },
	{ "push %rbx", A(pt_push), c_push, w_push },
	{ "pop %rbx", A(pt_push_pop), c_push, w_push },
};

Test(probe, targets)
{
	const uint64_t n = 1000;
	size_t t;

	for (t = 0; t < sizeof(targets) / sizeof(targets[0]); t++) {
		const struct target_case *c = &targets[t];
		struct fdr_probe_site *s = NULL;
		struct hits h = { 0 };
		uint8_t before[16], after[16];
		uint64_t i;
		int ret;

		memcpy(before, (const void *)c->addr, sizeof(before));
		ret = fdr_probe_arm(c->addr, count_hit, &h, &s);
		cr_assert_eq(ret, 0, "%s: arm: %s", c->name, strerror(-ret));
		cr_assert_eq(*(volatile uint8_t *)c->addr, 0xcc, "%s: int3 in place", c->name);
		for (i = 0; i < n; i++) {
			uint64_t got = c->call(i);

			cr_assert_eq(got, c->want(i), "%s: call %lu: got 0x%lx want 0x%lx", c->name,
				     (unsigned long)i, (unsigned long)got,
				     (unsigned long)c->want(i));
		}
		cr_assert_eq(atomic_load(&h.n), n, "%s: %lu hits", c->name,
			     (unsigned long)atomic_load(&h.n));
		cr_assert_eq(fdr_probe_site_hits(s), n);
		cr_assert_eq(h.last_rip, c->addr, "%s: regs->rip", c->name);
		cr_assert_eq(fdr_probe_disarm(s), 0);
		memcpy(after, (const void *)c->addr, sizeof(after));
		cr_assert_eq(memcmp(before, after, sizeof(before)), 0,
			     "%s: original bytes restored exactly", c->name);
		cr_assert_eq(c->call(5), c->want(5), "%s: works after disarm", c->name);
		cr_assert_eq(atomic_load(&h.n), n, "%s: no hit after disarm", c->name);
		check_method();
	}
}

/* Real compiled code: libc's getppid (endbr64 first) and the strlen variant its IFUNC chose. */
Test(probe, libc_functions)
{
	pid_t (*volatile gp)(void) = (pid_t(*)(void))dlsym(RTLD_DEFAULT, "getppid");
	size_t (*volatile sl)(const char *) =
		(size_t(*)(const char *))dlsym(RTLD_DEFAULT, "strlen");
	static const char text[] = "the quick brown fox jumps over the lazy dog, twice over";
	struct fdr_probe_site *s1, *s2;
	struct hits h1 = { 0 }, h2 = { 0 };
	pid_t parent = getppid();
	uint8_t before[16];
	size_t i;
	int ret;

	cr_assert(gp && sl);
	memcpy(before, (const void *)A(sl), sizeof(before));
	ret = fdr_probe_arm(A(gp), count_hit, &h1, &s1);
	cr_assert_eq(ret, 0, "getppid: %s", strerror(-ret));
	ret = fdr_probe_arm(A(sl), count_hit, &h2, &s2);
	cr_assert_eq(ret, 0, "strlen: %s", strerror(-ret));
	for (i = 0; i < sizeof(text); i++) {
		cr_assert_eq(gp(), parent);
		cr_assert_eq(sl(text + i), sizeof(text) - 1 - i);
		cr_assert_eq(h2.last_rdi, A(text + i), "strlen's argument");
	}
	cr_assert_eq(atomic_load(&h1.n), sizeof(text));
	cr_assert_eq(atomic_load(&h2.n), sizeof(text));
	cr_assert_eq(fdr_probe_disarm(s1), 0);
	cr_assert_eq(fdr_probe_disarm(s2), 0);
	cr_assert_eq(memcmp(before, (const void *)A(sl), sizeof(before)), 0);
}

static struct fdr_probe_regs seen_regs;

static void copy_regs(const struct fdr_probe_regs *r, void *arg)
{
	(void)arg;
	seen_regs = *r;
}

/* Every register the fetch programs can name reaches the handler, in its slot. */
Test(probe, registers)
{
	static const struct {
		int reg;
		uint64_t want;
	} t[] = {
		{ FDR_REG_AX, 0x1001 },	 { FDR_REG_BX, 0x1002 },  { FDR_REG_CX, 0x1003 },
		{ FDR_REG_DX, 0x1004 },	 { FDR_REG_SI, 0x1005 },  { FDR_REG_DI, 0x1006 },
		{ FDR_REG_BP, 0x1007 },	 { FDR_REG_R8, 0x1008 },  { FDR_REG_R9, 0x1009 },
		{ FDR_REG_R10, 0x100a }, { FDR_REG_R11, 0x100b }, { FDR_REG_R12, 0x100c },
		{ FDR_REG_R13, 0x100d }, { FDR_REG_R14, 0x100e }, { FDR_REG_R15, 0x100f },
	};
	struct fdr_probe_site *s;
	size_t i;

	cr_assert_eq(fdr_probe_arm(A(pt_allregs_probe), copy_regs, NULL, &s), 0);
	pt_allregs();
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		cr_assert_eq(seen_regs.gpr[t[i].reg], t[i].want, "register %d: 0x%lx", t[i].reg,
			     (unsigned long)seen_regs.gpr[t[i].reg]);
	cr_assert_eq(seen_regs.gpr[FDR_REG_SP], pt_saved_sp, "%%sp as the instruction sees it");
	cr_assert_eq(seen_regs.gpr[FDR_REG_IP], A(pt_allregs_probe), "%%ip: the probed address");
	cr_assert_eq(seen_regs.probe_addr, A(pt_allregs_probe));
	cr_assert_eq(seen_regs.gpr[FDR_REG_FLAGS] & 1, 1, "CF set by stc");
	cr_assert_eq(seen_regs.gpr[FDR_REG_CS], 0x33, "the 64-bit user code segment");
	cr_assert_eq(seen_regs.gpr[FDR_REG_SS], 0x2b, "the user data segment");
	cr_assert_eq(fdr_probe_disarm(s), 0);
}

Test(probe, arguments_and_rearm)
{
	struct fdr_probe_site *s, *s2;
	struct hits h = { 0 }, h2 = { 0 };
	uint64_t i, want_rdi = 0, want_rsi = 0;
	int round;

	for (round = 0; round < 3; round++) {
		cr_assert_eq(fdr_probe_arm(A(pt_add), count_hit, &h, &s), 0);
		/* a second probe at the same address: both handlers run (the first 250 calls) */
		cr_assert_eq(fdr_probe_arm(A(pt_add), count_hit, &h2, &s2), 0);
		cr_assert_neq(s, s2);
		for (i = 0; i < 500; i++) {
			if (i == 250)
				cr_assert_eq(fdr_probe_disarm(s2), 0, "the other probe stays");
			cr_assert_eq(pt_add(i, 1000 + i), 1000 + 2 * i);
			want_rdi += i;
			want_rsi += 1000 + i;
			cr_assert_eq(h.last_rdi, i);
			cr_assert_eq(h.last_rsi, 1000 + i);
		}
		cr_assert_eq(fdr_probe_disarm(s), 0);
		cr_assert_eq(fdr_probe_disarm(s), -EINVAL, "second disarm refused");
		cr_assert_eq(fdr_probe_disarm(s2), -EINVAL, "second disarm refused");
		cr_assert_eq(*(const volatile uint8_t *)A(pt_add), 0x48, "original byte back");
	}
	cr_assert_eq(atomic_load(&h.n), 1500);
	cr_assert_eq(atomic_load(&h2.n), 750);
	cr_assert_eq(atomic_load(&h.sum_rdi), want_rdi);
	cr_assert_eq(atomic_load(&h.sum_rsi), want_rsi);
}

/* An r-x page at @at (or anywhere) holding @code; MAP_FAILED if it cannot be had. */
static void *code_page(void *at, const uint8_t *code, size_t len)
{
	void *p = mmap(at, 4096, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | (at ? MAP_FIXED_NOREPLACE : 0), -1, 0);

	if (p == MAP_FAILED || (at && p != at))
		return MAP_FAILED;
	memset(p, 0xcc, 4096);
	memcpy(p, code, len);
	if (mprotect(p, 4096, PROT_READ | PROT_EXEC))
		return MAP_FAILED;
	return p;
}

/*
 * Code unmapped under an armed probe (a library unloaded): the disarm cannot
 * write the byte back and the probe stays armed. Other code mapped at the same
 * address later can be probed: the stale probe is dropped, not joined (its int3
 * is not in the new code).
 */
Test(probe, code_replaced_under_a_probe)
{
	static const uint8_t mov_ret[] = { 0x48, 0x89, 0xf8, 0xc3 }; /* mov %rdi,%rax; ret */
	static const uint8_t lea_ret[] = { 0x48, 0x8d, 0x47, 0x01, 0xc3 }; /* lea 1(%rdi),%rax */
	struct fdr_probe_site *s1, *s2;
	struct hits h1 = { 0 }, h2 = { 0 };
	uint64_t (*f)(uint64_t);
	void *page = code_page(NULL, mov_ret, sizeof(mov_ret));

	cr_assert_neq(page, MAP_FAILED);
	*(void **)&f = page;
	cr_assert_eq(fdr_probe_arm((uintptr_t)page, count_hit, &h1, &s1), 0);
	cr_assert_eq(f(5), 5);
	cr_assert_eq(atomic_load(&h1.n), 1);
	cr_assert_eq(munmap(page, 4096), 0);
	cr_assert_lt(fdr_probe_disarm(s1), 0, "the byte cannot go back into unmapped code");
	cr_assert_eq(code_page(page, lea_ret, sizeof(lea_ret)), page);
	cr_assert_eq(fdr_probe_arm((uintptr_t)page, count_hit, &h2, &s2), 0);
	cr_assert_eq(*(const volatile uint8_t *)page, 0xcc);
	cr_assert_eq(f(5), 6, "the new code, its instruction run out of line");
	cr_assert_eq(atomic_load(&h2.n), 1);
	cr_assert_eq(atomic_load(&h1.n), 1, "the stale probe's handler never runs again");
	/* s1 is not used again: its probe was dropped, its handle may be s2's now */
	cr_assert_eq(fdr_probe_disarm(s2), 0);
	cr_assert_eq(*(const volatile uint8_t *)page, 0x48);
	cr_assert_eq(f(7), 8);
	munmap(page, 4096);
}

Test(probe, refusals)
{
	struct fdr_probe_site *s;
	struct hits h = { 0 };

	cr_assert_eq(fdr_probe_arm(A(&pt_global), count_hit, &h, &s), -EFAULT, "data page");
	cr_assert_eq(fdr_probe_arm(A(pt_own_int3), count_hit, &h, &s), -ENOTSUP);
	cr_assert_eq(fdr_probe_arm(A(pt_add), NULL, &h, &s), -EINVAL);
	cr_assert_eq(fdr_probe_disarm(NULL), -EINVAL);
}

/* A handler that calls the probed function: the nested hit runs no handler. */
static void nested_hit(const struct fdr_probe_regs *r, void *arg)
{
	struct hits *h = arg;

	atomic_fetch_add(&h->n, 1);
	if (pt_add(1, 2) != 3)
		abort();
	(void)r;
}

Test(probe, nested_hit_is_a_miss)
{
	struct fdr_probe_site *s;
	struct hits h = { 0 };
	uint64_t i;

	cr_assert_eq(fdr_probe_arm(A(pt_add), nested_hit, &h, &s), 0);
	for (i = 0; i < 100; i++)
		cr_assert_eq(pt_add(i, i), 2 * i);
	cr_assert_eq(fdr_probe_site_hits(s), 100);
	cr_assert_eq(fdr_probe_site_misses(s), 100);
	cr_assert_eq(fdr_probe_disarm(s), 0);
}

static struct fdr_probe_site *self_site;
static atomic_int self_ret;

static void disarm_self(const struct fdr_probe_regs *r, void *arg)
{
	(void)r;
	(void)arg;
	atomic_store(&self_ret, fdr_probe_disarm(self_site));
}

Test(probe, disarm_from_handler_refused)
{
	cr_assert_eq(fdr_probe_arm(A(pt_add), disarm_self, NULL, &self_site), 0);
	cr_assert_eq(pt_add(1, 1), 2);
	cr_assert_eq(atomic_load(&self_ret), -EDEADLK);
	cr_assert_eq(fdr_probe_disarm(self_site), 0);
}

Test(probe, fork_child_keeps_probes)
{
	struct fdr_probe_site *s;
	struct hits h = { 0 };
	int status;
	pid_t pid;

	cr_assert_eq(fdr_probe_arm(A(pt_add), count_hit, &h, &s), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		int i, ok = 1;

		for (i = 0; i < 100; i++)
			ok &= pt_add(i, 1) == (uint64_t)i + 1;
		ok &= atomic_load(&h.n) == 100;
		ok &= fdr_probe_disarm(s) == 0 && pt_add(2, 2) == 4 && atomic_load(&h.n) == 100;
		_exit(ok ? 0 : 1);
	}
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status 0x%x", status);
	cr_assert_eq(atomic_load(&h.n), 0, "the child's hits are its own");
	cr_assert_eq(fdr_probe_disarm(s), 0);
}

/* ---- live patching: 4 threads on 2 CPUs, 10,000 arm/disarm cycles ---- */

#define COLD_WORDS (8u << 20) /* 64 MiB: loads from it miss the caches */

struct runner {
	pthread_t th;
	int cpu;
	const uint64_t *cold;
	atomic_int *stop;
	uint64_t calls, wrong;
};

static void *run_slow(void *arg)
{
	struct runner *r = arg;
	uint64_t x = (uint64_t)r->cpu * 0x9e3779b97f4a7c15ull;
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(r->cpu % 2, &set);
	(void)pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	while (!atomic_load_explicit(r->stop, memory_order_relaxed)) {
		size_t idx;

		x = x * 6364136223846793005ull + 1442695040888963407ull;
		idx = (size_t)(x >> 40) % COLD_WORDS;
		if (pt_slow(&r->cold[idx], x) != r->cold[idx] + x)
			r->wrong++;
		if (pt_add(x, r->calls) != x + r->calls)
			r->wrong++;
		r->calls++;
	}
	return NULL;
}

/*
 * 2000 cycles here (1.4 s plain, 12 s on the mremap path): stress/probe-live
 * runs 10,000 of the same on the /proc/self/mem and out-of-line paths and 4000
 * on the mremap path, in the gcc, ASan and TSan builds (tests/probe.cmake)
 */
#ifndef LIVE_CYCLES
#define LIVE_CYCLES 2000
#endif

Test(probe, live_arm_disarm_4_threads, .timeout = 300)
{
	struct runner run[4];
	atomic_int stop = 0;
	struct hits h = { 0 }, h2 = { 0 };
	uint64_t *cold;
	uint8_t before[16];
	size_t i;
	int c;

	cold = mmap(NULL, COLD_WORDS * 8, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
		    0);
	cr_assert_neq(cold, MAP_FAILED);
	for (i = 0; i < COLD_WORDS; i++)
		cold[i] = i * 2654435761u;
	memcpy(before, (const void *)A(pt_slow), sizeof(before));
	for (c = 0; c < 4; c++) {
		run[c] = (struct runner){ .cpu = c, .cold = cold, .stop = &stop };
		cr_assert_eq(pthread_create(&run[c].th, NULL, run_slow, &run[c]), 0);
	}
	for (i = 0; i < LIVE_CYCLES; i++) {
		struct fdr_probe_site *s, *s2;

		cr_assert_eq(fdr_probe_arm(A(pt_slow), count_hit, &h, &s), 0, "cycle %zu", i);
		cr_assert_eq(fdr_probe_arm(A(pt_add), count_hit, &h2, &s2), 0, "cycle %zu", i);
		if (i % 16 == 0)
			sched_yield(); /* let the runners hit it */
		cr_assert_eq(fdr_probe_disarm(s), 0);
		cr_assert_eq(fdr_probe_disarm(s2), 0);
	}
	atomic_store(&stop, 1);
	for (c = 0; c < 4; c++) {
		cr_assert_eq(pthread_join(run[c].th, NULL), 0);
		cr_assert_eq(run[c].wrong, 0, "thread %d: %lu wrong results of %lu", c,
			     (unsigned long)run[c].wrong, (unsigned long)run[c].calls);
	}
	cr_assert_eq(memcmp(before, (const void *)A(pt_slow), sizeof(before)), 0);
	cr_log_info("calls %lu %lu %lu %lu, hits %lu + %lu\n", (unsigned long)run[0].calls,
		    (unsigned long)run[1].calls, (unsigned long)run[2].calls,
		    (unsigned long)run[3].calls, (unsigned long)atomic_load(&h.n),
		    (unsigned long)atomic_load(&h2.n));
	cr_assert_gt(atomic_load(&h.n) + atomic_load(&h2.n), 0, "the probes were hit");
	check_method();
	munmap(cold, COLD_WORDS * 8);
}

/* ---- sharing SIGTRAP with the program ---- */

static atomic_int own_traps;
static atomic_int own_plain;

static atomic_int own_bad_context;

static void own_trap(int sig, siginfo_t *si, void *uc)
{
	const ucontext_t *u = uc;

	/* the program's handler gets the kernel's siginfo and context, unchanged */
	if (si->si_code == SI_KERNEL &&
	    (uintptr_t)u->uc_mcontext.gregs[REG_RIP] != A(pt_own_int3) + 1)
		atomic_fetch_add(&own_bad_context, 1);
	if (sig == SIGTRAP)
		atomic_fetch_add(&own_traps, 1);
}

static void own_trap_plain(int sig)
{
	if (sig == SIGTRAP)
		atomic_fetch_add(&own_plain, 1);
}

Test(probe, own_sigtrap_handler_installed_after)
{
	struct fdr_probe_site *s;
	struct hits h = { 0 };
	struct sigaction sa, old;

	cr_assert_eq(fdr_probe_arm(A(pt_add), count_hit, &h, &s), 0);
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = own_trap;
	sa.sa_flags = SA_SIGINFO;
	cr_assert_eq(sigaction(SIGTRAP, &sa, &old), 0);
	cr_assert(!(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_DFL,
		  "the program sees its own previous action, not the engine's");
	cr_assert_eq(pt_own_int3(), 42);
	cr_assert_eq(atomic_load(&own_traps), 1, "the program's handler got its int3");
	cr_assert_eq(atomic_load(&own_bad_context), 0, "with RIP just after its int3");
	cr_assert_eq(pt_add(2, 3), 5);
	cr_assert_eq(atomic_load(&h.n), 1, "the probe still works");
	cr_assert_eq(atomic_load(&own_traps), 1, "and its trap is not passed on");
	cr_assert_eq(kill(getpid(), SIGTRAP), 0);
	cr_assert_eq(atomic_load(&own_traps), 2, "kill -TRAP reaches the program");
	cr_assert_eq(sigaction(SIGTRAP, NULL, &old), 0);
	cr_assert_eq(old.sa_sigaction, own_trap);
	/* signal() too */
	cr_assert_eq((void *)signal(SIGTRAP, own_trap_plain), (void *)own_trap);
	cr_assert_eq(pt_own_int3(), 42);
	cr_assert_eq(atomic_load(&own_plain), 1);
	cr_assert_eq(pt_add(2, 3), 5);
	cr_assert_eq(atomic_load(&h.n), 2);
	cr_assert_eq(fdr_probe_disarm(s), 0);
}

Test(probe, own_sigtrap_handler_installed_before)
{
	struct fdr_probe_site *s;
	struct hits h = { 0 };
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = own_trap;
	sa.sa_flags = SA_SIGINFO | SA_RESETHAND;
	cr_assert_eq(sigaction(SIGTRAP, &sa, NULL), 0);
	cr_assert_eq(fdr_probe_arm(A(pt_add), count_hit, &h, &s), 0);
	cr_assert_eq(pt_add(2, 3), 5);
	cr_assert_eq(atomic_load(&h.n), 1);
	cr_assert_eq(pt_own_int3(), 42);
	cr_assert_eq(atomic_load(&own_traps), 1);
	cr_assert_eq(sigaction(SIGTRAP, NULL, &sa), 0);
	cr_assert_eq(sa.sa_handler, SIG_DFL, "SA_RESETHAND honoured");
	cr_assert_eq(pt_add(2, 3), 5);
	cr_assert_eq(atomic_load(&h.n), 2);
	cr_assert_eq(fdr_probe_disarm(s), 0);
}

/* No handler of the program's: its own int3 kills it, as without fdr. */
Test(probe, own_int3_without_handler_kills, .signal = SIGTRAP)
{
	struct fdr_probe_site *s;
	struct hits h = { 0 };

	cr_assert_eq(fdr_probe_arm(A(pt_add), count_hit, &h, &s), 0);
	cr_assert_eq(pt_add(1, 1), 2);
	pt_own_int3();
	cr_assert_fail("not reached");
}

/* SIGTRAP ignored: an int3 still kills, as the kernel forces it. */
Test(probe, own_int3_with_sigtrap_ignored_kills, .signal = SIGTRAP)
{
	struct fdr_probe_site *s;
	struct hits h = { 0 };

	cr_assert_eq(fdr_probe_arm(A(pt_add), count_hit, &h, &s), 0);
	cr_assert_neq((void *)signal(SIGTRAP, SIG_IGN), (void *)SIG_ERR);
	cr_assert_eq(pt_add(1, 1), 2, "the probe works with SIGTRAP 'ignored'");
	cr_assert_eq(atomic_load(&h.n), 1);
	pt_own_int3();
	cr_assert_fail("not reached");
}

static uint8_t *alt_base;
static atomic_int on_alt;

static void alt_hit(const struct fdr_probe_regs *r, void *arg)
{
	uint8_t here;

	(void)r;
	(void)arg;
	if (&here >= alt_base && &here < alt_base + 65536)
		atomic_fetch_add(&on_alt, 1);
}

static void *alt_calls(void *arg)
{
	stack_t ss = { .ss_sp = alt_base, .ss_size = 65536, .ss_flags = 0 }, old;
	uint64_t *bad = arg;
	int i;

	if (sigaltstack(&ss, &old) != 0)
		*bad = 1000;
	for (i = 0; i < 10; i++)
		*bad += pt_add((uint64_t)i, 1) != (uint64_t)i + 1;
	/* put back the thread's own (ASan's, in that build: it unmaps it at exit) */
	if (sigaltstack(&old, NULL) != 0)
		*bad += 1000;
	return NULL;
}

/* A thread with a sigaltstack: the handler runs there (SA_ONSTACK). */
Test(probe, sigaltstack_used)
{
	struct fdr_probe_site *s;
	uint64_t bad = 0;
	pthread_t th;

	alt_base = malloc(65536);
	cr_assert_not_null(alt_base);
	cr_assert_eq(fdr_probe_arm(A(pt_add), alt_hit, NULL, &s), 0);
	cr_assert_eq(pthread_create(&th, NULL, alt_calls, &bad), 0);
	cr_assert_eq(pthread_join(th, NULL), 0);
	cr_assert_eq(bad, 0);
	cr_assert_eq(atomic_load(&on_alt), 10, "every hit handled on the alternate stack");
	cr_assert_eq(fdr_probe_disarm(s), 0);
	free(alt_base);
}

struct blocker {
	int raw; /* block with the raw system call, unseen by libfdr-probe */
	uint64_t wrong;
};

static void *blocked_calls(void *arg)
{
	struct blocker *b = arg;
	sigset_t all, now;
	uint64_t i;

	sigfillset(&all);
	if (b->raw)
		syscall(SYS_rt_sigprocmask, SIG_BLOCK, &all, NULL, 8);
	else
		pthread_sigmask(SIG_BLOCK, &all, NULL);
	syscall(SYS_rt_sigprocmask, SIG_BLOCK, NULL, &now, 8);
	if (!b->raw && sigismember(&now, SIGTRAP))
		b->wrong = UINT64_MAX;
	for (i = 0; i < 100; i++)
		b->wrong += pt_add(i, i) != 2 * i;
	return NULL;
}

Test(probe, thread_blocking_all_signals)
{
	struct fdr_probe_site *s;
	struct hits h = { 0 };
	struct blocker b = { 0, 0 };
	pthread_t th;
	sigset_t all;

	cr_assert_eq(fdr_probe_arm(A(pt_add), count_hit, &h, &s), 0);
	cr_assert_eq(pthread_create(&th, NULL, blocked_calls, &b), 0);
	cr_assert_eq(pthread_join(th, NULL), 0);
	cr_assert_eq(b.wrong, 0, "SIGTRAP stays open and every result is right");
	cr_assert_eq(atomic_load(&h.n), 100);
	/* sigprocmask in this thread too */
	sigfillset(&all);
	cr_assert_eq(sigprocmask(SIG_SETMASK, &all, NULL), 0);
	cr_assert_eq(pt_add(4, 4), 8);
	cr_assert_eq(atomic_load(&h.n), 101);
	cr_assert_eq(fdr_probe_disarm(s), 0);
}

/* Blocked behind libfdr-probe's back: the kernel forces the trap, the process dies. */
Test(probe, thread_blocking_with_raw_syscall_dies, .signal = SIGTRAP)
{
	struct fdr_probe_site *s;
	struct hits h = { 0 };
	struct blocker b = { 1, 0 };
	pthread_t th;

	cr_assert_eq(fdr_probe_arm(A(pt_add), count_hit, &h, &s), 0);
	cr_assert_eq(pthread_create(&th, NULL, blocked_calls, &b), 0);
	pthread_join(th, NULL);
	cr_assert_fail("not reached: the first hit in that thread kills the process");
}
