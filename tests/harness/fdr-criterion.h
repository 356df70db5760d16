/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fdr-criterion.h - include in exactly one file of each Criterion test binary:
 * prints the closing "N passed, N failed" line every fdr test binary prints.
 */
#ifndef FDR_CRITERION_H
#define FDR_CRITERION_H

#include <stdio.h>
#include <criterion/criterion.h>
#include <criterion/hooks.h>

ReportHook(POST_ALL)(struct criterion_global_stats *st)
{
	printf("%zu passed, %zu failed\n", st->tests_passed, st->tests_failed + st->tests_crashed);
	fflush(stdout);
}

#endif /* FDR_CRITERION_H */
