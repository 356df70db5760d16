// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * uprobe-target.c - a program whose functions test-uprobe resolves by name
 * (built twice: PIE and non-PIE). Never run by the tests, only read as ELF.
 */
#include <stdio.h>

long uprobe_target_fn(long x, const char *s);
long uprobe_target_ifunc(long x);

__attribute__((noinline, used)) long uprobe_target_fn(long x, const char *s)
{
	return x + (s ? s[0] : 0);
}

__attribute__((noinline, used)) static long uprobe_target_static(long x)
{
	return x * 3;
}

static long target_impl(long x)
{
	return x + 1;
}

/* a GNU indirect function: which implementation runs is chosen at load time */
__attribute__((used)) static long (*target_resolver(void))(long)
{
	return target_impl;
}
long uprobe_target_ifunc(long x) __attribute__((ifunc("target_resolver")));

int main(int argc, char **argv)
{
	(void)argv;
	printf("%ld\n", uprobe_target_fn(argc, "x") + uprobe_target_static(argc) +
				uprobe_target_ifunc(argc));
	return 0;
}
