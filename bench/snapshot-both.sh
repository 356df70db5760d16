#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# snapshot-both.sh BUILD_DIR [N] - snapshot_both_us: how long after fdr's
# snapshot the linked kernel instance is frozen (docs/design/kernel-timeline.md,
# Snapshots of both). A session linked to a kernel instance recording
# sched:sched_switch and sched:sched_wakeup (fdr start -k), its saver
# (fdr snapshot save --format F) running, and N times an application
# (tests/ktime-app fail 2) whose trigger 'snapshot if status >= 500' takes the
# snapshot from the writing thread. The saver measures, for each snapshot, the
# lease clock from the start of fdr's swap (the ring header's snap_lock_ns) to
# the return of its write of 0 to the kernel instance's tracing_on, and prints
# the median; and how long the kernel instance stayed off while its records
# were taken (the median of the N). Run for --format dat (raw pages spliced)
# and text (the kernel's own trace text):
#
#   METRIC snapshot_both_us fdr=X kernel_off_ms=Y n=N        (dat)
#   METRIC snapshot_both_text_us fdr=X kernel_off_ms=Y n=N   (text)
#
# No reference tool: a kernel with CONFIG_TRACER_SNAPSHOT takes its own
# snapshot of an instance, which fdr does not use yet (see the design note).
# Needs root and the kernel's tracefs; "METRIC snapshot_both_us skipped:
# REASON" otherwise.
set -eu
B=${1:?usage: snapshot-both.sh BUILD_DIR [N]}
N=${2:-21}
FDR=$B/cli/fdr
APP=$B/tests/ktime-app
skip() {
	echo "METRIC snapshot_both_us skipped: $*"
	exit 0
}
TRACEFS=$(awk '$3 == "tracefs" { print $2; exit }' /proc/mounts)
[ "$(id -u)" = 0 ] && [ -n "$TRACEFS" ] && [ -w "$TRACEFS/instances" ] ||
	skip "the kernel's tracefs is not usable here (root and a tracefs mount needed)"
[ -x "$APP" ] || skip "$APP not built (configure with tests on)"
T=$(mktemp -d "${TMPDIR:-/tmp}/fdr-snapboth.XXXXXX")
export FDR_ROOT=$T/root FDR_SESSION=snapboth
mkdir -m 700 "$FDR_ROOT"
SAVER=
cleanup() {
	[ -n "$SAVER" ] && kill "$SAVER" 2>/dev/null && wait "$SAVER" 2>/dev/null
	"$FDR" destroy >/dev/null 2>&1 || :
	rm -rf "$T"
}
trap cleanup EXIT

median() {
	sort -g | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)]; else print "nan" }'
}

"$FDR" start -e 'ktime:*' -k 'sched:sched_switch,sched:sched_wakeup' >/dev/null 2>&1 ||
	skip "fdr start -k failed"
"$APP" sleep 1 >/dev/null # registers ktime:reply
"$FDR" write events/ktime/reply/trigger 'snapshot if status >= 500'

# one FORMAT METRIC_NAME: N snapshots saved as FORMAT
one() {
	local i lag off
	"$FDR" snapshot save --format "$1" "$T/out-$1" >"$T/out" 2>"$T/err" &
	SAVER=$!
	for i in $(seq 50); do
		grep -q 'saving every snapshot' "$T/err" && break
		sleep 0.1
	done
	for i in $(seq "$N"); do
		"$APP" fail 2 >/dev/null
		# the next snapshot is refused until this one is saved: wait for it
		while [ "$(wc -l <"$T/out")" -lt "$i" ]; do sleep 0.01; done
	done
	kill -INT "$SAVER"
	wait "$SAVER" || :
	SAVER=
	lag=$(sed -n "s/.* stopped \([0-9.]*\) us after fdr's snapshot, for .*/\1/p" "$T/err" | median)
	off=$(sed -n "s/.* after fdr's snapshot, for \([0-9.]*\) ms while.*/\1/p" "$T/err" | median)
	echo "METRIC $2 fdr=$lag kernel_off_ms=$off n=$(grep -c " after fdr's snapshot, for " "$T/err")"
	rm -rf "$T/out-$1"
}

one dat snapshot_both_us
one text snapshot_both_text_us
