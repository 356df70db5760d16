#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# probe-agent.sh FDR COUNT TARGET TARGET_NOFDR LIBPROBE LIB DL TARGET_NOEV DL2 - the probe
# agent (lib/probe/agent.c) arming dynamic probes in running programs.
# Probes are defined with 'fdr append uprobe_events', enabled and disabled
# with their events/GRP/EVENT/enable file, removed with '-:'; COUNT
# (probe-count) prints a probe's hits and misses from the session's probes
# file (uprobe_profile shows the hits only). TARGET is linked with libfdr, TARGET_NOFDR is not and runs
# with LD_PRELOAD=LIBPROBE; TARGET_NOEV is linked with libfdr and has no static
# event. LIB is linked into all three, DL is dlopen()ed, then dlclose()d and
# replaced by itself and by DL2 (the same function with a nop first). The
# targets take commands on stdin (probe-agent-target.c). Each case checks the
# lines 'fdr show' prints for the probe, exactly, and their number.
set -u
# shellcheck source=../harness/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib.sh"

FDR=${1:?usage: probe-agent.sh FDR COUNT TARGET TARGET_NOFDR LIBPROBE LIB DL TARGET_NOEV DL2}
COUNT=$2
TGT=$3
TGT_NOFDR=$4
LIBPROBE=$5
LIB=$6
DL=$7
TGT_NOEV=${8:?usage: probe-agent.sh FDR COUNT TARGET TARGET_NOFDR LIBPROBE LIB DL TARGET_NOEV DL2}
DL2=${9:?usage: probe-agent.sh FDR COUNT TARGET TARGET_NOFDR LIBPROBE LIB DL TARGET_NOEV DL2}
abs_path FDR COUNT TGT TGT_NOFDR LIBPROBE LIB DL TGT_NOEV DL2
suite_init probe-agent shm
export FDR_SESSION=pa
# The cases below check the breakpoint form (first byte cc); test_optimized
# runs its target without this, where the agent makes the probe a jmp (e9).
export FDR_PROBE_OPTIMIZE=0

# ---- the target ---------------------------------------------------------------

# wait_byte CMD WANT|!WANT: poll the target's 'byte'/'dlbyte' for up to 1.5 s
wait_byte() {
	local i
	for ((i = 0; i < 15; i++)); do
		tcmd "$1" || return 1
		case $2 in
		!*) [ "$reply" != "byte ${2#!}" ] && return 0 ;;
		*) [ "$reply" = "byte $2" ] && return 0 ;;
		esac
		sleep 0.1
	done
	diag "$1: '$reply' after 1.5 s, expected byte $2"
	return 1
}

# shown NAME PID: the probe lines of NAME recorded by PID, as 'fdr show' prints
# them, with the address replaced by ADDR (it differs per run: ASLR)
shown() {
	"$FDR" show >"$T/show" 2>"$ERR" || { diag "fdr show failed"; cat "$ERR"; return 1; }
	grep -E -- "-$2 +\[[0-9]+\] .* $1: " "$T/show" |
		sed -E 's/^.* ('"$1"': )\(0x[0-9a-f]+\)/\1(ADDR)/'
}

# expect_lines NAME PID EXPECTED: exactly these lines
expect_lines() {
	local got
	got=$(shown "$1" "$2")
	[ "$got" = "$3" ] && return 0
	diag "fdr show, $1 of pid $2:"
	printf '%s\n' "$got" | sed 's/^/#   got:      /' | head -20
	printf '%s\n' "$3" | sed 's/^/#   expected: /' | head -20
	return 1
}

# lines NAME S FROM TO: "NAME: (ADDR) a=I s="S"" for I in FROM..TO
lines() {
	local i
	for ((i = $3; i <= $4; i++)); do
		echo "$1: (ADDR) a=$i s=\"$2\""
	done
}

# define LINE: append LINE to uprobe_events
define() {
	must "$FDR" append uprobe_events "$1"
}

# remove GRP/EVENT: '-:GRP/EVENT'; it must be gone from uprobe_events
remove() {
	must "$FDR" append uprobe_events "-:$1" || return 1
	must "$FDR" cat uprobe_events || return 1
	! grep -q ":$1 " "$OUT" || { diag "$1 still in uprobe_events"; cat "$OUT"; return 1; }
}

# set_enable VALUE GRP/EVENT...: write VALUE to each event's enable file
set_enable() {
	local v=$1 e
	shift
	for e in "$@"; do
		must "$FDR" write "events/$e/enable" "$v" || return 1
	done
}

# rows_ok GOT WANT: the hits counted in the per-CPU rows. All of them, WANT, but
# for the few whose restartable sequence the kernel aborted (the thread
# preempted, migrated or signalled between its CPU number and its add: the agent
# then adds to the slot's count, with a lock; fdr-abi.h, "Per-CPU hit counts"),
# at most 1 in 100 and never all: count's total, rows and slot together, is
# checked exact by the callers. WANT 0 (no rseq area): none.
rows_ok() {
	if [ "$2" -eq 0 ]; then
		[ "$1" -eq 0 ]
	else
		[ "$1" -le "$2" ] && [ "$1" -ge $(($2 - $2 / 100)) ] && [ "$1" -gt 0 ]
	fi
}

# ---- cases ------------------------------------------------------------------------------------

test_setup() {
	must "$FDR" start -b 256 || return 1
	define "p:uprobes/pafn $TGT:pa_target_fn a=%di:s32 s=+0(%si):string" || return 1
	set_enable 1 uprobes/pafn
}

# linked with libfdr: the probe is defined and enabled before the program starts
test_linked_start() {
	fifo_target "$TGT" || return 1
	tcmd "call 5" && [ "$reply" = "ok $((2 * 10 + 5 * 101))" ] || { diag "call: $reply"; return 1; }
	tcmd pid || return 1
	lpid=${reply#pid }
	tcmd byte && [ "$reply" = "byte cc" ] || { diag "armed: $reply"; return 1; }
	expect_lines pafn "$lpid" "$(lines pafn hello 0 4)" || return 1
	must "$COUNT" uprobes/pafn && [ "$(cat "$OUT")" = "5 0" ] || { diag "count: $(cat "$OUT")"; return 1; }
	# each in the row of the CPU it ran on, without a locked add (glibc's rseq area)
	local rows=5
	case "${GLIBC_TUNABLES:-}" in *glibc.pthread.rseq=0*) rows=0 ;; esac
	must "$COUNT" -r uprobes/pafn && rows_ok "$(cat "$OUT")" "$rows" ||
		{ diag "hits in the per-CPU rows: $(cat "$OUT"), expected $rows"; return 1; }
	must "$FDR" cat uprobe_profile || return 1
	grep -qE "^  $TGT pafn +5\$" "$OUT" || { diag "uprobe_profile:"; cat "$OUT"; return 1; }
}

# disabling disarms (the original byte back), enabling again arms, within 1 s
test_disable_enable() {
	set_enable 0 uprobes/pafn || return 1
	wait_byte byte '!cc' || return 1
	orig=${reply#byte }
	tcmd "call 3" || return 1
	expect_lines pafn "$lpid" "$(lines pafn hello 0 4)" || return 1
	set_enable 1 uprobes/pafn || return 1
	wait_byte byte cc || return 1
	tcmd "call 2" || return 1
	expect_lines pafn "$lpid" "$(lines pafn hello 0 4; lines pafn hello 0 1)"
}

# a child after fork records too (the int3 is in its copy of the text)
test_fork_child() {
	tcmd "fork 3" && [ "$reply" = "ok 0" ] ||
		{ diag "fork: $reply"; sed 's/^/#   target stderr: /' "$T/terr" | head -60; return 1; }
	"$FDR" show >"$T/show"
	local n
	n=$(grep -Ec ' pafn: \(0x[0-9a-f]+\) a=[0-2] s="child"$' "$T/show")
	[ "$n" = 3 ] || { diag "child lines: $n, expected 3"; grep child "$T/show" | head; return 1; }
	grep -E ' pafn: .*s="child"$' "$T/show" | grep -qv -- "-$lpid " ||
		{ diag "the child's lines carry the parent's pid"; return 1; }
}

# a shared library the program is linked with; then one it dlopen()s later
test_shared_lib() {
	define "p:uprobes/palib $LIB:pa_lib_fn a=%di:u32 s=+0(%si):string" || return 1
	set_enable 1 uprobes/palib || return 1
	sleep 1.2
	tcmd "lib 3" || return 1
	expect_lines palib "$lpid" "$(lines palib lib 0 2)"
}

test_dlopen_lib() {
	define "p:uprobes/padl $DL:pa_dl_fn a=%di:u32 s=+0(%si):string" || return 1
	set_enable 1 uprobes/padl || return 1
	tcmd "dlopen $DL" && [ "$reply" = ok ] || { diag "dlopen: $reply"; return 1; }
	wait_byte dlbyte cc || return 1
	tcmd "dl 2" || return 1
	expect_lines padl "$lpid" "$(lines padl dl 0 1)"
}

# a probed library unloaded and another loaded in one go (dlclose then dlopen,
# no sync in between): first the same file, then DL2, whose first byte
# differs. The agent forgets the location whose text went (it must not take
# the new page for armed, nor write the old byte into it) and arms anew.
test_dlclose() {
	local a1 a2
	tcmd dladdr || return 1
	a1=${reply#addr }
	tcmd "reopen $DL" && [ "$reply" = ok ] || { diag "reopen: $reply"; return 1; }
	tcmd dladdr || return 1
	[ "${reply#addr }" = "$a1" ] || diag "note: reloaded at ${reply#addr }, not $a1"
	wait_byte dlbyte cc || return 1
	tcmd "dl 2" && [ "$reply" = "ok 201" ] || { diag "dl: $reply"; return 1; }
	expect_lines padl "$lpid" "$(lines padl dl 0 1; lines padl dl 0 1)" || return 1
	define "p:uprobes/padl2 $DL2:pa_dl_fn a=%di:u32 s=+0(%si):string" || return 1
	# its first byte, from the file at the offset the symbol resolved to
	must "$FDR" cat uprobe_events || return 1
	local off b2
	off=$(sed -nE "s|^p:uprobes/padl2 $DL2:(0x[0-9a-f]+) .*|\1|p" "$OUT")
	b2=$(od -An -tx1 -j "$((off))" -N1 "$DL2" | tr -d ' ')
	[ -n "$b2" ] && [ "$b2" != cc ] || { diag "first byte of $DL2 at '$off': '$b2'"; return 1; }
	set_enable 1 uprobes/padl2 || return 1
	tcmd "reopen $DL2" && [ "$reply" = ok ] || { diag "reopen: $reply"; return 1; }
	tcmd dladdr || return 1
	a2=${reply#addr }
	[ "$a2" = "$a1" ] || diag "note: $DL2 loaded at $a2, not $a1"
	wait_byte dlbyte cc || return 1
	tcmd "dl 3" && [ "$reply" = "ok 303" ] || { diag "dl: $reply"; return 1; }
	expect_lines padl2 "$lpid" "$(lines padl2 dl 0 2)" || return 1
	expect_lines padl "$lpid" "$(lines padl dl 0 1; lines padl dl 0 1)" || return 1
	set_enable 0 uprobes/padl2 || return 1
	wait_byte dlbyte '!cc' || return 1
	[ "$reply" = "byte $b2" ] || { diag "$DL2's first byte after the disarm: $reply, not $b2"; return 1; }
	tcmd "dl 1" && [ "$reply" = "ok 100" ] || { diag "dl: $reply"; return 1; }
	remove uprobes/padl2
}

# DL loaded by the dynamic linker and mapped once more by hand (mmap): the
# agent finds the first mapping the fast way (the linker's objects) and must
# arm the second one too (its walk of every mapping after the first arms).
test_hand_mapped() {
	local off
	if [ -n "${FDR_TEST_TSAN:-}" ]; then
		# built with TSan, pa_dl_fn calls the TSan runtime through its GOT,
		# which nothing relocates in a copy mapped by hand: it jumps to 0
		diag "skipped in the TSan build: the hand-mapped copy cannot run there"
		return 0
	fi
	# padl (test_dlopen_lib) would keep DL's copies armed: off for this case
	set_enable 0 uprobes/padl || return 1
	tcmd "reopen $DL" && [ "$reply" = ok ] || { diag "reopen: $reply"; return 1; }
	define "p:uprobes/pahand $DL:pa_dl_fn a=%di:u32 s=+0(%si):string" || return 1
	must "$FDR" cat uprobe_events || return 1
	off=$(sed -nE "s|^p:uprobes/pahand $DL:(0x[0-9a-f]+) .*|\1|p" "$OUT")
	[ -n "$off" ] || { diag "no offset for pahand in uprobe_events"; return 1; }
	tcmd "handmap $DL $off" && [ "$reply" = ok ] || { diag "handmap: $reply"; return 1; }
	tcmd handbyte || return 1
	local orig=${reply#byte }
	set_enable 1 uprobes/pahand || return 1
	wait_byte dlbyte cc || return 1
	wait_byte handbyte cc || return 1
	tcmd "hand 2" && [ "$reply" = "ok 209" ] || { diag "hand: $reply"; return 1; }
	expect_lines pahand "$lpid" "$(lines pahand hand 0 1)" || return 1
	set_enable 0 uprobes/pahand || return 1
	wait_byte handbyte "$orig" || return 1
	remove uprobes/pahand
}

# wait_log TEXT: error_log has a line with TEXT within 1.5 s
wait_log() {
	local i
	for ((i = 0; i < 15; i++)); do
		"$FDR" cat error_log >"$T/log" 2>&1
		grep -qF -- "$1" "$T/log" && return 0
		sleep 0.1
	done
	diag "error_log has no '$1':"
	sed 's/^/#   /' "$T/log"
	return 1
}

# refusals go to error_log with the engine's message; the program is untouched
test_refused() {
	define "p:uprobes/pabad $TGT:pa_asm_fn+1 a=%di:s32" || return 1
	set_enable 1 uprobes/pabad || return 1
	wait_log "trace_uprobe: error: pid $lpid: probe not armed: 0x" || return 1
	grep -qE "pid $lpid: probe not armed: 0x[0-9a-f]+ is not an instruction boundary: it is byte 1 of 'mov' at 0x[0-9a-f]+ \(length 10\)" "$T/log" ||
		{ diag "the boundary message:"; sed 's/^/#   /' "$T/log"; return 1; }
	define "r:uprobes/paretin $TGT:pa_target_fn+4" || return 1
	set_enable 1 uprobes/paretin || return 1
	wait_log "pid $lpid: probe not armed: a return probe must be at a function's first instruction" || return 1
	tcmd "call 1" && [ "$reply" = "ok 101" ] || { diag "call: $reply"; return 1; }
	set_enable 0 uprobes/pabad uprobes/paretin || return 1
	remove uprobes/pabad && remove uprobes/paretin
}

# a thread that blocks SIGTRAP with the raw system call (probes.md, "Threads
# that block SIGTRAP"). Linked with libfdr, which dlopen()s libfdr-probe once a
# probe is live: the agent reads every thread's mask, refuses while that
# thread blocks SIGTRAP (error_log names it), and arms once it is gone.
# Preloaded: the library's pthread_sigmask() is the program's, and no thread
# blocked SIGTRAP when it was loaded, so the check is not made (armed at once;
# the thread never calls the function); FDR_PROBE_SIGBLK_CHECK=1 makes it
# there too.
test_sigblk_raw() {
	local p tid e
	if [ -n "${FDR_TEST_TSAN:-}" ]; then
		# the TSan build's tests run with FDR_PROBE_SIGBLK_CHECK=0 (TSan's own
		# thread blocks every signal): there is no check to see
		diag "skipped in the TSan build: the SIGTRAP check is off there"
		return 0
	fi
	# the other cases' probes on the same functions (their int3 would be seen)
	for e in pafn panofdr; do
		"$FDR" write "events/uprobes/$e/enable" 0 2>/dev/null
	done
	fifo_target "$TGT" || return 1
	tcmd pid || return 1
	p=${reply#pid }
	tcmd rawblock && [[ "$reply" == "ok "* ]] || { diag "rawblock: $reply"; return 1; }
	tid=${reply#ok }
	define "p:uprobes/paraw $TGT:pa_target_fn a=%di:s32 s=+0(%si):string" || return 1
	set_enable 1 uprobes/paraw || return 1
	wait_log "pid $p: probe not armed: thread $tid blocks SIGTRAP" || return 1
	tcmd byte && [ "$reply" != "byte cc" ] ||
		{ diag "linked: armed while thread $tid blocks SIGTRAP"; return 1; }
	tcmd rawstop || return 1
	wait_byte byte cc || return 1
	tcmd "call 2" || return 1
	expect_lines paraw "$p" "$(lines paraw hello 0 1)" || return 1
	stop_target || return 1
	set_enable 0 uprobes/paraw || return 1
	define "p:uprobes/paraw2 $TGT_NOFDR:pa_target_fn a=%di:s32 s=+0(%si):string" || return 1
	set_enable 1 uprobes/paraw2 || return 1
	fifo_target env LD_PRELOAD="$LIBPROBE" "$TGT_NOFDR" || return 1
	tcmd rawblock && [[ "$reply" == "ok "* ]] || { diag "rawblock: $reply"; return 1; }
	set_enable 0 uprobes/paraw2 || return 1
	wait_byte byte '!cc' || return 1
	set_enable 1 uprobes/paraw2 || return 1
	wait_byte byte cc || return 1
	tcmd rawstop || return 1
	stop_target || return 1
	set_enable 0 uprobes/paraw2 || return 1
	fifo_target env FDR_PROBE_SIGBLK_CHECK=1 LD_PRELOAD="$LIBPROBE" "$TGT_NOFDR" || return 1
	tcmd pid || return 1
	p=${reply#pid }
	tcmd rawblock && [[ "$reply" == "ok "* ]] || { diag "rawblock: $reply"; return 1; }
	tid=${reply#ok }
	set_enable 1 uprobes/paraw2 || return 1
	wait_log "pid $p: probe not armed: thread $tid blocks SIGTRAP" || return 1
	tcmd byte && [ "$reply" != "byte cc" ] ||
		{ diag "preloaded, FDR_PROBE_SIGBLK_CHECK=1: armed while thread $tid blocks SIGTRAP"; return 1; }
	tcmd rawstop || return 1
	wait_byte byte cc || return 1
	stop_target || return 1
	set_enable 0 uprobes/paraw2 || return 1
	remove uprobes/paraw && remove uprobes/paraw2
}

# a return probe: the kernel's '(FUNC <- RET)' line with $retval, one per return;
# pafn, an entry probe on the same function, stays enabled and records too
test_return_probe() {
	define "r:uprobes/paret $TGT:pa_target_fn rv=\$retval:s32" || return 1
	set_enable 1 uprobes/paret || return 1
	sleep 1.2
	tcmd "call 3" && [ "$reply" = "ok $((2 * 3 + 3 * 101))" ] || { diag "call: $reply"; return 1; }
	"$FDR" show >"$T/show" 2>"$ERR" || { diag "fdr show failed"; cat "$ERR"; return 1; }
	local got want
	got=$(grep -E -- "-$lpid +\[[0-9]+\] .* paret: " "$T/show" |
		sed -E 's/^.* (paret: )/\1/')
	want=$(printf 'paret: (0xF <- 0xR) rv=%d\n' 101 103 105)
	[ "$(printf '%s\n' "$got" | sed -E 's/\(0x[0-9a-f]+ <- 0x[0-9a-f]+\)/(0xF <- 0xR)/')" = "$want" ] ||
		{ diag "return lines:"; "$FDR" cat error_log | sed "s/^/#   log: /"; grep paret "$T/show" | head -5; printf '%s\n' "$got" | sed 's/^/#   got: /'; return 1; }
	# one function, one call site: the same two addresses on every line
	[ "$(printf '%s\n' "$got" | sed -E 's/\) rv=.*//' | sort -u | wc -l)" = 1 ] ||
		{ diag "addresses differ:"; printf '%s\n' "$got" | sed 's/^/#   /'; return 1; }
	expect_lines pafn "$lpid" "$(lines pafn hello 0 4; lines pafn hello 0 1; lines pafn hello 0 0
		lines pafn hello 0 2)" || return 1
	"$FDR" cat error_log >"$T/log" 2>&1
	! grep -q "pid $lpid: probe not armed: .*pa_target_fn" "$T/log" ||
		{ diag "error_log:"; sed 's/^/#   /' "$T/log"; return 1; }
	set_enable 0 uprobes/paret || return 1
	remove uprobes/paret || return 1
	# the entry probe keeps the int3
	sleep 1.2
	tcmd byte && [ "$reply" = "byte cc" ] || { diag "after the return probe went: $reply"; return 1; }
	tcmd "call 1" || return 1
	expect_lines pafn "$lpid" "$(lines pafn hello 0 4; lines pafn hello 0 1; lines pafn hello 0 0
		lines pafn hello 0 2; lines pafn hello 0 0)"
}

# an enabled probe cannot be removed (EBUSY) and stays armed; disabled, it is
# disarmed (the original byte back) and removed: nothing more is recorded
test_delete_slot() {
	local n
	run "$FDR" append uprobe_events "-:uprobes/pafn"
	[ "$rc" = 1 ] && grep -q "Device or resource busy" "$ERR" ||
		{ diag "removing an enabled probe: status $rc"; show_io; return 1; }
	sleep 0.3
	wait_byte byte cc || return 1
	set_enable 0 uprobes/pafn || return 1
	wait_byte byte "$orig" || return 1
	tcmd "call 1" || return 1
	expect_lines pafn "$lpid" "$(lines pafn hello 0 4; lines pafn hello 0 1; lines pafn hello 0 0
		lines pafn hello 0 2; lines pafn hello 0 0)" || return 1
	remove uprobes/pafn || return 1
	# the records left show as the kernel shows an unknown event: "type: ID"
	n=$("$FDR" show | grep -c -- "-$lpid ")
	tcmd "call 2" || return 1
	sleep 0.3
	tcmd byte && [ "$reply" = "byte $orig" ] || { diag "after removal: $reply"; return 1; }
	[ "$("$FDR" show | grep -c -- "-$lpid ")" = "$n" ] || { diag "recorded after removal"; return 1; }
	stop_target || return 1
}

# a program already running when the probe is defined gets it within 1 s
test_running_before() {
	fifo_target "$TGT" || return 1
	tcmd pid || return 1
	rpid=${reply#pid }
	tcmd byte || return 1
	[ "$reply" != "byte cc" ] || { diag "armed before the definition"; return 1; }
	define "p:uprobes/pafn $TGT:pa_target_fn a=%di:s32 s=+0(%si):string" || return 1
	set_enable 1 uprobes/pafn || return 1
	wait_byte byte cc || return 1
	tcmd "call 4" || return 1
	expect_lines pafn "$rpid" "$(lines pafn hello 0 3)" || return 1
	stop_target || return 1
}

# never linked with libfdr, no static event: LD_PRELOAD=libfdr-probe.so
test_preload() {
	define "p:uprobes/panofdr $TGT_NOFDR:pa_target_fn a=%di:s32 s=+0(%si):string" || return 1
	set_enable 1 uprobes/panofdr || return 1
	fifo_target env LD_PRELOAD="$LIBPROBE" "$TGT_NOFDR" || return 1
	tcmd "call 6" || return 1
	tcmd pid || return 1
	ppid_=${reply#pid }
	expect_lines panofdr "$ppid_" "$(lines panofdr hello 0 5)" || return 1
	tcmd "lib 2" || return 1
	expect_lines palib "$ppid_" "$(lines palib lib 0 1)" || return 1
	stop_target || return 1
}

# the same program without the preload: nothing armed, nothing recorded
test_no_preload() {
	fifo_target "$TGT_NOFDR" || return 1
	tcmd "call 2" || return 1
	tcmd pid || return 1
	local p=${reply#pid }
	tcmd byte && [ "$reply" != "byte cc" ] || { diag "armed without the agent"; return 1; }
	expect_lines panofdr "$p" "" || return 1
	stop_target || return 1
}

# linked with libfdr but no static event at all: libfdr's constructor starts the
# agent. A probe defined before the start is armed before main (the first
# calls record); disabling disarms, enabling again while it runs arms it within
# 1 s. Without that constructor nothing is armed (byte not cc, no line).
test_linked_no_event() {
	define "p:uprobes/panoev $TGT_NOEV:pa_target_fn a=%di:s32 s=+0(%si):string" || return 1
	set_enable 1 uprobes/panoev || return 1
	fifo_target "$TGT_NOEV" || return 1
	tcmd "call 3" && [ "$reply" = "ok $((2 * 3 + 3 * 101))" ] || { diag "call: $reply"; return 1; }
	tcmd pid || return 1
	local p=${reply#pid }
	tcmd byte && [ "$reply" = "byte cc" ] || { diag "armed: $reply"; return 1; }
	expect_lines panoev "$p" "$(lines panoev hello 0 2)" || return 1
	set_enable 0 uprobes/panoev || return 1
	wait_byte byte '!cc' || return 1
	tcmd "call 2" || return 1
	# enabled again while it runs: its agent arms it
	set_enable 1 uprobes/panoev || return 1
	wait_byte byte cc || return 1
	tcmd "call 1" || return 1
	expect_lines panoev "$p" "$(lines panoev hello 0 2; lines panoev hello 0 0)" || return 1
	set_enable 0 uprobes/panoev || return 1
	stop_target || return 1
	remove uprobes/panoev
}

# SDT semaphores: 'PATH:OFFSET(REF_CTR_OFFSET)'. While a probe that names it is
# armed in the process, the 2-byte counter at that file offset (the target's
# pa_sem, in its writable .probes section) counts it: 1 with one probe armed, 2
# with two, back to 0 as each is disabled. The program's probe sites run only
# while it is not 0 (semcall). One whose counter no writable mapping holds is
# refused in error_log and armed nowhere.
test_semaphore() {
	local off b1 b2
	fifo_target "$TGT" || return 1
	tcmd pid || return 1
	local p=${reply#pid }
	tcmd semoff || return 1
	off=${reply#off }
	tcmd sem && [ "${reply% * *}" = "sem 0" ] || { diag "sem: $reply"; return 1; }
	read -r _ _ b1 b2 <<<"$reply"
	tcmd "semcall 3" && [ "$reply" = "ok 0" ] || { diag "semcall: $reply"; return 1; }
	define "p:uprobes/pasem $TGT:pa_sem_fn($off) a=%di:s32" || return 1
	must "$FDR" cat uprobe_events || return 1
	grep -qE "^p:uprobes/pasem $TGT:0x[0-9a-f]+\($off\) a=%di:s32\$" "$OUT" ||
		{ diag "read back:"; cat "$OUT"; return 1; }
	set_enable 1 uprobes/pasem || return 1
	wait_sem "sem 1 cc $b2" || return 1
	tcmd "semcall 3" && [ "$reply" = "ok 15" ] || { diag "semcall: $reply"; return 1; }
	expect_lines pasem "$p" "$(printf 'pasem: (ADDR) a=%d\n' 0 1 2)" || return 1
	define "p:uprobes/pasem2 $TGT:pa_sem_fn2($off)" || return 1
	set_enable 1 uprobes/pasem2 || return 1
	wait_sem "sem 2 cc cc" || return 1
	set_enable 0 uprobes/pasem || return 1
	wait_sem "sem 1 $b1 cc" || return 1
	set_enable 0 uprobes/pasem2 || return 1
	wait_sem "sem 0 $b1 $b2" || return 1
	tcmd "semcall 2" && [ "$reply" = "ok 0" ] || { diag "semcall: $reply"; return 1; }
	expect_lines pasem "$p" "$(printf 'pasem: (ADDR) a=%d\n' 0 1 2)" || return 1
	# a counter outside every writable mapping of the file: refused, nothing armed
	define "p:uprobes/pasembad $TGT:pa_sem_fn2(0x10000000)" || return 1
	set_enable 1 uprobes/pasembad || return 1
	wait_log "pid $p: probe not armed: no writable mapping of its reference counter (file offset 0x10000000 of $TGT)" || return 1
	tcmd sem && [ "$reply" = "sem 0 $b1 $b2" ] || { diag "sem: $reply"; return 1; }
	set_enable 0 uprobes/pasembad || return 1
	stop_target || return 1
	remove uprobes/pasem && remove uprobes/pasem2 && remove uprobes/pasembad
}

# wait_sem WANT: poll the target's 'sem' until it answers WANT, for up to 1.5 s
wait_sem() {
	local i
	for ((i = 0; i < 15; i++)); do
		tcmd sem || return 1
		[ "$reply" = "$1" ] && return 0
		sleep 0.1
	done
	diag "sem: '$reply' after 1.5 s, expected '$1'"
	return 1
}

# wait_plain CMD: poll CMD until the byte is neither cc nor e9 (1.5 s); in $reply
wait_plain() {
	local i
	for ((i = 0; i < 15; i++)); do
		tcmd "$1" || return 1
		[ "$reply" != "byte cc" ] && [ "$reply" != "byte e9" ] && return 0
		sleep 0.1
	done
	diag "$1: '$reply' after 1.5 s, expected the original byte"
	return 1
}

# wait_profile EVENT MARK: within 3 s, uprobe_profile's line of EVENT ends in
# MARK (" [OPTIMIZED 1]"), or has no "[OPTIMIZED" at all (MARK "none")
wait_profile() {
	local i line=

	for i in $(seq 60); do
		"$FDR" cat uprobe_profile >"$OUT" 2>&1 || { diag "uprobe_profile: $(cat "$OUT")"; return 1; }
		line=$(grep " $1 " "$OUT")
		if [ "$2" = none ]; then
			case "$line" in *"[OPTIMIZED"*) ;; *) return 0 ;; esac
		else
			case "$line" in *"$2") return 0 ;; esac
		fi
		sleep 0.05
	done
	diag "uprobe_profile's line of $1 is '$line', expected ${2/none/no [OPTIMIZED]}"
	return 1
}

# no_jumps_here: 0 (after saying why) in the TSan build, where a case that needs
# jump probes is skipped. TSan defers asynchronous signals until a thread enters
# its runtime: jump.c's request to the threads is never answered in time, and
# every probe stays int3 (probes.md, "Jump probes"; stress/probe-live-jump is
# no-tsan for the same reason)
no_jumps_here() {
	[ -n "${FDR_TEST_TSAN:-}" ] || return 1
	diag "skipped in the TSan build: jump optimisation cannot run under TSan"
}

# jump-optimised by default ("Jump probes"): in the linked shared library the
# first byte is a jmp (e9), the records are the same as the int3 form's, disabling
# puts the original byte back (the one with FDR_PROBE_OPTIMIZE=0), enabling the jmp
# again; uprobe_profile says " [OPTIMIZED 1]" while it is a jmp, nothing otherwise
test_optimized() {
	no_jumps_here && return 0
	fifo_target "$TGT" || return 1
	tcmd pid || return 1
	local opid=${reply#pid }
	wait_byte libbyte cc || return 1
	wait_profile palib none || return 1
	set_enable 0 uprobes/palib || return 1
	wait_plain libbyte || return 1
	local lorig=${reply#byte }
	stop_target || return 1
	fifo_target env -u FDR_PROBE_OPTIMIZE "$TGT" || return 1
	tcmd pid || return 1
	opid=${reply#pid }
	set_enable 1 uprobes/palib || return 1
	wait_byte libbyte e9 || { sed "s|^|#   target stderr: |" "$T/terr"; return 1; }
	wait_profile palib " [OPTIMIZED 1]" || return 1
	tcmd "lib 3" || return 1
	expect_lines palib "$opid" "$(lines palib lib 0 2)" || return 1
	set_enable 0 uprobes/palib || return 1
	wait_plain libbyte || return 1
	[ "$reply" = "byte $lorig" ] || { diag "after the disable: $reply, expected byte $lorig"; return 1; }
	tcmd "lib 2" || return 1
	expect_lines palib "$opid" "$(lines palib lib 0 2)" || return 1
	set_enable 1 uprobes/palib || return 1
	wait_byte libbyte e9 || { sed "s|^|#   target stderr: |" "$T/terr"; return 1; }
	tcmd "lib 2" || return 1
	expect_lines palib "$opid" "$(lines palib lib 0 2; lines palib lib 0 1)" || return 1
	# options/probe_optimize (1 by default) turns existing probes back to int3 and again to jmps
	must "$FDR" cat options/probe_optimize && [ "$(cat "$OUT")" = 1 ] ||
		{ diag "options/probe_optimize: $(cat "$OUT")"; return 1; }
	must "$FDR" write options/probe_optimize 0 || return 1
	wait_byte libbyte cc || return 1
	wait_profile palib none || return 1
	tcmd "lib 2" || return 1
	expect_lines palib "$opid" "$(lines palib lib 0 2; lines palib lib 0 1; lines palib lib 0 1)" ||
		return 1
	must "$FDR" write options/probe_optimize 1 || return 1
	wait_byte libbyte e9 || return 1
	wait_profile palib " [OPTIMIZED 1]" || return 1
	tcmd "lib 1" || return 1
	expect_lines palib "$opid" \
		"$(lines palib lib 0 2; lines palib lib 0 1; lines palib lib 0 1; lines palib lib 0 0)" ||
		return 1
	# a return probe joins the jmp: both optimised, both recorded, $retval right
	define "r:uprobes/palibret $LIB:pa_lib_fn rv=\$retval:s32" || return 1
	set_enable 1 uprobes/palibret || return 1
	wait_profile palibret " [OPTIMIZED 1]" || return 1
	wait_profile palib " [OPTIMIZED 1]" || return 1
	tcmd libbyte && [ "$reply" = "byte e9" ] || { diag "with the return probe: $reply"; return 1; }
	tcmd "lib 3" && [ "$reply" = "ok $((3 * 108 + 3))" ] || { diag "lib 3: $reply"; return 1; }
	expect_lines palib "$opid" "$(lines palib lib 0 2; lines palib lib 0 1; lines palib lib 0 1
		lines palib lib 0 0; lines palib lib 0 2)" || return 1
	"$FDR" show >"$T/show" 2>"$ERR" || { diag "fdr show failed"; cat "$ERR"; return 1; }
	local got
	got=$(grep -E -- "-$opid +\[[0-9]+\] .* palibret: " "$T/show" |
		sed -E 's/^.* (palibret: )\(0x[0-9a-f]+ <- 0x[0-9a-f]+\)/\1(F <- R)/')
	[ "$got" = "$(printf 'palibret: (F <- R) rv=%d\n' 108 109 110)" ] ||
		{ diag "return lines:"; printf '%s\n' "$got" | sed 's/^/#   got: /'; return 1; }
	set_enable 0 uprobes/palibret || return 1
	remove uprobes/palibret || return 1
	wait_profile palib " [OPTIMIZED 1]" || return 1
	tcmd libbyte && [ "$reply" = "byte e9" ] || { diag "after the return probe went: $reply"; return 1; }
	stop_target
}

# a probe whose arguments are registers only is recorded inside the jump hit
# (record.h: the fetch as a table, no call to the handler), alone on its
# address and beside another probe (pr_fire_all()): the exact records, fields
# packed as the kernel packs them
test_optimized_record() {
	local i want=
	no_jumps_here && return 0
	define "p:uprobes/pareg $LIB:pa_lib_fn a=%di:s32 b=%di:u8 x=%di:x16" || return 1
	set_enable 0 uprobes/palib || return 1
	set_enable 1 uprobes/pareg || return 1
	fifo_target env -u FDR_PROBE_OPTIMIZE "$TGT" || return 1
	tcmd pid || return 1
	local opid=${reply#pid }
	wait_byte libbyte e9 || { sed "s|^|#   target stderr: |" "$T/terr"; return 1; }
	wait_profile pareg " [OPTIMIZED 1]" || return 1
	tcmd "lib 3" || return 1
	for ((i = 0; i < 3; i++)); do
		want+="pareg: (ADDR) a=$i b=$i x=0x$i"$'\n'
	done
	expect_lines pareg "$opid" "${want%$'\n'}" || return 1
	# beside the interpreted probe on the same address: both recorded, the jmp kept
	set_enable 1 uprobes/palib || return 1
	wait_profile palib " [OPTIMIZED 1]" || return 1
	tcmd libbyte && [ "$reply" = "byte e9" ] || { diag "with both probes: $reply"; return 1; }
	tcmd "lib 2" || return 1
	for ((i = 0; i < 2; i++)); do
		want+="pareg: (ADDR) a=$i b=$i x=0x$i"$'\n'
	done
	expect_lines pareg "$opid" "${want%$'\n'}" || return 1
	expect_lines palib "$opid" "$(lines palib lib 0 1)" || return 1
	set_enable 0 uprobes/pareg || return 1
	remove uprobes/pareg || return 1
	stop_target
}

# four threads hit one probe at once, on both CPUs, in the jump form where the
# build can (the int3 one under TSan): every hit counted once, nearly all in the
# row of the CPU they ran on without a locked add (rows_ok(); fdr-abi.h,
# "Per-CPU hit counts")
test_threads_count() {
	local n=20000 form=e9 rows
	[ -n "${FDR_TEST_TSAN:-}" ] && form=cc
	define "p:uprobes/pathr $TGT:pa_target_fn a=%di:s32" || return 1
	set_enable 1 uprobes/pathr || return 1
	if [ "$form" = e9 ]; then
		fifo_target env -u FDR_PROBE_OPTIMIZE "$TGT" || return 1
	else
		fifo_target "$TGT" || return 1
	fi
	wait_byte byte "$form" || return 1
	tcmd "threads $n" && [ "$reply" = "ok $((4 * (n * (n - 1) + n * 104)))" ] ||
		{ diag "threads: $reply"; return 1; }
	must "$COUNT" uprobes/pathr && [ "$(cat "$OUT")" = "$((4 * n)) 0" ] ||
		{ diag "count: $(cat "$OUT"), expected $((4 * n)) 0"; return 1; }
	rows=$((4 * n))
	case "${GLIBC_TUNABLES:-}" in *glibc.pthread.rseq=0*) rows=0 ;; esac
	must "$COUNT" -r uprobes/pathr && rows_ok "$(cat "$OUT")" "$rows" ||
		{ diag "hits in the per-CPU rows: $(cat "$OUT"), expected $rows"; return 1; }
	must "$FDR" cat uprobe_profile || return 1
	grep -qE "^  $TGT pathr +$((4 * n))( \[OPTIMIZED 1\])?\$" "$OUT" ||
		{ diag "uprobe_profile:"; cat "$OUT"; return 1; }
	set_enable 0 uprobes/pathr || return 1
	stop_target || return 1
	remove uprobes/pathr
}

# a normal exit while the agent's sync is in progress (its lock held for
# milliseconds, an optimisation waiting for the threads' answers) still takes the
# process's jump probes out of uprobe_profile's "[OPTIMIZED N]" (the destructor
# pa_opt_exit() waits for the sync: docs/design/uprobes.md). The target holds
# the optimisation of a second probe 50 ms (fixhold) and exits inside it
# (exitonfix); its first probe, a jmp counted 1, must be counted 0 afterwards.
# With the old destructor, which gave up at once when the lock was held, its 1
# stayed.
test_exit_in_sync() {
	local e
	no_jumps_here && return 0
	for e in palib pafn; do
		"$FDR" write "events/uprobes/$e/enable" 0 2>/dev/null
	done
	define "p:uprobes/paexa $LIB:pa_lib_fn a=%di:s32" || return 1
	define "p:uprobes/paexb $DL:pa_dl_fn a=%di:s32" || return 1
	set_enable 1 uprobes/paexa || return 1
	fifo_target env -u FDR_PROBE_OPTIMIZE "$TGT" || return 1
	wait_byte libbyte e9 || { sed "s|^|#   target stderr: |" "$T/terr"; return 1; }
	wait_profile paexa " [OPTIMIZED 1]" || return 1
	tcmd "dlopen $DL" && [ "$reply" = ok ] || { diag "dlopen: $reply"; return 1; }
	tcmd fixhold && [[ "$reply" == "ok "* ]] || { diag "fixhold: $reply"; return 1; }
	tcmd exitonfix && [ "$reply" = waiting ] || { diag "exitonfix: $reply"; return 1; }
	set_enable 1 uprobes/paexb || return 1
	stop_target || return 1
	must "$FDR" cat uprobe_profile || return 1
	for e in paexa paexb; do
		! grep " $e " "$OUT" | grep -q OPTIMIZED ||
			{ diag "after the exit:"; sed 's/^/#   /' "$OUT"; return 1; }
	done
	set_enable 0 uprobes/paexa uprobes/paexb || return 1
	remove uprobes/paexa && remove uprobes/paexb
}

run_cases "test_setup test_linked_start test_disable_enable test_fork_child test_shared_lib
	test_dlopen_lib test_dlclose test_hand_mapped test_refused test_return_probe test_delete_slot test_running_before test_preload test_no_preload test_linked_no_event test_semaphore test_optimized
	test_optimized_record test_sigblk_raw test_threads_count test_exit_in_sync" test_setup
tap_summary
