/*
 * compile_fuse.c - which accelerator nodes share one job.
 *
 * pass_fuse.c fuses quantized patterns into single IR nodes (loom.QConv,
 * ...), one job each.  Some neighbours also run better as one job than as
 * two, without changing what either computes: the job keeps the
 * intermediate tensor on chip.  The IR stays as it is (each node keeps its
 * meaning, and the reference interpreter evaluates them one by one); only
 * the job assembly (compile_loom.c) asks here whether node i's job takes
 * in the node after it:
 *
 *   QConv -> QPool max 3x3/2   the pooling in the convolution's epilogue
 *                              (lower_conv_pool.c): a stem and its MaxPool
 *
 * The pair qualifies when the QConv's result has no other reader, is not a
 * graph output, both nodes run on the accelerator, and the lowering says
 * the shapes fit (lower_conv_pool_fits()).  If the fused job still does not
 * lower (a tiling that fits nothing), compile_loom.c lowers the two nodes
 * as separate jobs.
 */
#include "sw_compiler/compile.h"

/* The node reading tensor t, when it is the only one and t is no output. */
static int only_reader(const struct ir_graph *g, int t) {
  int user = -1;
  for (int i = 0; i < g->n_outputs; i++)
    if (g->outputs[i] == t) return -1;
  for (int i = 0; i < g->n_nodes; i++)
    for (int k = 0; k < g->nodes[i].n_in; k++)
      if (g->nodes[i].in[k] == t) {
        if (user >= 0 && user != i) return -1;
        user = i;
      }
  return user;
}

static int64_t ints_at(const struct ir_node *n, const char *name, int i, int64_t dflt) {
  const struct ir_attr *a = ir_attr_find(n, name);
  return a && a->kind == IR_ATTR_INTS && i < a->n ? a->ints[i] : dflt;
}

/* The lowering's view of a QConv -> QPool pair, for the fit check. */
static int pool_fits(const struct ir_graph *g, const struct ir_node *conv, const struct ir_node *pool,
                     const struct loom_hw_config *cfg) {
  const struct ir_tensor *x = &g->tensors[conv->in[0]], *w = &g->tensors[conv->in[1]];
  const struct ir_tensor *y = &g->tensors[conv->out[0]];
  if (x->rank != 4 || w->rank != 4 || y->rank != 4 || ir_attr_int(pool, "avg", 0) ||
      y->dtype == IR_DT_I32 || w->dtype == IR_DT_I32 || conv->n_in > 4)
    return 0;
  struct lower_qconv l = {
      .n = (int32_t)x->dims[0], .in_c = (int32_t)x->dims[1], .in_h = (int32_t)x->dims[2],
      .in_w = (int32_t)x->dims[3], .out_c = (int32_t)w->dims[0], .k_h = (int32_t)w->dims[2],
      .k_w = (int32_t)w->dims[3], .stride_h = (int32_t)ints_at(conv, "strides", 0, 1),
      .stride_w = (int32_t)ints_at(conv, "strides", 1, 1), .pad_t = (int32_t)ints_at(conv, "pads", 0, 0),
      .pad_l = (int32_t)ints_at(conv, "pads", 1, 0), .pad_b = (int32_t)ints_at(conv, "pads", 2, 0),
      .pad_r = (int32_t)ints_at(conv, "pads", 3, 0), .dil_h = (int32_t)ints_at(conv, "dilations", 0, 1),
      .dil_w = (int32_t)ints_at(conv, "dilations", 1, 1), .groups = (int32_t)ir_attr_int(conv, "group", 1),
  };
  struct lower_qpool p = {
      .kind = LOWER_POOL_MAX, .n = (int32_t)y->dims[0], .c = (int32_t)y->dims[1], .in_h = (int32_t)y->dims[2],
      .in_w = (int32_t)y->dims[3], .k_h = (int32_t)ints_at(pool, "kernel_shape", 0, 1),
      .k_w = (int32_t)ints_at(pool, "kernel_shape", 1, 1), .stride_h = (int32_t)ints_at(pool, "strides", 0, 1),
      .stride_w = (int32_t)ints_at(pool, "strides", 1, 1), .pad_t = (int32_t)ints_at(pool, "pads", 0, 0),
      .pad_l = (int32_t)ints_at(pool, "pads", 1, 0), .pad_b = (int32_t)ints_at(pool, "pads", 2, 0),
      .pad_r = (int32_t)ints_at(pool, "pads", 3, 0),
  };
  return lower_conv_pool_fits(cfg, &l, &p);
}

int compile_fuse_next(const struct ir_graph *g, const enum part_target *targets,
                      const struct loom_hw_config *cfg, int node) {
  const struct ir_node *n = &g->nodes[node];
  if (n->op != IR_OP_QCONV || targets[node] != PART_ACCEL) return -1;
  int next = only_reader(g, n->out[0]);
  if (next < 0 || targets[next] != PART_ACCEL || g->nodes[next].op != IR_OP_QPOOL) return -1;
  return pool_fits(g, n, &g->nodes[next], cfg) ? next : -1;
}
