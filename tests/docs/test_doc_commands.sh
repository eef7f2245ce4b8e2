#!/bin/bash
# test_doc_commands.sh - every command the documentation shows runs as shown
# (part of `make test`): README.md, docs/*.md and the "example:" section of
# every `loom COMMAND --help`.
#
# Commands are the lines of code blocks (fenced or indented): in a block
# with `$ ` prompts, the prompted lines, and the lines after one are its
# output; in a block without prompts, every line that starts with a program
# (loom, make, sh, sudo, git, qemu-*, v++, verilator, an executable under
# build/ or tests/, ...).  Lines ending in `\` continue.  Each is then:
#
#   run        `loom` commands (and a few scripts), in a sandbox directory
#              that holds the files the docs name (gemm64.loom, a.npy,
#              cnn.loom, x.npy, ... made from the models the tests make) and
#              links to the tree (build/, tests/, ...).  Exit status 0, or
#              the one its comment states (`# exit status 2`), or 1 when the
#              documented output shows an error; every documented `loom: `
#              error line must appear on stderr, and every documented
#              counter line (`  NAME  VALUE`) must match the run's;
#   synopsis   a usage line (`[...]`, `A|B`, `COMMAND`, `...`): the command
#              must exist and every option it names must be in its --help;
#   dry run    `make TARGET`: `make -n` must accept the target and variables;
#   refused    commands for hardware that is absent here (an Alveo card, a
#              board's driver): run, and they must fail with the message the
#              table below expects;
#   skipped    what cannot run here, each with its reason in the table below
#              (Vivado/Vitis, a board, root, a kernel tree, a long run).
#
# A command that fits none of these fails the test, so a new command in the
# docs is either runnable or listed below with a reason.
# Environment: LOOM, BUILD, MODELS; LOOM_DOC_NETS=1 also runs the commands
# on ResNet-18 (needs the ImageNet models of `make test-nets`; about a
# minute), which are skipped otherwise.
set -u
LOOM=${LOOM:-build/bin/loom}
BUILD=${BUILD:-build}
MODELS=${MODELS:-build/models}
top=$(pwd)
case $LOOM in /*) ;; *) LOOM=$top/$LOOM ;; esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
box=$tmp/box
mkdir -p "$box"
failed=0
ran=0 dry=0 syn=0 refused=0 skipped=0
fail() {
  echo "FAIL: $*"
  failed=$((failed + 1))
}

# ---- commands that cannot run here: pattern (extended regex) <TAB> reason ----
SKIP="$(cat <<'EOF'
^sudo 	needs root on a board (loads a bitstream, an overlay or the kernel module)
^cat /sys/kernel/config	reads the overlay state of a board
^cat \$\(find /proc/device-tree	reads the device tree of a board
^git clone <	a placeholder for the repository's address
^v\+\+ 	the Vitis linker (Xilinx tools, not in Debian)
^verilator \.\.\. 	an excerpt of the flags (the build runs the whole command: sim/tsim/module.mk)
^make -C driver/linux KDIR=~/linux-xlnx	needs a board vendor's kernel tree
^make -C driver/linux KDIR=/lib/modules/6\.1\.0-56-amd64/build	names one kernel release (make loom-ko finds this machine's)
^\./loom run digits_cnn\.loom --backend linux	needs a board with loom.ko (tests/qemu runs the linux backend)
^ln -s /usr/lib/x86_64-linux-gnu/libxrt_core	changes a user's own XRT tree
^make test$	the suite this test is part of
^make demo$	a few minutes on tsim; the README's demo figures come from it
^make (bench|bench-compiler)$	the benchmark suite (10 minutes)
^make diff-long 	many thousand simulation seeds (long)
^loom dse docs/examples/kv260\.toml	a sweep of ResNet-18 and MobileNetV2 over 48 configurations (the ImageNet models of make test-nets, hours; tests/dse runs a small sweep)
^build/tests/diff/fsim_vs_tsim --fsim-only --seeds 1:10000	ten thousand seeds (long)
^build/bench/bench_rtl 	a benchmark (make bench-rtl)
^build/bin/loom compile build/models/resnet18\.onnx	needs the ImageNet models (make test-nets)
^loom config fmax 	runs Yosys synth_xilinx (minutes; tests/dse runs it with a stand-in Yosys)
EOF
)"

# ---- commands that must be refused here: pattern <TAB> stderr text ----
REFUSED="$(cat <<'EOF'
--backend xrt	xrt
EOF
)"

# ---- the sandbox: the files the docs name ----
setup() {
  for d in build tests scripts docs hw bitstreams include driver sim sw_compiler VERSION Makefile \
           build-aarch64 build-armv7; do
    [ -e "$top/$d" ] && ln -s "$top/$d" "$box/$d"
  done
  ln -s "$LOOM" "$box/loom"
  (
    cd "$box" || exit 1
    "$LOOM" asm tests/asm/gemm64.s -o gemm64.loom &&
      "$LOOM" asm tests/asm/store_fault.s -o store_fault.loom &&
      "$top/$BUILD/tests/cli/gemm_ref" 8 5 . >/dev/null &&
      "$LOOM" compile "$MODELS/digits_cnn.onnx" --calib "$MODELS/calib_digits_cnn" -q -o cnn.loom &&
      cp "$MODELS/digits_cnn_in0.npy" x.npy && cp x.npy digit.npy && cp x.npy in.npy && cp cnn.loom model.loom &&
      cp "$MODELS/digits_cnn.onnx" net.onnx && ln -s "$MODELS/calib_digits_cnn" calib &&
      cp "$top/docs/examples/kv32.cfg" kv.cfg &&
      sed 's/^block_in = .*/block_in = 12/; s/^bus_bits = .*/bus_bits = 96/' kv.cfg > bad.cfg &&
      /usr/bin/python3 -c "
import numpy as np
np.save('f.npy', np.zeros((64, 64), np.float32))
np.save('sf.npy', np.arange(8, dtype=np.int32))"
  ) || { echo "FAIL: the sandbox could not be made"; exit 1; }
  if [ "${LOOM_DOC_NETS:-0}" = 1 ] && [ -f "$MODELS/resnet18.onnx" ]; then
    (cd "$box" && "$LOOM" compile "$MODELS/resnet18.onnx" --calib "$MODELS/calib_imagenet" -q -o resnet18.loom) ||
      fail "ResNet-18 could not be compiled"
  fi
}

# ---- extraction ----
# extract FILE: "LINE<TAB>cmd<TAB>TEXT" for commands, "LINE<TAB>out<TAB>TEXT"
# for the documented output of the command before.
extract() {
  awk -v OFS='\t' '
    function flush(   i, prompted, n, cmd, pend) {
      prompted = 0
      for (i = 1; i <= nb; i++) if (b[i] ~ /^\$ /) prompted = 1
      pend = ""
      for (i = 1; i <= nb; i++) {
        t = b[i]
        if (pend != "") { sub(/^[ \t]+/, "", t); t = pend " " t; pend = ""; }
        if (t ~ /\\$/) { sub(/[ \t]*\\$/, "", t); pend = t; continue }
        if (prompted && t ~ /^\$ /) print ln[i], "cmd", substr(t, 3)
        else if (prompted) print ln[i], "out", t
        else print ln[i], "cmd", t
      }
      nb = 0
    }
    /^```/ { if (fence) flush(); fence = !fence; next }
    fence { b[++nb] = $0; ln[nb] = NR; next }
    /^    / && (prev_blank || nb) { t = $0; sub(/^    /, "", t); b[++nb] = t; ln[nb] = NR; next }
    { if (nb) flush(); prev_blank = ($0 ~ /^ *$/) }
    END { if (nb) flush() }
  ' "$1"
}

# The first word is a program (else the line is prose, code, output or a listing).
is_command() {
  local w=${1%% *}
  case $w in
    loom | ./loom | make | sh | bash | sudo | cat | git | qemu-*-static | v++ | verilator | python3 | ln | cp) return 0 ;;
    build/* | tests/* | scripts/*) [ -x "$top/$w" ] || [ -x "$top/${w%%/*}" ] && [ -f "$top/$w" ] && return 0 ;;
    [A-Z]*=*) return 0 ;;
  esac
  [ "$w" = build/bin/loom ] && return 0
  return 1
}

# Output of loom ("loom run: 42%", "loom a0000000.loom: probe"), not a command.
is_output() { [[ $1 =~ ^(\./)?loom\ [^\ ]*:(\ |$) ]] || [[ $1 =~ ^loom: ]]; }

is_synopsis() {
  [[ $1 == *'['* || $1 == *'...'* || $1 == *'<'* ]] && return 0
  [[ $1 =~ [A-Za-z0-9]\|[A-Za-z] ]] && return 0
  local t
  for t in $1; do [[ $t =~ ^[A-Z][A-Z0-9_]{2,}(\.[a-z]+)?$ ]] && return 0; done
  return 1
}

lookup() { # lookup TABLE TEXT -> the matching line's second field
  local pat val
  while IFS=$'\t' read -r pat val; do
    [ -n "$pat" ] && [[ $2 =~ $pat ]] && { printf '%s\n' "$val"; return 0; }
  done <<<"$1"
  return 1
}

# ---- checks ----
synopsis() { # synopsis WHERE CMD
  local cmd=$2 sub help t
  syn=$((syn + 1))
  echo "usage: $1: $cmd"
  sub=$(echo "$cmd" | awk '{ print $2 }')
  if [[ ${cmd%% *} != *loom ]]; then
    local prog=${cmd%% *}
    [ -x "$top/$prog" ] || fail "$1: $cmd: no program $prog"
    return
  fi
  case $sub in --help | --version | -h | COMMAND) help=$("$LOOM" --help 2>&1); sub="" ;;
    *) help=$("$LOOM" "$sub" --help 2>&1) || { fail "$1: $cmd: 'loom $sub' is not a command"; return; } ;;
  esac
  for t in $cmd; do
    t=${t#[}; t=${t%%]*}; t=${t%%=*}
    [[ $t == -* && $t != --help && $t != --version && $t != -h ]] || continue
    grep -qE -- "(^|[ ,])$t([ ,=]|$)" <<<"$help" || fail "$1: $cmd: option $t is not in 'loom $sub --help'"
  done
}

dry_run() { # dry_run WHERE CMD
  dry=$((dry + 1))
  local args=${2#make }
  echo "make -n: $1: $2"
  # shellcheck disable=SC2086 # the documented words
  (cd "$top" && make -n $args >"$tmp/dry" 2>&1) || { fail "$1: make -n $args:"; tail -5 "$tmp/dry"; }
}

run_cmd() { # run_CMD WHERE CMD EXPECTED-STDERR-FILE WANT-STATUS
  local where=$1 cmd=$2 errs=$3 want=$4 code
  ran=$((ran + 1))
  (cd "$box" && PATH="$box:$PATH" timeout 900 bash -c "$cmd") >"$tmp/out" 2>"$tmp/err"
  code=$?
  if [ "$code" -ne "$want" ]; then
    fail "$where: $cmd: exit status $code, documented $want"
    tail -5 "$tmp/err" | sed 's/^/  | /'
    return
  fi
  local e
  while IFS= read -r e; do
    [ -n "$e" ] && ! grep -qF -- "$e" "$tmp/err" && fail "$where: $cmd: stderr lacks the documented '$e'"
  done <"$errs"
  echo "run ($code): $where: $cmd"
}

# Documented counters ("  GEMM_OPS   4096") equal the run's.
check_counters() { # WHERE CMD DOC-OUTPUT
  local name val got
  while read -r name val; do
    got=$(awk -v n="$name" '$1 == n { print $2 }' "$tmp/out" | tail -1)
    [ -z "$got" ] || [ "$got" = "$val" ] || fail "$1: $2: documented $name $val, the run says $got"
  done < <(grep -E '^  [A-Z][A-Z_]+ +[0-9]+$' "$3")
}

handle() { # handle WHERE CMD DOC-OUTPUT-FILE
  local where=$1 raw=$2 docout=$3 cmd comment want reason
  # "CMD   # comment", or "CMD      what it does" (a two-column listing)
  cmd=$(sed -E 's/ {2,}#.*$//; s/ {3,}[^ ].*$//; s/[[:space:]]*$//' <<<"$raw")
  comment=""
  [[ $raw == *' #'* ]] && comment=${raw#* #}
  [ -z "$cmd" ] && return
  if reason=$(lookup "$SKIP" "$cmd"); then
    skipped=$((skipped + 1))
    echo "skip: $where: $cmd ($reason)"
    return
  fi
  if [[ $cmd == *resnet18* ]] && [ ! -f "$box/resnet18.loom" ]; then
    skipped=$((skipped + 1))
    echo "skip: $where: $cmd (needs the ImageNet models: LOOM_DOC_NETS=1 after make test-nets)"
    return
  fi
  if [[ $cmd =~ build-(aarch64|armv7)/bin/loom ]] && [ ! -x "$top/${BASH_REMATCH[0]}" ]; then
    skipped=$((skipped + 1))
    echo "skip: $where: $cmd (no cross build here: make cross ARCH=${BASH_REMATCH[1]})"
    return
  fi
  if [[ $cmd == *';'* && $cmd != *"'"* ]]; then
    local part
    IFS=';' read -ra parts <<<"$cmd"
    for part in "${parts[@]}"; do handle "$where" "$(sed 's/^ *//' <<<"$part")" /dev/null; done
    return
  fi
  if is_synopsis "$cmd"; then
    synopsis "$where" "$cmd"
    return
  fi
  if [[ $cmd == "make loom-ko" ]]; then
    ran=$((ran + 1)) # a real build: a dry run would need its output directory
    (cd "$top" && make loom-ko >"$tmp/make" 2>&1) || { fail "$where: make loom-ko:"; tail -5 "$tmp/make"; }
    return
  fi
  if [[ $cmd == make\ * ]]; then
    dry_run "$where" "$cmd"
    return
  fi
  if [[ $cmd == "sh scripts/install-deps.sh && make "* ]]; then
    ran=$((ran + 1))
    (cd "$top" && sh scripts/install-deps.sh --check) || fail "$where: scripts/install-deps.sh --check"
    handle "$where" "make ${cmd##*&& make }" /dev/null
    return
  fi
  grep -E '^loom: ' "$docout" | sed 's/ *\.\.\.$//' >"$tmp/errs"
  want=0
  [ -s "$tmp/errs" ] && want=1
  [[ $comment =~ exit\ status\ ([0-9]+) ]] && want=${BASH_REMATCH[1]}
  if reason=$(lookup "$REFUSED" "$cmd"); then
    refused=$((refused + 1))
    printf '%s\n' "$reason" >>"$tmp/errs"
    want=1
  fi
  run_cmd "$where" "$cmd" "$tmp/errs" "$want"
  check_counters "$where" "$cmd" "$docout"
}

# handle_file SOURCE-NAME EXTRACT-OUTPUT
handle_all() {
  local src=$1 list=$2 ln kind text cur="" curln=""
  : >"$tmp/docout"
  while IFS=$'\t' read -r ln kind text; do
    if [ "$kind" = out ]; then
      printf '%s\n' "$text" >>"$tmp/docout"
      continue
    fi
    [ -n "$cur" ] && handle "$src:$curln" "$cur" "$tmp/docout"
    cur="" curln=""
    : >"$tmp/docout"
    is_command "$text" || continue
    is_output "$text" && continue
    cur=$text curln=$ln
  done <"$list"
  [ -n "$cur" ] && handle "$src:$curln" "$cur" "$tmp/docout"
}

setup
for f in README.md docs/*.md; do
  extract "$f" >"$tmp/list"
  handle_all "$f" "$tmp/list"
done
for c in $("$LOOM" --help | awk '/^commands:/ { on = 1; next } on && !NF { exit } on { print $1 }'); do
  "$LOOM" "$c" --help | awk -v OFS='\t' '
    /^example/ { on = 1; next }
    on && !/^  / { on = 0 }
    on { l = $0; sub(/^ +/, "", l); t = pend != "" ? pend " " l : l; pend = "";
         if (t ~ /\\$/) { sub(/ *\\$/, "", t); pend = t; next } print NR, "cmd", t }' >"$tmp/list"
  handle_all "loom $c --help" "$tmp/list"
done
echo "test_doc_commands: $ran run ($refused refused as expected), $syn usage lines checked against --help," \
  "$dry make targets dry-run, $skipped skipped, $failed failed"
[ "$failed" -eq 0 ]
