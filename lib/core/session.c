// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * session.c - a session is a directory of shared-memory files.
 *
 *   $FDR_ROOT/NAME/          (FDR_ROOT defaults to /dev/shm/fdr-<uid>, mode 0700)
 *       control              struct fdr_abi_control
 *       ring.<inst>.<gen>    one per instance, replaced (gen + 1) on resize
 *       probes               struct fdr_abi_probes, made by the first uprobe_events
 *                            definition (lib/ctl/probes.c), mapped here lazily
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
 *
 * This file is what a traced program needs (libfdr): attach, the lock, the
 * registry, ring mappings, markers, snapshots, error_log. Creating and
 * destroying sessions, instances, resizes and snapshot buffers are tools' work,
 * under the same rules, in lib/ctl/session-admin.c (libfdr-ctl).
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

/* A session or instance name: one path component, no control characters. */
int fdr_session_name_ok(const char *name)
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

	if (!fdr_session_name_ok(name))
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

/* A directory we create or trust must be ours and private: 0, -EPERM or -errno. */
int fdr_session_private_dir(const char *path)
{
	struct stat st;

	if (lstat(path, &st) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077))
		return -EPERM;
	return 0;
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
	if (atomic_load(&s->probes))
		munmap(atomic_load(&s->probes), FDR_PROBES_FILE_SIZE);
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
 * The PID in the name of a creator's temporary file, ".tmp.control.PID",
 * ".tmp.probes.PID" (lib/ctl/probes.c) or ".tmp.ring.INST.GEN.PID"
 * (fdr_ring_file_create()); 0 for any other name.
 */
static pid_t ses_tmp_pid(const char *name)
{
	const char *p;
	unsigned long v;
	char *end;
	int dots;

	if (strncmp(name, ".tmp.control.", 13) == 0) {
		p = name + 13;
	} else if (strncmp(name, ".tmp.probes.", 12) == 0) {
		p = name + 12;
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
	ret = fdr_session_private_dir(dir);
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

/*
 * The control lock: a robust, process-shared mutex in the control block, the only
 * lock on it. Every front end takes it here: fdr_session_lock_ms() with the time
 * it can wait (the application's agent: 10 or 100 ms, then it tries later), or
 * fdr_session_lock() (tools: 2 s). A holder that died leaves it EOWNERDEAD: the
 * next taker marks it consistent and goes on.
 */
int fdr_session_lock_ms(struct fdr_session *s, int timeout_ms)
{
	pthread_mutex_t *m = (pthread_mutex_t *)(void *)s->ctl->lock;
	struct timespec ts = fdr_deadline_ms(timeout_ms);
	int ret;

	ret = pthread_mutex_timedlock(m, &ts);
	if (ret == EOWNERDEAD) {
		pthread_mutex_consistent(m);
		ret = 0;
	}
	return -ret;
}

/**
 * fdr_session_lock - take the control lock (robust: a dead holder's lock is
 * recovered). Waits at most 2 s, then returns -ETIMEDOUT.
 */
int fdr_session_lock(struct fdr_session *s)
{
	pthread_mutex_t *m = (pthread_mutex_t *)(void *)s->ctl->lock;
	int ret = -fdr_session_lock_ms(s, 2000);

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
	if (!s->quiet_changes) /* else the writer wakes them when it is done */
		syscall(SYS_futex, &s->ctl->gen, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

/**
 * fdr_session_probes - the session's probes file (dynamic probe locations),
 * mapped shared at the first call and kept until fdr_session_close()
 * @out: the mapping; its header has been checked (fdr_shm_check_probes()),
 *       each slot must be copied and checked before use
 *       (fdr_shm_check_probe_slot())
 *
 * Thread-safe: two threads mapping it at once keep one mapping. The file is
 * made whole by the control side (lib/ctl/probes.c) at the first definition and
 * never removed while the session lives. Returns 0, -ENOENT (no probe was ever
 * defined in the session), -EUCLEAN (not a valid probes file: fdr_shm_error()
 * says why), or the errno of open/mmap.
 */
int fdr_session_probes(struct fdr_session *s, struct fdr_abi_probes **out)
{
	struct fdr_abi_probes *p = atomic_load_explicit(&s->probes, memory_order_acquire);
	struct fdr_abi_probes *none = NULL;
	struct stat st;
	int fd, ret;

	if (p) {
		*out = p;
		return 0;
	}
	fd = openat(s->dir_fd, "probes", O_RDWR | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		ret = -errno;
		close(fd);
		return ret;
	}
	if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size < FDR_PROBES_FILE_SIZE) {
		close(fd);
		return fdr_shm_errorf("probes: file size %llu is smaller than %llu",
				      (unsigned long long)st.st_size,
				      (unsigned long long)FDR_PROBES_FILE_SIZE);
	}
	/*
	 * not populated: scans stop at slots_bound (fdr_probe_slots_bound()), so
	 * a process touches the header, the slots in use and its CPUs' rows of hit
	 * counts, not the 1.6 MiB of slots
	 * (MAP_POPULATE of all of it cost a definition 140 to 200 us)
	 */
	p = mmap(NULL, FDR_PROBES_FILE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ret = p == MAP_FAILED ? -errno : 0;
	close(fd);
	if (ret)
		return ret;
	ret = fdr_shm_check_probes(p, (uint64_t)st.st_size);
	if (ret) {
		munmap(p, FDR_PROBES_FILE_SIZE);
		return ret;
	}
	if (!atomic_compare_exchange_strong(&s->probes, &none, p)) {
		munmap(p, FDR_PROBES_FILE_SIZE);
		p = none; /* another thread's */
	}
	*out = p;
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
		uint32_t slot, bound = fdr_events_bound(s->ctl);

		for (slot = 0; slot < bound; slot++)
			if (s->ctl->events[slot].state == FDR_EVENT_READY &&
			    s->ctl->events[slot].id == c->type)
				break;
		if (slot < bound) {
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
	uint32_t i, r, bound = fdr_instances_bound(s->ctl);

	for (i = 0; i < bound; i++) {
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
				fdr_event_set_enabled(e, i, 1);
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
	uint32_t i, free_slot = FDR_MAX_EVENTS, bound = fdr_events_bound(c);

	for (i = 0; i < bound; i++) {
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
	if (free_slot == FDR_MAX_EVENTS)
		free_slot = bound; /* past the bound: free (fdr_events_bound()) */
	if (free_slot == FDR_MAX_EVENTS || c->next_event_id > 0xffff)
		return -ENOSPC;
	{
		struct fdr_abi_event *e = &c->events[free_slot];

		memcpy(e, tmpl, sizeof(*e));
		memset(e->enabled, 0, sizeof(e->enabled));
		e->id = c->next_event_id++;
		/* the bound covers the slot before it is ready (fdr_events_bound()) */
		if (c->events_bound <= free_slot)
			__atomic_store_n(&c->events_bound, free_slot + 1, __ATOMIC_RELEASE);
		__atomic_store_n(&e->state, FDR_EVENT_READY, __ATOMIC_RELEASE);
		/* release: a reader that sees the count sees the slot ready (the live trace.dat writer) */
		__atomic_store_n(&c->nr_events, c->nr_events + 1, __ATOMIC_RELEASE);
		fdr_session_apply_pending(s, free_slot);
	}
	*slot_out = free_slot;
	fdr_session_changed(s);
	return 0;
}
