#!/bin/sh
# yosys-estimate.sh RTL... - Yosys resource estimates for every board, and
# the check that each board's configuration fits its part (`make
# board-estimates`; docs/boards.md).
#
# The synthesis itself is the RTL's own script, hw/synth/loom_synth.tcl
# (what `make synth` runs), driven through its environment: LOOM_RTL_FILES,
# LOOM_INC, LOOM_SYNTH_OUT, and for the boards LOOM_FAMILY (xc7 or xcup)
# and LOOM_PRE_SYNTH (Yosys commands between `hierarchy` and
# `synth_xilinx`).  Until that script reads the last two itself, this
# wrapper runs a copy with `-family xc7` replaced and the hook inserted
# (build/boards/loom_synth.tcl); nothing else of it is changed.
#
# Boards share runs: one per distinct (family, configuration, uram) of
# GEN/boards/boards.txt (`loomgen boards`), two at a time (ESTIMATE_JOBS),
# each cached in BUILD/boards/<key>/ until its inputs (RTL, headers,
# synthesis script) or its recipe change.  On a board with `uram 1` the
# buffers LOOM_URAM_BUFFERS names get ram_style "ultra" on loom_sram's
# memory `mem` (through the module each instance uses, so the design keeps
# its hierarchy and its speed), exactly as the Vivado flow's XDC gives them
# RAM_STYLE ULTRA; Yosys's -uram alone picks block RAM by cost and would
# not match.  Each board's counts are then set against its part:
#
#   LUT     LUT1..LUT6 plus the LUTs inside LUT RAMs and shift registers
#   FF      FDRE, FDSE, FDCE, FDPE
#   DSP     DSP48E1 / DSP48E2
#   BRAM36  RAMB36 + RAMB18 / 2
#   URAM    URAM288
#
# Anything above 100% fails; above 85% draws a warning, since Vivado rarely
# routes a fuller device at the target clock.  The table goes to stdout and
# to BUILD/boards/estimates.md, for docs/boards.md.
#
# Each run also writes its flattened netlist (LOOM_JSON=1), and loomsta
# (LOOMSTA, default BUILD/tools/loomsta; docs/rtl.md "Timing") estimates
# every board's Fmax from it with the delay model of the board's part: the
# report is BUILD/boards/<key>/timing-<board>.txt, the table
# BUILD/boards/timing.md.  A board whose configuration's clock is above its
# estimated Fmax fails the check.  ESTIMATE_BOARDS="a b" restricts all of
# this to the named boards (`make timing` uses it for one).
set -u
BUILD=${BUILD:-build}
GEN=${GEN:-$BUILD/gen}
out=$BUILD/boards
boards=$GEN/boards/boards.txt
synth_tcl=hw/synth/loom_synth.tcl
mkdir -p "$out"
[ $# -gt 0 ] || { echo "yosys-estimate: no RTL files given" >&2; exit 2; }
[ -f "$boards" ] || { echo "yosys-estimate: $boards missing (make board-files)" >&2; exit 2; }
[ -f "$synth_tcl" ] || { echo "yosys-estimate: $synth_tcl missing" >&2; exit 2; }
LOOMSTA=${LOOMSTA:-$BUILD/tools/loomsta}
[ -x "$LOOMSTA" ] || { echo "yosys-estimate: $LOOMSTA missing (make $LOOMSTA)" >&2; exit 2; }
# The boards to estimate: all, or those ESTIMATE_BOARDS names.
selected=$out/boards.txt
if [ -n "${ESTIMATE_BOARDS:-}" ]; then
  for b in $ESTIMATE_BOARDS; do
    grep -q "^$b " "$boards" || { echo "yosys-estimate: no board $b in $boards" >&2; exit 2; }
  done
  awk -v list=" $ESTIMATE_BOARDS " 'index(list, " " $1 " ")' "$boards" > "$selected.new"
else
  cp "$boards" "$selected.new"
fi
mv "$selected.new" "$selected"
boards=$selected

# Replace a file only when its content changes, so mtimes mean "changed".
update() { cmp -s "$1" "$2" || cp "$1" "$2"; }

if ! grep -q LOOM_FAMILY "$synth_tcl"; then
  sed -e 's/synth_xilinx -family xc7/synth_xilinx -family $::env(LOOM_FAMILY)/' \
      -e 's/^\(synth_xilinx .*\)$/if {$::env(LOOM_PRE_SYNTH) ne ""} { eval $::env(LOOM_PRE_SYNTH) }\n\1/' \
      "$synth_tcl" > "$out/loom_synth.tcl.new"
  grep -q 'LOOM_FAMILY' "$out/loom_synth.tcl.new" || { echo "yosys-estimate: cannot adapt $synth_tcl" >&2; exit 2; }
  update "$out/loom_synth.tcl.new" "$out/loom_synth.tcl"
  synth_tcl=$out/loom_synth.tcl
fi

# The same list for every board; the first board's Tcl parameters have it.
uram_buffers=$(sed -n 's/.* uram_buffers {\([^}]*\)}.*/\1/p' "$GEN"/boards/loom_board_*.tcl | head -n 1)

# synth KEY FAMILY CONFIG URAM RTL...: run (or reuse) one synthesis,
# leaving $out/KEY/stat.txt.
synth() {
  key=$1 family=$2 cfg=$3 uram=$4
  shift 4
  dir=$out/$key
  inc=$dir/inc
  mkdir -p "$inc"
  update "$GEN/loom_cfg_$cfg.vh" "$inc/loom_cfg.vh"
  update "$GEN/loom_isa.vh" "$inc/loom_isa.vh"
  pre=""
  if [ "$uram" = 1 ]; then
    for buf in $uram_buffers; do
      pre="$pre${pre:+; }setattr -set ram_style {\"ultra\"} loom_top/$buf %M m:mem %i"
    done
  fi
  recipe="family=$family pre=$pre rtl=$*"
  if [ -f "$dir/stat.txt" ] && [ -f "$dir/netlist.json" ] &&
     [ "$(cat "$dir/recipe.txt" 2>/dev/null)" = "$recipe" ] &&
     [ -z "$(find "$@" "$inc" "$synth_tcl" -newer "$dir/stat.txt" 2>/dev/null)" ]; then
    echo "yosys-estimate: $key: up to date ($dir/stat.txt)"
    return 0
  fi
  echo "yosys-estimate: $key: synth_xilinx -family $family${pre:+, first: $pre} (log: $dir/yosys.log)"
  start=$(date +%s)
  rm -f "$dir/stat.txt"
  if ! LOOM_RTL_FILES="$*" LOOM_INC="$inc" LOOM_SYNTH_OUT="$dir" LOOM_FAMILY=$family LOOM_JSON=1 \
      LOOM_PRE_SYNTH="$pre" yosys -q -l "$dir/yosys.log" -c "$synth_tcl" > /dev/null 2>&1 ||
      [ ! -f "$dir/stat.txt" ]; then
    echo "yosys-estimate: $key: yosys failed; tail of $dir/yosys.log:" >&2
    tail -n 20 "$dir/yosys.log" >&2
    rm -f "$dir/stat.txt"
    return 1
  fi
  echo "$recipe" > "$dir/recipe.txt"
  echo "yosys-estimate: $key: $(( $(date +%s) - start )) s"
}

# count STAT -> "lut ff dsp bram36 uram": the totals (the last "design
# hierarchy" section when the design kept its hierarchy, else the one
# flattened module).
count() {
  awk '
    /=== design hierarchy ===/ { split("", n); hier = 1 }
    /Number of cells:/ { if (!hier) split("", n); on = 1; next }
    on && NF == 2 && $2 ~ /^[0-9]+$/ { n[$1] += $2 }
    END {
      lut = n["LUT1"] + n["LUT2"] + n["LUT3"] + n["LUT4"] + n["LUT5"] + n["LUT6"] \
          + 4 * (n["RAM32M"] + n["RAM64M"] + n["RAM128X1D"] + n["RAM256X1S"]) \
          + 8 * (n["RAM32M16"] + n["RAM64M8"] + n["RAM256X1D"]) \
          + 2 * (n["RAM32X1D"] + n["RAM64X1D"] + n["RAM128X1S"]) \
          + n["RAM32X1S"] + n["RAM64X1S"] + n["SRL16E"] + n["SRLC16E"] + n["SRLC32E"]
      ff = n["FDRE"] + n["FDSE"] + n["FDCE"] + n["FDPE"]
      dsp = n["DSP48E1"] + n["DSP48E2"]
      bram = n["RAMB36E1"] + n["RAMB36E2"] + (n["RAMB18E1"] + n["RAMB18E2"]) / 2
      printf "%d %d %d %.1f %d\n", lut, ff, dsp, bram, n["URAM288"]
    }' "$1"
}

key_of() { echo "$1-$2$( [ "$3" = 1 ] && echo -uram)"; }

jobs=${ESTIMATE_JOBS:-2}
pids=""
for triple in $(awk '{ print $5 "," $2 "," $6 }' "$boards" | sort -u); do
  IFS=, read -r family cfg uram <<TRIPLE
$triple
TRIPLE
  synth "$(key_of "$family" "$cfg" "$uram")" "$family" "$cfg" "$uram" "$@" &
  pids="$pids $!"
  if [ "$(echo $pids | wc -w)" -ge "$jobs" ]; then
    first=${pids# }
    first=${first%% *}
    wait "$first"
    pids=${pids#* $first}
  fi
done
wait
status=0
for triple in $(awk '{ print $5 "," $2 "," $6 }' "$boards" | sort -u); do
  IFS=, read -r family cfg uram <<TRIPLE
$triple
TRIPLE
  [ -f "$out/$(key_of "$family" "$cfg" "$uram")/stat.txt" ] || status=1
done
[ $status -eq 0 ] || exit 1

table=$out/estimates.md.tmp
{
  echo "| board | config | family | LUT | FF | DSP | BRAM36 | URAM | fits |"
  echo "|---|---|---|---|---|---|---|---|---|"
} > "$table"
while read -r name cfg flow part family uram mhz lut_cap ff_cap dsp_cap bram_cap uram_cap need_bram need_uram; do
  set -- $(count "$out/$(key_of "$family" "$cfg" "$uram")/stat.txt")
  # loomgen's tiling (what `make test` checks) should match what Yosys did.
  [ "$4" = "$need_bram" ] ||
    echo "yosys-estimate: $name: note: Yosys maps the buffers to $4 BRAM36, loomgen counts $need_bram"
  # One line: verdict, fullest percentage, the table row.
  line=$(awk -v name="$name" -v cfg="$cfg" -v fam="$family" \
      -v lut="$1" -v ff="$2" -v dsp="$3" -v bram="$4" -v ur="$5" \
      -v clut="$lut_cap" -v cff="$ff_cap" -v cdsp="$dsp_cap" -v cbram="$bram_cap" -v cur="$uram_cap" '
    function cell(used, cap, fmt,   p) {
      if (cap == 0) {
        if (used > 0) worst = 999
        return used > 0 ? sprintf(fmt " (none on part)", used) : "-"
      }
      p = 100 * used / cap
      if (p > worst) worst = p
      return sprintf(fmt " (%.0f%%)", used, p)
    }
    BEGIN {
      worst = 0
      row = sprintf("| `%s` | `%s` | %s | %s | %s | %s | %s | %s |", name, cfg, fam,
                    cell(lut, clut, "%d"), cell(ff, cff, "%d"), cell(dsp, cdsp, "%d"),
                    cell(bram, cbram, "%.1f"), cell(ur, cur, "%d"))
      verdict = worst > 100 ? "NO" : worst > 85 ? "tight" : "yes"
      printf "%s %.0f %s %s |\n", verdict, worst, row, verdict
    }')
  verdict=${line%% *}
  line=${line#* }
  worst=${line%% *}
  echo "${line#* }" >> "$table"
  case $verdict in
    NO) echo "yosys-estimate: $name: configuration $cfg does not fit $part (fullest resource at $worst%)" >&2
        status=1 ;;
    tight) echo "yosys-estimate: $name: warning: $cfg fills $part to $worst% (Vivado may not route it at $mhz MHz)" ;;
  esac
done < "$boards"
mv "$table" "$out/estimates.md"
cat "$out/estimates.md"
[ $status -eq 0 ] && echo "yosys-estimate: every board's configuration fits its part"

# Timing: each board's netlist against its part's delay model and its clock.
table=$out/timing.md.tmp
{
  echo "| board | config | part | clock | estimated Fmax | worst path (logic levels) | met |"
  echo "|---|---|---|---|---|---|---|"
} > "$table"
tstatus=0
while read -r name cfg flow part family uram mhz rest; do
  dir=$out/$(key_of "$family" "$cfg" "$uram")
  "$LOOMSTA" --part "$part" --clock "$mhz" --top 10 --detail 3 --summary "$dir/timing-$name.sum" \
    --markdown "$dir/timing-$name.md" "$dir/netlist.json" > "$dir/timing-$name.txt" 2> "$dir/timing-$name.err"
  rc=$?
  if [ $rc -ne 0 ] && [ $rc -ne 3 ]; then
    echo "yosys-estimate: $name: loomsta failed: $(cat "$dir/timing-$name.err")" >&2
    tstatus=1
    continue
  fi
  val() { awk -v k="$1" '$1 == k { print $2 }' "$dir/timing-$name.sum"; }
  fmax=$(val fmax_mhz)
  met=yes
  if [ $rc -eq 3 ]; then
    met=NO
    echo "yosys-estimate: $name: configuration $cfg's estimated Fmax $fmax MHz is below its clock of $mhz MHz ($dir/timing-$name.txt)" >&2
    tstatus=1
  fi
  echo "| \`$name\` | \`$cfg\` | $part | $mhz MHz | $fmax MHz ($(val model)) | $(val worst_ns) ns ($(val levels)) | $met |" >> "$table"
done < "$boards"
mv "$table" "$out/timing.md"
cat "$out/timing.md"
[ $tstatus -eq 0 ] && echo "yosys-estimate: every board's configuration is estimated to reach its clock"
[ $tstatus -eq 0 ] || status=1
exit $status
