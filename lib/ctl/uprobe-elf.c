// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * uprobe-elf.c - PATH:SYMBOL[+OFFS] to a file offset (fdr's uprobe_events extension).
 *
 * The kernel's uprobe offset is a FILE offset in PATH. A symbol's st_value is a
 * virtual address; the PT_LOAD program header that holds it maps it back:
 *
 *   offset = st_value + OFFS - p_vaddr + p_offset   (p_vaddr <= st_value < p_vaddr + p_filesz)
 *
 * For a PIE or a shared library p_vaddr is usually p_offset for the text segment,
 * for a non-PIE executable it is 0x400000 higher: nm prints the address, the
 * probe needs the offset.
 *
 * The file is hostile input (any user can name any file): it is read with
 * pread() into bounded buffers, never mapped, and every header field is checked
 * against the file's size before it is used. .symtab is searched first, then
 * .dynsym (a stripped library still has its exports); functions only (STT_FUNC),
 * defined ones. A GNU indirect function (STT_GNU_IFUNC) is a resolver whose
 * choice is made at run time from the CPU's features: fdr cannot know it
 * without running code of the file, so it refuses and says so.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctl/uprobe.h"
#include "common/pread-all.h"

#define ELF_MAX_PHDRS 4096
#define ELF_MAX_TABLE (256u << 20) /* a symbol or string table larger than this is refused */

static int elf_fail(struct fdr_uprobe_err *err, int code, const char *msg, int pos)
{
	if (err) {
		err->code = code;
		err->msg = msg;
		err->pos = pos;
	}
	return code;
}

struct elf_hit {
	int found; /* 0 none, 1 one, 2 ambiguous locals */
	int global;
	int ifunc;
	uint64_t value, size;
};

/* Search one symbol table section (@sh) whose strings are in section sh_link. */
static int elf_search(int fd, uint64_t fsize, const Elf64_Shdr *shdrs, uint32_t shnum,
		      const Elf64_Shdr *sh, const char *name, struct elf_hit *hit)
{
	const Elf64_Shdr *st;
	Elf64_Sym *syms = NULL;
	char *strs = NULL;
	size_t nlen = strlen(name);
	uint64_t i, n;
	int ret = -EINVAL;

	if (sh->sh_entsize != sizeof(Elf64_Sym) || sh->sh_link >= shnum ||
	    sh->sh_size > ELF_MAX_TABLE)
		return -EINVAL;
	st = &shdrs[sh->sh_link];
	if (st->sh_type != SHT_STRTAB || st->sh_size > ELF_MAX_TABLE || !st->sh_size)
		return -EINVAL;
	n = sh->sh_size / sizeof(Elf64_Sym);
	syms = malloc(n ? n * sizeof(Elf64_Sym) : 1);
	strs = malloc(st->sh_size + 1);
	if (!syms || !strs) {
		ret = -ENOMEM;
		goto out;
	}
	if (fdr_pread_all(fd, fsize, sh->sh_offset, syms, n * sizeof(Elf64_Sym)) ||
	    fdr_pread_all(fd, fsize, st->sh_offset, strs, st->sh_size))
		goto out;
	strs[st->sh_size] = 0;
	for (i = 0; i < n; i++) {
		const Elf64_Sym *s = &syms[i];
		unsigned type = ELF64_ST_TYPE(s->st_info), bind = ELF64_ST_BIND(s->st_info);
		int global = bind == STB_GLOBAL || bind == STB_WEAK;

		if ((type != STT_FUNC && type != STT_GNU_IFUNC) || s->st_shndx == SHN_UNDEF ||
		    s->st_name >= st->sh_size)
			continue;
		if (strncmp(strs + s->st_name, name, nlen + 1) != 0)
			continue;
		if (hit->found && hit->global && !global)
			continue;
		if (hit->found && !(global && !hit->global)) {
			if (hit->value != s->st_value && !global && !hit->global)
				hit->found = 2; /* two different static functions of that name */
			continue;
		}
		hit->found = 1;
		hit->global = global;
		hit->ifunc = type == STT_GNU_IFUNC;
		hit->value = s->st_value;
		hit->size = s->st_size;
	}
	ret = 0;
out:
	free(syms);
	free(strs);
	return ret;
}

/**
 * fdr_uprobe_resolve - turn a PATH:SYMBOL[+OFFS] place into its file offset
 * @c: a command fdr_uprobe_parse() accepted; nothing is done if it named an
 *     offset. On success c->offset is set, and the default event name if the
 *     line gave none.
 * @err: the message on failure (position: the place)
 *
 * Returns 0, -ENOENT (no such function), -EINVAL (not a 64-bit ELF file, a
 * malformed one, an offset past the function, a symbol outside every loaded
 * segment, two static functions of that name), -EOPNOTSUPP (an IFUNC), -EIO,
 * -ENOMEM.
 */
int fdr_uprobe_resolve(struct fdr_uprobe_cmd *c, struct fdr_uprobe_err *err)
{
	Elf64_Ehdr eh;
	Elf64_Shdr *shdrs = NULL;
	Elf64_Phdr *phdrs = NULL;
	struct elf_hit hit = { 0 };
	struct stat st;
	uint64_t target, fsize;
	uint32_t i;
	int fd, ret, pos = c->path_pos;

	if (c->op != FDR_UPROBE_ADD || !c->symbol[0])
		return 0;
	fd = open(c->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return elf_fail(err, -errno, "Failed to find the given file", pos);
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		ret = elf_fail(err, -EINVAL, "Not a regular file", pos);
		goto out;
	}
	fsize = (uint64_t)st.st_size;
	c->dev = (uint64_t)st.st_dev; /* the file the offset is read from */
	c->ino = (uint64_t)st.st_ino;
	ret = elf_fail(err, -EINVAL, "Not a 64-bit little-endian ELF file", pos);
	if (fdr_pread_all(fd, fsize, 0, &eh, sizeof(eh)) || memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB)
		goto out;
	ret = elf_fail(err, -EINVAL, "Malformed ELF headers", pos);
	/* e_shnum 0: none, or more than 0xff00 sections (SHN_XINDEX): refused */
	if (eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shnum == 0 ||
	    eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum == 0 || eh.e_phnum > ELF_MAX_PHDRS)
		goto out;
	shdrs = malloc(eh.e_shnum * sizeof(Elf64_Shdr));
	phdrs = malloc(eh.e_phnum * sizeof(Elf64_Phdr));
	if (!shdrs || !phdrs) {
		ret = elf_fail(err, -ENOMEM, "Out of memory", pos);
		goto out;
	}
	if (fdr_pread_all(fd, fsize, eh.e_shoff, shdrs,
			  (uint64_t)eh.e_shnum * sizeof(Elf64_Shdr)) ||
	    fdr_pread_all(fd, fsize, eh.e_phoff, phdrs, (uint64_t)eh.e_phnum * sizeof(Elf64_Phdr)))
		goto out;
	/* .symtab first (every function), then .dynsym (the exports of a stripped file) */
	for (i = 0; i < eh.e_shnum && !hit.found; i++)
		if (shdrs[i].sh_type == SHT_SYMTAB &&
		    elf_search(fd, fsize, shdrs, eh.e_shnum, &shdrs[i], c->symbol, &hit))
			goto out;
	for (i = 0; i < eh.e_shnum && !hit.found; i++)
		if (shdrs[i].sh_type == SHT_DYNSYM &&
		    elf_search(fd, fsize, shdrs, eh.e_shnum, &shdrs[i], c->symbol, &hit))
			goto out;
	if (!hit.found) {
		ret = elf_fail(err, -ENOENT, "Failed to find the given function symbol", pos);
		goto out;
	}
	if (hit.found == 2) {
		ret = elf_fail(err, -EINVAL,
			       "Several static functions have this name: use PATH:OFFSET", pos);
		goto out;
	}
	if (hit.ifunc) {
		ret = elf_fail(err, -EOPNOTSUPP,
			       "The symbol is an IFUNC, resolved at run time: probe its "
			       "implementation by name or offset",
			       pos);
		goto out;
	}
	if (hit.size && c->sym_offset >= hit.size) {
		ret = elf_fail(err, -EINVAL, "Offset is beyond the function's size", pos);
		goto out;
	}
	target = hit.value + c->sym_offset;
	if (target < hit.value)
		goto out;
	for (i = 0; i < eh.e_phnum; i++) {
		const Elf64_Phdr *p = &phdrs[i];

		if (p->p_type != PT_LOAD || target < p->p_vaddr ||
		    target - p->p_vaddr >= p->p_filesz || p->p_offset > fsize)
			continue;
		c->offset = target - p->p_vaddr + p->p_offset;
		if (c->offset >= fsize)
			break;
		if (!c->event[0])
			fdr_uprobe_default_event(c);
		ret = 0;
		goto out;
	}
	ret = elf_fail(err, -EINVAL, "The symbol is not in a loaded segment of the file", pos);
out:
	free(shdrs);
	free(phdrs);
	close(fd);
	return ret;
}
