// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * format-probe.c - how dynamic probe events print (struct fdr_abi_event.probe).
 *
 * The kernel prints a probe's record with the types of its arguments, not with
 * its print fmt: "(0x55d0c2a9e149) x=0 s=\"hello\" ar={7,0} c='h'", where a
 * string that could not be read shows (fault) and a return probe starts
 * "(0x<return address> <- 0x<function>)". The print fmt it shows in the format
 * file is built from the same types, for tools that parse records themselves:
 *
 *   "(%lx) x=%Ld s=\"%s\" ar={%u,%u} c='%c'", REC->__probe_ip, REC->x,
 *   __get_str(s), REC->ar[0], REC->ar[1], REC->c
 *
 * (a return probe's is "(%lx <- %lx) ...", REC->__probe_func, REC->__probe_ret_ip:
 * the other way round from its text line, as in the kernel). Both come from the
 * fields alone: sign and size, struct fdr_abi_field.print (decimal, hex, char)
 * and FDR_KIND_ARRAY's count. The fields come from shared memory: each value is
 * read through the checked accessors of format.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "read-local.h"

static uint32_t fp_nr_fields(const struct fdr_abi_event *e)
{
	return e->nr_fields < FDR_MAX_FIELDS ? e->nr_fields : FDR_MAX_FIELDS;
}

/* The first field after the probe's own: 1 (__probe_ip) or 2 (+ __probe_ret_ip) */
static uint32_t fp_first(const struct fdr_abi_event *e)
{
	return e->probe == FDR_PROBE_RETURN ? 2 : 1;
}

static const char *fp_conv(uint8_t print, unsigned elem, int is_signed)
{
	if (print == FDR_PRINT_CHAR)
		return "'%c'";
	if (print == FDR_PRINT_HEX)
		return elem == 8 ? "0x%Lx" : "0x%x";
	if (is_signed)
		return elem == 8 ? "%Ld" : "%d";
	return elem == 8 ? "%Lu" : "%u";
}

/* element bytes of an integer or array field; 0 if it does not check out */
static unsigned fp_elem(const struct fdr_abi_field *f)
{
	unsigned n = f->kind == FDR_KIND_ARRAY ? f->count : 1, e;

	if (!n || f->size % n)
		return 0;
	e = f->size / n;
	return e == 1 || e == 2 || e == 4 || e == 8 ? e : 0;
}

/**
 * fdr_probe_print_fmt - the "print fmt:" value of a probe event's format file
 * (quoted format, then its arguments; no newline). Returns 0 or -ENOMEM.
 */
int fdr_probe_print_fmt(const struct fdr_abi_event *e, struct fdr_buf *b)
{
	char name[FDR_FIELD_NAME_LEN + 1];
	uint32_t i, k, nf = fp_nr_fields(e), first = fp_first(e);
	int ret = 0;

	ret |= fdr_buf_printf(b, "\"%s", first == 2 ? "(%lx <- %lx)" : "(%lx)");
	for (i = first; i < nf; i++) {
		const struct fdr_abi_field *f = &e->fields[i];
		struct fdr_abi_field fc = *f; /* one read of the shared entry */
		unsigned elem = fp_elem(&fc);

		memcpy(name, fc.name, FDR_FIELD_NAME_LEN);
		name[FDR_FIELD_NAME_LEN] = 0;
		if (fc.kind == FDR_KIND_STRING) {
			ret |= fdr_buf_printf(b, " %s=\\\"%%s\\\"", name);
		} else if (fc.kind == FDR_KIND_ARRAY && elem) {
			ret |= fdr_buf_printf(b, " %s={", name);
			for (k = 0; k < fc.count; k++)
				ret |= fdr_buf_printf(b, "%s%s", k ? "," : "",
						      fp_conv(fc.print, elem, fc.is_signed));
			ret |= fdr_buf_add(b, "}", 1);
		} else {
			ret |= fdr_buf_printf(b, " %s=%s", name,
					      fp_conv(fc.print, elem ? elem : 8, fc.is_signed));
		}
	}
	ret |= fdr_buf_add(b, "\"", 1);
	ret |= fdr_buf_printf(b, first == 2 ? ", REC->__probe_func, REC->__probe_ret_ip" :
					      ", REC->__probe_ip");
	for (i = first; i < nf; i++) {
		struct fdr_abi_field fc = e->fields[i];

		memcpy(name, fc.name, FDR_FIELD_NAME_LEN);
		name[FDR_FIELD_NAME_LEN] = 0;
		if (fc.kind == FDR_KIND_STRING)
			ret |= fdr_buf_printf(b, ", __get_str(%s)", name);
		else if (fc.kind == FDR_KIND_ARRAY && fp_elem(&fc))
			for (k = 0; k < fc.count; k++)
				ret |= fdr_buf_printf(b, ", REC->%s[%u]", name, k);
		else
			ret |= fdr_buf_printf(b, ", REC->%s", name);
	}
	return ret ? -ENOMEM : 0;
}

/* One integer as the kernel's print_type_*() functions print it. */
static int fp_int(struct fdr_buf *b, uint64_t v, unsigned elem, int is_signed, uint8_t print)
{
	char c;

	if (elem < 8)
		v &= (1ull << (8 * elem)) - 1;
	if (print == FDR_PRINT_CHAR) {
		c = (char)v;
		return fdr_buf_add(b, "'", 1) | fdr_buf_add(b, &c, 1) | fdr_buf_add(b, "'", 1);
	}
	if (print == FDR_PRINT_HEX)
		return fdr_buf_printf(b, "0x%" PRIx64, v);
	if (is_signed) {
		int64_t s = elem == 1 ? (int8_t)v :
			    elem == 2 ? (int16_t)v :
			    elem == 4 ? (int32_t)v :
					(int64_t)v;
		return fdr_buf_printf(b, "%" PRId64, s);
	}
	return fdr_buf_printf(b, "%" PRIu64, v);
}

static uint64_t fp_load(const unsigned char *p, unsigned size)
{
	uint64_t v = 0;

	memcpy(&v, p, size); /* little-endian */
	return v;
}

/**
 * fdr_probe_format_body - a probe record's text after "NAME: ", as the kernel's
 * trace file shows it. Values outside the record print "<bad>". Returns 0 or
 * -ENOMEM.
 */
int fdr_probe_format_body(const struct fdr_abi_event *e, const unsigned char *p, uint32_t len,
			  struct fdr_buf *b)
{
	uint32_t i, k, nf = fp_nr_fields(e), first = fp_first(e);
	uint64_t a0 = 0, a1 = 0;
	int ret = 0;

	if (len >= 16)
		memcpy(&a0, p + 8, 8);
	if (len >= 24)
		memcpy(&a1, p + 16, 8);
	if (first == 2)
		ret |= fdr_buf_printf(b, "(0x%" PRIx64 " <- 0x%" PRIx64 ")", a1, a0);
	else
		ret |= fdr_buf_printf(b, "(0x%" PRIx64 ")", a0);
	for (i = first; i < nf; i++) {
		struct fdr_abi_field fc = e->fields[i]; /* one read of the shared entry */
		unsigned elem = fp_elem(&fc);

		ret |= fdr_buf_add(b, " ", 1);
		ret |= fdr_buf_add(b, fc.name, strnlen(fc.name, FDR_FIELD_NAME_LEN));
		ret |= fdr_buf_add(b, "=", 1);
		if (fc.kind == FDR_KIND_STRING) {
			const unsigned char *s;
			uint32_t n, loc;

			if ((uint32_t)fc.offset + 4 > len) {
				ret |= fdr_buf_add(b, "<bad>", 5);
				continue;
			}
			memcpy(&loc, p + fc.offset, 4);
			if ((loc >> 16) == 0) {
				ret |= fdr_buf_add(b, FDR_PROBE_FAULT, strlen(FDR_PROBE_FAULT));
				continue;
			}
			if (fdr_field_get_bytes(&fc, p, len, &s, &n)) {
				ret |= fdr_buf_add(b, "<bad>", 5);
				continue;
			}
			ret |= fdr_buf_add(b, "\"", 1);
			ret |= fdr_buf_add(b, s, n);
			ret |= fdr_buf_add(b, "\"", 1);
			continue;
		}
		if (!elem || (fc.kind != FDR_KIND_INT && fc.kind != FDR_KIND_ARRAY) ||
		    (uint32_t)fc.offset + fc.size > len) {
			ret |= fdr_buf_add(b, "<bad>", 5);
			continue;
		}
		if (fc.kind == FDR_KIND_INT) {
			ret |= fp_int(b, fp_load(p + fc.offset, elem), elem, fc.is_signed,
				      fc.print);
			continue;
		}
		ret |= fdr_buf_add(b, "{", 1);
		for (k = 0; k < fc.count; k++) {
			if (k)
				ret |= fdr_buf_add(b, ",", 1);
			ret |= fp_int(b, fp_load(p + fc.offset + k * elem, elem), elem,
				      fc.is_signed, fc.print);
		}
		ret |= fdr_buf_add(b, "}", 1);
	}
	return ret ? -ENOMEM : 0;
}
