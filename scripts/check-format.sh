#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# check-format.sh [SRCDIR] - the C sources and headers are as clang-format leaves them.
#
# Runs clang-format 14 (Debian's clang-format-14; other versions format some
# constructs differently, so they are not used) with the repository's .clang-format
# in --dry-run -Werror mode over every *.c and *.h file git tracks (every such file
# outside build directories when SRCDIR is not a git checkout), and fails listing
# each file that would change, with the command that fixes it.
# Exit status: 0 all formatted, 1 some differ, 77 no clang-format 14 (CTest: skipped).
#
# Kept out of the check, each for its reason (remove a line to check that file):
#   bench/lttng-bench-tp.h  LTTng-UST's tracepoint macros, laid out as LTTng documents
#                           them; clang-format would flatten the nesting
#   include/fdr/fdr.h       its FDR_EVENT macros align their backslashes at column 100;
#                           clang-format would move them on 150 lines (a decision for
#                           the header's owner, not for this check)
set -uo pipefail
src=${1:-$(dirname "$0")/..}
cd "$src" || exit 2
excluded=(bench/lttng-bench-tp.h include/fdr/fdr.h)

cf=
for c in clang-format-14 clang-format; do
	if command -v "$c" >/dev/null 2>&1 && "$c" --version 2>/dev/null | grep -q 'version 14\.'; then
		cf=$c
		break
	fi
done
if [ -z "$cf" ]; then
	echo "check-format: clang-format 14 not found (apt-get install clang-format-14); skipped" >&2
	exit 77
fi
[ -f .clang-format ] || { echo "check-format: no .clang-format in $(pwd)" >&2; exit 2; }

if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	mapfile -t files < <(git ls-files -- '*.c' '*.h')
else
	mapfile -t files < <(find . -name '*.[ch]' -not -path './build*' -not -path './.git/*' |
		sed 's|^\./||' | sort)
fi
checked=()
for f in "${files[@]}"; do
	[ -f "$f" ] || continue # deleted in the work tree, not yet in git's index
	skip=0
	for x in "${excluded[@]}"; do
		[ "$f" = "$x" ] && skip=1
	done
	[ $skip = 1 ] || checked+=("$f")
done
n=${#checked[@]}
# one run for all files; each difference is reported as "FILE:LINE:COL: error: ..."
out=$("$cf" --style=file --dry-run -Werror "${checked[@]}" 2>&1)
rc=$?
mapfile -t bad < <(grep -oE '^[^:]+:[0-9]+:[0-9]+: error' <<<"$out" | cut -d: -f1 | sort -u)
if [ $rc -ne 0 ] && [ ${#bad[@]} -eq 0 ]; then
	echo "check-format: $cf failed:" >&2
	echo "$out" | head -20 >&2
	exit 2
fi
if [ ${#bad[@]} -gt 0 ]; then
	echo "check-format: ${#bad[@]} of $n files are not as $cf formats them:" >&2
	printf '  %s\n' "${bad[@]}" >&2
	echo "Fix: $cf -i FILE (and check that the diff is only layout), or see it with" >&2
	echo "     $cf --dry-run FILE" >&2
	exit 1
fi
echo "check-format: all $n C files are formatted ($cf; ${#excluded[@]} kept out, see the script)"
