/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * strbuf.h - the growable text buffer of lib/common (strbuf.c): struct fdr_buf
 * and its public functions are declared in fdr-read.h (libfdr-read exports them);
 * this adds the inline append of the per-record path and the reserve it uses.
 * Never installed.
 */
#ifndef FDR_COMMON_STRBUF_H
#define FDR_COMMON_STRBUF_H

#include <stddef.h>
#include <string.h>

#include "fdr/fdr-read.h"

int fdr_buf_reserve(struct fdr_buf *b, size_t n) __attribute__((visibility("hidden")));

/* Append, inline: most appends on the per-record path are a few bytes long. */
static inline int fb_add(struct fdr_buf *b, const void *p, size_t n)
{
	char *d;

	if (__builtin_expect(b->len + n + 1 > b->size, 0) && fdr_buf_reserve(b, n))
		return -ENOMEM;
	d = b->data + b->len;
	if (n <= 16) {
		const char *c = p;
		size_t i;

		for (i = 0; i < n; i++)
			d[i] = c[i];
	} else {
		memcpy(d, p, n);
	}
	b->len += n;
	d[n] = 0;
	return 0;
}

#endif /* FDR_COMMON_STRBUF_H */
