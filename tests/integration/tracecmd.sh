#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# tracecmd.sh FDR FDR_DEMO FDR_TRACECMD - trace-cmd (libtracefs, libtraceevent)
# on a session mounted with 'fdr mount', through scripts/fdr-tracecmd: list -e,
# stat, and extract + report, whose records must be those 'fdr show' prints
# (same count, comms, pids, CPUs, timestamps, events and field values).
#
# Private FDR_ROOT; the mount is undone at exit. Exits 77 (skipped), saying why,
# without trace-cmd, FUSE, or a way to make a private mount namespace.
set -u
# shellcheck source=../harness/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib.sh"

FDR=${1:?usage: tracecmd.sh FDR FDR_DEMO FDR_TRACECMD}
DEMO=${2:?usage: tracecmd.sh FDR FDR_DEMO FDR_TRACECMD}
TC=${3:?usage: tracecmd.sh FDR FDR_DEMO FDR_TRACECMD}
abs_path FDR DEMO TC

command -v trace-cmd >/dev/null || skip "trace-cmd not installed (Debian package trace-cmd)"
[ -c /dev/fuse ] && [ -r /dev/fuse ] && [ -w /dev/fuse ] || skip "no usable /dev/fuse"
command -v fusermount3 >/dev/null || skip "fusermount3 not installed (Debian package fuse3)"
"$FDR" mount 2>&1 | grep -q "built without FUSE" && skip "this fdr was built without libfuse3"
if [ "$(id -u)" -eq 0 ]; then
	unshare -m true 2>/dev/null || skip "unshare -m: no private mount namespaces here"
else
	unshare -r -m true 2>/dev/null || skip "unshare -rm: no user+mount namespaces here"
fi

suite_init tracecmd
M=$T/mnt
unmount() {
	grep -qs " $M fuse" /proc/self/mounts && fusermount3 -u -z "$M" 2>/dev/null
}
at_exit unmount
export FDR_SESSION=tc
mkdir -p "$M"

# 'fdr show' lines -> "COMM PID CPU TS EVENT: FIELDS"
norm_show() {
	grep -v '^#' "$1" |
		sed -E 's/^ *(.*)-([0-9]+) +\[([0-9]+)\] +[^ ]+ +([0-9]+\.[0-9]+): ([a-z_]+): +/\1 \2 \3 \4 \5: /; s/ +$//'
}

# 'trace-cmd report' lines -> the same; ftrace:print shows as "print: IP: TEXT"
norm_report() {
	grep -v '^cpus=' "$1" |
		sed -E 's/^ *(.*)-([0-9]+) +\[([0-9]+)\] +([0-9]+\.[0-9]+): ([a-z_]+): +/\1 \2 \3 \4 \5: /; s/ print: 0x0: / tracing_mark_write: /; s/ +$//'
}

test_setup() {
	run "$FDR" start -e 'demo:*'
	expect_rc 0 || return 1
	run "$DEMO" -n 200 -q
	expect_rc 0 || return 1
	run "$FDR" mount "$M"
	if [ "$rc" -ne 0 ] && grep -qiE "not permitted|permission denied|fusermount" "$ERR"; then
		cat "$ERR"
		skip "mounting FUSE is not permitted here"
	fi
	expect_rc 0 || return 1
	grep -qs " $M fuse.fdr " /proc/self/mounts
}

test_list_events() {
	local want
	run "$TC" "$M" list -e
	expect_rc 0 || return 1
	want=$("$FDR" list | grep -v '\[pending\]$' | sed 's/ \[.*//' | sort)
	[ -n "$want" ] && [ "$(sort "$OUT")" = "$want" ] && return 0
	diag "trace-cmd list -e differs from fdr list:"
	diff <(echo "$want") <(sort "$OUT") | sed 's/^/#   /'
	return 1
}

test_stat() {
	run "$TC" "$M" stat
	expect_rc 0 || return 1
	grep -q "^Tracing is enabled" "$OUT" || { show_io; return 1; }
	grep -qx " *$(cat "$M/buffer_size_kb")" "$OUT" || {
		diag "stat lacks buffer_size_kb $(cat "$M/buffer_size_kb")"
		show_io
		return 1
	}
	"$FDR" stop >/dev/null 2>&1
	run "$TC" "$M" stat
	"$FDR" start >/dev/null 2>&1
	grep -q "^Tracing is disabled" "$OUT" || { diag "after fdr stop:"; show_io; return 1; }
}

test_extract_report() {
	local n
	"$FDR" show >"$T/show.txt" || return 1
	norm_show "$T/show.txt" >"$T/show.norm"
	n=$(wc -l <"$T/show.norm")
	[ "$n" -gt 100 ] || { diag "only $n records recorded"; return 1; }
	grep -q ' request: status=' "$T/show.norm" || return 1
	grep -q ' tracing_mark_write: ' "$T/show.norm" || return 1
	# -k: keep fdr's settings (without it trace-cmd disables every event, as on tracefs)
	run "$TC" "$M" extract -k -o "$T/t.dat"
	expect_rc 0 || return 1
	run trace-cmd report "$T/t.dat"
	expect_rc 0 || return 1
	norm_report "$OUT" >"$T/report.norm"
	if ! cmp -s "$T/show.norm" "$T/report.norm"; then
		diag "trace-cmd report differs from fdr show ($n records):"
		diff "$T/show.norm" "$T/report.norm" | head -20 | sed 's/^/#   /'
		return 1
	fi
	# the records were consumed (trace_pipe_raw), the settings kept
	[ "$("$FDR" show | grep -vc '^#')" -eq 0 ] || { diag "buffer not consumed"; return 1; }
	[ "$(sort "$M/set_event" | tr '\n' ' ')" = "demo:cache demo:db_query demo:request " ] || {
		diag "set_event after extract -k: $(cat "$M/set_event")"
		return 1
	}
}

test_not_a_mount() {
	run "$TC" "$T" list -e
	expect_rc 1 || return 1
	grep -q "is not an fdr mount" "$ERR" || { show_io; return 1; }
}

cases="
test_setup
test_list_events
test_stat
test_extract_report
test_not_a_mount
"

cd "$T" || exit 1
run_cases "$cases" test_setup
fusermount3 -u "$M" 2>/dev/null
tap_summary
