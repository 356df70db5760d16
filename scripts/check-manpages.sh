#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# check-manpages.sh [SRCDIR] - every public function has a man page.
#
# Lists the functions the installed headers (include/fdr/*.h, all of them, so a
# declaration may move between headers) make public:
#   - declarations that start with FDR_API or extern;
#   - static inline functions named fdr_* (names that start with fdr__ are the
#     headers' private helpers of the FDR_EVENT macros, and a name pasted with ##
#     is a template, not a function);
# and fails, naming each one, when no docs/man/*.3 page lists it in its NAME
# section (the list before "\-"), as libtracefs's check-manpages.sh does.
# -v: also print the functions and the page that names each one.
set -euo pipefail
verbose=0
if [ "${1:-}" = -v ]; then
	verbose=1
	shift
fi
src=${1:-$(dirname "$0")/..}
hdrs=("$src"/include/fdr/*.h)
pages=("$src"/docs/man/*.3)
[ -e "${hdrs[0]}" ] || { echo "check-manpages: no headers in $src/include/fdr" >&2; exit 2; }
[ -e "${pages[0]}" ] || { echo "check-manpages: no pages in $src/docs/man" >&2; exit 2; }

# Declarations: comments removed, then each FDR_API/extern/static inline
# declaration joined up to its "(" (its name may follow on the next line), the
# attributes dropped, and the word before the "(" kept.
funcs=$(for h in "${hdrs[@]}"; do
	sed -e ':a' -e 's|/\*.*\*/||g' -e '/\/\*/{N' -e 'ba' -e '}' -e 's|//.*||' "$h"
done | awk '
	/^[ \t]*(FDR_API|extern|static inline)[ \t]/ && !/^[ \t]*extern "C"/ { d = ""; on = 1 }
	on { d = d " " $0; if (index($0, "(")) { print d; on = 0 } }' |
	grep -v '##' |
	sed -E 's/__attribute__[[:space:]]*\(\(.*//; s/[[:space:]]*\(.*//; s/.*[^A-Za-z0-9_]//' |
	grep -E '^fdr_' | grep -v -E '^fdr__' | sort -u)
[ -n "$funcs" ] || { echo "check-manpages: found no public function in ${hdrs[*]}" >&2; exit 2; }

# Every identifier of each page's NAME section, as "NAME PAGE".
named=$(for p in "${pages[@]}"; do
	sed -n '/^\.SH NAME/,/^\.SH /{/^\.SH/d;p}' "$p" | sed 's/\\-.*//' |
		grep -oE '[A-Za-z_][A-Za-z0-9_]*' | sed "s|\$| $(basename "$p")|"
done)

missing=()
n=0
for f in $funcs; do
	n=$((n + 1))
	page=$(awk -v f="$f" '$1 == f { print $2; exit }' <<<"$named")
	if [ -z "$page" ]; then
		missing+=("$f")
	elif [ $verbose = 1 ]; then
		echo "$f $page"
	fi
done
if [ ${#missing[@]} -gt 0 ]; then
	echo "check-manpages: ${#missing[@]} of $n public functions are in no man page's NAME section:" >&2
	printf '  %s\n' "${missing[@]}" >&2
	echo "Add each to the NAME, SYNOPSIS and DESCRIPTION of a docs/man/*.3 page." >&2
	exit 1
fi
echo "check-manpages: all $n public functions of include/fdr/*.h have a man page"
