/*
 * kernels_move.c - data movement: Transpose, Slice, Split, Concat, Pad
 * (constant, reflect, edge), Tile, Expand, DepthToSpace, SpaceToDepth and
 * ReverseSequence, for every dtype.
 *
 * Most of them are one engine: each output dim d reads input element
 * map_d[i] at stride stride_d (map NULL = the identity, -1 = the fill value
 * of a constant Pad).  Transpose permutes the strides, Slice steps them,
 * Tile and Expand wrap or pin the index, Pad clamps, mirrors or fills, and
 * DepthToSpace/SpaceToDepth are 6-D transposes of a reshaped view.  The
 * innermost dim is copied with memcpy when it is contiguous and by element
 * size otherwise, so no element goes through a dtype switch.  Concat and
 * Split move whole contiguous blocks.
 */
#include <string.h>

#include "kernel_util.h"

struct mapcopy {
  int rank;
  int64_t dims[LOOM_KT_MAX_RANK], stride[LOOM_KT_MAX_RANK];
  const int64_t *map[LOOM_KT_MAX_RANK];
};

#define GATHER_ROW(T)                                                                       \
  do {                                                                                      \
    const T *s = (const T *)in + base;                                                      \
    T *d = (T *)out + o;                                                                    \
    if (!map) {                                                                             \
      for (int64_t i = 0; i < len; i++) d[i] = s[i * st];                                   \
    } else {                                                                                \
      for (int64_t i = 0; i < len; i++) d[i] = map[i] < 0 ? *(const T *)fill : s[map[i] * st]; \
    }                                                                                       \
  } while (0)

/* out[...] = in[base + sum map_d(idx_d) * stride_d]; fill for map -1. */
static void run_mapcopy(const struct mapcopy *m, const void *in, void *out, size_t es,
                        const void *fill) {
  int r = m->rank;
  int64_t idx[LOOM_KT_MAX_RANK] = {0}, n = 1;
  for (int d = 0; d < r; d++) n *= m->dims[d];
  if (n == 0) return;
  int64_t len = r ? m->dims[r - 1] : 1, st = r ? m->stride[r - 1] : 0;
  const int64_t *map = r ? m->map[r - 1] : NULL;
  for (int64_t o = 0; o < n; o += len) {
    int64_t base = 0, filled = 0;
    for (int d = 0; d < r - 1; d++) {
      int64_t k = m->map[d] ? m->map[d][idx[d]] : idx[d];
      if (k < 0) filled = 1;
      base += k * m->stride[d];
    }
    if (filled) {
      for (int64_t i = 0; i < len; i++) memcpy((char *)out + (o + i) * (int64_t)es, fill, es);
    } else if (!map && st == 1) {
      memcpy((char *)out + o * (int64_t)es, (const char *)in + base * (int64_t)es, (size_t)len * es);
    } else {
      switch (es) {
      case 1: GATHER_ROW(uint8_t); break;
      case 2: GATHER_ROW(uint16_t); break;
      case 4: GATHER_ROW(uint32_t); break;
      default: GATHER_ROW(uint64_t); break;
      }
    }
    for (int d = r - 2; d >= 0; d--) {
      if (++idx[d] < m->dims[d]) break;
      idx[d] = 0;
    }
  }
}

/* The plain view of y reading x with x's own strides. */
static void plain(struct mapcopy *m, const struct loom_kt *x, const struct loom_kt *y) {
  memset(m, 0, sizeof *m);
  m->rank = y->rank;
  memcpy(m->dims, y->dims, sizeof m->dims);
  loom_k_strides(x, m->stride);
}

static loom_status move_check(const struct loom_kcall *c, int min_in, int max_in) {
  loom_status st = loom_k_arity(c, min_in, max_in, 1, 1);
  return st ? st : loom_k_same_dtype(c, &c->in[0], &c->out[0], "the output");
}

/* ---- Transpose ---- */

static loom_status k_transpose(const struct loom_kcall *c) {
  loom_status st = move_check(c, 1, 1);
  const struct loom_kt *x = &c->in[0];
  const int64_t *perm = NULL;
  if (!st) st = loom_k_ints_n(c, "perm", x->rank, &perm);
  if (st) return st;
  int64_t p[LOOM_KT_MAX_RANK], dims[LOOM_KT_MAX_RANK], xs[LOOM_KT_MAX_RANK];
  int seen[LOOM_KT_MAX_RANK] = {0};
  for (int d = 0; d < x->rank; d++) {
    p[d] = perm ? perm[d] : x->rank - 1 - d;
    if (p[d] < 0 || p[d] >= x->rank || seen[p[d]]++) return KFAIL(c, LOOM_E_INVALID, "perm is not a permutation");
    dims[d] = x->dims[p[d]];
  }
  if ((st = loom_k_out_shape(c, &c->out[0], x->rank, dims))) return st;
  struct mapcopy m;
  plain(&m, x, &c->out[0]);
  loom_k_strides(x, xs);
  for (int d = 0; d < x->rank; d++) m.stride[d] = xs[p[d]];
  run_mapcopy(&m, x->data, c->out[0].data, loom_dtype_size(x->dtype), NULL);
  return LOOM_OK;
}

/* ---- Slice ---- */

static int64_t clamp(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }

static loom_status k_slice(const struct loom_kcall *c) {
  int attrs = c->opset < 10;
  loom_status st = move_check(c, attrs ? 1 : 3, attrs ? 1 : 5);
  const struct loom_kt *x = &c->in[0];
  if (st) return st;
  int64_t starts[LOOM_KT_MAX_RANK], ends[LOOM_KT_MAX_RANK], axes[LOOM_KT_MAX_RANK], steps[LOOM_KT_MAX_RANK];
  const int64_t *as = NULL, *ae = NULL, *aa = NULL;
  int n = attrs ? loom_kattr_ints(c, "starts", &as) : (int)loom_kt_numel(&c->in[1]);
  if (n < 0 || n > x->rank || (attrs ? loom_kattr_ints(c, "ends", &ae) : (int)loom_kt_numel(&c->in[2])) != n)
    return KFAIL(c, LOOM_E_INVALID, "starts and ends must have the same count, at most the rank");
  int has_axes = attrs ? loom_kattr_ints(c, "axes", &aa) >= 0 : c->n_in > 3 && loom_kt_present(&c->in[3]);
  int has_steps = !attrs && c->n_in > 4 && loom_kt_present(&c->in[4]);
  if ((has_axes && (attrs ? loom_kattr_ints(c, "axes", &aa) : (int)loom_kt_numel(&c->in[3])) != n) ||
      (has_steps && loom_kt_numel(&c->in[4]) != n))
    return KFAIL(c, LOOM_E_INVALID, "axes and steps must have as many values as starts");
  for (int i = 0; i < n; i++) {
    starts[i] = attrs ? as[i] : loom_k_idx(&c->in[1], i);
    ends[i] = attrs ? ae[i] : loom_k_idx(&c->in[2], i);
    axes[i] = !has_axes ? i : attrs ? aa[i] : loom_k_idx(&c->in[3], i);
    steps[i] = has_steps ? loom_k_idx(&c->in[4], i) : 1;
  }
  struct mapcopy m;
  int64_t base = 0, dims[LOOM_KT_MAX_RANK], xs[LOOM_KT_MAX_RANK];
  int seen[LOOM_KT_MAX_RANK] = {0};
  loom_k_strides(x, xs);
  memcpy(dims, x->dims, sizeof dims);
  int64_t step_of[LOOM_KT_MAX_RANK];
  for (int d = 0; d < x->rank; d++) step_of[d] = 1;
  for (int i = 0; i < n; i++) {
    int a;
    if ((st = loom_k_axis(c, axes[i], x->rank, &a))) return st;
    if (seen[a]++) return KFAIL(c, LOOM_E_INVALID, "axis %d is repeated", a);
    int64_t dim = x->dims[a], s = starts[i], e = ends[i], k = steps[i];
    if (k == 0) return KFAIL(c, LOOM_E_INVALID, "step is 0");
    if (s < 0) s += dim;
    if (e < 0) e += dim;
    s = k > 0 ? clamp(s, 0, dim) : clamp(s, 0, dim - 1);
    e = k > 0 ? clamp(e, 0, dim) : clamp(e, -1, dim - 1);
    int64_t len = k > 0 ? (e - s + k - 1) / k : (s - e - k - 1) / -k;
    dims[a] = len > 0 ? len : 0;
    step_of[a] = k;
    if (dims[a]) base += s * xs[a];
  }
  if ((st = loom_k_out_shape(c, &c->out[0], x->rank, dims))) return st;
  plain(&m, x, &c->out[0]);
  for (int d = 0; d < x->rank; d++) m.stride[d] = xs[d] * step_of[d];
  size_t es = loom_dtype_size(x->dtype);
  run_mapcopy(&m, (const char *)x->data + base * (int64_t)es, c->out[0].data, es, NULL);
  return LOOM_OK;
}

/* ---- Concat, Split ---- */

static loom_status k_concat(const struct loom_kcall *c) {
  loom_status st = loom_k_arity(c, 1, LOOM_KERNEL_MAX_IO, 1, 1);
  struct loom_kt *y = &c->out[0];
  int axis = 0;
  if (!loom_kattr_find(c, "axis") && c->opset >= 4) return KFAIL(c, LOOM_E_INVALID, "axis is missing");
  if (!st) st = loom_k_axis(c, loom_kattr_int(c, "axis", 1), y->rank, &axis);
  int64_t total = 0;
  for (int i = 0; i < c->n_in && !st; i++) {
    const struct loom_kt *x = &c->in[i];
    if (!loom_kt_present(x)) return KFAIL(c, LOOM_E_INVALID, "input %d is missing", i);
    if ((st = loom_k_same_dtype(c, y, x, "an input"))) break;
    if (x->rank != y->rank) return KFAIL(c, LOOM_E_INVALID, "input %d has rank %d, not %d", i, x->rank, y->rank);
    for (int d = 0; d < y->rank; d++)
      if (d != axis && x->dims[d] != y->dims[d])
        return KFAIL(c, LOOM_E_INVALID, "input %d differs from the output in dim %d", i, d);
    total += x->dims[axis];
  }
  if (!st && total != y->dims[axis])
    st = KFAIL(c, LOOM_E_INVALID, "inputs sum to %lld along axis %d, the output has %lld",
               (long long)total, axis, (long long)y->dims[axis]);
  if (st) return st;
  size_t es = loom_dtype_size(y->dtype);
  int64_t outer = loom_k_span(y, 0, axis), inner = loom_k_span(y, axis + 1, y->rank) * (int64_t)es;
  int64_t row = y->dims[axis] * inner, at = 0;
  for (int i = 0; i < c->n_in; i++) {
    int64_t part = c->in[i].dims[axis] * inner;
    for (int64_t o = 0; o < outer && part; o++)
      memcpy((char *)y->data + o * row + at, (const char *)c->in[i].data + o * part, (size_t)part);
    at += part;
  }
  return LOOM_OK;
}

static loom_status k_split(const struct loom_kcall *c) {
  loom_status st = loom_k_arity(c, 1, 2, 1, LOOM_KERNEL_MAX_IO);
  const struct loom_kt *x = &c->in[0];
  int axis = 0;
  if (!st) st = loom_k_axis(c, loom_kattr_int(c, "axis", 0), x->rank, &axis);
  if (st) return st;
  const int64_t *attr = NULL;
  const struct loom_kt *sp = c->opset >= 13 && c->n_in > 1 && loom_kt_present(&c->in[1]) ? &c->in[1] : NULL;
  int ns = sp ? (int)loom_kt_numel(sp) : c->opset < 13 ? loom_kattr_ints(c, "split", &attr) : -1;
  if (ns >= 0 && ns != c->n_out)
    return KFAIL(c, LOOM_E_INVALID, "split has %d values for %d outputs", ns, c->n_out);
  int64_t sum = 0;
  for (int i = 0; i < c->n_out; i++) {
    int64_t part = ns >= 0 ? (sp ? loom_k_idx(sp, i) : attr[i]) : x->dims[axis] / c->n_out;
    if (ns < 0 && x->dims[axis] % c->n_out)
      return KFAIL(c, LOOM_E_INVALID, "dim %lld does not split into %d equal parts", (long long)x->dims[axis], c->n_out);
    if (part < 0) return KFAIL(c, LOOM_E_INVALID, "negative split");
    struct loom_kt *y = &c->out[i];
    int64_t dims[LOOM_KT_MAX_RANK];
    memcpy(dims, x->dims, sizeof dims);
    dims[axis] = part;
    sum += part;
    if (loom_kt_present(y) && ((st = loom_k_same_dtype(c, x, y, "an output")) || (st = loom_k_out_shape(c, y, x->rank, dims))))
      return st;
  }
  if (sum != x->dims[axis]) return KFAIL(c, LOOM_E_INVALID, "split sums to %lld, not %lld", (long long)sum, (long long)x->dims[axis]);
  size_t es = loom_dtype_size(x->dtype);
  int64_t outer = loom_k_span(x, 0, axis), inner = loom_k_span(x, axis + 1, x->rank) * (int64_t)es;
  int64_t row = x->dims[axis] * inner, at = 0;
  for (int i = 0; i < c->n_out; i++) {
    int64_t part = ns >= 0 ? (sp ? loom_k_idx(sp, i) : attr[i]) * inner : row / c->n_out;
    if (loom_kt_present(&c->out[i]))
      for (int64_t o = 0; o < outer && part; o++)
        memcpy((char *)c->out[i].data + o * part, (const char *)x->data + o * row + at, (size_t)part);
    at += part;
  }
  return LOOM_OK;
}

/* ---- Pad, Tile, Expand ---- */

/* Index maps for every output dim, laid out one after another. */
static int64_t *maps_alloc(const struct loom_kcall *c, const struct loom_kt *y, struct mapcopy *m) {
  int64_t total = 0;
  for (int d = 0; d < y->rank; d++) total += y->dims[d];
  int64_t *buf = loom_k_alloc(c, total, sizeof(int64_t));
  for (int d = 0, at = 0; buf && d < y->rank; at += (int)y->dims[d], d++) m->map[d] = buf + at;
  return buf;
}

static loom_status k_pad(const struct loom_kcall *c) {
  int attrs = c->opset < 11;
  loom_status st = move_check(c, attrs ? 1 : 2, attrs ? 1 : 3);
  const struct loom_kt *x = &c->in[0];
  struct loom_kt *y = &c->out[0];
  static const char *const modes[] = {"constant", "reflect", "edge", NULL};
  int mode = 0;
  if (!st) st = loom_k_choice(c, "mode", "constant", modes, &mode);
  if (st) return st;
  const int64_t *ap = NULL;
  int n = attrs ? loom_kattr_ints(c, "pads", &ap) : (int)loom_kt_numel(&c->in[1]);
  if (n != 2 * x->rank) return KFAIL(c, LOOM_E_INVALID, "pads has %d values, expected %d", n, 2 * x->rank);
  int64_t pads[2 * LOOM_KT_MAX_RANK], dims[LOOM_KT_MAX_RANK];
  for (int i = 0; i < n; i++) pads[i] = attrs ? ap[i] : loom_k_idx(&c->in[1], i);
  for (int d = 0; d < x->rank; d++) dims[d] = x->dims[d] + pads[d] + pads[x->rank + d];
  if ((st = loom_k_out_shape(c, y, x->rank, dims))) return st;
  uint64_t fill = 0; /* the constant in y's dtype */
  struct loom_kt f = {y->dtype, 0, {0}, &fill};
  if (attrs) loom_kt_set_f64(&f, 0, loom_kattr_float(c, "value", 0));
  else if (c->n_in > 2 && loom_kt_present(&c->in[2])) {
    if ((st = loom_k_same_dtype(c, x, &c->in[2], "constant_value"))) return st;
    loom_k_copy1(&fill, 0, c->in[2].data, 0, loom_dtype_size(y->dtype));
  }
  struct mapcopy m;
  plain(&m, x, y);
  int64_t *buf = maps_alloc(c, y, &m);
  if (!buf) return LOOM_E_NOMEM;
  for (int d = 0; d < x->rank; d++) {
    int64_t *map = (int64_t *)m.map[d], dim = x->dims[d];
    if (mode && dim == 0 && y->dims[d]) return free(buf), KFAIL(c, LOOM_E_INVALID, "cannot %s-pad an empty dim", modes[mode]);
    int md = mode == 1 && dim == 1 ? 2 : mode; /* a 1-wide mirror is its edge */
    for (int64_t i = 0; i < y->dims[d]; i++) {
      int64_t k = i - pads[d];
      if (md == 0) k = k < 0 || k >= dim ? -1 : k;
      else if (md == 2) k = clamp(k, 0, dim - 1);
      else {
        int64_t period = 2 * (dim - 1);
        k = ((k % period) + period) % period;
        if (k >= dim) k = period - k;
      }
      map[i] = k;
    }
  }
  run_mapcopy(&m, x->data, y->data, loom_dtype_size(x->dtype), &fill);
  free(buf);
  return LOOM_OK;
}

/* Tile (repeats) and Expand (a shape to broadcast to). */
static loom_status k_tile_expand(const struct loom_kcall *c) {
  int tile = !strcmp(c->op, "Tile");
  loom_status st = move_check(c, 2, 2);
  const struct loom_kt *x = &c->in[0], *r = &c->in[1];
  struct loom_kt *y = &c->out[0];
  if (!st) st = loom_k_dtype(c, r, tile ? "repeats" : "shape", DTM(LOOM_DT_I64));
  if (st) return st;
  int n = (int)loom_kt_numel(r), rank = 0;
  int64_t dims[LOOM_KT_MAX_RANK];
  if (tile) {
    if (n != x->rank) return KFAIL(c, LOOM_E_INVALID, "repeats has %d values for rank %d", n, x->rank);
    for (int d = 0; d < n; d++) {
      if (loom_k_idx(r, d) < 0) return KFAIL(c, LOOM_E_INVALID, "negative repeat");
      dims[d] = x->dims[d] * loom_k_idx(r, d);
    }
    rank = n;
  } else {
    int64_t s[LOOM_KT_MAX_RANK];
    if (n > LOOM_KT_MAX_RANK) return KFAIL(c, LOOM_E_UNSUPPORTED, "shape has %d values", n);
    for (int d = 0; d < n; d++) s[d] = loom_k_idx(r, d);
    if ((st = loom_k_bcast_dims(c, x->rank, x->dims, n, s, &rank, dims))) return st;
  }
  if ((st = loom_k_out_shape(c, y, rank, dims))) return st;
  struct mapcopy m;
  memset(&m, 0, sizeof m);
  m.rank = rank;
  memcpy(m.dims, dims, sizeof dims);
  int64_t xs[LOOM_KT_MAX_RANK];
  loom_k_strides(x, xs);
  int64_t *buf = maps_alloc(c, y, &m);
  if (!buf) return LOOM_E_NOMEM;
  for (int d = 0; d < rank; d++) {
    int xd = d - (rank - x->rank);
    int64_t dim = xd >= 0 ? x->dims[xd] : 1;
    m.stride[d] = xd >= 0 ? xs[xd] : 0;
    for (int64_t i = 0; i < dims[d]; i++) ((int64_t *)m.map[d])[i] = dim == 1 ? 0 : i % dim;
  }
  run_mapcopy(&m, x->data, y->data, loom_dtype_size(x->dtype), NULL);
  free(buf);
  return LOOM_OK;
}

/* ---- DepthToSpace, SpaceToDepth ---- */

/* y = transpose(reshape(x, view), perm), all 6-D. */
static void transpose6(const struct loom_kt *x, struct loom_kt *y, const int64_t *view, const int *perm) {
  struct mapcopy m;
  memset(&m, 0, sizeof m);
  int64_t vs[6], s = 1;
  for (int d = 5; d >= 0; d--) vs[d] = s, s *= view[d];
  m.rank = 6;
  for (int d = 0; d < 6; d++) m.dims[d] = view[perm[d]], m.stride[d] = vs[perm[d]];
  run_mapcopy(&m, x->data, y->data, loom_dtype_size(x->dtype), NULL);
}

static loom_status k_space_depth(const struct loom_kcall *c) {
  int to_space = !strcmp(c->op, "DepthToSpace");
  loom_status st = move_check(c, 1, 1);
  const struct loom_kt *x = &c->in[0];
  int64_t b = loom_kattr_int(c, "blocksize", 0);
  if (!st) st = loom_k_rank(c, x, "input", 4, 4);
  if (!st && b < 1) st = KFAIL(c, LOOM_E_INVALID, "blocksize must be positive");
  if (st) return st;
  int64_t n = x->dims[0], ch = x->dims[1], h = x->dims[2], w = x->dims[3];
  int crd = to_space && c->opset >= 11 && !strcmp(loom_kattr_string(c, "mode", "DCR"), "CRD");
  if (to_space ? ch % (b * b) : h % b || w % b)
    return KFAIL(c, LOOM_E_INVALID, "dims are not divisible by the block size %lld", (long long)b);
  int64_t dims[4] = {n, to_space ? ch / (b * b) : ch * b * b, to_space ? h * b : h / b, to_space ? w * b : w / b};
  if ((st = loom_k_out_shape(c, &c->out[0], 4, dims))) return st;
  if (!to_space) {
    static const int perm[6] = {0, 3, 5, 1, 2, 4};
    transpose6(x, &c->out[0], (int64_t[6]){n, ch, h / b, b, w / b, b}, perm);
  } else if (crd) {
    static const int perm[6] = {0, 1, 4, 2, 5, 3};
    transpose6(x, &c->out[0], (int64_t[6]){n, ch / (b * b), b, b, h, w}, perm);
  } else {
    static const int perm[6] = {0, 3, 4, 1, 5, 2};
    transpose6(x, &c->out[0], (int64_t[6]){n, b, b, ch / (b * b), h, w}, perm);
  }
  return LOOM_OK;
}

/* ---- ReverseSequence ---- */

static loom_status k_reverseseq(const struct loom_kcall *c) {
  loom_status st = move_check(c, 2, 2);
  const struct loom_kt *x = &c->in[0], *lens = &c->in[1];
  int ta = 0, ba = 0;
  if (!st) st = loom_k_rank(c, x, "input", 2, LOOM_KT_MAX_RANK);
  if (!st) st = loom_k_out_like(c, &c->out[0], x);
  if (!st) st = loom_k_axis(c, loom_kattr_int(c, "time_axis", 0), x->rank, &ta);
  if (!st) st = loom_k_axis(c, loom_kattr_int(c, "batch_axis", 1), x->rank, &ba);
  if (!st && (ta > 1 || ba > 1 || ta == ba)) st = KFAIL(c, LOOM_E_INVALID, "time_axis and batch_axis must be 0 and 1");
  if (!st && loom_kt_numel(lens) != x->dims[ba]) st = KFAIL(c, LOOM_E_INVALID, "sequence_lens must have one value per batch");
  if (st) return st;
  size_t es = loom_dtype_size(x->dtype);
  int64_t inner = loom_k_span(x, 2, x->rank) * (int64_t)es, xs[LOOM_KT_MAX_RANK];
  loom_k_strides(x, xs);
  for (int64_t b = 0; b < x->dims[ba]; b++) {
    int64_t len = loom_k_idx(lens, b);
    if (len < 0 || len > x->dims[ta]) return KFAIL(c, LOOM_E_INVALID, "sequence length %lld is out of range", (long long)len);
    for (int64_t t = 0; t < x->dims[ta]; t++) {
      int64_t from = t < len ? len - 1 - t : t;
      memcpy((char *)c->out[0].data + (t * xs[ta] + b * xs[ba]) * (int64_t)es,
             (const char *)x->data + (from * xs[ta] + b * xs[ba]) * (int64_t)es, (size_t)inner);
    }
  }
  return LOOM_OK;
}

const struct loom_kernel loom_kernels_move[] = {
    {"Transpose", k_transpose, 0, NULL},    {"Slice", k_slice, 0, NULL},
    {"Concat", k_concat, 0, NULL},          {"Split", k_split, 0, NULL},
    {"Pad", k_pad, 0, NULL},                {"Tile", k_tile_expand, 0, NULL},
    {"Expand", k_tile_expand, 0, NULL},     {"DepthToSpace", k_space_depth, 0, NULL},
    {"SpaceToDepth", k_space_depth, 0, NULL}, {"ReverseSequence", k_reverseseq, 0, NULL},
    {NULL, NULL, 0, NULL},
};
