#!/bin/sh
# test_config_files.sh - hardware configuration files through every tool
# that takes a configuration name (docs/configs.md):
#
#   - `loom config show NAME` is a valid file; loading it gives NAME's hash,
#     so compiling or assembling for the file gives the same bytes as for
#     the name, and its Verilog and Tcl forms are loomgen's
#   - a new configuration (tiny under another name) compiles, runs on fsim
#     (bit-identical outputs: same hardware) and is refused where a name was
#     expected, with the one-line message that says to pass the file
#   - `loom config check` names every broken rule; bad files fail with the
#     file, line and key
#
# Environment: LOOM, BUILD.  Needs build/models/digits_cnn.onnx (make test).
set -eu
. tests/dse/lib.sh
M=build/models
G=$BUILD/gen

# ---- show, and a file that repeats a name
expect 0 out "name = tiny" "$LOOM" config show tiny
"$LOOM" config show tiny > "$tmp/tiny.cfg"
expect 0 out "# hash 0xBE827F10" "$LOOM" config show "$tmp/tiny.cfg"
expect 0 out "default  0xE7A797E1 1x16x16" "$LOOM" config list
for k in name batch block_in block_out inp_kib wgt_kib acc_kib uop_kib bus_bits clock_mhz \
    cmd_queue_depth token_queue_depth max_outstanding_reads part; do
  check "show has key $k" grep -q "^$k = " "$tmp/tiny.cfg"
done
check "show has exactly the 14 keys" test "$(grep -c ' = ' "$tmp/tiny.cfg")" -eq 14

# the Verilog and Tcl forms are the generated ones (but for the comment lines)
"$LOOM" config vh "$tmp/tiny.cfg" | grep -v '^//' > "$tmp/tiny.vh"
grep -v '^//' "$G/loom_cfg_tiny.vh" > "$tmp/gen.vh"
check "config vh FILE = loomgen's loom_cfg_tiny.vh" cmp -s "$tmp/tiny.vh" "$tmp/gen.vh"
"$LOOM" config tcl "$tmp/tiny.cfg" | grep -v '^#' > "$tmp/tiny.tcl"
grep -v '^#' "$G/loom_cfg_tiny.tcl" > "$tmp/gen.tcl"
check "config tcl FILE = loomgen's loom_cfg_tiny.tcl" cmp -s "$tmp/tiny.tcl" "$tmp/gen.tcl"

# compile and asm: the file is the name
"$LOOM" compile $M/digits_cnn.onnx --calib $M/calib_digits_cnn --config tiny --host-triple none -q -o "$tmp/name.loom"
"$LOOM" compile $M/digits_cnn.onnx --calib $M/calib_digits_cnn --config "$tmp/tiny.cfg" --host-triple none -q \
  -o "$tmp/file.loom"
check "compile --config FILE = --config NAME" cmp -s "$tmp/name.loom" "$tmp/file.loom"
"$LOOM" asm tests/asm/gemm64.s --config "$tmp/tiny.cfg" -o "$tmp/asm_file.loom"
"$LOOM" asm tests/asm/gemm64.s --config tiny -o "$tmp/asm_name.loom"
check "asm --config FILE = --config NAME" cmp -s "$tmp/asm_file.loom" "$tmp/asm_name.loom"
sed "s|^\.config tiny|.config $tmp/tiny.cfg|" tests/asm/gemm64.s > "$tmp/gemm64_file.s"
check "the test rewrote .config" grep -q "^\.config $tmp/tiny.cfg" "$tmp/gemm64_file.s"
"$LOOM" asm "$tmp/gemm64_file.s" -o "$tmp/asm_dir.loom"
check "asm .config FILE = .config NAME" cmp -s "$tmp/asm_dir.loom" "$tmp/asm_name.loom"

# ---- a configuration Loom has no name for
sed 's/^name = tiny/name = tiny_file/' "$tmp/tiny.cfg" > "$tmp/new.cfg"
expect 0 out "ok: config 'tiny_file'" "$LOOM" config check "$tmp/new.cfg"
"$LOOM" compile $M/digits_cnn.onnx --calib $M/calib_digits_cnn --config "$tmp/new.cfg" --host-triple none -q \
  -o "$tmp/new.loom"
hash=$("$LOOM" config show "$tmp/new.cfg" | sed -n 's/^# hash \(0x[0-9A-F]*\);.*/\1/p')
check "a new name is a new hash" test "$hash" != 0xBE827F10
expect 0 out "config:  unknown ($hash)" "$LOOM" inspect "$tmp/new.loom"
expect 0 out "config:  tiny_file ($hash), 1x8x8" "$LOOM" inspect "$tmp/new.loom" --config "$tmp/new.cfg"
expect 1 err "built for hardware config $hash, not 'tiny' (0xBE827F10)" "$LOOM" inspect "$tmp/new.loom" --config tiny
expect 1 err "pass --config FILE, the configuration file it was compiled for" \
  "$LOOM" run "$tmp/new.loom" -i $M/digits_cnn_in0.npy
expect 1 err "built for hardware config unknown ($hash), but the fsim device implements config 'tiny'" \
  "$LOOM" run "$tmp/new.loom" --config tiny -i $M/digits_cnn_in0.npy
"$LOOM" run "$tmp/new.loom" --config "$tmp/new.cfg" -i $M/digits_cnn_in0.npy -o "$tmp/new_out.npy"
"$LOOM" run "$tmp/name.loom" -i $M/digits_cnn_in0.npy -o "$tmp/name_out.npy"
check "same hardware, same outputs (fsim, config file vs name)" cmp -s "$tmp/new_out.npy" "$tmp/name_out.npy"
expect 0 out "accuracy" "$LOOM" eval "$tmp/new.loom" --config "$tmp/new.cfg" --data $M/digits_test_x.npy \
  --labels $M/digits_test_y.npy -n 8 -q

# ---- check names every broken rule; bad files name file, line and key
sed -e 's/^block_in = 8/block_in = 12/' -e 's/^bus_bits = 64/bus_bits = 96/' -e 's/^acc_kib = 8/acc_kib = 3/' \
  -e 's/^max_outstanding_reads = 4/max_outstanding_reads = 99/' "$tmp/tiny.cfg" > "$tmp/bad.cfg"
expect 1 err "$tmp/bad.cfg: key 'block_in': must be a power of two" "$LOOM" config check "$tmp/bad.cfg"
for want in "key 'bus_bits': must be 64 or 128" "key 'acc_kib': ACC rows must be a power of two (3 KiB / 32 bytes = 96 rows)" \
    "key 'max_outstanding_reads': must be 1..64"; do
  check "check names: $want" grep -qF "$want" "$tmp/err"
done
expect 1 err "key 'part': DSP budget: 1x32x32 needs about 646 DSPs, xc7z020clg400-1 has 220" \
  "$LOOM" config check large --part xc7z020clg400-1
expect 1 err "key 'part': unknown part 'xc7z999'" "$LOOM" config check tiny --part xc7z999
expect 1 err "$tmp/bad.cfg: key 'block_in': must be a power of two (the GEMM sum tree) (and more: see \`loom config check\`)" \
  "$LOOM" compile $M/digits_cnn.onnx --config "$tmp/bad.cfg"
printf 'name = x\nblock_size = 8\n' > "$tmp/unknown.cfg"
expect 1 err "$tmp/unknown.cfg:2: unknown key 'block_size'" "$LOOM" config show "$tmp/unknown.cfg"
grep -v '^part' "$tmp/tiny.cfg" > "$tmp/nopart.cfg"
expect 1 err "$tmp/nopart.cfg: missing key part" "$LOOM" run "$tmp/name.loom" --config "$tmp/nopart.cfg"
expect 1 err "fsim: config: $tmp/missing.cfg: " "$LOOM" run "$tmp/name.loom" --config "$tmp/missing.cfg"
expect 1 err "unknown hardware configuration 'huge'" "$LOOM" config show huge
expect 1 err "loom config: unknown action 'frobnicate'" "$LOOM" config frobnicate tiny

finish
