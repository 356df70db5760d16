// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * probe-coverage.c - how many functions of a shared library take a jump probe
 * at their entry (issue 16's probe_optimized_pct).
 *
 * The library (default libc.so.6, or the soname fragment given) is the copy
 * this process has mapped. Its function symbols (STT_FUNC, defined, size > 0,
 * from .symtab where the file has one, else .dynsym; one per address) are
 * each put through libfdr-probe's checks, without arming anything:
 * fdr_probe_check() (can the entry take a breakpoint at all) and
 * fdr_probe_jump_check() (would fdr_probe_optimize() turn it into a jmp:
 * the window, its relocation, the function's branches; not whether a
 * trampoline page can be had, which here always could). Prints
 *
 *	METRIC probe_optimized_pct fdr=X
 *
 * X = functions whose entry would be jump-optimised / functions, in percent,
 * and on stderr the counts and the most frequent reasons for a refusal.
 * Usage: bench-probe-coverage [SONAME] (default libc.so.6).
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine.h"

struct found {
	const char *want;
	char path[4096];
	uintptr_t base;
};

static int find_lib(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct found *f = arg;
	const char *slash = strrchr(info->dlpi_name, '/');

	(void)size;
	if (!info->dlpi_name[0] || strcmp(slash ? slash + 1 : info->dlpi_name, f->want))
		return 0;
	snprintf(f->path, sizeof(f->path), "%s", info->dlpi_name);
	f->base = (uintptr_t)info->dlpi_addr;
	return 1;
}

struct reason {
	char text[96];
	unsigned int n;
};

/* The reason with its addresses and names cut off: a class of refusals. */
static void reason_add(struct reason *r, unsigned int *nr, unsigned int max, const char *why)
{
	char key[96];
	size_t i, k = 0;

	for (i = 0; why[i] && k + 1 < sizeof(key); i++) {
		if (why[i] == '0' && why[i + 1] == 'x') {
			key[k++] = 'X';
			for (i += 2; why[i] && strchr("0123456789abcdef", why[i]); i++)
				;
			i--;
		} else if (why[i] == '\'') {
			key[k++] = '\'';
			for (i++; why[i] && why[i] != '\''; i++)
				if (k + 2 < sizeof(key))
					key[k++] = why[i];
			if (why[i])
				key[k++] = '\'';
			else
				i--;
		} else {
			key[k++] = why[i];
		}
	}
	key[k] = 0;
	for (i = 0; i < *nr; i++)
		if (!strcmp(r[i].text, key)) {
			r[i].n++;
			return;
		}
	if (*nr < max) {
		snprintf(r[*nr].text, sizeof(r[*nr].text), "%s", key);
		r[(*nr)++].n = 1;
	}
}

static int cmp_reason(const void *a, const void *b)
{
	const struct reason *x = a, *y = b;

	return x->n < y->n ? 1 : x->n > y->n ? -1 : 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	struct found f = { .want = argc > 1 ? argv[1] : "libc.so.6" };
	static struct reason reasons[256];
	unsigned int nreasons = 0, i, total = 0, int3 = 0, jump = 0;
	const Elf64_Ehdr *eh;
	const Elf64_Shdr *sh, *symtab = NULL;
	uint64_t(*funcs)[2] = NULL; /* value, size */
	size_t nfuncs = 0;
	struct stat st;
	unsigned char *map;
	int fd;

	if (!dl_iterate_phdr(find_lib, &f)) {
		fprintf(stderr, "bench-probe-coverage: %s is not mapped in this process\n", f.want);
		return 1;
	}
	fd = open(f.path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) || st.st_size < (off_t)sizeof(*eh)) {
		fprintf(stderr, "bench-probe-coverage: %s: %s\n", f.path, strerror(errno));
		return 1;
	}
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return 1;
	eh = (const Elf64_Ehdr *)map;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_shentsize != sizeof(Elf64_Shdr) ||
	    eh->e_shoff + (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr) > (uint64_t)st.st_size) {
		fprintf(stderr, "bench-probe-coverage: %s: not a 64-bit ELF file\n", f.path);
		return 1;
	}
	sh = (const Elf64_Shdr *)(map + eh->e_shoff);
	for (i = 0; i < eh->e_shnum; i++)
		if (sh[i].sh_type == SHT_SYMTAB || (sh[i].sh_type == SHT_DYNSYM && !symtab))
			symtab = &sh[i];
	if (!symtab || symtab->sh_offset + symtab->sh_size > (uint64_t)st.st_size ||
	    symtab->sh_entsize != sizeof(Elf64_Sym)) {
		fprintf(stderr, "bench-probe-coverage: %s: no symbol table\n", f.path);
		return 1;
	}
	funcs = calloc(symtab->sh_size / sizeof(Elf64_Sym) + 1, sizeof(*funcs));
	if (!funcs)
		return 1;
	for (i = 0; i < symtab->sh_size / sizeof(Elf64_Sym); i++) {
		const Elf64_Sym *sym = (const Elf64_Sym *)(map + symtab->sh_offset) + i;

		if (ELF64_ST_TYPE(sym->st_info) != STT_FUNC || sym->st_shndx == SHN_UNDEF ||
		    !sym->st_size || !sym->st_value)
			continue;
		funcs[nfuncs][0] = sym->st_value;
		funcs[nfuncs++][1] = sym->st_size;
	}
	qsort(funcs, nfuncs, sizeof(*funcs), cmp_u64);
	for (i = 0; i < nfuncs; i++) {
		uintptr_t a = f.base + funcs[i][0];
		size_t len = funcs[i][1];
		char why[256];

		if (i && funcs[i][0] == funcs[i - 1][0])
			continue; /* aliases: one function */
		total++;
		if (fdr_probe_check(a, len, a, why, sizeof(why)) < 0) {
			reason_add(reasons, &nreasons, 256, why);
			continue;
		}
		int3++;
		if (fdr_probe_jump_check(a, len, a, why, sizeof(why)) < 0) {
			reason_add(reasons, &nreasons, 256, why);
			continue;
		}
		jump++;
	}
	if (!total) {
		fprintf(stderr, "bench-probe-coverage: %s: no function symbols\n", f.path);
		return 1;
	}
	qsort(reasons, nreasons, sizeof(reasons[0]), cmp_reason);
	fprintf(stderr,
		"bench-probe-coverage: %s (%s): %u functions, %u take a breakpoint at their "
		"entry, %u a jump\n",
		f.path, symtab->sh_type == SHT_SYMTAB ? ".symtab" : ".dynsym", total, int3, jump);
	for (i = 0; i < nreasons && i < 8; i++)
		fprintf(stderr, "bench-probe-coverage:   %5u  %s\n", reasons[i].n, reasons[i].text);
	printf("METRIC probe_optimized_pct fdr=%.1f\n", 100.0 * jump / total);
	return 0;
}
