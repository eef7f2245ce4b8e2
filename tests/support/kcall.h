/*
 * kcall.h - small helpers for the host-kernel unit tests
 * (tests/unit/test_kernels_*.c): tensors over caller arrays, attributes,
 * and one-line kernel calls that keep the refusal message.
 */
#ifndef LOOM_TEST_KCALL_H
#define LOOM_TEST_KCALL_H

#include <string.h>

#include "driver/core/kernel.h"

static inline struct loom_kt kt_dims(loom_dtype dt, void *data, int rank, const int64_t *dims) {
  struct loom_kt t = {dt, rank, {0}, data};
  if (rank) memcpy(t.dims, dims, (size_t)rank * sizeof dims[0]);
  return t;
}

/* KT(dtype, data, dims...): a tensor over `data`; KT0 a scalar. */
#define KT(dt, data, ...)                                                                    \
  kt_dims((dt), (data), (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)),          \
          (int64_t[]){__VA_ARGS__})
#define KT0(dt, data) kt_dims((dt), (data), 0, NULL)
#define ABSENT kt_dims(LOOM_DT_INVALID, NULL, 0, NULL)

static inline struct loom_kattr attr_i(const char *name, int64_t v) {
  struct loom_kattr a = {.name = name, .kind = LOOM_KATTR_INT, .i = v};
  return a;
}
static inline struct loom_kattr attr_f(const char *name, float v) {
  struct loom_kattr a = {.name = name, .kind = LOOM_KATTR_FLOAT, .f = v};
  return a;
}
static inline struct loom_kattr attr_s(const char *name, const char *v) {
  struct loom_kattr a = {.name = name, .kind = LOOM_KATTR_STRING, .s = v};
  return a;
}
static inline struct loom_kattr attr_ints(const char *name, const int64_t *v, int n) {
  struct loom_kattr a = {.name = name, .kind = LOOM_KATTR_INTS, .n = n, .ints = v};
  return a;
}

/* The last refusal's message. */
static char kmsg[LOOM_MSG_MAX];

static inline loom_status kcall(const char *op, int opset, struct loom_kt *in, int n_in, struct loom_kt *out,
                                int n_out, const struct loom_kattr *attrs, int n_attrs) {
  struct loom_kcall c = {op, opset, in, n_in, out, n_out, attrs, n_attrs, kmsg};
  return loom_kernel_run(&c);
}

#endif
