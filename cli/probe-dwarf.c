// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * probe-dwarf.c - perf probe definitions to uprobe_events lines, through the
 * DWARF debug information of the probed file (elfutils' libdw).
 *
 * perf probe is the reference: for the same definition and the same file,
 * fdr probe must write the same place and the same fetch arguments (the
 * integration test probe-perf.sh compares them, definition by definition).
 * So the rules here are perf's, in its order (docs/design/fdr-probe.md):
 *
 * Places. Every compilation unit (CU) is searched (a static function may be
 * in several). FUNC is the first function definition of that name in the
 * CU's DIE order: a function with code probes at its entry address, an
 * inline-only one at every inlined instance (and its out-of-line copy). For
 * FUNC with C-variable arguments in a CU built without optimisation (no
 * location lists in it) the prologue is skipped, as perf does: the address of
 * the line-table row after the row of the entry address. FUNC:N is line
 * decl_line + N of the function's file, FILE:N line N: every line-table row
 * that starts a statement on that line, then the declaration lines of the
 * CU's functions and the call lines of its inlined calls; each place in the
 * scope that names the function (FUNC:N) or the innermost one around it.
 *
 * Arguments. A C name is looked up in the scope at the probe address, then
 * among the CU's globals. Its DW_AT_location at that address (an entry of a
 * location list for optimised code; none there: optimised out, an error)
 * gives the fetch: DW_OP_regN a register, DW_OP_bregN/DW_OP_fbreg a memory
 * load at an offset from one. The frame base is DW_AT_frame_base at the
 * address, DW_OP_call_frame_cfa through the call frame information
 * (.eh_frame, else .debug_frame). Members add offsets, "->" and indexes
 * through pointers add a load. The type is perf's: sN for signed base types,
 * xN for everything else of N <= 64 bits (pointers are x64), none when the
 * size is unknown (arrays); ":string" on a char pointer loads the pointer.
 *
 * Where fdr differs (deliberately): a global variable is "@+OFFSET" (a file
 * offset, what a uprobe takes), not perf's "@SYMBOL+0", which the kernel's
 * uprobes refuse.
 *
 * The file is hostile input: libelf and libdw check what they read; the
 * offsets found are checked against the file's program headers.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <gelf.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "probe-dwarf.h"

struct pd_bin {
	char *path;
	int fd, dfd;
	Elf *elf, *delf; /* the file; the file holding the debug info (may be elf) */
	Dwarf *dw; /* NULL: no debug information */
	Dwarf_CFI *cfi; /* .eh_frame of the file, else .debug_frame; may be NULL */
	int cfi_elf; /* cfi is dwarf_getcfi_elf()'s (to be ended) */
	char *debug_file;
	char where[2048];
};

static int pd_fail(struct pd_err *err, int code, int pos, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int pd_fail(struct pd_err *err, int code, int pos, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	err->pos = pos;
	err->usage = 0;
	return code;
}

/* ---- opening: the file, then its debug information ----------------------------------- */

static int has_debug_info(Elf *elf)
{
	GElf_Ehdr eh;
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (!gelf_getehdr(elf, &eh) || elf_getshdrstrndx(elf, &shstrndx))
		return 0;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh))
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (name && !strcmp(name, ".debug_info") && sh.sh_type != SHT_NOBITS)
			return 1;
	}
	return 0;
}

static void where_add(struct pd_bin *b, const char *what)
{
	size_t len = strlen(b->where);

	snprintf(b->where + len, sizeof(b->where) - len, "%s%s", len ? ", " : "", what);
}

/* Try @file as the debug information of @b; 1 when taken. */
static int try_debug_file(struct pd_bin *b, const char *file)
{
	int fd;
	Elf *elf;
	Dwarf *dw;

	where_add(b, file);
	fd = open(file, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF || !has_debug_info(elf)) {
		if (elf)
			elf_end(elf);
		close(fd);
		return 0;
	}
	dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
	if (!dw) {
		elf_end(elf);
		close(fd);
		return 0;
	}
	b->dfd = fd;
	b->delf = elf;
	b->dw = dw;
	b->debug_file = strdup(file);
	return 1;
}

static void find_debug_info(struct pd_bin *b)
{
	const void *id;
	ssize_t idlen;
	const char *link;
	GElf_Word crc;
	char file[8192], dir[4096], *slash;

	where_add(b, b->path);
	if (has_debug_info(b->elf)) {
		b->dw = dwarf_begin_elf(b->elf, DWARF_C_READ, NULL);
		if (b->dw) {
			b->delf = b->elf;
			b->debug_file = strdup(b->path);
			return;
		}
	}
	idlen = dwelf_elf_gnu_build_id(b->elf, &id);
	if (idlen > 1 && idlen <= 64) {
		const unsigned char *p = id;
		size_t n;
		ssize_t i;

		n = (size_t)snprintf(file, sizeof(file), "/usr/lib/debug/.build-id/%02x/", p[0]);
		for (i = 1; i < idlen; i++)
			n += (size_t)snprintf(file + n, sizeof(file) - n, "%02x", p[i]);
		snprintf(file + n, sizeof(file) - n, ".debug");
		if (try_debug_file(b, file))
			return;
	}
	link = dwelf_elf_gnu_debuglink(b->elf, &crc);
	if (link && *link && !strchr(link, '/')) {
		snprintf(dir, sizeof(dir), "%s", b->path);
		slash = strrchr(dir, '/');
		if (slash)
			slash[1] = 0;
		else
			strcpy(dir, "./");
		snprintf(file, sizeof(file), "%s%s", dir, link);
		if (strcmp(file, b->path) && try_debug_file(b, file))
			return;
		snprintf(file, sizeof(file), "%s.debug/%s", dir, link);
		if (try_debug_file(b, file))
			return;
		snprintf(file, sizeof(file), "/usr/lib/debug%s%s", dir, link);
		if (try_debug_file(b, file))
			return;
	}
}

int pd_open(const char *path, struct pd_bin **out, struct pd_err *err)
{
	struct pd_bin *b;
	GElf_Ehdr eh;
	struct stat st;

	*out = NULL;
	elf_version(EV_CURRENT);
	b = calloc(1, sizeof(*b));
	if (!b)
		return pd_fail(err, -ENOMEM, -1, "out of memory");
	b->dfd = -1;
	b->path = strdup(path);
	b->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (b->fd < 0) {
		int e = errno;

		pd_close(b);
		return pd_fail(err, -e, -1, "%s: %s", path, strerror(e));
	}
	if (fstat(b->fd, &st) || !S_ISREG(st.st_mode)) {
		pd_close(b);
		return pd_fail(err, -EINVAL, -1, "%s: not a regular file", path);
	}
	b->elf = elf_begin(b->fd, ELF_C_READ_MMAP, NULL);
	if (!b->elf || elf_kind(b->elf) != ELF_K_ELF || !gelf_getehdr(b->elf, &eh) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_machine != EM_X86_64) {
		pd_close(b);
		return pd_fail(
			err, -ENOEXEC, -1,
			"%s: not an x86-64 ELF file (expected an executable or a shared library)",
			path);
	}
	find_debug_info(b);
	{
		/* perf's choice: .eh_frame of the file when it has one */
		Elf_Scn *scn = NULL;
		size_t shstrndx;

		if (!elf_getshdrstrndx(b->elf, &shstrndx))
			while ((scn = elf_nextscn(b->elf, scn))) {
				GElf_Shdr sh;
				const char *name;

				if (!gelf_getshdr(scn, &sh))
					continue;
				name = elf_strptr(b->elf, shstrndx, sh.sh_name);
				if (name && !strcmp(name, ".eh_frame") &&
				    sh.sh_type == SHT_PROGBITS) {
					b->cfi = dwarf_getcfi_elf(b->elf);
					b->cfi_elf = !!b->cfi;
					break;
				}
			}
		if (!b->cfi && b->dw)
			b->cfi = dwarf_getcfi(b->dw);
	}
	*out = b;
	return 0;
}

void pd_close(struct pd_bin *b)
{
	if (!b)
		return;
	if (b->cfi && b->cfi_elf)
		dwarf_cfi_end(b->cfi);
	if (b->dw)
		dwarf_end(b->dw);
	if (b->delf && b->delf != b->elf)
		elf_end(b->delf);
	if (b->elf)
		elf_end(b->elf);
	if (b->dfd >= 0)
		close(b->dfd);
	if (b->fd >= 0)
		close(b->fd);
	free(b->debug_file);
	free(b->path);
	free(b);
}

const char *pd_debug_file(const struct pd_bin *b)
{
	return b->dw ? b->debug_file : NULL;
}

const char *pd_debug_where(const struct pd_bin *b)
{
	return b->where;
}

/* ---- addresses to file offsets -------------------------------------------------------- */

/* The PT_LOAD segment of the file that holds @addr; 0 when found. */
static int load_seg(struct pd_bin *b, uint64_t addr, GElf_Phdr *out)
{
	size_t n, i;

	if (elf_getphdrnum(b->elf, &n))
		return -ENOEXEC;
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(b->elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (addr >= ph.p_vaddr && addr - ph.p_vaddr < ph.p_memsz) {
			*out = ph;
			return 0;
		}
	}
	return -ENOENT;
}

static int addr_to_offset(struct pd_bin *b, uint64_t addr, uint64_t *off)
{
	GElf_Phdr ph;

	if (load_seg(b, addr, &ph) || addr - ph.p_vaddr >= ph.p_filesz || !(ph.p_flags & PF_X))
		return -ENOENT;
	*off = addr - ph.p_vaddr + ph.p_offset;
	return 0;
}

/* ---- the symbol table (FUNC and FUNC+OFF without debug information) ------------------ */

/*
 * Every defined symbol (not SHN_UNDEF) of .symtab, then of .dynsym, as perf
 * reads them: @fn gets the symbol and the index of its string table, and stops
 * the walk by returning non-zero, which sym_walk() returns; 0 once all were seen.
 */
static int sym_walk(Elf *elf, int (*fn)(const GElf_Sym *sym, size_t strtab, void *arg), void *arg)
{
	int pass, ret;

	for (pass = 0; pass < 2; pass++) {
		Elf_Scn *scn = NULL;

		while ((scn = elf_nextscn(elf, scn))) {
			GElf_Shdr sh;
			Elf_Data *data;
			size_t i, n;

			if (!gelf_getshdr(scn, &sh) ||
			    sh.sh_type != (pass ? SHT_DYNSYM : SHT_SYMTAB) || !sh.sh_entsize)
				continue;
			data = elf_getdata(scn, NULL);
			if (!data)
				continue;
			n = sh.sh_size / sh.sh_entsize;
			for (i = 0; i < n; i++) {
				GElf_Sym sym;

				if (!gelf_getsym(data, (int)i, &sym) || sym.st_shndx == SHN_UNDEF)
					continue;
				ret = fn(&sym, sh.sh_link, arg);
				if (ret)
					return ret;
			}
		}
	}
	return 0;
}

struct sym_lookup_arg {
	Elf *elf;
	const char *name;
	int want_func;
	GElf_Sym *out;
};

static int sym_lookup_one(const GElf_Sym *sym, size_t strtab, void *arg)
{
	struct sym_lookup_arg *a = arg;
	int type = GELF_ST_TYPE(sym->st_info);
	const char *s;

	if (a->want_func ? type != STT_FUNC : type != STT_OBJECT)
		return 0;
	s = elf_strptr(a->elf, strtab, sym->st_name);
	if (!s || strcmp(s, a->name))
		return 0;
	*a->out = *sym;
	return 1;
}

static int sym_lookup(Elf *elf, const char *name, int want_func, GElf_Sym *out)
{
	struct sym_lookup_arg a = { elf, name, want_func, out };

	return sym_walk(elf, sym_lookup_one, &a) ? 0 : -ENOENT;
}

struct sym_at_arg {
	Elf *elf;
	uint64_t addr;
	const char **name;
	uint64_t *off;
};

static int sym_at_one(const GElf_Sym *sym, size_t strtab, void *arg)
{
	struct sym_at_arg *a = arg;
	const char *s;

	if (GELF_ST_TYPE(sym->st_info) != STT_FUNC || a->addr < sym->st_value ||
	    a->addr - sym->st_value >= (sym->st_size ? sym->st_size : 1))
		return 0;
	s = elf_strptr(a->elf, strtab, sym->st_name);
	if (!s || !*s)
		return 0;
	*a->name = s;
	*a->off = a->addr - sym->st_value;
	return 1;
}

/*
 * The function symbol whose range holds @addr (.symtab first, then .dynsym, as
 * perf's map__find_symbol finds it): its name and @addr's offset in it.
 */
static int sym_at(Elf *elf, uint64_t addr, const char **name, uint64_t *off)
{
	struct sym_at_arg a = { elf, addr, name, off };

	return sym_walk(elf, sym_at_one, &a) ? 0 : -ENOENT;
}

/* ---- DIE helpers (perf's dwarf-aux, with libdw) --------------------------------------- */

/* one suffix of the other, as perf's strtailcmp */
static int strtailcmp(const char *s1, const char *s2)
{
	int i1 = (int)strlen(s1), i2 = (int)strlen(s2);

	while (--i1 >= 0 && --i2 >= 0)
		if (s1[i1] != s2[i2])
			return s1[i1] - s2[i2];
	return 0;
}

static const char *die_name(Dwarf_Die *d)
{
	return dwarf_diename(d);
}

static int die_name_is(Dwarf_Die *d, const char *name)
{
	const char *n = dwarf_diename(d);

	return n && !strcmp(n, name);
}

static int die_entrypc(Dwarf_Die *d, Dwarf_Addr *addr)
{
	Dwarf_Attribute attr;
	Dwarf_Addr base, end;

	if (dwarf_entrypc(d, addr) == 0)
		return 0;
	if (!dwarf_attr(d, DW_AT_ranges, &attr))
		return -ENOENT;
	return dwarf_ranges(d, 0, &base, addr, &end) < 0 ? -ENOENT : 0;
}

static int die_is_func_def(Dwarf_Die *d)
{
	Dwarf_Attribute attr;
	Dwarf_Addr a;

	if (dwarf_tag(d) != DW_TAG_subprogram || dwarf_attr(d, DW_AT_declaration, &attr))
		return 0;
	return dwarf_attr(d, DW_AT_inline, &attr) || die_entrypc(d, &a) == 0;
}

static int die_is_func_instance(Dwarf_Die *d)
{
	Dwarf_Addr a;
	Dwarf_Attribute attr;
	int tag = dwarf_tag(d);

	if (tag != DW_TAG_subprogram && tag != DW_TAG_inlined_subroutine)
		return 0;
	return dwarf_entrypc(d, &a) == 0 || dwarf_attr(d, DW_AT_ranges, &attr);
}

static Dwarf_Die *die_type(Dwarf_Die *d, Dwarf_Die *mem)
{
	Dwarf_Attribute attr;

	if (dwarf_attr_integrate(d, DW_AT_type, &attr) && dwarf_formref_die(&attr, mem))
		return mem;
	return NULL;
}

/* the type, qualifiers and typedefs skipped */
static Dwarf_Die *die_real_type(Dwarf_Die *d, Dwarf_Die *mem)
{
	int tag;

	do {
		d = die_type(d, mem);
		if (!d)
			return NULL;
		tag = dwarf_tag(d);
	} while (tag == DW_TAG_const_type || tag == DW_TAG_restrict_type ||
		 tag == DW_TAG_volatile_type || tag == DW_TAG_shared_type ||
		 tag == DW_TAG_typedef || tag == DW_TAG_atomic_type);
	return d;
}

static int die_udata(Dwarf_Die *d, unsigned int name, Dwarf_Word *v)
{
	Dwarf_Attribute attr;

	if (!dwarf_attr_integrate(d, name, &attr) || dwarf_formudata(&attr, v))
		return -ENOENT;
	return 0;
}

static int die_is_signed(Dwarf_Die *t)
{
	Dwarf_Word enc;

	if (die_udata(t, DW_AT_encoding, &enc))
		return 0;
	return enc == DW_ATE_signed_char || enc == DW_ATE_signed || enc == DW_ATE_signed_fixed;
}

/* any variable or parameter with a location list: the CU is optimised */
static int die_is_optimized(Dwarf_Die *d)
{
	Dwarf_Die child;
	int tag = dwarf_tag(d);

	do {
		tag = dwarf_tag(d);
		if (tag == DW_TAG_formal_parameter || tag == DW_TAG_variable) {
			Dwarf_Attribute loc;

			if (dwarf_attr_integrate(d, DW_AT_location, &loc) &&
			    (dwarf_whatform(&loc) == DW_FORM_sec_offset ||
			     dwarf_whatform(&loc) == DW_FORM_loclistx))
				return 1;
		}
		if (dwarf_child(d, &child) == 0 && die_is_optimized(&child))
			return 1;
	} while (dwarf_siblingof(d, d) == 0);
	return 0;
}

static int cu_is_optimized(Dwarf_Die *cu)
{
	Dwarf_Die child;

	return dwarf_child(cu, &child) == 0 && die_is_optimized(&child);
}

/* depth-first search of @root's descendants, as perf's die_find_child */
enum { FIND_END = 0, FIND_CHILD = 1, FIND_SIBLING = 2, FIND_CONTINUE = 3 };

static Dwarf_Die *die_find_child(Dwarf_Die *root, int (*cb)(Dwarf_Die *, void *), void *data,
				 Dwarf_Die *mem)
{
	Dwarf_Die child;
	int r;

	if (dwarf_child(root, mem) != 0)
		return NULL;
	do {
		r = cb(mem, data);
		if (r == FIND_END)
			return mem;
		if ((r & FIND_CHILD) && die_find_child(mem, cb, data, &child)) {
			*mem = child;
			return mem;
		}
	} while ((r & FIND_SIBLING) && dwarf_siblingof(mem, mem) == 0);
	return NULL;
}

struct addr_find {
	Dwarf_Addr addr;
	Dwarf_Die *mem;
};

static int realfunc_cb(Dwarf_Die *fn, void *data)
{
	struct addr_find *af = data;

	if (dwarf_tag(fn) == DW_TAG_subprogram && dwarf_haspc(fn, af->addr) > 0) {
		*af->mem = *fn;
		return DWARF_CB_ABORT;
	}
	return DWARF_CB_OK;
}

/* the subprogram (not inlined) whose code holds @addr */
static Dwarf_Die *die_find_realfunc(Dwarf_Die *cu, Dwarf_Addr addr, Dwarf_Die *mem)
{
	struct addr_find af = { addr, mem };

	return dwarf_getfuncs(cu, realfunc_cb, &af, 0) ? mem : NULL;
}

static int inline_cb(Dwarf_Die *d, void *data)
{
	Dwarf_Addr *addr = data;

	if (dwarf_tag(d) == DW_TAG_inlined_subroutine && dwarf_haspc(d, *addr) > 0)
		return FIND_END;
	return FIND_CONTINUE;
}

/* ---- lines ---------------------------------------------------------------------------- */

/* perf's die_skip_prologue: the row after the entry address's row */
static void skip_prologue(Dwarf_Die *sp, Dwarf_Die *cu, Dwarf_Addr *entry)
{
	Dwarf_Lines *lines;
	size_t n, i, idx;
	Dwarf_Addr high, a;
	int lno0, lno;
	Dwarf_Line *line = NULL;

	if (dwarf_highpc(sp, &high) || dwarf_getsrclines(cu, &lines, &n))
		return;
	for (idx = 0; idx < n; idx++)
		if (!dwarf_lineaddr(dwarf_onesrcline(lines, idx), &a) && a == *entry)
			break;
	if (idx == n || dwarf_lineno(dwarf_onesrcline(lines, idx), &lno0))
		return;
	for (i = idx; i < n; i++) {
		bool pend;

		line = dwarf_onesrcline(lines, i);
		if (dwarf_lineaddr(line, &a) || dwarf_lineno(line, &lno) ||
		    dwarf_lineprologueend(line, &pend))
			return;
		if (a >= high || pend || lno != lno0 || i != idx)
			break;
	}
	if (!line)
		return;
	dwarf_lineaddr(line, &a);
	if (a >= high && i > 0)
		dwarf_lineaddr(dwarf_onesrcline(lines, i - 1), &a);
	*entry = a;
}

/* ---- the search ------------------------------------------------------------------------ */

#define PD_MISSING "\001" /* an argument's body where it has no location */
#define PD_DEADVAL "\\deade12d" /* perf's value for it there (DEFAULT_VAR_VALUE) */

struct finder {
	struct pd_bin *b;
	const struct pd_def *def;
	struct pd_err *err;
	Dwarf_Die cu;
	Dwarf_Die sp; /* the real function of the place */
	const char *fname; /* the file of a line search */
	int lno;
	Dwarf_Addr addr;
	Dwarf_Op *fb_ops; /* the frame base at addr, or NULL */
	size_t fb_nops;
	Dwarf_Frame *frame;
	struct pd_loc *locs;
	size_t nlocs;
	int has_vars; /* an argument is a C name, $params or $vars */
	int vars_mode; /* pd_vars(): list the variables instead of fetching */
	int *lazy_lines; /* the lines of the source that match def->lazy */
	size_t lazy_n;
	int externs; /* pd_vars(): the CU's globals too */
	char *why[PD_MAX_ARGS]; /* why argument N had no location at some place */
	int ret;
};

static int is_c_name(const char *s)
{
	return isalpha((unsigned char)s[0]) || s[0] == '_';
}

/* ---- arguments ------------------------------------------------------------------------ */

struct ref {
	long offset;
};

struct targ {
	char value[96]; /* "%di", "@+0x1234" */
	struct ref ref[PD_MAX_FIELDS + 4];
	int nref;
	char type[32];
	int global; /* a global: @+(goff + the first load's offset), that load folded in */
	uint64_t goff;
};

static const char *const x86_regs[16] = { "%ax",  "%dx",  "%cx",  "%bx", "%si",	 "%di",
					  "%bp",  "%sp",  "%r8",  "%r9", "%r10", "%r11",
					  "%r12", "%r13", "%r14", "%r15" };

/*
 * A global at link-time address @va: "@+OFFSET", OFFSET what a uprobe's
 * @+OFFSET takes, relative to the mapping of the probed code (the segment
 * holding f->addr), so that it is right wherever the file is loaded.
 */
static int global_at(struct finder *f, Dwarf_Addr va, struct targ *t)
{
	GElf_Phdr text;
	uint64_t off;

	if (addr_to_offset(f->b, f->addr, &off) || load_seg(f->b, f->addr, &text))
		return pd_fail(f->err, -ENOENT, -1, "no code segment holds 0x%" PRIx64,
			       (uint64_t)f->addr);
	t->goff = va - text.p_vaddr + text.p_offset;
	t->global = 1;
	t->nref = 1;
	t->ref[0].offset = 0;
	return 0;
}

/*
 * The location of variable @vr at f->addr into @t; perf's
 * convert_variable_location. @check: 0 to fetch it, 1 to know whether perf
 * would call it available (-V), 2 whether fdr can fetch it ($params, $vars).
 */
static int var_location(struct finder *f, Dwarf_Die *vr, struct targ *t, const char *what,
			int check)
{
	Dwarf_Attribute attr;
	Dwarf_Op *op;
	size_t nops;
	Dwarf_Addr a, high;
	unsigned int regn;
	long offs = 0;
	int ref = 0, n;

	memset(t, 0, sizeof(*t));
	if (!dwarf_attr(vr, DW_AT_location, &attr)) {
		GElf_Sym sym;
		const char *name = die_name(vr);

		if (!dwarf_attr(vr, DW_AT_external, &attr))
			return pd_fail(
				f->err, -ENOENT, -1,
				"'%s' has no location in the debug information of %s (optimised out)",
				what, f->b->debug_file);
		/* declared here, defined in another file: the symbol table has it */
		if (!name || sym_lookup(f->b->elf, name, 0, &sym))
			return pd_fail(f->err, -ENOENT, -1,
				       "'%s' is declared here but defined elsewhere; "
				       "%s's symbol table does not have it",
				       what, f->b->path);
		return global_at(f, sym.st_value, t);
	}
	n = dwarf_getlocation_addr(&attr, f->addr, &op, &nops, 1);
	if (n <= 0) {
		/* a parameter at the function's entry: the first address it has one */
		if (dwarf_tag(vr) == DW_TAG_formal_parameter && !die_entrypc(&f->sp, &a) &&
		    a == f->addr && !dwarf_highpc(&f->sp, &high)) {
			for (a = f->addr + 1; a <= high; a++)
				if (dwarf_getlocation_addr(&attr, a, &op, &nops, 1) > 0)
					goto found;
		}
		return pd_fail(f->err, -ENODATA, -1,
			       "'%s' is optimised out at %s+0x%" PRIx64 " (address 0x%" PRIx64
			       "): the debug information gives it no location there",
			       what, die_name(&f->sp) ? die_name(&f->sp) : "?",
			       (uint64_t)(f->addr - (die_entrypc(&f->sp, &a) ? f->addr : a)),
			       (uint64_t)f->addr);
	}
found:
	if (nops == 0)
		return pd_fail(f->err, -ENODATA, -1, "'%s' is optimised out at address 0x%" PRIx64,
			       what, (uint64_t)f->addr);
	/*
	 * perf reads the first operation only. Where more follow, the value is
	 * computed (DW_OP_stack_value: a register plus an offset is the value,
	 * not an address to load from) or pieced together; perf then fetches a
	 * wrong value, fdr refuses (a piece that covers the whole is fine).
	 */
	if (nops > 1 && !(nops == 2 && op[1].atom == DW_OP_piece) && check != 1) {
		/* (perf's check, for -V, looks at the first operation only) */
		if (check)
			return -ENOTSUP;
		return pd_fail(f->err, -ENOTSUP, -1,
			       "'%s' at 0x%" PRIx64
			       " is %s (a DWARF expression of %zu operations), "
			       "which a fetch argument cannot express",
			       what, (uint64_t)f->addr,
			       op[nops - 1].atom == DW_OP_stack_value ? "a computed value" :
									"pieced together",
			       nops);
	}
	if (op->atom == DW_OP_addr)
		return global_at(f, op->number, t);
	if (op->atom == DW_OP_fbreg) {
		if (!f->fb_ops)
			return pd_fail(
				f->err, -ENOTSUP, -1,
				"'%s' is relative to a frame base fdr cannot find at 0x%" PRIx64,
				what, (uint64_t)f->addr);
		ref = 1;
		offs = (long)op->number;
		op = &f->fb_ops[0];
	}
	if (op->atom >= DW_OP_breg0 && op->atom <= DW_OP_breg31) {
		regn = op->atom - DW_OP_breg0;
		offs += (long)op->number;
		ref = 1;
	} else if (op->atom >= DW_OP_reg0 && op->atom <= DW_OP_reg31) {
		regn = op->atom - DW_OP_reg0;
	} else if (op->atom == DW_OP_bregx) {
		regn = (unsigned int)op->number;
		offs += (long)op->number2;
		ref = 1;
	} else if (op->atom == DW_OP_regx) {
		regn = (unsigned int)op->number;
	} else {
		return pd_fail(
			f->err, -ENOTSUP, -1,
			"the location of '%s' at 0x%" PRIx64
			" is a DWARF expression (DW_OP 0x%x) that fdr, as perf, cannot fetch",
			what, (uint64_t)f->addr, op->atom);
	}
	if (check == 1)
		return 0; /* perf's check (no fetch asked) stops here: any register will do */
	if (regn >= 16)
		return pd_fail(f->err, -ENOTSUP, -1,
			       "'%s' is in DWARF register %u at 0x%" PRIx64
			       ", which a fetch argument cannot name",
			       what, regn, (uint64_t)f->addr);
	snprintf(t->value, sizeof(t->value), "%s", x86_regs[regn]);
	if (ref) {
		t->nref = 1;
		t->ref[0].offset = offs;
	}
	return 0;
}

static Dwarf_Die *die_find_member(Dwarf_Die *st, const char *name, Dwarf_Die *mem);

static int member_cb(Dwarf_Die *d, void *data)
{
	const char *name = data;

	if (dwarf_tag(d) == DW_TAG_member) {
		if (die_name_is(d, name))
			return FIND_END;
		if (!dwarf_diename(d)) {
			Dwarf_Die t, tmp;

			if (die_type(d, &t) && die_find_member(&t, name, &tmp))
				return FIND_END;
		}
	}
	return FIND_SIBLING;
}

static Dwarf_Die *die_find_member(Dwarf_Die *st, const char *name, Dwarf_Die *mem)
{
	return die_find_child(st, member_cb, (void *)name, mem);
}

static int member_offset(Dwarf_Die *m, Dwarf_Word *offs)
{
	Dwarf_Attribute attr;
	Dwarf_Op *expr;
	size_t n;

	if (!dwarf_attr(m, DW_AT_data_member_location, &attr)) {
		/*
		 * A DWARF 4+ bitfield has DW_AT_data_bit_offset instead: its byte
		 * offset is added with its bit offset (var_type()); perf 6.1 fails
		 * here, fdr deliberately does not
		 */
		if (dwarf_attr(m, DW_AT_data_bit_offset, &attr)) {
			*offs = 0;
			return 0;
		}
		return -ENOENT;
	}
	if (dwarf_formudata(&attr, offs) == 0)
		return 0;
	if (dwarf_getlocation(&attr, &expr, &n) || n != 1 || expr[0].atom != DW_OP_plus_uconst)
		return -ENOTSUP;
	*offs = expr[0].number;
	return 0;
}

/*
 * The fields of @a applied to @vr (perf's convert_variable_fields); *@last is
 * the DIE whose type the argument takes (a member, or for an index the
 * element's type, in @tmem).
 */
static int var_fields(struct finder *f, Dwarf_Die *vr, const struct pd_arg *a, struct targ *t,
		      Dwarf_Die *mem, int *is_type)
{
	Dwarf_Die cur = *vr, type;
	const char *prev = a->var;
	int i, tag;

	*is_type = 0;
	for (i = 0; i < a->nfield; i++) {
		const struct pd_field *fl = &a->field[i];
		Dwarf_Word off;
		Dwarf_Die m;

		if (*is_type) {
			type = cur;
			/* cur is an element type: it may itself be a pointer, struct... */
			while (dwarf_tag(&type) == DW_TAG_typedef ||
			       dwarf_tag(&type) == DW_TAG_const_type ||
			       dwarf_tag(&type) == DW_TAG_volatile_type)
				if (!die_type(&type, &type))
					return pd_fail(f->err, -ENOENT, a->pos, "no type for %s",
						       prev);
		} else if (!die_real_type(&cur, &type)) {
			return pd_fail(f->err, -ENOENT, a->pos, "Failed to get the type of %s",
				       prev);
		}
		tag = dwarf_tag(&type);
		if (fl->is_index && (tag == DW_TAG_array_type || tag == DW_TAG_pointer_type)) {
			Dwarf_Die el;
			int sz;

			if (!die_real_type(&type, &el))
				return pd_fail(f->err, -ENOENT, a->pos,
					       "Failed to get the type of %s", prev);
			if (tag == DW_TAG_pointer_type) {
				if (t->nref >= (int)(sizeof(t->ref) / sizeof(t->ref[0])))
					return pd_fail(f->err, -E2BIG, a->pos, "too many loads");
				t->ref[t->nref++].offset = 0;
			} else if (!t->nref) {
				return pd_fail(f->err, -ENOTSUP, a->pos,
					       "%s: an array in a register is not supported", prev);
			}
			sz = dwarf_bytesize(&el);
			if (sz < 0) {
				/* an element type without a size: a typedef's target */
				Dwarf_Die r;

				sz = die_real_type(&type, &r) ? dwarf_bytesize(&r) : -1;
			}
			if (sz < 0)
				return pd_fail(f->err, -ENOENT, a->pos, "%s: element size unknown",
					       prev);
			t->ref[t->nref - 1].offset += (long)sz * fl->index;
			/* the element: its type is the array's element type */
			if (!die_type(&type, &cur))
				return pd_fail(f->err, -ENOENT, a->pos, "no element type for %s",
					       prev);
			*is_type = 1;
			continue;
		} else if (fl->is_index) {
			return pd_fail(f->err, -EINVAL, a->pos,
				       "Semantic error: %s is not a pointer nor array", prev);
		} else if (tag == DW_TAG_pointer_type) {
			if (!fl->ref)
				return pd_fail(f->err, -EINVAL, a->pos,
					       "Semantic error: %s must be referred by '->'",
					       fl->name);
			if (!die_real_type(&type, &type))
				return pd_fail(f->err, -ENOENT, a->pos,
					       "Failed to get the type of %s", prev);
			tag = dwarf_tag(&type);
			if (tag != DW_TAG_structure_type && tag != DW_TAG_union_type)
				return pd_fail(f->err, -EINVAL, a->pos,
					       "%s is not a data structure nor a union", prev);
			if (t->nref >= (int)(sizeof(t->ref) / sizeof(t->ref[0])))
				return pd_fail(f->err, -E2BIG, a->pos, "too many loads");
			t->ref[t->nref++].offset = 0;
		} else {
			if (tag != DW_TAG_structure_type && tag != DW_TAG_union_type)
				return pd_fail(f->err, -EINVAL, a->pos,
					       "%s is not a data structure nor a union", prev);
			if (fl->ref)
				return pd_fail(f->err, -EINVAL, a->pos,
					       "Semantic error: %s must be referred by '.'",
					       fl->name);
			if (!t->nref)
				return pd_fail(f->err, -ENOTSUP, a->pos,
					       "%s: a structure in a register is not supported",
					       prev);
		}
		if (!die_find_member(&type, fl->name, &m))
			return pd_fail(f->err, -EINVAL, a->pos, "%s (type %s) has no member %s",
				       prev, die_name(&type) ? die_name(&type) : "(anonymous)",
				       fl->name);
		/* an anonymous struct or union on the way: its offset, then the member */
		if (!die_name_is(&m, fl->name)) {
			Dwarf_Die inner, it;

			if (tag != DW_TAG_union_type) {
				if (member_offset(&m, &off))
					return pd_fail(f->err, -ENOENT, a->pos,
						       "Failed to get the offset of %s", fl->name);
				t->ref[t->nref - 1].offset += (long)off;
			}
			if (!die_real_type(&m, &it) || !die_find_member(&it, fl->name, &inner))
				return pd_fail(f->err, -EINVAL, a->pos, "no member %s", fl->name);
			tag = dwarf_tag(&it);
			m = inner;
		}
		if (tag != DW_TAG_union_type) {
			if (member_offset(&m, &off))
				return pd_fail(f->err, -ENOENT, a->pos,
					       "Failed to get the offset of %s", fl->name);
			t->ref[t->nref - 1].offset += (long)off;
		}
		cur = m;
		*is_type = 0;
		prev = fl->name;
	}
	*mem = cur;
	return 0;
}

/* perf's convert_variable_type; @d is a variable or member DIE, or (is_type) a type DIE */
static int var_type(struct finder *f, Dwarf_Die *d, int is_type, const struct pd_arg *a,
		    struct targ *t)
{
	Dwarf_Die type;
	Dwarf_Word bsize;
	int size;

	if (a->type && strcmp(a->type, "string")) {
		snprintf(t->type, sizeof(t->type), "%s", a->type);
		return 0;
	}
	if (!is_type && !die_udata(d, DW_AT_bit_size, &bsize) && bsize > 0) {
		Dwarf_Word dbo, total;
		int boffs;

		/* perf: b<size>@<offset>/<container bits>, DW_AT_bit_offset style */
		if (die_udata(d, DW_AT_byte_size, &total)) {
			Dwarf_Die tt;

			if (!die_real_type(d, &tt) || dwarf_bytesize(&tt) <= 0)
				return pd_fail(f->err, -ENOENT, a->pos, "no size for bitfield %s",
					       a->var);
			total = (Dwarf_Word)dwarf_bytesize(&tt);
		}
		boffs = dwarf_bitoffset(d);
		if (boffs < 0) {
			Dwarf_Word mo;

			/* DWARF 4+: DW_AT_data_bit_offset from the structure's start */
			if (die_udata(d, DW_AT_data_bit_offset, &dbo))
				return pd_fail(f->err, -ENOENT, a->pos, "no bit offset for %s",
					       a->var);
			mo = dbo / (total * 8) * total;
			t->ref[t->nref - 1].offset += (long)mo;
			boffs = (int)(dbo - mo * 8);
		} else {
			/*
			 * DW_AT_bit_offset counts from the storage unit's most
			 * significant bit; the kernel's b@offset from its least
			 * (x86-64 is little-endian). perf 6.1 writes DW_AT_bit_offset
			 * as it is, and records the wrong bits: fdr converts.
			 */
			boffs = (int)total * 8 - boffs - (int)bsize;
			if (boffs < 0)
				return pd_fail(f->err, -EINVAL, a->pos,
					       "bitfield %s lies outside its storage unit", a->var);
		}
		snprintf(t->type, sizeof(t->type), "b%d@%d/%d", (int)bsize, boffs, (int)total * 8);
		return 0;
	}
	if (is_type) {
		type = *d;
		while (dwarf_tag(&type) == DW_TAG_typedef ||
		       dwarf_tag(&type) == DW_TAG_const_type ||
		       dwarf_tag(&type) == DW_TAG_volatile_type ||
		       dwarf_tag(&type) == DW_TAG_restrict_type)
			if (!die_type(&type, &type))
				break;
	} else if (!die_real_type(d, &type)) {
		return pd_fail(f->err, -ENOENT, a->pos, "Failed to get the type of %s", a->var);
	}
	if (a->type) { /* string */
		int tag = dwarf_tag(&type);
		Dwarf_Die ch;

		if (tag != DW_TAG_pointer_type && tag != DW_TAG_array_type)
			return pd_fail(
				f->err, -EINVAL, a->pos,
				"Failed to cast into string: %s (%s) is not a pointer nor array",
				a->var, die_name(&type) ? die_name(&type) : "?");
		if (!die_real_type(&type, &ch))
			return pd_fail(f->err, -ENOENT, a->pos, "Failed to get the type of %s",
				       a->var);
		if (tag == DW_TAG_pointer_type) {
			if (!t->nref && !t->global) {
				t->ref[t->nref++].offset = 0;
			} else {
				if (t->nref >= (int)(sizeof(t->ref) / sizeof(t->ref[0])))
					return pd_fail(f->err, -E2BIG, a->pos, "too many loads");
				t->ref[t->nref++].offset = 0;
			}
		}
		if (!die_name_is(&ch, "char") && !die_name_is(&ch, "unsigned char"))
			return pd_fail(f->err, -EINVAL, a->pos,
				       "Failed to cast into string: %s is not (unsigned) char *",
				       a->var);
		snprintf(t->type, sizeof(t->type), "string");
		return 0;
	}
	size = dwarf_bytesize(&type);
	if (size <= 0)
		return 0; /* perf: no size, the default type */
	size *= 8;
	if (size > 64)
		size = 64;
	snprintf(t->type, sizeof(t->type), "%c%d", die_is_signed(&type) ? 's' : 'x', size);
	return 0;
}

/* the argument's text: " NAME=+O2(+O1(VALUE)):TYPE" */
static int targ_format(const char *name, const struct targ *t, char *buf, size_t len)
{
	size_t n = 0;
	int i, first = 0;

	n += (size_t)snprintf(buf + n, len - n, " %s%s", name ? name : "", name ? "=" : "");
	if (t->global)
		first = 1; /* folded into @+OFFSET */
	for (i = t->nref - 1; i >= first && n < len; i--)
		n += (size_t)snprintf(buf + n, len - n, "%+ld(", t->ref[i].offset);
	if (n < len) {
		if (t->global) {
			n += (size_t)snprintf(buf + n, len - n, "@+0x%" PRIx64,
					      t->goff + (uint64_t)t->ref[0].offset);
		} else {
			n += (size_t)snprintf(buf + n, len - n, "%s", t->value);
		}
	}
	for (i = t->nref - 1; i >= first && n < len; i--)
		n += (size_t)snprintf(buf + n, len - n, ")");
	if (t->type[0] && n < len)
		n += (size_t)snprintf(buf + n, len - n, ":%s", t->type);
	return n < len ? 0 : -E2BIG;
}

struct var_find {
	const char *name;
	Dwarf_Addr addr;
};

static int var_cb(Dwarf_Die *d, void *data)
{
	struct var_find *vf = data;
	Dwarf_Attribute attr;
	int tag = dwarf_tag(d);

	if ((tag == DW_TAG_formal_parameter || tag == DW_TAG_variable) &&
	    die_name_is(d, vf->name) &&
	    (dwarf_attr(d, DW_AT_external, &attr) || dwarf_attr(d, DW_AT_location, &attr) ||
	     dwarf_attr(d, DW_AT_const_value, &attr)))
		return FIND_END;
	return dwarf_haspc(d, vf->addr) > 0 ? FIND_CONTINUE : FIND_SIBLING;
}

/* one argument of a place into @out (appended) */
static int convert_arg(struct finder *f, Dwarf_Die *sc, const struct pd_arg *a, char *out,
		       size_t outlen)
{
	struct var_find vf = { a->var, f->addr };
	Dwarf_Die vr, last;
	struct targ t;
	char name[160], buf[512];
	int ret, is_type = 0;
	size_t n = strlen(out);

	if (!is_c_name(a->var)) { /* a raw FETCHARG: as written */
		snprintf(buf, sizeof(buf), " %s%s%s%s%s", a->name ? a->name : "",
			 a->name ? "=" : "", a->var, a->type ? ":" : "", a->type ? a->type : "");
		goto add;
	}
	if (a->name) {
		snprintf(name, sizeof(name), "%s", a->name);
	} else {
		char *c;

		snprintf(name, sizeof(name), "%s%s%s", a->var, a->type ? ":" : "",
			 a->type ? a->type : "");
		c = strchr(name, ':');
		if (c)
			*c = '_';
	}
	if (!die_find_child(sc, var_cb, &vf, &vr)) {
		vf.addr = 0;
		if (!die_find_child(&f->cu, var_cb, &vf, &vr))
			return pd_fail(
				f->err, -ENOENT, a->pos,
				"Failed to find '%s' in %s at 0x%" PRIx64
				" (neither a variable in scope there nor a global of its file)",
				a->var, die_name(sc) ? die_name(sc) : "this function",
				(uint64_t)f->addr);
	}
	ret = var_location(f, &vr, &t, a->var, 0);
	if (ret == -ENODATA) {
		/*
		 * perf: no location here may be one elsewhere (another inlined
		 * instance); pd_resolve() fills the place in, or fails
		 */
		const char *p;
		int idx = 0;

		for (p = out; *p; p++)
			idx += *p == ' ';
		if (idx < PD_MAX_ARGS && !f->why[idx])
			f->why[idx] = strdup(f->err->msg);
		snprintf(buf, sizeof(buf), " %s=%s", name, PD_MISSING);
		goto add;
	}
	if (ret)
		return ret;
	last = vr;
	if (a->nfield) {
		ret = var_fields(f, &vr, a, &t, &last, &is_type);
		if (ret)
			return ret;
	}
	ret = var_type(f, &last, is_type, a, &t);
	if (ret)
		return ret;
	if (targ_format(name, &t, buf, sizeof(buf)))
		return pd_fail(f->err, -E2BIG, a->pos, "argument too long");
add:
	if (n + strlen(buf) + 1 > outlen)
		return pd_fail(f->err, -E2BIG, a->pos, "too many arguments");
	memcpy(out + n, buf, strlen(buf) + 1);
	return 0;
}

struct expand {
	struct finder *f;
	int vars;
	const char **names;
	int n, max;
};

static int expand_cb(Dwarf_Die *d, void *data)
{
	struct expand *e = data;
	int tag = dwarf_tag(d);

	if ((tag == DW_TAG_formal_parameter || (tag == DW_TAG_variable && e->vars)) &&
	    die_name(d) && e->n < e->max) {
		struct targ t;
		struct pd_err saved = *e->f->err;

		if (var_location(e->f, d, &t, die_name(d), 2) == 0)
			e->names[e->n++] = die_name(d);
		*e->f->err = saved;
	}
	return dwarf_haspc(d, e->f->addr) > 0 ? FIND_CONTINUE : FIND_SIBLING;
}

/* ---- -V: the variables at a place ------------------------------------------------- */

/* perf's die_get_typename: "int", "struct item*", "char*", "(function_type)" */
static int type_name(Dwarf_Die *d, char *buf, size_t len)
{
	Dwarf_Die type;
	int tag, ret;
	size_t n;
	const char *name;

	/* the type, qualifiers skipped (typedefs kept: their names are shown) */
	d = die_type(d, &type);
	while (d && (dwarf_tag(d) == DW_TAG_const_type || dwarf_tag(d) == DW_TAG_volatile_type ||
		     dwarf_tag(d) == DW_TAG_restrict_type || dwarf_tag(d) == DW_TAG_shared_type))
		d = die_type(d, &type);
	if (!d)
		return -ENOENT;
	tag = dwarf_tag(&type);
	if (tag == DW_TAG_subroutine_type) {
		snprintf(buf, len, "(function_type)");
		return 0;
	}
	if (tag != DW_TAG_array_type && tag != DW_TAG_pointer_type) {
		name = dwarf_diename(&type);
		snprintf(buf, len, "%s%s",
			 tag == DW_TAG_union_type	? "union " :
			 tag == DW_TAG_structure_type	? "struct " :
			 tag == DW_TAG_enumeration_type ? "enum " :
							  "",
			 name ? name : "");
		return 0;
	}
	ret = type_name(&type, buf, len);
	if (ret == -ENOENT && tag == DW_TAG_pointer_type) {
		snprintf(buf, len, "void*");
		return 0;
	}
	if (ret)
		return ret;
	n = strlen(buf);
	snprintf(buf + n, len - n, "*");
	return 0;
}

struct vars_collect {
	struct finder *f;
	char **v;
	size_t n, cap;
	int child;
};

static int vars_cb(Dwarf_Die *d, void *data)
{
	struct vars_collect *vc = data;
	int tag = dwarf_tag(d);

	if ((tag == DW_TAG_formal_parameter || tag == DW_TAG_variable) && dwarf_diename(d)) {
		struct targ t;
		struct pd_err saved = *vc->f->err;
		int ok = var_location(vc->f, d, &t, dwarf_diename(d), 1) == 0;

		*vc->f->err = saved;
		if (ok && vc->n < 4096) {
			char tn[256], line[512];

			if (type_name(d, tn, sizeof(tn)))
				snprintf(tn, sizeof(tn), "(unknown_type)");
			snprintf(line, sizeof(line), "%s\t%s", tn, dwarf_diename(d));
			if (vc->n == vc->cap) {
				void *p = realloc(vc->v,
						  (vc->cap ? vc->cap * 2 : 16) * sizeof(char *));

				if (!p)
					return FIND_END;
				vc->v = p;
				vc->cap = vc->cap ? vc->cap * 2 : 16;
			}
			vc->v[vc->n] = strdup(line);
			if (vc->v[vc->n])
				vc->n++;
		}
	}
	return vc->child && dwarf_haspc(d, vc->f->addr) > 0 ? FIND_CONTINUE : FIND_SIBLING;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* perf -V's block for one place: "\t@<SYM+OFF>\n\t\tTYPE\tNAME\n"... sorted, unique */
static int collect_vars(struct finder *f, Dwarf_Die *sc, Dwarf_Addr entry, char *out, size_t len)
{
	struct vars_collect vc = { f, NULL, 0, 0, 1 };
	Dwarf_Die mem;
	size_t i, n;

	die_find_child(sc, vars_cb, &vc, &mem);
	if (f->externs) {
		vc.child = 0;
		die_find_child(&f->cu, vars_cb, &vc, &mem);
	}
	if (vc.n)
		qsort(vc.v, vc.n, sizeof(char *), cmp_str);
	n = (size_t)snprintf(out, len, "\t@<%s+%" PRIu64 ">\n",
			     die_name(&f->sp) ? die_name(&f->sp) : "?",
			     (uint64_t)(f->addr - entry));
	for (i = 0; i < vc.n; i++) {
		if ((!i || strcmp(vc.v[i], vc.v[i - 1])) && n < len)
			n += (size_t)snprintf(out + n, len - n, "\t\t%s\n", vc.v[i]);
	}
	if (!vc.n && n < len)
		snprintf(out + n, len - n, "\t\t(No matched variables)\n");
	for (i = 0; i < vc.n; i++)
		free(vc.v[i]);
	free(vc.v);
	return 0;
}

/* ---- one place ---------------------------------------------------------------------- */

static int add_place(struct finder *f, Dwarf_Die *sc)
{
	const struct pd_def *def = f->def;
	Dwarf_Attribute fb;
	Dwarf_Addr entry, high;
	struct pd_loc *loc;
	char *args;
	size_t nops, argmax = 8192, seen;
	int i, ret;

	/* one place per address (a line and an inlined declaration can share one) */
	for (seen = 0; seen < f->nlocs; seen++)
		if (f->locs[seen].addr == f->addr)
			return 0;
	/* the real function around the place */
	if (!die_is_func_def(sc)) {
		if (!die_find_realfunc(&f->cu, f->addr, &f->sp))
			return pd_fail(f->err, -ENOENT, -1,
				       "no function holds address 0x%" PRIx64 " (a tail call?)",
				       (uint64_t)f->addr);
	} else {
		f->sp = *sc;
	}
	/* the frame base there */
	f->fb_ops = NULL;
	f->frame = NULL;
	if (dwarf_attr(&f->sp, DW_AT_frame_base, &fb) &&
	    dwarf_getlocation_addr(&fb, f->addr, &f->fb_ops, &nops, 1) > 0 && nops) {
		f->fb_nops = nops;
		if (nops == 1 && f->fb_ops[0].atom == DW_OP_call_frame_cfa) {
			f->fb_ops = NULL;
			if (f->b->cfi && dwarf_cfi_addrframe(f->b->cfi, f->addr, &f->frame) == 0 &&
			    dwarf_frame_cfa(f->frame, &f->fb_ops, &f->fb_nops) == 0 && f->fb_nops) {
				/* fb_ops point into frame, freed below */
			} else {
				f->fb_ops = NULL;
			}
		}
	} else {
		f->fb_ops = NULL;
	}
	if (die_entrypc(&f->sp, &entry) || dwarf_highpc(&f->sp, &high)) {
		ret = pd_fail(f->err, -ENOENT, -1, "%s has no address range",
			      die_name(&f->sp) ? die_name(&f->sp) : "the function");
		goto out;
	}
	if (f->addr > high) {
		ret = pd_fail(f->err, -EINVAL, -1, "Offset specified is greater than size of %s",
			      die_name(&f->sp));
		goto out;
	}
	if (def->retprobe && entry != f->addr) {
		ret = pd_fail(
			f->err, -EINVAL, -1,
			"Failed to find \"%s%%return\": %s is an inlined function and has no return point",
			def->func, def->func);
		goto out;
	}
	if (f->nlocs >= PD_MAX_LOCS) {
		ret = pd_fail(f->err, -ERANGE, -1, "Too many (> %d) probe points found",
			      PD_MAX_LOCS);
		goto out;
	}
	args = calloc(1, argmax);
	if (!args) {
		ret = pd_fail(f->err, -ENOMEM, -1, "out of memory");
		goto out;
	}
	if (f->vars_mode) {
		ret = collect_vars(f, sc, entry, args, argmax);
		if (ret) {
			free(args);
			goto out;
		}
		goto keep;
	}
	for (i = 0; i < def->narg; i++) {
		const struct pd_arg *a = &def->arg[i];

		if (!strcmp(a->var, "$params") || !strcmp(a->var, "$vars")) {
			const char *names[PD_MAX_ARGS];
			struct expand e = { f, !strcmp(a->var, "$vars"), names, 0, PD_MAX_ARGS };
			Dwarf_Die mem;
			int k;

			die_find_child(sc, expand_cb, &e, &mem);
			for (k = 0; k < e.n; k++) {
				struct pd_arg one;

				memset(&one, 0, sizeof(one));
				one.var = (char *)names[k];
				one.pos = a->pos;
				ret = convert_arg(f, sc, &one, args, argmax);
				if (ret)
					break;
			}
		} else {
			ret = convert_arg(f, sc, a, args, argmax);
		}
		if (ret) {
			free(args);
			goto out;
		}
	}
keep:
	loc = realloc(f->locs, (f->nlocs + 1) * sizeof(*loc));
	if (!loc) {
		free(args);
		ret = pd_fail(f->err, -ENOMEM, -1, "out of memory");
		goto out;
	}
	f->locs = loc;
	loc = &f->locs[f->nlocs];
	memset(loc, 0, sizeof(*loc));
	loc->addr = f->addr;
	if (addr_to_offset(f->b, f->addr, &loc->offset)) {
		free(args);
		ret = pd_fail(f->err, -ENOENT, -1,
			      "address 0x%" PRIx64 " is in no executable segment of %s",
			      (uint64_t)f->addr, f->b->path);
		goto out;
	}
	loc->symbol = strdup(die_name(&f->sp) ? die_name(&f->sp) : "");
	loc->realname = strdup(die_name(sc) ? die_name(sc) : loc->symbol);
	loc->args = args;
	f->nlocs++;
	ret = 0;
out:
	free(f->frame);
	f->frame = NULL;
	f->fb_ops = NULL;
	return ret;
}

/* ---- places from lines --------------------------------------------------------------- */

struct scope_find {
	const char *func, *file;
	int line, diff, found;
	Dwarf_Die *mem;
};

static int best_scope_cb(Dwarf_Die *fn, struct scope_find *s)
{
	const char *file;
	int lno;

	if (s->file) {
		file = dwarf_decl_file(fn);
		if (!file || strcmp(s->file, file))
			return 0;
	}
	if (s->func) {
		if (die_name_is(fn, s->func)) {
			*s->mem = *fn;
			s->found = 1;
			return 1;
		}
	} else if (dwarf_decl_line(fn, &lno) == 0 && lno < s->line && s->diff > s->line - lno) {
		s->diff = s->line - lno;
		*s->mem = *fn;
		s->found = 1;
	}
	return 0;
}

/* perf's find_best_scope: the functions at the address, outermost first */
static Dwarf_Die *best_scope(struct finder *f, Dwarf_Die *mem)
{
	struct scope_find s = { f->def->func, f->fname, f->lno, 1 << 30, 0, mem };
	Dwarf_Die dm, *sc;
	Dwarf_Addr a = f->addr;

	for (sc = die_find_realfunc(&f->cu, f->addr, &dm); sc;
	     sc = die_find_child(sc, inline_cb, &a, &dm)) {
		Dwarf_Die copy = *sc;

		if (best_scope_cb(&copy, &s))
			break;
	}
	/* perf: none fits, the function around the address (its find_inner_scope_cb) */
	if (!s.found && die_find_realfunc(&f->cu, f->addr, mem))
		s.found = 1;
	return s.found ? mem : NULL;
}

/* the statement row at @addr, the first of the rows there (perf's cu_getsrc_die) */
static Dwarf_Line *cu_stmt_line_at(Dwarf_Die *cu, Dwarf_Addr addr)
{
	Dwarf_Lines *lines;
	Dwarf_Line *line;
	Dwarf_Addr la;
	size_t n, l, u, m;
	bool flag;

	if (dwarf_getsrclines(cu, &lines, &n) || !n)
		return NULL;
	l = 0;
	u = n - 1;
	while (l < u) {
		m = u - (u - l) / 2;
		line = dwarf_onesrcline(lines, m);
		if (!line || dwarf_lineaddr(line, &la))
			return NULL;
		if (addr < la)
			u = m - 1;
		else
			l = m;
	}
	do {
		if (l == 0)
			return NULL;
		line = dwarf_onesrcline(lines, --l);
		if (!line || dwarf_lineaddr(line, &la))
			return NULL;
	} while (la == addr);
	l++;
	do {
		line = dwarf_onesrcline(lines, l++);
		if (!line || dwarf_lineaddr(line, &la) || dwarf_linebeginstatement(line, &flag))
			return NULL;
		if (la > addr)
			return NULL;
	} while (!flag);
	return line;
}

/*
 * The line @addr maps back to (perf's cu_find_lineinfo): a function's entry
 * is its declaration line, else the first statement row there; 0 for none.
 */
static void reverse_line(Dwarf_Die *cu, Dwarf_Addr addr, const char **file, int *line)
{
	Dwarf_Die fn;
	Dwarf_Addr entry;
	Dwarf_Line *l;

	*file = NULL;
	*line = 0;
	if (die_find_realfunc(cu, addr, &fn) && die_entrypc(&fn, &entry) == 0 && entry == addr) {
		*file = dwarf_decl_file(&fn);
		dwarf_decl_line(&fn, line);
	} else if ((l = cu_stmt_line_at(cu, addr)) && dwarf_lineno(l, line) == 0) {
		*file = dwarf_linesrc(l, NULL, NULL);
		if (!*file)
			*line = 0;
	}
}

/*
 * perf's verify_representive_line: the line that @addr maps back to (a
 * function's entry maps to its declaration) must be @lineno, else the line
 * shares its address with another one and perf refuses it, naming that one.
 */
static int verify_line(struct finder *f, const char *fname, int lineno, Dwarf_Addr addr)
{
	Dwarf_Die sc;
	const char *rfile = NULL, *func = NULL;
	int rline = 0, dl;

	reverse_line(&f->cu, addr, &rfile, &rline);
	if (!rline || !rfile || strcmp(fname, rfile) || lineno == rline)
		return 0;
	if (f->def->func) {
		f->addr = addr;
		if (best_scope(f, &sc) && die_name_is(&sc, f->def->func) &&
		    dwarf_decl_line(&sc, &dl) == 0) {
			func = die_name(&sc);
			rline -= dl;
		}
	}
	return pd_fail(f->err, -ENOENT, -1,
		       "line %d shares its address (0x%" PRIx64
		       ") with another line: probe %s:%d instead",
		       lineno, (uint64_t)addr, func ? func : rfile, rline);
}

static int line_place(struct finder *f, const char *fname, int lineno, Dwarf_Addr addr)
{
	Dwarf_Die mem, *sc;
	int ret;

	if (lineno != f->lno || strtailcmp(fname, f->fname))
		return 0;
	ret = verify_line(f, fname, lineno, addr);
	if (ret)
		return ret;
	f->addr = addr;
	sc = best_scope(f, &mem);
	if (!sc)
		return pd_fail(f->err, -ENOENT, -1,
			       "Failed to find the scope of line %d at 0x%" PRIx64, lineno,
			       (uint64_t)addr);
	ret = add_place(f, sc);
	return ret < 0 ? ret : 0;
}

typedef int (*line_cb)(void *data, const char *fname, int lineno, Dwarf_Addr addr);

struct funclines {
	line_cb cb;
	void *data;
	int recursive;
	int ret;
};

static const char *call_file(Dwarf_Die *in)
{
	Dwarf_Word idx;
	Dwarf_Die cu;
	Dwarf_Files *files;

	if (die_udata(in, DW_AT_call_file, &idx) || !dwarf_diecu(in, &cu, NULL, NULL) ||
	    dwarf_getsrcfiles(&cu, &files, NULL))
		return NULL;
	return dwarf_filesrc(files, idx, NULL, NULL);
}

/* perf's __die_walk_funclines_cb: inlined call sites (and, walking a CU, their declarations) */
static int funclines_cb(Dwarf_Die *in, void *data)
{
	struct funclines *fl = data;
	Dwarf_Word lno;
	Dwarf_Addr addr = 0;
	const char *fname;
	int dl;

	if (dwarf_tag(in) == DW_TAG_inlined_subroutine) {
		fname = call_file(in);
		if (fname && !die_udata(in, DW_AT_call_line, &lno) && lno > 0 &&
		    die_entrypc(in, &addr) == 0) {
			fl->ret = fl->cb(fl->data, fname, (int)lno, addr);
			if (fl->ret)
				return FIND_END;
		}
		if (!fl->recursive)
			return FIND_SIBLING;
	}
	if (addr) {
		fname = dwarf_decl_file(in);
		if (fname && dwarf_decl_line(in, &dl) == 0) {
			fl->ret = fl->cb(fl->data, fname, dl, addr);
			if (fl->ret)
				return FIND_END;
		}
	}
	return FIND_CONTINUE;
}

/* perf's __die_walk_funclines: the declaration, then the call sites inside */
static int walk_funclines(Dwarf_Die *sp, int recursive, line_cb cb, void *data)
{
	struct funclines fl = { cb, data, recursive, 0 };
	const char *fname = dwarf_decl_file(sp);
	int lineno;
	Dwarf_Addr addr;
	Dwarf_Die mem;

	if (fname && dwarf_decl_line(sp, &lineno) == 0 && die_entrypc(sp, &addr) == 0) {
		fl.ret = cb(data, fname, lineno, addr);
		if (fl.ret)
			return fl.ret;
	}
	die_find_child(sp, funclines_cb, &fl, &mem);
	return fl.ret;
}

struct culines {
	line_cb cb;
	void *data;
	int ret;
};

static int culines_cb(Dwarf_Die *sp, void *data)
{
	struct culines *cl = data;

	cl->ret = walk_funclines(sp, 1, cl->cb, cl->data);
	return cl->ret ? DWARF_CB_ABORT : DWARF_CB_OK;
}

/* the deepest inlined subroutine at @addr in @sp */
static Dwarf_Die *die_find_inlinefunc(Dwarf_Die *sp, Dwarf_Addr addr, Dwarf_Die *mem)
{
	Dwarf_Die tmp, *d;

	d = die_find_child(sp, inline_cb, &addr, &tmp);
	if (!d)
		return NULL;
	while (d) {
		*mem = *d;
		d = die_find_child(mem, inline_cb, &addr, &tmp);
	}
	return mem;
}

/*
 * perf's die_walk_lines: every line-table row of the CU that starts a
 * statement (for a function or an inlined instance @rt: those in its code and
 * not in a function inlined into it, unless they are that call's line), then
 * the function declarations and inlined call sites.
 */
static int walk_lines(Dwarf_Die *rt, line_cb cb, void *data)
{
	Dwarf_Lines *lines;
	Dwarf_Die cumem, *cu, inl;
	const char *decf = NULL;
	size_t n, i;
	int decl = 0, ret;

	if (dwarf_tag(rt) != DW_TAG_compile_unit) {
		cu = dwarf_diecu(rt, &cumem, NULL, NULL);
		dwarf_decl_line(rt, &decl);
		decf = dwarf_decl_file(rt);
	} else {
		cu = rt;
	}
	if (!cu)
		return -EINVAL;
	if (dwarf_getsrclines(cu, &lines, &n))
		n = 0; /* a CU without a line table (perf gives up on it) */
	for (i = 0; i < n; i++) {
		Dwarf_Line *l = dwarf_onesrcline(lines, i);
		Dwarf_Addr addr;
		int lineno, il;
		bool flag;
		const char *src;

		if (!l || dwarf_lineno(l, &lineno) || dwarf_lineaddr(l, &addr))
			continue;
		if (dwarf_lineendsequence(l, &flag) || flag)
			continue;
		if (dwarf_linebeginstatement(l, &flag) || !flag)
			continue;
		if (rt != cu) {
			if (dwarf_haspc(rt, addr) <= 0)
				continue;
			if (die_find_inlinefunc(rt, addr, &inl)) {
				const char *inf = call_file(&inl);
				Dwarf_Word cl;

				if (!(inf && decf && !strcmp(inf, decf) &&
				      !die_udata(&inl, DW_AT_call_line, &cl) &&
				      (int)cl == lineno)) {
					dwarf_decl_line(&inl, &il);
					if (il != decl || decf != dwarf_decl_file(&inl))
						continue;
				}
			}
		}
		src = dwarf_linesrc(l, NULL, NULL);
		if (!src)
			continue;
		ret = cb(data, src, lineno, addr);
		if (ret)
			return ret;
	}
	if (rt != cu)
		return walk_funclines(rt, 0, cb, data);
	{
		struct culines cl = { cb, data, 0 };

		dwarf_getfuncs(cu, culines_cb, &cl, 0);
		return cl.ret;
	}
}

static int line_place_cb(void *data, const char *fname, int lineno, Dwarf_Addr addr)
{
	return line_place(data, fname, lineno, addr);
}

/* every place of line f->lno of file f->fname in the CU */
static int find_by_line(struct finder *f)
{
	return walk_lines(&f->cu, line_place_cb, f);
}

/* ---- lazy patterns ---------------------------------------------------------------- */

/* perf's strlazymatch: a glob (*, ?, [...], \\) where white space does not count */
static int lazy_match(const char *str, const char *pat)
{
	while (*str && *pat && *pat != '*') {
		if (isspace((unsigned char)*str)) {
			str++;
			continue;
		}
		if (isspace((unsigned char)*pat)) {
			pat++;
			continue;
		}
		if (*pat == '?') {
			str++;
			pat++;
			continue;
		}
		if (*pat == '[') {
			const char *q = pat + 1;
			int neg = *q == '!', ok = 0;

			if (neg)
				q++;
			for (; *q && (*q != ']' || q == pat + 1 + neg); q++) {
				if (q[1] == '-' && q[2] && q[2] != ']') {
					ok |= *str >= q[0] && *str <= q[2];
					q += 2;
				} else {
					ok |= *str == *q;
				}
			}
			if (*q != ']' || ok == neg)
				return 0;
			str++;
			pat = q + 1;
			continue;
		}
		if (*pat == '\\' && pat[1])
			pat++;
		if (*str++ != *pat++)
			return 0;
	}
	if (*pat == '*') {
		while (*pat == '*')
			pat++;
		if (!*pat)
			return 1;
		while (*str)
			if (lazy_match(str++, pat))
				return 1;
	}
	while (*str && isspace((unsigned char)*str))
		str++;
	while (*pat && isspace((unsigned char)*pat))
		pat++;
	return !*str && !*pat;
}

/* the lines of f->fname (relative to the CU's directory) that match the pattern */
static int lazy_lines(struct finder *f)
{
	Dwarf_Attribute attr;
	const char *comp = dwarf_attr(&f->cu, DW_AT_comp_dir, &attr) ? dwarf_formstring(&attr) :
								       NULL;
	char path[4096], *line = NULL;
	size_t cap = 0;
	ssize_t len;
	FILE *fp;
	int lno = 1;

	if (f->lazy_n)
		return 0;
	if (f->fname[0] != '/' && comp)
		snprintf(path, sizeof(path), "%s/%s", comp, f->fname);
	else
		snprintf(path, sizeof(path), "%s", f->fname);
	fp = fopen(path, "r");
	if (!fp)
		return pd_fail(f->err, -errno, -1, "the source file %s (for the pattern '%s'): %s",
			       path, f->def->lazy, strerror(errno));
	while ((len = getline(&line, &cap, fp)) > 0) {
		if (line[len - 1] == '\n')
			line[len - 1] = 0;
		if (lazy_match(line, f->def->lazy)) {
			int *p = realloc(f->lazy_lines, (f->lazy_n + 1) * sizeof(int));

			if (!p) {
				free(line);
				fclose(fp);
				return pd_fail(f->err, -ENOMEM, -1, "out of memory");
			}
			f->lazy_lines = p;
			f->lazy_lines[f->lazy_n++] = lno;
		}
		lno++;
	}
	free(line);
	fclose(fp);
	return 0;
}

static int lazy_place_cb(void *data, const char *fname, int lineno, Dwarf_Addr addr)
{
	struct finder *f = data;
	Dwarf_Die mem, *sc;
	size_t i;
	int ret;

	for (i = 0; i < f->lazy_n && f->lazy_lines[i] != lineno; i++)
		;
	if (i == f->lazy_n || strtailcmp(fname, f->fname))
		return 0;
	f->addr = addr;
	f->lno = lineno;
	sc = best_scope(f, &mem);
	if (!sc)
		return pd_fail(f->err, -ENOENT, -1,
			       "Failed to find the scope of line %d at 0x%" PRIx64, lineno,
			       (uint64_t)addr);
	ret = add_place(f, sc);
	return ret < 0 ? ret : 0;
}

/* perf's find_probe_point_lazy: the matching lines in @rt (a function, or the CU) */
static int find_lazy(struct finder *f, Dwarf_Die *rt)
{
	int ret = lazy_lines(f);

	if (ret || !f->lazy_n)
		return ret;
	return walk_lines(rt, lazy_place_cb, f);
}

/* ---- places from functions ---------------------------------------------------------- */

struct inst_walk {
	struct finder *f;
	void *origin; /* the abstract DIE's address in the section */
	int ret, found;
};

static int inst_cb(Dwarf_Die *in, void *data)
{
	struct inst_walk *iw = data;
	struct finder *f = iw->f;
	Dwarf_Attribute attr;
	Dwarf_Die origin;
	Dwarf_Addr addr;
	Dwarf_Word cl, cf, df;
	int dl;

	if (!die_is_func_instance(in))
		return FIND_CONTINUE;
	if (!dwarf_attr(in, DW_AT_abstract_origin, &attr) || !dwarf_formref_die(&attr, &origin) ||
	    origin.addr != iw->origin)
		return FIND_CONTINUE;
	/* perf ignores an instance whose call is at the function's own declaration */
	if (dwarf_tag(in) == DW_TAG_inlined_subroutine && dwarf_decl_line(&origin, &dl) == 0 &&
	    !die_udata(in, DW_AT_call_line, &cl) && (int)cl == dl &&
	    !die_udata(&origin, DW_AT_decl_file, &df) && !die_udata(in, DW_AT_call_file, &cf) &&
	    cf == df)
		return FIND_CONTINUE;
	if (dwarf_entrypc(in, &addr)) {
		iw->ret = pd_fail(f->err, -ENOENT, -1, "Failed to get the entry address of %s",
				  die_name(in));
		return FIND_END;
	}
	iw->found = 1;
	if (f->def->lazy) {
		iw->ret = find_lazy(f, in);
		return iw->ret ? FIND_END : FIND_CONTINUE;
	}
	f->addr = addr + f->def->offset;
	iw->ret = add_place(f, in);
	return iw->ret ? FIND_END : FIND_CONTINUE;
}

struct func_search {
	struct finder *f;
	int ret, matched;
};

static int func_cb(Dwarf_Die *sp, void *data)
{
	struct func_search *fs = data;
	struct finder *f = fs->f;
	const struct pd_def *def = f->def;

	if (!die_is_func_def(sp) || !die_name_is(sp, def->func))
		return DWARF_CB_OK;
	if (def->file && strtailcmp(def->file, dwarf_decl_file(sp) ? dwarf_decl_file(sp) : ""))
		return DWARF_CB_OK;
	fs->matched = 1;
	f->fname = dwarf_decl_file(sp);
	if (def->line) {
		int dl = 0;

		dwarf_decl_line(sp, &dl);
		f->lno = dl + def->line;
		fs->ret = find_by_line(f);
	} else if (die_is_func_instance(sp)) {
		die_entrypc(sp, &f->addr);
		if (f->addr && def->lazy) {
			fs->ret = find_lazy(f, sp);
		} else if (f->addr) {
			if (!def->offset && !def->retprobe && f->has_vars &&
			    !cu_is_optimized(&f->cu))
				skip_prologue(sp, &f->cu, &f->addr);
			f->addr += def->offset;
			fs->ret = add_place(f, sp);
		}
	} else if (!def->no_inlines) {
		struct inst_walk iw = { f, sp->addr, 0, 0 };
		Dwarf_Die mem;

		die_find_child(&f->cu, inst_cb, &iw, &mem);
		fs->ret = iw.ret;
	}
	return DWARF_CB_ABORT; /* one per CU, as perf */
}

static int resolve_symtab(struct pd_bin *b, const struct pd_def *def, struct pd_loc **locs,
			  size_t *nlocs, struct pd_err *err)
{
	GElf_Sym sym;
	struct pd_loc *loc;
	uint64_t off;
	int i;

	if (!def->func || def->line || def->file)
		return pd_fail(err, -ENOENT, -1,
			       "%s has no debug information (looked in: %s); without it only FUNC, "
			       "FUNC+OFF and FUNC%%return can be probed",
			       b->path, b->where);
	for (i = 0; i < def->narg; i++)
		if (is_c_name(def->arg[i].var) || def->arg[i].var[0] == '$') {
			if (!strcmp(def->arg[i].var, "$retval") ||
			    !strncmp(def->arg[i].var, "$stack", 6) ||
			    !strncmp(def->arg[i].var, "$arg", 4) ||
			    !strcasecmp(def->arg[i].var, "$comm"))
				continue;
			return pd_fail(
				err, -ENOENT, def->arg[i].pos,
				"'%s' needs debug information, and %s has none (looked in: %s)",
				def->arg[i].var, b->path, b->where);
		}
	if (sym_lookup(b->elf, def->func, 1, &sym))
		return pd_fail(
			err, -ENOENT, -1,
			"Probe point '%s' not found: %s has no debug information (looked in: %s) "
			"and no function symbol of that name",
			def->func, b->path, b->where);
	if (def->offset >= sym.st_size && sym.st_size)
		return pd_fail(err, -EINVAL, -1,
			       "Offset %lu is past the end of %s (%" PRIu64 " bytes)", def->offset,
			       def->func, (uint64_t)sym.st_size);
	if (addr_to_offset(b, sym.st_value + def->offset, &off))
		return pd_fail(err, -ENOENT, -1, "%s is in no executable segment of %s", def->func,
			       b->path);
	loc = calloc(1, sizeof(*loc));
	if (!loc)
		return pd_fail(err, -ENOMEM, -1, "out of memory");
	loc->addr = sym.st_value + def->offset;
	loc->offset = off;
	loc->symbol = strdup(def->func);
	loc->realname = strdup(def->func);
	loc->args = calloc(1, 8192);
	if (loc->args)
		for (i = 0; i < def->narg; i++) {
			const struct pd_arg *a = &def->arg[i];
			size_t n = strlen(loc->args);

			snprintf(loc->args + n, 8192 - n, " %s%s%s%s%s", a->name ? a->name : "",
				 a->name ? "=" : "", a->var, a->type ? ":" : "",
				 a->type ? a->type : "");
		}
	*locs = loc;
	*nlocs = 1;
	return 0;
}

/* the @idx-th " NAME=BODY[:TYPE]" of @args: its start and length */
static const char *nth_arg(const char *args, int idx, size_t *len)
{
	const char *p = args;
	int k;

	for (k = 0; p && *p; k++) {
		const char *next = strchr(p + 1, ' ');

		if (k == idx) {
			*len = next ? (size_t)(next - p) : strlen(p);
			return p;
		}
		p = next;
	}
	return NULL;
}

/*
 * perf's fill_empty_trace_arg: an argument without a location at some places
 * takes \deade12d there, with the type it has where it has a location; with
 * none anywhere, the definition fails.
 */
static int fill_missing(struct finder *f)
{
	size_t i, j;
	int idx;

	for (idx = 0; idx < PD_MAX_ARGS; idx++) {
		const char *type = NULL, *tok;
		size_t len, tlen = 0;
		int any = 0, found = 0;

		for (i = 0; i < f->nlocs; i++) {
			tok = nth_arg(f->locs[i].args, idx, &len);
			if (!tok)
				continue;
			any = 1;
			if (memchr(tok, PD_MISSING[0], len))
				continue;
			if (!found) {
				const char *eq = memchr(tok, '=', len), *c;

				found = 1;
				for (c = tok + len; eq && c > eq; c--)
					if (c[-1] == ':') {
						type = c - 1;
						tlen = (size_t)(tok + len - type);
						break;
					}
			}
		}
		if (!any)
			break;
		for (i = 0; i < f->nlocs; i++) {
			char *args = f->locs[i].args, *m;

			tok = nth_arg(args, idx, &len);
			if (!tok || !(m = memchr(tok, PD_MISSING[0], len)))
				continue;
			if (!found)
				return pd_fail(f->err, -ENOENT, -1, "%s",
					       f->why[idx] ? f->why[idx] :
							     "an argument has no location");
			fprintf(stderr,
				"fdr probe: warning: %s; there it records perf's marker value %s "
				"(0xdeade12d), not the variable\n",
				f->why[idx] ? f->why[idx] : "an argument has no location",
				PD_DEADVAL);
			/* replace the marker by the value and the type */
			j = strlen(args);
			if (j + strlen(PD_DEADVAL) + tlen + 1 > 8192)
				return pd_fail(f->err, -E2BIG, -1, "too many arguments");
			memmove(m + strlen(PD_DEADVAL) + tlen, m + 1, strlen(m + 1) + 1);
			memcpy(m, PD_DEADVAL, strlen(PD_DEADVAL));
			if (tlen)
				memcpy(m + strlen(PD_DEADVAL), type, tlen);
		}
	}
	return 0;
}

static int resolve(struct pd_bin *b, const struct pd_def *def, struct pd_loc **locs, size_t *nlocs,
		   struct pd_err *err, int vars_mode, int externs);

int pd_resolve(struct pd_bin *b, const struct pd_def *def, struct pd_loc **locs, size_t *nlocs,
	       struct pd_err *err)
{
	return resolve(b, def, locs, nlocs, err, 0, 0);
}

int pd_vars(struct pd_bin *b, const struct pd_def *def, int externs, struct pd_loc **locs,
	    size_t *nlocs, struct pd_err *err)
{
	if (!b->dw)
		return pd_fail(err, -ENOENT, -1,
			       "%s has no debug information (looked in: %s): no variables to show",
			       b->path, b->where);
	return resolve(b, def, locs, nlocs, err, 1, externs);
}

static int resolve(struct pd_bin *b, const struct pd_def *def, struct pd_loc **locs, size_t *nlocs,
		   struct pd_err *err, int vars_mode, int externs)
{
	struct finder f;
	Dwarf_Off off = 0, noff;
	size_t hl;
	int i, ret = 0, matched = 0;

	*locs = NULL;
	*nlocs = 0;
	err->pos = -1;
	err->usage = 0;
	if (!b->dw)
		return resolve_symtab(b, def, locs, nlocs, err);
	memset(&f, 0, sizeof(f));
	f.b = b;
	f.def = def;
	f.err = err;
	f.vars_mode = vars_mode;
	f.externs = externs;
	for (i = 0; i < def->narg; i++)
		if (is_c_name(def->arg[i].var) || !strcmp(def->arg[i].var, "$params") ||
		    !strcmp(def->arg[i].var, "$vars"))
			f.has_vars = 1;
	while (dwarf_nextcu(b->dw, off, &noff, &hl, NULL, NULL, NULL) == 0) {
		if (!dwarf_offdie(b->dw, off + hl, &f.cu)) {
			off = noff;
			continue;
		}
		f.fname = NULL;
		if (def->file) {
			Dwarf_Files *files;
			size_t nf, k;

			if (dwarf_getsrcfiles(&f.cu, &files, &nf) == 0)
				for (k = 0; k < nf; k++) {
					const char *src = dwarf_filesrc(files, k, NULL, NULL);

					if (src && !strtailcmp(src, def->file)) {
						f.fname = src;
						break;
					}
				}
		}
		if (!def->file || f.fname) {
			if (def->func) {
				struct func_search fs = { &f, 0, 0 };

				dwarf_getfuncs(&f.cu, func_cb, &fs, 0);
				ret = fs.ret;
				matched |= fs.matched;
			} else if (def->lazy) {
				ret = find_lazy(&f, &f.cu);
				matched = 1;
			} else {
				f.lno = def->line;
				ret = find_by_line(&f);
				matched = 1;
			}
			if (ret < 0)
				break;
		}
		off = noff;
	}
	if (ret < 0) {
		free(f.lazy_lines);
		pd_locs_free(f.locs, f.nlocs);
		return ret;
	}
	if (!f.nlocs) {
		pd_locs_free(f.locs, f.nlocs);
		if (def->func && !matched) {
			GElf_Sym sym;

			if (!def->line && !def->file && !f.has_vars &&
			    !sym_lookup(b->elf, def->func, 1, &sym))
				return resolve_symtab(b, def, locs, nlocs, err);
			return pd_fail(
				err, -ENOENT, -1,
				"Probe point '%s' not found: no function of that name in the debug "
				"information of %s (%s)",
				def->func, b->path, b->debug_file);
		}
		if (def->func && def->no_inlines && !def->line && !def->lazy)
			return pd_fail(
				err, -ENOENT, -1,
				"Probe point '%s' not found: it has no code of its own (it is only "
				"inlined), and --no-inlines leaves its inlined copies out",
				def->func);
		if (def->line && f.fname)
			return pd_fail(
				err, -ENOENT, -1,
				"Probe point not found: line %d of %s has no code that can be probed",
				f.lno, f.fname);
		if (def->file)
			return pd_fail(
				err, -ENOENT, -1,
				"Probe point not found: no compilation unit of %s has the source file %s",
				b->path, def->file);
		if (def->lazy)
			return pd_fail(
				err, -ENOENT, -1,
				"Probe point not found: no line of %s with code matches '%s' "
				"(perf would probe the function's entry instead)",
				def->func ? def->func : "the file", def->lazy);
		return pd_fail(err, -ENOENT, -1, "Probe point not found in %s", b->path);
	}
	free(f.lazy_lines);
	f.lazy_lines = NULL;
	ret = fill_missing(&f);
	for (i = 0; i < PD_MAX_ARGS; i++)
		free(f.why[i]);
	if (ret) {
		pd_locs_free(f.locs, f.nlocs);
		return ret;
	}
	*locs = f.locs;
	*nlocs = f.nlocs;
	return 0;
}

void pd_locs_free(struct pd_loc *locs, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(locs[i].symbol);
		free(locs[i].realname);
		free(locs[i].args);
	}
	free(locs);
}

static int sym_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A growing list of names (pd_funcs) */
struct names {
	char **v;
	size_t n, cap;
};

static int names_add(struct names *l, const char *name)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 64;
		void *p = realloc(l->v, cap * sizeof(char *));

		if (!p)
			return -ENOMEM;
		l->v = p;
		l->cap = cap;
	}
	l->v[l->n] = strdup(name);
	if (!l->v[l->n])
		return -ENOMEM;
	l->n++;
	return 0;
}

struct funcs_arg {
	Elf *elf;
	const char *filter;
	struct names *l;
};

/* One symbol for -F: perf's kinds, labels only in text or data sections */
static int funcs_one(const GElf_Sym *sym, size_t strtab, void *arg)
{
	struct funcs_arg *a = arg;
	const char *name;
	int type;

	if (sym->st_shndx == SHN_ABS)
		return 0;
	type = GELF_ST_TYPE(sym->st_info);
	if (type != STT_FUNC && type != STT_OBJECT && type != STT_NOTYPE && type != STT_GNU_IFUNC)
		return 0;
	name = elf_strptr(a->elf, strtab, sym->st_name);
	if (!name || !*name)
		return 0;
	if (type == STT_NOTYPE) {
		/* perf: a label only in a text or data section */
		Elf_Scn *ls = elf_getscn(a->elf, sym->st_shndx);
		GElf_Shdr lsh;
		const char *secname;
		size_t strndx;

		if (!ls || !gelf_getshdr(ls, &lsh) || elf_getshdrstrndx(a->elf, &strndx) ||
		    !(secname = elf_strptr(a->elf, strndx, lsh.sh_name)) ||
		    (!strstr(secname, "text") && !strstr(secname, "data")))
			return 0;
	}
	if (a->filter ? fnmatch(a->filter, name, 0) != 0 : name[0] == '_')
		return 0;
	return names_add(a->l, name);
}

int pd_funcs(struct pd_bin *b, const char *filter, char ***out, size_t *nout)
{
	struct names l = { NULL, 0, 0 };
	struct funcs_arg fa = { b->elf, filter, &l };
	size_t i, k;

	*out = NULL;
	*nout = 0;
	/* both tables, as perf: .dynsym has names .symtab gives versioned (stdin@GLIBC_2.2.5) */
	if (sym_walk(b->elf, funcs_one, &fa))
		goto nomem;
	/* perf's NAME@plt for each PLT slot (.rela.plt), shown only through a filter */
	{
		Elf_Scn *scn = NULL;
		size_t shstrndx;

		if (elf_getshdrstrndx(b->elf, &shstrndx))
			shstrndx = 0;
		while (filter && (scn = elf_nextscn(b->elf, scn))) {
			GElf_Shdr sh, dsh;
			Elf_Data *data, *dyn;
			Elf_Scn *dscn;
			const char *sname = elf_strptr(b->elf, shstrndx, 0);
			size_t nr;

			if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA || !sh.sh_entsize)
				continue;
			sname = elf_strptr(b->elf, shstrndx, sh.sh_name);
			if (!sname || strcmp(sname, ".rela.plt"))
				continue;
			dscn = elf_getscn(b->elf, sh.sh_link);
			if (!dscn || !gelf_getshdr(dscn, &dsh) ||
			    !(dyn = elf_getdata(dscn, NULL)) || !(data = elf_getdata(scn, NULL)))
				continue;
			nr = sh.sh_size / sh.sh_entsize;
			for (i = 0; i < nr; i++) {
				GElf_Rela r;
				GElf_Sym sym;
				const char *name;
				char full[512];

				if (!gelf_getrela(data, (int)i, &r) ||
				    GELF_R_TYPE(r.r_info) != R_X86_64_JUMP_SLOT ||
				    !gelf_getsym(dyn, (int)GELF_R_SYM(r.r_info), &sym))
					continue;
				name = elf_strptr(b->elf, dsh.sh_link, sym.st_name);
				if (!name || !*name)
					continue;
				snprintf(full, sizeof(full), "%s@plt", name);
				if (fnmatch(filter, full, 0))
					continue;
				if (names_add(&l, full))
					goto nomem;
			}
		}
	}
	if (l.n)
		qsort(l.v, l.n, sizeof(char *), sym_cmp);
	for (i = k = 0; i < l.n; i++) {
		if (k && !strcmp(l.v[i], l.v[k - 1]))
			free(l.v[i]);
		else
			l.v[k++] = l.v[i];
	}
	*out = l.v;
	*nout = k;
	return 0;
nomem:
	for (i = 0; i < l.n; i++)
		free(l.v[i]);
	free(l.v);
	return -ENOMEM;
}

/* ---- -L: the source, probeable lines numbered ---------------------------------------- */

struct line_finder {
	Dwarf_Die *cu;
	const char *fname; /* the file the lines must be of */
	int lno_s, lno_e;
	int *lines; /* sorted, unique */
	size_t n, cap;
	char *path; /* the first matching line's file */
	int found;
};

static int range_cb(void *data, const char *fname, int lineno, Dwarf_Addr addr)
{
	struct line_finder *lf = data;
	size_t i;

	if (strtailcmp(fname, lf->fname) || lf->lno_s > lineno || lf->lno_e < lineno)
		return 0;
	{
		/* perf: only a line its address maps back to */
		const char *rfile;
		int rline;

		reverse_line(lf->cu, addr, &rfile, &rline);
		if (rline > 0 && rfile && (lineno != rline || strcmp(fname, rfile)))
			return 0;
	}
	if (!lf->path && !(lf->path = strdup(fname)))
		return -ENOMEM;
	for (i = 0; i < lf->n && lf->lines[i] < lineno; i++)
		;
	if (i < lf->n && lf->lines[i] == lineno)
		return 0;
	if (lf->n == lf->cap) {
		void *p = realloc(lf->lines, (lf->cap ? lf->cap * 2 : 64) * sizeof(int));

		if (!p)
			return -ENOMEM;
		lf->lines = p;
		lf->cap = lf->cap ? lf->cap * 2 : 64;
	}
	memmove(lf->lines + i + 1, lf->lines + i, (lf->n - i) * sizeof(int));
	lf->lines[i] = lineno;
	lf->n++;
	return 0;
}

struct range_inst {
	struct line_finder *lf;
	void *origin;
	int ret;
};

static int range_inst_cb(Dwarf_Die *in, void *data)
{
	struct range_inst *ri = data;
	Dwarf_Attribute attr;
	Dwarf_Die origin;
	Dwarf_Word cl, cf, df;
	int dl;

	if (!die_is_func_instance(in) || !dwarf_attr(in, DW_AT_abstract_origin, &attr) ||
	    !dwarf_formref_die(&attr, &origin) || origin.addr != ri->origin)
		return FIND_CONTINUE;
	if (dwarf_tag(in) == DW_TAG_inlined_subroutine && dwarf_decl_line(&origin, &dl) == 0 &&
	    !die_udata(in, DW_AT_call_line, &cl) && (int)cl == dl &&
	    !die_udata(&origin, DW_AT_decl_file, &df) && !die_udata(in, DW_AT_call_file, &cf) &&
	    cf == df)
		return FIND_CONTINUE;
	ri->ret = walk_lines(in, range_cb, ri->lf);
	return ri->ret < 0 ? FIND_END : FIND_CONTINUE;
}

struct range_search {
	struct line_finder *lf;
	const char *func, *file;
	int start, end, offset, ret, matched;
	Dwarf_Die cu;
};

static int range_func_cb(Dwarf_Die *sp, void *data)
{
	struct range_search *rs = data;
	struct line_finder *lf = rs->lf;
	long s, e;

	if (rs->file && strtailcmp(rs->file, dwarf_decl_file(sp) ? dwarf_decl_file(sp) : ""))
		return DWARF_CB_OK;
	if (!die_is_func_def(sp) || !die_name_is(sp, rs->func))
		return DWARF_CB_OK;
	rs->matched = 1;
	lf->fname = dwarf_decl_file(sp);
	dwarf_decl_line(sp, &rs->offset);
	s = (long)rs->offset + rs->start;
	e = (long)rs->offset + rs->end;
	lf->lno_s = s > INT_MAX ? INT_MAX : (int)s;
	lf->lno_e = e > INT_MAX ? INT_MAX : (int)e;
	if (!die_is_func_instance(sp)) {
		struct range_inst ri = { lf, sp->addr, 0 };
		Dwarf_Die mem;

		die_find_child(&rs->cu, range_inst_cb, &ri, &mem);
		rs->ret = ri.ret;
	} else {
		rs->ret = walk_lines(sp, range_cb, lf);
	}
	return DWARF_CB_ABORT;
}

/* skip one line of @fp; 0 at EOF */
static int show_line_skip(FILE *fp)
{
	char buf[256];

	while (fgets(buf, sizeof(buf), fp))
		if (buf[strlen(buf) - 1] == '\n')
			return 1;
	return 0;
}

/* one line of @fp, with its number @num (perf's "%7d  ") or 9 spaces; 0 at EOF */
static int show_line(FILE *fp, long num, int numbered)
{
	char buf[256];
	int first = 1;

	while (fgets(buf, sizeof(buf), fp)) {
		size_t len = strlen(buf);

		if (first) {
			if (numbered)
				printf("%7ld  %s", num, buf);
			else
				printf("         %s", buf);
			first = 0;
		} else {
			fputs(buf, stdout);
		}
		if (len && buf[len - 1] == '\n')
			return 1;
	}
	return first ? 0 : 1;
}

int pd_lines(struct pd_bin *b, const char *func, const char *file, int start, int end,
	     struct pd_err *err)
{
	struct line_finder lf;
	struct range_search rs;
	Dwarf_Off off = 0, noff;
	size_t hl, i;
	char path[4096];
	const char *comp_dir = NULL;
	FILE *fp;
	long l, lstart, lend;
	int ret = 0;

	if (!b->dw)
		return pd_fail(
			err, -ENOENT, -1,
			"%s has no debug information (looked in: %s): no source lines to show",
			b->path, b->where);
	memset(&lf, 0, sizeof(lf));
	memset(&rs, 0, sizeof(rs));
	rs.lf = &lf;
	lf.cu = &rs.cu;
	rs.func = func;
	rs.file = file;
	rs.start = start;
	rs.end = end;
	while (!lf.n && ret >= 0 && dwarf_nextcu(b->dw, off, &noff, &hl, NULL, NULL, NULL) == 0) {
		if (!dwarf_offdie(b->dw, off + hl, &rs.cu)) {
			off = noff;
			continue;
		}
		lf.fname = NULL;
		if (file) {
			Dwarf_Files *files;
			size_t nf, k;

			if (dwarf_getsrcfiles(&rs.cu, &files, &nf) == 0)
				for (k = 0; k < nf; k++) {
					const char *src = dwarf_filesrc(files, k, NULL, NULL);

					if (src && !strtailcmp(src, file)) {
						lf.fname = src;
						break;
					}
				}
		}
		if (!file || lf.fname) {
			if (func) {
				rs.ret = 0;
				dwarf_getfuncs(&rs.cu, range_func_cb, &rs, 0);
				ret = rs.ret;
			} else {
				lf.lno_s = start;
				lf.lno_e = end;
				ret = walk_lines(&rs.cu, range_cb, &lf);
			}
		}
		if (lf.n) {
			Dwarf_Attribute attr;

			comp_dir = dwarf_attr(&rs.cu, DW_AT_comp_dir, &attr) ?
					   dwarf_formstring(&attr) :
					   NULL;
		}
		off = noff;
	}
	if (ret < 0 || !lf.n) {
		free(lf.lines);
		free(lf.path);
		if (ret < 0)
			return pd_fail(err, ret, -1, "reading the lines failed: %s",
				       strerror(-ret));
		return pd_fail(err, -ENOENT, -1,
			       "Specified source line is not found (no code of %s%s%s in the debug "
			       "information of %s)",
			       func ? func : file, func && file ? "@" : "",
			       func && file ? file : "", b->path);
	}
	if (lf.path[0] != '/' && comp_dir)
		snprintf(path, sizeof(path), "%s/%s", comp_dir, lf.path);
	else
		snprintf(path, sizeof(path), "%s", lf.path);
	fp = fopen(path, "r");
	if (!fp) {
		int e = errno;

		free(lf.lines);
		free(lf.path);
		return pd_fail(err, -e, -1, "the source file %s: %s", path, strerror(e));
	}
	lstart = func ? lf.lno_s : start;
	lend = func ? lf.lno_e : end;
	if (func)
		printf("<%s@%s:%ld>\n", func, path, lstart - rs.offset);
	else
		printf("<%s:%ld>\n", path, lstart);
	l = 1;
	while (l < lstart) {
		if (!show_line_skip(fp))
			goto eof;
		l++;
	}
	for (i = 0; i < lf.n; i++) {
		for (; lf.lines[i] > l; l++)
			if (!show_line(fp, 0, 0))
				goto eof;
		if (!show_line(fp, l - (func ? rs.offset : 0), 1))
			goto eof;
		l++;
	}
	if (lend == INT_MAX)
		lend = l + 2; /* perf's NR_ADDITIONAL_LINES */
	while (l <= lend && show_line(fp, 0, 0))
		l++;
	fclose(fp);
	free(lf.lines);
	free(lf.path);
	return 0;
eof:
	fclose(fp);
	free(lf.lines);
	free(lf.path);
	return pd_fail(err, -EINVAL, -1, "Source file %s is shorter than expected", path);
}

/* ---- -l: a place back to FUNC+OFF or FUNC:LINE ------------------------------------- */

int pd_where(struct pd_bin *b, uint64_t offset, char *out, size_t len)
{
	Dwarf_Die cu, sp, in;
	Dwarf_Addr addr = 0, base = 0, ea;
	const char *fname = NULL, *func = NULL, *basefunc = NULL, *tmp;
	int baseline = 0, lineno = 0, found = 0;
	long line = 0;
	uint64_t off = 0;
	size_t n, i, flen;

	if (elf_getphdrnum(b->elf, &n))
		return -ENOENT;
	for (i = 0; i < n && !found; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(b->elf, (int)i, &ph) && ph.p_type == PT_LOAD &&
		    (ph.p_flags & PF_X) && offset >= ph.p_offset &&
		    offset - ph.p_offset < ph.p_filesz) {
			addr = offset - ph.p_offset + ph.p_vaddr;
			found = 1;
		}
	}
	if (!found)
		return -ENOENT;
	if (!b->dw || !dwarf_addrdie(b->dw, addr, &cu))
		goto symtab;
	/* perf's debuginfo__find_probe_point */
	reverse_line(&cu, addr, &fname, &lineno);
	if (die_find_realfunc(&cu, addr, &sp)) {
		func = basefunc = dwarf_diename(&sp);
		if (!func || dwarf_entrypc(&sp, &base) || dwarf_decl_line(&sp, &baseline)) {
			lineno = 0;
			goto post;
		}
		fname = dwarf_decl_file(&sp);
		if (addr == base) {
			lineno = baseline;
			goto post;
		}
		while (die_find_child(&sp, inline_cb, &addr, &in)) {
			Dwarf_Word cl;

			if (dwarf_entrypc(&in, &ea) == 0 && ea == addr) {
				lineno = die_udata(&in, DW_AT_call_line, &cl) ? 0 : (int)cl;
				fname = call_file(&in);
				break;
			}
			tmp = dwarf_diename(&in);
			if (!tmp || dwarf_decl_line(&in, &baseline))
				break;
			func = tmp;
			sp = in;
		}
		tmp = dwarf_decl_file(&sp);
		if (!tmp || !fname || strcmp(tmp, fname))
			lineno = 0;
	}
post:
	if (lineno)
		line = lineno - baseline;
	else if (basefunc) {
		off = addr - base;
		func = basefunc;
	}
	if (!func) {
symtab:
		/* perf's find_perf_probe_point_from_map: FUNC[+OFF] from the symbols */
		fname = NULL;
		line = 0;
		if (sym_at(b->elf, addr, &func, &off))
			return -ENOENT;
	}
	n = (size_t)snprintf(out, len, "%s", func);
	if (off && n < len)
		n += (size_t)snprintf(out + n, len - n, "+%" PRIu64, off);
	if (line && n < len)
		n += (size_t)snprintf(out + n, len - n, ":%ld", line);
	if (fname && n < len) {
		/* perf: at most the last 30 characters, from a '/' */
		flen = strlen(fname);
		tmp = fname;
		if (flen > 30) {
			tmp = strchr(fname + flen - 30, '/');
			tmp = tmp ? tmp + 1 : fname + flen - 30;
		}
		snprintf(out + n, len - n, "@%s", tmp);
	}
	return 0;
}
