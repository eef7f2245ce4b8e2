/*
 * pass_shape_infer.c - dtype and shape inference.
 *
 * Walks the nodes in order and computes each result's dtype and dims from
 * its operands' types and the node's attributes, following the ONNX
 * operator definitions (opsets 11-17).  A result whose type is already
 * known (declared in IR text, or ONNX value_info) is checked against the
 * inferred one: a mismatch is an error, unknown dims are filled in.
 *
 * When an operand's shape is not known yet (say the shape operand of a
 * Reshape before constant folding), the node is skipped and its results
 * stay unknown: the pass manager alternates this pass with constant
 * folding until nothing changes.
 *
 * The pass also normalizes attributes later stages would otherwise each
 * have to interpret: auto_pad becomes explicit `pads`, Conv gets its
 * `kernel_shape` from the weight, and a legacy (opset < 13) Softmax whose
 * axis is the last one drops its `legacy_2d` flag (both forms agree then).
 * Everything the interpreter and the lowering rely on about operand shapes
 * (channels divisible by group, matching reduction sizes, ...) is checked
 * here, with the node named in the message.
 */
#include "sw_compiler/shape_infer.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* Conv, ConvInteger, QLinearConv: x at operand xi, w at wi. */
static int infer_conv(struct sctx *c, int xi, int wi, enum ir_dtype dt) {
  const struct ir_tensor *xt = si_known(c, xi), *wt = si_known(c, wi);
  if (!xt || !wt) return 0;
  struct shape x = si_shape_of(xt), w = si_shape_of(wt), y;
  if (x.rank < 3 || w.rank != x.rank) return ir_fail(c->err, c->g, c->node, "input rank %d and weight rank %d do not fit", x.rank, w.rank);
  if (!ir_attr_find(si_cur(c), "kernel_shape"))
    ir_attr_set_ints(c->g, c->node, "kernel_shape", w.rank - 2, w.d + 2);
  struct window win;
  if (si_read_window(c, &x, &win)) return -1;
  for (int i = 0; i < win.nsp; i++)
    if (win.k[i] != w.d[2 + i]) return ir_fail(c->err, c->g, c->node, "kernel_shape does not match the weight %%%s", wt->name);
  int64_t group = ir_attr_int(si_cur(c), "group", 1);
  if (group < 1 || x.d[1] % group || w.d[0] % group || x.d[1] / group != w.d[1])
    return ir_fail(c->err, c->g, c->node, "%lld input channels, weight %%%s with %lld per group, group %lld do not fit",
                (long long)x.d[1], wt->name, (long long)w.d[1], (long long)group);
  int bi = si_cur(c)->op == IR_OP_QLINEARCONV ? 8 : si_cur(c)->op == IR_OP_CONV ? 2 : -1;
  const struct ir_tensor *b = bi >= 0 ? si_known(c, bi) : NULL;
  if (b && (b->rank != 1 || b->dims[0] != w.d[0])) return ir_fail(c->err, c->g, c->node, "bias %%%s must have %lld entries", b->name, (long long)w.d[0]);
  if (si_window_out(c, &x, &win, &y)) return -1;
  y.d[0] = x.d[0];
  y.d[1] = w.d[0];
  return si_set_result(c, 0, dt, &y);
}

static int infer_pool(struct sctx *c) {
  const struct ir_tensor *xt = si_known(c, 0);
  if (!xt) return 0;
  struct shape x = si_shape_of(xt), y;
  if (x.rank < 3) return ir_fail(c->err, c->g, c->node, "input rank %d, needs at least 3", x.rank);
  struct window win;
  if (si_read_window(c, &x, &win) || si_window_out(c, &x, &win, &y)) return -1;
  y.d[0] = x.d[0];
  y.d[1] = x.d[1];
  return si_set_result(c, 0, xt->dtype, &y);
}

static int infer_global_pool(struct sctx *c) {
  const struct ir_tensor *xt = si_known(c, 0);
  if (!xt) return 0;
  struct shape y = si_shape_of(xt);
  for (int i = 2; i < y.rank; i++) y.d[i] = 1;
  return si_set_result(c, 0, xt->dtype, &y);
}

/* ---- broadcasting and matrix products ---- */

static int infer_binary(struct sctx *c) {
  const struct ir_tensor *a = si_known(c, 0), *b = si_known(c, 1);
  if (!a || !b) return 0;
  struct shape sa = si_shape_of(a), sb = si_shape_of(b), y;
  if (a->dtype != b->dtype) return ir_fail(c->err, c->g, c->node, "operand dtypes differ (%s, %s)", ir_dtype_name(a->dtype), ir_dtype_name(b->dtype));
  return si_broadcast(c, &sa, &sb, &y) ? -1 : si_set_result(c, 0, a->dtype, &y);
}

/* numpy matmul: 1-D operands are promoted and the extra dim dropped. */
static int infer_matmul(struct sctx *c, int ai, int bi, enum ir_dtype dt) {
  const struct ir_tensor *at = si_known(c, ai), *bt = si_known(c, bi);
  if (!at || !bt) return 0;
  struct shape a = si_shape_of(at), b = si_shape_of(bt), ba, bb, y;
  if (a.rank < 1 || b.rank < 1) return ir_fail(c->err, c->g, c->node, "operands must have rank at least 1");
  int64_t m = a.rank > 1 ? a.d[a.rank - 2] : 1, k = a.d[a.rank - 1];
  int64_t kb = b.rank > 1 ? b.d[b.rank - 2] : b.d[0], nn = b.rank > 1 ? b.d[b.rank - 1] : 1;
  if (k != kb) return ir_fail(c->err, c->g, c->node, "reduction sizes differ (%lld vs %lld)", (long long)k, (long long)kb);
  ba.rank = a.rank > 2 ? a.rank - 2 : 0;
  bb.rank = b.rank > 2 ? b.rank - 2 : 0;
  memcpy(ba.d, a.d, sizeof ba.d);
  memcpy(bb.d, b.d, sizeof bb.d);
  if (si_broadcast(c, &ba, &bb, &y)) return -1;
  if (a.rank > 1) y.d[y.rank++] = m;
  if (b.rank > 1) y.d[y.rank++] = nn;
  return si_set_result(c, 0, dt, &y);
}

static int infer_gemm(struct sctx *c) {
  const struct ir_tensor *at = si_known(c, 0), *bt = si_known(c, 1), *ct = si_known(c, 2);
  if (!at || !bt) return 0;
  if (at->rank != 2 || bt->rank != 2) return ir_fail(c->err, c->g, c->node, "operands must be matrices");
  int ta = ir_attr_int(si_cur(c), "transA", 0) != 0, tb = ir_attr_int(si_cur(c), "transB", 0) != 0;
  int64_t m = at->dims[ta], k = at->dims[!ta], kb = bt->dims[tb], nn = bt->dims[!tb];
  if (k != kb) return ir_fail(c->err, c->g, c->node, "reduction sizes differ (%lld vs %lld)", (long long)k, (long long)kb);
  struct shape y = {.rank = 2, .d = {m, nn}}, yc;
  if (ct) {
    struct shape sc = si_shape_of(ct);
    if (sc.rank > 2 || si_broadcast(c, &y, &sc, &yc) || yc.d[0] != m || (yc.rank == 2 && yc.d[1] != nn))
      return ir_fail(c->err, c->g, c->node, "C %%%s does not broadcast to [%lld,%lld]", ct->name, (long long)m, (long long)nn);
  }
  return si_set_result(c, 0, at->dtype, &y);
}

/* ---- shape manipulation ---- */

static int infer_flatten(struct sctx *c) {
  const struct ir_tensor *x = si_known(c, 0);
  if (!x) return 0;
  int64_t a = ir_attr_int(si_cur(c), "axis", 1);
  if (a < -x->rank || a > x->rank) return ir_fail(c->err, c->g, c->node, "axis %lld is out of range for rank %d", (long long)a, x->rank);
  int axis = (int)(a < 0 ? a + x->rank : a);
  struct shape y = {.rank = 2, .d = {1, 1}};
  for (int i = 0; i < x->rank; i++) y.d[i >= axis] *= x->dims[i];
  return si_set_result(c, 0, x->dtype, &y);
}

static int infer_reshape(struct sctx *c) {
  const struct ir_tensor *x = si_known(c, 0), *st = si_known(c, 1);
  if (!x || !st || !st->data) return 0;
  if (st->rank != 1 || st->dims[0] > IR_MAX_RANK) return ir_fail(c->err, c->g, c->node, "shape %%%s must be 1-D with at most %d entries", st->name, IR_MAX_RANK);
  const int64_t *req = st->data;
  int allowzero = ir_attr_int(si_cur(c), "allowzero", 0) != 0, infer = -1;
  struct shape y = {.rank = (int)st->dims[0]};
  int64_t known_prod = 1, total = ir_tensor_numel(x);
  for (int i = 0; i < y.rank; i++) {
    int64_t v = req[i];
    if (v == 0 && !allowzero) {
      if (i >= x->rank) return ir_fail(c->err, c->g, c->node, "shape entry %d is 0 but the input has rank %d", i, x->rank);
      v = x->dims[i];
    }
    if (v == -1 && infer < 0) { infer = i; v = 1; }
    else if (v < 0 || v > IR_MAX_DIM) return ir_fail(c->err, c->g, c->node, "shape entry %d is %lld", i, (long long)req[i]);
    y.d[i] = v;
    if (__builtin_mul_overflow(known_prod, v, &known_prod)) return ir_fail(c->err, c->g, c->node, "shape overflows");
  }
  if (infer >= 0) {
    if (known_prod == 0 || total % known_prod) return ir_fail(c->err, c->g, c->node, "cannot infer the -1 entry of the shape");
    y.d[infer] = total / known_prod;
  } else if (known_prod != total) {
    return ir_fail(c->err, c->g, c->node, "reshapes %lld elements into %lld", (long long)total, (long long)known_prod);
  }
  return si_set_result(c, 0, x->dtype, &y);
}

static int infer_transpose(struct sctx *c) {
  const struct ir_tensor *x = si_known(c, 0);
  if (!x) return 0;
  int64_t perm[IR_MAX_RANK];
  for (int i = 0; i < x->rank; i++) perm[i] = x->rank - 1 - i;
  if (ir_attr_find(si_cur(c), "perm") && si_ints_attr(c, "perm", x->rank, 0, perm)) return -1;
  struct shape y = {.rank = x->rank};
  unsigned seen = 0;
  for (int i = 0; i < x->rank; i++) {
    if (perm[i] < 0 || perm[i] >= x->rank || (seen >> perm[i]) & 1u) return ir_fail(c->err, c->g, c->node, "perm is not a permutation");
    seen |= 1u << perm[i];
    y.d[i] = x->dims[perm[i]];
  }
  return si_set_result(c, 0, x->dtype, &y);
}

static int infer_concat(struct sctx *c) {
  const struct ir_node *n = si_cur(c);
  const struct ir_tensor *x0 = si_known(c, 0);
  for (int k = 0; k < n->n_in; k++)
    if (!si_known(c, k)) return 0;
  int axis;
  if (si_axis_attr(c, "axis", 0, x0->rank, &axis)) return -1;
  struct shape y = si_shape_of(x0);
  for (int k = 1; k < n->n_in; k++) {
    const struct ir_tensor *x = si_known(c, k);
    if (x->rank != y.rank || x->dtype != x0->dtype) return ir_fail(c->err, c->g, c->node, "operand %d differs in rank or dtype", k);
    for (int i = 0; i < y.rank; i++)
      if (i != axis && x->dims[i] != y.d[i]) return ir_fail(c->err, c->g, c->node, "operand %d differs in dim %d", k, i);
    y.d[axis] += x->dims[axis];
  }
  return si_set_result(c, 0, x0->dtype, &y);
}

/* Reads and normalizes axes for (Un)squeeze; rank is the rank they index. */
static int read_axes(struct sctx *c, int rank, int64_t *axes, int *n, unsigned *mask) {
  const struct ir_attr *a = ir_attr_find(si_cur(c), "axes");
  *mask = 0;
  *n = a ? a->n : 0;
  if (*n > IR_MAX_RANK || (a && a->kind != IR_ATTR_INTS)) return ir_fail(c->err, c->g, c->node, "bad 'axes'");
  for (int i = 0; i < *n; i++) {
    int64_t v = a->ints[i];
    if (v < -rank || v >= rank) return ir_fail(c->err, c->g, c->node, "axis %lld is out of range for rank %d", (long long)v, rank);
    axes[i] = v < 0 ? v + rank : v;
    if ((*mask >> axes[i]) & 1u) return ir_fail(c->err, c->g, c->node, "axis %lld is repeated", (long long)v);
    *mask |= 1u << axes[i];
  }
  return 0;
}

static int infer_unsqueeze(struct sctx *c) {
  const struct ir_tensor *x = si_known(c, 0);
  if (!x) return 0;
  int64_t axes[IR_MAX_RANK];
  int n;
  unsigned mask;
  int rank = x->rank + (ir_attr_find(si_cur(c), "axes") ? ir_attr_find(si_cur(c), "axes")->n : 0);
  if (rank > IR_MAX_RANK) return ir_fail(c->err, c->g, c->node, "result rank %d is above %d", rank, IR_MAX_RANK);
  if (read_axes(c, rank, axes, &n, &mask)) return -1;
  struct shape y = {.rank = rank};
  for (int i = 0, k = 0; i < rank; i++) y.d[i] = (mask >> i) & 1u ? 1 : x->dims[k++];
  return si_set_result(c, 0, x->dtype, &y);
}

static int infer_squeeze(struct sctx *c) {
  const struct ir_tensor *x = si_known(c, 0);
  if (!x) return 0;
  int64_t axes[IR_MAX_RANK];
  int n;
  unsigned mask;
  if (read_axes(c, x->rank, axes, &n, &mask)) return -1;
  struct shape y = {.rank = 0};
  for (int i = 0; i < x->rank; i++) {
    int drop = n ? (mask >> i) & 1u : x->dims[i] == 1;
    if (drop && x->dims[i] != 1) return ir_fail(c->err, c->g, c->node, "cannot squeeze dim %d of size %lld", i, (long long)x->dims[i]);
    if (!drop) y.d[y.rank++] = x->dims[i];
  }
  return si_set_result(c, 0, x->dtype, &y);
}

static int infer_shape_op(struct sctx *c) {
  const struct ir_node *n = si_cur(c);
  const struct ir_tensor *x = &c->g->tensors[n->in[0]];
  if (x->rank < 0) return 0;
  int64_t start = ir_attr_int(n, "start", 0), end = ir_attr_int(n, "end", x->rank);
  if (start < 0) start += x->rank;
  if (end < 0) end += x->rank;
  start = start < 0 ? 0 : start > x->rank ? x->rank : start;
  end = end < start ? start : end > x->rank ? x->rank : end;
  struct shape y = {.rank = 1, .d = {end - start}};
  return si_set_result(c, 0, IR_DT_I64, &y);
}

static int infer_gather(struct sctx *c) {
  const struct ir_tensor *x = si_known(c, 0), *ix = si_known(c, 1);
  if (!x || !ix) return 0;
  int axis;
  if (si_axis_attr(c, "axis", 0, x->rank, &axis)) return -1;
  if (x->rank - 1 + ix->rank > IR_MAX_RANK) return ir_fail(c->err, c->g, c->node, "result rank above %d", IR_MAX_RANK);
  struct shape y = {.rank = 0};
  for (int i = 0; i < axis; i++) y.d[y.rank++] = x->dims[i];
  for (int i = 0; i < ix->rank; i++) y.d[y.rank++] = ix->dims[i];
  for (int i = axis + 1; i < x->rank; i++) y.d[y.rank++] = x->dims[i];
  return si_set_result(c, 0, x->dtype, &y);
}

/* ---- per-channel ops ---- */

static int infer_batchnorm(struct sctx *c) {
  const struct ir_tensor *x = si_known(c, 0);
  if (!x) return 0;
  if (x->rank < 2) return ir_fail(c->err, c->g, c->node, "input rank %d, needs at least 2", x->rank);
  if (ir_attr_int(si_cur(c), "training_mode", 0)) return ir_fail(c->err, c->g, c->node, "training_mode is not supported");
  for (int k = 1; k < 5; k++) {
    const struct ir_tensor *p = si_known(c, k);
    if (p && (p->rank != 1 || p->dims[0] != x->dims[1]))
      return ir_fail(c->err, c->g, c->node, "parameter %%%s must have %lld entries", p->name, (long long)x->dims[1]);
  }
  return si_same_as_input(c, x);
}

static int infer_softmax(struct sctx *c) {
  const struct ir_tensor *x = si_known(c, 0);
  if (!x) return 0;
  int axis;
  if (si_axis_attr(c, "axis", -1, x->rank, &axis)) return -1;
  if (axis == x->rank - 1) ir_attr_remove(si_cur(c), "legacy_2d");
  return si_same_as_input(c, x);
}

/* Quantization parameters: a scalar (or 1-element) scale, or a 1-D one
 * along `axis` of x. */
static int check_qparams(struct sctx *c, const struct ir_tensor *x, int si) {
  const struct ir_tensor *s = si_known(c, si);
  if (!s || ir_tensor_numel(s) == 1) return 0;
  int axis;
  if (s->rank != 1 || si_axis_attr(c, "axis", 1, x->rank, &axis)) return ir_fail(c->err, c->g, c->node, "scale must be a scalar or 1-D");
  if (s->dims[0] != x->dims[axis]) return ir_fail(c->err, c->g, c->node, "%lld scales for %lld channels", (long long)s->dims[0], (long long)x->dims[axis]);
  return 0;
}

static int infer_quantize(struct sctx *c) {
  const struct ir_tensor *x = si_known(c, 0), *zp = si_known(c, 2);
  if (!x || check_qparams(c, x, 1)) return x ? -1 : 0;
  struct shape y = si_shape_of(x);
  return si_set_result(c, 0, zp ? zp->dtype : IR_DT_U8, &y);
}

static int infer_dequantize(struct sctx *c) {
  const struct ir_tensor *x = si_known(c, 0);
  if (!x || check_qparams(c, x, 1)) return x ? -1 : 0;
  struct shape y = si_shape_of(x);
  return si_set_result(c, 0, IR_DT_F32, &y);
}

static enum ir_dtype dtype_of(struct sctx *c, int k, enum ir_dtype dflt) {
  const struct ir_node *n = si_cur(c);
  return k < n->n_in && n->in[k] >= 0 ? c->g->tensors[n->in[k]].dtype : dflt;
}

static int infer_constant(struct sctx *c) {
  const struct ir_attr *a = ir_attr_find(si_cur(c), "value");
  if (!a || a->kind != IR_ATTR_TENSOR || a->tensor < 0) return ir_fail(c->err, c->g, c->node, "needs a constant 'value'");
  const struct ir_tensor *v = &c->g->tensors[a->tensor];
  struct shape y = si_shape_of(v);
  return si_set_result(c, 0, v->dtype, &y);
}

int si_infer_kind(struct sctx *c, enum ir_op_kind kind) {
  const struct ir_tensor *x0 = si_known(c, 0);
  switch (kind) {
  case IR_OP_CONV: return infer_conv(c, 0, 1, x0 ? x0->dtype : IR_DT_F32);
  case IR_OP_CONVINTEGER: return infer_conv(c, 0, 1, IR_DT_I32);
  case IR_OP_QLINEARCONV: return infer_conv(c, 0, 3, dtype_of(c, 7, IR_DT_UNDEF));
  case IR_OP_GEMM: return infer_gemm(c);
  case IR_OP_MATMUL: return infer_matmul(c, 0, 1, x0 ? x0->dtype : IR_DT_F32);
  case IR_OP_MATMULINTEGER: return infer_matmul(c, 0, 1, IR_DT_I32);
  case IR_OP_QLINEARMATMUL: return infer_matmul(c, 0, 3, dtype_of(c, 7, IR_DT_UNDEF));
  case IR_OP_RELU: case IR_OP_CLIP: case IR_OP_IDENTITY:
    return x0 ? si_same_as_input(c, x0) : 0;
  case IR_OP_ADD: case IR_OP_MUL: return infer_binary(c);
  case IR_OP_MAXPOOL: case IR_OP_AVERAGEPOOL: return infer_pool(c);
  case IR_OP_GLOBALAVERAGEPOOL: return infer_global_pool(c);
  case IR_OP_FLATTEN: return infer_flatten(c);
  case IR_OP_RESHAPE: return infer_reshape(c);
  case IR_OP_TRANSPOSE: return infer_transpose(c);
  case IR_OP_CONCAT: return infer_concat(c);
  case IR_OP_BATCHNORM: return infer_batchnorm(c);
  case IR_OP_SOFTMAX: return infer_softmax(c);
  case IR_OP_QUANTIZELINEAR: return infer_quantize(c);
  case IR_OP_DEQUANTIZELINEAR: return infer_dequantize(c);
  case IR_OP_CONSTANT: return infer_constant(c);
  case IR_OP_SHAPE: return infer_shape_op(c);
  case IR_OP_GATHER: return infer_gather(c);
  case IR_OP_UNSQUEEZE: return infer_unsqueeze(c);
  case IR_OP_SQUEEZE: return infer_squeeze(c);
  case IR_OP_QCONV: case IR_OP_QGEMM: case IR_OP_QADD: case IR_OP_QPOOL:
    return 0; /* pass_fuse.c types these when it builds them */
  case IR_OP_ONNX: return si_infer_onnx(c);
  case IR_OP_COUNT: break;
  }
  LOOM_ASSERT(0);
  return -1;
}

/* A typed node in a form its kind does not cover, found once shapes are
 * known (a 3-D convolution or pooling window, a float64 Gemm): it becomes a
 * generic node and runs on the host kernels. */
static void demote_if_needed(struct sctx *c) {
  struct ir_node *n = si_cur(c);
  const struct ir_tensor *x = si_known(c, 0);
  if (n->op >= IR_OP_QCONV || n->op == IR_OP_CONSTANT) return;
  if (!ir_kind_types_ok(c->g, c->node)) {
    ir_node_demote(c->g, c->node, 0);
    return;
  }
  if (!x) return;
  int window = n->op == IR_OP_CONV || n->op == IR_OP_MAXPOOL || n->op == IR_OP_AVERAGEPOOL;
  if ((window && x->rank != 3 && x->rank != 4) || (n->op == IR_OP_MAXPOOL && ir_attr_int(n, "storage_order", 0)))
    ir_node_demote(c->g, c->node, 0);
}

int ir_pass_shape_infer(struct ir_graph *g, struct ir_error *err) {
  struct sctx c = {.g = g, .err = err};
  for (c.node = 0; c.node < g->n_nodes; c.node++) {
    if (g->nodes[c.node].dead) continue;
    demote_if_needed(&c);
    if (si_infer_kind(&c, g->nodes[c.node].op)) return -1;
  }
  return 0;
}
