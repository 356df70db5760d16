// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * fuzz-spool.c - the spool reader (fdr_reader_open_spool) fed a hostile spool.
 *
 * A spool is what fdr record keeps while recording: a CPU's sub-buffers copied
 * from shared memory as they were (fdr_reader_take_subbufs), so it is no more
 * trustworthy than the ring. Input:
 *
 *   input[0, 8)    start_pos (the spool reader's first position)
 *   input[8, 16)   start_cum (records before it)
 *   input[16, ...) the spool: whole 4 KiB sub-buffers (a torn last one is cut),
 *                  at most FZ_MAX_SUBBUFS
 *
 * The spool is read with fdr_reader_next() and the text formatter, and again as
 * kernel pages (fdr_reader_raw_pages()): no crash, no hang, no read out of
 * bounds, and both ways must count the same records and losses.
 */
#include "fuzz.h"

#include <sys/mman.h>

#define FZ_SS 4096u
#define FZ_MAX_SUBBUFS 16u

static struct fdr_session *fz_s;
static uint32_t fz_id_all, fz_id_custom;
static int fz_fd = -1;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct fdr_session_opts o = { .buffer_size_kb = 4, .subbuf_size = FZ_SS };
	struct fdr_abi_event e;

	(void)argc;
	(void)argv;
	if (fz_s)
		return 0;
	fz_s = fz_session_create(&o);
	fz_event_all(&e, "all", 0);
	fz_id_all = fz_register(fz_s, &e);
	fz_event_all(&e, "custom", 1);
	fz_id_custom = fz_register(fz_s, &e);
	fz_fd = memfd_create("fuzz-spool", MFD_CLOEXEC);
	if (fz_fd < 0) {
		perror("memfd_create");
		exit(2);
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fdr_spool sp = { .subbuf_size = FZ_SS };
	struct fdr_raw_stats st = { 0 };
	struct fdr_buf b = { 0 };
	struct fdr_record rec;
	struct fdr_reader *r;
	static unsigned char pages[8 * FZ_SS];
	uint64_t n = 0, lost = 0;
	size_t len;
	int ret;

	if (!fz_s)
		LLVMFuzzerInitialize(NULL, NULL);
	if (size < 16)
		return 0;
	memcpy(&sp.start_pos, data, 8);
	memcpy(&sp.start_cum, data + 8, 8);
	len = (size - 16) / FZ_SS * FZ_SS;
	if (len > FZ_MAX_SUBBUFS * FZ_SS)
		len = FZ_MAX_SUBBUFS * FZ_SS;
	if (ftruncate(fz_fd, 0) || pwrite(fz_fd, data + 16, len, 0) != (ssize_t)len)
		abort();
	sp.bytes = len;

	if (fdr_reader_open_spool(fz_s, 0, fz_fd, &sp, &r))
		abort(); /* a valid description must open */
	while ((ret = fdr_reader_next(r, &rec)) > 0) {
		n++;
		lost += rec.lost_before;
		fdr_format_record(fz_s, 0, &rec, &b);
		if (b.len > 65536)
			b.len = 0;
	}
	fdr_reader_close(r);
	fdr_buf_free(&b);
	if (ret < 0)
		abort(); /* a spool reader reports the end, not an error */

	if (fdr_reader_open_spool(fz_s, 0, fz_fd, &sp, &r))
		abort();
	while (fdr_reader_raw_pages(r, pages, FZ_SS, 8, &st) > 0)
		;
	fdr_reader_close(r);
	if (st.records != n || st.lost != lost)
		abort(); /* the page builder reads what the record reader reads */
	if (getenv("FDR_FUZZ_VERBOSE"))
		fprintf(stderr, "fuzz-spool: %zu sub-buffers: %llu records, %llu lost\n",
			len / FZ_SS, (unsigned long long)n, (unsigned long long)lost);
	return 0;
}

/* ---- seeds -------------------------------------------------------------------------------- */

/* Sub-buffer @k of a spool starting at linear position @pos0: @nrec records from @cum. */
static uint32_t fz_subbuf(unsigned char *sb, uint64_t pos, uint64_t cum, uint32_t nrec, int pad)
{
	struct fdr_abi_subbuf *h = (void *)sb;
	unsigned char p[256], bytes[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	uint32_t off = FDR_SUBBUF_HDR, i;

	memset(sb, 0, FZ_SS);
	h->pos = pos;
	h->cum = cum;
	h->cal_tsc = 1000000 + pos;
	h->cal_mono_ns = 5000000000ull + pos;
	h->cal_boot_ns = 6000000000ull + pos;
	for (i = 0; i < nrec; i++) {
		uint32_t len = fz_payload_all(p, (uint16_t)(i & 1 ? fz_id_custom : fz_id_all), 42,
					      "spooled", bytes, (uint32_t)(i % 9));
		struct fdr_abi_rec r = { 0 };
		uint32_t total = (uint32_t)((sizeof(r) + len + 7) & ~7u);

		if (off + total + 8 > FZ_SS)
			break;
		r.len_type = total | FDR_REC_DATA << FDR_REC_TYPE_SHIFT;
		r.ts = 1000000 + pos + i * 100;
		memcpy(sb + off, &r, sizeof(r));
		memcpy(sb + off + sizeof(r), p, len);
		off += total;
	}
	if (pad) {
		struct fdr_abi_rec r = { 0 };

		r.len_type = (FZ_SS - off) | FDR_REC_PAD << FDR_REC_TYPE_SHIFT;
		memcpy(sb + off, &r, sizeof(r));
	}
	return i;
}

int fdr_fuzz_write_seeds(const char *dir)
{
	static unsigned char in[16 + 4 * FZ_SS];
	uint64_t start = 0, cum = 0, pos = 8 * FZ_SS;
	uint32_t k, nrec[4];
	int ret = 0;

	LLVMFuzzerInitialize(NULL, NULL);
	/* four sub-buffers in a row, as a take leaves them */
	for (k = 0; k < 4; k++) {
		nrec[k] = fz_subbuf(in + 16 + k * FZ_SS, pos + k * FZ_SS, cum, 20 + k, 1);
		cum += nrec[k];
	}
	start = pos;
	memcpy(in, &start, 8);
	memset(in + 8, 0, 8);
	ret |= fz_write_file(dir, "valid", in, sizeof(in));
	/* the spool starts mid sub-buffer (a reader that had read some records) */
	start = pos + FDR_SUBBUF_HDR + 3 * 64;
	memcpy(in, &start, 8);
	ret |= fz_write_file(dir, "mid-start", in, sizeof(in));
	start = pos;
	memcpy(in, &start, 8);
	/* a take cut sub-buffer 1 (overwritten while copied): its position spoiled */
	memset(in + 16 + FZ_SS, 0xff, 8);
	ret |= fz_write_file(dir, "cut", in, sizeof(in));
	/* sub-buffer 2 overwritten a lap later: the next record count jumps */
	fz_subbuf(in + 16 + FZ_SS, pos + FZ_SS, nrec[0], 21, 1);
	fz_subbuf(in + 16 + 3 * FZ_SS, pos + 3 * FZ_SS, cum + 500, 23, 1);
	ret |= fz_write_file(dir, "gap", in, sizeof(in));
	/* the last one without padding, and a torn tail */
	fz_subbuf(in + 16 + 3 * FZ_SS, pos + 3 * FZ_SS, cum - nrec[3], 200, 0);
	ret |= fz_write_file(dir, "torn", in, sizeof(in) - 100);
	return ret;
}
