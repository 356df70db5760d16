// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test-probe-ret.c - return probes of libfdr-probe's engine (FDR_PROBE_ARM_RETURN).
 *
 * Criterion runs each test in a process of its own. The probed functions are
 * plain C (noinline); each test arms a return probe on one and checks what the
 * handler saw at every return (RAX, the return address, the function) and that
 * the program's own results stay right: normal returns, recursion (returns in
 * order, and the per-thread stack's overflow as misses), longjmp() out of a
 * probed function, threads exiting with returns pending (pthread_exit() through
 * the trampoline, into the callers' cleanups), a signal handler running a
 * probed function between an entry and its return (on the thread's stack and
 * on a sigaltstack), and what an unwinder sees through a pending return
 * (docs/design/probes.md, "Return probes"; C++ exceptions: test-probe-ret-cxx.cc).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <execinfo.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "engine.h"

#define A(f) ((uintptr_t)(void *)(f))

struct rets {
	atomic_ulong n;
	int64_t seen[256];
	uint64_t ip[256];
	uint64_t func;
};

static void ret_hit(const struct fdr_probe_regs *r, void *arg)
{
	struct rets *h = arg;
	unsigned long i = atomic_fetch_add(&h->n, 1);

	if (i < 256) {
		h->seen[i] = (int64_t)r->gpr[FDR_REG_AX];
		h->ip[i] = r->gpr[FDR_REG_IP];
	}
	h->func = r->probe_addr;
}

static volatile uintptr_t sq_ra;

/*
 * The probed functions stay as written at any optimisation level: not inlined,
 * and (gcc) not cloned, split or changed by interprocedural analysis: without
 * noipa, 4 of these 8 cases failed in the -O3 Release build (CI's release step).
 */
#if defined(__clang__)
#define TARGET __attribute__((noinline))
#else
#define TARGET __attribute__((noinline, noipa))
#endif

TARGET static int64_t r_sq(int64_t x)
{
	sq_ra = (uintptr_t)__builtin_return_address(0);
	__asm__ volatile("" ::: "memory");
	return x * x - 7;
}

TARGET static int64_t call_sq(int64_t x)
{
	int64_t v = r_sq(x);

	__asm__ volatile("" ::: "memory");
	return v;
}

Test(ret, normal_returns)
{
	struct fdr_probe_site *s;
	struct rets *h = calloc(1, sizeof(*h));
	int64_t i, sum = 0, want = 0;
	uintptr_t ra;

	cr_assert_eq(call_sq(2), -3);
	ra = sq_ra; /* the return address in call_sq() */
	cr_assert_eq(fdr_probe_arm_flags(A(r_sq), FDR_PROBE_ARM_RETURN, ret_hit, h, &s), 0);
	for (i = 0; i < 1000; i++) {
		int64_t v = call_sq(i - 500);

		cr_assert_eq(v, (i - 500) * (i - 500) - 7, "call %ld returned %ld", (long)i,
			     (long)v);
		if (i < 256) {
			cr_assert_eq(h->seen[i], v, "$retval of call %ld", (long)i);
			cr_assert_eq(h->ip[i], ra, "the return address of call %ld", (long)i);
			/* inside, the return address is the trampoline (as under the kernel's) */
			cr_assert_neq(sq_ra, ra);
		}
		sum += v;
		want += (i - 500) * (i - 500) - 7;
	}
	cr_assert_eq(sum, want);
	cr_assert_eq(atomic_load(&h->n), 1000);
	cr_assert_eq(h->func, A(r_sq), "probe_addr: the function");
	cr_assert_eq(fdr_probe_site_hits(s), 1000);
	cr_assert_eq(fdr_probe_site_misses(s), 0);
	cr_assert_eq(fdr_probe_disarm(s), 0);
	cr_assert_eq(r_sq(3), 2);
	cr_assert_eq(atomic_load(&h->n), 1000, "no handler after the disarm");
}

struct entries {
	atomic_ulong n;
	int64_t di[256];
	uint64_t ra[256]; /* *%rsp at the entry: the return address */
};

static void entry_hit(const struct fdr_probe_regs *r, void *arg)
{
	struct entries *e = arg;
	unsigned long i = atomic_fetch_add(&e->n, 1);

	if (i < 256) {
		e->di[i] = (int64_t)r->gpr[FDR_REG_DI];
		e->ra[i] = *(const uint64_t *)(uintptr_t)r->gpr[FDR_REG_SP];
	}
}

/*
 * An entry probe and a return probe on the same function, armed and disarmed
 * independently: each handler sees its own values (the entry handler the real
 * return address: it runs before the hijack), the int3 stays while either is
 * armed, and up to 4 probes share an address (the 5th is refused).
 */
Test(ret, entry_and_return_same_function)
{
	struct fdr_probe_site *pe, *pr, *more[3];
	struct rets *h = calloc(1, sizeof(*h));
	struct entries *e = calloc(1, sizeof(*e));
	uint8_t orig = *(const volatile uint8_t *)A(r_sq);
	uintptr_t ra;
	int64_t i;

	cr_assert_eq(call_sq(2), -3);
	ra = sq_ra;
	cr_assert_eq(fdr_probe_arm(A(r_sq), entry_hit, e, &pe), 0);
	cr_assert_eq(fdr_probe_arm_flags(A(r_sq), FDR_PROBE_ARM_RETURN, ret_hit, h, &pr), 0);
	for (i = 0; i < 100; i++) {
		cr_assert_eq(call_sq(i), i * i - 7);
		cr_assert_eq(e->di[i], i, "entry %ld: %%di", (long)i);
		cr_assert_eq(e->ra[i], ra, "entry %ld: the real return address", (long)i);
		cr_assert_eq(h->seen[i], i * i - 7, "return %ld: $retval", (long)i);
		cr_assert_eq(h->ip[i], ra);
	}
	/* the entry probe goes, the return probe stays (the int3 with it) */
	cr_assert_eq(fdr_probe_disarm(pe), 0);
	cr_assert_eq(*(const volatile uint8_t *)A(r_sq), 0xcc);
	for (i = 100; i < 150; i++)
		cr_assert_eq(call_sq(i), i * i - 7);
	cr_assert_eq(atomic_load(&e->n), 100);
	cr_assert_eq(atomic_load(&h->n), 150);
	cr_assert_eq(h->seen[149], 149 * 149 - 7);
	/* back, and the return probe goes first this time */
	cr_assert_eq(fdr_probe_arm(A(r_sq), entry_hit, e, &pe), 0);
	cr_assert_eq(fdr_probe_disarm(pr), 0);
	for (i = 150; i < 200; i++)
		cr_assert_eq(call_sq(i), i * i - 7);
	cr_assert_eq(atomic_load(&e->n), 150);
	cr_assert_eq(e->di[149], 199);
	cr_assert_eq(atomic_load(&h->n), 150, "no return reported once its probe went");
	cr_assert_eq(sq_ra, ra, "no hijack without a return probe");
	/* 4 probes at one address at most */
	cr_assert_eq(fdr_probe_arm_flags(A(r_sq), FDR_PROBE_ARM_RETURN, ret_hit, h, &pr), 0);
	cr_assert_eq(fdr_probe_arm(A(r_sq), entry_hit, e, &more[0]), 0);
	cr_assert_eq(fdr_probe_arm(A(r_sq), entry_hit, e, &more[1]), 0);
	cr_assert_eq(fdr_probe_arm(A(r_sq), entry_hit, e, &more[2]), -EBUSY);
	cr_assert_eq(call_sq(3), 2);
	cr_assert_eq(atomic_load(&e->n), 153, "three entry handlers");
	cr_assert_eq(atomic_load(&h->n), 151);
	cr_assert_eq(fdr_probe_disarm(more[0]), 0);
	cr_assert_eq(fdr_probe_disarm(pe), 0);
	cr_assert_eq(fdr_probe_disarm(pr), 0);
	cr_assert_eq(*(const volatile uint8_t *)A(r_sq), 0xcc);
	cr_assert_eq(fdr_probe_disarm(more[1]), 0);
	cr_assert_eq(*(const volatile uint8_t *)A(r_sq), orig, "the original byte, with the last");
	cr_assert_eq(fdr_probe_site_misses(pe) + fdr_probe_site_misses(pr), 0);
}

static int64_t r_fact(int64_t n);
static int64_t (*volatile fact_p)(int64_t) = r_fact; /* no recursion turned into a loop */

TARGET static int64_t r_fact(int64_t n)
{
	/* unsigned: 40! wraps (defined), the same every time; signed overflow is UB */
	int64_t v = n <= 1 ? 1 : (int64_t)((uint64_t)n * (uint64_t)fact_p(n - 1));

	__asm__ volatile("" ::: "memory");
	return v;
}

Test(ret, recursion_in_order_and_overflow)
{
	struct fdr_probe_site *s;
	struct rets *h = calloc(1, sizeof(*h));
	int64_t f = 1;
	int i;

	cr_assert_eq(fdr_probe_arm_flags(A(r_fact), FDR_PROBE_ARM_RETURN, ret_hit, h, &s), 0);
	cr_assert_eq(r_fact(12), 479001600);
	cr_assert_eq(atomic_load(&h->n), 12);
	for (i = 0; i < 12; i++) {
		f *= i + 1;
		cr_assert_eq(h->seen[i], f, "return %d (innermost first): %ld", i,
			     (long)h->seen[i]);
	}
	/* 40 deep: the 32 outer calls are hijacked, the 8 inner ones are misses */
	atomic_store(&h->n, 0);
	cr_assert_eq(r_fact(40), r_fact(40)); /* wraps, the same both times */
	cr_assert_eq(atomic_load(&h->n), 64);
	cr_assert_eq(fdr_probe_site_misses(s), 16);
	cr_assert_eq(fdr_probe_disarm(s), 0);
}

static jmp_buf jb;

TARGET static int64_t r_jump(int64_t x)
{
	if (x & 1)
		longjmp(jb, 1);
	__asm__ volatile("" ::: "memory");
	return x + 1000;
}

TARGET static int64_t call_jump(int64_t x)
{
	int64_t v = r_jump(x);

	__asm__ volatile("" ::: "memory");
	return v;
}

/*
 * Writes over the stack below the caller's frame, where the frames a longjmp
 * abandoned were: an abandoned entry is dropped at the next entry only once its
 * slot no longer holds the trampoline (the engine keeps one that does: it may be
 * a live frame on another stack), and what overwrites it otherwise depends on
 * the build (under ASan it sometimes survived). Not instrumented: ASan would put
 * the buffer elsewhere.
 */
#if defined(__clang__)
#define SCRUB __attribute__((noinline, no_sanitize("address")))
#else
#define SCRUB __attribute__((noinline, noipa, no_sanitize_address))
#endif
SCRUB static void scrub_stack(void)
{
	volatile unsigned char buf[8192];
	size_t k;

	for (k = 0; k < sizeof(buf); k++)
		buf[k] = 0;
}

Test(ret, longjmp_out)
{
	struct fdr_probe_site *s;
	struct rets *h = calloc(1, sizeof(*h));
	volatile int64_t i, jumped = 0, sum = 0;

	cr_assert_eq(fdr_probe_arm_flags(A(r_jump), FDR_PROBE_ARM_RETURN, ret_hit, h, &s), 0);
	for (i = 0; i < 1000; i++) {
		if (setjmp(jb)) {
			jumped++;
			continue;
		}
		sum += call_jump(i);
	}
	cr_assert_eq(jumped, 500);
	cr_assert_eq(sum, 500 * 1000 + 2 * (499 * 500 / 2));
	/* every normal return reported, with its value: the stale entries never pile up */
	cr_assert_eq(atomic_load(&h->n), 500);
	for (i = 0; i < 128; i++)
		cr_assert_eq(h->seen[i], 2 * i + 1000, "return %ld", (long)i);
	/* the entry abandoned by the last longjmp is dropped at the next entry, its slot overwritten */
	cr_assert_geq(fdr_probe_site_misses(s), 499);
	cr_assert_leq(fdr_probe_site_misses(s), 500);
	scrub_stack();
	cr_assert_eq(r_jump(2), 1002);
	cr_assert_eq(fdr_probe_site_misses(s), 500);
	cr_assert_eq(atomic_load(&h->n), 501);
	cr_assert_eq(fdr_probe_disarm(s), 0);
}

static jmp_buf jb3;

TARGET static int64_t r_l3(int64_t x)
{
	if (x & 1)
		longjmp(jb3, 1);
	__asm__ volatile("" ::: "memory");
	return x + 3;
}

TARGET static int64_t r_l2(int64_t x)
{
	int64_t v = r_l3(x);

	__asm__ volatile("" ::: "memory");
	return v + 2;
}

TARGET static int64_t r_l1(int64_t x)
{
	int64_t v = r_l2(x);

	__asm__ volatile("" ::: "memory");
	return v + 1;
}

/*
 * longjmp out of three nested return-probed frames, every other call: the
 * three abandoned entries (their slots still hold the trampoline, under newer
 * entries) are dropped when the next calls reuse their slots, so nothing builds
 * up: after each normal call nothing is pending, every normal return is
 * reported and each abandoned frame counts one miss.
 */
Test(ret, longjmp_out_nested)
{
	struct fdr_probe_site *s1, *s2, *s3;
	struct rets *h1 = calloc(1, sizeof(*h1)), *h2 = calloc(1, sizeof(*h2)),
		    *h3 = calloc(1, sizeof(*h3));
	volatile int64_t i, jumped = 0, sum = 0;
	unsigned int tab;

	cr_assert_eq(fdr_probe_arm_flags(A(r_l1), FDR_PROBE_ARM_RETURN, ret_hit, h1, &s1), 0);
	cr_assert_eq(fdr_probe_arm_flags(A(r_l2), FDR_PROBE_ARM_RETURN, ret_hit, h2, &s2), 0);
	cr_assert_eq(fdr_probe_arm_flags(A(r_l3), FDR_PROBE_ARM_RETURN, ret_hit, h3, &s3), 0);
	for (i = 0; i < 1000; i++) {
		if (setjmp(jb3)) {
			jumped++;
			continue;
		}
		sum += r_l1(i);
		cr_assert_eq(fdr_probe_ret_pending(NULL), 0, "call %ld: returns left pending",
			     (long)i);
	}
	cr_assert_eq(jumped, 500);
	cr_assert_eq(sum, 500 * 6 + 2 * (499 * 500 / 2));
	cr_assert_eq(r_l1(0), 6);
	cr_assert_eq(fdr_probe_ret_pending(&tab), 0);
	cr_assert_eq(tab, 0);
	cr_assert_eq(atomic_load(&h1->n), 501);
	cr_assert_eq(atomic_load(&h2->n), 501);
	cr_assert_eq(atomic_load(&h3->n), 501);
	for (i = 0; i < 128; i++)
		cr_assert(h3->seen[i] == 2 * i + 3 && h2->seen[i] == 2 * i + 5 &&
				  h1->seen[i] == 2 * i + 6,
			  "return %ld", (long)i);
	cr_assert_eq(fdr_probe_site_misses(s1), 500);
	cr_assert_eq(fdr_probe_site_misses(s2), 500);
	cr_assert_eq(fdr_probe_site_misses(s3), 500);
	cr_assert_eq(fdr_probe_disarm(s1), 0);
	cr_assert_eq(fdr_probe_disarm(s2), 0);
	cr_assert_eq(fdr_probe_disarm(s3), 0);
}

/* rt_f(x) = rt_g(x + 1) by a tail call (jmp), whatever the build; rt_g(x) = x + 100 */
int64_t rt_f(int64_t x);
int64_t rt_g(int64_t x);
__asm__(".text\n"
	".globl rt_g\n.type rt_g, @function\n.p2align 4\n"
	"rt_g:\n\tlea 100(%rdi), %rax\n\tret\n.size rt_g, .-rt_g\n"
	".globl rt_f\n.type rt_f, @function\n.p2align 4\n"
	"rt_f:\n\tadd $1, %rdi\n\tjmp rt_g\n.size rt_f, .-rt_f\n");

TARGET static int64_t call_rt_f(int64_t x)
{
	int64_t v = rt_f(x);

	__asm__ volatile("" ::: "memory");
	return v;
}

/*
 * A return-probed function tail-calls another: the second entry finds its
 * return-address slot holding the trampoline already and keeps the first entry
 * (its frame lives on in the callee's). The return traps twice: the callee's
 * return first (its return address is the trampoline), then the caller's.
 */
Test(ret, tail_call_between_probed)
{
	struct fdr_probe_site *sf, *sg;
	struct rets *hf = calloc(1, sizeof(*hf)), *hg = calloc(1, sizeof(*hg));
	int64_t i;

	cr_assert_eq(fdr_probe_arm_flags(A(rt_f), FDR_PROBE_ARM_RETURN, ret_hit, hf, &sf), 0);
	cr_assert_eq(fdr_probe_arm_flags(A(rt_g), FDR_PROBE_ARM_RETURN, ret_hit, hg, &sg), 0);
	for (i = 0; i < 200; i++) {
		cr_assert_eq(call_rt_f(i), i + 101);
		cr_assert_eq(fdr_probe_ret_pending(NULL), 0);
	}
	cr_assert_eq(atomic_load(&hf->n), 200);
	cr_assert_eq(atomic_load(&hg->n), 200);
	for (i = 0; i < 200; i++)
		cr_assert(hf->seen[i] == i + 101 && hg->seen[i] == i + 101, "return %ld", (long)i);
	cr_assert_eq(fdr_probe_site_misses(sf) + fdr_probe_site_misses(sg), 0);
	cr_assert_eq(fdr_probe_disarm(sf), 0);
	cr_assert_eq(fdr_probe_disarm(sg), 0);
}

static atomic_int cleanups, mid_cleanups;

static void cleanup(void *arg)
{
	(void)arg;
	atomic_fetch_add(&cleanups, 1);
}

static void mid_done(int *guard)
{
	(void)guard;
	atomic_fetch_add(&mid_cleanups, 1);
}

TARGET static int64_t r_exit(int64_t x)
{
	if (x & 1)
		pthread_exit((void *)(intptr_t)x);
	__asm__ volatile("" ::: "memory");
	return x;
}

/* between the thread's function and the probed one: its cleanup runs only if the unwind passes */
TARGET static int64_t exit_mid(int64_t x)
{
	__attribute__((cleanup(mid_done))) int guard = 0;
	int64_t v = r_exit(x);

	__asm__ volatile("" ::: "memory");
	return v + guard;
}

static void *exiter(void *arg)
{
	intptr_t x = (intptr_t)arg;
	int64_t v = 0;
	int k;

	pthread_cleanup_push(cleanup, NULL);
	for (k = 0; k < 3; k++)
		v += r_exit(2 * k); /* returns pending nowhere */
	v += exit_mid(x); /* odd: exits from inside, its return pending */
	pthread_cleanup_pop(0);
	return (void *)(intptr_t)(v + 1000);
}

Test(ret, thread_exit_pending)
{
	struct fdr_probe_site *s;
	struct rets *h = calloc(1, sizeof(*h));
	unsigned int tab = 1;
	int t;

	cr_assert_eq(fdr_probe_arm_flags(A(r_exit), FDR_PROBE_ARM_RETURN, ret_hit, h, &s), 0);
	for (t = 0; t < 200; t++) {
		pthread_t th;
		void *rv;

		cr_assert_eq(pthread_create(&th, NULL, exiter, (void *)(intptr_t)(t | (t & 1))), 0);
		cr_assert_eq(pthread_join(th, &rv), 0);
		if (t & 1)
			cr_assert_eq((intptr_t)rv, t, "pthread_exit's value");
		else
			cr_assert_eq((intptr_t)rv, 1006 + t, "the thread's own result");
	}
	cr_assert_eq(atomic_load(&cleanups), 100, "pthread_exit ran the cleanup handlers");
	/* the forced unwind went through the trampoline into the callers (tramp.S) */
	cr_assert_eq(atomic_load(&mid_cleanups), 200, "the caller's cleanups: %d",
		     atomic_load(&mid_cleanups));
	cr_assert_eq(atomic_load(&h->n), 200 * 3 + 100);
	/* each exiting thread's return was dropped as a miss as its frame went */
	cr_assert_eq(fdr_probe_site_misses(s), 100);
	cr_assert_eq(fdr_probe_ret_pending(&tab), 0);
	cr_assert_eq(tab, 0, "returns of exited threads left for unwinders: %u", tab);
	cr_assert_eq(r_exit(4), 4);
	cr_assert_eq(fdr_probe_disarm(s), 0);
}

static atomic_int waiting, go;
static volatile unsigned int child_mine = 99, child_tab = 99;

TARGET static int64_t r_wait(int64_t x)
{
	atomic_store(&waiting, 1);
	while (!atomic_load(&go))
		sched_yield();
	return x;
}

static void *waiter(void *arg)
{
	(void)arg;
	return (void *)(intptr_t)r_wait(7);
}

TARGET static int64_t r_fork(int64_t x)
{
	pid_t pid = fork();
	unsigned int tab;

	if (pid == 0) {
		child_mine = fdr_probe_ret_pending(&tab);
		child_tab = tab;
	}
	__asm__ volatile("" ::: "memory");
	return pid == 0 ? x : pid;
}

/*
 * fork() from inside a return-probed function while another thread waits in
 * one: in the child, only the forking thread's pending return is left for
 * unwinders (the other thread is gone), and it returns through the trampoline.
 */
Test(ret, fork_pending)
{
	struct fdr_probe_site *sw, *sf;
	struct rets *hw = calloc(1, sizeof(*hw)), *hf = calloc(1, sizeof(*hf));
	unsigned int tab = 99;
	pthread_t th;
	int64_t v;
	int status;
	void *rv;

	cr_assert_eq(fdr_probe_arm_flags(A(r_wait), FDR_PROBE_ARM_RETURN, ret_hit, hw, &sw), 0);
	cr_assert_eq(fdr_probe_arm_flags(A(r_fork), FDR_PROBE_ARM_RETURN, ret_hit, hf, &sf), 0);
	cr_assert_eq(pthread_create(&th, NULL, waiter, NULL), 0);
	while (!atomic_load(&waiting))
		sched_yield();
	v = r_fork(5);
	if (v == 5) { /* the child */
		int ok = child_mine == 1 && child_tab == 1 && atomic_load(&hf->n) == 1 &&
			 hf->seen[0] == 5 && fdr_probe_ret_pending(&tab) == 0 && tab == 0;

		_exit(ok ? 0 : 1);
	}
	cr_assert_gt(v, 0);
	cr_assert_eq(waitpid((pid_t)v, &status, 0), (pid_t)v);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child's checks: status %#x",
		  status);
	cr_assert_eq(fdr_probe_ret_pending(&tab), 0);
	cr_assert_eq(tab, 1, "the waiting thread's return");
	atomic_store(&go, 1);
	cr_assert_eq(pthread_join(th, &rv), 0);
	cr_assert_eq((intptr_t)rv, 7);
	cr_assert_eq(atomic_load(&hw->n), 1);
	cr_assert_eq(hw->seen[0], 7);
	cr_assert_eq(atomic_load(&hf->n), 1);
	cr_assert_eq(hf->seen[0], v);
	fdr_probe_ret_pending(&tab);
	cr_assert_eq(tab, 0);
	cr_assert_eq(fdr_probe_disarm(sw), 0);
	cr_assert_eq(fdr_probe_disarm(sf), 0);
}

static volatile int64_t in_handler;

static void usr1(int sig)
{
	(void)sig;
	in_handler = r_sq(5);
}

TARGET static int64_t r_sig(int64_t x)
{
	raise(SIGUSR1);
	__asm__ volatile("" ::: "memory");
	return x + in_handler;
}

static struct rets *sig_h1, *sig_h2;
static void *alt_mem; /* mapped before the thread's stack: at a higher address */

static void *sig_calls(void *arg)
{
	int i;

	if (arg) {
		stack_t ss = { .ss_sp = alt_mem, .ss_size = 1 << 16 };

		cr_assert_eq(sigaltstack(&ss, NULL), 0);
	}
	for (i = 0; i < 200; i++)
		cr_assert_eq(r_sig(i), i + 18);
	return NULL;
}

static void sig_between(int alt)
{
	struct fdr_probe_site *s1, *s2;
	struct sigaction sa;
	pthread_attr_t at;
	pthread_t th;
	void *stk;
	int i;

	sig_h1 = calloc(1, sizeof(*sig_h1));
	sig_h2 = calloc(1, sizeof(*sig_h2));
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = usr1;
	sa.sa_flags = alt ? SA_ONSTACK : 0;
	cr_assert_eq(sigaction(SIGUSR1, &sa, NULL), 0);
	/*
	 * mmap() hands out addresses top-down: the sigaltstack ends up above the
	 * thread's stack, where comparing stack pointers alone would take the
	 * pending entries of the thread's stack for stale ones
	 */
	alt_mem = mmap(NULL, 1 << 16, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	stk = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	cr_assert_neq(alt_mem, MAP_FAILED);
	cr_assert_neq(stk, MAP_FAILED);
	cr_assert_gt((uintptr_t)alt_mem, (uintptr_t)stk);
	cr_assert_eq(fdr_probe_arm_flags(A(r_sig), FDR_PROBE_ARM_RETURN, ret_hit, sig_h1, &s1), 0);
	cr_assert_eq(fdr_probe_arm_flags(A(r_sq), FDR_PROBE_ARM_RETURN, ret_hit, sig_h2, &s2), 0);
	cr_assert_eq(pthread_attr_init(&at), 0);
	cr_assert_eq(pthread_attr_setstack(&at, stk, 1 << 20), 0);
	cr_assert_eq(pthread_create(&th, &at, sig_calls, alt ? alt_mem : NULL), 0);
	cr_assert_eq(pthread_join(th, NULL), 0);
	cr_assert_eq(atomic_load(&sig_h1->n), 200);
	cr_assert_eq(atomic_load(&sig_h2->n), 200);
	for (i = 0; i < 200; i++) {
		cr_assert_eq(sig_h1->seen[i], i + 18);
		cr_assert_eq(sig_h2->seen[i], 18);
	}
	cr_assert_eq(fdr_probe_site_misses(s1) + fdr_probe_site_misses(s2), 0);
	cr_assert_eq(fdr_probe_disarm(s1), 0);
	cr_assert_eq(fdr_probe_disarm(s2), 0);
}

Test(ret, signal_handler_between)
{
	sig_between(0);
}

Test(ret, signal_handler_between_altstack)
{
	sig_between(1);
}

static void *bt[64];
static int frames;
static uintptr_t bt_ra; /* in r_bt: its return address (the trampoline while probed) */

TARGET static int64_t r_bt(int64_t x)
{
	frames = backtrace(bt, 64);
	bt_ra = (uintptr_t)__builtin_return_address(0);
	__asm__ volatile("" ::: "memory");
	return x;
}

/*
 * What an unwinder sees through a pending return: the trampoline has unwind
 * information (tramp.S), so the walk goes on to the real caller and the rest
 * of the stack. One frame more than without the probe: the trampoline's,
 * followed by the caller's. Without it, backtrace() stopped at the trampoline.
 */
Test(ret, unwinder_through_trampoline)
{
	static volatile int rounds = 2; /* one call site, unprobed then probed: not unrolled */
	struct fdr_probe_site *s = NULL;
	struct rets *h = calloc(1, sizeof(*h));
	void *plain[64];
	int n_plain = 0, round, k, first;

	for (round = 0; round < rounds; round++) {
		if (round == 1) {
			n_plain = frames;
			memcpy(plain, bt, sizeof(plain));
			cr_assert_eq(fdr_probe_arm_flags(A(r_bt), FDR_PROBE_ARM_RETURN, ret_hit, h,
							 &s),
				     0);
		}
		cr_assert_eq(r_bt(2), 2);
	}
	cr_assert_eq(atomic_load(&h->n), 1);
	cr_log_info("backtrace() from the probed function: %d frames, %d without the probe", frames,
		    n_plain);
	cr_assert_eq(frames, n_plain + 1);
	/* r_bt's frame (under ASan, backtrace()'s interceptor's first), the trampoline, the rest */
	for (first = 0; first < frames && (uintptr_t)bt[first] != bt_ra; first++)
		;
	cr_assert(first >= 1 && first <= 2, "the trampoline is frame %d", first);
	/* then the real return address, as the return handler got it */
	cr_assert_eq((uintptr_t)bt[first + 1], h->ip[0], "frame %d: the real caller", first + 1);
	/* the rest as without the probe (the caller's own frame: its two calls may be two sites) */
	for (k = 0; k < n_plain; k++)
		cr_assert(k == first || bt[k + (k >= first)] == plain[k],
			  "frame %d: %p, expected %p", k + (k >= first), bt[k + (k >= first)],
			  plain[k]);
	cr_assert_eq(fdr_probe_disarm(s), 0);
}

Test(ret, refuses_bad_flags)
{
	struct fdr_probe_site *s;

	/* 1, 2, 4 and 8 are FDR_PROBE_ARM_RETURN, _NOVEC, _NOCOUNT and _RECORD */
	cr_assert_eq(fdr_probe_arm_flags(A(r_sq), 16, ret_hit, NULL, &s), -EINVAL);
	cr_assert_eq(fdr_probe_arm_flags(A(r_sq), 0x80000000u, ret_hit, NULL, &s), -EINVAL);
}
