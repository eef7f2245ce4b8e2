#!/bin/sh
# Builds and runs the loom_top bring-up test (tests/rtl/loom_top_tb*.cpp)
# against fsim, for one configuration or several.
#   tests/rtl/run_top.sh [config...]   default: tiny
# Environment: SEED (default 1), JOBS (default 40), MODE (mix|tile|chaos),
# BUILD (default build).
set -eu
BUILD=${BUILD:-build}
SEED=${SEED:-1}
JOBS=${JOBS:-40}
MODE=${MODE:-mix}
GEN=$BUILD/gen
configs=${*:-tiny}
status=0
for cfg in $configs; do
  out=$BUILD/rtl_tb/top_$cfg
  [ -n "${TRACE:-}" ] && out=${out}_trace
  # The objects below are rebuilt when their .c is newer; a changed header
  # (fsim.h's struct layout, ...) would not be seen, so a digest of the
  # headers they include starts the build over when it changes.
  stamp=$(cat sim/fsim/*.h driver/core/*.h include/loom/*.h "$GEN"/*.h tests/rtl/loom_top_tb*.cpp tests/rtl/loom_top_tb.h 2>/dev/null | cksum)
  [ "$(cat "$out/headers.stamp" 2>/dev/null)" = "$stamp" ] || rm -rf "$out"
  mkdir -p "$out/fsim" "$GEN/cfg_$cfg"
  echo "$stamp" > "$out/headers.stamp"
  cmp -s "$GEN/loom_cfg_$cfg.vh" "$GEN/cfg_$cfg/loom_cfg.vh" || cp "$GEN/loom_cfg_$cfg.vh" "$GEN/cfg_$cfg/loom_cfg.vh"
  objs=""
  for f in sim/fsim/fsim*.c driver/core/isa.c driver/core/hwconfig.c driver/core/status.c "$GEN/loom_isa_gen.c"; do
    o="$out/fsim/$(basename "$f" .c).o"
    if [ ! -f "$o" ] || [ "$f" -nt "$o" ]; then
      cc -std=c11 -O2 -g -Iinclude -I"$GEN" -I. -D_GNU_SOURCE -c "$f" -o "$o"
    fi
    objs="$objs $(pwd)/$o"
  done
  rm -f "$out/libtbfsim.a"
  ar rcs "$out/libtbfsim.a" $objs
  bus=$(sed -n 's/^`define LOOM_CFG_BUS_BITS \([0-9]*\)/\1/p' "$GEN/loom_cfg_$cfg.vh")
  trace=""
  [ -n "${TRACE:-}" ] && trace="--trace"
  tb="$(pwd)/tests/rtl/loom_top_tb.cpp $(pwd)/tests/rtl/loom_top_tb_axi.cpp $(pwd)/tests/rtl/loom_top_tb_jobs.cpp"
  verilator --cc --exe --build -j 2 -O3 $trace --x-assign fast --x-initial fast --noassert \
    -Wno-fatal -Wno-lint -Wno-style --top-module loom_top -Mdir "$out/obj" \
    -I"$GEN/cfg_$cfg" -I"$GEN" $(cat hw/rtl/loom_rtl.f) $tb \
    -CFLAGS "-O2 -I$(pwd)/include -I$(pwd)/$GEN -I$(pwd) -DTB_CONFIG=\\\"$cfg\\\" -DTB_BUS_BITS=$bus" \
    -LDFLAGS "$(pwd)/$out/libtbfsim.a -lz" -o loom_top_tb > "$out/build.log" 2>&1 ||
    { tail -30 "$out/build.log"; exit 1; }
  "$out/obj/loom_top_tb" "$SEED" "$JOBS" "$MODE" || status=1
done
exit $status
