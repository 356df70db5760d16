#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# record.sh FDR FDR_DEMO [KSHARK_LOAD] - fdr record and fdr extract write
# trace.dat files that trace-cmd report (and libtracecmd, as KernelShark uses it,
# through KSHARK_LOAD) read back with the same records fdr show prints.
#
# Records are compared as "cpu pid timestamp event fields" lines: trace-cmd
# report's and fdr show's, each normalised, must be identical (timestamps to the
# microsecond both print). Exits 77 (skipped) only when trace-cmd is missing.
set -u
# shellcheck source=../harness/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib.sh"

FDR=${1:?usage: record.sh FDR FDR_DEMO [KSHARK_LOAD]}
DEMO=${2:?usage: record.sh FDR FDR_DEMO [KSHARK_LOAD]}
KLOAD=${3:-}

command -v trace-cmd >/dev/null || skip "trace-cmd is not installed (Debian package trace-cmd)"

suite_init record
FULL=$T/full
unmount_full() {
	mountpoint -q "$FULL" 2>/dev/null && umount "$FULL"
}
at_exit unmount_full
export FDR_SESSION=rec

# norm_tc REPORT: trace-cmd report lines as "cpu pid ts event fields"
# ("print: tracing_mark_write: TEXT" becomes "tracing_mark_write TEXT", as fdr shows it)
norm_tc() {
	sed -nE 's/^ *.*-([0-9]+) +\[([0-9]+)\] +([0-9]+\.[0-9]+): +([^ :]+): *(.*)$/\2 \1 \3 \4 \5/p' "$1" |
		sed -E 's/^([0-9]+ [0-9]+ [0-9.]+) print tracing_mark_write: /\1 tracing_mark_write /' |
		sed -E 's/ +/ /g; s/ $//'
}

# norm_show SHOW: fdr show lines the same way
norm_show() {
	sed -nE 's/^ *.*-([0-9]+) +\[([0-9]+)\] +[^ ]+ +([0-9]+\.[0-9]+): +([^ :]+): *(.*)$/\2 \1 \3 \4 \5/p' "$1" |
		sed -E 's/ +/ /g; s/ $//'
}

# same_records NAME REPORT SHOW: the normalised lines must be identical, and many
same_records() {
	local name=$1 n
	norm_tc "$2" >"$T/a"
	norm_show "$3" >"$T/b"
	n=$(wc -l <"$T/b")
	if [ "$n" -lt 100 ]; then
		diag "$name: only $n records in fdr show's output"
		return 1
	fi
	if ! diff -u "$T/b" "$T/a" >"$T/diff"; then
		diag "$name: trace-cmd report differs from fdr show (- fdr show, + trace-cmd report):"
		head -20 "$T/diff" | sed 's/^/#   /'
		diag "$name: trace-cmd report's first lines, as printed:"
		head -8 "$2" | sed 's/^/#   | /'
		return 1
	fi
	return 0
}

# cpu_counts SUMMARY: "N0 N1 ..." events per CPU from fdr record's summary
cpu_counts() {
	sed -nE 's/^  CPU([0-9]+): ([0-9]+) events.*/\2/p' "$1" | tr '\n' ' '
}

# kshark FILE COUNTS...: libtracecmd loads every record of every CPU
kshark() {
	local f=$1
	shift
	[ -z "$KLOAD" ] && return 0
	# leaks inside libtracecmd/libtraceevent are theirs, not what this checks
	if ! ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
		"$KLOAD" "$f" "$@" >"$T/kl.out" 2>"$T/kl.err"; then
		diag "kshark-load $f $*: $(tail -3 "$T/kl.err")"
		return 1
	fi
	return 0
}

# ---- 1. fdr extract: the buffers, not consumed --------------------------------------------
"$FDR" start -e 'demo:*' -b 4096 2>/dev/null
"$DEMO" -n 3000 -r 0 -q >"$T/demo1.out" 2>&1
"$FDR" extract -o "$T/ext.dat" 2>"$T/ext.err"
r=$?
"$FDR" show >"$T/show1" 2>&1
trace-cmd report "$T/ext.dat" >"$T/rep1" 2>"$T/rep1.err"
r2=$?
res=0
if [ $r != 0 ] || [ $r2 != 0 ]; then
	diag "extract exit $r: $(cat "$T/ext.err"); trace-cmd report exit $r2: $(tail -2 "$T/rep1.err")"
	res=1
fi
[ $res = 0 ] && { same_records extract "$T/rep1" "$T/show1" || res=1; }
ok $res "extract: trace-cmd report shows what fdr show shows (cpu, pid, timestamp, event, fields)"

res=0
total=$(demo_total "$T/demo1.out")
n=$(norm_tc "$T/rep1" | wc -l)
nm=$(grep -c 'print: *tracing_mark_write: request .* failed' "$T/rep1")
nf=$(sed -nE 's/.* ([0-9]+) failed,.*/\1/p' "$T/demo1.out")
if [ "$n" != "$total" ] || [ "$nm" != "$nf" ] || [ "$nf" = 0 ]; then
	diag "expected $total records with $nf markers (print: tracing_mark_write), found $n with $nm"
	res=1
fi
ok $res "extract: every record of the demo, markers as print: tracing_mark_write"

res=0
counts=$("$FDR" stat 2>/dev/null | sed -nE 's/^entries: ([0-9]+)/\1/p' | tr '\n' ' ')
# shellcheck disable=SC2086
kshark "$T/ext.dat" $counts || res=1
ok $res "extract: libtracecmd (KernelShark's loader) reads every record and field, per-CPU counts ($counts)"

# fdr's own readers of the file: fdr report and fdr export FILE print exactly the
# record lines fdr show printed (the file keeps the formats, names and clock)
res=0
grep -v '^#' "$T/show1" >"$T/show1.lines"
if ! "$FDR" report "$T/ext.dat" >"$T/frep1" 2>"$T/frep1.err"; then
	diag "fdr report: $(cat "$T/frep1.err")"
	res=1
elif ! tail -n +2 "$T/frep1" | diff -u "$T/show1.lines" - >"$T/fdiff1"; then
	diag "fdr report differs from fdr show (- show, + report):"
	head -10 "$T/fdiff1" | sed 's/^/#   /'
	res=1
fi
if ! "$FDR" export --format text -o "$T/fexp1" "$T/ext.dat" 2>"$T/fexp1.err"; then
	diag "fdr export FILE: $(cat "$T/fexp1.err")"
	res=1
elif ! grep -v '^#' "$T/fexp1" | diff -u "$T/show1.lines" - >"$T/fdiff2"; then
	diag "fdr export --format text FILE differs from fdr show (- show, + export):"
	head -10 "$T/fdiff2" | sed 's/^/#   /'
	res=1
fi
ok $res "extract: fdr report and fdr export read the file back as fdr show printed it"

# ---- 2. fdr extract --snapshot ----------------------------------------------------------------
"$FDR" snapshot 2>/dev/null
"$FDR" extract --snapshot -o "$T/snap.dat" 2>"$T/snap.err"
r=$?
"$FDR" snapshot show >"$T/show2" 2>&1
trace-cmd report "$T/snap.dat" >"$T/rep2" 2>"$T/rep2.err"
res=0
[ $r = 0 ] || { diag "extract --snapshot: $(cat "$T/snap.err")"; res=1; }
[ $res = 0 ] && { same_records snapshot "$T/rep2" "$T/show2" || res=1; }
ok $res "extract --snapshot: trace-cmd report shows what fdr snapshot show shows"
"$FDR" destroy 2>/dev/null

# recorded_all ERR REPORT: res=1 (with what was found) unless fdr record exited 0
# ($r), the trace-cmd report REPORT holds every record the demo wrote (its summary
# in ERR), the summary says 0 lost, and no loss explanation follows it.
recorded_all() {
	local err=$1 rep=$2 total got

	total=$(demo_total "$err")
	got=$(norm_tc "$rep" | wc -l)
	if [ $r != 0 ] || [ -z "$total" ] || [ "$got" != "$total" ] ||
	   ! grep -q "fdr record: $total events, 0 lost" "$err" ||
	   grep -q "fdr record: longest pause" "$err"; then
		diag "exit $r; expected ${total:-?} records and a summary '${total:-?} events, 0 lost', found $got records:"
		grep -v '^fdr: session' "$err" | sed 's/^/#   /'
		res=1
	fi
}

# ---- 3. fdr record: same records as a second instance holds ------------------------------------
# The instance "ref" records the same demo events (each instance's record takes its
# own timestamp: these may differ by a few ns, so ts are compared after the others)
"$FDR" start -e 'demo:*' -b 4096 2>/dev/null
"$FDR" start -i ref -e 'demo:*' -b 4096 2>/dev/null
"$FDR" record -e 'demo:*' -o "$T/rec.dat" -- "$DEMO" -n 3000 -r 20000 -q >"$T/demo3.out" 2>"$T/rec.err"
r=$?
trace-cmd report "$T/rec.dat" >"$T/rep3" 2>"$T/rep3.err"
"$FDR" show -i ref >"$T/show3" 2>&1
res=0
recorded_all "$T/rec.err" "$T/rep3"
# the demo instance ref: everything but the markers (they go to the top instance only)
norm_tc "$T/rep3" | grep -v ' tracing_mark_write ' | awk '{ $3 = ""; print }' | sort -s -k1,1n >"$T/a3"
norm_show "$T/show3" | awk '{ $3 = ""; print }' | sort -s -k1,1n >"$T/b3"
if [ $res = 0 ] && ! diff -u "$T/b3" "$T/a3" >"$T/diff3"; then
	diag "record differs from instance ref (- fdr show -i ref, + trace-cmd report):"
	head -20 "$T/diff3" | sed 's/^/#   /'
	res=1
fi
# timestamps: the writer stamps each instance's copy when it writes it, the top
# instance's first, so the recorded one is never later (1 us: both are rounded);
# it is earlier by the time between the two writes: at most 1 ms for 99% of them,
# and at most 200 ms for all (a writer preempted between its two copies on a
# loaded machine). extract above checks that pages carry fdr show's timestamps
# exactly.
if [ $res = 0 ]; then
	bad=$(paste -d' ' <(norm_tc "$T/rep3" | grep -v ' tracing_mark_write ' | sort -s -k1,1n | cut -d' ' -f3) \
		<(norm_show "$T/show3" | sort -s -k1,1n | cut -d' ' -f3) |
		awk '{ d = $2 - $1; t++
		       if (d < -0.0000015 || d > 0.2) { n++; if (n == 1) first = $0 }
		       if (d > 0.001) far++ }
		     END { if (far * 100 > t) { n++; first = far " of " t " more than 1 ms apart" }
		           print n + 0, first }')
	[ "${bad%% *}" = 0 ] || { diag "${bad%% *} timestamps not within [0, 1 ms] (99%) or [0, 200 ms] (all) before instance ref's (first: ${bad#* })"; res=1; }
fi
ok $res "record: every demo record, same cpu/pid/event/fields as a second instance, 0 lost"

res=0
# shellcheck disable=SC2046
kshark "$T/rec.dat" $(cpu_counts "$T/rec.err") || res=1
ok $res "record: libtracecmd (KernelShark's loader) reads every record and field"

res=0
if ! trace-cmd report --stat "$T/rec.dat" 2>/dev/null | grep -q 'overrun: 0'; then
	diag "trace-cmd report --stat shows no per-CPU stats: $(trace-cmd report --stat "$T/rec.dat" 2>&1 | tail -3)"
	res=1
fi
ok $res "record: per-CPU statistics in the file (trace-cmd report --stat)"
"$FDR" destroy 2>/dev/null

# ---- 3b. fdr record into tmpfs -------------------------------------------------------------------
# While recording the file is laid out in sparse regions as large as the file
# system (tmpfs: RAM-sized), then made compact. Same records, none lost.
SHM_OUT=$(mktemp -d /dev/shm/fdr-record-test.XXXXXX 2>/dev/null || mktemp -d "$T/shm.XXXXXX")
"$FDR" start -e 'demo:*' -b 1024 2>/dev/null
"$FDR" record -e 'demo:*' -o "$SHM_OUT/rec.dat" -- "$DEMO" -n 3000 -r 20000 -q \
	>/dev/null 2>"$T/rec3b.err"
r=$?
trace-cmd report "$SHM_OUT/rec.dat" >"$T/rep3b" 2>"$T/rep3b.err"
rm -rf "$SHM_OUT"
res=0
recorded_all "$T/rec3b.err" "$T/rep3b"
ok $res "record: into tmpfs, every record, 0 lost"
"$FDR" destroy 2>/dev/null

# ---- 3c. fdr record -r: one reader per CPU, pinned to it, at SCHED_FIFO priority --------------
# The command looks at fdr record's threads first: one per CPU must run SCHED_FIFO
# 5, each pinned to its own CPU (as root; otherwise fdr record says it could not).
NCPU=$(nproc)
"$FDR" start -e 'demo:*' -b 1024 2>/dev/null
"$FDR" record -r 5 -e 'demo:*' -o "$T/rec3c.dat" -- sh -c '
	sleep 0.3
	for t in /proc/$PPID/task/*; do
		tid=${t##*/}
		pol=$(chrt -p "$tid" | sed -n "s/.*policy: //p")
		prio=$(chrt -p "$tid" | sed -n "s/.*priority: //p")
		mask=$(taskset -cp "$tid" | sed -n "s/.*list: //p")
		echo "$pol $prio $mask"
	done >"$1"
	exec "$0" -n 3000 -r 20000 -q' "$DEMO" "$T/rec3c.threads" >/dev/null 2>"$T/rec3c.err"
r=$?
trace-cmd report "$T/rec3c.dat" >"$T/rep3c" 2>"$T/rep3c.err"
res=0
recorded_all "$T/rec3c.err" "$T/rep3c"
if [ "$(id -u)" = 0 ]; then
	fifo=$(grep -c '^SCHED_FIFO 5 ' "$T/rec3c.threads")
	cpus=$(awk '$1 == "SCHED_FIFO" { print $3 }' "$T/rec3c.threads" | sort -u | tr '\n' ' ')
	want=$(seq 0 $((NCPU - 1)) | tr '\n' ' ')
	if [ "$fifo" != "$NCPU" ] || [ "$cpus" != "$want" ] || grep -q -- '-r:' "$T/rec3c.err"; then
		diag "expected $NCPU SCHED_FIFO 5 threads pinned to CPUs $want, found $fifo on '$cpus':"
		sed 's/^/#   /' "$T/rec3c.threads"
		res=1
	fi
fi
ok $res "record -r 5: a SCHED_FIFO reader pinned to each CPU, every record, 0 lost"
"$FDR" destroy 2>/dev/null

# ---- 3d. a slow writer: full pages, not a page per round --------------------------------------
# fdr record reads every 500 us: a page per round for a few records would make
# the file a hundred times larger than its records (1.6 KiB per event was seen).
# It takes the sub-buffers the writer has left; the rest at the stop.
"$FDR" start -e 'demo:*' -b 1024 2>/dev/null
"$FDR" record -e 'demo:*' -o "$T/slow.dat" -- "$DEMO" -n 1500 -r 1500 -q >/dev/null 2>"$T/slow.err"
r=$?
trace-cmd report "$T/slow.dat" >"$T/slow.rep" 2>"$T/slow.rep.err"
res=0
recorded_all "$T/slow.err" "$T/slow.rep"
read -r nev bytes < <(sed -nE 's/^fdr record: ([0-9]+) events, 0 lost, ([0-9.]+) KiB of pages.*/\1 \2/p' "$T/slow.err")
if [ $res = 0 ] && ! awk -v n="${nev:-0}" -v k="${bytes:-0}" 'BEGIN { exit !(n > 0 && k * 1024 / n < 200) }'; then
	diag "expected under 200 bytes of pages per event, found ${bytes:-?} KiB for ${nev:-?} events"
	res=1
fi
ok $res "record of a slow writer (1500 requests/s): every record, full pages (under 200 bytes per event)"
"$FDR" destroy 2>/dev/null

# stalled_record MODE NAME: fdr record of 20000 demo events into an 8 KiB buffer
# in MODE, the recorder stopped (SIGSTOP) for 1.5 s while the demo writes; then
# res=0 if the file + lost == written and trace-cmd report flags every lost record
# as CPU:N [M EVENTS DROPPED]. Leaves $r, $lost and the files $T/NAME.{dat,err}.
stalled_record() {
	local mode=$1 name=$2 total got dropped ovw rpid pause

	# the command says when it runs (fdr record reads by then), then waits for the STOP
	"$FDR" record -e 'demo:*' -b 8 -m "$mode" -o "$T/$name.dat" -- \
		sh -c 'touch "$1"; sleep 0.5; "$0" -n 20000 -r 0 -q' "$DEMO" "$T/$name.started" \
		>"$T/$name.demo" 2>"$T/$name.err" &
	rpid=$!
	for _ in $(seq 100); do
		[ -e "$T/$name.started" ] && break
		sleep 0.05
	done
	kill -STOP $rpid
	sleep 1.5
	kill -CONT $rpid
	wait $rpid
	r=$?
	trace-cmd report "$T/$name.dat" >"$T/$name.rep" 2>"$T/$name.rep.err"
	res=0
	total=$(demo_total "$T/$name.err")
	lost=$(sed -nE 's/^fdr record: [0-9]+ events, ([0-9]+) lost.*/\1/p' "$T/$name.err")
	got=$(norm_tc "$T/$name.rep" | wc -l)
	dropped=$(sed -nE 's/^CPU:[0-9]+ \[([0-9]+) EVENTS DROPPED\]/\1/p' "$T/$name.rep" | awk '{ s += $1 } END { print s + 0 }')
	ovw=$(sed -nE 's/^  CPU[0-9]+: .* \(([0-9]+) overwritten, [0-9]+ refused\)/\1/p' "$T/$name.err" | awk '{ s += $1 } END { print s + 0 }')
	if [ $r != 0 ] || [ -z "$lost" ] || [ "${lost:-0}" = 0 ] ||
	   { [ "$mode" = overwrite ] && [ "$ovw" != "$lost" ]; }; then
		diag "expected a record with lost ($mode) events, exit $r: $(grep -v '^fdr: session' "$T/$name.err" | tail -4)"
		res=1
	elif [ $((got + lost)) != "$total" ]; then
		diag "records in the file ($got) + lost ($lost) != events the demo wrote ($total)"
		res=1
	elif [ "$dropped" != "$lost" ]; then
		diag "trace-cmd report shows $dropped EVENTS DROPPED, fdr record counted $lost lost"
		grep 'DROPPED' "$T/$name.rep" | head -3 | sed 's/^/#   /'
		res=1
	fi
	# the loss is explained: the recorder's longest pause covers the 1.5 s stop
	pause=$(sed -nE 's/^fdr record: longest pause between rounds ([0-9]+)\.[0-9] ms; .*/\1/p' "$T/$name.err")
	if [ $res = 0 ] && { [ -z "$pause" ] || [ "$pause" -lt 1400 ]; }; then
		diag "expected 'fdr record: longest pause between rounds' of at least 1400 ms, found '${pause}'"
		res=1
	fi
}

# ---- 4. lost records: discard mode, the reader stopped while the buffer overflows --------------
stalled_record discard lost
ok $res "record, discard mode overflowing: file + lost = written; trace-cmd report shows CPU:N [M EVENTS DROPPED] for all of them; the summary names the 1.5 s pause"
"$FDR" destroy 2>/dev/null

# ---- 4b. lost records: overwrite mode, the reader stopped while the buffer wraps ---------------
# (fdr record takes whole sub-buffers while recording: the ones overwritten before it
# took them, or while it copied them, must be counted, never kept torn; all its
# losses must be overwritten ones)
stalled_record overwrite lost-ovw
ok $res "record, overwrite mode wrapping: file + lost = written; trace-cmd report shows CPU:N [M EVENTS DROPPED] for all of them; the summary names the 1.5 s pause"
res=0
# shellcheck disable=SC2046
kshark "$T/lost-ovw.dat" $(cpu_counts "$T/lost-ovw.err") || res=1
ok $res "record, overwrite mode wrapping: libtracecmd reads every record"
"$FDR" destroy 2>/dev/null

# ---- 5. lost records: overwrite mode, extract after the buffer wrapped -------------------------
"$FDR" start -e 'demo:*' -b 8 -m overwrite 2>/dev/null
"$DEMO" -n 3000 -r 0 -q >"$T/demo5.out" 2>&1
"$FDR" extract -o "$T/ovw.dat" 2>"$T/ovw.err"
trace-cmd report "$T/ovw.dat" >"$T/rep5" 2>/dev/null
"$FDR" show >"$T/show5" 2>&1
res=0
total=$(demo_total "$T/demo5.out")
got=$(norm_tc "$T/rep5" | wc -l)
dropped=$(sed -nE 's/^CPU:[0-9]+ \[([0-9]+) EVENTS DROPPED\]/\1/p' "$T/rep5" | awk '{ s += $1 } END { print s + 0 }')
if [ "$dropped" = 0 ] || [ $((got + dropped)) != "$total" ]; then
	diag "expected the overwritten records flagged: $got in the file + $dropped dropped != $total written"
	res=1
fi
[ $res = 0 ] && { same_records overwrite "$T/rep5" "$T/show5" || res=1; }
ok $res "extract, overwrite mode wrapped: CPU:N [M EVENTS DROPPED] counts what was overwritten; the rest matches fdr show"
"$FDR" destroy 2>/dev/null

# ---- 6. errors ----------------------------------------------------------------------------------
res=0
"$FDR" record -m sideways -o "$T/x.dat" -- true >"$T/out6" 2>&1
r=$?
if [ $r != 2 ] || ! grep -q "expected a mode 'overwrite' or 'discard', found 'sideways'" "$T/out6"; then
	diag "exit $r: $(cat "$T/out6")"
	res=1
fi
"$FDR" start 2>/dev/null
"$FDR" extract -o "$T/no/such/dir/x.dat" >"$T/out6" 2>&1
r=$?
if [ $r != 1 ] || ! grep -q "cannot write $T/no/such/dir/x.dat" "$T/out6"; then
	diag "extract into a missing directory: exit $r: $(cat "$T/out6")"
	res=1
fi
for prio in 0 100; do
	"$FDR" record -r $prio -o "$T/x.dat" -- true >"$T/out6" 2>&1
	r=$?
	if [ $r != 2 ] || ! grep -q "expected a SCHED_FIFO priority from 1 to 99" "$T/out6"; then
		diag "-r $prio: exit $r: $(cat "$T/out6")"
		res=1
	fi
done
ok $res "errors: a bad mode or priority is a usage error; an unwritable output says where"
"$FDR" destroy 2>/dev/null

# ---- 7. the command's exit status, once the file is written -------------------------------------
# as time and perf record: the command's status, 128 + the signal that killed it,
# 127 when it is not found, 126 when it cannot be run
res=0
"$FDR" start -e 'demo:*' 2>/dev/null
status_is() {
	local want=$1
	shift
	rm -f "$T/st.dat"
	"$FDR" record -e 'demo:*' -o "$T/st.dat" -- "$@" >/dev/null 2>"$T/st.err"
	r=$?
	if [ $r != "$want" ] || ! trace-cmd report "$T/st.dat" >/dev/null 2>"$T/st.rep.err"; then
		diag "record -- $*: expected exit $want and a file trace-cmd reads, found exit $r:"
		grep -v '^fdr: session' "$T/st.err" "$T/st.rep.err" | sed 's/^/#   /'
		res=1
	fi
}
status_is 0 true
status_is 1 false
status_is 3 sh -c 'exit 3'
status_is 137 sh -c 'kill -9 $$'
status_is 143 sh -c 'kill -TERM $$'
status_is 127 "$T/no-such-command"
status_is 126 "$T"
ok $res "record: exits with the command's status (0, 1, 3, 128+9, 128+15, 127 not found, 126 not runnable), after writing the file"
"$FDR" destroy 2>/dev/null

# ---- 8. a full file system ----------------------------------------------------------------------
# Full before: a clear error and no file. Full during the recording: the error,
# and the file keeps what was written before (valid, readable), the rest stays
# in the buffers: file + ring = written.
if [ "$(id -u)" != 0 ]; then
	echo "ok $((ncase + 1)) # SKIP full file system: needs root to mount a tmpfs"
	ncase=$((ncase + 1))
	pass=$((pass + 1))
else
	res=0
	mkdir -p "$FULL"
	mount -t tmpfs -o size=1m none "$FULL"
	dd if=/dev/zero of="$FULL/fill" bs=4k 2>/dev/null
	"$FDR" start -e 'demo:*' 2>/dev/null
	"$FDR" record -e 'demo:*' -o "$FULL/r.dat" -- true >"$T/full.out" 2>&1
	r=$?
	if [ $r != 1 ] || ! grep -q "cannot write $FULL/r.dat: No space left on device" "$T/full.out" ||
	   [ -e "$FULL/r.dat" ]; then
		diag "full before: expected exit 1, 'No space left on device' and no file, found exit $r, $(ls "$FULL"):"
		sed 's/^/#   /' "$T/full.out"
		res=1
	fi
	rm -f "$FULL/fill"
	# room for the formats (with 256 KiB kept for later ones) and about 300 KiB of pages
	dd if=/dev/zero of="$FULL/fill" bs=1k count=400 2>/dev/null
	"$FDR" record -e 'demo:*' -b 4096 -o "$FULL/r.dat" -- "$DEMO" -n 30000 -r 30000 -q >"$T/full.out" 2>&1
	r=$?
	total=$(demo_total "$T/full.out")
	trace-cmd report "$FULL/r.dat" >"$T/full.rep" 2>"$T/full.rep.err"
	got=$(norm_tc "$T/full.rep" | wc -l)
	read_ev=$("$FDR" stat 2>/dev/null | sed -nE 's/^read events: ([0-9]+)/\1/p' | awk '{ s += $1 } END { print s + 0 }')
	inram=$("$FDR" stat 2>/dev/null | sed -nE 's/^(entries|overrun|dropped events): ([0-9]+)/\2/p' | awk '{ s += $1 } END { print s + 0 }')
	if [ $r != 1 ] || ! grep -q "No space left on device" "$T/full.out" ||
	   ! grep -q "fdr record: $FULL/r.dat holds the $got events recorded before the error" "$T/full.out" ||
	   [ "$got" = 0 ] || [ "$got" != "$read_ev" ] || [ -z "$total" ] || [ $((got + inram)) != "$total" ]; then
		diag "full during: exit $r, $got records in the file, $read_ev read, $inram in the ring, ${total:-?} written:"
		grep -v '^fdr: session' "$T/full.out" | sed 's/^/#   /'
		res=1
	fi
	"$FDR" destroy 2>/dev/null
	umount "$FULL"
	ok $res "record on a full file system: before, an error and no file; during, an error and a valid file with what was written (file + ring = written)"
fi

tap_summary
