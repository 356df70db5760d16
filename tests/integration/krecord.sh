#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# krecord.sh FDR KTIME_APP - fdr record -k (docs/design/kernel-timeline.md):
# one trace.dat holding the application's records and a kernel tracefs
# instance's, as a second buffer. trace-cmd report shows them interleaved in
# time order (the application's sched_switch away and its return between the
# two events around each 20 ms sleep); every event id in the file names one
# event (fdr's ids moved above a kernel event given fdr's first id on purpose);
# fdr report reads both buffers of the file, merged; fdr export writes both:
# babeltrace2 of the CTF and the Perfetto protobuf's scheduling and thread
# states show the same switch away and back; the kernel instance is gone after
# fdr record, and the kernel's top-level buffer and other instances are as before.
# Exits 77 (skipped) where the kernel's tracefs cannot be used (not root, no
# tracefs) or trace-cmd is not installed.
set -u
# shellcheck source=../harness/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib.sh"

FDR=${1:?usage: krecord.sh FDR KTIME_APP}
APP=${2:?usage: krecord.sh FDR KTIME_APP}
SRC_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

kernel_sched_tracefs # sets TRACEFS, or skips
command -v trace-cmd >/dev/null || skip "trace-cmd is not installed"

suite_init krecord shm
abs_path FDR APP
export FDR_KERNEL_REGISTRY=$T/registry
export FDR_SESSION=kr
BYSTANDER=fdr-krecord-bystander-$$

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
kernel_state "$BYSTANDER" list >"$T/kstate.before"

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
	expect_err "kernel instance fdr-kr-.*: [0-9]+ CPUs?, .* of pages \([0-9]+ bytes spliced, [0-9]+ of them while recording\), [0-9]+ event formats?, [0-9]+ lost" ||
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

# The order check of every format, on its lines brought to "step N P", "away"
# (the thread switched away, state S) and "back" (its sched_wakeup or the switch
# to it): 5 steps with away, then back, between their phase 0 and phase 1.
steps_interleaved() { # WHAT FILE (normalized)
	awk '
		$1 == "step" && $3 == 0 { n = $2; st = 1; next }
		$1 == "away" && st == 1 { st = 2; next }
		$1 == "back" && st >= 2 { st = 3; next }
		$1 == "step" && $3 == 1 {
			if ($2 == n && st == 3) good++
			else { print "step " $2 ": state " st; bad++ }
			st = 0
		}
		END { print good + 0, bad + 0; exit !(good == 5 && bad == 0) }' "$2" >"$T/awk" ||
		{ diag "$1: expected 5 steps with the switch away and back between their events (good, bad): $(tr '\n' ' ' <"$T/awk")"; head -40 "$2" | sed 's/^/#   /'; return 1; }
}

# fdr report reads both buffers of the file: the kernel's lines begin with the
# instance's name (trace-cmd report's layout), in time order with fdr's
test_fdr_report() {
	must "$FDR" report "$T/k.dat" || return 1
	[ "$(grep -c "step: n=[0-9]* phase=[01]" "$OUT")" = 10 ] ||
		{ diag "expected 10 step records from fdr report"; show_io; return 1; }
	grep -q '^fdr-kr-[^:]*: .* sched_switch: ' "$OUT" ||
		{ diag "no kernel sched_switch in fdr report"; head -5 "$OUT" | sed 's/^/#   /'; return 1; }
	sed -nE "s/.*-$TID .* step: n=([0-9]+) phase=([01]).*/step \1 \2/p
		s/.* sched_switch: .* prev_pid=$TID .* prev_state=1 .*/away/p
		s/.* sched_wakeup: .* pid=$TID .*/back/p
		s/.* sched_switch: .* next_pid=$TID .*/back/p" "$OUT" >"$T/norm.report"
	steps_interleaved "fdr report" "$T/norm.report" || return 1
	sed -nE 's/.*\] ([0-9]+\.[0-9]+): .*/\1/p' "$OUT" | sort -c -n ||
		{ diag "fdr report's timestamps are not in order"; return 1; }
}

# the CTF export: the kernel's records in a stream class of their own, with
# their formats; babeltrace2 prints both merged in time order
test_export_ctf() {
	command -v babeltrace2 >/dev/null || { diag "skipped: babeltrace2 is not installed"; return 0; }
	must "$FDR" export --format ctf -o "$T/ctf" "$T/k.dat" || return 1
	ls "$T/ctf" | grep -q '^buffer1_stream_[0-9]' ||
		{ diag "no stream of the kernel's buffer: $(ls "$T/ctf" | tr '\n' ' ')"; return 1; }
	grep -q 'fdr_stream_1 = "fdr-kr-' "$T/ctf/metadata" ||
		{ diag "the metadata does not name the kernel instance of stream class 1"; return 1; }
	babeltrace2 --no-delta "$T/ctf" >"$T/bt2" 2>"$T/bt2.err" ||
		{ diag "babeltrace2 failed: $(head -5 "$T/bt2.err")"; return 1; }
	sed -nE "s/.* ktime:step: \{ cpu_id = [0-9]+ \}, \{ vtid = $TID, .* n = ([0-9]+), phase = ([01]) \}/step \1 \2/p
		s/.* sched:sched_switch: .* prev_pid = $TID, prev_prio = [0-9]+, prev_state = 1, .*/away/p
		s/.* sched:sched_wakeup: .*, \{ comm = .*, pid = $TID, .*/back/p
		s/.* sched:sched_switch: .* next_pid = $TID, .*/back/p" "$T/bt2" >"$T/norm.bt2"
	steps_interleaved "babeltrace2" "$T/norm.bt2"
}

# the Perfetto protobuf export: the scheduling as ftrace events, the steps on
# the thread's track; the thread states derived from them (as trace_processor
# derives its thread_state table) hold a sleep (S) of at least 15 ms of the
# 20 between each step's two events
test_export_perfetto() {
	must "$FDR" export --format perfetto-proto -o "$T/k.pftrace" "$T/k.dat" || return 1
	python3 "$SRC_DIR/pftrace-check.py" timeline "$T/k.pftrace" "$TID" >"$T/pf" 2>"$T/pf.err" ||
		{ diag "pftrace-check failed: $(cat "$T/pf.err")"; return 1; }
	sed -nE 's/^[0-9]+ event ktime:step n=([0-9]+) phase=([01])$/step \1 \2/p
		s/^[0-9]+ switch-away .* state=S$/away/p
		s/^[0-9]+ (wakeup|switch-in) .*/back/p' "$T/pf" >"$T/norm.pf"
	steps_interleaved "perfetto-proto" "$T/norm.pf" || return 1
	awk '
		$2 == "event" && $3 == "ktime:step" { split($4, a, "="); split($5, b, "=")
			if (b[2] == 0) t0[a[2]] = $1; else t1[a[2]] = $1 }
		$1 == "state" && $4 == "S" { s[++ns] = $2; e[ns] = $3 }
		END {
			for (n in t0) { ok = 0
				for (i = 1; i <= ns; i++)
					if (s[i] >= t0[n] && e[i] <= t1[n] && e[i] - s[i] >= 15000000) ok = 1
				if (ok) good++; else print "step " n ": no sleep of 15 ms"
			}
			exit !(good == 5) }' "$T/pf" >"$T/awk" ||
		{ diag "thread states: $(tr '\n' ' ' <"$T/awk")"; grep '^state' "$T/pf" | head -20 | sed 's/^/#   /'; return 1; }
}

test_kernel_untouched() {
	"$FDR" destroy >/dev/null 2>&1
	kernel_state "$BYSTANDER" list >"$T/kstate.after"
	diff "$T/kstate.before" "$T/kstate.after" >"$T/kdiff" ||
		{ diag "the kernel's top level or the bystander changed:"; sed 's/^/#   /' "$T/kdiff"; return 1; }
}

run_cases "test_record test_report_interleaved test_ids test_fdr_report test_export_ctf test_export_perfetto test_kernel_untouched" test_record
tap_summary
