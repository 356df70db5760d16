/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fdr-abi.h - the shared-memory layout of an fdr session.
 *
 * A session is a directory holding two kinds of files:
 *
 *   control            one struct fdr_abi_control: options, instances, the event
 *                      registry, pid->comm names, error logs, the control lock
 *   ring.<inst>.<gen>  one per instance: struct fdr_abi_ring, then per CPU a
 *                      struct fdr_abi_cpu and its sub-buffers
 *   probes             struct fdr_abi_probes: dynamic probe locations, made by
 *                      the first uprobe_events definition
 *
 * Every process that uses the session maps these files MAP_SHARED. Rules (see
 * docs/design/abi.md): fixed-width types only, every struct starts with its size,
 * fields are only ever added at the end, and readers treat every byte as hostile:
 * each offset and length is checked before use.
 *
 * A session is used only by an fdr of the same FDR_ABI_VERSION: another version
 * is refused at open, with both versions named (docs/design/abi.md).
 */
#ifndef FDR_ABI_H
#define FDR_ABI_H

#include <stddef.h>
#include <stdint.h>

#define FDR_ABI_MAGIC_CONTROL 0x4644524355ULL /* "FDRCU" */
#define FDR_ABI_MAGIC_RING 0x4644525249ULL /* "FDRRI" */
/*
 * The layout's version: a session made with another version is refused (by
 * fdr_shm_check_control(), naming both versions). 2: struct
 * fdr_abi_instance_ext (set_event_notrace_pid) appended to the control block.
 * 3: control.instances_bound and probes.slots_bound, so that scans of the
 * instances and probe slots stop where the used ones end, and a probe slot's
 * optimized count (reserved space). 4: the probes file's per-CPU hit counts
 * (probes.hit_cpus, probes.hits_off), so that a probe hit adds 1 without a
 * locked instruction. 5: control.events_bound, so that scans of the event
 * registry stop where the used slots end (nr_events counts registrations,
 * and grew past every slot in a session whose probes come and go).
 */
#define FDR_ABI_VERSION 5

#define FDR_MAX_INSTANCES 128 /* instance 0 is the top instance */
#define FDR_MAX_EVENTS 1024
#define FDR_MAX_FIELDS 32
#define FDR_MAX_CPUS 1024
#define FDR_NAME_LEN 64 /* instance, system and event names, NUL included */
#define FDR_FIELD_NAME_LEN 32
#define FDR_FIELD_TYPE_LEN 32
#define FDR_PRINT_FMT_LEN 256
#define FDR_PRINT_ARGS_MAX 16
#define FDR_CMDLINE_SLOTS 8192
#define FDR_COMM_LEN 16
#define FDR_ERROR_LOG_ENTRIES 8
#define FDR_ERROR_TEXT_LEN 480
#define FDR_PENDING_RULES 64
#define FDR_RULE_LEN 128
#define FDR_MAX_PIDS 32 /* set_event_pid, set_event_notrace_pid entries per instance */
#define FDR_MAX_HOLDERS 15 /* processes tracked as holding an instance's files open */
#define FDR_MAX_FILTERS 256 /* compiled filters, shared by all instances */
#define FDR_MAX_TRIGGERS 512
#define FDR_FILTER_TEXT_LEN 1024 /* the text, or the error block of a rejected one */
#define FDR_FILTER_PROG_BYTES 4096 /* = sizeof(struct fdr_filter_prog) */

/* Event ids: the kernel's ftrace:print is 5; ours keep it, user events start at 1000. */
#define FDR_EVENT_ID_PRINT 5
#define FDR_EVENT_ID_USER_STACK 12 /* the kernel's user_stack: stacktrace triggers */
#define FDR_STACK_DEPTH 8
#define FDR_EVENT_ID_FIRST_USER 1000

/* struct fdr_abi_field.kind */
enum fdr_abi_kind {
	FDR_KIND_INT = 1, /* signed or unsigned integer, 1, 2, 4 or 8 bytes */
	FDR_KIND_BOOL = 2, /* 1 byte */
	FDR_KIND_CHARS = 3, /* fixed char array, NUL-padded */
	FDR_KIND_STRING = 4, /* __data_loc char[]: u32 (len << 16 | offset) */
	FDR_KIND_BYTES = 5, /* __data_loc unsigned char[] */
	FDR_KIND_ULONG_IP = 6, /* ftrace:print ip */
	FDR_KIND_TAIL_CHARS = 7, /* ftrace:print char buf[], runs to the record's end */
	FDR_KIND_ULONG_ARRAY = 8, /* ftrace:user_stack unsigned long caller[N] */
	FDR_KIND_ARRAY = 9, /* probe argument TYPE NAME[]: count integers of size / count bytes */
};

/* struct fdr_abi_field.print: how a probe event's field prints (0 for other events) */
enum fdr_abi_print {
	FDR_PRINT_DEC = 0, /* %d / %u (%Ld / %Lu for 8 bytes) */
	FDR_PRINT_HEX = 1, /* 0x%x / 0x%Lx */
	FDR_PRINT_CHAR = 2, /* '%c' */
};

struct fdr_abi_field {
	char name[FDR_FIELD_NAME_LEN];
	char type[FDR_FIELD_TYPE_LEN]; /* C type as shown in the format file */
	uint16_t offset; /* from the start of the payload (common header included) */
	uint16_t size;
	uint8_t is_signed;
	uint8_t kind; /* enum fdr_abi_kind */
	uint8_t print; /* enum fdr_abi_print */
	uint8_t count; /* FDR_KIND_ARRAY: elements (1..64); else 0 */
};
_Static_assert(sizeof(struct fdr_abi_field) == 72, "fdr_abi_field layout");

/* struct fdr_abi_event.probe: a dynamic probe's event prints the kernel's way */
enum fdr_abi_probe {
	FDR_PROBE_NONE = 0,
	FDR_PROBE_ENTRY = 1, /* "(0x%lx) NAME=VALUE ..." */
	FDR_PROBE_RETURN = 2, /* "(0x%lx <- 0x%lx) NAME=VALUE ..." */
};

/* struct fdr_abi_event.state */
enum fdr_abi_event_state {
	FDR_EVENT_FREE = 0,
	FDR_EVENT_READY = 2,
};

/*
 * One registered event. Written once under the control lock, then only the
 * enable masks change (atomically, one bit per instance).
 */
struct fdr_abi_event {
	uint32_t state; /* enum fdr_abi_event_state */
	uint32_t id; /* common_type */
	/* id and enabled share a cache line: the event path reads both */
	uint64_t enabled[FDR_MAX_INSTANCES / 64]; /* bit i: enabled in instance i */
	uint64_t layout_hash; /* processes must agree on the layout to share the id */
	char system[FDR_NAME_LEN];
	char name[FDR_NAME_LEN];
	uint32_t nr_fields; /* user fields, after the 4 common ones */
	uint32_t payload_size; /* fixed part, common header included */
	char print_fmt[FDR_PRINT_FMT_LEN]; /* "" = default name=value print */
	uint8_t nr_print_args;
	uint8_t print_args[FDR_PRINT_ARGS_MAX]; /* field indexes for print_fmt's % */
	uint8_t probe; /* enum fdr_abi_probe */
	uint8_t reserved[6];
	struct fdr_abi_field fields[FDR_MAX_FIELDS];
};

_Static_assert(sizeof(struct fdr_abi_event) == 2752, "fdr_abi_event layout");

struct fdr_abi_cmdline {
	uint32_t pid; /* 0 = empty; written last (release) */
	char comm[FDR_COMM_LEN];
	uint32_t tgid;
};

struct fdr_abi_error {
	uint64_t ts_ns; /* CLOCK_MONOTONIC */
	uint32_t len; /* of text */
	uint32_t seq; /* 0 = empty slot */
	char text[FDR_ERROR_TEXT_LEN]; /* "location: error: msg\n  Command: ...\n   ^\n" */
};

/* Option bits in struct fdr_abi_instance.options */
enum fdr_abi_option {
	FDR_OPT_OVERWRITE = 1u << 0,
	FDR_OPT_RECORD_TGID = 1u << 1,
	FDR_OPT_IRQ_INFO = 1u << 2,
	FDR_OPT_CONTEXT_INFO = 1u << 3,
	FDR_OPT_MARKERS = 1u << 4,
	FDR_OPT_RECORD_CMD = 1u << 5,
	FDR_OPT_ANNOTATE = 1u << 6,
	FDR_OPT_PRINT_PARENT = 1u << 7,
	FDR_OPT_RAW = 1u << 8,
	FDR_OPT_HEX = 1u << 9,
	FDR_OPT_BIN = 1u << 10,
	FDR_OPT_EVENT_FORK = 1u << 11,
	FDR_OPT_DISABLE_ON_FREE = 1u << 12,
	FDR_OPT_PAUSE_ON_TRACE = 1u << 13,
	FDR_OPT_LATENCY_FORMAT = 1u << 14,
	FDR_OPT_STACKTRACE = 1u << 15,
	/* fdr's own (top instance): dynamic probes made jmps where safe (lib/probe/jump.c) */
	FDR_OPT_PROBE_OPTIMIZE = 1u << 16,
};

enum fdr_abi_clock {
	FDR_CLOCK_LOCAL = 0,
	FDR_CLOCK_GLOBAL = 1,
	FDR_CLOCK_MONO = 2,
	FDR_CLOCK_MONO_RAW = 3,
	FDR_CLOCK_BOOT = 4,
	FDR_CLOCK_X86_TSC = 5,
	FDR_CLOCK_COUNTER = 6,
	FDR_CLOCK_UPTIME = 7,
	FDR_CLOCK_PERF = 8,
	FDR_CLOCK_TAI = 9,
	FDR_CLOCK_NR
};

enum fdr_abi_instance_state {
	FDR_INST_FREE = 0,
	FDR_INST_LIVE = 1,
};

struct fdr_abi_instance {
	uint32_t state; /* enum fdr_abi_instance_state */
	uint32_t tracing_on; /* writers test this before reserving */
	char name[FDR_NAME_LEN]; /* "" for the top instance */
	uint32_t options; /* enum fdr_abi_option bits */
	uint32_t clock; /* enum fdr_abi_clock, used by readers only */
	uint32_t ring_gen; /* current file is ring.<index>.<ring_gen> */
	uint32_t subbuf_size; /* bytes, power of two >= 4096 */
	uint32_t buffer_percent;
	uint32_t open_files; /* handles held by processes beyond holders[] (rmdir EBUSY) */
	uint64_t cpumask[FDR_MAX_CPUS / 64]; /* tracing_cpumask */
	uint32_t nr_pending; /* rules applied to events registered later */
	uint32_t error_seq;
	char pending[FDR_PENDING_RULES][FDR_RULE_LEN];
	struct fdr_abi_error errors[FDR_ERROR_LOG_ENTRIES];
	uint32_t nr_pids; /* set_event_pid: 0 = every pid records */
	/*
	 * buffer_size_kb as last written for the whole instance, rounded up to
	 * the capacity of the sub-buffers of that moment, as the kernel reads it
	 * (0: not known): a change of sub-buffer size keeps it, as the kernel
	 * does, where the capacity of the new geometry would round again.
	 */
	uint32_t size_kb;
	int32_t pids[FDR_MAX_PIDS]; /* in any order; a writer's tid or tgid must be listed */
	struct {
		uint32_t pid; /* a process holding files of this instance open */
		uint32_t count; /* how many */
	} holders[FDR_MAX_HOLDERS]; /* protected by the control lock */
	uint8_t reserved[248 - 4 * FDR_MAX_PIDS - 8 * FDR_MAX_HOLDERS];
};

/*
 * More per-instance fields, in struct fdr_abi_control.inst_ext[] (struct
 * fdr_abi_instance has no room left): 256 bytes per instance, of which
 * reserved[] is for fields added later.
 */
#define FDR_INST_EXT_SIZE 256
struct fdr_abi_instance_ext {
	/*
	 * set_event_notrace_pid: a writer whose tid or tgid is listed records
	 * nothing in the instance. Entries in any order (the file lists them
	 * ascending); the list only grows at its end while writers may read it,
	 * and an entry is removed by moving the last one into its place first.
	 */
	uint32_t nr_notrace_pids;
	uint32_t reserved0;
	int32_t notrace_pids[FDR_MAX_PIDS];
	uint8_t reserved[FDR_INST_EXT_SIZE - 8 - 4 * FDR_MAX_PIDS];
};
_Static_assert(sizeof(struct fdr_abi_instance_ext) == FDR_INST_EXT_SIZE,
	       "fdr_abi_instance_ext layout");

/*
 * What runs in the writer besides recording, per event and instance: a filter
 * (a compiled program; a record that does not match is not written) and a list
 * of triggers (run after the record is committed, even if the event is not
 * enabled in that instance). A slot is never changed while it can be in use: a
 * change writes a fresh slot and publishes its index; a freed slot is reused
 * only after FDR_HOOK_GRACE_NS, longer than any writer holds one.
 */
#define FDR_HOOK_GRACE_NS (2ull * 1000 * 1000 * 1000)

struct fdr_abi_hooks {
	uint64_t filtered[FDR_MAX_INSTANCES / 64]; /* bit i: filter[i] is set */
	uint64_t triggered[FDR_MAX_INSTANCES / 64]; /* bit i: trigger[i] is set */
	uint64_t soft[FDR_MAX_INSTANCES / 64]; /* armed by a trigger (shows as '*') */
	uint16_t filter[FDR_MAX_INSTANCES]; /* filter slot + 1, 0 = none */
	uint16_t trigger[FDR_MAX_INSTANCES]; /* first trigger slot + 1 (newest first) */
	uint16_t filter_err[FDR_MAX_INSTANCES]; /* a rejected filter's text, slot + 1 */
};

enum fdr_abi_slot_state {
	FDR_SLOT_FREE = 0,
	FDR_SLOT_USED = 1,
};

struct fdr_abi_filter {
	uint32_t state; /* enum fdr_abi_slot_state */
	uint32_t event_slot;
	uint64_t freed_ns; /* CLOCK_MONOTONIC when freed */
	char text[FDR_FILTER_TEXT_LEN]; /* as written, for the filter file */
	uint8_t prog[FDR_FILTER_PROG_BYTES]; /* struct fdr_filter_prog */
};

enum fdr_abi_trigger_cmd {
	FDR_TRIG_TRACEON = 1,
	FDR_TRIG_TRACEOFF = 2,
	FDR_TRIG_SNAPSHOT = 3,
	FDR_TRIG_STACKTRACE = 4,
	FDR_TRIG_ENABLE_EVENT = 5,
	FDR_TRIG_DISABLE_EVENT = 6,
};

struct fdr_abi_trigger {
	uint32_t state; /* enum fdr_abi_slot_state */
	uint32_t next; /* next trigger of the same event and instance, slot + 1 */
	uint32_t cmd; /* enum fdr_abi_trigger_cmd */
	int32_t count; /* remaining fires, -1 = unlimited; decremented atomically */
	uint32_t target; /* enable/disable_event: the target's event slot */
	uint32_t filter; /* "if FILTER": filter slot + 1, 0 = always */
	uint64_t freed_ns;
};

/* struct fdr_abi_control.ts_source */
enum fdr_abi_ts_source {
	FDR_TS_TSC = 1, /* record timestamps are raw rdtsc values */
	FDR_TS_MONO = 2, /* record timestamps are CLOCK_MONOTONIC ns */
};

/* control.state */
enum fdr_abi_session_state {
	FDR_SESSION_LIVE = 1,
	FDR_SESSION_DESTROYED = 2,
};

struct fdr_abi_control {
	uint32_t struct_size;
	uint32_t version;
	uint64_t magic;
	uint32_t state; /* enum fdr_abi_session_state */
	uint32_t nr_cpus; /* rings have this many CPUs; cpu ids above are dropped */
	uint32_t gen; /* bumped (and futex-woken) after every control change */
	uint32_t ts_source; /* enum fdr_abi_ts_source */
	uint64_t session_id; /* random; tells a recreated session from the old one */
	uint64_t created_mono_ns;
	/* calibration point taken at creation: the same instant on each clock */
	uint64_t cal_tsc;
	uint64_t cal_mono_ns;
	uint64_t cal_boot_ns;
	uint64_t cal_real_ns;
	uint64_t tsc_khz; /* measured at creation over 50 ms; fixed for the session's life */
	uint32_t next_event_id;
	uint32_t creator_pid;
	uint8_t lock[64]; /* pthread_mutex_t, robust + process-shared */
	uint32_t nr_events;
	uint32_t cmdline_size; /* saved_cmdlines_size */
	uint64_t dropped_no_slot; /* events dropped: cpu id beyond nr_cpus etc. */
	uint32_t instances_bound; /* instances at this index and above are free (version 3) */
	uint32_t events_bound; /* registry slots at this index and above are free (version 5) */
	uint64_t reserved3;
	char boot_id[40]; /* /proc/sys/kernel/random/boot_id of the creating boot */
	uint32_t hooks_active; /* filters + triggers + pid lists in the session; 0 = fast path */
	uint32_t pids_active; /* some instance checks each writer (pid lists, cpumask, ...) */
	uint8_t reserved0[3856];
	struct fdr_abi_instance instances[FDR_MAX_INSTANCES];
	struct fdr_abi_event events[FDR_MAX_EVENTS];
	struct fdr_abi_cmdline cmdlines[FDR_CMDLINE_SLOTS];
	/* filters and triggers: per event, per instance; see lib/core/hooks.c */
	struct fdr_abi_hooks hooks[FDR_MAX_EVENTS];
	struct fdr_abi_filter filters[FDR_MAX_FILTERS];
	struct fdr_abi_trigger triggers[FDR_MAX_TRIGGERS];
	/* ABI version 2 */
	struct fdr_abi_instance_ext inst_ext[FDR_MAX_INSTANCES];
};
_Static_assert(sizeof(struct fdr_abi_cmdline) == 24 && sizeof(struct fdr_abi_error) == 496 &&
		       offsetof(struct fdr_abi_control, instances) == 4096,
	       "fdr_abi_control layout");

/*
 * Ring files.
 *
 * Per CPU: a struct fdr_abi_cpu (control words, each on its own cache line), then
 * nr_subbufs sub-buffers of subbuf_size bytes. Each sub-buffer starts with a
 * struct fdr_abi_subbuf header, then records. A record is a struct fdr_abi_rec
 * header, then the event payload (the kernel's 8-byte common header + fields),
 * padded to 8 bytes. A FDR_REC_PAD record fills the unused end of a sub-buffer.
 *
  * head = switch_gen << 48 | nrec << 32 | data_off: data_off is the byte offset in
 * the CPU's data area where the next record goes, nrec the number of records in
 * the current sub-buffer. See lib/core/ring.c for the protocol.
 */
#define FDR_REC_DATA 1u
#define FDR_REC_PAD 2u
#define FDR_REC_LEN_MASK 0x00ffffffu
#define FDR_REC_TYPE_SHIFT 24

struct fdr_abi_rec {
	uint32_t len_type; /* len (bytes, header included, multiple of 8) | type << 24 */
	uint32_t reserved;
	uint64_t ts; /* raw timestamp, see control.ts_source */
};
_Static_assert(sizeof(struct fdr_abi_rec) == 16, "fdr_abi_rec layout");

struct fdr_abi_subbuf {
	uint64_t pos; /* linear position of this sub-buffer's first byte on its CPU */
	uint64_t cum; /* records written on this CPU before this sub-buffer */
	uint64_t cal_tsc; /* calibration point taken when the sub-buffer began */
	uint64_t cal_mono_ns;
	uint64_t cal_boot_ns;
	uint64_t reserved;
};
#define FDR_SUBBUF_HDR 48
_Static_assert(sizeof(struct fdr_abi_subbuf) == FDR_SUBBUF_HDR, "fdr_abi_subbuf layout");

struct fdr_abi_cpu {
	/* writer line: changed only inside rseq critical sections on this CPU */
	uint64_t head;
	/*
	 * The header of the sub-buffer head is in, mirrored here by step 2 of a
	 * switch inside its rseq section, so a snapshot swap reads it from this
	 * (hot) line instead of the data area: a seqlock, tag_a written first and
	 * tag_b last, both the head value step 2 stored. Valid when tag_b, then pos
	 * and cum, then tag_a read the same tag (see lib/core/ring.c).
	 */
	uint64_t hdr_tag_a;
	uint64_t hdr_pos;
	uint64_t hdr_cum;
	uint64_t hdr_tag_b;
	uint8_t pad0[24];
	/* reader line */
	uint64_t consumed; /* linear position up to which a consuming reader read */
	uint64_t consumed_cum; /* records consumed or overrun up to 'consumed' */
	uint64_t read_events; /* records delivered by consuming reads */
	uint64_t overrun; /* records lost to overwrite before a consuming read */
	uint64_t base_cum; /* record count at the last clear */
	uint32_t reader_pid; /* holder of the consuming-reader slot, 0 = none */
	uint32_t reserved1;
	uint64_t lost_pending; /* overrun not yet reported as a LOST line */
	uint8_t pad1[8];
	/* counters, any thread, atomic adds */
	uint64_t dropped; /* refused: buffer full in discard mode */
	uint64_t too_big; /* refused: record larger than a sub-buffer */
	uint64_t nested; /* refused: nesting deeper than FDR_MAX_NESTING */
	uint64_t commit_overrun; /* always 0: kept for the stats file layout */
	uint8_t pad2[32];
	/* layout: written once at creation */
	uint32_t nr_subbufs;
	uint32_t subbuf_size;
	uint64_t data_off; /* from the start of the ring file */
	/* snapshot, meaningful in the buffer-0 entry of each CPU only */
	uint32_t active; /* which of the CPU's two buffers writers use (0/1) */
	uint32_t reserved2;
	uint64_t swap_ns; /* lease clock (fdr_session_lease_ns) of the last swap on this CPU */
	uint8_t pad3[32];
};
_Static_assert(sizeof(struct fdr_abi_cpu) == 256, "fdr_abi_cpu layout");

/*
 * A ring file holds two buffers per CPU: the live one and the spare that a
 * snapshot swaps in (docs/tracefs.md, Snapshots). The fdr_abi_cpu array has 2 * nr_cpus entries:
 * buffer b of CPU c is entry b * nr_cpus + c. The spare's data is reserved in the
 * file but only backed by memory while the snapshot is allocated.
 */
#define FDR_RING_BUFS 2

struct fdr_abi_ring {
	uint32_t struct_size;
	uint32_t version;
	uint64_t magic;
	uint64_t file_size;
	uint32_t nr_cpus;
	uint32_t instance;
	uint32_t gen;
	uint32_t subbuf_size;
	uint64_t cpu_off; /* offset of the fdr_abi_cpu array (2 * nr_cpus entries) */
	uint32_t spare_allocated; /* the snapshot buffers are backed by memory */
	uint32_t reserved0;
	uint64_t snap_seq; /* odd while a swap is in progress; + 2 per snapshot */
	uint64_t snap_lock_ns; /* lease clock when the swap in progress began */
	uint64_t snap_count; /* snapshots taken */
	uint64_t snap_refused; /* snapshots refused: not allocated, busy, or not saved yet */
	uint32_t saver_pid; /* a "fdr snapshot save" process keeps every snapshot */
	uint32_t reserved1;
	uint64_t saver_beat_ns; /* lease clock, refreshed by the saver every 100 ms */
	uint64_t saved_seq; /* the snap_seq the saver has written out */
	uint8_t reserved[16];
};
_Static_assert(sizeof(struct fdr_abi_ring) == 128, "fdr_abi_ring layout");

/*
 * The probes file: dynamic probe locations (uprobe_events), one file per session,
 * "probes", created whole (fallocated) by the first definition. The control side
 * (lib/ctl: the uprobe_events and dynamic_events files) is its only writer, under
 * the session's control lock; the probe agent in each traced process
 * (libfdr-probe) reads it and arms, in its own process, each live location whose
 * event is enabled in some instance and whose file (dev, ino) it maps executable.
 *
 * A change to a slot: state = FREE (release), the fields, gen + 1, state = LIVE
 * (release); then probes.gen + 1 (release) and the control block's gen (the
 * agents' wake-up, fdr_session_changed()). A reader copies a slot, then checks
 * state and gen again (seqlock-like); every field is checked before use
 * (fdr_shm_check_probe_slot(); the program with fdr_fetch_check()).
 *
 * Several slots may name the same event_slot: one event with several locations
 * (the kernel's multi-probe events). hits and misses are added by every process
 * that hits the location (relaxed atomics): uprobe_profile's figures.
 *
 * Per-CPU hit counts (version 4): after the struct, at hits_off, hit_cpus rows
 * of FDR_MAX_PROBES uint64_t, row c for CPU c (FDR_PROBE_HITS_ROW bytes each,
 * so no two CPUs share a cache line), counter i of a row for slot i. A process
 * on CPU c adds 1 to row c's counter inside a restartable sequence (the kernel
 * restarts it if the thread is preempted or migrated before the add), so the
 * add needs no lock prefix and processes never race on a counter; a hit on a
 * CPU at or above hit_cpus, or where the process has no rseq area, is added to
 * the slot's hits instead. A location's hits are hits plus its counter in every
 * row; the definition zeroes them all before the slot goes live. hit_cpus is
 * the control block's nr_cpus at creation; hits_off is sizeof(struct
 * fdr_abi_probes). The file is FDR_PROBES_FILE_SIZE bytes (rows for
 * FDR_MAX_CPUS CPUs), allocated up to the end of row hit_cpus - 1 (stores into
 * a shared mapping of a full tmpfs must not find a hole), the rest a hole never
 * written.
 */
#define FDR_ABI_MAGIC_PROBES 0x4644525042ULL /* "FDRPB" */
#define FDR_MAX_PROBES 256 /* probe locations per session */
#define FDR_PROBE_PATH_LEN 256 /* path of the probed file, NUL included */
#define FDR_PROBE_LINE_LEN 2048 /* the definition as uprobe_events reads it back */
#define FDR_PROBE_PROG_BYTES 4096 /* the compiled fetch program (lib/probe/fetch.h) */
#define FDR_PROBE_HITS_ROW (FDR_MAX_PROBES * 8) /* bytes of one CPU's hit counts */

enum fdr_abi_probe_state {
	FDR_PROBE_SLOT_FREE = 0,
	FDR_PROBE_SLOT_LIVE = 1,
};

#define FDR_PROBE_F_RETURN 1u /* a return probe (r: / %return) */

struct fdr_abi_probe_slot {
	uint32_t state; /* enum fdr_abi_probe_state; written last (release) */
	uint32_t gen; /* bumped at every change of this slot */
	uint32_t event_slot; /* registry index (control.events) of the event it records */
	uint32_t flags; /* FDR_PROBE_F_* */
	uint64_t offset; /* file offset of the probed instruction in path */
	uint64_t ref_ctr_offset; /* SDT semaphore's file offset; 0 = none */
	uint64_t dev; /* st_dev of path when defined: mappings are matched by (dev, ino) */
	uint64_t ino; /* st_ino */
	uint64_t hits; /* uprobe_profile: hits, all processes */
	uint64_t misses; /* hits not recorded (ring full, nested hit, bad slot) */
	char path[FDR_PROBE_PATH_LEN];
	char line[FDR_PROBE_LINE_LEN]; /* normalised definition, NUL-terminated */
	uint32_t prog_len; /* bytes of prog used */
	uint32_t optimized; /* locations in jump form now, all processes (agents add and take 1) */
	uint64_t reserved2[4];
	unsigned char prog[FDR_PROBE_PROG_BYTES]; /* struct fdr_fetch_prog */
};

struct fdr_abi_probes {
	uint32_t struct_size;
	uint32_t version; /* FDR_ABI_VERSION */
	uint64_t magic; /* FDR_ABI_MAGIC_PROBES, stored last at creation */
	uint32_t gen; /* bumped (release) after every change of a slot */
	uint32_t nr_live; /* live slots (a hint: 0 = no probe, nothing to arm) */
	uint32_t slots_bound; /* slots at this index and above were never used (version 3) */
	uint32_t hit_cpus; /* rows of per-CPU hit counts at hits_off (version 4) */
	uint64_t hits_off; /* where they start: sizeof(struct fdr_abi_probes) */
	uint64_t reserved[3];
	struct fdr_abi_probe_slot probes[FDR_MAX_PROBES];
};
_Static_assert(sizeof(struct fdr_abi_probe_slot) == 6504 &&
		       offsetof(struct fdr_abi_probes, probes) == 64 &&
		       sizeof(struct fdr_abi_probes) % 64 == 0,
	       "fdr_abi_probes layout");
#define FDR_PROBES_FILE_SIZE \
	(sizeof(struct fdr_abi_probes) + (uint64_t)FDR_MAX_CPUS * FDR_PROBE_HITS_ROW)

#endif /* FDR_ABI_H */
