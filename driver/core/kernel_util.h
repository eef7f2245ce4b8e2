/*
 * kernel_util.h - what the kernel families share (kernel_util.c); not
 * part of the kernel interface.
 *
 * Checks that end a kernel with a message (operand counts, dtypes, axes,
 * output shapes), float32 views of operands of any float type (so a kernel
 * written for float32 accepts f16, bf16 and f64 through one conversion),
 * multidirectional broadcasting as runs along the innermost dimension (so
 * elementwise kernels keep typed, vectorizable inner loops), and the
 * family tables that kernel_registry.c lists.
 */
#ifndef LOOM_KERNEL_UTIL_H
#define LOOM_KERNEL_UTIL_H

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>

#include "core.h"
#include "kernel.h"

/* ---- the families (one kernels_<family>.c each) ---- */

extern const struct loom_kernel loom_kernels_unary[];     /* math on one tensor */
extern const struct loom_kernel loom_kernels_binary[];    /* arithmetic, logic, comparisons */
extern const struct loom_kernel loom_kernels_variadic[];  /* Sum/Mean/Max/Min, Where, Clip */
extern const struct loom_kernel loom_kernels_cast[];      /* Cast, CastLike */
extern const struct loom_kernel loom_kernels_reduce[];    /* Reduce*, ArgMax/ArgMin */
extern const struct loom_kernel loom_kernels_softmax[];   /* Softmax, LogSoftmax, Hardmax, losses */
extern const struct loom_kernel loom_kernels_norm[];      /* normalisations */
extern const struct loom_kernel loom_kernels_shape[];     /* shape-only and constant ops */
extern const struct loom_kernel loom_kernels_move[];      /* Transpose, Slice, Concat, Pad, ... */
extern const struct loom_kernel loom_kernels_index[];     /* Gather*, Scatter*, OneHot, ... */
extern const struct loom_kernel loom_kernels_select[];    /* NonZero, Compress, Unique, TopK, ... */
extern const struct loom_kernel loom_kernels_resize[];    /* Resize, Upsample */
extern const struct loom_kernel loom_kernels_sample[];    /* GridSample, RoiAlign, MaxRoiPool, NMS */
extern const struct loom_kernel loom_kernels_matmul[];    /* MatMul, Gemm and integer forms */
extern const struct loom_kernel loom_kernels_conv[];      /* Conv, ConvTranspose, integer forms */
extern const struct loom_kernel loom_kernels_pool[];      /* pooling, MaxUnpool */
extern const struct loom_kernel loom_kernels_rnn[];       /* RNN, GRU, LSTM */
extern const struct loom_kernel loom_kernels_quant[];     /* (De)QuantizeLinear, Dynamic... */
extern const struct loom_kernel loom_kernels_linalg[];    /* Einsum, Det, CumSum */
extern const struct loom_kernel loom_kernels_signal[];    /* DFT, STFT, windows, mel matrix */
extern const struct loom_kernel loom_kernels_text[];      /* TfIdfVectorizer, StringNormalizer */

/* ---- checks (each returns LOOM_OK or a status with c->msg set) ---- */

#define KFAIL(c, st, ...) loom_fail((c)->msg, (st), __VA_ARGS__)

/* Dtype sets as bit masks. */
#define DTM(t) (1u << (t))
#define DTM_FLOAT (DTM(LOOM_DT_F32) | DTM(LOOM_DT_F64) | DTM(LOOM_DT_F16) | DTM(LOOM_DT_BF16))
#define DTM_SINT (DTM(LOOM_DT_I8) | DTM(LOOM_DT_I16) | DTM(LOOM_DT_I32) | DTM(LOOM_DT_I64))
#define DTM_UINT (DTM(LOOM_DT_U8) | DTM(LOOM_DT_U16) | DTM(LOOM_DT_U32) | DTM(LOOM_DT_U64))
#define DTM_INT (DTM_SINT | DTM_UINT)
#define DTM_NUM (DTM_FLOAT | DTM_INT)
#define DTM_ALL (DTM_NUM | DTM(LOOM_DT_BOOL))
#define DTM_INDEX (DTM(LOOM_DT_I32) | DTM(LOOM_DT_I64))

/* n_in in [min_in, max_in] with the first min_in present; n_out in
 * [min_out, max_out] with out[0] present. */
loom_status loom_k_arity(const struct loom_kcall *c, int min_in, int max_in, int min_out,
                         int max_out);
/* t's dtype is in `mask`; `what` names the operand ("input 0", "scale"). */
loom_status loom_k_dtype(const struct loom_kcall *c, const struct loom_kt *t, const char *what,
                         unsigned mask);
/* a and b have the same dtype. */
loom_status loom_k_same_dtype(const struct loom_kcall *c, const struct loom_kt *a,
                              const struct loom_kt *b, const char *what);
/* axis in [-rank, rank) into [0, rank). */
loom_status loom_k_axis(const struct loom_kcall *c, int64_t axis, int rank, int *out);
/* The output has exactly this shape (the caller's shape inference must
 * agree with the kernel's). */
loom_status loom_k_out_shape(const struct loom_kcall *c, const struct loom_kt *out, int rank,
                             const int64_t *dims);
/* Same shape as `like`. */
loom_status loom_k_out_like(const struct loom_kcall *c, const struct loom_kt *out,
                            const struct loom_kt *like);
/* The rank is in [lo, hi]. */
loom_status loom_k_rank(const struct loom_kcall *c, const struct loom_kt *t, const char *what,
                        int lo, int hi);
/* An INTS attribute of exactly n values (or absent: *v NULL, returns LOOM_OK). */
loom_status loom_k_ints_n(const struct loom_kcall *c, const char *name, int n,
                          const int64_t **v);
/* One of the strings in `options` (NULL-terminated): its index in *which. */
loom_status loom_k_choice(const struct loom_kcall *c, const char *name, const char *dflt,
                          const char *const *options, int *which);

/* "[2,3,4]" into buf. */
const char *loom_k_shape_str(int rank, const int64_t *dims, char buf[96]);

/* ---- tensors ---- */

/* Row-major element strides of t. */
void loom_k_strides(const struct loom_kt *t, int64_t *strides);
/* Product of dims[lo..hi). */
int64_t loom_k_span(const struct loom_kt *t, int lo, int hi);
/* Element i of an integer tensor (int32/int64 indices, shapes, axes). */
static inline int64_t loom_k_idx(const struct loom_kt *t, int64_t i) {
  return t->dtype == LOOM_DT_I64 ? ((const int64_t *)t->data)[i] : loom_kt_get_i64(t, i);
}
/* A scalar (or one-element) operand read as double / int64. */
loom_status loom_k_scalar_f64(const struct loom_kcall *c, const struct loom_kt *t,
                              const char *what, double *v);
loom_status loom_k_scalar_i64(const struct loom_kcall *c, const struct loom_kt *t,
                              const char *what, int64_t *v);

/* malloc'd zeroed scratch of n elements of `size` bytes (NULL with c->msg on
 * overflow or exhaustion; at least one byte, so NULL always means failure). */
void *loom_k_alloc(const struct loom_kcall *c, int64_t n, size_t size);

/* A float32 view of a float operand: t->data itself for f32, else a
 * converted copy in *tmp (free it with free()).  NULL on allocation
 * failure (c->msg set). */
const float *loom_k_in_f32(const struct loom_kcall *c, const struct loom_kt *t, float **tmp);
/* A float32 buffer for a float output: out->data for f32, else scratch in
 * *tmp that loom_k_out_f32_done converts into the output and frees. */
float *loom_k_out_f32(const struct loom_kcall *c, struct loom_kt *out, float **tmp);
void loom_k_out_f32_done(struct loom_kt *out, float *tmp);

/* Float32 views of inputs [0, n_in) (NULL for absent ones; n_in at most
 * LOOM_KVIEW_MAX) and of output 0, taken together and released together:
 * loom_k_views_done converts the output when st is LOOM_OK, frees the
 * copies either way, and returns st. */
#define LOOM_KVIEW_MAX 8
struct loom_kviews {
  const float *in[LOOM_KVIEW_MAX];
  float *tmp_in[LOOM_KVIEW_MAX], *out, *tmp_out;
};
loom_status loom_k_views(const struct loom_kcall *c, int n_in, struct loom_kviews *v);
loom_status loom_k_views_done(const struct loom_kcall *c, struct loom_kviews *v, loom_status st);

/* Copies element i of `src` to element j of `dst` (same dtype). */
static inline void loom_k_copy1(void *dst, int64_t j, const void *src, int64_t i, size_t size) {
  switch (size) {
  case 1: ((uint8_t *)dst)[j] = ((const uint8_t *)src)[i]; break;
  case 2: ((uint16_t *)dst)[j] = ((const uint16_t *)src)[i]; break;
  case 4: ((uint32_t *)dst)[j] = ((const uint32_t *)src)[i]; break;
  default: ((uint64_t *)dst)[j] = ((const uint64_t *)src)[i]; break;
  }
}

/* Stable merge sort of the n indices in idx by cmp (negative: a first);
 * tmp holds n scratch elements. */
typedef int loom_kcmp_fn(const void *ctx, int64_t a, int64_t b);
void loom_k_sort(int64_t *idx, int64_t n, loom_kcmp_fn *cmp, const void *ctx, int64_t *tmp);

/* The index of `op` in a NULL-terminated name table (the families that
 * share one kernel function over several ops); asserts it is there. */
int loom_k_op_index(const char *const *names, const char *op);

/* ---- kernel_window.c: convolution and pooling windows ---- */

struct loom_kwin {
  int nsp; /* spatial dims */
  int64_t in[LOOM_KT_MAX_RANK], out[LOOM_KT_MAX_RANK], out_alt[LOOM_KT_MAX_RANK];
  int64_t k[LOOM_KT_MAX_RANK], stride[LOOM_KT_MAX_RANK], dil[LOOM_KT_MAX_RANK];
  int64_t pad_b[LOOM_KT_MAX_RANK], pad_e[LOOM_KT_MAX_RANK];
};

/* The window of x ([N, C, spatial...]) from the node's attributes; kshape
 * (the weights' spatial dims, or NULL) stands in for kernel_shape.
 * `pooling` honours ceil_mode. */
loom_status loom_k_window(const struct loom_kcall *c, const struct loom_kt *x,
                          const int64_t *kshape, int pooling, struct loom_kwin *w);
/* Checks y is [n, ch, out...] (taking the uncorrected ceil_mode count when
 * that is what the caller inferred). */
loom_status loom_k_window_out(const struct loom_kcall *c, struct loom_kwin *w, const struct loom_kt *y,
                              int64_t n, int64_t ch);

/* ---- kernel_gemm.c ---- */

/* y[m x n] (row stride ldc) = alpha * op(a) op(b) + beta * y, float32,
 * blocked and packed (op = transpose when trans_*; a is m x k after op,
 * with row stride lda before it).  beta 0 ignores y's old contents (NaN
 * included).  LOOM_E_NOMEM (c->msg set) when its scratch is unavailable. */
loom_status loom_k_sgemm(const struct loom_kcall *c, int64_t m, int64_t n, int64_t k, float alpha,
                         const float *a, int64_t lda, int trans_a, const float *b, int64_t ldb,
                         int trans_b, float beta, float *y, int64_t ldc);

/* ---- broadcasting ---- */

/* t (any numeric dtype) broadcast to the shape dims[rank] as float32 into
 * dst (prod(dims) elements); refused when it does not broadcast. */
loom_status loom_k_expand_f32(const struct loom_kcall *c, const struct loom_kt *t, int rank,
                              const int64_t *dims, float *dst);

#define LOOM_KB_MAX 4

/* The output seen as `rank` collapsed dims, with each input's element
 * strides along them (0 where it is broadcast).  The innermost stride of
 * an input is 0 or 1. */
struct loom_kbcast {
  int n, rank;
  int64_t dims[LOOM_KT_MAX_RANK];
  int64_t st[LOOM_KB_MAX][LOOM_KT_MAX_RANK];
};

/* Checks that `out` is the multidirectional broadcast of the n inputs and
 * plans the loop.  An absent input is refused. */
loom_status loom_kbcast_init(const struct loom_kcall *c, struct loom_kbcast *b, int n,
                             const struct loom_kt *const *in, const struct loom_kt *out);

/* One run along the innermost dimension: elements [o, o + len) of the
 * output; input k starts at off[k] and steps b->st[k][rank - 1]. */
typedef void loom_krow_fn(void *ctx, const struct loom_kbcast *b, const int64_t *off, int64_t o,
                          int64_t len);
/* Calls row() for every run of the output, in order. */
void loom_kbcast_each(const struct loom_kbcast *b, loom_krow_fn *row, void *ctx);

/* The multidirectional broadcast shape of two shapes (for kernels that
 * broadcast inside, e.g. MatMul's batch dims); LOOM_E_INVALID when they do
 * not broadcast. */
loom_status loom_k_bcast_dims(const struct loom_kcall *c, int ra, const int64_t *a, int rb,
                              const int64_t *b, int *rank, int64_t *dims);

#endif
