# common.sh - what the CLI test scripts share; sourced after they set $tmp
# (a scratch directory they remove at exit).
#
#   fail TEXT                     counts and prints a failure
#   expect CODE STREAM PATTERN CMD...
#                                 CMD exits with CODE and its stdout
#                                 (STREAM=out) or stderr (err) contains the
#                                 fixed string PATTERN ("" for anything); a
#                                 sanitizer report (make SAN=1) fails the
#                                 check whatever the exit code
#   summary NAME                  the closing line; the exit status
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
    sed 's/^/  | /' "$tmp/err"
  elif [ -n "$pattern" ] && ! grep -qF -- "$pattern" "$tmp/$stream"; then
    fail "$*: std$stream lacks '$pattern':"
    sed 's/^/  | /' "$tmp/$stream"
  fi
}

summary() {
  echo "$1: $checks checks, $failed failed"
  [ "$failed" -eq 0 ]
}
