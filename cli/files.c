// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * files.c - the raw verbs of fdr, which reach the control tree exactly as a
 * shell reaches tracefs: cat (read), write (">"), append (">>"), ls, mkdir and
 * rmdir; and the reading and writing of one control-tree file that the other
 * verbs are built on (cat_path(), write_path(), slurp()).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fdr/fdr-ctl.h"
#include "fdr/fdr-read.h"
#include "cli.h"
/* Open @path, reporting the error tracefs-style. */
static int open_file(struct fdr_session *s, const char *path, int flags, struct fdr_file **f)
{
	int ret = fdr_file_open(s, path, flags, f);

	if (!ret)
		return 0;
	if (ret == -ENOENT)
		return die(1, "%s: no such file in the control tree (try 'fdr ls')", path);
	if (ret == -EBUSY && (flags & O_TRUNC) && strstr(path, "_events"))
		return die(1,
			   "%s: busy: a probe event is enabled or named by a trigger; nothing "
			   "was removed",
			   path);
	if (ret == -EBUSY)
		return die(1, "%s: busy: another process is consuming it", path);
	return die_err(1, ret, "%s", path);
}

/* write(2) everything; stdout is written directly, no stdio copy on the data path. */
static int write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR && !stop_requested)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}
int cat_path(struct fdr_session *s, const char *path, int follow_hint)
{
	struct fdr_file *f;
	char buf[65536];
	ssize_t n;
	/*
	 * Pipes are read without blocking, waiting in 100 ms steps in between, so
	 * that Ctrl-C and SIGTERM stop us whenever they come.
	 */
	int pipe = strstr(path, "trace_pipe") != NULL || strstr(path, "snapshot_raw") != NULL;
	int ret = open_file(s, path, O_RDONLY | (pipe ? O_NONBLOCK : 0), &f);

	(void)follow_hint;
	if (ret)
		return ret;
	while (!stop_requested) {
		n = fdr_file_read(f, buf, sizeof(buf));
		if (n == -EAGAIN || n == -EINTR) {
			if (n == -EAGAIN)
				fdr_file_poll(f, 100);
			continue; /* the loop condition sees a stop request */
		}
		if (n < 0) {
			ret = die_err(1, (int)n, "%s: read", path);
			break;
		}
		if (n == 0)
			break;
		if (write_all(STDOUT_FILENO, buf, (size_t)n)) {
			ret = stop_requested ?
				      0 :
				      die(1, "write to standard output: %s", strerror(errno));
			break;
		}
	}
	/*
	 * Stopped: what the file formatted from records it took, and the losses
	 * found that no record reported yet (fdr_file_end()), go out before we end.
	 */
	if (pipe && stop_requested && !ret && fdr_file_end(f) == 0)
		while ((n = fdr_file_read(f, buf, sizeof(buf))) > 0)
			if (write_all(STDOUT_FILENO, buf, (size_t)n))
				break;
	fdr_file_close(f);
	fflush(stdout);
	return ret;
}
/* Join argv with spaces and a final newline, as echo does. */
char *join_args(int argc, char **argv)
{
	size_t len = 2;
	char *s;
	int i;

	for (i = 0; i < argc; i++)
		len += strlen(argv[i]) + 1;
	s = calloc(1, len);
	if (!s)
		return NULL;
	for (i = 0; i < argc; i++) {
		if (i)
			strcat(s, " ");
		strcat(s, argv[i]);
	}
	strcat(s, "\n");
	return s;
}
int write_path(struct fdr_session *s, const char *path, const char *text, int flags)
{
	struct fdr_file *f;
	ssize_t n;
	int ret = open_file(s, path, O_WRONLY | flags, &f);

	if (ret)
		return ret;
	n = fdr_file_write(f, text, strlen(text));
	if (n >= 0 && *fdr_file_notice(f))
		fprintf(stderr, "fdr %s: %s: %s\n", verb, path, fdr_file_notice(f));
	if (n < 0) {
		const char *msg = fdr_file_error(f);

		if (n == -EINVAL && *msg)
			fprintf(stderr, "fdr %s: %s", verb, msg);
		else if (n == -EINVAL)
			fprintf(stderr, "fdr %s: %s: invalid value '%.*s'\n", verb, path,
				(int)strcspn(text, "\n"), text);
		else if (*msg)
			fprintf(stderr, "fdr %s: %s: %s\n%s", verb, path, strerror((int)-n), msg);
		else
			die_err(1, (int)n, "%s", path);
		ret = n == -EINVAL ? EXIT_USAGE : 1;
	}
	fdr_file_close(f);
	return ret;
}
/* Read a whole control file into @b. */
int slurp(struct fdr_session *s, const char *path, struct fdr_buf *b)
{
	struct fdr_file *f;
	char buf[65536];
	ssize_t n;
	int ret = fdr_file_open(s, path, O_RDONLY, &f);

	if (ret)
		return ret;
	while ((n = fdr_file_read(f, buf, sizeof(buf))) > 0)
		if (fdr_buf_add(b, buf, (size_t)n)) {
			n = -ENOMEM;
			break;
		}
	fdr_file_close(f);
	return n < 0 ? (int)n : 0;
}
/* ---- raw verbs ----------------------------------------------------------------------- */

/*
 * The leading "-i INSTANCE" (also -iINSTANCE, --instance[=]INSTANCE) of cat,
 * write and append: the paths after it are the instance's. Consumes it from
 * @argc/@argv (argv[0] stays the verb); returns 0, or the usage error's status.
 */
static int raw_instance(int *argc, char ***argv, const char **inst)
{
	char **v = *argv;
	const char *a = *argc > 1 ? v[1] : "", *name = NULL;
	int used = 0;

	*inst = NULL;
	if (!strcmp(a, "-i") || !strcmp(a, "--instance")) {
		if (*argc < 3)
			return usage_error(*argc, v, 1, "expected an instance name after %s", a);
		name = v[2];
		used = 2;
	} else if (!strncmp(a, "-i", 2)) {
		name = a + 2;
		used = 1;
	} else if (!strncmp(a, "--instance=", 11)) {
		name = a + 11;
		used = 1;
	}
	if (!used)
		return 0;
	if (!*name || strchr(name, '/'))
		return usage_error(*argc, v, 1 + (used == 2),
				   "expected an instance name (no '/'), found '%s'", name);
	*inst = name;
	v[used] = v[0];
	*argv = v + used;
	*argc -= used;
	return 0;
}

/* PATH inside instance @inst ("instances/INST/PATH"), or PATH itself; free() it. */
static char *raw_path(const char *inst, const char *path)
{
	char *p;

	if (!inst)
		return strdup(path);
	if (asprintf(&p, "instances/%s/%s", inst, path) < 0)
		return NULL;
	return p;
}

int cmd_cat(int argc, char **argv)
{
	struct fdr_session *s;
	const char *inst;
	int i, ret = raw_instance(&argc, &argv, &inst);

	if (ret)
		return ret;
	if (argc < 2)
		return usage_error(argc, argv, -1,
				   "expected PATH (a file of the control tree), found nothing");
	ret = open_session(&s);
	if (ret)
		return ret;
	install_signals();
	for (i = 1; i < argc && !ret; i++) {
		char *path = raw_path(inst, argv[i]);

		ret = path ? cat_path(s, path, 0) : die(1, "out of memory");
		free(path);
	}
	fdr_session_close(s);
	return ret;
}

static int cmd_write_common(int argc, char **argv, int flags)
{
	struct fdr_session *s;
	const char *inst;
	char *text, *path;
	int ret = raw_instance(&argc, &argv, &inst);

	if (ret)
		return ret;
	if (argc < 2)
		return usage_error(argc, argv, -1, "expected PATH VALUE..., found nothing");
	ret = open_session(&s);
	if (ret)
		return ret;
	text = join_args(argc - 2, argv + 2);
	path = raw_path(inst, argv[1]);
	if (!text || !path) {
		free(text);
		free(path);
		fdr_session_close(s);
		return die(1, "out of memory");
	}
	ret = write_path(s, path, text, flags);
	free(text);
	free(path);
	fdr_session_close(s);
	return ret;
}

int cmd_write(int argc, char **argv)
{
	return cmd_write_common(argc, argv, O_TRUNC);
}

int cmd_append(int argc, char **argv)
{
	return cmd_write_common(argc, argv, O_APPEND);
}

int cmd_ls(int argc, char **argv)
{
	struct fdr_session *s;
	struct fdr_dirent *ents;
	const char *path = "";
	int ret, long_fmt = 0, i, is_dir;
	unsigned mode;
	size_t n, k;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-l") == 0)
			long_fmt = 1;
		else
			path = argv[i];
	}
	ret = open_session(&s);
	if (ret)
		return ret;
	ret = fdr_tree_stat(s, path, &is_dir, &mode);
	if (ret) {
		fdr_session_close(s);
		return die(1, "%s: no such file or directory in the control tree", path);
	}
	if (!is_dir) {
		printf("%s\n", path);
		fdr_session_close(s);
		return 0;
	}
	ret = fdr_tree_readdir(s, path, &ents, &n);
	if (ret) {
		fdr_session_close(s);
		return die(1, "%s: %s", path, strerror(-ret));
	}
	for (k = 0; k < n; k++) {
		if (long_fmt)
			printf("%c%c%c%c%c%c%c--- %s%s\n", ents[k].is_dir ? 'd' : '-',
			       ents[k].mode & 0400 ? 'r' : '-', ents[k].mode & 0200 ? 'w' : '-',
			       ents[k].mode & 0100 ? 'x' : '-', ents[k].mode & 040 ? 'r' : '-',
			       ents[k].mode & 020 ? 'w' : '-', ents[k].mode & 010 ? 'x' : '-',
			       ents[k].name, ents[k].is_dir ? "/" : "");
		else
			printf("%s%s\n", ents[k].name, ents[k].is_dir ? "/" : "");
	}
	free(ents);
	fdr_session_close(s);
	return 0;
}

static int cmd_mkdir_rmdir(int argc, char **argv, int mk)
{
	struct fdr_session *s;
	int ret, i;

	if (argc < 2)
		return usage_error(argc, argv, -1, "expected instances/NAME, found nothing");
	ret = open_session(&s);
	if (ret)
		return ret;
	for (i = 1; i < argc && !ret; i++) {
		int r = mk ? fdr_tree_mkdir(s, argv[i]) : fdr_tree_rmdir(s, argv[i]);

		if (r == -EPERM)
			ret = usage_error(argc, argv, i, "expected instances/NAME, found '%s'",
					  argv[i]);
		else if (r)
			ret = die_err(1, r, "%s", argv[i]);
	}
	fdr_session_close(s);
	return ret;
}

int cmd_mkdir(int argc, char **argv)
{
	return cmd_mkdir_rmdir(argc, argv, 1);
}

int cmd_rmdir(int argc, char **argv)
{
	return cmd_mkdir_rmdir(argc, argv, 0);
}
