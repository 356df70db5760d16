/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fuzz.h - shared by the fuzz targets (fuzz-*.c) and replay.c.
 *
 * Each target defines LLVMFuzzerTestOneInput(), may define LLVMFuzzerInitialize(),
 * and defines fdr_fuzz_write_seeds(), which writes its hand-made seed inputs
 * (`fdr-fuzz-replay-X --write-seeds DIR`). Built with clang and -DFDR_FUZZ=ON the
 * targets link libFuzzer's main; under any compiler they also link replay.c,
 * which runs every file of a corpus directory once, as a CTest.
 */
#ifndef FDR_FUZZ_H
#define FDR_FUZZ_H

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fdr/fdr-ctl.h"
#include "fdr/fdr-read.h"
/* fdr_session_register_event(): a libfdr internal */
#include "core/core-local.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);
int fdr_fuzz_write_seeds(const char *dir);

#define FZ_UNUSED __attribute__((unused))

/* Write one seed file DIR/NAME. */
static FZ_UNUSED int fz_write_file(const char *dir, const char *name, const void *p, size_t n)
{
	char path[PATH_MAX];
	FILE *f;
	size_t w;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (!f)
		return -errno;
	w = fwrite(p, 1, n, f);
	if (fclose(f) || w != n)
		return -EIO;
	return 0;
}

static char fz_root[PATH_MAX];

static FZ_UNUSED int fz_rm(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)type;
	(void)ftw;
	remove(path);
	return 0;
}

static FZ_UNUSED void fz_cleanup(void)
{
	if (fz_root[0])
		nftw(fz_root, fz_rm, 16, FTW_DEPTH | FTW_PHYS);
	fz_root[0] = 0;
}

/*
 * A session in a private temporary root, removed at exit. Exits the process on
 * failure: a target without its session cannot run.
 */
static FZ_UNUSED struct fdr_session *fz_session_create(const struct fdr_session_opts *o)
{
	struct fdr_session *s = NULL;
	char dir[PATH_MAX + 8];
	int ret;

	snprintf(fz_root, sizeof(fz_root), "/dev/shm/fdr-fuzz.XXXXXX");
	if (!mkdtemp(fz_root)) {
		const char *tmp = getenv("TMPDIR");

		snprintf(fz_root, sizeof(fz_root), "%s/fdr-fuzz.XXXXXX",
			 tmp && *tmp ? tmp : "/tmp");
		if (!mkdtemp(fz_root)) {
			perror("mkdtemp");
			exit(2);
		}
	}
	atexit(fz_cleanup);
	snprintf(dir, sizeof(dir), "%s/t", fz_root);
	ret = fdr_session_create(dir, o, &s);
	if (ret) {
		fprintf(stderr, "fuzz: cannot create a session: %s\n", strerror(-ret));
		exit(2);
	}
	return s;
}

/* Add an event to the registry (as a process registering it would). */
static FZ_UNUSED uint32_t fz_register(struct fdr_session *s, const struct fdr_abi_event *tmpl)
{
	uint32_t slot = 0;

	if (fdr_session_lock(s) == 0) {
		if (fdr_session_register_event(s, tmpl, &slot))
			slot = 0;
		fdr_session_unlock(s);
	}
	return fdr_session_control(s)->events[slot].id;
}

/*
 * Event templates shared by the targets: every field kind, with the default
 * print and with a custom print format.
 */
static FZ_UNUSED void fz_field(struct fdr_abi_event *e, const char *name, const char *type,
			       uint16_t off, uint16_t size, uint8_t kind, uint8_t is_signed)
{
	struct fdr_abi_field *f = &e->fields[e->nr_fields++];

	snprintf(f->name, sizeof(f->name), "%s", name);
	snprintf(f->type, sizeof(f->type), "%s", type);
	f->offset = off;
	f->size = size;
	f->kind = kind;
	f->is_signed = is_signed;
}

/*
 * fz_event_all: every kind of field. Payload layout (after the 8-byte common
 * header): s8 a @8, u16 b @10, int c @12, u64 d @16, bool e @24, char f[8] @25,
 * __data_loc char[] g @36 (string), __data_loc u8[] h @40 (bytes); fixed part 48.
 */
static FZ_UNUSED void fz_event_all(struct fdr_abi_event *e, const char *name, int custom)
{
	memset(e, 0, sizeof(*e));
	snprintf(e->system, sizeof(e->system), "fz");
	snprintf(e->name, sizeof(e->name), "%s", name);
	fz_field(e, "a", "s8", 8, 1, FDR_KIND_INT, 1);
	fz_field(e, "b", "u16", 10, 2, FDR_KIND_INT, 0);
	fz_field(e, "c", "int", 12, 4, FDR_KIND_INT, 1);
	fz_field(e, "d", "u64", 16, 8, FDR_KIND_INT, 0);
	fz_field(e, "e", "bool", 24, 1, FDR_KIND_BOOL, 0);
	fz_field(e, "f", "char", 25, 8, FDR_KIND_CHARS, 0);
	fz_field(e, "g", "__data_loc char[]", 36, 4, FDR_KIND_STRING, 0);
	fz_field(e, "h", "__data_loc unsigned char[]", 40, 4, FDR_KIND_BYTES, 0);
	e->payload_size = 48;
	if (custom) {
		static const uint8_t args[] = { 0, 1, 2, 3, 4, 5, 6, 7, 3, 2 };

		snprintf(e->print_fmt, sizeof(e->print_fmt), "%s",
			 "a=%d b=%u c=%5d d=%llx e=%d f=%s g=%-8s h=%s p=%p c=%c %% %q end");
		memcpy(e->print_args, args, sizeof(args));
		e->nr_print_args = sizeof(args);
	}
	e->layout_hash = custom ? 2 : 1;
	e->state = FDR_EVENT_READY;
}

/* A payload for fz_event_all: @str and @bytes as its dynamic fields. Returns its length. */
static FZ_UNUSED uint32_t fz_payload_all(unsigned char *p, uint16_t type, int32_t pid,
					 const char *str, const unsigned char *bytes,
					 uint16_t nbytes)
{
	uint16_t slen = (uint16_t)(strlen(str) + 1);
	uint32_t loc;
	int8_t a = -5;
	uint16_t b = 65000;
	int32_t c = -123456;
	uint64_t d = 0x1122334455667788ull;

	memset(p, 0, 48);
	memcpy(p, &type, 2);
	memcpy(p + 4, &pid, 4);
	memcpy(p + 8, &a, 1);
	memcpy(p + 10, &b, 2);
	memcpy(p + 12, &c, 4);
	memcpy(p + 16, &d, 8);
	p[24] = 1;
	memcpy(p + 25, "chars", 6);
	loc = (uint32_t)slen << 16 | 48;
	memcpy(p + 36, &loc, 4);
	memcpy(p + 48, str, slen);
	loc = (uint32_t)nbytes << 16 | (48u + slen);
	memcpy(p + 40, &loc, 4);
	memcpy(p + 48 + slen, bytes, nbytes);
	return 48u + slen + nbytes;
}

#endif /* FDR_FUZZ_H */
