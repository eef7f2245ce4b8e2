/*
 * ir_verify.c - structural and type checks of an IR graph.
 *
 * Every pass may assume a verified graph and must leave one behind, so the
 * pass manager verifies between stages and tests verify everything they
 * build.  The checks are those that do not need shape inference:
 *   - tensors: ranks and dims in range, constants sized as their type says,
 *     quantization axes in range;
 *   - nodes, in order: each operand defined before use (graph input,
 *     constant or result of an earlier node), each result defined once,
 *     operand and result counts per op, required operands present;
 *   - attributes: each one known for its op with the right kind, required
 *     ones present (the table here is also what the ONNX importer accepts);
 *   - dtypes and ranks, wherever they are already known.
 * Errors read "source: node 3 'conv1' (Conv): what is wrong".  Unknown
 * dtypes and shapes are not errors here; the interpreter and the lowering
 * check what they need.
 */
#include "sw_compiler/compiler.h"
#include "sw_compiler/onnx_schema.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define CONV_ATTRS(OP) \
  {OP, "auto_pad", IR_ATTR_STRING, 0}, {OP, "dilations", IR_ATTR_INTS, 0}, \
  {OP, "group", IR_ATTR_INT, 0}, {OP, "kernel_shape", IR_ATTR_INTS, 0}, \
  {OP, "pads", IR_ATTR_INTS, 0}, {OP, "strides", IR_ATTR_INTS, 0}

/* Every attribute an op may carry.  Ops not listed take none, except the
 * fused ops whose attributes the lowering defines. */
static const struct ir_attr_spec attr_specs[] = {
    CONV_ATTRS(IR_OP_CONV),
    CONV_ATTRS(IR_OP_CONVINTEGER),
    CONV_ATTRS(IR_OP_QLINEARCONV),
    {IR_OP_GEMM, "alpha", IR_ATTR_FLOAT, 0},
    {IR_OP_GEMM, "beta", IR_ATTR_FLOAT, 0},
    {IR_OP_GEMM, "transA", IR_ATTR_INT, 0},
    {IR_OP_GEMM, "transB", IR_ATTR_INT, 0},
    {IR_OP_MAXPOOL, "auto_pad", IR_ATTR_STRING, 0},
    {IR_OP_MAXPOOL, "ceil_mode", IR_ATTR_INT, 0},
    {IR_OP_MAXPOOL, "dilations", IR_ATTR_INTS, 0},
    {IR_OP_MAXPOOL, "kernel_shape", IR_ATTR_INTS, 1},
    {IR_OP_MAXPOOL, "pads", IR_ATTR_INTS, 0},
    {IR_OP_MAXPOOL, "storage_order", IR_ATTR_INT, 0},
    {IR_OP_MAXPOOL, "strides", IR_ATTR_INTS, 0},
    {IR_OP_AVERAGEPOOL, "auto_pad", IR_ATTR_STRING, 0},
    {IR_OP_AVERAGEPOOL, "ceil_mode", IR_ATTR_INT, 0},
    {IR_OP_AVERAGEPOOL, "count_include_pad", IR_ATTR_INT, 0},
    {IR_OP_AVERAGEPOOL, "kernel_shape", IR_ATTR_INTS, 1},
    {IR_OP_AVERAGEPOOL, "pads", IR_ATTR_INTS, 0},
    {IR_OP_AVERAGEPOOL, "strides", IR_ATTR_INTS, 0},
    {IR_OP_FLATTEN, "axis", IR_ATTR_INT, 0},
    {IR_OP_RESHAPE, "allowzero", IR_ATTR_INT, 0},
    {IR_OP_TRANSPOSE, "perm", IR_ATTR_INTS, 0},
    {IR_OP_CONCAT, "axis", IR_ATTR_INT, 1},
    {IR_OP_BATCHNORM, "epsilon", IR_ATTR_FLOAT, 0},
    {IR_OP_BATCHNORM, "momentum", IR_ATTR_FLOAT, 0},
    {IR_OP_BATCHNORM, "training_mode", IR_ATTR_INT, 0},
    {IR_OP_SOFTMAX, "axis", IR_ATTR_INT, 0},
    {IR_OP_SOFTMAX, "legacy_2d", IR_ATTR_INT, 0},
    {IR_OP_SOFTMAX, "mask_group", IR_ATTR_INT, 0},
    {IR_OP_QUANTIZELINEAR, "axis", IR_ATTR_INT, 0},
    {IR_OP_QUANTIZELINEAR, "saturate", IR_ATTR_INT, 0},
    {IR_OP_DEQUANTIZELINEAR, "axis", IR_ATTR_INT, 0},
    {IR_OP_CONSTANT, "value", IR_ATTR_TENSOR, 1},
    {IR_OP_SHAPE, "start", IR_ATTR_INT, 0},
    {IR_OP_SHAPE, "end", IR_ATTR_INT, 0},
    {IR_OP_GATHER, "axis", IR_ATTR_INT, 0},
    {IR_OP_UNSQUEEZE, "axes", IR_ATTR_INTS, 1},
    {IR_OP_SQUEEZE, "axes", IR_ATTR_INTS, 0},
};

static int free_form_attrs(enum ir_op_kind op) {
  return op == IR_OP_QCONV || op == IR_OP_QGEMM || op == IR_OP_QADD || op == IR_OP_QPOOL;
}

const struct ir_attr_spec *ir_attr_spec_find(enum ir_op_kind op, const char *name) {
  for (size_t i = 0; i < sizeof attr_specs / sizeof attr_specs[0]; i++)
    if (attr_specs[i].op == op && !strcmp(attr_specs[i].name, name)) return &attr_specs[i];
  return NULL;
}

const char *ir_attr_missing(const struct ir_node *n) {
  for (size_t i = 0; i < sizeof attr_specs / sizeof attr_specs[0]; i++)
    if (attr_specs[i].op == n->op && attr_specs[i].required && !ir_attr_find(n, attr_specs[i].name))
      return attr_specs[i].name;
  return NULL;
}

/* ---- context ---- */

struct vctx {
  const struct ir_graph *g;
  struct ir_error *err;
  char *defined; /* per tensor: 1 once defined */
  int node;      /* node being checked, -1 for graph-level checks */
};

/* ---- tensors ---- */

static int check_tensor(struct vctx *v, int t) {
  const struct ir_tensor *x = &v->g->tensors[t];
  if (x->rank < -1 || x->rank > IR_MAX_RANK) return ir_fail(v->err, v->g, v->node, "%%%s has rank %d", x->name, x->rank);
  for (int i = 0; i < x->rank; i++)
    if (x->dims[i] < -1 || x->dims[i] > IR_MAX_DIM)
      return ir_fail(v->err, v->g, v->node, "%%%s has dim %d of %lld", x->name, i, (long long)x->dims[i]);
  if (x->data) {
    if (x->is_input) return ir_fail(v->err, v->g, v->node, "%%%s is both an input and a constant", x->name);
    int64_t bytes = ir_tensor_bytes(x);
    if (bytes < 0 || (size_t)bytes != x->nbytes)
      return ir_fail(v->err, v->g, v->node, "constant %%%s holds %zu bytes, its type needs %lld", x->name, x->nbytes, (long long)bytes);
  }
  if (x->quant.n > 0 && x->quant.axis >= 0) {
    if (x->rank >= 0 && x->quant.axis >= x->rank)
      return ir_fail(v->err, v->g, v->node, "%%%s: quantization axis %d out of range", x->name, x->quant.axis);
    if (x->rank >= 0 && x->dims[x->quant.axis] >= 0 && x->dims[x->quant.axis] != x->quant.n)
      return ir_fail(v->err, v->g, v->node, "%%%s: %d quantization scales for %lld channels", x->name, x->quant.n,
                  (long long)x->dims[x->quant.axis]);
  }
  if (x->layout == IR_LAYOUT_NCHWC && x->layout_block <= 0)
    return ir_fail(v->err, v->g, v->node, "%%%s: blocked layout without a block size", x->name);
  return 0;
}

/* ---- attributes ---- */

/* A generic node: its attributes against the ONNX schema of its type. */
static int check_onnx_attrs(struct vctx *v, const struct ir_node *n, const struct onnx_schema *s) {
  for (int i = 0; i < n->n_attrs; i++) {
    const struct ir_attr *a = &n->attrs[i];
    int kind = onnx_schema_attr(s, a->name, NULL);
    if (kind < 0) return ir_fail(v->err, v->g, v->node, "attribute '%s' is not supported", a->name);
    if (kind != (int)a->kind)
      return ir_fail(v->err, v->g, v->node, "attribute '%s' must be %s, not %s", a->name,
                     ir_attr_kind_name((enum ir_attr_kind)kind), ir_attr_kind_name(a->kind));
    if (a->kind == IR_ATTR_TENSOR &&
        (a->tensor < 0 || a->tensor >= v->g->n_tensors || !v->g->tensors[a->tensor].data))
      return ir_fail(v->err, v->g, v->node, "attribute '%s' must name a constant", a->name);
  }
  char buf[128];
  const char *missing = onnx_schema_missing(s, n, buf, sizeof buf);
  return missing ? ir_fail(v->err, v->g, v->node, "required attribute '%s' is missing", missing) : 0;
}

static int check_attrs(struct vctx *v, const struct ir_node *n) {
  if (free_form_attrs(n->op)) return 0;
  if (n->op == IR_OP_ONNX) return check_onnx_attrs(v, n, onnx_schema_find(n->type, n->opset));
  for (int i = 0; i < n->n_attrs; i++) {
    const struct ir_attr *a = &n->attrs[i];
    const struct ir_attr_spec *s = ir_attr_spec_find(n->op, a->name);
    if (!s) return ir_fail(v->err, v->g, v->node, "attribute '%s' is not supported", a->name);
    if (s->kind != a->kind)
      return ir_fail(v->err, v->g, v->node, "attribute '%s' must be %s, not %s", a->name, ir_attr_kind_name(s->kind),
                  ir_attr_kind_name(a->kind));
    if (a->kind == IR_ATTR_TENSOR &&
        (a->tensor < 0 || a->tensor >= v->g->n_tensors || !v->g->tensors[a->tensor].data))
      return ir_fail(v->err, v->g, v->node, "attribute '%s' must name a constant", a->name);
  }
  const char *missing = ir_attr_missing(n);
  return missing ? ir_fail(v->err, v->g, v->node, "required attribute '%s' is missing", missing) : 0;
}

/* ---- operands and results ---- */

/* Operand and result counts of a generic node against its schema. */
static int check_onnx_arity(struct vctx *v, const struct ir_node *n) {
  const struct onnx_schema *s = n->type ? onnx_schema_find(n->type, n->opset) : NULL;
  if (!s) return ir_fail(v->err, v->g, v->node, "op '%s' at opset %d is not an ONNX op Loom knows", n->type ? n->type : "?", n->opset);
  if (n->n_in < s->min_in || n->n_in > s->max_in)
    return ir_fail(v->err, v->g, v->node, "takes %d to %d operands, has %d", s->min_in, s->max_in, n->n_in);
  if (n->n_out < s->min_out || n->n_out > s->max_out)
    return ir_fail(v->err, v->g, v->node, "takes %d to %d results, has %d", s->min_out, s->max_out, n->n_out);
  return 0;
}

static int check_arity(struct vctx *v, const struct ir_node *n) {
  if (n->op == IR_OP_ONNX) return check_onnx_arity(v, n);
  const struct ir_op_info *info = &ir_op_infos[n->op];
  int variadic = info->flags & IR_OPF_VARIADIC;
  if (n->n_in < info->min_in || (!variadic && n->n_in > info->max_in)) {
    if (info->min_in == info->max_in)
      return ir_fail(v->err, v->g, v->node, "takes %d operands, has %d", info->min_in, n->n_in);
    return ir_fail(v->err, v->g, v->node, "takes %d to %d operands, has %d", info->min_in, info->max_in, n->n_in);
  }
  if (n->n_out != info->n_out) return ir_fail(v->err, v->g, v->node, "has %d results, needs %d", n->n_out, info->n_out);
  return 0;
}

static int check_operands(struct vctx *v, const struct ir_node *n) {
  int min_in = ir_op_infos[n->op].min_in;
  if (n->op == IR_OP_CONCAT || free_form_attrs(n->op)) min_in = n->n_in;
  if (n->op == IR_OP_ONNX) min_in = onnx_schema_find(n->type, n->opset)->min_in;
  for (int k = 0; k < n->n_in; k++) {
    int t = n->in[k];
    if (t < 0 && k < min_in) return ir_fail(v->err, v->g, v->node, "operand %d is required", k);
    if (t < -1 || t >= v->g->n_tensors) return ir_fail(v->err, v->g, v->node, "operand %d: bad tensor id %d", k, t);
    if (t >= 0 && !v->defined[t])
      return ir_fail(v->err, v->g, v->node, "operand %d %%%s is used before it is defined", k, v->g->tensors[t].name);
  }
  return 0;
}

static int define_results(struct vctx *v, const struct ir_node *n) {
  for (int k = 0; k < n->n_out; k++) {
    int t = n->out[k];
    if (t < 0 || t >= v->g->n_tensors) return ir_fail(v->err, v->g, v->node, "result %d: bad tensor id %d", k, t);
    if (v->defined[t]) return ir_fail(v->err, v->g, v->node, "result %%%s is defined twice", v->g->tensors[t].name);
    v->defined[t] = 1;
  }
  return 0;
}

/* ---- dtypes and ranks, where known ---- */

static const struct ir_tensor *opnd(struct vctx *v, const struct ir_node *n, int k) {
  return k < n->n_in && n->in[k] >= 0 ? &v->g->tensors[n->in[k]] : NULL;
}

/* Operand k, if present and of known dtype, must be one in `ok` (bitmask
 * of 1 << dtype). */
static int want_dtype(struct vctx *v, const struct ir_node *n, int k, unsigned ok) {
  const struct ir_tensor *t = opnd(v, n, k);
  if (!t || t->dtype == IR_DT_UNDEF || (ok >> t->dtype) & 1u) return 0;
  return ir_fail(v->err, v->g, v->node, "operand %d %%%s has dtype %s", k, t->name, ir_dtype_name(t->dtype));
}

static int want_rank(struct vctx *v, const struct ir_node *n, int k, int lo, int hi) {
  const struct ir_tensor *t = opnd(v, n, k);
  if (!t || t->rank < 0 || (t->rank >= lo && t->rank <= hi)) return 0;
  if (lo == hi) return ir_fail(v->err, v->g, v->node, "operand %d %%%s has rank %d, needs %d", k, t->name, t->rank, lo);
  return ir_fail(v->err, v->g, v->node, "operand %d %%%s has rank %d, needs %d to %d", k, t->name, t->rank, lo, hi);
}

static int same_dtype(struct vctx *v, const struct ir_node *n, int a, int b) {
  const struct ir_tensor *x = opnd(v, n, a), *y = opnd(v, n, b);
  if (!x || !y || x->dtype == IR_DT_UNDEF || y->dtype == IR_DT_UNDEF || x->dtype == y->dtype) return 0;
  return ir_fail(v->err, v->g, v->node, "operands %d and %d differ in dtype (%s, %s)", a, b, ir_dtype_name(x->dtype),
              ir_dtype_name(y->dtype));
}

#define M(dt) (1u << (dt))
#define Q8 (M(IR_DT_I8) | M(IR_DT_U8))
#define F32 M(IR_DT_F32)
#define IDX (M(IR_DT_I32) | M(IR_DT_I64))

static int check_all_f32(struct vctx *v, const struct ir_node *n) {
  for (int k = 0; k < n->n_in; k++)
    if (want_dtype(v, n, k, F32)) return -1;
  return 0;
}

/* Windows of any rank verify: shape inference turns the ones above 2-D into
 * generic nodes (the host kernels run them). */
static int check_conv_like(struct vctx *v, const struct ir_node *n, int x, int w) {
  if (want_rank(v, n, x, 3, IR_MAX_RANK) || want_rank(v, n, w, 3, IR_MAX_RANK)) return -1;
  const struct ir_tensor *a = opnd(v, n, x), *b = opnd(v, n, w);
  if (a->rank >= 0 && b->rank >= 0 && a->rank != b->rank)
    return ir_fail(v->err, v->g, v->node, "input rank %d and weight rank %d differ", a->rank, b->rank);
  return 0;
}

static int check_qlinear(struct vctx *v, const struct ir_node *n) {
  /* x, xs, xzp, w, ws, wzp, ys, yzp (, B) */
  if (want_dtype(v, n, 0, Q8) || want_dtype(v, n, 3, Q8) || want_dtype(v, n, 7, Q8)) return -1;
  if (same_dtype(v, n, 0, 2) || same_dtype(v, n, 3, 5)) return -1;
  if (want_dtype(v, n, 1, F32) || want_dtype(v, n, 4, F32) || want_dtype(v, n, 6, F32)) return -1;
  return want_dtype(v, n, 8, M(IR_DT_I32));
}

static int check_types(struct vctx *v, const struct ir_node *n) {
  switch (n->op) {
  case IR_OP_CONV:
    return check_all_f32(v, n) || check_conv_like(v, n, 0, 1) || want_rank(v, n, 2, 1, 1);
  case IR_OP_GEMM:
    return check_all_f32(v, n) || want_rank(v, n, 0, 2, 2) || want_rank(v, n, 1, 2, 2);
  case IR_OP_MATMUL:
    return check_all_f32(v, n) || want_rank(v, n, 0, 1, IR_MAX_RANK) || want_rank(v, n, 1, 1, IR_MAX_RANK);
  case IR_OP_MAXPOOL:
    return want_dtype(v, n, 0, F32 | Q8) || want_rank(v, n, 0, 3, IR_MAX_RANK);
  case IR_OP_AVERAGEPOOL:
    return check_all_f32(v, n) || want_rank(v, n, 0, 3, IR_MAX_RANK);
  case IR_OP_GLOBALAVERAGEPOOL:
    return check_all_f32(v, n) || want_rank(v, n, 0, 3, IR_MAX_RANK);
  case IR_OP_BATCHNORM:
    if (check_all_f32(v, n) || want_rank(v, n, 0, 2, IR_MAX_RANK)) return -1;
    for (int k = 1; k < 5; k++)
      if (want_rank(v, n, k, 1, 1)) return -1;
    return 0;
  case IR_OP_SOFTMAX: /* float, or the int8 form of compile_qsoftmax.c: int8 codes in and out */
    if (opnd(v, n, 0) && opnd(v, n, 0)->dtype == IR_DT_I8) {
      const struct ir_tensor *x = opnd(v, n, 0), *y = &v->g->tensors[n->out[0]];
      if (y->dtype != IR_DT_I8 || x->quant.n != 1 || y->quant.n != 1)
        return ir_fail(v->err, v->g, v->node, "an int8 Softmax needs per-tensor quantized int8 operand and result");
      if (n->n_in > 1 && (!opnd(v, n, 1) || opnd(v, n, 1)->dtype != IR_DT_F32))
        return ir_fail(v->err, v->g, v->node, "an int8 Softmax's mask must be float32");
      return 0;
    }
    if (n->n_in > 1) return ir_fail(v->err, v->g, v->node, "only an int8 Softmax takes a mask");
    return check_all_f32(v, n);
  case IR_OP_ADD: case IR_OP_MUL:
    return same_dtype(v, n, 0, 1);
  case IR_OP_CLIP:
    return same_dtype(v, n, 0, 1) || same_dtype(v, n, 0, 2);
  case IR_OP_RESHAPE:
    return want_dtype(v, n, 1, M(IR_DT_I64)) || want_rank(v, n, 1, 1, 1);
  case IR_OP_GATHER:
    return want_dtype(v, n, 1, IDX);
  case IR_OP_QUANTIZELINEAR:
    return want_dtype(v, n, 0, F32 | M(IR_DT_I32)) || want_dtype(v, n, 1, F32) || want_dtype(v, n, 2, Q8);
  case IR_OP_DEQUANTIZELINEAR:
    return want_dtype(v, n, 0, Q8 | M(IR_DT_I32)) || want_dtype(v, n, 1, F32) || same_dtype(v, n, 0, 2);
  case IR_OP_QLINEARCONV:
    return check_qlinear(v, n) || check_conv_like(v, n, 0, 3);
  case IR_OP_QLINEARMATMUL:
    return check_qlinear(v, n);
  case IR_OP_CONVINTEGER:
    return want_dtype(v, n, 0, Q8) || want_dtype(v, n, 1, Q8) || same_dtype(v, n, 0, 2) ||
           same_dtype(v, n, 1, 3) || check_conv_like(v, n, 0, 1);
  case IR_OP_MATMULINTEGER:
    return want_dtype(v, n, 0, Q8) || want_dtype(v, n, 1, Q8) || same_dtype(v, n, 0, 2) ||
           same_dtype(v, n, 1, 3);
  default:
    return 0;
  }
}

int ir_kind_types_ok(const struct ir_graph *g, int node) {
  struct vctx v = {.g = g, .err = NULL, .node = node};
  return check_types(&v, &g->nodes[node]) == 0;
}

static int check_node(struct vctx *v, int i) {
  const struct ir_node *n = &v->g->nodes[i];
  v->node = i;
  if ((unsigned)n->op >= IR_OP_COUNT) return ir_fail(v->err, v->g, v->node, "bad op kind %d", (int)n->op);
  if (check_arity(v, n) || check_operands(v, n) || check_attrs(v, n) || check_types(v, n)) return -1;
  return define_results(v, n);
}

static int check_graph_io(struct vctx *v) {
  v->node = -1;
  for (int i = 0; i < v->g->n_inputs; i++) {
    int t = v->g->inputs[i];
    if (t < 0 || t >= v->g->n_tensors || !v->g->tensors[t].is_input)
      return ir_fail(v->err, v->g, v->node, "input %d is not a graph input tensor", i);
  }
  for (int i = 0; i < v->g->n_outputs; i++) {
    int t = v->g->outputs[i];
    if (t < 0 || t >= v->g->n_tensors || !v->defined[t])
      return ir_fail(v->err, v->g, v->node, "output %d is never defined", i);
  }
  return 0;
}

int ir_verify(const struct ir_graph *g, struct ir_error *err) {
  struct vctx v = {.g = g, .err = err, .node = -1};
  v.defined = ir_xcalloc((size_t)g->n_tensors + 1, 1);
  int rc = 0;
  for (int t = 0; t < g->n_tensors && !rc; t++) {
    rc = check_tensor(&v, t);
    v.defined[t] = g->tensors[t].is_input || g->tensors[t].data != NULL;
  }
  for (int i = 0; i < g->n_nodes && !rc; i++)
    if (!g->nodes[i].dead) rc = check_node(&v, i);
  if (!rc) rc = check_graph_io(&v);
  free(v.defined);
  return rc ? -1 : 0;
}
