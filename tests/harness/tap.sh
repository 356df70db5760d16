# SPDX-License-Identifier: LGPL-2.1-or-later
# tap.sh - helpers the shell suites share (sourced). The suite sets OUT and ERR
# (files for the last command's output) and, for fdr(), FDR (the fdr command).

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
