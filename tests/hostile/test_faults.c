/*
 * test_faults.c - fault injection through the whole runtime on tsim: DRAM
 * error responses, a long DRAM stall, a dropped interrupt.
 *
 * In each case the runtime must report a clear error (LOOM_E_JOB with BUS,
 * or LOOM_E_TIMEOUT after resetting the device), the DRAM model must see no
 * protocol violation, and the next run on the same device must produce the
 * outputs of a clean run.  The model is tests/asm/gemm_tiny.s, loaded and
 * run with loom_model_* on libloom's tsim backend, so what is tested is
 * what a user gets: backend_tsim.c's wait and reset, job.c's timeout path,
 * hwregs.c and the RTL.
 *
 * The faults come from the simulator's hooks (sim/tsim/tsim.h:
 * tsim_fault_add, tsim_fault_stall, tsim_fault_interrupt), reached through
 * the device's instance and library handle (loom_tsim_instance in
 * driver/lib/backend.h) and looked up with dlsym, as the backend does.  A
 * dropped interrupt is a wire that never reaches the CPU, so the backend
 * keeps simulating until its cycle limit.
 *
 * Environment: LOOM_TSIM_LIB or the backend's usual search (docs/tsim.md)
 * finds build/tsim/tiny/libloom_tsim.so; without it the test is skipped.
 */
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "driver/core/asm.h"
#include "driver/lib/backend.h"
#include "hostile.h"
#include "loom/isa.h"
#include "sim/tsim/tsim.h"

#define MAX_CYCLES 150000u

/* ---- the simulator's fault hooks ---- */

static struct {
  void *lib;       /* dlopen() handle of the device's libloom_tsim.so */
  struct tsim *sim;
} hooks;

/* A function of the simulator library. */
static void *lib_fn(const char *name) {
  void *f = dlsym(hooks.lib, name);
  assert_non_null(f);
  return f;
}

static void fault_add(uint64_t addr, uint64_t size, uint32_t resp, int reads, int writes) {
  int (*fn)(struct tsim *, uint64_t, uint64_t, uint32_t, int, int);
  *(void **)&fn = lib_fn("tsim_fault_add");
  assert_int_equal(fn(hooks.sim, addr, size, resp, reads, writes), 0);
}

static void fault_clear(void) {
  void (*fn)(struct tsim *);
  *(void **)&fn = lib_fn("tsim_fault_clear");
  fn(hooks.sim);
}

static void fault_stall(uint64_t cycles) {
  void (*fn)(struct tsim *, uint64_t);
  *(void **)&fn = lib_fn("tsim_fault_stall");
  fn(hooks.sim, cycles);
}

static void fault_interrupt(int drop) {
  void (*fn)(struct tsim *, int);
  *(void **)&fn = lib_fn("tsim_fault_interrupt");
  fn(hooks.sim, drop);
}

/* DRAM-model violations since the last job was submitted. */
static uint64_t violations(void) {
  char first[256] = "";
  uint64_t (*fn)(const struct tsim *, char *, size_t);
  *(void **)&fn = lib_fn("tsim_violations");
  uint64_t n = fn(hooks.sim, first, sizeof first);
  if (n) print_message("DRAM model: %s\n", first);
  return n;
}

/* All of DRAM, as bus addresses. */
static void dram_range(uint64_t *base, uint64_t *size) {
  uint8_t *(*dram)(struct tsim *, uint64_t *);
  uint64_t (*dram_base)(const struct tsim *);
  *(void **)&dram = lib_fn("tsim_dram");
  *(void **)&dram_base = lib_fn("tsim_dram_base");
  dram(hooks.sim, size);
  *base = dram_base(hooks.sim);
}

/* ---- fixture: a tsim device with gemm_tiny loaded and its clean output ---- */

struct fx {
  loom_device *dev;
  loom_model *m;
  uint64_t want;
};

static int setup(void **state) {
  static struct fx fx; /* lives for the whole group */
  char msg[LOOM_MSG_MAX], opts[64];
  struct loom_file_builder *b;
  size_t size;
  memset(&fx, 0, sizeof fx);
  snprintf(opts, sizeof opts, "config=tiny,max_cycles=%u", MAX_CYCLES);
  if (loom_device_open_ops(&loom_backend_tsim, opts, &fx.dev, msg) != LOOM_OK) {
    fprintf(stderr, "test_faults: %s\n", msg);
    return -1;
  }
  hooks.sim = loom_tsim_instance(fx.dev, &hooks.lib);
  if (!hooks.sim || !hooks.lib) return -1;
  if (loom_asm_file("tests/asm/gemm_tiny.s", NULL, &b, msg) != LOOM_OK) return -1;
  uint8_t *bytes = loom_file_builder_finish(b, &size);
  loom_file_builder_free(b);
  if (!bytes || loom_model_load_memory(fx.dev, bytes, size, "gemm_tiny.loom", &fx.m, msg) != LOOM_OK)
    return -1;
  free(bytes);
  hostile_set_inputs(fx.m);
  if (loom_model_run(fx.m, 0) != LOOM_OK) return -1;
  fx.want = hostile_output_hash(fx.m);
  *state = &fx;
  return 0;
}

static int teardown(void **state) {
  struct fx *fx = *state;
  loom_model_free(fx->m);
  loom_device_close(fx->dev);
  return 0;
}

/* The next run on the same device is correct: status, outputs, no violation. */
static void next_run_is_clean(struct fx *fx) {
  loom_status st = loom_model_run(fx->m, 0);
  if (st != LOOM_OK) fail_msg("the run after the fault failed: %s", loom_device_error(fx->dev));
  assert_true(hostile_output_hash(fx->m) == fx->want);
}

static void expect_bus_error(struct fx *fx) {
  assert_int_equal(loom_model_run(fx->m, 0), LOOM_E_JOB);
  const char *msg = loom_device_error(fx->dev);
  assert_non_null(strstr(msg, "step 0 (job 0): job failed: BUS at insn "));
  const struct loom_job_result *r = loom_model_job_result(fx->m, 0);
  assert_int_equal(r->error, LOOM_ERR_BUS);
}

static void test_read_error_response(void **state) {
  struct fx *fx = *state;
  uint64_t base, size;
  dram_range(&base, &size);
  fault_add(base, size, 2 /* SLVERR */, 1, 0);
  expect_bus_error(fx);
  fault_clear();
  next_run_is_clean(fx);
}

static void test_write_error_response(void **state) {
  struct fx *fx = *state;
  uint64_t base, size;
  dram_range(&base, &size);
  fault_add(base, size, 3 /* DECERR */, 0, 1);
  expect_bus_error(fx);
  fault_clear();
  next_run_is_clean(fx);
}

/* A stall longer than the job's cycle limit: the job times out, the
 * runtime resets the accelerator (which must finish or abandon its bursts
 * cleanly once DRAM answers again), and the next run is correct. */
static void test_long_dram_stall(void **state) {
  struct fx *fx = *state;
  fault_stall(3 * MAX_CYCLES);
  assert_int_equal(loom_model_run(fx->m, 0), LOOM_E_TIMEOUT);
  const char *msg = loom_device_error(fx->dev);
  assert_non_null(strstr(msg, "timed out"));
  assert_non_null(strstr(msg, "device reset"));
  assert_int_equal(loom_model_job_result(fx->m, 0)->error, LOOM_ERR_TIMEOUT);
  next_run_is_clean(fx);
}

/* DRAM stays dead past the soft reset's wait: the reset fails, the backend
 * pulses rst_ni and says so; once DRAM answers again the device works. */
static void test_stall_outlives_reset(void **state) {
  struct fx *fx = *state;
  fault_stall(UINT64_C(1) << 40);
  assert_int_equal(loom_model_run(fx->m, 0), LOOM_E_TIMEOUT);
  const char *msg = loom_device_error(fx->dev);
  assert_non_null(strstr(msg, "timed out"));
  assert_non_null(strstr(msg, "reset failed"));
  assert_non_null(strstr(msg, "pulsed rst_ni"));
  /* rst_ni drops the stalled AR handshake: the reset's right, not a
   * protocol violation the DRAM model may report */
  assert_int_equal(violations(), 0);
  fault_stall(0);
  next_run_is_clean(fx);
}

/* The job completes but its interrupt never reaches the CPU. */
static void test_dropped_interrupt(void **state) {
  struct fx *fx = *state;
  fault_interrupt(1);
  loom_status st = loom_model_run(fx->m, 0);
  fault_interrupt(0);
  assert_int_equal(st, LOOM_E_TIMEOUT);
  assert_non_null(strstr(loom_device_error(fx->dev), "device reset"));
  next_run_is_clean(fx);
}

/* Faults back to back, then a clean run: nothing accumulates. */
static void test_faults_in_a_row(void **state) {
  struct fx *fx = *state;
  uint64_t base, size;
  dram_range(&base, &size);
  for (int i = 0; i < 3; i++) {
    fault_add(base, size, 2 + (uint32_t)(i & 1), 1, 1);
    expect_bus_error(fx);
    fault_clear();
  }
  fault_stall(2 * MAX_CYCLES);
  assert_int_equal(loom_model_run(fx->m, 0), LOOM_E_TIMEOUT);
  next_run_is_clean(fx);
  next_run_is_clean(fx);
}

/* 1 when a tsim device for tiny can be opened here. */
static int tsim_available(void) {
  char msg[LOOM_MSG_MAX];
  loom_device *dev;
  loom_status st = loom_device_open_ops(&loom_backend_tsim, "config=tiny", &dev, msg);
  if (st == LOOM_OK) {
    loom_device_close(dev);
    return 1;
  }
  fprintf(stderr, "test_faults: skipped, no tsim: %s\n", msg);
  return 0;
}

int main(void) {
  if (!tsim_available()) return 0;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_read_error_response),
      cmocka_unit_test(test_write_error_response),
      cmocka_unit_test(test_long_dram_stall),
      cmocka_unit_test(test_stall_outlives_reset),
      cmocka_unit_test(test_dropped_interrupt),
      cmocka_unit_test(test_faults_in_a_row),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
