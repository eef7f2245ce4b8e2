#!/bin/sh
# test_profile.sh - `loom run --profile / --profile-json / --trace` on the
# digits CNN (default config) on tsim, and what they say where they cannot.
#
#   - the outputs are the same bytes as fsim's (tracing changes nothing);
#   - the table has a row per layer with the layer names from JOBMETA, a
#     total row and the host step with its wall time;
#   - the trace validates against the trace-event format and its slices
#     add up to the counters exactly (check_trace.py), and the checker
#     refuses a trace with one slice removed or lengthened;
#   - fsim (without --timing) says it counts no cycles; --trace there, or
#     on any backend without timelines, fails with a message;
#   - a file without JOBMETA (the assembled GEMM example) still profiles,
#     saying so.
#
# Environment: LOOM, BUILD.  Needs build/tsim/default/libloom_tsim.so and
# the digits model.
set -eu
LOOM=${LOOM:-build/bin/loom}
BUILD=${BUILD:-build}
M=build/models
PY=/usr/bin/python3
CHECK=tests/profile/check_trace.py
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0
fail() { echo "FAIL: $*"; failed=$((failed + 1)); }
has() { grep -q -- "$2" "$1" || fail "$1 lacks '$2'"; }

"$LOOM" compile $M/digits_cnn.onnx --calib $M/calib_digits_cnn --config default -o "$tmp/cnn.loom" -q
"$LOOM" inspect "$tmp/cnn.loom" >"$tmp/inspect.txt"
has "$tmp/inspect.txt" "  JOBMETA " # a signed file (native IM2COL) is format 1.4: JOBMETA, KERNELS, then SIGNATURE
has "$tmp/inspect.txt" "layer: /conv2/Conv, conv 3x3/1, 294912 MACs; estimated"

# ---- tsim: exact ----
"$LOOM" run "$tmp/cnn.loom" -b tsim -i $M/digits_cnn_in0.npy -o "$tmp/tsim.npy" --profile \
  --profile-json "$tmp/p.json" --trace "$tmp/t.json" >"$tmp/profile.txt"
"$LOOM" run "$tmp/cnn.loom" -b fsim -i $M/digits_cnn_in0.npy -o "$tmp/fsim.npy"
cmp "$tmp/tsim.npy" "$tmp/fsim.npy" || fail "tsim with tracing and fsim disagree"
cat "$tmp/profile.txt"
has "$tmp/profile.txt" "on tsim, config default: peak 256 MACs/cycle, DRAM 8 bytes/cycle, 100 MHz"
has "$tmp/profile.txt" "/conv2/Conv  *conv 3x3/1  *[0-9][0-9]* *294912 "
has "$tmp/profile.txt" "IM2COL  *host .*(host, [0-9.]* ms wall)"
has "$tmp/profile.txt" "^     total  "
$PY $CHECK "$tmp/t.json" "$tmp/p.json" || fail "the trace does not check"
# the JSON profile's total is the sum of its layers
$PY - "$tmp/p.json" <<'PY' || fail "profile JSON totals"
import json, sys
p = json.load(open(sys.argv[1]))
jobs = [s for s in p["steps"] if s["job"] >= 0]
assert p["has_cycles"] and p["has_job_metadata"] and len(jobs) == 6, p
for k in ("cycles", "macs", "dma_bytes", "bound_cycles"):
    assert sum(s[k] for s in jobs) == p["total"][k], k
for s in jobs:
    c = s["counters"]
    assert s["cycles"] == c["CYCLES"] and s["bound_cycles"] <= s["cycles"], s["name"]
    assert abs(s["utilization"] - s["macs"] / (256 * s["cycles"])) < 1e-6
PY

# the checker must catch a broken trace: drop a compute slice, stretch one
$PY - "$tmp/t.json" "$tmp/drop.json" "$tmp/long.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
ev = doc["traceEvents"]
i = next(k for k, e in enumerate(ev) if e["ph"] == "X" and e["tid"] == 2 and e["cat"] == "insn")
json.dump(dict(doc, traceEvents=ev[:i] + ev[i + 1:]), open(sys.argv[2], "w"))
ev[i] = dict(ev[i], dur=ev[i]["dur"] + 0.01, args=dict(ev[i]["args"], cycles=ev[i]["args"]["cycles"] + 1))
json.dump(doc, open(sys.argv[3], "w"))
PY
for bad in drop long; do
  if $PY $CHECK "$tmp/$bad.json" "$tmp/p.json" >"$tmp/$bad.out" 2>&1; then
    fail "check_trace accepted a trace with a $bad slice"
  fi
done
has "$tmp/drop.out" "COMPUTE slices (count, busy, token, DRAM)"

# ---- fsim without timing: no cycles, no timelines ----
"$LOOM" run "$tmp/cnn.loom" -i $M/digits_cnn_in0.npy --profile >"$tmp/fsim.txt"
has "$tmp/fsim.txt" "the fsim backend counted no cycles"
has "$tmp/fsim.txt" "/conv2/Conv  *conv 3x3/1  *-  *294912 "
if "$LOOM" run "$tmp/cnn.loom" -i $M/digits_cnn_in0.npy --trace "$tmp/x.json" 2>"$tmp/err.txt"; then
  fail "--trace on fsim without timing succeeded"
fi
has "$tmp/err.txt" "--trace: fsim"
test ! -e "$tmp/x.json" || fail "--trace on fsim wrote a file"

# ---- a file without JOBMETA (format 1.0) ----
"$LOOM" asm tests/asm/gemm64_default.s -o "$tmp/gemm.loom"
"$BUILD/tests/cli/gemm_ref" 16 7 "$tmp"
"$LOOM" run "$tmp/gemm.loom" -b tsim -i A="$tmp/a.npy" -i B="$tmp/b.npy" --profile \
  --profile-json "$tmp/g.json" --trace "$tmp/gt.json" >"$tmp/gemm.txt"
has "$tmp/gemm.txt" "has no job metadata"
has "$tmp/gemm.txt" "^0    job 0 "
$PY $CHECK "$tmp/gt.json" "$tmp/g.json" || fail "the GEMM trace does not check"

[ $failed -eq 0 ] || { echo "test_profile: $failed failure(s)"; exit 1; }
echo "test_profile: ok"
