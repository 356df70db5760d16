#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# record-kill.sh FDR FDR_DEMO - fdr record killed with SIGKILL leaves a trace.dat
# that trace-cmd report and fdr report read, holding every page it wrote, and
# loses nothing without counting it (docs/design/record.md):
#
#   records the demo wrote = records in the file + what fdr stat counts in the
#                            ring afterwards (entries + overrun + dropped)
#   records in the file    = read events in fdr stat (committed once written)
#
# fdr record is killed early (its first pages), in the middle, and right after
# the command ended (while it drains the buffers and writes the file's final
# form). The demo goes on after the kill and ends on its own; the ring keeps
# what it wrote after, overwriting the oldest (a 64 KiB buffer: overrun counts).
# Exits 77 (skipped) only when trace-cmd is missing.
set -u
# shellcheck source=../harness/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib.sh"

FDR=${1:?usage: record-kill.sh FDR FDR_DEMO}
DEMO=${2:?usage: record-kill.sh FDR FDR_DEMO}

command -v trace-cmd >/dev/null || skip "trace-cmd is not installed (Debian package trace-cmd)"

suite_init record-kill
DEMO_PID=
kill_demo() {
	[ -n "$DEMO_PID" ] && kill -9 "$DEMO_PID" 2>/dev/null
}
at_exit kill_demo
export FDR_SESSION=kill

# stat_sum FIELD: the sum over the CPUs of fdr stat's "FIELD: N" lines
stat_sum() {
	"$FDR" stat 2>/dev/null | sed -nE "s/^$1: ([0-9]+)$/\\1/p" | awk '{ s += $1 } END { print s + 0 }'
}

# killed NAME WHEN: record the demo, SIGKILL fdr record at WHEN (seconds;
# "start": as soon as it says it records; "exit": as soon as the demo printed its
# summary), then check the file and the counts. res=0 if all holds.
killed() {
	local name=$1 when=$2 rpid rc total frep inram read i

	res=0
	stopped=killed
	"$FDR" start -e 'demo:*' -b 64 2>/dev/null
	# the demo's summary goes to ERR too: fdr record's child inherits it
	"$FDR" record -e 'demo:*' -o "$T/$name.dat" -- \
		sh -c 'echo $$ >"$1"; exec "$0" -n 150000 -r 100000 -q' "$DEMO" "$T/$name.pid" \
		>/dev/null 2>"$T/$name.err" &
	rpid=$!
	case $when in
	exit) # the demo said it is done: fdr record drains and writes the final form
		for i in $(seq 5000); do
			grep -q ' requests, ' "$T/$name.err" && break
			sleep 0.002
		done ;;
	start) # the command runs (so the file exists, and the readers): kill at once
		for i in $(seq 1000); do
			[ -s "$T/$name.pid" ] && break
			sleep 0.01
		done ;;
	*) sleep "$when" ;;
	esac
	kill -9 $rpid
	wait $rpid
	rc=$?
	DEMO_PID=$(cat "$T/$name.pid" 2>/dev/null)
	# the demo ends on its own (1.5 s of work), unharmed by the kill
	for i in $(seq 300); do
		grep -q ' requests, ' "$T/$name.err" && break
		sleep 0.1
	done
	for i in $(seq 100); do
		kill -0 "$DEMO_PID" 2>/dev/null || break
		sleep 0.05
	done
	DEMO_PID=
	total=$(demo_total "$T/$name.err")
	# after the command: fdr record may have ended before the kill (its stop takes
	# a few ms when one CPU wrote everything); the file and counts must hold anyway
	if [ "$when" = exit ] && [ "$rc" = 0 ]; then
		stopped="ended before the kill"
		rc=137
	fi
	if [ "$rc" != 137 ] || [ -z "$total" ]; then
		diag "$name: expected fdr record killed (137) and the demo's summary, found exit $rc:"
		sed 's/^/#   /' "$T/$name.err"
		res=1
		return
	fi
	if ! trace-cmd report "$T/$name.dat" >"$T/$name.rep" 2>"$T/$name.rep.err"; then
		diag "$name: trace-cmd report failed: $(tail -3 "$T/$name.rep.err")"
		res=1
	fi
	if ! "$FDR" report "$T/$name.dat" >"$T/$name.frep" 2>"$T/$name.frep.err"; then
		diag "$name: fdr report failed: $(tail -3 "$T/$name.frep.err")"
		res=1
	fi
	got=$(grep -cE '(request|cache|db_query|tracing_mark_write):' "$T/$name.rep")
	frep=$(grep -cE ' (request|cache|db_query|tracing_mark_write): ' "$T/$name.frep")
	read=$(stat_sum 'read events')
	inram=$(($(stat_sum entries) + $(stat_sum overrun) + $(stat_sum 'dropped events')))
	if [ "$got" != "$frep" ]; then
		diag "$name: trace-cmd report shows $got records, fdr report $frep"
		res=1
	fi
	if [ "$got" != "$read" ]; then
		diag "$name: $got records in the file, fdr stat says $read were read"
		res=1
	fi
	if [ $((got + inram)) != "$total" ]; then
		diag "$name: $got in the file + $inram in the ring (entries + overrun + dropped) != $total written"
		res=1
	fi
	diag "$name: $stopped: $got records in the file, $inram left in the ring, $total written"
	"$FDR" destroy 2>/dev/null
}

# ---- 1. early: the file exists from the start --------------------------------------------------
killed early start
ok $res "SIGKILL as it starts: trace-cmd report and fdr report read the file; file + ring = written"

# ---- 2. in the middle -----------------------------------------------------------------------------
killed mid 0.8
if [ $res = 0 ] && [ "$got" -lt 1000 ]; then
	diag "mid: expected records in the file after 0.8 s, found $got"
	res=1
fi
ok $res "SIGKILL mid-recording: the file holds what was written ($got records); file + ring = written"

# ---- 3. after the command ended: draining, writing the final form ----------------------------------
killed exit exit
ok $res "SIGKILL after the command ended: the file is whole and readable; file + ring = written"

# ---- 4. at each step of making the file compact ----------------------------------------------------
# Two writers, one on each of CPUs 0 and 1, so that the stop copies one CPU's
# pages behind the other's. strace kills fdr record (SIGKILL at the system
# call's entry, -P: the calls on the file only) before the copy, before the old
# copy is punched out (after the new offset), and before the file is cut (after
# the final formats are linked). Every record must be in the file each time.
# stop_killed SYSCALL WHEN: res=0 if the file holds every record the two demos wrote
stop_killed() {
	local sc=$1 when=$2 rc total got frep

	res=0
	rm -f "$T/stop.dat"
	"$FDR" start -e 'demo:*' -b 4096 2>/dev/null
	strace -o "$T/strace.log" -P "$T/stop.dat" -e trace="$sc" -e inject="$sc":signal=SIGKILL:when="$when" \
		"$FDR" record -e 'demo:*' -o "$T/stop.dat" -- sh -c '
			taskset -c 0 "$0" -n 10000 -r 40000 -q & taskset -c 1 "$0" -n 10000 -r 40000 -q
			wait' "$DEMO" >/dev/null 2>"$T/stop.err"
	rc=$?
	total=$(demo_total "$T/stop.err" | awk '{ s += $1 } END { print s + 0 }')
	trace-cmd report "$T/stop.dat" >"$T/stop.rep" 2>"$T/stop.rep.err" || diag "trace-cmd report: $(tail -2 "$T/stop.rep.err")"
	"$FDR" report "$T/stop.dat" >"$T/stop.frep" 2>"$T/stop.frep.err" || diag "fdr report: $(tail -2 "$T/stop.frep.err")"
	got=$(grep -cE '(request|cache|db_query|tracing_mark_write):' "$T/stop.rep")
	frep=$(grep -cE ' (request|cache|db_query|tracing_mark_write): ' "$T/stop.frep")
	if [ "$rc" != 137 ] || ! grep -q 'killed by SIGKILL' "$T/strace.log" || [ "$total" = 0 ] ||
	   [ "$got" != "$total" ] || [ "$frep" != "$total" ]; then
		diag "$sc #$when: exit $rc, $got records for trace-cmd report, $frep for fdr report, $total written:"
		tail -2 "$T/strace.log" | sed 's/^/#   strace: /'
		grep -v '^fdr: session' "$T/stop.err" | sed 's/^/#   /'
		res=1
	fi
	"$FDR" destroy 2>/dev/null
}

if [ "$(nproc)" -lt 2 ] || ! command -v strace >/dev/null || ! command -v taskset >/dev/null; then
	echo "ok $((ncase + 1)) # SKIP killed while making the file compact: needs 2 CPUs, strace and taskset"
	ncase=$((ncase + 1))
	pass=$((pass + 1))
else
	r4=0
	stop_killed copy_file_range 1 # before the second CPU's pages are copied
	r4=$((r4 | res))
	stop_killed fallocate 2 # copied, offset stored, old copy not punched out (1: at creation)
	r4=$((r4 | res))
	stop_killed ftruncate 3 # final formats and statistics linked, not cut (1, 2: at creation)
	r4=$((r4 | res))
	ok $r4 "SIGKILL at each step of making the file compact: every record in the file, for trace-cmd report and fdr report"
fi

tap_summary
