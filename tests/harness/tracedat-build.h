/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * tracedat-build.h - build small trace.dat images (trace-cmd's versions 6 and 7)
 * in memory, for the reader's unit tests and the fuzz target's seeds.
 *
 * Pages are built record by record in the kernel's ring-buffer page format;
 * the file writer lays them out as trace-cmd does (formats, cmdlines, options,
 * CPU data at page-aligned offsets). Only what the tests need: one buffer, the
 * top one.
 */
#ifndef FDR_TRACEDAT_BUILD_H
#define FDR_TRACEDAT_BUILD_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define TDB_UNUSED __attribute__((unused))

struct tdb {
	unsigned char *p;
	size_t len, cap;
	int oom;
};

static TDB_UNUSED void tdb_put(struct tdb *b, const void *d, size_t n)
{
	if (b->len + n > b->cap) {
		size_t cap = (b->len + n) * 2 + 256;
		unsigned char *np = realloc(b->p, cap);

		if (!np) {
			b->oom = 1;
			return;
		}
		b->p = np;
		b->cap = cap;
	}
	memcpy(b->p + b->len, d, n);
	b->len += n;
}

static TDB_UNUSED void tdb_u16(struct tdb *b, uint16_t v)
{
	tdb_put(b, &v, 2);
}

static TDB_UNUSED void tdb_u32(struct tdb *b, uint32_t v)
{
	tdb_put(b, &v, 4);
}

static TDB_UNUSED void tdb_u64(struct tdb *b, uint64_t v)
{
	tdb_put(b, &v, 8);
}

static TDB_UNUSED void tdb_str(struct tdb *b, const char *s)
{
	tdb_put(b, s, strlen(s) + 1);
}

static TDB_UNUSED void tdb_pad_to(struct tdb *b, size_t align)
{
	static const unsigned char zero[64];

	while (b->len % align) {
		size_t n = align - b->len % align;

		tdb_put(b, zero, n < sizeof(zero) ? n : sizeof(zero));
	}
}

static TDB_UNUSED void tdb_set64(struct tdb *b, size_t at, uint64_t v)
{
	if (!b->oom && at + 8 <= b->len)
		memcpy(b->p + at, &v, 8);
}

/* ---- pages ---------------------------------------------------------------------------- */

struct tdb_page {
	unsigned char data[65536];
	uint32_t size; /* page size */
	uint32_t commit_size; /* 4 or 8 */
	uint32_t pos; /* next record, from the page start */
};

static TDB_UNUSED void tdb_page_begin(struct tdb_page *pg, uint32_t size, uint32_t commit_size,
				      uint64_t ts)
{
	memset(pg->data, 0, sizeof(pg->data));
	pg->size = size;
	pg->commit_size = commit_size;
	memcpy(pg->data, &ts, 8);
	pg->pos = 8 + commit_size;
}

static TDB_UNUSED void tdb_page_word(struct tdb_page *pg, uint32_t w)
{
	memcpy(pg->data + pg->pos, &w, 4);
	pg->pos += 4;
}

/* A data record, @len bytes (a multiple of 4), @delta from the previous one. */
static TDB_UNUSED void tdb_page_rec(struct tdb_page *pg, uint32_t delta, const void *payload,
				    uint32_t len, int force_len_word)
{
	if (len <= 112 && !force_len_word) {
		tdb_page_word(pg, len / 4 | delta << 5);
	} else {
		tdb_page_word(pg, delta << 5);
		tdb_page_word(pg, len + 4);
	}
	memcpy(pg->data + pg->pos, payload, len);
	pg->pos += len;
}

static TDB_UNUSED void tdb_page_extend(struct tdb_page *pg, uint64_t delta)
{
	tdb_page_word(pg, 30u | (uint32_t)(delta & ((1u << 27) - 1)) << 5);
	tdb_page_word(pg, (uint32_t)(delta >> 27));
}

static TDB_UNUSED void tdb_page_abs(struct tdb_page *pg, uint64_t ts)
{
	tdb_page_word(pg, 31u | (uint32_t)(ts & ((1u << 27) - 1)) << 5);
	tdb_page_word(pg, (uint32_t)(ts >> 27));
}

/* Padding of @len bytes in all (header included, >= 8), with a time delta. */
static TDB_UNUSED void tdb_page_padding(struct tdb_page *pg, uint32_t delta, uint32_t len)
{
	tdb_page_word(pg, 29u | delta << 5);
	tdb_page_word(pg, len - 4);
	pg->pos += len - 8;
}

/* Close the page: commit = records' bytes | flags; @lost stored when @store. */
static TDB_UNUSED void tdb_page_end(struct tdb_page *pg, int missed, int store, uint64_t lost)
{
	uint64_t commit = pg->pos - 8 - pg->commit_size;

	if (missed)
		commit |= 1ull << 31;
	if (missed && store) {
		commit |= 1ull << 30;
		memcpy(pg->data + pg->pos, &lost, pg->commit_size);
	}
	memcpy(pg->data + 8, &commit, pg->commit_size);
}

/* A record payload: the common header, then @n u32 values. */
static TDB_UNUSED uint32_t tdb_payload(unsigned char *out, uint16_t type, int32_t pid,
				       const uint32_t *vals, uint32_t n)
{
	uint8_t zero = 0;

	memcpy(out, &type, 2);
	memcpy(out + 2, &zero, 1);
	memcpy(out + 3, &zero, 1);
	memcpy(out + 4, &pid, 4);
	memcpy(out + 8, vals, n * 4);
	return 8 + n * 4;
}

/* ---- files ------------------------------------------------------------------------------ */

struct tdb_event {
	const char *system; /* "ftrace": the ftrace section */
	const char *format; /* the format file's text */
};

struct tdb_file {
	int version; /* 6 or 7 */
	uint32_t page_size;
	uint32_t commit_size; /* header_page's commit size */
	const struct tdb_event *events;
	size_t nr_events;
	const char *cmdlines; /* saved_cmdlines text */
	const char *clock; /* TRACECLOCK text, e.g. "[local] global", or NULL */
	uint32_t nr_cpus;
	/* per CPU: its pages, nr_pages[cpu] of them, each page_size bytes */
	const unsigned char *const *cpu_data;
	const uint32_t *nr_pages;
	/* v7 only: a second buffer (an instance) of that name when not NULL */
	const char *buf2_name;
	uint32_t buf2_page_size, buf2_nr_cpus;
	const unsigned char *const *buf2_cpu_data;
	const uint32_t *buf2_nr_pages;
};

static TDB_UNUSED void tdb_header_page(struct tdb *b, uint32_t commit_size, uint32_t page_size)
{
	char hp[512];
	int n = snprintf(hp, sizeof(hp),
			 "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
			 "\tfield: local_t commit;\toffset:8;\tsize:%u;\tsigned:1;\n"
			 "\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
			 "\tfield: char data;\toffset:%u;\tsize:%u;\tsigned:0;\n",
			 commit_size, 8 + commit_size, page_size - 8 - commit_size);
	static const char he[] = "# compressed entry header\n\ttype_len    :    5 bits\n";

	tdb_put(b, "header_page", 12);
	tdb_u64(b, (uint64_t)n);
	tdb_put(b, hp, (size_t)n);
	tdb_put(b, "header_event", 13);
	tdb_u64(b, sizeof(he) - 1);
	tdb_put(b, he, sizeof(he) - 1);
}

static TDB_UNUSED void tdb_formats(struct tdb *b, const struct tdb_file *f, int ftrace)
{
	size_t i, count = 0;

	for (i = 0; i < f->nr_events; i++)
		count += !strcmp(f->events[i].system, "ftrace") == !!ftrace;
	if (ftrace) {
		tdb_u32(b, (uint32_t)count);
	} else {
		tdb_u32(b, (uint32_t)count); /* one system per event: simple and valid */
	}
	for (i = 0; i < f->nr_events; i++) {
		if ((!strcmp(f->events[i].system, "ftrace")) != !!ftrace)
			continue;
		if (!ftrace) {
			tdb_str(b, f->events[i].system);
			tdb_u32(b, 1);
		}
		tdb_u64(b, strlen(f->events[i].format));
		tdb_put(b, f->events[i].format, strlen(f->events[i].format));
	}
}

static TDB_UNUSED void tdb_cmdlines(struct tdb *b, const struct tdb_file *f)
{
	const char *c = f->cmdlines ? f->cmdlines : "";

	tdb_u64(b, strlen(c));
	tdb_put(b, c, strlen(c));
}

/* The CPU data at page-aligned offsets; @table_at: where each (offset, size) goes. */
static TDB_UNUSED void tdb_cpu_data(struct tdb *b, const struct tdb_file *f, const size_t *table_at)
{
	uint32_t c;

	for (c = 0; c < f->nr_cpus; c++) {
		uint64_t size = (uint64_t)f->nr_pages[c] * f->page_size;

		tdb_pad_to(b, f->page_size);
		tdb_set64(b, table_at[c], b->len);
		tdb_set64(b, table_at[c] + 8, size);
		tdb_put(b, f->cpu_data[c], (size_t)size);
	}
}

static TDB_UNUSED void tdb_header(struct tdb *b, const struct tdb_file *f)
{
	tdb_put(b, "\027\010\104tracing", 10);
	tdb_str(b, f->version == 6 ? "6" : "7");
	tdb_put(b, "\0\010", 2); /* little-endian, 8-byte long */
	tdb_u32(b, f->page_size);
}

static TDB_UNUSED int tdb_build_v6(struct tdb *b, const struct tdb_file *f)
{
	size_t table[64];
	uint32_t c;

	if (f->nr_cpus > 64)
		return -1;
	tdb_header(b, f);
	tdb_header_page(b, f->commit_size, f->page_size);
	tdb_formats(b, f, 1);
	tdb_formats(b, f, 0);
	tdb_u32(b, 0); /* kallsyms */
	tdb_u32(b, 0); /* printk */
	tdb_cmdlines(b, f);
	tdb_u32(b, f->nr_cpus);
	if (f->clock) {
		tdb_put(b, "options  ", 10);
		tdb_u16(b, 4); /* TRACECLOCK: the text follows the CPU table in v6 */
		tdb_u32(b, 0);
		tdb_u16(b, 0);
	}
	tdb_put(b, "flyrecord", 10);
	for (c = 0; c < f->nr_cpus; c++) {
		table[c] = b->len;
		tdb_u64(b, 0);
		tdb_u64(b, 0);
	}
	if (f->clock) {
		tdb_u64(b, strlen(f->clock));
		tdb_put(b, f->clock, strlen(f->clock));
	}
	tdb_cpu_data(b, f, table);
	return b->oom ? -1 : 0;
}

/* A v7 section header; returns where its size goes. */
static TDB_UNUSED size_t tdb_section(struct tdb *b, uint16_t id)
{
	size_t at;

	tdb_u16(b, id);
	tdb_u16(b, 0);
	tdb_u32(b, 0);
	at = b->len;
	tdb_u64(b, 0);
	return at;
}

static TDB_UNUSED void tdb_section_end(struct tdb *b, size_t size_at)
{
	tdb_set64(b, size_at, b->len - size_at - 8);
}

static TDB_UNUSED int tdb_build_v7(struct tdb *b, const struct tdb_file *f)
{
	size_t opt_at, sec[4], sec_at[4], table[64], table2[64], sz, buf_sec, buf2_sec = 0;
	uint32_t c;
	int i;

	if (f->nr_cpus > 64)
		return -1;
	tdb_header(b, f);
	tdb_str(b, "none");
	tdb_str(b, "");
	opt_at = b->len;
	tdb_u64(b, 0);
	/* the sections: header info (16), ftrace (17), events (18), cmdlines (21) */
	sec[0] = b->len;
	sz = tdb_section(b, 16);
	tdb_header_page(b, f->commit_size, f->page_size);
	tdb_section_end(b, sz);
	sec[1] = b->len;
	sz = tdb_section(b, 17);
	tdb_formats(b, f, 1);
	tdb_section_end(b, sz);
	sec[2] = b->len;
	sz = tdb_section(b, 18);
	tdb_formats(b, f, 0);
	tdb_section_end(b, sz);
	sec[3] = b->len;
	sz = tdb_section(b, 21);
	tdb_cmdlines(b, f);
	tdb_section_end(b, sz);
	/* the options section */
	tdb_set64(b, opt_at, b->len);
	sz = tdb_section(b, 0);
	{
		static const uint16_t ids[4] = { 16, 17, 18, 21 };

		for (i = 0; i < 4; i++) {
			tdb_u16(b, ids[i]);
			tdb_u32(b, 8);
			tdb_u64(b, sec[i]);
		}
	}
	if (f->clock) {
		tdb_u16(b, 4);
		tdb_u32(b, (uint32_t)strlen(f->clock) + 1);
		tdb_str(b, f->clock);
	}
	/* BUFFER: offset, "", clock, page size, CPUs, { cpu, offset, size } */
	tdb_u16(b, 3);
	tdb_u32(b, 8 + 1 + 6 + 4 + 4 + 20 * f->nr_cpus);
	buf_sec = b->len;
	tdb_u64(b, 0);
	tdb_str(b, "");
	tdb_str(b, "local");
	tdb_u32(b, f->page_size);
	tdb_u32(b, f->nr_cpus);
	for (c = 0; c < f->nr_cpus; c++) {
		tdb_u32(b, c);
		table[c] = b->len;
		tdb_u64(b, 0);
		tdb_u64(b, 0);
	}
	if (f->buf2_name) {
		if (f->buf2_nr_cpus > 64)
			return -1;
		tdb_u16(b, 3);
		tdb_u32(b, (uint32_t)(8 + strlen(f->buf2_name) + 1 + 5 + 4 + 4 +
				      20 * f->buf2_nr_cpus));
		buf2_sec = b->len;
		tdb_u64(b, 0);
		tdb_str(b, f->buf2_name);
		tdb_str(b, "mono");
		tdb_u32(b, f->buf2_page_size);
		tdb_u32(b, f->buf2_nr_cpus);
		for (c = 0; c < f->buf2_nr_cpus; c++) {
			tdb_u32(b, c);
			table2[c] = b->len;
			tdb_u64(b, 0);
			tdb_u64(b, 0);
		}
	}
	tdb_u16(b, 0); /* DONE: no next options section */
	tdb_u32(b, 8);
	tdb_u64(b, 0);
	tdb_section_end(b, sz);
	/* the buffer's section, then its pages */
	tdb_set64(b, buf_sec, b->len);
	sec_at[0] = tdb_section(b, 3);
	tdb_cpu_data(b, f, table);
	tdb_section_end(b, sec_at[0]);
	if (f->buf2_name) {
		struct tdb_file f2 = *f;

		f2.page_size = f->buf2_page_size;
		f2.nr_cpus = f->buf2_nr_cpus;
		f2.cpu_data = f->buf2_cpu_data;
		f2.nr_pages = f->buf2_nr_pages;
		tdb_set64(b, buf2_sec, b->len);
		sec_at[1] = tdb_section(b, 3);
		tdb_cpu_data(b, &f2, table2);
		tdb_section_end(b, sec_at[1]);
	}
	return b->oom ? -1 : 0;
}

static TDB_UNUSED int tdb_build(struct tdb *b, const struct tdb_file *f)
{
	return f->version == 6 ? tdb_build_v6(b, f) : tdb_build_v7(b, f);
}

/* The events the tests and seeds use: ids 300 (one u32 "val") and 301 (a string). */
#define TDB_EV_VAL_ID 300
#define TDB_EV_STR_ID 301
static const struct tdb_event tdb_test_events[] TDB_UNUSED = {
	{ "test", "name: val\nID: 300\nformat:\n"
		  "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
		  "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
		  "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
		  "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
		  "\tfield:unsigned int val;\toffset:8;\tsize:4;\tsigned:0;\n\n"
		  "print fmt: \"val=%u\", REC->val\n" },
	{ "test", "name: str\nID: 301\nformat:\n"
		  "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
		  "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
		  "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
		  "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
		  "\tfield:__data_loc char[] msg;\toffset:8;\tsize:4;\tsigned:0;\n"
		  "\tfield:char tag[4];\toffset:12;\tsize:4;\tsigned:0;\n\n"
		  "print fmt: \"msg=%s tag=%s\", __get_str(msg), REC->tag\n" },
	{ "ftrace", "name: print\nID: 5\nformat:\n"
		    "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
		    "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
		    "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
		    "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
		    "\tfield:unsigned long ip;\toffset:8;\tsize:8;\tsigned:0;\n"
		    "\tfield:char buf[];\toffset:16;\tsize:0;\tsigned:1;\n\n"
		    "print fmt: \"%ps: %s\", (void *)REC->ip, REC->buf\n" },
};

#endif /* FDR_TRACEDAT_BUILD_H */
