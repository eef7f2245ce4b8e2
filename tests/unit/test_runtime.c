/*
 * test_runtime.c - libloom: backends, devices, options, buffers, jobs.
 *
 * Jobs run on the fsim backend with a small hand-encoded program (the
 * add-5 job, tests/support/add5.c); timeouts and resets are checked through
 * a fake backend opened with loom_device_open_ops().  Models:
 * test_runtime_models.c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "add5.h"
#include "driver/lib/backend.h"
#include "driver/core/hostops.h"
#include "loom/isa.h"
#include "loom/loom.h"

/* ---- names and options ---- */

static void names(void **state) {
  assert_string_equal(loom_status_name(LOOM_OK), "OK");
  assert_string_equal(loom_status_name(LOOM_E_NOTFOUND), "NOTFOUND");
  assert_string_equal(loom_status_name(LOOM_STATUS_COUNT), "?");
  assert_string_equal(loom_dtype_name(LOOM_DT_F32), "float32");
  assert_int_equal(loom_dtype_size(LOOM_DT_I32), 4);
  assert_int_equal(loom_dtype_size(LOOM_DT_I8), 1);
  assert_int_equal(loom_dtype_size(LOOM_DT_COUNT), 0);
  const char *const *b = loom_backend_names();
  assert_string_equal(b[0], "fsim");
  int n = 0;
  while (b[n]) n++;
  for (int i = 0; i < n; i++) assert_string_equal(loom_backends[i]->name, b[i]);
  assert_null(loom_backends[n]);
  assert_string_equal(loom_hostop_name(LOOM_HOSTOP_SOFTMAX), "SOFTMAX");
  assert_string_equal(loom_hostop_name(LOOM_HOSTOP_COUNT), "?");
}

static void options(void **state) {
  char v[16];
  assert_int_equal(loom_option_get("config=tiny", "config", v, sizeof v), 1);
  assert_string_equal(v, "tiny");
  assert_int_equal(loom_option_get(" dev = /dev/loom0 , config=large,", "dev", v, sizeof v), 1);
  assert_string_equal(v, "/dev/loom0");
  assert_int_equal(loom_option_get("config=a,config=b", "config", v, sizeof v), 1);
  assert_string_equal(v, "b");
  assert_int_equal(loom_option_get("configx=a", "config", v, sizeof v), 0);
  assert_int_equal(loom_option_get(NULL, "config", v, sizeof v), 0);
  assert_int_equal(loom_option_get("config=0123456789abcdefXYZ", "config", v, sizeof v), 1);
  assert_string_equal(v, "0123456789abcde");
  static const char *const known[] = {"config", NULL};
  char msg[LOOM_MSG_MAX] = "";
  assert_int_equal(loom_option_check("config=tiny", known, "fsim", msg), LOOM_OK);
  assert_int_equal(loom_option_check(NULL, known, "fsim", msg), LOOM_OK);
  assert_int_equal(loom_option_check("conf=tiny", known, "fsim", msg), LOOM_E_INVALID);
  assert_string_equal(msg, "fsim: unknown option 'conf' (known: config)");
  assert_int_equal(loom_option_check("tiny", known, "fsim", msg), LOOM_E_INVALID);
  assert_non_null(strstr(msg, "key=value"));
}

/* ---- devices ---- */

static void open_fsim_configs(void **state) {
  loom_device *dev = open_fsim(NULL);
  assert_string_equal(loom_device_config(dev)->name, "default");
  assert_string_equal(loom_device_backend(dev), "fsim");
  loom_device_close(dev);
  dev = open_fsim("config=tiny");
  assert_int_equal(loom_device_config(dev)->hash, LOOM_CONFIG_TINY_HASH);
  loom_device_close(dev);
}

static void open_errors(void **state) {
  loom_device *dev = (loom_device *)1;
  char msg[LOOM_MSG_MAX] = "";
  assert_int_equal(loom_device_open("nosuch", NULL, &dev, msg), LOOM_E_NOTFOUND);
  assert_null(dev);
  assert_non_null(strstr(msg, "unknown backend 'nosuch'"));
  assert_non_null(strstr(msg, "fsim"));
  /* A backend Loom defines but this build lacks (one of them, if any). */
  static const char *const defined[] = {"tsim", "linux", "xrt"};
  for (int i = 0; i < 3; i++) {
    int built = 0;
    for (const char *const *n = loom_backend_names(); *n; n++) built |= !strcmp(*n, defined[i]);
    if (built) continue;
    assert_int_equal(loom_device_open(defined[i], NULL, &dev, msg), LOOM_E_UNSUPPORTED);
    assert_non_null(strstr(msg, "not compiled"));
    break;
  }
  assert_int_equal(loom_device_open("fsim", "config=huge", &dev, msg), LOOM_E_NOTFOUND);
  assert_non_null(strstr(msg, "unknown config 'huge'"));
  assert_non_null(strstr(msg, "tiny"));
  assert_int_equal(loom_device_open("fsim", "cfg=tiny", &dev, msg), LOOM_E_INVALID);
  assert_non_null(strstr(msg, "unknown option 'cfg'"));
  assert_int_equal(loom_device_open(NULL, NULL, &dev, msg), LOOM_E_INVALID);
  assert_int_equal(loom_device_open("fsim", NULL, NULL, NULL), LOOM_E_INVALID);
}

/* ---- buffers ---- */

static void buffers(void **state) {
  loom_device *dev = open_fsim("config=tiny");
  loom_buffer *b = NULL;
  assert_int_equal(loom_buffer_alloc(dev, 100, &b), LOOM_OK);
  assert_int_equal(loom_buffer_size(b), 100);
  uint8_t *p = loom_buffer_map(b);
  assert_non_null(p);
  assert_int_equal((uintptr_t)p % 64, 0);
  for (int i = 0; i < 100; i++) assert_int_equal(p[i], 0);
  memset(p, 7, 100);
  assert_int_equal(loom_buffer_sync(b, LOOM_SYNC_TO_DEVICE), LOOM_OK);
  assert_int_equal(loom_buffer_sync(b, LOOM_SYNC_FROM_DEVICE), LOOM_OK);
  loom_buffer_free(b);
  assert_int_equal(loom_buffer_alloc(dev, 0, &b), LOOM_E_INVALID);
  assert_null(b);
  assert_non_null(strstr(loom_device_error(dev), "0 bytes"));
  loom_buffer_free(NULL);
  loom_device_close(dev);
}

/* ---- jobs ---- */

struct add5_job {
  loom_buffer *insns, *uop, *acc, *out;
  struct loom_job job;
};

static void add5_setup(loom_device *dev, struct add5_job *j, uint32_t out_seg) {
  assert_int_equal(loom_buffer_alloc(dev, 5 * LOOM_INSN_BYTES, &j->insns), LOOM_OK);
  assert_int_equal(loom_buffer_alloc(dev, 4, &j->uop), LOOM_OK);
  assert_int_equal(loom_buffer_alloc(dev, sizeof add5_in, &j->acc), LOOM_OK);
  assert_int_equal(loom_buffer_alloc(dev, 8, &j->out), LOOM_OK);
  encode_add5(loom_buffer_map(j->insns), out_seg);
  memcpy(loom_buffer_map(j->acc), add5_in, sizeof add5_in);
  memset(&j->job, 0, sizeof j->job);
  j->job.insns = j->insns;
  j->job.insn_count = 5;
  j->job.segments[0] = j->uop;
  j->job.segments[1] = j->acc;
  j->job.segments[2] = j->out;
}

static void add5_teardown(struct add5_job *j) {
  loom_buffer_free(j->insns);
  loom_buffer_free(j->uop);
  loom_buffer_free(j->acc);
  loom_buffer_free(j->out);
}

static void job_runs_on_fsim(void **state) {
  loom_device *dev = open_fsim("config=tiny");
  struct add5_job j;
  add5_setup(dev, &j, 2);
  struct loom_job_result res;
  assert_int_equal(loom_job_run(dev, &j.job, 0, &res), LOOM_OK);
  assert_int_equal(res.error, LOOM_ERR_NONE);
  assert_memory_equal(loom_buffer_map(j.out), add5_out, 8);
  assert_int_equal(res.counters[LOOM_CNT_ALU_OPS], 1);
  assert_int_equal(res.counters[LOOM_CNT_INSN_STORE], 1);
  assert_int_equal(res.counters[LOOM_CNT_BYTES_WR_OUT], 8);
  assert_int_equal(res.counters[LOOM_CNT_BYTES_RD_INSN], 5 * 16);
  /* Submit and wait separately; wait twice is an error. */
  assert_int_equal(loom_job_submit(dev, &j.job), LOOM_OK);
  assert_int_equal(loom_job_submit(dev, &j.job), LOOM_E_INVALID);
  assert_non_null(strstr(loom_device_error(dev), "already in flight"));
  assert_int_equal(loom_job_wait(dev, 1000, &res), LOOM_OK);
  assert_int_equal(loom_job_wait(dev, 1000, &res), LOOM_E_INVALID);
  assert_non_null(strstr(loom_device_error(dev), "no job in flight"));
  add5_teardown(&j);
  loom_device_close(dev);
}

static void job_error_is_reported(void **state) {
  loom_device *dev = open_fsim("config=tiny");
  struct add5_job j;
  add5_setup(dev, &j, 5); /* segment 5 is unmapped */
  struct loom_job_result res;
  assert_int_equal(loom_job_run(dev, &j.job, 0, &res), LOOM_E_JOB);
  assert_int_equal(res.error, LOOM_ERR_SEGMENT);
  assert_int_equal(res.error_insn, 3);
  assert_non_null(strstr(loom_device_error(dev), "job failed: SEGMENT at insn 3: "));
  /* The device takes the next job. */
  j.job.segments[5] = j.out;
  assert_int_equal(loom_job_run(dev, &j.job, 0, &res), LOOM_OK);
  assert_memory_equal(loom_buffer_map(j.out), add5_out, 8);
  add5_teardown(&j);
  loom_device_close(dev);
}

static void job_arguments_are_checked(void **state) {
  loom_device *dev = open_fsim("config=tiny"), *other = open_fsim("config=tiny");
  struct add5_job j;
  add5_setup(dev, &j, 2);
  j.job.insn_count = 6;
  assert_int_equal(loom_job_submit(dev, &j.job), LOOM_E_INVALID);
  assert_non_null(strstr(loom_device_error(dev), "6 instructions"));
  j.job.insn_count = 0;
  assert_int_equal(loom_job_submit(dev, &j.job), LOOM_E_INVALID);
  j.job.insn_count = 5;
  loom_buffer *foreign;
  assert_int_equal(loom_buffer_alloc(other, 64, &foreign), LOOM_OK);
  j.job.segments[7] = foreign;
  assert_int_equal(loom_job_submit(dev, &j.job), LOOM_E_INVALID);
  assert_non_null(strstr(loom_device_error(dev), "segment 7"));
  loom_buffer_free(foreign);
  add5_teardown(&j);
  loom_device_close(other);
  loom_device_close(dev);
}

/* ---- a fake backend whose jobs never finish ---- */

struct hang_state {
  int resets, submits;
};

static loom_status hang_open(const char *options, void **state, const struct loom_hw_config **cfg,
                             char msg[LOOM_MSG_MAX]) {
  *state = calloc(1, sizeof(struct hang_state));
  *cfg = loom_hw_config_by_name("tiny");
  return LOOM_OK;
}

static void hang_close(void *state) { free(state); }

static loom_status hang_alloc(void *state, size_t bytes, struct loom_backend_buffer *buf,
                              char msg[LOOM_MSG_MAX]) {
  buf->host = calloc(1, bytes);
  buf->size = bytes;
  return buf->host ? LOOM_OK : LOOM_E_NOMEM;
}

static void hang_free(void *state, struct loom_backend_buffer *buf) { free(buf->host); }

static loom_status hang_submit(void *state, const struct loom_backend_buffer *insns,
                               uint32_t insn_count,
                               const struct loom_backend_buffer *const segments[8],
                               char msg[LOOM_MSG_MAX]) {
  ((struct hang_state *)state)->submits++;
  return LOOM_OK;
}

static loom_status hang_wait(void *state, uint32_t timeout_ms, struct loom_job_result *res,
                             char msg[LOOM_MSG_MAX]) {
  snprintf(msg, LOOM_MSG_MAX, "DONE never rose (resets so far: %d)",
           ((struct hang_state *)state)->resets);
  return LOOM_E_TIMEOUT;
}

static loom_status hang_reset(void *state, char msg[LOOM_MSG_MAX]) {
  ((struct hang_state *)state)->resets++;
  return LOOM_OK;
}

static const struct loom_backend_ops hang_ops = {
    .name = "hang", .open = hang_open, .close = hang_close, .alloc = hang_alloc,
    .free = hang_free, .submit = hang_submit, .wait = hang_wait, .reset = hang_reset,
};

/* The fake reports how often it was reset in its wait() message. */
static void timeout_resets_device(void **state) {
  loom_device *dev = NULL;
  char msg[LOOM_MSG_MAX];
  assert_int_equal(loom_device_open_ops(&hang_ops, NULL, &dev, msg), LOOM_OK);
  assert_string_equal(loom_device_backend(dev), "hang");
  loom_buffer *insns;
  assert_int_equal(loom_buffer_alloc(dev, 16, &insns), LOOM_OK);
  struct loom_job job = {.insns = insns, .insn_count = 1};
  struct loom_job_result res;
  assert_int_equal(loom_job_run(dev, &job, 25, &res), LOOM_E_TIMEOUT);
  assert_int_equal(res.error, LOOM_ERR_TIMEOUT);
  assert_non_null(strstr(loom_device_error(dev), "timed out after 25 ms"));
  assert_non_null(strstr(loom_device_error(dev), "DONE never rose"));
  assert_non_null(strstr(loom_device_error(dev), "device reset"));
  /* Reset happened and the next job is accepted. */
  assert_int_equal(loom_job_submit(dev, &job), LOOM_OK);
  assert_int_equal(loom_job_wait(dev, 1, NULL), LOOM_E_TIMEOUT);
  assert_non_null(strstr(loom_device_error(dev), "resets so far: 1"));
  loom_buffer_free(insns);
  loom_device_close(dev);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(names),
      cmocka_unit_test(options),
      cmocka_unit_test(open_fsim_configs),
      cmocka_unit_test(open_errors),
      cmocka_unit_test(buffers),
      cmocka_unit_test(job_runs_on_fsim),
      cmocka_unit_test(job_error_is_reported),
      cmocka_unit_test(job_arguments_are_checked),
      cmocka_unit_test(timeout_resets_device),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
