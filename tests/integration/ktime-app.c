// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * ktime-app.c - an application in a known pattern, for the kernel timeline's
 * tests and bench (tests/integration/ktime.sh, bench/kernel-align.sh):
 *
 *   ktime-app sleep N             N times: event ktime:step(i, 0), a 20 ms sleep,
 *                                 event ktime:step(i, 1); the kernel must show
 *                                 the thread switched away (prev_state=S) and
 *                                 back between the two events
 *   ktime-app fail N              as sleep N, each step answered by event
 *                                 ktime:reply(status=200), then one
 *                                 reply(status=500), a 20 ms sleep, and a
 *                                 last step(N + 1, 0): a snapshot trigger on
 *                                 status >= 500 keeps the steps, not the last
 *   ktime-app pairs N MARKER      N pairs: fdr_marker("pair i"), then "pair i"
 *                                 written to the kernel's trace_marker file
 *                                 MARKER, from the same thread
 *   ktime-app tsc-khz N           the TSC's rate in kHz against CLOCK_MONOTONIC,
 *                                 measured over N ms (x86-64)
 *
 * Prints its thread id on stdout first. The session is $FDR_SESSION of $FDR_ROOT.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <fdr/fdr.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

/* clang-format off */
FDR_EVENT(ktime, step,
	FDR_PROTO(int n, int phase),
	FDR_ARGS(n, phase),
	FDR_FIELDS(
		fdr_field_int(int32_t, n, n)
		fdr_field_int(int32_t, phase, phase)))
FDR_EVENT(ktime, reply,
	FDR_PROTO(int status),
	FDR_ARGS(status),
	FDR_FIELDS(
		fdr_field_int(int32_t, status, status)))
/* clang-format on */

int main(int argc, char **argv)
{
	int i, n = argc > 2 ? atoi(argv[2]) : 0;

	if (argc < 3 || n <= 0 || (strcmp(argv[1], "pairs") == 0 && argc != 4)) {
		fprintf(stderr,
			"usage: ktime-app sleep N | fail N | pairs N MARKER | tsc-khz MS\n");
		return 2;
	}
#if defined(__x86_64__)
	if (strcmp(argv[1], "tsc-khz") == 0) {
		struct timespec a, b, d = { n / 1000, (long)(n % 1000) * 1000000 };
		uint64_t t0, t1;

		clock_gettime(CLOCK_MONOTONIC, &a);
		t0 = __rdtsc();
		nanosleep(&d, NULL);
		clock_gettime(CLOCK_MONOTONIC, &b);
		t1 = __rdtsc();
		printf("%.0f\n", (double)(t1 - t0) * 1e6 /
					 ((double)(b.tv_sec - a.tv_sec) * 1e9 +
					  (double)(b.tv_nsec - a.tv_nsec)));
		return 0;
	}
#endif
	printf("%d\n", gettid());
	fflush(stdout);
	if (strcmp(argv[1], "sleep") == 0 || strcmp(argv[1], "fail") == 0) {
		struct timespec d = { 0, 20 * 1000 * 1000 };
		int fail = strcmp(argv[1], "fail") == 0;

		for (i = 1; i <= n; i++) {
			fdr_ktime_step(i, 0);
			nanosleep(&d, NULL);
			fdr_ktime_step(i, 1);
			if (fail)
				fdr_ktime_reply(200);
		}
		if (fail) {
			fdr_ktime_reply(500);
			nanosleep(&d, NULL);
			fdr_ktime_step(n + 1, 0);
		}
		return 0;
	}
	if (strcmp(argv[1], "pairs") == 0) {
		int fd = open(argv[3], O_WRONLY | O_CLOEXEC);

		if (fd < 0) {
			perror(argv[3]);
			return 1;
		}
		for (i = 1; i <= n; i++) {
			char text[32];
			int len = snprintf(text, sizeof(text), "pair %d", i);

			fdr_marker("pair %d", i);
			if (write(fd, text, (size_t)len) != len) {
				perror(argv[3]);
				return 1;
			}
		}
		close(fd);
		return 0;
	}
	fprintf(stderr, "ktime-app: expected sleep, fail or pairs, found '%s'\n", argv[1]);
	return 2;
}
