/*
 * make_cross_models.c - builds, on the build machine, the .loom files whose
 * native host code tests/llvm/run-cross.sh runs on other machines.
 *
 *   make_cross_models TRIPLE OUTDIR [MODELSDIR]
 *
 *   OUTDIR/ops.loom         random host-op steps (COPY, QUANTIZE, DEQUANTIZE,
 *                           SOFTMAX over plain / NCHWc / NC layouts, int8,
 *                           uint8, int32, f32) plus a QUANTIZE -> DEQUANTIZE
 *                           -> SOFTMAX chain and a stem-like IM2COL (7x7,
 *                           stride 2, pad 3, into NCHWc16), with native
 *                           code for TRIPLE; softmax outputs are named sm_*
 *   OUTDIR/NAME.loom        --target cpu builds of MODELSDIR/NAME.onnx for
 *   OUTDIR/NAME_in.npy      the digits models, with a sample input and the
 *   OUTDIR/NAME_ref.npy     reference interpreter's output for it
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver/core/hostops.h"
#include "driver/core/hostops_nn.h"
#include "driver/core/loomfile.h"
#include "driver/core/npy.h"
#include "driver/core/outfile.h"
#include "sw_compiler/llvm/hostgen.h"

#define NB LOOM_FILE_NO_BUFFER

static uint64_t rng = 4242;
static int rint_in(int lo, int hi) {
  rng = rng * 6364136223846793005ull + 1442695040888963407ull;
  return lo + (int)((rng >> 33) % (uint64_t)(hi - lo + 1));
}

static uint32_t tensor(struct loom_file_builder *b, const char *name, uint32_t role, struct loom_file_tensor t) {
  t.name = loom_fb_string(b, name), t.role = role, t.user_dtype = t.dtype;
  t.bytes = loom_file_tensor_bytes(&t);
  struct loom_file_buffer buf = {.name = t.name, .kind = LOOM_BUFKIND_WORK, .size = t.bytes, .align = 64};
  t.buffer = loom_fb_buffer(b, &buf);
  return loom_fb_tensor(b, &t);
}

static void step(struct loom_file_builder *b, uint32_t op, uint32_t x, uint32_t y, int32_t axis) {
  struct loom_file_step s = {.kind = LOOM_STEP_HOST, .index = op, .inputs = {x, NB, NB, NB}, .outputs = {y, NB}};
  if (op == LOOM_HOSTOP_SOFTMAX) s.param_offset = loom_fb_data(b, &axis, 4, 4), s.param_size = 4;
  loom_fb_step(b, &s);
}

static void quant(struct loom_file_tensor *t, uint32_t dt) {
  t->dtype = dt;
  t->scale = (float)rint_in(1, 400) / 1000.0f;
  t->zero_point = dt == LOOM_DT_U8 ? rint_in(0, 255) : dt == LOOM_DT_I8 ? rint_in(-128, 127) : rint_in(-500, 500);
}

static void shape(struct loom_file_tensor *x, struct loom_file_tensor *y) {
  x->rank = (uint32_t)rint_in(1, 4);
  for (uint32_t i = 0; i < x->rank; i++) x->dims[i] = rint_in(1, i == 1 ? 20 : 5);
  static const uint32_t blocks[] = {1, 4, 8, 16};
  y->rank = x->rank;
  memcpy(y->dims, x->dims, sizeof y->dims);
  struct loom_file_tensor *both[2] = {x, y};
  for (int k = 0; k < 2; k++)
    if ((x->rank == 4 || x->rank == 2) && rint_in(0, 1))
      both[k]->layout = x->rank == 4 ? LOOM_LAYOUT_NCHWC : LOOM_LAYOUT_NC, both[k]->layout_block = blocks[rint_in(0, 3)];
}

/* One random step with its own input and output tensors. */
static void random_step(struct loom_file_builder *b, int i) {
  struct loom_file_tensor x = {0}, y = {0};
  uint32_t op = (uint32_t)(i % 4);
  shape(&x, &y);
  if (op == LOOM_HOSTOP_COPY) x.dtype = y.dtype = (uint32_t)rint_in(LOOM_DT_I8, LOOM_DT_F32);
  if (op == LOOM_HOSTOP_QUANTIZE) x.dtype = LOOM_DT_F32, quant(&y, rint_in(0, 1) ? LOOM_DT_I8 : LOOM_DT_U8);
  if (op == LOOM_HOSTOP_DEQUANTIZE) quant(&x, (uint32_t)rint_in(LOOM_DT_I8, LOOM_DT_I32)), y.dtype = LOOM_DT_F32;
  if (op == LOOM_HOSTOP_SOFTMAX) x.dtype = y.dtype = LOOM_DT_F32;
  if (op == LOOM_HOSTOP_SOFTMAX && rint_in(0, 2) == 0) quant(&x, LOOM_DT_I8);
  char xn[32], yn[32];
  snprintf(xn, sizeof xn, "x%d", i);
  snprintf(yn, sizeof yn, "%s%d", op == LOOM_HOSTOP_SOFTMAX ? "sm_" : "y", i);
  uint32_t xt = tensor(b, xn, LOOM_ROLE_INPUT, x), yt = tensor(b, yn, LOOM_ROLE_OUTPUT, y);
  step(b, op, xt, yt, rint_in(-(int)x.rank, (int)x.rank - 1));
}

/* x f32 -> QUANTIZE i8 NCHWc16 -> DEQUANTIZE f32 -> SOFTMAX over channels. */
static void chain(struct loom_file_builder *b) {
  struct loom_file_tensor x = {.dtype = LOOM_DT_F32, .rank = 4, .dims = {1, 20, 5, 3}}, q = x, d = x;
  q.dtype = LOOM_DT_I8, q.layout = LOOM_LAYOUT_NCHWC, q.layout_block = 16, q.scale = 0.05f, q.zero_point = 3;
  uint32_t xt = tensor(b, "chain_x", LOOM_ROLE_INPUT, x), qt = tensor(b, "chain_q", LOOM_ROLE_INTERNAL, q);
  uint32_t dt = tensor(b, "chain_d", LOOM_ROLE_INTERNAL, d), st = tensor(b, "sm_chain", LOOM_ROLE_OUTPUT, d);
  step(b, LOOM_HOSTOP_QUANTIZE, xt, qt, 0);
  step(b, LOOM_HOSTOP_DEQUANTIZE, qt, dt, 0);
  step(b, LOOM_HOSTOP_SOFTMAX, dt, st, 1);
}

/* x int8 [1,3,11,11] -> IM2COL 7x7 / 2, pad 3 -> int8 [1,147,6,6] NCHWc16. */
static void stem(struct loom_file_builder *b) {
  struct loom_file_tensor x = {.dtype = LOOM_DT_I8, .rank = 4, .dims = {1, 3, 11, 11}, .scale = 0.02f, .zero_point = -5};
  struct loom_file_tensor y = {.dtype = LOOM_DT_I8, .rank = 4, .dims = {1, 147, 6, 6}, .scale = 0.02f, .zero_point = -5,
                               .layout = LOOM_LAYOUT_NCHWC, .layout_block = 16};
  int32_t v[LOOM_IM2COL_PARAM_COUNT] = {[LOOM_IM2COL_K_H] = 7, [LOOM_IM2COL_K_W] = 7, [LOOM_IM2COL_STRIDE_H] = 2,
                                        [LOOM_IM2COL_STRIDE_W] = 2, [LOOM_IM2COL_PAD_T] = 3, [LOOM_IM2COL_PAD_L] = 3,
                                        [LOOM_IM2COL_DIL_H] = 1, [LOOM_IM2COL_DIL_W] = 1, [LOOM_IM2COL_OUT_H] = 6,
                                        [LOOM_IM2COL_OUT_W] = 6, [LOOM_IM2COL_PAD_VALUE] = -5};
  struct loom_file_step s = {.kind = LOOM_STEP_HOST, .index = LOOM_HOSTOP_IM2COL, .outputs = {NB, NB}};
  s.inputs[0] = tensor(b, "stem_x", LOOM_ROLE_INPUT, x), s.inputs[1] = s.inputs[2] = s.inputs[3] = NB;
  s.outputs[0] = tensor(b, "stem_y", LOOM_ROLE_OUTPUT, y);
  s.param_offset = loom_fb_data(b, v, sizeof v, 4), s.param_size = sizeof v; /* little-endian hosts only */
  loom_fb_step(b, &s);
}

static int write_bytes(const char *path, const uint8_t *p, size_t n) {
  char msg[LOOM_MSG_MAX];
  if (loom_outfile_write(path, p, n, msg) == LOOM_OK) return 0;
  fprintf(stderr, "%s\n", msg);
  return -1;
}

static int ops_model(const struct hostgen_options *o, const char *out) {
  struct loom_file_builder *b = loom_file_builder_new(LOOM_CONFIG_DEFAULT_HASH);
  for (int i = 0; i < 40; i++) random_step(b, i);
  chain(b);
  stem(b);
  size_t n, m;
  uint8_t *p = loom_file_builder_finish(b, &n), *q = NULL;
  loom_file_builder_free(b);
  struct ir_error err = {{0}};
  char path[512];
  snprintf(path, sizeof path, "%s/ops.loom", out);
  int rc = hostgen_loom(p, n, path, o, &q, &m, NULL, &err);
  if (rc) fprintf(stderr, "%s\n", err.msg);
  else rc = write_bytes(path, q, m);
  free(p), free(q);
  return rc;
}

/* NAME.onnx -> NAME.loom (--target cpu), NAME_in.npy, NAME_ref.npy. */
static int graph_model(const struct hostgen_options *o, const char *models, const char *name, const char *out) {
  char path[512], msg[LOOM_MSG_MAX];
  struct ir_error err = {{0}};
  snprintf(path, sizeof path, "%s/%s.onnx", models, name);
  FILE *f = fopen(path, "rb");
  if (!f) return printf("make_cross_models: no %s, skipped\n", path), 0;
  fclose(f);
  struct ir_graph *g = onnx_import_file(path, &err);
  struct loom_npy x;
  snprintf(path, sizeof path, "%s/%s_in0.npy", models, name);
  if (!g || ir_run_default_passes(g, &err) || loom_npy_read(path, &x, msg))
    return fprintf(stderr, "%s%s\n", err.msg, g ? msg : ""), -1;
  uint8_t *q;
  size_t m;
  void *ref[2] = {0};
  const void *in[1] = {x.data};
  int rc = hostgen_compile_graph(g, o, loom_hw_config_by_name("default"), &q, &m, NULL, &err) ||
           ir_eval_ref(g, in, ref, &err);
  if (rc) fprintf(stderr, "%s\n", err.msg);
  const struct ir_tensor *y = &g->tensors[g->outputs[0]];
  snprintf(path, sizeof path, "%s/%s.loom", out, name);
  if (!rc) rc = write_bytes(path, q, m);
  snprintf(path, sizeof path, "%s/%s_in.npy", out, name);
  if (!rc) rc = loom_npy_write(path, LOOM_DT_F32, x.rank, x.dims, x.data, msg) ? -1 : 0;
  snprintf(path, sizeof path, "%s/%s_ref.npy", out, name);
  if (!rc) rc = loom_npy_write(path, LOOM_DT_F32, y->rank, y->dims, ref[0], msg) ? -1 : 0;
  if (!rc) free(q);
  free(ref[0]);
  loom_npy_free(&x);
  ir_graph_free(g);
  return rc;
}

int main(int argc, char **argv) {
  if (argc != 3 && argc != 4) {
    fprintf(stderr, "usage: make_cross_models TRIPLE OUTDIR [MODELSDIR]\n");
    return 2;
  }
  struct hostgen_options o = {.triple = argv[1]};
  int rc = ops_model(&o, argv[2]);
  if (!rc && argc == 4) rc = graph_model(&o, argv[3], "digits_mlp", argv[2]) || graph_model(&o, argv[3], "digits_cnn", argv[2]);
  return rc ? 1 : 0;
}
