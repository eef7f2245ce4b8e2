/*
 * pass_dce.c - dead code elimination.
 *
 * A node is live when a graph output or a live node uses one of its
 * results.  Since nodes are in topological order, one backward sweep with
 * use counts finds every dead node: by the time a node is visited, all of
 * its consumers have been, and a dead consumer has already given back its
 * uses.  ir_graph_compact then removes the dead nodes together with the
 * tensors (constants included) nothing refers to any more.  Graph inputs
 * stay even when unused: they are part of the model's interface.
 */
#include "sw_compiler/compiler.h"

#include <stdlib.h>

static int unused(const struct ir_node *n, const int *uses) {
  for (int k = 0; k < n->n_out; k++)
    if (uses[n->out[k]] > 0) return 0;
  return 1;
}

void ir_pass_dce(struct ir_graph *g) {
  int *uses = ir_xmalloc(((size_t)g->n_tensors + 1) * sizeof *uses);
  ir_use_counts(g, uses);
  for (int i = g->n_nodes - 1; i >= 0; i--) {
    struct ir_node *n = &g->nodes[i];
    if (n->dead || !unused(n, uses)) continue;
    n->dead = 1;
    for (int k = 0; k < n->n_in; k++)
      if (n->in[k] >= 0) uses[n->in[k]]--;
  }
  free(uses);
  ir_graph_compact(g);
}
