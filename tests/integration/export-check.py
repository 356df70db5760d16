#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""export-check.py - compare what `fdr export` wrote with what `fdr show` prints.

  export-check.py ctf FDR SHOW BT2_OUT CTF_DIR
      BT2_OUT is `babeltrace2 --no-delta --clock-seconds CTF_DIR`.
  export-check.py perfetto FDR SHOW JSON

Both sides are brought to one line per record,
    "<ts in us> <comm>-<pid> [<cpu>] <name>: <body as fdr show prints it>"
sorted, and compared. The body is rebuilt from the exported fields with the
event's format file (read through FDR: field names, custom print formats), so
every field of every record is checked, names included (CTF names through the
documented mangling). Prints the first differences; exits 1 on any.
"""
import json
import re
import subprocess
import sys
import time


def fdr_cat(fdr, path):
    return subprocess.run([fdr, "cat", path], check=True, capture_output=True).stdout


def fdr_ls(fdr, path):
    out = subprocess.run([fdr, "ls", path], check=True, capture_output=True).stdout
    return [l.rstrip("/") for l in out.decode("utf-8", "surrogateescape").splitlines() if l]


def parse_format(text):
    """(field names, field types, print format, print args) of a format file."""
    names, types, fmt, args = [], [], None, []
    for line in text.decode("utf-8", "surrogateescape").splitlines():
        m = re.match(r"\tfield:(.*);\toffset:\d+;\tsize:\d+;\tsigned:\d;", line)
        if m:
            decl = re.sub(r"\[\d*\]$", "", m.group(1))
            ctype, _, name = decl.rpartition(" ")
            if not name.startswith("common_"):
                names.append(name)
                types.append(ctype)
        elif line.startswith("print fmt: "):
            p = line[len("print fmt: "):]
            end = p.rindex('"')
            fmt = re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t"}.get(m.group(1), m.group(1)),
                         p[1:end])
            args = [a.strip() for a in p[end + 1:].split(",") if a.strip()]
            args = [re.sub(r"^(__get_str\((.*)\)|REC->(.*))$", lambda m: m.group(2) or m.group(3), a)
                    for a in args]
    default = fmt is None or re.fullmatch(" ".join(re.escape(n) + "=%[a-z]+" for n in names), fmt)
    return {"names": names, "types": types, "fmt": None if default else fmt, "args": args}


def load_formats(fdr):
    formats = {}
    for system in fdr_ls(fdr, "events"):
        if system in ("enable", "header_page", "header_event"):
            continue
        for ev in fdr_ls(fdr, "events/" + system):
            if ev in ("enable", "filter"):
                continue
            formats[(system, ev)] = parse_format(fdr_cat(fdr, "events/%s/%s/format" % (system, ev)))
    return formats


def c_printf(fmt, values):
    """The subset of printf the custom print formats of the tests use."""
    out, i = [], 0
    for m in re.finditer(r"%%|%([-+ #0]*\d*(?:\.\d+)?)(?:hh|h|ll|l|z|j|t)?([diuxXcsp])|[^%]+", fmt):
        if m.group(0) == "%%":
            out.append("%")
        elif m.group(2):
            conv = m.group(2)
            v = values[i]
            i += 1
            if conv in "iu":
                conv = "d"
            out.append(("%" + m.group(1) + conv) % (int(v) if conv != "s" else v))
        else:
            out.append(m.group(0))
    return "".join(out)


def body(formats, system, name, fields):
    """fdr show's text for an event given its fields as {real name: text value}."""
    if system == "ftrace" and name == "print":
        text = fields["buf"]
        return "tracing_mark_write: " + (text[:-1] if text.endswith("\n") else text)
    f = formats[(system, name)]
    if f["fmt"] is not None:
        return name + ": " + c_printf(f["fmt"], [fields[a] for a in f["args"]])
    return name + ": " + " ".join("%s=%s" % (n, fields[n]) for n in f["names"])


def ctf_ident(name):
    return "_" + "".join(chr(b) if chr(b).isascii() and (chr(b).isalnum() or chr(b) == "_")
                         else "_" for b in name.encode("utf-8", "surrogateescape"))


def unique(m, taken):
    base, k = m, 2
    while m in taken:
        m = "%s_%d" % (base, k)
        k += 1
    return m


def ctf_names(f):
    """The names babeltrace2 shows (one leading '_' stripped) for the fields of f,
    and for the length fields of its byte arrays."""
    names, lengths = [], []
    for n in f["names"]:
        names.append(unique(ctf_ident(n) if n else "_field%d" % len(names), names))
    for n, t in zip(names, f["types"]):
        if t == "__data_loc unsigned char[]":
            lengths.append(unique("_%s_length" % n, names + lengths))
    return [n[1:] for n in names], [n[1:] for n in lengths]


# ---- fdr show --------------------------------------------------------------------

REC = re.compile(r"^ *(.*)-(\d+) +\[(\d{3})\] (.{5}) +(\d+)\.(\d{6}): (.*)$")


def parse_show(path):
    recs = []
    text = open(path, "rb").read().decode("utf-8", "replace")
    for line in text.split("\n")[:-1]:
        if line.startswith("#") and not recs:
            continue
        m = REC.match(line)
        if m:
            comm, pid, cpu, _, s, us, rest = m.groups()
            recs.append([int(s) * 1000000 + int(us), comm, int(pid), int(cpu), rest])
        elif recs:
            recs[-1][4] += "\n" + line  # a string field or marker holding a newline
        else:
            raise SystemExit("fdr show: unexpected line %r" % line)
    return recs


# ---- babeltrace2 -------------------------------------------------------------------

class Parser:
    """babeltrace2's text values: { a = 1, s = "x\\n", arr = [ [0] = 0x1 ] }"""

    def __init__(self, s):
        self.s, self.i = s, 0

    def ws(self):
        while self.i < len(self.s) and self.s[self.i] == " ":
            self.i += 1

    def expect(self, t):
        self.ws()
        if not self.s.startswith(t, self.i):
            raise ValueError("expected %r at %d in %r" % (t, self.i, self.s))
        self.i += len(t)

    def value(self):
        self.ws()
        c = self.s[self.i]
        if c == "{":
            self.i += 1
            d = {}
            self.ws()
            if self.s[self.i] == "}":
                self.i += 1
                return d
            while True:
                self.ws()
                j = self.s.index(" = ", self.i)
                key = self.s[self.i:j]
                self.i = j + 3
                d[key] = self.value()
                self.ws()
                if self.s[self.i] == "}":
                    self.i += 1
                    return d
                self.expect(",")
        if c == "[":
            self.i += 1
            items = []
            self.ws()
            if self.s[self.i] == "]":
                self.i += 1
                return items
            while True:
                self.expect("[")
                self.i = self.s.index("]", self.i) + 1
                self.expect("=")
                items.append(self.value())
                self.ws()
                if self.s[self.i] == "]":
                    self.i += 1
                    return items
                self.expect(",")
        if c == '"':
            self.i += 1
            out = []
            esc = {"n": "\n", "t": "\t", "r": "\r", "v": "\v", "f": "\f", "a": "\a",
                   "b": "\b", "0": "\0", "\\": "\\", '"': '"'}
            while self.s[self.i] != '"':
                ch = self.s[self.i]
                if ch == "\\":
                    n = self.s[self.i + 1]
                    if n == "x":
                        out.append(chr(int(self.s[self.i + 2:self.i + 4], 16)))
                        self.i += 4
                        continue
                    out.append(esc[n])
                    self.i += 2
                    continue
                out.append(ch)
                self.i += 1
            self.i += 1
            return ("str", "".join(out))
        m = re.compile(r"-?0x[0-9A-Fa-f]+|-?\d+").match(self.s, self.i)
        if not m:
            raise ValueError("bad value at %d in %r" % (self.i, self.s))
        self.i = m.end()
        return int(m.group(0), 0)


def text_of(v):
    if isinstance(v, tuple):
        return v[1]
    if isinstance(v, list):
        return "".join("%02x" % x for x in v)
    return str(v)


def check_ctf(fdr, show, bt2, ctfdir):
    formats = load_formats(fdr)
    meta = open(ctfdir + "/metadata").read()
    off_s = int(re.search(r"offset_s = (\d+);", meta).group(1))
    off = int(re.search(r"\toffset = (\d+);", meta).group(1))
    offset = off_s * 1000000000 + off
    # the clock must map to CLOCK_REALTIME: offset = realtime - monotonic now
    now = time.clock_gettime_ns(time.CLOCK_REALTIME) - time.clock_gettime_ns(time.CLOCK_MONOTONIC)
    if abs(now - offset) > 1000000000:
        return ["clock offset %d ns, expected about %d (realtime - monotonic)" % (offset, now)]
    got = []
    last = {}
    errors = []
    for line in open(bt2, "rb").read().decode("utf-8", "replace").split("\n")[:-1]:
        m = re.match(r"^\[(\d+)\.(\d{9})\] \S+ (.*?): (\{ cpu_id = .*)$", line)
        if not m:
            errors.append("babeltrace2: unexpected line %r" % line)
            continue
        ns = int(m.group(1)) * 1000000000 + int(m.group(2)) - offset
        system, _, name = m.group(3).partition(":")
        p = Parser(m.group(4))
        pctx = p.value()
        p.expect(",")
        ectx = p.value()
        p.expect(",")
        fields = p.value()
        cpu = pctx["cpu_id"]
        if ns < last.get(cpu, 0):
            errors.append("cpu %d: time goes backward at %r" % (cpu, line))
        last[cpu] = ns
        key = (system, name)
        if key not in formats:
            # mangled event names: find the one whose mangling matches
            cand = [k for k in formats if k[0] == system and
                    "".join("_" if (b < 0x20 or b > 0x7e or b in b'"\\') else chr(b)
                            for b in k[1].encode("utf-8", "surrogateescape")) == name]
            if not cand:
                errors.append("babeltrace2: no format for %s:%s" % (system, name))
                continue
            key = cand[0]
        f = formats[key]
        want, lengths = ctf_names(f)
        values = {}
        for real, mangled in zip(f["names"], want):
            if mangled not in fields:
                errors.append("%s: field %s shown as %s expected, got %s" %
                              (key, real, mangled, list(fields)))
                break
            v = fields[mangled]
            values[real] = text_of(v)
        else:
            if sorted(fields) != sorted(want + lengths):
                errors.append("%s: fields %s, expected %s" % (key, list(fields), want + lengths))
            head = "%d %s-%d [%03d] " % ((ns + 500) // 1000, text_of(ectx["procname"]),
                                         ectx["vtid"], cpu)
            # babeltrace2 2.0.x shows an empty `string` field with a stale value (fixed
            # upstream: review.lttng.org/c/babeltrace/+/4528): also accept it empty
            alts = [head + body(formats, key[0], key[1], values)]
            for n, t in zip(f["names"], f["types"]):
                if t == "__data_loc char[]" and values[n]:
                    alts.append(head + body(formats, key[0], key[1], dict(values, **{n: ""})))
            got.append(alts)
    want_recs = ["%d %s-%d [%03d] %s" % tuple(r) for r in parse_show(show)]
    return errors + compare(want_recs, got)


def compare(want, got):
    """want and got must hold the same records; show what only one side has.
    An entry of got may be a list: the record as exported, then readings of it
    that a known reader bug makes acceptable too."""
    errors = []
    if len(want) != len(got):
        errors.append("%d records in fdr show, %d exported" % (len(want), len(got)))
    pool = {}
    for w in want:
        pool[w] = pool.get(w, 0) + 1
    only_got, stale = [], 0
    # exact readings first, so a lenient one never takes another record's match
    for g in sorted(got, key=lambda g: isinstance(g, list) and pool.get(g[0], 0) == 0):
        alts = g if isinstance(g, list) else [g]
        for k, a in enumerate(alts):
            if pool.get(a, 0) > 0:
                pool[a] -= 1
                stale += k > 0
                break
        else:
            only_got.append(alts[0])
    if stale:
        print("# export-check: %d empty strings shown with a stale value by babeltrace2 "
              "(its 2.0.x bug)" % stale)
    only_want = [w for w, n in pool.items() for _ in range(n)]
    for w in only_want[:5]:
        errors.append("only in fdr show: %r" % w)
    for g in only_got[:5]:
        errors.append("only exported:    %r" % g)
    return errors


def check_perfetto(fdr, show, path):
    formats = load_formats(fdr)
    errors = []
    with open(path, "rb") as fh:
        doc = json.load(fh)
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        return ["no traceEvents list"]
    if doc.get("displayTimeUnit") != "ns":
        errors.append("displayTimeUnit is %r" % doc.get("displayTimeUnit"))
    meta = doc.get("metadata")
    if not isinstance(meta, dict) or meta.get("source") != "fdr":
        errors.append("metadata: %r" % meta)
    names = {}
    pids, tids = set(), set()
    tgid_of = {}
    for line in fdr_cat(fdr, "saved_tgids").splitlines():
        pid, tgid = line.split()
        tgid_of[int(pid)] = int(tgid)
    threaded = 0
    got = []
    for ev in doc["traceEvents"]:
        for k, t in (("name", str), ("ph", str), ("pid", int), ("tid", int)):
            if not isinstance(ev.get(k), t) or isinstance(ev.get(k), bool):
                errors.append("event %r: %s is not %s" % (ev, k, t.__name__))
        ph = ev.get("ph")
        if ph == "M":
            if ev["name"] not in ("process_name", "thread_name") or \
                    not isinstance(ev.get("args", {}).get("name"), str):
                errors.append("bad metadata event %r" % ev)
            names[(ev["name"], ev["pid"] if ev["name"] == "process_name" else ev["tid"])] = \
                ev["args"]["name"]
            if ev["name"] == "thread_name" and ev["pid"] != tgid_of.get(ev["tid"], ev["tid"]):
                errors.append("thread_name %r: pid is not the thread's tgid %r" %
                              (ev, tgid_of.get(ev["tid"])))
            continue
        if ph not in ("i", "B", "E"):
            errors.append("event %r: ph %r" % (ev, ph))
            continue
        if ph == "i" and ev.get("s") not in ("t", "g"):
            errors.append("instant %r: s %r" % (ev, ev.get("s")))
        ts = ev.get("ts")
        if not isinstance(ts, (int, float)) or isinstance(ts, bool) or ts < 0:
            errors.append("event %r: ts" % ev)
            continue
        if not isinstance(ev.get("cat"), str) or not isinstance(ev.get("args"), dict):
            errors.append("event %r: cat/args" % ev)
            continue
        for v in ev["args"].values():
            if isinstance(v, int) and not isinstance(v, bool) and abs(v) > 2 ** 53:
                errors.append("event %r: integer beyond 2^53 as a number" % ev)
        if ev["cat"] == "fdr" and ev["name"] == "lost events":
            continue
        pids.add(ev["pid"])
        tids.add(ev["tid"])
        if ev["pid"] != tgid_of.get(ev["tid"], ev["tid"]):
            errors.append("event %r: pid is not the tgid of thread %d (%r)" %
                          (ev, ev["tid"], tgid_of.get(ev["tid"])))
        threaded += ev["pid"] != ev["tid"]
        system, name = ev["cat"], ev["name"]
        if system == "ftrace" and "buf" in ev["args"]:
            name = "print"
        elif ph != "i":
            for sfx in (("_begin", "_entry") if ph == "B" else ("_end", "_exit")):
                if (system, name + sfx) in formats:
                    name += sfx
                    break
        if (system, name) not in formats:
            errors.append("event %r: no such event %s:%s" % (ev, system, name))
            continue
        f = formats[(system, name)]
        values = {}
        for n, t in zip(f["names"], f["types"]):
            v = ev["args"].get(n, "<missing>")
            if isinstance(v, bool):
                v = int(v)
            elif isinstance(v, str) and t == "unsigned long" and v.startswith("0x"):
                v = int(v, 16)
            values[n] = str(v)
        if system == "ftrace" and name == "print":
            values["buf"] = ev["args"]["buf"]
        ns = round(ts * 1000)
        got.append("%d %d %s" % ((ns + 500) // 1000, ev["tid"], body(formats, system, name, values)))
    for pid in pids:
        if ("process_name", pid) not in names:
            errors.append("process %d has no process_name" % pid)
    for tid in tids:
        if ("thread_name", tid) not in names:
            errors.append("thread %d has no thread_name" % tid)
    if ("gen", "worker") in formats and not threaded:
        errors.append("no event of a thread other than its process's main thread (gen:worker)")
    want = ["%d %d %s" % (r[0], r[2], r[4]) for r in parse_show(show)]
    for r in parse_show(show):
        if names.get(("thread_name", r[2]), r[1]) != r[1]:
            errors.append("pid %d: thread_name %r, fdr show says %r" %
                          (r[2], names.get(("thread_name", r[2])), r[1]))
            break
    if meta and meta.get("events") != len(got):
        errors.append("metadata.events %r, %d events" % (meta.get("events"), len(got)))
    return errors + compare(want, got)


def main():
    if len(sys.argv) == 6 and sys.argv[1] == "ctf":
        errors = check_ctf(*sys.argv[2:])
    elif len(sys.argv) == 5 and sys.argv[1] == "perfetto":
        errors = check_perfetto(*sys.argv[2:])
    else:
        print(__doc__, file=sys.stderr)
        return 2
    for e in errors:
        print("export-check: " + e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
