/*
 * shape_onnx_nn.c - shape inference of the neural-network ONNX ops that
 * run on the host kernels: pooling in its generic forms (3-D windows,
 * MaxPool's Indices, LpPool), ConvTranspose, MaxUnpool, the region pools,
 * GridSample, Einsum, Det, the recurrent nets (RNN, GRU, LSTM, both
 * layouts), NonMaxSuppression (a capacity), the two losses, and the signal
 * ops of opset 17 (DFT, STFT, the window functions, MelWeightMatrix) and
 * TfIdfVectorizer.
 */
#include "sw_compiler/shape_onnx.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* ---- windows ---- */

/* MaxPool (with its optional Indices), AveragePool and LpPool of any rank. */
int so_pool(struct sctx *c) {
  const struct ir_tensor *xt = si_known(c, 0);
  if (!xt) return 0;
  struct shape x = si_shape_of(xt), y;
  struct window w;
  if (x.rank < 3) return si_fail(c, "input rank %d, needs at least 3", x.rank);
  if (si_read_window(c, &x, &w) || si_window_out(c, &x, &w, &y)) return -1;
  y.d[0] = x.d[0], y.d[1] = x.d[1];
  if (si_set_result(c, 0, xt->dtype, &y)) return -1;
  return si_cur(c)->n_out > 1 ? si_set_result(c, 1, IR_DT_I64, &y) : 0;
}

int so_global_pool(struct sctx *c) {
  const struct ir_tensor *x = si_known(c, 0);
  if (!x) return 0;
  if (x->rank < 3) return si_fail(c, "input rank %d, needs at least 3", x->rank);
  struct shape y = si_shape_of(x);
  for (int i = 2; i < y.rank; i++) y.d[i] = 1;
  return si_set_result(c, 0, x->dtype, &y);
}

/* ConvTranspose: X [N, C, ...], W [C, M/group, k...]. */
int so_conv_transpose(struct sctx *c) {
  const struct ir_tensor *x = si_known(c, 0), *w = si_known(c, 1);
  if (!x || !w) return 0;
  int nsp = x->rank - 2;
  if (x->rank < 3 || w->rank != x->rank) return si_fail(c, "input rank %d and weight rank %d do not fit", x->rank, w->rank);
  int64_t group = ir_attr_int(si_cur(c), "group", 1), k[IR_MAX_RANK], s[IR_MAX_RANK], d[IR_MAX_RANK];
  int64_t op[IR_MAX_RANK], pads[2 * IR_MAX_RANK], os[IR_MAX_RANK + 2];
  if (group < 1 || x->dims[1] != w->dims[0] || w->dims[0] % group) return si_fail(c, "channels and group do not fit the weight");
  if (si_ints_attr(c, "kernel_shape", nsp, 0, k) || si_ints_attr(c, "strides", nsp, 1, s) ||
      si_ints_attr(c, "dilations", nsp, 1, d) || si_ints_attr(c, "output_padding", nsp, 0, op) ||
      si_ints_attr(c, "pads", 2 * nsp, 0, pads))
    return -1;
  struct shape y = {.rank = x->rank, .d = {x->dims[0], w->dims[1] * group}};
  const int64_t *shp;
  int n_os = ir_attr_ints(si_cur(c), "output_shape", &shp);
  if (n_os > 0) {
    if (n_os != nsp && n_os != nsp + 2) return si_fail(c, "output_shape has %d entries for %d spatial axes", n_os, nsp);
    memcpy(os, shp, (size_t)n_os * sizeof *os);
  }
  const char *ap = ir_attr_string(si_cur(c), "auto_pad", "NOTSET");
  int same = !strcmp(ap, "SAME_UPPER") || !strcmp(ap, "SAME_LOWER");
  for (int i = 0; i < nsp; i++) {
    int64_t ki = k[i] ? k[i] : w->dims[2 + i];
    if (s[i] < 1 || d[i] < 1 || ki < 1) return si_fail(c, "strides, dilations and kernel must be positive");
    if (n_os > 0) y.d[2 + i] = os[n_os - nsp + i];
    else if (same) y.d[2 + i] = x->dims[2 + i] * s[i];
    else y.d[2 + i] = s[i] * (x->dims[2 + i] - 1) + op[i] + (ki - 1) * d[i] + 1 - pads[i] - pads[i + nsp];
    if (y.d[2 + i] < 0) return si_fail(c, "negative output size on axis %d", 2 + i);
  }
  return si_set_result(c, 0, x->dtype, &y);
}

/* MaxUnpool: X, I, output_shape?. */
int so_max_unpool(struct sctx *c) {
  const struct ir_tensor *xt = si_known(c, 0);
  if (!xt) return 0;
  struct shape x = si_shape_of(xt), y = x;
  int nsp = x.rank - 2, n, r;
  if (si_has(c, 2)) {
    if ((r = si_const_ints(c, 2, y.d, IR_MAX_RANK, &n)) <= 0) return r;
    if (n != x.rank) return si_fail(c, "output_shape has %d entries for rank %d", n, x.rank);
    return si_set_result(c, 0, xt->dtype, &y);
  }
  int64_t k[IR_MAX_RANK], s[IR_MAX_RANK], pads[2 * IR_MAX_RANK];
  if (si_ints_attr(c, "kernel_shape", nsp, 1, k) || si_ints_attr(c, "strides", nsp, 1, s) ||
      si_ints_attr(c, "pads", 2 * nsp, 0, pads))
    return -1;
  for (int i = 0; i < nsp; i++) {
    y.d[2 + i] = (x.d[2 + i] - 1) * s[i] + k[i] - pads[i] - pads[i + nsp];
    if (y.d[2 + i] < 0) return si_fail(c, "negative output size on axis %d", 2 + i);
  }
  return si_set_result(c, 0, xt->dtype, &y);
}

int so_max_roi_pool(struct sctx *c) {
  const struct ir_tensor *x = si_known(c, 0), *rois = si_known(c, 1);
  int64_t ps[2];
  if (!x || !rois) return 0;
  if (x->rank != 4 || rois->rank != 2) return si_fail(c, "needs X [N,C,H,W] and rois [R,5]");
  if (si_ints_attr(c, "pooled_shape", 2, 1, ps)) return -1;
  struct shape y = {.rank = 4, .d = {rois->dims[0], x->dims[1], ps[0], ps[1]}};
  return si_set_result(c, 0, x->dtype, &y);
}

int so_roi_align(struct sctx *c) {
  const struct ir_tensor *x = si_known(c, 0), *rois = si_known(c, 1);
  if (!x || !rois) return 0;
  if (x->rank != 4 || rois->rank != 2) return si_fail(c, "needs X [N,C,H,W] and rois [R,4]");
  struct shape y = {.rank = 4, .d = {rois->dims[0], x->dims[1], ir_attr_int(si_cur(c), "output_height", 1),
                                     ir_attr_int(si_cur(c), "output_width", 1)}};
  return si_set_result(c, 0, x->dtype, &y);
}

int so_grid_sample(struct sctx *c) {
  const struct ir_tensor *x = si_known(c, 0), *grid = si_known(c, 1);
  if (!x || !grid) return 0;
  if (x->rank != 4 || grid->rank != 4) return si_fail(c, "needs X [N,C,H,W] and grid [N,H,W,2]");
  struct shape y = {.rank = 4, .d = {x->dims[0], x->dims[1], grid->dims[1], grid->dims[2]}};
  return si_set_result(c, 0, x->dtype, &y);
}

/* ---- Einsum ---- */

struct einsum {
  int64_t letter[52];     /* size of each subscript letter, -1 unknown */
  int count[52];          /* terms it appears in */
  struct shape ell;       /* broadcast of the ellipsis dims */
  int has_ell;
};

static int letter_index(char ch) {
  if (ch >= 'a' && ch <= 'z') return ch - 'a';
  if (ch >= 'A' && ch <= 'Z') return 26 + ch - 'A';
  return -1;
}

/* One input term (without blanks) against operand t. */
static int einsum_term(struct sctx *c, struct einsum *e, const char *term, size_t len, const struct ir_tensor *t) {
  int letters = 0, ell = 0;
  for (size_t i = 0; i < len; i++) {
    if (term[i] == '.') { ell++; continue; }
    if (letter_index(term[i]) < 0) return si_fail(c, "bad subscript '%c' in the equation", term[i]);
    letters++;
  }
  if ((ell != 0 && ell != 3) || letters > t->rank || (!ell && letters != t->rank))
    return si_fail(c, "term '%.*s' does not fit an operand of rank %d", (int)len, term, t->rank);
  int ell_rank = t->rank - letters, dim = 0;
  for (size_t i = 0; i < len; i++) {
    if (term[i] == '.') {
      if (term[i + 1] != '.' || term[i + 2] != '.') return si_fail(c, "bad ellipsis in the equation");
      struct shape s = {.rank = ell_rank}, r;
      memcpy(s.d, t->dims + dim, (size_t)ell_rank * sizeof *s.d);
      if (si_broadcast(c, &e->ell, &s, &r)) return -1;
      e->ell = r, e->has_ell = 1, dim += ell_rank, i += 2;
      continue;
    }
    int li = letter_index(term[i]);
    int64_t d = t->dims[dim++];
    if (e->letter[li] >= 0 && e->letter[li] != d && e->letter[li] != 1 && d != 1)
      return si_fail(c, "subscript '%c' is %lld and %lld", term[i], (long long)e->letter[li], (long long)d);
    if (e->letter[li] < 0 || e->letter[li] == 1) e->letter[li] = d;
    e->count[li]++;
  }
  return 0;
}

int so_einsum(struct sctx *c) {
  struct ir_node *n = si_cur(c);
  const char *eq = ir_attr_string(n, "equation", NULL);
  char buf[512];
  size_t m = 0;
  for (int k = 0; k < n->n_in; k++)
    if (!si_known(c, k)) return 0;
  if (!eq) return si_fail(c, "needs an equation");
  for (const char *p = eq; *p && m + 1 < sizeof buf; p++)
    if (!isspace((unsigned char)*p)) buf[m++] = *p;
  buf[m] = 0;
  struct einsum e = {.ell = {.rank = 0}};
  for (int i = 0; i < 52; i++) e.letter[i] = -1;
  char *arrow = strstr(buf, "->"), *p = buf;
  size_t lhs_len = arrow ? (size_t)(arrow - buf) : m;
  for (int k = 0; k < n->n_in; k++) {
    char *end = memchr(p, ',', lhs_len - (size_t)(p - buf));
    size_t len = end ? (size_t)(end - p) : lhs_len - (size_t)(p - buf);
    if (!end && k + 1 < n->n_in) return si_fail(c, "the equation has fewer terms than operands");
    if (einsum_term(c, &e, p, len, si_known(c, k))) return -1;
    p += len + 1;
  }
  if ((size_t)(p - buf) <= lhs_len) return si_fail(c, "the equation has more terms than operands");
  struct shape y = {.rank = 0};
  if (arrow) {
    for (const char *q = arrow + 2; *q; q++) {
      if (*q == '.') {
        if (strncmp(q, "...", 3)) return si_fail(c, "bad ellipsis in the output");
        for (int i = 0; i < e.ell.rank && y.rank < IR_MAX_RANK; i++) y.d[y.rank++] = e.ell.d[i];
        q += 2;
        continue;
      }
      int li = letter_index(*q);
      if (li < 0 || e.letter[li] < 0) return si_fail(c, "output subscript '%c' is not in the inputs", *q);
      if (y.rank == IR_MAX_RANK) return si_fail(c, "result rank above %d", IR_MAX_RANK);
      y.d[y.rank++] = e.letter[li];
    }
  } else { /* implicit: the ellipsis, then letters seen once, in order */
    for (int i = 0; i < e.ell.rank; i++) y.d[y.rank++] = e.ell.d[i];
    for (int i = 0; i < 52; i++)
      if (e.count[i] == 1 && y.rank < IR_MAX_RANK) y.d[y.rank++] = e.letter[i];
  }
  return si_set_result(c, 0, si_known(c, 0)->dtype, &y);
}

int so_det(struct sctx *c) {
  const struct ir_tensor *x = si_known(c, 0);
  if (!x) return 0;
  if (x->rank < 2 || x->dims[x->rank - 1] != x->dims[x->rank - 2]) return si_fail(c, "needs square matrices");
  struct shape y = {.rank = x->rank - 2};
  memcpy(y.d, x->dims, (size_t)y.rank * sizeof *y.d);
  return si_set_result(c, 0, x->dtype, &y);
}

/* ---- recurrent nets ---- */

/* RNN, GRU, LSTM: X [seq, batch, in] (layout 1: [batch, seq, in]), W
 * [dirs, gates * hidden, in]; Y [seq, dirs, batch, hidden] (layout 1:
 * [batch, seq, dirs, hidden]), Y_h and Y_c [dirs, batch, hidden] (layout 1:
 * [batch, dirs, hidden]). */
int so_rnn(struct sctx *c) {
  const struct ir_tensor *x = si_known(c, 0), *w = si_known(c, 1);
  if (!x || !w) return 0;
  const char *op = si_cur(c)->type;
  int gates = !strcmp(op, "LSTM") ? 4 : !strcmp(op, "GRU") ? 3 : 1;
  int layout = (int)ir_attr_int(si_cur(c), "layout", 0);
  if (x->rank != 3 || w->rank != 3) return si_fail(c, "X and W must have rank 3");
  int64_t dirs = w->dims[0], hidden = ir_attr_int(si_cur(c), "hidden_size", w->dims[1] / gates);
  int64_t seq = x->dims[layout ? 1 : 0], batch = x->dims[layout ? 0 : 1];
  if (hidden < 1 || w->dims[1] != gates * hidden) return si_fail(c, "W has %lld rows for hidden_size %lld", (long long)w->dims[1], (long long)hidden);
  struct shape y = layout ? (struct shape){4, {batch, seq, dirs, hidden}} : (struct shape){4, {seq, dirs, batch, hidden}};
  struct shape h = layout ? (struct shape){3, {batch, dirs, hidden}} : (struct shape){3, {dirs, batch, hidden}};
  for (int k = 0; k < si_cur(c)->n_out; k++)
    if (si_set_result(c, k, x->dtype, k ? &h : &y)) return -1;
  return 0;
}

/* NonMaxSuppression: boxes [B, N, 4], scores [B, C, N] -> [capacity, 3]. */
int so_nms(struct sctx *c) {
  const struct ir_tensor *boxes = si_known(c, 0), *scores = si_known(c, 1);
  int64_t max_out = 0;
  int n, r;
  if (!boxes || !scores) return 0;
  if (boxes->rank != 3 || scores->rank != 3) return si_fail(c, "needs boxes [B,N,4] and scores [B,C,N]");
  if (si_has(c, 2) && (r = si_const_ints(c, 2, &max_out, 1, &n)) <= 0) {
    if (r < 0) return r;
    max_out = boxes->dims[1]; /* computed bound: every box */
  }
  if (max_out < 0) max_out = 0;
  if (max_out > boxes->dims[1]) max_out = boxes->dims[1];
  struct shape y = {.rank = 2, .d = {scores->dims[0] * scores->dims[1] * max_out, 3}};
  si_set_dyn(c, 0);
  return si_set_result(c, 0, IR_DT_I64, &y);
}

/* ---- losses ---- */

static int loss_shape(struct sctx *c, const struct ir_tensor *in, const struct ir_tensor *target) {
  const char *red = ir_attr_string(si_cur(c), "reduction", "mean");
  struct shape y = {.rank = 0};
  if (!strcmp(red, "none")) y = si_shape_of(target);
  else if (strcmp(red, "mean") && strcmp(red, "sum")) return si_fail(c, "reduction '%s' is not supported", red);
  return si_set_result(c, 0, in->dtype, &y);
}

int so_nll_loss(struct sctx *c) {
  const struct ir_tensor *in = si_known(c, 0), *target = si_known(c, 1);
  if (!in || !target) return 0;
  return loss_shape(c, in, target);
}

int so_sce_loss(struct sctx *c) {
  const struct ir_tensor *in = si_known(c, 0), *labels = si_known(c, 1);
  if (!in || !labels) return 0;
  if (loss_shape(c, in, labels)) return -1;
  struct shape lp = si_shape_of(in);
  return si_cur(c)->n_out > 1 ? si_set_result(c, 1, in->dtype, &lp) : 0;
}

/* ---- signal processing (opset 17) ---- */

static int const_scalar(struct sctx *c, int k, int64_t *v) {
  int n, r = si_const_ints(c, k, v, 1, &n);
  if (r > 0 && n != 1) return si_fail(c, "operand %d must be one value", k);
  return r;
}

int so_dft(struct sctx *c) {
  const struct ir_tensor *x = si_known(c, 0);
  int64_t len;
  int axis, r;
  if (!x) return 0;
  if (x->rank < 3 || (x->dims[x->rank - 1] != 1 && x->dims[x->rank - 1] != 2))
    return si_fail(c, "the signal must end in a dimension of 1 (real) or 2 (complex)");
  if (si_norm_axis(c, "axis", ir_attr_int(si_cur(c), "axis", 1), x->rank - 1, &axis)) return -1;
  if (axis == 0) return si_fail(c, "axis 0 is the batch");
  len = x->dims[axis];
  if (si_has(c, 1) && (r = const_scalar(c, 1, &len)) <= 0) return r;
  if (len < 1) return si_fail(c, "dft_length must be positive");
  struct shape y = si_shape_of(x);
  y.d[axis] = ir_attr_int(si_cur(c), "onesided", 0) ? len / 2 + 1 : len;
  y.d[x->rank - 1] = 2;
  return si_set_result(c, 0, x->dtype, &y);
}

int so_stft(struct sctx *c) {
  const struct ir_tensor *x = si_known(c, 0), *win = si_has(c, 2) ? si_known(c, 2) : NULL;
  int64_t step, flen = -1;
  int r;
  if (!x || (si_has(c, 2) && !win)) return 0;
  if ((r = const_scalar(c, 1, &step)) <= 0) return r;
  if (si_has(c, 3) && (r = const_scalar(c, 3, &flen)) <= 0) return r;
  if (flen < 0 && win) flen = win->dims[0];
  if (x->rank != 3 || step < 1 || flen < 1 || flen > x->dims[1]) return si_fail(c, "signal [B,L,1|2], frame_step and a frame length up to L");
  int64_t frames = 1 + (x->dims[1] - flen) / step, bins = ir_attr_int(si_cur(c), "onesided", 1) ? flen / 2 + 1 : flen;
  struct shape y = {.rank = 4, .d = {x->dims[0], frames, bins, 2}};
  return si_set_result(c, 0, x->dtype, &y);
}

static enum ir_dtype output_datatype(struct sctx *c, int *ok) {
  int dt = ir_dtype_from_onnx(ir_attr_int(si_cur(c), "output_datatype", 1));
  *ok = dt >= 0;
  return dt >= 0 ? (enum ir_dtype)dt : IR_DT_F32;
}

/* HannWindow, HammingWindow, BlackmanWindow: [size]. */
int so_window_fn(struct sctx *c) {
  int64_t size;
  int r, ok;
  if ((r = const_scalar(c, 0, &size)) <= 0) return r;
  if (size < 0 || size > IR_MAX_DIM) return si_fail(c, "size %lld", (long long)size);
  enum ir_dtype dt = output_datatype(c, &ok);
  if (!ok) return si_fail(c, "output_datatype is not supported");
  struct shape y = {.rank = 1, .d = {size}};
  return si_set_result(c, 0, dt, &y);
}

int so_mel_weight_matrix(struct sctx *c) {
  int64_t bins, len;
  int r, ok;
  if ((r = const_scalar(c, 0, &bins)) <= 0 || (r = const_scalar(c, 1, &len)) <= 0) return r;
  if (bins < 1 || len < 1 || bins > IR_MAX_DIM || len > IR_MAX_DIM) return si_fail(c, "num_mel_bins and dft_length must be positive");
  enum ir_dtype dt = output_datatype(c, &ok);
  if (!ok) return si_fail(c, "output_datatype is not supported");
  struct shape y = {.rank = 2, .d = {len / 2 + 1, bins}};
  return si_set_result(c, 0, dt, &y);
}

/* TfIdfVectorizer: [N] -> [max(ngram_indexes) + 1], [B, N] -> [B, that]. */
int so_tfidf(struct sctx *c) {
  const struct ir_tensor *x = si_known(c, 0);
  const int64_t *ix;
  if (!x) return 0;
  int n = ir_attr_ints(si_cur(c), "ngram_indexes", &ix);
  int64_t size = 0;
  for (int i = 0; i < n; i++) size = ix[i] + 1 > size ? ix[i] + 1 : size;
  if (x->rank != 1 && x->rank != 2) return si_fail(c, "needs an input of rank 1 or 2");
  struct shape y = x->rank == 1 ? (struct shape){1, {size}} : (struct shape){2, {x->dims[0], size}};
  return si_set_result(c, 0, IR_DT_F32, &y);
}
