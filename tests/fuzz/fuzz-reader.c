// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * fuzz-reader.c - the reader fed a hostile ring file.
 *
 * At start-up we create a session, register two events (every field kind; the
 * default and a custom print) and put our own ring file in place of ring.0.0: 2
 * CPUs, each with its live and its snapshot buffer (FDR_RING_BUFS) of 3
 * sub-buffers of 4 KiB, filled with valid records (see fz_build). The session maps
 * it once. Each input is then copied over that mapping:
 *
 *   input[0, 1152)   -> file[0, 1152)     struct fdr_abi_ring + the 4 fdr_abi_cpu
 *   input[1152, ...) -> file[4096, ...)   the sub-buffers
 *
 * (bytes the input does not cover keep the valid image; magic, version and
 * file_size are forced so that inputs get past the first check), and we run
 * everything that reads a ring: non-consuming and consuming readers on all CPUs
 * with the text formatter on each record, the same on the snapshot buffers,
 * fdr_ring_stats, the raw page format, fdr_reader_wait, fdr_ring_clear. None may
 * crash, hang or read out of bounds.
 */
#include "fuzz.h"

#include <sys/mman.h>

#define FZ_CPUS 2u
#define FZ_NSUB 3u
#define FZ_SS 4096u
#define FZ_DATA 4096u
#define FZ_ENTRIES (FDR_RING_BUFS * FZ_CPUS)
#define FZ_SIZE (FZ_DATA + FZ_ENTRIES * FZ_NSUB * FZ_SS)
#define FZ_HEAD_BYTES (sizeof(struct fdr_abi_ring) + FZ_ENTRIES * sizeof(struct fdr_abi_cpu))
#define FZ_MAX_INPUT (FZ_HEAD_BYTES + FZ_ENTRIES * FZ_NSUB * FZ_SS)

static struct fdr_session *fz_s;
static unsigned char *fz_ring; /* the session's mapping of ring.0.0 */
static unsigned char fz_image[FZ_SIZE]; /* the valid image */
static uint32_t fz_id_all, fz_id_custom;
static int fz_verbose; /* FDR_FUZZ_VERBOSE=1: counts on stderr; 2: the text too */

/* ---- a valid ring image ----------------------------------------------------------------- */

/* The fdr_abi_cpu of buffer @bi of @cpu (entry bi * nr_cpus + cpu, see fdr-abi.h). */
static struct fdr_abi_cpu *fz_cpu(unsigned char *img, uint32_t bi, uint32_t cpu)
{
	return (struct fdr_abi_cpu *)(img + sizeof(struct fdr_abi_ring)) + bi * FZ_CPUS + cpu;
}

static unsigned char *fz_sub(unsigned char *img, uint32_t bi, uint32_t cpu, uint32_t slot)
{
	return img + FZ_DATA + ((bi * FZ_CPUS + cpu) * FZ_NSUB + slot) * FZ_SS;
}

/* Start sub-buffer @slot at linear position @pos with @cum records before it. */
static void fz_sub_begin(unsigned char *img, uint32_t bi, uint32_t cpu, uint32_t slot, uint64_t pos,
			 uint64_t cum)
{
	struct fdr_abi_subbuf *h = (void *)fz_sub(img, bi, cpu, slot);

	memset(h, 0, FZ_SS);
	h->pos = pos;
	h->cum = cum;
	h->cal_tsc = 1000000 + pos;
	h->cal_mono_ns = 5000000000ull + pos;
	h->cal_boot_ns = 6000000000ull + pos;
}

/* Append a record at *off in a sub-buffer; returns 0, or -1 if it does not fit. */
static int fz_put(unsigned char *sb, uint32_t *off, const void *payload, uint32_t len, uint64_t ts)
{
	struct fdr_abi_rec r;
	uint32_t total = (uint32_t)((sizeof(r) + len + 7) & ~7u);

	if (*off + total > FZ_SS)
		return -1;
	memset(&r, 0, sizeof(r));
	r.len_type = total | FDR_REC_DATA << FDR_REC_TYPE_SHIFT;
	r.ts = ts;
	memcpy(sb + *off, &r, sizeof(r));
	memcpy(sb + *off + sizeof(r), payload, len);
	*off += total;
	return 0;
}

/* Close a sub-buffer with a padding record. */
static void fz_pad(unsigned char *sb, uint32_t off)
{
	struct fdr_abi_rec r;

	if (off + sizeof(r) > FZ_SS)
		return;
	memset(&r, 0, sizeof(r));
	r.len_type = (FZ_SS - off) | FDR_REC_PAD << FDR_REC_TYPE_SHIFT;
	memcpy(sb + off, &r, sizeof(r));
}

/* A mix of records: both user events and trace_marker's ftrace:print. Returns the count. */
static uint32_t fz_fill(unsigned char *sb, uint32_t *off, uint32_t n, uint64_t *ts, uint32_t salt)
{
	unsigned char p[512];
	uint32_t i, len, done = 0;

	for (i = 0; i < n; i++) {
		unsigned char bytes[8] = { 1, 2, 3, 4, 5, 6, 7, (unsigned char)(i + salt) };

		switch ((i + salt) % 3) {
		case 0:
			len = fz_payload_all(p, (uint16_t)fz_id_all, 42, "hello", bytes, 8);
			break;
		case 1:
			len = fz_payload_all(p, (uint16_t)fz_id_custom, 43, "a string", bytes, 3);
			break;
		default: {
			uint16_t type = FDR_EVENT_ID_PRINT;
			int32_t pid = 42;
			uint64_t ip = 0;

			memset(p, 0, 16);
			memcpy(p, &type, 2);
			memcpy(p + 4, &pid, 4);
			memcpy(p + 8, &ip, 8);
			len = 16 + (uint32_t)snprintf((char *)p + 16, 64, "marker %u\n", i) + 1;
			break;
		}
		}
		*ts += 100 + i;
		if (fz_put(sb, off, p, len, *ts))
			break;
		done++;
	}
	return done;
}

/*
 * Fill positions @from..@to (the writer in @to, with @last records) of one buffer,
 * @cum records before @from; the slot of position p is p % FZ_NSUB. Returns head.
 */
static uint64_t fz_fill_buffer(unsigned char *img, uint32_t bi, uint32_t cpu, uint32_t from,
			       uint32_t to, uint32_t last, uint64_t cum, uint64_t *ts)
{
	uint32_t p, off = FDR_SUBBUF_HDR;

	for (p = from; p <= to; p++) {
		unsigned char *sb = fz_sub(img, bi, cpu, p % FZ_NSUB);

		fz_sub_begin(img, bi, cpu, p % FZ_NSUB, (uint64_t)p * FZ_SS, cum);
		off = FDR_SUBBUF_HDR;
		cum += fz_fill(sb, &off, p < to ? 1000 : last, ts, p + bi * 7 + cpu);
		if (p < to)
			fz_pad(sb, off);
	}
	return (uint64_t)to << 32 | ((to % FZ_NSUB) * FZ_SS + off);
}

/*
 * The image. Live buffers: CPU 0 never wrapped (positions 0, 1, the writer in 2);
 * CPU 1 wrapped (3, 4, the writer in 5). Snapshot buffers: CPU 0 holds positions
 * 0 and 1, CPU 1 is empty.
 */
static void fz_build(unsigned char *img, struct fdr_abi_control *ctl)
{
	struct fdr_abi_ring *h = (void *)img;
	uint64_t ts = ctl->ts_source == FDR_TS_TSC ? ctl->cal_tsc : ctl->cal_mono_ns;
	uint32_t e;

	memset(img, 0, FZ_SIZE);
	h->struct_size = sizeof(*h);
	h->version = FDR_ABI_VERSION;
	h->magic = FDR_ABI_MAGIC_RING;
	h->file_size = FZ_SIZE;
	h->nr_cpus = FZ_CPUS;
	h->subbuf_size = FZ_SS;
	h->cpu_off = sizeof(*h);
	h->spare_allocated = 1;
	h->snap_seq = 2;
	h->snap_count = 1;
	for (e = 0; e < FZ_ENTRIES; e++) {
		struct fdr_abi_cpu *c = fz_cpu(img, e / FZ_CPUS, e % FZ_CPUS);

		c->nr_subbufs = FZ_NSUB;
		c->subbuf_size = FZ_SS;
		c->data_off = FZ_DATA + (uint64_t)e * FZ_NSUB * FZ_SS;
	}
	fz_cpu(img, 0, 0)->head = fz_fill_buffer(img, 0, 0, 0, 2, 7, 0, &ts);
	fz_cpu(img, 0, 1)->head = fz_fill_buffer(img, 0, 1, 3, 5, 3, 500, &ts);
	fz_cpu(img, 1, 0)->head = fz_fill_buffer(img, 1, 0, 0, 1, 5, 0, &ts);
	fz_cpu(img, 1, 1)->head = fz_fill_buffer(img, 1, 1, 0, 0, 0, 0, &ts);
	fz_cpu(img, 0, 0)->swap_ns = ctl->cal_mono_ns;
}

/* Image to fuzz input (the inverse of the layout in the header comment). */
static size_t fz_to_input(const unsigned char *img, unsigned char *in)
{
	memcpy(in, img, FZ_HEAD_BYTES);
	memcpy(in + FZ_HEAD_BYTES, img + FZ_DATA, FZ_SIZE - FZ_DATA);
	return FZ_MAX_INPUT;
}

/* Replace ring.0.0 (not mapped by anyone yet) with @img. */
static int fz_install(struct fdr_session *s, const unsigned char *img)
{
	char path[PATH_MAX + 16], tmp[PATH_MAX + 16];
	int fd;

	snprintf(path, sizeof(path), "%s/ring.0.0", fdr_session_path(s));
	snprintf(tmp, sizeof(tmp), "%s/.fuzz-ring", fdr_session_path(s));
	fd = open(tmp, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (write(fd, img, FZ_SIZE) != (ssize_t)FZ_SIZE || close(fd) || rename(tmp, path))
		return -EIO;
	return 0;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct fdr_session_opts o = { .buffer_size_kb = 4, .subbuf_size = 4096, .overwrite = 1 };
	struct fdr_abi_event e;
	struct fdr_abi_cmdline *cl;
	void *base;
	size_t size;

	(void)argc;
	(void)argv;
	if (fz_s)
		return 0;
	if (getenv("FDR_FUZZ_VERBOSE"))
		fz_verbose = atoi(getenv("FDR_FUZZ_VERBOSE"));
	fz_s = fz_session_create(&o);
	fz_event_all(&e, "all", 0);
	fz_id_all = fz_register(fz_s, &e);
	fz_event_all(&e, "custom", 1);
	fz_id_custom = fz_register(fz_s, &e);
	cl = &fdr_session_control(fz_s)->cmdlines[42];
	snprintf(cl->comm, sizeof(cl->comm), "fuzzer");
	cl->tgid = 42;
	cl->pid = 42;
	fz_build(fz_image, fdr_session_control(fz_s));
	if (fz_install(fz_s, fz_image) || fdr_session_ring(fz_s, 0, &base, &size) ||
	    size != FZ_SIZE) {
		fprintf(stderr, "fuzz-reader: cannot install the ring image\n");
		exit(2);
	}
	fz_ring = base;
	return 0;
}

/* Every record of a reader, through the text formatter; bounded. */
static void fz_drain(struct fdr_reader *r, int consuming)
{
	struct fdr_buf b = { 0 };
	struct fdr_record rec;
	int n, ret = 0;

	for (n = 0; n < 20000 && (ret = fdr_reader_next(r, &rec)) > 0; n++) {
		if (fz_verbose && n < 3)
			fprintf(stderr, "  cpu %u len %u lost %llu\n", rec.cpu, rec.len,
				(unsigned long long)rec.lost_before);
		if (consuming && rec.lost_before)
			fdr_buf_printf(&b, "CPU:%u [LOST %llu EVENTS]\n", rec.cpu,
				       (unsigned long long)rec.lost_before);
		fdr_format_record(fz_s, 0, &rec, &b);
		if (b.len > 65536)
			b.len = 0;
	}
	if (fz_verbose)
		fprintf(stderr, "fuzz-reader: %s reader: %d records, then %d\n",
			consuming ? "consuming" : "non-consuming", n, ret);
	if (fz_verbose > 1)
		fwrite(b.data, 1, b.len, stderr);
	fdr_buf_free(&b);
}

/* The input over the valid image, in the session's mapping. */
static void fz_load(const uint8_t *data, size_t size)
{
	struct fdr_abi_ring *h = (void *)fz_ring;

	if (size > FZ_MAX_INPUT)
		size = FZ_MAX_INPUT;
	memcpy(fz_ring, fz_image, FZ_SIZE);
	memcpy(fz_ring, data, size < FZ_HEAD_BYTES ? size : FZ_HEAD_BYTES);
	if (size > FZ_HEAD_BYTES)
		memcpy(fz_ring + FZ_DATA, data + FZ_HEAD_BYTES, size - FZ_HEAD_BYTES);
	h->magic = FDR_ABI_MAGIC_RING;
	h->version = FDR_ABI_VERSION;
	h->file_size = FZ_SIZE;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fdr_reader *r;
	struct fdr_buf b = { 0 };
	unsigned char page[FZ_SS];
	uint32_t cpu;
	int n;

	if (!fz_s)
		LLVMFuzzerInitialize(NULL, NULL);
	fz_load(data, size);

	if (fdr_reader_open(fz_s, 0, -1, 0, &r) == 0) {
		fz_drain(r, 0);
		fdr_reader_close(r);
	}
	if (fdr_reader_open(fz_s, 0, -1, FDR_READ_SNAPSHOT, &r) == 0) {
		fz_drain(r, 0);
		fdr_reader_close(r);
	}
	for (cpu = 0; cpu <= FZ_CPUS; cpu++) {
		struct fdr_cpu_stats st;

		fdr_ring_stats(fz_s, 0, cpu, &st);
		fdr_ring_stats_ex(fz_s, 0, cpu, FDR_READ_SNAPSHOT, &st);
		fdr_ring_cpu_size_kb(fz_s, 0, cpu);
	}
	fdr_format_trace_header(fz_s, 0, &b);
	fdr_format_trace_header_ex(fz_s, 0, FDR_READ_SNAPSHOT, &b);
	fdr_buf_free(&b);
	for (cpu = 0; cpu < FZ_CPUS; cpu++) {
		if (fdr_reader_open(fz_s, 0, (int)cpu, FDR_READ_CONSUME, &r))
			continue;
		for (n = 0; n < 64 && fdr_reader_raw_page(r, page, sizeof(page)) > 0; n++)
			;
		fdr_reader_close(r);
	}
	/* fdr record's path: whole sub-buffers into a spool, read back checked */
	fz_load(data, size);
	for (cpu = 0; cpu < FZ_CPUS; cpu++) {
		struct fdr_spool sp = { 0 };
		int fd;

		if (fdr_reader_open(fz_s, 0, (int)cpu, FDR_READ_CONSUME, &r))
			continue;
		fd = memfd_create("fuzz-spool", MFD_CLOEXEC);
		for (n = 0; fd >= 0 && n < 8 && fdr_reader_take_subbufs(r, fd, 2 * FZ_SS, &sp) > 0;
		     n++)
			;
		fdr_reader_close(r);
		if (fd >= 0 && fdr_reader_open_spool(fz_s, 0, fd, &sp, &r) == 0) {
			fz_drain(r, 0);
			fdr_reader_close(r);
		}
		if (fd >= 0)
			close(fd);
	}
	/* the raw pages consumed records: start again from the input for trace_pipe */
	fz_load(data, size);
	if (fdr_reader_open(fz_s, 0, -1, FDR_READ_CONSUME, &r) == 0) {
		fdr_reader_wait(r, 0);
		fz_drain(r, 1);
		fdr_reader_close(r);
	}
	fdr_ring_clear(fz_s, 0, -1);
	fdr_ring_clear_ex(fz_s, 0, -1, FDR_READ_SNAPSHOT);
	if (fdr_reader_open(fz_s, 0, -1, 0, &r) == 0) {
		fz_drain(r, 0);
		fdr_reader_close(r);
	}
	return 0;
}

/*
 * Write @img as seed @name, cut after its last byte that differs from the valid
 * image: the rest of the input would only repeat what fz_load() puts there.
 */
static int fz_write_seed(const char *dir, const char *name, const unsigned char *img)
{
	static unsigned char in[FZ_MAX_INPUT], base[FZ_MAX_INPUT];
	size_t n = fz_to_input(img, in);

	fz_to_input(fz_image, base);
	while (n > FZ_HEAD_BYTES && in[n - 1] == base[n - 1])
		n--;
	return fz_write_file(dir, name, in, n);
}

/* Seeds: the valid image, and variants a crash or a reader would leave behind. */
int fdr_fuzz_write_seeds(const char *dir)
{
	static unsigned char img[FZ_SIZE], in[FZ_MAX_INPUT];
	struct fdr_abi_cpu *c0, *c1;
	int ret = 0;

	LLVMFuzzerInitialize(NULL, NULL);
	memcpy(img, fz_image, FZ_SIZE);
	ret |= fz_write_file(dir, "valid", in, fz_to_input(img, in));
	/* a consuming reader got half way through CPU 0 and took CPU 1's slot */
	c0 = fz_cpu(img, 0, 0);
	c1 = fz_cpu(img, 0, 1);
	c0->consumed = FZ_SS + FDR_SUBBUF_HDR;
	c0->consumed_cum = ((const struct fdr_abi_subbuf *)fz_sub(img, 0, 0, 1))->cum;
	c0->read_events = c0->consumed_cum;
	c1->reader_pid = 1;
	c1->overrun = 10;
	ret |= fz_write_seed(dir, "consumed", img);
	/* a writer killed between the padding and the header of a new sub-buffer */
	memcpy(img, fz_image, FZ_SIZE);
	c1 = fz_cpu(img, 0, 1);
	c1->head = (uint64_t)6 << 32 | 0; /* position 6 = slot 0, header never written */
	fz_pad(fz_sub(img, 0, 1, 2), FDR_SUBBUF_HDR + 200);
	ret |= fz_write_seed(dir, "killed-switch", img);
	/* after a snapshot: the writers use buffer 1 of CPU 0 */
	memcpy(img, fz_image, FZ_SIZE);
	fz_cpu(img, 0, 0)->active = 1;
	((struct fdr_abi_ring *)img)->snap_seq = 4;
	ret |= fz_write_seed(dir, "swapped", img);
	/* a record that does not check out below the writer's head, in the writer's
	 * sub-buffer (must be skipped, not waited for) */
	memcpy(img, fz_image, FZ_SIZE);
	{
		struct fdr_abi_rec *bad = (void *)(fz_sub(img, 0, 0, 2) + FDR_SUBBUF_HDR);

		bad->len_type = 3 | FDR_REC_DATA << FDR_REC_TYPE_SHIFT;
	}
	ret |= fz_write_seed(dir, "garbage-below-head", img);
	/* a head that cuts the first record of the writer's sub-buffer (and is not a
	 * multiple of 8): what lies below it cannot be parsed */
	memcpy(img, fz_image, FZ_SIZE);
	fz_cpu(img, 0, 0)->head = (uint64_t)2 << 32 | (2 * FZ_SS + FDR_SUBBUF_HDR + 5);
	ret |= fz_write_seed(dir, "head-cuts-record", img);
	/* offsets that are not multiples of 8: every shared word must stay aligned */
	memcpy(img, fz_image, FZ_SIZE);
	fz_cpu(img, 0, 0)->data_off += 1;
	ret |= fz_write_seed(dir, "misaligned-data-off", img);
	memcpy(img, fz_image, FZ_SIZE);
	memmove(img + sizeof(struct fdr_abi_ring) + 4, img + sizeof(struct fdr_abi_ring),
		FZ_ENTRIES * sizeof(struct fdr_abi_cpu));
	((struct fdr_abi_ring *)img)->cpu_off += 4;
	ret |= fz_write_seed(dir, "misaligned-cpu-off", img);
	memcpy(img, fz_image, FZ_SIZE);
	fz_cpu(img, 0, 0)->consumed = FZ_SS + FDR_SUBBUF_HDR + 1;
	ret |= fz_write_seed(dir, "misaligned-consumed", img);
	/* empty rings, as created */
	memcpy(img, fz_image, FZ_SIZE);
	fz_sub_begin(img, 0, 0, 0, 0, 0);
	fz_sub_begin(img, 0, 1, 0, 0, 0);
	fz_cpu(img, 0, 0)->head = FDR_SUBBUF_HDR;
	fz_cpu(img, 0, 1)->head = FDR_SUBBUF_HDR;
	ret |= fz_write_seed(dir, "empty", img);
	/* only the headers: sub-buffers keep the valid image */
	ret |= fz_write_file(dir, "headers-only", fz_image, FZ_HEAD_BYTES);
	return ret ? -EIO : 0;
}
