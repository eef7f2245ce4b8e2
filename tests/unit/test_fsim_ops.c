/*
 * test_fsim_ops.c - every fsim instruction and ALU op against ref_ops.
 *
 * Golden-model tests: each test builds a small stream with the stream
 * helpers, runs it on fsim, reads SRAM back through fsim_sram() (or DRAM for
 * STORE) and compares every row of the buffer, not only the ones the
 * instruction should touch, with what tests/support/ref_ops.c computes from
 * the same inputs.  Data is random (a fixed-seed generator, so failures
 * reproduce) with edge values mixed in; the rounding and saturation corner
 * cases are also checked against hand-computed numbers, which keeps the
 * reference honest.  Every test runs on the tiny and the default
 * configuration.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "loom/hwconfig.h"
#include "ref_ops.h"
#include "sim/fsim/fsim.h"
#include "stream.h"

static const char *const configs[] = {"tiny", "default"};
#define NCONFIGS (sizeof configs / sizeof configs[0])

/* ---- the rig: one simulator, one stream, eight segments ---- */

struct rig {
  const struct loom_hw_config *cfg;
  struct fsim *sim;
  struct stream s;
  struct fsim_job job;
  struct fsim_result res;
  uint64_t rng;
  uint32_t lanes; /* batch x block_out: int32 per ACC row */
};

static struct rig *rig_new(const char *config) {
  struct rig *r = calloc(1, sizeof *r);
  assert_non_null(r);
  r->cfg = loom_hw_config_by_name(config);
  assert_non_null(r->cfg);
  r->sim = fsim_create(r->cfg);
  assert_non_null(r->sim);
  stream_init(&r->s);
  r->rng = 0x1234567u;
  r->lanes = (uint32_t)(r->cfg->batch * r->cfg->block_out);
  return r;
}

static void rig_free(struct rig *r) {
  for (int i = 0; i < LOOM_NUM_SEGMENTS; i++) free(r->job.seg[i].data);
  stream_free(&r->s);
  fsim_destroy(r->sim);
  free(r);
}

/* (Re)allocates segment i with `bytes` zero bytes. */
static uint8_t *rig_segment(struct rig *r, int i, size_t bytes) {
  free(r->job.seg[i].data);
  r->job.seg[i].data = calloc(bytes ? bytes : 1, 1);
  assert_non_null(r->job.seg[i].data);
  r->job.seg[i].size = bytes;
  return r->job.seg[i].data;
}

/* Runs the stream as one job (and empties it for the next). */
static uint32_t rig_run(struct rig *r) {
  if (r->s.error) fail_msg("stream field %s does not encode", r->s.error);
  r->job.insns = r->s.bytes;
  r->job.insn_count = r->s.count;
  uint32_t err = fsim_run(r->sim, &r->job, &r->res);
  stream_free(&r->s);
  stream_init(&r->s);
  return err;
}

static void rig_run_ok(struct rig *r) {
  if (rig_run(r) != LOOM_ERR_NONE) fail_msg("%s: %s", r->cfg->name, r->res.message);
}

static void *sram(struct rig *r, int buffer, size_t *bytes) {
  void *p = fsim_sram(r->sim, buffer, bytes);
  assert_non_null(p);
  return p;
}

/* ---- random data ---- */

static uint32_t rnd(struct rig *r) {
  r->rng = r->rng * 6364136223846793005ull + 1442695040888963407ull;
  return (uint32_t)(r->rng >> 32);
}

/* Uniform in [lo, hi]. */
static int32_t rnd_in(struct rig *r, int32_t lo, int32_t hi) {
  return (int32_t)((int64_t)lo + (int64_t)(rnd(r) % (uint32_t)((int64_t)hi - lo + 1)));
}

static int32_t rnd_edge32(struct rig *r) {
  static const int32_t edges[] = {0, 1, -1, 2, -2, 3, -3, 127, 128, -128, -129, 255, 32767,
                                  -32768, 65536, INT32_MAX, INT32_MIN, INT32_MAX - 1,
                                  INT32_MIN + 1, 1 << 30, -(1 << 30)};
  uint32_t pick = rnd(r) % 3;
  if (pick == 0) return edges[rnd(r) % (sizeof edges / sizeof edges[0])];
  if (pick == 1) return rnd_in(r, -300, 300);
  return (int32_t)rnd(r);
}

static void fill_random(struct rig *r, uint8_t *p, size_t n) {
  for (size_t i = 0; i < n; i++) p[i] = (uint8_t)rnd(r);
}

static void put_le32(uint8_t *p, int32_t v) {
  uint32_t u = (uint32_t)v;
  for (int i = 0; i < 4; i++) p[i] = (uint8_t)(u >> (8 * i));
}

/* Emits LOAD ACC of `rows` rows of vals[] (int32) from segment `seg`. */
static void load_acc_rows(struct rig *r, int seg, uint32_t sram_row, const int32_t *vals,
                          uint32_t rows) {
  uint8_t *d = rig_segment(r, seg, (size_t)rows * r->lanes * 4);
  for (size_t i = 0; i < (size_t)rows * r->lanes; i++) put_le32(d + 4 * i, vals[i]);
  stream_load(&r->s, 0, LOOM_BUF_ACC, sram_row, (uint32_t)seg, 0, rows);
}

/* Emits LOAD of `rows` rows of an int8 buffer from `bytes`. */
static void load_bytes(struct rig *r, int seg, uint32_t buffer, uint32_t sram_row,
                       const uint8_t *bytes, uint32_t rows) {
  uint32_t rb = loom_hw_row_bytes(r->cfg, (int)buffer, 0);
  memcpy(rig_segment(r, seg, (size_t)rows * rb), bytes, (size_t)rows * rb);
  stream_load(&r->s, 0, buffer, sram_row, (uint32_t)seg, 0, rows);
}

static void load_uops(struct rig *r, int seg, const struct stream_uops *u) {
  assert_int_equal(u->error, 0);
  load_bytes(r, seg, LOOM_BUF_UOP, 0, u->bytes, u->count);
}

/* OUT must be sat8(ACC) on rows [0, rows). */
static void check_out_mirrors_acc(struct rig *r, uint32_t rows) {
  const int32_t *acc = sram(r, LOOM_BUF_ACC, NULL);
  const int8_t *out = sram(r, LOOM_BUF_OUT, NULL);
  for (size_t i = 0; i < (size_t)rows * r->lanes; i++)
    if (out[i] != ref_sat8(acc[i])) fail_msg("OUT[%zu] = %d, ACC %d", i, out[i], acc[i]);
}

static void check_acc(struct rig *r, const int32_t *want, uint32_t rows) {
  const int32_t *acc = sram(r, LOOM_BUF_ACC, NULL);
  for (size_t i = 0; i < (size_t)rows * r->lanes; i++)
    if (acc[i] != want[i])
      fail_msg("%s: ACC row %zu lane %zu = %d, want %d", r->cfg->name, i / r->lanes, i % r->lanes,
               acc[i], want[i]);
  check_out_mirrors_acc(r, rows);
}

/* ---- LOAD ---- */

/* A random 2-D transfer of `buffer` that fits its SRAM, padded if allowed. */
static struct loom_insn_mem random_transfer(struct rig *r, uint32_t buffer, int pad) {
  uint32_t rows = loom_hw_buffer_rows(r->cfg, (int)buffer);
  struct loom_insn_mem m;
  static const int32_t pads[] = {-128, 127, 0, -1};
  do {
    memset(&m, 0, sizeof m);
    m.buffer = buffer;
    m.y_size = (uint32_t)rnd_in(r, 1, 4);
    m.x_size = (uint32_t)rnd_in(r, 1, 5);
    m.x_stride = (uint32_t)rnd_in(r, 0, 2 * (int32_t)m.x_size); /* overlap included */
    m.dram_offset = (uint32_t)rnd_in(r, 0, 3);
    m.sram_base = (uint32_t)rnd_in(r, 0, 40);
    if (pad) {
      m.y_pad_top = (uint32_t)rnd_in(r, 0, 7);
      m.y_pad_bottom = (uint32_t)rnd_in(r, 0, 7);
      m.x_pad_left = (uint32_t)rnd_in(r, 0, 7);
      m.x_pad_right = (uint32_t)rnd_in(r, 0, 7);
      m.pad_value = rnd(r) % 2 ? pads[rnd(r) % 4] : rnd_in(r, -128, 127);
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
  uint8_t *dram = rig_segment(r, 2, last_row(&m) * rb);
  fill_random(r, dram, last_row(&m) * rb);
  m.segment = 2;
  size_t n;
  uint8_t *buf = sram(r, (int)buffer, &n);
  fill_random(r, buf, n);
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
  uint8_t *dram = rig_segment(r, 5, last_row(&m) * rb);
  for (uint64_t i = 0; i < last_row(&m) * rb / (src_int8 ? 1 : 4); i++)
    if (src_int8) dram[i] = (uint8_t)rnd(r);
    else put_le32(dram + 4 * i, rnd_edge32(r));
  size_t n;
  int32_t *acc = sram(r, LOOM_BUF_ACC, &n);
  int32_t *want = malloc(n);
  memcpy(want, acc, n);
  ref_load_acc(&m, dram, r->lanes, want + (size_t)m.sram_base * r->lanes);
  stream_load_2d(&r->s, 0, &m);
  stream_finish(&r->s, 0);
  rig_run_ok(r);
  /* rows this load wrote, and only those, mirror into OUT */
  int8_t *out = sram(r, LOOM_BUF_OUT, NULL);
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
    uint8_t *inp = sram(r, LOOM_BUF_INP, &n);
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
      for (size_t i = 0; i < (size_t)rows * r->lanes; i++) vals[i] = rnd_edge32(r);
      struct loom_insn_mem m;
      do m = random_transfer(r, LOOM_BUF_OUT, 0);
      while (m.sram_base + m.y_size * m.x_size > rows);
      m.segment = 1;
      size_t dbytes = (last_row(&m) + 2) * rb; /* two spare rows stay untouched */
      uint8_t *dram = rig_segment(r, 1, dbytes);
      fill_random(r, dram, dbytes);
      uint8_t *want = malloc(dbytes);
      int8_t *out_want = malloc((size_t)rows * r->lanes);
      memcpy(want, dram, dbytes);
      for (size_t i = 0; i < (size_t)rows * r->lanes; i++) out_want[i] = ref_sat8(vals[i]);
      ref_store(&m, out_want, rb, want);
      load_acc_rows(r, 0, 0, vals, rows);
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
  gc.nuops = (uint32_t)rnd_in(r, 1, 6);
  struct loom_insn_gemm *g = &gc.g;
  g->uop_begin = (uint32_t)rnd_in(r, 0, 1);
  g->uop_end = g->uop_begin + gc.nuops;
  g->iter_out = (uint32_t)rnd_in(r, 1, 3);
  g->iter_in = (uint32_t)rnd_in(r, 1, 3);
  g->acc_factor_out = (uint32_t)rnd_in(r, 0, 6), g->acc_factor_in = (uint32_t)rnd_in(r, 0, 3);
  g->inp_factor_out = (uint32_t)rnd_in(r, 0, 6), g->inp_factor_in = (uint32_t)rnd_in(r, 0, 3);
  g->wgt_factor_out = (uint32_t)rnd_in(r, 0, 6), g->wgt_factor_in = (uint32_t)rnd_in(r, 0, 3);
  uint32_t io = g->iter_out - 1, ii = g->iter_in - 1;
  int32_t amax = (int32_t)(acc_rows - 1 - io * g->acc_factor_out - ii * g->acc_factor_in);
  int32_t xmax = (int32_t)(inp_rows - 1 - io * g->inp_factor_out - ii * g->inp_factor_in);
  int32_t wmax = (int32_t)(wgt_rows - 1 - io * g->wgt_factor_out - ii * g->wgt_factor_in);
  for (uint32_t u = g->uop_begin; u < g->uop_end; u++) {
    gc.uops[u].acc = (uint32_t)rnd_in(r, 0, amax);
    gc.uops[u].inp = (uint32_t)rnd_in(r, 0, xmax);
    gc.uops[u].wgt = (uint32_t)rnd_in(r, 0, wmax);
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
  load_uops(r, 0, &u);
  load_acc_rows(r, 1, 0, d->acc, G_ACC);
  load_bytes(r, 2, LOOM_BUF_INP, 0, (const uint8_t *)d->inp, G_INP);
  load_bytes(r, 3, LOOM_BUF_WGT, 0, (const uint8_t *)d->wgt, G_WGT);
  stream_nop(&r->s, STREAM_PUSH_NEXT, LOOM_Q_LOAD); /* INP and WGT are in */
  stream_gemm(&r->s, STREAM_POP_PREV, &gc->g);
  stream_finish(&r->s, 0);
  rig_run_ok(r);
  ref_gemm(r, &gc->g, gc->uops, d->acc, d->inp, d->wgt);
  check_acc(r, d->acc, G_ACC);
  uint64_t ops = gc->g.reset ? 0 : (uint64_t)gc->g.iter_out * gc->g.iter_in * gc->nuops;
  assert_int_equal(r->res.counters[LOOM_CNT_GEMM_OPS], ops);
  stream_uops_free(&u);
}

static void random_gemm_data(struct rig *r, struct gemm_data *d, int edge) {
  for (size_t i = 0; i < sizeof d->acc / sizeof d->acc[0]; i++) d->acc[i] = rnd_edge32(r);
  fill_random(r, (uint8_t *)d->inp, sizeof d->inp);
  fill_random(r, (uint8_t *)d->wgt, sizeof d->wgt);
  if (edge) { /* extremes: every product +-16384, 127 * -128 */
    for (size_t i = 0; i < sizeof d->inp; i++) d->inp[i] = rnd(r) % 2 ? -128 : 127;
    for (size_t i = 0; i < sizeof d->wgt; i++) d->wgt[i] = rnd(r) % 2 ? -128 : 127;
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
    const int32_t *acc = sram(r, LOOM_BUF_ACC, NULL);
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

/* ---- ALU ---- */

enum { A_ROWS = 24 };

struct alu_case {
  struct loom_insn_alu a;
  struct loom_uop uops[8];
  struct loom_insn_qcfg q;
};

static void ref_alu_loop(const struct rig *r, const struct alu_case *ac, int32_t *acc) {
  const struct loom_insn_alu *a = &ac->a;
  for (uint32_t i = 0; i < a->iter_out; i++)
    for (uint32_t j = 0; j < a->iter_in; j++)
      for (uint32_t u = a->uop_begin; u < a->uop_end; u++) {
        uint32_t d = ac->uops[u].acc + i * a->dst_factor_out + j * a->dst_factor_in;
        uint32_t s = ac->uops[u].inp + i * a->src_factor_out + j * a->src_factor_in;
        for (uint32_t l = 0; l < r->lanes; l++) {
          int32_t v = a->use_imm ? 0 : acc[(size_t)s * r->lanes + l];
          acc[(size_t)d * r->lanes + l] = ref_alu(a, acc[(size_t)d * r->lanes + l], v, &ac->q);
        }
      }
}

/* Runs the case on `vals` (A_ROWS rows) and compares with ref_alu_loop. */
static void check_alu_case(struct rig *r, int32_t *vals, const struct alu_case *ac) {
  struct stream_uops u;
  stream_uops_init(&u);
  for (uint32_t i = 0; i < ac->a.uop_end; i++)
    stream_uops_add(&u, ac->uops[i].acc, ac->uops[i].inp, ac->uops[i].wgt);
  load_uops(r, 0, &u);
  load_acc_rows(r, 1, 0, vals, A_ROWS);
  stream_qcfg(&r->s, 0, &ac->q);
  stream_alu(&r->s, 0, &ac->a);
  stream_finish(&r->s, 0);
  rig_run_ok(r);
  ref_alu_loop(r, ac, vals);
  check_acc(r, vals, A_ROWS);
  uint64_t n = (uint64_t)ac->a.iter_out * ac->a.iter_in * (ac->a.uop_end - ac->a.uop_begin);
  assert_int_equal(r->res.counters[LOOM_CNT_ALU_OPS], n);
  stream_uops_free(&u);
}

static struct loom_insn_qcfg random_qcfg(struct rig *r) {
  static const uint32_t shifts[] = {0, 1, 2, 15, 31, 32, 40, 62, 63};
  struct loom_insn_qcfg q = {.multiplier = rnd_edge32(r), .shift = shifts[rnd(r) % 9],
                             .zero_point = rnd_in(r, -128, 127), .clamp_lo = rnd_in(r, -128, 0),
                             .clamp_hi = rnd_in(r, 0, 127), .round_even = rnd(r) % 2};
  if (rnd(r) % 4 == 0) q.clamp_lo = rnd_in(r, -128, 127), q.clamp_hi = rnd_in(r, -128, 127);
  return q;
}

static struct alu_case random_alu(struct rig *r, uint32_t op, uint32_t use_imm) {
  static const int32_t imms[] = {0, 1, -1, 31, 32, 33, -32768, 32767, 7, -7};
  struct alu_case ac;
  memset(&ac, 0, sizeof ac);
  struct loom_insn_alu *a = &ac.a;
  a->alu_op = op;
  a->use_imm = use_imm;
  a->imm = rnd(r) % 2 ? imms[rnd(r) % 10] : rnd_in(r, -32768, 32767);
  a->uop_begin = (uint32_t)rnd_in(r, 0, 1);
  a->uop_end = a->uop_begin + (uint32_t)rnd_in(r, 1, 4);
  a->iter_out = (uint32_t)rnd_in(r, 1, 3), a->iter_in = (uint32_t)rnd_in(r, 1, 2);
  a->dst_factor_out = (uint32_t)rnd_in(r, 0, 4), a->dst_factor_in = (uint32_t)rnd_in(r, 0, 2);
  a->src_factor_out = (uint32_t)rnd_in(r, 0, 4), a->src_factor_in = (uint32_t)rnd_in(r, 0, 2);
  uint32_t io = a->iter_out - 1, ii = a->iter_in - 1;
  int32_t dmax = (int32_t)(A_ROWS - 1 - io * a->dst_factor_out - ii * a->dst_factor_in);
  int32_t smax = (int32_t)(A_ROWS - 1 - io * a->src_factor_out - ii * a->src_factor_in);
  for (uint32_t u = a->uop_begin; u < a->uop_end; u++) {
    uint32_t d = (uint32_t)rnd_in(r, 0, dmax);
    ac.uops[u].acc = d;
    ac.uops[u].inp = rnd(r) % 4 == 0 && d <= (uint32_t)smax ? d : (uint32_t)rnd_in(r, 0, smax);
    ac.uops[u].wgt = rnd(r) % 1024; /* ignored by the ALU */
  }
  ac.q = random_qcfg(r);
  return ac;
}

static void test_alu_every_op_vector_and_imm_matches_ref(void **state) {
  int32_t vals[A_ROWS * 32];
  for (size_t c = 0; c < NCONFIGS; c++) {
    struct rig *r = rig_new(configs[c]);
    for (uint32_t op = 0; op < LOOM_ALU_EPI; op++) /* EPI: test_fsim_v2.c */
      for (uint32_t imm = 0; imm < 2; imm++)
        for (int t = 0; t < 12; t++) {
          for (size_t i = 0; i < A_ROWS * r->lanes; i++) vals[i] = rnd_edge32(r);
          struct alu_case ac = random_alu(r, op, imm);
          check_alu_case(r, vals, &ac);
        }
    rig_free(r);
  }
}

/* One lane pair through a vector ALU op; returns the fsim result. */
static int32_t alu_once(struct rig *r, uint32_t op, int32_t a, int32_t v,
                        const struct loom_insn_qcfg *q, int use_imm) {
  int32_t vals[2 * 32];
  for (uint32_t l = 0; l < r->lanes; l++) vals[l] = a, vals[r->lanes + l] = v;
  struct stream_uops u;
  stream_uops_init(&u);
  stream_uops_add(&u, 0, 1, 0);
  load_uops(r, 0, &u);
  load_acc_rows(r, 1, 0, vals, 2);
  if (q) stream_qcfg(&r->s, 0, q);
  stream_alu_range(&r->s, 0, op, (uint32_t)use_imm, use_imm ? v : 0, 0, 1);
  stream_finish(&r->s, 0);
  rig_run_ok(r);
  stream_uops_free(&u);
  const int32_t *acc = sram(r, LOOM_BUF_ACC, NULL);
  const int8_t *out = sram(r, LOOM_BUF_OUT, NULL);
  for (uint32_t l = 1; l < r->lanes; l++) assert_int_equal(acc[l], acc[0]);
  assert_int_equal(out[0], ref_sat8(acc[0]));
  return acc[0];
}

struct lane_case {
  int32_t a, v, want;
};

static void test_shr_rounds_half_up_for_negatives_and_ties(void **state) {
  static const struct lane_case cases[] = {
      {5, 1, 3},   {-5, 1, -2},  {-3, 1, -1},   {-1, 1, 0},    {3, 1, 2},   {-2, 1, -1},
      {-6, 2, -1}, {-7, 2, -2},  {6, 2, 2},     {7, 0, 7},     {7, 32, 7},  {7, 33, 4},
      {-7, -1, 0}, {-1, 31, 0},  {INT32_MAX, 31, 1}, {INT32_MIN, 31, -1},
      {INT32_MAX, 1, 1 << 30},   {INT32_MIN, 1, INT32_MIN / 2}, {INT32_MIN + 1, 1, -(1 << 30) + 1},
  };
  for (size_t c = 0; c < NCONFIGS; c++) {
    struct rig *r = rig_new(configs[c]);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
      const struct lane_case *k = &cases[i];
      assert_int_equal(ref_shr(k->a, k->v), k->want);
      assert_int_equal(alu_once(r, LOOM_ALU_SHR, k->a, k->v, NULL, 0), k->want);
      if (k->v >= -32768 && k->v <= 32767)
        assert_int_equal(alu_once(r, LOOM_ALU_SHR, k->a, k->v, NULL, 1), k->want);
    }
    rig_free(r);
  }
}

static void test_add_and_mul_wrap_modulo_2_32(void **state) {
  static const struct lane_case add[] = {{INT32_MAX, 1, INT32_MIN}, {INT32_MIN, -1, INT32_MAX},
                                         {INT32_MAX, INT32_MAX, -2}, {-5, 3, -2}};
  static const struct lane_case mul[] = {{65536, 65536, 0}, {INT32_MIN, -1, INT32_MIN},
                                         {INT32_MAX, 2, -2}, {-3, 7, -21},
                                         {46341, 46341, -2147479015}};
  for (size_t c = 0; c < NCONFIGS; c++) {
    struct rig *r = rig_new(configs[c]);
    for (size_t i = 0; i < sizeof add / sizeof add[0]; i++) {
      assert_int_equal(ref_add(add[i].a, add[i].v), add[i].want);
      assert_int_equal(alu_once(r, LOOM_ALU_ADD, add[i].a, add[i].v, NULL, 0), add[i].want);
    }
    for (size_t i = 0; i < sizeof mul / sizeof mul[0]; i++) {
      assert_int_equal(ref_mul(mul[i].a, mul[i].v), mul[i].want);
      assert_int_equal(alu_once(r, LOOM_ALU_MUL, mul[i].a, mul[i].v, NULL, 0), mul[i].want);
    }
    rig_free(r);
  }
}

struct requant_case {
  int32_t a, m;
  uint32_t shift, round_even;
  int32_t zp, lo, hi, want;
};

static void test_requant_edges_shift_rounding_and_clamps(void **state) {
  static const struct requant_case cases[] = {
      {5, 3, 0, 0, 0, -128, 127, 15},            /* shift 0: no rounding */
      {5, 3, 0, 0, 0, -128, 10, 10},             /* clamp_hi */
      {1, 1, 1, 0, 0, -128, 127, 1},             /* tie 0.5 rounds up */
      {1, 1, 1, 1, 0, -128, 127, 0},             /* tie 0.5 to even */
      {3, 1, 1, 1, 0, -128, 127, 2},             /* tie 1.5 to even */
      {-1, 1, 1, 0, 0, -128, 127, 0},            /* tie -0.5 rounds up */
      {-3, 1, 1, 0, 0, -128, 127, -1},           /* tie -1.5 rounds up */
      {-3, 1, 1, 1, 0, -128, 127, -2},           /* tie -1.5 to even */
      {-5, 1, 1, 1, 0, -128, 127, -2},           /* tie -2.5 to even */
      {1, 1 << 30, 31, 0, 0, -128, 127, 1},      /* 0.5 at shift 31 */
      {1, 1 << 30, 31, 1, 0, -128, 127, 0},
      {INT32_MIN, INT32_MIN, 63, 0, 0, -128, 127, 1}, /* p = 2^62: half of 2^63 */
      {INT32_MIN, INT32_MIN, 63, 1, 0, -128, 127, 0},
      {INT32_MIN, INT32_MAX, 63, 0, 0, -128, 127, 0},
      {INT32_MAX, INT32_MAX, 62, 0, 0, -128, 127, 1},
      {1000, INT32_MAX, 31, 0, 0, -128, 127, 127},   /* large multiplier saturates */
      {-100, INT32_MAX, 31, 0, 0, -128, 127, -100},
      {100, 1 << 30, 31, 0, -3, -128, 127, 47},      /* zero point */
      {0, 12345, 5, 0, 7, 10, -10, -10},             /* clamp_lo > clamp_hi: clamp_hi */
      {0, 12345, 5, 0, -128, -128, 127, -128},
      {7, -(1 << 30), 30, 1, 0, -128, 127, -7},
      {3, 3, 2, 1, 0, -128, 127, 2},                 /* 9/4 = 2.25 */
      {5, 3, 1, 1, 0, -128, 127, 8},                 /* 15/2 = 7.5 -> 8 */
  };
  for (size_t c = 0; c < NCONFIGS; c++) {
    struct rig *r = rig_new(configs[c]);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
      const struct requant_case *k = &cases[i];
      struct loom_insn_qcfg q = {.multiplier = k->m, .shift = k->shift, .zero_point = k->zp,
                                 .clamp_lo = k->lo, .clamp_hi = k->hi, .round_even = k->round_even};
      assert_int_equal(ref_requant(k->a, k->m, &q), k->want);
      /* vector form: per-lane multiplier from the source row; QCFG's is ignored */
      struct loom_insn_qcfg qv = q;
      qv.multiplier = 99;
      assert_int_equal(alu_once(r, LOOM_ALU_REQUANT, k->a, k->m, &qv, 0), k->want);
      /* immediate form: QCFG's multiplier; the immediate is ignored */
      struct loom_insn_alu in = {.alu_op = LOOM_ALU_REQUANT, .use_imm = 1, .imm = -77,
                                 .uop_end = 1, .iter_out = 1, .iter_in = 1};
      struct stream_uops u;
      stream_uops_init(&u);
      stream_uops_add(&u, 0, 0, 0);
      load_uops(r, 0, &u);
      int32_t vals[32];
      for (uint32_t l = 0; l < r->lanes; l++) vals[l] = k->a;
      load_acc_rows(r, 1, 0, vals, 1);
      stream_qcfg(&r->s, 0, &q);
      stream_alu(&r->s, 0, &in);
      stream_finish(&r->s, 0);
      rig_run_ok(r);
      stream_uops_free(&u);
      assert_int_equal(((int32_t *)sram(r, LOOM_BUF_ACC, NULL))[0], k->want);
    }
    rig_free(r);
  }
}

static void test_requant_registers_reset_every_job_and_sram_persists(void **state) {
  for (size_t c = 0; c < NCONFIGS; c++) {
    struct rig *r = rig_new(configs[c]);
    struct loom_insn_qcfg q = {.multiplier = 1, .zero_point = 5, .clamp_lo = -128, .clamp_hi = 127};
    int32_t vals[2 * 32];
    for (uint32_t l = 0; l < 2 * r->lanes; l++) vals[l] = 40;
    struct stream_uops u;
    stream_uops_init(&u);
    stream_uops_add(&u, 0, 0, 0);
    stream_uops_add(&u, 1, 0, 0);
    load_uops(r, 0, &u);
    load_acc_rows(r, 1, 0, vals, 2);
    stream_qcfg(&r->s, 0, &q);
    stream_alu_range(&r->s, 0, LOOM_ALU_REQUANT, 1, 0, 0, 1);
    stream_finish(&r->s, 0);
    rig_run_ok(r);
    const int32_t *acc = sram(r, LOOM_BUF_ACC, NULL);
    assert_int_equal(acc[0], 45);
    /* second job: no QCFG, no loads; micro-ops and ACC row 1 are still there */
    stream_alu_range(&r->s, 0, LOOM_ALU_REQUANT, 1, 0, 1, 2);
    stream_finish(&r->s, 0);
    rig_run_ok(r);
    assert_int_equal(acc[0], 45);
    assert_int_equal(acc[r->lanes], 0); /* multiplier, zero point and clamps are 0 */
    stream_uops_free(&u);
    rig_free(r);
  }
}

static void test_alu_results_mirror_into_out_with_saturation(void **state) {
  static const int32_t imms[] = {-32768, -129, -128, -1, 0, 127, 128, 32767};
  for (size_t c = 0; c < NCONFIGS; c++) {
    struct rig *r = rig_new(configs[c]);
    for (size_t i = 0; i < sizeof imms / sizeof imms[0]; i++) {
      int32_t got = alu_once(r, LOOM_ALU_MOV, 0, imms[i], NULL, 1);
      assert_int_equal(got, imms[i]);
      assert_int_equal(((int8_t *)sram(r, LOOM_BUF_OUT, NULL))[0], ref_sat8(imms[i]));
    }
    rig_free(r);
  }
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
      cmocka_unit_test(test_alu_every_op_vector_and_imm_matches_ref),
      cmocka_unit_test(test_shr_rounds_half_up_for_negatives_and_ties),
      cmocka_unit_test(test_add_and_mul_wrap_modulo_2_32),
      cmocka_unit_test(test_requant_edges_shift_rounding_and_clamps),
      cmocka_unit_test(test_requant_registers_reset_every_job_and_sram_persists),
      cmocka_unit_test(test_alu_results_mirror_into_out_with_saturation),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
