// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * tracedat-write.c - trace-cmd's trace.dat, file format version 6.
 *
 * The layout (trace-cmd.dat.v6(5); numbers in the host's byte order, which the
 * file declares):
 *
 *   "\027\010\104tracing" "6\0"  endian(u8: 0 little)  long size(u8)  page size(u32)
 *   "header_page\0"  u64 len, events/header_page text
 *   "header_event\0" u64 len, events/header_event text
 *   ftrace events:   u32 count, { u64 len, format text }      ftrace:print, ftrace:user_stack
 *   event systems:   u32 count, { "system\0", u32 count, { u64 len, format text } }
 *   kallsyms:        u32 len, text (one line: address 0 is tracing_mark_write)
 *   printk formats:  u32 len (0)
 *   cmdlines:        u64 len, "pid comm\n"...                 saved_cmdlines
 *   nr_cpus:         u32
 *   "options  \0"    { u16 id, u32 len, data }... u16 0       see below
 *   "flyrecord\0"    per CPU { u64 offset, u64 size }
 *                    u64 len, "[clock]"                        (TRACECLOCK option)
 *   padding to a multiple of the page size, then each CPU's pages
 *
 * Options written: TRACECLOCK ("[clock]" and a NUL; it also says the clock
 * follows the CPU table, which is where trace-cmd reads it for version 6; it is
 * not left empty as trace-cmd's own writer leaves it, because trace-cmd 3.1.6
 * then parses the contents of a malloc(0) and, depending on what the heap holds,
 * shows raw timestamps or crashes), UNAME, VERSION and one
 * CPUSTAT per CPU (entries and lost records of the recording, like the
 * kernel's per_cpu/cpuN/stats).
 *
 * Page size: the instance's sub-buffer size, the page size of its raw pages.
 * The CPUs' pages come from files (spools) and are copied with
 * copy_file_range(2), which stays in the kernel (and may share blocks on
 * filesystems that can), falling back to sendfile(2) and then read/write.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/utsname.h>

#include "fdr/fdr-tracedat.h"
#include "ctl/trace-src.h"

/* trace-cmd's option ids (trace-cmd-private.h) */
enum {
	TD_OPT_DONE = 0,
	TD_OPT_CPUSTAT = 2,
	TD_OPT_TRACECLOCK = 4,
	TD_OPT_UNAME = 5,
	TD_OPT_VERSION = 9,
};

/*
 * kallsyms: applications have no kernel symbols. The one line names address 0,
 * the ip of every fdr marker (ftrace:print), so "%ps: %s" prints
 * "tracing_mark_write: TEXT" as for the kernel's markers.
 */
static const char td_kallsyms[] = "0000000000000000 T tracing_mark_write\n";

static int td_add(struct fdr_buf *b, const void *p, size_t n)
{
	return fdr_buf_add(b, p, n) ? -ENOMEM : 0;
}

static int td_u16(struct fdr_buf *b, uint16_t v)
{
	return td_add(b, &v, 2);
}

static int td_u32(struct fdr_buf *b, uint32_t v)
{
	return td_add(b, &v, 4);
}

static int td_u64(struct fdr_buf *b, uint64_t v)
{
	return td_add(b, &v, 8);
}

/* A u64 length, then the text of @t. */
static int td_sized64(struct fdr_buf *b, const struct fdr_buf *t)
{
	return td_u64(b, t->len) ?: td_add(b, t->data, t->len);
}

static int td_option(struct fdr_buf *b, uint16_t id, const void *p, uint32_t len)
{
	return td_u16(b, id) ?: td_u32(b, len) ?: td_add(b, p, len);
}

/*
 * A private, checked copy of registry slot @i, or -ENOENT if the slot holds no
 * event that can be described (the registry is shared memory: hostile).
 */
static int td_event_copy(const struct fdr_abi_control *ctl, uint32_t i, struct fdr_abi_event *e)
{
	const struct fdr_abi_event *src = &ctl->events[i];

	if (__atomic_load_n(&src->state, __ATOMIC_ACQUIRE) != FDR_EVENT_READY)
		return -ENOENT;
	memcpy(e, src, sizeof(*e));
	e->system[FDR_NAME_LEN - 1] = 0;
	e->name[FDR_NAME_LEN - 1] = 0;
	e->print_fmt[FDR_PRINT_FMT_LEN - 1] = 0;
	if (e->state != FDR_EVENT_READY || !e->system[0] || !e->name[0] ||
	    e->nr_fields > FDR_MAX_FIELDS || e->id > UINT16_MAX)
		return -ENOENT;
	return 0;
}

/* One format file with its u64 length. */
static int td_format(struct fdr_buf *b, const struct fdr_abi_event *e)
{
	struct fdr_buf t = { 0 };
	int ret = fdr_format_event_file(e, &t);

	if (!ret)
		ret = td_sized64(b, &t);
	fdr_buf_free(&t);
	return ret ? -ENOMEM : 0;
}

/* The ftrace events section, then the event systems section. */
static int td_events(struct fdr_buf *b, const struct fdr_abi_control *ctl)
{
	struct fdr_abi_event *evs = malloc(FDR_MAX_EVENTS * sizeof(*evs));
	unsigned char *done = calloc(FDR_MAX_EVENTS, 1);
	uint32_t i, k, n = 0, count, nr_sys = 0;
	size_t at;
	int ret = -ENOMEM;

	if (!evs || !done)
		goto out;
	for (i = 0; i < FDR_MAX_EVENTS; i++)
		if (td_event_copy(ctl, i, &evs[n]) == 0)
			n++;
	/* ftrace: fdr's own record types, in the kernel's "ftrace" section */
	for (i = 0, count = 0; i < n; i++)
		count += strcmp(evs[i].system, "ftrace") == 0;
	ret = td_u32(b, count);
	for (i = 0; i < n && !ret; i++) {
		if (strcmp(evs[i].system, "ftrace") == 0) {
			done[i] = 1;
			ret = td_format(b, &evs[i]);
		}
	}
	/* the other systems, each once, in the order of their first event */
	at = b->len;
	ret = ret ?: td_u32(b, 0);
	for (i = 0; i < n && !ret; i++) {
		if (done[i])
			continue;
		for (k = i, count = 0; k < n; k++)
			count += !done[k] && strcmp(evs[k].system, evs[i].system) == 0;
		ret = td_add(b, evs[i].system, strlen(evs[i].system) + 1) ?: td_u32(b, count);
		for (k = i; k < n && !ret; k++) {
			if (done[k] || strcmp(evs[k].system, evs[i].system) != 0)
				continue;
			done[k] = 1;
			ret = td_format(b, &evs[k]);
		}
		nr_sys++;
	}
	if (!ret)
		memcpy(b->data + at, &nr_sys, 4);
out:
	free(evs);
	free(done);
	return ret;
}

/* saved_cmdlines: "pid comm\n" for every name the session saved. */
static int td_cmdlines(struct fdr_buf *b, const struct fdr_abi_control *ctl)
{
	struct fdr_buf t = { 0 };
	uint32_t i;
	int ret = 0;

	for (i = 0; i < FDR_CMDLINE_SLOTS && !ret; i++) {
		uint32_t pid = __atomic_load_n(&ctl->cmdlines[i].pid, __ATOMIC_ACQUIRE);
		char comm[FDR_COMM_LEN];
		const char *name;

		if (!pid || pid > INT32_MAX)
			continue;
		name = fdr_comm_lookup(ctl, (int32_t)pid, comm, sizeof(comm));
		if (name != comm)
			continue; /* changing under us, or no name */
		ret = fdr_buf_printf(&t, "%" PRIu32 " %s\n", pid, name);
	}
	if (!ret)
		ret = td_sized64(b, &t);
	fdr_buf_free(&t);
	return ret ? -ENOMEM : 0;
}

static int td_options(struct fdr_buf *b, const struct fdr_tracedat_cpu *cpus, uint32_t nr_cpus,
		      const char *clock)
{
	struct fdr_buf t = { 0 };
	struct utsname u;
	uint32_t cpu;
	int ret = td_add(b, "options  ", 10);

	ret = ret ?: td_option(b, TD_OPT_TRACECLOCK, clock, (uint32_t)strlen(clock) + 1);
	if (!ret && uname(&u) == 0) {
		ret = fdr_buf_printf(&t, "%s %s %s %s", u.sysname, u.nodename, u.release,
				     u.machine) ?
			      -ENOMEM :
			      td_option(b, TD_OPT_UNAME, t.data, (uint32_t)t.len + 1);
		t.len = 0;
	}
	if (!ret)
		ret = fdr_buf_printf(&t, "fdr %s", fdr_version()) ?
			      -ENOMEM :
			      td_option(b, TD_OPT_VERSION, t.data, (uint32_t)t.len + 1);
	for (cpu = 0; cpu < nr_cpus && !ret; cpu++) {
		t.len = 0;
		ret = fdr_buf_printf(&t,
				     "CPU: %" PRIu32 "\nentries: %" PRIu64 "\noverrun: %" PRIu64
				     "\ncommit overrun: 0\nbytes: %" PRIu64 "\n",
				     cpu, cpus[cpu].records, cpus[cpu].lost, cpus[cpu].size) ?
			      -ENOMEM :
			      td_option(b, TD_OPT_CPUSTAT, t.data, (uint32_t)t.len + 1);
	}
	fdr_buf_free(&t);
	return ret ?: td_u16(b, TD_OPT_DONE);
}

/*
 * Append @size bytes of @in (from its offset 0) to @out at its file position:
 * in the kernel where it can, else through a buffer.
 */
static int td_copy(int out, int in, uint64_t size)
{
	loff_t off_in = 0;
	uint64_t left = size;
	int mode = 0; /* 0: copy_file_range, 1: sendfile, 2: read/write */
	char *buf = NULL;
	int ret = 0;

	while (left) {
		size_t chunk = left > (1u << 30) ? (1u << 30) : (size_t)left;
		ssize_t n;

		if (mode == 0) {
			n = copy_file_range(in, &off_in, out, NULL, chunk, 0);
			if (n < 0 && (errno == EXDEV || errno == EINVAL || errno == ENOSYS ||
				      errno == EOPNOTSUPP || errno == EBADF)) {
				mode = 1;
				continue;
			}
		} else if (mode == 1) {
			off_t o = (off_t)off_in;

			n = sendfile(out, in, &o, chunk);
			if (n < 0 && (errno == EINVAL || errno == ENOSYS)) {
				mode = 2;
				continue;
			}
			if (n > 0)
				off_in = o;
		} else {
			if (!buf && !(buf = malloc(1u << 20))) {
				ret = -ENOMEM;
				break;
			}
			n = pread(in, buf, chunk < (1u << 20) ? chunk : (1u << 20), off_in);
			if (n > 0) {
				ret = fdr_write_all(out, buf, (size_t)n);
				if (ret)
					break;
				off_in += n;
			}
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = -errno;
			break;
		}
		if (n == 0) {
			ret = -EIO; /* the spool is shorter than it said */
			break;
		}
		left -= (uint64_t)n;
	}
	free(buf);
	return ret;
}

/** fdr_tracedat_page_size - the page size of an instance's raw pages, or a negative errno */
int fdr_tracedat_page_size(struct fdr_session *s, uint32_t inst)
{
	struct fdr_abi_instance in;

	if (inst >= FDR_MAX_INSTANCES)
		return -EINVAL;
	/* a copy, checked: the control block may be hostile or broken */
	memcpy(&in, &fdr_session_control(s)->instances[inst], sizeof(in));
	if (fdr_shm_check_instance(&in, inst))
		return -EUCLEAN;
	return (int)in.subbuf_size;
}

/**
 * fdr_tracedat_write - write a trace.dat file
 * @fd: the file, written from its current position, which must be offset 0
 * @s: the session whose events and pid->comm names describe the records
 * @inst: the instance the pages were read from (its trace clock)
 * @flags: 0 (reserved)
 * @page_size: the size of the pages (fdr_tracedat_page_size())
 * @cpus: per CPU, the pages (cpus[i].fd, cpus[i].size) and their statistics
 * @nr_cpus: how many
 *
 * The CPUs' data start at offsets that are multiples of @page_size.
 * Returns 0, -EINVAL (bad page size, or a size that is not a multiple of it),
 * -ENOMEM, or the negative errno of a failed write or copy.
 */
int fdr_tracedat_write(int fd, struct fdr_session *s, uint32_t inst, unsigned flags,
		       uint32_t page_size, const struct fdr_tracedat_cpu *cpus, uint32_t nr_cpus)
{
	const struct fdr_abi_control *ctl = fdr_session_control(s);
	static const char magic[] = { 0x17, 0x08, 0x44, 't', 'r', 'a', 'c', 'i', 'n', 'g' };
	const union {
		uint16_t v;
		uint8_t b[2];
	} endian = { 1 };
	struct fdr_buf b = { 0 }, t = { 0 };
	char clock[48];
	uint64_t off;
	uint32_t cpu;
	int ret;

	(void)flags;
	if (inst >= FDR_MAX_INSTANCES || page_size < 4096 || (page_size & (page_size - 1)) ||
	    nr_cpus > FDR_MAX_CPUS)
		return -EINVAL;
	for (cpu = 0; cpu < nr_cpus; cpu++)
		if (cpus[cpu].size % page_size || (cpus[cpu].size && cpus[cpu].fd < 0))
			return -EINVAL;
	ret = td_add(&b, magic, sizeof(magic)) ?: td_add(&b, "6", 2);
	ret = ret ?: td_add(&b, (uint8_t[]){ endian.b[0] ? 0 : 1, (uint8_t)sizeof(long) }, 2);
	ret = ret ?: td_u32(&b, page_size);
	ret = ret ?: td_add(&b, "header_page", 12);
	ret = ret ?: (fdr_format_header_page(page_size, &t) ? -ENOMEM : td_sized64(&b, &t));
	t.len = 0;
	ret = ret ?: td_add(&b, "header_event", 13);
	ret = ret ?: (fdr_format_header_event(&t) ? -ENOMEM : td_sized64(&b, &t));
	ret = ret ?: td_events(&b, ctl);
	/* fdr's markers record ip 0 for tracing_mark_write: name it as the kernel's would be */
	ret = ret ?: td_u32(&b, (uint32_t)strlen(td_kallsyms));
	ret = ret ?: td_add(&b, td_kallsyms, strlen(td_kallsyms));
	ret = ret ?: td_u32(&b, 0); /* printk formats */
	ret = ret ?: td_cmdlines(&b, ctl);
	ret = ret ?: td_u32(&b, nr_cpus);
	snprintf(clock, sizeof(clock), "[%s]", fdr_trace_clock_name(ctl->instances[inst].clock));
	ret = ret ?: td_options(&b, cpus, nr_cpus, clock);
	ret = ret ?: td_add(&b, "flyrecord", 10);
	if (ret)
		goto out;
	off = b.len + 16ull * nr_cpus + 8 + strlen(clock);
	off = (off + page_size - 1) & ~(uint64_t)(page_size - 1);
	for (cpu = 0; cpu < nr_cpus && !ret; cpu++) {
		ret = td_u64(&b, off) ?: td_u64(&b, cpus[cpu].size);
		off += cpus[cpu].size;
	}
	ret = ret ?: td_u64(&b, strlen(clock)) ?: td_add(&b, clock, strlen(clock));
	while (!ret && (b.len & (page_size - 1)))
		ret = td_add(&b, "", 1);
	if (ret)
		goto out;
	ret = fdr_write_all(fd, b.data, b.len);
	for (cpu = 0; cpu < nr_cpus && !ret; cpu++)
		if (cpus[cpu].size)
			ret = td_copy(fd, cpus[cpu].fd, cpus[cpu].size);
out:
	fdr_buf_free(&t);
	fdr_buf_free(&b);
	return ret;
}

/**
 * fdr_tracedat_spool_open - a temporary file for one CPU's pages, in the
 * directory of @out_path (so the final copy stays within one filesystem),
 * unnamed (O_TMPFILE) where the filesystem allows, else unlinked at once, else
 * in memory (memfd)
 * Returns the file descriptor, or a negative errno.
 */
int fdr_tracedat_spool_open(const char *out_path)
{
	char dir[PATH_MAX], tmpl[PATH_MAX + 32];
	const char *slash = strrchr(out_path, '/');
	int fd;

	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == out_path)
		snprintf(dir, sizeof(dir), "/");
	else
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - out_path), out_path);
	fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd >= 0)
		return fd;
	snprintf(tmpl, sizeof(tmpl), "%s/.fdr-spool.XXXXXX", dir);
	fd = mkostemp(tmpl, O_CLOEXEC);
	if (fd >= 0) {
		unlink(tmpl);
		return fd;
	}
	fd = memfd_create("fdr-spool", MFD_CLOEXEC);
	return fd >= 0 ? fd : -errno;
}

/* Read one CPU's records (not consuming) into a spool. */
static int td_extract_cpu(struct fdr_session *s, uint32_t inst, unsigned flags, uint32_t cpu,
			  uint32_t page_size, const char *path, struct fdr_tracedat_cpu *c)
{
	enum { BATCH = 64 };
	struct fdr_raw_stats st = { 0 };
	struct fdr_cpu_stats cs;
	struct fdr_reader *r = NULL;
	unsigned char *buf = malloc((size_t)BATCH * page_size);
	int ret, n;

	if (!buf)
		return -ENOMEM;
	ret = fdr_reader_open(s, inst, (int)cpu, flags & FDR_READ_SNAPSHOT, &r);
	if (ret)
		goto out;
	c->fd = fdr_tracedat_spool_open(path);
	if (c->fd < 0) {
		ret = c->fd;
		goto out;
	}
	while ((n = fdr_reader_raw_pages(r, buf, page_size, BATCH, &st)) > 0) {
		ret = fdr_write_all(c->fd, buf, (size_t)n * page_size);
		if (ret)
			goto out;
		c->size += (uint64_t)n * page_size;
	}
	ret = n < 0 ? n : 0;
	c->records = st.records;
	c->lost = st.lost;
	if (!ret && fdr_ring_stats_ex(s, inst, cpu, flags & FDR_READ_SNAPSHOT, &cs) == 0)
		c->lost += cs.dropped;
out:
	fdr_reader_close(r);
	free(buf);
	return ret;
}

/**
 * fdr_tracedat_extract - save what an instance's buffers hold (or, with
 * FDR_READ_SNAPSHOT, its snapshot) as a trace.dat file, without consuming it
 * @path: the file, created or truncated
 * @cpus: filled with each CPU's figures (fds closed: -1)
 * @max_cpus: room in @cpus
 * @nr_cpus: set to the number of CPUs written
 *
 * Returns 0, -ENOSPC (more CPUs than @max_cpus), or a negative errno; on an
 * error a regular file at @path is removed rather than left incomplete.
 */
int fdr_tracedat_extract(struct fdr_session *s, uint32_t inst, unsigned flags, const char *path,
			 struct fdr_tracedat_cpu *cpus, uint32_t max_cpus, uint32_t *nr_cpus)
{
	int nr = fdr_ring_nr_cpus(s, inst), ps = fdr_tracedat_page_size(s, inst), fd = -1, ret;
	uint32_t cpu;

	if (nr < 0)
		return nr;
	if (ps < 0)
		return ps;
	if ((uint32_t)nr > max_cpus)
		return -ENOSPC;
	for (cpu = 0; cpu < (uint32_t)nr; cpu++)
		cpus[cpu] = (struct fdr_tracedat_cpu){ .fd = -1 };
	*nr_cpus = (uint32_t)nr;
	for (cpu = 0, ret = 0; cpu < (uint32_t)nr && !ret; cpu++)
		ret = td_extract_cpu(s, inst, flags, cpu, (uint32_t)ps, path, &cpus[cpu]);
	if (!ret) {
		struct stat st;
		int regular;

		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		regular = fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
		ret = fd < 0 ? -errno :
			       fdr_tracedat_write(fd, s, inst, 0, (uint32_t)ps, cpus, (uint32_t)nr);
		if (fd >= 0 && close(fd) < 0 && !ret)
			ret = -errno;
		/* no partial file (a full file system): a FIFO or a device is left alone */
		if (ret && regular)
			unlink(path);
	}
	for (cpu = 0; cpu < (uint32_t)nr; cpu++) {
		if (cpus[cpu].fd >= 0)
			close(cpus[cpu].fd);
		cpus[cpu].fd = -1;
	}
	return ret;
}
