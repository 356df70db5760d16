/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * filter-test-event.h - the events the filter tests, fuzz target and bench
 * compile against, and payloads for them. Header-only, no fdr library needed.
 *
 * flt:ev payload (after the 8-byte common header), fixed part 80 bytes:
 *   char prev_comm[16] @8    int prev_pid @24       int status @28
 *   __data_loc char[] path @32    __data_loc unsigned char[] blob @36
 *   u16 code @40   s8 small @42   bool flag @43   u32 mask @44
 *   u64 big @48    s64 sbig @56   u32 target_cpu @64
 *   "int" odd @68 (size 3: no compare works on it)
 *   s16 s16f @72   u8 u8f @74     then the dynamic strings from @80
 * ftrace:print: unsigned long ip @8, char buf[] @16 to the record's end.
 */
#ifndef FDR_FILTER_TEST_EVENT_H
#define FDR_FILTER_TEST_EVENT_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "common/filter.h"

#define FT_UNUSED __attribute__((unused))
#define FT_FIXED 80

static FT_UNUSED void ft_field(struct fdr_abi_event *e, const char *name, const char *type,
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

static FT_UNUSED void ft_event(struct fdr_abi_event *e)
{
	memset(e, 0, sizeof(*e));
	e->state = FDR_EVENT_READY;
	e->id = 1000;
	e->layout_hash = 0x1234;
	snprintf(e->system, sizeof(e->system), "flt");
	snprintf(e->name, sizeof(e->name), "ev");
	ft_field(e, "prev_comm", "char", 8, 16, FDR_KIND_CHARS, 0);
	ft_field(e, "prev_pid", "int", 24, 4, FDR_KIND_INT, 1);
	ft_field(e, "status", "int", 28, 4, FDR_KIND_INT, 1);
	ft_field(e, "path", "__data_loc char[]", 32, 4, FDR_KIND_STRING, 0);
	ft_field(e, "blob", "__data_loc unsigned char[]", 36, 4, FDR_KIND_BYTES, 0);
	ft_field(e, "code", "u16", 40, 2, FDR_KIND_INT, 0);
	ft_field(e, "small", "s8", 42, 1, FDR_KIND_INT, 1);
	ft_field(e, "flag", "bool", 43, 1, FDR_KIND_BOOL, 0);
	ft_field(e, "mask", "u32", 44, 4, FDR_KIND_INT, 0);
	ft_field(e, "big", "u64", 48, 8, FDR_KIND_INT, 0);
	ft_field(e, "sbig", "s64", 56, 8, FDR_KIND_INT, 1);
	ft_field(e, "target_cpu", "u32", 64, 4, FDR_KIND_INT, 0);
	ft_field(e, "odd", "int", 68, 3, FDR_KIND_INT, 1);
	ft_field(e, "s16f", "s16", 72, 2, FDR_KIND_INT, 1);
	ft_field(e, "u8f", "u8", 74, 1, FDR_KIND_INT, 0);
	e->payload_size = FT_FIXED;
}

static FT_UNUSED void ft_print_event(struct fdr_abi_event *e)
{
	memset(e, 0, sizeof(*e));
	e->state = FDR_EVENT_READY;
	e->id = FDR_EVENT_ID_PRINT;
	snprintf(e->system, sizeof(e->system), "ftrace");
	snprintf(e->name, sizeof(e->name), "print");
	ft_field(e, "ip", "unsigned long", 8, 8, FDR_KIND_ULONG_IP, 0);
	ft_field(e, "buf", "char", 16, 0, FDR_KIND_TAIL_CHARS, 0);
	e->payload_size = 16;
}

struct ft_vals {
	uint16_t type;
	uint8_t flags, preempt;
	int32_t pid;
	const char *comm; /* up to 16 bytes, NUL-padded */
	int32_t prev_pid, status;
	const char *path, *blob;
	uint16_t code;
	int8_t small;
	uint8_t flag;
	uint32_t mask;
	uint64_t big;
	int64_t sbig;
	uint32_t target_cpu;
	int16_t s16f;
	uint8_t u8f;
};

static FT_UNUSED const struct ft_vals ft_defaults = {
	.type = 1000,
	.flags = 1,
	.preempt = 2,
	.pid = 1234,
	.comm = "bash",
	.prev_pid = 42,
	.status = 200,
	.path = "/usr/bin/ls",
	.blob = "ab",
	.code = 404,
	.small = -5,
	.flag = 1,
	.mask = 0x0f,
	.big = UINT64_MAX,
	.sbig = -1,
	.target_cpu = 3,
	.s16f = -300,
	.u8f = 200,
};

/* Write a flt:ev record into @p (at least 80 + both strings + 2 bytes); returns its length. */
static FT_UNUSED uint32_t ft_payload(unsigned char *p, const struct ft_vals *v)
{
	size_t cl = strlen(v->comm), sl = strlen(v->path) + 1, bl = strlen(v->blob);
	uint32_t loc;

	memset(p, 0, FT_FIXED);
	memcpy(p, &v->type, 2);
	p[2] = v->flags;
	p[3] = v->preempt;
	memcpy(p + 4, &v->pid, 4);
	memcpy(p + 8, v->comm, cl < 16 ? cl : 16);
	memcpy(p + 24, &v->prev_pid, 4);
	memcpy(p + 28, &v->status, 4);
	loc = (uint32_t)sl << 16 | FT_FIXED;
	memcpy(p + 32, &loc, 4);
	memcpy(p + FT_FIXED, v->path, sl);
	loc = (uint32_t)bl << 16 | (uint32_t)(FT_FIXED + sl);
	memcpy(p + 36, &loc, 4);
	memcpy(p + FT_FIXED + sl, v->blob, bl);
	memcpy(p + 40, &v->code, 2);
	memcpy(p + 42, &v->small, 1);
	p[43] = v->flag;
	memcpy(p + 44, &v->mask, 4);
	memcpy(p + 48, &v->big, 8);
	memcpy(p + 56, &v->sbig, 8);
	memcpy(p + 64, &v->target_cpu, 4);
	memcpy(p + 72, &v->s16f, 2);
	p[74] = v->u8f;
	return (uint32_t)(FT_FIXED + sl + bl);
}

#endif /* FDR_FILTER_TEST_EVENT_H */
