// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * fuzz-ring.c - a hostile ring file, opened as writers and readers open it.
 *
 * fuzz-reader lays inputs over a valid image that the session has mapped once,
 * with the header's identity forced; this target is the open path itself. Each
 * input is a whole ring file (ring.0.<gen>), header included, nothing forced:
 *
 *   writer side  fdr_ring_map_open() (fdr_shm_check_ring(), fdr_shm_check_cpu()
 *                per CPU and buffer), then an append through fdr_ring_write() on
 *                this thread's CPU (a disabled CPU must refuse it and count it)
 *                and a snapshot swap, on the mapping it made;
 *   reader side  the session's mapping of the same file made again, then
 *                fdr_reader_open() on all CPUs and each CPU (live, snapshot,
 *                consuming) with every record formatted, fdr_ring_stats(),
 *                fdr_ring_cpu_size_kb(), fdr_ring_nr_cpus() and a take of whole
 *                sub-buffers into a spool.
 *
 * Nothing may crash, hang, read or write out of the mapping. Inputs longer than
 * FR_MAX are cut. The seeds are small valid rings that fdr_ring_file_create()
 * made and fdr_ring_write() filled, and variants of them.
 */
#include "fuzz.h"

#include <sys/mman.h>

#include "core/core-local.h"

#define FR_MAX (256u << 10)

static struct fdr_session *fr_s;
static uint32_t fr_id;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct fdr_session_opts o = { .buffer_size_kb = 4, .subbuf_size = 4096, .overwrite = 1 };
	struct fdr_abi_event e;

	(void)argc;
	(void)argv;
	if (fr_s)
		return 0;
	fr_s = fz_session_create(&o);
	fz_event_all(&e, "all", 0);
	fr_id = fz_register(fr_s, &e);
	return 0;
}

/* Put @data at ring.0.0 (replacing the file; nobody maps it: see fr_forget()). */
static int fr_install(const uint8_t *data, size_t size)
{
	char path[PATH_MAX + 16], tmp[PATH_MAX + 16];
	int fd;

	snprintf(path, sizeof(path), "%s/ring.0.0", fdr_session_path(fr_s));
	snprintf(tmp, sizeof(tmp), "%s/.fuzz-ring", fdr_session_path(fr_s));
	fd = open(tmp, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if ((size && write(fd, data, size) != (ssize_t)size) || close(fd) || rename(tmp, path))
		return -EIO;
	return 0;
}

/*
 * Drop the session's mapping of the ring, so that the next reader maps the new
 * file (fdr_session_ring_map() only maps again for a new generation; retiring
 * would leak a mapping per input).
 */
static void fr_forget(void)
{
	struct fdr_ring_map *m = atomic_exchange(&fr_s->rings[0], NULL);

	if (m) {
		munmap(m->base, m->size);
		free(m);
	}
}

/* Every record of a reader, formatted; bounded. */
static void fr_drain(struct fdr_reader *r)
{
	struct fdr_buf b = { 0 };
	struct fdr_record rec;
	int n;

	for (n = 0; n < 20000 && fdr_reader_next(r, &rec) > 0; n++) {
		fdr_format_record(fr_s, 0, &rec, &b);
		if (b.len > 65536)
			b.len = 0;
	}
	(void)fdr_reader_error(r);
	fdr_buf_free(&b);
}

/* The writer's side: map, append, swap, unmap. */
static void fr_writer(void)
{
	unsigned char rec[16 + 64] __attribute__((aligned(8)));
	struct fdr_ring_map *m;
	uint16_t type = (uint16_t)fr_id;
	uint32_t lt = (uint32_t)sizeof(rec) | FDR_REC_DATA << FDR_REC_TYPE_SHIFT;
	int i;

	if (fdr_ring_map_open(fr_s, 0, 0, &m))
		return;
	memset(rec, 0, sizeof(rec));
	memcpy(rec, &lt, 4);
	memcpy(rec + 16, &type, 2);
	for (i = 0; i < 200; i++)
		fdr_ring_write(fr_s, 0, m, rec, sizeof(rec));
	fdr_ring_swap(m, -1);
	fdr_ring_write(fr_s, 0, m, rec, sizeof(rec));
	munmap(m->base, m->size);
	free(m);
}

static void fr_readers(void)
{
	struct fdr_reader *r;
	struct fdr_cpu_stats st;
	int n = fdr_ring_nr_cpus(fr_s, 0), cpu, k;

	if (fdr_reader_open(fr_s, 0, -1, 0, &r) == 0) {
		fr_drain(r);
		fdr_reader_close(r);
	}
	if (fdr_reader_open(fr_s, 0, -1, FDR_READ_SNAPSHOT, &r) == 0) {
		fr_drain(r);
		fdr_reader_close(r);
	}
	if (n > 4)
		n = 4;
	for (cpu = 0; cpu < n; cpu++) {
		struct fdr_spool sp = { 0 };
		int fd;

		fdr_ring_stats(fr_s, 0, (uint32_t)cpu, &st);
		fdr_ring_stats_ex(fr_s, 0, (uint32_t)cpu, FDR_READ_SNAPSHOT, &st);
		fdr_ring_cpu_size_kb(fr_s, 0, (uint32_t)cpu);
		if (fdr_reader_open(fr_s, 0, cpu, FDR_READ_CONSUME, &r))
			continue;
		fd = memfd_create("fuzz-spool", MFD_CLOEXEC);
		for (k = 0; fd >= 0 && k < 8 && fdr_reader_take_subbufs(r, fd, 1u << 20, &sp) > 0;
		     k++)
			;
		fdr_reader_close(r);
		if (fd >= 0 && fdr_reader_open_spool(fr_s, 0, fd, &sp, &r) == 0) {
			fr_drain(r);
			fdr_reader_close(r);
		}
		if (fd >= 0)
			close(fd);
	}
	if (fdr_reader_open(fr_s, 0, -1, FDR_READ_CONSUME, &r) == 0) {
		fdr_reader_wait(r, 0);
		fr_drain(r);
		fdr_reader_close(r);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!fr_s)
		LLVMFuzzerInitialize(NULL, NULL);
	if (size > FR_MAX)
		size = FR_MAX;
	fr_forget();
	if (fr_install(data, size))
		return 0;
	fr_writer();
	/* the writer changed the file: readers get the input as it came */
	fr_forget();
	if (fr_install(data, size))
		return 0;
	fr_readers();
	fr_forget();
	return 0;
}

/* Read the whole of ring.0.0 into a new buffer; its size in *n. */
static unsigned char *fr_slurp(size_t *n)
{
	char path[PATH_MAX + 16];
	struct stat st;
	unsigned char *p;
	int fd;

	snprintf(path, sizeof(path), "%s/ring.0.0", fdr_session_path(fr_s));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) || !(p = malloc((size_t)st.st_size))) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	*n = (size_t)st.st_size;
	if (read(fd, p, *n) != (ssize_t)*n) {
		free(p);
		p = NULL;
	}
	close(fd);
	return p;
}

/* Seeds: rings that fdr_ring_file_create() made, written to, and variants. */
int fdr_fuzz_write_seeds(const char *dir)
{
	uint32_t nr[2] = { 3, 3 };
	struct fdr_ring_map *m;
	unsigned char rec[16 + 64] __attribute__((aligned(8)));
	uint16_t type;
	uint32_t lt = (uint32_t)sizeof(rec) | FDR_REC_DATA << FDR_REC_TYPE_SHIFT;
	unsigned char *img;
	size_t n;
	int ret = 0, i;

	LLVMFuzzerInitialize(NULL, NULL);
	type = (uint16_t)fr_id;
	fr_forget();
	if (fdr_ring_file_create(fr_s->dir_fd, 0, 0, 2, 4096, nr, 1) ||
	    fdr_ring_map_open(fr_s, 0, 0, &m))
		return -EIO;
	memset(rec, 0, sizeof(rec));
	memcpy(rec, &lt, 4);
	memcpy(rec + 16, &type, 2);
	for (i = 0; i < 150; i++)
		fdr_ring_write(fr_s, 0, m, rec, sizeof(rec));
	fdr_ring_swap(m, -1);
	for (i = 0; i < 20; i++)
		fdr_ring_write(fr_s, 0, m, rec, sizeof(rec));
	munmap(m->base, m->size);
	free(m);
	img = fr_slurp(&n);
	if (!img)
		return -EIO;
	ret |= fz_write_file(dir, "valid", img, n);
	{
		struct fdr_abi_ring *h = (void *)img;
		struct fdr_abi_cpu *c = (void *)(img + h->cpu_off);

		/* issue 12: a sub-buffer size above 2^31 hung rb_log2() */
		c[1].subbuf_size = 0x80000001u;
		ret |= fz_write_file(dir, "subbuf-size-2g", img, n);
		c[1].subbuf_size = 4096;
		c[2].data_off = 8;
		ret |= fz_write_file(dir, "data-off-over-cpus", img, n);
		c[2].data_off = c[3].data_off;
		c[0].nr_subbufs = 0xffffffffu;
		ret |= fz_write_file(dir, "nr-subbufs-max", img, n);
		c[0].nr_subbufs = 3;
		h->nr_cpus = 1000;
		ret |= fz_write_file(dir, "nr-cpus-beyond", img, n);
	}
	free(img);
	return ret;
}
