# tests/dse/lib.sh - what the configuration-file and DSE tests share
# (sourced).  Sets LOOM, BUILD, tmp (removed on exit), and:
#
#   expect CODE STREAM PATTERN CMD...   CMD exits with CODE and its stdout
#                                       (out) or stderr (err) holds PATTERN
#   check NAME CONDITION...             a named check of a shell condition
#   finish                              the summary line; exit 1 on failure
#
# A sanitizer report fails a check whatever the exit code.
LOOM=${LOOM:-build/bin/loom}
BUILD=${BUILD:-build}
case $LOOM in /*) ;; *) LOOM=$(pwd)/$LOOM ;; esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0
checks=0

fail() {
  echo "FAIL: $*"
  failed=$((failed + 1))
}

expect() {
  want=$1 stream=$2 pattern=$3
  shift 3
  checks=$((checks + 1))
  set +e
  "$@" >"$tmp/out" 2>"$tmp/err"
  code=$?
  set -e
  if grep -qE 'Sanitizer|runtime error:' "$tmp/err"; then
    fail "$*: sanitizer report:"
    sed 's/^/  | /' "$tmp/err"
  elif [ "$code" -ne "$want" ]; then
    fail "$* exited $code, expected $want"
    sed 's/^/  | /' "$tmp/err" | head -20
  elif [ -n "$pattern" ] && ! grep -qF -- "$pattern" "$tmp/$stream"; then
    fail "$*: std$stream lacks '$pattern':"
    sed 's/^/  | /' "$tmp/$stream" | head -20
  fi
}

check() {
  name=$1
  shift
  checks=$((checks + 1))
  if ! "$@" > /dev/null; then fail "$name"; fi
}

finish() {
  echo "$(basename "$0"): $checks checks, $failed failed"
  [ "$failed" -eq 0 ]
}
