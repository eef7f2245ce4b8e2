/*
 * int8rows.c - the int8 row ops over three stored forms (int8rows.h).
 */
#include "int8rows.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "driver/core/core.h"

void int8_desc(struct loom_file_tensor *t, int rank, int64_t d0, int64_t d1, float scale, int zp) {
  memset(t, 0, sizeof *t);
  t->dtype = t->user_dtype = LOOM_DT_I8;
  t->rank = (uint32_t)rank, t->dims[0] = d0, t->dims[1] = d1;
  t->scale = scale, t->zero_point = zp;
  t->bytes = loom_file_tensor_bytes(t);
}

/* The first case's tensors, kept for the caller's refusal tests. */
static struct loom_file_tensor keep_x, keep_y;
static uint8_t *keep_stored;
static int8_t *keep_out;

void int8_rows_layouts(uint32_t kind, const uint8_t *params, uint64_t param_size, int64_t n, int64_t c, float sx,
                       int zx, float sy, int zy, const int8_t *x, const int8_t *want, struct loom_hostop_args *a) {
  int8_rows_layouts_masked(kind, params, param_size, n, c, sx, zx, sy, zy, x, want, NULL, a);
}

void int8_rows_layouts_masked(uint32_t kind, const uint8_t *params, uint64_t param_size, int64_t n, int64_t c, float sx,
                              int zx, float sy, int zy, const int8_t *x, const int8_t *want,
                              const struct loom_hostop_tensor *mask, struct loom_hostop_args *a) {
  char msg[LOOM_MSG_MAX];
  size_t bytes = (size_t)(n * c);
  int8_t *got = malloc(bytes);
  /* a blocked [n, c] input into a plain [3, n / 3, c] output */
  int8_desc(&keep_x, 2, n, c, sx, zx);
  keep_x.layout = LOOM_LAYOUT_NC, keep_x.layout_block = 16, keep_x.bytes = loom_file_tensor_bytes(&keep_x);
  int8_desc(&keep_y, 3, 3, n / 3, sy, zy);
  keep_y.dims[2] = c, keep_y.bytes = loom_file_tensor_bytes(&keep_y);
  free(keep_stored), free(keep_out);
  keep_stored = calloc(1, keep_x.bytes), keep_out = malloc(bytes);
  assert_int_equal(loom_tensor_write(&keep_x, keep_stored, LOOM_DT_I8, x, msg), LOOM_OK);
  *a = (struct loom_hostop_args){.in = {{&keep_x, keep_stored}}, .out = {{&keep_y, keep_out}}, .n_in = 1, .n_out = 1,
                                 .params = params, .param_size = param_size};
  if (mask) a->in[1] = *mask, a->n_in = 2;
  assert_int_equal(loom_hostop_run(kind, a, msg), LOOM_OK);
  assert_memory_equal(keep_out, want, bytes);

  /* a plain input into a blocked output, in place */
  struct loom_file_tensor xp = keep_x, yb, xw;
  xp.layout = LOOM_LAYOUT_PLAIN, xp.layout_block = 0, xp.bytes = loom_file_tensor_bytes(&xp);
  int8_desc(&yb, 2, n, c, sy, zy);
  yb.layout = LOOM_LAYOUT_NC, yb.layout_block = 16, yb.bytes = loom_file_tensor_bytes(&yb);
  int64_t pitch = (c + 15) / 16 * 16;
  uint8_t *yst = malloc(yb.bytes);
  memset(yst, 0x55, yb.bytes);
  struct loom_hostop_args b = *a;
  b.in[0] = (struct loom_hostop_tensor){&xp, (void *)x}, b.out[0] = (struct loom_hostop_tensor){&yb, yst};
  assert_int_equal(loom_hostop_run(kind, &b, msg), LOOM_OK);
  assert_int_equal(loom_tensor_read(&yb, yst, LOOM_DT_I8, got, msg), LOOM_OK);
  assert_memory_equal(got, want, bytes);
  for (int64_t r = 0; r < n; r++)
    for (int64_t k = c; k < pitch; k++) assert_int_equal((int8_t)yst[r * pitch + k], zy);

  /* a [1, n, 1, c] NCHWc input, rows strided, into a plain output */
  memset(&xw, 0, sizeof xw);
  xw.dtype = xw.user_dtype = LOOM_DT_I8, xw.rank = 4, xw.scale = sx, xw.zero_point = zx;
  xw.dims[0] = 1, xw.dims[1] = n, xw.dims[2] = 1, xw.dims[3] = c;
  xw.layout = LOOM_LAYOUT_NCHWC, xw.layout_block = 16, xw.bytes = loom_file_tensor_bytes(&xw);
  uint8_t *xst = calloc(1, xw.bytes);
  assert_int_equal(loom_tensor_write(&xw, xst, LOOM_DT_I8, x, msg), LOOM_OK);
  struct loom_hostop_args d = *a;
  d.in[0] = (struct loom_hostop_tensor){&xw, xst}, d.out[0] = (struct loom_hostop_tensor){&keep_y, got};
  memset(got, 0, bytes);
  assert_int_equal(loom_hostop_run(kind, &d, msg), LOOM_OK);
  assert_memory_equal(got, want, bytes);
  free(yst);
  free(xst);
  free(got);
}
