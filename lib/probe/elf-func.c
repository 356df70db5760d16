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
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "probe-agent.h"
#include "common/pread-all.h"

#define ELF_MAX_PHDRS 4096
#define ELF_MAX_SHDRS 65280 /* below SHN_LORESERVE */
#define ELF_CHUNK 1024 /* symbols read at once */

/*
 * Call @fn for each defined STT_FUNC symbol of non-zero size of one symbol
 * table, in file order, until it returns non-zero. That value (1: stop), 0
 * at the end, or < 0 (the table does not fit the file: -EINVAL; -EIO; -ENOMEM).
 */
static int ef_scan(int fd, uint64_t fsize, const Elf64_Shdr *sh,
		   int (*fn)(void *ctx, const Elf64_Sym *s), void *ctx)
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
		for (i = 0; i < k && ret == 0; i++)
			if (ELF64_ST_TYPE(syms[i].st_info) == STT_FUNC &&
			    syms[i].st_shndx != SHN_UNDEF && syms[i].st_size)
				ret = fn(ctx, &syms[i]);
		done += k;
	}
	free(syms);
	return ret;
}

struct ef_find {
	uint64_t vaddr, start, len;
};

static int ef_find_one(void *ctx, const Elf64_Sym *s)
{
	struct ef_find *f = ctx;

	if (f->vaddr < s->st_value || f->vaddr - s->st_value >= s->st_size)
		return 0;
	f->start = s->st_value;
	f->len = s->st_size;
	return 1;
}

/*
 * The ELF header of the file of @fsize bytes, checked, and its program and
 * section headers (malloc()ed, the caller frees them). 0, -EINVAL or -ENOMEM.
 */
static int ef_headers(int fd, uint64_t fsize, Elf64_Ehdr *eh, Elf64_Phdr **php, Elf64_Shdr **shp)
{
	/* the ELF header and, in most files, the program headers after it: one read */
	unsigned char head[4096] __attribute__((aligned(8)));
	uint64_t hlen = fsize < sizeof(head) ? fsize : sizeof(head);
	Elf64_Phdr *ph;
	Elf64_Shdr *sh;

	*php = NULL;
	*shp = NULL;
	if (hlen < sizeof(*eh) || fdr_pread_all(fd, fsize, 0, head, hlen))
		return -EINVAL;
	memcpy(eh, head, sizeof(*eh));
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_ident[EI_DATA] != ELFDATA2LSB || eh->e_phentsize != sizeof(Elf64_Phdr) ||
	    !eh->e_phnum || eh->e_phnum > ELF_MAX_PHDRS ||
	    (eh->e_shnum && eh->e_shentsize != sizeof(Elf64_Shdr)) || eh->e_shnum > ELF_MAX_SHDRS)
		return -EINVAL;
	ph = malloc(eh->e_phnum * sizeof(*ph));
	sh = malloc((eh->e_shnum ? eh->e_shnum : 1) * sizeof(*sh));
	if (!ph || !sh) {
		free(ph);
		free(sh);
		return -ENOMEM;
	}
	if (eh->e_phoff <= hlen && (uint64_t)eh->e_phnum * sizeof(*ph) <= hlen - eh->e_phoff)
		memcpy(ph, head + eh->e_phoff, (uint64_t)eh->e_phnum * sizeof(*ph));
	else if (fdr_pread_all(fd, fsize, eh->e_phoff, ph, (uint64_t)eh->e_phnum * sizeof(*ph)))
		goto bad;
	if (fdr_pread_all(fd, fsize, eh->e_shoff, sh, (uint64_t)eh->e_shnum * sizeof(*sh)))
		goto bad;
	*php = ph;
	*shp = sh;
	return 0;
bad:
	free(ph);
	free(sh);
	return -EINVAL;
}

/* @offset's virtual address by the first PT_LOAD header that holds it; 0 or -EINVAL */
static int ef_vaddr(const Elf64_Phdr *ph, uint32_t nph, uint64_t offset, uint64_t *va)
{
	uint32_t i;

	for (i = 0; i < nph; i++) {
		if (ph[i].p_type != PT_LOAD || offset < ph[i].p_offset ||
		    offset - ph[i].p_offset >= ph[i].p_filesz)
			continue;
		*va = offset - ph[i].p_offset + ph[i].p_vaddr;
		return 0;
	}
	return -EINVAL;
}

static int ef_stat(int fd, const struct stat **st, struct stat *own)
{
	if (!*st && fstat(fd, own))
		return -EINVAL;
	if (!*st)
		*st = own;
	return S_ISREG((*st)->st_mode) ? 0 : -EINVAL;
}

/**
 * fdr_elf_func_at_uncached - the function of an ELF file that holds a file
 * offset, read from the file at each call (fdr_elf_func_at() without its table)
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
int fdr_elf_func_at_uncached(int fd, const struct stat *st, uint64_t offset, uint64_t *vaddr,
			     uint64_t *func, uint64_t *func_len)
{
	Elf64_Ehdr eh;
	Elf64_Phdr *ph;
	Elf64_Shdr *sh;
	struct stat own;
	struct ef_find f = { 0 };
	uint64_t fsize;
	uint32_t i;
	int ret, pass;

	ret = ef_stat(fd, &st, &own);
	if (ret)
		return ret;
	fsize = (uint64_t)st->st_size;
	ret = ef_headers(fd, fsize, &eh, &ph, &sh);
	if (ret)
		return ret;
	ret = ef_vaddr(ph, eh.e_phnum, offset, &f.vaddr);
	if (ret)
		goto out;
	*vaddr = f.vaddr;
	ret = -ENOENT;
	/* .symtab first (every function), then .dynsym (a stripped file's exports) */
	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < eh.e_shnum; i++) {
			int r;

			if (sh[i].sh_type != (pass ? SHT_DYNSYM : SHT_SYMTAB))
				continue;
			r = ef_scan(fd, fsize, &sh[i], ef_find_one, &f);
			if (r < 0) {
				ret = r;
				goto out;
			}
			if (r > 0) {
				*func = f.start;
				*func_len = f.len;
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

/* ---- the table: each file's functions read once ------------------------------------------ */

/*
 * A file's PT_LOAD headers and function symbols, sorted by address, so that
 * arming many locations in one object reads its symbols once instead of at
 * each location (libc.so.6's .dynsym took 130 us a lookup on the development
 * VM, libLLVM-14's 1.2 ms). Kept for EF_FILES files, the least recently used
 * replaced, each with the identity of the file it was read from (device,
 * inode, size, mtime, ctime: a file rewritten in place is read again).
 */
#define EF_FILES 4
#define EF_MAX_FUNCS (128 * 1024) /* 4 MiB a table; a larger file is searched as before */

struct ef_fn {
	uint64_t start, len;
	uint64_t order; /* the uncached search's order: .symtab's first, each in file order */
};

struct ef_table {
	int used; /* the file was looked up before (identity below) */
	int read; /* and its functions are in the table */
	uint64_t lru;
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtim, ctim;
	uint32_t nph;
	Elf64_Phdr *ph;
	uint32_t nfn;
	struct ef_fn *fn; /* by start */
	uint64_t *maxend; /* maxend[i]: the largest end of fn[0..i] */
};

static struct ef_table ef_tables[EF_FILES];
static uint64_t ef_clock;
static pthread_mutex_t ef_lock = PTHREAD_MUTEX_INITIALIZER;

struct ef_collect {
	struct ef_fn *fn;
	uint32_t n, cap;
	uint64_t order;
	int full;
};

static int ef_collect_one(void *ctx, const Elf64_Sym *s)
{
	struct ef_collect *c = ctx;

	if (c->n == c->cap) {
		uint32_t cap = c->cap ? c->cap * 2 : 1024;
		struct ef_fn *fn;

		if (cap > EF_MAX_FUNCS || !(fn = realloc(c->fn, cap * sizeof(*fn)))) {
			c->full = 1;
			return 1;
		}
		c->fn = fn;
		c->cap = cap;
	}
	c->fn[c->n].start = s->st_value;
	c->fn[c->n].len = s->st_size;
	c->fn[c->n].order = c->order++;
	c->n++;
	return 0;
}

static int ef_by_start(const void *a, const void *b)
{
	const struct ef_fn *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static void ef_table_free(struct ef_table *t)
{
	free(t->ph);
	free(t->fn);
	free(t->maxend);
	memset(t, 0, sizeof(*t));
}

/*
 * Read file @fd (@st) into @t: 0; 1 if it has more functions than a table
 * keeps, or no memory to hold them; < 0 as the uncached search.
 */
static int ef_table_read(int fd, const struct stat *st, struct ef_table *t)
{
	struct ef_collect c = { 0 };
	Elf64_Ehdr eh;
	Elf64_Shdr *sh;
	uint64_t fsize = (uint64_t)st->st_size, end;
	uint32_t i;
	int ret, pass;

	ret = ef_headers(fd, fsize, &eh, &t->ph, &sh);
	if (ret)
		return ret;
	t->nph = eh.e_phnum;
	for (pass = 0; pass < 2 && !ret; pass++)
		for (i = 0; i < eh.e_shnum && !ret; i++)
			if (sh[i].sh_type == (pass ? SHT_DYNSYM : SHT_SYMTAB))
				ret = ef_scan(fd, fsize, &sh[i], ef_collect_one, &c);
	free(sh);
	if (ret == 0 && c.n) {
		qsort(c.fn, c.n, sizeof(*c.fn), ef_by_start);
		t->maxend = malloc(c.n * sizeof(*t->maxend));
		if (!t->maxend)
			ret = -ENOMEM;
		for (i = 0, end = 0; t->maxend && i < c.n; i++) {
			uint64_t e = c.fn[i].start + c.fn[i].len;

			/* an end past 2^64 (a hostile size) counts as the top */
			end = e < c.fn[i].start ? UINT64_MAX : e > end ? e : end;
			t->maxend[i] = end;
		}
	}
	t->fn = c.fn;
	t->nfn = c.n;
	if (ret > 0) /* stopped by ef_collect_one(): too many, or no memory to grow */
		ret = 1;
	return ret;
}

/* The function of @t holding @va, the uncached search's answer; 0 or -ENOENT. */
static int ef_table_find(const struct ef_table *t, uint64_t va, uint64_t *func, uint64_t *len)
{
	const struct ef_fn *best = NULL;
	uint32_t lo = 0, hi = t->nfn;

	/* the first entry that starts after va: those before it may hold it */
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (t->fn[mid].start <= va)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* back while an entry at or before this one ends past va */
	while (lo > 0 && t->maxend[lo - 1] > va) {
		const struct ef_fn *f = &t->fn[--lo];

		if (va - f->start < f->len && (!best || f->order < best->order))
			best = f;
	}
	if (!best)
		return -ENOENT;
	*func = best->start;
	*len = best->len;
	return 0;
}

static int ef_same_file(const struct ef_table *t, const struct stat *st)
{
	return t->used && t->dev == st->st_dev && t->ino == st->st_ino && t->size == st->st_size &&
	       t->mtim.tv_sec == st->st_mtim.tv_sec && t->mtim.tv_nsec == st->st_mtim.tv_nsec &&
	       t->ctim.tv_sec == st->st_ctim.tv_sec && t->ctim.tv_nsec == st->st_ctim.tv_nsec;
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
 * The answer of fdr_elf_func_at_uncached(), from a table of the file's
 * functions read at the second call for that file (above). Another thread
 * using the tables (or one that held them when the process forked) makes
 * this call search the file itself rather than wait, and so does a file that
 * has more than EF_MAX_FUNCS functions or does not check out. Returns as
 * fdr_elf_func_at_uncached().
 */
int fdr_elf_func_at(int fd, const struct stat *st, uint64_t offset, uint64_t *vaddr, uint64_t *func,
		    uint64_t *func_len)
{
	struct ef_table *t = NULL;
	struct stat own;
	uint64_t va;
	int ret, k;

	ret = ef_stat(fd, &st, &own);
	if (ret)
		return ret;
	if (pthread_mutex_trylock(&ef_lock))
		return fdr_elf_func_at_uncached(fd, st, offset, vaddr, func, func_len);
	for (k = 0; k < EF_FILES && !t; k++)
		if (ef_same_file(&ef_tables[k], st))
			t = &ef_tables[k];
	if (!t) {
		/*
		 * A file's first lookup searches it, as before (reading the table
		 * costs 2 to 3 such searches, the most of it the first touch of its
		 * memory: a probe's first arm would wait for it); its identity is
		 * kept in a free entry, else in the least recently used one.
		 */
		t = &ef_tables[0];
		for (k = 0; k < EF_FILES; k++)
			if (!ef_tables[k].used || (t->used && ef_tables[k].lru < t->lru))
				t = &ef_tables[k];
		ef_table_free(t);
		t->used = 1;
		t->dev = st->st_dev;
		t->ino = st->st_ino;
		t->size = st->st_size;
		t->mtim = st->st_mtim;
		t->ctim = st->st_ctim;
		t->lru = ++ef_clock;
		pthread_mutex_unlock(&ef_lock);
		return fdr_elf_func_at_uncached(fd, st, offset, vaddr, func, func_len);
	}
	/*
	 * the second: the table. A file with too many functions, or one that does
	 * not check out, is searched as before each time (which may find a
	 * function in a symbol table read before the part that is wrong)
	 */
	if (!t->read && ef_table_read(fd, st, t)) {
		ef_table_free(t);
		pthread_mutex_unlock(&ef_lock);
		return fdr_elf_func_at_uncached(fd, st, offset, vaddr, func, func_len);
	}
	t->read = 1;
	t->lru = ++ef_clock;
	ret = ef_vaddr(t->ph, t->nph, offset, &va);
	if (!ret) {
		*vaddr = va;
		ret = ef_table_find(t, va, func, func_len);
	}
	pthread_mutex_unlock(&ef_lock);
	return ret;
}
