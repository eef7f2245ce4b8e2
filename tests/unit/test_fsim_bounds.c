/*
 * test_fsim_bounds.c - fsim's bounds checks (docs/isa.md, "Errors"): LOAD
 * and STORE past a segment or an SRAM buffer, GEMM and ALU indices past
 * their buffers, checked per micro-op.
 *
 * Each violation is checked for the code, the index and the message, and
 * for what did not happen: a failing LOAD or STORE moves nothing, and a
 * GEMM or ALU stops at the failing micro-op, the iterations before it done.
 * Errors also come before the work budget runs out, however long the
 * instruction would have run.
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
  uint8_t *buf = rig_sram(r, (int)m->buffer, &n);
  memset(buf, 0x3C, n);
  rig_expect_error(r, code, 1, text);
  for (size_t i = 0; i < n; i++)
    if (buf[i] != 0x3C) fail_msg("%s: SRAM byte %zu changed by a failing LOAD", r->cfg->name, i);
  assert_int_equal(r->res.counters[LOOM_CNT_BYTES_RD_INP], 0);
  assert_int_equal(r->res.counters[LOOM_CNT_BYTES_RD_ACC], 0);
}

static void test_load_segment_violations_move_nothing(void **state) {
  for (size_t c = 0; c < NCONFIGS; c++) {
    struct rig *r = rig_new(configs[c]);
    uint32_t ri = rig_row_bytes(r, LOOM_BUF_INP);
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
  rig_expect_error(r, code, 1, text);
  for (size_t i = 0; i < 4096; i++) assert_int_equal(d[i], 0xA5);
  assert_int_equal(r->res.counters[LOOM_CNT_BYTES_WR_OUT], 0);
}

static void test_store_violations_write_nothing(void **state) {
  for (size_t c = 0; c < NCONFIGS; c++) {
    struct rig *r = rig_new(configs[c]);
    uint32_t ro = rig_row_bytes(r, LOOM_BUF_OUT), rows = (uint32_t)r->cfg->acc_rows;
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
  int32_t *acc = rig_sram(r, LOOM_BUF_ACC, &n);
  int8_t *out = rig_sram(r, LOOM_BUF_OUT, NULL);
  for (size_t i = 0; i < n / sizeof *acc; i++) acc[i] = 5, out[i] = 5;
}

/* Rows `done` hold `v` (and OUT its sat8), every other row still 5. */
static void check_rows(struct rig *r, const uint32_t *done, int ndone, int32_t v) {
  size_t n;
  const int32_t *acc = rig_sram(r, LOOM_BUF_ACC, &n);
  const int8_t *out = rig_sram(r, LOOM_BUF_OUT, NULL);
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
  rig_load_uops(r, 0, uops, 1);
  struct loom_insn_gemm g = {.uop_end = 1, .iter_out = 3, .iter_in = 1, .acc_factor_out = 1,
                             .inp_factor_out = inp_factor, .wgt_factor_out = wgt_factor};
  stream_gemm(&r->s, 0, &g);
  stream_finish(&r->s, 0);
  prepare_acc(r);
  size_t ni, nw;
  uint8_t *inp = rig_sram(r, LOOM_BUF_INP, &ni), *wgt = rig_sram(r, LOOM_BUF_WGT, &nw);
  memset(inp, 1, ni);
  memset(wgt, 1, nw);
  rig_expect_error(r, LOOM_ERR_SRAM, 1, text);
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
    rig_load_uops(r, 0, uops, 1);
    struct loom_insn_gemm g = {.reset = 1, .uop_end = 1, .iter_out = 3, .iter_in = 1,
                               .acc_factor_out = ar / 2};
    stream_gemm(&r->s, 0, &g);
    stream_finish(&r->s, 0);
    prepare_acc(r);
    char want[96];
    snprintf(want, sizeof want, "micro-op 0 (i=2, j=0): ACC row %u is past", ar);
    rig_expect_error(r, LOOM_ERR_SRAM, 1, want);
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
    rig_expect_error(r, LOOM_ERR_SRAM, 1, want);
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
  rig_load_uops(r, 0, uops, 1);
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
  rig_expect_error(r, LOOM_ERR_SRAM, 1, want);
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
    rig_load_uops(r, 0, uops, 1);
    struct loom_insn_alu a = {.alu_op = LOOM_ALU_MOV, .use_imm = 1, .imm = 9, .uop_end = 1,
                              .iter_out = 2, .iter_in = 2, .dst_factor_out = ar - 1};
    stream_alu(&r->s, 0, &a);
    stream_finish(&r->s, 0);
    prepare_acc(r);
    char want[128];
    snprintf(want, sizeof want,
             "insn 1 (ALU MOV imm): micro-op 0 (i=1, j=0): destination ACC row %u", ar);
    rig_expect_error(r, LOOM_ERR_SRAM, 1, want);
    static const uint32_t done[] = {1};
    check_rows(r, done, 1, 9);
    assert_int_equal(r->res.counters[LOOM_CNT_ALU_OPS], 2);
    rig_free(r);
  }
}

/* ---- bounds before the work budget ---- */

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
  rig_expect_error(r, LOOM_ERR_SRAM, 1, "UOP row");
  struct loom_insn_alu a = {.alu_op = LOOM_ALU_ADD, .uop_begin = ur, .uop_end = ur + 1,
                            .iter_out = 16383, .iter_in = 16383};
  stream_free(&r->s);
  stream_init(&r->s);
  stream_nop(&r->s, 0, LOOM_Q_COMPUTE);
  stream_alu(&r->s, 0, &a);
  stream_finish(&r->s, 0);
  rig_expect_error(r, LOOM_ERR_SRAM, 1, "UOP row");
  r->job.work_budget = 0;
  rig_free(r);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_load_segment_violations_move_nothing),
      cmocka_unit_test(test_load_sram_violations_count_padding_and_move_nothing),
      cmocka_unit_test(test_store_violations_write_nothing),
      cmocka_unit_test(test_gemm_inp_and_wgt_violations_stop_at_the_micro_op),
      cmocka_unit_test(test_gemm_uop_and_acc_violations_stop_at_the_micro_op),
      cmocka_unit_test(test_alu_source_violation_stops_at_the_micro_op),
      cmocka_unit_test(test_alu_destination_violation_stops_at_the_micro_op),
      cmocka_unit_test(test_errors_come_before_the_work_budget),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
