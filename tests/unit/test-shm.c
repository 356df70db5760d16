// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test-shm.c - corrupted shared memory: what writers and readers do with a
 * ring or control file that does not check out (docs/design/abi.md, Validation).
 *
 * A bad CPU of a ring is disabled in the writer's mapping (its events refused
 * and counted in dropped_no_slot, said once in error_log) while the other CPUs
 * record, at map time for a bad geometry and at run time for a bad head; readers skip it and say what and where; a bad control header is
 * refused with the reason in fdr_shm_error().
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "fdr-criterion.h"
#include "fdr-test.h"

/* clang-format off */
FDR_EVENT(tshm, ev,
	FDR_PROTO(uint32_t v),
	FDR_ARGS(v),
	FDR_FIELDS(
		fdr_field_int(uint32_t, v, v)))
/* clang-format on */

static struct fdr_test_env env;

static void fini(void)
{
	fdr_test_teardown(&env);
}

TestSuite(shm, .fini = fini, .timeout = 30);

static void setup(void)
{
	struct fdr_session_opts o = { .buffer_size_kb = 16, .subbuf_size = 4096, .overwrite = 1 };

	cr_assert_eq(fdr_test_setup(&env, &o), 0, "session setup failed");
	cr_assert_eq(fdr_test_set_enabled(env.s, &fdr_ev_tshm_ev, 0, 1), 0);
}

/*
 * Make ring.0.1 a copy of ring.0.0 with @len bytes of @val at @off, and make it
 * the instance's ring (as a resize does): writers and readers map it next.
 */
static void install_corrupt_ring(uint64_t off, const void *val, size_t len)
{
	char src[PATH_MAX + 16], dst[PATH_MAX + 16];
	struct stat st;
	unsigned char *img;
	int fd;

	snprintf(src, sizeof(src), "%s/ring.0.0", env.dir);
	snprintf(dst, sizeof(dst), "%s/ring.0.1", env.dir);
	fd = open(src, O_RDONLY);
	cr_assert(fd >= 0 && fstat(fd, &st) == 0);
	img = malloc((size_t)st.st_size);
	cr_assert(img && read(fd, img, (size_t)st.st_size) == st.st_size);
	close(fd);
	memcpy(img + off, val, len);
	fd = open(dst, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	cr_assert(fd >= 0 && write(fd, img, (size_t)st.st_size) == st.st_size);
	close(fd);
	free(img);
	__atomic_store_n(&fdr_session_control(env.s)->instances[0].ring_gen, 1, __ATOMIC_RELEASE);
	fdr_session_changed(env.s);
	cr_assert_eq(fdr_sync(), 0);
}

/* Offset in the ring file of @field of buffer @bi of @cpu. */
static uint64_t cpu_field_off(uint32_t bi, uint32_t cpu, size_t field)
{
	void *base;
	size_t size;
	const struct fdr_abi_ring *h;

	cr_assert_eq(fdr_session_ring(env.s, 0, &base, &size), 0);
	h = base;
	return h->cpu_off + ((uint64_t)bi * h->nr_cpus + cpu) * sizeof(struct fdr_abi_cpu) + field;
}

static char *error_log(void)
{
	int err = 0;
	char *t = fdr_test_read(env.s, "error_log", 0, NULL, &err);

	cr_assert_not_null(t, "error_log: %d", err);
	return t;
}

/* issue 12: subbuf_size 2^31 + 1 hung the writer (rb_log2) and fdr show/stat */
Test(shm, bad_cpu_is_disabled_the_others_record)
{
	const char *want = "ring.0.1: cpu 1 buffer 0: subbuf_size 2147483649 is not a power of "
			   "two in 4096..1048576";
	const uint32_t bad = 0x80000001u;
	struct fdr_abi_control *ctl;
	struct fdr_cpu_stats st;
	struct fdr_reader *r;
	struct fdr_record rec;
	uint64_t before;
	int c0, c1, n = 0, i;
	char *log;

	setup();
	ctl = fdr_session_control(env.s);
	if (fdr_test_nr_allowed_cpus() < 2 || ctl->nr_cpus < 2)
		cr_skip_test("needs two CPUs");
	c0 = fdr_test_pin(0);
	c1 = fdr_test_pin(1);
	cr_assert(c0 >= 0 && c1 >= 0 && (uint32_t)c1 < ctl->nr_cpus);
	if (c1 != 1)
		cr_skip_test("the second allowed CPU is not CPU 1");
	install_corrupt_ring(cpu_field_off(0, (uint32_t)c1,
					   offsetof(struct fdr_abi_cpu, subbuf_size)),
			     &bad, sizeof(bad));

	/* the writer: CPU 1 refuses and counts, CPU 0 records */
	before = __atomic_load_n(&ctl->dropped_no_slot, __ATOMIC_RELAXED);
	for (i = 0; i < 7; i++)
		fdr_tshm_ev(100 + (uint32_t)i);
	cr_assert_eq(__atomic_load_n(&ctl->dropped_no_slot, __ATOMIC_RELAXED), before + 7,
		     "each event refused on the bad CPU is counted");
	fdr_test_pin(0);
	for (i = 0; i < 10; i++)
		fdr_tshm_ev((uint32_t)i);
	cr_assert_eq(__atomic_load_n(&ctl->dropped_no_slot, __ATOMIC_RELAXED), before + 7);

	/* said once in the error_log, whatever the number of syncs */
	fdr_session_changed(env.s);
	cr_assert_eq(fdr_sync(), 0);
	log = error_log();
	cr_assert_eq(fdr_test_count(log, want), 1, "error_log:\n%s", log);
	cr_assert(strstr(log, "recording disabled on 1 CPU(s)"), "error_log:\n%s", log);
	free(log);

	/* readers: CPU 0's records, and what was skipped */
	cr_assert_eq(fdr_reader_open(env.s, 0, -1, 0, &r), 0);
	while (fdr_reader_next(r, &rec) > 0) {
		cr_assert_eq(rec.cpu, (uint32_t)c0);
		n++;
	}
	cr_assert_eq(n, 10);
	cr_assert_str_eq(fdr_reader_error(r), want);
	fdr_reader_close(r);
	cr_assert_eq(fdr_ring_stats(env.s, 0, (uint32_t)c1, &st), -EUCLEAN);
	cr_assert_str_eq(fdr_shm_error(), want);
	cr_assert_eq(fdr_ring_stats(env.s, 0, (uint32_t)c0, &st), 0);
	cr_assert_eq(st.entries, 10);
}

/*
 * A head that points past its buffer, found by a writer at run time (the kernel's
 * RB_WARN_ON): the CPU is switched off in the writer's mapping, as a bad CPU is
 * at map time, not refused event by event while the head stays bad; said once
 * in the error_log. (Before: every event counted in dropped, nothing logged, and
 * recording went on as soon as the head looked good again.)
 */
Test(shm, corrupt_head_switches_the_cpu_off)
{
	struct fdr_abi_control *ctl;
	const struct fdr_abi_ring *h;
	struct fdr_abi_cpu *c;
	uint64_t good, bad, dropped, no_slot;
	char want[160], *log;
	size_t size;
	void *base;
	int cpu, i;

	setup();
	ctl = fdr_session_control(env.s);
	cpu = fdr_test_pin(0);
	cr_assert(cpu >= 0 && (uint32_t)cpu < ctl->nr_cpus);
	fdr_tshm_ev(1); /* the writer maps the ring and records */
	cr_assert_eq(fdr_session_ring(env.s, 0, &base, &size), 0);
	h = base;
	c = (struct fdr_abi_cpu *)((char *)base + h->cpu_off) + cpu; /* buffer 0, the live one */
	cr_assert_eq(__atomic_load_n(&c->active, __ATOMIC_ACQUIRE) & 1, 0);
	good = __atomic_load_n(&c->head, __ATOMIC_ACQUIRE);
	/* sub-buffer index nr_subbufs: one past the last */
	bad = (good & ~0xffffffffull) | ((uint64_t)c->nr_subbufs * c->subbuf_size + 64);
	__atomic_store_n(&c->head, bad, __ATOMIC_RELEASE);

	dropped = __atomic_load_n(&c->dropped, __ATOMIC_RELAXED);
	no_slot = __atomic_load_n(&ctl->dropped_no_slot, __ATOMIC_RELAXED);
	for (i = 0; i < 5; i++)
		fdr_tshm_ev(100 + (uint32_t)i);
	/* the first finds the head and switches the CPU off; the others are refused before it */
	cr_assert_eq(__atomic_load_n(&c->dropped, __ATOMIC_RELAXED), dropped + 1);
	cr_assert_eq(__atomic_load_n(&ctl->dropped_no_slot, __ATOMIC_RELAXED), no_slot + 4);
	cr_assert_eq(__atomic_load_n(&c->head, __ATOMIC_RELAXED), bad, "nothing written");

	/* off it stays in this mapping, whatever the head reads now */
	__atomic_store_n(&c->head, good, __ATOMIC_RELEASE);
	for (i = 0; i < 3; i++)
		fdr_tshm_ev(200 + (uint32_t)i);
	cr_assert_eq(__atomic_load_n(&ctl->dropped_no_slot, __ATOMIC_RELAXED), no_slot + 7);
	cr_assert_eq(__atomic_load_n(&c->head, __ATOMIC_RELAXED), good, "nothing written");

	/* said once in the error_log, whatever the number of agent rounds */
	cr_assert_eq(fdr_sync(), 0);
	fdr_session_changed(env.s);
	cr_assert_eq(fdr_sync(), 0);
	cr_assert_eq(fdr_sync(), 0);
	snprintf(want, sizeof(want),
		 "ring.0.0: cpu %d buffer 0: head 0x%llx points past its %u sub-buffers: "
		 "recording disabled on 1 CPU(s) of this ring",
		 cpu, (unsigned long long)bad, c->nr_subbufs);
	log = error_log();
	cr_assert_eq(fdr_test_count(log, want), 1, "error_log:\n%s\nwanted once: %s", log, want);
	cr_assert_eq(fdr_test_count(log, ": error: "), 1, "error_log:\n%s", log);
	free(log);
}

/* a ring whose header does not check out is not mapped: every event counted, said once */
Test(shm, bad_ring_header_refused_and_counted)
{
	const uint32_t nr_cpus = 0xffffffffu;
	struct fdr_abi_control *ctl;
	struct fdr_reader *r;
	uint64_t before;
	char *log;
	int i;

	setup();
	ctl = fdr_session_control(env.s);
	install_corrupt_ring(offsetof(struct fdr_abi_ring, nr_cpus), &nr_cpus, sizeof(nr_cpus));
	before = __atomic_load_n(&ctl->dropped_no_slot, __ATOMIC_RELAXED);
	for (i = 0; i < 5; i++)
		fdr_tshm_ev((uint32_t)i);
	/* not into the previous generation's file either: no reader looks there */
	cr_assert_eq(__atomic_load_n(&ctl->dropped_no_slot, __ATOMIC_RELAXED), before + 5);
	/* said once, whatever the number of syncs */
	fdr_session_changed(env.s);
	cr_assert_eq(fdr_sync(), 0);
	log = error_log();
	cr_assert_eq(fdr_test_count(log, "ring.0.1: nr_cpus 4294967295 is not in 1..1024"), 1,
		     "error_log:\n%s", log);
	free(log);
	cr_assert_eq(fdr_reader_open(env.s, 0, -1, 0, &r), -EUCLEAN);
	cr_assert_str_eq(fdr_shm_error(), "ring.0.1: nr_cpus 4294967295 is not in 1..1024");
}

/* a control header that does not check out: refused, with what and where */
Test(shm, bad_control_header_refused)
{
	struct fdr_session *s2 = NULL;
	struct fdr_abi_control *ctl;
	uint32_t saved, ts;

	setup();
	ctl = fdr_session_control(env.s);
	saved = ctl->nr_cpus;
	ts = ctl->ts_source;
	ctl->nr_cpus = 0x80000001u;
	cr_assert_eq(fdr_session_open(env.dir, &s2), -EUCLEAN);
	cr_assert_str_eq(fdr_shm_error(), "control: nr_cpus 2147483649 is not in 1..1024");
	ctl->nr_cpus = saved;
	ctl->ts_source = 7;
	cr_assert_eq(fdr_session_open(env.dir, &s2), -EUCLEAN);
	cr_assert(strstr(fdr_shm_error(), "control: ts_source 7"), "%s", fdr_shm_error());
	ctl->ts_source = ts;
	cr_assert_eq(fdr_session_open(env.dir, &s2), 0);
	fdr_session_close(s2);
}

/*
 * A session of another ABI version is refused, naming both versions, also when
 * its control file is smaller than this version's (version 1 had no inst_ext[]).
 */
Test(shm, other_abi_version_refused)
{
	struct fdr_session *s2 = NULL;
	struct fdr_abi_control *ctl;
	char dir[PATH_MAX + 16], path[PATH_MAX + 32], want[64];
	unsigned char *img;
	size_t v1_size = sizeof(*ctl) - sizeof(ctl->inst_ext);
	int fd;

	setup();
	ctl = fdr_session_control(env.s);
	snprintf(want, sizeof(want), "ABI version is 1, this fdr's is %d", FDR_ABI_VERSION);
	/* this version's size, version 1 */
	ctl->version = 1;
	cr_assert_eq(fdr_session_open(env.dir, &s2), -EUCLEAN);
	cr_assert(strstr(fdr_shm_error(), want), "%s", fdr_shm_error());
	ctl->version = FDR_ABI_VERSION;
	/* version 1's size and header, in a session directory of its own */
	snprintf(dir, sizeof(dir), "%s.v1", env.dir);
	cr_assert_eq(mkdir(dir, 0700), 0, "%s: %s", dir, strerror(errno));
	img = malloc(v1_size);
	cr_assert_not_null(img);
	memcpy(img, ctl, v1_size);
	{
		uint32_t v = 1, sz = (uint32_t)v1_size;

		memcpy(img + offsetof(struct fdr_abi_control, version), &v, sizeof(v));
		memcpy(img + offsetof(struct fdr_abi_control, struct_size), &sz, sizeof(sz));
	}
	snprintf(path, sizeof(path), "%s/control", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	cr_assert(fd >= 0 && write(fd, img, v1_size) == (ssize_t)v1_size);
	close(fd);
	free(img);
	cr_assert_eq(fdr_session_open(dir, &s2), -EUCLEAN);
	cr_assert(strstr(fdr_shm_error(), want), "%s", fdr_shm_error());
	unlink(path);
	rmdir(dir);
}

/* inst_ext[]: a notrace count beyond the list is refused by readers and the file */
Test(shm, bad_notrace_count_refused)
{
	struct fdr_abi_control *ctl;
	struct fdr_reader *r = NULL;
	int err = 0;
	char *t;

	setup();
	ctl = fdr_session_control(env.s);
	ctl->inst_ext[0].nr_notrace_pids = FDR_MAX_PIDS + 1;
	cr_assert_eq(fdr_reader_open(env.s, 0, -1, 0, &r), -EUCLEAN);
	cr_assert(strstr(fdr_shm_error(), "control: instance 0: nr_notrace_pids 33 is above 32"),
		  "%s", fdr_shm_error());
	t = fdr_test_read(env.s, "set_event_notrace_pid", 0, NULL, &err);
	cr_assert_null(t);
	cr_assert_eq(err, -EUCLEAN);
	/* the writer bounds it: our events are not lost to it (nobody listed) */
	ctl->inst_ext[0].nr_notrace_pids = 0;
	cr_assert_eq(fdr_reader_open(env.s, 0, -1, 0, &r), 0);
	fdr_reader_close(r);
}
