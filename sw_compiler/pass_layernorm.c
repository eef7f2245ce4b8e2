/*
 * pass_layernorm.c - a LayerNorm that arrives decomposed becomes one
 * LayerNormalization node, on the float graph before calibration.
 *
 * PyTorch exports nn.LayerNorm at opsets below 17 (BERT-style encoders,
 * nn.TransformerEncoder) as nine elementwise and reduction ops:
 *
 *     m = ReduceMean(x, axes=[-1])           keepdims 1
 *     d = Sub(x, m)
 *     v = ReduceMean(Pow(d, 2), axes=[-1])   keepdims 1
 *     y = Div(d, Sqrt(Add(v, eps)))          eps a constant scalar
 *     y = Add(Mul(y, gamma), beta)           both optional
 *
 * which is, to float rounding, ONNX's LayerNormalization (opset 17) with
 * axis -1, epsilon eps, scale gamma (ones when there is no Mul) and bias
 * beta.  Each of the nine would be a host step of its own, and Pow, the
 * largest of them, is a full-size pass over the tensor; the one node runs
 * on the host kernels in one step (driver/core/kernels_norm.c, as the
 * LayerNormalization an opset-17 export brings).
 *
 * The match is exact or nothing: x float32 of known rank; both means over
 * the last axis alone (the axes attribute; the IR takes opsets up to 17)
 * with keepdims 1; Pow's exponent a constant scalar equal to 2; eps,
 * gamma and beta float32 constants whose dims are all 1 but the last,
 * which is x's (or 1), with no more dims than x (so they broadcast along
 * the normalized axis only and leave the result's shape alone); the
 * operands in the order above (Sub and Div are not commutative; Add and
 * Mul may name theirs either way round); and every intermediate read only
 * inside the pattern and no graph output: d by Pow and Div, each other one
 * by its one successor.  A Mul or Add after the Div that does not fit is
 * not an error: the pattern ends before it.  The node takes the place of
 * the pattern's last node (its result keeps the tensor id and name), so
 * the topological order holds; the others die.
 */
#include "sw_compiler/compiler.h"

#include <stdlib.h>
#include <string.h>

enum { LN_MEAN, LN_SUB, LN_POW, LN_VAR, LN_ADD_EPS, LN_SQRT, LN_DIV, LN_MUL, LN_ADD_BETA, LN_COUNT };

struct ln_match {
  int node[LN_COUNT]; /* -1: absent (only LN_MUL, LN_ADD_BETA) */
  int x, gamma, beta; /* gamma, beta: -1 when absent */
  float eps;
};

static int is_type(const struct ir_node *n, const char *type) {
  return !n->dead && !strcmp(ir_node_op(n), type);
}

static int is_f32_const(const struct ir_graph *g, int t) {
  return t >= 0 && g->tensors[t].data && g->tensors[t].dtype == IR_DT_F32;
}

/* Whether tensors a and b have the same (known) shape. */
static int same_shape(const struct ir_graph *g, int a, int b) {
  const struct ir_tensor *x = &g->tensors[a], *y = &g->tensors[b];
  return ir_shape_known(x) && x->rank == y->rank && !memcmp(x->dims, y->dims, (size_t)x->rank * sizeof x->dims[0]);
}

/* The node reading the result of node i, when it is the only one (and the
 * result no graph output), else -1. */
static int next(const struct ir_graph *g, int i) { return i < 0 ? -1 : ir_sole_reader(g, g->nodes[i].out[0]); }

/* The readers of t, d of the pattern: a Pow (*p) and another (*v), and no
 * third one nor a graph output. */
static int two_readers(const struct ir_graph *g, int t, int *p, int *v) {
  int reads = 0;
  *p = *v = -1;
  for (int j = 0; j < g->n_nodes; j++)
    for (int k = 0; !g->nodes[j].dead && k < g->nodes[j].n_in; k++)
      if (g->nodes[j].in[k] == t) *(is_type(&g->nodes[j], "Pow") ? p : v) = j, reads++;
  for (int k = 0; k < g->n_outputs; k++)
    if (g->outputs[k] == t) return 0;
  return reads == 2 && *p >= 0 && *v >= 0;
}

/* Node i: ReduceMean of t over its last axis alone, keepdims 1 (the axes
 * attribute: the IR takes opsets up to 17, before axes became an operand). */
static int mean_last(const struct ir_graph *g, int i, int t) {
  if (i < 0) return 0;
  const struct ir_node *n = &g->nodes[i];
  const int64_t *ax;
  int rank = g->tensors[t].rank;
  if (!is_type(n, "ReduceMean") || n->n_in != 1 || n->in[0] != t || rank < 1) return 0;
  if (!ir_attr_int(n, "keepdims", 1) || ir_attr_ints(n, "axes", &ax) != 1) return 0;
  return ax[0] == -1 || ax[0] == rank - 1;
}

/* The other operand of a binary node reading t, or -1 (commutative: t on
 * either side; else t must be the first). */
static int other_operand(const struct ir_node *n, int t, int commutative) {
  if (n->n_in != 2) return -1;
  if (n->in[0] == t && n->in[1] != t) return n->in[1];
  if (commutative && n->in[1] == t && n->in[0] != t) return n->in[0];
  return -1;
}

/* A float32 constant that broadcasts along x's last axis (of size cols)
 * only: no more dims than x, all 1 but the last, which is cols or 1. */
static int channel_const(const struct ir_graph *g, int t, int x_rank, int64_t cols) {
  if (!is_f32_const(g, t)) return 0;
  const struct ir_tensor *c = &g->tensors[t];
  if (c->rank > x_rank) return 0;
  for (int d = 0; d + 1 < c->rank; d++)
    if (c->dims[d] != 1) return 0;
  return c->rank == 0 || c->dims[c->rank - 1] == cols || c->dims[c->rank - 1] == 1;
}

/* Node i of a binary `type` reading t with a channel constant on the other
 * side: that constant, or -1. */
static int affine_step(const struct ir_graph *g, int i, const char *type, int t, int x) {
  if (i < 0 || !is_type(&g->nodes[i], type)) return -1;
  int c = other_operand(&g->nodes[i], t, 1);
  const struct ir_tensor *xt = &g->tensors[x];
  if (c < 0 || !channel_const(g, c, xt->rank, xt->dims[xt->rank - 1])) return -1;
  return same_shape(g, g->nodes[i].out[0], x) ? c : -1;
}

/* Pow(d, 2) of node p: the exponent a constant scalar 2. */
static int square(const struct ir_graph *g, int p, int d, int x) {
  const struct ir_node *n = &g->nodes[p];
  if (n->n_in != 2 || n->in[0] != d || n->in[1] < 0 || !same_shape(g, n->out[0], x)) return 0;
  const struct ir_tensor *e = &g->tensors[n->in[1]];
  return e->data && ir_tensor_numel(e) == 1 && ir_load_f64(e->dtype, e->data, 0) == 2.0;
}

/* From the second ReduceMean r on: Add eps, Sqrt, Div(d, the root) at v;
 * fills those nodes and eps into m. */
static int std_dev(const struct ir_graph *g, int r, int d, int v, struct ln_match *m) {
  int a = next(g, r), q = next(g, a), x = m->x;
  if (a < 0 || !is_type(&g->nodes[a], "Add") || q < 0 || !is_type(&g->nodes[q], "Sqrt") || g->nodes[q].n_in != 1)
    return 0;
  int eps = other_operand(&g->nodes[a], g->nodes[r].out[0], 1);
  if (!is_f32_const(g, eps) || ir_tensor_numel(&g->tensors[eps]) != 1) return 0;
  if (next(g, q) != v || !is_type(&g->nodes[v], "Div") || other_operand(&g->nodes[v], d, 0) != g->nodes[q].out[0] ||
      !same_shape(g, g->nodes[v].out[0], x))
    return 0;
  m->node[LN_VAR] = r, m->node[LN_ADD_EPS] = a, m->node[LN_SQRT] = q, m->node[LN_DIV] = v;
  m->eps = *(const float *)g->tensors[eps].data;
  return 1;
}

/* Whether the pattern starts at node i (the first ReduceMean); fills m. */
static int match(const struct ir_graph *g, int i, struct ln_match *m) {
  const struct ir_node *n = &g->nodes[i];
  if (n->n_in != 1 || n->in[0] < 0) return 0;
  int x = n->in[0], p, v;
  const struct ir_tensor *xt = &g->tensors[x];
  if (xt->dtype != IR_DT_F32 || !ir_shape_known(xt) || !mean_last(g, i, x)) return 0;
  for (int k = 0; k < LN_COUNT; k++) m->node[k] = -1;
  m->x = x, m->node[LN_MEAN] = i;
  int s = next(g, i); /* d = x - mean, read by Pow and Div alone */
  if (s < 0 || !is_type(&g->nodes[s], "Sub") || other_operand(&g->nodes[s], x, 0) != n->out[0]) return 0;
  int d = g->nodes[s].out[0];
  if (!two_readers(g, d, &p, &v) || !square(g, p, d, x)) return 0;
  int r = next(g, p);
  if (r < 0 || !mean_last(g, r, g->nodes[p].out[0]) || !std_dev(g, r, d, v, m)) return 0;
  m->node[LN_SUB] = s, m->node[LN_POW] = p;
  int u = next(g, v); /* the optional affine part */
  if ((m->gamma = affine_step(g, u, "Mul", g->nodes[v].out[0], x)) >= 0) m->node[LN_MUL] = u, v = u, u = next(g, u);
  if ((m->beta = affine_step(g, u, "Add", g->nodes[v].out[0], x)) >= 0) m->node[LN_ADD_BETA] = u;
  return 1;
}

/* The constant t (or ones when t < 0) as a [cols] vector. */
static int as_vector(struct ir_graph *g, int t, int64_t cols) {
  float *v = ir_xmalloc((size_t)cols * sizeof *v);
  const float *src = t >= 0 ? g->tensors[t].data : NULL;
  int64_t n = t >= 0 ? ir_tensor_numel(&g->tensors[t]) : 0;
  for (int64_t k = 0; k < cols; k++) v[k] = src ? src[n == 1 ? 0 : k] : 1.0f;
  int id = ir_const_add(g, NULL, IR_DT_F32, 1, &cols, v);
  free(v);
  return id;
}

/* The name of the new node: the ReduceMean's scope ("/enc/norm1/") and
 * "LayerNormalization", or the last node's name. */
static char *ln_name(const struct ir_graph *g, const struct ln_match *m, int last) {
  const char *mean = g->nodes[m->node[LN_MEAN]].name, *slash = mean ? strrchr(mean, '/') : NULL;
  if (!slash) return g->nodes[last].name ? ir_xstrdup(g->nodes[last].name) : NULL;
  size_t len = (size_t)(slash - mean) + 1;
  char *s = ir_xmalloc(len + sizeof "LayerNormalization");
  memcpy(s, mean, len);
  strcpy(s + len, "LayerNormalization");
  return s;
}

static void rewrite(struct ir_graph *g, const struct ln_match *m) {
  int last = -1;
  for (int k = 0; k < LN_COUNT; k++)
    if (m->node[k] > last) last = m->node[k];
  const struct ir_tensor *xt = &g->tensors[m->x];
  int64_t cols = xt->dims[xt->rank - 1];
  int in[3] = {m->x, as_vector(g, m->gamma, cols), m->beta >= 0 ? as_vector(g, m->beta, cols) : -1};
  char *name = ln_name(g, m, last);
  for (int k = 0; k < LN_COUNT; k++)
    if (m->node[k] >= 0 && m->node[k] != last) g->nodes[m->node[k]].dead = 1;
  struct ir_node *n = &g->nodes[last];
  free(n->type), free(n->name);
  n->op = IR_OP_ONNX;
  n->type = ir_xstrdup("LayerNormalization");
  n->opset = 17;
  n->name = name;
  n->n_in = in[2] >= 0 ? 3 : 2;
  n->in = ir_xrealloc(n->in, sizeof in);
  memcpy(n->in, in, sizeof in);
  while (n->n_attrs) ir_attr_remove(n, n->attrs[0].name);
  ir_attr_set_int(g, last, "axis", -1);
  ir_attr_set_float(g, last, "epsilon", m->eps);
}

int ir_pass_layernorm(struct ir_graph *g, struct ir_error *err) {
  int changed = 0;
  (void)err;
  for (int i = 0; i < g->n_nodes; i++) {
    struct ln_match m;
    if (is_type(&g->nodes[i], "ReduceMean") && match(g, i, &m)) rewrite(g, &m), changed = 1;
  }
  if (changed) ir_graph_compact(g);
  return 0;
}
