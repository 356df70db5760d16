// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * probe-agent-bench.c - what one hit of a dynamic probe costs through the
 * whole path: the int3, the engine's handler, the agent's hit handler (the
 * %di:u32 fetch program) and the record written into the session's ring by
 * libfdr (fdr_event_commit_slot(), the static events' full path).
 *
 * The benchmark makes its own session in a private FDR_ROOT under /dev/shm,
 * defines "p:uprobes/pbench <this program>:pt_nop a=%di:u32" in the session's
 * probes file (as the control side writes it: lib/ctl/uprobe.h's parser and
 * compiler), and calls pt_nop N times on CPU 0 with the event disabled (no
 * probe armed) and enabled (armed by the agent: fdr_sync()), five times each,
 * alternating. The difference per call is the cost of a hit; the median is
 * printed as
 *
 *	METRIC probe_hit_ns fdr=X
 *
 * Then the agent's share alone, without the trap: the same fetch program and
 * fdr_event_commit_slot() called N times in a loop, median of 5, printed as
 *
 *	METRIC probe_hit_record_ns fdr=X
 *
 * Each run's figures go to stderr. Exit status 1 if a run fails its check
 * (every hit counted in the slot, none missed, the probe armed and disarmed).
 * Usage: bench-probe-agent [N] (default 200000).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/core-local.h"
#include "ctl/uprobe.h"
#include "probe/fetch.h"
#include "fdr/fdr-ctl.h"
#include "probe/probe-agent.h"

uint64_t pt_nop(void);

#define RUNS 5

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static double loop_ns(uint64_t (*volatile fn)(void), long n)
{
	double t0 = now_ns();
	long i;

	for (i = 0; i < n; i++)
		fn();
	return (now_ns() - t0) / (double)n;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static char root[64];

static void cleanup(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (root[0] && system(cmd) != 0)
		fprintf(stderr, "bench-probe-agent: could not remove %s\n", root);
}

/* Define slot 0 on pt_nop and register its event; the registry slot in *ev. */
static int define(struct fdr_session *s, struct fdr_abi_probes **out, uint32_t *ev)
{
	static struct fdr_uprobe_cmd cmd;
	struct fdr_uprobe_err err = { 0 };
	struct fdr_abi_event e;
	struct fdr_abi_probes *p;
	struct fdr_abi_probe_slot *sl;
	char exe[PATH_MAX], line[PATH_MAX + 64], path[4200];
	struct stat st;
	size_t plen;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	int fd, ret;

	if (n <= 0 || n >= FDR_PROBE_PATH_LEN || stat("/proc/self/exe", &st))
		return -ENAMETOOLONG;
	exe[n] = 0;
	snprintf(line, sizeof(line), "p:uprobes/pbench %s:pt_nop a=%%di:u32", exe);
	if ((ret = fdr_uprobe_parse(line, &cmd, &err)) < 0 ||
	    (ret = fdr_uprobe_resolve(&cmd, &err)) < 0 ||
	    (ret = fdr_uprobe_event(&cmd, &e, &err)) < 0) {
		fprintf(stderr, "bench-probe-agent: %s: %s\n", line, err.msg);
		return ret;
	}
	snprintf(path, sizeof(path), "%s/probes", fdr_session_path(s));
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0 || ftruncate(fd, (off_t)FDR_PROBES_FILE_SIZE))
		return -errno;
	p = mmap(NULL, FDR_PROBES_FILE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return -errno;
	if ((ret = fdr_session_lock(s)))
		return ret;
	ret = fdr_session_register_event(s, &e, ev);
	sl = &p->probes[0];
	if (!ret)
		ret = fdr_uprobe_compile(&cmd, (struct fdr_fetch_prog *)sl->prog, sizeof(sl->prog),
					 &plen);
	if (!ret) {
		sl->prog_len = (uint32_t)plen;
		sl->event_slot = *ev;
		sl->offset = cmd.offset;
		sl->dev = st.st_dev;
		sl->ino = st.st_ino;
		memcpy(sl->path, exe, (size_t)n + 1);
		fdr_uprobe_format(&cmd, sl->line, sizeof(sl->line));
		sl->gen = 1;
		__atomic_store_n(&sl->state, FDR_PROBE_SLOT_LIVE, __ATOMIC_RELEASE);
		p->nr_live = 1;
		p->gen = 1;
		p->struct_size = sizeof(*p);
		p->version = FDR_ABI_VERSION;
		p->hit_cpus = fdr_session_control(s)->nr_cpus; /* as lib/ctl/probes.c makes it */
		p->hits_off = sizeof(*p);
		__atomic_store_n(&p->magic, FDR_ABI_MAGIC_PROBES, __ATOMIC_RELEASE);
	}
	fdr_session_unlock(s);
	fdr_session_changed(s);
	*out = p;
	return ret ? ret : p ? 0 : -EINVAL;
}

static void set_enabled(struct fdr_session *s, uint32_t ev, int on)
{
	fdr_event_set_enabled(&fdr_session_control(s)->events[ev], 0, on);
	fdr_session_changed(s);
	fdr_sync();
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : 200000;
	struct fdr_session_opts o = { .buffer_size_kb = 4096 };
	struct fdr_abi_probes *p = NULL;
	struct fdr_session *s;
	double cost[RUNS];
	char dir[4096];
	cpu_set_t set;
	uint32_t ev;
	int r, ret;

	if (n <= 0) {
		fprintf(stderr, "bench-probe-agent: N must be a positive number\n");
		return 2;
	}
	snprintf(root, sizeof(root), "/dev/shm/fdr-pbench.XXXXXX");
	if (!mkdtemp(root)) {
		root[0] = 0;
		fprintf(stderr, "bench-probe-agent: mkdtemp: %s\n", strerror(errno));
		return 1;
	}
	atexit(cleanup);
	setenv("FDR_ROOT", root, 1);
	setenv("FDR_SESSION", "pbench", 1);
	if ((ret = fdr_session_default_dir(dir, sizeof(dir))) ||
	    (ret = fdr_session_create(dir, &o, &s)) || (ret = define(s, &p, &ev))) {
		fprintf(stderr, "bench-probe-agent: session: %s\n", strerror(-ret));
		return 1;
	}
	if (fdr_sync() < 0) {
		fprintf(stderr, "bench-probe-agent: this process did not attach\n");
		return 1;
	}
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	sched_setaffinity(0, sizeof(set), &set);
	for (r = 0; r < RUNS; r++) {
		double base, armed;
		uint64_t h0, m0, h, m;

		set_enabled(s, ev, 0);
		if (fdr_probe_agent_armed() != 0) {
			fprintf(stderr, "bench-probe-agent: still armed after the disable\n");
			return 1;
		}
		loop_ns(pt_nop, n / 10);
		base = loop_ns(pt_nop, n);
		set_enabled(s, ev, 1);
		if (fdr_probe_agent_armed() != 1) {
			fprintf(stderr,
				"bench-probe-agent: not armed (error_log: fdr cat error_log)\n");
			return 1;
		}
		h0 = __atomic_load_n(&p->probes[0].hits, __ATOMIC_RELAXED) +
		     fdr_probe_row_hits(p, 0);
		m0 = __atomic_load_n(&p->probes[0].misses, __ATOMIC_RELAXED);
		loop_ns(pt_nop, n / 10);
		armed = loop_ns(pt_nop, n);
		h = __atomic_load_n(&p->probes[0].hits, __ATOMIC_RELAXED) +
		    fdr_probe_row_hits(p, 0) - h0;
		m = __atomic_load_n(&p->probes[0].misses, __ATOMIC_RELAXED) - m0;
		if (h != (uint64_t)(n + n / 10) || m) {
			fprintf(stderr,
				"bench-probe-agent: run %d: %llu hits, %llu misses of %ld calls\n",
				r, (unsigned long long)h, (unsigned long long)m, n + n / 10);
			return 1;
		}
		cost[r] = armed - base;
		fprintf(stderr, "bench-probe-agent: run %d: %.1f ns per call armed, %.1f unarmed\n",
			r, armed, base);
	}
	qsort(cost, RUNS, sizeof(cost[0]), cmp_double);
	printf("METRIC probe_hit_ns fdr=%.0f\n", cost[RUNS / 2]);
	/* the agent's share of a hit, without the trap: the fetch program and the record */
	for (r = 0; r < 2 * RUNS; r++) {
		int nv = r >= RUNS;
		unsigned char raw[16 + FDR_MAX_RECORD + 8] __attribute__((aligned(8)));
		const struct fdr_fetch_prog *prog = (const void *)p->probes[0].prog;
		uint32_t id = fdr_session_control(s)->events[ev].id;
		struct fdr_probe_regs regs = { .gpr = { [FDR_REG_DI] = 7 }, .probe_addr = 1 };
		double t0 = now_ns();
		long i;

		for (i = 0; i < n; i++) {
			int len = fdr_fetch_run(prog, &regs, raw + 16, FDR_MAX_RECORD);

			if (len < 0 || (nv ? fdr_event_commit_slot_nv : fdr_event_commit_slot)(
					       ev, id, raw + 16, (size_t)len) <= 0) {
				fprintf(stderr, "bench-probe-agent: a record was refused\n");
				return 1;
			}
		}
		cost[r % RUNS] = (now_ns() - t0) / (double)n;
		if (r == RUNS - 1 || r == 2 * RUNS - 1) {
			qsort(cost, RUNS, sizeof(cost[0]), cmp_double);
			printf("METRIC %s fdr=%.0f\n",
			       nv ? "probe_hit_record_nv_ns" : "probe_hit_record_ns",
			       cost[RUNS / 2]);
		}
	}
	fdr_session_destroy(s);
	return 0;
}
