/*
 * test_runtime.c - libloom: devices, options, buffers, jobs, models.
 *
 * Jobs run on the fsim backend with small hand-encoded programs; timeouts
 * and resets are checked through a fake backend opened with
 * loom_device_open_ops().  Models are built in memory with the .loom
 * builder, so every case states exactly what the file holds: host-op-only
 * models exercise quantization and the blocked layouts, a one-job model the
 * accelerator path, and damaged or mismatched files the error messages.
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

#include "driver/lib/backend.h"
#include "driver/core/hostops.h"
#include "driver/core/loomfile.h"
#include "loom/isa.h"
#include "loom/loom.h"

static loom_device *open_fsim(const char *options) {
  loom_device *dev = NULL;
  char msg[LOOM_MSG_MAX] = "";
  assert_int_equal(loom_device_open("fsim", options, &dev, msg), LOOM_OK);
  assert_non_null(dev);
  return dev;
}

/* ---- names and options ---- */

static void names(void **state) {
  assert_string_equal(loom_status_name(LOOM_OK), "OK");
  assert_string_equal(loom_status_name(LOOM_E_NOTFOUND), "NOTFOUND");
  assert_string_equal(loom_status_name(LOOM_STATUS_COUNT), "?");
  assert_string_equal(loom_dtype_name(LOOM_DT_F32), "float32");
  assert_int_equal(loom_dtype_size(LOOM_DT_I32), 4);
  assert_int_equal(loom_dtype_size(LOOM_DT_I8), 1);
  assert_int_equal(loom_dtype_size(LOOM_DT_COUNT), 0);
  const char *const *b = loom_backend_names();
  assert_string_equal(b[0], "fsim");
  int n = 0;
  while (b[n]) n++;
  for (int i = 0; i < n; i++) assert_string_equal(loom_backends[i]->name, b[i]);
  assert_null(loom_backends[n]);
  assert_string_equal(loom_hostop_name(LOOM_HOSTOP_SOFTMAX), "SOFTMAX");
  assert_string_equal(loom_hostop_name(LOOM_HOSTOP_COUNT), "?");
}

static void options(void **state) {
  char v[16];
  assert_int_equal(loom_option_get("config=tiny", "config", v, sizeof v), 1);
  assert_string_equal(v, "tiny");
  assert_int_equal(loom_option_get(" dev = /dev/loom0 , config=large,", "dev", v, sizeof v), 1);
  assert_string_equal(v, "/dev/loom0");
  assert_int_equal(loom_option_get("config=a,config=b", "config", v, sizeof v), 1);
  assert_string_equal(v, "b");
  assert_int_equal(loom_option_get("configx=a", "config", v, sizeof v), 0);
  assert_int_equal(loom_option_get(NULL, "config", v, sizeof v), 0);
  assert_int_equal(loom_option_get("config=0123456789abcdefXYZ", "config", v, sizeof v), 1);
  assert_string_equal(v, "0123456789abcde");
  static const char *const known[] = {"config", NULL};
  char msg[LOOM_MSG_MAX] = "";
  assert_int_equal(loom_option_check("config=tiny", known, "fsim", msg), LOOM_OK);
  assert_int_equal(loom_option_check(NULL, known, "fsim", msg), LOOM_OK);
  assert_int_equal(loom_option_check("conf=tiny", known, "fsim", msg), LOOM_E_INVALID);
  assert_string_equal(msg, "fsim: unknown option 'conf' (known: config)");
  assert_int_equal(loom_option_check("tiny", known, "fsim", msg), LOOM_E_INVALID);
  assert_non_null(strstr(msg, "key=value"));
}

/* ---- devices ---- */

static void open_fsim_configs(void **state) {
  loom_device *dev = open_fsim(NULL);
  assert_string_equal(loom_device_config(dev)->name, "default");
  assert_string_equal(loom_device_backend(dev), "fsim");
  loom_device_close(dev);
  dev = open_fsim("config=tiny");
  assert_int_equal(loom_device_config(dev)->hash, LOOM_CONFIG_TINY_HASH);
  loom_device_close(dev);
}

static void open_errors(void **state) {
  loom_device *dev = (loom_device *)1;
  char msg[LOOM_MSG_MAX] = "";
  assert_int_equal(loom_device_open("nosuch", NULL, &dev, msg), LOOM_E_NOTFOUND);
  assert_null(dev);
  assert_non_null(strstr(msg, "unknown backend 'nosuch'"));
  assert_non_null(strstr(msg, "fsim"));
  /* A backend Loom defines but this build lacks (one of them, if any). */
  static const char *const defined[] = {"tsim", "linux", "xrt"};
  for (int i = 0; i < 3; i++) {
    int built = 0;
    for (const char *const *n = loom_backend_names(); *n; n++) built |= !strcmp(*n, defined[i]);
    if (built) continue;
    assert_int_equal(loom_device_open(defined[i], NULL, &dev, msg), LOOM_E_UNSUPPORTED);
    assert_non_null(strstr(msg, "not compiled"));
    break;
  }
  assert_int_equal(loom_device_open("fsim", "config=huge", &dev, msg), LOOM_E_NOTFOUND);
  assert_non_null(strstr(msg, "unknown config 'huge'"));
  assert_non_null(strstr(msg, "tiny"));
  assert_int_equal(loom_device_open("fsim", "cfg=tiny", &dev, msg), LOOM_E_INVALID);
  assert_non_null(strstr(msg, "unknown option 'cfg'"));
  assert_int_equal(loom_device_open(NULL, NULL, &dev, msg), LOOM_E_INVALID);
  assert_int_equal(loom_device_open("fsim", NULL, NULL, NULL), LOOM_E_INVALID);
}

/* ---- buffers ---- */

static void buffers(void **state) {
  loom_device *dev = open_fsim("config=tiny");
  loom_buffer *b = NULL;
  assert_int_equal(loom_buffer_alloc(dev, 100, &b), LOOM_OK);
  assert_int_equal(loom_buffer_size(b), 100);
  uint8_t *p = loom_buffer_map(b);
  assert_non_null(p);
  assert_int_equal((uintptr_t)p % 64, 0);
  for (int i = 0; i < 100; i++) assert_int_equal(p[i], 0);
  memset(p, 7, 100);
  assert_int_equal(loom_buffer_sync(b, LOOM_SYNC_TO_DEVICE), LOOM_OK);
  assert_int_equal(loom_buffer_sync(b, LOOM_SYNC_FROM_DEVICE), LOOM_OK);
  loom_buffer_free(b);
  assert_int_equal(loom_buffer_alloc(dev, 0, &b), LOOM_E_INVALID);
  assert_null(b);
  assert_non_null(strstr(loom_device_error(dev), "0 bytes"));
  loom_buffer_free(NULL);
  loom_device_close(dev);
}

/* ---- jobs ---- */

static void put_insn(uint8_t *dst, const struct loom_insn *in) {
  const char *bad = NULL;
  assert_int_equal(loom_insn_encode(in, dst, &bad), 0);
}

static struct loom_insn mem_insn(uint32_t op, uint32_t buf, uint32_t seg, uint32_t x) {
  struct loom_insn in = {.opcode = op};
  in.mem = (struct loom_insn_mem){.buffer = buf, .segment = seg, .y_size = 1, .x_size = x,
                                  .x_stride = x};
  return in;
}

/* The 5-instruction program of the job and model tests (config tiny):
 *   LOAD UOP  seg 0           one micro-op (acc 0, inp 0)
 *   LOAD ACC  seg 1           one row of 8 int32
 *   ALU ADD imm=5, push_next  ACC[0] += 5
 *   STORE     seg `out_seg`, pop_prev: 8 saturated int8
 *   FINISH */
static void encode_add5(uint8_t insns[5 * LOOM_INSN_BYTES], uint32_t out_seg) {
  struct loom_insn in = mem_insn(LOOM_OP_LOAD, LOOM_BUF_UOP, 0, 1);
  put_insn(insns, &in);
  in = mem_insn(LOOM_OP_LOAD, LOOM_BUF_ACC, 1, 1);
  put_insn(insns + 16, &in);
  in = (struct loom_insn){.opcode = LOOM_OP_ALU, .push_next = 1};
  in.alu = (struct loom_insn_alu){.alu_op = LOOM_ALU_ADD, .use_imm = 1, .imm = 5, .uop_end = 1,
                                  .iter_out = 1, .iter_in = 1};
  put_insn(insns + 32, &in);
  in = mem_insn(LOOM_OP_STORE, LOOM_BUF_OUT, out_seg, 1);
  in.pop_prev = 1;
  put_insn(insns + 48, &in);
  in = (struct loom_insn){.opcode = LOOM_OP_FINISH};
  put_insn(insns + 64, &in);
}

static const int32_t add5_in[8] = {10, -20, 130, -200, 0, 1, 2, 3};
static const int8_t add5_out[8] = {15, -15, 127, -128, 5, 6, 7, 8};

struct add5_job {
  loom_buffer *insns, *uop, *acc, *out;
  struct loom_job job;
};

static void add5_setup(loom_device *dev, struct add5_job *j, uint32_t out_seg) {
  assert_int_equal(loom_buffer_alloc(dev, 5 * LOOM_INSN_BYTES, &j->insns), LOOM_OK);
  assert_int_equal(loom_buffer_alloc(dev, 4, &j->uop), LOOM_OK);
  assert_int_equal(loom_buffer_alloc(dev, sizeof add5_in, &j->acc), LOOM_OK);
  assert_int_equal(loom_buffer_alloc(dev, 8, &j->out), LOOM_OK);
  encode_add5(loom_buffer_map(j->insns), out_seg);
  memcpy(loom_buffer_map(j->acc), add5_in, sizeof add5_in);
  memset(&j->job, 0, sizeof j->job);
  j->job.insns = j->insns;
  j->job.insn_count = 5;
  j->job.segments[0] = j->uop;
  j->job.segments[1] = j->acc;
  j->job.segments[2] = j->out;
}

static void add5_teardown(struct add5_job *j) {
  loom_buffer_free(j->insns);
  loom_buffer_free(j->uop);
  loom_buffer_free(j->acc);
  loom_buffer_free(j->out);
}

static void job_runs_on_fsim(void **state) {
  loom_device *dev = open_fsim("config=tiny");
  struct add5_job j;
  add5_setup(dev, &j, 2);
  struct loom_job_result res;
  assert_int_equal(loom_job_run(dev, &j.job, 0, &res), LOOM_OK);
  assert_int_equal(res.error, LOOM_ERR_NONE);
  assert_memory_equal(loom_buffer_map(j.out), add5_out, 8);
  assert_int_equal(res.counters[LOOM_CNT_ALU_OPS], 1);
  assert_int_equal(res.counters[LOOM_CNT_INSN_STORE], 1);
  assert_int_equal(res.counters[LOOM_CNT_BYTES_WR_OUT], 8);
  assert_int_equal(res.counters[LOOM_CNT_BYTES_RD_INSN], 5 * 16);
  /* Submit and wait separately; wait twice is an error. */
  assert_int_equal(loom_job_submit(dev, &j.job), LOOM_OK);
  assert_int_equal(loom_job_submit(dev, &j.job), LOOM_E_INVALID);
  assert_non_null(strstr(loom_device_error(dev), "already in flight"));
  assert_int_equal(loom_job_wait(dev, 1000, &res), LOOM_OK);
  assert_int_equal(loom_job_wait(dev, 1000, &res), LOOM_E_INVALID);
  assert_non_null(strstr(loom_device_error(dev), "no job in flight"));
  add5_teardown(&j);
  loom_device_close(dev);
}

static void job_error_is_reported(void **state) {
  loom_device *dev = open_fsim("config=tiny");
  struct add5_job j;
  add5_setup(dev, &j, 5); /* segment 5 is unmapped */
  struct loom_job_result res;
  assert_int_equal(loom_job_run(dev, &j.job, 0, &res), LOOM_E_JOB);
  assert_int_equal(res.error, LOOM_ERR_SEGMENT);
  assert_int_equal(res.error_insn, 3);
  assert_non_null(strstr(loom_device_error(dev), "job failed: SEGMENT at insn 3: "));
  /* The device takes the next job. */
  j.job.segments[5] = j.out;
  assert_int_equal(loom_job_run(dev, &j.job, 0, &res), LOOM_OK);
  assert_memory_equal(loom_buffer_map(j.out), add5_out, 8);
  add5_teardown(&j);
  loom_device_close(dev);
}

static void job_arguments_are_checked(void **state) {
  loom_device *dev = open_fsim("config=tiny"), *other = open_fsim("config=tiny");
  struct add5_job j;
  add5_setup(dev, &j, 2);
  j.job.insn_count = 6;
  assert_int_equal(loom_job_submit(dev, &j.job), LOOM_E_INVALID);
  assert_non_null(strstr(loom_device_error(dev), "6 instructions"));
  j.job.insn_count = 0;
  assert_int_equal(loom_job_submit(dev, &j.job), LOOM_E_INVALID);
  j.job.insn_count = 5;
  loom_buffer *foreign;
  assert_int_equal(loom_buffer_alloc(other, 64, &foreign), LOOM_OK);
  j.job.segments[7] = foreign;
  assert_int_equal(loom_job_submit(dev, &j.job), LOOM_E_INVALID);
  assert_non_null(strstr(loom_device_error(dev), "segment 7"));
  loom_buffer_free(foreign);
  add5_teardown(&j);
  loom_device_close(other);
  loom_device_close(dev);
}

/* ---- a fake backend whose jobs never finish ---- */

struct hang_state {
  int resets, submits;
};

static loom_status hang_open(const char *options, void **state, const struct loom_hw_config **cfg,
                             char msg[LOOM_MSG_MAX]) {
  *state = calloc(1, sizeof(struct hang_state));
  *cfg = loom_hw_config_by_name("tiny");
  return LOOM_OK;
}

static void hang_close(void *state) { free(state); }

static loom_status hang_alloc(void *state, size_t bytes, struct loom_backend_buffer *buf,
                              char msg[LOOM_MSG_MAX]) {
  buf->host = calloc(1, bytes);
  buf->size = bytes;
  return buf->host ? LOOM_OK : LOOM_E_NOMEM;
}

static void hang_free(void *state, struct loom_backend_buffer *buf) { free(buf->host); }

static loom_status hang_submit(void *state, const struct loom_backend_buffer *insns,
                               uint32_t insn_count,
                               const struct loom_backend_buffer *const segments[8],
                               char msg[LOOM_MSG_MAX]) {
  ((struct hang_state *)state)->submits++;
  return LOOM_OK;
}

static loom_status hang_wait(void *state, uint32_t timeout_ms, struct loom_job_result *res,
                             char msg[LOOM_MSG_MAX]) {
  snprintf(msg, LOOM_MSG_MAX, "DONE never rose (resets so far: %d)",
           ((struct hang_state *)state)->resets);
  return LOOM_E_TIMEOUT;
}

static loom_status hang_reset(void *state, char msg[LOOM_MSG_MAX]) {
  ((struct hang_state *)state)->resets++;
  return LOOM_OK;
}

static const struct loom_backend_ops hang_ops = {
    .name = "hang", .open = hang_open, .close = hang_close, .alloc = hang_alloc,
    .free = hang_free, .submit = hang_submit, .wait = hang_wait, .reset = hang_reset,
};

/* The fake reports how often it was reset in its wait() message. */
static void timeout_resets_device(void **state) {
  loom_device *dev = NULL;
  char msg[LOOM_MSG_MAX];
  assert_int_equal(loom_device_open_ops(&hang_ops, NULL, &dev, msg), LOOM_OK);
  assert_string_equal(loom_device_backend(dev), "hang");
  loom_buffer *insns;
  assert_int_equal(loom_buffer_alloc(dev, 16, &insns), LOOM_OK);
  struct loom_job job = {.insns = insns, .insn_count = 1};
  struct loom_job_result res;
  assert_int_equal(loom_job_run(dev, &job, 25, &res), LOOM_E_TIMEOUT);
  assert_int_equal(res.error, LOOM_ERR_TIMEOUT);
  assert_non_null(strstr(loom_device_error(dev), "timed out after 25 ms"));
  assert_non_null(strstr(loom_device_error(dev), "DONE never rose"));
  assert_non_null(strstr(loom_device_error(dev), "device reset"));
  /* Reset happened and the next job is accepted. */
  assert_int_equal(loom_job_submit(dev, &job), LOOM_OK);
  assert_int_equal(loom_job_wait(dev, 1, NULL), LOOM_E_TIMEOUT);
  assert_non_null(strstr(loom_device_error(dev), "resets so far: 1"));
  loom_buffer_free(insns);
  loom_device_close(dev);
}

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
      cmocka_unit_test(names),
      cmocka_unit_test(options),
      cmocka_unit_test(open_fsim_configs),
      cmocka_unit_test(open_errors),
      cmocka_unit_test(buffers),
      cmocka_unit_test(job_runs_on_fsim),
      cmocka_unit_test(job_error_is_reported),
      cmocka_unit_test(job_arguments_are_checked),
      cmocka_unit_test(timeout_resets_device),
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
