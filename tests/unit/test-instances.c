// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test-instances.c - instances (docs/tracefs.md, Instances; issue 3): events are
 * recorded exactly in the instances where they are enabled, 64 instances each
 * with its own set, instances are independent (tracing_on, filters, triggers,
 * markers, snapshots), and mkdir/rmdir answer as tracefs does: EBUSY while a
 * file of the instance is open (also by another process, not after it died),
 * ENOENT, EEXIST, EPERM.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "fdr-criterion.h"
#include "fdr-test.h"

/* clang-format off */
FDR_EVENT(fli, e0, FDR_PROTO(int v), FDR_ARGS(v), FDR_FIELDS(fdr_field_int(int, v, v)))
FDR_EVENT(fli, e1, FDR_PROTO(int v), FDR_ARGS(v), FDR_FIELDS(fdr_field_int(int, v, v)))
FDR_EVENT(fli, e2, FDR_PROTO(int v), FDR_ARGS(v), FDR_FIELDS(fdr_field_int(int, v, v)))
FDR_EVENT(fli, e3, FDR_PROTO(int v), FDR_ARGS(v), FDR_FIELDS(fdr_field_int(int, v, v)))
FDR_EVENT(fli, e4, FDR_PROTO(int v), FDR_ARGS(v), FDR_FIELDS(fdr_field_int(int, v, v)))
FDR_EVENT(fli2, e5, FDR_PROTO(int v), FDR_ARGS(v), FDR_FIELDS(fdr_field_int(int, v, v)))
/* clang-format on */

#define NR_EV 6
#define NR_INST 64

static struct fdr_test_env env;

static void init(void)
{
	cr_assert_eq(fdr_test_setup(&env, NULL), 0, "session setup failed");
	cr_assert(fdr_ev_fli_e0.slot && fdr_ev_fli2_e5.slot, "test events not registered");
}

static void fini(void)
{
	fdr_test_teardown(&env);
}

TestSuite(instances, .init = init, .fini = fini, .timeout = 90);

static void ok_wr(const char *path, int flags, const char *text)
{
	char msg[512];
	ssize_t ret = fdr_test_write(env.s, path, flags, text, strlen(text), msg, sizeof(msg));

	cr_assert_eq(ret, (ssize_t)strlen(text), "write '%s' to %s: %s (%s)", text, path,
		     strerror((int)-ret), msg);
	fdr_sync();
}

static char *cat(const char *path)
{
	int err;
	char *t = fdr_test_read(env.s, path, 0, NULL, &err);

	cr_assert_not_null(t, "read %s: %s", path, strerror(-err));
	return t;
}

static const char *ev_sys(int k)
{
	return k == 5 ? "fli2" : "fli";
}

static void emit(int k, int v)
{
	switch (k) {
	case 0:
		fdr_fli_e0(v);
		break;
	case 1:
		fdr_fli_e1(v);
		break;
	case 2:
		fdr_fli_e2(v);
		break;
	case 3:
		fdr_fli_e3(v);
		break;
	case 4:
		fdr_fli_e4(v);
		break;
	default:
		fdr_fli2_e5(v);
		break;
	}
}

/* How many lines of @text record event eK with v=V. */
static size_t lines_of(const char *text, int k, int v)
{
	char needle[32];

	snprintf(needle, sizeof(needle), " e%d: v=%d\n", k, v);
	return fdr_test_count(text, needle);
}

Test(instances, sixty_four_with_their_own_events)
{
	struct fdr_dirent *ents = NULL;
	size_t nr = 0, j;
	int n, k, dirs = 0;
	char path[128], *t;

	for (n = 0; n < NR_INST; n++) {
		snprintf(path, sizeof(path), "instances/i%d", n);
		cr_assert_eq(fdr_tree_mkdir(env.s, path), 0, "mkdir %s", path);
	}
	/* instance iN enables eK where bit K of N is set: 64 different sets */
	for (n = 0; n < NR_INST; n++) {
		for (k = 0; k < NR_EV; k++) {
			if (!(n & (1 << k)))
				continue;
			if (k % 2) {
				snprintf(path, sizeof(path), "instances/i%d/events/%s/e%d/enable",
					 n, ev_sys(k), k);
				ok_wr(path, O_TRUNC, "1");
			} else {
				char rule[32];

				snprintf(path, sizeof(path), "instances/i%d/set_event", n);
				snprintf(rule, sizeof(rule), "%s:e%d", ev_sys(k), k);
				ok_wr(path, O_APPEND, rule);
			}
		}
	}
	cr_assert_eq(fdr_tree_readdir(env.s, "instances", &ents, &nr), 0);
	for (j = 0; j < nr; j++)
		dirs += ents[j].is_dir && ents[j].name[0] == 'i';
	free(ents);
	cr_expect_eq(dirs, NR_INST, "instances/ lists %d instances", dirs);
	for (k = 0; k < NR_EV; k++)
		emit(k, 100 + k);
	/* each instance holds exactly its events, once each */
	for (n = 0; n < NR_INST; n++) {
		snprintf(path, sizeof(path), "instances/i%d/trace", n);
		t = cat(path);
		for (k = 0; k < NR_EV; k++) {
			size_t want = (n & (1 << k)) ? 1 : 0, got = lines_of(t, k, 100 + k);

			cr_expect_eq(got, want,
				     "instance i%d: e%d recorded %zu times, expected %zu", n, k,
				     got, want);
		}
		free(t);
		/* and its events/enable files say so */
		snprintf(path, sizeof(path), "instances/i%d/events/fli/e1/enable", n);
		t = cat(path);
		cr_expect_str_eq(t, (n & 2) ? "1\n" : "0\n", "%s reads %s", path, t);
		free(t);
	}
	/* the top instance enabled nothing: nothing recorded there */
	t = cat("trace");
	for (k = 0; k < NR_EV; k++)
		cr_expect_eq(lines_of(t, k, 100 + k), 0, "the top instance recorded e%d", k);
	free(t);
	/* all of them can be removed */
	for (n = 0; n < NR_INST; n++) {
		snprintf(path, sizeof(path), "instances/i%d", n);
		cr_expect_eq(fdr_tree_rmdir(env.s, path), 0, "rmdir %s", path);
	}
	fdr_sync();
	for (k = 0; k < NR_EV; k++)
		emit(k, 200 + k); /* enabled nowhere now */
	cr_assert_eq(fdr_tree_readdir(env.s, "instances", &ents, &nr), 0);
	cr_expect_eq(nr, 0, "instances/ still lists %zu entries", nr);
	free(ents);
}

Test(instances, independent)
{
	char *t;

	cr_assert_eq(fdr_tree_mkdir(env.s, "instances/a"), 0);
	cr_assert_eq(fdr_tree_mkdir(env.s, "instances/b"), 0);
	ok_wr("instances/a/events/fli/e0/enable", O_TRUNC, "1");
	ok_wr("instances/b/events/fli/e0/enable", O_TRUNC, "1");
	ok_wr("events/fli/e0/enable", O_TRUNC, "1");
	/* tracing_on */
	ok_wr("instances/a/tracing_on", O_TRUNC, "0");
	emit(0, 1);
	/* filter only in b */
	ok_wr("instances/b/events/fli/e0/filter", O_TRUNC, "v > 1");
	emit(0, 1);
	emit(0, 2);
	/* a trigger only in the top instance */
	ok_wr("events/fli/e0/trigger", O_APPEND, "traceoff if v == 3");
	emit(0, 3);
	emit(0, 4);
	/* markers go where they are written */
	ok_wr("instances/b/trace_marker", O_TRUNC, "only in b");
	t = cat("instances/a/trace");
	cr_expect(lines_of(t, 0, 1) == 0 && lines_of(t, 0, 4) == 0, "a had tracing off:\n%s", t);
	free(t);
	t = cat("instances/b/trace");
	cr_expect(lines_of(t, 0, 1) == 1 && lines_of(t, 0, 2) == 1 && lines_of(t, 0, 3) == 1 &&
			  lines_of(t, 0, 4) == 1 && strstr(t, "tracing_mark_write: only in b\n"),
		  "b: the first v=1 and the marker should be there, v=1 only once:\n%s", t);
	free(t);
	t = cat("trace");
	cr_expect(lines_of(t, 0, 1) == 2 && lines_of(t, 0, 2) == 1 && lines_of(t, 0, 3) == 1 &&
			  lines_of(t, 0, 4) == 0 && !strstr(t, "only in b"),
		  "top: both v=1, v=2, v=3 (its traceoff), no v=4, no marker:\n%s", t);
	free(t);
	t = cat("tracing_on");
	cr_expect_str_eq(t, "0\n", "the top instance's traceoff");
	free(t);
	t = cat("instances/b/tracing_on");
	cr_expect_str_eq(t, "1\n", "b's tracing_on changed by the top's trigger");
	free(t);
	t = cat("instances/a/events/fli/e0/filter");
	cr_expect_str_eq(t, "none\n", "b's filter shows in a");
	free(t);
	/* snapshots are per instance too */
	ok_wr("instances/b/snapshot", O_TRUNC, "1");
	t = cat("instances/b/snapshot");
	cr_expect(lines_of(t, 0, 4) == 1 && strstr(t, "only in b"), "b's snapshot:\n%s", t);
	free(t);
	t = cat("snapshot");
	cr_expect(strstr(t, "# * Snapshot is freed *"), "the top's snapshot after b's:\n%s", t);
	free(t);
}

/* Files that keep an instance busy while open; and those that do not. */
static const struct {
	const char *file;
	int flags;
	int busy;
} holders[] = {
	{ "trace_pipe", O_RDONLY | O_NONBLOCK, 1 },
	{ "trace", O_RDONLY, 1 },
	{ "trace_marker", O_WRONLY, 1 },
	{ "events/fli/e0/enable", O_RDONLY, 1 },
	{ "per_cpu/cpu0/trace_pipe_raw", O_RDONLY | O_NONBLOCK, 1 },
	{ "snapshot", O_RDONLY, 1 },
	{ "events/fli/e0/format", O_RDONLY, 0 },
};

Test(instances, rmdir_busy)
{
	size_t k;

	for (k = 0; k < sizeof(holders) / sizeof(holders[0]); k++) {
		struct fdr_file *f = NULL;
		char path[128];
		int ret;

		cr_assert_eq(fdr_tree_mkdir(env.s, "instances/busy"), 0);
		snprintf(path, sizeof(path), "instances/busy/%s", holders[k].file);
		ret = fdr_file_open(env.s, path, holders[k].flags, &f);
		cr_assert_eq(ret, 0, "open %s: %s", path, strerror(-ret));
		ret = fdr_tree_rmdir(env.s, "instances/busy");
		if (holders[k].busy) {
			cr_expect_eq(ret, -EBUSY, "rmdir while %s is open: %s, expected EBUSY",
				     path, strerror(-ret));
			fdr_file_close(f);
			f = NULL;
			ret = fdr_tree_rmdir(env.s, "instances/busy");
			cr_expect_eq(ret, 0, "rmdir after closing %s: %s", path, strerror(-ret));
		} else {
			cr_expect_eq(ret, 0, "rmdir while %s is open: %s, expected success", path,
				     strerror(-ret));
			fdr_file_close(f);
		}
		if (ret)
			fdr_tree_rmdir(env.s, "instances/busy");
	}
	/* two handles: busy until both are closed */
	{
		struct fdr_file *f1 = NULL, *f2 = NULL;

		cr_assert_eq(fdr_tree_mkdir(env.s, "instances/two"), 0);
		cr_assert_eq(fdr_file_open(env.s, "instances/two/trace", O_RDONLY, &f1), 0);
		cr_assert_eq(fdr_file_open(env.s, "instances/two/trace_marker", O_WRONLY, &f2), 0);
		fdr_file_close(f1);
		cr_expect_eq(fdr_tree_rmdir(env.s, "instances/two"), -EBUSY);
		fdr_file_close(f2);
		cr_expect_eq(fdr_tree_rmdir(env.s, "instances/two"), 0);
	}
	/* a trace_pipe held open by another process: EBUSY, until that process dies */
	{
		int p[2];
		char c = 0;
		pid_t pid;

		cr_assert_eq(fdr_tree_mkdir(env.s, "instances/other"), 0);
		cr_assert_eq(pipe(p), 0);
		pid = fork();
		if (pid == 0) {
			struct fdr_session *s;
			struct fdr_file *f;

			alarm(30);
			if (fdr_session_open(env.dir, &s) ||
			    fdr_file_open(s, "instances/other/trace_pipe", O_RDONLY | O_NONBLOCK,
					  &f) ||
			    write(p[1], "o", 1) != 1)
				_exit(3);
			for (;;)
				pause();
		}
		cr_assert_gt(pid, 0);
		cr_assert_eq(read(p[0], &c, 1), 1);
		cr_assert_eq(c, 'o');
		cr_expect_eq(fdr_tree_rmdir(env.s, "instances/other"), -EBUSY,
			     "rmdir while another process reads its trace_pipe");
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		cr_expect_eq(fdr_tree_rmdir(env.s, "instances/other"), 0,
			     "rmdir after the reader died");
		close(p[0]);
		close(p[1]);
	}
}

Test(instances, mkdir_rmdir_errors)
{
	char *t;

	cr_expect_eq(fdr_tree_rmdir(env.s, "instances/missing"), -ENOENT, "rmdir of a missing one");
	cr_assert_eq(fdr_tree_mkdir(env.s, "instances/x"), 0);
	cr_expect_eq(fdr_tree_mkdir(env.s, "instances/x"), -EEXIST, "mkdir twice");
	cr_expect_eq(fdr_tree_mkdir(env.s, "instances/x/y"), -EPERM, "mkdir below an instance");
	cr_expect_eq(fdr_tree_mkdir(env.s, "instances/x/events/z"), -EPERM,
		     "mkdir deep below an instance");
	cr_expect_eq(fdr_tree_mkdir(env.s, "events/z"), -EPERM, "mkdir outside instances/");
	cr_expect_eq(fdr_tree_rmdir(env.s, "events"), -EPERM, "rmdir outside instances/");
	{
		struct fdr_file *f = NULL;
		int ret = fdr_file_open(env.s, "instances/newfile", O_WRONLY | O_CREAT, &f);

		cr_expect(ret == -EACCES || ret == -ENOENT,
			  "creating a file in instances/: %s, expected EACCES", strerror(-ret));
		fdr_file_close(ret ? NULL : f);
	}
	/* removed, then made again: a fresh instance */
	ok_wr("instances/x/events/fli/e0/enable", O_TRUNC, "1");
	emit(0, 7);
	cr_assert_eq(fdr_tree_rmdir(env.s, "instances/x"), 0);
	cr_expect_eq(fdr_tree_rmdir(env.s, "instances/x"), -ENOENT, "rmdir twice");
	{
		struct fdr_file *f = NULL;

		cr_expect_eq(fdr_file_open(env.s, "instances/x/trace", O_RDONLY, &f), -ENOENT,
			     "a file of a removed instance");
		fdr_file_close(f);
	}
	cr_assert_eq(fdr_tree_mkdir(env.s, "instances/x"), 0);
	t = cat("instances/x/events/fli/e0/enable");
	cr_expect_str_eq(t, "0\n", "a re-made instance has its events off");
	free(t);
	t = cat("instances/x/trace");
	cr_expect_eq(lines_of(t, 0, 7), 0, "a re-made instance holds the old one's records");
	free(t);
}
