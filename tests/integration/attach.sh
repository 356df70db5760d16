#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# attach.sh FDR TARGET COUNT LINKED LIBPROBE - fdr attach PID and fdr detach PID (cli/attach.c)
# on a running program that never linked fdr and runs without LD_PRELOAD
# (attach-target.c: a worker checking its results, a sleeper in
# clock_nanosleep/nanosleep, the main thread blocked in read() on commands).
# The target checks its own results all along ("check") and must exit 0 at
# the end. Cases: attach, probe records exactly as expected, attach again
# (nothing to do), detach (the original byte back, SIGTRAP given back, nothing
# recorded), attach again; fdr killed with SIGKILL at each point of its work
# (FDR_ATTACH_TEST_KILL) and after random delays; a thread blocking SIGTRAP
# (the agent refuses to arm); a user who may not ptrace the target (root only);
# a program linked with libfdr (left alone) and one with LD_PRELOAD (refused).
set -u
# shellcheck source=../harness/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib.sh"

FDR=${1:?usage: attach.sh FDR TARGET COUNT LINKED LIBPROBE}
TGT=$2
COUNT=$3
LINKED=$4 # probe-agent-target: linked with libfdr
LIBPROBE=$5
abs_path FDR TGT COUNT LINKED LIBPROBE
suite_init attach shm
# the breakpoint form (first byte cc), but for test_optimized's target
export FDR_PROBE_OPTIMIZE=0
export FDR_SESSION=at
unset LD_PRELOAD

# start_target ARGS...: the target, in no session of its own, on the fifos
start_target() {
	start_target_cmd "$TGT" "$@"
}

# start_target_cmd CMD...: another program on the same fifos
start_target_cmd() {
	fifo_target env -u FDR_SESSION -u FDR_ROOT "$@"
}

# healthy: the target answers and all its checks held so far
healthy() {
	tcmd check || return 1
	case $reply in
	ok*) return 0 ;;
	esac
	diag "target: $reply"
	return 1
}

# shown PID: the atfn lines of PID as 'fdr show' prints them, the address masked
shown() {
	"$FDR" show >"$T/show" 2>"$ERR" || { diag "fdr show failed"; cat "$ERR"; return 1; }
	grep -E -- "-$1 +\[[0-9]+\] .* atfn: " "$T/show" |
		sed -E 's/^.* (atfn: )\(0x[0-9a-f]+\)/\1(ADDR)/'
}

# expect_lines PID EXPECTED
expect_lines() {
	local got
	got=$(shown "$1")
	[ "$got" = "$2" ] && return 0
	diag "fdr show, atfn of pid $1:"
	printf '%s\n' "$got" | sed 's/^/#   got:      /' | head -20
	printf '%s\n' "$2" | sed 's/^/#   expected: /' | head -20
	return 1
}

# lines FROM TO: 'atfn: (ADDR) a=I s="hello"' for I in FROM..TO
lines() {
	local i
	for ((i = $1; i <= $2; i++)); do
		echo "atfn: (ADDR) a=$i s=\"hello\""
	done
}

# byte_is WANT|!WANT: the first byte of at_fn now
byte_is() {
	tcmd byte || return 1
	case $1 in
	!*) [ "$reply" != "byte ${1#!}" ] && return 0 ;;
	*) [ "$reply" = "byte $1" ] && return 0 ;;
	esac
	diag "at_fn's first byte: '$reply', expected $1"
	return 1
}

# sigtrap_caught PID: 0 if PID catches SIGTRAP (SigCgt bit 5)
sigtrap_caught() {
	local cgt
	cgt=$(sed -n 's/^SigCgt:\t*//p' "/proc/$1/status")
	(((16#$cgt >> 4) & 1))
}

# ---- cases ------------------------------------------------------------------------------------

test_setup() {
	must "$FDR" start -b 256 || return 1
	must "$FDR" append uprobe_events "p:uprobes/atfn $TGT:at_fn a=%di:s32 s=+0(%si):string" ||
		return 1
	must "$FDR" write events/uprobes/atfn/enable 1
}

# attach: the probe defined before is armed at once and records exactly
test_attach() {
	start_target || return 1
	tcmd pid || return 1
	apid=${reply#pid }
	byte_is '!cc' || return 1
	orig=${reply#byte }
	tcmd "call 2" || return 1
	! grep -q libfdr "/proc/$apid/maps" || { diag "libfdr mapped before attach"; return 1; }
	must "$FDR" attach "$apid" || return 1
	grep -qE "^pid $apid attached to session .*/at \(thread [0-9]+ stopped [0-9.]+ ms\)\$" "$OUT" ||
		{ diag "output: $(cat "$OUT")"; return 1; }
	grep -q "libfdr-probe" "/proc/$apid/maps" || { diag "libfdr-probe not mapped"; return 1; }
	byte_is cc || return 1
	tcmd "call 5" && [ "$reply" = "ok $((5 * 4 + 5 * 101))" ] || { diag "call: $reply"; return 1; }
	expect_lines "$apid" "$(lines 0 4)" || return 1
	must "$COUNT" uprobes/atfn && [ "$(cat "$OUT")" = "5 0" ] || { diag "count: $(cat "$OUT")"; return 1; }
	healthy
}

# attach again: nothing to do, said so
test_attach_twice() {
	must "$FDR" attach "$apid" || return 1
	grep -q "^pid $apid was attached already to session" "$OUT" || { diag "output: $(cat "$OUT")"; return 1; }
	byte_is cc && healthy
}

# detach: original byte back at once, SIGTRAP given back, nothing recorded after
test_detach() {
	sigtrap_caught "$apid" || { diag "SIGTRAP not caught while armed"; return 1; }
	must "$FDR" detach "$apid" || return 1
	grep -q "^pid $apid detached: every probe removed" "$OUT" || { diag "output: $(cat "$OUT")"; return 1; }
	byte_is "$orig" || return 1
	! sigtrap_caught "$apid" || { diag "SIGTRAP still caught after detach"; return 1; }
	tcmd "call 3" && [ "$reply" = "ok $((3 * 2 + 3 * 101))" ] || { diag "call: $reply"; return 1; }
	sleep 0.3
	expect_lines "$apid" "$(lines 0 4)" || return 1
	must "$FDR" detach "$apid" || return 1
	grep -q "^pid $apid was not attached" "$OUT" || { diag "output: $(cat "$OUT")"; return 1; }
	healthy
}

# attach again after detach: armed again, records again; then detach again
test_reattach() {
	must "$FDR" attach "$apid" || return 1
	grep -q "^pid $apid attached to session" "$OUT" || { diag "output: $(cat "$OUT")"; return 1; }
	byte_is cc || return 1
	tcmd "call 2" || return 1
	expect_lines "$apid" "$(lines 0 4; lines 0 1)" || return 1
	must "$FDR" detach "$apid" || return 1
	byte_is "$orig" && healthy || return 1
	# nothing of the session left open in the program: three more attach and
	# detach cycles, then no descriptor on the session's directory (each
	# cycle left one before) and no mapping of its files (each left the
	# probes file mapped before)
	for _ in 1 2 3; do
		must "$FDR" attach "$apid" && dir_fds "$apid" 1 && must "$FDR" detach "$apid" ||
			return 1
	done
	dir_fds "$apid" 0 && session_maps "$apid" 0 && healthy
}

# session_maps PID N: PID maps exactly N of the session's files (1 s to get there:
# the agent drops a detached session's probes file at its next round)
session_maps() {
	local i n
	for i in $(seq 20); do
		n=$(grep -c " $FDR_ROOT/$FDR_SESSION/" "/proc/$1/maps")
		[ "$n" = "$2" ] && return 0
		sleep 0.05
	done
	diag "pid $1 maps $n of the session's files, expected $2:"
	grep " $FDR_ROOT/$FDR_SESSION/" "/proc/$1/maps" | sed 's/^/#   /'
	return 1
}

# dir_fds PID N: PID has exactly N descriptors open on the session directory (1 s to get there)
dir_fds() {
	local i n
	for i in $(seq 20); do
		n=$(find "/proc/$1/fd" -lname "$FDR_ROOT/$FDR_SESSION" 2>/dev/null | wc -l)
		[ "$n" = "$2" ] && return 0
		sleep 0.05
	done
	diag "pid $1 has $n descriptors on $FDR_ROOT/$FDR_SESSION, expected $2:"
	ls -l "/proc/$1/fd" | sed 's/^/#   /'
	return 1
}

# wait_byte WANT|!WANT: at_fn's first byte becomes WANT within 1.5 s
wait_byte() {
	local i
	for ((i = 0; i < 15; i++)); do
		byte_is "$1" >/dev/null && return 0
		sleep 0.1
	done
	byte_is "$1"
}

# the agent thread runs in the attached program: a probe enabled, disabled,
# defined after the attach is armed and disarmed within a second
test_agent_runs() {
	must "$FDR" write events/uprobes/atfn/enable 0 || return 1
	must "$FDR" attach "$apid" || return 1
	byte_is "$orig" || return 1
	must "$FDR" write events/uprobes/atfn/enable 1 || return 1
	wait_byte cc || return 1
	tcmd "call 1" || return 1
	expect_lines "$apid" "$(lines 0 4; lines 0 1; lines 0 0)" || return 1
	must "$FDR" write events/uprobes/atfn/enable 0 || return 1
	wait_byte "$orig" || return 1
	must "$FDR" append uprobe_events "p:uprobes/atfn2 $TGT:at_fn b=%di:s32" || return 1
	must "$FDR" write events/uprobes/atfn2/enable 1 || return 1
	wait_byte cc || return 1
	tcmd "call 2" || return 1
	[ "$("$FDR" show | grep -cE -- "-$apid +\[[0-9]+\] .* atfn2: \(0x[0-9a-f]+\) b=[01]\$")" = 2 ] ||
		{ diag "atfn2 lines:"; "$FDR" show | grep atfn2 | sed 's/^/#   /'; return 1; }
	must "$FDR" write events/uprobes/atfn2/enable 0 || return 1
	must "$FDR" append uprobe_events "-:uprobes/atfn2" || return 1
	wait_byte "$orig" || return 1
	must "$FDR" write events/uprobes/atfn/enable 1 || return 1
	must "$FDR" detach "$apid" || return 1
	byte_is "$orig" && healthy
}

# the code injected into the worker (running its loop: registers, flags, vector
# registers live) and into the sleeper (in clock_nanosleep or nanosleep, which
# must be restarted), 10 times each: every result stays right
test_threads() {
	local w sl i
	tcmd tids || return 1
	read -r _ w sl <<<"$reply"
	for ((i = 0; i < 10; i++)); do
		FDR_ATTACH_THREAD=$w must "$FDR" attach "$apid" || return 1
		grep -q "(thread $w stopped" "$OUT" || { diag "output: $(cat "$OUT")"; return 1; }
		byte_is cc || return 1
		FDR_ATTACH_THREAD=$sl must "$FDR" detach "$apid" || return 1
		grep -q "(thread $sl stopped" "$OUT" || { diag "output: $(cat "$OUT")"; return 1; }
		byte_is "$orig" || return 1
		FDR_ATTACH_THREAD=$sl must "$FDR" attach "$apid" || return 1
		FDR_ATTACH_THREAD=$w must "$FDR" detach "$apid" || return 1
		healthy || { diag "iteration $i"; return 1; }
	done
	sleep 0.6 # the sleeper goes round at least twice more
	healthy
}

# fdr killed by SIGKILL at each point of attach and of detach: the program runs
# on right; a normal attach and detach afterwards still work
test_kill_points() {
	local p
	for p in cave seized frame regs detached; do
		FDR_ATTACH_TEST_KILL=$p run "$FDR" attach "$apid"
		[ "$rc" = 137 ] || { diag "attach killed at $p: status $rc"; show_io; return 1; }
		sleep 0.1
		healthy || { diag "after attach killed at $p"; return 1; }
		must "$FDR" attach "$apid" || return 1
		byte_is cc || return 1
		FDR_ATTACH_TEST_KILL=$p run "$FDR" detach "$apid"
		[ "$rc" = 137 ] || { diag "detach killed at $p: status $rc"; show_io; return 1; }
		sleep 0.1
		healthy || { diag "after detach killed at $p"; return 1; }
		must "$FDR" detach "$apid" || return 1
		byte_is "$orig" || return 1
	done
	tcmd "call 4" && [ "$reply" = "ok $((4 * 3 + 4 * 101))" ] || { diag "call: $reply"; return 1; }
}

# fdr attach and detach killed after a random 0-19 ms, 40 times each
test_kill_random() {
	local i pid
	for ((i = 0; i < 40; i++)); do
		"$FDR" attach "$apid" >/dev/null 2>&1 &
		pid=$!
		sleep "0.0$((RANDOM % 2))$((RANDOM % 10))"
		kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		"$FDR" detach "$apid" >/dev/null 2>&1 &
		pid=$!
		sleep "0.0$((RANDOM % 2))$((RANDOM % 10))"
		kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		healthy || { diag "iteration $i"; return 1; }
	done
	sleep 0.2
	must "$FDR" attach "$apid" || return 1
	byte_is cc || return 1
	must "$FDR" detach "$apid" || return 1
	byte_is "$orig" || return 1
	tcmd "call 4" && [ "$reply" = "ok $((4 * 3 + 4 * 101))" ] || { diag "call: $reply"; return 1; }
	healthy && stop_target
}

# a thread that blocked SIGTRAP before fdr came: the agent refuses to arm, says why
test_blocked_sigtrap() {
	local bpid i
	start_target blocktrap || return 1
	tcmd pid || return 1
	bpid=${reply#pid }
	must "$FDR" attach "$bpid" || return 1
	for ((i = 0; i < 15; i++)); do
		"$FDR" cat error_log >"$T/log" 2>&1
		grep -q "pid $bpid: probe not armed: thread [0-9]* blocks SIGTRAP" "$T/log" && break
		sleep 0.1
	done
	grep -q "pid $bpid: probe not armed: thread [0-9]* blocks SIGTRAP" "$T/log" ||
		{ diag "error_log:"; sed 's/^/#   /' "$T/log"; return 1; }
	byte_is '!cc' || return 1
	tcmd "call 3" && [ "$reply" = "ok $((3 * 2 + 3 * 101))" ] || { diag "call: $reply"; return 1; }
	must "$FDR" detach "$bpid" || return 1
	healthy && stop_target
}

# the ptrace rules: a user who is not the target's may not attach; root may
# attach to nobody's process, which cannot open root's session (root only)
test_not_permitted() {
	local ppid_
	[ "$(id -u)" = 0 ] && command -v setpriv >/dev/null || { echo "# skipped: needs root and setpriv"; return 0; }
	start_target || return 1
	tcmd pid || return 1
	ppid_=${reply#pid }
	run setpriv --reuid=65534 --regid=65534 --clear-groups "$FDR" attach "$ppid_"
	[ "$rc" = 1 ] && grep -q "cannot attach to pid $ppid_: .* (ptrace rules" "$ERR" ||
		{ diag "as nobody: status $rc"; show_io; return 1; }
	! grep -q libfdr "/proc/$ppid_/maps" || { diag "libfdr mapped"; return 1; }
	healthy && stop_target || return 1
	# the other way round: root may ptrace nobody's process, which cannot open root's session
	start_target_cmd setpriv --reuid=65534 --regid=65534 --clear-groups "$TGT" || return 1
	tcmd pid || return 1
	ppid_=${reply#pid }
	run "$FDR" attach "$ppid_"
	[ "$rc" = 1 ] && grep -q "pid $ppid_ cannot open session .*/at (it must be the same user's)" "$ERR" ||
		{ diag "nobody's process: status $rc"; show_io; return 1; }
	byte_is '!cc' || return 1
	tcmd "call 3" && [ "$reply" = "ok $((3 * 2 + 3 * 101))" ] || { diag "call: $reply"; return 1; }
	healthy && stop_target
}

# linked with libfdr: left alone, exit 0; libfdr-probe preloaded: refused
test_uses_fdr() {
	local p
	start_target_cmd "$LINKED" || return 1
	tcmd pid || return 1
	p=${reply#pid }
	must "$FDR" attach "$p" || return 1
	grep -q "^pid $p is linked with libfdr and records into a session of its own: its own agent arms the probes of that session; nothing done" "$OUT" ||
		{ diag "output: $(cat "$OUT")"; return 1; }
	! grep -q libfdr-probe "/proc/$p/maps" || { diag "libfdr-probe loaded"; return 1; }
	stop_target || return 1
	start_target_cmd env LD_PRELOAD="$LIBPROBE" "$TGT" || return 1
	tcmd pid || return 1
	p=${reply#pid }
	run "$FDR" attach "$p"
	[ "$rc" = 1 ] && grep -q "pid $p already uses fdr" "$ERR" || { diag "preloaded: $rc"; show_io; return 1; }
	run "$FDR" detach "$p"
	[ "$rc" = 1 ] && grep -q "pid $p already uses fdr" "$ERR" || { diag "detach preloaded: $rc"; show_io; return 1; }
	healthy && stop_target
}

# a target whose environment names this very session: libfdr, loaded by fdr
# attach (RTLD_LOCAL), must not attach to it from its own constructor before
# fdr attach names the session (it then refused: "records into a session of
# its own")
test_env_session() {
	local p
	rm -f "$T/in" "$T/outp"
	mkfifo "$T/in" "$T/outp" || return 1
	"$TGT" <"$T/in" >"$T/outp" 2>"$T/terr" &
	tpid=$!
	bg_add "$tpid"
	exec 5>"$T/in" 6<"$T/outp"
	tcmd pid || return 1
	p=${reply#pid }
	must "$FDR" attach "$p" || return 1
	grep -qE "^pid $p attached to session .*/at " "$OUT" || { diag "output: $(cat "$OUT")"; return 1; }
	byte_is cc || return 1
	must "$FDR" detach "$p" || return 1
	byte_is "$orig" && healthy && stop_target
}

# dlopen() failing in the process: dlerror()'s text; then a good attach still works
test_dlopen_error() {
	local p
	head -c 4096 /dev/zero | tr '\0' x >"$T/bad.so" # not an ELF file
	start_target || return 1
	tcmd pid || return 1
	p=${reply#pid }
	FDR_PROBE_LIB=$T/bad.so run "$FDR" attach "$p"
	[ "$rc" = 1 ] && grep -q "pid $p: dlopen() in the process failed: $T/bad.so: invalid ELF header" "$ERR" ||
		{ diag "bad library: $rc"; show_io; return 1; }
	healthy || return 1
	must "$FDR" attach "$p" || return 1
	grep -q "^pid $p attached to session" "$OUT" || { diag "output: $(cat "$OUT")"; return 1; }
	byte_is cc || return 1
	must "$FDR" detach "$p" || return 1
	healthy && stop_target
}

# jump-optimised probes through fdr attach, in a target started without
# FDR_PROBE_OPTIMIZE=0: an entry and a return probe on at_fn become one jmp
# (first byte e9, uprobe_profile's [OPTIMIZED 1]), record exactly, and fdr
# detach puts at_fn's bytes back as they were, the program running on right
# (its threads check their results); three attach and detach cycles
test_optimized() {
	local p i obytes n
	if [ -n "${FDR_TEST_TSAN:-}" ]; then
		diag "skipped in the TSan build: jump optimisation cannot run under TSan (probes.md)"
		return 0
	fi
	must "$FDR" append uprobe_events "r:uprobes/atret $TGT:at_fn rv=\$retval:s32" || return 1
	must "$FDR" write events/uprobes/atret/enable 1 || return 1
	start_target_cmd env -u FDR_PROBE_OPTIMIZE "$TGT" || return 1
	tcmd pid || return 1
	p=${reply#pid }
	tcmd bytes || return 1
	obytes=$reply
	for i in 1 2 3; do
		must "$FDR" attach "$p" || return 1
		wait_byte e9 || { sed "s|^|#   target stderr: |" "$T/terr"; return 1; }
		must "$FDR" cat uprobe_profile || return 1
		grep -q "atret.* \[OPTIMIZED 1\]\$" "$OUT" ||
			{ diag "uprobe_profile:"; sed 's/^/#   /' "$OUT"; return 1; }
		tcmd "call 3" && [ "$reply" = "ok $((3 * 2 + 3 * 101))" ] || { diag "call: $reply"; return 1; }
		expect_lines "$p" "$(for ((n = 0; n < i; n++)); do lines 0 2; done)" || return 1
		"$FDR" show | grep -E -- "-$p +\[[0-9]+\] .* atret: " |
			sed -E 's/^.* (atret: )\(0x[0-9a-f]+ <- 0x[0-9a-f]+\)/\1(F <- R)/' >"$T/rets"
		[ "$(cat "$T/rets")" = "$(for ((n = 0; n < i; n++)); do
			printf 'atret: (F <- R) rv=%d\n' 101 103 105
		done)" ] || { diag "return lines:"; sed 's/^/#   /' "$T/rets"; return 1; }
		must "$FDR" detach "$p" || return 1
		tcmd bytes && [ "$reply" = "$obytes" ] ||
			{ diag "after detach: $reply, expected $obytes"; return 1; }
		tcmd "call 3" && [ "$reply" = "ok $((3 * 2 + 3 * 101))" ] || { diag "call: $reply"; return 1; }
		healthy || return 1
	done
	must "$FDR" write events/uprobes/atret/enable 0 || return 1
	must "$FDR" append uprobe_events "-:uprobes/atret" || return 1
	stop_target
}

# no such process; a usage error
test_errors() {
	run "$FDR" attach 999999999
	[ "$rc" = 1 ] && grep -q "no process 999999999" "$ERR" || { diag "no process: $rc"; show_io; return 1; }
	run "$FDR" attach
	[ "$rc" = 2 ] || { diag "usage: $rc"; show_io; return 1; }
	run "$FDR" detach $$
	[ "$rc" = 1 ] && grep -q "has no probe agent" "$ERR" || { diag "detach of bash: $rc"; show_io; return 1; }
	# a process a debugger traces (strace here) is refused, said so
	command -v strace >/dev/null || { echo "# skipped the traced case: no strace"; return 0; }
	local sp st_pid i
	sleep 30 &
	sp=$!
	bg_add "$sp"
	strace -o /dev/null -p "$sp" 2>/dev/null &
	st_pid=$!
	bg_add "$st_pid"
	for ((i = 0; i < 50; i++)); do
		grep -q "^TracerPid:[[:space:]]*[1-9]" "/proc/$sp/status" && break
		sleep 0.05
	done
	run "$FDR" attach "$sp"
	kill "$st_pid" "$sp" 2>/dev/null
	[ "$rc" = 1 ] && grep -q "cannot attach to pid $sp: its thread $sp is traced by pid $st_pid" "$ERR" ||
		{ diag "traced: $rc"; show_io; return 1; }
}

run_cases "test_setup test_attach test_attach_twice test_detach test_reattach test_agent_runs test_threads test_kill_points
	test_kill_random test_blocked_sigtrap test_not_permitted test_uses_fdr test_env_session test_dlopen_error
	test_optimized test_errors" test_attach
tap_summary
