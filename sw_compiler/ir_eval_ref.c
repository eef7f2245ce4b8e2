/*
 * ir_eval_ref.c - the reference interpreter: runs an IR graph on the CPU.
 *
 * This is the golden model every other backend is compared against (the
 * lowering checks the accelerator against it; the ONNX node tests run it),
 * so it is written to be obviously right rather than fast: plain loops over
 * dense row-major buffers, one kernel per op, dispatched by one switch.
 * Float ops compute in f32 the way the ONNX reference does.  Integer ops
 * follow the ONNX spec: zero points are subtracted before multiplying,
 * products accumulate exactly (in int64, wrapped to int32 where ONNX says
 * int32), and requantization rounds half to even and saturates.  For
 * QLinearConv / QLinearMatMul the multiplier x_scale * w_scale / y_scale is
 * formed and applied in f32, as onnxruntime does.  The fused int8 ops of
 * pass_fuse.c (loom.QConv, QGemm, QAdd, QPool) follow the accelerator
 * instead: int32 accumulators that wrap, and the ALU's fixed-point REQUANT,
 * so a fused graph evaluated here matches fsim bit for bit.
 *
 * Preconditions: the graph verified and shape inference run, so every
 * operand and result has a known shape; kernels still check the sizes of
 * per-channel parameters and indices, which shapes alone do not bound.
 * The convolution and matrix kernels keep their innermost loop free of
 * bounds checks (precomputed valid ranges) so a ResNet-18 forward pass
 * takes seconds, not minutes.
 */
#include "sw_compiler/ir_eval.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "driver/core/intapprox.h"

/* ---- element access ---- */

double ev_ld(enum ir_dtype dt, const void *p, int64_t i) {
  switch (dt) {
  case IR_DT_F32: return ((const float *)p)[i];
  case IR_DT_I8: return ((const int8_t *)p)[i];
  case IR_DT_U8: return ((const uint8_t *)p)[i];
  case IR_DT_I32: return ((const int32_t *)p)[i];
  case IR_DT_I64: return (double)((const int64_t *)p)[i];
  default: LOOM_ASSERT(0); return 0;
  }
}

int64_t ev_ldi(enum ir_dtype dt, const void *p, int64_t i) {
  switch (dt) {
  case IR_DT_I8: return ((const int8_t *)p)[i];
  case IR_DT_U8: return ((const uint8_t *)p)[i];
  case IR_DT_I32: return ((const int32_t *)p)[i];
  case IR_DT_I64: return ((const int64_t *)p)[i];
  default: LOOM_ASSERT(0); return 0;
  }
}

/* Stores v, saturating to the range of integer types (NaN stores 0). */
void ev_st(enum ir_dtype dt, void *p, int64_t i, double v) {
  if (dt != IR_DT_F32 && isnan(v)) v = 0; /* NaN has no integer value */
  switch (dt) {
  case IR_DT_F32: ((float *)p)[i] = (float)v; break;
  case IR_DT_I8: ((int8_t *)p)[i] = (int8_t)(v < -128 ? -128 : v > 127 ? 127 : v); break;
  case IR_DT_U8: ((uint8_t *)p)[i] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v); break;
  case IR_DT_I32: ((int32_t *)p)[i] = (int32_t)(v < INT32_MIN ? INT32_MIN : v > INT32_MAX ? INT32_MAX : v); break;
  case IR_DT_I64: ((int64_t *)p)[i] = v < -9.2e18 ? INT64_MIN : v > 9.2e18 ? INT64_MAX : (int64_t)v; break;
  default: LOOM_ASSERT(0);
  }
}

/* Round half to even (the default rounding mode), add the zero point,
 * saturate, store: the last step of every requantization. */
void ev_st_round(enum ir_dtype dt, void *p, int64_t i, float v, double zp) {
  ev_st(dt, p, i, (double)nearbyintf(v) + zp);
}

/* Parameter i of a per-tensor (1 value) or per-channel (count values)
 * operand; the kernels check counts with param_count first. */
double ev_param(const struct ir_tensor *t, const void *buf, int64_t i, double dflt) {
  if (!t) return dflt;
  return ev_ld(t->dtype, buf, numel(t) == 1 ? 0 : i);
}

int ev_param_count(struct ectx *c, int k, int64_t channels) {
  const struct ir_tensor *t = T(c, k);
  if (!t || numel(t) == 1 || numel(t) == channels) return 0;
  return ir_fail(c->err, c->g, c->node, "operand %d %%%s has %lld values, needs 1 or %lld", k, t->name, (long long)numel(t),
              (long long)channels);
}

/* ---- broadcasting ---- */

/* Strides of t's elements seen through the broadcast result shape y. */
void ev_bcast_strides(const struct ir_tensor *t, const struct ir_tensor *y, int64_t *str) {
  int64_t s = 1;
  for (int i = y->rank - 1; i >= 0; i--) {
    int ti = i - (y->rank - t->rank);
    int64_t d = ti >= 0 ? t->dims[ti] : 1;
    str[i] = d == 1 ? 0 : s;
    s *= d;
  }
}

/* Advances the multi-index idx over dims; adds the moves to the offsets. */
void ev_odometer(int rank, const int64_t *dims, int64_t *idx, int64_t *oa, const int64_t *sa,
                     int64_t *ob, const int64_t *sb) {
  for (int i = rank - 1; i >= 0; i--) {
    idx[i]++;
    *oa += sa[i];
    *ob += sb[i];
    if (idx[i] < dims[i]) return;
    *oa -= sa[i] * dims[i];
    *ob -= sb[i] * dims[i];
    idx[i] = 0;
  }
}

static int eval_binary(struct ectx *c) {
  const struct ir_tensor *a = T(c, 0), *b = T(c, 1), *y = R(c);
  int64_t sa[IR_MAX_RANK], sb[IR_MAX_RANK], idx[IR_MAX_RANK] = {0}, oa = 0, ob = 0, n = numel(y);
  ev_bcast_strides(a, y, sa);
  ev_bcast_strides(b, y, sb);
  int mul = c->n->op == IR_OP_MUL;
  for (int64_t i = 0; i < n; i++) {
    if (y->dtype == IR_DT_F32) {
      float u = ((const float *)IN(c, 0))[oa], v = ((const float *)IN(c, 1))[ob];
      ((float *)c->out[0])[i] = mul ? u * v : u + v;
    } else {
      /* wrap around like the hardware; unsigned to keep C defined */
      uint64_t u = (uint64_t)ev_ldi(a->dtype, IN(c, 0), oa), v = (uint64_t)ev_ldi(b->dtype, IN(c, 1), ob);
      int64_t r = (int64_t)(mul ? u * v : u + v);
      if (y->dtype == IR_DT_I64) ((int64_t *)c->out[0])[i] = r;
      else if (y->dtype == IR_DT_I32) ((int32_t *)c->out[0])[i] = (int32_t)(uint32_t)r;
      else ev_st(y->dtype, c->out[0], i, (double)r);
    }
    ev_odometer(y->rank, y->dims, idx, &oa, sa, &ob, sb);
  }
  return 0;
}

/* ---- elementwise ---- */

static int eval_relu_clip(struct ectx *c) {
  const struct ir_tensor *x = T(c, 0), *lo = T(c, 1), *hi = T(c, 2);
  if ((lo && numel(lo) != 1) || (hi && numel(hi) != 1)) return ir_fail(c->err, c->g, c->node, "min and max must be scalars");
  double mn = c->n->op == IR_OP_RELU ? 0 : ev_param(lo, IN(c, 1), 0, -INFINITY);
  double mx = ev_param(hi, IN(c, 2), 0, INFINITY);
  if (x->dtype == IR_DT_F32) { /* the same clamp without the per-element dtype switch */
    const float *xv = IN(c, 0), fmn = (float)mn, fmx = (float)mx;
    float *yv = c->out[0];
    for (int64_t i = 0, n = numel(x); i < n; i++) yv[i] = xv[i] < fmn ? fmn : xv[i] > fmx ? fmx : xv[i];
    return 0;
  }
  for (int64_t i = 0, n = numel(x); i < n; i++) {
    double v = ev_ld(x->dtype, IN(c, 0), i);
    ev_st(x->dtype, c->out[0], i, v < mn ? mn : v > mx ? mx : v);
  }
  return 0;
}

static int eval_copy(struct ectx *c) {
  int64_t bytes = ir_tensor_bytes(R(c));
  if (bytes != ir_tensor_bytes(T(c, 0))) return ir_fail(c->err, c->g, c->node, "result and operand sizes differ");
  memcpy(c->out[0], IN(c, 0), (size_t)bytes);
  return 0;
}

/* ---- normalization and softmax ---- */

static int eval_batchnorm(struct ectx *c) {
  const struct ir_tensor *x = T(c, 0);
  int64_t ch = x->dims[1], inner = numel(x) / (x->dims[0] ? x->dims[0] : 1) / (ch ? ch : 1);
  float eps = ir_attr_float(c->n, "epsilon", 1e-5f);
  const float *in = IN(c, 0), *s = IN(c, 1), *b = IN(c, 2), *mean = IN(c, 3), *var = IN(c, 4);
  float *y = c->out[0];
  for (int64_t i = 0, n = numel(x); i < n; i++) {
    int64_t k = (i / inner) % ch;
    y[i] = (in[i] - mean[k]) / sqrtf(var[k] + eps) * s[k] + b[k];
  }
  return 0;
}

/* The int8 Softmax of compile_qsoftmax.c: int8 codes in and out along the
 * last axis, the integer arithmetic of the host op QSOFTMAX (the same
 * intapprox.c code), with the float mask of operand 1 when it has one. */
static int eval_softmax_int8(struct ectx *c) {
  const struct ir_tensor *x = T(c, 0), *y = &c->g->tensors[c->n->out[0]], *mk = c->n->n_in > 1 ? T(c, 1) : NULL;
  struct loom_isoftmax s;
  int64_t len = x->rank > 0 ? x->dims[x->rank - 1] : 0, n = numel(x), group = ir_attr_int(c->n, "mask_group", 1);
  int64_t mrows = mk && len > 0 ? numel(mk) / len : 1;
  if (y->dtype != IR_DT_I8 || x->quant.n != 1 || y->quant.n != 1 || numel(y) != n || y->rank < 1 ||
      y->dims[y->rank - 1] != len || len > LOOM_ISOFTMAX_MAX_ROW || loom_isoftmax_init(x->quant.scale[0], y->quant.scale[0], y->quant.zero_point[0], &s))
    return ir_fail(c->err, c->g, c->node, "int8 Softmax: result shape or scales out of range");
  if (mk && (mk->dtype != IR_DT_F32 || mk->rank < 1 || mk->dims[mk->rank - 1] != len || mrows < 1 || group < 1 ||
             (len && (n / len % group || n / len / group % mrows)) || loom_isoftmax_mask_init(x->quant.scale[0], &s)))
    return ir_fail(c->err, c->g, c->node, "int8 Softmax: the mask does not broadcast over the rows");
  if (len > 0 && !mk) loom_isoftmax_rows(&s, IN(c, 0), len, c->out[0], len, n / len, len);
  if (len > 0 && mk) {
    const float *f = IN(c, 1);
    int32_t *off = ir_xmalloc((size_t)numel(mk) * sizeof *off);
    for (int64_t i = 0; i < numel(mk); i++) off[i] = loom_isoftmax_offset(&s, f[i]);
    loom_isoftmax_masked_rows(&s, IN(c, 0), len, c->out[0], len, n / len, len, off, mrows, group);
    free(off);
  }
  return 0;
}

/* The int8 LayerNormalization of compile_qlayernorm.c: int8 codes in and
 * out along the last axis, float gamma and beta, the integer arithmetic of
 * the host op QLAYERNORM (the same intapprox.c code). */
static int eval_layernorm_int8(struct ectx *c) {
  const struct ir_tensor *x = T(c, 0), *y = R(c), *gt = T(c, 1), *bt = T(c, 2);
  struct loom_ilayernorm l;
  int64_t len = x->rank > 0 ? x->dims[x->rank - 1] : 0, n = numel(x);
  if (y->dtype != IR_DT_I8 || x->quant.n != 1 || y->quant.n != 1 || numel(y) != n || y->rank < 1 ||
      y->dims[y->rank - 1] != len || len < 1 || len > LOOM_ILAYERNORM_MAX_ROW || !gt || gt->dtype != IR_DT_F32 ||
      (bt && bt->dtype != IR_DT_F32))
    return ir_fail(c->err, c->g, c->node, "int8 LayerNormalization: result shape or operands out of range");
  int32_t *g_b = ir_xmalloc(2 * (size_t)len * sizeof *g_b);
  int bad = loom_ilayernorm_init(x->quant.scale[0], x->quant.zero_point[0], y->quant.scale[0], y->quant.zero_point[0],
                                 ir_attr_float(c->n, "epsilon", 1e-5f), len, IN(c, 1), numel(gt),
                                 bt ? IN(c, 2) : NULL, bt ? numel(bt) : 0, g_b, g_b + len, &l);
  if (!bad) loom_ilayernorm_rows(&l, IN(c, 0), len, c->out[0], len, n / len);
  free(g_b);
  return bad ? ir_fail(c->err, c->g, c->node, "int8 LayerNormalization: scales, gamma, beta or epsilon out of range")
             : 0;
}

static int eval_softmax(struct ectx *c) {
  const struct ir_tensor *x = T(c, 0);
  if (x->dtype == IR_DT_I8) return eval_softmax_int8(c);
  int64_t axis = ir_attr_int(c->n, "axis", -1);
  if (axis < 0) axis += x->rank;
  int64_t len = x->dims[axis], inner = 1, total = numel(x);
  for (int i = (int)axis + 1; i < x->rank; i++) inner *= x->dims[i];
  if (ir_attr_int(c->n, "legacy_2d", 0)) len *= inner, inner = 1;
  int64_t outer = len > 0 && inner > 0 ? total / (len * inner) : 0;
  const float *in = IN(c, 0);
  float *y = c->out[0];
  for (int64_t o = 0; o < outer; o++)
    for (int64_t j = 0; j < inner; j++) {
      const float *p = in + o * len * inner + j;
      float *q = y + o * len * inner + j, mx = -INFINITY, sum = 0;
      for (int64_t i = 0; i < len; i++) mx = fmaxf(mx, p[i * inner]);
      for (int64_t i = 0; i < len; i++) sum += q[i * inner] = expf(p[i * inner] - mx);
      for (int64_t i = 0; i < len; i++) q[i * inner] /= sum;
    }
  return 0;
}

/* ---- quantization ---- */

/* Channel count and the stride of the quantization axis of operand 0. */
static int quant_axis(struct ectx *c, int64_t *channels, int64_t *inner) {
  const struct ir_tensor *x = T(c, 0);
  int64_t axis = ir_attr_int(c->n, "axis", 1);
  if (axis < 0) axis += x->rank;
  *channels = 1, *inner = 1;
  if (numel(T(c, 1)) == 1) return ev_param_count(c, 2, 1);
  if (axis < 0 || axis >= x->rank) return ir_fail(c->err, c->g, c->node, "axis out of range");
  *channels = x->dims[axis];
  for (int i = (int)axis + 1; i < x->rank; i++) *inner *= x->dims[i];
  return ev_param_count(c, 1, *channels) || ev_param_count(c, 2, *channels);
}

static int eval_quantize(struct ectx *c) {
  const struct ir_tensor *x = T(c, 0);
  int64_t ch, inner;
  if (quant_axis(c, &ch, &inner)) return -1;
  for (int64_t i = 0, n = numel(x); i < n; i++) {
    int64_t k = (i / inner) % ch;
    float v = (float)ev_ld(x->dtype, IN(c, 0), i) / (float)ev_param(T(c, 1), IN(c, 1), k, 1);
    ev_st_round(R(c)->dtype, c->out[0], i, v, ev_param(T(c, 2), IN(c, 2), k, 0));
  }
  return 0;
}

static int eval_dequantize(struct ectx *c) {
  const struct ir_tensor *x = T(c, 0);
  int64_t ch, inner;
  if (quant_axis(c, &ch, &inner)) return -1;
  for (int64_t i = 0, n = numel(x); i < n; i++) {
    int64_t k = (i / inner) % ch;
    int64_t q = ev_ldi(x->dtype, IN(c, 0), i) - (int64_t)ev_param(T(c, 2), IN(c, 2), k, 0);
    ((float *)c->out[0])[i] = (float)q * (float)ev_param(T(c, 1), IN(c, 1), k, 1);
  }
  return 0;
}

/* ---- data movement ---- */

static int eval_transpose(struct ectx *c) {
  const struct ir_tensor *x = T(c, 0), *y = R(c);
  int64_t perm[IR_MAX_RANK], xs[IR_MAX_RANK], sx[IR_MAX_RANK], zero[IR_MAX_RANK] = {0};
  int64_t idx[IR_MAX_RANK] = {0}, ox = 0, dummy = 0;
  const struct ir_attr *pa = ir_attr_find(c->n, "perm");
  for (int i = 0; i < x->rank; i++) perm[i] = pa ? pa->ints[i] : x->rank - 1 - i;
  int64_t s = 1;
  for (int i = x->rank - 1; i >= 0; i--) xs[i] = s, s *= x->dims[i];
  for (int i = 0; i < y->rank; i++) sx[i] = xs[perm[i]];
  size_t es = ir_dtype_size(x->dtype);
  for (int64_t i = 0, n = numel(y); i < n; i++) {
    memcpy((char *)c->out[0] + i * es, (const char *)IN(c, 0) + ox * es, es);
    ev_odometer(y->rank, y->dims, idx, &ox, sx, &dummy, zero);
  }
  return 0;
}

static int eval_concat(struct ectx *c) {
  const struct ir_tensor *y = R(c);
  int64_t axis = ir_attr_int(c->n, "axis", 0);
  if (axis < 0) axis += y->rank;
  int64_t outer = 1, inner = ir_dtype_size(y->dtype);
  for (int i = 0; i < axis; i++) outer *= y->dims[i];
  for (int i = (int)axis + 1; i < y->rank; i++) inner *= y->dims[i];
  char *dst = c->out[0];
  for (int64_t o = 0; o < outer; o++)
    for (int k = 0; k < c->n->n_in; k++) {
      int64_t chunk = T(c, k)->dims[axis] * inner;
      memcpy(dst, (const char *)IN(c, k) + o * chunk, (size_t)chunk);
      dst += chunk;
    }
  return 0;
}

static int eval_gather(struct ectx *c) {
  const struct ir_tensor *x = T(c, 0), *ix = T(c, 1);
  int64_t axis = ir_attr_int(c->n, "axis", 0);
  if (axis < 0) axis += x->rank;
  int64_t outer = 1, inner = ir_dtype_size(x->dtype), len = x->dims[axis], ni = numel(ix);
  for (int i = 0; i < axis; i++) outer *= x->dims[i];
  for (int i = (int)axis + 1; i < x->rank; i++) inner *= x->dims[i];
  char *dst = c->out[0];
  for (int64_t o = 0; o < outer; o++)
    for (int64_t j = 0; j < ni; j++) {
      int64_t k = ev_ldi(ix->dtype, IN(c, 1), j);
      if (k < -len || k >= len) return ir_fail(c->err, c->g, c->node, "index %lld is out of range [-%lld, %lld)", (long long)k, (long long)len, (long long)len);
      if (k < 0) k += len;
      memcpy(dst, (const char *)IN(c, 0) + (o * len + k) * inner, (size_t)inner);
      dst += inner;
    }
  return 0;
}

static int eval_shape(struct ectx *c) {
  const struct ir_tensor *x = T(c, 0);
  int64_t start = ir_attr_int(c->n, "start", 0);
  if (start < 0) start += x->rank;
  if (start < 0) start = 0;
  for (int64_t i = 0, n = numel(R(c)); i < n; i++) ((int64_t *)c->out[0])[i] = x->dims[start + i];
  return 0;
}

static int eval_constant(struct ectx *c) {
  const struct ir_tensor *v = &c->g->tensors[ir_attr_find(c->n, "value")->tensor];
  if ((int64_t)v->nbytes != ir_tensor_bytes(R(c))) return ir_fail(c->err, c->g, c->node, "value and result sizes differ");
  memcpy(c->out[0], v->data, v->nbytes);
  return 0;
}

static int eval_dispatch(struct ectx *c) {
  switch (c->n->op) {
  case IR_OP_CONV: return ev_conv(c);
  case IR_OP_GEMM: return ev_gemm(c);
  case IR_OP_MATMUL: return ev_matmul(c);
  case IR_OP_RELU: case IR_OP_CLIP: return eval_relu_clip(c);
  case IR_OP_ADD: case IR_OP_MUL: return eval_binary(c);
  case IR_OP_MAXPOOL: return ev_maxpool(c);
  case IR_OP_AVERAGEPOOL: return ev_avgpool(c);
  case IR_OP_GLOBALAVERAGEPOOL: return ev_global_avgpool(c);
  case IR_OP_FLATTEN: case IR_OP_RESHAPE: case IR_OP_IDENTITY:
  case IR_OP_UNSQUEEZE: case IR_OP_SQUEEZE:
    return eval_copy(c);
  case IR_OP_TRANSPOSE: return eval_transpose(c);
  case IR_OP_CONCAT: return eval_concat(c);
  case IR_OP_BATCHNORM: return eval_batchnorm(c);
  case IR_OP_SOFTMAX: return eval_softmax(c);
  case IR_OP_QUANTIZELINEAR: return eval_quantize(c);
  case IR_OP_DEQUANTIZELINEAR: return eval_dequantize(c);
  case IR_OP_QLINEARCONV: return ev_qlinear_conv(c);
  case IR_OP_QLINEARMATMUL: return ev_qlinear_matmul(c);
  case IR_OP_CONVINTEGER: return ev_conv_integer(c);
  case IR_OP_MATMULINTEGER: return ev_matmul_integer(c);
  case IR_OP_CONSTANT: return eval_constant(c);
  case IR_OP_SHAPE: return eval_shape(c);
  case IR_OP_GATHER: return eval_gather(c);
  case IR_OP_QCONV: return ev_qconv(c);
  case IR_OP_QGEMM: return ev_qgemm(c);
  case IR_OP_QADD: return ev_qadd(c);
  case IR_OP_QPOOL: return ev_qpool(c);
  case IR_OP_ONNX:
    if (!strcmp(c->n->type, "LayerNormalization") && T(c, 0)->dtype == IR_DT_I8) return eval_layernorm_int8(c);
    return ir_eval_kernel(c->g, c->node, c->in, c->out, NULL, c->err);
  case IR_OP_COUNT: break;
  }
  LOOM_ASSERT(0);
  return -1;
}

/* Every operand and result must have a known shape (shape inference). */
static int check_shapes(struct ectx *c) {
  for (int k = 0; k < c->n->n_in + c->n->n_out; k++) {
    int t = k < c->n->n_in ? c->n->in[k] : c->n->out[k - c->n->n_in];
    if (t >= 0 && !ir_shape_known(&c->g->tensors[t]))
      return ir_fail(c->err, c->g, c->node, "%%%s has no known type; run shape inference first", c->g->tensors[t].name);
  }
  return 0;
}

int ir_eval_node(const struct ir_graph *g, int node, const void *const *in, void *const *out,
                 struct ir_error *err) {
  struct ectx c = {.g = g, .n = &g->nodes[node], .node = node, .in = in, .out = out, .err = err};
  if (check_shapes(&c)) return -1;
  for (int k = 0; k < c.n->n_in; k++)
    if (c.n->in[k] >= 0 && !in[k]) return ir_fail(c.err, c.g, c.node, "operand %d has no value", k);
  return eval_dispatch(&c);
}

/* Buffers of a node's operands and results, gathered from vals[]. */
static int run_node(const struct ir_graph *g, int i, void **vals, struct ir_error *err) {
  const struct ir_node *n = &g->nodes[i];
  const void **in = ir_xcalloc((size_t)n->n_in + 1, sizeof *in);
  void **out = ir_xcalloc((size_t)n->n_out + 1, sizeof *out);
  int rc = 0;
  for (int k = 0; k < n->n_in; k++) in[k] = n->in[k] >= 0 ? vals[n->in[k]] : NULL;
  for (int k = 0; k < n->n_out && !rc; k++) {
    int64_t bytes = ir_tensor_bytes(&g->tensors[n->out[k]]);
    if (bytes < 0) rc = -1;
    else out[k] = vals[n->out[k]] = ir_xcalloc(1, (size_t)bytes);
  }
  if (!rc) rc = ir_eval_node(g, i, in, out, err);
  else {
    char where[256];
    ir_errorf(err, "%s: %s: a result has no known type; run shape inference first", g->source,
              ir_node_where(g, i, where, sizeof where));
  }
  free(in);
  free(out);
  return rc;
}

int ir_eval_ref(const struct ir_graph *g, const void *const *inputs, void **outputs,
                struct ir_error *err) {
  void **vals = ir_xcalloc((size_t)g->n_tensors + 1, sizeof *vals);
  char *owned = ir_xcalloc((size_t)g->n_tensors + 1, 1);
  int rc = 0;
  for (int t = 0; t < g->n_tensors; t++) vals[t] = g->tensors[t].data;
  for (int i = 0; i < g->n_inputs; i++) vals[g->inputs[i]] = (void *)inputs[i];
  for (int i = 0; i < g->n_nodes && !rc; i++) {
    if (g->nodes[i].dead) continue;
    rc = run_node(g, i, vals, err);
    for (int k = 0; k < g->nodes[i].n_out; k++) owned[g->nodes[i].out[k]] = 1;
  }
  for (int i = 0; i < g->n_outputs; i++) {
    const struct ir_tensor *t = &g->tensors[g->outputs[i]];
    int64_t bytes = ir_tensor_bytes(t);
    outputs[i] = NULL;
    if (rc || bytes < 0 || !vals[g->outputs[i]]) continue;
    outputs[i] = ir_xmalloc((size_t)bytes);
    memcpy(outputs[i], vals[g->outputs[i]], (size_t)bytes);
  }
  for (int t = 0; t < g->n_tensors; t++)
    if (owned[t]) free(vals[t]);
  free(vals);
  free(owned);
  return rc;
}
