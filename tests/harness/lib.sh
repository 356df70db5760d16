# SPDX-License-Identifier: LGPL-2.1-or-later
# lib.sh - what the shell suites of tests/integration share, one copy each
# (sourced first, before the suite reads its arguments):
#
# The preamble
#   suite_init NAME [shm]  T: a new private directory ($TMPDIR/fdr-NAME.XXXXXX,
#                          mode 0700 as mktemp -d makes it); OUT and ERR, the files
#                          of the last command's output, in it. FDR_ROOT: $T/root,
#                          which fdr makes with mode 0700 at the first 'fdr start'
#                          (cli.sh checks that it does), or with shm a directory of
#                          mode 0700 made now in /dev/shm (rings written back to a
#                          disk are slow; $T/root if /dev/shm cannot have one).
#                          FDR_DIR, FDR_CLOCK_SOURCE and FDR_NO_AGENT unset;
#                          FDR_SESSION is the suite's to set. At exit, SIGINT and
#                          SIGTERM included: the suite's cleanups (at_exit, last
#                          added first), its background processes SIGKILLed
#                          (bg_add), then T and the root removed.
#   at_exit FUNC           run FUNC at exit, before T is removed
#   bg_add PID...          SIGKILL PID at exit (processes the suite started)
#   abs_path VAR...        make the paths held by the variables VAR absolute
#   skip MSG               say why the suite cannot run here, exit 77 (CTest's
#                          SKIP_RETURN_CODE)
#   kernel_sched_tracefs   the kernel's tracefs in TRACEFS, or skip (ktime, krecord)
# A target program on fifos
#   fifo_target CMD..., tcmd CMD (answer in reply), stop_target (exit 0 wanted)
# TAP
#   ok, run_cases, tap_summary, diag (below)
# Running commands and checking them
#   run, fdr (FDR: the fdr command), must, run_for, show_io, expect_rc,
#   expect_out, expect_err, caret_col, demo_total (below)

# ---- the preamble ----------------------------------------------------------------------------

_lib_at_exit=()
_lib_bg=()
_lib_shm=

_lib_cleanup() {
	local i p

	for ((i = ${#_lib_at_exit[@]} - 1; i >= 0; i--)); do
		"${_lib_at_exit[i]}"
	done
	for p in "${_lib_bg[@]}"; do
		kill -KILL "$p" 2>/dev/null
	done
	rm -rf "${T:?}" ${_lib_shm:+"$_lib_shm"}
}

suite_init() {
	T=$(mktemp -d "${TMPDIR:-/tmp}/fdr-$1.XXXXXX") || exit 1
	OUT=$T/out
	ERR=$T/err
	trap _lib_cleanup EXIT
	trap 'exit 130' INT TERM
	export FDR_ROOT=$T/root
	if [ "${2:-}" = shm ]; then
		_lib_shm=$(mktemp -d "/dev/shm/fdr-$1.XXXXXX" 2>/dev/null) || _lib_shm=
		FDR_ROOT=${_lib_shm:-$T/root}
		mkdir -p -m 700 "$FDR_ROOT" && chmod 700 "$FDR_ROOT" || exit 1
	fi
	unset FDR_DIR FDR_CLOCK_SOURCE FDR_NO_AGENT
}

at_exit() {
	_lib_at_exit+=("$1")
}

bg_add() {
	_lib_bg+=("$@")
}

abs_path() {
	local v

	for v in "$@"; do
		case ${!v} in
		/* | '') ;;
		*) printf -v "$v" '%s' "$PWD/${!v}" ;;
		esac
	done
}

skip() {
	echo "SKIP: $*"
	exit 77
}

# kernel_sched_tracefs: as root, the kernel's tracefs in $TRACEFS (mounted at
# /sys/kernel/tracing when it is not), with writable instances and the
# sched:sched_switch event; otherwise skip, saying what is missing
kernel_sched_tracefs() {
	[ "$(id -u)" = 0 ] || skip "not root: the kernel's tracefs instances need root"
	TRACEFS=$(awk '$3 == "tracefs" { print $2; exit }' /proc/mounts)
	if [ -z "$TRACEFS" ]; then
		mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null ||
			skip "the kernel's tracefs is not mounted and cannot be mounted"
		TRACEFS=/sys/kernel/tracing
	fi
	[ -w "$TRACEFS/instances" ] || skip "$TRACEFS/instances is not writable"
	grep -q '^sched:sched_switch$' "$TRACEFS/available_events" ||
		skip "the kernel has no sched:sched_switch event"
}

# kernel_state BYSTANDER [list]: the kernel's state that fdr must not change,
# as text to compare before and after: the top-level buffer's settings, those
# of the instance BYSTANDER (named like fdr's, not made by fdr), and with
# 'list' the names of every instance
kernel_state() {
	local f
	for f in tracing_on trace_clock set_event buffer_size_kb options/overwrite current_tracer \
		tracing_cpumask set_event_pid; do
		printf '%s: ' "$f"
		tr '\n' ' ' <"$TRACEFS/$f"
		echo
	done
	for f in tracing_on trace_clock set_event options/overwrite; do
		printf '%s %s: ' "$1" "$f"
		tr '\n' ' ' <"$TRACEFS/instances/$1/$f"
		echo
	done
	[ "${2:-}" != list ] || ls "$TRACEFS/instances"
}


# ---- TAP -------------------------------------------------------------------------------------

# the counts of the suite's cases
pass=0
fail=0
ncase=0

# ok STATUS NAME: one TAP line for a case that ended with STATUS (0: passed)
ok() {
	ncase=$((ncase + 1))
	if [ "$1" = 0 ]; then
		pass=$((pass + 1))
		echo "ok $ncase - $2"
	else
		fail=$((fail + 1))
		echo "not ok $ncase - $2"
	fi
}

# run_cases "CASE..." [FIRST]: run each function named, as a case named after it
# without "test_". If the case FIRST fails, the cases after it (which need it)
# are not run.
# A shell error inside a case (a bad substitution, say) abandons the whole
# run_cases command and goes on with the next one: the cases it never reached
# are counted, and tap_summary fails on them.
_lib_cases_todo=0
run_cases() {
	local c st

	for c in $1; do
		_lib_cases_todo=$((_lib_cases_todo + 1))
	done
	for c in $1; do
		"$c"
		st=$?
		_lib_cases_todo=$((_lib_cases_todo - 1))
		ok "$st" "${c#test_}"
		if [ "$st" != 0 ] && [ "$c" = "${2:-}" ]; then
			_lib_cases_todo=0 # a failed setup: the rest is skipped on purpose
			break
		fi
	done
	return 0
}

# tap_summary: the counts line; succeeds if no case failed and every case ran
tap_summary() {
	if [ "$_lib_cases_todo" -ne 0 ]; then
		echo "not ok - $_lib_cases_todo case(s) never ran: a shell error stopped run_cases"
		fail=$((fail + 1))
	fi
	echo "$pass passed, $fail failed"
	[ "$fail" -eq 0 ]
}

# diag MSG...: explain a failure (printed under "not ok")
diag() {
	echo "#   $*"
}

# run CMD...: run, keep stdout in $OUT, stderr in $ERR, status in $rc
run() {
	"$@" >"$OUT" 2>"$ERR"
	rc=$?
	return 0
}

# fdr ARGS...: run the fdr command
fdr() {
	run "$FDR" "$@"
}

# must CMD...: run CMD, it must exit 0
must() {
	run "$@"
	if [ "$rc" -ne 0 ]; then
		diag "$*: exit status $rc"
		show_io
		return 1
	fi
}

# run_for SECS SIG CMD...: run CMD in the background (this shell reaps it), wait
# until it ends or SECS seconds passed, then send SIG, and KILL 2 s later if it
# is still there. Output in $OUT and $ERR; sets $rc (137 if it had to be killed)
# and $ended (1 if it exited before SIG was sent). A blocking 'fdr pipe' is run
# this way: 'timeout' would leave a killed child unreaped where PID 1 does not
# reap orphans.
run_for() {
	local secs=$1 sig=$2 pid i
	shift 2
	"$@" >"$OUT" 2>"$ERR" &
	pid=$!
	ended=0
	for ((i = 0; i < secs * 10; i++)); do
		kill -0 "$pid" 2>/dev/null || { ended=1; break; }
		sleep 0.1
	done
	if [ "$ended" -eq 0 ]; then
		kill -s "$sig" "$pid" 2>/dev/null
		for ((i = 0; i < 20; i++)); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		if kill -0 "$pid" 2>/dev/null; then
			kill -KILL "$pid" 2>/dev/null
			wait "$pid" 2>/dev/null
			rc=137
			return 0
		fi
	fi
	wait "$pid"
	rc=$?
	return 0
}

show_io() {
	sed 's/^/#   stdout: /' "$OUT" | head -20
	sed 's/^/#   stderr: /' "$ERR" | head -20
}

# expect_rc N: the last command exited with N
expect_rc() {
	if [ "$rc" -ne "$1" ]; then
		diag "exit status $rc, expected $1"
		show_io
		return 1
	fi
}

# expect_out PATTERN (grep -E) in stdout / expect_err in stderr
expect_out() {
	grep -Eq -- "$1" "$OUT" && return 0
	diag "stdout lacks /$1/"
	show_io
	return 1
}

expect_err() {
	grep -Eq -- "$1" "$ERR" && return 0
	diag "stderr lacks /$1/"
	show_io
	return 1
}

# caret_col FILE LINE_TEXT: column of the '^' on the line after the line equal to LINE_TEXT
caret_col() {
	awk -v want="$2" 'found { print index($0, "^") - 1; exit } $0 == want { found = 1 }' "$1"
}

# demo_total OUT: events the demo wrote, from its summary line
# (requests + cache lookups (hits + misses = db queries) + db queries + markers)
demo_total() {
	sed -nE 's/.*: ([0-9]+) requests, ([0-9]+) failed, ([0-9]+) cache hits, ([0-9]+) db queries.*/\1 \2 \3 \4/p' "$1" |
		awk '{ print $1 + $2 + $3 + 2 * $4 }'
}

# ---- a target program driven through fifos ---------------------------------------------

tpid=
# fifo_target CMD...: run CMD with its stdin and stdout on fifos (fds 5 and 6)
fifo_target() {
	rm -f "$T/in" "$T/outp"
	mkfifo "$T/in" "$T/outp" || return 1
	"$@" <"$T/in" >"$T/outp" 2>"$T/terr" &
	tpid=$!
	bg_add "$tpid"
	exec 5>"$T/in" 6<"$T/outp"
}

# stop_target: close its stdin; it must exit with status 0 (every result it
# checked right; a sanitizer's report makes it exit otherwise)
stop_target() {
	local st=0
	exec 5>&- 6<&-
	[ -n "$tpid" ] && { wait "$tpid" 2>/dev/null; st=$?; }
	tpid=
	[ "$st" = 0 ] && return 0
	diag "target exit status $st"
	sed 's/^/#   target stderr: /' "$T/terr" | head -40
	return 1
}

# tcmd CMD: send CMD to the target, the answer in $reply
tcmd() {
	reply=
	echo "$1" >&5
	if ! read -r -t 20 reply <&6; then
		diag "target: no answer to '$1'"
		sed 's/^/#   target stderr: /' "$T/terr"
		return 1
	fi
}
