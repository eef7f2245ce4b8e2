/*
 * test_fsim_sched.c - fsim's machine model: tokens, queues, FINISH, the
 * errors of the stream itself, counters and the work budget (docs/isa.md,
 * "Machine model", "Errors", "Counters").
 *
 * Results that depend on ordering are built so that the wrong order gives
 * a different answer: fsim runs the load module ahead as far as its queue
 * allows, so a missing token would let a later LOAD overwrite data before
 * compute reads it.  Deadlocks are checked for the code, the index of the
 * first waiting instruction and a message that names each waiter and its
 * queue.  The last test is a hand-written double-buffered 64x64x64 int8
 * GEMM with requantization, checked against a C matmul.  Bounds
 * violations: test_fsim_bounds.c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fsimrig.h"
#include "ref_ops.h"

/* ---- tokens ---- */

/* WGT row 0 is the identity, so GEMM copies an INP row into ACC. */
static void load_identity_wgt(struct rig *r, int seg) {
  int bi = r->cfg->block_in, bo = r->cfg->block_out;
  uint8_t *w = rig_segment(r, seg, rig_row_bytes(r, LOOM_BUF_WGT), 0);
  for (int o = 0; o < bo && o < bi; o++) w[o * bi + o] = 1;
  stream_load(&r->s, 0, LOOM_BUF_WGT, 0, (uint32_t)seg, 0, 1);
}

static void test_tokens_order_a_buffer_reuse_between_load_and_compute(void **state) {
  static const uint32_t uops[][3] = {{0, 0, 0}, {1, 0, 0}};
  for (size_t c = 0; c < NCONFIGS; c++) {
    struct rig *r = rig_new(configs[c]);
    uint32_t ri = rig_row_bytes(r, LOOM_BUF_INP), ro = rig_row_bytes(r, LOOM_BUF_OUT);
    uint8_t *inp = rig_segment(r, 1, 2 * ri, 0);
    for (uint32_t i = 0; i < ri; i++) inp[i] = (uint8_t)(i + 1), inp[ri + i] = (uint8_t)(100 + i);
    uint8_t *out = rig_segment(r, 3, 2 * ro, 0xEE);
    rig_load_uops(r, 0, uops, 2);
    stream_gemm_range(&r->s, 0, 1, 0, 2);
    load_identity_wgt(r, 2);
    stream_load(&r->s, STREAM_PUSH_NEXT, LOOM_BUF_INP, 0, 1, 0, 1);            /* A -> INP[0] */
    stream_gemm_range(&r->s, STREAM_POP_PREV | STREAM_PUSH_PREV, 0, 0, 1);     /* ACC[0] = A */
    stream_load(&r->s, STREAM_POP_NEXT | STREAM_PUSH_NEXT, LOOM_BUF_INP, 0, 1, 1, 1); /* B */
    stream_gemm_range(&r->s, STREAM_POP_PREV | STREAM_PUSH_NEXT, 0, 1, 2);     /* ACC[1] = B */
    stream_store(&r->s, STREAM_POP_PREV, 0, 3, 0, 2);
    stream_finish(&r->s, 0);
    rig_run_ok(r);
    for (uint32_t i = 0; i < ro; i++) {
      assert_int_equal((int8_t)out[i], ref_sat8((int8_t)inp[i]));
      assert_int_equal((int8_t)out[ro + i], ref_sat8((int8_t)inp[ri + i]));
    }
    rig_free(r);
  }
}

static void test_finish_waits_for_the_store_module_to_drain(void **state) {
  for (size_t c = 0; c < NCONFIGS; c++) {
    struct rig *r = rig_new(configs[c]);
    uint32_t ro = rig_row_bytes(r, LOOM_BUF_OUT);
    uint8_t *out = rig_segment(r, 3, 4 * ro, 0xEE);
    stream_nop(&r->s, STREAM_PUSH_NEXT, LOOM_Q_COMPUTE);
    stream_store(&r->s, STREAM_POP_PREV, 0, 3, 0, 4);
    stream_finish(&r->s, 0);
    memset(rig_sram(r, LOOM_BUF_OUT, NULL), 7, 4 * ro);
    rig_run_ok(r);
    for (uint32_t i = 0; i < 4 * ro; i++) assert_int_equal(out[i], 7);
    assert_int_equal(r->res.counters[LOOM_CNT_INSN_STORE], 1);
    rig_free(r);
  }
}

/* ---- deadlock ---- */

static void test_deadlock_pop_with_no_push_names_the_waiter(void **state) {
  for (size_t c = 0; c < NCONFIGS; c++) {
    struct rig *r = rig_new(configs[c]);
    stream_nop(&r->s, 0, LOOM_Q_LOAD);
    stream_gemm_range(&r->s, STREAM_POP_PREV, 0, 0, 0);
    stream_finish(&r->s, 0);
    rig_expect_error(r, LOOM_ERR_DEADLOCK, 1, "insn 1 (GEMM) in compute waits to pop the empty L2C");
    rig_free(r);
  }
}

static void test_deadlock_on_a_full_token_queue_names_every_waiter(void **state) {
  for (size_t c = 0; c < NCONFIGS; c++) {
    struct rig *r = rig_new(configs[c]);
    uint32_t depth = (uint32_t)r->cfg->token_queue_depth;
    for (uint32_t i = 0; i <= depth; i++) stream_nop(&r->s, STREAM_PUSH_NEXT, LOOM_Q_LOAD);
    uint32_t fin = stream_finish(&r->s, 0);
    char want[128];
    snprintf(want, sizeof want, "insn %u (NOP LOAD) in load waits to push the full L2C", depth);
    rig_expect_error(r, LOOM_ERR_DEADLOCK, depth, want);
    snprintf(want, sizeof want, "insn %u (FINISH) in compute waits for the load and store", fin);
    assert_non_null(strstr(r->res.message, want));
    /* one token fewer and nobody waits */
    stream_free(&r->s);
    stream_init(&r->s);
    for (uint32_t i = 0; i < depth; i++) stream_nop(&r->s, STREAM_PUSH_NEXT, LOOM_Q_LOAD);
    stream_finish(&r->s, 0);
    rig_run_ok(r);
    rig_free(r);
  }
}

/* GEMM 0 waits for a token the LOAD after `gap` compute NOPs would push. */
static void build_queue_gap(struct rig *r, uint32_t gap) {
  stream_free(&r->s);
  stream_init(&r->s);
  stream_gemm_range(&r->s, STREAM_POP_PREV, 0, 0, 0);
  for (uint32_t i = 0; i < gap; i++) stream_nop(&r->s, 0, LOOM_Q_COMPUTE);
  stream_nop(&r->s, STREAM_PUSH_NEXT, LOOM_Q_LOAD);
  stream_finish(&r->s, 0);
}

static void test_deadlock_when_a_full_command_queue_hides_the_producer(void **state) {
  for (size_t c = 0; c < NCONFIGS; c++) {
    struct rig *r = rig_new(configs[c]);
    uint32_t depth = (uint32_t)r->cfg->cmd_queue_depth;
    build_queue_gap(r, depth); /* the queue holds all the NOPs: fetch reaches the producer */
    rig_run_ok(r);
    assert_int_equal(r->res.counters[LOOM_CNT_INSN_COMPUTE], depth + 2);
    build_queue_gap(r, depth + 1); /* one more and fetch waits behind the full queue */
    char want[128];
    snprintf(want, sizeof want,
             "fetch holds insn %u (NOP COMPUTE) for the full COMPUTE command queue", depth + 1);
    rig_expect_error(r, LOOM_ERR_DEADLOCK, 0, want);
    assert_non_null(strstr(r->res.message, "insn 0 (GEMM) in compute waits to pop the empty L2C"));
    rig_free(r);
  }
}

static void test_deadlock_depends_on_the_configured_queue_depth(void **state) {
  struct rig *tiny = rig_new("tiny"), *def = rig_new("default");
  assert_true(tiny->cfg->cmd_queue_depth < def->cfg->cmd_queue_depth);
  build_queue_gap(tiny, (uint32_t)def->cfg->cmd_queue_depth);
  build_queue_gap(def, (uint32_t)def->cfg->cmd_queue_depth);
  assert_int_equal(rig_run(tiny), LOOM_ERR_DEADLOCK);
  assert_int_equal(rig_run(def), LOOM_ERR_NONE);
  rig_free(tiny);
  rig_free(def);
}

/* ---- FINISH, NOFINISH, ILLEGAL ---- */

static void test_nofinish_when_the_stream_ends_without_finish(void **state) {
  for (size_t c = 0; c < NCONFIGS; c++) {
    struct rig *r = rig_new(configs[c]);
    rig_expect_error(r, LOOM_ERR_NOFINISH, 0, "ended without FINISH"); /* empty stream */
    stream_nop(&r->s, STREAM_PUSH_NEXT, LOOM_Q_LOAD);
    stream_gemm_range(&r->s, STREAM_POP_PREV, 0, 0, 0);
    stream_nop(&r->s, 0, LOOM_Q_STORE);
    rig_expect_error(r, LOOM_ERR_NOFINISH, 3, "the stream of 3 instructions ended without FINISH");
    assert_int_equal(r->res.counters[LOOM_CNT_INSN_LOAD], 1);
    assert_int_equal(r->res.counters[LOOM_CNT_INSN_COMPUTE], 1);
    assert_int_equal(r->res.counters[LOOM_CNT_INSN_STORE], 1);
    rig_free(r);
  }
}

static void test_instructions_after_finish_are_never_executed(void **state) {
  for (size_t c = 0; c < NCONFIGS; c++) {
    struct rig *r = rig_new(configs[c]);
    uint32_t ro = rig_row_bytes(r, LOOM_BUF_OUT);
    uint8_t *out = rig_segment(r, 3, ro, 0xEE);
    uint8_t *inp = rig_sram(r, LOOM_BUF_INP, NULL);
    rig_segment(r, 1, rig_row_bytes(r, LOOM_BUF_INP), 0x11);
    memset(inp, 0x22, rig_row_bytes(r, LOOM_BUF_INP));
    stream_nop(&r->s, 0, LOOM_Q_LOAD);
    uint32_t fin = stream_finish(&r->s, 0);
    stream_store(&r->s, 0, 0, 3, 0, 1);
    stream_load(&r->s, 0, LOOM_BUF_INP, 0, 1, 0, 1);
    uint8_t bad[LOOM_INSN_BYTES] = {[0] = 7, [15] = 0x80}; /* GCFG with a reserved bit: never decoded */
    stream_emit_raw(&r->s, bad);
    rig_run_ok(r);
    assert_int_equal(out[0], 0xEE);
    assert_int_equal(inp[0], 0x22);
    assert_int_equal(r->res.counters[LOOM_CNT_INSN_STORE], 0);
    assert_int_equal(r->res.counters[LOOM_CNT_INSN_LOAD], 1);
    assert_int_equal(r->res.counters[LOOM_CNT_BYTES_RD_INSN], 16 * (fin + 1));
    rig_free(r);
  }
}

static void test_illegal_is_raised_by_fetch_at_its_stream_index(void **state) {
  for (size_t c = 0; c < NCONFIGS; c++) {
    struct rig *r = rig_new(configs[c]);
    /* behind an instruction that waits forever: fetch still reaches it */
    stream_gemm_range(&r->s, STREAM_POP_PREV, 0, 0, 0);
    uint32_t at = stream_nop(&r->s, 0, LOOM_Q_COMPUTE);
    loom_bits_set(stream_at(&r->s, at), 100, 1, 1);
    stream_finish(&r->s, 0);
    rig_expect_error(r, LOOM_ERR_ILLEGAL, 1,
                 "insn 1 (NOP COMPUTE): illegal instruction: reserved bits");
    stream_free(&r->s);
    stream_init(&r->s);
    /* a STORE of INP, after work that executes fine */
    stream_nop(&r->s, STREAM_PUSH_NEXT, LOOM_Q_LOAD);
    stream_nop(&r->s, STREAM_POP_PREV, LOOM_Q_COMPUTE);
    at = stream_store(&r->s, 0, 0, 0, 0, 1);
    loom_bits_set(stream_at(&r->s, at), LOOM_MEM_BUFFER_LSB, LOOM_MEM_BUFFER_WIDTH, LOOM_BUF_INP);
    stream_finish(&r->s, 0);
    rig_expect_error(r, LOOM_ERR_ILLEGAL, 2, "insn 2 (STORE INP): illegal instruction");
    stream_free(&r->s);
    stream_init(&r->s);
    uint8_t bad[LOOM_INSN_BYTES] = {[0] = 7, [15] = 0x80};
    stream_emit_raw(&r->s, bad);
    rig_expect_error(r, LOOM_ERR_ILLEGAL, 0, "insn 0 (GCFG): illegal instruction: reserved bits set");
    rig_free(r);
  }
}

/* ---- counters ---- */

static void test_counters_are_exact(void **state) {
  static const uint32_t uops[][3] = {{0, 0, 0}, {1, 1, 1}, {2, 0, 1}};
  for (size_t c = 0; c < NCONFIGS; c++) {
    struct rig *r = rig_new(configs[c]);
    uint32_t ri = rig_row_bytes(r, LOOM_BUF_INP), rw = rig_row_bytes(r, LOOM_BUF_WGT);
    uint32_t ro = rig_row_bytes(r, LOOM_BUF_OUT), ra8 = loom_hw_row_bytes(r->cfg, LOOM_BUF_ACC, 1);
    for (int s = 1; s <= 4; s++) rig_segment(r, s, 4096, 1);
    rig_load_uops(r, 0, uops, 3);                                          /* compute, 12 bytes */
    struct loom_insn_mem acc8 = {.buffer = LOOM_BUF_ACC, .segment = 4, .y_size = 4,
                                 .x_size = 1, .x_stride = 1, .src_int8 = 1, .y_pad_top = 1};
    stream_load_2d(&r->s, 0, &acc8);                                   /* compute, 4 rows */
    stream_load(&r->s, 0, LOOM_BUF_WGT, 0, 1, 0, 2);                   /* load, 2 rows */
    struct loom_insn_mem in2d = {.buffer = LOOM_BUF_INP, .segment = 2, .y_size = 2, .x_size = 3,
                                 .x_stride = 4, .x_pad_left = 2, .y_pad_bottom = 1};
    stream_load_2d(&r->s, STREAM_PUSH_NEXT, &in2d);                    /* load, 6 rows */
    stream_nop(&r->s, 0, LOOM_Q_LOAD);                                 /* load */
    struct loom_insn_gemm g = {.uop_end = 3, .iter_out = 2, .iter_in = 3};
    stream_gemm(&r->s, STREAM_POP_PREV, &g);                           /* 18 ops */
    stream_gemm_range(&r->s, 0, 1, 0, 3);                              /* reset: 0 ops */
    struct loom_insn_qcfg q = {.multiplier = 1, .clamp_hi = 127, .clamp_lo = -128};
    stream_qcfg(&r->s, 0, &q);
    struct loom_insn_alu a = {.alu_op = LOOM_ALU_REQUANT, .use_imm = 1, .uop_end = 2,
                              .iter_out = 2, .iter_in = 1};
    stream_alu(&r->s, STREAM_PUSH_NEXT, &a);                           /* 4 ops */
    stream_nop(&r->s, 0, LOOM_Q_STORE);                                /* store */
    stream_store(&r->s, STREAM_POP_PREV, 0, 3, 0, 5);                  /* store, 5 rows */
    uint32_t fin = stream_finish(&r->s, 0);
    rig_run_ok(r);
    const uint64_t *k = r->res.counters;
    for (int i = 0; i < LOOM_CNT_COUNT; i++)
      if (!((LOOM_COUNTER_EXACT_MASK >> i) & 1)) assert_int_equal(k[i], 0);
    assert_int_equal(k[LOOM_CNT_GEMM_OPS], 18);
    assert_int_equal(k[LOOM_CNT_ALU_OPS], 4);
    assert_int_equal(k[LOOM_CNT_INSN_LOAD], 3);
    assert_int_equal(k[LOOM_CNT_INSN_COMPUTE], 7); /* UOP, ACC, 2 GEMM, QCFG, ALU, FINISH */
    assert_int_equal(k[LOOM_CNT_INSN_STORE], 2);
    assert_int_equal(k[LOOM_CNT_BYTES_RD_INSN], 16 * (fin + 1));
    assert_int_equal(k[LOOM_CNT_BYTES_RD_UOP], 12);
    assert_int_equal(k[LOOM_CNT_BYTES_RD_ACC], 4 * ra8);
    assert_int_equal(k[LOOM_CNT_BYTES_RD_WGT], 2 * rw);
    assert_int_equal(k[LOOM_CNT_BYTES_RD_INP], 6 * ri);
    assert_int_equal(k[LOOM_CNT_BYTES_WR_OUT], 5 * ro);
    rig_free(r);
  }
}

/* ---- a double-buffered GEMM ---- */

enum { MM = 64, TM = 8, TILES = MM / TM }; /* 64 x 64 x 64, tiles of 8 rows */

struct dbuf {
  uint32_t kb, nb;                   /* blocks along K and N */
  uint32_t inp_base[2], acc_base[2]; /* the two virtual threads' SRAM halves */
  struct loom_insn_qcfg q;
};

/* Micro-ops: per thread b, kb GEMM ops at 2-thread offsets, then one row op. */
static void dbuf_uops(struct rig *r, const struct dbuf *d) {
  uint32_t t[2 * 8 + 2][3];
  for (uint32_t b = 0; b < 2; b++) {
    for (uint32_t k = 0; k < d->kb; k++) {
      t[b * d->kb + k][0] = d->acc_base[b];
      t[b * d->kb + k][1] = d->inp_base[b] + k;
      t[b * d->kb + k][2] = k;
    }
    t[2 * d->kb + b][0] = d->acc_base[b], t[2 * d->kb + b][1] = 0, t[2 * d->kb + b][2] = 0;
  }
  rig_load_uops(r, 0, (const uint32_t(*)[3])t, 2 * d->kb + 2);
}

/* The compute instructions of tile `t` on thread b = t % 2. */
static void dbuf_compute(struct rig *r, const struct dbuf *d, uint32_t t) {
  uint32_t b = t % 2, row_op = 2 * d->kb + b;
  int more = t + 2 < TILES; /* a tile two ahead will reuse this thread's buffers */
  struct loom_insn_gemm reset = {.reset = 1, .uop_begin = row_op, .uop_end = row_op + 1,
                                 .iter_out = TM * d->nb, .iter_in = 1, .acc_factor_out = 1};
  struct loom_insn_gemm g = {.uop_begin = b * d->kb, .uop_end = (b + 1) * d->kb, .iter_out = TM,
                             .iter_in = d->nb, .acc_factor_out = d->nb, .acc_factor_in = 1,
                             .inp_factor_out = d->kb, .wgt_factor_in = d->kb};
  struct loom_insn_alu rq = {.alu_op = LOOM_ALU_REQUANT, .use_imm = 1, .uop_begin = row_op,
                             .uop_end = row_op + 1, .iter_out = TM * d->nb, .iter_in = 1,
                             .dst_factor_out = 1};
  stream_gemm(&r->s, t >= 2 ? STREAM_POP_NEXT : 0, &reset); /* store of t-2 read OUT */
  stream_gemm(&r->s, STREAM_POP_PREV | (more ? STREAM_PUSH_PREV : 0), &g);
  stream_alu(&r->s, STREAM_PUSH_NEXT, &rq);
}

static void dbuf_stream(struct rig *r, const struct dbuf *d) {
  dbuf_uops(r, d);
  stream_qcfg(&r->s, 0, &d->q);
  stream_load(&r->s, 0, LOOM_BUF_WGT, 0, 2, 0, d->kb * d->nb);
  for (uint32_t t = 0; t < TILES; t++) {
    uint32_t b = t % 2;
    int more = t + 2 < TILES;
    stream_load(&r->s, (t >= 2 ? STREAM_POP_NEXT : 0) | STREAM_PUSH_NEXT, LOOM_BUF_INP,
                d->inp_base[b], 1, t * TM * d->kb, TM * d->kb);
    dbuf_compute(r, d, t);
    stream_store(&r->s, STREAM_POP_PREV | (more ? STREAM_PUSH_PREV : 0), d->acc_base[b], 3,
                 t * TM * d->nb, TM * d->nb);
  }
  stream_finish(&r->s, 0);
}

/* W[n][k] packed as WGT rows [nb][kb][o][k]. */
static void pack_weights(const struct rig *r, const struct dbuf *d, const int8_t *w, uint8_t *dst) {
  uint32_t bi = (uint32_t)r->cfg->block_in, bo = (uint32_t)r->cfg->block_out;
  for (uint32_t n = 0; n < MM; n++)
    for (uint32_t k = 0; k < MM; k++) {
      uint32_t row = (n / bo) * d->kb + k / bi;
      dst[(size_t)row * bo * bi + (n % bo) * bi + k % bi] = (uint8_t)w[n * MM + k];
    }
}

static void run_double_buffered_gemm(const char *config) {
  struct rig *r = rig_new(config);
  assert_int_equal(r->cfg->batch, 1);
  struct dbuf d = {.kb = MM / (uint32_t)r->cfg->block_in, .nb = MM / (uint32_t)r->cfg->block_out};
  d.inp_base[1] = TM * d.kb, d.acc_base[1] = TM * d.nb;
  d.q = (struct loom_insn_qcfg){.multiplier = 1518500250, .shift = 40, .zero_point = -3,
                                .clamp_lo = -128, .clamp_hi = 127, .round_even = 1};
  int8_t a[MM * MM], w[MM * MM];
  uint32_t seed = 99;
  for (int i = 0; i < MM * MM; i++) {
    seed = seed * 1103515245u + 12345u, a[i] = (int8_t)(seed >> 16);
    seed = seed * 1103515245u + 12345u, w[i] = (int8_t)(seed >> 16);
  }
  memcpy(rig_segment(r, 1, MM * MM, 0), a, MM * MM); /* INP rows are A's rows, block by block */
  pack_weights(r, &d, w, rig_segment(r, 2, MM * MM, 0));
  uint8_t *c = rig_segment(r, 3, MM * MM, 0);
  dbuf_stream(r, &d);
  rig_run_ok(r);
  for (int m = 0; m < MM; m++)
    for (int n = 0; n < MM; n++) {
      int32_t acc = ref_gemm_lane(0, &a[m * MM], &w[n * MM], MM);
      int32_t want = ref_requant(acc, d.q.multiplier, &d.q);
      if ((int8_t)c[m * MM + n] != want)
        fail_msg("%s: C[%d][%d] = %d, want %d", config, m, n, (int8_t)c[m * MM + n], want);
    }
  assert_int_equal(r->res.counters[LOOM_CNT_GEMM_OPS], (uint64_t)MM * d.nb * d.kb);
  assert_int_equal(r->res.counters[LOOM_CNT_BYTES_WR_OUT], MM * MM);
  rig_free(r);
}

/* A legal stream with 2^33 micro-ops (tiny: 512 x 4095 x 4095) would run for hours: the work budget
 * stops it with TIMEOUT at that instruction, after the budget's worth of
 * micro-ops. */
static void test_work_budget_stops_an_endless_gemm(void **state) {
  struct rig *r = rig_new("tiny");
  struct loom_insn_gemm g = {.reset = 1, .uop_begin = 0, .uop_end = (uint32_t)r->cfg->uop_rows,
                             .iter_out = 4095, .iter_in = 4095};
  stream_nop(&r->s, 0, LOOM_Q_COMPUTE);
  uint32_t big = stream_gemm(&r->s, 0, &g);
  stream_finish(&r->s, 0);
  r->job.work_budget = 1000000;
  assert_int_equal(rig_run(r), LOOM_ERR_TIMEOUT);
  assert_int_equal(r->res.err_insn, big);
  assert_non_null(strstr(r->res.message, "work budget"));
  assert_int_equal(r->res.counters[LOOM_CNT_GEMM_OPS], 0);
  r->job.work_budget = 0; /* unlimited: a small job is unaffected */
  rig_free(r);
}

static void test_double_buffered_gemm_matches_c_matmul(void **state) {
  for (size_t c = 0; c < NCONFIGS; c++) run_double_buffered_gemm(configs[c]);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_tokens_order_a_buffer_reuse_between_load_and_compute),
      cmocka_unit_test(test_finish_waits_for_the_store_module_to_drain),
      cmocka_unit_test(test_deadlock_pop_with_no_push_names_the_waiter),
      cmocka_unit_test(test_deadlock_on_a_full_token_queue_names_every_waiter),
      cmocka_unit_test(test_deadlock_when_a_full_command_queue_hides_the_producer),
      cmocka_unit_test(test_deadlock_depends_on_the_configured_queue_depth),
      cmocka_unit_test(test_nofinish_when_the_stream_ends_without_finish),
      cmocka_unit_test(test_instructions_after_finish_are_never_executed),
      cmocka_unit_test(test_illegal_is_raised_by_fetch_at_its_stream_index),
      cmocka_unit_test(test_counters_are_exact),
      cmocka_unit_test(test_work_budget_stops_an_endless_gemm),
      cmocka_unit_test(test_double_buffered_gemm_matches_c_matmul),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
