// SPDX-License-Identifier: LGPL-2.1-or-later
/* lttng-bench-tp.c - the probes of lttng-bench-tp.h, built into lttng-bench. */
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#define LTTNG_UST_TRACEPOINT_DEFINE
#include "lttng-bench-tp.h"
