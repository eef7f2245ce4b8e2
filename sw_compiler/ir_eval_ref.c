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
#include "sw_compiler/compiler.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

struct ectx {
  const struct ir_graph *g;
  const struct ir_node *n;
  int node;
  const void *const *in;
  void *const *out;
  struct ir_error *err;
};

/* Operand k's tensor, or NULL when absent. */
static const struct ir_tensor *T(struct ectx *c, int k) {
  return k < c->n->n_in && c->n->in[k] >= 0 ? &c->g->tensors[c->n->in[k]] : NULL;
}
static const struct ir_tensor *R(struct ectx *c) { return &c->g->tensors[c->n->out[0]]; }
static const void *IN(struct ectx *c, int k) { return k < c->n->n_in ? c->in[k] : NULL; }
static int64_t numel(const struct ir_tensor *t) { return ir_tensor_numel(t); }

/* ---- element access ---- */

static double ld(enum ir_dtype dt, const void *p, int64_t i) {
  switch (dt) {
  case IR_DT_F32: return ((const float *)p)[i];
  case IR_DT_I8: return ((const int8_t *)p)[i];
  case IR_DT_U8: return ((const uint8_t *)p)[i];
  case IR_DT_I32: return ((const int32_t *)p)[i];
  case IR_DT_I64: return (double)((const int64_t *)p)[i];
  default: LOOM_ASSERT(0); return 0;
  }
}

static int64_t ldi(enum ir_dtype dt, const void *p, int64_t i) {
  switch (dt) {
  case IR_DT_I8: return ((const int8_t *)p)[i];
  case IR_DT_U8: return ((const uint8_t *)p)[i];
  case IR_DT_I32: return ((const int32_t *)p)[i];
  case IR_DT_I64: return ((const int64_t *)p)[i];
  default: LOOM_ASSERT(0); return 0;
  }
}

/* Stores v, saturating to the range of integer types (NaN stores 0). */
static void st(enum ir_dtype dt, void *p, int64_t i, double v) {
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
static void st_round(enum ir_dtype dt, void *p, int64_t i, float v, double zp) {
  st(dt, p, i, (double)nearbyintf(v) + zp);
}

/* Parameter i of a per-tensor (1 value) or per-channel (count values)
 * operand; the kernels check counts with param_count first. */
static double param(const struct ir_tensor *t, const void *buf, int64_t i, double dflt) {
  if (!t) return dflt;
  return ld(t->dtype, buf, numel(t) == 1 ? 0 : i);
}

static int param_count(struct ectx *c, int k, int64_t channels) {
  const struct ir_tensor *t = T(c, k);
  if (!t || numel(t) == 1 || numel(t) == channels) return 0;
  return ir_fail(c->err, c->g, c->node, "operand %d %%%s has %lld values, needs 1 or %lld", k, t->name, (long long)numel(t),
              (long long)channels);
}

/* ---- broadcasting ---- */

/* Strides of t's elements seen through the broadcast result shape y. */
static void bcast_strides(const struct ir_tensor *t, const struct ir_tensor *y, int64_t *str) {
  int64_t s = 1;
  for (int i = y->rank - 1; i >= 0; i--) {
    int ti = i - (y->rank - t->rank);
    int64_t d = ti >= 0 ? t->dims[ti] : 1;
    str[i] = d == 1 ? 0 : s;
    s *= d;
  }
}

/* Advances the multi-index idx over dims; adds the moves to the offsets. */
static void odometer(int rank, const int64_t *dims, int64_t *idx, int64_t *oa, const int64_t *sa,
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
  bcast_strides(a, y, sa);
  bcast_strides(b, y, sb);
  int mul = c->n->op == IR_OP_MUL;
  for (int64_t i = 0; i < n; i++) {
    if (y->dtype == IR_DT_F32) {
      float u = ((const float *)IN(c, 0))[oa], v = ((const float *)IN(c, 1))[ob];
      ((float *)c->out[0])[i] = mul ? u * v : u + v;
    } else {
      /* wrap around like the hardware; unsigned to keep C defined */
      uint64_t u = (uint64_t)ldi(a->dtype, IN(c, 0), oa), v = (uint64_t)ldi(b->dtype, IN(c, 1), ob);
      int64_t r = (int64_t)(mul ? u * v : u + v);
      if (y->dtype == IR_DT_I64) ((int64_t *)c->out[0])[i] = r;
      else if (y->dtype == IR_DT_I32) ((int32_t *)c->out[0])[i] = (int32_t)(uint32_t)r;
      else st(y->dtype, c->out[0], i, (double)r);
    }
    odometer(y->rank, y->dims, idx, &oa, sa, &ob, sb);
  }
  return 0;
}

/* ---- elementwise ---- */

static int eval_relu_clip(struct ectx *c) {
  const struct ir_tensor *x = T(c, 0), *lo = T(c, 1), *hi = T(c, 2);
  if ((lo && numel(lo) != 1) || (hi && numel(hi) != 1)) return ir_fail(c->err, c->g, c->node, "min and max must be scalars");
  double mn = c->n->op == IR_OP_RELU ? 0 : param(lo, IN(c, 1), 0, -INFINITY);
  double mx = param(hi, IN(c, 2), 0, INFINITY);
  if (x->dtype == IR_DT_F32) { /* the same clamp without the per-element dtype switch */
    const float *xv = IN(c, 0), fmn = (float)mn, fmx = (float)mx;
    float *yv = c->out[0];
    for (int64_t i = 0, n = numel(x); i < n; i++) yv[i] = xv[i] < fmn ? fmn : xv[i] > fmx ? fmx : xv[i];
    return 0;
  }
  for (int64_t i = 0, n = numel(x); i < n; i++) {
    double v = ld(x->dtype, IN(c, 0), i);
    st(x->dtype, c->out[0], i, v < mn ? mn : v > mx ? mx : v);
  }
  return 0;
}

static int eval_copy(struct ectx *c) {
  int64_t bytes = ir_tensor_bytes(R(c));
  if (bytes != ir_tensor_bytes(T(c, 0))) return ir_fail(c->err, c->g, c->node, "result and operand sizes differ");
  memcpy(c->out[0], IN(c, 0), (size_t)bytes);
  return 0;
}

/* ---- convolution ---- */

static int64_t attr_at(const struct ir_node *n, const char *name, int i, int64_t dflt) {
  const struct ir_attr *a = ir_attr_find(n, name);
  return a && a->kind == IR_ATTR_INTS && i < a->n ? a->ints[i] : dflt;
}

/* A 2-D view of a 1-D or 2-D window op (struct conv_geo, compiler.h):
 * everything in elements. */
static int window_geo(struct ectx *c, const struct ir_tensor *x, const struct ir_tensor *y,
                      struct conv_geo *g) {
  if (ir_attr_find(c->n, "auto_pad")) return ir_fail(c->err, c->g, c->node, "auto_pad is still set; run shape inference first");
  int two = x->rank == 4, nsp = x->rank - 2;
  g->n = x->dims[0], g->c = x->dims[1];
  g->h = two ? x->dims[2] : 1, g->w = x->dims[x->rank - 1];
  g->oh = two ? y->dims[2] : 1, g->ow = y->dims[y->rank - 1];
  g->sh = two ? attr_at(c->n, "strides", 0, 1) : 1, g->sw = attr_at(c->n, "strides", nsp - 1, 1);
  g->dh = two ? attr_at(c->n, "dilations", 0, 1) : 1, g->dw = attr_at(c->n, "dilations", nsp - 1, 1);
  g->pt = two ? attr_at(c->n, "pads", 0, 0) : 0, g->pl = attr_at(c->n, "pads", nsp - 1, 0);
  g->kh = two ? attr_at(c->n, "kernel_shape", 0, 1) : 1, g->kw = attr_at(c->n, "kernel_shape", nsp - 1, 1);
  g->group = ir_attr_int(c->n, "group", 1);
  if (x->rank < 3 || x->rank > 4) return ir_fail(c->err, c->g, c->node, "only 1-D and 2-D windows are supported");
  return 0;
}

/* Output columns [lo, hi) whose input column ow*s - p + k*d is inside [0, w). */
static void valid_range(int64_t out, int64_t in, int64_t s, int64_t p, int64_t off, int64_t *lo, int64_t *hi) {
  int64_t base = off - p; /* input index = o * s + base */
  *lo = base >= 0 ? 0 : (-base + s - 1) / s;
  *hi = in - base <= 0 ? 0 : (in - base + s - 1) / s;
  if (*hi > out) *hi = out;
  if (*lo > *hi) *lo = *hi;
}

/* y[n][m] += sum over the group's channels and the window; y is pre-set
 * with the bias.  Instantiated for int32 operands with int64 accumulators
 * (integer convs); the float conv, same order, is conv_f32.c. */
#define CONV_CORE(NAME, T, A)                                                               \
  static void NAME(const struct conv_geo *g, const T *x, const T *w, A *y) {                \
    int64_t mg = g->m / g->group;                                                           \
    for (int64_t n = 0; n < g->n; n++)                                                      \
      for (int64_t m = 0; m < g->m; m++) {                                                  \
        A *yp = y + (n * g->m + m) * g->oh * g->ow;                                         \
        int64_t c0 = (m / mg) * g->cg;                                                      \
        for (int64_t ci = 0; ci < g->cg; ci++) {                                            \
          const T *xp = x + (n * g->c + c0 + ci) * g->h * g->w;                             \
          for (int64_t kh = 0; kh < g->kh; kh++)                                            \
            for (int64_t kw = 0; kw < g->kw; kw++) {                                        \
              A wv = (A)w[((m * g->cg + ci) * g->kh + kh) * g->kw + kw];                    \
              int64_t hlo, hhi, wlo, whi;                                                   \
              valid_range(g->oh, g->h, g->sh, g->pt, kh * g->dh, &hlo, &hhi);              \
              valid_range(g->ow, g->w, g->sw, g->pl, kw * g->dw, &wlo, &whi);              \
              for (int64_t oh = hlo; oh < hhi; oh++) {                                      \
                int64_t base = (oh * g->sh - g->pt + kh * g->dh) * g->w - g->pl + kw * g->dw; \
                A *yr = yp + oh * g->ow;                                                    \
                for (int64_t ow = wlo; ow < whi; ow++) yr[ow] += wv * (A)xp[base + ow * g->sw]; \
              }                                                                             \
            }                                                                               \
        }                                                                                   \
      }                                                                                     \
  }
CONV_CORE(conv_core_i32, int32_t, int64_t)

static int conv_geo_full(struct ectx *c, int xi, int wi, struct conv_geo *g) {
  const struct ir_tensor *w = T(c, wi);
  if (window_geo(c, T(c, xi), R(c), g)) return -1;
  g->m = w->dims[0], g->cg = w->dims[1];
  if (g->group < 1 || g->c != g->cg * g->group || g->m % g->group) return ir_fail(c->err, c->g, c->node, "channels do not fit group");
  return 0;
}

static int eval_conv(struct ectx *c) {
  struct conv_geo g;
  if (conv_geo_full(c, 0, 1, &g)) return -1;
  float *y = c->out[0];
  const float *b = IN(c, 2);
  conv_f32(&g, IN(c, 0), IN(c, 1), b, y);
  return 0;
}

/* Operand k minus its zero point (operand zk; per channel along axis 0 of
 * a weight when `per_row` elements share one zero point), as int32. */
static int32_t *shifted(struct ectx *c, int k, int zk, int64_t per_row) {
  const struct ir_tensor *t = T(c, k), *z = T(c, zk);
  int64_t n = numel(t);
  int32_t *v = ir_xmalloc((size_t)n * sizeof *v);
  for (int64_t i = 0; i < n; i++)
    v[i] = (int32_t)(ldi(t->dtype, IN(c, k), i) - (z ? ldi(z->dtype, IN(c, zk), numel(z) == 1 ? 0 : i / per_row) : 0));
  return v;
}

/* The integer convolution shared by ConvInteger and QLinearConv. */
static int64_t *int_conv(struct ectx *c, int xi, int xz, int wi, int wz, struct conv_geo *g) {
  if (conv_geo_full(c, xi, wi, g) || param_count(c, xz, 1) || param_count(c, wz, g->m)) return NULL;
  int64_t per_m = g->cg * g->kh * g->kw;
  int32_t *x = shifted(c, xi, xz, INT64_MAX), *w = shifted(c, wi, wz, per_m);
  int64_t *acc = ir_xcalloc((size_t)(g->n * g->m * g->oh * g->ow), sizeof *acc);
  conv_core_i32(g, x, w, acc);
  free(x);
  free(w);
  return acc;
}

static int eval_conv_integer(struct ectx *c) {
  struct conv_geo g;
  int64_t *acc = int_conv(c, 0, 2, 1, 3, &g);
  if (!acc) return -1;
  for (int64_t i = 0, n = numel(R(c)); i < n; i++) ((int32_t *)c->out[0])[i] = (int32_t)(uint32_t)acc[i];
  free(acc);
  return 0;
}

static int eval_qlinear_conv(struct ectx *c) {
  struct conv_geo g;
  /* x, xs, xzp, w, ws, wzp, ys, yzp, B */
  if (param_count(c, 1, 1) || param_count(c, 6, 1) || param_count(c, 7, 1)) return -1;
  if (param_count(c, 4, T(c, 3)->dims[0]) || param_count(c, 8, T(c, 3)->dims[0])) return -1;
  int64_t *acc = int_conv(c, 0, 2, 3, 5, &g);
  if (!acc) return -1;
  int64_t plane = g.oh * g.ow;
  float xs = (float)param(T(c, 1), IN(c, 1), 0, 1), ys = (float)param(T(c, 6), IN(c, 6), 0, 1);
  for (int64_t i = 0, n = numel(R(c)); i < n; i++) {
    int64_t m = (i / plane) % g.m;
    float mult = xs * (float)param(T(c, 4), IN(c, 4), m, 1) / ys;
    int64_t a = acc[i] + (int64_t)param(T(c, 8), IN(c, 8), m, 0);
    float v = (float)(int32_t)(uint32_t)a * mult;
    st_round(R(c)->dtype, c->out[0], i, v, param(T(c, 7), IN(c, 7), 0, 0));
  }
  free(acc);
  return 0;
}

/* ---- pooling ---- */

static int eval_maxpool(struct ectx *c) {
  struct conv_geo g;
  const struct ir_tensor *x = T(c, 0);
  if (window_geo(c, x, R(c), &g)) return -1;
  for (int64_t p = 0; p < g.n * g.c; p++)
    for (int64_t oh = 0; oh < g.oh; oh++)
      for (int64_t ow = 0; ow < g.ow; ow++) {
        double best = -INFINITY;
        for (int64_t kh = 0; kh < g.kh; kh++)
          for (int64_t kw = 0; kw < g.kw; kw++) {
            int64_t ih = oh * g.sh - g.pt + kh * g.dh, iw = ow * g.sw - g.pl + kw * g.dw;
            if (ih < 0 || ih >= g.h || iw < 0 || iw >= g.w) continue;
            double v = ld(x->dtype, IN(c, 0), (p * g.h + ih) * g.w + iw);
            if (v > best) best = v;
          }
        st(x->dtype, c->out[0], (p * g.oh + oh) * g.ow + ow, best);
      }
  return 0;
}

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

static int eval_avgpool(struct ectx *c) {
  struct conv_geo g;
  const struct ir_tensor *x = T(c, 0);
  if (window_geo(c, x, R(c), &g)) return -1;
  int nsp = x->rank - 2;
  int64_t pb = x->rank == 4 ? attr_at(c->n, "pads", 2, 0) : 0, pr = attr_at(c->n, "pads", 2 * nsp - 1, 0);
  int incl = ir_attr_int(c->n, "count_include_pad", 0) != 0;
  const float *in = IN(c, 0);
  float *y = c->out[0];
  for (int64_t p = 0; p < g.n * g.c; p++)
    for (int64_t oh = 0; oh < g.oh; oh++)
      for (int64_t ow = 0; ow < g.ow; ow++) {
        int64_t h0 = oh * g.sh - g.pt, w0 = ow * g.sw - g.pl;
        int64_t h1 = min64(h0 + g.kh, g.h + pb), w1 = min64(w0 + g.kw, g.w + pr);
        int64_t padded = (h1 - h0) * (w1 - w0);
        h0 = max64(h0, 0), w0 = max64(w0, 0), h1 = min64(h1, g.h), w1 = min64(w1, g.w);
        float sum = 0;
        for (int64_t ih = h0; ih < h1; ih++)
          for (int64_t iw = w0; iw < w1; iw++) sum += in[(p * g.h + ih) * g.w + iw];
        int64_t cnt = incl ? padded : (h1 - h0) * (w1 - w0);
        y[(p * g.oh + oh) * g.ow + ow] = cnt > 0 ? sum / (float)cnt : 0.0f;
      }
  return 0;
}

static int eval_global_avgpool(struct ectx *c) {
  const struct ir_tensor *x = T(c, 0);
  int64_t planes = x->dims[0] * x->dims[1], sp = numel(x) / (planes ? planes : 1);
  const float *in = IN(c, 0);
  for (int64_t p = 0; p < planes; p++) {
    float sum = 0;
    for (int64_t i = 0; i < sp; i++) sum += in[p * sp + i];
    ((float *)c->out[0])[p] = sum / (float)sp;
  }
  return 0;
}

/* ---- matrix products ---- */

struct mm_geo {
  int64_t batch, m, k, n;
  int64_t *aoff, *boff; /* per batch, element offsets into a and b */
};

/* Broadcast batch offsets of numpy matmul; ai/bi operand indices. */
static void mm_geo(struct ectx *c, int ai, int bi, struct mm_geo *g) {
  const struct ir_tensor *a = T(c, ai), *b = T(c, bi), *y = R(c);
  g->k = a->dims[a->rank - 1];
  g->m = a->rank > 1 ? a->dims[a->rank - 2] : 1;
  g->n = b->rank > 1 ? b->dims[b->rank - 1] : 1;
  int brank = y->rank - (a->rank > 1) - (b->rank > 1);
  struct ir_tensor ta = {.rank = a->rank > 2 ? a->rank - 2 : 0}, tb = {.rank = b->rank > 2 ? b->rank - 2 : 0};
  struct ir_tensor ty = {.rank = brank};
  memcpy(ta.dims, a->dims, sizeof ta.dims);
  memcpy(tb.dims, b->dims, sizeof tb.dims);
  memcpy(ty.dims, y->dims, sizeof ty.dims);
  int64_t sa[IR_MAX_RANK], sb[IR_MAX_RANK], idx[IR_MAX_RANK] = {0}, oa = 0, ob = 0;
  bcast_strides(&ta, &ty, sa);
  bcast_strides(&tb, &ty, sb);
  g->batch = ir_numel_checked(brank, ty.dims);
  g->aoff = ir_xmalloc((size_t)g->batch * sizeof(int64_t));
  g->boff = ir_xmalloc((size_t)g->batch * sizeof(int64_t));
  for (int64_t i = 0; i < g->batch; i++) {
    g->aoff[i] = oa * g->m * g->k;
    g->boff[i] = ob * g->k * g->n;
    odometer(brank, ty.dims, idx, &oa, sa, &ob, sb);
  }
}

#define MM_CORE(NAME, T, A)                                                          \
  static void NAME(const struct mm_geo *g, const T *a, const T *b, A *y) {           \
    for (int64_t bt = 0; bt < g->batch; bt++)                                        \
      for (int64_t i = 0; i < g->m; i++) {                                           \
        A *yr = y + (bt * g->m + i) * g->n;                                          \
        for (int64_t j = 0; j < g->n; j++) yr[j] = 0;                                \
        for (int64_t kk = 0; kk < g->k; kk++) {                                      \
          A av = (A)a[g->aoff[bt] + i * g->k + kk];                                  \
          const T *br = b + g->boff[bt] + kk * g->n;                                 \
          for (int64_t j = 0; j < g->n; j++) yr[j] += av * (A)br[j];                 \
        }                                                                            \
      }                                                                              \
  }
MM_CORE(mm_core_f32, float, float)
MM_CORE(mm_core_i32, int32_t, int64_t)

static void mm_free(struct mm_geo *g) {
  free(g->aoff);
  free(g->boff);
}

static int eval_matmul(struct ectx *c) {
  struct mm_geo g;
  mm_geo(c, 0, 1, &g);
  mm_core_f32(&g, IN(c, 0), IN(c, 1), c->out[0]);
  mm_free(&g);
  return 0;
}

/* a (zero point per row of a or per tensor) and b (per column or tensor). */
static int64_t *int_matmul(struct ectx *c, int ai, int az, int bi, int bz, struct mm_geo *g) {
  mm_geo(c, ai, bi, g);
  if (param_count(c, az, g->m) || param_count(c, bz, g->n)) {
    mm_free(g);
    return NULL;
  }
  if (T(c, az) && numel(T(c, az)) > 1 && numel(T(c, ai)) != g->m * g->k) {
    ir_fail(c->err, c->g, c->node, "per-row zero points need a 2-D operand");
    mm_free(g);
    return NULL;
  }
  int32_t *a = shifted(c, ai, az, g->k), *b = ir_xmalloc((size_t)numel(T(c, bi)) * sizeof *b);
  const struct ir_tensor *bt = T(c, bi), *zt = T(c, bz);
  for (int64_t i = 0, n = numel(bt); i < n; i++)
    b[i] = (int32_t)(ldi(bt->dtype, IN(c, bi), i) - (zt ? ldi(zt->dtype, IN(c, bz), numel(zt) == 1 ? 0 : i % g->n) : 0));
  int64_t *acc = ir_xmalloc((size_t)numel(R(c)) * sizeof *acc);
  mm_core_i32(g, a, b, acc);
  free(a);
  free(b);
  return acc;
}

static int eval_matmul_integer(struct ectx *c) {
  struct mm_geo g;
  int64_t *acc = int_matmul(c, 0, 2, 1, 3, &g);
  if (!acc) return -1;
  for (int64_t i = 0, n = numel(R(c)); i < n; i++) ((int32_t *)c->out[0])[i] = (int32_t)(uint32_t)acc[i];
  free(acc);
  mm_free(&g);
  return 0;
}

static int eval_qlinear_matmul(struct ectx *c) {
  /* a, as, azp, b, bs, bzp, ys, yzp */
  if (param_count(c, 1, 1) || param_count(c, 2, 1) || param_count(c, 6, 1) || param_count(c, 7, 1)) return -1;
  struct mm_geo g;
  int64_t *acc = int_matmul(c, 0, 2, 3, 5, &g);
  if (!acc) return -1;
  if (param_count(c, 4, g.n)) return free(acc), mm_free(&g), -1;
  float as = (float)param(T(c, 1), IN(c, 1), 0, 1), ys = (float)param(T(c, 6), IN(c, 6), 0, 1);
  for (int64_t i = 0, n = numel(R(c)); i < n; i++) {
    float mult = as * (float)param(T(c, 4), IN(c, 4), i % g.n, 1) / ys;
    float v = (float)(int32_t)(uint32_t)acc[i] * mult;
    st_round(R(c)->dtype, c->out[0], i, v, param(T(c, 7), IN(c, 7), 0, 0));
  }
  free(acc);
  mm_free(&g);
  return 0;
}

static int eval_gemm(struct ectx *c) {
  const struct ir_tensor *a = T(c, 0), *cc = T(c, 2), *y = R(c);
  int ta = ir_attr_int(c->n, "transA", 0) != 0, tb = ir_attr_int(c->n, "transB", 0) != 0;
  float alpha = ir_attr_float(c->n, "alpha", 1.0f), beta = ir_attr_float(c->n, "beta", 1.0f);
  int64_t m = y->dims[0], n = y->dims[1], k = a->dims[ta ? 0 : 1];
  const float *A = IN(c, 0), *B = IN(c, 1), *C = IN(c, 2);
  float *Y = c->out[0];
  int64_t sc[IR_MAX_RANK] = {0};
  if (cc) bcast_strides(cc, y, sc);
  for (int64_t i = 0; i < m; i++) {
    for (int64_t j = 0; j < n; j++) Y[i * n + j] = 0;
    for (int64_t kk = 0; kk < k; kk++) {
      float av = alpha * A[ta ? kk * m + i : i * k + kk];
      for (int64_t j = 0; j < n; j++) Y[i * n + j] += av * B[tb ? j * k + kk : kk * n + j];
    }
    for (int64_t j = 0; j < n && cc; j++) Y[i * n + j] += beta * C[i * sc[0] + j * sc[1]];
  }
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

static int eval_softmax(struct ectx *c) {
  const struct ir_tensor *x = T(c, 0);
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
  if (numel(T(c, 1)) == 1) return param_count(c, 2, 1);
  if (axis < 0 || axis >= x->rank) return ir_fail(c->err, c->g, c->node, "axis out of range");
  *channels = x->dims[axis];
  for (int i = (int)axis + 1; i < x->rank; i++) *inner *= x->dims[i];
  return param_count(c, 1, *channels) || param_count(c, 2, *channels);
}

static int eval_quantize(struct ectx *c) {
  const struct ir_tensor *x = T(c, 0);
  int64_t ch, inner;
  if (quant_axis(c, &ch, &inner)) return -1;
  for (int64_t i = 0, n = numel(x); i < n; i++) {
    int64_t k = (i / inner) % ch;
    float v = (float)ld(x->dtype, IN(c, 0), i) / (float)param(T(c, 1), IN(c, 1), k, 1);
    st_round(R(c)->dtype, c->out[0], i, v, param(T(c, 2), IN(c, 2), k, 0));
  }
  return 0;
}

static int eval_dequantize(struct ectx *c) {
  const struct ir_tensor *x = T(c, 0);
  int64_t ch, inner;
  if (quant_axis(c, &ch, &inner)) return -1;
  for (int64_t i = 0, n = numel(x); i < n; i++) {
    int64_t k = (i / inner) % ch;
    int64_t q = ldi(x->dtype, IN(c, 0), i) - (int64_t)param(T(c, 2), IN(c, 2), k, 0);
    ((float *)c->out[0])[i] = (float)q * (float)param(T(c, 1), IN(c, 1), k, 1);
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
    odometer(y->rank, y->dims, idx, &ox, sx, &dummy, zero);
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
      int64_t k = ldi(ix->dtype, IN(c, 1), j);
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

/* ---- fused int8 ops (pass_fuse.c): the accelerator's integer semantics ---- */

/* The requantization parameters every fused op carries as attributes. */
struct req {
  int64_t shift, out_zp, lo, hi, round_even;
};

static struct req req_of(const struct ir_node *n) {
  return (struct req){ir_attr_int(n, "shift", 0), ir_attr_int(n, "out_zp", 0),
                      ir_attr_int(n, "lo", -128), ir_attr_int(n, "hi", 127),
                      ir_attr_int(n, "round_even", 0)};
}

/* The ALU's REQUANT (docs/isa.md): p = a * m exactly; r = p rounded right
 * by `shift` (half up, or half to even); clamp(r + out_zp, lo, hi).
 * floor((p + 2^(s-1)) / 2^s) is (p >> s) plus bit s-1 of p, which needs no
 * 65-bit sum. */
static int8_t requant(int32_t a, int64_t m, const struct req *q) {
  int64_t p = (int64_t)a * m, r = p;
  if (q->shift > 0) {
    int64_t s = q->shift;
    uint64_t low = (uint64_t)p & ((UINT64_C(1) << s) - 1), half = UINT64_C(1) << (s - 1);
    r = (p >> s) + ((p >> (s - 1)) & 1);
    if (q->round_even && low == half && (r & 1)) r -= 1;
  }
  int64_t y = r + q->out_zp;
  if (q->lo > q->hi) return (int8_t)q->hi;
  return (int8_t)(y < q->lo ? q->lo : y > q->hi ? q->hi : y);
}

static int check_req(struct ectx *c, const struct req *q) {
  if (q->shift < 0 || q->shift > 63) return ir_fail(c->err, c->g, c->node, "shift %lld is not in 0..63", (long long)q->shift);
  if (q->lo < -128 || q->hi > 127 || q->out_zp < -128 || q->out_zp > 127)
    return ir_fail(c->err, c->g, c->node, "out_zp, lo and hi must be int8 values");
  return 0;
}

/* Per-output-channel operands k (bias, multiplier) need `count` values. */
static int want_count(struct ectx *c, int k, int64_t count) {
  if (numel(T(c, k)) == count) return 0;
  return ir_fail(c->err, c->g, c->node, "operand %d %%%s has %lld values, needs %lld", k, T(c, k)->name,
              (long long)numel(T(c, k)), (long long)count);
}

/* The QAdd a fused residual applies to the convolution's result q. */
struct residual {
  const int8_t *r;
  int64_t a_w, b_w, b_zp, a_zp, m;
  struct req q;
};

static int residual_of(struct ectx *c, struct residual *res) {
  const struct ir_node *n = c->n;
  res->r = n->n_in > 4 ? IN(c, 4) : NULL;
  if (!res->r) return 0;
  if (numel(T(c, 4)) != numel(R(c))) return ir_fail(c->err, c->g, c->node, "the residual must have the result's shape");
  res->a_w = ir_attr_int(n, "res_a_weight", 1), res->b_w = ir_attr_int(n, "res_b_weight", 1);
  res->b_zp = ir_attr_int(n, "res_b_zp", 0), res->a_zp = ir_attr_int(n, "out_zp", 0);
  res->m = ir_attr_int(n, "res_multiplier", 1);
  res->q = (struct req){ir_attr_int(n, "res_shift", 0), ir_attr_int(n, "res_out_zp", 0),
                        ir_attr_int(n, "res_lo", -128), ir_attr_int(n, "res_hi", 127),
                        ir_attr_int(n, "round_even", 0)};
  return check_req(c, &res->q);
}

static int8_t add_residual(const struct residual *res, int8_t q, int64_t i) {
  if (!res->r) return q;
  int32_t acc = (int32_t)(res->a_w * (q - res->a_zp) + res->b_w * (res->r[i] - res->b_zp));
  return requant(acc, res->m, &res->q);
}

static int eval_qconv(struct ectx *c) {
  struct conv_geo g;
  struct req q = req_of(c->n);
  struct residual res;
  if (check_req(c, &q) || conv_geo_full(c, 0, 1, &g) || want_count(c, 2, g.m) || want_count(c, 3, g.m) ||
      residual_of(c, &res))
    return -1;
  int64_t zp = ir_attr_int(c->n, "in_zp", 0), nx = numel(T(c, 0)), nw = numel(T(c, 1));
  const int8_t *x8 = IN(c, 0);
  const int32_t *bias = IN(c, 2), *mult = IN(c, 3);
  int32_t *x = ir_xmalloc((size_t)nx * sizeof *x), *w = ir_xmalloc((size_t)nw * sizeof *w);
  for (int64_t i = 0; i < nx; i++) x[i] = (int32_t)(x8[i] - zp);
  for (int64_t i = 0; i < nw; i++) w[i] = (int32_t)ldi(T(c, 1)->dtype, IN(c, 1), i); /* i8, or wide i32 */
  int64_t plane = g.oh * g.ow, ny = g.n * g.m * plane;
  int64_t *acc = ir_xcalloc((size_t)ny, sizeof *acc);
  for (int64_t i = 0; i < ny; i++) acc[i] = bias[(i / plane) % g.m];
  conv_core_i32(&g, x, w, acc);
  for (int64_t i = 0; i < ny && R(c)->dtype == IR_DT_I32; i++) /* the accumulator itself */
    ((int32_t *)c->out[0])[i] = (int32_t)(uint32_t)acc[i];
  for (int64_t i = 0; i < ny && R(c)->dtype != IR_DT_I32; i++)
    ((int8_t *)c->out[0])[i] = add_residual(&res, requant((int32_t)(uint32_t)acc[i], mult[(i / plane) % g.m], &q), i);
  free(x);
  free(w);
  free(acc);
  return 0;
}

static int eval_qgemm(struct ectx *c) {
  const struct ir_tensor *x = T(c, 0), *w = T(c, 1);
  struct req q = req_of(c->n);
  if (check_req(c, &q)) return -1;
  if (x->rank != 2 || w->rank != 2 || x->dims[1] != w->dims[1])
    return ir_fail(c->err, c->g, c->node, "needs x [N,K] and w [O,K]");
  int64_t n = x->dims[0], k = x->dims[1], o = w->dims[0], zp = ir_attr_int(c->n, "in_zp", 0);
  if (want_count(c, 2, o) || want_count(c, 3, o)) return -1;
  const int8_t *xv = IN(c, 0);
  const int32_t *bias = IN(c, 2), *mult = IN(c, 3);
  enum ir_dtype wdt = w->dtype; /* i8, or wide i32 */
  for (int64_t i = 0; i < n; i++)
    for (int64_t j = 0; j < o; j++) {
      uint32_t acc = (uint32_t)bias[j];
      for (int64_t kk = 0; kk < k; kk++)
        acc += (uint32_t)(int32_t)(ldi(wdt, IN(c, 1), j * k + kk) * (xv[i * k + kk] - zp));
      if (R(c)->dtype == IR_DT_I32) ((int32_t *)c->out[0])[i * o + j] = (int32_t)acc;
      else ((int8_t *)c->out[0])[i * o + j] = requant((int32_t)acc, mult[j], &q);
    }
  return 0;
}

static int eval_qadd(struct ectx *c) {
  struct req q = req_of(c->n);
  if (check_req(c, &q)) return -1;
  if (numel(T(c, 0)) != numel(R(c)) || numel(T(c, 1)) != numel(R(c)))
    return ir_fail(c->err, c->g, c->node, "operands and result must have one shape");
  int64_t az = ir_attr_int(c->n, "a_zp", 0), bz = ir_attr_int(c->n, "b_zp", 0);
  int64_t aw = ir_attr_int(c->n, "a_weight", 1), bw = ir_attr_int(c->n, "b_weight", 1);
  int64_t m = ir_attr_int(c->n, "multiplier", 1);
  const int8_t *a = IN(c, 0), *b = IN(c, 1);
  for (int64_t i = 0, n = numel(R(c)); i < n; i++) {
    int32_t acc = (int32_t)(aw * (a[i] - az) + bw * (b[i] - bz));
    ((int8_t *)c->out[0])[i] = requant(acc, m, &q);
  }
  return 0;
}

/* Average pooling with padding counted as in_zp (it adds nothing). */
static int eval_qavgpool(struct ectx *c) {
  struct conv_geo g;
  struct req q = req_of(c->n);
  if (check_req(c, &q) || window_geo(c, T(c, 0), R(c), &g)) return -1;
  int64_t zp = ir_attr_int(c->n, "in_zp", 0), m = ir_attr_int(c->n, "multiplier", 1);
  const int8_t *x = IN(c, 0);
  for (int64_t p = 0; p < g.n * g.c; p++)
    for (int64_t oh = 0; oh < g.oh; oh++)
      for (int64_t ow = 0; ow < g.ow; ow++) {
        uint32_t acc = 0;
        for (int64_t kh = 0; kh < g.kh; kh++)
          for (int64_t kw = 0; kw < g.kw; kw++) {
            int64_t ih = oh * g.sh - g.pt + kh, iw = ow * g.sw - g.pl + kw;
            if (ih >= 0 && ih < g.h && iw >= 0 && iw < g.w)
              acc += (uint32_t)(x[(p * g.h + ih) * g.w + iw] - zp);
          }
        ((int8_t *)c->out[0])[(p * g.oh + oh) * g.ow + ow] = requant((int32_t)acc, m, &q);
      }
  return 0;
}

static int eval_qpool(struct ectx *c) {
  if (T(c, 0)->dtype != IR_DT_I8 || R(c)->dtype != IR_DT_I8) return ir_fail(c->err, c->g, c->node, "needs int8 tensors");
  return ir_attr_int(c->n, "avg", 0) ? eval_qavgpool(c) : eval_maxpool(c);
}

static int eval_dispatch(struct ectx *c) {
  switch (c->n->op) {
  case IR_OP_CONV: return eval_conv(c);
  case IR_OP_GEMM: return eval_gemm(c);
  case IR_OP_MATMUL: return eval_matmul(c);
  case IR_OP_RELU: case IR_OP_CLIP: return eval_relu_clip(c);
  case IR_OP_ADD: case IR_OP_MUL: return eval_binary(c);
  case IR_OP_MAXPOOL: return eval_maxpool(c);
  case IR_OP_AVERAGEPOOL: return eval_avgpool(c);
  case IR_OP_GLOBALAVERAGEPOOL: return eval_global_avgpool(c);
  case IR_OP_FLATTEN: case IR_OP_RESHAPE: case IR_OP_IDENTITY:
  case IR_OP_UNSQUEEZE: case IR_OP_SQUEEZE:
    return eval_copy(c);
  case IR_OP_TRANSPOSE: return eval_transpose(c);
  case IR_OP_CONCAT: return eval_concat(c);
  case IR_OP_BATCHNORM: return eval_batchnorm(c);
  case IR_OP_SOFTMAX: return eval_softmax(c);
  case IR_OP_QUANTIZELINEAR: return eval_quantize(c);
  case IR_OP_DEQUANTIZELINEAR: return eval_dequantize(c);
  case IR_OP_QLINEARCONV: return eval_qlinear_conv(c);
  case IR_OP_QLINEARMATMUL: return eval_qlinear_matmul(c);
  case IR_OP_CONVINTEGER: return eval_conv_integer(c);
  case IR_OP_MATMULINTEGER: return eval_matmul_integer(c);
  case IR_OP_CONSTANT: return eval_constant(c);
  case IR_OP_SHAPE: return eval_shape(c);
  case IR_OP_GATHER: return eval_gather(c);
  case IR_OP_QCONV: return eval_qconv(c);
  case IR_OP_QGEMM: return eval_qgemm(c);
  case IR_OP_QADD: return eval_qadd(c);
  case IR_OP_QPOOL: return eval_qpool(c);
  case IR_OP_ONNX: return ir_eval_kernel(c->g, c->node, c->in, c->out, NULL, c->err);
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
