/*
 * hostops_qlayernorm.c - QLAYERNORM (hostops_qlayernorm.h): checks the
 * tensors and parameters, reads the per-channel constants out of the
 * parameter bytes (which need not be aligned), and runs
 * loom_ilayernorm_rows over the rows of the last axis, in place in the
 * stored bytes when both tensors keep each row contiguous (plain, or [N, C]
 * blocked as the jobs store a [S, D] activation), else through a plain copy
 * (tensor.c).  The integer arithmetic itself lives in intapprox.c, so the
 * reference interpreter's int8 LayerNormalization (sw_compiler/ir_eval_ref.c)
 * is the same code.
 */
#include "driver/core/hostops_qlayernorm.h"

#include <stdlib.h>

#include "driver/core/core.h"

void loom_qlayernorm_params(const struct loom_ilayernorm *l, uint8_t *out) {
  const int32_t head[LOOM_QLAYERNORM_HEADER] = {
      [LOOM_QLAYERNORM_LEN] = (int32_t)l->len,
      [LOOM_QLAYERNORM_FRAC] = l->frac,
      [LOOM_QLAYERNORM_EPS_LO] = (int32_t)(uint32_t)((uint64_t)l->eps & 0xffffffffu),
      [LOOM_QLAYERNORM_EPS_HI] = (int32_t)((uint64_t)l->eps >> 32), /* eps < 2^62 */
      [LOOM_QLAYERNORM_GSHIFT] = l->gshift,
  };
  loom_hostop_params_put(head, LOOM_QLAYERNORM_HEADER, out);
  loom_hostop_params_put(l->gamma, (int)l->len, out + 4 * LOOM_QLAYERNORM_HEADER);
  loom_hostop_params_put(l->beta, (int)l->len, out + 4 * (LOOM_QLAYERNORM_HEADER + l->len));
}

/* The tensors and parameters as the op needs them: *l (its gamma and
 * beta in *consts, malloc'd, 2 N values) and the row count. */
static loom_status check(const struct loom_hostop_args *a, struct loom_ilayernorm *l, int32_t **consts,
                         int64_t *rows, char msg[LOOM_MSG_MAX]) {
  if (a->n_in != 1 || a->n_out != 1) return loom_fail(msg, LOOM_E_INVALID, "takes 1 input and 1 output");
  const struct loom_file_tensor *x = a->in[0].desc, *y = a->out[0].desc;
  if (x->dtype != LOOM_DT_I8 || y->dtype != LOOM_DT_I8 || x->scale == 0 || y->scale == 0 || !x->rank || !y->rank)
    return loom_fail(msg, LOOM_E_INVALID, "needs quantized int8 tensors of rank 1 or more");
  uint64_t n = loom_tensor_elems(x);
  int64_t len = x->dims[x->rank - 1];
  if (n != loom_tensor_elems(y) || len != y->dims[y->rank - 1])
    return loom_fail(msg, LOOM_E_INVALID, "input and output differ in element count or last dimension");
  if (len < 1 || len > LOOM_ILAYERNORM_MAX_ROW)
    return loom_fail(msg, LOOM_E_INVALID, "rows of %lld values (1 to %lld)", (long long)len,
                     (long long)LOOM_ILAYERNORM_MAX_ROW);
  *rows = (int64_t)(n / (uint64_t)len);
  if (!a->params || a->param_size < 4 * (uint64_t)LOOM_QLAYERNORM_PARAM_COUNT(len))
    return loom_fail(msg, LOOM_E_INVALID, "needs %lld int32 parameters for rows of %lld",
                     (long long)LOOM_QLAYERNORM_PARAM_COUNT(len), (long long)len);
  if (loom_hostop_param(a, LOOM_QLAYERNORM_LEN, 0) != len)
    return loom_fail(msg, LOOM_E_INVALID, "parameters for rows of %d values, the tensors' rows have %lld",
                     loom_hostop_param(a, LOOM_QLAYERNORM_LEN, 0), (long long)len);
  int32_t *c = malloc(2 * (size_t)len * sizeof *c);
  if (!c) return loom_fail(msg, LOOM_E_NOMEM, "out of memory");
  for (int64_t i = 0; i < 2 * len; i++) c[i] = loom_hostop_param(a, LOOM_QLAYERNORM_HEADER + (int)i, 0);
  uint64_t eps = (uint64_t)(uint32_t)loom_hostop_param(a, LOOM_QLAYERNORM_EPS_LO, 0) |
                 (uint64_t)(uint32_t)loom_hostop_param(a, LOOM_QLAYERNORM_EPS_HI, 0) << 32;
  *l = (struct loom_ilayernorm){.len = len, .frac = loom_hostop_param(a, LOOM_QLAYERNORM_FRAC, 0),
                                .eps = (int64_t)eps, .gshift = loom_hostop_param(a, LOOM_QLAYERNORM_GSHIFT, 0),
                                .in_zp = x->zero_point, .out_zp = y->zero_point, .gamma = c, .beta = c + len};
  *consts = c;
  const char *why = loom_ilayernorm_check(l);
  return why ? loom_fail(msg, LOOM_E_INVALID, "parameters: %s", why) : LOOM_OK;
}

struct ln_rows {
  const struct loom_ilayernorm *l;
  int64_t rows;
};

static void run_rows(const void *ctx, const int8_t *x, int64_t px, int8_t *y, int64_t py) {
  const struct ln_rows *r = ctx;
  loom_ilayernorm_rows(r->l, x, px, y, py, r->rows);
}

loom_status loom_hostop_qlayernorm(const struct loom_hostop_args *a, char msg[LOOM_MSG_MAX]) {
  struct loom_ilayernorm l;
  int32_t *consts = NULL;
  int64_t rows = 0;
  loom_status st = check(a, &l, &consts, &rows, msg);
  if (st == LOOM_OK && rows) {
    struct ln_rows r = {&l, rows};
    st = loom_hostop_int8_rows(a, rows, l.len, l.out_zp, run_rows, &r, msg);
  }
  free(consts);
  return st;
}
