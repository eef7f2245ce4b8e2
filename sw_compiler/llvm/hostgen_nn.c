/*
 * hostgen_nn.c - float IR ops as LLVM kernels, for `loom compile --target
 * cpu` (hostgen_graph.c strings them together).
 *
 * Each node becomes one internal function whose pointer arguments (the
 * operands, the result, a scratch area) are marked noalias: the graph
 * compiler gives every live tensor its own bytes, and saying so is what
 * lets LLVM vectorize without run-time overlap checks.  Shapes,
 * attributes and constant operands (weights, biases, clip bounds, batch
 * norm parameters) are compile-time data: weights are laid out in rodata
 * in the order the loops read them.
 *
 * The kernels compute what ir_eval_ref.c computes, in the same order: a
 * convolution output starts at its bias and accumulates over input channel,
 * kernel row, kernel column; a Gemm row over k then adds beta * C; pools
 * and sums run in window order.  Vectorization here only ever runs across
 * independent outputs (the ow / j loops), never reorders one output's sum,
 * so results are bit-identical to the interpreter (the sign of an exact
 * zero aside).  Softmax is the exception: exp is hostgen_build.c's.
 *
 * Padding is done by copying the input into a padded scratch area (zeros
 * for conv and average pool, -inf for max pool) so the window loops have
 * constant bounds and no conditions; adding a zero changes no sum.
 */
#include "sw_compiler/llvm/hostgen_int.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

struct nctx {
  struct hg *h;
  const struct ir_graph *g;
  const struct ir_node *n;
  int node;
  LLVMValueRef arg[10]; /* kernel arguments: operands, then result, then scratch */
  struct ir_error *err;
};

static const struct ir_tensor *T(const struct nctx *c, int k) {
  return k < c->n->n_in && c->n->in[k] >= 0 ? &c->g->tensors[c->n->in[k]] : NULL;
}
static const struct ir_tensor *R(const struct nctx *c) { return &c->g->tensors[c->n->out[0]]; }
static LLVMValueRef X(const struct nctx *c, int k) { return c->arg[k]; }
static LLVMValueRef Y(const struct nctx *c) { return c->arg[c->n->n_in]; }
static LLVMValueRef PAD(const struct nctx *c) { return c->arg[c->n->n_in + 1]; }
static int64_t numel(const struct ir_tensor *t) { return ir_tensor_numel(t); }

static float const_f(const struct ir_tensor *t, int64_t i) { return ((const float *)t->data)[i]; }

/* ---- loop nests ---- */

struct nest {
  struct hg_loop l[IR_MAX_RANK + 4];
  int n;
};

static LLVMValueRef loop(struct hg *h, struct nest *s, int64_t count) { return hg_for_begin(h, &s->l[s->n++], count); }
static void end_loops(struct hg *h, struct nest *s) {
  while (s->n) hg_for_end(h, &s->l[--s->n]);
}

static LLVMValueRef ldf(struct hg *h, LLVMValueRef p, LLVMValueRef i) { return hg_load(h, h->f32, p, i); }
static LLVMValueRef f_add(struct hg *h, LLVMValueRef a, LLVMValueRef b) { return LLVMBuildFAdd(h->b, a, b, ""); }
static LLVMValueRef f_mul(struct hg *h, LLVMValueRef a, LLVMValueRef b) { return LLVMBuildFMul(h->b, a, b, ""); }
static LLVMValueRef fsel(struct hg *h, LLVMRealPredicate p, LLVMValueRef a, LLVMValueRef b, LLVMValueRef t, LLVMValueRef e) {
  return LLVMBuildSelect(h->b, LLVMBuildFCmp(h->b, p, a, b, ""), t, e, "");
}

/* A float constant array in rodata. */
static LLVMValueRef const_floats(struct hg *h, const float *v, int64_t n, const char *name) {
  return hg_const_bytes(h, v, (size_t)n * sizeof *v, name);
}

/* ---- windows (conv, pools): the geometry of ir_eval_ref.c's conv_geo ---- */

struct win {
  int64_t n, c, h, w, m, cg, kh, kw, oh, ow, group;
  int64_t sh, sw, dh, dw, pt, pl;
  int64_t hp, wp; /* extents of the padded copy */
  int padded;
};

static int64_t attr_at(const struct ir_node *n, const char *name, int i, int64_t dflt) {
  const struct ir_attr *a = ir_attr_find(n, name);
  return a && a->kind == IR_ATTR_INTS && i < a->n ? a->ints[i] : dflt;
}

static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

static void win_geo(const struct ir_graph *g, int node, struct win *w) {
  const struct ir_node *n = &g->nodes[node];
  const struct ir_tensor *x = &g->tensors[n->in[0]], *y = &g->tensors[n->out[0]];
  int two = x->rank == 4, nsp = x->rank - 2;
  memset(w, 0, sizeof *w);
  w->n = x->dims[0], w->c = x->dims[1], w->h = two ? x->dims[2] : 1, w->w = x->dims[x->rank - 1];
  w->oh = two ? y->dims[2] : 1, w->ow = y->dims[y->rank - 1];
  w->sh = two ? attr_at(n, "strides", 0, 1) : 1, w->sw = attr_at(n, "strides", nsp - 1, 1);
  w->dh = two ? attr_at(n, "dilations", 0, 1) : 1, w->dw = attr_at(n, "dilations", nsp - 1, 1);
  w->pt = two ? attr_at(n, "pads", 0, 0) : 0, w->pl = attr_at(n, "pads", nsp - 1, 0);
  w->kh = two ? attr_at(n, "kernel_shape", 0, 1) : 1, w->kw = attr_at(n, "kernel_shape", nsp - 1, 1);
  w->group = ir_attr_int(n, "group", 1);
  if (n->op == IR_OP_CONV) {
    const struct ir_tensor *wt = &g->tensors[n->in[1]];
    w->m = wt->dims[0], w->cg = wt->dims[1];
    if (two) w->kh = wt->dims[2];
    w->kw = wt->dims[wt->rank - 1];
  }
  w->hp = max64(w->pt + w->h, (w->oh - 1) * w->sh + (w->kh - 1) * w->dh + 1);
  w->wp = max64(w->pl + w->w, (w->ow - 1) * w->sw + (w->kw - 1) * w->dw + 1);
  w->padded = w->pt || w->pl || w->hp != w->h || w->wp != w->w;
}

/* Copies x [P][h][w] into the scratch [P][hp][wp] filled with `fill`;
 * returns the pointer the window loops read (x itself when no padding). */
static LLVMValueRef pad_input(struct nctx *c, const struct win *w, float fill) {
  struct hg *h = c->h;
  if (!w->padded) return X(c, 0);
  struct nest s = {0};
  LLVMValueRef i = loop(h, &s, w->n * w->c * w->hp * w->wp);
  hg_store(h, hg_cf(h, fill), PAD(c), i);
  end_loops(h, &s);
  LLVMValueRef p = loop(h, &s, w->n * w->c), ih = loop(h, &s, w->h), iw = loop(h, &s, w->w);
  LLVMValueRef from = hg_muladd(h, hg_muladd(h, p, w->h, ih), w->w, iw);
  LLVMValueRef to = hg_muladd(h, hg_muladd(h, p, w->hp, hg_add(h, ih, hg_cx(h, w->pt))), w->wp, hg_add(h, iw, hg_cx(h, w->pl)));
  hg_store(h, ldf(h, X(c, 0), from), PAD(c), to);
  end_loops(h, &s);
  return PAD(c);
}

/* ---- convolution ---- */

/* Index into the padded input of plane p, window (kh, kw), both run-time. */
static LLVMValueRef win_at(struct hg *h, const struct win *w, LLVMValueRef p, LLVMValueRef oh, LLVMValueRef kh,
                            LLVMValueRef ow, LLVMValueRef kw) {
  LLVMValueRef row = hg_add(h, hg_mul(h, oh, hg_cx(h, w->sh)), hg_mul(h, kh, hg_cx(h, w->dh)));
  LLVMValueRef col = hg_add(h, hg_mul(h, ow, hg_cx(h, w->sw)), hg_mul(h, kw, hg_cx(h, w->dw)));
  return hg_muladd(h, hg_muladd(h, p, w->hp, row), w->wp, col);
}


/* For each (n, group, m): y[n][m] = bias[m], then for ci, kh, kw:
 * y[n][m][oh][ow] += w[m][ci][kh][kw] * x[n][group's ci][...] (the order
 * of conv_core in ir_eval_ref.c).  The weights are a rodata table. */
static int conv(struct nctx *c) {
  struct hg *h = c->h;
  const struct ir_tensor *bt = T(c, 2);
  struct win w;
  win_geo(c->g, c->node, &w);
  LLVMValueRef xp = pad_input(c, &w, 0.0f), wp = X(c, 1), bp = bt ? X(c, 2) : NULL;
  int64_t mg = w.m / w.group, plane = w.oh * w.ow;
  struct nest s = {0};
  LLVMValueRef n = loop(h, &s, w.n), grp = loop(h, &s, w.group), mm = loop(h, &s, mg);
  LLVMValueRef m = hg_muladd(h, grp, mg, mm), ybase = hg_mul(h, hg_muladd(h, n, w.m, m), hg_cx(h, plane));
  LLVMValueRef b = bp ? ldf(h, bp, m) : hg_cf(h, 0.0f), i = loop(h, &s, plane);
  hg_store(h, b, Y(c), hg_add(h, ybase, i));
  hg_for_end(h, &s.l[--s.n]);
  LLVMValueRef ci = loop(h, &s, w.cg), kh = loop(h, &s, w.kh), kw = loop(h, &s, w.kw);
  LLVMValueRef wv = ldf(h, wp, hg_muladd(h, hg_muladd(h, hg_muladd(h, m, w.cg, ci), w.kh, kh), w.kw, kw));
  LLVMValueRef p = hg_add(h, hg_mul(h, n, hg_cx(h, w.c)), hg_muladd(h, grp, w.cg, ci));
  LLVMValueRef oh = loop(h, &s, w.oh), ow = loop(h, &s, w.ow);
  LLVMValueRef yat = hg_add(h, ybase, hg_muladd(h, oh, w.ow, ow));
  hg_store(h, f_add(h, ldf(h, Y(c), yat), f_mul(h, wv, ldf(h, xp, win_at(h, &w, p, oh, kh, ow, kw)))), Y(c), yat);
  end_loops(h, &s);
  return 0;
}

/* ---- pools ---- */

static LLVMValueRef entry_slot(struct hg *h, LLVMValueRef init);

/* Max or sum over each window, in window order, into a stack slot. */
static LLVMValueRef window_reduce(struct nctx *c, const struct win *w, LLVMValueRef xp, LLVMValueRef p,
                                  LLVMValueRef oh, LLVMValueRef ow, int is_max) {
  struct hg *h = c->h;
  LLVMValueRef acc = entry_slot(h, hg_cf(h, is_max ? -INFINITY : 0.0f));
  struct nest s = {0};
  LLVMValueRef kh = loop(h, &s, w->kh), kw = loop(h, &s, w->kw);
  LLVMValueRef v = ldf(h, xp, win_at(h, w, p, oh, kh, ow, kw)), a = LLVMBuildLoad2(h->b, h->f32, acc, "");
  LLVMBuildStore(h->b, is_max ? fsel(h, LLVMRealOGT, v, a, v, a) : f_add(h, a, v), acc);
  end_loops(h, &s);
  return LLVMBuildLoad2(h->b, h->f32, acc, "");
}

/* best = -inf; v > best ? v : best over the window (eval_maxpool). */
static int maxpool(struct nctx *c) {
  struct hg *h = c->h;
  struct win w;
  win_geo(c->g, c->node, &w);
  LLVMValueRef xp = pad_input(c, &w, -INFINITY);
  struct nest s = {0};
  LLVMValueRef p = loop(h, &s, w.n * w.c), oh = loop(h, &s, w.oh), ow = loop(h, &s, w.ow);
  LLVMValueRef best = window_reduce(c, &w, xp, p, oh, ow, 1);
  hg_store(h, best, Y(c), hg_muladd(h, hg_muladd(h, p, w.oh, oh), w.ow, ow));
  end_loops(h, &s);
  return 0;
}

/* The divisor of each output position, as eval_avgpool computes it. */
static float *avg_counts(const struct nctx *c, const struct win *w) {
  int nsp = T(c, 0)->rank - 2;
  int64_t pb = T(c, 0)->rank == 4 ? attr_at(c->n, "pads", 2, 0) : 0, pr = attr_at(c->n, "pads", 2 * nsp - 1, 0);
  int incl = ir_attr_int(c->n, "count_include_pad", 0) != 0;
  float *cnt = ir_xmalloc((size_t)(w->oh * w->ow) * sizeof *cnt);
  for (int64_t oh = 0; oh < w->oh; oh++)
    for (int64_t ow = 0; ow < w->ow; ow++) {
      int64_t h0 = oh * w->sh - w->pt, w0 = ow * w->sw - w->pl;
      int64_t h1 = h0 + w->kh < w->h + pb ? h0 + w->kh : w->h + pb, w1 = w0 + w->kw < w->w + pr ? w0 + w->kw : w->w + pr;
      int64_t padded = (h1 - h0) * (w1 - w0);
      h0 = max64(h0, 0), w0 = max64(w0, 0), h1 = h1 < w->h ? h1 : w->h, w1 = w1 < w->w ? w1 : w->w;
      int64_t k = incl ? padded : (h1 - h0) * (w1 - w0);
      cnt[oh * w->ow + ow] = (float)k;
    }
  return cnt;
}

/* Average pool: the window sum over the zero-padded copy (no dilation, as
 * the interpreter), divided by the count of its position (0 -> 0). */
static int avgpool(struct nctx *c) {
  struct hg *h = c->h;
  struct win w;
  win_geo(c->g, c->node, &w);
  w.dh = w.dw = 1;
  LLVMValueRef xp = pad_input(c, &w, 0.0f);
  float *cnt = avg_counts(c, &w);
  LLVMValueRef counts = const_floats(h, cnt, w.oh * w.ow, "avg.counts");
  free(cnt);
  struct nest s = {0};
  LLVMValueRef p = loop(h, &s, w.n * w.c), oh = loop(h, &s, w.oh), ow = loop(h, &s, w.ow);
  LLVMValueRef sum = window_reduce(c, &w, xp, p, oh, ow, 0);
  LLVMValueRef k = ldf(h, counts, hg_muladd(h, oh, w.ow, ow));
  LLVMValueRef v = fsel(h, LLVMRealOGT, k, hg_cf(h, 0.0f), LLVMBuildFDiv(h->b, sum, k, ""), hg_cf(h, 0.0f));
  hg_store(h, v, Y(c), hg_muladd(h, hg_muladd(h, p, w.oh, oh), w.ow, ow));
  end_loops(h, &s);
  return 0;
}

static LLVMValueRef entry_slot(struct hg *h, LLVMValueRef init) {
  LLVMBuilderRef b = LLVMCreateBuilderInContext(h->ctx);
  LLVMBasicBlockRef entry = LLVMGetEntryBasicBlock(h->fn);
  LLVMValueRef first = LLVMGetFirstInstruction(entry);
  if (first) LLVMPositionBuilderBefore(b, first);
  else LLVMPositionBuilderAtEnd(b, entry);
  LLVMValueRef slot = LLVMBuildAlloca(b, LLVMTypeOf(init), "");
  LLVMDisposeBuilder(b);
  LLVMBuildStore(h->b, init, slot);
  return slot;
}

/* sum over each plane in order, divided by the plane size. */
static int global_avgpool(struct nctx *c) {
  struct hg *h = c->h;
  const struct ir_tensor *x = T(c, 0);
  int64_t planes = x->dims[0] * x->dims[1], sp = numel(x) / planes;
  struct nest s = {0};
  LLVMValueRef p = loop(h, &s, planes);
  LLVMValueRef acc = entry_slot(h, hg_cf(h, 0.0f));
  LLVMValueRef i = loop(h, &s, sp);
  LLVMBuildStore(h->b, f_add(h, LLVMBuildLoad2(h->b, h->f32, acc, ""), ldf(h, X(c, 0), hg_muladd(h, p, sp, i))), acc);
  hg_for_end(h, &s.l[--s.n]);
  LLVMValueRef v = LLVMBuildFDiv(h->b, LLVMBuildLoad2(h->b, h->f32, acc, ""), hg_cf(h, (float)sp), "");
  hg_store(h, v, Y(c), p);
  end_loops(h, &s);
  return 0;
}

/* ---- matrix products ---- */

/* Gemm: Y[i][j] = sum_k (alpha * A[i][k]) * B[k][j], then += beta * C.
 * A constant B is stored as [k][n] (transposed at compile time when
 * transB), so the j loop reads it contiguously. */
static LLVMValueRef gemm_b(struct nctx *c, int tb, int64_t k, int64_t n, int64_t *sk, int64_t *sj) {
  const struct ir_tensor *b = T(c, 1);
  *sk = tb ? 1 : n, *sj = tb ? k : 1;
  if (!b->data || !tb) return X(c, 1);
  float *t = ir_xmalloc((size_t)(k * n) * sizeof *t);
  for (int64_t kk = 0; kk < k; kk++)
    for (int64_t j = 0; j < n; j++) t[kk * n + j] = const_f(b, j * k + kk);
  LLVMValueRef g = const_floats(c->h, t, k * n, "gemm.b");
  free(t);
  *sk = n, *sj = 1;
  return g;
}

static int64_t bstride(const struct ir_tensor *t, const struct ir_tensor *y, int axis) {
  int ti = axis - (y->rank - t->rank);
  int64_t s = 1;
  if (ti < 0 || t->dims[ti] == 1) return 0;
  for (int i = ti + 1; i < t->rank; i++) s *= t->dims[i];
  return s;
}

static int gemm(struct nctx *c) {
  struct hg *h = c->h;
  const struct ir_tensor *a = T(c, 0), *cc = T(c, 2), *y = R(c);
  int ta = ir_attr_int(c->n, "transA", 0) != 0, tb = ir_attr_int(c->n, "transB", 0) != 0;
  float alpha = ir_attr_float(c->n, "alpha", 1.0f), beta = ir_attr_float(c->n, "beta", 1.0f);
  int64_t m = y->dims[0], n = y->dims[1], k = a->dims[ta ? 0 : 1], sk, sj;
  LLVMValueRef bp = gemm_b(c, tb, k, n, &sk, &sj);
  struct nest s = {0};
  LLVMValueRef i = loop(h, &s, m), j = loop(h, &s, n);
  hg_store(h, hg_cf(h, 0.0f), Y(c), hg_muladd(h, i, n, j));
  hg_for_end(h, &s.l[--s.n]);
  LLVMValueRef kk = loop(h, &s, k);
  LLVMValueRef av = ldf(h, X(c, 0), ta ? hg_muladd(h, kk, m, i) : hg_muladd(h, i, k, kk));
  if (alpha != 1.0f) av = f_mul(h, hg_cf(h, alpha), av);
  j = loop(h, &s, n);
  LLVMValueRef yat = hg_muladd(h, i, n, j), bv = ldf(h, bp, hg_add(h, hg_mul(h, kk, hg_cx(h, sk)), hg_mul(h, j, hg_cx(h, sj))));
  hg_store(h, f_add(h, ldf(h, Y(c), yat), f_mul(h, av, bv)), Y(c), yat);
  hg_for_end(h, &s.l[--s.n]);
  hg_for_end(h, &s.l[--s.n]);
  if (cc) {
    j = loop(h, &s, n);
    LLVMValueRef cat = hg_add(h, hg_mul(h, i, hg_cx(h, bstride(cc, y, 0))), hg_mul(h, j, hg_cx(h, bstride(cc, y, 1))));
    LLVMValueRef cv = ldf(h, X(c, 2), cat);
    if (beta != 1.0f) cv = f_mul(h, hg_cf(h, beta), cv);
    yat = hg_muladd(h, i, n, j);
    hg_store(h, f_add(h, ldf(h, Y(c), yat), cv), Y(c), yat);
    hg_for_end(h, &s.l[--s.n]);
  }
  end_loops(h, &s);
  return 0;
}

/* MatMul with numpy batch broadcasting: per-batch offsets of a and b come
 * from constant tables (mm_geo of the interpreter). */
static void batch_offsets(const struct nctx *c, int64_t batch, int64_t m, int64_t k, int64_t n, int64_t *ao, int64_t *bo) {
  const struct ir_tensor *a = T(c, 0), *b = T(c, 1), *y = R(c);
  int brank = y->rank - (a->rank > 1) - (b->rank > 1);
  int ar = a->rank > 2 ? a->rank - 2 : 0, br = b->rank > 2 ? b->rank - 2 : 0;
  for (int64_t bt = 0; bt < batch; bt++) {
    int64_t rem = bt, oa = 0, ob = 0, sa = 1, sb = 1;
    for (int i = brank - 1; i >= 0; i--) {
      int64_t d = y->dims[i], idx = rem % d, ai = i - (brank - ar), bi = i - (brank - br);
      rem /= d;
      if (ai >= 0) oa += (a->dims[ai] == 1 ? 0 : idx) * sa, sa *= a->dims[ai];
      if (bi >= 0) ob += (b->dims[bi] == 1 ? 0 : idx) * sb, sb *= b->dims[bi];
    }
    ao[bt] = oa * m * k, bo[bt] = ob * k * n;
  }
}

static LLVMValueRef index_table(struct hg *h, const int64_t *v, int64_t n, const char *name) {
  if (h->ix_bits == 64) return hg_const_bytes(h, v, (size_t)n * 8, name);
  int32_t *t = ir_xmalloc((size_t)n * sizeof *t);
  for (int64_t i = 0; i < n; i++) t[i] = (int32_t)v[i];
  LLVMValueRef g = hg_const_bytes(h, t, (size_t)n * 4, name);
  free(t);
  return g;
}

static int matmul(struct nctx *c) {
  struct hg *h = c->h;
  const struct ir_tensor *a = T(c, 0), *b = T(c, 1), *y = R(c);
  int64_t k = a->dims[a->rank - 1], m = a->rank > 1 ? a->dims[a->rank - 2] : 1, n = b->rank > 1 ? b->dims[b->rank - 1] : 1;
  int64_t batch = numel(y) / (m * n), *ao = ir_xmalloc((size_t)batch * 8), *bo = ir_xmalloc((size_t)batch * 8);
  batch_offsets(c, batch, m, k, n, ao, bo);
  LLVMValueRef at = index_table(h, ao, batch, "mm.a"), bt = index_table(h, bo, batch, "mm.b");
  free(ao), free(bo);
  struct nest s = {0};
  LLVMValueRef q = loop(h, &s, batch), aoff = hg_load(h, h->ix, at, q), boff = hg_load(h, h->ix, bt, q);
  LLVMValueRef i = loop(h, &s, m), row = hg_mul(h, hg_add(h, hg_mul(h, q, hg_cx(h, m)), i), hg_cx(h, n));
  LLVMValueRef j = loop(h, &s, n);
  hg_store(h, hg_cf(h, 0.0f), Y(c), hg_add(h, row, j));
  hg_for_end(h, &s.l[--s.n]);
  LLVMValueRef kk = loop(h, &s, k);
  LLVMValueRef av = ldf(h, X(c, 0), hg_add(h, aoff, hg_muladd(h, i, k, kk)));
  j = loop(h, &s, n);
  LLVMValueRef bv = ldf(h, X(c, 1), hg_add(h, boff, hg_muladd(h, kk, n, j))), yat = hg_add(h, row, j);
  hg_store(h, f_add(h, ldf(h, Y(c), yat), f_mul(h, av, bv)), Y(c), yat);
  end_loops(h, &s);
  return 0;
}

/* ---- elementwise ---- */

/* Add / Mul with broadcasting: one loop per result axis, each operand
 * advancing by its broadcast stride. */
static int binary(struct nctx *c) {
  struct hg *h = c->h;
  const struct ir_tensor *a = T(c, 0), *b = T(c, 1), *y = R(c);
  struct nest s = {0};
  LLVMValueRef ia = hg_cx(h, 0), ib = hg_cx(h, 0), iy = hg_cx(h, 0);
  for (int d = 0; d < y->rank; d++) {
    LLVMValueRef i = loop(h, &s, y->dims[d]);
    ia = hg_add(h, ia, hg_mul(h, i, hg_cx(h, bstride(a, y, d))));
    ib = hg_add(h, ib, hg_mul(h, i, hg_cx(h, bstride(b, y, d))));
    iy = hg_muladd(h, iy, y->dims[d], i);
  }
  LLVMValueRef u = ldf(h, X(c, 0), ia), v = ldf(h, X(c, 1), ib);
  hg_store(h, c->n->op == IR_OP_MUL ? f_mul(h, u, v) : f_add(h, u, v), Y(c), iy);
  end_loops(h, &s);
  return 0;
}

static float scalar_or(const struct ir_tensor *t, float dflt) { return t ? const_f(t, 0) : dflt; }

/* v < lo ? lo : v > hi ? hi : v (NaN stays), as eval_relu_clip. */
static int relu_clip(struct nctx *c) {
  struct hg *h = c->h;
  float lo = c->n->op == IR_OP_RELU ? 0.0f : scalar_or(T(c, 1), -INFINITY), hi = scalar_or(T(c, 2), INFINITY);
  if (c->n->op == IR_OP_RELU) hi = INFINITY;
  struct nest s = {0};
  LLVMValueRef i = loop(h, &s, numel(R(c))), v = ldf(h, X(c, 0), i);
  LLVMValueRef r = fsel(h, LLVMRealOLT, v, hg_cf(h, lo), hg_cf(h, lo), fsel(h, LLVMRealOGT, v, hg_cf(h, hi), hg_cf(h, hi), v));
  hg_store(h, r, Y(c), i);
  end_loops(h, &s);
  return 0;
}

/* (x - mean) / sqrtf(var + eps) * scale + bias per channel; the square
 * root is taken here, in the same float arithmetic. */
static int batchnorm(struct nctx *c) {
  struct hg *h = c->h;
  const struct ir_tensor *x = T(c, 0);
  int64_t ch = x->dims[1], inner = numel(x) / x->dims[0] / ch;
  float eps = ir_attr_float(c->n, "epsilon", 1e-5f);
  float *p = ir_xmalloc((size_t)(4 * ch) * sizeof *p);
  for (int64_t k = 0; k < ch; k++) {
    p[4 * k] = const_f(T(c, 3), k);                       /* mean */
    p[4 * k + 1] = sqrtf(const_f(T(c, 4), k) + eps);      /* sqrtf(var + eps) */
    p[4 * k + 2] = const_f(T(c, 1), k);                   /* scale */
    p[4 * k + 3] = const_f(T(c, 2), k);                   /* bias */
  }
  LLVMValueRef tab = const_floats(h, p, 4 * ch, "bn");
  free(p);
  struct nest s = {0};
  LLVMValueRef n = loop(h, &s, x->dims[0]), k = loop(h, &s, ch), i = loop(h, &s, inner);
  LLVMValueRef at = hg_muladd(h, hg_muladd(h, n, ch, k), inner, i), q = hg_mul(h, k, hg_cx(h, 4));
  LLVMValueRef v = LLVMBuildFSub(h->b, ldf(h, X(c, 0), at), ldf(h, tab, q), "");
  v = LLVMBuildFDiv(h->b, v, ldf(h, tab, hg_add(h, q, hg_cx(h, 1))), "");
  v = f_add(h, f_mul(h, v, ldf(h, tab, hg_add(h, q, hg_cx(h, 2)))), ldf(h, tab, hg_add(h, q, hg_cx(h, 3))));
  hg_store(h, v, Y(c), at);
  end_loops(h, &s);
  return 0;
}

/* Softmax over [outer][len][inner] as eval_softmax: max from -inf with
 * fmaxf, sum of exp in order, divide. */
static int softmax(struct nctx *c) {
  struct hg *h = c->h;
  const struct ir_tensor *x = T(c, 0);
  int64_t axis = ir_attr_int(c->n, "axis", -1), inner = 1;
  if (axis < 0) axis += x->rank;
  int64_t len = x->dims[axis];
  for (int i = (int)axis + 1; i < x->rank; i++) inner *= x->dims[i];
  if (ir_attr_int(c->n, "legacy_2d", 0)) len *= inner, inner = 1;
  int64_t outer = numel(x) / (len * inner);
  struct nest s = {0};
  LLVMValueRef o = loop(h, &s, outer), j = loop(h, &s, inner);
  LLVMValueRef base = hg_add(h, hg_mul(h, o, hg_cx(h, len * inner)), j);
  LLVMValueRef mx = entry_slot(h, hg_cf(h, -INFINITY)), sum = entry_slot(h, hg_cf(h, 0.0f));
  LLVMValueRef i = loop(h, &s, len), at = hg_add(h, base, hg_mul(h, i, hg_cx(h, inner)));
  LLVMBuildStore(h->b, hg_fmax(h, LLVMBuildLoad2(h->b, h->f32, mx, ""), ldf(h, X(c, 0), at)), mx);
  hg_for_end(h, &s.l[--s.n]);
  LLVMValueRef m = LLVMBuildLoad2(h->b, h->f32, mx, "");
  i = loop(h, &s, len), at = hg_add(h, base, hg_mul(h, i, hg_cx(h, inner)));
  hg_store(h, hg_expf(h, LLVMBuildFSub(h->b, ldf(h, X(c, 0), at), m, "")), Y(c), at);
  hg_for_end(h, &s.l[--s.n]);
  i = loop(h, &s, len), at = hg_add(h, base, hg_mul(h, i, hg_cx(h, inner))); /* the sum, in order */
  LLVMBuildStore(h->b, f_add(h, LLVMBuildLoad2(h->b, h->f32, sum, ""), ldf(h, Y(c), at)), sum);
  hg_for_end(h, &s.l[--s.n]);
  LLVMValueRef total = LLVMBuildLoad2(h->b, h->f32, sum, "");
  i = loop(h, &s, len), at = hg_add(h, base, hg_mul(h, i, hg_cx(h, inner)));
  hg_store(h, LLVMBuildFDiv(h->b, ldf(h, Y(c), at), total, ""), Y(c), at);
  end_loops(h, &s);
  return 0;
}

/* ---- data movement (raw elements of the dtype's size) ---- */

static LLVMTypeRef raw_type(struct hg *h, const struct ir_tensor *t) {
  switch (ir_dtype_size(t->dtype)) {
  case 1: return h->i8;
  case 4: return h->i32;
  default: return h->i64;
  }
}

static int transpose(struct nctx *c) {
  struct hg *h = c->h;
  const struct ir_tensor *x = T(c, 0), *y = R(c);
  const struct ir_attr *pa = ir_attr_find(c->n, "perm");
  int64_t xs[IR_MAX_RANK], st = 1;
  for (int i = x->rank - 1; i >= 0; i--) xs[i] = st, st *= x->dims[i];
  struct nest s = {0};
  LLVMValueRef ix = hg_cx(h, 0), iy = hg_cx(h, 0);
  for (int d = 0; d < y->rank; d++) {
    LLVMValueRef i = loop(h, &s, y->dims[d]);
    int64_t p = pa ? pa->ints[d] : x->rank - 1 - d;
    ix = hg_add(h, ix, hg_mul(h, i, hg_cx(h, xs[p])));
    iy = hg_muladd(h, iy, y->dims[d], i);
  }
  hg_store(h, hg_load(h, raw_type(h, x), X(c, 0), ix), Y(c), iy);
  end_loops(h, &s);
  return 0;
}

static int concat(struct nctx *c) {
  struct hg *h = c->h;
  const struct ir_tensor *y = R(c);
  int64_t axis = ir_attr_int(c->n, "axis", 0), outer = 1, inner = 1, at = 0;
  if (axis < 0) axis += y->rank;
  for (int i = 0; i < axis; i++) outer *= y->dims[i];
  for (int i = (int)axis + 1; i < y->rank; i++) inner *= y->dims[i];
  int64_t row = y->dims[axis] * inner;
  for (int k = 0; k < c->n->n_in; k++) {
    int64_t chunk = T(c, k)->dims[axis] * inner;
    struct nest s = {0};
    LLVMValueRef o = loop(h, &s, outer), i = loop(h, &s, chunk);
    LLVMValueRef v = hg_load(h, raw_type(h, y), X(c, k), hg_muladd(h, o, chunk, i));
    hg_store(h, v, Y(c), hg_add(h, hg_muladd(h, o, row, i), hg_cx(h, at)));
    end_loops(h, &s);
    at += chunk;
  }
  return 0;
}

/* ---- the table of ops ---- */

static int dispatch(struct nctx *c) {
  switch (c->n->op) {
  case IR_OP_CONV: return conv(c);
  case IR_OP_GEMM: return gemm(c);
  case IR_OP_MATMUL: return matmul(c);
  case IR_OP_RELU: case IR_OP_CLIP: return relu_clip(c);
  case IR_OP_ADD: case IR_OP_MUL: return binary(c);
  case IR_OP_MAXPOOL: return maxpool(c);
  case IR_OP_AVERAGEPOOL: return avgpool(c);
  case IR_OP_GLOBALAVERAGEPOOL: return global_avgpool(c);
  case IR_OP_BATCHNORM: return batchnorm(c);
  case IR_OP_SOFTMAX: return softmax(c);
  case IR_OP_TRANSPOSE: return transpose(c);
  case IR_OP_CONCAT: return concat(c);
  default: return ir_fail(c->err, c->g, c->node, "--target cpu: no kernel for %s", ir_op_name(c->n->op));
  }
}

int64_t hg_nn_pad_bytes(const struct ir_graph *g, int node) {
  enum ir_op_kind op = g->nodes[node].op;
  if (op != IR_OP_CONV && op != IR_OP_MAXPOOL && op != IR_OP_AVERAGEPOOL) return 0;
  struct win w;
  win_geo(g, node, &w);
  if (op == IR_OP_AVERAGEPOOL) {
    w.dh = w.dw = 1;
    w.hp = max64(w.pt + w.h, (w.oh - 1) * w.sh + w.kh), w.wp = max64(w.pl + w.w, (w.ow - 1) * w.sw + w.kw);
    w.padded = w.pt || w.pl || w.hp != w.h || w.wp != w.w;
  }
  return w.padded ? w.n * w.c * w.hp * w.wp * 4 : 0;
}

/* Operands that must be compile-time constants for the kernel. */
static int need_const(const struct ir_graph *g, int node, int k, struct ir_error *err) {
  const struct ir_node *n = &g->nodes[node];
  if (k >= n->n_in || n->in[k] < 0 || g->tensors[n->in[k]].data) return 0;
  return ir_fail(err, g, node, "--target cpu: " "operand %d must be a constant", k);
}

static int dtypes_f32(const struct ir_graph *g, int node, struct ir_error *err) {
  const struct ir_node *n = &g->nodes[node];
  int data_ops = n->op == IR_OP_TRANSPOSE || n->op == IR_OP_CONCAT;
  for (int k = 0; k < n->n_in + n->n_out; k++) {
    int t = k < n->n_in ? n->in[k] : n->out[k - n->n_in];
    if (t < 0 || (n->op == IR_OP_RESHAPE && k == 1)) continue;
    if (g->tensors[t].dtype != IR_DT_F32 && !(data_ops && ir_dtype_size(g->tensors[t].dtype)))
      return ir_fail(err, g, node, "--target cpu: " "%%%s is %s; only float32 graphs are supported", g->tensors[t].name,
                  ir_dtype_name(g->tensors[t].dtype));
  }
  return 0;
}

int hg_nn_check(const struct ir_graph *g, int node, struct ir_error *err) {
  const struct ir_node *n = &g->nodes[node];
  if (!hostgen_graph_supports(n->op)) return ir_fail(err, g, node, "--target cpu: " "%s is not supported", ir_op_name(n->op));
  if (n->n_in > 8) return ir_fail(err, g, node, "--target cpu: " "more than 8 operands");
  if (dtypes_f32(g, node, err)) return -1;
  if ((n->op == IR_OP_CONV || n->op == IR_OP_MAXPOOL || n->op == IR_OP_AVERAGEPOOL) &&
      (g->tensors[n->in[0]].rank < 3 || g->tensors[n->in[0]].rank > 4))
    return ir_fail(err, g, node, "--target cpu: " "only 1-D and 2-D windows are supported");
  if (n->op == IR_OP_CLIP) return need_const(g, node, 1, err) || need_const(g, node, 2, err) ? -1 : 0;
  if (n->op == IR_OP_BATCHNORM)
    for (int k = 1; k < 5; k++)
      if (need_const(g, node, k, err)) return -1;
  return 0;
}

int hg_nn_build(struct hg *h, const struct ir_graph *g, int node, const struct hg_node_io *io,
                LLVMValueRef pad, struct ir_error *err) {
  const struct ir_node *n = &g->nodes[node];
  struct nctx c = {.h = h, .g = g, .n = n, .node = node, .err = err};
  LLVMValueRef caller = h->fn, args[10];
  LLVMBasicBlockRef at = LLVMGetInsertBlock(h->b);
  int nargs = n->n_in + 2;
  char name[32];
  snprintf(name, sizeof name, "node%d", node);
  LLVMValueRef fn = hg_kernel_begin(h, name, nargs, 1);
  for (int k = 0; k < nargs; k++) c.arg[k] = LLVMGetParam(fn, (unsigned)k);
  int rc = dispatch(&c);
  hg_kernel_end(h, caller, at);
  for (int k = 0; k < n->n_in; k++) args[k] = io->in[k] ? io->in[k] : LLVMConstPointerNull(h->ptr);
  args[n->n_in] = io->out;
  args[n->n_in + 1] = pad ? pad : LLVMConstPointerNull(h->ptr);
  LLVMBuildCall2(h->b, LLVMGlobalGetValueType(fn), fn, args, (unsigned)nargs, "");
  return rc;
}
