#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# cli.sh FDR [FDR_DEMO] - the fdr command, driven the way the kernel's ftrace
# selftests drive tracefs: each test_* function is one case, run in order in a
# private FDR_ROOT (made with mktemp, removed at exit). Expected error positions
# are written into the input with '^' (check_error 'tracing_on' '12^x').
#
# Prints "ok N - name" / "not ok N - name" per case, then "N passed, N failed";
# exits non-zero if any case failed.
set -u
# shellcheck source=../harness/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib.sh"

FDR=${1:?usage: cli.sh FDR [FDR_DEMO]}
DEMO=${2:-}
abs_path FDR DEMO
suite_init cli
export FDR_SESSION=cli

# ---- helpers ----------------------------------------------------------------

expect_no_out() {
	grep -Eq -- "$1" "$OUT" || return 0
	diag "stdout must not match /$1/"
	show_io
	return 1
}

expect_empty_err() {
	[ ! -s "$ERR" ] && return 0
	diag "stderr must be empty"
	show_io
	return 1
}

expect_empty_out() {
	[ ! -s "$OUT" ] && return 0
	diag "stdout must be empty (data only goes there)"
	show_io
	return 1
}

# cat_is PATH TEXT: fdr cat PATH prints exactly TEXT (plus the final newline)
cat_is() {
	fdr cat "$1"
	expect_rc 0 || return 1
	local got
	got=$(cat "$OUT")
	[ "$got" = "$2" ] && return 0
	diag "fdr cat $1: '$got', expected '$2'"
	return 1
}

#
# check_error PATH 'VALUE-WITH-^': write VALUE (without the ^) to PATH with
# 'fdr write'; it must be refused with exit status 2, the message must show the
# value with a caret under the byte the ^ precedes, and error_log's entry must
# put its caret at column strlen("  Command: ") + pos (the selftests' check:
# the last line is 13 + pos bytes long).
#
check_error() { # path value-with-caret [location]
	local path=$1 loc=${3:-$1} pos cmd col n
	pos=$(printf '%s' "${2%%^*}" | wc -c)
	cmd=$(printf '%s' "$2" | tr -d '^')
	fdr write error_log ''
	expect_rc 0 || return 1
	fdr write "$path" "$cmd"
	expect_rc 2 || return 1
	expect_empty_out || return 1
	expect_err "^fdr write: " || return 1
	col=$(caret_col "$ERR" "  $cmd")
	if [ "$col" != $((2 + pos)) ]; then
		diag "'$cmd' > $path: caret at column '$col' of the message, expected $((2 + pos))"
		show_io
		return 1
	fi
	fdr cat error_log
	expect_rc 0 || return 1
	if ! grep -q -- "$loc: error: " "$OUT"; then
		diag "error_log has no '$loc: error: ' entry"
		show_io
		return 1
	fi
	grep -qxF -- "  Command: $cmd" "$OUT" || {
		diag "error_log lacks '  Command: $cmd'"
		show_io
		return 1
	}
	n=$(tail -n 1 "$OUT" | wc -c)
	if [ "$n" -ne $((13 + pos)) ]; then
		diag "error_log caret line is $n bytes, expected $((13 + pos)) (caret at column $((11 + pos)))"
		show_io
		return 1
	fi
}

# usage_caret 'ARGS-WITH-^'...: fdr ARGS must exit 2 and point at the ^ argument
# (arguments are split on spaces; the ^ goes at the start of the blamed one)
usage_caret() {
	local spec=$1 pre cmd col want
	pre=${spec%%^*}
	cmd=$(printf '%s' "$spec" | tr -d '^')
	# shellcheck disable=SC2086
	run "$FDR" $cmd
	expect_rc 2 || return 1
	expect_empty_out || return 1
	want=$((6 + ${#pre})) # "  fdr " then the arguments
	col=$(caret_col "$ERR" "  fdr $cmd")
	if [ "$col" != "$want" ]; then
		diag "fdr $cmd: caret at column '$col', expected $want"
		show_io
		return 1
	fi
}

session_dir() {
	echo "$FDR_ROOT/${1:-$FDR_SESSION}"
}

# ---- cases --------------------------------------------------------------------

test_version() {
	fdr --version
	expect_rc 0 || return 1
	expect_out '^fdr [0-9]+\.[0-9]+\.[0-9]+$' || return 1
	[ "$(wc -l <"$OUT")" -eq 1 ] || { diag "one line expected"; return 1; }
}

test_help() {
	local v
	fdr help
	expect_rc 0 || return 1
	expect_out '^usage: fdr ' || return 1
	fdr --help
	expect_rc 0 || return 1
	expect_out '^usage: fdr ' || return 1
	local verbs
	verbs=$(sed -n 's/^  \([a-z]*\).*/\1/p' "$OUT")
	[ "$(wc -w <<<"$verbs")" -ge 20 ] || { diag "fdr --help lists only: $verbs"; return 1; }
	for v in $verbs; do
		fdr help "$v"
		expect_rc 0 || return 1
		expect_out "^usage: fdr \[-s SESSION \| -d DIR\] $v" || return 1
		expect_out '[a-z]' || return 1
		cp "$OUT" "$T/help-$v"
		# every verb answers -h and --help with the same usage, exit 0, as the
		# first argument and after other options
		for h in -h --help; do
			fdr "$v" "$h"
			expect_rc 0 || { diag "fdr $v $h"; return 1; }
			cmp -s "$OUT" "$T/help-$v" || { diag "fdr $v $h differs from fdr help $v"; return 1; }
			expect_empty_err || return 1
		done
	done
	fdr show -i nosuch --help
	expect_rc 0 || return 1
	expect_out '^usage: fdr .* show' || return 1

	usage_caret 'help ^bogus' || return 1
	expect_err "bogus" || return 1
}

test_usage_errors() {
	fdr
	expect_rc 2 || return 1
	expect_empty_out || return 1
	expect_err 'usage: fdr' || return 1
	fdr bogus-verb
	expect_rc 2 || return 1
	expect_err "bogus-verb" || return 1
	fdr cat
	expect_rc 2 || return 1
	expect_err '^fdr cat: expected' || return 1
	fdr write
	expect_rc 2 || return 1
	fdr enable
	expect_rc 2 || return 1
	fdr mkdir
	expect_rc 2 || return 1
	fdr --bogus-option
	expect_rc 2 || return 1
	fdr -s 'a/b' cat trace
	expect_rc 2 || return 1
	expect_err "a/b" || return 1
}

test_no_session() {
	fdr cat trace
	expect_rc 1 || return 1
	expect_empty_out || return 1
	expect_err "^fdr cat: no session 'cli'" || return 1
	fdr show
	expect_rc 1 || return 1
	fdr destroy
	expect_rc 1 || return 1
	[ ! -e "$FDR_ROOT/cli" ] || { diag "a read must not create the session"; return 1; }
}

test_start_creates() {
	local d
	d=$(session_dir)
	fdr start
	expect_rc 0 || return 1
	expect_empty_out || return 1
	expect_err "session 'cli' created" || return 1
	[ -d "$d" ] || { diag "$d missing"; return 1; }
	[ "$(stat -c %a "$d")" = 700 ] || { diag "$d mode $(stat -c %a "$d"), expected 700"; return 1; }
	[ "$(stat -c %a "$FDR_ROOT")" = 700 ] || { diag "$FDR_ROOT mode $(stat -c %a "$FDR_ROOT")"; return 1; }
	fdr start
	expect_rc 0 || return 1
	expect_err "session 'cli' started" || return 1
	cat_is tracing_on 1
}

test_ls() {
	fdr ls
	expect_rc 0 || return 1
	expect_out '^trace$' || return 1
	expect_out '^trace_pipe$' || return 1
	expect_out '^events/$' || return 1
	expect_out '^per_cpu/$' || return 1
	expect_out '^instances/$' || return 1
	fdr ls events
	expect_rc 0 || return 1
	expect_out '^header_page$' || return 1
	expect_out '^ftrace/$' || return 1
	fdr ls per_cpu/cpu0
	expect_rc 0 || return 1
	expect_out '^trace_pipe_raw$' || return 1
	fdr ls trace
	expect_rc 0 || return 1
	expect_out '^trace$' || return 1
	fdr ls nosuch
	expect_rc 1 || return 1
	expect_empty_out || return 1
	expect_err 'nosuch' || return 1
}

test_ls_long() {
	fdr ls -l events
	expect_rc 0 || return 1
	expect_out '^-r--r----- header_page$' || return 1
	expect_out '^-rw-r----- enable$' || return 1
	expect_out '^drwxr-x--- ftrace/$' || return 1
	fdr ls -l
	expect_rc 0 || return 1
	expect_out '^--w--w---- trace_marker$' || return 1
	expect_out '^-rw-r----- trace$' || return 1
	expect_out '^-r--r----- README$' || return 1
	expect_out '^drwxr-x--- events/$' || return 1
}

test_cat_write_append() {
	cat_is tracing_on 1 || return 1
	fdr write tracing_on 0
	expect_rc 0 || return 1
	expect_empty_out || return 1
	cat_is tracing_on 0 || return 1
	fdr write tracing_on 1
	expect_rc 0 || return 1
	fdr write buffer_size_kb 100
	expect_rc 0 || return 1
	cat_is buffer_size_kb 103 || return 1
	fdr write buffer_size_kb 1408
	cat_is buffer_size_kb 1410 || return 1
	cat_is trace_clock '[local] global counter uptime perf mono mono_raw boot tai x86-tsc' || return 1
	fdr write trace_clock mono
	expect_rc 0 || return 1
	cat_is trace_clock 'local global counter uptime perf [mono] mono_raw boot tai x86-tsc' || return 1
	fdr write trace_clock local
	fdr write options/overwrite 0
	cat_is options/overwrite 0 || return 1
	fdr write trace_options overwrite
	cat_is options/overwrite 1 || return 1
	# append: '>>' to a list file keeps what is there
	fdr write set_event 'tcli:a'
	expect_rc 0 || return 1
	fdr append set_event 'tcli:b'
	expect_rc 0 || return 1
	fdr cat set_event_pending
	expect_out '^tcli:a$' || return 1
	expect_out '^tcli:b$' || return 1
	fdr write set_event ''
	expect_rc 0 || return 1
	fdr cat set_event_pending
	expect_empty_out || return 1
	# several files in one cat
	fdr cat tracing_on current_tracer
	expect_rc 0 || return 1
	[ "$(cat "$OUT")" = "$(printf '1\nnop')" ] || { diag "cat of two files: $(cat "$OUT")"; return 1; }
}

test_runtime_errors() {
	fdr cat nosuch
	expect_rc 1 || return 1
	expect_empty_out || return 1
	expect_err '^fdr cat: nosuch: ' || return 1
	fdr write available_events x
	expect_rc 1 || return 1
	expect_err 'Permission denied' || return 1
	fdr cat trace_marker
	expect_rc 1 || return 1
	fdr cat events
	expect_rc 1 || return 1
	expect_err 'Is a directory' || return 1
	fdr write nosuch 1
	expect_rc 1 || return 1
	# no raw errno numbers, ever
	if grep -Eq 'error -?[0-9]+|errno' "$ERR"; then
		diag "raw errno in a message"
		show_io
		return 1
	fi
}

test_check_errors() {
	check_error tracing_on '12^x' || return 1
	check_error tracing_on '^abc' || return 1
	check_error tracing_on '1^k' || return 1
	check_error tracing_on '^-1' || return 1
	check_error options/overwrite '^2' overwrite || return 1
	check_error buffer_size_kb '12^a' || return 1
	check_error buffer_size_kb '^0' || return 1
	check_error trace_clock '^bogus' || return 1
	check_error trace_options 'no^bogus' || return 1
	check_error current_tracer '^function' || return 1
	check_error events/enable '^2' enable || return 1
}

test_check_errors_set_event() {
	# shellcheck disable=SC2016 # a literal '$': a character set_event refuses
	check_error set_event 'tcli:a ba^$d' || return 1
	check_error set_event '!^nosuch:event' || return 1
}

test_usage_carets() {
	usage_caret 'start -b ^abc' || return 1
	usage_caret 'start -b ^0' || return 1
	usage_caret 'start -m ^bogus' || return 1
	usage_caret 'start ^extra' || return 1
	usage_caret 'stop ^extra' || return 1
	usage_caret 'show -c ^x' || return 1
	usage_caret 'mkdir ^foo' || return 1
	usage_caret 'destroy ^now' || return 1
}

test_enable_disable_list() {
	fdr write set_event ''
	expect_rc 0 || return 1
	fdr enable 'tcli:*'
	expect_rc 0 || return 1
	expect_empty_out || return 1
	# it matches nothing yet: the rule waits, and the CLI says so
	expect_err "'tcli:\*' matches no registered event yet: kept as a pending rule" || return 1
	fdr list
	expect_rc 0 || return 1
	expect_out '^tcli:\* \[pending\]$' || return 1
	fdr enable 'other:x' 'more:y'
	expect_rc 0 || return 1
	fdr list
	expect_out '^other:x \[pending\]$' || return 1
	expect_out '^more:y \[pending\]$' || return 1
	fdr disable 'tcli:*' 'other:x' 'more:y'
	expect_rc 0 || return 1
	fdr list
	expect_no_out 'pending' || return 1
	fdr disable 'nosuch:event'
	expect_rc 2 || return 1
	expect_err 'nosuch:event' || return 1
	# shellcheck disable=SC2016
	fdr enable 'bad$name'
	expect_rc 2 || return 1
	fdr list 'nomatch*'
	expect_rc 0 || return 1
	expect_no_out ':' || return 1
	fdr list -i nosuch
	expect_rc 1 || return 1
}

test_marker_and_show() {
	fdr write trace ''
	expect_rc 0 || return 1
	fdr write trace_marker hello world
	expect_rc 0 || return 1
	expect_empty_out || return 1
	fdr show
	expect_rc 0 || return 1
	[ "$(head -n 1 "$OUT")" = "# tracer: nop" ] || { diag "first line: $(head -n 1 "$OUT")"; return 1; }
	expect_out '^# entries-in-buffer/entries-written: 1/1   #P:[0-9]+$' || return 1
	expect_out '^#           TASK-PID     CPU#  \|\|\|\|\|  TIMESTAMP  FUNCTION$' || return 1
	expect_out '^ {13}fdr-[0-9]+ +\[[0-9]{3}\] \.\.\.\.\. +[0-9]+\.[0-9]{6}: tracing_mark_write: hello world$' || return 1
	[ "$(grep -vc '^#' "$OUT")" -eq 1 ] || { diag "one record line expected"; show_io; return 1; }
	# non-consuming: the same again
	cp "$OUT" "$T/show1"
	fdr show
	cmp -s "$OUT" "$T/show1" || { diag "two reads of trace differ"; diff "$T/show1" "$OUT" | head; return 1; }
	fdr append trace_marker again
	fdr show
	expect_out 'tracing_mark_write: again$' || return 1
	expect_out '^# entries-in-buffer/entries-written: 2/2 ' || return 1
	# per CPU
	fdr show -c 0
	expect_rc 0 || return 1
	expect_out '^# tracer: nop$' || return 1
	fdr show -c 99999
	expect_rc 2 || return 1 # more than fdr's 1024 CPUs: a usage error
	fdr show -c 1023
	expect_rc 1 || return 1 # a CPU number this session has not
	# 'fdr write trace' clears
	fdr write trace ''
	expect_rc 0 || return 1
	fdr show
	expect_out '^# entries-in-buffer/entries-written: 0/0 ' || return 1
	expect_no_out 'tracing_mark_write' || return 1
}

test_pipe_consumes() {
	fdr write trace ''
	fdr write trace_marker one
	fdr write trace_marker two
	fdr write trace_marker three
	run_for 1 TERM "$FDR" pipe
	if [ "$rc" -eq 137 ]; then
		diag "fdr pipe ignored SIGTERM and had to be killed ('Ctrl-C stops', says fdr help pipe)"
	fi
	expect_out 'tracing_mark_write: one$' || return 1
	expect_out 'tracing_mark_write: three$' || return 1
	expect_no_out '^#' || return 1
	[ "$(wc -l <"$OUT")" -eq 3 ] || { diag "three lines expected"; show_io; return 1; }
	fdr show
	expect_no_out 'tracing_mark_write' || return 1
	expect_out '^# entries-in-buffer/entries-written: 0/0 ' || return 1
}

test_pipe_stops_on_sigterm() {
	fdr write trace_marker y
	run_for 1 TERM "$FDR" pipe
	[ "$rc" -ne 137 ] || { diag "fdr pipe ignored SIGTERM and had to be killed"; return 1; }
	[ "$rc" -eq 0 ] || { diag "exit status $rc after SIGTERM"; show_io; return 1; }
	expect_out 'tracing_mark_write: y$' || return 1
}

test_pipe_stops_on_sigint() {
	fdr write trace_marker x
	run_for 1 INT "$FDR" pipe
	[ "$rc" -ne 137 ] || { diag "fdr pipe ignored SIGINT (Ctrl-C) and had to be killed"; return 1; }
	expect_out 'tracing_mark_write: x$' || return 1
}

test_pipe_ends_when_stopped() {
	local st
	fdr write trace_marker last
	fdr stop
	expect_rc 0 || return 1
	run_for 3 TERM "$FDR" pipe
	st=$rc
	cp "$OUT" "$T/pipe.out"
	fdr start
	# tracing off and the data delivered: EOF, so the pipe ends by itself
	if [ "$ended" -ne 1 ] || [ "$st" -ne 0 ]; then
		diag "fdr pipe with tracing off did not end by itself (status $st)"
		return 1
	fi
	grep -q 'tracing_mark_write: last$' "$T/pipe.out" || { diag "the data must come first"; return 1; }
}

test_stop_start() {
	fdr stop
	expect_rc 0 || return 1
	cat_is tracing_on 0 || return 1
	fdr write trace_marker while-stopped
	expect_rc 1 || return 1
	expect_err 'Bad file descriptor' || return 1
	fdr start
	expect_rc 0 || return 1
	cat_is tracing_on 1 || return 1
	fdr show
	expect_no_out 'while-stopped' || return 1
}

test_stat() {
	fdr stat
	expect_rc 0 || return 1
	expect_out '^session: cli ' || return 1
	expect_out '^tracing_on: 1$' || return 1
	expect_out '^mode: overwrite$' || return 1
	expect_out '^cpu0: buffer_size_kb [0-9]+$' || return 1
	expect_out '^entries: [0-9]+$' || return 1
	expect_out '^overrun: [0-9]+$' || return 1
	expect_out '^dropped events: [0-9]+$' || return 1
	expect_out '^read events: [0-9]+$' || return 1
	fdr stat -i nosuch
	expect_rc 1 || return 1
}

test_instances() {
	fdr mkdir instances/foo
	expect_rc 0 || return 1
	fdr ls instances
	expect_out '^foo/$' || return 1
	fdr mkdir instances/foo
	expect_rc 1 || return 1
	expect_err 'File exists' || return 1
	fdr write instances/foo/trace_marker in-foo
	expect_rc 0 || return 1
	fdr show -i foo
	expect_rc 0 || return 1
	expect_out 'tracing_mark_write: in-foo$' || return 1
	# cat, write and append take -i as the other verbs do
	fdr write -i foo trace_marker with-i
	expect_rc 0 || return 1
	fdr append --instance=foo trace_marker with-instance
	expect_rc 0 || return 1
	fdr cat -i foo trace
	expect_out 'tracing_mark_write: with-i$' || return 1
	expect_out 'tracing_mark_write: with-instance$' || return 1
	fdr cat -ifoo tracing_on
	expect_out '^1$' || return 1
	fdr cat trace
	expect_no_out 'with-i' || return 1
	fdr write -i
	expect_rc 2 || return 1
	# for cat, write and append only the first argument asks for help: later
	# ones are paths and values
	fdr write -i foo trace_marker --help
	expect_rc 0 || return 1
	fdr show -i foo
	expect_out 'tracing_mark_write: --help$' || return 1
	fdr cat -i nosuch trace
	expect_rc 1 || return 1
	fdr show
	expect_no_out 'in-foo' || return 1
	fdr stop -i foo
	expect_rc 0 || return 1
	cat_is instances/foo/tracing_on 0 || return 1
	cat_is tracing_on 1 || return 1
	fdr stat -i foo
	expect_rc 0 || return 1
	expect_out '^instance: foo$' || return 1
	fdr rmdir instances/foo
	expect_rc 0 || return 1
	fdr ls instances
	expect_no_out 'foo' || return 1
	fdr rmdir instances/foo
	expect_rc 1 || return 1
	fdr start -i bar -e 'tcli:*'
	expect_rc 0 || return 1
	fdr list -i bar
	expect_out '^tcli:\* \[pending\]$' || return 1
	fdr list
	expect_no_out 'tcli' || return 1
	fdr rmdir instances/bar
	expect_rc 0 || return 1
}

test_start_options() {
	fdr destroy
	expect_rc 0 || return 1
	fdr start -b 100 -m discard -C mono -e 'tcli:*' -e 'other:x'
	expect_rc 0 || return 1
	cat_is buffer_size_kb 103 || return 1
	cat_is options/overwrite 0 || return 1
	cat_is trace_clock 'local global counter uptime perf [mono] mono_raw boot tai x86-tsc' || return 1
	fdr cat set_event_pending
	expect_out '^tcli:\*$' || return 1
	expect_out '^other:x$' || return 1
	fdr stat
	expect_out '^mode: discard$' || return 1
	# an existing session keeps its settings unless asked
	fdr start
	cat_is buffer_size_kb 103 || return 1
	fdr start -b 5 -m overwrite
	expect_rc 0 || return 1
	cat_is buffer_size_kb 7 || return 1
	cat_is options/overwrite 1 || return 1
	fdr start -C bogus
	expect_rc 2 || return 1
	fdr start -S 8
	expect_rc 0 || return 1
	fdr destroy
	fdr start -S 8
	expect_rc 0 || return 1
	cat_is buffer_subbuf_size_kb 8 || return 1
}

test_session_selection() {
	fdr -s other start
	expect_rc 0 || return 1
	[ -d "$(session_dir other)" ] || { diag "-s other: no $(session_dir other)"; return 1; }
	fdr -s other write trace_marker only-other
	fdr -s other show
	expect_out 'only-other' || return 1
	fdr show
	expect_no_out 'only-other' || return 1
	run env FDR_SESSION=other "$FDR" show
	expect_out 'only-other' || return 1
	fdr -s other destroy
	expect_rc 0 || return 1
	[ ! -e "$(session_dir other)" ] || { diag "destroy left $(session_dir other)"; return 1; }
}

# Numbers are range-checked before they are narrowed (issue 12): 2^32 + 1 is
# not CPU 1, and the same parser serves every verb.
test_numbers_range() {
	local n
	for n in 4294967297 4294967296 18446744073709551617 -1 1x ''; do
		fdr show -c "$n"
		expect_rc 2 || return 1
		expect_err "expected a CPU number \(a number from 0 to [0-9]+\), found '$n'" ||
			return 1
	done
	fdr show -c4294967297
	expect_rc 2 && expect_err "found '4294967297'" || return 1
	fdr snapshot show -c 4294967297
	expect_rc 2 || return 1
	fdr start -b 4294967297
	expect_rc 2 && expect_err "found '4294967297'" || return 1
	fdr report -c 4294967297 nosuch.dat
	expect_rc 2 && expect_err "found '4294967297'"
}

# buffer_size_kb: the bound the message states is the one the code accepts (a
# CPU's buffer must fit in 4 GiB minus one sub-buffer); enospc.sh checks that
# the bound itself gets as far as allocating.
test_buffer_size_bound() {
	local max
	fdr write buffer_subbuf_size_kb 4
	expect_rc 0 || return 1
	fdr write buffer_size_kb 4194304
	expect_rc 2 || return 1
	max=$(sed -n 's/.*expected a number from 1 to \([0-9]*\), found.*/\1/p' "$ERR" | head -1)
	if [ "$max" != 4177912 ]; then
		diag "the bound stated for 4 KiB sub-buffers is '$max', expected 4177912"
		show_io
		return 1
	fi
	fdr write buffer_size_kb $((max + 1))
	expect_rc 2 && expect_err "from 1 to $max, found '$((max + 1))'" || return 1
	fdr start -b $((max + 1))
	expect_rc 2 && expect_err "from 1 to $max with 4 KiB sub-buffers" || return 1
	fdr start -S 128 -b 4193537
	expect_rc 2 && expect_err "from 1 to 4193536 with 128 KiB sub-buffers"
}

# A control byte in a filter is named, with its offset (issue 12).
test_filter_control_byte() {
	[ -n "$DEMO" ] || { echo "# no fdr-demo: no event to filter"; return 0; }
	# fdr-demo registers its events when it attaches
	run "$DEMO" -n 1 -r 0 -q
	expect_rc 0 || return 1
	fdr write events/demo/request/filter "$(printf 'status == 1 \001')"
	expect_rc 2 || return 1
	expect_err 'Unexpected character 0x01 \(a control byte\) at offset 12' || return 1
	fdr cat events/demo/request/filter
	expect_out 'parse_error: Unexpected character 0x01'
}

# -d DIR start names the session by its directory.
test_start_dir_message() {
	local d=$T/dsession
	fdr -d "$d" start
	expect_rc 0 && expect_err "^fdr: session $d created\$" || return 1
	fdr -d "$d" start
	expect_rc 0 && expect_err "^fdr: session $d started\$" || return 1
	fdr -d "$d" destroy
	expect_rc 0
}

# Corrupted shared memory is worded as such, with where; extract does not blame
# writing, and leaves no file; destroy still removes a session whose control
# file is corrupted.
test_corrupted_wording() {
	local d=$T/corrupt
	fdr -d "$d" start -b 16
	expect_rc 0 || return 1
	printf 'XXXX' | dd of="$d/ring.0.0" conv=notrunc 2>/dev/null
	fdr -d "$d" show
	expect_rc 1 && expect_err "^fdr show: session $d is corrupted: " || return 1
	fdr -d "$d" extract -o "$T/x.dat"
	expect_rc 1 && expect_err "^fdr extract: session $d is corrupted: reading the instance" ||
		return 1
	if grep -q 'cannot write' "$ERR" || [ -e "$T/x.dat" ]; then
		diag "extract blamed writing, or left $T/x.dat"
		show_io
		return 1
	fi
	fdr -d "$d" export --format text -o "$T/x.txt"
	expect_rc 1 && expect_err "session $d is corrupted" || return 1
	fdr -d "$d" stat
	expect_rc 1 && expect_err "session $d is corrupted" || return 1
	printf 'XXXX' | dd of="$d/control" conv=notrunc 2>/dev/null
	fdr -d "$d" show
	expect_rc 1 && expect_err "session $d is corrupted: its control file" || return 1
	fdr -d "$d" destroy
	expect_rc 0 || return 1
	[ ! -e "$d" ] || { diag "destroy left $d: $(ls -A "$d")"; return 1; }
}

# The temporary files of a creator that died are removed by the next command;
# those of a live PID, those locked by a creator at work, and other names stay.
test_leftover_tmp() {
	local d dead
	d=$(session_dir)
	sh -c 'exit 0' &
	dead=$!
	wait "$dead"
	kill -0 "$dead" 2>/dev/null && { echo "# pid $dead reused at once"; return 0; }
	: >"$d/.tmp.control.$dead"
	: >"$d/.tmp.ring.3.7.$dead"
	: >"$d/.tmp.control.$$"
	: >"$d/.tmp.other.$dead"
	: >"$d/.tmp.ring.x.7.$dead"
	: >"$d/.tmp.locked.$dead"
	: >"$d/.tmp.ring.1.1.$dead"
	# a creator at work holds a lock on its file (this shell plays it)
	local lockfd
	exec {lockfd}<"$d/.tmp.ring.1.1.$dead"
	flock -x "$lockfd" || return 1
	fdr stat
	exec {lockfd}<&-
	expect_rc 0 || return 1
	local f ok=0
	for f in ".tmp.control.$dead" ".tmp.ring.3.7.$dead"; do
		[ -e "$d/$f" ] && { diag "$f (dead creator) is still there"; ok=1; }
	done
	for f in ".tmp.control.$$" ".tmp.other.$dead" ".tmp.ring.x.7.$dead" \
		".tmp.ring.1.1.$dead"; do
		[ -e "$d/$f" ] || { diag "$f was removed"; ok=1; }
	done
	rm -f "$d"/.tmp.*
	return $ok
}

test_destroy() {
	local d
	d=$(session_dir)
	fdr destroy
	expect_rc 0 || return 1
	[ ! -e "$d" ] || { diag "$d still there"; return 1; }
	fdr cat trace
	expect_rc 1 || return 1
	fdr destroy
	expect_rc 1 || return 1
}

test_demo() {
	if [ -z "$DEMO" ] || [ ! -x "$DEMO" ]; then
		echo "# skip: no fdr-demo (${DEMO:-not built})"
		return 0
	fi
	fdr start -e 'demo:*'
	expect_rc 0 || return 1
	run timeout -k 5 60 "$DEMO"
	expect_rc 0 || return 1
	fdr show
	expect_rc 0 || return 1
	local req fail500
	req=$(grep -Ec '^ *fdr-demo-[0-9]+ +\[[0-9]{3}\] [.0-9]{5} +[0-9]+\.[0-9]{6}: request: status=[0-9]+ latency_ns=[0-9]+ path=/' "$OUT")
	fail500=$(grep -c ': request: status=500 ' "$OUT")
	if [ "$req" -lt 100 ]; then
		diag "$req demo:request lines (expected about 1000)"
		show_io
		return 1
	fi
	[ "$fail500" -ge 1 ] || { diag "no request with status=500"; return 1; }
	fdr list
	expect_out '^demo:request \[enabled\]$' || return 1
	# the kernel's ':EVENT' (any system) and 'SYSTEM:' (all of it)
	fdr write set_event ':cache'
	expect_rc 0 || return 1
	expect_empty_err || return 1
	fdr cat set_event
	[ "$(cat "$OUT")" = "demo:cache" ] || { diag "':cache' enabled: $(cat "$OUT")"; return 1; }
	fdr write set_event 'demo:'
	expect_rc 0 || return 1
	fdr list
	expect_out '^demo:db_query \[enabled\]$' || return 1
	echo "# $req requests, $fail500 failed"
}

# tracing_cpumask keeps out the records of the CPUs it leaves out;
# options/stacktrace writes the writer's stack after each record
test_cpumask_and_stacktrace() {
	local n0 n1
	if [ -z "$DEMO" ] || [ ! -x "$DEMO" ] || [ "$(nproc)" -lt 2 ] ||
	   ! command -v taskset >/dev/null; then
		echo "# skip: needs fdr-demo, taskset and 2 CPUs"
		return 0
	fi
	fdr write set_event 'demo:request'
	expect_rc 0 || return 1
	fdr write tracing_cpumask 1
	expect_rc 0 || return 1
	fdr write trace
	run taskset -c 1 "$DEMO" -n 20 -r 0 -q
	expect_rc 0 || return 1
	fdr show
	n1=$(grep -c ': request: ' "$OUT")
	run taskset -c 0 "$DEMO" -n 20 -r 0 -q
	expect_rc 0 || return 1
	fdr show
	n0=$(grep -c ': request: ' "$OUT")
	[ "$n1" = 0 ] && [ "$n0" = 20 ] ||
		{ diag "mask 1: $n1 requests recorded from CPU 1 (0 expected), $((n0 - n1)) from CPU 0 (20)"; return 1; }
	fdr write tracing_cpumask "$(printf %x $(((1 << $(nproc)) - 1)))"
	expect_rc 0 || return 1
	fdr write options/stacktrace 1
	expect_rc 0 || return 1
	fdr write trace
	run "$DEMO" -n 5 -r 0 -q
	expect_rc 0 || return 1
	fdr show
	[ "$(grep -c ': request: ' "$OUT")" = 5 ] && [ "$(grep -c ': <user stack trace>' "$OUT")" = 5 ] ||
		{ diag "stacktrace: expected 5 requests, each followed by its stack"; show_io; return 1; }
	grep -A1 ': request: ' "$OUT" | grep -q '<user stack trace>' ||
		{ diag "the stack does not follow its record"; return 1; }
	fdr write options/stacktrace 0
	fdr write trace
	run "$DEMO" -n 5 -r 0 -q
	fdr show
	expect_no_out '<user stack trace>' || return 1
}

# fdr-demo started before its session exists attaches within a second of
# 'fdr start'; after 'fdr destroy' it goes on, and attaches again to a new
# session of the same name.
test_demo_attaches_late() {
	local pid n
	if [ -z "$DEMO" ] || [ ! -x "$DEMO" ]; then
		echo "# skip: no fdr-demo (${DEMO:-not built})"
		return 0
	fi
	env FDR_SESSION=late "$DEMO" -f -r 200 -q >"$T/demo.out" 2>&1 &
	pid=$!
	sleep 0.5
	fdr -s late start -e 'demo:request'
	expect_rc 0 || { kill "$pid"; wait "$pid"; return 1; }
	sleep 1.5
	fdr -s late show
	n=$(grep -c ': request: status=' "$OUT")
	if [ "$n" -lt 20 ]; then
		diag "$n requests recorded 1.5 s after the session appeared (200/s running)"
		kill "$pid"
		wait "$pid"
		return 1
	fi
	fdr -s late destroy
	expect_rc 0 || { kill "$pid"; wait "$pid"; return 1; }
	sleep 0.5
	kill -0 "$pid" 2>/dev/null || { diag "fdr-demo died when its session was destroyed"; return 1; }
	fdr -s late start -e 'demo:request'
	sleep 1.5
	fdr -s late show
	n=$(grep -c ': request: status=' "$OUT")
	kill -TERM "$pid"
	wait "$pid"
	rc=$?
	fdr -s late destroy
	if [ "$n" -lt 20 ]; then
		diag "$n requests recorded 1.5 s after the session was created again"
		return 1
	fi
	[ "$rc" -eq 0 ] || { diag "fdr-demo -f exit status $rc after SIGTERM"; cat "$T/demo.out"; return 1; }
}

# ---- main ---------------------------------------------------------------------

cases="
test_version
test_help
test_usage_errors
test_no_session
test_start_creates
test_ls
test_ls_long
test_cat_write_append
test_runtime_errors
test_check_errors
test_check_errors_set_event
test_usage_carets
test_enable_disable_list
test_marker_and_show
test_pipe_consumes
test_pipe_stops_on_sigterm
test_pipe_stops_on_sigint
test_pipe_ends_when_stopped
test_stop_start
test_stat
test_instances
test_start_options
test_session_selection
test_numbers_range
test_buffer_size_bound
test_filter_control_byte
test_start_dir_message
test_corrupted_wording
test_leftover_tmp
test_destroy
test_demo
test_demo_attaches_late
test_cpumask_and_stacktrace
"

cd "$T" || exit 1
run_cases "$cases"
tap_summary
