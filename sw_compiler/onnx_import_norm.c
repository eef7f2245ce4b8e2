/*
 * onnx_import_norm.c - older ONNX op versions rewritten into the form the
 * IR keeps, so that shape inference, folding and the passes each handle one
 * form per op.
 *
 * Typed kinds have exactly one form (ir_verify's table), whatever the
 * model's opset:
 *   - Clip (< 11): the min / max attributes become scalar constant operands;
 *   - Squeeze, Unsqueeze (>= 13): a constant axes operand becomes the axes
 *     attribute (a computed one leaves a generic node);
 *   - Softmax (< 13): the 2-D coercion is kept as legacy_2d, axis defaults
 *     to 1 as it did then (shape inference drops the flag when the axis is
 *     the last one: both forms agree then);
 *   - BatchNormalization (< 9): spatial = 1 is the only form the kind has
 *     (spatial = 0 leaves a generic node, which the kernel runs);
 *   - Dropout (any version, inference): Identity, unless its mask is asked
 *     for or training_mode is not a constant false.
 * Generic nodes keep ONNX's form of their version, except where an
 * attribute became an operand; those get the operand form and the opset
 * that introduced it (the semantics did not change), so shape inference and
 * the kernels see one form:
 *   - Slice (< 10): starts / ends / axes -> operands, as Slice-10;
 *   - Split (< 13): split -> operand, as Split-13;
 *   - ReduceSum (< 13): axes -> operand, as ReduceSum-13 (the other
 *     reductions take axes as an attribute up to opset 17);
 *   - TopK (< 10): k -> operand K, as TopK-10;
 *   - Upsample (7, 9): Resize-10 (the same op under its new name; version 7's
 *     scales attribute becomes the operand);
 *   - Scatter (9, 11): ScatterElements-11 (its new name).
 * Pad-2 (pads and value attributes) stays as it is: its value must take the
 * data's type, which is not known at import; shape inference and the
 * kernel read either version.  docs/compiler.md lists every version
 * difference the compiler handles.
 */
#include "sw_compiler/onnx_import_int.h"

#include <stdlib.h>
#include <string.h>

int imp_const_i64(struct imp *im, const int64_t *v, int n, int scalar) {
  int64_t dim = n;
  return ir_const_add(im->g, NULL, IR_DT_I64, scalar ? 0 : 1, &dim, v);
}

static struct ir_node *N(struct imp *im, int node) { return &im->g->nodes[node]; }

/* Sets operand k of node (growing the operand list, absent ones -1). */
static void set_operand(struct imp *im, int node, int k, int t) {
  struct ir_node *n = N(im, node);
  if (k >= n->n_in) {
    n->in = ir_xrealloc(n->in, (size_t)(k + 1) * sizeof *n->in);
    for (int i = n->n_in; i <= k; i++) n->in[i] = -1;
    n->n_in = k + 1;
  }
  n->in[k] = t;
}

/* INTS attribute `name` becomes int64 operand k (absent: nothing). */
static int ints_to_operand(struct imp *im, int node, const char *name, int k) {
  const int64_t *v;
  int cnt = ir_attr_ints(N(im, node), name, &v);
  if (cnt < 0) return 0;
  if (k < N(im, node)->n_in && N(im, node)->in[k] >= 0)
    return imp_fail(im, "'%s' is given both as an attribute and as an input", name);
  int t = imp_const_i64(im, v, cnt, 0);
  set_operand(im, node, k, t);
  ir_attr_remove(N(im, node), name);
  return 0;
}

/* Clip-6: min and max attributes become operands 1 and 2. */
static int clip_operands(struct imp *im, int node) {
  const char *names[2] = {"min", "max"};
  int attrs = ir_attr_find(N(im, node), "min") || ir_attr_find(N(im, node), "max");
  if (attrs && N(im, node)->n_in > 1) return imp_fail(im, "min/max given both as attributes and inputs");
  for (int k = 0; k < 2; k++) {
    const struct ir_attr *a = ir_attr_find(N(im, node), names[k]);
    if (!a) continue;
    int t = ir_const_add(im->g, NULL, IR_DT_F32, 0, NULL, &a->f);
    ir_attr_remove(N(im, node), names[k]);
    set_operand(im, node, k + 1, t);
  }
  return 0;
}

/* Squeeze/Unsqueeze-13: a constant axes operand becomes the attribute. */
static int axes_to_attr(struct imp *im, int node) {
  struct ir_node *n = N(im, node);
  if (n->n_in < 2 || n->in[1] < 0) {
    if (n->n_in == 2) n->n_in = 1;
    return 0;
  }
  const struct ir_tensor *t = &im->g->tensors[n->in[1]];
  if (!t->data || t->dtype != IR_DT_I64 || t->rank > 1 || ir_tensor_numel(t) > IR_MAX_RANK) return 0; /* stays generic */
  if (ir_attr_find(n, "axes")) return imp_fail(im, "axes given both as attribute and input");
  ir_attr_set_ints(im->g, node, "axes", (int)ir_tensor_numel(t), t->data);
  N(im, node)->n_in = 1;
  return 0;
}

static int batchnorm(struct imp *im, int node) {
  const struct ir_attr *a = ir_attr_find(N(im, node), "spatial");
  if (a && a->i == 1) ir_attr_remove(N(im, node), "spatial"); /* spatial = 0 stays: a generic node */
  return 0;
}

/* Dropout in inference is the identity; its optional mask is all true. */
static int dropout(struct imp *im, int node) {
  struct ir_node *n = N(im, node);
  if (n->n_out != 1) return 0;
  if (n->n_in > 2 && n->in[2] >= 0) { /* training_mode (opset 12) */
    const struct ir_tensor *t = &im->g->tensors[n->in[2]];
    if (!t->data || ir_tensor_numel(t) != 1 || ir_load_i64(t->dtype, t->data, 0)) return 0;
  }
  n->op = IR_OP_IDENTITY;
  free(n->type);
  n->type = NULL;
  n->n_in = 1;
  while (n->n_attrs) ir_attr_remove(n, n->attrs[0].name);
  return 0;
}

static void retype(struct imp *im, int node, const char *type, int opset) {
  struct ir_node *n = N(im, node);
  free(n->type);
  n->type = ir_xstrdup(type);
  n->opset = opset;
}

/* Upsample-7 / 9 as Resize-10: X, scales. */
static int upsample(struct imp *im, int node) {
  const struct ir_attr *a = ir_attr_find(N(im, node), "scales");
  if (a) {
    if (N(im, node)->n_in > 1) return imp_fail(im, "scales given both as attribute and input");
    int64_t n = a->n;
    int t = ir_const_add(im->g, NULL, IR_DT_F32, 1, &n, a->floats);
    ir_attr_remove(N(im, node), "scales");
    set_operand(im, node, 1, t);
  }
  if (N(im, node)->n_in != 2) return imp_fail(im, "needs the scales");
  retype(im, node, "Resize", 10);
  return 0;
}

/* TopK-1: k becomes the 1-D operand K. */
static int topk(struct imp *im, int node) {
  int64_t k = ir_attr_int(N(im, node), "k", -1);
  if (!ir_attr_find(N(im, node), "k")) return 0;
  int t = imp_const_i64(im, &k, 1, 0);
  ir_attr_remove(N(im, node), "k");
  set_operand(im, node, 1, t);
  retype(im, node, "TopK", 10);
  return 0;
}

static int generic(struct imp *im, int node) {
  const char *op = N(im, node)->type;
  int opset = N(im, node)->opset;
  if (!strcmp(op, "Dropout")) return dropout(im, node);
  if (!strcmp(op, "Upsample")) return upsample(im, node);
  if (!strcmp(op, "Scatter")) return retype(im, node, "ScatterElements", 11), 0;
  if (!strcmp(op, "TopK") && opset < 10) return topk(im, node);
  if (!strcmp(op, "Slice") && opset < 10) {
    if (ints_to_operand(im, node, "starts", 1) || ints_to_operand(im, node, "ends", 2) ||
        ints_to_operand(im, node, "axes", 3))
      return -1;
    retype(im, node, "Slice", 10);
    return 0;
  }
  if (!strcmp(op, "Split") && opset < 13) {
    if (ints_to_operand(im, node, "split", 1)) return -1;
    retype(im, node, "Split", 13);
    return 0;
  }
  if (!strcmp(op, "ReduceSum") && opset < 13) {
    if (ints_to_operand(im, node, "axes", 1)) return -1;
    retype(im, node, "ReduceSum", 13);
  }
  return 0;
}

int imp_normalize(struct imp *im, int node) {
  switch (N(im, node)->op) {
  case IR_OP_ONNX: return generic(im, node);
  case IR_OP_CLIP: return clip_operands(im, node);
  case IR_OP_UNSQUEEZE: case IR_OP_SQUEEZE: return axes_to_attr(im, node);
  case IR_OP_BATCHNORM: return batchnorm(im, node);
  case IR_OP_SOFTMAX:
    if (im->opset < 13) {
      if (!ir_attr_find(N(im, node), "axis")) ir_attr_set_int(im->g, node, "axis", 1);
      ir_attr_set_int(im->g, node, "legacy_2d", 1);
    }
    return 0;
  default: return 0;
  }
}
