// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * relay.c - a producer for LTTng's relay daemon (lttng-relayd): fdr's CTF
 * export sent over the daemon's protocol instead of written to a directory.
 *
 * The protocol, as read from lttng-tools 2.13 (docs/design/relay.md has the
 * whole of it as fdr uses it). Two TCP connections to the daemon:
 *
 *   control (5342)  commands, each: header { circuit_id u64 = 0, data_size u64,
 *                   cmd u32, cmd_version u32 = 0 } then data_size bytes; most
 *                   commands get a reply, the metadata command does not
 *   data    (5343)  packets, each: header { circuit_id u64 = 0, stream_id u64,
 *                   net_seq_num u64, data_size u32, padding_size u32 } then
 *                   data_size bytes (and padding_size zeros, none here)
 *
 * Every integer is big-endian; structures are packed. A snapshot goes:
 *
 *   control: VERSION 2.13 -> the daemon's; major 2 and minor >= 11 or we refuse
 *            CREATE_SESSION (2.11 form: name, hostname, base path "", uuid,
 *            session id, creation time; snapshot = 1) -> relayd session id
 *            CREATE_TRACE_CHUNK (id, time, name "snapshot-N-...")
 *            ADD_STREAM per CPU with records ("stream_N" in "fdr/") -> handle
 *   data:    the packets of each stream, net_seq_num 0, 1, 2...
 *   control: ADD_STREAM "metadata", SEND_METADATA (the TSDL text)
 *            STREAMS_SENT
 *            DATA_PENDING per stream until the daemon has written all of it
 *            CLOSE_STREAM per stream (the metadata's with last seq = -1)
 *            CLOSE_TRACE_CHUNK -> the chunk's path on the daemon
 *
 * Live (fdr_relay_live_*(): a session with a live timer, snapshot = 0): one
 * unnamed chunk, every CPU's stream added at the first tick, STREAMS_SENT after
 * each ADD_STREAM, the metadata sent again as it grows (only its new part), a
 * SEND_INDEX after each packet, and for a CPU with nothing new an index with
 * packet_size 0 (a beacon: idle up to its timestamp_end), which live viewers
 * need to go on without it.
 *
 * The daemon names the session directory HOSTNAME/NAME-YYYYMMDD-HHMMSS from
 * the creation time we send, so sessions opened again with the same name and
 * time (one per snapshot, by fdr snapshot save) land in one directory, each
 * snapshot a chunk directory inside it. The daemon does not check the host
 * name or the names of paths for "..": we send only names made of
 * [A-Za-z0-9._-] that are not "." or "..".
 *
 * What comes back from the daemon is checked (lengths, return codes) and a bad
 * reply breaks the connection with -EPROTO. Every connect, send and receive
 * waits at most the session's timeout, so a daemon that stops reading gives
 * -ETIMEDOUT rather than a tool stuck forever.
 */
#define _GNU_SOURCE
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include "fdr/fdr-relay.h"
#include "read-local.h"
#include "export-local.h"

/* lttcomm_relayd_command values */
enum {
	RELAY_ADD_STREAM = 1,
	RELAY_CREATE_SESSION = 2,
	RELAY_VERSION = 5,
	RELAY_SEND_METADATA = 6,
	RELAY_CLOSE_STREAM = 7,
	RELAY_DATA_PENDING = 8,
	RELAY_SEND_INDEX = 13,
	RELAY_STREAMS_SENT = 16,
	RELAY_CREATE_TRACE_CHUNK = 19,
	RELAY_CLOSE_TRACE_CHUNK = 20,
};

#define RELAY_OK 10 /* lttng_error_code LTTNG_OK */
#define RELAY_MAJOR 2
#define RELAY_MINOR 13 /* what we announce */
#define RELAY_MINOR_MIN 11 /* trace chunks and the 2.11 session form */
#define RELAY_CMD_HDR 24
#define RELAY_DATA_HDR 32
#define RELAY_PATH_MAX 4096
#define RELAY_STREAM_PATH "fdr"
#define RELAY_OWED_MAX 4096 /* live: index replies left unread at most (4 bytes each) */
#define RELAY_THREADS 2 /* a snapshot's CPUs encoded side by side (export-ctf.c) */

struct relay_stream {
	uint64_t handle; /* the daemon's */
	uint64_t next_seq; /* net_seq_num of the next packet */
	int metadata;
};

struct fdr_relay {
	struct fdr_ctf_sink k;
	int ctrl, data; /* sockets; -1 when closed */
	int timeout_ms;
	int broken; /* a failure left the protocol state unknown */
	uint32_t major, minor;
	uint64_t session; /* the daemon's session id */
	uint64_t chunk; /* the chunk being sent */
	struct relay_stream *streams;
	int nr_streams;
	int meta_h; /* the metadata stream; -1: not added yet */
	struct fdr_buf meta; /* the metadata sent so far */
	int live; /* a live session: indexes with the packets, beacons */
	uint32_t owed; /* replies to SEND_INDEX not read yet (relay_drain()) */
	struct fdr_ctf_writer *w; /* live: the writer between ticks */
	struct fdr_export_stats st; /* live: the writer's counts at the end */
	char where[300]; /* "lttng-relayd at HOST:PORT" */
	char session_path[RELAY_PATH_MAX];
};

/* ---- names and the URL ----------------------------------------------------------------- */

/* Non-empty, < @max bytes, only [A-Za-z0-9._-] (@dots: '.' allowed), not "." or "..". */
static int relay_name_ok(const char *s, size_t max, int dots)
{
	size_t i, n = s ? strnlen(s, max) : 0;

	if (!n || n >= max || !strcmp(s, ".") || !strcmp(s, ".."))
		return 0;
	for (i = 0; i < n; i++) {
		char c = s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '-' || (dots && c == '.')))
			return 0;
	}
	return 1;
}

static int relay_port(const char *s, size_t n, uint16_t *port)
{
	unsigned long v = 0;
	size_t i;

	if (!n || n > 5)
		return -1;
	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (unsigned long)(s[i] - '0');
	}
	if (!v || v > 65535)
		return -1;
	*port = (uint16_t)v;
	return 0;
}

/**
 * fdr_relay_parse_url - net://HOST[:CTRL_PORT[:DATA_PORT]] (or net6://; an
 * IPv6 address in brackets) into @u; ports default to 5342 and 5343
 *
 * Returns: 0 or -EINVAL (message in @err: what was expected, what was found).
 */
int fdr_relay_parse_url(const char *url, struct fdr_relay_url *u, struct fdr_buf *err)
{
	const char *p, *end, *colon;
	size_t hl;

	memset(u, 0, sizeof(*u));
	u->ctrl_port = FDR_RELAY_CTRL_PORT;
	u->data_port = FDR_RELAY_DATA_PORT;
	if (!url)
		goto bad;
	if (!strncmp(url, "net://", 6))
		p = url + 6;
	else if (!strncmp(url, "net6://", 7))
		p = url + 7;
	else
		goto bad;
	if (*p == '[') {
		end = strchr(p, ']');
		if (!end)
			goto bad;
		hl = (size_t)(end - p - 1);
		p++;
		colon = end[1] == ':' ? end + 1 : (end[1] ? NULL : end + 1);
		if (!colon)
			goto bad;
	} else {
		colon = strchr(p, ':');
		end = colon ? colon : p + strlen(p);
		hl = (size_t)(end - p);
	}
	if (!hl || hl >= sizeof(u->host) || memchr(p, '/', hl))
		goto bad;
	memcpy(u->host, p, hl);
	if (colon && *colon == ':') {
		const char *c2 = strchr(colon + 1, ':');
		size_t n1 = c2 ? (size_t)(c2 - colon - 1) : strlen(colon + 1);

		if (relay_port(colon + 1, n1, &u->ctrl_port))
			goto bad;
		if (c2 && relay_port(c2 + 1, strlen(c2 + 1), &u->data_port))
			goto bad;
		if (!c2)
			u->data_port = u->ctrl_port == 65535 ? 0 : (uint16_t)(u->ctrl_port + 1);
		if (!u->data_port)
			goto bad;
	}
	return 0;
bad:
	if (err && !err->len)
		fdr_buf_printf(err,
			       "expected net://HOST[:CONTROL_PORT[:DATA_PORT]] (ports 1-65535), "
			       "found '%s'",
			       url ? url : "");
	return -EINVAL;
}

/* ---- sockets --------------------------------------------------------------------------- */

static int relay_fail(struct fdr_relay *r, struct fdr_buf *err, int errnum, const char *what)
{
	r->broken = 1;
	if (err && !err->len)
		fdr_buf_printf(err, "%s: %s: %s", r->where, what, strerror(errnum));
	return -errnum;
}

static int relay_wait(int fd, short ev, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = ev };
	int n;

	do
		n = poll(&p, 1, timeout_ms);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if (!n)
		return -ETIMEDOUT;
	return 0;
}

static int relay_connect(const char *host, uint16_t port, int timeout_ms, int *out)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM }, *ai, *a;
	char ps[8];
	int ret = -EHOSTUNREACH, fd = -1;

	snprintf(ps, sizeof(ps), "%u", port);
	if (getaddrinfo(host, ps, &hints, &ai))
		return -EHOSTUNREACH;
	for (a = ai; a; a = a->ai_next) {
		int one = 1, e;
		socklen_t el = sizeof(e);

		fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK,
			    a->ai_protocol);
		if (fd < 0) {
			ret = -errno;
			continue;
		}
		if (connect(fd, a->ai_addr, a->ai_addrlen) < 0 && errno != EINPROGRESS) {
			ret = -errno;
		} else {
			ret = relay_wait(fd, POLLOUT, timeout_ms);
			if (!ret && getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &el) < 0)
				ret = -errno;
			else if (!ret && e)
				ret = -e;
		}
		if (!ret) {
			setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
			break;
		}
		close(fd);
		fd = -1;
	}
	freeaddrinfo(ai);
	*out = fd;
	return ret;
}

/* Send all of @n bytes of each part; the socket is non-blocking, each wait bounded. */
static int relay_send(struct fdr_relay *r, int fd, const void *a, size_t an, const void *b,
		      size_t bn)
{
	const void *p[2] = { a, b };
	size_t n[2] = { an, bn };
	int i;

	for (i = 0; i < 2; i++) {
		const char *c = p[i];
		size_t left = n[i];

		while (left) {
			ssize_t k = send(fd, c, left, MSG_NOSIGNAL);

			if (k < 0 && errno == EINTR)
				continue;
			if (k < 0 && errno == EAGAIN) {
				int ret = relay_wait(fd, POLLOUT, r->timeout_ms);

				if (ret)
					return ret;
				continue;
			}
			if (k < 0)
				return -errno;
			c += k;
			left -= (size_t)k;
		}
	}
	return 0;
}

static int relay_recv(struct fdr_relay *r, void *buf, size_t n)
{
	char *c = buf;

	while (n) {
		ssize_t k = recv(r->ctrl, c, n, 0);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0 && errno == EAGAIN) {
			int ret = relay_wait(r->ctrl, POLLIN, r->timeout_ms);

			if (ret)
				return ret;
			continue;
		}
		if (k < 0)
			return -errno;
		if (!k)
			return -ECONNRESET; /* the daemon closed the connection */
		c += k;
		n -= (size_t)k;
	}
	return 0;
}

/* ---- messages -------------------------------------------------------------------------- */

static void put32(unsigned char **p, uint32_t v)
{
	v = htobe32(v);
	memcpy(*p, &v, 4);
	*p += 4;
}

static void put64(unsigned char **p, uint64_t v)
{
	v = htobe64(v);
	memcpy(*p, &v, 8);
	*p += 8;
}

static uint32_t get32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return be32toh(v);
}

static uint64_t get64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return be64toh(v);
}

static const char *relay_cmd_name(uint32_t cmd)
{
	switch (cmd) {
	case RELAY_ADD_STREAM:
		return "add stream";
	case RELAY_CREATE_SESSION:
		return "create session";
	case RELAY_VERSION:
		return "version";
	case RELAY_SEND_METADATA:
		return "send metadata";
	case RELAY_CLOSE_STREAM:
		return "close stream";
	case RELAY_DATA_PENDING:
		return "data pending";
	case RELAY_SEND_INDEX:
		return "send index";
	case RELAY_STREAMS_SENT:
		return "streams sent";
	case RELAY_CREATE_TRACE_CHUNK:
		return "create trace chunk";
	case RELAY_CLOSE_TRACE_CHUNK:
		return "close trace chunk";
	default:
		return "command";
	}
}

/* Send command @cmd: its header, @a (@an bytes) and @b (@bn bytes) as its data. */
static int relay_cmd(struct fdr_relay *r, uint32_t cmd, const void *a, size_t an, const void *b,
		     size_t bn, struct fdr_buf *err)
{
	unsigned char hdr[RELAY_CMD_HDR], *p = hdr;
	unsigned char *msg;
	int ret;

	if (r->broken || r->ctrl < 0)
		return relay_fail(r, err, ECONNRESET, "connection broken by an earlier error");
	put64(&p, 0); /* circuit_id */
	put64(&p, (uint64_t)an + bn);
	put32(&p, cmd);
	put32(&p, 0); /* cmd_version */
	/* header and the small part in one send: one segment for most commands */
	msg = malloc(sizeof(hdr) + an);
	if (!msg)
		return relay_fail(r, err, ENOMEM, relay_cmd_name(cmd));
	memcpy(msg, hdr, sizeof(hdr));
	if (an)
		memcpy(msg + sizeof(hdr), a, an);
	ret = relay_send(r, r->ctrl, msg, sizeof(hdr) + an, b, bn);
	free(msg);
	if (ret)
		return relay_fail(r, err, -ret, relay_cmd_name(cmd));
	return 0;
}

static int relay_refused(struct fdr_relay *r, uint32_t cmd, uint32_t code, struct fdr_buf *err);

/*
 * Read the replies owed: live indexes are sent without waiting for their
 * replies (a round trip per packet and per idle CPU, each one a wait on a
 * daemon that may not be scheduled, while the ring fills); the daemon answers
 * in order, so they come before the reply of any later command.
 */
static int relay_drain(struct fdr_relay *r, struct fdr_buf *err)
{
	while (r->owed) {
		unsigned char rep[4];
		int ret = relay_recv(r, rep, sizeof(rep));

		if (ret)
			return relay_fail(r, err, -ret, "waiting for the replies to send index");
		r->owed--;
		if (get32(rep) != RELAY_OK)
			return relay_refused(r, RELAY_SEND_INDEX, get32(rep), err);
	}
	return 0;
}

/* Receive @n bytes of the reply to @cmd (after the replies owed). */
static int relay_reply(struct fdr_relay *r, uint32_t cmd, void *buf, size_t n, struct fdr_buf *err)
{
	int ret = relay_drain(r, err);

	if (ret)
		return ret;
	ret = relay_recv(r, buf, n);

	if (ret) {
		char what[96];

		snprintf(what, sizeof(what), "waiting for the reply to %s", relay_cmd_name(cmd));
		return relay_fail(r, err, -ret, what);
	}
	return 0;
}

/* The daemon answered @cmd with @code, not LTTNG_OK. */
static int relay_refused(struct fdr_relay *r, uint32_t cmd, uint32_t code, struct fdr_buf *err)
{
	r->broken = 1;
	if (err && !err->len)
		fdr_buf_printf(err,
			       "%s: %s refused (lttng error code %" PRIu32
			       "; the daemon's log says why)",
			       r->where, relay_cmd_name(cmd), code);
	return -EPROTO;
}

/* A command whose reply is one ret_code: send, receive, check. */
static int relay_simple(struct fdr_relay *r, uint32_t cmd, const void *a, size_t an,
			struct fdr_buf *err)
{
	unsigned char rep[4];
	int ret = relay_cmd(r, cmd, a, an, NULL, 0, err);

	if (!ret)
		ret = relay_reply(r, cmd, rep, sizeof(rep), err);
	if (!ret && get32(rep) != RELAY_OK)
		ret = relay_refused(r, cmd, get32(rep), err);
	return ret;
}

static int relay_version_check(struct fdr_relay *r, struct fdr_buf *err)
{
	unsigned char msg[8], *p = msg;
	int ret;

	put32(&p, RELAY_MAJOR);
	put32(&p, RELAY_MINOR);
	ret = relay_cmd(r, RELAY_VERSION, msg, sizeof(msg), NULL, 0, err);
	if (!ret)
		ret = relay_reply(r, RELAY_VERSION, msg, sizeof(msg), err);
	if (ret)
		return ret;
	r->major = get32(msg);
	r->minor = get32(msg + 4);
	if (r->major != RELAY_MAJOR || r->minor < RELAY_MINOR_MIN) {
		r->broken = 1;
		if (err && !err->len)
			fdr_buf_printf(err,
				       "%s: the daemon speaks relay protocol %" PRIu32 ".%" PRIu32
				       "; fdr needs %u.%u or later of major %u (lttng-tools 2.11+)",
				       r->where, r->major, r->minor, RELAY_MAJOR, RELAY_MINOR_MIN,
				       RELAY_MAJOR);
		return -EPROTONOSUPPORT;
	}
	if (r->minor > RELAY_MINOR)
		r->minor = RELAY_MINOR; /* a newer daemon adapts to us */
	return 0;
}

static int relay_create_session(struct fdr_relay *r, const struct fdr_relay_session *rs,
				struct fdr_buf *err)
{
	size_t nl = strlen(rs->name) + 1, hl = strlen(rs->hostname) + 1;
	unsigned char fixed[59], *p = fixed, rep[16], uuid[16];
	struct fdr_buf names = { 0 };
	uint32_t plen;
	int ret;

	/*
	 * The "session daemon" uuid: the daemon files chunks by (uuid, session
	 * id, chunk id) and refuses the nil uuid. Ours is the session id twice,
	 * made a v4-shaped uuid, so it is the same for every connection of a session.
	 */
	memcpy(uuid, &rs->id, 8);
	memcpy(uuid + 8, &rs->creation_time, 8);
	uuid[6] = (uuid[6] & 0x0f) | 0x40;
	uuid[8] = (uuid[8] & 0x3f) | 0x80;
	put32(&p, (uint32_t)nl);
	put32(&p, (uint32_t)hl);
	put32(&p, 1); /* base path: "" (the daemon names the directory) */
	put32(&p, rs->snapshot ? 0 : rs->live_timer_us);
	*p++ = rs->snapshot ? 1 : 0;
	*p++ = 0; /* the name does not contain the creation time */
	memcpy(p, uuid, 16);
	p += 16;
	put64(&p, rs->id);
	put64(&p, rs->creation_time);
	*p++ = 0; /* no current chunk: is_set = 0, value */
	put64(&p, 0);
	if (fdr_buf_add(&names, rs->name, nl) || fdr_buf_add(&names, rs->hostname, hl) ||
	    fdr_buf_add(&names, "", 1)) {
		fdr_buf_free(&names);
		return relay_fail(r, err, ENOMEM, "create session");
	}
	ret = relay_cmd(r, RELAY_CREATE_SESSION, fixed, sizeof(fixed), names.data, names.len, err);
	fdr_buf_free(&names);
	if (!ret)
		ret = relay_reply(r, RELAY_CREATE_SESSION, rep, sizeof(rep), err);
	if (ret)
		return ret;
	r->session = get64(rep);
	plen = get32(rep + 12);
	if (plen >= sizeof(r->session_path)) {
		r->broken = 1;
		if (err && !err->len)
			fdr_buf_printf(err,
				       "%s: create session: expected an output path shorter than "
				       "%zu bytes, found %" PRIu32,
				       r->where, sizeof(r->session_path), plen);
		return -EPROTO;
	}
	if (plen) {
		ret = relay_reply(r, RELAY_CREATE_SESSION, r->session_path, plen, err);
		if (ret)
			return ret;
		r->session_path[plen - 1] = '\0';
	}
	if (get32(rep + 8) != RELAY_OK)
		return relay_refused(r, RELAY_CREATE_SESSION, get32(rep + 8), err);
	return 0;
}

/**
 * fdr_relay_open - connect to lttng-relayd at @u and create session @rs there
 *
 * Returns: 0 and *@out, or a negative errno (message in @err).
 */
int fdr_relay_open(const struct fdr_relay_url *u, const struct fdr_relay_session *rs,
		   struct fdr_relay **out, struct fdr_buf *err)
{
	struct fdr_relay *r;
	int ret;

	*out = NULL;
	if (!relay_name_ok(rs->hostname, 64, 1)) {
		if (err && !err->len)
			fdr_buf_printf(err,
				       "relay: expected a host name of 1-63 bytes of "
				       "[A-Za-z0-9._-], found '%s'",
				       rs->hostname ? rs->hostname : "");
		return -EINVAL;
	}
	if (!relay_name_ok(rs->name, 200, 1)) {
		if (err && !err->len)
			fdr_buf_printf(err,
				       "relay: expected a session name of 1-199 bytes of "
				       "[A-Za-z0-9._-], found '%s'",
				       rs->name ? rs->name : "");
		return -EINVAL;
	}
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->ctrl = r->data = -1;
	r->meta_h = -1;
	r->live = !rs->snapshot && rs->live_timer_us;
	r->timeout_ms = rs->timeout_ms > 0 ? rs->timeout_ms : 10000;
	if (strchr(u->host, ':'))
		snprintf(r->where, sizeof(r->where), "lttng-relayd at [%s]:%u", u->host,
			 u->ctrl_port);
	else
		snprintf(r->where, sizeof(r->where), "lttng-relayd at %s:%u", u->host,
			 u->ctrl_port);
	ret = relay_connect(u->host, u->ctrl_port, r->timeout_ms, &r->ctrl);
	if (ret) {
		relay_fail(r, err, -ret, "control connection");
		goto fail;
	}
	ret = relay_version_check(r, err);
	if (!ret)
		ret = relay_create_session(r, rs, err);
	if (ret)
		goto fail;
	ret = relay_connect(u->host, u->data_port, r->timeout_ms, &r->data);
	if (ret) {
		char what[64];

		snprintf(what, sizeof(what), "data connection (port %u)", u->data_port);
		relay_fail(r, err, -ret, what);
		goto fail;
	}
	*out = r;
	return 0;
fail:
	fdr_relay_close(r);
	return ret;
}

void fdr_relay_version(const struct fdr_relay *r, uint32_t *major, uint32_t *minor)
{
	*major = r->major;
	*minor = r->minor;
}

const char *fdr_relay_session_path(const struct fdr_relay *r)
{
	return r->session_path;
}

void fdr_relay_close(struct fdr_relay *r)
{
	if (!r)
		return;
	if (r->ctrl >= 0)
		close(r->ctrl);
	if (r->data >= 0)
		close(r->data);
	fdr_ctf_writer_free(r->w, NULL);
	fdr_buf_free(&r->meta);
	free(r->streams);
	free(r);
}

/* ---- the sink: streams, packets, metadata ---------------------------------------------- */

static int relay_add_stream(struct fdr_relay *r, const char *name, int metadata, int *h)
{
	size_t cl = strlen(name) + 1, pl = sizeof(RELAY_STREAM_PATH);
	unsigned char fixed[32], *p = fixed, rep[12];
	struct relay_stream *s;
	char names[64];
	int ret;

	s = realloc(r->streams, (size_t)(r->nr_streams + 1) * sizeof(*s));
	if (!s)
		return relay_fail(r, r->k.err, ENOMEM, "add stream");
	r->streams = s;
	put32(&p, (uint32_t)cl);
	put32(&p, (uint32_t)pl);
	put64(&p, 0); /* tracefile size: one file */
	put64(&p, 0); /* tracefile count */
	put64(&p, r->chunk);
	memcpy(names, name, cl);
	memcpy(names + cl, RELAY_STREAM_PATH, pl);
	ret = relay_cmd(r, RELAY_ADD_STREAM, fixed, sizeof(fixed), names, cl + pl, r->k.err);
	if (!ret)
		ret = relay_reply(r, RELAY_ADD_STREAM, rep, sizeof(rep), r->k.err);
	if (ret)
		return ret;
	if (get32(rep + 8) != RELAY_OK)
		return relay_refused(r, RELAY_ADD_STREAM, get32(rep + 8), r->k.err);
	s = &r->streams[r->nr_streams];
	s->handle = get64(rep);
	s->next_seq = 0;
	s->metadata = metadata;
	*h = r->nr_streams++;
	return 0;
}

static int rs_open(struct fdr_ctf_sink *k, const char *name, int *h)
{
	struct fdr_relay *r = (struct fdr_relay *)k;
	int ret = relay_add_stream(r, name, 0, h);

	/* live: published to viewers now, before its first packet */
	if (!ret && r->live)
		ret = relay_simple(r, RELAY_STREAMS_SENT, NULL, 0, k->err);
	return ret;
}

/*
 * Live: the index of a packet, after its data (the daemon pairs them by
 * net_seq_num); @pi NULL: a beacon, "nothing new up to @ts" (packet_size 0).
 */
static int relay_index(struct fdr_relay *r, struct relay_stream *s, uint64_t seq,
		       const struct fdr_ctf_packet *pi, uint64_t ts)
{
	unsigned char m[80], *p = m;
	int ret, avail = 0;

	put64(&p, s->handle);
	put64(&p, seq);
	put64(&p, pi ? pi->bits : 0); /* packet_size */
	put64(&p, pi ? pi->bits : 0); /* content_size */
	put64(&p, pi ? pi->ts_begin : ts);
	put64(&p, pi ? pi->ts_end : ts);
	put64(&p, pi ? pi->discarded : 0);
	put64(&p, pi ? pi->stream_class : 0); /* the CTF stream class id */
	put64(&p, pi ? pi->cpu : 0); /* stream instance id */
	put64(&p, seq); /* packet_seq_num */
	ret = relay_cmd(r, RELAY_SEND_INDEX, m, sizeof(m), NULL, 0, r->k.err);
	if (ret)
		return ret;
	/*
	 * its reply is read later (relay_drain()): those that came are read now,
	 * without waiting (the daemon answers an index once it has the data
	 * before it, which can take tens of ms while the ring fills); waited for
	 * only when RELAY_OWED_MAX are owed
	 */
	r->owed++;
	if (r->owed >= RELAY_OWED_MAX)
		return relay_drain(r, r->k.err);
	if (ioctl(r->ctrl, FIONREAD, &avail) == 0 && avail >= 4) {
		uint32_t keep = r->owed > (uint32_t)avail / 4 ? r->owed - (uint32_t)avail / 4 : 0;

		r->owed -= keep; /* the rest, later */
		ret = relay_drain(r, r->k.err);
		r->owed = keep;
	}
	return ret;
}

static int rs_idle(struct fdr_ctf_sink *k, int h, uint64_t ts)
{
	struct fdr_relay *r = (struct fdr_relay *)k;
	struct relay_stream *s = &r->streams[h];

	return relay_index(r, s, s->next_seq ? s->next_seq - 1 : 0, NULL, ts);
}

static int rs_packet(struct fdr_ctf_sink *k, int h, const void *hdr, size_t hn, const void *body,
		     size_t bn, const struct fdr_ctf_packet *pi)
{
	struct fdr_relay *r = (struct fdr_relay *)k;
	struct relay_stream *s = &r->streams[h];
	unsigned char dh[RELAY_DATA_HDR + 128], *p = dh;
	int ret;

	if (r->broken || hn > 128)
		return relay_fail(r, k->err, r->broken ? ECONNRESET : EINVAL, "data");
	if (hn + bn > UINT32_MAX)
		return relay_fail(r, k->err, EFBIG, "data");
	put64(&p, 0); /* circuit_id */
	put64(&p, s->handle);
	put64(&p, s->next_seq);
	put32(&p, (uint32_t)(hn + bn));
	put32(&p, 0); /* padding: none, packet_size = content_size */
	memcpy(p, hdr, hn);
	ret = relay_send(r, r->data, dh, RELAY_DATA_HDR + hn, body, bn);
	if (ret)
		return relay_fail(r, k->err, -ret, "sending a packet on the data connection");
	s->next_seq++;
	return r->live ? relay_index(r, s, s->next_seq - 1, pi, 0) : 0;
}

/* The metadata: its stream added the first time, then what was not sent yet. */
static int rs_metadata(struct fdr_ctf_sink *k, const void *text, size_t n)
{
	struct fdr_relay *r = (struct fdr_relay *)k;
	unsigned char m[12], *p = m;
	int ret = 0;

	if (r->meta_h < 0) {
		ret = relay_add_stream(r, "metadata", 1, &r->meta_h);
		if (!ret && r->live)
			ret = relay_simple(r, RELAY_STREAMS_SENT, NULL, 0, k->err);
		if (ret)
			return ret;
	}
	if (n < r->meta.len || (r->meta.len && memcmp(text, r->meta.data, r->meta.len))) {
		r->broken = 1;
		return fdr_export_fail(k->err, EPROTO, "ctf metadata",
				       "changed instead of growing (a bug)");
	}
	if (n == r->meta.len)
		return 0;
	put64(&p, r->streams[r->meta_h].handle);
	put32(&p, 0); /* padding */
	/* no reply: the daemon writes it before reading the next command */
	ret = relay_cmd(r, RELAY_SEND_METADATA, m, sizeof(m), (const char *)text + r->meta.len,
			n - r->meta.len, k->err);
	if (!ret && fdr_buf_add(&r->meta, (const char *)text + r->meta.len, n - r->meta.len))
		ret = relay_fail(r, k->err, ENOMEM, "metadata");
	return ret;
}

/* Streams are closed in relay_close_streams(), once all are sent. */
static int rs_close(struct fdr_ctf_sink *k, int h)
{
	(void)k;
	(void)h;
	return 0;
}

/*
 * Wait until the daemon has written every packet of every stream, then close
 * them. DATA_PENDING answers 1 while the daemon's last packet of the stream is
 * before the last we sent (the data connection is read apart from the control).
 */
static int relay_close_streams(struct fdr_relay *r)
{
	struct timespec t0, now;
	int i, ret = relay_simple(r, RELAY_STREAMS_SENT, NULL, 0, r->k.err);

	for (i = 0; i < r->nr_streams && !ret; i++) {
		struct relay_stream *s = &r->streams[i];
		unsigned char m[16], *p = m, rep[4];
		uint64_t last = s->next_seq ? s->next_seq - 1 : UINT64_MAX;
		unsigned wait_us = 100;

		put64(&p, s->handle);
		put64(&p, last);
		clock_gettime(CLOCK_MONOTONIC, &t0); /* the timeout: per stream */
		while (!s->metadata && s->next_seq && !ret) {
			ret = relay_cmd(r, RELAY_DATA_PENDING, m, sizeof(m), NULL, 0, r->k.err);
			if (!ret)
				ret = relay_reply(r, RELAY_DATA_PENDING, rep, sizeof(rep),
						  r->k.err);
			if (ret || get32(rep) == 0)
				break;
			if (get32(rep) != 1)
				return relay_refused(r, RELAY_DATA_PENDING, get32(rep), r->k.err);
			clock_gettime(CLOCK_MONOTONIC, &now);
			if ((now.tv_sec - t0.tv_sec) * 1000 + (now.tv_nsec - t0.tv_nsec) / 1000000 >
			    r->timeout_ms)
				return relay_fail(r, r->k.err, ETIMEDOUT,
						  "waiting for the daemon to write the data");
			usleep(wait_us);
			if (wait_us < 1000)
				wait_us *= 2; /* a reply costs little: keep the overshoot small */
		}
		if (!ret)
			ret = relay_simple(r, RELAY_CLOSE_STREAM, m, sizeof(m), r->k.err);
	}
	return ret;
}

static int relay_create_chunk(struct fdr_relay *r, uint64_t id, const char *name)
{
	size_t nl = name ? strlen(name) + 1 : 0;
	unsigned char m[20], *p = m, rep[4];
	int ret;

	put64(&p, id);
	put64(&p, (uint64_t)time(NULL));
	put32(&p, (uint32_t)nl);
	r->chunk = id;
	ret = relay_cmd(r, RELAY_CREATE_TRACE_CHUNK, m, sizeof(m), name, nl, r->k.err);
	if (!ret)
		ret = relay_reply(r, RELAY_CREATE_TRACE_CHUNK, rep, sizeof(rep), r->k.err);
	if (!ret && get32(rep) != RELAY_OK)
		ret = relay_refused(r, RELAY_CREATE_TRACE_CHUNK, get32(rep), r->k.err);
	return ret;
}

static int relay_close_chunk(struct fdr_relay *r, char *path, size_t path_len)
{
	unsigned char m[21], *p = m, rep[8];
	char got[RELAY_PATH_MAX];
	uint32_t code, plen;
	int ret;

	put64(&p, r->chunk);
	put64(&p, (uint64_t)time(NULL));
	*p++ = 0; /* close command: none */
	put32(&p, 0);
	ret = relay_cmd(r, RELAY_CLOSE_TRACE_CHUNK, m, sizeof(m), NULL, 0, r->k.err);
	if (!ret)
		ret = relay_reply(r, RELAY_CLOSE_TRACE_CHUNK, rep, sizeof(rep), r->k.err);
	if (ret)
		return ret;
	code = get32(rep);
	plen = get32(rep + 4);
	if (plen > sizeof(got) || (code == RELAY_OK && !plen)) {
		r->broken = 1;
		if (r->k.err && !r->k.err->len)
			fdr_buf_printf(r->k.err,
				       "%s: close trace chunk: expected a path of 1-%zu bytes, "
				       "found %" PRIu32,
				       r->where, sizeof(got), plen);
		return -EPROTO;
	}
	if (plen && (ret = relay_reply(r, RELAY_CLOSE_TRACE_CHUNK, got, plen, r->k.err)))
		return ret;
	if (code != RELAY_OK)
		return relay_refused(r, RELAY_CLOSE_TRACE_CHUNK, code, r->k.err);
	got[plen - 1] = '\0';
	if (path && path_len)
		snprintf(path, path_len, "%s", got);
	return 0;
}

static void relay_sink_init(struct fdr_relay *r, struct fdr_buf *err)
{
	r->k = (struct fdr_ctf_sink){
		.open = rs_open,
		.packet = rs_packet,
		.metadata = rs_metadata,
		.close = rs_close,
		.idle = r->live ? rs_idle : NULL,
		.err = err,
	};
	r->nr_streams = 0;
	r->meta_h = -1;
	r->meta.len = 0;
}

/**
 * fdr_relay_send_chunk - send @t as trace chunk @chunk_id named @chunk_name
 *
 * Returns: 0 or a negative errno (message in @err).
 */
int fdr_relay_send_chunk(struct fdr_relay *r, struct fdr_trace *t, uint64_t chunk_id,
			 const char *chunk_name, char *path, size_t path_len,
			 struct fdr_export_stats *st, struct fdr_buf *err)
{
	int ret;

	if (st)
		memset(st, 0, sizeof(*st));
	if (!relay_name_ok(chunk_name, 200, 0)) {
		if (err && !err->len)
			fdr_buf_printf(err,
				       "relay: expected a chunk name of 1-199 bytes of "
				       "[A-Za-z0-9_-], found '%s'",
				       chunk_name ? chunk_name : "");
		return -EINVAL;
	}
	if (r->live)
		return -EINVAL;
	relay_sink_init(r, err);
	ret = relay_create_chunk(r, chunk_id, chunk_name);
	if (!ret)
		ret = fdr_export_ctf_sink_split(t, &r->k, RELAY_THREADS, st);
	if (!ret)
		ret = relay_close_streams(r);
	if (!ret)
		ret = relay_close_chunk(r, path, path_len);
	if (ret)
		r->broken = 1;
	return ret;
}

/* ---- live ------------------------------------------------------------------------------ */

/**
 * fdr_relay_live_start - begin streaming @t (a consuming read of live buffers,
 * borrowed until fdr_relay_live_stop()) on a live session (@rs->live_timer_us
 * set at fdr_relay_open()): the session's one trace chunk is created; streams
 * appear at the first tick
 *
 * Returns: 0 or a negative errno (message in @err).
 */
int fdr_relay_live_start(struct fdr_relay *r, struct fdr_trace *t, struct fdr_buf *err)
{
	int ret;

	if (!r->live || r->w)
		return -EINVAL;
	relay_sink_init(r, err);
	ret = relay_create_chunk(r, 0, NULL);
	if (!ret)
		ret = fdr_ctf_writer_new(t, &r->k, &r->w);
	if (ret)
		r->broken = 1;
	return ret;
}

/**
 * fdr_relay_live_tick - every live timer period: read what was written since
 * the last tick and send it, one packet (and its index) per CPU with records;
 * CPUs 0..@nr_cpus-1 with nothing new are said idle up to @now (the trace
 * clock, taken before this call) so live viewers go on
 *
 * Returns: 0 or a negative errno (message in the @err of fdr_relay_live_start()).
 */
int fdr_relay_live_tick(struct fdr_relay *r, uint32_t nr_cpus, uint64_t now)
{
	int ret;

	if (!r->w)
		return -EINVAL;
	ret = fdr_ctf_writer_read(r->w);
	if (!ret)
		ret = fdr_ctf_writer_tick(r->w, nr_cpus, now);
	if (ret)
		r->broken = 1;
	return ret;
}

/**
 * fdr_relay_live_read - between ticks: read what was written since and send
 * the packets that filled (about 1 MiB, each with its index), so that a writer
 * faster than the ring holds in a live timer period is not outrun; the rest
 * waits for the next tick
 *
 * Returns: 1 if records were read, 0 if none, or a negative errno.
 */
int fdr_relay_live_read(struct fdr_relay *r)
{
	struct fdr_export_stats st;
	uint64_t before;
	int ret;

	if (!r->w)
		return -EINVAL;
	fdr_ctf_writer_stats(r->w, &st);
	before = st.events + st.unknown;
	ret = fdr_ctf_writer_read(r->w);
	if (ret) {
		r->broken = 1;
		return ret;
	}
	fdr_ctf_writer_stats(r->w, &st);
	return st.events + st.unknown != before;
}

/**
 * fdr_relay_live_stop - send what is left, close the streams once the daemon
 * has all of their data, close the chunk
 * @path: (may be NULL) the session's directory as the daemon says
 * @st: the counts of the whole stream (may be NULL)
 *
 * Returns: 0 or a negative errno.
 */
int fdr_relay_live_stop(struct fdr_relay *r, char *path, size_t path_len,
			struct fdr_export_stats *st)
{
	int ret;

	if (!r->w)
		return -EINVAL;
	ret = fdr_ctf_writer_read(r->w);
	if (!ret)
		ret = fdr_ctf_writer_finish(r->w);
	fdr_ctf_writer_free(r->w, st);
	r->w = NULL;
	if (!ret)
		ret = relay_close_streams(r);
	if (!ret)
		ret = relay_close_chunk(r, path, path_len);
	if (ret)
		r->broken = 1;
	return ret;
}
