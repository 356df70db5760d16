// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * fuzz-session.c - a hostile control file, opened as writers and readers open it.
 *
 * At start-up we make a session with two events registered (every field kind),
 * the top instance and instances/a, records in both rings, and keep a copy of
 * its valid control file. Each input is laid over the parts of that image
 * that opening and reading a session use, then written to the file:
 *
 *   input[0, 4096)            -> the header page (struct fdr_abi_control up to
 *                                the instances: identity, CPUs, clock, counts)
 *   input[4096, 4096 + 2 * I) -> instances[0] and [1] (I = their size)
 *   then                      -> events[0..7] (the built-in events and ours)
 *
 * (bytes the input does not cover keep the valid image), and we run
 * fdr_session_open() (fdr_shm_check_control()), then on each instance the
 * readers (fdr_shm_check_instance(), the registry entries through
 * fdr_trace_open_session() and fdr_shm_check_event(), every record formatted),
 * stats, fdr_tracedat_page_size() and a writer's map of the rings. Nothing may
 * crash, hang or read out of bounds.
 */
#include "fuzz.h"

#include <sys/mman.h>

#include "core/core-local.h"
#include "fdr/fdr-trace.h"
#include "fdr/fdr-tracedat.h"

#define FS_INST_OFF offsetof(struct fdr_abi_control, instances)
#define FS_INST_LEN (2 * sizeof(struct fdr_abi_instance))
#define FS_EV_OFF offsetof(struct fdr_abi_control, events)
#define FS_EV_LEN (8 * sizeof(struct fdr_abi_event))
#define FS_MAX (FS_INST_OFF + FS_INST_LEN + FS_EV_LEN)

static char fs_dir[PATH_MAX];
static unsigned char *fs_image; /* the valid control file */
static size_t fs_size;
static int fs_fd = -1; /* the session's control file */
static struct fdr_session *fs_creator; /* kept open (and reachable) for the whole run */

static void fs_write_records(struct fdr_session *s, uint32_t inst, uint32_t id)
{
	unsigned char p[256], rec[16 + 256] __attribute__((aligned(8)));
	unsigned char bytes[4] = { 1, 2, 3, 4 };
	struct fdr_ring_map *m;
	uint32_t len, total, lt;
	int i, err = 0;

	m = fdr_session_ring_map(s, inst, &err);
	if (!m)
		return;
	for (i = 0; i < 40; i++) {
		len = fz_payload_all(p, (uint16_t)id, 42, "fuzz", bytes, (uint16_t)(i % 4));
		total = (uint32_t)((16 + len + 7) & ~7u);
		memset(rec, 0, sizeof(rec));
		lt = total | FDR_REC_DATA << FDR_REC_TYPE_SHIFT;
		memcpy(rec, &lt, 4);
		memcpy(rec + 16, p, len);
		fdr_ring_write(s, inst, m, rec, total);
	}
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct fdr_session_opts o = { .buffer_size_kb = 8, .subbuf_size = 4096, .overwrite = 1 };
	struct fdr_session *s;
	struct fdr_abi_event e;
	struct stat st;
	uint32_t id, inst = 0;
	char path[PATH_MAX + 16];

	(void)argc;
	(void)argv;
	if (fs_image)
		return 0;
	s = fs_creator = fz_session_create(&o);
	snprintf(fs_dir, sizeof(fs_dir), "%s", fdr_session_path(s));
	fz_event_all(&e, "all", 0);
	id = fz_register(s, &e);
	fz_event_all(&e, "custom", 1);
	fz_register(s, &e);
	if (fdr_session_lock(s) == 0) {
		fdr_session_instance_new(s, "a", &inst);
		fdr_session_unlock(s);
	}
	fs_write_records(s, 0, id);
	if (inst)
		fs_write_records(s, inst, id);
	snprintf(path, sizeof(path), "%s/control", fs_dir);
	fs_fd = open(path, O_RDWR | O_CLOEXEC);
	if (fs_fd < 0 || fstat(fs_fd, &st)) {
		fprintf(stderr, "fuzz-session: no control file\n");
		exit(2);
	}
	fs_size = (size_t)st.st_size;
	fs_image = malloc(fs_size);
	if (!fs_image || pread(fs_fd, fs_image, fs_size, 0) != (ssize_t)fs_size) {
		fprintf(stderr, "fuzz-session: cannot read the control file\n");
		exit(2);
	}
	/* the creator's session stays open: its lock and mappings are not ours to free */
	return 0;
}

/* Lay @data over the image's fuzzed parts in the file (or put the image back: NULL). */
static void fs_load(const uint8_t *data, size_t size)
{
	static const struct {
		size_t off, len;
	} part[] = {
		{ 0, FS_INST_OFF },
		{ FS_INST_OFF, FS_INST_LEN },
		{ FS_EV_OFF, FS_EV_LEN },
	};
	size_t at = 0, i;

	for (i = 0; i < sizeof(part) / sizeof(part[0]); i++) {
		size_t n = part[i].len;

		if (pwrite(fs_fd, fs_image + part[i].off, n, (off_t)part[i].off) != (ssize_t)n)
			return;
		if (data && at < size) {
			n = size - at < n ? size - at : n;
			if (pwrite(fs_fd, data + at, n, (off_t)part[i].off) != (ssize_t)n)
				return;
		}
		at += part[i].len;
	}
}

static void fs_drain(struct fdr_trace *t)
{
	struct fdr_buf b = { 0 };
	struct fdr_trace_rec rec;
	size_t i;
	int n;

	for (i = 0; i < fdr_trace_nr_events(t) && i < 64; i++)
		fdr_trace_event_at(t, i);
	for (n = 0; n < 5000 && fdr_trace_next(t, &rec) > 0; n++) {
		fdr_trace_format(t, &rec, &b);
		if (b.len > 65536)
			b.len = 0;
	}
	fdr_buf_free(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fdr_session *s;
	uint32_t inst;

	if (!fs_image)
		LLVMFuzzerInitialize(NULL, NULL);
	if (size > FS_MAX)
		size = FS_MAX;
	fs_load(data, size);
	if (fdr_session_open(fs_dir, &s) == 0) {
		for (inst = 0; inst < 2; inst++) {
			struct fdr_trace *t;
			struct fdr_reader *r;
			struct fdr_cpu_stats st;
			struct fdr_ring_map *m;
			int err;

			if (fdr_trace_open_session(s, inst, 0, &t) == 0) {
				fs_drain(t);
				fdr_trace_close(t);
			}
			if (fdr_reader_open(s, inst, -1, FDR_READ_SNAPSHOT, &r) == 0)
				fdr_reader_close(r);
			fdr_ring_stats(s, inst, 0, &st);
			fdr_tracedat_page_size(s, inst);
			/* the writer's map, as the agent makes it for a live instance */
			m = fdr_session_ring_map(s, inst, &err);
			(void)m;
		}
		fdr_session_close(s);
	}
	fs_load(NULL, 0);
	return 0;
}

/* Store @v (@size bytes) at @off of a seed. */
static void fs_put(unsigned char *in, size_t off, uint64_t v, size_t size)
{
	memcpy(in + off, &v, size);
}

#define FS_CTL(f) offsetof(struct fdr_abi_control, f)
#define FS_I0(f) (FS_INST_OFF + offsetof(struct fdr_abi_instance, f))
#define FS_EV(i, f)                                                       \
	(FS_INST_OFF + FS_INST_LEN + (i) * sizeof(struct fdr_abi_event) + \
	 offsetof(struct fdr_abi_event, f))

/* Seeds: the valid image's parts, and a few states a corrupting writer leaves. */
int fdr_fuzz_write_seeds(const char *dir)
{
	static unsigned char in[FS_MAX];
	uint64_t khz;
	int ret = 0;

	LLVMFuzzerInitialize(NULL, NULL);
	memcpy(in, fs_image, FS_INST_OFF);
	memcpy(in + FS_INST_OFF, fs_image + FS_INST_OFF, FS_INST_LEN);
	memcpy(in + FS_INST_OFF + FS_INST_LEN, fs_image + FS_EV_OFF, FS_EV_LEN);
	memcpy(&khz, in + FS_CTL(tsc_khz), sizeof(khz));
	ret |= fz_write_file(dir, "valid", in, FS_MAX);
	fs_put(in, FS_CTL(nr_cpus), 0x80000001u, 4);
	ret |= fz_write_file(dir, "nr-cpus-2g", in, FS_INST_OFF);
	fs_put(in, FS_CTL(nr_cpus), 2, 4);
	fs_put(in, FS_CTL(tsc_khz), 0, 8);
	ret |= fz_write_file(dir, "tsc-khz-0", in, FS_INST_OFF);
	fs_put(in, FS_CTL(tsc_khz), khz, 8);
	fs_put(in, FS_I0(subbuf_size), 0x80000001u, 4);
	ret |= fz_write_file(dir, "instance-subbuf-2g", in, FS_INST_OFF + FS_INST_LEN);
	fs_put(in, FS_I0(subbuf_size), 4096, 4);
	fs_put(in, FS_I0(clock), 0xffffffffu, 4);
	ret |= fz_write_file(dir, "instance-clock", in, FS_INST_OFF + FS_INST_LEN);
	fs_put(in, FS_I0(clock), 0, 4);
	fs_put(in, FS_EV(6, nr_fields), 0xffffffffu, 4);
	fs_put(in, FS_EV(7, fields[1].offset), 0xfff0, 2);
	fs_put(in, FS_EV(7, print_args[0]), 200, 1);
	ret |= fz_write_file(dir, "events-bad", in, FS_MAX);
	return ret;
}
