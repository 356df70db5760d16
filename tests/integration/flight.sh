#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# flight.sh FDR FDR_DEMO - the flight recorder from the command line (issue 3):
#   - a trigger "snapshot if status >= 500" on demo:request: the snapshot ends
#     with the failing request, and everything before it is there, in order
#     (checked against a second run of fdr-demo with the same seed);
#   - ten triggered snapshots saved by "fdr snapshot save DIR": ten files, each
#     ending at its own failure; the same with --format dat, ctf and perfetto,
#     each file read by trace-cmd/fdr report, babeltrace2 or JSON;
#   - instances with fdr mkdir/rmdir, rmdir refused while "fdr pipe -i" reads;
#   - a session on disk (fdr -d DIR): read after every process is gone, and from
#     a copy in another directory.
# Each test_* function is one case, run in a private FDR_ROOT. Prints "ok N -
# name" / "not ok N - name", then "N passed, N failed"; exits non-zero if any
# case failed. Every process started in the background is waited for with a
# deadline.
set -u
# shellcheck source=../harness/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib.sh"

FDR=${1:?usage: flight.sh FDR FDR_DEMO}
DEMO=${2:?usage: flight.sh FDR FDR_DEMO}
abs_path FDR DEMO
# sessions in memory when we can (rings written back to a disk are slow)
suite_init flight shm
export FDR_SESSION=flight

# wait_gone PID SECS: wait until PID (a child of this shell) ended; KILL it after SECS
wait_gone() {
	local pid=$1 secs=$2 i
	for ((i = 0; i < secs * 20; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.05
	done
	if kill -0 "$pid" 2>/dev/null; then
		kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		return 124
	fi
	wait "$pid"
}

# events FILE: the event lines of a trace text, without task, CPU and time
events() {
	sed -n 's/^.*[0-9]: \(request\|cache\|db_query\): /\1: /p' "$1"
}

# requests FILE: the demo:request lines only
requests() {
	events "$1" | grep '^request: '
}

# demo_run SEED: 100 requests as fast as possible (exactly one fails); sets
# $failed_nr and $failed_path from its report
demo_run() {
	run "$DEMO" -n 100 -r 0 -s "$1"
	if [ "$rc" -ne 0 ]; then
		diag "fdr-demo -s $1: exit status $rc"
		show_io
		return 1
	fi
	failed_nr=$(sed -n 's/^fdr-demo: request \([0-9]*\) failed: .*/\1/p' "$ERR")
	failed_path=$(sed -n 's/^fdr-demo: request [0-9]* failed: \([^:]*\): 500$/\1/p' "$ERR")
	if [ -z "$failed_nr" ] || [ -z "$failed_path" ]; then
		diag "fdr-demo -s $1 did not report its failure"
		show_io
		return 1
	fi
}

# a session with demo:* enabled and demo:request registered, its buffer empty
demo_session() {
	must "$FDR" start -e 'demo:*' || return 1
	must "$DEMO" -n 1 -r 0 -q -s 1 || return 1
	must "$FDR" write trace '' || return 1
}

# ---- cases --------------------------------------------------------------------

test_trigger_snapshot_on_500() {
	local seed=7 n want got
	export FDR_SESSION=trig
	demo_session || return 1
	must "$FDR" write events/demo/request/trigger 'snapshot if status >= 500' || return 1
	fdr cat events/demo/request/trigger
	grep -qxF 'snapshot:unlimited if status >= 500' "$OUT" || {
		diag "the trigger file does not list the trigger"
		show_io
		return 1
	}
	demo_run "$seed" || return 1
	n=$failed_nr
	must "$FDR" snapshot show || return 1
	cp "$OUT" "$T/snap"
	must "$FDR" show || return 1
	cp "$OUT" "$T/live"

	# the snapshot's last demo:request is the 500, and there are n + 1 of them
	got=$(requests "$T/snap" | tail -n 1)
	case $got in
	"request: status=500 "*"path=$failed_path") ;;
	*)
		diag "the snapshot's last request is '$got', expected the 500 of $failed_path"
		return 1
		;;
	esac
	got=$(requests "$T/snap" | wc -l)
	if [ "$got" -ne $((n + 1)) ]; then
		diag "the snapshot holds $got requests, expected $((n + 1)) (requests 0..$n)"
		return 1
	fi
	# nothing after it in the snapshot; the live buffer goes on with the marker
	got=$(events "$T/snap" | tail -n 1)
	case $got in
	"request: status=500 "*) ;;
	*)
		diag "the snapshot ends with '$got', not with the failing request"
		return 1
		;;
	esac
	grep -q "tracing_mark_write: request $n failed: GET $failed_path: status 500" "$T/live" || {
		diag "the live buffer lacks the failure's marker"
		sed 's/^/#   live: /' "$T/live" | head -20
		return 1
	}
	got=$(requests "$T/live" | wc -l)
	if [ "$got" -ne $((99 - n)) ]; then
		diag "the live buffer holds $got requests, expected $((99 - n)) (requests $((n + 1))..99)"
		return 1
	fi

	# the same run again without the trigger: the snapshot is its prefix, in order
	must "$FDR" write events/demo/request/trigger '!snapshot' || return 1
	must "$FDR" write trace '' || return 1
	demo_run "$seed" || return 1
	must "$FDR" show || return 1
	want=$(events "$OUT" | sed -n "1,/^request: status=500 /p")
	got=$(events "$T/snap")
	if [ "$got" != "$want" ]; then
		diag "the snapshot's events differ from the first events of the same run:"
		diff <(echo "$want") <(echo "$got") | head -20 | sed 's/^/#   /'
		return 1
	fi
}

test_save_ten_snapshots() {
	local k saver n got want prev_nr= files
	local -a nrs paths
	export FDR_SESSION=save
	demo_session || return 1
	must "$FDR" write events/demo/request/trigger 'snapshot if status >= 500' || return 1
	"$FDR" snapshot save "$T/saved" >"$T/saver.out" 2>"$T/saver.err" &
	saver=$!
	bg_add "$saver"
	for ((k = 0; k < 100; k++)); do
		grep -q 'saving every snapshot' "$T/saver.err" 2>/dev/null && break
		sleep 0.05
	done
	grep -q 'saving every snapshot' "$T/saver.err" || {
		diag "fdr snapshot save did not start"
		sed 's/^/#   saver: /' "$T/saver.err"
		return 1
	}
	# ten failures, a little apart: each run of 100 requests fails once
	for ((k = 1; k <= 10; k++)); do
		demo_run $((100 + k)) || return 1
		nrs[k]=$failed_nr
		paths[k]=$failed_path
		sleep 0.15
	done
	for ((k = 0; k < 100; k++)); do
		[ "$(find "$T/saved" -name 'snapshot-*.txt' | wc -l)" -ge 10 ] && break
		sleep 0.05
	done
	kill -INT "$saver"
	wait_gone "$saver" 5
	rc=$?
	if [ "$rc" -ne 0 ]; then
		diag "fdr snapshot save: exit status $rc after SIGINT"
		sed 's/^/#   saver: /' "$T/saver.err"
		return 1
	fi
	files=$(find "$T/saved" -type f | sort)
	n=$(echo "$files" | grep -c .)
	if [ "$n" -ne 10 ] || [ "$(echo "$files" | grep -c '/snapshot-[0-9]*-.*\.txt$')" -ne 10 ]; then
		diag "$T/saved holds $n files, expected 10 snapshots:"
		echo "$files" | sed 's/^/#   /'
		sed 's/^/#   saver: /' "$T/saver.err"
		return 1
	fi
	grep -q '10 snapshots saved' "$T/saver.err" || {
		diag "the saver did not report 10 snapshots"
		sed 's/^/#   saver: /' "$T/saver.err"
		return 1
	}
	k=0
	for f in $files; do
		k=$((k + 1))
		# file k ends with the k-th failure
		got=$(requests "$f" | tail -n 1)
		case $got in
		"request: status=500 "*"path=${paths[k]}") ;;
		*)
			diag "file $k ($f): the last request is '$got', expected the 500 of ${paths[k]}"
			return 1
			;;
		esac
		got=$(events "$f" | tail -n 1)
		case $got in
		"request: status=500 "*) ;;
		*)
			diag "file $k: ends with '$got', not with its failure"
			return 1
			;;
		esac
		# and holds what came since the previous failure: the rest of the previous
		# run (after its marker), then this run up to its failure
		want=$((nrs[k] + 1))
		if [ -n "$prev_nr" ]; then
			want=$((want + 99 - prev_nr))
			grep -q "tracing_mark_write: request $prev_nr failed: GET ${paths[k - 1]}: status 500" "$f" || {
				diag "file $k lacks the previous failure's marker"
				return 1
			}
		fi
		got=$(requests "$f" | wc -l)
		if [ "$got" -ne "$want" ]; then
			diag "file $k holds $got requests, expected $want"
			return 1
		fi
		if [ "$(requests "$f" | grep -c 'status=500 ')" -ne 1 ]; then
			diag "file $k holds more than one failure"
			return 1
		fi
		prev_nr=${nrs[k]}
	done
}

# fdr snapshot save --format dat|ctf|perfetto: each snapshot in that format, read
# by the tool it is for, ending with its own failure
test_save_formats() {
	local fmt saver k j f n last
	have() { command -v "$1" >/dev/null 2>&1; }
	for fmt in dat ctf perfetto; do
		export FDR_SESSION=save-$fmt
		demo_session || return 1
		must "$FDR" write events/demo/request/trigger 'snapshot if status >= 500' || return 1
		# emptied here, not only by the saver's redirections: those run in the
		# background job, maybe after the first look below, which then saw the
		# previous format's "saving every snapshot" and lines
		: >"$T/saver.out"
		: >"$T/saver.err"
		"$FDR" snapshot save --format "$fmt" "$T/saved-$fmt" >"$T/saver.out" 2>"$T/saver.err" &
		saver=$!
		bg_add "$saver"
		# the saver says so once attached: a snapshot taken before that is
		# not its business (on a loaded machine, starting it takes seconds)
		for ((k = 0; k < 1200; k++)); do
			grep -q 'saving every snapshot' "$T/saver.err" 2>/dev/null && break
			sleep 0.05
		done
		grep -q 'saving every snapshot' "$T/saver.err" ||
			{ diag "$fmt: the saver did not attach within 60 s"; cat "$T/saver.err"; return 1; }
		# the second failure only once the first snapshot is saved: until then
		# the saver refuses a new one (so that each file is whole), and a slow
		# machine may take longer to write a trace.dat than the demo to fail again
		for ((k = 1; k <= 2; k++)); do
			demo_run $((200 + k)) || return 1
			for ((j = 0; j < 1200; j++)); do
				[ "$(grep -c . "$T/saver.out")" -ge "$k" ] && break
				sleep 0.05
			done
			[ "$(grep -c . "$T/saver.out")" -ge "$k" ] ||
				{ diag "$fmt: snapshot $k not saved within 60 s"; cat "$T/saver.err"; return 1; }
		done
		kill -INT "$saver"
		wait_gone "$saver" 5 || { diag "$fmt: the saver's exit status $?"; cat "$T/saver.err"; return 1; }
		n=$(grep -c "/snapshot-[0-9]*-[0-9.]*\.$fmt" "$T/saver.out")
		[ "$fmt" = perfetto ] && n=$(grep -c '/snapshot-[0-9]*-[0-9.]*\.json$' "$T/saver.out")
		[ "$n" = 2 ] || { diag "$fmt: $n snapshots named in its output, expected 2:"; cat "$T/saver.out"; return 1; }
		[ -z "$(find "$T/saved-$fmt" -name '*.tmp*')" ] || { diag "$fmt: temporary files left"; return 1; }
		while read -r f; do
			case $fmt in
			dat)
				must "$FDR" report "$f" || return 1
				last=$(grep ': request: ' "$OUT" | tail -n 1)
				if have trace-cmd; then
					must trace-cmd report "$f" || return 1
					grep -q 'request: .*status=500' "$OUT" || { diag "trace-cmd: no failure in $f"; return 1; }
				fi
				;;
			ctf)
				have babeltrace2 || { echo "# skip: no babeltrace2"; break; }
				must babeltrace2 "$f" || return 1
				last=$(grep 'demo:request' "$OUT" | tail -n 1)
				;;
			perfetto)
				have python3 || { echo "# skip: no python3"; break; }
				must python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
r = [e for e in d["traceEvents"] if e.get("name") == "request"]
print("status=%d" % r[-1]["args"]["status"])' "$f" || return 1
				last=$(cat "$OUT")
				;;
			esac
			case $last in
			*"status=500"* | *"status = 500"*) ;;
			*) diag "$fmt: $f ends with '$last', not with its failure"; return 1 ;;
			esac
		done <"$T/saver.out"
	done
}

test_instances_cli() {
	local pipe
	export FDR_SESSION=inst
	demo_session || return 1
	must "$FDR" mkdir instances/web instances/db || return 1
	fdr mkdir instances/web
	expect_rc 1 || return 1
	grep -qi 'exist' "$ERR" || { diag "mkdir twice: no EEXIST message"; show_io; return 1; }
	must "$FDR" disable 'demo:*' || return 1
	must "$FDR" enable -i web demo:request || return 1
	must "$FDR" enable -i db demo:db_query || return 1
	must "$FDR" write trace '' || return 1
	must "$DEMO" -n 50 -r 0 -q -s 3 || return 1
	must "$FDR" show -i web || return 1
	if [ "$(events "$OUT" | grep -vc '^request: ')" -ne 0 ] || [ "$(requests "$OUT" | wc -l)" -ne 50 ]; then
		diag "instance web: expected the 50 requests only"
		show_io
		return 1
	fi
	must "$FDR" show -i db || return 1
	if [ "$(events "$OUT" | grep -vc '^db_query: ')" -ne 0 ] || [ "$(events "$OUT" | wc -l)" -eq 0 ]; then
		diag "instance db: expected db_query events only"
		show_io
		return 1
	fi
	must "$FDR" show || return 1
	if [ "$(events "$OUT" | wc -l)" -ne 0 ]; then
		diag "the top instance recorded events it has not enabled"
		show_io
		return 1
	fi
	# rmdir refused while a reader holds the instance, accepted after it ended
	"$FDR" pipe -i web >"$T/pipe.out" 2>"$T/pipe.err" &
	pipe=$!
	bg_add "$pipe"
	sleep 0.3
	fdr rmdir instances/web
	if [ "$rc" -eq 0 ] || ! grep -qi 'busy' "$ERR"; then
		diag "rmdir while 'fdr pipe -i web' runs: exit $rc, expected a busy error"
		show_io
		return 1
	fi
	kill -INT "$pipe"
	wait_gone "$pipe" 5
	must "$FDR" rmdir instances/web || return 1
	fdr rmdir instances/web
	expect_rc 1 || return 1
	fdr mkdir instances/db/below
	[ "$rc" -ne 0 ] || { diag "mkdir below an instance succeeded"; return 1; }
	must "$FDR" rmdir instances/db || return 1
}

test_session_on_disk() {
	local d=$T/disk/s c=$T/copy/s
	mkdir -p "$T/disk" "$T/copy"
	chmod 700 "$T/disk" "$T/copy"
	must "$FDR" -d "$d" start -e 'demo:*' || return 1
	must "$FDR" -d "$d" snapshot alloc || return 1
	FDR_DIR=$d run "$DEMO" -n 100 -r 0 -s 5
	expect_rc 0 || return 1
	must "$FDR" -d "$d" snapshot take || return 1
	FDR_DIR=$d run "$DEMO" -n 30 -r 0 -q -s 6
	expect_rc 0 || return 1
	# every process is gone: read it back, then from a copy elsewhere
	must "$FDR" -d "$d" snapshot show || return 1
	cp "$OUT" "$T/disk.snap"
	must "$FDR" -d "$d" show || return 1
	cp "$OUT" "$T/disk.live"
	if [ "$(requests "$T/disk.snap" | wc -l)" -ne 100 ] || [ "$(requests "$T/disk.live" | wc -l)" -ne 30 ]; then
		diag "on disk: $(requests "$T/disk.snap" | wc -l) requests in the snapshot (expected 100), $(requests "$T/disk.live" | wc -l) live (expected 30)"
		return 1
	fi
	cp -a "$d" "$c" || return 1
	must "$FDR" -d "$c" snapshot show || return 1
	if ! diff -q <(events "$T/disk.snap") <(events "$OUT") >/dev/null; then
		diag "the copy's snapshot differs from the original's"
		return 1
	fi
	must "$FDR" -d "$c" show || return 1
	if ! diff -q <(events "$T/disk.live") <(events "$OUT") >/dev/null; then
		diag "the copy's trace differs from the original's"
		return 1
	fi
	# and the copy goes on tracing
	must "$FDR" -d "$c" write trace_marker 'still tracing' || return 1
	must "$FDR" -d "$c" show || return 1
	grep -q 'tracing_mark_write: still tracing' "$OUT" || {
		diag "a marker written into the copy is not there"
		show_io
		return 1
	}
}

cases="
test_trigger_snapshot_on_500
test_save_ten_snapshots
test_save_formats
test_instances_cli
test_session_on_disk
"

cd "$T" || exit 1
run_cases "$cases"
tap_summary
