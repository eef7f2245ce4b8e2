#!/bin/sh
# run-qemu-test.sh - boots Debian's kernel in QEMU with a busybox initramfs,
# loads loom.ko with its software test devices and runs the ABI test
# (loom_abi_test), the robustness test (loom_robust_test: a wedged device,
# per-user quotas) and libloom's linux backend (loom_backend_test) against
# them.  docs/linux-driver.md, "Testing without hardware".
#
#   tests/qemu/run-qemu-test.sh         (make test runs it; make test-qemu too)
#
# Needs a kernel image and the headers of the same version
# (/boot/vmlinuz-V and /lib/modules/V/build: linux-image-amd64 and
# linux-headers-amd64), qemu-system-x86_64, a static busybox
# (busybox-static) and cpio.  Without them it prints SKIP and succeeds,
# unless LOOM_QEMU_REQUIRED=1 (make test-qemu), when it fails.
#
# Environment: BUILD (build directory, default build), LOOM_QEMU_KVER
# (kernel version), LOOM_QEMU_ACCEL=auto|kvm|tcg (auto: KVM if a probe boot
# with it works within 10 s, else TCG), LOOM_QEMU_TIMEOUT (seconds, 300).
set -eu

top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
BUILD=${BUILD:-build}
out=$BUILD/tests/qemu
accel_mode=${LOOM_QEMU_ACCEL:-auto}
limit=${LOOM_QEMU_TIMEOUT:-300}

skip() {
  if [ "${LOOM_QEMU_REQUIRED:-0}" = 1 ]; then
    echo "run-qemu-test: FAIL: $*" >&2
    exit 1
  fi
  echo "run-qemu-test: SKIP: $*"
  exit 0
}

# The newest kernel that has both an image and headers.
pick_kernel() {
  for v in $(ls /lib/modules 2>/dev/null | sort -V -r); do
    if [ -r "/boot/vmlinuz-$v" ] && [ -f "/lib/modules/$v/build/Makefile" ]; then
      echo "$v"
      return
    fi
  done
}

kver=${LOOM_QEMU_KVER:-$(pick_kernel)}
[ -n "$kver" ] || skip "no kernel with both /boot/vmlinuz-V and /lib/modules/V/build (apt-get install linux-image-amd64 linux-headers-amd64)"
command -v qemu-system-x86_64 >/dev/null || skip "qemu-system-x86_64 missing (apt-get install qemu-system-x86)"
command -v cpio >/dev/null || skip "cpio missing"
busybox=$(command -v busybox || true)
[ -n "$busybox" ] && ! ldd "$busybox" >/dev/null 2>&1 || skip "no static busybox (apt-get install busybox-static)"
[ -x "$out/loom_abi_test" ] || skip "$out/loom_abi_test not built (make test-qemu builds it)"
vmlinuz=/boot/vmlinuz-$kver
mkdir -p "$out"

# KVM only when a probe boot reaches the kernel's "no root" panic quickly:
# nested KVM can exist and still hang (as in some CI sandboxes).
probe_kvm() {
  [ -w /dev/kvm ] || return 1
  timeout 10 sh -c 'qemu-system-x86_64 -accel kvm -m 256 -nodefaults -display none \
    -serial stdio -no-reboot -kernel "$1" -append "console=ttyS0 panic=-1" 2>&1' sh "$vmlinuz" |
    grep -q -E 'Kernel panic|VFS: Unable'
}

case $accel_mode in
  kvm) accel=kvm ;;
  tcg) accel=tcg ;;
  *) probe_kvm > /dev/null 2>&1 & probe=$! ;;
esac

# The module, against the headers of the kernel that boots.
if ! make --no-print-directory -C driver/linux KDIR="/lib/modules/$kver/build" > "$out/module.log" 2>&1; then
  cat "$out/module.log"
  echo "run-qemu-test: FAIL: building loom.ko for $kver" >&2
  exit 1
fi
ko=$top/build/linux/$kver/loom.ko

# The initramfs: busybox, /init, the module and the test programs.
root=$out/rootfs
rm -rf "$root"
mkdir -p "$root/bin" "$root/proc" "$root/sys" "$root/dev"
cp "$busybox" "$root/bin/busybox"
cp tests/qemu/init.sh "$root/init"
cp "$ko" "$root/loom.ko"
cp "$out/loom_abi_test" "$root/"
if [ -x "$out/loom_robust_test" ]; then cp "$out/loom_robust_test" "$root/"; fi
if [ -x "$out/loom_backend_test" ]; then cp "$out/loom_backend_test" "$root/"; fi
(cd "$root" && find . | cpio -o -H newc --quiet) | gzip -1 > "$out/initramfs.cpio.gz"

if [ "$accel_mode" = auto ]; then
  if wait "$probe"; then accel=kvm; else accel=tcg; fi
fi
echo "run-qemu-test: booting $vmlinuz under $accel"

# -nodefaults: no VGA, NIC or option ROMs; the console is the serial port.
# no_timer_check: under TCG on a busy host the kernel's boot-time check of
# the IO-APIC timer can miss its ticks and panic ("IO-APIC + timer doesn't
# work"); the check means nothing in a VM.
start=$(date +%s)
set +e
timeout "$limit" sh -c 'accel=$1; shift; exec qemu-system-x86_64 -accel "$accel" "$@"' sh "$accel" \
  -m 512 -smp 2 -nodefaults -display none -serial stdio -no-reboot \
  -kernel "$vmlinuz" -initrd "$out/initramfs.cpio.gz" \
  -append "console=ttyS0 panic=-1 quiet panic_on_warn=1 oops=panic no_timer_check" \
  < /dev/null > "$out/console.log" 2>&1
rc=$?
set -e
tr -d '\r' < "$out/console.log" | grep -v '^$' || true
secs=$(($(date +%s) - start))
if grep -q 'LOOM-QEMU-RESULT: PASS' "$out/console.log"; then
  echo "run-qemu-test: PASS ($accel, ${secs} s)"
  exit 0
fi
[ $rc -eq 124 ] && echo "run-qemu-test: QEMU did not finish within $limit s" >&2
echo "run-qemu-test: FAIL (console in $out/console.log)" >&2
exit 1
