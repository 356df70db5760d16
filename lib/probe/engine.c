// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * engine.c - breakpoint probes handled inside the process (x86-64).
 *
 * Arming a probe at an instruction boundary A:
 *
 *	1. decode the instruction at A from its original bytes (reloc.c) and
 *	   refuse what cannot be moved;
 *	2. write its out-of-line copy into a slot of an XOL page near A
 *	   (patch.c: pages mapped r-x, written through /proc/self/mem or a page
 *	   swapped in with mremap, never W+X), once per address: the slot is
 *	   immutable afterwards, shared by every thread and every nesting level;
 *	3. publish the site (armed = 1), then write int3 over A's first byte and
 *	   serialise the other CPUs (membarrier).
 *
 *	  program text                 XOL page near it (r-x)
 *	  A:   cc 8b 05 ...           slot: 8b 05 <disp'> ; jmp A+len
 *	       |  int3                        mov foo(%rip),%eax, disp rewritten
 *	       v
 *	  SIGTRAP handler: regs from the ucontext -> handler(regs, arg)
 *	       then RIP = slot (COPY, CALL_IND), or the branch emulated:
 *	       RIP = target / next (JMP, JCC), push A+len; RIP = target (CALL)
 *
 * The handler runs on the thread that hit the probe, in the signal frame the
 * kernel built below the interrupted stack pointer's red zone (128 bytes), or
 * on the thread's sigaltstack: a leaf function's red zone is never touched.
 * It is async-signal-safe: no locks, no allocation, errno preserved. A probe hit
 * while the same thread is already in a probe handler (the handler calls a
 * probed function, or a signal handler does) runs no handler and counts a miss,
 * as the kernel's kprobes do, but still executes the displaced instruction.
 *
 * Disarming: write the original byte back, serialise, then armed = 0, then
 * wait until no handler of the site is running (site->active). A thread that
 * fetched the int3 before it was removed may trap after armed = 0 ("uprobe
 * already gone" in the kernel): the handler finds a known site that is not
 * armed, sets RIP back to A, and the original instruction runs. The order
 * (armed before the byte on the way in, after it on the way out) means a trap
 * on an armed site is always ours. The handler increments site->active before
 * it reads 'armed' and the disarmer reads 'active' after it clears 'armed'
 * (both sequentially consistent): either the handler sees armed = 0, or the
 * disarmer waits for it, so a handler never runs with a stale 'arg'.
 *
 * A site carries up to PR_SITE_PROBES probes (an entry and a return probe on
 * one function, or two events at one place), each with its own 'on', handler
 * and counters. The int3 goes in with the first and comes out with the last;
 * the others join or leave by 'on' alone, with the same pairing: the handler
 * increments 'active' before it reads each probe's 'on', the disarmer clears
 * 'on' before it waits for 'active' to be 0. A jump hit (fdr_probe_fire())
 * stores the site in its thread's in-flight slot instead, with no fence, and
 * the disarmer waits on the slots after a membarrier() (pr_infl_quiesce();
 * docs/design/probes.md, "The disarm race").
 *
 * A site whose text was unloaded (dlclose: the address unmapped, or mapped
 * afresh) is forgotten instead (fdr_probe_forget()): armed = 0 without a write,
 * once the page is no longer the anonymous copy the int3 went into. A trap at a
 * site not armed whose byte is an int3 now is then the new code's own: it goes
 * to the program's handler instead of being rewound onto.
 *
 * Sites live in a fixed open-addressing table keyed by address; a site is
 * never freed, only disarmed, and re-arming the same address reuses it and its
 * slot (a thread may still be inside the slot from the last time: the bytes
 * are the same). If the code at an address changed (a library unloaded and
 * another loaded there), a new slot is written: an old slot is never reused.
 *
 * Return probes (FDR_PROBE_ARM_RETURN, docs/design/probes.md "Return probes"),
 * as the kernel's uretprobes: the int3 goes on the function's first
 * instruction (or the jmp of its jump trampoline: fdr_probe_fire()); there the
 * handler pushes {real return address, RSP, site} on a per-thread stack
 * (static TLS, PR_RET_DEPTH deep: no allocation in a signal handler; full = a
 * miss, the return is left alone) and overwrites the return address at RSP
 * with the trampoline, code in this library's text (tramp.S) that does not
 * trap. When the function returns there, the trampoline saves the registers
 * and calls fdr_probe_ret_fire(), which finds the entry whose RSP + 8 is the
 * RSP after the ret, calls the site's return probes with the registers of the
 * return (RAX = $retval, IP = the real return address, probe_addr = the
 * function) and gives the real return address, where the trampoline goes (a
 * jump trampoline's hit calls the function instead of jumping to it, so that
 * its ret is predicted: fdr_probe_fire(), jump.c's jp_emit_slow()). Entries
 * above the one found, and at a new entry those whose return-address slot is at
 * or below the new RSP and no longer holds the trampoline, or is the new RSP
 * itself (the new call overwrote it), belong to frames that longjmp() abandoned:
 * they are dropped as misses. An entry whose slot still holds the trampoline is
 * never dropped at an entry (it may be live on another stack: sigaltstack; or
 * its function tail-called the new one, whose slot it shares).
 *
 * Unwinders (C++ exceptions, pthread_exit(), backtrace()) pass the trampoline
 * with its .eh_frame entry (tramp.S): the real return address comes from
 * fdr_probe_ret_table, a global copy of every thread's pending returns keyed by
 * the return-address slot, since a DWARF expression cannot read TLS. A phase-2
 * unwind goes through fdr_probe_ret_personality() and fdr_probe_ret_pad, which
 * drop the entry of the frame it passes (docs/design/probes.md, "Unwinding
 * through a pending return").
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <ucontext.h>
#include <unistd.h>
#include <unwind.h>

#include "core/core-local.h"
#include "jump.h"
#include "probe-local.h"
#include "record.h"
#include "reloc.h"

#define PR_SITES_SHIFT 12
#define PR_SITES (1u << PR_SITES_SHIFT) /* distinct probed addresses per process */
#define PR_SLOT_SIZE 32
#define PR_XOL_PAGE 4096
#define PR_MAX_FUNC_LEN (16u << 20) /* fdr_probe_check() decodes at most this much */

_Static_assert(PR_SLOT_SIZE >= FDR_RELOC_SLOT_MAX, "an XOL slot holds any emitted instruction");
_Static_assert(PR_SITES == FDR_PROBE_SITES, "jump.c keeps one entry per site");

/*
 * One probe: a handler at a site, armed and disarmed on its own. The handle
 * fdr_probe_arm() gives out. fn, arg and ret are written under pr_lock while
 * 'on' is 0 and no handler runs on the site, then 'on' = 1 publishes them.
 */
struct fdr_probe_site {
	atomic_int on; /* 1 while this handler is wanted; seq_cst */
	int ret; /* FDR_PROBE_ARM_RETURN: the handler runs at the return */
	int novec; /* FDR_PROBE_ARM_NOVEC: a jump hit calls it without the vector state saved */
	int nocount; /* FDR_PROBE_ARM_NOCOUNT: hits not counted here (the handler does) */
	int record; /* FDR_PROBE_ARM_RECORD: arg is a struct fdr_probe_rec (record.h) */
	uint32_t site; /* index of its address in pr_sites */
	_Atomic(fdr_probe_handler) fn;
	_Atomic(void *) arg;
	atomic_uint_fast64_t hits, misses;
};

/* Probes one address can carry: an entry and a return probe, and two more events */
#define PR_SITE_PROBES 4

/* A probed address: its int3, its out-of-line copy and the probes on it. */
struct pr_site {
	_Atomic uintptr_t addr; /* 0: free entry; published with release (pr_insert) */
	atomic_int armed; /* 1 while the int3 is (being) in place; seq_cst */
	atomic_int active; /* handlers running on this site; seq_cst */
	atomic_uint seq; /* + 1 before each change of 'armed' (seq_cst): pr_sigtrap() */
	struct fdr_reloc_insn insn; /* written under the lock before armed = 1 */
	uintptr_t slot; /* the out-of-line copy */
	int xol_all; /* test hook: branches run out of line too */
	struct fdr_probe_site probes[PR_SITE_PROBES];
	/* jump.c: where an int3 hit resumes while the window holds (part of) a jmp */
	_Atomic uintptr_t jump_resume;
	/*
	 * The one entry probe that is on, if exactly one is, and whether return
	 * probes are on besides it (pr_solo_set(), after each change of 'on'
	 * under pr_lock, before the disarm's wait): a jump hit runs it, and
	 * hijacks the return for them, without the loop over probes[]
	 */
	_Atomic(struct fdr_probe_site *) solo;
	atomic_int solo_ret;
	/* the one return probe that is on, if exactly one is (fdr_probe_ret_fire()) */
	_Atomic(struct fdr_probe_site *) ret_solo;
};

static struct pr_site pr_sites[PR_SITES];
static pthread_mutex_t pr_lock = PTHREAD_MUTEX_INITIALIZER;
/*
 * The indexes of the sites in use, in the order they were made (under
 * pr_lock): the walks over every site look at these, not at the whole table,
 * whose 1.2 MiB a first arm would otherwise fault in page by page.
 */
static uint16_t pr_used[PR_SITES];
static unsigned int pr_nused;
static int pr_sig_installed; /* under pr_lock */

/* An XOL page: slots handed out from the front, never reclaimed. Under pr_lock. */
struct pr_xol {
	uintptr_t base;
	unsigned int used;
	struct pr_xol *next;
};
static struct pr_xol *pr_xols;

/* Per-thread nesting depth of probe handlers (initial-exec: no allocation in a handler). */
static __thread __attribute__((tls_model("initial-exec"))) int pr_depth;

/*
 * Return probes: the trampoline (0 until the first return probe is armed) and
 * each thread's stack of hijacked returns. 32 entries of 24 bytes: static TLS
 * stays small enough for a dlopen()ed libfdr-probe (fdr attach), which glibc
 * must fit in its static TLS surplus.
 */
#define PR_RET_DEPTH 32
struct pr_ret {
	uintptr_t ret; /* the real return address */
	uintptr_t sp; /* where it was: RSP at the function's first instruction */
	uint32_t site; /* index in pr_sites */
	uint16_t tab; /* its slot in fdr_probe_ret_table */
	/*
	 * 1: made at a jump hit whose trampoline then calls the function from
	 * tramp.S's fdr_probe_ret_call (its ret is predicted; the return goes on
	 * by a ret too); 0: at an int3 hit (the ret mispredicts; a jmp goes on)
	 */
	uint16_t called;
};
static _Atomic uintptr_t pr_tramp;
#define PR_RET_CALLED (1ull << 63) /* fdr_probe_ret_fire(): tramp.S's btr $63 */
static __thread __attribute__((tls_model("initial-exec"))) struct pr_ret pr_rets[PR_RET_DEPTH];
static __thread __attribute__((tls_model("initial-exec"))) unsigned int pr_nrets;

/*
 * Every thread's pending returns again, for unwinders (tramp.S): keyed by the
 * return-address slot S, the value the real return address. Open addressing,
 * no wrap: a key lives in one of the PR_RTAB_PROBES slots from its hash on,
 * which is all tramp.S's DWARF expression looks at. Only the thread whose stack
 * holds S writes key S (a key left by a dead thread, whose stack memory a new
 * thread got, is taken over: key match first); slots are claimed with a CAS.
 * If no slot is free, the function is not hijacked (a miss).
 */
#define PR_RTAB_SHIFT 12 /* tramp.S: the shift is 64 - 12 */
#define PR_RTAB (1u << PR_RTAB_SHIFT)
#define PR_RTAB_PROBES 8 /* tramp.S: 8 probes */
struct pr_rslot {
	_Atomic uintptr_t key; /* S, or 0: free */
	_Atomic uintptr_t val; /* the real return address */
};
_Static_assert(sizeof(struct pr_rslot) == 16, "tramp.S: 16-byte slots, the value at +8");
__attribute__((visibility("hidden"))) struct pr_rslot fdr_probe_ret_table[PR_RTAB + PR_RTAB_PROBES];

/* tramp.S */
extern const char fdr_probe_ret_tramp[] __attribute__((visibility("hidden")));
extern const char fdr_probe_ret_pad[] __attribute__((visibility("hidden")));

void fdr_probe_lock(void)
{
	pthread_mutex_lock(&pr_lock);
}

void fdr_probe_unlock(void)
{
	pthread_mutex_unlock(&pr_lock);
}

/*
 * Jump hits in flight ("Jump hits without the active count", probes.md): one
 * slot per thread that took one, claimed at its first hit and never given
 * back (a thread that exits leaves its slot at NULL; past PR_INFL threads the
 * active count serves). Each slot on a cache line of its own.
 */
#define PR_INFL 1024
struct pr_infl {
	_Atomic(void *) site; /* the struct pr_site whose handlers this thread runs, or NULL */
	atomic_int used;
	char pad[64 - sizeof(void *) - sizeof(int)];
};
static struct pr_infl pr_infl[PR_INFL] __attribute__((aligned(64)));
static atomic_uint pr_infl_n; /* slots claimed: [0, n) */
static atomic_int pr_infl_ok; /* the slots may be used: a membarrier() works in this process */
static __thread __attribute__((tls_model("initial-exec"))) int pr_infl_me; /* slot + 1, -1: none */

/* The child of a fork has one thread: locks another thread held are free again. */
static void pr_rtab_atfork_child(void);

static void pr_atfork_child(void)
{
	unsigned int i, n = atomic_load(&pr_infl_n);

	pthread_mutex_init(&pr_lock, NULL);
	fdr_probe_sig_atfork_child();
	pr_rtab_atfork_child();
	/*
	 * The other threads are gone, and so is the membarrier registration (a new
	 * mm): their slots are cleared, and none is used until jump.c sees the
	 * barrier work again (fdr_probe_infl_enable()).
	 */
	atomic_store(&pr_infl_ok, 0);
	for (i = 0; i < n; i++)
		if ((int)i + 1 != pr_infl_me)
			atomic_store(&pr_infl[i].site, NULL);
}

static unsigned int pr_hash(uintptr_t addr)
{
	return (unsigned int)((addr * 0x9e3779b97f4a7c15ull) >> (64 - PR_SITES_SHIFT));
}

/* Async-signal-safe: the site for @addr, or NULL. */
static struct pr_site *pr_lookup(uintptr_t addr)
{
	unsigned int i, h = pr_hash(addr);

	for (i = 0; i < PR_SITES; i++) {
		struct pr_site *s = &pr_sites[(h + i) & (PR_SITES - 1)];
		/* acquire: pairs with the release in pr_insert() */
		uintptr_t a = atomic_load_explicit(&s->addr, memory_order_acquire);

		if (a == addr)
			return s;
		if (a == 0)
			return NULL;
	}
	return NULL;
}

/* Under pr_lock: the site for @addr, made if needed; NULL if the table is full. */
static struct pr_site *pr_insert(uintptr_t addr)
{
	unsigned int i, h = pr_hash(addr);

	/*
	 * A write first: the page of a never-used part of the table comes in
	 * with one fault, not a read fault (the zero page) then a copy on write
	 * (active + 0 changes nothing; handlers add to it atomically too)
	 */
	atomic_fetch_add_explicit(&pr_sites[h].active, 0, memory_order_relaxed);
	for (i = 0; i < PR_SITES; i++) {
		struct pr_site *s = &pr_sites[(h + i) & (PR_SITES - 1)];
		uintptr_t a = atomic_load_explicit(&s->addr, memory_order_relaxed);

		if (a == addr)
			return s;
		if (a == 0) {
			/* release: the zeroed site is complete before a reader finds it */
			atomic_store_explicit(&s->addr, addr, memory_order_release);
			pr_used[pr_nused++] = (uint16_t)(s - pr_sites);
			return s;
		}
	}
	return NULL;
}

/*
 * Under pr_lock, after 'on' changed on one of @s's probes: the probe a jump
 * hit may run without looking at the others (fdr_probe_fire()). A hit that
 * read the old value before a disarm is in flight, and the disarm waits for
 * it, as for one that read 'on' before it was cleared.
 */
static void pr_solo_set(struct pr_site *s)
{
	struct fdr_probe_site *one = NULL, *ret_one = NULL;
	unsigned int k, n = 0, rets = 0;

	for (k = 0; k < PR_SITE_PROBES; k++) {
		if (!atomic_load(&s->probes[k].on))
			continue;
		if (s->probes[k].ret) {
			ret_one = &s->probes[k];
			rets++;
		} else {
			one = &s->probes[k];
			n++;
		}
	}
	/*
	 * A hit that reads solo and then solo_ret while they change: a return
	 * hijacked for probes just turned off reports nothing (the return's
	 * loop reads 'on'), one not hijacked for probes just turned on is a call
	 * that began before they were
	 */
	atomic_store(&s->solo_ret, rets > 0);
	atomic_store(&s->solo, n == 1 ? one : NULL);
	atomic_store(&s->ret_solo, rets == 1 ? ret_one : NULL);
}

/*
 * Copy @len bytes of code at @addr into @buf, never faulting, with the original
 * bytes of armed probes put back (pr_lock held). Returns how many bytes were
 * readable.
 */
static size_t pr_read_orig(uintptr_t addr, uint8_t *buf, size_t len)
{
	struct iovec local = { buf, len }, remote = { (void *)addr, len };
	ssize_t got = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
	unsigned int i;

	if (got < 0) {
		/* no process_vm_readv (seccomp): the caller checked the page is mapped */
		size_t pg = (size_t)sysconf(_SC_PAGESIZE);
		size_t in_page = pg - (addr & (pg - 1));

		got = (ssize_t)(len < in_page ? len : in_page);
		memcpy(buf, (const void *)addr, (size_t)got);
	}
	for (i = 0; i < pr_nused; i++) {
		struct pr_site *s = &pr_sites[pr_used[i]];
		uintptr_t a = atomic_load_explicit(&s->addr, memory_order_acquire);

		if (a >= addr && a < addr + (size_t)got && s->insn.len && atomic_load(&s->armed))
			buf[a - addr] = s->insn.bytes[0];
	}
	fdr_jump_orig_bytes(addr, buf, (size_t)got); /* jump-optimised windows */
	return (size_t)got;
}

/**
 * fdr_probe_check - may a probe go at @addr of the function at @func_start?
 * @func_start: the function's first byte (from the ELF symbol table)
 * @func_len: its size in bytes
 * @addr: the address to probe, in [@func_start, @func_start + @func_len)
 * @why: on failure, a message for the error_log (may be NULL)
 * @n: size of @why
 *
 * Decodes the function from its start (original bytes, even where probes are
 * armed) to confirm @addr starts an instruction, then checks that instruction can
 * be run out of line or emulated. Not async-signal-safe.
 *
 * Returns: 0; -EINVAL if @addr is outside the function or the function is
 * longer than 16 MiB; -EILSEQ if @addr is
 * inside an instruction (@why names it: address, length, mnemonic) or the code
 * before it does not decode; -ENOTSUP if the instruction cannot be relocated;
 * -ENOMEM; -EFAULT if the function is not readable.
 */
int fdr_probe_check(uintptr_t func_start, size_t func_len, uintptr_t addr, char *why, size_t n)
{
	struct fdr_reloc_insn insn;
	uint8_t *code;
	size_t got, off = 0;
	int ret;

	if (why && n)
		why[0] = '\0';
	if (addr < func_start || addr - func_start >= func_len) {
		if (why && n)
			snprintf(why, n, "0x%lx is outside the function at 0x%lx (%zu bytes)",
				 (unsigned long)addr, (unsigned long)func_start, func_len);
		return -EINVAL;
	}
	/* a symbol size from a hostile ELF file must not size an allocation */
	if (func_len > PR_MAX_FUNC_LEN) {
		if (why && n)
			snprintf(
				why, n,
				"function at 0x%lx is %zu bytes long, more than the %u fdr decodes",
				(unsigned long)func_start, func_len, PR_MAX_FUNC_LEN);
		return -EINVAL;
	}
	code = malloc(func_len + FDR_RELOC_MAX_LEN);
	if (!code)
		return -ENOMEM;
	memset(code, 0, func_len + FDR_RELOC_MAX_LEN);
	fdr_probe_lock();
	got = pr_read_orig(func_start, code, func_len + FDR_RELOC_MAX_LEN);
	fdr_probe_unlock();
	if (got <= addr - func_start) {
		if (why && n)
			snprintf(why, n, "cannot read the code at 0x%lx", (unsigned long)addr);
		ret = -EFAULT;
		goto out;
	}
	while (func_start + off < addr) {
		char mn[24];
		int len = fdr_reloc_length(code + off, got - off, mn, sizeof(mn));

		if (len < 0) {
			if (why && n)
				snprintf(why, n,
					 "bytes at 0x%lx do not decode as an instruction "
					 "(decoding from 0x%lx towards 0x%lx)",
					 (unsigned long)(func_start + off),
					 (unsigned long)func_start, (unsigned long)addr);
			ret = -EILSEQ;
			goto out;
		}
		if (func_start + off + (size_t)len > addr) {
			if (why && n)
				snprintf(why, n,
					 "0x%lx is not an instruction boundary: it is byte %lu of "
					 "'%s' at 0x%lx (length %d)",
					 (unsigned long)addr,
					 (unsigned long)(addr - (func_start + off)), mn,
					 (unsigned long)(func_start + off), len);
			ret = -EILSEQ;
			goto out;
		}
		off += (size_t)len;
	}
	ret = fdr_reloc_decode(addr, code + off, got - off, &insn, why, n);
out:
	free(code);
	return ret;
}

/* Under pr_lock: a slot near @s's address holding its out-of-line copy. */
static int pr_slot_make(struct pr_site *s, const struct fdr_reloc_insn *insn)
{
	uint8_t code[PR_SLOT_SIZE];
	struct pr_xol *x;
	int len = -ERANGE, ret;

	for (x = pr_xols; x; x = x->next) {
		if (x->used + PR_SLOT_SIZE > PR_XOL_PAGE)
			continue;
		len = fdr_reloc_emit(insn, x->base + x->used, insn->addr + insn->len, code,
				     sizeof(code));
		if (len >= 0)
			break;
	}
	if (!x) {
		uintptr_t base = fdr_patch_alloc_near(insn->addr, PR_XOL_PAGE);

		FDR_PROBE_TRACE("e.xol.alloc");

		if (!base)
			return -ENOMEM;
		x = calloc(1, sizeof(*x));
		if (!x) {
			munmap((void *)base, PR_XOL_PAGE);
			return -ENOMEM;
		}
		x->base = base;
		x->next = pr_xols;
		pr_xols = x;
		len = fdr_reloc_emit(insn, x->base, insn->addr + insn->len, code, sizeof(code));
		if (len < 0)
			return len; /* -ERANGE: nothing free near enough */
	}
	memset(code + len, 0xcc, sizeof(code) - (size_t)len); /* never run: traps if it is */
	ret = fdr_patch_write(x->base + x->used, code, sizeof(code));
	if (ret < 0)
		return ret;
	s->slot = x->base + x->used;
	x->used += PR_SLOT_SIZE;
	return 0;
}

static void pr_sigtrap(int sig, siginfo_t *si, void *ucv);

/*
 * Whether this thread runs with a user-space shadow stack (CET SHSTK): then a
 * call emulated on the ordinary stack alone would fault at the callee's ret
 * (docs/design/probes.md, "Control-flow protection"). Kernels without
 * ARCH_SHSTK_STATUS answer EINVAL: no shadow stack.
 */
static int pr_shstk_active(void)
{
	unsigned long features = 0;

	if (syscall(SYS_arch_prctl, 0x5005 /* ARCH_SHSTK_STATUS */, &features) != 0)
		return 0;
	return (features & 1 /* ARCH_SHSTK_SHSTK */) != 0;
}

/**
 * fdr_probe_arm - put a breakpoint probe at @addr
 * @addr: an instruction boundary (see fdr_probe_check()) in a mapped r-x page
 * @fn: called on every hit with the registers, in a signal handler
 * @arg: passed to @fn; must stay valid until fdr_probe_disarm() returns
 * @out: the probe, for fdr_probe_disarm() and the counters
 *
 * Installs the SIGTRAP handler the first time (signal.c keeps the program's own
 * handlers running). Never makes a page writable and executable. Not
 * async-signal-safe; serialised with every other arm/disarm.
 *
 * Other probes may be armed at @addr already (up to 4 in all, entry and return
 * probes mixed): this one joins them and each handler runs on every hit. If
 * the code under them was unmapped (their disarm failed) and other code is
 * mapped at @addr now, they are dropped and this probe arms the new code; the
 * handles of the dropped probes must not be used again (one may be this one's).
 *
 * Returns: 0; -EINVAL (NULL @fn or @out); -EBUSY if @addr has 4 probes already;
 * -EFAULT if @addr is not in an executable mapping; -EPERM if its page is
 * writable and executable (JIT code: not ours to patch); -EILSEQ/-ENOTSUP from
 * the decoder, or -ENOTSUP for a call under a CET shadow stack; -ENOSPC if the
 * site table is full; -ENOMEM/-ERANGE if no XOL slot can be had near @addr; a
 * negative errno from the text write.
 */
int fdr_probe_arm(uintptr_t addr, fdr_probe_handler fn, void *arg, struct fdr_probe_site **out)
{
	return fdr_probe_arm_flags(addr, 0, fn, arg, out);
}

/* Whether the byte at @addr is an int3 (read without faulting; the caller checked the page). */
static int pr_int3_at(uintptr_t addr)
{
	uint8_t b = 0;
	struct iovec local = { &b, 1 }, remote = { (void *)addr, 1 };

	if (process_vm_readv(getpid(), &local, 1, &remote, 1, 0) != 1)
		b = *(const volatile uint8_t *)addr; /* no process_vm_readv (seccomp) */
	/* or the jmp of a jump-optimised window (jump.c) */
	return b == 0xcc || (b == 0xe9 && fdr_jump_patched(addr));
}

/* The return trampoline (tramp.S), published at the first return probe. */
static void pr_tramp_publish(void)
{
	/* release: pairs with the acquire in pr_sigtrap() */
	atomic_store_explicit(&pr_tramp, (uintptr_t)fdr_probe_ret_tramp, memory_order_release);
}

/**
 * fdr_probe_arm_flags - fdr_probe_arm() with @flags
 * @flags: 0, or FDR_PROBE_ARM_RETURN: @addr is a function's first instruction
 *	and @fn runs when the function returns, with the registers of the return
 *	(gpr[FDR_REG_AX] the return value, gpr[FDR_REG_IP] the return address,
 *	probe_addr the function); see "Return probes" at the top. Or'ed with
 *	FDR_PROBE_ARM_NOVEC: @fn leaves every vector and x87 register and errno
 *	as it found them (built with -mgeneral-regs-only, calling nothing else:
 *	the agent's pa_hit()), so a jump hit calls it directly; otherwise the
 *	hit calls it through fdr_vcall(), which saves and restores that state.
 *	Or'ed with FDR_PROBE_ARM_NOCOUNT: the handler counts its hits itself, and
 *	fdr_probe_site_hits() stays 0 (one locked add less a hit; the agent).
 *	Or'ed with FDR_PROBE_ARM_RECORD: @arg is a struct fdr_probe_rec whose
 *	program has the table form, and a jump hit of the address's only probe
 *	writes its record itself (record.h) instead of calling @fn
 *
 * Returns: as fdr_probe_arm(); -EINVAL for unknown @flags.
 */
int fdr_probe_arm_flags(uintptr_t addr, unsigned int flags, fdr_probe_handler fn, void *arg,
			struct fdr_probe_site **out)
{
	struct fdr_reloc_insn insn;
	struct pr_site *s;
	struct fdr_probe_site *p = NULL;
	uint8_t code[FDR_RELOC_MAX_LEN], int3 = 0xcc;
	size_t got;
	int prot, ret;
	unsigned int k;
	const char *e;

	if (!fn || !out ||
	    (flags & ~(FDR_PROBE_ARM_RETURN | FDR_PROBE_ARM_NOVEC | FDR_PROBE_ARM_NOCOUNT |
		       FDR_PROBE_ARM_RECORD)))
		return -EINVAL;
	fdr_probe_lock();
	ret = fdr_patch_page_prot(addr, &prot);
	FDR_PROBE_TRACE("e.prot");
	if (ret < 0 || !(prot & PROT_EXEC)) {
		ret = -EFAULT;
		goto out;
	}
	if (prot & PROT_WRITE) {
		ret = -EPERM;
		goto out;
	}
	s = pr_lookup(addr);
	if (s && atomic_load(&s->armed) && !pr_int3_at(addr)) {
		/*
		 * armed, but the int3 is gone: the code was unmapped under it (its
		 * disarm could not write) and other code is mapped there now. The
		 * stale probes go; this one arms the new code afresh.
		 */
		for (k = 0; k < PR_SITE_PROBES; k++)
			atomic_store(&s->probes[k].on, 0);
		pr_solo_set(s);
		fdr_jump_forget((unsigned int)(s - pr_sites));
		atomic_fetch_add(&s->seq, 1);
		atomic_store(&s->armed, 0);
	}
	if (s && atomic_load(&s->armed)) {
		/* the int3 is in place for another probe: this one only joins it */
		for (k = 0; k < PR_SITE_PROBES && !p; k++)
			if (!atomic_load(&s->probes[k].on))
				p = &s->probes[k];
		if (!p) {
			ret = -EBUSY;
			goto out;
		}
		/* a handler that read this probe 'on' before its last disarm may still run */
		while (atomic_load(&s->active) != 0)
			sched_yield();
		if (flags & FDR_PROBE_ARM_RETURN)
			pr_tramp_publish();
		p->ret = (flags & FDR_PROBE_ARM_RETURN) != 0;
		p->novec = (flags & FDR_PROBE_ARM_NOVEC) != 0;
		p->nocount = (flags & FDR_PROBE_ARM_NOCOUNT) != 0;
		p->record = (flags & FDR_PROBE_ARM_RECORD) != 0;
		atomic_store(&p->fn, fn);
		atomic_store(&p->arg, arg);
		/* seq_cst: fn, arg and ret are complete before a handler sees 'on' */
		atomic_store(&p->on, 1);
		pr_solo_set(s);
		*out = p;
		goto out;
	}
	/* inside another address's jump window: that one goes back to its int3 first */
	ret = fdr_jump_before_arm(addr);
	if (ret < 0)
		goto out;
	got = pr_read_orig(addr, code, sizeof(code));
	ret = fdr_reloc_decode(addr, code, got, &insn, NULL, 0);
	FDR_PROBE_TRACE("e.decode");
	if (ret < 0)
		goto out;
	if ((insn.kind == FDR_RELOC_CALL || insn.kind == FDR_RELOC_CALL_IND) && pr_shstk_active()) {
		ret = -ENOTSUP;
		goto out;
	}
	s = pr_insert(addr);
	if (!s) {
		ret = -ENOSPC;
		goto out;
	}
	/* a handler that trapped before the last disarm may still read s->insn */
	while (atomic_load(&s->active) != 0)
		sched_yield();
	if (!s->slot || s->insn.len != insn.len || memcmp(s->insn.bytes, insn.bytes, insn.len)) {
		ret = pr_slot_make(s, &insn);
		FDR_PROBE_TRACE("e.xol");
		if (ret < 0)
			goto out;
	}
	s->insn = insn;
	/* test hook: every kind runs out of line, through fdr_reloc_emit()'s code */
	e = getenv("FDR_PROBE_XOL_ALL");
	s->xol_all = e && e[0] == '1';
	if (flags & FDR_PROBE_ARM_RETURN)
		pr_tramp_publish();
	p = &s->probes[0]; /* the site is not armed: none of its probes is on */
	for (k = 0; k < PR_SITE_PROBES; k++)
		s->probes[k].site = (uint32_t)(s - pr_sites);
	p->ret = (flags & FDR_PROBE_ARM_RETURN) != 0;
	p->novec = (flags & FDR_PROBE_ARM_NOVEC) != 0;
	p->nocount = (flags & FDR_PROBE_ARM_NOCOUNT) != 0;
	p->record = (flags & FDR_PROBE_ARM_RECORD) != 0;
	atomic_store(&p->fn, fn);
	atomic_store(&p->arg, arg);
	atomic_store(&p->on, 1);
	pr_solo_set(s);
	/* taken again after fdr detach gave it back (fdr_probe_sig_release()) */
	if (!pr_sig_installed || !fdr_probe_sig_is_taken(SIGTRAP)) {
		if (!pr_sig_installed)
			pthread_atfork(NULL, NULL, pr_atfork_child);
		ret = fdr_probe_sig_take(SIGTRAP, pr_sigtrap);
		if (ret < 0)
			goto off;
		pr_sig_installed = 1;
	}
	/* seq_cst: the site is complete and armed before any thread can trap on it */
	atomic_fetch_add(&s->seq, 1);
	atomic_store(&s->armed, 1);
	FDR_PROBE_TRACE("e.sig");
	ret = fdr_patch_write(addr, &int3, 1);
	FDR_PROBE_TRACE("e.int3");
	if (ret < 0) {
		atomic_fetch_add(&s->seq, 1);
		atomic_store(&s->armed, 0);
		goto off;
	}
	fdr_patch_sync();
	FDR_PROBE_TRACE("e.sync");
	*out = p;
	goto out;
off:
	atomic_store(&p->on, 0);
	pr_solo_set(s);
out:
	fdr_probe_unlock();
	return ret;
}

/*
 * A full memory barrier in every thread of this process that runs now (the
 * others pass one when they are scheduled): 0, or -1 if membarrier() refused.
 */
static int pr_membarrier(void)
{
	if (syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE, 0, 0) == 0)
		return 0;
	return syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0 ? 0 : -1;
}

/*
 * After 'on' or 'armed' went to 0 (seq_cst): wait until no jump hit that may
 * have read them before runs a handler of @s. The hit stores its slot, then
 * loads (no fence between); the barrier here orders each running thread's
 * store before this scan, or its load after the store to 'on'/'armed'.
 */
static void pr_infl_quiesce(const struct pr_site *s)
{
	unsigned int i, n = atomic_load(&pr_infl_n);

	if (!n)
		return;
	(void)pr_membarrier(); /* it worked when the slots were enabled (fork: none used) */
	for (i = 0; i < n; i++)
		while (atomic_load(&pr_infl[i].site) == (const void *)s)
			sched_yield();
}

/**
 * fdr_probe_infl_enable - jump hits may use their in-flight slots from now on
 * (jump.c, once fdr_patch_sync() used a membarrier in this process)
 */
void fdr_probe_infl_enable(void)
{
	if (!atomic_load(&pr_infl_ok) && pr_membarrier() == 0)
		atomic_store(&pr_infl_ok, 1);
}

/**
 * fdr_probe_disarm - remove a probe; with it the last of its address, the
 *	original byte goes back exactly
 * @site: from fdr_probe_arm()
 *
 * Returns once no thread runs @site's handler any more (its @arg may be freed
 * then); a thread that trapped on the int3 just before it went runs the original
 * instruction. Other probes at the same address stay armed. Must not be called
 * from a probe handler.
 *
 * Returns: 0; -EINVAL if @site is NULL or not armed; -EDEADLK from a probe
 * handler; a negative errno from the text write (the probe stays armed).
 */
int fdr_probe_disarm(struct fdr_probe_site *site)
{
	struct pr_site *s;
	unsigned int k, others = 0;
	int ret;

	if (!site)
		return -EINVAL;
	if (pr_depth > 0)
		return -EDEADLK;
	fdr_probe_lock();
	s = &pr_sites[site->site];
	if (!atomic_load(&site->on) || !atomic_load(&s->armed)) {
		fdr_probe_unlock();
		return -EINVAL;
	}
	for (k = 0; k < PR_SITE_PROBES; k++)
		others += &s->probes[k] != site && atomic_load(&s->probes[k].on);
	if (!others) {
		ret = fdr_jump_before_disarm(site->site); /* a jmp goes back to the int3 first */
		if (ret < 0) {
			fdr_probe_unlock();
			return ret;
		}
		ret = fdr_patch_write(atomic_load(&s->addr), &s->insn.bytes[0], 1);
		if (ret < 0) {
			fdr_probe_unlock();
			return ret;
		}
		fdr_patch_sync();
	}
	/* seq_cst: pairs with the handler's active++ then armed and 'on' loads (essay above) */
	atomic_store(&site->on, 0);
	pr_solo_set(s);
	if (!others) {
		atomic_fetch_add(&s->seq, 1);
		atomic_store(&s->armed, 0);
	}
	fdr_probe_unlock();
	while (atomic_load(&s->active) != 0)
		sched_yield();
	pr_infl_quiesce(s);
	return 0;
}

/*
 * Under pr_lock: is the page at @addr still the copy the engine wrote its
 * int3 into? A write (through /proc/self/mem, or the mremap swap) leaves an
 * anonymous page in the mapping; once the library is unloaded the address is
 * unmapped, and once a file is mapped there again the page is the file's (or
 * not yet faulted in). /proc/self/pagemap tells (bit 63 present, 62 swapped,
 * 61 a file page); where it cannot be read, the first byte must still be the
 * int3.
 */
static int pr_text_ours(uintptr_t addr)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	uint64_t e = 0;
	int prot, fd;

	if (fdr_patch_page_prot(addr, &prot) < 0 || !(prot & PROT_EXEC))
		return 0;
	fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		ssize_t n = pread(fd, &e, sizeof(e), (off_t)(addr / pg * sizeof(e)));

		close(fd);
		if (n == (ssize_t)sizeof(e))
			return (e >> 62 & 1) || ((e >> 63 & 1) && !(e >> 61 & 1));
	}
	return pr_int3_at(addr);
}

/**
 * fdr_probe_forget - drop an armed probe whose text is gone, without writing
 * @site: from fdr_probe_arm()
 *
 * For a probe in a library that was unloaded (dlclose()): the address no
 * longer holds the page the int3 was written into: it is unmapped, or another
 * mapping (the same file loaded again, or another one) is there. Writing the
 * original byte back would fail, or corrupt that new code. The probe is turned
 * off, and with the last probe of its address the address is marked disarmed
 * (armed = 0), then the wait for its handlers follows, as fdr_probe_disarm()
 * does; so another probe may be armed at that address, and a trap there that
 * is not the engine's goes to the program's handler. Must not be called from a
 * probe handler.
 *
 * Returns: 0 (forgotten); -EBUSY if the int3 is still in place (disarm it with
 * fdr_probe_disarm()); -EINVAL if @site is NULL or not armed; -EDEADLK from a
 * probe handler.
 */
int fdr_probe_forget(struct fdr_probe_site *site)
{
	struct pr_site *s;
	unsigned int k, others = 0;

	if (!site)
		return -EINVAL;
	if (pr_depth > 0)
		return -EDEADLK;
	fdr_probe_lock();
	s = &pr_sites[site->site];
	if (!atomic_load(&site->on) || !atomic_load(&s->armed)) {
		fdr_probe_unlock();
		return -EINVAL;
	}
	if (pr_text_ours(atomic_load(&s->addr))) {
		fdr_probe_unlock();
		return -EBUSY;
	}
	for (k = 0; k < PR_SITE_PROBES; k++)
		others += &s->probes[k] != site && atomic_load(&s->probes[k].on);
	atomic_store(&site->on, 0);
	pr_solo_set(s);
	if (!others) {
		fdr_jump_forget(site->site); /* its window went with the text */
		atomic_fetch_add(&s->seq, 1);
		atomic_store(&s->armed, 0);
	}
	fdr_probe_unlock();
	while (atomic_load(&s->active) != 0)
		sched_yield();
	pr_infl_quiesce(s);
	return 0;
}

/** fdr_probe_site_hits - how many times @site's handler ran (0: FDR_PROBE_ARM_NOCOUNT). */
uint64_t fdr_probe_site_hits(const struct fdr_probe_site *site)
{
	return site ? atomic_load_explicit(&site->hits, memory_order_relaxed) : 0;
}

/** fdr_probe_site_misses - hits on which the handler did not run (nested in a handler). */
uint64_t fdr_probe_site_misses(const struct fdr_probe_site *site)
{
	return site ? atomic_load_explicit(&site->misses, memory_order_relaxed) : 0;
}

static void pr_fill_regs(struct fdr_probe_regs *r, const greg_t *g, uintptr_t addr)
{
	static const unsigned char from[FDR_REG_NR] = {
		[FDR_REG_AX] = REG_RAX,	 [FDR_REG_BX] = REG_RBX,    [FDR_REG_CX] = REG_RCX,
		[FDR_REG_DX] = REG_RDX,	 [FDR_REG_SI] = REG_RSI,    [FDR_REG_DI] = REG_RDI,
		[FDR_REG_BP] = REG_RBP,	 [FDR_REG_SP] = REG_RSP,    [FDR_REG_R8] = REG_R8,
		[FDR_REG_R9] = REG_R9,	 [FDR_REG_R10] = REG_R10,   [FDR_REG_R11] = REG_R11,
		[FDR_REG_R12] = REG_R12, [FDR_REG_R13] = REG_R13,   [FDR_REG_R14] = REG_R14,
		[FDR_REG_R15] = REG_R15, [FDR_REG_FLAGS] = REG_EFL,
	};
	uint64_t csgsfs = (uint64_t)g[REG_CSGSFS]; /* cs, gs, fs, ss: 16 bits each */

	_Static_assert(FDR_REG_R15 == 15 && FDR_REG_IP == 16, "gpr[0..15] are the 16 GPRs");
	int i;

	for (i = 0; i <= FDR_REG_R15; i++)
		r->gpr[i] = (uint64_t)g[from[i]];
	r->gpr[FDR_REG_IP] = addr;
	r->gpr[FDR_REG_FLAGS] = (uint64_t)g[REG_EFL];
	r->gpr[FDR_REG_CS] = csgsfs & 0xffff;
	r->gpr[FDR_REG_SS] = (csgsfs >> 48) & 0xffff;
	r->probe_addr = addr;
}

/*
 * Async-signal-safe: say why and stop (a return with no entry cannot be
 * resumed). Never inlined: tests/unit/check-hit-path.py stops its walk of the
 * vector-free hit path here (write() and abort() are libc's).
 */
__attribute__((noinline, cold, noreturn)) static void pr_ret_lost(void)
{
	static const char msg[] = "libfdr-probe: a return reached the return-probe trampoline "
				  "with no matching entry on this thread's stack; aborting\n";
	ssize_t r = write(2, msg, sizeof(msg) - 1);

	(void)r;
	abort();
}

/* tramp.S's hash of a return-address slot: the first of its PR_RTAB_PROBES slots. */
static unsigned int pr_rtab_hash(uintptr_t key)
{
	return (unsigned int)(((uint64_t)key * 0x9e3779b97f4a7c15ull) >> (64 - PR_RTAB_SHIFT));
}

/* Async-signal-safe: publish S -> @val for unwinders; its slot, or -1 if none is free. */
static int pr_rtab_insert(uintptr_t key, uintptr_t val)
{
	unsigned int j, h = pr_rtab_hash(key);

	/* a key already there was left by a frame that is gone: this thread owns S now */
	for (j = 0; j < PR_RTAB_PROBES; j++) {
		struct pr_rslot *e = &fdr_probe_ret_table[h + j];

		if (atomic_load_explicit(&e->key, memory_order_relaxed) == key) {
			atomic_store_explicit(&e->val, val, memory_order_relaxed);
			return (int)(h + j);
		}
	}
	for (j = 0; j < PR_RTAB_PROBES; j++) {
		struct pr_rslot *e = &fdr_probe_ret_table[h + j];
		uintptr_t free_key = 0;

		/* relaxed: only this thread reads key S back (its own unwinder) */
		if (atomic_compare_exchange_strong_explicit(
			    &e->key, &free_key, key, memory_order_relaxed, memory_order_relaxed)) {
			atomic_store_explicit(&e->val, val, memory_order_relaxed);
			return (int)(h + j);
		}
	}
	return -1;
}

/*
 * In the child of a fork: the other threads' pending returns are gone with
 * them; only this thread's stay in the table (their slots as they were).
 */
static void pr_rtab_atfork_child(void)
{
	unsigned int i;

	for (i = 0; i < PR_RTAB + PR_RTAB_PROBES; i++)
		atomic_store_explicit(&fdr_probe_ret_table[i].key, 0, memory_order_relaxed);
	for (i = 0; i < pr_nrets; i++) {
		atomic_store_explicit(&fdr_probe_ret_table[pr_rets[i].tab].val, pr_rets[i].ret,
				      memory_order_relaxed);
		atomic_store_explicit(&fdr_probe_ret_table[pr_rets[i].tab].key, pr_rets[i].sp,
				      memory_order_relaxed);
	}
}

/* @r's slot in the table is free again (unless a later frame at S took it over). */
static void pr_rtab_remove(const struct pr_ret *r)
{
	struct pr_rslot *e = &fdr_probe_ret_table[r->tab];

	if (atomic_load_explicit(&e->key, memory_order_relaxed) == r->sp &&
	    atomic_load_explicit(&e->val, memory_order_relaxed) == r->ret)
		atomic_store_explicit(&e->key, 0, memory_order_relaxed);
}

/* A return of @s not reported: a miss of each of its return probes. */
static void pr_ret_miss(struct pr_site *s)
{
	unsigned int k;

	for (k = 0; k < PR_SITE_PROBES; k++)
		if (atomic_load_explicit(&s->probes[k].on, memory_order_relaxed) &&
		    s->probes[k].ret)
			atomic_fetch_add_explicit(&s->probes[k].misses, 1, memory_order_relaxed);
}

/* A frame abandoned (longjmp(), an exception, a forced unwind): its entry goes, as a miss. */
static void pr_ret_drop(unsigned int i)
{
	pr_rtab_remove(&pr_rets[i]);
	pr_ret_miss(&pr_sites[pr_rets[i].site]);
}

/*
 * Entry of a return probe: hijack the return address at @sp, the function's
 * RSP at its first instruction (or count a miss). Called with pr_depth raised
 * by the caller, which saw it 0: a signal handler that hits a return probe
 * while this thread is in here counts a miss instead of changing pr_rets[].
 * @called: the hit is a jump trampoline's, which calls the function from
 * fdr_probe_ret_call when this returns 1 (struct pr_ret). Returns 1 if the
 * return address was hijacked.
 */
static int pr_ret_entry(struct pr_site *s, uintptr_t sp, uintptr_t tramp, int called)
{
	struct pr_ret *r;
	unsigned int i, j;
	int tab;

	/*
	 * An entry at this very slot, anywhere in the stack, is a frame gone (longjmp
	 * out of nested probed frames leaves them below newer entries): the call just
	 * wrote its own return address there. Not so if the slot holds the
	 * trampoline: a hijacked function tail-called this one, whose return goes
	 * through both entries.
	 */
	if (*(const uintptr_t *)sp != tramp) {
		for (i = pr_nrets; i-- > 0;) {
			if (pr_rets[i].sp != sp)
				continue;
			pr_ret_drop(i);
			for (j = i; j + 1 < pr_nrets; j++)
				pr_rets[j] = pr_rets[j + 1];
			pr_nrets--;
		}
	}
	/* stale entries: their slot was reused (at or below RSP now) and lost the trampoline */
	while (pr_nrets > 0 && pr_rets[pr_nrets - 1].sp <= sp &&
	       *(const uintptr_t *)pr_rets[pr_nrets - 1].sp != tramp)
		pr_ret_drop(--pr_nrets);
	if (pr_nrets >= PR_RET_DEPTH || !tramp ||
	    (tab = pr_rtab_insert(sp, *(const uintptr_t *)sp)) < 0) {
		pr_ret_miss(s);
		return 0;
	}
	r = &pr_rets[pr_nrets];
	r->ret = *(const uintptr_t *)sp;
	r->sp = sp;
	r->site = (uint32_t)(s - pr_sites);
	r->tab = (uint16_t)tab;
	r->called = (uint16_t)called;
	/* the entry is complete before the return can reach the trampoline */
	atomic_signal_fence(memory_order_seq_cst);
	pr_nrets++;
	*(uintptr_t *)sp = tramp;
	return 1;
}

/*
 * This thread's in-flight slot, claimed at its first jump hit (lock-free,
 * async-signal-safe); NULL where none can be used: the active count then.
 * Out of line: pr_infl_slot() below, inlined into the hit, only reads the
 * slot this thread already has (a call less a hit).
 */
static __attribute__((noinline, cold)) _Atomic(void *) *pr_infl_claim(void)
{
	unsigned int i, n;

	if (pr_infl_me < 0 || !atomic_load_explicit(&pr_infl_ok, memory_order_relaxed))
		return NULL;
	for (i = 0; i < PR_INFL; i++) {
		int free_slot = 0;

		if (atomic_load_explicit(&pr_infl[i].used, memory_order_relaxed) ||
		    !atomic_compare_exchange_strong(&pr_infl[i].used, &free_slot, 1))
			continue;
		/* seq_cst, before the slot is first stored: pr_infl_quiesce() reads n first */
		n = atomic_load(&pr_infl_n);
		while (n < i + 1 && !atomic_compare_exchange_weak(&pr_infl_n, &n, i + 1))
			;
		pr_infl_me = (int)i + 1;
		return &pr_infl[i].site;
	}
	pr_infl_me = -1;
	return NULL;
}

/* This thread's in-flight slot (pr_infl_claim() at its first hit), or NULL. */
static inline __attribute__((always_inline)) _Atomic(void *) *pr_infl_slot(void)
{
	int me = pr_infl_me;

	if (__builtin_expect(me > 0, 1))
		return &pr_infl[me - 1].site;
	return pr_infl_claim();
}

/*
 * A hit on @s begins: this thread's in-flight slot holds the site (a plain
 * store; the disarmer's membarrier() stands for the fence, pr_infl_quiesce()),
 * or, without a slot or nested in a hit that holds it (a signal handler), the
 * active count as the int3 path keeps it. Returns what pr_hit_leave() needs.
 */
static inline __attribute__((always_inline)) _Atomic(void *) *pr_hit_enter(struct pr_site *s)
{
	_Atomic(void *) *slot = pr_infl_slot();

	if (slot && !atomic_load_explicit(slot, memory_order_relaxed)) {
		atomic_store_explicit(slot, s, memory_order_relaxed);
		atomic_signal_fence(memory_order_seq_cst);
		return slot;
	}
	atomic_fetch_add(&s->active, 1); /* seq_cst: before the armed load (essay) */
	return NULL;
}

static inline void pr_hit_leave(struct pr_site *s, _Atomic(void *) *slot)
{
	if (slot)
		atomic_store_explicit(slot, NULL, memory_order_release);
	else
		atomic_fetch_sub(&s->active, 1);
}

#ifdef FDR_HIT_NOVEC
/* Through fdr_vcall() (vector state and errno saved): a handler that may touch them */
static long pr_call_general(long fn, long regs, long arg)
{
	((fdr_probe_handler)fn)((const struct fdr_probe_regs *)regs, (void *)arg);
	return 0;
}
#endif

/* Call @p's handler (pr_depth raised by the caller); FDR_HIT_NOVEC: see fdr_probe_fire(). */
static void pr_call(const struct fdr_probe_site *p, const struct fdr_probe_regs *regs)
{
	fdr_probe_handler fn = atomic_load_explicit(&p->fn, memory_order_relaxed);
	void *arg = atomic_load_explicit(&p->arg, memory_order_relaxed);

#ifdef FDR_HIT_NOVEC
	if (p->novec)
		fn(regs, arg);
	else
		(void)fdr_vcall((void *)pr_call_general, (long)fn, (long)regs, (long)arg, 0, 0);
#else
	fn(regs, arg);
#endif
}

/*
 * Run entry or return probe @p at a hit (pr_depth raised by the caller): the
 * agent's record inline where it was armed with FDR_PROBE_ARM_RECORD
 * (record.h, without the call), else its handler; then its hit counted.
 */
static inline __attribute__((always_inline)) void pr_run(struct fdr_probe_site *p,
							 const struct fdr_probe_regs *regs)
{
	if (p->record)
		fdr_probe_rec_fast(atomic_load_explicit(&p->arg, memory_order_relaxed), regs);
	else
		pr_call(p, regs);
	if (!p->nocount) /* a locked add: a sixth of a hit */
		atomic_fetch_add_explicit(&p->hits, 1, memory_order_relaxed);
}

/*
 * fdr_probe_ret_fire - a probed function returned to the trampoline
 * (tramp.S's fdr_probe_ret_tramp, with no trap: docs/design/probes.md,
 * "Return probes")
 * @regs: the registers of the return, pushed by the trampoline; gpr[SP] is
 *	RSP after the ret (S + 8, S the return-address slot), FLAGS set; IP,
 *	CS, SS and probe_addr are filled here
 *
 * Finds this thread's entry whose slot is S (entries above it belong to
 * frames longjmp() abandoned: dropped as misses), calls the return probes of
 * its site that are on, frees its table slot and returns the real return
 * address, where the trampoline goes on: with bit 63 (PR_RET_CALLED) set if
 * the entry was made on a jump trampoline's call path (struct pr_ret), whose
 * return goes on by a ret (the return stack buffer then stays balanced).
 * Runs in the thread's ordinary context (FDR_HIT_NOVEC: without the vector
 * state saved, as fdr_probe_fire(); other builds: through fdr_vcall()). A
 * return with no entry aborts: there is no address to go back to.
 */
__attribute__((visibility("hidden"))) uintptr_t fdr_probe_ret_fire(struct fdr_probe_regs *regs);
uintptr_t fdr_probe_ret_fire(struct fdr_probe_regs *regs)
{
	uintptr_t sp = (uintptr_t)regs->gpr[FDR_REG_SP];
	_Atomic(void *) *slot;
	struct pr_site *s;
	struct fdr_probe_site *one;
	struct pr_ret r;
	unsigned int k, i = pr_nrets;
	int nested = pr_depth++ > 0; /* from here a signal handler's entries are misses */
	uint16_t sel;

	while (i > 0 && pr_rets[i - 1].sp + 8 != sp)
		i--;
	if (i == 0)
		pr_ret_lost();
	r = pr_rets[i - 1];
	while (pr_nrets > i)
		pr_ret_drop(--pr_nrets);
	pr_nrets = i - 1;
	s = &pr_sites[r.site];
	regs->gpr[FDR_REG_IP] = r.ret;
	__asm__("mov %%cs,%0" : "=r"(sel));
	regs->gpr[FDR_REG_CS] = sel;
	__asm__("mov %%ss,%0" : "=r"(sel));
	regs->gpr[FDR_REG_SS] = sel;
	regs->probe_addr = atomic_load_explicit(&s->addr, memory_order_relaxed);
	slot = pr_hit_enter(s);
	/* acquire: its fields (record, nocount, fn, arg) were written before (pr_solo_set()) */
	one = atomic_load_explicit(&s->ret_solo, memory_order_acquire);
	/* the usual case: one return probe on (pr_solo_set()), not nested */
	if (__builtin_expect(one != NULL && !nested, 1))
		pr_run(one, regs);
	for (k = 0; k < PR_SITE_PROBES && (!one || nested); k++) {
		struct fdr_probe_site *p = &s->probes[k];

		/* a probe disarmed since the entry (or re-armed as an entry probe): none */
		if (!atomic_load(&p->on) || !p->ret) {
			continue;
		} else if (!nested) {
			pr_run(p, regs);
		} else {
			atomic_fetch_add_explicit(&p->misses, 1, memory_order_relaxed);
		}
	}
	pr_hit_leave(s, slot);
	/* only now: an unwinder running in the handler (backtrace()) still finds it */
	pr_rtab_remove(&r);
	pr_depth--;
	/* user-space addresses have bit 63 clear (x86-64's lower canonical half) */
	return r.ret | (r.called ? PR_RET_CALLED : 0);
}

/*
 * The personality of the trampoline frame (tramp.S). Phase 1 and backtraces
 * pass through with tramp.S's table lookup; a phase-2 unwind (the exception's
 * handler is above, or a forced unwind: pthread_exit(), pthread_cancel()) is
 * sent to fdr_probe_ret_pad with the exception in the first EH data register,
 * which drops the entry and resumes from a frame called from the caller.
 */
__attribute__((visibility("hidden"))) _Unwind_Reason_Code
fdr_probe_ret_personality(int version, _Unwind_Action actions, _Unwind_Exception_Class cls,
			  struct _Unwind_Exception *ue, struct _Unwind_Context *ctx);
_Unwind_Reason_Code fdr_probe_ret_personality(int version, _Unwind_Action actions,
					      _Unwind_Exception_Class cls,
					      struct _Unwind_Exception *ue,
					      struct _Unwind_Context *ctx)
{
	uintptr_t sp = (uintptr_t)_Unwind_GetCFA(ctx) - 8;
	unsigned int i = pr_nrets;

	(void)cls;
	if (version != 1 || !(actions & _UA_CLEANUP_PHASE))
		return _URC_CONTINUE_UNWIND;
	while (i > 0 && pr_rets[i - 1].sp != sp)
		i--;
	if (i == 0)
		return _URC_CONTINUE_UNWIND; /* not this thread's: nothing to drop */
	_Unwind_SetGR(ctx, __builtin_eh_return_data_regno(0), (_Unwind_Ptr)ue);
	_Unwind_SetIP(ctx, (_Unwind_Ptr)fdr_probe_ret_pad);
	return _URC_INSTALL_CONTEXT;
}

/*
 * Called by fdr_probe_ret_pad with the slot @sp of a return an unwind passes:
 * the function will never return, so its entry (and those above it, frames
 * already gone) are dropped as misses. Returns the real return address.
 */
__attribute__((visibility("hidden"))) uintptr_t fdr_probe_ret_unwound(uintptr_t sp);
uintptr_t fdr_probe_ret_unwound(uintptr_t sp)
{
	unsigned int i = pr_nrets;
	uintptr_t ret;

	while (i > 0 && pr_rets[i - 1].sp != sp)
		i--;
	if (i == 0)
		pr_ret_lost(); /* the personality found it a moment ago */
	while (pr_nrets > i)
		pr_ret_drop(--pr_nrets);
	ret = pr_rets[i - 1].ret;
	pr_ret_drop(--pr_nrets);
	return ret;
}

/**
 * fdr_probe_ret_pending - this thread's pending return probes (tests)
 * @table: if not NULL, set to the number of pending returns of all threads
 *	that unwinders can see (fdr_probe_ret_table's used slots)
 *
 * Returns: how many hijacked returns this thread has not come back through.
 */
unsigned int fdr_probe_ret_pending(unsigned int *table)
{
	unsigned int i, n = 0;

	if (table) {
		for (i = 0; i < PR_RTAB + PR_RTAB_PROBES; i++)
			n += atomic_load_explicit(&fdr_probe_ret_table[i].key,
						  memory_order_relaxed) != 0;
		*table = n;
	}
	return pr_nrets;
}

static void pr_sigtrap(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;
	greg_t *g = uc->uc_mcontext.gregs;
	struct pr_site *s;
	struct fdr_probe_regs regs;
	const struct fdr_reloc_insn *in;
	uintptr_t addr, next, tramp;
	int saved_errno = errno, filled = 0, ret_on = 0;
	unsigned int k, seq;

	/* int3 raises #BP (vector 3), reported as SI_KERNEL; anything else is not ours */
	if (si->si_code != SI_KERNEL || g[REG_TRAPNO] != 3)
		goto chain;
	addr = (uintptr_t)g[REG_RIP] - 1;
	s = pr_lookup(addr);
	if (!s)
		goto chain;
	atomic_fetch_add(&s->active, 1); /* seq_cst: before the armed load (essay) */
	seq = atomic_load(&s->seq);
	if (!atomic_load(&s->armed)) {
		/*
		 * An int3 there while the site stayed disarmed is the program's (its
		 * text was unloaded and other code mapped there: fdr_probe_forget()).
		 * Ours is written only after seq + 1 and armed = 1, and goes before
		 * seq + 1 and armed = 0: seeing ours here, seq or armed changed.
		 */
		int foreign = *(volatile const uint8_t *)addr == 0xcc && !atomic_load(&s->armed) &&
			      atomic_load(&s->seq) == seq;

		atomic_fetch_sub(&s->active, 1);
		if (foreign)
			goto chain;
		/* already gone: run the original instruction, now back in place */
		g[REG_RIP] = (greg_t)addr;
		errno = saved_errno;
		return;
	}
	in = &s->insn;
	/* entry handlers first: they see the return address before a hijack changes it */
	for (k = 0; k < PR_SITE_PROBES; k++) {
		struct fdr_probe_site *p = &s->probes[k];

		if (!atomic_load(&p->on)) { /* seq_cst: after active++ (essay) */
			continue;
		} else if (p->ret) {
			ret_on = 1;
		} else if (pr_depth == 0) {
			fdr_probe_handler fn = atomic_load_explicit(&p->fn, memory_order_relaxed);

			if (!filled)
				pr_fill_regs(&regs, g, addr);
			filled = 1;
			pr_depth++;
			fn(&regs, atomic_load_explicit(&p->arg, memory_order_relaxed));
			pr_depth--;
			if (!p->nocount)
				atomic_fetch_add_explicit(&p->hits, 1, memory_order_relaxed);
		} else {
			atomic_fetch_add_explicit(&p->misses, 1, memory_order_relaxed);
		}
	}
	/* one hijack for all the return probes; in a probe handler, a miss */
	if (ret_on && pr_depth++ == 0)
		(void)pr_ret_entry(s, (uintptr_t)g[REG_RSP],
				   atomic_load_explicit(&pr_tramp, memory_order_acquire), 0);
	else if (ret_on)
		pr_ret_miss(s);
	if (ret_on)
		pr_depth--;
	next = addr + in->len;
	tramp = atomic_load(&s->jump_resume);
	if (tramp) {
		/* the window's tail may be a jmp's: the trampoline runs all of it */
		g[REG_RIP] = (greg_t)tramp;
	} else if (s->xol_all) {
		g[REG_RIP] = (greg_t)s->slot;
	} else {
		switch (in->kind) {
		case FDR_RELOC_JMP:
			g[REG_RIP] = (greg_t)in->target;
			break;
		case FDR_RELOC_JCC:
			g[REG_RIP] = (greg_t)(fdr_reloc_cond_true(in->cond, (uint64_t)g[REG_EFL]) ?
						      in->target :
						      next);
			break;
		case FDR_RELOC_CALL:
			g[REG_RSP] -= 8;
			*(uint64_t *)(uintptr_t)g[REG_RSP] = next;
			g[REG_RIP] = (greg_t)in->target;
			break;
		default: /* COPY, CALL_IND: the slot */
			g[REG_RIP] = (greg_t)s->slot;
			break;
		}
	}
	atomic_fetch_sub(&s->active, 1);
	errno = saved_errno;
	return;
chain:
	errno = saved_errno;
	fdr_probe_sig_chain(sig, si, ucv);
}

/* ---- for jump.c (jump-optimised probes): the addresses seen from outside ---- */

/* Under pr_lock: the bytes of @addr.. with every probe's patch undone (pr_read_orig()). */
size_t fdr_probe_read_orig(uintptr_t addr, uint8_t *buf, size_t len)
{
	return pr_read_orig(addr, buf, len);
}

/* The index of @p's address in the site table; whether @p is armed. */
unsigned int fdr_probe_index(const struct fdr_probe_site *p)
{
	return p->site;
}

int fdr_probe_is_on(const struct fdr_probe_site *p)
{
	return atomic_load((atomic_int *)&p->on);
}

/**
 * fdr_probe_warm - bring in, ahead of a process's first arm, what it writes first
 *
 * The page of the list of sites in use (and the count beside it): read by the
 * first arm's boundary check, then written when the site is made, it faulted
 * twice in the middle of that arm. And /proc/self/mem (fdr_patch_warm()).
 * Called by the agent's first sync (agent.c, pa_warm()); changes nothing.
 */
void fdr_probe_warm(void)
{
	fdr_probe_lock();
	if (pr_nused < PR_SITES)
		((volatile uint16_t *)pr_used)[pr_nused] = 0; /* unused: 0 already */
	fdr_probe_unlock();
	fdr_patch_warm();
}

/*
 * Under pr_lock: how many sites were ever made (never fewer: a site keeps its
 * address), and the table index of the @k-th. jump.c walks these rather than
 * the whole table (4096 entries, 1.4 MiB: a walk of it faulted in up to 344
 * pages of zeros, and its window table 8, at a process's first arm).
 */
unsigned int fdr_probe_nused(void)
{
	return pr_nused;
}

unsigned int fdr_probe_used_at(unsigned int k)
{
	return pr_used[k];
}

/* The address at index @i, 0 if that entry was never used. */
uintptr_t fdr_probe_addr_at(unsigned int i)
{
	return i < PR_SITES ? atomic_load_explicit(&pr_sites[i].addr, memory_order_acquire) : 0;
}

int fdr_probe_armed_at(unsigned int i)
{
	return atomic_load(&pr_sites[i].armed);
}

const struct fdr_reloc_insn *fdr_probe_insn_at(unsigned int i)
{
	return &pr_sites[i].insn;
}

uintptr_t fdr_probe_slot_at(unsigned int i)
{
	return pr_sites[i].slot;
}

void *fdr_probe_site_at(unsigned int i)
{
	return &pr_sites[i];
}

/* seq_cst: an int3 hit that reads it after this store resumes at @resume (0: as usual). */
void fdr_probe_set_resume_at(unsigned int i, uintptr_t resume)
{
	atomic_store(&pr_sites[i].jump_resume, resume);
}

/* Wait until no handler runs at index @i (one that read jump_resume before it changed). */
void fdr_probe_wait_idle_at(unsigned int i)
{
	while (atomic_load(&pr_sites[i].active) != 0)
		sched_yield();
}

int fdr_probe_in_handler(void)
{
	return pr_depth > 0;
}

/*
 * A jump hit's hijack of the return (pr_ret_entry()), told to the trampoline
 * by FDR_PROBE_FLAGS_CALL in @regs' FLAGS: it then calls the displaced
 * instructions (fdr_probe_fire())
 */
static inline __attribute__((always_inline)) void pr_jump_hijack(struct pr_site *s,
								 struct fdr_probe_regs *regs)
{
	if (pr_ret_entry(s, (uintptr_t)regs->gpr[FDR_REG_SP],
			 atomic_load_explicit(&pr_tramp, memory_order_acquire), 1))
		regs->gpr[FDR_REG_FLAGS] |= FDR_PROBE_FLAGS_CALL;
}

/* fdr_probe_fire() past its usual case: every probe of the site, by its rules */
static __attribute__((noinline)) void pr_fire_all(struct pr_site *s, struct fdr_probe_regs *regs)
{
	unsigned int k;
	int ret_on = 0;

	if (atomic_load(&s->armed)) {
		for (k = 0; k < PR_SITE_PROBES; k++) {
			struct fdr_probe_site *p = &s->probes[k];

			if (!atomic_load(&p->on)) {
				continue;
			} else if (p->ret) {
				ret_on = 1;
			} else if (pr_depth == 0) {
				pr_depth++;
				pr_run(p, regs);
				pr_depth--;
			} else {
				atomic_fetch_add_explicit(&p->misses, 1, memory_order_relaxed);
			}
		}
	}
	if (ret_on && pr_depth++ == 0)
		pr_jump_hijack(s, regs);
	else if (ret_on)
		pr_ret_miss(s);
	if (ret_on)
		pr_depth--;
}

/*
 * A hit through a jump trampoline (@site: a struct pr_site): what the SIGTRAP
 * handler does for the probes of an address, by the same rules (nesting is a
 * miss, no handler once disarmed, and in flight around the armed and 'on'
 * tests: this thread's slot, which the disarm waits on after a membarrier(),
 * instead of two locked adds to "active" where it can; see pr_hit_enter()).
 * Entry handlers run first; then, if a return probe is on, one hijack of the
 * return address at gpr[SP] serves them all (pr_ret_entry(), the int3 form's).
 * The trampoline then runs the displaced instructions whether or not a
 * handler ran: jumping to them, or, where the return address was hijacked,
 * calling them from tramp.S's fdr_probe_ret_call, so that the function's ret
 * is predicted (docs/design/probes.md, "A return that is predicted"). The
 * hijack says so by setting FDR_PROBE_FLAGS_CALL in @regs' FLAGS once every
 * handler has run: the trampoline tests it with DF, in the one test it made
 * before (jump.c, jp_emit_back()); a return value tested after the call cost
 * a hit without return probes 0.6 to 1 ns. The usual case, one entry probe
 * on the address (the site's solo, with or without return probes besides),
 * is taken first; an agent probe armed with FDR_PROBE_ARM_RECORD has its
 * record written here, without the call to its handler (record.h).
 *
 * FDR_HIT_NOVEC (the usual build): the trampoline saved the general registers
 * only, and this runs compiled with -mgeneral-regs-only. A handler armed with
 * FDR_PROBE_ARM_NOVEC is called directly; any other through fdr_vcall(), with
 * the vector state and errno saved around it (docs/design/probes.md, "A hit
 * without the vector state"). Otherwise (sanitizer builds) the trampoline saved
 * the vector state, and errno is kept here.
 */
void fdr_probe_fire(void *site, struct fdr_probe_regs *regs)
{
	struct pr_site *s = site;
#ifndef FDR_HIT_NOVEC
	int saved_errno = errno;
#endif
	_Atomic(void *) *slot = pr_hit_enter(s);
	/* acquire: as ret_solo in fdr_probe_ret_fire() (a plain load on x86) */
	struct fdr_probe_site *solo = atomic_load_explicit(&s->solo, memory_order_acquire);

	/*
	 * The usual case: one entry probe (pr_solo_set()), not nested; the
	 * agent's record written here, without the call to its handler
	 * (record.h).
	 */
	if (__builtin_expect(solo != NULL && pr_depth == 0, 1) && atomic_load(&s->armed)) {
		pr_depth = 1;
		pr_run(solo, regs);
		/* return probes on besides (pr_fire_all()'s rule: one hijack for them all) */
		if (atomic_load_explicit(&s->solo_ret, memory_order_relaxed))
			pr_jump_hijack(s, regs);
		pr_depth = 0;
	} else {
		pr_fire_all(s, regs);
	}
	pr_hit_leave(s, slot);
#ifndef FDR_HIT_NOVEC
	errno = saved_errno;
#endif
}
