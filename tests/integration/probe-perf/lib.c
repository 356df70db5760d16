// SPDX-License-Identifier: LGPL-2.1-or-later
/* lib.c - a shared library for the fdr probe tests: exported, static and inlined code */
#include "lib.h"

struct point {
	int x;
	int y;
};

struct box {
	struct point lo, hi;
	const char *label;
};

static int lib_calls;

static inline __attribute__((always_inline)) long span(int a, int b)
{
	return a > b ? a - b : b - a;
}

static __attribute__((noinline)) long box_area(const struct box *bx)
{
	return span(bx->lo.x, bx->hi.x) * span(bx->lo.y, bx->hi.y); /* L:box_area_body */
}

long lib_area(const struct point *a, const struct point *b)
{
	struct box bx = { *a, *b, "box" };

	lib_calls++;
	return box_area(&bx) + lib_calls;
}
