// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * probe-define.c - the test's own writer of the session's probes file, until
 * the uprobe_events file (lib/ctl) writes it: it follows the protocol of
 * fdr-abi.h (struct fdr_abi_probes) the way the control side does, with the
 * control side's parser, compiler and event description (lib/ctl/uprobe.h).
 *
 *   probe-define add SLOT 'p:GRP/EVENT PATH:SYMBOL ARGS...'   define slot SLOT
 *   probe-define del SLOT                                      free slot SLOT
 *   probe-define count SLOT                                    print "HITS MISSES"
 *
 * The session is $FDR_SESSION of $FDR_ROOT, made beforehand ('fdr start').
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/core-local.h"
#include "ctl/uprobe.h"

static int fail(const char *what, int err)
{
	fprintf(stderr, "probe-define: %s: %s\n", what, strerror(err < 0 ? -err : err));
	return 1;
}

/* The probes file, made whole if absent (magic stored last), mapped. */
static struct fdr_abi_probes *map_probes(struct fdr_session *s)
{
	char path[4200];
	struct fdr_abi_probes *p;
	int fd;

	snprintf(path, sizeof(path), "%s/probes", fdr_session_path(s));
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0 || ftruncate(fd, sizeof(*p)))
		return NULL;
	p = mmap(NULL, sizeof(*p), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return NULL;
	if (p->magic != FDR_ABI_MAGIC_PROBES) {
		p->struct_size = sizeof(*p);
		p->version = FDR_ABI_VERSION;
		__atomic_store_n(&p->magic, FDR_ABI_MAGIC_PROBES, __ATOMIC_RELEASE);
	}
	return p;
}

int main(int argc, char **argv)
{
	static struct fdr_uprobe_cmd cmd;
	struct fdr_uprobe_err err = { 0 };
	struct fdr_abi_event ev;
	struct fdr_abi_probes *p;
	struct fdr_abi_probe_slot *sl;
	struct fdr_session *s;
	char dir[4096];
	struct stat st;
	uint32_t evslot;
	size_t plen;
	unsigned long slot;
	int ret;

	if (argc < 3 || (strcmp(argv[1], "add") == 0 && argc != 4)) {
		fprintf(stderr, "usage: probe-define add|del|count SLOT [LINE]\n");
		return 2;
	}
	slot = strtoul(argv[2], NULL, 0);
	if (slot >= FDR_MAX_PROBES)
		return fail("slot", EINVAL);
	if ((ret = fdr_session_default_dir(dir, sizeof(dir))) || (ret = fdr_session_open(dir, &s)))
		return fail("session", ret);
	p = map_probes(s);
	if (!p)
		return fail("probes file", errno);
	sl = &p->probes[slot];
	if (strcmp(argv[1], "count") == 0) {
		printf("%llu %llu\n",
		       (unsigned long long)__atomic_load_n(&sl->hits, __ATOMIC_RELAXED),
		       (unsigned long long)__atomic_load_n(&sl->misses, __ATOMIC_RELAXED));
		fdr_session_close(s);
		return 0;
	}
	if (strcmp(argv[1], "add") == 0) {
		if ((ret = fdr_uprobe_parse(argv[3], &cmd, &err)) < 0 ||
		    (ret = fdr_uprobe_resolve(&cmd, &err)) < 0) {
			fprintf(stderr, "probe-define: %s (at %d)\n", err.msg, err.pos);
			return 1;
		}
		if (stat(cmd.path, &st))
			return fail(cmd.path, errno);
		if (strlen(cmd.path) >= FDR_PROBE_PATH_LEN)
			return fail("path too long", ENAMETOOLONG);
		if ((ret = fdr_uprobe_event(&cmd, &ev, &err)) < 0)
			return fail(err.msg ? err.msg : "event", ret);
	}
	if ((ret = fdr_session_lock(s)))
		return fail("lock", ret);
	if (strcmp(argv[1], "add") == 0) {
		if ((ret = fdr_session_register_event(s, &ev, &evslot))) {
			fdr_session_unlock(s);
			return fail("register", ret);
		}
		if (__atomic_load_n(&sl->state, __ATOMIC_RELAXED) == FDR_PROBE_SLOT_LIVE)
			p->nr_live--;
		__atomic_store_n(&sl->state, FDR_PROBE_SLOT_FREE, __ATOMIC_RELEASE);
		ret = fdr_uprobe_compile(&cmd, (struct fdr_fetch_prog *)sl->prog, sizeof(sl->prog),
					 &plen);
		if (ret < 0) {
			fdr_session_unlock(s);
			return fail("compile", ret);
		}
		sl->prog_len = (uint32_t)plen;
		sl->event_slot = evslot;
		sl->flags = cmd.is_return ? FDR_PROBE_F_RETURN : 0;
		sl->offset = cmd.offset;
		sl->ref_ctr_offset = 0;
		sl->dev = st.st_dev;
		sl->ino = st.st_ino;
		sl->hits = sl->misses = 0;
		memcpy(sl->path, cmd.path, strlen(cmd.path) + 1);
		fdr_uprobe_format(&cmd, sl->line, sizeof(sl->line));
		__atomic_fetch_add(&sl->gen, 1, __ATOMIC_RELEASE);
		__atomic_store_n(&sl->state, FDR_PROBE_SLOT_LIVE, __ATOMIC_RELEASE);
		p->nr_live++;
		printf("%s/%s\n", ev.system, ev.name);
	} else {
		if (__atomic_load_n(&sl->state, __ATOMIC_RELAXED) == FDR_PROBE_SLOT_LIVE)
			p->nr_live--;
		__atomic_store_n(&sl->state, FDR_PROBE_SLOT_FREE, __ATOMIC_RELEASE);
		__atomic_fetch_add(&sl->gen, 1, __ATOMIC_RELEASE);
	}
	__atomic_fetch_add(&p->gen, 1, __ATOMIC_RELEASE);
	fdr_session_unlock(s);
	fdr_session_changed(s);
	fdr_session_close(s);
	return 0;
}
