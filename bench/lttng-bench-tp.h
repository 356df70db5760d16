/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * lttng-bench-tp.h - the LTTng-UST tracepoint provider of bench/compare-lttng:
 * the same events, with the same field types, as fdr-bench.c defines.
 * (LTTNG_UST_* are the 2.13 names of TRACEPOINT_EVENT, ctf_integer, ...)
 */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER bench

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "./lttng-bench-tp.h"

#if !defined(LTTNG_BENCH_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define LTTNG_BENCH_TP_H

#include <stdint.h>
#include <lttng/tracepoint.h>

LTTNG_UST_TRACEPOINT_EVENT(bench, int3,
	LTTNG_UST_TP_ARGS(int32_t, a, int64_t, b, uint64_t, c),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(int32_t, a, a)
		lttng_ust_field_integer(int64_t, b, b)
		lttng_ust_field_integer(uint64_t, c, c)))

LTTNG_UST_TRACEPOINT_EVENT(bench, str,
	LTTNG_UST_TP_ARGS(int32_t, a, const char *, s),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(int32_t, a, a)
		lttng_ust_field_string(s, s)))

LTTNG_UST_TRACEPOINT_EVENT(bench, off,
	LTTNG_UST_TP_ARGS(int32_t, a, int64_t, b, uint64_t, c),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(int32_t, a, a)
		lttng_ust_field_integer(int64_t, b, b)
		lttng_ust_field_integer(uint64_t, c, c)))

LTTNG_UST_TRACEPOINT_EVENT(bench, nof,
	LTTNG_UST_TP_ARGS(int32_t, a, int64_t, b, uint64_t, c),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(int32_t, a, a)
		lttng_ust_field_integer(int64_t, b, b)
		lttng_ust_field_integer(uint64_t, c, c)))

LTTNG_UST_TRACEPOINT_EVENT(bench, flt,
	LTTNG_UST_TP_ARGS(int32_t, a, int64_t, b, uint64_t, c),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(int32_t, a, a)
		lttng_ust_field_integer(int64_t, b, b)
		lttng_ust_field_integer(uint64_t, c, c)))

#endif /* LTTNG_BENCH_TP_H */

#include <lttng/tracepoint-event.h>
