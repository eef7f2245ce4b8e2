/*
 * test_fsim_v2.c - the ISA version 2 operations of fsim against ref_v2.c:
 * GEMM first/last/dw with the epilogue, ALU EPI, LOAD PAR/LUT, LOAD INP
 * from OUT and LOAD WGT with wgt_transpose (docs/isa.md).
 *
 * Golden-model tests in the style of test_fsim_ops.c: the SRAM is filled
 * with random data (edge values mixed in) directly through fsim_sram(), the
 * same state is copied into a struct ref_machine, one instruction runs on
 * both, and every row of ACC, OUT and INP must agree, as must the error
 * code and the exact counters.  The epilogue's corners (rounding ties,
 * clamps, the bias wrap, the table's first and last entries) are also
 * checked against hand-computed numbers, which keeps the reference honest.
 * Every test runs on the tiny and the default configuration.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "loom/hwconfig.h"
#include "ref_ops.h"
#include "ref_v2.h"
#include "sim/fsim/fsim.h"
#include "stream.h"

static const char *const configs[] = {"tiny", "default"};
#define NCONFIGS (sizeof configs / sizeof configs[0])

struct rig {
  const struct loom_hw_config *cfg;
  struct fsim *sim;
  struct ref_machine ref;
  struct stream s;
  struct fsim_job job;
  struct fsim_result res;
  uint64_t rng;
  uint32_t lanes;
};

static uint32_t rnd(struct rig *r) {
  r->rng = r->rng * 6364136223846793005ull + 1442695040888963407ull;
  return (uint32_t)(r->rng >> 32);
}

static int32_t rnd_in(struct rig *r, int32_t lo, int32_t hi) {
  return (int32_t)((int64_t)lo + (int64_t)(rnd(r) % (uint32_t)((int64_t)hi - lo + 1)));
}

static int32_t rnd_edge32(struct rig *r) {
  static const int32_t edges[] = {0, 1, -1, 127, 128, -128, -129, 32767, -32768, INT32_MAX, INT32_MIN,
                                  INT32_MAX - 1, INT32_MIN + 1, 1 << 30, -(1 << 30)};
  switch (rnd(r) % 4) {
  case 0: return edges[rnd(r) % (sizeof edges / sizeof edges[0])];
  case 1: return rnd_in(r, -300, 300);
  case 2: return rnd_in(r, -(1 << 20), 1 << 20);
  default: return (int32_t)rnd(r);
  }
}

static void *sram(struct rig *r, int buffer, size_t *bytes) {
  void *p = fsim_sram(r->sim, buffer, bytes);
  assert_non_null(p);
  return p;
}

/* Random SRAM contents in fsim, copied into the reference. */
static void randomize(struct rig *r) {
  size_t n;
  int8_t *inp = sram(r, LOOM_BUF_INP, &n);
  for (size_t i = 0; i < n; i++) inp[i] = (int8_t)rnd(r);
  memcpy(r->ref.inp, inp, n);
  int8_t *wgt = sram(r, LOOM_BUF_WGT, &n);
  for (size_t i = 0; i < n; i++) wgt[i] = rnd(r) % 8 ? (int8_t)rnd(r) : (rnd(r) % 2 ? 127 : -128);
  memcpy(r->ref.wgt, wgt, n);
  int32_t *acc = sram(r, LOOM_BUF_ACC, &n);
  for (size_t i = 0; i < n / 4; i++) acc[i] = rnd_edge32(r);
  memcpy(r->ref.acc, acc, n);
  int8_t *out = sram(r, LOOM_BUF_OUT, &n);
  for (size_t i = 0; i < n; i++) out[i] = (int8_t)rnd(r);
  memcpy(r->ref.out, out, n);
  int32_t *par = sram(r, LOOM_BUF_PAR, &n);
  for (size_t i = 0; i < n / 4; i++) {
    int mult = (i / r->lanes) % 2;
    par[i] = mult && rnd(r) % 4 ? rnd_in(r, 1 << 30, INT32_MAX) : rnd_edge32(r);
  }
  memcpy(r->ref.par, par, n);
  uint8_t *lut = sram(r, LOOM_BUF_LUT, &n);
  for (size_t i = 0; i < n; i++) lut[i] = (uint8_t)rnd(r);
  memcpy(r->ref.lut, lut, n);
}

static struct rig *rig_new(const char *config) {
  struct rig *r = calloc(1, sizeof *r);
  assert_non_null(r);
  r->cfg = loom_hw_config_by_name(config);
  assert_non_null(r->cfg);
  r->sim = fsim_create(r->cfg);
  assert_non_null(r->sim);
  ref_machine_init(&r->ref, r->cfg);
  stream_init(&r->s);
  r->rng = 0xC0FFEE;
  r->lanes = (uint32_t)(r->cfg->batch * r->cfg->block_out);
  return r;
}

static void rig_free(struct rig *r) {
  stream_free(&r->s);
  ref_machine_free(&r->ref);
  fsim_destroy(r->sim);
  free(r);
}

/* Micro-ops straight into the UOP buffer (and the reference). */
static void put_uops(struct rig *r, const struct loom_uop *u, uint32_t n) {
  uint8_t *p = sram(r, LOOM_BUF_UOP, NULL);
  for (uint32_t k = 0; k < n; k++) {
    assert_int_equal(loom_uop_encode(&u[k], p + 4 * k), 0);
    r->ref.uops[k] = u[k];
  }
}

/* Runs the stream (QCFG and GCFG of the reference first, then in[0..n)). */
static uint32_t run_n(struct rig *r, const struct loom_insn *in, uint32_t n) {
  struct loom_insn q = stream_insn(LOOM_OP_QCFG, 0), gc = stream_insn(LOOM_OP_GCFG, 0);
  q.qcfg = r->ref.q, gc.gcfg = r->ref.gc;
  stream_emit(&r->s, &q);
  stream_emit(&r->s, &gc);
  for (uint32_t i = 0; i < n; i++) stream_emit(&r->s, &in[i]);
  stream_finish(&r->s, 0);
  if (r->s.error) fail_msg("field %s does not encode", r->s.error);
  r->job.insns = r->s.bytes, r->job.insn_count = r->s.count;
  uint32_t err = fsim_run(r->sim, &r->job, &r->res);
  stream_free(&r->s);
  stream_init(&r->s);
  return err;
}

static uint32_t run(struct rig *r, const struct loom_insn *in) { return run_n(r, in, 1); }

static void compare(struct rig *r, const char *what) {
  size_t n;
  const int32_t *acc = sram(r, LOOM_BUF_ACC, &n);
  for (size_t i = 0; i < n / 4; i++)
    if (acc[i] != r->ref.acc[i]) fail_msg("%s %s: ACC[%zu][%zu] = %d, want %d", r->cfg->name, what,
                                          i / r->lanes, i % r->lanes, acc[i], r->ref.acc[i]);
  const int8_t *out = sram(r, LOOM_BUF_OUT, &n);
  for (size_t i = 0; i < n; i++)
    if (out[i] != r->ref.out[i]) fail_msg("%s %s: OUT[%zu][%zu] = %d, want %d", r->cfg->name, what,
                                          i / r->lanes, i % r->lanes, out[i], r->ref.out[i]);
  const int8_t *inp = sram(r, LOOM_BUF_INP, &n);
  for (size_t i = 0; i < n; i++)
    if (inp[i] != r->ref.inp[i]) fail_msg("%s %s: INP byte %zu = %d, want %d", r->cfg->name, what, i,
                                          inp[i], r->ref.inp[i]);
}

/* ---- the epilogue at its corners, by hand ---- */

static void test_epilogue_corners(void **state) {
  uint8_t lut[LOOM_LUT_ENTRIES];
  for (int i = 0; i < LOOM_LUT_ENTRIES; i++) lut[i] = (uint8_t)(255 - i); /* LUT[i] = ~i */
  struct loom_insn_qcfg q = {.shift = 1, .zero_point = 0, .clamp_lo = -128, .clamp_hi = 127};
  /* (v + bias) * m / 2: ties up, or to even */
  assert_int_equal(ref_epilogue(2, 1, 1, &q, lut), 2);  /* 3 / 2 = 1.5 -> 2 */
  assert_int_equal(ref_epilogue(-4, 1, 1, &q, lut), -1); /* -1.5 -> -1 (half up) */
  q.round_even = 1;
  assert_int_equal(ref_epilogue(-4, 1, 1, &q, lut), -2); /* -1.5 -> -2 (even) */
  assert_int_equal(ref_epilogue(4, 1, 1, &q, lut), 2);   /* 2.5 -> 2 (even) */
  q.round_even = 0;
  /* the bias wraps modulo 2^32 before the multiply */
  assert_int_equal(ref_epilogue(INT32_MAX, 1, 1, &q, lut), -128); /* INT32_MIN / 2, clamped */
  q.shift = 0;
  assert_int_equal(ref_epilogue(100, 50, 1, &q, lut), 127);   /* saturates to the clamp */
  q.clamp_lo = 0, q.clamp_hi = 6;                               /* ReLU6 codes */
  assert_int_equal(ref_epilogue(-5, 0, 1, &q, lut), 0);
  q.clamp_lo = 10, q.clamp_hi = -10;                            /* lo > hi: hi */
  assert_int_equal(ref_epilogue(0, 0, 1, &q, lut), -10);
  /* the table: index is the int8 pattern of q, the entry sign-extended */
  q.clamp_lo = -128, q.clamp_hi = 127, q.act = 1;
  assert_int_equal(ref_epilogue(0, 0, 1, &q, lut), -1);     /* LUT[0] = 255 = -1 */
  assert_int_equal(ref_epilogue(-1, 0, 1, &q, lut), 0);     /* LUT[255] = 0 */
  assert_int_equal(ref_epilogue(127, 0, 1, &q, lut), -128); /* LUT[127] = 128 = -128 */
  assert_int_equal(ref_epilogue(-128, 0, 1, &q, lut), 127); /* LUT[128] = 127 */
  assert_int_equal(ref_epilogue(1000, 0, 1, &q, lut), -128); /* clamped to 127 first */
  q.zero_point = -3;
  assert_int_equal(ref_epilogue(3, 0, 1, &q, lut), -1); /* 3 - 3 = 0: LUT[0] */
}

/* The same corners through fsim: GEMM last and ALU EPI against the numbers. */
static void test_epilogue_corners_on_fsim(void **state) {
  for (size_t c = 0; c < NCONFIGS; c++) {
    struct rig *r = rig_new(configs[c]);
    randomize(r);
    uint8_t *lut = sram(r, LOOM_BUF_LUT, NULL);
    for (int i = 0; i < LOOM_LUT_ENTRIES; i++) lut[i] = r->ref.lut[i] = (uint8_t)(255 - i);
    int32_t *acc = sram(r, LOOM_BUF_ACC, NULL), *par = sram(r, LOOM_BUF_PAR, NULL);
    static const int32_t v[] = {0, -1, 127, -128, 1000, -4, INT32_MAX, 3};
    for (uint32_t l = 0; l < r->lanes; l++) {
      acc[l] = r->ref.acc[l] = v[l % 8];
      par[l] = r->ref.par[l] = l % 8 == 6 ? 1 : 0;      /* bias row 0 */
      par[r->lanes + l] = r->ref.par[r->lanes + l] = 1; /* multipliers */
    }
    r->ref.q = (struct loom_insn_qcfg){.shift = 0, .clamp_lo = -128, .clamp_hi = 127, .act = 1};
    struct loom_uop u = {0, 0, 0};
    put_uops(r, &u, 1);
    struct loom_insn in = stream_insn(LOOM_OP_ALU, 0);
    in.alu = (struct loom_insn_alu){.alu_op = LOOM_ALU_EPI, .use_imm = 1, .uop_begin = 0, .uop_end = 1,
                                    .iter_out = 1, .iter_in = 1};
    assert_int_equal(run(r, &in), LOOM_ERR_NONE);
    static const int32_t want[] = {-1, 0, -128, 127, -128, 3, 127, -4}; /* ~clamp(v + bias) */
    for (uint32_t l = 0; l < r->lanes; l++) {
      assert_int_equal(acc[l], want[l % 8]);
      assert_int_equal(((int8_t *)sram(r, LOOM_BUF_OUT, NULL))[l], want[l % 8]);
    }
    assert_int_equal(r->res.counters[LOOM_CNT_ALU_OPS], 1);
    rig_free(r);
  }
}

/* ---- random instructions against the reference ---- */

static struct loom_insn_qcfg random_qcfg(struct rig *r) {
  struct loom_insn_qcfg q = {
      .multiplier = rnd(r) % 2 ? rnd_in(r, 1 << 30, INT32_MAX) : rnd_edge32(r),
      .shift = rnd(r) % 3 ? (uint32_t)rnd_in(r, 28, 45) : rnd(r) % 64,
      .zero_point = rnd_in(r, -128, 127),
      .clamp_lo = rnd(r) % 2 ? -128 : rnd_in(r, -128, 127),
      .clamp_hi = rnd(r) % 2 ? 127 : rnd_in(r, -128, 127),
      .round_even = rnd(r) % 2,
      .bias = rnd_edge32(r),
      .par_src = rnd(r) % 4 == 0,
      .act = rnd(r) % 2,
      .par_base = rnd(r) % 24,
  };
  return q;
}

static struct loom_insn_gcfg random_gcfg(struct rig *r) {
  struct loom_insn_gcfg gc = {
      .period = rnd(r) % 5 ? (uint32_t)rnd_in(r, 1, 9) : rnd(r) % 64,
      .dw_kh = (uint32_t)rnd_in(r, 1, 5),
      .dw_kw = (uint32_t)rnd_in(r, 1, 5),
      .dw_row = (uint32_t)rnd_in(r, 0, 20),
      .dw_col = (uint32_t)rnd_in(r, 0, 3),
  };
  if (rnd(r) % 10 == 0) gc.dw_kh = rnd(r) % 16, gc.dw_kw = rnd(r) % 16; /* up to the truncation */
  return gc;
}

/* A GEMM with random flags whose indices mostly stay in range (rarely
 * one runs past INP, WGT, ACC or PAR: the error must match too). */
static struct loom_insn random_gemm(struct rig *r, struct loom_uop *u, uint32_t *n) {
  struct loom_insn in = stream_insn(LOOM_OP_GEMM, 0);
  struct loom_insn_gemm *g = &in.gemm;
  g->first = rnd(r) % 2, g->last = rnd(r) % 2, g->dw = rnd(r) % 2;
  g->reset = !g->first && !g->last && !g->dw && rnd(r) % 8 == 0;
  *n = (uint32_t)rnd_in(r, 1, 12);
  g->uop_begin = 0, g->uop_end = *n;
  g->iter_out = (uint32_t)rnd_in(r, 1, 3), g->iter_in = (uint32_t)rnd_in(r, 1, 4);
  g->acc_factor_out = rnd(r) % 16, g->acc_factor_in = rnd(r) % 16;
  g->inp_factor_out = rnd(r) % 16, g->inp_factor_in = rnd(r) % 16;
  g->wgt_factor_out = rnd(r) % 8, g->wgt_factor_in = rnd(r) % 8;
  int edge = rnd(r) % 20 == 0;
  for (uint32_t k = 0; k < *n; k++) {
    u[k].acc = edge ? r->ref.acc_rows - 1 - rnd(r) % 4 : rnd(r) % (r->ref.acc_rows - 64);
    u[k].inp = edge ? r->ref.inp_rows - 1 - rnd(r) % 4 : rnd(r) % (r->ref.inp_rows - 128);
    u[k].wgt = rnd(r) % (r->ref.wgt_rows - 32);
  }
  return in;
}

static void test_gemm_v2_matches_ref(void **state) {
  for (size_t c = 0; c < NCONFIGS; c++) {
    struct rig *r = rig_new(configs[c]);
    uint64_t fails = 0;
    for (int t = 0; t < 400; t++) {
      randomize(r);
      r->ref.q = random_qcfg(r);
      r->ref.gc = random_gcfg(r);
      struct loom_uop u[12];
      uint32_t n;
      struct loom_insn in = random_gemm(r, u, &n);
      put_uops(r, u, n);
      uint64_t done;
      uint32_t want = ref_gemm(&r->ref, &in.gemm, &done);
      uint32_t got = run(r, &in);
      char what[96];
      snprintf(what, sizeof what, "case %d (first %u last %u dw %u reset %u)", t, in.gemm.first, in.gemm.last,
               in.gemm.dw, in.gemm.reset);
      if (got != want) fail_msg("%s %s: error %u, want %u (%s)", r->cfg->name, what, got, want, r->res.message);
      compare(r, what);
      if (!got) assert_int_equal(r->res.counters[LOOM_CNT_GEMM_OPS], in.gemm.reset ? 0 : done);
      fails += got != 0;
    }
    assert_true(fails > 0 && fails < 100); /* the errors were reached, and mostly not */
    rig_free(r);
  }
}

static void test_alu_epi_matches_ref(void **state) {
  for (size_t c = 0; c < NCONFIGS; c++) {
    struct rig *r = rig_new(configs[c]);
    for (int t = 0; t < 200; t++) {
      randomize(r);
      r->ref.q = random_qcfg(r);
      if (t % 10 == 0) r->ref.q.par_src = 0, r->ref.q.par_base = LOOM_PAR_ROWS - 1; /* j = 1 is past PAR */
      struct loom_uop u[6];
      uint32_t n = (uint32_t)rnd_in(r, 1, 6);
      for (uint32_t k = 0; k < n; k++)
        u[k] = (struct loom_uop){rnd(r) % (r->ref.acc_rows - 40), rnd(r) % (r->ref.acc_rows - 40), 0};
      put_uops(r, u, n);
      struct loom_insn in = stream_insn(LOOM_OP_ALU, 0);
      in.alu = (struct loom_insn_alu){.alu_op = LOOM_ALU_EPI, .use_imm = rnd(r) % 2, .imm = rnd_in(r, -9, 9),
                                      .uop_begin = 0, .uop_end = n, .iter_out = (uint32_t)rnd_in(r, 1, 3),
                                      .iter_in = (uint32_t)rnd_in(r, 1, 3), .dst_factor_out = rnd(r) % 8,
                                      .dst_factor_in = rnd(r) % 8, .src_factor_out = rnd(r) % 8,
                                      .src_factor_in = t % 25 == 0 ? 2047 : rnd(r) % 8}; /* rarely past ACC */
      uint64_t done;
      uint32_t want = ref_alu_epi(&r->ref, &in.alu, &done), got = run(r, &in);
      if (got != want) fail_msg("%s case %d: error %u, want %u (%s)", r->cfg->name, t, got, want, r->res.message);
      if (!got) assert_int_equal(r->res.counters[LOOM_CNT_ALU_OPS], done);
      compare(r, "EPI");
    }
    rig_free(r);
  }
}

static void test_load_from_out_matches_ref(void **state) {
  for (size_t c = 0; c < NCONFIGS; c++) {
    struct rig *r = rig_new(configs[c]);
    for (int t = 0; t < 200; t++) {
      randomize(r);
      struct loom_insn in = stream_insn(LOOM_OP_LOAD, 0);
      struct loom_insn_mem *m = &in.mem;
      m->buffer = LOOM_BUF_INP, m->src_out = 1;
      m->y_size = (uint32_t)rnd_in(r, 0, 6), m->x_size = (uint32_t)rnd_in(r, 0, 9);
      m->x_stride = (uint32_t)rnd_in(r, 0, 12);
      if (rnd(r) % 2) {
        m->y_pad_top = rnd(r) % 3, m->y_pad_bottom = rnd(r) % 3;
        m->x_pad_left = rnd(r) % 3, m->x_pad_right = rnd(r) % 3;
        m->pad_value = rnd_in(r, -128, 127);
      }
      m->dram_offset = t % 15 == 0 ? r->ref.acc_rows - rnd(r) % 8 : rnd(r) % (r->ref.acc_rows - 80);
      m->sram_base = t % 17 == 0 ? r->ref.inp_rows - rnd(r) % 8 : rnd(r) % (r->ref.inp_rows - 120);
      uint32_t want = ref_load_src_out(&r->ref, m), got = run(r, &in);
      if (got != want) fail_msg("%s case %d: error %u, want %u (%s)", r->cfg->name, t, got, want, r->res.message);
      compare(r, "src_out");
      if (!got) assert_int_equal(r->res.counters[LOOM_CNT_BYTES_RD_INP], 0); /* no DRAM byte moved */
    }
    rig_free(r);
  }
}

/* LOAD WGT of `rows` rows at DRAM row `off` of segment 3 into `base`, with
 * wgt_transpose when `tr`, pushing L2C for the GEMM after it. */
static struct loom_insn wgt_load(uint32_t base, uint32_t off, uint32_t y, uint32_t x, uint32_t stride,
                                 uint32_t tr) {
  struct loom_insn in = stream_insn(LOOM_OP_LOAD, STREAM_PUSH_NEXT);
  in.mem = (struct loom_insn_mem){.buffer = LOOM_BUF_WGT, .sram_base = base, .segment = 3, .dram_offset = off,
                                  .y_size = y, .x_size = x, .x_stride = stride, .wgt_transpose = tr};
  return in;
}

static void compare_wgt(struct rig *r, const char *what) {
  size_t n;
  const int8_t *wgt = sram(r, LOOM_BUF_WGT, &n);
  for (size_t i = 0; i < n; i++)
    if (wgt[i] != r->ref.wgt[i])
      fail_msg("%s %s: WGT byte %zu = %d, want %d", r->cfg->name, what, i, wgt[i], r->ref.wgt[i]);
}

/* P x V with V stored as WGT rows [token][channel]: a LOAD WGT with
 * wgt_transpose makes the rows [channel][token], so one dense micro-op
 * computes ACC[b][o] = sum_k INP[b][k] * D[k][o] of the DRAM block D (by
 * hand, `first` with period 1); then random 2-D loads, transposed
 * or not (the control), each followed by a random GEMM reading the loaded
 * rows, against ref_load_wgt and ref_gemm: WGT, ACC, OUT, the error and
 * BYTES_RD_WGT. */
static void test_gemm_reads_transposed_wgt_load(void **state) {
  for (size_t c = 0; c < NCONFIGS; c++) {
    struct rig *r = rig_new(configs[c]);
    uint32_t b = (uint32_t)r->cfg->block_in, rb = loom_hw_row_bytes(r->cfg, LOOM_BUF_WGT, 0);
    assert_int_equal(rb, b * b);
    const uint32_t seg_rows = 48;
    r->job.seg[3].size = (uint64_t)seg_rows * rb;
    r->job.seg[3].data = malloc(r->job.seg[3].size);
    assert_non_null(r->job.seg[3].data);
    const uint8_t *d = r->job.seg[3].data;

    randomize(r);
    for (uint64_t i = 0; i < r->job.seg[3].size; i++) r->job.seg[3].data[i] = (uint8_t)rnd(r);
    r->ref.q = (struct loom_insn_qcfg){.clamp_lo = -128, .clamp_hi = 127};
    r->ref.gc = (struct loom_insn_gcfg){.period = 1};
    struct loom_uop u0 = {5, 7, 9};
    put_uops(r, &u0, 1);
    struct loom_insn hand[2] = {wgt_load(9, 2, 1, 1, 1, 1), stream_insn(LOOM_OP_GEMM, STREAM_POP_PREV)};
    hand[1].gemm = (struct loom_insn_gemm){.first = 1, .uop_begin = 0, .uop_end = 1, .iter_out = 1, .iter_in = 1};
    assert_int_equal(run_n(r, hand, 2), LOOM_ERR_NONE);
    const int32_t *acc = sram(r, LOOM_BUF_ACC, NULL);
    const int8_t *inp = sram(r, LOOM_BUF_INP, NULL);
    for (uint32_t bb = 0; bb < (uint32_t)r->cfg->batch; bb++)
      for (uint32_t o = 0; o < b; o++) {
        int32_t want = 0;
        for (uint32_t k = 0; k < b; k++)
          want += (int32_t)inp[(7 * r->cfg->batch + bb) * b + k] * (int8_t)d[2 * rb + k * b + o];
        assert_int_equal(acc[(5 * r->cfg->batch + bb) * b + o], want);
      }

    for (int t = 0; t < 200; t++) {
      randomize(r);
      for (uint64_t i = 0; i < r->job.seg[3].size; i++) r->job.seg[3].data[i] = (uint8_t)rnd(r);
      r->ref.q = random_qcfg(r);
      r->ref.gc = random_gcfg(r);
      uint32_t y = (uint32_t)rnd_in(r, 1, 3), x = (uint32_t)rnd_in(r, 1, 4);
      uint32_t stride = (uint32_t)rnd_in(r, 0, 6), span = (y - 1) * stride + x;
      uint32_t base = rnd(r) % (r->ref.wgt_rows - 16), rows = y * x;
      struct loom_insn in[2];
      in[0] = wgt_load(base, rnd(r) % (seg_rows - span + 1), y, x, stride, t % 4 != 3);
      struct loom_uop u[12];
      uint32_t n;
      in[1] = random_gemm(r, u, &n);
      in[1].pop_prev = 1;
      in[1].gemm.wgt_factor_out = in[1].gemm.wgt_factor_in = 0;
      for (uint32_t k = 0; k < n; k++) u[k].wgt = base + rnd(r) % rows;
      put_uops(r, u, n);
      uint32_t want = ref_load_wgt(&r->ref, &in[0].mem, d, r->job.seg[3].size);
      assert_int_equal(want, LOOM_ERR_NONE);
      uint64_t done;
      want = ref_gemm(&r->ref, &in[1].gemm, &done);
      uint32_t got = run_n(r, in, 2);
      char what[64];
      snprintf(what, sizeof what, "case %d (wgt_transpose %u)", t, in[0].mem.wgt_transpose);
      if (got != want) fail_msg("%s %s: error %u, want %u (%s)", r->cfg->name, what, got, want, r->res.message);
      compare_wgt(r, what);
      compare(r, what);
      assert_int_equal(r->res.counters[LOOM_CNT_BYTES_RD_WGT], (uint64_t)rows * rb);
    }
    free(r->job.seg[3].data);
    r->job.seg[3].data = NULL;
    rig_free(r);
  }
}

/* LOAD PAR: biases then multipliers, little-endian; LOAD LUT: 256 bytes. */
static void test_par_and_lut_loads(void **state) {
  for (size_t c = 0; c < NCONFIGS; c++) {
    struct rig *r = rig_new(configs[c]);
    uint32_t rb = loom_hw_row_bytes(r->cfg, LOOM_BUF_PAR, 0);
    assert_int_equal(rb, 8 * r->lanes);
    r->job.seg[2].size = 3 * rb + LOOM_LUT_ENTRIES;
    r->job.seg[2].data = malloc(r->job.seg[2].size);
    for (uint64_t i = 0; i < r->job.seg[2].size; i++) r->job.seg[2].data[i] = (uint8_t)(i * 7 + 3);
    stream_load(&r->s, 0, LOOM_BUF_PAR, LOOM_PAR_ROWS - 3, 2, 0, 3);
    struct loom_insn lut = stream_insn(LOOM_OP_LOAD, 0);
    lut.mem = (struct loom_insn_mem){.buffer = LOOM_BUF_LUT, .segment = 2, .dram_offset = 0, .y_size = 1,
                                     .x_size = 1, .x_stride = 1};
    stream_emit(&r->s, &lut);
    stream_finish(&r->s, 0);
    r->job.insns = r->s.bytes, r->job.insn_count = r->s.count;
    /* the table's single row at offset 0: its 256 bytes overlap the PAR rows' (fine: reads) */
    assert_int_equal(fsim_run(r->sim, &r->job, &r->res), LOOM_ERR_NONE);
    const int32_t *par = sram(r, LOOM_BUF_PAR, NULL);
    const uint8_t *d = r->job.seg[2].data;
    for (uint32_t row = 0; row < 3; row++)
      for (uint32_t k = 0; k < 2 * r->lanes; k++) {
        const uint8_t *p = d + row * rb + 4 * k;
        int32_t v = (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
        assert_int_equal(par[(LOOM_PAR_ROWS - 3 + row) * 2 * r->lanes + k], v);
      }
    assert_memory_equal(sram(r, LOOM_BUF_LUT, NULL), d, LOOM_LUT_ENTRIES);
    assert_int_equal(r->res.counters[LOOM_CNT_BYTES_RD_ACC], 3 * rb + LOOM_LUT_ENTRIES);
    free(r->job.seg[2].data);
    r->job.seg[2].data = NULL;
    stream_free(&r->s);
    stream_init(&r->s);
    /* one row past PAR, and a second LUT row: SRAM, nothing written */
    r->job.seg[2].size = 4 * rb;
    r->job.seg[2].data = calloc(1, r->job.seg[2].size);
    stream_load(&r->s, 0, LOOM_BUF_PAR, LOOM_PAR_ROWS - 1, 2, 0, 2);
    stream_finish(&r->s, 0);
    r->job.insns = r->s.bytes, r->job.insn_count = r->s.count;
    assert_int_equal(fsim_run(r->sim, &r->job, &r->res), LOOM_ERR_SRAM);
    free(r->job.seg[2].data);
    r->job.seg[2].data = NULL;
    rig_free(r);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_epilogue_corners),
      cmocka_unit_test(test_epilogue_corners_on_fsim),
      cmocka_unit_test(test_gemm_v2_matches_ref),
      cmocka_unit_test(test_alu_epi_matches_ref),
      cmocka_unit_test(test_load_from_out_matches_ref),
      cmocka_unit_test(test_gemm_reads_transposed_wgt_load),
      cmocka_unit_test(test_par_and_lut_loads),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
