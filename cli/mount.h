/* SPDX-License-Identifier: GPL-2.0-or-later */
/* mount.h - `fdr mount`: the control tree served through libfuse3 (mount.c). */
#ifndef FDR_CLI_MOUNT_H
#define FDR_CLI_MOUNT_H

struct fdr_session;

struct fdr_mount_opts {
	const char *name; /* session name, for the mount table; NULL if none */
	int foreground; /* -f: do not go to the background */
	int allow_other; /* --allow-other: other users may enter (modes still apply) */
	int debug; /* --debug: libfuse's request trace on stderr (implies -f) */
	long uid, gid; /* -o uid=N,gid=N: the owner of every file, as tracefs's; -1: ours */
};

int fdr_mount_run(struct fdr_session *s, const char *mountpoint, const struct fdr_mount_opts *o);

#endif /* FDR_CLI_MOUNT_H */
