// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * session.c - a session is a directory of shared-memory files.
 *
 *   $FDR_ROOT/NAME/          (FDR_ROOT defaults to /dev/shm/fdr-<uid>, mode 0700)
 *       control              struct fdr_abi_control
 *       ring.<inst>.<gen>    one per instance, replaced (gen + 1) on resize
 *
 * Any process may create, open, change or destroy a session; nothing needs a
 * daemon. Changes to the control block are made under a robust process-shared
 * mutex that lives in it, then control.gen is bumped and futex-woken so that
 * every attached process (libfdr's agent thread) resynchronises at once.
 * Files are created under a temporary name and renamed into place, so a process
 * that dies half-way never leaves a half-made file behind a real name; the next
 * process that opens the session removes such leftovers (ses_reap_tmp()).
 *
 * Every byte of a shared file that a writer may store into is allocated when the
 * file is made (posix_fallocate): on a full file system the creator gets ENOSPC,
 * and a traced program never takes SIGBUS on a page of fdr's (docs/design/abi.md).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core-local.h"

#define DEFAULT_BUFFER_KB 1408
#define DEFAULT_SUBBUF 4096

/** fdr_session_root - the directory that holds sessions ($FDR_ROOT or /dev/shm/fdr-UID) */
int fdr_session_root(char *buf, size_t len)
{
	const char *env = getenv("FDR_ROOT");
	int n;

	if (env && *env)
		n = snprintf(buf, len, "%s", env);
	else
		n = snprintf(buf, len, "/dev/shm/fdr-%u", (unsigned)geteuid());
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/** fdr_session_default_name - $FDR_SESSION or "default" */
const char *fdr_session_default_name(void)
{
	const char *env = getenv("FDR_SESSION");

	return env && *env ? env : "default";
}

static int ses_name_ok(const char *name)
{
	size_t i, n = strlen(name);

	if (n == 0 || n >= FDR_NAME_LEN || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		return 0;
	for (i = 0; i < n; i++)
		if (name[i] == '/' || (unsigned char)name[i] < 0x20)
			return 0;
	return 1;
}

/**
 * fdr_session_dir - the directory of session @name
 * @name: session name; one path component, at most 63 bytes
 * Returns 0, -EINVAL (bad name) or -ENAMETOOLONG.
 */
int fdr_session_dir(const char *name, char *buf, size_t len)
{
	char root[PATH_MAX];
	int n, ret;

	if (!ses_name_ok(name))
		return -EINVAL;
	ret = fdr_session_root(root, sizeof(root));
	if (ret)
		return ret;
	n = snprintf(buf, len, "%s/%s", root, name);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/**
 * fdr_session_default_dir - the session an application records into: $FDR_DIR
 * (a session directory anywhere, e.g. on disk) if set, else $FDR_ROOT/$FDR_SESSION
 * Returns 0, -EINVAL (bad $FDR_SESSION) or -ENAMETOOLONG.
 */
int fdr_session_default_dir(char *buf, size_t len)
{
	const char *env = getenv("FDR_DIR");
	int n;

	if (env && *env) {
		n = snprintf(buf, len, "%s", env);
		return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
	}
	return fdr_session_dir(fdr_session_default_name(), buf, len);
}

/* A directory we create or trust must be ours and private. */
static int ses_check_private_dir(const char *path)
{
	struct stat st;

	if (lstat(path, &st) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077))
		return -EPERM;
	return 0;
}

static int ses_mkdir_private(const char *path)
{
	if (mkdir(path, 0700) < 0 && errno != EEXIST)
		return -errno;
	return ses_check_private_dir(path);
}

void fdr_session_lock_init(struct fdr_abi_control *ctl)
{
	pthread_mutexattr_t a;
	pthread_mutex_t *m = (pthread_mutex_t *)(void *)ctl->lock;

	_Static_assert(sizeof(pthread_mutex_t) <= sizeof(ctl->lock), "lock room");
	pthread_mutexattr_init(&a);
	pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
	pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
	pthread_mutex_init(m, &a);
	pthread_mutexattr_destroy(&a);
}

static void ses_instance_defaults(struct fdr_abi_instance *in, const char *name, uint32_t ss,
				  int overwrite)
{
	memset(in, 0, sizeof(*in));
	snprintf(in->name, sizeof(in->name), "%s", name);
	in->tracing_on = 1;
	in->options = FDR_OPT_IRQ_INFO | FDR_OPT_CONTEXT_INFO | FDR_OPT_MARKERS |
		      FDR_OPT_RECORD_CMD | FDR_OPT_ANNOTATE | FDR_OPT_PRINT_PARENT;
	if (overwrite)
		in->options |= FDR_OPT_OVERWRITE;
	in->clock = FDR_CLOCK_LOCAL;
	in->subbuf_size = ss;
	in->buffer_percent = 50;
	memset(in->cpumask, 0xff, sizeof(in->cpumask));
}

/**
 * fdr_session_subbufs_for_kb - sub-buffers per CPU for buffer_size_kb, as the kernel
 * sizes them (ceil(kb * 1024 / (subbuf_size - 16)), at least 2), plus the one the
 * kernel keeps outside the ring for its reader.
 */
uint32_t fdr_session_subbufs_for_kb(uint32_t size_kb, uint32_t subbuf_size)
{
	uint64_t data = subbuf_size - 16;
	uint64_t n = ((uint64_t)size_kb * 1024 + data - 1) / data;

	if (n < 2)
		n = 2;
	return (uint32_t)n + 1;
}

/**
 * fdr_session_max_kb - the largest buffer_size_kb a CPU's buffer can have with
 * sub-buffers of @subbuf_size bytes: its sub-buffers (fdr_session_subbufs_for_kb())
 * must fit in 4 GiB - @subbuf_size, since a writer's head holds a 32-bit offset
 * (fdr_ring_file_create()). About 4177912 KiB with 4 KiB sub-buffers.
 */
uint32_t fdr_session_max_kb(uint32_t subbuf_size)
{
	uint64_t max_subbufs = (1ull << 32) / subbuf_size - 1; /* ring included */

	if (subbuf_size <= 16 || max_subbufs < 3)
		return 0;
	/* subbufs_for_kb() = ceil(kb * 1024 / data) + 1 <= max_subbufs */
	return (uint32_t)((max_subbufs - 1) * (subbuf_size - 16) / 1024);
}

/*
 * What buffer_size_kb reads after @kb is written with sub-buffers of @ss bytes:
 * the capacity of the sub-buffers that takes (100 -> 103 with 4 KiB), as the
 * kernel reads it; kept as the instance's size_kb through later changes of the
 * sub-buffer size, as the kernel keeps it.
 */
static uint32_t ses_kb_held(uint32_t kb, uint32_t ss)
{
	if (ss <= 16 || !kb)
		return 0;
	return (uint32_t)((uint64_t)(fdr_session_subbufs_for_kb(kb, ss) - 1) * (ss - 16) / 1024);
}

static void ses_free(struct fdr_session *s)
{
	uint32_t i;

	if (!s)
		return;
	for (i = 0; i < FDR_MAX_INSTANCES; i++) {
		struct fdr_ring_map *m = atomic_load(&s->rings[i]);

		if (m) {
			munmap(m->base, m->size);
			free(m);
		}
	}
	if (s->ctl)
		munmap(s->ctl, s->ctl_size);
	if (s->dir_fd >= 0)
		close(s->dir_fd);
	free(s);
}

/*
 * Allocate [off, off + len) of a file other processes may be using. fallocate()
 * itself, never glibc's posix_fallocate() fallback, which writes a zero byte
 * into each block it reads as zero and so could undo a concurrent writer's
 * store; where the file system has no fallocate, nothing better can be done.
 */
static int ses_fallocate_shared(int fd, off_t off, off_t len)
{
	if (fallocate(fd, 0, off, len) == 0)
		return 0;
	return errno == EOPNOTSUPP ? 0 : -errno;
}

/*
 * The PID in the name of a creator's temporary file, ".tmp.control.PID" or
 * ".tmp.ring.INST.GEN.PID" (fdr_ring_file_create()); 0 for any other name.
 */
static pid_t ses_tmp_pid(const char *name)
{
	const char *p;
	unsigned long v;
	char *end;
	int dots;

	if (strncmp(name, ".tmp.control.", 13) == 0) {
		p = name + 13;
	} else if (strncmp(name, ".tmp.ring.", 10) == 0) {
		p = name + 10;
		for (dots = 0; dots < 2; dots++) {
			if (!isdigit((unsigned char)*p))
				return 0;
			while (isdigit((unsigned char)*p))
				p++;
			if (*p++ != '.')
				return 0;
		}
	} else {
		return 0;
	}
	if (!isdigit((unsigned char)*p))
		return 0;
	errno = 0;
	v = strtoul(p, &end, 10);
	if (errno || *end || v == 0 || v > INT_MAX)
		return 0;
	return (pid_t)v;
}

/*
 * Remove the temporary files left by creators that died before renaming them
 * (a "fdr start" killed while it allocated a large buffer leaves megabytes).
 * Only our own temporary names, and only when both say the creator is gone: its
 * PID names no process (a live PID, even one reused by another program, keeps
 * the file), and nobody holds the flock() a creator takes on its temporary file
 * for as long as it works on it (the kernel drops it when the creator dies), so
 * a PID that only looks dead (another PID namespace) never loses a file in the
 * making. Best effort: errors leave the file for the next time.
 */
static void ses_reap_tmp(int dir_fd)
{
	struct dirent *de;
	DIR *d;
	/* its own open file: a dup() would move dir_fd's offset for later readers */
	int fd = openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return;
	}
	while ((de = readdir(d))) {
		pid_t pid = ses_tmp_pid(de->d_name);
		int tfd;

		if (!pid || pid == getpid() || kill(pid, 0) == 0 || errno != ESRCH)
			continue;
		tfd = openat(dir_fd, de->d_name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
		if (tfd < 0)
			continue;
		if (flock(tfd, LOCK_EX | LOCK_NB) == 0)
			unlinkat(dir_fd, de->d_name, 0);
		close(tfd);
	}
	closedir(d);
}

/**
 * fdr_session_open - attach to an existing session
 * @dir: the session directory
 * @out: the session; fdr_session_close() it
 *
 * The control file's header is checked once here (fdr_shm_check_control()).
 * Returns 0, -ENOENT (no session there), -EPERM (not a private directory of
 * ours), -EUCLEAN (the control file is not a valid fdr session; what is wrong in
 * fdr_shm_error()), -ENOMEM.
 */
int fdr_session_open(const char *dir, struct fdr_session **out)
{
	struct fdr_session *s;
	struct stat st;
	int fd = -1, ret;
	void *p;

	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->dir_fd = -1;
	snprintf(s->dir, sizeof(s->dir), "%s", dir);
	ret = ses_check_private_dir(dir);
	if (ret)
		goto err;
	s->dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (s->dir_fd < 0) {
		ret = -errno;
		goto err;
	}
	ses_reap_tmp(s->dir_fd);
	fd = openat(s->dir_fd, "control", O_RDWR | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		ret = -errno;
		goto err;
	}
	if (fstat(fd, &st) < 0) {
		ret = -errno;
		goto err;
	}
	/* the header is mapped first: a session of another ABI version may be smaller */
	if ((size_t)st.st_size < offsetof(struct fdr_abi_control, instances)) {
		ret = fdr_shm_errorf("control: file size %llu is smaller than %zu",
				     (unsigned long long)st.st_size,
				     offsetof(struct fdr_abi_control, instances));
		goto err;
	}
	p = mmap(NULL, st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		ret = -errno;
		goto err;
	}
	s->ctl = p;
	s->ctl_size = st.st_size;
	ret = fdr_shm_check_control(s->ctl, (uint64_t)st.st_size);
	if (ret)
		goto err;
	/*
	 * A control file with holes (made by an older fdr, or copied with cp,
	 * which turns zero pages into holes) is allocated now, so that nobody
	 * takes SIGBUS on it when the file system fills; -ENOSPC if it cannot be.
	 */
	if ((uint64_t)st.st_blocks * 512 < (uint64_t)st.st_size) {
		ret = ses_fallocate_shared(fd, 0, st.st_size);
		if (ret)
			goto err;
	}
	s->session_id = s->ctl->session_id;
	close(fd);
	*out = s;
	return 0;
err:
	if (fd >= 0)
		close(fd);
	ses_free(s);
	return ret;
}

static uint32_t ses_nr_cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_CONF);

	if (n < 1)
		n = 1;
	if (n > FDR_MAX_CPUS)
		n = FDR_MAX_CPUS;
	return (uint32_t)n;
}

static int ses_make_ring(int dir_fd, uint32_t inst, uint32_t gen, uint32_t nr_cpus, uint32_t kb,
			 uint32_t ss)
{
	uint32_t *nr = calloc(nr_cpus, sizeof(*nr));
	uint32_t i;
	int ret;

	if (!nr)
		return -ENOMEM;
	for (i = 0; i < nr_cpus; i++)
		nr[i] = fdr_session_subbufs_for_kb(kb, ss);
	ret = fdr_ring_file_create(dir_fd, inst, gen, nr_cpus, ss, nr, 0);
	free(nr);
	return ret;
}

/*
 * fdr's own record types, registered in every new session: ftrace:print
 * (trace_marker) and ftrace:user_stack (stacktrace triggers), laid out as the
 * kernel's. Each has two fields after the common header.
 */
static const struct {
	uint32_t id;
	const char *name;
	uint32_t payload_size;
	struct {
		const char *name, *type;
		uint16_t offset, size;
		uint8_t kind;
	} f[2];
} ses_builtins[] = {
	{ FDR_EVENT_ID_PRINT,
	  "print",
	  16,
	  { { "ip", "unsigned long", 8, 8, FDR_KIND_ULONG_IP },
	    { "buf", "char", 16, 0, FDR_KIND_TAIL_CHARS } } },
	{ FDR_EVENT_ID_USER_STACK,
	  "user_stack",
	  16 + 8 * FDR_STACK_DEPTH,
	  { { "tgid", "unsigned int", 8, 4, FDR_KIND_INT },
	    { "caller", "unsigned long", 16, 8 * FDR_STACK_DEPTH, FDR_KIND_ULONG_ARRAY } } },
};

static void ses_builtin_events(struct fdr_abi_control *c)
{
	uint32_t i, k;

	for (i = 0; i < sizeof(ses_builtins) / sizeof(ses_builtins[0]); i++) {
		struct fdr_abi_event *e = &c->events[i];

		e->id = ses_builtins[i].id;
		snprintf(e->system, sizeof(e->system), "ftrace");
		snprintf(e->name, sizeof(e->name), "%s", ses_builtins[i].name);
		e->nr_fields = 2;
		e->payload_size = ses_builtins[i].payload_size;
		for (k = 0; k < 2; k++) {
			struct fdr_abi_field *f = &e->fields[k];

			snprintf(f->name, sizeof(f->name), "%s", ses_builtins[i].f[k].name);
			snprintf(f->type, sizeof(f->type), "%s", ses_builtins[i].f[k].type);
			f->offset = ses_builtins[i].f[k].offset;
			f->size = ses_builtins[i].f[k].size;
			f->kind = ses_builtins[i].f[k].kind;
		}
		e->state = FDR_EVENT_READY;
		c->nr_events = i + 1;
	}
}

/**
 * fdr_session_create - create a session, or open it if it exists
 * @dir: the session directory (its parent is created 0700 if missing)
 * @o: options for a new session, or NULL for the defaults
 * @out: the session; fdr_session_close() it
 *
 * The control file and the top instance's ring file are allocated whole before
 * the session appears, so a full file system fails here with -ENOSPC and leaves
 * nothing behind (the directory too is removed if this call made it), never
 * later in a writer.
 *
 * Returns 0, -EPERM (a directory on the way is not private to us), -EINVAL (bad
 * option), -ENOSPC (the file system is full), -ENOMEM, or the errors of
 * fdr_session_open().
 */
int fdr_session_create(const char *dir, const struct fdr_session_opts *o, struct fdr_session **out)
{
	char parent[PATH_MAX], tmp[64];
	struct fdr_abi_control *c = MAP_FAILED;
	uint32_t kb = o && o->buffer_size_kb ? o->buffer_size_kb : DEFAULT_BUFFER_KB;
	uint32_t ss = o && o->subbuf_size ? o->subbuf_size : DEFAULT_SUBBUF;
	int overwrite = !o || o->overwrite >= 0;
	int dir_fd = -1, fd = -1, ret, made_dir = 0, made_ring = 0;
	char *slash;

	snprintf(parent, sizeof(parent), "%s", dir);
	slash = strrchr(parent, '/');
	if (slash && slash != parent) {
		*slash = 0;
		if (!getenv("FDR_ROOT") || strcmp(parent, getenv("FDR_ROOT")) == 0) {
			char root[PATH_MAX];

			if (fdr_session_root(root, sizeof(root)) == 0 &&
			    strcmp(root, parent) == 0) {
				ret = ses_mkdir_private(parent);
				if (ret)
					return ret;
			}
		}
	}
	if (mkdir(dir, 0700) == 0)
		made_dir = 1;
	else if (errno != EEXIST)
		return -errno;
	ret = ses_check_private_dir(dir);
	if (ret)
		return ret;
	ret = fdr_session_open(dir, out);
	if (ret != -ENOENT)
		return ret;

	dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dir_fd < 0) {
		ret = -errno;
		goto out;
	}
	snprintf(tmp, sizeof(tmp), ".tmp.control.%d", (int)getpid());
	fd = openat(dir_fd, tmp, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		ret = -errno;
		goto out;
	}
	/* held while we work on it: ses_reap_tmp() leaves the file alone */
	flock(fd, LOCK_EX);
	/*
	 * Every page of the control block, not only those written here: writers
	 * store into it later (the event path's routes, cmdlines, the registry),
	 * and a page first touched on a full file system is a SIGBUS in them.
	 */
	ret = -posix_fallocate(fd, 0, sizeof(*c));
	if (ret)
		goto out;
	/* The top instance's ring: the control file's rename publishes both. */
	ret = ses_make_ring(dir_fd, 0, 0, ses_nr_cpus(), kb, ss);
	if (ret)
		goto out;
	made_ring = 1;
	c = mmap(NULL, sizeof(*c), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (c == MAP_FAILED) {
		ret = -errno;
		goto out;
	}
	c->struct_size = sizeof(*c);
	c->version = FDR_ABI_VERSION;
	c->state = FDR_SESSION_LIVE;
	c->nr_cpus = ses_nr_cpus();
	c->creator_pid = getpid();
	c->cmdline_size = FDR_CMDLINE_SLOTS;
	c->next_event_id = FDR_EVENT_ID_FIRST_USER;
	if (getrandom(&c->session_id, sizeof(c->session_id), 0) != sizeof(c->session_id))
		c->session_id = fdr_rdtsc() ^ ((uint64_t)getpid() << 32);
	if (fdr_clock_tsc_usable()) {
		c->ts_source = FDR_TS_TSC;
		c->tsc_khz = fdr_clock_calibrate_khz();
	} else {
		c->ts_source = FDR_TS_MONO;
	}
	fdr_clock_point(&c->cal_tsc, &c->cal_mono_ns, &c->cal_boot_ns);
	c->cal_real_ns = fdr_clock_real_ns();
	c->created_mono_ns = c->cal_mono_ns;

	fdr_clock_boot_id(c->boot_id, sizeof(c->boot_id));
	fdr_session_lock_init(c);
	ses_instance_defaults(&c->instances[0], "", ss, overwrite);
	c->instances[0].size_kb = ses_kb_held(kb, ss);
	c->instances[0].state = FDR_INST_LIVE;
	ses_builtin_events(c);
	/* release: the magic last; fdr_session_open() checks it */
	__atomic_store_n(&c->magic, FDR_ABI_MAGIC_CONTROL, __ATOMIC_RELEASE);
	if (msync(c, sizeof(*c), MS_SYNC) < 0) {
		ret = -errno;
		goto out;
	}
	if (renameat2(dir_fd, tmp, dir_fd, "control", RENAME_NOREPLACE) < 0) {
		ret = -errno;
		unlinkat(dir_fd, tmp, 0);
		if (ret != -EEXIST)
			goto out;
		/* somebody else created it first: use theirs */
	}
	ret = fdr_session_open(dir, out);
out:
	if (c != MAP_FAILED)
		munmap(c, sizeof(*c));
	if (fd >= 0) {
		unlinkat(dir_fd, tmp, 0);
		close(fd);
	}
	/* a ring without a control file is nobody's: give its memory back */
	if (ret && made_ring && faccessat(dir_fd, "control", F_OK, AT_SYMLINK_NOFOLLOW) != 0)
		unlinkat(dir_fd, "ring.0.0", 0);
	if (dir_fd >= 0)
		close(dir_fd);
	if (ret && made_dir)
		rmdir(dir); /* fails, as it should, if anything else is there */
	return ret;
}

/** fdr_session_close - detach; NULL is a no-op. The session itself stays. */
void fdr_session_close(struct fdr_session *s)
{
	ses_free(s);
}

/** fdr_session_control - the control block; borrowed, valid until close */
struct fdr_abi_control *fdr_session_control(struct fdr_session *s)
{
	return s->ctl;
}

/** fdr_session_path - the session directory; borrowed */
const char *fdr_session_path(struct fdr_session *s)
{
	return s->dir;
}

/* A robust mutex whose owner thread id names no thread here. (glibc's layout.) */
static int ses_lock_orphaned(pthread_mutex_t *m)
{
	int owner = m->__data.__owner & 0x3fffffff; /* FUTEX_TID_MASK */

	return owner > 0 && kill(owner, 0) < 0 && errno == ESRCH;
}

/**
 * fdr_session_lock - take the control lock (robust: a dead holder's lock is
 * recovered). Waits at most 2 s, then returns -ETIMEDOUT.
 */
int fdr_session_lock(struct fdr_session *s)
{
	pthread_mutex_t *m = (pthread_mutex_t *)(void *)s->ctl->lock;
	struct timespec ts;
	int ret;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 2;
	ret = pthread_mutex_timedlock(m, &ts);
	if (ret == EOWNERDEAD) {
		pthread_mutex_consistent(m);
		ret = 0;
	}
	if (ret == ETIMEDOUT && ses_lock_orphaned(m)) {
		/*
		 * The owner does not exist on this system: a session copied from
		 * another machine, or restored from disk, while its lock was held.
		 * Nobody can release it, so it is made anew.
		 */
		fdr_session_lock_init(s->ctl);
		ret = pthread_mutex_lock(m);
		if (ret == EOWNERDEAD) {
			pthread_mutex_consistent(m);
			ret = 0;
		}
	}
	return -ret;
}

void fdr_session_unlock(struct fdr_session *s)
{
	pthread_mutex_unlock((pthread_mutex_t *)(void *)s->ctl->lock);
}

/** fdr_session_changed - tell every attached process that the control block changed */
void fdr_session_changed(struct fdr_session *s)
{
	/* release: pairs with the acquire load of gen in the agent */
	__atomic_fetch_add(&s->ctl->gen, 1, __ATOMIC_RELEASE);
	syscall(SYS_futex, &s->ctl->gen, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

/**
 * fdr_session_destroy - remove the session: attached processes detach within
 * their next wake-up, and the files are unlinked. @s stays valid until closed.
 */
int fdr_session_destroy(struct fdr_session *s)
{
	DIR *d;
	struct dirent *de;
	int fd;

	__atomic_store_n(&s->ctl->state, FDR_SESSION_DESTROYED, __ATOMIC_RELEASE);
	fdr_session_changed(s);
	fd = dup(s->dir_fd);
	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -errno;
	}
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			unlinkat(s->dir_fd, de->d_name, 0);
	closedir(d);
	if (rmdir(s->dir) < 0)
		return -errno;
	return 0;
}

/*
 * What writers may store into in ring file @m is allocated: the headers, each
 * CPU's live buffer and, while the snapshot is allocated, its spare. A file
 * fdr made is (fdr_ring_file_create()); one copied with cp, which turns zero
 * pages into holes, may not be, and is allocated here. Returns 0 or -ENOSPC
 * (or another errno of fallocate()).
 */
static int ses_ring_allocated(struct fdr_session *s, const struct fdr_ring_map *m)
{
	int spare = !!__atomic_load_n(&m->hdr->spare_allocated, __ATOMIC_ACQUIRE);
	/* a CPU disabled at map time has no buffer (ring_bytes 0): the checked header size */
	off_t hdr = m->pcpu[0].buf[0].ring_bytes ?
			    (off_t)(m->pcpu[0].buf[0].data - (unsigned char *)m->base) :
			    (off_t)m->hdr_bytes;
	uint64_t need = (uint64_t)hdr;
	uint32_t cpu, bi;
	struct stat st;
	char name[64];
	int fd, ret = 0;

	for (cpu = 0; cpu < m->nr_cpus; cpu++)
		need += m->pcpu[cpu].buf[0].ring_bytes * (spare ? 2 : 1);
	snprintf(name, sizeof(name), "ring.%u.%u", m->instance, m->gen);
	fd = openat(s->dir_fd, name, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || (uint64_t)st.st_blocks * 512 >= need)
		goto out;
	/* the headers (everything before the first buffer), then each CPU's buffers */
	ret = ses_fallocate_shared(fd, 0, hdr);
	for (cpu = 0; cpu < m->nr_cpus && !ret; cpu++) {
		const struct fdr_pcpu *pc = &m->pcpu[cpu];
		uint32_t live = __atomic_load_n(pc->active, __ATOMIC_ACQUIRE) & 1;

		for (bi = 0; bi < FDR_RING_BUFS && !ret; bi++)
			if ((bi == live || spare) && pc->buf[bi].ring_bytes)
				ret = ses_fallocate_shared(
					fd, (off_t)(pc->buf[bi].data - (unsigned char *)m->base),
					(off_t)pc->buf[bi].ring_bytes);
	}
out:
	close(fd);
	return ret;
}

/* Returns the current mapping of an instance's ring, remapping after a resize. */
struct fdr_ring_map *fdr_session_ring_map(struct fdr_session *s, uint32_t inst, int *err)
{
	struct fdr_ring_map *m = atomic_load(&s->rings[inst]), *nm;
	uint32_t gen = __atomic_load_n(&s->ctl->instances[inst].ring_gen, __ATOMIC_ACQUIRE);
	int ret;

	if (m && m->gen == gen)
		return m;
	ret = fdr_ring_map_open(s, inst, gen, &nm);
	if (!ret) {
		ret = ses_ring_allocated(s, nm);
		if (ret) {
			munmap(nm->base, nm->size);
			free(nm);
		}
	}
	if (ret) {
		*err = ret;
		return NULL;
	}
	if (atomic_compare_exchange_strong(&s->rings[inst], &m, nm)) {
		fdr_ring_map_retire(m);
		return nm;
	}
	munmap(nm->base, nm->size);
	free(nm);
	return atomic_load(&s->rings[inst]);
}

/**
 * fdr_session_ring - the mapped ring file of an instance, for readers
 * @base, @size: the whole file mapping, borrowed until close or the next call
 * Returns 0, -ENOENT (no such instance) or an error of mapping the file.
 */
int fdr_session_ring(struct fdr_session *s, uint32_t inst, void **base, size_t *size)
{
	struct fdr_ring_map *m;
	int err = -EIO;

	if (inst >= FDR_MAX_INSTANCES || s->ctl->instances[inst].state != FDR_INST_LIVE)
		return -ENOENT;
	m = fdr_session_ring_map(s, inst, &err);
	if (!m)
		return err;
	*base = m->base;
	*size = m->size;
	return 0;
}

/**
 * fdr_session_resize - give an instance new buffers (the recorded data is dropped)
 * @inst: instance
 * @cpu: one CPU, or -1 for all
 * @size_kb: buffer_size_kb per CPU, or 0 to keep each CPU's
 * @subbuf_size: bytes, or 0 to keep
 * Caller holds the lock. Returns 0, -EINVAL, -ENOMEM, -ENOSPC.
 */
int fdr_session_resize(struct fdr_session *s, uint32_t inst, int cpu, uint32_t size_kb,
		       uint32_t subbuf_size)
{
	struct fdr_abi_instance *in = &s->ctl->instances[inst];
	uint32_t nr_cpus = s->ctl->nr_cpus, i, gen = in->ring_gen + 1;
	uint32_t ss = subbuf_size ? subbuf_size : in->subbuf_size;
	uint32_t *nr;
	void *base;
	size_t size;
	int ret;
	char name[64];

	ret = fdr_session_ring(s, inst, &base, &size);
	if (ret)
		return ret;
	nr = calloc(nr_cpus, sizeof(*nr));
	if (!nr)
		return -ENOMEM;
	for (i = 0; i < nr_cpus; i++) {
		struct fdr_ring_map *m = atomic_load(&s->rings[inst]);
		const struct fdr_pcpu *pc = &m->pcpu[i];
		uint32_t old_kb =
			(uint32_t)((uint64_t)(pc->nr_subbufs - 1) * (pc->subbuf_size - 16) / 1024);

		/*
		 * A CPU sized by the instance's buffer_size_kb keeps that size, not
		 * the rounded-up size of its geometry: changing the sub-buffer size
		 * back and forth does not make it grow (the kernel keeps 1410 KiB
		 * through 8, 16, 4, 64 and 4 KiB sub-buffers; this did 1410, 1413,
		 * 1422, 1422, 1471, 1474).
		 */
		if (in->size_kb &&
		    pc->nr_subbufs == fdr_session_subbufs_for_kb(in->size_kb, pc->subbuf_size))
			old_kb = in->size_kb;

		if ((cpu < 0 || (uint32_t)cpu == i) && size_kb)
			nr[i] = fdr_session_subbufs_for_kb(size_kb, ss);
		else
			nr[i] = fdr_session_subbufs_for_kb(old_kb ? old_kb : 1, ss);
	}
	/* resizes are mirrored to the snapshot buffers, as in the kernel */
	ret = fdr_ring_file_create(s->dir_fd, inst, gen, nr_cpus, ss, nr,
				   (int)atomic_load(&s->rings[inst])->hdr->spare_allocated);
	free(nr);
	if (ret)
		return ret;
	in->subbuf_size = ss;
	if (cpu < 0 && size_kb)
		in->size_kb = ses_kb_held(size_kb, ss);
	__atomic_store_n(&in->ring_gen, gen, __ATOMIC_RELEASE);
	snprintf(name, sizeof(name), "ring.%u.%u", inst, gen - 1);
	unlinkat(s->dir_fd, name, 0);
	fdr_session_changed(s);
	return 0;
}

/**
 * fdr_session_snapshot - take a snapshot of an instance (swap live and spare
 * buffers of one CPU, or all with @cpu = -1). Async-signal-safe, lock-free.
 * Returns 0, -ENODEV (snapshot not allocated), -EBUSY (a swap in progress),
 * -ENOENT (no such instance), or an error mapping the ring.
 */
int fdr_session_snapshot(struct fdr_session *s, uint32_t inst, int cpu)
{
	struct fdr_ring_map *m;
	int err = -EIO;

	if (inst >= FDR_MAX_INSTANCES || s->ctl->instances[inst].state != FDR_INST_LIVE)
		return -ENOENT;
	m = atomic_load(&s->rings[inst]);
	if (!m || m->gen != __atomic_load_n(&s->ctl->instances[inst].ring_gen, __ATOMIC_ACQUIRE))
		m = fdr_session_ring_map(s, inst, &err);
	if (!m)
		return err;
	return fdr_ring_swap(m, cpu);
}

/*
 * Before the spare buffers' memory is released: a swap in progress ends (at most
 * 100 ms, then it is a dead one), and writers that were inside their critical
 * section at the last swap have finished into what became the spare (2 ms after
 * it, as the snapshot reader waits; see rd_snapshot_settle() in lib/ctl/reader.c).
 * Otherwise such a writer would store into a released page and fault it back in.
 */
static void ses_swap_settle(struct fdr_ring_map *m)
{
	uint64_t last = 0, now, age;
	uint32_t cpu;
	int k;

	for (k = 0; k < 100 && (__atomic_load_n(&m->hdr->snap_seq, __ATOMIC_ACQUIRE) & 1); k++) {
		struct timespec d = { 0, 1000 * 1000 };

		nanosleep(&d, NULL);
	}
	for (cpu = 0; cpu < m->nr_cpus; cpu++) {
		uint64_t t = __atomic_load_n(&m->pcpu[cpu].cpu[0]->swap_ns, __ATOMIC_ACQUIRE);

		if (t > last)
			last = t;
	}
	now = fdr_lease_ns(m->lease_mult);
	age = last ? fdr_lease_age(now, last) : UINT64_MAX;
	if (age < 2000000) {
		struct timespec d = { 0, (long)(2000000 - age) };

		nanosleep(&d, NULL);
	}
}

/**
 * fdr_session_snapshot_alloc - back the snapshot buffers of an instance with
 * memory (@on = 1) or release them (@on = 0: the snapshot's contents are lost).
 * @s: session
 * @inst: instance
 * @on: 1 to allocate, 0 to free
 *
 * Allocation is all or nothing: when the file system (tmpfs: memory) cannot
 * hold every CPU's spare buffer, what was allocated for the others is given back
 * and the instance stays without snapshot buffers. Caller holds the lock.
 *
 * Returns 0, -ENOSPC (no room for them in the session's file system), -ENOENT
 * (no such instance), or another negative errno of fallocate().
 */
int fdr_session_snapshot_alloc(struct fdr_session *s, uint32_t inst, int on)
{
	struct fdr_ring_map *m;
	char name[64];
	uint32_t cpu, k;
	int fd, err = -EIO, ret = 0;

	if (inst >= FDR_MAX_INSTANCES || s->ctl->instances[inst].state != FDR_INST_LIVE)
		return -ENOENT;
	m = fdr_session_ring_map(s, inst, &err);
	if (!m)
		return err;
	if (!!m->hdr->spare_allocated == !!on)
		return 0;
	snprintf(name, sizeof(name), "ring.%u.%u", inst, m->gen);
	fd = openat(s->dir_fd, name, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (!on) {
		__atomic_store_n(&m->hdr->spare_allocated, 0, __ATOMIC_RELAXED);
		/*
		 * seq_cst fence, paired with the one in fdr_ring_swap() after it
		 * makes snap_seq odd: a swap either sees the clear and backs out, or
		 * we see its odd seq below and wait for it to end.
		 */
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		ses_swap_settle(m);
	}
	for (cpu = 0; cpu < m->nr_cpus && !ret; cpu++) {
		struct fdr_pcpu *pc = &m->pcpu[cpu];
		uint32_t spare = (__atomic_load_n(pc->active, __ATOMIC_ACQUIRE) & 1) ^ 1;
		off_t off = (off_t)(pc->buf[spare].data - (unsigned char *)m->base);
		off_t len = (off_t)pc->buf[spare].ring_bytes;

		if (on) {
			ret = -posix_fallocate(fd, off, len);
			if (!ret)
				fdr_ring_buffer_reset(pc->cpu[spare], pc->buf[spare].data);
			continue;
		}
		/*
		 * Reset first, then release: zero pages read as an empty buffer, and
		 * nothing stores into the released pages (on a full file system that
		 * store would be a SIGBUS here).
		 */
		fdr_ring_buffer_reset(pc->cpu[spare], pc->buf[spare].data);
		if (fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off, len) < 0)
			ret = -errno;
	}
	if (ret && on) {
		/* all or nothing: release the spare buffers allocated above */
		for (k = 0; k < cpu; k++) {
			struct fdr_pcpu *pc = &m->pcpu[k];
			uint32_t spare = (__atomic_load_n(pc->active, __ATOMIC_ACQUIRE) & 1) ^ 1;

			fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
				  (off_t)(pc->buf[spare].data - (unsigned char *)m->base),
				  (off_t)pc->buf[spare].ring_bytes);
		}
	}
	close(fd);
	if (!ret && on)
		__atomic_store_n(&m->hdr->spare_allocated, 1, __ATOMIC_RELEASE);
	fdr_session_changed(s);
	return ret;
}

/**
 * fdr_session_instance_new - create instance @name (caller holds the lock)
 * Returns 0, -EEXIST, -EINVAL (bad name), -ENOSPC (all slots used), -ENOMEM.
 */
int fdr_session_instance_new(struct fdr_session *s, const char *name, uint32_t *out)
{
	struct fdr_abi_instance *top = &s->ctl->instances[0];
	uint32_t i, slot = 0;
	int ret;

	if (!ses_name_ok(name))
		return -EINVAL;
	for (i = 1; i < FDR_MAX_INSTANCES; i++) {
		struct fdr_abi_instance *in = &s->ctl->instances[i];

		if (in->state == FDR_INST_LIVE && strncmp(in->name, name, sizeof(in->name)) == 0)
			return -EEXIST;
		if (in->state == FDR_INST_FREE && !slot)
			slot = i;
	}
	if (!slot)
		return -ENOSPC;
	{
		struct fdr_abi_instance *in = &s->ctl->instances[slot];
		uint32_t gen = in->ring_gen + 1;

		ret = ses_make_ring(s->dir_fd, slot, gen, s->ctl->nr_cpus, DEFAULT_BUFFER_KB,
				    DEFAULT_SUBBUF);
		if (ret)
			return ret;
		ses_instance_defaults(in, name, DEFAULT_SUBBUF, 1);
		in->size_kb = ses_kb_held(DEFAULT_BUFFER_KB, DEFAULT_SUBBUF);
		/* the kernel starts an instance with event-fork off, whatever the top's */
		in->options = top->options & ~(FDR_OPT_RECORD_CMD | FDR_OPT_EVENT_FORK);
		memset(&s->ctl->inst_ext[slot], 0, sizeof(s->ctl->inst_ext[slot]));
		in->ring_gen = gen;
		__atomic_store_n(&in->state, FDR_INST_LIVE, __ATOMIC_RELEASE);
	}
	fdr_session_changed(s);
	*out = slot;
	return 0;
}

/** fdr_session_instance_free - remove an instance (caller holds the lock) */
int fdr_session_instance_free(struct fdr_session *s, uint32_t inst)
{
	struct fdr_abi_instance *in;
	char name[64];
	uint32_t i;

	if (inst == 0 || inst >= FDR_MAX_INSTANCES)
		return -EINVAL;
	in = &s->ctl->instances[inst];
	if (in->state != FDR_INST_LIVE)
		return -ENOENT;
	for (i = 0; i < FDR_MAX_EVENTS; i++)
		__atomic_fetch_and(&s->ctl->events[i].enabled[inst / 64], ~(1ull << (inst % 64)),
				   __ATOMIC_RELEASE);
	__atomic_store_n(&in->state, FDR_INST_FREE, __ATOMIC_RELEASE);
	snprintf(name, sizeof(name), "ring.%u.%u", inst, in->ring_gen);
	unlinkat(s->dir_fd, name, 0);
	fdr_session_changed(s);
	return 0;
}

/**
 * fdr_session_write - record one event payload (common header included) into an
 * instance, as a writer on this CPU. Used for trace_marker by the CLI and FUSE.
 * Returns 0, -EBADF (tracing off), or the errors of the ring writer.
 */
int fdr_session_write(struct fdr_session *s, uint32_t inst, const void *payload, size_t len)
{
	unsigned char rec[FDR_MAX_RECORD + 32] __attribute__((aligned(8)));
	struct fdr_abi_rec *r = (void *)rec;
	struct fdr_ring_map *m;
	size_t total = (sizeof(*r) + len + 7) & ~(size_t)7;
	int err = -EIO;

	if (inst >= FDR_MAX_INSTANCES || s->ctl->instances[inst].state != FDR_INST_LIVE)
		return -ENOENT;
	if (!s->ctl->instances[inst].tracing_on)
		return -EBADF;
	if (len > FDR_MAX_RECORD)
		return -E2BIG;
	m = fdr_session_ring_map(s, inst, &err);
	if (!m)
		return err;
	memset(rec, 0, total);
	r->len_type = (uint32_t)total | FDR_REC_DATA << FDR_REC_TYPE_SHIFT;
	memcpy(rec + sizeof(*r), payload, len);
	if (__atomic_load_n(&s->ctl->hooks_active, __ATOMIC_ACQUIRE)) {
		/* filters and triggers of the record's event (ftrace:print for markers) */
		uint64_t mask[FDR_MAX_INSTANCES / 64] = { 0 };
		const struct fdr_common *c = payload;
		uint32_t slot;

		for (slot = 0; slot < FDR_MAX_EVENTS; slot++)
			if (s->ctl->events[slot].state == FDR_EVENT_READY &&
			    s->ctl->events[slot].id == c->type)
				break;
		if (slot < FDR_MAX_EVENTS) {
			mask[inst / 64] = 1ull << (inst % 64);
			fdr_hooks_commit(s, mask, slot, rec, total);
			return 0;
		}
	}
	return fdr_ring_write(s, inst, m, rec, total);
}

/**
 * fdr_session_error - append an entry to an instance's error_log, the tracefs way:
 *   LOCATION: error: MSG
 *     Command: CMD
 *                ^          (under byte @pos of CMD; no caret line if pos < 0)
 */
int fdr_session_error(struct fdr_session *s, uint32_t inst, const char *location, const char *msg,
		      const char *cmd, int pos)
{
	struct fdr_abi_instance *in;
	struct fdr_abi_error *e;
	int n;

	if (inst >= FDR_MAX_INSTANCES)
		return -EINVAL;
	in = &s->ctl->instances[inst];
	e = &in->errors[in->error_seq % FDR_ERROR_LOG_ENTRIES];
	n = snprintf(e->text, sizeof(e->text), "%s: error: %s\n  Command: %.*s\n", location, msg,
		     (int)strcspn(cmd, "\n"), cmd);
	if (n > 0 && (size_t)n < sizeof(e->text) && pos >= 0) {
		int col = 11 + pos;

		if ((size_t)n + col + 2 < sizeof(e->text)) {
			memset(e->text + n, ' ', col);
			n += col;
			e->text[n++] = '^';
			e->text[n++] = '\n';
			e->text[n] = 0;
		}
	}
	if (n < 0 || (size_t)n >= sizeof(e->text))
		n = (int)strlen(e->text);
	e->len = (uint32_t)n;
	e->ts_ns = fdr_clock_mono_ns();
	in->error_seq++;
	e->seq = in->error_seq;
	return 0;
}

/**
 * fdr_event_rule_match - does a set_event rule select SYSTEM:EVENT?
 * Rules: "SYS:EVENT", "SYS:*", "SYS:", "*:EVENT", ":EVENT", "*:*", "*:", ":", or a bare NAME that
 * names a system or an event. Each part may be a glob (an fdr extension).
 */
int fdr_event_rule_match(const char *rule, const char *system, const char *event)
{
	const char *colon = strchr(rule, ':');
	char sys[FDR_RULE_LEN];
	const char *ev;

	if (!colon)
		return fnmatch(rule, system, 0) == 0 || fnmatch(rule, event, 0) == 0;
	if ((size_t)(colon - rule) >= sizeof(sys))
		return 0;
	memcpy(sys, rule, colon - rule);
	sys[colon - rule] = 0;
	ev = colon + 1;
	if (*ev == 0)
		ev = "*";
	if (sys[0] == 0) /* ":EVENT": any system, as the kernel reads it */
		return fnmatch(ev, event, 0) == 0;
	return fnmatch(sys, system, 0) == 0 && fnmatch(ev, event, 0) == 0;
}

/** fdr_session_apply_pending - enable event @slot where pending rules select it (locked) */
void fdr_session_apply_pending(struct fdr_session *s, uint32_t slot)
{
	struct fdr_abi_event *e = &s->ctl->events[slot];
	uint32_t i, r;

	for (i = 0; i < FDR_MAX_INSTANCES; i++) {
		struct fdr_abi_instance *in = &s->ctl->instances[i];
		uint32_t n = in->nr_pending < FDR_PENDING_RULES ? in->nr_pending :
								  FDR_PENDING_RULES;

		if (in->state != FDR_INST_LIVE)
			continue;
		for (r = 0; r < n; r++) {
			char rule[FDR_RULE_LEN];

			memcpy(rule, in->pending[r], sizeof(rule));
			rule[sizeof(rule) - 1] = 0;
			if (fdr_event_rule_match(rule, e->system, e->name))
				__atomic_fetch_or(&e->enabled[i / 64], 1ull << (i % 64),
						  __ATOMIC_RELEASE);
		}
	}
}

/**
 * fdr_session_register_event - find or add an event in the registry (locked)
 * @tmpl: system, name, layout_hash and format; id and state are ignored
 * @slot_out: its slot
 * Returns 0, -EEXIST (same name, different layout), -ENOSPC (registry full).
 */
int fdr_session_register_event(struct fdr_session *s, const struct fdr_abi_event *tmpl,
			       uint32_t *slot_out)
{
	struct fdr_abi_control *c = s->ctl;
	uint32_t i, free_slot = FDR_MAX_EVENTS;

	for (i = 0; i < FDR_MAX_EVENTS; i++) {
		struct fdr_abi_event *e = &c->events[i];

		if (e->state != FDR_EVENT_READY) {
			if (free_slot == FDR_MAX_EVENTS)
				free_slot = i;
			continue;
		}
		if (strncmp(e->system, tmpl->system, FDR_NAME_LEN) == 0 &&
		    strncmp(e->name, tmpl->name, FDR_NAME_LEN) == 0) {
			if (e->layout_hash != tmpl->layout_hash)
				return -EEXIST;
			*slot_out = i;
			return 0;
		}
	}
	if (free_slot == FDR_MAX_EVENTS || c->next_event_id > 0xffff)
		return -ENOSPC;
	{
		struct fdr_abi_event *e = &c->events[free_slot];

		memcpy(e, tmpl, sizeof(*e));
		memset(e->enabled, 0, sizeof(e->enabled));
		e->id = c->next_event_id++;
		__atomic_store_n(&e->state, FDR_EVENT_READY, __ATOMIC_RELEASE);
		c->nr_events++;
		fdr_session_apply_pending(s, free_slot);
	}
	*slot_out = free_slot;
	fdr_session_changed(s);
	return 0;
}
