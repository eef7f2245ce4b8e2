/*
 * compile_qlayernorm.c - a transformer's LayerNormalization as one int8
 * host step.
 *
 * The accelerator cannot run a LayerNorm (its vector ALU is lane-wise: no
 * row sum, no reciprocal square root), so it stays on the host.  Where its
 * input arrives as int8 codes (the result of an int8 job, or of the
 * residual Add once that is one) and its result leaves as int8 codes, the
 * float form in between is
 *
 *   x (int8) -> [views] -> DequantizeLinear -> LayerNormalization
 *            -> [views] -> QuantizeLinear -> y (int8)
 *
 * three host steps (four with the COPY of a blocked [S, D] job result to a
 * plain [1, S, D]) and two float32 tensors.  compile_int8_layernorm
 * rewrites each such chain, after partitioning, into one LayerNormalization
 * node of int8 codes, x to y, along the last axis, with its gamma and beta
 * (float constants) and epsilon as they were, and kills the DQ, the Q and
 * the views between (compile_int8_chain of compile_qsoftmax.c: reshapes
 * that keep the last dimension, as around the Softmax); compile_loom emits that node as the host op QLAYERNORM
 * (driver/core/hostops_qlayernorm.h) with the integer constants
 * loom_ilayernorm_init makes from the scales, gamma, beta and epsilon.
 * The rewrite needs the LayerNorm along the last axis only (axis -1 or
 * rank - 1), its Mean and InvStdDev results unread, its float input read
 * by it alone and its float result by the views and Q alone (a LayerNorm whose
 * result is also read as float keeps the float form), gamma and beta
 * float constants of one or N values, per-tensor int8 at both ends, and
 * constants the integer form takes.
 *
 * The last LayerNorm of a ViT or a BERT is read through the class token:
 *
 *   x (int8) -> [views] -> DequantizeLinear -> LayerNormalization
 *            -> [views] -> Gather (constant indices) -> QuantizeLinear -> y
 *
 * five host steps (COPY, DEQUANTIZE, the float kernel, the Gather kernel,
 * QUANTIZE).  A per-tensor quantization commutes exactly with a Gather
 * along an axis other than the last (an element's code does not depend on
 * where it sits), so the LayerNorm becomes int8 with y's scale and zero
 * point, writing a new int8 tensor of the Gather's operand shape (all its
 * rows: those the Gather drops may saturate, nothing reads them), and the
 * Gather copies int8 codes into y (compile_int8_chain with `gathers`; a
 * view between the Gather and the QuantizeLinear keeps the float form, as
 * the Gather would have to write y's shape).  The class token's Gather is
 * a host COPY of one row (pass_partition.c), so the tail is two host steps.
 *
 * The rewritten node is the int8 model: the reference interpreter
 * evaluates an int8 LayerNormalization with the same intapprox.c code as
 * the host op (ir_eval_ref.c), so fsim still equals the fused graph bit for
 * bit; its error against float is intapprox.h's bound (docs/quantization.md).
 */
#include "sw_compiler/compile.h"

#include <stdlib.h>
#include <string.h>

#include "driver/core/hostops_qlayernorm.h"
#include "sw_compiler/compile_int.h"

static int int8_per_tensor(const struct ir_tensor *t) { return t->dtype == IR_DT_I8 && t->quant.n == 1; }

/* Tensor t exists and no live node or graph output reads it. */
static int unread(const struct ir_graph *g, int t) {
  if (t < 0) return 1;
  for (int i = 0; i < g->n_outputs; i++)
    if (g->outputs[i] == t) return 0;
  for (int i = 0; i < g->n_nodes; i++)
    for (int k = 0; !g->nodes[i].dead && k < g->nodes[i].n_in; k++)
      if (g->nodes[i].in[k] == t) return 0;
  return 1;
}

/* Operand k of n as a float constant (*n_vals values), or NULL. */
static const float *const_f32(const struct ir_graph *g, const struct ir_node *n, int k, int64_t *n_vals) {
  if (k >= n->n_in || n->in[k] < 0) return NULL;
  const struct ir_tensor *t = &g->tensors[n->in[k]];
  *n_vals = ir_tensor_numel(t);
  return t->dtype == IR_DT_F32 && t->data ? t->data : NULL;
}

int compile_is_int8_layernorm(const struct ir_graph *g, const struct ir_node *n) {
  return n->op == IR_OP_ONNX && !strcmp(n->type, "LayerNormalization") && n->n_in >= 1 &&
         g->tensors[n->in[0]].dtype == IR_DT_I8;
}

/* The integer constants of LayerNorm node n reading x and writing y (their
 * scales and zero points): *l, its gamma and beta in g_b (malloc'd, 2 N
 * values, freed by the caller; NULL when it fails). */
static int params_of(const struct ir_graph *g, const struct ir_node *n, int x, int y, struct loom_ilayernorm *l,
                     int32_t **g_b) {
  const struct ir_tensor *tx = &g->tensors[x], *ty = &g->tensors[y];
  int64_t len = tx->rank > 0 ? tx->dims[tx->rank - 1] : 0, n_gamma = 0, n_beta = 0;
  const float *gamma = const_f32(g, n, 1, &n_gamma), *beta = const_f32(g, n, 2, &n_beta);
  *g_b = NULL;
  if (!gamma || (n->n_in > 2 && n->in[2] >= 0 && !beta) || len < 1 || len > LOOM_ILAYERNORM_MAX_ROW ||
      !int8_per_tensor(tx) || !int8_per_tensor(ty))
    return -1;
  *g_b = ir_xmalloc(2 * (size_t)len * sizeof **g_b);
  return loom_ilayernorm_init(tx->quant.scale[0], tx->quant.zero_point[0], ty->quant.scale[0], ty->quant.zero_point[0],
                              ir_attr_float(n, "epsilon", 1e-5f), len, gamma, n_gamma, beta, n_beta, *g_b,
                              *g_b + len, l);
}

/* LayerNorm node i as a chain, or 0. */
static int match(const struct ir_graph *g, const enum part_target *targets, int i, struct compile_int8_chain *ch) {
  const struct ir_node *n = &g->nodes[i];
  if (n->dead || n->op != IR_OP_ONNX || strcmp(n->type, "LayerNormalization") || targets[i] == PART_ACCEL ||
      n->n_in < 2 || n->n_out < 1 || g->tensors[n->in[0]].dtype != IR_DT_F32)
    return 0;
  int rank = g->tensors[n->in[0]].rank;
  int64_t axis = ir_attr_int(n, "axis", -1);
  if (rank < 1 || (axis < 0 ? axis + rank : axis) != rank - 1) return 0;
  for (int k = 1; k < n->n_out; k++)
    if (!unread(g, n->out[k])) return 0;
  return compile_int8_chain(g, targets, i, 1, ch);
}

int compile_int8_layernorm(struct ir_graph *g, enum part_target *targets) {
  int done = 0;
  for (int i = 0; i < g->n_nodes; i++) {
    struct compile_int8_chain ch;
    struct loom_ilayernorm l;
    int32_t *g_b = NULL;
    if (!match(g, targets, i, &ch)) continue;
    int bad = params_of(g, &g->nodes[i], ch.x, ch.y, &l, &g_b);
    free(g_b);
    if (bad) continue;
    compile_int8_chain_take(g, targets, i, &ch);
    g->nodes[i].n_out = 1; /* Mean and InvStdDev, unread, are gone */
    targets[i] = PART_HOST;
    done++;
  }
  return done;
}

int cl_qlayernorm_step(struct lctx *c, int node) {
  const struct ir_node *n = &c->g->nodes[node];
  struct loom_ilayernorm l;
  int32_t *g_b = NULL;
  int x = cl_desc_of(c, n->in[0]), y = cl_desc_of(c, n->out[0]);
  if (x < 0 || y < 0) return -1;
  if (params_of(c->g, n, n->in[0], n->out[0], &l, &g_b)) {
    free(g_b);
    return ir_fail(c->err, c->g, node, "the int8 LayerNormalization's scales, gamma, beta or epsilon are out of range");
  }
  size_t size = 4 * (size_t)LOOM_QLAYERNORM_PARAM_COUNT(l.len);
  uint8_t *params = ir_xmalloc(size);
  loom_qlayernorm_params(&l, params);
  cl_host_step(c, LOOM_HOSTOP_QLAYERNORM, &x, 1, &y, 1, params, size);
  cl_host_row(c, node, LOOM_HOSTOP_QLAYERNORM);
  free(params);
  free(g_b);
  return 0;
}
