/*
 * compile_qsoftmax.c - attention's Softmax as one int8 host step.
 *
 * The accelerator cannot run a Softmax (its vector ALU is lane-wise: no
 * row max, no reciprocal), so it stays on the host.  After fusion the
 * scores arrive as int8 codes and P leaves as int8 codes, with the float
 * form in between:
 *
 *   x (int8) -> [views] -> DequantizeLinear -> Softmax -> [views] -> QuantizeLinear -> y (int8)
 *
 * four host steps in the blocked-scores case (COPY to plain, DEQUANTIZE,
 * SOFTMAX, QUANTIZE) and two float32 tensors.  compile_int8_softmax
 * rewrites each such chain, after partitioning, into one Softmax node of
 * int8 codes, x to y, along the last axis, and kills the rest of the
 * chain; compile_loom emits that node as the host op QSOFTMAX
 * (driver/core/hostops_qsoftmax.h), which reads x in whatever layout the
 * job stored it.  The views looked through are reshapes that keep the
 * last dimension (the rows), each the only reader of its operand: the
 * heads' [H*S, S] scores seen as [H, S, S] and back.  The rewrite needs
 * the Softmax to be along the last axis, every tensor of the chain read
 * only by the next node (a Softmax whose result is also read as float
 * keeps the float form), per-tensor int8 at both ends, and scales the
 * integer form takes (loom_isoftmax_init).
 *
 * The rewritten node is the int8 model: the reference interpreter
 * evaluates an int8 Softmax with the same intapprox.c code as the host op
 * (ir_eval_ref.c), so fsim still equals the fused graph bit for bit; its
 * error against float is intapprox.h's bound (docs/quantization.md).
 */
#include "sw_compiler/compile.h"

#include <string.h>

#include "driver/core/hostops_qsoftmax.h"
#include "sw_compiler/compile_int.h"

static int64_t last_dim(const struct ir_tensor *t) { return t->rank > 0 ? t->dims[t->rank - 1] : -1; }

static int on_host(const enum part_target *targets, int i) {
  return targets[i] == PART_HOST || targets[i] == PART_ALIAS;
}

/* Node i is a reshape on the host (or a free view) that keeps the rows. */
static int row_view(const struct ir_graph *g, const enum part_target *targets, int i) {
  const struct ir_node *n = &g->nodes[i];
  return ir_op_is_view(n->op) && on_host(targets, i) && n->n_in >= 1 && n->n_out == 1 &&
         last_dim(&g->tensors[n->in[0]]) == last_dim(&g->tensors[n->out[0]]) &&
         g->tensors[n->in[0]].dtype == g->tensors[n->out[0]].dtype;
}

static int int8_per_tensor(const struct ir_tensor *t) { return t->dtype == IR_DT_I8 && t->quant.n == 1; }

static int same_quant(const struct ir_tensor *a, const struct ir_tensor *b) {
  return a->quant.n == 1 && b->quant.n == 1 && a->quant.scale[0] == b->quant.scale[0] &&
         a->quant.zero_point[0] == b->quant.zero_point[0];
}

/* The int8 tensor DequantizeLinear d reads, back through row views that
 * only it (or the next view) reads. */
static int source_of(const struct ir_graph *g, const enum part_target *targets, int d, struct compile_int8_chain *ch) {
  int t = g->nodes[d].in[0], reader = d;
  if (!int8_per_tensor(&g->tensors[t])) return -1;
  for (;;) {
    int p = ir_producer(g, t);
    if (p < 0 || ch->n_kill == COMPILE_CHAIN_MAX || !row_view(g, targets, p) || ir_sole_reader(g, t) != reader ||
        !int8_per_tensor(&g->tensors[g->nodes[p].in[0]]) || !same_quant(&g->tensors[g->nodes[p].in[0]], &g->tensors[t]))
      return t;
    ch->kill[ch->n_kill++] = p;
    reader = p, t = g->nodes[p].in[0];
  }
}

int compile_int8_chain(const struct ir_graph *g, const enum part_target *targets, int s, struct compile_int8_chain *ch) {
  const struct ir_node *n = &g->nodes[s];
  int d = ir_producer(g, n->in[0]);
  if (d < 0 || g->nodes[d].op != IR_OP_DEQUANTIZELINEAR || targets[d] != PART_HOST || ir_sole_reader(g, n->in[0]) != s)
    return 0;
  memset(ch, 0, sizeof *ch);
  ch->kill[ch->n_kill++] = d;
  if ((ch->x = source_of(g, targets, d, ch)) < 0) return 0;
  for (int t = n->out[0];;) {
    int r = ir_sole_reader(g, t);
    if (r < 0 || ch->n_kill == COMPILE_CHAIN_MAX) return 0;
    ch->kill[ch->n_kill++] = r;
    if (g->nodes[r].op == IR_OP_QUANTIZELINEAR) {
      ch->y = g->nodes[r].out[0];
      return targets[r] == PART_HOST && int8_per_tensor(&g->tensors[ch->y]) &&
             last_dim(&g->tensors[ch->y]) == last_dim(&g->tensors[ch->x]);
    }
    if (!row_view(g, targets, r)) return 0;
    t = g->nodes[r].out[0];
  }
}

void compile_int8_chain_take(struct ir_graph *g, enum part_target *targets, int s, const struct compile_int8_chain *ch) {
  struct ir_node *n = &g->nodes[s];
  n->in[0] = ch->x, n->out[0] = ch->y;
  ir_attr_set_int(g, s, "axis", -1);
  for (int k = 0; k < ch->n_kill; k++) g->nodes[ch->kill[k]].dead = 1, targets[ch->kill[k]] = PART_NONE;
}

/* Softmax node s as a chain, or 0. */
static int match(const struct ir_graph *g, const enum part_target *targets, int s, struct compile_int8_chain *ch) {
  const struct ir_node *n = &g->nodes[s];
  if (n->dead || n->op != IR_OP_SOFTMAX || targets[s] != PART_HOST || g->tensors[n->in[0]].dtype != IR_DT_F32) return 0;
  int rank = g->tensors[n->in[0]].rank;
  int64_t axis = ir_attr_int(n, "axis", -1);
  if (rank < 1 || (axis < 0 ? axis + rank : axis) != rank - 1) return 0;
  return compile_int8_chain(g, targets, s, ch);
}

/* The integer constants of an int8 Softmax from x to y (their scales). */
static int params_of(const struct ir_graph *g, int x, int y, struct loom_isoftmax *s) {
  const struct ir_tensor *tx = &g->tensors[x], *ty = &g->tensors[y];
  return loom_isoftmax_init(tx->quant.scale[0], ty->quant.scale[0], ty->quant.zero_point[0], s);
}

int compile_int8_softmax(struct ir_graph *g, enum part_target *targets) {
  int done = 0;
  for (int i = 0; i < g->n_nodes; i++) {
    struct compile_int8_chain ch;
    struct loom_isoftmax s;
    if (!match(g, targets, i, &ch) || params_of(g, ch.x, ch.y, &s)) continue;
    compile_int8_chain_take(g, targets, i, &ch);
    ir_attr_remove(&g->nodes[i], "legacy_2d");
    done++;
  }
  return done;
}

int cl_qsoftmax_step(struct lctx *c, int node) {
  const struct ir_node *n = &c->g->nodes[node];
  struct loom_isoftmax s;
  uint8_t params[4 * LOOM_QSOFTMAX_PARAM_COUNT];
  int x = cl_desc_of(c, n->in[0]), y = cl_desc_of(c, n->out[0]);
  if (x < 0 || y < 0) return -1;
  if (params_of(c->g, n->in[0], n->out[0], &s))
    return ir_fail(c->err, c->g, node, "the int8 Softmax's scales are out of range");
  loom_qsoftmax_params(&s, params);
  cl_host_step(c, LOOM_HOSTOP_QSOFTMAX, &x, 1, &y, 1, params, sizeof params);
  cl_host_row(c, node, LOOM_HOSTOP_QSOFTMAX);
  return 0;
}
