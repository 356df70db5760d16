// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test-probe-ret-cxx.cc - C++ exceptions and forced unwinds through pending
 * return probes (libfdr-probe's tramp.S: the trampoline's unwind information
 * and personality; docs/design/probes.md, "Return probes").
 *
 * A plain program (no Criterion: the TSan build runs it too), each case in
 * turn, exit status 1 at the first failed check. Every probed function's
 * return handler appends {function, $retval} to a log; each case builds the
 * log it expects from what the program itself saw return normally, and
 * compares the two entry by entry. After each case no return is pending on
 * any thread (fdr_probe_ret_pending()), neither in the thread's stack nor in
 * the table the unwinder reads, and each site's misses are exactly the frames
 * an exception or a forced unwind passed. Cases:
 *   - caught in the caller, 2000 times (half of the calls throw);
 *   - nested probes on three frames, caught several frames up, with
 *     destructors in the frames between (each must run once);
 *   - a catch that rethrows (throw;) and a catch (...) that rethrows, both
 *     between probed frames;
 *   - caught inside the probed function (the exception never reaches the
 *     trampoline): a normal return;
 *   - backtrace() through three pending returns: the whole stack, each
 *     trampoline frame followed by its real caller;
 *   - pthread_exit() from inside nested probed functions: the forced unwind
 *     runs the callers' destructors and pthread_cleanup handlers;
 *   - 4 threads throwing through probed frames at once.
 * Then all of them again with every probe jump-optimised (jump.c), whose
 * trampoline hijacks the return and calls the function from tramp.S's
 * fdr_probe_ret_call: the same frames, the same unwind, the same log. The
 * functions' bounds come from this program's symbol table. (Not in the TSan
 * build, where jump optimisation cannot run.)
 */
#include <elf.h>
#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <link.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <atomic>
#include <stdexcept>

extern "C" {
#include "engine.h"
}

#define CHECK(c, ...)                                                                         \
	do {                                                                                  \
		if (!(c)) {                                                                   \
			fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #c); \
			fprintf(stderr, __VA_ARGS__);                                         \
			fprintf(stderr, "\n");                                                \
			exit(1);                                                              \
		}                                                                             \
	} while (0)

/* the probed functions stay as written: not inlined, and (gcc) not cloned or split */
#if defined(__clang__)
#define TARGET __attribute__((noinline))
#else
#define TARGET __attribute__((noinline, noipa))
#endif
#define A(f) ((uintptr_t)(void *)(f))

/* ---- the log of returns the handlers saw ------------------------------------------------ */

struct ret_rec {
	uint64_t func;
	int64_t val;
};

enum { LOG_MAX = 1 << 16 };
static ret_rec got[LOG_MAX], want[LOG_MAX];
static std::atomic<unsigned> n_got;
static unsigned n_want;
static std::atomic<unsigned long> n_total; /* every return seen, all threads */
static thread_local bool logging = true;

static void on_ret(const struct fdr_probe_regs *r, void *)
{
	n_total.fetch_add(1);
	if (!logging)
		return;
	unsigned i = n_got.fetch_add(1);

	if (i < LOG_MAX)
		got[i] = { r->probe_addr, (int64_t)r->gpr[FDR_REG_AX] };
}

static void expect(void *f, int64_t v)
{
	CHECK(n_want < LOG_MAX, "log full");
	want[n_want++] = { A(f), v };
}

static void reset_log(void)
{
	n_got = 0;
	n_want = 0;
}

static void compare_log(const char *what)
{
	CHECK(n_got.load() == n_want, "%s: %u returns reported, %u returned normally", what,
	      n_got.load(), n_want);
	for (unsigned i = 0; i < n_want; i++)
		CHECK(got[i].func == want[i].func && got[i].val == want[i].val,
		      "%s: return %u: reported {%#lx, %ld}, expected {%#lx, %ld}", what, i,
		      (unsigned long)got[i].func, (long)got[i].val, (unsigned long)want[i].func,
		      (long)want[i].val);
}

static void no_pending(const char *what)
{
	unsigned tab = 99;
	unsigned mine = fdr_probe_ret_pending(&tab);

	CHECK(mine == 0 && tab == 0, "%s: %u returns pending on this thread, %u in the table", what,
	      mine, tab);
}

/* ---- the second pass: every probe jump-optimised ----------------------------------------- */

static bool optimize_all;

static int main_base(struct dl_phdr_info *info, size_t, void *arg)
{
	*(uintptr_t *)arg = info->dlpi_addr; /* the first object: the program */
	return 1;
}

/* The size of the function that starts at @f, from this program's .symtab (0: none found). */
static size_t func_size(void *f)
{
	static const unsigned char *img;
	static size_t img_len;
	uintptr_t base = 0;

	if (!img) {
		int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
		struct stat st;

		CHECK(fd >= 0 && fstat(fd, &st) == 0, "/proc/self/exe: %s", strerror(errno));
		img_len = (size_t)st.st_size;
		img = (const unsigned char *)mmap(nullptr, img_len, PROT_READ, MAP_PRIVATE, fd, 0);
		close(fd);
		CHECK(img != MAP_FAILED, "mmap: %s", strerror(errno));
	}
	dl_iterate_phdr(main_base, &base);
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)img;
	const Elf64_Shdr *sh = (const Elf64_Shdr *)(img + eh->e_shoff);
	uint64_t va = A(f) - base;

	for (unsigned i = 0; i < eh->e_shnum; i++) {
		if (sh[i].sh_type != SHT_SYMTAB)
			continue;
		const Elf64_Sym *sym = (const Elf64_Sym *)(img + sh[i].sh_offset);

		for (size_t k = 0; k < sh[i].sh_size / sizeof(*sym); k++)
			if (ELF64_ST_TYPE(sym[k].st_info) == STT_FUNC && sym[k].st_value == va)
				return sym[k].st_size;
	}
	return 0;
}

struct probe {
	struct fdr_probe_site *site = nullptr;
	uint64_t misses0 = 0;

	void arm(void *f)
	{
		int r = fdr_probe_arm_flags(A(f), FDR_PROBE_ARM_RETURN, on_ret, nullptr, &site);

		CHECK(r == 0, "arm: %s", strerror(-r));
		misses0 = fdr_probe_site_misses(site);
		if (!optimize_all)
			return;
		char why[256] = "";
		size_t len = func_size(f);

		CHECK(len > 0, "no symbol of size > 0 at %p", f);
		r = fdr_probe_optimize(site, A(f), len, why, sizeof(why));
		CHECK(r == 0 && fdr_probe_site_optimized(site), "optimise %p: %s", f, why);
	}
	uint64_t misses() const
	{
		return fdr_probe_site_misses(site) - misses0;
	}
	void disarm()
	{
		CHECK(fdr_probe_disarm(site) == 0, "disarm");
	}
};

static std::atomic<long> dtors;

struct counted {
	~counted()
	{
		dtors.fetch_add(1);
	}
};

/* ---- caught in the caller --------------------------------------------------------------- */

TARGET static int64_t f_throw(int64_t x)
{
	if (x & 1)
		throw std::runtime_error("odd");
	__asm__ volatile("" ::: "memory");
	return 3 * x + 1;
}

static void case_caught_in_caller(void)
{
	probe p;
	long caught = 0;

	reset_log();
	p.arm((void *)f_throw);
	for (int64_t i = 0; i < 2000; i++) {
		try {
			int64_t v = f_throw(i);

			CHECK(v == 3 * i + 1, "f_throw(%ld) = %ld", (long)i, (long)v);
			expect((void *)f_throw, v);
		} catch (const std::runtime_error &e) {
			CHECK(i & 1 && !strcmp(e.what(), "odd"), "caught at %ld", (long)i);
			caught++;
		}
		no_pending("caught in the caller");
	}
	CHECK(caught == 1000, "%ld caught", caught);
	compare_log("caught in the caller");
	CHECK(p.misses() == 1000, "%lu misses", (unsigned long)p.misses());
	p.disarm();
}

/* ---- nested probes, caught several frames up, rethrows ---------------------------------- */

TARGET static int64_t f_c(int64_t x)
{
	counted c;

	if (x % 3 == 0)
		throw(int) x;
	__asm__ volatile("" ::: "memory");
	return x + 7;
}

TARGET static int64_t plain_mid(int64_t x) /* not probed, with a destructor */
{
	counted c;
	int64_t v = f_c(x);

	__asm__ volatile("" ::: "memory");
	return v * 2;
}

TARGET static int64_t f_b(int64_t x)
{
	counted c;
	int64_t v = plain_mid(x);

	__asm__ volatile("" ::: "memory");
	return v + 1;
}

TARGET static int64_t f_a(int64_t x)
{
	int64_t v = f_b(x);

	__asm__ volatile("" ::: "memory");
	return v - 5;
}

static void case_several_up(void)
{
	probe pa, pb, pc;
	long caught = 0;

	reset_log();
	pa.arm((void *)f_a);
	pb.arm((void *)f_b);
	pc.arm((void *)f_c);
	dtors = 0;
	for (int64_t i = 1; i <= 3000; i++) {
		try {
			int64_t v = f_a(i);

			CHECK(v == (i + 7) * 2 + 1 - 5, "f_a(%ld) = %ld", (long)i, (long)v);
			expect((void *)f_c, i + 7);
			expect((void *)f_b, (i + 7) * 2 + 1);
			expect((void *)f_a, v);
		} catch (int t) {
			CHECK(t == i && i % 3 == 0, "caught %d at %ld", t, (long)i);
			caught++;
		}
		no_pending("several frames up");
	}
	CHECK(caught == 1000, "%ld caught", caught);
	CHECK(dtors == 3 * 3000, "%ld destructors ran, expected %d", dtors.load(), 3 * 3000);
	compare_log("several frames up");
	CHECK(pa.misses() == 1000 && pb.misses() == 1000 && pc.misses() == 1000,
	      "misses %lu %lu %lu", (unsigned long)pa.misses(), (unsigned long)pb.misses(),
	      (unsigned long)pc.misses());
	pa.disarm();
	pb.disarm();
	pc.disarm();
}

TARGET static int64_t f_rethrow(int64_t x) /* probed: catches, adds, rethrows */
{
	try {
		return f_b(x);
	} catch (int &t) {
		t += 1000000;
		throw;
	}
}

TARGET static int64_t f_catch_all(int64_t x) /* probed: catch (...) that rethrows */
{
	counted c;

	try {
		return f_rethrow(x) + 1;
	} catch (...) {
		dtors.fetch_add(100);
		throw;
	}
}

static void case_rethrow(void)
{
	probe pb, pc, pr, pall;
	long caught = 0;

	reset_log();
	pb.arm((void *)f_b);
	pc.arm((void *)f_c);
	pr.arm((void *)f_rethrow);
	pall.arm((void *)f_catch_all);
	dtors = 0;
	for (int64_t i = 1; i <= 3000; i++) {
		try {
			int64_t v = f_catch_all(i);

			CHECK(v == (i + 7) * 2 + 1 + 1, "f_catch_all(%ld) = %ld", (long)i, (long)v);
			expect((void *)f_c, i + 7);
			expect((void *)f_b, (i + 7) * 2 + 1);
			expect((void *)f_rethrow, (i + 7) * 2 + 1);
			expect((void *)f_catch_all, v);
		} catch (int t) {
			CHECK(t == i + 1000000 && i % 3 == 0, "caught %d at %ld", t, (long)i);
			caught++;
		}
		no_pending("rethrow");
	}
	CHECK(caught == 1000, "%ld caught", caught);
	/* f_c, plain_mid, f_b, f_catch_all: 4 destructors a call; catch (...) 100 per throw */
	CHECK(dtors == 4 * 3000 + 100 * 1000, "%ld destructors", dtors.load());
	compare_log("rethrow");
	CHECK(pb.misses() == 1000 && pc.misses() == 1000 && pr.misses() == 1000 &&
		      pall.misses() == 1000,
	      "misses %lu %lu %lu %lu", (unsigned long)pb.misses(), (unsigned long)pc.misses(),
	      (unsigned long)pr.misses(), (unsigned long)pall.misses());
	pb.disarm();
	pc.disarm();
	pr.disarm();
	pall.disarm();
}

/* ---- caught inside the probed function ------------------------------------------------- */

TARGET static int64_t f_catches(int64_t x) /* probed; the exception stays inside */
{
	try {
		return f_c(x);
	} catch (int t) {
		return -t;
	}
}

static void case_caught_inside(void)
{
	probe pin, pc;

	reset_log();
	pin.arm((void *)f_catches);
	pc.arm((void *)f_c);
	for (int64_t i = 1; i <= 2000; i++) {
		int64_t v = f_catches(i);

		CHECK(v == (i % 3 ? i + 7 : -i), "f_catches(%ld) = %ld", (long)i, (long)v);
		if (i % 3)
			expect((void *)f_c, v);
		expect((void *)f_catches, v);
		no_pending("caught inside");
	}
	compare_log("caught inside");
	CHECK(pin.misses() == 0, "%lu misses", (unsigned long)pin.misses());
	CHECK(pc.misses() == 666, "%lu misses", (unsigned long)pc.misses());
	pin.disarm();
	pc.disarm();
}

/* ---- backtrace() through pending returns ------------------------------------------------ */

static void *bt[64];
static int bt_n;
static uintptr_t bt_ra; /* inside f_bt3: its return address, the trampoline */

TARGET static int64_t f_bt3(int64_t x)
{
	bt_n = backtrace(bt, 64);
	bt_ra = (uintptr_t)__builtin_return_address(0);
	__asm__ volatile("" ::: "memory");
	return x;
}

TARGET static int64_t f_bt2(int64_t x)
{
	int64_t v = f_bt3(x);

	__asm__ volatile("" ::: "memory");
	return v + 1;
}

TARGET static int64_t f_bt1(int64_t x)
{
	int64_t v = f_bt2(x);

	__asm__ volatile("" ::: "memory");
	return v + 1;
}

TARGET static int64_t bt_run(void)
{
	int64_t v = f_bt1(1);

	__asm__ volatile("" ::: "memory");
	return v;
}

static void case_backtrace(void)
{
	void *plain[64];
	int n_plain = 0;
	probe p1, p2, p3;

	static volatile int rounds = 2; /* a loop the compiler cannot unroll: one call site */

	for (int round = 0; round < rounds; round++) { /* unprobed, then probed */
		if (round == 1) {
			n_plain = bt_n;
			memcpy(plain, bt, sizeof(plain));
			p1.arm((void *)f_bt1);
			p2.arm((void *)f_bt2);
			p3.arm((void *)f_bt3);
		}
		CHECK(bt_run() == 3, "round %d", round);
	}
	/* [0] in f_bt3, then per probed frame: the trampoline, then its real return */
	if (getenv("BT_DEBUG")) {
		backtrace_symbols_fd(plain, n_plain, 2);
		backtrace_symbols_fd(bt, bt_n, 2);
	}
	CHECK(bt_n == n_plain + 3, "%d frames with 3 returns pending, %d without", bt_n, n_plain);
	/*
	 * f_bt3's frame (and, under ASan, its backtrace() interceptor's before it),
	 * then for each probed frame the trampoline followed by its real return
	 */
	int first = 0;

	while (first < bt_n && (uintptr_t)bt[first] != bt_ra)
		first++;
	CHECK(first >= 1 && first < 4, "the trampoline is frame %d", first);
	for (int k = 0, j = 0; k < n_plain; k++) {
		if (k >= first && k < first + 3) {
			CHECK((uintptr_t)bt[j] == bt_ra, "frame %d: %p, not the trampoline", j,
			      bt[j]);
			j++;
		}
		/* bt_run's caller: its two calls may be two call sites (clang peels the loop) */
		CHECK(k == first + 3 || bt[j] == plain[k], "frame %d: %p, expected %p", j, bt[j],
		      plain[k]);
		j++;
	}
	p1.disarm();
	p2.disarm();
	p3.disarm();
	no_pending("backtrace");
}

/* ---- pthread_exit(): the forced unwind --------------------------------------------------- */

static std::atomic<int> cleanups;

static void cleanup(void *)
{
	cleanups.fetch_add(1);
}

TARGET static int64_t f_exit(int64_t x)
{
	counted c;

	if (x & 1)
		pthread_exit((void *)(intptr_t)x);
	__asm__ volatile("" ::: "memory");
	return x;
}

TARGET static int64_t f_exit_outer(int64_t x)
{
	counted c;
	int64_t v = f_exit(x);

	__asm__ volatile("" ::: "memory");
	return v + 1;
}

static void *exiter(void *arg)
{
	intptr_t x = (intptr_t)arg;
	int64_t v = 0;
	counted c;

	logging = false;
	pthread_cleanup_push(cleanup, nullptr);
	for (int k = 0; k < 3; k++)
		v += f_exit_outer(2 * k);
	v += f_exit_outer(x); /* odd: exits from inside two probed frames */
	pthread_cleanup_pop(0);
	return (void *)(intptr_t)(v + 1000);
}

static void case_pthread_exit(void)
{
	probe pe, po;
	unsigned tab;

	pe.arm((void *)f_exit);
	po.arm((void *)f_exit_outer);
	dtors = 0;
	cleanups = 0;
	n_total = 0;
	for (int t = 0; t < 200; t++) {
		pthread_t th;
		void *rv;

		CHECK(pthread_create(&th, nullptr, exiter, (void *)(intptr_t)(t | (t & 1))) == 0,
		      "pthread_create");
		CHECK(pthread_join(th, &rv) == 0, "pthread_join");
		if (t & 1)
			CHECK((intptr_t)rv == t, "thread %d: pthread_exit's value %ld", t,
			      (long)(intptr_t)rv);
		else
			CHECK((intptr_t)rv == 1009 + t + 1, "thread %d: result %ld", t,
			      (long)(intptr_t)rv);
	}
	CHECK(cleanups == 100, "%d cleanup handlers ran", cleanups.load());
	/* 8 calls a thread (2 objects each) and the thread's own object, exiting or not */
	CHECK(dtors == 200 * (4 * 2 + 1), "%ld destructors", dtors.load());
	CHECK(n_total == 200 * 8 - 100 * 2, "%lu returns", n_total.load());
	CHECK(pe.misses() == 100 && po.misses() == 100, "misses %lu %lu",
	      (unsigned long)pe.misses(), (unsigned long)po.misses());
	fdr_probe_ret_pending(&tab);
	CHECK(tab == 0, "%u returns of exited threads left in the table", tab);
	pe.disarm();
	po.disarm();
}

/* ---- threads throwing at once ---------------------------------------------------------- */

static std::atomic<long> mt_caught, mt_sum;

static void *thrower(void *)
{
	long caught = 0, sum = 0;

	logging = false;
	for (int64_t i = 1; i <= 3000; i++) {
		try {
			sum += f_a(i);
		} catch (int) {
			caught++;
		}
		unsigned mine = fdr_probe_ret_pending(nullptr);

		CHECK(mine == 0, "thread: %u pending", mine);
	}
	mt_caught += caught;
	mt_sum += sum;
	return nullptr;
}

static void case_threads(void)
{
	probe pa, pb, pc;
	pthread_t th[4];
	long want_sum = 0;

	for (int64_t i = 1; i <= 3000; i++)
		if (i % 3)
			want_sum += (i + 7) * 2 + 1 - 5;
	pa.arm((void *)f_a);
	pb.arm((void *)f_b);
	pc.arm((void *)f_c);
	n_total = 0;
	mt_caught = 0;
	mt_sum = 0;
	for (auto &t : th)
		CHECK(pthread_create(&t, nullptr, thrower, nullptr) == 0, "pthread_create");
	for (auto &t : th)
		CHECK(pthread_join(t, nullptr) == 0, "pthread_join");
	CHECK(mt_caught == 4 * 1000 && mt_sum == 4 * want_sum, "caught %ld, sum %ld",
	      mt_caught.load(), mt_sum.load());
	CHECK(n_total == 4 * 2000 * 3, "%lu returns", n_total.load());
	CHECK(pa.misses() == 4000 && pb.misses() == 4000 && pc.misses() == 4000,
	      "misses %lu %lu %lu", (unsigned long)pa.misses(), (unsigned long)pb.misses(),
	      (unsigned long)pc.misses());
	pa.disarm();
	pb.disarm();
	pc.disarm();
	no_pending("threads");
}

int main(void)
{
	static const struct {
		const char *name;
		void (*fn)(void);
	} cases[] = {
		{ "caught_in_caller", case_caught_in_caller },
		{ "several_frames_up", case_several_up },
		{ "rethrow", case_rethrow },
		{ "caught_inside", case_caught_inside },
		{ "backtrace", case_backtrace },
		{ "pthread_exit", case_pthread_exit },
		{ "threads", case_threads },
	};

	for (int pass = 0; pass < 2; pass++) {
		optimize_all = pass == 1;
		if (optimize_all && getenv("FDR_TEST_TSAN")) {
			/*
			 * TSan defers asynchronous signals until a thread enters its
			 * runtime: jump.c's request to the threads is not answered in
			 * time, and no probe is optimised (probes.md, "Jump probes")
			 */
			printf("skipped the jump-optimised pass in the TSan build\n");
			break;
		}
		for (const auto &c : cases) {
			c.fn();
			no_pending(c.name);
			printf("ok %s%s\n", c.name, optimize_all ? " (jump-optimised)" : "");
			fflush(stdout);
		}
	}
	return 0;
}
