/*
 * pass_simplify.c - export habits rewritten into the forms the accelerator
 * runs, on the float graph before calibration.
 *
 * Exporters spell common layers in ways whose parts the fusion patterns do
 * not match one by one, though the whole is something the accelerator
 * runs.  Each rewrite here is exact (the float result is the same), keeps
 * the node order, and applies only when the intermediate tensor it removes
 * has no other reader and is no graph output:
 *
 *   - activation chains: Relu then Clip (PyTorch 1.13's F.relu6), Clip then
 *     Relu, Clip then Clip with constant bounds become one Clip, the clamp a
 *     fused convolution applies;
 *   - ReduceMean over the two spatial axes of an NCHW tensor (x.mean([2,3]))
 *     becomes GlobalAveragePool (and a Flatten when keepdims is 0);
 *   - a constant zero Pad of the spatial axes right before a Conv, or before
 *     an AveragePool that counts padding, moves into that op's pads;
 *   - Sub of a constant becomes Add of its negation (the accelerator adds);
 *   - a Transpose that only moves axes of size 1 becomes a Reshape (the
 *     elements stay in order; the partition makes it a view, no copy).
 *
 * Ops whose accelerator form changes rounding (Div by a constant as Mul by
 * its reciprocal, Mul and Add by per-channel constants as depthwise 1x1
 * convolutions) are compile.c's to choose, for the accelerator target only:
 * ir_pass_const_ops_to_conv below.
 */
#include "sw_compiler/compiler.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int is_const(const struct ir_graph *g, int t) { return t >= 0 && g->tensors[t].data != NULL; }

/* The only node reading t (t no graph output), or -1. */
static int sole_reader(const struct ir_graph *g, int t, int *uses) {
  if (uses[t] != 1) return -1;
  for (int i = 0; i < g->n_outputs; i++)
    if (g->outputs[i] == t) return -1;
  for (int i = 0; i < g->n_nodes; i++)
    for (int k = 0; !g->nodes[i].dead && k < g->nodes[i].n_in; k++)
      if (g->nodes[i].in[k] == t) return i;
  return -1;
}

static const char *type_of(const struct ir_node *n) { return n->op == IR_OP_ONNX ? n->type : ""; }

/* ---- activation chains ---- */

/* The clamp of a Relu or a float Clip with constant scalar bounds. */
static int act_bounds(const struct ir_graph *g, const struct ir_node *n, float *lo, float *hi) {
  if (n->op == IR_OP_RELU) return *lo = 0, *hi = INFINITY, g->tensors[n->in[0]].dtype == IR_DT_F32;
  if (n->op != IR_OP_CLIP || g->tensors[n->in[0]].dtype != IR_DT_F32) return 0;
  *lo = -INFINITY, *hi = INFINITY;
  for (int k = 1; k < 3 && k < n->n_in; k++) {
    int t = n->in[k];
    if (t < 0) continue;
    if (!is_const(g, t) || ir_tensor_numel(&g->tensors[t]) != 1 || g->tensors[t].dtype != IR_DT_F32) return 0;
    *(k == 1 ? lo : hi) = *(const float *)g->tensors[t].data;
  }
  return *lo <= *hi;
}

/* Node i (an activation) reading the result of another: one Clip. */
static int merge_act(struct ir_graph *g, int i, int *uses) {
  struct ir_node *n = &g->nodes[i];
  float lo2, hi2, lo1, hi1;
  if (!act_bounds(g, n, &lo2, &hi2)) return 0;
  int t = n->in[0], p = -1;
  for (int j = 0; j < i && p < 0; j++)
    if (!g->nodes[j].dead && g->nodes[j].n_out == 1 && g->nodes[j].out[0] == t) p = j;
  if (p < 0 || sole_reader(g, t, uses) != i || !act_bounds(g, &g->nodes[p], &lo1, &hi1)) return 0;
  float lo = lo1 > lo2 ? lo1 : lo2, hi = hi1 < hi2 ? hi1 : hi2;
  if (lo > hi) return 0; /* disjoint: a constant, rare enough to leave alone */
  int in[3] = {g->nodes[p].in[0], ir_const_add(g, NULL, IR_DT_F32, 0, NULL, &lo),
               ir_const_add(g, NULL, IR_DT_F32, 0, NULL, &hi)};
  n = &g->nodes[i];
  n->op = IR_OP_CLIP;
  n->in = ir_xrealloc(n->in, sizeof in);
  memcpy(n->in, in, sizeof in);
  n->n_in = 3;
  g->nodes[p].dead = 1;
  return 1;
}

/* ---- ReduceMean over H and W ---- */

static int spatial_mean(const struct ir_graph *g, const struct ir_node *n) {
  if (strcmp(type_of(n), "ReduceMean")) return 0;
  const struct ir_tensor *x = &g->tensors[n->in[0]];
  const int64_t *ax;
  int cnt = ir_attr_ints(n, "axes", &ax);
  if (x->rank != 4 || x->dtype != IR_DT_F32 || cnt != 2 || n->n_in != 1) return 0;
  unsigned mask = 0;
  for (int k = 0; k < 2; k++) mask |= 1u << (ax[k] < 0 ? ax[k] + 4 : ax[k]);
  return mask == 0xcu;
}

static int reduce_mean(struct ir_graph *g, int i) {
  if (!spatial_mean(g, &g->nodes[i])) return 0;
  int keep = ir_attr_int(&g->nodes[i], "keepdims", 1) != 0, x = g->nodes[i].in[0], y = g->nodes[i].out[0];
  if (keep) {
    struct ir_node *n = &g->nodes[i];
    n->op = IR_OP_GLOBALAVERAGEPOOL;
    free(n->type);
    n->type = NULL;
    while (n->n_attrs) ir_attr_remove(n, n->attrs[0].name);
    return 1;
  }
  const struct ir_tensor *xt = &g->tensors[x];
  int64_t d[4] = {xt->dims[0], xt->dims[1], 1, 1};
  int m = ir_tensor_add(g, NULL, IR_DT_F32, 4, d);
  ir_node_insert(g, i, IR_OP_GLOBALAVERAGEPOOL, g->nodes[i].name, 1, &x, 1, &m);
  struct ir_node *n = &g->nodes[i + 1];
  n->op = IR_OP_FLATTEN;
  free(n->type);
  n->type = NULL;
  n->in[0] = m;
  while (n->n_attrs) ir_attr_remove(n, n->attrs[0].name);
  ir_attr_set_int(g, i + 1, "axis", 1);
  (void)y;
  return 2;
}

/* ---- Pad into the next window op ---- */

/* The spatial pads (t, l, b, r) of a constant zero Pad of an NCHW tensor. */
static int zero_pad(const struct ir_graph *g, const struct ir_node *n, int64_t p[4]) {
  if (strcmp(type_of(n), "Pad") || n->opset < 11) return 0;
  if (strcmp(ir_attr_string(n, "mode", "constant"), "constant")) return 0;
  const struct ir_tensor *x = &g->tensors[n->in[0]];
  if (x->rank != 4 || x->dtype != IR_DT_F32 || n->n_in < 2 || !is_const(g, n->in[1])) return 0;
  if (n->n_in > 3 && n->in[3] >= 0) return 0; /* axes */
  if (n->n_in > 2 && n->in[2] >= 0) {
    const struct ir_tensor *v = &g->tensors[n->in[2]];
    if (!is_const(g, n->in[2]) || ir_tensor_numel(v) != 1 || ir_load_f64(v->dtype, v->data, 0) != 0) return 0;
  }
  const struct ir_tensor *pt = &g->tensors[n->in[1]];
  if (ir_tensor_numel(pt) != 8) return 0;
  int64_t v[8];
  for (int k = 0; k < 8; k++) v[k] = ir_load_i64(pt->dtype, pt->data, k);
  if (v[0] || v[1] || v[4] || v[5]) return 0;
  p[0] = v[2], p[1] = v[3], p[2] = v[6], p[3] = v[7];
  return p[0] >= 0 && p[1] >= 0 && p[2] >= 0 && p[3] >= 0;
}

static int pad_into(struct ir_graph *g, int i, int *uses) {
  int64_t p[4];
  if (!zero_pad(g, &g->nodes[i], p)) return 0;
  int u = sole_reader(g, g->nodes[i].out[0], uses);
  if (u < 0 || g->nodes[u].in[0] != g->nodes[i].out[0] || ir_attr_find(&g->nodes[u], "auto_pad")) return 0;
  struct ir_node *c = &g->nodes[u];
  if (c->op != IR_OP_CONV && !(c->op == IR_OP_AVERAGEPOOL && !ir_attr_int(c, "ceil_mode", 0))) return 0;
  const int64_t *old;
  int n = ir_attr_ints(c, "pads", &old);
  int64_t pads[4] = {0, 0, 0, 0};
  if (n == 4) memcpy(pads, old, sizeof pads);
  else if (n >= 0) return 0;
  int had = pads[0] || pads[1] || pads[2] || pads[3];
  if (c->op == IR_OP_AVERAGEPOOL && had && !ir_attr_int(c, "count_include_pad", 0)) return 0;
  for (int k = 0; k < 4; k++) pads[k] += p[k];
  ir_attr_set_ints(g, u, "pads", 4, pads);
  if (c->op == IR_OP_AVERAGEPOOL) ir_attr_set_int(g, u, "count_include_pad", 1); /* the Pad's zeros were counted */
  g->nodes[u].in[0] = g->nodes[i].in[0];
  g->nodes[i].dead = 1;
  return 1;
}

/* ---- Sub of a constant ---- */

static int sub_const(struct ir_graph *g, int i) {
  struct ir_node *n = &g->nodes[i];
  if (strcmp(type_of(n), "Sub") || n->n_in != 2 || !is_const(g, n->in[1])) return 0;
  const struct ir_tensor *c = &g->tensors[n->in[1]];
  if (c->dtype != IR_DT_F32 || g->tensors[n->in[0]].dtype != IR_DT_F32) return 0;
  int64_t cnt = ir_tensor_numel(c);
  float *neg = ir_xmalloc((size_t)cnt * sizeof *neg + 1);
  for (int64_t k = 0; k < cnt; k++) neg[k] = -((const float *)c->data)[k];
  int t = ir_const_add(g, NULL, IR_DT_F32, c->rank, c->dims, neg);
  free(neg);
  n = &g->nodes[i];
  n->in[1] = t;
  n->op = IR_OP_ADD;
  free(n->type);
  n->type = NULL;
  return 1;
}

/* ---- Transpose of size-1 axes ---- */

/* A Transpose that keeps the axes of size > 1 in their order (it only
 * moves axes of size 1: torch's [S, 1, D] <-> [1, S, D] around
 * nn.MultiheadAttention at batch 1) leaves the elements in the same order:
 * a Reshape to its result's dims, which the partition makes a view. */
static int unit_transpose(struct ir_graph *g, int i) {
  struct ir_node *n = &g->nodes[i];
  if (n->op != IR_OP_TRANSPOSE || n->n_in != 1) return 0;
  const struct ir_tensor *x = &g->tensors[n->in[0]], *y = &g->tensors[n->out[0]];
  if (!ir_shape_known(x) || !ir_shape_known(y) || x->rank != y->rank || x->rank < 1) return 0;
  const int64_t *perm;
  int np = ir_attr_ints(n, "perm", &perm), prev = -1;
  if (np >= 0 && np != x->rank) return 0;
  for (int k = 0; k < x->rank; k++) {
    int a = np >= 0 ? (int)perm[k] : x->rank - 1 - k;
    if (a < 0 || a >= x->rank || y->dims[k] != x->dims[a] || x->dims[a] == 0) return 0;
    if (x->dims[a] == 1) continue;
    if (a < prev) return 0;
    prev = a;
  }
  int64_t rank = y->rank;
  int t = ir_const_add(g, NULL, IR_DT_I64, 1, &rank, y->dims);
  n = &g->nodes[i];
  n->op = IR_OP_RESHAPE;
  n->in = ir_xrealloc(n->in, 2 * sizeof *n->in);
  n->in[1] = t;
  n->n_in = 2;
  while (n->n_attrs) ir_attr_remove(n, n->attrs[0].name);
  return 1;
}

int ir_pass_simplify(struct ir_graph *g, struct ir_error *err) {
  int changed = 0;
  (void)err;
  for (int i = 0; i < g->n_nodes; i++) {
    int *uses = ir_xmalloc(((size_t)g->n_tensors + 1) * sizeof *uses);
    ir_use_counts(g, uses);
    if (g->nodes[i].dead) {
      free(uses);
      continue;
    }
    int r = merge_act(g, i, uses) || pad_into(g, i, uses) || sub_const(g, i) || unit_transpose(g, i);
    if (!r) r = reduce_mean(g, i), i += r == 2;
    changed |= r != 0;
    free(uses);
  }
  if (changed) ir_graph_compact(g);
  return 0;
}
