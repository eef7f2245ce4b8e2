/*
 * test_fsim_alu.c - every fsim ALU op against ref_ops.
 *
 * Golden-model tests, as test_fsim_ops.c: random loops of every op, vector
 * and immediate, run on fsim (tests/support/fsimrig.c) and compared on
 * every ACC row, and OUT with it, with what tests/support/ref_ops.c
 * computes from the same inputs.  The rounding, wrapping and saturation
 * corner cases are also checked against hand-computed numbers, which keeps
 * the reference honest.  Every test runs on the tiny and the default
 * configuration.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fsimrig.h"
#include "ref_ops.h"

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
  rig_load_uop_table(r, 0, &u);
  rig_load_acc_rows(r, 1, 0, vals, A_ROWS);
  stream_qcfg(&r->s, 0, &ac->q);
  stream_alu(&r->s, 0, &ac->a);
  stream_finish(&r->s, 0);
  rig_run_ok(r);
  ref_alu_loop(r, ac, vals);
  rig_check_acc(r, vals, A_ROWS);
  uint64_t n = (uint64_t)ac->a.iter_out * ac->a.iter_in * (ac->a.uop_end - ac->a.uop_begin);
  assert_int_equal(r->res.counters[LOOM_CNT_ALU_OPS], n);
  stream_uops_free(&u);
}

static struct loom_insn_qcfg random_qcfg(struct rig *r) {
  static const uint32_t shifts[] = {0, 1, 2, 15, 31, 32, 40, 62, 63};
  struct loom_insn_qcfg q = {.multiplier = rig_rnd_edge32(r), .shift = shifts[rig_rnd(r) % 9],
                             .zero_point = rig_rnd_in(r, -128, 127), .clamp_lo = rig_rnd_in(r, -128, 0),
                             .clamp_hi = rig_rnd_in(r, 0, 127), .round_even = rig_rnd(r) % 2};
  if (rig_rnd(r) % 4 == 0) q.clamp_lo = rig_rnd_in(r, -128, 127), q.clamp_hi = rig_rnd_in(r, -128, 127);
  return q;
}

static struct alu_case random_alu(struct rig *r, uint32_t op, uint32_t use_imm) {
  static const int32_t imms[] = {0, 1, -1, 31, 32, 33, -32768, 32767, 7, -7};
  struct alu_case ac;
  memset(&ac, 0, sizeof ac);
  struct loom_insn_alu *a = &ac.a;
  a->alu_op = op;
  a->use_imm = use_imm;
  a->imm = rig_rnd(r) % 2 ? imms[rig_rnd(r) % 10] : rig_rnd_in(r, -32768, 32767);
  a->uop_begin = (uint32_t)rig_rnd_in(r, 0, 1);
  a->uop_end = a->uop_begin + (uint32_t)rig_rnd_in(r, 1, 4);
  a->iter_out = (uint32_t)rig_rnd_in(r, 1, 3), a->iter_in = (uint32_t)rig_rnd_in(r, 1, 2);
  a->dst_factor_out = (uint32_t)rig_rnd_in(r, 0, 4), a->dst_factor_in = (uint32_t)rig_rnd_in(r, 0, 2);
  a->src_factor_out = (uint32_t)rig_rnd_in(r, 0, 4), a->src_factor_in = (uint32_t)rig_rnd_in(r, 0, 2);
  uint32_t io = a->iter_out - 1, ii = a->iter_in - 1;
  int32_t dmax = (int32_t)(A_ROWS - 1 - io * a->dst_factor_out - ii * a->dst_factor_in);
  int32_t smax = (int32_t)(A_ROWS - 1 - io * a->src_factor_out - ii * a->src_factor_in);
  for (uint32_t u = a->uop_begin; u < a->uop_end; u++) {
    uint32_t d = (uint32_t)rig_rnd_in(r, 0, dmax);
    ac.uops[u].acc = d;
    ac.uops[u].inp = rig_rnd(r) % 4 == 0 && d <= (uint32_t)smax ? d : (uint32_t)rig_rnd_in(r, 0, smax);
    ac.uops[u].wgt = rig_rnd(r) % 1024; /* ignored by the ALU */
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
          for (size_t i = 0; i < A_ROWS * r->lanes; i++) vals[i] = rig_rnd_edge32(r);
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
  rig_load_uop_table(r, 0, &u);
  rig_load_acc_rows(r, 1, 0, vals, 2);
  if (q) stream_qcfg(&r->s, 0, q);
  stream_alu_range(&r->s, 0, op, (uint32_t)use_imm, use_imm ? v : 0, 0, 1);
  stream_finish(&r->s, 0);
  rig_run_ok(r);
  stream_uops_free(&u);
  const int32_t *acc = rig_sram(r, LOOM_BUF_ACC, NULL);
  const int8_t *out = rig_sram(r, LOOM_BUF_OUT, NULL);
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
      rig_load_uop_table(r, 0, &u);
      int32_t vals[32];
      for (uint32_t l = 0; l < r->lanes; l++) vals[l] = k->a;
      rig_load_acc_rows(r, 1, 0, vals, 1);
      stream_qcfg(&r->s, 0, &q);
      stream_alu(&r->s, 0, &in);
      stream_finish(&r->s, 0);
      rig_run_ok(r);
      stream_uops_free(&u);
      assert_int_equal(((int32_t *)rig_sram(r, LOOM_BUF_ACC, NULL))[0], k->want);
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
    rig_load_uop_table(r, 0, &u);
    rig_load_acc_rows(r, 1, 0, vals, 2);
    stream_qcfg(&r->s, 0, &q);
    stream_alu_range(&r->s, 0, LOOM_ALU_REQUANT, 1, 0, 0, 1);
    stream_finish(&r->s, 0);
    rig_run_ok(r);
    const int32_t *acc = rig_sram(r, LOOM_BUF_ACC, NULL);
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
      assert_int_equal(((int8_t *)rig_sram(r, LOOM_BUF_OUT, NULL))[0], ref_sat8(imms[i]));
    }
    rig_free(r);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_alu_every_op_vector_and_imm_matches_ref),
      cmocka_unit_test(test_shr_rounds_half_up_for_negatives_and_ties),
      cmocka_unit_test(test_add_and_mul_wrap_modulo_2_32),
      cmocka_unit_test(test_requant_edges_shift_rounding_and_clamps),
      cmocka_unit_test(test_requant_registers_reset_every_job_and_sram_persists),
      cmocka_unit_test(test_alu_results_mirror_into_out_with_saturation),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
