// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * fuzz-filter.c - the filter compiler fed any text, and the evaluator fed any
 * program and any record.
 *
 * Input: byte 0 chooses, the rest is the case.
 *   bit 1 clear  text mode: the bytes up to the first NUL are a filter for
 *                flt:ev (bit 0 clear) or ftrace:print (bit 0 set); the bytes
 *                after it are a record. A filter that compiles must validate;
 *                it is then run on that record, on every shorter cut of it
 *                and on a well-formed one. A rejected filter must report a
 *                known code at a position at most 2 past the text's end (the
 *                kernel's "CPUS" at the end gives that), and its error block
 *                is formatted.
 *   bit 1 set    program mode: the bytes are a struct fdr_filter_prog (zero
 *                filled), with a good header forced in when bit 0 is set so
 *                that the instructions are reached; it is validated, listed
 *                and run on a well-formed record and on cuts of it.
 *   always       fdr_filter_eval() (fast paths) and fdr_filter_eval_visited()
 *                (the general loop) give the same answer.
 *   bits 2-7     the writer's CPU.
 * Seeds: `fdr-fuzz-replay-filter --write-seeds DIR`.
 */
#include "fuzz.h"

#include "filter-test-event.h"

static struct fdr_abi_event fz_ev, fz_print;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	ft_event(&fz_ev);
	ft_print_event(&fz_print);
	return 0;
}

static void fz_run_cuts(const struct fdr_filter_prog *p, const unsigned char *rec, uint32_t len,
			const struct fdr_filter_ctx *ctx)
{
	uint32_t cut;
	int r;

	for (cut = 0; cut <= len; cut += 1 + cut / 8) {
		/* each cut in its own exact-size allocation: ASan sees any read past it */
		unsigned char *c = malloc(cut ? cut : 1);

		if (!c)
			return;
		memcpy(c, rec, cut);
		r = fdr_filter_eval(p, c, cut, ctx);
		if (r != 0 && r != 1)
			abort();
		/* the fast paths and the general loop agree, whatever the program */
		if (r != fdr_filter_eval_visited(p, c, cut, ctx, NULL))
			abort();
		r = fdr_filter_eval(p, c, cut, NULL);
		if (r != 0 && r != 1)
			abort();
		free(c);
	}
}

static void fz_text(const uint8_t *data, size_t size, const struct fdr_filter_ctx *ctx, int print)
{
	static struct fdr_filter_prog prog;
	const uint8_t *nul = memchr(data, 0, size);
	size_t tlen = nul ? (size_t)(nul - data) : size;
	char *text = malloc(tlen + 1);
	struct fdr_filter_error err;
	unsigned char good[256];
	uint32_t glen;
	int ret;

	if (!text)
		return;
	memcpy(text, data, tlen);
	text[tlen] = 0;
	ret = fdr_filter_compile(print ? &fz_print : &fz_ev, text, &prog, &err);
	if (ret == 0 || ret == FDR_FILTER_CLEAR) {
		char buf[4096];

		if (fdr_filter_validate(&prog))
			abort(); /* the compiler made a program the checker refuses */
		fdr_filter_dump(&prog, buf, sizeof(buf));
		glen = ft_payload(good, &ft_defaults);
		if (fdr_filter_eval(&prog, good, glen, ctx) > 1)
			abort();
		if (nul)
			fz_run_cuts(&prog, nul + 1, (uint32_t)(size - tlen - 1), ctx);
		else
			fz_run_cuts(&prog, good, glen, ctx);
	} else {
		char buf[512];
		int n;

		if (ret != -EINVAL || err.code < 0 || err.code >= FDR_FILTER_ERR_NR ||
		    err.pos < 0 || (size_t)err.pos > strlen(text) + 2)
			abort();
		n = fdr_filter_format_error(text, &err, buf, sizeof(buf));
		if (n < 0)
			abort();
		(void)fdr_filter_error_message(&err);
	}
	free(text);
}

static void fz_prog(const uint8_t *data, size_t size, const struct fdr_filter_ctx *ctx,
		    int fix_header)
{
	struct fdr_filter_prog *p = calloc(1, sizeof(*p));
	unsigned char good[256];
	char buf[8192];
	uint32_t glen;

	if (!p)
		return;
	memcpy(p, data, size < sizeof(*p) ? size : sizeof(*p));
	if (fix_header) {
		p->struct_size = FDR_FILTER_PROG_SIZE;
		p->magic = FDR_FILTER_MAGIC;
		p->version = FDR_FILTER_VERSION;
		p->nr_insns %= FDR_FILTER_MAX_INSNS + 1;
		p->pool_len %= FDR_FILTER_POOL_SIZE + 1;
		p->flags &= FDR_FILTER_F_ALL;
		p->reserved = 0;
	}
	fdr_filter_validate(p);
	fdr_filter_dump(p, buf, sizeof(buf));
	glen = ft_payload(good, &ft_defaults);
	fz_run_cuts(p, good, glen, ctx);
	free(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fdr_filter_ctx ctx = { 0 };

	if (!fz_ev.nr_fields)
		LLVMFuzzerInitialize(NULL, NULL);
	if (size < 1)
		return 0;
	ctx.cpu = data[0] >> 2;
	memcpy(ctx.comm, "worker", 7);
	if (data[0] & 2)
		fz_prog(data + 1, size - 1, &ctx, data[0] & 1);
	else
		fz_text(data + 1, size - 1, &ctx, data[0] & 1);
	return 0;
}

/* ---- seeds ---------------------------------------------------------------------------- */

static int fz_seed_text(const char *dir, const char *name, uint8_t mode, const char *text,
			const unsigned char *rec, uint32_t rec_len)
{
	unsigned char buf[1024];
	size_t n = strlen(text);

	if (1 + n + 1 + rec_len > sizeof(buf))
		return -EINVAL;
	buf[0] = mode;
	memcpy(buf + 1, text, n);
	buf[1 + n] = 0;
	if (rec_len)
		memcpy(buf + 2 + n, rec, rec_len);
	return fz_write_file(dir, name, buf, 1 + n + (rec_len ? 1 + rec_len : 0));
}

int fdr_fuzz_write_seeds(const char *dir)
{
	static const char *const texts[] = {
		"status >= 500",
		"prev_pid == 42 && status == 200",
		"prev_pid == 1 || prev_pid == 2 && status == 200",
		"!(prev_pid == 1 || status == 1) && code == 404",
		"prev_comm ~ \"*sh\" && (path ~ \"/usr/*\" || code >= 400) && !(CPU == 3)",
		"prev_comm ~ \"[a-c]?s*h\"",
		"path ~ \"*bin*\" || blob == 'ab'",
		"CPU & CPUS{0-3,8-15:2/4}",
		"target_cpu & CPUS{all}",
		"comm == \"worker\" && common_pid != 0",
		"small == 0xfb && big == 0xffffffffffffffff && sbig < -1",
		"mask & 0x8 && flag == 1 && u8f > 199 && s16f < -299",
		"((((prev_pid == 42))))",
		"0",
		"prev_comm == bash",
		"(prev_pid == 1",
		"prev_pid == 1)",
		"prev_pid = 1",
		"prev_pid < 1 > 2",
		"nosuch == 1",
		"prev_comm == \"unterminated",
		"CPU & CPUS{1",
		"prev_pid == 1 &&",
		"odd == 1",
		"code == 65536",
		"",
		"!",
	};
	static const char *const print_texts[] = {
		"buf ~ \"*marker*\"",
		"ip == 0x1234 && buf == \"hello marker\n\"",
	};
	unsigned char rec[256], pbuf[64] = { 0 };
	struct fdr_filter_prog prog;
	struct fdr_filter_error err;
	uint64_t ip = 0x1234;
	uint32_t len;
	char name[32];
	size_t i;
	int ret = 0;

	LLVMFuzzerInitialize(NULL, NULL);
	len = ft_payload(rec, &ft_defaults);
	for (i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		snprintf(name, sizeof(name), "text-%02zu", i);
		/* half with a record after the text, half without */
		ret |= fz_seed_text(dir, name, (uint8_t)(2 << 2), texts[i], rec, i % 2 ? len : 0);
	}
	memcpy(pbuf + 8, &ip, 8);
	memcpy(pbuf + 16, "hello marker\n", 14);
	for (i = 0; i < sizeof(print_texts) / sizeof(print_texts[0]); i++) {
		snprintf(name, sizeof(name), "print-%02zu", i);
		ret |= fz_seed_text(dir, name, (uint8_t)(1 | 2 << 2), print_texts[i], pbuf, 30);
	}
	/* compiled programs, raw: bit 1 (program mode), with and without the header fix */
	for (i = 0; i < 6; i++) {
		unsigned char buf[1 + sizeof(prog)];
		size_t n;

		if (fdr_filter_compile(&fz_ev, texts[i + 3], &prog, &err))
			return -EINVAL;
		memset(buf, 0, sizeof(buf));
		n = FDR_FILTER_HDR_SIZE + 16u * prog.nr_insns;
		buf[0] = (uint8_t)(2 | (i & 1) | 2 << 2);
		memcpy(buf + 1, &prog, n);
		/* the pool, which follows the instruction array */
		memcpy(buf + 1 + FDR_FILTER_HDR_SIZE + 16 * FDR_FILTER_MAX_INSNS, prog.pool,
		       prog.pool_len);
		if (prog.pool_len)
			n = FDR_FILTER_HDR_SIZE + 16u * FDR_FILTER_MAX_INSNS + prog.pool_len;
		n++;
		snprintf(name, sizeof(name), "prog-%02zu", i);
		ret |= fz_write_file(dir, name, buf, n);
	}
	return ret;
}
