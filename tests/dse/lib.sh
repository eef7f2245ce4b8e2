# tests/dse/lib.sh - what the configuration-file and DSE tests share
# (sourced).  Sets LOOM, BUILD, tmp (removed on exit), and:
#
#   expect, fail                        tests/cli/common.sh's
#   check NAME CONDITION...             a named check of a shell condition
#   finish                              the summary line; exit 1 on failure
LOOM=${LOOM:-build/bin/loom}
BUILD=${BUILD:-build}
case $LOOM in /*) ;; *) LOOM=$(pwd)/$LOOM ;; esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0
checks=0

. tests/cli/common.sh # fail, expect

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
