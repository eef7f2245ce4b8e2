/*
 * compile.c - the compiler driver: the passes in order, then the .loom.
 *
 *   import -> default passes (shape inference, folding, BN folding, DCE)
 *          -> float model: MatMul+Add as Gemm, calibration, quantization to QDQ
 *             (a model that already has Q/DQ or QLinear ops keeps its scales)
 *          -> fusion into the int8 ops -> partition -> int8 Softmax (compile_qsoftmax.c)
 *             and LayerNorm (compile_qlayernorm.c)
 *          -> .loom (compile_loom.c)
 *
 * Each stage leaves a verified graph, and with options->trace set the IR
 * is printed after each one, which is how a surprising result is debugged:
 * the fused graph is the exact int8 model (the reference interpreter runs
 * it with the accelerator's integer semantics), so an accuracy problem
 * shows there before any lowering is involved.  The fused graph is kept in
 * the result for that purpose.
 */
#include "sw_compiler/compile.h"

#include <stdlib.h>
#include <string.h>

static void trace(const struct compile_options *o, const struct ir_graph *g, const char *stage) {
  if (!o->trace) return;
  fprintf(o->trace, "# ---- %s ----\n", stage);
  ir_print(g, o->trace, IR_PRINT_ELIDE);
}

static const struct loom_hw_config *pick_config(const struct compile_options *o, struct ir_error *err) {
  if (o->hw) return o->hw;
  const struct loom_hw_config *cfg = loom_hw_config_by_name(o->config ? o->config : "default");
  if (cfg) return cfg;
  char known[128];
  loom_hw_config_names(known, sizeof known);
  ir_errorf(err, "--config: unknown hardware configuration '%s' (known: %s)", o->config, known);
  return NULL;
}

/* Calibrates on o->calib and rewrites the float graph in QDQ form. */
static int quantize(struct ir_graph *g, const struct compile_options *o, struct compile_result *r,
                    struct ir_error *err) {
  if (!o->calib)
    return ir_errorf(err, "%s: the model is float32: quantizing it needs calibration inputs (--calib DIR "
                     "of .npy files)", g->source), -1;
  if (ir_pass_const_ops_to_conv(g, o->flags & COMPILE_NO_ACT ? CONST_OPS_NO_ACT : 0, err) ||
      ir_pass_fuse_matmul_bias(g, err) || ir_pass_split_act_matmul(g, r->cfg->block_in, err))
    return -1;
  int n = g->n_tensors;
  struct calib_range *ranges = ir_xcalloc((size_t)n + 1, sizeof *ranges);
  int rc = calib_collect(g, o->calib, ranges, &r->calib_samples, &o->progress, err);
  int clip = o->flags & (COMPILE_CLIP_MSE | COMPILE_CLIP_PERCENTILE);
  if (!rc && (o->flags & COMPILE_CLIP_PERCENTILE)) rc = calib_choose_percentile(ranges, n, o->clip_percentile, err);
  else if (!rc && (o->flags & COMPILE_CLIP_MSE)) calib_choose_clip(ranges, n);
  rc = rc ||
           ir_pass_quantize(g, ranges, n, (clip ? QUANT_CLIP : 0) | (o->flags & COMPILE_NO_ACT ? QUANT_NO_ACT : 0),
                            err);
  calib_ranges_free(ranges, n);
  free(ranges);
  return rc ? -1 : 0;
}

static char **output_names(const struct ir_graph *g) {
  char **names = ir_xcalloc((size_t)g->n_outputs + 1, sizeof *names);
  for (int i = 0; i < g->n_outputs; i++) names[i] = ir_xstrdup(g->tensors[g->outputs[i]].name);
  return names;
}

static void free_names(char **names, int n) {
  for (int i = 0; i < n; i++) free(names[i]);
  free(names);
}

/* --target cpu: every node a host step, in its own type. */
static int host_pipeline(struct ir_graph *g, const struct compile_options *o, struct compile_result *r,
                         char **out_names, struct ir_error *err) {
  r->targets = ir_xcalloc((size_t)g->n_nodes + 1, sizeof *r->targets);
  return ir_pass_partition_host(g, r->targets, err) || compile_loom(g, r->targets, out_names, r->cfg, o->flags, &o->progress, r, err)
             ? -1
             : 0;
}

static int run_pipeline(struct ir_graph *g, const struct compile_options *o, struct compile_result *r,
                        char **out_names, struct ir_error *err) {
  if (compile_fix_inputs(g, o->input_shapes, o->n_input_shapes, err) || ir_run_default_passes(g, err)) return -1;
  trace(o, g, "imported");
  if (o->target == COMPILE_TARGET_CPU) return host_pipeline(g, o, r, out_names, err);
  if (!ir_graph_is_quantized(g)) {
    if (quantize(g, o, r, err)) return -1;
    trace(o, g, "quantized (QDQ)");
  }
  if (ir_pass_fuse(g, (o->flags & COMPILE_NO_RESIDUAL ? FUSE_NO_RESIDUAL : 0) | (o->flags & COMPILE_NO_ACT ? FUSE_NO_ACT : 0), err) ||
      ir_pass_fuse_act_matmul(g, r->cfg->block_in, err))
    return -1;
  trace(o, g, "fused");
  r->targets = ir_xcalloc((size_t)g->n_nodes + 1, sizeof *r->targets);
  if (ir_pass_partition(g, r->cfg->block_in, r->targets, err) || compile_place_tables(g, r->cfg, o->flags, r, err))
    return -1;
  compile_int8_softmax(g, r->targets);
  compile_int8_layernorm(g, r->targets);
  return compile_loom(g, r->targets, out_names, r->cfg, o->flags, &o->progress, r, err) ? -1 : 0;
}

int compile_graph(struct ir_graph *g, const struct compile_options *o, struct compile_result *r,
                  struct ir_error *err) {
  memset(r, 0, sizeof *r);
  r->graph = g;
  r->target = o->target;
  r->cfg = pick_config(o, err);
  if (!r->cfg) return -1;
  int n_out = g->n_outputs;
  char **names = output_names(g);
  int rc = run_pipeline(g, o, r, names, err);
  free_names(names, n_out);
  return rc;
}

int compile_onnx(const char *path, const struct compile_options *o, struct compile_result *r,
                 struct ir_error *err) {
  memset(r, 0, sizeof *r);
  struct ir_graph *g = onnx_import_file(path, err);
  return g ? compile_graph(g, o, r, err) : -1;
}

static int native_wanted(const struct compile_options *o) {
  return !o->host_triple || strcmp(o->host_triple, "none");
}

/* --target cpu as one native step: the float graph the LLVM graph compiler
 * takes whole (1), else 0 and compile_graph takes over. */
static int whole_graph_native(struct ir_graph *g, const struct compile_options *o, struct compile_result *r,
                              struct ir_error *err) {
  struct hostgen_options ho = {.triple = o->host_triple, .cpu = o->host_cpu};
  if (compile_fix_inputs(g, o->input_shapes, o->n_input_shapes, err) || ir_run_default_passes(g, err)) return -1;
  if (!hostgen_graph_ok(g)) return 0;
  r->graph = g;
  r->target = o->target;
  r->cfg = pick_config(o, err);
  r->native = 1;
  r->targets = ir_xcalloc((size_t)g->n_nodes + 1, sizeof *r->targets);
  if (!r->cfg || ir_pass_partition_host(g, r->targets, err)) return -1;
  ir_progress_report(&o->progress, "the whole graph as host code (LLVM)", 0, 0);
  if (hostgen_compile_graph(g, &ho, r->cfg, &r->bytes, &r->size, &r->host, err))
    return -1;
  return 1;
}

/* Native code for the host steps of the compiled file r->bytes. */
static int add_host_code(const char *path, const struct compile_options *o, struct compile_result *r,
                         struct ir_error *err) {
  struct hostgen_options ho = {.triple = o->host_triple, .cpu = o->host_cpu};
  uint8_t *out = NULL;
  size_t size = 0;
  ir_progress_report(&o->progress, "host code (LLVM)", 0, 0);
  if (hostgen_loom(r->bytes, r->size, path, &ho, &out, &size, &r->host, err)) return -1;
  free(r->bytes);
  r->bytes = out, r->size = size, r->native = 1;
  return 0;
}

int compile_model(const char *path, const struct compile_options *o, struct compile_result *r,
                  struct ir_error *err) {
  memset(r, 0, sizeof *r);
  struct ir_graph *g = onnx_import_file(path, err);
  if (!g) return -1;
  if (o->target == COMPILE_TARGET_CPU && native_wanted(o)) {
    int whole = whole_graph_native(g, o, r, err);
    if (whole) return whole > 0 ? 0 : (r->graph ? -1 : (ir_graph_free(g), -1));
  }
  if (compile_graph(g, o, r, err)) return -1;
  return native_wanted(o) ? add_host_code(path, o, r, err) : 0;
}

void compile_result_free(struct compile_result *r) {
  free(r->bytes);
  ir_graph_free(r->graph);
  free(r->layers);
  free(r->targets);
  free(r->host_tables);
  memset(r, 0, sizeof *r);
}
