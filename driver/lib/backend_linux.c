/*
 * backend_linux.c - the "linux" backend: jobs run on an accelerator driven
 * by the kernel driver loom.ko, through /dev/loomN (docs/linux-driver.md;
 * the ioctls are include/loom/loom_uapi.h).
 *
 * The kernel does the register programming (driver/linux/loom_hw.c, the
 * steps of driver/lib/hwseq.h that hwregs.c runs too) and owns everything physical: a buffer here is
 * a handle plus its mmap, a job names its instruction buffer and segment
 * table by handles, and the driver writes the bus addresses itself.  So
 * this file is a translation of the backend interface into ioctls and of
 * errno values into loom_status with a message:
 *
 *   - open: the device node, QUERY, the ABI version, and the configuration
 *     the hardware reports (CONFIG_HASH) against config=NAME|FILE when given
 *     (a board built from a configuration file needs that file);
 *   - alloc: ALLOC of the size rounded up to LOOM_UAPI_SIZE_ALIGN, then
 *     mmap; free: munmap and FREE;
 *   - submit: each segment is exactly the size the user allocated, so the
 *     hardware stops at the same byte fsim does;
 *   - wait: WAIT, retried with the remaining time when a signal interrupts
 *     it.  On a timeout the driver has already stopped the job
 *     (SOFT_RESET); job.c then calls reset(), which is harmless.  When that
 *     SOFT_RESET failed, the driver has marked the device wedged and
 *     SUBMIT answers EIO: submit then tries one RESET and, if it works,
 *     the job again.
 *
 * The job's own watchdog (SUBMIT.timeout_ms) is set to the ABI's maximum:
 * the caller's wait timeout is the one that counts, the watchdog only
 * protects other users of the device from a job nobody waits for.
 *
 * Buffers are DMA-coherent: no sync.  Options: dev=PATH (default
 * /dev/loom0), config=NAME|FILE.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "loom/loom_uapi.h"
#include "runtime.h"

#define LINUX_DEFAULT_DEV "/dev/loom0"
#define LINUX_PATH_MAX 256

struct linux_state {
  int fd;
  char path[LINUX_PATH_MAX];
  struct loom_hw_config cfg;
};

static const char *const linux_option_keys[] = {"dev", "config", NULL};

_Static_assert(LOOM_UAPI_MAX_SEGMENTS == LOOM_NUM_SEGMENTS, "one segment table");
_Static_assert(LOOM_UAPI_MAX_COUNTERS >= LOOM_CNT_COUNT, "WAIT holds every counter");

static size_t round_size(size_t bytes) {
  return (bytes + LOOM_UAPI_SIZE_ALIGN - 1) & ~(size_t)(LOOM_UAPI_SIZE_ALIGN - 1);
}

/* ---- open / close ---- */

static loom_status open_failed(const char *path, int err, char msg[LOOM_MSG_MAX]) {
  if (err == ENOENT || err == ENXIO || err == ENODEV)
    return loom_fail(msg, LOOM_E_NOTFOUND,
                     "linux: no device %s (%s): load the driver (modprobe loom) on a board whose "
                     "device tree has a \"loom,accel-1.0\" node; see docs/linux-driver.md",
                     path, strerror(err));
  if (err == EACCES || err == EPERM)
    return loom_fail(msg, LOOM_E_IO,
                     "linux: cannot open %s: %s (docs/linux-driver.md has a udev rule)", path,
                     strerror(err));
  return loom_fail(msg, LOOM_E_IO, "linux: cannot open %s: %s", path, strerror(err));
}

static loom_status query(struct linux_state *s, struct loom_uapi_query *q,
                         char msg[LOOM_MSG_MAX]) {
  memset(q, 0, sizeof *q);
  if (ioctl(s->fd, LOOM_IOCTL_QUERY, q) != 0) {
    if (errno == ENOTTY || errno == EINVAL)
      return loom_fail(msg, LOOM_E_UNSUPPORTED, "linux: %s is not a Loom device (QUERY: %s)",
                       s->path, strerror(errno));
    return loom_fail(msg, LOOM_E_IO, "linux: %s: QUERY: %s", s->path, strerror(errno));
  }
  if (q->uapi_version != LOOM_UAPI_VERSION)
    return loom_fail(msg, LOOM_E_UNSUPPORTED,
                     "linux: %s: the driver speaks ABI version %u, this libloom %u; use a "
                     "matching loom.ko",
                     s->path, q->uapi_version, LOOM_UAPI_VERSION);
  return LOOM_OK;
}

/* The device's configuration, checked against the one the caller asked for if any. */
static loom_status check_config(struct linux_state *s, const struct loom_uapi_query *q,
                                const char *options, char msg[LOOM_MSG_MAX]) {
  return loom_backend_hw_config("linux", s->path, q->config_hash, options, &s->cfg, msg);
}

static void linux_close(void *state) {
  struct linux_state *s = state;
  if (s->fd >= 0) close(s->fd);
  free(s);
}

static loom_status linux_open(const char *options, void **state,
                              const struct loom_hw_config **cfg, char msg[LOOM_MSG_MAX]) {
  loom_status st = loom_option_check(options, linux_option_keys, "linux", msg);
  if (st != LOOM_OK) return st;
  struct linux_state *s = calloc(1, sizeof *s);
  if (!s) return loom_fail(msg, LOOM_E_NOMEM, "linux: out of memory");
  if (!loom_option_get(options, "dev", s->path, sizeof s->path))
    snprintf(s->path, sizeof s->path, "%s", LINUX_DEFAULT_DEV);
  s->fd = open(s->path, O_RDWR | O_CLOEXEC);
  struct loom_uapi_query q;
  if (s->fd < 0) st = open_failed(s->path, errno, msg);
  else if ((st = query(s, &q, msg)) == LOOM_OK) st = check_config(s, &q, options, msg);
  if (st != LOOM_OK) {
    linux_close(s);
    return st;
  }
  *state = s;
  *cfg = &s->cfg;
  return LOOM_OK;
}

/* ---- buffers ---- */

/* Which of the driver's limits an ALLOC errno points at. */
static const char *alloc_hint(int err) {
  switch (err) {
  case EINVAL: return " (larger than the driver's max_buffer_mb?)";
  case EMFILE: return " (the driver's max_file_buffers, or the device's 65535 handles)";
  case EDQUOT:
    return " (your user's quota on this device: the driver's max_user_buffers and max_user_mb, "
           "in /sys/module/loom/parameters)";
  default: return "";
  }
}

static loom_status linux_alloc(void *state, size_t bytes, struct loom_backend_buffer *buf,
                               char msg[LOOM_MSG_MAX]) {
  struct linux_state *s = state;
  struct loom_uapi_alloc a = {.size = round_size(bytes)};
  if (ioctl(s->fd, LOOM_IOCTL_ALLOC, &a) != 0)
    return loom_fail(msg, errno == EIO ? LOOM_E_IO : LOOM_E_NOMEM,
                     "linux: %s: cannot allocate %zu bytes: %s%s", s->path, bytes,
                     strerror(errno), alloc_hint(errno));
  void *p = mmap(NULL, (size_t)a.size, PROT_READ | PROT_WRITE, MAP_SHARED, s->fd,
                 (off_t)a.mmap_offset);
  if (p == MAP_FAILED) {
    int err = errno;
    struct loom_uapi_free f = {.handle = a.handle};
    ioctl(s->fd, LOOM_IOCTL_FREE, &f);
    return loom_fail(msg, LOOM_E_NOMEM, "linux: %s: cannot map a %zu-byte buffer: %s", s->path,
                     bytes, strerror(err));
  }
  *buf = (struct loom_backend_buffer){
      .host = p, .dev_addr = 0, .size = (size_t)a.size, .priv = (void *)(uintptr_t)a.handle};
  return LOOM_OK;
}

static void linux_free(void *state, struct loom_backend_buffer *buf) {
  struct linux_state *s = state;
  struct loom_uapi_free f = {.handle = (uint32_t)(uintptr_t)buf->priv};
  munmap(buf->host, round_size(buf->size));
  ioctl(s->fd, LOOM_IOCTL_FREE, &f);
  buf->host = NULL;
}

/* ---- jobs ---- */

static uint32_t handle_of(const struct loom_backend_buffer *b) {
  return (uint32_t)(uintptr_t)b->priv;
}

static loom_status linux_submit(void *state, const struct loom_backend_buffer *insns,
                                uint32_t insn_count,
                                const struct loom_backend_buffer *const segments[8],
                                char msg[LOOM_MSG_MAX]) {
  struct linux_state *s = state;
  struct loom_uapi_segment seg[LOOM_UAPI_MAX_SEGMENTS];
  memset(seg, 0, sizeof seg);
  for (int i = 0; i < LOOM_UAPI_MAX_SEGMENTS; i++)
    if (segments[i] && segments[i]->size)
      seg[i] = (struct loom_uapi_segment){.handle = handle_of(segments[i]),
                                          .size = segments[i]->size};
  struct loom_uapi_submit req = {.insn_handle = handle_of(insns),
                                 .insn_count = insn_count,
                                 .num_segments = LOOM_UAPI_MAX_SEGMENTS,
                                 .timeout_ms = LOOM_UAPI_MAX_TIMEOUT_MS,
                                 .segments_ptr = (uintptr_t)seg};
  if (ioctl(s->fd, LOOM_IOCTL_SUBMIT, &req) == 0) return LOOM_OK;
  /* Wedged (a SOFT_RESET failed): one more reset, and the job if it works. */
  struct loom_uapi_reset r = {0};
  if (errno == EIO && ioctl(s->fd, LOOM_IOCTL_RESET, &r) == 0 &&
      ioctl(s->fd, LOOM_IOCTL_SUBMIT, &req) == 0)
    return LOOM_OK;
  if (errno == EIO)
    return loom_fail(msg, LOOM_E_IO,
                     "linux: %s: the accelerator is wedged: SOFT_RESET does not bring it back to "
                     "idle, so it takes no job (docs/linux-driver.md, \"A wedged device\")",
                     s->path);
  return loom_fail(msg, errno == ENODEV ? LOOM_E_IO : LOOM_E_INVALID, "linux: %s: SUBMIT: %s",
                   s->path, strerror(errno));
}

static uint64_t elapsed_ms(const struct timespec *t0) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  int64_t ms = (int64_t)(t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000;
  return ms > 0 ? (uint64_t)ms : 0;
}

/* WAIT, resumed after signals with what is left of the timeout. */
static int wait_ioctl(struct linux_state *s, uint32_t timeout_ms, struct loom_uapi_wait *w) {
  struct timespec t0;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (;;) {
    uint64_t spent = timeout_ms ? elapsed_ms(&t0) : 0;
    memset(w, 0, sizeof *w);
    w->timeout_ms = timeout_ms ? (spent < timeout_ms ? timeout_ms - (uint32_t)spent : 1) : 0;
    if (ioctl(s->fd, LOOM_IOCTL_WAIT, w) == 0) return 0;
    if (errno != EINTR) return errno;
  }
}

static loom_status linux_wait(void *state, uint32_t timeout_ms, struct loom_job_result *res,
                              char msg[LOOM_MSG_MAX]) {
  struct linux_state *s = state;
  struct loom_uapi_wait w;
  if (timeout_ms > LOOM_UAPI_MAX_TIMEOUT_MS) timeout_ms = LOOM_UAPI_MAX_TIMEOUT_MS;
  int err = wait_ioctl(s, timeout_ms, &w);
  switch (err) {
  case 0: break;
  case ETIMEDOUT:
    return loom_fail(msg, LOOM_E_TIMEOUT, "linux: %s: the driver stopped the job (SOFT_RESET)",
                     s->path);
  case ECANCELED:
    return loom_fail(msg, LOOM_E_IO,
                     "linux: %s: the job was aborted (device reset by another program, or "
                     "unbound)",
                     s->path);
  default: return loom_fail(msg, LOOM_E_IO, "linux: %s: WAIT: %s", s->path, strerror(err));
  }
  res->error = w.error;
  res->error_insn = w.error_insn;
  for (uint32_t c = 0; c < LOOM_CNT_COUNT && c < w.num_counters; c++)
    res->counters[c] = w.counters[c];
  res->message[0] = '\0';
  return LOOM_OK;
}

static loom_status linux_reset(void *state, char msg[LOOM_MSG_MAX]) {
  struct linux_state *s = state;
  struct loom_uapi_reset r = {0};
  if (ioctl(s->fd, LOOM_IOCTL_RESET, &r) != 0)
    return loom_fail(msg, LOOM_E_IO, "linux: %s: RESET: %s%s", s->path, strerror(errno),
                     errno == EIO ? " (SOFT_RESET failed: the accelerator stays wedged)" : "");
  return LOOM_OK;
}

const struct loom_backend_ops loom_backend_linux = {
    .name = "linux",
    .open = linux_open,
    .close = linux_close,
    .alloc = linux_alloc,
    .free = linux_free,
    .sync = NULL,
    .submit = linux_submit,
    .wait = linux_wait,
    .reset = linux_reset,
};
