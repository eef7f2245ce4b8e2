/*
 * ir_eval_host.c - evaluating an IR node through the portable host kernels
 * (driver/core/kernel.h), the same code the runtime runs for a host step.
 *
 * Generic nodes (IR_OP_ONNX) have no evaluator of their own in the
 * compiler: constant folding and calibration run them here, so what the
 * compiler measured is what the runtime computes.  A typed node can run
 * here too, as the ONNX op of its form (ir_kind_opset): that is how a
 * float node the accelerator does not take runs on the host.
 *
 * The node becomes one loom_kcall: operands and results as dense C-order
 * tensors (the IR's own layout), attributes by their ONNX names (Loom's own
 * markers such as legacy_2d are not ONNX's and are left out; ir_kind_opset
 * says which version's semantics they stand for).  A kernel with
 * data-dependent results (LOOM_KERNEL_DYNAMIC) gets the results' dims as a
 * capacity and reports the real ones, which the caller may ask for.
 */
#include "sw_compiler/compiler.h"

#include <stdlib.h>
#include <string.h>

#include "driver/core/kernel.h"

int ir_attr_is_onnx(const struct ir_node *n, const struct ir_attr *a) {
  return n->op == IR_OP_ONNX || strcmp(a->name, "legacy_2d");
}

static void kt_of(const struct ir_tensor *t, void *data, struct loom_kt *k) {
  memset(k, 0, sizeof *k);
  k->dtype = ir_dtype_to_loom(t->dtype);
  k->rank = t->rank;
  memcpy(k->dims, t->dims, (size_t)t->rank * sizeof *k->dims);
  k->data = data;
}

/* The node's attributes as kernel attributes; tensor attributes point into
 * kts (one slot per attribute). */
static int kattrs_of(const struct ir_graph *g, const struct ir_node *n, struct loom_kattr *ka, struct loom_kt *kts) {
  int m = 0;
  for (int i = 0; i < n->n_attrs; i++) {
    const struct ir_attr *a = &n->attrs[i];
    if (!ir_attr_is_onnx(n, a)) continue;
    struct loom_kattr *k = &ka[m++];
    memset(k, 0, sizeof *k);
    k->name = a->name;
    k->n = a->n;
    switch (a->kind) {
    case IR_ATTR_INT: k->kind = LOOM_KATTR_INT, k->i = a->i; break;
    case IR_ATTR_FLOAT: k->kind = LOOM_KATTR_FLOAT, k->f = a->f; break;
    case IR_ATTR_STRING: k->kind = LOOM_KATTR_STRING, k->s = a->s; break;
    case IR_ATTR_INTS: k->kind = LOOM_KATTR_INTS, k->ints = a->ints; break;
    case IR_ATTR_FLOATS: k->kind = LOOM_KATTR_FLOATS, k->floats = a->floats; break;
    case IR_ATTR_STRINGS: k->kind = LOOM_KATTR_STRINGS, k->strings = (const char *const *)a->strs; break;
    case IR_ATTR_TENSOR:
      k->kind = LOOM_KATTR_TENSOR;
      kt_of(&g->tensors[a->tensor], g->tensors[a->tensor].data, &kts[i]);
      k->t = &kts[i];
      break;
    case IR_ATTR_COUNT: LOOM_ASSERT(0);
    }
  }
  return m;
}

int ir_eval_kernel(const struct ir_graph *g, int node, const void *const *in, void *const *out,
                   int64_t (*dims)[IR_MAX_RANK], struct ir_error *err) {
  const struct ir_node *n = &g->nodes[node];
  const char *op = ir_node_op(n);
  const struct loom_kernel *kern = loom_kernel_find(op);
  if (!kern) return ir_fail(err, g, node, "no host kernel for op %s", op);
  struct loom_kt *ki = ir_xcalloc((size_t)n->n_in + 1, sizeof *ki), *ko = ir_xcalloc((size_t)n->n_out + 1, sizeof *ko);
  struct loom_kt *kts = ir_xcalloc((size_t)n->n_attrs + 1, sizeof *kts);
  struct loom_kattr *ka = ir_xcalloc((size_t)n->n_attrs + 1, sizeof *ka);
  for (int k = 0; k < n->n_in; k++)
    if (n->in[k] >= 0) kt_of(&g->tensors[n->in[k]], (void *)in[k], &ki[k]);
  for (int k = 0; k < n->n_out; k++) kt_of(&g->tensors[n->out[k]], out[k], &ko[k]);
  char msg[LOOM_MSG_MAX] = "";
  struct loom_kcall call = {.op = op, .opset = ir_kind_opset(n), .in = ki, .n_in = n->n_in, .out = ko,
                            .n_out = n->n_out, .attrs = ka, .n_attrs = kattrs_of(g, n, ka, kts), .msg = msg};
  loom_status st = loom_kernel_run(&call);
  int rc = st == LOOM_OK ? 0 : ir_fail(err, g, node, "%s", msg[0] ? msg : loom_status_name(st));
  for (int k = 0; !rc && dims && k < n->n_out; k++) memcpy(dims[k], ko[k].dims, sizeof dims[k]);
  free(ki), free(ko), free(kts), free(ka);
  return rc;
}

int ir_have_kernel(const char *op) { return loom_kernel_find(op) != NULL; }
