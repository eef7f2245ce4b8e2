/*
 * pass_partition.c - who runs each node (accelerator, host CPU, nobody) and
 * how each tensor lies in memory.
 *
 * After fusion the graph holds four kinds of work:
 *   - the fused int8 ops (loom.QConv, QGemm, QAdd, QPool): one accelerator
 *     job each;
 *   - host work the runtime's host ops cover (driver/core/hostops.h):
 *     QuantizeLinear and DequantizeLinear with per-tensor parameters,
 *     Softmax on floats, Concat (copies into slices of the result),
 *     Gather of one constant index along axis 0, or along a later axis
 *     with only 1s before it (a copy of that slice: how a batched matmul
 *     feeds its 2-D jobs, and a class token) and Reshape-like ops whose
 *     result cannot share its operand's bytes (a layout repack: copies);
 *   - every other node (a float op without an int8 form, an integer or
 *     shape computation, a Q/DQ per axis, a requantizing MaxPool): the ONNX
 *     op on the portable host kernels (driver/core/kernel.h), in its own
 *     types, as a KERNEL step (compile_kernel.c);
 *   - views: Reshape-like ops whose result is the same bytes as their
 *     operand, which cost nothing at run time; an attention head's rows
 *     of a blocked stacked operand (a slice its job reads in place); a
 *     Concat of heads' results along the rows (each job stores into its
 *     slice of the result); the moves that make K's WGT rows from its
 *     projection's result (ir_wgt_rows_store: the job stores them so).
 * A node whose result has no known shape is refused, naming it: the
 * compiler never emits a model the runtime cannot run.
 *
 * Layouts: every tensor an accelerator op reads or writes is blocked by
 * channels, NCHWc with c = the configuration's block (a rank-2 [N, C]
 * tensor is the same thing with H = W = 1: the runtime's NC layout); all
 * others are plain C order.  Host ops read and write either layout (the
 * runtime converts through tensor.c), so the model's inputs and outputs
 * need no explicit packing step.  A view keeps its operand's layout when
 * the two have the same blocked form (same N, C and spatial size, as for
 * [1,C,1,1] -> [1,C] before a classifier); otherwise it becomes a host
 * repack.
 */
#include "sw_compiler/compiler.h"

#include <stdarg.h>
#include <string.h>

const char *const part_target_names[] = {
    [PART_NONE] = "none",
    [PART_ACCEL] = "accel",
    [PART_HOST] = "host",
    [PART_ALIAS] = "view",
    [PART_KERNEL] = "kernel",
};
_Static_assert(sizeof part_target_names / sizeof part_target_names[0] == PART_COUNT,
               "every partition target needs a name");

struct pctx {
  struct ir_graph *g;
  int block;
  enum part_target *targets;
  struct ir_error *err;
};

static int is_fused(enum ir_op_kind op) {
  return op == IR_OP_QCONV || op == IR_OP_QGEMM || op == IR_OP_QADD || op == IR_OP_QPOOL;
}


static void set_blocked(struct pctx *p, int t) {
  p->g->tensors[t].layout = IR_LAYOUT_NCHWC;
  p->g->tensors[t].layout_block = p->block;
}

static int blocked(const struct ir_tensor *t) { return t->layout == IR_LAYOUT_NCHWC; }

/* N, C and the spatial size of a blocked view of t (rank >= 2). */
static void nc_inner(const struct ir_tensor *t, int64_t v[3]) {
  v[0] = t->dims[0], v[1] = t->dims[1], v[2] = 1;
  for (int i = 2; i < t->rank; i++) v[2] *= t->dims[i];
}

/* Whether a and b, both blocked, are the same bytes (a blocked tensor has
 * rank 4 or 2: NCHWc or NC). */
static int same_blocked_bytes(const struct ir_tensor *a, const struct ir_tensor *b) {
  int64_t x[3], y[3];
  if ((a->rank != 2 && a->rank != 4) || (b->rank != 2 && b->rank != 4)) return 0;
  nc_inner(a, x);
  nc_inner(b, y);
  return !memcmp(x, y, sizeof x);
}

/* An attention head's slice of an int8 operand (ir_head_slice_of): when
 * blocked, its rows are a contiguous range of the operand's bytes (rows:
 * N of [N, C] or [N, C, H, W]) and its columns, in whole channel blocks,
 * a window of every row of [N, C]: a view at an offset. */
static int head_slice(const struct pctx *p, int i) {
  const struct ir_graph *g = p->g;
  const struct ir_node *n = &g->nodes[i];
  int64_t start;
  int axis;
  if (n->dead || n->n_out != 1 || ir_head_slice_of(g, n->out[0], &start, &axis) < 0) return 0;
  const struct ir_tensor *x = &g->tensors[n->in[0]];
  if (axis && (start % p->block || g->tensors[n->out[0]].dims[1] % p->block)) return 0;
  return (x->rank == 2 || x->rank == 4) && x->dtype == IR_DT_I8;
}

static int sole_reader(const struct ir_graph *g, int t, int node) {
  for (int i = 0; i < g->n_outputs; i++)
    if (g->outputs[i] == t) return 0;
  for (int i = 0; i < g->n_nodes; i++)
    for (int k = 0; k < g->nodes[i].n_in && !g->nodes[i].dead; k++)
      if (g->nodes[i].in[k] == t && i != node) return 0;
  return 1;
}

/* A Concat of int8 [N, C] results of accelerator jobs that nothing else
 * reads (an attention's heads): along the rows, each job stores its rows
 * of the blocked result in place; along the columns (each operand whole
 * channel blocks), its column blocks of every row (compile_loom.c). */
static int concat_in_place(const struct pctx *p, int i) {
  const struct ir_graph *g = p->g;
  const struct ir_node *n = &g->nodes[i];
  const struct ir_tensor *y = &g->tensors[n->out[0]];
  int64_t axis = ir_attr_int(n, "axis", 0);
  if (n->dead || n->op != IR_OP_CONCAT || y->rank != 2 || y->dtype != IR_DT_I8 || axis < -2 || axis > 1) return 0;
  for (int k = 0; k < n->n_in; k++) {
    int t = n->in[k], prod = -1;
    if ((axis == 1 || axis == -1) && g->tensors[t].dims[1] % p->block) return 0; /* columns: whole blocks */
    for (int j = 0; j < g->n_nodes && prod < 0; j++)
      if (!g->nodes[j].dead && g->nodes[j].out[0] == t) prod = j;
    if (prod < 0 || p->targets[prod] != PART_ACCEL || g->tensors[t].rank != 2 || !sole_reader(g, t, i)) return 0;
    for (int m = 0; m < k; m++)
      if (n->in[m] == t) return 0;
  }
  return 1;
}

static void mark_accel_layouts(struct pctx *p) {
  const struct ir_graph *g = p->g;
  for (int i = 0; i < g->n_nodes; i++) {
    const struct ir_node *n = &g->nodes[i];
    if (n->dead || !is_fused(n->op)) continue;
    p->targets[i] = PART_ACCEL;
    if (g->tensors[n->out[0]].dtype != IR_DT_I32) set_blocked(p, n->out[0]); /* i32: plain, see compile_loom.c */
    set_blocked(p, n->in[0]);
    if (n->op == IR_OP_QADD || (n->op == IR_OP_QGEMM && !g->tensors[n->in[1]].data)) set_blocked(p, n->in[1]);
    if ((n->op == IR_OP_QCONV || n->op == IR_OP_QGEMM) && n->n_in > 4) set_blocked(p, n->in[4]); /* the residual */
  }
  for (int i = 0; i < g->n_nodes; i++) { /* K's WGT rows, stored by its projection's job */
    int chain[8], k;
    if (ir_wgt_rows_store(g, i, p->block, chain, &k, NULL) < 0) continue;
    while (k--) p->targets[chain[k]] = PART_ALIAS;
    set_blocked(p, g->nodes[i].out[0]);
  }
  for (int i = 0; i < g->n_nodes; i++)
    if (concat_in_place(p, i)) p->targets[i] = PART_ALIAS, set_blocked(p, g->nodes[i].out[0]);
  for (int pass = 0; pass < 2; pass++) /* a blocked side makes both sides blocked, the rows a view */
    for (int k = 0; k < g->n_nodes; k++) {
      int i = pass ? k : g->n_nodes - 1 - k;
      const struct ir_node *n = &g->nodes[i];
      if (!head_slice(p, i) || (!blocked(&g->tensors[n->in[0]]) && !blocked(&g->tensors[n->out[0]]))) continue;
      set_blocked(p, n->in[0]), set_blocked(p, n->out[0]);
      p->targets[i] = PART_ALIAS;
    }
}

/* A view is free when its result can be (or already is) the same bytes. */
static void place_view(struct pctx *p, int i) {
  const struct ir_node *n = &p->g->nodes[i];
  struct ir_tensor *x = &p->g->tensors[n->in[0]], *y = &p->g->tensors[n->out[0]];
  if (!blocked(x) && !blocked(y)) {
    p->targets[i] = PART_ALIAS;
  } else if (blocked(x) && same_blocked_bytes(x, y)) {
    set_blocked(p, n->out[0]);
    p->targets[i] = PART_ALIAS;
  } else {
    p->targets[i] = PART_HOST; /* repack through a plain copy */
  }
}

/* Concat as COPY steps, each operand into a slice of the result: the
 * slices must be contiguous (everything before the axis has size 1) and,
 * when the result is blocked, start on a channel block. */
static int concat_copies(struct pctx *p, int i) {
  const struct ir_node *n = &p->g->nodes[i];
  const struct ir_tensor *y = &p->g->tensors[n->out[0]];
  int64_t axis = ir_attr_int(n, "axis", 0);
  if (axis < 0) axis += y->rank;
  for (int d = 0; d < axis; d++)
    if (y->dims[d] != 1) return 0;
  for (int k = 0; k < n->n_in; k++)
    if (p->g->tensors[n->in[k]].dtype != y->dtype) return 0;
  if (!blocked(y)) return 1;
  if (axis != 1) return 0;
  for (int k = 0; k + 1 < n->n_in; k++)
    if (p->g->tensors[n->in[k]].dims[1] % p->block) return 0;
  return 1;
}

/* Gather as a COPY of one slice: one constant index along an axis of a
 * plain tensor whose dimensions before it are 1 (axis 0, or the class
 * token of a [1, S, D]). */
static int gather_copy(struct pctx *p, int i) {
  const struct ir_node *n = &p->g->nodes[i];
  const struct ir_tensor *ix = &p->g->tensors[n->in[1]], *x = &p->g->tensors[n->in[0]];
  int64_t axis = ir_attr_int(n, "axis", 0);
  if (axis < 0) axis += x->rank;
  if (axis < 0 || axis >= x->rank) return 0;
  for (int d = 0; d < axis; d++)
    if (x->dims[d] != 1) return 0;
  return ix->data && ir_tensor_numel(ix) == 1 && ix->rank <= 1 && !blocked(x);
}

static int per_tensor(const struct ir_graph *g, const struct ir_node *n) {
  return ir_tensor_numel(&g->tensors[n->in[1]]) == 1 &&
         (n->n_in < 3 || n->in[2] < 0 || ir_tensor_numel(&g->tensors[n->in[2]]) == 1);
}

/* A host node: one of the runtime's host ops when it has the op in this
 * form (they read and write blocked tensors and have LLVM code), else the
 * ONNX op on the portable kernels. */
static int place_host(struct pctx *p, int i) {
  const struct ir_graph *g = p->g;
  const struct ir_node *n = &g->nodes[i];
  enum ir_dtype in_dt = n->n_in && n->in[0] >= 0 ? g->tensors[n->in[0]].dtype : IR_DT_UNDEF;
  int hostop = 0;
  switch (n->op) {
  case IR_OP_QUANTIZELINEAR: case IR_OP_DEQUANTIZELINEAR: hostop = per_tensor(g, n); break;
  case IR_OP_SOFTMAX: hostop = in_dt == IR_DT_F32; break;
  case IR_OP_CONCAT: hostop = concat_copies(p, i); break;
  case IR_OP_GATHER: hostop = gather_copy(p, i); break;
  default: break;
  }
  for (int k = 0; k < n->n_out; k++)
    if (!ir_shape_known(&g->tensors[n->out[k]]))
      return ir_fail(p->err, p->g, i, "result %%%s has no known shape (is an input dimension unfixed?)",
                     g->tensors[n->out[k]].name);
  p->targets[i] = hostop ? PART_HOST : PART_KERNEL;
  return 0;
}

int ir_pass_partition_host(struct ir_graph *g, enum part_target *targets, struct ir_error *err) {
  struct pctx p = {.g = g, .block = 1, .targets = targets, .err = err};
  for (int t = 0; t < g->n_tensors; t++) g->tensors[t].layout = IR_LAYOUT_PLAIN;
  for (int i = 0; i < g->n_nodes; i++) {
    const struct ir_node *n = &g->nodes[i];
    targets[i] = PART_NONE;
    if (n->dead || n->op == IR_OP_CONSTANT) continue;
    if (n->op >= IR_OP_QCONV && n->op != IR_OP_ONNX) return ir_fail(err, g, i, "a fused int8 op cannot run on the host");
    if (ir_op_is_view(n->op)) targets[i] = PART_ALIAS;
    else if (place_host(&p, i)) return -1;
    if (targets[i] == PART_HOST) targets[i] = PART_KERNEL; /* nothing is quantized: no scales for the host ops */
  }
  return 0;
}

int ir_pass_partition(struct ir_graph *g, int block, enum part_target *targets, struct ir_error *err) {
  struct pctx p = {.g = g, .block = block, .targets = targets, .err = err};
  for (int t = 0; t < g->n_tensors; t++) g->tensors[t].layout = IR_LAYOUT_PLAIN;
  for (int i = 0; i < g->n_nodes; i++) targets[i] = PART_NONE;
  mark_accel_layouts(&p);
  for (int i = 0; i < g->n_nodes; i++) {
    const struct ir_node *n = &g->nodes[i];
    if (n->dead || targets[i] != PART_NONE) continue;
    if (n->op == IR_OP_CONSTANT) continue; /* folded earlier; nothing to run */
    if (ir_op_is_view(n->op)) place_view(&p, i);
    else if (place_host(&p, i)) return -1;
  }
  return 0;
}
