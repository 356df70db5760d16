// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test-uprobe-tree.c - uprobe_events, dynamic_events and uprobe_profile through
 * the control tree (lib/ctl/probes.c, docs/tracefs.md): what each line does to
 * the session (its read-back, its event under events/GRP/EVENT with the
 * kernel's format file), the kernel's errno contract and error_log entries,
 * multi-location events, removal (-:, '>') and EBUSY, and the checks of the
 * probes file in shared memory.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "fdr-criterion.h"
#include "core/core-local.h"
#include "fdr-test.h"
#include "fdr/fdr-session.h"
#include "uprobe-kernel-rows.h"

/* clang-format off */
FDR_EVENT(tupt, plain, FDR_PROTO(int v), FDR_ARGS(v), FDR_FIELDS(fdr_field_int(int, v, v)))
/* clang-format on */

#define UE "uprobe_events"
#define OK 0

static struct fdr_test_env env;

static void init(void)
{
	cr_assert_eq(fdr_test_setup(&env, NULL), 0, "session setup failed");
	cr_assert(fdr_ev_tupt_plain.slot, "test event not registered");
}

static void fini(void)
{
	fdr_test_teardown(&env);
}

TestSuite(uptree, .init = init, .fini = fini, .timeout = 30);

static char *cat(const char *path)
{
	int err;
	char *t = fdr_test_read(env.s, path, 0, NULL, &err);

	cr_assert_not_null(t, "read %s: %s", path, strerror(-err));
	return t;
}

static void expect_cat(const char *path, const char *want, const char *ctx)
{
	char *t = cat(path);

	cr_expect_str_eq(t, want, "%s: %s reads\n'%s'\nexpected\n'%s'", ctx, path, t, want);
	free(t);
}

/* One write; @want OK or an errno; returns the handle's message. */
static void wr(const char *path, int flags, const char *in, int want)
{
	char msg[1024] = "";
	ssize_t r = fdr_test_write(env.s, path, flags, in, strlen(in), msg, sizeof(msg));

	if (want == OK)
		cr_assert_eq(r, (ssize_t)strlen(in), "write '%s' to %s: %zd (%s)", in, path, r,
			     msg);
	else
		cr_assert_eq(r, -want, "write '%s' to %s: %zd, expected -%d (%s)", in, path, r,
			     want, strerror(want));
}

/* The last error_log entry, without its "[timestamp] " prefix. */
static char *last_error(void)
{
	char *t = cat("error_log"), *last = NULL, *p, *out;

	/* entries start with "[timestamp] " at the start of a line */
	for (p = t; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		if (*p == '[' && strstr(p, "] "))
			last = strstr(p, "] ") + 2;
	cr_assert_not_null(last, "error_log is empty");
	out = strdup(last);
	free(t);
	return out;
}

static void expect_error(const char *entry, const char *ctx)
{
	char *e = last_error();

	cr_expect_str_eq(e, entry, "%s: error_log ends with\n'%s'\nexpected\n'%s'", ctx, e, entry);
	free(e);
}

/* "trace_uprobe: error: MSG\n  Command: CMD\n<caret under CMD[pos]>" */
static char *entry(const char *msg, const char *cmd, int pos)
{
	char *s = NULL;

	cr_assert(asprintf(&s, "trace_uprobe: error: %s\n  Command: %s\n%*s^\n", msg, cmd, 11 + pos,
			   "") > 0);
	return s;
}

/* ---- the kernel's definitions ------------------------------------------------------------ */

/* The event name of a read-back line "p:GRP/EVENT PATH..." */
static void readback_name(const char *rb, char *grp, char *ev)
{
	const char *slash = strchr(rb, '/'), *sp = strchr(rb, ' ');

	cr_assert(slash && sp && slash < sp);
	snprintf(grp, 64, "%.*s", (int)(slash - rb - 2), rb + 2);
	snprintf(ev, 64, "%.*s", (int)(sp - slash - 1), slash + 1);
}

Test(uptree, kernel_definitions)
{
	char all[32768] = "", path[256], grp[64], ev[64];
	size_t i;

	for (i = 0; i < sizeof(kernel_ok) / sizeof(kernel_ok[0]); i++) {
		const struct ok_row *r = &kernel_ok[i];
		char *fmt, *tail;

		wr(UE, O_APPEND, r->line, OK);
		strcat(all, r->readback);
		readback_name(r->readback, grp, ev);
		snprintf(path, sizeof(path), "events/%s/%s/format", grp, ev);
		fmt = cat(path);
		tail = strstr(fmt, "\tfield:unsigned long __probe");
		cr_assert_not_null(tail, "%s: %s", path, fmt);
		cr_expect_str_eq(tail, r->format, "%s: format ends\n%s\nexpected\n%s", r->line,
				 tail, r->format);
		cr_expect(strncmp(fmt, "name: ", 6) == 0 && strstr(fmt, "\nID: "), "%s", fmt);
		free(fmt);
	}
	expect_cat(UE, all, "every definition, in order");
	expect_cat("dynamic_events", all, "dynamic_events lists the same");
}

Test(uptree, event_files_like_any_event)
{
	char *t;

	wr(UE, O_APPEND, "p:fdrchk/tfn /bin/true:0x1149 x=%di:s64", OK);
	t = cat("events/fdrchk/tfn/id");
	cr_expect(atoi(t) >= 1000, "id %s", t);
	free(t);
	expect_cat("events/fdrchk/tfn/enable", "0\n", "a new probe is disabled");
	expect_cat("events/fdrchk/tfn/filter", "none\n", "no filter");
	wr("set_event", O_APPEND, "fdrchk:tfn", OK);
	expect_cat("events/fdrchk/tfn/enable", "1\n", "set_event enables it");
	expect_cat("events/fdrchk/enable", "1\n", "its group");
	wr("events/fdrchk/enable", O_TRUNC, "0", OK);
	expect_cat("events/fdrchk/tfn/enable", "0\n", "the group disables it");
	/* in an instance too, but the definition files are the top instance's only */
	cr_assert_eq(fdr_tree_mkdir(env.s, "instances/i1"), 0);
	wr("instances/i1/events/fdrchk/tfn/enable", O_TRUNC, "1", OK);
	expect_cat("instances/i1/events/fdrchk/tfn/enable", "1\n", "enabled in i1");
	wr("instances/i1/" UE, O_APPEND, "-:fdrchk/tfn", ENOENT);
	/* enabled in an instance: busy */
	wr(UE, O_APPEND, "-:fdrchk/tfn", EBUSY);
	/* removing the instance disables it there */
	cr_assert_eq(fdr_tree_rmdir(env.s, "instances/i1"), 0);
	wr(UE, O_APPEND, "-:fdrchk/tfn", OK);
}

/* ---- lines, errors ---------------------------------------------------------------------- */

Test(uptree, multi_location_and_eexist)
{
	char *e;

	wr(UE, O_APPEND, "p:fdrchk/tfn /bin/true:0x1149 x=%di:s64 s=+0(%si):string", OK);
	/* same arguments (other bodies may differ): another location of the same event */
	wr(UE, O_APPEND, "p:fdrchk/tfn /bin/true:0x1150 x=%si:s64 s=+8(%si):string", OK);
	expect_cat(UE,
		   "p:fdrchk/tfn /bin/true:0x0000000000001149 x=%di:s64 s=+0(%si):string\n"
		   "p:fdrchk/tfn /bin/true:0x0000000000001150 x=%si:s64 s=+8(%si):string\n",
		   "two locations");
	/* another type */
	wr(UE, O_APPEND, "p:fdrchk/tfn /bin/true:0x1160   x=%di:s32   s=+0(%si):string", EEXIST);
	e = entry("Argument type or name is different from existing probe",
		  "p:fdrchk/tfn /bin/true:0x1160 x=%di:s32 s=+0(%si):string",
		  (int)strlen("p:fdrchk/tfn /bin/true:0x1160 "));
	expect_error(e, "different type");
	free(e);
	/* another kind */
	wr(UE, O_APPEND, "r:fdrchk/tfn /bin/true:0x1160 x=%di:s64 s=+0(%si):string", EEXIST);
	e = entry("Probe type is different from existing probe",
		  "r:fdrchk/tfn /bin/true:0x1160 x=%di:s64 s=+0(%si):string", 0);
	expect_error(e, "different kind");
	free(e);
	/* the very same */
	wr(UE, O_APPEND, "p:fdrchk/tfn /bin/true:0x1149 x=%di:s64 s=+0(%si):string", EEXIST);
	e = entry("There is already the exact same probe event",
		  "p:fdrchk/tfn /bin/true:0x1149 x=%di:s64 s=+0(%si):string", 0);
	expect_error(e, "same probe");
	free(e);
	/* the name of an event that is not a probe */
	wr(UE, O_APPEND, "p:tupt/plain /bin/true:0x1149", EEXIST);
	e = entry("Given group/event name is already used by another event",
		  "p:tupt/plain /bin/true:0x1149", 0);
	expect_error(e, "static event's name");
	free(e);
	expect_cat(UE,
		   "p:fdrchk/tfn /bin/true:0x0000000000001149 x=%di:s64 s=+0(%si):string\n"
		   "p:fdrchk/tfn /bin/true:0x0000000000001150 x=%si:s64 s=+8(%si):string\n",
		   "refused lines changed nothing");
	/* -: without a group removes the event and both its locations */
	wr(UE, O_APPEND, "-:tfn", OK);
	expect_cat(UE, "", "removed");
	{
		int err;
		char *t = fdr_test_read(env.s, "events/fdrchk/tfn/format", 0, NULL, &err);

		cr_expect_null(t, "events/fdrchk/tfn is gone with its probe");
		cr_expect_eq(err, -ENOENT);
		free(t);
	}
	wr(UE, O_APPEND, "-:fdrchk/tfn", ENOENT);
	wr(UE, O_APPEND, "-:nosuch/tfn", ENOENT);
}

Test(uptree, lines_stop_at_the_first_error)
{
	char *e;

	/* comments and blank lines skipped, the first bad line stops, earlier stay */
	wr(UE, O_APPEND,
	   "# probes\n\np:fdrchk/a /bin/true:0x1149 # the first\n  \n"
	   "p:fdrchk/b /bin/nosuch:0x10 x=%di\np:fdrchk/c /bin/true:0x1149\n",
	   ENOENT);
	expect_cat(UE, "p:fdrchk/a /bin/true:0x0000000000001149\n", "a applied, c not");
	e = entry("Failed to find the given file", "p:fdrchk/b /bin/nosuch:0x10 x=%di", 11);
	expect_error(e, "missing file");
	free(e);
	wr(UE, O_APPEND, "p:fdrchk/d /bin/true:0x1149 x=%zz", EINVAL);
	e = entry("Invalid register name", "p:fdrchk/d /bin/true:0x1149 x=%zz", 30);
	expect_error(e, "bad register");
	free(e);
	/* fdr logs what the kernel refuses silently */
	wr(UE, O_APPEND, "q:fdrchk/e /bin/true:0x1149", EINVAL);
	e = entry("Unknown probe command (expected 'p', 'r' or '-:')",
		  "q:fdrchk/e /bin/true:0x1149", 0);
	expect_error(e, "unknown command");
	free(e);
	/* fdr: an absolute path (bin/true exists from /) */
	cr_assert_eq(chdir("/"), 0);
	wr(UE, O_APPEND, "p:fdrchk/f bin/true:0x1149", EINVAL);
	e = entry("fdr needs an absolute path (fdr looks the file up, not the writer)",
		  "p:fdrchk/f bin/true:0x1149", 11);
	expect_error(e, "relative path");
	free(e);
	/* the default name, and '>' with nothing enabled removes everything */
	wr(UE, O_APPEND, "p /bin/true:0x1149", OK);
	expect_cat(UE,
		   "p:fdrchk/a /bin/true:0x0000000000001149\n"
		   "p:uprobes/p_true_0x1149 /bin/true:0x0000000000001149\n",
		   "default group and name");
	wr("dynamic_events", O_TRUNC, "", OK);
	expect_cat(UE, "", "'>' on dynamic_events");
	expect_cat("uprobe_profile", "", "no probe");
}

Test(uptree, path_too_long)
{
	char dir[PATH_MAX], line[PATH_MAX + 64], *e, name[101];
	int fd;

	memset(name, 'd', 100);
	name[100] = 0;
	cr_assert_lt(strlen(env.root), 1024);
	snprintf(dir, sizeof(dir), "%.1024s/%s", env.root, name);
	cr_assert_eq(mkdir(dir, 0700), 0);
	snprintf(dir + strlen(dir), sizeof(dir) - strlen(dir), "/%s", name);
	cr_assert_eq(mkdir(dir, 0700), 0);
	name[60] = 0;
	snprintf(dir + strlen(dir), sizeof(dir) - strlen(dir), "/%s", name);
	fd = open(dir, O_CREAT | O_WRONLY, 0600);
	cr_assert(fd >= 0);
	close(fd);
	cr_assert_gt(strlen(dir), FDR_PROBE_PATH_LEN - 1);
	snprintf(line, sizeof(line), "p:fdrchk/long %s:0x10", dir);
	wr(UE, O_APPEND, line, ENAMETOOLONG);
	e = last_error();
	cr_expect(strstr(e, "File path is too long (fdr keeps at most 255 bytes)"), "%s", e);
	free(e);
	expect_cat(UE, "", "nothing defined");
}

/* PATH:SYMBOL reads back with the file offset it resolved to (fdr) */
Test(uptree, symbol_place)
{
	char line[PATH_MAX + 64], want[PATH_MAX + 128], *t, *e;
	unsigned long long off = 0;
	struct stat st;

	snprintf(line, sizeof(line), "p %s:uprobe_target_fn x=%%di", FDR_TEST_TARGET_PIE);
	wr(UE, O_APPEND, line, OK);
	t = cat(UE);
	e = strstr(t, ":0x");
	cr_assert_not_null(e, "%s", t);
	off = strtoull(e + 1, NULL, 16);
	cr_assert_eq(stat(FDR_TEST_TARGET_PIE, &st), 0);
	cr_expect(off > 0 && off < (unsigned long long)st.st_size, "offset 0x%llx", off);
	/* the default name is made from the resolved offset */
	snprintf(want, sizeof(want), "p:uprobes/p_uprobe_0x%llx %s:0x%016llx x=%%di\n", off,
		 FDR_TEST_TARGET_PIE, off);
	cr_expect_str_eq(t, want);
	free(t);
	/* the same offset written as a number is the same location */
	snprintf(line, sizeof(line), "p:uprobes/p_uprobe_0x%llx %s:0x%llx x=%%di", off,
		 FDR_TEST_TARGET_PIE, off);
	wr(UE, O_APPEND, line, EEXIST);
	e = last_error();
	cr_expect(strstr(e, "There is already the exact same probe event"), "%s", e);
	free(e);
	/* an IFUNC is refused, and a name the file does not have */
	snprintf(line, sizeof(line), "p:fdrchk/f %s:uprobe_target_ifunc", FDR_TEST_TARGET_PIE);
	wr(UE, O_APPEND, line, EOPNOTSUPP);
	snprintf(line, sizeof(line), "p:fdrchk/f %s:no_such_function", FDR_TEST_TARGET_PIE);
	wr(UE, O_APPEND, line, ENOENT);
	e = last_error();
	cr_expect(strstr(e, "Failed to find the given function symbol"), "%s", e);
	free(e);
}

/* ---- busy ---------------------------------------------------------------------------------- */

Test(uptree, busy_enabled_or_triggered)
{
	wr(UE, O_APPEND, "p:fdrchk/a /bin/true:0x1149 x=%di", OK);
	wr(UE, O_APPEND, "p:fdrchk/b /bin/true:0x1150 x=%di", OK);
	wr("events/fdrchk/a/enable", O_TRUNC, "1", OK);
	/* '>' fails at open and removes nothing */
	cr_expect_eq(fdr_test_write(env.s, UE, O_TRUNC, "", 0, NULL, 0), -EBUSY);
	cr_expect_eq(fdr_test_write(env.s, "dynamic_events", O_TRUNC, "", 0, NULL, 0), -EBUSY);
	expect_cat(UE,
		   "p:fdrchk/a /bin/true:0x0000000000001149 x=%di\n"
		   "p:fdrchk/b /bin/true:0x0000000000001150 x=%di\n",
		   "nothing removed by a refused '>'");
	wr(UE, O_APPEND, "-:fdrchk/a", EBUSY);
	/* b is not enabled: it goes */
	wr(UE, O_APPEND, "-:fdrchk/b", OK);
	wr("events/fdrchk/a/enable", O_TRUNC, "0", OK);
	/* a trigger of its own, or one that names it, holds it too */
	wr("events/fdrchk/a/trigger", O_APPEND, "traceoff", OK);
	wr(UE, O_APPEND, "-:fdrchk/a", EBUSY);
	wr("events/fdrchk/a/trigger", O_APPEND, "!traceoff", OK);
	wr("events/tupt/plain/trigger", O_APPEND, "enable_event:fdrchk:a", OK);
	wr(UE, O_APPEND, "-:fdrchk/a", EBUSY);
	cr_expect_eq(fdr_test_write(env.s, UE, O_TRUNC, "", 0, NULL, 0), -EBUSY);
	wr("events/tupt/plain/trigger", O_APPEND, "!enable_event:fdrchk:a", OK);
	/*
	 * a trigger in the last instance made (the scans stop at the instances'
	 * bound: this is its edge), on the last event registered
	 */
	cr_assert_eq(fdr_tree_mkdir(env.s, "instances/i1"), 0);
	cr_assert_eq(fdr_tree_mkdir(env.s, "instances/i2"), 0);
	wr(UE, O_APPEND, "p:fdrchk/last /bin/true:0x1151", OK);
	wr("instances/i2/events/fdrchk/last/trigger", O_APPEND, "disable_event:fdrchk:a", OK);
	wr(UE, O_APPEND, "-:fdrchk/a", EBUSY);
	expect_cat("instances/i2/events/fdrchk/a/enable", "0*\n", "soft-disabled by i2's trigger");
	wr("instances/i2/events/fdrchk/last/trigger", O_APPEND, "!disable_event:fdrchk:a", OK);
	wr("instances/i2/events/fdrchk/last/filter", O_TRUNC, "common_pid == 1", OK);
	expect_cat("instances/i2/events/fdrchk/last/filter", "common_pid == 1\n", "i2's filter");
	wr(UE, O_APPEND, "-:fdrchk/last", OK);
	cr_assert_eq(fdr_tree_rmdir(env.s, "instances/i2"), 0);
	cr_assert_eq(fdr_tree_rmdir(env.s, "instances/i1"), 0);
	/* a filter does not hold it, and goes with it */
	wr("events/fdrchk/a/filter", O_TRUNC, "x == 3", OK);
	wr(UE, O_TRUNC, "", OK);
	expect_cat(UE, "", "removed");
	wr(UE, O_APPEND, "p:fdrchk/a /bin/true:0x1149 x=%di", OK);
	expect_cat("events/fdrchk/a/filter", "none\n", "a new event with the same name");
	expect_cat("events/fdrchk/a/enable", "0\n", "disabled");
}

/*
 * Probes that come and go: each definition registers its event again (a new
 * id), and nr_events counts the registrations; the registry's scans stop at
 * events_bound, which must stay where the slots in use end (it was nr_events
 * before ABI version 5, and covered the whole registry after 1000 rounds).
 */
Test(uptree, churn_keeps_the_registry_bound)
{
	const struct fdr_abi_control *c = fdr_session_control(env.s);
	uint32_t bound0, regs0, i;

	wr(UE, O_APPEND, "p:fdrchk/stays /bin/true:0x1149", OK);
	bound0 = c->events_bound;
	regs0 = c->nr_events;
	for (i = 0; i < FDR_MAX_EVENTS + 100; i++) {
		wr(UE, O_APPEND,
		   i % 2 ? "p:fdrchk/odd /bin/true:0x1150 x=%di" : "p:fdrchk/even /bin/true:0x1150",
		   OK);
		wr(UE, O_APPEND, i % 2 ? "-:fdrchk/odd" : "-:fdrchk/even", OK);
	}
	cr_expect_eq(c->nr_events, regs0 + FDR_MAX_EVENTS + 100, "one registration a definition");
	cr_expect_leq(c->events_bound, bound0 + 1, "the bound went from %u to %u", bound0,
		      c->events_bound);
	cr_expect_eq(fdr_events_bound(c), c->events_bound);
	expect_cat(UE, "p:fdrchk/stays /bin/true:0x0000000000001149\n", "the one that stays");
	wr(UE, O_APPEND, "p:fdrchk/last /bin/true:0x1151", OK);
	expect_cat("events/fdrchk/last/enable", "0\n", "a definition after the churn");
	wr(UE, O_APPEND, "-:fdrchk/last", OK);
	wr(UE, O_APPEND, "-:fdrchk/stays", OK);
}

/* ---- uprobe_profile and the probes file ------------------------------------------------------ */

Test(uptree, profile)
{
	struct fdr_abi_probes *p;
	char want[512];
	uint64_t *rows;
	uint32_t i, n = 0, ncpus;

	wr(UE, O_APPEND, "p:fdrchk/tfn /bin/true:0x1149 x=%di", OK);
	wr(UE, O_APPEND, "p:fdrchk/tfn /bin/true:0x1150 x=%si", OK);
	wr(UE, O_APPEND,
	   "r:fdrchk/a_very_long_event_name_longer_than_44_characters_x /bin/true:0x1149", OK);
	cr_assert_eq(fdr_session_probes(env.s, &p), 0);
	cr_expect_eq(p->nr_live, 3);
	/*
	 * the agents add hits to the location's counter in their CPU's row, or to
	 * its slot (fdr-abi.h): uprobe_profile shows the sum
	 */
	rows = fdr_probe_hit_rows(p, &ncpus);
	cr_assert_geq(ncpus, 1);
	for (i = 0; i < FDR_MAX_PROBES; i++)
		if (p->probes[i].state == FDR_PROBE_SLOT_LIVE) {
			p->probes[i].hits = n == 0 ? 12345 : n == 1 ? 3 : 18446744073709551615ull;
			if (n == 1)
				rows[(size_t)(ncpus - 1) * FDR_MAX_PROBES + i] = 4;
			cr_expect_eq(p->probes[i].flags, n == 2 ? FDR_PROBE_F_RETURN : 0);
			cr_expect_eq(p->probes[i].offset, n == 1 ? 0x1150 : 0x1149);
			cr_expect_eq(fdr_shm_check_probe_slot(&p->probes[i], i), 0, "%s",
				     fdr_shm_error());
			n++;
		}
	cr_assert_eq(n, 3);
	snprintf(want, sizeof(want), "  %s %-44s %15lu\n  %s %-44s %15lu\n  %s %-44s %15lu\n",
		 "/bin/true", "tfn", 12345ul, "/bin/true", "tfn", 7ul, "/bin/true",
		 "a_very_long_event_name_longer_than_44_characters_x", 18446744073709551615ul);
	expect_cat("uprobe_profile", want, "hits per location, the kernel's columns");
}

Test(uptree, slot_written_as_the_abi_says)
{
	struct fdr_abi_probes *p;
	const struct fdr_abi_control *c = fdr_session_control(env.s);
	struct stat st;
	uint64_t *rows;
	uint32_t gen0, i, ncpus;

	cr_expect_eq(fdr_session_probes(env.s, &p), -ENOENT, "no file before a definition");
	wr(UE, O_APPEND, "p:fdrchk/tfn /bin/true:0x1149 x=%di:u32", OK);
	cr_assert_eq(fdr_session_probes(env.s, &p), 0);
	cr_assert_eq(stat("/bin/true", &st), 0);
	for (i = 0; i < FDR_MAX_PROBES && p->probes[i].state != FDR_PROBE_SLOT_LIVE; i++)
		;
	cr_assert_lt(i, FDR_MAX_PROBES);
	cr_expect_eq(p->probes[i].dev, (uint64_t)st.st_dev);
	cr_expect_eq(p->probes[i].ino, (uint64_t)st.st_ino);
	cr_expect_str_eq(p->probes[i].path, "/bin/true");
	cr_expect_str_eq(p->probes[i].line, "p:fdrchk/tfn /bin/true:0x0000000000001149 x=%di:u32");
	cr_expect_gt(p->probes[i].prog_len, 0);
	cr_expect_eq(memcmp(p->probes[i].prog, "FTCH", 4), 0, "a fetch program");
	/* the event the slot names is this one */
	cr_expect_str_eq(c->events[p->probes[i].event_slot].name, "tfn");
	cr_expect_eq(c->events[p->probes[i].event_slot].probe, FDR_PROBE_ENTRY);
	gen0 = p->gen;
	wr(UE, O_APPEND, "-:fdrchk/tfn", OK);
	cr_expect_eq(p->probes[i].state, FDR_PROBE_SLOT_FREE, "the slot is freed");
	cr_expect_gt(p->gen, gen0, "probes.gen bumped");
	cr_expect_eq(p->nr_live, 0);
	/* the per-CPU hit counts: a row per CPU of the session, zeroed for a new location */
	cr_expect_eq(p->hits_off, sizeof(*p));
	rows = fdr_probe_hit_rows(p, &ncpus);
	cr_expect_eq(ncpus, c->nr_cpus);
	rows[(size_t)(ncpus - 1) * FDR_MAX_PROBES + i] = 99; /* left by the location removed */
	p->probes[i].hits = 5;
	wr(UE, O_APPEND, "p:fdrchk/tfn /bin/true:0x1149 x=%di:u32", OK);
	cr_assert_eq(p->probes[i].state, FDR_PROBE_SLOT_LIVE, "the same slot again");
	cr_expect_eq(rows[(size_t)(ncpus - 1) * FDR_MAX_PROBES + i], 0);
	cr_expect_eq(p->probes[i].hits, 0);
	cr_expect_eq(fdr_probe_row_hits(p, i), 0);
	wr(UE, O_APPEND, "-:fdrchk/tfn", OK);
}

/* Another process's mapping of the probes file is refused, with @want in the message. */
static void expect_probes_refused(const char *want)
{
	struct fdr_session *s2;
	struct fdr_abi_probes *p2;

	cr_assert_eq(fdr_session_open(env.dir, &s2), 0);
	cr_expect_eq(fdr_session_probes(s2, &p2), -EUCLEAN);
	cr_expect(strstr(fdr_shm_error(), want), "%s", fdr_shm_error());
	fdr_session_close(s2);
}

Test(uptree, corrupted_probes_file)
{
	struct fdr_abi_probes *p;
	struct fdr_abi_probe_slot *sl = malloc(sizeof(*sl));
	uint32_t i, ncpus;

	cr_assert_not_null(sl);
	wr(UE, O_APPEND, "p:fdrchk/tfn /bin/true:0x1149", OK);
	cr_assert_eq(fdr_session_probes(env.s, &p), 0);
	for (i = 0; i < FDR_MAX_PROBES && p->probes[i].state != FDR_PROBE_SLOT_LIVE; i++)
		;
	cr_assert_lt(i, FDR_MAX_PROBES);
	/* slots: each field checked on a copy */
	memcpy(sl, &p->probes[i], sizeof(*sl));
	sl->state = 7;
	cr_expect_eq(fdr_shm_check_probe_slot(sl, i), -EUCLEAN);
	cr_expect(strstr(fdr_shm_error(), "state 7 is neither"), "%s", fdr_shm_error());
	memcpy(sl, &p->probes[i], sizeof(*sl));
	sl->event_slot = FDR_MAX_EVENTS;
	cr_expect_eq(fdr_shm_check_probe_slot(sl, i), -EUCLEAN);
	cr_expect(strstr(fdr_shm_error(), "event slot 1024 is not below 1024"), "%s",
		  fdr_shm_error());
	memcpy(sl, &p->probes[i], sizeof(*sl));
	memset(sl->path, 'a', sizeof(sl->path));
	cr_expect_eq(fdr_shm_check_probe_slot(sl, i), -EUCLEAN);
	cr_expect(strstr(fdr_shm_error(), "path is not an absolute path"), "%s", fdr_shm_error());
	memcpy(sl, &p->probes[i], sizeof(*sl));
	sl->prog_len = FDR_PROBE_PROG_BYTES + 1;
	cr_expect_eq(fdr_shm_check_probe_slot(sl, i), -EUCLEAN);
	cr_expect(strstr(fdr_shm_error(), "program length 4097 is not in 1..4096"), "%s",
		  fdr_shm_error());
	memcpy(sl, &p->probes[i], sizeof(*sl));
	sl->flags = 0x10;
	cr_expect_eq(fdr_shm_check_probe_slot(sl, i), -EUCLEAN);
	memcpy(sl, &p->probes[i], sizeof(*sl));
	memset(sl->line, 'x', sizeof(sl->line));
	cr_expect_eq(fdr_shm_check_probe_slot(sl, i), -EUCLEAN);
	/* a slot that does not check out is not shown */
	p->probes[i].event_slot = 5000;
	expect_cat(UE, "", "a bad slot is skipped");
	/* the header: refused at mapping by another process */
	p->magic = 0x1234;
	expect_probes_refused("probes: magic 0x1234, expected 0x4644525042");
	p->magic = FDR_ABI_MAGIC_PROBES;
	p->version = 99;
	expect_probes_refused("probes: made by fdr ABI version 99");
	/* the per-CPU hit counts: more rows than the mapping has room for, or elsewhere */
	p->version = FDR_ABI_VERSION;
	ncpus = p->hit_cpus;
	p->hit_cpus = FDR_MAX_CPUS + 1;
	expect_probes_refused("probes: hit_cpus 1025 is above 1024");
	p->hit_cpus = ncpus;
	p->hits_off = 64;
	expect_probes_refused("probes: hits_off 64, expected");
	p->hits_off = sizeof(*p);
	free(sl);
}
