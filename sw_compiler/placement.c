/*
 * placement.c - where the compiled model's nodes run, and why: the
 * placement summary `loom compile` prints after the per-layer table.
 *
 *   placement                 accel   host  why on the host
 *   Conv                         20      0
 *   Sigmoid                       0      3  no int8 form: float32 on the host kernels
 *   ...
 *   placement: 21 nodes on the accelerator, 5 on the host; 97.4% of MACs on the accelerator
 *
 * Nodes are those of the compiled graph (after folding and fusion), counted
 * under the ONNX op type they compute: a fused int8 convolution counts once,
 * as Conv, with the bias, activation and residual Add it absorbed; the
 * quantize and dequantize steps at the accelerator's boundaries count as
 * host nodes of their own.  Views (a Reshape whose result is its operand's
 * bytes) run nowhere and are not counted; folded constants are gone.  The
 * reason for each host node is derived from the node itself (its op and
 * types) and from why the partition chose the host, so it reads the same
 * for every node of a kind; an op type whose host nodes have different
 * reasons (BERT's float embedding LayerNorm and its int8 QLAYERNORMs) gets
 * a row per reason.  MACs on the accelerator are the lowering's;
 * host MACs are counted for the ops that have them (convolutions, matrix
 * products, recurrent nets are left out: their work is small or unknown
 * here, and the line says MACs of the ops it counts).
 */
#include "sw_compiler/compile.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* Whether int8 pool n averages its whole input plane (to 1x1). */
static int global_pool(const struct ir_graph *g, const struct ir_node *n) {
  const struct ir_tensor *x = &g->tensors[n->in[0]], *y = &g->tensors[n->out[0]];
  const int64_t *k;
  return ir_attr_int(n, "avg", 0) && ir_attr_ints(n, "kernel_shape", &k) == 2 && x->rank == 4 && y->rank == 4 &&
         k[0] == x->dims[2] && k[1] == x->dims[3] && y->dims[2] == 1 && y->dims[3] == 1;
}

/* The ONNX op type a node of the compiled graph stands for. */
static const char *op_of(const struct ir_graph *g, const struct ir_node *n) {
  switch (n->op) {
  case IR_OP_QCONV: {
    const struct ir_attr *act = ir_attr_find(n, "act"); /* a standalone activation table */
    return ir_attr_int(n, "act_only", 0) && act && act->kind == IR_ATTR_STRING ? act->s : "Conv";
  }
  case IR_OP_QGEMM: return g->tensors[n->in[1]].data ? "Gemm" : "MatMul"; /* runtime weights: attention */
  case IR_OP_QADD: return "Add";
  case IR_OP_QPOOL:
    return global_pool(g, n) ? "GlobalAveragePool" : ir_attr_int(n, "avg", 0) ? "AveragePool" : "MaxPool";
  default: return ir_node_op(n);
  }
}

const char *compile_host_reason(const struct ir_graph *g, const enum part_target *targets, int node) {
  const struct ir_node *n = &g->nodes[node];
  enum ir_dtype dt = n->n_in && n->in[0] >= 0 ? g->tensors[n->in[0]].dtype : IR_DT_UNDEF;
  switch (n->op) {
  case IR_OP_QUANTIZELINEAR: case IR_OP_DEQUANTIZELINEAR: return "int8 boundary: (de)quantizes for the accelerator";
  case IR_OP_SOFTMAX:
    if (dt == IR_DT_I8) /* compile_qsoftmax.c */
      return "int8 softmax on the host (integer exp, one reciprocal per row): the ALU has no row max or reciprocal";
    return "no int8 form: float32 softmax on the host";
  case IR_OP_CONCAT: case IR_OP_GATHER: return "data movement: copies on the host";
  case IR_OP_FLATTEN: case IR_OP_RESHAPE: case IR_OP_SQUEEZE: case IR_OP_UNSQUEEZE: case IR_OP_IDENTITY:
    return targets[node] == PART_KERNEL ? "reshape on the host kernels" : "layout change: a copy on the host";
  case IR_OP_CONV: case IR_OP_GEMM: case IR_OP_MATMUL:
    return "float: no int8 lowering for this form (host kernels, float32)";
  default: break;
  }
  if (compile_is_int8_layernorm(g, n))
    return "int8 LayerNorm on the host (integer mean, variance, isqrt): the ALU has no row sum or reciprocal square root";
  if (n->op == IR_OP_ONNX && !strcmp(n->type, "LayerNormalization"))
    return "float LayerNorm: its input or result is not an int8 tensor of the accelerator's (QLAYERNORM needs both)";
  if (dt != IR_DT_UNDEF && !ir_dtype_is_float(dt)) return "integer or shape arithmetic: on the host in its own type";
  if (n->op == IR_OP_ONNX) return "no int8 form: on the host kernels in its own type";
  return "no int8 lowering: on the host kernels in its own type";
}

/* Multiply-accumulates of a host node, for the share line (0 when the op
 * has none or they are not counted). */
static uint64_t host_macs(const struct ir_graph *g, const struct ir_node *n) {
  const char *op = ir_node_op(n);
  if (n->n_out < 1 || !ir_shape_known(&g->tensors[n->out[0]])) return 0;
  const struct ir_tensor *y = &g->tensors[n->out[0]];
  const struct ir_tensor *w = n->n_in > 1 && n->in[1] >= 0 ? &g->tensors[n->in[1]] : NULL;
  const struct ir_tensor *a = n->n_in > 0 && n->in[0] >= 0 ? &g->tensors[n->in[0]] : NULL;
  uint64_t out = (uint64_t)ir_tensor_numel(y);
  if (!w || !a || w->rank < 1 || a->rank < 1) return 0;
  if (!strcmp(op, "Conv") || !strcmp(op, "ConvInteger")) {
    uint64_t k = 1;
    for (int i = 1; i < w->rank; i++) k *= (uint64_t)w->dims[i];
    return out * k;
  }
  if (!strcmp(op, "ConvTranspose")) {
    uint64_t k = (uint64_t)ir_tensor_numel(w) / (uint64_t)(w->dims[0] ? w->dims[0] : 1);
    return (uint64_t)ir_tensor_numel(a) * k;
  }
  if (!strcmp(op, "MatMul") || !strcmp(op, "MatMulInteger")) return out * (uint64_t)a->dims[a->rank - 1];
  if (!strcmp(op, "Gemm")) return out * (uint64_t)(ir_attr_int(n, "transA", 0) ? a->dims[0] : a->dims[1]);
  return 0;
}

struct row {
  const char *op;
  int accel, host;
  const char *why;
};

/* The row of op type `op` that counts a node with host reason `why` (NULL
 * for a node on the accelerator): one row per op type and reason, so two
 * forms of one op (an int8 LayerNorm and a float one) each say their own
 * reason; accelerator nodes count in the op's first row. */
static struct row *row_of(struct row *rows, int *n, const char *op, const char *why) {
  for (int i = 0; i < *n; i++)
    if (!strcmp(rows[i].op, op) && (!why || !rows[i].why || !strcmp(rows[i].why, why))) {
      if (why) rows[i].why = why;
      return &rows[i];
    }
  rows[*n] = (struct row){.op = op, .why = why};
  return &rows[(*n)++];
}

static int cmp_row(const void *a, const void *b) {
  const struct row *x = a, *y = b;
  int c = strcmp(x->op, y->op);
  if (c || x->why == y->why) return c;
  return !x->why ? -1 : !y->why ? 1 : strcmp(x->why, y->why);
}

void compile_placement(const struct compile_result *r, struct compile_placement *p) {
  const struct ir_graph *g = r->graph;
  memset(p, 0, sizeof *p);
  for (int i = 0; i < r->n_layers; i++)
    if (r->layers[i].is_job) p->accel_macs += r->layers[i].report.macs;
  for (int i = 0; r->targets && i < g->n_nodes; i++) {
    if (g->nodes[i].dead) continue;
    if (r->targets[i] == PART_ACCEL) p->accel_nodes++;
    if (r->targets[i] == PART_HOST || r->targets[i] == PART_KERNEL) {
      p->host_nodes++;
      p->host_macs += host_macs(g, &g->nodes[i]);
    }
  }
}

/* The note of a table the host looks up (place_tables.c) that node i is
 * part of, or NULL. */
static const struct compile_host_table *host_table(const struct compile_result *r, int i) {
  for (int k = 0; k < r->n_host_tables; k++)
    if (r->host_tables[k].cast == i || r->host_tables[k].gather == i) return &r->host_tables[k];
  return NULL;
}

/* Whether host node n is an int8 row op: a QSOFTMAX or QLAYERNORM step,
 * which reduces along each row (compile_qsoftmax.c, compile_qlayernorm.c). */
static int int8_row_op(const struct ir_graph *g, const struct ir_node *n) {
  return (n->op == IR_OP_SOFTMAX && g->tensors[n->in[0]].dtype == IR_DT_I8) || compile_is_int8_layernorm(g, n);
}

/* The line "placement: int8 OP on the host: N nodes, B bytes of rows in
 * and out; an accelerator pass's DMA alone >= C cycles (T us at F MHz)" for
 * the int8 row ops of ONNX type `op`: the cost floor of moving them off the
 * host as a separate pass (their rows read from and written back to DRAM at
 * the configuration's bus width, nothing else counted), which the measured
 * host time of the same steps (`loom run --profile-json`) is compared with
 * (make bench-transformers).  Nothing when there are none. */
static void print_row_op_floor(FILE *f, const struct compile_result *r, const char *op) {
  const struct ir_graph *g = r->graph;
  int nodes = 0;
  uint64_t bytes = 0;
  for (int i = 0; r->cfg && i < g->n_nodes; i++) {
    const struct ir_node *n = &g->nodes[i];
    if (n->dead || r->targets[i] != PART_HOST || !int8_row_op(g, n) || strcmp(op_of(g, n), op)) continue;
    nodes++;
    bytes += (uint64_t)ir_tensor_numel(&g->tensors[n->in[0]]) + (uint64_t)ir_tensor_numel(&g->tensors[n->out[0]]);
  }
  if (!nodes) return;
  uint64_t per_cycle = (uint64_t)r->cfg->bus_bits / 8, cycles = (bytes + per_cycle - 1) / per_cycle;
  fprintf(f,
          "placement: int8 %s on the host: %d nodes, %" PRIu64 " bytes of rows in and out; an accelerator pass's DMA "
          "alone >= %" PRIu64 " cycles (%.1f us at %d MHz)\n",
          op, nodes, bytes, cycles, (double)cycles / r->cfg->clock_mhz, r->cfg->clock_mhz);
}

void compile_placement_print(FILE *f, const struct compile_result *r) {
  const struct ir_graph *g = r->graph;
  if (!r->targets) return;
  struct row *rows = ir_xcalloc((size_t)g->n_nodes + 1, sizeof *rows);
  int n = 0;
  for (int i = 0; i < g->n_nodes; i++) {
    enum part_target t = r->targets[i];
    if (g->nodes[i].dead || (t != PART_ACCEL && t != PART_HOST && t != PART_KERNEL)) continue;
    const struct compile_host_table *h = host_table(r, i);
    const char *why = h                                 ? h->why
                      : t == PART_ACCEL                 ? NULL
                      : r->target == COMPILE_TARGET_CPU ? "--target cpu: every node on the host"
                                                        : compile_host_reason(g, r->targets, i);
    struct row *row = row_of(rows, &n, h ? h->act : op_of(g, &g->nodes[i]), why);
    if (why) row->host++;
    else row->accel++;
  }
  qsort(rows, (size_t)n, sizeof *rows, cmp_row);
  fprintf(f, "%-26s %6s %6s  %s\n", "placement", "accel", "host", "why on the host");
  for (int i = 0; i < n; i++)
    fprintf(f, "%-26s %6d %6d  %s\n", rows[i].op, rows[i].accel, rows[i].host, rows[i].host ? rows[i].why : "");
  free(rows);
  struct compile_placement p;
  compile_placement(r, &p);
  uint64_t all = p.accel_macs + p.host_macs;
  fprintf(f, "placement: %d nodes on the accelerator, %d on the host; %.1f%% of MACs on the accelerator\n",
          p.accel_nodes, p.host_nodes, all ? 100.0 * (double)p.accel_macs / (double)all : 0.0);
  print_row_op_floor(f, r, "Softmax");
  print_row_op_floor(f, r, "LayerNormalization");
}
