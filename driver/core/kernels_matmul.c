/*
 * kernels_matmul.c - MatMul (numpy semantics: 1-D operands promoted and
 * their dim dropped again, batch dims broadcast), Gemm (transA, transB,
 * alpha, beta, C broadcast to [M, N]), MatMulInteger and QLinearMatMul.
 *
 * Float products go through loom_k_sgemm (kernel_gemm.c).  When B has no
 * batch of its own ([B, S, D] x [D, E], the Transformer case) the whole
 * batch is one product with M = B*S; otherwise each broadcast batch pair is
 * one product.  The integer forms accumulate exactly in int32 (int64 for
 * the integer MatMul of opset 13) in i-k-j order, so the inner loop runs
 * along contiguous rows of B and of the output.  QLinearMatMul requantizes
 * as ONNX Runtime does: the multiplier a_scale * b_scale / y_scale in
 * float32, the product rounded to nearest even, plus the zero point,
 * saturated.
 */
#include <math.h>
#include <string.h>

#include "kernel_util.h"

/* The operands of one MatMul-like product. */
struct mm {
  int64_t m, n, k, batch;            /* batch: output batch elements */
  int64_t a_step[LOOM_KT_MAX_RANK], b_step[LOOM_KT_MAX_RANK]; /* per batch dim, in matrices */
  int64_t bdims[LOOM_KT_MAX_RANK];
  int brank;
  int b_shared;                      /* B has one matrix for every batch */
};

/* Shapes of y = a @ b with numpy's rules; checks y's dims. */
static loom_status mm_plan(const struct loom_kcall *c, const struct loom_kt *a, const struct loom_kt *b,
                           const struct loom_kt *y, struct mm *p) {
  if (a->rank < 1 || b->rank < 1) return KFAIL(c, LOOM_E_INVALID, "operands must have rank 1 or more");
  int64_t ad[LOOM_KT_MAX_RANK + 1], bd[LOOM_KT_MAX_RANK + 1];
  int ra = a->rank, rb = b->rank;
  memcpy(ad, a->dims, sizeof a->dims), memcpy(bd, b->dims, sizeof b->dims);
  if (ra == 1) ad[1] = ad[0], ad[0] = 1, ra = 2;
  if (rb == 1) bd[1] = 1, rb = 2;
  p->m = ad[ra - 2], p->k = ad[ra - 1], p->n = bd[rb - 1];
  if (bd[rb - 2] != p->k)
    return KFAIL(c, LOOM_E_INVALID, "inner dims differ (%lld and %lld)", (long long)p->k, (long long)bd[rb - 2]);
  loom_status st = loom_k_bcast_dims(c, ra - 2, ad, rb - 2, bd, &p->brank, p->bdims);
  if (st) return st;
  int64_t dims[LOOM_KT_MAX_RANK + 2], sa = 1, sb = 1;
  int r = 0;
  p->batch = 1;
  for (int d = 0; d < p->brank; d++) dims[r++] = p->bdims[d], p->batch *= p->bdims[d];
  for (int d = p->brank - 1; d >= 0; d--) { /* matrix strides of a and b per output batch dim */
    int da = d - (p->brank - (ra - 2)), db = d - (p->brank - (rb - 2));
    int64_t na = da >= 0 ? ad[da] : 1, nb = db >= 0 ? bd[db] : 1;
    p->a_step[d] = na == 1 ? 0 : sa, p->b_step[d] = nb == 1 ? 0 : sb;
    sa *= na, sb *= nb;
  }
  p->b_shared = sb == 1;
  if (a->rank > 1) dims[r++] = p->m;
  if (b->rank > 1) dims[r++] = p->n;
  if (r > LOOM_KT_MAX_RANK) return KFAIL(c, LOOM_E_UNSUPPORTED, "result rank too high");
  return loom_k_out_shape(c, y, r, dims);
}

/* Matrix offsets (in matrices) of a and b for output batch element t. */
static void mm_offsets(const struct mm *p, int64_t t, int64_t *oa, int64_t *ob) {
  *oa = *ob = 0;
  for (int d = p->brank - 1; d >= 0; d--) {
    int64_t i = t % p->bdims[d];
    t /= p->bdims[d];
    *oa += i * p->a_step[d], *ob += i * p->b_step[d];
  }
}

static loom_status matmul_float(const struct loom_kcall *c, const struct mm *p) {
  struct loom_kviews v;
  loom_status st = loom_k_views(c, 2, &v);
  const float *a = v.in[0], *b = v.in[1];
  float *y = v.out;
  int64_t oa, ob, mk = p->m * p->k, kn = p->k * p->n, mn = p->m * p->n;
  mm_offsets(p, p->batch - 1, &oa, &ob);
  if (!st && p->b_shared && oa == p->batch - 1) /* one product: A's batch folds into M */
    return loom_k_views_done(c, &v, loom_k_sgemm(c, p->batch * p->m, p->n, p->k, 1, a, p->k, 0, b, p->n, 0, 0, y, p->n));
  for (int64_t t = 0; t < p->batch && !st; t++) {
    mm_offsets(p, t, &oa, &ob);
    st = loom_k_sgemm(c, p->m, p->n, p->k, 1, a + oa * mk, p->k, 0, b + ob * kn, p->n, 0, 0, y + t * mn, p->n);
  }
  return loom_k_views_done(c, &v, st);
}

/* Integer products: y[m x n] = sum (a - za) (b - zb), exact in int64. */
struct iprod {
  const struct loom_kt *a, *b, *za, *zb; /* zero points: NULL, scalar, or per row / column */
};

static void int_product(const struct iprod *q, int64_t oa, int64_t ob, int64_t m, int64_t n, int64_t k,
                        int64_t *acc) {
  memset(acc, 0, (size_t)(m * n) * sizeof *acc);
  for (int64_t i = 0; i < m; i++)
    for (int64_t kk = 0; kk < k; kk++) {
      int64_t za = !q->za ? 0 : loom_kt_get_i64(q->za, loom_kt_numel(q->za) == 1 ? 0 : i);
      int64_t av = loom_kt_get_i64(q->a, oa + i * k + kk) - za;
      if (!av) continue;
      for (int64_t j = 0; j < n; j++) {
        int64_t zb = !q->zb ? 0 : loom_kt_get_i64(q->zb, loom_kt_numel(q->zb) == 1 ? 0 : j);
        acc[i * n + j] += av * (loom_kt_get_i64(q->b, ob + kk * n + j) - zb);
      }
    }
}

/* Runs the integer product for every batch element; emit() writes a result. */
static loom_status int_matmul(const struct loom_kcall *c, const struct mm *p, const struct iprod *q,
                              void (*emit)(const struct loom_kcall *, int64_t, const int64_t *, int64_t, int64_t)) {
  int64_t *acc = loom_k_alloc(c, p->m * p->n, sizeof(int64_t));
  if (!acc) return LOOM_E_NOMEM;
  for (int64_t t = 0; t < p->batch; t++) {
    int64_t oa, ob;
    mm_offsets(p, t, &oa, &ob);
    int_product(q, oa * p->m * p->k, ob * p->k * p->n, p->m, p->n, p->k, acc);
    emit(c, t * p->m * p->n, acc, p->m * p->n, p->n);
  }
  free(acc);
  return LOOM_OK;
}

static void emit_int(const struct loom_kcall *c, int64_t at, const int64_t *acc, int64_t cnt, int64_t n) {
  for (int64_t i = 0; i < cnt; i++) loom_kt_set_i64(&c->out[0], at + i, acc[i]);
}

static loom_status k_matmul(const struct loom_kcall *c) {
  loom_status st = loom_k_arity(c, 2, 2, 1, 1);
  struct mm p;
  if (!st) st = loom_k_dtype(c, &c->in[0], "A", DTM_NUM);
  if (!st) st = loom_k_same_dtype(c, &c->in[0], &c->in[1], "B");
  if (!st) st = loom_k_same_dtype(c, &c->in[0], &c->out[0], "the output");
  if (!st) st = mm_plan(c, &c->in[0], &c->in[1], &c->out[0], &p);
  if (st) return st;
  if (loom_dtype_is_float(c->in[0].dtype)) return matmul_float(c, &p);
  struct iprod q = {&c->in[0], &c->in[1], NULL, NULL};
  return int_matmul(c, &p, &q, emit_int);
}

/* A zero point: absent, a scalar, or one per row of A / column of B. */
static loom_status zero_point(const struct loom_kcall *c, int i, const struct loom_kt *of, int64_t per,
                              const struct loom_kt **zp) {
  *zp = NULL;
  if (c->n_in <= i || !loom_kt_present(&c->in[i])) return LOOM_OK;
  *zp = &c->in[i];
  loom_status st = loom_k_same_dtype(c, of, *zp, "a zero point");
  if (!st && loom_kt_numel(*zp) != 1 && loom_kt_numel(*zp) != per)
    st = KFAIL(c, LOOM_E_UNSUPPORTED, "zero point %d must be a scalar or have %lld values", i, (long long)per);
  return st;
}

static loom_status k_matmulinteger(const struct loom_kcall *c) {
  loom_status st = loom_k_arity(c, 2, 4, 1, 1);
  struct mm p;
  struct iprod q = {&c->in[0], &c->in[1], NULL, NULL};
  if (!st) st = loom_k_dtype(c, q.a, "A", DTM(LOOM_DT_I8) | DTM(LOOM_DT_U8));
  if (!st) st = loom_k_dtype(c, q.b, "B", DTM(LOOM_DT_I8) | DTM(LOOM_DT_U8));
  if (!st) st = loom_k_dtype(c, &c->out[0], "output", DTM(LOOM_DT_I32));
  if (!st) st = mm_plan(c, q.a, q.b, &c->out[0], &p);
  if (!st) st = zero_point(c, 2, q.a, p.m, &q.za);
  if (!st) st = zero_point(c, 3, q.b, p.n, &q.zb);
  return st ? st : int_matmul(c, &p, &q, emit_int);
}

/* QLinearMatMul: requantize each product. */
static float multiplier_of(const struct loom_kcall *c, int64_t j) {
  const struct loom_kt *bs = &c->in[4];
  float b = (float)loom_kt_get_f64(bs, loom_kt_numel(bs) == 1 ? 0 : j);
  return (float)loom_kt_get_f64(&c->in[1], 0) * b / (float)loom_kt_get_f64(&c->in[6], 0);
}

static void emit_q(const struct loom_kcall *c, int64_t at, const int64_t *acc, int64_t cnt, int64_t n) {
  struct loom_kt *y = &c->out[0];
  int64_t zp = c->n_in > 7 && loom_kt_present(&c->in[7]) ? loom_kt_get_i64(&c->in[7], 0) : 0;
  int64_t lo = y->dtype == LOOM_DT_U8 ? 0 : -128, hi = y->dtype == LOOM_DT_U8 ? 255 : 127;
  for (int64_t i = 0; i < cnt; i++) {
    int64_t v = (int64_t)rintf((float)acc[i] * multiplier_of(c, i % n)) + zp;
    loom_kt_set_i64(y, at + i, v < lo ? lo : v > hi ? hi : v);
  }
}

static loom_status k_qlinearmatmul(const struct loom_kcall *c) {
  loom_status st = loom_k_arity(c, 8, 8, 1, 1);
  struct mm p;
  struct iprod q = {&c->in[0], &c->in[3], NULL, NULL};
  if (!st) st = loom_k_dtype(c, q.a, "a", DTM(LOOM_DT_I8) | DTM(LOOM_DT_U8));
  if (!st) st = loom_k_dtype(c, q.b, "b", DTM(LOOM_DT_I8) | DTM(LOOM_DT_U8));
  if (!st) st = loom_k_dtype(c, &c->out[0], "y", DTM(LOOM_DT_I8) | DTM(LOOM_DT_U8));
  if (!st) st = mm_plan(c, q.a, q.b, &c->out[0], &p);
  if (!st) st = zero_point(c, 2, q.a, 1, &q.za);
  if (!st) st = zero_point(c, 5, q.b, p.n, &q.zb);
  if (!st && (loom_kt_numel(&c->in[1]) != 1 || loom_kt_numel(&c->in[6]) != 1 ||
              (loom_kt_numel(&c->in[4]) != 1 && loom_kt_numel(&c->in[4]) != p.n)))
    st = KFAIL(c, LOOM_E_UNSUPPORTED, "scales must be scalars (b_scale may be per column)");
  return st ? st : int_matmul(c, &p, &q, emit_q);
}

/* ---- Gemm ---- */

static loom_status k_gemm(const struct loom_kcall *c) {
  loom_status st = loom_k_arity(c, c->opset >= 11 ? 2 : 3, 3, 1, 1);
  const struct loom_kt *a = &c->in[0], *b = &c->in[1];
  struct loom_kt *y = &c->out[0];
  if (!st) st = loom_k_dtype(c, a, "A", DTM_FLOAT);
  if (!st) st = loom_k_same_dtype(c, a, b, "B");
  if (!st) st = loom_k_same_dtype(c, a, y, "the output");
  if (!st) st = loom_k_rank(c, a, "A", 2, 2);
  if (!st) st = loom_k_rank(c, b, "B", 2, 2);
  if (st) return st;
  int ta = loom_kattr_int(c, "transA", 0) != 0, tb = loom_kattr_int(c, "transB", 0) != 0;
  int64_t m = a->dims[ta], k = a->dims[!ta], n = b->dims[!tb];
  if (b->dims[tb] != k) return KFAIL(c, LOOM_E_INVALID, "inner dims differ (%lld and %lld)", (long long)k, (long long)b->dims[tb]);
  int64_t dims[2] = {m, n};
  if ((st = loom_k_out_shape(c, y, 2, dims))) return st;
  float alpha = loom_kattr_float(c, "alpha", 1), beta = loom_kattr_float(c, "beta", 1);
  int has_c = c->n_in > 2 && loom_kt_present(&c->in[2]);
  struct loom_kviews v;
  const float *pa, *pb;
  float *py;
  if ((st = loom_k_views(c, 2, &v))) return loom_k_views_done(c, &v, st);
  pa = v.in[0], pb = v.in[1], py = v.out;
  if (has_c) {
    st = loom_k_expand_f32(c, &c->in[2], 2, dims, py);
    for (int64_t i = 0; !st && i < m * n; i++) py[i] *= beta;
  }
  if (!st) st = loom_k_sgemm(c, m, n, k, alpha, pa, a->dims[1], ta, pb, b->dims[1], tb, has_c ? 1 : 0, py, n);
  return loom_k_views_done(c, &v, st);
}

const struct loom_kernel loom_kernels_matmul[] = {
    {"MatMul", k_matmul, 0, NULL},
    {"Gemm", k_gemm, 0, NULL},
    {"MatMulInteger", k_matmulinteger, 0, NULL},
    {"QLinearMatMul", k_qlinearmatmul, 0, NULL},
    {NULL, NULL, 0, NULL},
};
