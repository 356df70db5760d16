// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * uprobes-bench.c - one run of bench/compare-uprobes: a dynamic probe on
 * ub_fn() (below: its first instruction an ordinary 'mov %edi,%eax') defined,
 * enabled, disabled and removed by this process, either in fdr's session (the
 * control tree through libfdr-ctl's fdr_file_*(), what 'fdr append
 * uprobe_events' and 'fdr write' do, and libfdr-probe's agent, linked in,
 * arming it here) or in the kernel (write(2) to /sys/kernel/tracing, a kernel
 * uprobe recording into a private instance). The same definition on both:
 *
 *	p:fdrub/ub_PID /path/of/this/program:0xOFFSET a=%di:u32
 *	r:fdrub/ub_PID /path/of/this/program:0xOFFSET rv=$retval:u32     (ret)
 *
 * Usage: bench-uprobes fdr|kernel int3|ret|arm|armwarm|jmp|entret [N]
 *
 *   int3  on CPU 0: N calls of ub_fn(i) with the probe defined but disabled,
 *         then enabled (armed: the first byte of ub_fn reads 0xcc; N/4 calls
 *         to warm first, which fault in and wrap fdr's ring, as fdr-bench
 *         warms for a static event), then disabled again; the hits counted
 *         in uprobe_profile during the N timed calls must be N.
 *         Prints "int3 off=NS on=NS diff=NS" (per call).
 *   ret   the same with the return probe (the kernel's uretprobe: armed at
 *         ub_fn's entry, recorded at its return). Prints "ret off=NS on=NS
 *         diff=NS".
 *   jmp   as int3, on ub_nop5() (below: its first instruction a 5-byte NOP,
 *         which the kernel emulates without single-stepping, and where fdr's
 *         agent puts a jump probe: the first byte must read 0xe9 on fdr's
 *         side, else the run fails). Prints "jmp off=NS on=NS diff=NS".
 *   entret both an entry and a return probe on ub_nop5(): the p: line above
 *         and "r:fdrub/ubr_PID ...:0xOFFSET rv=$retval:u32"; each must count
 *         N hits, and fdr's side must be jump-optimised (0xe9) as for jmp.
 *         Prints "entret off=NS on=NS diff=NS".
 *   arm   4 threads call ub_fn() without end; the probe is defined and enabled
 *         at t0 (CLOCK_MONOTONIC, just before the uprobe_events write; ub_fn's
 *         file offset, for the line, is looked up before t0). The first
 *         hit's record (waited for before the probe is disabled) is found in
 *         the trace, whose clock is set to 'mono' by the caller (trace_clock),
 *         and its time taken from it (uprobe_profile is polled every 1 ms to
 *         see the hit: the poll does not time it). Prints
 *         "arm us=US define_us=US enable_us=US" (first record - t0; how long
 *         the uprobe_events write and the enable write took).
 *   armwarm as arm, in a process that has armed a probe before: first a probe
 *         on ub_nop5() (which no thread calls) is defined, enabled, waited
 *         for until armed (its first byte 0xe9 on fdr's side with
 *         FDR_PROBE_OPTIMIZE=1, else 0xcc), disabled, waited for until
 *         disarmed and removed; then arm's measure. The code and data of the
 *         definition and of the arming (fdr: libfdr-ctl's in this thread and
 *         the agent's; the kernel: its uprobe paths) are then resident, so the
 *         figure leaves out what faulting them in costs a process the first
 *         time. Same line as arm.
 *
 * fdr: the session is $FDR_SESSION of $FDR_ROOT, made beforehand, its clock
 * mono; for int3 and ret the caller sets FDR_PROBE_OPTIMIZE=0 (the breakpoint
 * form, which the agent would otherwise jump-optimise on ub_fn too), and the
 * first byte must still read 0xcc after the timed calls. kernel: the instance is $UB_KINST (instances/NAME, made beforehand, its
 * clock mono); the probe is appended with O_APPEND to uprobe_events (never
 * truncated), enabled only in that instance, removed with '-:' at the end and at
 * exit. Exit status 1 (and no figure) if a check fails.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "fdr/fdr-ctl.h"
#include "fdr/fdr-session.h"

#define TRACEFS "/sys/kernel/tracing"

/* the probed function: an ordinary first instruction, the kernel single-steps it */
__asm__(".text\n"
	".globl ub_fn\n"
	".type ub_fn, @function\n"
	".p2align 4\n"
	"ub_fn:\n"
	"	mov %edi, %eax\n"
	"	add $1, %eax\n"
	"	ret\n"
	".size ub_fn, .-ub_fn\n");
unsigned int ub_fn(unsigned int x);

/*
 * the same after a 5-byte NOP: the kernel's cheapest uprobe (since Linux 6.18
 * it turns a uprobe on one into a call of a trampoline that makes the uprobe
 * system call: no trap), fdr's jump probe. The bytes are written out: GAS
 * encodes "nopl 0(%rax,%rax,1)" in 4 (0f 1f 04 00, the zero displacement
 * dropped), which the kernel only emulates after a trap, and which made
 * fdr's window two instructions (sessions 14 to 17 measured that one).
 */
__asm__(".text\n"
	".globl ub_nop5\n"
	".type ub_nop5, @function\n"
	".p2align 4\n"
	"ub_nop5:\n"
	"	.byte 0x0f, 0x1f, 0x44, 0x00, 0x00\n"
	"	mov %edi, %eax\n"
	"	add $1, %eax\n"
	"	ret\n"
	".size ub_nop5, .-ub_nop5\n");
unsigned int ub_nop5(unsigned int x);

static int kernel; /* the side: 1 kernel, 0 fdr */
static struct fdr_session *sess; /* fdr */
static char kinst[128]; /* kernel: the instance's name */
static char event[64]; /* ub_PID */
static char line[PATH_MAX + 128]; /* the definition */
static int defined;
static int retprobe; /* ret: an r: probe with $retval */
static int jmp; /* jmp, entret: on ub_nop5; fdr's side must be jump-optimised (jmp) */
static int entret; /* entret: a p: probe and an r: probe (event2, line2) */
static char event2[64];
static char wevent[64]; /* armwarm's first probe, while defined */
static char line2[PATH_MAX + 128];
static unsigned int (*target)(unsigned int) = ub_fn;

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* Write @text to control file @path (relative to the tree's root); 0 or -errno. */
static int put(const char *path, int append, const char *text)
{
	if (kernel) {
		char p[512];
		int fd, ret = 0;

		snprintf(p, sizeof(p), TRACEFS "/%s", path);
		fd = open(p, O_WRONLY | O_CLOEXEC | (append ? O_APPEND : O_TRUNC));
		if (fd < 0)
			return -errno;
		if (write(fd, text, strlen(text)) < 0)
			ret = -errno;
		close(fd);
		return ret;
	} else {
		struct fdr_file *f;
		ssize_t n;
		int ret = fdr_file_open(sess, path, O_WRONLY | (append ? O_APPEND : O_TRUNC), &f);

		if (ret < 0)
			return ret;
		n = fdr_file_write(f, text, strlen(text));
		if (n < 0)
			fprintf(stderr, "bench-uprobes: %s: %s\n", path, fdr_file_error(f));
		fdr_file_close(f);
		return n < 0 ? (int)n : 0;
	}
}

/* Read control file @path into @buf (NUL-terminated); its length or -errno. */
static ssize_t get(const char *path, char *buf, size_t len)
{
	size_t got = 0;
	ssize_t n;

	if (kernel) {
		char p[512];
		int fd;

		snprintf(p, sizeof(p), TRACEFS "/%s", path);
		fd = open(p, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return -errno;
		while (got + 1 < len && (n = read(fd, buf + got, len - 1 - got)) > 0)
			got += (size_t)n;
		close(fd);
	} else {
		struct fdr_file *f;
		int ret = fdr_file_open(sess, path, O_RDONLY, &f);

		if (ret < 0)
			return ret;
		while (got + 1 < len && (n = fdr_file_read(f, buf + got, len - 1 - got)) > 0)
			got += (size_t)n;
		fdr_file_close(f);
	}
	buf[got] = 0;
	return (ssize_t)got;
}

static int enable1(const char *ev, int on)
{
	char p[256];

	if (kernel)
		snprintf(p, sizeof(p), "instances/%s/events/fdrub/%s/enable", kinst, ev);
	else
		snprintf(p, sizeof(p), "events/fdrub/%s/enable", ev);
	return put(p, 0, on ? "1\n" : "0\n");
}

/* our event, and entret's second one */
static int enable(int on)
{
	int ret = enable1(event, on);

	if (ret == 0 && entret)
		ret = enable1(event2, on);
	return ret;
}

static void undefine1(const char *ev)
{
	char cmd[96];

	enable1(ev, 0);
	snprintf(cmd, sizeof(cmd), "-:fdrub/%s\n", ev);
	if (put("uprobe_events", 1, cmd) < 0)
		fprintf(stderr, "bench-uprobes: could not remove fdrub/%s\n", ev);
}

static void undefine(void)
{
	if (wevent[0])
		undefine1(wevent);
	wevent[0] = 0;
	if (defined & 2)
		undefine1(event2);
	if (defined & 1)
		undefine1(event);
	defined = 0;
}

static void on_signal(int sig)
{
	undefine();
	signal(sig, SIG_DFL);
	raise(sig);
}

/* This program's path and ub_fn's file offset, from /proc/self/maps. */
static int locate(char *path, size_t len, unsigned long *off)
{
	uintptr_t a = (uintptr_t)(void *)target;
	char l[PATH_MAX + 256];
	FILE *f = fopen("/proc/self/maps", "re");
	int ret = -ENOENT;

	while (f && fgets(l, sizeof(l), f)) {
		unsigned long s, e, o;
		int pos = 0;

		if (sscanf(l, "%lx-%lx %*s %lx %*s %*s %n", &s, &e, &o, &pos) < 3 || !pos ||
		    a < s || a >= e)
			continue;
		snprintf(path, len, "%.*s", (int)strcspn(l + pos, "\n"), l + pos);
		*off = a - s + o;
		ret = 0;
		break;
	}
	if (f)
		fclose(f);
	return ret;
}

/* The definition of our probe into line[] (ub_fn located in /proc/self/maps); 0 or -errno. */
static int make_line(void)
{
	char path[PATH_MAX];
	unsigned long off;
	int ret;

	if ((ret = locate(path, sizeof(path), &off)) < 0)
		return ret;
	snprintf(event, sizeof(event), "ub_%d", (int)getpid());
	snprintf(line, sizeof(line), "%c:fdrub/%s %s:0x%lx %s\n", retprobe ? 'r' : 'p', event, path,
		 off, retprobe ? "rv=$retval:u32" : "a=%di:u32");
	snprintf(event2, sizeof(event2), "ubr_%d", (int)getpid());
	snprintf(line2, sizeof(line2), "r:fdrub/%s %s:0x%lx rv=$retval:u32\n", event2, path, off);
	return 0;
}

/* Append line[] (make_line()) to uprobe_events. */
static int define(void)
{
	int ret = put("uprobe_events", 1, line);

	if (ret == 0)
		defined = 1;
	if (ret == 0 && entret) {
		ret = put("uprobe_events", 1, line2);
		if (ret == 0)
			defined |= 2;
	}
	return ret;
}

/* The hits uprobe_profile shows for event @ev, or -1. */
static long long hits_of(const char *ev)
{
	static char buf[1 << 16];
	char *p, key[80];

	if (get("uprobe_profile", buf, sizeof(buf)) < 0)
		return -1;
	snprintf(key, sizeof(key), " %s ", ev);
	p = strstr(buf, key);
	return p ? strtoll(p + strlen(key), NULL, 10) : -1;
}

static long long hits(void)
{
	return hits_of(event);
}

static volatile unsigned char *first_byte(void)
{
	return (volatile unsigned char *)(void *)target;
}

/*
 * Wait up to 3 s for byte @b to be @want (@armed), or to be neither 0xcc nor
 * 0xe9 (not @armed); 0, or -1 with a message naming @what.
 */
static int wait_byte(volatile unsigned char *b, int armed, unsigned char want, const char *what)
{
	unsigned char v = 0;
	int i;

	for (i = 0; i < 30000; i++) {
		v = *b;
		if (armed ? v == want : v != 0xcc && v != 0xe9)
			return 0;
		usleep(100);
	}
	fprintf(stderr, "bench-uprobes: %s was not %s within 3 s (first byte 0x%02x)\n", what,
		armed ? (want == 0xe9 ? "armed and jump-optimised" : "armed") : "disarmed", v);
	return -1;
}

/*
 * Wait up to 3 s for the target's first byte to be (@armed) or not be 0xcc
 * (0xe9, a jump probe's jmp, for fdr's side of jmp).
 */
static int wait_armed(int armed)
{
	return wait_byte(first_byte(), armed, jmp && !kernel ? 0xe9 : 0xcc, "the probe");
}

static double loop_ns(long n)
{
	unsigned int (*volatile fn)(unsigned int) = target;
	double t0 = now_ns();
	long i;

	for (i = 0; i < n; i++)
		fn((unsigned int)i);
	return (now_ns() - t0) / (double)n;
}

/* int3 and ret: N calls with the probe disabled, then enabled; the cost per call. */
static int run_int3(long n)
{
	double off, on;
	long long h, h0 = 0, h0r = 0;
	cpu_set_t cpus;

	CPU_ZERO(&cpus);
	CPU_SET(0, &cpus);
	sched_setaffinity(0, sizeof(cpus), &cpus);
	if (wait_armed(0))
		return -1;
	loop_ns(n / 10); /* warm */
	off = loop_ns(n);
	if (enable(1) < 0 || wait_armed(1))
		return -1;
	if (entret) {
		/*
		 * The two probes are armed one after the other (fdr's window is
		 * a jmp from the first on): calls until both have counted a
		 * hit, and the hits from then on.
		 */
		int i;

		for (i = 0; i < 3000 && (hits_of(event) <= 0 || hits_of(event2) <= 0); i++) {
			target(0);
			usleep(1000);
		}
		if (hits_of(event) <= 0 || hits_of(event2) <= 0) {
			fprintf(stderr,
				"bench-uprobes: the two probes were not both hit within 3 s\n");
			return -1;
		}
	}
	/*
	 * Warm, as fdr-bench does for a static event: a quarter of the calls
	 * first, which faults in the ring's pages and wraps it (a process does
	 * that once; the kernel's ring is allocated beforehand). Only the hits
	 * from then on are counted.
	 */
	loop_ns(n / 4);
	h0 = hits_of(event);
	if (entret)
		h0r = hits_of(event2);
	on = loop_ns(n);
	if (!kernel && *first_byte() != (jmp ? 0xe9 : 0xcc)) {
		fprintf(stderr, "bench-uprobes: the probe is no longer %s (0x%02x)\n",
			jmp ? "jump-optimised" : "a breakpoint", *first_byte());
		return -1;
	}
	if (enable(0) < 0 || wait_armed(0))
		return -1;
	h = hits() - h0;
	if (h == n && entret) {
		h = hits_of(event2) - h0r;
		if (h != n)
			fprintf(stderr, "bench-uprobes: the return probe:\n");
	}
	if (h != n) {
		fprintf(stderr, "bench-uprobes: uprobe_profile counts %lld hits, expected %ld\n", h,
			n);
		return -1;
	}
	printf("%s off=%.1f on=%.1f diff=%.1f\n",
	       entret	? "entret" :
	       jmp	? "jmp" :
	       retprobe ? "ret" :
			  "int3",
	       off, on, on - off);
	return 0;
}

static volatile int stop;

static void *worker(void *arg)
{
	unsigned int (*volatile fn)(unsigned int) = ub_fn;
	unsigned int i = 0;

	(void)arg;
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED))
		fn(i++);
	return NULL;
}

/* The time of the first record of our event in the trace, in µs (mono clock), or -1. */
static double first_record_us(void)
{
	static char buf[1 << 22];
	char key[80], path[256], *p;

	snprintf(path, sizeof(path), "instances/%s/trace", kinst);
	if (get(kernel ? path : "trace", buf, sizeof(buf)) < 0)
		return -1;
	snprintf(key, sizeof(key), " %s: (", event);
	p = strstr(buf, key);
	if (!p)
		return -1;
	/* "...  SECONDS.MICROS: ub_PID: (" : back over ':' to the time */
	while (p > buf && p[-1] != ' ')
		p--;
	return strtod(p, NULL) * 1e6;
}

/* ub_nop5's first byte, armwarm's first probe's location */
static volatile unsigned char *nop5_byte(void)
{
	return (volatile unsigned char *)(void *)ub_nop5;
}

/*
 * armwarm: a probe on ub_nop5 defined, enabled until armed, disabled until
 * disarmed, and removed (usage above); 0 or -1 with a message.
 */
static int warm_up(void)
{
	unsigned char want = !kernel && getenv("FDR_PROBE_OPTIMIZE") &&
					     !strcmp(getenv("FDR_PROBE_OPTIMIZE"), "1") ?
				     0xe9 :
				     0xcc;
	char path[PATH_MAX], def[PATH_MAX + 128], ev[sizeof(wevent)];
	unsigned long off;
	int ret;

	ret = locate(path, sizeof(path), &off);
	if (ret < 0)
		return -1;
	off += (unsigned long)((uintptr_t)(void *)ub_nop5 - (uintptr_t)(void *)ub_fn);
	snprintf(ev, sizeof(ev), "uw_%d", (int)getpid());
	snprintf(def, sizeof(def), "p:fdrub/%s %s:0x%lx a=%%di:u32\n", ev, path, off);
	ret = put("uprobe_events", 1, def);
	if (ret < 0) {
		fprintf(stderr, "bench-uprobes: %s: %s\n", def, strerror(-ret));
		return -1;
	}
	memcpy(wevent, ev, sizeof(wevent));
	ret = enable1(wevent, 1);
	if (ret < 0) {
		fprintf(stderr, "bench-uprobes: enabling the first probe: %s\n", strerror(-ret));
		return -1;
	}
	if (wait_byte(nop5_byte(), 1, want, "the first probe") || enable1(wevent, 0) < 0 ||
	    wait_byte(nop5_byte(), 0, want, "the first probe"))
		return -1;
	undefine1(wevent);
	wevent[0] = 0;
	return 0;
}

static int run_arm(int warm)
{
	pthread_t t[4];
	double t0, t_def, t_en, first;
	struct timespec c0, c1;
	struct rusage r0, r1;
	int i, ret = 0;

	/* finding ub_fn's file offset is the caller's business, not the definition's */
	if (make_line() < 0)
		return -1;
	for (i = 0; i < 4; i++)
		if (pthread_create(&t[i], NULL, worker, NULL))
			return -1;
	if (warm && warm_up() < 0) {
		__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
		for (i = 0; i < 4; i++)
			pthread_join(t[i], NULL);
		return -1;
	}
	usleep(50 * 1000);
	getrusage(RUSAGE_THREAD, &r0);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
	t0 = now_ns();
	if (define() < 0)
		ret = -1;
	t_def = now_ns();
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
	getrusage(RUSAGE_THREAD, &r1);
	if (!ret && enable(1) < 0)
		ret = -1;
	t_en = now_ns();
	/*
	 * Every millisecond: the figure is the first record's own time, read from
	 * the trace, not when this loop sees the hit, and each look at
	 * uprobe_profile costs CPU that the agent (fdr) or the spinning threads
	 * would otherwise have (polled every 100 us, on 2 CPUs, it delayed fdr's
	 * arm by 100 to 500 us in some runs: docs/design/probes.md)
	 */
	for (i = 0; !ret && i < 5000 && hits() <= 0; i++)
		usleep(1000);
	if (!ret && hits() <= 0) {
		fprintf(stderr, "bench-uprobes: no hit within 5 s\n");
		ret = -1;
	}
	/*
	 * A hit is counted before its record is written: a thread preempted in
	 * between would find the event disabled and write nothing (3 runs in 20
	 * on the loaded VM). Disable only once a record is there.
	 */
	for (i = 0; !ret && i < 2500 && first_record_us() < 0; i++)
		usleep(2000);
	enable(0);
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	for (i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	if (ret)
		return ret;
	first = first_record_us();
	if (first < 0 || first < t0 / 1e3 - 1 || first > now_ns() / 1e3) {
		fprintf(stderr,
			"bench-uprobes: first record at %.0f us, t0 %.0f us: not found, or the "
			"trace clock is not mono\n",
			first, t0 / 1e3);
		return -1;
	}
	printf("arm us=%.0f define_us=%.0f enable_us=%.0f\n", first - t0 / 1e3, (t_def - t0) / 1e3,
	       (t_en - t_def) / 1e3);
	/* the agent's own step times (FDR_PROBE_ARM_TRACE=1) print on this clock too */
	if (!kernel && getenv("FDR_PROBE_ARM_TRACE")) {
		usleep(100 * 1000); /* the agent's sync told its steps (it may still optimise) */
		fprintf(stderr,
			"bench-uprobes: arm t0 at %.1f us, defined +%.1f (on CPU %.1f, %ld faults), enabled "
			"+%.1f, first record at %.1f us\n",
			t0 / 1e3, (t_def - t0) / 1e3,
			(double)(c1.tv_sec - c0.tv_sec) * 1e6 +
				(double)(c1.tv_nsec - c0.tv_nsec) / 1e3,
			r1.ru_minflt - r0.ru_minflt + r1.ru_majflt - r0.ru_majflt,
			(t_en - t_def) / 1e3, first);
	}
	return 0;
}

int main(int argc, char **argv)
{
	long n = argc > 3 ? strtol(argv[3], NULL, 0) : 200000;
	char dir[4096];
	int ret, arm;

	if (argc < 3 || (strcmp(argv[1], "fdr") && strcmp(argv[1], "kernel")) ||
	    (strcmp(argv[2], "int3") && strcmp(argv[2], "ret") && strcmp(argv[2], "arm") &&
	     strcmp(argv[2], "armwarm") && strcmp(argv[2], "jmp") && strcmp(argv[2], "entret")) ||
	    n <= 0) {
		fprintf(stderr,
			"usage: bench-uprobes fdr|kernel int3|ret|arm|armwarm|jmp|entret [N]\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	kernel = !strcmp(argv[1], "kernel");
	arm = !strcmp(argv[2], "arm") ? 1 : !strcmp(argv[2], "armwarm") ? 2 : 0;
	retprobe = !strcmp(argv[2], "ret");
	entret = !strcmp(argv[2], "entret");
	jmp = entret || !strcmp(argv[2], "jmp");
	if (jmp)
		target = ub_nop5;
	if (kernel) {
		const char *k = getenv("UB_KINST");

		if (!k || !*k || strlen(k) >= sizeof(kinst) || strchr(k, '/')) {
			fprintf(stderr, "bench-uprobes: UB_KINST names no instance\n");
			return 1;
		}
		snprintf(kinst, sizeof(kinst), "%s", k);
	} else if ((ret = fdr_session_default_dir(dir, sizeof(dir))) ||
		   (ret = fdr_session_open(dir, &sess))) {
		fprintf(stderr, "bench-uprobes: session: %s\n", strerror(-ret));
		return 1;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	atexit(undefine);
	if (arm) {
		ret = run_arm(arm == 2);
	} else {
		ret = make_line();
		if (ret == 0)
			ret = define();
		if (ret < 0)
			fprintf(stderr, "bench-uprobes: %s: %s\n", line, strerror(-ret));
		else
			ret = run_int3(n);
	}
	undefine();
	return ret < 0;
}
