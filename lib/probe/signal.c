// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * signal.c - sharing SIGTRAP (and SIGSEGV/SIGBUS, and jump.c's FDR_PROBE_SIG_FIX,
 * when taken) with the program.
 *
 * The engine's SIGTRAP handler must stay installed while probes are armed, yet
 * the program keeps every right it had: its own int3s, debuggers' traps and
 * kill -TRAP still reach its handler, and so do handlers it installs later.
 *
 *	            the kernel delivers SIGTRAP
 *	                       |
 *	              engine's handler (always installed once taken)
 *	              /                              \
 *	   an int3 at an armed (or             anything else:
 *	   once armed) probe: ours             fdr_probe_sig_chain() runs what
 *	                                       the program asked for, as the
 *	                                       kernel would have
 *
 * - The handler the program had when the engine took the signal is recorded
 *   and becomes the chained one.
 * - libfdr-probe defines sigaction() and signal() (the library is linked or
 *   LD_PRELOADed, so the program's calls, and its libraries', reach these first;
 *   the real ones come from dlsym(RTLD_NEXT)). For a taken signal they record
 *   the new action as the chained one and report the previous chained one as
 *   "old", exactly as the kernel would, without touching the real disposition.
 *   Other signals pass straight through.
 * - Chaining honours SA_SIGINFO, sa_mask (plus the signal itself unless
 *   SA_NODEFER) and SA_RESETHAND. SIG_DFL, and SIG_IGN for a trap the kernel
 *   raised (the kernel forces those: an ignored or blocked int3 SIGTRAP kills),
 *   restore the real default and re-raise: the process dies of the signal as it
 *   would have without fdr.
 * - A synchronous SIGTRAP (int3) that hits a thread blocking SIGTRAP is forced
 *   by the kernel: it unblocks it and resets the handler to SIG_DFL, so the
 *   process dies. sigprocmask() and pthread_sigmask() (defined here too)
 *   therefore drop SIGTRAP (from the moment the library is loaded, so that
 *   threads made before the first probe are covered too) and any other taken
 *   signal from every mask a thread asks for: a thread that "blocks all
 *   signals" keeps SIGTRAP open, and a probe hit there works. Threads that
 *   blocked SIGTRAP before libfdr-probe was loaded ("fdr attach") are not
 *   covered: the agent must look at SigBlk in /proc/self/task/TID/status.
 *   What cannot be seen cannot be fixed: a mask set with the raw
 *   rt_sigprocmask system call, or one installed by sigsuspend/pselect/ppoll
 *   while a probe fires in that thread, still kills the process on a hit
 *   (tested: the process dies of SIGTRAP).
 *
 * The chained actions are kept in two copies and an index: a writer (serialised
 * by a spin lock; sigaction() may be called from a signal handler) fills the
 * copy not in use and flips the index; the signal handler reads the current
 * one. A handler that interrupts a writer reads the previous action, which is
 * what the kernel's own sigaction() race gives too.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "probe-local.h"

#define SG_MAX 65 /* signals 1..64 */

struct sg_chain {
	struct sigaction act[2];
	atomic_int cur; /* release: pairs with the acquire in sg_read() */
	atomic_int taken; /* 1 once the engine's handler is installed */
};

static struct sg_chain sg_tab[SG_MAX];
static atomic_flag sg_write_lock = ATOMIC_FLAG_INIT;

typedef int (*sg_sigaction_fn)(int, const struct sigaction *, struct sigaction *);
typedef int (*sg_mask_fn)(int, const sigset_t *, sigset_t *);

static sg_sigaction_fn sg_real_sigaction_p;
static sg_mask_fn sg_real_sigprocmask_p, sg_real_pthread_sigmask_p;

static int sg_resolve(void)
{
	if (!sg_real_sigaction_p)
		sg_real_sigaction_p = (sg_sigaction_fn)dlsym(RTLD_NEXT, "sigaction");
	if (!sg_real_sigprocmask_p)
		sg_real_sigprocmask_p = (sg_mask_fn)dlsym(RTLD_NEXT, "sigprocmask");
	if (!sg_real_pthread_sigmask_p)
		sg_real_pthread_sigmask_p = (sg_mask_fn)dlsym(RTLD_NEXT, "pthread_sigmask");
	return sg_real_sigaction_p && sg_real_sigprocmask_p && sg_real_pthread_sigmask_p ? 0 :
											   -ENOSYS;
}

static int sg_real_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	if (!sg_real_sigaction_p && sg_resolve() < 0) {
		errno = ENOSYS;
		return -1;
	}
	return sg_real_sigaction_p(sig, act, old);
}

static int sg_real_mask(int pthread, int how, const sigset_t *set, sigset_t *old)
{
	if ((!sg_real_sigprocmask_p || !sg_real_pthread_sigmask_p) && sg_resolve() < 0)
		return pthread ? ENOSYS : (errno = ENOSYS, -1);
	return pthread ? sg_real_pthread_sigmask_p(how, set, old) :
			 sg_real_sigprocmask_p(how, set, old);
}

static void sg_read(int sig, struct sigaction *a)
{
	/* acquire: pairs with the release in sg_write() */
	*a = sg_tab[sig].act[atomic_load_explicit(&sg_tab[sig].cur, memory_order_acquire)];
}

static void sg_write(int sig, const struct sigaction *a)
{
	int next;

	while (atomic_flag_test_and_set_explicit(&sg_write_lock, memory_order_acquire))
		;
	next = !atomic_load_explicit(&sg_tab[sig].cur, memory_order_relaxed);
	sg_tab[sig].act[next] = *a;
	/* release: the copy is complete before a reader picks it */
	atomic_store_explicit(&sg_tab[sig].cur, next, memory_order_release);
	atomic_flag_clear_explicit(&sg_write_lock, memory_order_release);
}

/* In a child after fork: a sigaction() another thread had under way is gone. */
void fdr_probe_sig_atfork_child(void)
{
	atomic_flag_clear(&sg_write_lock);
}

/** fdr_probe_sig_is_taken - whether the engine owns @sig's real disposition. */
int fdr_probe_sig_is_taken(int sig)
{
	return sig > 0 && sig < SG_MAX && atomic_load(&sg_tab[sig].taken);
}

/**
 * fdr_probe_sig_take - install @fn as the real handler of @sig, keeping the program's
 * @sig: SIGTRAP, SIGSEGV, SIGBUS or FDR_PROBE_SIG_FIX (jump.c)
 * @fn: the engine's handler; it calls fdr_probe_sig_chain() for what is not its own
 *
 * The program's current action becomes the chained one; from now on its
 * sigaction()/signal() calls for @sig only change the chained action, and its
 * masks never block @sig. Runs SA_SIGINFO | SA_ONSTACK | SA_NODEFER | SA_RESTART
 * (FDR_PROBE_SIG_FIX without SA_NODEFER).
 * Returns: 0 (also if already taken); -EINVAL; -ENOSYS if the real functions
 * cannot be found; a negative errno from sigaction().
 */
int fdr_probe_sig_take(int sig, fdr_sig_fn fn)
{
	struct sigaction ours, prev;
	sigset_t unblock;

	if (sig != SIGTRAP && sig != SIGSEGV && sig != SIGBUS && sig != FDR_PROBE_SIG_FIX)
		return -EINVAL;
	if (atomic_load(&sg_tab[sig].taken))
		return 0;
	if (sg_resolve() < 0)
		return -ENOSYS;
	memset(&ours, 0, sizeof(ours));
	ours.sa_sigaction = fn;
	ours.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER | SA_RESTART;
	sigemptyset(&ours.sa_mask);
	/*
	 * FDR_PROBE_SIG_FIX requests that pile up are handled one after another,
	 * each seeing the context the thread returns to, never nested in another
	 */
	if (sig == FDR_PROBE_SIG_FIX)
		ours.sa_flags &= ~SA_NODEFER;
	/*
	 * jump.c's request (FDR_PROBE_SIG_FIX) waits while our handlers run: it then
	 * sees the context they return to (an int3 hit resuming in a window), never
	 * their own code's
	 */
	if (sig != FDR_PROBE_SIG_FIX)
		sigaddset(&ours.sa_mask, FDR_PROBE_SIG_FIX);
	/* the program's action is recorded first, so a racing trap finds it */
	if (sg_real_sigaction(sig, NULL, &prev) < 0)
		return -errno;
	sg_write(sig, &prev);
	atomic_store(&sg_tab[sig].taken, 1);
	if (sg_real_sigaction(sig, &ours, NULL) < 0) {
		atomic_store(&sg_tab[sig].taken, 0);
		return -errno;
	}
	/* this thread too: others unblock it at their next mask change */
	sigemptyset(&unblock);
	sigaddset(&unblock, sig);
	sg_real_mask(1, SIG_UNBLOCK, &unblock, NULL);
	return 0;
}

/**
 * fdr_probe_sig_release - give @sig back to the program (fdr detach): its chained
 * action becomes the real disposition again, and a later fdr_probe_sig_take()
 * takes it anew. Only when no trap of ours can come any more (every probe
 * disarmed, no return pending). Returns 0 (also if not taken) or a negative errno.
 */
int fdr_probe_sig_release(int sig)
{
	struct sigaction a;
	int ret = 0;

	if (sig <= 0 || sig >= SG_MAX)
		return -EINVAL;
	while (atomic_flag_test_and_set_explicit(&sg_write_lock, memory_order_acquire))
		;
	if (atomic_load(&sg_tab[sig].taken)) {
		sg_read(sig, &a);
		if (sg_real_sigaction(sig, &a, NULL) < 0)
			ret = -errno;
		else
			atomic_store(&sg_tab[sig].taken, 0);
	}
	atomic_flag_clear_explicit(&sg_write_lock, memory_order_release);
	return ret;
}

/**
 * fdr_probe_sig_chain - deliver @sig to the program's own action, as the kernel would
 *
 * Called from the engine's handler for a signal that is not the engine's.
 * Async-signal-safe.
 */
void fdr_probe_sig_chain(int sig, siginfo_t *si, void *uc)
{
	struct sigaction a;
	sigset_t mask, old;
	int forced = si->si_code == SI_KERNEL || si->si_code > 0;

	sg_read(sig, &a);
	if (!(a.sa_flags & SA_SIGINFO) &&
	    (a.sa_handler == SIG_DFL || (a.sa_handler == SIG_IGN && forced))) {
		struct sigaction dfl;

		/* the default action, as if fdr had never been there */
		memset(&dfl, 0, sizeof(dfl));
		dfl.sa_handler = SIG_DFL;
		sigemptyset(&dfl.sa_mask);
		sg_real_sigaction(sig, &dfl, NULL);
		sigemptyset(&mask);
		sigaddset(&mask, sig);
		sg_real_mask(1, SIG_UNBLOCK, &mask, NULL);
		syscall(SYS_tgkill, getpid(), (pid_t)syscall(SYS_gettid), sig);
		return; /* a signal whose default is to ignore it (none of ours) */
	}
	if (!(a.sa_flags & SA_SIGINFO) && a.sa_handler == SIG_IGN)
		return;
	mask = a.sa_mask;
	if (!(a.sa_flags & SA_NODEFER))
		sigaddset(&mask, sig);
	sg_real_mask(1, SIG_BLOCK, &mask, &old);
	if (a.sa_flags & SA_RESETHAND) {
		struct sigaction dfl;

		memset(&dfl, 0, sizeof(dfl));
		dfl.sa_handler = SIG_DFL;
		sg_write(sig, &dfl);
	}
	if (a.sa_flags & SA_SIGINFO)
		a.sa_sigaction(sig, si, uc);
	else
		a.sa_handler(sig);
	sg_real_mask(1, SIG_SETMASK, &old, NULL);
}

/*
 * The program's view. These are exported from libfdr-probe on purpose
 * (interposition); each passes through untouched for signals not taken.
 */
__attribute__((visibility("default"))) int sigaction(int sig, const struct sigaction *act,
						     struct sigaction *old)
{
	if (!fdr_probe_sig_is_taken(sig)) {
		struct sigaction mine;
		int ret;

		/*
		 * The program's handlers run with FDR_PROBE_SIG_FIX blocked: jump.c's
		 * request then waits until the handler returns and sees the context it
		 * returns to (a window being patched), not the handler's own code. It is
		 * ours: "old" never shows it.
		 */
		if (act && sig != FDR_PROBE_SIG_FIX &&
		    ((act->sa_flags & SA_SIGINFO) ||
		     (act->sa_handler != SIG_DFL && act->sa_handler != SIG_IGN))) {
			mine = *act;
			sigaddset(&mine.sa_mask, FDR_PROBE_SIG_FIX);
			act = &mine;
		}
		ret = sg_real_sigaction(sig, act, old);
		if (ret == 0 && old && sig != FDR_PROBE_SIG_FIX)
			sigdelset(&old->sa_mask, FDR_PROBE_SIG_FIX);
		return ret;
	}
	if (old)
		sg_read(sig, old);
	if (act)
		sg_write(sig, act);
	return 0;
}

__attribute__((visibility("default"))) sighandler_t signal(int sig, sighandler_t h)
{
	struct sigaction a, old;

	memset(&a, 0, sizeof(a));
	a.sa_handler = h;
	sigemptyset(&a.sa_mask);
	a.sa_flags = SA_RESTART; /* glibc's signal(): BSD semantics, the signal deferred */
	if (sigaction(sig, &a, &old) < 0)
		return SIG_ERR;
	return old.sa_handler;
}

/*
 * The mask a thread asked for, less SIGTRAP (from the moment libfdr-probe is
 * loaded: a thread that blocked it before the first probe is armed would die on
 * its first hit), less FDR_PROBE_SIG_FIX (a thread blocking it would keep
 * jump.c from optimising any probe) and less the other signals the engine has
 * taken.
 */
static const sigset_t *sg_filter(int how, const sigset_t *set, sigset_t *copy)
{
	int sig;

	if (!set || how == SIG_UNBLOCK)
		return set;
	*copy = *set;
	sigdelset(copy, SIGTRAP);
	sigdelset(copy, FDR_PROBE_SIG_FIX); /* jump.c asks every thread; none may block it */
	for (sig = 1; sig < SG_MAX; sig++)
		if (atomic_load_explicit(&sg_tab[sig].taken, memory_order_relaxed))
			sigdelset(copy, sig);
	return copy;
}

__attribute__((visibility("default"))) int sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
	sigset_t copy;

	return sg_real_mask(0, how, sg_filter(how, set, &copy), old);
}

__attribute__((visibility("default"))) int pthread_sigmask(int how, const sigset_t *set,
							   sigset_t *old)
{
	sigset_t copy;

	return sg_real_mask(1, how, sg_filter(how, set, &copy), old);
}

/**
 * fdr_probe_sig_masks_ours - whether the program's sigprocmask() and
 * pthread_sigmask() are this library's: the first definitions in the global
 * scope (linked, or LD_PRELOADed; not when dlopen()ed RTLD_LOCAL, nor under a
 * sanitizer whose interceptors come first). Then every mask a thread sets
 * through libc keeps SIGTRAP open.
 */
int fdr_probe_sig_masks_ours(void)
{
	void *m = dlsym(RTLD_DEFAULT, "sigprocmask");
	void *p = dlsym(RTLD_DEFAULT, "pthread_sigmask");
	Dl_info self, dm, dp;

	/* in the object this function is in (hidden: bound here, never interposed) */
	return m && p && dladdr((void *)fdr_probe_sig_masks_ours, &self) && dladdr(m, &dm) &&
	       dladdr(p, &dp) && dm.dli_fbase == self.dli_fbase && dp.dli_fbase == self.dli_fbase;
}
