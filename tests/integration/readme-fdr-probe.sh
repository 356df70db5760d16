#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# readme-fdr-probe.sh CMAKE BUILD README - README.md's "Probes by name: fdr probe"
# walk-through, as written there, so that it cannot rot: its C program (the
# ```c block of that section) and its commands (the ```sh block) run with bash
# -e in a fresh directory, HOME a new one into which BUILD is installed
# ('cmake --install BUILD --prefix ~/.local', as README's install step says),
# ~/.local/bin first on PATH. What they print (stdout and stderr, in order)
# must be the ```text block, paths, offsets, addresses, pids, CPUs and times
# aside, fdr start's line and fdr show's header left out. SKIP (77) when fdr was
# built without libdw or there is no C compiler.
set -u
# shellcheck source=../harness/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib.sh"

CMAKE=${1:?usage: readme-fdr-probe.sh CMAKE BUILD README}
BUILD=${2:?usage: readme-fdr-probe.sh CMAKE BUILD README}
README=${3:?usage: readme-fdr-probe.sh CMAKE BUILD README}
abs_path BUILD README
suite_init readme-fdr-probe
unset FDR_SESSION
"$BUILD/cli/fdr" probe -n -x /bin/true true >/dev/null 2>"$T/probe-check"
grep -q "built without" "$T/probe-check" && skip "this fdr was built without libdw"
command -v cc >/dev/null || skip "no C compiler (cc)"

# block LANG: the first ```LANG block of README's "### Probes by name" section
block() {
	awk -v lang="$1" '
		/^##/ { insec = ($0 ~ /^### Probes by name/) }
		insec && !done && $0 == "```" lang { inb = 1; next }
		inb && $0 == "```" { inb = 0; done = 1 }
		inb { print }' "$README"
}

# norm: mask what differs per run and per machine
norm() {
	sed -E -e 's|/[^ ]*/req2|PATH|g' -e 's/:0x[0-9a-f]+ /:OFFSET /' \
		-e 's/^ *req2-[0-9]+ +\[[0-9]+\] (.....) +[0-9]+\.[0-9]{6}: handle_request: \(0x[0-9a-f]+\)/req2-PID [CPU] \1 TIME: handle_request: (ADDR)/'
}

test_setup() {
	block c >"$T/req2.c" && block sh >"$T/walk.sh" && block text >"$T/want" || return 1
	[ -s "$T/req2.c" ] && [ -s "$T/walk.sh" ] && [ -s "$T/want" ] ||
		{ diag "README.md has no c, sh and text blocks under '### Probes by name'"; return 1; }
	grep -q '^fdr probe -x ./req2 ' "$T/walk.sh" || { diag "the walk-through runs no fdr probe"; return 1; }
	export HOME=$T/home
	mkdir -p "$HOME" "$T/work" && mv "$T/req2.c" "$T/work/" || return 1
	must "$CMAKE" --install "$BUILD" --prefix "$HOME/.local" || return 1
	[ -e "$HOME/.local/lib/libfdr-probe.so" ] || { diag "no ~/.local/lib/libfdr-probe.so"; return 1; }
	export PATH=$HOME/.local/bin:$PATH
}

test_walkthrough() {
	(cd "$T/work" && bash -e "$T/walk.sh") >"$T/got" 2>&1 || {
		diag "the walk-through failed: status $?"
		sed 's/^/#   output: /' "$T/got"
		return 1
	}
	grep -v -e '^#' -e "^fdr: session 'default' created" "$T/got" | norm >"$T/got.n"
	norm <"$T/want" >"$T/want.n"
	cmp -s "$T/got.n" "$T/want.n" && return 0
	diag "printed (masked), then README's (masked):"
	sed 's/^/#   got:    /' "$T/got.n"
	sed 's/^/#   README: /' "$T/want.n"
	return 1
}

# the last command removed the probe
test_removed() {
	must "$HOME/.local/bin/fdr" cat uprobe_events || return 1
	[ ! -s "$OUT" ] || { diag "uprobe_events after the walk-through:"; show_io; return 1; }
}

run_cases "test_setup test_walkthrough test_removed" test_setup
tap_summary
