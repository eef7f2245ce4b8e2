/*
 * timing_agree.c - fsim's timing model against the RTL (docs/fsim-timing.md).
 *
 * Runs a fixed set of workloads on tsim (the RTL under Verilator, the
 * default DRAM model) and on fsim with timing=1, both for the default
 * configuration, and prints one line per workload: tsim CYCLES, fsim's
 * estimate and the error.  Fails (exit 1) when any error exceeds the
 * tolerance (5% unless --tol says otherwise), or when the exact counters
 * or error codes of the two disagree.
 *
 * Workloads:
 *   - the twelve ResNet-18 convolutions of DESIGN.md, each lowered by the
 *     compiler (lower_conv, as `loom compile` does for a single quantized
 *     Conv with bias and fused ReLU; the stem through the host im2col);
 *   - GEMM: a resident load job (UOP, INP, WGT loads), a resident GEMM
 *     job and the double-buffered streamed GEMM of tests/bench/bench_rtl.c,
 *     at several M x K x N.
 *
 *   timing_agree [--tol PCT] [--only SUBSTR] [--tsim-cache FILE] [--fsim-only]
 *                [--verbose] [--trace] [--tsim-lib PATH] [--tsim-opts OPTIONS] [--random N]
 *                [--random-only] [--config NAME] [--micro] [--pick SEED:I,J,...]
 *
 * --random N adds the first N constrained-random jobs of
 * tests/support/randstream.c (short jobs of every instruction kind, with
 * random tokens and ALU hazards: a harder test of the per-instruction
 * costs than the long layers); --random-only leaves the others out, and
 * --config runs another configuration (random jobs only: the fixed
 * workloads are sized for the default one).  --trace prints fsim's timeline
 * of each job.
 *
 * --tsim-cache keeps tsim's counters per workload in FILE (read when
 * present, written otherwise): the RTL is deterministic, so calibrating
 * the model need not rerun it.  --fsim-only prints fsim's estimates alone
 * and times them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "loom/isa.h"
#include "loom/loom.h"
#include "randstream.h"
#include "stream.h"
#include "sw_compiler/lower.h"

#define MAX_WORKLOADS 1100

struct workload {
  char name[48];
  uint8_t *code;
  uint32_t insn_count;
  size_t seg_bytes[8];
  uint8_t *seg_init[8]; /* NULL: zeroed */
};

struct outcome {
  uint32_t error;
  uint64_t counters[LOOM_CNT_COUNT];
};

static void die(const char *what, const char *detail) {
  fprintf(stderr, "timing_agree: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
  exit(2);
}

static uint8_t *dup_bytes(const void *p, size_t n) {
  uint8_t *q = malloc(n ? n : 1);
  if (!q) die("out of memory", NULL);
  memcpy(q, p, n);
  return q;
}

static uint8_t *pattern(size_t n) {
  uint8_t *p = malloc(n ? n : 1);
  if (!p) die("out of memory", NULL);
  for (size_t i = 0; i < n; i++) p[i] = (uint8_t)(i * 131 + 7);
  return p;
}

/* ---- the ResNet-18 convolutions ---- */

struct layer {
  int32_t h, in_c, out_c, k, s;
};

static const struct layer resnet18[12] = {
    {224, 3, 64, 7, 2},    {56, 64, 64, 3, 1},    {56, 64, 64, 1, 1},   {56, 64, 128, 3, 2},
    {56, 64, 128, 1, 2},   {28, 128, 128, 3, 1},  {28, 128, 256, 3, 2}, {28, 128, 256, 1, 2},
    {14, 256, 256, 3, 1},  {14, 256, 512, 3, 2},  {14, 256, 512, 1, 2}, {7, 512, 512, 3, 1}};

static void conv_workload(const struct loom_hw_config *cfg, const struct layer *y, struct workload *w) {
  size_t nw = (size_t)y->out_c * y->in_c * y->k * y->k;
  int8_t *wt = (int8_t *)pattern(nw);
  int32_t *bias = calloc((size_t)y->out_c, sizeof *bias), *mult = malloc(sizeof(int32_t) * (size_t)y->out_c);
  int32_t m;
  uint32_t shift;
  if (!bias || !mult || lower_quantize_multiplier(0.0073, &m, &shift)) die("layer setup", NULL);
  for (int32_t o = 0; o < y->out_c; o++) bias[o] = o * 37 - 1000, mult[o] = m;
  struct lower_qconv l = {.n = 1, .in_c = y->in_c, .in_h = y->h, .in_w = y->h, .out_c = y->out_c,
                          .k_h = y->k, .k_w = y->k, .stride_h = y->s, .stride_w = y->s,
                          .pad_t = y->k / 2, .pad_l = y->k / 2, .pad_b = y->k / 2, .pad_r = y->k / 2,
                          .dil_h = 1, .dil_w = 1, .groups = 1, .weights = wt, .bias = bias,
                          .multiplier = mult, .shift = shift, .in_zero_point = 3,
                          .out_zero_point = -1, .clamp_lo = -1, .clamp_hi = 127,
                          .flags = LOWER_CONV_ALLOW_IM2COL};
  struct lower_program p;
  char msg[LOWER_MSG_MAX];
  snprintf(w->name, sizeof w->name, "conv %d,%d,%d,%d,%d", y->h, y->in_c, y->out_c, y->k, y->s);
  if (lower_conv(cfg, &l, w->name, &p, msg)) die(w->name, msg);
  w->code = lower_program_code(&p);
  w->insn_count = p.insn_count;
  for (int s = 0; s < LOWER_SEG_COUNT; s++) {
    w->seg_bytes[s] = p.seg_bytes[s];
    if (s == LOWER_SEG_CONST) w->seg_init[s] = dup_bytes(p.const_data, p.const_bytes);
    else if (s == LOWER_SEG_IN || s == LOWER_SEG_IN2) w->seg_init[s] = pattern(p.seg_bytes[s]);
  }
  if (w->seg_bytes[LOWER_SEG_CONST] < p.const_bytes) die(w->name, "CONST segment smaller than its data");
  lower_program_free(&p);
  free(wt), free(bias), free(mult);
}

/* ---- GEMM (the shapes of tests/bench/bench_rtl.c) ---- */

struct shape {
  uint32_t m, kb, nb, tile; /* rows, K/BI blocks, N/BO blocks, BO blocks per tile */
};

/* Segments: 0 inputs [m][kb], 1 weights [kb][nb], 2 micro-ops, 3 outputs [m][nb]. */
static void gemm_segments(const struct loom_hw_config *cfg, const struct shape *sh, struct workload *w) {
  uint32_t ri = loom_hw_row_bytes(cfg, LOOM_BUF_INP, 0), rw = loom_hw_row_bytes(cfg, LOOM_BUF_WGT, 0);
  uint32_t ro = loom_hw_row_bytes(cfg, LOOM_BUF_OUT, 0);
  w->seg_bytes[0] = (size_t)sh->m * sh->kb * ri;
  w->seg_bytes[1] = (size_t)sh->kb * sh->nb * rw;
  w->seg_bytes[2] = 2u * sh->tile * LOOM_UOP_BYTES;
  w->seg_bytes[3] = (size_t)sh->m * sh->nb * ro;
  w->seg_init[0] = pattern(w->seg_bytes[0]);
  w->seg_init[1] = pattern(w->seg_bytes[1]);
  w->seg_init[2] = malloc(w->seg_bytes[2]);
  for (uint32_t h = 0; h < 2; h++)
    for (uint32_t j = 0; j < sh->tile; j++) {
      struct loom_uop op = {h * sh->m * sh->tile + j, 0, h * sh->kb * sh->tile + j};
      loom_uop_encode(&op, w->seg_init[2] + 4 * (h * sh->tile + j));
    }
}

static void take_stream(struct stream *s, struct workload *w) {
  if (s->error) die(w->name, s->error);
  w->code = dup_bytes(s->bytes, (size_t)s->count * LOOM_INSN_BYTES);
  w->insn_count = s->count;
  stream_free(s);
}

static void tile_gemm(struct stream *s, unsigned tok, const struct shape *sh, uint32_t h, int reset) {
  struct loom_insn_gemm g = {.reset = (uint32_t)reset, .uop_begin = h * sh->tile,
                             .uop_end = (h + 1) * sh->tile, .iter_out = sh->m,
                             .iter_in = reset ? 1 : sh->kb, .acc_factor_out = sh->tile};
  if (!reset) g.inp_factor_out = sh->kb, g.inp_factor_in = 1, g.wgt_factor_in = sh->tile;
  stream_gemm(s, tok, &g);
}

static void resident_load(const struct loom_hw_config *cfg, const struct shape *sh, struct workload *w) {
  struct stream s;
  snprintf(w->name, sizeof w->name, "gemm load %ux%ux%u", sh->m, sh->kb * cfg->block_in,
           sh->nb * cfg->block_out);
  gemm_segments(cfg, sh, w);
  stream_init(&s);
  stream_load(&s, 0, LOOM_BUF_UOP, 0, 2, 0, sh->tile);
  stream_load(&s, 0, LOOM_BUF_INP, 0, 0, 0, sh->m * sh->kb);
  stream_load(&s, 0, LOOM_BUF_WGT, 0, 1, 0, sh->kb * sh->nb);
  stream_finish(&s, 0);
  take_stream(&s, w);
}

static void resident_gemm(const struct loom_hw_config *cfg, const struct shape *sh, struct workload *w) {
  struct stream s;
  snprintf(w->name, sizeof w->name, "gemm resident %ux%ux%u", sh->m, sh->kb * cfg->block_in,
           sh->tile * cfg->block_out);
  gemm_segments(cfg, sh, w);
  stream_init(&s);
  tile_gemm(&s, 0, sh, 0, 0);
  stream_finish(&s, 0);
  take_stream(&s, w);
}

static void streamed_gemm(const struct loom_hw_config *cfg, const struct shape *sh, struct workload *w) {
  struct stream s;
  uint32_t tiles = sh->nb / sh->tile;
  snprintf(w->name, sizeof w->name, "gemm streamed %ux%ux%u/%u", sh->m, sh->kb * cfg->block_in,
           sh->nb * cfg->block_out, sh->tile);
  gemm_segments(cfg, sh, w);
  stream_init(&s);
  stream_load(&s, 0, LOOM_BUF_UOP, 0, 2, 0, 2 * sh->tile);
  stream_load(&s, 0, LOOM_BUF_INP, 0, 0, 0, sh->m * sh->kb);
  for (uint32_t t = 0; t < tiles; t++) {
    uint32_t h = t % 2;
    struct loom_insn_mem wl = {.buffer = LOOM_BUF_WGT, .sram_base = h * sh->kb * sh->tile, .segment = 1,
                               .dram_offset = t * sh->tile, .y_size = sh->kb, .x_size = sh->tile,
                               .x_stride = sh->nb};
    stream_load_2d(&s, STREAM_PUSH_NEXT | (t >= 2 ? STREAM_POP_NEXT : 0), &wl);
    tile_gemm(&s, t >= 2 ? STREAM_POP_NEXT : 0, sh, h, 1);
    tile_gemm(&s, STREAM_POP_PREV | STREAM_PUSH_PREV | STREAM_PUSH_NEXT, sh, h, 0);
    struct loom_insn_mem o = {.buffer = LOOM_BUF_OUT, .sram_base = h * sh->m * sh->tile, .segment = 3,
                              .dram_offset = t * sh->tile, .y_size = sh->m, .x_size = sh->tile,
                              .x_stride = sh->nb};
    stream_store_2d(&s, STREAM_POP_PREV | STREAM_PUSH_PREV, &o);
  }
  for (uint32_t i = 0; i < (tiles < 2 ? tiles : 2); i++) {
    stream_nop(&s, STREAM_POP_NEXT, LOOM_Q_LOAD);
    stream_nop(&s, STREAM_POP_NEXT, LOOM_Q_COMPUTE);
  }
  stream_finish(&s, 0);
  take_stream(&s, w);
}

/* The GEMM sweep: resident shapes (m, kb, nb = tile) and streamed ones. */
static const struct shape resident_shapes[] = {
    {16, 4, 4, 4}, {64, 16, 16, 16}, {128, 8, 8, 8}, {32, 32, 32, 32}, {1, 64, 16, 16}, {256, 4, 4, 4}};
static const struct shape streamed_shapes[] = {
    {64, 16, 128, 2}, {16, 16, 128, 2}, {32, 8, 64, 4}, {128, 4, 32, 8}, {8, 32, 64, 8}, {64, 32, 64, 4}};

/* ---- micro-benchmarks: one mechanism each ---- */

/* Segments 0..3 of 256 KiB; micro-ops 0..63 = {i, i, i} in segment 2. */
static void micro_segments(struct workload *w) {
  for (int s = 0; s < 4; s++) w->seg_bytes[s] = 256u << 10, w->seg_init[s] = pattern(w->seg_bytes[s]);
  for (uint32_t i = 0; i < 256; i++) {
    struct loom_uop op = {i, i, i % 64};
    loom_uop_encode(&op, w->seg_init[2] + 4 * i);
  }
}

enum micro_kind {
  MICRO_GEMM, MICRO_ALU_IMM, MICRO_ALU_VEC, MICRO_ALU_CHAIN, MICRO_LOAD_WGT, MICRO_LOAD_INP_STRIDED,
  MICRO_LOAD_INP_PAD, MICRO_LOAD_UOP, MICRO_LOAD_ACC, MICRO_STORE, MICRO_STORE_STRIDED,
  MICRO_TOKENS, MICRO_NOPS, MICRO_EMPTY, MICRO_QCFG, MICRO_ACC_PAD, MICRO_GEMM_SHORT, MICRO_ALU_SHORT,
  MICRO_UOP_SHORT, MICRO_INP_SHORT, MICRO_STORE_SHORT, MICRO_ACC_SHORT, MICRO_COUNT
};

static const char *const micro_names[MICRO_COUNT] = {
    "gemm", "alu imm", "alu vector", "alu chain", "load wgt", "load inp strided", "load inp padded",
    "load uop", "load acc", "store", "store strided", "tokens", "nops", "empty", "qcfg", "load acc padded",
    "gemm short", "alu short", "load uop short", "load inp short", "store short", "load acc short"};

static void micro_body(struct stream *s, enum micro_kind k, uint32_t n) {
  struct loom_insn_gemm g = {.uop_begin = 0, .uop_end = 16, .iter_out = n, .iter_in = 1};
  struct loom_insn_alu a = {.alu_op = LOOM_ALU_ADD, .use_imm = 1, .imm = 3, .uop_begin = 0, .uop_end = 16,
                            .iter_out = n, .iter_in = 1};
  struct loom_insn_mem m = {.buffer = LOOM_BUF_INP, .y_size = n, .x_size = 1, .x_stride = 4};
  switch (k) {
  case MICRO_GEMM: stream_gemm(s, 0, &g); break;
  case MICRO_ALU_IMM: stream_alu(s, 0, &a); break;
  case MICRO_ALU_VEC: a.use_imm = 0, stream_alu(s, 0, &a); break;
  case MICRO_ALU_CHAIN: a.uop_begin = 5, a.uop_end = 6, stream_alu(s, 0, &a); break;
  case MICRO_LOAD_WGT: stream_load(s, 0, LOOM_BUF_WGT, 0, 1, 0, n); break;
  case MICRO_LOAD_INP_STRIDED: stream_load_2d(s, 0, &m); break;
  case MICRO_LOAD_INP_PAD:
    m.y_size = n / 8, m.x_size = 8, m.x_stride = 8, m.y_pad_top = m.y_pad_bottom = 2;
    m.x_pad_left = m.x_pad_right = 3;
    stream_load_2d(s, 0, &m);
    break;
  case MICRO_LOAD_UOP: stream_load(s, 0, LOOM_BUF_UOP, 0, 2, 1, n); break;
  case MICRO_LOAD_ACC: stream_load(s, 0, LOOM_BUF_ACC, 0, 1, 0, n); break;
  case MICRO_STORE: stream_store(s, 0, 0, 3, 0, n); break;
  case MICRO_STORE_STRIDED:
    m.buffer = LOOM_BUF_OUT, m.segment = 3;
    stream_store_2d(s, 0, &m);
    break;
  case MICRO_TOKENS: /* a token ping-pong: load -> compute -> store -> compute -> load */
    for (uint32_t i = 0; i < n; i++) {
      stream_nop(s, STREAM_PUSH_NEXT | (i ? STREAM_POP_NEXT : 0), LOOM_Q_LOAD);
      stream_nop(s, STREAM_POP_PREV | STREAM_PUSH_NEXT, LOOM_Q_COMPUTE);
      stream_nop(s, STREAM_POP_PREV | STREAM_PUSH_PREV, LOOM_Q_STORE);
      stream_nop(s, STREAM_POP_NEXT | STREAM_PUSH_PREV, LOOM_Q_COMPUTE);
    }
    stream_nop(s, STREAM_POP_NEXT, LOOM_Q_LOAD);
    break;
  case MICRO_NOPS: /* fetch-bound: alternating queues */
    for (uint32_t i = 0; i < n; i++) stream_nop(s, 0, i % 3);
    break;
  case MICRO_EMPTY: /* instructions that do nothing: empty loops and transfers */
    for (uint32_t i = 0; i < n / 4; i++) {
      g.iter_out = 0, stream_gemm(s, 0, &g);
      a.iter_out = 0, stream_alu(s, 0, &a);
      m.y_size = 0, stream_load_2d(s, 0, &m);
      m.buffer = LOOM_BUF_OUT, m.segment = 3, stream_store_2d(s, 0, &m);
      m.buffer = LOOM_BUF_INP, m.segment = 0;
    }
    break;
  case MICRO_QCFG: {
    struct loom_insn_qcfg q = {.multiplier = 1 << 30, .shift = 8, .clamp_lo = -128, .clamp_hi = 127};
    for (uint32_t i = 0; i < n; i++) stream_qcfg(s, 0, &q);
    break;
  }
  case MICRO_ACC_PAD:
    m.buffer = LOOM_BUF_ACC, m.y_size = n / 8, m.x_size = 8, m.x_stride = 8, m.y_pad_top = 1;
    m.x_pad_left = m.x_pad_right = 1, m.src_int8 = 1;
    stream_load_2d(s, 0, &m);
    break;
  case MICRO_GEMM_SHORT: /* many 4-micro-op GEMMs */
    g.uop_end = 4, g.iter_out = 1;
    for (uint32_t i = 0; i < n; i++) stream_gemm(s, 0, &g);
    break;
  case MICRO_ALU_SHORT: /* many 4-micro-op ALU instructions */
    a.uop_end = 4, a.iter_out = 1;
    for (uint32_t i = 0; i < n; i++) stream_alu(s, 0, &a);
    break;
  case MICRO_INP_SHORT: /* many 4-row loads of each kind */
    for (uint32_t i = 0; i < n; i++) stream_load(s, 0, LOOM_BUF_INP, 4 * (i % 64), 0, 4 * i, 4);
    break;
  case MICRO_STORE_SHORT:
    for (uint32_t i = 0; i < n; i++) stream_store(s, 0, 4 * (i % 64), 3, 4 * i, 4);
    break;
  case MICRO_ACC_SHORT:
    for (uint32_t i = 0; i < n; i++) stream_load(s, 0, LOOM_BUF_ACC, 4 * (i % 64), 1, 4 * (i % 64), 4);
    break;
  case MICRO_UOP_SHORT: /* many 4-micro-op UOP loads */
    for (uint32_t i = 0; i < n; i++) stream_load(s, 0, LOOM_BUF_UOP, 4 * (i % 64), 2, 4 * (i % 64), 4);
    break;
  default: break;
  }
}

static void micro_workload(enum micro_kind k, uint32_t n, struct workload *w) {
  struct stream s;
  snprintf(w->name, sizeof w->name, "micro %s %u", micro_names[k], n);
  micro_segments(w);
  stream_init(&s);
  if (k <= MICRO_ALU_CHAIN || k == MICRO_GEMM_SHORT || k == MICRO_ALU_SHORT) stream_load(&s, 0, LOOM_BUF_UOP, 0, 2, 0, 64);
  micro_body(&s, k, n);
  stream_finish(&s, 0);
  take_stream(&s, w);
}

static int make_workloads(const struct loom_hw_config *cfg, struct workload *w) {
  int n = 0;
  for (int i = 0; i < 12; i++) conv_workload(cfg, &resnet18[i], &w[n++]);
  for (size_t i = 0; i < sizeof resident_shapes / sizeof resident_shapes[0]; i++) {
    resident_load(cfg, &resident_shapes[i], &w[n++]);
    resident_gemm(cfg, &resident_shapes[i], &w[n++]);
  }
  for (size_t i = 0; i < sizeof streamed_shapes / sizeof streamed_shapes[0]; i++)
    streamed_gemm(cfg, &streamed_shapes[i], &w[n++]);
  return n;
}

static int make_micro(struct workload *w) {
  static const uint32_t sizes[] = {8, 64, 512};
  int n = 0;
  for (int k = 0; k < MICRO_COUNT; k++)
    for (int j = 0; j < 3; j++) micro_workload((enum micro_kind)k, sizes[j], &w[n++]);
  return n;
}

/* A constrained-random job of tests/support/randstream.c (--random). */
static void random_workload(const struct loom_hw_config *cfg, uint64_t seed, struct workload *w) {
  struct randstream_knobs k;
  struct randstream rs;
  char msg[256];
  randstream_knobs_default(&k);
  if (randstream_build(cfg, seed, &k, &rs, msg, sizeof msg)) die("randstream", msg);
  snprintf(w->name, sizeof w->name, "random seed %llu", (unsigned long long)seed);
  w->code = dup_bytes(rs.insns, (size_t)rs.insn_count * LOOM_INSN_BYTES);
  w->insn_count = rs.insn_count;
  for (int s = 0; s < LOOM_NUM_SEGMENTS; s++) {
    w->seg_bytes[s] = rs.seg[s].size;
    if (rs.seg[s].size) w->seg_init[s] = dup_bytes(rs.seg[s].data, rs.seg[s].size);
  }
  randstream_free(&rs);
}

/* --pick SEED:I,J,...: instructions I, J, ... of random job SEED, token
 * flags cleared, then FINISH (to isolate what an instruction costs). */
static void picked_workload(const struct loom_hw_config *cfg, const char *spec, struct workload *w) {
  char *end;
  uint64_t seed = strtoull(spec, &end, 10);
  random_workload(cfg, seed, w);
  snprintf(w->name, sizeof w->name, "pick %s", spec);
  struct stream s;
  stream_init(&s);
  while (*end == ':' || *end == ',') {
    uint32_t i = (uint32_t)strtoul(end + 1, &end, 10);
    struct loom_insn in;
    const char *why;
    if (i >= w->insn_count || loom_insn_decode(w->code + 16u * i, &in, &why)) die("--pick", spec);
    in.pop_prev = in.pop_next = in.push_prev = in.push_next = 0;
    stream_emit(&s, &in);
  }
  stream_finish(&s, 0);
  free(w->code);
  take_stream(&s, w);
}

static void free_workload(struct workload *w) {
  free(w->code);
  for (int s = 0; s < 8; s++) free(w->seg_init[s]);
}

/* ---- running ---- */

static loom_buffer *buffer(loom_device *dev, size_t bytes, const uint8_t *init) {
  loom_buffer *b;
  if (loom_buffer_alloc(dev, bytes ? bytes : 64, &b) != LOOM_OK) die("alloc", loom_device_error(dev));
  if (init) memcpy(loom_buffer_map(b), init, bytes);
  else memset(loom_buffer_map(b), 0, bytes);
  return b;
}

static void run(loom_device *dev, const struct workload *w, struct outcome *o) {
  struct loom_job job = {.insn_count = w->insn_count};
  struct loom_job_result res;
  job.insns = buffer(dev, (size_t)w->insn_count * LOOM_INSN_BYTES, w->code);
  for (int s = 0; s < 8; s++)
    if (w->seg_bytes[s]) job.segments[s] = buffer(dev, w->seg_bytes[s], w->seg_init[s]);
  loom_status st = loom_job_run(dev, &job, 0, &res);
  if (st != LOOM_OK && st != LOOM_E_JOB) die(w->name, loom_device_error(dev));
  o->error = res.error;
  memcpy(o->counters, res.counters, sizeof o->counters);
  if (res.error) fprintf(stderr, "timing_agree: %s: error %u: %s\n", w->name, res.error, res.message);
  loom_buffer_free(job.insns);
  for (int s = 0; s < 8; s++) loom_buffer_free(job.segments[s]);
}

static loom_device *open_dev(const char *backend, const char *options) {
  loom_device *dev;
  char msg[LOOM_MSG_MAX];
  if (loom_device_open(backend, options, &dev, msg) != LOOM_OK) die(backend, msg);
  return dev;
}

/* tsim's results, from the cache file when it has them. */
static int cache_find(const char *path, const char *name, struct outcome *o) {
  FILE *f = path ? fopen(path, "r") : NULL;
  char line[1024];
  if (!f) return 0;
  while (fgets(line, sizeof line, f)) {
    char *tab = strchr(line, '\t');
    if (!tab || (size_t)(tab - line) != strlen(name) || strncmp(line, name, (size_t)(tab - line))) continue;
    char *p = tab + 1;
    o->error = (uint32_t)strtoul(p, &p, 10);
    for (int c = 0; c < LOOM_CNT_COUNT; c++) o->counters[c] = strtoull(p, &p, 10);
    fclose(f);
    return 1;
  }
  fclose(f);
  return 0;
}

static void cache_add(const char *path, const char *name, const struct outcome *o) {
  FILE *f = path ? fopen(path, "a") : NULL;
  if (!f) return;
  fprintf(f, "%s\t%u", name, o->error);
  for (int c = 0; c < LOOM_CNT_COUNT; c++) fprintf(f, " %llu", (unsigned long long)o->counters[c]);
  fprintf(f, "\n");
  fclose(f);
}

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void print_detail(const char *who, const struct outcome *o) {
  static const int c[] = {LOOM_CNT_LOAD_BUSY,    LOOM_CNT_LOAD_TOKEN_STALL,    LOOM_CNT_LOAD_MEM_STALL,
                          LOOM_CNT_COMPUTE_BUSY, LOOM_CNT_COMPUTE_TOKEN_STALL, LOOM_CNT_COMPUTE_MEM_STALL,
                          LOOM_CNT_STORE_BUSY,   LOOM_CNT_STORE_TOKEN_STALL,   LOOM_CNT_STORE_MEM_STALL};
  printf("    %-5s busy/tok/mem  load %9llu %9llu %9llu  compute %9llu %9llu %9llu  store %9llu %9llu %9llu\n",
         who, (unsigned long long)o->counters[c[0]], (unsigned long long)o->counters[c[1]],
         (unsigned long long)o->counters[c[2]], (unsigned long long)o->counters[c[3]],
         (unsigned long long)o->counters[c[4]], (unsigned long long)o->counters[c[5]],
         (unsigned long long)o->counters[c[6]], (unsigned long long)o->counters[c[7]],
         (unsigned long long)o->counters[c[8]]);
}

/* --trace: fsim's timeline of the last job, one slice per line. */
static void print_trace(const loom_device *dev) {
  static const char *const mods[] = {"fetch", "load", "compute", "store"};
  static const char *const kinds[] = {"insn", "token", "mem"};
  size_t n;
  const struct loom_trace_event *e = loom_device_trace(dev, &n);
  for (size_t i = 0; i < n; i++)
    printf("  trace %-7s %-5s insn %5u op %u  [%llu, %llu)\n", mods[e[i].module % 4], kinds[e[i].kind % 3],
           e[i].insn, e[i].opcode, (unsigned long long)e[i].begin, (unsigned long long)e[i].end);
}

/* 1 when the exact counters of the two runs differ. */
static int exact_mismatch(const struct outcome *a, const struct outcome *b) {
  if (a->error != b->error) return 1;
  for (int c = 0; c < LOOM_CNT_COUNT; c++)
    if ((LOOM_COUNTER_EXACT_MASK >> c & 1u) && a->counters[c] != b->counters[c]) return 1;
  return 0;
}

int main(int argc, char **argv) {
  double tol = 5.0;
  const char *only = NULL, *cache = NULL, *lib = NULL, *topt = NULL, *config = "default", *pick = NULL;
  int fsim_only = 0, verbose = 0, random = 0, show_trace = 0, random_only = 0, micro = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--tol") && i + 1 < argc) tol = atof(argv[++i]);
    else if (!strcmp(argv[i], "--only") && i + 1 < argc) only = argv[++i];
    else if (!strcmp(argv[i], "--tsim-cache") && i + 1 < argc) cache = argv[++i];
    else if (!strcmp(argv[i], "--tsim-lib") && i + 1 < argc) lib = argv[++i];
    else if (!strcmp(argv[i], "--tsim-opts") && i + 1 < argc) topt = argv[++i];
    else if (!strcmp(argv[i], "--fsim-only")) fsim_only = 1;
    else if (!strcmp(argv[i], "--config") && i + 1 < argc) config = argv[++i];
    else if (!strcmp(argv[i], "--random-only")) random_only = 1;
    else if (!strcmp(argv[i], "--micro")) micro = 1;
    else if (!strcmp(argv[i], "--pick") && i + 1 < argc) pick = argv[++i];
    else if (!strcmp(argv[i], "--random") && i + 1 < argc) random = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--verbose")) verbose = 1;
    else if (!strcmp(argv[i], "--trace")) show_trace = 1;
    else {
      fprintf(stderr, "usage: timing_agree [--tol PCT] [--only SUBSTR] [--tsim-cache FILE] "
                      "[--tsim-lib PATH] [--tsim-opts OPTS] [--fsim-only] [--verbose] [--trace] "
                      "[--random N] [--random-only] [--config NAME] [--micro] [--pick SEED:I,J,...]\n");
      return 2;
    }
  }
  const struct loom_hw_config *cfg = loom_hw_config_by_name(config);
  if (!cfg) die("unknown configuration", config);
  static struct workload w[MAX_WORKLOADS];
  int n = random_only ? 0 : make_workloads(cfg, w);
  if (micro) n += make_micro(w + n);
  if (pick) picked_workload(cfg, pick, &w[n++]);
  for (int i = 0; i < random && n < MAX_WORKLOADS; i++) random_workload(cfg, (uint64_t)i + 1, &w[n++]);
  char topts[512], fopts[128];
  snprintf(fopts, sizeof fopts, "config=%s,timing=1", config);
  snprintf(topts, sizeof topts, "config=%s%s%s%s%s", config, lib ? ",lib=" : "", lib ? lib : "",
           topt ? "," : "", topt ? topt : "");
  loom_device *fdev = open_dev("fsim", fopts), *tdev = NULL;
  if (show_trace && loom_device_set_trace(fdev, 1) != LOOM_OK) die("set_trace", loom_device_error(fdev));
  int bad = 0;
  double worst = 0, fsim_secs = 0, tsim_secs = 0;
  printf("%-28s %12s %12s %8s\n", "workload", "tsim cycles", "fsim cycles", "error");
  for (int i = 0; i < n; i++) {
    if (only && !strstr(w[i].name, only)) continue;
    struct outcome f, t;
    double t0 = now_s();
    run(fdev, &w[i], &f);
    fsim_secs += now_s() - t0;
    if (show_trace) print_trace(fdev);
    if (fsim_only) {
      printf("%-28s %12s %12llu\n", w[i].name, "-", (unsigned long long)f.counters[LOOM_CNT_CYCLES]);
      if (verbose) print_detail("fsim", &f);
      continue;
    }
    if (!cache_find(cache, w[i].name, &t)) {
      if (!tdev) tdev = open_dev("tsim", topts);
      t0 = now_s();
      run(tdev, &w[i], &t);
      tsim_secs += now_s() - t0;
      cache_add(cache, w[i].name, &t);
    }
    double tc = (double)t.counters[LOOM_CNT_CYCLES], fc = (double)f.counters[LOOM_CNT_CYCLES];
    double err = tc > 0 ? 100.0 * (fc - tc) / tc : 100.0;
    int exact_bad = exact_mismatch(&f, &t);
    int fail = exact_bad || err > tol || err < -tol;
    if (err > worst || -err > worst) worst = err < 0 ? -err : err;
    printf("%-28s %12llu %12llu %+7.2f%%%s%s\n", w[i].name,
           (unsigned long long)t.counters[LOOM_CNT_CYCLES],
           (unsigned long long)f.counters[LOOM_CNT_CYCLES], err, fail ? "  FAIL" : "",
           exact_bad ? " (exact counters or error differ)" : "");
    if (verbose) print_detail("tsim", &t), print_detail("fsim", &f);
    bad += fail;
  }
  printf("fsim: %.3f s for all workloads", fsim_secs);
  if (!fsim_only) printf("; tsim: %.1f s; worst error %.2f%% (tolerance %.1f%%)", tsim_secs, worst, tol);
  printf("\n");
  if (bad) printf("timing_agree: %d workload(s) outside the tolerance\n", bad);
  for (int i = 0; i < n; i++) free_workload(&w[i]);
  loom_device_close(fdev);
  if (tdev) loom_device_close(tdev);
  return bad ? 1 : 0;
}
