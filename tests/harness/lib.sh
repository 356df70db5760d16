# SPDX-License-Identifier: LGPL-2.1-or-later
# lib.sh - helpers the shell suites share (sourced). The suite sets T (its
# temporary directory) before, and, for fdr(), FDR (the fdr command). OUT and
# ERR (files for the last command's output) default to $T/out and $T/err.

# the counts of the suite's cases
pass=0
fail=0
ncase=0
OUT=${OUT:-${T:?lib.sh: set T first}/out}
ERR=${ERR:-$T/err}

# ok STATUS NAME: one TAP line for a case that ended with STATUS (0: passed)
ok() {
	ncase=$((ncase + 1))
	if [ "$1" = 0 ]; then
		pass=$((pass + 1))
		echo "ok $ncase - $2"
	else
		fail=$((fail + 1))
		echo "not ok $ncase - $2"
	fi
}

# run_cases "CASE..." [FIRST]: run each function named, as a case named after it
# without "test_". If the case FIRST fails, the cases after it (which need it)
# are not run.
run_cases() {
	local c st

	for c in $1; do
		"$c"
		st=$?
		ok "$st" "${c#test_}"
		[ "$st" != 0 ] && [ "$c" = "${2:-}" ] && break
	done
	return 0
}

# tap_summary: the counts line; succeeds if no case failed
tap_summary() {
	echo "$pass passed, $fail failed"
	[ "$fail" -eq 0 ]
}

# diag MSG...: explain a failure (printed under "not ok")
diag() {
	echo "#   $*"
}

# run CMD...: run, keep stdout in $OUT, stderr in $ERR, status in $rc
run() {
	"$@" >"$OUT" 2>"$ERR"
	rc=$?
	return 0
}

# fdr ARGS...: run the fdr command
fdr() {
	run "$FDR" "$@"
}

show_io() {
	sed 's/^/#   stdout: /' "$OUT" | head -20
	sed 's/^/#   stderr: /' "$ERR" | head -20
}

# expect_rc N: the last command exited with N
expect_rc() {
	if [ "$rc" -ne "$1" ]; then
		diag "exit status $rc, expected $1"
		show_io
		return 1
	fi
}

# expect_out PATTERN (grep -E) in stdout / expect_err in stderr
expect_out() {
	grep -Eq -- "$1" "$OUT" && return 0
	diag "stdout lacks /$1/"
	show_io
	return 1
}

expect_err() {
	grep -Eq -- "$1" "$ERR" && return 0
	diag "stderr lacks /$1/"
	show_io
	return 1
}
