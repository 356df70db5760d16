// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * probe-agent-target.c - the probed program of probe-agent.sh. Built linked
 * with libfdr (one static event, so its agent runs as in any fdr program),
 * linked with libfdr with no static event at all (PA_NO_EVENT: the agent comes
 * from libfdr's constructor), and without it (started with
 * LD_PRELOAD=libfdr-probe.so). Reads commands from
 * stdin, one a line, and answers each on stdout:
 *
 *   call N      calls pa_target_fn(i, "hello") for i in 0..N-1      -> "ok SUM"
 *   lib N       the same with pa_lib_fn (a linked shared library)    -> "ok SUM"
 *   dlopen PATH dlopen()s PATH (a library with pa_dl_fn)             -> "ok"
 *   dl N        the same with pa_dl_fn                               -> "ok SUM"
 *   reopen PATH dlclose()s the library, then dlopen()s PATH         -> "ok"
 *   dladdr      the address of pa_dl_fn                              -> "addr 0x..."
 *   handmap PATH OFF  maps PATH r-x by hand (mmap, not the dynamic
 *               linker); its pa_dl_fn is at file offset OFF          -> "ok"
 *   hand N      calls that copy of pa_dl_fn(i, "hand"), i < N       -> "ok SUM"
 *   handbyte    its first byte                                       -> "byte XX"
 *   semoff      the file offset of the SDT semaphore pa_sem          -> "off 0x..."
 *   sem         pa_sem, the first bytes of pa_sem_fn, pa_sem_fn2     -> "sem N XX YY"
 *   semcall N   if pa_sem: pa_sem_fn(i) + pa_sem_fn2(i), i in 0..N-1  -> "ok SUM"
 *   byte        the first byte of pa_target_fn (cc when armed)       -> "byte XX"
 *   dlbyte      the same for pa_dl_fn                                -> "byte XX"
 *   libbyte     the same for pa_lib_fn                               -> "byte XX"
 *   fork N      a child calls pa_target_fn N times and exits; waited -> "ok STATUS"
 *   pid         -> "pid PID"
 *   rawblock    a thread that blocks SIGTRAP with the raw rt_sigprocmask
 *               system call (libfdr-probe's pthread_sigmask() never sees
 *               it) and waits                                        -> "ok TID"
 *   rawstop     that thread ends                                     -> "ok"
 *   fixhold     a thread that blocks the patcher's request to the threads
 *               (libfdr-probe's FDR_PROBE_SIG_FIX, SIGRTMAX - 1) with the
 *               raw rt_sigprocmask until one is pending, then 50 ms more:
 *               a jump optimisation waits that long for its answer
 *                                                                    -> "ok TID"
 *   exitonfix   answers, then exit(0) as soon as that thread has seen the
 *               request (the agent's sync is in progress then); exit(5) if
 *               none came within 10 s                              -> "waiting"
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#if defined(PA_WITH_FDR) || defined(PA_NO_EVENT)
#include <fdr/fdr.h>
#endif
#ifdef PA_WITH_FDR
/* clang-format off */
FDR_EVENT(patest, tick,
	FDR_PROTO(int n),
	FDR_ARGS(n),
	FDR_FIELDS(fdr_field_int(int, n, n)))
/* clang-format on */
#endif

int pa_lib_fn(int a, const char *s);
int pa_target_fn(int a, const char *s);

__attribute__((noinline, used)) int pa_target_fn(int a, const char *s)
{
	__asm__ volatile("" ::: "memory");
	return a * 2 + s[1];
}

static int (*volatile fn_ptr)(int, const char *) = pa_target_fn;

/* "threads N": four threads call the probed function N times each */
struct thr_call {
	pthread_t t;
	long n, sum;
};

static void *thr_call_fn(void *p)
{
	struct thr_call *c = p;
	long i;

	for (i = 0; i < c->n; i++)
		c->sum += fn_ptr((int)i, "thread");
	return NULL;
}

/*
 * An SDT semaphore as <sys/sdt.h> makes one (systemtap-sdt-dev is not needed):
 * an unsigned short in the writable section ".probes", which a tracer adds 1
 * to while it has a probe armed that names it (uprobe_events' (REF_CTR_OFFSET)),
 * and the program's probe sites run only while it is not 0.
 */
__attribute__((section(".probes"), used)) unsigned short pa_sem;

/* read as the tracer writes it (a relaxed atomic: no race report under TSan) */
static unsigned int sem_now(void)
{
	return __atomic_load_n(&pa_sem, __ATOMIC_RELAXED);
}

int pa_sem_fn(int a);
int pa_sem_fn2(int a);

__attribute__((noinline, used)) int pa_sem_fn(int a)
{
	__asm__ volatile("" ::: "memory");
	return a + 1;
}

__attribute__((noinline, used)) int pa_sem_fn2(int a)
{
	__asm__ volatile("" ::: "memory");
	return a + 2;
}

/* The file offset of @addr in the program's own file (its PT_LOAD segments). */
static int file_off_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	uintptr_t *a = arg;
	int i;

	(void)size;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *p = &info->dlpi_phdr[i];
		uintptr_t start = info->dlpi_addr + p->p_vaddr;

		if (p->p_type == PT_LOAD && *a >= start && *a < start + p->p_filesz) {
			*a = *a - start + p->p_offset;
			return 1;
		}
	}
	return 1; /* the first object is the program */
}

/* rawblock: SIGTRAP blocked behind libfdr-probe's back, until rawstop */
static int raw_stop, raw_tid;

static void *raw_blocker(void *arg)
{
	uint64_t m = 1ull << (SIGTRAP - 1);

	(void)arg;
	syscall(SYS_rt_sigprocmask, SIG_BLOCK, &m, NULL, sizeof(m));
	__atomic_store_n(&raw_tid, (int)syscall(SYS_gettid), __ATOMIC_RELEASE);
	while (!__atomic_load_n(&raw_stop, __ATOMIC_ACQUIRE))
		usleep(1000);
	return NULL;
}

/*
 * fixhold: the patcher's request (FDR_PROBE_SIG_FIX, lib/probe/probe-local.h)
 * blocked behind libfdr-probe's back. fix_seen: 1 once it is pending (the
 * agent's sync waits for this thread's answer, its lock held), 2 if none came
 * within 10 s; 50 ms later the thread unblocks it, and the sync goes on.
 */
static int fix_tid, fix_seen;

static void *fix_holder(void *arg)
{
	uint64_t m = 1ull << (SIGRTMAX - 1 - 1), pend = 0;
	int i;

	(void)arg;
	syscall(SYS_rt_sigprocmask, SIG_BLOCK, &m, NULL, sizeof(m));
	__atomic_store_n(&fix_tid, (int)syscall(SYS_gettid), __ATOMIC_RELEASE);
	for (i = 0; i < 10000 && !(pend & m); i++) {
		usleep(1000);
		if (syscall(SYS_rt_sigpending, &pend, sizeof(pend)))
			pend = 0;
	}
	__atomic_store_n(&fix_seen, pend & m ? 1 : 2, __ATOMIC_RELEASE);
	usleep(50 * 1000);
	syscall(SYS_rt_sigprocmask, SIG_UNBLOCK, &m, NULL, sizeof(m));
	return NULL;
}

/* Start @fn in *@t and wait for it to publish its thread id in *@tid; 1, or 0 if not started */
static int start_thread(pthread_t *t, void *(*fn)(void *), int *tid)
{
	if (pthread_create(t, NULL, fn, NULL))
		return 0;
	while (!__atomic_load_n(tid, __ATOMIC_ACQUIRE))
		usleep(1000);
	return 1;
}

/* a function whose first instruction is 10 bytes long whatever the build (refused probes) */
__asm__(".text\n"
	".globl pa_asm_fn\n"
	".type pa_asm_fn, @function\n"
	"pa_asm_fn:\n"
	"	movabs $0x1122334455667788, %rax\n"
	"	ret\n"
	".size pa_asm_fn, .-pa_asm_fn\n");

int main(void)
{
	int (*dl_fn)(int, const char *) = NULL;
	int (*hand_fn)(int, const char *) = NULL;
	void *dl_h = NULL;
	char line[4200];
	pthread_t raw_thread, fix_thread;
	int raw_on = 0, fix_on = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
#ifdef PA_WITH_FDR
	fdr_patest_tick(0);
#endif
#ifdef PA_NO_EVENT
	if (!fdr_version()) /* a use of libfdr that is no event: it stays linked (--as-needed) */
		return 2;
#endif
	while (fgets(line, sizeof(line), stdin)) {
		char arg[4096] = "";
		long n = 0, i, sum = 0;

		line[strcspn(line, "\n")] = 0;
		sscanf(line, "%*s %4095s", arg);
		n = strtol(arg, NULL, 0);
		if (!strncmp(line, "call ", 5)) {
			for (i = 0; i < n; i++)
				sum += fn_ptr((int)i, "hello");
			printf("ok %ld\n", sum);
		} else if (!strncmp(line, "lib ", 4)) {
			for (i = 0; i < n; i++)
				sum += pa_lib_fn((int)i, "lib");
			printf("ok %ld\n", sum);
		} else if (!strncmp(line, "dlopen ", 7) || !strncmp(line, "reopen ", 7)) {
			if (line[0] == 'r' && dl_h && dlclose(dl_h)) {
				printf("error %s\n", dlerror());
				continue;
			}
			dl_h = dlopen(arg, RTLD_NOW);
			*(void **)&dl_fn = dl_h ? dlsym(dl_h, "pa_dl_fn") : NULL;
			printf(dl_fn ? "ok\n" : "error %s\n", dlerror());
		} else if (!strncmp(line, "handmap ", 8)) {
			unsigned long off = 0;
			int fd = open(arg, O_RDONLY | O_CLOEXEC);
			struct stat st;
			void *p = MAP_FAILED;

			if (sscanf(line, "%*s %*s %lx", &off) == 1 && fd >= 0 && !fstat(fd, &st) &&
			    off < (unsigned long)st.st_size)
				p = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_EXEC,
					 MAP_PRIVATE, fd, 0);
			if (fd >= 0)
				close(fd);
			*(void **)&hand_fn = p == MAP_FAILED ? NULL : (unsigned char *)p + off;
			printf(hand_fn ? "ok\n" : "error handmap %s\n", arg);
		} else if (!strncmp(line, "hand ", 5) && hand_fn) {
			for (i = 0; i < n; i++)
				sum += hand_fn((int)i, "hand");
			printf("ok %ld\n", sum);
		} else if (!strcmp(line, "handbyte") && hand_fn) {
			printf("byte %02x\n", *(volatile unsigned char *)(void *)hand_fn);
		} else if (!strcmp(line, "dladdr") && dl_fn) {
			printf("addr %p\n", *(void **)&dl_fn);
		} else if (!strncmp(line, "dl ", 3) && dl_fn) {
			for (i = 0; i < n; i++)
				sum += dl_fn((int)i, "dl");
			printf("ok %ld\n", sum);
		} else if (!strcmp(line, "byte")) {
			printf("byte %02x\n", *(volatile unsigned char *)(void *)pa_target_fn);
		} else if (!strcmp(line, "libbyte")) {
			printf("byte %02x\n", *(volatile unsigned char *)(void *)pa_lib_fn);
		} else if (!strcmp(line, "dlbyte") && dl_fn) {
			printf("byte %02x\n", *(volatile unsigned char *)(void *)dl_fn);
		} else if (!strncmp(line, "threads ", 8)) {
			struct thr_call tc[4];
			int started = 0;

			for (i = 0; i < 4; i++) {
				tc[i].n = n;
				tc[i].sum = 0;
				started += !pthread_create(&tc[i].t, NULL, thr_call_fn, &tc[i]);
			}
			for (i = 0; i < started; i++) {
				pthread_join(tc[i].t, NULL);
				sum += tc[i].sum;
			}
			printf(started == 4 ? "ok %ld\n" : "error pthread_create\n", sum);
		} else if (!strncmp(line, "fork ", 5)) {
			int st = -1;
			pid_t c = fork();

			if (c == 0) {
				for (i = 0; i < n; i++)
					sum += fn_ptr((int)i, "child");
				_exit(sum == n * (n - 1) + n * 'h' ? 0 : 3);
			}
			waitpid(c, &st, 0);
			printf("ok %d\n", st);
		} else if (!strcmp(line, "semoff")) {
			uintptr_t a = (uintptr_t)&pa_sem;

			dl_iterate_phdr(file_off_cb, &a);
			printf("off 0x%lx\n", (unsigned long)a);
		} else if (!strcmp(line, "sem")) {
			printf("sem %u %02x %02x\n", sem_now(),
			       *(volatile unsigned char *)(void *)pa_sem_fn,
			       *(volatile unsigned char *)(void *)pa_sem_fn2);
		} else if (!strncmp(line, "semcall ", 8)) {
			for (i = 0; i < n; i++)
				if (sem_now())
					sum += pa_sem_fn((int)i) + pa_sem_fn2((int)i);
			printf("ok %ld\n", sum);
		} else if (!strcmp(line, "rawblock") && !raw_on) {
			raw_on = start_thread(&raw_thread, raw_blocker, &raw_tid);
			printf(raw_on ? "ok %d\n" : "error pthread_create\n", raw_tid);
		} else if (!strcmp(line, "rawstop") && raw_on) {
			__atomic_store_n(&raw_stop, 1, __ATOMIC_RELEASE);
			pthread_join(raw_thread, NULL);
			raw_on = 0;
			printf("ok\n");
		} else if (!strcmp(line, "fixhold") && !fix_on) {
			fix_on = start_thread(&fix_thread, fix_holder, &fix_tid);
			printf(fix_on ? "ok %d\n" : "error pthread_create\n", fix_tid);
		} else if (!strcmp(line, "exitonfix") && fix_on) {
			printf("waiting\n");
			while (!__atomic_load_n(&fix_seen, __ATOMIC_ACQUIRE))
				usleep(1000);
			if (__atomic_load_n(&fix_seen, __ATOMIC_ACQUIRE) != 1) {
				fprintf(stderr, "exitonfix: no request of the patcher in 10 s\n");
				exit(5);
			}
			exit(0); /* the normal exit: destructors run, libfdr-probe's too */
		} else if (!strcmp(line, "pid")) {
			printf("pid %d\n", (int)getpid());
		} else {
			printf("error %s\n", line);
		}
	}
	return 0;
}
