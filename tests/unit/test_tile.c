/*
 * test_tile.c - the tiler, the double-buffering discipline and the cost
 * model (sw_compiler/tile.c, emit.c, cost_model.c).
 *
 *  - the chosen tiles fit the buffers, restated here from the hardware
 *    configuration: ACC / INP / WGT halves, micro-ops, field widths;
 *  - every SRAM access of a lowered program stays inside one buffer half,
 *    and chunk k really uses INP half k % 2 and tile o ACC half o % 2
 *    (recomputed from the instructions: loads, GEMM and ALU loop ranges,
 *    stores);
 *  - the dependency tokens balance, and the cost model's timed walk flags
 *    a stream that waits for a token nobody pushes;
 *  - the search is deterministic, and its chunk-level estimate agrees with
 *    the instruction-level walk;
 *  - the twelve ResNet-18 convolution workloads of DESIGN.md on the default
 *    configuration: a table of MACs, tiles, estimated cycles, utilization
 *    and the fraction of the roofline bound (printed, not asserted), each
 *    run once on fsim with random data and checked bit for bit; then the
 *    rest of the network (max pooling, the convolutions with their residual
 *    Add fused, GlobalAveragePool, the classifier) for a whole-network
 *    estimate.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ref_qconv.h"

struct layer {
  int32_t h, in_c, out_c, k, s;
};

/* DESIGN.md: H=W, in C, out C, kernel, stride, and how often ResNet-18 has it. */
static const struct layer resnet18[12] = {
    {224, 3, 64, 7, 2},    {56, 64, 64, 3, 1},    {56, 64, 64, 1, 1},   {56, 64, 128, 3, 2},
    {56, 64, 128, 1, 2},   {28, 128, 128, 3, 1},  {28, 128, 256, 3, 2}, {28, 128, 256, 1, 2},
    {14, 256, 256, 3, 1},  {14, 256, 512, 3, 2},  {14, 256, 512, 1, 2}, {7, 512, 512, 3, 1}};
static const int resnet18_count[12] = {1, 4, 0, 1, 1, 3, 1, 1, 3, 1, 1, 3};
/* How many of those end a basic block, with the residual Add fused in. */
static const int resnet18_residual[12] = {0, 2, 0, 0, 0, 2, 0, 0, 2, 0, 0, 2};

struct owned_conv {
  struct lower_qconv l;
  struct lower_qresidual res;
  int8_t *w;
  int32_t *bias, *mult;
};

static void make_layer(const struct layer *y, uint32_t flags, struct owned_conv *c, uint64_t seed) {
  struct ref_q_rng r = {seed};
  memset(c, 0, sizeof *c);
  size_t nw = (size_t)y->out_c * y->in_c * y->k * y->k;
  c->w = malloc(nw);
  c->bias = malloc(sizeof(int32_t) * (size_t)y->out_c);
  c->mult = malloc(sizeof(int32_t) * (size_t)y->out_c);
  ref_q_fill(&r, c->w, nw, -128, 127);
  int32_t m;
  uint32_t shift;
  assert_int_equal(lower_quantize_multiplier(40.0 / (74.0 * 74.0 * 40.0), &m, &shift), 0);
  for (int32_t o = 0; o < y->out_c; o++) {
    c->bias[o] = ref_q_range(&r, -100000, 100000);
    c->mult[o] = m / 2 + (int32_t)(ref_q_rand(&r) % (uint32_t)(m / 2));
  }
  struct lower_qconv l = {.n = 1, .in_c = y->in_c, .in_h = y->h, .in_w = y->h, .out_c = y->out_c,
                          .k_h = y->k, .k_w = y->k, .stride_h = y->s, .stride_w = y->s,
                          .pad_t = y->k / 2, .pad_l = y->k / 2, .pad_b = y->k / 2, .pad_r = y->k / 2,
                          .dil_h = 1, .dil_w = 1, .groups = 1, .weights = c->w, .bias = c->bias,
                          .multiplier = c->mult, .shift = shift, .in_zero_point = 3,
                          .out_zero_point = -1, .clamp_lo = -1, .clamp_hi = 127, .flags = flags};
  c->l = l;
}

static void free_layer(struct owned_conv *c) { free(c->w), free(c->bias), free(c->mult); }

/* ---- the tiles fit ---- */

static void check_fit(const struct loom_hw_config *cfg, const struct lower_program *p,
                      const struct lower_qconv *l) {
  const struct lower_tiling *t = &p->report.tiling;
  int32_t B = cfg->block_in, kk = l->k_h * l->k_w, in_blocks = t->tci;
  int im2col = p->report.kind == LOWER_KIND_CONV_IM2COL, dw = p->report.kind == LOWER_KIND_DWCONV;
  int32_t cob = (l->out_c + B - 1) / B, cib = im2col ? (l->in_c * kk + B - 1) / B : (l->in_c + B - 1) / B;
  if (im2col) kk = 1;
  int32_t kh = im2col ? 1 : l->k_h, kw = im2col ? 1 : l->k_w, sh = im2col ? 1 : l->stride_h;
  int32_t sw = im2col ? 1 : l->stride_w;
  int32_t ih = kh == 1 && sh > 1 && l->pad_t == 0 && l->pad_b == 0 ? t->th : (t->th - 1) * sh + kh;
  int32_t iw = (t->tw - 1) * sw + kw;
  assert_true(t->th * t->tw * t->tco <= cfg->acc_rows / 2); /* ISA v2: no ACC parameter rows */
  assert_true(in_blocks * ih * iw <= cfg->inp_rows / 2);
  if (t->wgt == TILE_WGT_STREAM)
    assert_true(t->tco * (dw ? 1 : t->tci) * kk <= cfg->wgt_rows / 2);
  else
    assert_true(cob * (dw ? 1 : cib) * kk <= cfg->wgt_rows);
  assert_true(p->uop_count <= (uint32_t)cfg->uop_rows);
  assert_true(p->uop_count <= t->uops); /* the tiler's count is an upper bound */
}

/* ---- every access inside one half ---- */

struct halves {
  uint32_t acc0, acc_half, inp_half, wgt_half; /* wgt_half 0: resident */
};

static int half_of(uint32_t lo, uint32_t hi, uint32_t base, uint32_t half) {
  if (lo < base || hi > base + 2 * half) return -1;
  int a = (int)((lo - base) / half), b = (int)((hi - 1 - base) / half);
  return a == b ? a : -1;
}

/* Range [lo, hi) of field values a loop touches: micro-op value + loops. */
static void loop_range(const struct lower_program *p, uint32_t ub, uint32_t ue, int field, uint32_t io,
                       uint32_t ii, uint32_t fo, uint32_t fi, uint32_t *lo, uint32_t *hi) {
  *lo = UINT32_MAX, *hi = 0;
  for (uint32_t u = ub; u < ue; u++) {
    const struct loom_uop *x = &p->uops[u];
    uint32_t v = field == 0 ? x->acc : field == 1 ? x->inp : x->wgt;
    if (v < *lo) *lo = v;
    if (v + 1 > *hi) *hi = v + 1;
  }
  *hi += (io - 1) * fo + (ii - 1) * fi;
}

static void check_halves(const struct lower_program *p, const struct halves *h) {
  int gemm = 0, prev_inp = -1, prev_acc = -1, acc_switches = 0;
  for (uint32_t i = 0; i < p->insn_count; i++) {
    const struct loom_insn *in = &p->insns[i];
    const struct loom_insn_mem *m = &in->mem;
    uint32_t rows = (m->y_pad_top + m->y_size + m->y_pad_bottom) * (m->x_pad_left + m->x_size + m->x_pad_right);
    if (in->opcode == LOOM_OP_LOAD && m->buffer == LOOM_BUF_INP)
      assert_true(half_of(m->sram_base, m->sram_base + rows, 0, h->inp_half) >= 0);
    if (in->opcode == LOOM_OP_LOAD && m->buffer == LOOM_BUF_WGT && h->wgt_half)
      assert_true(half_of(m->sram_base, m->sram_base + rows, 0, h->wgt_half) >= 0);
    if (in->opcode == LOOM_OP_STORE)
      assert_true(half_of(m->sram_base, m->sram_base + m->x_size * m->y_size, h->acc0, h->acc_half) >= 0);
    if (in->opcode == LOOM_OP_GEMM) {
      const struct loom_insn_gemm *g = &in->gemm;
      uint32_t lo, hi;
      loop_range(p, g->uop_begin, g->uop_end, 1, g->iter_out, g->iter_in, g->inp_factor_out, g->inp_factor_in, &lo, &hi);
      int ih = half_of(lo, hi, 0, h->inp_half);
      assert_true(ih == gemm % 2); /* chunk k reads INP half k % 2 */
      loop_range(p, g->uop_begin, g->uop_end, 0, g->iter_out, g->iter_in, g->acc_factor_out, g->acc_factor_in, &lo, &hi);
      int ah = half_of(lo, hi, h->acc0, h->acc_half);
      assert_true(ah >= 0);
      if (prev_acc >= 0 && ah != prev_acc) acc_switches++, assert_true(ah == 1 - prev_acc);
      if (h->wgt_half) {
        loop_range(p, g->uop_begin, g->uop_end, 2, g->iter_out, g->iter_in, g->wgt_factor_out, g->wgt_factor_in, &lo, &hi);
        assert_true(half_of(lo, hi, 0, h->wgt_half) == ih);
      }
      prev_inp = ih, prev_acc = ah, gemm++;
    }
    if (in->opcode == LOOM_OP_ALU) {
      const struct loom_insn_alu *a = &in->alu;
      uint32_t lo, hi;
      loop_range(p, a->uop_begin, a->uop_end, 0, a->iter_out, a->iter_in, a->dst_factor_out, a->dst_factor_in, &lo, &hi);
      assert_true(half_of(lo, hi, h->acc0, h->acc_half) >= 0);
      if (!a->use_imm) { /* sources: parameter rows */
        loop_range(p, a->uop_begin, a->uop_end, 1, a->iter_out, a->iter_in, a->src_factor_out, a->src_factor_in, &lo, &hi);
        assert_true(hi <= h->acc0);
      }
    }
  }
  (void)prev_inp;
  assert_true(gemm > 0);
  assert_true(acc_switches > 0 || p->report.tiling.tiles == 1);
}

/* Pushes and pops of the four token queues cancel out. */
static void check_tokens(const struct lower_program *p) {
  int bal[4] = {0}; /* L2C, C2L, C2S, S2C */
  for (uint32_t i = 0; i < p->insn_count; i++) {
    const struct loom_insn *in = &p->insns[i];
    switch (loom_insn_queue(in)) {
    case LOOM_Q_LOAD: bal[1] -= (int)in->pop_next, bal[0] += (int)in->push_next; break;
    case LOOM_Q_COMPUTE:
      bal[0] -= (int)in->pop_prev, bal[3] -= (int)in->pop_next;
      bal[1] += (int)in->push_prev, bal[2] += (int)in->push_next;
      break;
    default: bal[2] -= (int)in->pop_prev, bal[3] += (int)in->push_prev; break;
    }
  }
  for (int q = 0; q < 4; q++) assert_int_equal(bal[q], 0);
}

static void test_invariants(void **state) {
  (void)state;
  static const struct layer extra[] = {{30, 20, 36, 3, 1}, {17, 40, 24, 3, 2}, {12, 100, 60, 1, 1}, {9, 8, 72, 5, 1}};
  for (int c = 0; c < LOOM_CONFIG_COUNT; c++) {
    const struct loom_hw_config *cfg = &loom_hw_configs[c];
    for (int i = 0; i < 16; i++) {
      const struct layer *y = i < 12 ? &resnet18[i] : &extra[i - 12];
      if (i < 12 && cfg->block_in < 16) continue; /* tiny: only the small layers */
      struct owned_conv oc;
      make_layer(y, LOWER_CONV_ALLOW_IM2COL, &oc, (uint64_t)i + 1);
      struct lower_program p;
      char msg[LOWER_MSG_MAX];
      int rc = lower_conv(cfg, &oc.l, "invariants", &p, msg);
      if (rc) fprintf(stderr, "%s\n", msg);
      assert_int_equal(rc, 0);
      check_fit(cfg, &p, &oc.l);
      struct halves h = {0, (uint32_t)cfg->acc_rows / 2, (uint32_t)cfg->inp_rows / 2, /* no ACC parameter rows */
                         p.report.tiling.wgt == TILE_WGT_STREAM ? (uint32_t)cfg->wgt_rows / 2 : 0};
      check_halves(&p, &h);
      check_tokens(&p);
      lower_program_free(&p);
      free_layer(&oc);
    }
  }
}

/* ---- determinism and the two cost levels ---- */

static void test_deterministic(void **state) {
  (void)state;
  const struct loom_hw_config *cfg = loom_hw_config_by_name("default");
  for (int i = 1; i < 12; i += 3) {
    struct owned_conv oc;
    make_layer(&resnet18[i], 0, &oc, 5);
    struct lower_program a, b;
    char msg[LOWER_MSG_MAX];
    assert_int_equal(lower_conv(cfg, &oc.l, "det", &a, msg), 0);
    assert_int_equal(lower_conv(cfg, &oc.l, "det", &b, msg), 0);
    assert_int_equal(a.insn_count, b.insn_count);
    assert_memory_equal(a.insns, b.insns, sizeof *a.insns * a.insn_count);
    assert_memory_equal(&a.report.tiling, &b.report.tiling, sizeof a.report.tiling);
    /* the tiler's chunk model and the instruction walk agree within 2% */
    double ratio = (double)a.report.tiling.est_cycles / (double)a.report.est_cycles;
    assert_true(ratio > 0.98 && ratio < 1.02);
    lower_program_free(&a), lower_program_free(&b);
    free_layer(&oc);
  }
}

/* A compute instruction waiting for a load token nobody pushes. */
static void test_cost_deadlock(void **state) {
  (void)state;
  const struct loom_hw_config *cfg = loom_hw_config_by_name("tiny");
  struct loom_insn s[3];
  memset(s, 0, sizeof s);
  s[0].opcode = LOOM_OP_GEMM, s[0].pop_prev = 1;
  s[1].opcode = LOOM_OP_FINISH;
  struct cost_sim sim;
  cost_simulate(cfg, s, 2, NULL, 0, &sim);
  assert_true(sim.deadlock);
  assert_int_equal(sim.stuck_insn, 0);
  s[0] = emit_mem(LOOM_OP_LOAD, LOOM_BUF_INP, 0, 1, 0, 1, 4, 4);
  s[0].push_next = 1;
  s[1] = emit_gemm(0, 1, 1, 1, 0, 0, 0, 0, 0, 0);
  s[1].pop_prev = 1;
  s[2].opcode = LOOM_OP_FINISH;
  cost_simulate(cfg, s, 3, NULL, 0, &sim);
  assert_false(sim.deadlock);
  assert_true(sim.cycles >= cost_dma(cfg, 4 * 8, 1, 0) + cost_gemm(1));
}

/* ---- ResNet-18 ---- */

static void run_workload(const struct loom_hw_config *cfg, const struct lower_program *p,
                         const struct lower_qconv *l, uint64_t seed) {
  struct ref_q_rng r = {seed};
  const struct lower_act *ia = &p->act[LOWER_SEG_IN], *oa = &p->act[LOWER_SEG_OUT];
  size_t nx = (size_t)l->in_c * l->in_h * l->in_w, ny = (size_t)oa->c * oa->h * oa->w;
  int8_t *x = malloc(nx), *packed = malloc(ia->bytes), *out = malloc(oa->bytes);
  int8_t *y = malloc(ny), *ref = malloc(ny), *res = NULL, *res_packed = NULL;
  ref_q_fill(&r, x, nx, -128, 127);
  lower_act_pack(ia, x, 0, packed);
  if (l->residual) {
    res = malloc(ny), res_packed = malloc(oa->bytes);
    ref_q_fill(&r, res, ny, -128, 127);
    lower_act_pack(oa, res, 0, res_packed);
  }
  struct fsim_result fr;
  assert_int_equal(ref_q_run_fsim_timed(p, packed, res_packed, out, &fr), LOOM_ERR_NONE);
  assert_int_equal(ref_q_counter_mismatch(p, &fr), -1);
  /* The cost model follows the RTL: its estimate within 4% of fsim's
   * timing model (itself within 0.01% of tsim on these workloads). With
   * one-cycle vector ALU operands it was up to 26% low. */
  double err = ((double)p->report.est_cycles - (double)fr.counters[LOOM_CNT_CYCLES]) /
               (double)fr.counters[LOOM_CNT_CYCLES];
  printf("  estimate %llu, fsim --timing %llu (%+.1f%%)\n", (unsigned long long)p->report.est_cycles,
         (unsigned long long)fr.counters[LOOM_CNT_CYCLES], 100.0 * err);
  assert_true(err > -0.04 && err < 0.04);
  ref_from_nchwc(out, 1, oa->c, oa->h, oa->w, oa->block, y);
  ref_qconv(l, x, res, ref);
  assert_memory_equal(y, ref, ny);
  free(x), free(packed), free(out), free(y), free(ref), free(res), free(res_packed);
}

/* Estimated cycles of a lowered layer (asserting it lowers). */
static uint64_t layer_cycles(int rc, struct lower_program *p, const char *name, const char *msg) {
  if (rc) fprintf(stderr, "%s\n", msg);
  assert_int_equal(rc, 0);
  lower_report_print(stdout, name, &p->report, 0);
  uint64_t c = p->report.est_cycles;
  lower_program_free(p);
  return c;
}

/* A program's estimate against fsim's timing model on random input (the
 * timing does not depend on the values). */
static void check_estimate(const struct lower_program *p, uint64_t seed) {
  struct ref_q_rng r = {seed};
  int8_t *in = malloc(p->seg_bytes[LOWER_SEG_IN]), *out = malloc(p->seg_bytes[LOWER_SEG_OUT]);
  ref_q_fill(&r, in, p->seg_bytes[LOWER_SEG_IN], -128, 127);
  struct fsim_result fr;
  assert_int_equal(ref_q_run_fsim_timed(p, in, NULL, out, &fr), LOOM_ERR_NONE);
  double err = ((double)p->report.est_cycles - (double)fr.counters[LOOM_CNT_CYCLES]) /
               (double)fr.counters[LOOM_CNT_CYCLES];
  printf("  estimate %llu, fsim --timing %llu (%+.1f%%)\n", (unsigned long long)p->report.est_cycles,
         (unsigned long long)fr.counters[LOOM_CNT_CYCLES], 100.0 * err);
  assert_true(err > -0.04 && err < 0.04);
  free(in), free(out);
}

/* The rest of ResNet-18: stem max pooling, the classifier, and the
 * convolutions that end a basic block with their residual Add fused. */
static uint64_t resnet18_rest(const struct loom_hw_config *cfg) {
  struct lower_program p;
  char msg[LOWER_MSG_MAX];
  uint64_t total = 0;
  struct lower_qpool mp = {LOWER_POOL_MAX, 1, 64, 112, 112, 3, 3, 2, 2, 1, 1, 1, 1, 0, 0, 0, 0, -128, 127, 0};
  int rc = lower_pool(cfg, &mp, "maxpool", &p, msg);
  if (rc == 0) check_estimate(&p, 11); /* it was 37% low with nine vector taps per output */
  total += layer_cycles(rc, &p, "maxpool 112,64,3,2", msg);
  for (int i = 0; i < 12; i++) {
    if (!resnet18_residual[i]) continue;
    struct owned_conv oc;
    make_layer(&resnet18[i], 0, &oc, 300 + (uint64_t)i);
    struct lower_qresidual res = {90, 70, 2, 1 << 30, 38, -1, -1, 127, 0};
    oc.res = res;
    oc.l.residual = &oc.res;
    char name[48];
    snprintf(name, sizeof name, "%d,%d,%d,%d,%d", resnet18[i].h, resnet18[i].in_c,
             resnet18[i].out_c, resnet18[i].k, resnet18[i].s);
    int rc = lower_conv(cfg, &oc.l, name, &p, msg);
    if (i == 1 && rc == 0) run_workload(cfg, &p, &oc.l, 77); /* one fused layer, bit for bit */
    uint64_t fused = layer_cycles(rc, &p, name, msg);
    oc.l.residual = NULL; /* the same convolution without the Add, as counted in the table */
    assert_int_equal(lower_conv(cfg, &oc.l, name, &p, msg), 0);
    total += (uint64_t)resnet18_residual[i] * (fused - p.report.est_cycles);
    lower_program_free(&p);
    free_layer(&oc);
  }
  int32_t m;
  uint32_t shift;
  assert_int_equal(lower_quantize_multiplier(1.0 / 49, &m, &shift), 0);
  struct lower_qpool gap = {LOWER_POOL_AVG, 1, 512, 7, 7, 7, 7, 1, 1, 0, 0, 0, 0, m, shift, 0, 0, -128, 127, 0};
  total += layer_cycles(lower_pool(cfg, &gap, "gap", &p, msg), &p, "globalavgpool 7,512", msg);
  int8_t *w = calloc(512 * 1000, 1);
  int32_t *mult = malloc(sizeof(int32_t) * 1000);
  for (int i = 0; i < 1000; i++) mult[i] = m;
  struct lower_qfc fc = {1, 512, 1000, w, NULL, mult, shift, 0, 0, -128, 127, 0, 1, 0, NULL, NULL};
  total += layer_cycles(lower_fc(cfg, &fc, "fc", &p, msg), &p, "fc 512,1000", msg);
  free(w), free(mult);
  return total;
}

/* The big layers take a few seconds in the plain reference together; set
 * LOOM_SHORT_TESTS=1 to run only those below 100 M MACs on fsim. */
static void test_resnet18(void **state) {
  (void)state;
  const struct loom_hw_config *cfg = loom_hw_config_by_name("default");
  const char *short_env = getenv("LOOM_SHORT_TESTS");
  int short_run = short_env && strcmp(short_env, "0") != 0;
  uint64_t est = 0, bound = 0, net = 0, net_macs = 0;
  printf("ResNet-18 convolution workloads, %s configuration (peak %u MACs/cycle, %d-bit bus)\n",
         cfg->name, loom_hw_peak_macs(cfg), cfg->bus_bits);
  for (int i = 0; i < 12; i++) {
    const struct layer *y = &resnet18[i];
    struct owned_conv oc;
    make_layer(y, LOWER_CONV_ALLOW_IM2COL, &oc, 100 + (uint64_t)i);
    struct lower_program p;
    char msg[LOWER_MSG_MAX], name[40];
    snprintf(name, sizeof name, "%d,%d,%d,%d,%d", y->h, y->in_c, y->out_c, y->k, y->s);
    assert_int_equal(lower_conv(cfg, &oc.l, name, &p, msg), 0);
    lower_report_print(stdout, name, &p.report, i == 0);
    est += p.report.est_cycles, bound += p.report.roofline_cycles;
    net += p.report.est_cycles * (uint64_t)resnet18_count[i];
    net_macs += p.report.macs * (uint64_t)resnet18_count[i];
    if (!short_run || p.report.macs < 100000000) run_workload(cfg, &p, &oc.l, 200 + (uint64_t)i);
    lower_program_free(&p);
    free_layer(&oc);
  }
  printf("12 workloads: %llu cycles estimated, roofline %llu: %.1f%% of the roofline bound\n",
         (unsigned long long)est, (unsigned long long)bound, 100.0 * (double)bound / (double)est);
  printf("ResNet-18 convolutions (with multiplicity): %llu cycles, %.1f%% of peak\n",
         (unsigned long long)net, 100.0 * (double)net_macs / ((double)net * loom_hw_peak_macs(cfg)));
  uint64_t rest = resnet18_rest(cfg);
  printf("ResNet-18 whole network (convolutions, 8 fused Adds, pooling, classifier): %llu cycles, "
         "%.1f%% of peak\n",
         (unsigned long long)(net + rest),
         100.0 * (double)net_macs / ((double)(net + rest) * loom_hw_peak_macs(cfg)));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_invariants),
      cmocka_unit_test(test_deterministic),
      cmocka_unit_test(test_cost_deadlock),
      cmocka_unit_test(test_resnet18),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
