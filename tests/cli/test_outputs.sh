#!/bin/sh
# test_outputs.sh - every file loom writes is written so that a failure never
# damages what was there (driver/core/outfile.c, docs/cli.md "Output files").
# For each command that writes (compile -o, compile --trace, asm -o, disasm -o,
# run -o, run --profile-json, run --trace):
#
#   - a device node, here a private copy of /dev/full made with mknod, is
#     written in place: the command fails naming the file and "No space left
#     on device", and the node is still there (the old code unlinked it);
#   - on a full file system (a 64 KiB tmpfs in a private mount namespace,
#     `unshare -m`) the command fails naming the file and the errno text, the
#     previous file is byte for byte what it was, and no temporary file is
#     left behind (the old code truncated or deleted it);
#   - an output that is one of the inputs (the same inode: the same name, a
#     hard link, a symbolic link) is refused before anything runs, and the
#     input is unchanged (the old code overwrote it);
#   - /dev/null, /dev/stdout (a pipe and a redirected file), a FIFO and a
#     symbolic link to a regular file behave as documented; a replaced file
#     keeps its permissions.
#
# The device and tmpfs parts need root (mknod, mount); without it they print
# SKIP.  Environment: LOOM, BUILD.
set -eu
LOOM=${LOOM:-build/bin/loom}
BUILD=${BUILD:-build}
case $LOOM in /*) ;; *) LOOM=$PWD/$LOOM ;; esac
. tests/cli/common.sh # fail, expect, summary

# The models and inputs the writers use.  Most outputs are larger than a
# page, so that on the full tmpfs even a writer that truncates the previous
# (one-page) file first runs out of space.
setup() {
  tmp=$1
  ONNX=build/models/small/qlinear_conv_matmul.onnx
  G=$tmp/gemm64.loom
  "$LOOM" asm tests/asm/gemm64.s -o "$G"
  "$LOOM" compile "$ONNX" --host-triple none -q -o "$tmp/big.loom"
  "$LOOM" disasm "$tmp/big.loom" -o "$tmp/big.s"
  "$BUILD/tests/cli/gemm_ref" 8 5 "$tmp" >/dev/null
  A=$tmp/a.npy B=$tmp/b.npy
}

# w_NAME OUT: one command writing its output to OUT.
w_compile() { "$LOOM" compile "$ONNX" --host-triple none -q -o "$1"; }
w_trace() { "$LOOM" compile "$ONNX" --host-triple none -q -o "$tmp/trace-side.loom" --trace "$1"; }
w_asm() { "$LOOM" asm "$tmp/big.s" -o "$1"; }
w_disasm() { "$LOOM" disasm "$tmp/big.loom" -o "$1"; }
w_run() { "$LOOM" run "$G" -i A="$A" -i B="$B" -o C="$1"; }
w_profile() { "$LOOM" run "$G" -i A="$A" -i B="$B" --timing --profile-json "$1"; }
w_rtrace() { "$LOOM" run "$G" -i A="$A" -i B="$B" --timing --trace "$1"; }
WRITERS="compile trace asm disasm run profile rtrace"

# ---- a full file system (run inside `unshare -m`) ----
full_fs() {
  tmp=$1
  setup "$tmp"
  fs=$tmp/fs
  mkdir -p "$fs" "$tmp/ref"
  mount -t tmpfs -o size=64k tmpfs "$fs"
  for w in $WRITERS; do
    echo "previous $w" >"$fs/old.$w"
    cp "$fs/old.$w" "$tmp/ref/old.$w"
  done
  # Fill what is left, to the last byte.
  dd if=/dev/zero of="$fs/fill" bs=4096 2>/dev/null || true
  dd if=/dev/zero of="$fs/fill2" bs=1 2>/dev/null || true
  ls -A "$fs" | sort >"$tmp/before"
  for w in $WRITERS; do
    expect 1 err "$fs/old.$w: write failed: No space left on device" "w_$w" "$fs/old.$w"
    checks=$((checks + 1))
    cmp -s "$fs/old.$w" "$tmp/ref/old.$w" || fail "$w on a full disk: the previous file changed or is gone"
  done
  ls -A "$fs" | sort >"$tmp/after"
  checks=$((checks + 1))
  cmp -s "$tmp/before" "$tmp/after" || { fail "files left on the full disk:"; diff "$tmp/before" "$tmp/after" || true; }
  umount "$fs"
  summary full-fs
}

if [ "${1:-}" = --full-fs ]; then
  full_fs "$2"
  exit $?
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
setup "$tmp"

# ---- a private /dev/full: written in place, never unlinked ----
if mknod "$tmp/full" c 1 7 2>/dev/null && [ -c "$tmp/full" ]; then
  for w in $WRITERS; do
    expect 1 err "$tmp/full: write failed: No space left on device" "w_$w" "$tmp/full"
    checks=$((checks + 1))
    [ -c "$tmp/full" ] || { fail "$w to /dev/full: the device node is gone"; mknod "$tmp/full" c 1 7; }
  done
else
  echo "SKIP: /dev/full copy (mknod needs root)"
fi

# ---- a full file system ----
if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null; then
  mkdir "$tmp/ns"
  if unshare -m true 2>/dev/null; then
    unshare -m sh "$0" --full-fs "$tmp/ns" || fail "the full-disk checks (above)"
  else
    echo "SKIP: full tmpfs (unshare -m is not permitted here)"
  fi
else
  echo "SKIP: full tmpfs (needs root and unshare)"
fi

# ---- output = input: refused first, input unchanged ----
cp tests/fuzz/corpus/onnx/qlinearconv.onnx "$tmp/m.onnx"
cp tests/asm/gemm64.s "$tmp/s.s"
ln "$G" "$tmp/hardlink.loom"
ln -s "$A" "$tmp/symlink.npy"
for f in m.onnx s.s gemm64.loom a.npy; do cp "$tmp/$f" "$tmp/$f.ref"; done
same="the output is the input"
expect 1 err "$same" "$LOOM" compile "$tmp/m.onnx" --host-triple none -o "$tmp/m.onnx"
expect 1 err "$same" "$LOOM" compile "$tmp/m.onnx" --host-triple none -o "$tmp/x.loom" --trace "$tmp/m.onnx"
expect 1 err "the IR trace and the output are the same file" \
  "$LOOM" compile "$tmp/m.onnx" --host-triple none -o "$tmp/x.loom" --trace "$tmp/x.loom"
expect 1 err "$same" "$LOOM" asm "$tmp/s.s" -o "$tmp/s.s"
expect 1 err "$same" "$LOOM" disasm "$G" -o "$G"
expect 1 err "$same" "$LOOM" disasm "$G" -o "$tmp/hardlink.loom"
expect 1 err "$same" "$LOOM" run "$G" -i A="$A" -i B="$B" -o C="$G"
expect 1 err "$same" "$LOOM" run "$G" -i A="$A" -i B="$B" -o C="$B"
expect 1 err "$same" "$LOOM" run "$G" -i A="$A" -i B="$B" -o C="$tmp/symlink.npy"
expect 1 err "$same" "$LOOM" run "$G" -i A="$A" -i B="$B" --timing --profile-json "$A"
expect 1 err "$same" "$LOOM" run "$G" -i A="$A" -i B="$B" --timing --trace "$G"
expect 1 err "named as two outputs" \
  "$LOOM" run "$G" -i A="$A" -i B="$B" --timing -o C="$tmp/c.npy" --trace "$tmp/c.npy"
for f in m.onnx s.s gemm64.loom a.npy; do
  checks=$((checks + 1))
  cmp -s "$tmp/$f" "$tmp/$f.ref" || fail "input $f was changed by a refused command"
done
[ -L "$tmp/symlink.npy" ] || fail "the symbolic link input was replaced"

umask_mode() { printf '%o' $((0666 & ~$(umask))); }

# ---- targets that are not regular files, symbolic links, permissions ----
"$LOOM" disasm "$G" >"$tmp/ref.s"
checks=$((checks + 1))
"$LOOM" disasm "$G" -o "$tmp/fresh.s" && cmp -s "$tmp/fresh.s" "$tmp/ref.s" || fail "disasm -o NEW"
[ "$(stat -c %a "$tmp/fresh.s")" = "$(umask_mode)" ] || fail "a new file is not 0666 less the umask"
checks=$((checks + 1))
"$LOOM" run "$G" -i A="$A" -i B="$B" -o C=/dev/null || fail "run -o C=/dev/null"
[ -c /dev/null ] || fail "/dev/null is no longer a device"
checks=$((checks + 1))
"$LOOM" disasm "$G" -o /dev/stdout | cat >"$tmp/pipe.s"
cmp -s "$tmp/pipe.s" "$tmp/ref.s" || fail "disasm -o /dev/stdout into a pipe"
checks=$((checks + 1))
echo "; kept" >"$tmp/redirect.s"
"$LOOM" disasm "$G" -o /dev/stdout >>"$tmp/redirect.s"
{ echo "; kept"; cat "$tmp/ref.s"; } | cmp -s - "$tmp/redirect.s" || fail "disasm -o /dev/stdout >> file"
checks=$((checks + 1))
mkfifo "$tmp/fifo"
cat "$tmp/fifo" >"$tmp/fifo.s" &
"$LOOM" disasm "$G" -o "$tmp/fifo"
wait
cmp -s "$tmp/fifo.s" "$tmp/ref.s" || fail "disasm -o FIFO"
[ -p "$tmp/fifo" ] || fail "the FIFO was replaced"
checks=$((checks + 1))
echo old >"$tmp/real.s"
ln -s real.s "$tmp/link.s"
"$LOOM" disasm "$G" -o "$tmp/link.s"
[ -L "$tmp/link.s" ] || fail "disasm -o SYMLINK replaced the link"
cmp -s "$tmp/real.s" "$tmp/ref.s" || fail "disasm -o SYMLINK did not write the file it points to"
checks=$((checks + 1))
echo old >"$tmp/mode.s"
chmod 640 "$tmp/mode.s"
"$LOOM" disasm "$G" -o "$tmp/mode.s"
[ "$(stat -c %a "$tmp/mode.s")" = 640 ] || fail "a replaced file lost its mode (now $(stat -c %a "$tmp/mode.s"))"
checks=$((checks + 1))
expect 1 err "$tmp/nodir/x.loom: cannot create a temporary file beside it: No such file or directory" \
  "$LOOM" asm tests/asm/gemm64.s -o "$tmp/nodir/x.loom"
left=$(ls -A "$tmp" | grep '\.tmp$' || true)
[ -z "$left" ] || fail "temporary files left: $left"

summary test_outputs
