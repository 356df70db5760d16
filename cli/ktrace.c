// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ktrace.c - a session's linked kernel instance (docs/design/kernel-timeline.md).
 *
 * fdr start -k EVENTS makes an instance of the kernel's own tracer,
 * instances/fdr-NAME-HASH under the kernel's tracefs, and drives it only
 * through its files: set_event for the events, options/overwrite for the
 * session's buffer mode, trace_clock for a clock on fdr's time base, tracing_on.
 * fdr never writes the kernel's top-level buffer or an instance it did not make.
 *
 *   link       DIR/kernel, in the session's directory: "tracefs PATH",
 *              "instance NAME", "clock CLOCK", one a line. It is read as hostile
 *              input: a name not "fdr-..." or with a '/', a path that is not a
 *              tracefs mount, is refused.
 *   registry   /run/fdr-kernel/NAME (a root directory, mode 0700) names, for each
 *              instance fdr made, the session directory it belongs to and the pid
 *              of the fdr that made it; it is written before the instance is
 *              made. An instance whose maker is gone and whose session's link no
 *              longer names it (the session was destroyed, or fdr was killed
 *              before it linked it) is left over: the next fdr command removes
 *              it (ktrace_reap()).
 *   clock      fdr's trace clocks local, global, perf, mono, mono_raw and tai
 *              are CLOCK_MONOTONIC (lib/core/clock.c), which is the kernel's
 *              'mono' clock (ktime_get_mono_fast_ns); fdr's boot is the kernel's
 *              'boot'; fdr's x86-tsc, where its stamps are the TSC, is the
 *              kernel's 'x86-tsc'. counter, uptime, and x86-tsc where fdr's
 *              stamps are CLOCK_MONOTONIC, have no kernel twin: refused.
 *   show       fdr show reads the session's 'trace' and the instance's 'trace'
 *              (both non-consuming; the kernel pauses the instance while its
 *              'trace' is open, its pause-on-trace option), and merges their
 *              lines by timestamp, a 'K ' before each kernel line and two spaces
 *              before each of fdr's (ktrace_show()).
 *   pipe       fdr pipe consumes fdr's 'trace_pipe' and the instance's, and prints
 *              the earlier of the two sides' next lines while both have one, a
 *              line alone once it waited 200 ms for the other side (ktrace_pipe()).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>

#include "fdr/fdr-ctl.h"
#include "fdr/fdr-read.h"
#include "fdr/fdr-tracedat.h"
#include "cli.h"

#define KT_TRACEFS_MAGIC 0x74726163 /* TRACEFS_MAGIC, linux/magic.h */
#define KT_DEFAULT_MOUNT "/sys/kernel/tracing"
#define KT_REGISTRY "/run/fdr-kernel"

/* snprintf(); a path cut short fails where it is used (every input is bounded) */
__attribute__((format(printf, 3, 4))) static int kt_fmt(char *b, size_t n, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vsnprintf(b, n, fmt, ap);
	va_end(ap);
	return r < 0 || (size_t)r >= n ? -ENAMETOOLONG : 0;
}

static const char *kt_registry(void)
{
	const char *r = getenv("FDR_KERNEL_REGISTRY"); /* tests: a private one */

	return r && *r == '/' ? r : KT_REGISTRY;
}

static int kt_is_tracefs(const char *path)
{
	struct statfs sf;

	return statfs(path, &sf) == 0 && (uint32_t)sf.f_type == KT_TRACEFS_MAGIC;
}

/*
 * Where the kernel's tracefs is mounted, into @buf; mounted at
 * /sys/kernel/tracing when it is nowhere (as trace-cmd does). 0, or a negative
 * errno with *@why saying what was tried.
 */
static int kt_find_tracefs(char *buf, size_t len, const char **why)
{
	char line[4096], dev[256], mnt[4096], type[64];
	FILE *f = fopen("/proc/mounts", "re");

	if (f) {
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "%255s %4095s %63s", dev, mnt, type) == 3 &&
			    strcmp(type, "tracefs") == 0 && kt_is_tracefs(mnt)) {
				fclose(f);
				kt_fmt(buf, len, "%s", mnt);
				return 0;
			}
		fclose(f);
	}
	if (mount("nodev", KT_DEFAULT_MOUNT, "tracefs", 0, NULL) < 0) {
		*why = "tracefs is not mounted, and mounting it at " KT_DEFAULT_MOUNT
		       " failed (needs CAP_SYS_ADMIN)";
		return -errno;
	}
	kt_fmt(buf, len, "%s", KT_DEFAULT_MOUNT);
	return 0;
}

/* Write @text to @tracefs/instances/@inst/@file; 0 or a negative errno. */
static int kt_write(const char *tracefs, const char *inst, const char *file, const char *text)
{
	char path[PATH_MAX];
	int fd, ret = 0;
	size_t n = strlen(text);
	ssize_t w;

	kt_fmt(path, sizeof(path), "%s/instances/%s/%s", tracefs, inst, file);
	fd = open(path, O_WRONLY | O_CLOEXEC | (strcmp(file, "set_event") ? O_TRUNC : O_APPEND));
	if (fd < 0)
		return -errno;
	w = write(fd, text, n);
	if (w != (ssize_t)n)
		ret = w < 0 ? -errno : -EIO;
	close(fd);
	return ret;
}

/* The kernel clock on fdr's time base for fdr's @clock, NULL if none. */
static const char *kt_clock_for(uint32_t clock, uint32_t ts_source)
{
	switch (clock) {
	case FDR_CLOCK_BOOT:
		return "boot";
	case FDR_CLOCK_X86_TSC:
		return ts_source == FDR_TS_TSC ? "x86-tsc" : NULL; /* fdr prints mono ns then */
	case FDR_CLOCK_COUNTER:
	case FDR_CLOCK_UPTIME:
		return NULL;
	default:
		return "mono";
	}
}

/* FNV-1a of @s: the instance name's part that tells sessions of one name apart. */
static uint32_t kt_hash(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

/* "fdr-BASE-HASH" for the session directory @dir (its real path). */
static void kt_name(const char *dir, char *name, size_t len)
{
	char real[PATH_MAX], base[33];
	const char *b;
	size_t i;

	if (!realpath(dir, real))
		kt_fmt(real, sizeof(real), "%s", dir);
	b = strrchr(real, '/');
	b = b ? b + 1 : real;
	for (i = 0; b[i] && i < sizeof(base) - 1; i++)
		base[i] = (b[i] == ' ' || b[i] == '/' || (unsigned char)b[i] < 0x20) ? '_' : b[i];
	base[i] = 0;
	kt_fmt(name, len, "fdr-%s-%08x", base, kt_hash(real));
}

/* A name fdr makes: "fdr-", no '/', no "." or "..", at most 64 bytes. */
static int kt_name_ok(const char *n)
{
	return strncmp(n, "fdr-", 4) == 0 && !strchr(n, '/') && strlen(n) <= 64;
}

int ktrace_read_link(const char *dir, struct fdr_kernel_link *l)
{
	return fdr_kernel_link_read(dir, l);
}

/* The registry's entry of @name: 0 with @dir and *@pid, or a negative errno. */
static int kt_reg_read(const char *name, char *dir, size_t len, long *pid, char *tracefs,
		       size_t tlen)
{
	char path[PATH_MAX], line[PATH_MAX + 32];
	FILE *f;
	int have = 0;

	kt_fmt(path, sizeof(path), "%s/%s", kt_registry(), name);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		if (strncmp(line, "dir ", 4) == 0) {
			kt_fmt(dir, len, "%s", line + 4);
			have |= 1;
		} else if (strncmp(line, "pid ", 4) == 0) {
			*pid = strtol(line + 4, NULL, 10);
			have |= 2;
		} else if (strncmp(line, "tracefs ", 8) == 0) {
			kt_fmt(tracefs, tlen, "%s", line + 8);
			have |= 4;
		}
	}
	fclose(f);
	return have == 7 ? 0 : -EUCLEAN;
}

static void kt_reg_remove(const char *name)
{
	char path[PATH_MAX];

	kt_fmt(path, sizeof(path), "%s/%s", kt_registry(), name);
	unlink(path);
}

/* Remove instance @name: its tracing off, then the directory. 0 or a negative errno. */
static int kt_remove(const char *tracefs, const char *name)
{
	char path[PATH_MAX];

	if (!kt_name_ok(name) || !kt_is_tracefs(tracefs))
		return -EINVAL;
	kt_fmt(path, sizeof(path), "%s/instances/%s", tracefs, name);
	kt_write(tracefs, name, "tracing_on", "0\n");
	if (rmdir(path) < 0 && errno != ENOENT)
		return -errno;
	kt_reg_remove(name);
	return 0;
}

void ktrace_reap(void)
{
	DIR *d = opendir(kt_registry());
	struct dirent *de;

	if (!d)
		return;
	while ((de = readdir(d))) {
		char dir[PATH_MAX], tracefs[PATH_MAX], inst[PATH_MAX];
		struct fdr_kernel_link l;
		long pid = 0;

		if (!kt_name_ok(de->d_name))
			continue;
		if (kt_reg_read(de->d_name, dir, sizeof(dir), &pid, tracefs, sizeof(tracefs)))
			continue;
		if (pid > 0 && (kill((pid_t)pid, 0) == 0 || errno == EPERM))
			continue; /* its maker still runs: it links it or removes it */
		if (ktrace_read_link(dir, &l) == 0 && strcmp(l.instance, de->d_name) == 0)
			continue; /* linked to a session that is there */
		kt_fmt(inst, sizeof(inst), "%s/instances/%s", tracefs, de->d_name);
		if (!kt_is_tracefs(tracefs) || access(inst, F_OK) != 0) {
			kt_reg_remove(de->d_name);
			continue;
		}
		if (kt_remove(tracefs, de->d_name) == 0)
			fprintf(stderr,
				"fdr: removed the kernel instance %s left by session %s, which is "
				"gone\n",
				de->d_name, dir);
	}
	closedir(d);
}

/*
 * Link the session in @dir to a new kernel instance: the registry entry, the
 * instance, its events (@specs: comma-separated lists as set_event takes them),
 * buffer mode @overwrite, the clock on fdr's time base for @clock, @buffer_kb
 * per CPU if not 0, tracing on; then the link file. Returns 0 or the exit code
 * (after removing what it made).
 */
int ktrace_link(const char *dir, const char *const *specs, int nr, int overwrite, uint32_t clock,
		uint32_t ts_source, uint32_t buffer_kb)
{
	char tracefs[PATH_MAX], name[80], path[PATH_MAX], reg[PATH_MAX], real[PATH_MAX];
	const char *why = NULL, *kclock = kt_clock_for(clock, ts_source);
	struct fdr_kernel_link old;
	FILE *f;
	int ret, i, fd;

	if (!kclock)
		return die(
			1,
			"-k: fdr's trace_clock %s has no kernel clock on its time base (use "
			"local, mono or boot%s); fdr's own tracing is not affected",
			clock == FDR_CLOCK_COUNTER ? "counter" :
			clock == FDR_CLOCK_UPTIME  ? "uptime" :
						     "x86-tsc (fdr's stamps are not the TSC here)",
			ts_source == FDR_TS_TSC ? ", or x86-tsc" : "");
	if (ktrace_read_link(dir, &old) == 0) {
		kt_fmt(path, sizeof(path), "%s/instances/%s", old.tracefs, old.instance);
		if (access(path, F_OK) == 0)
			return die(1,
				   "-k: the session is already linked to the kernel instance %s "
				   "(fdr destroy removes it)",
				   path);
	}
	ret = kt_find_tracefs(tracefs, sizeof(tracefs), &why);
	if (ret)
		return die(1, "-k: %s: %s; fdr's own tracing is not affected", why, strerror(-ret));
	kt_fmt(path, sizeof(path), "%s/instances", tracefs);
	if (access(path, W_OK) != 0)
		return die(1,
			   "-k: cannot create a kernel instance: %s: %s (needs root or write "
			   "access to the kernel's tracefs); fdr's own tracing is not affected",
			   path, strerror(errno));
	kt_name(dir, name, sizeof(name));
	/* the registry entry first: a kill from here on leaves what ktrace_reap() removes */
	if (mkdir(kt_registry(), 0700) < 0 && errno != EEXIST)
		return die(1, "-k: cannot make %s: %s", kt_registry(), strerror(errno));
	kt_fmt(reg, sizeof(reg), "%s/%s", kt_registry(), name);
	f = fopen(reg, "we");
	if (!f)
		return die(1, "-k: cannot write %s: %s", reg, strerror(errno));
	/* the real path: the reaper reads it from any directory (fdr -d with a relative path) */
	fprintf(f, "dir %s\npid %ld\ntracefs %s\n", realpath(dir, real) ? real : dir,
		(long)getpid(), tracefs);
	if (fclose(f))
		return die(1, "-k: cannot write %s: %s", reg, strerror(errno));
	kt_fmt(path, sizeof(path), "%s/instances/%s", tracefs, name);
	if (mkdir(path, 0700) < 0) {
		ret = errno;
		kt_reg_remove(name);
		if (ret == EEXIST)
			return die(1,
				   "-k: the kernel instance %s exists and is not this session's: "
				   "left alone",
				   path);
		return die(1, "-k: cannot create the kernel instance %s: %s", path, strerror(ret));
	}
	ret = kt_write(tracefs, name, "options/overwrite", overwrite ? "1\n" : "0\n");
	if (!ret)
		ret = kt_write(tracefs, name, "trace_clock", kclock);
	if (ret) {
		kt_remove(tracefs, name);
		return die(1, "-k: cannot set the kernel instance's mode and clock %s: %s", kclock,
			   strerror(-ret));
	}
	if (buffer_kb) {
		char kb[32];

		kt_fmt(kb, sizeof(kb), "%u\n", buffer_kb);
		ret = kt_write(tracefs, name, "buffer_size_kb", kb);
		if (ret) {
			kt_remove(tracefs, name);
			return die(1, "-k: cannot size the kernel instance's buffers to %u KiB: %s",
				   buffer_kb, strerror(-ret));
		}
	}
	for (i = 0; i < nr; i++) {
		char *list = strdup(specs[i]), *save = NULL, *ev;

		if (!list) {
			kt_remove(tracefs, name);
			return die(1, "out of memory");
		}
		for (ev = strtok_r(list, ",", &save); ev; ev = strtok_r(NULL, ",", &save)) {
			char text[512];

			while (*ev == ' ')
				ev++;
			if (!*ev)
				continue;
			kt_fmt(text, sizeof(text), "%s\n", ev);
			ret = kt_write(tracefs, name, "set_event", text);
			if (ret) {
				kt_remove(tracefs, name);
				die(1,
				    "-k: the kernel refused event '%s' (expected SYSTEM:EVENT, "
				    "SYSTEM:* or SYSTEM as in %s/available_events): %s",
				    ev, tracefs, strerror(-ret));
				free(list);
				return 1;
			}
		}
		free(list);
	}
	ret = kt_write(tracefs, name, "tracing_on", "1\n");
	if (ret) {
		kt_remove(tracefs, name);
		return die(1, "-k: cannot turn the kernel instance on: %s", strerror(-ret));
	}
	kt_fmt(path, sizeof(path), "%s/.kernel.tmp", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (f) {
		char final[PATH_MAX];

		fprintf(f, "tracefs %s\ninstance %s\nclock %s\n", tracefs, name, kclock);
		kt_fmt(final, sizeof(final), "%s/kernel", dir);
		if (fclose(f) == 0 && rename(path, final) == 0) {
			fprintf(stderr,
				"fdr: kernel instance %s/instances/%s linked (trace_clock %s)\n",
				tracefs, name, kclock);
			return 0;
		}
	} else if (fd >= 0) {
		close(fd);
	}
	ret = errno;
	unlink(path);
	kt_remove(tracefs, name);
	return die(1, "-k: cannot write the link %s/kernel: %s", dir, strerror(ret));
}

int ktrace_onoff(const char *dir, int on)
{
	struct fdr_kernel_link l;
	int ret = ktrace_read_link(dir, &l);

	if (ret == -ENOENT)
		return 0;
	if (ret)
		return die(1, "%s/kernel: not a link to a kernel instance fdr made", dir);
	ret = kt_write(l.tracefs, l.instance, "tracing_on", on ? "1\n" : "0\n");
	if (ret)
		return die(1, "kernel instance %s: tracing_on: %s", l.instance, strerror(-ret));
	return 0;
}

int ktrace_unlink(const char *dir)
{
	struct fdr_kernel_link l;
	char path[PATH_MAX];
	int ret = ktrace_read_link(dir, &l);

	if (ret == -ENOENT)
		return 0;
	kt_fmt(path, sizeof(path), "%s/kernel", dir);
	if (ret) {
		/* not ours to remove in the kernel: only the file goes */
		unlink(path);
		return 0;
	}
	ret = kt_remove(l.tracefs, l.instance);
	if (ret)
		return die(1, "cannot remove the kernel instance %s/instances/%s: %s", l.tracefs,
			   l.instance, strerror(-ret));
	unlink(path);
	return 0;
}

/* ---- fdr snapshot save, text: one timeline ---------------------------------------------- */

struct kt_line {
	const char *p;
	size_t len;
	uint64_t key; /* the timestamp: µs of an ns clock, or the raw count */
	int kernel;
};

/* Split @b into lines; header lines ('#') go to @hdr if not NULL, else are dropped. */
static int kt_split(const struct fdr_buf *b, int kernel, struct kt_line **v, size_t *n, size_t *cap,
		    struct fdr_buf *hdr)
{
	const char *p = b->data, *e = b->data + b->len;
	uint64_t last = 0;

	while (p < e) {
		const char *nl = memchr(p, '\n', (size_t)(e - p));
		size_t len = nl ? (size_t)(nl - p) + 1 : (size_t)(e - p);
		uint64_t key;

		if (*p == '#') {
			if (hdr && fdr_buf_add(hdr, p, len))
				return -ENOMEM;
			p += len;
			continue;
		}
		if (*n == *cap) {
			size_t nc = *cap ? *cap * 2 : 1024;
			struct kt_line *nv = realloc(*v, nc * sizeof(**v));

			if (!nv)
				return -ENOMEM;
			*v = nv;
			*cap = nc;
		}
		if (fdr_kernel_line_ts(p, len, &key) == 0)
			last = key;
		(*v)[(*n)++] = (struct kt_line){ p, len, last, kernel };
		p += len;
	}
	return 0;
}

static int kt_cmp(const void *a, const void *b)
{
	const struct kt_line *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	if (x->kernel != y->kernel)
		return x->kernel - y->kernel; /* fdr's first: see kernel-timeline.md */
	return x->p < y->p ? -1 : x->p > y->p; /* each side's own order */
}

/*
 * fdr's trace text @a and the kernel instance's @k merged by time into @out:
 * fdr's header, the line naming the kernel instance, then each line marked.
 * Returns 0, -ENOMEM, or -EIO (a write to @out failed: errno says why).
 */
static int kt_merge_write(const struct fdr_buf *a, const struct fdr_buf *k,
			  const struct fdr_kernel_link *l, FILE *out)
{
	struct fdr_buf hdr = { 0 };
	struct kt_line *v = NULL;
	size_t n = 0, cap = 0, i;

	if (kt_split(a, 0, &v, &n, &cap, &hdr) || kt_split(k, 1, &v, &n, &cap, NULL)) {
		fdr_buf_free(&hdr);
		free(v);
		return -ENOMEM;
	}
	qsort(v, n, sizeof(*v), kt_cmp);
	if (hdr.len)
		fwrite(hdr.data, 1, hdr.len, out);
	fprintf(out, "# kernel: %s/instances/%s (trace_clock %s); its lines begin with 'K '\n#\n",
		l->tracefs, l->instance, l->clock);
	for (i = 0; i < n; i++) {
		fputs(v[i].kernel ? "K " : "  ", out);
		fwrite(v[i].p, 1, v[i].len, out);
		if (v[i].p[v[i].len - 1] != '\n')
			putc('\n', out);
	}
	fdr_buf_free(&hdr);
	free(v);
	return ferror(out) ? -EIO : 0;
}

/* The whole of file @path into @b; 0 or a positive errno. */
static int kt_read_all(const char *path, struct fdr_buf *b)
{
	char buf[65536];
	ssize_t r;
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret;

	if (fd < 0)
		return errno;
	while ((r = read(fd, buf, sizeof(buf))) > 0)
		if (fdr_buf_add(b, buf, (size_t)r)) {
			r = -1;
			errno = ENOMEM;
			break;
		}
	ret = r < 0 ? errno : 0;
	close(fd);
	return ret;
}

/* ---- fdr record -k: the kernel's buffer in the trace.dat ------------------------------- */

/* A whole small tracefs file into a new string (NUL-terminated); NULL on error. */
static char *kt_slurp(const char *path, size_t max)
{
	struct fdr_buf b = { 0 };
	char buf[8192];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return NULL;
	while ((n = read(fd, buf, sizeof(buf))) > 0 && b.len < max)
		if (fdr_buf_add(&b, buf, (size_t)n)) {
			n = -1;
			break;
		}
	close(fd);
	if (n < 0 || fdr_buf_add(&b, "", 1)) {
		fdr_buf_free(&b);
		return NULL;
	}
	return b.data;
}

int ktrace_rec_begin(const char *dir, struct ktrace_rec *k)
{
	char path[PATH_MAX], *list, *save = NULL, *line;
	int ret = ktrace_read_link(dir, &k->l);

	if (ret)
		return die(1, "-k: %s/kernel: no kernel instance linked: %s", dir, strerror(-ret));
	kt_fmt(path, sizeof(path), "%s/instances/%s/set_event", k->l.tracefs, k->l.instance);
	list = kt_slurp(path, 1 << 20);
	if (!list)
		return die(1, "-k: cannot read %s: %s", path, strerror(errno));
	for (line = strtok_r(list, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *colon = strchr(line, ':'), *text, *id, **v;

		/* "SYSTEM:EVENT", both plain names (hostile: no '/' into a path) */
		if (!colon || colon == line || !colon[1] || strchr(line, '/') || strchr(line, '.'))
			continue;
		*colon = 0;
		kt_fmt(path, sizeof(path), "%s/instances/%s/events/%s/%s/format", k->l.tracefs,
		       k->l.instance, line, colon + 1);
		text = kt_slurp(path, 1 << 16);
		id = text ? strstr(text, "\nID: ") : NULL;
		if (!id) {
			free(text);
			free(list);
			return die(1, "-k: cannot read the format of %s:%s (%s)", line, colon + 1,
				   path);
		}
		if (strtoul(id + 5, NULL, 10) > k->max_id)
			k->max_id = (uint32_t)strtoul(id + 5, NULL, 10);
		v = realloc(k->sys, (k->nr + 1) * sizeof(*v));
		if (v)
			k->sys = v;
		v = v ? realloc(k->text, (k->nr + 1) * sizeof(*v)) : NULL;
		if (v)
			k->text = v;
		if (!v || !(k->sys[k->nr] = strdup(line))) {
			free(text);
			free(list);
			return die(1, "out of memory");
		}
		k->text[k->nr++] = text;
	}
	free(list);
	return 0;
}

/* A file for the pages spliced while recording: unnamed, next to @out_path (or in TMPDIR). */
static int kt_spool_file(const char *out_path)
{
	char dir[PATH_MAX], *slash;
	int fd;

	snprintf(dir, sizeof(dir), "%s", out_path);
	slash = strrchr(dir, '/');
	if (slash)
		slash[slash == dir ? 1 : 0] = 0;
	else
		snprintf(dir, sizeof(dir), ".");
	fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0)
		fd = open(getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
			  O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	return fd;
}

int ktrace_rec_open(struct ktrace_rec *k, const char *out_path)
{
	char path[PATH_MAX], *kb_text;
	uint32_t cpu;

	kt_fmt(path, sizeof(path), "%s/instances/%s/buffer_subbuf_size_kb", k->l.tracefs,
	       k->l.instance);
	kb_text = kt_slurp(path, 64);
	k->page_size = kb_text ? (uint32_t)strtoul(kb_text, NULL, 10) * 1024 : 0;
	free(kb_text);
	if (!k->page_size)
		k->page_size = (uint32_t)sysconf(_SC_PAGESIZE); /* no such file: a kernel page */
	if (pipe2(k->pipe, O_CLOEXEC) < 0)
		return die(1, "cannot make a pipe: %s", strerror(errno));
	k->have_pipe = 1;
	for (cpu = 0; cpu < FDR_MAX_CPUS; cpu++) {
		int *v, *sp;
		uint64_t *sl;

		kt_fmt(path, sizeof(path), "%s/instances/%s/per_cpu/cpu%u/trace_pipe_raw",
		       k->l.tracefs, k->l.instance, cpu);
		if (access(path, F_OK) != 0)
			break;
		v = realloc(k->fds, (cpu + 1) * sizeof(*v));
		if (v)
			k->fds = v;
		sp = v ? realloc(k->spool, (cpu + 1) * sizeof(*sp)) : NULL;
		if (sp)
			k->spool = sp;
		sl = sp ? realloc(k->spool_len, (cpu + 1) * sizeof(*sl)) : NULL;
		if (!sl)
			return die(1, "out of memory");
		k->spool_len = sl;
		k->spool[cpu] = -1;
		k->spool_len[cpu] = 0;
		k->fds[cpu] = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		if (k->fds[cpu] < 0)
			return die(1, "-k: cannot open %s: %s", path, strerror(errno));
		k->nr_cpus = cpu + 1;
		k->spool[cpu] = kt_spool_file(out_path);
		if (k->spool[cpu] < 0)
			return die(1,
				   "-k: cannot make a file for the kernel's pages next to %s: %s",
				   out_path, strerror(errno));
	}
	if (!k->nr_cpus)
		return die(1, "-k: kernel instance %s has no per_cpu/cpu0/trace_pipe_raw",
			   k->l.instance);
	return 0;
}

int64_t ktrace_rec_take(struct ktrace_rec *k)
{
	int64_t moved = 0;
	uint32_t cpu;

	for (cpu = 0; cpu < k->nr_cpus; cpu++) {
		for (;;) {
			/* full pages only: the last one, still being written, stays */
			ssize_t n = splice(k->fds[cpu], NULL, k->pipe[1], NULL, k->page_size,
					   SPLICE_F_NONBLOCK | SPLICE_F_MOVE);

			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				break; /* EAGAIN: no full page now */
			while (n > 0) {
				loff_t off = (loff_t)k->spool_len[cpu];
				ssize_t m = splice(k->pipe[0], NULL, k->spool[cpu], &off, (size_t)n,
						   SPLICE_F_MOVE);

				if (m < 0 && errno == EINTR)
					continue;
				if (m <= 0) {
					int e = m < 0 ? errno : EIO;

					/* whole pages only: a page cut short is dropped */
					k->spool_len[cpu] -= k->spool_len[cpu] % k->page_size;
					return -e;
				}
				k->spool_len[cpu] += (uint64_t)m;
				moved += m;
				n -= m;
			}
		}
	}
	return moved;
}

int ktrace_rec_end(struct ktrace_rec *k, struct fdr_tracedat_kbuf *kb)
{
	int ret = kt_write(k->l.tracefs, k->l.instance, "tracing_on", "0\n");

	if (ret)
		return die(1, "-k: kernel instance %s: tracing_on: %s", k->l.instance,
			   strerror(-ret));
	return ktrace_rec_kbuf(k, kb);
}

int ktrace_rec_kbuf(struct ktrace_rec *k, struct fdr_tracedat_kbuf *kb)
{
	char path[PATH_MAX], *kb_text;
	uint32_t cpu;

	k->lost = 0;
	free(k->cmdlines);
	k->cmdlines = NULL;
	if (!k->nr_cpus)
		return die(1, "-k: kernel instance %s: its pages were not opened", k->l.instance);
	for (cpu = 0; cpu < k->nr_cpus; cpu++) {
		/* what the kernel lost on this CPU: overwritten, or refused when full */
		kt_fmt(path, sizeof(path), "%s/instances/%s/per_cpu/cpu%u/stats", k->l.tracefs,
		       k->l.instance, cpu);
		kb_text = kt_slurp(path, 4096);
		for (char *w = kb_text; w && *w; w = strchr(w, '\n') ? strchr(w, '\n') + 1 : NULL) {
			if (strncmp(w, "overrun: ", 9) == 0)
				k->lost += strtoull(w + 9, NULL, 10);
			else if (strncmp(w, "dropped events: ", 16) == 0)
				k->lost += strtoull(w + 16, NULL, 10);
		}
		free(kb_text);
	}
	/* the kernel's pid->comm names: its one saved_cmdlines (instances have none), read only */
	kt_fmt(path, sizeof(path), "%s/saved_cmdlines", k->l.tracefs);
	k->cmdlines = kt_slurp(path, 4 << 20);
	*kb = (struct fdr_tracedat_kbuf){ .name = k->l.instance,
					  .clock = k->l.clock,
					  .page_size = k->page_size,
					  .nr_cpus = k->nr_cpus,
					  .raw_fds = k->fds,
					  .nr_formats = k->nr,
					  .fmt_system = (const char *const *)k->sys,
					  .fmt_text = (const char *const *)k->text,
					  .cmdlines = k->cmdlines,
					  .spool_fds = k->spool,
					  .spool_len = k->spool_len };
	return 0;
}

void ktrace_rec_free(struct ktrace_rec *k)
{
	uint32_t i;

	for (i = 0; i < k->nr; i++) {
		free(k->sys[i]);
		free(k->text[i]);
	}
	for (i = 0; i < k->nr_cpus; i++) {
		if (k->fds[i] >= 0)
			close(k->fds[i]);
		if (k->spool[i] >= 0)
			close(k->spool[i]);
	}
	if (k->have_pipe) {
		close(k->pipe[0]);
		close(k->pipe[1]);
	}
	free(k->sys);
	free(k->text);
	free(k->fds);
	free(k->spool);
	free(k->spool_len);
	free(k->cmdlines);
	memset(k, 0, sizeof(*k));
}

/* ---- fdr snapshot save: the kernel instance frozen with fdr's snapshot ------------------- */

/*
 * A kernel built without CONFIG_TRACER_SNAPSHOT (the development machine's)
 * has no snapshot of an instance, so fdr freezes it instead: tracing_on 0 as
 * soon as the saver sees fdr's snapshot, the instance's records taken out,
 * tracing_on back as it was (docs/design/kernel-timeline.md, Snapshots of both).
 * One open of tracing_on reads its state and writes the 0.
 */
int ktrace_snap_freeze(const struct fdr_kernel_link *l, int *was_on)
{
	char path[PATH_MAX], c = '1';
	int fd, ret = 0;

	kt_fmt(path, sizeof(path), "%s/instances/%s/tracing_on", l->tracefs, l->instance);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (pread(fd, &c, 1, 0) != 1)
		c = '1';
	*was_on = c != '0';
	if (*was_on && pwrite(fd, "0\n", 2, 0) != 2)
		ret = -errno;
	close(fd);
	return ret;
}

int ktrace_snap_resume(const struct fdr_kernel_link *l, int was_on)
{
	return was_on ? kt_write(l->tracefs, l->instance, "tracing_on", "1\n") : 0;
}

int ktrace_snap_text(const struct fdr_kernel_link *l, struct fdr_buf *k)
{
	char path[PATH_MAX];
	int ret, fd;

	kt_fmt(path, sizeof(path), "%s/instances/%s/trace", l->tracefs, l->instance);
	ret = kt_read_all(path, k);
	if (ret)
		return -ret;
	/* taken: the instance starts again empty, as fdr's live buffer after a swap */
	fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

int ktrace_snap_merge(const struct fdr_buf *a, const struct fdr_buf *k,
		      const struct fdr_kernel_link *l, FILE *out)
{
	return kt_merge_write(a, k, l, out);
}

int ktrace_snap_pages(struct ktrace_rec *k, const char *out_path)
{
	unsigned char *page;
	uint32_t cpu;
	int ret = ktrace_rec_open(k, out_path);
	int64_t moved;

	if (ret)
		return ret;
	moved = ktrace_rec_take(k);
	if (moved < 0)
		return die(1, "kernel instance %s: cannot take its pages: %s", k->l.instance,
			   strerror((int)-moved));
	page = malloc(k->page_size);
	if (!page)
		return die(1, "out of memory");
	for (cpu = 0; cpu < k->nr_cpus; cpu++) {
		/* splice() gave the full pages; each CPU's last one, partly filled, is read */
		for (;;) {
			ssize_t n = read(k->fds[cpu], page, k->page_size);

			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				break;
			memset(page + n, 0, k->page_size - (size_t)n);
			if (pwrite(k->spool[cpu], page, k->page_size, (off_t)k->spool_len[cpu]) !=
			    (ssize_t)k->page_size) {
				ret = die(1, "kernel instance %s: cannot keep its pages: %s",
					  k->l.instance, strerror(errno ? errno : EIO));
				break;
			}
			k->spool_len[cpu] += k->page_size;
		}
		/* closed now: tracing goes on, and an open trace_pipe_raw keeps the instance busy */
		close(k->fds[cpu]);
		k->fds[cpu] = -1;
		if (ret)
			break;
	}
	free(page);
	return ret;
}
