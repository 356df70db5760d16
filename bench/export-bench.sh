#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# export-bench.sh BUILD_DIR [ROUNDS] - fdr export throughput: records per second
# written by each format, and read back by babeltrace2 (when installed), on a
# private session filled by export-gen (5 events per round) and fdr-demo.
set -eu
B=${1:?usage: export-bench.sh BUILD_DIR [ROUNDS]}
# babeltrace2, the reference reader (Debian package), if it is missing
bash "$(dirname "$0")/../scripts/deps.sh" babeltrace2 ||
	echo "export-bench: could not install babeltrace2; its figures are skipped" >&2
ROUNDS=${2:-100000}
T=$(mktemp -d "${TMPDIR:-/tmp}/fdr-export-bench.XXXXXX")
trap 'rm -rf "$T"' EXIT
export FDR_ROOT=$T/root FDR_SESSION=bench
FDR=$B/cli/fdr

now() { date +%s%N; }
rate() { echo $(($1 * 1000000000 / ($3 - $2))); }

"$FDR" start -b 262144 -e 'demo:*' 2>/dev/null
"$B/tests/export-gen" "$ROUNDS"
"$B/demo/fdr-demo" -n "$ROUNDS" -r 100000000 >/dev/null 2>&1
n=$("$FDR" export --format text -o - | grep -Ec '^ *.*-[0-9]+ +\[[0-9]{3}\] ')
echo "records: $n"
for f in ctf perfetto text; do
	s=$(now)
	"$FDR" export --format $f -o "$T/out.$f"
	e=$(now)
	echo "export $f: $(rate "$n" "$s" "$e") records/s, $(du -sh "$T/out.$f" | cut -f1)"
done
if command -v babeltrace2 >/dev/null; then
	s=$(now)
	babeltrace2 "$T/out.ctf" >/dev/null
	e=$(now)
	echo "babeltrace2 reading the ctf: $(rate "$n" "$s" "$e") records/s"
fi
"$FDR" destroy
