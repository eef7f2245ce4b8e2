/*
 * loom_backend_test.c - libloom's "linux" backend (driver/lib/backend_linux.c)
 * on the kernel driver's software test device, inside the QEMU test.
 *
 * Where loom_abi_test talks ioctls, this program goes through the public
 * API of include/loom/loom.h exactly as `loom run --backend linux` would:
 * device open with its options and configuration check, buffers, jobs, the
 * job-error convention, a timeout after which the device takes the next
 * job, and a wedged device (SOFT_RESET ignored) that submit resets.  The test device runs test commands (LOOM_TESTDEV_* in
 * loom_uapi.h), not Loom programs, so jobs are raw loom_job structures
 * rather than a .loom model.
 *
 * Linked statically with libloom.a (tests/qemu/run-qemu-test.sh puts it in
 * the initramfs).  Usage: loom_backend_test [/dev/loomN]
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "loom/loom.h"
#include "loom/loom_uapi.h"
#include "tap.h"

static const char *dev_path = "/dev/loom0";

static loom_device *open_dev(const char *extra) {
  char opts[256], msg[LOOM_MSG_MAX];
  loom_device *dev = NULL;
  snprintf(opts, sizeof opts, "dev=%s%s%s", dev_path, extra ? "," : "", extra ? extra : "");
  loom_status st = loom_device_open("linux", opts, &dev, msg);
  CHECKF(st == LOOM_OK, "%s", msg);
  return dev;
}

static void command(loom_buffer *insns, uint32_t op, uint32_t delay_ms, uint32_t arg) {
  uint32_t *w = loom_buffer_map(insns);
  w[0] = LOOM_TESTDEV_MAGIC, w[1] = op, w[2] = delay_ms, w[3] = arg;
}

static void test_open(void) {
  char msg[LOOM_MSG_MAX];
  loom_device *dev = open_dev("config=default");
  if (!dev) return;
  CHECK(!strcmp(loom_device_backend(dev), "linux"));
  CHECK(loom_device_config(dev)->hash == LOOM_CONFIG_DEFAULT_HASH);
  loom_device_close(dev);

  char opts[128];
  snprintf(opts, sizeof opts, "dev=%s,config=tiny", dev_path);
  CHECK(loom_device_open("linux", opts, &dev, msg) == LOOM_E_CONFIG);
  CHECKF(strstr(msg, "implements config 'default'") != NULL, "%s", msg);
  CHECK(loom_device_open("linux", "dev=/dev/loom99", &dev, msg) == LOOM_E_NOTFOUND);
  CHECKF(strstr(msg, "no device /dev/loom99") != NULL, "%s", msg);
  CHECK(loom_device_open("linux", "device=/dev/loom0", &dev, msg) == LOOM_E_INVALID);
  CHECK(loom_device_open("linux", "dev=/dev/null", &dev, msg) == LOOM_E_UNSUPPORTED);
  CHECKF(strstr(msg, "not a Loom device") != NULL, "%s", msg);
}

/* A job with an instruction buffer and two 3000-byte segments: the segment
 * size is the size the user asked for, not the driver's 4 KiB rounding. */
static void test_jobs(void) {
  loom_device *dev = open_dev(NULL);
  if (!dev) return;
  loom_buffer *insns, *a, *b;
  CHECK(loom_buffer_alloc(dev, 16, &insns) == LOOM_OK);
  CHECK(loom_buffer_alloc(dev, 3000, &a) == LOOM_OK);
  CHECK(loom_buffer_alloc(dev, 3000, &b) == LOOM_OK);
  uint8_t *pa = loom_buffer_map(a), *pb = loom_buffer_map(b);
  for (int i = 0; i < 3000; i++) pa[i] = (uint8_t)(i * 7 + 1);
  struct loom_job job = {.insns = insns, .insn_count = 1, .segments = {a, b}};
  struct loom_job_result res;

  command(insns, LOOM_TESTDEV_OP_COPY, 10, 3000);
  CHECKF(loom_job_run(dev, &job, 5000, &res) == LOOM_OK, "%s", loom_device_error(dev));
  CHECK(memcmp(pa, pb, 3000) == 0);
  CHECK(res.counters[LOOM_CNT_BYTES_WR_OUT] == 3000 && res.counters[LOOM_CNT_CYCLES] == 1000000);

  memset(pb, 0, 3000);
  command(insns, LOOM_TESTDEV_OP_COPY, 0, 3001); /* one byte past the segments */
  CHECK(loom_job_run(dev, &job, 5000, &res) == LOOM_E_JOB);
  CHECK(res.error == LOOM_ERR_SEGMENT && pb[0] == 0);
  CHECKF(strstr(loom_device_error(dev), "job failed: SEGMENT at insn 0") != NULL, "%s",
         loom_device_error(dev));

  command(insns, LOOM_TESTDEV_OP_FAIL, 0, LOOM_ERR_SRAM);
  CHECK(loom_job_run(dev, &job, 5000, &res) == LOOM_E_JOB && res.error == LOOM_ERR_SRAM);

  command(insns, LOOM_TESTDEV_OP_HANG, 0, 0);
  CHECK(loom_job_run(dev, &job, 300, &res) == LOOM_E_TIMEOUT);
  CHECK(res.error == LOOM_ERR_TIMEOUT);
  CHECKF(strstr(loom_device_error(dev), "timed out after 300 ms") != NULL, "%s",
         loom_device_error(dev));

  command(insns, LOOM_TESTDEV_OP_COPY, 0, 100); /* the device was reset */
  CHECK(loom_job_run(dev, &job, 5000, &res) == LOOM_OK);

  loom_buffer_free(insns);
  loom_buffer_free(a);
  loom_buffer_free(b);
  loom_device_close(dev);
}

/* A job that ignores three SOFT_RESETs: the driver's reset at the timeout
 * and job.c's reset fail (the device is wedged), the next submit's one
 * more reset fails too (LOOM_E_IO naming the wedged device), and the
 * submit after that resets the device and runs. */
static void test_wedged(void) {
  loom_device *dev = open_dev(NULL);
  if (!dev) return;
  loom_buffer *insns, *a, *b;
  CHECK(loom_buffer_alloc(dev, 16, &insns) == LOOM_OK);
  CHECK(loom_buffer_alloc(dev, 4096, &a) == LOOM_OK);
  CHECK(loom_buffer_alloc(dev, 4096, &b) == LOOM_OK);
  struct loom_job job = {.insns = insns, .insn_count = 1, .segments = {a, b}};
  struct loom_job_result res;

  command(insns, LOOM_TESTDEV_OP_WEDGE, 5, 3);
  CHECK(loom_job_run(dev, &job, 200, &res) == LOOM_E_TIMEOUT);
  CHECKF(strstr(loom_device_error(dev), "reset failed") != NULL, "%s", loom_device_error(dev));
  uint8_t *pa = loom_buffer_map(a);
  for (int i = 0; i < 100; i++) pa[i] = (uint8_t)(i + 1);
  command(insns, LOOM_TESTDEV_OP_COPY, 0, 100);
  CHECK(loom_job_run(dev, &job, 5000, &res) == LOOM_E_IO);
  CHECKF(strstr(loom_device_error(dev), "wedged") != NULL, "%s", loom_device_error(dev));
  CHECKF(loom_job_run(dev, &job, 5000, &res) == LOOM_OK, "%s", loom_device_error(dev));
  CHECK(memcmp(pa, loom_buffer_map(b), 100) == 0);

  loom_buffer_free(insns);
  loom_buffer_free(a);
  loom_buffer_free(b);
  loom_device_close(dev);
}

static void test_registry(void) {
  int linux_seen = 0, xrt_seen = 0;
  for (const char *const *b = loom_backend_names(); *b; b++) {
    linux_seen |= !strcmp(*b, "linux");
    xrt_seen |= !strcmp(*b, "xrt");
  }
  CHECK(linux_seen && xrt_seen);
}

int main(int argc, char **argv) {
  if (argc > 1) dev_path = argv[1];
  setvbuf(stdout, NULL, _IOLBF, 0);
  tap_run("registry", test_registry);
  tap_run("open", test_open);
  tap_run("jobs", test_jobs);
  tap_run("wedged device", test_wedged);
  return tap_done("loom_backend_test");
}
