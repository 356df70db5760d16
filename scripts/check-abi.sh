#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# check-abi.sh [--update] SRCDIR LIBRARY.so... - the shared libraries export
# what their committed lists say.
#
# For each built library (libfdr.so, libfdr-read.so, libfdr-ctl.so,
# libfdr-probe.so where it is built), the dynamic symbols it defines
# (nm -D --defined-only), names only with their version node ("fdr_foo@@FDR_0":
# a symbol moved between FDR_0 and FDR_INTERNAL_0 is a change too), sorted, are
# compared with SRCDIR/lib/<library>.symbols (libfdr.so.0.1.0 -> lib/libfdr.symbols),
# and the check fails naming each symbol added or removed. An ABI change is then
# made on purpose and seen in review: the commit that adds, removes or moves an
# exported function updates the list, with
#     scripts/check-abi.sh --update SRCDIR BUILD/lib/libfdr.so ...
# (or by hand). The lists do not depend on the compiler: the version scripts
# (lib/*.map) export names, not what a compiler happened to emit.
# The struct layouts of include/fdr/fdr-abi.h are checked by its _Static_asserts
# at every build.
set -euo pipefail
update=0
if [ "${1:-}" = --update ]; then
	update=1
	shift
fi
src=${1:?usage: check-abi.sh [--update] SRCDIR LIBRARY.so...}
shift
[ $# -gt 0 ] || { echo "check-abi: no library named" >&2; exit 2; }
command -v nm >/dev/null || { echo "check-abi: nm (binutils) is not installed" >&2; exit 2; }

bad=0
for so in "$@"; do
	base=$(basename "$so")
	name=${base%%.so*}
	list=$src/lib/$name.symbols
	[ -f "$so" ] || { echo "check-abi: $so: no such library (build it first)" >&2; exit 2; }
	# "ADDRESS TYPE NAME" (a version node: "0 A FDR_0"): the name, sorted bytewise
	syms=$(nm -D --defined-only "$so" | awk 'NF >= 2 { print $NF }' | LC_ALL=C sort -u)
	[ -n "$syms" ] || { echo "check-abi: $so exports nothing (is it a shared library?)" >&2; exit 2; }
	if [ $update = 1 ]; then
		printf '%s\n' "$syms" >"$list"
		echo "check-abi: wrote $list ($(wc -l <"$list") symbols)"
		continue
	fi
	if [ ! -f "$list" ]; then
		echo "check-abi: $base: no list $list; make it with: $0 --update $src $so" >&2
		bad=1
		continue
	fi
	added=$(LC_ALL=C comm -13 <(LC_ALL=C sort -u "$list") <(printf '%s\n' "$syms"))
	removed=$(LC_ALL=C comm -23 <(LC_ALL=C sort -u "$list") <(printf '%s\n' "$syms"))
	if [ -n "$added$removed" ]; then
		echo "check-abi: $base exports other symbols than lib/$name.symbols lists:" >&2
		[ -z "$added" ] || sed 's/^/  added:   /' <<<"$added" >&2
		[ -z "$removed" ] || sed 's/^/  removed: /' <<<"$removed" >&2
		bad=1
	else
		echo "check-abi: $base: $(wc -l <<<"$syms") symbols, as lib/$name.symbols lists"
	fi
done
if [ $bad = 1 ]; then
	echo "check-abi: if the change is meant, update the lists in the same commit:" >&2
	echo "  $0 --update $src $*" >&2
	exit 1
fi
