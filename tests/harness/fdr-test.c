// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * fdr-test.c - helpers shared by the fdr tests; see fdr-test.h.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fdr-test.h"

static cpu_set_t t_allowed;
static int t_nr_allowed;

/*
 * Runs before the event constructors (default priority): whatever the caller's
 * environment says, this binary must never reach the user's sessions.
 * Setting the variables now also means later setenv() calls only replace
 * existing entries and never move the environ array under the agent's getenv().
 */
__attribute__((constructor(101))) static void fdr_test_isolate(void)
{
	char none[PATH_MAX];
	const char *tmp = getenv("TMPDIR");

	snprintf(none, sizeof(none), "%s/fdr-test-no-root.%d/none", tmp && *tmp ? tmp : "/tmp",
		 (int)getpid());
	setenv("FDR_ROOT", none, 1);
	setenv("FDR_SESSION", "t", 1);
	setenv("FDR_CLOCK_SOURCE", "", 0); /* tests may set it to "mono" */
	setenv("FDR_NO_AGENT", "", 0);
	CPU_ZERO(&t_allowed);
	if (sched_getaffinity(0, sizeof(t_allowed), &t_allowed) == 0)
		t_nr_allowed = CPU_COUNT(&t_allowed);
	if (t_nr_allowed <= 0) {
		CPU_ZERO(&t_allowed);
		CPU_SET(0, &t_allowed);
		t_nr_allowed = 1;
	}
}

int fdr_test_setup(struct fdr_test_env *env, const struct fdr_session_opts *o)
{
	const char *tmp = getenv("TMPDIR");
	int ret;

	memset(env, 0, sizeof(*env));
	snprintf(env->root, sizeof(env->root), "%s/fdr-test.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(env->root))
		return -errno;
	if (setenv("FDR_ROOT", env->root, 1) || setenv("FDR_SESSION", "t", 1))
		return -errno;
	snprintf(env->dir, sizeof(env->dir), "%s/t", env->root);
	ret = fdr_session_create(env->dir, o, &env->s);
	if (ret) {
		rmdir(env->root);
		env->root[0] = 0;
		return ret;
	}
	ret = fdr_sync();
	return ret;
}

static int t_rm(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)type;
	(void)ftw;
	remove(path);
	return 0;
}

void fdr_test_teardown(struct fdr_test_env *env)
{
	if (env->s) {
		fdr_session_destroy(env->s);
		fdr_session_close(env->s);
		env->s = NULL;
		fdr_sync(); /* detach */
	}
	if (env->root[0]) {
		/* the session directory is gone; anything left below the root is ours */
		nftw(env->root, t_rm, 16, FTW_DEPTH | FTW_PHYS);
		env->root[0] = 0;
	}
}

int fdr_test_set_enabled(struct fdr_session *s, struct fdr_event_def *def, uint32_t inst, int on)
{
	struct fdr_abi_control *c = fdr_session_control(s);
	struct fdr_abi_event *e;
	uint64_t bit = 1ull << (inst % 64);
	int ret = fdr_sync();

	if (ret)
		return ret;
	if (!def->slot)
		return -ENOENT;
	e = &c->events[def->slot - 1];
	if (on)
		__atomic_fetch_or(&e->enabled[inst / 64], bit, __ATOMIC_RELEASE);
	else
		__atomic_fetch_and(&e->enabled[inst / 64], ~bit, __ATOMIC_RELEASE);
	fdr_session_changed(s);
	return fdr_sync();
}

char *fdr_test_read(struct fdr_session *s, const char *path, int extra_flags, size_t *len, int *err)
{
	struct fdr_file *f;
	size_t cap = 65536, n = 0;
	char *buf;
	int ret = fdr_file_open(s, path, O_RDONLY | O_NONBLOCK | extra_flags, &f);

	*err = ret;
	if (ret)
		return NULL;
	buf = malloc(cap + 1);
	if (!buf) {
		fdr_file_close(f);
		*err = -ENOMEM;
		return NULL;
	}
	for (;;) {
		ssize_t r;

		if (cap - n < 4096) {
			char *nb = realloc(buf, cap * 2 + 1);

			if (!nb) {
				*err = -ENOMEM;
				break;
			}
			buf = nb;
			cap *= 2;
		}
		r = fdr_file_read(f, buf + n, cap - n);
		if (r == -EAGAIN || r == 0)
			break;
		if (r < 0) {
			*err = (int)r;
			break;
		}
		n += (size_t)r;
	}
	fdr_file_close(f);
	buf[n] = 0;
	if (len)
		*len = n;
	if (*err) {
		free(buf);
		return NULL;
	}
	return buf;
}

ssize_t fdr_test_write(struct fdr_session *s, const char *path, int flags, const void *buf,
		       size_t len, char *msg, size_t msg_len)
{
	struct fdr_file *f;
	ssize_t ret = fdr_file_open(s, path, O_WRONLY | flags, &f);

	if (msg && msg_len)
		msg[0] = 0;
	if (ret)
		return ret;
	ret = fdr_file_write(f, buf, len);
	if (msg && msg_len)
		snprintf(msg, msg_len, "%s", fdr_file_error(f));
	fdr_file_close(f);
	return ret;
}

ssize_t fdr_test_puts(struct fdr_session *s, const char *path, int flags, const char *text)
{
	return fdr_test_write(s, path, flags, text, strlen(text), NULL, 0);
}

int fdr_test_nr_allowed_cpus(void)
{
	return t_nr_allowed;
}

int fdr_test_pin(int idx)
{
	cpu_set_t one;
	int cpu, k = 0;

	for (cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		if (!CPU_ISSET(cpu, &t_allowed))
			continue;
		if (k++ != idx)
			continue;
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		if (sched_setaffinity(0, sizeof(one), &one))
			return -1;
		return cpu;
	}
	return -1;
}

int fdr_test_collect(struct fdr_session *s, uint32_t inst, int cpu, unsigned flags,
		     struct fdr_test_recs *out)
{
	struct fdr_reader *r;
	struct fdr_record rec;
	size_t cap = 0;
	int ret;

	memset(out, 0, sizeof(*out));
	ret = fdr_reader_open(s, inst, cpu, flags, &r);
	if (ret)
		return ret;
	while ((ret = fdr_reader_next(r, &rec)) > 0) {
		struct fdr_test_rec *t;

		if (out->nr == cap) {
			size_t ncap = cap ? cap * 2 : 1024;
			struct fdr_test_rec *nv = realloc(out->v, ncap * sizeof(*nv));

			if (!nv) {
				ret = -ENOMEM;
				break;
			}
			out->v = nv;
			cap = ncap;
		}
		t = &out->v[out->nr];
		t->cpu = rec.cpu;
		t->len = rec.len;
		t->ts = rec.ts;
		t->raw_ts = rec.raw_ts;
		t->lost_before = rec.lost_before;
		t->payload = malloc(rec.len ? rec.len : 1);
		if (!t->payload) {
			ret = -ENOMEM;
			break;
		}
		memcpy(t->payload, rec.payload, rec.len);
		out->lost += rec.lost_before;
		out->nr++;
	}
	fdr_reader_close(r);
	return ret < 0 ? ret : 0;
}

void fdr_test_recs_free(struct fdr_test_recs *r)
{
	size_t i;

	for (i = 0; i < r->nr; i++)
		free(r->v[i].payload);
	free(r->v);
	memset(r, 0, sizeof(*r));
}

uint64_t fdr_test_stat_field(const char *text, const char *name)
{
	size_t n = strlen(name);
	const char *p = text;

	while (p && *p) {
		if (strncmp(p, name, n) == 0 && p[n] == ':')
			return strtoull(p + n + 1, NULL, 10);
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return UINT64_MAX;
}

size_t fdr_test_count(const char *hay, const char *needle)
{
	size_t n = 0, len = strlen(needle);

	if (!len)
		return 0;
	while ((hay = strstr(hay, needle))) {
		n++;
		hay += len;
	}
	return n;
}
