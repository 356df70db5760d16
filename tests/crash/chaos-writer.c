// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * chaos-writer.c - a traced program for the shared-memory chaos test (chaos.c).
 *
 * usage: fdr-chaos-writer COUNTER_FILE WID COUNT RATE_US
 *   (session from $FDR_DIR) writes COUNT chaos:tick events (0 = until killed),
 *   RATE_US apart, and after each one stores how many it has written in the
 *   WID-th 64-bit word of COUNTER_FILE: the test reads that to see it progress
 *   whatever fdr does with the session's memory. Exits 0 after COUNT events.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "fdr/fdr.h"

/* clang-format off */
FDR_EVENT(chaos, tick,
	FDR_PROTO(uint32_t wid, uint64_t seq, const char *msg),
	FDR_ARGS(wid, seq, msg),
	FDR_FIELDS(
		fdr_field_int(uint32_t, wid, wid)
		fdr_field_int(uint64_t, seq, seq)
		fdr_field_string(msg, msg)))
/* clang-format on */

int main(int argc, char **argv)
{
	static const char *const msgs[] = { "", "x", "a somewhat longer message for the ring" };
	uint64_t count, seq, *counter;
	uint32_t wid;
	long rate_us;
	int fd;

	if (argc != 5) {
		fprintf(stderr, "usage: %s COUNTER_FILE WID COUNT RATE_US\n", argv[0]);
		return 2;
	}
	wid = (uint32_t)strtoul(argv[2], NULL, 0);
	count = strtoull(argv[3], NULL, 0);
	rate_us = strtol(argv[4], NULL, 0);
	alarm(count ? 60 : 900); /* never outlive the test */
	fd = open(argv[1], O_RDWR | O_CLOEXEC);
	if (fd < 0 || wid >= 64)
		return 3;
	counter = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (counter == MAP_FAILED)
		return 3;
	for (seq = 0; !count || seq < count; seq++) {
		fdr_chaos_tick(wid, seq, msgs[seq % 3]);
		__atomic_store_n(&counter[wid], seq + 1, __ATOMIC_RELEASE);
		if (rate_us > 0) {
			struct timespec d = { 0, rate_us * 1000 };

			nanosleep(&d, NULL);
		}
	}
	return 0;
}
