/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* probe-local.h - what the files of libfdr-probe share; nothing here is exported. */
#ifndef FDR_PROBE_LOCAL_H
#define FDR_PROBE_LOCAL_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/types.h>

#include "engine.h"

/*
 * agent.c: FDR_PROBE_ARM_TRACE=1 in the environment times the steps of each
 * sync that arms a location (clock_gettime at each mark, one line on stderr
 * at the end of the sync: docs/design/probes.md, "Arming in a busy
 * process"). Off, a mark is one load and a branch.
 */
extern int fdr_probe_trace_on;
void fdr_probe_trace_mark(const char *step);
#define FDR_PROBE_TRACE(step)                       \
	do {                                        \
		if (fdr_probe_trace_on)             \
			fdr_probe_trace_mark(step); \
	} while (0)

/* engine.c: one lock for arming, disarming and every text write */
void fdr_probe_lock(void);
void fdr_probe_unlock(void);
void fdr_probe_warm(void);

/* patch.c */
enum fdr_patch_sync {
	FDR_PATCH_SYNC_NONE = 0, /* no membarrier: only the int3 form is safe */
	FDR_PATCH_SYNC_IPI = 1, /* MEMBARRIER_CMD_PRIVATE_EXPEDITED (IRET serialises) */
	FDR_PATCH_SYNC_CORE = 2, /* MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE */
};
int fdr_patch_write(uintptr_t addr, const void *buf, size_t len);
int fdr_patch_sync(void);
void fdr_patch_prepare(void);
void fdr_patch_warm(void);
void fdr_patch_close_fds(void);
int fdr_patch_page_prot(uintptr_t addr, int *prot);
void fdr_patch_maps_hold(int on);
int fdr_patch_maps_fd(void);
void fdr_patch_maps_put(int fd);
uintptr_t fdr_patch_alloc_near(uintptr_t addr, size_t size);
ssize_t fdr_proc_read(const char *path, char *buf, size_t size);

/*
 * PROCMAP_QUERY (Linux 6.11; not in the uapi headers of Debian 12): one ioctl
 * on /proc/self/maps answers one mapping, in binary, instead of the text of
 * every mapping (in bench-uprobes' process, 60 lines, 100 to 180 us on the
 * development VM). The layout is the kernel's, fixed by its size. Used by the
 * agent (pa_read_maps()) and patch.c.
 */
struct fdr_procmap_query {
	uint64_t size, query_flags, query_addr;
	uint64_t vma_start, vma_end, vma_flags, vma_page_size, vma_offset, inode;
	uint32_t dev_major, dev_minor, vma_name_size, build_id_size;
	uint64_t vma_name_addr, build_id_addr;
};
#define FDR_PROCMAP_QUERY _IOWR('f', 17, struct fdr_procmap_query)
#define FDR_PMQ_READ 0x01 /* PROCMAP_QUERY_VMA_READABLE */
#define FDR_PMQ_WRITE 0x02 /* PROCMAP_QUERY_VMA_WRITABLE */
#define FDR_PMQ_EXEC 0x04 /* PROCMAP_QUERY_VMA_EXECUTABLE */
#define FDR_PMQ_SHARED 0x08 /* PROCMAP_QUERY_VMA_SHARED */
#define FDR_PMQ_NEXT 0x10 /* PROCMAP_QUERY_COVERING_OR_NEXT_VMA */
#define FDR_PMQ_FILE 0x20 /* PROCMAP_QUERY_FILE_BACKED_VMA */
int fdr_procmap_query(int fd, uintptr_t addr, uint64_t flags, char *name, size_t name_len,
		      struct fdr_procmap_query *q);

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
int fdr_probe_sig_masks_ours(void);
void fdr_probe_sig_atfork_child(void);

#endif /* FDR_PROBE_LOCAL_H */
