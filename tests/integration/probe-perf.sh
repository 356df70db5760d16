#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# probe-perf.sh FDR - fdr probe against perf probe, the reference.
#
# Builds probe-perf/prog.c and probe-perf/lib.c (a shared library) at -O0 -g
# and -O2 -g (and prog.c -O2 -g non-PIE), then for every definition of the table below runs
#   perf probe -x BIN -n -v --add DEF       (-n: perf writes nothing)
#   fdr probe  -x BIN -n -v --add DEF
# and compares the "Writing event:" lines: the same place (file offset), the
# same fetch arguments and types, the same group and event names. Each row
# says what is expected:
#   same    both write, and the lines are equal
#   fail    both refuse (optimised out, not found, unsupported location...),
#           fdr with exit 1 and a message
#   better REF  fdr differs on purpose: perf 6.1 fails where the debug
#           information is in a separate file and a variable is relative to
#           the frame base (it looks for the call frame information in the
#           .debug file, where .eh_frame is empty); fdr takes it from the
#           binary and must write what it writes for REF, the same code with
#           its debug information inside
#   beyond  perf 6.1 fails on a DWARF 5 bitfield member (DW_AT_data_bit_offset,
#           no DW_AT_data_member_location); fdr writes the kernel's bitfield
#           type b<width>@<bit offset>/<container bits> (probe-e2e checks the
#           values recorded)
#   lsb     fdr differs on purpose: a DWARF 4 bitfield's DW_AT_bit_offset counts
#           from the storage unit's top bit, the kernel's b<w>@<bit> from its
#           bottom; perf writes the first as the second (wrong bits, on
#           x86-64), fdr converts (probe-e2e checks the values recorded)
#   refuse  fdr differs on purpose: where a variable's location is computed
#           (DW_OP_stack_value: the value is a register plus an offset), perf
#           reads the first operation only and loads from that address, a wrong
#           value; fdr refuses and says so
#   without V  the same for $vars: fdr leaves V out, perf fetches it wrongly
#   global  fdr differs on purpose: a global variable is @+OFFSET (a file
#           offset, which a uprobe takes), where perf writes @SYMBOL+N, which
#           the kernel's uprobes refuse; the test computes the offset from
#           the symbol's address and checks the rest of the line is perf's
# -F (the symbols), -V (the variables at a place, with their types) and -L
# (the source, the lines that can be probed numbered) must print what perf
# prints.
# The program built -O0 and -O2 again, its debug information installed under
# /usr/lib/debug/.build-id/ for the suite (removed at exit), is compared with
# perf too.
# Then fdr alone: the error paths (exit codes, messages naming the file and
# the place), a binary without debug information (FUNC and FUNC+OFF still
# compared with perf, from the symbol table), debug information split out
# through .gnu_debuglink, and the event names -f gives.
#
# Needs root and perf (Debian linux-perf): without them the suite says why
# and exits 77 (SKIP). perf probe -n needs tracefs mounted; it is mounted at
# /sys/kernel/tracing if it is not. The kernel's uprobe_events is written by
# the list case alone (-l against perf probe -l: the same definitions added
# for real by perf to the kernel and by fdr to a session, in groups named
# after this shell's pid), whose probes perf probe -d removes, at exit too;
# the suite checks they are gone and that the rest reads as before.
set -u
# shellcheck source=../harness/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib.sh"

FDR=${1:?usage: probe-perf.sh FDR}
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/probe-perf" && pwd)

suite_init probe-perf
[ "$(id -u)" = 0 ] || skip "perf probe needs root"
PERF=$(command -v perf) || skip "perf is not installed (Debian: linux-perf)"
"$FDR" probe -n -x /bin/true true >/dev/null 2>"$T/probe-check"
grep -q "built without" "$T/probe-check" && skip "this fdr was built without libdw"
if ! awk '$3 == "tracefs" { f = 1 } END { exit !f }' /proc/mounts; then
	mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null || skip "no tracefs, which perf probe needs"
fi
TRACEFS=$(awk '$3 == "tracefs" { print $2; exit }' /proc/mounts)
CC=${CC:-cc}
command -v "$CC" >/dev/null || skip "no C compiler ($CC)"
export FDR_SESSION=probe-perf
# perf must not find cached copies of these binaries elsewhere
export PERF_BUILDID_DIR=$T/buildid

B=$T/bin
mkdir -p "$B"
for o in 0 2; do
	"$CC" -O$o -g -shared -fPIC -o "$B/libpp$o.so" "$SRC/lib.c" &&
		"$CC" -O$o -g -I"$SRC" -o "$B/prog$o" "$SRC/prog.c" -L"$B" -lpp$o -Wl,-rpath,"$B" ||
		{ echo "cannot build the test programs"; exit 1; }
done
# DWARF 4 bitfields (DW_AT_bit_offset)
"$CC" -O0 -gdwarf-4 -I"$SRC" -o "$B/progd4" "$SRC/prog.c" -L"$B" -lpp0 -Wl,-rpath,"$B" ||
	{ echo "cannot build the DWARF 4 test program"; exit 1; }
# a name with '-', '.' and '_': the default group is cut at the first
cp "$B/prog0" "$B/my-prog_0.bin" || exit 1
# a non-PIE executable: addresses are not file offsets there
"$CC" -O2 -g -fno-pie -no-pie -I"$SRC" -o "$B/prognp" "$SRC/prog.c" -L"$B" -lpp2 -Wl,-rpath,"$B" ||
	{ echo "cannot build the non-PIE test program"; exit 1; }
# without debug information (its own code, so that no build id matches a cache)
"$CC" -O1 -o "$B/nodebug" -x c - <<'EOF' || exit 1
#include <stdio.h>
__attribute__((noinline)) int nd_work(int a, int b) { return printf("%d\n", a + b); }
int main(int argc, char **argv) { (void)argv; return nd_work(argc, 2) < 0; }
EOF
# split debug information, found through .gnu_debuglink
cp "$B/prog2" "$B/split2" && objcopy --only-keep-debug "$B/split2" "$B/split2.debug" &&
	objcopy --strip-debug --add-gnu-debuglink="$B/split2.debug" "$B/split2" ||
	{ echo "cannot split the debug information"; exit 1; }

# split debug information found by build id, as distributions install it
# (/usr/lib/debug/.build-id/NN/REST.debug, which perf looks up too): prog.c
# built -O0 and -O2 with build ids of their own, their debug sections moved to
# those files for the time of the suite (removed at exit)
BUILDID_ROWS=()
BID_FILES=()
remove_bid_files() { [ ${#BID_FILES[@]} -gt 0 ] && rm -f "${BID_FILES[@]}"; }
at_exit remove_bid_files
for o in 0 2; do
	bid=$(printf 'fd7e%08x%028x' $$ "$o")
	"$CC" -O$o -g -I"$SRC" -o "$B/splitb$o" "$SRC/prog.c" -L"$B" -lpp$o -Wl,-rpath,"$B" \
		-Wl,--build-id=0x"$bid" || exit 1
	f=/usr/lib/debug/.build-id/${bid:0:2}/${bid:2}.debug
	if [ -e "$f" ] || ! mkdir -p "${f%/*}" || ! objcopy --only-keep-debug "$B/splitb$o" "$f"; then
		echo "# no build-id rows: cannot make $f"
		continue
	fi
	BID_FILES+=("$f")
	objcopy --strip-debug "$B/splitb$o" || exit 1
done
if [ ${#BID_FILES[@]} = 2 ]; then
	BUILDID_ROWS=("splitb2|record_point it->name:string n|same" "splitb2|clamp v|same"
		"splitb2|count_byte buf len c|same" "splitb0|record_point|same"
		"splitb0|record_point it n|better prog0" "splitb0|prog.c:$(grep -n 'L:rp_next ' "$SRC/prog.c" | cut -d: -f1) t it->id|better prog0")
fi

line_of() { grep -n "L:$1 " "$SRC/prog.c" | cut -d: -f1; }
lib_line_of() { grep -n "L:$1 " "$SRC/lib.c" | cut -d: -f1; }
RP_FIRST=$(line_of rp_first)
RP_PRINT=$(line_of rp_print)
RP_NEXT=$(line_of rp_next)
CB_LOOP=$(line_of cb_loop)
MAIN_CALL=$(line_of main_call)
SCALE_BODY=$(line_of scale_body)
BOX_BODY=$(lib_line_of box_area_body)

# BIN|DEF|EXPECT (BIN: a file of $B)
TABLE=(
	"prog0|record_point|same"
	"prog2|record_point|same"
	"prog0|record_point it n fl|same"
	"prog2|record_point it n fl|same"
	"prog0|record_point it->name:string it->tag:string it->pos.y it->ref->x it->hist[3]|same"
	"prog2|record_point it->name:string it->tag:string it->pos.y it->ref->x it->hist[3]|same"
	"prog0|record_point it->kind it->delta it->live it->color it->w.u it->w.b[2] it->ratio|same"
	"prog2|record_point it->kind it->delta it->live it->color it->w.u it->w.b[2] it->ratio|same"
	"prog0|record_point it->next->next->id it->corners[1].y it->hist it->pos|same"
	"prog2|record_point it->next->next->id it->corners[1].y|same"
	"prog0|record_point ID=it->id SZ=it->size:s32 n:u8 it->name:x64|same"
	"prog0|record_point%return \$retval|same"
	"prog2|record_point%return R=\$retval:s64|same"
	"prog0|record_point+8|same"
	"prog2|record_point+4 %di %si:u32 X=+0(%di):x64|same"
	"prog0|record_point:1|fail"
	"prog0|record_point:2 t it|same"
	"prog2|record_point:2 t|fail"
	"prog0|prog.c:$RP_PRINT t it->id fl|same"
	"prog2|prog.c:$RP_PRINT t it->id|fail"
	"prog0|prog.c:$RP_FIRST|same"
	"prog2|prog.c:$RP_FIRST it|fail"
	"prog2|prog.c:$RP_NEXT it|same"
	"prog0|record_point \$params|same"
	"prog2|record_point \$params|same"
	"prog0|record_point \$vars|same"
	"prog0|main \$vars|same"
	"prog0|main rounds p first.next->size second.corners[0].x|same"
	"prog0|prog.c:$MAIN_CALL r v first.name:string|same"
	"prog2|prog.c:$MAIN_CALL|same"
	"prog0|scale v by|same"
	"prog2|scale v by|same"
	"prog0|scale:1|fail"
	"prog0|prog.c:$SCALE_BODY v by r|same"
	"prog0|prog.c:$(($(line_of clamp_body) - 2))|fail"
	"prog0|prog.c:$(line_of clamp_body) v|same"
	"prog2|prog.c:$(line_of clamp_body)|fail"
	"prog0|clamp|same"
	"prog2|clamp|same"
	"prog0|clamp v lo hi|same"
	"prog2|clamp v|same"
	"prog2|clamp v lo|fail"
	"prog0|clamp%return|fail"
	"prog0|count_byte buf len c|same"
	"prog2|count_byte buf len c|same"
	"prog0|count_byte buf[2] c:u8 c:string|fail"
	"prog0|count_byte buf[2] C=c:u8|same"
	"prog0|prog.c:$CB_LOOP i s buf[1]|same"
	"prog2|prog.c:$CB_LOOP|same"
	"prog0|mix w col on f us ll ch|same"
	"prog2|mix w col on|same"
	"prog2|mix f|fail"
	"prog0|mix w.u w.b[1]|same"
	"prog2|mix w.u|fail"
	"prog0|record_point;t+=*|same"
	"prog2|record_point;t+=* t|same"
	"prog0|record_point;if*|same"
	"prog0|clamp;return* v|same"
	"prog0|prog.c;*clamp(*|same"
	"prog2|prog.c;*clamp(*|same"
	"prog0|prog.c;*return*|same"
	"prog2|main;v+=*|same"
	"libpp0.so|lib.c;*lib_calls*|same"
	"prognp|record_point|same"
	"prognp|record_point it->name:string it->pos.y n|same"
	"prognp|prog.c:$RP_NEXT it|same"
	"prognp|clamp|same"
	"prognp|count_byte%return \$retval|same"
	"prognp|scale total_hits|global"
	"prog0|record_point total_hits|global"
	"prog0|record_point origin.y banner:string|global"
	"prog2|scale total_hits|global"
	"prog0|record_point fl->ready fl->mode fl->level|beyond"
	"prog2|record_point fl->mode|beyond"
	"progd4|record_point it n it->name:string|same"
	"progd4|record_point fl->ready fl->mode fl->level|lsb"
	"prog2|prog.c:$CB_LOOP i|refuse"
	"prog2|prog.c:$CB_LOOP \$vars|without i"
	"my-prog_0.bin|scale v|same"
	"prog2|count_byte@prog.c buf|same"
	"prog0|clamp:2 v|same"
	"prog2|clamp:2 v|fail"
	"prog2|mygrp:myev=scale v|same"
	"prog0|myev=record_point:4 t|same"
	"prog2|scale%return R=\$retval:s32|same"
	"prog2|main second.name:string first.corners[1].y|same"
	"prog0|record_point it->nosuch|fail"
	"prog0|record_point nosuch|fail"
	"prog0|nosuch_function|fail"
	"prog0|record_point it.id|fail"
	"prog0|record_point n->x|fail"
	"prog0|record_point it->id:string|fail"
	"libpp0.so|lib_area a b|same"
	"libpp2.so|lib_area a b a->x|same"
	"libpp2.so|lib_area a b|same"
	"libpp0.so|box_area bx->lo.x bx->hi.y bx->label:string|same"
	"libpp2.so|box_area bx->lo.x bx->hi.y bx->label:string|fail"
	"libpp0.so|lib.c:$BOX_BODY bx|fail"
	"libpp0.so|box_area:1 bx|fail"
	"libpp0.so|box_area:2 bx|fail"
	"libpp0.so|lib_area:4 bx a|same"
	"libpp0.so|span a b|same"
	"libpp2.so|span|same"
	"libpp0.so|lib_area%return \$retval|same"
	"libpp0.so|lib_area lib_calls|global"
	"nodebug|nd_work|same"
	"nodebug|nd_work+4|same"
	"nodebug|nd_work%return \$retval|same"
	"${BUILDID_ROWS[@]}"
)

# the "Writing event:" lines of a run's output
writes() { grep '^Writing event:' "$1"; }

# perf's @SYM+N made fdr's @+OFFSET, for the binary $1, from stdin
perf_globals() {
	local bin=$1 line out="" w sym n addr base off vaddr

	# the text segment (R E): its address minus its file offset
	read -r off vaddr < <(readelf -lW "$bin" | awk '$1 == "LOAD" && / R E | RWE / { print $2, $3; exit }')
	base=$((vaddr - off))
	while IFS= read -r line; do
		out=""
		for w in $line; do
			if [[ $w =~ ^(.*)@([A-Za-z_][A-Za-z0-9_]*)([+-][0-9]+)(.*)$ ]]; then
				sym=${BASH_REMATCH[2]}
				n=${BASH_REMATCH[3]}
				addr=$(nm "$bin" | awk -v s="$sym" '$3 == s { print $1; exit }')
				w=$(printf '%s@+0x%x%s' "${BASH_REMATCH[1]}" $((0x$addr + n - base)) "${BASH_REMATCH[4]}")
			fi
			out="$out${out:+ }$w"
		done
		echo "$out"
	done
}

# the kernel's probes of this suite's groups (other tests may change others meanwhile)
ours() { grep -E '^[pr]:probe_(prog|libpp|nodebug|split)' "$TRACEFS/uprobe_events" 2>/dev/null; }
K_BEFORE=$(ours)

# unlike EXPECTED [LABEL LINE]: a row of test_perf_table does not hold: what
# was expected, perf's line (LINE, converted as LABEL says, else what perf
# wrote) and fdr's, and the case fails (st=1)
unlike() {
	diag "$bin '$def': expected $1"
	if [ $# -ge 3 ]; then
		diag "  perf ($2): $3"
	else
		diag "  perf (rc $prc): ${pw:-$(tail -3 "$T/perf.out")}"
	fi
	diag "  fdr  (rc $frc): ${fw:-$(cat "$T/fdr.out")}"
	st=1
}

test_perf_table() {
	local row bin def want ref prc frc pw fw st=0 n=0

	for row in "${TABLE[@]}"; do
		IFS='|' read -r bin def want <<<"$row"
		ref=${want#* }
		[ "$ref" != "$want" ] && want=${want%% *}
		n=$((n + 1))
		"$PERF" probe -x "$B/$bin" -n -v --add "$def" >"$T/perf.out" 2>&1
		prc=$?
		"$FDR" probe -x "$B/$bin" -n -v --add "$def" >"$T/fdr.out" 2>&1
		frc=$?
		pw=$(writes "$T/perf.out")
		fw=$(writes "$T/fdr.out")
		case $want in
		same)
			if [ -z "$pw" ] || [ "$pw" != "$fw" ] || [ $frc != 0 ]; then
				unlike "the same lines"
			fi
			;;
		fail)
			if [ -n "$pw" ] || [ -n "$fw" ] || [ $frc != 1 ] ||
				! grep -q '^fdr probe: ' "$T/fdr.out"; then
				unlike "both to refuse"
			fi
			;;
		better)
			# perf fails; fdr writes what it writes for the same code with its
			# debug information inside (the file REF)
			"$FDR" probe -x "$B/$ref" -n -v --add "$def" 2>&1 | writes /dev/stdin |
				sed "s|$B/$ref:|$B/$bin:|; s|probe_$ref/|probe_$bin/|" >"$T/ref.w"
			if [ -n "$pw" ] || [ $frc != 0 ] || [ -z "$fw" ] || [ "$fw" != "$(cat "$T/ref.w")" ]; then
				unlike "perf to fail and fdr to write what it writes for $ref"
				diag "  fdr on $ref: $(cat "$T/ref.w")"
			fi
			;;
		beyond)
			# perf fails (bitfields of DWARF 5); fdr writes the kernel's
			# bitfield type (its values: probe-e2e)
			if [ -n "$pw" ] || [ $frc != 0 ] || ! printf '%s\n' "$fw" | grep -q ':b3@1/32'; then
				unlike "perf to fail and fdr to write b3@1/32 for mode"
			fi
			;;
		lsb)
			# perf writes DW_AT_bit_offset (from the top bit) as the kernel's
			# bit offset (from the bottom): fdr must write W@(C-O-W)/C
			pw=$(printf '%s\n' "$pw" | awk '{
				for (i = 1; i <= NF; i++)
					if (match($i, /:b[0-9]+@[0-9]+\/[0-9]+$/)) {
						split(substr($i, RSTART + 2), v, /[@\/]/)
						$i = substr($i, 1, RSTART - 1) ":b" v[1] "@" (v[3] - v[2] - v[1]) "/" v[3]
					}
				print }')
			if [ -z "$pw" ] || [ "$pw" != "$fw" ] || [ $frc != 0 ]; then
				unlike "perf's line with the bit offsets from the bottom" "converted" "$pw"
			fi
			;;
		refuse)
			# perf fetches a wrong value (a computed one read as an address);
			# fdr refuses and says why
			if [ -z "$pw" ] || [ -n "$fw" ] || [ $frc != 1 ] ||
				! grep -q "is a computed value" "$T/fdr.out"; then
				unlike "perf to write and fdr to refuse a computed value"
			fi
			;;
		without)
			# \$vars: fdr leaves out the variable REF that it cannot fetch
			pw=$(printf '%s\n' "$pw" | sed "s/ $ref=[^ ]*//")
			if [ -z "$pw" ] || [ "$pw" != "$fw" ] || [ $frc != 0 ]; then
				unlike "perf's line without $ref" "without $ref" "$pw"
			fi
			;;
		global)
			pw=$(printf '%s\n' "$pw" | perf_globals "$B/$bin")
			if [ -z "$pw" ] || [ "$pw" != "$fw" ] || [ $frc != 0 ]; then
				unlike "perf's line with @SYMBOL+N as @+OFFSET" "made @+OFFSET" "$pw"
			fi
			;;
		esac
	done
	echo "# $n definitions compared with perf probe"
	[ $n -ge 40 ] || { diag "only $n definitions"; st=1; }
	return $st
}

# -F, -V and -L print what perf prints (perf lists a symbol that is in both .symtab
# and .dynsym twice, fdr once: perf's list is made unique before comparing)
test_funcs_vars_lines() {
	local bin p prc frc st=0

	for bin in prog0 prog2 libpp0.so libpp2.so nodebug; do
		for p in '' 'c*' 'lib_*' '*'; do
			"$PERF" probe -x "$B/$bin" -F ${p:+"$p"} 2>&1 | sort -u >"$T/perf.F"
			"$FDR" probe -x "$B/$bin" -F ${p:+"$p"} >"$T/fdr.F" 2>&1
			if ! cmp -s "$T/perf.F" "$T/fdr.F"; then
				diag "-F $p on $bin:"
				diag "$(diff "$T/perf.F" "$T/fdr.F")"
				st=1
			fi
		done
	done
	for bin in prog0 prog2; do
		for p in record_point clamp main count_byte mix 'mix%return' "prog.c:$CB_LOOP" \
			"record_point:$((RP_NEXT - RP_FIRST + 2))" scale; do
			"$PERF" probe -x "$B/$bin" -V "$p" >"$T/perf.V" 2>&1
			"$FDR" probe -x "$B/$bin" -V "$p" >"$T/fdr.V" 2>&1
			if ! cmp -s "$T/perf.V" "$T/fdr.V"; then
				diag "-V $p on $bin:"
				diag "$(diff "$T/perf.V" "$T/fdr.V")"
				st=1
			fi
		done
	done
	# -L: the same listing, or both "not found"
	for bin in prog0 prog2 libpp0.so libpp2.so; do
		for p in record_point clamp scale main count_byte@prog.c 'record_point:4-7' \
			"prog.c:$((CB_LOOP - 4))-$((CB_LOOP + 2))" 'scale:1+3' "prog.c:$MAIN_CALL" \
			box_area span lib.c 'lib_area:2' 'lib.c:10-20'; do
			"$PERF" probe -x "$B/$bin" -L "$p" >"$T/perf.L" 2>&1
			prc=$?
			"$FDR" probe -x "$B/$bin" -L "$p" >"$T/fdr.L" 2>&1
			frc=$?
			if [ $prc != 0 ]; then
				[ $frc = 1 ] && grep -q "^fdr probe: .*not found" "$T/fdr.L" && continue
			elif [ $frc = 0 ] && cmp -s "$T/perf.L" "$T/fdr.L"; then
				continue
			fi
			diag "-L $p on $bin:"
			diag "$(diff "$T/perf.L" "$T/fdr.L")"
			st=1
		done
	done
	for bin in prog0 prog2; do
		for p in record_point clamp; do
			"$PERF" probe -x "$B/$bin" -V "$p" --externs >"$T/perf.V" 2>&1
			"$FDR" probe -x "$B/$bin" -V "$p" --externs >"$T/fdr.V" 2>&1
			if ! cmp -s "$T/perf.V" "$T/fdr.V"; then
				diag "-V $p --externs on $bin:"
				diag "$(diff "$T/perf.V" "$T/fdr.V")"
				st=1
			fi
		done
	done
	"$PERF" probe -x "$B/libpp2.so" -V box_area >"$T/perf.V" 2>&1
	"$FDR" probe -x "$B/libpp2.so" -V box_area >"$T/fdr.V" 2>&1
	cmp -s "$T/perf.V" "$T/fdr.V" || { diag "-V box_area: $(diff "$T/perf.V" "$T/fdr.V")"; st=1; }
	return $st
}

# expect_fail RC PATTERN ARGS...: fdr probe ARGS exits RC and says PATTERN
expect_fail() {
	local want=$1 pat=$2

	shift 2
	"$FDR" probe "$@" >"$T/o" 2>&1
	local rc=$?
	if [ $rc != "$want" ] || ! grep -q -- "$pat" "$T/o"; then
		diag "fdr probe $*: expected exit $want and '$pat', got exit $rc:"
		diag "$(cat "$T/o")"
		return 1
	fi
	return 0
}

test_errors() {
	local st=0

	expect_fail 1 "Probe point 'nosuch' not found.*$B/prog0" -n -x "$B/prog0" -a nosuch || st=1
	expect_fail 1 "Failed to find 'zz' in record_point" -n -x "$B/prog0" -a 'record_point zz' || st=1
	expect_fail 1 "'t' is optimised out at record_point" -n -x "$B/prog2" -a 'record_point t' || st=1
	expect_fail 1 "line 9999 of .*prog.c has no code" -n -x "$B/prog0" -a 'prog.c:9999' || st=1
	expect_fail 1 "shares its address .* probe scale:0 instead" -n -x "$B/prog0" -a 'scale:1' || st=1
	expect_fail 1 "only inlined), and --no-inlines" -n --no-inlines -x "$B/prog0" -a 'clamp v' || st=1
	expect_fail 1 "has no member zz" -n -x "$B/prog0" -a 'record_point it->zz' || st=1
	expect_fail 1 "must be referred by '->'" -n -x "$B/prog0" -a 'record_point it.id' || st=1
	# no debug information: says which file and where fdr looked
	expect_fail 1 "$B/nodebug has none (looked in: $B/nodebug, /usr/lib/debug/.build-id/" \
		-n -x "$B/nodebug" -a 'nd_work a' || st=1
	expect_fail 1 "$B/nodebug has no debug information (looked in: $B/nodebug" \
		-n -x "$B/nodebug" -a 'nodebug.c:3' || st=1
	expect_fail 1 "needs debug information" -n -x "$B/nodebug" -a 'nd_work a' || st=1
	expect_fail 1 "no debug information.*no function symbol" -n -x "$B/nodebug" -a 'nosuch' || st=1
	# bad syntax: exit 2, a caret under the place
	expect_fail 2 "There is non-digit char in line number" -n -x "$B/prog0" -a 'scale:1x' || st=1
	expect_fail 2 "only %return is supported" -n -x "$B/prog0" -a 'scale%entry' || st=1
	expect_fail 2 "Array index must be a number" -n -x "$B/prog0" -a 'record_point it->hist[x]' || st=1
	expect_fail 2 "local variable for kretprobe" -n -x "$B/prog0" -a 'scale%return v' || st=1
	expect_fail 2 "Offset can't be used with line number" -n -x "$B/prog0" -a 'scale:2+4' || st=1
	expect_fail 2 "expected a member name" -n -x "$B/prog0" -a 'record_point it->' || st=1
	expect_fail 2 "expected -x BINARY" -n -a 'scale' || st=1
	expect_fail 2 "Lazy pattern can't be used with line number" -n -x "$B/prog0" -a 'scale:2;r=*' || st=1
	# perf probes the function's entry when no line matches; fdr refuses
	expect_fail 1 "no line of scale with code matches 'nomatch'" -n -x "$B/prog0" -a 'scale;nomatch' || st=1
	expect_fail 2 "Start line must be smaller than end line" -x "$B/prog0" -L 'scale:5-2' || st=1
	expect_fail 1 "has no debug information" -x "$B/nodebug" -L 'nd_work' || st=1
	"$FDR" probe -n -x "$B/prog0" -a 'record_point it->hist[x]' >"$T/o" 2>&1
	# the caret is under the index: 2 spaces of indent, then the column
	if ! grep -qx "  record_point it->hist\[x\]" "$T/o" || ! grep -qx "  $(printf '%*s' 22 '')^" "$T/o"; then
		diag "no caret under the bad index:"
		diag "$(cat "$T/o")"
		st=1
	fi
	return $st
}

# the same lines from the file with its debug information split out
test_debuglink() {
	local def st=0 a b

	for def in 'record_point it->name:string n' 'count_byte buf len' "prog.c:$RP_NEXT it" 'clamp v'; do
		"$FDR" probe -n -v -x "$B/prog2" -a "$def" 2>&1 | writes /dev/stdin |
			sed "s|$B/prog2|BIN|; s|probe_prog2|GRP|" >"$T/a"
		"$FDR" probe -n -v -x "$B/split2" -a "$def" 2>&1 | writes /dev/stdin |
			sed "s|$B/split2|BIN|; s|probe_split2|GRP|" >"$T/b"
		a=$(cat "$T/a")
		b=$(cat "$T/b")
		if [ -z "$a" ] || [ "$a" != "$b" ]; then
			diag "'$def': with the debug information '$a', split out '$b'"
			st=1
		fi
	done
	return $st
}

# the session's names: a second definition of an event is refused, -f adds _1
test_names() {
	local st=0

	"$FDR" start >/dev/null 2>&1 || { diag "fdr start failed"; return 1; }
	run "$FDR" probe -x "$B/prog0" -a 'scale v by'
	if [ $rc != 0 ] || ! grep -q "probe_prog0:scale" "$OUT" ||
		! grep -q "fdr record -e probe_prog0:scale -- " "$OUT"; then
		diag "add: rc $rc $(cat "$OUT" "$ERR")"
		st=1
	fi
	"$FDR" cat uprobe_events >"$T/ue"
	grep -q "^p:probe_prog0/scale $B/prog0:0x[0-9a-f]* v=-20(%bp):s32 by=-24(%bp):s32$" "$T/ue" ||
		{ diag "uprobe_events: $(cat "$T/ue")"; st=1; }
	expect_fail 1 'already exists' -x "$B/prog0" -a 'scale v' || st=1
	run "$FDR" probe -f -x "$B/prog0" -a 'scale v by'
	grep -q "probe_prog0:scale_1" "$OUT" || { diag "-f: $(cat "$OUT" "$ERR")"; st=1; }
	run "$FDR" probe -l
	# perf's layout: the place read back from the debug information
	grep -q "^  probe_prog0:scale_1 *(on scale:2@.*prog.c in $B/prog0 with v by)$" "$OUT" ||
		{ diag "-l: $(cat "$OUT" "$ERR")"; st=1; }
	run "$FDR" probe -d 'probe_prog0:scale*'
	[ $rc = 0 ] && grep -q "Removed event: probe_prog0:scale_1" "$OUT" ||
		{ diag "-d: $(cat "$OUT" "$ERR")"; st=1; }
	[ -z "$("$FDR" cat uprobe_events)" ] || { diag "left: $("$FDR" cat uprobe_events)"; st=1; }
	"$FDR" destroy >/dev/null 2>&1
	return $st
}

# -l against perf probe -l: the same definitions added for real, to the kernel
# by perf and to a session by fdr, listed the same, line for line and in the
# same order. The binaries are copies named after this shell's pid, so that
# their groups (probe_plaPID...) are this run's alone; they are removed from
# the kernel with perf probe -d, at exit too, and checked gone. The event
# names are unique across the groups: perf 6.1 refuses a name another group
# has (fdr accepts it, as the kernel does).
KGROUPS=()
remove_kernel_probes() {
	local g

	for g in "${KGROUPS[@]}"; do
		"$PERF" probe -q -d "$g:*" >/dev/null 2>&1
	done
}
at_exit remove_kernel_probes

test_list() {
	local st=0 row bin def name g
	local -a rows=(
		"prog0|record_point it n" "prog0|scale%return \$retval" "prog0|record_point:2 t it"
		"prog0|clamp v lo hi" "prog0|sc=scale %di X=+0(%di):x64" "prog0|rp8=record_point+8"
		"prog0|rpp=prog.c:$RP_PRINT t it->id"
		"prog2|rp2=record_point it->name:string n" "prog2|rpn=prog.c:$RP_NEXT it" "prog2|cl2=clamp"
		"prog2|count_byte%return \$retval" "prog2|mix w col"
		"libpp0.so|lib_area a b" "libpp0.so|lib_area%return \$retval"
		"nodebug|nd_work" "nodebug|nd4=nd_work+4"
	)

	for bin in prog0 prog2 libpp0.so nodebug; do
		case $bin in
		prog0) name=pla$$ ;;
		prog2) name=plb$$ ;;
		libpp0.so) name=plc$$.so ;;
		nodebug) name=pld$$ ;;
		esac
		cp "$B/$bin" "$B/$name" || return 1
		KGROUPS+=("probe_${name%%.*}")
	done
	export FDR_SESSION=probe-perf-l
	"$FDR" start >/dev/null 2>&1 || { diag "fdr start failed"; return 1; }
	for row in "${rows[@]}"; do
		IFS='|' read -r bin def <<<"$row"
		case $bin in
		prog0) name=pla$$ ;;
		prog2) name=plb$$ ;;
		libpp0.so) name=plc$$.so ;;
		nodebug) name=pld$$ ;;
		esac
		if ! "$PERF" probe -x "$B/$name" --add "$def" >"$T/o" 2>&1; then
			diag "perf probe -x $name --add '$def': $(cat "$T/o")"
			st=1
		fi
		if ! "$FDR" probe -q -x "$B/$name" --add "$def" >"$T/o" 2>&1; then
			diag "fdr probe -x $name --add '$def': $(cat "$T/o")"
			st=1
		fi
	done
	# group by group: perf 6.1 listing several files in one call reads a file
	# without debug information with the previous one's (nd_work:2); fdr's
	# list is one, sorted as perf sorts each (the kernel's lines)
	"$FDR" probe -l >"$T/fdr.all" 2>&1
	for g in "${KGROUPS[@]}"; do
		"$PERF" probe -l "$g:*" >"$T/perf.l" 2>&1
		grep "^  $g:" "$T/fdr.all" >"$T/fdr.l"
		if [ ! -s "$T/perf.l" ] || ! cmp -s "$T/perf.l" "$T/fdr.l"; then
			diag "-l differs from perf probe -l for $g:"
			diag "$(diff "$T/perf.l" "$T/fdr.l")"
			st=1
		fi
	done
	if [ "$(wc -l <"$T/fdr.all")" -lt ${#rows[@]} ]; then
		diag "-l: $(cat "$T/fdr.all")"
		st=1
	fi
	"$FDR" destroy >/dev/null 2>&1
	export FDR_SESSION=probe-perf
	remove_kernel_probes
	for g in "${KGROUPS[@]}"; do
		if grep -q "^[pr]:$g/" "$TRACEFS/uprobe_events"; then
			diag "the kernel's uprobe_events still holds $g: $(grep "^[pr]:$g/" "$TRACEFS/uprobe_events")"
			st=1
		fi
	done
	return $st
}

test_kernel_untouched() {
	[ "$(ours)" = "$K_BEFORE" ] && return 0
	diag "the kernel's uprobe_events changed"
	return 1
}

run_cases "test_perf_table test_funcs_vars_lines test_errors test_debuglink test_names test_list test_kernel_untouched"
tap_summary
