// SPDX-License-Identifier: LGPL-2.1-or-later
/* probe-agent-lib.c - a shared library with a probed function (probe-agent.sh);
 * built twice: linked into probe-agent-target (PA_LIB_FN=pa_lib_fn), and as a
 * library it dlopen()s (PA_LIB_FN=pa_dl_fn). */
__attribute__((visibility("default"))) int PA_LIB_FN(int a, const char *s);

__attribute__((noinline, used, visibility("default"))) int PA_LIB_FN(int a, const char *s)
{
	__asm__ volatile("" ::: "memory");
	return a + s[0];
}
