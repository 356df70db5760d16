/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lib.h - the shared library of the fdr probe tests (lib.c) */
#ifndef PROBE_PERF_LIB_H
#define PROBE_PERF_LIB_H
struct point;
long lib_area(const struct point *a, const struct point *b);
#endif
