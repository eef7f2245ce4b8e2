#!/bin/sh
# test_board_files.sh - the board files agree with the register map, the
# configurations and the Linux driver's binding:
#
#   - every row of bitstreams/boards.def has its directory, and every board
#     directory is a row; the configuration's buffers fit the board's part
#     (BRAM36 and URAM288, as `loomgen boards` tiles them);
#   - each committed overlay (bitstreams/<board>/loom.dtso) is exactly what
#     `loomgen dtso` generates, compiles with `dtc -@` without a warning,
#     covers the whole register map, and names the driver's compatible
#     string and clock (driver/linux, docs/linux-driver.md) once they exist;
#   - kernel.xml for every configuration puts each kernel argument at the
#     register the generated C header gives (LOOM_REG_*), is well formed,
#     and has the configuration's bus width; the v++ settings carry the
#     configuration's clock.
#
# The C header is the check's independent view of the register map: it is
# what tsim, the Linux driver and the XRT backend compile against.
set -u
BUILD=${BUILD:-build}
loomgen=$BUILD/tools/loomgen
header=$BUILD/gen/loom_isa_gen.h
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
fail() { echo "test_board_files: $*" >&2; status=1; }
# One snapshot: a concurrent `make gen` rewrites the header in place.
cp "$header" "$tmp/header.h" || exit 1
header=$tmp/header.h

hdr() { sed -n "s/^#define $1 \([0-9A-Fa-fx]*\)u\{0,1\}\( .*\)\{0,1\}\$/\1/p" "$header" | head -n 1; }
enum() { sed -n "s/^ *$1 = \([0-9]*\),\{0,1\}.*/\1/p" "$header" | head -n 1; }

"$loomgen" boards > "$tmp/boards.txt" || { fail "loomgen boards failed"; exit 1; }

# ---- the table and the directories
for d in bitstreams/*/build.tcl; do
  b=$(basename "$(dirname "$d")")
  awk -v b="$b" '$1 == b { f = 1 } END { exit !f }' "$tmp/boards.txt" ||
    fail "bitstreams/$b/ has a build.tcl but is not a row of bitstreams/boards.def"
done
while read -r name cfg flow part family uram mhz rest; do
  [ -f "bitstreams/$name/build.tcl" ] || fail "board $name: bitstreams/$name/build.tcl missing"
  if [ "$flow" = vitis ]; then
    [ -f "bitstreams/$name/link.cfg" ] || fail "board $name: bitstreams/$name/link.cfg missing"
  else
    [ -f "bitstreams/$name/loom.dtso" ] || fail "board $name: bitstreams/$name/loom.dtso missing"
  fi
done < "$tmp/boards.txt"

# ---- every board's buffers fit its part (loomgen's tiling, docs/boards.md)
while read -r name cfg flow part family uram mhz lut ff dsp bram uram_cap need_bram need_uram; do
  awk -v need="$need_bram" -v have="$bram" 'BEGIN { exit !(need <= have) }' ||
    fail "board $name: configuration $cfg needs $need_bram BRAM36, $part has $bram"
  [ "$need_uram" -le "$uram_cap" ] ||
    fail "board $name: configuration $cfg needs $need_uram URAM288, $part has $uram_cap"
done < "$tmp/boards.txt"

# ---- overlays
end=$(( $(hdr LOOM_REG_COUNTER_BASE) + $(hdr LOOM_REG_COUNTER_STRIDE) * $(enum LOOM_CNT_COUNT) ))
# The driver's of_match strings: literal, or through its LOOM_DT_COMPATIBLE.
driver_compat=$( { grep -ho '\.compatible *= *"[^"]*"' driver/linux/*.[ch];
  grep -h '^#define LOOM_DT_COMPATIBLE *"' driver/linux/*.[ch]; } 2>/dev/null |
  sed 's/.*"\(.*\)".*/\1/' | sort -u)
driver_clock=$(grep -ho 'clk_get[a-z_]*([^,]*, *"[^"]*"' driver/linux/*.c 2>/dev/null | sed 's/.*"\(.*\)"/\1/' | sort -u)
[ -n "$driver_compat" ] || echo "test_board_files: driver/linux has no of_match table yet; compatible string not cross-checked"
while read -r name cfg flow rest; do
  [ "$flow" = vitis ] && continue
  dtso=bitstreams/$name/loom.dtso
  "$loomgen" dtso "$name" "$tmp/$name.dtso" || { fail "loomgen dtso $name failed"; continue; }
  cmp -s "$tmp/$name.dtso" "$dtso" ||
    fail "$dtso differs from \`loomgen dtso $name\` (run make board-files-fix): $(diff "$dtso" "$tmp/$name.dtso" | head -n 5)"
  if ! dtc -@ -I dts -O dtb -o "$tmp/$name.dtbo" "$dtso" 2> "$tmp/dtc.err" || [ -s "$tmp/dtc.err" ]; then
    fail "dtc -@ $dtso: $(cat "$tmp/dtc.err")"
    continue
  fi
  # Decompiled, so the checks read what the kernel will see.
  dtc -I dtb -O dts -o "$tmp/$name.dts" "$tmp/$name.dtbo" 2> /dev/null
  compat=$(sed -n 's/^[[:space:]]*compatible = "\(.*\)";/\1/p' "$tmp/$name.dts")
  span=$(sed -n 's/^[[:space:]]*reg = <\(.*\)>;/\1/p' "$tmp/$name.dts" | awk '{ print $NF }')
  [ -n "$span" ] && [ $((span)) -ge "$end" ] || fail "$dtso: reg span $span does not cover the registers (0x$(printf %x "$end") bytes)"
  # One interrupt: GIC SPI (0), level high (4), as interrupt_o is a level.
  grep -Eq 'interrupts = <0x0+ 0x[0-9a-f]+ 0x0*4>;' "$tmp/$name.dts" ||
    fail "$dtso: interrupt is not one level-high SPI"
  if [ -n "$driver_compat" ]; then
    printf '%s\n' "$driver_compat" | grep -qxF "$compat" ||
      fail "$dtso: compatible \"$compat\" is not in the driver's of_match table ($driver_compat)"
  fi
  if [ -n "$driver_clock" ]; then
    printf '%s\n' "$driver_clock" | grep -qxF "$(sed -n 's/^[[:space:]]*clock-names = "\(.*\)";/\1/p' "$tmp/$name.dts")" ||
      fail "$dtso: clock-names is not the clock the driver asks for ($driver_clock)"
  fi
  if [ -f docs/linux-driver.md ] && ! grep -qF "$compat" docs/linux-driver.md; then
    fail "docs/linux-driver.md does not mention compatible \"$compat\""
  fi
done < "$tmp/boards.txt"

# ---- kernel.xml and v++ settings
check_arg() { # xml name offset size
  line=$(grep "<arg name=\"$2\" " "$1")
  [ -n "$line" ] || { fail "$1: no argument $2"; return; }
  off=$(printf '%s\n' "$line" | sed 's/.* offset="\([^"]*\)".*/\1/')
  size=$(printf '%s\n' "$line" | sed 's/.* size="\([^"]*\)".*/\1/')
  [ $((off)) -eq $(($3)) ] || fail "$1: $2 at offset $off, register map says $(printf 0x%X $(($3)))"
  [ $((size)) -eq "$4" ] || fail "$1: $2 has size $size, want $4"
}
seg_stride=$(hdr LOOM_REG_SEG_STRIDE)
for cfg in $(sed -n 's/^#define LOOM_CONFIG_\([A-Z0-9_]*\)_HASH .*/\1/p' "$header" | tr A-Z a-z); do
  xml=$tmp/kernel_$cfg.xml
  "$loomgen" kernel-xml "$cfg" "$xml" || { fail "loomgen kernel-xml $cfg failed"; continue; }
  if command -v python3 > /dev/null 2>&1; then
    python3 -c 'import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])' "$xml" ||
      fail "$xml is not well-formed XML"
  fi
  grep -q 'hwControlProtocol="ap_ctrl_hs"' "$xml" || fail "$xml: not ap_ctrl_hs"
  check_arg "$xml" insn "$(hdr LOOM_REG_INSN_ADDR_LO)" 8
  check_arg "$xml" insn_count "$(hdr LOOM_REG_INSN_COUNT)" 4
  s=0
  while [ $s -lt "$(hdr LOOM_NUM_SEGMENTS)" ]; do
    check_arg "$xml" seg${s}_base "$(hdr LOOM_REG_SEG_BASE_LO) + $seg_stride * $s" 8
    check_arg "$xml" seg${s}_size "$(hdr LOOM_REG_SEG_SIZE_LO) + $seg_stride * $s" 8
    s=$((s + 1))
  done
  [ "$(grep -c '<arg ' "$xml")" -eq $((2 + 2 * $(hdr LOOM_NUM_SEGMENTS))) ] || fail "$xml: unexpected arguments"
  range=$(sed -n 's/.*name="s_axi_control" .*range="\([^"]*\)".*/\1/p' "$xml")
  [ $((range)) -ge "$end" ] || fail "$xml: control range $range does not cover the registers"
  bus=$(sed -n 's/^`define LOOM_CFG_BUS_BITS \([0-9]*\)$/\1/p' "$BUILD/gen/loom_cfg_$cfg.vh")
  grep -q "name=\"m_axi_gmem\" .*dataWidth=\"$bus\"" "$xml" || fail "$xml: master width is not the $bus-bit bus of $cfg"
done
# The XRT backend's contract (docs/xrt.md) names the first two arguments
# and the segment pattern; the generated kernel.xml must use those names.
if [ -f docs/xrt.md ]; then
  for id in 0 1; do
    doc=$(sed -n "s/^| $id | \`\([a-z_0-9]*\)\` |.*/\1/p" docs/xrt.md | head -n 1)
    gen=$(sed -n "s/.*<arg name=\"\([a-z_0-9]*\)\" .* id=\"$id\" .*/\1/p" "$tmp/kernel_default.xml")
    [ -z "$doc" ] || [ "$doc" = "$gen" ] || fail "kernel.xml argument $id is $gen, docs/xrt.md says $doc"
  done
  for kind in base size; do
    grep -q "seg<s>_$kind" docs/xrt.md || fail "docs/xrt.md does not name the seg<s>_$kind arguments"
  done
fi

while read -r name cfg flow part family uram mhz rest; do
  [ "$flow" = vitis ] || continue
  "$loomgen" vitis-cfg "$name" "$tmp/v.cfg" || { fail "loomgen vitis-cfg $name failed"; continue; }
  grep -qx "kernel_frequency=$mhz" "$tmp/v.cfg" || fail "v++ settings of $name do not run the kernel at $mhz MHz"
  grep -q "^sp=loom_1\.m_axi_gmem:" "bitstreams/$name/link.cfg" || fail "bitstreams/$name/link.cfg does not map m_axi_gmem"
done < "$tmp/boards.txt"

[ $status -eq 0 ] && echo "test_board_files: $(wc -l < "$tmp/boards.txt") boards: overlays, kernel.xml and v++ settings agree with hw/spec"
exit $status
