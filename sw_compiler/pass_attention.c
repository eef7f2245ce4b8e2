/*
 * pass_attention.c - matmuls of two activations (attention's scores
 * Q x K^T and its weighted values P x V) onto the accelerator, one job per
 * head, each reading and writing its head's slices in place.
 *
 * Two rewrites, around quantization:
 *
 *   1. before calibration (ir_pass_split_act_matmul): a float MatMul whose
 *      operands are both activations, a [..., M, K] by a [..., K, N] batch
 *      (the heads: [H, S, S] or [1, H, S, S]), becomes H 2-D MatMuls of
 *      row slices (a Slice along axis 0) of the operands viewed as
 *      [H * M, K] and [H * K, N], whose results a Concat along the rows
 *      and a Reshape (a view) put back; when the result is only put side
 *      by side (Transpose [.., H, M, N] -> [.., M, H, N], Reshape to
 *      [.., M, H * N]) the Concat is along the columns and replaces those
 *      two; when the first operand is x [.., M, H * K] split into heads
 *      (Reshape, Transpose [.., M, H, K] -> [.., H, M, K]) its heads are
 *      column slices of x as [M, H * K] (both when K or N is whole channel
 *      blocks, so a head's columns are whole DRAM rows).  torch's
 *      nn.MultiheadAttention form is one of these: x is a Slice of the
 *      last axis of one in_proj result [M, 3D] (Q's columns [0, D), K's
 *      [D, 2D), V's [2D, 3D)), so Q's heads are column slices of that
 *      result from its first column on; and a Div or Mul of Q by a
 *      constant (1/sqrt(d)) moves onto each head's product (the same
 *      constant: scores / c), where fusion folds it into the
 *      requantization.  The quantizer gives each stacked operand symmetric
 *      int8 parameters (zero point 0: the lowering cannot correct the bias
 *      by the runtime operand's sums) and each head's slice the same ones,
 *      so a head's int8 operand is rows of one quantized tensor; a stack
 *      that only moves the elements of a projection's result (K's and V's
 *      heads: Slices, Reshapes, Transposes) shares that result's
 *      parameters (ir_head_stack_source); the heads' results share the
 *      Concat's;
 *   2. after fusion (ir_pass_fuse_act_matmul): DQ(a) x DQ(b) -> Q becomes a
 *      loom.QGemm whose weight operand is b itself, an activation, in the
 *      WGT row layout: b [K, N] int8 padded to whole blocks of N (a Concat
 *      of zeros), viewed as [K, N/B, B], transposed to [N/B, K, B] and
 *      viewed as [N/B, K, B, 1], whose NCHWc layout is exactly the WGT rows
 *      [out block][in block] (lower.h, LOWER_CONV_RUNTIME_WGT).  For heads
 *      this is done once on the stacked int8 operand ([H * N/B, K, B, 1])
 *      and each head's weights are its images of it (a row Slice); a
 *      stack sharing its projection's parameters is made from the
 *      projection's int8 result by the same moves in int8 (int8_moves: no
 *      DequantizeLinear, float Transpose or QuantizeLinear), and when those
 *      moves are the heads' split (K's [M, H, d] -> [H, d, M], V's
 *      -> [H, M, d]) the heads' Transpose and the layout's are one
 *      (heads_wgt_rows).  K's WGT rows, when its heads are whole blocks
 *      and its int8 result comes from a projection job (a QGemm with
 *      constant weights: BERT's own K projection, or the in_proj's
 *      columns [D, 2D)), are instead [S/B, D, B, 1] (K [S, D] viewed
 *      [S/B, B, D, 1], Transpose 0 2 1 3), whose NCHWc is what that job
 *      stores itself (ir_wgt_rows_store, lower_program_wgt_rows), a head's
 *      rows its channels [h*d, (h+1)*d) (a Slice along axis 1, read in
 *      place with rows D*B bytes apart).  V's, under the same conditions,
 *      are made the same way from V [S, D] (BERT's V projection, the
 *      in_proj's columns [2D, 3D)): a head's rows are then V_h's own,
 *      [S/B][d/B] blocks [token][channel], and its P x V QGemm is marked
 *      wgt_t, so the job loads them with wgt_transpose (lower.h,
 *      LOWER_CONV_RUNTIME_WGT_T).  The job loads
 *      them by DMA at run time; the requantization multiplier is
 *      s_a * s_b / s_y for every output, divided (multiplied) by the
 *      scale's constant c when the product is scaled: computed in double
 *      from the float32 scales and c, then rounded once to the 31-bit
 *      multiplier and shift (quant_multipliers: relative error at most
 *      2^-31), where a separate scale would requantize twice.
 *
 * The partition makes the row slices views and the Concat of the heads'
 * results an in-place one (pass_partition.c); compile_loom.c moves each
 * job onto its slices (lower_program_rebase), so no host Gather or Concat
 * copy is left.  A MatMul the second rewrite cannot take (uint8 operands,
 * a nonzero zero point, a result not quantized) keeps its Q/DQ and runs on
 * the host kernels in float, its slices copies.  K's and V's projection
 * jobs store their WGT rows (their STOREs rewritten, the in_proj's Q
 * columns where they were and K's rows, then V's, after them in the same
 * buffer; the padding tokens' rows never written, so zero as the runtime
 * fills its buffers: they meet the scores' padded output lanes and, for
 * V, P's padded token lanes, which must meet zeros), so neither has a
 * host step; ir_wgt_rows_store checks the moves between are K's (V's)
 * alone and no other reader reads their columns.  What stays on the host
 * per attention: K's or V's WGT layout in int8 (a Slice of the in_proj
 * result, one Transpose and a repack) when their heads are not whole
 * blocks or they do not come from a projection job; the Softmax
 * (QSOFTMAX).  A job computing V^T instead was measured and not chosen
 * (docs/lowering.md, "V's WGT rows as V^T"): the transposed load stores
 * V's rows with the projection that exists.
 */
#include "sw_compiler/pass_fuse.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define SPLIT_MAX 256 /* heads one batched matmul may become */
#define IR_MAX_INPUTS_MOVE 5 /* operands of a moving node (Slice's) */

static int is_activation(const struct ir_graph *g, int t) {
  return t >= 0 && !g->tensors[t].data && g->tensors[t].dtype == IR_DT_F32 && ir_shape_known(&g->tensors[t]);
}

/* The batch of a [..., M, K] x [..., K, N] product: the leading dims'
 * product when both operands have the same ones. */
static int64_t batch_of(const struct ir_tensor *a, const struct ir_tensor *b) {
  int64_t h = 1;
  for (int d = 0; d + 2 < a->rank; d++) {
    if (a->dims[d] != b->dims[d]) return -1;
    h *= a->dims[d];
  }
  return h;
}

/* Node i: a float MatMul of two activations, 2-D (batched: rank > 2, the
 * same leading dims, at most SPLIT_MAX matrices). */
static int act_matmul(const struct ir_graph *g, int i, int batched) {
  const struct ir_node *n = &g->nodes[i];
  if (n->dead || n->op != IR_OP_MATMUL || !is_activation(g, n->in[0]) || !is_activation(g, n->in[1])) return 0;
  const struct ir_tensor *a = &g->tensors[n->in[0]], *b = &g->tensors[n->in[1]];
  if (a->rank != b->rank || (a->rank == 2) == batched) return 0;
  int64_t h = batch_of(a, b);
  return !batched || (h >= 1 && h <= SPLIT_MAX);
}

/* t [..., R, C] as the rows [H * R, C] (a view), inserted at *pos. */
static int as_rows(struct ir_graph *g, int t, int64_t h, int *pos) {
  const struct ir_tensor *x = &g->tensors[t];
  int64_t d[2] = {h * x->dims[x->rank - 2], x->dims[x->rank - 1]}, r = 2;
  enum ir_dtype dt = x->dtype;
  int in[2] = {t, ir_const_add(g, NULL, IR_DT_I64, 1, &r, d)}, y = ir_tensor_add(g, NULL, dt, 2, d);
  ir_node_insert(g, (*pos)++, IR_OP_RESHAPE, NULL, 2, in, 1, &y);
  return y;
}

/* Rows [at, at + R) of t along `axis` (0: rows, 1: columns of a rank-2
 * t): a Slice, inserted at *pos. */
static int head_slice(struct ir_graph *g, int t, int64_t at, int64_t R, int64_t axis, int *pos) {
  const struct ir_tensor *x = &g->tensors[t];
  int64_t d[IR_MAX_RANK], one = 1, se[2] = {at, at + R};
  int rank = x->rank;
  enum ir_dtype dt = x->dtype;
  memcpy(d, x->dims, sizeof d);
  d[axis] = R;
  int in[4] = {t, ir_const_add(g, NULL, IR_DT_I64, 1, &one, &se[0]), ir_const_add(g, NULL, IR_DT_I64, 1, &one, &se[1]),
               ir_const_add(g, NULL, IR_DT_I64, 1, &one, &axis)};
  int y = ir_tensor_add(g, NULL, dt, rank, d), node = ir_node_insert(g, (*pos)++, IR_OP_ONNX, NULL, 4, in, 1, &y);
  g->nodes[node].type = ir_xstrdup("Slice");
  g->nodes[node].opset = 13;
  return y;
}

static int64_t const_i64(const struct ir_graph *g, int t) {
  if (t < 0) return INT64_MIN;
  const struct ir_tensor *x = &g->tensors[t];
  if (!x->data || ir_tensor_numel(x) != 1) return INT64_MIN;
  return x->dtype == IR_DT_I64 ? *(const int64_t *)x->data : x->dtype == IR_DT_I32 ? *(const int32_t *)x->data : INT64_MIN;
}

int ir_head_slice_of(const struct ir_graph *g, int t, int64_t *start, int *axis) {
  int i = t >= 0 ? ir_producer(g, t) : -1;
  if (i < 0) return -1;
  const struct ir_node *n = &g->nodes[i];
  int64_t a = n->n_in == 4 ? const_i64(g, n->in[3]) : -1;
  if (n->op != IR_OP_ONNX || strcmp(n->type, "Slice") || n->n_in != 4 || (a != 0 && a != 1)) return -1;
  const struct ir_tensor *x = &g->tensors[n->in[0]];
  int64_t s = const_i64(g, n->in[1]), e = const_i64(g, n->in[2]);
  if (!ir_shape_known(x) || (a == 1 && x->rank != 2 && x->rank != 4) || s < 0 || e <= s || e > x->dims[a] ||
      g->tensors[t].dims[a] != e - s)
    return -1;
  if (start) *start = s;
  if (axis) *axis = (int)a;
  return n->in[0];
}

/* Whether node tr is a Transpose of t [..., H, M, K] (or of its result of
 * that shape) that swaps H and M, every leading dim 1: heads <-> tokens. */
static int swaps_heads(const struct ir_graph *g, int tr, const struct ir_tensor *t) {
  const int64_t *perm;
  int r = t->rank;
  if (r < 3 || tr < 0 || g->nodes[tr].op != IR_OP_TRANSPOSE || ir_attr_ints(&g->nodes[tr], "perm", &perm) != r) return 0;
  for (int d = 0; d < r; d++)
    if (perm[d] != (d == r - 3 ? r - 2 : d == r - 2 ? r - 3 : d) || (d < r - 3 && t->dims[d] != 1)) return 0;
  return 1;
}

/* Whether y [..., H, M, N] is only read as Transpose(y) swapping H and M
 * (the heads back beside each other), then Reshape to [..., M, H * N]
 * (leading dims 1): the heads' results side by side, a Concat along the
 * columns.  Returns that Reshape node, else -1. */
static int heads_side_by_side(const struct ir_graph *g, int y) {
  const struct ir_tensor *t = &g->tensors[y];
  int r = t->rank, tr = ir_sole_reader(g, y);
  if (!swaps_heads(g, tr, t)) return -1;
  int rs = ir_sole_reader(g, g->nodes[tr].out[0]);
  if (rs < 0 || g->nodes[rs].op != IR_OP_RESHAPE) return -1;
  const struct ir_tensor *z = &g->tensors[g->nodes[rs].out[0]];
  if (!ir_shape_known(z) || z->dims[z->rank - 1] != t->dims[r - 3] * t->dims[r - 1] ||
      ir_tensor_numel(z) != ir_tensor_numel(t))
    return -1;
  return rs;
}

/* The scale node reading y alone: a Div or Mul of y by a positive float
 * scalar constant (attention's 1/sqrt(d)), its factor in *c and whether
 * it divides in *div; else -1. */
static int scale_node(const struct ir_graph *g, int y, double *c, int *div) {
  int u = y >= 0 ? ir_sole_reader(g, y) : -1;
  if (u < 0) return -1;
  const struct ir_node *n = &g->nodes[u];
  int d = n->op == IR_OP_ONNX && n->type && !strcmp(n->type, "Div");
  if ((!d && n->op != IR_OP_MUL) || n->n_in != 2 || n->n_out != 1) return -1;
  int k = n->in[0] == y ? 1 : 0, x = n->in[k];
  if (n->in[1 - k] != y || (d && k != 1) || !g->tensors[x].data || g->tensors[x].dtype != IR_DT_F32 ||
      ir_tensor_numel(&g->tensors[x]) != 1)
    return -1;
  double v = *(const float *)g->tensors[x].data;
  if (!(v > 0) || !isfinite(v)) return -1;
  if (c) *c = v;
  if (div) *div = d;
  return u;
}

int ir_act_matmul_scale(const struct ir_graph *g, int y, double *c, int *div) { return scale_node(g, y, c, div); }

int ir_is_scores_scale(const struct ir_graph *g, int node) {
  const struct ir_node *n = &g->nodes[node];
  for (int k = 0; k < n->n_in && k < 2 && !n->dead; k++) {
    int p = ir_producer(g, n->in[k]);
    if (p >= 0 && (act_matmul(g, p, 0) || act_matmul(g, p, 1)) && scale_node(g, n->in[k], NULL, NULL) == node) return 1;
  }
  return 0;
}

int ir_plain_slice(const struct ir_graph *g, int i, int64_t *start) {
  const struct ir_node *n = &g->nodes[i];
  if (n->op != IR_OP_ONNX || strcmp(n->type, "Slice") || n->n_in < 4 || n->n_in > 5 ||
      (n->n_in == 5 && const_i64(g, n->in[4]) != 1))
    return -1;
  const struct ir_tensor *x = &g->tensors[n->in[0]], *y = &g->tensors[n->out[0]];
  int64_t s = const_i64(g, n->in[1]), e = const_i64(g, n->in[2]), a = const_i64(g, n->in[3]);
  if (!ir_shape_known(x) || !ir_shape_known(y) || a < -x->rank || a >= x->rank) return -1;
  if (a < 0) a += x->rank;
  if (s < 0 || e <= s || e > x->dims[a] || y->dims[a] != e - s) return -1;
  *start = s;
  return (int)a;
}

/* t [..., M, C] (leading dims 1) seen through its views back to a 2-D
 * [M, C]: that tensor, else t. */
static int two_d(const struct ir_graph *g, int t) {
  int v = ir_producer(g, t);
  const struct ir_tensor *x = &g->tensors[t];
  if (v >= 0 && g->nodes[v].op == IR_OP_RESHAPE && g->tensors[g->nodes[v].in[0]].rank == 2 &&
      g->tensors[g->nodes[v].in[0]].dims[1] == x->dims[x->rank - 1] &&
      ir_tensor_numel(&g->tensors[g->nodes[v].in[0]]) == ir_tensor_numel(x))
    return g->nodes[v].in[0];
  return t;
}

/* Whether a [..., H, M, K] is Transpose(Reshape(x [..., M, H * K]))
 * swapping H and M (leading dims 1): the heads' columns of x, which a
 * head reads in place (a column slice of x as [M, H * K]).  Returns x,
 * the 2-D result x views when there is one (no repacks).  torch's
 * nn.MultiheadAttention form is accepted too: x a Slice of the last axis
 * of an in_proj result [M, 3 * H * K] (seen as [M, 1, 3 * H * K]), where
 * x is that result and *at the Slice's first column (Q's 0, K's H * K,
 * V's 2 * H * K); and a scale of a (a Div or Mul by a constant, Q's
 * 1/sqrt(d)) before it, whose node goes in *scale (else -1). */
static int heads_of_columns(const struct ir_graph *g, int a, int64_t *at, int *scale) {
  *at = 0, *scale = -1;
  int p = ir_producer(g, a);
  if (p >= 0 && g->nodes[p].n_in == 2) {
    int x = g->nodes[p].in[g->tensors[g->nodes[p].in[0]].data ? 1 : 0];
    if (scale_node(g, x, NULL, NULL) == p) *scale = p, a = x;
  }
  const struct ir_tensor *t = &g->tensors[a];
  int r = t->rank, tr = ir_producer(g, a);
  if (!swaps_heads(g, tr, t)) return -1;
  int rs = ir_producer(g, g->nodes[tr].in[0]);
  if (rs < 0 || g->nodes[rs].op != IR_OP_RESHAPE) return -1;
  int x = g->nodes[rs].in[0];
  const struct ir_tensor *xt = &g->tensors[x];
  if (!ir_shape_known(xt) || xt->dtype != IR_DT_F32 || xt->data || xt->dims[xt->rank - 1] != t->dims[r - 3] * t->dims[r - 1] ||
      ir_tensor_numel(xt) != ir_tensor_numel(t))
    return -1;
  int sl = ir_producer(g, x);
  int64_t start;
  if (sl >= 0 && ir_plain_slice(g, sl, &start) == xt->rank - 1) { /* a column range of the in_proj result */
    int src = two_d(g, g->nodes[sl].in[0]);
    if (g->tensors[src].rank != 2 || g->tensors[src].dims[0] * xt->dims[xt->rank - 1] != ir_tensor_numel(xt)) return -1;
    *at = start;
    return src;
  }
  return two_d(g, x);
}

/* Node i moves elements without changing them: a view, a Transpose, a
 * Slice with constant bounds. */
static int permutes(const struct ir_graph *g, int i) {
  int64_t start;
  const struct ir_node *n = &g->nodes[i];
  return ir_op_is_view(n->op) || n->op == IR_OP_TRANSPOSE || ir_plain_slice(g, i, &start) >= 0;
}

int ir_head_stack_source(const struct ir_graph *g, int t) {
  int moved = 0, x = t;
  for (int i = ir_producer(g, x); i >= 0 && permutes(g, i) && is_activation(g, g->nodes[i].in[0]); i = ir_producer(g, x))
    moved |= !ir_op_is_view(g->nodes[i].op), x = g->nodes[i].in[0];
  return moved ? x : -1;
}

static void split(struct ir_graph *g, int i, int64_t block) {
  const struct ir_node *n = &g->nodes[i];
  int a = n->in[0], b = n->in[1], y = n->out[0], pos = i, yr = g->tensors[y].rank;
  int64_t H = batch_of(&g->tensors[a], &g->tensors[b]), ydims[IR_MAX_RANK];
  memcpy(ydims, g->tensors[y].dims, sizeof ydims);
  char *name = n->name ? ir_xstrdup(n->name) : NULL;
  int64_t M = g->tensors[a].dims[g->tensors[a].rank - 2], K = g->tensors[b].dims[g->tensors[b].rank - 2];
  int64_t N = g->tensors[b].dims[g->tensors[b].rank - 1];
  int64_t at;
  int sc, xa = heads_of_columns(g, a, &at, &sc), scale_in = -1, scale_op = 0, scale_opset = 0;
  if (xa >= 0 && (K % block || at % block)) xa = -1; /* a head's columns: whole blocks */
  if (xa < 0) sc = -1;
  int ysc = sc < 0 ? scale_node(g, y, NULL, NULL) : -1; /* or a scale of the scores themselves */
  if (sc >= 0 || ysc >= 0) { /* it moves onto each head's scores (the requantization takes it) */
    const struct ir_node *m = &g->nodes[sc >= 0 ? sc : ysc];
    scale_in = m->in[g->tensors[m->in[0]].data ? 0 : 1];
    scale_op = m->op, scale_opset = m->opset;
  }
  if (ysc >= 0) { /* the heads' Concat writes the scaled scores */
    g->nodes[ysc].dead = 1, y = g->nodes[ysc].out[0];
    memcpy(ydims, g->tensors[y].dims, sizeof ydims);
  }
  a = xa >= 0 ? as_rows(g, xa, 1, &pos) : as_rows(g, a, H, &pos); /* [M, C] or [H * M, K] */
  b = as_rows(g, b, H, &pos); /* node i is now at pos */
  g->nodes[pos].dead = 1, pos++;
  int *parts = ir_xmalloc((size_t)H * sizeof *parts);
  for (int64_t h = 0; h < H; h++) {
    int64_t yd[2] = {M, N};
    int in[2] = {xa >= 0 ? head_slice(g, a, at + h * K, K, 1, &pos) : head_slice(g, a, h * M, M, 0, &pos),
                 head_slice(g, b, h * K, K, 0, &pos)};
    parts[h] = ir_tensor_add(g, NULL, IR_DT_F32, 2, yd);
    ir_node_insert(g, pos++, IR_OP_MATMUL, name, 2, in, 1, &parts[h]);
    if (scale_in >= 0) { /* scores / c (or * c): the same constant, after the product */
      int sin[2] = {parts[h], scale_in}, s = ir_tensor_add(g, NULL, IR_DT_F32, 2, yd);
      int node = ir_node_insert(g, pos++, (enum ir_op_kind)scale_op, NULL, 2, sin, 1, &s);
      if (scale_op == IR_OP_ONNX) g->nodes[node].type = ir_xstrdup("Div"), g->nodes[node].opset = scale_opset;
      parts[h] = s;
    }
  }
  int rs = N % block ? -1 : heads_side_by_side(g, y), cols = rs >= 0;
  if (cols) { /* the Transpose and the Reshape after it become the Concat's */
    const struct ir_tensor *z = &g->tensors[g->nodes[rs].out[0]];
    yr = z->rank, y = g->nodes[rs].out[0];
    memcpy(ydims, z->dims, sizeof ydims);
    g->nodes[rs].dead = 1;
    g->nodes[ir_producer(g, g->nodes[rs].in[0])].dead = 1;
    int v = ir_sole_reader(g, y); /* read as a 2-D [M, H * N] view (a projection's input): that view */
    if (v >= 0 && g->nodes[v].op == IR_OP_RESHAPE && g->tensors[g->nodes[v].out[0]].rank == 2 &&
        g->tensors[g->nodes[v].out[0]].dims[1] == H * N) {
      g->nodes[v].dead = 1, y = g->nodes[v].out[0], yr = 2;
      memcpy(ydims, g->tensors[y].dims, 2 * sizeof ydims[0]);
    }
  }
  int64_t cd[2] = {cols ? M : H * M, cols ? H * N : N}, sd[1] = {yr};
  int cat = ir_tensor_add(g, NULL, IR_DT_F32, 2, cd), rin[2] = {cat, ir_const_add(g, NULL, IR_DT_I64, 1, sd, ydims)};
  ir_attr_set_int(g, ir_node_insert(g, pos++, IR_OP_CONCAT, NULL, (int)H, parts, 1, &cat), "axis", cols);
  ir_node_insert(g, pos, IR_OP_RESHAPE, NULL, 2, rin, 1, &y);
  free(parts);
  free(name);
}

int ir_pass_split_act_matmul(struct ir_graph *g, int block, struct ir_error *err) {
  for (int i = 0; i < g->n_nodes; i++)
    if (act_matmul(g, i, 1)) split(g, i, block);
  ir_pass_dce(g);
  return ir_pass_shape_infer(g, err);
}

int ir_is_act_matmul(const struct ir_graph *g, int i) { return act_matmul(g, i, 0); }

/* ---- after fusion: DQ(a) x DQ(b) -> Q as a QGemm with runtime weights ---- */

struct wcache { /* stacked operands whose WGT rows are built: src[k] -> rows[k], a head's along axis[k] */
  int *src, *rows, *axis, n;
};

static int node_at(struct ir_graph *g, int *pos, enum ir_op_kind op, int n_in, const int *in, int y) {
  return ir_node_insert(g, (*pos)++, op, NULL, n_in, in, 1, &y);
}

static int reshaped(struct ir_graph *g, int t, int rank, const int64_t *dims, int *pos) {
  int64_t r = rank;
  int in[2] = {t, ir_const_add(g, NULL, IR_DT_I64, 1, &r, dims)}, y = ir_tensor_add(g, NULL, IR_DT_I8, rank, dims);
  node_at(g, pos, IR_OP_RESHAPE, 2, in, y);
  return y;
}

/* b [H * K, N] int8 (H heads' [K, N] stacked) -> [H * ceil(N/B), K, B, 1],
 * the WGT rows of each b_h^T one after the other: head h's are images
 * [h * ceil(N/B), (h + 1) * ceil(N/B)), a contiguous range of the NCHWc
 * bytes. */
static int wgt_rows(struct ir_graph *g, int b, int64_t H, int64_t block, int *pos) {
  int64_t K = g->tensors[b].dims[0] / H, N = g->tensors[b].dims[1], nb = (N + block - 1) / block;
  if (nb * block != N) { /* zero columns up to whole blocks */
    int64_t zd[2] = {H * K, nb * block - N}, pd[2] = {H * K, nb * block};
    int in[2] = {b, ir_const_add(g, NULL, IR_DT_I8, 2, zd, NULL)}, y = ir_tensor_add(g, NULL, IR_DT_I8, 2, pd);
    ir_attr_set_int(g, node_at(g, pos, IR_OP_CONCAT, 2, in, y), "axis", 1);
    b = y;
  }
  int64_t v[4] = {H, K, nb, block}, td[4] = {H, nb, K, block}, perm[4] = {0, 2, 1, 3}, wd[4] = {H * nb, K, block, 1};
  int x = reshaped(g, b, 4, v, pos), t = ir_tensor_add(g, NULL, IR_DT_I8, 4, td);
  ir_attr_set_ints(g, node_at(g, pos, IR_OP_TRANSPOSE, 1, &x, t), "perm", 4, perm);
  return reshaped(g, t, 4, wd, pos);
}

#define CHAIN_MAX 8 /* element moves between a projection and its heads */

/* b: an int8 stack of heads quantized (QuantizeLinear, parameters pb) from
 * elements moved (views, Transposes, Slices) out of DQ(x8) with the same
 * parameters (K's and V's heads of their projection's result,
 * ir_head_stack_source): those moves, nearest b first, into chain; x8 in
 * *x8.  Returns how many (0: b is not such a stack). */
static int float_moves(const struct ir_graph *g, int b, const struct qparam *pb, int *chain, int *x8) {
  int q = ir_producer(g, b), n = 0;
  struct qparam p;
  if (q < 0 || g->nodes[q].op != IR_OP_QUANTIZELINEAR || !fu_scalar_qparams(g, &g->nodes[q], &p) || !fu_same_qparam(&p, pb))
    return 0;
  for (int t = g->nodes[q].in[0]; !fu_dq_of(g, t, x8, &p); t = g->nodes[chain[n - 1]].in[0]) {
    int i = ir_producer(g, t);
    if (i < 0 || n == CHAIN_MAX || !permutes(g, i)) return 0;
    chain[n++] = i;
  }
  return fu_same_qparam(&p, pb) ? n : 0;
}

/* The moves chain[n - 1], ..., chain[0] again on int8 x8, inserted at
 * *pos: the last result (x8 when n is 0). */
static int int8_moves(struct ir_graph *g, const int *chain, int n, int x8, const struct qparam *pb, int *pos) {
  for (int k = n - 1; k >= 0; k--) {
    const struct ir_tensor *y = &g->tensors[g->nodes[chain[k]].out[0]];
    int in[IR_MAX_INPUTS_MOVE], n_in = g->nodes[chain[k]].n_in, t = ir_tensor_add(g, NULL, IR_DT_I8, y->rank, y->dims);
    memcpy(in, g->nodes[chain[k]].in, (size_t)n_in * sizeof in[0]);
    in[0] = x8;
    int node = ir_node_insert(g, (*pos)++, g->nodes[chain[k]].op, NULL, n_in, in, 1, &t);
    const struct ir_node *from = &g->nodes[chain[k]];
    if (from->type) g->nodes[node].type = ir_xstrdup(from->type);
    g->nodes[node].opset = from->opset;
    ir_attrs_copy(g, node, from);
    x8 = t;
  }
  ir_quant_set(g, x8, -1, 1, &pb->scale, &pb->zp);
  return x8;
}

/* Transpose node tr of [..., M, H, d] (leading dims 1): 1 when it gives
 * [..., H, M, d] (V's heads), 2 when [..., H, d, M] (K's heads
 * transposed), else 0. */
static int heads_form(const struct ir_graph *g, int tr) {
  const int64_t *perm;
  const struct ir_tensor *x = &g->tensors[g->nodes[tr].in[0]];
  int r = x->rank;
  if (r < 3 || g->nodes[tr].op != IR_OP_TRANSPOSE || ir_attr_ints(&g->nodes[tr], "perm", &perm) != r) return 0;
  for (int d = 0; d < r - 3; d++)
    if (perm[d] != d || x->dims[d] != 1) return 0;
  if (perm[r - 3] != r - 2) return 0;
  return perm[r - 2] == r - 3 && perm[r - 1] == r - 1 ? 1 : perm[r - 2] == r - 1 && perm[r - 1] == r - 3 ? 2 : 0;
}

/* The QGemm with constant weights (a projection's job) whose result t is,
 * through views; else -1. */
static int projection_of(const struct ir_graph *g, int t) {
  for (int i = ir_producer(g, t); i >= 0; i = ir_producer(g, t)) {
    const struct ir_node *n = &g->nodes[i];
    if (n->op == IR_OP_QGEMM) return g->tensors[n->in[1]].data ? i : -1;
    if (!ir_op_is_view(n->op)) return -1;
    t = n->in[0];
  }
  return -1;
}

/* The WGT rows of all heads straight from the int8 columns the heads are
 * cut from, one Transpose instead of the heads' and the layout's: when
 * stack b [H * K, N] is Reshape(Transpose(Reshape(x [..., M, H * d])))
 * with V's form (K = M, N = d, whole blocks) x [M, H*d] viewed as
 * [M, H*d/B, B] goes to [H*d/B, M, B]; with K's (K = d, N = M) x padded to
 * whole blocks of rows, viewed as [M/B, B, H, d], goes to [H, M/B, d, B].
 * Either is [H * ceil(N/B), K, B, 1], wgt_rows' layout, a head's rows
 * along axis 0 (*axis = 0).  With K's form, d whole blocks and x a
 * projection job's result, x viewed as [M/B, B, H*d, 1] goes to
 * [M/B, H*d, B, 1] instead, whose NCHWc the job stores itself
 * (ir_wgt_rows_store: no host step), a head's rows its channels
 * [h*d, (h+1)*d) (*axis = 1); so are V's with V's form (*axis = 2: a
 * head's rows are then b_h's own, [M/B][d/B], read transposed).  Else -1. */
static int heads_wgt_rows(struct ir_graph *g, int b, const struct qparam *pb, int64_t block, int *pos, int *axis) {
  *axis = 0;
  int chain[CHAIN_MAX], x8, n = float_moves(g, b, pb, chain, &x8);
  int form = n >= 2 && g->nodes[chain[0]].op == IR_OP_RESHAPE ? heads_form(g, chain[1]) : 0;
  if (!form) return -1;
  int below = n > 2 && g->nodes[chain[2]].op == IR_OP_RESHAPE ? 3 : 2;
  const struct ir_tensor *h3 = &g->tensors[g->nodes[chain[1]].in[0]];
  int r = h3->rank;
  int64_t M = h3->dims[r - 3], H = h3->dims[r - 2], d = h3->dims[r - 1], x2d[2] = {M, H * d};
  const struct ir_tensor *st = &g->tensors[g->nodes[chain[0]].out[0]]; /* the stack: [H * K, N] */
  if ((form == 1 && d % block) || st->rank != 2 || st->dims[0] != H * (form == 1 ? M : d) || st->dims[1] != (form == 1 ? d : M))
    return -1;
  /* the heads' Transpose reads [..., M, H, d]: the int8 below it (a view away) as [M, H * d] */
  int x = reshaped(g, int8_moves(g, chain + below, n - below, x8, pb, pos), 2, x2d, pos);
  int stored = d % block == 0 && projection_of(g, x8) >= 0; /* the projection's job stores the rows */
  if (form == 1 && !stored) {
    int64_t v[3] = {M, H * d / block, block}, td[3] = {H * d / block, M, block}, perm[3] = {1, 0, 2}, wd[4] = {H * d / block, M, block, 1};
    int t = ir_tensor_add(g, NULL, IR_DT_I8, 3, td);
    ir_attr_set_ints(g, node_at(g, pos, IR_OP_TRANSPOSE, 1, (int[]){reshaped(g, x, 3, v, pos)}, t), "perm", 3, perm);
    return reshaped(g, t, 4, wd, pos);
  }
  int64_t nb = (M + block - 1) / block;
  if (nb * block != M) { /* zero rows up to whole blocks of tokens */
    int64_t zd[2] = {nb * block - M, H * d}, pd[2] = {nb * block, H * d};
    int in[2] = {x, ir_const_add(g, NULL, IR_DT_I8, 2, zd, NULL)}, y = ir_tensor_add(g, NULL, IR_DT_I8, 2, pd);
    ir_attr_set_int(g, node_at(g, pos, IR_OP_CONCAT, 2, in, y), "axis", 0);
    x = y;
  }
  if (stored) { /* K's rows, or V's read transposed (*axis 2) */
    int64_t v[4] = {nb, block, H * d, 1}, td[4] = {nb, H * d, block, 1}, perm[4] = {0, 2, 1, 3};
    int t = ir_tensor_add(g, NULL, IR_DT_I8, 4, td);
    ir_attr_set_ints(g, node_at(g, pos, IR_OP_TRANSPOSE, 1, (int[]){reshaped(g, x, 4, v, pos)}, t), "perm", 4, perm);
    *axis = form == 1 ? 2 : 1;
    return t;
  }
  int64_t v[4] = {nb, block, H, d}, td[4] = {H, nb, d, block}, perm[4] = {2, 0, 3, 1}, wd[4] = {H * nb, d, block, 1};
  int t = ir_tensor_add(g, NULL, IR_DT_I8, 4, td);
  ir_attr_set_ints(g, node_at(g, pos, IR_OP_TRANSPOSE, 1, (int[]){reshaped(g, x, 4, v, pos)}, t), "perm", 4, perm);
  return reshaped(g, t, 4, wd, pos);
}

/* The int8 stack b as it is, or moved again from its projection's int8
 * result (float_moves), for wgt_rows. */
static int int8_stack(struct ir_graph *g, int b, const struct qparam *pb, int *pos) {
  int chain[CHAIN_MAX], x8, n = float_moves(g, b, pb, chain, &x8);
  return n ? int8_moves(g, chain, n, x8, pb, pos) : b;
}

/* The runtime weights of matmul operand b8 ([K, N] int8): the WGT rows of
 * its head when b8 is a head's rows of a stacked operand (built once for
 * all heads, the first time one is asked for), else of b8 alone.  *trans:
 * whether they are those of b8 itself ([K/B][N/B], V's rows stored by its
 * projection's job), which the job reads transposed (LOWER_CONV_RUNTIME_WGT_T). */
static int runtime_wgt(struct fctx *f, struct wcache *wc, int b8, const struct qparam *pb, int64_t block, int *pos,
                       int *trans) {
  struct ir_graph *g = f->g;
  *trans = 0;
  int64_t start, K = g->tensors[b8].dims[0], nb = (g->tensors[b8].dims[1] + block - 1) / block;
  int axis, src = ir_head_slice_of(g, b8, &start, &axis), w = -1, along = 0;
  if (src < 0 || axis || g->tensors[src].rank != 2 || start % K || g->tensors[src].dims[0] % K) {
    w = wgt_rows(g, int8_stack(g, b8, pb, pos), 1, block, pos);
    ir_quant_set(g, w, -1, 1, &pb->scale, &pb->zp);
    return w;
  }
  for (int k = 0; k < wc->n && w < 0; k++)
    if (wc->src[k] == src) w = wc->rows[k], along = wc->axis[k];
  if (w < 0) {
    w = heads_wgt_rows(g, src, pb, block, pos, &along);
    if (w < 0) w = wgt_rows(g, int8_stack(g, src, pb, pos), g->tensors[src].dims[0] / K, block, pos);
    ir_quant_set(g, w, -1, 1, &pb->scale, &pb->zp);
    wc->src = ir_xrealloc(wc->src, (size_t)(wc->n + 1) * sizeof *wc->src);
    wc->rows = ir_xrealloc(wc->rows, (size_t)(wc->n + 1) * sizeof *wc->rows);
    wc->axis = ir_xrealloc(wc->axis, (size_t)(wc->n + 1) * sizeof *wc->axis);
    wc->src[wc->n] = src, wc->rows[wc->n] = w, wc->axis[wc->n++] = along;
  }
  int64_t N = g->tensors[b8].dims[1];
  int y = along == 2 ? head_slice(g, w, start / K * N, N, 1, pos) /* V's channels of the rows, read transposed */
          : along ? head_slice(g, w, start, K, 1, pos) : head_slice(g, w, start / K * nb, nb, 0, pos);
  ir_quant_set(g, y, -1, 1, &pb->scale, &pb->zp);
  *trans = along == 2;
  return y;
}

static int fuse(struct fctx *f, struct wcache *wc, int i, int64_t block) {
  struct ir_graph *g = f->g;
  struct qparam pa, pb;
  struct out_chain oc;
  int a8, b8;
  double c = 1;
  int div = 0, sc = ir_is_act_matmul(g, i) ? scale_node(g, g->nodes[i].out[0], &c, &div) : -1;
  if (!ir_is_act_matmul(g, i) || !fu_dq_of(g, g->nodes[i].in[0], &a8, &pa) || !fu_dq_of(g, g->nodes[i].in[1], &b8, &pb) ||
      pa.dt != IR_DT_I8 || pb.dt != IR_DT_I8 || pa.zp || pb.zp ||
      !fu_match_output(g, sc >= 0 ? g->nodes[sc].out[0] : g->nodes[i].out[0], 0, 0, &oc) || oc.p.dt != IR_DT_I8)
    return 0;
  int64_t N = g->tensors[b8].dims[1];
  double real = (double)pa.scale * pb.scale / oc.p.scale; /* the scale: exact in double, rounded once below */
  real = div ? real / c : real * c;
  int32_t *mult = ir_xmalloc((size_t)N * sizeof *mult), *zeros = ir_xcalloc((size_t)N, sizeof *zeros);
  uint32_t shift;
  if (quant_multipliers(&real, 1, mult, &shift)) {
    free(mult), free(zeros);
    return 0; /* an extreme scale ratio: stays on the host */
  }
  for (int64_t o = 1; o < N; o++) mult[o] = mult[0];
  char *name = g->nodes[i].name ? ir_xstrdup(g->nodes[i].name) : NULL;
  fu_kill_chain(g, i, &oc);
  if (sc >= 0) g->nodes[sc].dead = 1;
  int trans, pos = oc.q, w = runtime_wgt(f, wc, b8, &pb, block, &pos, &trans);
  int64_t od[1] = {N};
  int in[4] = {a8, w, ir_const_add(g, NULL, IR_DT_I32, 1, od, zeros), ir_const_add(g, NULL, IR_DT_I32, 1, od, mult)};
  int y = fu_result_of(g, &oc), node = ir_node_insert(g, pos, IR_OP_QGEMM, name, 4, in, 1, &y);
  fu_set_req_attrs(g, node, 0, &oc, shift);
  if (trans) ir_attr_set_int(g, node, "wgt_t", 1); /* its rows are [K/B][N/B]: read transposed (lower.h) */
  free(mult), free(zeros), free(name);
  return 1;
}

int ir_pass_fuse_act_matmul(struct ir_graph *g, int block, struct ir_error *err) {
  struct fctx f = {.g = g, .err = err};
  struct wcache wc = {0};
  int n = 0;
  for (int i = 0; i < g->n_nodes; i++)
    if (!g->nodes[i].dead) n += fuse(&f, &wc, i, block);
  free(wc.src), free(wc.rows), free(wc.axis);
  free(f.conv_from);
  free(f.conv_to);
  if (!n) return 0;
  ir_pass_dce(g);
  return ir_pass_shape_infer(g, err) || ir_verify(g, err) ? -1 : 0;
}
