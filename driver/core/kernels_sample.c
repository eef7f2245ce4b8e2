/*
 * kernels_sample.c - sampling at computed coordinates, and detection:
 * GridSample (opset 16: bilinear, nearest, bicubic; zeros, border,
 * reflection padding; align_corners), RoiAlign (avg and max, both
 * coordinate modes of opset 16, adaptive sampling), MaxRoiPool and
 * NonMaxSuppression (a LOOM_KERNEL_DYNAMIC kernel).
 *
 * The interpolation rules are PyTorch's grid_sample and ONNX Runtime's
 * RoiAlign, which ONNX's expected outputs come from: GridSample treats
 * taps outside the input as zero after the padding mode has moved the
 * sampling point; RoiAlign clamps a point within one pixel of the border
 * and ignores points farther out.  NonMaxSuppression keeps, per batch and
 * class, the best-scoring boxes above score_threshold whose IoU with every
 * box kept before is at most iou_threshold, ties broken by box index.
 */
#include <math.h>
#include <string.h>

#include "kernel_util.h"

/* ---- GridSample ---- */

struct gs {
  const float *x;
  int64_t h, w;
  int mode, pad, align; /* mode: bilinear, nearest, bicubic; pad: zeros, border, reflection */
};

static double reflect(double v, double lo, double hi) {
  double span = hi - lo;
  if (span <= 0) return 0;
  double d = fabs(v - lo), flips = floor(d / span), extra = d - flips * span;
  return fmod(flips, 2) == 0 ? lo + extra : hi - extra;
}

/* A coordinate moved by the padding mode (border clamps, reflection mirrors). */
static double pad_coord(const struct gs *g, double v, int64_t size) {
  if (g->pad == 1) return fmin(fmax(v, 0), (double)(size - 1));
  if (g->pad == 2) {
    v = g->align ? reflect(v, 0, (double)(size - 1)) : reflect(v, -0.5, (double)size - 0.5);
    return fmin(fmax(v, 0), (double)(size - 1));
  }
  return v;
}

static double pixel(const struct gs *g, const float *plane, int64_t y, int64_t x) {
  return y < 0 || y >= g->h || x < 0 || x >= g->w ? 0 : plane[y * g->w + x];
}

static double cubic(double a, double t, int k) { /* weight of tap k in {-1, 0, 1, 2} at fraction t */
  double d = fabs(t - k);
  return d <= 1 ? ((a + 2) * d - (a + 3)) * d * d + 1 : d < 2 ? ((a * d - 5 * a) * d + 8 * a) * d - 4 * a : 0;
}

static double grid_value(const struct gs *g, const float *plane, double gx, double gy) {
  double x = g->align ? (gx + 1) / 2 * (double)(g->w - 1) : ((gx + 1) * (double)g->w - 1) / 2;
  double y = g->align ? (gy + 1) / 2 * (double)(g->h - 1) : ((gy + 1) * (double)g->h - 1) / 2;
  if (g->mode == 2) { /* bicubic: padding applies to each tap */
    double x0 = floor(x), y0 = floor(y), v = 0;
    for (int i = -1; i <= 2; i++)
      for (int j = -1; j <= 2; j++) {
        double ty = pad_coord(g, y0 + i, g->h), tx = pad_coord(g, x0 + j, g->w);
        v += cubic(-0.75, y - y0, i) * cubic(-0.75, x - x0, j) * pixel(g, plane, (int64_t)ty, (int64_t)tx);
      }
    return v;
  }
  x = pad_coord(g, x, g->w), y = pad_coord(g, y, g->h);
  if (g->mode == 1) return pixel(g, plane, (int64_t)nearbyint(y), (int64_t)nearbyint(x));
  double x0 = floor(x), y0 = floor(y), lx = x - x0, ly = y - y0;
  int64_t ix = (int64_t)x0, iy = (int64_t)y0;
  return (1 - ly) * ((1 - lx) * pixel(g, plane, iy, ix) + lx * pixel(g, plane, iy, ix + 1)) +
         ly * ((1 - lx) * pixel(g, plane, iy + 1, ix) + lx * pixel(g, plane, iy + 1, ix + 1));
}

static loom_status k_gridsample(const struct loom_kcall *c) {
  loom_status st = loom_k_arity(c, 2, 2, 1, 1);
  const struct loom_kt *x = &c->in[0], *grid = &c->in[1];
  struct gs g = {0};
  static const char *const modes[] = {"bilinear", "nearest", "bicubic", NULL};
  static const char *const pads[] = {"zeros", "border", "reflection", NULL};
  if (!st) st = loom_k_dtype(c, x, "X", DTM_FLOAT);
  if (!st) st = loom_k_rank(c, x, "X", 4, 4);
  if (!st) st = loom_k_rank(c, grid, "grid", 4, 4);
  if (!st) st = loom_k_choice(c, "mode", "bilinear", modes, &g.mode);
  if (!st) st = loom_k_choice(c, "padding_mode", "zeros", pads, &g.pad);
  if (!st && (grid->dims[0] != x->dims[0] || grid->dims[3] != 2)) st = KFAIL(c, LOOM_E_INVALID, "grid must be [N, H, W, 2]");
  if (st) return st;
  int64_t dims[4] = {x->dims[0], x->dims[1], grid->dims[1], grid->dims[2]};
  if ((st = loom_k_out_shape(c, &c->out[0], 4, dims))) return st;
  g.align = loom_kattr_int(c, "align_corners", 0) != 0, g.h = x->dims[2], g.w = x->dims[3];
  struct loom_kviews v;
  if ((st = loom_k_views(c, 2, &v))) return loom_k_views_done(c, &v, st);
  const float *px = v.in[0], *pg = v.in[1];
  float *py = v.out;
  int64_t pts = dims[2] * dims[3];
  for (int64_t n = 0; n < dims[0]; n++)
    for (int64_t ch = 0; ch < dims[1]; ch++) {
      const float *plane = px + (n * dims[1] + ch) * g.h * g.w;
      for (int64_t p = 0; p < pts; p++) {
        const float *gp = pg + (n * pts + p) * 2;
        py[(n * dims[1] + ch) * pts + p] = (float)grid_value(&g, plane, gp[0], gp[1]);
      }
    }
  return loom_k_views_done(c, &v, LOOM_OK);
}

/* ---- RoiAlign ---- */

/* ONNX Runtime's bilinear read: 0 beyond one pixel outside, clamped inside. */
static double roi_bilinear(const float *plane, int64_t h, int64_t w, double y, double x, int max_mode) {
  if (y < -1.0 || y > (double)h || x < -1.0 || x > (double)w) return 0;
  y = y <= 0 ? 0 : y, x = x <= 0 ? 0 : x;
  int64_t y0 = (int64_t)y, x0 = (int64_t)x, y1, x1;
  if (y0 >= h - 1) y0 = y1 = h - 1, y = (double)y0;
  else y1 = y0 + 1;
  if (x0 >= w - 1) x0 = x1 = w - 1, x = (double)x0;
  else x1 = x0 + 1;
  double ly = y - (double)y0, lx = x - (double)x0, hy = 1 - ly, hx = 1 - lx;
  double a = hy * hx * plane[y0 * w + x0], b = hy * lx * plane[y0 * w + x1];
  double cc = ly * hx * plane[y1 * w + x0], d = ly * lx * plane[y1 * w + x1];
  return max_mode ? fmax(fmax(a, b), fmax(cc, d)) : a + b + cc + d;
}

static loom_status k_roialign(const struct loom_kcall *c) {
  loom_status st = loom_k_arity(c, 3, 3, 1, 1);
  const struct loom_kt *x = &c->in[0], *rois = &c->in[1], *bi = &c->in[2];
  static const char *const modes[] = {"avg", "max", NULL};
  static const char *const ctms[] = {"half_pixel", "output_half_pixel", NULL};
  int mode = 0, ctm = 1;
  if (!st) st = loom_k_dtype(c, x, "X", DTM_FLOAT);
  if (!st) st = loom_k_rank(c, x, "X", 4, 4);
  if (!st) st = loom_k_choice(c, "mode", "avg", modes, &mode);
  if (!st) st = loom_k_choice(c, "coordinate_transformation_mode", c->opset >= 16 ? "half_pixel" : "output_half_pixel", ctms, &ctm);
  if (!st && (rois->rank != 2 || rois->dims[1] != 4 || loom_kt_numel(bi) != rois->dims[0]))
    st = KFAIL(c, LOOM_E_INVALID, "rois must be [num_rois, 4] with one batch index each");
  if (st) return st;
  int64_t oh = loom_kattr_int(c, "output_height", 1), ow = loom_kattr_int(c, "output_width", 1);
  int64_t sr = loom_kattr_int(c, "sampling_ratio", 0), h = x->dims[2], w = x->dims[3], ch = x->dims[1];
  double scale = loom_kattr_float(c, "spatial_scale", 1), off = ctm == 0 ? 0.5 : 0;
  int64_t dims[4] = {rois->dims[0], ch, oh, ow};
  if (oh < 1 || ow < 1 || sr < 0) return KFAIL(c, LOOM_E_INVALID, "bad output size or sampling_ratio");
  if ((st = loom_k_out_shape(c, &c->out[0], 4, dims))) return st;
  for (int64_t r = 0; r < rois->dims[0]; r++)
    if (loom_k_idx(bi, r) < 0 || loom_k_idx(bi, r) >= x->dims[0])
      return KFAIL(c, LOOM_E_INVALID, "batch index %lld is out of range", (long long)loom_k_idx(bi, r));
  struct loom_kviews views;
  if ((st = loom_k_views(c, 1, &views))) return loom_k_views_done(c, &views, st);
  const float *px = views.in[0];
  float *py = views.out;
  for (int64_t r = 0; r < rois->dims[0]; r++) {
    int64_t b = loom_k_idx(bi, r);
    double x1 = loom_kt_get_f64(rois, r * 4) * scale - off, y1 = loom_kt_get_f64(rois, r * 4 + 1) * scale - off;
    double rw = loom_kt_get_f64(rois, r * 4 + 2) * scale - off - x1, rh = loom_kt_get_f64(rois, r * 4 + 3) * scale - off - y1;
    if (ctm == 1) rw = fmax(rw, 1), rh = fmax(rh, 1);
    double bw = rw / (double)ow, bh = rh / (double)oh;
    int64_t gh = sr ? sr : (int64_t)ceil(rh / (double)oh), gw = sr ? sr : (int64_t)ceil(rw / (double)ow);
    gh = gh < 1 ? 1 : gh, gw = gw < 1 ? 1 : gw;
    for (int64_t k = 0; k < ch; k++) {
      const float *plane = px + (b * ch + k) * h * w;
      for (int64_t i = 0; i < oh; i++)
        for (int64_t j = 0; j < ow; j++) {
          double acc = mode ? -INFINITY : 0;
          for (int64_t iy = 0; iy < gh; iy++)
            for (int64_t ix = 0; ix < gw; ix++) {
              double yy = y1 + (double)i * bh + ((double)iy + 0.5) * bh / (double)gh;
              double xx = x1 + (double)j * bw + ((double)ix + 0.5) * bw / (double)gw;
              double v = roi_bilinear(plane, h, w, yy, xx, mode);
              acc = mode ? fmax(acc, v) : acc + v;
            }
          py[((r * ch + k) * oh + i) * ow + j] = (float)(mode ? acc : acc / (double)(gh * gw));
        }
    }
  }
  return loom_k_views_done(c, &views, LOOM_OK);
}

/* ---- MaxRoiPool ---- */

static loom_status k_maxroipool(const struct loom_kcall *c) {
  loom_status st = loom_k_arity(c, 2, 2, 1, 1);
  const struct loom_kt *x = &c->in[0], *rois = &c->in[1];
  const int64_t *ps = NULL;
  if (!st) st = loom_k_dtype(c, x, "X", DTM_FLOAT);
  if (!st) st = loom_k_rank(c, x, "X", 4, 4);
  if (!st) st = loom_k_ints_n(c, "pooled_shape", 2, &ps);
  if (!st && !ps) st = KFAIL(c, LOOM_E_INVALID, "pooled_shape is missing");
  if (!st && (rois->rank != 2 || rois->dims[1] != 5)) st = KFAIL(c, LOOM_E_INVALID, "rois must be [num_rois, 5]");
  if (st) return st;
  int64_t ch = x->dims[1], h = x->dims[2], w = x->dims[3], dims[4] = {rois->dims[0], ch, ps[0], ps[1]};
  if (ps[0] < 1 || ps[1] < 1) return KFAIL(c, LOOM_E_INVALID, "pooled_shape must be positive");
  if ((st = loom_k_out_shape(c, &c->out[0], 4, dims))) return st;
  double scale = loom_kattr_float(c, "spatial_scale", 1);
  for (int64_t r = 0; r < rois->dims[0]; r++) {
    int64_t b = (int64_t)loom_kt_get_f64(rois, r * 5), v[4];
    if (b < 0 || b >= x->dims[0]) return KFAIL(c, LOOM_E_INVALID, "batch index %lld is out of range", (long long)b);
    for (int k = 0; k < 4; k++) v[k] = (int64_t)round(loom_kt_get_f64(rois, r * 5 + 1 + k) * scale);
    double rh = (double)(v[3] - v[1] + 1 > 1 ? v[3] - v[1] + 1 : 1), rw = (double)(v[2] - v[0] + 1 > 1 ? v[2] - v[0] + 1 : 1);
    double bh = rh / (double)ps[0], bw = rw / (double)ps[1];
    for (int64_t k = 0; k < ch; k++)
      for (int64_t i = 0; i < ps[0]; i++)
        for (int64_t j = 0; j < ps[1]; j++) {
          int64_t hs = (int64_t)floor((double)i * bh) + v[1], he = (int64_t)ceil((double)(i + 1) * bh) + v[1];
          int64_t ws = (int64_t)floor((double)j * bw) + v[0], we = (int64_t)ceil((double)(j + 1) * bw) + v[0];
          hs = hs < 0 ? 0 : hs > h ? h : hs, he = he < 0 ? 0 : he > h ? h : he;
          ws = ws < 0 ? 0 : ws > w ? w : ws, we = we < 0 ? 0 : we > w ? w : we;
          double m = hs >= he || ws >= we ? 0 : -INFINITY;
          for (int64_t yy = hs; yy < he; yy++)
            for (int64_t xx = ws; xx < we; xx++) m = fmax(m, loom_kt_get_f64(x, ((b * ch + k) * h + yy) * w + xx));
          loom_kt_set_f64(&c->out[0], ((r * ch + k) * ps[0] + i) * ps[1] + j, m);
        }
  }
  return LOOM_OK;
}

/* ---- NonMaxSuppression ---- */

struct nms {
  const struct loom_kt *scores;
  int64_t base; /* scores of this batch and class */
};

static int by_score(const void *ctx, int64_t a, int64_t b) {
  const struct nms *n = ctx;
  double sa = loom_kt_get_f64(n->scores, n->base + a), sb = loom_kt_get_f64(n->scores, n->base + b);
  return sa > sb ? -1 : sa < sb;
}

/* Corners y1 <= y2, x1 <= x2 of box i. */
static void corners(const struct loom_kt *boxes, int64_t i, int center, double *y1, double *x1, double *y2, double *x2) {
  double v[4];
  for (int k = 0; k < 4; k++) v[k] = loom_kt_get_f64(boxes, i * 4 + k);
  if (center) {
    *x1 = v[0] - v[2] / 2, *x2 = v[0] + v[2] / 2, *y1 = v[1] - v[3] / 2, *y2 = v[1] + v[3] / 2;
  } else {
    *y1 = fmin(v[0], v[2]), *y2 = fmax(v[0], v[2]), *x1 = fmin(v[1], v[3]), *x2 = fmax(v[1], v[3]);
  }
}

static double iou(const struct loom_kt *boxes, int64_t a, int64_t b, int center) {
  double ay1, ax1, ay2, ax2, by1, bx1, by2, bx2;
  corners(boxes, a, center, &ay1, &ax1, &ay2, &ax2);
  corners(boxes, b, center, &by1, &bx1, &by2, &bx2);
  double ih = fmin(ay2, by2) - fmax(ay1, by1), iw = fmin(ax2, bx2) - fmax(ax1, bx1);
  if (ih <= 0 || iw <= 0) return 0;
  double inter = ih * iw, uni = (ay2 - ay1) * (ax2 - ax1) + (by2 - by1) * (bx2 - bx1) - inter;
  return uni > 0 ? inter / uni : 0;
}

static loom_status k_nms(const struct loom_kcall *c) {
  loom_status st = loom_k_arity(c, 2, 5, 1, 1);
  const struct loom_kt *boxes = &c->in[0], *scores = &c->in[1];
  struct loom_kt *y = &c->out[0];
  int64_t max_out = 0;
  double iou_th = 0, score_th = -INFINITY;
  if (!st) st = loom_k_dtype(c, y, "output", DTM(LOOM_DT_I64));
  if (!st && (boxes->rank != 3 || boxes->dims[2] != 4 || scores->rank != 3 || scores->dims[0] != boxes->dims[0] ||
              scores->dims[2] != boxes->dims[1]))
    st = KFAIL(c, LOOM_E_INVALID, "boxes must be [B, N, 4] and scores [B, C, N]");
  if (!st && c->n_in > 2 && loom_kt_present(&c->in[2])) st = loom_k_scalar_i64(c, &c->in[2], "max_output_boxes_per_class", &max_out);
  if (!st && c->n_in > 3 && loom_kt_present(&c->in[3])) st = loom_k_scalar_f64(c, &c->in[3], "iou_threshold", &iou_th);
  if (!st && c->n_in > 4 && loom_kt_present(&c->in[4])) st = loom_k_scalar_f64(c, &c->in[4], "score_threshold", &score_th);
  if (st) return st;
  int center = loom_kattr_int(c, "center_point_box", 0) != 0;
  int64_t nb = boxes->dims[0], ncls = scores->dims[1], n = boxes->dims[1], cap = y->rank == 2 ? y->dims[0] : 0, found = 0;
  if (y->rank != 2 || y->dims[1] != 3) return KFAIL(c, LOOM_E_INVALID, "the output must be [capacity, 3]");
  int64_t *idx = loom_k_alloc(c, 3 * n, sizeof(int64_t)), *out = y->data;
  if (!idx) return LOOM_E_NOMEM;
  int64_t *tmp = idx + n, *kept = idx + 2 * n;
  for (int64_t b = 0; b < nb && !st; b++)
    for (int64_t k = 0; k < ncls && !st; k++) {
      struct nms ctx = {scores, (b * ncls + k) * n};
      int64_t m = 0, nk = 0;
      for (int64_t i = 0; i < n; i++)
        if (loom_kt_get_f64(scores, ctx.base + i) > score_th) idx[m++] = i;
      loom_k_sort(idx, m, by_score, &ctx, tmp);
      struct loom_kt bx = *boxes;
      bx.data = (char *)boxes->data + b * n * 4 * loom_dtype_size(boxes->dtype);
      for (int64_t i = 0; i < m && nk < max_out; i++) {
        int ok = 1;
        for (int64_t j = 0; j < nk && ok; j++) ok = iou(&bx, idx[i], kept[j], center) <= iou_th;
        if (!ok) continue;
        kept[nk++] = idx[i];
        if (found >= cap) st = KFAIL(c, LOOM_E_INVALID, "more than the output's %lld selected boxes", (long long)cap);
        else out[found * 3] = b, out[found * 3 + 1] = k, out[found * 3 + 2] = idx[i], found++;
      }
    }
  free(idx);
  if (!st) y->dims[0] = found;
  return st;
}

/* At most every box of every batch and class: [B * C * N, 3]. */
static loom_status cap_nms(const struct loom_kcall *c, int k, struct loom_kt *out) {
  if (c->n_in < 2 || !loom_kt_present(&c->in[1]) || c->in[1].rank != 3)
    return KFAIL(c, LOOM_E_INVALID, "scores must be [B, C, N]");
  out->rank = 2, out->dims[0] = loom_kt_numel(&c->in[1]), out->dims[1] = 3;
  return LOOM_OK;
}

const struct loom_kernel loom_kernels_sample[] = {
    {"GridSample", k_gridsample, 0, NULL},
    {"RoiAlign", k_roialign, 0, NULL},
    {"MaxRoiPool", k_maxroipool, 0, NULL},
    {"NonMaxSuppression", k_nms, LOOM_KERNEL_DYNAMIC, cap_nms},
    {NULL, NULL, 0, NULL},
};
