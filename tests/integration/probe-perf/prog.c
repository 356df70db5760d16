// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * prog.c - the program tests/integration/probe-perf.sh probes with fdr probe
 * and perf probe (built -O0 -g and -O2 -g): structures, pointers to them,
 * arrays, a union, bitfields, an enum, globals, static, inlined and exported
 * functions, and a call into a shared library (lib.c). It prints the values
 * the end-to-end case records, one line per call of record_point(); with a
 * second argument it first waits for a line on stdin.
 * Comments "L:NAME" mark the lines the test probes by number.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib.h"

enum color { RED, GREEN = 5, BLUE };

struct point {
	int x;
	int y;
};

union word {
	unsigned int u;
	float f;
	unsigned char b[4];
};

struct flags {
	unsigned int ready : 1;
	unsigned int mode : 3;
	int level : 5;
};

struct item {
	unsigned long id;
	long size;
	const char *name;
	char tag[8];
	struct point pos;
	struct point *ref;
	short hist[4];
	unsigned char kind;
	signed char delta;
	bool live;
	enum color color;
	union word w;
	double ratio;
	struct item *next;
	struct point corners[2];
};

int total_hits;
static long last_size = -1;
struct point origin = { 1, 2 };
const char *banner = "fdr";

static __attribute__((noinline)) int scale(int v, int by)
{
	int r = v * by; /* L:scale_body */

	total_hits += r;
	return r;
}

static inline __attribute__((always_inline)) long clamp(long v, long lo, long hi)
{
	if (v < lo) /* L:clamp_body */
		return lo;
	return v > hi ? hi : v;
}

__attribute__((noinline)) long record_point(struct item *it, int n, const struct flags *fl)
{
	long t = it->size * n; /* L:rp_first */

	if (it->next) /* L:rp_next */
		t += it->next->size;
	t = clamp(t, 0, 1000000);
	last_size = t;
	printf("record_point id=%lu size=%ld n=%d x=%d y=%d name=%s tag=%s h2=%d mode=%u\n", it->id,
	       it->size, n, it->pos.x, it->ref->y, it->name, it->tag, it->hist[2],
	       fl->mode); /* L:rp_print */
	return t + scale(it->pos.x, n) + clamp(n, 1, 3);
}

__attribute__((noinline)) unsigned long long count_byte(const unsigned char *buf, size_t len,
							char c)
{
	unsigned long long s = 0;

	for (size_t i = 0; i < len; i++)
		s += buf[i] == (unsigned char)c; /* L:cb_loop */
	return s;
}

__attribute__((noinline)) double mix(union word w, enum color col, bool on, float f,
				     unsigned short us, long long ll, char ch)
{
	return (on ? w.f : (float)w.u) + col + f + us + (double)ll + ch;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 1;
	struct point p = { 3, 4 };
	struct flags fl = { 1, 5, -3 };
	struct item second = { 2,  20,	 "second", "t2",  { 5, 6 }, &p,	  { 1, 2, 3, 4 },	 1,
			       -2, true, BLUE,	   { 7 }, 0.5,	    NULL, { { 1, 1 }, { 2, 2 } } };
	struct item first = { 1, 10,	"first", "t1",	{ 7, 8 }, &p,	   { 9, 8, 7, 6 },	  0,
			      3, false, GREEN,	 { 9 }, 1.5,	  &second, { { 3, 3 }, { 4, 4 } } };
	long v = 0;

	if (argc > 2) { /* "wait": a line on stdin first (probes added while it runs) */
		char go[16];

		printf("waiting\n");
		fflush(stdout);
		if (!fgets(go, sizeof(go), stdin))
			return 1;
	}
	for (int r = 0; r < rounds; r++) {
		first.id = 100 + (unsigned long)r;
		first.size = 10 + r;
		v += record_point(&first, argc + r, &fl); /* L:main_call */
		v += (long)count_byte((const unsigned char *)"hello", 5, 'l');
		v += (long)mix(first.w, first.color, first.live, 1.5f, 7, 8, 'c');
		v += lib_area(&first.corners[0], &first.corners[1]);
		v += clamp(v, -5, 5);
	}
	printf("%ld %d %s %d\n", v, total_hits, banner, origin.x);
	return 0;
}
