/*
 * compile_fuse.c - which accelerator nodes share one job.
 *
 * pass_fuse.c fuses quantized patterns into single IR nodes (loom.QConv,
 * ...), one job each.  Some neighbours also run better as one job than as
 * several, without changing what any of them computes: the job keeps the
 * intermediate tensors on chip.  The IR stays as it is (each node keeps its
 * meaning, and the reference interpreter evaluates them one by one); only
 * the job assembly (compile_loom.c) asks here which nodes join node i's
 * job:
 *
 *   QConv -> QPool max 3x3/2   the pooling in the convolution's epilogue
 *                              (lower_conv_pool.c): a stem and its MaxPool
 *   QConv 1x1 -> QConv depthwise -> QConv 1x1 [+ Add of the first one's
 *   input], or depthwise -> 1x1                (lower_chain.c): MobileNet's
 *                              inverted residual blocks
 *
 * Every intermediate tensor must have the next node as its only reader and
 * be no graph output, and every node must run on the accelerator.  A pool
 * fuses whenever the lowering says the shapes fit
 * (lower_conv_pool_fits()).  A chain is the cost model's decision: the
 * fused job's estimate against the separate jobs' (for a three-node chain,
 * against the expansion alone followed by the better of the two-node chain
 * and two jobs), since recomputing the halo rows of the expansion can cost
 * more than the DRAM traffic it saves.  COMPILE_NO_CHAIN turns chains off.
 * If the fused job still does not lower, compile_loom.c lowers the nodes as
 * separate jobs.
 */
#include "sw_compiler/compile.h"

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
      y->dtype == IR_DT_I32 || w->dtype == IR_DT_I32 || conv->n_in > 4 || ir_attr_find(conv, "lut"))
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

/* ---- chains of convolutions ---- */

/* (and no activation table: the chain's job has one LUT row, its items
 * their own epilogues) */
static int weights_int8(const struct ir_graph *g, const struct ir_node *n) {
  return !ir_attr_find(n, "lut") && g->tensors[n->in[1]].dtype != IR_DT_I32 && g->tensors[n->out[0]].dtype != IR_DT_I32 &&
         g->tensors[n->in[1]].rank == 4;
}

/* A 1x1 stride-1 unpadded dense QConv (no residual unless `res_ok`). */
static int pointwise(const struct ir_graph *g, const struct ir_node *n, int res_ok) {
  if (n->op != IR_OP_QCONV || !weights_int8(g, n) || (n->n_in > 4 && !res_ok)) return 0;
  const struct ir_tensor *w = &g->tensors[n->in[1]];
  return w->dims[2] == 1 && w->dims[3] == 1 && ir_attr_int(n, "group", 1) == 1 && ints_at(n, "strides", 0, 1) == 1 &&
         ints_at(n, "strides", 1, 1) == 1 && !ints_at(n, "pads", 0, 0) && !ints_at(n, "pads", 1, 0) &&
         !ints_at(n, "pads", 2, 0) && !ints_at(n, "pads", 3, 0);
}

static int depthwise(const struct ir_graph *g, const struct ir_node *n) {
  if (n->op != IR_OP_QCONV || !weights_int8(g, n) || n->n_in > 4) return 0;
  int64_t c = g->tensors[n->in[0]].dims[1];
  return ir_attr_int(n, "group", 1) == c && g->tensors[n->in[1]].dims[0] == c && c > 1;
}

/* The accelerator node that alone reads node's result, or -1. */
static int next_accel(const struct ir_graph *g, const enum part_target *targets, int node) {
  int next = ir_sole_reader(g, g->nodes[node].out[0]);
  return next >= 0 && targets[next] == PART_ACCEL ? next : -1;
}

uint64_t compile_job_cycles(const struct ir_graph *g, const struct loom_hw_config *cfg, unsigned flags, int n,
                            const int *nodes) {
  struct compile_fusion f = {n, {0}};
  for (int i = 0; i < n; i++) f.nodes[i] = nodes[i];
  struct lower_program p;
  struct compile_layer row;
  struct ir_error e;
  uint64_t c = compile_layer(g, &f, cfg, flags, &p, &row, &e) ? UINT64_MAX : p.report.est_cycles;
  lower_program_free(&p);
  return c;
}

static uint64_t sum2(uint64_t a, uint64_t b) { return a == UINT64_MAX || b == UINT64_MAX ? UINT64_MAX : a + b; }

/* depthwise d -> 1x1 p as one job, when it beats two. */
static int chain2_pays(const struct ir_graph *g, const struct loom_hw_config *cfg, unsigned flags, int d, int p,
                       uint64_t *best) {
  int both[2] = {d, p};
  uint64_t fused = compile_job_cycles(g, cfg, flags, 2, both);
  uint64_t apart = sum2(compile_job_cycles(g, cfg, flags, 1, &d), compile_job_cycles(g, cfg, flags, 1, &p));
  *best = fused < apart ? fused : apart;
  return fused < apart;
}

static void plan_chain(const struct ir_graph *g, const enum part_target *targets, const struct loom_hw_config *cfg,
                       unsigned flags, int node, struct compile_fusion *f) {
  const struct ir_node *n = &g->nodes[node];
  uint64_t rest;
  if (depthwise(g, n)) { /* depthwise -> 1x1 (the 1x1 without a residual: it would read another tensor) */
    int p = next_accel(g, targets, node);
    if (p >= 0 && pointwise(g, &g->nodes[p], 0) && chain2_pays(g, cfg, flags, node, p, &rest))
      f->n = 2, f->nodes[1] = p;
    return;
  }
  if (!pointwise(g, n, 0)) return;
  int d = next_accel(g, targets, node);
  if (d < 0 || !depthwise(g, &g->nodes[d])) return;
  int p = next_accel(g, targets, d);
  if (p < 0 || !pointwise(g, &g->nodes[p], 1)) return;
  if (g->nodes[p].n_in > 4 && g->nodes[p].in[4] != n->in[0]) return; /* the Add reads the chain's input */
  int all[3] = {node, d, p};
  uint64_t fused = compile_job_cycles(g, cfg, flags, 3, all);
  if (fused == UINT64_MAX) return;
  if (g->nodes[p].n_in > 4) rest = sum2(compile_job_cycles(g, cfg, flags, 1, &d), compile_job_cycles(g, cfg, flags, 1, &p));
  else chain2_pays(g, cfg, flags, d, p, &rest);
  if (fused < sum2(compile_job_cycles(g, cfg, flags, 1, &node), rest)) f->n = 3, f->nodes[1] = d, f->nodes[2] = p;
}

void compile_fuse_plan(const struct ir_graph *g, const enum part_target *targets, const struct loom_hw_config *cfg,
                       unsigned flags, int node, struct compile_fusion *f) {
  const struct ir_node *n = &g->nodes[node];
  f->n = 1, f->nodes[0] = node;
  if (n->op != IR_OP_QCONV || targets[node] != PART_ACCEL) return;
  int next = next_accel(g, targets, node);
  if (next >= 0 && g->nodes[next].op == IR_OP_QPOOL) {
    if (pool_fits(g, n, &g->nodes[next], cfg)) f->n = 2, f->nodes[1] = next;
    return;
  }
  if (!(flags & COMPILE_NO_CHAIN)) plan_chain(g, targets, cfg, flags, node, f);
}

int compile_chain_layer(const struct ir_graph *g, const struct compile_fusion *f, const struct loom_hw_config *cfg,
                        unsigned flags, const char *where, struct lower_program *p, char *msg) {
  struct compile_conv c[COMPILE_FUSE_MAX];
  int ok = 0;
  while (ok < f->n && !compile_conv_params(g, &g->nodes[f->nodes[ok]], flags & ~COMPILE_IM2COL, where, &c[ok], msg))
    ok++;
  int rc = -1;
  if (ok == f->n) {
    struct lower_qchain ch = {f->n == 3 ? &c[0].l : NULL, &c[f->n - 2].l, &c[f->n - 1].l};
    rc = lower_chain(cfg, &ch, where, p, msg);
  }
  for (int i = 0; i < ok; i++) compile_conv_free(&c[i]);
  return rc;
}
