// SPDX-License-Identifier: LGPL-2.1-or-later
/* probe-agent-lib.c - a shared library with a probed function (probe-agent.sh);
 * built three times: linked into probe-agent-target (PA_LIB_FN=pa_lib_fn), and
 * as two libraries it dlopen()s (PA_LIB_FN=pa_dl_fn), the second with a nop
 * first (PA_LIB_NOP: its first byte differs, at the same offset). */
__attribute__((visibility("default"))) int PA_LIB_FN(int a, const char *s);

__attribute__((noinline, used, visibility("default"))) int PA_LIB_FN(int a, const char *s)
{
#ifdef PA_LIB_NOP
	__asm__ volatile("nop" ::: "memory");
#endif
	__asm__ volatile("" ::: "memory");
	return a + s[0];
}
