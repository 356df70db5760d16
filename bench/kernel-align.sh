#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# kernel-align.sh BUILD_DIR [N] - kernel_align_us: how well fdr's records and
# the kernel's line up on fdr show's one timeline (docs/design/kernel-timeline.md).
# One thread writes N back-to-back pairs: an fdr marker, then the same text into
# the linked kernel instance's trace_marker. On the merged timeline every pair
# must read fdr, kernel, fdr, kernel...; the figure is the largest violation of
# that order (a kernel record before its pair's fdr one, or after the next
# pair's fdr one), 0 when there is none. Run twice:
#   x86-tsc   both sides print the raw TSC: the violation to the tick, shown in µs
#             (the TSC's rate measured against CLOCK_MONOTONIC); the METRIC
#   mono      fdr's TSC stamps converted to CLOCK_MONOTONIC against the kernel's
#             'mono' clock, at the µs the text shows (the default pairing)
# Also the median distance from an fdr marker to its kernel one (the write(2)).
# Needs root and the kernel's tracefs; "METRIC skipped: REASON" otherwise.
set -eu
B=${1:?usage: kernel-align.sh BUILD_DIR [N]}
N=${2:-20000}
FDR=$B/cli/fdr
APP=$B/tests/ktime-app
TRACEFS=$(awk '$3 == "tracefs" { print $2; exit }' /proc/mounts)
if [ "$(id -u)" != 0 ] || [ -z "$TRACEFS" ] || [ ! -w "$TRACEFS/instances" ]; then
	echo "METRIC skipped: the kernel's tracefs is not usable here (root and a tracefs mount needed)"
	exit 0
fi
T=$(mktemp -d "${TMPDIR:-/tmp}/fdr-kalign.XXXXXX")
export FDR_ROOT=$T/root FDR_SESSION=kalign
trap '"$FDR" destroy >/dev/null 2>&1; rm -rf "$T"' EXIT

# run CLOCK: the merged fdr show of N pairs into $T/show.CLOCK
run() {
	local inst
	"$FDR" start -C "$1" -b 65536 -k sched:sched_process_exit 2>/dev/null
	inst=$(sed -n 's/^instance //p' "$FDR_ROOT/$FDR_SESSION/kernel")
	echo $((N / 8 + 1024)) >"$TRACEFS/instances/$inst/buffer_size_kb"
	"$APP" pairs "$N" "$TRACEFS/instances/$inst/trace_marker" >/dev/null
	"$FDR" show >"$T/show.$1"
	"$FDR" destroy
}

# check FILE SCALE: "violation_in_units median_gap_units pairs" of the pairs
check() {
	awk '
		/tracing_mark_write: pair [0-9]+$/ {
			k = ($1 == "K")
			for (i = 1; i <= NF; i++)
				if ($i ~ /^[0-9.]+:$/) { ts = substr($i, 1, length($i) - 1); break }
			ts = ts + 0
			n = $NF
			if (k) kt[n] = ts; else ft[n] = ts
			if (n > max) max = n
		}
		END {
			v = 0; c = 0
			for (i = 1; i <= max; i++) {
				if (!(i in kt) || !(i in ft)) continue
				c++
				if (ft[i] - kt[i] > v) v = ft[i] - kt[i]
				if ((i + 1) in ft && kt[i] - ft[i + 1] > v) v = kt[i] - ft[i + 1]
				printf "%.9f\n", kt[i] - ft[i] >gaps
			}
			printf "%.9f %d\n", v, c
		}' gaps="$1.gaps" "$1" | {
		read -r v c
		echo "$v $(sort -g "$1.gaps" | awk -v c="$c" 'NR == int((c + 1) / 2) { print; exit }') $c"
	}
}

khz=$("$APP" tsc-khz 200)
run x86-tsc
read -r vt gt ct < <(check "$T/show.x86-tsc")
run mono
read -r vm gm cm < <(check "$T/show.mono")
awk -v v="$vt" -v g="$gt" -v c="$ct" -v k="$khz" 'BEGIN {
	printf "x86-tsc: %d pairs, largest order violation %d ticks = %.3f us, median fdr->kernel %.3f us (TSC %d kHz)\n", c, v, v * 1000 / k, g * 1000 / k, k }'
awk -v v="$vm" -v g="$gm" -v c="$cm" 'BEGIN {
	printf "mono:    %d pairs, largest order violation %.0f us (at the µs the text shows), median fdr->kernel %.0f us\n", c, v * 1e6, g * 1e6 }'
[ "$ct" -gt 0 ] && [ "$cm" -gt 0 ] || { echo "METRIC skipped: no pairs found in fdr show"; exit 0; }
awk -v v="$vt" -v k="$khz" -v m="$vm" 'BEGIN { printf "METRIC kernel_align_us fdr=%.3f mono_us=%.0f\n", v * 1000 / k, m * 1e6 }'
