#!/bin/sh
# test_dse_slurm.sh - `loom dse --slurm` through a real Slurm (make
# test-dse-slurm): starts a one-node cluster (tests/dse/slurm-cluster.sh,
# as root), runs the digits sweep of test_dse.sh locally, submits the same
# sweep as a job array of 3-point tasks, waits for it, collects, and checks
# that the results are byte for byte the local run's.  Then, with the
# controller stopped, --slurm must fail in one line naming sbatch and the
# reason.  The daemons are stopped on every exit path.
#
# Yosys is tests/dse/fake/yosys, as in test_dse.sh: this test is about
# Slurm.  Environment: LOOM, BUILD.  Needs build/models (make test).
set -eu
. tests/dse/lib.sh
C=$tmp/cluster
stop_cluster() { tests/dse/slurm-cluster.sh stop "$C" || true; rm -rf "$tmp"; }
trap stop_cluster EXIT
trap 'exit 1' INT TERM
M=$(pwd)/build/models
PATH=$(pwd)/tests/dse/fake:$PATH:/usr/sbin
XDG_CACHE_HOME=$tmp/cache
export PATH XDG_CACHE_HOME
unset LOOM_CACHE || true

start=$(date +%s)
tests/dse/slurm-cluster.sh start "$C"
export SLURM_CONF="$C/slurm.conf"
echo "cluster up in $(( $(date +%s) - start )) s"

cat > "$tmp/sweep.toml" <<EOF
part = "xc7z020clg400-1"
networks = ["$M/digits_cnn.onnx", "$M/digits_mlp.onnx"]
calib = ["$M/calib_digits_cnn", "$M/calib_digits_mlp"]
base = "tiny"
block_in = [8, 16]
block_out = "block_in"
wgt_kib = [8, 16]
clock_mhz = [100, 200]
EOF
expect 0 out "" "$LOOM" dse "$tmp/sweep.toml" --out "$tmp/local" --jobs 2 -q

# the array: 8 valid points, 3 per task -> 3 tasks; OUT is on this node's disk
expect 0 out "submitted Slurm job" "$LOOM" dse "$tmp/sweep.toml" --out "$tmp/slurm" --slurm --partition loom --chunk 3
job=$(sed -n 's/^submitted Slurm job \([0-9]*\):.*/\1/p' "$tmp/out")
check "a job id" test -n "$job"
check "3 tasks" grep -q '^#SBATCH --array=0-2' "$tmp/slurm/slurm/job.sh"
for _ in $(seq 300); do
  [ -z "$(squeue -h -j "$job" 2> /dev/null)" ] && break
  sleep 1
done
check "the array finished within 300 s" test -z "$(squeue -h -j "$job" 2> /dev/null)"
for t in 0 1 2; do
  check "task $t ran" grep -q "task $t: " "$tmp/slurm/slurm/task-$t.log"
done
expect 0 out "rank point" "$LOOM" dse "$tmp/sweep.toml" --out "$tmp/slurm" --collect
check "Slurm results = local results" cmp "$tmp/slurm/results.json" "$tmp/local/results.json"
check "Slurm csv = local csv" cmp "$tmp/slurm/results.csv" "$tmp/local/results.csv"

# an unreachable controller: one line from sbatch, exit 1, no report
kill "$(cat "$C/slurmctld.pid")"
sleep 2
expect 1 err "--slurm: sbatch $tmp/down/slurm/job.sh failed: sbatch: error:" \
  timeout 120 "$LOOM" dse "$tmp/sweep.toml" --out "$tmp/down" --slurm
check "nothing reported after a failed submission" test ! -e "$tmp/down/results.json"
echo "test-dse-slurm took $(( $(date +%s) - start )) s"
finish
