#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# export.sh FDR EXPORT_GEN [FDR_DEMO] - fdr export, in a private FDR_ROOT.
#
# Records demo events, trace_marker lines with quotes, backslashes and a
# newline, and export-gen's events (CTF keywords and forbidden bytes in names,
# every field kind, integers at their limits, hard strings), then checks:
#   ctf       babeltrace2 reads it with nothing on stderr; every record and
#             every field equals fdr show's (export-check.py), timestamps map
#             to CLOCK_REALTIME and go forward per CPU
#   perfetto  the JSON layout, and every record and field against fdr show
#   text      byte for byte fdr show
# and the errors: usage (exit 2), write errors (exit 1, nothing left behind).
#
# Prints "ok N - name" / "not ok N - name", then "N passed, N failed".
set -u
# shellcheck source=../harness/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib.sh"

FDR=${1:?usage: export.sh FDR EXPORT_GEN [FDR_DEMO]}
GEN=${2:?usage: export.sh FDR EXPORT_GEN [FDR_DEMO]}
DEMO=${3:-}
HERE=$(cd "$(dirname "$0")" && pwd)
CHECK=$HERE/export-check.py

suite_init export
export FDR_SESSION=exp

# no_leftovers DIR: no temporary export files (NAME.tmp-XXXXXX) in DIR
no_leftovers() {
	local left
	left=$(find "$1" -maxdepth 1 -name '*.tmp-*' | head -3)
	[ -z "$left" ] && return 0
	diag "left behind: $left"
	return 1
}

have() {
	command -v "$1" >/dev/null 2>&1
}

# ---- the recording ------------------------------------------------------------

setup() {
	fdr start -e 'demo:*'
	expect_rc 0 || return 1
	fdr enable 'gen:worker' # export-gen's threads: a process with several threads
	expect_rc 0 || return 1
	if [ -n "$DEMO" ] && [ -x "$DEMO" ]; then
		run timeout -k 5 60 "$DEMO" -n 300 -r 20000
		expect_rc 0 || return 1
	fi
	fdr write trace_marker 'he said "hi" \back\slash'
	expect_rc 0 || return 1
	fdr write trace_marker "$(printf 'two\nlines\ttab')"
	expect_rc 0 || return 1
	run "$GEN" 12
	expect_rc 0 || return 1
	fdr show
	cp "$OUT" "$T/show"
	local n
	n=$(grep -vc '^#' "$T/show")
	[ "$n" -ge 60 ] || { diag "only $n lines in fdr show"; return 1; }
	echo "# $(grep -c ': request: ' "$T/show") demo requests, $(grep -c ': event: ' "$T/show") gen:event"
}

# ---- cases --------------------------------------------------------------------

test_ctf_babeltrace2() {
	have babeltrace2 || { echo "# skip: no babeltrace2"; return 0; }
	have python3 || { echo "# skip: no python3"; return 0; }
	fdr export --format ctf -o "$T/ctf"
	expect_rc 0 || return 1
	[ -s "$T/ctf/metadata" ] && ls "$T/ctf"/stream_* >/dev/null 2>&1 ||
		{ diag "no metadata or stream files"; ls -l "$T/ctf"; return 1; }
	run babeltrace2 --no-delta --clock-seconds "$T/ctf"
	expect_rc 0 || return 1
	if [ -s "$ERR" ]; then
		diag "babeltrace2 wrote to stderr"
		show_io
		return 1
	fi
	cp "$OUT" "$T/bt2"
	run python3 "$CHECK" ctf "$FDR" "$T/show" "$T/bt2" "$T/ctf"
	expect_rc 0 || return 1
	# the default (time of day) output too: every line, nothing on stderr
	run babeltrace2 "$T/ctf"
	expect_rc 0 || return 1
	[ ! -s "$ERR" ] || { diag "babeltrace2 (default output) wrote to stderr"; show_io; return 1; }
	[ "$(wc -l <"$OUT")" -eq "$(wc -l <"$T/bt2")" ] || { diag "line counts differ"; return 1; }
}

test_ctf_names() {
	# TSDL keywords and forbidden bytes never reach the metadata as identifiers
	grep -q 'name = "gen:event";' "$T/ctf/metadata" || { diag "no gen:event class"; return 1; }
	grep -Eq '\b_align;' "$T/ctf/metadata" || { diag "field 'align' not written as _align"; return 1; }
	grep -Eq '\b_x_y;' "$T/ctf/metadata" || { diag "field 'x-y' not written as _x_y"; return 1; }
	grep -Eq '\b_a_b_2;' "$T/ctf/metadata" || { diag "'a.b' after 'a-b' not _a_b_2"; return 1; }
	grep -q 'name = "gen:odd _name_ __";' "$T/ctf/metadata" ||
		{ diag "event name with quotes and UTF-8 not mangled as documented"; return 1; }
	grep -Eq 'offset_s = [0-9]+;' "$T/ctf/metadata" || { diag "no clock offset"; return 1; }
}

test_perfetto() {
	have python3 || { echo "# skip: no python3"; return 0; }
	fdr export --format perfetto -o "$T/trace.json"
	expect_rc 0 || return 1
	run python3 "$CHECK" perfetto "$FDR" "$T/show" "$T/trace.json"
	expect_rc 0 || return 1
	grep -q '"ph":"B"' "$T/trace.json" && grep -q '"ph":"E"' "$T/trace.json" ||
		{ diag "gen:op_begin/op_end did not become B/E slices"; return 1; }
	grep -q '"name":"he said \\"hi\\" \\\\back\\\\slash"' "$T/trace.json" ||
		{ diag "marker not an instant named by its text"; grep ftrace "$T/trace.json" | head -3; return 1; }
	grep -q '"u64":"18446744073709551615"' "$T/trace.json" ||
		{ diag "u64 beyond 2^53 not a string"; return 1; }
	grep -q '\\ufffd' "$T/trace.json" || { diag "invalid UTF-8 not replaced"; return 1; }
	# standard output: the same document
	fdr export --format perfetto -o -
	expect_rc 0 || return 1
	cmp -s "$OUT" "$T/trace.json" || { diag "-o - differs from the file"; return 1; }
}

# the Perfetto protobuf: decoded by pftrace-check.py, every gen:worker record of
# a thread is on that thread's track with its fields; -o - writes the same bytes
test_perfetto_proto() {
	local line tid want got
	have python3 || { echo "# skip: no python3"; return 0; }
	fdr export --format perfetto-proto -o "$T/trace.pftrace"
	expect_rc 0 || return 1
	line=$(grep -m1 ' worker: ' "$T/show") || { diag "no gen:worker in fdr show"; return 1; }
	tid=$(sed -nE 's/^ *.*-([0-9]+) +\[[0-9]+\].*/\1/p' <<<"$line")
	run python3 "$HERE/pftrace-check.py" timeline "$T/trace.pftrace" "$tid"
	expect_rc 0 || return 1
	want=$(grep -E -- "-$tid +\[[0-9]+\] .* worker: worker=[0-9]+ round=[0-9]+$" "$T/show" |
		sed -E 's/.* worker: (worker=[0-9]+ round=[0-9]+)$/\1/')
	got=$(sed -nE 's/^[0-9]+ event gen:worker (worker=[0-9]+ round=[0-9]+)$/\1/p' "$OUT")
	[ -n "$want" ] && [ "$want" = "$got" ] ||
		{ diag "thread $tid: fdr show's worker records and the protobuf's differ: '$want' / '$got'"; return 1; }
	fdr export --format perfetto-proto -o -
	expect_rc 0 || return 1
	cmp -s "$OUT" "$T/trace.pftrace" || { diag "-o - differs from the file"; return 1; }
	no_leftovers "$T"
}

test_text() {
	fdr export --format text -o "$T/trace.txt"
	expect_rc 0 || return 1
	diff "$T/show" "$T/trace.txt" >"$T/diff" ||
		{ diag "text export differs from fdr show"; head -20 "$T/diff"; return 1; }
	no_leftovers "$T"
}

test_not_consumed() {
	fdr show
	cmp -s "$OUT" "$T/show" || { diag "fdr show changed after the exports"; return 1; }
}

test_usage_errors() {
	fdr export -o "$T/x"
	expect_rc 2 || return 1
	expect_err 'expected --format ctf, perfetto, perfetto-proto or text' || return 1
	fdr export --format svg -o "$T/x"
	expect_rc 2 || return 1
	expect_err "expected a format ctf, perfetto, perfetto-proto or text, found 'svg'" || return 1
	fdr export --format ctf
	expect_rc 2 || return 1
	expect_err 'expected -o OUT' || return 1
	fdr export --format ctf -o -
	expect_rc 2 || return 1
	fdr export --format text -o "$T/x" a.dat b.dat
	expect_rc 2 || return 1
	expect_err "found 'b.dat' too" || return 1
	fdr export --format text -o "$T/x" -i nosuch
	expect_rc 2 || return 1
	expect_err "expected an instance of the session, found 'nosuch'" || return 1
	fdr export --format text -o "$T/x" --snapshot a.dat
	expect_rc 2 || return 1
	fdr export --format text -o "$T/x" --bogus
	expect_rc 2 || return 1
	[ ! -e "$T/x" ] || { diag "$T/x written by a refused command"; return 1; }
}

test_out_errors() {
	mkdir -p "$T/full"
	echo keep >"$T/full/file"
	fdr export --format ctf -o "$T/full"
	expect_rc 1 || return 1
	expect_err 'expected a new or empty directory' || return 1
	[ "$(ls "$T/full")" = file ] || { diag "non-empty OUT changed"; return 1; }
	fdr export --format ctf -o "$T/nodir/sub/ctf"
	expect_rc 1 || return 1
	expect_err 'No such file or directory' || return 1
	# a write error in the middle (the file size limit: EFBIG) leaves nothing behind
	mkdir -p "$T/lim"
	run bash -c 'trap "" XFSZ; ulimit -f 4; exec "$@"' _ "$FDR" export --format perfetto -o "$T/lim/p.json"
	expect_rc 1 || return 1
	expect_err 'File too large' || return 1
	[ -z "$(ls -A "$T/lim")" ] || { diag "left in lim/: $(ls -A "$T/lim")"; return 1; }
	run bash -c 'trap "" XFSZ; ulimit -f 4; exec "$@"' _ "$FDR" export --format ctf -o "$T/lim/ctf"
	expect_rc 1 || return 1
	expect_err 'File too large' || return 1
	[ -z "$(ls -A "$T/lim")" ] || { diag "left in lim/: $(ls -A "$T/lim")"; return 1; }
	run bash -c 'trap "" XFSZ; ulimit -f 4; exec "$@"' _ "$FDR" export --format text -o "$T/lim/t.txt"
	expect_rc 1 || return 1
	expect_err 'File too large' || return 1
	[ -z "$(ls -A "$T/lim")" ] || { diag "left in lim/: $(ls -A "$T/lim")"; return 1; }
	# an existing empty directory is fine, an existing file is replaced
	mkdir -p "$T/empty"
	fdr export --format ctf -o "$T/empty"
	expect_rc 0 || return 1
	[ -s "$T/empty/metadata" ] || { diag "empty OUT not filled"; return 1; }
	echo old >"$T/old.json"
	fdr export --format perfetto -o "$T/old.json"
	expect_rc 0 || return 1
	grep -q traceEvents "$T/old.json" || { diag "existing file not replaced"; return 1; }
}

test_instance_and_snapshot() {
	local n
	fdr mkdir instances/side
	expect_rc 0 || return 1
	fdr write instances/side/tracing_on 1
	fdr write instances/side/trace_marker only in side
	expect_rc 0 || return 1
	fdr export --format text -i side -o "$T/side.txt"
	expect_rc 0 || return 1
	fdr show -i side
	diff "$OUT" "$T/side.txt" >"$T/diff" || { diag "-i side differs"; head "$T/diff"; return 1; }
	grep -q 'tracing_mark_write: only in side' "$T/side.txt" || { diag "marker missing"; return 1; }
	[ "$(grep -vc '^#' "$T/side.txt")" -eq 1 ] || { diag "other records in -i side"; return 1; }
	fdr snapshot take
	expect_rc 0 || return 1
	fdr write trace_marker after the snapshot
	fdr export --format text --snapshot -o "$T/snap.txt"
	expect_rc 0 || return 1
	fdr snapshot show
	diff "$OUT" "$T/snap.txt" >"$T/diff" || { diag "--snapshot differs from snapshot show"; head "$T/diff"; return 1; }
	grep -q 'after the snapshot' "$T/snap.txt" && { diag "snapshot has a later record"; return 1; }
	if have babeltrace2; then
		fdr export --format ctf --snapshot -o "$T/snapctf"
		expect_rc 0 || return 1
		run babeltrace2 "$T/snapctf"
		expect_rc 0 || return 1
		[ ! -s "$ERR" ] || { diag "babeltrace2 stderr"; show_io; return 1; }
		n=$(grep -Ec '^ *.*-[0-9]+ +\[[0-9]{3}\] ' "$T/snap.txt")
		[ "$(wc -l <"$OUT")" -eq "$n" ] ||
			{ diag "$(wc -l <"$OUT") events from babeltrace2, $n records in the snapshot"; return 1; }
	fi
}

test_empty() {
	fdr mkdir instances/empty
	expect_rc 0 || return 1
	fdr export --format ctf -i empty -o "$T/emptyctf"
	expect_rc 0 || return 1
	if have babeltrace2; then
		run babeltrace2 "$T/emptyctf"
		expect_rc 0 || return 1
		[ ! -s "$OUT" ] && [ ! -s "$ERR" ] || { diag "empty trace: output"; show_io; return 1; }
	fi
	fdr export --format perfetto -i empty -o "$T/empty.json"
	expect_rc 0 || return 1
	if have python3; then
		run python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["traceEvents"] == [], d' "$T/empty.json"
		expect_rc 0 || return 1
	fi
}

test_file_input() {
	# a trace.dat FILE goes through fdr_trace_open_file(); a missing one is an error
	fdr export --format text -o "$T/f.txt" "$T/no-such.dat"
	[ "$rc" -ne 0 ] || { diag "exit 0 for a missing FILE"; return 1; }
	expect_err 'no-such.dat' || return 1
	[ ! -e "$T/f.txt" ] || { diag "output written"; return 1; }
}

# ctf_dated DIR T0 T1: babeltrace2 dates every event of the CTF trace DIR
# between the epoch seconds T0 and T1 (when they were recorded)
ctf_dated() {
	local first last
	run babeltrace2 --clock-seconds "$1"
	expect_rc 0 || return 1
	first=$(sed -n '1s/^\[\([0-9]*\)\..*/\1/p' "$OUT")
	last=$(sed -n '$s/^\[\([0-9]*\)\..*/\1/p' "$OUT")
	[ -n "$first" ] && [ -n "$last" ] || { diag "no timestamps from babeltrace2"; show_io; return 1; }
	if [ "$first" -lt "$2" ] || [ "$last" -gt "$3" ]; then
		diag "$1: events dated $(date -u -d "@$first") .. $(date -u -d "@$last"), recorded between $(date -u -d "@$2") and $(date -u -d "@$3")"
		return 1
	fi
}

# babeltrace2 dates the events when they were recorded, in wall-clock time,
# with the default clock and with x86-tsc (whose clock must tick at the TSC's
# rate, from the TSC's wall-clock offset), exported from the session and from
# a trace.dat that fdr record wrote
test_ctf_dates() {
	local t0 t1 clock
	have babeltrace2 || { echo "# skip: no babeltrace2"; return 0; }
	[ -n "$DEMO" ] && [ -x "$DEMO" ] || { echo "# skip: no fdr-demo"; return 0; }
	for clock in local mono x86-tsc; do
		FDR_SESSION=exp-$clock run "$FDR" start -e 'demo:*' -C "$clock"
		expect_rc 0 || return 1
		t0=$(date +%s)
		FDR_SESSION=exp-$clock run "$DEMO" -n 50 -r 0 -q
		expect_rc 0 || return 1
		t1=$(($(date +%s) + 1))
		FDR_SESSION=exp-$clock run "$FDR" export --format ctf -o "$T/ctf-$clock"
		expect_rc 0 || return 1
		ctf_dated "$T/ctf-$clock" "$t0" "$t1" || { diag "trace_clock $clock"; return 1; }
		# the same through a trace.dat: fdr record keeps the clock's wall-clock
		# point in the file, and trace-cmd still reads it without a word
		t0=$(date +%s)
		FDR_SESSION=exp-$clock run "$FDR" record -e 'demo:*' -o "$T/rec-$clock.dat" -- \
			"$DEMO" -n 50 -r 0 -q
		expect_rc 0 || return 1
		t1=$(($(date +%s) + 1))
		run "$FDR" export --format ctf -o "$T/ctf-dat-$clock" "$T/rec-$clock.dat"
		expect_rc 0 || return 1
		ctf_dated "$T/ctf-dat-$clock" "$t0" "$t1" || { diag "trace.dat, trace_clock $clock"; return 1; }
		if have trace-cmd; then
			run trace-cmd report "$T/rec-$clock.dat"
			expect_rc 0 || return 1
			[ ! -s "$ERR" ] || { diag "trace-cmd report says:"; show_io; return 1; }
		fi
		FDR_SESSION=exp-$clock run "$FDR" destroy
	done
}

# ---- main ---------------------------------------------------------------------

cd "$T" || exit 1
if ! setup; then
	echo "not ok 1 - setup"
	echo "0 passed, 1 failed"
	exit 1
fi
run_cases "test_ctf_babeltrace2 test_ctf_names test_perfetto test_perfetto_proto test_text test_not_consumed
	test_usage_errors test_out_errors test_instance_and_snapshot test_empty test_file_input
	test_ctf_dates"
fdr destroy
tap_summary
