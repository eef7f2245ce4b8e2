/*
 * test_fsim_ops.c - fsim's LOAD, STORE and GEMM against ref_ops.
 *
 * Golden-model tests: each test builds a small stream with the stream
 * helpers, runs it on fsim (tests/support/fsimrig.c), reads SRAM back
 * through fsim_sram() (or DRAM for STORE) and compares every row of the
 * buffer, not only the ones the instruction should touch, with what
 * tests/support/ref_ops.c computes from the same inputs.  Data is random
 * (a fixed-seed generator, so failures reproduce) with edge values mixed
 * in.  Every test runs on the tiny and the default configuration.  The
 * ALU: test_fsim_alu.c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "filebytes.h"
#include "fsimrig.h"
#include "ref_ops.h"

/* ---- LOAD ---- */

/* A random 2-D transfer of `buffer` that fits its SRAM, padded if allowed. */
static struct loom_insn_mem random_transfer(struct rig *r, uint32_t buffer, int pad) {
  uint32_t rows = loom_hw_buffer_rows(r->cfg, (int)buffer);
  struct loom_insn_mem m;
  static const int32_t pads[] = {-128, 127, 0, -1};
  do {
    memset(&m, 0, sizeof m);
    m.buffer = buffer;
    m.y_size = (uint32_t)rig_rnd_in(r, 1, 4);
    m.x_size = (uint32_t)rig_rnd_in(r, 1, 5);
    m.x_stride = (uint32_t)rig_rnd_in(r, 0, 2 * (int32_t)m.x_size); /* overlap included */
    m.dram_offset = (uint32_t)rig_rnd_in(r, 0, 3);
    m.sram_base = (uint32_t)rig_rnd_in(r, 0, 40);
    if (pad) {
      m.y_pad_top = (uint32_t)rig_rnd_in(r, 0, 7);
      m.y_pad_bottom = (uint32_t)rig_rnd_in(r, 0, 7);
      m.x_pad_left = (uint32_t)rig_rnd_in(r, 0, 7);
      m.x_pad_right = (uint32_t)rig_rnd_in(r, 0, 7);
      m.pad_value = rig_rnd(r) % 2 ? pads[rig_rnd(r) % 4] : rig_rnd_in(r, -128, 127);
    }
  } while (m.sram_base + (m.y_pad_top + m.y_size + m.y_pad_bottom) *
                             (m.x_pad_left + m.x_size + m.x_pad_right) > rows);
  return m;
}

static uint64_t last_row(const struct loom_insn_mem *m) {
  return m->dram_offset + (uint64_t)(m->y_size - 1) * m->x_stride + m->x_size;
}

static uint32_t transfer_rows(const struct loom_insn_mem *m) {
  uint32_t h = m->y_pad_top + m->y_size + m->y_pad_bottom;
  return h * (m->x_pad_left + m->x_size + m->x_pad_right);
}

/* One random LOAD of an int8 buffer into SRAM prefilled with noise; the
 * whole buffer must equal the noise with ref_load_bytes' rows on top.  The
 * segment ends exactly at the transfer's last byte. */
static void check_random_byte_load(struct rig *r, uint32_t buffer, int pad) {
  struct loom_insn_mem m = random_transfer(r, buffer, pad);
  uint32_t rb = loom_hw_row_bytes(r->cfg, (int)buffer, 0);
  uint8_t *dram = rig_segment(r, 2, last_row(&m) * rb, 0);
  rig_fill_random(r, dram, last_row(&m) * rb);
  m.segment = 2;
  size_t n;
  uint8_t *buf = rig_sram(r, (int)buffer, &n);
  rig_fill_random(r, buf, n);
  uint8_t *want = malloc(n);
  memcpy(want, buf, n);
  ref_load_bytes(&m, dram, rb, want + (size_t)m.sram_base * rb);
  stream_load_2d(&r->s, 0, &m);
  stream_finish(&r->s, 0);
  rig_run_ok(r);
  assert_memory_equal(buf, want, n);
  int cnt = buffer == LOOM_BUF_INP ? LOOM_CNT_BYTES_RD_INP
            : buffer == LOOM_BUF_WGT ? LOOM_CNT_BYTES_RD_WGT : LOOM_CNT_BYTES_RD_UOP;
  assert_int_equal(r->res.counters[cnt], (uint64_t)m.y_size * m.x_size * rb);
  free(want);
}

static void test_load_inp_with_padding_matches_ref(void **state) {
  for (size_t c = 0; c < NCONFIGS; c++) {
    struct rig *r = rig_new(configs[c]);
    for (int t = 0; t < 60; t++) check_random_byte_load(r, LOOM_BUF_INP, 1);
    rig_free(r);
  }
}

static void test_load_wgt_and_uop_copy_2d_blocks(void **state) {
  for (size_t c = 0; c < NCONFIGS; c++) {
    struct rig *r = rig_new(configs[c]);
    for (int t = 0; t < 30; t++) {
      check_random_byte_load(r, LOOM_BUF_WGT, 0);
      check_random_byte_load(r, LOOM_BUF_UOP, 0);
    }
    rig_free(r);
  }
}

static void check_random_acc_load(struct rig *r, int src_int8) {
  struct loom_insn_mem m = random_transfer(r, LOOM_BUF_ACC, 1);
  m.src_int8 = (uint32_t)src_int8;
  m.segment = 5;
  uint32_t rb = loom_hw_row_bytes(r->cfg, LOOM_BUF_ACC, src_int8);
  uint8_t *dram = rig_segment(r, 5, last_row(&m) * rb, 0);
  for (uint64_t i = 0; i < last_row(&m) * rb / (src_int8 ? 1 : 4); i++)
    if (src_int8) dram[i] = (uint8_t)rig_rnd(r);
    else wr32(dram + 4 * i, (uint32_t)rig_rnd_edge32(r));
  size_t n;
  int32_t *acc = rig_sram(r, LOOM_BUF_ACC, &n);
  int32_t *want = malloc(n);
  memcpy(want, acc, n);
  ref_load_acc(&m, dram, r->lanes, want + (size_t)m.sram_base * r->lanes);
  stream_load_2d(&r->s, 0, &m);
  stream_finish(&r->s, 0);
  rig_run_ok(r);
  /* rows this load wrote, and only those, mirror into OUT */
  int8_t *out = rig_sram(r, LOOM_BUF_OUT, NULL);
  assert_memory_equal(acc, want, n);
  for (uint32_t i = 0; i < transfer_rows(&m) * r->lanes; i++) {
    size_t at = (size_t)m.sram_base * r->lanes + i;
    assert_int_equal(out[at], ref_sat8(want[at]));
  }
  assert_int_equal(r->res.counters[LOOM_CNT_BYTES_RD_ACC], (uint64_t)m.y_size * m.x_size * rb);
  free(want);
}

static void test_load_acc_int32_and_src_int8_with_padding_mirror_out(void **state) {
  for (size_t c = 0; c < NCONFIGS; c++) {
    struct rig *r = rig_new(configs[c]);
    for (int t = 0; t < 40; t++) check_random_acc_load(r, t % 2);
    rig_free(r);
  }
}

static void test_load_of_zero_size_moves_nothing_and_checks_nothing(void **state) {
  for (size_t c = 0; c < NCONFIGS; c++) {
    struct rig *r = rig_new(configs[c]);
    size_t n;
    uint8_t *inp = rig_sram(r, LOOM_BUF_INP, &n);
    memset(inp, 0x5A, n);
    /* unmapped segment 6, SRAM base far past the end: still a no-op */
    struct loom_insn_mem m = {.buffer = LOOM_BUF_INP, .sram_base = 65535, .segment = 6,
                              .dram_offset = 1000, .y_size = 0, .x_size = 3, .y_pad_top = 2};
    stream_load_2d(&r->s, 0, &m);
    m.y_size = 3, m.x_size = 0;
    stream_load_2d(&r->s, 0, &m);
    stream_finish(&r->s, 0);
    rig_run_ok(r);
    for (size_t i = 0; i < n; i++) assert_int_equal(inp[i], 0x5A);
    assert_int_equal(r->res.counters[LOOM_CNT_INSN_LOAD], 2);
    assert_int_equal(r->res.counters[LOOM_CNT_BYTES_RD_INP], 0);
    rig_free(r);
  }
}

/* ---- STORE ---- */

static void test_store_2d_writes_saturated_out_rows(void **state) {
  for (size_t c = 0; c < NCONFIGS; c++) {
    struct rig *r = rig_new(configs[c]);
    for (int t = 0; t < 30; t++) {
      uint32_t rows = 48, rb = loom_hw_row_bytes(r->cfg, LOOM_BUF_OUT, 0);
      int32_t *vals = malloc((size_t)rows * r->lanes * sizeof *vals);
      for (size_t i = 0; i < (size_t)rows * r->lanes; i++) vals[i] = rig_rnd_edge32(r);
      struct loom_insn_mem m;
      do m = random_transfer(r, LOOM_BUF_OUT, 0);
      while (m.sram_base + m.y_size * m.x_size > rows);
      m.segment = 1;
      size_t dbytes = (last_row(&m) + 2) * rb; /* two spare rows stay untouched */
      uint8_t *dram = rig_segment(r, 1, dbytes, 0);
      rig_fill_random(r, dram, dbytes);
      uint8_t *want = malloc(dbytes);
      int8_t *out_want = malloc((size_t)rows * r->lanes);
      memcpy(want, dram, dbytes);
      for (size_t i = 0; i < (size_t)rows * r->lanes; i++) out_want[i] = ref_sat8(vals[i]);
      ref_store(&m, out_want, rb, want);
      rig_load_acc_rows(r, 0, 0, vals, rows);
      stream_nop(&r->s, STREAM_PUSH_NEXT, LOOM_Q_COMPUTE); /* ACC is in: store may go */
      stream_store_2d(&r->s, STREAM_POP_PREV, &m);
      stream_finish(&r->s, 0);
      rig_run_ok(r);
      assert_memory_equal(dram, want, dbytes);
      assert_int_equal(r->res.counters[LOOM_CNT_BYTES_WR_OUT], (uint64_t)m.y_size * m.x_size * rb);
      free(vals);
      free(want);
      free(out_want);
    }
    rig_free(r);
  }
}

/* ---- GEMM ---- */

/* The GEMM loop nest of docs/isa.md over plain arrays, with ref_gemm_lane. */
static void ref_gemm(const struct rig *r, const struct loom_insn_gemm *g,
                     const struct loom_uop *uops, int32_t *acc, const int8_t *inp,
                     const int8_t *wgt) {
  int bi = r->cfg->block_in, bo = r->cfg->block_out, batch = r->cfg->batch;
  for (uint32_t i = 0; i < g->iter_out; i++)
    for (uint32_t j = 0; j < g->iter_in; j++)
      for (uint32_t u = g->uop_begin; u < g->uop_end; u++) {
        uint32_t a = uops[u].acc + i * g->acc_factor_out + j * g->acc_factor_in;
        uint32_t x = uops[u].inp + i * g->inp_factor_out + j * g->inp_factor_in;
        uint32_t w = uops[u].wgt + i * g->wgt_factor_out + j * g->wgt_factor_in;
        for (int b = 0; b < batch; b++)
          for (int o = 0; o < bo; o++) {
            int32_t *lane = &acc[(size_t)a * r->lanes + (size_t)b * bo + o];
            const int8_t *xr = inp + (size_t)x * batch * bi + (size_t)b * bi;
            const int8_t *wr = wgt + (size_t)w * bo * bi + (size_t)o * bi;
            *lane = g->reset ? 0 : ref_gemm_lane(*lane, xr, wr, bi);
          }
      }
}

struct gemm_case {
  struct loom_insn_gemm g;
  struct loom_uop uops[8];
  uint32_t nuops;
};

/* Random micro-ops and loop factors whose every index stays in range. */
static struct gemm_case random_gemm(struct rig *r, uint32_t acc_rows, uint32_t inp_rows,
                                    uint32_t wgt_rows) {
  struct gemm_case gc;
  memset(&gc, 0, sizeof gc);
  gc.nuops = (uint32_t)rig_rnd_in(r, 1, 6);
  struct loom_insn_gemm *g = &gc.g;
  g->uop_begin = (uint32_t)rig_rnd_in(r, 0, 1);
  g->uop_end = g->uop_begin + gc.nuops;
  g->iter_out = (uint32_t)rig_rnd_in(r, 1, 3);
  g->iter_in = (uint32_t)rig_rnd_in(r, 1, 3);
  g->acc_factor_out = (uint32_t)rig_rnd_in(r, 0, 6), g->acc_factor_in = (uint32_t)rig_rnd_in(r, 0, 3);
  g->inp_factor_out = (uint32_t)rig_rnd_in(r, 0, 6), g->inp_factor_in = (uint32_t)rig_rnd_in(r, 0, 3);
  g->wgt_factor_out = (uint32_t)rig_rnd_in(r, 0, 6), g->wgt_factor_in = (uint32_t)rig_rnd_in(r, 0, 3);
  uint32_t io = g->iter_out - 1, ii = g->iter_in - 1;
  int32_t amax = (int32_t)(acc_rows - 1 - io * g->acc_factor_out - ii * g->acc_factor_in);
  int32_t xmax = (int32_t)(inp_rows - 1 - io * g->inp_factor_out - ii * g->inp_factor_in);
  int32_t wmax = (int32_t)(wgt_rows - 1 - io * g->wgt_factor_out - ii * g->wgt_factor_in);
  for (uint32_t u = g->uop_begin; u < g->uop_end; u++) {
    gc.uops[u].acc = (uint32_t)rig_rnd_in(r, 0, amax);
    gc.uops[u].inp = (uint32_t)rig_rnd_in(r, 0, xmax);
    gc.uops[u].wgt = (uint32_t)rig_rnd_in(r, 0, wmax);
  }
  return gc;
}

/* Region sizes the GEMM tests work in (all configs have at least these). */
enum { G_ACC = 32, G_INP = 32, G_WGT = 24 };

struct gemm_data {
  int32_t acc[G_ACC * 32];
  int8_t inp[G_INP * 32];
  int8_t wgt[G_WGT * 32 * 32];
};

static void check_gemm_case(struct rig *r, struct gemm_data *d, const struct gemm_case *gc) {
  struct stream_uops u;
  stream_uops_init(&u);
  for (uint32_t i = 0; i < gc->g.uop_end; i++)
    stream_uops_add(&u, gc->uops[i].acc, gc->uops[i].inp, gc->uops[i].wgt);
  rig_load_uop_table(r, 0, &u);
  rig_load_acc_rows(r, 1, 0, d->acc, G_ACC);
  rig_load_bytes(r, 2, LOOM_BUF_INP, 0, (const uint8_t *)d->inp, G_INP);
  rig_load_bytes(r, 3, LOOM_BUF_WGT, 0, (const uint8_t *)d->wgt, G_WGT);
  stream_nop(&r->s, STREAM_PUSH_NEXT, LOOM_Q_LOAD); /* INP and WGT are in */
  stream_gemm(&r->s, STREAM_POP_PREV, &gc->g);
  stream_finish(&r->s, 0);
  rig_run_ok(r);
  ref_gemm(r, &gc->g, gc->uops, d->acc, d->inp, d->wgt);
  rig_check_acc(r, d->acc, G_ACC);
  uint64_t ops = gc->g.reset ? 0 : (uint64_t)gc->g.iter_out * gc->g.iter_in * gc->nuops;
  assert_int_equal(r->res.counters[LOOM_CNT_GEMM_OPS], ops);
  stream_uops_free(&u);
}

static void random_gemm_data(struct rig *r, struct gemm_data *d, int edge) {
  for (size_t i = 0; i < sizeof d->acc / sizeof d->acc[0]; i++) d->acc[i] = rig_rnd_edge32(r);
  rig_fill_random(r, (uint8_t *)d->inp, sizeof d->inp);
  rig_fill_random(r, (uint8_t *)d->wgt, sizeof d->wgt);
  if (edge) { /* extremes: every product +-16384, 127 * -128 */
    for (size_t i = 0; i < sizeof d->inp; i++) d->inp[i] = rig_rnd(r) % 2 ? -128 : 127;
    for (size_t i = 0; i < sizeof d->wgt; i++) d->wgt[i] = rig_rnd(r) % 2 ? -128 : 127;
  }
}

static void test_gemm_random_loops_match_ref(void **state) {
  struct gemm_data *d = malloc(sizeof *d);
  for (size_t c = 0; c < NCONFIGS; c++) {
    struct rig *r = rig_new(configs[c]);
    for (int t = 0; t < 40; t++) {
      random_gemm_data(r, d, t % 4 == 3);
      struct gemm_case gc = random_gemm(r, G_ACC, G_INP, G_WGT);
      gc.g.reset = t % 8 == 7;
      check_gemm_case(r, d, &gc);
    }
    rig_free(r);
  }
  free(d);
}

static void test_gemm_accumulation_wraps_int32(void **state) {
  struct gemm_data *d = malloc(sizeof *d);
  for (size_t c = 0; c < NCONFIGS; c++) {
    struct rig *r = rig_new(configs[c]);
    random_gemm_data(r, d, 0);
    size_t wrow = loom_hw_row_bytes(r->cfg, LOOM_BUF_WGT, 0);
    for (size_t i = 0; i < sizeof d->inp; i++) d->inp[i] = -128;
    memset(d->wgt, 0x80, wrow);       /* WGT row 0: every product +16384 */
    memset(d->wgt + wrow, 127, wrow); /* WGT row 1: every product -16256 */
    for (uint32_t i = 0; i < r->lanes; i++) {
      d->acc[i] = INT32_MAX - 100;      /* ACC row 0 climbs past INT32_MAX */
      d->acc[r->lanes + i] = INT32_MIN; /* ACC row 1 falls past INT32_MIN */
    }
    struct gemm_case gc;
    memset(&gc, 0, sizeof gc);
    gc.nuops = 2;
    gc.g = (struct loom_insn_gemm){.uop_end = 2, .iter_out = 3, .iter_in = 1};
    gc.uops[0] = (struct loom_uop){0, 0, 0};
    gc.uops[1] = (struct loom_uop){1, 0, 1};
    check_gemm_case(r, d, &gc);
    const int32_t *acc = rig_sram(r, LOOM_BUF_ACC, NULL);
    assert_true(acc[0] < 0);         /* wrapped past INT32_MAX */
    assert_true(acc[r->lanes] > 0);  /* wrapped past INT32_MIN */
    rig_free(r);
  }
  free(d);
}

static void test_gemm_reset_ignores_inp_and_wgt_rows(void **state) {
  struct gemm_data *d = malloc(sizeof *d);
  for (size_t c = 0; c < NCONFIGS; c++) {
    struct rig *r = rig_new(configs[c]);
    random_gemm_data(r, d, 0);
    struct gemm_case gc;
    memset(&gc, 0, sizeof gc);
    gc.nuops = 1;
    /* inp and wgt indices far past their buffers: not checked with reset */
    gc.g = (struct loom_insn_gemm){.reset = 1, .uop_end = 1, .iter_out = 4, .iter_in = 2,
                                   .acc_factor_out = 2, .acc_factor_in = 1,
                                   .inp_factor_out = 2047, .wgt_factor_in = 1023};
    gc.uops[0] = (struct loom_uop){3, 2047, 1023};
    check_gemm_case(r, d, &gc);
    rig_free(r);
  }
  free(d);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_load_inp_with_padding_matches_ref),
      cmocka_unit_test(test_load_wgt_and_uop_copy_2d_blocks),
      cmocka_unit_test(test_load_acc_int32_and_src_int8_with_padding_mirror_out),
      cmocka_unit_test(test_load_of_zero_size_moves_nothing_and_checks_nothing),
      cmocka_unit_test(test_store_2d_writes_saturated_out_rows),
      cmocka_unit_test(test_gemm_random_loops_match_ref),
      cmocka_unit_test(test_gemm_accumulation_wraps_int32),
      cmocka_unit_test(test_gemm_reset_ignores_inp_and_wgt_rows),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
