// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * probe-count.c - the hits and misses of a probe event, read from the session's
 * probes file: uprobe_profile shows the hits (as the kernel's does), the
 * misses (hits no ring took) are in the probes file only.
 *
 *   probe-count GRP/EVENT     print "HITS MISSES", summed over its locations
 *   probe-count -r GRP/EVENT  print the hits counted in the per-CPU rows only
 *                             (fdr-abi.h; the rest went to the slots' hits)
 *
 * The session is $FDR_SESSION of $FDR_ROOT. Exit status 1 if the session has no
 * probes file or no live location of GRP/EVENT.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>

#include "core/core-local.h"

int main(int argc, char **argv)
{
	unsigned long long hits = 0, misses = 0, row_hits = 0;
	struct fdr_abi_probes *p;
	struct fdr_session *s;
	char dir[4096], want[300];
	uint32_t i;
	int ret, found = 0, rows = argc == 3 && !strcmp(argv[1], "-r");

	if (argc != 2 + rows) {
		fprintf(stderr, "usage: probe-count [-r] GRP/EVENT\n");
		return 2;
	}
	argv += rows;
	if ((ret = fdr_session_default_dir(dir, sizeof(dir))) ||
	    (ret = fdr_session_open(dir, &s)) || (ret = fdr_session_probes(s, &p))) {
		fprintf(stderr, "probe-count: %s\n", strerror(-ret));
		return 1;
	}
	/* a location's line is "p:GRP/EVENT PATH:OFFSET ..." (or r:) */
	snprintf(want, sizeof(want), ":%s ", argv[1]);
	for (i = 0; i < FDR_MAX_PROBES; i++) {
		struct fdr_abi_probe_slot c;
		uint64_t in_rows;

		memcpy(&c, &p->probes[i], sizeof(c));
		if (c.state != FDR_PROBE_SLOT_LIVE || fdr_shm_check_probe_slot(&c, i) ||
		    strncmp(c.line + 1, want, strlen(want)))
			continue;
		found = 1;
		/* the slot's count and its counter in each CPU's row (fdr-abi.h) */
		in_rows = fdr_probe_row_hits(p, i);
		row_hits += in_rows;
		hits += __atomic_load_n(&p->probes[i].hits, __ATOMIC_RELAXED) + in_rows;
		misses += __atomic_load_n(&p->probes[i].misses, __ATOMIC_RELAXED);
	}
	fdr_session_close(s);
	if (!found) {
		fprintf(stderr, "probe-count: no live location of %s\n", argv[1]);
		return 1;
	}
	if (rows)
		printf("%llu\n", row_hits);
	else
		printf("%llu %llu\n", hits, misses);
	return 0;
}
