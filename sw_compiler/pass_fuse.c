/*
 * pass_fuse.c - fusion of quantized patterns into the accelerator's ops.
 *
 * Input: a graph in QDQ form (from pass_quantize.c or a quantized ONNX
 * model), possibly with QLinearConv / QLinearMatMul nodes.  Output: the
 * same computation with every pattern the accelerator runs replaced by one
 * fused int8 op (ir.h gives their exact integer semantics):
 *
 *   DQ(x) -> Conv(DQ(w), bias) [-> Relu | Clip] -> Q        => loom.QConv
 *   QLinearConv                                             => loom.QConv
 *   DQ(x) -> Gemm(DQ(w), bias) [-> Relu | Clip] -> Q        => loom.QGemm
 *   DQ(x) -> MatMul(DQ(w)) [-> Add(bias)] ...               (first made a Gemm)
 *   QLinearMatMul                                           => loom.QGemm
 *   ConvInteger, MatMulInteger                              => QConv, QGemm with an i32 result
 *   a batched (3-D) QLinearMatMul / MatMulInteger           => Gather + 2-D ones + Concat
 *   DQ(a), DQ(b) -> Add [-> Relu | Clip] -> Q               => loom.QAdd
 *                                  ([..., S, D]: on the fc jobs' [rows, D], views around it)
 *   DQ(x) -> MaxPool | AveragePool | GlobalAveragePool -> Q => loom.QPool
 *   DQ(x) -> Sigmoid, x * Sigmoid(x), GELU, ... -> Q        => loom.QConv with a table
 *                                  (pass_fuse_act.c; into the QConv before it if it can)
 *
 * The rewrites run in this order, each over the whole graph:
 *   1. DequantizeLinear moves below Reshape-like ops and Concat, which then
 *      work on the integers (their int8 form is the same bytes);
 *   2. Q(DQ(x)) with equal parameters cancels to x;
 *   3. the patterns above, then the activation tables;
 *   4. cancellation again; tables into the QConv before them;
 *   5. a QAdd whose operand is a QConv (or an fc QGemm) read by nothing
 *      else becomes that op's residual operand (one job instead of two,
 *      same numbers);
 *   6. a QuantizeLinear of [..., S, D] read only through views to the
 *      [rows, D] rows quantizes into them (no COPY into the blocked rows).
 * Whatever is left (a DQ before a Softmax, the Q of a model input) is host
 * work for pass_partition.c.
 *
 * The arithmetic of a fused op: the accumulator holds sum w * (x - x_zp) at
 * scale s_x * s_w[o]; the bias is brought to that scale; the requantization
 * multiplier s_x * s_w[o] / s_y becomes a 31-bit fixed-point number with a
 * shift shared by all channels (quant_multipliers; the ISA has one shift
 * register).  The float multiplier is formed the way onnxruntime and the
 * reference interpreter form it, (s_x * s_w) / s_y in float32, so QLinear
 * models agree with them except within 2^-24 of a rounding tie.  A ReLU or
 * Clip becomes the clamp of the requantization, in the output's int8 codes.
 *
 * uint8: the accelerator computes in int8.  A uint8 tensor with zero point
 * z is the int8 tensor with zero point z - 128 (the same reals), so a fused
 * op reads uint8 data through a Q(DQ(.)) conversion and writes uint8 data
 * through one (host steps; a chain of uint8 layers converts once, since the
 * conversion of a conversion looks through to the int8 original).  Weights
 * with a zero point are stored as w - zp; when some w - zp is beyond int8
 * (uint8 weights) the weight tensor is i32 and the lowering runs it as a
 * sum of int8 passes.  The Integer ops' inputs are quantized tensors of
 * scale 1, so the same conversion and zero-point folding serve them.
 */
#include "sw_compiler/pass_fuse.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "sw_compiler/lower.h"

static int same_dims(const struct ir_tensor *a, const struct ir_tensor *b) {
  return a->rank == b->rank && !memcmp(a->dims, b->dims, (size_t)a->rank * sizeof a->dims[0]);
}

/* Whether x is a [rows, d] tensor of t's type. */
static int is_rows(const struct ir_graph *g, int x, int t, int64_t rows, int64_t d) {
  const struct ir_tensor *a = &g->tensors[x];
  return a->rank == 2 && a->dims[0] == rows && a->dims[1] == d && a->dtype == g->tensors[t].dtype;
}

/* A new [rows, d] tensor named after t, of t's type, parameters *p. */
static int rows_like(struct ir_graph *g, int t, int64_t rows, int64_t d, const struct qparam *p) {
  char *base = ir_xstrdup(g->tensors[t].name);
  int y = fu_new_tensor(g, base, ".rows", g->tensors[t].dtype, 2, (int64_t[2]){rows, d});
  free(base);
  fu_set_quant(g, y, p);
  return y;
}

/* x (a view of t) or a view of x, by views among the first `before`
 * nodes, that is [rows, d]; -1 when none. */
static int rows_view_of_fwd(const struct ir_graph *g, int x, int t, int64_t rows, int64_t d, int before) {
  if (is_rows(g, x, t, rows, d)) return x;
  for (int i = 0; i < before; i++) {
    const struct ir_node *n = &g->nodes[i];
    int y = !n->dead && ir_op_is_view(n->op) && n->in[0] == x ? rows_view_of_fwd(g, n->out[0], t, rows, d, before) : -1;
    if (y >= 0) return y;
  }
  return -1;
}

/* A [rows, d] tensor of t's type holding t's elements in t's order, made
 * before node `before`: t itself, one that views made t from, or one that
 * views make of t (the rows an fc job reads); -1 when none. */
static int rows_view_of(const struct ir_graph *g, int t, int64_t rows, int64_t d, int before) {
  for (int x = t, v;; x = g->nodes[v].in[0]) {
    if (is_rows(g, x, t, rows, d)) return x;
    v = ir_producer(g, x);
    if (v < 0 || !ir_op_is_view(g->nodes[v].op)) break;
  }
  return rows_view_of_fwd(g, t, t, rows, d, before);
}

/* The [rows, d] matrix int8 tensor t (parameters *p) is a view of
 * (rows_view_of), else a Reshape of t inserted at *pos. */
static int as_rows(struct ir_graph *g, int t, int64_t rows, int64_t d, const struct qparam *p, int *pos) {
  int64_t dims[2] = {rows, d};
  int v = rows_view_of(g, t, rows, d, *pos);
  if (v >= 0) return v;
  int y = rows_like(g, t, rows, d, p);
  int shp = ir_const_add(g, NULL, IR_DT_I64, 1, (int64_t[1]){2}, dims), in[2] = {t, shp};
  ir_node_insert(g, (*pos)++, IR_OP_RESHAPE, NULL, 2, in, 1, &y);
  return y;
}

/* DQ(a), DQ(b) -> Add [-> act] -> Q  (same shapes: a residual add).  An
 * operand of rank 3 or more than 4, [..., S, D], runs as the [rows, D]
 * matrix of the fc jobs (the rows of all leading dims): views in and out. */
static int fuse_add(struct fctx *f, int i) {
  struct ir_graph *g = f->g;
  const struct ir_node *n = &g->nodes[i];
  struct out_chain oc;
  struct qparam pa, pb;
  int a, b;
  if (!fu_dq_of(g, n->in[0], &a, &pa) || !fu_dq_of(g, n->in[1], &b, &pb) || !fu_match_output(g, n->out[0], 1, 0, &oc) ||
      !same_dims(&g->tensors[a], &g->tensors[b]) || !same_dims(&g->tensors[a], &g->tensors[oc.y]))
    return 0;
  struct lower_qadd q = {0};
  if (lower_add_scales((double)pa.scale / oc.p.scale, (double)pb.scale / oc.p.scale, &q))
    return ir_fail(f->err, f->g, i, "the operand and result scales of the Add are out of range");
  fu_kill_chain(g, i, &oc);
  int pos = oc.q, node;
  a = fu_as_int8(f, a, &pa, &pos);
  b = fu_as_int8(f, b, &pb, &pos);
  int y = fu_result_of(g, &oc), rank = g->tensors[y].rank, y2 = y;
  if (rank != 2 && rank != 4) {
    int64_t d = g->tensors[y].dims[rank - 1], rows = ir_tensor_numel(&g->tensors[y]) / (d ? d : 1);
    struct qparam a8 = fu_as_i8(pa), b8 = fu_as_i8(pb), y8 = fu_as_i8(oc.p);
    a = as_rows(g, a, rows, d, &a8, &pos);
    b = as_rows(g, b, rows, d, &b8, &pos);
    y2 = rows_like(g, y, rows, d, &y8);
  }
  int in[2] = {a, b};
  node = ir_node_insert(g, pos, IR_OP_QADD, g->nodes[i].name, 2, in, 1, &y2);
  if (y2 != y) {
    int64_t r = rank;
    int back[2] = {y2, ir_const_add(g, NULL, IR_DT_I64, 1, &r, g->tensors[y].dims)};
    ir_node_insert(g, node + 1, IR_OP_RESHAPE, NULL, 2, back, 1, &y);
  }
  fu_set_req_attrs(g, node, 0, &oc, q.shift);
  ir_attr_set_int(g, node, "a_zp", fu_zp8(&pa));
  ir_attr_set_int(g, node, "b_zp", fu_zp8(&pb));
  ir_attr_set_int(g, node, "a_weight", q.a_weight);
  ir_attr_set_int(g, node, "b_weight", q.b_weight);
  ir_attr_set_int(g, node, "multiplier", q.multiplier);
  fu_finish_result(f, &oc, y, node + 1 + (y2 != y));
  return 1;
}

static int64_t attr_i(const struct ir_node *n, const char *name, int i, int64_t dflt) {
  const struct ir_attr *a = ir_attr_find(n, name);
  return a && a->kind == IR_ATTR_INTS && i < a->n ? a->ints[i] : dflt;
}

/* The window of a 2-D pool: kernel, strides, pads (t, l, b, r). */
struct window {
  int64_t k[2], s[2], p[4];
};

/* Whether pool i has an accelerator window (filled in w).  Dilated windows,
 * ceil_mode average pools with a partial last window and padded averages
 * that exclude the padding have none: the pool stays unfused and runs on
 * the host in float between its DequantizeLinear and QuantizeLinear. */
static int pool_window(const struct ir_graph *g, int i, const struct ir_tensor *x, const struct ir_tensor *y,
                       struct window *w) {
  const struct ir_node *n = &g->nodes[i];
  int global = n->op == IR_OP_GLOBALAVERAGEPOOL;
  for (int d = 0; d < 2; d++) {
    w->k[d] = global ? x->dims[2 + d] : attr_i(n, "kernel_shape", d, 1);
    w->s[d] = global ? 1 : attr_i(n, "strides", d, 1);
    w->p[d] = global ? 0 : attr_i(n, "pads", d, 0);
    w->p[d + 2] = global ? 0 : attr_i(n, "pads", d + 2, 0);
    if (attr_i(n, "dilations", d, 1) != 1) return 0;
    int64_t out = (x->dims[2 + d] + w->p[d] + w->p[d + 2] - w->k[d]) / w->s[d] + 1;
    /* ceil_mode: max pooling ignores padding, so the windows past the end
     * are windows over more bottom / right padding */
    if (out < y->dims[2 + d] && n->op == IR_OP_MAXPOOL)
      w->p[d + 2] += (y->dims[2 + d] - 1) * w->s[d] + w->k[d] - (x->dims[2 + d] + w->p[d] + w->p[d + 2]);
    out = (x->dims[2 + d] + w->p[d] + w->p[d + 2] - w->k[d]) / w->s[d] + 1;
    if (out != y->dims[2 + d]) return 0;
  }
  return !(n->op == IR_OP_AVERAGEPOOL && !ir_attr_int(n, "count_include_pad", 0) &&
           (w->p[0] || w->p[1] || w->p[2] || w->p[3]));
}

static void set_window_attrs(struct ir_graph *g, int node, const struct window *w) {
  int64_t pads[4] = {w->p[0], w->p[1], w->p[2], w->p[3]};
  ir_attr_set_ints(g, node, "kernel_shape", 2, w->k);
  ir_attr_set_ints(g, node, "strides", 2, w->s);
  ir_attr_set_ints(g, node, "pads", 4, pads);
}

/* DQ(x) -> MaxPool | AveragePool | GlobalAveragePool -> Q */
static int fuse_pool(struct fctx *f, int i) {
  struct ir_graph *g = f->g;
  const struct ir_node *n = &g->nodes[i];
  struct out_chain oc;
  struct qparam px;
  struct window w;
  int x, avg = n->op != IR_OP_MAXPOOL;
  if (!fu_dq_of(g, n->in[0], &x, &px) || !fu_match_output(g, n->out[0], 0, 0, &oc) || g->tensors[x].rank != 4) return 0;
  if (!pool_window(g, i, &g->tensors[x], &g->tensors[oc.y], &w)) return 0;
  struct qparam a = fu_as_i8(px), b = fu_as_i8(oc.p);
  if (!avg && !fu_same_qparam(&a, &b)) return 0; /* a requantizing max pool: stays unfused */
  int32_t mult = 1;
  uint32_t shift = 0;
  double real = (double)px.scale / oc.p.scale / (double)(w.k[0] * w.k[1]);
  if (avg && quant_multipliers(&real, 1, &mult, &shift))
    return ir_fail(f->err, f->g, i, "the pooling scale ratio is out of range");
  fu_kill_chain(g, i, &oc);
  int pos = oc.q;
  x = fu_as_int8(f, x, &px, &pos);
  int y = fu_result_of(g, &oc);
  int node = ir_node_insert(g, pos, IR_OP_QPOOL, g->nodes[i].name, 1, &x, 1, &y);
  set_window_attrs(g, node, &w);
  fu_set_req_attrs(g, node, fu_zp8(&px), &oc, shift);
  ir_attr_set_int(g, node, "avg", avg);
  ir_attr_set_int(g, node, "multiplier", mult);
  fu_finish_result(f, &oc, y, node + 1);
  return 1;
}

static int fuse_node(struct fctx *f, int i) {
  switch (f->g->nodes[i].op) {
  case IR_OP_CONV: return fu_fuse_conv(f, i);
  case IR_OP_QLINEARCONV: return fu_fuse_qlinear_conv(f, i);
  case IR_OP_GEMM: return fu_fuse_gemm(f, i);
  case IR_OP_QLINEARMATMUL: return fu_fuse_qlinear_matmul(f, i);
  case IR_OP_CONVINTEGER: return fu_fuse_integer(f, i, IR_OP_QCONV);
  case IR_OP_MATMULINTEGER: return fu_fuse_integer(f, i, IR_OP_QGEMM);
  case IR_OP_ADD: return fuse_add(f, i);
  case IR_OP_MAXPOOL: case IR_OP_AVERAGEPOOL: case IR_OP_GLOBALAVERAGEPOOL: return fuse_pool(f, i);
  default: return 0;
  }
}

static void copy_all_attrs(struct ir_graph *g, int from, int to) {
  for (int k = 0; k < g->nodes[from].n_attrs; k++) {
    struct ir_attr a = g->nodes[from].attrs[k];
    if (a.kind == IR_ATTR_INT) ir_attr_set_int(g, to, a.name, a.i);
    else if (a.kind == IR_ATTR_INTS) ir_attr_set_ints(g, to, a.name, a.n, a.ints);
  }
}

/* ---- a residual Add into the convolution before it ---- */

/* QAdd(QConv(...), r) with the QConv's result read by nothing else: one
 * QConv with a residual operand, which the lowering runs in the same job
 * (the Add's loads and stores disappear; the numbers are the same).  A
 * QGemm with constant weights and an int8 result (an fc job: a 1x1
 * convolution to the lowering) takes its residual Add the same way. */
static int fuse_residual(struct fctx *f, int i) {
  struct ir_graph *g = f->g;
  const struct ir_node *n = &g->nodes[i];
  if (n->op != IR_OP_QADD) return 0;
  int side = -1, c = -1;
  for (int k = 0; k < 2 && side < 0; k++) {
    c = ir_producer(g, n->in[k]);
    const struct ir_node *cn = c >= 0 ? &g->nodes[c] : NULL;
    int fc = cn && cn->op == IR_OP_QGEMM && g->tensors[cn->in[1]].data && g->tensors[cn->out[0]].dtype == IR_DT_I8;
    if (cn && (cn->op == IR_OP_QCONV || fc) && cn->n_in == 4 && !ir_attr_find(cn, "lut") && ir_sole_reader(g, cn->out[0]) == i &&
        ir_attr_int(cn, "out_zp", 0) == ir_attr_int(n, k ? "b_zp" : "a_zp", 0) &&
        ir_attr_int(cn, "round_even", 0) == ir_attr_int(n, "round_even", 0))
      side = k;
  }
  if (side < 0) return 0;
  static const char *const res_attrs[][2] = {{"res_multiplier", "multiplier"}, {"res_shift", "shift"},
                                             {"res_out_zp", "out_zp"}, {"res_lo", "lo"}, {"res_hi", "hi"}};
  int in[5], y = n->out[0];
  memcpy(in, g->nodes[c].in, 4 * sizeof *in);
  in[4] = n->in[1 - side];
  g->nodes[c].dead = 1;
  g->nodes[i].dead = 1;
  int node = ir_node_insert(g, i, g->nodes[c].op, g->nodes[c].name, 5, in, 1, &y);
  const struct ir_node *add = &g->nodes[i + 1];
  copy_all_attrs(g, c, node);
  for (int k = 0; k < 5; k++) ir_attr_set_int(g, node, res_attrs[k][0], ir_attr_int(add, res_attrs[k][1], 0));
  ir_attr_set_int(g, node, "res_a_weight", ir_attr_int(&g->nodes[i + 1], side ? "b_weight" : "a_weight", 1));
  ir_attr_set_int(g, node, "res_b_weight", ir_attr_int(&g->nodes[i + 1], side ? "a_weight" : "b_weight", 1));
  ir_attr_set_int(g, node, "res_b_zp", ir_attr_int(&g->nodes[i + 1], side ? "a_zp" : "b_zp", 0));
  return 1;
}

/* ---- Q above views to the rows ---- */

/* Whether every reader of t is a view whose result is [rows, d] or again
 * read only by such views (and t is no model output); *any: one was. */
static int only_views_to_rows(const struct ir_graph *g, int t, int64_t rows, int64_t d, int *any) {
  for (int k = 0; k < g->n_outputs; k++)
    if (g->outputs[k] == t) return 0;
  for (int k = 0; k < g->n_nodes; k++) {
    const struct ir_node *u = &g->nodes[k];
    for (int s = 0; s < u->n_in && !u->dead; s++) {
      if (u->in[s] != t) continue;
      if (!ir_op_is_view(u->op) || s != 0) return 0;
      if (is_rows(g, u->out[0], t, rows, d)) *any = 1;
      else if (!only_views_to_rows(g, u->out[0], rows, d, any)) return 0;
    }
  }
  return 1;
}

/* Kills the views below t, the [rows, d] results replaced by y. */
static void kill_views_to(struct ir_graph *g, int t, int y, int64_t rows, int64_t d) {
  for (int k = 0; k < g->n_nodes; k++) {
    struct ir_node *u = &g->nodes[k];
    if (u->dead || !ir_op_is_view(u->op) || u->in[0] != t) continue;
    u->dead = 1;
    if (is_rows(g, u->out[0], t, rows, d)) ir_replace_uses(g, u->out[0], y);
    else kill_views_to(g, u->out[0], y, rows, d);
  }
}

/* Q(x) -> t8 [..., S, D] read only through views, all to one [rows, D]
 * shape (the fc job's input, a residual Add's operand): Q(view(x)) into
 * those rows instead, so the host quantizes straight into the jobs'
 * blocked rows, not into a plain tensor that a COPY then blocks. */
static int q_to_rows(struct fctx *f, int i) {
  struct ir_graph *g = f->g;
  const struct ir_node *n = &g->nodes[i];
  int t8 = n->out[0], rank = g->tensors[t8].rank, any = 0;
  if (n->op != IR_OP_QUANTIZELINEAR || rank == 2 || rank == 4 || rank < 1 || g->tensors[t8].quant.n != 1) return 0;
  int64_t d = g->tensors[t8].dims[rank - 1], rows = ir_tensor_numel(&g->tensors[t8]) / (d ? d : 1);
  if (!only_views_to_rows(g, t8, rows, d, &any) || !any) return 0;
  int y = rows_view_of_fwd(g, t8, t8, rows, d, g->n_nodes);
  kill_views_to(g, t8, y, rows, d);
  int x = n->in[0];
  char *base = ir_xstrdup(g->tensors[x].name);
  int xf = fu_new_tensor(g, base, ".rows", g->tensors[x].dtype, 2, (int64_t[2]){rows, d});
  free(base);
  int shp = ir_const_add(g, NULL, IR_DT_I64, 1, (int64_t[1]){2}, (int64_t[2]){rows, d}), in[2] = {x, shp};
  ir_node_insert(g, i, IR_OP_RESHAPE, NULL, 2, in, 1, &xf);
  g->nodes[i + 1].in[0] = xf; /* the Q, moved by the insertion */
  g->nodes[i + 1].out[0] = y;
  return 1;
}

/* ---- DQ below views, Q(DQ) cancellation ---- */

static int is_view(enum ir_op_kind op) { return ir_op_is_view(op) || op == IR_OP_CONCAT; }

/* view(DQ(x), ...) -> DQ(view(x, ...)): the integers move, not the floats.
 * Concat needs every operand dequantized with the same parameters.  A
 * head's rows of a stacked attention operand move the same way. */
static int push_dq(struct fctx *f, int i) {
  struct ir_graph *g = f->g;
  struct ir_node *n = &g->nodes[i];
  if (!is_view(n->op) && (n->dead || ir_head_slice_of(g, n->out[0], NULL, NULL) < 0)) return 0;
  int ops = n->op == IR_OP_CONCAT ? n->n_in : 1, *in = ir_xmalloc((size_t)n->n_in * sizeof *in);
  struct qparam p0, p;
  int ok = 1;
  for (int k = 0; k < n->n_in; k++) in[k] = n->in[k];
  for (int k = 0; k < ops && ok; k++)
    ok = fu_dq_of(g, n->in[k], &in[k], k ? &p : &p0) && (!k || fu_same_qparam(&p, &p0));
  if (ok) {
    enum ir_op_kind op = n->op;
    int y = n->out[0], n_in = n->n_in;
    n->dead = 1;
    int yi = fu_like(g, y, ".q8", p0.dt), pos = i;
    fu_set_quant(g, yi, &p0);
    int node = ir_node_insert(g, pos, op, g->nodes[i].name, n_in, in, 1, &yi);
    copy_all_attrs(g, i + 1, node);
    if (op == IR_OP_ONNX) g->nodes[node].type = ir_xstrdup(g->nodes[i + 1].type), g->nodes[node].opset = g->nodes[i + 1].opset;
    pos = node + 1;
    fu_insert_qdq(g, IR_OP_DEQUANTIZELINEAR, yi, y, &p0, &pos);
  }
  free(in);
  return ok;
}

/* Q(DQ(x)) with the parameters x already has is x. */
static int cancel(struct fctx *f, int i) {
  struct ir_graph *g = f->g;
  const struct ir_node *n = &g->nodes[i];
  struct qparam pq, px;
  int x;
  if (n->op != IR_OP_QUANTIZELINEAR || !fu_scalar_qparams(g, n, &pq) || !fu_dq_of(g, n->in[0], &x, &px) ||
      !fu_same_qparam(&pq, &px))
    return 0;
  g->nodes[i].dead = 1;
  ir_replace_uses(g, g->nodes[i].out[0], x);
  return 1;
}

static int for_each_node(struct fctx *f, int (*fn)(struct fctx *, int)) {
  for (int i = 0; i < f->g->n_nodes; i++)
    if (!f->g->nodes[i].dead && fn(f, i) < 0) return -1;
  return 0;
}

/* ---- MatMul + Add -> Gemm ---- */

static int is_weight(const struct ir_graph *g, int t) {
  int d = ir_producer(g, t);
  return fu_is_const(g, t) || (d >= 0 && g->nodes[d].op == IR_OP_DEQUANTIZELINEAR && fu_is_const(g, g->nodes[d].in[0]));
}

/* The bias operand of an Add after a matmul with `o` outputs, or -1. */
static int add_bias(const struct ir_graph *g, const struct ir_node *add, int y, int64_t o) {
  if (add->op != IR_OP_ADD) return -1;
  int c = add->in[0] == y ? add->in[1] : add->in[0];
  const struct ir_tensor *ct = &g->tensors[c];
  if (!is_weight(g, c) || ir_tensor_numel(ct) != o || (ct->rank == 2 && ct->dims[0] != 1) || ct->rank > 2)
    return -1;
  return c;
}

/* A Reshape of t to `rank` dims, inserted at *pos (which moves past it). */
static int reshape_to(struct ir_graph *g, int t, int rank, const int64_t *dims, int *pos) {
  int64_t r = rank;
  int shape = ir_const_add(g, NULL, IR_DT_I64, 1, &r, dims);
  int y = ir_tensor_add(g, NULL, g->tensors[t].dtype, rank, dims), in[2] = {t, shape};
  ir_node_insert(g, (*pos)++, IR_OP_RESHAPE, NULL, 2, in, 1, &y);
  return y;
}

/* A MatMul of [..., S, D] activations by a constant [D, E]: the rows of all
 * batches as one [M, D] matrix through a Gemm (the accelerator's fully
 * connected layer), and back to [..., S, E]. */
static int batched_to_gemm(struct fctx *f, int i) {
  struct ir_graph *g = f->g;
  const struct ir_node *n = &g->nodes[i];
  const struct ir_tensor *x = &g->tensors[n->in[0]], *y = &g->tensors[n->out[0]];
  if (n->op != IR_OP_MATMUL || x->rank < 3 || g->tensors[n->in[1]].rank != 2 || !is_weight(g, n->in[1]) ||
      !ir_shape_known(x) || !ir_shape_known(y))
    return 0;
  int64_t d = x->dims[x->rank - 1], e = y->dims[y->rank - 1], m = ir_tensor_numel(x) / (d ? d : 1);
  int64_t xd[2] = {m, d}, yd[2] = {m, e}, ydims[IR_MAX_RANK];
  int yrank = y->rank, yt = n->out[0], w = n->in[1], pos = i, u = ir_sole_reader(g, yt), c = -1;
  memcpy(ydims, y->dims, sizeof ydims);
  if (u >= 0) c = add_bias(g, &g->nodes[u], yt, e);
  if (c >= 0) { /* the bias Add joins the Gemm; the reshape back writes its result */
    g->nodes[u].dead = 1;
    yt = g->nodes[u].out[0];
  }
  int x2 = reshape_to(g, n->in[0], 2, xd, &pos); /* node i is now at pos */
  int y2 = ir_tensor_add(g, NULL, g->tensors[yt].dtype, 2, yd), gin[3] = {x2, w, c};
  ir_node_insert(g, pos + 1, IR_OP_GEMM, g->nodes[pos].name, c >= 0 ? 3 : 2, gin, 1, &y2);
  g->nodes[pos].dead = 1;
  int back = pos + 2, in[2] = {y2, -1};
  int64_t r = yrank;
  in[1] = ir_const_add(g, NULL, IR_DT_I64, 1, &r, ydims);
  ir_node_insert(g, back, IR_OP_RESHAPE, NULL, 2, in, 1, &yt);
  return 1;
}

static int matmul_to_gemm(struct fctx *f, int i) {
  struct ir_graph *g = f->g;
  const struct ir_node *n = &g->nodes[i];
  if (batched_to_gemm(f, i)) return 1;
  n = &g->nodes[i];
  if (n->op != IR_OP_MATMUL || g->tensors[n->in[0]].rank != 2 || g->tensors[n->in[1]].rank != 2 ||
      !is_weight(g, n->in[1]))
    return 0;
  int y = n->out[0], u = ir_sole_reader(g, y), pos = i, c = -1;
  if (u >= 0) c = add_bias(g, &g->nodes[u], y, g->tensors[y].dims[1]);
  if (c >= 0) {
    g->nodes[u].dead = 1;
    y = g->nodes[u].out[0];
    pos = u;
  }
  int in[3] = {n->in[0], n->in[1], c};
  g->nodes[i].dead = 1;
  ir_node_insert(g, pos, IR_OP_GEMM, g->nodes[i].name, c >= 0 ? 3 : 2, in, 1, &y);
  return 1;
}

int ir_pass_fuse_matmul_bias(struct ir_graph *g, struct ir_error *err) {
  struct fctx f = {.g = g, .err = err};
  if (for_each_node(&f, matmul_to_gemm)) return -1;
  ir_pass_dce(g);
  return ir_pass_shape_infer(g, err);
}

/* ---- the pass ---- */

/* Every remaining Q output and DQ input carries its parameters
 * (pass_partition.c and the .loom tensor descriptors read them; a DQ of a
 * model input is a host step that needs the input's scale). */
static void annotate(struct ir_graph *g) {
  struct qparam p;
  for (int i = 0; i < g->n_nodes; i++) {
    const struct ir_node *n = &g->nodes[i];
    if (n->op == IR_OP_QUANTIZELINEAR && fu_scalar_qparams(g, n, &p)) fu_set_quant(g, n->out[0], &p);
    if (n->op == IR_OP_DEQUANTIZELINEAR && fu_scalar_qparams(g, n, &p) && !g->tensors[n->in[0]].quant.n &&
        !fu_is_const(g, n->in[0]))
      fu_set_quant(g, n->in[0], &p);
  }
}

int ir_pass_fuse(struct ir_graph *g, unsigned flags, struct ir_error *err) {
  struct fctx f = {.g = g, .err = err};
  int rc = ir_pass_fuse_matmul_bias(g, err) || for_each_node(&f, push_dq) || for_each_node(&f, cancel) ||
           for_each_node(&f, fu_unbatch) || for_each_node(&f, fuse_node) ||
           (!(flags & FUSE_NO_ACT) && for_each_node(&f, fu_fuse_act)) ||
           for_each_node(&f, cancel);
  free(f.conv_from);
  free(f.conv_to);
  if (rc) return -1;
  annotate(g);
  ir_pass_dce(g); /* the DQs the patterns bypassed must not count as readers */
  if (for_each_node(&f, fu_merge_act)) return -1;
  if (!(flags & FUSE_NO_RESIDUAL) && for_each_node(&f, fuse_residual)) return -1;
  if (for_each_node(&f, q_to_rows)) return -1;
  ir_pass_dce(g);
  return ir_pass_shape_infer(g, err) || ir_verify(g, err) ? -1 : 0;
}
