/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* probe-local.h - what the files of libfdr-probe share; nothing here is exported. */
#ifndef FDR_PROBE_LOCAL_H
#define FDR_PROBE_LOCAL_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "engine.h"

/* engine.c: one lock for arming, disarming and every text write */
void fdr_probe_lock(void);
void fdr_probe_unlock(void);

/* patch.c */
enum fdr_patch_sync {
	FDR_PATCH_SYNC_NONE = 0, /* no membarrier: only the int3 form is safe */
	FDR_PATCH_SYNC_IPI = 1, /* MEMBARRIER_CMD_PRIVATE_EXPEDITED (IRET serialises) */
	FDR_PATCH_SYNC_CORE = 2, /* MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE */
};
int fdr_patch_write(uintptr_t addr, const void *buf, size_t len);
int fdr_patch_sync(void);
void fdr_patch_prepare(void);
int fdr_patch_page_prot(uintptr_t addr, int *prot);
uintptr_t fdr_patch_alloc_near(uintptr_t addr, size_t size);

/*
 * jump.c asks every thread where it is with this real-time signal (SIGTRAP
 * cannot: a second SIGTRAP pending merges with an int3's). Blocked while the
 * engine's handlers run.
 */
#define FDR_PROBE_SIG_FIX (SIGRTMAX - 1)

/* signal.c: sharing SIGTRAP (and later SIGSEGV/SIGBUS) with the program */
typedef void (*fdr_sig_fn)(int sig, siginfo_t *si, void *uc);
int fdr_probe_sig_take(int sig, fdr_sig_fn fn);
void fdr_probe_sig_chain(int sig, siginfo_t *si, void *uc);
int fdr_probe_sig_is_taken(int sig);
int fdr_probe_sig_release(int sig);
void fdr_probe_sig_atfork_child(void);

#endif /* FDR_PROBE_LOCAL_H */
