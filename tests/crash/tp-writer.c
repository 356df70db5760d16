// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * tp-writer.c - a writer linked with fdr_testpoints (libfdr with named test
 * points), spawned by crash.c. With FDR_FAULT=NAME:N[:stop] in its environment
 * it kills (or stops) itself the Nth time the ring writer passes NAME.
 *
 * usage: fdr-crash-tpwriter WID COUNT SEED CPU_IDX RATE_US READY_FD GO_FD
 *   writes stress:rec records (wid WID, seq 0..COUNT-1, see selfcheck.h) from
 *   one thread, pinned to the CPU_IDX-th allowed CPU (-1: not pinned), sleeping
 *   RATE_US between records. READY_FD (-1: none) gets 'r' once the event records
 *   and 'd' after the last record; GO_FD (-1: none) is read once before writing.
 * Exits 0 after COUNT records, 3 if the event never got enabled.
 */
#define SC_WRITER_ONLY /* linked with fdr_testpoints only */
#include "selfcheck.h"

int main(int argc, char **argv)
{
	uint32_t wid;
	uint64_t count, seed, seq, rate_us;
	int cpu_idx, ready_fd, go_fd;
	char c;

	if (argc != 8) {
		fprintf(stderr, "usage: %s WID COUNT SEED CPU_IDX RATE_US READY_FD GO_FD\n",
			argv[0]);
		return 2;
	}
	wid = (uint32_t)strtoul(argv[1], NULL, 0);
	count = strtoull(argv[2], NULL, 0);
	seed = strtoull(argv[3], NULL, 0);
	cpu_idx = atoi(argv[4]);
	rate_us = strtoull(argv[5], NULL, 0);
	ready_fd = atoi(argv[6]);
	go_fd = atoi(argv[7]);
	alarm(60); /* never outlive the test */
	if (cpu_idx >= 0 && sc_pin(cpu_idx) < 0)
		return 4;
	if (sc_wait_enabled(10000))
		return 3;
	if (ready_fd >= 0 && write(ready_fd, "r", 1) != 1)
		return 5;
	if (go_fd >= 0 && read(go_fd, &c, 1) != 1)
		return 5;
	for (seq = 0; seq < count; seq++) {
		sc_write(seed, wid, seq);
		if (rate_us)
			sc_sleep_us(rate_us);
	}
	if (ready_fd >= 0 && write(ready_fd, "d", 1) != 1)
		return 5;
	return 0;
}
