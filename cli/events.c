// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * events.c - the event verbs of fdr: list (the registered events, which are
 * enabled, the pending rules), enable and disable (rules appended to set_event,
 * as 'echo RULE >> set_event' does on tracefs).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <string.h>

#include "fdr/fdr-ctl.h"
#include "cli.h"
static int cmd_enable_common(int argc, char **argv, int on)
{
	struct fdr_session *s;
	const char *inst = NULL;
	char pre[FDR_NAME_LEN + 16], path[256];
	int ret, i, argi = common_opts(argc, argv, &inst, NULL, &ret);

	if (argi < 0)
		return ret;
	if (argi >= argc)
		return usage_error(
			argc, argv, -1,
			"expected EVENTS (SYSTEM:EVENT, SYSTEM:*, *:EVENT, NAME; globs allowed), found nothing");
	ret = open_session(&s);
	if (ret)
		return ret;
	inst_prefix(inst, pre, sizeof(pre));
	snprintf(path, sizeof(path), "%sset_event", pre);
	for (i = argi; i < argc && !ret; i++) {
		char tok[512];

		if (argv[i][0] == '!' && on)
			snprintf(tok, sizeof(tok), "%s\n", argv[i]);
		else
			snprintf(tok, sizeof(tok), "%s%s\n", on ? "" : "!", argv[i]);
		ret = write_path(s, path, tok, O_APPEND);
	}
	fdr_session_close(s);
	return ret;
}
int cmd_enable(int argc, char **argv)
{
	return cmd_enable_common(argc, argv, 1);
}
int cmd_disable(int argc, char **argv)
{
	return cmd_enable_common(argc, argv, 0);
}
int cmd_list(int argc, char **argv)
{
	struct fdr_session *s;
	const struct fdr_abi_control *c;
	const char *inst = NULL;
	uint32_t i, idx = 0;
	int ret, argi = common_opts(argc, argv, &inst, NULL, &ret);

	if (argi < 0)
		return ret;
	ret = open_session(&s);
	if (ret)
		return ret;
	c = fdr_session_control(s);
	idx = inst_index(c, inst);
	if (idx == FDR_MAX_INSTANCES) {
		fdr_session_close(s);
		return die(1, "no instance '%s'", inst);
	}
	for (i = 0; i < FDR_MAX_EVENTS; i++) {
		const struct fdr_abi_event *e = &c->events[i];
		char name[2 * FDR_NAME_LEN + 2];
		int k, match = argi >= argc;

		if (e->state != FDR_EVENT_READY || strncmp(e->system, "ftrace", FDR_NAME_LEN) == 0)
			continue; /* fdr's own record types: not events to enable */
		snprintf(name, sizeof(name), "%.*s:%.*s", FDR_NAME_LEN, e->system, FDR_NAME_LEN,
			 e->name);
		for (k = argi; k < argc && !match; k++) {
			char sys[FDR_NAME_LEN + 1], ev[FDR_NAME_LEN + 1];

			snprintf(sys, sizeof(sys), "%.*s", FDR_NAME_LEN, e->system);
			snprintf(ev, sizeof(ev), "%.*s", FDR_NAME_LEN, e->name);
			match = fdr_event_rule_match(argv[k], sys, ev);
		}
		if (match)
			printf("%s%s\n", name, fdr_event_is_enabled(e, idx) ? " [enabled]" : "");
	}
	{
		const struct fdr_abi_instance *in = &c->instances[idx];

		for (i = 0; i < in->nr_pending && i < FDR_PENDING_RULES; i++)
			printf("%.*s [pending]\n", FDR_RULE_LEN, in->pending[i]);
	}
	fdr_session_close(s);
	return 0;
}
