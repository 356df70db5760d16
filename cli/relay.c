// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * relay.c - fdr relay: stream an instance live to LTTng's relay daemon
 * (lttng-relayd), where `babeltrace2 -i lttng-live` and Trace Compass follow
 * it; and the names that it and `fdr snapshot save --relayd` give the daemon.
 *
 *   fdr relay net://HOST[:CPORT[:DPORT]] [--live-timer US] [--hostname H] [-r PRIO]
 *             [-i INSTANCE]
 *
 * A consuming read (as fdr pipe: the records sent are consumed): every live
 * timer period what was written since goes as one packet per CPU with its
 * index, CPUs with nothing new are said idle (docs/design/relay.md); between
 * ticks the ring is read every few ms and packets that fill go at once. Until
 * SIGINT or SIGTERM; then the rest is sent and the session closed. Only this
 * tool waits on the network: a slow daemon makes the ring fill and overwrite
 * (or discard) as with any slow reader, never the traced program wait.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fdr/fdr-ctl.h"
#include "fdr/fdr-read.h"
#include "fdr/fdr-relay.h"
#include "fdr/fdr-trace.h"
#include "cli.h"

void cli_relay_name(const char *in, char *out, size_t len)
{
	size_t i;

	for (i = 0; in[i] && i + 1 < len; i++) {
		char c = in[i];
		int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			 (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '_';

		out[i] = ok ? c : '_';
	}
	out[i] = '\0';
}

int cli_relay_hostname(const char *opt, char *out, size_t len)
{
	const char *env = getenv("FDR_HOSTNAME");
	char hn[256] = "";

	if (opt || (env && *env)) {
		const char *h = opt ? opt : env;

		cli_relay_name(h, out, len);
		if (strcmp(h, out) || !*h || strlen(h) >= 64 || !strcmp(h, ".") || !strcmp(h, ".."))
			return die(EXIT_USAGE,
				   "expected a host name (%s) of 1-63 bytes of [A-Za-z0-9._-], "
				   "found '%s'",
				   opt ? "--hostname" : "FDR_HOSTNAME", h);
		return 0;
	}
	/* the machine's, its other bytes as '_' (the daemon makes it a directory) */
	if (gethostname(hn, sizeof(hn) - 1) < 0 || !hn[0])
		snprintf(hn, sizeof(hn), "localhost");
	cli_relay_name(hn, out, len < 64 ? len : 64);
	return 0;
}

void cli_relay_session_name(struct fdr_session *s, const char *inst, char *out, size_t len)
{
	const char *sp = fdr_session_path(s), *slash = strrchr(sp, '/');
	char base[FDR_NAME_LEN + 1], ib[FDR_NAME_LEN + 1];

	cli_relay_name(slash && slash[1] ? slash + 1 : sp, base, sizeof(base));
	if (inst && *inst) {
		cli_relay_name(inst, ib, sizeof(ib));
		snprintf(out, len, "%s-%s", base, ib);
	} else {
		snprintf(out, len, "%s", base);
	}
}

/*
 * The time between two ticks (@live_us): the ring read every 2 ms while records
 * come, every 10 ms while none do, the packets that fill sent at once, so that
 * a writer faster than the ring holds in a period loses nothing (the tick sends
 * the rest: the partial packets, their indexes, the idle CPUs' beacons).
 * Returns 0 or the negative errno of a failed read or send.
 */
static int relay_between_ticks(struct fdr_relay *r, unsigned long live_us)
{
	struct timespec t0, now;
	long slice_us = 2000;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!stop_requested) {
		long left_us;
		struct timespec d;
		int ret;

		clock_gettime(CLOCK_MONOTONIC, &now);
		left_us = (long)live_us - ((now.tv_sec - t0.tv_sec) * 1000000L +
					   (now.tv_nsec - t0.tv_nsec) / 1000L);
		if (left_us <= 0)
			break;
		if (slice_us > left_us)
			slice_us = left_us;
		d.tv_sec = slice_us / 1000000L;
		d.tv_nsec = slice_us % 1000000L * 1000L;
		nanosleep(&d, NULL);
		ret = fdr_relay_live_read(r);
		if (ret < 0)
			return ret;
		slice_us = ret ? 2000 : 10000;
	}
	return 0;
}

/* fdr relay URL [--live-timer US] [--hostname H] [-r PRIO] [-i INSTANCE] */
int cmd_relay(int argc, char **argv)
{
	const char *inst = NULL, *url = NULL, *hostname = NULL;
	char host[256], name[CLI_RELAY_NAME_LEN], path[4096];
	struct fdr_relay_session rs = { 0 };
	struct fdr_export_stats st = { 0 };
	struct fdr_relay_url u;
	struct fdr_buf err = { 0 };
	struct fdr_relay *r = NULL;
	struct fdr_trace *t = NULL;
	struct fdr_session *s;
	struct fdr_clock_conv conv;
	unsigned long live_us = 1000000, prio = 0;
	uint32_t idx, nr_cpus;
	unsigned failures = 0;
	int ret, argi, i, cpu = -1;

	/*
	 * --live-timer US, --hostname H (also --opt=VALUE) and -r PRIO, taken out
	 * before the rest
	 */
	for (i = 1; i < argc; i++) {
		const char *v = NULL;
		int take = 0, is_timer, is_prio;

		if (!strcmp(argv[i], "--"))
			break;
		is_timer = !strncmp(argv[i], "--live-timer", 12);
		is_prio = !strcmp(argv[i], "-r");
		if (!strcmp(argv[i], "--live-timer") || !strcmp(argv[i], "--hostname") || is_prio) {
			if (i + 1 >= argc)
				return usage_error(argc, argv, i, "expected a value after %s",
						   argv[i]);
			v = argv[i + 1];
			take = 2;
		} else if (!strncmp(argv[i], "--live-timer=", 13) ||
			   !strncmp(argv[i], "--hostname=", 11)) {
			v = strchr(argv[i], '=') + 1;
			take = 1;
		}
		if (!take)
			continue;
		if (is_prio) {
			char *end;

			errno = 0;
			prio = strtoul(v, &end, 10);
			if (errno || end == v || *end || *v == '-' || prio < 1 || prio > 99)
				return usage_error(argc, argv, i + 1,
						   "expected a SCHED_FIFO priority from 1 to 99, "
						   "found '%s'",
						   v);
		} else if (is_timer) {
			char *end;

			errno = 0;
			live_us = strtoul(v, &end, 10);
			if (errno || end == v || *end || *v == '-' || live_us < 1000 ||
			    live_us > 60000000)
				return usage_error(argc, argv, i + take - 1,
						   "expected a live timer of 1000 to 60000000 us, "
						   "found '%s'",
						   v);
		} else {
			hostname = v;
		}
		memmove(&argv[i], &argv[i + take], (size_t)(argc - i - take + 1) * sizeof(*argv));
		argc -= take;
		i--;
	}
	argi = common_opts(argc, argv, &inst, &cpu, &ret);
	if (argi < 0)
		return ret;
	if (argi >= argc)
		return usage_error(argc, argv, -1,
				   "expected net://HOST[:CONTROL_PORT[:DATA_PORT]], found nothing");
	url = argv[argi++];
	if (fdr_relay_parse_url(url, &u, &err)) {
		ret = usage_error(argc, argv, argi - 1, "%.*s", (int)err.len, err.data);
		fdr_buf_free(&err);
		return ret;
	}
	if (argi < argc)
		return usage_error(argc, argv, argi, "expected nothing after the URL, found '%s'",
				   argv[argi]);
	if (cpu >= 0)
		return usage_error(argc, argv, -1, "expected no -c CPU (every CPU is sent)");
	ret = cli_relay_hostname(hostname, host, sizeof(host));
	if (ret)
		return ret;
	ret = open_session(&s);
	if (ret)
		return ret;
	install_signals();
	if (prio) {
		/*
		 * -r: a reader that the load cannot keep off its CPU longer than the
		 * ring lasts (it sleeps between reads: it does not hold the CPU)
		 */
		struct sched_param sp = { .sched_priority = (int)prio };

		if (sched_setscheduler(0, SCHED_FIFO, &sp))
			fprintf(stderr, "fdr relay: -r %lu: %s; at normal priority\n", prio,
				strerror(errno));
	}
	idx = inst_index(fdr_session_control(s), inst);
	if (idx == FDR_MAX_INSTANCES) {
		ret = die_err(1, -ENOENT, "instance '%s'", inst ? inst : "");
		goto out;
	}
	/*
	 * held: published as consumed once per batch, not per record (the
	 * writers' cache lines); unordered: CPUs are separate streams anyway
	 */
	ret = fdr_trace_open_session(s, idx, FDR_READ_CONSUME | FDR_READ_HOLD | FDR_READ_UNORDERED,
				     &t);
	if (ret) {
		ret = die_err(1, ret, "cannot read the instance");
		goto out;
	}
	nr_cpus = fdr_trace_get_info(t)->nr_cpus;
	fdr_clock_conv_init(&conv, fdr_session_control(s), fdr_trace_get_info(t)->clock);
	cli_relay_session_name(s, inst, name, sizeof(name));
	rs.hostname = host;
	rs.name = name;
	/* a session of its own per run (dated now): not the snapshots' */
	rs.creation_time = (uint64_t)time(NULL);
	rs.id = fdr_session_control(s)->session_id ^ ((uint64_t)idx << 32) ^ rs.creation_time ^
		0x8000000000000000ull;
	rs.live_timer_us = (uint32_t)live_us;
	ret = fdr_relay_open(&u, &rs, &r, &err);
	if (!ret)
		ret = fdr_relay_live_start(r, t, &err);
	if (ret) {
		ret = die(1, "%.*s", (int)err.len, err.data ? err.data : strerror(-ret));
		goto out;
	}
	fprintf(stderr,
		"fdr relay: streaming to %s:%u as host %s, session %s (live timer %lu us; "
		"viewers: babeltrace2 -i lttng-live net://%s/host/%s/%s, the daemon's live "
		"port); Ctrl-C stops\n",
		u.host, u.ctrl_port, host, name, live_us, u.host, host, name);
	while (!stop_requested) {
		if (r)
			ret = fdr_relay_live_tick(r, nr_cpus, fdr_clock_now(&conv));
		/* until the next tick, the ring drained as it fills */
		if (r && !ret)
			ret = relay_between_ticks(r, live_us);
		if (r && ret) {
			/* the records read and not sent are lost; the ring keeps the rest */
			fprintf(stderr, "fdr relay: %.*s; reconnecting every second\n",
				(int)err.len, err.data ? err.data : strerror(-ret));
			fdr_relay_close(r);
			r = NULL;
			failures++;
		}
		if (!r) {
			struct timespec sec = { 1, 0 };
			uint64_t prev = rs.creation_time;

			nanosleep(&sec, NULL);
			if (stop_requested)
				break;
			/* a session of its own: the daemon dates its directory by the second */
			rs.creation_time = (uint64_t)time(NULL);
			if (rs.creation_time <= prev)
				rs.creation_time = prev + 1;
			rs.id++;
			err.len = 0;
			ret = fdr_relay_open(&u, &rs, &r, &err);
			if (!ret)
				ret = fdr_relay_live_start(r, t, &err);
			if (ret) {
				fdr_relay_close(r);
				r = NULL;
				continue;
			}
			fprintf(stderr,
				"fdr relay: reconnected to %s:%u: a new session directory\n",
				u.host, u.ctrl_port);
			continue;
		}
	}
	ret = r ? fdr_relay_live_stop(r, path, sizeof(path), &st) : -ENOTCONN;
	if (ret) {
		ret = die(1, "%.*s (the records read and not sent are lost)", (int)err.len,
			  err.len ? err.data : "not connected to the relay daemon");
		goto out;
	}
	printf("%s\n", path);
	fprintf(stderr, "fdr relay: %" PRIu64 " events sent, %" PRIu64 " lost in the ring (%s)\n",
		st.events, st.lost,
		failures ? "since the last reconnection; the stream was broken before" :
			   "the whole stream");
	if (failures)
		ret = 1;
out:
	fdr_relay_close(r);
	fdr_trace_close(t);
	fdr_buf_free(&err);
	fdr_session_close(s);
	return ret;
}
