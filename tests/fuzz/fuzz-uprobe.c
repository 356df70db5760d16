// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * fuzz-uprobe.c - uprobe_events lines and fetch programs from hostile input.
 *
 * Input: a first byte 'P' makes the rest a fetch program as shared memory could
 * hold it (fdr_fetch_check(), then fdr_fetch_run() if accepted). Anything else
 * is one uprobe_events line (NUL bytes made spaces): parsed; an accepted probe is
 * resolved (a PATH:SYMBOL place), read back, compiled, checked, run on registers
 * that point at a small buffer, described as an event, and its format file and
 * record text are rendered. Nothing may crash, leak or read outside a buffer,
 * and what the parser accepts must compile into a program the checker accepts.
 */
#include "fuzz.h"

#include "ctl/uprobe.h"
#include "probe/fetch.h"

static struct fdr_uprobe_cmd fz_cmd;
static unsigned char fz_prog[FDR_FETCH_MAX_SIZE] __attribute__((aligned(16)));
static unsigned char fz_rec[FDR_FETCH_MAX_RECORD];
static char fz_mem[64] = "fuzzed string";

static void fz_regs(struct fdr_probe_regs *r)
{
	int i;

	for (i = 0; i < FDR_REG_NR; i++)
		r->gpr[i] = (uintptr_t)fz_mem + (uint64_t)i;
	r->gpr[FDR_REG_DI] = 0; /* a fault */
	r->gpr[FDR_REG_IP] = 0x1000;
	r->probe_addr = (uintptr_t)fz_mem;
}

static void fz_program(const uint8_t *data, size_t size)
{
	struct fdr_probe_regs r;

	if (size > sizeof(fz_prog))
		size = sizeof(fz_prog);
	memcpy(fz_prog, data, size);
	if (fdr_fetch_check((const struct fdr_fetch_prog *)fz_prog, size, NULL) == 0) {
		fz_regs(&r);
		if (fdr_fetch_run((const struct fdr_fetch_prog *)fz_prog, &r, fz_rec,
				  sizeof(fz_rec)) > (int)sizeof(fz_rec))
			abort();
	}
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fdr_uprobe_err e;
	struct fdr_abi_event ev;
	struct fdr_probe_regs r;
	struct fdr_buf b = { 0 };
	char *line, out[16384];
	size_t i, len;
	int n;

	if (size && data[0] == 'P') {
		fz_program(data + 1, size - 1);
		return 0;
	}
	if (size > 16384)
		return 0;
	line = malloc(size + 1);
	if (!line)
		return 0;
	for (i = 0; i < size; i++)
		line[i] = data[i] ? (char)data[i] : ' ';
	line[size] = 0;
	if (fdr_uprobe_parse(line, &fz_cmd, &e) != 0) {
		if (!e.msg || e.code >= 0 || e.pos > (int)size + 1)
			abort(); /* an error always has a message, an errno and a sane caret */
		goto out;
	}
	if (fz_cmd.op != FDR_UPROBE_ADD || fdr_uprobe_resolve(&fz_cmd, &e) != 0)
		goto out;
	fdr_uprobe_format(&fz_cmd, out, sizeof(out));
	if (fdr_uprobe_compile(&fz_cmd, (struct fdr_fetch_prog *)fz_prog, sizeof(fz_prog), &len) !=
	    0)
		abort(); /* an accepted line always compiles into a checked program */
	fz_regs(&r);
	n = fdr_fetch_run((const struct fdr_fetch_prog *)fz_prog, &r, fz_rec, sizeof(fz_rec));
	if (n < 0 || n > (int)sizeof(fz_rec))
		abort();
	if (fdr_uprobe_event(&fz_cmd, &ev, &e) == 0) {
		fdr_format_event_file(&ev, &b);
		fdr_format_body(&ev, fz_rec, (uint32_t)n, &b);
		fdr_buf_free(&b);
	}
out:
	free(line);
	return 0;
}

int fdr_fuzz_write_seeds(const char *dir)
{
	static const char *const lines[] = {
		"p:fz/tfn /bin/true:0x1149 x=%di:s64 s=+0(%si):string sh=%dx:x16 a=%cx:s32 "
		"b=%di:u64 bf=+0(%cx):b4@1/32 ar=+0(%dx):u8[4] c=+0(%si):char",
		"r:fz/ret /bin/true:0x1149 rv=$retval:s64 st=$stack c=$comm",
		"p:fz/t2 /bin/true:0x1149 %di +0(%si) $stack $stack3 $comm \\1234 @0x1000 @+0x2000",
		"p:fz/o1 /bin/true:0x1149 a=+u0(%di) b=-u8(%di) c=\\-5 d=\\+5 e=\\0x10:s8 f=$COMM",
		"p:fz/o3 /bin/true:0x1149 a=+0(%si):x8[3] d=+0(%si):b3@2/8[2] f=\\\"abc\" "
		"h=+0(+8(%si)):u8",
		"p:fz/a /bin/true:0x1149 a=$arg1 b=$arg7:s32 c=%orig_ax d=%flags",
		"p /proc/self/exe:main+1 x=%di",
		"p:fz/e1 /bin/true:0x1149 a=+0(%di):b4@30/32",
		"p:fz/e1 /bin/true:0x1149 a=+0(%di",
		"-:fz/tfn",
		"# comment",
		"p:fz/o11 /bin/true:0x1149(0x10) a=%di",
	};
	struct fdr_fetch_insn in[2] = { { FDR_FOP_REG, 0, 0, 0, 0, 0, 0, FDR_REG_SI },
					{ FDR_FOP_ST_MEM, 4, 1, 0, 0, 0, 16, 0 } };
	struct fdr_fetch_prog h = { FDR_FETCH_MAGIC,
				    FDR_FETCH_VERSION,
				    0,
				    (uint32_t)fdr_fetch_prog_bytes(2, 0),
				    2,
				    1,
				    20,
				    0,
				    0,
				    0 };
	unsigned char raw[1 + sizeof(h) + sizeof(in)];
	char name[32];
	size_t i;

	for (i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		snprintf(name, sizeof(name), "line-%02zu", i);
		if (fz_write_file(dir, name, lines[i], strlen(lines[i])))
			return -1;
	}
	raw[0] = 'P';
	memcpy(raw + 1, &h, sizeof(h));
	memcpy(raw + 1 + sizeof(h), in, sizeof(in));
	return fz_write_file(dir, "program", raw, sizeof(raw));
}
