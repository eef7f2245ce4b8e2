/*
 * test_fsim_sched.c - fsim's machine model: tokens, queues, FINISH, errors
 * and counters (docs/isa.md, "Machine model", "Errors", "Counters").
 *
 * Results that depend on ordering are built so that the wrong order gives
 * a different answer: fsim runs the load module ahead as far as its queue
 * allows, so a missing token would let a later LOAD overwrite data before
 * compute reads it.  Deadlocks are checked for the code, the index of the
 * first waiting instruction and a message that names each waiter and its
 * queue.  Bounds violations are checked for the code, the index, and that
 * nothing moved.  The last test is a hand-written double-buffered
 * 64x64x64 int8 GEMM with requantization, checked against a C matmul.
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
};

static struct rig *rig_new(const char *config) {
  struct rig *r = calloc(1, sizeof *r);
  assert_non_null(r);
  r->cfg = loom_hw_config_by_name(config);
  assert_non_null(r->cfg);
  r->sim = fsim_create(r->cfg);
  assert_non_null(r->sim);
  stream_init(&r->s);
  return r;
}

static void rig_free(struct rig *r) {
  for (int i = 0; i < LOOM_NUM_SEGMENTS; i++) free(r->job.seg[i].data);
  stream_free(&r->s);
  fsim_destroy(r->sim);
  free(r);
}

/* Segment i: `bytes` bytes of `fill`. */
static uint8_t *rig_segment(struct rig *r, int i, size_t bytes, uint8_t fill) {
  free(r->job.seg[i].data);
  r->job.seg[i].data = malloc(bytes ? bytes : 1);
  assert_non_null(r->job.seg[i].data);
  memset(r->job.seg[i].data, fill, bytes);
  r->job.seg[i].size = bytes;
  return r->job.seg[i].data;
}

static uint32_t rig_run(struct rig *r) {
  if (r->s.error) fail_msg("stream field %s does not encode", r->s.error);
  r->job.insns = r->s.bytes;
  r->job.insn_count = r->s.count;
  return fsim_run(r->sim, &r->job, &r->res);
}

static void rig_run_ok(struct rig *r) {
  if (rig_run(r) != LOOM_ERR_NONE) fail_msg("%s: %s", r->cfg->name, r->res.message);
}

/* The job must stop with `code` at `insn`, with `text` in the message. */
static void expect_error(struct rig *r, uint32_t code, uint32_t insn, const char *text) {
  uint32_t err = rig_run(r);
  if (err != code || r->res.err_insn != insn || !strstr(r->res.message, text))
    fail_msg("%s: got %s at insn %u (\"%s\"), want %s at insn %u with \"%s\"", r->cfg->name,
             loom_error_name(err), r->res.err_insn, r->res.message, loom_error_name(code), insn,
             text);
  assert_int_equal(r->res.error, code);
}

static void *sram(struct rig *r, int buffer, size_t *bytes) {
  void *p = fsim_sram(r->sim, buffer, bytes);
  assert_non_null(p);
  return p;
}

static uint32_t row_bytes(const struct rig *r, int buffer) {
  return loom_hw_row_bytes(r->cfg, buffer, 0);
}

/* Micro-ops from (acc, inp, wgt) triples into segment `seg`, loaded at 0. */
static void load_uops(struct rig *r, int seg, const uint32_t (*t)[3], uint32_t n) {
  struct stream_uops u;
  stream_uops_init(&u);
  for (uint32_t i = 0; i < n; i++) stream_uops_add(&u, t[i][0], t[i][1], t[i][2]);
  assert_int_equal(u.error, 0);
  memcpy(rig_segment(r, seg, (size_t)n * LOOM_UOP_BYTES, 0), u.bytes, (size_t)n * LOOM_UOP_BYTES);
  stream_load(&r->s, 0, LOOM_BUF_UOP, 0, (uint32_t)seg, 0, n);
  stream_uops_free(&u);
}

/* ---- tokens ---- */

/* WGT row 0 is the identity, so GEMM copies an INP row into ACC. */
static void load_identity_wgt(struct rig *r, int seg) {
  int bi = r->cfg->block_in, bo = r->cfg->block_out;
  uint8_t *w = rig_segment(r, seg, row_bytes(r, LOOM_BUF_WGT), 0);
  for (int o = 0; o < bo && o < bi; o++) w[o * bi + o] = 1;
  stream_load(&r->s, 0, LOOM_BUF_WGT, 0, (uint32_t)seg, 0, 1);
}

static void test_tokens_order_a_buffer_reuse_between_load_and_compute(void **state) {
  static const uint32_t uops[][3] = {{0, 0, 0}, {1, 0, 0}};
  for (size_t c = 0; c < NCONFIGS; c++) {
    struct rig *r = rig_new(configs[c]);
    uint32_t ri = row_bytes(r, LOOM_BUF_INP), ro = row_bytes(r, LOOM_BUF_OUT);
    uint8_t *inp = rig_segment(r, 1, 2 * ri, 0);
    for (uint32_t i = 0; i < ri; i++) inp[i] = (uint8_t)(i + 1), inp[ri + i] = (uint8_t)(100 + i);
    uint8_t *out = rig_segment(r, 3, 2 * ro, 0xEE);
    load_uops(r, 0, uops, 2);
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
    uint32_t ro = row_bytes(r, LOOM_BUF_OUT);
    uint8_t *out = rig_segment(r, 3, 4 * ro, 0xEE);
    stream_nop(&r->s, STREAM_PUSH_NEXT, LOOM_Q_COMPUTE);
    stream_store(&r->s, STREAM_POP_PREV, 0, 3, 0, 4);
    stream_finish(&r->s, 0);
    memset(sram(r, LOOM_BUF_OUT, NULL), 7, 4 * ro);
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
    expect_error(r, LOOM_ERR_DEADLOCK, 1, "insn 1 (GEMM) in compute waits to pop the empty L2C");
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
    expect_error(r, LOOM_ERR_DEADLOCK, depth, want);
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
    expect_error(r, LOOM_ERR_DEADLOCK, 0, want);
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
    expect_error(r, LOOM_ERR_NOFINISH, 0, "ended without FINISH"); /* empty stream */
    stream_nop(&r->s, STREAM_PUSH_NEXT, LOOM_Q_LOAD);
    stream_gemm_range(&r->s, STREAM_POP_PREV, 0, 0, 0);
    stream_nop(&r->s, 0, LOOM_Q_STORE);
    expect_error(r, LOOM_ERR_NOFINISH, 3, "the stream of 3 instructions ended without FINISH");
    assert_int_equal(r->res.counters[LOOM_CNT_INSN_LOAD], 1);
    assert_int_equal(r->res.counters[LOOM_CNT_INSN_COMPUTE], 1);
    assert_int_equal(r->res.counters[LOOM_CNT_INSN_STORE], 1);
    rig_free(r);
  }
}

static void test_instructions_after_finish_are_never_executed(void **state) {
  for (size_t c = 0; c < NCONFIGS; c++) {
    struct rig *r = rig_new(configs[c]);
    uint32_t ro = row_bytes(r, LOOM_BUF_OUT);
    uint8_t *out = rig_segment(r, 3, ro, 0xEE);
    uint8_t *inp = sram(r, LOOM_BUF_INP, NULL);
    rig_segment(r, 1, row_bytes(r, LOOM_BUF_INP), 0x11);
    memset(inp, 0x22, row_bytes(r, LOOM_BUF_INP));
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
    expect_error(r, LOOM_ERR_ILLEGAL, 1,
                 "insn 1 (NOP COMPUTE): illegal instruction: reserved bits");
    stream_free(&r->s);
    stream_init(&r->s);
    /* a STORE of INP, after work that executes fine */
    stream_nop(&r->s, STREAM_PUSH_NEXT, LOOM_Q_LOAD);
    stream_nop(&r->s, STREAM_POP_PREV, LOOM_Q_COMPUTE);
    at = stream_store(&r->s, 0, 0, 0, 0, 1);
    loom_bits_set(stream_at(&r->s, at), LOOM_MEM_BUFFER_LSB, LOOM_MEM_BUFFER_WIDTH, LOOM_BUF_INP);
    stream_finish(&r->s, 0);
    expect_error(r, LOOM_ERR_ILLEGAL, 2, "insn 2 (STORE INP): illegal instruction");
    stream_free(&r->s);
    stream_init(&r->s);
    uint8_t bad[LOOM_INSN_BYTES] = {[0] = 7, [15] = 0x80};
    stream_emit_raw(&r->s, bad);
    expect_error(r, LOOM_ERR_ILLEGAL, 0, "insn 0 (GCFG): illegal instruction: reserved bits set");
    rig_free(r);
  }
}

/* ---- bounds: LOAD and STORE ---- */

/* A LOAD INP of 2 x 3 rows from segment 1, behind a NOP so its index is 1. */
static struct loom_insn_mem inp_load(void) {
  return (struct loom_insn_mem){.buffer = LOOM_BUF_INP, .sram_base = 4, .segment = 1,
                                .dram_offset = 2, .y_size = 2, .x_size = 3, .x_stride = 5};
}

/* Runs NOP, LOAD `m`, FINISH on prefilled SRAM; returns the error. */
static void expect_load_error(struct rig *r, const struct loom_insn_mem *m, uint32_t code,
                              const char *text) {
  stream_free(&r->s);
  stream_init(&r->s);
  stream_nop(&r->s, 0, LOOM_Q_LOAD);
  stream_load_2d(&r->s, 0, m);
  stream_finish(&r->s, 0);
  size_t n;
  uint8_t *buf = sram(r, (int)m->buffer, &n);
  memset(buf, 0x3C, n);
  expect_error(r, code, 1, text);
  for (size_t i = 0; i < n; i++)
    if (buf[i] != 0x3C) fail_msg("%s: SRAM byte %zu changed by a failing LOAD", r->cfg->name, i);
  assert_int_equal(r->res.counters[LOOM_CNT_BYTES_RD_INP], 0);
  assert_int_equal(r->res.counters[LOOM_CNT_BYTES_RD_ACC], 0);
}

static void test_load_segment_violations_move_nothing(void **state) {
  for (size_t c = 0; c < NCONFIGS; c++) {
    struct rig *r = rig_new(configs[c]);
    uint32_t ri = row_bytes(r, LOOM_BUF_INP);
    struct loom_insn_mem m = inp_load();
    uint64_t last = 2 + 1 * 5 + 3; /* dram_offset + (y_size - 1) * x_stride + x_size */
    rig_segment(r, 1, last * ri, 1);
    stream_load_2d(&r->s, 0, &m); /* ends exactly at the segment's end: fine */
    stream_finish(&r->s, 0);
    rig_run_ok(r);
    m.dram_offset = 3; /* one row past the end */
    expect_load_error(r, &m, LOOM_ERR_SEGMENT, "segment 1: the transfer's last DRAM row 10 (");
    m = inp_load();
    m.segment = 6; /* never mapped */
    expect_load_error(r, &m, LOOM_ERR_SEGMENT, "segment 6 is unmapped");
    rig_segment(r, 6, 0, 0); /* mapped with size 0 */
    expect_load_error(r, &m, LOOM_ERR_SEGMENT, "segment 6 is unmapped");
    /* last = 196610 + 65534 * 65535 + 1 = 2^32 + 5 rows: 5 if computed in 32 bits */
    m = (struct loom_insn_mem){.buffer = LOOM_BUF_INP, .segment = 1, .dram_offset = 196610,
                               .y_size = 65535, .x_size = 1, .x_stride = 65535};
    expect_load_error(r, &m, LOOM_ERR_SEGMENT, "segment 1");
    m = (struct loom_insn_mem){.buffer = LOOM_BUF_ACC, .segment = 1, .y_size = 1, .x_size = 1,
                               .x_stride = 1, .dram_offset = (uint32_t)(last * ri / 4)};
    expect_load_error(r, &m, LOOM_ERR_SEGMENT, "insn 1 (LOAD ACC): segment 1");
    rig_free(r);
  }
}

static void test_load_sram_violations_count_padding_and_move_nothing(void **state) {
  for (size_t c = 0; c < NCONFIGS; c++) {
    struct rig *r = rig_new(configs[c]);
    rig_segment(r, 1, 64 * 1024, 1);
    uint32_t rows = (uint32_t)r->cfg->inp_rows;
    struct loom_insn_mem m = inp_load();
    m.sram_base = rows - 6; /* 2 x 3 rows fit exactly */
    stream_load_2d(&r->s, 0, &m);
    stream_finish(&r->s, 0);
    rig_run_ok(r);
    m.x_pad_left = 1; /* 2 x 4 rows do not */
    char want[96];
    snprintf(want, sizeof want, "SRAM rows %u..%u are past the INP buffer's %u rows", rows - 6,
             rows + 1, rows);
    expect_load_error(r, &m, LOOM_ERR_SRAM, want);
    m = inp_load();
    m.buffer = LOOM_BUF_ACC;
    m.sram_base = (uint32_t)r->cfg->acc_rows - 1;
    m.y_pad_bottom = 1;
    expect_load_error(r, &m, LOOM_ERR_SRAM, "insn 1 (LOAD ACC): SRAM rows");
    rig_free(r);
  }
}

/* Runs NOP, STORE `m`, FINISH; the 4 KiB segment 3 must stay untouched. */
static void expect_store_error(struct rig *r, const struct loom_insn_mem *m, uint32_t code,
                               const char *text) {
  stream_free(&r->s);
  stream_init(&r->s);
  stream_nop(&r->s, 0, LOOM_Q_STORE);
  stream_store_2d(&r->s, 0, m);
  stream_finish(&r->s, 0);
  uint8_t *d = rig_segment(r, 3, 4096, 0xA5);
  expect_error(r, code, 1, text);
  for (size_t i = 0; i < 4096; i++) assert_int_equal(d[i], 0xA5);
  assert_int_equal(r->res.counters[LOOM_CNT_BYTES_WR_OUT], 0);
}

static void test_store_violations_write_nothing(void **state) {
  for (size_t c = 0; c < NCONFIGS; c++) {
    struct rig *r = rig_new(configs[c]);
    uint32_t ro = row_bytes(r, LOOM_BUF_OUT), rows = (uint32_t)r->cfg->acc_rows;
    struct loom_insn_mem m = {.buffer = LOOM_BUF_OUT, .segment = 3, .y_size = 2, .x_size = 2,
                              .x_stride = 2, .dram_offset = 4096 / ro - 3};
    expect_store_error(r, &m, LOOM_ERR_SEGMENT,
                       "insn 1 (STORE OUT): segment 3: the transfer's last DRAM row");
    m.segment = 5;
    expect_store_error(r, &m, LOOM_ERR_SEGMENT, "segment 5 is unmapped");
    m = (struct loom_insn_mem){.buffer = LOOM_BUF_OUT, .segment = 3, .y_size = 2, .x_size = 2,
                               .x_stride = 2, .sram_base = rows - 3};
    expect_store_error(r, &m, LOOM_ERR_SRAM, "are past the OUT buffer's");
    rig_free(r);
  }
}

/* ---- bounds: GEMM and ALU, per micro-op ---- */

/* Every ACC row = 5, and OUT with it. */
static void prepare_acc(struct rig *r) {
  size_t n;
  int32_t *acc = sram(r, LOOM_BUF_ACC, &n);
  int8_t *out = sram(r, LOOM_BUF_OUT, NULL);
  for (size_t i = 0; i < n / sizeof *acc; i++) acc[i] = 5, out[i] = 5;
}

/* Rows `done` hold `v` (and OUT its sat8), every other row still 5. */
static void check_rows(struct rig *r, const uint32_t *done, int ndone, int32_t v) {
  size_t n;
  const int32_t *acc = sram(r, LOOM_BUF_ACC, &n);
  const int8_t *out = sram(r, LOOM_BUF_OUT, NULL);
  uint32_t lanes = (uint32_t)(r->cfg->batch * r->cfg->block_out);
  for (size_t i = 0; i < n / sizeof *acc; i++) {
    int32_t want = 5;
    for (int k = 0; k < ndone; k++)
      if (i / lanes == done[k]) want = v;
    if (acc[i] != want || out[i] != ref_sat8(want))
      fail_msg("%s: ACC row %zu = %d (OUT %d), want %d", r->cfg->name, i / lanes, acc[i],
               out[i], want);
  }
}

/* One micro-op (acc 0, inp 1, wgt 1) three times with the factors given: the
 * third iteration (i = 2) is out of range, the first two write ACC rows 0, 1. */
static void run_gemm_violation(struct rig *r, uint32_t inp_factor, uint32_t wgt_factor,
                               const char *text) {
  static const uint32_t uops[][3] = {{0, 1, 1}};
  stream_free(&r->s);
  stream_init(&r->s);
  load_uops(r, 0, uops, 1);
  struct loom_insn_gemm g = {.uop_end = 1, .iter_out = 3, .iter_in = 1, .acc_factor_out = 1,
                             .inp_factor_out = inp_factor, .wgt_factor_out = wgt_factor};
  stream_gemm(&r->s, 0, &g);
  stream_finish(&r->s, 0);
  prepare_acc(r);
  size_t ni, nw;
  uint8_t *inp = sram(r, LOOM_BUF_INP, &ni), *wgt = sram(r, LOOM_BUF_WGT, &nw);
  memset(inp, 1, ni);
  memset(wgt, 1, nw);
  expect_error(r, LOOM_ERR_SRAM, 1, text);
  static const uint32_t done[] = {0, 1};
  check_rows(r, done, 2, 5 + r->cfg->block_in); /* 1 x 1 summed over block_in */
  assert_int_equal(r->res.counters[LOOM_CNT_GEMM_OPS], 2);
}

static void test_gemm_inp_and_wgt_violations_stop_at_the_micro_op(void **state) {
  for (size_t c = 0; c < NCONFIGS; c++) {
    struct rig *r = rig_new(configs[c]);
    uint32_t ir = (uint32_t)r->cfg->inp_rows, wr = (uint32_t)r->cfg->wgt_rows;
    char want[128];
    snprintf(want, sizeof want,
             "insn 1 (GEMM): micro-op 0 (i=2, j=0): INP row %u is past the buffer's %u rows",
             1 + ir, ir);
    run_gemm_violation(r, ir / 2, 0, want);
    snprintf(want, sizeof want, "micro-op 0 (i=2, j=0): WGT row %u is past the buffer's %u rows",
             1 + wr, wr);
    run_gemm_violation(r, 0, wr / 2, want);
    rig_free(r);
  }
}

static void test_gemm_uop_and_acc_violations_stop_at_the_micro_op(void **state) {
  static const uint32_t uops[][3] = {{0, 0, 0}};
  for (size_t c = 0; c < NCONFIGS; c++) {
    struct rig *r = rig_new(configs[c]);
    uint32_t ar = (uint32_t)r->cfg->acc_rows, ur = (uint32_t)r->cfg->uop_rows;
    /* reset rows 0 and ar / 2, then hit row ar */
    load_uops(r, 0, uops, 1);
    struct loom_insn_gemm g = {.reset = 1, .uop_end = 1, .iter_out = 3, .iter_in = 1,
                               .acc_factor_out = ar / 2};
    stream_gemm(&r->s, 0, &g);
    stream_finish(&r->s, 0);
    prepare_acc(r);
    char want[96];
    snprintf(want, sizeof want, "micro-op 0 (i=2, j=0): ACC row %u is past", ar);
    expect_error(r, LOOM_ERR_SRAM, 1, want);
    uint32_t done[] = {0, ar / 2};
    check_rows(r, done, 2, 0);
    /* micro-ops run off the end of the UOP buffer */
    stream_free(&r->s);
    stream_init(&r->s);
    struct loom_insn_gemm g2 = {.reset = 1, .uop_begin = ur - 1, .uop_end = ur + 1,
                                .iter_out = 1, .iter_in = 1};
    stream_nop(&r->s, 0, LOOM_Q_COMPUTE);
    stream_gemm(&r->s, 0, &g2);
    stream_finish(&r->s, 0);
    snprintf(want, sizeof want, "micro-op %u (i=0, j=0): UOP row %u", ur, ur);
    expect_error(r, LOOM_ERR_SRAM, 1, want);
    rig_free(r);
  }
}

/* ALU ADD of (acc 0, inp 1) three times, stepping dst by 1 and src by
 * src_factor: the third source row is past the buffer unless use_imm. */
static void run_alu_source(struct rig *r, uint32_t use_imm) {
  static const uint32_t uops[][3] = {{0, 1, 0}};
  uint32_t ar = (uint32_t)r->cfg->acc_rows;
  stream_free(&r->s);
  stream_init(&r->s);
  load_uops(r, 0, uops, 1);
  struct loom_insn_alu a = {.alu_op = LOOM_ALU_ADD, .use_imm = use_imm, .imm = 1, .uop_end = 1,
                            .iter_out = 3, .iter_in = 1, .dst_factor_out = 1,
                            .src_factor_out = ar / 2};
  stream_alu(&r->s, 0, &a);
  stream_finish(&r->s, 0);
  prepare_acc(r);
  if (use_imm) {
    rig_run_ok(r); /* the source is not read, so not checked */
    static const uint32_t done[] = {0, 1, 2};
    check_rows(r, done, 3, 6);
    return;
  }
  char want[128];
  snprintf(want, sizeof want, "insn 1 (ALU ADD): micro-op 0 (i=2, j=0): source ACC row %u", ar + 1);
  expect_error(r, LOOM_ERR_SRAM, 1, want);
  static const uint32_t done[] = {0, 1};
  check_rows(r, done, 2, 10);
  assert_int_equal(r->res.counters[LOOM_CNT_ALU_OPS], 2);
}

static void test_alu_source_violation_stops_at_the_micro_op(void **state) {
  for (size_t c = 0; c < NCONFIGS; c++) {
    struct rig *r = rig_new(configs[c]);
    run_alu_source(r, 0);
    run_alu_source(r, 1);
    rig_free(r);
  }
}

static void test_alu_destination_violation_stops_at_the_micro_op(void **state) {
  static const uint32_t uops[][3] = {{1, 0, 0}};
  for (size_t c = 0; c < NCONFIGS; c++) {
    struct rig *r = rig_new(configs[c]);
    uint32_t ar = (uint32_t)r->cfg->acc_rows;
    load_uops(r, 0, uops, 1);
    struct loom_insn_alu a = {.alu_op = LOOM_ALU_MOV, .use_imm = 1, .imm = 9, .uop_end = 1,
                              .iter_out = 2, .iter_in = 2, .dst_factor_out = ar - 1};
    stream_alu(&r->s, 0, &a);
    stream_finish(&r->s, 0);
    prepare_acc(r);
    char want[128];
    snprintf(want, sizeof want,
             "insn 1 (ALU MOV imm): micro-op 0 (i=1, j=0): destination ACC row %u", ar);
    expect_error(r, LOOM_ERR_SRAM, 1, want);
    static const uint32_t done[] = {1};
    check_rows(r, done, 1, 9);
    assert_int_equal(r->res.counters[LOOM_CNT_ALU_OPS], 2);
    rig_free(r);
  }
}

/* ---- counters ---- */

static void test_counters_are_exact(void **state) {
  static const uint32_t uops[][3] = {{0, 0, 0}, {1, 1, 1}, {2, 0, 1}};
  for (size_t c = 0; c < NCONFIGS; c++) {
    struct rig *r = rig_new(configs[c]);
    uint32_t ri = row_bytes(r, LOOM_BUF_INP), rw = row_bytes(r, LOOM_BUF_WGT);
    uint32_t ro = row_bytes(r, LOOM_BUF_OUT), ra8 = loom_hw_row_bytes(r->cfg, LOOM_BUF_ACC, 1);
    for (int s = 1; s <= 4; s++) rig_segment(r, s, 4096, 1);
    load_uops(r, 0, uops, 3);                                          /* compute, 12 bytes */
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
  load_uops(r, 0, (const uint32_t(*)[3])t, 2 * d->kb + 2);
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

/* Errors the hardware raises before the budget runs out are reported as
 * such, not as TIMEOUT (docs/isa.md: bounds are checked before any byte
 * moves; GEMM and ALU stop at the failing micro-op): a LOAD of 65535 x 65535
 * rows past its segment, a STORE past OUT, and a GEMM of 2^24 and an ALU of 2^28
 * iterations whose first micro-op is out of range. */
static void test_errors_come_before_the_work_budget(void **state) {
  struct rig *r = rig_new("tiny");
  uint32_t ur = (uint32_t)r->cfg->uop_rows;
  r->job.work_budget = 100;
  rig_segment(r, 1, 4096, 1);
  struct loom_insn_mem m = {.buffer = LOOM_BUF_INP, .segment = 1, .y_size = 65535,
                            .x_size = 65535, .x_stride = 65535};
  expect_load_error(r, &m, LOOM_ERR_SEGMENT, "segment 1");
  /* 15 x 34 padded rows: past the budget and tiny's 256 INP rows */
  m = (struct loom_insn_mem){.buffer = LOOM_BUF_INP, .segment = 1, .y_size = 1, .x_size = 20,
                             .x_stride = 20, .y_pad_top = 7, .y_pad_bottom = 7,
                             .x_pad_left = 7, .x_pad_right = 7};
  assert_true(15 * 34 > r->cfg->inp_rows);
  expect_load_error(r, &m, LOOM_ERR_SRAM, "SRAM rows");
  struct loom_insn_gemm g = {.uop_begin = ur, .uop_end = ur + 1, .iter_out = 4095,
                             .iter_in = 4095};
  stream_free(&r->s);
  stream_init(&r->s);
  stream_nop(&r->s, 0, LOOM_Q_COMPUTE);
  stream_gemm(&r->s, 0, &g);
  stream_finish(&r->s, 0);
  expect_error(r, LOOM_ERR_SRAM, 1, "UOP row");
  struct loom_insn_alu a = {.alu_op = LOOM_ALU_ADD, .uop_begin = ur, .uop_end = ur + 1,
                            .iter_out = 16383, .iter_in = 16383};
  stream_free(&r->s);
  stream_init(&r->s);
  stream_nop(&r->s, 0, LOOM_Q_COMPUTE);
  stream_alu(&r->s, 0, &a);
  stream_finish(&r->s, 0);
  expect_error(r, LOOM_ERR_SRAM, 1, "UOP row");
  r->job.work_budget = 0;
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
      cmocka_unit_test(test_load_segment_violations_move_nothing),
      cmocka_unit_test(test_load_sram_violations_count_padding_and_move_nothing),
      cmocka_unit_test(test_store_violations_write_nothing),
      cmocka_unit_test(test_gemm_inp_and_wgt_violations_stop_at_the_micro_op),
      cmocka_unit_test(test_gemm_uop_and_acc_violations_stop_at_the_micro_op),
      cmocka_unit_test(test_alu_source_violation_stops_at_the_micro_op),
      cmocka_unit_test(test_alu_destination_violation_stops_at_the_micro_op),
      cmocka_unit_test(test_counters_are_exact),
      cmocka_unit_test(test_work_budget_stops_an_endless_gemm),
      cmocka_unit_test(test_errors_come_before_the_work_budget),
      cmocka_unit_test(test_double_buffered_gemm_matches_c_matmul),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
