/*
 * test_runtime_models.c - libloom's models: loading, inputs and outputs,
 * host steps and jobs, and the files it refuses.
 *
 * Models are built in memory with the .loom builder, so every case states
 * exactly what the file holds: host-op-only models exercise quantization
 * and the blocked layouts, a one-job model (the add-5 job of
 * tests/support/add5.c) the accelerator path, and damaged or mismatched
 * files the error messages.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "add5.h"
#include "driver/core/hostops.h"
#include "driver/core/loomfile.h"
#include "loom/isa.h"
#include "loom/loom.h"

/* ---- models ---- */

struct built {
  uint8_t *bytes;
  size_t size;
};

static struct loom_file_tensor tensor(struct loom_file_builder *b, const char *name,
                                      uint32_t role, uint32_t dtype, uint32_t buffer,
                                      uint32_t rank, const int64_t *dims) {
  struct loom_file_tensor t = {.name = loom_fb_string(b, name), .role = role, .dtype = dtype,
                               .user_dtype = dtype, .rank = rank, .buffer = buffer};
  memcpy(t.dims, dims, rank * sizeof *dims);
  return t;
}

static uint32_t work_buffer(struct loom_file_builder *b, const char *name, uint64_t size) {
  struct loom_file_buffer fb = {.name = loom_fb_string(b, name), .kind = LOOM_BUFKIND_WORK,
                                .size = size, .align = 64};
  return loom_fb_buffer(b, &fb);
}

static void host_step(struct loom_file_builder *b, uint32_t op, uint32_t in, uint32_t out,
                      uint64_t param_offset, uint64_t param_size) {
  struct loom_file_step s = {.kind = LOOM_STEP_HOST, .index = op,
                             .param_offset = param_offset, .param_size = param_size};
  for (int k = 0; k < 4; k++) s.inputs[k] = LOOM_FILE_NO_BUFFER;
  s.outputs[0] = out;
  s.outputs[1] = LOOM_FILE_NO_BUFFER;
  s.inputs[0] = in;
  loom_fb_step(b, &s);
}

static struct built finish(struct loom_file_builder *b) {
  struct built out;
  out.bytes = loom_file_builder_finish(b, &out.size);
  assert_non_null(out.bytes);
  loom_file_builder_free(b);
  return out;
}

static loom_model *load(loom_device *dev, struct built f) {
  loom_model *m = NULL;
  char msg[LOOM_MSG_MAX] = "";
  loom_status st = loom_model_load_memory(dev, f.bytes, f.size, "t.loom", &m, msg);
  if (st != LOOM_OK) fail_msg("load: %s", msg);
  free(f.bytes);
  return m;
}

/* X: f32 user, int8 NCHWC [1,3,2,2] block 4 (scale 0.5, zp 1) in buffer 0.
 * Xraw: the same 16 bytes seen as plain int8 [1,1,2,2,4].
 * Y = DEQUANTIZE(X): f32 plain [1,3,2,2] in buffer 1.
 * Q = QUANTIZE(Y): int8 NCHWC [1,3,2,2] block 2 (scale 0.25, zp -3), user
 *     f32, in buffer 2. */
static struct built quant_model(void) {
  struct loom_file_builder *b = loom_file_builder_new(LOOM_CONFIG_TINY_HASH);
  const int64_t d4[4] = {1, 3, 2, 2}, d5[5] = {1, 1, 2, 2, 4};
  work_buffer(b, "xbuf", 16);
  work_buffer(b, "ybuf", 48);
  work_buffer(b, "qbuf", 16);
  struct loom_file_tensor t = tensor(b, "X", LOOM_ROLE_INPUT, LOOM_DT_I8, 0, 4, d4);
  t.user_dtype = LOOM_DT_F32, t.layout = LOOM_LAYOUT_NCHWC, t.layout_block = 4;
  t.scale = 0.5f, t.zero_point = 1;
  uint32_t x = loom_fb_tensor(b, &t);
  t = tensor(b, "Xraw", LOOM_ROLE_OUTPUT, LOOM_DT_I8, 0, 5, d5);
  loom_fb_tensor(b, &t);
  t = tensor(b, "Y", LOOM_ROLE_OUTPUT, LOOM_DT_F32, 1, 4, d4);
  uint32_t y = loom_fb_tensor(b, &t);
  t = tensor(b, "Q", LOOM_ROLE_OUTPUT, LOOM_DT_I8, 2, 4, d4);
  t.user_dtype = LOOM_DT_F32, t.layout = LOOM_LAYOUT_NCHWC, t.layout_block = 2;
  t.scale = 0.25f, t.zero_point = -3;
  uint32_t q = loom_fb_tensor(b, &t);
  host_step(b, LOOM_HOSTOP_DEQUANTIZE, x, y, 0, 0);
  host_step(b, LOOM_HOSTOP_QUANTIZE, y, q, 0, 0);
  return finish(b);
}

static void model_quantizes_and_packs(void **state) {
  loom_device *dev = open_fsim("config=tiny");
  loom_model *m = load(dev, quant_model());
  assert_int_equal(loom_model_input_count(m), 1);
  assert_int_equal(loom_model_output_count(m), 3);
  const struct loom_tensor_info *in = loom_model_input(m, 0);
  assert_string_equal(in->name, "X");
  assert_int_equal(in->dtype, LOOM_DT_F32);
  assert_int_equal(in->rank, 4);
  assert_true(in->scale == 0.5f);
  assert_null(loom_model_input(m, 1));
  /* c-major logical order: X[0][c][h][w] */
  const float x[12] = {0.25f, 0.75f, 1.25f, -1.25f,  /* c0: 0.5, 1.5, 2.5, -2.5 -> 0, 2, 2, -2 */
                       -100, 100, 0, 63.0f,         /* c1: clamp, clamp, 0, 126 */
                       0.5f, -0.5f, 1.0f, -0.75f};  /* c2: 1, -1, 2, -1.5 -> -2 */
  const int64_t dims[4] = {1, 3, 2, 2};
  assert_int_equal(loom_model_set_input(m, "X", LOOM_DT_F32, 4, dims, x), LOOM_OK);
  assert_int_equal(loom_model_run(m, 0), LOOM_OK);
  int8_t raw[16];
  assert_int_equal(loom_model_get_output(m, "Xraw", raw, sizeof raw), LOOM_OK);
  /* [h][w][c] with lane 3 padded by the zero point. */
  const int8_t want_raw[16] = {1, -128, 2, 1,  3, 127, 0, 1,  3, 1, 3, 1,  -1, 127, -1, 1};
  assert_memory_equal(raw, want_raw, 16);
  float y[12];
  assert_int_equal(loom_model_get_output(m, "Y", y, sizeof y), LOOM_OK);
  const float want_y[12] = {0, 1, 1, -1, -64.5f, 63, 0, 63, 0.5f, -0.5f, 1, -1};
  for (int i = 0; i < 12; i++) assert_true(y[i] == want_y[i]);
  /* Q = quantize(Y, 0.25, -3), read back dequantized. */
  float q[12];
  assert_int_equal(loom_model_get_output(m, "Q", q, sizeof q), LOOM_OK);
  const float want_q[12] = {0, 1, 1, -1, -31.25f, 32.5f, 0, 32.5f, 0.5f, -0.5f, 1, -1};
  for (int i = 0; i < 12; i++) assert_true(q[i] == want_q[i]);
  /* Raw int8 in, too (the stored dtype). */
  const int8_t xi[12] = {0};
  assert_int_equal(loom_model_set_input(m, "X", LOOM_DT_I8, 4, dims, xi), LOOM_OK);
  assert_int_equal(loom_model_get_output(m, "Xraw", raw, sizeof raw), LOOM_OK);
  for (int i = 0; i < 16; i++) assert_int_equal(raw[i], (i % 4 == 3) ? 1 : 0);
  loom_model_free(m);
  loom_device_close(dev);
}

static void quantize_rounds_half_to_even(void **state) {
  /* 0.5 -> 0, 1.5 -> 2, 2.5 -> 2, -0.5 -> 0, -1.5 -> -2 (scale 1, zp 0). */
  struct loom_file_builder *b = loom_file_builder_new(LOOM_CONFIG_TINY_HASH);
  const int64_t d[1] = {6};
  work_buffer(b, "a", 64);
  work_buffer(b, "b", 64);
  struct loom_file_tensor t = tensor(b, "in", LOOM_ROLE_INPUT, LOOM_DT_F32, 0, 1, d);
  uint32_t in = loom_fb_tensor(b, &t);
  t = tensor(b, "out", LOOM_ROLE_OUTPUT, LOOM_DT_I8, 1, 1, d);
  t.scale = 1;
  uint32_t out = loom_fb_tensor(b, &t);
  host_step(b, LOOM_HOSTOP_QUANTIZE, in, out, 0, 0);
  loom_device *dev = open_fsim("config=tiny");
  loom_model *m = load(dev, finish(b));
  const float x[6] = {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, NAN};
  assert_int_equal(loom_model_set_input(m, "in", LOOM_DT_F32, 1, d, x), LOOM_OK);
  assert_int_equal(loom_model_run(m, 0), LOOM_OK);
  int8_t q[6];
  assert_int_equal(loom_model_get_output(m, "out", q, 6), LOOM_OK);
  const int8_t want[6] = {0, 2, 2, 0, -2, 0};
  assert_memory_equal(q, want, 6);
  loom_model_free(m);
  loom_device_close(dev);
}

static void softmax_and_nc_layout(void **state) {
  /* S f32 [2,3] -> P f32 [2,3] by SOFTMAX(axis param -1); P2 = COPY(P) into NC block 2. */
  struct loom_file_builder *b = loom_file_builder_new(LOOM_CONFIG_TINY_HASH);
  const int64_t d[2] = {2, 3};
  work_buffer(b, "s", 64);
  work_buffer(b, "p", 64);
  work_buffer(b, "p2", 64);
  struct loom_file_tensor t = tensor(b, "S", LOOM_ROLE_INPUT, LOOM_DT_F32, 0, 2, d);
  uint32_t s = loom_fb_tensor(b, &t);
  t = tensor(b, "P", LOOM_ROLE_OUTPUT, LOOM_DT_F32, 1, 2, d);
  uint32_t p = loom_fb_tensor(b, &t);
  t = tensor(b, "P2", LOOM_ROLE_OUTPUT, LOOM_DT_F32, 2, 2, d);
  t.layout = LOOM_LAYOUT_NC, t.layout_block = 2;
  uint32_t p2 = loom_fb_tensor(b, &t);
  const int32_t axis = -1;
  uint64_t off = loom_fb_data(b, &axis, 4, 8);
  host_step(b, LOOM_HOSTOP_SOFTMAX, s, p, off, 4);
  host_step(b, LOOM_HOSTOP_COPY, p, p2, 0, 0);
  loom_device *dev = open_fsim("config=tiny");
  loom_model *m = load(dev, finish(b));
  const float x[6] = {1, 2, 3, 1000, 1000, 1000};
  assert_int_equal(loom_model_set_input(m, "S", LOOM_DT_F32, 2, d, x), LOOM_OK);
  assert_int_equal(loom_model_run(m, 0), LOOM_OK);
  float y[6], y2[6];
  assert_int_equal(loom_model_get_output(m, "P", y, sizeof y), LOOM_OK);
  assert_int_equal(loom_model_get_output(m, "P2", y2, sizeof y2), LOOM_OK);
  double e1 = exp(-2), e2 = exp(-1), sum = e1 + e2 + 1;
  assert_true(fabs(y[0] - e1 / sum) < 1e-6 && fabs(y[1] - e2 / sum) < 1e-6);
  assert_true(fabs(y[2] - 1 / sum) < 1e-6);
  for (int i = 3; i < 6; i++) assert_true(fabs(y[i] - 1.0 / 3) < 1e-6);
  assert_memory_equal(y, y2, sizeof y);
  loom_model_free(m);
  loom_device_close(dev);
}

/* The add-5 program as a model: uops CONST, "acc" int32 [8] input in
 * buffer 1, "out" int8 [8] output in buffer 2. */
static struct built add5_model(uint32_t hash, uint32_t out_seg) {
  struct loom_file_builder *b = loom_file_builder_new(hash);
  uint8_t insns[5 * LOOM_INSN_BYTES], uop[4];
  encode_add5(insns, out_seg);
  struct loom_uop u = {0, 0, 0};
  loom_uop_encode(&u, uop);
  struct loom_file_buffer cb = {.name = loom_fb_string(b, "uops"), .kind = LOOM_BUFKIND_CONST,
                                .size = 4, .align = 64};
  cb.data_offset = loom_fb_data(b, uop, 4, 64);
  loom_fb_buffer(b, &cb);
  work_buffer(b, "acc", 32);
  work_buffer(b, "out", 8);
  const int64_t d[1] = {8};
  struct loom_file_tensor t = tensor(b, "acc", LOOM_ROLE_INPUT, LOOM_DT_I32, 1, 1, d);
  loom_fb_tensor(b, &t);
  t = tensor(b, "out", LOOM_ROLE_OUTPUT, LOOM_DT_I8, 2, 1, d);
  loom_fb_tensor(b, &t);
  struct loom_file_job j = {.insn_first = loom_fb_insns(b, insns, 5), .insn_count = 5};
  for (int s = 0; s < 8; s++) j.segments[s] = s < 3 ? (uint32_t)s : LOOM_FILE_NO_BUFFER;
  loom_fb_job(b, &j);
  struct loom_file_step st = {.kind = LOOM_STEP_JOB, .index = 0};
  for (int k = 0; k < 4; k++) st.inputs[k] = LOOM_FILE_NO_BUFFER;
  st.outputs[0] = st.outputs[1] = LOOM_FILE_NO_BUFFER;
  loom_fb_step(b, &st);
  return finish(b);
}

static void model_runs_a_job(void **state) {
  loom_device *dev = open_fsim("config=tiny");
  loom_model *m = load(dev, add5_model(LOOM_CONFIG_TINY_HASH, 2));
  const int64_t d[1] = {8};
  assert_int_equal(loom_model_job_count(m), 1);
  assert_int_equal(loom_model_set_input(m, "acc", LOOM_DT_I32, 1, d, add5_in), LOOM_OK);
  for (int run = 0; run < 2; run++) {
    assert_int_equal(loom_model_run(m, 0), LOOM_OK);
    int8_t out[8];
    assert_int_equal(loom_model_get_output(m, "out", out, 8), LOOM_OK);
    assert_memory_equal(out, add5_out, 8);
    const struct loom_job_result *r = loom_model_job_result(m, 0);
    assert_non_null(r);
    assert_int_equal(r->counters[LOOM_CNT_ALU_OPS], 1);
    assert_int_equal(r->counters[LOOM_CNT_BYTES_RD_ACC], 32);
  }
  assert_null(loom_model_job_result(m, 1));
  loom_model_free(m);
  loom_device_close(dev);
}

static void model_user_errors(void **state) {
  loom_device *dev = open_fsim("config=tiny");
  loom_model *m = load(dev, add5_model(LOOM_CONFIG_TINY_HASH, 2));
  const int64_t d[1] = {8}, d2[2] = {2, 4};
  const float f[8] = {0};
  assert_int_equal(loom_model_run(m, 0), LOOM_E_INVALID);
  assert_string_equal(loom_device_error(dev), "input 'acc' was not set");
  assert_int_equal(loom_model_set_input(m, "nope", LOOM_DT_I32, 1, d, add5_in), LOOM_E_NOTFOUND);
  assert_string_equal(loom_device_error(dev), "no input named 'nope' (inputs: acc)");
  assert_int_equal(loom_model_set_input(m, "acc", LOOM_DT_F32, 1, d, f), LOOM_E_INVALID);
  assert_string_equal(loom_device_error(dev), "input 'acc': expects int32, got float32");
  assert_int_equal(loom_model_set_input(m, "acc", LOOM_DT_I32, 2, d2, add5_in), LOOM_E_INVALID);
  assert_string_equal(loom_device_error(dev), "input 'acc': expects shape [8], got [2, 4]");
  assert_int_equal(loom_model_set_input(m, "acc", LOOM_DT_I32, 1, d, add5_in), LOOM_OK);
  assert_int_equal(loom_model_run(m, 0), LOOM_OK);
  int8_t out[8];
  assert_int_equal(loom_model_get_output(m, "out", out, 4), LOOM_E_INVALID);
  assert_non_null(strstr(loom_device_error(dev), "is 8 bytes"));
  assert_int_equal(loom_model_get_output(m, "acc", out, 8), LOOM_E_NOTFOUND);
  loom_model_free(m);
  loom_device_close(dev);
}

static void model_job_failure_names_step(void **state) {
  loom_device *dev = open_fsim("config=tiny");
  loom_model *m = load(dev, add5_model(LOOM_CONFIG_TINY_HASH, 6));
  const int64_t d[1] = {8};
  assert_int_equal(loom_model_set_input(m, "acc", LOOM_DT_I32, 1, d, add5_in), LOOM_OK);
  assert_int_equal(loom_model_run(m, 0), LOOM_E_JOB);
  assert_non_null(strstr(loom_device_error(dev), "step 0 (job 0): job failed: SEGMENT at insn 3"));
  assert_int_equal(loom_model_job_result(m, 0)->error, LOOM_ERR_SEGMENT);
  loom_model_free(m);
  loom_device_close(dev);
}

static void model_refuses_other_config(void **state) {
  loom_device *dev = open_fsim("config=default");
  struct built f = add5_model(LOOM_CONFIG_TINY_HASH, 2);
  loom_model *m = (loom_model *)1;
  char msg[LOOM_MSG_MAX] = "";
  assert_int_equal(loom_model_load_memory(dev, f.bytes, f.size, "t.loom", &m, msg), LOOM_E_CONFIG);
  assert_null(m);
  assert_string_equal(msg, "t.loom: built for hardware config 'tiny' (0xBE827F10), but the fsim "
                           "device implements config 'default' (0xE7A797E1)");
  free(f.bytes);
  f = add5_model(0x12345678, 2);
  assert_int_equal(loom_model_load_memory(dev, f.bytes, f.size, "t.loom", &m, msg), LOOM_E_CONFIG);
  assert_non_null(strstr(msg, "unknown (0x12345678)"));
  free(f.bytes);
  loom_device_close(dev);
}

static void model_refuses_damaged_file(void **state) {
  loom_device *dev = open_fsim("config=tiny");
  struct built f = add5_model(LOOM_CONFIG_TINY_HASH, 2);
  loom_model *m = NULL;
  char msg[LOOM_MSG_MAX] = "";
  for (size_t cut = 0; cut < f.size; cut += 7) {
    loom_status st = loom_model_load_memory(dev, f.bytes, cut, "t.loom", &m, msg);
    assert_int_not_equal(st, LOOM_OK);
    assert_null(m);
    assert_true(!strncmp(msg, "t.loom: ", 8));
  }
  f.bytes[f.size - 1] ^= 1;
  assert_int_equal(loom_model_load_memory(dev, f.bytes, f.size, "t.loom", &m, msg), LOOM_E_FORMAT);
  free(f.bytes);
  assert_int_equal(loom_model_load(dev, "/nonexistent/x.loom", &m, msg), LOOM_E_NOTFOUND);
  assert_non_null(strstr(msg, "/nonexistent/x.loom"));
  loom_device_close(dev);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(model_quantizes_and_packs),
      cmocka_unit_test(quantize_rounds_half_to_even),
      cmocka_unit_test(softmax_and_nc_layout),
      cmocka_unit_test(model_runs_a_job),
      cmocka_unit_test(model_user_errors),
      cmocka_unit_test(model_job_failure_names_step),
      cmocka_unit_test(model_refuses_other_config),
      cmocka_unit_test(model_refuses_damaged_file),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
