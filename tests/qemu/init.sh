#!/bin/busybox sh
# init.sh - PID 1 of the QEMU test's initramfs (run-qemu-test.sh copies it
# to /init).  Loads loom.ko with software test devices, runs the test
# programs, checks that the module unloads and that the kernel logged no
# warning, prints "LOOM-QEMU-RESULT: PASS" or "... FAIL" and powers off.
# The kernel runs with panic_on_warn=1, so a WARN_ON in the driver ends the
# boot before the result line: that is a failure too.

/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev

result=PASS
fail() { echo "loom-qemu: FAIL: $*"; result=FAIL; }
say() { echo "loom-qemu: $*"; }

say "kernel $(uname -r), $(nproc) CPUs"

# Two interrupt-driven test devices: the whole ABI test, then libloom.
insmod /loom.ko testdev=2 timeout_ms=3000 || fail "insmod loom.ko testdev=2"
[ -c /dev/loom0 ] && [ -c /dev/loom1 ] || fail "no /dev/loom0 and /dev/loom1"
/loom_abi_test /dev/loom0 /dev/loom1 || fail "loom_abi_test"
if [ -x /loom_backend_test ]; then
  /loom_backend_test /dev/loom0 || fail "loom_backend_test"
fi
rmmod loom || fail "rmmod loom"
[ -e /dev/loom0 ] && fail "/dev/loom0 still there after rmmod"

# A device without an interrupt line: completion by polling.
insmod /loom.ko testdev=1 testdev_irq=0 || fail "insmod loom.ko testdev_irq=0"
/loom_abi_test --quick /dev/loom0 || fail "loom_abi_test --quick (polling)"
rmmod loom || fail "rmmod loom (polling)"

# A device that ignores SOFT_RESET: pinned memory, EIO, recovery.
if [ -x /loom_robust_test ]; then
  insmod /loom.ko testdev=1 || fail "insmod loom.ko (wedge)"
  /loom_robust_test --wedge /dev/loom0 || fail "loom_robust_test --wedge"
  rmmod loom || fail "rmmod loom (wedge)"
  # Per-user quotas, small enough to reach (loom_robust_test.c names them).
  insmod /loom.ko testdev=1 max_user_buffers=40 max_file_buffers=16 max_user_mb=1 ||
    fail "insmod loom.ko (quotas)"
  /loom_robust_test --quota /dev/loom0 || fail "loom_robust_test --quota"
  rmmod loom || fail "rmmod loom (quotas)"
fi

# Module parameters are checked.
if insmod /loom.ko testdev=1 timeout_ms=0 2>/dev/null; then
  fail "timeout_ms=0 accepted"
  rmmod loom
fi
if insmod /loom.ko testdev=1 max_user_buffers=0 2>/dev/null; then
  fail "max_user_buffers=0 accepted"
  rmmod loom
fi

if dmesg | grep -E 'BUG:|WARNING:|Oops|general protection|refcount_t:|corruption|stray DMA'; then
  fail "the kernel logged a problem"
fi
dmesg | grep -E 'loom' | grep -v -E 'taints kernel|module verification' | sed 's/^/dmesg: /'
echo "LOOM-QEMU-RESULT: $result"
poweroff -f
