/*
 * shape_onnx.c - shape and type inference of generic ONNX nodes: the table
 * of every op type the importer accepts, and the elementwise, broadcasting,
 * reduction and type-changing families.
 *
 * Each ONNX op type has one row: its infer function.  A generic node of a
 * type the compiler also has a kind for (a Conv with a 3-D window, a
 * MaxPool with an Indices result, ...) falls back to the kind's inference
 * when the table has no row of its own.  The rules follow the ONNX operator
 * definitions of opsets 7 to 17, in the normalized forms onnx_import_norm.c
 * leaves (docs/compiler.md lists the version differences); results whose
 * size depends on the data (NonZero, Unique, NonMaxSuppression, Compress)
 * get a capacity and the dyn flag.  Operands that must be constants (a
 * Range's bounds, an Expand's shape) make the node wait until folding has
 * made them so: a model whose shapes never resolve is refused later, where
 * a known shape is needed, naming the node.
 */
#include "sw_compiler/shape_infer.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sw_compiler/shape_onnx.h"

static const char *op_type(struct sctx *c) { return si_cur(c)->type; }

/* ---- elementwise ---- */

int so_unary(struct sctx *c) {
  const struct ir_tensor *x = si_known(c, 0);
  return x ? si_same_as_input(c, x) : 0;
}

/* Same shape as operand 0, bool elements (IsNaN, IsInf, Not). */
static int unary_bool(struct sctx *c) {
  const struct ir_tensor *x = si_known(c, 0);
  if (!x) return 0;
  struct shape s = si_shape_of(x);
  return si_set_result(c, 0, IR_DT_BOOL, &s);
}

/* Operands [0, n) broadcast together; the result in dtype dt (UNDEF: operand
 * `dt_of`'s). */
static int broadcast_all(struct sctx *c, int first, int n, enum ir_dtype dt, int dt_of) {
  struct shape y = {.rank = 0};
  for (int k = first; k < first + n; k++) {
    const struct ir_tensor *t = si_known(c, k);
    if (!t) return 0;
    struct shape s = si_shape_of(t), r;
    if (si_broadcast(c, &y, &s, &r)) return -1;
    y = r;
  }
  const struct ir_tensor *d = si_known(c, dt_of);
  return si_set_result(c, 0, dt == IR_DT_UNDEF ? d->dtype : dt, &y);
}

static int binary(struct sctx *c) { return broadcast_all(c, 0, 2, IR_DT_UNDEF, 0); }
static int binary_bool(struct sctx *c) { return broadcast_all(c, 0, 2, IR_DT_BOOL, 0); }
static int variadic(struct sctx *c) { return broadcast_all(c, 0, si_cur(c)->n_in, IR_DT_UNDEF, 0); }
static int where(struct sctx *c) { return broadcast_all(c, 0, 3, IR_DT_UNDEF, 1); }

/* PRelu: the slope broadcasts to X (unidirectionally): the result is X's. */
static int prelu(struct sctx *c) { return broadcast_all(c, 0, 2, IR_DT_UNDEF, 0); }

/* ---- types ---- */

static int cast(struct sctx *c) {
  const struct ir_tensor *x = si_known(c, 0);
  if (!x) return 0;
  int dt = ir_dtype_from_onnx(ir_attr_int(si_cur(c), "to", 0));
  if (dt < 0) return si_fail(c, "cast to ONNX type %lld is not supported", (long long)ir_attr_int(si_cur(c), "to", 0));
  struct shape s = si_shape_of(x);
  return si_set_result(c, 0, (enum ir_dtype)dt, &s);
}

static int cast_like(struct sctx *c) {
  const struct ir_tensor *x = si_known(c, 0), *like = si_known(c, 1);
  if (!x || !like) return 0;
  struct shape s = si_shape_of(x);
  return si_set_result(c, 0, like->dtype, &s);
}

static int size_op(struct sctx *c) {
  if (!si_known(c, 0)) return 0;
  struct shape s = {.rank = 0};
  return si_set_result(c, 0, IR_DT_I64, &s);
}

/* ---- reductions ---- */

/* The axes a reduction runs over (mask), from the axes attribute or (for
 * ReduceSum-13) operand 1; 0 with *wait set when that operand is not
 * constant yet. */
static int reduce_axes(struct sctx *c, int rank, unsigned *mask, int *wait) {
  struct ir_node *n = si_cur(c);
  int64_t ax[IR_MAX_RANK];
  int cnt = -1;
  const int64_t *attr;
  *mask = 0, *wait = 0;
  int na = ir_attr_ints(n, "axes", &attr);
  if (na >= 0) {
    if (na > IR_MAX_RANK) return si_fail(c, "too many axes");
    memcpy(ax, attr, (size_t)na * sizeof *ax);
    cnt = na;
  } else if (si_has(c, 1)) {
    int r = si_const_ints(c, 1, ax, IR_MAX_RANK, &cnt);
    if (r < 0) return -1;
    if (r == 0) return *wait = 1, 0;
  }
  if (cnt <= 0) { /* none given: all axes, unless noop_with_empty_axes */
    if (!ir_attr_int(n, "noop_with_empty_axes", 0)) *mask = (1u << rank) - 1;
    return 0;
  }
  for (int i = 0; i < cnt; i++) {
    int a;
    if (si_norm_axis(c, "axis", ax[i], rank, &a)) return -1;
    *mask |= 1u << a;
  }
  return 0;
}

static int reduce_shape(struct sctx *c, const struct ir_tensor *x, unsigned mask, enum ir_dtype dt) {
  int keep = ir_attr_int(si_cur(c), "keepdims", 1) != 0;
  struct shape y = {.rank = 0};
  for (int i = 0; i < x->rank; i++) {
    if (!((mask >> i) & 1u)) y.d[y.rank++] = x->dims[i];
    else if (keep) y.d[y.rank++] = 1;
  }
  return si_set_result(c, 0, dt, &y);
}

static int reduce(struct sctx *c) {
  const struct ir_tensor *x = si_known(c, 0);
  unsigned mask;
  int wait;
  if (!x) return 0;
  if (reduce_axes(c, x->rank, &mask, &wait)) return -1;
  return wait ? 0 : reduce_shape(c, x, mask, x->dtype);
}

static int arg_reduce(struct sctx *c) {
  const struct ir_tensor *x = si_known(c, 0);
  int axis;
  if (!x) return 0;
  if (si_axis_attr(c, "axis", 0, x->rank, &axis)) return -1;
  return reduce_shape(c, x, 1u << axis, IR_DT_I64);
}

/* ---- normalizations with extra results ---- */

/* LayerNormalization: Y like X; Mean and InvStdDev keep the axes before
 * `axis` and are 1 from it on. */
static int layer_norm(struct sctx *c) {
  const struct ir_tensor *x = si_known(c, 0);
  int axis;
  if (!x) return 0;
  if (si_axis_attr(c, "axis", -1, x->rank, &axis) || si_same_as_input(c, x)) return -1;
  struct shape s = si_shape_of(x);
  for (int i = axis; i < s.rank; i++) s.d[i] = 1;
  for (int k = 1; k < si_cur(c)->n_out; k++)
    if (si_set_result(c, k, IR_DT_F32, &s)) return -1;
  return 0;
}

/* Dropout with its mask: Y like X, mask bool of the same shape. */
static int dropout(struct sctx *c) {
  const struct ir_tensor *x = si_known(c, 0);
  if (!x) return 0;
  struct shape s = si_shape_of(x);
  if (si_same_as_input(c, x)) return -1;
  return si_cur(c)->n_out > 1 ? si_set_result(c, 1, IR_DT_BOOL, &s) : 0;
}

/* BatchNormalization with training results: Y like X; running mean and
 * variance (and, before opset 14, saved mean and variance) per channel. */
static int batchnorm(struct sctx *c) {
  const struct ir_tensor *x = si_known(c, 0);
  if (!x) return 0;
  if (x->rank < 2) return si_fail(c, "input rank %d, needs at least 2", x->rank);
  struct shape s = {.rank = 1, .d = {x->dims[1]}};
  if (si_same_as_input(c, x)) return -1;
  for (int k = 1; k < si_cur(c)->n_out; k++)
    if (si_set_result(c, k, x->dtype, &s)) return -1;
  return 0;
}

/* DynamicQuantizeLinear: y uint8 like x; scale (f32) and zero point
 * (uint8) scalars. */
static int dynamic_quantize(struct sctx *c) {
  const struct ir_tensor *x = si_known(c, 0);
  if (!x) return 0;
  struct shape s = si_shape_of(x), scalar = {.rank = 0};
  return si_set_result(c, 0, IR_DT_U8, &s) || si_set_result(c, 1, IR_DT_F32, &scalar) ||
         si_set_result(c, 2, IR_DT_U8, &scalar);
}

/* A generic node of a typed op's type: the kind's own inference. */
static int as_kind(struct sctx *c) {
  int k = ir_op_from_name(op_type(c));
  LOOM_ASSERT(k >= 0);
  return si_infer_kind(c, (enum ir_op_kind)k);
}

/* ---- the table ---- */

struct so_row {
  const char *op;
  int (*fn)(struct sctx *c);
};

/* Sorted by op type in strcmp order (bsearch; test_shape_infer checks). */
static const struct so_row rows[] = {
    {"Abs", so_unary},
    {"Acos", so_unary},
    {"Acosh", so_unary},
    {"Add", binary},
    {"And", binary_bool},
    {"ArgMax", arg_reduce},
    {"ArgMin", arg_reduce},
    {"Asin", so_unary},
    {"Asinh", so_unary},
    {"Atan", so_unary},
    {"Atanh", so_unary},
    {"AveragePool", so_pool},
    {"BatchNormalization", batchnorm},
    {"BitShift", binary},
    {"BlackmanWindow", so_window_fn},
    {"Cast", cast},
    {"CastLike", cast_like},
    {"Ceil", so_unary},
    {"Celu", so_unary},
    {"Clip", so_unary},
    {"Compress", so_compress},
    {"ConstantOfShape", so_constant_of_shape},
    {"ConvTranspose", so_conv_transpose},
    {"Cos", so_unary},
    {"Cosh", so_unary},
    {"CumSum", so_unary},
    {"DFT", so_dft},
    {"DepthToSpace", so_depth_to_space},
    {"Det", so_det},
    {"Div", binary},
    {"Dropout", dropout},
    {"DynamicQuantizeLinear", dynamic_quantize},
    {"Einsum", so_einsum},
    {"Elu", so_unary},
    {"Equal", binary_bool},
    {"Erf", so_unary},
    {"Exp", so_unary},
    {"Expand", so_expand},
    {"EyeLike", so_eye_like},
    {"Floor", so_unary},
    {"GRU", so_rnn},
    {"GatherElements", so_gather_elements},
    {"GatherND", so_gather_nd},
    {"GlobalLpPool", so_global_pool},
    {"GlobalMaxPool", so_global_pool},
    {"Greater", binary_bool},
    {"GreaterOrEqual", binary_bool},
    {"GridSample", so_grid_sample},
    {"HammingWindow", so_window_fn},
    {"HannWindow", so_window_fn},
    {"HardSigmoid", so_unary},
    {"HardSwish", so_unary},
    {"Hardmax", so_unary},
    {"InstanceNormalization", so_unary},
    {"IsInf", unary_bool},
    {"IsNaN", unary_bool},
    {"LRN", so_unary},
    {"LSTM", so_rnn},
    {"LayerNormalization", layer_norm},
    {"LeakyRelu", so_unary},
    {"Less", binary_bool},
    {"LessOrEqual", binary_bool},
    {"Log", so_unary},
    {"LogSoftmax", so_unary},
    {"LpNormalization", so_unary},
    {"LpPool", so_pool},
    {"Max", variadic},
    {"MaxPool", so_pool},
    {"MaxRoiPool", so_max_roi_pool},
    {"MaxUnpool", so_max_unpool},
    {"Mean", variadic},
    {"MeanVarianceNormalization", so_unary},
    {"MelWeightMatrix", so_mel_weight_matrix},
    {"Min", variadic},
    {"Mod", binary},
    {"Mul", binary},
    {"Neg", so_unary},
    {"NegativeLogLikelihoodLoss", so_nll_loss},
    {"NonMaxSuppression", so_nms},
    {"NonZero", so_non_zero},
    {"Not", unary_bool},
    {"OneHot", so_one_hot},
    {"Or", binary_bool},
    {"PRelu", prelu},
    {"Pad", so_pad},
    {"Pow", binary},
    {"RNN", so_rnn},
    {"Range", so_range},
    {"Reciprocal", so_unary},
    {"ReduceL1", reduce},
    {"ReduceL2", reduce},
    {"ReduceLogSum", reduce},
    {"ReduceLogSumExp", reduce},
    {"ReduceMax", reduce},
    {"ReduceMean", reduce},
    {"ReduceMin", reduce},
    {"ReduceProd", reduce},
    {"ReduceSum", reduce},
    {"ReduceSumSquare", reduce},
    {"Relu", so_unary},
    {"Resize", so_resize},
    {"ReverseSequence", so_unary},
    {"RoiAlign", so_roi_align},
    {"Round", so_unary},
    {"STFT", so_stft},
    {"ScatterElements", so_unary},
    {"ScatterND", so_unary},
    {"Selu", so_unary},
    {"Shrink", so_unary},
    {"Sigmoid", so_unary},
    {"Sign", so_unary},
    {"Sin", so_unary},
    {"Sinh", so_unary},
    {"Size", size_op},
    {"Slice", so_slice},
    {"Softmax", so_unary},
    {"SoftmaxCrossEntropyLoss", so_sce_loss},
    {"Softplus", so_unary},
    {"Softsign", so_unary},
    {"SpaceToDepth", so_depth_to_space},
    {"Split", so_split},
    {"Sqrt", so_unary},
    {"Squeeze", so_squeeze},
    {"Sub", binary},
    {"Sum", variadic},
    {"Tan", so_unary},
    {"Tanh", so_unary},
    {"TfIdfVectorizer", so_tfidf},
    {"ThresholdedRelu", so_unary},
    {"Tile", so_tile},
    {"TopK", so_top_k},
    {"Trilu", so_unary},
    {"Unique", so_unique},
    {"Unsqueeze", so_unsqueeze},
    {"Where", where},
    {"Xor", binary_bool},
};

static int cmp_row(const void *key, const void *row) {
  return strcmp(key, ((const struct so_row *)row)->op);
}

int so_has_rule(const char *op) {
  return bsearch(op, rows, sizeof rows / sizeof rows[0], sizeof rows[0], cmp_row) || ir_op_from_name(op) >= 0;
}

int si_infer_onnx(struct sctx *c) {
  const struct so_row *r = bsearch(op_type(c), rows, sizeof rows / sizeof rows[0], sizeof rows[0], cmp_row);
  if (r) return r->fn(c);
  if (ir_op_from_name(op_type(c)) >= 0) return as_kind(c);
  return si_fail(c, "op '%s' has no shape inference in Loom", op_type(c));
}
