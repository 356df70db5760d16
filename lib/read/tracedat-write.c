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
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/utsname.h>

#include "fdr/fdr-tracedat.h"
#include "common/bounds.h"
#include "trace-src.h"
#include "tracedat.h"

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

/* Every trace.dat's start: magic, @version ("6", "7"), endianness, long and page size. */
static int td_file_head(struct fdr_buf *b, const char *version, uint32_t page_size)
{
	static const char magic[] = { 0x17, 0x08, 0x44, 't', 'r', 'a', 'c', 'i', 'n', 'g' };
	const union {
		uint16_t v;
		uint8_t b[2];
	} endian = { 1 };
	int ret = td_add(b, magic, sizeof(magic));

	ret = ret ?: td_add(b, version, strlen(version) + 1);
	ret = ret ?: td_add(b, (uint8_t[]){ endian.b[0] ? 0 : 1, (uint8_t)sizeof(long) }, 2);
	return ret ?: td_u32(b, page_size);
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

/*
 * The ftrace events section, then the event systems section; *@split (if not
 * NULL) gets where the second starts (version 7 keeps them in two sections).
 */
static int td_events(struct fdr_buf *b, const struct fdr_abi_control *ctl, size_t *split,
		     uint32_t shift, const struct fdr_tracedat_kbuf *kb)
{
	struct fdr_abi_event *evs = malloc(FDR_MAX_EVENTS * sizeof(*evs));
	unsigned char *done = calloc(FDR_MAX_EVENTS, 1);
	uint32_t i, k, n = 0, count, nr_sys = 0, bound = fdr_events_bound(ctl);
	size_t at;
	int ret = -ENOMEM;

	if (!evs || !done)
		goto out;
	for (i = 0; i < bound; i++)
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
	if (split)
		*split = at;
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
			/* moved clear of the kernel's ids, as the pages are (fdr record -k) */
			if (evs[k].id >= FDR_EVENT_ID_FIRST_USER)
				evs[k].id += shift;
			ret = td_format(b, &evs[k]);
		}
		nr_sys++;
	}
	/* the kernel's events, each as a system of one event: their own format files */
	for (i = 0; kb && i < kb->nr_formats && !ret; i++) {
		ret = td_add(b, kb->fmt_system[i], strlen(kb->fmt_system[i]) + 1) ?: td_u32(b, 1);
		ret = ret ?: td_u64(b, strlen(kb->fmt_text[i]));
		ret = ret ?: td_add(b, kb->fmt_text[i], strlen(kb->fmt_text[i]));
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
static int td_cmdlines(struct fdr_buf *b, const struct fdr_abi_control *ctl, const char *more)
{
	struct fdr_buf t = { 0 };
	uint32_t i;
	int ret = more ? fdr_buf_printf(&t, "%s", more) : 0;

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

/*
 * fdr's clock option: the wall-clock time of ts 0 and the clock's rate, for the
 * CTF and Perfetto exports of the file (trace-cmd skips an option it does not
 * know, so its view of the file is unchanged). Nothing when neither is known.
 */
static int td_clock_option(struct fdr_buf *b, const struct fdr_abi_control *ctl, uint32_t clock)
{
	char text[96];
	uint64_t real0, hz;
	int n;

	fdr_trace_clock_point(ctl, clock, &real0, &hz);
	if (!real0 || !hz)
		return 0;
	n = snprintf(text, sizeof(text), "realtime_ns_at_0=%" PRIu64 "\nts_hz=%" PRIu64 "\n", real0,
		     hz);
	return td_option(b, FDR_TD_OPT_CLOCK, text, (uint32_t)n + 1);
}

static int td_options(struct fdr_buf *b, const struct fdr_tracedat_cpu *cpus, uint32_t nr_cpus,
		      const char *clock, const struct fdr_abi_control *ctl, uint32_t clock_id)
{
	struct fdr_buf t = { 0 };
	struct utsname u;
	uint32_t cpu;
	int ret = td_add(b, "options  ", 10);

	ret = ret ?: td_option(b, TD_OPT_TRACECLOCK, clock, (uint32_t)strlen(clock) + 1);
	ret = ret ?: td_clock_option(b, ctl, clock_id);
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

static int td_pwrite_all(int fd, const void *p, size_t n, uint64_t off)
{
	const unsigned char *c = p;

	while (n) {
		ssize_t w = pwrite(fd, c, n, (off_t)off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		if (w == 0)
			return -EIO;
		c += w;
		n -= (size_t)w;
		off += (uint64_t)w;
	}
	return 0;
}

/*
 * Copy @len bytes of @in from offset @from to @out: at offset *@to (@in may be
 * @out, the ranges apart), or at @out's file position when @to is NULL. In the
 * kernel where it can: copy_file_range(), then (at the file position only, a
 * pipe say) sendfile(), else through a buffer; a way that fails for any reason
 * but EINTR gives way to the next, whose error is the one returned. Returns 0,
 * -EIO (@in is shorter than @len), or a negative errno.
 */
static int td_copy(int in, uint64_t from, int out, const uint64_t *to, uint64_t len)
{
	loff_t off_in = (loff_t)from, off_out = to ? (loff_t)*to : 0;
	int mode = 0; /* 0: copy_file_range, 1: sendfile, 2: read/write */
	char *buf = NULL;
	int ret = 0;

	while (len) {
		size_t chunk = len > (1u << 30) ? (1u << 30) : (size_t)len;
		ssize_t n;

		if (mode == 0) {
			n = copy_file_range(in, &off_in, out, to ? &off_out : NULL, chunk, 0);
			if (n < 0 && errno != EINTR) {
				mode = to ? 2 : 1;
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
			n = pread(in, buf, chunk < (1u << 20) ? chunk : (1u << 20), (off_t)off_in);
			if (n > 0) {
				ret = to ? td_pwrite_all(out, buf, (size_t)n, (uint64_t)off_out) :
					   fdr_write_all(out, buf, (size_t)n);
				if (ret)
					break;
				off_in += n;
				off_out += n;
			}
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = -errno;
			break;
		}
		if (n == 0) {
			ret = -EIO; /* @in is shorter than it said */
			break;
		}
		len -= (uint64_t)n;
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
	ret = td_file_head(&b, "6", page_size);
	ret = ret ?: td_add(&b, "header_page", 12);
	ret = ret ?: (fdr_format_header_page(page_size, &t) ? -ENOMEM : td_sized64(&b, &t));
	t.len = 0;
	ret = ret ?: td_add(&b, "header_event", 13);
	ret = ret ?: (fdr_format_header_event(&t) ? -ENOMEM : td_sized64(&b, &t));
	ret = ret ?: td_events(&b, ctl, NULL, 0, NULL);
	/* fdr's markers record ip 0 for tracing_mark_write: name it as the kernel's would be */
	ret = ret ?: td_u32(&b, (uint32_t)strlen(td_kallsyms));
	ret = ret ?: td_add(&b, td_kallsyms, strlen(td_kallsyms));
	ret = ret ?: td_u32(&b, 0); /* printk formats */
	ret = ret ?: td_cmdlines(&b, ctl, NULL);
	ret = ret ?: td_u32(&b, nr_cpus);
	snprintf(clock, sizeof(clock), "[%s]", fdr_trace_clock_name(ctl->instances[inst].clock));
	ret = ret ?: td_options(&b, cpus, nr_cpus, clock, ctl, ctl->instances[inst].clock);
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
			ret = td_copy(cpus[cpu].fd, 0, fd, NULL, cpus[cpu].size);
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
	int fd = fdr_path_dir(out_path, dir, sizeof(dir));

	if (fd < 0)
		return fd; /* no file can be made there */
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

/* ---- a recording written as it goes: fdr record ------------------------------------------ */

/*
 * fdr record writes its file while it records, so that whatever happens to it
 * (SIGKILL, a crash, the machine's OOM killer) the file is a trace.dat holding
 * every page written so far (docs/design/record.md). trace.dat keeps each CPU's
 * pages in one run, and the CPUs are recorded at once, so the file is laid out
 * in slots of R bytes after a metadata area of TD_LIVE_BASE bytes, sparse (a
 * hole costs nothing):
 *
 *   0               BASE            BASE+R          BASE+2R         BASE+3R
 *   | metadata ...  | front slot ... | CPU 0's slot   | CPU 1's slot   | ...
 *
 * The first CPU to write takes the front slot, right after the metadata area;
 * each other CPU writes in its own slot. At the end the other CPUs' pages are
 * copied behind the front slot's (none to copy when one CPU wrote everything)
 * and the file is cut after them: it is compact but for the rest of the
 * metadata area.
 *
 * The metadata is version 7 (trace-cmd.dat.v7(5)), where everything is found
 * through offsets in options sections:
 *
 *   initial header -> options A: TRACECLOCK UNAME VERSION CPUCOUNT
 *                                HEADER_INFO FTRACE_EVENTS EVENT_FORMATS KALLSYMS
 *                                PRINTK CMDLINES (offsets of their sections)
 *                                BUFFER: "" clock page_size nr_cpus
 *                                        { cpu, offset, size }
 *                                DONE: next options section (0: none)
 *   BUFFER section header, then the HEADER_INFO ... CMDLINES sections, end marker
 *   [ later: FTRACE_EVENTS' EVENT_FORMATS' CMDLINES' + options B pointing at
 *     them, appended when events or names appear; A's DONE then points at B ]
 *   [ at the end, behind the pages: the same + CPUSTAT, options C; A -> C ]
 *
 * trace-cmd also walks the sections one after the other from options A, by
 * their sizes, to the end of the file (looking for string tables): the
 * metadata ends with a section header of no known id whose size jumps past the
 * end, or the walk would go through the holes 16 bytes at a time. New metadata
 * goes after it, and its size is then changed to lead to the new end-marker.
 *
 * Every change is ordered so that the file is valid after each write: a CPU's
 * pages are written first, then its size in the BUFFER option (one 8-byte
 * store, see fdr_tracedat_live_create()); moved pages are copied first, then
 * their offset is stored; new metadata is written first, then the 8-byte
 * offset that links it (trace-cmd and fdr take the last EVENT_FORMATS and
 * CMDLINES options they meet). A process killed between two writes leaves the
 * previous valid file.
 *
 * R is the file system's size: no CPU can write more than the disk holds, so a
 * slot never fills up, and a copy at the end never overlaps its source. It is
 * lowered where the largest file the file system allows is smaller than all
 * the slots together (then a full slot is -EFBIG, and a copy that would
 * overlap is not made: the file stays as recorded).
 */
#define TD_LIVE_BASE (4ull << 20) /* the metadata area: formats and names added while recording */
#define TD_LIVE_REGION_MIN (64ull << 20) /* R at least */
#define TD_LIVE_SECTION_HDR 16
#define TD_LIVE_META_ROOM (256 << 10) /* bytes allocated after the metadata at creation */
#define TD_LIVE_END_ID 0x7fff /* the end-marker's section id: none of trace-cmd's */
#define TD_LIVE_END_SIZE (1ull << 62) /* its size: past any file */

struct fdr_tracedat_live {
	int fd;
	char *path; /* resolved: the final file is renamed onto it */
	struct fdr_session *s;
	uint32_t inst, page_size, nr_cpus;
	uint64_t region; /* R: bytes reserved for each slot */
	uint64_t *size_at; /* per CPU: where its size is, in the BUFFER option (its offset before) */
	uint64_t *off; /* per CPU: where its pages are */
	int front; /* the CPU in the front slot, -1: none yet (atomic) */
	unsigned char *map; /* the file's first map_len bytes, shared: the sizes are stored there */
	size_t map_len;
	uint64_t *size; /* per CPU: bytes of pages written (written by its one taker) */
	uint64_t meta_end; /* end of the metadata written */
	uint64_t end_at; /* where the end-marker section header is */
	uint64_t next_at; /* where options A's DONE offset is */
	uint32_t events_hint; /* the registry's event count when `last` was made (atomic) */
	uint32_t id_shift; /* added to fdr's user event ids in the formats (fdr record -k) */
	pthread_mutex_t lock; /* held by fdr_tracedat_live_update(): main thread and takers */
	struct fdr_buf last; /* the formats and names last written */
};

static int td_sec_hdr(struct fdr_buf *b, uint16_t id, uint64_t size)
{
	return td_u16(b, id) ?: td_u16(b, 0) ?: td_u32(b, 0) ?: td_u64(b, size);
}

/* An option holding a section's offset; *@at gets where the offset is in @b. */
static int td_opt_off(struct fdr_buf *b, uint16_t id, size_t *at)
{
	int ret = td_u16(b, id) ?: td_u32(b, 8);

	*at = b->len;
	return ret ?: td_u64(b, 0);
}

static void td_patch64(struct fdr_buf *b, size_t at, uint64_t v)
{
	memcpy(b->data + at, &v, 8);
}

/* The formats and the names, as the sections hold them: [ftrace | systems | cmdlines]. */
static int td_live_meta(const struct fdr_abi_control *ctl, struct fdr_buf *t, size_t *split,
			size_t *cmd_at, uint32_t shift, const struct fdr_tracedat_kbuf *kb)
{
	int ret;

	t->len = 0;
	ret = td_events(t, ctl, split, shift, kb);
	*cmd_at = t->len;
	return ret ?: td_cmdlines(t, ctl, kb ? kb->cmdlines : NULL);
}

/*
 * Append to @b (which starts at file offset @base) the FTRACE_EVENTS,
 * EVENT_FORMATS and CMDLINES sections made of @t; @off gets their offsets.
 */
static int td_live_sections(struct fdr_buf *b, uint64_t base, const struct fdr_buf *t, size_t split,
			    size_t cmd_at, uint64_t off[3])
{
	int ret;

	off[0] = base + b->len;
	ret = td_sec_hdr(b, TD_OPT_FTRACE_EVENTS, split) ?: td_add(b, t->data, split);
	off[1] = base + b->len;
	ret = ret ?: td_sec_hdr(b, TD_OPT_EVENT_FORMATS, cmd_at - split);
	ret = ret ?: td_add(b, t->data + split, cmd_at - split);
	off[2] = base + b->len;
	ret = ret ?: td_sec_hdr(b, TD_OPT_CMDLINES, t->len - cmd_at);
	return ret ?: td_add(b, t->data + cmd_at, t->len - cmd_at);
}

/* The region size for @nr_cpus CPUs in the file @fd (see above), or a negative errno. */
static int64_t td_live_region(int fd, uint32_t nr_cpus, uint32_t page_size)
{
	struct statvfs v;
	uint64_t r = 1ull << 40, align = page_size > (1u << 20) ? page_size : (1u << 20);

	if (fstatvfs(fd, &v) == 0 && v.f_blocks && v.f_frsize)
		r = (uint64_t)v.f_blocks * v.f_frsize;
	if (r > (1ull << 52) / (nr_cpus + 1ull))
		r = (1ull << 52) / (nr_cpus + 1ull);
	r = (r + align - 1) & ~(align - 1);
	if (r < TD_LIVE_REGION_MIN)
		r = TD_LIVE_REGION_MIN;
	for (;;) {
		if (ftruncate(fd, (off_t)(TD_LIVE_BASE + r * (nr_cpus + 1ull))) == 0)
			break;
		if ((errno != EFBIG && errno != EINVAL) || r / 2 < TD_LIVE_REGION_MIN)
			return -errno;
		r = (r / 2 + align - 1) & ~(align - 1);
	}
	if (ftruncate(fd, 0) < 0)
		return -errno;
	return (int64_t)r;
}

/**
 * fdr_tracedat_live_create - create (or truncate) @path and write the metadata
 * of a recording of @nr_cpus CPUs of instance @inst of @s, with no page yet: a
 * valid trace.dat (version 7) from this call on
 * @page_size: the pages' size (fdr_tracedat_page_size())
 * @out: the recording; fdr_tracedat_live_close() it
 *
 * Returns 0, -EINVAL (bad arguments, or @path is not a regular file), -ENOMEM,
 * or the negative errno of a failed open, truncate or write (-ENOSPC); on an
 * error nothing is left at @path but what was there before, if not a regular
 * file.
 */
int fdr_tracedat_live_create(const char *path, struct fdr_session *s, uint32_t inst,
			     uint32_t page_size, uint32_t nr_cpus, struct fdr_tracedat_live **out)
{
	const struct fdr_abi_control *ctl = fdr_session_control(s);
	struct fdr_tracedat_live *l = NULL;
	struct fdr_buf b = { 0 }, t = { 0 };
	size_t a_size, at_off[6], fly_at, split = 0, cmd_at = 0;
	uint64_t off[3], hdr_off;
	char clock[48];
	const char *cname;
	struct utsname u;
	struct stat st;
	int64_t region;
	uint32_t cpu;
	int ret;

	if (inst >= FDR_MAX_INSTANCES || page_size < 4096 || (page_size & (page_size - 1)) ||
	    !nr_cpus || nr_cpus > FDR_MAX_CPUS)
		return -EINVAL;
	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->fd = -1;
	pthread_mutex_init(&l->lock, NULL);
	l->s = s;
	l->inst = inst;
	l->page_size = page_size;
	l->nr_cpus = nr_cpus;
	l->size_at = calloc(nr_cpus, sizeof(*l->size_at));
	l->size = calloc(nr_cpus, sizeof(*l->size));
	l->off = calloc(nr_cpus, sizeof(*l->off));
	l->front = -1;
	if (!l->size_at || !l->size || !l->off) {
		ret = -ENOMEM;
		goto err;
	}
	l->fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (l->fd < 0) {
		ret = -errno;
		goto err;
	}
	if (fstat(l->fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		ret = -EINVAL; /* pages go to fixed offsets: a regular file only */
		close(l->fd);
		l->fd = -1;
		goto err;
	}
	l->path = realpath(path, NULL);
	if (!l->path) {
		ret = -errno;
		goto err;
	}
	region = td_live_region(l->fd, nr_cpus, page_size);
	if (region < 0) {
		ret = (int)region;
		goto err;
	}
	l->region = (uint64_t)region;

	/* the initial header; options A at 32 */
	cname = fdr_trace_clock_name(ctl->instances[inst].clock);
	snprintf(clock, sizeof(clock), "[%s]", cname);
	ret = td_file_head(&b, "7", page_size) ?: td_add(&b, "none", 5) ?: td_add(&b, "", 1);
	ret = ret ?: td_u64(&b, b.len + 8);
	a_size = b.len + 8; /* where options A's size is */
	ret = ret ?: td_sec_hdr(&b, TD_OPT_DONE, 0);
	ret = ret ?: td_option(&b, TD_OPT_TRACECLOCK, clock, (uint32_t)strlen(clock) + 1);
	if (!ret && uname(&u) == 0) {
		ret = fdr_buf_printf(&t, "%s %s %s %s", u.sysname, u.nodename, u.release,
				     u.machine) ?
			      -ENOMEM :
			      td_option(&b, TD_OPT_UNAME, t.data, (uint32_t)t.len + 1);
		t.len = 0;
	}
	if (!ret)
		ret = fdr_buf_printf(&t, "fdr %s", fdr_version()) ?
			      -ENOMEM :
			      td_option(&b, TD_OPT_VERSION, t.data, (uint32_t)t.len + 1);
	ret = ret ?: td_option(&b, TD_OPT_CPUCOUNT, &nr_cpus, 4);
	ret = ret ?: td_clock_option(&b, ctl, ctl->instances[inst].clock);
	ret = ret ?: td_opt_off(&b, TD_OPT_HEADER_INFO, &at_off[0]);
	ret = ret ?: td_opt_off(&b, TD_OPT_FTRACE_EVENTS, &at_off[1]);
	ret = ret ?: td_opt_off(&b, TD_OPT_EVENT_FORMATS, &at_off[2]);
	ret = ret ?: td_opt_off(&b, TD_OPT_KALLSYMS, &at_off[3]);
	ret = ret ?: td_opt_off(&b, TD_OPT_PRINTK, &at_off[4]);
	ret = ret ?: td_opt_off(&b, TD_OPT_CMDLINES, &at_off[5]);
	/* BUFFER: the top instance's pages, each CPU at the start of its own slot */
	ret = ret ?: td_u16(&b, TD_OPT_BUFFER);
	ret = ret ?: td_u32(&b, (uint32_t)(8 + 1 + strlen(cname) + 1 + 8 + 20ull * nr_cpus));
	fly_at = b.len;
	ret = ret ?: td_u64(&b, 0) ?: td_add(&b, "", 1) ?: td_add(&b, cname, strlen(cname) + 1);
	ret = ret ?: td_u32(&b, page_size) ?: td_u32(&b, nr_cpus);
	for (cpu = 0; cpu < nr_cpus && !ret; cpu++) {
		l->off[cpu] = TD_LIVE_BASE + (1ull + cpu) * l->region;
		ret = td_u32(&b, cpu) ?: td_u64(&b, l->off[cpu]);
		l->size_at[cpu] = b.len;
		ret = ret ?: td_u64(&b, 0);
	}
	ret = ret ?: td_u16(&b, TD_OPT_DONE) ?: td_u32(&b, 8);
	l->next_at = b.len;
	ret = ret ?: td_u64(&b, 0);
	if (ret)
		goto err;
	td_patch64(&b, a_size, b.len - a_size - 8);
	/* the BUFFER section's header (its pages are in the regions), then the metadata */
	td_patch64(&b, fly_at, b.len);
	ret = td_sec_hdr(&b, TD_OPT_BUFFER, 0);
	hdr_off = b.len;
	t.len = 0;
	ret = ret ?: td_sec_hdr(&b, TD_OPT_HEADER_INFO, 0) ?: td_add(&b, "header_page", 12);
	ret = ret ?: (fdr_format_header_page(page_size, &t) ? -ENOMEM : td_sized64(&b, &t));
	t.len = 0;
	ret = ret ?: td_add(&b, "header_event", 13);
	ret = ret ?: (fdr_format_header_event(&t) ? -ENOMEM : td_sized64(&b, &t));
	if (ret)
		goto err;
	td_patch64(&b, hdr_off + 8, b.len - hdr_off - TD_LIVE_SECTION_HDR);
	td_patch64(&b, at_off[0], hdr_off);
	td_patch64(&b, at_off[3], b.len);
	ret = td_sec_hdr(&b, TD_OPT_KALLSYMS, 4 + strlen(td_kallsyms));
	ret = ret ?: td_u32(&b, (uint32_t)strlen(td_kallsyms));
	ret = ret ?: td_add(&b, td_kallsyms, strlen(td_kallsyms));
	td_patch64(&b, at_off[4], b.len);
	ret = ret ?: td_sec_hdr(&b, TD_OPT_PRINTK, 4) ?: td_u32(&b, 0);
	l->events_hint = __atomic_load_n(&ctl->nr_events, __ATOMIC_RELAXED);
	ret = ret ?: td_live_meta(ctl, &l->last, &split, &cmd_at, 0, NULL);
	ret = ret ?: td_live_sections(&b, 0, &l->last, split, cmd_at, off);
	if (ret)
		goto err;
	td_patch64(&b, at_off[1], off[0]);
	td_patch64(&b, at_off[2], off[1]);
	td_patch64(&b, at_off[5], off[2]);
	l->end_at = b.len;
	ret = td_sec_hdr(&b, TD_LIVE_END_ID, TD_LIVE_END_SIZE);
	if (ret)
		goto err;
	if (b.len > TD_LIVE_BASE) {
		ret = -EFBIG;
		goto err;
	}
	ret = td_pwrite_all(l->fd, b.data, b.len, 0);
	if (ret)
		goto err;
	l->meta_end = b.len;
	/*
	 * The sizes are stored through a shared mapping of the options, not written
	 * with pwrite(): the caller publishes the ring's reader position right after
	 * (fdr_reader_commit()), and a store leaves no system call between the two,
	 * where a thread is often preempted and, killed, would leave pages both in
	 * the file and unread in the ring.
	 */
	/* room for later formats and names, so that a full disk still gets them */
	if (fallocate(l->fd, FALLOC_FL_KEEP_SIZE, (off_t)l->meta_end,
		      (off_t)(TD_LIVE_BASE - l->meta_end < TD_LIVE_META_ROOM ?
				      TD_LIVE_BASE - l->meta_end :
				      TD_LIVE_META_ROOM)) < 0 &&
	    errno == ENOSPC) {
		ret = -ENOSPC;
		goto err;
	}
	l->map_len = (size_t)((l->next_at + 8 + 4095) & ~4095ull);
	l->map = mmap(NULL, l->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, l->fd, 0);
	if (l->map == MAP_FAILED) {
		l->map = NULL;
		ret = -errno;
		goto err;
	}
	fdr_buf_free(&b);
	fdr_buf_free(&t);
	*out = l;
	return 0;
err:
	fdr_buf_free(&b);
	fdr_buf_free(&t);
	if (l->path)
		unlink(l->path);
	fdr_tracedat_live_close(l, 0);
	return ret;
}

/**
 * fdr_tracedat_live_append - write @len bytes of pages (whole pages) at the end
 * of CPU @cpu's pages, then the CPU's size: the pages are part of the file once
 * this returns 0
 *
 * One thread per CPU at a time; different CPUs may be written from different
 * threads at once. Returns 0, -EINVAL, -EFBIG (the CPU's region is full: only
 * where the file system's largest file is smaller than it), or the negative
 * errno of the write (-ENOSPC); on an error the file holds what it held before.
 */
int fdr_tracedat_live_append(struct fdr_tracedat_live *l, uint32_t cpu, const void *pages,
			     size_t len)
{
	uint64_t size;
	int ret;

	if (cpu >= l->nr_cpus || len % l->page_size)
		return -EINVAL;
	/*
	 * The formats of the events in these pages first: an event is registered
	 * (the registry's count bumped) before its records can be written, so a
	 * count unchanged since the last formats means they describe these pages.
	 * Failing that (a full disk), the pages still go in: counted, not decoded.
	 */
	if (__atomic_load_n(&fdr_session_control(l->s)->nr_events, __ATOMIC_RELAXED) !=
	    __atomic_load_n(&l->events_hint, __ATOMIC_RELAXED))
		fdr_tracedat_live_update(l, 0);
	size = l->size[cpu];
	if (!size) {
		int none = -1;

		/* the first CPU to write takes the front slot: nothing to move at the end */
		if (__atomic_compare_exchange_n(&l->front, &none, (int)cpu, 0, __ATOMIC_RELAXED,
						__ATOMIC_RELAXED))
			l->off[cpu] = TD_LIVE_BASE;
	}
	if (len > l->region - size)
		return -EFBIG;
	ret = td_pwrite_all(l->fd, pages, len, l->off[cpu] + size);
	if (ret)
		return ret;
	if (!size)
		memcpy(l->map + l->size_at[cpu] - 8, &l->off[cpu], 8); /* while the size is 0 */
	size += len;
	/* after the pages: a reader that sees the size finds them (one store, see above) */
	memcpy(l->map + l->size_at[cpu], &size, 8);
	l->size[cpu] = size;
	return 0;
}

/**
 * fdr_tracedat_live_update - describe the events and names that appeared since
 * the last call (or the creation): writes the formats and the pid->comm names
 * again, after the metadata, and links them (only when they changed)
 * @force: also look for new names (a full comparison); otherwise only the
 *         registry's event count is looked at, which costs one load
 *
 * Returns 0, -EFBIG (the metadata region is full: the file keeps the formats
 * it has), -ENOMEM, or the negative errno of a write.
 */
int fdr_tracedat_live_update(struct fdr_tracedat_live *l, int force)
{
	const struct fdr_abi_control *ctl = fdr_session_control(l->s);
	uint32_t hint = __atomic_load_n(&ctl->nr_events, __ATOMIC_RELAXED);
	struct fdr_buf t = { 0 }, b = { 0 };
	size_t split = 0, cmd_at = 0, at[3];
	uint64_t off[3], opt_b = 0, end_at = 0;
	int ret;

	if (!force && hint == __atomic_load_n(&l->events_hint, __ATOMIC_RELAXED))
		return 0;
	pthread_mutex_lock(&l->lock);
	ret = td_live_meta(ctl, &t, &split, &cmd_at, l->id_shift, NULL);
	if (ret || (t.len == l->last.len && memcmp(t.data, l->last.data, t.len) == 0))
		goto out;
	ret = td_live_sections(&b, l->meta_end, &t, split, cmd_at, off);
	opt_b = l->meta_end + b.len;
	/* options B: the new sections; A's DONE will point here */
	ret = ret ?: td_sec_hdr(&b, TD_OPT_DONE, 3 * 14 + 14);
	ret = ret ?: td_opt_off(&b, TD_OPT_FTRACE_EVENTS, &at[0]);
	ret = ret ?: td_opt_off(&b, TD_OPT_EVENT_FORMATS, &at[1]);
	ret = ret ?: td_opt_off(&b, TD_OPT_CMDLINES, &at[2]);
	ret = ret ?: td_u16(&b, TD_OPT_DONE) ?: td_u32(&b, 8) ?: td_u64(&b, 0);
	end_at = l->meta_end + b.len;
	ret = ret ?: td_sec_hdr(&b, TD_LIVE_END_ID, TD_LIVE_END_SIZE);
	if (ret)
		goto out;
	td_patch64(&b, at[0], off[0]);
	td_patch64(&b, at[1], off[1]);
	td_patch64(&b, at[2], off[2]);
	if (b.len > TD_LIVE_BASE - l->meta_end) {
		ret = -EFBIG;
		goto out;
	}
	/* after the old end-marker, which still ends the walk */
	ret = td_pwrite_all(l->fd, b.data, b.len, l->meta_end);
	if (!ret) {
		uint64_t skip = end_at - l->end_at - TD_LIVE_SECTION_HDR;

		/* the old end-marker now leads to the new one */
		ret = td_pwrite_all(l->fd, &skip, 8, l->end_at + 8);
	}
	if (!ret)
		/* after the sections: the link makes them the file's */
		ret = td_pwrite_all(l->fd, &opt_b, 8, l->next_at);
	if (ret)
		goto out;
	l->meta_end += b.len;
	l->end_at = end_at;
	fdr_buf_free(&l->last);
	l->last = t;
	t = (struct fdr_buf){ 0 };
out:
	if (!ret)
		__atomic_store_n(&l->events_hint, hint, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&l->lock);
	fdr_buf_free(&t);
	fdr_buf_free(&b);
	return ret;
}

/** fdr_tracedat_live_bytes - bytes of pages written for CPU @cpu so far */
uint64_t fdr_tracedat_live_bytes(const struct fdr_tracedat_live *l, uint32_t cpu)
{
	return cpu < l->nr_cpus ? l->size[cpu] : 0;
}

/**
 * fdr_tracedat_live_finish - make the recording compact, in place: the CPUs'
 * pages one after the other behind the metadata, then the formats and names
 * known now and each CPU's statistics (trace-cmd report --stat), linked, and the
 * file cut after them; valid after each step (see above)
 * @cpus: per CPU, records and lost (fd and size are the recording's own)
 *
 * Returns 0, or a negative errno (-ENOSPC); on an error the file is valid and
 * holds every page, maybe not compact.
 */
/**
 * fdr_tracedat_live_set_id_shift - move fdr's user event ids (from
 * FDR_EVENT_ID_FIRST_USER) up by @shift in the file's formats, clear of a
 * kernel buffer's ids (fdr record -k): before the first page, whose records the
 * caller moves the same way. Returns 0, or an error of fdr_tracedat_live_update().
 */
int fdr_tracedat_live_set_id_shift(struct fdr_tracedat_live *l, uint32_t shift)
{
	if (shift > 0xffff - FDR_EVENT_ID_FIRST_USER - FDR_MAX_EVENTS)
		return -ERANGE;
	pthread_mutex_lock(&l->lock);
	l->id_shift = shift;
	fdr_buf_free(&l->last); /* written again, moved */
	pthread_mutex_unlock(&l->lock);
	return fdr_tracedat_live_update(l, 1);
}

/*
 * A kernel CPU's pages from @fd (its trace_pipe_raw, opened O_NONBLOCK) into
 * @out at *@pos, which moves past them. The full pages are spliced through the
 * pipe @p: the kernel's own pages go to the file's page cache, no copy passes
 * through fdr. splice() gives full pages only; the last one, still being filled
 * when the instance was stopped, is read() (one copy of one page per CPU).
 */
static int td_kernel_cpu(int out, int fd, uint32_t ps, int p[2], unsigned char *page, uint64_t *pos,
			 uint64_t *spliced)
{
	for (;;) {
		ssize_t n = splice(fd, NULL, p[1], NULL, ps, SPLICE_F_NONBLOCK | SPLICE_F_MOVE);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break; /* EAGAIN: no full page left (or no splice here: read below) */
		while (n > 0) {
			loff_t off = (loff_t)*pos;
			ssize_t m = splice(p[0], NULL, out, &off, (size_t)n, SPLICE_F_MOVE);

			if (m < 0 && errno == EINTR)
				continue;
			if (m <= 0)
				return m < 0 ? -errno : -EIO;
			*pos += (uint64_t)m;
			*spliced += (uint64_t)m;
			n -= m;
		}
	}
	if (*pos % ps)
		return -EIO; /* a page cut short: the pipe took part of one */
	for (;;) {
		ssize_t n = read(fd, page, ps);
		int ret;

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		memset(page + n, 0, ps - (size_t)n);
		ret = td_pwrite_all(out, page, ps, *pos);
		if (ret)
			return ret;
		*pos += ps;
	}
	return 0;
}

static int td_live_finish(struct fdr_tracedat_live *l, const struct fdr_tracedat_cpu *cpus,
			  const struct fdr_tracedat_kbuf *kb)
{
	const struct fdr_abi_control *ctl = fdr_session_control(l->s);
	struct fdr_buf t = { 0 }, b = { 0 };
	size_t split = 0, cmd_at = 0, at[3];
	uint64_t pos = TD_LIVE_BASE, off[3], opt_c, *kpos = NULL, kb_end = 0, ksec = 0,
		 kspliced = 0, kstart = 0;
	uint32_t cpu;
	int front = __atomic_load_n(&l->front, __ATOMIC_RELAXED), ret = 0;

	if (front >= 0)
		pos += l->size[front];
	for (cpu = 0; cpu < l->nr_cpus && !ret; cpu++) {
		uint64_t from = l->off[cpu], len = l->size[cpu];

		if ((int)cpu == front || !len)
			continue;
		if (pos + len > from)
			return -EFBIG; /* would overwrite what it copies: stays as recorded */
		/* copied first, then the offset: the old pages stay valid until then */
		ret = td_copy(l->fd, from, l->fd, &pos, len);
		if (ret)
			break;
		memcpy(l->map + l->size_at[cpu] - 8, &pos, 8);
		l->off[cpu] = pos;
		fallocate(l->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)from,
			  (off_t)len);
		pos += len;
	}
	/* the kernel's pages behind fdr's, each CPU in one run */
	if (!ret && kb) {
		unsigned char *page = malloc(kb->page_size);
		int p[2] = { -1, -1 };

		kstart = pos;
		kpos = calloc(kb->nr_cpus ? kb->nr_cpus : 1, sizeof(*kpos));
		if (!page || !kpos || kb->page_size < 4096 ||
		    (kb->page_size & (kb->page_size - 1)) || pos % kb->page_size)
			ret = page && kpos ? -EINVAL : -ENOMEM;
		if (!ret && pipe2(p, O_CLOEXEC) < 0)
			ret = -errno;
		for (cpu = 0; cpu < kb->nr_cpus && !ret; cpu++) {
			uint64_t sl =
				kb->spool_fds && kb->spool_fds[cpu] >= 0 ? kb->spool_len[cpu] : 0;

			kpos[cpu] = pos;
			/* spliced while recording: the spool's pages first, in the kernel */
			if (sl % kb->page_size)
				ret = -EINVAL;
			else if (sl && !(ret = td_copy(kb->spool_fds[cpu], 0, l->fd, &pos, sl))) {
				pos += sl;
				kspliced += sl;
			}
			/* what the raw pipe still holds (none: the spool holds all of it) */
			if (!ret && kb->raw_fds && kb->raw_fds[cpu] >= 0)
				ret = td_kernel_cpu(l->fd, kb->raw_fds[cpu], kb->page_size, p, page,
						    &pos, &kspliced);
		}
		if (p[0] >= 0) {
			close(p[0]);
			close(p[1]);
		}
		free(page);
		if (!ret)
			kb_end = pos;
	}
	pthread_mutex_lock(&l->lock);
	ret = ret ?: td_live_meta(ctl, &t, &split, &cmd_at, l->id_shift, kb);
	ret = ret ?: td_live_sections(&b, pos, &t, split, cmd_at, off);
	if (kb && !ret) {
		ksec = pos + b.len;
		ret = td_sec_hdr(&b, TD_OPT_BUFFER, 0);
	}
	opt_c = pos + b.len;
	ret = ret ?: td_sec_hdr(&b, TD_OPT_DONE, 0);
	ret = ret ?: td_opt_off(&b, TD_OPT_FTRACE_EVENTS, &at[0]);
	ret = ret ?: td_opt_off(&b, TD_OPT_EVENT_FORMATS, &at[1]);
	ret = ret ?: td_opt_off(&b, TD_OPT_CMDLINES, &at[2]);
	if (kb && !ret) {
		/* BUFFER: the kernel instance's CPUs, as trace-cmd record -B writes one */
		ret = td_u16(&b, TD_OPT_BUFFER);
		ret = ret   ?:
			      td_u32(&b, (uint32_t)(8 + strlen(kb->name) + 1 + strlen(kb->clock) +
						    1 + 8 + 20ull * kb->nr_cpus));
		ret = ret ?: td_u64(&b, ksec) ?: td_add(&b, kb->name, strlen(kb->name) + 1);
		ret = ret ?: td_add(&b, kb->clock, strlen(kb->clock) + 1);
		ret = ret ?: td_u32(&b, kb->page_size) ?: td_u32(&b, kb->nr_cpus);
		for (cpu = 0; cpu < kb->nr_cpus && !ret; cpu++) {
			uint64_t end = cpu + 1 < kb->nr_cpus ? kpos[cpu + 1] : kb_end;

			ret = td_u32(&b, cpu)		    ?:
				      td_u64(&b, kpos[cpu]) ?:
							      td_u64(&b, end - kpos[cpu]);
		}
	}
	for (cpu = 0; cpu < l->nr_cpus && !ret; cpu++) {
		t.len = 0;
		ret = fdr_buf_printf(&t,
				     "CPU: %" PRIu32 "\nentries: %" PRIu64 "\noverrun: %" PRIu64
				     "\ncommit overrun: 0\nbytes: %" PRIu64 "\n",
				     cpu, cpus[cpu].records, cpus[cpu].lost, l->size[cpu]) ?
			      -ENOMEM :
			      td_option(&b, TD_OPT_CPUSTAT, t.data, (uint32_t)t.len + 1);
	}
	ret = ret ?: td_u16(&b, TD_OPT_DONE) ?: td_u32(&b, 8) ?: td_u64(&b, 0);
	if (!ret) {
		td_patch64(&b, at[0], off[0]);
		td_patch64(&b, at[1], off[1]);
		td_patch64(&b, at[2], off[2]);
		td_patch64(&b, opt_c - pos + 8, b.len - (opt_c - pos) - TD_LIVE_SECTION_HDR);
		ret = td_pwrite_all(l->fd, b.data, b.len, pos);
	}
	if (!ret) {
		/* written: link it, then cut what is behind it */
		memcpy(l->map + l->next_at, &opt_c, 8);
		if (ftruncate(l->fd, (off_t)(pos + b.len)) < 0)
			ret = -errno;
	}
	pthread_mutex_unlock(&l->lock);
	fdr_buf_free(&t);
	fdr_buf_free(&b);
	free(kpos);
	if (kb && kb->bytes_out) {
		kb->bytes_out[0] = kb_end ? kb_end - kstart : 0;
		kb->bytes_out[1] = kspliced;
	}
	return ret;
}

int fdr_tracedat_live_finish(struct fdr_tracedat_live *l, const struct fdr_tracedat_cpu *cpus)
{
	return td_live_finish(l, cpus, NULL);
}

/**
 * fdr_tracedat_live_finish_kernel - fdr_tracedat_live_finish(), with a kernel
 * instance's buffer @kb added behind fdr's pages: its CPUs' pages consumed from
 * its trace_pipe_raw files (spliced), its formats and names in the file's, a
 * second BUFFER option naming it. Returns as fdr_tracedat_live_finish().
 */
int fdr_tracedat_live_finish_kernel(struct fdr_tracedat_live *l,
				    const struct fdr_tracedat_cpu *cpus,
				    const struct fdr_tracedat_kbuf *kb)
{
	return td_live_finish(l, cpus, kb);
}

/**
 * fdr_tracedat_live_close - release a recording; with @remove, remove its file
 * too (a recording that holds nothing); NULL is a no-op
 */
void fdr_tracedat_live_close(struct fdr_tracedat_live *l, int remove)
{
	if (!l)
		return;
	pthread_mutex_destroy(&l->lock);
	if (l->map)
		munmap(l->map, l->map_len);
	if (l->fd >= 0)
		close(l->fd);
	if (remove && l->path)
		unlink(l->path);
	fdr_buf_free(&l->last);
	free(l->path);
	free(l->size_at);
	free(l->size);
	free(l->off);
	free(l);
}
