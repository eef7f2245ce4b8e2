#!/bin/sh
# vitis-link.sh BOARD BOARD_GEN OUT - the second half of `make bitstream`
# for XRT platforms: link OUT/loom.xo (written by bitstreams/<board>/build.tcl)
# into the board's platform with v++, giving OUT/loom.xclbin.
#
# Two config files: BOARD_GEN/vitis_<board>.cfg, generated from
# bitstreams/boards.def (platform, kernel clock from the configuration), and
# bitstreams/<board>/link.cfg (memory connectivity, implementation options).
set -eu
board=$1
gen=$2
out=$3
v++ -l -t hw \
  --config "$gen/vitis_$board.cfg" \
  --config "bitstreams/$board/link.cfg" \
  --temp_dir "$out/_x" --log_dir "$out/logs" --report_dir "$out/reports" \
  -o "$out/loom.xclbin" "$out/loom.xo"
echo "bitstream: $out/loom.xclbin (docs/deploy.md, \`loom run --backend xrt\`)"
