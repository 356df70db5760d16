// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * rseq.c - this thread's restartable-sequences area, for the ring writer.
 *
 * The ring's critical sections (ring-fast.h, ring.c) address the area relative to
 * the thread pointer, at fdr_rseq_off: glibc's area where glibc registers one for
 * every thread (2.35 and later, unless glibc.pthread.rseq=0), else libfdr's own,
 * which each thread registers on its first event (fdr_rseq_ready()). Its own
 * file, so that the ring, the triggers and the event path depend on it and not
 * on each other.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <sys/rseq.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "rseq.h"

/* initial-exec: a plain %fs-relative access, no __tls_get_addr */
#define RSEQ_TLS __thread __attribute__((tls_model("initial-exec")))

long fdr_rseq_off;

/*
 * libfdr's own rseq area, for a process where glibc registers none
 * (GLIBC_TUNABLES=glibc.pthread.rseq=0). Both CPU ids start
 * "uninitialized" (-1): the event path's fast test fails (cpu_id_start is past
 * every ring's CPUs) and the ring's slow path registers the thread
 * (fdr_rseq_ready()). The kernel writes into it until the thread exits, so
 * libfdr is never unloaded (-z nodelete) and the area is static TLS
 * (initial-exec: the same offset from the thread pointer in every thread).
 */
static RSEQ_TLS struct rseq rs_area __attribute__((aligned(32))) = {
	.cpu_id_start = (uint32_t)RSEQ_CPU_ID_UNINITIALIZED,
	.cpu_id = (uint32_t)RSEQ_CPU_ID_UNINITIALIZED,
};
static int rs_own; /* the process uses rs_area, not glibc's area */

/*
 * glibc sets __rseq_offset and __rseq_size before any constructor runs; copy the
 * offset at load, so that the ring's fast path never addresses %fs with a stale 0.
 */
__attribute__((constructor)) static void rs_off_init(void)
{
	if (__rseq_size != 0) {
		fdr_rseq_off = (long)__rseq_offset;
		return;
	}
	rs_own = 1; /* each thread, this one too, registers on its first event */
	fdr_rseq_off = (long)((char *)&rs_area - (char *)__builtin_thread_pointer());
}

/**
 * fdr_rseq_ready - make sure this thread has a registered rseq area
 *
 * Returns 0 if it has (glibc's, or libfdr's own, registered now if it was not),
 * -ENOSYS if it cannot have one: the kernel refused (no rseq, or the thread
 * already registered another area with it); the thread then never tries again.
 * Async-signal-safe; keeps errno.
 */
int fdr_rseq_ready(void)
{
	int saved = errno;
	uint32_t id;

	if (!rs_own)
		return 0;
	id = __atomic_load_n(&rs_area.cpu_id, __ATOMIC_RELAXED);
	if ((int32_t)id >= 0)
		return 0;
	if (id == (uint32_t)RSEQ_CPU_ID_REGISTRATION_FAILED)
		return -ENOSYS;
	/* a signal handler's event may get here first: both registrations are the same */
	if (syscall(SYS_rseq, &rs_area, (uint32_t)sizeof(rs_area), 0, RSEQ_SIG) != 0 &&
	    errno != EBUSY) {
		__atomic_store_n(&rs_area.cpu_id, (uint32_t)RSEQ_CPU_ID_REGISTRATION_FAILED,
				 __ATOMIC_RELAXED);
		errno = saved;
		return -ENOSYS;
	}
	errno = saved;
	return (int32_t)__atomic_load_n(&rs_area.cpu_id, __ATOMIC_RELAXED) >= 0 ? 0 : -ENOSYS;
}
