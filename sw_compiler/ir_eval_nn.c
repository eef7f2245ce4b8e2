/*
 * ir_eval_nn.c - the reference interpreter's convolution, pooling and
 * matrix kernels (ir_eval.h): float Conv, Gemm and MatMul as ONNX defines
 * them, their integer forms (ConvInteger, MatMulInteger, QLinearConv,
 * QLinearMatMul) with exact accumulation, and the pools.  The convolution
 * and matrix loops keep their innermost loop free of bounds checks
 * (precomputed valid ranges), so a ResNet-18 forward pass takes seconds.
 */
#include "sw_compiler/ir_eval.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ---- convolution ---- */

static int64_t attr_at(const struct ir_node *n, const char *name, int i, int64_t dflt) {
  const struct ir_attr *a = ir_attr_find(n, name);
  return a && a->kind == IR_ATTR_INTS && i < a->n ? a->ints[i] : dflt;
}

/* A 2-D view of a 1-D or 2-D window op (struct conv_geo, compiler.h):
 * everything in elements. */
int ev_window_geo(struct ectx *c, const struct ir_tensor *x, const struct ir_tensor *y,
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
  void NAME(const struct conv_geo *g, const T *x, const T *w, A *y) {                       \
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
CONV_CORE(ev_conv_core_i32, int32_t, int64_t)

int ev_conv_geo_full(struct ectx *c, int xi, int wi, struct conv_geo *g) {
  const struct ir_tensor *w = T(c, wi);
  if (ev_window_geo(c, T(c, xi), R(c), g)) return -1;
  g->m = w->dims[0], g->cg = w->dims[1];
  if (g->group < 1 || g->c != g->cg * g->group || g->m % g->group) return ir_fail(c->err, c->g, c->node, "channels do not fit group");
  return 0;
}

int ev_conv(struct ectx *c) {
  struct conv_geo g;
  if (ev_conv_geo_full(c, 0, 1, &g)) return -1;
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
    v[i] = (int32_t)(ev_ldi(t->dtype, IN(c, k), i) - (z ? ev_ldi(z->dtype, IN(c, zk), numel(z) == 1 ? 0 : i / per_row) : 0));
  return v;
}

/* The integer convolution shared by ConvInteger and QLinearConv. */
static int64_t *int_conv(struct ectx *c, int xi, int xz, int wi, int wz, struct conv_geo *g) {
  if (ev_conv_geo_full(c, xi, wi, g) || ev_param_count(c, xz, 1) || ev_param_count(c, wz, g->m)) return NULL;
  int64_t per_m = g->cg * g->kh * g->kw;
  int32_t *x = shifted(c, xi, xz, INT64_MAX), *w = shifted(c, wi, wz, per_m);
  int64_t *acc = ir_xcalloc((size_t)(g->n * g->m * g->oh * g->ow), sizeof *acc);
  ev_conv_core_i32(g, x, w, acc);
  free(x);
  free(w);
  return acc;
}

int ev_conv_integer(struct ectx *c) {
  struct conv_geo g;
  int64_t *acc = int_conv(c, 0, 2, 1, 3, &g);
  if (!acc) return -1;
  for (int64_t i = 0, n = numel(R(c)); i < n; i++) ((int32_t *)c->out[0])[i] = (int32_t)(uint32_t)acc[i];
  free(acc);
  return 0;
}

int ev_qlinear_conv(struct ectx *c) {
  struct conv_geo g;
  /* x, xs, xzp, w, ws, wzp, ys, yzp, B */
  if (ev_param_count(c, 1, 1) || ev_param_count(c, 6, 1) || ev_param_count(c, 7, 1)) return -1;
  if (ev_param_count(c, 4, T(c, 3)->dims[0]) || ev_param_count(c, 8, T(c, 3)->dims[0])) return -1;
  int64_t *acc = int_conv(c, 0, 2, 3, 5, &g);
  if (!acc) return -1;
  int64_t plane = g.oh * g.ow;
  float xs = (float)ev_param(T(c, 1), IN(c, 1), 0, 1), ys = (float)ev_param(T(c, 6), IN(c, 6), 0, 1);
  for (int64_t i = 0, n = numel(R(c)); i < n; i++) {
    int64_t m = (i / plane) % g.m;
    float mult = xs * (float)ev_param(T(c, 4), IN(c, 4), m, 1) / ys;
    int64_t a = acc[i] + (int64_t)ev_param(T(c, 8), IN(c, 8), m, 0);
    float v = (float)(int32_t)(uint32_t)a * mult;
    ev_st_round(R(c)->dtype, c->out[0], i, v, ev_param(T(c, 7), IN(c, 7), 0, 0));
  }
  free(acc);
  return 0;
}

/* ---- pooling ---- */

int ev_maxpool(struct ectx *c) {
  struct conv_geo g;
  const struct ir_tensor *x = T(c, 0);
  if (ev_window_geo(c, x, R(c), &g)) return -1;
  for (int64_t p = 0; p < g.n * g.c; p++)
    for (int64_t oh = 0; oh < g.oh; oh++)
      for (int64_t ow = 0; ow < g.ow; ow++) {
        double best = -INFINITY;
        for (int64_t kh = 0; kh < g.kh; kh++)
          for (int64_t kw = 0; kw < g.kw; kw++) {
            int64_t ih = oh * g.sh - g.pt + kh * g.dh, iw = ow * g.sw - g.pl + kw * g.dw;
            if (ih < 0 || ih >= g.h || iw < 0 || iw >= g.w) continue;
            double v = ev_ld(x->dtype, IN(c, 0), (p * g.h + ih) * g.w + iw);
            if (v > best) best = v;
          }
        ev_st(x->dtype, c->out[0], (p * g.oh + oh) * g.ow + ow, best);
      }
  return 0;
}

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

int ev_avgpool(struct ectx *c) {
  struct conv_geo g;
  const struct ir_tensor *x = T(c, 0);
  if (ev_window_geo(c, x, R(c), &g)) return -1;
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

int ev_global_avgpool(struct ectx *c) {
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
  ev_bcast_strides(&ta, &ty, sa);
  ev_bcast_strides(&tb, &ty, sb);
  g->batch = ir_numel_checked(brank, ty.dims);
  g->aoff = ir_xmalloc((size_t)g->batch * sizeof(int64_t));
  g->boff = ir_xmalloc((size_t)g->batch * sizeof(int64_t));
  for (int64_t i = 0; i < g->batch; i++) {
    g->aoff[i] = oa * g->m * g->k;
    g->boff[i] = ob * g->k * g->n;
    ev_odometer(brank, ty.dims, idx, &oa, sa, &ob, sb);
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

int ev_matmul(struct ectx *c) {
  struct mm_geo g;
  mm_geo(c, 0, 1, &g);
  mm_core_f32(&g, IN(c, 0), IN(c, 1), c->out[0]);
  mm_free(&g);
  return 0;
}

/* a (zero point per row of a or per tensor) and b (per column or tensor). */
static int64_t *int_matmul(struct ectx *c, int ai, int az, int bi, int bz, struct mm_geo *g) {
  mm_geo(c, ai, bi, g);
  if (ev_param_count(c, az, g->m) || ev_param_count(c, bz, g->n)) {
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
    b[i] = (int32_t)(ev_ldi(bt->dtype, IN(c, bi), i) - (zt ? ev_ldi(zt->dtype, IN(c, bz), numel(zt) == 1 ? 0 : i % g->n) : 0));
  int64_t *acc = ir_xmalloc((size_t)numel(R(c)) * sizeof *acc);
  mm_core_i32(g, a, b, acc);
  free(a);
  free(b);
  return acc;
}

int ev_matmul_integer(struct ectx *c) {
  struct mm_geo g;
  int64_t *acc = int_matmul(c, 0, 2, 1, 3, &g);
  if (!acc) return -1;
  for (int64_t i = 0, n = numel(R(c)); i < n; i++) ((int32_t *)c->out[0])[i] = (int32_t)(uint32_t)acc[i];
  free(acc);
  mm_free(&g);
  return 0;
}

int ev_qlinear_matmul(struct ectx *c) {
  /* a, as, azp, b, bs, bzp, ys, yzp */
  if (ev_param_count(c, 1, 1) || ev_param_count(c, 2, 1) || ev_param_count(c, 6, 1) || ev_param_count(c, 7, 1)) return -1;
  struct mm_geo g;
  int64_t *acc = int_matmul(c, 0, 2, 3, 5, &g);
  if (!acc) return -1;
  if (ev_param_count(c, 4, g.n)) return free(acc), mm_free(&g), -1;
  float as = (float)ev_param(T(c, 1), IN(c, 1), 0, 1), ys = (float)ev_param(T(c, 6), IN(c, 6), 0, 1);
  for (int64_t i = 0, n = numel(R(c)); i < n; i++) {
    float mult = as * (float)ev_param(T(c, 4), IN(c, 4), i % g.n, 1) / ys;
    float v = (float)(int32_t)(uint32_t)acc[i] * mult;
    ev_st_round(R(c)->dtype, c->out[0], i, v, ev_param(T(c, 7), IN(c, 7), 0, 0));
  }
  free(acc);
  mm_free(&g);
  return 0;
}

int ev_gemm(struct ectx *c) {
  const struct ir_tensor *a = T(c, 0), *cc = T(c, 2), *y = R(c);
  int ta = ir_attr_int(c->n, "transA", 0) != 0, tb = ir_attr_int(c->n, "transB", 0) != 0;
  float alpha = ir_attr_float(c->n, "alpha", 1.0f), beta = ir_attr_float(c->n, "beta", 1.0f);
  int64_t m = y->dims[0], n = y->dims[1], k = a->dims[ta ? 0 : 1];
  const float *A = IN(c, 0), *B = IN(c, 1), *C = IN(c, 2);
  float *Y = c->out[0];
  int64_t sc[IR_MAX_RANK] = {0};
  if (cc) ev_bcast_strides(cc, y, sc);
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

