/*
 * shape_util.c - the helpers every shape inference file uses
 * (shape_infer.h): operand access, result recording with the check against
 * declared types, attribute reading, broadcasting and convolution windows.
 */
#include "sw_compiler/shape_infer.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

struct ir_node *si_cur(struct sctx *c) { return &c->g->nodes[c->node]; }

/* Operand k, or NULL when absent or of unknown type or shape. */
const struct ir_tensor *si_known(struct sctx *c, int k) {
  struct ir_node *n = si_cur(c);
  if (k >= n->n_in || n->in[k] < 0) return NULL;
  const struct ir_tensor *t = &c->g->tensors[n->in[k]];
  return ir_shape_known(t) ? t : NULL;
}

struct shape si_shape_of(const struct ir_tensor *t) {
  struct shape s = {.rank = t->rank};
  memcpy(s.d, t->dims, sizeof s.d);
  return s;
}

/* ---- recording results ---- */

static void si_fmt_shape(char *buf, size_t len, enum ir_dtype dt, int rank, const int64_t *d) {
  int o = snprintf(buf, len, "%s[", ir_dtype_name(dt));
  for (int i = 0; i < rank && o < (int)len; i++)
    o += snprintf(buf + o, len - (size_t)o, i ? ",%lld" : "%lld", (long long)d[i]);
  if (o < (int)len) snprintf(buf + o, len - (size_t)o, "]");
}

/* A data-dependent result (t->dyn) may be declared with its real, smaller
 * dims: only its type and rank are checked. */
static int si_conflicts(const struct ir_tensor *t, enum ir_dtype dt, const struct shape *s) {
  if (t->dtype != IR_DT_UNDEF && t->dtype != dt) return 1;
  if (t->rank < 0) return 0;
  if (t->rank != s->rank) return 1;
  if (t->dyn) return 0;
  for (int i = 0; i < s->rank; i++)
    if (t->dims[i] >= 0 && t->dims[i] != s->d[i]) return 1;
  return 0;
}

int si_set_result(struct sctx *c, int k, enum ir_dtype dt, const struct shape *s) {
  struct ir_tensor *t = &c->g->tensors[si_cur(c)->out[k]];
  if (ir_numel_checked(s->rank, s->d) < 0) return ir_fail(c->err, c->g, c->node, "result %%%s would be too large", t->name);
  if (si_conflicts(t, dt, s)) {
    char a[160], b[160];
    si_fmt_shape(a, sizeof a, dt, s->rank, s->d);
    si_fmt_shape(b, sizeof b, t->dtype, t->rank, t->dims);
    return ir_fail(c->err, c->g, c->node, "result %%%s is %s, but declared as %s", t->name, a, b);
  }
  t->dtype = dt;
  t->rank = s->rank;
  memcpy(t->dims, s->d, sizeof t->dims);
  return 0;
}

int si_same_as_input(struct sctx *c, const struct ir_tensor *x) {
  struct shape s = si_shape_of(x);
  return si_set_result(c, 0, x->dtype, &s);
}

/* ---- attribute helpers ---- */

/* Reads an int list attribute of exactly `want` entries, or fills `dflt`. */
int si_ints_attr(struct sctx *c, const char *name, int want, int64_t dflt, int64_t *out) {
  const struct ir_attr *a = ir_attr_find(si_cur(c), name);
  if (!a) {
    for (int i = 0; i < want; i++) out[i] = dflt;
    return 0;
  }
  if (a->kind != IR_ATTR_INTS || a->n != want)
    return ir_fail(c->err, c->g, c->node, "attribute '%s' needs %d values", name, want);
  memcpy(out, a->ints, (size_t)want * sizeof *out);
  return 0;
}

/* An axis attribute in [-rank, rank), normalized to [0, rank). */
int si_axis_attr(struct sctx *c, const char *name, int64_t dflt, int rank, int *axis) {
  int64_t a = ir_attr_int(si_cur(c), name, dflt);
  if (a < -rank || a >= rank) return ir_fail(c->err, c->g, c->node, "%s %lld is out of range for rank %d", name, (long long)a, rank);
  *axis = (int)(a < 0 ? a + rank : a);
  return 0;
}

/* ---- windows: Conv and pooling ---- */


int64_t si_div_ceil(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* Turns auto_pad into explicit pads (kept in the node from then on). */
static int si_resolve_auto_pad(struct sctx *c, const struct shape *x, struct window *w) {
  const struct ir_attr *a = ir_attr_find(si_cur(c), "auto_pad");
  if (!a) return 0;
  const char *mode = a->kind == IR_ATTR_STRING ? a->s : "";
  int upper = !strcmp(mode, "SAME_UPPER"), lower = !strcmp(mode, "SAME_LOWER");
  if (!upper && !lower && strcmp(mode, "VALID") && strcmp(mode, "NOTSET"))
    return ir_fail(c->err, c->g, c->node, "auto_pad '%s' is not supported", mode);
  for (int i = 0; i < w->nsp && (upper || lower); i++) {
    int64_t in = x->d[2 + i], out = si_div_ceil(in, w->s[i]);
    int64_t total = (out - 1) * w->s[i] + (w->k[i] - 1) * w->d[i] + 1 - in;
    if (total < 0) total = 0;
    w->pads[i] = upper ? total / 2 : total - total / 2;
    w->pads[i + w->nsp] = total - w->pads[i];
  }
  if (strcmp(mode, "NOTSET")) ir_attr_set_ints(c->g, c->node, "pads", 2 * w->nsp, w->pads);
  ir_attr_remove(si_cur(c), "auto_pad");
  return 0;
}

int si_read_window(struct sctx *c, const struct shape *x, struct window *w) {
  w->nsp = x->rank - 2;
  if (si_ints_attr(c, "kernel_shape", w->nsp, 1, w->k) || si_ints_attr(c, "strides", w->nsp, 1, w->s) ||
      si_ints_attr(c, "dilations", w->nsp, 1, w->d) || si_ints_attr(c, "pads", 2 * w->nsp, 0, w->pads))
    return -1;
  for (int i = 0; i < w->nsp; i++) {
    if (w->k[i] < 1 || w->s[i] < 1 || w->d[i] < 1 || w->k[i] > IR_MAX_DIM || w->s[i] > IR_MAX_DIM ||
        w->d[i] > IR_MAX_DIM)
      return ir_fail(c->err, c->g, c->node, "kernel, strides and dilations must be positive and at most %lld", (long long)IR_MAX_DIM);
    if (w->pads[i] < 0 || w->pads[i + w->nsp] < 0 || w->pads[i] > IR_MAX_DIM || w->pads[i + w->nsp] > IR_MAX_DIM)
      return ir_fail(c->err, c->g, c->node, "pads must be in [0, %lld]", (long long)IR_MAX_DIM);
  }
  w->ceil_mode = (int)ir_attr_int(si_cur(c), "ceil_mode", 0);
  return si_resolve_auto_pad(c, x, w);
}

/* Spatial output dims of a window op; out->d[0..1] are set by the caller. */
int si_window_out(struct sctx *c, const struct shape *x, const struct window *w, struct shape *out) {
  out->rank = x->rank;
  for (int i = 0; i < w->nsp; i++) {
    int64_t in = x->d[2 + i] + w->pads[i] + w->pads[i + w->nsp];
    int64_t ext = (w->k[i] - 1) * w->d[i] + 1;
    if (in < ext) return ir_fail(c->err, c->g, c->node, "window %lld is larger than the padded input %lld", (long long)ext, (long long)in);
    int64_t o = w->ceil_mode ? si_div_ceil(in - ext, w->s[i]) + 1 : (in - ext) / w->s[i] + 1;
    /* ceil_mode: the last window must start inside the input or left pad. */
    if (w->ceil_mode && (o - 1) * w->s[i] >= x->d[2 + i] + w->pads[i]) o--;
    out->d[2 + i] = o;
  }
  return 0;
}

/* ---- broadcasting and matrix products ---- */

int si_broadcast(struct sctx *c, const struct shape *a, const struct shape *b, struct shape *out) {
  out->rank = a->rank > b->rank ? a->rank : b->rank;
  for (int i = 0; i < out->rank; i++) {
    int ia = i - (out->rank - a->rank), ib = i - (out->rank - b->rank);
    int64_t da = ia >= 0 ? a->d[ia] : 1, db = ib >= 0 ? b->d[ib] : 1;
    if (da != db && da != 1 && db != 1) return ir_fail(c->err, c->g, c->node, "shapes do not broadcast (dim %lld vs %lld)", (long long)da, (long long)db);
    out->d[i] = da == 1 ? db : da;
  }
  return 0;
}


const struct ir_tensor *si_const(struct sctx *c, int k) {
  const struct ir_tensor *t = si_known(c, k);
  return t && t->data ? t : NULL;
}

int si_has(struct sctx *c, int k) {
  struct ir_node *n = si_cur(c);
  return k < n->n_in && n->in[k] >= 0;
}

void si_set_dyn(struct sctx *c, int k) { c->g->tensors[si_cur(c)->out[k]].dyn = 1; }

int si_norm_axis(struct sctx *c, const char *what, int64_t v, int rank, int *axis) {
  if (v < -rank || v >= rank) return si_fail(c, "%s %lld is out of range for rank %d", what, (long long)v, rank);
  *axis = (int)(v < 0 ? v + rank : v);
  return 0;
}

int si_const_ints(struct sctx *c, int k, int64_t *v, int max, int *n) {
  const struct ir_tensor *t = si_const(c, k);
  if (!t) return 0;
  int64_t cnt = ir_tensor_numel(t);
  if (ir_dtype_is_float(t->dtype) || t->rank > 1 || cnt > max)
    return si_fail(c, "operand %d %%%s must be an integer list of at most %d values", k, t->name, max);
  for (int64_t i = 0; i < cnt; i++) v[i] = ir_load_i64(t->dtype, t->data, i);
  *n = (int)cnt;
  return 1;
}

int si_const_f64(struct sctx *c, int k, double *v, int max, int *n) {
  const struct ir_tensor *t = si_const(c, k);
  if (!t) return 0;
  int64_t cnt = ir_tensor_numel(t);
  if (t->rank > 1 || cnt > max) return si_fail(c, "operand %d %%%s must be a list of at most %d values", k, t->name, max);
  for (int64_t i = 0; i < cnt; i++) v[i] = ir_load_f64(t->dtype, t->data, i);
  *n = (int)cnt;
  return 1;
}

int si_fail(struct sctx *c, const char *fmt, ...) {
  char what[800];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  return ir_fail(c->err, c->g, c->node, "%s", what);
}
