#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# ktime.sh FDR KTIME_APP - kernel events on fdr's timeline
# (docs/design/kernel-timeline.md): fdr start -k links a kernel tracefs
# instance; fdr show merges its lines with the application's in time order; fdr
# stop and start turn it off and on; fdr pipe follows both, merged; fdr destroy removes it; an instance left by
# a killed fdr, or by a session removed behind fdr's back, is removed by the next
# fdr command; an fdr-* instance fdr did not make, the kernel's top-level buffer
# and every other instance are left as they were. Without the right to use
# tracefs: a clear error, and fdr's own session started all the same.
# Exits 77 (skipped) where the kernel's tracefs cannot be used (not root, no
# tracefs).
set -u
# shellcheck source=../harness/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib.sh"

FDR=${1:?usage: ktime.sh FDR KTIME_APP}
APP=${2:?usage: ktime.sh FDR KTIME_APP}

kernel_sched_tracefs # sets TRACEFS, or skips

suite_init ktime shm
abs_path FDR APP
export FDR_KERNEL_REGISTRY=$T/registry
export FDR_SESSION=kt
BYSTANDER=fdr-ktime-bystander-$$
NOBODY_ROOT=
MNT=

cleanup() {
	local d
	"$FDR" destroy >/dev/null 2>&1
	"$FDR" -s kpipe destroy >/dev/null 2>&1
	"$FDR" -s ksnap destroy >/dev/null 2>&1
	for d in "$TRACEFS"/instances/fdr-kt-* "$TRACEFS"/instances/fdr-kill-* \
		"$TRACEFS"/instances/fdr-kpipe-* "$TRACEFS"/instances/fdr-ksnap-* \
		"$TRACEFS"/instances/fdr-rel-* \
		"$TRACEFS"/instances/fdr-gone-* "$TRACEFS/instances/$BYSTANDER"; do
		[ -d "$d" ] && rmdir "$d"
	done
	[ -n "$NOBODY_ROOT" ] && rm -rf "$NOBODY_ROOT"
	if [ -n "$MNT" ]; then
		grep -qs " $MNT fuse" /proc/self/mounts && fusermount3 -u -z "$MNT" 2>/dev/null
		rmdir "$MNT" 2>/dev/null
	fi
}
at_exit cleanup

mkdir "$TRACEFS/instances/$BYSTANDER" || skip "cannot create an instance in $TRACEFS"
echo 'sched:sched_waking' >"$TRACEFS/instances/$BYSTANDER/set_event"
echo 0 >"$TRACEFS/instances/$BYSTANDER/tracing_on"
kernel_state "$BYSTANDER" >"$T/kstate.before"

# the one instance of session $1's link (its name), or ""
linked() {
	sed -n 's/^instance //p' "$FDR_ROOT/$1/kernel" 2>/dev/null
}

test_link() {
	local inst
	must "$FDR" start -e 'ktime:*' -k 'sched:sched_switch,sched:sched_wakeup' -k 'irq:*' ||
		return 1
	inst=$(linked kt)
	case $inst in
	fdr-kt-*) ;;
	*) diag "no link in $FDR_ROOT/kt/kernel, found '$inst'"; return 1 ;;
	esac
	K=$TRACEFS/instances/$inst
	[ -d "$K" ] || { diag "$K does not exist"; return 1; }
	grep -q '\[mono\]' "$K/trace_clock" || { diag "trace_clock: $(cat "$K/trace_clock")"; return 1; }
	for e in sched:sched_switch sched:sched_wakeup irq:irq_handler_entry; do
		grep -qx "$e" "$K/set_event" || { diag "$e not in set_event: $(cat "$K/set_event")"; return 1; }
	done
	[ "$(cat "$K/tracing_on")" = 1 ] || { diag "tracing_on is not 1"; return 1; }
	# fdr's session is in overwrite mode by default: the kernel's too
	[ "$(cat "$K/options/overwrite")" = 1 ] || { diag "options/overwrite is not 1"; return 1; }
	grep -q "linked (trace_clock mono)" "$ERR" || { diag "no message"; show_io; return 1; }
	must "$FDR" stat || return 1
	expect_out "^kernel instance: $TRACEFS/instances/$inst \(trace_clock mono\)$"
}

# steps FILE TID: the application (TID) slept 20 ms between step n phase=0 and
# step n phase=1, five times. In FILE, between the two events of each step: the
# kernel's sched_switch away from its thread (prev_state=S), then its return:
# the sched_switch back to it or its sched_wakeup (the development VM's kernel
# seldom records a switch from the idle task, which is how an idle CPU runs a
# woken thread again: kernel-timeline.md). And every line with a timestamp in
# time order, kernel and fdr alike.
steps() {
	awk -v tid="$2" '
		/^#/ { next }
		!/^K / && $0 ~ ("-" tid " .* step: n=[0-9]+ phase=0") { match($0, /n=[0-9]+/); n = substr($0, RSTART + 2, RLENGTH - 2); st = 1; back = 0; next }
		/^K / && st == 1 && $0 ~ ("prev_pid=" tid " .*prev_state=S") { st = 2; next }
		/^K / && st >= 2 && $0 ~ ("sched_wakeup: comm=ktime-app pid=" tid " ") { st = 3; next }
		/^K / && st >= 2 && $0 ~ ("next_pid=" tid " ") { st = 3; back = 1; next }
		!/^K / && $0 ~ ("-" tid " .* step: n=[0-9]+ phase=1") {
			match($0, /n=[0-9]+/); m = substr($0, RSTART + 2, RLENGTH - 2)
			if (m == n && st == 3) { good++; switched += back }
			else { print "step " m ": state " st; bad++ }
			st = 0
		}
		END { print good + 0, bad + 0, switched + 0; exit !(good == 5 && bad == 0) }' "$1" >"$T/awk" ||
		{ diag "expected 5 steps with the switch away and back between their events (good, bad, switched back): $(tr '\n' ' ' <"$T/awk")"; grep -E "step|[^0-9.]$2 |LOST" "$1" | head -60 | sed 's/^/#   /'; return 1; }
	sed -nE 's/.*\] [^ ]+ +([0-9]+\.[0-9]{6}): .*/\1/p' "$1" | sort -c -n ||
		{ diag "the timestamps are not in order"; return 1; }
}

test_interleaved() {
	local tid
	run "$APP" sleep 5 || return 1
	expect_rc 0 || return 1
	tid=$(head -1 "$OUT")
	must "$FDR" show || return 1
	cp "$OUT" "$T/show"
	grep -q "^# kernel: .*instances/fdr-kt-.* (trace_clock mono)" "$T/show" ||
		{ diag "no kernel header line"; return 1; }
	steps "$T/show" "$tid"
}

# fdr export of the live linked session: fdr's records, and a note that the
# kernel's are not in it (reading them raw would consume them) naming the way
# to both (fdr record -k)
test_export_note() {
	must "$FDR" export --format text -o "$T/live.txt" || return 1
	expect_err "note: the kernel instance fdr-kt-[^ ]* linked to this session is not in the export .*'fdr record -k'" ||
		return 1
	grep -q ' step: n=1 phase=0' "$T/live.txt" || { diag "no step record in the export"; return 1; }
	grep -q ' sched_switch: ' "$K/trace" || { diag "the kernel instance's records are gone"; return 1; }
}

# The control tree's trace of a linked session holds both, as fdr show: through
# fdr cat, and through a FUSE mount for root (the mounting user), while nobody
# reading through it with allow_other gets fdr's lines alone. A link that does
# not check out is not followed, and the header says so. '> trace' empties the
# kernel instance's buffer too.
test_tree() {
	local m tid
	must "$FDR" cat trace || return 1
	grep -q "^# kernel: .*instances/fdr-kt-.* (trace_clock mono)" "$OUT" && grep -q "^K .* sched_switch: " "$OUT" &&
		grep -q "^  .* step: n=1 phase=0" "$OUT" || { diag "fdr cat trace: not merged"; head -20 "$OUT" | sed 's/^/#   /'; return 1; }
	cp "$FDR_ROOT/kt/kernel" "$T/kernel.saved"
	sed 's/^instance .*/instance ..\/..\/trace/' "$T/kernel.saved" >"$FDR_ROOT/kt/kernel"
	# (another registry: this one's entry, no longer named by the link, would be reaped)
	mkdir -p "$T/other-registry"
	FDR_KERNEL_REGISTRY=$T/other-registry run "$FDR" cat trace
	cp "$T/kernel.saved" "$FDR_ROOT/kt/kernel"
	expect_rc 0 || return 1
	grep -q "^# kernel: .*/kernel is not a link to a kernel instance fdr made: fdr's lines alone" "$OUT" &&
		! grep -q "^K " "$OUT" || { diag "a bad link was followed"; head -20 "$OUT" | sed 's/^/#   /'; return 1; }
	if [ -c /dev/fuse ] && command -v fusermount3 >/dev/null && ! "$FDR" mount 2>&1 | grep -q "built without FUSE"; then
		# a mount point nobody can reach; the files group-readable by nobody's group
		m=$(mktemp -d /tmp/fdr-ktime-mnt.XXXXXX) && chmod 755 "$m" && MNT=$m || return 1
		if "$FDR" mount --allow-other -o uid=0,gid=65534 "$m" >"$T/mount.out" 2>&1; then
			grep -q "^K .* sched_switch: " "$m/trace" || { diag "the mount's trace is not merged"; return 1; }
			setpriv --reuid=65534 --regid=65534 --clear-groups cat "$m/trace" >"$T/nobody" 2>&1
			grep -q "^  .* step: n=1 phase=0" "$T/nobody" && ! grep -q "^K " "$T/nobody" ||
				{ diag "nobody through the mount: expected fdr's lines alone"; head -5 "$T/nobody" | sed 's/^/#   /'; return 1; }
			fusermount3 -u "$m"
		else
			diag "fdr mount failed (not checked through FUSE): $(head -1 "$T/mount.out")"
		fi
	fi
	# '> trace': the application's records of test_interleaved gone from both
	must "$FDR" write trace '' || return 1
	grep -q "ktime-app" "$K/trace" && { diag "the kernel instance's buffer was not emptied"; return 1; }
	return 0
}

# fdr pipe follows both trace_pipes, merged; SIGINT ends it with status 0 (a
# session of its own: no backlog of the cases before, no irq:* flood)
test_pipe() {
	local pid tid
	must "$FDR" -s kpipe start -e 'ktime:*' -k 'sched:sched_switch,sched:sched_wakeup' || return 1
	FDR_SESSION=kpipe "$FDR" pipe >"$T/pipe" 2>"$T/pipe.err" &
	pid=$!
	bg_add "$pid"
	sleep 0.5
	tid=$(FDR_SESSION=kpipe "$APP" sleep 5) || return 1
	sleep 0.5
	kill -INT "$pid"
	wait "$pid"
	rc=$?
	[ "$rc" = 0 ] || { diag "fdr pipe: exit status $rc: $(cat "$T/pipe.err")"; return 1; }
	grep -q "^# kernel: .*instances/fdr-kpipe-" "$T/pipe" || { diag "no kernel header line"; return 1; }
	steps "$T/pipe" "$tid" || {
		# the kernel's own count of what it lost, for the diagnosis
		grep -H . "$TRACEFS"/instances/fdr-kpipe-*/per_cpu/cpu*/stats | grep -E 'overrun|dropped' | sed 's/^/#   /'
		"$FDR" -s kpipe destroy
		return 1
	}
	must "$FDR" -s kpipe destroy
}

# fdr snapshot save on a linked session (a session of its own): a trigger
# "snapshot if status >= 500" in the application freezes the kernel instance
# too, and each saved file (text, then trace.dat) holds the failing event and
# the kernel's scheduling up to it: the five steps' switches away and back, no
# step after the failure; tracing_on is 1 again afterwards
# (docs/design/kernel-timeline.md, Snapshots of both)
test_snapshot_both() {
	local pid tid f fmt inst i
	must "$FDR" -s ksnap start -e 'ktime:*' -k 'sched:sched_switch,sched:sched_wakeup' || return 1
	inst=$(linked ksnap)
	FDR_SESSION=ksnap "$APP" sleep 1 >/dev/null || return 1 # registers ktime:reply
	must "$FDR" -s ksnap write events/ktime/reply/trigger 'snapshot if status >= 500' || return 1
	for fmt in text dat; do
		FDR_SESSION=ksnap "$FDR" snapshot save --format $fmt "$T/snap-$fmt" >"$T/save.out" 2>"$T/save.err" &
		pid=$!
		bg_add "$pid"
		for i in $(seq 50); do
			grep -q 'saving every snapshot .* with kernel instance fdr-ksnap-' "$T/save.err" && break
			sleep 0.1
		done
		tid=$(FDR_SESSION=ksnap "$APP" fail 5) || { kill "$pid"; return 1; }
		for i in $(seq 50); do
			[ -s "$T/save.out" ] && break
			sleep 0.1
		done
		kill -INT "$pid"
		wait "$pid"
		rc=$?
		[ "$rc" = 0 ] || { diag "$fmt: fdr snapshot save: exit status $rc"; sed 's/^/#   /' "$T/save.err"; return 1; }
		grep -q "kernel instance $inst stopped [0-9.]* us after fdr's snapshot, for [0-9.]* ms" "$T/save.err" ||
			{ diag "$fmt: no freeze line"; sed 's/^/#   /' "$T/save.err"; return 1; }
		[ "$(cat "$TRACEFS/instances/$inst/tracing_on")" = 1 ] ||
			{ diag "$fmt: the kernel instance's tracing_on is not 1 again"; return 1; }
		f=$(head -1 "$T/save.out")
		if [ "$fmt" = dat ]; then
			# fdr report's layout into fdr show's: the kernel's lines (its buffer's
			# name first) marked 'K ', prev_state 1 (TASK_INTERRUPTIBLE) as S
			must "$FDR" report "$f" || return 1
			sed -E "s/^$inst: +/K /; t; s/^ +/  /" "$OUT" |
				sed -E 's/prev_state=1 /prev_state=S /' >"$T/snap-dat.txt"
			if command -v trace-cmd >/dev/null; then
				trace-cmd report "$f" >"$T/tc" 2>&1 && grep -q "^$inst: .* sched_switch: .*ktime-app:$tid " "$T/tc" ||
					{ diag "trace-cmd report: no sched_switch of the kernel's buffer"; head -5 "$T/tc" | sed 's/^/#   /'; return 1; }
			fi
			f=$T/snap-dat.txt
		fi
		grep -q "^  .*-$tid .* reply: status=500" "$f" || { diag "$fmt: no failing event in $f"; return 1; }
		grep -q -- "-$tid .* step: n=6 " "$f" && { diag "$fmt: a step after the failure is in the snapshot"; return 1; }
		steps "$f" "$tid" || { diag "in the $fmt snapshot $f"; return 1; }
	done
	must "$FDR" -s ksnap destroy
}

test_stop_start() {
	must "$FDR" stop || return 1
	[ "$(cat "$K/tracing_on")" = 0 ] || { diag "kernel tracing_on is not 0 after fdr stop"; return 1; }
	must "$FDR" start || return 1
	[ "$(cat "$K/tracing_on")" = 1 ] || { diag "kernel tracing_on is not 1 after fdr start"; return 1; }
}

test_destroy() {
	must "$FDR" destroy || return 1
	[ ! -e "$K" ] || { diag "$K still exists after fdr destroy"; return 1; }
	[ -z "$(ls "$FDR_KERNEL_REGISTRY")" ] || { diag "registry not empty: $(ls "$FDR_KERNEL_REGISTRY")"; return 1; }
}

test_discard_mode() {
	local inst
	must "$FDR" start -m discard -k sched:sched_switch || return 1
	inst=$(linked kt)
	[ "$(cat "$TRACEFS/instances/$inst/options/overwrite")" = 0 ] ||
		{ diag "options/overwrite is not 0 in discard mode"; return 1; }
	must "$FDR" destroy
}

test_bad_event() {
	"$FDR" -s bad start -k 'sched:sched_switch,nosuch:nothing' >"$OUT" 2>"$ERR"
	rc=$?
	expect_rc 1 || return 1
	expect_err "kernel refused event 'nosuch:nothing'" || return 1
	ls "$TRACEFS/instances" | grep -q '^fdr-bad-' && { diag "an instance was left"; return 1; }
	# fdr's own session is started all the same
	run "$FDR" -s bad stat
	expect_out '^tracing_on: 1' || return 1
	"$FDR" -s bad destroy
	# a clock with no kernel twin is refused, nothing made
	"$FDR" -s bad start -C uptime -k sched:sched_switch >"$OUT" 2>"$ERR"
	rc=$?
	expect_rc 1 || return 1
	expect_err "trace_clock uptime has no kernel clock on its time base" || return 1
	ls "$TRACEFS/instances" | grep -q '^fdr-bad-' && { diag "an instance was made"; return 1; }
	"$FDR" -s bad destroy
}

# fdr start killed after it made the instance and before it linked it (it
# blocks opening a FIFO where it writes the link): the next fdr command removes it
test_killed() {
	local pid i inst=
	must "$FDR" -s kill start || return 1
	mkfifo "$FDR_ROOT/kill/.kernel.tmp" || return 1
	"$FDR" -s kill start -k sched:sched_switch >/dev/null 2>&1 &
	pid=$!
	bg_add "$pid"
	for i in $(seq 100); do
		inst=$(ls "$TRACEFS/instances" | grep '^fdr-kill-')
		[ -n "$inst" ] && [ -e "$FDR_KERNEL_REGISTRY/$inst" ] && break
		sleep 0.05
	done
	[ -n "$inst" ] || { diag "fdr start -k made no instance"; return 1; }
	sleep 0.2
	kill -9 "$pid"
	wait "$pid" 2>/dev/null
	[ -d "$TRACEFS/instances/$inst" ] || { diag "the instance is not there after the kill"; return 1; }
	rm -f "$FDR_ROOT/kill/.kernel.tmp"
	must "$FDR" -s kill stat || return 1
	expect_err "removed the kernel instance $inst" || return 1
	[ ! -e "$TRACEFS/instances/$inst" ] || { diag "$inst is still there"; return 1; }
	"$FDR" -s kill destroy
}

# a linked session's directory removed behind fdr's back
test_session_gone() {
	local inst
	must "$FDR" -s gone start -k sched:sched_switch || return 1
	inst=$(linked gone)
	rm -rf "${FDR_ROOT:?}/gone"
	run "$FDR" -s other list # no such session: the left-over instance goes all the same
	[ ! -e "$TRACEFS/instances/$inst" ] || { diag "$inst is still there"; return 1; }
	expect_err "removed the kernel instance $inst" || return 1
	# the bystander (fdr-*, not made by fdr) is untouched
	[ -d "$TRACEFS/instances/$BYSTANDER" ] || { diag "the bystander instance was removed"; return 1; }
}

# a session named by a relative -d: its instance is kept by fdr commands run
# from elsewhere (the registry holds the real path), removed by its destroy
test_relative_dir() {
	local inst
	(cd "$T" && "$FDR" -d rel start -k sched:sched_switch) >"$OUT" 2>"$ERR" || { show_io; return 1; }
	inst=$(sed -n 's/^instance //p' "$T/rel/kernel")
	[ -n "$inst" ] || { diag "no link in $T/rel/kernel"; return 1; }
	(cd / && "$FDR" -s other list) >/dev/null 2>&1
	[ -d "$TRACEFS/instances/$inst" ] || { diag "$inst was removed by a command run from /"; return 1; }
	(cd "$T" && "$FDR" -d rel destroy) || return 1
	[ ! -e "$TRACEFS/instances/$inst" ] || { diag "$inst is still there after destroy"; return 1; }
}

test_no_rights() {
	NOBODY_ROOT=$(mktemp -d /tmp/fdr-ktime-nobody.XXXXXX) || return 1
	chown 65534:65534 "$NOBODY_ROOT"
	run setpriv --reuid=65534 --regid=65534 --clear-groups \
		env FDR_ROOT="$NOBODY_ROOT/root" "$FDR" -s np start -k sched:sched_switch
	expect_rc 1 || return 1
	expect_err "needs root or write access to the kernel's tracefs.*fdr's own tracing is not affected" || return 1
	run setpriv --reuid=65534 --regid=65534 --clear-groups \
		env FDR_ROOT="$NOBODY_ROOT/root" "$FDR" -s np stat
	expect_out '^tracing_on: 1'
}

test_kernel_untouched() {
	kernel_state "$BYSTANDER" >"$T/kstate.after"
	diff "$T/kstate.before" "$T/kstate.after" >"$T/kdiff" ||
		{ diag "the kernel's top level or the bystander changed:"; sed 's/^/#   /' "$T/kdiff"; return 1; }
}

run_cases "test_link test_interleaved test_export_note test_tree test_pipe test_snapshot_both test_stop_start test_destroy test_discard_mode test_bad_event
	test_killed test_session_gone test_relative_dir test_no_rights test_kernel_untouched" test_link
tap_summary
