// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test-relay.c - the relay client's checks of what it is given: relay URLs
 * (fdr_relay_parse_url(), a table of good and bad ones), names it would send,
 * and a daemon that answers badly. A fake daemon (a thread on 127.0.0.1, any
 * port) reads each command and answers from a script: another protocol
 * version, a session path longer than the protocol allows, an error code, a
 * connection closed, no answer at all. What must not happen: a crash, a hang
 * past the timeout, a connection reported open, or an error without its
 * message (which must say what was expected and what was found).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <criterion/criterion.h>

#include "fdr/fdr-relay.h"

TestSuite(relay, .timeout = 30);

/* ---- URLs ------------------------------------------------------------------------------ */

struct url_case {
	const char *url;
	int ok;
	const char *host;
	unsigned ctrl, data;
};

static const struct url_case url_cases[] = {
	{ "net://collector", 1, "collector", 5342, 5343 },
	{ "net://10.0.0.1:6000", 1, "10.0.0.1", 6000, 6001 },
	{ "net://h:1:2", 1, "h", 1, 2 },
	{ "net://[::1]:7000", 1, "::1", 7000, 7001 },
	{ "net6://[fe80::1]", 1, "fe80::1", 5342, 5343 },
	{ "net://h:65535:1", 1, "h", 65535, 1 },
	{ "net://h:65535", 0, NULL, 0, 0 }, /* no data port after 65535 */
	{ "tcp://h", 0, NULL, 0, 0 },
	{ "net://", 0, NULL, 0, 0 },
	{ "net://h:", 0, NULL, 0, 0 },
	{ "net://h:0", 0, NULL, 0, 0 },
	{ "net://h:70000", 0, NULL, 0, 0 },
	{ "net://h:1:", 0, NULL, 0, 0 },
	{ "net://h:1:2:3", 0, NULL, 0, 0 },
	{ "net://h:x", 0, NULL, 0, 0 },
	{ "net://h:-1", 0, NULL, 0, 0 },
	{ "net://[::1", 0, NULL, 0, 0 },
	{ "net://[::1]x", 0, NULL, 0, 0 },
	{ "net://h/path", 0, NULL, 0, 0 },
	{ "", 0, NULL, 0, 0 },
};

Test(relay, urls)
{
	size_t i;

	for (i = 0; i < sizeof(url_cases) / sizeof(url_cases[0]); i++) {
		const struct url_case *c = &url_cases[i];
		struct fdr_relay_url u;
		struct fdr_buf err = { 0 };
		int ret = fdr_relay_parse_url(c->url, &u, &err);

		if (!c->ok) {
			cr_expect_eq(ret, -EINVAL, "'%s': %d, expected -EINVAL", c->url, ret);
			cr_expect(err.len && strstr(err.data, "expected net://") &&
					  strstr(err.data, c->url),
				  "'%s': message '%s'", c->url, err.data ? err.data : "");
		} else {
			cr_expect_eq(ret, 0, "'%s': %d (%s)", c->url, ret,
				     err.data ? err.data : "");
			cr_expect_str_eq(u.host, c->host, "'%s': host '%s'", c->url, u.host);
			cr_expect_eq(u.ctrl_port, c->ctrl, "'%s': control port %u", c->url,
				     u.ctrl_port);
			cr_expect_eq(u.data_port, c->data, "'%s': data port %u", c->url,
				     u.data_port);
		}
		fdr_buf_free(&err);
	}
}

/* ---- a fake daemon --------------------------------------------------------------------- */

enum fake_script {
	FAKE_VERSION_3, /* version 3.0 */
	FAKE_VERSION_2_4, /* 2.4: no trace chunks */
	FAKE_PATH_TOO_LONG, /* 2.13, then a session path of 5000 bytes */
	FAKE_SESSION_ERROR, /* 2.13, then create session refused (LTTNG_ERR_FATAL) */
	FAKE_CLOSE, /* closes the connection at once */
	FAKE_SILENT, /* reads, never answers */
};

struct fake {
	int lfd;
	uint16_t port;
	enum fake_script script;
	pthread_t th;
	uint32_t cmds[4]; /* the commands received */
	int nr_cmds;
};

/* One command: its header and data; the command number, or -1 at EOF. */
static int fake_read_cmd(int fd)
{
	unsigned char h[24];
	uint64_t size;
	uint32_t cmd;
	size_t got = 0;

	while (got < sizeof(h)) {
		ssize_t k = read(fd, h + got, sizeof(h) - got);

		if (k <= 0)
			return -1;
		got += (size_t)k;
	}
	memcpy(&size, h + 8, 8);
	memcpy(&cmd, h + 16, 4);
	size = be64toh(size);
	while (size) {
		char junk[512];
		ssize_t k = read(fd, junk, size < sizeof(junk) ? size : sizeof(junk));

		if (k <= 0)
			return -1;
		size -= (uint64_t)k;
	}
	return (int)be32toh(cmd);
}

static void fake_put32(unsigned char *p, uint32_t v)
{
	v = htobe32(v);
	memcpy(p, &v, 4);
}

static void *fake_thread(void *arg)
{
	struct fake *f = arg;
	unsigned char rep[16];
	int fd = accept(f->lfd, NULL, NULL), cmd;

	if (fd < 0)
		return NULL;
	if (f->script == FAKE_CLOSE) {
		close(fd);
		return NULL;
	}
	while ((cmd = fake_read_cmd(fd)) >= 0) {
		if (f->nr_cmds < 4)
			f->cmds[f->nr_cmds++] = (uint32_t)cmd;
		if (f->script == FAKE_SILENT)
			continue;
		if (cmd == 5) { /* version */
			fake_put32(rep, f->script == FAKE_VERSION_3 ? 3 : 2);
			fake_put32(rep + 4, f->script == FAKE_VERSION_3	  ? 0 :
					    f->script == FAKE_VERSION_2_4 ? 4 :
									    13);
			if (write(fd, rep, 8) != 8)
				break;
		} else if (cmd == 2) { /* create session */
			memset(rep, 0, sizeof(rep));
			rep[7] = 1; /* session id 1 */
			fake_put32(rep + 8, f->script == FAKE_SESSION_ERROR ? 25 : 10);
			fake_put32(rep + 12, f->script == FAKE_PATH_TOO_LONG ? 5000 : 0);
			if (write(fd, rep, 16) != 16)
				break;
		}
	}
	close(fd);
	return NULL;
}

static void fake_start(struct fake *f, enum fake_script script)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t al = sizeof(a);

	memset(f, 0, sizeof(*f));
	f->script = script;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	f->lfd = socket(AF_INET, SOCK_STREAM, 0);
	cr_assert(f->lfd >= 0);
	cr_assert_eq(bind(f->lfd, (struct sockaddr *)&a, sizeof(a)), 0);
	cr_assert_eq(listen(f->lfd, 4), 0);
	cr_assert_eq(getsockname(f->lfd, (struct sockaddr *)&a, &al), 0);
	f->port = ntohs(a.sin_port);
	cr_assert_eq(pthread_create(&f->th, NULL, fake_thread, f), 0);
}

/* Open a session on the fake daemon; the error and its message. */
static int fake_open(struct fake *f, struct fdr_buf *err, int timeout_ms)
{
	struct fdr_relay_url u = { .ctrl_port = f->port, .data_port = f->port };
	struct fdr_relay_session rs = {
		.hostname = "host-a",
		.name = "sess",
		.id = 42,
		.creation_time = 1700000000,
		.snapshot = 1,
		.timeout_ms = timeout_ms,
	};
	struct fdr_relay *r = (struct fdr_relay *)1;
	int ret;

	snprintf(u.host, sizeof(u.host), "127.0.0.1");
	ret = fdr_relay_open(&u, &rs, &r, err);
	cr_expect_null(r, "a connection is returned with error %d", ret);
	fdr_relay_close(r);
	return ret;
}

static void fake_stop(struct fake *f)
{
	shutdown(f->lfd, SHUT_RDWR);
	pthread_join(f->th, NULL);
	close(f->lfd);
}

static void expect_msg(const struct fdr_buf *err, const char *a, const char *b)
{
	cr_expect(err->len && strstr(err->data, a) && (!b || strstr(err->data, b)),
		  "message '%s', expected '%s'%s%s", err->data ? err->data : "", a,
		  b ? " and " : "", b ? b : "");
}

Test(relay, version_3_refused)
{
	struct fake f;
	struct fdr_buf err = { 0 };

	fake_start(&f, FAKE_VERSION_3);
	cr_expect_eq(fake_open(&f, &err, 2000), -EPROTONOSUPPORT);
	expect_msg(&err, "speaks relay protocol 3.0", "needs 2.11 or later");
	fake_stop(&f);
	cr_expect_eq(f.nr_cmds, 1, "%d commands after the version", f.nr_cmds);
	cr_expect_eq(f.cmds[0], 5u);
	fdr_buf_free(&err);
}

Test(relay, version_2_4_refused)
{
	struct fake f;
	struct fdr_buf err = { 0 };

	fake_start(&f, FAKE_VERSION_2_4);
	cr_expect_eq(fake_open(&f, &err, 2000), -EPROTONOSUPPORT);
	expect_msg(&err, "speaks relay protocol 2.4", NULL);
	fake_stop(&f);
	fdr_buf_free(&err);
}

Test(relay, session_path_too_long)
{
	struct fake f;
	struct fdr_buf err = { 0 };

	fake_start(&f, FAKE_PATH_TOO_LONG);
	cr_expect_eq(fake_open(&f, &err, 2000), -EPROTO);
	expect_msg(&err, "expected an output path shorter than", "found 5000");
	fake_stop(&f);
	cr_expect_eq(f.nr_cmds, 2);
	fdr_buf_free(&err);
}

Test(relay, session_refused)
{
	struct fake f;
	struct fdr_buf err = { 0 };

	fake_start(&f, FAKE_SESSION_ERROR);
	cr_expect_eq(fake_open(&f, &err, 2000), -EPROTO);
	expect_msg(&err, "create session refused", "lttng error code 25");
	fake_stop(&f);
	fdr_buf_free(&err);
}

Test(relay, closed)
{
	struct fake f;
	struct fdr_buf err = { 0 };
	int ret;

	fake_start(&f, FAKE_CLOSE);
	ret = fake_open(&f, &err, 2000);
	cr_expect(ret == -ECONNRESET || ret == -EPIPE, "%d", ret);
	expect_msg(&err, "lttng-relayd at 127.0.0.1:", "version");
	fake_stop(&f);
	fdr_buf_free(&err);
}

Test(relay, silent_times_out)
{
	struct fake f;
	struct fdr_buf err = { 0 };
	struct timespec t0, t1;
	long ms;

	fake_start(&f, FAKE_SILENT);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	cr_expect_eq(fake_open(&f, &err, 300), -ETIMEDOUT);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
	cr_expect(ms >= 250 && ms < 5000, "gave up after %ld ms, timeout 300", ms);
	expect_msg(&err, "waiting for the reply to version", "timed out");
	fake_stop(&f);
	fdr_buf_free(&err);
}

Test(relay, refused_connection)
{
	struct fake f;
	struct fdr_buf err = { 0 };

	/* a port that was listening a moment ago, closed now */
	fake_start(&f, FAKE_CLOSE);
	{
		int fd = socket(AF_INET, SOCK_STREAM, 0);
		struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(f.port) };

		a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		cr_assert_eq(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
		close(fd);
	}
	fake_stop(&f);
	cr_expect_eq(fake_open(&f, &err, 2000), -ECONNREFUSED);
	expect_msg(&err, "control connection", "refused");
	fdr_buf_free(&err);
}

Test(relay, bad_names)
{
	static const char *const hosts[] = { "", "a/b", "..", ".", "h\n", NULL };
	struct fdr_relay_url u = { .host = "127.0.0.1", .ctrl_port = 9, .data_port = 9 };
	struct fdr_relay_session rs = { .name = "s", .id = 1, .creation_time = 1 };
	char longname[80];
	size_t i;

	memset(longname, 'x', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	for (i = 0; i <= sizeof(hosts) / sizeof(hosts[0]); i++) {
		struct fdr_buf err = { 0 };
		struct fdr_relay *r = NULL;

		rs.hostname = i < sizeof(hosts) / sizeof(hosts[0]) ? hosts[i] : longname;
		cr_expect_eq(fdr_relay_open(&u, &rs, &r, &err), -EINVAL, "host '%s'",
			     rs.hostname ? rs.hostname : "(null)");
		expect_msg(&err, "expected a host name", NULL);
		cr_expect_null(r);
		fdr_buf_free(&err);
	}
	{
		struct fdr_buf err = { 0 };
		struct fdr_relay *r = NULL;

		rs.hostname = "h";
		rs.name = "../up";
		cr_expect_eq(fdr_relay_open(&u, &rs, &r, &err), -EINVAL);
		expect_msg(&err, "expected a session name", "../up");
		fdr_buf_free(&err);
	}
}
