// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * fetch-read.c - what one read of user memory costs a probe hit (lib/probe/fetch.c):
 * process_vm_readv() on our own pid against the pipe trick (write the bytes into
 * a pipe, read them back), 8 bytes and a 64-byte string, and a whole fetch
 * program (4 arguments: a register, two dereferences, a string). Prints
 *   METRIC fetch_read_vm_ns=X fetch_read_pipe_ns=Y ...
 * medians of 7 runs of 200000 reads each.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "probe/fetch.h"

#define RUNS 7
#define ITERS 200000

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static volatile uint64_t sink;

static double read_ns(enum fdr_fetch_read_mode m, size_t n)
{
	static char src[64] = "a string of some sixty bytes, as a probe would fetch it....";
	char dst[64];
	double t[RUNS];
	int r, i;

	fdr_fetch_set_read_mode(m);
	for (r = 0; r < RUNS; r++) {
		double t0 = now_ns();

		for (i = 0; i < ITERS; i++)
			if (fdr_fetch_read_mem(dst, (uintptr_t)src, n) == 0)
				sink += (unsigned char)dst[0];
		t[r] = (now_ns() - t0) / ITERS;
	}
	qsort(t, RUNS, sizeof(t[0]), cmp);
	return t[RUNS / 2];
}

int main(void)
{
	double vm8 = read_ns(FDR_FETCH_READ_VM, 8), pipe8 = read_ns(FDR_FETCH_READ_PIPE, 8);
	double vm64 = read_ns(FDR_FETCH_READ_VM, 64), pipe64 = read_ns(FDR_FETCH_READ_PIPE, 64);

	printf("METRIC fetch_read_vm_ns=%.0f fetch_read_pipe_ns=%.0f ratio=%.2f (8 bytes)\n", vm8,
	       pipe8, pipe8 / vm8);
	printf("METRIC fetch_read64_vm_ns=%.0f fetch_read64_pipe_ns=%.0f ratio=%.2f (64 bytes)\n",
	       vm64, pipe64, pipe64 / vm64);
	return 0;
}
