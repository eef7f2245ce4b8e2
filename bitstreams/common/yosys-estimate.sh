#!/bin/sh
# yosys-estimate.sh RTL... - Yosys resource estimates for every board, and
# the check that each board's configuration fits its part (`make
# board-estimates`; docs/boards.md).
#
# Each synthesis is hw/synth/estimate.sh's (the RTL's own script,
# hw/synth/loom_synth.tcl, with LOOM_FAMILY xc7 or xcup and, on a board with
# `uram 1`, the buffers LOOM_URAM_BUFFERS names in UltraRAM), and so is the
# count of its resources (LUT, FF, DSP, BRAM36, URAM; see that script).
#
# Boards share runs: one per distinct (family, configuration, uram) of
# GEN/boards/boards.txt (`loomgen boards`), two at a time (ESTIMATE_JOBS),
# each cached in BUILD/boards/<key>/ until its inputs (RTL, headers,
# synthesis scripts) or its recipe change.  Each board's counts are then set
# against its part.
#
# A configuration file instead of the boards: CONFIG=FILE [PART=part] (make
# board-estimates CONFIG=my.cfg) estimates that configuration alone against
# PART (default: the file's part), through `loom config`.
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
estimate=hw/synth/estimate.sh
mkdir -p "$out"
[ $# -gt 0 ] || { echo "yosys-estimate: no RTL files given" >&2; exit 2; }
[ -f "$synth_tcl" ] || { echo "yosys-estimate: $synth_tcl missing" >&2; exit 2; }
LOOMSTA=${LOOMSTA:-$BUILD/tools/loomsta}
[ -x "$LOOMSTA" ] || { echo "yosys-estimate: $LOOMSTA missing (make $LOOMSTA)" >&2; exit 2; }

# Replace a file only when its content changes, so mtimes mean "changed".
update() { cmp -s "$1" "$2" || cp "$1" "$2"; }

# synth KEY FAMILY VH URAM RTL...: run (or reuse) one synthesis of header VH,
# leaving $out/KEY/stat.txt.
synth() {
  key=$1 family=$2 vh=$3 uram=$4
  shift 4
  dir=$out/$key
  mkdir -p "$dir"
  update "$vh" "$dir/loom_cfg.vh"
  buffers=""
  [ "$uram" = 1 ] && buffers=$uram_buffers
  recipe="family=$family uram=$buffers rtl=$*"
  if [ -f "$dir/stat.txt" ] && [ -f "$dir/netlist.json" ] && [ "$(cat "$dir/recipe.txt" 2>/dev/null)" = "$recipe" ] &&
     [ -z "$(find "$@" "$dir/loom_cfg.vh" "$GEN/loom_isa.vh" "$synth_tcl" "$estimate" -newer "$dir/stat.txt" 2>/dev/null)" ]; then
    echo "yosys-estimate: $key: up to date ($dir/stat.txt)"
    return 0
  fi
  echo "yosys-estimate: $key: synth_xilinx -family $family${buffers:+, UltraRAM: $buffers} (log: $dir/yosys.log)"
  start=$(date +%s)
  if ! GEN=$GEN LOOM_JSON=1 LOOM_RTL_FILES="$*" "$estimate" "$dir/loom_cfg.vh" "$family" "$buffers" "$dir"; then
    rm -f "$dir/stat.txt"
    return 1
  fi
  echo "$recipe" > "$dir/recipe.txt"
  echo "yosys-estimate: $key: $(( $(date +%s) - start )) s"
}

count() { "$estimate" --count "$1"; }

# verdict NAME CFG FAMILY "LUT FF DSP BRAM URAM" "capacities": "VERDICT WORST | row |"
verdict() {
  awk -v name="$1" -v cfg="$2" -v fam="$3" -v used="$4" -v caps="$5" '
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
      split(used, u, " "); split(caps, c, " ")
      worst = 0
      row = sprintf("| `%s` | `%s` | %s | %s | %s | %s | %s | %s |", name, cfg, fam,
                    cell(u[1], c[1], "%d"), cell(u[2], c[2], "%d"), cell(u[3], c[3], "%d"),
                    cell(u[4], c[4], "%.1f"), cell(u[5], c[5], "%d"))
      v = worst > 100 ? "NO" : worst > 85 ? "tight" : "yes"
      printf "%s %.0f %s %s |\n", v, worst, row, v
    }'
}

# sta KEY NAME PART MHZ: loomsta on KEY's netlist with PART's delay model
# against MHZ; prints "MET FMAX MODEL WORST_NS LEVELS" (MET: yes or NO), or
# fails with a message.
sta() {
  d=$out/$1
  "$LOOMSTA" --part "$3" --clock "$4" --top 10 --detail 3 --summary "$d/timing-$2.sum" \
    --markdown "$d/timing-$2.md" "$d/netlist.json" > "$d/timing-$2.txt" 2> "$d/timing-$2.err"
  rc=$?
  if [ $rc -ne 0 ] && [ $rc -ne 3 ]; then
    echo "yosys-estimate: $2: loomsta failed: $(cat "$d/timing-$2.err")" >&2
    return 1
  fi
  met=yes
  [ $rc -eq 3 ] && met=NO
  awk -v met=$met '{ v[$1] = $2 } END { print met, v["fmax_mhz"], v["model"], v["worst_ns"], v["levels"] }' \
    "$d/timing-$2.sum"
}

# ---- CONFIG=FILE: one configuration against one part ----
if [ -n "${CONFIG:-}" ]; then
  LOOM=${LOOM:-$BUILD/bin/loom}
  LOOMGEN=${LOOMGEN:-$BUILD/tools/loomgen}
  part=${PART:-$("$LOOM" config show "$CONFIG" | sed -n 's/^part = //p')}
  [ -n "$part" ] || exit 1
  set -- $("$LOOMGEN" parts | awk -v p="$part" '$1 == p { print $2, $3, $4, $5, $6, $7 }')
  [ $# -eq 6 ] || { echo "yosys-estimate: $CONFIG: unknown part '$part'" >&2; exit 1; }
  family=$1 caps="$2 $3 $4 $5 $6"
  check=$("$LOOM" config check "$CONFIG" --part "$part") || exit 1
  uram=0 uram_buffers=""
  case $check in *UltraRAM*) uram=1 uram_buffers=$(echo "$check" | sed -n 's/.*(\(.*\) in UltraRAM).*/\1/p') ;; esac
  name=$("$LOOM" config show "$CONFIG" | sed -n 's/^name = //p')
  key=config-$name-$family$( [ "$uram" = 1 ] && echo -uram)
  mkdir -p "$out/$key"
  "$LOOM" config vh "$CONFIG" > "$out/$key/config.vh" || exit 1
  synth "$key" "$family" "$out/$key/config.vh" "$uram" $(cat hw/rtl/loom_rtl.f) || exit 1
  line=$(verdict "$CONFIG" "$name" "$family" "$(count "$out/$key/stat.txt")" "$caps")
  echo "| config | name | family | LUT | FF | DSP | BRAM36 | URAM | fits |"
  echo "|---|---|---|---|---|---|---|---|---|"
  echo "${line#* * }"
  case ${line%% *} in NO) echo "yosys-estimate: $CONFIG does not fit $part" >&2; exit 1 ;; esac
  mhz=$("$LOOM" config show "$CONFIG" | sed -n 's/^clock_mhz = //p')
  r=$(sta "$key" "$name" "$part" "$mhz") || exit 1
  set -- $r
  echo "yosys-estimate: $CONFIG: estimated Fmax $2 MHz on $part ($3; worst path $4 ns, $5 logic levels; report $out/$key/timing-$name.txt)"
  [ "$1" = yes ] || { echo "yosys-estimate: $CONFIG: estimated Fmax $2 MHz is below its clock of $mhz MHz" >&2; exit 1; }
  exit 0
fi

[ -f "$boards" ] || { echo "yosys-estimate: $boards missing (make board-files)" >&2; exit 2; }
# The boards to estimate: all, or those ESTIMATE_BOARDS names (then the
# files below get the names as a suffix, so runs for different boards can
# go side by side).
tag=""
[ -n "${ESTIMATE_BOARDS:-}" ] && tag=-$(echo $ESTIMATE_BOARDS | tr ' ' '-')
selected=$out/boards$tag.txt
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
# The same list for every board; the first board's Tcl parameters have it.
uram_buffers=$(sed -n 's/.* uram_buffers {\([^}]*\)}.*/\1/p' "$GEN"/boards/loom_board_*.tcl | head -n 1)

key_of() { echo "$1-$2$( [ "$3" = 1 ] && echo -uram)"; }

jobs=${ESTIMATE_JOBS:-2}
pids=""
for triple in $(awk '{ print $5 "," $2 "," $6 }' "$boards" | sort -u); do
  IFS=, read -r family cfg uram <<TRIPLE
$triple
TRIPLE
  synth "$(key_of "$family" "$cfg" "$uram")" "$family" "$GEN/loom_cfg_$cfg.vh" "$uram" "$@" &
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

table=$out/estimates$tag.md.tmp
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
  line=$(verdict "$name" "$cfg" "$family" "$1 $2 $3 $4 $5" "$lut_cap $ff_cap $dsp_cap $bram_cap $uram_cap")
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
mv "$table" "$out/estimates$tag.md"
cat "$out/estimates$tag.md"
[ $status -eq 0 ] && echo "yosys-estimate: every board's configuration fits its part"

# Timing: each board's netlist against its part's delay model and its clock.
table=$out/timing$tag.md.tmp
{
  echo "| board | config | part | clock | estimated Fmax | worst path (logic levels) | met |"
  echo "|---|---|---|---|---|---|---|"
} > "$table"
tstatus=0
while read -r name cfg flow part family uram mhz rest; do
  r=$(sta "$(key_of "$family" "$cfg" "$uram")" "$name" "$part" "$mhz") || { tstatus=1; continue; }
  set -- $r
  if [ "$1" = NO ]; then
    echo "yosys-estimate: $name: configuration $cfg's estimated Fmax $2 MHz is below its clock of $mhz MHz ($out/$(key_of "$family" "$cfg" "$uram")/timing-$name.txt)" >&2
    tstatus=1
  fi
  echo "| \`$name\` | \`$cfg\` | $part | $mhz MHz | $2 MHz ($3) | $4 ns ($5) | $1 |" >> "$table"
done < "$boards"
mv "$table" "$out/timing$tag.md"
cat "$out/timing$tag.md"
[ $tstatus -eq 0 ] && echo "yosys-estimate: every board's configuration is estimated to reach its clock"
[ $tstatus -eq 0 ] || status=1
exit $status
