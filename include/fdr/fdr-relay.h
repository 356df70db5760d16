/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fdr-relay.h - send traces to LTTng's relay daemon (lttng-relayd), the
 * collector LTTng users run: each snapshot becomes one trace chunk of a
 * snapshot session, stored by the daemon as
 *
 *   OUTPUT/HOSTNAME/SESSION-YYYYMMDD-HHMMSS/CHUNK/fdr/{metadata,stream_N}
 *
 * in the CTF 1.8 that fdr_export_ctf() writes. docs/design/relay.md has the
 * protocol as fdr speaks it. The daemon has no authentication and no
 * encryption: use it on a private network or through a tunnel.
 *
 * The calls block on the network (bounded by a timeout); they belong in a tool
 * such as `fdr snapshot save`, never in a traced program.
 */
#ifndef FDR_RELAY_H
#define FDR_RELAY_H

#include <stddef.h>
#include <stdint.h>

#include "fdr/fdr-export.h"

#ifdef __cplusplus
extern "C" {
#endif

#define FDR_RELAY_CTRL_PORT 5342 /* lttng-relayd's defaults */
#define FDR_RELAY_DATA_PORT 5343

/* Where the daemon listens: net://HOST[:CTRL_PORT[:DATA_PORT]] (net6:// or [ADDR] for IPv6). */
struct fdr_relay_url {
	char host[256];
	uint16_t ctrl_port, data_port;
};

/* The session a relay connection opens on the daemon. */
struct fdr_relay_session {
	const char *hostname; /* the host's directory on the daemon: [A-Za-z0-9._-], < 64 bytes */
	const char *name; /* the session's name: the same set, < 200 bytes */
	uint64_t id; /* stable for the session: chunks of one id share a directory */
	uint64_t creation_time; /* seconds since the epoch: the directory's date */
	int snapshot; /* 1: a snapshot session (chunks named by the caller) */
	uint32_t live_timer_us; /* not a snapshot session: live, viewers poll at this period */
	int timeout_ms; /* for each connect, send and reply; 0: 10 s */
};

struct fdr_relay;

/*
 * Parse @url into @u. Returns 0 or -EINVAL (message in @err).
 */
FDR_API int fdr_relay_parse_url(const char *url, struct fdr_relay_url *u, struct fdr_buf *err);

/*
 * Connect to the daemon at @u (control and data connections), agree on the
 * protocol (2.11 or later of major 2; another daemon is refused with
 * -EPROTONOSUPPORT) and create session @rs there.
 * Returns 0 and a new connection in *@out (fdr_relay_close() it), or a negative
 * errno: -ECONNREFUSED, -ETIMEDOUT, -EHOSTUNREACH, -EPROTO (the daemon answered
 * with an error or garbage), -EPROTONOSUPPORT, -EINVAL, -ENOMEM; message in @err.
 */
FDR_API int fdr_relay_open(const struct fdr_relay_url *u, const struct fdr_relay_session *rs,
			   struct fdr_relay **out, struct fdr_buf *err);

/*
 * Send @t, read to its end, as trace chunk @chunk_id named @chunk_name
 * ([A-Za-z0-9_-], no '/' or '.') of the session: one stream per CPU with
 * records plus the metadata, each closed once the daemon has all of its data,
 * then the chunk closed. @path (may be NULL): where the daemon says the chunk
 * is, relative to its output directory.
 * Returns 0 or a negative errno (message in @err); after an error the
 * connection is broken: close it and open another.
 */
FDR_API int fdr_relay_send_chunk(struct fdr_relay *r, struct fdr_trace *t, uint64_t chunk_id,
				 const char *chunk_name, char *path, size_t path_len,
				 struct fdr_export_stats *st, struct fdr_buf *err);

/*
 * Live streaming (a session opened with snapshot 0 and live_timer_us set):
 * start with @t, a consuming read of live buffers (fdr_trace_open_session()
 * with FDR_READ_CONSUME), borrowed until stop; tick every live timer period
 * with the trace clock's time taken before the call (fdr_clock_now()): what
 * was written since is sent, one packet and its index per CPU, and CPUs with
 * nothing new are said idle up to @now; stop sends the rest and closes. The
 * session's directory: @path of stop. Each returns 0 or a negative errno (the
 * message in @err of start); after an error, close the connection.
 */
FDR_API int fdr_relay_live_start(struct fdr_relay *r, struct fdr_trace *t, struct fdr_buf *err);
FDR_API int fdr_relay_live_tick(struct fdr_relay *r, uint32_t nr_cpus, uint64_t now);
/*
 * Between ticks, as often as the caller likes: read what was written and send
 * the packets that filled (about 1 MiB each, with their indexes), so that the
 * ring is drained faster than once a period. Returns 1 (records were read),
 * 0 (none) or a negative errno.
 */
FDR_API int fdr_relay_live_read(struct fdr_relay *r);
FDR_API int fdr_relay_live_stop(struct fdr_relay *r, char *path, size_t path_len,
				struct fdr_export_stats *st);

/* The protocol version agreed with the daemon. */
FDR_API void fdr_relay_version(const struct fdr_relay *r, uint32_t *major, uint32_t *minor);

/* The session's directory, as the daemon named it (relative to its output directory). */
FDR_API const char *fdr_relay_session_path(const struct fdr_relay *r);

/* Close both connections and free @r (NULL: nothing). */
FDR_API void fdr_relay_close(struct fdr_relay *r);

#ifdef __cplusplus
}
#endif

#endif /* FDR_RELAY_H */
