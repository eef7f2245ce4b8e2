/*
 * kernels_linalg.c - Einsum, Det and CumSum.
 *
 * Einsum parses the equation into one label per operand dim (an ellipsis
 * becomes labels of its own, broadcast across operands right-aligned),
 * then sums the product of the operands over every label the output lacks.
 * A repeated label within a term reads a diagonal.  Without "->" the output
 * is the ellipsis dims followed by the labels used once, in alphabetical
 * order (numpy's implicit mode).  A contraction of two float32 operands
 * with no repeated or broadcast labels becomes a batched matrix product
 * (transposes into [batch, m, k] x [batch, k, n] and loom_k_sgemm), the
 * Transformer's case; everything else runs the general loop in double.
 *
 * Det factors each [M, M] matrix by Gaussian elimination with partial
 * pivoting in double.  CumSum accumulates along a runtime axis in double
 * (floats) or int64 (integers), exclusive and/or reverse.
 */
#include <math.h>
#include <string.h>

#include "kernel_util.h"

#define MAX_LABELS 64

struct eq {
  int n;                                       /* operands */
  int rank[LOOM_KERNEL_MAX_IO];
  int lab[LOOM_KERNEL_MAX_IO][LOOM_KT_MAX_RANK]; /* label per operand dim */
  int out_rank, out[LOOM_KT_MAX_RANK];
  int64_t size[MAX_LABELS];
};

/* Label numbers: a-z 0..25, A-Z 26..51, ellipsis dims 52.. */
static int label_of(char ch) {
  return ch >= 'a' && ch <= 'z' ? ch - 'a' : ch >= 'A' && ch <= 'Z' ? 26 + ch - 'A' : -1;
}

/* One term ("ij", "...ij") for an operand of `rank` dims (or the output:
 * rank -1, its ellipsis has `ell` dims). */
static loom_status term(const struct loom_kcall *c, const char *s, const char *e, int rank, int ell, int *labs,
                        int *n_out) {
  int n = 0, named = 0, has_ell = 0;
  for (const char *p = s; p < e; p++)
    if (*p == '.') has_ell = 1;
    else if (*p != ' ') named++;
  int e_dims = rank >= 0 ? rank - named : ell;
  if (has_ell && (e_dims < 0 || (rank >= 0 && e_dims > ell)))
    return KFAIL(c, LOOM_E_INVALID, "equation term does not fit its operand");
  if (!has_ell && rank >= 0 && named != rank)
    return KFAIL(c, LOOM_E_INVALID, "equation term has %d labels for rank %d", named, rank);
  for (const char *p = s; p < e; p++) {
    if (*p == ' ') continue;
    if (*p == '.') {
      if (p + 2 >= e || p[1] != '.' || p[2] != '.') return KFAIL(c, LOOM_E_INVALID, "malformed ellipsis");
      for (int k = 0; k < e_dims; k++) labs[n++] = 52 + (ell - e_dims) + k;
      p += 2;
      continue;
    }
    int l = label_of(*p);
    if (l < 0) return KFAIL(c, LOOM_E_INVALID, "bad label '%c' in the equation", *p);
    if (n >= LOOM_KT_MAX_RANK) return KFAIL(c, LOOM_E_INVALID, "too many labels");
    labs[n++] = l;
  }
  *n_out = n;
  return LOOM_OK;
}

static loom_status parse(const struct loom_kcall *c, const char *eq, struct eq *q) {
  memset(q, 0, sizeof *q);
  q->n = c->n_in;
  const char *arrow = strstr(eq, "->"), *end = arrow ? arrow : eq + strlen(eq), *p = eq;
  /* The ellipsis width is the largest any operand needs. */
  int width = 0;
  for (int i = 0; i < c->n_in; i++) {
    const char *comma = memchr(p, ',', (size_t)(end - p));
    const char *te = comma ? comma : end;
    int named = 0, has = 0;
    for (const char *t = p; t < te; t++) has |= *t == '.', named += *t != '.' && *t != ' ';
    if (has && c->in[i].rank - named > width) width = c->in[i].rank - named;
    p = comma ? comma + 1 : end;
    if (!comma && i + 1 < c->n_in) return KFAIL(c, LOOM_E_INVALID, "the equation has fewer terms than inputs");
  }
  p = eq;
  int count[MAX_LABELS] = {0};
  for (int i = 0; i < c->n_in; i++) {
    const char *comma = memchr(p, ',', (size_t)(end - p)), *te = comma ? comma : end;
    int n;
    loom_status st = term(c, p, te, c->in[i].rank, width, q->lab[i], &n);
    if (st) return st;
    q->rank[i] = n;
    for (int d = 0; d < n; d++) {
      int l = q->lab[i][d];
      int64_t dim = c->in[i].dims[d];
      if (!count[l]++ || q->size[l] == 1) q->size[l] = dim;
      else if (dim != q->size[l] && dim != 1) return KFAIL(c, LOOM_E_INVALID, "label sizes differ");
    }
    p = comma ? comma + 1 : end;
  }
  if (p != end) return KFAIL(c, LOOM_E_INVALID, "the equation has more terms than inputs");
  if (arrow) return term(c, arrow + 2, arrow + strlen(arrow), -1, width, q->out, &q->out_rank);
  q->out_rank = 0;
  for (int k = 0; k < width; k++) q->out[q->out_rank++] = 52 + k;
  for (int l = 0; l < 52; l++)
    if (count[l] == 1) q->out[q->out_rank++] = l;
  return LOOM_OK;
}

/* The general loop: every output element sums over the free labels. */
static void einsum_loop(const struct loom_kcall *c, const struct eq *q) {
  int in_out[MAX_LABELS] = {0}, used[MAX_LABELS] = {0}, sum[MAX_LABELS], ns = 0;
  for (int k = 0; k < q->out_rank; k++) in_out[q->out[k]] = 1;
  for (int i = 0; i < q->n; i++)
    for (int d = 0; d < q->rank[i]; d++) used[q->lab[i][d]] = 1;
  for (int l = 0; l < MAX_LABELS; l++)
    if (used[l] && !in_out[l]) sum[ns++] = l;
  /* Per operand, the element stride of each label (summed for diagonals;
   * 0 where the operand broadcasts). */
  int64_t stride[LOOM_KERNEL_MAX_IO][MAX_LABELS];
  memset(stride, 0, sizeof stride);
  for (int i = 0; i < q->n; i++) {
    int64_t s = 1;
    for (int d = q->rank[i] - 1; d >= 0; d--) {
      if (c->in[i].dims[d] != 1) stride[i][q->lab[i][d]] += s;
      s *= c->in[i].dims[d];
    }
  }
  int fl = loom_dtype_is_float(c->out[0].dtype);
  int64_t n_out = loom_kt_numel(&c->out[0]), oidx[LOOM_KT_MAX_RANK] = {0};
  for (int64_t o = 0; o < n_out; o++) {
    int64_t base[LOOM_KERNEL_MAX_IO] = {0}, sidx[MAX_LABELS] = {0};
    for (int i = 0; i < q->n; i++)
      for (int k = 0; k < q->out_rank; k++) base[i] += oidx[k] * stride[i][q->out[k]];
    double acc = 0;
    int64_t iacc = 0;
    for (int more = 1; more;) {
      double prod = 1;
      int64_t iprod = 1;
      for (int i = 0; i < q->n; i++) {
        int64_t at = base[i];
        for (int k = 0; k < ns; k++) at += sidx[k] * stride[i][sum[k]];
        if (fl) prod *= loom_kt_get_f64(&c->in[i], at);
        else iprod *= loom_kt_get_i64(&c->in[i], at);
      }
      acc += prod, iacc += iprod;
      more = 0;
      for (int k = ns - 1; k >= 0; k--) {
        if (++sidx[k] < q->size[sum[k]]) {
          more = 1;
          break;
        }
        sidx[k] = 0;
      }
    }
    if (fl) loom_kt_set_f64(&c->out[0], o, acc);
    else loom_kt_set_i64(&c->out[0], o, iacc);
    for (int k = q->out_rank - 1; k >= 0; k--) {
      if (++oidx[k] < q->size[q->out[k]]) break;
      oidx[k] = 0;
    }
  }
}

/* dst = src (rank dims) with its dims reordered: dst dim d is src dim perm[d]. */
static void permute_f32(const float *src, int rank, const int64_t *dims, const int *perm, float *dst) {
  int64_t st[LOOM_KT_MAX_RANK], idx[LOOM_KT_MAX_RANK] = {0}, od[LOOM_KT_MAX_RANK], n = 1, s = 1;
  for (int d = rank - 1; d >= 0; d--) st[d] = s, s *= dims[d];
  for (int d = 0; d < rank; d++) od[d] = dims[perm[d]], n *= od[d];
  for (int64_t o = 0; o < n; o++) {
    int64_t at = 0;
    for (int d = 0; d < rank; d++) at += idx[d] * st[perm[d]];
    dst[o] = src[at];
    for (int d = rank - 1; d >= 0; d--) {
      if (++idx[d] < od[d]) break;
      idx[d] = 0;
    }
  }
}

/* Position of label l in an operand's labels, or -1. */
static int find_label(const int *labs, int n, int l) {
  for (int d = 0; d < n; d++)
    if (labs[d] == l) return d;
  return -1;
}

/* Two float32 operands as a batched matrix product; 0 when the equation
 * does not have that form (then the general loop runs). */
static int einsum_gemm(const struct loom_kcall *c, const struct eq *q, loom_status *st) {
  if (q->n != 2 || c->out[0].dtype != LOOM_DT_F32 || c->in[0].dtype != LOOM_DT_F32) return 0;
  int role[MAX_LABELS] = {0}, pa[LOOM_KT_MAX_RANK], pb[LOOM_KT_MAX_RANK], pc[LOOM_KT_MAX_RANK];
  for (int i = 0; i < 2; i++)
    for (int d = 0; d < q->rank[i]; d++) {
      int l = q->lab[i][d];
      if (find_label(q->lab[i], d, l) >= 0 || c->in[i].dims[d] != q->size[l]) return 0; /* diagonal, broadcast */
      role[l] |= 1 << i;
    }
  for (int k = 0; k < q->out_rank; k++) role[q->out[k]] |= 4;
  /* batch: A, B, out; m: A, out; n: B, out; k: A, B. */
  int nb = 0, nm = 0, nk = 0, nn = 0, lb[LOOM_KT_MAX_RANK], lm[LOOM_KT_MAX_RANK], lk[LOOM_KT_MAX_RANK], ln[LOOM_KT_MAX_RANK];
  for (int l = 0; l < MAX_LABELS; l++) {
    if (!role[l]) continue;
    if (role[l] == 7) lb[nb++] = l;
    else if (role[l] == 5) lm[nm++] = l;
    else if (role[l] == 6) ln[nn++] = l;
    else if (role[l] == 3) lk[nk++] = l;
    else return 0; /* a label summed within one operand */
  }
  int64_t sb = 1, sm = 1, sn = 1, sk = 1;
  int r = 0;
  for (int j = 0; j < nb; j++) sb *= q->size[lb[j]], pa[r] = find_label(q->lab[0], q->rank[0], lb[j]), pb[r++] = find_label(q->lab[1], q->rank[1], lb[j]);
  int ra = r, rb = r;
  for (int j = 0; j < nm; j++) sm *= q->size[lm[j]], pa[ra++] = find_label(q->lab[0], q->rank[0], lm[j]);
  for (int j = 0; j < nk; j++) sk *= q->size[lk[j]], pa[ra++] = find_label(q->lab[0], q->rank[0], lk[j]), pb[rb++] = find_label(q->lab[1], q->rank[1], lk[j]);
  for (int j = 0; j < nn; j++) sn *= q->size[ln[j]], pb[rb++] = find_label(q->lab[1], q->rank[1], ln[j]);
  int cl[LOOM_KT_MAX_RANK], ncl = 0; /* the product's labels: batch, m, n */
  int64_t cd[LOOM_KT_MAX_RANK];
  for (int j = 0; j < nb; j++) cl[ncl++] = lb[j];
  for (int j = 0; j < nm; j++) cl[ncl++] = lm[j];
  for (int j = 0; j < nn; j++) cl[ncl++] = ln[j];
  for (int j = 0; j < ncl; j++) cd[j] = q->size[cl[j]];
  for (int k = 0; k < q->out_rank; k++) pc[k] = find_label(cl, ncl, q->out[k]);
  float *at = loom_k_alloc(c, sb * sm * sk + sb * sk * sn + sb * sm * sn, sizeof(float));
  if (!at) return *st = LOOM_E_NOMEM, 1;
  float *bt = at + sb * sm * sk, *ct = bt + sb * sk * sn;
  permute_f32(c->in[0].data, q->rank[0], c->in[0].dims, pa, at);
  permute_f32(c->in[1].data, q->rank[1], c->in[1].dims, pb, bt);
  *st = LOOM_OK;
  for (int64_t t = 0; t < sb && !*st; t++)
    *st = loom_k_sgemm(c, sm, sn, sk, 1, at + t * sm * sk, sk, 0, bt + t * sk * sn, sn, 0, 0, ct + t * sm * sn, sn);
  if (!*st) permute_f32(ct, ncl, cd, pc, c->out[0].data);
  free(at);
  return 1;
}

static loom_status k_einsum(const struct loom_kcall *c) {
  loom_status st = loom_k_arity(c, 1, LOOM_KERNEL_MAX_IO, 1, 1);
  const char *eq = loom_kattr_string(c, "equation", NULL);
  struct eq q;
  if (!st && !eq) st = KFAIL(c, LOOM_E_INVALID, "equation is missing");
  for (int i = 0; i < c->n_in && !st; i++) {
    if (!loom_kt_present(&c->in[i])) return KFAIL(c, LOOM_E_INVALID, "input %d is missing", i);
    st = loom_k_same_dtype(c, &c->out[0], &c->in[i], "an input");
  }
  if (!st) st = loom_k_dtype(c, &c->out[0], "output", DTM_NUM);
  if (!st) st = parse(c, eq, &q);
  if (st) return st;
  int64_t dims[LOOM_KT_MAX_RANK];
  for (int k = 0; k < q.out_rank; k++) dims[k] = q.size[q.out[k]];
  if ((st = loom_k_out_shape(c, &c->out[0], q.out_rank, dims))) return st;
  if (einsum_gemm(c, &q, &st)) return st;
  einsum_loop(c, &q);
  return LOOM_OK;
}

/* ---- Det ---- */

static loom_status k_det(const struct loom_kcall *c) {
  loom_status st = loom_k_arity(c, 1, 1, 1, 1);
  const struct loom_kt *x = &c->in[0];
  if (!st) st = loom_k_dtype(c, x, "input", DTM_FLOAT);
  if (!st) st = loom_k_rank(c, x, "input", 2, LOOM_KT_MAX_RANK);
  if (!st) st = loom_k_same_dtype(c, x, &c->out[0], "the output");
  if (!st && x->dims[x->rank - 1] != x->dims[x->rank - 2]) st = KFAIL(c, LOOM_E_INVALID, "matrices must be square");
  if (!st) st = loom_k_out_shape(c, &c->out[0], x->rank - 2, x->dims);
  if (st) return st;
  int64_t m = x->dims[x->rank - 1], mats = loom_k_span(x, 0, x->rank - 2);
  double *a = loom_k_alloc(c, m * m, sizeof(double));
  if (!a) return LOOM_E_NOMEM;
  for (int64_t t = 0; t < mats; t++) {
    for (int64_t i = 0; i < m * m; i++) a[i] = loom_kt_get_f64(x, t * m * m + i);
    double det = 1;
    for (int64_t k = 0; k < m && det != 0; k++) {
      int64_t p = k;
      for (int64_t i = k + 1; i < m; i++)
        if (fabs(a[i * m + k]) > fabs(a[p * m + k])) p = i;
      if (a[p * m + k] == 0) {
        det = 0;
        break;
      }
      if (p != k) {
        for (int64_t j = 0; j < m; j++) {
          double tmp = a[k * m + j];
          a[k * m + j] = a[p * m + j], a[p * m + j] = tmp;
        }
        det = -det;
      }
      det *= a[k * m + k];
      for (int64_t i = k + 1; i < m; i++) {
        double f = a[i * m + k] / a[k * m + k];
        for (int64_t j = k; j < m; j++) a[i * m + j] -= f * a[k * m + j];
      }
    }
    loom_kt_set_f64(&c->out[0], t, det);
  }
  free(a);
  return LOOM_OK;
}

/* ---- CumSum ---- */

static loom_status k_cumsum(const struct loom_kcall *c) {
  loom_status st = loom_k_arity(c, 2, 2, 1, 1);
  const struct loom_kt *x = &c->in[0];
  int64_t a = 0;
  int axis = 0;
  if (!st) st = loom_k_dtype(c, x, "input", DTM_NUM);
  if (!st) st = loom_k_same_dtype(c, x, &c->out[0], "the output");
  if (!st) st = loom_k_out_like(c, &c->out[0], x);
  if (!st) st = loom_k_dtype(c, &c->in[1], "axis", DTM_INDEX);
  if (!st) st = loom_k_scalar_i64(c, &c->in[1], "axis", &a);
  if (!st) st = loom_k_axis(c, a, x->rank, &axis);
  if (st) return st;
  int excl = loom_kattr_int(c, "exclusive", 0) != 0, rev = loom_kattr_int(c, "reverse", 0) != 0;
  int64_t outer = loom_k_span(x, 0, axis), n = x->dims[axis], inner = loom_k_span(x, axis + 1, x->rank);
  int fl = loom_dtype_is_float(x->dtype);
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++) {
      double s = 0;
      int64_t is = 0;
      for (int64_t k = 0; k < n; k++) {
        int64_t at = (o * n + (rev ? n - 1 - k : k)) * inner + i;
        double v = fl ? loom_kt_get_f64(x, at) : 0;
        int64_t iv = fl ? 0 : loom_kt_get_i64(x, at);
        if (!excl) s += v, is = (int64_t)((uint64_t)is + (uint64_t)iv);
        if (fl) loom_kt_set_f64(&c->out[0], at, s);
        else loom_kt_set_i64(&c->out[0], at, is);
        if (excl) s += v, is = (int64_t)((uint64_t)is + (uint64_t)iv);
      }
    }
  return LOOM_OK;
}

const struct loom_kernel loom_kernels_linalg[] = {
    {"Einsum", k_einsum, 0, NULL},
    {"Det", k_det, 0, NULL},
    {"CumSum", k_cumsum, 0, NULL},
    {NULL, NULL, 0, NULL},
};
