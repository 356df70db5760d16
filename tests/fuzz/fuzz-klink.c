// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * fuzz-klink.c - a hostile link to a kernel instance (the session file
 * DIR/kernel, which anyone who may write the session may write) and hostile
 * trace lines, the two parsers of a linked session's merged trace
 * (lib/ctl/kmerge.c, docs/design/kernel-timeline.md).
 *
 * Each input is written as DIR/kernel and read with fdr_kernel_link_read():
 * when it accepts the link, its instance must begin with "fdr-", hold no '/'
 * and fit, and its tracefs path must be absolute. Then every line of the input
 * goes to fdr_kernel_line_ts(). Nothing may crash or read out of bounds.
 */
#include "fuzz.h"

static char fk_dir[1024]; /* room for "/kernel" in fz_write_file()'s PATH_MAX */

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	snprintf(fz_root, sizeof(fz_root), "%s/fdr-fuzz-klink.XXXXXX",
		 getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(fz_root)) {
		perror("mkdtemp");
		exit(2);
	}
	atexit(fz_cleanup);
	if (strlen(fz_root) >= sizeof(fk_dir)) {
		fprintf(stderr, "fuzz-klink: %s: too long a temporary directory\n", fz_root);
		exit(2);
	}
	memcpy(fk_dir, fz_root, strlen(fz_root) + 1);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fdr_kernel_link l;
	const char *p = (const char *)data, *e = p + size;
	char path[PATH_MAX + 16];
	uint64_t key;
	int ret;

	if (!fk_dir[0])
		LLVMFuzzerInitialize(NULL, NULL);
	snprintf(path, sizeof(path), "%s/kernel", fk_dir);
	if (fz_write_file(fk_dir, "kernel", data, size))
		return 0;
	ret = fdr_kernel_link_read(fk_dir, &l);
	if (ret == 0) {
		if (strncmp(l.instance, "fdr-", 4) || strchr(l.instance, '/') ||
		    !memchr(l.instance, 0, sizeof(l.instance)) || l.tracefs[0] != '/' ||
		    !memchr(l.tracefs, 0, sizeof(l.tracefs)) ||
		    !memchr(l.clock, 0, sizeof(l.clock)))
			abort(); /* accepted a link that does not check out */
	} else if (ret > 0) {
		abort(); /* errors are negative errnos */
	}
	while (p < e) {
		const char *nl = memchr(p, '\n', (size_t)(e - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(e - p);

		ret = fdr_kernel_line_ts(p, len, &key);
		if (ret != 0 && ret != -1)
			abort();
		p += len + (nl != NULL);
	}
	unlink(path);
	return 0;
}

int fdr_fuzz_write_seeds(const char *dir)
{
	static const char *const seeds[] = {
		"tracefs /sys/kernel/tracing\ninstance fdr-kt-ed435154\nclock mono\n",
		"tracefs /sys/kernel/tracing\ninstance fdr-../../x\nclock mono\n",
		"tracefs /tmp\ninstance fdr-kt-1\nclock mono\n",
		"tracefs relative\ninstance fdr-kt-1\nclock x86-tsc\n",
		"instance fdr-\nclock mono\ntracefs /sys/kernel/tracing\n",
		"tracefs /sys/kernel/tracing\ninstance other\nclock mono",
		("         ktime-app-2095    [000] ..... 13768.525517: step: n=1 phase=0\n"
		 "K        ktime-app-2095    [000] d..2. 13768.525523: sched_switch: prev_comm=x\n"
		 " => __schedule\nCPU:0 [LOST 12 EVENTS]\n"),
		("  x-1 [001] d..2. 123456789012: sched_switch: raw count\n"
		 "  x-1 [001] d..2. 1.1234567: seven digits\n[99999999999999999999] . 1:\n["),
	};
	char name[16];
	size_t i;

	for (i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++) {
		snprintf(name, sizeof(name), "seed-%02zu", i);
		if (fz_write_file(dir, name, seeds[i], strlen(seeds[i])))
			return -1;
	}
	return 0;
}
