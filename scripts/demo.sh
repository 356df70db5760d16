#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# demo.sh - build fdr, record the demo service with it, and show the trace.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh ca-certificates gcc libc6-dev cmake ninja-build pkg-config
cmake -S . -B build -G Ninja -DFDR_BUILD_TESTS=OFF -DFDR_BUILD_BENCH=OFF >/dev/null
ninja -C build >/dev/null
fdr=build/cli/fdr
# A session of its own: never one that exists (it may hold someone's recording).
# FDR_SESSION names it; otherwise the first of demo, demo-2, demo-3... not in use.
if [ -n "${FDR_SESSION:-}" ]; then
	if "$fdr" stat >/dev/null 2>&1; then
		echo "demo.sh: a session '$FDR_SESSION' exists already; it is left alone." >&2
		echo "demo.sh: name another (FDR_SESSION=NAME), or remove it: fdr -s $FDR_SESSION destroy" >&2
		exit 1
	fi
else
	FDR_SESSION=demo
	n=1
	while "$fdr" -s "$FDR_SESSION" stat >/dev/null 2>&1; do
		n=$((n + 1))
		FDR_SESSION=demo-$n
	done
fi
export FDR_SESSION

echo "== fdr start -b 256 -e 'demo:*'   (before the program exists: the rule waits)"
"$fdr" start -b 256 -e 'demo:*'
echo "== a trigger: freeze the buffers at the first failure (demo:request must exist first)"
build/demo/fdr-demo -n 1 -q 2>/dev/null
"$fdr" write trace
"$fdr" append events/demo/request/trigger 'snapshot:1 if status >= 500'
"$fdr" cat events/demo/request/trigger
echo "== fdr-demo: 1000 requests, about 1 in 100 fails with status 500"
build/demo/fdr-demo
# Outputs go to files before head: "fdr ... | head" under pipefail would fail
# whenever head exits before fdr has written its last line (SIGPIPE).
out=$(mktemp)
trap 'rm -f "$out"' EXIT
echo "== fdr show (the first lines)"
"$fdr" show >"$out"
head -24 "$out"
echo "   ..."
echo "== the failures, with the events just before each one"
grep -B3 'status=500' "$out" | head -24 || true
echo "== fdr snapshot show: what was recorded up to the first failure, frozen while tracing went on"
"$fdr" snapshot show >"$out"
tail -6 "$out"
echo "== fdr stat"
"$fdr" stat >"$out"
head -12 "$out"
echo
echo "The session '$FDR_SESSION' is still there. To use fdr from this shell:"
echo "  export PATH=$PWD/build/cli:\$PATH FDR_SESSION=$FDR_SESSION"
echo "  fdr ls events/demo"
echo "  fdr cat events/demo/request/format"
echo "  fdr destroy                     # removes the session '$FDR_SESSION'"
echo "(or install it: cmake --install build --prefix ~/.local, see the README)"
