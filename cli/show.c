// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * show.c - the verbs of fdr that print what a session holds: show (the 'trace'
 * file, not consuming it), pipe (follow 'trace_pipe', consuming it) and stat
 * (the session's state and every CPU's statistics).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "fdr/fdr-ctl.h"
#include "fdr/fdr-read.h"
#include "cli.h"
static int cmd_show_pipe(int argc, char **argv, int pipe)
{
	struct fdr_session *s;
	const char *inst = NULL;
	char pre[FDR_NAME_LEN + 16], path[256];
	int cpu = -1, ret, argi = common_opts(argc, argv, &inst, &cpu, &ret);

	if (argi < 0)
		return ret;
	if (argi < argc)
		return usage_error(argc, argv, argi, "expected no argument, found '%s'",
				   argv[argi]);
	ret = open_session(&s);
	if (ret)
		return ret;
	install_signals();
	inst_prefix(inst, pre, sizeof(pre));
	if (cpu >= 0)
		snprintf(path, sizeof(path), "%sper_cpu/cpu%d/%s", pre, cpu,
			 pipe ? "trace_pipe" : "trace");
	else
		snprintf(path, sizeof(path), "%s%s", pre, pipe ? "trace_pipe" : "trace");
	/* a linked session: the tree merges the kernel instance's lines (lib/ctl/kmerge.c) */
	ret = cat_path(s, path, pipe);
	fdr_session_close(s);
	return ret;
}
int cmd_show(int argc, char **argv)
{
	return cmd_show_pipe(argc, argv, 0);
}
int cmd_pipe(int argc, char **argv)
{
	return cmd_show_pipe(argc, argv, 1);
}
int cmd_stat(int argc, char **argv)
{
	struct fdr_session *s;
	const struct fdr_abi_control *c;
	const char *inst = NULL;
	char pre[FDR_NAME_LEN + 16], path[256];
	int ret, cpu, nr, argi = common_opts(argc, argv, &inst, NULL, &ret);
	uint32_t idx = 0, i;

	if (argi < 0)
		return ret;
	ret = open_session(&s);
	if (ret)
		return ret;
	c = fdr_session_control(s);
	inst_prefix(inst, pre, sizeof(pre));
	idx = inst_index(c, inst);
	if (idx == FDR_MAX_INSTANCES) {
		fdr_session_close(s);
		return die(1, "no instance '%s'", inst);
	}
	if (session_path)
		printf("session: %s\n", fdr_session_path(s));
	else
		printf("session: %s (%s)\n", session_name, fdr_session_path(s));
	printf("instance: %s\n", idx ? inst : "(top)");
	printf("tracing_on: %u\n", c->instances[idx].tracing_on);
	printf("mode: %s\n",
	       c->instances[idx].options & FDR_OPT_OVERWRITE ? "overwrite" : "discard");
	printf("timestamps: %s\n",
	       c->ts_source == FDR_TS_TSC ? "tsc" : "clock_gettime(CLOCK_MONOTONIC)");
	if (!idx) {
		struct fdr_kernel_link l;

		if (ktrace_read_link(fdr_session_path(s), &l) == 0)
			printf("kernel instance: %s/instances/%s (trace_clock %s)\n", l.tracefs,
			       l.instance, l.clock);
	}
	printf("events enabled:");
	for (i = 0; i < FDR_MAX_EVENTS; i++) {
		const struct fdr_abi_event *e = &c->events[i];

		if (e->state == FDR_EVENT_READY && fdr_event_is_enabled(e, idx))
			printf(" %.*s:%.*s", FDR_NAME_LEN, e->system, FDR_NAME_LEN, e->name);
	}
	printf("\n");
	if (c->dropped_no_slot)
		printf("dropped (no CPU slot / nesting / no rseq): %" PRIu64 "\n",
		       c->dropped_no_slot);
	{
		void *base;
		size_t size;

		if (fdr_session_ring(s, idx, &base, &size) == 0) {
			const struct fdr_abi_ring *h = base;

			printf("snapshot: %s, %" PRIu64 " taken, %" PRIu64 " refused%s\n",
			       h->spare_allocated ? "allocated" : "freed", h->snap_count,
			       h->snap_refused, h->saver_pid ? ", a saver is attached" : "");
		}
	}
	nr = fdr_ring_nr_cpus(s, idx);
	if (nr < 0) {
		fflush(stdout);
		ret = die_err(1, nr, "the ring file of instance %s", idx ? inst : "(top)");
	}
	/* every CPU, even after one that failed (a corrupt one is skipped, said once) */
	for (cpu = 0; cpu < nr; cpu++) {
		struct fdr_buf kb = { 0 };
		int r;

		snprintf(path, sizeof(path), "%sper_cpu/cpu%d/buffer_size_kb", pre, cpu);
		/* the file, not the geometry: it reads back the size written (tree.c) */
		if (slurp(s, path, &kb) == 0 && kb.len)
			printf("cpu%d: buffer_size_kb %.*s", cpu, (int)kb.len, kb.data);
		else
			printf("cpu%d: buffer_size_kb %d\n", cpu,
			       fdr_ring_cpu_size_kb(s, idx, (uint32_t)cpu));
		fdr_buf_free(&kb);
		fflush(stdout);
		snprintf(path, sizeof(path), "%sper_cpu/cpu%d/stats", pre, cpu);
		r = cat_path(s, path, 0);
		if (r && !ret)
			ret = r;
	}
	fdr_session_close(s);
	return ret;
}
