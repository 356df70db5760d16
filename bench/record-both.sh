#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# record-both.sh BUILD_DIR [MS] - record_both_mev_s: `fdr record -k 'sched:*'`
# (docs/design/kernel-timeline.md) with one application writer at full speed
# and a scheduling-heavy load, to a file on disk. The writer (fdr-bench rate MS,
# bench:int3 on CPU 0, the writer of record_mev_s) runs for MS milliseconds
# (default 2000) while LOAD_PAIRS (default 2) pairs of processes ping-pong one
# byte through pipes, each round trip two context switches and two wakeups,
# which the kernel instance records with every other sched:* event. Both sides
# have buffers of 4 MiB per CPU (-b 4096), discard mode, fdr record -r 10.
#
# The figure is the writer's events/s of the first try that lost no
# application record (a try that lost some is run again with the writer paced
# at 90 % of the rate the recorder kept, at most 6 tries, as record_mev_s
# does); with it, the kernel's side of the same try: the records in the file
# (fdr report's lines of the kernel instance), the kernel's own loss count
# (overrun + dropped, as fdr record prints it) and the load's switches.
# No reference tool runs: trace-cmd records the kernel alone and LTTng would
# need its kernel modules.
#
#   METRIC record_both_mev_s fdr=X kernel_records=K kernel_lost=L app_lost=0
#
# Needs root, the kernel's tracefs and fdr-bench (-DFDR_BUILD_BENCH=ON);
# "METRIC record_both_mev_s skipped: REASON" otherwise.
set -eu
B=${1:?usage: record-both.sh BUILD_DIR [MS]}
MS=${2:-2000}
PAIRS=${LOAD_PAIRS:-2}
FDR=$B/cli/fdr
BENCH=$B/bench/fdr-bench
skip() {
	echo "METRIC record_both_mev_s skipped: $*"
	exit 0
}
TRACEFS=$(awk '$3 == "tracefs" { print $2; exit }' /proc/mounts)
[ "$(id -u)" = 0 ] && [ -n "$TRACEFS" ] && [ -w "$TRACEFS/instances" ] ||
	skip "the kernel's tracefs is not usable here (root and a tracefs mount needed)"
[ -x "$BENCH" ] || skip "$BENCH not built (configure with -DFDR_BUILD_BENCH=ON)"
command -v python3 >/dev/null || skip "python3 (the scheduling load) is not installed"
T=$(mktemp -d "${TMPDIR:-/tmp}/fdr-recboth.XXXXXX")
DIR=${BENCH_RECORD_DIR:-$T}
export FDR_ROOT=$T/root
mkdir -m 700 "$FDR_ROOT"
LOADS=()
cleanup() {
	local p
	for p in "${LOADS[@]}"; do kill "$p" 2>/dev/null || :; done
	wait 2>/dev/null || :
	rm -rf "$T" "$DIR/both.dat"
}
trap cleanup EXIT

# the load: PAIRS ping-pong pairs for about MS ms; prints the round trips to $T/load.N
load() {
	local i
	for i in $(seq "$PAIRS"); do
		python3 - "$MS" >"$T/load.$i" <<'EOF' &
import os, sys, time
r1, w1 = os.pipe()
r2, w2 = os.pipe()
end = time.monotonic() + int(sys.argv[1]) / 1000 + 0.3
if os.fork() == 0:
    os.close(w1)  # the parent's close of w1 is then the child's end of file
    os.close(r2)
    while os.read(r1, 1):
        os.write(w2, b"x")
    os._exit(0)
os.close(r1)
os.close(w2)
n = 0
while time.monotonic() < end:
    os.write(w1, b"x")
    os.read(r2, 1)
    n += 1
os.close(w1)
print(n)
EOF
		LOADS+=($!)
	done
}

# try PACE: one recording; prints "WRITTEN RATE APP_RECORDED APP_LOST KREC KLOST SWITCHES"
seq=0
try() {
	local w n l krec klost sw
	seq=$((seq + 1))
	LOADS=()
	load
	sleep 0.1
	w=$(BENCH_PACE=$1 "$FDR" -s "recboth-$seq" record -r 10 -k 'sched:*' -e bench:int3 -b 4096 \
		-m discard -o "$DIR/both.dat" -- "$BENCH" rate "$MS" 2>"$T/record.err") ||
		{ sed 's/^/# /' "$T/record.err" >&2; return 1; }
	wait "${LOADS[@]}" 2>/dev/null || :
	"$FDR" -s "recboth-$seq" destroy >/dev/null 2>&1 || :
	read -r n l < <(sed -nE 's/^fdr record: ([0-9]+) events, ([0-9]+) lost.*/\1 \2/p' "$T/record.err")
	klost=$(sed -nE 's/^fdr record: kernel instance .*, ([0-9]+) lost \(.*/\1/p' "$T/record.err")
	krec=$("$FDR" report "$DIR/both.dat" | grep -c '^fdr-recboth-' || :)
	sw=$(cat "$T"/load.* | awk '{ s += $1 } END { print s * 2 }')
	rm -f "$DIR/both.dat"
	[ -n "$w" ] && [ -n "${n:-}" ] && [ -n "$klost" ] ||
		{ sed 's/^/# /' "$T/record.err" >&2; return 1; }
	[ $((n + l)) = "${w%% *}" ] ||
		{ echo "# fdr record: $n recorded + $l lost != ${w%% *} written" >&2; return 1; }
	echo "$w $n $l $krec $klost $sw"
}

pace=0
for i in 1 2 3 4 5 6; do
	v=$(try "$pace") || skip "fdr record -k failed"
	read -r w rate n l krec klost sw <<<"$v"
	echo "try $i (pace $pace/s): wrote $w at $rate/s, recorded $n, lost $l; kernel: $krec records in the file, $klost lost; load: $sw switches" >&2
	if [ "$l" = 0 ]; then
		awk -v r="$rate" -v k="$krec" -v kl="$klost" 'BEGIN {
			printf "METRIC record_both_mev_s fdr=%.2f kernel_records=%d kernel_lost=%d app_lost=0\n", r / 1e6, k, kl }'
		exit 0
	fi
	pace=$(awk -v n="$n" -v ms="$MS" 'BEGIN { printf("%.0f", n / ms * 1000 * 0.9) }')
done
skip "every try lost application records, even paced (last: $l lost at $rate/s)"
