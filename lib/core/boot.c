// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * boot.c - libfdr.so's constructor: the agent starts as the library is loaded,
 * so a program linked with libfdr that has no static event still has its
 * dynamic probes armed (event.c, fdr_agent_boot()).
 *
 * Built into the shared library only. A program linked with the static
 * libfdr.a cannot use dynamic probes (libfdr-probe needs libfdr.so), and there a
 * constructor would run in every tool linked statically as well.
 */
#include "core-local.h"

__attribute__((constructor)) static void boot(void)
{
	fdr_agent_boot();
}
