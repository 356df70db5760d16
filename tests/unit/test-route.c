// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test-route.c - the event path's route cache (event.c): an event enabled in one
 * instance is written there without looking at the enable masks again, until
 * control.gen moves. Every control change must reach the very next event of
 * the process that made it, with no agent round in between (no fdr_sync()):
 * tracing_on, set_event in another instance, removal from the cached one, a
 * filter set, replaced and cleared, a trigger, instance removal, and a resize. (A new instance's ring and a resized
 * ring are mapped by the agent: there the test waits for it with fdr_sync().)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "fdr-criterion.h"
#include "fdr-test.h"

/* clang-format off */
FDR_EVENT(troute, ev,
	FDR_PROTO(int v),
	FDR_ARGS(v),
	FDR_FIELDS(fdr_field_int(int, v, v)))
/* clang-format on */

static struct fdr_test_env env;

static void init(void)
{
	cr_assert_eq(fdr_test_setup(&env, NULL), 0, "session setup failed");
}

static void fini(void)
{
	fdr_test_teardown(&env);
}

TestSuite(route, .init = init, .fini = fini, .timeout = 30);

/* The values of v of troute:ev records in instance @inst, in order, as "1,2,3". */
static void values(uint32_t inst, char *out, size_t len)
{
	struct fdr_test_recs rr;
	size_t i, o = 0;

	out[0] = 0;
	cr_assert_eq(fdr_test_collect(env.s, inst, -1, 0, &rr), 0);
	for (i = 0; i < rr.nr; i++) {
		struct fdr_common c;
		int v;

		memcpy(&c, rr.v[i].payload, sizeof(c));
		if (c.type != fdr_ev_troute_ev.id)
			continue;
		memcpy(&v, rr.v[i].payload + sizeof(c), sizeof(v));
		o += (size_t)snprintf(out + o, len - o, "%s%d", o ? "," : "", v);
	}
	fdr_test_recs_free(&rr);
}

static uint32_t instance_index(const char *name)
{
	const struct fdr_abi_control *c = fdr_session_control(env.s);
	uint32_t i;

	for (i = 1; i < FDR_MAX_INSTANCES; i++)
		if (c->instances[i].state == FDR_INST_LIVE &&
		    strcmp(c->instances[i].name, name) == 0)
			return i;
	cr_assert_fail("no instance %s", name);
	return 0;
}

static void put(const char *path, int flags, const char *text)
{
	cr_assert_eq(fdr_test_puts(env.s, path, flags, text), (ssize_t)strlen(text),
		     "write '%s' to %s", text, path);
}

static void expect(uint32_t inst, const char *want)
{
	char got[512];

	values(inst, got, sizeof(got));
	cr_assert_str_eq(got, want, "instance %u: records v=%s, expected %s", inst, got, want);
}

Test(route, every_change_reaches_the_next_event)
{
	uint32_t r;

	put("set_event", O_APPEND, "troute:ev\n");
	cr_assert_eq(fdr_sync(), 0);
	cr_assert(fdr_ev_troute_ev.enabled);
	fdr_troute_ev(1);
	fdr_troute_ev(2); /* the route is cached by now */
	expect(0, "1,2");

	put("tracing_on", O_TRUNC, "0\n");
	fdr_troute_ev(3);
	put("tracing_on", O_TRUNC, "1\n");
	fdr_troute_ev(4);
	expect(0, "1,2,4");

	cr_assert_eq(fdr_tree_mkdir(env.s, "instances/r"), 0);
	r = instance_index("r");
	put("instances/r/set_event", O_APPEND, "troute:ev\n");
	{
		/*
		 * A new instance's ring is mapped by the agent (the event path never
		 * maps): before its round, an event for it is dropped and counted.
		 */
		const struct fdr_abi_control *ctl = fdr_session_control(env.s);
		uint64_t before = __atomic_load_n(&ctl->dropped_no_slot, __ATOMIC_RELAXED);
		char got[64];

		fdr_troute_ev(50);
		values(r, got, sizeof(got));
		cr_assert(strcmp(got, "50") == 0 ||
				  (got[0] == 0 && __atomic_load_n(&ctl->dropped_no_slot,
								  __ATOMIC_RELAXED) == before + 1),
			  "an event for a ring not mapped yet is recorded or counted (got '%s')",
			  got);
		put("instances/r/trace", O_TRUNC, "\n");
	}
	cr_assert_eq(fdr_sync(), 0);
	fdr_troute_ev(5);
	expect(0, "1,2,4,50,5");
	expect(r, "5");

	/* off in the top instance, still on in r: the process's flag stays 1 */
	put("set_event", O_APPEND, "!troute:ev\n");
	fdr_troute_ev(6);
	fdr_troute_ev(7);
	expect(0, "1,2,4,50,5");
	expect(r, "5,6,7");

	/* a filter is part of the route: set, replaced, cleared */
	put("instances/r/events/troute/ev/filter", O_TRUNC, "v > 10\n");
	fdr_troute_ev(8);
	fdr_troute_ev(11);
	put("instances/r/events/troute/ev/filter", O_TRUNC, "v < 10\n");
	fdr_troute_ev(12);
	fdr_troute_ev(3);
	put("instances/r/events/troute/ev/filter", O_TRUNC, "0\n");
	fdr_troute_ev(9);
	expect(r, "5,6,7,11,3,9");
	/* a trigger on the event takes it off the route (the hooks path runs it) */
	put("instances/r/events/troute/ev/trigger", O_TRUNC, "traceoff if v == 99\n");
	fdr_troute_ev(10);
	fdr_troute_ev(99); /* recorded, then tracing stops */
	fdr_troute_ev(10);
	put("instances/r/events/troute/ev/trigger", O_TRUNC, "!traceoff if v == 99\n");
	put("instances/r/tracing_on", O_TRUNC, "1\n");
	expect(r, "5,6,7,11,3,9,10,99");
	put("instances/r/trace", O_TRUNC, "\n");
	fdr_troute_ev(9);
	expect(r, "9");

	put("instances/r/tracing_on", O_TRUNC, "0\n");
	fdr_troute_ev(12);
	put("instances/r/tracing_on", O_TRUNC, "1\n");
	fdr_troute_ev(13);
	expect(r, "9,13");

	/* back to the top instance only, then the top instance's ring is replaced */
	put("set_event", O_APPEND, "troute:ev\n");
	put("instances/r/set_event", O_APPEND, "!troute:ev\n");
	fdr_troute_ev(14);
	expect(0, "1,2,4,50,5,14");
	expect(r, "9,13");
	put("buffer_size_kb", O_TRUNC, "64\n");
	cr_assert_eq(fdr_sync(), 0); /* the agent maps the new ring */
	fdr_troute_ev(15);
	expect(0, "15");

	/* rmdir of an instance the event was routed to */
	put("set_event", O_APPEND, "!troute:ev\n");
	put("instances/r/set_event", O_APPEND, "troute:ev\n");
	fdr_troute_ev(16);
	expect(r, "9,13,16");
	put("instances/r/set_event", O_APPEND, "!troute:ev\n");
	cr_assert_eq(fdr_tree_rmdir(env.s, "instances/r"), 0);
	put("set_event", O_APPEND, "troute:ev\n");
	fdr_troute_ev(17);
	expect(0, "15,17");
}
