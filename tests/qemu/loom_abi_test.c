/*
 * loom_abi_test.c - the ioctl ABI of loom.ko (include/loom/loom_uapi.h),
 * exercised from user space against the software test device.
 *
 * tests/qemu/run-qemu-test.sh boots Debian's kernel with this program in a
 * busybox initramfs, loads `loom.ko testdev=2` and runs
 *
 *     loom_abi_test /dev/loom0 /dev/loom1     every test
 *     loom_abi_test --quick /dev/loom0        the job tests only (used again
 *                                             with testdev_irq=0: polling)
 *
 * The test device executes a test command instead of Loom instructions
 * (LOOM_TESTDEV_* in the UAPI header): copy segment 0 to segment 1 after a
 * delay, fail with an error code, or hang until SOFT_RESET.  With that the
 * tests cover what a user of the driver relies on: alloc, mmap, submit,
 * wait, the job error path, memory protection by segment size, timeouts
 * (WAIT's and the watchdog's), RESET, waits interrupted by signals, the
 * queue between files and devices, closing a file mid-job (with and
 * without a live mapping), and that every malformed request is refused:
 * foreign handles, oversized counts, non-zero reserved fields, unaligned
 * sizes, bad pointers.
 *
 * The program is linked statically and uses no test library (the
 * initramfs holds nothing but busybox): each test prints a TAP line, and
 * the last line says "loom_abi_test: N passed, M failed" (tap.h).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "loom/loom_uapi.h"
#include "loom_isa_gen.h"
#include "tap.h"
#include "uapi_calls.h"

_Static_assert(sizeof(struct loom_uapi_query) == 112, "QUERY layout");
_Static_assert(sizeof(struct loom_uapi_alloc) == 40, "ALLOC layout");
_Static_assert(sizeof(struct loom_uapi_submit) == 48, "SUBMIT layout");
_Static_assert(sizeof(struct loom_uapi_wait) == 296, "WAIT layout");

/* The devices under test. */
static const char *dev0, *dev1;
/* ---- tests ---- */

static void test_query(void) {
  int fd = open_dev(dev0);
  struct loom_uapi_query q = query(fd);
  CHECK(q.uapi_version == LOOM_UAPI_VERSION);
  CHECK(q.hw_id == LOOM_HW_ID);
  CHECK((q.hw_version & 0xFFFF) == LOOM_ISA_VERSION);
  CHECKF(q.config_hash == LOOM_CONFIG_DEFAULT_HASH, "0x%08X", q.config_hash);
  CHECK(q.num_segments == LOOM_NUM_SEGMENTS);
  CHECK(q.num_counters == LOOM_CNT_COUNT);
  CHECK(q.flags & LOOM_QUERY_F_TESTDEV);
  CHECK(q.size_align == LOOM_UAPI_SIZE_ALIGN);
  CHECK(q.max_buffer_size >= (1u << 20) && q.max_file_buffers > 0);
  CHECK(q.default_timeout_ms > 0);
  for (int i = 0; i < 4; i++) CHECK(q.reserved[i] == 0);
  close(fd);
}

static void test_alloc_mmap(void) {
  int fd = open_dev(dev0);
  uint32_t h, h2;
  uint64_t off, off2;
  EXPECT(alloc(fd, 3 * PAGE, &h, &off), 0);
  EXPECT(alloc(fd, PAGE, &h2, &off2), 0);
  CHECK(h != 0 && h2 != 0 && h != h2 && off != off2);
  uint8_t *p = map(fd, off, 3 * PAGE), *q = map(fd, off, 3 * PAGE);
  CHECK(p && q);
  if (p && q) {
    int zero = 1;
    for (size_t i = 0; i < 3 * PAGE; i++) zero &= p[i] == 0;
    CHECK(zero); /* fresh buffers are zero-filled */
    fill(p, 3 * PAGE, 7);
    CHECK(memcmp(p, q, 3 * PAGE) == 0); /* one buffer, two shared views */
    munmap(q, 3 * PAGE);
    /* FREE of a mapped buffer drops the handle; the mapping stays usable. */
    EXPECT(free_handle(fd, h), 0);
    p[5] = 42;
    CHECK(p[5] == 42 && p[6] == (uint8_t)(6 * 31 + 7));
    EXPECT(free_handle(fd, h), -ENOENT);
    munmap(p, 3 * PAGE);
  }
  EXPECT(free_handle(fd, h2), 0);
  close(fd);
}

static void test_copy_job(void) {
  int fd = open_dev(dev0);
  struct job j;
  struct loom_uapi_wait w;
  job_setup(&j, fd, 2 * PAGE);
  fill(j.a, 2 * PAGE, 3);
  command(&j, LOOM_TESTDEV_OP_COPY, 20, 5000);
  EXPECT(job_submit(&j, 0), 0);
  EXPECT(wait_job(fd, 5000, &w), 0);
  CHECK(w.status == LOOM_JOB_DONE && w.error == LOOM_ERR_NONE);
  CHECK(w.num_counters == LOOM_CNT_COUNT);
  CHECK(w.counters[LOOM_CNT_BYTES_WR_OUT] == 5000);
  CHECK(w.counters[LOOM_CNT_BYTES_RD_INSN] == 16);
  CHECK(w.counters[LOOM_CNT_CYCLES] == 20u * 100000u);
  CHECK(memcmp(j.a, j.b, 5000) == 0 && j.b[5000] == 0);
  EXPECT(wait_job(fd, 100, &w), -ENOENT); /* the result was taken */
  job_teardown(&j);
  close(fd);
}

static void test_job_errors(void) {
  int fd = open_dev(dev0);
  struct job j;
  struct loom_uapi_wait w;
  job_setup(&j, fd, PAGE);
  /* The device reports an error: WAIT succeeds, `error` says which. */
  command(&j, LOOM_TESTDEV_OP_FAIL, 0, LOOM_ERR_DEADLOCK);
  EXPECT(submit(fd, j.insn, 7, j.seg, 2, 0), 0);
  EXPECT(wait_job(fd, 5000, &w), 0);
  CHECK(w.status == LOOM_JOB_DONE && w.error == LOOM_ERR_DEADLOCK && w.error_insn == 6);
  /* Memory protection: a segment of 1000 bytes stops a 2000-byte copy. */
  fill(j.a, PAGE, 9);
  command(&j, LOOM_TESTDEV_OP_COPY, 0, 2000);
  j.seg[1].size = 1000;
  EXPECT(job_submit(&j, 0), 0);
  EXPECT(wait_job(fd, 5000, &w), 0);
  CHECK(w.status == LOOM_JOB_DONE && w.error == LOOM_ERR_SEGMENT);
  CHECK(j.b[0] == 0); /* nothing was written */
  j.seg[1].size = 0;
  /* Not a test command: what a real Loom program does on this device. */
  j.cmd[0] = 0x12345678;
  EXPECT(job_submit(&j, 0), 0);
  EXPECT(wait_job(fd, 5000, &w), 0);
  CHECK(w.error == LOOM_ERR_ILLEGAL && w.error_insn == 0);
  job_teardown(&j);
  close(fd);
}

static void test_wait_timeout(void) {
  int fd = open_dev(dev0);
  struct job j;
  struct loom_uapi_wait w;
  uint64_t resets = query(fd).stat_resets;
  job_setup(&j, fd, PAGE);
  command(&j, LOOM_TESTDEV_OP_HANG, 0, 0);
  EXPECT(job_submit(&j, 10000), 0);
  uint64_t t0 = now_ms();
  EXPECT(wait_job(fd, 200, &w), -ETIMEDOUT);
  uint64_t dt = now_ms() - t0;
  CHECKF(dt >= 150 && dt < 5000, "%llu ms", (unsigned long long)dt);
  CHECK(w.status == LOOM_JOB_TIMEOUT);
  CHECK(query(fd).stat_resets == resets + 1);
  /* The device was reset and takes the next job. */
  command(&j, LOOM_TESTDEV_OP_COPY, 0, 64);
  EXPECT(job_submit(&j, 0), 0);
  EXPECT(wait_job(fd, 5000, &w), 0);
  CHECK(w.status == LOOM_JOB_DONE && w.error == 0);
  job_teardown(&j);
  close(fd);
}

static void test_watchdog(void) {
  int fd = open_dev(dev0);
  struct job j;
  struct loom_uapi_wait w;
  uint64_t timeouts = query(fd).stat_timeouts;
  job_setup(&j, fd, PAGE);
  command(&j, LOOM_TESTDEV_OP_HANG, 0, 0);
  EXPECT(job_submit(&j, 300), 0); /* the job's own timeout */
  uint64_t t0 = now_ms();
  EXPECT(wait_job(fd, 10000, &w), -ETIMEDOUT);
  uint64_t dt = now_ms() - t0;
  CHECKF(dt >= 250 && dt < 5000, "%llu ms", (unsigned long long)dt);
  CHECK(w.status == LOOM_JOB_TIMEOUT);
  CHECK(query(fd).stat_timeouts == timeouts + 1);
  job_teardown(&j);
  close(fd);
}

static void test_reset(void) {
  int fd = open_dev(dev0);
  struct job j;
  struct loom_uapi_wait w;
  job_setup(&j, fd, PAGE);
  command(&j, LOOM_TESTDEV_OP_HANG, 0, 0);
  EXPECT(job_submit(&j, 0), 0);
  EXPECT(job_submit(&j, 0), -EBUSY);           /* one job per file */
  EXPECT(free_handle(fd, j.src), -EBUSY);      /* in use by the job */
  EXPECT(reset(fd), 0);
  EXPECT(wait_job(fd, 100, &w), -ENOENT);      /* RESET dropped the job */
  command(&j, LOOM_TESTDEV_OP_COPY, 0, 128);
  EXPECT(job_submit(&j, 0), 0);
  EXPECT(wait_job(fd, 5000, &w), 0);
  CHECK(w.error == 0);
  EXPECT(reset(fd), 0); /* no job, device idle: a plain SOFT_RESET */
  job_teardown(&j);
  close(fd);
}

static void on_alarm(int sig) { (void)sig; }

static void test_signal(void) {
  int fd = open_dev(dev0);
  struct job j;
  struct loom_uapi_wait w;
  struct sigaction sa, old;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_alarm; /* no SA_RESTART: the wait returns EINTR */
  sigaction(SIGALRM, &sa, &old);
  job_setup(&j, fd, PAGE);
  command(&j, LOOM_TESTDEV_OP_HANG, 0, 0);
  EXPECT(job_submit(&j, 0), 0);
  struct itimerval it = {.it_value = {.tv_sec = 0, .tv_usec = 200000}};
  setitimer(ITIMER_REAL, &it, NULL);
  uint64_t t0 = now_ms();
  EXPECT(wait_job(fd, 5000, &w), -EINTR);
  CHECKF(now_ms() - t0 < 4000, "%llu ms", (unsigned long long)(now_ms() - t0));
  /* The job is untouched by the signal: still there, still hanging. */
  EXPECT(wait_job(fd, 100, &w), -ETIMEDOUT);
  sigaction(SIGALRM, &old, NULL);
  job_teardown(&j);
  close(fd);
}

/* Two files share a device: the second job waits for the first. */
static void test_queue(void) {
  int fa = open_dev(dev0), fb = open_dev(dev0);
  struct job a, b;
  struct loom_uapi_wait w;
  job_setup(&a, fa, PAGE);
  job_setup(&b, fb, PAGE);
  fill(a.a, PAGE, 1);
  fill(b.a, PAGE, 2);
  command(&a, LOOM_TESTDEV_OP_COPY, 400, 100);
  command(&b, LOOM_TESTDEV_OP_COPY, 0, 200);
  uint64_t t0 = now_ms();
  EXPECT(job_submit(&a, 0), 0);
  EXPECT(job_submit(&b, 0), 0);
  EXPECT(wait_job(fb, 5000, &w), 0);
  uint64_t dt = now_ms() - t0;
  CHECKF(dt >= 300, "b finished after %llu ms, before a's 400 ms", (unsigned long long)dt);
  CHECK(w.status == LOOM_JOB_DONE && memcmp(b.a, b.b, 200) == 0 && b.b[200] == 0);
  EXPECT(wait_job(fa, 5000, &w), 0);
  CHECK(w.status == LOOM_JOB_DONE && memcmp(a.a, a.b, 100) == 0 && a.b[100] == 0);

  /* A job still queued when its WAIT times out is dequeued, no reset. */
  command(&a, LOOM_TESTDEV_OP_HANG, 0, 0);
  EXPECT(job_submit(&a, 0), 0);
  uint64_t resets = query(fa).stat_resets;
  EXPECT(job_submit(&b, 0), 0);
  EXPECT(wait_job(fb, 200, &w), -ETIMEDOUT);
  CHECK(w.status == LOOM_JOB_TIMEOUT);
  CHECK(query(fa).stat_resets == resets);
  EXPECT(reset(fa), 0);
  job_teardown(&a);
  job_teardown(&b);
  close(fa);
  close(fb);
}

/* Jobs of two devices do not wait for each other. */
static void test_two_devices(void) {
  int f0 = open_dev(dev0), f1 = open_dev(dev1);
  struct job a, b;
  struct loom_uapi_wait w;
  job_setup(&a, f1, PAGE);
  job_setup(&b, f0, PAGE);
  command(&a, LOOM_TESTDEV_OP_HANG, 0, 0);
  command(&b, LOOM_TESTDEV_OP_COPY, 0, 16);
  EXPECT(job_submit(&a, 0), 0);
  uint64_t t0 = now_ms();
  EXPECT(job_submit(&b, 0), 0);
  EXPECT(wait_job(f0, 5000, &w), 0);
  CHECKF(now_ms() - t0 < 3000, "%llu ms", (unsigned long long)(now_ms() - t0));
  EXPECT(reset(f1), 0);
  job_teardown(&a);
  job_teardown(&b);
  close(f0);
  close(f1);
}

/* Closing a file mid-job stops the job and frees its buffers; a mapping
 * keeps the file open until it goes. */
static void test_close_busy(void) {
  int fd = open_dev(dev0), fc = open_dev(dev0);
  struct job j, c;
  struct loom_uapi_wait w;
  job_setup(&j, fd, PAGE);
  uint64_t resets = query(fd).stat_resets;

  job_setup(&c, fc, PAGE);
  command(&c, LOOM_TESTDEV_OP_HANG, 0, 0);
  EXPECT(job_submit(&c, 0), 0);
  job_unmap(&c);
  close(fc); /* last reference: release stops the job */
  CHECK(query(fd).stat_resets == resets + 1);
  command(&j, LOOM_TESTDEV_OP_COPY, 0, 32);
  uint64_t t0 = now_ms();
  EXPECT(job_submit(&j, 0), 0);
  EXPECT(wait_job(fd, 5000, &w), 0);
  CHECK(now_ms() - t0 < 3000);

  fc = open_dev(dev0);
  job_setup(&c, fc, PAGE);
  command(&c, LOOM_TESTDEV_OP_HANG, 0, 0);
  EXPECT(job_submit(&c, 0), 0);
  close(fc); /* the mappings still hold the file: the job goes on */
  CHECK(query(fd).stat_resets == resets + 1);
  c.cmd[3] = 77; /* and the memory is still ours */
  job_unmap(&c); /* now the file is released */
  CHECK(query(fd).stat_resets == resets + 2);
  t0 = now_ms();
  EXPECT(job_submit(&j, 0), 0);
  EXPECT(wait_job(fd, 5000, &w), 0);
  CHECK(now_ms() - t0 < 3000);
  job_teardown(&j);
  close(fd);
}

/* Handles belong to the file that allocated them. */
static void test_foreign_handles(void) {
  int fa = open_dev(dev0), fb = open_dev(dev0);
  struct job a, b;
  job_setup(&a, fa, PAGE);
  job_setup(&b, fb, PAGE);
  command(&b, LOOM_TESTDEV_OP_COPY, 0, 16);
  EXPECT(submit(fb, a.insn, 1, b.seg, 2, 0), -ENOENT);
  struct loom_uapi_segment seg[2] = {{.handle = b.src}, {.handle = a.dst}};
  EXPECT(submit(fb, b.insn, 1, seg, 2, 0), -ENOENT);
  EXPECT(free_handle(fb, a.src), -ENOENT);
  CHECK(map(fb, a.src_off, PAGE) == NULL && errno == EINVAL);
  EXPECT(submit(fb, 0xFFFF, 1, b.seg, 2, 0), -ENOENT);
  EXPECT(free_handle(fb, 0), -ENOENT);
  job_teardown(&a);
  job_teardown(&b);
  close(fa);
  close(fb);
}

static void test_bad_sizes(void) {
  int fd = open_dev(dev0);
  struct loom_uapi_query q = query(fd);
  EXPECT(alloc(fd, 0, NULL, NULL), -EINVAL);
  EXPECT(alloc(fd, 1000, NULL, NULL), -EINVAL);
  EXPECT(alloc(fd, PAGE + 1, NULL, NULL), -EINVAL);
  EXPECT(alloc(fd, q.max_buffer_size + PAGE, NULL, NULL), -EINVAL);
  EXPECT(alloc(fd, UINT64_MAX - PAGE + 1, NULL, NULL), -EINVAL);
  uint32_t h;
  uint64_t off;
  EXPECT(alloc(fd, PAGE, &h, &off), 0);
  CHECK(map(fd, off, 2 * PAGE) == NULL);  /* longer than the buffer */
  CHECK(mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE, fd, (off_t)off) == MAP_FAILED);
  CHECK(map(fd, 0, PAGE) == NULL);        /* offset 0 is no buffer */
  EXPECT(free_handle(fd, h), 0);
  close(fd);
}

static void test_bad_counts(void) {
  int fd = open_dev(dev0);
  struct job j;
  struct loom_uapi_segment segs[9] = {{0}};
  job_setup(&j, fd, PAGE);
  command(&j, LOOM_TESTDEV_OP_COPY, 0, 16);
  segs[0].handle = j.src;
  EXPECT(submit(fd, j.insn, 1, segs, 9, 0), -EINVAL);          /* > 8 segments */
  EXPECT(submit(fd, j.insn, 1, segs, 0xFFFFFFFF, 0), -EINVAL);
  EXPECT(submit(fd, j.insn, 0, j.seg, 2, 0), -EINVAL);         /* no instructions */
  EXPECT(submit(fd, j.insn, PAGE / 16 + 1, j.seg, 2, 0), -EINVAL); /* overruns its buffer */
  EXPECT(submit(fd, j.insn, 0xFFFFFFFF, j.seg, 2, 0), -EINVAL);
  EXPECT(submit(fd, j.insn, 1, j.seg, 2, LOOM_UAPI_MAX_TIMEOUT_MS + 1), -EINVAL);
  struct loom_uapi_segment big[2] = {{.handle = j.src, .size = PAGE + 1}, {.handle = j.dst}};
  EXPECT(submit(fd, j.insn, 1, big, 2, 0), -EINVAL);           /* segment > buffer */
  struct loom_uapi_segment ghost[2] = {{.handle = 0, .size = 64}, {.handle = j.dst}};
  EXPECT(submit(fd, j.insn, 1, ghost, 2, 0), -EINVAL);         /* unmapped with a size */
  EXPECT(submit(fd, j.insn, 1, (const struct loom_uapi_segment *)8, 2, 0), -EFAULT);
  struct loom_uapi_wait w;
  EXPECT(wait_job(fd, LOOM_UAPI_MAX_TIMEOUT_MS + 1, &w), -EINVAL);
  EXPECT(wait_job(fd, 100, &w), -ENOENT);                     /* nothing was queued */
  /* The whole table may be given, unused entries unmapped. */
  memcpy(segs, j.seg, sizeof j.seg);
  EXPECT(submit(fd, j.insn, PAGE / 16, segs, 8, 0), 0);
  EXPECT(wait_job(fd, 5000, &w), 0);
  job_teardown(&j);
  close(fd);
}

static void test_reserved_fields(void) {
  int fd = open_dev(dev0);
  struct job j;
  job_setup(&j, fd, PAGE);
  command(&j, LOOM_TESTDEV_OP_COPY, 0, 16);

  struct loom_uapi_alloc a = {.size = PAGE, .flags = 1};
  EXPECT(xioctl(fd, LOOM_IOCTL_ALLOC, &a), -EINVAL);
  a = (struct loom_uapi_alloc){.size = PAGE, .reserved = {0, 1}};
  EXPECT(xioctl(fd, LOOM_IOCTL_ALLOC, &a), -EINVAL);

  struct loom_uapi_free f = {.handle = j.src, .flags = 1};
  EXPECT(xioctl(fd, LOOM_IOCTL_FREE, &f), -EINVAL);
  f = (struct loom_uapi_free){.handle = j.src, .reserved = 1};
  EXPECT(xioctl(fd, LOOM_IOCTL_FREE, &f), -EINVAL);

  struct loom_uapi_submit base = {.insn_handle = j.insn, .insn_count = 1, .num_segments = 2,
                                  .segments_ptr = (uintptr_t)j.seg};
  struct loom_uapi_submit s = base;
  s.flags = 1;
  EXPECT(xioctl(fd, LOOM_IOCTL_SUBMIT, &s), -EINVAL);
  s = base, s.reserved0 = 1;
  EXPECT(xioctl(fd, LOOM_IOCTL_SUBMIT, &s), -EINVAL);
  s = base, s.reserved[1] = 1;
  EXPECT(xioctl(fd, LOOM_IOCTL_SUBMIT, &s), -EINVAL);
  struct loom_uapi_segment seg[2] = {{.handle = j.src, .reserved = 1}, {.handle = j.dst}};
  s = base, s.segments_ptr = (uintptr_t)seg;
  EXPECT(xioctl(fd, LOOM_IOCTL_SUBMIT, &s), -EINVAL);

  EXPECT(xioctl(fd, LOOM_IOCTL_SUBMIT, &base), 0);
  struct loom_uapi_wait w = {.timeout_ms = 5000, .flags = 1};
  EXPECT(xioctl(fd, LOOM_IOCTL_WAIT, &w), -EINVAL);
  w = (struct loom_uapi_wait){.timeout_ms = 5000, .reserved = {1, 0}};
  EXPECT(xioctl(fd, LOOM_IOCTL_WAIT, &w), -EINVAL);
  EXPECT(wait_job(fd, 5000, &w), 0); /* the refusals left the job alone */
  CHECK(w.status == LOOM_JOB_DONE);

  struct loom_uapi_reset r = {.flags = 1};
  EXPECT(xioctl(fd, LOOM_IOCTL_RESET, &r), -EINVAL);
  r = (struct loom_uapi_reset){.reserved = 1};
  EXPECT(xioctl(fd, LOOM_IOCTL_RESET, &r), -EINVAL);

  EXPECT(xioctl(fd, _IO(LOOM_IOCTL_MAGIC, 0x4F), NULL), -ENOTTY);
  EXPECT(xioctl(fd, LOOM_IOCTL_QUERY, NULL), -EFAULT);
  EXPECT(xioctl(fd, LOOM_IOCTL_SUBMIT, (void *)8), -EFAULT);
  job_teardown(&j);
  close(fd);
}

int main(int argc, char **argv) {
  int quick = argc > 1 && !strcmp(argv[1], "--quick");
  dev0 = argc > 1 + quick ? argv[1 + quick] : "/dev/loom0";
  dev1 = argc > 2 + quick ? argv[2 + quick] : "/dev/loom1";
  setvbuf(stdout, NULL, _IOLBF, 0);
  tap_run("query", test_query);
  tap_run("copy job", test_copy_job);
  tap_run("job errors", test_job_errors);
  tap_run("wait timeout", test_wait_timeout);
  tap_run("watchdog", test_watchdog);
  tap_run("reset", test_reset);
  if (!quick) {
    tap_run("alloc and mmap", test_alloc_mmap);
    tap_run("signal", test_signal);
    tap_run("queue", test_queue);
    tap_run("two devices", test_two_devices);
    tap_run("close while busy", test_close_busy);
    tap_run("foreign handles", test_foreign_handles);
    tap_run("bad sizes", test_bad_sizes);
    tap_run("bad counts", test_bad_counts);
    tap_run("reserved fields", test_reserved_fields);
  }
  return tap_done("loom_abi_test");
}
