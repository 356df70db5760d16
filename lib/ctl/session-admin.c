// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * session-admin.c - session administration that only tools do: create and
 * destroy a session, make and remove instances, resize an instance's buffers,
 * back its snapshot buffers with memory or release them.
 *
 * A traced application only attaches to a session (fdr_session_open(), the
 * registry, its rings, snapshots: lib/core/session.c, whose essay describes the
 * files and the rules every change follows: under the control lock, files made
 * under a temporary name and renamed into place, every byte a writer may store
 * into allocated when the file is made). What is here follows the same rules,
 * in libfdr-ctl, so that libfdr stays small. It reaches libfdr's internals
 * (struct fdr_session, the ring file maker, the clocks) through
 * lib/core/core-local.h: those libfdr exports in its FDR_INTERNAL_0 version
 * node (lib/libfdr.map), for libfdr-ctl and the tests only.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fdr/fdr-ctl.h"
#include "core/core-local.h"

#define DEFAULT_BUFFER_KB 1408
#define DEFAULT_SUBBUF 4096

static int ses_mkdir_private(const char *path)
{
	if (mkdir(path, 0700) < 0 && errno != EEXIST)
		return -errno;
	return fdr_session_private_dir(path);
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
	if (!*name)
		in->options |= FDR_OPT_PROBE_OPTIMIZE;
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
		c->events_bound = i + 1;
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
	ret = fdr_session_private_dir(dir);
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
	c->instances_bound = 1;
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

/*
 * Before the spare buffers' memory is released: a swap in progress ends (at most
 * 100 ms, then it is a dead one), and writers that were inside their critical
 * section at the last swap have finished into what became the spare (2 ms after
 * it, as the snapshot reader waits; see rd_snapshot_settle() in lib/read/reader.c).
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

	if (!fdr_session_name_ok(name))
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
		in->options = top->options &
			      ~(FDR_OPT_RECORD_CMD | FDR_OPT_EVENT_FORK | FDR_OPT_PROBE_OPTIMIZE);
		memset(&s->ctl->inst_ext[slot], 0, sizeof(s->ctl->inst_ext[slot]));
		in->ring_gen = gen;
		fdr_instances_cover(s->ctl, slot);
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
	uint32_t i, bound;

	if (inst == 0 || inst >= FDR_MAX_INSTANCES)
		return -EINVAL;
	in = &s->ctl->instances[inst];
	if (in->state != FDR_INST_LIVE)
		return -ENOENT;
	for (i = 0, bound = fdr_events_bound(s->ctl); i < bound; i++)
		fdr_event_set_enabled(&s->ctl->events[i], inst, 0);
	__atomic_store_n(&in->state, FDR_INST_FREE, __ATOMIC_RELEASE);
	snprintf(name, sizeof(name), "ring.%u.%u", inst, in->ring_gen);
	unlinkat(s->dir_fd, name, 0);
	fdr_session_changed(s);
	return 0;
}
