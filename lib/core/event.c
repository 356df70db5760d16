// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * event.c - event registration, the commit path, markers and the agent thread.
 *
 * A process keeps a list of the event definitions it contains (registered by
 * constructors). While it is attached to a session, each definition has a slot
 * in the session's registry, and def->enabled mirrors "enabled in some instance".
 *
 * The agent is one thread per process, started with the first registration (or
 * by libfdr.so's constructor, below: fdr_agent_boot()). It
 * attaches to $FDR_SESSION when that session appears (polled every 200 ms), then
 * sleeps on a futex on control.gen, which every control change bumps and wakes
 * (the agent sleeps with the kernel's shortest slice and works with 0.5 ms,
 * so that it gets a CPU soon after the wake even among busy threads:
 * ev_agent_slice(), ev_agent_slice_set()),
 * and on each wake resynchronises: registers new definitions, updates enabled
 * flags, maps resized rings. When the session is destroyed or replaced, it
 * detaches: flags go to 0 and the old mappings are replaced by anonymous memory,
 * so a writer in flight never faults. The host never waits for the agent: the
 * event path reads only flags and mappings, and the control lock is taken with a
 * short timeout.
 *
 * Dynamic probes (docs/design/probes.md, "The probe agent"): the agent also
 * looks, at each control change, for the session's probes file. Only when it
 * has live locations does it dlopen() libfdr-probe (by soname, then from
 * libfdr's own directory) and from then on call its fdr_probe_agent_sync() at
 * each control change and at least once a second; libfdr itself never links
 * the probe library. libfdr-probe's constructor calls fdr_agent_probes_start(),
 * so a program that has it (linked or LD_PRELOADed) gets the agent even without
 * a static event; so does a program linked with libfdr.so that has none, from
 * libfdr's own constructor (boot.c, fdr_agent_boot()), unless it is an fdr tool.
 *
 * fdr attach (cli/attach.c) loads libfdr and libfdr-probe into a program that
 * has neither: fdr_agent_attach_prepare() names the session first (such a
 * program has no $FDR_SESSION of ours), libfdr-probe's constructor then
 * attaches as above; fdr_agent_detach_dir() (fdr detach) leaves the session
 * and attaches to none until the next fdr attach.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core-local.h"
#include "event-path.h"
#include "ring-fast.h"
#include "common/pid-list.h"

_Atomic(struct fdr_session *) fdr_proc_session;

static pthread_mutex_t ev_lock = PTHREAD_MUTEX_INITIALIZER; /* defs list, attach */
static struct fdr_event_def *ev_defs; /* protected by ev_lock */
static int ev_agent_running; /* protected by ev_lock */
static int ev_agent_wanted; /* runs without a definition or a session (ev_lock) */
static uint32_t ev_seen_gen;
static ino_t ev_ctl_ino;

/* the thread's event state (event-path.h), event-nv.c's too */
EV_TLS struct fdr_ev_self fdr_ev_self;
/* a definition of this process for each registry slot (the last one synced) */
static struct fdr_event_def *_Atomic ev_slot_def[FDR_MAX_EVENTS];
/* ---- definitions to registry format ---------------------------------------------- */

static void ev_type_name(const struct fdr_field_desc *f, char *buf, size_t len)
{
	static const char *const s[] = { "s8", "s16", "int", "s64" };
	static const char *const u[] = { "u8", "u16", "unsigned int", "u64" };
	int i = f->size == 1 ? 0 : f->size == 2 ? 1 : f->size == 4 ? 2 : 3;

	switch (f->kind) {
	case FDR_FIELD_KIND_INT:
		snprintf(buf, len, "%s", f->is_signed ? s[i] : u[i]);
		break;
	case FDR_FIELD_KIND_BOOL:
		snprintf(buf, len, "bool");
		break;
	case FDR_FIELD_KIND_CHARS:
		snprintf(buf, len, "char");
		break;
	case FDR_FIELD_KIND_STRING:
		snprintf(buf, len, "__data_loc char[]");
		break;
	default:
		snprintf(buf, len, "__data_loc unsigned char[]");
		break;
	}
}

static uint64_t ev_hash(uint64_t h, const void *p, size_t n)
{
	const unsigned char *c = p;

	while (n--)
		h = (h ^ *c++) * 0x100000001b3ull;
	return h;
}

/**
 * fdr_event_def_to_abi - describe a definition the way the registry stores it
 * Returns 0, or -EINVAL if the definition does not fit the ABI's limits.
 */
int fdr_event_def_to_abi(const struct fdr_event_def *def, struct fdr_abi_event *e)
{
	uint64_t h = 0xcbf29ce484222325ull;
	uint32_t i;

	memset(e, 0, sizeof(*e));
	if (!def->system || !def->name || strlen(def->system) >= FDR_NAME_LEN ||
	    strlen(def->name) >= FDR_NAME_LEN || def->nr_fields > FDR_MAX_FIELDS ||
	    (def->nr_fields && !def->fields) || def->fixed_size > FDR_MAX_RECORD)
		return -EINVAL;
	snprintf(e->system, sizeof(e->system), "%s", def->system);
	snprintf(e->name, sizeof(e->name), "%s", def->name);
	e->nr_fields = def->nr_fields;
	e->payload_size = def->fixed_size;
	for (i = 0; i < def->nr_fields; i++) {
		const struct fdr_field_desc *f = &def->fields[i];
		struct fdr_abi_field *a = &e->fields[i];

		if (!f->name || strlen(f->name) >= FDR_FIELD_NAME_LEN)
			return -EINVAL;
		snprintf(a->name, sizeof(a->name), "%s", f->name);
		ev_type_name(f, a->type, sizeof(a->type));
		a->offset = f->offset;
		a->size = f->size;
		a->is_signed = f->is_signed;
		a->kind = f->kind;
	}
	if (def->print_fmt && strlen(def->print_fmt) < FDR_PRINT_FMT_LEN) {
		const char *p = def->print_args ? def->print_args : "";
		int ok = 1;

		while (*p && ok) {
			char name[FDR_FIELD_NAME_LEN];
			size_t n;

			p += strspn(p, " \t,");
			n = strcspn(p, " \t,");
			if (!n)
				break;
			ok = n < sizeof(name) && e->nr_print_args < FDR_PRINT_ARGS_MAX;
			if (!ok)
				break;
			memcpy(name, p, n);
			name[n] = 0;
			p += n;
			for (i = 0; i < e->nr_fields; i++)
				if (strcmp(e->fields[i].name, name) == 0)
					break;
			ok = i < e->nr_fields;
			if (ok)
				e->print_args[e->nr_print_args++] = (uint8_t)i;
		}
		if (ok)
			snprintf(e->print_fmt, sizeof(e->print_fmt), "%s", def->print_fmt);
		else
			e->nr_print_args = 0;
	}
	h = ev_hash(h, &e->nr_fields, sizeof(e->nr_fields));
	h = ev_hash(h, &e->payload_size, sizeof(e->payload_size));
	h = ev_hash(h, e->fields, sizeof(e->fields[0]) * e->nr_fields);
	h = ev_hash(h, e->print_fmt, sizeof(e->print_fmt));
	h = ev_hash(h, e->print_args, sizeof(e->print_args));
	e->layout_hash = h;
	return 0;
}

/* ---- attaching and resynchronising ------------------------------------------------ */

static int ev_mask_any(const uint64_t *mask)
{
	uint32_t w;

	for (w = 0; w < FDR_MAX_INSTANCES / 64; w++)
		if (__atomic_load_n(&mask[w], __ATOMIC_ACQUIRE))
			return 1;
	return 0;
}

/* Register one definition in the session (ev_lock held). */
static void ev_sync_def(struct fdr_session *s, struct fdr_event_def *def, int *locked)
{
	struct fdr_abi_event tmpl;
	const struct fdr_abi_event *e;
	uint32_t slot;

	if (!def->slot) {
		if (fdr_event_def_to_abi(def, &tmpl))
			return;
		if (!*locked) {
			if (fdr_session_lock_ms(s, 100))
				return; /* retried on the agent's next round */
			*locked = 1;
		}
		if (fdr_session_register_event(s, &tmpl, &slot))
			return;
		def->id = s->ctl->events[slot].id;
		def->slot = slot + 1;
		atomic_store(&ev_slot_def[slot], def);
	}
	e = &s->ctl->events[def->slot - 1];
	/* an event with triggers runs them even where it is not enabled (soft mode) */
	/* relaxed: call sites read it with one plain load (fdr.h) */
	__atomic_store_n(&def->enabled,
			 e->state == FDR_EVENT_READY && e->id == def->id &&
				 (ev_mask_any(e->enabled) ||
				  ev_mask_any(s->ctl->hooks[def->slot - 1].triggered)),
			 __ATOMIC_RELAXED);
}

/*
 * Tell the instance's error_log, once, that a ring file did not check out
 * (the kernel's RB_WARN_ON): @m has disabled CPUs, or (@m NULL) the whole file
 * of generation @gen was refused with @err. Only the agent does this, with the
 * session lock taken briefly (not at all if it is busy: the next round retries).
 */
static void ev_report_ring(struct fdr_session *s, uint32_t inst, struct fdr_ring_map *m,
			   uint32_t gen, int err)
{
	/* the generation + 1 whose refusal was reported, per instance */
	static uint32_t reported[FDR_MAX_INSTANCES];
	char msg[FDR_SHM_ERROR_LEN + 64];

	if (m ? m->bad_reported : (err != -EUCLEAN || reported[inst] == gen + 1))
		return;
	if (fdr_session_lock_ms(s, 10))
		return;
	if (m)
		snprintf(msg, sizeof(msg), "%s: recording disabled on %u CPU(s) of this ring",
			 m->bad_why, m->nr_bad);
	else
		snprintf(msg, sizeof(msg), "%s: recording disabled in this instance",
			 fdr_shm_error());
	fdr_session_error(s, inst, "ring", msg, "", -1);
	fdr_session_unlock(s);
	if (m)
		m->bad_reported = 1;
	else
		reported[inst] = gen + 1;
}

/*
 * Tell each instance's error_log, once per mapping, that a writer of this
 * process switched a CPU off for a head past its buffer (rb_head_corrupt() in
 * ring.c; the kernel's RB_WARN_ON). Each agent round (ev_lock held).
 */
static void ev_report_heads(struct fdr_session *s)
{
	char msg[FDR_SHM_ERROR_LEN + 128];
	uint32_t i;

	for (i = 0; i < FDR_MAX_INSTANCES; i++) {
		struct fdr_ring_map *m = atomic_load(&s->rings[i]);

		if (!m || m->head_bad_reported ||
		    !__atomic_load_n(&m->head_bad_ready, __ATOMIC_ACQUIRE))
			continue;
		if (fdr_session_lock_ms(s, 10))
			return; /* busy: the next round retries */
		snprintf(
			msg, sizeof(msg),
			"ring.%u.%u: cpu %u buffer %u: head 0x%llx points past its %u sub-buffers: "
			"recording disabled on %u CPU(s) of this ring",
			m->instance, m->gen, m->head_bad_cpu, m->head_bad_bi,
			(unsigned long long)m->head_bad_value, m->pcpu[m->head_bad_cpu].nr_subbufs,
			__atomic_load_n(&m->nr_head_bad, __ATOMIC_RELAXED));
		fdr_session_error(s, i, "ring", msg, "", -1);
		fdr_session_unlock(s);
		m->head_bad_reported = 1;
	}
}

static void ev_sync_rings(struct fdr_session *s)
{
	uint32_t i;
	int err;

	for (i = 0; i < FDR_MAX_INSTANCES; i++) {
		const struct fdr_abi_instance *in = &s->ctl->instances[i];

		if (__atomic_load_n(&in->state, __ATOMIC_ACQUIRE) == FDR_INST_LIVE) {
			uint32_t gen = __atomic_load_n(&in->ring_gen, __ATOMIC_ACQUIRE);
			struct fdr_ring_map *m;

			err = 0;
			m = fdr_session_ring_map(s, i, &err);
			if (m && m->nr_bad) {
				ev_report_ring(s, i, m, gen, 0);
			} else if (!m) {
				/*
				 * The instance's current file cannot be used: stop writing
				 * into the previous one, which no reader looks at any more
				 * (its events would be lost uncounted); they are counted
				 * as unmapped until a file that checks out is there.
				 */
				fdr_ring_map_retire(atomic_exchange(&s->rings[i], NULL));
				ev_report_ring(s, i, NULL, gen, err);
			}
		} else {
			struct fdr_ring_map *m = atomic_exchange(&s->rings[i], NULL);

			fdr_ring_map_retire(m);
		}
	}
}

/* Resynchronise everything with the session (ev_lock held). */
static void ev_sync(struct fdr_session *s)
{
	struct fdr_event_def *d;
	int locked = 0;

	ev_seen_gen = __atomic_load_n(&s->ctl->gen, __ATOMIC_ACQUIRE);
	ev_sync_rings(s);
	for (d = ev_defs; d; d = d->next)
		ev_sync_def(s, d, &locked);
	if (locked)
		fdr_session_unlock(s);
}

static ino_t ev_control_ino(const char *dir)
{
	char path[4200];
	struct stat st;

	snprintf(path, sizeof(path), "%s/control", dir);
	return stat(path, &st) == 0 ? st.st_ino : 0;
}

/* Try to attach to $FDR_SESSION (ev_lock held). */
/*
 * fdr attach (docs/design/probes.md, "fdr attach"): a process that never
 * linked fdr has no $FDR_SESSION; the session it records into is the one
 * fdr attach named (ev_attach_dir), and after fdr detach it attaches to none
 * (ev_attach_off) until the next fdr attach. Both under ev_lock.
 */
static char *ev_attach_dir;
static int ev_attach_off;

static void ev_attach(void)
{
	char dir[4096];
	struct fdr_session *s;

	if (atomic_load(&fdr_proc_session) || ev_attach_off)
		return;
	if (ev_attach_dir)
		snprintf(dir, sizeof(dir), "%s", ev_attach_dir);
	else if (fdr_session_default_dir(dir, sizeof(dir)))
		return;
	if (fdr_session_open(dir, &s))
		return;
	if (__atomic_load_n(&s->ctl->state, __ATOMIC_ACQUIRE) != FDR_SESSION_LIVE) {
		fdr_session_close(s);
		return;
	}
	ev_ctl_ino = ev_control_ino(dir);
	fdr_ring_tsc = s->ctl->ts_source == FDR_TS_TSC;
	ev_sync(s);
	atomic_store(&fdr_proc_session, s);
	ev_sync(s); /* flags set before the store above could miss a change */
}

/*
 * Sessions the process detached from (ev_detach()). Their struct stays (a
 * writer or a round may still hold the pointer), and so did their directory's
 * descriptor, one per attach and detach, until ev_retired_close().
 */
static _Atomic(struct fdr_session *) ev_retired;

/* Put @s on ev_retired (lock-free: ev_detach() and ev_retired_close() hold different locks). */
static void ev_retire(struct fdr_session *s)
{
	s->retired_next = atomic_load(&ev_retired);
	while (!atomic_compare_exchange_weak(&ev_retired, &s->retired_next, s))
		;
}

/* Detach (ev_lock held): writers may still hold s; nothing of it is freed. */
static void ev_detach(void)
{
	struct fdr_session *s = atomic_exchange(&fdr_proc_session, NULL);
	struct fdr_event_def *d;
	uint32_t i;

	if (!s)
		return;
	for (d = ev_defs; d; d = d->next) {
		__atomic_store_n(&d->enabled, 0, __ATOMIC_RELAXED);
		d->slot = 0;
		d->id = 0;
	}
	for (i = 0; i < FDR_MAX_INSTANCES; i++)
		fdr_ring_map_retire(atomic_exchange(&s->rings[i], NULL));
	/* the control block: keep the address valid, drop the file's pages */
	fdr_shm_unback(s->ctl, s->ctl_size);
	/* its directory's descriptor: closed by the next probe round (ev_retired_close()) */
	ev_retire(s);
}

static void ev_agent_round(void)
{
	struct fdr_session *s;

	pthread_mutex_lock(&ev_lock);
	s = atomic_load(&fdr_proc_session);
	if (s && (__atomic_load_n(&s->ctl->state, __ATOMIC_ACQUIRE) != FDR_SESSION_LIVE ||
		  ev_control_ino(s->dir) != ev_ctl_ino)) {
		ev_detach();
		s = NULL;
	}
	if (!s)
		ev_attach();
	else if (__atomic_load_n(&s->ctl->gen, __ATOMIC_ACQUIRE) != ev_seen_gen)
		ev_sync(s);
	s = atomic_load(&fdr_proc_session);
	if (s)
		ev_report_heads(s);
	pthread_mutex_unlock(&ev_lock);
}

/* ---- dynamic probes: libfdr-probe, loaded only where a probe is live ------------------ */

typedef void (*ev_probe_sync_fn)(struct fdr_session *s);

/*
 * ev_probe_lock serialises the rounds (the agent, a registration that
 * attached, libfdr-probe's constructor). ev_probe_sync is set once, by the
 * library's constructor or by ev_probe_load(), and never cleared.
 */
static pthread_mutex_t ev_probe_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic(ev_probe_sync_fn) ev_probe_sync;
static int ev_probe_load_failed; /* reported once; not retried (ev_probe_lock) */
static uint32_t ev_probe_gen; /* control gen of the last look (ev_probe_lock) */
static struct fdr_session *ev_probe_sess; /* session of the last look (ev_probe_lock) */
static uint64_t ev_probe_last_ns; /* the last sync (ev_probe_lock) */
static __thread int ev_probe_loading; /* this thread is in ev_probe_load()'s dlopen() */

#define EV_AGENT_SLICE_NS 500000 /* 0.5 ms: see ev_agent_slice() */
#define EV_AGENT_WAKE_SLICE_NS 100000 /* 0.1 ms, asleep: ev_agent_slice_set() */
#define EV_PROBE_PERIOD_NS 800000000ull /* a sync at least this often: dlopen'ed libraries */

/* Has @s a probes file with live locations? One openat() and pread() of its header. */
static int ev_probes_live(struct fdr_session *s)
{
	/* the header only (the whole struct is 1.6 MiB: not on the agent's 64 KiB stack) */
	unsigned char h[offsetof(struct fdr_abi_probes, probes)];
	uint64_t magic;
	uint32_t nr_live;
	ssize_t n;
	int fd = openat(s->dir_fd, "probes", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

	if (fd < 0)
		return 0;
	n = pread(fd, h, sizeof(h), 0);
	close(fd);
	if (n != (ssize_t)sizeof(h))
		return 0;
	memcpy(&magic, h + offsetof(struct fdr_abi_probes, magic), sizeof(magic));
	memcpy(&nr_live, h + offsetof(struct fdr_abi_probes, nr_live), sizeof(nr_live));
	return magic == FDR_ABI_MAGIC_PROBES && nr_live > 0;
}

/* Load libfdr-probe (ev_probe_lock held). Failure goes to the error_log, once. */
static void ev_probe_load(struct fdr_session *s)
{
	const char *err = NULL;
	void *h;

	ev_probe_loading = 1;
	h = dlopen("libfdr-probe.so.0", RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		/* not on the search path: next to libfdr itself (a build tree, a prefix) */
		Dl_info info;
		char path[PATH_MAX];
		const char *slash;

		err = dlerror();
		if (dladdr((void *)ev_probe_load, &info) && info.dli_fname &&
		    (slash = strrchr(info.dli_fname, '/')) != NULL &&
		    snprintf(path, sizeof(path), "%.*s/libfdr-probe.so.0",
			     (int)(slash - info.dli_fname), info.dli_fname) < (int)sizeof(path))
			h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	}
	ev_probe_loading = 0;
	if (h && !atomic_load(&ev_probe_sync)) {
		ev_probe_sync_fn fn;

		*(void **)&fn = dlsym(h, "fdr_probe_agent_sync");
		if (fn)
			atomic_store(&ev_probe_sync, fn);
		else
			err = "libfdr-probe.so.0 has no fdr_probe_agent_sync";
	}
	if (!atomic_load(&ev_probe_sync)) {
		char msg[FDR_ERROR_TEXT_LEN / 2];

		ev_probe_load_failed = 1;
		snprintf(msg, sizeof(msg), "pid %d: dynamic probes not armed: %s", (int)getpid(),
			 err ? err : "cannot load libfdr-probe.so.0");
		if (fdr_session_lock_ms(s, 100) == 0) {
			fdr_session_error(s, 0, "probe_agent", msg, "", -1);
			fdr_session_unlock(s);
		}
	}
}

/*
 * Close the directory descriptors of the sessions ev_detach() retired
 * (ev_probe_lock held). The probe rounds are the only users of a session's
 * dir_fd outside ev_lock (ev_probes_live(), the agent's fdr_session_probes()),
 * and each loads the session under ev_probe_lock: once it is held, no round
 * uses a session retired before, but this one's (@cur, retired since it
 * loaded it), which the next round closes.
 *
 * Then its probes file, once the agent has let go of it (ev_probe_sess is
 * another session, or none): the agent's disarm writes each location's counts
 * and jump gauge into its slot (lib/probe/agent.c, pa_disarm()), and once a
 * location is disarmed no hit uses its slot. The pages go, as the control
 * block's and the rings' went at the detach: anonymous memory at the same
 * address, so a pointer still held reads zeros, and the file's memory is
 * released when the session is destroyed, not when the program exits.
 */
static void ev_retired_close(struct fdr_session *cur)
{
	struct fdr_session *r = atomic_exchange(&ev_retired, NULL), *next;
	struct fdr_abi_probes *p;

	for (; r; r = next) {
		next = r->retired_next;
		if (r == cur) {
			ev_retire(r);
			continue;
		}
		if (r->dir_fd >= 0)
			close(r->dir_fd);
		r->dir_fd = -1;
		if (r == ev_probe_sess) {
			ev_retire(r); /* the agent's disarm is still to come */
			continue;
		}
		p = atomic_load(&r->probes);
		if (p)
			fdr_shm_unback(p, FDR_PROBES_FILE_SIZE);
	}
}

/*
 * One round of the probe side (never with ev_lock held: loading the library
 * runs its constructor, which takes it). Without the library: a look at the
 * probes file when control.gen moved (or @force). With it: its sync at every
 * control change and at least every EV_PROBE_PERIOD_NS, and with NULL once
 * the process has detached (every probe disarmed).
 */
static void ev_probe_round(int force)
{
	struct fdr_session *s;
	ev_probe_sync_fn fn;
	uint32_t gen;
	uint64_t now;

	if (ev_probe_loading)
		return; /* libfdr-probe's constructor, inside ev_probe_load() */
	pthread_mutex_lock(&ev_probe_lock);
	/* under the lock: ev_retired_close() */
	s = atomic_load(&fdr_proc_session);
	if (atomic_load_explicit(&ev_retired, memory_order_relaxed))
		ev_retired_close(s);
	fn = atomic_load(&ev_probe_sync);
	if (!s) {
		if (fn && ev_probe_sess)
			fn(NULL);
		ev_probe_sess = NULL;
		goto out;
	}
	gen = __atomic_load_n(&s->ctl->gen, __ATOMIC_ACQUIRE);
	now = fdr_clock_mono_ns();
	if (!fn) {
		if ((!force && gen == ev_probe_gen && s == ev_probe_sess) || ev_probe_load_failed)
			goto out;
		ev_probe_gen = gen;
		ev_probe_sess = s;
		if (!ev_probes_live(s))
			goto out;
		ev_probe_load(s);
		fn = atomic_load(&ev_probe_sync);
		if (!fn)
			goto out;
	} else if (!force && gen == ev_probe_gen && s == ev_probe_sess &&
		   now - ev_probe_last_ns < EV_PROBE_PERIOD_NS) {
		goto out;
	}
	ev_probe_gen = gen;
	ev_probe_sess = s;
	ev_probe_last_ns = now;
	fn(s);
out:
	pthread_mutex_unlock(&ev_probe_lock);
}

/*
 * The agent's scheduling: a short slice (sched_attr.sched_runtime of a
 * SCHED_OTHER thread, Linux 6.12+; no privilege needed), so that at a
 * control change the agent is picked before the host's busy threads have run
 * out their own slices (EEVDF: an earlier deadline, and PREEMPT_SHORT). It
 * works briefly at each change (arming a probe: well under a millisecond).
 * Measured with bench-uprobes arm (4 busy threads) on the loaded 2-CPU VM, 12
 * runs each way alternating: the first hit of a probe 0.95 ms after its
 * definition (median) instead of 5.8 ms with the default slice. The slice was
 * the kernel's shortest, 0.1 ms, at first; but a sync that arms takes 0.2 to
 * 0.3 ms, and past its slice the agent was often preempted in the middle of
 * it for milliseconds (FDR_PROBE_ARM_TRACE showed single steps of 1.7 and 3.7
 * ms). With 0.5 ms, 3 batches of 15 to 21 runs each way alternating (load 2
 * to 3): medians 878, 696 and 551 us against 3542, 931 and 756 us with 0.1 ms.
 * Its nice value stays; other policies, and kernels that refuse, are left
 * alone.
 */
struct ev_sched_attr {
	uint32_t size, policy;
	uint64_t flags;
	int32_t nice;
	uint32_t priority;
	uint64_t runtime, deadline, period;
};

static struct ev_sched_attr ev_agent_attr; /* the agent's own (size 0: left alone) */

static void ev_agent_slice(void)
{
	struct ev_sched_attr a = { .size = sizeof(a), .policy = SCHED_OTHER };
	int nice;

	if (sched_getscheduler(0) != SCHED_OTHER)
		return;
	errno = 0;
	nice = getpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid));
	if (errno)
		return;
	a.nice = nice;
	a.runtime = EV_AGENT_SLICE_NS;
	if (syscall(SYS_sched_setattr, 0, &a, 0) == 0)
		ev_agent_attr = a;
}

/*
 * Session 13: the slice the agent sleeps with, EV_AGENT_WAKE_SLICE_NS (the
 * kernel's shortest), and the one it works with, EV_AGENT_SLICE_NS. EEVDF
 * sets a woken thread's deadline from its slice: a short one puts it ahead of
 * a busy thread whose slice began a while ago, which it then preempts
 * (PREEMPT_SHORT) instead of waiting for the next tick; once it runs, its
 * work gets the longer slice at the next deadline. Two sched_setattr() calls
 * a wake-up, which comes at a control change or every 0.2 s. bench-uprobes
 * arm on the 2-CPU VM, 2 batches of 20 runs each way alternating: no run
 * past 0.72 ms against 4 of 40 at 0.8 to 4.6 ms (the agent left waiting for
 * a tick), medians 400 and 373 us against 354 and 487 us.
 */
static void ev_agent_slice_set(uint64_t ns)
{
	struct ev_sched_attr a = ev_agent_attr;

	if (!a.size)
		return;
	a.runtime = ns;
	syscall(SYS_sched_setattr, 0, &a, 0);
}

/*
 * The agent thread's malloc arena (glibc gives a new thread its own), grown
 * and touched once at its start, and 16 KiB of its 64 KiB stack (as deep as
 * a sync that arms goes): what the agent allocates and uses later, most of
 * all libfdr-probe's sync when it arms a process's first probe (slot copies,
 * the ELF reader's buffers), then comes without page faults, 2 to 15 us each
 * on the virtual machines measured (docs/design/probes.md, "Arming in a busy
 * process"). 64 KiB stay with the arena (below glibc's trim threshold).
 */
#define EV_AGENT_HEAP_WARM (64 * 1024)
#define EV_AGENT_STACK_WARM (16 * 1024)
static __attribute__((noinline)) void ev_agent_warm(void)
{
	unsigned char stack[EV_AGENT_STACK_WARM]; /* and the stack a sync runs on */
	void *p = malloc(EV_AGENT_HEAP_WARM);

	memset(stack, 0, sizeof(stack));
	__asm__ volatile("" : : "r"(stack) : "memory"); /* the stores stay */
	if (!p)
		return;
	memset(p, 0, EV_AGENT_HEAP_WARM);
	__asm__ volatile("" : : "r"(p) : "memory");
	free(p);
}

static void *ev_agent(void *arg)
{
	(void)arg;
	prctl(PR_SET_NAME, "fdr-agent");
	ev_agent_slice();
	fdr_hooks_prepare();
	ev_agent_warm();
	for (;;) {
		struct fdr_session *s;
		struct timespec to = { 0, 200 * 1000 * 1000 };

		/*
		 * Probes first: arming is what a user waits for after a control
		 * change (the round below costs it 20 to 45 us, more when cold);
		 * again after it, in case it attached another session.
		 */
		ev_probe_round(0);
		ev_agent_round();
		ev_probe_round(0);
		s = atomic_load(&fdr_proc_session);
		if (s) {
			uint32_t gen = __atomic_load_n(&s->ctl->gen, __ATOMIC_ACQUIRE);

			if (gen == ev_seen_gen) {
				ev_agent_slice_set(EV_AGENT_WAKE_SLICE_NS);
				syscall(SYS_futex, &s->ctl->gen, FUTEX_WAIT, gen, &to, NULL, 0);
				ev_agent_slice_set(EV_AGENT_SLICE_NS);
			}
		} else {
			nanosleep(&to, NULL);
		}
	}
	return NULL;
}

/* Start the agent (ev_lock held). */
static void ev_agent_start(void)
{
	pthread_t t;
	pthread_attr_t a;
	sigset_t all, old;
	const char *off = getenv("FDR_NO_AGENT");

	if (ev_agent_running || (off && *off == '1'))
		return;
	sigfillset(&all);
	/*
	 * The agent takes none of the host's signals, but the synchronous ones stay
	 * open: a probe hit in the agent thread (a probed libc function) must reach
	 * libfdr-probe's handler, and a blocked int3 SIGTRAP kills the process.
	 * So does libfdr-probe's request signal (SIGRTMAX-1, FDR_PROBE_SIG_FIX): a
	 * probe is made a jmp only once every other thread has answered it, and
	 * libfdr-probe, dlopen()ed later, cannot unblock it in this thread.
	 */
	sigdelset(&all, SIGTRAP);
	sigdelset(&all, SIGRTMAX - 1);
	sigdelset(&all, SIGSEGV);
	sigdelset(&all, SIGBUS);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&a, 64 * 1024);
	if (pthread_create(&t, &a, ev_agent, NULL) == 0)
		ev_agent_running = 1;
	pthread_attr_destroy(&a);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* ---- options/event-fork -------------------------------------------------------------- */

/*
 * The kernel's event-fork adds a task forked by a task of an instance's pid
 * list to that list (set_event_pid, set_event_notrace_pid alike), and removes
 * a task from the lists when it exits. fdr sees forks in user space: in the
 * child, from a pthread_atfork() handler (so a raw clone() without glibc goes
 * unseen), and exits from libfdr's destructor (exit(), not _exit() or a
 * signal); the pids of tasks gone are also dropped whenever the files are read
 * or written and at each fork that adds one (docs/design/differences.md). New
 * threads need nothing: a tgid listed admits all the threads of its process.
 */
static int32_t ev_fork_tid, ev_fork_tgid; /* the forking thread (ev_lock held from prepare) */

/* Is @a or @b in the pid list @pids, @nr? */
static int ev_pids_has2(const int32_t *pids, const uint32_t *nr, int32_t a, int32_t b)
{
	return fdr_pids_has(pids, nr, a) || fdr_pids_has(pids, nr, b);
}

/* Does an instance of @c with event-fork on list @a or @b? (no lock: a first look) */
static int ev_follow_listed(const struct fdr_abi_control *c, int32_t a, int32_t b)
{
	uint32_t i;

	for (i = 0; i < FDR_MAX_INSTANCES; i++) {
		const struct fdr_abi_instance *in = &c->instances[i];
		const struct fdr_abi_instance_ext *x = &c->inst_ext[i];

		if (__atomic_load_n(&in->state, __ATOMIC_ACQUIRE) != FDR_INST_LIVE ||
		    !(__atomic_load_n(&in->options, __ATOMIC_RELAXED) & FDR_OPT_EVENT_FORK))
			continue;
		if (ev_pids_has2(in->pids, &in->nr_pids, a, b) ||
		    ev_pids_has2(x->notrace_pids, &x->nr_notrace_pids, a, b))
			return 1;
	}
	return 0;
}

/*
 * In a child: add @child to each list of an instance with event-fork on that
 * lists the parent's @ptid or @ptgid. A full list (FDR_MAX_PIDS) is left as
 * it is, silently, as is everything if the control lock cannot be had within
 * a second. No count changes between empty and not, so pids_active stands.
 */
static void ev_fork_follow(struct fdr_session *s, int32_t ptid, int32_t ptgid, int32_t child)
{
	struct fdr_abi_control *c = s->ctl;
	uint32_t i;

	if (!ev_follow_listed(c, ptid, ptgid) || fdr_session_lock_ms(s, 1000))
		return;
	for (i = 0; i < FDR_MAX_INSTANCES; i++) {
		struct fdr_abi_instance *in = &c->instances[i];
		struct fdr_abi_instance_ext *x = &c->inst_ext[i];

		if (in->state != FDR_INST_LIVE || !(in->options & FDR_OPT_EVENT_FORK))
			continue;
		fdr_pids_prune(in->pids, &in->nr_pids, 1);
		fdr_pids_prune(x->notrace_pids, &x->nr_notrace_pids, 0);
		if (ev_pids_has2(in->pids, &in->nr_pids, ptid, ptgid))
			(void)fdr_pids_add(in->pids, &in->nr_pids, child);
		if (ev_pids_has2(x->notrace_pids, &x->nr_notrace_pids, ptid, ptgid))
			(void)fdr_pids_add(x->notrace_pids, &x->nr_notrace_pids, child);
	}
	pthread_mutex_unlock((pthread_mutex_t *)(void *)c->lock);
}

/*
 * At exit: this process leaves the lists of the instances with event-fork on
 * (but the last pid of a set_event_pid list stays: see common/pid-list.h).
 */
static void ev_exit_follow(struct fdr_session *s, int32_t pid)
{
	struct fdr_abi_control *c = s->ctl;
	uint32_t i;

	if (!ev_follow_listed(c, pid, pid) || fdr_session_lock_ms(s, 200))
		return;
	for (i = 0; i < FDR_MAX_INSTANCES; i++) {
		struct fdr_abi_instance *in = &c->instances[i];
		struct fdr_abi_instance_ext *x = &c->inst_ext[i];

		if (in->state != FDR_INST_LIVE || !(in->options & FDR_OPT_EVENT_FORK))
			continue;
		fdr_pids_remove(in->pids, &in->nr_pids, pid, 1);
		fdr_pids_remove(x->notrace_pids, &x->nr_notrace_pids, pid, 0);
	}
	pthread_mutex_unlock((pthread_mutex_t *)(void *)c->lock);
}

__attribute__((destructor)) static void ev_exit(void)
{
	struct fdr_session *s = atomic_load(&fdr_proc_session);

	/* the mapping stays valid after a detach (it is replaced, never unmapped) */
	if (s)
		ev_exit_follow(s, (int32_t)getpid());
}

static void ev_atfork_prepare(void)
{
	pthread_mutex_lock(&ev_lock);
	ev_fork_tid = (int32_t)syscall(SYS_gettid);
	ev_fork_tgid = (int32_t)getpid();
}

static void ev_atfork_parent(void)
{
	pthread_mutex_unlock(&ev_lock);
}

static void ev_atfork_child(void)
{
	struct fdr_session *s = atomic_load(&fdr_proc_session);

	fdr_ev_self.tid = 0; /* the child records under its own pid */
	fdr_hooks_forget_self();
	fdr_ev_self.cmd_sid = 0;
	fdr_ev_self.nest = 0;
	ev_agent_running = 0;
	pthread_mutex_init(&ev_probe_lock, NULL); /* another thread may have held it */
	if (s) /* options/event-fork */
		ev_fork_follow(s, ev_fork_tid, ev_fork_tgid, (int32_t)getpid());
	if (ev_defs || s || ev_agent_wanted)
		ev_agent_start();
	pthread_mutex_unlock(&ev_lock);
}

static pthread_once_t ev_once = PTHREAD_ONCE_INIT;

static void ev_init_once(void)
{
	pthread_atfork(ev_atfork_prepare, ev_atfork_parent, ev_atfork_child);
}

/**
 * fdr_event_register - make an event definition known (called by constructors)
 * @def: a static definition; it must stay valid until fdr_event_unregister()
 *
 * Attaches to the session if it exists, starts the agent thread. Returns 0 or
 * -EINVAL for a definition beyond the ABI's limits (it then never records).
 */
int fdr_event_register(struct fdr_event_def *def)
{
	struct fdr_abi_event tmp;
	struct fdr_session *s;
	int saved = errno, attached = 0;

	if (!def || fdr_event_def_to_abi(def, &tmp))
		return -EINVAL;
	pthread_once(&ev_once, ev_init_once);
	pthread_mutex_lock(&ev_lock);
	def->next = ev_defs;
	ev_defs = def;
	s = atomic_load(&fdr_proc_session);
	if (s) {
		int locked = 0;

		ev_sync_def(s, def, &locked);
		if (locked)
			fdr_session_unlock(s);
	} else {
		ev_attach();
		attached = atomic_load(&fdr_proc_session) != NULL;
	}
	ev_agent_start();
	pthread_mutex_unlock(&ev_lock);
	/* just attached: probes already defined are armed before the program goes on */
	if (attached)
		ev_probe_round(1);
	errno = saved;
	return 0;
}

/** fdr_event_unregister - forget a definition (called by destructors) */
void fdr_event_unregister(struct fdr_event_def *def)
{
	struct fdr_event_def **p;

	pthread_mutex_lock(&ev_lock);
	for (p = &ev_defs; *p; p = &(*p)->next) {
		if (*p == def) {
			*p = def->next;
			break;
		}
	}
	__atomic_store_n(&def->enabled, 0, __ATOMIC_RELAXED);
	if (def->slot && def->slot <= FDR_MAX_EVENTS) {
		struct fdr_event_def *expect = def;

		/* a library being unloaded: no hint may reach its definition */
		atomic_compare_exchange_strong(&ev_slot_def[def->slot - 1], &expect, NULL);
	}
	pthread_mutex_unlock(&ev_lock);
}

/*
 * fdr_event_enabled_hint - a trigger of this process just enabled the event in
 * registry @slot: turn its call sites on now instead of at the agent's next
 * round (the event path then checks the registry as usual). Async-signal-safe.
 */
void fdr_event_enabled_hint(uint32_t slot)
{
	struct fdr_event_def *d;

	if (slot >= FDR_MAX_EVENTS)
		return;
	d = atomic_load(&ev_slot_def[slot]);
	if (d && d->slot == slot + 1)
		__atomic_store_n(&d->enabled, 1, __ATOMIC_RELAXED);
}

/**
 * fdr_agent_probes_start - libfdr-probe is in the process (its constructor):
 * attach to the default session, start the agent thread even if the program
 * has no static event, and arm the probes already defined now, before the
 * program goes on.
 * @sync: the library's fdr_probe_agent_sync(), called by the agent from then on
 */
void fdr_agent_probes_start(void (*sync)(struct fdr_session *s))
{
	ev_probe_sync_fn none = NULL;

	if (sync)
		atomic_compare_exchange_strong(&ev_probe_sync, &none, sync);
	pthread_once(&ev_once, ev_init_once);
	pthread_mutex_lock(&ev_lock);
	ev_agent_wanted = 1;
	ev_attach();
	ev_agent_start();
	pthread_mutex_unlock(&ev_lock);
	ev_probe_round(1);
}

/*
 * fdr_agent_boot - libfdr.so is loaded (its constructor, boot.c): start the
 * agent as fdr_agent_probes_start() does, so that probes reach a program linked
 * with libfdr that has no static event (docs/design/probes.md, "Starting the
 * agent"). It runs before any constructor of the program and of the libraries
 * that need libfdr, and it costs what a program's first registration costs: an
 * attempt to attach, and a thread. The probe round runs after ev_lock is
 * released, as everywhere: loading libfdr-probe runs its constructor, which
 * takes ev_lock.
 *
 * Not in the fdr tools: a process in which libfdr-read is loaded (fdr itself,
 * the programs that read traces) never arms probes in itself through this path
 * (it would trace its own reads of the trace it is reading, attach to the
 * session it is destroying); it still does with a static event or libfdr-probe.
 * Not where libfdr is outside the global scope (dlopen()ed RTLD_LOCAL, as fdr
 * attach does: it names the session after this constructor ran, with
 * fdr_agent_attach_prepare()). Nor with FDR_NO_AGENT=1. A static libfdr
 * (libfdr.a) has no such constructor: libfdr-probe needs libfdr.so.
 */
void fdr_agent_boot(void)
{
	const char *off = getenv("FDR_NO_AGENT");
	void *prog = dlopen(NULL, RTLD_LAZY); /* the global scope */
	int attached, here;

	/* libfdr in the global scope (not fdr attach's RTLD_LOCAL load), no libfdr-read */
	here = prog && dlsym(prog, "fdr_version") && !dlsym(prog, "fdr_reader_open");
	if (prog)
		dlclose(prog);
	if ((off && *off == '1') || !here)
		return;
	pthread_once(&ev_once, ev_init_once);
	pthread_mutex_lock(&ev_lock);
	ev_agent_wanted = 1;
	ev_attach();
	attached = atomic_load(&fdr_proc_session) != NULL;
	ev_agent_start();
	pthread_mutex_unlock(&ev_lock);
	if (attached)
		ev_probe_round(1);
}

/**
 * fdr_agent_attach_prepare - fdr attach, before libfdr-probe is loaded: the
 * session this process records into is @dir (not $FDR_SESSION)
 * @dir: a session directory
 *
 * Only records the directory; libfdr-probe's constructor (fdr_agent_probes_start())
 * then attaches to it. Returns 0, -EEXIST if this process already uses fdr
 * (attached, or static events registered) without fdr attach, -ENOMEM.
 */
int fdr_agent_attach_prepare(const char *dir)
{
	char *d;
	int ret = 0;

	if (!dir || !*dir)
		return -EINVAL;
	pthread_once(&ev_once, ev_init_once);
	pthread_mutex_lock(&ev_lock);
	if (!ev_attach_dir && (ev_defs || atomic_load(&fdr_proc_session))) {
		ret = -EEXIST;
	} else if (!ev_attach_dir || strcmp(ev_attach_dir, dir) != 0) {
		d = strdup(dir);
		if (!d) {
			ret = -ENOMEM;
		} else {
			free(ev_attach_dir);
			ev_attach_dir = d;
			ev_detach();
		}
	}
	ev_attach_off = 0;
	pthread_mutex_unlock(&ev_lock);
	return ret;
}

/**
 * fdr_agent_attach_mode - whether the session of this process was set by fdr attach
 */
int fdr_agent_attach_mode(void)
{
	int r;

	pthread_mutex_lock(&ev_lock);
	r = ev_attach_dir != NULL;
	pthread_mutex_unlock(&ev_lock);
	return r;
}

/**
 * fdr_agent_attach_dir - fdr attach: record into session @dir from now on, attach
 * now, start the agent and run a probe round (@sync: libfdr-probe's sync).
 * Returns 0 (attached), 1 (was attached to @dir already), -EEXIST (this process
 * uses fdr without fdr attach), -ENOENT (no live session at @dir), -ENOMEM.
 */
int fdr_agent_attach_dir(const char *dir, void (*sync)(struct fdr_session *s))
{
	struct fdr_session *s;
	int ret, was;

	pthread_once(&ev_once, ev_init_once);
	pthread_mutex_lock(&ev_lock);
	s = atomic_load(&fdr_proc_session);
	was = s && !ev_attach_off && ev_attach_dir && strcmp(ev_attach_dir, dir) == 0;
	pthread_mutex_unlock(&ev_lock);
	ret = fdr_agent_attach_prepare(dir);
	if (ret < 0)
		return ret;
	fdr_agent_probes_start(sync);
	if (!atomic_load(&fdr_proc_session))
		return -ENOENT;
	return was;
}

/**
 * fdr_agent_detach_dir - fdr detach: leave the session and attach to none until
 * the next fdr attach; every probe is disarmed (libfdr-probe's sync with NULL)
 * before this returns. Returns 0, 1 (not attached), -EEXIST (not fdr attach's).
 */
int fdr_agent_detach_dir(void)
{
	int was;

	pthread_mutex_lock(&ev_lock);
	if (!ev_attach_dir) {
		pthread_mutex_unlock(&ev_lock);
		return -EEXIST;
	}
	was = !ev_attach_off;
	ev_attach_off = 1;
	ev_detach();
	pthread_mutex_unlock(&ev_lock);
	ev_probe_round(1);
	return was ? 0 : 1;
}

/** fdr_sync - attach and resynchronise now instead of at the agent's next wake-up */
int fdr_sync(void)
{
	pthread_once(&ev_once, ev_init_once);
	ev_agent_round();
	ev_probe_round(1);
	return atomic_load(&fdr_proc_session) ? 0 : -ENOENT;
}

/* ---- the event path ------------------------------------------------------------------- */

static int32_t ev_gettid(void)
{
	if (!fdr_ev_self.tid)
		fdr_ev_self.tid = (int32_t)syscall(SYS_gettid);
	return fdr_ev_self.tid;
}

/* Record this thread's comm once per session, lock-free (last writer wins a slot). */
static void ev_save_cmdline(struct fdr_session *s, int32_t tid)
{
	char comm[FDR_COMM_LEN] = { 0 };

	if (fdr_ev_self.cmd_sid == s->session_id)
		return;
	fdr_ev_self.cmd_sid = s->session_id;
	prctl(PR_GET_NAME, comm);
	fdr_cmdline_save(s->ctl, tid, (int32_t)getpid(), comm);
}

/* Write one record (see ev_write_all) into instance @inst, whose ring map is @m. */
static inline __attribute__((always_inline)) void ev_write_one(struct fdr_session *s, uint32_t inst,
							       struct fdr_ring_map *m,
							       unsigned char *payload, size_t len)
{
	size_t total = ev_rec_seal(payload, len);

	fdr_ring_write_fast(s, inst, m, payload - sizeof(struct fdr_abi_rec), total);
}

/*
 * Write one record (payload with 16 bytes of headroom, 8 bytes of tailroom) into
 * each instance of @mask that is tracing. Returns how many rings took it, or -1
 * if no instance of the mask was tracing.
 */
static inline __attribute__((always_inline)) int ev_write_all(struct fdr_session *s,
							      const uint64_t *mask, uint32_t slot,
							      unsigned char *payload, size_t len)
{
	unsigned char *rec = payload - sizeof(struct fdr_abi_rec);
	size_t total = ev_rec_seal(payload, len);
	uint32_t w;
	int tried = 0, ok = 0;

	if (__builtin_expect(__atomic_load_n(&s->ctl->hooks_active, __ATOMIC_ACQUIRE) != 0, 0) &&
	    ev_hooked(s->ctl, slot)) {
		/* this event has a filter or triggers, or some instance a pid list */
		fdr_hooks_commit(s, mask, slot, rec, total);
		return 1;
	}
	for (w = 0; w < FDR_MAX_INSTANCES / 64; w++) {
		uint64_t bits = __atomic_load_n(&mask[w], __ATOMIC_RELAXED);

		while (bits) {
			uint32_t i = w * 64 + (uint32_t)__builtin_ctzll(bits);
			struct fdr_ring_map *m;

			bits &= bits - 1;
			if (!s->ctl->instances[i].tracing_on)
				continue;
			m = atomic_load_explicit(&s->rings[i], memory_order_acquire);
			tried = 1;
			if (!m)
				fdr_ring_unmapped(s); /* a new instance: the agent maps it */
			else if (fdr_ring_write_fast(s, i, m, rec, total) == 0)
				ok++;
		}
	}
	return tried ? ok : -1;
}

/*
 * The whole event path: fdr_event_commit() when its common case does not apply.
 * @direct: fdr_event_commit() found the route and tried the ring's fast path,
 * which sent the record to the slow path; go there at once.
 */
static __attribute__((noinline)) void ev_commit_full(struct fdr_event_def *def, void *payload,
						     size_t len, int direct)
{
	struct fdr_session *s = atomic_load_explicit(&fdr_proc_session, memory_order_acquire);
	struct fdr_common *c = payload;
	const struct fdr_abi_event *e;
	uint32_t gen, route;

	if (__builtin_expect(!s || !def->slot || len > FDR_MAX_RECORD, 0))
		return;
	if (__builtin_expect(fdr_ev_self.nest >= FDR_MAX_NESTING, 0)) {
		__atomic_fetch_add(&s->ctl->dropped_no_slot, 1, __ATOMIC_RELAXED);
		return;
	}
	if (__builtin_expect(fdr_ev_self.cmd_sid != s->session_id, 0)) {
		int saved = errno;

		ev_save_cmdline(s, ev_gettid());
		errno = saved;
	}
	fdr_ev_self.nest++;
	/* the common header (unused if the registry entry is not def's any more) */
	ev_common(c, (uint16_t)def->id, (uint8_t)(fdr_ev_self.nest - 1), fdr_ev_self.tid);
	/* acquire: the fields a route is computed from are read after gen */
	gen = __atomic_load_n(&s->ctl->gen, __ATOMIC_ACQUIRE);
	route = ev_route_get(s, def->slot - 1, gen);
	if (__builtin_expect(EV_ROUTE_INST(route) != 0, 1)) {
		/* the route was computed when the registry entry had def's id */
		uint32_t inst = (EV_ROUTE_INST(route) - 1) % FDR_MAX_INSTANCES;
		struct fdr_ring_map *m =
			atomic_load_explicit(&s->rings[inst], memory_order_acquire);

		if (__builtin_expect(m == NULL, 0))
			fdr_ring_unmapped(s);
		else if (direct && !EV_ROUTE_FILTER(route))
			fdr_ring_write(s, inst, m, payload - sizeof(struct fdr_abi_rec),
				       ev_rec_seal(payload, len));
		else if (!EV_ROUTE_FILTER(route) ||
			 fdr_hooks_filter(s, EV_ROUTE_FILTER(route), payload, (uint32_t)len))
			ev_write_one(s, inst, m, payload, len);
		fdr_ev_self.nest--;
		return;
	}
	e = &s->ctl->events[(def->slot - 1) % FDR_MAX_EVENTS];
	if (__builtin_expect(e->id == def->id, 1)) {
		if (!(route & EV_ROUTE_KNOWN))
			ev_route_set(s, e->enabled, def->slot - 1, gen);
		ev_write_all(s, e->enabled, def->slot - 1, payload, len);
	}
	fdr_ev_self.nest--;
}

/*
 * fdr_event_commit()'s common case with a filter (route @r, checked at this gen
 * by the caller, as were nesting and the saved comm): evaluate it on the record,
 * then write it with the event path's short section, without the checks again.
 */
static __attribute__((noinline)) void ev_commit_filtered(struct fdr_event_def *def, void *payload,
							 size_t len, struct fdr_session *s,
							 uint64_t r)
{
	uint32_t inst = (EV_ROUTE_INST(r) - 1) % FDR_MAX_INSTANCES;
	struct fdr_ring_map *m = atomic_load_explicit(&s->rings[inst], memory_order_acquire);

	if (__builtin_expect(m == NULL, 0)) {
		ev_commit_full(def, payload, len, 0);
		return;
	}
	fdr_ev_self.nest = 1;
	ev_common(payload, (uint16_t)def->id, 0, fdr_ev_self.tid);
	if (fdr_hooks_filter(s, EV_ROUTE_FILTER(r), payload, (uint32_t)len)) {
		size_t total = ev_rec_seal(payload, len);
		long rs = fdr_rseq_off;
		uint32_t cpu = rb_cpu_start(rs);

		if (cpu >= m->nr_cpus || total > RB_SMALL_MAX ||
		    rb_append_small((uint64_t)rs, cpu, &m->pcpu[cpu], payload, total) != RB_OK)
			fdr_ring_write(s, inst, m,
				       (unsigned char *)payload - sizeof(struct fdr_abi_rec),
				       total);
	}
	fdr_ev_self.nest = 0;
}

/**
 * fdr_event_commit - record an event into every instance where it is enabled
 * @def: the definition
 * @payload: common header + fields (+ dynamic data); see fdr.h for scratch space
 * @len: bytes
 *
 * Async-signal-safe, never blocks, never allocates, keeps errno (the fast path
 * makes no call that could change it; the slow paths save and restore it).
 *
 * This is the common case only, kept short: a session, a registered event whose
 * cached route (see ev_route_get()) names one instance (and no filter: a filter
 * has its own function, ev_commit_filtered()), a thread
 * that is not inside another write (a signal handler's event is nested) and has
 * recorded its comm in this session, rdtsc timestamps, a ring mapped for this
 * CPU and a record of 16 to 128 bytes with room in the current sub-buffer.
 * Anything else goes to ev_commit_full(), which starts again from the top:
 * nothing here has been published until the critical section commits.
 */
void fdr_event_commit(struct fdr_event_def *def, void *payload, size_t len)
{
	struct fdr_session *s = atomic_load_explicit(&fdr_proc_session, memory_order_acquire);
	uint32_t idx = def->slot - 1; /* slot 0 (unregistered) wraps: fails the test */

	/* len: the record with its header is at most RB_SMALL_MAX bytes */
	if (__builtin_expect(!FDR_TESTPOINTS_ON && s != NULL, 1) &&
	    __builtin_expect(idx < FDR_MAX_EVENTS, 1) &&
	    __builtin_expect(len <= RB_SMALL_MAX - sizeof(struct fdr_abi_rec), 1) &&
	    __builtin_expect(fdr_ev_self.nest == 0 && fdr_ev_self.cmd_sid == s->session_id, 1)) {
		/* acquire: the fields the route was computed from are read after gen */
		uint32_t gen = __atomic_load_n(&s->ctl->gen, __ATOMIC_ACQUIRE);
		uint64_t r = __atomic_load_n(&s->routes[idx], __ATOMIC_RELAXED);
		uint32_t inst = (EV_ROUTE_INST(r) - 1) % FDR_MAX_INSTANCES;

		if (__builtin_expect(r >> 32 == gen && (r & EV_ROUTE_FAST), 1)) {
			if (EV_ROUTE_FILTER(r)) {
				ev_commit_filtered(def, payload, len, s, r);
				return;
			}
			struct fdr_ring_map *m =
				atomic_load_explicit(&s->rings[inst], memory_order_acquire);
			long rs = fdr_rseq_off;
			uint32_t cpu = rb_cpu_start(rs);

			if (__builtin_expect(m != NULL && cpu < m->nr_cpus, 1)) {
				size_t total;
				int ret;

				ev_common(payload, (uint16_t)def->id, 0, fdr_ev_self.tid);
				total = ev_rec_seal(payload, len);
				/* a signal handler's event is nested in this one */
				fdr_ev_self.nest = 1;
				ret = rb_append_small((uint64_t)rs, cpu, &m->pcpu[cpu], payload,
						      total);
				fdr_ev_self.nest = 0;
				if (__builtin_expect(ret != RB_OK, 0))
					ev_commit_full(def, payload, len, ret == RB_SLOW);
				return;
			}
		}
	}
	ev_commit_full(def, payload, len, 0);
}

/**
 * fdr_event_commit_slot - record a payload built outside a definition: a
 * dynamic probe's hit (libfdr-probe's agent), for the event in registry @slot
 * @slot: registry index
 * @id: the event's id when the caller looked; the record is dropped if the
 *      entry now holds another event
 * @payload: common header (filled here) + fields, with 16 bytes of headroom
 *           before it and 8 bytes of tailroom after @len
 * @len: bytes, at most FDR_MAX_RECORD
 *
 * Goes the way a static event's full path goes: every instance the event is
 * enabled in, with filters, triggers and pid lists. Async-signal-safe, keeps
 * errno. Returns the number of rings that took it (> 0); 0 if no instance of
 * the event was tracing; -ENOSPC if every ring refused it (full, discard
 * mode); -EBUSY when nested too deep; -ENOENT (not attached), -ESTALE (the
 * entry changed), -EINVAL.
 */
int fdr_event_commit_slot(uint32_t slot, uint32_t id, unsigned char *payload, size_t len)
{
	struct fdr_session *s = atomic_load_explicit(&fdr_proc_session, memory_order_acquire);
	const struct fdr_abi_event *e;
	int ret;

	if (!s)
		return -ENOENT;
	if (slot >= FDR_MAX_EVENTS || len < sizeof(struct fdr_common) || len > FDR_MAX_RECORD)
		return -EINVAL;
	if (fdr_ev_self.nest >= FDR_MAX_NESTING) {
		__atomic_fetch_add(&s->ctl->dropped_no_slot, 1, __ATOMIC_RELAXED);
		return -EBUSY;
	}
	e = &s->ctl->events[slot];
	if (__atomic_load_n(&e->state, __ATOMIC_ACQUIRE) != FDR_EVENT_READY ||
	    __atomic_load_n(&e->id, __ATOMIC_RELAXED) != id)
		return -ESTALE;
	fdr_ev_self.nest++;
	ev_common((struct fdr_common *)payload, (uint16_t)id, 0, ev_gettid());
	ret = ev_write_all(s, e->enabled, slot, payload, len);
	fdr_ev_self.nest--;
	/*
	 * The thread's comm after the record, not before: its first hit is
	 * stamped when it happened, not three system calls later (prctl,
	 * getpid and the cmdline table's page: 50 to 150 us on the VM, cold).
	 */
	if (fdr_ev_self.cmd_sid != s->session_id) {
		int saved = errno;

		ev_save_cmdline(s, ev_gettid());
		errno = saved;
	}
	return ret < 0 ? 0 : ret == 0 ? -ENOSPC : ret;
}

static pthread_once_t ev_marker_once = PTHREAD_ONCE_INIT;

/* A process that only writes markers attaches (and starts the agent) on first use. */
static void ev_marker_init(void)
{
	pthread_once(&ev_once, ev_init_once);
	pthread_mutex_lock(&ev_lock);
	ev_attach();
	ev_agent_start();
	pthread_mutex_unlock(&ev_lock);
}

/**
 * fdr_marker_write - record @text as a trace_marker write (ftrace:print) in the
 * top instance. Returns bytes recorded (the text may be cut to fit), -ENOENT
 * (no session), -EBADF (tracing off), -EINVAL (option markers off).
 */
int fdr_marker_write(const char *text, size_t len)
{
	struct fdr_session *s = atomic_load_explicit(&fdr_proc_session, memory_order_acquire);
	unsigned char raw[16 + FDR_MAX_RECORD + 8] __attribute__((aligned(8)));
	unsigned char *p = raw + 16;
	uint64_t mask[FDR_MAX_INSTANCES / 64] = { 1 };
	size_t plen, taken;
	int32_t tid;
	int saved = errno, ret;

	if (!s) {
		pthread_once(&ev_marker_once, ev_marker_init);
		s = atomic_load_explicit(&fdr_proc_session, memory_order_acquire);
		if (!s)
			return -ENOENT;
	}
	if (!s->ctl->instances[0].tracing_on)
		return -EBADF;
	if (!(s->ctl->instances[0].options & FDR_OPT_MARKERS))
		return -EINVAL;
	if (fdr_ev_self.nest >= FDR_MAX_NESTING)
		return -EBUSY;
	fdr_ev_self.nest++;
	tid = ev_gettid();
	plen = fdr_marker_record(p, text, len, tid, (uint8_t)(fdr_ev_self.nest - 1), &taken);
	ev_save_cmdline(s, tid);
	ret = ev_write_all(s, mask, 0, p, plen); /* ftrace:print is slot 0 */
	fdr_ev_self.nest--;
	errno = saved;
	/* the text and its newline; refused: full in discard mode, as the kernel */
	return ret > 0 ? (int)(plen - 16 - 1) : -EBADF;
}

/** fdr_vmarker - printf-style fdr_marker_write(); not async-signal-safe (vsnprintf) */
int fdr_vmarker(const char *fmt, va_list ap)
{
	char buf[FDR_MAX_RECORD];
	int n;

	if (!atomic_load(&fdr_proc_session)) {
		pthread_once(&ev_marker_once, ev_marker_init);
		if (!atomic_load(&fdr_proc_session))
			return -ENOENT;
	}
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	if (n < 0)
		return -EINVAL;
	return fdr_marker_write(buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
}

/** fdr_marker - record a formatted trace_marker line (see fdr_vmarker()) */
int fdr_marker(const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = fdr_vmarker(fmt, ap);
	va_end(ap);
	return n;
}

/**
 * fdr_snapshot - take a snapshot of the top instance now, from the application's
 * own error path: the live and spare buffers swap on every CPU, so the events
 * that led here are frozen while tracing goes on in the spare.
 *
 * O(CPUs), lock-free, async-signal-safe. Returns 0, -ENOENT (no session),
 * -ENODEV (the snapshot buffers are not allocated: 'fdr snapshot alloc' or
 * 'echo 1 > snapshot' first), -EBUSY (another snapshot is being taken).
 */
int fdr_snapshot(void)
{
	struct fdr_session *s = atomic_load_explicit(&fdr_proc_session, memory_order_acquire);
	struct fdr_ring_map *m;
	int saved = errno, ret;

	if (!s)
		return -ENOENT;
	m = atomic_load_explicit(&s->rings[0], memory_order_acquire);
	if (!m)
		return -ENOENT;
	ret = fdr_ring_swap(m, -1);
	errno = saved;
	return ret;
}

/** fdr_version - the library version, "MAJOR.MINOR.PATCH" */
const char *fdr_version(void)
{
	return FDR_VERSION_STRING;
}
