// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * fdr-demo - a small simulated web service instrumented with fdr.
 *
 * A request loop serves paths such as /api/users or /static/app.js. Each API
 * request looks in a cache and, on a miss, queries a database; every step is
 * an fdr event:
 *
 *	demo:request   status, latency_ns, path     one per request
 *	demo:cache     hit, key                     API requests
 *	demo:db_query  table, rows, duration_ns     cache misses
 *
 * Exactly one request in each block of 100 fails with status 500 (its place in
 * the block is drawn from the seeded generator), so a run of 100 requests or
 * more always has a failure. Each failure is also written as a trace_marker
 * line. The same seed gives the same run, traced or not.
 *
 * Try it:
 *	fdr start -e 'demo:*'
 *	fdr-demo
 *	fdr show | grep -e 'status=500' -e tracing_mark_write
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <fdr/fdr.h>

/* clang-format off */
FDR_EVENT(demo, request,
	FDR_PROTO(int status, uint64_t latency_ns, const char *path),
	FDR_ARGS(status, latency_ns, path),
	FDR_FIELDS(
		fdr_field_int(int32_t, status, status)
		fdr_field_int(uint64_t, latency_ns, latency_ns)
		fdr_field_string(path, path)))

FDR_EVENT(demo, cache,
	FDR_PROTO(bool hit, const char *key),
	FDR_ARGS(hit, key),
	FDR_FIELDS(
		fdr_field_bool(hit, hit)
		fdr_field_string(key, key)))

FDR_EVENT_FMT(demo, db_query,
	FDR_PROTO(const char *table, uint32_t rows, uint64_t duration_ns),
	FDR_ARGS(table, rows, duration_ns),
	FDR_FIELDS(
		fdr_field_string(table, table)
		fdr_field_int(uint32_t, rows, rows)
		fdr_field_int(uint64_t, duration_ns, duration_ns)),
	"%s: %u rows in %llu ns", table, rows, duration_ns)
/* clang-format on */

#define DEFAULT_REQUESTS 1000
#define DEFAULT_RATE 400 /* requests per second: 1000 requests take 2.5 s */
#define DEFAULT_SEED 1
#define FAIL_BLOCK 100 /* one failure per this many requests */

struct route {
	const char *path;
	const char *table; /* NULL: static file, no cache or database */
	unsigned int weight;
};

static const struct route routes[] = {
	{ "/api/users", "users", 30 },
	{ "/api/orders", "orders", 25 },
	{ "/api/orders/items", "order_items", 10 },
	{ "/api/search", "products", 10 },
	{ "/static/app.js", NULL, 12 },
	{ "/static/style.css", NULL, 8 },
	{ "/index.html", NULL, 5 },
};

#define NR_ROUTES (sizeof(routes) / sizeof(routes[0]))

static volatile sig_atomic_t stop;

/* xorshift64*: small, fast and the same on every machine for a given seed */
static uint64_t rng_state;

static uint64_t rng_next(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dull;
}

/* A number in [0, n). */
static uint64_t rng_below(uint64_t n)
{
	return n ? rng_next() % n : 0;
}

static void rng_seed(uint64_t seed)
{
	rng_state = seed * 0x9e3779b97f4a7c15ull + 0x632be59bd9b4e019ull;
	if (!rng_state)
		rng_state = 1;
	rng_next();
}

static const struct route *pick_route(void)
{
	unsigned int total = 0, i;
	uint64_t r;

	for (i = 0; i < NR_ROUTES; i++)
		total += routes[i].weight;
	r = rng_below(total);
	for (i = 0; i < NR_ROUTES - 1; i++) {
		if (r < routes[i].weight)
			break;
		r -= routes[i].weight;
	}
	return &routes[i];
}

struct stats {
	uint64_t requests;
	uint64_t failures;
	uint64_t cache_hits;
	uint64_t db_queries;
};

/*
 * Serve one request for @rt, failing it if @fail. Returns the HTTP status;
 * *latency_ns gets the simulated service time.
 */
static int serve(const struct route *rt, int fail, struct stats *st, uint64_t *latency_ns)
{
	uint64_t lat = 20000 + rng_below(60000); /* parsing, routing: 20-80 us */
	char key[96];
	uint64_t id;
	bool hit;

	if (!rt->table) {
		/* static files: sometimes the client's copy is current */
		*latency_ns = lat + rng_below(150000);
		if (fail)
			return 500;
		return rng_below(4) == 0 ? 304 : 200;
	}

	id = rng_below(5000);
	hit = !fail && rng_below(100) < 70;
	if (fdr_event_enabled(demo, cache)) {
		/* the key string is only built when someone records it */
		snprintf(key, sizeof(key), "%s:%" PRIu64, rt->table, id);
		fdr_demo_cache(hit, key);
	}
	if (hit) {
		st->cache_hits++;
		*latency_ns = lat + 5000 + rng_below(20000);
		return 200;
	}

	st->db_queries++;
	if (fail) {
		/* the database gave up: the query ran into its 800 ms timeout */
		uint64_t dur = 800000000ull + rng_below(5000000);

		fdr_demo_db_query(rt->table, 0, dur);
		*latency_ns = lat + dur;
		return 500;
	} else {
		uint32_t rows = (uint32_t)rng_below(rt->table[0] == 'p' ? 500 : 50);
		uint64_t dur = 200000 + rows * 4000ull + rng_below(3000000);

		fdr_demo_db_query(rt->table, rows, dur);
		*latency_ns = lat + dur;
		/* a lookup that found nothing */
		if (rows == 0 && strcmp(rt->table, "users") == 0)
			return 404;
		return 200;
	}
}

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: fdr-demo [-n REQUESTS | -f] [-r RATE] [-s SEED] [-q]\n"
		"\n"
		"A simulated web service that records fdr events demo:request,\n"
		"demo:cache and demo:db_query. One request in each block of %d fails\n"
		"with status 500 and writes a trace_marker line.\n"
		"\n"
		"  -n REQUESTS  handle this many requests, then exit (default %d)\n"
		"  -f           run until interrupted (SIGINT, SIGTERM)\n"
		"  -r RATE      requests per second, 0 = as fast as possible (default %d)\n"
		"  -s SEED      seed of the random generator (default %d)\n"
		"  -q           quiet: print only the summary line\n"
		"  -h           show this help\n"
		"\n"
		"The session is $FDR_SESSION (default \"default\"); start it with\n"
		"  fdr start -e 'demo:*'\n",
		FAIL_BLOCK, DEFAULT_REQUESTS, DEFAULT_RATE, DEFAULT_SEED);
}

static int parse_u64(const char *s, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!*s || *s == '-' || *s == '+' || *s == ' ')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

/* Sleep until @t on CLOCK_MONOTONIC, or until a signal asks us to stop. */
static void sleep_until(const struct timespec *t)
{
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, t, NULL) == EINTR && !stop)
		;
}

static int bad_arg(int opt, const char *expected, const char *found)
{
	fprintf(stderr, "fdr-demo: -%c: expected %s, got '%s'\n", opt, expected, found);
	return 2;
}

static void timespec_add_ns(struct timespec *t, uint64_t ns)
{
	ns += (uint64_t)t->tv_nsec;
	t->tv_sec += (time_t)(ns / 1000000000ull);
	t->tv_nsec = (long)(ns % 1000000000ull);
}

int main(int argc, char **argv)
{
	uint64_t nr_requests = DEFAULT_REQUESTS, rate = DEFAULT_RATE, seed = DEFAULT_SEED;
	uint64_t fail_at = 0, nr, interval_ns;
	struct stats st = { 0 };
	struct sigaction sa;
	struct timespec next, t0, t1;
	int forever = 0, quiet = 0, opt;
	double secs;

	while ((opt = getopt(argc, argv, "n:fr:s:qh")) != -1) {
		switch (opt) {
		case 'n':
			if (parse_u64(optarg, UINT64_MAX, &nr_requests))
				return bad_arg('n', "a number of requests", optarg);
			break;
		case 'f':
			forever = 1;
			break;
		case 'r':
			if (parse_u64(optarg, 1000000000, &rate))
				return bad_arg('r', "requests per second, 0 to 1000000000", optarg);
			break;
		case 's':
			if (parse_u64(optarg, UINT64_MAX, &seed))
				return bad_arg('s', "a number", optarg);
			break;
		case 'q':
			quiet = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "fdr-demo: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return 2;
	}

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	rng_seed(seed);
	interval_ns = rate ? 1000000000ull / rate : 0;
	if (!quiet) {
		const char *ses = getenv("FDR_SESSION");
		char count[32], speed[32];

		if (forever)
			snprintf(count, sizeof(count), "unlimited");
		else
			snprintf(count, sizeof(count), "%" PRIu64, nr_requests);
		if (rate)
			snprintf(speed, sizeof(speed), "%" PRIu64 "/s", rate);
		else
			snprintf(speed, sizeof(speed), "unthrottled");
		fprintf(stderr, "fdr-demo: pid %d, session '%s', %s requests, %s, seed %" PRIu64,
			(int)getpid(), ses && *ses ? ses : "default", count, speed, seed);
		fputc('\n', stderr);
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	next = t0;

	for (nr = 0; !stop && (forever || nr < nr_requests); nr++) {
		const struct route *rt;
		uint64_t latency_ns = 0;
		int status, fail;

		if (nr % FAIL_BLOCK == 0)
			fail_at = nr + rng_below(FAIL_BLOCK);
		fail = nr == fail_at;
		rt = pick_route();
		status = serve(rt, fail, &st, &latency_ns);
		fdr_demo_request(status, latency_ns, rt->path);
		st.requests++;
		if (status >= 500) {
			st.failures++;
			fdr_marker("request %" PRIu64 " failed: GET %s: status %d after %" PRIu64
				   " us (%s)",
				   nr, rt->path, status, latency_ns / 1000,
				   rt->table ? "database timeout" : "storage read error");
			if (!quiet)
				fprintf(stderr, "fdr-demo: request %" PRIu64 " failed: %s: %d\n",
					nr, rt->path, status);
		}
		if (interval_ns) {
			timespec_add_ns(&next, interval_ns);
			sleep_until(&next);
		}
	}

	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	fprintf(stderr,
		"fdr-demo: %" PRIu64 " requests, %" PRIu64 " failed, %" PRIu64
		" cache hits, %" PRIu64 " db queries in %.2f s\n",
		st.requests, st.failures, st.cache_hits, st.db_queries, secs);
	return 0;
}
