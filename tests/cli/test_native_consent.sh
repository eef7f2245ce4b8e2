#!/bin/sh
# test_native_consent.sh - foreign native code never runs silently
# (docs/hostcode.md "When native code runs"), end to end through `loom`.
#
# An "attacker" compiles the digits CNN (its folded stem is a native IM2COL
# host step) with their own key and a hostile linker: the compiler's LOOM_LD
# hook links, beside the generated code, an extra object whose code creates
# a marker file.  The victim, with another key, then runs the files:
#
#   extra     the entry point creates the marker, then does the real work
#             (outputs stay bit-identical): without consent the portable ops
#             run, one line on stderr says so, and there is no marker; with
#             --trust-native the code runs (the marker shows the test can
#             see it);
#   import    the entry calls system() from the process (an imported symbol)
#   ifunc     the entry is an STT_GNU_IFUNC: its resolver runs at dlsym
#   irelative an IRELATIVE relocation: its resolver runs at dlopen
#   ctor      a constructor (DT_INIT_ARRAY)
#   auxiliary, filter   DT_AUXILIARY / DT_FILTER: the loader loads another
#             object (with a constructor) alongside
#             -- each refused at load even with --trust-native, before any
#             of its code runs (no marker), also for a run that a bad input
#             would refuse; `loom inspect` exits 1 naming why.
#
# Also: the victim's own compile is signed and runs natively without a
# notice; a signed file changed afterwards, a --target cpu model (a NATIVE
# step, nothing portable to fall back to), a key others can read, and where
# the key is made (0600 in a 0700 directory under $XDG_CONFIG_HOME).
# Needs an x86-64 host with cc, nm, objcopy and ld.lld-15 (else SKIP).
# Environment: LOOM.
set -eu
LOOM=${LOOM:-build/bin/loom}
case $LOOM in /*) ;; *) LOOM=$PWD/$LOOM ;; esac
MODELS=${MODELS:-build/models}
if [ "$(uname -m)" != x86_64 ] || ! command -v ld.lld-15 >/dev/null || ! command -v objcopy >/dev/null ||
   ! command -v cc >/dev/null; then
  echo "SKIP: test_native_consent needs x86-64 with cc, objcopy and ld.lld-15"
  exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. tests/cli/common.sh # fail, expect, summary
ONNX=$MODELS/digits_cnn.onnx
CALIB=$MODELS/calib_digits_cnn
X=$MODELS/digits_cnn_in0.npy
MARK=$tmp/marker
ATTACKER=$tmp/attacker.key
VICTIM=$tmp/victim.key

# ---- the hostile linker ----
cat >"$tmp/evil.c" <<'EOF'
#include <stdint.h>
typedef int32_t step_fn(void *const *in, void *const *out);
extern step_fn loom_real_step;

/* Creates MARKER with raw system calls (no libc: the image links nothing). */
static void mark(void) {
  long fd, rc;
  __asm__ volatile("syscall" : "=a"(fd) : "0"(2L), "D"(MARKER), "S"(01101L), "d"(0644L) : "rcx", "r11", "memory");
  if (fd >= 0) __asm__ volatile("syscall" : "=a"(rc) : "0"(3L), "D"(fd) : "rcx", "r11", "memory");
}

#if defined(MODE_extra)
int32_t ENTRY(void *const *in, void *const *out) { mark(); return loom_real_step(in, out); }
#elif defined(MODE_import)
extern int system(const char *);
int32_t ENTRY(void *const *in, void *const *out) { system("touch " MARKER); return loom_real_step(in, out); }
#elif defined(MODE_ifunc)
static void *resolve(void) { mark(); return (void *)loom_real_step; }
int32_t ENTRY(void *const *in, void *const *out) __attribute__((ifunc("resolve")));
#elif defined(MODE_irelative)
static void *resolve(void) { mark(); return (void *)loom_real_step; }
static int32_t hidden(void *const *in, void *const *out) __attribute__((ifunc("resolve")));
step_fn *volatile evil_pointer = hidden;
int32_t ENTRY(void *const *in, void *const *out) { return loom_real_step(in, out); }
#elif defined(MODE_ctor)
__attribute__((constructor)) static void ctor(void) { mark(); }
int32_t ENTRY(void *const *in, void *const *out) { return loom_real_step(in, out); }
#else /* auxiliary, filter: the work is done by the object loaded alongside */
int32_t ENTRY(void *const *in, void *const *out) { return loom_real_step(in, out); }
#endif
EOF
printf '#include <stdio.h>\n__attribute__((constructor)) static void c(void) { fclose(fopen(MARKER, "w")); }\n' >"$tmp/aux.c"
cc -shared -fPIC -DMARKER="\"$MARK\"" -o "$tmp/aux.so" "$tmp/aux.c"
cat >"$tmp/ld.sh" <<EOF
#!/bin/sh
# LOOM_LD: rename the generated entry point, link evil.o's in its place.
for a in "\$@"; do obj=\$a; done
sym=\$(nm --defined-only "\$obj" | awk '\$3 ~ /^loom_step_[0-9]+\$/ { print \$3; exit }')
objcopy --redefine-sym "\$sym=loom_real_step" "\$obj"
cc -c -fPIC -O2 -fno-stack-protector -DENTRY="\$sym" -DMARKER='"$MARK"' -DMODE_\$MODE "$tmp/evil.c" -o "$tmp/evil.o"
extra=""
[ "\$MODE" = auxiliary ] && extra="--auxiliary=$tmp/aux.so"
[ "\$MODE" = filter ] && extra="--filter=$tmp/aux.so"
# drop -z defs: an imported symbol must reach the runtime's checks
n=\$#
while [ \$n -gt 0 ]; do
  a=\$1; shift; n=\$((n - 1))
  if [ "\$a" = -z ] && [ "\$1" = defs ]; then shift; n=\$((n - 1)); continue; fi
  set -- "\$@" "\$a"
done
exec ld.lld-15 "\$@" "$tmp/evil.o" \$extra
EOF
chmod +x "$tmp/ld.sh"

no_marker() {
  checks=$((checks + 1))
  if [ -e "$MARK" ]; then fail "$1: hostile code ran (the marker exists)"; rm -f "$MARK"; fi
}
as_victim() { LOOM_KEY_FILE=$VICTIM "$@"; }

# The victim's key and reference output (a clean compile of their own).
LOOM_KEY_FILE=$VICTIM "$LOOM" compile "$ONNX" --calib "$CALIB" -q -o "$tmp/own.loom"
expect 0 err "" as_victim "$LOOM" run "$tmp/own.loom" -i "$X" -o "$tmp/ref.npy"
checks=$((checks + 1))
[ ! -s "$tmp/err" ] || fail "own model: a notice on stderr: $(cat "$tmp/err")"
as_victim "$LOOM" inspect "$tmp/own.loom" | grep -q "here: runs (x86-64)" || fail "inspect of the victim's own model"

for mode in extra import ifunc irelative ctor auxiliary filter; do
  rm -f "$MARK"
  MODE=$mode LOOM_LD=$tmp/ld.sh LOOM_KEY_FILE=$ATTACKER "$LOOM" compile "$ONNX" --calib "$CALIB" -q \
    -o "$tmp/$mode.loom" || { fail "$mode: the hostile compile failed"; continue; }
  no_marker "$mode: compile"
  # Without consent: the portable ops, one line on stderr, the same outputs.
  expect 0 err "is signed with key" as_victim "$LOOM" run "$tmp/$mode.loom" -i "$X" -o "$tmp/out.npy"
  checks=$((checks + 1))
  [ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "$mode: the notice is not one line"
  cmp -s "$tmp/out.npy" "$tmp/ref.npy" || fail "$mode: outputs differ from the victim's own model"
  no_marker "$mode: run without consent"
  expect 0 err "the portable host ops run" as_victim "$LOOM" eval "$tmp/$mode.loom" \
    --data "$MODELS/digits_test_x.npy" --labels "$MODELS/digits_test_y.npy" -n 2 -q
  no_marker "$mode: eval without consent"
done

# With consent the extra code runs (what the test would see if it ran above)...
expect 0 err "" as_victim "$LOOM" run "$tmp/extra.loom" -i "$X" -o "$tmp/out.npy" --trust-native
checks=$((checks + 1))
[ -e "$MARK" ] || fail "extra --trust-native: the hostile code did not run (the test cannot see it)"
cmp -s "$tmp/out.npy" "$tmp/ref.npy" || fail "extra --trust-native: outputs differ"
rm -f "$MARK"
as_victim "$LOOM" inspect "$tmp/extra.loom" | grep -q "here: runs only with --trust-native" ||
  fail "inspect extra.loom: no '--trust-native' line"

# ...but code that would run before a step is refused even with consent.
for pair in "import:imports symbol 'system'" "ifunc:is an IFUNC" "irelative:IRELATIVE relocation" \
            "ctor:constructors or destructors" "auxiliary:DT_AUXILIARY" "filter:DT_FILTER"; do
  mode=${pair%%:*} why=${pair#*:}
  expect 1 err "$why" as_victim "$LOOM" run "$tmp/$mode.loom" -i "$X" --trust-native
  no_marker "$mode: run with --trust-native"
  expect 1 err "$why" as_victim "$LOOM" run "$tmp/$mode.loom" -i "$MODELS/digits_test_y.npy" --trust-native
  no_marker "$mode: run with a bad input"
  expect 1 err "native code would be refused at load" as_victim "$LOOM" inspect "$tmp/$mode.loom"
  checks=$((checks + 1))
  grep -qF "$why" "$tmp/out" || fail "inspect $mode.loom: stdout lacks '$why'"
done

# A file changed after it was signed: no longer consented to.
cp "$tmp/own.loom" "$tmp/changed.loom"
python3 - "$tmp/changed.loom" <<'EOF'
import struct, sys, zlib
p = sys.argv[1]
b = bytearray(open(p, 'rb').read())
n, tbl = struct.unpack_from('<I', b, 36)[0], struct.unpack_from('<Q', b, 40)[0]
for i in range(n):
    t, _, off, size, _, _ = struct.unpack_from('<IIQQII', b, tbl + 32 * i)
    if t == 8:  # HOSTCODE: a byte of the image's code, near its end
        b[off + size - 16] ^= 0x01
struct.pack_into('<I', b, 24, zlib.crc32(bytes(b[32:])) & 0xffffffff)
open(p, 'wb').write(b)
EOF
expect 0 err "was changed after it was signed with your key" as_victim "$LOOM" run "$tmp/changed.loom" -i "$X"
as_victim "$LOOM" inspect "$tmp/changed.loom" | grep -q "signature: changed after it was signed" ||
  fail "inspect changed.loom"

# --target cpu: one NATIVE step, nothing portable: refused without consent.
LOOM_KEY_FILE=$ATTACKER "$LOOM" compile --target cpu "$ONNX" -q -o "$tmp/cpu.loom"
expect 1 err "exists only as native code" as_victim "$LOOM" run "$tmp/cpu.loom" -i "$X"
checks=$((checks + 1))
grep -qF -- "--trust-native" "$tmp/err" || fail "cpu.loom: the refusal does not name --trust-native"
expect 0 err "" as_victim "$LOOM" run "$tmp/cpu.loom" -i "$X" --trust-native
expect 0 err "" env LOOM_KEY_FILE="$ATTACKER" "$LOOM" run "$tmp/cpu.loom" -i "$X"

# The key: made 0600 in a 0700 directory; refused when others may read it.
xdg=$tmp/xdg
env -u LOOM_KEY_FILE XDG_CONFIG_HOME="$xdg" "$LOOM" compile "$ONNX" --calib "$CALIB" -q -o "$tmp/xdg.loom"
checks=$((checks + 1))
[ "$(stat -c %a "$xdg/loom/key")" = 600 ] && [ "$(stat -c %a "$xdg/loom")" = 700 ] ||
  fail "the key or its directory has the wrong mode: $(stat -c '%a %n' "$xdg/loom" "$xdg/loom/key")"
grep -qE '^[0-9a-f]{64}$' "$xdg/loom/key" || fail "the key is not 64 hex digits"
chmod 644 "$xdg/loom/key"
expect 0 err "chmod 600 it" env -u LOOM_KEY_FILE XDG_CONFIG_HOME="$xdg" "$LOOM" run "$tmp/xdg.loom" -i "$X"
expect 0 err "chmod 600 it" env -u LOOM_KEY_FILE XDG_CONFIG_HOME="$xdg" "$LOOM" compile "$ONNX" --calib "$CALIB" -q \
  -o "$tmp/xdg2.loom"
checks=$((checks + 1))
grep -q "is not signed" "$tmp/err" || fail "compile with an open key: no 'is not signed' warning"

summary test_native_consent
