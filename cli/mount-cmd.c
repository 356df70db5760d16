// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * mount-cmd.c - the fdr mount verb: its options, then the FUSE server of
 * mount.c; without libfuse3, the verb says how to get it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <grp.h>
#include <pwd.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fdr/fdr-ctl.h"
#include "cli.h"
#ifdef FDR_HAVE_FUSE
#include "mount.h"
#endif
/* fdr mount [-f] [--allow-other] [--debug] MOUNTPOINT */
#ifdef FDR_HAVE_FUSE
/*
 * -o OPTS of fdr mount: tracefs's uid=N and gid=N (numbers, or user and group
 * names), comma-separated; the owner of every file of the mount.
 */
static int mount_opts(int argc, char **argv, int at, const char *opts, struct fdr_mount_opts *mo)
{
	char *copy = strdup(opts), *tok, *save = NULL;
	int ret = 0;

	if (!copy)
		return die(1, "out of memory");
	for (tok = strtok_r(copy, ",", &save); tok && !ret; tok = strtok_r(NULL, ",", &save)) {
		char *v = strchr(tok, '='), *end;
		long n;

		if (!v || (strncmp(tok, "uid=", 4) && strncmp(tok, "gid=", 4))) {
			ret = usage_error(
				argc, argv, at,
				"expected -o uid=N or gid=N (comma-separated), found '%s'", tok);
			break;
		}
		v++;
		errno = 0;
		n = strtol(v, &end, 10);
		if (*v && !*end && !errno && n >= 0 && n < UINT32_MAX) {
			/* a number */
		} else if (tok[0] == 'u' && getpwnam(v)) {
			n = (long)getpwnam(v)->pw_uid;
		} else if (tok[0] == 'g' && getgrnam(v)) {
			n = (long)getgrnam(v)->gr_gid;
		} else {
			ret = usage_error(argc, argv, at,
					  "expected a %s number or name after %.4s, found '%s'",
					  tok[0] == 'u' ? "user" : "group", tok, v);
			break;
		}
		if (tok[0] == 'u')
			mo->uid = n;
		else
			mo->gid = n;
	}
	free(copy);
	return ret;
}

int cmd_mount(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "foreground", no_argument, NULL, 'f' },
		{ "allow-other", no_argument, NULL, 'a' },
		{ "debug", no_argument, NULL, 'D' },
		{ NULL, 0, NULL, 0 },
	};
	struct fdr_mount_opts mo = { .uid = -1, .gid = -1 };
	struct fdr_session *s;
	int c, ret;

	optind = 0; /* 0, not 1: glibc then resets its permutation state too */
	while ((c = getopt_long(argc, argv, "fo:", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			mo.foreground = 1;
			break;
		case 'a':
			mo.allow_other = 1;
			break;
		case 'o':
			ret = mount_opts(argc, argv, optind - 1, optarg, &mo);
			if (ret)
				return ret;
			break;
		case 'D':
			mo.debug = mo.foreground = 1;
			break;
		default:
			return usage_error(argc, argv, optind - 1, "unknown option");
		}
	}
	if (optind >= argc)
		return usage_error(argc, argv, -1,
				   "expected MOUNTPOINT (a directory), found nothing");
	if (optind + 1 < argc)
		return usage_error(argc, argv, optind + 1, "expected one MOUNTPOINT, found '%s'",
				   argv[optind + 1]);
	ret = open_session(&s);
	if (ret)
		return ret;
	mo.name = session_path ? NULL : session_name;
	ret = fdr_mount_run(s, argv[optind], &mo);
	fdr_session_close(s);
	return ret;
}
#else
int cmd_mount(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return die(1, "this fdr was built without FUSE support (libfuse3 >= 3.12 was not found "
		      "when it was configured; on Debian install libfuse3-dev and rebuild)");
}
#endif
