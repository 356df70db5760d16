// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * export-gen [ROUNDS] - write records that exercise the exporters into the
 * session $FDR_SESSION (in $FDR_ROOT) or $FDR_DIR: events whose names are CTF
 * keywords or hold bytes CTF identifiers forbid, every field kind, integers at
 * their limits and beyond 2^53, and strings with quotes, backslashes, control
 * characters, valid and invalid UTF-8. Each round writes each event once.
 *
 * The events are registered straight into the session's registry
 * (fdr_session_register_event), which takes any name; FDR_EVENT() would allow
 * C identifiers only.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <unistd.h>
#include <sys/syscall.h>

#include "fdr/fdr.h"
#include "fdr/fdr-ctl.h"
#include "fdr/fdr-read.h"
/* fdr_session_register_event(): a libfdr internal */
#include "core/core-local.h"

/*
 * gen:worker, a static event written by threads other than the main one, so
 * that the exports' process and thread ids differ (Perfetto's pid is the
 * thread's process from saved_tgids, its tid the thread).
 */
/* clang-format off */
FDR_EVENT(gen, worker,
	FDR_PROTO(uint32_t worker, uint32_t round),
	FDR_ARGS(worker, round),
	FDR_FIELDS(
		fdr_field_int(uint32_t, worker, worker)
		fdr_field_int(uint32_t, round, round)))
/* clang-format on */

#define NR_WORKERS 2

struct worker_arg {
	uint32_t id;
	unsigned long rounds;
};

static void *worker_main(void *p)
{
	const struct worker_arg *a = p;
	unsigned long r;

	for (r = 0; r < a->rounds; r++)
		fdr_gen_worker(a->id, (uint32_t)r);
	return NULL;
}

struct gen_field {
	const char *name;
	uint8_t kind;
	uint8_t size;
	uint8_t is_signed;
	const char *type;
};

struct gen_event {
	const char *name;
	const struct gen_field *fields;
	uint32_t nr;
	uint32_t id; /* filled at registration */
};

static const struct gen_field kw_fields[] = {
	{ "align", FDR_KIND_INT, 1, 1, "s8" },
	{ "struct", FDR_KIND_INT, 1, 0, "u8" },
	{ "x-y", FDR_KIND_INT, 2, 1, "s16" },
	{ "u16", FDR_KIND_INT, 2, 0, "u16" },
	{ "s32", FDR_KIND_INT, 4, 1, "s32" },
	{ "u32", FDR_KIND_INT, 4, 0, "u32" },
	{ "s64", FDR_KIND_INT, 8, 1, "s64" },
	{ "u64", FDR_KIND_INT, 8, 0, "u64" },
	{ "flag", FDR_KIND_BOOL, 1, 0, "bool" },
	{ "chars", FDR_KIND_CHARS, 16, 0, "char" },
	{ "str", FDR_KIND_STRING, 4, 0, "__data_loc char[]" },
	{ "blob", FDR_KIND_BYTES, 4, 0, "__data_loc unsigned char[]" },
	{ "_blob_length", FDR_KIND_INT, 4, 0, "u32" },
	{ "ip", FDR_KIND_ULONG_IP, 8, 0, "unsigned long" },
};

static const struct gen_field odd_fields[] = {
	{ "a-b", FDR_KIND_INT, 4, 0, "u32" },
	{ "a.b", FDR_KIND_INT, 4, 0, "u32" },
	{ "9lives", FDR_KIND_INT, 4, 1, "s32" },
	{ "\xc3\xa9t\xc3\xa9", FDR_KIND_STRING, 4, 0, "__data_loc char[]" },
};

static const struct gen_field op_fields[] = {
	{ "depth", FDR_KIND_INT, 4, 0, "u32" },
};

static struct gen_event events[] = {
	{ "event", kw_fields, sizeof(kw_fields) / sizeof(kw_fields[0]), 0 },
	{ "odd \"name\" \xc3\xa9", odd_fields, sizeof(odd_fields) / sizeof(odd_fields[0]), 0 },
	{ "op_begin", op_fields, 1, 0 },
	{ "op_end", op_fields, 1, 0 },
	{ "nofields", NULL, 0, 0 },
};
#define NR_EVENTS (sizeof(events) / sizeof(events[0]))

static const char *const strings[] = {
	"plain",
	"quote \" backslash \\ newline \n tab \t end",
	"invalid \xff\xfe utf-8 \xc3",
	"control \x01\x1f del \x7f",
	"utf-8 \xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80",
	"",
};
#define NR_STRINGS (sizeof(strings) / sizeof(strings[0]))

static int gen_register(struct fdr_session *s, struct gen_event *g, uint64_t hash)
{
	struct fdr_abi_event e;
	uint32_t i, off = 8, slot;
	int ret;

	memset(&e, 0, sizeof(e));
	snprintf(e.system, sizeof(e.system), "gen");
	snprintf(e.name, sizeof(e.name), "%s", g->name);
	e.nr_fields = g->nr;
	e.layout_hash = hash;
	for (i = 0; i < g->nr; i++) {
		struct fdr_abi_field *f = &e.fields[i];

		snprintf(f->name, sizeof(f->name), "%s", g->fields[i].name);
		snprintf(f->type, sizeof(f->type), "%s", g->fields[i].type);
		f->kind = g->fields[i].kind;
		f->size = g->fields[i].size;
		f->is_signed = g->fields[i].is_signed;
		f->offset = (uint16_t)off;
		off += f->size;
	}
	e.payload_size = off;
	ret = fdr_session_lock(s);
	if (ret)
		return ret;
	ret = fdr_session_register_event(s, &e, &slot);
	if (!ret)
		g->id = fdr_session_control(s)->events[slot].id;
	fdr_session_unlock(s);
	return ret;
}

/* Write one record of @g for round @r. */
static int gen_write(struct fdr_session *s, const struct gen_event *g, uint32_t r)
{
	unsigned char p[FDR_MAX_RECORD];
	struct fdr_common c = { 0 };
	uint32_t i, off = 8, dyn;

	for (i = 0; i < g->nr; i++)
		off += g->fields[i].size;
	dyn = off;
	c.type = (uint16_t)g->id;
	c.pid = (int32_t)syscall(SYS_gettid);
	memcpy(p, &c, sizeof(c));
	off = 8;
	for (i = 0; i < g->nr; i++) {
		const struct gen_field *f = &g->fields[i];
		const char *str = strings[(r + i) % NR_STRINGS];
		uint64_t v;
		uint32_t loc, n;

		switch (f->kind) {
		case FDR_KIND_STRING:
			n = (uint32_t)strlen(str) + 1;
			loc = n << 16 | dyn;
			memcpy(p + off, &loc, 4);
			memcpy(p + dyn, str, n);
			dyn += n;
			break;
		case FDR_KIND_BYTES:
			n = r % 5; /* 0 to 4 bytes */
			loc = n << 16 | dyn;
			memcpy(p + off, &loc, 4);
			for (v = 0; v < n; v++)
				p[dyn + v] = (unsigned char)(0xf0 + v * 7 + r);
			dyn += n;
			break;
		case FDR_KIND_CHARS:
			memset(p + off, 0, f->size);
			/* r % 3 == 2: all 16 bytes used, no NUL */
			if (r % 3 == 2)
				memcpy(p + off, "sixteen-chars-xx", 16);
			else
				snprintf((char *)p + off, f->size, "c%u \"q\"", r);
			break;
		case FDR_KIND_BOOL:
			p[off] = r & 1;
			break;
		default:
			/* limits alternate with small values */
			if (r % 2)
				v = f->is_signed ? (uint64_t)1 << (f->size * 8 - 1) : ~(uint64_t)0;
			else
				v = (uint64_t)r * 1000003u + i;
			if (f->kind == FDR_KIND_ULONG_IP)
				v = 0x7f0000001000ull + r;
			memcpy(p + off, &v, f->size); /* little end first: x86 and arm64 */
			break;
		}
		off += f->size;
	}
	return fdr_session_write(s, 0, p, dyn);
}

int main(int argc, char **argv)
{
	struct fdr_session *s;
	char dir[4096];
	unsigned long rounds = argc > 1 ? strtoul(argv[1], NULL, 10) : 12;
	uint32_t r, i;
	int ret;

	if (getenv("FDR_DIR") && *getenv("FDR_DIR"))
		snprintf(dir, sizeof(dir), "%s", getenv("FDR_DIR"));
	else if (fdr_session_default_dir(dir, sizeof(dir)))
		return 2;
	ret = fdr_session_open(dir, &s);
	if (ret) {
		fprintf(stderr, "export-gen: %s: %s\n", dir, strerror(-ret));
		return 1;
	}
	for (i = 0; i < NR_EVENTS; i++) {
		ret = gen_register(s, &events[i], 0x6e6567ull + i);
		if (ret) {
			fprintf(stderr, "export-gen: register %s: %s\n", events[i].name,
				strerror(-ret));
			return 1;
		}
	}
	for (r = 0; r < rounds; r++) {
		for (i = 0; i < NR_EVENTS; i++) {
			ret = gen_write(s, &events[i], r);
			if (ret) {
				fprintf(stderr, "export-gen: write: %s\n", strerror(-ret));
				return 1;
			}
		}
	}
	/* gen:worker from the main thread and from NR_WORKERS threads */
	{
		struct worker_arg args[NR_WORKERS + 1];
		pthread_t th[NR_WORKERS];

		for (i = 0; i <= NR_WORKERS; i++)
			args[i] = (struct worker_arg){ i, rounds };
		for (i = 0; i < NR_WORKERS; i++)
			if (pthread_create(&th[i], NULL, worker_main, &args[i + 1]))
				return 1;
		worker_main(&args[0]);
		for (i = 0; i < NR_WORKERS; i++)
			pthread_join(th[i], NULL);
	}
	fdr_session_close(s);
	return 0;
}
