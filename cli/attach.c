// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * attach.c - fdr attach PID and fdr detach PID: bring the probe agent into a
 * running process that has neither libfdr linked nor LD_PRELOAD, and take it
 * out again (docs/design/probes.md, "fdr attach"). x86-64 only.
 *
 * fdr attach loads libfdr and libfdr-probe into the process with its own
 * dlopen(), called from a thread of the process by a few instructions fdr
 * puts there (attach-stub.S):
 *
 *   1. read /proc/PID/maps; find dlopen, dlsym and dlerror in the target's
 *      libc (.dynsym of its libc.so.6 plus the mapping's base) and a code cave
 *      (the unused tail of the last page of an r-x segment);
 *   2. write the stub and an empty result block into the cave through
 *      /proc/PID/mem (the kernel copies the private page on write; the file
 *      and the other processes are untouched);
 *   3. for a thread of the process: PTRACE_SEIZE, PTRACE_INTERRUPT, read its
 *      registers. If it is in a system call fdr knows to be a wait (read,
 *      poll, nanosleep, futex, ...) or in code that is neither libc nor the
 *      dynamic linker, write the frame of attach-stub.S on its stack below the
 *      red zone (its registers, where to resume, the steps), set only rip and
 *      rsp (orig_rax -1: no restart of its system call by the kernel; the
 *      frame resumes it) and PTRACE_DETACH at once. Otherwise detach, try the
 *      next thread, and after every thread, again 1 ms later (at most 2 s);
 *   4. poll the cave's result block for this run's nonce (at most
 *      FDR_ATTACH_TIMEOUT_MS, default 10 s), then say what it holds.
 *
 * The thread is stopped only in step 3 (its time is printed). Once its
 * registers are set, the thread needs nothing from fdr: fdr killed at any
 * point leaves a process that runs on correctly (tests/integration/attach.sh
 * kills it at each point: FDR_ATTACH_TEST_KILL). FDR_ATTACH_THREAD=TID makes
 * fdr try that thread only (tests: a thread running code, one in a system call).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fdr/fdr-session.h"
#include "cli.h"

#if defined(__x86_64__)

extern const unsigned char fdr_attach_stub[], fdr_attach_stub_end[];

/* the frame of attach-stub.S, offsets from its base */
#define ATS_IRET 0
#define ATS_GPR 40
#define ATS_DLOPEN 160
#define ATS_DLSYM 168
#define ATS_DLERROR 176
#define ATS_RESULT 184
#define ATS_STEP0 192
#define ATS_STEP1 224
#define ATS_RES 256 /* nonce, status, step, text: the cave's result block, 256 bytes */
#define ATS_PROCMEM 512
#define ATS_XSAVE 576
#define ATS_RES_LEN 256
#define ATS_ERR_DLOPEN (-2000)
#define ATS_ERR_DLSYM (-2001)

#define AT_MAX_MAPS 8192
#define AT_REDZONE 128
#define AT_STACK_ROOM (128u << 10) /* the frame, dlopen() and the agent's first sync */
#define AT_CAVE_MIN 640 /* the result block and the stub, with room to spare */

struct at_map {
	uint64_t start, end, off, ino;
	unsigned int dev_maj, dev_min;
	char perms[5];
	char *path; /* "" for an anonymous mapping */
};

struct at_ctx {
	int pid;
	int mem; /* /proc/PID/mem */
	struct at_map *maps;
	int nmaps;
	uint64_t dlopen, dlsym, dlerror;
	uint64_t cave, cave_len;
	char session[PATH_MAX];
	char libfdr[PATH_MAX], libprobe[PATH_MAX];
	int probe_loaded, fdr_loaded;
	uint64_t nonce;
	double stop_ms;
	int tid;
	int only_tid; /* FDR_ATTACH_THREAD: this thread only (tests) */
};

static const char *at_kill_point;

/* FDR_ATTACH_TEST_KILL=POINT: fdr kills itself there (tests: fdr killed while it works) */
static void at_test_kill(const char *point)
{
	if (at_kill_point && strcmp(at_kill_point, point) == 0)
		kill(getpid(), SIGKILL);
}

static double at_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static const char *at_base(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

static int at_read_maps(struct at_ctx *c)
{
	char path[64], line[PATH_MAX + 256];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", c->pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	c->nmaps = 0;
	while (c->nmaps < AT_MAX_MAPS && fgets(line, sizeof(line), f)) {
		struct at_map *m = &c->maps[c->nmaps];
		unsigned long long start, end, off, ino;
		int pos = 0;

		if (sscanf(line, "%llx-%llx %4s %llx %x:%x %llu %n", &start, &end, m->perms, &off,
			   &m->dev_maj, &m->dev_min, &ino, &pos) < 7)
			continue;
		m->start = start;
		m->end = end;
		m->off = off;
		m->ino = ino;
		m->path = strndup(line + pos, strcspn(line + pos, "\n"));
		if (!m->path) {
			fclose(f);
			return -ENOMEM;
		}
		c->nmaps++;
	}
	fclose(f);
	return 0;
}

/* Open a file the target maps, as the target sees it (its root). */
static int at_open_target_file(const struct at_ctx *c, const struct at_map *m)
{
	char p[PATH_MAX + 64];
	struct stat st;
	int fd;

	if (m->path[0] != '/')
		return -ENOENT;
	snprintf(p, sizeof(p), "/proc/%d/root%s", c->pid, m->path);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || (uint64_t)st.st_ino != m->ino) {
		close(fd);
		return -ESTALE; /* replaced on disk since it was mapped */
	}
	return fd;
}

static int at_pread_all(int fd, void *buf, size_t len, uint64_t off)
{
	ssize_t n = pread(fd, buf, len, (off_t)off);

	return n == (ssize_t)len ? 0 : -EIO;
}

/* An ELF file's header and program headers (at most 64); 0 or a negative errno. */
static int at_elf_phdrs(int fd, Elf64_Ehdr *eh, Elf64_Phdr *ph, int *nph)
{
	if (at_pread_all(fd, eh, sizeof(*eh), 0) || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_machine != EM_X86_64 ||
	    eh->e_phentsize != sizeof(Elf64_Phdr) || eh->e_phnum > 64)
		return -ENOEXEC;
	*nph = eh->e_phnum;
	return at_pread_all(fd, ph, sizeof(*ph) * eh->e_phnum, eh->e_phoff) ? -ENOEXEC : 0;
}

/* The load bias of the object of mapping @m: its first mapping's start less the first PT_LOAD's page. */
static int at_bias(const struct at_ctx *c, const struct at_map *m, const Elf64_Phdr *ph, int nph,
		   uint64_t *bias)
{
	uint64_t lo = UINT64_MAX;
	int i;

	for (i = 0; i < nph; i++)
		if (ph[i].p_type == PT_LOAD && ph[i].p_vaddr < lo)
			lo = ph[i].p_vaddr;
	if (lo == UINT64_MAX)
		return -ENOEXEC;
	for (i = 0; i < c->nmaps; i++)
		if (c->maps[i].ino == m->ino && c->maps[i].dev_maj == m->dev_maj &&
		    c->maps[i].dev_min == m->dev_min && c->maps[i].off == 0) {
			*bias = c->maps[i].start - (lo & ~0xfffull);
			return 0;
		}
	return -ENOENT;
}

/* Look up @names (NULL-terminated) in the .dynsym of mapping @m's file; 0 if all found. */
static int at_dynsyms(const struct at_ctx *c, const struct at_map *m, const char *const *names,
		      uint64_t *out)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph[64];
	Elf64_Shdr *sh = NULL;
	Elf64_Sym *syms = NULL;
	uint16_t *ver = NULL;
	char *str = NULL;
	uint64_t bias, nsyms = 0, strsz = 0;
	int fd, nph, i, ret = -ENOENT, k;

	fd = at_open_target_file(c, m);
	if (fd < 0)
		return fd;
	if (at_elf_phdrs(fd, &eh, ph, &nph) || at_bias(c, m, ph, nph, &bias) ||
	    eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shnum == 0 || eh.e_shnum > 4096)
		goto out;
	sh = calloc(eh.e_shnum, sizeof(*sh));
	if (!sh || at_pread_all(fd, sh, sizeof(*sh) * eh.e_shnum, eh.e_shoff))
		goto out;
	for (i = 0; i < eh.e_shnum; i++) {
		if (sh[i].sh_type == SHT_DYNSYM && sh[i].sh_link < eh.e_shnum &&
		    sh[i].sh_entsize == sizeof(Elf64_Sym) && sh[i].sh_size < (64u << 20)) {
			const Elf64_Shdr *ss = &sh[sh[i].sh_link];

			nsyms = sh[i].sh_size / sizeof(Elf64_Sym);
			strsz = ss->sh_size;
			if (strsz > (64u << 20))
				goto out;
			syms = malloc(sh[i].sh_size);
			str = malloc(strsz + 1);
			if (!syms || !str ||
			    at_pread_all(fd, syms, sh[i].sh_size, sh[i].sh_offset) ||
			    at_pread_all(fd, str, strsz, ss->sh_offset))
				goto out;
			str[strsz] = 0;
		}
	}
	for (i = 0; i < eh.e_shnum; i++)
		if (sh[i].sh_type == SHT_GNU_versym && sh[i].sh_size == nsyms * 2) {
			ver = malloc(sh[i].sh_size ? sh[i].sh_size : 1);
			if (ver && at_pread_all(fd, ver, sh[i].sh_size, sh[i].sh_offset)) {
				free(ver);
				ver = NULL;
			}
		}
	if (!syms)
		goto out;
	ret = 0;
	for (k = 0; names[k]; k++) {
		out[k] = 0;
		for (i = 1; (uint64_t)i < nsyms; i++) {
			const Elf64_Sym *y = &syms[i];

			if (y->st_name >= strsz || ELF64_ST_TYPE(y->st_info) != STT_FUNC ||
			    y->st_shndx == SHN_UNDEF || strcmp(str + y->st_name, names[k]) != 0)
				continue;
			/* the default version (not hidden), else any */
			if (!out[k] || (ver && !(ver[i] & 0x8000)))
				out[k] = bias + y->st_value;
		}
		if (!out[k])
			ret = -ENOENT;
	}
out:
	free(sh);
	free(syms);
	free(str);
	free(ver);
	close(fd);
	return ret;
}

static int at_is(const struct at_map *m, const char *prefix)
{
	return strncmp(at_base(m->path), prefix, strlen(prefix)) == 0;
}

/* The largest code cave of the r-x file mappings: [cave, cave + len). */
static void at_find_cave(struct at_ctx *c)
{
	int i, j;

	c->cave_len = 0;
	for (i = 0; i < c->nmaps; i++) {
		const struct at_map *m = &c->maps[i];
		Elf64_Ehdr eh;
		Elf64_Phdr ph[64];
		int fd, nph;

		if (strcmp(m->perms, "r-xp") != 0 || !m->ino)
			continue;
		fd = at_open_target_file(c, m);
		if (fd < 0)
			continue;
		if (at_elf_phdrs(fd, &eh, ph, &nph) == 0) {
			for (j = 0; j < nph; j++) {
				uint64_t fend = ph[j].p_offset + ph[j].p_filesz, start, len;

				if (ph[j].p_type != PT_LOAD || !(ph[j].p_flags & PF_X) ||
				    ph[j].p_memsz != ph[j].p_filesz || fend <= m->off ||
				    fend > m->off + (m->end - m->start) || ph[j].p_offset < m->off)
					continue;
				start = (m->start + (fend - m->off) + 15) & ~15ull;
				len = start < m->end ? m->end - start : 0;
				/* libc's first if it has room: never unloaded while the stub runs */
				if (at_is(m, "libc.so.6") && len >= AT_CAVE_MIN)
					len |= 1ull << 62;
				if (len > c->cave_len) {
					c->cave = start;
					c->cave_len = len;
				}
			}
		}
		close(fd);
	}
	c->cave_len &= ~(1ull << 62);
}

/* Is @rip in libc or the dynamic linker (where dlopen() could find a lock held)? */
static int at_rip_in_libc(const struct at_ctx *c, uint64_t rip)
{
	int i;

	for (i = 0; i < c->nmaps; i++) {
		const struct at_map *m = &c->maps[i];

		if (rip >= m->start && rip < m->end)
			return at_is(m, "libc.so") || at_is(m, "libc-") || at_is(m, "ld-linux") ||
			       at_is(m, "ld-") || at_is(m, "libpthread") || at_is(m, "libdl");
	}
	return 0;
}

/* System calls that wait without libc holding a lock of its own (see probes.md). */
static int at_wait_syscall(long nr)
{
	switch (nr) {
	case SYS_read:
	case SYS_readv:
	case SYS_poll:
	case SYS_select:
	case SYS_pause:
	case SYS_nanosleep:
	case SYS_clock_nanosleep:
	case SYS_wait4:
	case SYS_waitid:
	case SYS_futex:
	case SYS_epoll_wait:
	case SYS_epoll_pwait:
	case SYS_ppoll:
	case SYS_pselect6:
	case SYS_accept:
	case SYS_accept4:
	case SYS_recvfrom:
	case SYS_recvmsg:
	case SYS_rt_sigtimedwait:
	case SYS_rt_sigsuspend:
	case SYS_msgrcv:
	case SYS_semop:
	case SYS_restart_syscall:
		return 1;
	default:
		return 0;
	}
}

#define AT_ERESTARTSYS 512
#define AT_ERESTARTNOINTR 513
#define AT_ERESTARTNOHAND 514
#define AT_ERESTART_RESTARTBLOCK 516

/*
 * Has the stack at @rsp room for the frame and dlopen() (AT_STACK_ROOM below
 * it, in the same mapping)? The main thread's [stack] grows; a thread on a
 * small sigaltstack, in a signal handler, is left alone.
 */
static int at_stack_room(const struct at_ctx *c, uint64_t rsp)
{
	int i;

	for (i = 0; i < c->nmaps; i++) {
		const struct at_map *m = &c->maps[i];

		if (rsp > m->start && rsp <= m->end)
			return strcmp(m->path, "[stack]") == 0 || rsp - m->start >= AT_STACK_ROOM;
	}
	return 0;
}

/*
 * May the stub run in a thread stopped with @r? Sets *@rip and *@rax to where
 * and how the program resumes (a system call interrupted is made again).
 */
static int at_safe(const struct at_ctx *c, const struct user_regs_struct *r, uint64_t *rip,
		   uint64_t *rax)
{
	long orig = (long)r->orig_rax, ret = (long)r->rax;

	*rip = r->rip;
	*rax = r->rax;
	if (!at_stack_room(c, r->rsp))
		return 0;
	if (orig >= 0 && (ret == -AT_ERESTARTSYS || ret == -AT_ERESTARTNOINTR ||
			  ret == -AT_ERESTARTNOHAND || ret == -AT_ERESTART_RESTARTBLOCK)) {
		*rip = r->rip - 2; /* the syscall instruction again */
		/*
		 * The call itself, again, also for -ERESTART_RESTARTBLOCK: the kernel's
		 * restart_syscall would use the thread's restart block, which the stub's
		 * own system calls may have replaced (it then fails with EINTR). A
		 * relative sleep or timeout starts again whole: it lasts longer, as after
		 * any delay, never shorter.
		 */
		*rax = (uint64_t)orig;
		return at_wait_syscall(orig);
	}
	return !at_rip_in_libc(c, r->rip);
}

static unsigned int at_xsave_size(void)
{
	unsigned int a, b, cx, d;

	__asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(cx), "=d"(d) : "a"(1), "c"(0));
	if (!(cx & (1u << 27))) /* OSXSAVE */
		return 0;
	__asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(cx), "=d"(d) : "a"(0xd), "c"(0));
	return b;
}

static void put64(unsigned char *f, size_t off, uint64_t v)
{
	memcpy(f + off, &v, 8);
}

struct at_step {
	const char *path;
	int flags;
	const char *sym;
	const char *arg;
};

/*
 * Build the frame for a thread whose stack pointer is @rsp, at *@base; @r its
 * registers, @rip/@rax where it resumes. Returns the frame (free it) and its size.
 */
static unsigned char *at_frame(const struct at_ctx *c, const struct user_regs_struct *r,
			       uint64_t rip, uint64_t rax, const struct at_step *steps,
			       unsigned int xsz, uint64_t *base, size_t *size)
{
	size_t strs = 0, len, pos;
	unsigned char *f;
	uint64_t b;
	int i;

	for (i = 0; i < 2; i++)
		strs += (steps[i].path ? strlen(steps[i].path) + 1 : 0) +
			(steps[i].sym ? strlen(steps[i].sym) + 1 : 0) +
			(steps[i].arg ? strlen(steps[i].arg) + 1 : 0);
	len = (ATS_XSAVE + xsz + strs + 63) & ~(size_t)63;
	b = (r->rsp - AT_REDZONE - len) & ~63ull;
	f = calloc(1, len);
	if (!f)
		return NULL;
	put64(f, ATS_IRET + 0, rip);
	put64(f, ATS_IRET + 8, r->cs);
	put64(f, ATS_IRET + 16, r->eflags);
	put64(f, ATS_IRET + 24, r->rsp);
	put64(f, ATS_IRET + 32, r->ss);
	put64(f, ATS_GPR + 0, rax);
	put64(f, ATS_GPR + 8, r->rbx);
	put64(f, ATS_GPR + 16, r->rcx);
	put64(f, ATS_GPR + 24, r->rdx);
	put64(f, ATS_GPR + 32, r->rsi);
	put64(f, ATS_GPR + 40, r->rdi);
	put64(f, ATS_GPR + 48, r->rbp);
	put64(f, ATS_GPR + 56, r->r8);
	put64(f, ATS_GPR + 64, r->r9);
	put64(f, ATS_GPR + 72, r->r10);
	put64(f, ATS_GPR + 80, r->r11);
	put64(f, ATS_GPR + 88, r->r12);
	put64(f, ATS_GPR + 96, r->r13);
	put64(f, ATS_GPR + 104, r->r14);
	put64(f, ATS_GPR + 112, r->r15);
	put64(f, ATS_DLOPEN, c->dlopen);
	put64(f, ATS_DLSYM, c->dlsym);
	put64(f, ATS_DLERROR, c->dlerror);
	put64(f, ATS_RESULT, c->cave);
	put64(f, ATS_RES, c->nonce);
	memcpy(f + ATS_PROCMEM, "/proc/self/mem", 15);
	pos = ATS_XSAVE + xsz;
	for (i = 0; i < 2; i++) {
		size_t rec = i ? ATS_STEP1 : ATS_STEP0;
		const char *s[3] = { steps[i].path, steps[i].sym, steps[i].arg };
		size_t where[3] = { rec + 0, rec + 16, rec + 24 };
		int k;

		put64(f, rec + 8, (uint64_t)steps[i].flags);
		for (k = 0; k < 3; k++) {
			if (!s[k])
				continue;
			put64(f, where[k], b + pos);
			memcpy(f + pos, s[k], strlen(s[k]) + 1);
			pos += strlen(s[k]) + 1;
		}
	}
	*base = b;
	*size = len;
	return f;
}

/* The pid tracing @pid (TracerPid in its status), or 0. */
static int at_tracer(int pid)
{
	char path[64], line[256];
	int t = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "TracerPid: %d", &t) == 1)
			break;
	fclose(f);
	return t;
}

static int at_perm_error(int pid, int err)
{
	FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "re");
	int scope = -1;

	if (f) {
		if (fscanf(f, "%d", &scope) != 1)
			scope = -1;
		fclose(f);
	}
	fprintf(stderr,
		"fdr %s: cannot attach to pid %d: %s (ptrace rules: a process of the same user "
		"that is not set-user-ID or otherwise undumpable, or CAP_SYS_PTRACE",
		verb, pid, strerror(err));
	if (scope > 0)
		fprintf(stderr, "; kernel.yama.ptrace_scope is %d%s", scope,
			scope == 1 ? ": only a parent may, or root" : ": only root may");
	fprintf(stderr, ")\n");
	return 1;
}

/*
 * Inject @steps into one thread of the process, as the essay says. 0 (the stub
 * runs, ctx->tid and stop_ms set), or the exit code after a message.
 */
static int at_inject(struct at_ctx *c, const struct at_step *steps)
{
	unsigned char res[ATS_RES_LEN] = { 0 };
	size_t code_len = (size_t)(fdr_attach_stub_end - fdr_attach_stub);
	unsigned int xsz = at_xsave_size();
	double deadline = at_now_ms() + 2000;
	int round;

	if (!xsz)
		return die(1, "pid %d: this CPU or kernel has no XSAVE: not supported", c->pid);
	if (c->cave_len < ATS_RES_LEN + code_len)
		return die(1,
			   "pid %d: no room for %zu bytes of code in its executable mappings "
			   "(largest unused tail of a page: %llu bytes)",
			   c->pid, ATS_RES_LEN + code_len, (unsigned long long)c->cave_len);
	/* the cave: an empty result block, then the code (not run by anyone before step 3) */
	if (pwrite(c->mem, res, sizeof(res), (off_t)c->cave) != (ssize_t)sizeof(res) ||
	    pwrite(c->mem, fdr_attach_stub, code_len, (off_t)(c->cave + ATS_RES_LEN)) !=
		    (ssize_t)code_len)
		return die(1, "pid %d: cannot write its memory (/proc/%d/mem): %s", c->pid, c->pid,
			   strerror(errno));
	at_test_kill("cave");
	for (round = 0; at_now_ms() < deadline; round++) {
		char tp[64];
		DIR *d;
		struct dirent *e;

		snprintf(tp, sizeof(tp), "/proc/%d/task", c->pid);
		d = opendir(tp);
		if (!d)
			return die(1, "pid %d: no such process", c->pid);
		while ((e = readdir(d)) != NULL) {
			struct user_regs_struct r, n;
			uint64_t rip, rax, base;
			unsigned char *frame;
			size_t flen;
			double t0;
			int tid = atoi(e->d_name), st;

			if (tid <= 0 || (c->only_tid && tid != c->only_tid))
				continue;
			if (ptrace(PTRACE_SEIZE, tid, 0, 0) < 0) {
				if (errno == EPERM || errno == EACCES) {
					int tracer = at_tracer(tid);

					closedir(d);
					if (tracer > 0)
						return die(
							1,
							"cannot attach to pid %d: its thread %d is "
							"traced by pid %d (a debugger?): detach that first",
							c->pid, tid, tracer);
					return at_perm_error(c->pid, errno);
				}
				continue; /* ESRCH: gone */
			}
			/* from the interrupt to the detach: an upper bound of the time stopped */
			t0 = at_now_ms();
			if (ptrace(PTRACE_INTERRUPT, tid, 0, 0) < 0 ||
			    waitpid(tid, &st, __WALL) != tid || !WIFSTOPPED(st)) {
				ptrace(PTRACE_DETACH, tid, 0, 0);
				continue;
			}
			if ((st >> 16) != PTRACE_EVENT_STOP) {
				/* a signal on its way: let it go, try again later */
				ptrace(PTRACE_DETACH, tid, 0, WSTOPSIG(st));
				continue;
			}
			if (WSTOPSIG(st) != SIGTRAP) {
				ptrace(PTRACE_DETACH, tid, 0, 0);
				closedir(d);
				return die(1, "pid %d is stopped (job control): continue it first",
					   c->pid);
			}
			at_test_kill("seized");
			if (ptrace(PTRACE_GETREGS, tid, 0, &r) < 0 || !at_safe(c, &r, &rip, &rax)) {
				ptrace(PTRACE_DETACH, tid, 0, 0);
				continue;
			}
			frame = at_frame(c, &r, rip, rax, steps, xsz, &base, &flen);
			if (!frame || pwrite(c->mem, frame, flen, (off_t)base) != (ssize_t)flen) {
				free(frame);
				ptrace(PTRACE_DETACH, tid, 0, 0);
				continue;
			}
			free(frame);
			at_test_kill("frame");
			n = r;
			n.rip = c->cave + ATS_RES_LEN;
			n.rsp = base;
			n.orig_rax =
				(unsigned long long)-1; /* the kernel restarts nothing: the frame does */
			if (ptrace(PTRACE_SETREGS, tid, 0, &n) < 0) {
				ptrace(PTRACE_DETACH, tid, 0, 0);
				continue;
			}
			at_test_kill("regs");
			ptrace(PTRACE_DETACH, tid, 0, 0);
			c->stop_ms = at_now_ms() - t0;
			c->tid = tid;
			closedir(d);
			at_test_kill("detached");
			return 0;
		}
		closedir(d);
		usleep(1000);
	}
	return die(
		1,
		"pid %d: no thread could be interrupted safely within 2 s (each was inside "
		"libc or the dynamic linker, or in a system call fdr does not know to be a wait)",
		c->pid);
}

/* Wait for the stub's result: 0 and *@status, or the exit code after a message. */
static int at_wait(struct at_ctx *c, int64_t *status, uint64_t *step, char *err, size_t errlen)
{
	const char *env = getenv("FDR_ATTACH_TIMEOUT_MS");
	double limit = env && *env ? atof(env) : 10000, deadline = at_now_ms() + limit;
	unsigned char res[ATS_RES_LEN];

	for (;;) {
		uint64_t nonce;

		if (pread(c->mem, res, sizeof(res), (off_t)c->cave) != (ssize_t)sizeof(res))
			return die(1, "pid %d exited before the agent answered", c->pid);
		memcpy(&nonce, res, 8);
		if (nonce == c->nonce)
			break;
		if (at_now_ms() > deadline)
			return die(
				1,
				"pid %d: no answer from the code run in thread %d within %.0f ms "
				"(it may still load the agent later)",
				c->pid, c->tid, limit);
		usleep(200);
	}
	memcpy(status, res + 8, 8);
	memcpy(step, res + 16, 8);
	snprintf(err, errlen, "%.*s", ATS_RES_LEN - 24 - 1, (const char *)res + 24);
	return 0;
}

/* The libraries fdr itself uses: libfdr, and libfdr-probe next to it ($FDR_PROBE_LIB). */
static int at_libs(struct at_ctx *c)
{
	const char *env = getenv("FDR_PROBE_LIB");
	Dl_info info;
	char tmp[PATH_MAX];
	const char *slash;

	if (!dladdr((void *)fdr_session_open, &info) || !info.dli_fname ||
	    !realpath(info.dli_fname, c->libfdr))
		return die(1, "cannot find the libfdr this fdr uses");
	slash = strrchr(c->libfdr, '/');
	if (env && *env)
		snprintf(tmp, sizeof(tmp), "%s", env);
	else
		snprintf(tmp, sizeof(tmp), "%.*s/libfdr-probe.so.0", (int)(slash - c->libfdr),
			 c->libfdr);
	if (!realpath(tmp, c->libprobe))
		return die(1, "%s: %s (libfdr-probe is built on x86-64 with Zydis only)", tmp,
			   strerror(errno));
	return 0;
}

static int at_prepare(struct at_ctx *c, int argc, char **argv)
{
	unsigned long pid;
	char p[64];
	int ret, i;

	if (argc != 2)
		return usage_error(argc, argv, argc > 2 ? 2 : -1, "expected one PID");
	ret = parse_num_arg(argc, argv, 1, "PID", 1, INT_MAX, &pid);
	if (ret)
		return ret;
	c->pid = (int)pid;
	at_kill_point = getenv("FDR_ATTACH_TEST_KILL");
	if (getenv("FDR_ATTACH_THREAD"))
		c->only_tid = atoi(getenv("FDR_ATTACH_THREAD"));
	snprintf(p, sizeof(p), "/proc/%d/mem", c->pid);
	c->mem = open(p, O_RDWR | O_CLOEXEC);
	if (c->mem < 0) {
		if (errno == ENOENT)
			return die(1, "no process %d", c->pid);
		return at_perm_error(c->pid, errno);
	}
	c->maps = calloc(AT_MAX_MAPS, sizeof(*c->maps));
	if (!c->maps)
		return die(1, "out of memory");
	ret = at_read_maps(c);
	if (ret)
		return die_err(1, ret, "/proc/%d/maps", c->pid);
	for (i = 0; i < c->nmaps; i++) {
		if (at_is(&c->maps[i], "libfdr-probe.so"))
			c->probe_loaded = i + 1;
		else if (at_is(&c->maps[i], "libfdr.so"))
			c->fdr_loaded = i + 1;
	}
	for (i = 0; i < c->nmaps; i++) {
		static const char *const names[] = { "dlopen", "dlsym", "dlerror", NULL };
		uint64_t a[3];

		if (!at_is(&c->maps[i], "libc.so.6") || c->maps[i].off != 0)
			continue;
		if (at_dynsyms(c, &c->maps[i], names, a) == 0) {
			c->dlopen = a[0];
			c->dlsym = a[1];
			c->dlerror = a[2];
		}
		break;
	}
	if (!c->dlopen)
		return die(1,
			   "pid %d: no dlopen, dlsym and dlerror found in its libc.so.6 (a static "
			   "program, or glibc before 2.34: not supported)",
			   c->pid);
	at_find_cave(c);
	if (getrandom(&c->nonce, sizeof(c->nonce), 0) != sizeof(c->nonce))
		c->nonce = (uint64_t)at_now_ms() ^ ((uint64_t)getpid() << 32);
	c->nonce |= 1;
	return at_libs(c);
}

static void at_ctx_free(struct at_ctx *c)
{
	int i;

	for (i = 0; c->maps && i < c->nmaps; i++)
		free(c->maps[i].path);
	free(c->maps);
	c->maps = NULL;
	if (c->mem >= 0)
		close(c->mem);
	c->mem = -1;
}

static int at_result(struct at_ctx *c, int64_t status, const char *err, const char *what)
{
	if (status == ATS_ERR_DLOPEN)
		return die(1, "pid %d: dlopen() in the process failed: %s", c->pid, err);
	if (status == ATS_ERR_DLSYM)
		return die(1, "pid %d: dlsym() in the process failed: %s", c->pid, err);
	if (status == -EEXIST)
		return die(1,
			   "pid %d already uses fdr (linked with libfdr or libfdr-probe, or "
			   "LD_PRELOAD): its own agent arms the probes of its session",
			   c->pid);
	if (status < 0)
		return die(1, "pid %d: %s: %s", c->pid, what, strerror((int)-status));
	return 0;
}

static int at_attach(struct at_ctx *c, int argc, char **argv);
static int at_detach(struct at_ctx *c, int argc, char **argv);

/* @fn with a fresh context, freed afterwards */
static int at_run(int (*fn)(struct at_ctx *, int, char **), int argc, char **argv)
{
	struct at_ctx c;
	int ret;

	memset(&c, 0, sizeof(c));
	c.mem = -1;
	ret = fn(&c, argc, argv);
	at_ctx_free(&c);
	return ret;
}

int cmd_attach(int argc, char **argv)
{
	return at_run(at_attach, argc, argv);
}

int cmd_detach(int argc, char **argv)
{
	return at_run(at_detach, argc, argv);
}

static int at_attach(struct at_ctx *c, int argc, char **argv)
{
	struct at_step steps[2];
	struct fdr_session *s;
	char err[ATS_RES_LEN];
	uint64_t step = 0;
	int64_t status;
	int ret;

	ret = at_prepare(c, argc, argv);
	if (ret)
		return ret;
	ret = open_session(&s);
	if (ret)
		return ret;
	fdr_session_close(s);
	if (!realpath(cur_session_dir, c->session))
		return die(1, "%s: %s", cur_session_dir, strerror(errno));
	memset(steps, 0, sizeof(steps));
	if (!c->probe_loaded) {
		/*
		 * libfdr first, told its session (the process's own libfdr if it has one:
		 * never a second copy); then libfdr-probe, whose constructor attaches
		 */
		if (c->fdr_loaded)
			steps[0] = (struct at_step){ c->maps[c->fdr_loaded - 1].path,
						     RTLD_NOW | RTLD_NOLOAD,
						     "fdr_agent_attach_prepare", c->session };
		else
			steps[0] = (struct at_step){ c->libfdr, RTLD_NOW | RTLD_LOCAL,
						     "fdr_agent_attach_prepare", c->session };
		steps[1] = (struct at_step){ c->libprobe, RTLD_NOW | RTLD_LOCAL, "fdr_probe_attach",
					     c->session };
	} else {
		steps[0] = (struct at_step){ c->maps[c->probe_loaded - 1].path,
					     RTLD_NOW | RTLD_NOLOAD, "fdr_probe_attach",
					     c->session };
	}
	ret = at_inject(c, steps);
	if (ret)
		return ret;
	ret = at_wait(c, &status, &step, err, sizeof(err));
	if (ret)
		return ret;
	if (status == -ENOENT)
		return die(1, "pid %d cannot open session %s (it must be the same user's)", c->pid,
			   c->session);
	if (status == -EEXIST && step == ATS_STEP0 && !c->probe_loaded) {
		printf("pid %d is linked with libfdr and records into a session of its own: its "
		       "own agent arms the probes of that session; nothing done\n",
		       c->pid);
		return 0;
	}
	ret = at_result(c, status, err, "the agent did not start");
	if (ret)
		return ret;
	printf("pid %d %s session %s (thread %d stopped %.3f ms)\n", c->pid,
	       status == 1 ? "was attached already to" : "attached to", c->session, c->tid,
	       c->stop_ms);
	return 0;
}

static int at_detach(struct at_ctx *c, int argc, char **argv)
{
	struct at_step steps[2];
	char err[ATS_RES_LEN];
	uint64_t step = 0;
	int64_t status;
	int ret;

	ret = at_prepare(c, argc, argv);
	if (ret)
		return ret;
	if (!c->probe_loaded)
		return die(1, "pid %d has no probe agent (libfdr-probe is not loaded)", c->pid);
	memset(steps, 0, sizeof(steps));
	steps[0] = (struct at_step){ c->maps[c->probe_loaded - 1].path, RTLD_NOW | RTLD_NOLOAD,
				     "fdr_probe_detach", NULL };
	ret = at_inject(c, steps);
	if (ret)
		return ret;
	ret = at_wait(c, &status, &step, err, sizeof(err));
	if (ret)
		return ret;
	ret = at_result(c, status, err, "detach failed");
	if (ret)
		return ret;
	printf("pid %d %s (thread %d stopped %.3f ms)\n", c->pid,
	       status == 1 ? "was not attached" : "detached: every probe removed", c->tid,
	       c->stop_ms);
	return 0;
}

#else /* not x86-64 */

int cmd_attach(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return die(1, "dynamic probes are x86-64 only");
}

int cmd_detach(int argc, char **argv)
{
	return cmd_attach(argc, argv);
}

#endif
