#!/bin/sh
# Installs the Debian 12 packages Loom needs.  Safe to run any number of
# times: it only calls apt-get when a package is missing.
#
#   scripts/install-deps.sh          everything (build, tests, demo, models)
#   scripts/install-deps.sh --check  exit 1 if something is missing, install nothing
set -eu

PACKAGES="build-essential pkg-config zlib1g-dev libssl-dev libcmocka-dev
verilator yosys iverilog tcl libjansson-dev
protobuf-c-compiler libprotobuf-c-dev
python3 python3-numpy python3-onnx python3-torch python3-torchvision python3-sklearn
gnuplot-nox jq clang libclang-rt-14-dev llvm-15-dev device-tree-compiler lld-15
linux-headers-amd64 linux-image-amd64 sparse qemu-system-x86 busybox-static cpio libxrt-dev
gcc-aarch64-linux-gnu gcc-arm-linux-gnueabihf libc6-dev-arm64-cross libc6-dev-armhf-cross
qemu-user-static
slurmctld slurmd slurm-client munge"

# Node and npm run the model zoo's onnxruntime-node reference (tests only,
# tests/zoo/): Debian's nodejs and npm, unless node and npm are already on the
# PATH (another distribution's nodejs package ships npm inside it, and
# Debian's npm would conflict with it).
NODE_PACKAGES=""
if ! command -v node > /dev/null 2>&1 || ! command -v npm > /dev/null 2>&1; then
  NODE_PACKAGES="nodejs npm"
fi

missing=""
for p in $PACKAGES $NODE_PACKAGES; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then
    missing="$missing $p"
  fi
done

if [ -z "$missing" ]; then
  exit 0
fi
if [ "${1:-}" = "--check" ]; then
  echo "install-deps: missing Debian packages:$missing" >&2
  exit 1
fi
echo "install-deps: installing$missing"
if [ "$(id -u)" != 0 ]; then
  SUDO=sudo
else
  SUDO=
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
# shellcheck disable=SC2086
$SUDO apt-get install -y -q --no-install-recommends $missing
