/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * pread-all.h - read exactly @n bytes at @off of a file of @size bytes, or fail:
 * for readers of hostile files (ELF files named by uprobe_events, on the control
 * side in lib/ctl/uprobe-elf.c and in the probe agent in lib/probe/elf-func.c),
 * so a range outside the file is refused before any read, and a short file is
 * an error, never a partial buffer. Header only: each library takes its copy.
 */
#ifndef FDR_COMMON_PREAD_ALL_H
#define FDR_COMMON_PREAD_ALL_H

#include <errno.h>
#include <stdint.h>
#include <unistd.h>

/* 0, -EINVAL (@off + @n beyond @size) or -EIO (a read error, or the file is shorter) */
static inline int fdr_pread_all(int fd, uint64_t size, uint64_t off, void *buf, uint64_t n)
{
	ssize_t r;

	if (off > size || n > size - off)
		return -EINVAL;
	while (n) {
		r = pread(fd, buf, n, (off_t)off);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -EIO;
		buf = (char *)buf + r;
		off += (uint64_t)r;
		n -= (uint64_t)r;
	}
	return 0;
}

#endif /* FDR_COMMON_PREAD_ALL_H */
