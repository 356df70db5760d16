#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# probe-e2e.sh FDR LIBPROBE - fdr probe end to end: probe-perf/prog.c built
# -O0 -g, -O2 -g, -O2 -g non-PIE and -O0 -gdwarf-4, a probe on record_point() defined by variable names
# (fdr probe --add, members through pointers, a string, an array element, a
# pointer chain), enabled, the program run with the probe agent (LD_PRELOAD
# LIBPROBE); the values recorded must be those the program printed for the
# same variables, call by call. Then the probe is removed with fdr probe -d.
# Last, the same with the probe added while the program runs (it waits on
# stdin for it).
# Needs neither root nor perf; SKIP (77) when fdr was built without libdw.
set -u
# shellcheck source=../harness/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib.sh"

FDR=${1:?usage: probe-e2e.sh FDR LIBPROBE}
LIBPROBE=${2:?usage: probe-e2e.sh FDR LIBPROBE}
abs_path FDR LIBPROBE
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/probe-perf" && pwd)

suite_init probe-e2e
export FDR_SESSION=probe-e2e
"$FDR" probe -n -x /bin/true true >/dev/null 2>"$T/probe-check"
grep -q "built without" "$T/probe-check" && skip "this fdr was built without libdw"
CC=${CC:-cc}
command -v "$CC" >/dev/null || skip "no C compiler ($CC)"
B=$T/bin
mkdir -p "$B"
for o in 0 2; do
	"$CC" -O$o -g -shared -fPIC -o "$B/libpp$o.so" "$SRC/lib.c" &&
		"$CC" -O$o -g -I"$SRC" -o "$B/prog$o" "$SRC/prog.c" -L"$B" -lpp$o -Wl,-rpath,"$B" ||
		{ echo "cannot build the test programs"; exit 1; }
done
# DWARF 4: bitfields by DW_AT_bit_offset (from the storage unit's top bit)
"$CC" -O0 -gdwarf-4 -I"$SRC" -o "$B/progd4" "$SRC/prog.c" -L"$B" -lpp0 -Wl,-rpath,"$B" ||
	{ echo "cannot build the DWARF 4 test program"; exit 1; }
# non-PIE: its probe offsets and the agent's mapping of them differ from a PIE's
"$CC" -O2 -g -fno-pie -no-pie -I"$SRC" -o "$B/prognp" "$SRC/prog.c" -L"$B" -lpp2 -Wl,-rpath,"$B" ||
	{ echo "cannot build the non-PIE test program"; exit 1; }

# one probe, the values the program prints: record_point id=.. size=.. n=.. x=.. y=.. name=.. tag=.. h2=.. mode=..
# (mode a bitfield, which perf 6.1 cannot fetch from DWARF 5)
DEF='record_point it->id it->size n it->pos.x it->ref->y it->name:string it->tag:string h2=it->hist[2] fl->mode'

# the program's lines and the trace's, both as "id size n x y name tag h2" in decimal
printed() { sed -n 's/^record_point id=\([0-9]*\) size=\([-0-9]*\) n=\([-0-9]*\) x=\([-0-9]*\) y=\([-0-9]*\) name=\([^ ]*\) tag=\([^ ]*\) h2=\([-0-9]*\) mode=\([0-9]*\)$/\1 \2 \3 \4 \5 \6 \7 \8 \9/p' "$1"; }
recorded() {
	local id size n x y name tag h2 mode

	sed -n 's/.* record_point: ([^)]*) id=\([^ ]*\) size=\([^ ]*\) n=\([^ ]*\) x=\([^ ]*\) y=\([^ ]*\) name="\([^"]*\)" tag="\([^"]*\)" h2=\([^ ]*\) mode=\([^ ]*\)$/\1 \2 \3 \4 \5 \6 \7 \8 \9/p' "$1" |
		while read -r id size n x y name tag h2 mode; do
			echo "$((id)) $size $n $x $y $name $tag $h2 $mode"
		done
}

run_one() {
	local o=$1 st=0

	"$FDR" start >/dev/null 2>&1 || { diag "fdr start failed"; return 1; }
	run "$FDR" probe -x "$B/prog$o" -a "$DEF"
	if [ $rc != 0 ]; then
		diag "fdr probe: rc $rc: $(cat "$OUT" "$ERR")"
		"$FDR" destroy >/dev/null 2>&1
		return 1
	fi
	"$FDR" write events/probe_prog$o/enable 1 || st=1
	LD_PRELOAD=$LIBPROBE "$B/prog$o" 3 >"$T/prog.out" 2>&1 || { diag "prog$o failed"; st=1; }
	"$FDR" show >"$T/trace" 2>&1
	"$FDR" write events/probe_prog$o/enable 0
	printed "$T/prog.out" >"$T/want"
	recorded "$T/trace" >"$T/got"
	if [ "$(wc -l <"$T/want")" != 3 ] || ! cmp -s "$T/want" "$T/got"; then
		diag "prog$o: printed:"
		diag "$(cat "$T/want")"
		diag "recorded:"
		diag "$(cat "$T/got")"
		diag "trace:"
		diag "$(grep -v '^#' "$T/trace")"
		diag "uprobe_events: $("$FDR" cat uprobe_events 2>&1)"
		diag "uprobe_profile: $("$FDR" cat uprobe_profile 2>&1)"
		diag "error_log: $("$FDR" cat error_log 2>&1 | tail -5)"
		st=1
	fi
	run "$FDR" probe -d "probe_prog$o:*"
	[ $rc = 0 ] || { diag "fdr probe -d: $(cat "$ERR")"; st=1; }
	[ -z "$("$FDR" cat uprobe_events)" ] || { diag "probe left: $("$FDR" cat uprobe_events)"; st=1; }
	"$FDR" destroy >/dev/null 2>&1
	return $st
}

# the probe added while the program runs: it waits (a line on stdin), fdr probe
# --add and enable, then it goes on; its agent arms the probe meanwhile
test_values_running() {
	local st=0 pid i

	"$FDR" start >/dev/null 2>&1 || { diag "fdr start failed"; return 1; }
	mkfifo "$T/go" || return 1
	LD_PRELOAD=$LIBPROBE "$B/prog2" 3 wait <"$T/go" >"$T/prog.out" 2>&1 &
	pid=$!
	bg_add "$pid"
	exec 7>"$T/go"
	for i in $(seq 100); do
		grep -q waiting "$T/prog.out" && break
		sleep 0.05
	done
	run "$FDR" probe -x "$B/prog2" -a "$DEF"
	[ $rc = 0 ] || { diag "fdr probe: rc $rc: $(cat "$OUT" "$ERR")"; st=1; }
	"$FDR" write events/probe_prog2/enable 1 || st=1
	# armed once the agent has seen the change (it says so in no file: wait)
	sleep 1.5
	echo go >&7
	exec 7>&-
	wait "$pid" || { diag "prog2 failed: $(cat "$T/prog.out")"; st=1; }
	"$FDR" show >"$T/trace" 2>&1
	"$FDR" write events/probe_prog2/enable 0
	printed "$T/prog.out" >"$T/want"
	recorded "$T/trace" >"$T/got"
	if [ "$(wc -l <"$T/want")" != 3 ] || ! cmp -s "$T/want" "$T/got"; then
		diag "running prog2: printed:"
		diag "$(cat "$T/want")"
		diag "recorded:"
		diag "$(cat "$T/got")"
		st=1
	fi
	"$FDR" probe -q -d "probe_prog2:*" || st=1
	"$FDR" destroy >/dev/null 2>&1
	return $st
}

test_values_O0() { run_one 0; }
test_values_O2() { run_one 2; }
test_values_nopie() { run_one np; }
test_values_dwarf4() { run_one d4; }

run_cases "test_values_O0 test_values_O2 test_values_nopie test_values_dwarf4 test_values_running"
tap_summary
