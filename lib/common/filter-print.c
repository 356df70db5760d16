// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * filter-print.c - the text around filters: what the `filter` file reads back
 * (the expression, or the kernel's error block), error messages for error_log,
 * and a listing of a compiled program for debugging.
 *
 * The filter file after a rejected write, as the kernel builds it in
 * append_filter_err() and prints it with "%s\n":
 *
 *     nosuch == 1              the text, without trailing white space
 *            ^                 pos spaces (pos clamped to the text's length)
 *     parse_error: Field not found
 *                              one empty line
 *
 * and for code 0 (nothing to parse) "TEXT\nError: (0)\n\n".
 * All functions here format like snprintf(): they return the length the full
 * text needs and write at most @size bytes, NUL included.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "filter.h"

#define C(a, b) b,
static const char *const fpr_err_text[] = { FDR_FILTER_ERRORS };
#undef C

_Static_assert(sizeof(fpr_err_text) / sizeof(fpr_err_text[0]) == FDR_FILTER_ERR_NR,
	       "one message per error code");

/**
 * fdr_filter_strerror - the kernel's message for a filter error code
 *
 * Returns: a static string; "Unknown error" for a code outside the table.
 */
const char *fdr_filter_strerror(int code)
{
	if (code < 0 || code >= FDR_FILTER_ERR_NR)
		return "Unknown error";
	return fpr_err_text[code];
}

/**
 * fdr_filter_error_message - the message error_log shows for @err
 *
 * The kernel logs code 0 (nothing to parse) as "Error" (its FILT_ERR_ERRNO) at
 * position 0. fdr's FDR_FILTER_ERR_BAD_CHAR says which byte and where.
 * Returns: a static string, or for BAD_CHAR one in a per-thread buffer that
 * the next call in the same thread overwrites.
 */
const char *fdr_filter_error_message(const struct fdr_filter_error *err)
{
	static __thread char bad[96];

	if (!err || err->code <= 0)
		return fpr_err_text[FDR_FILTER_ERR_ERRNO];
	if (err->code == FDR_FILTER_ERR_BAD_CHAR) {
		snprintf(bad, sizeof(bad),
			 "Unexpected character 0x%02x (a control byte) at offset %d",
			 (unsigned)err->ch & 0xff, err->pos);
		return bad;
	}
	return fdr_filter_strerror(err->code);
}

struct fpr_buf {
	char *buf;
	size_t size;
	size_t len; /* what the full text needs */
};

static void fpr_add(struct fpr_buf *b, const char *s, size_t n)
{
	if (b->len < b->size) {
		size_t room = b->size - 1 - b->len;

		memcpy(b->buf + b->len, s, n < room ? n : room);
	}
	b->len += n;
	if (b->size)
		b->buf[b->len < b->size ? b->len : b->size - 1] = 0;
}

static void fpr_printf(struct fpr_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void fpr_printf(struct fpr_buf *b, const char *fmt, ...)
{
	char tmp[128];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n > 0)
		fpr_add(b, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

static int fpr_done(const struct fpr_buf *b)
{
	return b->len > INT32_MAX ? -EOVERFLOW : (int)b->len;
}

/**
 * fdr_filter_format_text - the filter file's content for an accepted filter
 * @text: the expression as written
 * @buf: receives "TEXT\n", TEXT without its trailing white space
 *
 * Returns: the length of the full content (as snprintf), or -EINVAL.
 */
int fdr_filter_format_text(const char *text, char *buf, size_t size)
{
	struct fpr_buf b = { buf, size, 0 };

	if (!text || (!buf && size))
		return -EINVAL;
	if (size)
		buf[0] = 0;
	fpr_add(&b, text, fdr_filter_text_len(text));
	fpr_add(&b, "\n", 1);
	return fpr_done(&b);
}

/**
 * fdr_filter_format_error - the filter file's content after a rejected write
 * @text: the expression as written
 * @err: what fdr_filter_compile() reported
 * @buf: receives the text, the caret line, "parse_error: MSG" and an empty
 *       line, byte for byte as the kernel's filter file shows them
 *
 * Returns: the length of the full content (as snprintf), or -EINVAL.
 */
int fdr_filter_format_error(const char *text, const struct fdr_filter_error *err, char *buf,
			    size_t size)
{
	struct fpr_buf b = { buf, size, 0 };
	size_t len, pos, i;

	if (!text || !err || (!buf && size))
		return -EINVAL;
	if (size)
		buf[0] = 0;
	len = fdr_filter_text_len(text);
	fpr_add(&b, text, len);
	if (err->code <= 0) {
		fpr_printf(&b, "\nError: (%d)\n\n", err->code < 0 ? err->code : 0);
		return fpr_done(&b);
	}
	pos = err->pos > 0 ? (size_t)err->pos : 0;
	if (pos > len)
		pos = len;
	fpr_add(&b, "\n", 1);
	for (i = 0; i < pos; i++)
		fpr_add(&b, " ", 1);
	fpr_printf(&b, "^\nparse_error: %s\n\n", fdr_filter_error_message(err));
	return fpr_done(&b);
}

/* ---- listing --------------------------------------------------------------------------- */

static const char *fpr_src_name(unsigned src)
{
	static const char *const names[FDR_FSRC_NR] = {
		[FDR_FSRC_U8] = "u8",	    [FDR_FSRC_S8] = "s8",     [FDR_FSRC_U16] = "u16",
		[FDR_FSRC_S16] = "s16",	    [FDR_FSRC_U32] = "u32",   [FDR_FSRC_S32] = "s32",
		[FDR_FSRC_U64] = "u64",	    [FDR_FSRC_S64] = "s64",   [FDR_FSRC_CPU] = "cpu",
		[FDR_FSRC_CHARS] = "chars", [FDR_FSRC_DLOC] = "dloc", [FDR_FSRC_TAIL] = "tail",
		[FDR_FSRC_COMM] = "comm",
	};

	return src < FDR_FSRC_NR && names[src] ? names[src] : "?";
}

static const char *fpr_op_name(unsigned op)
{
	static const char *const names[FDR_FOP_NR] = {
		[FDR_FOP_EQ] = "==",
		[FDR_FOP_LT] = "<",
		[FDR_FOP_GT] = ">",
		[FDR_FOP_BAND] = "&",
		[FDR_FOP_INMASK] = "in",
		[FDR_FOP_FALSE] = "false",
		[FDR_FOP_STR_EQ] = "==",
		[FDR_FOP_STR_PREFIX] = "prefix",
		[FDR_FOP_STR_SUFFIX] = "suffix",
		[FDR_FOP_STR_SUBSTR] = "contains",
		[FDR_FOP_STR_GLOB] = "glob",
	};

	return op < FDR_FOP_NR && names[op] ? names[op] : "?";
}

static void fpr_target(struct fpr_buf *b, unsigned t, unsigned nr)
{
	if (t == nr)
		fpr_add(b, "record", 6);
	else if (t == nr + 1)
		fpr_add(b, "discard", 7);
	else
		fpr_printf(b, "%u", t);
}

/**
 * fdr_filter_dump - a listing of a program, one line per predicate
 * @p: the program (read as hostile: nothing outside it is read)
 *
 * For example `status >= 500` on an int at offset 8 lists as
 *     0: s32@8 < 500 (0x1f4) ? discard : record
 * String operands are shown quoted with non-printing bytes as \xNN.
 *
 * Returns: the length of the full listing (as snprintf), or -EINVAL.
 */
int fdr_filter_dump(const struct fdr_filter_prog *p, char *buf, size_t size)
{
	struct fpr_buf b = { buf, size, 0 };
	unsigned i, nr;

	if (!p || (!buf && size))
		return -EINVAL;
	if (size)
		buf[0] = 0;
	nr = p->nr_insns;
	fpr_printf(&b, "filter v%u: %u insns, pool %u, flags %#x%s\n", p->version, nr, p->pool_len,
		   p->flags, fdr_filter_validate(p) ? " (invalid)" : "");
	if (nr > FDR_FILTER_MAX_INSNS)
		nr = FDR_FILTER_MAX_INSNS;
	for (i = 0; i < nr; i++) {
		const struct fdr_filter_insn *in = &p->insns[i];

		fpr_printf(&b, "%3u: %s", i, fpr_src_name(in->src));
		if (in->src != FDR_FSRC_CPU && in->src != FDR_FSRC_COMM)
			fpr_printf(&b, "@%u", in->off);
		if (in->src == FDR_FSRC_CHARS)
			fpr_printf(&b, "[%u]", in->size);
		fpr_printf(&b, " %s", fpr_op_name(in->op));
		if (in->op >= FDR_FOP_STR_EQ || in->op == FDR_FOP_INMASK) {
			unsigned off = (unsigned)(in->imm & 0xffff),
				 len = (unsigned)(in->imm >> 16 & 0xffff), k;

			fpr_add(&b, in->op == FDR_FOP_INMASK ? " {" : " \"", 2);
			for (k = 0; k < len && off + k < FDR_FILTER_POOL_SIZE; k++) {
				unsigned char c = p->pool[off + k];

				if (in->op == FDR_FOP_INMASK)
					fpr_printf(&b, "%02x", c);
				else if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\')
					fpr_add(&b, (const char *)&c, 1);
				else
					fpr_printf(&b, "\\x%02x", c);
			}
			fpr_add(&b, in->op == FDR_FOP_INMASK ? "}" : "\"", 1);
		} else if (in->op != FDR_FOP_FALSE) {
			fpr_printf(&b, " %" PRId64 " (%#" PRIx64 ")", (int64_t)in->imm, in->imm);
		}
		fpr_add(&b, " ? ", 3);
		fpr_target(&b, in->jt, p->nr_insns);
		fpr_add(&b, " : ", 3);
		fpr_target(&b, in->jf, p->nr_insns);
		fpr_add(&b, "\n", 1);
	}
	return fpr_done(&b);
}
