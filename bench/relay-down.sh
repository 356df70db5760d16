#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# relay-down.sh BUILD_DIR [MS] - relay_down_rate: the traced program's events/s
# while `fdr snapshot save --relayd` cannot reach its relay daemon, against the
# same program with no saver (issue 19: only the fdr tool talks to the
# network, so a daemon that is gone or hung must not slow the program).
#
# One writer (fdr-bench rate MS, bench:int3 on CPU 0 at full speed, default
# 1000 ms) in a session of 4 MiB per CPU with snapshot buffers, while a loop
# takes a snapshot (`fdr snapshot`) every 100 ms, in three set-ups run
# alternating, BENCH_RUNS (default 5) times each:
#   none     no saver: the snapshots are taken and left there
#   dead     a saver whose daemon is not there (nothing listens on its port):
#            each snapshot is refused a connection and kept as CTF on disk
#   stopped  a saver whose lttng-relayd is stopped (SIGSTOP): connections are
#            accepted by the kernel and nothing answers, so the saver waits out
#            its 10 s timeout on the first snapshot and keeps it
# The figures are medians of the writer's events/s; the ratios dead/none and
# stopped/none say how much the program lost (1.00: nothing).
#
#   METRIC relay_down_rate none=X dead=Y stopped=Z dead_ratio=Y/X stopped_ratio=Z/X
#
# Needs fdr-bench (-DFDR_BUILD_BENCH=ON); lttng-relayd and python3 for "stopped"
# (without them that set-up is left out: stopped=- ). Prints
# "METRIC relay_down_rate skipped: REASON" when it cannot run.
set -eu
B=${1:?usage: relay-down.sh BUILD_DIR [MS]}
MS=${2:-1000}
RUNS=${BENCH_RUNS:-5}
FDR=$B/cli/fdr
BENCH=$B/bench/fdr-bench
skip() {
	echo "METRIC relay_down_rate skipped: $*"
	exit 0
}
[ -x "$BENCH" ] || skip "$BENCH not built (configure with -DFDR_BUILD_BENCH=ON)"
[ -x "$FDR" ] || skip "$FDR not built"
T=$(mktemp -d "${TMPDIR:-/tmp}/fdr-relaydown.XXXXXX")
export FDR_ROOT=$T/root
mkdir -m 700 "$FDR_ROOT"
PIDS=()
RELAYD=
cleanup() {
	local p
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || :; done
	if [ -n "$RELAYD" ]; then
		kill -CONT "$RELAYD" 2>/dev/null || :
		kill "$RELAYD" 2>/dev/null || :
	fi
	wait 2>/dev/null || :
	rm -rf "$T"
}
trap cleanup EXIT

# free ports: "CTRL DATA LIVE"
ports() {
	python3 -c 'import socket
s = [socket.socket() for _ in range(3)]
for x in s: x.bind(("127.0.0.1", 0))
print(" ".join(str(x.getsockname()[1]) for x in s))'
}

command -v python3 >/dev/null || skip "python3 (free ports) is not installed"
read -r DEAD_CTRL DEAD_DATA _ <<<"$(ports)"
# a stopped daemon: started, then SIGSTOPped (its listening sockets stay open)
if command -v lttng-relayd >/dev/null; then
	read -r S_CTRL S_DATA S_LIVE <<<"$(ports)"
	mkdir -p "$T/relay"
	lttng-relayd -C "tcp://127.0.0.1:$S_CTRL" -D "tcp://127.0.0.1:$S_DATA" \
		-L "tcp://127.0.0.1:$S_LIVE" -o "$T/relay" >"$T/relayd.log" 2>&1 &
	RELAYD=$!
	for ((k = 0; k < 100; k++)); do
		python3 -c "import socket; socket.create_connection(('127.0.0.1', $S_CTRL), 0.2).close()" \
			2>/dev/null && break
		sleep 0.05
	done
	if kill -0 "$RELAYD" 2>/dev/null; then
		kill -STOP "$RELAYD"
	else
		RELAYD=
	fi
fi

# try SETUP: one writer run; prints its events/s
seq=0
try() {
	local sess saver= loop w
	seq=$((seq + 1))
	sess=down-$seq
	"$FDR" -s "$sess" start -b 4096 -e bench:int3 >/dev/null 2>&1 &&
		"$FDR" -s "$sess" snapshot alloc >/dev/null 2>&1 || {
		echo "# cannot set up session $sess" >&2
		return 1
	}
	case $1 in
	dead)
		"$FDR" -s "$sess" snapshot save --relayd "net://127.0.0.1:$DEAD_CTRL:$DEAD_DATA" \
			"$T/keep-$seq" >/dev/null 2>"$T/saver.err" &
		saver=$!
		;;
	stopped)
		"$FDR" -s "$sess" snapshot save --relayd "net://127.0.0.1:$S_CTRL:$S_DATA" \
			"$T/keep-$seq" >/dev/null 2>"$T/saver.err" &
		saver=$!
		;;
	esac
	if [ -n "$saver" ]; then
		PIDS+=("$saver")
		for ((k = 0; k < 100; k++)); do
			grep -q 'sending every snapshot' "$T/saver.err" 2>/dev/null && break
			sleep 0.05
		done
	fi
	(while :; do
		"$FDR" -s "$sess" snapshot >/dev/null 2>&1
		sleep 0.1
	done) &
	loop=$!
	PIDS+=("$loop")
	w=$(FDR_SESSION=$sess "$BENCH" rate "$MS" 2>"$T/bench.err") || {
		sed 's/^/# /' "$T/bench.err" >&2
		w=
	}
	kill "$loop" 2>/dev/null || :
	wait "$loop" 2>/dev/null || :
	if [ -n "$saver" ]; then
		kill -INT "$saver" 2>/dev/null || :
		wait "$saver" 2>/dev/null || :
		# the saver tried, failed and kept (stopped: once its 10 s are out)
		grep -q 'snapshot [0-9]* kept in' "$T/saver.err" || {
			echo "# the $1 saver kept no snapshot:" >&2
			sed 's/^/#   /' "$T/saver.err" >&2
			w=
		}
	fi
	"$FDR" -s "$sess" destroy >/dev/null 2>&1 || :
	rm -rf "$T/keep-$seq"
	[ -n "$w" ] || return 1
	echo "${w#* }"
}

median() {
	sort -g | awk '{ v[NR] = $1 } END { print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

SETUPS="none dead"
[ -n "$RELAYD" ] && SETUPS="$SETUPS stopped"
declare -A R
for r in $(seq "$RUNS"); do
	for s in $SETUPS; do
		v=$(try "$s") || skip "the $s run failed"
		R[$s]="${R[$s]:-} $v"
	done
done
echo "# load: $(uptime)" >&2
for s in $SETUPS; do
	echo "# $s (events/s):${R[$s]}" >&2
done
none=$(echo "${R[none]}" | tr ' ' '\n' | grep . | median)
dead=$(echo "${R[dead]}" | tr ' ' '\n' | grep . | median)
stopped=-
[ -n "$RELAYD" ] && stopped=$(echo "${R[stopped]}" | tr ' ' '\n' | grep . | median)
awk -v n="$none" -v d="$dead" -v s="$stopped" 'BEGIN {
	printf "METRIC relay_down_rate none=%.3f dead=%.3f stopped=%s dead_ratio=%.2f stopped_ratio=%s\n",
		n / 1e6, d / 1e6, s == "-" ? "-" : sprintf("%.3f", s / 1e6), d / n,
		s == "-" ? "-" : sprintf("%.2f", s / n) }'
