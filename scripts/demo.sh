#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# demo.sh - build fdr, record the demo service with it, and show the trace.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh ca-certificates gcc libc6-dev cmake ninja-build pkg-config
cmake -S . -B build -G Ninja -DFDR_BUILD_TESTS=OFF -DFDR_BUILD_BENCH=OFF >/dev/null
ninja -C build >/dev/null
fdr=build/cli/fdr
export FDR_SESSION=${FDR_SESSION:-demo}
"$fdr" destroy 2>/dev/null || true

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
echo "The session '$FDR_SESSION' is still there: try"
echo "  FDR_SESSION=$FDR_SESSION $fdr ls events/demo"
echo "  FDR_SESSION=$FDR_SESSION $fdr cat events/demo/request/format"
echo "  FDR_SESSION=$FDR_SESSION $fdr destroy"
