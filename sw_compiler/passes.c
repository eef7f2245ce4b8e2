/*
 * passes.c - the pass manager.
 *
 * The default pipeline that turns an imported graph into one the lowering
 * can take: shape inference and constant folding alternate until nothing
 * folds any more (folding a Shape makes a Reshape's shape operand constant,
 * which lets inference type the Reshape, which may let the next Shape
 * fold), then a decomposed LayerNorm as one node (pass_layernorm.c), the
 * export-habit rewrites (pass_simplify.c) and
 * BatchNormalization folding, dead code elimination, a last
 * shape inference for the nodes BN folding created, and verification.
 *
 * Data-dependent results (NonZero, Unique, Compress, NonMaxSuppression: the
 * tensor's dyn flag) are declared with a capacity; the runtime learns
 * their real dims when the step runs, but the dims of everything computed
 * from them were fixed at compile time from the capacity.  So such a
 * result may only be a graph output: a node that reads one is refused here,
 * naming both nodes, rather than compiled into wrong numbers.
 * Every stage works on a verified graph; the first error stops the
 * pipeline and is returned as is.
 */
#include "sw_compiler/compiler.h"

#include <stdlib.h>

#define MAX_FOLD_ROUNDS 64

static int check_dynamic(const struct ir_graph *g, struct ir_error *err) {
  int *producer = ir_xcalloc((size_t)g->n_tensors + 1, sizeof *producer);
  ir_producers(g, producer);
  for (int i = 0; i < g->n_nodes; i++) {
    const struct ir_node *n = &g->nodes[i];
    for (int k = 0; !n->dead && k < n->n_in; k++) {
      int t = n->in[k], p = t >= 0 ? producer[t] : -1;
      if (p < 0 || !g->tensors[t].dyn) continue;
      const struct ir_node *pn = &g->nodes[p];
      ir_fail(err, g, i, "operand %%%s is the data-dependent result of node %d '%s' (%s): its size is known only "
              "at run time, and Loom takes such results only as graph outputs", g->tensors[t].name, p,
              pn->name ? pn->name : g->tensors[t].name, ir_node_op(pn));
      free(producer);
      return -1;
    }
  }
  free(producer);
  return 0;
}

int ir_run_default_passes(struct ir_graph *g, struct ir_error *err) {
  if (ir_verify(g, err)) return -1;
  int changed = 1;
  for (int round = 0; changed && round < MAX_FOLD_ROUNDS; round++)
    if (ir_pass_shape_infer(g, err) || ir_pass_const_fold(g, &changed, err)) return -1;
  if (ir_pass_layernorm(g, err) || ir_pass_simplify(g, err) || ir_pass_bn_fold(g, err)) return -1;
  ir_pass_dce(g);
  if (ir_pass_shape_infer(g, err) || check_dynamic(g, err)) return -1;
  return ir_verify(g, err);
}
