#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""pftrace-check.py - read what `fdr export --format perfetto-proto` wrote.

  pftrace-check.py timeline FILE TID

decodes FILE (a perfetto.protos.Trace) with a wire-format decoder of its own
(no protobuf package needed) and prints, in time order, what concerns thread
TID, one line each:

  <ns> event <system>:<name> <arg>=<value>...      a TrackEvent on TID's track
  <ns> switch-away cpu=<cpu> state=<prev_state>     sched_switch, prev_pid == TID
  <ns> switch-in cpu=<cpu>                          sched_switch, next_pid == TID
  <ns> wakeup cpu=<cpu> target_cpu=<n>              sched_wakeup/waking of TID

then the thread states Perfetto derives from them, as trace_processor's
thread_state table does: from a switch away, the state the kernel gave (S,
D, R+ ...) until a wakeup (then R) or a switch in (then Running):

  state <start ns> <end ns> <S|D|R|R+|Running>

Exits 1 if the file does not decode (a truncated field, a wrong wire type
where the schema has a message) or TID has no track descriptor.
"""
import sys


def varint(b, i):
    v = shift = 0
    while True:
        if i >= len(b):
            raise ValueError("truncated varint at %d" % i)
        c = b[i]
        i += 1
        v |= (c & 0x7F) << shift
        shift += 7
        if not c & 0x80:
            return v, i


def fields(b):
    """(field, wire type, value) of a message: ints for varints, bytes for LEN."""
    i, out = 0, []
    while i < len(b):
        key, i = varint(b, i)
        f, wt = key >> 3, key & 7
        if wt == 0:
            v, i = varint(b, i)
        elif wt == 1:
            v, i = int.from_bytes(b[i:i + 8], "little"), i + 8
        elif wt == 5:
            v, i = int.from_bytes(b[i:i + 4], "little"), i + 4
        elif wt == 2:
            n, i = varint(b, i)
            if i + n > len(b):
                raise ValueError("field %d: %d bytes past the end" % (f, n))
            v, i = b[i:i + n], i + n
        else:
            raise ValueError("wire type %d at %d" % (wt, i))
        out.append((f, wt, v))
    return out


def s64(v):
    return v - (1 << 64) if v >= 1 << 63 else v


def msg(fs, f, default=None):
    for k, wt, v in fs:
        if k == f:
            if wt != 2:
                raise ValueError("field %d: expected a message" % f)
            return fields(v)
    return default


def val(fs, f, default=None):
    for k, _, v in fs:
        if k == f:
            return v
    return default


STATES = {0: "R", 1: "S", 2: "D", 4: "T", 8: "t", 16: "X", 32: "Z", 64: "P", 128: "I"}


def state_name(v):
    v = s64(v)
    if v & 256 or v == 256:  # TASK_REPORT_MAX: preempted, runnable
        return "R+"
    return STATES.get(v & 0xFF, "S" if v & 1 else "D" if v & 2 else "?%d" % v)


def main():
    if len(sys.argv) != 4 or sys.argv[1] != "timeline":
        print(__doc__.strip(), file=sys.stderr)
        return 2
    data = open(sys.argv[2], "rb").read()
    tid = int(sys.argv[3])
    lines, uuid = [], None
    for f, wt, pkt in fields(data):
        if f != 1 or wt != 2:
            raise ValueError("expected Trace.packet (1), found field %d" % f)
        p = fields(pkt)
        td = msg(p, 60)
        if td is not None:
            th = msg(td, 4)
            if th is not None and s64(val(th, 2, 0)) == tid:
                uuid = val(td, 1)
        te = msg(p, 11)
        if te is not None and uuid is not None and val(te, 11) == uuid:
            args = []
            for k, _, a in te:
                if k != 4:
                    continue
                af = fields(a)
                name = val(af, 10, b"?").decode()
                for vf, v in ((2, None), (3, None), (4, None), (6, None), (7, None)):
                    if val(af, vf) is not None:
                        v = val(af, vf)
                        v = s64(v) if vf == 4 else v.decode() if vf == 6 else v
                        args.append("%s=%s" % (name, v))
            cat = val(te, 22, b"").decode()
            lines.append((val(p, 8, 0), 1, "event %s:%s %s" % (cat, val(te, 23, b"").decode(),
                                                               " ".join(args))))
        bundle = msg(p, 1)
        if bundle is not None:
            cpu = val(bundle, 1, 0)
            for k, _, e in bundle:
                if k != 2:
                    continue
                ef = fields(e)
                ts = val(ef, 1, 0)
                sw = msg(ef, 4)
                if sw is not None:
                    if s64(val(sw, 2, -1)) == tid:
                        lines.append((ts, 0, "switch-away cpu=%d state=%s" %
                                      (cpu, state_name(val(sw, 4, 0)))))
                    if s64(val(sw, 6, -1)) == tid:
                        lines.append((ts, 0, "switch-in cpu=%d" % cpu))
                for kind in (17, 20):
                    wk = msg(ef, kind)
                    if wk is not None and s64(val(wk, 2, -1)) == tid:
                        lines.append((ts, 0, "wakeup cpu=%d target_cpu=%d" %
                                      (cpu, s64(val(wk, 5, -1)))))
    if uuid is None:
        print("pftrace-check: no track descriptor for thread %d" % tid, file=sys.stderr)
        return 1
    lines.sort(key=lambda l: (l[0], l[1]))
    states, cur, since = [], None, None
    for ts, _, text in lines:
        print(ts, text)
        what = text.split()[0]
        new = None
        if what == "switch-away":
            new = text.split("state=")[1]
        elif what == "wakeup" and cur not in (None, "Running", "R", "R+"):
            new = "R"
        elif what == "switch-in":
            new = "Running"
        if new is not None and new != cur:
            if cur is not None:
                states.append((since, ts, cur))
            cur, since = new, ts
    for a, b, s in states:
        print("state %d %d %s" % (a, b, s))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except ValueError as e:
        print("pftrace-check: %s" % e, file=sys.stderr)
        sys.exit(1)
