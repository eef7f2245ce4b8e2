/*
 * kernel.h - host kernels: the portable C implementation of every standard
 * ONNX operator that runs on the host CPU.
 *
 * One implementation serves every side of Loom: the runtime runs a host step
 * of a .loom through it (when no native code runs the step), and the
 * compiler's reference interpreter uses it to evaluate the float graph
 * (calibration, constant folding).  So what the compiler measured is what
 * the runtime computes.
 *
 * A kernel only computes.  Shapes are known before it runs: the compiler's
 * shape inference fixed every output's dims, and the caller allocated the
 * outputs.  A kernel checks what it relies on (ranks, dims, dtypes,
 * attribute values) and refuses with LOOM_E_INVALID or LOOM_E_UNSUPPORTED
 * and a message naming the problem (the caller prefixes the node); it never
 * aborts on data or attributes.
 *
 * Kernels are registered by ONNX op type (ai.onnx domain) in families, one
 * file a family (kernels_eltwise.c, kernels_reduce.c, ...), each exporting
 * a NULL-terminated table that kernel_registry.c lists.  The op's opset
 * version is passed in, so a kernel whose semantics changed between opsets
 * 7 and 17 handles each version it documents.
 */
#ifndef LOOM_KERNEL_H
#define LOOM_KERNEL_H

#include <stdint.h>

#include "loom/loom.h"

/* Kernels take tensors of up to 8 dims (the IR and the .loom format stop
 * at LOOM_MAX_RANK = 6; ONNX's own node tests use 7). */
#define LOOM_KT_MAX_RANK 8

/* A dense tensor in C (row-major) order.  dtype LOOM_DT_INVALID marks an
 * absent optional operand (data NULL): an input the node leaves out, or an
 * output nobody reads (ONNX's empty output name), which the kernel then
 * does not write.  rank 0 is a scalar (one element).  The caller sets every
 * present output's dtype as well as its dims (from shape and type
 * inference); the kernel checks both against what it computes. */
struct loom_kt {
  loom_dtype dtype;
  int rank;
  int64_t dims[LOOM_KT_MAX_RANK];
  void *data;
};

enum loom_kattr_kind {
  LOOM_KATTR_INT,     /* i */
  LOOM_KATTR_FLOAT,   /* f */
  LOOM_KATTR_STRING,  /* s */
  LOOM_KATTR_INTS,    /* ints[n] */
  LOOM_KATTR_FLOATS,  /* floats[n] */
  LOOM_KATTR_STRINGS, /* strings[n] */
  LOOM_KATTR_TENSOR,  /* t (e.g. ConstantOfShape's value) */
  LOOM_KATTR_KIND_COUNT
};

/* One attribute of the node, as ONNX names it. */
struct loom_kattr {
  const char *name;
  enum loom_kattr_kind kind;
  int64_t i;
  float f;
  const char *s;
  int n;
  const int64_t *ints;
  const float *floats;
  const char *const *strings;
  const struct loom_kt *t;
};

/* One call of a kernel. */
struct loom_kcall {
  const char *op;               /* ONNX op type, e.g. "Resize" */
  int opset;                    /* the model's ai.onnx opset version: the kernels
                                * implement 7 to 17 and accept 1 to 17 (a model
                                * may declare an op's first version, e.g. 1) */
  const struct loom_kt *in;     /* n_in operands in ONNX order */
  int n_in;
  struct loom_kt *out;          /* n_out results, dims set, data allocated */
  int n_out;
  const struct loom_kattr *attrs;
  int n_attrs;
  char *msg;                    /* LOOM_MSG_MAX bytes for a refusal */
};

typedef loom_status (*loom_kernel_fn)(const struct loom_kcall *c);

/* Kernel flags. */
#define LOOM_KERNEL_DYNAMIC 1u /* data-dependent output shape (NonZero, NonMaxSuppression, Unique,
                                * Compress, ...): out[k].dims give a capacity on entry; the
                                * kernel writes at most that and sets dims to what it wrote */

/* The largest dims output k of a LOOM_KERNEL_DYNAMIC kernel can need,
 * from the inputs' dtypes and dims and the attributes alone (input data
 * may be NULL): sets out->rank and out->dims, nothing else. */
typedef loom_status (*loom_kernel_capacity_fn)(const struct loom_kcall *c, int k, struct loom_kt *out);

struct loom_kernel {
  const char *op;     /* ONNX op type */
  loom_kernel_fn fn;
  unsigned flags;     /* LOOM_KERNEL_* */
  loom_kernel_capacity_fn capacity; /* LOOM_KERNEL_DYNAMIC kernels only, else NULL */
};

/* The kernel of an ONNX op type, or NULL when Loom has none. */
const struct loom_kernel *loom_kernel_find(const char *op);

/* Runs c->op's kernel: LOOM_E_UNSUPPORTED when there is none.  It checks
 * the call's form first (operand counts within LOOM_KERNEL_MAX_IO, ranks
 * within LOOM_KT_MAX_RANK, non-negative dims, data present for every present
 * operand with elements), so kernels start from a well-formed call. */
loom_status loom_kernel_run(const struct loom_kcall *c);

/* The capacity of output k of c->op (a LOOM_KERNEL_DYNAMIC kernel's upper
 * bound, for the caller to allocate): LOOM_E_INVALID for other ops, or
 * when the inputs the bound needs are missing. */
loom_status loom_kernel_capacity(const struct loom_kcall *c, int k, struct loom_kt *out);

/* The registered kernels, in registry order: loom_kernel_at(i) for
 * 0 <= i < loom_kernel_count() (the supported-op list, for the compiler's
 * placement and for documentation). */
int loom_kernel_count(void);
const struct loom_kernel *loom_kernel_at(int i);

/* Most operands on either side of one call: loom_kernel_run refuses more
 * (a Concat or Sum of more than 64 tensors). */
#define LOOM_KERNEL_MAX_IO 64

/* ---- attributes ---- */

/* The attribute called `name`, or NULL. */
const struct loom_kattr *loom_kattr_find(const struct loom_kcall *c, const char *name);
/* Value of an INT / FLOAT / STRING attribute, or `dflt` when absent. */
int64_t loom_kattr_int(const struct loom_kcall *c, const char *name, int64_t dflt);
float loom_kattr_float(const struct loom_kcall *c, const char *name, float dflt);
const char *loom_kattr_string(const struct loom_kcall *c, const char *name, const char *dflt);
/* An INTS / FLOATS attribute: its count, or -1 when absent (*v unset). */
int loom_kattr_ints(const struct loom_kcall *c, const char *name, const int64_t **v);
int loom_kattr_floats(const struct loom_kcall *c, const char *name, const float **v);

/* ---- tensors ---- */

/* Elements of t (1 for a scalar). */
int64_t loom_kt_numel(const struct loom_kt *t);
/* 1 when the operand is present. */
static inline int loom_kt_present(const struct loom_kt *t) { return t && t->dtype != LOOM_DT_INVALID; }

/* Element i of t read as double / int64 (any dtype; bool is 0 or 1), and
 * the stores: a double stored into a float type rounds to nearest even, into
 * an integer type truncates toward zero and saturates at the type's range
 * (NaN stores 0); an int64 stored into a narrower integer type wraps, as
 * ONNX Cast between integer types does.  Generic and slow: kernels on a hot
 * path have typed loops for float32 and the integer types they need. */
double loom_kt_get_f64(const struct loom_kt *t, int64_t i);
int64_t loom_kt_get_i64(const struct loom_kt *t, int64_t i);
void loom_kt_set_f64(struct loom_kt *t, int64_t i, double v);
void loom_kt_set_i64(struct loom_kt *t, int64_t i, int64_t v);

/* 1 for the float dtypes (f32, f64, f16, bf16); 1 for the signed integer
 * dtypes (i8, i16, i32, i64); 1 for the unsigned ones (u8 .. u64; not bool). */
int loom_dtype_is_float(loom_dtype t);
int loom_dtype_is_signed_int(loom_dtype t);
int loom_dtype_is_unsigned_int(loom_dtype t);

/* The loom_dtype of an ONNX TensorProto.DataType code, LOOM_DT_INVALID when
 * Loom has none (string, complex, ...); and back (0 for LOOM_DT_INVALID). */
loom_dtype loom_dtype_from_onnx(int64_t onnx_type);
int loom_dtype_to_onnx(loom_dtype t);

/* binary16 and bfloat16 conversions (round to nearest even; NaN stays NaN). */
float loom_f16_to_f32(uint16_t h);
uint16_t loom_f32_to_f16(float f);
float loom_bf16_to_f32(uint16_t h);
uint16_t loom_f32_to_bf16(float f);

#endif
