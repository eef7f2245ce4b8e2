#!/bin/sh
# fetch-sysroot.sh DEBARCH SYSROOT PACKAGE... - unpacks Debian packages of a
# foreign architecture (arm64, armhf) into SYSROOT, for cross-compiling and
# for running the results under qemu-user (docs/cross.md).
#
# Debian's cross toolchains (gcc-aarch64-linux-gnu, libc6-dev-arm64-cross)
# bring the C library but not zlib or cmocka, and the multiarch way
# (dpkg --add-architecture arm64; apt-get install libcmocka-dev:arm64)
# changes the machine's package configuration -- and fails whenever the
# mirror's indexes of the two architectures are out of step.  Instead this
# script runs apt-get with a private state directory (its own sources list,
# index lists and cache under SYSROOT/../apt): it downloads the indexes of
# the Debian release this machine runs, for DEBARCH only, downloads the
# named packages and unpacks them with dpkg-deb.  Nothing is installed and
# nothing outside SYSROOT's parent changes; root is not needed.
#
# The archive is the one this machine's apt uses (the first URIs:/deb line
# of /etc/apt/sources.list{,.d/}), or LOOM_CROSS_MIRROR.
set -eu

[ $# -ge 3 ] || { echo "usage: $0 DEBARCH SYSROOT PACKAGE..." >&2; exit 2; }
debarch=$1 sysroot=$2
shift 2
apt=$(dirname "$sysroot")/apt

mirror=${LOOM_CROSS_MIRROR:-}
if [ -z "$mirror" ]; then
  mirror=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null |
    awk '/^URIs:/ { for (i = 2; i <= NF; i++) if ($i !~ /security/) { print $i; exit } }')
fi
if [ -z "$mirror" ]; then
  mirror=$(grep -h -E '^deb ' /etc/apt/sources.list 2>/dev/null | grep -v security |
    awk '{ for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) { print $i; exit } }')
fi
mirror=${mirror:-http://deb.debian.org/debian}
. /etc/os-release
suite=${VERSION_CODENAME:-bookworm}
keyring=/usr/share/keyrings/debian-archive-keyring.gpg

rm -rf "$apt"
mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$apt/debs" "$sysroot"
echo "deb [arch=$debarch signed-by=$keyring] $mirror $suite main" > "$apt/sources.list"
: > "$apt/status"
aptget() {
  apt-get -q -o Dir::Etc::SourceList="$apt/sources.list" -o Dir::Etc::SourceParts=/nonexistent \
    -o Dir::State::Lists="$apt/lists" -o Dir::Cache="$apt/cache" -o Dir::State::status="$apt/status" \
    -o APT::Architecture="$debarch" -o APT::Architectures="$debarch" -o Debug::NoLocking=1 \
    -o APT::Sandbox::User="$(id -un)" "$@"
}

echo "fetch-sysroot: $debarch: $* from $mirror $suite"
aptget update > "$apt/update.log" 2>&1 || { cat "$apt/update.log" >&2; exit 1; }
(cd "$apt/debs" && aptget download "$@") > "$apt/download.log" 2>&1 ||
  { cat "$apt/download.log" >&2; exit 1; }
for deb in "$apt"/debs/*.deb; do
  dpkg-deb -x "$deb" "$sysroot"
done
# Absolute symbolic links (libz.so -> /lib/...) would lead the linker to
# this machine's files: point them into the sysroot.
find "$sysroot" -type l | while read -r link; do
  target=$(readlink "$link")
  case $target in /*) ln -sf "$sysroot$target" "$link" ;; esac
done
echo "fetch-sysroot: unpacked $(ls "$apt/debs" | wc -l) packages into $sysroot"
