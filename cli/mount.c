// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * mount.c - `fdr mount DIR`: a session's control tree served as a filesystem
 * through libfuse3, so that echo, cat, mkdir, rmdir and tools built on
 * libtracefs (trace-cmd) reach it as they reach /sys/kernel/tracing.
 *
 * Every request goes to the same libfdr-ctl calls the CLI makes, so a path
 * behaves the same whichever way it is reached, errors and error_log included:
 *
 *   open(2) flags     -> fdr_file_open() flags: O_TRUNC (">"), O_APPEND (">>"),
 *                        O_NONBLOCK; one struct fdr_file per open file (fi->fh)
 *   read(2)           -> fdr_file_read(): a stream without an offset. We keep the
 *                        handle's position; a read at another offset reopens the
 *                        file (regenerating its content) and skips to it, so a
 *                        pread() at 0 of a generated file works. Pipes ignore it.
 *   write(2)          -> fdr_file_write(); -EINVAL leaves its message in error_log
 *   poll/select       -> fdr_file_poll(); a helper thread notifies the kernel
 *                        (fuse_notify_poll) when a waited-on pipe gets data
 *   mkdir/rmdir       -> fdr_tree_mkdir()/fdr_tree_rmdir()
 *   chown/chgrp       -> kept in this server (mnt_owners), as tracefs keeps a
 *                        file's owner for the life of the mount; the kernel has
 *                        checked the caller may (default_permissions)
 *
 * Files are opened with direct_io, so the kernel neither caches them nor trusts
 * their size (0, as on tracefs), and each read(2) reaches us with its own size:
 * a read of 4096 bytes from trace_pipe_raw gets one whole page.
 *
 * Locking: the libfdr-ctl calls of all worker threads are serialised by
 * mnt_lock; a blocking read of a pipe waits outside it, in short sleeps, and
 * gives up when FUSE interrupts the request (the reader got a signal) or the
 * server is exiting. libfuse's multi-threaded loop runs other requests meanwhile.
 */
#define _GNU_SOURCE
#define FUSE_USE_VERSION 312
#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <fuse_lowlevel.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fdr/fdr-ctl.h"
#include "mount.h"

/* One open file. */
struct mnt_file {
	struct fdr_file *f;
	char *path; /* tree path, to reopen */
	int flags; /* as given to fdr_file_open(), without O_TRUNC once done */
	int pipe; /* trace_pipe, trace_pipe_raw, snapshot_raw: consumed, no offsets */
	off_t pos; /* offset of the next byte fdr_file_read() gives */
	struct fuse_pollhandle *ph; /* a poll waiting for data; protected by mnt_lock */
	struct mnt_file *poll_next; /* on mnt_pollers while ph is set */
};

static struct fdr_session *mnt_session;
static pthread_mutex_t mnt_lock = PTHREAD_MUTEX_INITIALIZER;
static struct mnt_file *mnt_pollers; /* protected by mnt_lock */
static pthread_t mnt_poll_thread;
static int mnt_poll_started;
static volatile int mnt_poll_stop;
static struct timespec mnt_time; /* the times every file shows */
static uid_t mnt_uid;
static gid_t mnt_gid;

/* Owners set by chown/chgrp, per tree path (a short list: a few files are handed out). */
struct mnt_owner {
	char *path;
	uid_t uid;
	gid_t gid;
	struct mnt_owner *next;
};
static struct mnt_owner *mnt_owners; /* protected by mnt_lock */

static struct mnt_owner *owner_find(const char *path)
{
	struct mnt_owner *o;

	for (o = mnt_owners; o; o = o->next)
		if (!strcmp(o->path, path))
			return o;
	return NULL;
}

/* "/a/b" -> "a/b", "/" -> "" */
static const char *tree_path(const char *path)
{
	while (*path == '/')
		path++;
	return path;
}

static int is_pipe_path(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return !strcmp(base, "trace_pipe") || !strcmp(base, "trace_pipe_raw") ||
	       !strcmp(base, "snapshot_raw");
}

static void sleep_ms(long ms)
{
	struct timespec d = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&d, NULL);
}

/* The request was interrupted (its caller got a signal) or the server is exiting. */
static int request_abandoned(void)
{
	struct fuse_context *ctx = fuse_get_context();

	if (fuse_interrupted())
		return 1;
	return ctx && ctx->fuse && fuse_session_exited(fuse_get_session(ctx->fuse));
}

/* ---- poll notification -------------------------------------------------------------------- */

/* Take @m off mnt_pollers and drop its poll handle; mnt_lock held. */
static void poller_del_locked(struct mnt_file *m)
{
	struct mnt_file **pp;

	if (!m->ph)
		return;
	for (pp = &mnt_pollers; *pp; pp = &(*pp)->poll_next) {
		if (*pp == m) {
			*pp = m->poll_next;
			break;
		}
	}
	fuse_pollhandle_destroy(m->ph);
	m->ph = NULL;
	m->poll_next = NULL;
}

/* Wakes the kernel's poll/select waiters when their pipe gets data (10 ms steps). */
static void *poll_thread(void *arg)
{
	(void)arg;
	while (!mnt_poll_stop) {
		struct fuse_pollhandle *ready[64];
		struct mnt_file **pp;
		int n = 0, i;

		pthread_mutex_lock(&mnt_lock);
		for (pp = &mnt_pollers; *pp && n < 64;) {
			struct mnt_file *m = *pp;

			if (fdr_file_poll(m->f, 0) > 0) {
				ready[n++] = m->ph;
				m->ph = NULL;
				*pp = m->poll_next;
				m->poll_next = NULL;
			} else {
				pp = &m->poll_next;
			}
		}
		pthread_mutex_unlock(&mnt_lock);
		for (i = 0; i < n; i++) {
			fuse_notify_poll(ready[i]);
			fuse_pollhandle_destroy(ready[i]);
		}
		sleep_ms(10);
	}
	return NULL;
}

/* ---- operations --------------------------------------------------------------------------- */

static void *mnt_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
	/* O_TRUNC reaches open(), where tracefs applies it ("echo > trace" clears) */
	if (conn->capable & FUSE_CAP_ATOMIC_O_TRUNC)
		conn->want |= FUSE_CAP_ATOMIC_O_TRUNC;
	/* the tree changes under us (instances, events registered by applications) */
	cfg->entry_timeout = 0;
	cfg->attr_timeout = 0;
	cfg->negative_timeout = 0;
	cfg->direct_io = 1;
	/* started here, after fuse_daemonize() forked, so that it runs in the server */
	if (pthread_create(&mnt_poll_thread, NULL, poll_thread, NULL) == 0)
		mnt_poll_started = 1;
	return NULL;
}

static void mnt_destroy(void *data)
{
	(void)data;
	if (mnt_poll_started) {
		mnt_poll_stop = 1;
		pthread_join(mnt_poll_thread, NULL);
		mnt_poll_started = 0;
	}
}

static int mnt_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
	unsigned mode;
	int is_dir, ret;

	(void)fi;
	pthread_mutex_lock(&mnt_lock);
	ret = fdr_tree_stat(mnt_session, tree_path(path), &is_dir, &mode);
	pthread_mutex_unlock(&mnt_lock);
	if (ret)
		return ret;
	memset(st, 0, sizeof(*st));
	st->st_mode = (is_dir ? S_IFDIR : S_IFREG) | (mode & 07777);
	st->st_nlink = is_dir ? 2 : 1;
	st->st_uid = mnt_uid;
	st->st_gid = mnt_gid;
	pthread_mutex_lock(&mnt_lock);
	{
		const struct mnt_owner *o = owner_find(tree_path(path));

		if (o) {
			st->st_uid = o->uid;
			st->st_gid = o->gid;
		}
	}
	pthread_mutex_unlock(&mnt_lock);
	st->st_size = 0; /* as on tracefs: the content is made when read */
	st->st_blksize = 4096;
	st->st_atim = mnt_time;
	st->st_mtim = mnt_time;
	st->st_ctim = mnt_time;
	return 0;
}

/* chown/chgrp: a new owner for one file or directory, until the mount ends */
static int mnt_chown(const char *path, uid_t uid, gid_t gid, struct fuse_file_info *fi)
{
	const char *tp = tree_path(path);
	struct mnt_owner *o;
	unsigned mode;
	int is_dir, ret;

	(void)fi;
	pthread_mutex_lock(&mnt_lock);
	ret = fdr_tree_stat(mnt_session, tp, &is_dir, &mode);
	o = ret ? NULL : owner_find(tp);
	if (!ret && !o) {
		o = calloc(1, sizeof(*o));
		if (o)
			o->path = strdup(tp);
		if (!o || !o->path) {
			free(o);
			ret = -ENOMEM;
		} else {
			o->uid = mnt_uid;
			o->gid = mnt_gid;
			o->next = mnt_owners;
			mnt_owners = o;
		}
	}
	if (!ret) {
		/* (uid_t)-1 / (gid_t)-1: that one is left as it is */
		if (uid != (uid_t)-1)
			o->uid = uid;
		if (gid != (gid_t)-1)
			o->gid = gid;
	}
	pthread_mutex_unlock(&mnt_lock);
	return ret;
}

static int mnt_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t off,
		       struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
	struct fdr_dirent *ents;
	size_t n, k;
	int ret;

	(void)off;
	(void)fi;
	(void)flags;
	pthread_mutex_lock(&mnt_lock);
	ret = fdr_tree_readdir(mnt_session, tree_path(path), &ents, &n);
	pthread_mutex_unlock(&mnt_lock);
	if (ret)
		return ret;
	fill(buf, ".", NULL, 0, 0);
	fill(buf, "..", NULL, 0, 0);
	for (k = 0; k < n; k++) {
		struct stat st;

		memset(&st, 0, sizeof(st));
		st.st_mode = (ents[k].is_dir ? S_IFDIR : S_IFREG) | (ents[k].mode & 07777);
		if (fill(buf, ents[k].name, &st, 0, 0))
			break;
	}
	free(ents);
	return 0;
}

static int mnt_mkdir(const char *path, mode_t mode)
{
	int ret;

	(void)mode;
	pthread_mutex_lock(&mnt_lock);
	ret = fdr_tree_mkdir(mnt_session, tree_path(path));
	pthread_mutex_unlock(&mnt_lock);
	return ret;
}

static int mnt_rmdir(const char *path)
{
	int ret;

	pthread_mutex_lock(&mnt_lock);
	ret = fdr_tree_rmdir(mnt_session, tree_path(path));
	pthread_mutex_unlock(&mnt_lock);
	return ret;
}

/* Files cannot be created, removed or renamed: tracefs answers the same. */
static int mnt_create(const char *path, mode_t mode, struct fuse_file_info *fi)
{
	(void)path;
	(void)mode;
	(void)fi;
	return -EACCES;
}

static int mnt_unlink(const char *path)
{
	(void)path;
	return -EPERM;
}

static int mnt_rename(const char *from, const char *to, unsigned int flags)
{
	(void)from;
	(void)to;
	(void)flags;
	return -EPERM;
}

/* truncate(2) and utimes(2) (touch) are accepted and change nothing, as on tracefs. */
static int mnt_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
	unsigned mode;
	int is_dir, ret;

	(void)size;
	(void)fi;
	pthread_mutex_lock(&mnt_lock);
	ret = fdr_tree_stat(mnt_session, tree_path(path), &is_dir, &mode);
	pthread_mutex_unlock(&mnt_lock);
	return ret ? ret : is_dir ? -EISDIR : 0;
}

static int mnt_utimens(const char *path, const struct timespec tv[2], struct fuse_file_info *fi)
{
	unsigned mode;
	int is_dir, ret;

	(void)tv;
	(void)fi;
	pthread_mutex_lock(&mnt_lock);
	ret = fdr_tree_stat(mnt_session, tree_path(path), &is_dir, &mode);
	pthread_mutex_unlock(&mnt_lock);
	return ret;
}

static int mnt_open(const char *path, struct fuse_file_info *fi)
{
	struct mnt_file *m = calloc(1, sizeof(*m));
	int ret;

	if (!m)
		return -ENOMEM;
	m->path = strdup(tree_path(path));
	if (!m->path) {
		free(m);
		return -ENOMEM;
	}
	m->pipe = is_pipe_path(m->path);
	/* exactly what the CLI passes: write is O_TRUNC (">"), append O_APPEND (">>") */
	m->flags = fi->flags & (O_ACCMODE | O_TRUNC | O_APPEND | O_NONBLOCK);
	/* pipes are always read without blocking here; read() waits, interruptibly */
	if (m->pipe)
		m->flags |= O_NONBLOCK;
	/*
	 * A linked session's trace and trace_pipe merge the kernel instance's
	 * lines, read with this server's rights: only for its own user and root
	 * (docs/design/kernel-timeline.md); others (--allow-other) get fdr's alone.
	 */
	if (fuse_get_context() && fuse_get_context()->uid != geteuid() &&
	    fuse_get_context()->uid != 0)
		m->flags |= FDR_FILE_NO_KERNEL;
	pthread_mutex_lock(&mnt_lock);
	ret = fdr_file_open(mnt_session, m->path, m->flags, &m->f);
	pthread_mutex_unlock(&mnt_lock);
	if (ret) {
		free(m->path);
		free(m);
		return ret;
	}
	m->flags &= ~O_TRUNC; /* a reopen must not clear again */
	fi->fh = (uint64_t)(uintptr_t)m;
	fi->direct_io = 1;
	fi->keep_cache = 0;
	if (m->pipe)
		fi->nonseekable = 1;
	return 0;
}

static int mnt_release(const char *path, struct fuse_file_info *fi)
{
	struct mnt_file *m = (struct mnt_file *)(uintptr_t)fi->fh;

	(void)path;
	pthread_mutex_lock(&mnt_lock);
	poller_del_locked(m);
	fdr_file_close(m->f);
	pthread_mutex_unlock(&mnt_lock);
	free(m->path);
	free(m);
	return 0;
}

/* Read up to @size bytes at the handle's position; mnt_lock held. */
static ssize_t read_here_locked(struct mnt_file *m, char *buf, size_t size)
{
	size_t got = 0;

	while (got < size) {
		ssize_t n = fdr_file_read(m->f, buf + got, size - got);

		if (n < 0)
			return got ? (ssize_t)got : n;
		if (n == 0)
			break;
		got += (size_t)n;
		m->pos += n;
	}
	return (ssize_t)got;
}

/* Move the handle to @off: reopen (content made anew) to go back, read to go on. */
static int seek_locked(struct mnt_file *m, off_t off)
{
	char skip[4096];

	if (off < m->pos) {
		struct fdr_file *f;
		int ret = fdr_file_open(mnt_session, m->path, m->flags, &f);

		if (ret)
			return ret;
		fdr_file_close(m->f);
		m->f = f;
		m->pos = 0;
	}
	while (m->pos < off) {
		size_t want = (size_t)(off - m->pos) < sizeof(skip) ? (size_t)(off - m->pos) :
								      sizeof(skip);
		ssize_t n = read_here_locked(m, skip, want);

		if (n < 0)
			return (int)n;
		if (n == 0)
			break; /* past the end: the read gives 0 */
	}
	return 0;
}

/* A pipe: what is there now, else wait (unless O_NONBLOCK) until something comes. */
static int read_pipe(struct mnt_file *m, char *buf, size_t size, int nonblock)
{
	for (;;) {
		ssize_t n;

		pthread_mutex_lock(&mnt_lock);
		n = fdr_file_read(m->f, buf, size);
		pthread_mutex_unlock(&mnt_lock);
		if (n != -EAGAIN)
			return (int)n;
		if (nonblock)
			return -EAGAIN;
		if (request_abandoned())
			return -EINTR;
		sleep_ms(5);
	}
}

static int mnt_read(const char *path, char *buf, size_t size, off_t off, struct fuse_file_info *fi)
{
	struct mnt_file *m = (struct mnt_file *)(uintptr_t)fi->fh;
	ssize_t n;
	int ret;

	(void)path;
	if (size > INT32_MAX)
		size = INT32_MAX;
	if (m->pipe)
		return read_pipe(m, buf, size, fi->flags & O_NONBLOCK);
	pthread_mutex_lock(&mnt_lock);
	ret = off == m->pos ? 0 : seek_locked(m, off);
	n = ret ? ret : m->pos == off ? read_here_locked(m, buf, size) : 0;
	pthread_mutex_unlock(&mnt_lock);
	return (int)n;
}

static int mnt_write(const char *path, const char *buf, size_t size, off_t off,
		     struct fuse_file_info *fi)
{
	struct mnt_file *m = (struct mnt_file *)(uintptr_t)fi->fh;
	ssize_t n;

	(void)path;
	(void)off; /* tracefs files take each write whole, wherever the offset is */
	if (size > INT32_MAX)
		size = INT32_MAX;
	pthread_mutex_lock(&mnt_lock);
	/* the writer is the caller, not this server: trace_marker names it */
	fdr_file_set_writer(m->f, fuse_get_context() ? fuse_get_context()->pid : 0);
	n = fdr_file_write(m->f, buf, size);
	pthread_mutex_unlock(&mnt_lock);
	return (int)n;
}

static int mnt_poll(const char *path, struct fuse_file_info *fi, struct fuse_pollhandle *ph,
		    unsigned *reventsp)
{
	struct mnt_file *m = (struct mnt_file *)(uintptr_t)fi->fh;
	int acc = m->flags & O_ACCMODE, ready;

	(void)path;
	pthread_mutex_lock(&mnt_lock);
	ready = fdr_file_poll(m->f, 0) > 0;
	poller_del_locked(m); /* a new poll replaces the old one */
	if (ph && !ready) {
		m->ph = ph;
		m->poll_next = mnt_pollers;
		mnt_pollers = m;
		ph = NULL;
	}
	pthread_mutex_unlock(&mnt_lock);
	if (ph)
		fuse_pollhandle_destroy(ph);
	*reventsp = 0;
	if (ready && acc != O_WRONLY)
		*reventsp |= POLLIN | POLLRDNORM;
	if (acc != O_RDONLY)
		*reventsp |= POLLOUT | POLLWRNORM;
	return 0;
}

static const struct fuse_operations mnt_ops = {
	.init = mnt_init,
	.destroy = mnt_destroy,
	.getattr = mnt_getattr,
	.chown = mnt_chown,
	.readdir = mnt_readdir,
	.mkdir = mnt_mkdir,
	.rmdir = mnt_rmdir,
	.create = mnt_create,
	.unlink = mnt_unlink,
	.rename = mnt_rename,
	.truncate = mnt_truncate,
	.utimens = mnt_utimens,
	.open = mnt_open,
	.release = mnt_release,
	.read = mnt_read,
	.write = mnt_write,
	.poll = mnt_poll,
};

/* ---- the server ----------------------------------------------------------------------------- */

static int mount_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int mount_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "fdr mount: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 1;
}

static int in_path(const char *prog)
{
	const char *p = getenv("PATH");
	char file[4096];

	if (!p || !*p)
		p = "/usr/bin:/bin:/usr/sbin:/sbin";
	while (*p) {
		size_t len = strcspn(p, ":");

		if (len &&
		    (size_t)snprintf(file, sizeof(file), "%.*s/%s", (int)len, p, prog) <
			    sizeof(file) &&
		    access(file, X_OK) == 0)
			return 1;
		p += len;
		if (*p == ':')
			p++;
	}
	return 0;
}

/* A name for the mount table (fsname=): "fdr-NAME" when NAME is plain, else "fdr". */
static void fs_name(const char *name, char *buf, size_t len)
{
	const char *c;

	for (c = name; c && *c; c++)
		if (!(*c == '-' || *c == '_' || *c == '.' || (*c >= '0' && *c <= '9') ||
		      (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z')))
			break;
	if (name && *name && !*c)
		snprintf(buf, len, "fdr-%s", name);
	else
		snprintf(buf, len, "fdr");
}

/**
 * fdr_mount_run - serve @s on @mountpoint until unmounted or signalled
 * Returns the exit status of `fdr mount`: 0, or 1 with the reason on stderr.
 * Without @o->foreground it returns (in the parent) once the mount is ready and
 * the server runs on in the background.
 */
int fdr_mount_run(struct fdr_session *s, const char *mountpoint, const struct fdr_mount_opts *o)
{
	char opts[512], name[96];
	const char *argv[8];
	struct fuse_args args;
	struct fuse_loop_config *cfg = NULL;
	struct fuse *fuse = NULL;
	struct stat st;
	int argc = 0, ret = 1, mounted = 0;

	if (stat(mountpoint, &st) < 0)
		return mount_error("%s: %s", mountpoint, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return mount_error("%s: not a directory (expected a directory to mount on)",
				   mountpoint);
	if (access("/dev/fuse", R_OK | W_OK) < 0)
		return mount_error("/dev/fuse: %s: FUSE is not available here (load the fuse "
				   "module; a container needs the device passed in)",
				   strerror(errno));
	if (geteuid() != 0 && !in_path("fusermount3"))
		return mount_error("fusermount3 not found in PATH: a user other than root needs it "
				   "to mount (Debian package fuse3)");

	mnt_session = s;
	mnt_uid = o->uid >= 0 ? (uid_t)o->uid : getuid();
	mnt_gid = o->gid >= 0 ? (gid_t)o->gid : getgid();
	clock_gettime(CLOCK_REALTIME, &mnt_time);
	fs_name(o->name, name, sizeof(name));
	snprintf(opts, sizeof(opts), "fsname=%s,subtype=fdr,default_permissions%s", name,
		 o->allow_other ? ",allow_other" : "");
	argv[argc++] = "fdr";
	argv[argc++] = "-o";
	argv[argc++] = opts;
	if (o->debug)
		argv[argc++] = "-d";
	args = (struct fuse_args)FUSE_ARGS_INIT(argc, (char **)argv);
	fuse = fuse_new(&args, &mnt_ops, sizeof(mnt_ops), NULL);
	if (!fuse) {
		ret = mount_error("cannot set up FUSE (see the message above)");
		goto out;
	}
	if (fuse_mount(fuse, mountpoint) != 0) {
		ret = mount_error("cannot mount on %s: FUSE refused (see the message above; "
				  "mounting may not be permitted here%s)",
				  mountpoint,
				  o->allow_other ? ", and --allow-other needs user_allow_other in "
						   "/etc/fuse.conf" :
						   "");
		goto out;
	}
	mounted = 1;
	/* the mount is ready: in the background, our parent returns now */
	if (fuse_daemonize(o->foreground) != 0) {
		ret = mount_error("cannot go to the background");
		goto out;
	}
	if (fuse_set_signal_handlers(fuse_get_session(fuse)) != 0) {
		ret = mount_error("cannot install signal handlers");
		goto out;
	}
	cfg = fuse_loop_cfg_create();
	if (!cfg) {
		ret = mount_error("out of memory");
		goto out_signals;
	}
	/* each blocked trace_pipe reader holds a thread; leave plenty for the rest */
	fuse_loop_cfg_set_max_threads(cfg, 64);
	fuse_loop_cfg_set_clone_fd(cfg, 0);
	ret = fuse_loop_mt(fuse, cfg);
	/* ended by fusermount3 -u (0) or by a signal (its number): both are clean */
	ret = ret == 0 || ret == SIGINT || ret == SIGTERM || ret == SIGHUP ? 0 : 1;
	fuse_loop_cfg_destroy(cfg);
out_signals:
	fuse_remove_signal_handlers(fuse_get_session(fuse));
out:
	if (mounted)
		fuse_unmount(fuse);
	if (fuse)
		fuse_destroy(fuse);
	fuse_opt_free_args(&args);
	return ret;
}
