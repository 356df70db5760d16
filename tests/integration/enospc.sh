#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# enospc.sh FDR FDR_DEMO - full file systems at every step (issue 12): the
# session's file system full at start, mkdir of an instance, snapshot alloc,
# a resize, event registration by a new process and writing; the output's file
# system full for extract, record and the exports; the first uprobe_events
# definition (the probes file). Each step must fail cleanly
# (non-zero exit, "No space left on device", no partial or temporary file left,
# the settings already in force unchanged), and the traced program must run to
# its normal end (exit 0), never be killed (SIGBUS) by fdr's memory.
#
# Needs root (it mounts small tmpfs); exits 77 (skipped) otherwise. Everything
# it mounts and makes is removed at exit, failures included.
set -u
# shellcheck source=../harness/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib.sh"

FDR=${1:?usage: enospc.sh FDR FDR_DEMO}
DEMO=${2:?usage: enospc.sh FDR FDR_DEMO}
abs_path FDR DEMO

[ "$(id -u)" = 0 ] || skip "enospc needs root to mount small tmpfs file systems"

suite_init enospc
S=$T/sesfs # the session's file system
O=$T/outfs # the output's file system
unmount_all() {
	mountpoint -q "$S" && umount "$S"
	mountpoint -q "$O" && umount "$O"
}
at_exit unmount_all
mkdir "$S" "$O" || exit 1
# room for a few sessions (a control file is about 6.5 MiB) whatever the CPU count
mount -t tmpfs -o size=64m,mode=0700 none "$S" || { echo "enospc: cannot mount tmpfs"; exit 1; }
mount -t tmpfs -o size=4m,mode=0700 none "$O" || { echo "enospc: cannot mount tmpfs"; exit 1; }
export FDR_ROOT=$S/root
D=$S/D # the session of most cases

# ---- helpers ----------------------------------------------------------------

# fill DIR: fill DIR's file system (DIR/fill); unfill DIR: empty it again
fill() {
	dd if=/dev/zero of="$1/fill" bs=4k 2>/dev/null
	sync
	[ "$(df --output=avail -k "$1" | tail -1)" -eq 0 ]
}
unfill() {
	rm -f "$1/fill"
}

used_kb() {
	df --output=used -k "$1" | tail -1
}

# expect_enospc: the last command failed (exit 1) saying "No space left on device"
expect_enospc() {
	if [ "$rc" -eq 0 ] || [ "$rc" -gt 2 ]; then
		diag "exit status $rc, expected 1 (a clean failure, not a crash)"
		show_io
		return 1
	fi
	expect_err 'No space left on device'
}

# no_tmp DIR: nothing temporary left in DIR (recursively)
no_tmp() {
	local left

	left=$(find "$1" -name '.tmp.*' -o -name '*.tmp' -o -name '.fdr-spool*' | head -5)
	[ -z "$left" ] && return 0
	diag "temporary files left: $left"
	return 1
}

demo_ok() {
	run env FDR_DIR="$D" "$DEMO" -n "${1:-200}" -r 0 -q
	if [ "$rc" -ne 0 ]; then
		diag "fdr-demo exited with $rc, expected 0 (135 is SIGBUS)"
		show_io
		return 1
	fi
}

# ---- cases ------------------------------------------------------------------

# A full file system at 'fdr start': ENOSPC, and nothing left behind.
test_start_full() {
	fill "$S" || { diag "could not fill $S"; return 1; }
	fdr -d "$D" start -b 16
	expect_enospc || return 1
	[ ! -e "$D" ] || { diag "$D left behind: $(ls -A "$D")"; return 1; }
	fdr -s full start -b 16
	expect_enospc || return 1
	[ ! -e "$FDR_ROOT/full" ] || { diag "$FDR_ROOT/full left behind"; return 1; }
	no_tmp "$S" || return 1
	unfill "$S"
	# with the room back, the same command works
	fdr -d "$D" start -b 16 -e 'demo:request'
	expect_rc 0
}

# A process registering events and writing into a full file system: unharmed,
# its events registered and recorded.
test_register_and_write_full() {
	fill "$S" || return 1
	demo_ok 300 || return 1
	fdr -d "$D" list
	expect_rc 0 && expect_out '^demo:request \[enabled\]' && expect_out '^demo:db_query$' ||
		return 1
	fdr -d "$D" show
	expect_rc 0 || return 1
	local n
	n=$(grep -c ' request: ' "$OUT")
	[ "$n" -ge 100 ] || { diag "$n demo:request records, expected 300 (at least 100)"; return 1; }
	# a second program, and marker writes by the CLI
	demo_ok 100 || return 1
	fdr -d "$D" write trace_marker hello
	expect_rc 0
}

# mkdir of an instance: ENOSPC, no instance, no file left.
test_mkdir_full() {
	fdr -d "$D" mkdir instances/a
	expect_enospc || return 1
	fdr -d "$D" ls instances
	expect_rc 0 || return 1
	if [ -s "$OUT" ]; then
		diag "instances/ lists: $(cat "$OUT")"
		return 1
	fi
	[ "$(find "$D" -name 'ring.*' | wc -l)" -eq 1 ] ||
		{ diag "ring files: $(ls -A "$D")"; return 1; }
	no_tmp "$S"
}

# The first probe definition makes the probes file: ENOSPC, no probe, no
# event, no file left.
test_probe_full() {
	fdr -d "$D" append uprobe_events 'p:fdrfull/a /bin/true:0x1149 x=%di'
	expect_enospc || return 1
	[ ! -e "$D/probes" ] || { diag "a probes file was left: $(ls -l "$D/probes")"; return 1; }
	fdr -d "$D" cat uprobe_events
	expect_rc 0 || return 1
	[ ! -s "$OUT" ] || { diag "uprobe_events lists: $(cat "$OUT")"; return 1; }
	fdr -d "$D" ls events/fdrfull
	[ "$rc" -ne 0 ] || { diag "events/fdrfull exists"; return 1; }
	no_tmp "$S"
}

# A resize: ENOSPC, the old size and the recorded data stay.
test_resize_full() {
	local before kb
	before=$(grep -c ' request: ' <("$FDR" -d "$D" show))
	kb=$("$FDR" -d "$D" cat buffer_size_kb)
	fdr -d "$D" write buffer_size_kb 64
	expect_enospc || return 1
	fdr -d "$D" cat buffer_size_kb
	expect_rc 0 && expect_out "^$kb\$" || return 1
	fdr -d "$D" start -b 64
	expect_enospc || return 1
	# the largest size the message states gets as far as allocating it
	fdr -d "$D" write buffer_size_kb 4177912
	expect_enospc || return 1
	fdr -d "$D" write buffer_size_kb 4177913
	expect_rc 2 && expect_err 'from 1 to 4177912' || return 1
	fdr -d "$D" cat tracing_on
	expect_out '^1$' || return 1
	[ "$(grep -c ' request: ' <("$FDR" -d "$D" show))" -eq "$before" ] ||
		{ diag "the recorded data changed after a refused resize"; return 1; }
	no_tmp "$S"
}

# snapshot alloc: ENOSPC (not ENOMEM), nothing allocated, the snapshot still
# "freed", and the fs usage what it was.
test_snapshot_alloc_full() {
	local u0
	u0=$(used_kb "$S")
	fdr -d "$D" snapshot alloc
	expect_enospc || return 1
	fdr -d "$D" snapshot
	expect_enospc || return 1
	fdr -d "$D" write snapshot 1
	expect_enospc || return 1
	fdr -d "$D" stat
	expect_out '^snapshot: freed' || return 1
	[ "$(used_kb "$S")" -eq "$u0" ] ||
		{ diag "used $(used_kb "$S") KiB after the failure, $u0 before"; return 1; }
	demo_ok 100
}

# Room for one CPU's spare buffer but not all: all or nothing.
test_snapshot_alloc_partial() {
	local ncpu kb u0
	ncpu=$("$FDR" -d "$D" stat | grep -c '^cpu[0-9]*: buffer_size_kb')
	if [ "$ncpu" -lt 2 ]; then
		echo "# one CPU: no partial allocation to undo"
		return 0
	fi
	# a CPU's spare buffer: its sub-buffers (6 of 4 KiB for 16 KiB)
	kb=$(((ncpu - 1) * 24 + 12))
	unfill "$S"
	fill "$S" || return 1
	truncate -s "-${kb}K" "$S/fill" || return 1
	u0=$(used_kb "$S")
	fdr -d "$D" snapshot alloc
	expect_enospc || return 1
	[ "$(used_kb "$S")" -eq "$u0" ] ||
		{ diag "used $(used_kb "$S") KiB after the failure, $u0 before"; return 1; }
	fdr -d "$D" stat
	expect_out '^snapshot: freed' || return 1
	unfill "$S"
	fill "$S"
}

# The settings in force when the file system filled are still in force, and a
# session made with room takes snapshots; freeing them on a full fs is clean.
test_settings_kept() {
	fdr -d "$D" list
	expect_out '^demo:request \[enabled\]' || return 1
	unfill "$S"
	fdr -d "$D" snapshot alloc
	expect_rc 0 || return 1
	fill "$S" || return 1
	demo_ok 100 || return 1
	fdr -d "$D" snapshot
	expect_rc 0 || return 1
	demo_ok 100 || return 1
	fdr -d "$D" snapshot free
	expect_rc 0 || return 1
	demo_ok 100 || return 1
	fdr -d "$D" stat
	expect_out '^snapshot: freed'
}

# Outputs on a full file system: a clear error, no partial file.
test_extract_full() {
	fill "$O" || return 1
	fdr -d "$D" extract -o "$O/x.dat"
	expect_enospc || return 1
	[ ! -e "$O/x.dat" ] || { diag "partial $O/x.dat left ($(stat -c %s "$O/x.dat") bytes)"; return 1; }
	no_tmp "$O"
}

# Room for the per-CPU spool files but not for the trace.dat written after
# them: the failure comes late, and still leaves no partial file.
test_extract_late_full() {
	local sz
	unfill "$O"
	fdr -d "$D" extract -o "$O/x.dat"
	expect_rc 0 || return 1
	sz=$(stat -c %s "$O/x.dat")
	rm -f "$O/x.dat"
	fill "$O" || return 1
	truncate -s "-$((sz * 3 / 2))" "$O/fill" || return 1
	fdr -d "$D" extract -o "$O/x.dat"
	expect_enospc || return 1
	[ ! -e "$O/x.dat" ] || { diag "partial $O/x.dat left ($(stat -c %s "$O/x.dat") of $sz bytes)"; return 1; }
	no_tmp "$O" || return 1
	unfill "$O"
	fill "$O"
}

# fdr snapshot save into a full directory: it stops with the error, and leaves
# no partial snapshot file.
test_snapshot_save_full() {
	local pid i
	unfill "$S"
	mkdir -p "$O/snaps" || return 1
	fill "$O" || return 1
	"$FDR" -d "$D" snapshot save "$O/snaps" >"$OUT" 2>"$ERR" &
	pid=$!
	# the saver allocates and attaches, then a snapshot is taken for it to save
	for ((i = 0; i < 50; i++)); do
		grep -q 'saving every snapshot' "$ERR" && break
		sleep 0.1
	done
	"$FDR" -d "$D" snapshot >/dev/null 2>&1
	for ((i = 0; i < 100; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$pid" 2>/dev/null; then
		kill -INT "$pid"
		wait "$pid"
		diag "the saver went on after it could not write"
		return 1
	fi
	wait "$pid"
	rc=$?
	expect_enospc || return 1
	no_tmp "$O" || return 1
	[ -z "$(ls -A "$O/snaps")" ] || { diag "left in snaps/: $(ls -A "$O/snaps")"; return 1; }
	rmdir "$O/snaps"
	fdr -d "$D" snapshot free
	fill "$S"
}

# fdr record on a full file system: non-zero exit, the message, no partial file
# (it creates its file before recording: nothing could be written).
test_record_full() {
	fdr -d "$D" record -o "$O/r.dat" -- "$DEMO" -n 100 -r 0 -q
	expect_enospc || return 1
	if [ -e "$O/r.dat" ]; then
		diag "partial $O/r.dat left ($(stat -c %s "$O/r.dat") bytes)"
		rm -f "$O/r.dat"
		return 1
	fi
	no_tmp "$O"
}

test_export_full() {
	local f
	for f in ctf perfetto text; do
		fdr -d "$D" export --format "$f" -o "$O/e.$f"
		expect_enospc || { diag "format $f"; return 1; }
		[ ! -e "$O/e.$f" ] || { diag "partial $O/e.$f left"; return 1; }
	done
	no_tmp "$O" || return 1
	[ "$(ls -A "$O")" = fill ] || { diag "left in $O: $(ls -A "$O")"; return 1; }
}

# A session copied with cp (which turns zero pages into holes) is allocated
# when it is opened: on a full file system a program that attaches to it is
# unharmed (it records nothing there), and with room it records.
test_copied_session_full() {
	local c=$S/C c2=$S/C2 n
	unfill "$S"
	fdr -d "$c" start -b 16 -e 'demo:*'
	expect_rc 0 || return 1
	cp -a --sparse=always "$c" "$c2" || return 1
	if [ "$(du -sk "$c2" | cut -f1)" -ge "$(du -sk "$c" | cut -f1)" ]; then
		echo "# cp made no holes: nothing to check"
		rm -rf "$c2"
		fdr -d "$c" destroy
		return 0
	fi
	fill "$S" || return 1
	run env FDR_DIR="$c2" "$DEMO" -n 100 -r 0 -q
	[ "$rc" -eq 0 ] || { diag "fdr-demo in a copied session on a full fs: exit $rc (135: SIGBUS)"; return 1; }
	fdr -d "$c2" show
	expect_enospc || return 1
	unfill "$S"
	run env FDR_DIR="$c2" "$DEMO" -n 100 -r 0 -q
	expect_rc 0 || return 1
	fdr -d "$c2" show
	expect_rc 0 || return 1
	n=$(grep -c ' request: ' "$OUT")
	[ "$n" -eq 100 ] || { diag "$n demo:request records in the copy, expected 100"; return 1; }
	fdr -d "$c2" destroy
	# the same with the control file allocated by a first opener (which maps
	# no ring) while there was room: the program then finds the ring's holes
	cp -a --sparse=always "$c" "$c2" || return 1
	fdr -d "$c2" cat tracing_on
	expect_rc 0 || return 1
	fill "$S" || return 1
	run env FDR_DIR="$c2" "$DEMO" -n 100 -r 0 -q
	[ "$rc" -eq 0 ] || { diag "fdr-demo with a copied ring on a full fs: exit $rc (135: SIGBUS)"; return 1; }
	unfill "$S"
	fdr -d "$c2" destroy
	fdr -d "$c" destroy
	expect_rc 0
}

# With the room back, everything works again.
test_room_back() {
	unfill "$S"
	unfill "$O"
	fdr -d "$D" mkdir instances/a
	expect_rc 0 || return 1
	fdr -d "$D" write buffer_size_kb 32
	expect_rc 0 || return 1
	demo_ok 100 || return 1
	fdr -d "$D" extract -o "$O/x.dat"
	expect_rc 0 || return 1
	fdr -d "$D" destroy
	expect_rc 0
}

run_cases "test_start_full test_register_and_write_full test_mkdir_full test_probe_full
	test_resize_full
	test_snapshot_alloc_full test_snapshot_alloc_partial test_settings_kept
	test_extract_full test_extract_late_full test_snapshot_save_full" test_start_full
if [ "$fail" -eq 0 ]; then
	run_cases "test_record_full test_export_full test_copied_session_full test_room_back"
fi
tap_summary
