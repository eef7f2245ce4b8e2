/*
 * loom_hw_on_tsim.c - the kernel module's hardware layer
 * (driver/linux/loom_hw.c, over driver/lib/hwseq.h) compiled for user
 * space and run against the Verilated RTL.
 *
 * loom_hw.c is built unchanged against tests/kernel/shim, a few lines per
 * kernel header it includes: its register transport (struct loom_reg_ops)
 * becomes AXI4-Lite transactions on a tsim instance, usleep_range() lets
 * simulated time pass (1 us = 1 cycle, so the driver's 1000 ms idle bound
 * is a million cycles) and jiffies follow that clock.  The test then does
 * what loom_job.c does around it: start a job, wait for the interrupt line
 * (or poll, as the driver does without one), check completion, collect,
 * and compares each job with fsim: error code, every byte of every
 * segment, every exact counter, and a running CYCLES count.
 *
 * The jobs are legal random Loom programs (tests/support/randstream.c,
 * the generator of the fsim-vs-tsim test), with and without a planted
 * error; a SOFT_RESET mid-job and one that cannot finish (DRAM stalled
 * past the driver's bound: -ETIMEDOUT) cover loom_hw_reset.
 *
 *   loom_hw_on_tsim [SEEDS]     SEEDS random jobs per mode (default 12)
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "driver/linux/loom_hw.h"
#include "loom/isa.h"
#include "randstream.h"
#include "sim/fsim/fsim.h"
#include "sim/tsim/tsim.h"

#define JOB_CYCLES 4000000u
#define LOG_MAX 256

/* ---- what the shim asks of the test ---- */

unsigned int loom_debug;  /* the module parameter loom_hw.h declares */
unsigned int kshim_errors; /* dev_err() calls */

static struct tsim *sim;
static uint64_t sim_us; /* simulated microseconds slept */

void kshim_usleep(unsigned long us) {
  tsim_step(sim, us);
  sim_us += us;
}

unsigned long kshim_jiffies(void) { return (unsigned long)(sim_us / 1000); }

/* ---- the register transport: tsim, with a log of writes ---- */

struct wlog {
  uint32_t off, val;
};

static struct wlog writes[LOG_MAX];
static int nwrites;

static u32 tsim_read(struct loom_hw *hw, u32 off) {
  uint32_t v = 0xFFFFFFFFu;
  tsim_reg_read(sim, off, &v);
  return v;
}

static void tsim_write(struct loom_hw *hw, u32 off, u32 val) {
  if (nwrites < LOG_MAX) writes[nwrites++] = (struct wlog){off, val};
  tsim_reg_write(sim, off, val);
}

static const struct loom_reg_ops tsim_regs = {.read = tsim_read, .write = tsim_write};

static struct device fake_dev = {.name = "loom-on-tsim"};
static struct loom_hw hw;
static const struct loom_hw_config *cfg;
static uint8_t *dram;
static uint64_t dram_base, dram_next;
static int seeds = 12;

/* ---- DRAM ---- */

static uint64_t dram_alloc(uint64_t bytes) {
  uint64_t at = dram_next;
  dram_next = (dram_next + bytes + 0xFFF) & ~0xFFFull;
  return dram_base + at;
}

static uint8_t *host(uint64_t bus) { return dram + (bus - dram_base); }

/* A job in DRAM: its stream and segments placed, the segments' bus
 * addresses in seg[], and the DRAM model told what it may touch. */
struct placed {
  uint64_t insns;
  struct loom_hw_segment seg[LOOM_NUM_SEGMENTS];
};

static void place(const struct randstream *rs, struct placed *p) {
  dram_next = 0x10000;
  memset(p, 0, sizeof *p);
  p->insns = dram_alloc(16ull * rs->insn_count);
  memcpy(host(p->insns), rs->insns, 16ull * rs->insn_count);
  tsim_window_clear(sim);
  tsim_window_add(sim, p->insns, 16ull * rs->insn_count);
  for (int s = 0; s < LOOM_NUM_SEGMENTS; s++) {
    if (!rs->seg[s].size) continue;
    p->seg[s] = (struct loom_hw_segment){dram_alloc(rs->seg[s].size), rs->seg[s].size};
    memcpy(host(p->seg[s].base), rs->seg[s].data, rs->seg[s].size);
    tsim_window_add(sim, p->seg[s].base, rs->seg[s].size);
  }
  tsim_violations_clear(sim);
}

/* ---- running a job the way loom_job.c does ---- */

struct result {
  u32 error, error_insn;
  u64 counters[LOOM_CNT_COUNT];
};

/* Start, then the interrupt line (irq >= 0) or ISR polls, then collect. */
static void run_kernel_way(const struct placed *p, uint32_t insn_count, struct result *r) {
  nwrites = 0;
  assert_int_equal(loom_hw_start(&hw, p->insns, insn_count, p->seg), 0);
  if (hw.irq >= 0) {
    assert_true(tsim_wait_interrupt(sim, JOB_CYCLES));
  } else {
    uint64_t polls = 0;
    while (!loom_hw_done_pending(&hw)) {
      assert_false(tsim_interrupt(sim)); /* GIE = 0: the line stays low */
      tsim_step(sim, 256);
      assert_true(++polls < JOB_CYCLES / 256);
    }
  }
  assert_true(loom_hw_done_pending(&hw));
  loom_hw_collect(&hw, &r->error, &r->error_insn, r->counters);
  assert_false(tsim_interrupt(sim));       /* acknowledged: the line is low */
  assert_false(loom_hw_done_pending(&hw)); /* and ISR clear */
  char first[256];
  uint64_t v = tsim_violations(sim, first, sizeof first);
  if (v) fail_msg("%llu bus violations, first: %s", (unsigned long long)v, first);
}

static void run_fsim(const struct randstream *rs, uint8_t *out[LOOM_NUM_SEGMENTS],
                     struct fsim_result *res) {
  struct fsim *f = fsim_create(cfg);
  struct fsim_job job = {.insns = rs->insns, .insn_count = rs->insn_count};
  assert_non_null(f);
  for (int s = 0; s < LOOM_NUM_SEGMENTS; s++) {
    out[s] = NULL;
    if (!rs->seg[s].size) continue;
    out[s] = malloc(rs->seg[s].size);
    memcpy(out[s], rs->seg[s].data, rs->seg[s].size);
    job.seg[s] = (struct fsim_segment){out[s], rs->seg[s].size};
  }
  memset(res, 0, sizeof *res);
  fsim_run(f, &job, res);
  fsim_destroy(f);
}

/* One random job through loom_hw.c on the RTL, checked against fsim. */
static void check_seed(uint64_t seed, int errors) {
  struct randstream_knobs k;
  struct randstream rs;
  struct placed p;
  struct result r;
  struct fsim_result fr;
  uint8_t *want[LOOM_NUM_SEGMENTS];
  char msg[256];
  randstream_knobs_default(&k);
  k.errors = errors;
  assert_int_equal(randstream_build(cfg, seed, &k, &rs, msg, sizeof msg), 0);
  place(&rs, &p);
  run_kernel_way(&p, rs.insn_count, &r);
  run_fsim(&rs, want, &fr);
  if (errors) {
    assert_int_equal(r.error, rs.expect_error);
    assert_int_equal(fr.error, rs.expect_error);
    if (rs.expect_error != LOOM_ERR_NOFINISH) assert_int_equal(r.error_insn, fr.err_insn);
  } else {
    assert_int_equal(r.error, LOOM_ERR_NONE);
    assert_int_equal(fr.error, LOOM_ERR_NONE);
    for (int s = 0; s < LOOM_NUM_SEGMENTS; s++)
      if (want[s]) assert_memory_equal(host(p.seg[s].base), want[s], rs.seg[s].size);
    for (uint32_t c = 0; c < LOOM_CNT_COUNT; c++)
      if ((LOOM_COUNTER_EXACT_MASK >> c) & 1) assert_int_equal(r.counters[c], fr.counters[c]);
    assert_true(r.counters[LOOM_CNT_CYCLES] > 0);
    assert_true(r.counters[LOOM_CNT_INSN_COMPUTE] > 0);
  }
  for (int s = 0; s < LOOM_NUM_SEGMENTS; s++) free(want[s]);
  randstream_free(&rs);
}

/* ---- tests ---- */

static void test_probe_and_reset(void **state) {
  assert_int_equal(loom_hw_probe(&hw), 0);
  assert_int_equal(hw.config_hash, tsim_config_hash());
  assert_string_equal(loom_hw_config_name(hw.config_hash), tsim_config_name());
  assert_int_equal(hw.hw_version & 0xFFFF, LOOM_ISA_VERSION);
  assert_int_equal(loom_hw_reset(&hw), 0);
}

static void test_jobs_with_interrupt(void **state) {
  hw.irq = 0;
  for (int s = 1; s <= seeds; s++) check_seed((uint64_t)s, 0);
}

/* No interrupt line: GIE = 0, completion seen in ISR.DONE, which the
 * sequence latches by always setting IER. */
static void test_jobs_polled(void **state) {
  hw.irq = -1;
  for (int s = 1; s <= seeds; s++) check_seed(1000 + (uint64_t)s, 0);
  hw.irq = 0;
}

static void test_planted_errors(void **state) {
  for (int s = 1; s <= seeds; s++) check_seed((uint64_t)s, 1);
}

/* What loom_hw_start writes, in order (docs/registers.md, steps 3-5). */
static void test_start_writes_in_order(void **state) {
  struct randstream_knobs k;
  struct randstream rs;
  struct placed p;
  struct result r;
  char msg[256];
  randstream_knobs_default(&k);
  assert_int_equal(randstream_build(cfg, 7, &k, &rs, msg, sizeof msg), 0);
  place(&rs, &p);
  hw.irq = -1;
  run_kernel_way(&p, rs.insn_count, &r);
  hw.irq = 0;
  int i = 0;
  assert_int_equal(writes[i].off, LOOM_REG_INSN_ADDR_LO);
  assert_int_equal(writes[i++].val, (uint32_t)p.insns);
  assert_int_equal(writes[i].off, LOOM_REG_INSN_ADDR_HI);
  assert_int_equal(writes[i++].val, (uint32_t)(p.insns >> 32));
  assert_int_equal(writes[i].off, LOOM_REG_INSN_COUNT);
  assert_int_equal(writes[i++].val, rs.insn_count);
  for (uint32_t s = 0; s < LOOM_NUM_SEGMENTS; s++) {
    uint32_t o = s * LOOM_REG_SEG_STRIDE;
    assert_int_equal(writes[i++].off, LOOM_REG_SEG_BASE_LO + o);
    assert_int_equal(writes[i++].off, LOOM_REG_SEG_BASE_HI + o);
    assert_int_equal(writes[i].off, LOOM_REG_SEG_SIZE_LO + o);
    assert_int_equal(writes[i++].val, (uint32_t)p.seg[s].size);
    assert_int_equal(writes[i++].off, LOOM_REG_SEG_SIZE_HI + o);
  }
  const struct wlog tail[] = {{LOOM_REG_ISR, LOOM_IRQ_DONE},
                              {LOOM_REG_IER, LOOM_IRQ_DONE},
                              {LOOM_REG_GIE, 0},
                              {LOOM_REG_CTRL, LOOM_CTRL_START},
                              {LOOM_REG_ISR, LOOM_IRQ_DONE}}; /* collect's acknowledge */
  for (size_t t = 0; t < sizeof tail / sizeof *tail; t++, i++) {
    assert_int_equal(writes[i].off, tail[t].off);
    assert_int_equal(writes[i].val, tail[t].val);
  }
  assert_int_equal(i, nwrites);
  randstream_free(&rs);
}

/* Starts a long random job (200 actions) through loom_hw_start. */
static void start_long_job(uint64_t seed, struct randstream *rs) {
  struct randstream_knobs k;
  struct placed p;
  char msg[256];
  randstream_knobs_default(&k);
  k.actions = 200;
  assert_int_equal(randstream_build(cfg, seed, &k, rs, msg, sizeof msg), 0);
  place(rs, &p);
  assert_int_equal(loom_hw_start(&hw, p.insns, rs->insn_count, p.seg), 0);
}

/* A long job stopped by SOFT_RESET, then the next job is right. */
static void test_reset_mid_job(void **state) {
  struct randstream rs;
  start_long_job(99, &rs);
  tsim_step(sim, 300);
  assert_false(loom_hw_done_pending(&hw));
  assert_int_equal(loom_hw_reset(&hw), 0);
  assert_false(loom_hw_done_pending(&hw));
  assert_false(tsim_interrupt(sim));
  randstream_free(&rs);
  check_seed(5, 0);
}

/* DRAM answers nothing for longer than the driver waits: the reset fails
 * with -ETIMEDOUT and says so (the driver then wedges the device); once
 * DRAM is back, a second reset works and jobs run again. */
static void test_reset_that_cannot_finish(void **state) {
  struct randstream rs;
  start_long_job(77, &rs);
  tsim_step(sim, 100);
  tsim_fault_stall(sim, 1500000); /* 1.5 s of the driver's clock */
  unsigned int errs = kshim_errors;
  uint64_t t0 = sim_us;
  assert_int_equal(loom_hw_reset(&hw), -ETIMEDOUT);
  assert_int_equal(kshim_errors, errs + 1);
  assert_true(sim_us - t0 >= 1000000); /* the driver's bound, 1000 ms */
  assert_true(sim_us - t0 < 1200000);
  tsim_step(sim, 600000);
  assert_int_equal(loom_hw_reset(&hw), 0);
  randstream_free(&rs);
  check_seed(6, 0);
}

static int setup(void **state) {
  char msg[256];
  sim = tsim_create(NULL, msg, sizeof msg);
  if (!sim) {
    fprintf(stderr, "loom_hw_on_tsim: %s\n", msg);
    return -1;
  }
  cfg = loom_hw_config_by_name(tsim_config_name());
  dram = tsim_dram(sim, NULL);
  dram_base = tsim_dram_base(sim);
  hw = (struct loom_hw){.dev = &fake_dev, .regs = &tsim_regs, .irq = 0};
  return cfg ? 0 : -1;
}

static int teardown(void **state) {
  tsim_destroy(sim);
  return 0;
}

int main(int argc, char **argv) {
  if (argc > 1) seeds = atoi(argv[1]);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_probe_and_reset),
      cmocka_unit_test(test_jobs_with_interrupt),
      cmocka_unit_test(test_jobs_polled),
      cmocka_unit_test(test_planted_errors),
      cmocka_unit_test(test_start_writes_in_order),
      cmocka_unit_test(test_reset_mid_job),
      cmocka_unit_test(test_reset_that_cannot_finish),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
