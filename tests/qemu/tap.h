/*
 * tap.h - the few lines of test harness the QEMU test programs share.
 *
 * The programs run inside a busybox initramfs, linked statically, so they
 * cannot use cmocka (Debian ships no static libcmocka): each test is a
 * function run by tap_run(), which prints a TAP line ("ok 3 - reset" or
 * "not ok 3 - reset" after the failed checks), and tap_done() prints the
 * summary line "NAME: N passed, M failed" and returns the exit status.
 */
#ifndef LOOM_QEMU_TAP_H
#define LOOM_QEMU_TAP_H

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

struct tap {
  int failed_checks; /* in the current test */
  int passed, failed;
};

static struct tap tap_state;

static void tap_check(int line, int ok, const char *what, const char *fmt, ...) {
  if (ok) return;
  char detail[256] = "";
  if (fmt) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
  }
  printf("#   line %d: %s %s\n", line, what, detail);
  tap_state.failed_checks++;
}

#define CHECK(cond) tap_check(__LINE__, !!(cond), #cond, NULL)
#define CHECKF(cond, ...) tap_check(__LINE__, !!(cond), #cond, __VA_ARGS__)
/* A call returning 0 or -errno must return `want`. */
#define EXPECT(call, want)                                                         \
  do {                                                                             \
    int got_ = (call);                                                             \
    tap_check(__LINE__, got_ == (want), #call, "= %d (%s), expected %d (%s)", got_, \
              strerror(-got_), (want), strerror(-(want)));                         \
  } while (0)

static void tap_run(const char *name, void (*fn)(void)) {
  tap_state.failed_checks = 0;
  fn();
  int n = tap_state.passed + tap_state.failed + 1;
  if (tap_state.failed_checks) tap_state.failed++;
  else tap_state.passed++;
  printf("%s %d - %s\n", tap_state.failed_checks ? "not ok" : "ok", n, name);
  fflush(stdout);
}

static int tap_done(const char *program) {
  printf("1..%d\n%s: %d passed, %d failed\n", tap_state.passed + tap_state.failed, program,
         tap_state.passed, tap_state.failed);
  return tap_state.failed ? 1 : 0;
}

#endif
