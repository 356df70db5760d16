/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-registry.h - the second translation unit of test-registry (test-registry-b.c). */
#ifndef FDR_TEST_REGISTRY_H
#define FDR_TEST_REGISTRY_H

#include "fdr/fdr.h"

/* treg:shared with the same layout as in test-registry.c */
struct fdr_event_def *treg_b_shared(void);
void treg_b_write_shared(int v);
/* treg:clash with another layout than in test-registry.c */
struct fdr_event_def *treg_b_clash(void);
void treg_b_write_clash(int64_t v);

#endif /* FDR_TEST_REGISTRY_H */
