# tests/support/expect.sh - the checks the command-line tests share
# (sourced by tests/cli/test_cli.sh and tests/dse/lib.sh).  The caller sets
# tmp (a scratch directory), failed=0 and checks=0.
#
#   fail MESSAGE...                     count and print a failure
#   expect CODE STREAM PATTERN CMD...   CMD exits with CODE and its stdout
#                                       (STREAM=out) or stderr (err) holds the
#                                       fixed string PATTERN
#
# A sanitizer report (make SAN=1) fails the check whatever the exit code.

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
    sed 's/^/  | /' "$tmp/err" | head -n 40
  elif [ -n "$pattern" ] && ! grep -qF -- "$pattern" "$tmp/$stream"; then
    fail "$*: std$stream lacks '$pattern':"
    sed 's/^/  | /' "$tmp/$stream" | head -n 40
  fi
}
