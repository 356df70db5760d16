// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test-registry-b.c - a second file defining events of test-registry.c, as two
 * source files (or a program and its library) of one process would.
 */
#include "test-registry.h"

/* clang-format off */
FDR_EVENT(treg, shared,
	FDR_PROTO(int v),
	FDR_ARGS(v),
	FDR_FIELDS(fdr_field_int(int, v, v)))

/* test-registry.c has an int here */
FDR_EVENT(treg, clash,
	FDR_PROTO(int64_t v),
	FDR_ARGS(v),
	FDR_FIELDS(fdr_field_int(int64_t, v, v)))
/* clang-format on */

struct fdr_event_def *treg_b_shared(void)
{
	return &fdr_ev_treg_shared;
}

void treg_b_write_shared(int v)
{
	fdr_treg_shared(v);
}

struct fdr_event_def *treg_b_clash(void)
{
	return &fdr_ev_treg_clash;
}

void treg_b_write_clash(int64_t v)
{
	fdr_treg_clash(v);
}
