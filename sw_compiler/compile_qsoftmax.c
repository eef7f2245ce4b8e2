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
 * BERT's Softmax adds the attention mask in float first (an Add on the
 * host kernels):
 *
 *   x (int8) -> [views] -> DequantizeLinear -> Add(mask) -> Softmax -> [views] -> QuantizeLinear -> y
 *
 * (the Div by sqrt(d) before the Add is already folded into the scores
 * job's multiplier, so s_x is the scaled scores' step).  When the Add is
 * a host node read only by the Softmax, its other operand a float32 mask
 * whose last dimension is the rows' and whose other dimensions are 1 or
 * the scores', kept ones in one run (mask_form: [1, 1, 1, S], [B, 1, 1,
 * S], [1, 1, S, S], ...), the chain becomes the same int8 Softmax node
 * with the mask as operand 1 and its broadcast as the attribute
 * mask_group: QSOFTMAX's masked form (intapprox.h: the mask turned into
 * integer offsets in steps of s_x, added before the row max).  A mask
 * broadcast along the last axis, or spread over two runs of dimensions,
 * keeps the float form.
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
#include "sw_compiler/pass_fuse.h"

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

/* Node r is a Gather on the host reading float tensor t (operand 0) at
 * constant indices along an axis other than the last: the rows it takes
 * are whole rows of t. */
static int row_gather(const struct ir_graph *g, const enum part_target *targets, int r, int t) {
  const struct ir_node *n = &g->nodes[r];
  if (n->op != IR_OP_GATHER || (targets[r] != PART_HOST && targets[r] != PART_KERNEL) || n->n_in != 2 ||
      n->n_out != 1 || n->in[0] != t || n->in[1] < 0 || n->in[1] == t || !g->tensors[n->in[1]].data)
    return 0;
  int rank = g->tensors[t].rank;
  int64_t axis = ir_attr_int(n, "axis", 0);
  if (axis < 0) axis += rank;
  return axis >= 0 && axis < rank - 1;
}

/* The chain of DequantizeLinear d feeding node s (s's operand 0, or an Add
 * between them, killed by the caller) up to the QuantizeLinear of s's
 * result, through one Gather right before it when `gathers`. */
static int chain_from(const struct ir_graph *g, const enum part_target *targets, int d, int s, int gathers,
                      struct compile_int8_chain *ch) {
  memset(ch, 0, sizeof *ch);
  ch->gather = ch->mid = -1;
  ch->kill[ch->n_kill++] = d;
  if ((ch->x = source_of(g, targets, d, ch)) < 0) return 0;
  for (int t = g->nodes[s].out[0];;) {
    int r = ir_sole_reader(g, t);
    if (r < 0 || ch->n_kill == COMPILE_CHAIN_MAX) return 0;
    if (gathers && ch->gather < 0 && row_gather(g, targets, r, t)) { /* kept: it will read int8 */
      ch->gather = r, ch->mid = t;
      t = g->nodes[r].out[0];
      continue;
    }
    ch->kill[ch->n_kill++] = r;
    if (g->nodes[r].op == IR_OP_QUANTIZELINEAR) {
      ch->y = g->nodes[r].out[0];
      return targets[r] == PART_HOST && int8_per_tensor(&g->tensors[ch->y]) &&
             last_dim(&g->tensors[ch->y]) == last_dim(&g->tensors[ch->x]);
    }
    if (ch->gather >= 0 || !row_view(g, targets, r)) return 0; /* no views after a Gather: it writes y */
    t = g->nodes[r].out[0];
  }
}

/* d is a host DequantizeLinear whose result only `reader` reads. */
static int dq_for(const struct ir_graph *g, const enum part_target *targets, int d, int t, int reader) {
  return d >= 0 && g->nodes[d].op == IR_OP_DEQUANTIZELINEAR && targets[d] == PART_HOST &&
         ir_sole_reader(g, t) == reader;
}

int compile_int8_chain(const struct ir_graph *g, const enum part_target *targets, int s, int gathers,
                       struct compile_int8_chain *ch) {
  const struct ir_node *n = &g->nodes[s];
  int d = ir_producer(g, n->in[0]);
  return dq_for(g, targets, d, n->in[0], s) && chain_from(g, targets, d, s, gathers, ch);
}

void compile_int8_chain_take(struct ir_graph *g, enum part_target *targets, int s, const struct compile_int8_chain *ch) {
  int out = ch->y;
  if (ch->gather >= 0) { /* s writes the Gather's operand as int8 codes of y's quantization */
    float scale = g->tensors[ch->y].quant.scale[0];
    int32_t zp = g->tensors[ch->y].quant.zero_point[0];
    out = fu_like(g, ch->mid, ".q8", IR_DT_I8);
    ir_quant_set(g, out, -1, 1, &scale, &zp);
    g->nodes[ch->gather].in[0] = out, g->nodes[ch->gather].out[0] = ch->y;
  }
  struct ir_node *n = &g->nodes[s];
  n->in[0] = ch->x, n->out[0] = out;
  ir_attr_set_int(g, s, "axis", -1);
  for (int k = 0; k < ch->n_kill; k++) g->nodes[ch->kill[k]].dead = 1, targets[ch->kill[k]] = PART_NONE;
}

/* A Softmax's mask: the float operand of the host Add a (a kernel) that the Softmax
 * reads, the other operand being DQ'd scores of the Add's own shape.  The
 * mask's last dimension is the rows' and the scores' leading dimensions
 * it keeps (not 1) form one run, so that score row r reads mask row
 * (r / group) % mask_rows in C order (BERT's [1, 1, 1, S]: every row the
 * same).  *scores is the Add's operand index of the scores. */
struct mask_form {
  int add, mask, scores; /* nodes and tensors: the Add, the mask tensor, the scores operand (0, 1) */
  int64_t group;
};

static int mask_form(const struct ir_graph *g, const enum part_target *targets, int a, int s, struct mask_form *m) {
  const struct ir_node *n = &g->nodes[a];
  if (n->dead || n->op != IR_OP_ADD || (targets[a] != PART_HOST && targets[a] != PART_KERNEL) || n->n_in != 2 ||
      ir_sole_reader(g, n->out[0]) != s)
    return 0;
  for (m->scores = 0; m->scores < 2; m->scores++) {
    int d = ir_producer(g, n->in[m->scores]);
    if (dq_for(g, targets, d, n->in[m->scores], a)) break;
  }
  if (m->scores == 2) return 0;
  m->add = a, m->mask = n->in[1 - m->scores];
  const struct ir_tensor *x = &g->tensors[n->in[m->scores]], *mk = &g->tensors[m->mask], *y = &g->tensors[n->out[0]];
  if (mk->dtype != IR_DT_F32 || mk->rank < 1 || mk->rank > x->rank || x->rank != y->rank ||
      memcmp(x->dims, y->dims, (size_t)x->rank * sizeof x->dims[0]) || last_dim(mk) != last_dim(x))
    return 0;
  /* leading dimensions from the last row axis up: broadcast (mask 1), kept
   * (equal), then broadcast again; kept ones after that break the form */
  int phase = 0;
  m->group = 1;
  for (int k = x->rank - 2; k >= 0; k--) {
    int j = k - (x->rank - mk->rank);
    int64_t dm = j >= 0 ? mk->dims[j] : 1, dx = x->dims[k];
    if (dx == 1) continue;
    if (dm != dx && dm != 1) return 0;
    int kept = dm == dx;
    if (phase == 0 && kept) phase = 1;
    else if (phase == 1 && !kept) phase = 2;
    else if (phase == 2 && kept) return 0;
    if (phase == 0) m->group *= dx;
  }
  return m->group <= INT32_MAX;
}

/* Softmax node s as a chain, or 0; *m->add >= 0 when it adds a mask. */
static int match(const struct ir_graph *g, const enum part_target *targets, int s, struct compile_int8_chain *ch,
                 struct mask_form *m) {
  const struct ir_node *n = &g->nodes[s];
  m->add = -1;
  if (n->dead || n->op != IR_OP_SOFTMAX || targets[s] != PART_HOST || g->tensors[n->in[0]].dtype != IR_DT_F32) return 0;
  int rank = g->tensors[n->in[0]].rank;
  int64_t axis = ir_attr_int(n, "axis", -1);
  if (rank < 1 || (axis < 0 ? axis + rank : axis) != rank - 1) return 0;
  if (compile_int8_chain(g, targets, s, 0, ch)) return 1;
  int a = ir_producer(g, n->in[0]);
  if (a < 0 || !mask_form(g, targets, a, s, m)) return (m->add = -1, 0);
  const struct ir_node *an = &g->nodes[a];
  if (!chain_from(g, targets, ir_producer(g, an->in[m->scores]), s, 0, ch) || ch->n_kill == COMPILE_CHAIN_MAX)
    return (m->add = -1, 0);
  ch->kill[ch->n_kill++] = a;
  return 1;
}

/* The integer constants of an int8 Softmax from x to y (their scales),
 * with the mask's when `masked`. */
static int params_of(const struct ir_graph *g, int x, int y, int masked, struct loom_isoftmax *s) {
  const struct ir_tensor *tx = &g->tensors[x], *ty = &g->tensors[y];
  if (loom_isoftmax_init(tx->quant.scale[0], ty->quant.scale[0], ty->quant.zero_point[0], s)) return -1;
  return masked ? loom_isoftmax_mask_init(tx->quant.scale[0], s) : 0;
}

int compile_int8_softmax(struct ir_graph *g, enum part_target *targets) {
  int done = 0;
  for (int i = 0; i < g->n_nodes; i++) {
    struct compile_int8_chain ch;
    struct mask_form m;
    struct loom_isoftmax s;
    if (!match(g, targets, i, &ch, &m) || params_of(g, ch.x, ch.y, m.add >= 0, &s)) continue;
    compile_int8_chain_take(g, targets, i, &ch);
    if (m.add >= 0) { /* the mask as operand 1 */
      struct ir_node *n = &g->nodes[i];
      n->in = ir_xrealloc(n->in, 2 * sizeof *n->in);
      n->in[1] = m.mask, n->n_in = 2;
      ir_attr_set_int(g, i, "mask_group", m.group);
    }
    ir_attr_remove(&g->nodes[i], "legacy_2d");
    done++;
  }
  return done;
}

int cl_qsoftmax_step(struct lctx *c, int node) {
  const struct ir_node *n = &c->g->nodes[node];
  struct loom_isoftmax s;
  uint8_t params[4 * LOOM_QSOFTMAX_PARAM_COUNT];
  int masked = n->n_in > 1, in[2] = {cl_desc_of(c, n->in[0]), masked ? cl_desc_of(c, n->in[1]) : 0};
  int y = cl_desc_of(c, n->out[0]);
  if (in[0] < 0 || in[1] < 0 || y < 0) return -1;
  if (params_of(c->g, n->in[0], n->out[0], masked, &s))
    return ir_fail(c->err, c->g, node, "the int8 Softmax's scales are out of range");
  int size = loom_qsoftmax_params(&s, ir_attr_int(n, "mask_group", 1), params);
  cl_host_step(c, LOOM_HOSTOP_QSOFTMAX, in, masked ? 2 : 1, &y, 1, params, (size_t)size);
  cl_host_row(c, node, LOOM_HOSTOP_QSOFTMAX);
  return 0;
}
