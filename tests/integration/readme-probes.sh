#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# readme-probes.sh CMAKE BUILD README - README.md's "Dynamic probes" walk-through,
# exactly as written there, so that it cannot rot: its C program (the ```c
# block) and its commands (the ```sh block) are taken from README and run with
# bash -e in a fresh directory, HOME a new one into which BUILD is installed
# ('cmake --install BUILD --prefix ~/.local', as README's install step says)
# and ~/.local/bin first on PATH. The lines the section says they print (the
# ```text block) must be what uprobe_events, fdr show's event lines and
# uprobe_profile printed, addresses, offsets, paths, pids, CPUs and times
# aside; and after the last command the probe is gone.
set -u
# shellcheck source=../harness/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib.sh"

CMAKE=${1:?usage: readme-probes.sh CMAKE BUILD README}
BUILD=${2:?usage: readme-probes.sh CMAKE BUILD README}
README=${3:?usage: readme-probes.sh CMAKE BUILD README}
abs_path BUILD README
suite_init readme-probes
unset FDR_SESSION

# block LANG: the first ```LANG block of README's "## Dynamic probes" section
block() {
	awk -v lang="$1" '
		/^## / { insec = ($0 == "## Dynamic probes") }
		insec && !done && $0 == "```" lang { inb = 1; next }
		inb && $0 == "```" { inb = 0; done = 1 }
		inb { print }' "$README"
}

# norm: mask what differs per run and per machine
norm() {
	sed -E -e 's/^p:demo\/req \/[^ ]*\/req:0x[0-9a-f]{16} /p:demo\/req PATH:OFFSET /' \
		-e 's/^ *req-[0-9]+ +\[[0-9]+\] (.....) +[0-9]+\.[0-9]{6}: req: \(0x[0-9a-f]+\)/req-PID [CPU] \1 TIME: req: (ADDR)/' \
		-e 's/^  \/[^ ]*\/req req +([0-9]+)$/  PATH req \1/'
}

test_setup() {
	block c >"$T/req.c" && block sh >"$T/walk.sh" && block text >"$T/want" || return 1
	[ -s "$T/req.c" ] && [ -s "$T/walk.sh" ] && [ -s "$T/want" ] ||
		{ diag "README.md has no c, sh and text blocks in '## Dynamic probes'"; return 1; }
	grep -q 'fdr append uprobe_events "p:demo/req' "$T/walk.sh" ||
		{ diag "the walk-through defines no probe"; return 1; }
	export HOME=$T/home
	mkdir -p "$HOME" "$T/work" && mv "$T/req.c" "$T/work/" || return 1
	must "$CMAKE" --install "$BUILD" --prefix "$HOME/.local" || return 1
	[ -e "$HOME/.local/lib/libfdr-probe.so" ] || { diag "no ~/.local/lib/libfdr-probe.so"; return 1; }
	export PATH=$HOME/.local/bin:$PATH
}

test_walkthrough() {
	(cd "$T/work" && bash -e "$T/walk.sh") >"$T/got" 2>"$T/err" || {
		diag "the walk-through failed: status $?"
		sed 's/^/#   stdout: /' "$T/got"
		sed 's/^/#   stderr: /' "$T/err"
		return 1
	}
	grep -E '^p:demo/req |: req: \(|^  /.* req +[0-9]+$' "$T/got" | norm >"$T/got.n"
	norm <"$T/want" >"$T/want.n"
	cmp -s "$T/got.n" "$T/want.n" && return 0
	diag "printed (masked), then README's (masked):"
	sed 's/^/#   got:    /' "$T/got.n"
	sed 's/^/#   README: /' "$T/want.n"
	return 1
}

# the last commands disabled and removed the probe
test_removed() {
	local fdr=$HOME/.local/bin/fdr
	must "$fdr" cat uprobe_events || return 1
	[ ! -s "$OUT" ] || { diag "uprobe_events after the walk-through:"; show_io; return 1; }
	run "$fdr" cat events/demo/req/enable
	[ "$rc" != 0 ] || { diag "events/demo/req is still there"; return 1; }
}

run_cases "test_setup test_walkthrough test_removed" test_setup
tap_summary
