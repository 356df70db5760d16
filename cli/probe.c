// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * probe.c - fdr probe: dynamic events placed from source lines and variable
 * names, as perf probe places kernel uprobes, written to the session's
 * uprobe_events (the line 'fdr append uprobe_events' would write).
 *
 *   fdr probe -x BINARY [-n] [-v|-q] [-f] [-a] '[[GROUP:]EVENT=]POINT [ARG...]'...
 *   fdr probe -x BINARY -d GLOB        (or without -x)
 *   fdr probe -l
 *
 * The definition's grammar is perf probe's (parsed here, pd_parse()); the
 * places and fetch arguments come from the binary's DWARF (probe-dwarf.c).
 * Exit codes: 0 done, 1 the definition could not be resolved or written, 2 a
 * definition or option that is wrong (with a caret under the place).
 * docs/design/fdr-probe.md has the rules and where fdr differs from perf.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fdr/fdr-ctl.h"
#include "fdr/fdr-read.h"
#include "cli.h"
#ifdef FDR_HAVE_LIBDW
#include "probe-dwarf.h"

#define PROBE_MAX_DEFS 64

/* "fdr probe: MSG", the definition, a caret under byte @pos; EXIT_USAGE */
static int def_error(const char *text, int pos, const char *msg)
{
	fprintf(stderr, "fdr %s: %s\n", verb, msg);
	if (pos >= 0 && text) {
		fprintf(stderr, "  %s\n", text);
		fprintf(stderr, "  %*s^\n", pos, "");
	}
	fprintf(stderr, "Try 'fdr help %s'.\n", verb);
	return EXIT_USAGE;
}

static int is_ident(const char *s)
{
	if (!*s || !(isalpha((unsigned char)*s) || *s == '_'))
		return 0;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_')
			return 0;
	return 1;
}

static int c_name_start(const char *s)
{
	return isalpha((unsigned char)s[0]) || s[0] == '_';
}

/*
 * The fields of an argument, "->M", ".M", "[N]"..., from @p (a copy); their
 * names are written to *@store. @pos is @p's offset in the definition.
 */
static int parse_fields(const char *p, int pos, const char *text, char **store, struct pd_arg *a)
{
	const char *p0 = p, *good = a->var;

	while (*p) {
		struct pd_field *fl;

		if (a->nfield >= PD_MAX_FIELDS)
			return def_error(text, pos + (int)(p - p0), "too many fields (at most 16)");
		fl = &a->field[a->nfield];
		if (*p == '[') {
			char *end;

			fl->is_index = 1;
			fl->ref = 1;
			fl->index = strtol(p + 1, &end, 0);
			if (*end != ']' || end == p + 1)
				return def_error(text, pos + (int)(p - p0) + 1,
						 "Array index must be a number");
			fl->name = *store;
			*store += sprintf(*store, "%.*s", (int)(end + 1 - p), p) + 1;
			p = end + 1;
		} else {
			const char *n;
			size_t len;

			if (*p == '.') {
				fl->ref = 0;
				n = p + 1;
			} else if (p[0] == '-' && p[1] == '>') {
				fl->ref = 1;
				n = p + 2;
			} else {
				return def_error(
					text, pos + (int)(p - p0),
					"expected '->', '.' or '[' after a variable or member");
			}
			len = strcspn(n, "-.[");
			if (!len || !c_name_start(n))
				return def_error(text, pos + (int)(n - p0),
						 "expected a member name");
			fl->name = *store;
			*store += sprintf(*store, "%.*s", (int)len, n) + 1;
			good = fl->name;
			p = n + len;
		}
		a->nfield++;
	}
	if (!a->name)
		a->name = (char *)good; /* perf: the last member's name */
	return 0;
}

/* [NAME=]VAR[->M|.M|[N]]...[:TYPE] or a raw FETCHARG; perf's parse_perf_probe_arg */
static int parse_arg(char *s, int pos, const char *text, char **store, struct pd_arg *a)
{
	char *t, *str = s, *fields;

	memset(a, 0, sizeof(*a));
	a->pos = pos;
	t = strchr(str, '=');
	if (t) {
		*t = 0;
		a->name = str;
		if (!is_ident(a->name))
			return def_error(text, pos,
					 "an argument's name must be a C identifier (NAME=ARG)");
		str = t + 1;
	}
	t = strchr(str, ':');
	if (t) {
		*t = 0;
		a->type = t + 1;
		if (!*a->type)
			return def_error(
				text, pos + (int)(t - s) + 1,
				"expected a type after ':' (u8..u64, s8..s64, x8..x64, string...)");
	}
	if (!*str)
		return def_error(text, pos + (int)(str - s), "expected an argument, found nothing");
	a->var = str;
	t = strpbrk(str, "-.[");
	if (!c_name_start(str) || !t)
		return 0; /* a variable, a register, a special value, a raw FETCHARG */
	fields = *store;
	*store += sprintf(fields, "%s", t) + 1;
	*t = 0;
	return parse_fields(fields, pos + (int)(t - s), text, store, a);
}

/*
 * One definition: perf's "[[GROUP:]EVENT=]FUNC[@SRC][+OFF|:RLN|%return] ARG..."
 * or "[[GROUP:]EVENT=]SRC:LINE ARG...". @text is kept for messages; the
 * pieces are copies in def->text.
 */
static int pd_parse(const char *text, struct pd_def *def)
{
	size_t len = strlen(text);
	char *buf, *w, *save = NULL, *store;
	char *pt, *p;
	int file_spec = 0, pos;
	char nc = 0;

	memset(def, 0, sizeof(*def));
	/* the copy of words, then room for field names */
	buf = malloc(len * 3 + 64);
	if (!buf)
		return die(1, "out of memory");
	def->text = buf;
	memcpy(buf, text, len + 1);
	store = buf + len + 1;
	w = strtok_r(buf, " \t", &save);
	if (!w)
		return def_error(
			text, 0,
			"expected a probe point (FUNC, FUNC:LINE, SRC:LINE...), found nothing");
	pt = w;
	pos = (int)(pt - buf);
	/* EVENT= or GROUP:EVENT= */
	p = strpbrk(pt, ";=@+%");
	if (p && *p == '=') {
		char *c;

		*p = 0;
		c = strchr(pt, ':');
		if (c) {
			*c = 0;
			def->group = pt;
			def->event = c + 1;
			if (!is_ident(def->group))
				return def_error(text, pos,
						 "the group name must be a C identifier");
		} else {
			def->event = pt;
		}
		if (!is_ident(def->event))
			return def_error(text, pos + (int)(def->event - pt),
					 "the event name must be a C identifier");
		pt = p + 1;
		pos = (int)(pt - buf);
	}
	if (!strpbrk(pt, "+@%")) {
		p = strpbrk(pt, ";:");
		if (p && memchr(pt, '.', (size_t)(p - pt)))
			file_spec = 1;
	}
	p = strpbrk(pt, ";:+@%");
	if (p) {
		nc = *p;
		*p++ = 0;
	}
	if (!*pt)
		return def_error(text, pos, "expected a function or source file name");
	if (file_spec)
		def->file = pt;
	else
		def->func = pt;
	if (def->func && (!c_name_start(def->func) || !is_ident(def->func)))
		return def_error(
			text, pos,
			def->func[0] == '0' ?
				"absolute addresses are not supported (use 'fdr append uprobe_events' with PATH:OFFSET)" :
				"expected a function name (a C identifier) or SRC:LINE");
	while (p) {
		char *arg = p, c = nc, *end;
		int apos = (int)(arg - buf);

		if (c == ';') { /* the lazy pattern is the last part */
			if (!*arg)
				return def_error(text, apos, "expected a pattern after ';'");
			def->lazy = arg;
			break;
		}
		p = strpbrk(arg, ";:+@%");
		if (p) {
			nc = *p;
			*p++ = 0;
		}
		switch (c) {
		case ':': {
			unsigned long v;

			errno = 0;
			v = strtoul(arg, &end, 0);
			if (*end || end == arg || errno || v > INT_MAX)
				return def_error(text, apos,
						 "There is non-digit char in line number");
			def->line = (int)v;
			break;
		}
		case '+':
			errno = 0;
			def->offset = strtoul(arg, &end, 0);
			if (*end || end == arg || errno)
				return def_error(text, apos,
						 "There is non-digit character in offset");
			break;
		case '@':
			if (def->file)
				return def_error(text, apos, "SRC@SRC is not allowed");
			if (!*arg)
				return def_error(text, apos, "expected a source file after '@'");
			def->file = arg;
			break;
		case '%':
			if (strcmp(arg, "return"))
				return def_error(text, apos, "only %return is supported");
			def->retprobe = 1;
			break;
		}
	}
	if (def->lazy && def->line)
		return def_error(text, pos, "Lazy pattern can't be used with line number");
	if (def->lazy && def->offset)
		return def_error(text, pos, "Lazy pattern can't be used with offset");
	if (def->line && def->offset)
		return def_error(text, pos, "Offset can't be used with line number");
	if (!def->line && !def->lazy && def->file && !def->func)
		return def_error(text, pos, "File always requires line number or lazy pattern");
	if (def->offset && !def->func)
		return def_error(text, pos, "Offset requires an entry function");
	if ((def->offset || def->line || def->lazy) && def->retprobe)
		return def_error(text, pos,
				 "Offset/Line/Lazy pattern can't be used with return probe");
	/* the arguments */
	while ((w = strtok_r(NULL, " \t", &save))) {
		struct pd_arg *a;
		int apos = (int)(w - buf), ret;

		if (def->narg >= PD_MAX_ARGS)
			return def_error(text, apos, "too many arguments (at most 128)");
		a = &def->arg[def->narg];
		ret = parse_arg(w, apos, text, &store, a);
		if (ret)
			return ret;
		if (def->retprobe && (c_name_start(a->var) || !strcmp(a->var, "$params") ||
				      !strcmp(a->var, "$vars")))
			return def_error(
				text, apos,
				"You can't specify local variable for kretprobe (only $retval and raw fetch arguments)");
		def->narg++;
	}
	return 0;
}

/* ---- names -------------------------------------------------------------------------- */

/* perf's default group: probe_ and the file's name up to its first '-', '.' or '_' */
static void default_group(const char *path, char *out, size_t len)
{
	const char *base = strrchr(path, '/');
	size_t n, i;

	base = base ? base + 1 : path;
	n = (size_t)snprintf(out, len, "probe_%.*s", (int)strcspn(base, "-._"), base);
	for (i = 6; i < n && i < len; i++)
		if (!isalnum((unsigned char)out[i]) && out[i] != '_')
			out[i] = '_';
}

/* the probe events the session has: "GROUP/EVENT" lines of uprobe_events */
struct names {
	char (*v)[256];
	size_t n;
};

static int names_has(const struct names *nm, const char *group, const char *event)
{
	char key[256];
	size_t i;

	snprintf(key, sizeof(key), "%s/%s", group, event);
	for (i = 0; i < nm->n; i++)
		if (!strcmp(nm->v[i], key))
			return 1;
	return 0;
}

static int names_add(struct names *nm, const char *group, const char *event)
{
	void *p = realloc(nm->v, (nm->n + 1) * sizeof(*nm->v));

	if (!p)
		return -ENOMEM;
	nm->v = p;
	snprintf(nm->v[nm->n++], sizeof(nm->v[0]), "%s/%s", group, event);
	return 0;
}

/* "p:GRP/EVENT PATH:0x... ARGS" lines into @nm (and their text into @b, kept) */
static int names_read(struct fdr_session *s, struct names *nm, struct fdr_buf *b)
{
	char *line, *save = NULL;
	int ret = slurp(s, "uprobe_events", b);

	if (ret)
		return ret;
	if (!b->data)
		return 0;
	for (line = strtok_r(b->data, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *sp = strchr(line, ' '), *slash;

		if (line[0] && line[1] == ':' && sp &&
		    (slash = memchr(line, '/', (size_t)(sp - line)))) {
			char grp[80], ev[80];

			snprintf(grp, sizeof(grp), "%.*s", (int)(slash - line - 2), line + 2);
			snprintf(ev, sizeof(ev), "%.*s", (int)(sp - slash - 1), slash + 1);
			if (names_add(nm, grp, ev))
				return -ENOMEM;
		}
	}
	return 0;
}

/* the point as the user wrote it, for "(on POINT in PATH with ARGS)" */
static void point_text(const struct pd_def *d, char *out, size_t len)
{
	size_t n = 0;

	if (!d->func)
		n += (size_t)snprintf(out + n, len - n, "@"); /* perf's "@SRC:LINE" */
	if (d->func) {
		n += (size_t)snprintf(out + n, len - n, "%s", d->func);
		if (d->file && n < len)
			n += (size_t)snprintf(out + n, len - n, "@%s", d->file);
		if (d->line && n < len)
			n += (size_t)snprintf(out + n, len - n, ":%d", d->line);
		if (d->offset && n < len)
			n += (size_t)snprintf(out + n, len - n, "+%lu", d->offset);
		if (d->retprobe && n < len)
			n += (size_t)snprintf(out + n, len - n, "%%return");
	} else if (d->lazy) {
		n += (size_t)snprintf(out + n, len - n, "%s", d->file);
	} else {
		n += (size_t)snprintf(out + n, len - n, "%s:%d", d->file, d->line);
	}
	if (d->lazy && n < len)
		snprintf(out + n, len - n, ";%s", d->lazy);
}

/* ---- the verb ----------------------------------------------------------------------- */

struct probe_opts {
	const char *exe;
	int dry, verbose, quiet, force;
	const char *defs[PROBE_MAX_DEFS];
	int ndefs;
	const char *dels[PROBE_MAX_DEFS];
	int ndels;
	int list;
	int funcs; /* -F [FILTER] */
	const char *vars; /* -V DEF */
	const char *lines; /* -L RANGE */
	int externs;
	int no_inlines;
	char last[256]; /* GROUP:EVENT of the last event added, for the hint */
};

/* perf's "  GROUP:EVENT (on POINT in PATH with ARGS)" after --add */
static void show_added(struct probe_opts *o, const struct pd_def *def, const char *group,
		       const char *event, const char *path, int *shown)
{
	char ge[256], point[256];
	int k;

	point_text(def, point, sizeof(point));
	if (!*shown)
		printf("%s new event%s:\n", o->dry ? "Would add" : "Added",
		       o->ndefs > 1 ? "s" : "");
	snprintf(ge, sizeof(ge), "%s:%s", group, event);
	printf("  %-20s (on %s in %s", ge, point, path);
	for (k = 0; k < def->narg; k++) {
		const struct pd_arg *a = &def->arg[k];
		int f;

		printf("%s %s%s%s", k ? "" : " with", a->name ? a->name : "", a->name ? "=" : "",
		       a->var);
		for (f = 0; f < a->nfield; f++)
			printf("%s%s",
			       a->field[f].is_index ? "" :
			       a->field[f].ref	    ? "->" :
						      ".",
			       a->field[f].name);
		if (a->type)
			printf(":%s", a->type);
	}
	printf(")\n");
	snprintf(o->last, sizeof(o->last), "%s", ge);
	*shown = 1;
}

/* one definition: resolve, name, print, append */
static int add_one(struct probe_opts *o, const char *text, struct pd_bin *bin, const char *path,
		   struct fdr_session *s, struct names *nm, int *shown)
{
	struct pd_def def;
	struct pd_loc *locs = NULL;
	size_t nlocs = 0, i;
	struct pd_err err;
	struct {
		char base[80], event[100];
	} *evs = NULL;
	char group[80], base[80], event[100], line[10240];
	int ret;

	ret = pd_parse(text, &def);
	if (ret)
		goto out;
	def.no_inlines = o->no_inlines;
	ret = pd_resolve(bin, &def, &locs, &nlocs, &err);
	if (ret) {
		if (err.pos >= 0)
			def_error(text, err.pos, err.msg);
		else
			fprintf(stderr, "fdr %s: %s\n", verb, err.msg);
		ret = err.usage ? EXIT_USAGE : 1;
		goto out;
	}
	if (def.group)
		snprintf(group, sizeof(group), "%s", def.group);
	else
		default_group(path, group, sizeof(group));
	/*
	 * Each place's event: EVENT=, else FUNC (FUNC_L<N>), else, for SRC:LINE
	 * and SRC;PATTERN, the function the place is in (perf names each place
	 * so: places in different functions are different events).
	 */
	evs = calloc(nlocs, sizeof(*evs));
	if (!evs) {
		ret = die(1, "out of memory");
		goto out;
	}
	for (i = 0; i < nlocs; i++) {
		size_t j;

		if (def.event)
			snprintf(base, sizeof(base), "%s", def.event);
		else if (def.func && def.line)
			snprintf(base, sizeof(base), "%s_L%d", def.func, def.line);
		else if (def.func)
			snprintf(base, sizeof(base), "%s", def.func);
		else
			snprintf(base, sizeof(base), "%s", locs[i].realname);
		if (!is_ident(base)) {
			fprintf(stderr,
				"fdr %s: '%s' is not a valid event name; name it: EVENT=%s\n", verb,
				base, text);
			ret = EXIT_USAGE;
			goto out;
		}
		snprintf(event, sizeof(event), "%s%s", base, def.retprobe ? "__return" : "");
		/* a name this definition already chose: the same event */
		for (j = 0; j < i; j++)
			if (!strcmp(evs[j].base, base)) {
				evs[i] = evs[j];
				break;
			}
		if (j < i)
			continue;
		snprintf(evs[i].base, sizeof(evs[i].base), "%s", base);
		if (names_has(nm, group, event)) {
			size_t k;

			if (!o->force) {
				fprintf(stderr,
					"fdr %s: event \"%s:%s\" already exists.\n"
					"  Remove it with 'fdr probe -d %s:%s', or add another with -f (%s_1...)\n",
					verb, group, event, group, event, base);
				ret = 1;
				goto out;
			}
			for (k = 1; k < 10000; k++) {
				snprintf(event, sizeof(event), "%s_%zu", base, k);
				if (!names_has(nm, group, event))
					break;
			}
		}
		snprintf(evs[i].event, sizeof(evs[i].event), "%s", event);
	}
	for (i = 0; i < nlocs; i++) {
		snprintf(line, sizeof(line), "%c:%s/%s %s:0x%" PRIx64 "%s\n",
			 def.retprobe ? 'r' : 'p', group, evs[i].event, path, locs[i].offset,
			 locs[i].args);
		if (o->verbose) {
			fflush(stdout); /* stdout and stderr in the order they are written */
			fprintf(stderr, "Writing event: %s", line);
		}
		if (!o->dry) {
			ret = write_path(s, "uprobe_events", line, O_APPEND);
			if (ret)
				goto out;
		}
	}
	for (i = 0; i < nlocs; i++) {
		if (i && !strcmp(evs[i].event, evs[i - 1].event))
			continue;
		snprintf(event, sizeof(event), "%s", evs[i].event);
		if (!names_has(nm, group, event) && names_add(nm, group, event)) {
			ret = die(1, "out of memory");
			goto out;
		}
		if (!o->quiet)
			show_added(o, &def, group, event, path, shown);
	}
	ret = 0;
out:
	free(evs);
	pd_locs_free(locs, nlocs);
	free(def.text);
	return ret;
}

/* -d GLOB: remove the probe events that match [GROUP:]EVENT globs */
static int del_events(struct probe_opts *o, struct fdr_session *s, const struct names *nm)
{
	size_t i;
	int k, ret = 0, found;

	for (k = 0; k < o->ndels; k++) {
		const char *g = o->dels[k], *colon = strchr(g, ':');
		char gg[160], eg[160];

		if (colon) {
			snprintf(gg, sizeof(gg), "%.*s", (int)(colon - g), g);
			snprintf(eg, sizeof(eg), "%s", colon + 1);
		} else {
			snprintf(gg, sizeof(gg), "*");
			snprintf(eg, sizeof(eg), "%s", g);
		}
		found = 0;
		for (i = 0; i < nm->n; i++) {
			char grp[160], *ev, line[200];

			snprintf(grp, sizeof(grp), "%s", nm->v[i]);
			ev = strchr(grp, '/');
			if (!ev)
				continue;
			*ev++ = 0;
			if (fnmatch(gg, grp, 0) || fnmatch(eg, ev, 0))
				continue;
			found = 1;
			snprintf(line, sizeof(line), "-:%s/%s\n", grp, ev);
			if (o->dry) {
				if (!o->quiet)
					printf("Would remove event: %s:%s\n", grp, ev);
				continue;
			}
			ret = write_path(s, "uprobe_events", line, O_APPEND);
			if (ret)
				return ret;
			if (!o->quiet)
				printf("Removed event: %s:%s\n", grp, ev);
		}
		if (!found) {
			fprintf(stderr, "fdr %s: no probe event matches '%s'\n", verb, o->dels[k]);
			ret = 1;
		}
	}
	return ret;
}

/* one line of uprobe_events and the key -l sorts it by */
struct list_line {
	const char *p;
	size_t len;
	char *key;
};

static int list_line_cmp(const void *a, const void *b)
{
	return strcmp(((const struct list_line *)a)->key, ((const struct list_line *)b)->key);
}

/*
 * The key perf's order comes from: perf reads the kernel's uprobe_events into a
 * sorted list of strings, where the kernel writes the offset as 0x and 16 hex
 * digits; the session's line has it as written (0x1a2b), so the key is the line
 * with the offset padded as the kernel pads it. NULL when out of memory.
 */
static char *list_key(const char *p, size_t len)
{
	const char *sp = memchr(p, ' ', len), *end = p + len, *w, *colon;
	unsigned long long off;
	char *key, *e;

	if (!sp)
		return strndup(p, len);
	w = memchr(sp + 1, ' ', (size_t)(end - sp - 1));
	if (!w)
		w = end;
	for (colon = w; colon > sp + 1 && colon[-1] != ':'; colon--)
		;
	errno = 0;
	off = strtoull(colon, &e, 0);
	if (colon == sp + 1 || e != w || errno)
		return strndup(p, len);
	if (asprintf(&key, "%.*s0x%016llx%.*s", (int)(colon - p), p, off, (int)(end - w), w) < 0)
		return NULL;
	return key;
}

/*
 * -l: the session's probe events, one line per location, as perf lists them:
 * "  GROUP:EVENT (on FUNC[+OFF|:LINE][%return]@FILE in PATH with NAMES)", the
 * place read back from the file's debug information (PATH:0xOFFSET without it),
 * in perf's order (list_key).
 */
static int list_events(const struct fdr_buf *raw)
{
	const char *q = raw->data, *end = raw->data ? raw->data + raw->len : NULL;
	struct pd_bin *bin = NULL;
	struct list_line *lines = NULL;
	size_t n = 0, cap = 0, i;
	char binpath[4096] = "";
	int ret = 0;

	while (q && q < end) {
		const char *nl = memchr(q, '\n', (size_t)(end - q));
		size_t len = nl ? (size_t)(nl - q) : (size_t)(end - q);

		if (len) {
			if (n == cap) {
				struct list_line *v;

				cap = cap ? 2 * cap : 16;
				v = realloc(lines, cap * sizeof(*v));
				if (!v) {
					ret = -ENOMEM;
					goto out;
				}
				lines = v;
			}
			lines[n].p = q;
			lines[n].len = len;
			lines[n].key = list_key(q, len);
			if (!lines[n].key) {
				ret = -ENOMEM;
				goto out;
			}
			n++;
		}
		q += len + 1;
	}
	if (n)
		qsort(lines, n, sizeof(*lines), list_line_cmp);
	for (i = 0; i < n; i++) {
		const char *p = lines[i].p, *sp, *sl, *c;
		size_t len = lines[i].len;
		char ge[256], path[4096], where[512], names[2048];
		unsigned long long off;
		size_t nn = 0;

		sp = memchr(p, ' ', len);
		sl = sp ? memchr(p, '/', (size_t)(sp - p)) : NULL;
		if (len < 3 || p[1] != ':' || !sp || !sl)
			goto next;
		snprintf(ge, sizeof(ge), "%.*s:%.*s", (int)(sl - p - 2), p + 2, (int)(sp - sl - 1),
			 sl + 1);
		/* PATH:0xOFFSET, then the arguments' names */
		c = sp + 1;
		{
			const char *w = memchr(c, ' ', (size_t)(p + len - c)), *colon;

			if (!w)
				w = p + len;
			for (colon = w; colon > c && colon[-1] != ':'; colon--)
				;
			if (colon == c)
				goto next;
			snprintf(path, sizeof(path), "%.*s", (int)(colon - 1 - c), c);
			off = strtoull(colon, NULL, 0);
			names[0] = 0;
			while (w < p + len) {
				const char *a = w + 1, *e = memchr(a, ' ', (size_t)(p + len - a)),
					   *eq;

				if (!e)
					e = p + len;
				eq = memchr(a, '=', (size_t)(e - a));
				if (nn < sizeof(names))
					nn += (size_t)snprintf(names + nn, sizeof(names) - nn,
							       " %.*s", (int)((eq ? eq : e) - a),
							       a);
				w = e;
			}
		}
		if (strcmp(path, binpath)) {
			struct pd_err err;

			pd_close(bin);
			bin = NULL;
			snprintf(binpath, sizeof(binpath), "%s", path);
			if (pd_open(path, &bin, &err))
				bin = NULL;
		}
		if (bin && pd_where(bin, off, where, sizeof(where)) == 0) {
			char *at = strchr(where, '@');

			printf("  %-20s (on %.*s%s%s in %s%s%s)\n", ge,
			       (int)(at ? at - where : (long)strlen(where)), where,
			       p[0] == 'r' ? "%return" : "", at ? at : "", path, nn ? " with" : "",
			       names);
		} else {
			printf("  %-20s (on %s:0x%llx%s%s%s)\n", ge, path, off,
			       p[0] == 'r' ? "%return" : "", nn ? " with" : "", names);
		}
next:;
	}
out:
	for (i = 0; i < n; i++)
		free(lines[i].key);
	free(lines);
	pd_close(bin);
	return ret;
}

/*
 * -L's argument, perf's "FUNC[@SRC][:START[+NUM|-END]]" or "SRC[:START[+NUM|-END]]";
 * EXIT_USAGE with a message when it is wrong.
 */
static int parse_range(const char *arg, char *buf, size_t len, const char **func, const char **file,
		       int *start, int *end)
{
	char *range, *at, *p;
	long v;

	snprintf(buf, len, "%s", arg);
	*func = *file = NULL;
	*start = 0;
	*end = INT_MAX;
	range = strchr(buf, ':');
	if (range) {
		*range++ = 0;
		errno = 0;
		v = strtol(range, &p, 0);
		if (p == range || errno || v < 0 || v > INT_MAX)
			return def_error(arg, (int)(range - buf), "expected a start line number");
		*start = (int)v;
		if (*p == '+' || *p == '-') {
			char c = *p++;
			char *q;

			errno = 0;
			v = strtol(p, &q, 0);
			if (q == p || errno || v < 0 || v > INT_MAX)
				return def_error(arg, (int)(p - buf),
						 "expected an end line number");
			*end = c == '+' ? (int)(*start + v - 1) : (int)v;
			p = q;
		}
		if (*start > *end)
			return def_error(arg, (int)(range - buf),
					 "Start line must be smaller than end line");
		if (*p)
			return def_error(arg, (int)(p - buf),
					 "unexpected text after the line range");
	}
	at = strchr(buf, '@');
	if (at) {
		*at = 0;
		*file = at + 1;
		*func = buf;
	} else if (strchr(buf, '/') || strchr(buf, '.')) {
		*file = buf;
	} else {
		*func = buf;
	}
	if (*func && !is_ident(*func))
		return def_error(arg, 0, "expected a function name or a source file");
	return 0;
}

/* -F [FILTER] and -V POINT: what can be probed, as perf prints it */
static int show_funcs_vars(const struct probe_opts *o, const char *filter)
{
	struct pd_bin *bin = NULL;
	struct pd_err err;
	char path[PATH_MAX];
	int ret;

	if (!realpath(o->exe, path))
		return die(1, "%s: %s", o->exe, strerror(errno));
	ret = pd_open(path, &bin, &err);
	if (ret)
		return die(1, "%s", err.msg);
	if (o->lines) {
		char buf[1024];
		const char *func, *file;
		int start, end;

		ret = parse_range(o->lines, buf, sizeof(buf), &func, &file, &start, &end);
		if (!ret) {
			ret = pd_lines(bin, func, file, start, end, &err);
			if (ret) {
				fprintf(stderr, "fdr %s: %s\n", verb, err.msg);
				ret = 1;
			}
		}
	} else if (o->funcs) {
		char **names;
		size_t n, i;

		ret = pd_funcs(bin, filter, &names, &n);
		if (ret) {
			pd_close(bin);
			return die_err(1, ret, "%s", path);
		}
		for (i = 0; i < n; i++) {
			printf("%s\n", names[i]);
			free(names[i]);
		}
		free(names);
	} else {
		struct pd_def def;
		struct pd_loc *locs = NULL;
		size_t n = 0, i;

		ret = pd_parse(o->vars, &def);
		def.no_inlines = o->no_inlines;
		if (!ret && def.narg)
			ret = def_error(o->vars, def.arg[0].pos,
					"-V takes a probe point, without arguments");
		if (!ret) {
			ret = pd_vars(bin, &def, o->externs, &locs, &n, &err);
			if (ret) {
				if (err.pos >= 0)
					def_error(o->vars, err.pos, err.msg);
				else
					fprintf(stderr, "fdr %s: %s\n", verb, err.msg);
				ret = 1;
			} else {
				char point[256];

				point_text(&def, point, sizeof(point));
				printf("Available variables at %s\n", point);
				for (i = 0; i < n; i++)
					fputs(locs[i].args, stdout);
			}
		}
		pd_locs_free(locs, n);
		free(def.text);
	}
	pd_close(bin);
	return ret;
}

int cmd_probe(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "exec", required_argument, NULL, 'x' },
		{ "pid", required_argument, NULL, 'p' },
		{ "add", required_argument, NULL, 'a' },
		{ "del", required_argument, NULL, 'd' },
		{ "list", no_argument, NULL, 'l' },
		{ "dry-run", no_argument, NULL, 'n' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "force", no_argument, NULL, 'f' },
		{ "funcs", no_argument, NULL, 'F' },
		{ "vars", required_argument, NULL, 'V' },
		{ "externs", no_argument, NULL, 'E' },
		{ "line", required_argument, NULL, 'L' },
		{ "no-inlines", no_argument, NULL, 'I' },
		{ NULL, 0, NULL, 0 },
	};
	struct probe_opts o;
	struct pd_bin *bin = NULL;
	struct fdr_session *s = NULL;
	struct names nm = { NULL, 0 };
	struct fdr_buf raw = { NULL, 0, 0 };
	char path[PATH_MAX], pexe[PATH_MAX], *joined = NULL;
	int c, ret = 0, k, shown = 0;

	memset(&o, 0, sizeof(o));
	optind = 0;
	while ((c = getopt_long(argc, argv, "+x:p:a:d:lnvqfFV:L:", lopts, NULL)) != -1) {
		switch (c) {
		case 'x':
			o.exe = optarg;
			break;
		case 'p': {
			unsigned long pid;
			char link[64];
			ssize_t n;

			ret = parse_num_arg(argc, argv, optind - 1, "a process id", 1, INT_MAX,
					    &pid);
			if (ret)
				return ret;
			/* perf's -p: the process's executable */
			snprintf(link, sizeof(link), "/proc/%lu/exe", pid);
			n = readlink(link, pexe, sizeof(pexe) - 1);
			if (n <= 0)
				return die(1, "process %lu: cannot read %s: %s", pid, link,
					   strerror(errno));
			pexe[n] = 0;
			o.exe = pexe;
			break;
		}
		case 'a':
		case 'd':
			if ((c == 'a' ? o.ndefs : o.ndels) >= PROBE_MAX_DEFS)
				return usage_error(argc, argv, optind - 1, "at most %d definitions",
						   PROBE_MAX_DEFS);
			if (c == 'a')
				o.defs[o.ndefs++] = optarg;
			else
				o.dels[o.ndels++] = optarg;
			break;
		case 'l':
			o.list = 1;
			break;
		case 'n':
			o.dry = 1;
			break;
		case 'v':
			o.verbose = 1;
			break;
		case 'q':
			o.quiet = 1;
			break;
		case 'f':
			o.force = 1;
			break;
		case 'F':
			o.funcs = 1;
			break;
		case 'V':
			o.vars = optarg;
			break;
		case 'E':
			o.externs = 1;
			break;
		case 'L':
			o.lines = optarg;
			break;
		case 'I':
			o.no_inlines = 1;
			break;
		default:
			return usage_error(argc, argv, optind - 1, "unknown option");
		}
	}
	if (o.funcs || o.vars || o.lines) {
		if (!o.exe)
			return usage_error(
				argc, argv, -1,
				"expected -x BINARY: the executable or library to look at");
		if (o.funcs && optind + 1 < argc)
			return usage_error(argc, argv, optind + 1, "-F takes one FILTER");
		if ((o.vars || o.lines) && optind < argc)
			return usage_error(argc, argv, optind, "-V and -L take one argument");
		return show_funcs_vars(&o, o.funcs && optind < argc ? argv[optind] : NULL);
	}
	if (optind < argc) { /* perf: the words left are one definition */
		if (o.ndefs >= PROBE_MAX_DEFS)
			return usage_error(argc, argv, optind, "at most %d definitions",
					   PROBE_MAX_DEFS);
		joined = join_args(argc - optind, argv + optind);
		if (!joined)
			return die(1, "out of memory");
		joined[strcspn(joined, "\n")] = 0;
		o.defs[o.ndefs++] = joined;
	}
	if (!o.ndefs && !o.ndels && !o.list) {
		free(joined);
		return usage_error(argc, argv, -1,
				   "expected a definition (-a DEF), -d GLOB or -l, found nothing");
	}
	if (o.ndefs && !o.exe) {
		free(joined);
		return usage_error(argc, argv, -1,
				   "expected -x BINARY: the executable or library to probe");
	}
	/* the session: needed to add, remove and list; with -n, only its names */
	if (!o.dry || o.ndels || o.list) {
		ret = open_session(&s);
		if (ret)
			goto out;
	} else {
		char dir[4096];

		if (!session_dir(dir, sizeof(dir)) && fdr_session_open(dir, &s))
			s = NULL;
	}
	if (s) {
		ret = names_read(s, &nm, &raw);
		if (ret) {
			ret = die_err(1, ret, "uprobe_events");
			goto out;
		}
	}
	if (o.list) {
		fdr_buf_free(&raw);
		if (s && slurp(s, "uprobe_events", &raw) == 0 && list_events(&raw)) {
			ret = die_err(1, -ENOMEM, "-l");
			goto out;
		}
	}
	if (o.ndels) {
		ret = del_events(&o, s, &nm);
		if (ret)
			goto out;
	}
	if (o.ndefs) {
		struct pd_err err;

		if (!realpath(o.exe, path)) {
			ret = die(1, "%s: %s", o.exe, strerror(errno));
			goto out;
		}
		ret = pd_open(path, &bin, &err);
		if (ret) {
			ret = die(1, "%s", err.msg);
			goto out;
		}
		for (k = 0; k < o.ndefs && !ret; k++)
			ret = add_one(&o, o.defs[k], bin, path, s, &nm, &shown);
		if (shown && !o.quiet && !o.dry)
			printf("\nYou can now use it in all fdr tools, such as:\n\n"
			       "\tfdr record -e %s -- COMMAND\n\n"
			       "(a program records it while it runs fdr's probe agent: linked with "
			       "libfdr, started with LD_PRELOAD=libfdr-probe.so, or given it by "
			       "'fdr attach PID')\n",
			       o.last);
	}
out:
	pd_close(bin);
	if (s)
		fdr_session_close(s);
	fdr_buf_free(&raw);
	free(nm.v);
	free(joined);
	return ret;
}
#else /* !FDR_HAVE_LIBDW */
int cmd_probe(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return die(1, "this fdr was built without elfutils' libdw (Debian: libdw-dev), which "
		      "fdr probe needs to read debug information; 'fdr append uprobe_events' "
		      "takes PATH:SYMBOL[+OFFS] without it");
}
#endif
