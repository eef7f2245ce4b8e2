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
#include "sw_compiler/compiler.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

struct shape {
  int rank;
  int64_t d[IR_MAX_RANK];
};

struct sctx {
  struct ir_graph *g;
  struct ir_error *err;
  int node;
};

static struct ir_node *cur(struct sctx *c) { return &c->g->nodes[c->node]; }

/* Operand k, or NULL when absent or of unknown type or shape. */
static const struct ir_tensor *known(struct sctx *c, int k) {
  struct ir_node *n = cur(c);
  if (k >= n->n_in || n->in[k] < 0) return NULL;
  const struct ir_tensor *t = &c->g->tensors[n->in[k]];
  return ir_shape_known(t) ? t : NULL;
}

static struct shape shape_of(const struct ir_tensor *t) {
  struct shape s = {.rank = t->rank};
  memcpy(s.d, t->dims, sizeof s.d);
  return s;
}

/* ---- recording results ---- */

static void fmt_shape(char *buf, size_t len, enum ir_dtype dt, int rank, const int64_t *d) {
  int o = snprintf(buf, len, "%s[", ir_dtype_name(dt));
  for (int i = 0; i < rank && o < (int)len; i++)
    o += snprintf(buf + o, len - (size_t)o, i ? ",%lld" : "%lld", (long long)d[i]);
  if (o < (int)len) snprintf(buf + o, len - (size_t)o, "]");
}

static int conflicts(const struct ir_tensor *t, enum ir_dtype dt, const struct shape *s) {
  if (t->dtype != IR_DT_UNDEF && t->dtype != dt) return 1;
  if (t->rank < 0) return 0;
  if (t->rank != s->rank) return 1;
  for (int i = 0; i < s->rank; i++)
    if (t->dims[i] >= 0 && t->dims[i] != s->d[i]) return 1;
  return 0;
}

static int set_result(struct sctx *c, int k, enum ir_dtype dt, const struct shape *s) {
  struct ir_tensor *t = &c->g->tensors[cur(c)->out[k]];
  if (ir_numel_checked(s->rank, s->d) < 0) return ir_fail(c->err, c->g, c->node, "result %%%s would be too large", t->name);
  if (conflicts(t, dt, s)) {
    char a[160], b[160];
    fmt_shape(a, sizeof a, dt, s->rank, s->d);
    fmt_shape(b, sizeof b, t->dtype, t->rank, t->dims);
    return ir_fail(c->err, c->g, c->node, "result %%%s is %s, but declared as %s", t->name, a, b);
  }
  t->dtype = dt;
  t->rank = s->rank;
  memcpy(t->dims, s->d, sizeof t->dims);
  return 0;
}

static int same_as_input(struct sctx *c, const struct ir_tensor *x) {
  struct shape s = shape_of(x);
  return set_result(c, 0, x->dtype, &s);
}

/* ---- attribute helpers ---- */

/* Reads an int list attribute of exactly `want` entries, or fills `dflt`. */
static int ints_attr(struct sctx *c, const char *name, int want, int64_t dflt, int64_t *out) {
  const struct ir_attr *a = ir_attr_find(cur(c), name);
  if (!a) {
    for (int i = 0; i < want; i++) out[i] = dflt;
    return 0;
  }
  if (a->kind != IR_ATTR_INTS || a->n != want)
    return ir_fail(c->err, c->g, c->node, "attribute '%s' needs %d values", name, want);
  memcpy(out, a->ints, (size_t)want * sizeof *out);
  return 0;
}

/* An axis attribute in [-rank, rank), normalized to [0, rank). */
static int axis_attr(struct sctx *c, const char *name, int64_t dflt, int rank, int *axis) {
  int64_t a = ir_attr_int(cur(c), name, dflt);
  if (a < -rank || a >= rank) return ir_fail(c->err, c->g, c->node, "%s %lld is out of range for rank %d", name, (long long)a, rank);
  *axis = (int)(a < 0 ? a + rank : a);
  return 0;
}

/* ---- windows: Conv and pooling ---- */

struct window {
  int nsp;                    /* spatial dims */
  int64_t k[IR_MAX_RANK], s[IR_MAX_RANK], d[IR_MAX_RANK];
  int64_t pads[2 * IR_MAX_RANK];
  int ceil_mode;
};

static int64_t div_ceil(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* Turns auto_pad into explicit pads (kept in the node from then on). */
static int resolve_auto_pad(struct sctx *c, const struct shape *x, struct window *w) {
  const struct ir_attr *a = ir_attr_find(cur(c), "auto_pad");
  if (!a) return 0;
  const char *mode = a->kind == IR_ATTR_STRING ? a->s : "";
  int upper = !strcmp(mode, "SAME_UPPER"), lower = !strcmp(mode, "SAME_LOWER");
  if (!upper && !lower && strcmp(mode, "VALID") && strcmp(mode, "NOTSET"))
    return ir_fail(c->err, c->g, c->node, "auto_pad '%s' is not supported", mode);
  for (int i = 0; i < w->nsp && (upper || lower); i++) {
    int64_t in = x->d[2 + i], out = div_ceil(in, w->s[i]);
    int64_t total = (out - 1) * w->s[i] + (w->k[i] - 1) * w->d[i] + 1 - in;
    if (total < 0) total = 0;
    w->pads[i] = upper ? total / 2 : total - total / 2;
    w->pads[i + w->nsp] = total - w->pads[i];
  }
  if (strcmp(mode, "NOTSET")) ir_attr_set_ints(c->g, c->node, "pads", 2 * w->nsp, w->pads);
  ir_attr_remove(cur(c), "auto_pad");
  return 0;
}

static int read_window(struct sctx *c, const struct shape *x, struct window *w) {
  w->nsp = x->rank - 2;
  if (ints_attr(c, "kernel_shape", w->nsp, 1, w->k) || ints_attr(c, "strides", w->nsp, 1, w->s) ||
      ints_attr(c, "dilations", w->nsp, 1, w->d) || ints_attr(c, "pads", 2 * w->nsp, 0, w->pads))
    return -1;
  for (int i = 0; i < w->nsp; i++) {
    if (w->k[i] < 1 || w->s[i] < 1 || w->d[i] < 1 || w->k[i] > IR_MAX_DIM || w->s[i] > IR_MAX_DIM ||
        w->d[i] > IR_MAX_DIM)
      return ir_fail(c->err, c->g, c->node, "kernel, strides and dilations must be positive and at most %lld", (long long)IR_MAX_DIM);
    if (w->pads[i] < 0 || w->pads[i + w->nsp] < 0 || w->pads[i] > IR_MAX_DIM || w->pads[i + w->nsp] > IR_MAX_DIM)
      return ir_fail(c->err, c->g, c->node, "pads must be in [0, %lld]", (long long)IR_MAX_DIM);
  }
  w->ceil_mode = (int)ir_attr_int(cur(c), "ceil_mode", 0);
  return resolve_auto_pad(c, x, w);
}

/* Spatial output dims of a window op; out->d[0..1] are set by the caller. */
static int window_out(struct sctx *c, const struct shape *x, const struct window *w, struct shape *out) {
  out->rank = x->rank;
  for (int i = 0; i < w->nsp; i++) {
    int64_t in = x->d[2 + i] + w->pads[i] + w->pads[i + w->nsp];
    int64_t ext = (w->k[i] - 1) * w->d[i] + 1;
    if (in < ext) return ir_fail(c->err, c->g, c->node, "window %lld is larger than the padded input %lld", (long long)ext, (long long)in);
    int64_t o = w->ceil_mode ? div_ceil(in - ext, w->s[i]) + 1 : (in - ext) / w->s[i] + 1;
    /* ceil_mode: the last window must start inside the input or left pad. */
    if (w->ceil_mode && (o - 1) * w->s[i] >= x->d[2 + i] + w->pads[i]) o--;
    out->d[2 + i] = o;
  }
  return 0;
}

/* Conv, ConvInteger, QLinearConv: x at operand xi, w at wi. */
static int infer_conv(struct sctx *c, int xi, int wi, enum ir_dtype dt) {
  const struct ir_tensor *xt = known(c, xi), *wt = known(c, wi);
  if (!xt || !wt) return 0;
  struct shape x = shape_of(xt), w = shape_of(wt), y;
  if (x.rank < 3 || w.rank != x.rank) return ir_fail(c->err, c->g, c->node, "input rank %d and weight rank %d do not fit", x.rank, w.rank);
  if (!ir_attr_find(cur(c), "kernel_shape"))
    ir_attr_set_ints(c->g, c->node, "kernel_shape", w.rank - 2, w.d + 2);
  struct window win;
  if (read_window(c, &x, &win)) return -1;
  for (int i = 0; i < win.nsp; i++)
    if (win.k[i] != w.d[2 + i]) return ir_fail(c->err, c->g, c->node, "kernel_shape does not match the weight %%%s", wt->name);
  int64_t group = ir_attr_int(cur(c), "group", 1);
  if (group < 1 || x.d[1] % group || w.d[0] % group || x.d[1] / group != w.d[1])
    return ir_fail(c->err, c->g, c->node, "%lld input channels, weight %%%s with %lld per group, group %lld do not fit",
                (long long)x.d[1], wt->name, (long long)w.d[1], (long long)group);
  int bi = cur(c)->op == IR_OP_QLINEARCONV ? 8 : cur(c)->op == IR_OP_CONV ? 2 : -1;
  const struct ir_tensor *b = bi >= 0 ? known(c, bi) : NULL;
  if (b && (b->rank != 1 || b->dims[0] != w.d[0])) return ir_fail(c->err, c->g, c->node, "bias %%%s must have %lld entries", b->name, (long long)w.d[0]);
  if (window_out(c, &x, &win, &y)) return -1;
  y.d[0] = x.d[0];
  y.d[1] = w.d[0];
  return set_result(c, 0, dt, &y);
}

static int infer_pool(struct sctx *c) {
  const struct ir_tensor *xt = known(c, 0);
  if (!xt) return 0;
  struct shape x = shape_of(xt), y;
  if (x.rank < 3) return ir_fail(c->err, c->g, c->node, "input rank %d, needs at least 3", x.rank);
  struct window win;
  if (read_window(c, &x, &win) || window_out(c, &x, &win, &y)) return -1;
  if (ir_attr_int(cur(c), "storage_order", 0) != 0) return ir_fail(c->err, c->g, c->node, "storage_order 1 is not supported");
  y.d[0] = x.d[0];
  y.d[1] = x.d[1];
  return set_result(c, 0, xt->dtype, &y);
}

static int infer_global_pool(struct sctx *c) {
  const struct ir_tensor *xt = known(c, 0);
  if (!xt) return 0;
  struct shape y = shape_of(xt);
  for (int i = 2; i < y.rank; i++) y.d[i] = 1;
  return set_result(c, 0, xt->dtype, &y);
}

/* ---- broadcasting and matrix products ---- */

static int broadcast(struct sctx *c, const struct shape *a, const struct shape *b, struct shape *out) {
  out->rank = a->rank > b->rank ? a->rank : b->rank;
  for (int i = 0; i < out->rank; i++) {
    int ia = i - (out->rank - a->rank), ib = i - (out->rank - b->rank);
    int64_t da = ia >= 0 ? a->d[ia] : 1, db = ib >= 0 ? b->d[ib] : 1;
    if (da != db && da != 1 && db != 1) return ir_fail(c->err, c->g, c->node, "shapes do not broadcast (dim %lld vs %lld)", (long long)da, (long long)db);
    out->d[i] = da == 1 ? db : da;
  }
  return 0;
}

static int infer_binary(struct sctx *c) {
  const struct ir_tensor *a = known(c, 0), *b = known(c, 1);
  if (!a || !b) return 0;
  struct shape sa = shape_of(a), sb = shape_of(b), y;
  if (a->dtype != b->dtype) return ir_fail(c->err, c->g, c->node, "operand dtypes differ (%s, %s)", ir_dtype_name(a->dtype), ir_dtype_name(b->dtype));
  return broadcast(c, &sa, &sb, &y) ? -1 : set_result(c, 0, a->dtype, &y);
}

/* numpy matmul: 1-D operands are promoted and the extra dim dropped. */
static int infer_matmul(struct sctx *c, int ai, int bi, enum ir_dtype dt) {
  const struct ir_tensor *at = known(c, ai), *bt = known(c, bi);
  if (!at || !bt) return 0;
  struct shape a = shape_of(at), b = shape_of(bt), ba, bb, y;
  if (a.rank < 1 || b.rank < 1) return ir_fail(c->err, c->g, c->node, "operands must have rank at least 1");
  int64_t m = a.rank > 1 ? a.d[a.rank - 2] : 1, k = a.d[a.rank - 1];
  int64_t kb = b.rank > 1 ? b.d[b.rank - 2] : b.d[0], nn = b.rank > 1 ? b.d[b.rank - 1] : 1;
  if (k != kb) return ir_fail(c->err, c->g, c->node, "reduction sizes differ (%lld vs %lld)", (long long)k, (long long)kb);
  ba.rank = a.rank > 2 ? a.rank - 2 : 0;
  bb.rank = b.rank > 2 ? b.rank - 2 : 0;
  memcpy(ba.d, a.d, sizeof ba.d);
  memcpy(bb.d, b.d, sizeof bb.d);
  if (broadcast(c, &ba, &bb, &y)) return -1;
  if (a.rank > 1) y.d[y.rank++] = m;
  if (b.rank > 1) y.d[y.rank++] = nn;
  return set_result(c, 0, dt, &y);
}

static int infer_gemm(struct sctx *c) {
  const struct ir_tensor *at = known(c, 0), *bt = known(c, 1), *ct = known(c, 2);
  if (!at || !bt) return 0;
  if (at->rank != 2 || bt->rank != 2) return ir_fail(c->err, c->g, c->node, "operands must be matrices");
  int ta = ir_attr_int(cur(c), "transA", 0) != 0, tb = ir_attr_int(cur(c), "transB", 0) != 0;
  int64_t m = at->dims[ta], k = at->dims[!ta], kb = bt->dims[tb], nn = bt->dims[!tb];
  if (k != kb) return ir_fail(c->err, c->g, c->node, "reduction sizes differ (%lld vs %lld)", (long long)k, (long long)kb);
  struct shape y = {.rank = 2, .d = {m, nn}}, yc;
  if (ct) {
    struct shape sc = shape_of(ct);
    if (sc.rank > 2 || broadcast(c, &y, &sc, &yc) || yc.d[0] != m || (yc.rank == 2 && yc.d[1] != nn))
      return ir_fail(c->err, c->g, c->node, "C %%%s does not broadcast to [%lld,%lld]", ct->name, (long long)m, (long long)nn);
  }
  return set_result(c, 0, IR_DT_F32, &y);
}

/* ---- shape manipulation ---- */

static int infer_flatten(struct sctx *c) {
  const struct ir_tensor *x = known(c, 0);
  if (!x) return 0;
  int64_t a = ir_attr_int(cur(c), "axis", 1);
  if (a < -x->rank || a > x->rank) return ir_fail(c->err, c->g, c->node, "axis %lld is out of range for rank %d", (long long)a, x->rank);
  int axis = (int)(a < 0 ? a + x->rank : a);
  struct shape y = {.rank = 2, .d = {1, 1}};
  for (int i = 0; i < x->rank; i++) y.d[i >= axis] *= x->dims[i];
  return set_result(c, 0, x->dtype, &y);
}

static int infer_reshape(struct sctx *c) {
  const struct ir_tensor *x = known(c, 0), *st = known(c, 1);
  if (!x || !st || !st->data) return 0;
  if (st->rank != 1 || st->dims[0] > IR_MAX_RANK) return ir_fail(c->err, c->g, c->node, "shape %%%s must be 1-D with at most %d entries", st->name, IR_MAX_RANK);
  const int64_t *req = st->data;
  int allowzero = ir_attr_int(cur(c), "allowzero", 0) != 0, infer = -1;
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
  return set_result(c, 0, x->dtype, &y);
}

static int infer_transpose(struct sctx *c) {
  const struct ir_tensor *x = known(c, 0);
  if (!x) return 0;
  int64_t perm[IR_MAX_RANK];
  for (int i = 0; i < x->rank; i++) perm[i] = x->rank - 1 - i;
  if (ir_attr_find(cur(c), "perm") && ints_attr(c, "perm", x->rank, 0, perm)) return -1;
  struct shape y = {.rank = x->rank};
  unsigned seen = 0;
  for (int i = 0; i < x->rank; i++) {
    if (perm[i] < 0 || perm[i] >= x->rank || (seen >> perm[i]) & 1u) return ir_fail(c->err, c->g, c->node, "perm is not a permutation");
    seen |= 1u << perm[i];
    y.d[i] = x->dims[perm[i]];
  }
  return set_result(c, 0, x->dtype, &y);
}

static int infer_concat(struct sctx *c) {
  const struct ir_node *n = cur(c);
  const struct ir_tensor *x0 = known(c, 0);
  for (int k = 0; k < n->n_in; k++)
    if (!known(c, k)) return 0;
  int axis;
  if (axis_attr(c, "axis", 0, x0->rank, &axis)) return -1;
  struct shape y = shape_of(x0);
  for (int k = 1; k < n->n_in; k++) {
    const struct ir_tensor *x = known(c, k);
    if (x->rank != y.rank || x->dtype != x0->dtype) return ir_fail(c->err, c->g, c->node, "operand %d differs in rank or dtype", k);
    for (int i = 0; i < y.rank; i++)
      if (i != axis && x->dims[i] != y.d[i]) return ir_fail(c->err, c->g, c->node, "operand %d differs in dim %d", k, i);
    y.d[axis] += x->dims[axis];
  }
  return set_result(c, 0, x0->dtype, &y);
}

/* Reads and normalizes axes for (Un)squeeze; rank is the rank they index. */
static int read_axes(struct sctx *c, int rank, int64_t *axes, int *n, unsigned *mask) {
  const struct ir_attr *a = ir_attr_find(cur(c), "axes");
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
  const struct ir_tensor *x = known(c, 0);
  if (!x) return 0;
  int64_t axes[IR_MAX_RANK];
  int n;
  unsigned mask;
  int rank = x->rank + (ir_attr_find(cur(c), "axes") ? ir_attr_find(cur(c), "axes")->n : 0);
  if (rank > IR_MAX_RANK) return ir_fail(c->err, c->g, c->node, "result rank %d is above %d", rank, IR_MAX_RANK);
  if (read_axes(c, rank, axes, &n, &mask)) return -1;
  struct shape y = {.rank = rank};
  for (int i = 0, k = 0; i < rank; i++) y.d[i] = (mask >> i) & 1u ? 1 : x->dims[k++];
  return set_result(c, 0, x->dtype, &y);
}

static int infer_squeeze(struct sctx *c) {
  const struct ir_tensor *x = known(c, 0);
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
  return set_result(c, 0, x->dtype, &y);
}

static int infer_shape_op(struct sctx *c) {
  const struct ir_node *n = cur(c);
  const struct ir_tensor *x = &c->g->tensors[n->in[0]];
  if (x->rank < 0) return 0;
  int64_t start = ir_attr_int(n, "start", 0), end = ir_attr_int(n, "end", x->rank);
  if (start < 0) start += x->rank;
  if (end < 0) end += x->rank;
  start = start < 0 ? 0 : start > x->rank ? x->rank : start;
  end = end < start ? start : end > x->rank ? x->rank : end;
  struct shape y = {.rank = 1, .d = {end - start}};
  return set_result(c, 0, IR_DT_I64, &y);
}

static int infer_gather(struct sctx *c) {
  const struct ir_tensor *x = known(c, 0), *ix = known(c, 1);
  if (!x || !ix) return 0;
  int axis;
  if (axis_attr(c, "axis", 0, x->rank, &axis)) return -1;
  if (x->rank - 1 + ix->rank > IR_MAX_RANK) return ir_fail(c->err, c->g, c->node, "result rank above %d", IR_MAX_RANK);
  struct shape y = {.rank = 0};
  for (int i = 0; i < axis; i++) y.d[y.rank++] = x->dims[i];
  for (int i = 0; i < ix->rank; i++) y.d[y.rank++] = ix->dims[i];
  for (int i = axis + 1; i < x->rank; i++) y.d[y.rank++] = x->dims[i];
  return set_result(c, 0, x->dtype, &y);
}

/* ---- per-channel ops ---- */

static int infer_batchnorm(struct sctx *c) {
  const struct ir_tensor *x = known(c, 0);
  if (!x) return 0;
  if (x->rank < 2) return ir_fail(c->err, c->g, c->node, "input rank %d, needs at least 2", x->rank);
  if (ir_attr_int(cur(c), "training_mode", 0)) return ir_fail(c->err, c->g, c->node, "training_mode is not supported");
  for (int k = 1; k < 5; k++) {
    const struct ir_tensor *p = known(c, k);
    if (p && (p->rank != 1 || p->dims[0] != x->dims[1]))
      return ir_fail(c->err, c->g, c->node, "parameter %%%s must have %lld entries", p->name, (long long)x->dims[1]);
  }
  return same_as_input(c, x);
}

static int infer_softmax(struct sctx *c) {
  const struct ir_tensor *x = known(c, 0);
  if (!x) return 0;
  int axis;
  if (axis_attr(c, "axis", -1, x->rank, &axis)) return -1;
  if (axis == x->rank - 1) ir_attr_remove(cur(c), "legacy_2d");
  return same_as_input(c, x);
}

/* Quantization parameters: a scalar (or 1-element) scale, or a 1-D one
 * along `axis` of x. */
static int check_qparams(struct sctx *c, const struct ir_tensor *x, int si) {
  const struct ir_tensor *s = known(c, si);
  if (!s || ir_tensor_numel(s) == 1) return 0;
  int axis;
  if (s->rank != 1 || axis_attr(c, "axis", 1, x->rank, &axis)) return ir_fail(c->err, c->g, c->node, "scale must be a scalar or 1-D");
  if (s->dims[0] != x->dims[axis]) return ir_fail(c->err, c->g, c->node, "%lld scales for %lld channels", (long long)s->dims[0], (long long)x->dims[axis]);
  return 0;
}

static int infer_quantize(struct sctx *c) {
  const struct ir_tensor *x = known(c, 0), *zp = known(c, 2);
  if (!x || check_qparams(c, x, 1)) return x ? -1 : 0;
  struct shape y = shape_of(x);
  return set_result(c, 0, zp ? zp->dtype : IR_DT_U8, &y);
}

static int infer_dequantize(struct sctx *c) {
  const struct ir_tensor *x = known(c, 0);
  if (!x || check_qparams(c, x, 1)) return x ? -1 : 0;
  struct shape y = shape_of(x);
  return set_result(c, 0, IR_DT_F32, &y);
}

static enum ir_dtype dtype_of(struct sctx *c, int k, enum ir_dtype dflt) {
  const struct ir_node *n = cur(c);
  return k < n->n_in && n->in[k] >= 0 ? c->g->tensors[n->in[k]].dtype : dflt;
}

static int infer_constant(struct sctx *c) {
  const struct ir_attr *a = ir_attr_find(cur(c), "value");
  if (!a || a->kind != IR_ATTR_TENSOR || a->tensor < 0) return ir_fail(c->err, c->g, c->node, "needs a constant 'value'");
  const struct ir_tensor *v = &c->g->tensors[a->tensor];
  struct shape y = shape_of(v);
  return set_result(c, 0, v->dtype, &y);
}

static int infer_node(struct sctx *c) {
  struct ir_node *n = cur(c);
  const struct ir_tensor *x0 = known(c, 0);
  switch (n->op) {
  case IR_OP_CONV: return infer_conv(c, 0, 1, IR_DT_F32);
  case IR_OP_CONVINTEGER: return infer_conv(c, 0, 1, IR_DT_I32);
  case IR_OP_QLINEARCONV: return infer_conv(c, 0, 3, dtype_of(c, 7, IR_DT_UNDEF));
  case IR_OP_GEMM: return infer_gemm(c);
  case IR_OP_MATMUL: return infer_matmul(c, 0, 1, IR_DT_F32);
  case IR_OP_MATMULINTEGER: return infer_matmul(c, 0, 1, IR_DT_I32);
  case IR_OP_QLINEARMATMUL: return infer_matmul(c, 0, 3, dtype_of(c, 7, IR_DT_UNDEF));
  case IR_OP_RELU: case IR_OP_CLIP: case IR_OP_IDENTITY:
    return x0 ? same_as_input(c, x0) : 0;
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
  case IR_OP_COUNT: break;
  }
  LOOM_ASSERT(0);
  return -1;
}

int ir_pass_shape_infer(struct ir_graph *g, struct ir_error *err) {
  struct sctx c = {.g = g, .err = err};
  for (c.node = 0; c.node < g->n_nodes; c.node++)
    if (!g->nodes[c.node].dead && infer_node(&c)) return -1;
  return 0;
}
