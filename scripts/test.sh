#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# test.sh - install what the tests need, then build and run every test:
#   0. cheap checks first: every public function has a man page
#      (scripts/check-manpages.sh), the C sources are clang-formatted
#      (scripts/check-format.sh, clang-format 14)
#   1. gcc build, warnings as errors: all CTest tests (unit, integration, stress,
#      crash, fuzz corpus replay, and the docs checks, among them docs/abi: each
#      shared library exports what lib/*.symbols lists, scripts/check-abi.sh,
#      which needs a build and so is no early check)
#   2. a Release build (-O3) as a user makes it, with warnings as errors: unit tests;
#      a clang build, warnings as errors: unit and docs tests (the exported
#      symbols must not depend on the compiler), and the integration tests
#      labelled clang (integration/probe-agent and integration/attach)
#   3. ASan + UBSan build: all tests
#   4. ThreadSanitizer build: the stress, crash and fuzz-replay tests (TSan sees one
#      process at a time, so the tests labelled no-tsan, which kill lock holders and
#      snapshotters in other processes, and the Criterion unit tests, which fork, are
#      left to the others)
#   5. the README's demo command (scripts/demo.sh) in a fresh clone of this
#      checkout's HEAD, with its own FDR_ROOT: it must exit 0 and show the failures,
#      the snapshot its trigger took, and the statistics
# Prints a closing "total: N passed, M failed" line; exits non-zero on any failure.
# A failing step prints the whole output of each failing test and where the full
# log is kept (BUILD_DIR/ctest-full.log).
set -uo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh ca-certificates git gcc g++ clang libclang-rt-14-dev libc6-dev cmake \
	ninja-build pkg-config libcriterion-dev procps util-linux trace-cmd libtracecmd-dev \
	libtraceevent-dev libtracefs-dev babeltrace2 lttng-tools python3 libfuse3-dev fuse3 clang-format-14 \
	libzydis-dev libcapstone-dev libdw-dev linux-perf || exit 1

jobs=$(nproc 2>/dev/null || echo 2)
passed=0
failed=0
steps_failed=()

# run_ctest NAME BUILD_DIR CMAKE_ARGS... -- CTEST_ARGS...
run_ctest() {
	local name=$1 dir=$2
	shift 2
	local cargs=() targs=()
	while [ $# -gt 0 ] && [ "$1" != -- ]; do cargs+=("$1"); shift; done
	[ $# -gt 0 ] && shift
	targs=("$@")
	echo "==== $name: configure and build ($dir)"
	mkdir -p "$dir"
	if ! cmake -S . -B "$dir" -G Ninja -DFDR_BUILD_BENCH=OFF "${cargs[@]}" >"$dir/ci-build.log" 2>&1 ||
	   ! ninja -C "$dir" >>"$dir/ci-build.log" 2>&1; then
		tail -40 "$dir/ci-build.log"
		echo "==== $name: BUILD FAILED"
		failed=$((failed + 1))
		steps_failed+=("$name (build)")
		return
	fi
	echo "==== $name: ctest ${targs[*]}"
	local out log="$dir/ctest-full.log"
	ctest --test-dir "$dir" --output-on-failure -j"$jobs" "${targs[@]}" >"$log" 2>&1
	local rc=$?
	out=$(cat "$log")
	if [ $rc -eq 0 ]; then
		echo "$out" | tail -12
	else
		# every failing test's whole output (ctest prints it after the test's
		# line), not the last lines of the run: what failed and why stays visible
		echo "$out" | grep -v -E '^ *Start +[0-9]+: |^ *[0-9]+/[0-9]+ Test +#[0-9]+: .* Passed ' |
			head -1500
		echo "==== $name: full ctest log: $(realpath "$log")"
		echo "==== $name: per-test logs: $(realpath "$dir")/Testing/Temporary/LastTest.log"
	fi
	local line
	line=$(echo "$out" | grep -E "tests passed, [0-9]+ tests failed out of [0-9]+" | tail -1)
	if [ -n "$line" ]; then
		local nf total
		nf=$(echo "$line" | sed -E 's/.* ([0-9]+) tests failed out of ([0-9]+).*/\1/')
		total=$(echo "$line" | sed -E 's/.* tests failed out of ([0-9]+).*/\1/')
		passed=$((passed + total - nf))
		failed=$((failed + nf))
	elif [ $rc -ne 0 ]; then
		failed=$((failed + 1))
	fi
	if [ $rc -ne 0 ]; then
		steps_failed+=("$name")
	fi
}

# run_check NAME SCRIPT: one cheap check of the tree (one test in the totals)
run_check() {
	local name=$1 out rc
	echo "==== $name: bash $2"
	out=$(bash "$2" 2>&1)
	rc=$?
	echo "$out" | head -60
	if [ $rc -eq 0 ]; then
		passed=$((passed + 1))
	else
		echo "==== $name: FAILED (exit $rc)"
		failed=$((failed + 1))
		steps_failed+=("$name")
	fi
}

run_check "man pages" scripts/check-manpages.sh
run_check "clang-format" scripts/check-format.sh

run_ctest "gcc -Werror" build-ci -DCMAKE_C_COMPILER=gcc -DFDR_WERROR=ON -- --timeout 300
# a user's plain release build (-O3 finds warnings -O2 does not), here with -Werror
run_ctest "release -Werror" build-ci-release -DCMAKE_C_COMPILER=gcc -DCMAKE_BUILD_TYPE=Release \
	-DFDR_WERROR=ON -- -L unit --timeout 300
# clang: the unit tests, the docs' checks, and of the integration tests the two
# that run clang-built trampolines and agents in whole programs (label clang);
# the others run in the gcc and ASan builds
run_ctest "clang -Werror" build-ci-clang -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DFDR_WERROR=ON -- -L "unit|docs|clang" --timeout 300
run_ctest "asan+ubsan" build-ci-asan -DCMAKE_C_COMPILER=gcc -DFDR_WERROR=ON -DCMAKE_BUILD_TYPE=Debug \
	"-DCMAKE_C_FLAGS=-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer" \
	"-DCMAKE_CXX_FLAGS=-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer" \
	"-DCMAKE_EXE_LINKER_FLAGS=-fsanitize=address,undefined" \
	"-DCMAKE_SHARED_LINKER_FLAGS=-fsanitize=address,undefined" -- --timeout 600
run_ctest "tsan" build-ci-tsan -DCMAKE_C_COMPILER=gcc -DFDR_WERROR=ON \
	"-DCMAKE_C_FLAGS=-fsanitize=thread -fno-omit-frame-pointer -Wno-tsan" \
	"-DCMAKE_CXX_FLAGS=-fsanitize=thread -fno-omit-frame-pointer -Wno-tsan" -- \
	-L "stress|crash|fuzz" -LE no-tsan --timeout 600

# run_demo: the README's first command, from a fresh clone (one test in the totals)
run_demo() {
	local dir out rc=0 why=
	echo "==== demo: bash scripts/demo.sh in a fresh clone"
	dir=$(mktemp -d /tmp/fdr-demo-clone.XXXXXX) || { failed=$((failed + 1)); return; }
	mkdir -m 700 "$dir/root"
	if ! git clone -q . "$dir/fdr" >"$dir/clone.log" 2>&1; then
		why="git clone failed: $(tail -3 "$dir/clone.log")"
	else
		# a user's own session named demo, with a marker in it: the demo must
		# leave it alone and use a session of its own
		local mine=build-ci/cli/fdr
		[ -x "$mine" ] && FDR_ROOT="$dir/root" "$mine" -s demo start >/dev/null 2>&1 &&
			FDR_ROOT="$dir/root" "$mine" -s demo write trace_marker "mine, keep" >/dev/null 2>&1 ||
			mine=
		out=$(cd "$dir/fdr" && FDR_ROOT="$dir/root" bash scripts/demo.sh 2>&1)
		rc=$?
		echo "$out" | tail -25
		if [ $rc != 0 ]; then
			why="scripts/demo.sh exited $rc"
		elif [ -n "$mine" ] && ! FDR_ROOT="$dir/root" "$mine" -s demo show 2>/dev/null |
			grep -q 'mine, keep'; then
			why="it destroyed or cleared the session 'demo' it did not create"
		elif [ -n "$mine" ] && ! grep -q "The session 'demo-2'" <<<"$out"; then
			why="with a session 'demo' in use it did not take 'demo-2'"
		elif ! grep -q 'request: status=500' <<<"$out"; then
			why="no failed request (status=500) in its output"
		elif ! grep -q 'snapshot: allocated, 1 taken' <<<"$out"; then
			why="its trigger took no snapshot (fdr stat: 'snapshot: allocated, 1 taken' expected)"
		fi
	fi
	rm -rf "$dir"
	if [ -n "$why" ]; then
		echo "==== demo: FAILED: $why"
		failed=$((failed + 1))
		steps_failed+=("demo")
	else
		echo "==== demo: passed"
		passed=$((passed + 1))
	fi
}

run_demo

if [ ${#steps_failed[@]} -gt 0 ]; then
	echo "failed steps: ${steps_failed[*]}"
fi
echo "total: $passed passed, $failed failed"
[ $failed -eq 0 ] && [ ${#steps_failed[@]} -eq 0 ]
