/*
 * act_table.c - element-wise regions of one tensor and their int8 tables
 * (act_table.h says what a region is and who uses it).
 *
 * Finding a region walks back from its result: a region op's operands are
 * scalar constants, other region ops' results, or the leaf.  A ReLU or Clip
 * joins only above a seed (Clip(Sigmoid(x))): below one, the clamp belongs
 * to the convolution before it (its requantization clamp), and its result
 * is the leaf.  The affine steps by a scalar (Div, Mul, Add, Sub, Neg) join
 * anywhere, so GELU's Div(x, sqrt 2) before the Erf is part of the region.
 *
 * The table is computed in double from the ONNX definitions of the ops
 * (attributes with ONNX's defaults).  Its exactness does not depend on
 * that: the table *is* the int8 semantics (the reference interpreter and
 * the accelerator both index it), and the float function only chooses the
 * entries, each the nearest int8 code of the output scale to the exact
 * value, so the table error is at most half an output step per entry.
 */
#include "sw_compiler/act_table.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum act_fn {
  ACT_NONE = 0,
  ACT_SIGMOID, ACT_TANH, ACT_HARDSIGMOID, ACT_HARDSWISH, ACT_EXP, ACT_ELU, ACT_LEAKYRELU, ACT_SOFTPLUS,
  ACT_SOFTSIGN, ACT_ERF, ACT_SELU, ACT_CELU, ACT_THRESHOLDEDRELU, ACT_GELU, ACT_MISH,
  ACT_SEEDS,                                  /* the ones above are seeds */
  ACT_RELU, ACT_CLIP, ACT_ADD, ACT_MUL, ACT_SUB, ACT_DIV, ACT_NEG, ACT_ABS,
  ACT_COUNT
};
static const char *const act_names[ACT_COUNT] = {
    [ACT_SIGMOID] = "Sigmoid", [ACT_TANH] = "Tanh", [ACT_HARDSIGMOID] = "HardSigmoid",
    [ACT_HARDSWISH] = "HardSwish", [ACT_EXP] = "Exp", [ACT_ELU] = "Elu", [ACT_LEAKYRELU] = "LeakyRelu",
    [ACT_SOFTPLUS] = "Softplus", [ACT_SOFTSIGN] = "Softsign", [ACT_ERF] = "Erf", [ACT_SELU] = "Selu",
    [ACT_CELU] = "Celu", [ACT_THRESHOLDEDRELU] = "ThresholdedRelu", [ACT_GELU] = "Gelu", [ACT_MISH] = "Mish",
    [ACT_RELU] = "Relu", [ACT_CLIP] = "Clip", [ACT_ADD] = "Add", [ACT_MUL] = "Mul", [ACT_SUB] = "Sub",
    [ACT_DIV] = "Div", [ACT_NEG] = "Neg", [ACT_ABS] = "Abs",
};
_Static_assert(sizeof act_names / sizeof act_names[0] == ACT_COUNT, "act_names");

static enum act_fn fn_of(const struct ir_node *n) {
  if (n->dead) return ACT_NONE;
  switch (n->op) {
  case IR_OP_RELU: return ACT_RELU;
  case IR_OP_CLIP: return ACT_CLIP;
  case IR_OP_ADD: return ACT_ADD;
  case IR_OP_MUL: return ACT_MUL;
  case IR_OP_ONNX: break;
  default: return ACT_NONE;
  }
  for (int k = 1; k < ACT_COUNT; k++)
    if (act_names[k] && n->type && !strcmp(n->type, act_names[k])) return (enum act_fn)k;
  return ACT_NONE;
}

static int scalar_const(const struct ir_graph *g, int t) {
  const struct ir_tensor *x = &g->tensors[t];
  return x->data && ir_tensor_numel(x) == 1 && ir_dtype_is_float(x->dtype);
}

/* Operands of n that carry data (Clip's bounds are attributes in effect). */
static int data_operands(const struct ir_node *n, enum act_fn f) {
  return f == ACT_CLIP ? 1 : n->n_in;
}

int act_op_ok(const struct ir_graph *g, const struct ir_node *n) {
  enum act_fn f = fn_of(n);
  if (f == ACT_NONE || n->n_out != 1) return 0;
  int arity = f == ACT_ADD || f == ACT_MUL || f == ACT_SUB || f == ACT_DIV ? 2 : 1;
  if (f == ACT_CLIP) {
    for (int k = 1; k < n->n_in; k++)
      if (n->in[k] >= 0 && !scalar_const(g, n->in[k])) return 0;
  } else if (n->n_in != arity) {
    return 0;
  }
  if (f == ACT_GELU && ir_attr_find(n, "approximate")) return 0; /* tanh form: not ONNX 1.12's */
  for (int k = 0; k < data_operands(n, f); k++)
    if (n->in[k] < 0 || !ir_dtype_is_float(g->tensors[n->in[k]].dtype)) return 0;
  return ir_dtype_is_float(g->tensors[n->out[0]].dtype);
}

int act_op_seed(const struct ir_node *n) { return fn_of(n) != ACT_NONE && fn_of(n) < ACT_SEEDS; }

static int producer(const struct ir_graph *g, int t) {
  for (int i = 0; i < g->n_nodes; i++)
    if (!g->nodes[i].dead)
      for (int k = 0; k < g->nodes[i].n_out; k++)
        if (g->nodes[i].out[k] == t) return i;
  return -1;
}

struct walk {
  const struct ir_graph *g;
  int (*leaf)(const struct ir_graph *, int);
  struct act_region *r;
};

static int add_leaf(struct walk *w, int t) {
  int m = w->leaf ? w->leaf(w->g, t) : t;
  if (m < 0 || (w->r->x >= 0 && w->r->x != m)) return -1;
  w->r->x = m;
  return 0;
}

/* -1 refused, 0 no seed at or below t, 1 a seed below. */
static int visit(struct walk *w, int t, int depth) {
  const struct ir_graph *g = w->g;
  if (scalar_const(g, t)) return 0;
  int p = producer(g, t);
  if (p < 0 || !act_op_ok(g, &g->nodes[p]) || depth > ACT_REGION_MAX) return add_leaf(w, t);
  for (int i = 0; i < w->r->n; i++)
    if (w->r->nodes[i] == p) return act_op_seed(&g->nodes[p]) ? 1 : 0; /* reached before (x * f(x)) */
  struct act_region saved = *w->r;
  if (w->r->n == ACT_REGION_MAX) return -1;
  w->r->nodes[w->r->n++] = p;
  const struct ir_node *n = &g->nodes[p];
  enum act_fn f = fn_of(n);
  int seed = act_op_seed(n), leafs = 0;
  for (int k = 0; k < data_operands(n, f); k++) {
    if (!scalar_const(g, n->in[k])) leafs++;
    int s = visit(w, n->in[k], depth + 1);
    if (s < 0) return -1;
    seed |= s;
  }
  if (leafs == 0) return -1; /* constant arithmetic: folding's, not ours */
  if (!seed && (f == ACT_RELU || f == ACT_CLIP || leafs > 1)) { /* a clamp or sum below any seed: a leaf */
    *w->r = saved;
    return add_leaf(w, t);
  }
  return seed;
}

static int cmp_int(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }

int act_region_of(const struct ir_graph *g, int y, int (*leaf)(const struct ir_graph *, int), struct act_region *r) {
  memset(r, 0, sizeof *r);
  r->x = -1, r->y = y;
  struct walk w = {g, leaf, r};
  int s = visit(&w, y, 0);
  if (s < 0 || r->n == 0 || r->x < 0) return -1;
  r->seed = s;
  qsort(r->nodes, (size_t)r->n, sizeof r->nodes[0], cmp_int);
  return 0;
}

int act_region_grow(const struct ir_graph *g, int seed, struct act_region *r) {
  const struct ir_node *s = &g->nodes[seed];
  if (!act_op_seed(s) || !act_op_ok(g, s) || act_region_of(g, s->out[0], NULL, r) || !r->seed) return -1;
  for (;;) {
    int u = ir_sole_reader(g, r->y);
    struct act_region r2;
    if (u < 0 || !act_op_ok(g, &g->nodes[u]) || act_region_of(g, g->nodes[u].out[0], NULL, &r2) || r2.x != r->x)
      return 0;
    *r = r2;
  }
}

int act_shape_fits(const struct ir_tensor *t) {
  if (t->rank < 1 || t->rank > 4) return 0;
  int64_t n = ir_tensor_numel(t);
  return n >= 1 && (t->rank == 4 || n <= ACT_FLAT_MAX);
}

/* ---- evaluation ---- */

static double attr_f(const struct ir_node *n, const char *name, double dflt) {
  return ir_attr_find(n, name) ? (double)ir_attr_float(n, name, (float)dflt) : dflt;
}

static double apply1(const struct ir_node *n, enum act_fn f, double v, double lo, double hi) {
  switch (f) {
  case ACT_SIGMOID: return 1.0 / (1.0 + exp(-v));
  case ACT_TANH: return tanh(v);
  case ACT_HARDSIGMOID: return fmax(0.0, fmin(1.0, attr_f(n, "alpha", 0.2) * v + attr_f(n, "beta", 0.5)));
  case ACT_HARDSWISH: return v * fmax(0.0, fmin(1.0, v / 6.0 + 0.5));
  case ACT_EXP: return exp(v);
  case ACT_ELU: return v < 0 ? attr_f(n, "alpha", 1.0) * (exp(v) - 1.0) : v;
  case ACT_LEAKYRELU: return v < 0 ? attr_f(n, "alpha", 0.01) * v : v;
  case ACT_SOFTPLUS: return v > 30 ? v : log1p(exp(v));
  case ACT_SOFTSIGN: return v / (1.0 + fabs(v));
  case ACT_ERF: return erf(v);
  case ACT_SELU:
    return attr_f(n, "gamma", 1.05070102214813232421875) *
           (v > 0 ? v : attr_f(n, "alpha", 1.67326319217681884765625) * (exp(v) - 1.0));
  case ACT_CELU: { double a = attr_f(n, "alpha", 1.0); return fmax(0.0, v) + fmin(0.0, a * (exp(v / a) - 1.0)); }
  case ACT_THRESHOLDEDRELU: return v > attr_f(n, "alpha", 1.0) ? v : 0.0;
  case ACT_GELU: return 0.5 * v * (1.0 + erf(v / sqrt(2.0)));
  case ACT_MISH: return v * tanh(v > 30 ? v : log1p(exp(v)));
  case ACT_RELU: return v > 0 ? v : 0.0;
  case ACT_CLIP: return fmin(fmax(v, lo), hi);
  case ACT_NEG: return -v;
  case ACT_ABS: return fabs(v);
  default: LOOM_ASSERT(0); return 0;
  }
}

static double apply2(enum act_fn f, double a, double b) {
  switch (f) {
  case ACT_ADD: return a + b;
  case ACT_MUL: return a * b;
  case ACT_SUB: return a - b;
  case ACT_DIV: return a / b;
  default: LOOM_ASSERT(0); return 0;
  }
}

/* The 256 values of tensor t: the leaf's, a region node's, or a scalar. */
static const double *values(const struct ir_graph *g, const struct act_region *r, double (*v)[256], int t,
                            const double *xs, double *scalar) {
  for (int i = 0; i < r->n; i++)
    if (g->nodes[r->nodes[i]].out[0] == t) return v[i];
  if (scalar_const(g, t)) {
    double s = ir_load_f64(g->tensors[t].dtype, g->tensors[t].data, 0);
    for (int c = 0; c < 256; c++) scalar[c] = s;
    return scalar;
  }
  return xs; /* the leaf (or its DQ, the same reals) */
}

void act_table_build(const struct ir_graph *g, const struct act_region *r, float in_scale, int32_t in_zp,
                     float out_scale, int32_t out_zp, int8_t lut[256]) {
  double xs[256], (*v)[256] = calloc((size_t)r->n, sizeof *v), sa[256], sb[256];
  LOOM_ASSERT(v != NULL);
  for (int c = 0; c < 256; c++) xs[c] = ((int8_t)(uint8_t)c - (double)in_zp) * in_scale; /* c: the bit pattern */
  const double *res = xs;
  for (int i = 0; i < r->n; i++) {
    const struct ir_node *n = &g->nodes[r->nodes[i]];
    enum act_fn f = fn_of(n);
    const double *a = values(g, r, v, n->in[0], xs, sa);
    if (f == ACT_ADD || f == ACT_MUL || f == ACT_SUB || f == ACT_DIV) {
      const double *b = values(g, r, v, n->in[1], xs, sb);
      for (int c = 0; c < 256; c++) v[i][c] = apply2(f, a[c], b[c]);
    } else {
      double lo = -INFINITY, hi = INFINITY;
      if (f == ACT_CLIP && n->n_in > 1 && n->in[1] >= 0) lo = ir_load_f64(g->tensors[n->in[1]].dtype, g->tensors[n->in[1]].data, 0);
      if (f == ACT_CLIP && n->n_in > 2 && n->in[2] >= 0) hi = ir_load_f64(g->tensors[n->in[2]].dtype, g->tensors[n->in[2]].data, 0);
      for (int c = 0; c < 256; c++) v[i][c] = apply1(n, f, a[c], lo, hi);
    }
    if (n->out[0] == r->y) res = v[i];
  }
  for (int c = 0; c < 256; c++) {
    double q = isnan(res[c]) ? (double)out_zp : nearbyint(res[c] / out_scale) + out_zp;
    lut[c] = (int8_t)(q < -128 ? -128 : q > 127 ? 127 : q);
  }
  free(v);
}

void act_region_text(const struct ir_graph *g, const struct act_region *r, char *buf, size_t len) {
  size_t at = 0;
  buf[0] = 0;
  for (int i = 0; i < r->n && at + 1 < len; i++) {
    int w = snprintf(buf + at, len - at, "%s%s", i ? "*" : "", ir_node_op(&g->nodes[r->nodes[i]]));
    if (w < 0) break;
    at += (size_t)w;
  }
}
