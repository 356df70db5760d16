// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * shm-check.c - one validation function per shared-memory structure.
 *
 * Every process that maps a session may be buggy or hostile, and so may a disk
 * image of one: any byte of the control file or of a ring file can hold any
 * value, and can change between two reads. So each structure has one function
 * here that says whether a private copy of it is usable, and what is wrong with
 * it and where when it is not; writers (lib/core) and readers (lib/ctl) call
 * the same function, at map or open time, never per event:
 *
 *	fdr_shm_check_control()   the control file's header, at fdr_session_open()
 *	fdr_shm_check_instance()  an instance slot, before a reader uses its clock,
 *	                          sub-buffer size or ring generation
 *	fdr_shm_check_instance_ext()  its more fields (inst_ext[]), likewise
 *	fdr_shm_check_event()     a registry entry, before a reader decodes with it
 *	fdr_shm_check_ring()      a ring file's header, at fdr_ring_map_open()
 *	fdr_shm_check_cpu()       one buffer of one CPU of a ring: its geometry
 *	fdr_shm_check_probes()    the probes file's header, at fdr_session_probes()
 *	fdr_shm_check_probe_slot()  a probe location, before an agent arms it or a
 *	                          tool shows it (its fetch program: fdr_fetch_check())
 *
 * The sub-buffer and record headers are checked where they are parsed, in the
 * reader (rd_rec_len(), rd_refresh_ring()), and the hook slots where the writer
 * follows them (lib/core/hooks.c): both are read many times per event, from a
 * private copy or with a bound on every index.
 *
 * The callers copy the structure (or the words they use) into private memory
 * first and check the copy, then use only the copy: a value that changes after
 * the check changes nothing. A failed check returns -EUCLEAN and leaves the text
 * ("ring.0.0: cpu 1 buffer 0: subbuf_size 2147483649 is not a power of two in
 * 4096..1048576") in a per-thread buffer that fdr_shm_error() returns. Nothing
 * here loops on a value it read: every loop is bounded by a constant.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core-local.h"

/* Not initial-exec: this is never on the event path, and may run in a dlopen()ed library. */
static __thread char shm_error[FDR_SHM_ERROR_LEN];

/**
 * fdr_shm_errorf - record what is wrong with shared memory, for fdr_shm_error()
 * @fmt: printf format: "WHERE: WHAT"
 *
 * Returns -EUCLEAN, so that a check can end with "return fdr_shm_errorf(...)".
 */
int fdr_shm_errorf(const char *fmt, ...)
{
	va_list ap;
	int saved = errno;

	va_start(ap, fmt);
	vsnprintf(shm_error, sizeof(shm_error), fmt, ap);
	va_end(ap);
	errno = saved;
	return -EUCLEAN;
}

/**
 * fdr_shm_error - what the last failed check of shared memory in this thread
 * found, and where; "" if none failed yet. Borrowed; valid until the thread's
 * next check fails.
 */
const char *fdr_shm_error(void)
{
	return shm_error;
}

/**
 * fdr_shm_log2 - log2 of @v if it is a power of two, else -1; bounded for any @v
 */
int fdr_shm_log2(uint32_t v)
{
	if (!v || (v & (v - 1)))
		return -1;
	return __builtin_ctz(v);
}

/* Is the fixed-size array @s (@len bytes) NUL-terminated? */
static int shm_has_nul(const char *s, size_t len)
{
	return memchr(s, '\0', len) != NULL;
}

/**
 * fdr_shm_check_control - check the header of a control file
 * @c: the mapping (only the header words are read, each once)
 * @size: the file's size
 *
 * Returns 0 or -EUCLEAN (text in fdr_shm_error()).
 */
int fdr_shm_check_control(const struct fdr_abi_control *c, uint64_t size)
{
	uint32_t struct_size, version, nr_cpus, ts_source, state, cmdline_size;
	uint64_t magic, tsc_khz;

	/* the header first: a session of another ABI version may be smaller */
	if (size < offsetof(struct fdr_abi_control, instances))
		return fdr_shm_errorf("control: file size %llu is smaller than %zu",
				      (unsigned long long)size,
				      offsetof(struct fdr_abi_control, instances));
	magic = __atomic_load_n(&c->magic, __ATOMIC_ACQUIRE);
	struct_size = __atomic_load_n(&c->struct_size, __ATOMIC_RELAXED);
	version = __atomic_load_n(&c->version, __ATOMIC_RELAXED);
	if (magic != FDR_ABI_MAGIC_CONTROL)
		return fdr_shm_errorf("control: magic %#llx is not %#llx",
				      (unsigned long long)magic,
				      (unsigned long long)FDR_ABI_MAGIC_CONTROL);
	if (version != FDR_ABI_VERSION)
		return fdr_shm_errorf(
			"control: the session's ABI version is %u, this fdr's is %u: use the fdr "
			"that made the session, or destroy it and start it again with this one",
			version, FDR_ABI_VERSION);
	if (size < sizeof(*c))
		return fdr_shm_errorf("control: file size %llu is smaller than %zu",
				      (unsigned long long)size, sizeof(*c));
	if (struct_size != sizeof(*c))
		return fdr_shm_errorf("control: struct_size %u is not %zu", struct_size,
				      sizeof(*c));
	nr_cpus = __atomic_load_n(&c->nr_cpus, __ATOMIC_RELAXED);
	ts_source = __atomic_load_n(&c->ts_source, __ATOMIC_RELAXED);
	state = __atomic_load_n(&c->state, __ATOMIC_RELAXED);
	cmdline_size = __atomic_load_n(&c->cmdline_size, __ATOMIC_RELAXED);
	tsc_khz = __atomic_load_n(&c->tsc_khz, __ATOMIC_RELAXED);
	if (nr_cpus == 0 || nr_cpus > FDR_MAX_CPUS)
		return fdr_shm_errorf("control: nr_cpus %u is not in 1..%u", nr_cpus, FDR_MAX_CPUS);
	if (ts_source != FDR_TS_TSC && ts_source != FDR_TS_MONO)
		return fdr_shm_errorf("control: ts_source %u is neither %u (tsc) nor %u (mono)",
				      ts_source, FDR_TS_TSC, FDR_TS_MONO);
	if (ts_source == FDR_TS_TSC && (tsc_khz < 1000 || tsc_khz > 100000000))
		return fdr_shm_errorf("control: tsc_khz %llu is not in 1000..100000000",
				      (unsigned long long)tsc_khz);
	if (state != FDR_SESSION_LIVE && state != FDR_SESSION_DESTROYED)
		return fdr_shm_errorf("control: state %u is neither %u (live) nor %u (destroyed)",
				      state, FDR_SESSION_LIVE, FDR_SESSION_DESTROYED);
	if (cmdline_size > FDR_CMDLINE_SLOTS)
		return fdr_shm_errorf("control: cmdline_size %u is above %u", cmdline_size,
				      FDR_CMDLINE_SLOTS);
	return 0;
}

/**
 * fdr_shm_check_instance - check a private copy of an instance slot
 * @in: the copy
 * @inst: its index, for the message
 *
 * A free slot is always fine. A live one needs a known clock, a sub-buffer size
 * that ring files can have, bounded list lengths and a terminated name.
 * Returns 0 or -EUCLEAN (text in fdr_shm_error()).
 */
int fdr_shm_check_instance(const struct fdr_abi_instance *in, uint32_t inst)
{
	int shift;

	if (in->state == FDR_INST_FREE)
		return 0;
	if (in->state != FDR_INST_LIVE)
		return fdr_shm_errorf("control: instance %u: state %u is neither %u nor %u", inst,
				      in->state, FDR_INST_FREE, FDR_INST_LIVE);
	if (!shm_has_nul(in->name, sizeof(in->name)))
		return fdr_shm_errorf("control: instance %u: name is not NUL-terminated", inst);
	if (in->clock >= FDR_CLOCK_NR)
		return fdr_shm_errorf("control: instance %u: clock %u is not below %u", inst,
				      in->clock, FDR_CLOCK_NR);
	shift = fdr_shm_log2(in->subbuf_size);
	if (shift < FDR_SHM_SUBBUF_SHIFT_MIN || shift > FDR_SHM_SUBBUF_SHIFT_MAX)
		return fdr_shm_errorf("control: instance %u: subbuf_size %u is not a power of two "
				      "in %u..%u",
				      inst, in->subbuf_size, 1u << FDR_SHM_SUBBUF_SHIFT_MIN,
				      1u << FDR_SHM_SUBBUF_SHIFT_MAX);
	if (in->nr_pids > FDR_MAX_PIDS)
		return fdr_shm_errorf("control: instance %u: nr_pids %u is above %u", inst,
				      in->nr_pids, FDR_MAX_PIDS);
	if (in->nr_pending > FDR_PENDING_RULES)
		return fdr_shm_errorf("control: instance %u: nr_pending %u is above %u", inst,
				      in->nr_pending, FDR_PENDING_RULES);
	return 0;
}

/**
 * fdr_shm_check_instance_ext - check a private copy of an instance's more fields
 * @x: the copy (struct fdr_abi_control.inst_ext[@inst])
 * @inst: its index, for the message
 *
 * Returns 0 or -EUCLEAN (text in fdr_shm_error()).
 */
int fdr_shm_check_instance_ext(const struct fdr_abi_instance_ext *x, uint32_t inst)
{
	if (x->nr_notrace_pids > FDR_MAX_PIDS)
		return fdr_shm_errorf("control: instance %u: nr_notrace_pids %u is above %u", inst,
				      x->nr_notrace_pids, FDR_MAX_PIDS);
	return 0;
}

/* Fixed sizes by kind; 0: any size the kind allows (checked below). */
static int shm_field_ok(const struct fdr_abi_field *f, uint32_t payload_size)
{
	switch (f->kind) {
	case FDR_KIND_INT:
		if (f->size != 1 && f->size != 2 && f->size != 4 && f->size != 8)
			return 0;
		break;
	case FDR_KIND_BOOL:
		if (f->size != 1)
			return 0;
		break;
	case FDR_KIND_STRING:
	case FDR_KIND_BYTES:
		if (f->size != 4)
			return 0;
		break;
	case FDR_KIND_ULONG_IP:
		if (f->size != 8)
			return 0;
		break;
	case FDR_KIND_CHARS:
	case FDR_KIND_ULONG_ARRAY:
		break;
	case FDR_KIND_ARRAY: /* count elements of 1, 2, 4 or 8 bytes */
		if (!f->count || f->count > 64 || f->size % f->count ||
		    (f->size / f->count != 1 && f->size / f->count != 2 &&
		     f->size / f->count != 4 && f->size / f->count != 8))
			return 0;
		break;
	case FDR_KIND_TAIL_CHARS:
		/* runs to the record's end: only its start must be in the fixed part */
		return f->offset <= payload_size;
	default:
		return 0;
	}
	return (uint32_t)f->offset + f->size <= payload_size;
}

/**
 * fdr_shm_check_event - check a private copy of a registry entry
 * @e: the copy
 * @slot: its registry slot, for the message
 *
 * A free entry is fine. A ready one needs terminated names and texts, at most
 * FDR_MAX_FIELDS fields each inside the fixed part with a size its kind allows,
 * and print arguments that name fields. Returns 0 or -EUCLEAN (text in
 * fdr_shm_error()).
 */
int fdr_shm_check_event(const struct fdr_abi_event *e, uint32_t slot)
{
	uint32_t i;

	if (e->state == FDR_EVENT_FREE)
		return 0;
	if (e->state != FDR_EVENT_READY)
		return fdr_shm_errorf("control: event slot %u: state %u is neither %u nor %u", slot,
				      e->state, FDR_EVENT_FREE, FDR_EVENT_READY);
	if (!shm_has_nul(e->system, sizeof(e->system)) || !shm_has_nul(e->name, sizeof(e->name)) ||
	    !e->system[0] || !e->name[0])
		return fdr_shm_errorf("control: event slot %u: system or name is empty or not "
				      "NUL-terminated",
				      slot);
	if (!shm_has_nul(e->print_fmt, sizeof(e->print_fmt)))
		return fdr_shm_errorf(
			"control: event %u (slot %u): print_fmt is not NUL-terminated", e->id,
			slot);
	if (e->probe > FDR_PROBE_RETURN)
		return fdr_shm_errorf("control: event %u (slot %u): probe kind %u is unknown",
				      e->id, slot, e->probe);
	if (e->nr_fields > FDR_MAX_FIELDS)
		return fdr_shm_errorf("control: event %u (slot %u): nr_fields %u is above %u",
				      e->id, slot, e->nr_fields, FDR_MAX_FIELDS);
	if (e->payload_size < 8 || e->payload_size > UINT16_MAX)
		return fdr_shm_errorf(
			"control: event %u (slot %u): payload_size %u is not in 8..%u", e->id, slot,
			e->payload_size, UINT16_MAX);
	for (i = 0; i < e->nr_fields; i++) {
		const struct fdr_abi_field *f = &e->fields[i];

		if (!shm_has_nul(f->name, sizeof(f->name)) ||
		    !shm_has_nul(f->type, sizeof(f->type)))
			return fdr_shm_errorf("control: event %u (slot %u): field %u: name or type "
					      "is not NUL-terminated",
					      e->id, slot, i);
		if (!shm_field_ok(f, e->payload_size))
			return fdr_shm_errorf(
				"control: event %u (slot %u): field %u (%s): kind %u, "
				"offset %u, size %u do not fit a payload of %u",
				e->id, slot, i, f->name, f->kind, f->offset, f->size,
				e->payload_size);
	}
	if (e->nr_print_args > FDR_PRINT_ARGS_MAX)
		return fdr_shm_errorf("control: event %u (slot %u): nr_print_args %u is above %u",
				      e->id, slot, e->nr_print_args, FDR_PRINT_ARGS_MAX);
	for (i = 0; i < e->nr_print_args; i++)
		if (e->print_args[i] >= e->nr_fields)
			return fdr_shm_errorf(
				"control: event %u (slot %u): print argument %u names "
				"field %u of %u",
				e->id, slot, i, e->print_args[i], e->nr_fields);
	return 0;
}

/**
 * fdr_shm_check_ring - copy and check the header of a ring file
 * @base: the mapping
 * @size: the file's size
 * @name: the file's name, for the message ("ring.0.0")
 * @h: the private copy, filled when it checks out
 *
 * Returns 0 or -EUCLEAN (text in fdr_shm_error()).
 */
int fdr_shm_check_ring(const void *base, uint64_t size, const char *name, struct fdr_abi_ring *h)
{
	uint64_t cpus_end;

	if (size < sizeof(*h))
		return fdr_shm_errorf("%s: file size %llu is smaller than its header (%zu)", name,
				      (unsigned long long)size, sizeof(*h));
	/* acquire: the creator stores the magic last (release) */
	h->magic = __atomic_load_n(&((const struct fdr_abi_ring *)base)->magic, __ATOMIC_ACQUIRE);
	memcpy(h, base, sizeof(*h));
	if (h->magic != FDR_ABI_MAGIC_RING)
		return fdr_shm_errorf("%s: magic %#llx is not %#llx", name,
				      (unsigned long long)h->magic,
				      (unsigned long long)FDR_ABI_MAGIC_RING);
	if (h->version != FDR_ABI_VERSION)
		return fdr_shm_errorf("%s: version %u is not %u", name, h->version,
				      FDR_ABI_VERSION);
	if (h->struct_size != sizeof(*h))
		return fdr_shm_errorf("%s: struct_size %u is not %zu", name, h->struct_size,
				      sizeof(*h));
	if (h->nr_cpus == 0 || h->nr_cpus > FDR_MAX_CPUS)
		return fdr_shm_errorf("%s: nr_cpus %u is not in 1..%u", name, h->nr_cpus,
				      FDR_MAX_CPUS);
	if (h->file_size != size)
		return fdr_shm_errorf("%s: file_size %llu is not the file's size %llu", name,
				      (unsigned long long)h->file_size, (unsigned long long)size);
	cpus_end = h->cpu_off + (uint64_t)FDR_RING_BUFS * h->nr_cpus * sizeof(struct fdr_abi_cpu);
	if ((h->cpu_off & 7) || h->cpu_off < sizeof(*h) || h->cpu_off > size || cpus_end > size)
		return fdr_shm_errorf(
			"%s: cpu_off %llu: %u CPU entries do not fit 8-aligned between "
			"the header and the end (%llu)",
			name, (unsigned long long)h->cpu_off, FDR_RING_BUFS * h->nr_cpus,
			(unsigned long long)size);
	return 0;
}

/**
 * fdr_shm_check_cpu - copy and check the geometry of buffer @bi of @cpu
 * @h: the ring header, a copy that fdr_shm_check_ring() passed
 * @base: the mapping
 * @name: the file's name, for the message
 * @g: the geometry, filled when it checks out
 *
 * The sub-buffer size must be a power of two in 4 KiB..1 MiB, at least 3 of them,
 * their data 8-aligned after the CPU entries and inside the file, the whole of
 * it addressable by head's 32-bit offset; the spare buffer (@bi 1) must have the
 * live one's geometry (@g holds it on entry then), since writers use one
 * geometry for both. Returns 0 or -EUCLEAN (text in fdr_shm_error()).
 */
int fdr_shm_check_cpu(const struct fdr_abi_ring *h, const void *base, const char *name,
		      uint32_t cpu, uint32_t bi, struct fdr_shm_geom *g)
{
	const struct fdr_abi_cpu *c =
		(const struct fdr_abi_cpu *)((const char *)base + h->cpu_off) +
		(size_t)bi * h->nr_cpus + cpu;
	uint64_t cpus_end = h->cpu_off + (uint64_t)FDR_RING_BUFS * h->nr_cpus * sizeof(*c);
	uint32_t ss = __atomic_load_n(&c->subbuf_size, __ATOMIC_RELAXED);
	uint32_t n = __atomic_load_n(&c->nr_subbufs, __ATOMIC_RELAXED);
	uint64_t doff = __atomic_load_n(&c->data_off, __ATOMIC_RELAXED);
	int shift = fdr_shm_log2(ss);

	if (shift < FDR_SHM_SUBBUF_SHIFT_MIN || shift > FDR_SHM_SUBBUF_SHIFT_MAX)
		return fdr_shm_errorf("%s: cpu %u buffer %u: subbuf_size %u is not a power of two "
				      "in %u..%u",
				      name, cpu, bi, ss, 1u << FDR_SHM_SUBBUF_SHIFT_MIN,
				      1u << FDR_SHM_SUBBUF_SHIFT_MAX);
	if (n < 3 || (uint64_t)n * ss > (1ull << 32) - ss)
		return fdr_shm_errorf("%s: cpu %u buffer %u: nr_subbufs %u is not in 3..%llu", name,
				      cpu, bi, n, ((1ull << 32) - ss) / ss);
	if ((doff & 7) || doff < cpus_end || doff > h->file_size ||
	    (uint64_t)n * ss > h->file_size - doff)
		return fdr_shm_errorf("%s: cpu %u buffer %u: data_off %llu: %u sub-buffers of %u "
				      "do not fit 8-aligned between the CPU entries (%llu) and the "
				      "end (%llu)",
				      name, cpu, bi, (unsigned long long)doff, n, ss,
				      (unsigned long long)cpus_end,
				      (unsigned long long)h->file_size);
	if (bi && (n != g->nr_subbufs || ss != g->subbuf_size))
		return fdr_shm_errorf("%s: cpu %u buffer 1: %u sub-buffers of %u, buffer 0 has %u "
				      "of %u",
				      name, cpu, n, ss, g->nr_subbufs, g->subbuf_size);
	g->subbuf_size = ss;
	g->nr_subbufs = n;
	g->shift = (uint32_t)shift;
	g->data_off = doff;
	return 0;
}

/**
 * fdr_shm_check_probes - check the header of the probes file mapped at @p, of
 * @size bytes: magic, ABI version, struct size, file size, where the per-CPU
 * hit counts are and how many rows (hits_off, hit_cpus). The slots are checked one by
 * one (fdr_shm_check_probe_slot()). Returns 0 or -EUCLEAN (text in
 * fdr_shm_error()).
 */
int fdr_shm_check_probes(const struct fdr_abi_probes *p, uint64_t size)
{
	uint64_t magic = __atomic_load_n(&p->magic, __ATOMIC_ACQUIRE);
	uint32_t version = p->version, ssize = p->struct_size;

	if (size < sizeof(*p))
		return fdr_shm_errorf("probes: file size %llu is smaller than %zu",
				      (unsigned long long)size, sizeof(*p));
	if (magic != FDR_ABI_MAGIC_PROBES)
		return fdr_shm_errorf("probes: magic 0x%llx, expected 0x%llx (not an fdr probes "
				      "file)",
				      (unsigned long long)magic,
				      (unsigned long long)FDR_ABI_MAGIC_PROBES);
	if (version != FDR_ABI_VERSION)
		return fdr_shm_errorf("probes: made by fdr ABI version %u, this is version %u",
				      version, FDR_ABI_VERSION);
	if (ssize != sizeof(*p))
		return fdr_shm_errorf("probes: struct_size %u, expected %zu", ssize, sizeof(*p));
	if (size < FDR_PROBES_FILE_SIZE)
		return fdr_shm_errorf("probes: file size %llu is smaller than %llu",
				      (unsigned long long)size,
				      (unsigned long long)FDR_PROBES_FILE_SIZE);
	if (p->hits_off != sizeof(*p))
		return fdr_shm_errorf("probes: hits_off %llu, expected %zu",
				      (unsigned long long)p->hits_off, sizeof(*p));
	if (p->hit_cpus > FDR_MAX_CPUS)
		return fdr_shm_errorf("probes: hit_cpus %u is above %u", p->hit_cpus, FDR_MAX_CPUS);
	return 0;
}

/**
 * fdr_shm_check_probe_slot - check a private copy of probe slot @idx
 *
 * A free slot is fine. A live one needs a registry index below FDR_MAX_EVENTS,
 * known flags, a non-empty absolute path and a line, both NUL-terminated, and
 * a program length in 1..FDR_PROBE_PROG_BYTES (the program itself:
 * fdr_fetch_check()). Returns 0 or -EUCLEAN (text in fdr_shm_error()).
 */
int fdr_shm_check_probe_slot(const struct fdr_abi_probe_slot *sl, uint32_t idx)
{
	if (sl->state == FDR_PROBE_SLOT_FREE)
		return 0;
	if (sl->state != FDR_PROBE_SLOT_LIVE)
		return fdr_shm_errorf("probes: slot %u: state %u is neither %u nor %u", idx,
				      sl->state, FDR_PROBE_SLOT_FREE, FDR_PROBE_SLOT_LIVE);
	if (sl->event_slot >= FDR_MAX_EVENTS)
		return fdr_shm_errorf("probes: slot %u: event slot %u is not below %u", idx,
				      sl->event_slot, FDR_MAX_EVENTS);
	if (sl->flags & ~FDR_PROBE_F_RETURN)
		return fdr_shm_errorf("probes: slot %u: unknown flags 0x%x", idx, sl->flags);
	if (!shm_has_nul(sl->path, sizeof(sl->path)) || sl->path[0] != '/')
		return fdr_shm_errorf("probes: slot %u: path is not an absolute path ending in a "
				      "NUL within %u bytes",
				      idx, FDR_PROBE_PATH_LEN);
	if (!shm_has_nul(sl->line, sizeof(sl->line)) || !sl->line[0])
		return fdr_shm_errorf("probes: slot %u: line is empty or not NUL-terminated "
				      "within %u bytes",
				      idx, FDR_PROBE_LINE_LEN);
	if (sl->prog_len == 0 || sl->prog_len > FDR_PROBE_PROG_BYTES)
		return fdr_shm_errorf("probes: slot %u: program length %u is not in 1..%u", idx,
				      sl->prog_len, FDR_PROBE_PROG_BYTES);
	return 0;
}
