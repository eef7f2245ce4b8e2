/*
 * hostops_qsoftmax.c - QSOFTMAX (hostops_qsoftmax.h): checks the tensors
 * and parameters, reads the int8 codes in plain C order through tensor.c
 * (any stored layout), runs loom_isoftmax_rows over the rows of the last
 * axis (one table for the tensor), and writes the codes back in the
 * output's layout.  When both tensors keep each row contiguous (plain, or
 * [N, C] blocked as attention's jobs store scores and read P), the rows
 * are computed in place in the stored bytes instead: the conversion would
 * cost more than the softmax.  The integer arithmetic itself lives in intapprox.c, so
 * the reference interpreter's int8 Softmax (sw_compiler/ir_eval_ref.c) is
 * the same code.
 */
#include "driver/core/hostops_qsoftmax.h"

#include <stdlib.h>

#include "driver/core/core.h"

int loom_qsoftmax_params(const struct loom_isoftmax *s, int64_t group, uint8_t out[4 * LOOM_QSOFTMAX_PARAM_COUNT]) {
  const int32_t v[LOOM_QSOFTMAX_PARAM_COUNT] = { /* the low 32 bits: loom_isoftmax_check bounds them */
      [LOOM_QSOFTMAX_UP] = (int32_t)s->e.up,     [LOOM_QSOFTMAX_Q_LN2] = (int32_t)s->e.q_ln2,
      [LOOM_QSOFTMAX_Q_B] = (int32_t)s->e.q_b,   [LOOM_QSOFTMAX_Q_C] = (int32_t)s->e.q_c,
      [LOOM_QSOFTMAX_MULT] = (int32_t)s->mult,   [LOOM_QSOFTMAX_SHIFT] = s->shift,
      [LOOM_QSOFTMAX_MASK_MULT] = (int32_t)s->mask_mult, [LOOM_QSOFTMAX_MASK_SHIFT] = s->mask_shift,
      [LOOM_QSOFTMAX_MASK_GROUP] = (int32_t)group,
  };
  int n = s->mask_mult ? LOOM_QSOFTMAX_PARAM_COUNT : LOOM_QSOFTMAX_PARAMS_UNMASKED;
  loom_hostop_params_put(v, n, out);
  return 4 * n;
}

/* The tensors and parameters as the op needs them: *s, the row length and
 * the row count; with a mask (two inputs) its constants and *group. */
static loom_status check(const struct loom_hostop_args *a, struct loom_isoftmax *s, int64_t *len, int64_t *rows,
                         int64_t *group, char msg[LOOM_MSG_MAX]) {
  if (a->n_in < 1 || a->n_in > 2 || a->n_out != 1)
    return loom_fail(msg, LOOM_E_INVALID, "takes 1 input (2 with a mask) and 1 output");
  const struct loom_file_tensor *x = a->in[0].desc, *y = a->out[0].desc;
  if (x->dtype != LOOM_DT_I8 || y->dtype != LOOM_DT_I8 || x->scale == 0 || y->scale == 0 || !x->rank || !y->rank)
    return loom_fail(msg, LOOM_E_INVALID, "needs quantized int8 tensors of rank 1 or more");
  uint64_t n = loom_tensor_elems(x);
  *len = x->dims[x->rank - 1];
  if (n != loom_tensor_elems(y) || *len != y->dims[y->rank - 1])
    return loom_fail(msg, LOOM_E_INVALID, "input and output differ in element count or last dimension");
  if (*len > LOOM_ISOFTMAX_MAX_ROW)
    return loom_fail(msg, LOOM_E_INVALID, "rows of %lld values (at most %lld)", (long long)*len,
                     (long long)LOOM_ISOFTMAX_MAX_ROW);
  *rows = *len ? (int64_t)(n / (uint64_t)*len) : 0;
  int count = a->n_in == 2 ? LOOM_QSOFTMAX_PARAM_COUNT : LOOM_QSOFTMAX_PARAMS_UNMASKED;
  if (!a->params || a->param_size < 4 * (uint64_t)count)
    return loom_fail(msg, LOOM_E_INVALID, "needs %d int32 parameters%s", count,
                     a->n_in == 2 ? " with a second input (the mask)" : "");
  int32_t up = loom_hostop_param(a, LOOM_QSOFTMAX_UP, 0);
  *s = (struct loom_isoftmax){.e = {.up = up < 0 ? 99u : (uint32_t)up,
                                    .q_ln2 = loom_hostop_param(a, LOOM_QSOFTMAX_Q_LN2, 0),
                                    .q_b = loom_hostop_param(a, LOOM_QSOFTMAX_Q_B, 0),
                                    .q_c = loom_hostop_param(a, LOOM_QSOFTMAX_Q_C, 0)},
                              .mult = loom_hostop_param(a, LOOM_QSOFTMAX_MULT, 0),
                              .shift = loom_hostop_param(a, LOOM_QSOFTMAX_SHIFT, 0),
                              .out_zp = y->zero_point};
  if (a->n_in == 2) {
    s->mask_mult = loom_hostop_param(a, LOOM_QSOFTMAX_MASK_MULT, 0);
    s->mask_shift = loom_hostop_param(a, LOOM_QSOFTMAX_MASK_SHIFT, 0);
    *group = loom_hostop_param(a, LOOM_QSOFTMAX_MASK_GROUP, 0);
    if (!s->mask_mult) return loom_fail(msg, LOOM_E_INVALID, "parameters: the mask's multiplier is 0");
  }
  const char *why = loom_isoftmax_check(s);
  if (why) return loom_fail(msg, LOOM_E_INVALID, "parameters: %s", why);
  if (a->n_in < 2) return LOOM_OK;
  const struct loom_file_tensor *mk = a->in[1].desc;
  uint64_t mn = loom_tensor_elems(mk);
  if (mk->dtype != LOOM_DT_F32 || !mk->rank || mk->dims[mk->rank - 1] != *len || !mn)
    return loom_fail(msg, LOOM_E_INVALID, "the mask is not a float32 tensor whose last dimension is the scores' (%lld)",
                     (long long)*len);
  int64_t mrows = (int64_t)(mn / (uint64_t)*len);
  if (*group < 1 || *rows % *group || *rows / *group % mrows)
    return loom_fail(msg, LOOM_E_INVALID, "a mask of %lld rows does not broadcast over %lld rows in groups of %lld",
                     (long long)mrows, (long long)*rows, (long long)*group);
  return LOOM_OK;
}

/* What one call runs over its rows: the parameters, and the mask's
 * offsets (off, mask_rows rows broadcast in groups of group) or none. */
struct sm_rows {
  const struct loom_isoftmax *s;
  int64_t rows, len, mask_rows, group;
  const int32_t *off;
};

/* The rows of x into y (in the stored bytes, pitches px, py; or plain). */
static void rows_of(const void *ctx, const int8_t *x, int64_t px, int8_t *y, int64_t py) {
  const struct sm_rows *r = ctx;
  if (r->off) loom_isoftmax_masked_rows(r->s, x, px, y, py, r->rows, r->len, r->off, r->mask_rows, r->group);
  else loom_isoftmax_rows(r->s, x, px, y, py, r->rows, r->len);
}

/* The mask's offsets (*off, malloc'd, *mask_rows rows of len). */
static loom_status mask_offsets(const struct loom_hostop_args *a, const struct loom_isoftmax *s, int64_t len,
                                int32_t **off, int64_t *mask_rows, char msg[LOOM_MSG_MAX]) {
  const struct loom_file_tensor *mk = a->in[1].desc;
  uint64_t n = loom_tensor_elems(mk);
  float *f = malloc(n * sizeof *f);
  *off = malloc(n * sizeof **off);
  loom_status st = f && *off ? loom_tensor_read(mk, a->in[1].data, LOOM_DT_F32, f, msg)
                             : loom_fail(msg, LOOM_E_NOMEM, "out of memory");
  for (uint64_t i = 0; st == LOOM_OK && i < n; i++) (*off)[i] = loom_isoftmax_offset(s, f[i]);
  *mask_rows = (int64_t)(n / (uint64_t)len);
  free(f);
  return st;
}

loom_status loom_hostop_qsoftmax(const struct loom_hostop_args *a, char msg[LOOM_MSG_MAX]) {
  struct loom_isoftmax s;
  int64_t len = 0, rows = 0, group = 1, mask_rows = 1;
  int32_t *off = NULL;
  loom_status st = check(a, &s, &len, &rows, &group, msg);
  if (st != LOOM_OK || !rows) return st;
  if (a->n_in == 2) st = mask_offsets(a, &s, len, &off, &mask_rows, msg);
  if (st == LOOM_OK) {
    struct sm_rows r = {&s, rows, len, mask_rows, group, off};
    st = loom_hostop_int8_rows(a, rows, len, s.out_zp, rows_of, &r, msg);
  }
  free(off);
  return st;
}
