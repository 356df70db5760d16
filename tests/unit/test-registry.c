// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test-registry.c - the session's event registry: one id per SYSTEM:EVENT
 * across definitions of the same layout, refusal of a different layout, the
 * set_event rule matcher, and pending rules that enable events registered
 * after the rule was written.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "fdr-criterion.h"
#include "fdr-test.h"
/* fdr_event_def_to_abi(), fdr_session_register_event(): libfdr internals */
#include "core/core-local.h"
#include "test-registry.h"

/* clang-format off */
FDR_EVENT(treg, shared,
	FDR_PROTO(int v),
	FDR_ARGS(v),
	FDR_FIELDS(fdr_field_int(int, v, v)))

/* test-registry-b.c has an int64_t here */
FDR_EVENT(treg, clash,
	FDR_PROTO(int v),
	FDR_ARGS(v),
	FDR_FIELDS(fdr_field_int(int, v, v)))

FDR_EVENT(treg, other,
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

TestSuite(registry, .init = init, .fini = fini, .timeout = 30);

static char *cat(const char *path)
{
	int err;
	char *t = fdr_test_read(env.s, path, 0, NULL, &err);

	cr_assert_not_null(t, "read %s: %s", path, strerror(-err));
	return t;
}

static size_t count_lines(const char *txt, const char *line)
{
	char pat[160];
	size_t n = 0;
	const char *p = txt;

	snprintf(pat, sizeof(pat), "%s\n", line);
	while ((p = strstr(p, pat))) {
		if (p == txt || p[-1] == '\n')
			n++;
		p += strlen(pat);
	}
	return n;
}

/* ---- one id per event, whatever the number of definitions ---- */

Test(registry, same_event_two_definitions_share_one_id)
{
	struct fdr_event_def *b = treg_b_shared();
	struct fdr_test_recs rr;
	char *txt;
	size_t i;

	cr_assert_neq(fdr_ev_treg_shared.slot, 0, "first definition not registered");
	cr_assert_neq(b->slot, 0, "second definition (same layout) not registered");
	cr_assert_eq(fdr_ev_treg_shared.id, b->id, "same event, same layout: one id (%u vs %u)",
		     fdr_ev_treg_shared.id, b->id);
	cr_assert_eq(fdr_ev_treg_shared.slot, b->slot);
	cr_assert_geq(fdr_ev_treg_shared.id, FDR_EVENT_ID_FIRST_USER);
	txt = cat("available_events");
	cr_assert_eq(count_lines(txt, "treg:shared"), 1, "listed once:\n%s", txt);
	free(txt);

	cr_assert_eq(fdr_test_puts(env.s, "set_event", O_APPEND, "treg:shared\n"), 12);
	cr_assert_eq(fdr_sync(), 0);
	cr_assert(fdr_ev_treg_shared.enabled && b->enabled,
		  "enabling the event enables every definition");
	fdr_treg_shared(1);
	treg_b_write_shared(2);
	cr_assert_eq(fdr_test_collect(env.s, 0, -1, 0, &rr), 0);
	cr_assert_eq(rr.nr, 2);
	for (i = 0; i < rr.nr; i++) {
		struct fdr_common c;

		memcpy(&c, rr.v[i].payload, sizeof(c));
		cr_assert_eq(c.type, fdr_ev_treg_shared.id, "record %zu under id %u", i, c.type);
	}
	fdr_test_recs_free(&rr);
}

Test(registry, different_layout_is_refused)
{
	struct fdr_event_def *a = &fdr_ev_treg_clash, *b = treg_b_clash();
	struct fdr_event_def *won, *lost;
	struct fdr_abi_event ta;
	struct fdr_test_recs rr;
	uint32_t slot;
	char *txt;

	cr_assert_eq(fdr_sync(), 0);
	cr_assert((a->slot != 0) != (b->slot != 0),
		  "exactly one treg:clash may register (slots %u, %u)", a->slot, b->slot);
	won = a->slot ? a : b;
	lost = a->slot ? b : a;
	txt = cat("available_events");
	cr_assert_eq(count_lines(txt, "treg:clash"), 1, "available_events:\n%s", txt);
	free(txt);
	/* the registry says why */
	cr_assert_eq(fdr_event_def_to_abi(lost, &ta), 0);
	cr_assert_eq(fdr_session_lock(env.s), 0);
	cr_assert_eq(fdr_session_register_event(env.s, &ta, &slot), -EEXIST);
	fdr_session_unlock(env.s);
	/* enabling the event enables the registered definition only */
	cr_assert_eq(fdr_test_puts(env.s, "set_event", O_APPEND, "treg:clash\n"), 11);
	cr_assert_eq(fdr_sync(), 0);
	cr_assert_neq(won->enabled, 0);
	cr_assert_eq(lost->enabled, 0, "a refused definition must never record");
	fdr_treg_clash(7);
	treg_b_write_clash(8);
	cr_assert_eq(fdr_test_collect(env.s, 0, -1, 0, &rr), 0);
	cr_assert_eq(rr.nr, 1, "only the registered layout records (%zu records)", rr.nr);
	fdr_test_recs_free(&rr);
}

/* A definition built by hand (what the macros generate), registered on demand. */
struct hdef {
	struct fdr_event_def def;
	struct fdr_field_desc f[2];
};

static void hdef_init(struct hdef *h, const char *sys, const char *name, int wide)
{
	memset(h, 0, sizeof(*h));
	h->f[0].name = "v";
	h->f[0].offset = 8;
	h->f[0].size = wide ? 8 : 4;
	h->f[0].kind = FDR_FIELD_KIND_INT;
	h->f[0].is_signed = 1;
	h->def.struct_size = sizeof(h->def);
	h->def.system = sys;
	h->def.name = name;
	h->def.fields = h->f;
	h->def.nr_fields = 1;
	h->def.fixed_size = wide ? 16 : 12; /* sizeof { struct fdr_common; v; } */
}

Test(registry, print_format_is_part_of_the_layout)
{
	static struct hdef h;
	struct fdr_abi_event t;
	uint32_t slot;

	hdef_init(&h, "treg", "other", 0);
	cr_assert_eq(h.def.fixed_size, sizeof(struct fdr__rec_treg_other));
	h.def.print_fmt = "v is %d";
	h.def.print_args = "v";
	cr_assert_eq(fdr_event_def_to_abi(&h.def, &t), 0);
	cr_assert_eq(fdr_session_lock(env.s), 0);
	cr_assert_eq(fdr_session_register_event(env.s, &t, &slot), -EEXIST,
		     "same fields, another print: a different event");
	fdr_session_unlock(env.s);
	h.def.print_fmt = NULL;
	h.def.print_args = NULL;
	cr_assert_eq(fdr_event_def_to_abi(&h.def, &t), 0);
	cr_assert_eq(fdr_session_lock(env.s), 0);
	cr_assert_eq(fdr_session_register_event(env.s, &t, &slot), 0,
		     "the same layout again is accepted");
	fdr_session_unlock(env.s);
	cr_assert_eq(slot + 1, fdr_ev_treg_other.slot);
}

/*
 * The scans stop at events_bound (fdr_events_bound()), raised over a slot
 * before it is made ready. A ready slot at the bound is damage (a registrar
 * that skipped the raise): it must still be found, and never be taken by
 * another event.
 */
Test(registry, ready_slot_at_the_bound)
{
	static struct hdef h;
	struct fdr_abi_control *c = fdr_session_control(env.s);
	struct fdr_abi_event t;
	uint32_t n, id, slot;

	hdef_init(&h, "treg", "orphan", 0);
	cr_assert_eq(fdr_event_def_to_abi(&h.def, &t), 0);
	cr_assert_eq(fdr_session_lock(env.s), 0);
	n = c->events_bound;
	cr_assert_lt(n, FDR_MAX_EVENTS);
	cr_assert_neq(c->events[n].state, FDR_EVENT_READY);
	/* what fdr_session_register_event() does, without the raise */
	memcpy(&c->events[n], &t, sizeof(t));
	memset(c->events[n].enabled, 0, sizeof(c->events[n].enabled));
	id = c->events[n].id = c->next_event_id++;
	__atomic_store_n(&c->events[n].state, FDR_EVENT_READY, __ATOMIC_RELEASE);
	cr_assert_eq(fdr_session_register_event(env.s, &t, &slot), 0);
	cr_assert_eq(slot, n, "the orphan is found");
	cr_assert_eq(c->events[n].id, id, "and kept, not made again");
	hdef_init(&h, "treg", "after_orphan", 0);
	cr_assert_eq(fdr_event_def_to_abi(&h.def, &t), 0);
	cr_assert_eq(fdr_session_register_event(env.s, &t, &slot), 0);
	cr_assert_neq(slot, n, "another event does not take the orphan's slot");
	cr_assert_str_eq(c->events[n].name, "orphan");
	cr_assert_str_eq(c->events[slot].name, "after_orphan");
	fdr_session_unlock(env.s);
}

/*
 * A registrar that died after raising the bound and before making its slot
 * ready left a free slot under the bound: the next registration takes it,
 * and the bound does not move.
 */
Test(registry, registrar_died_after_the_raise)
{
	static struct hdef h;
	struct fdr_abi_control *c = fdr_session_control(env.s);
	struct fdr_abi_event t;
	uint32_t n, slot;

	hdef_init(&h, "treg", "after_death", 0);
	cr_assert_eq(fdr_event_def_to_abi(&h.def, &t), 0);
	cr_assert_eq(fdr_session_lock(env.s), 0);
	n = c->events_bound;
	cr_assert_lt(n + 1, FDR_MAX_EVENTS);
	cr_assert_neq(c->events[n].state, FDR_EVENT_READY);
	__atomic_store_n(&c->events_bound, n + 1, __ATOMIC_RELEASE); /* and died */
	cr_assert_eq(fdr_session_register_event(env.s, &t, &slot), 0);
	cr_assert_eq(slot, n, "the slot under the bound is taken");
	cr_assert_eq(c->events_bound, n + 1, "the bound stays");
	cr_assert_str_eq(c->events[n].name, "after_death");
	fdr_session_unlock(env.s);
}

Test(registry, definitions_beyond_the_limits_are_refused)
{
	static struct hdef h;
	static char longname[FDR_NAME_LEN + 1];
	struct fdr_abi_event t;

	memset(longname, 'n', FDR_NAME_LEN);
	hdef_init(&h, "treg", "ok", 0);
	cr_assert_eq(fdr_event_def_to_abi(&h.def, &t), 0);
	h.def.name = longname;
	cr_assert_eq(fdr_event_def_to_abi(&h.def, &t), -EINVAL, "event name of 64 bytes");
	cr_assert_eq(fdr_event_register(&h.def), -EINVAL);
	cr_assert_eq(h.def.slot, 0);
	hdef_init(&h, longname, "ok", 0);
	cr_assert_eq(fdr_event_def_to_abi(&h.def, &t), -EINVAL, "system name of 64 bytes");
	hdef_init(&h, "treg", "ok", 0);
	h.def.nr_fields = FDR_MAX_FIELDS + 1;
	cr_assert_eq(fdr_event_def_to_abi(&h.def, &t), -EINVAL, "too many fields");
	hdef_init(&h, "treg", "ok", 0);
	h.def.fixed_size = FDR_MAX_RECORD + 1;
	cr_assert_eq(fdr_event_def_to_abi(&h.def, &t), -EINVAL, "fixed part larger than a record");
	hdef_init(&h, "treg", "ok", 0);
	h.f[0].name = "a_field_name_of_thirty_two_bytes";
	cr_assert_eq(fdr_event_def_to_abi(&h.def, &t), -EINVAL, "field name of 32 bytes");
	cr_assert_eq(fdr_event_register(NULL), -EINVAL);
}

Test(registry, ids_are_distinct)
{
	char path[128], want[32];

	cr_assert_neq(fdr_ev_treg_shared.id, fdr_ev_treg_other.id);
	cr_assert_neq(fdr_ev_treg_shared.id, FDR_EVENT_ID_PRINT);
	snprintf(path, sizeof(path), "events/treg/other/id");
	snprintf(want, sizeof(want), "%u\n", fdr_ev_treg_other.id);
	{
		char *txt = cat(path);

		cr_assert_str_eq(txt, want);
		free(txt);
	}
}

/* ---- the rule matcher ---- */

Test(registry, rule_match_table)
{
	static const struct {
		const char *rule, *sys, *ev;
		int match;
	} t[] = {
		{ "sys:ev", "sys", "ev", 1 },	 { "sys:ev", "sys", "ev2", 0 },
		{ "sys:ev", "sys2", "ev", 0 },	 { "sys:*", "sys", "x", 1 },
		{ "sys:*", "other", "x", 0 },	 { "sys:", "sys", "x", 1 },
		{ "*:ev", "any", "ev", 1 },	 { "*:ev", "any", "evx", 0 },
		{ "*:*", "a", "b", 1 },		 { "*:", "a", "b", 1 },
		{ "sys", "sys", "x", 1 },	 { "ev", "x", "ev", 1 },
		{ "foo", "bar", "baz", 0 },	 { "sy*:e?", "sys", "ev", 1 },
		{ "sy*:e?", "sys", "evv", 0 },	 { "sys:e[vw]", "sys", "ew", 1 },
		{ "sys:e[vw]", "sys", "ex", 0 }, { ":ev", "x", "ev", 1 },
		{ ":ev", "x", "ev2", 0 },	 { ":", "a", "b", 1 },
		{ "s:", "t", "x", 0 },		 { "SYS:ev", "sys", "ev", 0 },
	};
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		cr_expect_eq(!!fdr_event_rule_match(t[i].rule, t[i].sys, t[i].ev), t[i].match,
			     "rule '%s' on %s:%s: expected %d", t[i].rule, t[i].sys, t[i].ev,
			     t[i].match);
}

/* ---- pending rules ---- */

/* Write @rules to set_event (>>), then register SYS:NAME; is it enabled in @inst? */
static int enabled_after_register(const char *prefix, const char *rules, const char *sys,
				  const char *name, uint32_t inst)
{
	struct hdef *h = calloc(1, sizeof(*h)); /* stays registered: never freed */
	const struct fdr_abi_event *e;
	char path[128];

	cr_assert_not_null(h);
	if (rules) {
		snprintf(path, sizeof(path), "%sset_event", prefix);
		cr_assert_eq(fdr_test_puts(env.s, path, O_APPEND, rules), (ssize_t)strlen(rules),
			     "rules '%s'", rules);
	}
	hdef_init(h, sys, name, 0);
	cr_assert_eq(fdr_event_register(&h->def), 0);
	cr_assert_eq(fdr_sync(), 0);
	cr_assert_neq(h->def.slot, 0, "%s:%s not registered", sys, name);
	e = &fdr_session_control(env.s)->events[h->def.slot - 1];
	return (int)((e->enabled[inst / 64] >> (inst % 64)) & 1);
}

Test(registry, pending_rule_enables_later_event)
{
	char *txt;
	struct fdr_event_def *d;
	struct hdef *h;

	cr_assert_eq(fdr_test_puts(env.s, "set_event", O_APPEND, "tpend:*\n"), 8,
		     "a rule for events not registered yet is accepted");
	txt = cat("set_event");
	cr_assert_str_empty(txt, "nothing registered matches yet:\n%s", txt);
	free(txt);
	txt = cat("set_event_pending");
	cr_assert_not_null(strstr(txt, "tpend:*\n"), "set_event_pending:\n%s", txt);
	free(txt);

	h = calloc(1, sizeof(*h));
	cr_assert_not_null(h);
	hdef_init(h, "tpend", "one", 0);
	d = &h->def;
	cr_assert_eq(fdr_event_register(d), 0);
	cr_assert_eq(fdr_sync(), 0);
	cr_assert_neq(d->enabled, 0, "registering tpend:one must apply the pending rule");
	txt = cat("set_event");
	cr_assert_str_eq(txt, "tpend:one\n");
	free(txt);
	/* and it records */
	{
		unsigned char raw[16 + 16 + 8] __attribute__((aligned(8))) = { 0 };
		struct fdr_test_recs rr;
		int32_t v = 99;

		memcpy(raw + 16 + 8, &v, 4);
		fdr_event_commit(d, raw + 16, 12);
		cr_assert_eq(fdr_test_collect(env.s, 0, -1, 0, &rr), 0);
		cr_assert_eq(rr.nr, 1);
		fdr_test_recs_free(&rr);
	}
}

Test(registry, pending_rule_table)
{
	static const struct {
		const char *rules;
		const char *sys, *name;
		int enabled;
	} t[] = {
		{ "tpa:*\n", "tpa", "x", 1 },	    { NULL, "tpb", "x", 0 }, /* other system */
		{ "*:evx\n", "tpc", "evx", 1 },	    { NULL, "tpc", "evy", 0 }, /* other event */
		{ "tpd\n", "tpd", "any", 1 }, /* bare system */
		{ "evz\n", "tpe", "evz", 1 }, /* bare event */
		{ "tpf:e?\n", "tpf", "e1", 1 },	    { NULL, "tpf", "e10", 0 }, /* glob */
		{ "tpg:\n", "tpg", "x", 1 }, /* SYS: */
		{ "tph:a tph:b\n", "tph", "b", 1 }, /* several tokens */
		{ "treg:*\n", "treg", "later", 1 }, /* a glob that also matched registered events */
	};
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		cr_expect_eq(enabled_after_register("", t[i].rules, t[i].sys, t[i].name, 0),
			     t[i].enabled, "[%zu] rules '%s', register %s:%s: expected enabled=%d",
			     i, t[i].rules ? t[i].rules : "-", t[i].sys, t[i].name, t[i].enabled);
}

Test(registry, pending_rule_removed_by_bang)
{
	char *txt;

	cr_assert_eq(fdr_test_puts(env.s, "set_event", O_APPEND, "tpr:*\n"), 6);
	cr_assert_eq(fdr_test_puts(env.s, "set_event", O_APPEND, "!tpr:*\n"), 7,
		     "'!' removes a pending rule");
	txt = cat("set_event_pending");
	cr_assert_null(strstr(txt, "tpr:*"), "set_event_pending:\n%s", txt);
	free(txt);
	cr_assert_eq(enabled_after_register("", NULL, "tpr", "x", 0), 0,
		     "a removed rule applies no more");
	/* '!' of something that matches nothing, registered or pending */
	cr_assert_eq(fdr_test_puts(env.s, "set_event", O_APPEND, "!tpr:nosuch\n"), -EINVAL);
	cr_assert_eq(fdr_test_puts(env.s, "set_event", O_APPEND, "!tnone:*\n"), -EINVAL);
}

/* differences.md: at most 64 pending rules per instance; one more is EINVAL. */
Test(registry, pending_rules_are_bounded)
{
	char rule[64], *txt;
	int i;

	for (i = 0; i < 64; i++) {
		snprintf(rule, sizeof(rule), "tmany%d:*\n", i);
		cr_assert_eq(fdr_test_puts(env.s, "set_event", O_APPEND, rule),
			     (ssize_t)strlen(rule), "rule %d", i);
	}
	cr_assert_eq(fdr_test_puts(env.s, "set_event", O_APPEND, "tmany64:*\n"), -EINVAL,
		     "the 65th pending rule");
	{
		ssize_t r = fdr_test_puts(env.s, "set_event", O_APPEND, "tmany0:*\n");

		cr_assert_eq(r, 9, "a rule already pending is no new one: %zd", r);
	}
	txt = cat("set_event_pending");
	cr_assert_eq(fdr_test_count(txt, "\n"), 64, "64 pending rules, got:\n%s", txt);
	free(txt);
	/* a long rule: 127 bytes fit, 128 do not */
	memset(rule, 0, sizeof(rule));
	cr_assert_eq(fdr_test_puts(env.s, "set_event", O_TRUNC, "\n"), 1);
	{
		char longrule[160];

		memset(longrule, 'r', 125);
		memcpy(longrule, "tl:", 3);
		longrule[125] = 'x';
		longrule[126] = 'y';
		longrule[127] = 0;
		cr_assert_eq(fdr_test_puts(env.s, "set_event", O_APPEND, longrule), 127,
			     "a rule of 127 bytes");
		longrule[127] = 'z';
		longrule[128] = 0;
		cr_assert_eq(fdr_test_puts(env.s, "set_event", O_APPEND, longrule), -EINVAL,
			     "a rule of 128 bytes");
	}
}

Test(registry, pending_rules_cleared_by_truncation)
{
	char *txt;

	cr_assert_eq(fdr_test_puts(env.s, "set_event", O_APPEND, "tpt:*\n"), 6);
	cr_assert_eq(fdr_test_puts(env.s, "set_event", O_TRUNC, "\n"), 1, "echo > set_event");
	txt = cat("set_event_pending");
	cr_assert_str_empty(txt, "pending rules survive 'echo > set_event':\n%s", txt);
	free(txt);
	cr_assert_eq(enabled_after_register("", NULL, "tpt", "x", 0), 0);
}

Test(registry, pending_rule_from_events_enable)
{
	/* events/enable = 1 means every event, also those registered later */
	cr_assert_eq(fdr_test_puts(env.s, "events/enable", O_TRUNC, "1\n"), 2);
	cr_assert_eq(enabled_after_register("", NULL, "tpz", "x", 0), 1);
	cr_assert_eq(fdr_test_puts(env.s, "events/enable", O_TRUNC, "0\n"), 2);
	cr_assert_eq(enabled_after_register("", NULL, "tpz", "y", 0), 0);
	/* events/SYS/enable likewise for its system */
	cr_assert_eq(fdr_test_puts(env.s, "events/treg/enable", O_TRUNC, "1\n"), 2);
	cr_assert_eq(enabled_after_register("", NULL, "treg", "later2", 0), 1);
}

Test(registry, pending_rule_only_in_its_instance)
{
	cr_assert_eq(fdr_tree_mkdir(env.s, "instances/p"), 0);
	cr_assert_eq(enabled_after_register("instances/p/", "tpi:*\n", "tpi", "x", 1), 1,
		     "enabled in the instance");
	cr_assert_eq(enabled_after_register("", NULL, "tpi", "y", 0), 0, "not in the top instance");
	{
		const struct fdr_abi_control *c = fdr_session_control(env.s);
		uint32_t i;

		for (i = 0; i < FDR_MAX_EVENTS; i++)
			if (c->events[i].state == FDR_EVENT_READY &&
			    strcmp(c->events[i].system, "tpi") == 0 &&
			    strcmp(c->events[i].name, "x") == 0)
				cr_assert_eq(c->events[i].enabled[0] & 1, 0,
					     "tpi:x enabled in the top instance");
	}
}

Test(registry, pending_rule_reaches_another_process)
{
	pid_t pid;
	int st;
	char *txt;

	cr_assert_eq(fdr_test_puts(env.s, "set_event", O_APPEND, "tproc:*\n"), 8);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		static struct hdef h;

		hdef_init(&h, "tproc", "child", 0);
		fdr_event_register(&h.def);
		fdr_sync();
		_exit(h.def.enabled ? 0 : 1);
	}
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0,
		  "the child's event must be enabled at registration");
	txt = cat("set_event");
	cr_assert_not_null(strstr(txt, "tproc:child\n"), "set_event:\n%s", txt);
	free(txt);
}
