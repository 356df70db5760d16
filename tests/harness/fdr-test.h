/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fdr-test.h - helpers shared by the fdr tests (no test framework inside).
 *
 * Isolation: linking this library makes the test binary point FDR_ROOT at a
 * directory that does not exist before any event constructor runs, so a test
 * binary never attaches to the user's sessions in /dev/shm/fdr-<uid>. Each test
 * then calls fdr_test_setup(), which makes a fresh private root with mkdtemp(),
 * creates session "t" in it and attaches this process.
 *
 * All functions return 0 or a negative errno unless said otherwise.
 */
#ifndef FDR_TEST_H
#define FDR_TEST_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "fdr/fdr.h"
#include "fdr/fdr-ctl.h"
#include "fdr/fdr-read.h"

struct fdr_test_env {
	char root[PATH_MAX - 16]; /* the private FDR_ROOT of this test */
	char dir[PATH_MAX]; /* root/t, the session directory */
	struct fdr_session *s;
};

/* Make a fresh FDR_ROOT, create session "t" with @o (NULL: defaults), attach. */
int fdr_test_setup(struct fdr_test_env *env, const struct fdr_session_opts *o);
/* Destroy the session, detach, remove the root. Safe to call twice. */
void fdr_test_teardown(struct fdr_test_env *env);

/* Enable or disable @def in instance @inst the raw way (registry bit), then resync. */
int fdr_test_set_enabled(struct fdr_session *s, struct fdr_event_def *def, uint32_t inst, int on);

/*
 * Read a whole control file (O_RDONLY | O_NONBLOCK | @extra_flags; pipes stop at
 * EAGAIN). Returns a new NUL-terminated buffer (free() it) or NULL with *err set.
 */
char *fdr_test_read(struct fdr_session *s, const char *path, int extra_flags, size_t *len,
		    int *err);
/*
 * One write(2) of @len bytes to @path opened O_WRONLY | @flags. Returns what
 * fdr_file_write() returned, or the open error. The handle's error message is
 * copied to @msg (may be NULL).
 */
ssize_t fdr_test_write(struct fdr_session *s, const char *path, int flags, const void *buf,
		       size_t len, char *msg, size_t msg_len);
/* fdr_test_write() of a C string. */
ssize_t fdr_test_puts(struct fdr_session *s, const char *path, int flags, const char *text);

/* Pin the calling thread to the @idx-th allowed CPU; returns the CPU id or -1. */
int fdr_test_pin(int idx);
/* Number of CPUs the calling thread may run on (as found at startup). */
int fdr_test_nr_allowed_cpus(void);

/* A copied record. */
struct fdr_test_rec {
	uint32_t cpu;
	uint32_t len;
	uint64_t ts;
	uint64_t raw_ts;
	uint64_t lost_before;
	unsigned char *payload; /* len bytes, owned */
};

struct fdr_test_recs {
	struct fdr_test_rec *v;
	size_t nr;
	uint64_t lost; /* sum of lost_before */
};

/* Read every record available now from instance @inst, CPU @cpu (-1: all). */
int fdr_test_collect(struct fdr_session *s, uint32_t inst, int cpu, unsigned flags,
		     struct fdr_test_recs *out);
void fdr_test_recs_free(struct fdr_test_recs *r);

/* Parse "name: value" from a stats text; returns the value or UINT64_MAX if absent. */
uint64_t fdr_test_stat_field(const char *text, const char *name);

/* Count the (non-overlapping) occurrences of @needle in @hay. */
size_t fdr_test_count(const char *hay, const char *needle);

#endif /* FDR_TEST_H */
