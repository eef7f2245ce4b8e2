/*
 * pass_fuse_act.c - activations as epilogue tables (act_table.h).
 *
 *   DQ(x) -> region f -> Q      => loom.QConv identity with lut = table of f
 *   QConv(...) -> that QConv    => one QConv with the table (its epilogue)
 *   QGemm(...) -> views -> that QConv -> views => one QGemm with the table
 *
 * A region between an int8 x and an int8 y is a function of x's 256 codes:
 * the table lut[(uint8_t)c] = Q_y(f(DQ_x(c))) (act_table_build).  The
 * accelerator applies a table only in an epilogue (docs/isa.md: E =
 * Q.act ? LUT[q] : q), so the standalone form is a depthwise 1x1
 * convolution of weight 1, bias 0 and multiplier 2^30 >> 30, whose q is x
 * itself (attribute act_only).  When the QConv or QGemm producing x (or
 * the tensor x is a view of: a table is element-wise, so it commutes with
 * views) has x as its only reader, the table moves into that op: its
 * requantized q *is* x, so the merged op computes the same bytes in one
 * job, the table loaded once.
 * A tensor of rank 1 to 3 runs as [1, n, 1, 1] between two Reshapes.
 * Not merged: a QConv with a residual operand (the table would have to
 * follow the Add, which the lowering's residual tail does not do), and the
 * ones whose q is also read elsewhere.
 *
 * ReLU and Clip stay the requantization clamp (a region needs a seed op);
 * the table is the int8 semantics (ir_eval_fused.c indexes it like the
 * hardware), so the reference interpreter and fsim agree bit for bit.
 */
#include "sw_compiler/pass_fuse.h"

#include <stdlib.h>
#include <string.h>

#include "sw_compiler/act_table.h"


static int dq_leaf(const struct ir_graph *g, int t) {
  int x;
  struct qparam p;
  return fu_dq_of(g, t, &x, &p) ? x : -1;
}

/* The parameters of the region's leaf: every DQ it reads must agree. */
static int leaf_params(const struct ir_graph *g, const struct act_region *r, struct qparam *p) {
  int seen = 0;
  for (int i = 0; i < r->n; i++) {
    const struct ir_node *n = &g->nodes[r->nodes[i]];
    for (int k = 0; k < n->n_in; k++) {
      int x;
      struct qparam q;
      if (n->in[k] < 0 || !fu_dq_of(g, n->in[k], &x, &q) || x != r->x) continue;
      if (seen && !fu_same_qparam(p, &q)) return 0;
      *p = q, seen = 1;
    }
  }
  return seen;
}

static int const_i32(struct ir_graph *g, const char *base, const char *suffix, int64_t c, int32_t v) {
  int t = fu_new_tensor(g, base, suffix, IR_DT_I32, 1, &c);
  int32_t *d = ir_xmalloc((size_t)c * sizeof *d);
  for (int64_t i = 0; i < c; i++) d[i] = v;
  ir_tensor_set_data(g, t, d, (size_t)c * sizeof *d);
  free(d);
  return t;
}

/* Reshape t (parameters *p) to dims at *pos; the new tensor. */
static int reshape(struct ir_graph *g, int t, const int64_t *dims, int rank, const struct qparam *p, int *pos) {
  char *base = ir_xstrdup(g->tensors[t].name);
  int y = fu_new_tensor(g, base, ".4d", g->tensors[t].dtype, rank, dims);
  free(base);
  fu_set_quant(g, y, p);
  int shp = ir_const_add(g, NULL, IR_DT_I64, 1, (int64_t[1]){rank}, dims), ins[2] = {t, shp};
  ir_node_insert(g, (*pos)++, IR_OP_RESHAPE, NULL, 2, ins, 1, &y);
  return y;
}

static void set_table(struct ir_graph *g, int node, const int8_t lut[256], const char *text) {
  int64_t v[256];
  for (int c = 0; c < 256; c++) v[c] = lut[c];
  ir_attr_set_ints(g, node, "lut", 256, v);
  ir_attr_set_string(g, node, "act", text);
}

/* Q node i reading a region of one int8 tensor: the identity QConv. */
int fu_fuse_act(struct fctx *f, int i) {
  struct ir_graph *g = f->g;
  struct act_region r;
  struct out_chain oc = {.act = -1, .q = i, .chs = NULL};
  struct qparam px;
  if (g->nodes[i].op != IR_OP_QUANTIZELINEAR || !fu_scalar_qparams(g, &g->nodes[i], &oc.p) ||
      act_region_of(g, g->nodes[i].in[0], dq_leaf, &r) || !r.seed || !leaf_params(g, &r, &px) ||
      !act_shape_fits(&g->tensors[r.x]))
    return 0;
  oc.y = g->nodes[i].out[0];
  struct qparam x8 = fu_as_i8(px), y8 = fu_as_i8(oc.p);
  int8_t lut[256];
  char text[160];
  act_table_build(g, &r, x8.scale, x8.zp, y8.scale, y8.zp, lut);
  act_region_text(g, &r, text, sizeof text);
  g->nodes[i].dead = 1;
  int pos = i;
  int x = fu_as_int8(f, r.x, &px, &pos), four = g->tensors[x].rank == 4;
  if (!four) x = reshape(g, x, (int64_t[4]){1, ir_tensor_numel(&g->tensors[x]), 1, 1}, 4, &x8, &pos);
  int64_t c = g->tensors[x].dims[1], wd[4] = {c, 1, 1, 1};
  char *base = ir_xstrdup(g->tensors[oc.y].name);
  int w = fu_new_tensor(g, base, ".w", IR_DT_I8, 4, wd);
  int8_t *ones = ir_xmalloc((size_t)c);
  memset(ones, 1, (size_t)c);
  ir_tensor_set_data(g, w, ones, (size_t)c);
  free(ones);
  int b = const_i32(g, base, ".bias", c, 0), m = const_i32(g, base, ".mult", c, INT32_C(1) << 30);
  free(base);
  int y = fu_result_of(g, &oc), in[4] = {x, w, b, m}, y4 = y;
  if (!four) { /* the job writes [1, n, 1, 1]; a view gives the result its shape */
    int64_t d4[4] = {1, c, 1, 1};
    char *yn = ir_xstrdup(g->tensors[y].name);
    y4 = fu_new_tensor(g, yn, ".act", IR_DT_I8, 4, d4);
    free(yn);
    fu_set_quant(g, y4, &y8);
  }
  int node = ir_node_insert(g, pos, IR_OP_QCONV, NULL, 4, in, 1, &y4);
  static const int64_t one[2] = {1, 1}, zero[4] = {0, 0, 0, 0};
  ir_attr_set_ints(g, node, "kernel_shape", 2, one);
  ir_attr_set_ints(g, node, "strides", 2, one);
  ir_attr_set_ints(g, node, "dilations", 2, one);
  ir_attr_set_ints(g, node, "pads", 4, zero);
  ir_attr_set_int(g, node, "group", c);
  ir_attr_set_int(g, node, "in_zp", x8.zp);
  ir_attr_set_int(g, node, "out_zp", x8.zp);
  ir_attr_set_int(g, node, "lo", -128);
  ir_attr_set_int(g, node, "hi", 127);
  ir_attr_set_int(g, node, "shift", 30);
  ir_attr_set_int(g, node, "round_even", 1);
  ir_attr_set_int(g, node, "act_only", 1);
  set_table(g, node, lut, text);
  pos = node + 1;
  if (!four) {
    int64_t rank = g->tensors[y].rank;
    int shp = ir_const_add(g, NULL, IR_DT_I64, 1, &rank, g->tensors[y].dims), ins[2] = {y4, shp};
    ir_node_insert(g, pos++, IR_OP_RESHAPE, NULL, 2, ins, 1, &y);
  }
  fu_finish_result(f, &oc, y, pos);
  return 1;
}

/* The view node producing t when `user` alone reads t, or -1. */
static int view_into(const struct ir_graph *g, int t, int user) {
  int v = ir_producer(g, t);
  return v >= 0 && ir_op_is_view(g->nodes[v].op) && ir_sole_reader(g, t) == user ? v : -1;
}

static int same_shape(const struct ir_tensor *a, const struct ir_tensor *b) {
  return a->rank == b->rank && !memcmp(a->dims, b->dims, (size_t)a->rank * sizeof a->dims[0]);
}

/* An identity table QConv i whose operand is, through any number of views
 * (each its view's only reader), a QConv's or QGemm's result read by
 * nothing else: the table goes into that op, which then writes the first
 * tensor of its own shape among the table's result and the views after it
 * (each read only by the next), the views between dead.  A [1,S,D] Linear
 * is a QGemm on [S,D], a Reshape to [1,S,D] and the table's own Reshape to
 * [1,S*D,1,1] before it; its [1,S,D] and [S,D] views after it.  When no
 * such tensor follows, the table becomes a Reshape of the op's result. */
int fu_merge_act(struct fctx *f, int i) {
  struct ir_graph *g = f->g;
  const struct ir_node *n = &g->nodes[i];
  if (n->op != IR_OP_QCONV || !ir_attr_int(n, "act_only", 0)) return 0;
  int x = n->in[0], reader = i, v;
  while ((v = view_into(g, x, reader)) >= 0) reader = v, x = g->nodes[v].in[0];
  int c = ir_producer(g, x);
  if (c < 0 || ir_sole_reader(g, x) != reader) return 0;
  const struct ir_node *cn = &g->nodes[c];
  if ((cn->op != IR_OP_QGEMM && cn->op != IR_OP_QCONV) || cn->n_in != 4 || ir_attr_find(cn, "lut") ||
      g->tensors[x].dtype != IR_DT_I8 || ir_attr_int(cn, "out_zp", 0) != ir_attr_int(n, "in_zp", 0))
    return 0;
  int y = n->out[0], u;
  while (!same_shape(&g->tensors[y], &g->tensors[x]) && (u = ir_sole_reader(g, y)) >= 0 &&
         ir_op_is_view(g->nodes[u].op))
    y = g->nodes[u].out[0];
  if (!same_shape(&g->tensors[y], &g->tensors[x])) y = n->out[0];
  const struct ir_attr *lut = ir_attr_find(n, "lut"), *act = ir_attr_find(n, "act");
  int8_t t[256];
  for (int k = 0; k < 256; k++) t[k] = (int8_t)lut->ints[k];
  char *text = ir_xstrdup(act && act->kind == IR_ATTR_STRING ? act->s : "");
  set_table(g, c, t, text);
  free(text);
  for (int k = reader; k != i; k = ir_sole_reader(g, g->nodes[k].out[0])) g->nodes[k].dead = 1; /* views in */
  int k = i; /* the table and the views out, to the one writing y */
  for (; g->nodes[k].out[0] != y; k = ir_sole_reader(g, g->nodes[k].out[0])) g->nodes[k].dead = 1;
  g->nodes[k].dead = 1;
  if (!same_shape(&g->tensors[y], &g->tensors[x])) { /* the table's result as a view of the op's */
    int64_t rank = g->tensors[y].rank;
    int shp = ir_const_add(g, NULL, IR_DT_I64, 1, &rank, g->tensors[y].dims);
    ir_node_insert(g, i, IR_OP_RESHAPE, NULL, 2, (int[2]){x, shp}, 1, &y);
    return 1;
  }
  g->nodes[c].out[0] = y;
  return 1;
}
