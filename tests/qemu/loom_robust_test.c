/*
 * loom_robust_test.c - loom.ko under a wedged accelerator and against a
 * greedy user, on the software test device.
 *
 * tests/qemu/run-qemu-test.sh runs it in the QEMU guest twice:
 *
 *     loom_robust_test --wedge /dev/loom0    loom.ko testdev=1
 *     loom_robust_test --quota /dev/loom0    loom.ko testdev=1 with small
 *                                            per-user and per-file quotas
 *                                            (the values are below)
 *
 * --wedge: a job whose DMA engine never stops and that ignores SOFT_RESET
 * (LOOM_TESTDEV_OP_WEDGE).  The driver's reset fails, so it must keep the
 * job's memory allocated while the engine may write it (the file closing
 * and every handle and mapping gone notwithstanding), refuse new jobs with
 * EIO, report LOOM_QUERY_F_WEDGED, retry the reset on RESET and come back
 * into service once a reset works.  The test device writes only memory the
 * driver still has; a write to freed memory is logged as "stray DMA",
 * which fails the QEMU test (init.sh), and a write into memory handed out
 * again shows as a non-zero byte in another file's fresh buffers here.
 *
 * --quota: one user (uid 1000) takes every handle its quota allows over
 * several files while another (uid 1001) still allocates; the charge goes
 * to the user who opened the file, covers memory that is only mapped or
 * pinned any more, and is returned when the memory goes.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "loom/loom_uapi.h"
#include "tap.h"
#include "uapi_calls.h"

/* The module parameters run-qemu-test.sh loads the --quota run with. */
#define QUOTA_USER_BUFFERS 40 /* max_user_buffers */
#define QUOTA_FILE_BUFFERS 16 /* max_file_buffers */
#define QUOTA_USER_MB 1       /* max_user_mb */

static const char *dev;

static int zeroes(const uint8_t *p, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (p[i]) return 0;
  return 1;
}

/* ---- a wedged device ---- */

/* Another file's fresh buffers must stay zero while the wedged engine
 * runs: none of them may be memory the engine still writes. */
static void check_fresh_buffers_untouched(int fd) {
  enum { N = 16 };
  uint32_t h[N];
  uint64_t off[N];
  uint8_t *p[N];
  for (int i = 0; i < N; i++) {
    EXPECT(alloc(fd, PAGE, &h[i], &off[i]), 0);
    p[i] = map(fd, off[i], PAGE);
    CHECK(p[i] != NULL);
  }
  usleep(100 * 1000); /* 20 more writes of the engine */
  for (int i = 0; i < N; i++) {
    if (p[i]) CHECKF(zeroes(p[i], PAGE), "buffer %d was written", i);
    if (p[i]) munmap(p[i], PAGE);
    EXPECT(free_handle(fd, h[i]), 0);
  }
}

/* The job ignores `ignored` resets; WAIT's timeout stops it, the reset
 * fails and the device is wedged. */
static void wedge(struct job *j, uint32_t ignored) {
  struct loom_uapi_wait w;
  command(j, LOOM_TESTDEV_OP_WEDGE, 5, ignored);
  EXPECT(job_submit(j, 0), 0);
  usleep(50 * 1000);
  CHECKF(j->b[0] != 0, "the engine wrote nothing (%u)", j->b[0]);
  EXPECT(wait_job(j->fd, 100, &w), -ETIMEDOUT);
  CHECK(w.status == LOOM_JOB_TIMEOUT);
  CHECK(query(j->fd).flags & LOOM_QUERY_F_WEDGED);
}

static void test_wedged_refuses_jobs(void) {
  int fd = open_dev(dev), fo = open_dev(dev);
  struct job j, o;
  struct loom_uapi_wait w;
  uint64_t resets = query(fo).stat_resets;
  job_setup(&j, fd, PAGE);
  job_setup(&o, fo, PAGE);
  wedge(&j, 2);
  command(&o, LOOM_TESTDEV_OP_COPY, 0, 16);
  EXPECT(job_submit(&o, 0), -EIO);     /* any file: refused */
  EXPECT(job_submit(&j, 0), -EIO);
  EXPECT(reset(fo), -EIO);             /* the second ignored reset */
  CHECK(query(fo).flags & LOOM_QUERY_F_WEDGED);
  EXPECT(reset(fo), 0);                /* obeyed */
  CHECK(!(query(fo).flags & LOOM_QUERY_F_WEDGED));
  CHECK(query(fo).stat_resets == resets + 3);
  uint8_t last = j.b[0];
  usleep(50 * 1000);
  CHECK(j.b[0] == last);               /* the engine has stopped */
  fill(o.a, PAGE, 5);
  EXPECT(job_submit(&o, 0), 0);        /* back in service */
  EXPECT(wait_job(fo, 5000, &w), 0);
  CHECK(w.status == LOOM_JOB_DONE && memcmp(o.a, o.b, 16) == 0);
  job_teardown(&j);
  job_teardown(&o);
  close(fd);
  close(fo);
}

/* The stopped job's file lets go of everything while the engine still
 * writes: its memory must stay allocated until a reset works. */
static void test_wedged_keeps_memory(void) {
  int fd = open_dev(dev), fo = open_dev(dev);
  struct job j;
  struct loom_uapi_wait w;
  job_setup(&j, fd, PAGE);
  wedge(&j, 1);
  job_teardown(&j); /* FREE works: the job has ended */
  close(fd);        /* and the file is gone */
  check_fresh_buffers_untouched(fo);
  EXPECT(reset(fo), 0);
  CHECK(!(query(fo).flags & LOOM_QUERY_F_WEDGED));
  struct job o;
  job_setup(&o, fo, PAGE);
  command(&o, LOOM_TESTDEV_OP_COPY, 0, 64);
  EXPECT(job_submit(&o, 0), 0);
  EXPECT(wait_job(fo, 5000, &w), 0);
  job_teardown(&o);
  close(fo);
}

/* ---- per-user quotas ---- */

/* Opens the device as `uid` (the file's owner for the quotas), as root
 * with the saved uid kept so that the test can switch back. */
static int open_as(uid_t uid) {
  if (setresuid(uid, uid, 0) != 0) {
    printf("# setresuid(%u): %s\n", (unsigned)uid, strerror(errno));
    return -1;
  }
  int fd = open(dev, O_RDWR | O_CLOEXEC);
  int err = errno;
  if (setresuid(0, 0, 0) != 0) exit(2);
  if (fd < 0) printf("# open %s as uid %u: %s\n", dev, (unsigned)uid, strerror(err));
  return fd;
}

/* Allocates pages in `fd` until refused; the count, the refusal in *err. */
static int alloc_until_refused(int fd, uint32_t *handles, int max, int *err) {
  int n = 0;
  *err = 0;
  while (n < max && (*err = alloc(fd, PAGE, &handles[n], NULL)) == 0) n++;
  return n;
}

static void test_user_handle_quota(void) {
  enum { FILES = 4 };
  uint32_t h[FILES][QUOTA_FILE_BUFFERS + 1], hb[QUOTA_FILE_BUFFERS];
  int fa[FILES], got[FILES], err[FILES], total = 0;
  for (int f = 0; f < FILES; f++) fa[f] = open_as(1000);
  int fb = open_as(1001);
  CHECK(fa[FILES - 1] >= 0 && fb >= 0);
  if (fa[FILES - 1] < 0 || fb < 0) return;
  for (int f = 0; f < FILES; f++) {
    got[f] = alloc_until_refused(fa[f], h[f], QUOTA_FILE_BUFFERS + 1, &err[f]);
    total += got[f];
  }
  /* 16 + 16 per file, then the user's 40 are used up. */
  CHECKF(got[0] == QUOTA_FILE_BUFFERS && err[0] == -EMFILE, "%d, %d", got[0], err[0]);
  CHECKF(total == QUOTA_USER_BUFFERS, "user 1000 got %d handles", total);
  CHECKF(err[FILES - 1] == -EDQUOT, "%d", err[FILES - 1]);
  /* Another user still allocates, up to its own file's limit. */
  int errb, nb = alloc_until_refused(fb, hb, QUOTA_FILE_BUFFERS, &errb);
  CHECKF(nb == QUOTA_FILE_BUFFERS && errb == 0, "user 1001 got %d (%d)", nb, errb);
  /* A freed handle can be taken again by its user, once. */
  EXPECT(free_handle(fa[1], h[1][0]), 0);
  EXPECT(alloc(fa[3], PAGE, &h[3][got[3]], NULL), 0);
  EXPECT(alloc(fa[3], PAGE, NULL, NULL), -EDQUOT);
  /* Closing the files returns everything. */
  for (int f = 0; f < FILES; f++) close(fa[f]);
  int fc = open_as(1000);
  int n = alloc_until_refused(fc, h[0], QUOTA_FILE_BUFFERS, &err[0]);
  CHECKF(n == QUOTA_FILE_BUFFERS, "after close: %d (%d)", n, err[0]);
  close(fc);
  close(fb);
}

static void test_user_byte_quota(void) {
  const uint64_t half = (QUOTA_USER_MB << 20) / 2;
  int fa = open_as(1000), fa2 = open_as(1000), fb = open_as(1001);
  uint32_t h1, h2;
  uint64_t off1;
  CHECK(fa >= 0 && fa2 >= 0 && fb >= 0);
  if (fa < 0 || fa2 < 0 || fb < 0) return;
  EXPECT(alloc(fa, half, &h1, &off1), 0);
  EXPECT(alloc(fa2, half, &h2, NULL), 0);          /* the user's MiB, in two files */
  EXPECT(alloc(fa2, PAGE, NULL, NULL), -EDQUOT);
  EXPECT(alloc(fb, half, NULL, NULL), 0);          /* another user's own MiB */
  /* Memory still mapped after FREE still counts. */
  uint8_t *p = map(fa, off1, half);
  CHECK(p != NULL);
  EXPECT(free_handle(fa, h1), 0);
  EXPECT(alloc(fa, PAGE, NULL, NULL), -EDQUOT);
  if (p) munmap(p, half);
  EXPECT(alloc(fa, half, NULL, NULL), 0);          /* now it is back */
  close(fa);
  close(fa2);
  close(fb);
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "";
  dev = argc > 2 ? argv[2] : "/dev/loom0";
  setvbuf(stdout, NULL, _IOLBF, 0);
  if (!strcmp(mode, "--wedge")) {
    tap_run("wedged device refuses jobs until a reset works", test_wedged_refuses_jobs);
    tap_run("wedged device keeps the stopped job's memory", test_wedged_keeps_memory);
  } else if (!strcmp(mode, "--quota")) {
    /* /dev/loomN is 0600 root: let the test's users open it. */
    if (chmod(dev, 0666) != 0) printf("# chmod %s: %s\n", dev, strerror(errno));
    tap_run("one user's handles over many files", test_user_handle_quota);
    tap_run("one user's memory, mapped memory included", test_user_byte_quota);
  } else {
    fprintf(stderr, "usage: loom_robust_test --wedge|--quota [DEVICE]\n");
    return 2;
  }
  return tap_done("loom_robust_test");
}
