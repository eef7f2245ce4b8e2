/*
 * pass_const_fold.c - constant folding.
 *
 * A node is folded when the reference interpreter can compute its results
 * at compile time: its op is marked IR_OPF_FOLDABLE, every operand present
 * is a constant and every result has a known shape.  Shape is special: it
 * only needs its operand's static shape, not its data, which is what turns
 * the Shape -> Gather -> Unsqueeze -> Concat -> Reshape chains exported
 * torch graphs use around Flatten into one constant shape operand.
 *
 * Folding reuses ir_eval_node, so a folded node computes exactly what the
 * interpreter would at run time.  The folded node is dropped and its
 * results become constants; ir_graph_compact then removes whatever became
 * unreachable (DCE cleans up constants only a folded node read).
 *
 * A node whose results would take more than FOLD_MAX_BYTES is left to run
 * time too: a Range or ConstantOfShape of a few hundred megabytes would
 * grow the compile's memory and the .loom by as much, where the step that
 * computes it costs nothing to store.
 *
 * Quantize/Dequantize, Conv, Gemm, MatMul and BatchNormalization are not
 * marked foldable on purpose: their constant operands (weights and their
 * quantization parameters) must reach the quantization and BN-folding
 * passes intact.
 */
#include "sw_compiler/compiler.h"

#include <stdlib.h>
#include <string.h>

#define FOLD_MAX_BYTES (INT64_C(64) << 20)

static int is_const(const struct ir_graph *g, int t) {
  return t < 0 || g->tensors[t].data != NULL;
}

static int static_shape(const struct ir_tensor *t) {
  if (t->rank < 0) return 0;
  for (int i = 0; i < t->rank; i++)
    if (t->dims[i] < 0) return 0;
  return 1;
}

static int foldable(const struct ir_graph *g, const struct ir_node *n) {
  if (!(ir_op_infos[n->op].flags & IR_OPF_FOLDABLE)) return 0;
  int64_t bytes = 0;
  for (int k = 0; k < n->n_out; k++) {
    if (!ir_shape_known(&g->tensors[n->out[k]])) return 0;
    int64_t b = ir_tensor_bytes(&g->tensors[n->out[k]]); /* -1: beyond IR_MAX_TENSOR_BYTES */
    if (b < 0 || (bytes += b) > FOLD_MAX_BYTES) return 0;
  }
  if (n->op == IR_OP_SHAPE) return static_shape(&g->tensors[n->in[0]]) && !g->tensors[n->in[0]].dyn;
  if (n->op == IR_OP_ONNX && !ir_have_kernel(n->type)) return 0; /* left to run time */
  for (int k = 0; k < n->n_in; k++)
    if (!is_const(g, n->in[k])) return 0;
  return 1;
}

/* Evaluates node i and stores its results as constants. */
static int fold_node(struct ir_graph *g, int i, struct ir_error *err) {
  struct ir_node *n = &g->nodes[i];
  const void **in = ir_xcalloc((size_t)n->n_in + 1, sizeof *in);
  void **out = ir_xcalloc((size_t)n->n_out + 1, sizeof *out);
  for (int k = 0; k < n->n_in; k++)
    in[k] = n->in[k] >= 0 && n->op != IR_OP_SHAPE ? g->tensors[n->in[k]].data : NULL;
  if (n->op == IR_OP_SHAPE) in[0] = "";  /* Shape reads no data */
  for (int k = 0; k < n->n_out; k++)
    out[k] = ir_xcalloc(1, (size_t)ir_tensor_bytes(&g->tensors[n->out[k]]));
  int rc = ir_eval_node(g, i, in, out, err);
  for (int k = 0; k < n->n_out; k++) {
    struct ir_tensor *t = &g->tensors[n->out[k]];
    if (!rc) {
      t->data = out[k];
      t->nbytes = (size_t)ir_tensor_bytes(t);
    } else {
      free(out[k]);
    }
  }
  if (!rc) n->dead = 1;
  free(in);
  free(out);
  return rc;
}

int ir_pass_const_fold(struct ir_graph *g, int *changed, struct ir_error *err) {
  int folded = 0;
  for (int i = 0; i < g->n_nodes; i++) {
    if (g->nodes[i].dead || !foldable(g, &g->nodes[i])) continue;
    if (fold_node(g, i, err)) return -1;
    folded++;
  }
  if (folded) ir_graph_compact(g);
  if (changed) *changed = folded > 0;
  return 0;
}
