#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# make-tracedat.sh OUT VERSION [trace-cmd record args...]
#
# How the tracedat-*.dat fixtures were made: a real kernel trace recorded by
# Debian 12's trace-cmd (3.1.6) into a private instance, with a short workload
# (markers and a few sleep processes), then `trace-cmd report` of it kept next
# to it. Run as root, inside a private mount namespace:
#
#   unshare -m sh tests/data/make-tracedat.sh tests/data/tracedat-v7.dat 7 --compression none \
#       -e sched:sched_switch -f 'prev_comm == "sleep" || next_comm == "sleep"' ...
#
# Some sandboxes refuse writes to ftrace_enabled and to the function-tracer files,
# and trace-cmd 3.1.6 crashes on that; those files are bind-mounted over with
# scratch files, in the private namespace only. /proc/kallsyms is replaced by a
# two-line file to keep the fixture small. The top-level tracing settings are not
# touched; the instance is removed at the end.
set -e
OUT=$1
V=$2
shift 2
I=fdrfixture_$$
T=/sys/kernel/tracing/instances/$I
S=$(mktemp -d)
trap 'rmdir $T 2>/dev/null; rm -rf $S' EXIT
echo 1 >$S/ftrace_enabled
printf 'ffffffff81000000 T _stext\nffffffff81000100 T fdr_fixture_sym\n' >$S/kallsyms
mkdir $T
for f in set_ftrace_pid set_ftrace_notrace_pid set_ftrace_filter set_ftrace_notrace \
	set_graph_function set_graph_notrace; do
	if [ -e $T/$f ]; then
		: >$S/$f
		mount --bind $S/$f $T/$f
	fi
done
mount --bind $S/ftrace_enabled /proc/sys/kernel/ftrace_enabled
mount --bind $S/kallsyms /proc/kallsyms
trace-cmd record -B $I "$@" --file-version $V -o "$OUT" >$S/log 2>&1 &
P=$!
sleep 0.5
echo "hello-marker from fdr fixture" >$T/trace_marker
for i in 1 2 3; do sleep 0.01; done
echo "second marker" >$T/trace_marker
sleep 0.2
kill -INT $P
wait $P || { cat $S/log; exit 1; }
for f in $T/set_*; do umount $f 2>/dev/null || true; done
