/*
 * kernels_rnn.c - the recurrent layers RNN, GRU and LSTM: forward,
 * reverse and bidirectional, per-batch sequence lengths, initial states,
 * LSTM peepholes and input_forget, GRU linear_before_reset, clip, every
 * activation function ONNX lists (with their alpha/beta), and the batch-
 * first layout of opset 14.
 *
 * The input projection of all time steps is one GEMM per direction
 * (X [steps * batch, I] times W^T), with both biases folded in; each step
 * then adds H_{t-1} R^T (a small GEMM) and applies the gates.  A batch
 * entry whose sequence is shorter stops early: its Y rows past the end are
 * zero and its Y_h / Y_c are the last valid step's, as ONNX Runtime
 * produces; the reverse direction starts at the sequence's own last step.
 * Gate order is ONNX's: GRU z, r, h; LSTM i, o, f, c; peepholes i, o, f.
 */
#include <math.h>
#include <string.h>

#include "kernel_util.h"

enum cell { C_RNN, C_GRU, C_LSTM };

struct act {
  int kind;
  float alpha, beta;
};

static const char *const act_names[] = {"Relu",        "Tanh",     "Sigmoid", "Affine",  "LeakyRelu",
                                        "ThresholdedRelu", "ScaledTanh", "HardSigmoid", "Elu", "Softsign",
                                        "Softplus", NULL};

static float act(const struct act *a, float x) {
  switch (a->kind) {
  case 0: return x > 0 ? x : 0;
  case 1: return tanhf(x);
  case 2: return 1 / (1 + expf(-x));
  case 3: return a->alpha * x + a->beta;
  case 4: return x < 0 ? a->alpha * x : x;
  case 5: return x > a->alpha ? x : 0;
  case 6: return a->alpha * tanhf(a->beta * x);
  case 7: return fmaxf(0, fminf(1, a->alpha * x + a->beta));
  case 8: return x < 0 ? a->alpha * (expf(x) - 1) : x;
  case 9: return x / (1 + fabsf(x));
  default: return x > 0 ? x + log1pf(expf(-x)) : log1pf(expf(x));
  }
}

/* Default alpha/beta of the functions that take them. */
static int act_params(int kind, float *alpha, float *beta) {
  switch (kind) {
  case 3: *alpha = 1, *beta = 0; return 2;
  case 4: *alpha = 0.01f; return 1;
  case 5: *alpha = 1; return 1;
  case 6: *alpha = 1, *beta = 1; return 2;
  case 7: *alpha = 0.2f, *beta = 0.5f; return 2;
  case 8: *alpha = 1; return 1;
  default: return 0;
  }
}

struct rnn {
  enum cell cell;
  int dirs, gates, reverse_only, layout, lbr, input_forget;
  int64_t steps, batch, in, hid;
  float clip;
  struct act f[2][3];
  const float *x, *w, *r, *b, *p, *h0, *c0; /* float views */
  const struct loom_kt *lens;
  float *y, *yh, *yc; /* NULL when absent */
};

static loom_status activations(const struct loom_kcall *c, struct rnn *s) {
  static const int dflt[3][3] = {{1}, {2, 1}, {2, 1, 1}};
  int per = s->cell == C_RNN ? 1 : s->cell == C_GRU ? 2 : 3;
  const struct loom_kattr *names = loom_kattr_find(c, "activations");
  const float *al = NULL, *be = NULL;
  int na = loom_kattr_floats(c, "activation_alpha", &al), nb = loom_kattr_floats(c, "activation_beta", &be);
  int ia = 0, ib = 0;
  if (names && (names->kind != LOOM_KATTR_STRINGS || names->n != per * s->dirs))
    return KFAIL(c, LOOM_E_INVALID, "activations must list %d functions", per * s->dirs);
  for (int d = 0; d < s->dirs; d++)
    for (int k = 0; k < per; k++) {
      struct act *a = &s->f[d][k];
      a->kind = dflt[s->cell][k];
      if (names) {
        const char *nm = names->strings[d * per + k];
        int j = 0;
        while (act_names[j] && strcasecmp(act_names[j], nm)) j++;
        if (!act_names[j]) return KFAIL(c, LOOM_E_UNSUPPORTED, "activation %s is not supported", nm);
        a->kind = j;
      }
      int np = act_params(a->kind, &a->alpha, &a->beta);
      if (np >= 1 && ia < na) a->alpha = al[ia++];
      if (np >= 2 && ib < nb) a->beta = be[ib++];
    }
  return LOOM_OK;
}

static float clipv(const struct rnn *s, float v) {
  return s->clip > 0 ? (v < -s->clip ? -s->clip : v > s->clip ? s->clip : v) : v;
}

/* Row offset of step t, batch b in X or Y (layout 0: [steps, batch]). */
static int64_t xrow(const struct rnn *s, int64_t t, int64_t b) {
  return s->layout ? b * s->steps + t : t * s->batch + b;
}

/* One GRU step of one batch entry: xg = x W^T + biases, hg = h R^T for
 * z and r (and h with linear_before_reset), hb = h, updated in place;
 * tmp holds 3H floats. */
static void gru_cell(const struct rnn *s, const struct act *f, const float *xg, const float *hg, float *hb,
                     const float *r, int d, float *tmp) {
  int64_t H = s->hid;
  float *z = tmp, *rg = tmp + H, *rh = tmp + 2 * H;
  for (int64_t j = 0; j < H; j++) z[j] = act(&f[0], clipv(s, xg[j] + hg[j]));
  for (int64_t j = 0; j < H; j++) rg[j] = act(&f[0], clipv(s, xg[H + j] + hg[H + j]));
  const float *rbh = s->b ? s->b + d * 6 * H + 5 * H : NULL;
  if (!s->lbr)
    for (int64_t k = 0; k < H; k++) rh[k] = rg[k] * hb[k];
  for (int64_t j = 0; j < H; j++) {
    float v;
    if (s->lbr) {
      v = xg[2 * H + j] + rg[j] * (hg[2 * H + j] + (rbh ? rbh[j] : 0));
    } else { /* (r . h) R_h^T; R_h's bias is already in xg */
      float acc = 0;
      for (int64_t k = 0; k < H; k++) acc += rh[k] * r[(2 * H + j) * H + k];
      v = xg[2 * H + j] + acc;
    }
    float cand = act(&f[1], clipv(s, v));
    z[j] = (1 - z[j]) * cand + z[j] * hb[j]; /* the new h, held until the loop ends */
  }
  memcpy(hb, z, (size_t)H * sizeof(float));
}

/* One direction d; scratch holds xw [steps*batch, G*H], hr [batch, G*H],
 * h, c [batch, H] and rh [batch, 3H]. */
static loom_status direction(const struct loom_kcall *c, const struct rnn *s, int d, float *scratch) {
  int64_t G = s->gates, H = s->hid, B = s->batch, T = s->steps, GH = G * H;
  float *xw = scratch, *hr = xw + T * B * GH, *h = hr + B * GH, *cs = h + B * H, *rh = cs + B * H;
  const float *w = s->w + d * GH * s->in, *r = s->r + d * GH * H;
  loom_status st = loom_k_sgemm(c, T * B, GH, s->in, 1, s->x, s->in, 0, w, s->in, 1, 0, xw, GH);
  if (st) return st;
  for (int64_t i = 0; s->b && i < T * B; i++)
    for (int64_t g = 0; g < GH; g++) {
      float bias = s->b[d * 2 * GH + g];
      if (!(s->cell == C_GRU && s->lbr && g >= 2 * H)) bias += s->b[d * 2 * GH + GH + g];
      xw[i * GH + g] += bias;
    }
  for (int64_t i = 0; i < B * H; i++) {
    h[i] = s->h0 ? s->h0[d * B * H + i] : 0;
    cs[i] = s->c0 ? s->c0[d * B * H + i] : 0;
  }
  int rev = s->reverse_only || d == 1;
  const struct act *f = s->f[d];
  for (int64_t step = 0; step < T; step++) {
    if ((st = loom_k_sgemm(c, B, s->cell == C_GRU ? 2 * H : GH, H, 1, h, H, 0, r, H, 1, 0, hr, GH))) return st;
    if (s->cell == C_GRU && s->lbr && (st = loom_k_sgemm(c, B, H, H, 1, h, H, 0, r + 2 * H * H, H, 1, 0, hr + 2 * H, GH)))
      return st;
    for (int64_t b = 0; b < B; b++) {
      int64_t len = s->lens ? loom_k_idx(s->lens, b) : T;
      if (step >= len) continue;
      int64_t t = rev ? len - 1 - step : step;
      const float *xg = xw + xrow(s, t, b) * GH;
      float *hg = hr + b * GH, *hb = h + b * H, *cb = cs + b * H;
      if (s->cell == C_RNN) {
        for (int64_t j = 0; j < H; j++) hb[j] = act(&f[0], clipv(s, xg[j] + hg[j]));
      } else if (s->cell == C_GRU) {
        gru_cell(s, f, xg, hg, hb, r, d, rh + b * 3 * H);
      } else {
        float *gi = hg; /* pre-activations in place: i, o, f, c */
        for (int64_t g = 0; g < GH; g++) gi[g] += xg[g];
        for (int64_t j = 0; j < H; j++) {
          float pi = s->p ? s->p[d * 3 * H + j] : 0, po = s->p ? s->p[d * 3 * H + H + j] : 0;
          float pf = s->p ? s->p[d * 3 * H + 2 * H + j] : 0;
          float ig = act(&f[0], clipv(s, gi[j] + pi * cb[j]));
          float fg = s->input_forget ? 1 - ig : act(&f[0], clipv(s, gi[2 * H + j] + pf * cb[j]));
          float cg = act(&f[1], clipv(s, gi[3 * H + j]));
          cb[j] = fg * cb[j] + ig * cg;
          float og = act(&f[0], clipv(s, gi[H + j] + po * cb[j]));
          hb[j] = og * act(&f[2], cb[j]);
        }
      }
      if (s->y) {
        float *yr = s->y + (s->layout ? (b * T + t) * s->dirs + d : (t * s->dirs + d) * B + b) * H;
        memcpy(yr, hb, (size_t)H * sizeof(float));
      }
    }
  }
  for (int64_t b = 0; b < B; b++) {
    int64_t at = s->layout ? (b * s->dirs + d) * H : (d * B + b) * H;
    if (s->yh) memcpy(s->yh + at, h + b * H, (size_t)H * sizeof(float));
    if (s->yc) memcpy(s->yc + at, cs + b * H, (size_t)H * sizeof(float));
  }
  return LOOM_OK;
}

/* A float view of optional input i (NULL when absent). */
static const float *opt_view(const struct loom_kcall *c, int i, float **tmp, int *fail) {
  *tmp = NULL;
  if (c->n_in <= i || !loom_kt_present(&c->in[i])) return NULL;
  const float *v = loom_k_in_f32(c, &c->in[i], tmp);
  if (!v) *fail = 1;
  return v;
}

/* Checks operand i has exactly the given dims. */
static loom_status want(const struct loom_kcall *c, int i, int rank, int64_t d0, int64_t d1, int64_t d2) {
  if (c->n_in <= i || !loom_kt_present(&c->in[i])) return LOOM_OK;
  int64_t dims[3] = {d0, d1, d2};
  const struct loom_kt *t = &c->in[i];
  if (t->rank == rank && !memcmp(t->dims, dims, (size_t)rank * 8)) return LOOM_OK;
  char a[96], b[96];
  return KFAIL(c, LOOM_E_INVALID, "input %d has shape %s, expected %s", i, loom_k_shape_str(t->rank, t->dims, a),
               loom_k_shape_str(rank, dims, b));
}

static loom_status shapes(const struct loom_kcall *c, struct rnn *s) {
  const struct loom_kt *x = &c->in[0];
  loom_status st = loom_k_dtype(c, x, "X", DTM_FLOAT);
  if (!st) st = loom_k_rank(c, x, "X", 3, 3);
  if (st) return st;
  static const char *const dirs[] = {"forward", "reverse", "bidirectional", NULL};
  int dir = 0;
  if ((st = loom_k_choice(c, "direction", "forward", dirs, &dir))) return st;
  s->dirs = dir == 2 ? 2 : 1, s->reverse_only = dir == 1;
  s->layout = c->opset >= 14 ? (int)loom_kattr_int(c, "layout", 0) : 0;
  s->steps = x->dims[s->layout], s->batch = x->dims[!s->layout], s->in = x->dims[2];
  s->hid = loom_kattr_int(c, "hidden_size", c->in[2].dims[c->in[2].rank - 1]);
  s->gates = s->cell == C_RNN ? 1 : s->cell == C_GRU ? 3 : 4;
  s->clip = loom_kattr_float(c, "clip", 0);
  s->lbr = s->cell == C_GRU && loom_kattr_int(c, "linear_before_reset", 0);
  s->input_forget = s->cell == C_LSTM && loom_kattr_int(c, "input_forget", 0);
  int64_t GH = s->gates * s->hid;
  if (s->hid < 1) return KFAIL(c, LOOM_E_INVALID, "hidden_size must be positive");
  if ((st = want(c, 1, 3, s->dirs, GH, s->in)) || (st = want(c, 2, 3, s->dirs, GH, s->hid)) ||
      (st = want(c, 3, 2, s->dirs, 2 * GH, 0)) || (st = want(c, 4, 1, s->batch, 0, 0)) ||
      (st = want(c, 5, 3, s->dirs, s->batch, s->hid)) || (st = want(c, 6, 3, s->dirs, s->batch, s->hid)) ||
      (st = want(c, 7, 2, s->dirs, 3 * s->hid, 0)))
    return st;
  if (c->n_in > 4 && loom_kt_present(&c->in[4])) {
    s->lens = &c->in[4];
    for (int64_t b = 0; b < s->batch; b++)
      if (loom_k_idx(s->lens, b) < 0 || loom_k_idx(s->lens, b) > s->steps)
        return KFAIL(c, LOOM_E_INVALID, "sequence length %lld is out of range", (long long)loom_k_idx(s->lens, b));
  }
  int64_t ydims[4] = {s->steps, s->dirs, s->batch, s->hid}, hdims[3] = {s->dirs, s->batch, s->hid};
  if (s->layout) ydims[0] = s->batch, ydims[1] = s->steps, ydims[2] = s->dirs, hdims[0] = s->batch, hdims[1] = s->dirs;
  for (int o = 0; o < c->n_out && !st; o++)
    if (loom_kt_present(&c->out[o]))
      st = loom_k_same_dtype(c, x, &c->out[o], "an output") ? LOOM_E_INVALID
                                                             : loom_k_out_shape(c, &c->out[o], o ? 3 : 4, o ? hdims : ydims);
  return st;
}

static loom_status k_rnn(const struct loom_kcall *c) {
  struct rnn s;
  memset(&s, 0, sizeof s);
  s.cell = !strcmp(c->op, "RNN") ? C_RNN : !strcmp(c->op, "GRU") ? C_GRU : C_LSTM;
  loom_status st = loom_k_arity(c, 3, s.cell == C_LSTM ? 8 : 6, 0, s.cell == C_LSTM ? 3 : 2);
  if (!st) st = shapes(c, &s);
  if (!st) st = activations(c, &s);
  if (st) return st;
  float *tmp[8] = {0}, *otmp[3] = {0};
  int fail = 0;
  s.x = opt_view(c, 0, &tmp[0], &fail), s.w = opt_view(c, 1, &tmp[1], &fail), s.r = opt_view(c, 2, &tmp[2], &fail);
  s.b = opt_view(c, 3, &tmp[3], &fail), s.h0 = opt_view(c, 5, &tmp[5], &fail);
  s.c0 = s.cell == C_LSTM ? opt_view(c, 6, &tmp[6], &fail) : NULL;
  s.p = s.cell == C_LSTM ? opt_view(c, 7, &tmp[7], &fail) : NULL;
  float **outs[3] = {&s.y, &s.yh, &s.yc};
  for (int o = 0; o < c->n_out && o < 3; o++)
    if (loom_kt_present(&c->out[o]) && !(*outs[o] = loom_k_out_f32(c, &c->out[o], &otmp[o]))) fail = 1;
  int64_t GH = s.gates * s.hid, B = s.batch, H = s.hid;
  float *scratch = fail ? NULL : loom_k_alloc(c, s.steps * B * GH + B * GH + 5 * B * H, sizeof(float));
  st = scratch ? LOOM_OK : LOOM_E_NOMEM;
  if (s.y) memset(s.y, 0, (size_t)loom_kt_numel(&c->out[0]) * sizeof(float));
  for (int d = 0; d < s.dirs && !st; d++) {
    /* X rows for the input GEMM are in layout order: xrow() indexes them. */
    st = direction(c, &s, d, scratch);
  }
  for (int o = 0; o < 3; o++)
    if (o < c->n_out && loom_kt_present(&c->out[o])) {
      if (st) free(otmp[o]);
      else loom_k_out_f32_done(&c->out[o], otmp[o]);
    }
  for (int i = 0; i < 8; i++) free(tmp[i]);
  free(scratch);
  return st;
}

const struct loom_kernel loom_kernels_rnn[] = {
    {"RNN", k_rnn, 0, NULL},
    {"GRU", k_rnn, 0, NULL},
    {"LSTM", k_rnn, 0, NULL},
    {NULL, NULL, 0, NULL},
};
