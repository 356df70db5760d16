#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# krecord.sh FDR KTIME_APP - fdr record -k (docs/design/kernel-timeline.md):
# one trace.dat holding the application's records and a kernel tracefs
# instance's, as a second buffer. trace-cmd report shows them interleaved in
# time order (the application's sched_switch away and its return between the
# two events around each 20 ms sleep); every event id in the file names one
# event (fdr's ids moved above a kernel event given fdr's first id on purpose);
# fdr report still reads the file; the kernel instance is gone after fdr
# record, and the kernel's top-level buffer and other instances are as before.
# Exits 77 (skipped) where the kernel's tracefs cannot be used (not root, no
# tracefs) or trace-cmd is not installed.
set -u
# shellcheck source=../harness/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib.sh"

FDR=${1:?usage: krecord.sh FDR KTIME_APP}
APP=${2:?usage: krecord.sh FDR KTIME_APP}

kernel_sched_tracefs # sets TRACEFS, or skips
command -v trace-cmd >/dev/null || skip "trace-cmd is not installed"

suite_init krecord shm
abs_path FDR APP
export FDR_KERNEL_REGISTRY=$T/registry
export FDR_SESSION=kr
BYSTANDER=fdr-krecord-bystander-$$

kstate() {
	local f
	for f in tracing_on trace_clock set_event buffer_size_kb options/overwrite current_tracer \
		tracing_cpumask set_event_pid; do
		printf '%s: ' "$f"
		tr '\n' ' ' <"$TRACEFS/$f"
		echo
	done
	for f in tracing_on trace_clock set_event options/overwrite; do
		printf '%s %s: ' "$BYSTANDER" "$f"
		tr '\n' ' ' <"$TRACEFS/instances/$BYSTANDER/$f"
		echo
	done
	ls "$TRACEFS/instances"
}
cleanup() {
	local d
	"$FDR" destroy >/dev/null 2>&1
	for d in "$TRACEFS"/instances/fdr-kr-* "$TRACEFS/instances/$BYSTANDER"; do
		[ -d "$d" ] && rmdir "$d"
	done
}
at_exit cleanup

mkdir "$TRACEFS/instances/$BYSTANDER" || skip "cannot create an instance in $TRACEFS"
echo 'sched:sched_waking' >"$TRACEFS/instances/$BYSTANDER/set_event"
echo 0 >"$TRACEFS/instances/$BYSTANDER/tracing_on"
kstate >"$T/kstate.before"

# The kernel event whose id is fdr's first user event id (1000,
# FDR_EVENT_ID_FIRST_USER: the id ktime:step gets in a new session), enabled
# too: without the move of fdr's ids, the file would hold two formats of id
# 1000 and step records would be printed as that event.
CLASH=$(grep -lx 1000 "$TRACEFS"/events/*/*/id 2>/dev/null | head -1)
CLASH=${CLASH%/id}
CLASH=${CLASH#"$TRACEFS"/events/}
CLASH=${CLASH/\//:}

test_record() {
	local k="sched:sched_switch,sched:sched_wakeup"
	[ -n "$CLASH" ] && k="$k,$CLASH"
	run "$FDR" record -k "$k" -e 'ktime:*' -o "$T/k.dat" -- "$APP" sleep 5 || return 1
	expect_rc 0 || return 1
	expect_err "kernel instance fdr-kr-.*: [0-9]+ CPUs?, .* of pages \([0-9]+ bytes spliced\), [0-9]+ event formats?, [0-9]+ lost" ||
		return 1
	TID=$(head -1 "$OUT")
	ls "$TRACEFS/instances" | grep -q '^fdr-kr-' &&
		{ diag "the kernel instance is still there after fdr record"; return 1; }
	[ -z "$(ls "$FDR_KERNEL_REGISTRY")" ] ||
		{ diag "registry not empty: $(ls "$FDR_KERNEL_REGISTRY")"; return 1; }
}

# trace-cmd report: between step n phase=0 and phase=1 of the application's
# thread, its sched_switch away (state S), then its return (the switch back to
# it or its sched_wakeup: kernel-timeline.md); every line in time order
test_report_interleaved() {
	trace-cmd report "$T/k.dat" >"$T/report" 2>"$T/report.err" ||
		{ diag "trace-cmd report failed: $(cat "$T/report.err")"; return 1; }
	grep -q '^fdr-kr-[^:]*: .* sched_switch: ' "$T/report" ||
		{ diag "no kernel sched_switch in the report"; head -5 "$T/report" | sed 's/^/#   /'; return 1; }
	awk -v tid="$TID" '
		$0 ~ ("-" tid " .* step: +n=[0-9]+ phase=0") { match($0, /n=[0-9]+/); n = substr($0, RSTART + 2, RLENGTH - 2); st = 1; next }
		st == 1 && $0 ~ ("sched_switch: +ktime-app:" tid " \\[[0-9]+\\] S ==>") { st = 2; next }
		st >= 2 && $0 ~ ("sched_wakeup: +ktime-app:" tid " ") { st = 3; next }
		st >= 2 && $0 ~ ("==> ktime-app:" tid " ") { st = 3; next }
		$0 ~ ("-" tid " .* step: +n=[0-9]+ phase=1") {
			match($0, /n=[0-9]+/); m = substr($0, RSTART + 2, RLENGTH - 2)
			if (m == n && st == 3) good++
			else { print "step " m ": state " st; bad++ }
			st = 0
		}
		END { print good + 0, bad + 0; exit !(good == 5 && bad == 0) }' "$T/report" >"$T/awk" ||
		{ diag "expected 5 steps with the switch away and back between their events (good, bad): $(tr '\n' ' ' <"$T/awk")"; grep -E "step|ktime-app:$TID " "$T/report" | head -40 | sed 's/^/#   /'; return 1; }
	sed -nE 's/.*\] ([0-9]+\.[0-9]+): .*/\1/p' "$T/report" | sort -c -n ||
		{ diag "the timestamps are not in order"; return 1; }
}

# every id names one event; step is fdr's (fields n, phase), above the kernel's ids
test_ids() {
	local ids step_id
	trace-cmd dump --events "$T/k.dat" >"$T/events" 2>&1 || { diag "trace-cmd dump failed"; return 1; }
	ids=$(awk '/^name:/ { n = $2 } /^ID:/ { print $2, n }' "$T/events")
	[ -n "$(printf '%s\n' "$ids" | awk '$2 == "sched_switch"')" ] ||
		{ diag "no sched_switch format in the file: $ids"; return 1; }
	[ -z "$(printf '%s\n' "$ids" | awk '{ print $1 }' | sort | uniq -d)" ] ||
		{ diag "an id names two events: $(printf '%s\n' "$ids" | tr '\n' ' ')"; return 1; }
	step_id=$(printf '%s\n' "$ids" | awk '$2 == "step" { print $1 }')
	if [ -n "$CLASH" ]; then
		[ "$step_id" -gt 1000 ] || { diag "step's id $step_id is not above the kernel's 1000 ($CLASH)"; return 1; }
	else
		diag "no kernel event has id 1000 here: the clash case is not exercised"
	fi
	# step lines are fdr's, not the kernel event of the same original id
	grep -c " step: \+n=[0-9]\+ phase=[01]" "$T/report" | grep -qx 10 ||
		{ diag "expected 10 step records in the report, found $(grep -c ' step: ' "$T/report")"; return 1; }
}

# fdr report still reads the file (fdr's own buffer)
test_fdr_report() {
	must "$FDR" report "$T/k.dat" || return 1
	[ "$(grep -c "step: n=[0-9]* phase=[01]" "$OUT")" = 10 ] ||
		{ diag "expected 10 step records from fdr report"; show_io; return 1; }
}

test_kernel_untouched() {
	"$FDR" destroy >/dev/null 2>&1
	kstate >"$T/kstate.after"
	diff "$T/kstate.before" "$T/kstate.after" >"$T/kdiff" ||
		{ diag "the kernel's top level or the bystander changed:"; sed 's/^/#   /' "$T/kdiff"; return 1; }
}

run_cases "test_record test_report_interleaved test_ids test_fdr_report test_kernel_untouched" test_record
tap_summary
