/*
 * test_fsim_timing.c - fsim's timing model (sim/fsim/fsim_timing.c,
 * docs/fsim-timing.md) on cases whose timing follows from the RTL by hand.
 *
 * The agreement with the RTL itself is tests/timing/timing_agree.c (tsim);
 * here, without tsim:
 *  - off by default: the timed counters stay 0, and turning the model on
 *    changes no result and no exact counter (a random job and a GEMM);
 *  - GEMM issues one micro-op per cycle; ALU one per cycle with an
 *    immediate, one per two with a vector operand, and a chain on one row
 *    waits out the 8-cycle write-back;
 *  - a long contiguous load moves one bus beat per cycle; small strided
 *    rows are bound by the outstanding-read limit and the DRAM latency;
 *  - the timeline: sorted, well-formed, one slice per instruction, token
 *    waits where a module waits; set_trace needs timing=1; a failing job
 *    has neither estimates nor a timeline.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "loom/loom.h"
#include "randstream.h"
#include "sim/fsim/fsim.h"
#include "stream.h"

/* ---- running a stream ---- */

struct rig {
  const struct loom_hw_config *cfg;
  struct fsim *sim;
  struct fsim_job job;
  struct fsim_result res;
};

static void rig_init(struct rig *r, int timing) {
  memset(r, 0, sizeof *r);
  r->cfg = loom_hw_config_by_name("default");
  r->sim = fsim_create(r->cfg);
  assert_non_null(r->sim);
  if (timing) assert_int_equal(fsim_set_timing(r->sim, 1), 0);
  for (int s = 0; s < 4; s++) {
    r->job.seg[s].size = 1u << 20;
    r->job.seg[s].data = calloc(1, r->job.seg[s].size);
    assert_non_null(r->job.seg[s].data);
  }
}

static void rig_free(struct rig *r) {
  for (int s = 0; s < 4; s++) free(r->job.seg[s].data);
  fsim_destroy(r->sim);
}

static uint64_t run(struct rig *r, struct stream *s) {
  assert_null(s->error);
  r->job.insns = s->bytes;
  r->job.insn_count = s->count;
  assert_int_equal(fsim_run(r->sim, &r->job, &r->res), LOOM_ERR_NONE);
  return r->res.counters[LOOM_CNT_CYCLES];
}

/* CYCLES of a job of a UOP load of `uops` micro-ops, then `body`. */
typedef void (*body_fn)(struct stream *s, uint32_t n);

static uint64_t cycles_of(body_fn body, uint32_t n) {
  struct rig r;
  struct stream s;
  rig_init(&r, 1);
  uint8_t *u = r.job.seg[2].data;
  for (uint32_t i = 0; i < 64; i++) {
    struct loom_uop op = {i, i, i};
    loom_uop_encode(&op, u + 4 * i);
  }
  stream_init(&s);
  body(&s, n);
  stream_finish(&s, 0);
  uint64_t c = run(&r, &s);
  stream_free(&s);
  rig_free(&r);
  return c;
}

/* ---- off by default, and functionally invisible ---- */

static void test_off_and_invisible(void **state) {
  (void)state;
  const struct loom_hw_config *cfg = loom_hw_config_by_name("default");
  struct randstream_knobs k;
  randstream_knobs_default(&k);
  for (uint64_t seed = 1; seed <= 20; seed++) {
    struct randstream rs;
    char msg[256];
    assert_int_equal(randstream_build(cfg, seed, &k, &rs, msg, sizeof msg), 0);
    struct fsim_result res[2];
    uint8_t *out[2][LOOM_NUM_SEGMENTS] = {{0}};
    for (int on = 0; on < 2; on++) {
      struct fsim *sim = fsim_create(cfg);
      assert_non_null(sim);
      if (on) assert_int_equal(fsim_set_timing(sim, 1), 0);
      struct fsim_job job = {.insns = rs.insns, .insn_count = rs.insn_count};
      for (int s = 0; s < LOOM_NUM_SEGMENTS; s++) {
        if (!rs.seg[s].size) continue;
        out[on][s] = malloc(rs.seg[s].size);
        memcpy(out[on][s], rs.seg[s].data, rs.seg[s].size);
        job.seg[s].data = out[on][s];
        job.seg[s].size = rs.seg[s].size;
      }
      assert_int_equal(fsim_run(sim, &job, &res[on]), LOOM_ERR_NONE);
      fsim_destroy(sim);
    }
    for (int c = 0; c < LOOM_CNT_COUNT; c++) {
      if (LOOM_COUNTER_EXACT_MASK >> c & 1u) assert_int_equal(res[0].counters[c], res[1].counters[c]);
      else assert_int_equal(res[0].counters[c], 0);
    }
    assert_true(res[1].counters[LOOM_CNT_CYCLES] > 0);
    assert_true(res[1].counters[LOOM_CNT_COMPUTE_BUSY] <= res[1].counters[LOOM_CNT_CYCLES]);
    for (int s = 0; s < LOOM_NUM_SEGMENTS; s++) {
      if (rs.seg[s].size) assert_memory_equal(out[0][s], out[1][s], rs.seg[s].size);
      free(out[0][s]), free(out[1][s]);
    }
    randstream_free(&rs);
  }
}

/* ---- the engines ---- */

static void gemm_body(struct stream *s, uint32_t n) {
  stream_load(s, 0, LOOM_BUF_UOP, 0, 2, 0, 64);
  struct loom_insn_gemm g = {.uop_begin = 0, .uop_end = 16, .iter_out = n, .iter_in = 1};
  stream_gemm(s, 0, &g);
}

static void alu_imm_body(struct stream *s, uint32_t n) {
  stream_load(s, 0, LOOM_BUF_UOP, 0, 2, 0, 64);
  struct loom_insn_alu a = {.alu_op = LOOM_ALU_ADD, .use_imm = 1, .imm = 3, .uop_begin = 0,
                            .uop_end = 16, .iter_out = n, .iter_in = 1, .dst_factor_out = 16};
  stream_alu(s, 0, &a);
}

static void alu_vec_body(struct stream *s, uint32_t n) {
  stream_load(s, 0, LOOM_BUF_UOP, 0, 2, 0, 64);
  struct loom_insn_alu a = {.alu_op = LOOM_ALU_ADD, .uop_begin = 0, .uop_end = 16, .iter_out = n,
                            .iter_in = 1, .dst_factor_out = 16, .src_factor_out = 16};
  stream_alu(s, 0, &a);
}

/* ALU EPI in its moving form (a vector operand): it reads only the source
 * row, so it runs at one micro-op per cycle (loom_alu.v). */
static void alu_epi_vec_body(struct stream *s, uint32_t n) {
  stream_load(s, 0, LOOM_BUF_UOP, 0, 2, 0, 64);
  struct loom_insn_alu a = {.alu_op = LOOM_ALU_EPI, .uop_begin = 0, .uop_end = 16, .iter_out = n,
                            .iter_in = 1, .dst_factor_out = 16, .src_factor_out = 16};
  stream_alu(s, 0, &a);
}

/* Every micro-op on ACC row 5: each waits for the one before to write. */
static void alu_chain_body(struct stream *s, uint32_t n) {
  stream_load(s, 0, LOOM_BUF_UOP, 0, 2, 0, 64);
  struct loom_insn_alu a = {.alu_op = LOOM_ALU_ADD, .use_imm = 1, .imm = 1, .uop_begin = 5,
                            .uop_end = 6, .iter_out = n, .iter_in = 1};
  stream_alu(s, 0, &a);
}

static void test_engines(void **state) {
  (void)state;
  /* n more iterations of a 16-micro-op body cost 16 n (GEMM, ALU imm),
   * 32 n (ALU vector: source and destination share the read port) */
  assert_int_equal(cycles_of(gemm_body, 64) - cycles_of(gemm_body, 32), 16 * 32);
  assert_int_equal(cycles_of(alu_imm_body, 64) - cycles_of(alu_imm_body, 32), 16 * 32);
  assert_int_equal(cycles_of(alu_vec_body, 64) - cycles_of(alu_vec_body, 32), 32 * 32);
  assert_int_equal(cycles_of(alu_epi_vec_body, 64) - cycles_of(alu_epi_vec_body, 32), 16 * 32);
  /* a chain on one row: accepted 9 cycles apart (loom_alu.v, Lat = 8) */
  assert_int_equal(cycles_of(alu_chain_body, 200) - cycles_of(alu_chain_body, 100), 9 * 100);
}

/* ---- DMA ---- */

static void wgt_body(struct stream *s, uint32_t n) { stream_load(s, 0, LOOM_BUF_WGT, 0, 1, 0, n); }

/* n INP rows of 2 beats, each its own burst (stride 4 rows). */
static void inp_strided_body(struct stream *s, uint32_t n) {
  struct loom_insn_mem m = {.buffer = LOOM_BUF_INP, .segment = 0, .y_size = n, .x_size = 1,
                            .x_stride = 4};
  stream_load_2d(s, 0, &m);
}

static void test_dma(void **state) {
  (void)state;
  /* default: 256-byte WGT rows, 32 beats of 8 bytes, one per cycle */
  assert_int_equal(cycles_of(wgt_body, 512) - cycles_of(wgt_body, 256), 256 * 32);
  /* 8 bursts in flight, each answered >= 32 cycles after its address: 8
   * two-beat rows per round trip, far below one beat per cycle */
  uint64_t d = cycles_of(inp_strided_body, 1024) - cycles_of(inp_strided_body, 512);
  assert_true(d >= 512 * 32 / 8);
  assert_true(d <= 512 * 40 / 8);
}

/* ---- the timeline ---- */

/* A load feeding compute through tokens, compute feeding store. */
static void pipeline(struct stream *s) {
  stream_load(s, 0, LOOM_BUF_UOP, 0, 2, 0, 64);
  for (int t = 0; t < 4; t++) {
    stream_load(s, STREAM_PUSH_NEXT | (t >= 1 ? STREAM_POP_NEXT : 0), LOOM_BUF_WGT, 0, 1, 0, 64);
    struct loom_insn_gemm g = {.uop_begin = 0, .uop_end = 16, .iter_out = 4, .iter_in = 1};
    stream_gemm(s, STREAM_POP_PREV | STREAM_PUSH_PREV | STREAM_PUSH_NEXT, &g);
    stream_store(s, STREAM_POP_PREV, 0, 3, 0, 16);
  }
  stream_nop(s, STREAM_POP_NEXT, LOOM_Q_LOAD);
  stream_finish(s, 0);
}

static void test_trace(void **state) {
  (void)state;
  loom_device *dev;
  char msg[LOOM_MSG_MAX];
  assert_int_equal(loom_device_open("fsim", "config=default", &dev, msg), LOOM_OK);
  assert_int_equal(loom_device_set_trace(dev, 1), LOOM_E_UNSUPPORTED);
  loom_device_close(dev);
  assert_int_equal(loom_device_open("fsim", "config=default,timing=2", &dev, msg), LOOM_E_INVALID);
  assert_int_equal(loom_device_open("fsim", "config=default,timing=1", &dev, msg), LOOM_OK);
  assert_int_equal(loom_device_set_trace(dev, 1), LOOM_OK);

  struct stream s;
  stream_init(&s);
  pipeline(&s);
  assert_null(s.error);
  struct loom_job job = {.insn_count = s.count};
  assert_int_equal(loom_buffer_alloc(dev, 16u * s.count, &job.insns), LOOM_OK);
  memcpy(loom_buffer_map(job.insns), s.bytes, 16u * s.count);
  for (int i = 0; i < 4; i++) assert_int_equal(loom_buffer_alloc(dev, 1u << 16, &job.segments[i]), LOOM_OK);
  struct loom_job_result res;
  assert_int_equal(loom_job_run(dev, &job, 0, &res), LOOM_OK);

  size_t n;
  const struct loom_trace_event *e = loom_device_trace(dev, &n);
  assert_non_null(e);
  uint32_t insn_slices[LOOM_MOD_COUNT] = {0}, token_slices = 0;
  for (size_t i = 0; i < n; i++) {
    assert_true(e[i].end > e[i].begin);
    assert_true(e[i].end <= res.counters[LOOM_CNT_CYCLES]);
    assert_true(e[i].insn < s.count);
    assert_true(e[i].module < LOOM_MOD_COUNT && e[i].kind < LOOM_TRACE_KIND_COUNT);
    if (i) assert_true(e[i].begin >= e[i - 1].begin);
    if (e[i].kind == LOOM_TRACE_INSN) insn_slices[e[i].module]++;
    if (e[i].kind == LOOM_TRACE_TOKEN_WAIT) token_slices++;
  }
  /* every instruction but FINISH is one slice of its module; fetch has one per instruction */
  assert_int_equal(insn_slices[LOOM_MOD_FETCH], s.count);
  assert_int_equal(insn_slices[LOOM_MOD_LOAD], res.counters[LOOM_CNT_INSN_LOAD]);
  assert_int_equal(insn_slices[LOOM_MOD_COMPUTE] + 1, res.counters[LOOM_CNT_INSN_COMPUTE]);
  assert_int_equal(insn_slices[LOOM_MOD_STORE], res.counters[LOOM_CNT_INSN_STORE]);
  assert_true(token_slices > 0); /* the stores wait for their GEMMs at least */
  assert_true(res.counters[LOOM_CNT_STORE_TOKEN_STALL] > 0);

  /* a failing job: no estimate, no timeline */
  struct stream bad;
  stream_init(&bad);
  stream_load(&bad, 0, LOOM_BUF_WGT, 0, 1, 1u << 20, 4); /* past the segment */
  stream_finish(&bad, 0);
  memcpy(loom_buffer_map(job.insns), bad.bytes, 16u * bad.count);
  job.insn_count = bad.count;
  assert_int_equal(loom_job_run(dev, &job, 0, &res), LOOM_E_JOB);
  assert_int_equal(res.error, LOOM_ERR_SEGMENT);
  assert_int_equal(res.counters[LOOM_CNT_CYCLES], 0);
  loom_device_trace(dev, &n);
  assert_int_equal(n, 0);

  stream_free(&bad);
  stream_free(&s);
  loom_buffer_free(job.insns);
  for (int i = 0; i < 4; i++) loom_buffer_free(job.segments[i]);
  loom_device_close(dev);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_off_and_invisible),
      cmocka_unit_test(test_engines),
      cmocka_unit_test(test_dma),
      cmocka_unit_test(test_trace),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
