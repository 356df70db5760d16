// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * probes.c - the control side of dynamic probes: what a uprobe_events or
 * dynamic_events line does to the session (docs/design/uprobes.md, "The probes
 * file"; docs/tracefs.md).
 *
 * A probe is two things in shared memory:
 *
 *   control.events[es]      its event, as any event: enable bits, filter,
 *                           triggers, format, id. One per GRP/EVENT.
 *   probes.probes[i]        one location of it (slot i): the file (path, dev,
 *                           ino), the offset, the read-back line, the fetch
 *                           program, the hit counters; event_slot = es. An event
 *                           with several locations (the kernel's multi-probe
 *                           events) has several slots.
 *
 * The probes file is made whole (fallocated) at the first definition, under a
 * temporary name renamed into place like the control file, so a full file
 * system refuses the definition (ENOSPC) and never a traced program's store.
 * This file is its only writer, always under the control lock. A slot is
 * changed as fdr-abi.h says: state FREE (release), the fields, gen + 1, state
 * LIVE (release), then probes.gen + 1 and fdr_session_changed(), which wakes the
 * agents that arm the locations in their processes (lib/probe).
 *
 * A line that adds a location to an existing event must agree with it (same
 * kind, argument names and types: fdr_uprobe_same_args(), against each of its
 * locations, whose lines are parsed again). Removing an event (-:, or '>' for
 * all) frees its slots first, then its registry entry: enabled in an instance or
 * held by a trigger, it is refused with EBUSY, as the kernel refuses it, so no
 * writer is recording it. Its filters are dropped with it. Its id is never
 * given again (ids only grow), so a record of the removed event still in a ring
 * prints as an unknown event instead of as another one; control.nr_events is
 * not lowered (readers use it as a count of registrations, see
 * fdr_tracedat_live_update()).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "probes.h"
#include "core/core-local.h"

/* ---- errors ---------------------------------------------------------------------------- */

static int pr_fail(struct fdr_probes_err *err, int code, int pos, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int pr_fail(struct fdr_probes_err *err, int code, int pos, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	err->code = code;
	err->pos = pos;
	return code;
}

/* The parser's error (its static message, the kernel's text where it has one). */
static int pr_from(struct fdr_probes_err *err, const struct fdr_uprobe_err *ue, int code)
{
	return pr_fail(err, ue->code ? ue->code : code, ue->pos, "%s",
		       ue->msg ? ue->msg : strerror(-(ue->code ? ue->code : code)));
}

/* ---- the probes file --------------------------------------------------------------------- */

/* Make the probes file whole under a temporary name, then rename it into place (locked). */
static int probes_create(struct fdr_session *s)
{
	struct fdr_abi_probes *p = MAP_FAILED;
	char tmp[64];
	uint32_t ncpus;
	int fd, ret;

	snprintf(tmp, sizeof(tmp), ".tmp.probes.%d", (int)getpid());
	fd = openat(s->dir_fd, tmp, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return -errno;
	/* held while we work on it: ses_reap_tmp() leaves the file alone */
	flock(fd, LOCK_EX);
	ncpus = __atomic_load_n(&fdr_session_control(s)->nr_cpus, __ATOMIC_RELAXED);
	if (ncpus > FDR_MAX_CPUS)
		ncpus = FDR_MAX_CPUS;
	/*
	 * the rows of CPUs past nr_cpus are a hole, never written; every other page
	 * is allocated: agents store hit counts into it later (fdr-abi.h)
	 */
	if (ftruncate(fd, (off_t)FDR_PROBES_FILE_SIZE) < 0) {
		ret = -errno;
		goto out;
	}
	ret = -posix_fallocate(fd, 0, (off_t)(sizeof(*p) + (size_t)ncpus * FDR_PROBE_HITS_ROW));
	if (ret)
		goto out;
	p = mmap(NULL, FDR_PROBES_FILE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		ret = -errno;
		goto out;
	}
	p->struct_size = sizeof(*p);
	p->version = FDR_ABI_VERSION;
	p->hit_cpus = ncpus;
	p->hits_off = sizeof(*p);
	/* release: the magic last; fdr_shm_check_probes() checks it */
	__atomic_store_n(&p->magic, FDR_ABI_MAGIC_PROBES, __ATOMIC_RELEASE);
	if (msync(p, sizeof(*p), MS_SYNC) < 0) {
		ret = -errno;
		goto out;
	}
	if (renameat2(s->dir_fd, tmp, s->dir_fd, "probes", RENAME_NOREPLACE) < 0)
		ret = errno == EEXIST ? 0 : -errno; /* made by another: use it */
out:
	if (p != MAP_FAILED)
		munmap(p, FDR_PROBES_FILE_SIZE);
	unlinkat(s->dir_fd, tmp, 0);
	close(fd);
	return ret;
}

/* The probes file, made if @create and missing (locked for @create). */
static int probes_map(struct fdr_session *s, int create, struct fdr_abi_probes **out)
{
	int ret = fdr_session_probes(s, out);

	if (ret != -ENOENT || !create)
		return ret;
	ret = probes_create(s);
	return ret ? ret : fdr_session_probes(s, out);
}

/*
 * A private copy of live slot @i, checked; 0, or 1 if the slot is free (or
 * changed under us three times, or does not check out: then @why says so).
 */
static int slot_copy(const struct fdr_abi_probes *p, uint32_t i, struct fdr_abi_probe_slot *out,
		     const char **why)
{
	const struct fdr_abi_probe_slot *sl = &p->probes[i];
	int tries;

	*why = NULL;
	for (tries = 0; tries < 3; tries++) {
		uint32_t st = __atomic_load_n(&sl->state, __ATOMIC_ACQUIRE);
		uint32_t gen = __atomic_load_n(&sl->gen, __ATOMIC_ACQUIRE);

		if (st == FDR_PROBE_SLOT_FREE)
			return 1;
		memcpy(out, sl, sizeof(*out));
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&sl->gen, __ATOMIC_RELAXED) != gen ||
		    __atomic_load_n(&sl->state, __ATOMIC_RELAXED) != st)
			continue;
		out->state = st;
		out->gen = gen;
		if (fdr_shm_check_probe_slot(out, i)) {
			*why = fdr_shm_error();
			return 1;
		}
		return out->state == FDR_PROBE_SLOT_LIVE ? 0 : 1;
	}
	return 1;
}

static void slot_free(struct fdr_abi_probes *p, uint32_t i)
{
	struct fdr_abi_probe_slot *sl = &p->probes[i];

	__atomic_store_n(&sl->state, FDR_PROBE_SLOT_FREE, __ATOMIC_RELEASE);
	__atomic_store_n(&sl->gen, sl->gen + 1, __ATOMIC_RELEASE);
	if (p->nr_live)
		__atomic_store_n(&p->nr_live, p->nr_live - 1, __ATOMIC_RELEASE);
}

/* A free slot: the first after the last live one (creation order), else the first. */
static int slot_pick(const struct fdr_abi_probes *p)
{
	int last = -1;
	uint32_t i;

	for (i = 0; i < fdr_probe_slots_bound(p); i++)
		if (p->probes[i].state != FDR_PROBE_SLOT_FREE)
			last = (int)i;
	for (i = (uint32_t)(last + 1); i < FDR_MAX_PROBES; i++)
		if (p->probes[i].state == FDR_PROBE_SLOT_FREE)
			return (int)i;
	for (i = 0; i < FDR_MAX_PROBES; i++)
		if (p->probes[i].state == FDR_PROBE_SLOT_FREE)
			return (int)i;
	return -1;
}

/* ---- the registry --------------------------------------------------------------------- */

/* The ready event GRP/EVENT (@grp NULL: any group, probe events only); its slot or -1 (locked). */
static int event_lookup(const struct fdr_abi_control *c, const char *grp, const char *ev,
			int probes_only)
{
	uint32_t i, bound = fdr_events_bound(c);

	for (i = 0; i < bound; i++) {
		const struct fdr_abi_event *e = &c->events[i];

		if (e->state != FDR_EVENT_READY || strncmp(e->name, ev, FDR_NAME_LEN) ||
		    (grp && strncmp(e->system, grp, FDR_NAME_LEN)))
			continue;
		if (probes_only && e->probe == FDR_PROBE_NONE)
			continue;
		return (int)i;
	}
	return -1;
}

/* Enabled in an instance, or held by a trigger (the kernel's soft mode): EBUSY. */
static int event_in_use(const struct fdr_abi_control *c, uint32_t es)
{
	uint32_t w;

	for (w = 0; w < FDR_MAX_INSTANCES / 64; w++)
		if (__atomic_load_n(&c->events[es].enabled[w], __ATOMIC_ACQUIRE))
			return 1;
	return fdr_hooks_event_busy(c, es);
}

/* Free event @es and every location of it (locked; not in use). */
static void event_remove(struct fdr_session *s, struct fdr_abi_probes *p, uint32_t es)
{
	struct fdr_abi_control *c = fdr_session_control(s);
	struct fdr_abi_event *e = &c->events[es];
	uint32_t i;

	for (i = 0; i < fdr_probe_slots_bound(p); i++)
		if (p->probes[i].state != FDR_PROBE_SLOT_FREE && p->probes[i].event_slot == es)
			slot_free(p, i);
	__atomic_fetch_add(&p->gen, 1, __ATOMIC_RELEASE);
	/* then the event: no location names it any more */
	fdr_hooks_event_clear(c, es);
	memset(e->enabled, 0, sizeof(e->enabled));
	__atomic_store_n(&e->state, FDR_EVENT_FREE, __ATOMIC_RELEASE);
}

/* ---- one line ---------------------------------------------------------------------------- */

/* May @c join the probe event @es? Checked against each of its locations. */
static int check_join(const struct fdr_abi_control *c, const struct fdr_abi_probes *p, uint32_t es,
		      const struct fdr_uprobe_cmd *cmd, const struct fdr_abi_event *ev,
		      struct fdr_probes_err *err)
{
	struct fdr_uprobe_cmd *old = malloc(sizeof(*old));
	struct fdr_abi_probe_slot *sl = malloc(sizeof(*sl));
	struct fdr_uprobe_err ue;
	const char *why;
	uint32_t i;
	int ret = 0;

	if (!old || !sl) {
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < fdr_probe_slots_bound(p) && !ret; i++) {
		if (slot_copy(p, i, sl, &why) || sl->event_slot != es)
			continue;
		if (fdr_uprobe_parse(sl->line, old, NULL) == 0 && old->op == FDR_UPROBE_ADD) {
			if (fdr_uprobe_same_args(old, cmd, &ue))
				ret = pr_from(err, &ue, -EEXIST);
		} else if (c->events[es].layout_hash != ev->layout_hash) {
			/* its file is gone: the event's layout still says */
			ret = pr_fail(err, -EEXIST, 0,
				      "Argument type or name is different from existing probe");
		}
	}
	/* and the event itself (one left without locations by a control process that died) */
	if (!ret && c->events[es].layout_hash != ev->layout_hash)
		ret = pr_fail(err, -EEXIST, 0,
			      "Argument type or name is different from existing probe");
out:
	free(old);
	free(sl);
	return ret;
}

static int line_add(struct fdr_session *s, struct fdr_uprobe_cmd *cmd, struct fdr_probes_err *err)
{
	struct fdr_abi_control *c = fdr_session_control(s);
	struct fdr_abi_probes *p;
	struct fdr_abi_probe_slot *sl;
	struct fdr_abi_event ev;
	struct fdr_uprobe_err ue = { 0 };
	char line[FDR_PROBE_LINE_LEN];
	union {
		struct fdr_fetch_prog prog;
		unsigned char bytes[FDR_PROBE_PROG_BYTES];
	} *prog = NULL;
	size_t plen = 0;
	uint64_t *rows;
	uint32_t es, cpu, ncpus;
	int ret, n, idx, quiet = 0;

	ret = fdr_uprobe_resolve(cmd, &ue);
	if (ret)
		return pr_from(err, &ue, ret);
	if (cmd->path[0] != '/')
		return pr_fail(
			err, -EINVAL, cmd->path_pos,
			"fdr needs an absolute path (fdr looks the file up, not the writer)");
	if (strlen(cmd->path) >= FDR_PROBE_PATH_LEN)
		return pr_fail(err, -ENAMETOOLONG, cmd->path_pos,
			       "File path is too long (fdr keeps at most %d bytes)",
			       FDR_PROBE_PATH_LEN - 1);
	ret = fdr_uprobe_event(cmd, &ev, &ue);
	if (ret)
		return pr_from(err, &ue, ret);
	n = fdr_uprobe_format(cmd, line, sizeof(line));
	if (n < 0 || (size_t)n >= sizeof(line))
		return pr_fail(
			err, -E2BIG, 0,
			"Probe definition is too long for fdr (read back in at most %d bytes)",
			FDR_PROBE_LINE_LEN - 2);
	line[n - 1] = 0; /* stored without its newline */
	prog = calloc(1, sizeof(*prog));
	if (!prog)
		return pr_fail(err, -ENOMEM, -1, "Out of memory");
	ret = fdr_uprobe_compile(cmd, &prog->prog, sizeof(*prog), &plen);
	if (ret) {
		free(prog);
		return pr_fail(err, -E2BIG, 0,
			       "The arguments need a fetch program of more than %d bytes (fdr)",
			       FDR_PROBE_PROG_BYTES);
	}
	ret = fdr_session_lock(s);
	if (ret) {
		free(prog);
		return pr_fail(err, ret, -1, "The session's control lock is not free");
	}
	ret = probes_map(s, 1, &p);
	if (ret) {
		pr_fail(err, ret, -1, "Cannot make the session's probes file: %s%s",
			ret == -EUCLEAN ? fdr_shm_error() : strerror(-ret),
			ret == -ENOSPC ? " (the file system is full)" : "");
		goto unlock;
	}
	idx = event_lookup(c, cmd->group, cmd->event, 0);
	if (idx >= 0 && c->events[idx].probe == FDR_PROBE_NONE) {
		ret = pr_fail(err, -EEXIST, 0,
			      "Given group/event name is already used by another event");
		goto unlock;
	}
	if (idx >= 0) {
		ret = check_join(c, p, (uint32_t)idx, cmd, &ev, err);
		if (ret)
			goto unlock;
	}
	n = slot_pick(p);
	if (n < 0) {
		ret = pr_fail(err, -ENOSPC, 0,
			      "Too many probe locations (fdr: at most %d in a session)",
			      FDR_MAX_PROBES);
		goto unlock;
	}
	if (idx >= 0) {
		es = (uint32_t)idx;
	} else {
		/*
		 * one wake for the definition, at its end: an agent woken by the
		 * event's registration would look at a slot not yet written, and
		 * the wake costs the writer a system call (bench-uprobes arm)
		 */
		s->quiet_changes = 1;
		ret = fdr_session_register_event(s, &ev, &es);
		s->quiet_changes = 0;
		if (ret == -EEXIST)
			ret = pr_fail(err, ret, 0,
				      "Given group/event name is already used by another event");
		else if (ret)
			ret = pr_fail(err, ret, 0, "No room for another event in the session (%s)",
				      strerror(-ret));
		if (ret)
			goto unlock;
	}
	/* the slot, as fdr-abi.h says: FREE, the fields, gen + 1, LIVE */
	sl = &p->probes[n];
	__atomic_store_n(&sl->state, FDR_PROBE_SLOT_FREE, __ATOMIC_RELEASE);
	sl->event_slot = es;
	sl->flags = cmd->is_return ? FDR_PROBE_F_RETURN : 0;
	sl->offset = cmd->offset;
	sl->ref_ctr_offset = cmd->has_ref_ctr ? cmd->ref_ctr_offset : 0;
	sl->dev = cmd->dev; /* the parser's stat() (the resolver's fstat()) */
	sl->ino = cmd->ino;
	__atomic_store_n(&sl->hits, 0, __ATOMIC_RELAXED);
	rows = fdr_probe_hit_rows(p, &ncpus);
	for (cpu = 0; cpu < ncpus; cpu++)
		__atomic_store_n(&rows[(size_t)cpu * FDR_MAX_PROBES + n], 0, __ATOMIC_RELAXED);
	__atomic_store_n(&sl->misses, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&sl->optimized, 0, __ATOMIC_RELAXED);
	memset(sl->path, 0, sizeof(sl->path));
	memcpy(sl->path, cmd->path, strlen(cmd->path));
	memset(sl->line, 0, sizeof(sl->line));
	memcpy(sl->line, line, strlen(line));
	sl->prog_len = (uint32_t)plen;
	memset(sl->prog, 0, sizeof(sl->prog));
	memcpy(sl->prog, prog->bytes, plen);
	__atomic_store_n(&sl->gen, sl->gen + 1, __ATOMIC_RELEASE);
	/* scans stop at slots_bound: raised before the slot goes live */
	if (p->slots_bound <= (uint32_t)n)
		__atomic_store_n(&p->slots_bound, (uint32_t)n + 1, __ATOMIC_RELEASE);
	__atomic_store_n(&sl->state, FDR_PROBE_SLOT_LIVE, __ATOMIC_RELEASE);
	__atomic_store_n(&p->nr_live, p->nr_live + 1, __ATOMIC_RELEASE);
	__atomic_fetch_add(&p->gen, 1, __ATOMIC_RELEASE);
	/*
	 * Agents arm only what is enabled: a definition that enables nothing
	 * (the usual one, enabled afterwards) bumps control.gen without waking
	 * them, and the enable wakes them: one wake-up and one sync an agent
	 * instead of two, and a system call less for the writer (bench-uprobes
	 * arm: docs/design/probes.md, "Arming in a busy process").
	 */
	quiet = !fdr_probe_event_armed(c, es);
	ret = 0;
unlock:
	fdr_session_unlock(s);
	if (!ret) {
		s->quiet_changes = quiet;
		fdr_session_changed(s);
		s->quiet_changes = 0;
	}
	free(prog);
	return ret;
}

static int line_del(struct fdr_session *s, const struct fdr_uprobe_cmd *cmd,
		    struct fdr_probes_err *err)
{
	struct fdr_abi_control *c = fdr_session_control(s);
	struct fdr_abi_probes *p;
	int ret, es;

	ret = fdr_session_lock(s);
	if (ret)
		return pr_fail(err, ret, -1, "The session's control lock is not free");
	ret = probes_map(s, 0, &p);
	es = ret ? -1 : event_lookup(c, cmd->has_group ? cmd->group : NULL, cmd->event, 1);
	if (ret && ret != -ENOENT) {
		pr_fail(err, ret, -1, "The session's probes file: %s",
			ret == -EUCLEAN ? fdr_shm_error() : strerror(-ret));
	} else if (es < 0) {
		ret = pr_fail(err, -ENOENT, 2, "There is no probe event of this name");
	} else if (event_in_use(c, (uint32_t)es)) {
		ret = pr_fail(
			err, -EBUSY, 2,
			"The event is in use (enabled in an instance, or named by a trigger)");
	} else {
		event_remove(s, p, (uint32_t)es);
		ret = 0;
	}
	fdr_session_unlock(s);
	if (!ret)
		fdr_session_changed(s);
	return ret;
}

/**
 * fdr_probes_line - apply one uprobe_events (or dynamic_events) line
 * @line: one line, without its newline; a comment or blank line does nothing
 * @err: on failure the errno, message and caret for error_log, and the command
 *
 * Returns 0, or the negative errno of the kernel's contract: -EINVAL (syntax),
 * -EEXIST (the event exists with other arguments, or is not a probe), -ENOENT
 * (no such file, or no such event for -:), -EBUSY (removing an event in use),
 * -ENAMETOOLONG, -E2BIG, -ENOSPC, -EOPNOTSUPP (an IFUNC symbol), -ENOMEM.
 */
int fdr_probes_line(struct fdr_session *s, const char *line, struct fdr_probes_err *err)
{
	struct fdr_uprobe_cmd *cmd = malloc(sizeof(*cmd));
	struct fdr_uprobe_err ue;
	int ret;

	memset(err, 0, sizeof(*err));
	err->pos = -1;
	fdr_uprobe_command(line, err->cmd, sizeof(err->cmd));
	if (!cmd)
		return pr_fail(err, -ENOMEM, -1, "Out of memory");
	ret = fdr_uprobe_parse(line, cmd, &ue);
	if (ret)
		ret = pr_from(err, &ue, ret);
	else if (cmd->op == FDR_UPROBE_ADD)
		ret = line_add(s, cmd, err);
	else if (cmd->op == FDR_UPROBE_DEL)
		ret = line_del(s, cmd, err);
	free(cmd);
	return ret;
}

/**
 * fdr_probes_clear - remove every probe ('>' on uprobe_events or dynamic_events)
 *
 * Nothing is removed if one of them is in use (enabled in an instance or held
 * by a trigger): -EBUSY, as the kernel refuses the open. Returns 0, -EBUSY, or
 * the error of the lock or of mapping the probes file.
 */
int fdr_probes_clear(struct fdr_session *s, struct fdr_probes_err *err)
{
	struct fdr_abi_control *c = fdr_session_control(s);
	struct fdr_abi_probes *p;
	uint32_t i;
	int ret;

	memset(err, 0, sizeof(*err));
	err->pos = -1;
	ret = fdr_session_lock(s);
	if (ret)
		return pr_fail(err, ret, -1, "The session's control lock is not free");
	ret = probes_map(s, 0, &p);
	if (ret == -ENOENT) {
		ret = 0; /* no probe was ever defined */
		goto unlock;
	}
	if (ret)
		goto unlock;
	for (i = 0; i < fdr_probe_slots_bound(p); i++) {
		uint32_t es = p->probes[i].event_slot;

		if (p->probes[i].state != FDR_PROBE_SLOT_FREE && es < FDR_MAX_EVENTS &&
		    event_in_use(c, es)) {
			ret = pr_fail(err, -EBUSY, -1, "A probe event is in use");
			goto unlock;
		}
	}
	for (i = 0; i < fdr_probe_slots_bound(p); i++) {
		uint32_t es = p->probes[i].event_slot;

		if (p->probes[i].state == FDR_PROBE_SLOT_FREE)
			continue;
		if (es < FDR_MAX_EVENTS && c->events[es].probe != FDR_PROBE_NONE)
			event_remove(s, p, es);
		else
			slot_free(p, i); /* a slot naming no probe event: dropped alone */
	}
	__atomic_fetch_add(&p->gen, 1, __ATOMIC_RELEASE);
unlock:
	fdr_session_unlock(s);
	fdr_session_changed(s);
	return ret;
}

/* ---- reads ------------------------------------------------------------------------------- */

/* Each live location in slot order; @fn appends its text. */
static int probes_each(struct fdr_session *s, struct fdr_buf *b,
		       int (*fn)(struct fdr_session *s, const struct fdr_abi_probes *p, uint32_t i,
				 const struct fdr_abi_probe_slot *sl, struct fdr_buf *b))
{
	struct fdr_abi_probes *p;
	struct fdr_abi_probe_slot *sl;
	const char *why;
	uint32_t i;
	int ret = fdr_session_probes(s, &p);

	if (ret == -ENOENT)
		return 0;
	if (ret)
		return ret;
	sl = malloc(sizeof(*sl));
	if (!sl)
		return -ENOMEM;
	for (i = 0; i < fdr_probe_slots_bound(p) && !ret; i++)
		if (slot_copy(p, i, sl, &why) == 0)
			ret = fn(s, p, i, sl, b);
	free(sl);
	return ret;
}

static int render_line(struct fdr_session *s, const struct fdr_abi_probes *p, uint32_t i,
		       const struct fdr_abi_probe_slot *sl, struct fdr_buf *b)
{
	(void)s;
	(void)p;
	(void)i;
	return fdr_buf_printf(b, "%s\n", sl->line) ? -ENOMEM : 0;
}

/** fdr_probes_render - uprobe_events as it reads: one line per location */
int fdr_probes_render(struct fdr_session *s, struct fdr_buf *b)
{
	return probes_each(s, b, render_line);
}

static int profile_line(struct fdr_session *s, const struct fdr_abi_probes *p, uint32_t i,
			const struct fdr_abi_probe_slot *sl, struct fdr_buf *b)
{
	const struct fdr_abi_event *e = &fdr_session_control(s)->events[sl->event_slot];
	char name[FDR_NAME_LEN + 1];

	memcpy(name, e->name, FDR_NAME_LEN);
	name[FDR_NAME_LEN] = 0;
	uint32_t opt = __atomic_load_n(&sl->optimized, __ATOMIC_RELAXED);
	int ret;

	/* the slot's count (hits where a row could not be used) and the rows' */
	ret = fdr_buf_printf(b, "  %s %-44s %15" PRIu64, sl->path, name,
			     sl->hits + fdr_probe_row_hits(p, i));
	/* fdr's own: how many locations are jump probes now (docs/design/uprobes.md) */
	if (!ret && opt)
		ret = fdr_buf_printf(b, " [OPTIMIZED %" PRIu32 "]", opt);
	if (!ret)
		ret = fdr_buf_printf(b, "\n");
	return ret ? -ENOMEM : 0;
}

/**
 * fdr_probes_profile - uprobe_profile: "  PATH EVENT HITS" per location, as the
 * kernel, and " [OPTIMIZED N]" after it where N > 0 of its locations are jump
 * probes now
 */
int fdr_probes_profile(struct fdr_session *s, struct fdr_buf *b)
{
	return probes_each(s, b, profile_line);
}
