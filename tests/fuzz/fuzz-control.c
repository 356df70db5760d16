// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * fuzz-control.c - random writes to the control tree of a session.
 *
 * Input: commands, each [sel][len][len bytes]. sel picks a file (table below,
 * or a path given in the data up to '\n'), and the bytes are one write(2) to it
 * through fdr_file_open/fdr_file_write, as the CLI and the FUSE server do. Sizes
 * are kept small (buffer_size_kb gets at most 2 bytes, buffer_subbuf_size_kb
 * 3) so that an input cannot ask for gigabytes. After the commands we read the
 * files back. Every input runs on a fresh session (with two registered events),
 * so that inputs do not depend on each other. The previous input's session is
 * closed only once the new one is open, as a long-lived tool (the FUSE server)
 * may do: the two are never at the same address, so anything a library cache
 * kept from the old one is caught.
 *
 * The library keeps retired ring mappings on purpose (lib/core/ring.c:
 * fdr_ring_map_retire), so their allocation is suppressed for LeakSanitizer.
 */
#include "fuzz.h"

#include <dirent.h>
#include <sys/types.h>

__attribute__((visibility("default"))) const char *__lsan_default_suppressions(void);

/* Allocations kept on purpose by fdr_ring_map_retire() after a resize (exported: the
 * sanitizer runtime looks it up). */
__attribute__((visibility("default"), used)) const char *__lsan_default_suppressions(void)
{
	return "leak:fdr_ring_map_open\n";
}

static struct fdr_session *fz_s, *fz_old;
static char fz_template[PATH_MAX + 8], fz_dir[2][PATH_MAX + 16];
static unsigned fz_nr;

#define FZ_KB 8

static const struct {
	const char *path;
	int flags;
	unsigned max_len; /* 0: no limit */
} fz_files[] = {
	{ "set_event", 0, 0 },
	{ "set_event", O_APPEND, 0 },
	{ "set_event", O_TRUNC, 0 },
	{ "tracing_on", O_TRUNC, 0 },
	{ "trace_clock", O_TRUNC, 0 },
	{ "trace_options", O_TRUNC, 0 },
	{ "options/overwrite", O_TRUNC, 0 },
	{ "options/markers", O_TRUNC, 0 },
	{ "options/record-tgid", O_TRUNC, 0 },
	{ "buffer_size_kb", O_TRUNC, 2 },
	{ "per_cpu/cpu0/buffer_size_kb", O_TRUNC, 2 },
	{ "buffer_subbuf_size_kb", O_TRUNC, 3 },
	{ "events/enable", O_TRUNC, 0 },
	{ "events/fz/enable", O_TRUNC, 0 },
	{ "events/fz/all/enable", O_TRUNC, 0 },
	{ "current_tracer", O_TRUNC, 0 },
	{ "trace_marker", 0, 0 },
	{ "trace", O_TRUNC, 0 },
	{ "per_cpu/cpu0/trace", O_TRUNC, 0 },
	{ "error_log", O_TRUNC, 0 },
	{ "instances/fz/set_event", 0, 0 },
	{ "instances/fz/trace_options", O_TRUNC, 0 },
	{ "instances/fz/tracing_on", O_TRUNC, 0 },
	{ "instances/fz/buffer_size_kb", O_TRUNC, 2 },
	{ "saved_cmdlines_size", O_TRUNC, 0 },
	{ "events/fz/all/filter", O_TRUNC, 0 },
	{ "events/fz/custom/filter", O_TRUNC, 0 },
	{ "events/fz/filter", O_TRUNC, 0 },
	{ "events/fz/all/trigger", O_APPEND, 0 },
	{ "events/fz/custom/trigger", O_TRUNC, 0 },
	{ "set_event_pid", O_APPEND, 0 },
	{ "set_event_pid", O_TRUNC, 0 },
	{ "snapshot", O_TRUNC, 1 },
	{ "per_cpu/cpu0/snapshot", O_TRUNC, 1 },
	{ "instances/fz/events/fz/all/filter", O_TRUNC, 0 },
};
#define FZ_NR_FILES (sizeof(fz_files) / sizeof(fz_files[0]))
/* selectors after the table */
enum { FZ_SEL_MKDIR = FZ_NR_FILES, FZ_SEL_RMDIR, FZ_SEL_PATH, FZ_SEL_READ, FZ_NR_SEL };

static const char *const fz_reads[] = {
	"set_event",
	"set_event_pending",
	"trace_options",
	"trace_clock",
	"tracing_on",
	"error_log",
	"available_events",
	"buffer_size_kb",
	"buffer_total_size_kb",
	"buffer_subbuf_size_kb",
	"per_cpu/cpu0/stats",
	"per_cpu/cpu0/buffer_size_kb",
	"events/enable",
	"events/fz/enable",
	"events/fz/all/enable",
	"events/fz/all/format",
	"saved_cmdlines",
	"trace",
	"trace_pipe",
	"per_cpu/cpu0/trace_pipe_raw",
	"instances/fz/set_event",
	"instances/fz/trace",
	"events/fz/all/filter",
	"events/fz/all/trigger",
	"events/fz/custom/trigger",
	"set_event_pid",
	"snapshot",
};

/*
 * The template's files, loaded once: a session file is mostly zeros, so a copy
 * is the file truncated to its size plus its non-zero pages.
 */
#define FZ_PAGE 4096
static struct fz_file {
	char name[256];
	unsigned char *data;
	size_t size;
} fz_files_t[8];
static unsigned fz_nr_files;

static int fz_load_template(void)
{
	DIR *d = opendir(fz_template);
	struct dirent *de;
	int ret = d ? 0 : -1;

	while (!ret && (de = readdir(d))) {
		struct fz_file *t = &fz_files_t[fz_nr_files];
		char path[PATH_MAX + 300];
		struct stat st;
		int fd;

		if (de->d_name[0] == '.')
			continue;
		if (fz_nr_files == sizeof(fz_files_t) / sizeof(fz_files_t[0]))
			return -1;
		snprintf(t->name, sizeof(t->name), "%s", de->d_name);
		snprintf(path, sizeof(path), "%s/%s", fz_template, de->d_name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0 || fstat(fd, &st) || !(t->data = malloc((size_t)st.st_size + 1)) ||
		    read(fd, t->data, (size_t)st.st_size) != st.st_size)
			ret = -1;
		t->size = (size_t)st.st_size;
		if (fd >= 0)
			close(fd);
		fz_nr_files++;
	}
	if (d)
		closedir(d);
	return ret;
}

/* Write the template's files into @dir (made 0700). */
static int fz_copy_template(const char *dir)
{
	unsigned i;
	int ret = mkdir(dir, 0700) ? -1 : 0;

	for (i = 0; !ret && i < fz_nr_files; i++) {
		const struct fz_file *t = &fz_files_t[i];
		char path[PATH_MAX + 300];
		size_t off;
		int fd;

		snprintf(path, sizeof(path), "%s/%s", dir, t->name);
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd < 0 || ftruncate(fd, (off_t)t->size))
			ret = -1;
		for (off = 0; !ret && off < t->size; off += FZ_PAGE) {
			size_t n = t->size - off < FZ_PAGE ? t->size - off : FZ_PAGE;

			if ((t->data[off] || memcmp(t->data + off, t->data + off + 1, n - 1)) &&
			    pwrite(fd, t->data + off, n, (off_t)off) != (ssize_t)n)
				ret = -1;
		}
		if (fd >= 0)
			close(fd);
	}
	return ret;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct fdr_session_opts o = { .buffer_size_kb = FZ_KB,
				      .subbuf_size = 4096,
				      .overwrite = 1 };
	struct fdr_abi_event e;
	struct fdr_session *s;

	(void)argc;
	(void)argv;
	if (fz_template[0])
		return 0;
	/*
	 * The template session, with fz:all and fz:custom registered. Creating a
	 * session calibrates the TSC for 50 ms, so each input gets a copy of its
	 * files instead: t0 and t1 in turn, next to it.
	 */
	s = fz_session_create(&o);
	fz_event_all(&e, "all", 0);
	fz_register(s, &e);
	fz_event_all(&e, "custom", 1);
	fz_register(s, &e);
	snprintf(fz_template, sizeof(fz_template), "%s", fdr_session_path(s));
	snprintf(fz_dir[0], sizeof(fz_dir[0]), "%s.0", fz_template);
	snprintf(fz_dir[1], sizeof(fz_dir[1]), "%s.1", fz_template);
	fdr_session_close(s);
	if (fz_load_template()) {
		fprintf(stderr, "fuzz-control: cannot load the template session\n");
		exit(2);
	}
	return 0;
}

/* A fresh copy of the template session; then the previous one goes. */
static int fz_open(void)
{
	const char *dir = fz_dir[fz_nr++ & 1];
	int ret;

	fz_old = fz_s;
	fz_s = NULL;
	ret = fz_copy_template(dir);
	if (!ret)
		ret = fdr_session_open(dir, &fz_s);
	if (fz_old) {
		fdr_session_destroy(fz_old);
		fdr_session_close(fz_old);
		fz_old = NULL;
	}
	return ret ? -1 : 0;
}

/* Read a whole file, non-blocking, bounded. */
static void fz_read(const char *path)
{
	struct fdr_file *f;
	char buf[4096];
	int n;

	if (fdr_file_open(fz_s, path, O_RDONLY | O_NONBLOCK, &f))
		return;
	for (n = 0; n < 256 && fdr_file_read(f, buf, sizeof(buf)) > 0; n++)
		;
	fdr_file_close(f);
}

static void fz_write(const char *path, int flags, const void *buf, size_t len)
{
	struct fdr_file *f;

	if (fdr_file_open(fz_s, path, O_WRONLY | flags, &f))
		return;
	fdr_file_write(f, buf, len);
	fdr_file_error(f);
	fdr_file_close(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t pos = 0, i;
	int mkdirs = 0, cmds = 0;

	if (!fz_dir[0][0])
		LLVMFuzzerInitialize(NULL, NULL);
	if (fz_open())
		return 0;
	while (pos + 2 <= size && cmds++ < 64) {
		unsigned sel = data[pos] % FZ_NR_SEL;
		size_t len = data[pos + 1];
		const char *p = (const char *)data + pos + 2;

		if (len > size - pos - 2)
			len = size - pos - 2;
		pos += 2 + len;
		if (sel < FZ_NR_FILES) {
			if (fz_files[sel].max_len && len > fz_files[sel].max_len)
				len = fz_files[sel].max_len;
			fz_write(fz_files[sel].path, fz_files[sel].flags, p, len);
		} else if (sel == FZ_SEL_MKDIR || sel == FZ_SEL_RMDIR) {
			char path[300];

			snprintf(path, sizeof(path), "%.*s", (int)len, p);
			if (sel == FZ_SEL_RMDIR)
				fdr_tree_rmdir(fz_s, path);
			else if (mkdirs++ == 0)
				fdr_tree_mkdir(fz_s, path);
		} else {
			/* PATH\nVALUE: any path; sizes kept small wherever they are */
			const char *nl = memchr(p, '\n', len);
			size_t plen = nl ? (size_t)(nl - p) : len;
			char path[300];
			int is_dir = 0;
			unsigned mode = 0;

			snprintf(path, sizeof(path), "%.*s", (int)plen, p);
			if (sel == FZ_SEL_READ) {
				struct fdr_dirent *ents = NULL;
				size_t nr = 0;

				fdr_tree_stat(fz_s, path, &is_dir, &mode);
				if (fdr_tree_readdir(fz_s, path, &ents, &nr) == 0)
					free(ents);
				fz_read(path);
			} else {
				const char *v = nl ? nl + 1 : p + len;
				size_t vlen = (size_t)(p + len - v);

				if (strstr(path, "size") && vlen > 2)
					vlen = 2;
				fz_write(path, O_TRUNC, v, vlen);
			}
		}
	}
	for (i = 0; i < sizeof(fz_reads) / sizeof(fz_reads[0]); i++)
		fz_read(fz_reads[i]);
	return 0;
}

/* [sel][len][bytes] */
static size_t fz_cmd(unsigned char *buf, size_t off, unsigned sel, const char *text)
{
	size_t n = strlen(text);

	buf[off] = (unsigned char)sel;
	buf[off + 1] = (unsigned char)n;
	memcpy(buf + off + 2, text, n);
	return off + 2 + n;
}

static int fz_sel(const char *path, int flags)
{
	size_t i;

	for (i = 0; i < FZ_NR_FILES; i++)
		if (strcmp(fz_files[i].path, path) == 0 && fz_files[i].flags == flags)
			return (int)i;
	return 0;
}

int fdr_fuzz_write_seeds(const char *dir)
{
	unsigned char b[1024];
	size_t n;
	int ret = 0;

	n = fz_cmd(b, 0, fz_sel("set_event", 0), "fz:all\n");
	n = fz_cmd(b, n, fz_sel("set_event", O_APPEND), "fz:* !fz:custom other:*\n");
	n = fz_cmd(b, n, fz_sel("trace_marker", 0), "hello from the fuzzer");
	ret |= fz_write_file(dir, "set-event", b, n);

	n = fz_cmd(b, 0, fz_sel("set_event", O_APPEND), "bad:na me!\n");
	n = fz_cmd(b, n, fz_sel("set_event", 0), "!nothing:here\n");
	n = fz_cmd(b, n, fz_sel("trace_clock", O_TRUNC), "bogus\n");
	n = fz_cmd(b, n, fz_sel("tracing_on", O_TRUNC), "12x\n");
	ret |= fz_write_file(dir, "errors", b, n);

	n = fz_cmd(b, 0, fz_sel("tracing_on", O_TRUNC), "0\n");
	n = fz_cmd(b, n, fz_sel("trace_clock", O_TRUNC), "mono\n");
	n = fz_cmd(b, n, fz_sel("trace_options", O_TRUNC), "nooverwrite\n");
	n = fz_cmd(b, n, fz_sel("options/record-tgid", O_TRUNC), "1\n");
	n = fz_cmd(b, n, fz_sel("tracing_on", O_TRUNC), "1\n");
	n = fz_cmd(b, n, fz_sel("trace_clock", O_TRUNC), "x86-tsc\n");
	n = fz_cmd(b, n, fz_sel("trace_marker", 0), "after the options\n");
	ret |= fz_write_file(dir, "options", b, n);

	n = fz_cmd(b, 0, fz_sel("buffer_size_kb", O_TRUNC), "16");
	n = fz_cmd(b, n, fz_sel("per_cpu/cpu0/buffer_size_kb", O_TRUNC), "4\n");
	n = fz_cmd(b, n, fz_sel("buffer_subbuf_size_kb", O_TRUNC), "8\n");
	n = fz_cmd(b, n, fz_sel("trace_marker", 0), "after a resize");
	ret |= fz_write_file(dir, "resize", b, n);

	n = fz_cmd(b, 0, fz_sel("events/enable", O_TRUNC), "1\n");
	n = fz_cmd(b, n, fz_sel("events/fz/all/enable", O_TRUNC), "0\n");
	n = fz_cmd(b, n, fz_sel("events/fz/enable", O_TRUNC), "1\n");
	n = fz_cmd(b, n, fz_sel("current_tracer", O_TRUNC), "nop\n");
	n = fz_cmd(b, n, fz_sel("trace", O_TRUNC), "");
	ret |= fz_write_file(dir, "enable", b, n);

	n = fz_cmd(b, 0, FZ_SEL_MKDIR, "instances/fz");
	n = fz_cmd(b, n, fz_sel("instances/fz/set_event", 0), "fz:*\n");
	n = fz_cmd(b, n, fz_sel("instances/fz/trace_options", O_TRUNC), "noirq-info\n");
	n = fz_cmd(b, n, FZ_SEL_PATH, "instances/fz/trace_marker\nto the instance");
	n = fz_cmd(b, n, FZ_SEL_READ, "instances/fz");
	n = fz_cmd(b, n, FZ_SEL_RMDIR, "instances/fz");
	ret |= fz_write_file(dir, "instance", b, n);

	n = fz_cmd(b, 0, fz_sel("events/fz/all/filter", O_TRUNC), "a > 3 && g == \"hello\"\n");
	n = fz_cmd(b, n, fz_sel("events/fz/custom/filter", O_TRUNC), "c < 0 || (b & 0xff) != 7");
	n = fz_cmd(b, n, fz_sel("events/fz/filter", O_TRUNC), "d >= 10 &&");
	n = fz_cmd(b, n, fz_sel("events/fz/all/enable", O_TRUNC), "1");
	n = fz_cmd(b, n, fz_sel("events/fz/all/filter", O_TRUNC), "0");
	ret |= fz_write_file(dir, "filters", b, n);

	n = fz_cmd(b, 0, fz_sel("events/fz/all/trigger", O_APPEND), "traceoff:3 if a == 1\n");
	n = fz_cmd(b, n, fz_sel("events/fz/all/trigger", O_APPEND), "snapshot\n");
	n = fz_cmd(b, n, fz_sel("events/fz/custom/trigger", O_TRUNC), "enable_event:fz:all:2");
	n = fz_cmd(b, n, fz_sel("events/fz/all/trigger", O_APPEND), "!traceoff:3\n");
	n = fz_cmd(b, n, fz_sel("events/fz/all/trigger", O_APPEND), "bogus:trigger if (\n");
	n = fz_cmd(b, n, fz_sel("set_event_pid", O_APPEND), "1 2 3\n");
	n = fz_cmd(b, n, fz_sel("set_event_pid", O_TRUNC), "x\n");
	n = fz_cmd(b, n, fz_sel("snapshot", O_TRUNC), "1");
	n = fz_cmd(b, n, fz_sel("per_cpu/cpu0/snapshot", O_TRUNC), "2");
	ret |= fz_write_file(dir, "triggers", b, n);

	n = fz_cmd(b, 0, FZ_SEL_PATH, "per_cpu/cpu0/buffer_size_kb\n12");
	n = fz_cmd(b, n, FZ_SEL_PATH, "events/fz/custom/enable\n1");
	n = fz_cmd(b, n, FZ_SEL_READ, "events/fz/custom/format");
	n = fz_cmd(b, n, FZ_SEL_READ, "per_cpu");
	n = fz_cmd(b, n, FZ_SEL_READ, "../../etc/passwd");
	ret |= fz_write_file(dir, "paths", b, n);
	return ret ? -EIO : 0;
}
