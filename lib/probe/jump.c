// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * jump.c - jump-optimised probes: an armed int3 probe becomes a jmp rel32 to a
 * trampoline of its own, so a hit costs a call instead of a trap.
 *
 * The window is the run of whole instructions that covers the 5 bytes of a
 * jmp rel32 from the probed address A. fdr_probe_optimize() takes an armed
 * probe, entry or return (the int3 form works meanwhile), and the bounds of
 * its function, and turns it into
 *
 *	A:     e9 <rel32> [cc ...]         tail padded with int3, never run
 *	tramp: a struct fdr_probe_regs below the red zone (FLAGS by pushfq,
 *	       the rest by moves: IP = A, SP as A sees it)
 *	       cld if DF is set; align the stack to 16 (64 and xsavec the
 *	       vector state: below)
 *	       fdr_probe_fire(site, &regs)   the int3 path's rules (engine.c)
 *	       (restore the vector state), FLAGS: DF or hijacked? to slow
 *	back:  the flags (sahf), the registers the C code may change (and
 *	       %rbx, the frame), %rsp
 *	body:  insn 0 relocated (fdr_reloc_emit), resume = next copy
 *	       ...
 *	       insn n-1 relocated, resume = A + window length
 *	slow:  std if DF; not hijacked: to back; else the same way back with
 *	       body's address below the stack, %rsp past the return address,
 *	       and a jmp to tramp.S's fdr_probe_ret_call, which calls body
 *	       (jp_emit_slow())
 *
 * Vector registers: a probe at a function's entry sees its vector arguments
 * live, and any C code may clobber them (glibc's AVX/EVEX memcpy clobbers
 * ymm/zmm and ends with vzeroupper). In the usual build (FDR_HIT_NOVEC) the
 * trampoline saves none of them: fdr_probe_fire() and the agent's recording
 * path are compiled with -mgeneral-regs-only and call no libc, and a handler
 * not armed with FDR_PROBE_ARM_NOVEC is called through fdr_vcall(), which
 * saves the state around it (docs/design/probes.md, "A hit without the vector
 * state"). Where the build cannot promise that (sanitizers, a compiler
 * without the flag) the trampoline saves the x87/SSE/AVX/AVX-512 state itself
 * with XSAVEC (XSAVE, FXSAVE where missing), only the components enabled in
 * XCR0 and among x87, SSE, AVX, opmask, ZMM (mask 0xe7: never AMX tiles nor
 * PKRU).
 *
 * Safety: a window is patched only when all of these hold (else the probe
 * stays int3, and fdr_probe_optimize() says why):
 *   - the whole function decodes linearly (Zydis), A is an instruction
 *     boundary, and the window ends inside the function;
 *   - every window instruction can be relocated (reloc.c's rules), and every
 *     one but the last falls through: no jmp, ret, call (its return address
 *     would be inside the window), ud2 or hlt before the last;
 *   - no relative branch of the function (jmp, jcc, call, loop, xbegin)
 *     targets the window's interior (A+1 .. A+len-1);
 *   - the function has no indirect jmp other than through a RIP-relative
 *     pointer (a tail call through the GOT): a jump table could target the
 *     interior, and fdr does not read jump tables;
 *   - no other armed probe lies in the window. The probes of A, return
 *     probes included, all run from the trampoline: fdr_probe_fire() makes
 *     a return probe's hijack as the SIGTRAP handler would.
 * Branches from outside the function (another function's cold part jumping
 * back in) are not looked for: the caller gives the function, nothing more.
 *
 * Patching (the kernel's text_poke_bp protocol), under the engine lock:
 *	1. the int3 is on A's first byte already (the probe is armed);
 *	2. the trampoline is written (r-x page near A, fdr_patch_write, never W+X);
 *	3. site->jump_resume = the body: from now on an int3 hit resumes in the
 *	   trampoline's copy of the window, never in the window itself; wait until
 *	   no SIGTRAP handler of the site runs (one may have read it before);
 *	4. every other thread (/proc/self/task) that is not blocked outside the
 *	   window (/proc/self/task/TID/syscall: jp_parked(); a signal would end
 *	   its nanosleep() or poll() with EINTR) gets FDR_PROBE_SIG_FIX, a
 *	   real-time signal (rt_tgsigqueueinfo, SI_QUEUE, a magic value and a
 *	   round number): its handler, jp_sigfix(), looks at the interrupted RIP in
 *	   the ucontext. Inside the interior (it is at an instruction boundary: a
 *	   thread there runs the original code) or in the site's XOL slot (a hit
 *	   resumed there before step 3), RIP moves to the equivalent address in
 *	   the trampoline's body. The thread acks; the patcher waits for every ack
 *	   (2 s at most: a thread blocking the signal with a raw rt_sigprocmask
 *	   never answers, and the probe stays int3). Not SIGTRAP: a standard
 *	   signal does not queue, so ours would merge with an int3's pending
 *	   SIGTRAP (one of the two lost). The engine's SIGTRAP handler runs with
 *	   the signal blocked, so a thread in it is looked at once it returns, at
 *	   the RIP the handler chose. A window of one instruction (5 bytes or
 *	   more) skips this step: it has no interior, and its XOL slot's copy
 *	   goes back to the window's end; no thread is signalled;
 *	5. the tail (A+1 .. A+len-1: rel32 and int3 padding) is written, sync;
 *	6. 0xe9 goes on A, sync.
 * After step 3, no thread can enter the interior: A traps (and resumes in the
 * body), branches into it were excluded, a call in the window is its last
 * instruction (returns go after the window). Moving a thread rather than
 * waiting for it to leave is deterministic: a thread preempted for seconds
 * in the window would make a wait fail.
 *
 * Not covered: a thread that was interrupted inside the window by a signal
 * and is still in that signal's handler (blocked in it, or in a handler that
 * never returns soon). Our signal then interrupts the handler, and the
 * window address lies in the outer signal frame, which fdr cannot find
 * reliably (nothing links the frames; scanning the stack for the restorer's
 * address would guess). When the handler returns, it resumes in the middle
 * of the jmp: a crash. docs/design/probes.md discusses it. A window of one
 * instruction has no middle: such a frame can only be at A or past the end.
 *
 * Unoptimising (before a disarm, before arming a probe inside the window, or
 * when optimisation is switched off) goes back the same way: int3 on A, sync
 * (hits trap and resume in the trampoline), the original tail, sync, then
 * jump_resume = 0 (hits resume as int3 hits do). The int3 stays: the probe is
 * armed in its int3 form. Nothing runs in the interior meanwhile. Trampolines
 * are never freed nor rewritten with other bytes: a thread may still be in
 * one (as for the XOL slots); re-optimising a window with the same bytes
 * reuses its trampoline.
 */
#define _GNU_SOURCE
#include <cpuid.h>
#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include <Zydis/Zydis.h>

#include "jump.h"
#include "probe-local.h"
#include "reloc.h"

/* tramp.S: `call *-16(%rsp)`, just before fdr_probe_ret_tramp (jp_emit_slow()) */
extern const char fdr_probe_ret_call[] __attribute__((visibility("hidden")));

#define JP_MAX_INSNS 5 /* a 5-byte window holds at most 5 instructions */
#define JP_MAX_LEN (4 + FDR_RELOC_MAX_LEN) /* the last one starts at A+4 at most */
#define JP_TRAMP_SIZE 1024 /* 700 bytes at most (the vector state saved, 5 instructions) */
#define JP_SLOW_MAX 160 /* jp_emit_slow()'s length: 122 bytes */
#define JP_PAGE 4096
#define JP_MAX_FUNC_LEN (16u << 20)
#define JP_MAGIC 0x6664726aull /* "fdrj": si_value's high half of a fix-up request */
#define JP_ACK_WAIT_NS 2000000000ll
#define JP_BUSY_MAX 64 /* runnable threads given a moment to block (jp_fix_threads()) */
#define JP_PARK_WAIT_NS 50000ll

struct jp_win {
	uintptr_t addr; /* A */
	uint8_t len; /* window bytes, >= 5 */
	uint8_t n; /* instructions */
	uint8_t orig[JP_MAX_LEN]; /* the original bytes of the window */
	uintptr_t iaddr[JP_MAX_INSNS]; /* each instruction's address */
	uintptr_t tcopy[JP_MAX_INSNS]; /* its relocated copy in the trampoline */
	uintptr_t tramp; /* 0: none made yet */
	uintptr_t slot; /* the site's XOL slot, and how long its copy of insn 0 is */
	int slot_len;
	int patched; /* a tail byte (or more) of the window holds the jmp */
	int wanted; /* fdr_probe_optimize() was asked: re-tried when switched back on */
	uintptr_t func_start;
	size_t func_len;
};

static struct jp_win *jp_wins[FDR_PROBE_SITES]; /* under the engine lock */

/*
 * Each site the engine ever made, @i its table index (@u counts): windows
 * exist only for those (under the engine lock, as jp_wins)
 */
#define JP_FOR_EACH_SITE(u, i) \
	for ((u) = 0; (u) < fdr_probe_nused() && ((i) = fdr_probe_used_at(u), 1); (u)++)
static int jp_enabled = -1; /* -1: FDR_PROBE_OPTIMIZE not read yet */

/* Trampoline pages: JP_TRAMP_SIZE pieces handed out from the front, never reclaimed. */
struct jp_page {
	uintptr_t base;
	unsigned int used;
	struct jp_page *next;
};
static struct jp_page *jp_pages;

/* The vector state the trampoline saves: how, which components, how many bytes. */
enum { JP_FXSAVE, JP_XSAVE, JP_XSAVEC };
static int jp_xs_kind = -1;
static uint32_t jp_xs_mask;
static uint32_t jp_xs_size;
static uint16_t jp_cs, jp_ss;

/*
 * The fix-up request in flight (step 4), read by other threads' jp_sigfix(): gen 0 when none. A handler counts itself in 'busy' while it looks,
 * and a round ends only when none looks (a late one then sees another gen).
 */
static struct {
	atomic_uint gen;
	_Atomic(const struct jp_win *) w;
	atomic_uint acks;
	atomic_int bad; /* a thread was somewhere it cannot be moved from */
	atomic_int busy;
} jp_fix;
static uint32_t jp_gen;

static void jp_xs_init(void)
{
	unsigned int a, b, c, d, i;
	uint32_t lo, hi;

	if (jp_xs_kind >= 0)
		return;
	__asm__ volatile("mov %%cs,%0" : "=r"(jp_cs));
	__asm__ volatile("mov %%ss,%0" : "=r"(jp_ss));
	jp_xs_kind = JP_FXSAVE;
	jp_xs_size = 512;
	if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_OSXSAVE))
		return;
	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	jp_xs_mask = lo & 0xe7; /* x87, SSE, AVX, opmask, ZMM_Hi256, Hi16_ZMM */
	jp_xs_size = 576;
	/* the standard format's size covers the compacted one */
	for (i = 2; i < 8; i++) {
		if (!(jp_xs_mask & (1u << i)))
			continue;
		__cpuid_count(0xd, i, a, b, c, d);
		if (b + a > jp_xs_size)
			jp_xs_size = b + a;
	}
	__cpuid_count(0xd, 1, a, b, c, d);
	jp_xs_kind = (a & 2) ? JP_XSAVEC : JP_XSAVE;
}

/* ---- the trampoline's code ---- */

static uint8_t *jp_put(uint8_t *p, const void *bytes, size_t n)
{
	memcpy(p, bytes, n);
	return p + n;
}

static uint8_t *jp_movabs(uint8_t *p, uint8_t op, uint64_t v)
{
	*p++ = 0x48;
	*p++ = op; /* 0xb8 + register */
	return jp_put(p, &v, 8);
}

/* mov $mask,%eax ; xor %edx,%edx ; then the save or restore of the vector state */
static uint8_t *jp_xs(uint8_t *p, int restore)
{
	if (jp_xs_kind != JP_FXSAVE) {
		*p++ = 0xb8;
		p = jp_put(p, &jp_xs_mask, 4);
		p = jp_put(p, "\x31\xd2", 2);
	}
	if (restore)
		return jp_put(p,
			      jp_xs_kind == JP_FXSAVE ? "\x48\x0f\xae\x0c\x24" : /* fxrstor64 */
							"\x48\x0f\xae\x2c\x24", /* xrstor64 */
			      5);
	return jp_put(p,
		      jp_xs_kind == JP_FXSAVE ? "\x48\x0f\xae\x04\x24" : /* fxsave64 (%rsp) */
		      jp_xs_kind == JP_XSAVE  ? "\x48\x0f\xae\x24\x24" : /* xsave64 (%rsp) */
						"\x48\x0f\xc7\x24\x24", /* xsavec64 (%rsp) */
		      5);
}

/* mov %REG,disp(%rsp) or mov disp(%rsp),%REG (@load), REG 0..15 in enum fdr_reg's order */
static uint8_t *jp_mov_rsp(uint8_t *p, unsigned int reg, int32_t disp, int load)
{
	/* enum fdr_reg's order to the machine's register numbers */
	static const uint8_t hw[16] = { 0, 3, 1, 2, 6, 7, 5, 4, 8, 9, 10, 11, 12, 13, 14, 15 };
	uint8_t r = hw[reg];

	*p++ = (uint8_t)(0x48 | (r >= 8 ? 4 : 0)); /* REX.W, REX.R */
	*p++ = load ? 0x8b : 0x89;
	if (disp >= -128 && disp < 128) {
		*p++ = (uint8_t)(0x44 | (r & 7) << 3); /* mod 01, rm 100: SIB */
		*p++ = 0x24; /* (%rsp) */
		*p++ = (uint8_t)disp;
		return p;
	}
	*p++ = (uint8_t)(0x84 | (r & 7) << 3); /* mod 10: disp32 */
	*p++ = 0x24;
	return jp_put(p, &disp, 4);
}

/*
 * The save and call part for @s at @addr; returns its end. The struct
 * fdr_probe_regs is written at B = the stack pointer less the red zone and
 * its 168 bytes: FLAGS by pushfq in its slot, the rest by moves (one store
 * each, where a push of a 64-bit constant takes two).
 */
static uint8_t *jp_emit_call(uint8_t *p, void *s, uintptr_t addr)
{
	uint32_t xs = jp_xs_size + 64, d;
	void (*fire)(void *, struct fdr_probe_regs *) = fdr_probe_fire;
	unsigned int i;

	_Static_assert(sizeof(struct fdr_probe_regs) == 168, "21 slots");
	_Static_assert(FDR_REG_SP == 7 && FDR_REG_IP == 16 && FDR_REG_FLAGS == 17 &&
			       FDR_REG_CS == 18 && FDR_REG_SS == 19 && FDR_REG_R15 == 15,
		       "the offsets below");
	/* lea -152(%rsp),%rsp: the red zone (128), probe_addr, SS and CS (24) */
	p = jp_put(p, "\x48\x8d\xa4\x24\x68\xff\xff\xff", 8);
	*p++ = 0x9c; /* pushfq: FLAGS at B + 136 */
	/* lea -136(%rsp),%rsp: B */
	p = jp_put(p, "\x48\x8d\xa4\x24\x78\xff\xff\xff", 8);
	p = jp_mov_rsp(p, FDR_REG_AX, 0, 0);
	p = jp_movabs(p, 0xb8, addr); /* movabs $addr,%rax */
	p = jp_mov_rsp(p, FDR_REG_AX, 8 * FDR_REG_IP, 0); /* IP */
	p = jp_mov_rsp(p, FDR_REG_AX, 160, 0); /* probe_addr */
	p = jp_put(p, "\x48\xc7\x84\x24\x90\x00\x00\x00", 8); /* movq $cs,144(%rsp) */
	d = jp_cs;
	p = jp_put(p, &d, 4);
	p = jp_put(p, "\x48\xc7\x84\x24\x98\x00\x00\x00", 8); /* movq $ss,152(%rsp) */
	d = jp_ss;
	p = jp_put(p, &d, 4);
	for (i = FDR_REG_BX; i <= FDR_REG_R15; i++)
		if (i != FDR_REG_SP)
			p = jp_mov_rsp(p, i, (int32_t)(8 * i), 0);
	/* lea 296(%rsp),%rax ; mov %rax,56(%rsp): SP as A sees it (168 + 128 above) */
	p = jp_put(p, "\x48\x8d\x84\x24\x28\x01\x00\x00\x48\x89\x44\x24\x38", 13);
	p = jp_put(p, "\x48\x89\xe3", 3); /* mov %rsp,%rbx */
	/* cld where DF is set (rare: cld is microcoded); testb $4,137(%rsp) ; jz 1f ; cld ; 1: */
	p = jp_put(p, "\xf6\x84\x24\x89\x00\x00\x00\x04\x74\x01\xfc", 11);
#ifdef FDR_HIT_NOVEC
	(void)xs;
	p = jp_put(p, "\x48\x83\xe4\xf0", 4); /* and $-16,%rsp */
#else
	p = jp_put(p, "\x48\x81\xec", 3); /* sub $xs,%rsp */
	p = jp_put(p, &xs, 4);
	p = jp_put(p, "\x48\x83\xe4\xc0\x31\xc0", 6); /* and $-64,%rsp ; xor %eax,%eax */
	if (jp_xs_kind != JP_FXSAVE) {
		/* the XSAVE header (bytes 512..575) must be zero for XRSTOR */
		for (d = 512; d < 576; d += 8) {
			p = jp_put(p, "\x48\x89\x84\x24", 4); /* mov %rax,d(%rsp) */
			p = jp_put(p, &d, 4);
		}
	}
	p = jp_xs(p, 0);
#endif
	p = jp_movabs(p, 0xbf, (uint64_t)(uintptr_t)s); /* movabs $site,%rdi */
	p = jp_put(p, "\x48\x89\xde", 3); /* mov %rbx,%rsi */
	p = jp_movabs(p, 0xb8, (uint64_t)(uintptr_t)fire); /* movabs $fire,%rax */
	return jp_put(p, "\xff\xd0", 2); /* call *%rax */
}

/*
 * The flags back without popfq (microcoded: a fifth of a hit), from FLAGS in
 * %eax. The hit changed only the arithmetic flags and DF (cld; DF is set again
 * before this, where it was): OF through add $0x7f to 0 or 1, the rest from AH
 * by sahf. Then the registers the C code may change (%rbp and %r12-%r15 are
 * callee-saved, and %rbx, the frame, is reloaded last). Nothing here changes
 * a flag (mov).
 */
static uint8_t *jp_emit_regs(uint8_t *p)
{
	static const uint8_t caller_saved[] = { FDR_REG_CX,  FDR_REG_DX,  FDR_REG_SI,
						FDR_REG_DI,  FDR_REG_R8,  FDR_REG_R9,
						FDR_REG_R10, FDR_REG_R11, FDR_REG_AX };
	unsigned int i;

	p = jp_put(p, "\x89\xc2\xc1\xea\x0b\x83\xe2\x01", 8); /* edx = OF (bit 11) */
	p = jp_put(p, "\x88\xc4\x88\xd0\x04\x7f\x9e",
		   7); /* ah = al ; al = dl ; add $0x7f,%al ; sahf */
	for (i = 0; i < sizeof(caller_saved); i++)
		p = jp_mov_rsp(p, caller_saved[i], (int32_t)(8 * caller_saved[i]), 1);
	return jp_mov_rsp(p, FDR_REG_BX, 8 * FDR_REG_BX, 1);
}

/*
 * The way back after the call, to the displaced instructions that follow it:
 * the vector state (if saved), FLAGS into %eax, the flags and registers
 * (jp_emit_regs()), %rsp as A saw it. One test of FLAGS sends both rare cases
 * to jp_emit_slow()'s code after the displaced instructions: DF was set, or
 * fdr_probe_fire() hijacked the return address (FDR_PROBE_FLAGS_CALL, bit 31
 * of the saved FLAGS, reserved and 0 in the real register). Returns its end; @jnz
 * gets where the rel32 of that test's jnz lies, @back where the slow code
 * comes back to.
 */
static uint8_t *jp_emit_back(uint8_t *p, uint8_t **jnz, uint8_t **back)
{
#ifndef FDR_HIT_NOVEC
	p = jp_xs(p, 1);
#else
	(void)jp_xs;
#endif
	p = jp_put(p, "\x48\x89\xdc", 3); /* mov %rbx,%rsp */
	p = jp_put(p, "\x48\x8b\x84\x24\x88\x00\x00\x00", 8); /* mov 136(%rsp),%rax: FLAGS */
	/* test $(DF | FDR_PROBE_FLAGS_CALL),%eax ; jnz <slow> (rel32, filled by jp_emit_slow()) */
	p = jp_put(p, "\xa9\x00\x04\x00\x80\x0f\x85\x00\x00\x00\x00", 11);
	*jnz = p - 4;
	*back = p;
	p = jp_emit_regs(p);
	/* lea 296(%rsp),%rsp: the struct and the red zone */
	return jp_put(p, "\x48\x8d\xa4\x24\x28\x01\x00\x00", 8);
}

/*
 * The rare cases of jp_emit_back(), after the displaced instructions (at
 * @body), with FLAGS in %eax: std where DF was set, then, if the return
 * address was not hijacked, back to @back. Otherwise the call path: slot S =
 * A's %rsp holds tramp.S's fdr_probe_ret_tramp now; this writes @body at S -
 * 8 (below A's stack: dead at a function's first instruction), loads back the
 * flags and registers, sets %rsp to S + 8 and jumps to tramp.S's
 * fdr_probe_ret_call, a `call *-16(%rsp)` placed just before
 * fdr_probe_ret_tramp: it writes fdr_probe_ret_tramp into S again and calls
 * @body. The function's stack is as it was, S holding the trampoline as after
 * a jump to @body, but the CPU's return stack now predicts the function's ret
 * (a mispredicted return costs about 9 ns here; docs/design/probes.md, "A
 * return that is predicted"). Returns its end.
 */
static uint8_t *jp_emit_slow(uint8_t *p, uint8_t *jnz, const uint8_t *back, uintptr_t body)
{
	uintptr_t call = (uintptr_t)fdr_probe_ret_call;
	int32_t d = (int32_t)(p - (jnz + 4));

	_Static_assert(FDR_PROBE_FLAGS_CALL == 1u << 31, "the test and the bt below");
	memcpy(jnz, &d, 4);
	p = jp_put(p, "\x0f\xba\xe0\x0a\x73\x01\xfd", 7); /* bt $10,%eax ; jnc 1f ; std ; 1: */
	p = jp_put(p, "\x0f\xba\xe0\x1f\x0f\x83", 6); /* bt $31,%eax ; jnc <back> */
	d = (int32_t)(back - (p + 4));
	p = jp_put(p, &d, 4);
	p = jp_movabs(p, 0xba, body); /* movabs $body,%rdx */
	p = jp_mov_rsp(p, FDR_REG_DX, 288, 0); /* S - 8 = B + 296 - 8 */
	p = jp_emit_regs(p);
	/* lea 304(%rsp),%rsp (S + 8) ; jmp *0(%rip) ; .quad fdr_probe_ret_call */
	p = jp_put(p, "\x48\x8d\xa4\x24\x30\x01\x00\x00\xff\x25\x00\x00\x00\x00", 14);
	return jp_put(p, &call, 8);
}

/* Under the lock: JP_TRAMP_SIZE bytes of r-x memory within reach of @addr. */
static uintptr_t jp_tramp_alloc(uintptr_t addr)
{
	const uintptr_t reach = ((uintptr_t)1 << 31) - 2 * JP_PAGE;
	struct jp_page *pg;
	uintptr_t base;

	for (pg = jp_pages; pg; pg = pg->next) {
		uintptr_t dist = pg->base > addr ? pg->base - addr : addr - pg->base;

		if (pg->used + JP_TRAMP_SIZE <= JP_PAGE && dist < reach)
			goto found;
	}
	base = fdr_patch_alloc_near(addr, JP_PAGE);
	if (!base)
		return 0;
	pg = calloc(1, sizeof(*pg));
	if (!pg) {
		munmap((void *)base, JP_PAGE);
		return 0;
	}
	pg->base = base;
	pg->next = jp_pages;
	jp_pages = pg;
found:
	base = pg->base + pg->used;
	pg->used += JP_TRAMP_SIZE;
	return base;
}

/* Under the lock: write @w's trampoline for @s (w->tramp, w->tcopy[] set). */
static int jp_tramp_make(unsigned int idx, struct jp_win *w, const struct fdr_reloc_insn *insns,
			 char *why, size_t n)
{
	uint8_t code[JP_TRAMP_SIZE], *p, *jnz, *back;
	uintptr_t at = jp_tramp_alloc(w->addr), body;
	int64_t rel;
	int i, ret;

	if (!at) {
		if (why && n)
			snprintf(why, n, "no free page within 2 GiB of 0x%lx for a trampoline",
				 (unsigned long)w->addr);
		return -ENOMEM;
	}
	rel = (int64_t)(at - (w->addr + 5));
	if (rel < INT32_MIN || rel > INT32_MAX)
		return -ERANGE;
	memset(code, 0xcc, sizeof(code));
	p = jp_emit_call(code, fdr_probe_site_at(idx), w->addr);
	p = jp_emit_back(p, &jnz, &back);
	body = at + (uintptr_t)(p - code);
	for (i = 0; i < w->n; i++) {
		uintptr_t here = at + (uintptr_t)(p - code), resume;
		uint8_t tmp[FDR_RELOC_SLOT_MAX];
		int len;

		/* its length first (the resume jmp is a rel32 either way), then for real */
		len = fdr_reloc_emit(&insns[i], here, here + FDR_RELOC_SLOT_MAX, tmp, sizeof(tmp));
		if (len < 0)
			goto range;
		resume = i + 1 < w->n ? here + (uintptr_t)len : w->addr + w->len;
		if ((size_t)(p - code) + FDR_RELOC_SLOT_MAX > sizeof(code))
			return -ENOSPC;
		ret = fdr_reloc_emit(&insns[i], here, resume, p, FDR_RELOC_SLOT_MAX);
		if (ret < 0 || (i + 1 < w->n && ret != len))
			goto range;
		w->tcopy[i] = here;
		p += ret;
	}
	if ((size_t)(p - code) + JP_SLOW_MAX > sizeof(code))
		return -ENOSPC;
	p = jp_emit_slow(p, jnz, back, body);
	ret = fdr_patch_write(at, code, sizeof(code));
	if (ret < 0)
		return ret;
	w->tramp = at;
	return 0;
range:
	if (why && n)
		snprintf(why, n, "the trampoline at 0x%lx cannot reach what the window refers to",
			 (unsigned long)at);
	return -ERANGE;
}

/* ---- which windows are safe ---- */

static int jp_refuse(char *why, size_t n, int err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int jp_refuse(char *why, size_t n, int err, const char *fmt, ...)
{
	va_list ap;

	if (why && n) {
		va_start(ap, fmt);
		vsnprintf(why, n, fmt, ap);
		va_end(ap);
	}
	return err;
}

/* Another armed address in [lo, hi)? (its int3 in the window would be overwritten) */
static int jp_other_armed(unsigned int idx, uintptr_t lo, uintptr_t hi, uintptr_t *at)
{
	unsigned int u, i;

	JP_FOR_EACH_SITE(u, i) {
		uintptr_t a = fdr_probe_addr_at(i);

		if (!a || i == idx || !fdr_probe_armed_at(i))
			continue;
		if (a >= lo && a < hi) {
			*at = a;
			return 1;
		}
	}
	return 0;
}

/*
 * Under the lock: decode the function [fs, fs+fl) and plan the window at
 * @addr (the site at @idx, or JP_NO_SITE: fdr_probe_jump_check()) into @w and
 * @insns, or say why not (-ENOTSUP and friends; the probe stays int3).
 */
#define JP_NO_SITE UINT32_MAX
static int jp_plan(unsigned int idx, uintptr_t addr, uintptr_t fs, size_t fl, struct jp_win *w,
		   struct fdr_reloc_insn *insns, char *why, size_t n)
{
	uintptr_t other;
	ZydisDecoder dec;
	ZydisDecodedInstruction in;
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	uint8_t *code;
	size_t got, off, wend;
	int ret = 0, i, boundary = 0;

	if (addr < fs || addr - fs >= fl)
		return jp_refuse(why, n, -EINVAL,
				 "0x%lx is outside the function at 0x%lx (%zu bytes)",
				 (unsigned long)addr, (unsigned long)fs, fl);
	if (fl > JP_MAX_FUNC_LEN)
		return jp_refuse(why, n, -EINVAL, "function at 0x%lx is longer than %u bytes",
				 (unsigned long)fs, JP_MAX_FUNC_LEN);
	if (!ZYAN_SUCCESS(ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64)))
		return -EINVAL;
	code = calloc(1, fl + FDR_RELOC_MAX_LEN);
	if (!code)
		return -ENOMEM;
	got = fdr_probe_read_orig(fs, code, fl);
	if (got < fl) {
		ret = jp_refuse(why, n, -EFAULT, "cannot read the function at 0x%lx",
				(unsigned long)fs);
		goto out;
	}
	/* the window: whole instructions from addr covering 5 bytes */
	memset(w, 0, sizeof(*w));
	w->addr = addr;
	for (off = 0; off < fl;) {
		int len = fdr_reloc_length(code + off, fl - off, NULL, 0);

		if (len < 0) {
			ret = jp_refuse(why, n, -EILSEQ, "bytes at 0x%lx do not decode",
					(unsigned long)(fs + off));
			goto out;
		}
		if (fs + off == addr)
			boundary = 1;
		if (fs + off >= addr)
			break;
		off += (size_t)len;
	}
	if (!boundary) {
		ret = jp_refuse(why, n, -EILSEQ, "0x%lx is not an instruction boundary",
				(unsigned long)addr);
		goto out;
	}
	while (w->len < 5) {
		if (off >= fl) {
			ret = jp_refuse(why, n, -ENOTSUP,
					"the function ends %u bytes after 0x%lx: a jmp needs 5",
					(unsigned)w->len, (unsigned long)addr);
			goto out;
		}
		ret = fdr_reloc_decode(fs + off, code + off, fl - off, &insns[w->n], why, n);
		if (ret < 0)
			goto out;
		if (off + insns[w->n].len > fl) {
			ret = jp_refuse(why, n, -ENOTSUP, "'%s' at 0x%lx runs past the function",
					insns[w->n].mnemonic, (unsigned long)(fs + off));
			goto out;
		}
		w->iaddr[w->n] = fs + off;
		w->len = (uint8_t)(w->len + insns[w->n].len);
		off += insns[w->n].len;
		w->n++;
	}
	wend = addr + w->len;
	memcpy(w->orig, code + (addr - fs), w->len);
	if (jp_other_armed(idx, addr + 1, wend, &other)) {
		ret = jp_refuse(why, n, -EBUSY, "another probe is armed at 0x%lx, in the window",
				(unsigned long)other);
		goto out;
	}
	/* every instruction of the function: who branches where */
	for (off = 0; off < fl;) {
		uintptr_t ia = fs + off;
		int k, fallthrough;

		if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(&dec, code + off, fl - off, &in, ops))) {
			ret = jp_refuse(why, n, -EILSEQ, "bytes at 0x%lx do not decode",
					(unsigned long)ia);
			goto out;
		}
		for (k = 0; k < in.operand_count; k++) {
			ZyanU64 t;

			if (ops[k].type != ZYDIS_OPERAND_TYPE_IMMEDIATE || !ops[k].imm.is_relative)
				continue;
			if (!ZYAN_SUCCESS(ZydisCalcAbsoluteAddress(&in, &ops[k], ia, &t)))
				continue;
			if (t > addr && t < wend) {
				ret = jp_refuse(
					why, n, -ENOTSUP,
					"'%s' at 0x%lx branches to 0x%lx, inside the window "
					"0x%lx..0x%lx",
					ZydisMnemonicGetString(in.mnemonic), (unsigned long)ia,
					(unsigned long)t, (unsigned long)addr, (unsigned long)wend);
				goto out;
			}
		}
		if (in.meta.category == ZYDIS_CATEGORY_UNCOND_BR) {
			for (k = 0; k < in.operand_count; k++) {
				const ZydisDecodedOperand *o = &ops[k];

				if (o->visibility != ZYDIS_OPERAND_VISIBILITY_EXPLICIT ||
				    o->type == ZYDIS_OPERAND_TYPE_IMMEDIATE)
					continue;
				if (o->type == ZYDIS_OPERAND_TYPE_MEMORY &&
				    o->mem.base == ZYDIS_REGISTER_RIP &&
				    o->mem.index == ZYDIS_REGISTER_NONE)
					continue; /* jmp *foo@GOTPCREL(%rip): a tail call */
				ret = jp_refuse(why, n, -ENOTSUP,
						"an indirect jmp at 0x%lx (a jump table?) may "
						"target the window",
						(unsigned long)ia);
				goto out;
			}
		}
		/* window instructions before the last must fall through */
		fallthrough = in.meta.category != ZYDIS_CATEGORY_UNCOND_BR &&
			      in.meta.category != ZYDIS_CATEGORY_RET &&
			      in.meta.category != ZYDIS_CATEGORY_CALL &&
			      in.mnemonic != ZYDIS_MNEMONIC_UD2 &&
			      in.mnemonic != ZYDIS_MNEMONIC_HLT;
		if (ia >= addr && ia + in.length < wend && !fallthrough) {
			ret = jp_refuse(why, n, -ENOTSUP,
					"'%s' at 0x%lx does not fall through to the rest of the "
					"window",
					ZydisMnemonicGetString(in.mnemonic), (unsigned long)ia);
			goto out;
		}
		off += in.length;
	}
	for (i = 0; i < w->n; i++) {
		if (insns[i].kind == FDR_RELOC_CALL || insns[i].kind == FDR_RELOC_CALL_IND) {
			unsigned long features = 0;

			/* as for the int3 form: a call pushed on the ordinary stack only */
			if (syscall(SYS_arch_prctl, 0x5005, &features) == 0 && (features & 1)) {
				ret = jp_refuse(why, n, -ENOTSUP,
						"a call in the window under a shadow stack");
				goto out;
			}
		}
	}
	ret = 0;
out:
	free(code);
	return ret;
}

/* ---- moving threads out of the window (step 4) ---- */

/*
 * The FDR_PROBE_SIG_FIX handler: the patcher's request, or the program's
 * signal (chained). Async-signal-safe.
 */
static void jp_sigfix(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;
	greg_t *g = uc->uc_mcontext.gregs;
	uint64_t v = (uint64_t)(uintptr_t)si->si_value.sival_ptr;
	const struct jp_win *w;
	uintptr_t rip;
	int i;

	int saved_errno = errno;

	if (si->si_code != SI_QUEUE || (v >> 32) != JP_MAGIC || si->si_pid != getpid()) {
		errno = saved_errno;
		fdr_probe_sig_chain(sig, si, ucv);
		return;
	}
	atomic_fetch_add(&jp_fix.busy, 1); /* seq_cst: before the gen load */
	if (atomic_load(&jp_fix.gen) != (uint32_t)v) {
		/* late: that round is over, and it did not count on us */
		atomic_fetch_sub(&jp_fix.busy, 1);
		errno = saved_errno;
		return;
	}
	w = atomic_load(&jp_fix.w);
	rip = (uintptr_t)g[REG_RIP];
	if (rip > w->addr && rip < w->addr + w->len) {
		for (i = 1; i < w->n && w->iaddr[i] != rip; i++)
			;
		if (i < w->n)
			g[REG_RIP] = (greg_t)w->tcopy[i];
		else
			atomic_store(&jp_fix.bad, 1); /* not a boundary: it came from elsewhere */
	} else if (w->slot && rip >= w->slot && rip < w->slot + (uintptr_t)w->slot_len) {
		/* the XOL copy of insn 0 and the trampoline's have the same layout */
		g[REG_RIP] = (greg_t)(w->tcopy[0] + (rip - w->slot));
	}
	atomic_fetch_add(&jp_fix.acks, 1);
	atomic_fetch_sub(&jp_fix.busy, 1);
	errno = saved_errno;
}

/*
 * 1 if thread @tid blocks FDR_PROBE_SIG_FIX (SigBlk in /proc/self/task/TID/
 * status), or that cannot be read: it may be in one of the program's signal
 * handlers (libfdr-probe's sigaction() blocks the signal there, signal.c),
 * whose interrupted frame may lie in the window.
 */
static int jp_blocks_fix(pid_t tid)
{
	char path[64], buf[4096], *p;
	unsigned long long blk;

	snprintf(path, sizeof(path), "/proc/self/task/%d/status", (int)tid);
	if (fdr_proc_read(path, buf, sizeof(buf)) < 0)
		return 1;
	p = strstr(buf, "\nSigBlk:");
	if (!p)
		return 1;
	errno = 0;
	blk = strtoull(p + 8, NULL, 16);
	return errno != 0 || ((blk >> (FDR_PROBE_SIG_FIX - 1)) & 1);
}

/*
 * 1 if thread @tid is blocked (in a system call or not: /proc's syscall file
 * says so, with its user instruction pointer) somewhere no fix-up is needed:
 * outside @w's interior and XOL slot. Such a thread is not signalled: when it
 * runs again it goes on from there, and from there the interior is reached
 * only through A, which traps since step 3. A signal would cut its sleep short:
 * clock_nanosleep(), nanosleep(), poll(), epoll_wait() and a few more are
 * never restarted after a handler (EINTR whatever SA_RESTART; signal(7)). 0
 * when it runs or may be runnable ("running"), cannot be read, or blocks
 * FDR_PROBE_SIG_FIX (jp_blocks_fix(): in a handler of the program's, the
 * frame it returns to may be in the window): signalled, as before.
 */
static int jp_parked(pid_t tid, const struct jp_win *w)
{
	char path[64], buf[256], *sp;
	unsigned long long pc;
	ssize_t len;

	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", (int)tid);
	len = fdr_proc_read(path, buf, sizeof(buf));
	if (len < 0 || !strncmp(buf, "running", 7))
		return 0;
	/* "NR ARG1 .. ARG6 SP PC\n", or "-1 SP PC\n" outside a system call */
	while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == ' '))
		len--;
	buf[len] = 0;
	sp = strrchr(buf, ' ');
	if (!sp || strncmp(sp + 1, "0x", 2))
		return 0;
	errno = 0;
	pc = strtoull(sp + 1, NULL, 16);
	if (errno)
		return 0;
	if (pc > w->addr && pc < w->addr + w->len)
		return 0;
	if (w->slot && pc >= w->slot && pc < w->slot + (uintptr_t)w->slot_len)
		return 0;
	return !jp_blocks_fix(tid);
}

static long long jp_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

/* FDR_PROBE_SIG_FIX to thread @tid with round @gen: 1 if sent (0: ESRCH, the thread exited) */
static unsigned int jp_send(pid_t pid, pid_t tid, uint32_t gen)
{
	siginfo_t si;

	memset(&si, 0, sizeof(si));
	si.si_signo = FDR_PROBE_SIG_FIX;
	si.si_code = SI_QUEUE;
	si.si_pid = pid;
	si.si_uid = getuid();
	si.si_value.sival_ptr = (void *)(uintptr_t)((JP_MAGIC << 32) | gen);
	return syscall(SYS_rt_tgsigqueueinfo, pid, tid, FDR_PROBE_SIG_FIX, &si) == 0;
}

/* Under the lock: every other thread has looked at its RIP for @w. 0, or -ETIMEDOUT/-EAGAIN. */
static int jp_fix_threads(const struct jp_win *w, char *why, size_t n)
{
	uint32_t gen = ++jp_gen ? jp_gen : ++jp_gen; /* never 0 */
	pid_t pid = getpid(), self = (pid_t)syscall(SYS_gettid);
	pid_t busy[JP_BUSY_MAX];
	unsigned int sent = 0, nbusy = 0, i;
	struct dirent *de;
	long long t0;
	DIR *d;
	int ret = 0;

	ret = fdr_probe_sig_take(FDR_PROBE_SIG_FIX, jp_sigfix);
	if (ret < 0)
		return jp_refuse(why, n, ret, "cannot install the handler of signal %d",
				 FDR_PROBE_SIG_FIX);
	atomic_store(&jp_fix.w, w);
	atomic_store(&jp_fix.acks, 0);
	atomic_store(&jp_fix.bad, 0);
	atomic_store(&jp_fix.gen, gen);
	d = opendir("/proc/self/task");
	if (!d) {
		ret = -errno;
		goto out;
	}
	while ((de = readdir(d))) {
		pid_t tid = (pid_t)atoi(de->d_name);

		if (tid <= 0 || tid == self || jp_parked(tid, w))
			continue;
		if (nbusy < JP_BUSY_MAX)
			busy[nbusy++] = tid;
		else
			sent += jp_send(pid, tid, gen);
	}
	closedir(d);
	/*
	 * A thread that runs may be between two sleeps: a signal that comes once
	 * it sleeps again ends that sleep (EINTR). Such threads get a moment to
	 * block again, looked at again and again without sleeping (a sleep of
	 * the patcher's, or sched_yield(), cost it a scheduler's slice among
	 * busy threads: 0.5 ms a window); those still runnable then (busy, or
	 * preempted: perhaps in the window) get the signal. Left: a thread that
	 * runs past the moment and goes to sleep just before its signal comes,
	 * or one that waits for this very CPU to run.
	 */
	t0 = jp_now_ns();
	while (nbusy > 0 && jp_now_ns() - t0 < JP_PARK_WAIT_NS) {
		for (i = 0; i < nbusy;) {
			if (jp_parked(busy[i], w))
				busy[i] = busy[--nbusy];
			else
				i++;
		}
	}
	for (i = 0; i < nbusy; i++)
		sent += jp_send(pid, busy[i], gen);
	t0 = jp_now_ns();
	while (atomic_load(&jp_fix.acks) < sent) {
		if (jp_now_ns() - t0 > JP_ACK_WAIT_NS) {
			ret = jp_refuse(why, n, -ETIMEDOUT,
					"%u of %u threads did not answer signal %d, which checks "
					"their instruction pointer (blocked?)",
					sent - atomic_load(&jp_fix.acks), sent, FDR_PROBE_SIG_FIX);
			goto out;
		}
		sched_yield();
	}
	if (atomic_load(&jp_fix.bad))
		ret = jp_refuse(why, n, -EAGAIN,
				"a thread is inside the window at 0x%lx between instructions",
				(unsigned long)w->addr);
out:
	atomic_store(&jp_fix.gen, 0); /* seq_cst: before the busy load */
	while (atomic_load(&jp_fix.busy) != 0)
		sched_yield();
	return ret;
}

/* ---- patching ---- */

/* Write @len bytes at @addr, one page at a time (the mremap path's rule). */
static int jp_write(uintptr_t addr, const uint8_t *buf, size_t len)
{
	while (len) {
		size_t room = JP_PAGE - (addr & (JP_PAGE - 1)), k = len < room ? len : room;
		int ret = fdr_patch_write(addr, buf, k);

		if (ret < 0)
			return ret;
		addr += k;
		buf += k;
		len -= k;
	}
	return 0;
}

/* Under the lock: the window of @s back to int3 + original tail. */
static int jp_unpatch(unsigned int idx, struct jp_win *w)
{
	uint8_t int3 = 0xcc;
	int ret;

	if (!w || !w->patched)
		return 0;
	ret = fdr_patch_write(w->addr, &int3, 1);
	if (ret < 0)
		return ret;
	fdr_patch_sync();
	ret = jp_write(w->addr + 1, w->orig + 1, w->len - 1u);
	if (ret < 0)
		return ret;
	fdr_patch_sync();
	w->patched = 0;
	fdr_probe_set_resume_at(idx, 0);
	return 0;
}

static int jp_is_enabled(void)
{
	if (jp_enabled < 0) {
		const char *e = getenv("FDR_PROBE_OPTIMIZE");

		jp_enabled = !(e && e[0] == '0');
	}
	return jp_enabled;
}

/* Under the lock: optimise the armed address @idx, in the function [fs, fs+fl). */
static int jp_optimize(unsigned int idx, uintptr_t fs, size_t fl, char *why, size_t n)
{
	struct fdr_reloc_insn insns[JP_MAX_INSNS];
	struct jp_win plan, *w = jp_wins[idx];
	uint8_t tail[JP_MAX_LEN], e9 = 0xe9;
	const struct fdr_reloc_insn *in0;
	int32_t rel;
	int ret;

	if (w && w->patched)
		return 0;
	ret = jp_plan(idx, fdr_probe_addr_at(idx), fs, fl, &plan, insns, why, n);
	if (ret < 0)
		return ret;
	if (!w) {
		w = calloc(1, sizeof(*w));
		if (!w)
			return -ENOMEM;
		jp_wins[idx] = w;
	}
	/* a trampoline for the same bytes at the same address is reused, never rewritten */
	if (!(w->tramp && w->addr == plan.addr && w->len == plan.len &&
	      !memcmp(w->orig, plan.orig, plan.len))) {
		plan.tramp = 0;
		plan.func_start = fs;
		plan.func_len = fl;
		plan.wanted = 1;
		jp_xs_init();
		ret = jp_tramp_make(idx, &plan, insns, why, n);
		if (ret < 0)
			return ret;
		*w = plan;
	}
	w->func_start = fs;
	w->func_len = fl;
	w->wanted = 1;
	/* where a thread in the XOL slot of insn 0 goes: the same layout in the body */
	in0 = fdr_probe_insn_at(idx);
	w->slot = fdr_probe_slot_at(idx);
	w->slot_len = 0;
	if (w->slot) {
		uint8_t a[FDR_RELOC_SLOT_MAX], b[FDR_RELOC_SLOT_MAX];
		int la = fdr_reloc_emit(in0, w->slot, w->addr + in0->len, a, sizeof(a));
		int lb = fdr_reloc_emit(in0, w->tcopy[0], w->addr + in0->len, b, sizeof(b));

		/*
		 * A copied instruction ends with its jmp back, rel32 or, where the
		 * XOL page is out of reach of the code (another object's probe took
		 * it), jmp *0(%rip): only the offset where that jmp starts must
		 * agree, and with a jmp to itself both take the rel32 form.
		 */
		if (la >= 0 && lb >= 0 && la != lb &&
		    (in0->kind == FDR_RELOC_COPY || in0->kind == FDR_RELOC_CALL_IND)) {
			la = fdr_reloc_emit(in0, w->slot, w->slot, a, sizeof(a));
			lb = fdr_reloc_emit(in0, w->tcopy[0], w->tcopy[0], b, sizeof(b));
		}
		if (la < 0 || la != lb)
			return jp_refuse(
				why, n, -ERANGE,
				"the out-of-line copy of 0x%lx and the trampoline's differ",
				(unsigned long)w->addr);
		w->slot_len = la;
	}
	/* 3: int3 hits resume in the body; wait for handlers that read it before */
	fdr_probe_set_resume_at(idx, w->tcopy[0]);
	fdr_probe_wait_idle_at(idx);
	/*
	 * 4: no thread in the interior or the slot. A window of one instruction
	 * (5 bytes or more: a 5-byte nop, sub $imm32,%rsp, a call) has no
	 * interior: no thread can stop between A+1 and its end, and its slot's
	 * copy goes back to the window's end. No thread is looked at or
	 * signalled then (no sleep cut short: jp_parked()).
	 */
	if (w->n > 1) {
		ret = jp_fix_threads(w, why, n);
		if (ret < 0)
			goto undo;
	}
	/* 5: the tail, then 6: the first byte */
	rel = (int32_t)(int64_t)(w->tramp - (w->addr + 5));
	memset(tail, 0xcc, sizeof(tail));
	memcpy(tail, &rel, 4);
	w->patched = 1;
	ret = jp_write(w->addr + 1, tail, w->len - 1u);
	if (ret < 0)
		goto unpatch;
	fdr_patch_sync();
	ret = fdr_patch_write(w->addr, &e9, 1);
	if (ret < 0)
		goto unpatch;
	fdr_patch_sync();
	fdr_probe_infl_enable(); /* jump hits: in-flight slots, not the active count */
	return 0;
unpatch:
	(void)jp_unpatch(idx, w);
undo:
	fdr_probe_set_resume_at(idx, 0);
	return ret;
}

/**
 * fdr_probe_optimize - turn an armed probe's address into a jmp to a trampoline
 * @site: from fdr_probe_arm(), armed
 * @func_start: the first byte of the function that holds the probed address
 * @func_len: its size in bytes (the ELF symbol's, as for fdr_probe_check())
 * @why: on failure, why the probe stays a breakpoint (may be NULL)
 * @n: size of @why
 *
 * The probe keeps working in its int3 form meanwhile and whenever this fails.
 * Not async-signal-safe; must not be called from a probe handler. Sends
 * FDR_PROBE_SIG_FIX to every other thread and waits for each (see the essay).
 *
 * Returns: 0 (optimised, or already); -ECANCELED if optimisation is switched
 * off (FDR_PROBE_OPTIMIZE=0, fdr_probe_set_optimize(0): it is tried again
 * when switched on); -EINVAL for a bad argument or unarmed @site; -EDEADLK
 * from a probe handler; -ENOTSUP/-EILSEQ/-EBUSY if the window is not safe;
 * -ENOMEM/-ERANGE if no trampoline can be had near the code; -ETIMEDOUT if a
 * thread did not answer; a negative errno from the text write.
 */
int fdr_probe_optimize(struct fdr_probe_site *site, uintptr_t func_start, size_t func_len,
		       char *why, size_t n)
{
	unsigned int idx;
	int ret;

	if (why && n)
		why[0] = '\0';
	if (!site)
		return -EINVAL;
	if (fdr_probe_in_handler())
		return -EDEADLK;
	fdr_probe_lock();
	idx = fdr_probe_index(site);
	if (!fdr_probe_is_on(site) || !fdr_probe_armed_at(idx)) {
		ret = -EINVAL;
	} else if (!jp_is_enabled()) {
		struct jp_win *w = jp_wins[idx];

		if (!w)
			w = jp_wins[idx] = calloc(1, sizeof(*w));
		if (w) {
			w->wanted = 1;
			w->func_start = func_start;
			w->func_len = func_len;
		}
		ret = jp_refuse(why, n, -ECANCELED, "jump optimisation is switched off");
	} else {
		ret = jp_optimize(idx, func_start, func_len, why, n);
	}
	fdr_probe_unlock();
	return ret;
}

/**
 * fdr_probe_jump_check - whether a probe at @addr would be jump-optimised
 * @func_start, @func_len: the function that holds @addr (as for fdr_probe_optimize())
 * @why: if not, why (may be NULL); @n: its size
 *
 * Runs fdr_probe_optimize()'s safety checks (the essay's list) on the code as
 * it is, without arming anything: the window, the relocation of each of its
 * instructions, the branches of the function, other armed probes. What it
 * cannot tell: whether a trampoline page can be had within 2 GiB, and whether
 * every thread answers. For measurement (bench-probe-coverage) and tools.
 *
 * Returns: 0 if it would be optimised; else as fdr_probe_optimize()'s refusals.
 */
int fdr_probe_jump_check(uintptr_t func_start, size_t func_len, uintptr_t addr, char *why, size_t n)
{
	struct fdr_reloc_insn insns[JP_MAX_INSNS];
	struct jp_win plan;
	int ret;

	if (why && n)
		why[0] = '\0';
	fdr_probe_lock();
	ret = jp_plan(JP_NO_SITE, addr, func_start, func_len, &plan, insns, why, n);
	fdr_probe_unlock();
	return ret;
}

/** fdr_probe_site_optimized - 1 if @site's window holds a jmp now, else 0. */
int fdr_probe_site_optimized(const struct fdr_probe_site *site)
{
	struct jp_win *w;
	int ret;

	if (!site)
		return 0;
	fdr_probe_lock();
	w = jp_wins[fdr_probe_index(site)];
	ret = w && w->patched;
	fdr_probe_unlock();
	return ret;
}

/** fdr_probe_optimize_enabled - whether fdr_probe_optimize() optimises (1) or not (0). */
int fdr_probe_optimize_enabled(void)
{
	int ret;

	fdr_probe_lock();
	ret = jp_is_enabled();
	fdr_probe_unlock();
	return ret;
}

/**
 * fdr_probe_set_optimize - switch jump optimisation off (0) or on (1)
 *
 * Off: every optimised probe goes back to its int3 form (still armed). On:
 * every armed probe that fdr_probe_optimize() was asked for is tried again.
 * Overrides FDR_PROBE_OPTIMIZE. Not from a probe handler.
 *
 * Returns: how many probes are optimised afterwards, or -EINVAL, -EDEADLK,
 * or the first text write's error.
 */
int fdr_probe_set_optimize(int on)
{
	unsigned int u, i;
	int ret = 0, count = 0;

	if (on != 0 && on != 1)
		return -EINVAL;
	if (fdr_probe_in_handler())
		return -EDEADLK;
	fdr_probe_lock();
	jp_enabled = on;
	JP_FOR_EACH_SITE(u, i) {
		struct jp_win *w = jp_wins[i];
		int r = 0;

		if (!w)
			continue;
		if (!on)
			r = jp_unpatch(i, w);
		else if (w->wanted && !w->patched && fdr_probe_armed_at(i))
			(void)jp_optimize(i, w->func_start, w->func_len, NULL, 0);
		if (r < 0 && ret == 0)
			ret = r;
		count += w->patched;
	}
	fdr_probe_unlock();
	return ret < 0 ? ret : count;
}

/* ---- the engine's hooks (engine lock held) ---- */

/** fdr_jump_orig_bytes - put the original bytes of patched windows back into a copy. */
void fdr_jump_orig_bytes(uintptr_t addr, uint8_t *buf, size_t len)
{
	unsigned int u, i;

	JP_FOR_EACH_SITE(u, i) {
		const struct jp_win *w = jp_wins[i];
		unsigned int k;

		if (!w || !w->patched || w->addr >= addr + len || w->addr + w->len <= addr)
			continue;
		for (k = 0; k < w->len; k++)
			if (w->addr + k >= addr && w->addr + k < addr + len)
				buf[w->addr + k - addr] = w->orig[k];
	}
}

/** fdr_jump_before_arm - a probe goes at @addr: unoptimise a window around it. */
int fdr_jump_before_arm(uintptr_t addr)
{
	unsigned int u, i;

	JP_FOR_EACH_SITE(u, i) {
		struct jp_win *w = jp_wins[i];
		int ret;

		if (!w || !w->patched || addr <= w->addr || addr >= w->addr + w->len)
			continue;
		ret = jp_unpatch(i, w);
		if (ret < 0)
			return ret;
		w->wanted = 0; /* the window is not safe while the new probe is there */
	}
	return 0;
}

/**
 * fdr_jump_before_disarm - the address at @idx goes back to its int3 form (its
 * last probe is being disarmed)
 */
int fdr_jump_before_disarm(unsigned int idx)
{
	struct jp_win *w = jp_wins[idx];
	int ret = jp_unpatch(idx, w);

	if (ret == 0 && w)
		w->wanted = 0;
	return ret;
}

/**
 * fdr_jump_forget - the text at @idx went away (a library unloaded): nothing is
 * written back, and the window is forgotten, trampoline included (a new one is
 * made if code at that address is optimised again)
 */
void fdr_jump_forget(unsigned int idx)
{
	struct jp_win *w = jp_wins[idx];

	if (!w)
		return;
	w->patched = 0;
	w->wanted = 0;
	w->tramp = 0;
	fdr_probe_set_resume_at(idx, 0);
}

/** fdr_jump_patched - whether jump.c wrote a jmp at @addr (engine lock held). */
int fdr_jump_patched(uintptr_t addr)
{
	unsigned int u, i;

	JP_FOR_EACH_SITE(u, i)
		if (jp_wins[i] && jp_wins[i]->patched && jp_wins[i]->addr == addr)
			return 1;
	return 0;
}
