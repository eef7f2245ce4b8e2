/*
 * uapi_calls.h - the ioctls of include/loom/loom_uapi.h as small functions
 * returning 0 or -errno, and a test job (an instruction buffer holding a
 * test-device command, two segments), shared by the QEMU test programs
 * (loom_abi_test.c, loom_robust_test.c).  Like tap.h, static functions in
 * a header: each program is one file linked statically.
 */
#ifndef LOOM_QEMU_UAPI_CALLS_H
#define LOOM_QEMU_UAPI_CALLS_H

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "loom/loom_uapi.h"
#include "tap.h"

#define PAGE 4096u

static inline uint64_t now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
}

/* ---- thin wrappers: 0 or -errno ---- */

static inline int xioctl(int fd, unsigned long req, void *arg) {
  return ioctl(fd, req, arg) == 0 ? 0 : -errno;
}

static inline int open_dev(const char *path) {
  int fd = open(path, O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    printf("# cannot open %s: %s\n", path, strerror(errno));
    exit(2);
  }
  return fd;
}

static inline struct loom_uapi_query query(int fd) {
  struct loom_uapi_query q;
  memset(&q, 0xA5, sizeof q);
  if (xioctl(fd, LOOM_IOCTL_QUERY, &q) != 0) memset(&q, 0, sizeof q);
  return q;
}

static inline int alloc(int fd, uint64_t size, uint32_t *handle, uint64_t *off) {
  struct loom_uapi_alloc a = {.size = size};
  int r = xioctl(fd, LOOM_IOCTL_ALLOC, &a);
  if (handle) *handle = a.handle;
  if (off) *off = a.mmap_offset;
  return r;
}

static inline int free_handle(int fd, uint32_t handle) {
  struct loom_uapi_free f = {.handle = handle};
  return xioctl(fd, LOOM_IOCTL_FREE, &f);
}

static inline void *map(int fd, uint64_t off, size_t size) {
  void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)off);
  return p == MAP_FAILED ? NULL : p;
}

static inline int submit(int fd, uint32_t insns, uint32_t count, const struct loom_uapi_segment *segs,
                  uint32_t nsegs, uint32_t timeout_ms) {
  struct loom_uapi_submit s = {.insn_handle = insns,
                               .insn_count = count,
                               .num_segments = nsegs,
                               .timeout_ms = timeout_ms,
                               .segments_ptr = (uintptr_t)segs};
  return xioctl(fd, LOOM_IOCTL_SUBMIT, &s);
}

static inline int wait_job(int fd, uint32_t timeout_ms, struct loom_uapi_wait *w) {
  memset(w, 0, sizeof *w);
  w->timeout_ms = timeout_ms;
  return xioctl(fd, LOOM_IOCTL_WAIT, w);
}

static inline int reset(int fd) {
  struct loom_uapi_reset r = {0};
  return xioctl(fd, LOOM_IOCTL_RESET, &r);
}

/* ---- a job: an instruction buffer with a test command, two segments ---- */

struct job {
  int fd;
  uint32_t insn, src, dst;   /* handles */
  uint64_t insn_off, src_off, dst_off;
  uint32_t *cmd;             /* the mapped instruction buffer */
  uint8_t *a, *b;            /* the mapped segments */
  size_t size;               /* of each segment */
  struct loom_uapi_segment seg[2];
};

static inline void job_setup(struct job *j, int fd, size_t size) {
  memset(j, 0, sizeof *j);
  j->fd = fd;
  j->size = size;
  EXPECT(alloc(fd, PAGE, &j->insn, &j->insn_off), 0);
  EXPECT(alloc(fd, size, &j->src, &j->src_off), 0);
  EXPECT(alloc(fd, size, &j->dst, &j->dst_off), 0);
  j->cmd = map(fd, j->insn_off, PAGE);
  j->a = map(fd, j->src_off, size);
  j->b = map(fd, j->dst_off, size);
  CHECK(j->cmd && j->a && j->b);
  if (!j->cmd || !j->a || !j->b) exit(1);
  j->seg[0] = (struct loom_uapi_segment){.handle = j->src};
  j->seg[1] = (struct loom_uapi_segment){.handle = j->dst};
}

static inline void job_unmap(struct job *j) {
  if (j->cmd) munmap(j->cmd, PAGE);
  if (j->a) munmap(j->a, j->size);
  if (j->b) munmap(j->b, j->size);
  j->cmd = NULL, j->a = j->b = NULL;
}

static inline void job_teardown(struct job *j) {
  job_unmap(j);
  EXPECT(free_handle(j->fd, j->insn), 0);
  EXPECT(free_handle(j->fd, j->src), 0);
  EXPECT(free_handle(j->fd, j->dst), 0);
}

static inline void command(struct job *j, uint32_t op, uint32_t delay_ms, uint32_t arg) {
  j->cmd[0] = LOOM_TESTDEV_MAGIC;  /* the test machines are little-endian */
  j->cmd[1] = op;
  j->cmd[2] = delay_ms;
  j->cmd[3] = arg;
}

static inline int job_submit(struct job *j, uint32_t timeout_ms) {
  return submit(j->fd, j->insn, 1, j->seg, 2, timeout_ms);
}

static inline void fill(uint8_t *p, size_t n, unsigned seed) {
  for (size_t i = 0; i < n; i++) p[i] = (uint8_t)(i * 31u + seed);
}

#endif
