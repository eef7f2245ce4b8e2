#!/bin/sh
# require-tools.sh BOARD - the first step of `make bitstream`: check that
# BOARD is a row of bitstreams/boards.def and that the tools its flow needs
# are on PATH, and otherwise stop, before anything is built, saying what to
# install.  Zynq boards need Vivado; XRT platforms need Vivado (package_xo)
# and Vitis (v++) with the platform installed.
#
# The table is read with the C preprocessor, the same way loomgen reads it,
# so this check needs no build step.
set -eu
board=${1:-}
def=bitstreams/boards.def
CC=${CC:-cc}

expand() {
  printf '#include "%s"\n%s\n' "$def" "$1" | $CC -E -P -I. -x c - | tr -s ' \n' ' '
}
rows=$(expand '#define ROW(name, cfg, flow, part, bp, uram, plat, ...) name cfg flow plat ;
LOOM_BOARDS(ROW)')
version=$(expand 'LOOM_VIVADO_VERSION' | tr -d '" ')

line=$(printf '%s\n' "$rows" | tr ';' '\n' | tr -d '"' | awk -v b="$board" '$1 == b')
if [ -z "$board" ] || [ -z "$line" ]; then
  echo "make bitstream: ${board:+unknown board '$board'; }choose BOARD= one of:" >&2
  printf '%s\n' "$rows" | tr ';' '\n' | tr -d '"' |
    awk 'NF { printf "  %-10s configuration %-8s flow %s\n", $1, $2, $3 }' >&2
  exit 2
fi
set -- $line
cfg=$2
flow=$3
platform=${4:-}

missing=""
command -v vivado > /dev/null 2>&1 || missing="Vivado"
if [ "$flow" = vitis ]; then
  command -v v++ > /dev/null 2>&1 || missing="${missing:+$missing and }Vitis (v++)"
fi
[ -z "$missing" ] && exit 0

cat >&2 <<MSG
make bitstream: $missing not found on PATH; nothing was built.

  Board $board (configuration $cfg) uses the $flow flow, written for
  AMD Vivado${platform:+ and Vitis} $version in batch mode (other releases draw a warning).
MSG
if [ "$flow" = vitis ]; then
  cat >&2 <<MSG
  Install Vitis $version (it includes Vivado), XRT, and the platform
  $platform
  (the card's "development target platform" package), then:
    source /tools/Xilinx/Vitis/$version/settings64.sh
    source /opt/xilinx/xrt/setup.sh
    make bitstream BOARD=$board
MSG
else
  cat >&2 <<MSG
  Install Vivado $version (the free ML Standard edition covers every Zynq
  board here) from https://www.xilinx.com/support/download.html with the
  device family of the board selected, then:
    source /tools/Xilinx/Vivado/$version/settings64.sh
    make bitstream BOARD=$board
MSG
fi
cat >&2 <<MSG

  Without the vendor tools: \`make dtbo\` builds the overlays and
  \`make board-estimates\` the Yosys resource estimates (docs/boards.md).
MSG
exit 1
