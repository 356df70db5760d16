// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * kshark-load FILE N0 [N1...] - load a trace.dat the way KernelShark does, through
 * libtracecmd and libtraceevent, and check every record.
 *
 * For each CPU it reads every record (tracecmd_read_cpu_first/read_data), finds
 * its event (tep_find_event_by_record), reads every field of the format
 * (tep_get_field_raw for strings, arrays and dynamic fields, tep_get_field_val
 * for the others) and prints the record with tep_print_event, which must not say
 * "FAILED TO PARSE". CPU i must hold exactly Ni records. Then
 * tracecmd_iterate_events() must visit the same number of records, in
 * non-decreasing time order.
 *
 * Prints "cpu N: COUNT records, LOST lost", "event SYS:NAME: COUNT" and a final
 * "ok"; exits 1 on the first problem, with what was expected and what was found.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event-parse.h>
#include <trace-cmd.h>

/* exported by libtracecmd (trace-cmd report uses it), declared in its private header */
int tracecmd_cpus(struct tracecmd_input *handle);

struct ev_count {
	int id;
	char name[128];
	unsigned long long n;
};

static struct ev_count counts[256];
static int nr_counts;
static unsigned long long iter_n, iter_last_ts;
static int iter_bad;

static void count_event(const struct tep_event *e)
{
	int i;

	for (i = 0; i < nr_counts; i++) {
		if (counts[i].id == e->id) {
			counts[i].n++;
			return;
		}
	}
	if (nr_counts < 256) {
		counts[nr_counts].id = e->id;
		snprintf(counts[nr_counts].name, sizeof(counts[nr_counts].name), "%s:%s", e->system,
			 e->name);
		counts[nr_counts++].n = 1;
	}
}

/* Read every field of @rec; returns 0 or -1 (with a message). */
static int check_record(struct tep_handle *tep, struct tep_record *rec, int cpu)
{
	struct tep_event *e = tep_find_event_by_record(tep, rec);
	struct tep_format_field *f;
	struct trace_seq s;
	int ret = 0;

	if (!e) {
		fprintf(stderr, "kshark-load: cpu %d, ts %llu: record of unknown event type %d\n",
			cpu, rec->ts, tep_data_type(tep, rec));
		return -1;
	}
	for (f = e->format.fields; f; f = f->next) {
		unsigned long long val;
		int len;

		if (f->flags & (TEP_FIELD_IS_STRING | TEP_FIELD_IS_ARRAY | TEP_FIELD_IS_DYNAMIC)) {
			if (!tep_get_field_raw(NULL, e, f->name, rec, &len, 0)) {
				fprintf(stderr,
					"kshark-load: cpu %d, ts %llu, %s:%s: cannot read field %s\n",
					cpu, rec->ts, e->system, e->name, f->name);
				return -1;
			}
		} else if (tep_get_field_val(NULL, e, f->name, rec, &val, 0)) {
			fprintf(stderr,
				"kshark-load: cpu %d, ts %llu, %s:%s: cannot read field %s\n", cpu,
				rec->ts, e->system, e->name, f->name);
			return -1;
		}
	}
	trace_seq_init(&s);
	tep_print_event(tep, &s, rec, "%s", TEP_PRINT_INFO);
	trace_seq_terminate(&s);
	if (strstr(s.buffer, "FAILED TO PARSE") || strstr(s.buffer, "[UNKNOWN")) {
		fprintf(stderr, "kshark-load: cpu %d, ts %llu, %s:%s: libtraceevent prints '%s'\n",
			cpu, rec->ts, e->system, e->name, s.buffer);
		ret = -1;
	}
	trace_seq_destroy(&s);
	count_event(e);
	return ret;
}

static int iter_cb(struct tracecmd_input *h, struct tep_record *rec, int cpu, void *data)
{
	(void)h;
	(void)cpu;
	(void)data;
	if (rec->ts < iter_last_ts)
		iter_bad = 1;
	iter_last_ts = rec->ts;
	iter_n++;
	return 0;
}

int main(int argc, char **argv)
{
	struct tracecmd_input *h;
	struct tep_handle *tep;
	unsigned long long total = 0;
	int cpu, nr_cpus, i;

	if (argc < 3) {
		fprintf(stderr, "usage: kshark-load FILE N0 [N1...]\n");
		return 2;
	}
	h = tracecmd_open(argv[1], 0);
	if (!h) {
		fprintf(stderr, "kshark-load: tracecmd_open(%s) failed\n", argv[1]);
		return 1;
	}
	tep = tracecmd_get_tep(h);
	nr_cpus = tracecmd_cpus(h);
	if (nr_cpus != argc - 2) {
		fprintf(stderr, "kshark-load: %s has %d CPUs, expected %d\n", argv[1], nr_cpus,
			argc - 2);
		return 1;
	}
	for (cpu = 0; cpu < nr_cpus; cpu++) {
		unsigned long long n = 0, lost = 0, want = strtoull(argv[cpu + 2], NULL, 10);
		struct tep_record *rec;

		for (rec = tracecmd_read_cpu_first(h, cpu); rec; rec = tracecmd_read_data(h, cpu)) {
			if (rec->missed_events > 0)
				lost += (unsigned long long)rec->missed_events;
			if (check_record(tep, rec, cpu)) {
				tracecmd_free_record(rec);
				return 1;
			}
			tracecmd_free_record(rec);
			n++;
		}
		printf("cpu %d: %llu records, %llu lost\n", cpu, n, lost);
		if (n != want) {
			fprintf(stderr, "kshark-load: cpu %d holds %llu records, expected %llu\n",
				cpu, n, want);
			return 1;
		}
		total += n;
	}
	for (i = 0; i < nr_counts; i++)
		printf("event %s: %llu\n", counts[i].name, counts[i].n);
	/* the merged iteration of a fresh handle, as KernelShark loads a file */
	tracecmd_close(h);
	h = tracecmd_open(argv[1], 0);
	if (!h || tracecmd_iterate_events(h, NULL, 0, iter_cb, NULL) < 0) {
		fprintf(stderr, "kshark-load: tracecmd_iterate_events failed\n");
		return 1;
	}
	if (iter_n != total || iter_bad) {
		fprintf(stderr,
			"kshark-load: tracecmd_iterate_events visited %llu records (expected %llu)%s\n",
			iter_n, total, iter_bad ? ", not in time order" : "");
		return 1;
	}
	tracecmd_close(h);
	printf("ok\n");
	return 0;
}
