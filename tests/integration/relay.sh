#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# relay.sh FDR - fdr snapshot save --relayd (issue 19) against a real
# lttng-relayd on 127.0.0.1 (free ports, its own output directory):
#   - two simulated hosts (two fdr sessions, FDR_HOSTNAME hostA and hostB) send
#     three snapshots each: six chunks, under OUT/HOST/SESSION-DATE/snapshot-N-*/,
#     one session directory per host, each chunk's babeltrace2 text equal, line
#     for line, to that of 'fdr export --format ctf --snapshot' of the same snapshot;
#   - the daemon killed while a snapshot is being sent: a clear error, the
#     snapshot kept as CTF in the local directory (equal to the export), the
#     daemon restarted, the next snapshot delivered, exit status 1 at the end;
#   - live: 'fdr relay' streams a session while markers are written (on CPU 0
#     only: the other CPUs are idle); 'babeltrace2 -i lttng-live' follows it,
#     shows the markers while the stream goes on (an idle CPU does not hold it
#     up), ends when it stops, and what it printed is the end of the babeltrace2
#     text of the session as the daemon stored it (a viewer starts at the
#     newest data when it attaches);
#   - the daemon killed under 'fdr relay', then restarted: it says so, reconnects
#     by itself into a new session directory where what follows is stored, and
#     exits 1 at the end (the stream had a gap);
#   - a daemon speaking another protocol major version is refused, saying so;
#   - a session linked to a kernel instance: each snapshot sent holds the
#     kernel's records too (root and the kernel's tracefs; else said);
#   - fdr record --relayd and fdr export --relayd: a recorded file and a
#     session's instance sent as one chunk each, equal to the CTF export; a
#     daemon that is not there: exit 1, the recording kept;
#   - usage errors: a bad URL, a bad host name, --format with --relayd, a bad
#     fdr relay -r priority.
# Skips (77) where lttng-relayd or babeltrace2 is not installed. Every relayd
# it starts is killed at exit.
set -u
# shellcheck source=../harness/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib.sh"

FDR=${1:?usage: relay.sh FDR}
abs_path FDR
suite_init relay shm

command -v lttng-relayd >/dev/null || skip "lttng-relayd is not installed (Debian lttng-tools)"
command -v babeltrace2 >/dev/null || skip "babeltrace2 is not installed"
command -v python3 >/dev/null || skip "python3 is not installed"
command -v taskset >/dev/null || skip "taskset is not installed (util-linux)"
export LTTNG_HOME=$T/lttng-home
mkdir -p -m 700 "$LTTNG_HOME"
RELAY_OUT=$T/relay-out
relayd_pid=

# free_ports N: N TCP ports free on 127.0.0.1 now, on one line
free_ports() {
	python3 - "$1" <<'EOF'
import socket, sys
socks = []
for _ in range(int(sys.argv[1])):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    socks.append(s)
print(" ".join(str(s.getsockname()[1]) for s in socks))
EOF
}

relayd_kill() {
	[ -n "$relayd_pid" ] || return 0
	kill -KILL "$relayd_pid" 2>/dev/null
	wait "$relayd_pid" 2>/dev/null
	relayd_pid=
}
at_exit relayd_kill
# test_kernel_linked's kernel instance goes with its session, whatever happens
klinked_destroy() {
	[ -e "$FDR_ROOT/klinked" ] && FDR_SESSION=klinked "$FDR" destroy >/dev/null 2>&1
	return 0
}
at_exit klinked_destroy

# relayd_start [quiet]: lttng-relayd on $CTRL/$DATA/$LIVE, output in $RELAY_OUT,
# up when its control port accepts a connection
relayd_start() {
	local k
	lttng-relayd -C "tcp://127.0.0.1:$CTRL" -D "tcp://127.0.0.1:$DATA" \
		-L "tcp://127.0.0.1:$LIVE" -o "$RELAY_OUT" >>"$T/relayd.log" 2>&1 &
	relayd_pid=$!
	bg_add "$relayd_pid"
	for ((k = 0; k < 100; k++)); do
		python3 -c "import socket; socket.create_connection(('127.0.0.1', $CTRL), 0.2).close()" \
			2>/dev/null && return 0
		kill -0 "$relayd_pid" 2>/dev/null || break
		sleep 0.05
	done
	[ -n "${1:-}" ] && return 1
	diag "lttng-relayd did not start"
	sed 's/^/#   relayd: /' "$T/relayd.log" | tail -20
	return 1
}

pick_ports() {
	read -r CTRL DATA LIVE FAKE < <(free_ports 4)
	URL=net://127.0.0.1:$CTRL:$DATA
}

# saver_start NAME HOST [DIR]: 'fdr snapshot save --relayd' of session NAME as
# host HOST in the background, once it says it runs; its pid in saver_pid
saver_start() {
	local k
	FDR_SESSION=$1 FDR_HOSTNAME=$2 "$FDR" snapshot save --relayd "$URL" "${3:-$T/keep-$1}" \
		>"$T/saver-$1.out" 2>"$T/saver-$1.err" &
	saver_pid=$!
	bg_add "$saver_pid"
	for ((k = 0; k < 100; k++)); do
		grep -q 'sending every snapshot' "$T/saver-$1.err" 2>/dev/null && return 0
		sleep 0.05
	done
	diag "the saver of $1 did not start"
	sed 's/^/#   saver: /' "$T/saver-$1.err"
	return 1
}

# saver_stop PID: SIGINT, wait (5 s at most); its exit status in rc
saver_stop() {
	local k
	kill -INT "$1" 2>/dev/null
	for ((k = 0; k < 100; k++)); do
		kill -0 "$1" 2>/dev/null || break
		sleep 0.05
	done
	kill -KILL "$1" 2>/dev/null
	wait "$1"
	rc=$?
}

# wait_lines FILE N: until FILE has N lines (5 s at most)
wait_lines() {
	local k
	for ((k = 0; k < 100; k++)); do
		[ "$(wc -l <"$1" 2>/dev/null || echo 0)" -ge "$2" ] && return 0
		sleep 0.05
	done
	return 1
}

# same_as_export NAME DIR WHAT: DIR's babeltrace2 text is that of
# 'fdr export --format ctf --snapshot' of session NAME now
same_as_export() {
	local exp=$T/exp-$RANDOM
	FDR_SESSION=$1 must "$FDR" export --format ctf --snapshot -o "$exp" || return 1
	babeltrace2 "$exp" >"$exp.txt" 2>"$exp.err" || {
		diag "babeltrace2 cannot read the export"
		sed 's/^/#   /' "$exp.err" | head
		return 1
	}
	babeltrace2 "$2" >"$exp.got" 2>"$exp.err" || {
		diag "babeltrace2 cannot read $3 ($2)"
		sed 's/^/#   /' "$exp.err" | head
		return 1
	}
	if [ ! -s "$exp.txt" ] || ! cmp -s "$exp.txt" "$exp.got"; then
		diag "$3 ($2) differs from the export of the same snapshot:"
		diff "$exp.txt" "$exp.got" | head -10 | sed 's/^/#   /'
		return 1
	fi
}

# mark NAME TEXT...: trace_marker records in session NAME
mark() {
	local s=$1 m
	shift
	for m in "$@"; do
		FDR_SESSION=$s must "$FDR" write trace_marker "$m" || return 1
	done
}

# live_start SESSION HOST NAME: 'fdr relay' of SESSION as HOST in the
# background (its pid in lp, output in $T/NAME.out and .err), waited for up
# to 5 s to say it is streaming
live_start() {
	local k
	FDR_SESSION=$1 FDR_HOSTNAME=$2 "$FDR" relay "$URL" --live-timer 100000 \
		>"$T/$3.out" 2>"$T/$3.err" &
	lp=$!
	bg_add "$lp"
	for ((k = 0; k < 100; k++)); do
		grep -q 'streaming to' "$T/$3.err" 2>/dev/null && break
		sleep 0.05
	done
}

test_setup() {
	local s k
	# a port free a moment ago may be taken since: new ones, a few times
	for ((k = 0; k < 4; k++)); do
		pick_ports
		relayd_start quiet && break
		relayd_kill
	done
	[ -n "$relayd_pid" ] || {
		diag "lttng-relayd did not start on 4 sets of free ports"
		sed 's/^/#   relayd: /' "$T/relayd.log" | tail -20
		return 1
	}
	for s in hA hB kill fake live live2; do
		FDR_SESSION=$s must "$FDR" start || return 1
	done
}

# Two hosts, three snapshots each, interleaved; each chunk checked as it lands.
test_two_hosts() {
	local k h s pa pb path
	saver_start hA hostA || return 1
	pa=$saver_pid
	saver_start hB hostB || return 1
	pb=$saver_pid
	for ((k = 1; k <= 3; k++)); do
		for h in A B; do
			s=h$h
			mark "$s" "host $h snapshot $k first" "host $h snapshot $k: a longer line, $((k * 1000))" || return 1
			FDR_SESSION=$s must "$FDR" snapshot take || return 1
			wait_lines "$T/saver-$s.out" "$k" || {
				diag "snapshot $k of host$h not sent"
				sed 's/^/#   saver: /' "$T/saver-$s.err"
				sed 's/^/#   relayd: /' "$T/relayd.log" | tail
				return 1
			}
			path=$(sed -n "${k}p" "$T/saver-$s.out")
			case $path in
			host$h/$s-[0-9]*-[0-9]*/snapshot-$k-[0-9]*-[0-9]*) ;;
			*)
				diag "chunk path '$path', expected host$h/$s-DATE/snapshot-$k-DATE"
				return 1
				;;
			esac
			[ -d "$RELAY_OUT/$path/fdr" ] || {
				diag "no directory $RELAY_OUT/$path/fdr"
				return 1
			}
			same_as_export "$s" "$RELAY_OUT/$path" "host$h's chunk $k" || return 1
		done
	done
	saver_stop "$pa"
	expect_rc 0 || return 1
	saver_stop "$pb"
	expect_rc 0 || return 1
	grep -q '3 snapshots sent, 0 not sent' "$T/saver-hA.err" || {
		diag "the saver of hA did not report 3 snapshots sent"
		sed 's/^/#   saver: /' "$T/saver-hA.err"
		return 1
	}
	for h in A B; do
		# one session directory per host, three chunks in it, nothing else
		[ "$(find "$RELAY_OUT/host$h" -mindepth 1 -maxdepth 1 | wc -l)" = 1 ] &&
			[ "$(find "$RELAY_OUT/host$h" -mindepth 2 -maxdepth 2 -name 'snapshot-*' | wc -l)" = 3 ] ||
			{
				diag "$RELAY_OUT/host$h holds:"
				find "$RELAY_OUT/host$h" | sed 's/^/#   /'
				return 1
			}
	done
}

# The daemon killed while a snapshot is on its way (stopped first, so the
# snapshot is sure to be in flight), then restarted: the next one goes through.
test_relayd_killed() {
	local p kept k
	saver_start kill hostK "$T/keep" || return 1
	p=$saver_pid
	mark kill "before the kill" || return 1
	kill -STOP "$relayd_pid"
	FDR_SESSION=kill must "$FDR" snapshot take || return 1
	sleep 0.3 # the saver connects (the kernel accepts for the stopped daemon) and waits
	relayd_kill
	# (20 s at most: on a loaded machine the saver's export of the snapshot waits for a
	# CPU; not 'kept in' alone: the saver's first line says where unsent ones are kept in)
	for ((k = 0; k < 400; k++)); do
		grep -q 'snapshot 1 kept in' "$T/saver-kill.err" && break
		sleep 0.05
	done
	grep -Eq "cannot send snapshot 1: lttng-relayd at 127.0.0.1:$CTRL: .*(reset|refused|Broken pipe)" \
		"$T/saver-kill.err" &&
		grep -q "snapshot 1 kept in $T/keep/snapshot-1-" "$T/saver-kill.err" || {
		diag "no clear error and local copy after the daemon was killed (expected"
		diag "'cannot send snapshot 1: lttng-relayd at 127.0.0.1:$CTRL: ...reset...'"
		diag "and 'snapshot 1 kept in $T/keep/snapshot-1-...'):"
		sed 's/^/#   saver: /' "$T/saver-kill.err"
		return 1
	}
	kept=$(find "$T/keep" -mindepth 1 -maxdepth 1 -name 'snapshot-1-*.ctf')
	[ -n "$kept" ] || {
		diag "nothing kept in $T/keep"
		return 1
	}
	same_as_export kill "$kept" "the snapshot kept locally" || return 1
	relayd_start || return 1
	mark kill "after the restart" || return 1
	FDR_SESSION=kill must "$FDR" snapshot take || return 1
	wait_lines "$T/saver-kill.out" 1 || {
		diag "the snapshot after the restart was not sent"
		sed 's/^/#   saver: /' "$T/saver-kill.err"
		return 1
	}
	same_as_export kill "$RELAY_OUT/$(head -1 "$T/saver-kill.out")" "the chunk after the restart" ||
		return 1
	saver_stop "$p"
	expect_rc 1 || return 1
	grep -q "1 snapshot sent, 1 not sent (1 kept in $T/keep)" "$T/saver-kill.err" || {
		diag "the saver's summary does not count the snapshot kept"
		sed 's/^/#   saver: /' "$T/saver-kill.err"
		return 1
	}
}

# Live: the stream started, a viewer attached, markers on CPU 0, the stream stopped.
test_live() {
	local bt lp k n
	live_start live hostL relay
	# (babeltrace2 -i lttng-live ends when the session does, or is not there yet)
	timeout 30 babeltrace2 -i lttng-live "net://127.0.0.1:$LIVE/host/hostL/live" \
		>"$T/live.txt" 2>"$T/live.err" &
	bt=$!
	bg_add "$bt"
	# until the viewer shows a marker, with the stream going on: it is attached
	# and the idle CPUs do not hold it up
	for ((k = 0; k < 100; k++)); do
		taskset -c 0 "$FDR" -s live write trace_marker "warm-up $k" >/dev/null 2>&1
		grep -q 'warm-up' "$T/live.txt" && break
		sleep 0.1
	done
	grep -q 'warm-up' "$T/live.txt" || {
		diag "babeltrace2 -i lttng-live showed nothing in 10 s"
		sed 's/^/#   relay: /' "$T/relay.err"
		grep -v 'Cannot deterministically' "$T/live.err" | head | sed 's/^/#   bt: /'
		return 1
	}
	for ((k = 1; k <= 5; k++)); do
		taskset -c 0 "$FDR" -s live write trace_marker "live $k" >/dev/null || return 1
		sleep 0.05
	done
	for ((k = 0; k < 40; k++)); do
		grep -q 'live 5' "$T/live.txt" && break
		sleep 0.05
	done
	saver_stop "$lp"
	if [ "$rc" -ne 0 ]; then
		diag "fdr relay exited with $rc"
		sed 's/^/#   relay: /' "$T/relay.err"
		return 1
	fi
	for ((k = 0; k < 100; k++)); do
		kill -0 "$bt" 2>/dev/null || break
		sleep 0.05
	done
	if kill -0 "$bt" 2>/dev/null; then
		diag "babeltrace2 -i lttng-live did not end with the stream"
		return 1
	fi
	wait "$bt"
	rc=$?
	[ "$rc" = 0 ] || {
		diag "babeltrace2 -i lttng-live exited with $rc"
		grep -v 'Cannot deterministically' "$T/live.err" | head | sed 's/^/#   bt: /'
		return 1
	}
	babeltrace2 "$RELAY_OUT/$(head -1 "$T/relay.out")" >"$T/live-disk.txt" 2>"$T/live-disk.err" || {
		diag "babeltrace2 cannot read the stored stream $(head -1 "$T/relay.out")"
		head "$T/live-disk.err" | sed 's/^/#   /'
		return 1
	}
	# the same lines but for the time since the previous line ("+?.?" on a first)
	n=$(wc -l <"$T/live.txt")
	if [ "$(grep -c 'live [1-5]' "$T/live.txt")" != 5 ] ||
		! diff <(tail -n "$n" "$T/live-disk.txt" | sed 's/^\(\[[^]]*\]\) ([^)]*)/\1/') \
			<(sed 's/^\(\[[^]]*\]\) ([^)]*)/\1/' "$T/live.txt") >"$T/live.diff"; then
		diag "the live text is not the end of the stored one:"
		head "$T/live.diff" | sed 's/^/#   /'
		return 1
	fi
	grep -q "events sent, 0 lost" "$T/relay.err" || {
		diag "fdr relay's summary:"
		sed 's/^/#   relay: /' "$T/relay.err"
		return 1
	}
}

# Live, the daemon killed and restarted: fdr relay reconnects by itself.
test_live_reconnect() {
	local lp k first
	live_start live2 hostR relay2
	mark live2 "before the kill" || return 1
	sleep 0.3
	first=$(find "$RELAY_OUT/hostR" -mindepth 1 -maxdepth 1 -type d)
	relayd_kill
	for ((k = 0; k < 100; k++)); do
		grep -q 'reconnecting every second' "$T/relay2.err" && break
		sleep 0.05
	done
	grep -Eq "fdr relay: lttng-relayd at 127.0.0.1:$CTRL: .*; reconnecting every second" \
		"$T/relay2.err" || {
		diag "no clear error when the daemon went away:"
		sed 's/^/#   relay: /' "$T/relay2.err"
		return 1
	}
	relayd_start || return 1
	for ((k = 0; k < 100; k++)); do
		grep -q 'reconnected' "$T/relay2.err" && break
		sleep 0.05
	done
	grep -q "reconnected to 127.0.0.1:$CTRL: a new session directory" "$T/relay2.err" || {
		diag "fdr relay did not reconnect:"
		sed 's/^/#   relay: /' "$T/relay2.err"
		return 1
	}
	mark live2 "after the restart" || return 1
	sleep 0.3
	saver_stop "$lp"
	expect_rc 1 || return 1
	[ -s "$T/relay2.out" ] && [ "$RELAY_OUT/$(cat "$T/relay2.out")" != "$first" ] || {
		diag "the new stream's directory ($(cat "$T/relay2.out")) is not a new one ($first)"
		return 1
	}
	babeltrace2 "$RELAY_OUT/$(cat "$T/relay2.out")" >"$T/relay2.txt" 2>&1 &&
		grep -q 'after the restart' "$T/relay2.txt" &&
		babeltrace2 "$first" 2>&1 | grep -q 'before the kill' || {
		diag "the stream before the kill and the one after are not where they should be:"
		sed 's/^/#   /' "$T/relay2.txt" | head -5
		return 1
	}
}

# A daemon answering the version command with major 3: refused, said so.
test_incompatible() {
	local fake p k
	python3 - "$FAKE" >"$T/fake.log" 2>&1 <<'EOF' &
import socket, struct, sys
srv = socket.socket()
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("127.0.0.1", int(sys.argv[1])))
srv.listen(4)
srv.settimeout(20)
print("listening", flush=True)
c, _ = srv.accept()
hdr = b""
while len(hdr) < 32:
    hdr += c.recv(32 - len(hdr))
_, size, cmd, _ = struct.unpack(">QQII", hdr[:24])
major, minor = struct.unpack(">II", hdr[24:32])
print("cmd", cmd, "size", size, "version", major, minor, flush=True)
c.sendall(struct.pack(">II", 3, 0))
c.close()
EOF
	fake=$!
	bg_add "$fake"
	for ((k = 0; k < 100; k++)); do
		grep -q listening "$T/fake.log" 2>/dev/null && break
		sleep 0.05
	done
	URL=net://127.0.0.1:$FAKE saver_start fake hostF || return 1
	p=$saver_pid
	FDR_SESSION=fake must "$FDR" snapshot take || return 1
	for ((k = 0; k < 100; k++)); do
		grep -q 'kept in' "$T/saver-fake.err" && break
		sleep 0.05
	done
	saver_stop "$p"
	if [ "$rc" -ne 1 ]; then
		diag "the saver exited with $rc, expected 1"
		sed 's/^/#   saver: /' "$T/saver-fake.err"
		return 1
	fi
	grep -q "the daemon speaks relay protocol 3.0; fdr needs 2.11 or later of major 2" \
		"$T/saver-fake.err" || {
		diag "no clear refusal of the incompatible daemon:"
		sed 's/^/#   saver: /' "$T/saver-fake.err"
		return 1
	}
	grep -q "cmd 5 size 8 version 2 13" "$T/fake.log" || {
		diag "the version command was not as the protocol says:"
		sed 's/^/#   fake: /' "$T/fake.log"
		return 1
	}
}

# fdr record --relayd: the finished trace.dat sent as one chunk, under
# HOST/FILENAME-DATE/export-DATE/, equal in babeltrace2 to 'fdr export --format
# ctf' of the file, which stays; fdr export --relayd of a session's instance
# lands under the session's name. A daemon that is not there: exit 1, said,
# the file kept.
test_export_relayd() {
	local got d
	# the daemon of the cases before (a failed one may have left it down)
	{ [ -n "$relayd_pid" ] && kill -0 "$relayd_pid" 2>/dev/null; } || relayd_start || return 1
	FDR_SESSION=rec must "$FDR" record -o "$T/rec.dat" --relayd "$URL" --hostname hostR -- \
		"$FDR" write trace_marker "recorded for the relay" || return 1
	got=$(tail -1 "$OUT")
	case $got in
	hostR/rec-*/export-*) ;;
	*) diag "fdr record --relayd printed '$got', expected hostR/rec-DATE/export-DATE"; show_io; return 1 ;;
	esac
	d=$RELAY_OUT/$got
	[ -d "$d" ] || { diag "$d is not on the daemon's side"; return 1; }
	must "$FDR" export --format ctf -o "$T/rec-ctf" "$T/rec.dat" || return 1
	babeltrace2 "$T/rec-ctf" >"$T/rec-ctf.txt" 2>&1 && babeltrace2 "$d" >"$T/rec-relay.txt" 2>&1 &&
		grep -q 'recorded for the relay' "$T/rec-relay.txt" && cmp -s "$T/rec-ctf.txt" "$T/rec-relay.txt" ||
		{ diag "the chunk differs from the export of the file"; diff "$T/rec-ctf.txt" "$T/rec-relay.txt" | head -5 | sed 's/^/#   /'; return 1; }
	mark hA "exported to the relay" || return 1
	FDR_SESSION=hA must "$FDR" export --relayd "$URL" --hostname hostE || return 1
	case $(cat "$OUT") in
	hostE/hA-*/export-*) ;;
	*) diag "fdr export --relayd printed '$(cat "$OUT")', expected hostE/hA-DATE/export-DATE"; return 1 ;;
	esac
	babeltrace2 "$RELAY_OUT/$(cat "$OUT")" 2>&1 | grep -q 'exported to the relay' ||
		{ diag "the marker is not in the exported chunk"; return 1; }
	# no daemon on $FAKE: a clear error, exit 1; fdr record keeps its file
	fdr export --relayd "net://127.0.0.1:$FAKE" "$T/rec.dat"
	expect_rc 1 && expect_err "cannot send to the relay daemon 127.0.0.1" || return 1
	rm -f "$T/rec2.dat"
	FDR_SESSION=rec run "$FDR" record -o "$T/rec2.dat" --relayd "net://127.0.0.1:$FAKE" -- true
	expect_rc 1 && expect_err "rec2.dat is kept on disk" || return 1
	[ -s "$T/rec2.dat" ] || { diag "the recording is gone"; return 1; }
	fdr export --relayd "$URL" --format ctf "$T/rec.dat"
	expect_rc 2 && expect_err 'expected no --format or -o with --relayd' || return 1
}

# A session linked to a kernel instance (fdr start -k; needs root and the
# kernel's tracefs, else not checked, said): each snapshot sent holds the
# kernel's records too (a second stream class), the kernel instance is started
# again after its freeze, and fdr destroy removes it.
test_kernel_linked() {
	local tracefs inst p
	tracefs=$(awk '$3 == "tracefs" { print $2; exit }' /proc/mounts)
	if [ "$(id -u)" != 0 ] || [ -z "$tracefs" ] || [ ! -w "$tracefs/instances" ]; then
		diag "not checked: the kernel's tracefs is not usable here (root and a tracefs mount)"
		return 0
	fi
	export FDR_KERNEL_REGISTRY=$T/kregistry
	FDR_SESSION=klinked must "$FDR" start -k sched:sched_switch,sched:sched_wakeup || return 1
	inst=$(sed -n 's/^instance //p' "$FDR_ROOT/klinked/kernel")
	saver_start klinked hostK2 || return 1
	p=$saver_pid
	grep -q "with kernel instance $inst" "$T/saver-klinked.err" || { diag "the saver does not name the kernel instance"; return 1; }
	mark klinked "with the kernel" || return 1
	sleep 0.2 # the kernel records some scheduling
	FDR_SESSION=klinked must "$FDR" snapshot take || return 1
	wait_lines "$T/saver-klinked.out" 1 || { diag "the snapshot was not sent"; sed 's/^/#   saver: /' "$T/saver-klinked.err"; return 1; }
	saver_stop "$p"
	babeltrace2 "$RELAY_OUT/$(head -1 "$T/saver-klinked.out")" >"$T/klinked.txt" 2>/dev/null
	grep -q 'with the kernel' "$T/klinked.txt" && grep -q 'sched:sched_switch' "$T/klinked.txt" ||
		{ diag "the chunk lacks fdr's marker or the kernel's sched_switch"; head -5 "$T/klinked.txt" | sed 's/^/#   /'; return 1; }
	grep -q "kernel instance $inst stopped [0-9.]* us after fdr's snapshot" "$T/saver-klinked.err" ||
		{ diag "no freeze line"; sed 's/^/#   saver: /' "$T/saver-klinked.err"; return 1; }
	[ "$(cat "$tracefs/instances/$inst/tracing_on")" = 1 ] || { diag "the kernel instance was not started again"; return 1; }
	FDR_SESSION=klinked must "$FDR" destroy || return 1
	[ ! -e "$tracefs/instances/$inst" ] || { diag "$inst is left"; return 1; }
}

test_usage() {
	FDR_SESSION=kill fdr snapshot save --relayd tcp://127.0.0.1
	expect_rc 2 && expect_err 'expected net://HOST\[:CONTROL_PORT\[:DATA_PORT\]\]' || return 1
	FDR_SESSION=kill fdr snapshot save --relayd net://127.0.0.1:70000
	expect_rc 2 || return 1
	FDR_SESSION=kill FDR_HOSTNAME=../x fdr snapshot save --relayd "$URL"
	expect_rc 2 && expect_err "expected a host name \(FDR_HOSTNAME\)" || return 1
	FDR_SESSION=kill fdr snapshot save --relayd "$URL" --format dat
	expect_rc 2 && expect_err 'expected no --format with --relayd' || return 1
	FDR_SESSION=kill fdr snapshot take --relayd "$URL"
	expect_rc 2 || return 1
	FDR_SESSION=live fdr relay "$URL" -r 100
	expect_rc 2 && expect_err 'expected a SCHED_FIFO priority from 1 to 99' || return 1
}

run_cases "test_setup test_two_hosts test_live test_live_reconnect test_relayd_killed test_incompatible test_export_relayd test_kernel_linked test_usage" test_setup
tap_summary
