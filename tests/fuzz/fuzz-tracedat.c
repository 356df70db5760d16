// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * fuzz-tracedat.c - the trace.dat reader fed a hostile file.
 *
 * Input: a whole trace.dat image. We open it (headers, format files, options,
 * sections, a check of every page), describe every event as its format file,
 * then read every record and format it as `fdr report` does. A malformed image
 * must be refused with -EINVAL and a message; nothing may read outside it.
 * Seeds: the kernel fixtures of tests/data and images from tracedat-build.h.
 */
#include "fuzz.h"

#include "read/tracedat.h"
#include "fdr/fdr-trace.h"
#include "tracedat-build.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fdr_buf err = { 0 }, b = { 0 };
	struct fdr_trace *t = NULL;
	struct fdr_trace_rec rec;
	size_t i, n;
	int ret, nrec = 0;

	/* every buffer merged (fdr record -k's files): a superset of the top one's path */
	ret = fdr_tracedat_open_mem_ex(data, size, "fuzz", FDR_TRACE_ALL_BUFFERS, &t, &err);
	if (ret) {
		if (ret == -EINVAL && (!err.data || strncmp(err.data, "trace.dat: ", 11) != 0))
			abort(); /* every refusal says why */
		fdr_buf_free(&err);
		return 0;
	}
	n = fdr_trace_nr_events(t);
	for (i = 0; i < n; i++) {
		const struct fdr_abi_event *e = fdr_trace_event_at(t, i);

		b.len = 0;
		if (!e || fdr_trace_event(t, e->id) != e)
			abort(); /* listed events are found by id */
		fdr_format_event_file(e, &b);
	}
	while (nrec < 100000 && fdr_trace_next(t, &rec) == 1) {
		char comm[32];

		b.len = 0;
		fdr_trace_format(t, &rec, &b);
		if (fdr_trace_rec_buffer(t, &rec) >= fdr_trace_nr_buffers(t))
			abort(); /* a record comes from one of the buffers read */
		if (rec.len >= 8) {
			int32_t pid;

			memcpy(&pid, rec.payload + 4, 4);
			fdr_trace_comm(t, pid, comm, sizeof(comm));
		}
		nrec++;
	}
	fdr_buf_free(&b);
	fdr_trace_close(t);
	return 0;
}

/* Seeds: v6 and v7, 4- and 8-byte commits, with the page oddities the decoder handles. */
int fdr_fuzz_write_seeds(const char *dir)
{
	static struct tdb_page pg[2];
	static const int versions[] = { 6, 7 };
	static const uint32_t commits[] = { 4, 8 };
	size_t vi, ci;
	int ret = 0;

	for (vi = 0; vi < 2; vi++) {
		for (ci = 0; ci < 2; ci++) {
			const unsigned char *data[2] = { pg[0].data, pg[1].data };
			uint32_t nr[2] = { 1, 1 }, v = 7, n, loc = 3u << 16 | 16;
			unsigned char pl[300];
			struct tdb_file f;
			struct tdb b = { 0 };
			char name[64];

			tdb_page_begin(&pg[0], 4096, commits[ci], 1000);
			n = tdb_payload(pl, TDB_EV_VAL_ID, 42, &v, 1);
			tdb_page_rec(&pg[0], 0, pl, n, 0);
			tdb_page_extend(&pg[0], 1ull << 30);
			tdb_page_rec(&pg[0], 3, pl, n, 1);
			tdb_page_padding(&pg[0], 2, 16);
			tdb_page_abs(&pg[0], 1ull << 33);
			tdb_page_rec(&pg[0], 1, pl, n, 0);
			tdb_page_end(&pg[0], 1, 1, 5);
			tdb_page_begin(&pg[1], 4096, commits[ci], 2000);
			memset(pl, 0, sizeof(pl));
			n = TDB_EV_STR_ID;
			memcpy(pl, &n, 2);
			memcpy(pl + 8, &loc, 4);
			memcpy(pl + 12, "ab", 2);
			memcpy(pl + 16, "hi", 3);
			tdb_page_rec(&pg[1], 0, pl, 20, 0);
			pl[0] = 5; /* ftrace:print */
			pl[1] = 0;
			memcpy(pl + 16, "marker\n", 8);
			tdb_page_rec(&pg[1], 9, pl, 24, 0);
			tdb_page_word(&pg[1], 29); /* the null padding: the rest is unused */
			tdb_page_end(&pg[1], 1, 0, 0);
			memset(&f, 0, sizeof(f));
			f.version = versions[vi];
			f.page_size = 4096;
			f.commit_size = commits[ci];
			f.events = tdb_test_events;
			f.nr_events = sizeof(tdb_test_events) / sizeof(tdb_test_events[0]);
			f.cmdlines = "42 alpha\n0 idle\n";
			f.clock = "[local] global";
			f.nr_cpus = 2;
			f.cpu_data = data;
			f.nr_pages = nr;
			if (tdb_build(&b, &f))
				return -ENOMEM;
			snprintf(name, sizeof(name), "built-v%d-commit%u", versions[vi],
				 commits[ci]);
			ret |= fz_write_file(dir, name, b.p, b.len);
			free(b.p);
			if (versions[vi] != 7)
				continue;
			/* the same pages as an instance too: fdr record -k's layout */
			f.buf2_name = "fdr-kr-seed";
			f.buf2_page_size = 4096;
			f.buf2_nr_cpus = 2;
			f.buf2_cpu_data = data;
			f.buf2_nr_pages = nr;
			memset(&b, 0, sizeof(b));
			if (tdb_build(&b, &f))
				return -ENOMEM;
			snprintf(name, sizeof(name), "built-v7-commit%u-two-buffers", commits[ci]);
			ret |= fz_write_file(dir, name, b.p, b.len);
			free(b.p);
		}
	}
	return ret;
}
