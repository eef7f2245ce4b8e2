/*
 * test_conv_f32.c - the fast float convolution (sw_compiler/conv_f32.c)
 * against the plain loop it replaces, bit for bit.
 *
 * conv_f32 promises the same floats as the reference loop (bias, then
 * w * x in (ci, kh, kw) order, padded taps skipped), so the comparison is
 * exact (memcmp after mapping -0 to +0, the one documented difference).
 * The geometries cover groups and depthwise, strides, dilations,
 * asymmetric padding, 1-D windows, output rows that are not a multiple of
 * the micro-kernel's, reductions longer than one packed k-block, several
 * images, and convs big enough to be split between threads.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sw_compiler/compiler.h"

/* The reference: ir_eval_ref.c's loop before conv_f32.c, restated. */
static void conv_plain(const struct conv_geo *g, const float *x, const float *w, const float *b,
                       float *y) {
  int64_t mg = g->m / g->group, plane = g->oh * g->ow;
  for (int64_t n = 0; n < g->n; n++)
    for (int64_t m = 0; m < g->m; m++) {
      float *yp = y + (n * g->m + m) * plane;
      for (int64_t i = 0; i < plane; i++) yp[i] = b ? b[m] : 0.0f;
      int64_t c0 = (m / mg) * g->cg;
      for (int64_t ci = 0; ci < g->cg; ci++)
        for (int64_t kh = 0; kh < g->kh; kh++)
          for (int64_t kw = 0; kw < g->kw; kw++) {
            float wv = w[((m * g->cg + ci) * g->kh + kh) * g->kw + kw];
            for (int64_t oh = 0; oh < g->oh; oh++)
              for (int64_t ow = 0; ow < g->ow; ow++) {
                int64_t ih = oh * g->sh - g->pt + kh * g->dh, iw = ow * g->sw - g->pl + kw * g->dw;
                if (ih < 0 || ih >= g->h || iw < 0 || iw >= g->w) continue;
                yp[oh * g->ow + ow] += wv * x[((n * g->c + c0 + ci) * g->h + ih) * g->w + iw];
              }
          }
    }
}

static uint32_t rng = 12345;
static float frand(void) {
  rng = rng * 1664525u + 1013904223u;
  return (float)((int32_t)(rng >> 8) - (1 << 23)) / (float)(1 << 22);
}

static float *rand_buf(int64_t n) {
  float *v = malloc((size_t)(n ? n : 1) * sizeof *v);
  assert_non_null(v);
  for (int64_t i = 0; i < n; i++) v[i] = frand();
  return v;
}

/* n, c, h, w, m, group, kh, kw, stride h/w, dilation h/w, pads t/l/b/r */
struct shape {
  int64_t n, c, h, w, m, group, kh, kw, sh, sw, dh, dw, pt, pl, pb, pr;
};

static void check_one(const struct shape *s, int with_bias) {
  struct conv_geo g = {s->n, s->c, s->h, s->w, s->m, s->c / s->group, s->kh, s->kw, 0, 0,
                       s->group, s->sh, s->sw, s->dh, s->dw, s->pt, s->pl};
  g.oh = (s->h + s->pt + s->pb - (s->kh - 1) * s->dh - 1) / s->sh + 1;
  g.ow = (s->w + s->pl + s->pr - (s->kw - 1) * s->dw - 1) / s->sw + 1;
  int64_t ny = g.n * g.m * g.oh * g.ow;
  float *x = rand_buf(g.n * g.c * g.h * g.w), *w = rand_buf(g.m * g.cg * g.kh * g.kw);
  float *b = with_bias ? rand_buf(g.m) : NULL, *y0 = rand_buf(ny), *y1 = rand_buf(ny);
  conv_plain(&g, x, w, b, y0);
  conv_f32(&g, x, w, b, y1);
  for (int64_t i = 0; i < ny; i++) {
    if (y0[i] == 0.0f) y0[i] = 0.0f; /* -0 -> +0 */
    if (y1[i] == 0.0f) y1[i] = 0.0f;
    if (memcmp(&y0[i], &y1[i], sizeof *y0))
      fail_msg("conv %ldx%ldx%ldx%ld m=%ld group=%ld k=%ldx%ld: output %ld: %.9g, expected %.9g",
               (long)s->n, (long)s->c, (long)s->h, (long)s->w, (long)s->m, (long)s->group,
               (long)s->kh, (long)s->kw, (long)i, y1[i], y0[i]);
  }
  free(x), free(w), free(b), free(y0), free(y1);
}

static void test_shapes(void **state) {
  (void)state;
  static const struct shape shapes[] = {
      {1, 3, 9, 11, 5, 1, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},       /* odd sizes, m < 8 */
      {2, 16, 14, 14, 19, 1, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1},    /* stride 2, two images */
      {1, 8, 12, 10, 8, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},      /* depthwise */
      {1, 12, 13, 13, 24, 4, 3, 3, 2, 1, 2, 1, 2, 0, 1, 3},    /* groups, dilation, asymmetric pads */
      {1, 40, 7, 9, 33, 1, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},      /* K = 360 > one k-block */
      {1, 64, 20, 20, 64, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0},    /* 1x1 */
      {1, 3, 40, 40, 16, 1, 7, 7, 2, 2, 1, 1, 3, 3, 3, 3},     /* the ResNet stem */
      {1, 5, 1, 50, 6, 1, 1, 5, 1, 3, 1, 2, 0, 4, 0, 4},       /* a 1-D window */
      {1, 64, 28, 28, 96, 1, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},    /* big enough for threads */
      {1, 4, 6, 6, 4, 1, 5, 5, 1, 1, 1, 1, 0, 0, 0, 0},        /* window = image */
      {1, 2, 3, 3, 3, 1, 3, 3, 1, 1, 1, 1, 4, 4, 4, 4},        /* padding wider than the image */
  };
  for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++) {
    check_one(&shapes[i], 1);
    check_one(&shapes[i], 0);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_shapes),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
