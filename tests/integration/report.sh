#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# report.sh FDR DATA_DIR - `fdr report` against trace-cmd: each fixture in
# DATA_DIR (tracedat-*.dat, real kernel traces recorded by trace-cmd 3.1.6, see
# make-tracedat.sh) has its `trace-cmd report -R` output next to it (.raw). Both
# are reduced to "cpu ts pid comm event body" lines, which must be equal: same
# records, same order, same CPUs, pids, times and field values. Where trace-cmd
# is installed the .raw files are also checked against a fresh trace-cmd report.
#
# Prints "ok N - name" / "not ok N - name" per case, then "N passed, N failed".
set -u
# shellcheck source=../harness/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib.sh"

FDR=${1:?usage: report.sh FDR DATA_DIR}
DATA=${2:?usage: report.sh FDR DATA_DIR}
abs_path FDR DATA
suite_init report

# trace-cmd report -R lines: "INSTANCE:   COMM-PID   [CPU] TS: EVENT:  BODY".
# ftrace:print shows as "print: ip=0x... buf=TEXT"; the kernel (and fdr) show
# "tracing_mark_write: TEXT".
norm_tracecmd() {
	sed -E -n \
		-e 's/^fdrfixture_[0-9]+: +//' \
		-e 's/^ *(.*)-([0-9]+) +\[([0-9]+)\] *([0-9.]+): +print: +ip=0x[0-9a-f]+ buf=(.*)$/\3 \4 \2 \1 tracing_mark_write \5/p' \
		-e 's/^ *(.*)-([0-9]+) +\[([0-9]+)\] *([0-9.]+): +([a-z_]+): +(.*)$/\3 \4 \2 \1 \5 \6/p' "$1"
}

# fdr report lines: "COMM-PID [CPU] FLAGS TS: EVENT: BODY"
norm_fdr() {
	sed -E -n 's/^ *(.*)-([0-9]+) +\[([0-9]+)\] [.0-9a-f]{5} +([0-9.]+): ([a-z_]+): (.*)$/\3 \4 \2 \1 \5 \6/p' "$1"
}

# same_as_tracecmd FIXTURE [fdr report args]: fdr's records equal trace-cmd's
same_as_tracecmd() {
	local f=$DATA/$1 n
	shift
	run "$FDR" report "$@" "$f"
	[ "$rc" -eq 0 ] || { diag "fdr report $1: exit $rc: $(cat "$ERR")"; return 1; }
	norm_fdr "$OUT" >"$T/fdr.norm"
	norm_tracecmd "${f%.dat}.raw" >"$T/tc.norm"
	n=$(wc -l <"$T/tc.norm")
	[ "$n" -gt 20 ] || { diag "only $n records in trace-cmd's report"; return 1; }
	if ! diff -u "$T/tc.norm" "$T/fdr.norm" >"$T/diff"; then
		diag "fdr report differs from trace-cmd report -R:"
		head -20 "$T/diff" | sed 's/^/#   /'
		return 1
	fi
	[ "$(head -1 "$OUT")" = "$(head -1 "${f%.dat}.raw")" ] ||
		{ diag "header: '$(head -1 "$OUT")' vs '$(head -1 "${f%.dat}.raw")'"; return 1; }
}

test_v7_same_as_tracecmd() {
	same_as_tracecmd tracedat-v7.dat
}

test_v6_same_as_tracecmd() {
	same_as_tracecmd tracedat-v6.dat
}

# x86-tsc: timestamps stay raw counts, as trace-cmd prints them
test_v7_tsc_raw_timestamps() {
	same_as_tracecmd tracedat-v7-tsc.dat || return 1
	grep -qE '\] [.0-9a-f]{5} +[0-9]{12,}: ' "$OUT" || { diag "no raw counter timestamps"; return 1; }
}

# the .raw files are what this trace-cmd prints today (skipped without trace-cmd)
test_fixtures_match_live_tracecmd() {
	local f
	command -v trace-cmd >/dev/null || { echo "# trace-cmd not installed: skipped"; return 0; }
	for f in "$DATA"/tracedat-*.dat; do
		trace-cmd report -R "$f" >"$T/live" 2>/dev/null || { diag "trace-cmd report $f failed"; return 1; }
		cmp -s "$T/live" "${f%.dat}.raw" || { diag "${f##*/}: trace-cmd report -R changed"; return 1; }
	done
}

test_event_selection() {
	local all sel
	run "$FDR" report -e sched:sched_switch "$DATA/tracedat-v7.dat"
	[ "$rc" -eq 0 ] || { diag "exit $rc"; return 1; }
	sel=$(norm_fdr "$OUT" | wc -l)
	all=$(norm_tracecmd "$DATA/tracedat-v7.raw" | grep -c ' sched_switch ')
	[ "$sel" -eq "$all" ] && [ "$sel" -gt 0 ] || { diag "$sel records, expected $all"; return 1; }
	norm_fdr "$OUT" | grep -qv ' sched_switch ' && { diag "other events shown"; return 1; }
	# globs and bare names, comma-separated and repeated
	run "$FDR" report -e 'sched:sched_process_*' -e tracing_mark_write,print "$DATA/tracedat-v7.dat"
	sel=$(norm_fdr "$OUT" | wc -l)
	all=$(norm_tracecmd "$DATA/tracedat-v7.raw" | grep -cE ' (sched_process_[a-z]+|tracing_mark_write) ')
	[ "$sel" -eq "$all" ] || { diag "glob: $sel records, expected $all"; return 1; }
}

test_filter() {
	local pid sel all
	pid=$(norm_tracecmd "$DATA/tracedat-v7.raw" | awk '$5 == "sched_process_exec" { print $3; exit }')
	run "$FDR" report -F "common_pid == $pid" "$DATA/tracedat-v7.dat"
	[ "$rc" -eq 0 ] || { diag "exit $rc: $(cat "$ERR")"; return 1; }
	sel=$(norm_fdr "$OUT" | wc -l)
	all=$(norm_tracecmd "$DATA/tracedat-v7.raw" | awk -v p="$pid" '$3 == p' | wc -l)
	[ "$sel" -eq "$all" ] && [ "$sel" -gt 1 ] || { diag "$sel records, expected $all"; return 1; }
	# a field only some events have: the others are left out
	run "$FDR" report -F 'prev_state == 32' "$DATA/tracedat-v7.dat"
	sel=$(norm_fdr "$OUT" | wc -l)
	all=$(norm_tracecmd "$DATA/tracedat-v7.raw" | grep -c ' prev_state=32 ')
	[ "$sel" -eq "$all" ] && [ "$sel" -gt 0 ] || { diag "prev_state: $sel, expected $all"; return 1; }
	# strings, globs, && with -e
	run "$FDR" report -e sched:sched_process_exec -F 'filename ~ "*sleep"' "$DATA/tracedat-v7.dat"
	sel=$(norm_fdr "$OUT" | wc -l)
	all=$(norm_tracecmd "$DATA/tracedat-v7.raw" | grep -c ' sched_process_exec filename=/usr/bin/sleep ')
	[ "$sel" -eq "$all" ] && [ "$sel" -gt 0 ] || { diag "filename: $sel, expected $all"; return 1; }
}

test_bad_filter_caret() {
	run "$FDR" report -F 'prev_pid == 1 && commm == "x"' "$DATA/tracedat-v7.dat"
	[ "$rc" -eq 2 ] || { diag "exit $rc, expected 2"; return 1; }
	grep -q '^fdr report: bad filter: Field not found' "$ERR" || { diag "$(cat "$ERR")"; return 1; }
	# the caret sits under "commm"'s end, as the kernel reports it
	[ "$(sed -n 3p "$ERR")" = "                         ^" ] || { diag "caret: '$(sed -n 3p "$ERR")'"; return 1; }
	[ ! -s "$OUT" ] || { diag "printed records"; return 1; }
}

test_cpu() {
	local sel all
	run "$FDR" report --cpu 0 "$DATA/tracedat-v6.dat"
	sel=$(norm_fdr "$OUT" | wc -l)
	all=$(norm_tracecmd "$DATA/tracedat-v6.raw" | awk '$1 == "000"' | wc -l)
	[ "$sel" -eq "$all" ] && [ "$sel" -gt 0 ] || { diag "$sel records, expected $all"; return 1; }
	run "$FDR" report --cpu x "$DATA/tracedat-v6.dat"
	[ "$rc" -eq 2 ] || { diag "--cpu x: exit $rc"; return 1; }
}

test_default_file_and_dash_i() {
	cp "$DATA/tracedat-v7.dat" "$T/trace.dat"
	(cd "$T" && "$FDR" report) >"$OUT" 2>"$ERR" || { diag "no FILE: $(cat "$ERR")"; return 1; }
	norm_fdr "$OUT" >"$T/a"
	run "$FDR" report -i "$DATA/tracedat-v7.dat"
	norm_fdr "$OUT" | cmp -s - "$T/a" || { diag "-i differs"; return 1; }
	[ -s "$T/a" ]
}

test_missing_file() {
	run "$FDR" report "$T/nonexistent.dat"
	[ "$rc" -eq 1 ] && grep -q 'No such file' "$ERR" || { diag "exit $rc: $(cat "$ERR")"; return 1; }
}

# a truncated copy is refused with what was expected, what was found and where
test_truncated_file() {
	local n
	for n in 5 100 5000 24600; do
		head -c $n "$DATA/tracedat-v7.dat" >"$T/cut.dat"
		run "$FDR" report "$T/cut.dat"
		[ "$rc" -eq 1 ] || { diag "$n bytes: exit $rc"; return 1; }
		grep -qE 'trace\.dat: expected .* at offset [0-9]+$' "$ERR" ||
			{ diag "$n bytes: $(cat "$ERR")"; return 1; }
	done
}

test_not_a_tracedat() {
	echo "hello" >"$T/x.dat"
	run "$FDR" report "$T/x.dat"
	[ "$rc" -eq 1 ] && grep -q 'expected the magic' "$ERR" || { diag "$(cat "$ERR")"; return 1; }
}

cases="
test_v7_same_as_tracecmd
test_v6_same_as_tracecmd
test_v7_tsc_raw_timestamps
test_fixtures_match_live_tracecmd
test_event_selection
test_filter
test_bad_filter_caret
test_cpu
test_default_file_and_dash_i
test_missing_file
test_truncated_file
test_not_a_tracedat
"

cd "$T" || exit 1
run_cases "$cases"
tap_summary
