// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * elf-func.c - which function of an ELF file holds a file offset (the probe
 * agent's side of a probe location).
 *
 * A probe names a FILE offset (uprobe_events' PATH:OFFSET, or a symbol the
 * control side turned into one: lib/ctl/uprobe-elf.c, name to offset). Before
 * it arms, the agent needs the other direction: the bounds of the function that
 * contains the offset, so that fdr_probe_check() can decode from the function's
 * first byte and confirm an instruction boundary. The PT_LOAD header that holds
 * the offset maps it to a virtual address:
 *
 *   vaddr = offset - p_offset + p_vaddr    (p_offset <= offset < p_offset + p_filesz)
 *
 * and the function is the defined STT_FUNC symbol of .symtab, else of .dynsym,
 * with st_value <= vaddr < st_value + st_size.
 *
 * The file is hostile input: read with pread() into bounded buffers (symbols in
 * chunks of ELF_CHUNK entries, no string table at all), never mapped, and every
 * header field checked against the file's size before it is used.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "probe-agent.h"
#include "common/pread-all.h"

#define ELF_MAX_PHDRS 4096
#define ELF_MAX_SHDRS 65280 /* below SHN_LORESERVE */
#define ELF_CHUNK 1024 /* symbols read at once */

/* Search one symbol table for the function holding @vaddr. 1 found, 0 not, < 0 error. */
static int ef_search(int fd, uint64_t fsize, const Elf64_Shdr *sh, uint64_t vaddr, uint64_t *start,
		     uint64_t *len)
{
	Elf64_Sym *syms;
	uint64_t n, i, done = 0;
	int ret = 0;

	if (sh->sh_entsize != sizeof(Elf64_Sym) || sh->sh_offset > fsize ||
	    sh->sh_size > fsize - sh->sh_offset)
		return -EINVAL;
	n = sh->sh_size / sizeof(Elf64_Sym);
	syms = malloc(ELF_CHUNK * sizeof(Elf64_Sym));
	if (!syms)
		return -ENOMEM;
	while (done < n && ret == 0) {
		uint64_t k = n - done < ELF_CHUNK ? n - done : ELF_CHUNK;

		if (fdr_pread_all(fd, fsize, sh->sh_offset + done * sizeof(Elf64_Sym), syms,
				  k * sizeof(Elf64_Sym))) {
			ret = -EIO;
			break;
		}
		for (i = 0; i < k; i++) {
			const Elf64_Sym *s = &syms[i];

			if (ELF64_ST_TYPE(s->st_info) != STT_FUNC || s->st_shndx == SHN_UNDEF ||
			    !s->st_size || vaddr < s->st_value || vaddr - s->st_value >= s->st_size)
				continue;
			*start = s->st_value;
			*len = s->st_size;
			ret = 1;
			break;
		}
		done += k;
	}
	free(syms);
	return ret;
}

/**
 * fdr_elf_func_at - the function of an ELF file that holds a file offset
 * @fd: the file, open for reading
 * @st: its fstat(), or NULL (then fstat()ed here)
 * @offset: a file offset inside a loaded segment
 * @vaddr: its virtual address in the file's own numbering (out)
 * @func: the function's st_value, same numbering (out)
 * @func_len: its st_size (out)
 *
 * Returns 0; -ENOENT if no function symbol holds the offset (stripped file,
 * code outside any symbol); -EINVAL if the file is not a well-formed 64-bit
 * little-endian ELF file or the offset is in no PT_LOAD segment; -EIO; -ENOMEM.
 */
int fdr_elf_func_at(int fd, const struct stat *st, uint64_t offset, uint64_t *vaddr, uint64_t *func,
		    uint64_t *func_len)
{
	/* the ELF header and, in most files, the program headers after it: one read */
	unsigned char head[4096] __attribute__((aligned(8)));
	Elf64_Ehdr eh;
	Elf64_Phdr *ph = NULL;
	Elf64_Shdr *sh = NULL;
	struct stat own;
	uint64_t fsize, hlen, va = 0;
	uint32_t i;
	int ret = -EINVAL, found = 0, pass;

	if (!st && fstat(fd, &own))
		return -EINVAL;
	if (!st)
		st = &own;
	if (!S_ISREG(st->st_mode))
		return -EINVAL;
	fsize = (uint64_t)st->st_size;
	hlen = fsize < sizeof(head) ? fsize : sizeof(head);
	if (hlen < sizeof(eh) || fdr_pread_all(fd, fsize, 0, head, hlen))
		return -EINVAL;
	memcpy(&eh, head, sizeof(eh));
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_ident[EI_DATA] != ELFDATA2LSB || eh.e_phentsize != sizeof(Elf64_Phdr) ||
	    !eh.e_phnum || eh.e_phnum > ELF_MAX_PHDRS ||
	    (eh.e_shnum && eh.e_shentsize != sizeof(Elf64_Shdr)) || eh.e_shnum > ELF_MAX_SHDRS)
		return -EINVAL;
	ph = malloc(eh.e_phnum * sizeof(*ph));
	sh = malloc((eh.e_shnum ? eh.e_shnum : 1) * sizeof(*sh));
	if (!ph || !sh) {
		ret = -ENOMEM;
		goto out;
	}
	if (eh.e_phoff <= hlen && (uint64_t)eh.e_phnum * sizeof(*ph) <= hlen - eh.e_phoff)
		memcpy(ph, head + eh.e_phoff, (uint64_t)eh.e_phnum * sizeof(*ph));
	else if (fdr_pread_all(fd, fsize, eh.e_phoff, ph, (uint64_t)eh.e_phnum * sizeof(*ph)))
		goto out;
	if (fdr_pread_all(fd, fsize, eh.e_shoff, sh, (uint64_t)eh.e_shnum * sizeof(*sh)))
		goto out;
	for (i = 0; i < eh.e_phnum; i++) {
		if (ph[i].p_type != PT_LOAD || offset < ph[i].p_offset ||
		    offset - ph[i].p_offset >= ph[i].p_filesz)
			continue;
		va = offset - ph[i].p_offset + ph[i].p_vaddr;
		found = 1;
		break;
	}
	if (!found)
		goto out;
	*vaddr = va;
	ret = -ENOENT;
	/* .symtab first (every function), then .dynsym (a stripped file's exports) */
	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < eh.e_shnum; i++) {
			int r;

			if (sh[i].sh_type != (pass ? SHT_DYNSYM : SHT_SYMTAB))
				continue;
			r = ef_search(fd, fsize, &sh[i], va, func, func_len);
			if (r < 0) {
				ret = r;
				goto out;
			}
			if (r > 0) {
				ret = 0;
				goto out;
			}
		}
	}
out:
	free(ph);
	free(sh);
	return ret;
}
