// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * strbuf.c - the growable text buffer (struct fdr_buf, fdr-read.h): what the text
 * formats, the trace.dat writer, the exports and the control tree build their
 * output in. Appends on the per-record path are inline (strbuf.h); growing, the
 * printf-like append and freeing are here.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/strbuf.h"

/* Room for @n more bytes and the NUL after them: 0 or -ENOMEM. */
int fdr_buf_reserve(struct fdr_buf *b, size_t n)
{
	size_t want = b->len + n + 1;
	char *p;

	if (want <= b->size)
		return 0;
	if (want < b->size * 2)
		want = b->size * 2;
	if (want < 256)
		want = 256;
	p = realloc(b->data, want);
	if (!p)
		return -ENOMEM;
	b->data = p;
	b->size = want;
	return 0;
}

/** fdr_buf_add - append @n bytes; returns 0 or -ENOMEM */
int fdr_buf_add(struct fdr_buf *b, const void *p, size_t n)
{
	return fb_add(b, p, n);
}

/** fdr_write_all - write(2) all @n bytes of @p, again after EINTR; 0 or a negative errno */
int fdr_write_all(int fd, const void *p, size_t n)
{
	const char *c = p;

	while (n) {
		ssize_t w = write(fd, c, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

/**
 * fdr_path_dir - the directory a file @path is in: what is before its last '/',
 * "." for a name without one, "/" for a name under the root
 * @dir: filled with it, NUL-terminated, in @len bytes
 *
 * Returns 0, or -ENAMETOOLONG (it does not fit @len; @dir is then "").
 */
int fdr_path_dir(const char *path, char *dir, size_t len)
{
	const char *slash = strrchr(path, '/');
	int n;

	if (!slash)
		n = snprintf(dir, len, ".");
	else if (slash == path)
		n = snprintf(dir, len, "/");
	else
		n = snprintf(dir, len, "%.*s", (int)(slash - path), path);
	if (n < 0 || (size_t)n >= len) {
		if (len)
			dir[0] = '\0';
		return -ENAMETOOLONG;
	}
	return 0;
}

/** fdr_buf_printf - append formatted text; returns 0 or -ENOMEM */
int fdr_buf_printf(struct fdr_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (fdr_buf_reserve(b, 64))
		return -ENOMEM;
	va_start(ap, fmt);
	n = vsnprintf(b->data + b->len, b->size - b->len, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -EINVAL;
	if ((size_t)n >= b->size - b->len) {
		if (fdr_buf_reserve(b, (size_t)n))
			return -ENOMEM;
		va_start(ap, fmt);
		vsnprintf(b->data + b->len, b->size - b->len, fmt, ap);
		va_end(ap);
	}
	b->len += (size_t)n;
	return 0;
}

/** fdr_buf_free - release the buffer's memory (the struct itself is the caller's) */
void fdr_buf_free(struct fdr_buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->size = 0;
}
