/*
 * compilerun.c - compile, run on fsim, compare (compilerun.h).
 */
#include "compilerun.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "testcalib.h"

struct ir_graph *parse_ok(const char *text) {
  struct ir_error err = {{0}};
  struct ir_graph *g = ir_parse(text, "t.ir", &err);
  if (!g) fail_msg("parse failed: %s", err.msg);
  return g;
}

int compile_text(const char *text, const char *calib, const char *config, struct compile_result *r,
                 struct ir_error *err) {
  struct compile_options o = {.config = config, .calib = calib};
  return compile_graph(parse_ok(text), &o, r, err);
}

void run_fsim(const struct compile_result *r, loom_dtype dt, const void *x, void *y, size_t bytes) {
  char msg[LOOM_MSG_MAX], opts[64];
  loom_device *dev;
  loom_model *m;
  snprintf(opts, sizeof opts, "config=%s", r->cfg->name);
  if (loom_device_open("fsim", opts, &dev, msg)) fail_msg("%s", msg);
  if (loom_model_load_memory(dev, r->bytes, r->size, "t.loom", &m, msg)) fail_msg("%s", msg);
  const struct loom_tensor_info *in = loom_model_input(m, 0), *out = loom_model_output(m, 0);
  if (loom_model_set_input(m, in->name, dt, in->rank, in->dims, x) || loom_model_run(m, 0) ||
      loom_model_get_output(m, out->name, y, bytes))
    fail_msg("fsim: %s", loom_device_error(dev));
  loom_model_free(m);
  loom_device_close(dev);
}

void assert_bit_exact(const struct compile_result *r, loom_dtype dt, const void *x) {
  const struct ir_tensor *t = &r->graph->tensors[r->graph->outputs[0]];
  size_t bytes = (size_t)ir_tensor_bytes(t);
  void *y = malloc(bytes), **want = calloc((size_t)r->graph->n_outputs, sizeof *want);
  const void *in[1] = {x};
  struct ir_error err = {{0}};
  run_fsim(r, dt, x, y, bytes);
  if (ir_eval_ref(r->graph, in, want, &err)) fail_msg("%s", err.msg);
  assert_memory_equal(y, want[0], bytes);
  free(y);
  for (int i = 0; i < r->graph->n_outputs; i++) free(want[i]);
  free(want);
}

char *placement_summary(const struct compile_result *r) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  compile_placement_print(f, r);
  fclose(f);
  return buf;
}

int count_rows(const struct compile_result *r, const char *op) {
  int n = 0;
  for (int i = 0; i < r->n_layers; i++) n += strstr(r->layers[i].op, op) != NULL;
  return n;
}

void compile_calibrated(const char *text, int rank, const int64_t *dims, unsigned seed, const char *config,
                        unsigned flags, struct compile_result *r) {
  struct calib_file cf;
  struct ir_error err = {{0}};
  assert_int_equal(0, write_calib(&cf, rank, dims, 8, seed));
  struct compile_options o = {.config = config, .calib = cf.path, .flags = flags};
  int rc = compile_graph(parse_ok(text), &o, r, &err);
  remove_calib(&cf);
  if (rc) fail_msg("%s", err.msg);
}

void bit_exact_on_waves(const struct compile_result *r, int n, int k, float amp) {
  float *x = malloc((size_t)n * sizeof *x);
  for (int s = 0; s < 4; s++) {
    for (int i = 0; i < n; i++) x[i] = sinf((float)(i * (s + k))) * amp;
    assert_bit_exact(r, LOOM_DT_F32, x);
  }
  free(x);
}
