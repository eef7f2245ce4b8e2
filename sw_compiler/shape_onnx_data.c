/*
 * shape_onnx_data.c - shape inference of the data-movement and generator
 * ONNX ops: Slice, Split, Pad, Tile, Expand, the Gather and Scatter
 * variants, DepthToSpace / SpaceToDepth, Resize, the data-dependent ones
 * (Compress, NonZero, Unique: a capacity and the dyn flag), and the
 * generators whose sizes come from constant operands (OneHot, EyeLike,
 * ConstantOfShape, Range, TopK).
 *
 * Operands that fix a size (starts and ends, pads, repeats, a target shape,
 * scales or sizes, K, depth, ...) must be constants: until folding has made
 * them so, the node waits (0, results unknown).
 */
#include "sw_compiler/shape_onnx.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LIST 4096 /* entries a size-giving operand may have */

/* ---- Slice, Split, Pad, Tile, Expand ---- */

static int64_t clamp64(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }

/* Elements of one sliced axis of size d (ONNX Slice-10 rules). */
static int64_t slice_len(int64_t d, int64_t s, int64_t e, int64_t p) {
  if (s < 0) s += d;
  if (e < 0) e += d;
  if (p > 0) {
    s = clamp64(s, 0, d), e = clamp64(e, 0, d);
    return e > s ? 1 + (e - s - 1) / p : 0;
  }
  s = clamp64(s, 0, d - 1), e = clamp64(e, -1, d - 1);
  uint64_t q = (uint64_t)(-(p + 1)) + 1; /* -p without overflow */
  return s > e ? (int64_t)(1 + (uint64_t)(s - e - 1) / q) : 0;
}

int so_slice(struct sctx *c) {
  const struct ir_tensor *x = si_known(c, 0);
  int64_t st[IR_MAX_RANK], en[IR_MAX_RANK], ax[IR_MAX_RANK], sp[IR_MAX_RANK];
  int ns, ne, na, np, r;
  if (!x) return 0;
  if ((r = si_const_ints(c, 1, st, IR_MAX_RANK, &ns)) <= 0 || (r = si_const_ints(c, 2, en, IR_MAX_RANK, &ne)) <= 0)
    return r;
  na = np = ns;
  for (int i = 0; i < ns; i++) ax[i] = i, sp[i] = 1;
  if (si_has(c, 3) && (r = si_const_ints(c, 3, ax, IR_MAX_RANK, &na)) <= 0) return r;
  if (si_has(c, 4) && (r = si_const_ints(c, 4, sp, IR_MAX_RANK, &np)) <= 0) return r;
  if (ne != ns || na != ns || np != ns) return si_fail(c, "starts, ends, axes and steps differ in length");
  struct shape y = si_shape_of(x);
  unsigned seen = 0;
  for (int i = 0; i < ns; i++) {
    int a;
    if (si_norm_axis(c, "axis", ax[i], x->rank, &a)) return -1;
    if ((seen >> a) & 1u) return si_fail(c, "axis %d is sliced twice", a);
    seen |= 1u << a;
    if (sp[i] == 0) return si_fail(c, "a step is 0");
    y.d[a] = slice_len(x->dims[a], st[i], en[i], sp[i]);
  }
  return si_set_result(c, 0, x->dtype, &y);
}

int so_split(struct sctx *c) {
  const struct ir_tensor *x = si_known(c, 0);
  int n_out = si_cur(c)->n_out, axis, r, n = 0;
  if (!x) return 0;
  if (si_axis_attr(c, "axis", 0, x->rank, &axis)) return -1;
  int64_t *parts = ir_xmalloc((size_t)n_out * sizeof *parts);
  if (si_has(c, 1)) {
    if ((r = si_const_ints(c, 1, parts, n_out, &n)) <= 0) goto done;
    r = -1;
    if (n != n_out) { si_fail(c, "%d split sizes for %d outputs", n, n_out); goto done; }
    int64_t sum = 0;
    for (int k = 0; k < n; k++) {
      if (parts[k] < 0 || __builtin_add_overflow(sum, parts[k], &sum)) { si_fail(c, "a split size is negative"); goto done; }
    }
    if (sum != x->dims[axis]) { si_fail(c, "split sizes add up to %lld, the axis has %lld", (long long)sum, (long long)x->dims[axis]); goto done; }
  } else {
    r = -1;
    if (x->dims[axis] % n_out) { si_fail(c, "axis of %lld cannot be split in %d equal parts", (long long)x->dims[axis], n_out); goto done; }
    for (int k = 0; k < n_out; k++) parts[k] = x->dims[axis] / n_out;
  }
  r = 0;
  for (int k = 0; k < n_out && !r; k++) {
    struct shape y = si_shape_of(x);
    y.d[axis] = parts[k];
    r = si_set_result(c, k, x->dtype, &y);
  }
done:
  free(parts);
  return r;
}

int so_pad(struct sctx *c) {
  const struct ir_tensor *x = si_known(c, 0);
  int64_t pads[2 * IR_MAX_RANK];
  int n, r;
  if (!x) return 0;
  if (si_cur(c)->opset < 11) {
    const int64_t *a;
    n = ir_attr_ints(si_cur(c), "pads", &a);
    if (n < 0 || n > 2 * IR_MAX_RANK) return si_fail(c, "needs the pads attribute");
    memcpy(pads, a, (size_t)n * sizeof *pads);
  } else if ((r = si_const_ints(c, 1, pads, 2 * IR_MAX_RANK, &n)) <= 0) {
    return r;
  }
  if (n != 2 * x->rank) return si_fail(c, "%d pads for rank %d", n, x->rank);
  struct shape y = si_shape_of(x);
  for (int i = 0; i < x->rank; i++) {
    y.d[i] = x->dims[i] + pads[i] + pads[i + x->rank];
    if (pads[i] < -IR_MAX_DIM || pads[i] > IR_MAX_DIM || pads[i + x->rank] < -IR_MAX_DIM ||
        pads[i + x->rank] > IR_MAX_DIM || y.d[i] < 0)
      return si_fail(c, "pads of axis %d leave a size of %lld", i, (long long)y.d[i]);
  }
  return si_set_result(c, 0, x->dtype, &y);
}

int so_tile(struct sctx *c) {
  const struct ir_tensor *x = si_known(c, 0);
  int64_t rep[IR_MAX_RANK];
  int n, r;
  if (!x) return 0;
  if ((r = si_const_ints(c, 1, rep, IR_MAX_RANK, &n)) <= 0) return r;
  if (n != x->rank) return si_fail(c, "%d repeats for rank %d", n, x->rank);
  struct shape y = si_shape_of(x);
  for (int i = 0; i < n; i++) {
    if (rep[i] < 0 || rep[i] > IR_MAX_DIM) return si_fail(c, "repeat %lld of axis %d", (long long)rep[i], i);
    y.d[i] = x->dims[i] * rep[i];
  }
  return si_set_result(c, 0, x->dtype, &y);
}

int so_expand(struct sctx *c) {
  const struct ir_tensor *x = si_known(c, 0);
  struct shape s = {.rank = 0}, y;
  int n, r;
  if (!x) return 0;
  if ((r = si_const_ints(c, 1, s.d, IR_MAX_RANK, &n)) <= 0) return r;
  s.rank = n;
  for (int i = 0; i < n; i++)
    if (s.d[i] < 0 || s.d[i] > IR_MAX_DIM) return si_fail(c, "shape entry %d is %lld", i, (long long)s.d[i]);
  struct shape xs = si_shape_of(x);
  return si_broadcast(c, &xs, &s, &y) ? -1 : si_set_result(c, 0, x->dtype, &y);
}

/* ---- gathers ---- */

int so_gather_elements(struct sctx *c) {
  const struct ir_tensor *x = si_known(c, 0), *ix = si_known(c, 1);
  if (!x || !ix) return 0;
  if (ix->rank != x->rank) return si_fail(c, "indices have rank %d, data %d", ix->rank, x->rank);
  struct shape y = si_shape_of(ix);
  return si_set_result(c, 0, x->dtype, &y);
}

int so_gather_nd(struct sctx *c) {
  const struct ir_tensor *x = si_known(c, 0), *ix = si_known(c, 1);
  if (!x || !ix) return 0;
  int64_t b = ir_attr_int(si_cur(c), "batch_dims", 0);
  if (ix->rank < 1) return si_fail(c, "indices must have rank at least 1");
  int64_t k = ix->dims[ix->rank - 1];
  if (b < 0 || b >= ix->rank || b + k > x->rank) return si_fail(c, "batch_dims %lld and index depth %lld do not fit rank %d", (long long)b, (long long)k, x->rank);
  struct shape y = {.rank = 0};
  for (int i = 0; i < ix->rank - 1; i++) y.d[y.rank++] = ix->dims[i];
  if (y.rank + x->rank - (b + k) > IR_MAX_RANK) return si_fail(c, "result rank above %d", IR_MAX_RANK);
  for (int64_t i = b + k; i < x->rank; i++) y.d[y.rank++] = x->dims[i];
  return si_set_result(c, 0, x->dtype, &y);
}

/* DepthToSpace and SpaceToDepth: [N, C, H, W] and the blocksize. */
int so_depth_to_space(struct sctx *c) {
  const struct ir_tensor *x = si_known(c, 0);
  if (!x) return 0;
  int64_t b = ir_attr_int(si_cur(c), "blocksize", 0);
  int to_space = !strcmp(si_cur(c)->type, "DepthToSpace");
  if (x->rank != 4 || b < 1 || b > 4096) return si_fail(c, "needs a rank-4 input and a positive blocksize");
  struct shape y = si_shape_of(x);
  if (to_space) {
    if (x->dims[1] % (b * b)) return si_fail(c, "%lld channels do not divide by blocksize^2", (long long)x->dims[1]);
    y.d[1] /= b * b, y.d[2] *= b, y.d[3] *= b;
  } else {
    if (x->dims[2] % b || x->dims[3] % b) return si_fail(c, "height and width must divide by the blocksize");
    y.d[1] *= b * b, y.d[2] /= b, y.d[3] /= b;
  }
  return si_set_result(c, 0, x->dtype, &y);
}

/* Resize-10 (X, scales) and 11+ (X, roi, scales, sizes): sizes when given,
 * else floor(dim * scale), scaled by the roi for tf_crop_and_resize. */
int so_resize(struct sctx *c) {
  const struct ir_tensor *x = si_known(c, 0);
  double sc[IR_MAX_RANK], roi[2 * IR_MAX_RANK];
  int64_t sz[IR_MAX_RANK];
  int n, r, v10 = si_cur(c)->opset < 11;
  int si = v10 ? 1 : 2, zi = v10 ? -1 : 3;
  if (!x) return 0;
  struct shape y = si_shape_of(x);
  const struct ir_tensor *sizes = zi >= 0 ? si_known(c, zi) : NULL;
  if (zi >= 0 && si_has(c, zi) && !sizes) return 0;
  if (sizes && ir_tensor_numel(sizes) > 0) {
    if ((r = si_const_ints(c, zi, sz, IR_MAX_RANK, &n)) <= 0) return r;
    if (n != x->rank) return si_fail(c, "%d sizes for rank %d", n, x->rank);
    for (int i = 0; i < n; i++) {
      if (sz[i] < 0 || sz[i] > IR_MAX_DIM) return si_fail(c, "size %lld", (long long)sz[i]);
      y.d[i] = sz[i];
    }
    return si_set_result(c, 0, x->dtype, &y);
  }
  if ((r = si_const_f64(c, si, sc, IR_MAX_RANK, &n)) <= 0) return r ? r : si_has(c, si) ? 0 : si_fail(c, "needs scales or sizes");
  if (n != x->rank) return si_fail(c, "%d scales for rank %d", n, x->rank);
  int crop = !strcmp(ir_attr_string(si_cur(c), "coordinate_transformation_mode", ""), "tf_crop_and_resize");
  if (crop && (r = si_const_f64(c, 1, roi, 2 * IR_MAX_RANK, &n)) <= 0) return r;
  if (crop && n != 2 * x->rank) return si_fail(c, "roi needs %d values", 2 * x->rank);
  for (int i = 0; i < x->rank; i++) {
    double d = (double)x->dims[i] * (crop ? roi[i + x->rank] - roi[i] : 1.0) * sc[i];
    if (!(sc[i] > 0) || !(d >= 0) || d > (double)IR_MAX_DIM) return si_fail(c, "scale %g of axis %d", sc[i], i);
    y.d[i] = (int64_t)floor(d);
  }
  return si_set_result(c, 0, x->dtype, &y);
}

/* ---- data-dependent sizes ---- */

/* Compress: the kept slices along `axis` (or of the flattened input); the
 * count when the condition is a constant, else a capacity. */
int so_compress(struct sctx *c) {
  const struct ir_tensor *x = si_known(c, 0), *cond = si_known(c, 1);
  if (!x || !cond) return 0;
  const struct ir_attr *a = ir_attr_find(si_cur(c), "axis");
  int axis = -1;
  if (a && si_norm_axis(c, "axis", a->i, x->rank, &axis)) return -1;
  int64_t len = axis >= 0 ? x->dims[axis] : ir_tensor_numel(x), kept = len;
  if (cond->data) {
    kept = 0;
    for (int64_t i = 0; i < ir_tensor_numel(cond) && i < len; i++) kept += ir_load_i64(cond->dtype, cond->data, i) != 0;
  } else {
    si_set_dyn(c, 0);
  }
  struct shape y = axis >= 0 ? si_shape_of(x) : (struct shape){.rank = 1};
  y.d[axis >= 0 ? axis : 0] = kept;
  return si_set_result(c, 0, x->dtype, &y);
}

int so_non_zero(struct sctx *c) {
  const struct ir_tensor *x = si_known(c, 0);
  if (!x) return 0;
  struct shape y = {.rank = 2, .d = {x->rank, ir_tensor_numel(x)}};
  si_set_dyn(c, 0);
  return si_set_result(c, 0, IR_DT_I64, &y);
}

/* Unique: Y, indices, inverse_indices, counts (the last three optional). */
int so_unique(struct sctx *c) {
  const struct ir_tensor *x = si_known(c, 0);
  if (!x) return 0;
  const struct ir_attr *a = ir_attr_find(si_cur(c), "axis");
  int axis = -1, n_out = si_cur(c)->n_out;
  if (a && si_norm_axis(c, "axis", a->i, x->rank, &axis)) return -1;
  int64_t len = axis >= 0 ? x->dims[axis] : ir_tensor_numel(x);
  struct shape y = axis >= 0 ? si_shape_of(x) : (struct shape){.rank = 1, .d = {len}};
  struct shape v = {.rank = 1, .d = {len}};
  si_set_dyn(c, 0);
  if (si_set_result(c, 0, x->dtype, &y)) return -1;
  for (int k = 1; k < n_out; k++) {
    if (k != 2) si_set_dyn(c, k); /* inverse_indices has one entry per input slice */
    if (si_set_result(c, k, IR_DT_I64, &v)) return -1;
  }
  return 0;
}

/* ---- generators ---- */

int so_one_hot(struct sctx *c) {
  const struct ir_tensor *ix = si_known(c, 0), *vals = si_known(c, 2);
  double depth;
  int n, r, axis;
  if (!ix || !vals) return 0;
  if ((r = si_const_f64(c, 1, &depth, 1, &n)) <= 0) return r;
  if (n != 1 || !(depth >= 1) || depth > (double)IR_MAX_DIM) return si_fail(c, "depth must be one positive value");
  if (ix->rank + 1 > IR_MAX_RANK) return si_fail(c, "result rank above %d", IR_MAX_RANK);
  if (si_norm_axis(c, "axis", ir_attr_int(si_cur(c), "axis", -1), ix->rank + 1, &axis)) return -1;
  struct shape y = {.rank = ix->rank + 1};
  for (int i = 0, k = 0; i < y.rank; i++) y.d[i] = i == axis ? (int64_t)depth : ix->dims[k++];
  return si_set_result(c, 0, vals->dtype, &y);
}

int so_eye_like(struct sctx *c) {
  const struct ir_tensor *x = si_known(c, 0);
  if (!x) return 0;
  if (x->rank != 2) return si_fail(c, "needs a 2-D input");
  const struct ir_attr *a = ir_attr_find(si_cur(c), "dtype");
  int dt = a ? ir_dtype_from_onnx(a->i) : (int)x->dtype;
  if (dt < 0) return si_fail(c, "dtype %lld is not supported", (long long)a->i);
  struct shape y = si_shape_of(x);
  return si_set_result(c, 0, (enum ir_dtype)dt, &y);
}

int so_constant_of_shape(struct sctx *c) {
  struct shape y = {.rank = 0};
  int n, r;
  if ((r = si_const_ints(c, 0, y.d, IR_MAX_RANK, &n)) <= 0) return r;
  y.rank = n;
  for (int i = 0; i < n; i++)
    if (y.d[i] < 0 || y.d[i] > IR_MAX_DIM) return si_fail(c, "shape entry %d is %lld", i, (long long)y.d[i]);
  const struct ir_attr *a = ir_attr_find(si_cur(c), "value");
  enum ir_dtype dt = a ? c->g->tensors[a->tensor].dtype : IR_DT_F32;
  if (a && ir_tensor_numel(&c->g->tensors[a->tensor]) != 1) return si_fail(c, "value must hold one element");
  return si_set_result(c, 0, dt, &y);
}

int so_range(struct sctx *c) {
  const struct ir_tensor *s = si_const(c, 0), *l = si_const(c, 1), *d = si_const(c, 2);
  if (!s || !l || !d) return 0;
  if (ir_tensor_numel(s) != 1 || ir_tensor_numel(l) != 1 || ir_tensor_numel(d) != 1)
    return si_fail(c, "start, limit and delta must be scalars");
  int64_t n;
  if (ir_dtype_is_float(s->dtype)) {
    double a = ir_load_f64(s->dtype, s->data, 0), b = ir_load_f64(l->dtype, l->data, 0), st = ir_load_f64(d->dtype, d->data, 0);
    double cnt = ceil((b - a) / st);
    if (st == 0 || !(cnt < (double)IR_MAX_DIM)) return si_fail(c, "delta is 0 or the range is too long");
    n = cnt > 0 ? (int64_t)cnt : 0;
  } else {
    int64_t a = ir_load_i64(s->dtype, s->data, 0), b = ir_load_i64(l->dtype, l->data, 0), st = ir_load_i64(d->dtype, d->data, 0);
    if (st == 0) return si_fail(c, "delta is 0");
    double cnt = ceil(((double)b - (double)a) / (double)st);
    if (!(cnt < (double)IR_MAX_DIM)) return si_fail(c, "the range is too long");
    n = cnt > 0 ? (int64_t)cnt : 0;
  }
  struct shape y = {.rank = 1, .d = {n}};
  return si_set_result(c, 0, s->dtype, &y);
}

int so_top_k(struct sctx *c) {
  const struct ir_tensor *x = si_known(c, 0);
  int64_t k;
  int n, r, axis;
  if (!x) return 0;
  if ((r = si_const_ints(c, 1, &k, 1, &n)) <= 0) return r;
  if (si_axis_attr(c, "axis", -1, x->rank, &axis)) return -1;
  if (n != 1 || k < 0 || k > x->dims[axis]) return si_fail(c, "K must be one value in [0, %lld]", (long long)x->dims[axis]);
  struct shape y = si_shape_of(x);
  y.d[axis] = k;
  return si_set_result(c, 0, x->dtype, &y) || si_set_result(c, 1, IR_DT_I64, &y);
}

/* ---- Squeeze / Unsqueeze with computed axes ---- */

/* A generic Squeeze / Unsqueeze (axes operand not constant at import):
 * once the axes fold, it becomes the typed node. */
static int squeeze_like(struct sctx *c, enum ir_op_kind kind) {
  struct ir_node *n = si_cur(c);
  int64_t axes[IR_MAX_RANK];
  int cnt = 0, r;
  if (si_has(c, 1) && (r = si_const_ints(c, 1, axes, IR_MAX_RANK, &cnt)) <= 0) return r;
  if (si_has(c, 1)) ir_attr_set_ints(c->g, c->node, "axes", cnt, axes);
  n = si_cur(c);
  n->n_in = 1;
  n->op = kind;
  free(n->type);
  n->type = NULL;
  return si_infer_kind(c, kind);
}

int so_squeeze(struct sctx *c) { return squeeze_like(c, IR_OP_SQUEEZE); }
int so_unsqueeze(struct sctx *c) { return squeeze_like(c, IR_OP_UNSQUEEZE); }
