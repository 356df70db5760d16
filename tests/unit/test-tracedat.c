// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test-tracedat.c - the trace.dat reader (lib/read/tracedat-read.c) through
 * fdr_trace_open_file(): images built by tracedat-build.h, written to a temp
 * file. Format files -> event descriptions, the page decoder (time extends,
 * absolute stamps, padding, lost events, 4- and 8-byte commits, length words),
 * the merge, and hostile files: every truncation, huge sizes, offsets past the
 * end, broken pages. A hostile file must give -EINVAL and a message naming an
 * offset, never a crash (the asan build runs these too).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "fdr/fdr-trace.h"
/* fdr_event_def_to_abi(): a libfdr internal */
#include "core/core-local.h"
#include "tracedat-build.h"

#define PAGE 4096

/* Write @n bytes to a temp file; returns its path (static buffer). */
static const char *td_write(const void *p, size_t n)
{
	static char path[4096];
	const char *dir = getenv("TMPDIR");
	int fd;

	snprintf(path, sizeof(path), "%s/fdr-td-XXXXXX", dir ? dir : "/tmp");
	fd = mkstemp(path);
	cr_assert(fd >= 0);
	cr_assert(write(fd, p, n) == (ssize_t)n);
	close(fd);
	return path;
}

static int td_open_bytes(const void *p, size_t n, struct fdr_trace **t, struct fdr_buf *err)
{
	const char *path = td_write(p, n);
	int ret = fdr_trace_open_file(path, t, err);

	unlink(path);
	return ret;
}

/* Two CPUs: cpu0 "val" records at 1000, 3000; cpu1 a string record at 2000. */
struct td_pages {
	struct tdb_page pg[2];
	const unsigned char *data[2];
	uint32_t nr[2];
};

static void td_two_cpus(struct td_pages *tp, uint32_t commit)
{
	unsigned char pl[64];
	uint32_t v = 7, n;

	tdb_page_begin(&tp->pg[0], PAGE, commit, 1000);
	n = tdb_payload(pl, TDB_EV_VAL_ID, 42, &v, 1);
	tdb_page_rec(&tp->pg[0], 0, pl, n, 0);
	v = 8;
	n = tdb_payload(pl, TDB_EV_VAL_ID, 43, &v, 1);
	tdb_page_rec(&tp->pg[0], 2000, pl, n, 0);
	tdb_page_end(&tp->pg[0], 0, 0, 0);

	/* str: __data_loc at 8 -> "hi\0" at 16 (len 3), tag "ab\0\0" at 12 */
	tdb_page_begin(&tp->pg[1], PAGE, commit, 2000);
	memset(pl, 0, sizeof(pl));
	{
		uint16_t type = TDB_EV_STR_ID;
		int32_t pid = 44;
		uint32_t loc = 3u << 16 | 16;

		memcpy(pl, &type, 2);
		memcpy(pl + 4, &pid, 4);
		memcpy(pl + 8, &loc, 4);
		memcpy(pl + 12, "ab", 2);
		memcpy(pl + 16, "hi", 3);
	}
	tdb_page_rec(&tp->pg[1], 0, pl, 20, 1); /* with a length word */
	tdb_page_end(&tp->pg[1], 0, 0, 0);
	tp->data[0] = tp->pg[0].data;
	tp->data[1] = tp->pg[1].data;
	tp->nr[0] = tp->nr[1] = 1;
}

static void td_file(struct tdb_file *f, int version, uint32_t commit, struct td_pages *tp)
{
	memset(f, 0, sizeof(*f));
	f->version = version;
	f->page_size = PAGE;
	f->commit_size = commit;
	f->events = tdb_test_events;
	f->nr_events = sizeof(tdb_test_events) / sizeof(tdb_test_events[0]);
	f->cmdlines = "42 alpha\n43 beta gamma\n44 delta\n";
	f->clock = "[local] global counter";
	f->nr_cpus = 2;
	f->cpu_data = tp->data;
	f->nr_pages = tp->nr;
}

static void td_expect_lines(struct fdr_trace *t, const char *const *want, size_t nr)
{
	struct fdr_trace_rec rec;
	struct fdr_buf b = { 0 };
	size_t i = 0;
	int ret;

	while ((ret = fdr_trace_next(t, &rec)) == 1) {
		b.len = 0;
		cr_assert_eq(fdr_trace_format(t, &rec, &b), 0);
		cr_assert_lt(i, nr, "extra record: %s", b.data);
		cr_expect_str_eq(b.data, want[i], "record %zu", i);
		i++;
	}
	cr_expect_eq(ret, 0);
	cr_expect_eq(i, nr);
	fdr_buf_free(&b);
}

Test(tracedat, v6_and_v7_with_4_and_8_byte_commits)
{
	static const int versions[] = { 6, 7 };
	static const uint32_t commits[] = { 4, 8 };
	size_t vi, ci;

	for (vi = 0; vi < 2; vi++) {
		for (ci = 0; ci < 2; ci++) {
			struct td_pages tp;
			struct tdb_file f;
			struct tdb b = { 0 };
			struct fdr_trace *t = NULL;
			struct fdr_buf err = { 0 };
			struct fdr_trace_rec rec;
			const struct fdr_trace_info *info;
			uint64_t ts[3];
			uint32_t cpu[3], k = 0;
			char comm[32];

			td_two_cpus(&tp, commits[ci]);
			td_file(&f, versions[vi], commits[ci], &tp);
			cr_assert_eq(tdb_build(&b, &f), 0);
			cr_assert_eq(td_open_bytes(b.p, b.len, &t, &err), 0, "v%d commit %u: %s",
				     versions[vi], commits[ci], err.data ? err.data : "");
			info = fdr_trace_get_info(t);
			cr_expect_eq(info->nr_cpus, 2);
			cr_expect_eq(info->page_size, PAGE);
			cr_expect_str_eq(info->clock_name, "local");
			cr_expect_eq(fdr_trace_nr_events(t), 3);
			cr_expect_str_eq(fdr_trace_comm(t, 43, comm, sizeof(comm)), "beta gamma");
			cr_expect_str_eq(fdr_trace_comm(t, 0, comm, sizeof(comm)), "<idle>");
			cr_expect_str_eq(fdr_trace_comm(t, 99, comm, sizeof(comm)), "<...>");
			while (fdr_trace_next(t, &rec) == 1 && k < 3) {
				ts[k] = rec.ts;
				cpu[k++] = rec.cpu;
				cr_expect_eq(rec.lost_before, 0);
				cr_expect_not_null(rec.ev);
			}
			cr_expect_eq(k, 3);
			cr_expect(ts[0] == 1000 && ts[1] == 2000 && ts[2] == 3000,
				  "merged in time order: %lu %lu %lu", (unsigned long)ts[0],
				  (unsigned long)ts[1], (unsigned long)ts[2]);
			cr_expect(cpu[0] == 0 && cpu[1] == 1 && cpu[2] == 0);
			fdr_trace_close(t);
			fdr_buf_free(&err);
			free(b.p);
		}
	}
}

/*
 * A file of two buffers with data, as fdr record -k writes it: fdr's CPUs on
 * top (records at 1000, 2000, 3000), an instance's behind (records at 1500 on
 * CPU 1 and 2500 on CPU 0, pages of 8 KiB). Without FDR_TRACE_ALL_BUFFERS the
 * top buffer alone; with it both, merged by time, each record's buffer known.
 */
Test(tracedat, all_buffers_merged)
{
	static struct tdb_page kp[2];
	struct td_pages tp;
	struct tdb_file f;
	struct tdb b = { 0 };
	struct fdr_trace *t = NULL;
	struct fdr_buf err = { 0 };
	struct fdr_trace_rec rec;
	const unsigned char *kdata[2];
	uint32_t knr[2] = { 1, 1 }, v, n, k = 0, cpu;
	unsigned char pl[64];
	uint64_t ts[5];
	uint32_t bufs[5];
	const char *path;

	td_two_cpus(&tp, 8);
	td_file(&f, 7, 8, &tp);
	for (cpu = 0; cpu < 2; cpu++) {
		tdb_page_begin(&kp[cpu], 2 * PAGE, 8, cpu ? 1500 : 2500);
		v = 100 + cpu;
		n = tdb_payload(pl, TDB_EV_VAL_ID, 45, &v, 1);
		tdb_page_rec(&kp[cpu], 0, pl, n, 0);
		tdb_page_end(&kp[cpu], 0, 0, 0);
		kdata[cpu] = kp[cpu].data;
	}
	f.buf2_name = "fdr-kr-test";
	f.buf2_page_size = 2 * PAGE;
	f.buf2_nr_cpus = 2;
	f.buf2_cpu_data = kdata;
	f.buf2_nr_pages = knr;
	cr_assert_eq(tdb_build(&b, &f), 0);
	path = td_write(b.p, b.len);

	/* the top buffer alone, as before */
	cr_assert_eq(fdr_trace_open_file(path, &t, &err), 0, "%s", err.data ? err.data : "");
	cr_expect_eq(fdr_trace_nr_buffers(t), 1);
	while (fdr_trace_next(t, &rec) == 1)
		k++;
	cr_expect_eq(k, 3);
	fdr_trace_close(t);

	cr_assert_eq(fdr_trace_open_file_ex(path, FDR_TRACE_ALL_BUFFERS, &t, &err), 0, "%s",
		     err.data ? err.data : "");
	unlink(path);
	cr_expect_eq(fdr_trace_nr_buffers(t), 2);
	cr_expect_str_eq(fdr_trace_buffer_name(t, 0), "");
	cr_expect_str_eq(fdr_trace_buffer_name(t, 1), "fdr-kr-test");
	cr_expect_null(fdr_trace_buffer_name(t, 2));
	cr_expect_eq(fdr_trace_get_info(t)->page_size, PAGE, "the first buffer's page size");
	k = 0;
	while (fdr_trace_next(t, &rec) == 1 && k < 5) {
		ts[k] = rec.ts;
		bufs[k++] = fdr_trace_rec_buffer(t, &rec);
		cr_expect_not_null(rec.ev);
	}
	cr_assert_eq(k, 5);
	cr_expect(ts[0] == 1000 && ts[1] == 1500 && ts[2] == 2000 && ts[3] == 2500 && ts[4] == 3000,
		  "merged in time order: %lu %lu %lu %lu %lu", (unsigned long)ts[0],
		  (unsigned long)ts[1], (unsigned long)ts[2], (unsigned long)ts[3],
		  (unsigned long)ts[4]);
	cr_expect(bufs[0] == 0 && bufs[1] == 1 && bufs[2] == 0 && bufs[3] == 1 && bufs[4] == 0,
		  "buffers %u %u %u %u %u", bufs[0], bufs[1], bufs[2], bufs[3], bufs[4]);
	fdr_trace_close(t);
	fdr_buf_free(&err);
	free(b.p);
}

Test(tracedat, formatted_like_the_trace_file)
{
	static const char *const lines[] = {
		"           alpha-42      [000] .....     0.000001: val: val=7\n",
		"      beta gamma-43      [000] .....     0.000003: val: val=8\n",
	};
	struct td_pages tp;
	struct tdb_file f;
	struct tdb b = { 0 };
	struct fdr_trace *t = NULL;

	td_two_cpus(&tp, 8);
	td_file(&f, 7, 8, &tp);
	f.nr_cpus = 1; /* cpu0 only */
	cr_assert_eq(tdb_build(&b, &f), 0);
	cr_assert_eq(td_open_bytes(b.p, b.len, &t, NULL), 0);
	td_expect_lines(t, lines, 2);
	fdr_trace_close(t);
	free(b.p);
}

/* One CPU, one page built by @fill; returns the records' ts and lost_before. */
static size_t td_one_page(void (*fill)(struct tdb_page *pg), uint32_t commit, uint64_t *ts,
			  uint64_t *lost, size_t max)
{
	static struct tdb_page pg;
	const unsigned char *data[1] = { pg.data };
	uint32_t nr[1] = { 1 };
	struct tdb_file f;
	struct tdb b = { 0 };
	struct fdr_trace *t = NULL;
	struct fdr_buf err = { 0 };
	struct fdr_trace_rec rec;
	size_t n = 0;

	tdb_page_begin(&pg, PAGE, commit, 100);
	fill(&pg);
	memset(&f, 0, sizeof(f));
	f.version = 7;
	f.page_size = PAGE;
	f.commit_size = commit;
	f.events = tdb_test_events;
	f.nr_events = 1;
	f.nr_cpus = 1;
	f.cpu_data = data;
	f.nr_pages = nr;
	cr_assert_eq(tdb_build(&b, &f), 0);
	cr_assert_eq(td_open_bytes(b.p, b.len, &t, &err), 0, "%s", err.data ? err.data : "");
	while (fdr_trace_next(t, &rec) == 1 && n < max) {
		ts[n] = rec.ts;
		lost[n++] = rec.lost_before;
	}
	fdr_trace_close(t);
	fdr_buf_free(&err);
	free(b.p);
	return n;
}

static void td_rec(struct tdb_page *pg, uint32_t delta)
{
	unsigned char pl[16];
	uint32_t v = 1, n = tdb_payload(pl, TDB_EV_VAL_ID, 1, &v, 1);

	tdb_page_rec(pg, delta, pl, n, 0);
}

static void fill_extend(struct tdb_page *pg)
{
	td_rec(pg, 5); /* 105 */
	tdb_page_extend(pg, (5ull << 27) + 3); /* + 5 << 27 + 3 */
	td_rec(pg, 2); /* then + 2 */
	tdb_page_end(pg, 0, 0, 0);
}

static void fill_abs(struct tdb_page *pg)
{
	td_rec(pg, 1); /* 101 */
	tdb_page_abs(pg, 123456789012ull); /* absolute */
	td_rec(pg, 10);
	tdb_page_end(pg, 0, 0, 0);
}

static void fill_padding(struct tdb_page *pg)
{
	td_rec(pg, 1); /* 101 */
	tdb_page_padding(pg, 4, 24); /* a discarded record: its delta counts */
	td_rec(pg, 5); /* 110 */
	tdb_page_word(pg, 29); /* a null padding: the page's records end here */
	td_rec(pg, 7); /* never read */
	tdb_page_end(pg, 0, 0, 0);
}

static void fill_lost_stored(struct tdb_page *pg)
{
	td_rec(pg, 1);
	td_rec(pg, 1);
	tdb_page_end(pg, 1, 1, 17);
}

static void fill_lost_unknown(struct tdb_page *pg)
{
	td_rec(pg, 1);
	tdb_page_end(pg, 1, 0, 0);
}

static void fill_long(struct tdb_page *pg)
{
	unsigned char pl[256];
	uint32_t v[60], n, i;

	for (i = 0; i < 60; i++)
		v[i] = i;
	n = tdb_payload(pl, TDB_EV_VAL_ID, 1, v, 60); /* 248 bytes: a length word */
	tdb_page_rec(pg, 3, pl, n, 0);
	td_rec(pg, 1);
	tdb_page_end(pg, 0, 0, 0);
}

static void fill_empty(struct tdb_page *pg)
{
	tdb_page_end(pg, 0, 0, 0);
}

Test(tracedat, page_decoder)
{
	static const uint32_t commits[] = { 4, 8 };
	uint64_t ts[8], lost[8];
	size_t ci, n;

	for (ci = 0; ci < 2; ci++) {
		uint32_t c = commits[ci];

		n = td_one_page(fill_extend, c, ts, lost, 8);
		cr_expect_eq(n, 2);
		cr_expect_eq(ts[0], 105);
		cr_expect_eq(ts[1], 105 + (5ull << 27) + 3 + 2, "time extend: %lu",
			     (unsigned long)ts[1]);

		n = td_one_page(fill_abs, c, ts, lost, 8);
		cr_expect_eq(n, 2);
		cr_expect_eq(ts[0], 101);
		cr_expect_eq(ts[1], 123456789012ull + 10, "absolute: %lu", (unsigned long)ts[1]);

		n = td_one_page(fill_padding, c, ts, lost, 8);
		cr_expect_eq(n, 2, "a null padding ends the page: %zu records", n);
		cr_expect_eq(ts[1], 110);

		n = td_one_page(fill_lost_stored, c, ts, lost, 8);
		cr_expect_eq(n, 2);
		cr_expect_eq(lost[0], 17, "lost before the page: %lu", (unsigned long)lost[0]);
		cr_expect_eq(lost[1], 0);

		n = td_one_page(fill_lost_unknown, c, ts, lost, 8);
		cr_expect_eq(n, 1);
		cr_expect_eq(lost[0], UINT64_MAX, "an unknown count");

		n = td_one_page(fill_long, c, ts, lost, 8);
		cr_expect_eq(n, 2);
		cr_expect_eq(ts[0], 103);
		cr_expect_eq(ts[1], 104);

		n = td_one_page(fill_empty, c, ts, lost, 8);
		cr_expect_eq(n, 0, "a zero-length page has no records");
	}
}

/* ---- format files ----------------------------------------------------------------------- */

#define COMMON                                                                         \
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"         \
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"         \
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n" \
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"

/* Open a file holding one event of the given format; NULL if none was kept. */
static const struct fdr_abi_event *td_one_event(const char *system, const char *format,
						struct fdr_trace **t, struct tdb *b)
{
	static struct tdb_page pg;
	const unsigned char *data[1] = { pg.data };
	uint32_t nr[1] = { 1 };
	struct tdb_event ev = { system, format };
	struct tdb_file f;

	tdb_page_begin(&pg, PAGE, 8, 0);
	tdb_page_end(&pg, 0, 0, 0);
	memset(&f, 0, sizeof(f));
	f.version = 6;
	f.page_size = PAGE;
	f.commit_size = 8;
	f.events = &ev;
	f.nr_events = 1;
	f.nr_cpus = 1;
	f.cpu_data = data;
	f.nr_pages = nr;
	memset(b, 0, sizeof(*b));
	cr_assert_eq(tdb_build(b, &f), 0);
	cr_assert_eq(td_open_bytes(b->p, b->len, t, NULL), 0);
	return fdr_trace_nr_events(*t) ? fdr_trace_event_at(*t, 0) : NULL;
}

struct field_case {
	const char *line; /* after "\tfield:" */
	int kept;
	uint8_t kind;
	uint16_t offset, size;
	uint8_t is_signed;
};

Test(tracedat, format_fields)
{
	static const struct field_case cases[] = {
		{ "int a;\toffset:8;\tsize:4;\tsigned:1;", 1, FDR_KIND_INT, 8, 4, 1 },
		{ "u64 a;\toffset:8;\tsize:8;\tsigned:0;", 1, FDR_KIND_INT, 8, 8, 0 },
		{ "unsigned char a;\toffset:8;\tsize:1;\tsigned:0;", 1, FDR_KIND_INT, 8, 1, 0 },
		{ "short a;\toffset:10;\tsize:2;\tsigned:1;", 1, FDR_KIND_INT, 10, 2, 1 },
		{ "bool a;\toffset:8;\tsize:1;\tsigned:0;", 1, FDR_KIND_BOOL, 8, 1, 0 },
		{ "char a[16];\toffset:8;\tsize:16;\tsigned:0;", 1, FDR_KIND_CHARS, 8, 16, 0 },
		{ "__data_loc char[] a;\toffset:8;\tsize:4;\tsigned:0;", 1, FDR_KIND_STRING, 8, 4,
		  0 },
		{ "__data_loc u8[] a;\toffset:8;\tsize:4;\tsigned:0;", 1, FDR_KIND_BYTES, 8, 4, 0 },
		{ "__data_loc unsigned char[] a;\toffset:8;\tsize:4;\tsigned:0;", 1, FDR_KIND_BYTES,
		  8, 4, 0 },
		{ "char a[];\toffset:8;\tsize:0;\tsigned:1;", 1, FDR_KIND_TAIL_CHARS, 8, 0, 1 },
		{ "void * a;\toffset:8;\tsize:8;\tsigned:0;", 1, FDR_KIND_INT, 8, 8, 0 },
		/* left out: no kind for them in fdr */
		{ "unsigned long a[4];\toffset:8;\tsize:32;\tsigned:0;", 0, 0, 0, 0, 0 },
		{ "u8 a[6];\toffset:8;\tsize:6;\tsigned:0;", 0, 0, 0, 0, 0 },
		{ "__rel_loc char[] a;\toffset:8;\tsize:4;\tsigned:0;", 0, 0, 0, 0, 0 },
		{ "struct x a;\toffset:8;\tsize:12;\tsigned:0;", 0, 0, 0, 0, 0 },
		{ "unsigned long a[len];\toffset:8;\tsize:0;\tsigned:0;", 0, 0, 0, 0, 0 },
		{ "int this_field_name_is_longer_than_31_bytes;\toffset:8;\tsize:4;\tsigned:1;", 0,
		  0, 0, 0, 0 },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char text[1024];
		struct fdr_trace *t = NULL;
		struct tdb b;
		const struct fdr_abi_event *e;

		snprintf(text, sizeof(text),
			 "name: e\nID: 400\nformat:\n" COMMON "\tfield:%s\n\n"
			 "print fmt: \"x\"\n",
			 cases[i].line);
		e = td_one_event("sys", text, &t, &b);
		cr_assert_not_null(e, "%s", cases[i].line);
		cr_expect_str_eq(e->name, "e");
		cr_expect_str_eq(e->system, "sys");
		cr_expect_eq(e->id, 400);
		cr_expect_eq(e->nr_fields, cases[i].kept ? 1u : 0u, "%s", cases[i].line);
		if (cases[i].kept && e->nr_fields == 1) {
			cr_expect_str_eq(e->fields[0].name, "a");
			cr_expect_eq(e->fields[0].kind, cases[i].kind, "%s", cases[i].line);
			cr_expect_eq(e->fields[0].offset, cases[i].offset);
			cr_expect_eq(e->fields[0].size, cases[i].size);
			cr_expect_eq(e->fields[0].is_signed, cases[i].is_signed);
		}
		fdr_trace_close(t);
		free(b.p);
	}
}

Test(tracedat, format_ftrace_builtins)
{
	struct fdr_trace *t = NULL;
	struct tdb b;
	const struct fdr_abi_event *e;

	e = td_one_event("ftrace",
			 "name: user_stack\nID: 12\nformat:\n" COMMON
			 "\tfield:unsigned int tgid;\toffset:8;\tsize:4;\tsigned:0;\n"
			 "\tfield:unsigned long caller[8];\toffset:16;\tsize:64;\tsigned:0;\n\n"
			 "print fmt: \"\\t=> %ps\\n\", (void *)REC->caller[0]\n",
			 &t, &b);
	cr_assert_not_null(e);
	cr_assert_eq(e->nr_fields, 2);
	cr_expect_eq(e->fields[1].kind, FDR_KIND_ULONG_ARRAY);
	cr_expect_str_eq(e->print_fmt, "", "%%ps: the default print");
	fdr_trace_close(t);
	free(b.p);

	e = td_one_event("ftrace", tdb_test_events[2].format, &t, &b);
	cr_assert_not_null(e);
	cr_assert_eq(e->nr_fields, 2);
	cr_expect_eq(e->fields[0].kind, FDR_KIND_ULONG_IP);
	cr_expect_eq(e->fields[1].kind, FDR_KIND_TAIL_CHARS);
	fdr_trace_close(t);
	free(b.p);
}

struct print_case {
	const char *fields; /* field lines */
	const char *print; /* after "print fmt: " */
	const char *fmt; /* expected print_fmt ("" = default print) */
	int nargs;
};

Test(tracedat, format_print_fmt)
{
	static const struct print_case cases[] = {
		{ "\tfield:int a;\toffset:8;\tsize:4;\tsigned:1;\n", "\"a=%d\", REC->a", "a=%d",
		  1 },
		{ "\tfield:int a;\toffset:8;\tsize:4;\tsigned:1;\n"
		  "\tfield:char c[16];\toffset:12;\tsize:16;\tsigned:0;\n",
		  "\"c=%s a=%03d%%\", REC->c, REC->a", "c=%s a=%03d%%", 2 },
		{ "\tfield:__data_loc char[] s;\toffset:8;\tsize:4;\tsigned:0;\n",
		  "\"s=\\\"%s\\\"\\n\", __get_str(s)", "s=\"%s\"\n", 1 },
		{ "\tfield:__data_loc unsigned char[] b;\toffset:8;\tsize:4;\tsigned:0;\n",
		  "\"b=%s\", __print_hex_str(__get_dynamic_array(b), __get_dynamic_array_len(b))",
		  "b=%s", 1 },
		/* the default print: anything fdr_format_body() would not print as the kernel */
		{ "\tfield:int a;\toffset:8;\tsize:4;\tsigned:1;\n", "\"a=%d\", REC->a + 1", "",
		  0 },
		{ "\tfield:int a;\toffset:8;\tsize:4;\tsigned:1;\n",
		  "\"a=%s\", REC->a ? \"y\" : \"n\"", "", 0 },
		{ "\tfield:unsigned long a;\toffset:8;\tsize:8;\tsigned:0;\n", "\"%pS\", REC->a",
		  "", 0 },
		{ "\tfield:int a;\toffset:8;\tsize:4;\tsigned:1;\n", "\"a=%d b=%d\", REC->a", "",
		  0 },
		{ "\tfield:int a;\toffset:8;\tsize:4;\tsigned:1;\n", "\"a=%s\", REC->a", "", 0 },
		{ "\tfield:int a;\toffset:8;\tsize:4;\tsigned:1;\n", "\"a=%*d\", 3, REC->a", "",
		  0 },
		{ "\tfield:int a;\toffset:8;\tsize:4;\tsigned:1;\n", "\"a=%d\", REC->nope", "", 0 },
		{ "\tfield:int a;\toffset:8;\tsize:4;\tsigned:1;\n", "\"unterminated", "", 0 },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char text[2048];
		struct fdr_trace *t = NULL;
		struct tdb b;
		const struct fdr_abi_event *e;

		snprintf(text, sizeof(text),
			 "name: e\nID: 400\nformat:\n" COMMON "%s\nprint fmt: %s\n",
			 cases[i].fields, cases[i].print);
		e = td_one_event("sys", text, &t, &b);
		cr_assert_not_null(e);
		cr_expect_str_eq(e->print_fmt, cases[i].fmt, "case %zu: %s", i, cases[i].print);
		cr_expect_eq(e->nr_print_args, cases[i].nargs, "case %zu", i);
		fdr_trace_close(t);
		free(b.p);
	}
}

Test(tracedat, format_rejects)
{
	static const char *const texts[] = {
		"ID: 400\nformat:\n" COMMON, /* no name */
		"name: e\nformat:\n" COMMON, /* no ID */
		"name: e\nID: 70000\nformat:\n" COMMON, /* ID above 65535 */
		"name: e\nID: 400\nformat:\n\tfield:int a\n", /* no ';' */
		"name: e\nID: 400\nformat:\n\tfield:int a;\toffset:65535;\tsize:4;\n",
	};
	size_t i;

	for (i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		struct fdr_trace *t = NULL;
		struct tdb b;

		cr_expect_null(td_one_event("sys", texts[i], &t, &b), "text %zu", i);
		fdr_trace_close(t);
		free(b.p);
	}
}

/* ---- hostile files ------------------------------------------------------------------------ */

static void td_expect_refused(const void *p, size_t n, const char *what)
{
	struct fdr_trace *t = NULL;
	struct fdr_buf err = { 0 };
	int ret = td_open_bytes(p, n, &t, &err);

	cr_expect_eq(ret, -EINVAL, "%s: %d", what, ret);
	cr_expect(err.data && strncmp(err.data, "trace.dat: ", 11) == 0, "%s: message '%s'", what,
		  err.data ? err.data : "");
	if (ret == 0)
		fdr_trace_close(t);
	fdr_buf_free(&err);
}

Test(tracedat, every_truncation_is_refused, .timeout = 60)
{
	static const int versions[] = { 6, 7 };
	size_t vi, n;

	for (vi = 0; vi < 2; vi++) {
		struct td_pages tp;
		struct tdb_file f;
		struct tdb b = { 0 };
		char what[64];

		td_two_cpus(&tp, 8);
		td_file(&f, versions[vi], 8, &tp);
		cr_assert_eq(tdb_build(&b, &f), 0);
		for (n = 1; n < b.len; n += n < 2048 ? 1 : 61) {
			snprintf(what, sizeof(what), "v%d cut at %zu", versions[vi], n);
			td_expect_refused(b.p, n, what);
		}
		free(b.p);
	}
}

/* Find @needle in the image; its offset. */
static size_t td_find(const struct tdb *b, const void *needle, size_t n)
{
	size_t i;

	for (i = 0; i + n <= b->len; i++)
		if (memcmp(b->p + i, needle, n) == 0)
			return i;
	cr_assert_fail("not found");
	return 0;
}

Test(tracedat, hostile_sizes_and_offsets)
{
	struct td_pages tp;
	struct tdb_file f;
	struct tdb b = { 0 };
	unsigned char *m;
	size_t at, cpu0;
	uint64_t huge = UINT64_MAX - 5, v;
	uint32_t w;

	td_two_cpus(&tp, 8);
	td_file(&f, 6, 8, &tp);
	cr_assert_eq(tdb_build(&b, &f), 0);
	m = malloc(b.len);
	cr_assert_not_null(m);

	/* header_page's size: huge */
	memcpy(m, b.p, b.len);
	at = td_find(&b, "header_page", 12) + 12;
	memcpy(m + at, &huge, 8);
	td_expect_refused(m, b.len, "huge header_page size");

	/* a format file's size past the end */
	memcpy(m, b.p, b.len);
	at = td_find(&b, "name: print", 11) - 8;
	v = 1ull << 40;
	memcpy(m + at, &v, 8);
	td_expect_refused(m, b.len, "format size past the end");

	/* CPU 0's data: offset past the end, size huge, both wrapping */
	at = td_find(&b, "flyrecord", 10) + 10;
	memcpy(&cpu0, b.p + at, 8);
	memcpy(m, b.p, b.len);
	v = b.len + 4096;
	memcpy(m + at, &v, 8);
	td_expect_refused(m, b.len, "cpu offset past the end");
	memcpy(m, b.p, b.len);
	memcpy(m + at + 8, &huge, 8);
	td_expect_refused(m, b.len, "cpu size huge");
	memcpy(m, b.p, b.len);
	memcpy(m + at, &huge, 8);
	v = 64;
	memcpy(m + at + 8, &v, 8);
	td_expect_refused(m, b.len, "offset + size wraps");

	/* a page whose commit is larger than the page */
	memcpy(m, b.p, b.len);
	v = 5000;
	memcpy(m + cpu0 + 8, &v, 8);
	td_expect_refused(m, b.len, "commit past the page");

	/* a record whose length runs past the commit */
	memcpy(m, b.p, b.len);
	w = 28; /* type_len 28: 112 bytes of data */
	memcpy(m + cpu0 + 16, &w, 4);
	td_expect_refused(m, b.len, "record past the commit");

	/* a length word smaller than itself */
	memcpy(m, b.p, b.len);
	w = 0;
	memcpy(m + cpu0 + 16, &w, 4);
	w = 2;
	memcpy(m + cpu0 + 20, &w, 4);
	td_expect_refused(m, b.len, "length word < 4");

	/* the number of systems: huge */
	memcpy(m, b.p, b.len);
	at = td_find(&b, "test\0", 5) - 4;
	w = UINT32_MAX;
	memcpy(m + at, &w, 4);
	td_expect_refused(m, b.len, "huge system count");

	/* magic, version, endianness, long size */
	memcpy(m, b.p, b.len);
	m[3] = 'T';
	td_expect_refused(m, b.len, "bad magic");
	memcpy(m, b.p, b.len);
	m[10] = '8';
	td_expect_refused(m, b.len, "version 8");
	memcpy(m, b.p, b.len);
	m[12] = 1;
	td_expect_refused(m, b.len, "big-endian");
	memcpy(m, b.p, b.len);
	m[13] = 3;
	td_expect_refused(m, b.len, "long size 3");
	free(m);
	free(b.p);
}

Test(tracedat, v7_hostile_sections)
{
	struct td_pages tp;
	struct tdb_file f;
	struct tdb b = { 0 };
	struct fdr_buf err = { 0 };
	struct fdr_trace *t = NULL;
	unsigned char *m;
	size_t at;
	uint64_t v;

	td_two_cpus(&tp, 8);
	td_file(&f, 7, 8, &tp);
	cr_assert_eq(tdb_build(&b, &f), 0);
	m = malloc(b.len + 8);
	cr_assert_not_null(m);

	/* compressed: refused with the way out */
	{
		struct tdb c = { 0 };
		size_t none = td_find(&b, "none", 5);

		tdb_put(&c, b.p, none);
		tdb_put(&c, "zstd", 5);
		tdb_put(&c, b.p + none + 5, b.len - none - 5);
		cr_expect_eq(td_open_bytes(c.p, c.len, &t, &err), -EINVAL);
		cr_expect(err.data && strstr(err.data, "compression \"zstd\"") &&
				  strstr(err.data, "--compression none"),
			  "%s", err.data ? err.data : "");
		fdr_buf_free(&err);
		free(c.p);
	}

	/* the first options offset past the end, and pointing at itself */
	at = td_find(&b, "none", 5) + 6;
	memcpy(m, b.p, b.len);
	v = b.len + 100;
	memcpy(m + at, &v, 8);
	td_expect_refused(m, b.len, "options past the end");
	memcpy(m, b.p, b.len);
	v = 0;
	memcpy(m + at, &v, 8);
	td_expect_refused(m, b.len, "options at 0");

	/* a DONE chain that loops: the last DONE points back to the options */
	{
		uint64_t opt;

		memcpy(&opt, b.p + at, 8);
		memcpy(m, b.p, b.len);
		/* the DONE option is the options section's last 14 bytes */
		{
			uint64_t size;

			memcpy(&size, b.p + opt + 8, 8);
			memcpy(m + opt + 16 + size - 8, &opt, 8);
		}
		td_expect_refused(m, b.len, "options loop");
	}
	free(m);
	free(b.p);
}

Test(tracedat, not_a_regular_file)
{
	struct fdr_trace *t = NULL;
	struct fdr_buf err = { 0 };

	cr_expect_eq(fdr_trace_open_file("/nonexistent/trace.dat", &t, NULL), -ENOENT);
	cr_expect_eq(fdr_trace_open_file("/", &t, &err), -EINVAL);
	fdr_buf_free(&err);
}

/* ---- fdr's own format files -------------------------------------------------------------- */

/*
 * A file written by fdr describes fdr's events with fdr_format_event_file():
 * read back, each record must print exactly as `fdr show` prints it, with the
 * default print and with a custom one.
 */
Test(tracedat, fdr_format_files_print_as_fdr_show)
{
	static const struct fdr_field_desc fields[] = {
		{ "a", 8, 1, FDR_FIELD_KIND_INT, 1 },	  { "b", 10, 2, FDR_FIELD_KIND_INT, 0 },
		{ "c", 12, 4, FDR_FIELD_KIND_INT, 1 },	  { "d", 16, 8, FDR_FIELD_KIND_INT, 0 },
		{ "e", 24, 1, FDR_FIELD_KIND_BOOL, 0 },	  { "f", 25, 8, FDR_FIELD_KIND_CHARS, 0 },
		{ "g", 36, 4, FDR_FIELD_KIND_STRING, 0 }, { "h", 40, 4, FDR_FIELD_KIND_BYTES, 0 },
		{ "i", 44, 8, FDR_FIELD_KIND_INT, 1 },
	};
	static const struct {
		const char *fmt, *args;
	} prints[] = {
		{ NULL, NULL },
		{ "st=%d lat=%llu path=%s x=%#x f=%-6s|", "c,d,g,b,f" },
		{ "a=%d h=%s i=%lld e=%u", "a,h,i,e" },
	};
	unsigned char pl[64];
	size_t k;

	memset(pl, 0, sizeof(pl));
	{
		int8_t a = -5;
		uint16_t bv = 65000;
		int32_t c = -123456;
		uint64_t d = 18446744073709551000ull;
		uint8_t e = 1;
		uint32_t gloc = 4u << 16 | 52, hloc = 3u << 16 | 56;
		int64_t i = -9000000000ll;
		uint16_t type = 1000;
		int32_t pid = 77;

		memcpy(pl, &type, 2);
		memcpy(pl + 4, &pid, 4);
		memcpy(pl + 8, &a, 1);
		memcpy(pl + 10, &bv, 2);
		memcpy(pl + 12, &c, 4);
		memcpy(pl + 16, &d, 8);
		memcpy(pl + 24, &e, 1);
		memcpy(pl + 25, "abcdefgh", 8); /* a full array: no NUL */
		memcpy(pl + 36, &gloc, 4);
		memcpy(pl + 40, &hloc, 4);
		memcpy(pl + 44, &i, 8);
		memcpy(pl + 52, "/ok", 4);
		memcpy(pl + 56, "\x01\xab\xff", 3);
	}
	for (k = 0; k < sizeof(prints) / sizeof(prints[0]); k++) {
		struct fdr_event_def def = { .system = "demo",
					     .name = "ev",
					     .fields = fields,
					     .nr_fields = 9,
					     .fixed_size = 52,
					     .print_fmt = prints[k].fmt,
					     .print_args = prints[k].args };
		struct fdr_abi_event orig;
		struct fdr_buf text = { 0 }, want = { 0 }, got = { 0 };
		struct tdb_event ev;
		static struct tdb_page pg;
		const unsigned char *data[1] = { pg.data };
		uint32_t nr[1] = { 1 };
		struct tdb_file f;
		struct tdb b = { 0 };
		struct fdr_trace *t = NULL;
		struct fdr_trace_rec rec;

		cr_assert_eq(fdr_event_def_to_abi(&def, &orig), 0);
		orig.id = 1000;
		orig.state = FDR_EVENT_READY;
		cr_assert_eq(fdr_format_event_file(&orig, &text), 0);
		ev.system = "demo";
		ev.format = text.data;
		tdb_page_begin(&pg, PAGE, 8, 5);
		tdb_page_rec(&pg, 0, pl, 60, 0);
		tdb_page_end(&pg, 0, 0, 0);
		memset(&f, 0, sizeof(f));
		f.version = 7;
		f.page_size = PAGE;
		f.commit_size = 8;
		f.events = &ev;
		f.nr_events = 1;
		f.nr_cpus = 1;
		f.cpu_data = data;
		f.nr_pages = nr;
		cr_assert_eq(tdb_build(&b, &f), 0);
		cr_assert_eq(td_open_bytes(b.p, b.len, &t, NULL), 0);
		cr_assert_eq(fdr_trace_next(t, &rec), 1);
		cr_assert_not_null(rec.ev);
		cr_expect_eq(rec.ev->nr_fields, 9);
		cr_expect_eq(rec.ev->payload_size, orig.payload_size);
		cr_assert_eq(fdr_format_event_line(&orig, pl, 60, &want), 0);
		cr_assert_eq(fdr_format_event_line(rec.ev, rec.payload, rec.len, &got), 0);
		cr_expect_str_eq(got.data, want.data, "print %zu:\n%s", k, text.data);
		cr_expect_str_eq(rec.ev->print_fmt,
				 orig.print_fmt[0] ? orig.print_fmt : rec.ev->print_fmt);
		fdr_trace_close(t);
		fdr_buf_free(&text);
		fdr_buf_free(&want);
		fdr_buf_free(&got);
		free(b.p);
	}
}
