#!/bin/sh
# roofline.sh RESULTS.json PREFIX - roofline plots with gnuplot, PNG and SVG.
#
#   PREFIX.{png,svg}        the twelve ResNet-18 conv workloads and the GEMM sweep
#   PREFIX_NET.{png,svg}    one per network in RESULTS: every accelerator layer
#                           with MACs, labelled with its job number
#
# x: arithmetic intensity (MACs per DRAM byte the hardware counters saw),
# y: achieved MACs per cycle on tsim.  The ceilings are the configuration's
# (results.json .config, from the generated table): compute = peak MACs per
# cycle, bandwidth = DRAM bytes per cycle x intensity; the ridge is where
# they meet.
set -eu
R=$1
P=$2
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
PEAK=$(jq .config.peak_macs_per_cycle "$R")
BPC=$(jq .config.dram_bytes_per_cycle "$R")
CFG=$(jq -r '"\(.config.name) \(.config.batch)x\(.config.block_in)x\(.config.block_out)"' "$R")

# plot OUT TITLE DATA1 TITLE1 [DATA2 TITLE2]: DATA = "x y label" lines
plot() {
  out=$1 title=$2
  shift 2
  series="'$1' using 1:2 with points pt 7 ps 1.2 lc rgb '#1f77b4' title '$2', \
'$1' using 1:2:3 with labels offset 0.6,0.6 left font ',8' notitle"
  if [ $# -ge 4 ] && [ -s "$3" ]; then
    series="$series, '$3' using 1:2 with points pt 5 ps 1 lc rgb '#2ca02c' title '$4', \
'$3' using 1:2:3 with labels offset 0.6,-0.6 left font ',7' tc rgb '#2ca02c' notitle"
  fi
  # axes: powers of two around the points, at least 4..128 MACs/byte and 32..peak
  files=$1
  [ $# -ge 4 ] && files="$1 $3"
  # shellcheck disable=SC2086 # one or two file names
  range=$(cat $files | awk 'NF >= 2 && $1 > 0 && $2 > 0 {
      if (!n++ || $1 < x0) x0 = $1; if ($1 > x1) x1 = $1; if (n == 1 || $2 < y0) y0 = $2 }
    function lo(v, c) { p = 1; while (p > v) p /= 2; while (p * 2 <= v) p *= 2; return p < c ? p : c }
    function hi(v, c) { p = 1; while (p < v) p *= 2; return p > c ? p : c }
    END { print lo(x0, 4), hi(x1 * 1.5, 128), lo(y0, 32) }')
  # shellcheck disable=SC2086 # three numbers
  set -- $range
  xlo=$1 xhi=$2 ylo=$3
  for term in png svg; do
    if [ $term = png ]; then t="pngcairo size 1000,700 font 'sans,10'"; else t="svg size 1000,700 font 'sans,10'"; fi
    gnuplot <<GP
set terminal $t
set output '$out.$term'
set title "$title"
set logscale xy 2
set xrange [$xlo:$xhi]
set yrange [$ylo:$PEAK * 1.6]
set xlabel 'arithmetic intensity (MACs per DRAM byte)'
set ylabel 'achieved MACs per cycle'
set key bottom right
set grid
set samples 2000
peak = $PEAK
bpc = $BPC
roof(x) = (bpc * x < peak) ? bpc * x : peak
set arrow from peak / bpc, $ylo to peak / bpc, peak nohead dt 3 lc rgb '#888888'
set label sprintf('compute ceiling: %d MACs/cycle', peak) at peak / bpc * 1.1, peak * 1.12 font ',9'
set label sprintf('bandwidth ceiling: %d B/cycle x intensity', bpc) at $xlo * 1.25, bpc * $xlo * 1.25 * 1.25 rotate by 38 font ',9'
plot roof(x) with lines lw 2 lc rgb '#d62728' title 'roofline ($CFG)', $series
GP
  done
}

jq -r '.workloads // [] | .[] | "\(.intensity) \(.achieved_macs_per_cycle) \(.name)"' "$R" > "$TMP/wl"
jq -r --argjson peak "$PEAK" '.gemm.sweep // [] | .[] |
  "\(.gemm_ops * $peak / .dram_bytes) \(.macs_per_cycle) \(.name | sub("gemm_"; ""))"' "$R" > "$TMP/gemm"
if [ -s "$TMP/wl" ]; then
  plot "$P" "Roofline: ResNet-18 conv workloads and GEMM sweep on tsim" \
    "$TMP/wl" "ResNet-18 conv workloads (one layer each)" "$TMP/gemm" "GEMM sweep (MxKxN)"
fi
for net in $(jq -r '.networks[].net' "$R"); do
  jq -r --arg n "$net" '.networks[] | select(.net == $n) | .layers[] | select(.macs > 0) |
    "\(.intensity) \(.achieved_macs_per_cycle) \(.job)"' "$R" > "$TMP/net"
  plot "${P}_$net" "Roofline: $net on tsim, one point per accelerator job" "$TMP/net" "$net layers (job number)"
done
