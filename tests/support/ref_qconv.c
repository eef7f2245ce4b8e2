/*
 * ref_qconv.c - the int8 reference layers (see ref_qconv.h).
 */
#include "ref_qconv.h"

#include <stddef.h>

int32_t ref_q_requant(int32_t acc, int32_t m, uint32_t shift, int32_t zp, int32_t lo, int32_t hi,
                      uint32_t round_even) {
  __int128 p = (__int128)acc * m;
  __int128 r = p;
  if (shift > 0) {
    __int128 half = (__int128)1 << (shift - 1);
    __int128 one = (__int128)1 << shift;
    __int128 q = p + half;
    r = q / one;
    if (q % one != 0 && q < 0) r -= 1; /* floor, not truncation */
    __int128 low = p - (p / one) * one;
    if (low < 0) low += one;           /* p mod 2^shift, in [0, 2^shift) */
    if (round_even && low == half && (r % 2 != 0)) r -= 1;
  }
  __int128 y = r + zp;
  if (y < lo) y = lo;
  if (y > hi) y = hi;
  return (int32_t)y;
}

int32_t ref_q_out_size(int32_t in, int32_t k, int32_t stride, int32_t dil, int32_t pad0, int32_t pad1) {
  return (in + pad0 + pad1 - (k - 1) * dil - 1) / stride + 1;
}

/* x[n][c][iy][ix], or `outside` beyond the image. */
static int32_t pixel(const int8_t *x, int32_t c_n, int32_t h, int32_t w, int32_t n, int32_t c,
                     int32_t iy, int32_t ix, int32_t outside) {
  if (iy < 0 || iy >= h || ix < 0 || ix >= w) return outside;
  return x[(((size_t)n * c_n + c) * h + iy) * w + ix];
}

static void conv_plain(const struct lower_qconv *l, const int8_t *x, int8_t *y) {
  int32_t oh = ref_q_out_size(l->in_h, l->k_h, l->stride_h, l->dil_h, l->pad_t, l->pad_b);
  int32_t ow = ref_q_out_size(l->in_w, l->k_w, l->stride_w, l->dil_w, l->pad_l, l->pad_r);
  int32_t cpg_in = l->in_c / l->groups, cpg_out = l->out_c / l->groups;
  size_t part = (size_t)l->out_c * (size_t)cpg_in * (size_t)(l->k_h * l->k_w);
  for (int32_t n = 0; n < l->n; n++)
    for (int32_t o = 0; o < l->out_c; o++)
      for (int32_t oy = 0; oy < oh; oy++)
        for (int32_t ox = 0; ox < ow; ox++) {
          int64_t acc = l->bias ? l->bias[o] : 0;
          for (int32_t c = 0; c < cpg_in; c++)
            for (int32_t kh = 0; kh < l->k_h; kh++)
              for (int32_t kw = 0; kw < l->k_w; kw++) {
                int32_t ci = (o / cpg_out) * cpg_in + c;
                int32_t iy = oy * l->stride_h - l->pad_t + kh * l->dil_h;
                int32_t ix = ox * l->stride_w - l->pad_l + kw * l->dil_w;
                int32_t v = pixel(x, l->in_c, l->in_h, l->in_w, n, ci, iy, ix, l->in_zero_point);
                int64_t wt = 0; /* the sum of the in_passes parts */
                for (uint32_t p = 0; p < (l->in_passes > 1 ? l->in_passes : 1); p++)
                  wt += l->weights[p * part + (((size_t)o * cpg_in + c) * l->k_h + kh) * l->k_w + kw];
                acc += wt * (v - l->in_zero_point);
              }
          int32_t a32 = (int32_t)(uint32_t)(uint64_t)acc; /* the accumulator wraps */
          if (l->flags & LOWER_CONV_ACC_OUT) { /* byte k of acc in channel 4o + k */
            for (int32_t k = 0; k < 4; k++)
              y[(((size_t)n * 4 * l->out_c + 4 * o + k) * oh + oy) * ow + ox] =
                  (int8_t)(uint8_t)((uint32_t)a32 >> (8 * k));
            continue;
          }
          y[(((size_t)n * l->out_c + o) * oh + oy) * ow + ox] = (int8_t)ref_q_requant(
              a32, l->multiplier[o], l->shift, l->out_zero_point, l->clamp_lo, l->clamp_hi, l->round_even);
        }
}

void ref_qconv(const struct lower_qconv *l, const int8_t *x, const int8_t *r, int8_t *y) {
  conv_plain(l, x, y);
  const struct lower_qresidual *res = l->residual;
  if (!res) return;
  int32_t oh = ref_q_out_size(l->in_h, l->k_h, l->stride_h, l->dil_h, l->pad_t, l->pad_b);
  int32_t ow = ref_q_out_size(l->in_w, l->k_w, l->stride_w, l->dil_w, l->pad_l, l->pad_r);
  size_t total = (size_t)l->n * l->out_c * oh * ow;
  for (size_t i = 0; i < total; i++) {
    int64_t acc = (int64_t)res->a_weight * (y[i] - l->out_zero_point) +
                  (int64_t)res->b_weight * (r[i] - res->b_zero_point);
    y[i] = (int8_t)ref_q_requant((int32_t)acc, res->multiplier, res->shift, res->out_zero_point,
                                 res->clamp_lo, res->clamp_hi, res->round_even);
  }
}

void ref_qfc(const struct lower_qfc *l, const int8_t *x, int8_t *y) {
  for (int32_t n = 0; n < l->n; n++)
    for (int32_t o = 0; o < l->out_features; o++) {
      int64_t acc = l->bias ? l->bias[o] : 0;
      for (int32_t i = 0; i < l->in_features; i++)
        acc += (int64_t)l->weights[(size_t)o * l->in_features + i] *
               (x[(size_t)n * l->in_features + i] - l->in_zero_point);
      y[(size_t)n * l->out_features + o] =
          (int8_t)ref_q_requant((int32_t)(uint32_t)(uint64_t)acc, l->multiplier[o], l->shift,
                                l->out_zero_point, l->clamp_lo, l->clamp_hi, l->round_even);
    }
}

void ref_qpool(const struct lower_qpool *l, const int8_t *x, int8_t *y) {
  int32_t oh = ref_q_out_size(l->in_h, l->k_h, l->stride_h, 1, l->pad_t, l->pad_b);
  int32_t ow = ref_q_out_size(l->in_w, l->k_w, l->stride_w, 1, l->pad_l, l->pad_r);
  for (int32_t n = 0; n < l->n; n++)
    for (int32_t c = 0; c < l->c; c++)
      for (int32_t oy = 0; oy < oh; oy++)
        for (int32_t ox = 0; ox < ow; ox++) {
          int64_t sum = 0;
          int32_t best = -129;
          for (int32_t kh = 0; kh < l->k_h; kh++)
            for (int32_t kw = 0; kw < l->k_w; kw++) {
              int32_t iy = oy * l->stride_h - l->pad_t + kh, ix = ox * l->stride_w - l->pad_l + kw;
              int inside = iy >= 0 && iy < l->in_h && ix >= 0 && ix < l->in_w;
              int32_t v = pixel(x, l->c, l->in_h, l->in_w, n, c, iy, ix, l->in_zero_point);
              if (inside && v > best) best = v;
              sum += v - l->in_zero_point;
            }
          int32_t r = l->kind == LOWER_POOL_MAX
                          ? best
                          : ref_q_requant((int32_t)sum, l->multiplier, l->shift, l->out_zero_point,
                                          l->clamp_lo, l->clamp_hi, l->round_even);
          y[(((size_t)n * l->c + c) * oh + oy) * ow + ox] = (int8_t)r;
        }
}

void ref_qadd(const struct lower_qadd *l, const int8_t *a, const int8_t *b, int8_t *y) {
  size_t total = (size_t)l->n * l->c * l->h * l->w;
  for (size_t i = 0; i < total; i++) {
    int64_t acc = (int64_t)l->a_weight * (a[i] - l->a_zero_point) +
                  (int64_t)l->b_weight * (b[i] - l->b_zero_point);
    y[i] = (int8_t)ref_q_requant((int32_t)acc, l->multiplier, l->shift, l->out_zero_point,
                                 l->clamp_lo, l->clamp_hi, l->round_even);
  }
}

void ref_to_nchwc(const int8_t *x, int32_t n, int32_t c, int32_t h, int32_t w, int32_t block,
                  int8_t fill, int8_t *out) {
  int32_t cb = (c + block - 1) / block;
  for (int32_t in = 0; in < n; in++)
    for (int32_t b = 0; b < cb; b++)
      for (int32_t yy = 0; yy < h; yy++)
        for (int32_t xx = 0; xx < w; xx++)
          for (int32_t l = 0; l < block; l++) {
            int32_t ch = b * block + l;
            size_t d = ((((size_t)in * cb + b) * h + yy) * w + xx) * block + l;
            out[d] = ch < c ? x[(((size_t)in * c + ch) * h + yy) * w + xx] : fill;
          }
}

void ref_from_nchwc(const int8_t *x, int32_t n, int32_t c, int32_t h, int32_t w, int32_t block,
                    int8_t *out) {
  int32_t cb = (c + block - 1) / block;
  for (int32_t in = 0; in < n; in++)
    for (int32_t ch = 0; ch < c; ch++)
      for (int32_t yy = 0; yy < h; yy++)
        for (int32_t xx = 0; xx < w; xx++)
          out[(((size_t)in * c + ch) * h + yy) * w + xx] =
              x[((((size_t)in * cb + ch / block) * h + yy) * w + xx) * block + ch % block];
}

/* ---- fsim harness for lowered programs ---- */

#include <stdlib.h>
#include <string.h>

static uint32_t run_fsim(const struct lower_program *p, const int8_t *in, const int8_t *in2,
                         int8_t *out, struct fsim_result *res, int timing, int reverse) {
  struct fsim *sim = fsim_create(p->cfg);
  if (timing) fsim_set_timing(sim, 1);
  fsim_set_reverse_schedule(sim, reverse);
  uint8_t *code = lower_program_code(p);
  uint8_t *seg[LOWER_SEG_COUNT] = {0};
  struct fsim_job job;
  memset(&job, 0, sizeof job);
  job.insns = code;
  job.insn_count = p->insn_count;
  for (int s = 0; s < LOWER_SEG_COUNT; s++) {
    if (p->seg_bytes[s] == 0) continue;
    seg[s] = malloc(p->seg_bytes[s]);
    memset(seg[s], 0x5A, p->seg_bytes[s]);
    job.seg[s].data = seg[s];
    job.seg[s].size = p->seg_bytes[s];
  }
  memcpy(seg[LOWER_SEG_CONST], p->const_data, p->const_bytes);
  if (in) memcpy(seg[LOWER_SEG_IN], in, p->seg_bytes[LOWER_SEG_IN]);
  if (in2) memcpy(seg[LOWER_SEG_IN2], in2, p->seg_bytes[LOWER_SEG_IN2]);
  uint32_t err = fsim_run(sim, &job, res);
  memcpy(out, seg[LOWER_SEG_OUT], p->seg_bytes[LOWER_SEG_OUT]);
  for (int s = 0; s < LOWER_SEG_COUNT; s++) free(seg[s]);
  free(code);
  fsim_destroy(sim);
  return err;
}

/* The job again with the reverse schedule (fsim_set_reverse_schedule):
 * a token the program lacks shows as a different output. */
uint32_t ref_q_run_fsim(const struct lower_program *p, const int8_t *in, const int8_t *in2,
                        int8_t *out, struct fsim_result *res) {
  uint32_t err = run_fsim(p, in, in2, out, res, 0, 0);
  if (err) return err;
  int8_t *again = malloc(p->seg_bytes[LOWER_SEG_OUT] + 1);
  struct fsim_result r2;
  uint32_t e2 = run_fsim(p, in, in2, again, &r2, 0, 1);
  if (e2 || memcmp(out, again, p->seg_bytes[LOWER_SEG_OUT])) {
    snprintf(res->message, sizeof res->message, "the reverse schedule %s: a dependency token is missing",
             e2 ? "fails" : "gives another output");
    err = res->error = REF_Q_ERR_RACE;
  }
  free(again);
  return err;
}

uint32_t ref_q_run_fsim_timed(const struct lower_program *p, const int8_t *in, const int8_t *in2,
                              int8_t *out, struct fsim_result *res) {
  return run_fsim(p, in, in2, out, res, 1, 0);
}

int ref_q_counter_mismatch(const struct lower_program *p, const struct fsim_result *res) {
  for (int c = 0; c < LOOM_CNT_COUNT; c++)
    if ((LOOM_COUNTER_EXACT_MASK >> c & 1u) && p->report.counters[c] != res->counters[c]) return c;
  return -1;
}

uint32_t ref_q_rand(struct ref_q_rng *r) {
  r->s ^= r->s >> 12;
  r->s ^= r->s << 25;
  r->s ^= r->s >> 27;
  return (uint32_t)((r->s * UINT64_C(2685821657736338717)) >> 32);
}

int32_t ref_q_range(struct ref_q_rng *r, int32_t lo, int32_t hi) {
  return lo + (int32_t)(ref_q_rand(r) % (uint32_t)(hi - lo + 1));
}

void ref_q_fill(struct ref_q_rng *r, int8_t *x, size_t n, int32_t lo, int32_t hi) {
  for (size_t i = 0; i < n; i++) x[i] = (int8_t)ref_q_range(r, lo, hi);
}
