#!/bin/sh
# test_loomsta.sh - loomsta (scripts/loomsta*.c), the logic-level counter
# and timing estimate behind `make timing`, on small hand-written netlists
# of Xilinx primitives whose paths are known:
#
#   lut_chain    FDRE -> 4 LUTs -> FDRE, with a shorter side path
#   carry_chain  FDRE -> LUT -> 3 chained CARRY4 -> FDRE (12-bit adder)
#   dsp_stage    FDRE -> DSP48E1 multiplier and ALU -> P register
#   bram_read    RAMB18E1 (no output register) -> LUT -> FDRE
#
# For each: the worst path's start and end registers, its logic levels and
# its delay, which is the sum of the model's delays along the path
# (docs/rtl.md "Timing" gives the numbers); the xcup-2 model on one of them;
# the --clock check (exit 3 below the clock).  Then the errors: a
# combinational loop, a cell the model does not know, a missing file, a
# file that is not a netlist, an unknown part, a bad number.
set -u
BUILD=${BUILD:-build}
sta=$BUILD/tools/loomsta
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
fail() { echo "test_loomsta: $*" >&2; status=1; }

netlist() {
  yosys -q -p "read_verilog -lib -nowb +/xilinx/cells_sim.v +/xilinx/cells_xtra.v; \
    read_verilog tests/sta/$1.v; hierarchy -top $1; write_json $tmp/$1.json" > "$tmp/$1.yosys" 2>&1 ||
    { fail "$1: yosys failed: $(head -3 "$tmp/$1.yosys")"; return 1; }
}

# expect NAME MODEL KEY VALUE...: the summary of NAME under MODEL has each
# KEY with exactly VALUE.
expect() {
  name=$1 model=$2
  shift 2
  "$sta" --model "$model" --summary "$tmp/$name.$model.sum" "$tmp/$name.json" > "$tmp/$name.$model.out" 2>&1 ||
    { fail "$name ($model): loomsta failed: $(cat "$tmp/$name.$model.out")"; return; }
  while [ $# -ge 2 ]; do
    got=$(awk -v k="$1" '$1 == k { $1 = ""; sub(/^ /, ""); print }' "$tmp/$name.$model.sum")
    [ "$got" = "$2" ] || fail "$name ($model): $1 is '$got', expected '$2'"
    shift 2
  done
}

for t in lut_chain carry_chain dsp_stage bram_read comb_loop unknown_cell; do netlist $t; done

# 0.46 clock-to-Q; 0.60 net (fanout 2) + 0.124 LUT; three times 0.45 net +
# 0.124 LUT; the last LUT drives only the register's D (same slice, no
# route) + 0.05 setup: 2.956 ns.
expect lut_chain xc7-1 worst_ns 2.956 levels 4 worst_from q0 worst_to y deepest_levels 4 path_ends 1 \
  fmax_mhz 311.9
grep -q '4 (LUT 4)' "$tmp/lut_chain.xc7-1.out" || fail "lut_chain: no '4 (LUT 4)' in the report"
# The same path in the UltraScale+ -2 model: 0.10 + (0.25 + 0.10) + 3 x (0.20 + 0.10) + 0.04.
expect lut_chain xcup-2 worst_ns 1.390 levels 4
# 0.46; 0.60 + 0.124 into S[0]; 0.50 to CO[3]; the chain: 0.114 through the
# second CARRY4, 0.31 from CI to O[3] of the third; + 0.05 setup.
expect carry_chain xc7-1 worst_ns 2.158 levels 4 worst_from 'q[0]' worst_to y
grep -q '4 (LUT 1, CARRY 3)' "$tmp/carry_chain.xc7-1.out" || fail "carry_chain: levels not 1 LUT + 3 CARRY"
# 0.46; 0.60 net (fanout 2: A and B); 1.55 multiplier, 1.05 ALU; 0.30 setup of PREG.
expect dsp_stage xc7-1 worst_ns 3.960 levels 2 worst_from 'q[0]' worst_to 'u_dsp PREG[0]' path_ends 2
# 2.46 block RAM clock-to-out; 0.45 net + 0.124 LUT; 0.05 setup.
expect bram_read xc7-1 worst_ns 3.084 levels 1 worst_from 'do_a[0]' worst_to y

# The clock check: 311.9 MHz meets 300 and fails 320 (exit 3, one line).
"$sta" --model xc7-1 --clock 300 "$tmp/lut_chain.json" > "$tmp/c300" 2>&1 || fail "--clock 300: exit $?"
grep -q '(clock 300 MHz: met)' "$tmp/c300" || fail "--clock 300: not reported as met"
"$sta" --model xc7-1 --clock 320 "$tmp/lut_chain.json" > "$tmp/c320" 2> "$tmp/c320.err"
rc=$?
[ $rc -eq 3 ] || fail "--clock 320: exit $rc, expected 3"
grep -q 'estimated Fmax 311.9 MHz is below the clock of 320 MHz' "$tmp/c320.err" || fail "--clock 320: $(cat "$tmp/c320.err")"
# A part name picks its family and grade.
"$sta" --part xczu7ev-ffvc1156-2-e "$tmp/lut_chain.json" | grep -q '^model xcup-2:' || fail "--part xczu7ev-...-2-e is not xcup-2"
"$sta" --part xc7z020clg400-1 "$tmp/lut_chain.json" | grep -q '^model xc7-1:' || fail "--part xc7z020clg400-1 is not xc7-1"

# errors: CASE EXPECTED-EXIT MESSAGE-PATTERN ARGS...
error() {
  what=$1 want=$2 pattern=$3
  shift 3
  "$sta" "$@" > "$tmp/err.out" 2> "$tmp/err.txt"
  rc=$?
  [ $rc -eq "$want" ] || fail "$what: exit $rc, expected $want"
  [ "$(wc -l < "$tmp/err.txt")" -eq 1 ] || fail "$what: not one line on stderr: $(cat "$tmp/err.txt")"
  grep -q -e "$pattern" "$tmp/err.txt" || fail "$what: '$(cat "$tmp/err.txt")' lacks '$pattern'"
}
echo '{"creator": "not a netlist"}' > "$tmp/empty.json"
printf '{"modules": {' > "$tmp/cut.json"
error "combinational loop" 1 'combinational loop through n' "$tmp/comb_loop.json"
error "unknown cell" 1 "unknown_cell.json: no delay model for cell type PLLE2_BASE" "$tmp/unknown_cell.json"
error "missing file" 1 "loomsta: $tmp/none.json: " "$tmp/none.json"
error "not a netlist" 1 "empty.json: no top module" "$tmp/empty.json"
error "truncated JSON" 1 "cut.json: " "$tmp/cut.json"
error "unknown part" 2 "no delay model for part xc9z999-1" --part xc9z999-1 "$tmp/lut_chain.json"
error "bad number" 2 "--clock: not a number: fast" --clock fast "$tmp/lut_chain.json"

[ $status -eq 0 ] && echo "test_loomsta: ok (4 netlists, 2 models, 7 errors)"
exit $status
