// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * export.c - what the exporters share, and the text exporter.
 *
 * Output never appears half-written at its final name. A file is written as
 * "PATH.tmp-XXXXXX" next to PATH and renamed over it when complete; a CTF
 * directory is written as "DIR.tmp-XXXXXX" and renamed to DIR, which must not
 * exist or be empty (rename(2) replaces an empty directory). On any error the
 * temporary file or directory is removed, so ENOSPC in the middle of an export
 * leaves nothing behind.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "export-local.h"
#include "trace-src.h"

/**
 * fdr_export_fail - record why an export failed
 * @err: where the message goes (may be NULL)
 * @errnum: a positive errno
 * @what: the file or the step
 * @detail: extra text, or NULL
 *
 * Returns: -@errnum.
 */
int fdr_export_fail(struct fdr_buf *err, int errnum, const char *what, const char *detail)
{
	if (err && !err->len)
		fdr_buf_printf(err, "%s: %s%s%s", what, detail ? detail : "", detail ? ": " : "",
			       strerror(errnum));
	return -errnum;
}

/* fdr_tid_set_add - add @tid to @set (export-local.h): 1 new, 0 known, -ENOMEM */
int fdr_tid_set_add(struct fdr_tid_set *set, int32_t tid)
{
	size_t i;

	if (tid == 0) {
		if (set->has0)
			return 0;
		set->has0 = 1;
		return 1;
	}
	if ((set->n + 1) * 2 > set->slots) {
		size_t n = set->slots ? set->slots * 2 : 256, k;
		int32_t *grown = calloc(n, sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		for (k = 0; k < set->slots; k++) {
			if (!set->v[k])
				continue;
			for (i = (uint32_t)set->v[k] % n; grown[i]; i = (i + 1) % n)
				;
			grown[i] = set->v[k];
		}
		free(set->v);
		set->v = grown;
		set->slots = n;
	}
	for (i = (uint32_t)tid % set->slots; set->v[i]; i = (i + 1) % set->slots)
		if (set->v[i] == tid)
			return 0;
	set->v[i] = tid;
	set->n++;
	return 1;
}

static char *out_tmp_name(const char *path)
{
	char *tmp;

	if (asprintf(&tmp, "%s.tmp-XXXXXX", path) < 0)
		return NULL;
	return tmp;
}

/**
 * fdr_export_file_open - start writing a file that appears at @path when complete
 * @path: the destination; NULL writes to standard output (not atomic)
 *
 * Returns: 0, -ENOMEM, or the errno of mkstemp (message in @err).
 */
int fdr_export_file_open(struct fdr_export_out *o, const char *path, struct fdr_buf *err)
{
	memset(o, 0, sizeof(*o));
	o->err = err;
	o->fd = -1;
	if (!path) {
		o->fd = STDOUT_FILENO;
		return 0;
	}
	o->path = strdup(path);
	o->tmp = out_tmp_name(path);
	if (!o->path || !o->tmp) {
		fdr_export_abort(o);
		return fdr_export_fail(err, ENOMEM, path, NULL);
	}
	o->fd = mkostemp(o->tmp, O_CLOEXEC);
	if (o->fd < 0) {
		int e = errno;

		free(o->tmp);
		o->tmp = NULL;
		fdr_export_abort(o);
		return fdr_export_fail(err, e, path, "cannot create a file next to it");
	}
	/* mkostemp makes 0600 files; an export is an ordinary readable file */
	fchmod(o->fd, 0644);
	return 0;
}

static int out_dir_is_empty(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *de;
	int empty = 1;

	if (!d)
		return 0;
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			empty = 0;
	closedir(d);
	return empty;
}

/**
 * fdr_export_dir_open - start writing a directory that appears at @path when complete
 *
 * Returns: 0, -EEXIST (@path is a file), -ENOTEMPTY (@path is a directory with
 * entries), -ENOMEM or the errno of mkdtemp/open (message in @err).
 */
int fdr_export_dir_open(struct fdr_export_out *o, const char *path, struct fdr_buf *err)
{
	struct stat st;

	memset(o, 0, sizeof(*o));
	o->err = err;
	o->fd = -1;
	o->is_dir = 1;
	if (stat(path, &st) == 0) {
		if (!S_ISDIR(st.st_mode))
			return fdr_export_fail(err, EEXIST, path,
					       "exists and is not a directory (expected a new "
					       "or empty directory)");
		if (!out_dir_is_empty(path))
			return fdr_export_fail(err, ENOTEMPTY, path,
					       "expected a new or empty directory, found one "
					       "with entries");
	}
	o->path = strdup(path);
	o->tmp = out_tmp_name(path);
	if (!o->path || !o->tmp) {
		fdr_export_abort(o);
		return fdr_export_fail(err, ENOMEM, path, NULL);
	}
	if (!mkdtemp(o->tmp)) {
		int e = errno;

		free(o->tmp);
		o->tmp = NULL;
		fdr_export_abort(o);
		return fdr_export_fail(err, e, path, "cannot create a directory next to it");
	}
	chmod(o->tmp, 0755);
	o->fd = open(o->tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (o->fd < 0) {
		int e = errno;

		fdr_export_abort(o);
		return fdr_export_fail(err, e, path, NULL);
	}
	return 0;
}

/** fdr_export_dir_file - create file @name in the export directory; returns an fd or -errno */
int fdr_export_dir_file(struct fdr_export_out *o, const char *name)
{
	int fd = openat(o->fd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);

	if (fd < 0)
		return fdr_export_fail(o->err, errno, o->path, name);
	return fd;
}

/** fdr_export_write - write all @n bytes to @fd; 0 or a negative errno (message in err) */
int fdr_export_write(struct fdr_export_out *o, int fd, const char *name, const void *p, size_t n)
{
	char what[64];
	int ret = fdr_write_all(fd, p, n);

	if (!ret)
		return 0;
	snprintf(what, sizeof(what), "write %s", name ? name : "");
	return fdr_export_fail(o->err, -ret, o->path ? o->path : "standard output",
			       name ? what : "write");
}

/** fdr_export_flush - write @b out and empty it once it holds @min bytes or more */
int fdr_export_flush(struct fdr_export_out *o, int fd, const char *name, struct fdr_buf *b,
		     size_t min)
{
	int ret;

	if (b->len < min || !b->len)
		return 0;
	ret = fdr_export_write(o, fd, name, b->data, b->len);
	b->len = 0;
	return ret;
}

static void out_free(struct fdr_export_out *o)
{
	free(o->path);
	free(o->tmp);
	o->path = o->tmp = NULL;
}

/** fdr_export_abort - remove what was written; frees @o's names */
void fdr_export_abort(struct fdr_export_out *o)
{
	if (o->fd >= 0 && o->fd != STDOUT_FILENO)
		close(o->fd);
	o->fd = -1;
	if (o->tmp && o->is_dir) {
		DIR *d = opendir(o->tmp);
		struct dirent *de;
		int dfd = d ? dirfd(d) : -1;

		/* our own flat directory: files only */
		while (d && (de = readdir(d)))
			if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
				unlinkat(dfd, de->d_name, 0);
		if (d)
			closedir(d);
		rmdir(o->tmp);
	} else if (o->tmp) {
		unlink(o->tmp);
	}
	out_free(o);
}

/**
 * fdr_export_commit - close the output and give it its final name
 *
 * Returns: 0, or the errno of close/rename (everything written is then removed).
 */
int fdr_export_commit(struct fdr_export_out *o)
{
	int ret = 0;

	if (!o->tmp) {
		/* standard output: nothing to rename */
		out_free(o);
		return 0;
	}
	if (!o->is_dir && fsync(o->fd) < 0 && errno != EINVAL && errno != EROFS)
		ret = fdr_export_fail(o->err, errno, o->path, "fsync");
	if (close(o->fd) < 0 && !ret)
		ret = fdr_export_fail(o->err, errno, o->path, "close");
	o->fd = -1;
	if (!ret && rename(o->tmp, o->path) < 0)
		ret = fdr_export_fail(o->err, errno, o->path, "rename into place");
	if (ret) {
		fdr_export_abort(o);
		return ret;
	}
	out_free(o);
	return 0;
}

/* ---- text ------------------------------------------------------------------------------ */

/*
 * The body goes to an unlinked temporary file first: the header's entries
 * count is known only at the end, and a trace can be larger than memory.
 */
static int text_body_fd(const char *path)
{
	char *dir = NULL, *slash;
	int fd;

	if (path) {
		dir = strdup(path);
		if (!dir)
			return -ENOMEM;
		slash = strrchr(dir, '/');
		if (slash)
			slash[slash == dir ? 1 : 0] = '\0';
		else
			strcpy(dir, ".");
	}
	fd = open(dir ? dir : (getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp"),
		  O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0 && dir)
		fd = open(getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
			  O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	free(dir);
	return fd < 0 ? -errno : fd;
}

static int text_copy(struct fdr_export_out *o, int from)
{
	char buf[65536];
	ssize_t n;
	int ret;

	if (lseek(from, 0, SEEK_SET) < 0)
		return fdr_export_fail(o->err, errno, "temporary file", "seek");
	while ((n = read(from, buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return fdr_export_fail(o->err, errno, "temporary file", "read");
		ret = fdr_export_write(o, o->fd, NULL, buf, (size_t)n);
		if (ret)
			return ret;
	}
	return 0;
}

/**
 * fdr_export_text - @t as the kernel's `trace` file: the header ("# tracer: nop",
 * entries and CPU count, column legend) and one line per record, with a
 * "CPU:N [LOST M EVENTS]" line where the source reports losses
 * @path: the file, or NULL for standard output
 * @st: counts (may be NULL)
 *
 * Returns: 0 or a negative errno (message in @err).
 */
int fdr_export_text(struct fdr_trace *t, const char *path, struct fdr_export_stats *st,
		    struct fdr_buf *err)
{
	struct fdr_export_stats s = { 0 };
	struct fdr_export_out o;
	struct fdr_buf b = { 0 };
	struct fdr_trace_rec rec;
	int body, ret;

	body = text_body_fd(path);
	if (body < 0)
		return fdr_export_fail(err, -body, "temporary file", "create");
	ret = fdr_export_file_open(&o, path, err);
	if (ret) {
		close(body);
		return ret;
	}
	while ((ret = fdr_trace_next(t, &rec)) > 0) {
		if (rec.lost_before) {
			s.lost += rec.lost_before;
			ret = fdr_buf_printf(&b, "CPU:%u [LOST %llu EVENTS]\n", rec.cpu,
					     (unsigned long long)rec.lost_before);
			if (ret)
				break;
		}
		ret = fdr_trace_format(t, &rec, &b);
		if (ret)
			break;
		s.events++;
		if (!rec.ev)
			s.unknown++;
		if (b.len >= FDR_EXPORT_FLUSH &&
		    (ret = fdr_export_flush(&o, body, "temporary file", &b, 0)))
			break;
	}
	if (ret < 0) {
		fdr_export_fail(err, -ret, fdr_trace_get_info(t)->origin, "read");
		goto out;
	}
	ret = fdr_export_flush(&o, body, "temporary file", &b, 0);
	if (ret)
		goto out;
	/* the header `fdr show` prints with the default options (irq-info on) */
	ret = fdr_buf_printf(&b,
			     "# tracer: nop\n#\n"
			     "# entries-in-buffer/entries-written: %llu/%llu   #P:%u\n#\n"
			     "#                                _-----=> irqs-off/BH-disabled\n"
			     "#                               / _----=> need-resched\n"
			     "#                              | / _---=> hardirq/softirq\n"
			     "#                              || / _--=> preempt-depth\n"
			     "#                              ||| / _-=> migrate-disable\n"
			     "#                              |||| /     delay\n"
			     "#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION\n"
			     "#              | |         |   |||||     |         |\n",
			     (unsigned long long)s.events, (unsigned long long)(s.events + s.lost),
			     fdr_trace_get_info(t)->nr_cpus);
	if (ret) {
		ret = fdr_export_fail(err, ENOMEM, "text", NULL);
		goto out;
	}
	ret = fdr_export_flush(&o, o.fd, NULL, &b, 0);
	if (!ret)
		ret = text_copy(&o, body);
out:
	close(body);
	fdr_buf_free(&b);
	if (!ret)
		ret = fdr_export_commit(&o);
	else
		fdr_export_abort(&o);
	if (st)
		*st = s;
	return ret;
}
