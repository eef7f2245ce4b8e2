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

void loom_qsoftmax_params(const struct loom_isoftmax *s, uint8_t out[4 * LOOM_QSOFTMAX_PARAM_COUNT]) {
  const int32_t v[LOOM_QSOFTMAX_PARAM_COUNT] = { /* the low 32 bits: loom_isoftmax_check bounds them */
      [LOOM_QSOFTMAX_UP] = (int32_t)s->e.up,     [LOOM_QSOFTMAX_Q_LN2] = (int32_t)s->e.q_ln2,
      [LOOM_QSOFTMAX_Q_B] = (int32_t)s->e.q_b,   [LOOM_QSOFTMAX_Q_C] = (int32_t)s->e.q_c,
      [LOOM_QSOFTMAX_MULT] = (int32_t)s->mult,   [LOOM_QSOFTMAX_SHIFT] = s->shift,
  };
  loom_hostop_params_put(v, LOOM_QSOFTMAX_PARAM_COUNT, out);
}

/* The tensors and parameters as the op needs them: *s, the row length and
 * the row count. */
static loom_status check(const struct loom_hostop_args *a, struct loom_isoftmax *s, int64_t *len, int64_t *rows,
                         char msg[LOOM_MSG_MAX]) {
  if (a->n_in != 1 || a->n_out != 1) return loom_fail(msg, LOOM_E_INVALID, "takes 1 input and 1 output");
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
  if (!a->params || a->param_size < 4 * LOOM_QSOFTMAX_PARAM_COUNT)
    return loom_fail(msg, LOOM_E_INVALID, "needs %d int32 parameters", LOOM_QSOFTMAX_PARAM_COUNT);
  int32_t up = loom_hostop_param(a, LOOM_QSOFTMAX_UP, 0);
  s->e = (struct loom_iexp){.up = up < 0 ? 99u : (uint32_t)up,
                            .q_ln2 = loom_hostop_param(a, LOOM_QSOFTMAX_Q_LN2, 0),
                            .q_b = loom_hostop_param(a, LOOM_QSOFTMAX_Q_B, 0),
                            .q_c = loom_hostop_param(a, LOOM_QSOFTMAX_Q_C, 0)};
  s->mult = loom_hostop_param(a, LOOM_QSOFTMAX_MULT, 0);
  s->shift = loom_hostop_param(a, LOOM_QSOFTMAX_SHIFT, 0);
  s->out_zp = y->zero_point;
  const char *why = loom_isoftmax_check(s);
  return why ? loom_fail(msg, LOOM_E_INVALID, "parameters: %s", why) : LOOM_OK;
}

loom_status loom_hostop_qsoftmax(const struct loom_hostop_args *a, char msg[LOOM_MSG_MAX]) {
  struct loom_isoftmax s;
  int64_t len = 0, rows = 0;
  loom_status st = check(a, &s, &len, &rows, msg);
  if (st != LOOM_OK || !rows) return st;
  const struct loom_file_tensor *tx = a->in[0].desc, *ty = a->out[0].desc;
  int64_t px = loom_hostop_row_pitch(tx, rows), py = loom_hostop_row_pitch(ty, rows);
  if (px && py) { /* in place in the stored forms: no conversion */
    int8_t *y = a->out[0].data;
    loom_isoftmax_rows(&s, a->in[0].data, px, y, py, rows, len);
    for (int64_t r = 0; r < rows; r++)
      for (int64_t c = len; c < py; c++) y[r * py + c] = (int8_t)s.out_zp; /* padding lanes */
    return LOOM_OK;
  }
  uint64_t n = loom_tensor_elems(tx);
  int8_t *x = malloc(n);
  if (!x) return loom_fail(msg, LOOM_E_NOMEM, "out of memory");
  st = loom_tensor_read(tx, a->in[0].data, LOOM_DT_I8, x, msg);
  if (st == LOOM_OK) loom_isoftmax_rows(&s, x, len, x, len, rows, len);
  if (st == LOOM_OK) st = loom_tensor_write(ty, a->out[0].data, LOOM_DT_I8, x, msg);
  free(x);
  return st;
}
