/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * probe-dwarf.h - what fdr probe (probe.c) and its DWARF resolver
 * (probe-dwarf.c, elfutils' libdw) share: a parsed perf probe definition, and
 * the probe locations it resolves to, each with its uprobe_events arguments.
 * docs/design/fdr-probe.md explains the rules, which are perf probe's.
 */
#ifndef FDR_CLI_PROBE_DWARF_H
#define FDR_CLI_PROBE_DWARF_H

#include <stddef.h>
#include <stdint.h>

#define PD_MAX_ARGS 128 /* perf's MAX_PROBE_ARGS */
#define PD_MAX_FIELDS 16
#define PD_MAX_LOCS 128 /* perf's MAX_PROBES */

/* one step of VAR->a.b[2]: a member (ref: reached by "->") or an index */
struct pd_field {
	char *name; /* "a", or "[2]" for an index */
	long index;
	int ref;
	int is_index;
};

/* [NAME=]VAR[FIELDS][:TYPE], or a raw FETCHARG (var not a C name) */
struct pd_arg {
	char *name; /* given, or for fields the last member's name; NULL */
	char *var;
	char *type; /* NULL: as the variable's type says */
	struct pd_field field[PD_MAX_FIELDS];
	int nfield;
	int pos; /* byte offset of the argument in the definition, for carets */
};

struct pd_def {
	char *group, *event; /* NULL: the defaults */
	char *func, *file; /* FUNC, @SRC or SRC */
	int line; /* FUNC:RELLINE (relative) or SRC:LINE; 0 none */
	char *lazy; /* ;PATTERN: the lines of the source that match it */
	unsigned long offset; /* FUNC+OFF */
	int retprobe;
	int no_inlines; /* --no-inlines: a function without code of its own is not probed */
	struct pd_arg arg[PD_MAX_ARGS];
	int narg;
	char *text; /* the definition, as written (the strings point into copies of it) */
};

/* one place the definition resolved to */
struct pd_loc {
	uint64_t addr; /* link-time address */
	uint64_t offset; /* file offset: what uprobe_events takes */
	char *symbol; /* the function holding it */
	char *realname; /* the scope's name (an inlined function's, for one) */
	char *args; /* " NAME=FETCHARG:TYPE..." as uprobe_events takes them */
};

struct pd_err {
	char msg[1024];
	int pos; /* byte offset in the definition, -1 for none */
	int usage; /* 1: the definition is wrong (exit 2); 0: resolving failed */
};

struct pd_bin;

/*
 * Open @path (an ELF file) and its debug information: in the file, through
 * .gnu_debuglink, or /usr/lib/debug/.build-id. A file without debug
 * information opens (FUNC and FUNC+OFF use its symbol table);
 * pd_debug_where() then says where fdr looked. 0 or a negative errno, with
 * @err filled.
 */
int pd_open(const char *path, struct pd_bin **out, struct pd_err *err);
void pd_close(struct pd_bin *b);
/* the file the debug information came from, or NULL when there is none */
const char *pd_debug_file(const struct pd_bin *b);
/* where fdr looked for debug information (for messages) */
const char *pd_debug_where(const struct pd_bin *b);

/*
 * The locations of @def in @b, in the order perf probe finds them, at most
 * PD_MAX_LOCS; each with its arguments. 0, or a negative errno with @err.
 */
int pd_resolve(struct pd_bin *b, const struct pd_def *def, struct pd_loc **locs, size_t *nlocs,
	       struct pd_err *err);
void pd_locs_free(struct pd_loc *locs, size_t n);
/*
 * perf probe -V: the places of @def (arguments ignored), each loc's args the
 * text perf prints for it ("\t@<FUNC+OFF>\n\t\tTYPE\tNAME\n"...); @externs:
 * the compilation unit's globals too.
 */
int pd_vars(struct pd_bin *b, const struct pd_def *def, int externs, struct pd_loc **locs,
	    size_t *nlocs, struct pd_err *err);
/*
 * perf probe -F: the symbols of the file (functions and data), sorted, once
 * each; @filter a glob, else every name that does not begin with '_'. The
 * array and its strings are malloc()ed.
 */
int pd_funcs(struct pd_bin *b, const char *filter, char ***names, size_t *n);
/*
 * perf probe -L: print the source lines @start..@end (relative to FUNC's
 * declaration, or of the file SRC), the lines that have code numbered.
 */
int pd_lines(struct pd_bin *b, const char *func, const char *file, int start, int end,
	     struct pd_err *err);

/*
 * perf probe -l's place of file offset @offset: "FUNC[+OFF|:LINE]@FILE"
 * (FILE at most its last 30 characters), "FUNC[+OFF]" from the symbol table
 * without debug information there. 0, or -ENOENT where no function holds it.
 */
int pd_where(struct pd_bin *b, uint64_t offset, char *out, size_t len);

#endif /* FDR_CLI_PROBE_DWARF_H */
