#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# parity.sh FDR FDR_DEMO - the same writes to the kernel's tracefs (in a private
# instance, instances/fdr-parity-PID, removed at the end) and to fdr's control
# tree; each must be accepted or refused alike, and leave the same state.
#
# Needs root and tracefs (mounted at /sys/kernel/tracing if it is not); each case
# is skipped, with the reason, where the kernel lacks what it compares.
# Never touches the kernel's top-level buffer.
#
# Cases:
#   trigger_remove   every trigger kind the kernel has: added plain, with a
#                    count and with a filter, then removed by writing '!' and
#                    the line the trigger file lists for it (the count is not
#                    read on removal); removing an absent trigger succeeds
#   trigger_empty    a write of a blank line is refused ('echo > trigger')
#   set_event_forms  ':EVENT' (any system) and 'SYS:' (the whole system) select
#                    the same events as 'SYS:EVENT' and 'SYS:*'
#   cpumask          tracing_cpumask: the same values accepted or refused, the
#                    same text read back
#   buffer_size_kept buffer_size_kb reads back what was written, through
#                    changes of buffer_subbuf_size_kb
#   pid_files        set_event_pid and set_event_notrace_pid: the same writes
#                    ('>' and '>>') accepted or refused alike, the same list
#                    read back
#   event_fork       options/event-fork (and trace_options' event-fork): the
#                    same values accepted or refused, the same value read back
#   uprobe_events    the same probe definitions (group fdrparity only, on
#                    /bin/true, never enabled) appended with '>>' to the
#                    kernel's uprobe_events and to fdr's: accepted or refused
#                    alike, the same error_log entry for a refused one, the same
#                    read-back (uprobe_events, dynamic_events), the same
#                    uprobe_profile lines, the same format files; then removed with '-:'
#                    (never '>' on the kernel's file; an exit removes what is
#                    left of the group)
#
# Prints "ok N - name" / "not ok N - name", then "N passed, N failed".
set -u
# shellcheck source=../harness/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib.sh"

FDR=${1:?usage: parity.sh FDR FDR_DEMO}
DEMO=${2:?usage: parity.sh FDR FDR_DEMO}

suite_init parity
KI=
remove_kernel_instance() {
	local f l i
	if [ -n "$KI" ] && [ -d "$KI" ]; then
		# events off, and triggers first: an instance with triggers cannot be
		# removed (only sched_switch's trigger file is ever written)
		printf '\n' >"$KI/set_event" 2>/dev/null
		f=$KI/events/sched/sched_switch/trigger
		grep -v '^#' "$f" 2>/dev/null | while read -r l; do
			echo "!${l%% if *}" >"$f" 2>/dev/null
		done
		for i in $(seq 50); do
			rmdir "$KI" 2>/dev/null && break
			sleep 0.1
		done
		[ -d "$KI" ] && echo "# could not remove the kernel instance $KI" >&2
	fi
}
at_exit remove_kernel_instance
# the kernel's probes of our group, whatever happened (never '>' on its file)
remove_kernel_probes() {
	local l
	[ -n "$TRACEFS" ] && [ -w "$TRACEFS/uprobe_events" ] || return 0
	grep '^[pr]:fdrparity/' "$TRACEFS/uprobe_events" 2>/dev/null | while read -r l; do
		l=${l#?:}
		echo "-:${l%% *}" >>"$TRACEFS/uprobe_events" 2>/dev/null
	done
}
at_exit remove_kernel_probes
export FDR_SESSION=parity

TRACEFS=
find_tracefs() {
	local d

	[ "$(id -u)" = 0 ] || return 1
	d=$(awk '$3 == "tracefs" { print $2; exit }' /proc/mounts)
	if [ -z "$d" ]; then
		d=/sys/kernel/tracing
		[ -d "$d" ] || return 1
		mount -t tracefs nodev "$d" 2>/dev/null || return 1
	fi
	[ -d "$d/instances" ] || return 1
	TRACEFS=$d
}

if ! find_tracefs; then
	echo "# skip: no kernel tracefs to compare with (needs root)"
	echo "0 passed, 0 failed"
	exit 0
fi
KI=$TRACEFS/instances/fdr-parity-$$
if ! mkdir "$KI" 2>/dev/null; then
	echo "# skip: cannot make a kernel instance ($KI)"
	KI=
	echo "0 passed, 0 failed"
	exit 0
fi

# The events compared: the kernel's sched:sched_switch (field prev_pid, target
# sched:sched_wakeup) and fdr's demo:request (field status, target demo:cache).
K_EV=$KI/events/sched/sched_switch/trigger
K_TARGET=sched:sched_wakeup
K_FIELD=prev_pid
F_EV=events/demo/request/trigger
F_TARGET=demo:cache
F_FIELD=status

# kw FILE TEXT: echo TEXT > FILE, a kernel file (TEXT and a newline); rc
kw() {
	printf '%s\n' "$2" >"$1" 2>/dev/null
}

# fw PATH TEXT: the same write to fdr's control tree (fdr write adds the newline); rc
fw() {
	"$FDR" write "$1" "$2" >"$T/fw.out" 2>&1
}

# triggers SIDE: the trigger lines listed (comments left out), one per line
k_triggers() { grep -v '^#' "$K_EV"; }
f_triggers() { "$FDR" cat "$F_EV" | grep -v '^#'; }

# same_write K_TEXT F_TEXT WHAT: both accept or both refuse; 0 if alike
same_write() {
	local krc frc

	kw "$K_EV" "$1"
	krc=$?
	fw "$F_EV" "$2"
	frc=$?
	[ "$krc" = 0 ] && krc=ok || krc=refused
	[ "$frc" = 0 ] && frc=ok || frc=refused
	[ "$krc" = "$frc" ] && return 0
	diag "$3: the kernel $krc '$1', fdr $frc '$2': $(cat "$T/fw.out")"
	return 1
}

setup() {
	"$FDR" start >/dev/null 2>&1 || { diag "fdr start failed"; return 1; }
	"$DEMO" -n 1 -r 0 -q >/dev/null 2>&1 || { diag "fdr-demo did not run"; return 1; }
	"$FDR" cat "$F_EV" >/dev/null 2>&1 || { diag "no $F_EV in fdr"; return 1; }
}

# kinds the kernel offers (its trigger file lists them when empty)
kernel_has() {
	grep '^# ' "$K_EV" | tr ' ' '\n' | grep -qx "$1"
}

test_trigger_remove() {
	local kind k f kl fl form bad=0 tried=0

	for kind in traceon traceoff snapshot stacktrace enable_event disable_event; do
		if ! kernel_has "$kind"; then
			echo "# $kind: the kernel here has no such trigger; not compared"
			continue
		fi
		k=$kind
		f=$kind
		case $kind in
		enable_event | disable_event)
			k=$kind:$K_TARGET
			f=$kind:$F_TARGET
			;;
		esac
		for form in plain count filter; do
			local ka=$k fa=$f
			case $form in
			count) ka="$k:3" fa="$f:3" ;;
			filter) ka="$k if $K_FIELD == 12345" fa="$f if $F_FIELD == 12345" ;;
			esac
			tried=$((tried + 1))
			same_write "$ka" "$fa" "add $kind ($form)" || { bad=1; continue; }
			kl=$(k_triggers)
			fl=$(f_triggers)
			if [ "$(wc -l <<<"$kl")" != 1 ] || [ "$(wc -l <<<"$fl")" != 1 ] ||
			   [ -z "$fl" ]; then
				diag "$kind ($form): expected one listed trigger, kernel '$kl', fdr '$fl'"
				bad=1
				continue
			fi
			# the listed line, '!' first, removes it: on both sides
			same_write "!$kl" "!$fl" "remove $kind ($form) by its listed line" || bad=1
			if [ -n "$(k_triggers)" ] || [ -n "$(f_triggers)" ]; then
				diag "$kind ($form): '!$kl' / '!$fl' left: kernel '$(k_triggers)', fdr '$(f_triggers)'"
				bad=1
			fi
		done
		# a count that is no number, on removal of what is not there
		same_write "!$k:whatever" "!$f:whatever" "remove an absent $kind" || bad=1
	done
	[ "$tried" -gt 0 ] || { diag "the kernel offers no trigger kind to compare"; return 1; }
	return $bad
}

test_trigger_empty() {
	local bad=0

	same_write "" "" "a blank line" || bad=1
	same_write "   " "   " "blanks" || bad=1
	[ -z "$(k_triggers)" ] && [ -z "$(f_triggers)" ] ||
		{ diag "left triggers: '$(k_triggers)' '$(f_triggers)'"; bad=1; }
	return $bad
}

# set_event_same K_SPEC F_SPEC K_WANT F_WANT: echo SPEC > set_event on both
# sides; each must accept and then list exactly WANT (a sorted list)
set_event_same() {
	local k f

	printf '\n' >"$KI/set_event" 2>/dev/null
	"$FDR" write set_event '' >/dev/null 2>&1
	kw "$KI/set_event" "$1" || { diag "the kernel refused '$1'"; return 1; }
	fw set_event "$2" || { diag "fdr refused '$2': $(cat "$T/fw.out")"; return 1; }
	k=$(sort "$KI/set_event" | tr '\n' ' ')
	f=$("$FDR" cat set_event | sort | tr '\n' ' ')
	[ "$k" = "$3" ] || { diag "kernel '$1' enabled '$k', expected '$3'"; return 1; }
	[ "$f" = "$4" ] || { diag "fdr '$2' enabled '$f', expected '$4'"; return 1; }
}

test_set_event_forms() {
	local ksys fsys

	set_event_same ":sched_switch" ":request" "sched:sched_switch " "demo:request " || return 1
	ksys=$(grep '^sched:' "$TRACEFS/available_events" | sort | tr '\n' ' ')
	fsys=$("$FDR" cat available_events | grep '^demo:' | sort | tr '\n' ' ')
	set_event_same "sched:" "demo:" "$ksys" "$fsys" || return 1
	printf '\n' >"$KI/set_event"
}

test_cpumask() {
	local v k f bad=0 all

	all=$(cat "$KI/tracing_cpumask")
	[ "$("$FDR" cat tracing_cpumask)" = "$all" ] ||
		{ diag "all CPUs: the kernel reads '$all', fdr '$("$FDR" cat tracing_cpumask)'"; bad=1; }
	for v in 1 0 "$all" ff 100000000 xyz 1,0 0x1 "" " 1" 00000001 "1 2" , ",1" 123456789; do
		kw "$KI/tracing_cpumask" "$v"
		k=$?
		fw tracing_cpumask "$v"
		f=$?
		[ "$k" = 0 ] && k=ok || k=refused
		[ "$f" = 0 ] && f=ok || f=refused
		if [ "$k" != "$f" ]; then
			diag "tracing_cpumask '$v': the kernel $k it, fdr $f it: $(cat "$T/fw.out")"
			bad=1
		elif [ "$(cat "$KI/tracing_cpumask")" != "$("$FDR" cat tracing_cpumask)" ]; then
			diag "tracing_cpumask after '$v': the kernel reads '$(cat "$KI/tracing_cpumask")', fdr '$("$FDR" cat tracing_cpumask)'"
			bad=1
		fi
	done
	kw "$KI/tracing_cpumask" "$all"
	fw tracing_cpumask "$all"
	return $bad
}

test_buffer_size_kept() {
	local s k f bad=0

	kw "$KI/buffer_size_kb" 1410 || { diag "the kernel refused buffer_size_kb 1410"; return 1; }
	fw buffer_size_kb 1410 || { diag "fdr refused buffer_size_kb 1410"; return 1; }
	for s in 8 16 4 64 4; do
		kw "$KI/buffer_subbuf_size_kb" "$s" || { echo "# the kernel here has no $s KiB sub-buffers"; continue; }
		fw buffer_subbuf_size_kb "$s" || { diag "fdr refused buffer_subbuf_size_kb $s"; bad=1; continue; }
		k=$(cat "$KI/buffer_size_kb")
		f=$("$FDR" cat buffer_size_kb)
		[ "$k" = "$f" ] || { diag "sub-buffers of $s KiB: buffer_size_kb reads $k in the kernel, $f in fdr"; bad=1; }
	done
	# a size written with 8 KiB sub-buffers (rounded up as it is written),
	# then 4 KiB ones: the rounded size is what stays
	for s in "subbuf 8" "size 100" "subbuf 4" "size 5" "subbuf 16" "subbuf 4"; do
		set -- $s
		if [ "$1" = subbuf ]; then
			kw "$KI/buffer_subbuf_size_kb" "$2" || continue
			fw buffer_subbuf_size_kb "$2"
		else
			kw "$KI/buffer_size_kb" "$2"
			fw buffer_size_kb "$2"
		fi
		k=$(cat "$KI/buffer_size_kb")
		f=$("$FDR" cat buffer_size_kb)
		[ "$k" = "$f" ] || { diag "after $s: buffer_size_kb reads $k in the kernel, $f in fdr"; bad=1; }
	done
	kw "$KI/buffer_size_kb" 7
	return $bad
}

# pid_write FILE MODE TEXT: MODE '>' or '>>' on both sides; 0 if alike (rc and list)
pid_write() {
	local k f kl fl

	if [ "$2" = '>' ]; then
		kw "$KI/$1" "$3"
		k=$?
		fw "$1" "$3"
		f=$?
	else
		printf '%s\n' "$3" >>"$KI/$1" 2>/dev/null
		k=$?
		"$FDR" append "$1" "$3" >"$T/fw.out" 2>&1
		f=$?
	fi
	[ "$k" = 0 ] && k=ok || k=refused
	[ "$f" = 0 ] && f=ok || f=refused
	kl=$(tr '\n' ' ' <"$KI/$1")
	fl=$("$FDR" cat "$1" | tr '\n' ' ')
	if [ "$k" != "$f" ]; then
		diag "$1 $2 '$3': the kernel $k it, fdr $f it: $(cat "$T/fw.out")"
		return 1
	fi
	if [ "$kl" != "$fl" ]; then
		diag "$1 after $2 '$3': the kernel lists '$kl', fdr '$fl'"
		return 1
	fi
}

test_pid_files() {
	local file bad=0 m v

	[ -e "$KI/set_event_notrace_pid" ] || { echo "# the kernel here has no set_event_notrace_pid"; }
	for file in set_event_pid set_event_notrace_pid; do
		[ -e "$KI/$file" ] || continue
		# (4294967296 differs: the kernel keeps its low 32 bits, fdr refuses it)
		while IFS='|' read -r m v; do
			pid_write "$file" "$m" "$v" || bad=1
		done <<-EOF
			>|5 3 7
			>>|1 2 3
			>>|9 abc
			>>|-1
			>>|4,5
			>>|2147483648
			>>|+
			>>|
			>|9 abc
			>|3 3
			>|
			>|0x10 00012 +4	 0
			>| 4 
			>|4194304
			>|
		EOF
	done
	return $bad
}

test_event_fork() {
	local v k f bad=0

	[ -e "$KI/options/event-fork" ] || { echo "# the kernel here has no options/event-fork"; return 0; }
	[ "$(cat "$KI/options/event-fork")" = "$("$FDR" cat options/event-fork)" ] ||
		{ diag "event-fork reads '$(cat "$KI/options/event-fork")' in the kernel, '$("$FDR" cat options/event-fork)' in fdr"; bad=1; }
	for v in 1 0 2 " 1" "1 " abc 01 0x1 +1 -0 "" 0; do
		kw "$KI/options/event-fork" "$v"
		k=$?
		fw options/event-fork "$v"
		f=$?
		[ "$k" = 0 ] && k=ok || k=refused
		[ "$f" = 0 ] && f=ok || f=refused
		if [ "$k" != "$f" ]; then
			diag "options/event-fork '$v': the kernel $k it, fdr $f it: $(cat "$T/fw.out")"
			bad=1
		elif [ "$(cat "$KI/options/event-fork")" != "$("$FDR" cat options/event-fork)" ]; then
			diag "options/event-fork after '$v': the kernel reads '$(cat "$KI/options/event-fork")', fdr '$("$FDR" cat options/event-fork)'"
			bad=1
		fi
	done
	for v in event-fork noevent-fork; do
		kw "$KI/trace_options" "$v"
		fw trace_options "$v"
		[ "$(grep -x 'no\{0,1\}event-fork' "$KI/trace_options")" = "$("$FDR" cat trace_options | grep -x 'no\{0,1\}event-fork')" ] ||
			{ diag "trace_options '$v': the kernel lists '$(grep event-fork "$KI/trace_options")', fdr '$("$FDR" cat trace_options | grep event-fork)'"; bad=1; }
	done
	return $bad
}

# the last error_log entry of a file's text, without its timestamp
last_entry() {
	awk '/^\[/ { e = ""; sub(/^\[[^]]*\] /, "") } { e = e $0 "\n" } END { printf "%s", e }'
}

test_uprobe_events() {
	local line k f ev bad=0 kl fl
	local -a lines=(
		'p:fdrparity/a /bin/true:0x1149 x=%di:s64 s=+0(%si):string ar=+0(%dx):u8[4] c=+0(%si):char'
		'r:fdrparity/b /bin/true:0x1149 rv=$retval:s64'
		'p:fdrparity/a /bin/true:0x1150 x=%si:s64 s=+8(%si):string ar=+0(%dx):u8[4] c=+0(%si):char'
		'p:fdrparity/ /bin/true:0x1149'
		'p:fdrparity/d /bin/true:4425%return a=$retval b=$stack c=$comm'
		'p:fdrparity/e /bin/true:0x1149 %di +0(%si) $stack3 \1234 @+0x2000 f=+0(%di):x8[3] g=+0(%di):b3@2/8'
		'p:fdrparity/a /bin/true:0x1160 x=%di:s32 s=+0(%si):string ar=+0(%dx):u8[4] c=+0(%si):char'
		'p:fdrparity/a /bin/true:0x1149 x=%di:s64 s=+0(%si):string ar=+0(%dx):u8[4] c=+0(%si):char'
		'p:fdrparity/z /bin/nosuch-fdr-parity:0x1149'
		'p:fdrparity/z /bin/true:0x1149 x=%zz'
		'p:fdrparity/z /bin/true:0x1149 $retval'
		'-:fdrparity/nosuch'
	)

	[ -w "$TRACEFS/uprobe_events" ] || { echo "# the kernel here has no uprobe_events"; return 0; }
	for line in "${lines[@]}"; do
		kl=$(last_entry <"$TRACEFS/error_log")
		printf '%s\n' "$line" >>"$TRACEFS/uprobe_events" 2>/dev/null
		k=$?
		"$FDR" append uprobe_events "$line" >"$T/fw.out" 2>&1
		f=$?
		[ "$k" = 0 ] && k=ok || k=refused
		[ "$f" = 0 ] && f=ok || f=refused
		if [ "$k" != "$f" ]; then
			diag "uprobe_events '$line': the kernel $k it, fdr $f it: $(cat "$T/fw.out")"
			bad=1
			continue
		fi
		[ "$k" = ok ] && continue
		# a refused line: the same entry, if the kernel wrote one
		f=$("$FDR" cat error_log | last_entry)
		k=$(last_entry <"$TRACEFS/error_log")
		if [ "$k" != "$kl" ] && [ "$k" != "$f" ]; then
			diag "error_log after '$line': the kernel"
			diag "$k"
			diag "fdr"
			diag "$f"
			bad=1
		fi
	done
	kl=$(grep '^[pr]:fdrparity/' "$TRACEFS/uprobe_events")
	fl=$("$FDR" cat uprobe_events)
	[ "$kl" = "$fl" ] || { diag "uprobe_events reads, in the kernel:"; diag "$kl"; diag "in fdr:"; diag "$fl"; bad=1; }
	fl=$("$FDR" cat dynamic_events)
	[ "$kl" = "$fl" ] || { diag "dynamic_events reads in fdr:"; diag "$fl"; bad=1; }
	# uprobe_profile: the same lines (no hits: nothing is enabled)
	kl=$(grep -E '^  /bin/true (a|b|p_true_0x1149|d|e) ' "$TRACEFS/uprobe_profile")
	fl=$("$FDR" cat uprobe_profile)
	[ "$kl" = "$fl" ] || { diag "uprobe_profile reads, in the kernel:"; diag "$kl"; diag "in fdr:"; diag "$fl"; bad=1; }
	for ev in $(ls "$TRACEFS/events/fdrparity" 2>/dev/null); do
		[ -d "$TRACEFS/events/fdrparity/$ev" ] || continue
		k=$(grep -v '^ID:' "$TRACEFS/events/fdrparity/$ev/format")
		f=$("$FDR" cat "events/fdrparity/$ev/format" 2>&1 | grep -v '^ID:')
		[ "$k" = "$f" ] || { diag "events/fdrparity/$ev/format, the kernel:"; diag "$k"; diag "fdr:"; diag "$f"; bad=1; }
	done
	[ "$("$FDR" ls events/fdrparity | grep / | sort)" = "$(cd "$TRACEFS/events/fdrparity" && ls -d -- */ | sort)" ] ||
		{ diag "events/fdrparity lists different events"; bad=1; }
	for ev in a b p_true_0x1149 d e; do
		printf '%s\n' "-:fdrparity/$ev" >>"$TRACEFS/uprobe_events" 2>/dev/null
		k=$?
		"$FDR" append uprobe_events "-:fdrparity/$ev" >"$T/fw.out" 2>&1
		f=$?
		[ "$k" = "$f" ] || { diag "-:fdrparity/$ev: the kernel rc $k, fdr rc $f: $(cat "$T/fw.out")"; bad=1; }
	done
	[ -z "$(grep '^[pr]:fdrparity/' "$TRACEFS/uprobe_events")" ] || { diag "the kernel kept probes of fdrparity"; bad=1; }
	[ -z "$("$FDR" cat uprobe_events)" ] || { diag "fdr kept probes"; bad=1; }
	return $bad
}

if setup; then
	run_cases "test_trigger_remove test_trigger_empty test_set_event_forms test_cpumask
		test_buffer_size_kept test_pid_files test_event_fork test_uprobe_events"
else
	ok 1 setup
fi
tap_summary
