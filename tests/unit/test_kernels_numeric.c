/*
 * test_kernels_numeric.c - the heavy kernels against naive loops written
 * straight from the ONNX definitions, on shapes ONNX's node tests do not
 * cover: grouped, dilated, strided, asymmetrically padded 1-D/2-D/3-D
 * convolutions; transposed convolutions with groups, strides, dilations
 * and output padding; batched MatMul broadcasting; Einsum's GEMM path
 * against its general loop; a bidirectional RNN with per-batch sequence
 * lengths.  Data is a fixed pseudo-random pattern; tolerance 1e-4
 * relative.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kcall.h"

static float *pattern(int64_t n, int seed) {
  float *p = malloc((size_t)n * sizeof(float) + 4);
  uint32_t s = (uint32_t)seed * 2654435761u + 1;
  for (int64_t i = 0; i < n; i++) {
    s = s * 1664525u + 1013904223u;
    p[i] = (float)((int)(s >> 9) % 2001 - 1000) / 500.0f;
  }
  return p;
}

static void close_all(const float *got, const double *want, int64_t n) {
  for (int64_t i = 0; i < n; i++)
    if (fabs(got[i] - want[i]) > 1e-4 * (1 + fabs(want[i])))
      fail_msg("element %lld: got %.7g, want %.7g", (long long)i, got[i], want[i]);
}

/* ---- convolution ---- */

struct cgeo {
  int nsp;
  int64_t n, c, m, group, in[3], k[3], s[3], d[3], pb[3], pe[3], out[3];
};

static int64_t sp(const int64_t *v, int n) {
  int64_t p = 1;
  for (int i = 0; i < n; i++) p *= v[i];
  return p;
}

/* y[n][m][o...] = b[m] + sum over c in m's group and taps of x * w. */
static void naive_conv(const struct cgeo *g, const float *x, const float *w, const float *b, double *y) {
  int64_t cg = g->c / g->group, mg = g->m / g->group, ins = sp(g->in, g->nsp), outs = sp(g->out, g->nsp);
  int64_t taps = sp(g->k, g->nsp);
  for (int64_t n = 0; n < g->n; n++)
    for (int64_t m = 0; m < g->m; m++)
      for (int64_t o = 0; o < outs; o++) {
        double acc = b ? b[m] : 0;
        for (int64_t q = 0; q < cg; q++)
          for (int64_t t = 0; t < taps; t++) {
            int64_t at = 0, ok = 1, rem_o = o, rem_t = t, coord[3], kk[3];
            for (int i = g->nsp - 1; i >= 0; i--) coord[i] = rem_o % g->out[i], rem_o /= g->out[i], kk[i] = rem_t % g->k[i], rem_t /= g->k[i];
            for (int i = 0; i < g->nsp; i++) {
              int64_t v = coord[i] * g->s[i] - g->pb[i] + kk[i] * g->d[i];
              ok &= v >= 0 && v < g->in[i];
              at = at * g->in[i] + v;
            }
            if (ok) acc += (double)x[(n * g->c + (m / mg) * cg + q) * ins + at] * w[(m * cg + q) * taps + t];
          }
        y[(n * g->m + m) * outs + o] = acc;
      }
}

static void check_conv(struct cgeo g) {
  struct loom_kattr a[5];
  int64_t pads[6], strides[3], dil[3];
  for (int i = 0; i < g.nsp; i++) {
    g.out[i] = (g.in[i] + g.pb[i] + g.pe[i] - ((g.k[i] - 1) * g.d[i] + 1)) / g.s[i] + 1;
    pads[i] = g.pb[i], pads[g.nsp + i] = g.pe[i], strides[i] = g.s[i], dil[i] = g.d[i];
  }
  a[0] = attr_ints("pads", pads, 2 * g.nsp), a[1] = attr_ints("strides", strides, g.nsp);
  a[2] = attr_ints("dilations", dil, g.nsp), a[3] = attr_i("group", g.group);
  int64_t xd[5] = {g.n, g.c}, wd[5] = {g.m, g.c / g.group}, yd[5] = {g.n, g.m};
  for (int i = 0; i < g.nsp; i++) xd[2 + i] = g.in[i], wd[2 + i] = g.k[i], yd[2 + i] = g.out[i];
  int64_t nx = sp(xd, g.nsp + 2), nw = sp(wd, g.nsp + 2), ny = sp(yd, g.nsp + 2);
  float *x = pattern(nx, 1), *w = pattern(nw, 2), *b = pattern(g.m, 3), *y = malloc((size_t)ny * 4);
  double *want = malloc((size_t)ny * 8);
  struct loom_kt in[3] = {kt_dims(LOOM_DT_F32, x, g.nsp + 2, xd), kt_dims(LOOM_DT_F32, w, g.nsp + 2, wd), KT(LOOM_DT_F32, b, g.m)};
  struct loom_kt out = kt_dims(LOOM_DT_F32, y, g.nsp + 2, yd);
  if (kcall("Conv", 11, in, 3, &out, 1, a, 4)) fail_msg("%s", kmsg);
  naive_conv(&g, x, w, b, want);
  close_all(y, want, ny);
  free(x), free(w), free(b), free(y), free(want);
}

static void test_conv(void **state) {
  (void)state;
  check_conv((struct cgeo){2, 2, 4, 6, 2, {9, 7}, {3, 2}, {2, 1}, {1, 2}, {1, 0}, {2, 1}, {0}});  /* groups, mixed */
  check_conv((struct cgeo){1, 1, 3, 5, 1, {20}, {4}, {3}, {2}, {3}, {0}, {0}});                /* 1-D */
  check_conv((struct cgeo){3, 1, 2, 2, 2, {5, 4, 6}, {2, 3, 2}, {1, 2, 2}, {2, 1, 1}, {0, 1, 1}, {1, 1, 0}, {0}}); /* 3-D */
  check_conv((struct cgeo){2, 1, 8, 8, 8, {6, 6}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, {0}}); /* depthwise */
  check_conv((struct cgeo){2, 1, 6, 6, 6, {9, 8}, {3, 3}, {2, 2}, {2, 1}, {1, 2}, {0, 1}, {0}}); /* depthwise, strided */
  check_conv((struct cgeo){2, 2, 16, 24, 1, {5, 5}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, {0, 0}, {0}}); /* 1x1: no im2col */
}

/* ---- ConvTranspose ---- */

static void test_convtranspose(void **state) {
  (void)state;
  /* 2-D, 2 groups, stride (2,3), dilation (2,1), pads (1,0,0,2), output_padding (1,1). */
  int64_t n = 1, c = 4, mg = 3, group = 2, ih = 3, iw = 4, kh = 2, kw = 3, s[2] = {2, 3}, d[2] = {2, 1};
  int64_t pads[4] = {1, 0, 0, 2}, op[2] = {1, 1};
  int64_t oh = s[0] * (ih - 1) + op[0] + (kh - 1) * d[0] + 1 - pads[0] - pads[2];
  int64_t ow = s[1] * (iw - 1) + op[1] + (kw - 1) * d[1] + 1 - pads[1] - pads[3], m = mg * group;
  float *x = pattern(n * c * ih * iw, 4), *w = pattern(c * mg * kh * kw, 5), *b = pattern(m, 6);
  float *y = malloc((size_t)(n * m * oh * ow) * 4);
  double *want = calloc((size_t)(n * m * oh * ow), 8);
  for (int64_t k = 0; k < m; k++)
    for (int64_t i = 0; i < oh * ow; i++) want[k * oh * ow + i] = b[k];
  for (int64_t q = 0; q < c; q++)
    for (int64_t i = 0; i < ih; i++)
      for (int64_t j = 0; j < iw; j++)
        for (int64_t mm = 0; mm < mg; mm++)
          for (int64_t a = 0; a < kh; a++)
            for (int64_t e = 0; e < kw; e++) {
              int64_t yy = i * s[0] - pads[0] + a * d[0], xx = j * s[1] - pads[1] + e * d[1];
              if (yy < 0 || yy >= oh || xx < 0 || xx >= ow) continue;
              int64_t och = (q / (c / group)) * mg + mm;
              want[(och * oh + yy) * ow + xx] += (double)x[(q * ih + i) * iw + j] * w[((q * mg + mm) * kh + a) * kw + e];
            }
  struct loom_kattr at[5] = {attr_ints("strides", s, 2), attr_ints("dilations", d, 2), attr_ints("pads", pads, 4),
                             attr_ints("output_padding", op, 2), attr_i("group", group)};
  struct loom_kt in[3] = {KT(LOOM_DT_F32, x, n, c, ih, iw), KT(LOOM_DT_F32, w, c, mg, kh, kw), KT(LOOM_DT_F32, b, m)};
  struct loom_kt out = KT(LOOM_DT_F32, y, n, m, oh, ow);
  if (kcall("ConvTranspose", 11, in, 3, &out, 1, at, 5)) fail_msg("%s", kmsg);
  close_all(y, want, n * m * oh * ow);
  free(x), free(w), free(b), free(y), free(want);
}

/* ---- MatMul broadcasting, Einsum paths ---- */

static void test_matmul_broadcast(void **state) {
  (void)state;
  /* [2,1,3,4] x [3,4,5] -> [2,3,3,5]; and 1-D operands on both sides. */
  float *a = pattern(2 * 3 * 4, 7), *b = pattern(3 * 4 * 5, 8), *y = malloc(2 * 3 * 3 * 5 * 4);
  double *want = malloc(2 * 3 * 3 * 5 * 8);
  for (int p = 0; p < 2; p++)
    for (int q = 0; q < 3; q++)
      for (int i = 0; i < 3; i++)
        for (int j = 0; j < 5; j++) {
          double s = 0;
          for (int k = 0; k < 4; k++) s += (double)a[(p * 3 + i) * 4 + k] * b[(q * 4 + k) * 5 + j];
          want[((p * 3 + q) * 3 + i) * 5 + j] = s;
        }
  struct loom_kt in[2] = {KT(LOOM_DT_F32, a, 2, 1, 3, 4), KT(LOOM_DT_F32, b, 3, 4, 5)}, out = KT(LOOM_DT_F32, y, 2, 3, 3, 5);
  if (kcall("MatMul", 13, in, 2, &out, 1, NULL, 0)) fail_msg("%s", kmsg);
  close_all(y, want, 90);
  struct loom_kt v[2] = {KT(LOOM_DT_F32, a, 4), KT(LOOM_DT_F32, b, 3, 4, 5)}, vo = KT(LOOM_DT_F32, y, 3, 5);
  if (kcall("MatMul", 13, v, 2, &vo, 1, NULL, 0)) fail_msg("%s", kmsg);
  for (int q = 0; q < 3; q++)
    for (int j = 0; j < 5; j++) {
      double s = 0;
      for (int k = 0; k < 4; k++) s += (double)a[k] * b[(q * 4 + k) * 5 + j];
      want[q * 5 + j] = s;
    }
  close_all(y, want, 15);
  free(a), free(b), free(y), free(want);
}

/* The same contraction in float32 (GEMM path) and float64 (general loop). */
static void check_einsum(const char *eq, int r0, const int64_t *d0, int r1, const int64_t *d1, int ro, const int64_t *dout) {
  int64_t n0 = sp(d0, r0), n1 = sp(d1, r1), no = sp(dout, ro);
  float *a = pattern(n0, 9), *b = pattern(n1, 10), *y = malloc((size_t)no * 4);
  double *ad = malloc((size_t)n0 * 8), *bd = malloc((size_t)n1 * 8), *yd = malloc((size_t)no * 8);
  for (int64_t i = 0; i < n0; i++) ad[i] = a[i];
  for (int64_t i = 0; i < n1; i++) bd[i] = b[i];
  struct loom_kattr e = attr_s("equation", eq);
  struct loom_kt in[2] = {kt_dims(LOOM_DT_F32, a, r0, d0), kt_dims(LOOM_DT_F32, b, r1, d1)}, out = kt_dims(LOOM_DT_F32, y, ro, dout);
  struct loom_kt ind[2] = {kt_dims(LOOM_DT_F64, ad, r0, d0), kt_dims(LOOM_DT_F64, bd, r1, d1)}, outd = kt_dims(LOOM_DT_F64, yd, ro, dout);
  if (kcall("Einsum", 12, in, 2, &out, 1, &e, 1) || kcall("Einsum", 12, ind, 2, &outd, 1, &e, 1)) fail_msg("%s: %s", eq, kmsg);
  close_all(y, yd, no);
  free(a), free(b), free(y), free(ad), free(bd), free(yd);
}

static void test_einsum_paths(void **state) {
  (void)state;
  check_einsum("bhid,bhjd->bhij", 4, (int64_t[]){2, 3, 5, 4}, 4, (int64_t[]){2, 3, 6, 4}, 4, (int64_t[]){2, 3, 5, 6});
  check_einsum("ij,jk", 2, (int64_t[]){3, 4}, 2, (int64_t[]){4, 5}, 2, (int64_t[]){3, 5});
  check_einsum("kj,ik->ji", 2, (int64_t[]){4, 3}, 2, (int64_t[]){5, 4}, 2, (int64_t[]){3, 5});
  check_einsum("...ij,...jk->...ik", 3, (int64_t[]){2, 3, 4}, 3, (int64_t[]){2, 4, 2}, 3, (int64_t[]){2, 3, 2});
  check_einsum("i,j->ij", 1, (int64_t[]){3}, 1, (int64_t[]){4}, 2, (int64_t[]){3, 4}); /* outer product */
}

/* ---- RNN: bidirectional with sequence lengths ---- */

static void test_rnn_bidirectional(void **state) {
  (void)state;
  enum { T = 4, B = 3, I = 2, H = 3 };
  float *x = pattern(T * B * I, 11), *w = pattern(2 * H * I, 12), *r = pattern(2 * H * H, 13), *bias = pattern(2 * 2 * H, 14);
  float *h0 = pattern(2 * B * H, 15), y[T * 2 * B * H], yh[2 * B * H];
  int32_t lens[B] = {4, 2, 0};
  double want[T * 2 * B * H] = {0}, wanth[2 * B * H];
  for (int d = 0; d < 2; d++)
    for (int b = 0; b < B; b++) {
      double h[H];
      for (int j = 0; j < H; j++) h[j] = h0[(d * B + b) * H + j];
      for (int step = 0; step < lens[b]; step++) {
        int t = d ? lens[b] - 1 - step : step;
        double nh[H];
        for (int j = 0; j < H; j++) {
          double s = bias[d * 2 * H + j] + bias[d * 2 * H + H + j];
          for (int k = 0; k < I; k++) s += (double)x[(t * B + b) * I + k] * w[(d * H + j) * I + k];
          for (int k = 0; k < H; k++) s += h[k] * r[(d * H + j) * H + k];
          nh[j] = tanh(s);
        }
        memcpy(h, nh, sizeof h);
        for (int j = 0; j < H; j++) want[((t * 2 + d) * B + b) * H + j] = h[j];
      }
      for (int j = 0; j < H; j++) wanth[(d * B + b) * H + j] = h[j];
    }
  struct loom_kt in[6] = {KT(LOOM_DT_F32, x, T, B, I), KT(LOOM_DT_F32, w, 2, H, I), KT(LOOM_DT_F32, r, 2, H, H),
                          KT(LOOM_DT_F32, bias, 2, 2 * H), KT(LOOM_DT_I32, lens, B), KT(LOOM_DT_F32, h0, 2, B, H)};
  struct loom_kt out[2] = {KT(LOOM_DT_F32, y, T, 2, B, H), KT(LOOM_DT_F32, yh, 2, B, H)};
  struct loom_kattr a[2] = {attr_i("hidden_size", H), attr_s("direction", "bidirectional")};
  if (kcall("RNN", 14, in, 6, out, 2, a, 2)) fail_msg("%s", kmsg);
  close_all(y, want, T * 2 * B * H);
  close_all(yh, wanth, 2 * B * H);
  free(x), free(w), free(r), free(bias), free(h0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_conv),          cmocka_unit_test(test_convtranspose),
      cmocka_unit_test(test_matmul_broadcast), cmocka_unit_test(test_einsum_paths),
      cmocka_unit_test(test_rnn_bidirectional),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
