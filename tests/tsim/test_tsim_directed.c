/*
 * test_tsim_directed.c - directed tests of the RTL through tsim.
 *
 * Most tests drive the Verilated accelerator directly: the tsim C API
 * (linked against build/tsim/<config>/libloom_tsim.so) for DRAM, windows and
 * fault injection, and hwregs.c - the same register code a board uses - for
 * every register access.  The timeout test goes through libloom's tsim
 * backend, since the timeout path (busy report, SOFT_RESET, next job) is the
 * backend's and job.c's.
 *
 * Every job also runs with the job's segments and instruction stream as the
 * DRAM model's allowed windows: an access outside them (or any AXI rule
 * broken) fails the test, which is how the segment tests prove that a
 * refused transfer moved nothing.
 *
 * Environment: LOOM_TSIM_LIB (used by the backend test) is set by the
 * module.mk rule that runs this program.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "driver/lib/backend.h"
#include "driver/lib/hwregs.h"
#include "loom/isa.h"
#include "sim/fsim/fsim.h"
#include "sim/tsim/tsim.h"
#include "stream.h"

extern const struct loom_backend_ops loom_backend_tsim;

#define JOB_CYCLES 2000000u

struct dut {
  struct tsim *t;
  struct loom_reg_io io;
  const struct loom_hw_config *cfg;
  uint8_t *dram;
  uint64_t base, next;
};

static uint32_t dut_read(void *ctx, uint32_t off) {
  uint32_t v;
  tsim_reg_read(((struct dut *)ctx)->t, off, &v);
  return v;
}

static void dut_write(void *ctx, uint32_t off, uint32_t v) {
  tsim_reg_write(((struct dut *)ctx)->t, off, v);
}

static void dut_idle(void *ctx, uint32_t cycles) { tsim_step(((struct dut *)ctx)->t, cycles); }

static int setup(void **state) {
  static struct dut d; /* cmocka state lives for the whole group */
  char msg[256];
  memset(&d, 0, sizeof d);
  d.t = tsim_create(NULL, msg, sizeof msg);
  if (!d.t) {
    fprintf(stderr, "%s\n", msg);
    return -1;
  }
  d.io = (struct loom_reg_io){.ctx = &d, .read = dut_read, .write = dut_write, .idle = dut_idle};
  d.cfg = loom_hw_config_by_name(tsim_config_name());
  d.dram = tsim_dram(d.t, NULL);
  d.base = tsim_dram_base(d.t);
  d.next = 0x10000;
  *state = &d;
  return d.cfg ? 0 : -1;
}

static int teardown(void **state) {
  tsim_destroy(((struct dut *)*state)->t);
  return 0;
}

/* A fresh region of DRAM (bus address), 4 KiB aligned, zeroed. */
static uint64_t dut_alloc(struct dut *d, uint64_t bytes) {
  uint64_t at = d->next;
  d->next = (d->next + bytes + 0xFFF) & ~0xFFFull;
  memset(d->dram + at, 0, bytes);
  return d->base + at;
}

static uint8_t *host(struct dut *d, uint64_t bus) { return d->dram + (bus - d->base); }

/* Copies the stream to DRAM and declares it and the segments as the DRAM
 * model's allowed windows; returns the stream's bus address. */
static uint64_t place_job(struct dut *d, const struct stream *s, const struct loom_hw_segment seg[8]) {
  uint64_t insns = dut_alloc(d, 16ull * s->count);
  memcpy(host(d, insns), s->bytes, 16ull * s->count);
  tsim_window_clear(d->t);
  tsim_window_add(d->t, insns, 16ull * s->count);
  for (int i = 0; i < LOOM_NUM_SEGMENTS; i++)
    if (seg[i].size) tsim_window_add(d->t, seg[i].base, seg[i].size);
  tsim_violations_clear(d->t);
  return insns;
}

static void check_no_violations(struct dut *d) {
  char first[256];
  uint64_t v = tsim_violations(d->t, first, sizeof first);
  if (v) fail_msg("%llu bus violations, first: %s", (unsigned long long)v, first);
}

/* Runs the job to done (interrupt) and collects the result.  Fails the
 * test on any bus violation. */
static void run_job(struct dut *d, const struct stream *s, const struct loom_hw_segment seg[8],
                    struct loom_job_result *res) {
  char msg[LOOM_MSG_MAX];
  uint64_t insns = place_job(d, s, seg);
  assert_int_equal(loom_hw_start(&d->io, insns, s->count, seg, 1, msg), LOOM_OK);
  assert_true(tsim_wait_interrupt(d->t, JOB_CYCLES));
  assert_true(loom_hw_poll_done(&d->io, 1, 0));
  loom_hw_collect(&d->io, res);
  check_no_violations(d);
}

/* ---- a small GEMM job, checked against fsim ---- */

struct gemm_job {
  struct stream s;
  struct loom_hw_segment seg[8];
  uint64_t in_bus, out_bus, in_size, out_size;
};

/* seg 0: uops | inp | wgt (input), seg 1: output.  4 INP rows x 4 WGT rows. */
static void build_gemm_job(struct dut *d, struct gemm_job *j) {
  uint32_t rin = loom_hw_row_bytes(d->cfg, LOOM_BUF_INP, 0);
  uint32_t rw = loom_hw_row_bytes(d->cfg, LOOM_BUF_WGT, 0);
  uint32_t rout = loom_hw_row_bytes(d->cfg, LOOM_BUF_OUT, 0);
  j->in_size = 64 + 4ull * rin + 4ull * rw;
  j->out_size = 16ull * rout;
  j->in_bus = dut_alloc(d, j->in_size);
  j->out_bus = dut_alloc(d, j->out_size);
  uint8_t *in = host(d, j->in_bus);
  for (uint64_t i = 64; i < j->in_size; i++) in[i] = (uint8_t)(i * 37 + 11);
  for (uint32_t k = 0; k < 16; k++) {
    struct loom_uop u = {k, k / 4, k % 4};
    loom_uop_encode(&u, in + 4 * k);
  }
  memset(j->seg, 0, sizeof j->seg);
  j->seg[0] = (struct loom_hw_segment){j->in_bus, j->in_size};
  j->seg[1] = (struct loom_hw_segment){j->out_bus, j->out_size};
  stream_init(&j->s);
  stream_load(&j->s, 0, LOOM_BUF_UOP, 0, 0, 0, 16);
  stream_load(&j->s, 0, LOOM_BUF_INP, 0, 0, 64 / rin, 4);
  stream_load(&j->s, STREAM_PUSH_NEXT, LOOM_BUF_WGT, 0, 0, (64 + 4 * rin) / rw, 4);
  stream_gemm_range(&j->s, 0, 1, 0, 16);
  stream_gemm_range(&j->s, STREAM_POP_PREV, 0, 0, 16);
  stream_gemm_range(&j->s, STREAM_PUSH_NEXT, 0, 0, 16);
  stream_store(&j->s, STREAM_POP_PREV, 0, 1, 0, 16);
  stream_finish(&j->s, 0);
  assert_null(j->s.error);
}

static void fsim_reference(struct dut *d, struct gemm_job *j, uint8_t *out,
                           struct fsim_result *res) {
  struct fsim *f = fsim_create(d->cfg);
  uint8_t *in = malloc(j->in_size);
  memcpy(in, host(d, j->in_bus), j->in_size);
  memset(out, 0, j->out_size);
  struct fsim_job job = {.insns = j->s.bytes, .insn_count = j->s.count};
  job.seg[0] = (struct fsim_segment){in, j->in_size};
  job.seg[1] = (struct fsim_segment){out, j->out_size};
  fsim_run(f, &job, res);
  fsim_destroy(f);
  free(in);
}

static void check_gemm_job(struct dut *d, struct gemm_job *j) {
  struct loom_job_result res;
  struct fsim_result fres;
  uint8_t *want = malloc(j->out_size);
  run_job(d, &j->s, j->seg, &res);
  fsim_reference(d, j, want, &fres);
  assert_int_equal(res.error, LOOM_ERR_NONE);
  assert_int_equal(fres.error, LOOM_ERR_NONE);
  assert_memory_equal(host(d, j->out_bus), want, j->out_size);
  assert_int_equal(res.counters[LOOM_CNT_GEMM_OPS], fres.counters[LOOM_CNT_GEMM_OPS]);
  assert_true(res.counters[LOOM_CNT_CYCLES] > 0);
  free(want);
}

static void test_probe(void **state) {
  struct dut *d = *state;
  char msg[LOOM_MSG_MAX];
  uint32_t hash = 0;
  assert_int_equal(loom_hw_probe(&d->io, d->cfg->hash, &hash, msg), LOOM_OK);
  assert_int_equal(hash, tsim_config_hash());
  assert_int_equal(dut_read(d, LOOM_REG_VERSION) & 0xFFFFu, LOOM_ISA_VERSION);
  assert_true(dut_read(d, LOOM_REG_CTRL) & LOOM_CTRL_IDLE);
}

static void test_gemm_matches_fsim(void **state) {
  struct gemm_job j;
  build_gemm_job(*state, &j);
  check_gemm_job(*state, &j);
  stream_free(&j.s);
}

/* Starts a one-instruction FINISH job by hand with the given IER and GIE,
 * and lets it finish. */
static void finish_job(struct dut *d, uint32_t ier, uint32_t gie) {
  struct stream s;
  struct loom_hw_segment seg[8];
  memset(seg, 0, sizeof seg);
  stream_init(&s);
  stream_finish(&s, 0);
  uint64_t insns = place_job(d, &s, seg);
  assert_true(dut_read(d, LOOM_REG_CTRL) & LOOM_CTRL_IDLE);
  dut_write(d, LOOM_REG_INSN_ADDR_LO, (uint32_t)insns);
  dut_write(d, LOOM_REG_INSN_ADDR_HI, (uint32_t)(insns >> 32));
  dut_write(d, LOOM_REG_INSN_COUNT, 1);
  dut_write(d, LOOM_REG_ISR, 1);
  dut_write(d, LOOM_REG_IER, ier);
  dut_write(d, LOOM_REG_GIE, gie);
  dut_write(d, LOOM_REG_CTRL, LOOM_CTRL_START);
  tsim_step(d->t, 5000);
  stream_free(&s);
}

/* ap_ctrl_hs as Vitis HLS implements it: DONE is clear-on-read; ISR bit 0
 * latches done only while IER bit 0 is set; interrupt_o = GIE & (ISR & IER);
 * ISR is write-one-to-clear. */
static void test_interrupt_protocol(void **state) {
  struct dut *d = *state;
  finish_job(d, 0, 0);
  assert_false(tsim_interrupt(d->t));
  assert_int_equal(dut_read(d, LOOM_REG_ISR) & 1, 0);    /* IER = 0: not latched */
  uint32_t ctrl = dut_read(d, LOOM_REG_CTRL);
  assert_true(ctrl & LOOM_CTRL_DONE);
  assert_true(ctrl & LOOM_CTRL_IDLE);
  assert_false(dut_read(d, LOOM_REG_CTRL) & LOOM_CTRL_DONE); /* cleared by the read */
  finish_job(d, 1, 0);
  assert_false(tsim_interrupt(d->t));                    /* GIE = 0 */
  assert_int_equal(dut_read(d, LOOM_REG_ISR) & 1, 1);
  dut_write(d, LOOM_REG_GIE, 1);
  assert_true(tsim_interrupt(d->t));
  assert_true(dut_read(d, LOOM_REG_CTRL) & LOOM_CTRL_DONE);
  assert_true(tsim_interrupt(d->t));                     /* reading CTRL leaves ISR */
  dut_write(d, LOOM_REG_ISR, 1);
  assert_false(tsim_interrupt(d->t));
  assert_int_equal(dut_read(d, LOOM_REG_ISR) & 1, 0);
  assert_int_equal(dut_read(d, LOOM_REG_ERR_STATUS), LOOM_ERR_NONE);
  check_no_violations(d);
}

/* One LOAD that must be refused with `err` at instruction 1. */
static void expect_refused(struct dut *d, const struct loom_insn_mem *m, uint32_t seg_size,
                           int store, uint32_t err) {
  struct stream s;
  struct loom_job_result res;
  struct loom_hw_segment seg[8];
  memset(seg, 0, sizeof seg);
  uint64_t buf = dut_alloc(d, 8192);
  memset(host(d, buf), 0x5A, 8192);
  seg[2] = (struct loom_hw_segment){buf, seg_size};
  stream_init(&s);
  stream_nop(&s, 0, LOOM_Q_COMPUTE);
  if (store) stream_store_2d(&s, 0, m);
  else stream_load_2d(&s, 0, m);
  stream_finish(&s, 0);
  assert_null(s.error);
  run_job(d, &s, seg, &res);
  assert_int_equal(res.error, err);
  assert_int_equal(res.error_insn, 1);
  for (uint32_t i = 0; i < 8192; i++) assert_int_equal(host(d, buf)[i], 0x5A);
  stream_free(&s);
}

static void test_segment_violations(void **state) {
  struct dut *d = *state;
  uint32_t r = loom_hw_row_bytes(d->cfg, LOOM_BUF_INP, 0);
  struct loom_insn_mem m = {.buffer = LOOM_BUF_INP, .segment = 2, .y_size = 1, .x_size = 2, .x_stride = 2};
  m.dram_offset = 1000 / r; /* ends past a 1000-byte segment */
  expect_refused(d, &m, 1000, 0, LOOM_ERR_SEGMENT);
  m.segment = 5; /* unmapped */
  m.dram_offset = 0;
  expect_refused(d, &m, 1000, 0, LOOM_ERR_SEGMENT);
  struct loom_insn_mem st = {.buffer = LOOM_BUF_OUT, .segment = 2, .y_size = 3, .x_size = 4, .x_stride = 100};
  expect_refused(d, &st, 2 * 100 * loom_hw_row_bytes(d->cfg, LOOM_BUF_OUT, 0), 1, LOOM_ERR_SEGMENT);
  m.segment = 2;
  m.sram_base = (uint32_t)d->cfg->inp_rows - 1; /* SRAM overflow, checked first thing too */
  expect_refused(d, &m, 1000, 0, LOOM_ERR_SRAM);
}

/* SLVERR on reads, DECERR on writes: ERR_STATUS = BUS; then a clean job. */
static void test_axi_error_responses(void **state) {
  struct dut *d = *state;
  struct gemm_job j;
  struct loom_job_result res;
  build_gemm_job(d, &j);
  tsim_fault_add(d->t, j.in_bus + 64, 16, 2, 1, 0);
  run_job(d, &j.s, j.seg, &res);
  assert_int_equal(res.error, LOOM_ERR_BUS);
  tsim_fault_clear(d->t);
  tsim_fault_add(d->t, j.out_bus, 64, 3, 0, 1);
  run_job(d, &j.s, j.seg, &res);
  assert_int_equal(res.error, LOOM_ERR_BUS);
  tsim_fault_clear(d->t);
  check_gemm_job(d, &j);
  stream_free(&j.s);
}

/* A job that never ends through the backend: the timeout names the busy
 * module, job.c resets through SOFT_RESET, and the next job runs. */
static void test_hung_job_timeout(void **state) {
  char msg[LOOM_MSG_MAX];
  loom_device *dev;
  struct loom_job job;
  struct loom_job_result res;
  struct stream s;
  const struct dut *d = *state;
  char opts[64];
  snprintf(opts, sizeof opts, "config=%s,max_cycles=40000", d->cfg->name);
  assert_int_equal(loom_device_open_ops(&loom_backend_tsim, opts, &dev, msg), LOOM_OK);
  stream_init(&s);
  stream_load(&s, 0, LOOM_BUF_UOP, 0, 0, 0, 1);
  struct loom_insn_gemm g = {.reset = 1, .uop_begin = 0, .uop_end = 1, .iter_out = 4095, .iter_in = 4095};
  stream_gemm(&s, 0, &g);
  stream_finish(&s, 0);
  memset(&job, 0, sizeof job);
  job.insn_count = s.count;
  assert_int_equal(loom_buffer_alloc(dev, 16 * s.count, &job.insns), LOOM_OK);
  memcpy(loom_buffer_map(job.insns), s.bytes, 16 * s.count);
  assert_int_equal(loom_buffer_alloc(dev, 64, &job.segments[0]), LOOM_OK);
  assert_int_equal(loom_job_run(dev, &job, 0, &res), LOOM_E_TIMEOUT);
  assert_non_null(strstr(loom_device_error(dev), "compute busy"));
  assert_int_equal(res.error, LOOM_ERR_TIMEOUT);
  stream_free(&s);
  stream_init(&s);
  stream_finish(&s, 0);
  memcpy(loom_buffer_map(job.insns), s.bytes, 16);
  job.insn_count = 1;
  assert_int_equal(loom_job_run(dev, &job, 0, &res), LOOM_OK);
  loom_buffer_free(job.insns);
  loom_buffer_free(job.segments[0]);
  loom_device_close(dev);
  stream_free(&s);
}

/* SOFT_RESET while reads are in flight and DRAM is stalled: the RTL must
 * finish the bursts it started (no AXI violation), go idle, and run the
 * next job correctly. */
static void test_soft_reset_mid_job(void **state) {
  struct dut *d = *state;
  struct gemm_job j;
  char msg[LOOM_MSG_MAX];
  build_gemm_job(d, &j);
  uint64_t insns = place_job(d, &j.s, j.seg);
  assert_int_equal(loom_hw_start(&d->io, insns, j.s.count, j.seg, 1, msg), LOOM_OK);
  tsim_step(d->t, 60);
  tsim_fault_stall(d->t, 3000);
  assert_int_equal(loom_hw_reset(&d->io, msg), LOOM_OK);
  assert_true(dut_read(d, LOOM_REG_CTRL) & LOOM_CTRL_IDLE);
  check_no_violations(d);
  check_gemm_job(d, &j);
  assert_int_equal(loom_hw_reset(&d->io, msg), LOOM_OK); /* idle reset is harmless */
  check_gemm_job(d, &j);
  stream_free(&j.s);
}

/* A pop that no push ever matches: DEADLOCK, reported, not a hang. */
static void test_deadlock_reported(void **state) {
  struct stream s;
  struct loom_job_result res;
  struct loom_hw_segment seg[8];
  memset(seg, 0, sizeof seg);
  stream_init(&s);
  stream_nop(&s, STREAM_POP_PREV, LOOM_Q_COMPUTE);
  stream_finish(&s, 0);
  run_job(*state, &s, seg, &res);
  assert_int_equal(res.error, LOOM_ERR_DEADLOCK);
  stream_free(&s);
  stream_init(&s);
  stream_nop(&s, 0, LOOM_Q_COMPUTE);
  run_job(*state, &s, seg, &res);
  assert_int_equal(res.error, LOOM_ERR_NOFINISH);
  stream_free(&s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_probe),
      cmocka_unit_test(test_gemm_matches_fsim),
      cmocka_unit_test(test_interrupt_protocol),
      cmocka_unit_test(test_segment_violations),
      cmocka_unit_test(test_axi_error_responses),
      cmocka_unit_test(test_hung_job_timeout),
      cmocka_unit_test(test_soft_reset_mid_job),
      cmocka_unit_test(test_deadlock_reported),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
