/*
 * pass_const_ops.c - float Mul, Div and Add by constants in the forms the
 * accelerator runs, for the accelerator target (compile.c runs it on the
 * float graph before calibration).
 *
 *   - a Mul or Add by a per-channel (or scalar) constant right after a Conv
 *     whose result nothing else reads folds into the Conv's weights and bias
 *     (Conv then a stray scale or shift, as BN-like layers export);
 *   - any other Mul, Div or Add of an NCHW activation by a per-channel or
 *     scalar constant becomes a depthwise 1x1 convolution (weight = the
 *     factor, or its reciprocal for Div; bias = the addend), which the
 *     quantizer and the lowering treat like any convolution; but not a
 *     step of an activation region (GELU's Div by sqrt 2, Add 1, Mul 0.5),
 *     which becomes part of the region's table (act_table.h), nor the
 *     scale of attention's scores (a scalar Div or Mul of a product of two
 *     activations), which pass_attention.c folds into their
 *     requantization.
 *
 *   - a GlobalAveragePool over more than 8x8 pixels becomes an AveragePool
 *     of equal windows down to 8x8 or less, then the global pool: windows
 *     that fit the accelerator's SRAM (an exact rewrite in float).
 *
 *   - a ConvTranspose whose kernel equals its stride (k x k, stride k, no
 *     padding, dilation or groups: U-Net's upsampling) with constant
 *     weights becomes a 1x1 Conv to O*k*k channels, then DepthToSpace (CRD
 *     order): y[n, o, h*k+i, w*k+j] = sum_c x[n,c,h,w] W[c,o,i,j] is that
 *     conv's channel o*k*k + i*k + j moved into place, exactly.  The MACs
 *     run on the accelerator; the rearrangement is host data movement.
 *     Other ConvTransposes (overlapping windows) stay on the host.
 *
 * The first two change float rounding slightly (a Div becomes a multiply by the
 * rounded reciprocal, folded weights round once more), which int8 then
 * dominates by far; that is why the CPU target keeps the ops as they are.
 * Constants of other shapes (a [1,S,D] tensor scaled along D, say) stay
 * host nodes.
 */
#include "sw_compiler/compiler.h"

#include "sw_compiler/act_table.h"

#include <stdlib.h>
#include <string.h>

#define GAP_SIDE 8 /* global pools wider than this are split */

static int is_const(const struct ir_graph *g, int t) { return t >= 0 && g->tensors[t].data != NULL; }

/* The constant's value for channel c when it broadcasts per channel (or is
 * a scalar) against an NCHW tensor of C channels; *ok 0 otherwise. */
static int per_channel(const struct ir_tensor *k, int64_t C) {
  if (k->dtype != IR_DT_F32) return 0;
  int64_t n = ir_tensor_numel(k);
  if (n == 1) return 1;
  if (n != C || k->rank < 1 || k->rank > 4) return 0;
  int at = 4 - k->rank; /* k's axis i is the result's axis at + i */
  for (int i = 0; i < k->rank; i++)
    if (at + i != 1 && k->dims[i] != 1) return 0;
  return at <= 1;
}

static float value_at(const struct ir_tensor *k, int64_t c) {
  const float *v = k->data;
  return ir_tensor_numel(k) == 1 ? v[0] : v[c];
}

/* Which arithmetic node i is: 'm' Mul, 'd' Div, 'a' Add; *x the activation,
 * *k the constant; 0 when it is none of these forms. */
static int form(const struct ir_graph *g, const struct ir_node *n, int *x, int *k) {
  int op = n->op == IR_OP_MUL ? 'm' : n->op == IR_OP_ADD ? 'a' : n->op == IR_OP_ONNX && !strcmp(n->type, "Div") ? 'd' : 0;
  if (!op || n->n_in != 2) return 0;
  int a = n->in[0], b = n->in[1];
  if (op != 'd' && is_const(g, a) && !is_const(g, b)) *x = b, *k = a;
  else *x = a, *k = b;
  const struct ir_tensor *xt = &g->tensors[*x], *y = &g->tensors[n->out[0]];
  if (is_const(g, *x) || !is_const(g, *k) || xt->rank != 4 || xt->dtype != IR_DT_F32 || y->rank != 4 ||
      memcmp(xt->dims, y->dims, 4 * sizeof *xt->dims) || !per_channel(&g->tensors[*k], xt->dims[1]))
    return 0;
  return op;
}

static int producer(const struct ir_graph *g, int t, int before) {
  for (int j = 0; j < before; j++)
    if (!g->nodes[j].dead && g->nodes[j].n_out == 1 && g->nodes[j].out[0] == t) return j;
  return -1;
}

static int single_use(const struct ir_graph *g, int t) {
  int uses = 0;
  for (int i = 0; i < g->n_outputs; i++) uses += g->outputs[i] == t;
  for (int i = 0; i < g->n_nodes; i++)
    for (int k = 0; !g->nodes[i].dead && k < g->nodes[i].n_in; k++) uses += g->nodes[i].in[k] == t;
  return uses == 1;
}

/* Conv node p's weights and bias as private float copies (bias created). */
static void private_conv_params(struct ir_graph *g, int p, int64_t co) {
  struct ir_node *c = &g->nodes[p];
  const struct ir_tensor *w = &g->tensors[c->in[1]];
  int nw = ir_const_add(g, NULL, IR_DT_F32, w->rank, w->dims, w->data);
  float *b = ir_xcalloc((size_t)co + 1, sizeof *b);
  c = &g->nodes[p];
  if (c->n_in > 2 && c->in[2] >= 0) memcpy(b, g->tensors[c->in[2]].data, (size_t)co * sizeof *b);
  int nb = ir_const_add(g, NULL, IR_DT_F32, 1, &co, b);
  free(b);
  c = &g->nodes[p];
  if (c->n_in < 3) c->in = ir_xrealloc(c->in, 3 * sizeof *c->in), c->n_in = 3;
  c->in[1] = nw, c->in[2] = nb;
}

/* y = Conv(...) * k or + k (Div as * 1/k): folded into the Conv. */
static int fold_into_conv(struct ir_graph *g, int i, int op, int x, int k) {
  int p = producer(g, x, i);
  if (p < 0 || g->nodes[p].op != IR_OP_CONV || !single_use(g, x) || !is_const(g, g->nodes[p].in[1])) return 0;
  if (g->nodes[p].n_in > 2 && g->nodes[p].in[2] >= 0 && !is_const(g, g->nodes[p].in[2])) return 0;
  int64_t co = g->tensors[x].dims[1];
  private_conv_params(g, p, co);
  const struct ir_tensor *kt = &g->tensors[k];
  float *w = g->tensors[g->nodes[p].in[1]].data, *b = g->tensors[g->nodes[p].in[2]].data;
  int64_t per = ir_tensor_numel(&g->tensors[g->nodes[p].in[1]]) / co;
  for (int64_t c = 0; c < co; c++) {
    float v = value_at(kt, c);
    if (op == 'a') {
      b[c] += v;
      continue;
    }
    float s = op == 'd' ? 1.0f / v : v;
    for (int64_t j = 0; j < per; j++) w[c * per + j] *= s;
    b[c] *= s;
  }
  g->nodes[p].out[0] = g->nodes[i].out[0]; /* the Conv now writes the result */
  g->nodes[i].dead = 1;
  return 1;
}

/* Node i as a depthwise 1x1 Conv. */
static int as_dwconv(struct ir_graph *g, int i, int op, int x, int k) {
  int64_t C = g->tensors[x].dims[1], wd[4] = {C, 1, 1, 1};
  float *w = ir_xmalloc((size_t)C * sizeof *w + 1), *b = ir_xcalloc((size_t)C + 1, sizeof *b);
  for (int64_t c = 0; c < C; c++) {
    float v = value_at(&g->tensors[k], c);
    w[c] = op == 'a' ? 1.0f : op == 'd' ? 1.0f / v : v;
    b[c] = op == 'a' ? v : 0.0f;
  }
  int in[3] = {x, ir_const_add(g, NULL, IR_DT_F32, 4, wd, w), ir_const_add(g, NULL, IR_DT_F32, 1, &C, b)};
  free(w), free(b);
  struct ir_node *n = &g->nodes[i];
  n->op = IR_OP_CONV;
  free(n->type);
  n->type = NULL;
  n->in = ir_xrealloc(n->in, sizeof in);
  memcpy(n->in, in, sizeof in);
  n->n_in = 3;
  while (n->n_attrs) ir_attr_remove(n, n->attrs[0].name);
  ir_attr_set_int(g, i, "group", C);
  ir_attr_set_ints(g, i, "kernel_shape", 2, (int64_t[]){1, 1});
  return 1;
}

/* ---- ConvTranspose with kernel = stride ---- */

static int ints_all(const struct ir_node *n, const char *name, int64_t want, int count) {
  const int64_t *v;
  int k = ir_attr_ints(n, name, &v);
  if (k < 0) return 1;
  if (k != count) return 0;
  for (int i = 0; i < k; i++)
    if (v[i] != want) return 0;
  return 1;
}

/* The k of a ConvTranspose of the form above, else 0. */
static int64_t upsampling_k(const struct ir_graph *g, const struct ir_node *n) {
  if (n->op != IR_OP_ONNX || strcmp(n->type, "ConvTranspose") || n->n_in < 2 || n->n_out != 1) return 0;
  const struct ir_tensor *x = &g->tensors[n->in[0]], *w = &g->tensors[n->in[1]], *y = &g->tensors[n->out[0]];
  if (x->rank != 4 || x->dtype != IR_DT_F32 || !is_const(g, n->in[1]) || w->dtype != IR_DT_F32 || w->rank != 4 ||
      w->dims[0] != x->dims[1] || w->dims[2] != w->dims[3] || w->dims[2] < 2)
    return 0;
  int64_t k = w->dims[2];
  const char *pad = ir_attr_string(n, "auto_pad", "NOTSET");
  if (n->n_in > 2 && n->in[2] >= 0 && !is_const(g, n->in[2])) return 0;
  if (ir_attr_int(n, "group", 1) != 1 || !ints_all(n, "strides", k, 2) || !ir_attr_find(n, "strides") ||
      !ints_all(n, "pads", 0, 4) || !ints_all(n, "dilations", 1, 2) || !ints_all(n, "output_padding", 0, 2) ||
      (strcmp(pad, "NOTSET") && strcmp(pad, "VALID")))
    return 0;
  int64_t want[4] = {x->dims[0], w->dims[1], x->dims[2] * k, x->dims[3] * k};
  return y->rank == 4 && !memcmp(y->dims, want, sizeof want) ? k : 0;
}

static int convtranspose_as_conv(struct ir_graph *g, int i) {
  int64_t k = upsampling_k(g, &g->nodes[i]);
  if (!k) return 0;
  const struct ir_node *n = &g->nodes[i];
  const struct ir_tensor *x = &g->tensors[n->in[0]], *wt = &g->tensors[n->in[1]];
  int64_t C = wt->dims[0], O = wt->dims[1], kk = k * k, OK = O * kk;
  const float *w = wt->data, *b = n->n_in > 2 && n->in[2] >= 0 ? g->tensors[n->in[2]].data : NULL;
  float *w2 = ir_xmalloc((size_t)(OK * C) * sizeof *w2 + 1), *b2 = ir_xcalloc((size_t)OK + 1, sizeof *b2);
  for (int64_t o = 0; o < O; o++)
    for (int64_t ij = 0; ij < kk; ij++) {
      for (int64_t c = 0; c < C; c++) w2[(o * kk + ij) * C + c] = w[(c * O + o) * kk + ij];
      b2[o * kk + ij] = b ? b[o] : 0.0f;
    }
  int64_t wd[4] = {OK, C, 1, 1}, md[4] = {x->dims[0], OK, x->dims[2], x->dims[3]};
  int in[3] = {n->in[0], ir_const_add(g, NULL, IR_DT_F32, 4, wd, w2), ir_const_add(g, NULL, IR_DT_F32, 1, &OK, b2)};
  free(w2), free(b2);
  int mid = ir_tensor_add(g, NULL, IR_DT_F32, 4, md), y = g->nodes[i].out[0];
  int d2s = ir_node_insert(g, i + 1, IR_OP_ONNX, g->nodes[i].name, 1, &mid, 1, &y);
  g->nodes[d2s].type = ir_xstrdup("DepthToSpace");
  g->nodes[d2s].opset = 13;
  ir_attr_set_int(g, d2s, "blocksize", k);
  ir_attr_set_string(g, d2s, "mode", "CRD");
  struct ir_node *c = &g->nodes[i];
  c->op = IR_OP_CONV;
  free(c->type);
  c->type = NULL;
  c->in = ir_xrealloc(c->in, sizeof in);
  memcpy(c->in, in, sizeof in);
  c->n_in = 3;
  c->out[0] = mid;
  while (c->n_attrs) ir_attr_remove(c, c->attrs[0].name);
  ir_attr_set_ints(g, i, "kernel_shape", 2, (int64_t[]){1, 1});
  return 1;
}

/* ---- large global average pools ---- */

/* The largest divisor of d that is at most GAP_SIDE. */
static int64_t side_of(int64_t d) {
  for (int64_t s = GAP_SIDE; s > 1; s--)
    if (d % s == 0) return s;
  return 1;
}

/* GlobalAveragePool over more than GAP_SIDE^2 pixels (an SE block early in a
 * MobileNetV3 averages 64x64) as an AveragePool of equal non-overlapping
 * windows down to at most GAP_SIDE x GAP_SIDE, then the global pool: the
 * same mean (of equal-sized parts), in windows the accelerator's SRAM
 * holds. */
static int split_gap(struct ir_graph *g, int i) {
  const struct ir_node *n = &g->nodes[i];
  if (n->op != IR_OP_GLOBALAVERAGEPOOL) return 0;
  const struct ir_tensor *x = &g->tensors[n->in[0]];
  if (x->rank != 4 || x->dtype != IR_DT_F32 || x->dims[2] * x->dims[3] <= GAP_SIDE * GAP_SIDE) return 0;
  int64_t oh = side_of(x->dims[2]), ow = side_of(x->dims[3]);
  int64_t k[2] = {x->dims[2] / oh, x->dims[3] / ow}, d[4] = {x->dims[0], x->dims[1], oh, ow};
  if (k[0] == 1 && k[1] == 1) return 0;
  int in = n->in[0], mid = ir_tensor_add(g, NULL, IR_DT_F32, 4, d);
  int node = ir_node_insert(g, i, IR_OP_AVERAGEPOOL, NULL, 1, &in, 1, &mid);
  ir_attr_set_ints(g, node, "kernel_shape", 2, k);
  ir_attr_set_ints(g, node, "strides", 2, k);
  g->nodes[i + 1].in[0] = mid;
  return 1;
}

/* in_act[i]: node i is a step of an activation region (act_table.h), which
 * pass_quantize.c and pass_fuse_act.c make one table: GELU's Div, Add and
 * Mul by scalars stay float until then. */
static char *act_steps(const struct ir_graph *g, unsigned flags) {
  char *in_act = ir_xcalloc((size_t)g->n_nodes + 1, 1);
  struct act_region r;
  for (int i = 0; i < g->n_nodes && !(flags & CONST_OPS_NO_ACT); i++)
    if (act_op_seed(&g->nodes[i]) && !act_region_grow(g, i, &r))
      for (int j = 0; j < r.n; j++) in_act[r.nodes[j]] = 1;
  return in_act;
}

int ir_pass_const_ops_to_conv(struct ir_graph *g, unsigned flags, struct ir_error *err) {
  int changed = 0;
  (void)err;
  char *in_act = act_steps(g, flags);
  for (int i = 0; i < g->n_nodes; i++) {
    int x, k, op = g->nodes[i].dead || in_act[i] || ir_is_scores_scale(g, i) ? 0 : form(g, &g->nodes[i], &x, &k);
    if (op) changed |= fold_into_conv(g, i, op, x, k) || as_dwconv(g, i, op, x, k);
    else if (!g->nodes[i].dead && (split_gap(g, i) || convtranspose_as_conv(g, i))) changed = 1, i++;
  }
  free(in_act);
  if (changed) ir_graph_compact(g);
  return 0;
}
