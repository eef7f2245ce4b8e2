/*
 * loomsample.c - the sample .loom file of the format tests, and the check
 * that a damaged copy is refused (loomsample.h).
 */
#include "loomsample.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define NB LOOM_FILE_NO_BUFFER

void loomsample_encode(const struct loom_insn *in, uint8_t *out) {
  const char *bad = NULL;
  assert_int_equal(loom_insn_encode(in, out, &bad), 0);
}

static uint32_t sample_insns(struct loom_file_builder *b) {
  uint8_t code[3 * LOOM_INSN_BYTES];
  struct loom_insn load = {.opcode = LOOM_OP_LOAD, .mem = {.buffer = LOOM_BUF_UOP, .segment = 3, .y_size = 1, .x_size = 2, .x_stride = 2}};
  struct loom_insn gemm = {.opcode = LOOM_OP_GEMM, .gemm = {.uop_end = 2, .iter_out = 4, .iter_in = 1}};
  struct loom_insn fin = {.opcode = LOOM_OP_FINISH};
  loomsample_encode(&load, code);
  loomsample_encode(&gemm, code + 16);
  loomsample_encode(&fin, code + 32);
  return loom_fb_insns(b, code, 3);
}

static void sample_buffers(struct loom_file_builder *b) {
  uint8_t weights[64], uops[8] = {1, 0, 0, 0, 2, 0, 0, 0};
  for (int i = 0; i < 64; i++) weights[i] = (uint8_t)(i * 7);
  struct loom_file_buffer w = {.name = loom_fb_string(b, "weights"), .kind = LOOM_BUFKIND_CONST, .size = 64, .align = 64};
  w.data_offset = loom_fb_data(b, weights, 64, 64);
  struct loom_file_buffer act = {.name = loom_fb_string(b, "act"), .kind = LOOM_BUFKIND_WORK, .size = 4096, .align = 4096};
  struct loom_file_buffer u = {.name = loom_fb_string(b, "uops"), .kind = LOOM_BUFKIND_CONST, .size = 8, .align = 64};
  u.data_offset = loom_fb_data(b, uops, 8, 64);
  assert_int_equal(loom_fb_buffer(b, &w), 0);
  assert_int_equal(loom_fb_buffer(b, &act), 1);
  assert_int_equal(loom_fb_buffer(b, &u), 2);
}

static void sample_tensors(struct loom_file_builder *b) {
  struct loom_file_tensor t[5] = {
      {.name = loom_fb_string(b, "x"), .role = LOOM_ROLE_INPUT, .dtype = LOOM_DT_I8, .user_dtype = LOOM_DT_I8,
       .rank = 2, .buffer = 1, .dims = {1, 8}},
      {.name = loom_fb_string(b, "y"), .role = LOOM_ROLE_OUTPUT, .dtype = LOOM_DT_I8, .user_dtype = LOOM_DT_F32,
       .rank = 2, .buffer = 1, .dims = {1, 8}, .offset = 64, .scale = 0.5f, .zero_point = -3},
      {.name = loom_fb_string(b, "feat"), .dtype = LOOM_DT_I8, .user_dtype = LOOM_DT_I8, .layout = LOOM_LAYOUT_NCHWC,
       .layout_block = 8, .rank = 4, .buffer = 1, .dims = {1, 20, 3, 3}, .offset = 256},
      {.name = loom_fb_string(b, "bias"), .dtype = LOOM_DT_I32, .user_dtype = LOOM_DT_I32, .layout = LOOM_LAYOUT_NC,
       .layout_block = 16, .rank = 2, .buffer = 1, .dims = {2, 20}, .offset = 1024},
      {.name = loom_fb_string(b, "w"), .dtype = LOOM_DT_I8, .user_dtype = LOOM_DT_I8, .rank = 2, .buffer = 0,
       .dims = {8, 8}},
  };
  for (uint32_t i = 0; i < 5; i++) assert_int_equal(loom_fb_tensor(b, &t[i]), i);
}

static void sample_program(struct loom_file_builder *b) {
  uint8_t params[16] = {9, 8, 7, 6, 5, 4, 3, 2, 1};
  struct loom_file_job j = {.insn_first = sample_insns(b), .insn_count = 3,
                            .segments = {1, 0, NB, 2, NB, NB, NB, NB}};
  assert_int_equal(loom_fb_job(b, &j), 0);
  struct loom_file_step s0 = {.kind = LOOM_STEP_JOB, .index = 0, .inputs = {NB, NB, NB, NB}, .outputs = {NB, NB}};
  struct loom_file_step s1 = {.kind = LOOM_STEP_HOST, .index = 7, .inputs = {1, NB, 3, NB}, .outputs = {0, NB}};
  s1.param_offset = loom_fb_data(b, params, sizeof params, 8);
  s1.param_size = sizeof params;
  assert_int_equal(loom_fb_step(b, &s0), 0);
  assert_int_equal(loom_fb_step(b, &s1), 1);
}

struct loom_file_builder *loomsample_builder(void) {
  struct loom_file_builder *b = loom_file_builder_new(LOOM_CONFIG_TINY_HASH);
  assert_non_null(b);
  sample_buffers(b);
  sample_tensors(b);
  sample_program(b);
  return b;
}

uint8_t *loomsample(size_t *n) {
  struct loom_file_builder *b = loomsample_builder();
  uint8_t *p = loom_file_builder_finish(b, n);
  assert_non_null(p);
  loom_file_builder_free(b);
  return p;
}

/* Parses and expects a refusal whose message contains each needle. */
void loomsample_expect_reject(const uint8_t *p, size_t n, const char *const *needles) {
  struct loom_file f;
  char msg[LOOM_MSG_MAX] = "";
  loom_status st = loom_file_parse(p, n, "m.loom", &f, msg);
  if (st == LOOM_OK) {
    loom_file_free(&f);
    fail_msg("accepted; expected: %s", needles[0]);
  }
  assert_int_equal(st, LOOM_E_FORMAT);
  for (; *needles; needles++)
    if (!strstr(msg, *needles)) fail_msg("message '%s' lacks '%s'", msg, *needles);
}

