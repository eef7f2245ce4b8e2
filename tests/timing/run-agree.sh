#!/bin/sh
# tests/timing/run-agree.sh - the timing model's agreement test in `make test`
# (docs/fsim-timing.md): the twelve ResNet-18 convolutions, the GEMM sweep,
# the micro-benchmarks and 100 constrained-random jobs, on tsim and on fsim
# timing=1 (default configuration, default DRAM model); fails beyond +-5%
# on any of them.  Extra arguments go to timing_agree.
set -eu
exec "${BUILD:-build}/tests/timing/timing_agree" --micro --random 100 "$@"
