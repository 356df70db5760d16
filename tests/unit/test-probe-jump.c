// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test-probe-jump.c - jump-optimised probes (lib/probe/jump.c).
 *
 * Each probe is armed (int3), then fdr_probe_optimize() gets the function's
 * bounds (pt_X .. pt_X_end, probe-targets.S) and must turn it into a jmp
 * (first byte 0xe9) or refuse with a reason and leave the int3 working. The
 * probed functions' results must not change, the handler must see every call
 * and the registers as the int3 form shows them, and the original bytes must
 * come back exactly after the disarm. Threads inside the window while it is
 * patched are moved to the trampoline (a thread blocked in a syscall there).
 * The 4-thread live test arms, optimises and disarms while threads call.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "engine.h"
#include "probe-local.h"

#include "../harness/proc.h"
#include "probe-targets.h"

struct hits {
	atomic_ulong n;
	uint64_t last_rdi, last_rsi, last_rip, last_sp;
};

static void count_hit(const struct fdr_probe_regs *r, void *arg)
{
	struct hits *h = arg;

	atomic_fetch_add(&h->n, 1);
	h->last_rdi = r->gpr[FDR_REG_DI];
	h->last_rsi = r->gpr[FDR_REG_SI];
	h->last_rip = r->gpr[FDR_REG_IP];
	h->last_sp = r->gpr[FDR_REG_SP];
}

TestSuite(jump, .timeout = 120);

struct jcase {
	const char *name;
	uintptr_t addr, start, end;
	uint64_t (*call)(uint64_t i);
	uint64_t (*want)(uint64_t i);
	const char *refusal; /* NULL: must be optimised; else part of the reason */
};

static uint64_t slow_word = 1000;
static uint64_t c_slow(uint64_t i)
{
	return pt_slow(&slow_word, i);
}
static uint64_t w_slow(uint64_t i)
{
	return 1000 + i;
}
static uint64_t c_nop(uint64_t i)
{
	(void)i;
	return pt_nop() + pt_nop5();
}
static uint64_t w_zero(uint64_t i)
{
	(void)i;
	return 0;
}
static uint64_t c_loop(uint64_t i)
{
	return pt_loop(i % 50 + 1);
}
static uint64_t w_loop(uint64_t i)
{
	return i % 50 + 1;
}
static uint64_t c_jtable(uint64_t i)
{
	return pt_jtable(i % 4);
}
static uint64_t w_jtable(uint64_t i)
{
	return i % 4 < 3 ? 10 + i % 4 : 0;
}
static uint64_t c_sys(uint64_t i)
{
	(void)i;
	return (uint64_t)pt_sys(0, 0, 0, SYS_getpid);
}
static uint64_t w_sys(uint64_t i)
{
	(void)i;
	return (uint64_t)getpid();
}

/* a function's start and end (in cases[]), or start and length (after "- A(f)") */
#define FN(f) A(f), A(f##_end)
static const struct jcase cases[] = {
	{ "mov ; add", A(pt_add), FN(pt_add), c_add, w_add, NULL },
	{ "mov pt_global(%rip),%eax", A(pt_riprel), FN(pt_riprel), c_riprel, w_riprel, NULL },
	{ "mov %edi,pt_global2(%rip)", A(pt_riprel_store), FN(pt_riprel_store), c_store, w_store,
	  NULL },
	{ "lea pt_global2(%rip),%rax", A(pt_riprel_lea), FN(pt_riprel_store), c_store, w_store,
	  NULL },
	{ "call rel32", A(pt_call), FN(pt_call), c_call, w_call, NULL },
	{ "call rel32 (return address)", A(pt_call_ra), FN(pt_call_ra), c_call_ra, w_call_ra,
	  NULL },
	{ "call *pt_fnptr(%rip) (return address)", A(pt_callind_mem), FN(pt_callind_mem),
	  c_callind_mem, w_callind_mem, NULL },
	{ "jmp rel32", A(pt_jmp32), FN(pt_jmp32), c_jmp32, w_jmp32, NULL },
	{ "cmp ; jl rel8", A(pt_jcc), FN(pt_jcc), c_jcc, w_jcc, NULL },
	{ "jl rel8 ; mov", A(pt_jcc_br), FN(pt_jcc), c_jcc, w_jcc, NULL },
	{ "test ; je rel32", A(pt_jcc32), FN(pt_jcc32), c_jcc32, w_jcc32, NULL },
	{ "je rel32", A(pt_jcc32_br), FN(pt_jcc32), c_jcc32, w_jcc32, NULL },
	{ "red zone leaf, entry", A(pt_redzone), FN(pt_redzone), c_redzone, w_redzone, NULL },
	{ "red zone leaf, red zone in use", A(pt_redzone_mid), FN(pt_redzone), c_redzone, w_redzone,
	  NULL },
	{ "push ; mov ; lea", A(pt_push), FN(pt_push), c_push, w_push, NULL },
	{ "load ; add", A(pt_slow), FN(pt_slow), c_slow, w_slow, NULL },
	{ "5-byte nop", A(pt_nop5), FN(pt_nop5), c_nop, w_zero, NULL },
	{ "mov ; syscall ; ret", A(pt_sys), FN(pt_sys), c_sys, w_sys, NULL },
	/* refused: the int3 stays and works */
	{ "call *%rdi ; add (a call before the window's end)", A(pt_callind), FN(pt_callind),
	  c_callind, w_callind, "does not fall through" },
	{ "jmp rel8 ; ud2 (a jmp before the window's end)", A(pt_jmp), FN(pt_jmp), c_jmp, w_jmp,
	  "does not fall through" },
	{ "pop ; ret (2 bytes to the function's end)", A(pt_push_pop), FN(pt_push), c_push, w_push,
	  "the function ends" },
	{ "xor ; ret (a 3-byte function)", A(pt_nop), FN(pt_nop), c_nop, w_zero,
	  "the function ends" },
	{ "a loop back to the window's second instruction", A(pt_loop), FN(pt_loop), c_loop, w_loop,
	  "inside the window" },
	{ "a jump table in the function", A(pt_jtable), FN(pt_jtable), c_jtable, w_jtable,
	  "indirect jmp" },
};

Test(jump, targets)
{
	const uint64_t n = 1000;
	size_t t;

	for (t = 0; t < sizeof(cases) / sizeof(cases[0]); t++) {
		const struct jcase *c = &cases[t];
		struct fdr_probe_site *s = NULL;
		struct hits h = { 0 };
		uint8_t before[24], after[24];
		char why[256];
		uint64_t i;
		int ret;

		memcpy(before, (const void *)c->addr, sizeof(before));
		ret = fdr_probe_arm(c->addr, count_hit, &h, &s);
		cr_assert_eq(ret, 0, "%s: arm: %s", c->name, strerror(-ret));
		ret = fdr_probe_optimize(s, c->start, c->end - c->start, why, sizeof(why));
		if (c->refusal) {
			cr_assert_lt(ret, 0, "%s: must stay int3", c->name);
			cr_assert(strstr(why, c->refusal), "%s: reason '%s'", c->name, why);
			cr_assert_eq(fdr_probe_site_optimized(s), 0);
			cr_assert_eq(*(volatile uint8_t *)c->addr, 0xcc, "%s: int3", c->name);
			cr_log_info("%s: refused: %s\n", c->name, why);
		} else {
			cr_assert_eq(ret, 0, "%s: optimise: %s (%s)", c->name, strerror(-ret), why);
			cr_assert_eq(fdr_probe_site_optimized(s), 1);
			cr_assert_eq(*(volatile uint8_t *)c->addr, 0xe9, "%s: jmp", c->name);
		}
		for (i = 0; i < n; i++) {
			uint64_t got = c->call(i);

			cr_assert_eq(got, c->want(i), "%s: call %lu: got 0x%lx want 0x%lx", c->name,
				     (unsigned long)i, (unsigned long)got,
				     (unsigned long)c->want(i));
		}
		cr_assert_eq(atomic_load(&h.n), n, "%s: %lu hits", c->name,
			     (unsigned long)atomic_load(&h.n));
		cr_assert_eq(fdr_probe_site_hits(s), n);
		cr_assert_eq(fdr_probe_site_misses(s), 0);
		cr_assert_eq(h.last_rip, c->addr, "%s: regs->rip", c->name);
		cr_assert_eq(fdr_probe_disarm(s), 0);
		memcpy(after, (const void *)c->addr, sizeof(after));
		cr_assert_eq(memcmp(before, after, sizeof(before)), 0,
			     "%s: original bytes restored exactly", c->name);
		cr_assert_eq(c->call(5), c->want(5), "%s: works after disarm", c->name);
		cr_assert_eq(atomic_load(&h.n), n, "%s: no hit after disarm", c->name);
	}
}

static struct fdr_probe_regs seen_regs;

static void copy_regs(const struct fdr_probe_regs *r, void *arg)
{
	(void)arg;
	seen_regs = *r;
}

/* The registers through the trampoline: the same slots as the int3 form fills. */
Test(jump, registers)
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
	char why[256];
	size_t i;

	cr_assert_eq(fdr_probe_arm(A(pt_allregs_probe), copy_regs, NULL, &s), 0);
	cr_assert_eq(fdr_probe_optimize(s, A(pt_allregs), A(pt_allregs_end) - A(pt_allregs), why,
					sizeof(why)),
		     0, "%s", why);
	cr_assert_eq(*(volatile uint8_t *)A(pt_allregs_probe), 0xe9);
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
	cr_assert_eq(fdr_probe_site_hits(s), 1);
	cr_assert_eq(fdr_probe_disarm(s), 0);
}

/* A handler that writes every register the C ABI lets it (the caller-saved ones) */
static void clobber_gprs(const struct fdr_probe_regs *r, void *arg)
{
	(void)r;
	atomic_fetch_add((atomic_ulong *)arg, 1);
	__asm__ volatile("mov $-1, %%rax\n\tmov $-1, %%rcx\n\tmov $-1, %%rdx\n\t"
			 "mov $-1, %%rsi\n\tmov $-1, %%rdi\n\tmov $-1, %%r8\n\t"
			 "mov $-1, %%r9\n\tmov $-1, %%r10\n\tmov $-1, %%r11"
			 :
			 :
			 : "rax", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11", "memory");
}

/*
 * Arm a probe at @at (@ret: FDR_PROBE_ARM_RETURN or 0) in the function
 * @fn..@fn_end with a handler that writes every caller-saved register, in
 * the int3 form and jump-optimised, the handler called directly (NOVEC) and
 * through fdr_vcall(), and run @call (0: every register came back, else 1 +
 * the first that did not) 100 times each way.
 */
static void regs_come_back(uintptr_t at, uintptr_t fn, uintptr_t fn_end, unsigned int ret,
			   uint64_t (*call)(void), const char *what)
{
	unsigned int k;
	atomic_ulong n = 0;

	cr_assert_eq(call(), 0, "unprobed");
	for (k = 0; k < 4; k++) {
		struct fdr_probe_site *s;
		unsigned int flags = ret | (k & 1 ? 0 : FDR_PROBE_ARM_NOVEC);
		char why[256];
		uint64_t got;
		int i;

		cr_assert_eq(fdr_probe_arm_flags(at, flags, clobber_gprs, &n, &s), 0);
		if (k >= 2) {
			cr_assert_eq(fdr_probe_optimize(s, fn, fn_end - fn, why, sizeof(why)), 0,
				     "%s", why);
			cr_assert_eq(*(volatile uint8_t *)at, 0xe9);
		}
		for (i = 0; i < 100; i++) {
			got = call();
			cr_assert_eq(got, 0, "%s, %s: register %d changed by %s",
				     k >= 2 ? "jump" : "int3", k & 1 ? "vcall" : "novec",
				     (int)got - 1, what);
		}
		cr_assert_eq(fdr_probe_disarm(s), 0);
	}
	cr_assert_eq(atomic_load(&n), 400);
}

/*
 * Every general register comes back from a hit as it was, in the int3 form
 * and through the trampoline (which loads back only those the handler may
 * change: the callee-saved ones are the C code's to keep).
 */
Test(jump, registers_come_back)
{
	regs_come_back(A(pt_regs_back_probe), FN(pt_regs_back), 0, pt_regs_back, "a hit");
}

/*
 * The same for a return probe: every general register the probed function
 * returns with comes back from the return trampoline (tramp.S, which loads
 * back only those the C code may change), its entry in either form.
 */
Test(jump, return_registers_come_back)
{
	regs_come_back(A(pt_ret_regs), FN(pt_ret_regs), FDR_PROBE_ARM_RETURN, pt_ret_regs_back,
		       "a return");
}

/* A handler that clobbers vector registers: the probed code's must survive. */
__attribute__((target("avx"))) static void clobber_vec(const struct fdr_probe_regs *r, void *arg)
{
	(void)r;
	atomic_fetch_add((atomic_ulong *)arg, 1);
	__asm__ volatile("vpcmpeqd %%ymm0,%%ymm0,%%ymm0\n\tvpcmpeqd %%ymm1,%%ymm1,%%ymm1\n\t"
			 "vzeroupper" ::
				 : "xmm0", "xmm1");
}

static void clobber_xmm(const struct fdr_probe_regs *r, void *arg)
{
	(void)r;
	atomic_fetch_add((atomic_ulong *)arg, 1);
	__asm__ volatile("pcmpeqd %%xmm0,%%xmm0\n\tpcmpeqd %%xmm1,%%xmm1" ::: "xmm0", "xmm1");
}

Test(jump, vector_registers_kept)
{
	struct fdr_probe_site *s;
	atomic_ulong n = 0;
	char why[256];
	int i;

	cr_assert_eq(fdr_probe_arm(A(pt_addsd), clobber_xmm, &n, &s), 0);
	cr_assert_eq(fdr_probe_optimize(s, FN(pt_addsd) - A(pt_addsd), why, sizeof(why)), 0, "%s",
		     why);
	for (i = 0; i < 100; i++)
		cr_assert_eq(pt_addsd(i * 0.5, 1.25), i * 0.5 + 1.25, "addsd, call %d", i);
	cr_assert_eq(atomic_load(&n), 100);
	cr_assert_eq(fdr_probe_disarm(s), 0);
	if (!__builtin_cpu_supports("avx")) {
		cr_log_info("no AVX: the ymm half skipped\n");
		return;
	}
	cr_assert_eq(fdr_probe_arm(A(pt_vaddpd_add), clobber_vec, &n, &s), 0);
	cr_assert_eq(fdr_probe_optimize(s, FN(pt_vaddpd) - A(pt_vaddpd), why, sizeof(why)), 0, "%s",
		     why);
	for (i = 0; i < 100; i++) {
		double v[8] = { i, 2 * i, 3 * i, 4 * i, 0.5, 1.5, 2.5, 3.5 };

		pt_vaddpd(v);
		cr_assert(v[0] == i + 0.5 && v[1] == 2 * i + 1.5 && v[2] == 3 * i + 2.5 &&
				  v[3] == 4 * i + 3.5,
			  "vaddpd, call %d: %g %g %g %g", i, v[0], v[1], v[2], v[3]);
	}
	cr_assert_eq(atomic_load(&n), 200);
	cr_assert_eq(fdr_probe_disarm(s), 0);
}

/* general registers only: may be armed with FDR_PROBE_ARM_NOVEC */
__attribute__((target("general-regs-only"))) static void count_nv(const struct fdr_probe_regs *r,
								  void *arg)
{
	(void)r;
	atomic_fetch_add((atomic_ulong *)arg, 1);
}

/*
 * Every flag the hit may change (CF, PF, AF, ZF, SF, DF, OF) comes back: the
 * trampoline restores them without popfq. With a handler armed with
 * FDR_PROBE_ARM_NOVEC (called directly; and NOCOUNT: fdr_probe_site_hits()
 * stays 0), and without (through fdr_vcall()); then with a return probe
 * besides (%rsp is pt_flags' at the probe: its return address is there), whose
 * hijack takes the trampoline's call path (jump.c, jp_emit_slow()), DF
 * included.
 */
Test(jump, flags_kept)
{
	static const uint64_t bits[] = { 0x1, 0x4, 0x10, 0x40, 0x80, 0x400, 0x800 };
	const uint64_t mask = 0xcd5;
	unsigned int flags, k, b;
	atomic_ulong n = 0, nr = 0;

	for (k = 0; k < 3; k++) {
		struct fdr_probe_site *s, *sr = NULL;
		char why[256];
		unsigned long calls = 0;
		uint64_t h0;

		flags = k == 1 ? 0 : FDR_PROBE_ARM_NOVEC | FDR_PROBE_ARM_NOCOUNT;
		cr_assert_eq(fdr_probe_arm_flags(A(pt_flags_probe), flags, count_nv, &n, &s), 0);
		h0 = fdr_probe_site_hits(s); /* a re-armed probe's slot keeps its count */
		if (k == 2)
			cr_assert_eq(fdr_probe_arm_flags(A(pt_flags_probe),
							 FDR_PROBE_ARM_RETURN | FDR_PROBE_ARM_NOVEC,
							 count_nv, &nr, &sr),
				     0);
		cr_assert_eq(fdr_probe_optimize(s, FN(pt_flags) - A(pt_flags), why, sizeof(why)), 0,
			     "%s", why);
		cr_assert_eq(*(volatile uint8_t *)A(pt_flags_probe), 0xe9);
		/* every subset of the 7 flags */
		for (b = 0; b < 128; b++) {
			uint64_t want = 0x2, got;
			unsigned int i;

			for (i = 0; i < 7; i++)
				if (b & (1u << i))
					want |= bits[i];
			got = pt_flags(want);
			calls++;
			cr_assert_eq(got & mask, want & mask, "%s: flags 0x%lx came back as 0x%lx",
				     k == 2 ? "return" :
				     k	    ? "vcall" :
					      "novec",
				     (unsigned long)want, (unsigned long)got);
		}
		/* FDR_PROBE_ARM_NOCOUNT: the handler's count only */
		cr_assert_eq(fdr_probe_site_hits(s) - h0, k == 1 ? calls : 0);
		if (sr) {
			cr_assert_eq(atomic_load(&nr), calls, "every return reported");
			cr_assert_eq(fdr_probe_site_misses(sr), 0);
			cr_assert_eq(fdr_probe_disarm(sr), 0);
		}
		cr_assert_eq(fdr_probe_disarm(s), 0);
		cr_assert_eq(atomic_load(&n), (k + 1) * calls);
		cr_assert_eq(fdr_probe_ret_pending(NULL), 0);
	}
}

/* A handler that changes errno: a hit must not (fdr_vcall() keeps it) */
static void set_errno(const struct fdr_probe_regs *r, void *arg)
{
	(void)r;
	atomic_fetch_add((atomic_ulong *)arg, 1);
	errno = EILSEQ;
}

Test(jump, errno_kept)
{
	uint64_t (*volatile fn)(void) = pt_nop5;
	struct fdr_probe_site *s;
	atomic_ulong n = 0;
	char why[256];
	int i;

	cr_assert_eq(fdr_probe_arm(A(pt_nop5), set_errno, &n, &s), 0);
	cr_assert_eq(fdr_probe_optimize(s, FN(pt_nop5) - A(pt_nop5), why, sizeof(why)), 0, "%s",
		     why);
	for (i = 0; i < 10; i++) {
		errno = ENOTTY;
		cr_assert_eq(fn(), 0);
		cr_assert_eq(errno, ENOTTY, "errno %d after hit %d", errno, i);
	}
	cr_assert_eq(atomic_load(&n), 10);
	cr_assert_eq(fdr_probe_disarm(s), 0);
}

/* The switch: off puts the int3 back (still armed), on optimises again. */
Test(jump, switch_off_and_on)
{
	struct fdr_probe_site *s;
	struct hits h = { 0 };
	char why[256];

	cr_assert_eq(fdr_probe_optimize_enabled(), 1);
	cr_assert_eq(fdr_probe_arm(A(pt_add), count_hit, &h, &s), 0);
	cr_assert_eq(fdr_probe_optimize(s, FN(pt_add) - A(pt_add), why, sizeof(why)), 0, "%s", why);
	cr_assert_eq(pt_add(1, 2), 3);
	cr_assert_eq(fdr_probe_set_optimize(0), 0, "none optimised when off");
	cr_assert_eq(*(volatile uint8_t *)A(pt_add), 0xcc);
	cr_assert_eq(fdr_probe_site_optimized(s), 0);
	cr_assert_eq(pt_add(2, 2), 4);
	cr_assert_eq(fdr_probe_set_optimize(1), 1, "optimised again when on");
	cr_assert_eq(*(volatile uint8_t *)A(pt_add), 0xe9);
	cr_assert_eq(pt_add(3, 2), 5);
	cr_assert_eq(atomic_load(&h.n), 3);
	cr_assert_eq(fdr_probe_disarm(s), 0);
	cr_assert_eq(*(volatile uint8_t *)A(pt_add), 0x48, "mov %%rdi,%%rax back");
}

Test(jump, env_switch_off)
{
	struct fdr_probe_site *s;
	struct hits h = { 0 };
	char why[256];

	setenv("FDR_PROBE_OPTIMIZE", "0", 1);
	cr_assert_eq(fdr_probe_optimize_enabled(), 0);
	cr_assert_eq(fdr_probe_arm(A(pt_add), count_hit, &h, &s), 0);
	cr_assert_eq(fdr_probe_optimize(s, FN(pt_add) - A(pt_add), why, sizeof(why)), -ECANCELED);
	cr_assert(strstr(why, "switched off"), "%s", why);
	cr_assert_eq(*(volatile uint8_t *)A(pt_add), 0xcc);
	cr_assert_eq(pt_add(1, 2), 3);
	cr_assert_eq(atomic_load(&h.n), 1);
	cr_assert_eq(fdr_probe_disarm(s), 0);
}

/* A probe armed inside an optimised window: the window goes back to int3 first. */
Test(jump, arm_inside_window)
{
	struct fdr_probe_site *s1, *s2;
	struct hits h1 = { 0 }, h2 = { 0 };
	uint8_t before[8];
	char why[256];

	memcpy(before, (const void *)A(pt_add), sizeof(before));
	cr_assert_eq(fdr_probe_arm(A(pt_add), count_hit, &h1, &s1), 0);
	cr_assert_eq(fdr_probe_optimize(s1, FN(pt_add) - A(pt_add), why, sizeof(why)), 0, "%s",
		     why);
	cr_assert_eq(fdr_probe_check(FN(pt_add) - A(pt_add), A(pt_add) + 3, why, sizeof(why)), 0,
		     "the original bytes are decoded: %s", why);
	cr_assert_eq(fdr_probe_arm(A(pt_add) + 3, count_hit, &h2, &s2), 0);
	cr_assert_eq(fdr_probe_site_optimized(s1), 0);
	cr_assert_eq(*(volatile uint8_t *)A(pt_add), 0xcc);
	cr_assert_eq(*(volatile uint8_t *)(A(pt_add) + 3), 0xcc);
	cr_assert_eq(pt_add(4, 5), 9);
	cr_assert_eq(atomic_load(&h1.n), 1);
	cr_assert_eq(atomic_load(&h2.n), 1);
	cr_assert_eq(fdr_probe_optimize(s1, FN(pt_add) - A(pt_add), why, sizeof(why)), -EBUSY);
	cr_assert(strstr(why, "another probe"), "%s", why);
	cr_assert_eq(fdr_probe_disarm(s2), 0);
	cr_assert_eq(fdr_probe_disarm(s1), 0);
	cr_assert_eq(memcmp(before, (const void *)A(pt_add), sizeof(before)), 0);
}

/*
 * Entry and return probes on one optimised function: both run from the jump
 * trampolines (the entry's hijacks the return address, no trap; the return
 * trampoline reports and goes back), with the right $retval, return address
 * and function; the window stays a jmp while either probe is on, a return
 * probe alone is optimised too, and the vector return value survives a
 * handler that clobbers it.
 */
struct rets {
	atomic_ulong n;
	uint64_t sum_ax, last_ax, last_ip, last_func, bad_ip;
};

static void count_ret(const struct fdr_probe_regs *r, void *arg)
{
	struct rets *t = arg;

	atomic_fetch_add(&t->n, 1);
	t->sum_ax += r->gpr[FDR_REG_AX];
	t->last_ax = r->gpr[FDR_REG_AX];
	t->last_ip = r->gpr[FDR_REG_IP];
	t->last_func = r->probe_addr;
}

/* pt_add(i, 2i) from here: the return address the probes must report is in this function */
__attribute__((noinline)) static uint64_t call_add(uint64_t i, uint64_t *ra)
{
	uint64_t v = pt_add(i, 2 * i);

	*ra = (uint64_t)(uintptr_t)__builtin_return_address(0); /* only to keep a frame */
	return v;
}

static void calls_1000(struct hits *h, struct rets *t, unsigned long want_h, unsigned long want_t)
{
	uint64_t i, ra, sum = 0;

	for (i = 0; i < 1000; i++) {
		cr_assert_eq(call_add(i, &ra), 3 * i, "call %lu", (unsigned long)i);
		sum += 3 * i;
	}
	cr_assert_eq(atomic_load(&h->n), want_h);
	cr_assert_eq(atomic_load(&t->n), want_t);
	if (want_t) {
		cr_assert_eq(t->sum_ax, sum, "every $retval: sum %lu, want %lu",
			     (unsigned long)t->sum_ax, (unsigned long)sum);
		cr_assert_eq(t->last_ax, 3 * 999);
		cr_assert(t->last_ip > (uintptr_t)call_add &&
				  t->last_ip < (uintptr_t)call_add + 256,
			  "the real return address (in call_add at %p): 0x%lx", (void *)call_add,
			  (unsigned long)t->last_ip);
		cr_assert_eq(t->last_func, A(pt_add), "probe_addr: the function");
	}
	cr_assert_eq(fdr_probe_ret_pending(NULL), 0, "no return left pending");
}

Test(jump, entry_and_return_optimized)
{
	struct fdr_probe_site *s1, *s2;
	struct hits h = { 0 };
	struct rets t = { 0 };
	unsigned int tab = 1;
	char why[256];

	cr_assert_eq(fdr_probe_arm(A(pt_add), count_hit, &h, &s1), 0);
	cr_assert_eq(fdr_probe_optimize(s1, FN(pt_add) - A(pt_add), why, sizeof(why)), 0, "%s",
		     why);
	cr_assert_eq(fdr_probe_arm_flags(A(pt_add), FDR_PROBE_ARM_RETURN, count_ret, &t, &s2), 0);
	/* the return probe joins the jmp: no int3 comes back */
	cr_assert_eq(fdr_probe_site_optimized(s1), 1);
	cr_assert_eq(fdr_probe_site_optimized(s2), 1);
	cr_assert_eq(*(volatile uint8_t *)A(pt_add), 0xe9);
	cr_assert_eq(fdr_probe_optimize(s2, FN(pt_add) - A(pt_add), why, sizeof(why)), 0, "%s",
		     why);
	calls_1000(&h, &t, 1000, 1000);
	cr_assert_eq(fdr_probe_site_hits(s1), 1000);
	cr_assert_eq(fdr_probe_site_hits(s2), 1000);
	cr_assert_eq(fdr_probe_site_misses(s2), 0);
	fdr_probe_ret_pending(&tab);
	cr_assert_eq(tab, 0, "no table slot left");
	/* the entry probe leaves: the return probe keeps the jmp */
	cr_assert_eq(fdr_probe_disarm(s1), 0);
	cr_assert_eq(*(volatile uint8_t *)A(pt_add), 0xe9);
	t.sum_ax = 0;
	calls_1000(&h, &t, 1000, 2000);
	cr_assert_eq(fdr_probe_disarm(s2), 0);
	cr_assert_eq(*(volatile uint8_t *)A(pt_add), 0x48);
	/* a return probe alone, optimised; then the entry probe joins it */
	memset(&t, 0, sizeof(t));
	cr_assert_eq(fdr_probe_arm_flags(A(pt_add), FDR_PROBE_ARM_RETURN, count_ret, &t, &s2), 0);
	cr_assert_eq(fdr_probe_optimize(s2, FN(pt_add) - A(pt_add), why, sizeof(why)), 0, "%s",
		     why);
	cr_assert_eq(*(volatile uint8_t *)A(pt_add), 0xe9);
	calls_1000(&h, &t, 1000, 1000);
	cr_assert_eq(fdr_probe_arm(A(pt_add), count_hit, &h, &s1), 0);
	cr_assert_eq(fdr_probe_site_optimized(s1), 1);
	t.sum_ax = 0;
	calls_1000(&h, &t, 2000, 2000);
	/* switched off and on: int3 and the trap-free return, then the jmp again */
	cr_assert_eq(fdr_probe_set_optimize(0), 0);
	cr_assert_eq(*(volatile uint8_t *)A(pt_add), 0xcc);
	t.sum_ax = 0;
	calls_1000(&h, &t, 3000, 3000);
	cr_assert_eq(fdr_probe_set_optimize(1), 1);
	cr_assert_eq(*(volatile uint8_t *)A(pt_add), 0xe9);
	cr_assert_eq(fdr_probe_disarm(s2), 0);
	cr_assert_eq(fdr_probe_disarm(s1), 0);
	cr_assert_eq(*(volatile uint8_t *)A(pt_add), 0x48);
}

/*
 * Entry and return probes on a function that reads two arguments from the
 * stack and checks its alignment (pt_stack_args): in the int3 form, then
 * optimised, where the trampoline calls the displaced instructions from
 * tramp.S's fdr_probe_ret_call (jump.c, jp_emit_slow()): the function sees
 * its stack exactly as its caller made it, each call's result and $retval
 * right, no return left pending.
 */
Test(jump, return_probe_keeps_the_stack)
{
	struct fdr_probe_site *s1, *s2;
	struct hits h = { 0 };
	struct rets t = { 0 };
	uint64_t sum = 0;
	char why[256];
	int64_t i, pass;

	cr_assert_eq(fdr_probe_arm(A(pt_stack_args), count_hit, &h, &s1), 0);
	cr_assert_eq(
		fdr_probe_arm_flags(A(pt_stack_args), FDR_PROBE_ARM_RETURN, count_ret, &t, &s2), 0);
	for (pass = 0; pass < 2; pass++) {
		if (pass == 1) {
			cr_assert_eq(fdr_probe_optimize(s1, FN(pt_stack_args) - A(pt_stack_args),
							why, sizeof(why)),
				     0, "%s", why);
			cr_assert_eq(*(volatile uint8_t *)A(pt_stack_args), 0xe9);
		}
		for (i = 0; i < 1000; i++) {
			int64_t want = 2 * (i + 7) + 3 * i;

			cr_assert_eq(pt_stack_args(1, 2, 3, 4, 5, 6, i + 7, 3 * i), want,
				     "pass %ld, call %ld", (long)pass, (long)i);
			sum += (uint64_t)want;
		}
		cr_assert_eq(atomic_load(&h.n), (unsigned long)(1000 * (pass + 1)));
		cr_assert_eq(atomic_load(&t.n), (unsigned long)(1000 * (pass + 1)));
		cr_assert_eq(t.sum_ax, sum, "every $retval");
		cr_assert_eq(fdr_probe_ret_pending(NULL), 0, "no return left pending");
	}
	cr_assert_eq(fdr_probe_disarm(s2), 0);
	cr_assert_eq(fdr_probe_disarm(s1), 0);
	cr_assert_eq(*(volatile uint8_t *)A(pt_stack_args), 0x48);
}

/* A double returned in %xmm0 through the return trampoline, a handler clobbering xmm0/xmm1 */
Test(jump, return_value_in_xmm0_kept)
{
	struct fdr_probe_site *s;
	atomic_ulong n = 0;
	char why[256];
	int i;

	cr_assert_eq(fdr_probe_arm_flags(A(pt_addsd), FDR_PROBE_ARM_RETURN, clobber_xmm, &n, &s),
		     0);
	cr_assert_eq(fdr_probe_optimize(s, FN(pt_addsd) - A(pt_addsd), why, sizeof(why)), 0, "%s",
		     why);
	for (i = 0; i < 100; i++)
		cr_assert_eq(pt_addsd(i * 0.5, 1.25), i * 0.5 + 1.25, "addsd, call %d", i);
	cr_assert_eq(atomic_load(&n), 100);
	cr_assert_eq(fdr_probe_disarm(s), 0);
}

/*
 * longjmp() out of an optimised return-probed function (pt_callind_mem calls
 * *pt_fnptr, which jumps out every other call): the abandoned entry is
 * dropped as a miss at the next entry, as in the breakpoint form
 * (test-probe-ret.c, longjmp_out); every normal return is reported.
 */
extern uint64_t (*pt_fnptr)(void);
static jmp_buf lj_buf;
static unsigned long lj_i;

static uint64_t lj_callee(void)
{
	if (lj_i % 2 == 0)
		longjmp(lj_buf, 1);
	return 42;
}

Test(jump, longjmp_out_of_optimized_return)
{
	uint64_t (*saved)(void) = pt_fnptr;
	struct fdr_probe_site *s;
	struct rets t = { 0 };
	unsigned long jumped = 0;
	unsigned int tab = 1;
	char why[256];

	cr_assert_eq(
		fdr_probe_arm_flags(A(pt_callind_mem), FDR_PROBE_ARM_RETURN, count_ret, &t, &s), 0);
	cr_assert_eq(fdr_probe_optimize(s, FN(pt_callind_mem) - A(pt_callind_mem), why,
					sizeof(why)),
		     0, "%s", why);
	cr_assert_eq(*(volatile uint8_t *)A(pt_callind_mem), 0xe9);
	pt_fnptr = lj_callee;
	for (lj_i = 0; lj_i < 1000; lj_i++) {
		if (setjmp(lj_buf)) {
			jumped++;
			continue;
		}
		cr_assert_eq(pt_callind_mem(), 42);
	}
	pt_fnptr = saved;
	cr_assert_eq(jumped, 500);
	cr_assert_eq(atomic_load(&t.n), 500, "returns reported: %lu", atomic_load(&t.n));
	cr_assert_eq(t.sum_ax, 500 * 42);
	cr_assert_eq(t.last_func, A(pt_callind_mem));
	cr_assert_eq(fdr_probe_site_misses(s), 500, "misses %lu",
		     (unsigned long)fdr_probe_site_misses(s));
	cr_assert_eq(fdr_probe_ret_pending(&tab), 0);
	cr_assert_eq(tab, 0, "no table slot left");
	cr_assert_eq(fdr_probe_disarm(s), 0);
}

/*
 * A thread blocked in read() inside the window (RIP just after or at the
 * syscall, in the window's interior) while the window is patched: it is moved
 * to the trampoline's copy and its read still returns its byte.
 */
static int sys_pipe[2];
static char sys_byte;
static atomic_long sys_ret = -100;
static atomic_int sys_tid;

static void *blocked_reader(void *arg)
{
	(void)arg;
	atomic_store(&sys_tid, (int)syscall(SYS_gettid));
	atomic_store(&sys_ret, pt_sys(sys_pipe[0], (long)&sys_byte, 1, SYS_read));
	return NULL;
}

/*
 * The system call thread @tid is blocked in (the number first in
 * /proc/self/task/TID/syscall); -1 if it runs, is blocked outside one, or
 * the file cannot be read.
 */
static long task_syscall(int tid)
{
	char path[64], buf[64] = "";
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", tid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = 0;
	fclose(f);
	return buf[0] >= '0' && buf[0] <= '9' ? strtol(buf, NULL, 10) : -1;
}

/* Whether thread @tid is blocked in read(2). */
static int in_read(int tid)
{
	return task_syscall(tid) == SYS_read;
}

Test(jump, thread_blocked_inside_window)
{
	struct fdr_probe_site *s;
	struct hits h = { 0 };
	pthread_t th;
	char why[256];
	int i;

	cr_assert_eq(pipe(sys_pipe), 0);
	cr_assert_eq(pthread_create(&th, NULL, blocked_reader, NULL), 0);
	for (i = 0; i < 5000 && !(atomic_load(&sys_tid) && in_read(atomic_load(&sys_tid))); i++)
		usleep(1000);
	cr_assert(in_read(atomic_load(&sys_tid)), "the reader blocks in pt_sys's syscall");
	cr_assert_eq(fdr_probe_arm(A(pt_sys), count_hit, &h, &s), 0);
	cr_assert_eq(fdr_probe_optimize(s, FN(pt_sys) - A(pt_sys), why, sizeof(why)), 0, "%s", why);
	cr_assert_eq(*(volatile uint8_t *)A(pt_sys), 0xe9);
	cr_assert_eq(write(sys_pipe[1], "x", 1), 1);
	cr_assert_eq(pthread_join(th, NULL), 0);
	cr_assert_eq(atomic_load(&sys_ret), 1, "the read returned %ld", atomic_load(&sys_ret));
	cr_assert_eq(sys_byte, 'x');
	cr_assert_eq(atomic_load(&h.n), 0, "the reader had passed the probe");
	cr_assert_eq(pt_sys(0, 0, 0, SYS_getpid), getpid());
	cr_assert_eq(atomic_load(&h.n), 1);
	cr_assert_eq(fdr_probe_disarm(s), 0);
}

/*
 * A thread asleep elsewhere while windows are optimised (some 150 times in
 * its three sleeps of 150 ms): clock_nanosleep(), nanosleep() and poll() are
 * never restarted after a signal handler (EINTR whatever SA_RESTART:
 * signal(7)), so the patcher must not signal a thread that is blocked with its
 * instruction pointer outside the window (jump.c, jp_parked()): every sleep
 * returns 0, poll() its timeout. Without that, the first optimisation ended
 * the first sleep. Windows are optimised only while the sleeper is seen in
 * its system call and 20 ms at least from the sleep's end: what is left to
 * chance by design, a thread that goes to sleep just as its signal comes
 * (docs/design/probes.md, "Threads asleep"), is not looked for here.
 */
static atomic_int sleeper_go, sleeper_done, sleeper_tid;
static atomic_long sleeper_bad;
static _Atomic long long sleeper_until; /* CLOCK_MONOTONIC ns: the sleep's end; 0 awake */

static void *sleeper(void *arg)
{
	struct timespec t;
	int k;

	(void)arg;
	atomic_store(&sleeper_tid, (int)syscall(SYS_gettid));
	while (!atomic_load(&sleeper_go))
		usleep(1000);
	for (k = 0; k < 3; k++) {
		long long until = (long long)sc_now_ns() + 150000000ll;
		int r;

		atomic_store(&sleeper_until, until);
		if (k == 0) {
			t.tv_sec = until / 1000000000ll;
			t.tv_nsec = until % 1000000000ll;
			r = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL);
		} else if (k == 1) {
			t.tv_sec = 0;
			t.tv_nsec = 150 * 1000000;
			r = nanosleep(&t, NULL) ? errno : 0;
		} else {
			r = poll(NULL, 0, 150) == 0 ? 0 : errno;
		}
		atomic_store(&sleeper_until, 0);
		if (r)
			atomic_store(&sleeper_bad, r);
	}
	atomic_store(&sleeper_done, 1);
	return NULL;
}

Test(jump, sleeper_not_interrupted, .timeout = 60)
{
	struct fdr_probe_site *s;
	struct hits h = { 0 };
	pthread_t th;
	char why[256];
	int n = 0;

	cr_assert_eq(pthread_create(&th, NULL, sleeper, NULL), 0);
	atomic_store(&sleeper_go, 1);
	while (!atomic_load(&sleeper_done)) {
		long long until = atomic_load(&sleeper_until);

		usleep(2000);
		if (!until || until - (long long)sc_now_ns() < 20000000ll ||
		    task_syscall(atomic_load(&sleeper_tid)) < 0)
			continue;
		cr_assert_eq(fdr_probe_arm(A(pt_add), count_hit, &h, &s), 0);
		cr_assert_eq(fdr_probe_optimize(s, FN(pt_add) - A(pt_add), why, sizeof(why)), 0,
			     "%s", why);
		cr_assert_eq(c_add(7), w_add(7));
		cr_assert_eq(fdr_probe_disarm(s), 0);
		n++;
	}
	cr_assert_eq(pthread_join(th, NULL), 0);
	cr_assert_eq(atomic_load(&sleeper_bad), 0, "a sleep returned %s (%d windows optimised)",
		     strerror((int)atomic_load(&sleeper_bad)), n);
	cr_assert_gt(n, 10);
}

/*
 * The reader is stopped in a signal handler of the program's, and the frame
 * that handler returns to is inside the window (read() restarts at the
 * syscall). libfdr-probe's sigaction() keeps FDR_PROBE_SIG_FIX blocked in the
 * program's handlers, so the patcher's request waits for the handler to return
 * and then moves the thread: while the handler does not return, optimising
 * fails (-ETIMEDOUT, still int3, still correct); once it returns within the wait,
 * the window is patched and the restarted read() runs in the trampoline.
 */
static atomic_int in_usr1, release_usr1;

static void usr1_wait(int sig)
{
	(void)sig;
	atomic_store(&in_usr1, 1);
	while (!atomic_load(&release_usr1))
		usleep(1000);
}

static void *releaser(void *arg)
{
	(void)arg;
	usleep(300 * 1000);
	atomic_store(&release_usr1, 1);
	return NULL;
}

Test(jump, thread_in_signal_handler_over_window, .timeout = 60)
{
	struct fdr_probe_site *s;
	struct hits h = { 0 };
	struct sigaction sa, old;
	pthread_t th, rel;
	char why[256];
	int i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = usr1_wait;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	cr_assert_eq(sigaction(SIGUSR1, &sa, NULL), 0);
	cr_assert_eq(sigaction(SIGUSR1, NULL, &old), 0);
	cr_assert_eq(sigisemptyset(&old.sa_mask), 1, "the program sees the mask it set");
	cr_assert_eq(pipe(sys_pipe), 0);
	cr_assert_eq(pthread_create(&th, NULL, blocked_reader, NULL), 0);
	for (i = 0; i < 5000 && !(atomic_load(&sys_tid) && in_read(atomic_load(&sys_tid))); i++)
		usleep(1000);
	cr_assert(in_read(atomic_load(&sys_tid)), "the reader blocks in pt_sys's syscall");
	cr_assert_eq(pthread_kill(th, SIGUSR1), 0);
	for (i = 0; i < 5000 && !atomic_load(&in_usr1); i++)
		usleep(1000);
	cr_assert(atomic_load(&in_usr1), "the reader is in its SIGUSR1 handler");
	cr_assert_eq(fdr_probe_arm(A(pt_sys), count_hit, &h, &s), 0);
	cr_assert_eq(fdr_probe_optimize(s, FN(pt_sys) - A(pt_sys), why, sizeof(why)), -ETIMEDOUT,
		     "%s", why);
	cr_assert_eq(*(volatile uint8_t *)A(pt_sys), 0xcc, "still a breakpoint");
	cr_assert_eq(pthread_create(&rel, NULL, releaser, NULL), 0);
	cr_assert_eq(fdr_probe_optimize(s, FN(pt_sys) - A(pt_sys), why, sizeof(why)), 0, "%s", why);
	cr_assert_eq(*(volatile uint8_t *)A(pt_sys), 0xe9);
	cr_assert_eq(pthread_join(rel, NULL), 0);
	cr_assert_eq(write(sys_pipe[1], "y", 1), 1);
	cr_assert_eq(pthread_join(th, NULL), 0);
	cr_assert_eq(atomic_load(&sys_ret), 1, "the read returned %ld", atomic_load(&sys_ret));
	cr_assert_eq(sys_byte, 'y');
	cr_assert_eq(pt_sys(0, 0, 0, SYS_getpid), getpid());
	cr_assert_eq(atomic_load(&h.n), 1);
	cr_assert_eq(fdr_probe_disarm(s), 0);
}

/*
 * A window of one instruction (pt_nop5's 5-byte nop) has no interior: the
 * patcher sends no thread its request (jump.c, step 4). A thread blocks the
 * request (FDR_PROBE_SIG_FIX, SIGRTMAX - 1: probe-local.h) with the
 * raw rt_sigprocmask and sleeps, as a thread in a handler of the program's
 * would: one that is sent it would hold the optimisation 2 s and then fail it
 * (-ETIMEDOUT). pt_nop5 is optimised at once and the request never pending;
 * then pt_add (mov ; add: two instructions) is, and the thread sees the
 * request pending, unblocks it, and the optimisation goes through: the
 * thread's look works.
 */
static atomic_int fix_stop, fix_seen, fix_ready;

static void *fix_watcher(void *arg)
{
	uint64_t m = 1ull << (FDR_PROBE_SIG_FIX - 1), pend;

	(void)arg;
	syscall(SYS_rt_sigprocmask, SIG_BLOCK, &m, NULL, sizeof(m));
	atomic_store(&fix_ready, 1);
	while (!atomic_load(&fix_stop)) {
		usleep(500);
		if (syscall(SYS_rt_sigpending, &pend, sizeof(pend)) == 0 && (pend & m)) {
			atomic_fetch_add(&fix_seen, 1);
			syscall(SYS_rt_sigprocmask, SIG_UNBLOCK, &m, NULL, sizeof(m));
			syscall(SYS_rt_sigprocmask, SIG_BLOCK, &m, NULL, sizeof(m));
		}
	}
	return NULL;
}

Test(jump, one_instruction_window_signals_no_thread, .timeout = 60)
{
	struct fdr_probe_site *s, *s2;
	struct hits h = { 0 };
	pthread_t th;
	char why[256];
	double t0;

	cr_assert_eq(pthread_create(&th, NULL, fix_watcher, NULL), 0);
	while (!atomic_load(&fix_ready))
		usleep(1000);
	cr_assert_eq(fdr_probe_arm(A(pt_nop5), count_hit, &h, &s), 0);
	t0 = sc_now_ns();
	cr_assert_eq(fdr_probe_optimize(s, FN(pt_nop5) - A(pt_nop5), why, sizeof(why)), 0, "%s",
		     why);
	cr_assert_lt(sc_now_ns() - t0, 1e9, "optimising pt_nop5 waited for the thread");
	cr_assert_eq(*(volatile uint8_t *)A(pt_nop5), 0xe9);
	usleep(20 * 1000); /* the thread looks every 0.5 ms */
	cr_assert_eq(atomic_load(&fix_seen), 0, "a thread was sent the request for pt_nop5");
	cr_assert_eq(c_nop(0), w_zero(0));
	cr_assert_eq(atomic_load(&h.n), 1);
	/* two instructions: the request goes to the thread, which answers */
	cr_assert_eq(fdr_probe_arm(A(pt_add), count_hit, &h, &s2), 0);
	cr_assert_eq(fdr_probe_optimize(s2, FN(pt_add) - A(pt_add), why, sizeof(why)), 0, "%s",
		     why);
	cr_assert_eq(*(volatile uint8_t *)A(pt_add), 0xe9);
	cr_assert_geq(atomic_load(&fix_seen), 1, "the thread never saw the request for pt_add");
	cr_assert_eq(c_add(7), w_add(7));
	atomic_store(&fix_stop, 1);
	cr_assert_eq(pthread_join(th, NULL), 0);
	cr_assert_eq(fdr_probe_disarm(s2), 0);
	cr_assert_eq(fdr_probe_disarm(s), 0);
}

/* ---- live: optimise and unoptimise while 4 threads call ---- */

#define COLD_WORDS (8u << 20) /* 64 MiB: pt_slow's first instruction misses the caches */
/*
 * 150 cycles (about 6 s): stress/probe-live-jump runs 2000 cycles of both
 * probes optimised, switched and disarmed in the gcc and ASan builds
 */
#ifndef JUMP_LIVE_CYCLES
#define JUMP_LIVE_CYCLES 150
#endif

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
	uint64_t x = (uint64_t)(r->cpu + 1) * 0x9e3779b97f4a7c15ull;
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
		if (pt_jcc32(x & 1) != ((x & 1) ? 4 : 3))
			r->wrong++;
		r->calls++;
	}
	return NULL;
}

Test(jump, live_optimize_4_threads, .timeout = 300)
{
	struct runner run[4];
	atomic_int stop = 0;
	struct hits h = { 0 };
	uint64_t *cold, optimised = 0;
	uint8_t before[3][16];
	const uintptr_t at[3] = { A(pt_slow), A(pt_add), A(pt_jcc32) };
	const uintptr_t fs[3] = { A(pt_slow), A(pt_add), A(pt_jcc32) };
	const uintptr_t fe[3] = { A(pt_slow_end), A(pt_add_end), A(pt_jcc32_end) };
	size_t i, k;
	int c;

	cold = mmap(NULL, COLD_WORDS * 8, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
		    0);
	cr_assert_neq(cold, MAP_FAILED);
	for (i = 0; i < COLD_WORDS; i++)
		cold[i] = i * 2654435761u;
	for (k = 0; k < 3; k++)
		memcpy(before[k], (const void *)at[k], 16);
	for (c = 0; c < 4; c++) {
		run[c] = (struct runner){ .cpu = c, .cold = cold, .stop = &stop };
		cr_assert_eq(pthread_create(&run[c].th, NULL, run_slow, &run[c]), 0);
	}
	for (i = 0; i < JUMP_LIVE_CYCLES; i++) {
		struct fdr_probe_site *s[3];
		char why[256];

		for (k = 0; k < 3; k++) {
			int ret;

			cr_assert_eq(fdr_probe_arm(at[k], count_hit, &h, &s[k]), 0, "cycle %zu", i);
			ret = fdr_probe_optimize(s[k], fs[k], fe[k] - fs[k], why, sizeof(why));
			cr_assert(ret == 0 || ret == -ETIMEDOUT, "cycle %zu: %s", i, why);
			optimised += ret == 0;
		}
		if (i % 8 == 0)
			sched_yield(); /* let the runners hit it */
		if (i % 2)
			cr_assert_geq(fdr_probe_set_optimize(0), 0);
		if (i % 4 == 1)
			cr_assert_geq(fdr_probe_set_optimize(1), 0);
		for (k = 0; k < 3; k++)
			cr_assert_eq(fdr_probe_disarm(s[k]), 0);
		cr_assert_eq(fdr_probe_set_optimize(1), 0);
	}
	atomic_store(&stop, 1);
	for (c = 0; c < 4; c++) {
		cr_assert_eq(pthread_join(run[c].th, NULL), 0);
		cr_assert_eq(run[c].wrong, 0, "thread %d: %lu wrong results of %lu", c,
			     (unsigned long)run[c].wrong, (unsigned long)run[c].calls);
	}
	for (k = 0; k < 3; k++)
		cr_assert_eq(memcmp(before[k], (const void *)at[k], 16), 0);
	cr_log_info("calls %lu %lu %lu %lu, hits %lu, optimised %lu of %d\n",
		    (unsigned long)run[0].calls, (unsigned long)run[1].calls,
		    (unsigned long)run[2].calls, (unsigned long)run[3].calls,
		    (unsigned long)atomic_load(&h.n), (unsigned long)optimised,
		    3 * JUMP_LIVE_CYCLES);
	cr_assert_gt(atomic_load(&h.n), 0, "the probes were hit");
	cr_assert_gt(optimised, 3 * JUMP_LIVE_CYCLES / 2, "nearly every optimisation went through");
	munmap(cold, COLD_WORDS * 8);
}

/* ---- no handler after the disarm returned, jump hits in flight ---- */

#define ALIVE_CYCLES 60
struct alive {
	atomic_int magic; /* 1 while armed; 2 from the return of its disarm */
	atomic_ulong n;
};
static atomic_ulong late_handlers;

/* general registers only (FDR_PROBE_ARM_NOVEC): the arg must be alive throughout */
__attribute__((target("general-regs-only"))) static void check_alive(const struct fdr_probe_regs *r,
								     void *arg)
{
	struct alive *a = arg;
	volatile int i;

	(void)r;
	if (atomic_load(&a->magic) != 1)
		atomic_fetch_add(&late_handlers, 1);
	atomic_fetch_add(&a->n, 1);
	for (i = 0; i < 200; i++) /* a window for the disarm to return in, were it wrong */
		;
	if (atomic_load(&a->magic) != 1)
		atomic_fetch_add(&late_handlers, 1);
}

static void *run_add(void *arg)
{
	struct runner *r = arg;
	uint64_t (*volatile add)(uint64_t, uint64_t) = pt_add;
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(r->cpu % 2, &set);
	(void)pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	while (!atomic_load_explicit(r->stop, memory_order_relaxed)) {
		if (add(r->calls, 3) != r->calls + 3)
			r->wrong++;
		r->calls++;
	}
	return NULL;
}

/*
 * fdr_probe_disarm() returns once no handler of the probe runs, jump hits
 * included (they are in flight in their thread's slot, not in "active"): 4
 * threads call pt_add, kept optimised by a first probe, while a second probe
 * on it is armed and disarmed 60 times (the window stays a jmp: hits go on
 * through the trampoline during the disarm), each time with a new argument
 * marked dead as the disarm returns; a handler that sees it dead, at its start
 * or at its end, is one too late. Every other cycle the handler goes through
 * fdr_vcall() (armed without NOVEC).
 */
Test(jump, no_handler_after_disarm, .timeout = 120)
{
	static struct alive arg[ALIVE_CYCLES];
	struct runner run[4];
	struct fdr_probe_site *keep;
	atomic_int stop = 0;
	atomic_ulong kept = 0;
	unsigned long hits = 0;
	char why[256];
	int c, i, k;

	cr_assert_eq(fdr_probe_arm_flags(A(pt_add), FDR_PROBE_ARM_NOVEC, count_nv, &kept, &keep),
		     0);
	cr_assert_eq(fdr_probe_optimize(keep, FN(pt_add) - A(pt_add), why, sizeof(why)), 0, "%s",
		     why);
	for (c = 0; c < 4; c++) {
		run[c] = (struct runner){ .cpu = c, .stop = &stop };
		cr_assert_eq(pthread_create(&run[c].th, NULL, run_add, &run[c]), 0);
	}
	for (i = 0; i < ALIVE_CYCLES; i++) {
		struct fdr_probe_site *s;
		unsigned int flags = i % 2 ? 0 : FDR_PROBE_ARM_NOVEC | FDR_PROBE_ARM_NOCOUNT;

		atomic_store(&arg[i].magic, 1);
		cr_assert_eq(fdr_probe_arm_flags(A(pt_add), flags, check_alive, &arg[i], &s), 0);
		cr_assert_eq(*(volatile uint8_t *)A(pt_add), 0xe9, "cycle %d: still a jmp", i);
		for (k = 0; k < 1000 && atomic_load(&arg[i].n) < 20; k++)
			sched_yield();
		cr_assert_eq(fdr_probe_disarm(s), 0);
		atomic_store(&arg[i].magic, 2);
		hits += atomic_load(&arg[i].n);
	}
	atomic_store(&stop, 1);
	for (c = 0; c < 4; c++) {
		cr_assert_eq(pthread_join(run[c].th, NULL), 0);
		cr_assert_eq(run[c].wrong, 0, "thread %d: %lu wrong results", c,
			     (unsigned long)run[c].wrong);
	}
	cr_assert_eq(fdr_probe_disarm(keep), 0);
	cr_log_info("hits %lu, of the keeper %lu\n", hits, (unsigned long)atomic_load(&kept));
	cr_assert_eq(atomic_load(&late_handlers), 0, "%lu handlers ran after their disarm",
		     (unsigned long)atomic_load(&late_handlers));
	cr_assert_gt(hits, 0);
}
