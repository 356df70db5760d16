// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * probe-decoders.c - the measurement behind libfdr-probe's choice of decoder
 * (docs/design/probes.md): Zydis 4 and Capstone 4 (Debian 12's libzydis-dev,
 * libcapstone-dev) decode the .text of an ELF file (default: libc.so.6) from
 * start to end, linearly, three ways each: length only, and with operands
 * (what relocation needs: RIP-relative displacement offsets, branch targets).
 * Bytes a decoder rejects are skipped one at a time and counted as "bad".
 * Prints instructions per second for each, median of 5 passes:
 *
 *	zydis length: 9.1 Minsn/s ...
 *
 * Usage: bench-probe-decoders [ELF]. Built only where both libraries are.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <Zydis/Zydis.h>
#include <capstone/capstone.h>

#define PASSES 5

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* One pass of decoder @which (0: Zydis length, 1: Zydis full, 2: Capstone, 3: Capstone detail). */
static double pass(int which, const uint8_t *text, size_t len, uint64_t addr, size_t *insns,
		   size_t *bad)
{
	ZydisDecoder zd;
	ZydisDecodedInstruction zi;
	ZydisDecodedOperand zo[ZYDIS_MAX_OPERAND_COUNT];
	csh cs;
	cs_insn *ci = NULL;
	size_t off = 0;
	double t0;

	*insns = *bad = 0;
	ZydisDecoderInit(&zd, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
	if (which >= 2) {
		if (cs_open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK)
			return 0;
		cs_option(cs, CS_OPT_DETAIL, which == 3 ? CS_OPT_ON : CS_OPT_OFF);
		ci = cs_malloc(cs);
	}
	t0 = now_s();
	if (which < 2) {
		while (off < len) {
			ZyanStatus st =
				which == 0 ?
					ZydisDecoderDecodeInstruction(&zd, NULL, text + off,
								      len - off, &zi) :
					ZydisDecoderDecodeFull(&zd, text + off, len - off, &zi, zo);
			if (ZYAN_SUCCESS(st)) {
				off += zi.length;
			} else {
				off++;
				(*bad)++;
			}
			(*insns)++;
		}
	} else {
		const uint8_t *p = text;
		size_t left = len;
		uint64_t a = addr;

		while (left) {
			if (!cs_disasm_iter(cs, &p, &left, &a, ci)) {
				p++;
				left--;
				a++;
				(*bad)++;
			}
			(*insns)++;
		}
	}
	t0 = now_s() - t0;
	if (which >= 2) {
		cs_free(ci, 1);
		cs_close(&cs);
	}
	return (double)*insns / t0;
}

int main(int argc, char **argv)
{
	static const char *const names[] = { "zydis length", "zydis operands", "capstone length",
					     "capstone detail" };
	const char *path = argc > 1 ? argv[1] : "/lib/x86_64-linux-gnu/libc.so.6";
	const Elf64_Ehdr *eh;
	const Elf64_Shdr *sh;
	const uint8_t *m, *text = NULL;
	size_t text_len = 0;
	uint64_t text_addr = 0;
	struct stat st;
	int fd, i, w;

	fd = open(path, O_RDONLY);
	if (fd < 0 || fstat(fd, &st) < 0 || (size_t)st.st_size < sizeof(*eh)) {
		fprintf(stderr, "bench-probe-decoders: cannot read %s\n", path);
		return 1;
	}
	m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (m == MAP_FAILED)
		return 1;
	eh = (const Elf64_Ehdr *)m;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_shoff + (size_t)eh->e_shnum * sizeof(*sh) > (size_t)st.st_size ||
	    eh->e_shstrndx >= eh->e_shnum) {
		fprintf(stderr, "bench-probe-decoders: %s: not a 64-bit ELF file\n", path);
		return 1;
	}
	sh = (const Elf64_Shdr *)(m + eh->e_shoff);
	for (i = 0; i < eh->e_shnum; i++) {
		const char *nm = (const char *)m + sh[eh->e_shstrndx].sh_offset + sh[i].sh_name;

		if (!strcmp(nm, ".text") && sh[i].sh_offset + sh[i].sh_size <= (size_t)st.st_size) {
			text = m + sh[i].sh_offset;
			text_len = sh[i].sh_size;
			text_addr = sh[i].sh_addr;
		}
	}
	if (!text) {
		fprintf(stderr, "bench-probe-decoders: %s has no .text\n", path);
		return 1;
	}
	printf("%s: .text %zu bytes\n", path, text_len);
	for (w = 0; w < 4; w++) {
		double rate[PASSES];
		size_t insns = 0, bad = 0;

		for (i = 0; i < PASSES; i++)
			rate[i] = pass(w, text, text_len, text_addr, &insns, &bad);
		qsort(rate, PASSES, sizeof(rate[0]), cmp_double);
		printf("%-16s %5.1f Minsn/s  %zu instructions, %zu bytes rejected\n", names[w],
		       rate[PASSES / 2] / 1e6, insns - bad, bad);
	}
	return 0;
}
