// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * report.c - `fdr report`: print a trace.dat file (trace-cmd's format, the
 * kernel's or fdr's) the way the kernel's trace file and `fdr show` print
 * records, with event selection (-e, set_event's rules) and a filter (-F, the
 * kernel's filter grammar) compiled for each event of the file.
 *
 *   fdr report [-i FILE] [-e EVENTS]... [-F FILTER]... [-c|--cpu N] [FILE]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fdr/fdr-ctl.h"
#include "fdr/fdr-trace.h"
#include "cli.h"

/* What -e and -F decided for one event of the file. */
struct rp_event {
	const struct fdr_abi_event *e;
	int selected;
	struct fdr_event_filter *filter; /* NULL: no filter */
};

struct rp_opts {
	const char *file;
	char **rules;
	size_t nr_rules;
	char *filter; /* the -F texts joined with && */
	long cpu; /* -1: all */
};

/* -e: comma-separated rules, as set_event takes them one per line */
static int rp_add_rules(struct rp_opts *o, const char *arg)
{
	char *copy = strdup(arg), *save = NULL, *r;

	if (!copy)
		return -ENOMEM;
	for (r = strtok_r(copy, ",", &save); r; r = strtok_r(NULL, ",", &save)) {
		char **grown = realloc(o->rules, (o->nr_rules + 1) * sizeof(*grown));

		if (!grown || !(grown[o->nr_rules] = strdup(r))) {
			if (grown)
				o->rules = grown;
			free(copy);
			return -ENOMEM;
		}
		o->rules = grown;
		o->nr_rules++;
	}
	free(copy);
	return 0;
}

static int rp_add_filter(struct rp_opts *o, const char *arg)
{
	char *joined;

	if (!o->filter) {
		o->filter = strdup(arg);
		return o->filter ? 0 : -ENOMEM;
	}
	if (asprintf(&joined, "(%s) && (%s)", o->filter, arg) < 0)
		return -ENOMEM;
	free(o->filter);
	o->filter = joined;
	return 0;
}

static int rp_parse(int argc, char **argv, struct rp_opts *o)
{
	static const struct option longs[] = {
		{ "cpu", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	optind = 0; /* 0, not 1: glibc then resets its permutation state too */
	while ((c = getopt_long(argc, argv, "i:e:F:c:h", longs, NULL)) != -1) {
		switch (c) {
		case 'i':
			o->file = optarg;
			break;
		case 'e':
			if (rp_add_rules(o, optarg))
				return 1;
			break;
		case 'F':
			if (rp_add_filter(o, optarg))
				return 1;
			break;
		case 'c': {
			unsigned long v;
			/* a trace.dat may come from a machine with more CPUs than fdr's */
			int ret = parse_num_arg(argc, argv, optind - 1, "a CPU number", 0,
						INT32_MAX, &v);

			if (ret)
				return ret;
			o->cpu = (long)v;
			break;
		}
		case 'h':
			printf("usage: fdr report [-i FILE] [-e EVENTS]... [-F FILTER]... [--cpu N] "
			       "[FILE]\n");
			exit(0);
		default:
			return usage_error(argc, argv, optind - 1, "unknown option '%s'",
					   argv[optind - 1]);
		}
	}
	if (optind < argc) {
		if (o->file)
			return usage_error(argc, argv, optind,
					   "expected one file, found '%s' after -i", argv[optind]);
		o->file = argv[optind++];
	}
	if (optind < argc)
		return usage_error(argc, argv, optind, "expected one file, found '%s' after it",
				   argv[optind]);
	if (!o->file)
		o->file = "trace.dat";
	return 0;
}

static int rp_selected(const struct rp_opts *o, const struct fdr_abi_event *e)
{
	char sys[FDR_NAME_LEN + 1], name[FDR_NAME_LEN + 1];
	size_t i;

	if (!o->nr_rules)
		return 1;
	snprintf(sys, sizeof(sys), "%.*s", FDR_NAME_LEN, e->system);
	snprintf(name, sizeof(name), "%.*s", FDR_NAME_LEN, e->name);
	for (i = 0; i < o->nr_rules; i++)
		if (fdr_event_rule_match(o->rules[i], sys, name))
			return 1;
	return 0;
}

/*
 * Decide, for each event of the file, whether it is shown and with which
 * compiled filter. An event whose fields do not fit the filter is not shown;
 * a filter that fits no selected event is a usage error, shown with the caret
 * under the byte the parser stopped at (for the first selected event).
 */
static int rp_prepare(struct fdr_trace *t, const struct rp_opts *o, struct rp_event **out,
		      size_t *nr_out)
{
	size_t n = fdr_trace_nr_events(t), i, compiled = 0, selected = 0;
	char first[160] = "", msg[160];
	int first_pos = -1, pos;
	struct rp_event *ev = calloc(n ? n : 1, sizeof(*ev));

	if (!ev)
		return -ENOMEM;
	*out = ev;
	*nr_out = n;
	for (i = 0; i < n; i++) {
		int ret;

		ev[i].e = fdr_trace_event_at(t, i);
		ev[i].selected = ev[i].e && rp_selected(o, ev[i].e);
		if (!ev[i].selected)
			continue;
		selected++;
		if (!o->filter)
			continue;
		/* NULL for "0": no filter, as in a filter file */
		ret = fdr_event_filter_new(ev[i].e, o->filter, &ev[i].filter, msg, sizeof(msg),
					   &pos);
		if (ret == -ENOMEM)
			return ret;
		if (ret < 0) {
			ev[i].selected = 0;
			if (first_pos < 0) {
				snprintf(first, sizeof(first), "%s", msg);
				first_pos = pos > 0 ? pos : 0;
			}
			continue;
		}
		compiled++;
	}
	if (o->filter && selected && !compiled) {
		size_t len = fdr_event_filter_text_len(o->filter), at;

		at = first_pos > 0 ? (size_t)first_pos : 0;
		if (at > len)
			at = len;
		fprintf(stderr, "fdr report: bad filter: %s\n  %.*s\n  %*s^\n", first, (int)len,
			o->filter, (int)at, "");
		return -EINVAL;
	}
	return 0;
}

static const struct rp_event *rp_lookup(const struct rp_event *ev, size_t n,
					const struct fdr_abi_event *e)
{
	size_t i;

	/* the source hands out the same pointers as fdr_trace_event_at() */
	for (i = 0; i < n; i++)
		if (ev[i].e == e)
			return &ev[i];
	return NULL;
}

/**
 * cmd_report - the `fdr report` verb; returns the exit status
 */
int cmd_report(int argc, char **argv)
{
	struct rp_opts o = { .cpu = -1 };
	struct fdr_buf err = { 0 }, line = { 0 }, prefix = { 0 };
	struct fdr_trace *t = NULL;
	struct rp_event *ev = NULL;
	const struct rp_event **cache = NULL;
	size_t nr_ev = 0, i, pad = 0;
	uint32_t nr_bufs;
	int ret, status = 0;

	ret = rp_parse(argc, argv, &o);
	if (ret) {
		status = ret == 1 ? 1 : ret;
		goto out;
	}
	ret = fdr_trace_open_file_ex(o.file, FDR_TRACE_ALL_BUFFERS, &t, &err);
	if (ret) {
		if (ret == -EINVAL && err.data)
			fprintf(stderr, "fdr report: %s: %s\n", o.file, err.data);
		else
			fprintf(stderr, "fdr report: %s: %s\n", o.file, strerror(-ret));
		status = 1;
		goto out;
	}
	ret = rp_prepare(t, &o, &ev, &nr_ev);
	if (ret) {
		status = ret == -EINVAL ? EXIT_USAGE : 1;
		goto out;
	}
	cache = calloc(UINT16_MAX + 1, sizeof(*cache));
	if (!cache) {
		status = 1;
		goto out;
	}
	printf("cpus=%u\n", fdr_trace_get_info(t)->nr_cpus);
	/* several buffers (fdr record -k): trace-cmd report's layout, "NAME: " before each line */
	nr_bufs = fdr_trace_nr_buffers(t);
	for (i = 0; nr_bufs > 1 && i < nr_bufs; i++) {
		size_t n = strlen(fdr_trace_buffer_name(t, (uint32_t)i));

		if (n + 2 > pad)
			pad = n + 2;
	}
	for (;;) {
		struct fdr_trace_rec rec;
		const struct rp_event *re = NULL;
		uint16_t type;

		ret = fdr_trace_next(t, &rec);
		if (ret <= 0)
			break;
		if (o.cpu >= 0 && rec.cpu != (uint32_t)o.cpu)
			continue;
		if (rec.ev) {
			memcpy(&type, rec.payload, sizeof(type));
			re = cache[type];
			if (!re || re->e != rec.ev) {
				re = rp_lookup(ev, nr_ev, rec.ev);
				cache[type] = re;
			}
		}
		/* records of events the file does not describe only show without -e/-F */
		if (re ? !re->selected : (o.nr_rules || o.filter))
			continue;
		if (re && re->filter) {
			char comm[FDR_COMM_LEN];
			struct fdr_common c;

			memcpy(&c, rec.payload, sizeof(c));
			fdr_trace_comm(t, c.pid, comm, sizeof(comm));
			if (c.pid == 0 || !strcmp(comm, "<...>"))
				comm[0] = 0; /* unknown: an empty COMM */
			if (!fdr_event_filter_match(re->filter, rec.payload, rec.len, rec.cpu,
						    comm))
				continue;
		}
		line.len = 0;
		if (pad) {
			const char *name = fdr_trace_buffer_name(t, fdr_trace_rec_buffer(t, &rec));

			prefix.len = 0;
			fdr_buf_printf(&prefix, "%s%s%*s", name, *name ? ":" : "",
				       (int)(pad - strlen(name) - !!*name), "");
		}
		if (rec.lost_before == UINT64_MAX)
			fdr_buf_printf(&line, "%sCPU:%u [EVENTS LOST]\n", pad ? prefix.data : "",
				       rec.cpu);
		else if (rec.lost_before)
			fdr_buf_printf(&line, "%sCPU:%u [LOST %" PRIu64 " EVENTS]\n",
				       pad ? prefix.data : "", rec.cpu, rec.lost_before);
		if (pad)
			fdr_buf_add(&line, prefix.data, prefix.len);
		if (fdr_trace_format(t, &rec, &line)) {
			status = 1;
			break;
		}
		if (fwrite(line.data, 1, line.len, stdout) != line.len)
			break; /* a closed pipe (| head): stop quietly */
	}
	if (ret < 0) {
		fflush(stdout);
		fprintf(stderr, "fdr report: %s: %s\n", o.file,
			ret == -EINVAL ? "the file changed or is corrupt past this point" :
					 strerror(-ret));
		status = 1;
	}
out:
	for (i = 0; i < nr_ev; i++)
		fdr_event_filter_free(ev[i].filter);
	free(ev);
	free(cache);
	for (i = 0; i < o.nr_rules; i++)
		free(o.rules[i]);
	free(o.rules);
	free(o.filter);
	fdr_buf_free(&err);
	fdr_buf_free(&line);
	fdr_buf_free(&prefix);
	fdr_trace_close(t);
	return status;
}
