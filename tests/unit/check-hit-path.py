#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""check-hit-path.py LIBFDR_PROBE.so LIBFDR.so - a jump probe's hit touches no
vector register (docs/design/probes.md, "A hit without the vector state").

The trampoline of a jump probe saves the general registers and the flags only,
so every instruction a hit can run must leave the x87/SSE/AVX/AVX-512 state
alone. This disassembles the built libraries (objdump -d) and walks the code
from the hit's entry points: engine.c's fdr_probe_fire(), which the trampoline
calls, fdr_probe_ret_fire(), which the return trampoline calls (tramp.S), and
agent.c's pa_hit(), the handler they call directly (armed with
FDR_PROBE_ARM_NOVEC). Every function reached through a direct call or jump,
in either library (through the PLT too), is looked at; the walk stops at
fdr_vcall(), which saves the vector state before it calls ordinary code, and
at pr_ret_lost(), which aborts the process (a return with no entry). It
fails, naming the function and the instruction, on
  - an operand that is a vector, x87, MMX or mask register, or an instruction
    that works on that state (x87, emms, vzeroupper, ldmxcsr, xsave...);
  - a call or jump into anything but these two libraries (libc's memcpy() and
    memset() use vector registers; a system call is made inline instead);
  - an indirect call anywhere but in fdr_probe_fire(), pr_fire_all(),
    fdr_probe_ret_fire() and pr_call() (the NOVEC handler's).
Indirect jumps are allowed: a switch's jump table, inside its function.
"""
import bisect
import re
import subprocess
import sys

ROOTS = [("probe", "fdr_probe_fire"), ("probe", "fdr_probe_ret_fire"), ("probe", "pa_hit")]
# fdr_vcall saves the vector state around what it calls; pr_ret_lost aborts
BOUNDARY = {"fdr_vcall", "pr_ret_lost"}
INDIRECT_CALL_OK = {"fdr_probe_fire", "pr_fire_all", "fdr_probe_ret_fire", "pr_call"}
VEC_OPERAND = re.compile(r"%(?:[xyz]mm\d+|st\b|st\(\d\)|mm\d\b|k[0-7]\b)")
VEC_MNEMONIC = re.compile(
    r"^(?:f\w+|emms|vzeroupper|vzeroall|ldmxcsr|stmxcsr|vldmxcsr|vstmxcsr|xsave\w*|xrstor\w*)$")
INSN = re.compile(r"^\s*([0-9a-f]+):\s+(.*)$")
BRANCH = re.compile(r"^(?:(?:bnd|notrack)\s+)?(call|jmp|j[a-z]+|loop\w*)\s+(\*?)([0-9a-f]+)?")


def run(*cmd):
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


class Lib:
    def __init__(self, path):
        self.path = path
        self.funcs = {}  # name -> (start, end)
        self.starts = []  # sorted (start, end, name)
        for line in run("nm", "--defined-only", "-S", path).splitlines():
            f = line.split()
            if len(f) == 4 and f[2] in "tTwW" and int(f[1], 16) > 0:
                start, size, name = int(f[0], 16), int(f[1], 16), f[3].split("@")[0]
                self.funcs.setdefault(name, (start, start + size))
        self.starts = sorted((s, e, n) for n, (s, e) in self.funcs.items())
        self.keys = [s for s, _, _ in self.starts]
        self.sections = {}
        for line in run("objdump", "-h", path).splitlines():
            f = line.split()
            if len(f) >= 4 and f[0].isdigit():
                self.sections[f[1]] = (int(f[3], 16), int(f[3], 16) + int(f[2], 16))
        self.insns = []  # sorted (addr, text)
        for line in run("objdump", "-d", "--no-show-raw-insn", path).splitlines():
            m = INSN.match(line)
            if m:
                self.insns.append((int(m.group(1), 16), m.group(2).strip()))
        self.insns.sort()
        self.iaddr = [a for a, _ in self.insns]

    def func_at(self, addr):
        i = bisect.bisect_right(self.keys, addr) - 1
        if i >= 0 and self.starts[i][0] <= addr < self.starts[i][1]:
            return self.starts[i][2]
        return None

    def in_section(self, name, addr):
        r = self.sections.get(name)
        return r is not None and r[0] <= addr < r[1]

    def body(self, name):
        s, e = self.funcs[name]
        i = bisect.bisect_left(self.iaddr, s)
        while i < len(self.insns) and self.insns[i][0] < e:
            yield self.insns[i]
            i += 1


def main():
    if len(sys.argv) != 3:
        print(__doc__.split("\n")[0], file=sys.stderr)
        return 2
    libs = {"probe": Lib(sys.argv[1]), "fdr": Lib(sys.argv[2])}
    errors, seen, todo = [], set(), list(ROOTS)
    for lib, name in ROOTS:
        if name not in libs[lib].funcs:
            print(f"check-hit-path: {name} not found in {libs[lib].path}'s symbols "
                  "(a stripped library cannot be checked)", file=sys.stderr)
            return 1
    while todo:
        lib, name = todo.pop()
        if (lib, name) in seen:
            continue
        seen.add((lib, name))
        L = libs[lib]
        where = f"{name} ({L.path.rsplit('/', 1)[-1]})"
        for addr, text in L.body(name):
            mnem, _, ops = text.partition(" ")
            ops = ops.split("#")[0]
            if VEC_OPERAND.search(ops) or VEC_MNEMONIC.match(mnem):
                errors.append(f"{where}: vector/x87 state at 0x{addr:x}: {text}")
                continue
            m = BRANCH.match(text)
            if not m:
                continue
            if m.group(2):  # indirect
                if m.group(1) == "call" and name not in INDIRECT_CALL_OK:
                    errors.append(f"{where}: indirect call at 0x{addr:x}: {text}")
                continue
            if not m.group(3):
                continue
            target = int(m.group(3), 16)
            s, e = L.funcs[name]
            if s <= target < e or L.in_section("__rseq_failure", target):
                continue  # inside the function; an rseq abort's signature and jump back
            if L.in_section(".plt", target) or L.in_section(".plt.sec", target):
                label = re.search(r"<([^>@+]+)@plt>", text)
                callee = label.group(1) if label else "?"
                if callee in BOUNDARY:
                    continue
                for other in ("probe", "fdr"):
                    if other != lib and callee in libs[other].funcs:
                        todo.append((other, callee))
                        break
                else:
                    errors.append(f"{where}: calls {callee}@plt at 0x{addr:x}, "
                                  "outside fdr (libc?)")
                continue
            callee = L.func_at(target)
            if callee is None:
                errors.append(f"{where}: branch at 0x{addr:x} to 0x{target:x}, in no function")
            elif callee not in BOUNDARY:
                todo.append((lib, callee))
    for err in errors:
        print("check-hit-path: " + err)
    names = sorted(n for _, n in seen)
    print(f"check-hit-path: {len(seen)} functions looked at ({', '.join(names)}); "
          f"{len(errors)} problems")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
