#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# fuse.sh FDR FDR_DEMO FUSE_IO - `fdr mount`: the control tree served through
# FUSE and driven with echo, cat, mkdir and rmdir, the way the kernel's ftrace
# selftests (tools/testing/selftests/ftrace/test.d) drive tracefs. FUSE_IO makes
# the system calls the shell cannot (select, O_NONBLOCK reads, pread).
#
# Runs in a private FDR_ROOT (made with mktemp, removed at exit); every mount is
# unmounted at exit, whatever happens. Exits 77 (skipped), saying why, where FUSE
# cannot be used: no /dev/fuse, no fusermount3, or mounting not permitted.
#
# Prints "ok N - name" / "not ok N - name" per case, then "N passed, N failed".
set -u
# shellcheck source=../harness/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib.sh"

FDR=${1:?usage: fuse.sh FDR FDR_DEMO FUSE_IO}
DEMO=${2:?usage: fuse.sh FDR FDR_DEMO FUSE_IO}
FUSE_IO=${3:?usage: fuse.sh FDR FDR_DEMO FUSE_IO}
abs_path FDR DEMO FUSE_IO

[ -c /dev/fuse ] || skip "no /dev/fuse here (FUSE unavailable)"
[ -r /dev/fuse ] && [ -w /dev/fuse ] || skip "/dev/fuse is not usable by $(id -un)"
command -v fusermount3 >/dev/null || skip "fusermount3 not installed (Debian package fuse3)"
"$FDR" mount 2>&1 | grep -q "built without FUSE" && skip "this fdr was built without libfuse3"

suite_init fuse
MOUNTS=()
unmount_all() {
	local m
	for m in "${MOUNTS[@]}"; do
		grep -qs " $m fuse" /proc/self/mounts && fusermount3 -u -z "$m" 2>/dev/null
	done
}
at_exit unmount_all
export FDR_SESSION=fuse

M=$T/mnt
mkdir -p "$M"

is_mounted() { # DIR
	grep -qs " $1 fuse.fdr " /proc/self/mounts
}

# mount_fdr DIR [ARGS...]: fdr mount in the background; the mount is ready on return
mount_fdr() {
	local dir=$1
	shift
	MOUNTS+=("$dir")
	"$FDR" mount "$@" "$dir" >"$OUT" 2>"$ERR" || return 1
	is_mounted "$dir"
}

# sh_write PATH VALUE [>>]: echo VALUE > $M/PATH (or >>), as a shell user does
sh_write() {
	if [ "${3:-}" = ">>" ]; then
		run bash -c 'echo "$1" >> "$2"' sh "$2" "$M/$1"
	else
		run bash -c 'echo "$1" > "$2"' sh "$2" "$M/$1"
	fi
}

# expect_errno TEXT: the last command failed, and stderr says strerror TEXT
expect_errno() {
	if [ "$rc" -eq 0 ] || ! grep -q -- "$1" "$ERR"; then
		diag "expected a failure with '$1' (status $rc)"
		show_io
		return 1
	fi
}

# file_is PATH TEXT: cat $M/PATH prints exactly TEXT
file_is() {
	local got
	got=$(cat "$M/$1" 2>&1)
	[ "$got" = "$2" ] && return 0
	diag "cat $1: '$got', expected '$2'"
	return 1
}

file_has() { # PATH REGEX
	grep -Eq -- "$2" "$M/$1" && return 0
	diag "$1 lacks /$2/:"
	head -20 "$M/$1" | sed 's/^/#   /'
	return 1
}

file_lacks() { # PATH REGEX
	grep -Eq -- "$2" "$M/$1" || return 0
	diag "$1 must not match /$2/"
	return 1
}

#
# check_error PATH 'VALUE-WITH-^' [LOCATION]: echo VALUE > PATH must fail with
# EINVAL, and error_log's entry must put its caret under the byte the ^ precedes
# (the selftests' check: the last line is 13 + pos bytes long).
#
check_error() {
	local path=$1 loc=${3:-$1} pos cmd n
	pos=$(printf '%s' "${2%%^*}" | wc -c)
	cmd=$(printf '%s' "$2" | tr -d '^')
	: >"$M/error_log" || return 1
	sh_write "$path" "$cmd"
	expect_errno "Invalid argument" || return 1
	cat "$M/error_log" >"$OUT"
	if ! grep -q -- "$loc: error: " "$OUT" || ! grep -qxF -- "  Command: $cmd" "$OUT"; then
		diag "error_log lacks the '$loc' entry for '$cmd'"
		show_io
		return 1
	fi
	n=$(tail -n 1 "$OUT" | wc -c)
	if [ "$n" -ne $((13 + pos)) ]; then
		diag "error_log caret line is $n bytes, expected $((13 + pos))"
		show_io
		return 1
	fi
}

# count of trace records (lines that are not '#' comments) in FILE
nr_records() {
	grep -vc '^#' "$1"
}

# ---- cases ---------------------------------------------------------------------------

test_mount_ready() {
	"$FDR" start >/dev/null 2>&1 || return 1
	# registers the demo events, then nothing more is recorded until enabled
	"$DEMO" -n 1 -q 2>/dev/null || return 1
	if ! mount_fdr "$M"; then
		if grep -qiE "not permitted|permission denied|fusermount" "$ERR"; then
			cat "$ERR"
			skip "mounting FUSE is not permitted here"
		fi
		diag "fdr mount failed"
		show_io
		return 1
	fi
	# fdr mount returned: the tree is there at once
	[ -f "$M/trace" ] && [ -d "$M/events/demo/request" ] && [ -d "$M/instances" ] || {
		diag "tree not visible after fdr mount returned"
		ls -la "$M" | sed 's/^/#   /'
		return 1
	}
}

test_modes_sizes_owner() {
	local f want got
	for f in "trace 640 -" "trace_pipe 440 -" "trace_marker 220 -" "events 750 d" \
		"instances 750 d" "events/demo/request/format 440 -" "set_event 640 -"; do
		set -- $f
		got=$(stat -c '%a %s %u %g %F' "$M/$1") || return 1
		if [ "$3" = d ]; then
			want="$2 0 $(id -u) $(id -g) directory"
		else
			want="$2 0 $(id -u) $(id -g) regular empty file"
		fi
		if [ "$got" != "$want" ]; then
			diag "stat $1: '$got', expected '$want'"
			return 1
		fi
	done
	# size 0, yet cat gets the content (direct I/O)
	file_has README "tracing mini-HOWTO|README|trace" || return 1
	file_has events/demo/request/format "^name: request" || return 1
	file_has events/demo/request/id "^[0-9]+$" || return 1
}

test_ls_matches_tree() {
	local a b
	a=$(ls "$M" | sort)
	b=$("$FDR" ls | sed 's,/$,,' | sort)
	[ -n "$a" ] && [ "$a" = "$b" ] && return 0
	diag "ls of the mount differs from fdr ls"
	diff <(echo "$a") <(echo "$b") | sed 's/^/#   /'
	return 1
}

test_set_event() {
	sh_write set_event 'demo:request'
	expect_rc 0 || return 1
	file_is set_event "demo:request" || return 1
	file_is events/demo/request/enable 1 || return 1
	# >> appends
	sh_write set_event 'demo:cache' '>>'
	expect_rc 0 || return 1
	file_is set_event "$(printf 'demo:request\ndemo:cache')" || return 1
	# > replaces (O_TRUNC at open clears first, as on tracefs)
	sh_write set_event 'demo:db_query'
	expect_rc 0 || return 1
	file_is set_event "demo:db_query" || return 1
	sh_write set_event '!demo:db_query' '>>'
	expect_rc 0 || return 1
	file_is set_event "" || return 1
	sh_write set_event 'demo:*'
	file_is events/demo/enable 1 || return 1
	: >"$M/set_event" || return 1
	file_is set_event "" || return 1
	file_is events/demo/enable 0 || return 1
}

test_event_enable_files() {
	sh_write events/demo/request/enable 1
	expect_rc 0 || return 1
	file_is events/demo/request/enable 1 || return 1
	file_is events/demo/enable X || return 1
	file_is set_event "demo:request" || return 1
	sh_write events/demo/enable 1
	file_is events/demo/enable 1 || return 1
	sh_write events/enable 0
	file_is events/demo/request/enable 0 || return 1
	file_is events/enable 0 || return 1
	check_error events/demo/request/enable '^2' enable || return 1
}

test_check_errors() {
	check_error tracing_on '12^x' || return 1
	check_error tracing_on '1^k' || return 1
	check_error buffer_size_kb '12^a' || return 1
	check_error trace_clock '^bogus' || return 1
	check_error trace_options 'no^bogus' || return 1
	check_error set_event '!^nosuch:event' || return 1
}

test_filter() {
	sh_write events/demo/request/filter 'status >= 500'
	expect_rc 0 || return 1
	file_is events/demo/request/filter 'status >= 500' || return 1
	sh_write events/demo/request/filter 0
	expect_rc 0 || return 1
	file_is events/demo/request/filter none || return 1
	# a bad filter: EINVAL, and the same error_log entry (message, command,
	# caret) as the same write through the CLI
	"$FDR" write error_log '' || return 1
	"$FDR" write events/demo/request/filter 'statuz >= 500' 2>/dev/null
	sed 's/^\[[ 0-9.]*\] //' "$M/error_log" >"$T/cli.log"
	: >"$M/error_log"
	sh_write events/demo/request/filter 'statuz >= 500'
	expect_errno "Invalid argument" || return 1
	file_has error_log "Field not found" || return 1
	file_has error_log "Command: statuz >= 500" || return 1
	tail -n 1 "$M/error_log" | grep -qx ' *^' || { diag "no caret line"; return 1; }
	sed 's/^\[[ 0-9.]*\] //' "$M/error_log" >"$T/fuse.log"
	cmp -s "$T/cli.log" "$T/fuse.log" || {
		diag "error_log differs from the CLI's:"
		diff "$T/cli.log" "$T/fuse.log" | sed 's/^/#   /'
		return 1
	}
	# the filter works: only failing requests are recorded
	sh_write events/demo/request/filter 'status >= 500'
	sh_write set_event demo:request
	: >"$M/trace"
	"$DEMO" -n 300 -q 2>/dev/null
	cat "$M/trace" >"$OUT"
	if ! grep -q ' request: status=5' "$OUT" || grep ' request: ' "$OUT" | grep -qv 'status=5'; then
		diag "trace after the filter:"
		show_io
		return 1
	fi
	sh_write events/demo/request/filter 0
	: >"$M/set_event"
}

test_trigger() {
	sh_write events/demo/request/trigger 'snapshot if status >= 500'
	expect_rc 0 || return 1
	file_has events/demo/request/trigger '^snapshot:unlimited if status >= 500' || return 1
	sh_write events/demo/request/trigger 'traceoff:1' '>>'
	expect_rc 0 || return 1
	file_has events/demo/request/trigger '^traceoff:count=1' || return 1
	sh_write events/demo/request/trigger '!traceoff:1' '>>'
	expect_rc 0 || return 1
	file_lacks events/demo/request/trigger '^traceoff' || return 1
	sh_write events/demo/request/trigger '!snapshot if status >= 500' '>>'
	expect_rc 0 || return 1
	file_lacks events/demo/request/trigger '^snapshot' || return 1
	: >"$M/error_log"
	sh_write events/demo/request/trigger 'bogus'
	expect_errno "Invalid argument" || return 1
	file_has error_log "trigger" || return 1
}

test_trace_and_marker() {
	: >"$M/trace"
	[ "$(nr_records "$M/trace")" -eq 0 ] || { diag "trace not cleared"; return 1; }
	echo "hello from the shell" >"$M/trace_marker" || return 1
	file_has trace "tracing_mark_write: hello from the shell" || return 1
	# reading 'trace' does not consume
	file_has trace "hello from the shell" || return 1
	: >"$M/trace"
	file_lacks trace "hello from the shell" || return 1
}

# trace_marker written through the mount names the writer, as the kernel does:
# its comm and pid, on the CPU it ran on; not the FUSE server
test_marker_names_the_writer() {
	local cpu pid line

	: >"$M/trace"
	for cpu in $(seq 0 $(($(nproc) - 1))); do
		# the shell's own pid, then the write from that same shell, pinned
		pid=$(taskset -c "$cpu" sh -c 'echo $$; echo "from cpu '"$cpu"'" >"$1/trace_marker"' _ "$M") ||
			{ diag "the write on CPU $cpu failed"; return 1; }
		line=$(grep "tracing_mark_write: from cpu $cpu\$" "$M/trace")
		[ -n "$line" ] || { diag "no marker from CPU $cpu:"; head -5 "$M/trace" | sed 's/^/#   /'; return 1; }
		case $line in
		*"sh-$pid "*"[$(printf %03d "$cpu")]"*) ;;
		*) diag "marker of sh-$pid on CPU $cpu shows as: $line"; return 1 ;;
		esac
	done
	grep -q "^$pid " "$M/saved_tgids" || { diag "saved_tgids lacks $pid"; return 1; }
}

test_instances() {
	: >"$M/set_event"
	mkdir "$M/instances/foo" || return 1
	[ -d "$M/instances/foo" ] && [ -f "$M/instances/foo/trace_pipe" ] || return 1
	[ "$(ls "$M/instances")" = foo ] || { diag "instances: $(ls "$M/instances")"; return 1; }
	run mkdir "$M/instances/foo"
	expect_errno "File exists" || return 1
	run mkdir "$M/events/foo"
	expect_errno "Operation not permitted" || return 1
	echo demo:request >"$M/instances/foo/set_event" || return 1
	file_is instances/foo/set_event demo:request || return 1
	file_is set_event "" || return 1
	# busy while a reader holds one of its files open
	exec 8<"$M/instances/foo/trace"
	run rmdir "$M/instances/foo"
	exec 8<&-
	expect_errno "Device or resource busy" || return 1
	rmdir "$M/instances/foo" || return 1
	[ ! -e "$M/instances/foo" ] || return 1
	run rmdir "$M/instances/foo"
	expect_errno "No such file or directory" || return 1
}

test_snapshot() {
	: >"$M/trace"
	echo "before the snapshot" >"$M/trace_marker" || return 1
	echo 1 >"$M/snapshot" || return 1
	file_has snapshot "before the snapshot" || return 1
	# the live buffer was swapped out: the marker is only in the snapshot
	file_lacks trace "before the snapshot" || return 1
	echo 2 >"$M/snapshot" || return 1
	file_lacks snapshot "before the snapshot" || return 1
	echo 0 >"$M/snapshot" || return 1
	file_has snapshot "[Ss]napshot is freed|not allocated|# \*\* Snapshot" || return 1
	run bash -c 'echo 1 > "$1"' sh "$M/per_cpu/cpu999/snapshot"
	[ "$rc" -ne 0 ] || return 1
}

test_error_codes() {
	# like tracefs: no new files; a read-only file refuses writers
	run bash -c 'echo x > "$1"' sh "$M/no_such_file"
	expect_errno "Permission denied" || return 1
	[ ! -e "$M/no_such_file" ] || return 1
	run rm -f "$M/trace"
	expect_errno "Operation not permitted" || return 1
	run cat "$M/no_such_file"
	expect_errno "No such file or directory" || return 1
	run cat "$M/trace_marker"
	expect_errno "Invalid argument\|Permission denied" || return 1
	sh_write tracing_on 1
	expect_rc 0 || return 1
}

test_pread_generated() {
	run "$FUSE_IO" pread "$M/events/demo/request/format"
	expect_rc 0 || return 1
	grep -q "^same [1-9]" "$OUT" || { show_io; return 1; }
	echo "pread check" >"$M/trace_marker"
	run "$FUSE_IO" pread "$M/trace"
	expect_rc 0 || return 1
	: >"$M/trace"
}

test_trace_pipe_blocks() {
	: >"$M/trace"
	# nothing to read: it blocks (still running after 1 s)...
	run_for 1 TERM cat "$M/trace_pipe"
	if [ "$ended" -eq 1 ]; then
		diag "cat trace_pipe did not block (status $rc)"
		show_io
		return 1
	fi
	# ... and SIGTERM ended it (interrupted, not killed)
	[ "$rc" -ne 137 ] || { diag "blocked read not interruptible"; return 1; }
	# O_NONBLOCK: EAGAIN
	run "$FUSE_IO" read "$M/trace_pipe" 4096 -n
	grep -qx EAGAIN "$OUT" || { diag "O_NONBLOCK read"; show_io; return 1; }
	run dd if="$M/trace_pipe" iflag=nonblock bs=4096 count=1
	expect_errno "Resource temporarily unavailable" || return 1
}

test_trace_pipe_other_ops_go_on() {
	local pid got
	cat "$M/trace_pipe" >"$T/pipe.out" 2>&1 &
	pid=$!
	bg_add "$pid"
	sleep 0.3
	# a blocked trace_pipe reader does not stall the rest of the tree
	got=$(timeout 5 cat "$M/tracing_on")
	if [ "$got" != 1 ]; then
		diag "cat tracing_on while trace_pipe blocks: '$got'"
		kill "$pid"
		return 1
	fi
	echo "through the pipe" >"$M/trace_marker"
	sleep 0.5
	kill -TERM "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	grep -q "tracing_mark_write: through the pipe" "$T/pipe.out" || {
		diag "the blocked reader did not get the marker"
		sed 's/^/#   /' "$T/pipe.out"
		return 1
	}
	# consumed: neither trace_pipe nor trace has it any more
	run "$FUSE_IO" read "$M/trace_pipe" 4096 -n
	grep -qx EAGAIN "$OUT" || { diag "trace_pipe not consumed"; show_io; return 1; }
	file_lacks trace "through the pipe" || return 1
}

test_trace_pipe_select() {
	# no data: select() times out
	run "$FUSE_IO" select "$M/trace_pipe" 300
	grep -qx timeout "$OUT" || { diag "select with no data"; show_io; return 1; }
	# data arrives while select() waits: it wakes and the read gets it
	(sleep 0.5 && echo "wake up" >"$M/trace_marker") &
	run "$FUSE_IO" select "$M/trace_pipe" 5000
	wait
	expect_rc 0 || return 1
	grep -q "^ready, read [1-9]" "$OUT" || { show_io; return 1; }
}

test_trace_pipe_raw_pages() {
	local cpu nr found=0 ss
	ss=$(($(cat "$M/buffer_subbuf_size_kb") * 1024))
	echo 0 >"$M/events/demo/request/filter"
	: >"$M/trace"
	echo demo:request >"$M/set_event"
	"$DEMO" -n 20 -q 2>/dev/null
	nr=$(ls -d "$M"/per_cpu/cpu* | wc -l)
	for ((cpu = 0; cpu < nr; cpu++)); do
		run "$FUSE_IO" raw "$M/per_cpu/cpu$cpu/trace_pipe_raw" "$ss" -n
		if grep -qx EAGAIN "$OUT"; then
			continue
		fi
		# one read of the page size: one whole page, with data in it
		if ! grep -Eq "^$ss commit [1-9][0-9]*$" "$OUT"; then
			diag "cpu$cpu trace_pipe_raw read: $(cat "$OUT" "$ERR")"
			return 1
		fi
		found=1
	done
	: >"$M/set_event"
	[ "$found" -eq 1 ] || { diag "no CPU had a page"; return 1; }
}

test_unmount_ends_server() {
	local d=$T/mnt-u
	mkdir -p "$d"
	mount_fdr "$d" || { show_io; return 1; }
	fusermount3 -u "$d" || return 1
	! is_mounted "$d" || return 1
	# the server is gone: no fdr process still serves that directory
	sleep 0.3
	! pgrep -f "fdr mount $d" >/dev/null || { diag "server still running"; return 1; }
}

test_sigterm_sigint_clean() {
	local d=$T/mnt-s sig pid i
	mkdir -p "$d"
	for sig in TERM INT; do
		MOUNTS+=("$d")
		# a background job of a script starts with SIGINT ignored: undo that
		(
			trap - INT
			exec "$FDR" mount -f "$d"
		) >"$OUT" 2>"$ERR" &
		pid=$!
		bg_add "$pid"
		for ((i = 0; i < 50; i++)); do
			is_mounted "$d" && break
			sleep 0.1
		done
		is_mounted "$d" || { diag "fdr mount -f did not mount"; show_io; return 1; }
		[ -f "$d/trace" ] || return 1
		kill -s "$sig" "$pid"
		wait "$pid"
		rc=$?
		expect_rc 0 || return 1
		! is_mounted "$d" || { diag "still mounted after SIG$sig"; return 1; }
	done
}

test_sigkill_keeps_session() {
	local d=$T/mnt-k pid i
	mkdir -p "$d"
	MOUNTS+=("$d")
	"$FDR" mount -f "$d" >/dev/null 2>&1 &
	pid=$!
	bg_add "$pid"
	for ((i = 0; i < 50; i++)); do
		is_mounted "$d" && break
		sleep 0.1
	done
	is_mounted "$d" || return 1
	: >"$d/trace"
	echo "recorded through the mount" >"$d/trace_marker" || return 1
	kill -KILL "$pid"
	wait "$pid" 2>/dev/null
	run cat "$d/tracing_on"
	expect_errno "Transport endpoint is not connected" || return 1
	fusermount3 -u -z "$d" || return 1
	! is_mounted "$d" || return 1
	run "$FDR" show
	expect_rc 0 || return 1
	grep -q "tracing_mark_write: recorded through the mount" "$OUT" || {
		diag "fdr show after the server was killed:"
		show_io
		return 1
	}
	# and the tree mounts again
	mount_fdr "$d" || return 1
	file_has trace "recorded through the mount" || return 1
	fusermount3 -u "$d"
}

# -o gid=N hands the tree to a group, as tracefs's mount option does: every file
# is that group's, so a member writes what its mode lets the group write; chown
# and chgrp change one file's owner (root only, as the kernel checks)
test_gid_and_chown() {
	local g=4321 d ret=0
	[ "$(id -u)" = 0 ] && command -v setpriv >/dev/null ||
		{ echo "# skip: needs root and setpriv"; return 0; }
	# a mountpoint other users can reach ($T is private)
	d=$(mktemp -d "${TMPDIR:-/tmp}/fdr-fuse-gid.XXXXXX") || return 1
	chmod 755 "$d"
	if ! mount_fdr "$d" --allow-other -o gid=$g; then
		diag "fdr mount -o gid=$g failed"; show_io; rmdir "$d"; return 1
	fi
	[ "$(stat -c %g "$d/trace_marker")" = $g ] && [ "$(stat -c %g "$d/events")" = $g ] &&
		[ "$(stat -c %u "$d/trace")" = 0 ] ||
		{ diag "owners: $(stat -c '%n %u:%g' "$d/trace_marker" "$d/events" "$d/trace")"; ret=1; }
	# a member of the group writes trace_marker (0220); another user cannot
	setpriv --reuid=$g --regid=$g --clear-groups sh -c 'echo by-the-group >"$1/trace_marker"' _ "$d" ||
		{ diag "a member of group $g cannot write trace_marker"; ret=1; }
	if setpriv --reuid=$((g + 1)) --regid=$((g + 1)) --clear-groups \
		sh -c 'echo by-another >"$1/trace_marker"' _ "$d" 2>/dev/null; then
		diag "a user outside group $g wrote trace_marker"; ret=1
	fi
	"$FDR" show | grep -q 'tracing_mark_write: by-the-group$' || { diag "the group's marker is not recorded"; ret=1; }
	"$FDR" show | grep -q 'by-another' && { diag "another user's marker is recorded"; ret=1; }
	# chown/chgrp of one file; a user may not give it away
	chgrp 777 "$d/tracing_on" && chown 55:66 "$d/trace" ||
		{ diag "root could not chown/chgrp"; ret=1; }
	[ "$(stat -c %u:%g "$d/tracing_on")" = 0:777 ] && [ "$(stat -c %u:%g "$d/trace")" = 55:66 ] &&
		[ "$(stat -c %g "$d/trace_pipe")" = $g ] ||
		{ diag "after chown: $(stat -c '%n %u:%g' "$d/tracing_on" "$d/trace" "$d/trace_pipe")"; ret=1; }
	if setpriv --reuid=$g --regid=$g --clear-groups chgrp $g "$d/trace" 2>/dev/null; then
		diag "a user changed the group of a file it does not own"; ret=1
	fi
	chown 0:0 "$d/no-such-file" 2>/dev/null && { diag "chown of a missing file succeeded"; ret=1; }
	fusermount3 -u "$d"
	rmdir "$d"
	return $ret
}

test_mount_errors() {
	run "$FDR" mount "$T/no-such-dir"
	expect_rc 1 || return 1
	grep -q "^fdr mount: .*no-such-dir" "$ERR" || { show_io; return 1; }
	run "$FDR" mount
	expect_rc 2 || return 1
	run "$FDR" -s no-such-session mount "$M"
	expect_rc 1 || return 1
	grep -q "no session" "$ERR" || { show_io; return 1; }
}

cases="
test_mount_ready
test_modes_sizes_owner
test_ls_matches_tree
test_set_event
test_event_enable_files
test_check_errors
test_filter
test_trigger
test_trace_and_marker
test_marker_names_the_writer
test_instances
test_snapshot
test_error_codes
test_pread_generated
test_trace_pipe_blocks
test_trace_pipe_other_ops_go_on
test_trace_pipe_select
test_trace_pipe_raw_pages
test_unmount_ends_server
test_sigterm_sigint_clean
test_sigkill_keeps_session
test_gid_and_chown
test_mount_errors
"

cd "$T" || exit 1
# the first case mounts; nothing else can run without it
run_cases "$cases" test_mount_ready
fusermount3 -u "$M" 2>/dev/null
tap_summary
