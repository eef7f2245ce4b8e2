/*
 * pass_attention_krows.c - which K (or V) WGT rows a projection's job
 * stores itself (attention's Q x K^T and P x V without a host transpose
 * of K or V; V's are made the same way and read transposed, LOAD WGT's
 * wgt_transpose).
 *
 * pass_attention.c makes K's WGT rows, when its heads are whole blocks of
 * B channels and its int8 result [S, C] comes from a projection job, as
 *
 *   QGemm -> [S, C] -> views -> [Slice of columns [c0, c0 + D)] -> views
 *         -> [Concat of zero token rows up to whole blocks] -> [S/B, B, D, 1]
 *         -> Transpose 0 2 1 3 -> [S/B, D, B, 1]
 *
 * whose NCHWc bytes are the WGT rows every head's scores job reads (its
 * channels [h*d, (h+1)*d)).  ir_wgt_rows_store recognises that chain, so
 * the partition makes its nodes views and compile_loom.c lets the QGemm's
 * job store the rows (lower_program_wgt_rows: token y's block b at row
 * (y/B) * (D/B) * B + b * B + y%B).  It must hold that nothing but the
 * chain reads what the job no longer stores in place: each tensor after
 * the Slice (or after the QGemm) is read by the next node alone, and with
 * a Slice (BERT's separate K projection has none; the in_proj result of
 * ViT and nn.TransformerEncoder has Q's and V's columns beside K's) every
 * other reader of the result reads only columns outside [c0, c0 + D):
 * Q's heads (column windows) and the other one's Slice (V's for K, K's
 * for V).  The padding tokens' rows are not stored at all; the runtime
 * zero-fills buffers, and those rows only meet the scores' padded output
 * lanes (K) or P's padded token lanes (V).
 */
#include "sw_compiler/compiler.h"

#include <string.h>

#define CHAIN_MAX 8 /* nodes from the Transpose back to the Slice or the projection */

/* Whether every reader of t (through views keeping its last axis) reads
 * only columns outside [c0, c1) of it: a Slice of the last axis or a
 * head's column window, disjoint; node `skip` is not counted. */
static int reads_outside(const struct ir_graph *g, int t, int64_t c0, int64_t c1, int skip) {
  const struct ir_tensor *x = &g->tensors[t];
  for (int k = 0; k < g->n_outputs; k++)
    if (g->outputs[k] == t) return 0;
  for (int i = 0; i < g->n_nodes; i++) {
    const struct ir_node *n = &g->nodes[i];
    int reads = 0;
    for (int k = 0; k < n->n_in; k++) reads |= n->in[k] == t;
    if (n->dead || !reads || i == skip) continue;
    int64_t s, len = g->tensors[n->out[0]].dims[g->tensors[n->out[0]].rank - 1];
    int axis;
    if (ir_op_is_view(n->op) && n->in[0] == t && g->tensors[n->out[0]].dims[g->tensors[n->out[0]].rank - 1] == x->dims[x->rank - 1]) {
      if (!reads_outside(g, n->out[0], c0, c1, skip)) return 0;
    } else if (n->op == IR_OP_ONNX && n->in[0] == t && ir_plain_slice(g, i, &s) == x->rank - 1) {
      if (s < c1 && s + len > c0) return 0;
    } else if (ir_head_slice_of(g, n->out[0], &s, &axis) == t && axis == 1) {
      if (s < c1 && s + len > c0) return 0;
    } else {
      return 0;
    }
  }
  return 1;
}

int ir_wgt_rows_store(const struct ir_graph *g, int tr, int block, int *nodes, int *n_nodes, int64_t *col0) {
  const int64_t *perm;
  const struct ir_node *n = &g->nodes[tr];
  if (n->dead || n->op != IR_OP_TRANSPOSE || ir_attr_ints(n, "perm", &perm) != 4 || perm[0] || perm[1] != 2 ||
      perm[2] != 1 || perm[3] != 3)
    return -1;
  const struct ir_tensor *x = &g->tensors[n->in[0]]; /* [M/B, B, D, 1] */
  int64_t D = x->dims[2], C = D, rows = x->dims[0] * block, c0 = 0;
  if (x->dtype != IR_DT_I8 || x->dims[1] != block || D % block || x->dims[3] != 1) return -1;
  int chain[CHAIN_MAX], k = 0, t = n->in[0], sliced = -1;
  chain[k++] = tr;
  for (int i = ir_producer(g, t); i >= 0 && k < CHAIN_MAX; i = ir_producer(g, t)) {
    const struct ir_node *m = &g->nodes[i];
    const struct ir_tensor *y = &g->tensors[t];
    if (sliced < 0 && ir_sole_reader(g, t) != chain[k - 1]) return -1;
    if (sliced >= 0 && y->dims[y->rank - 1] != C) return -1; /* views of [..., M, C] keeping the columns */
    if (m->op == IR_OP_QGEMM) { /* the projection: [..., M, C] in token order */
      if (!g->tensors[m->in[1]].data || y->dims[y->rank - 1] != C || ir_tensor_numel(y) != rows * C ||
          (sliced >= 0 && !reads_outside(g, t, c0, c0 + D, sliced)))
        return -1;
      if (nodes) memcpy(nodes, chain, (size_t)k * sizeof *chain), *n_nodes = k;
      if (col0) *col0 = c0;
      return i;
    }
    int64_t s;
    if (sliced < 0 && m->op == IR_OP_CONCAT) { /* zero token rows up to whole blocks: [M, D] then [rows - M, D] */
      const struct ir_tensor *a = &g->tensors[m->in[0]], *z = m->n_in == 2 ? &g->tensors[m->in[1]] : NULL;
      int zero = z && z->data && z->dtype == IR_DT_I8 && z->rank == 2 && z->dims[1] == D;
      for (int64_t e = 0; zero && e < ir_tensor_numel(z); e++) zero = !((const int8_t *)z->data)[e];
      if (!zero || ir_attr_int(m, "axis", 0) || a->rank != 2 || a->dims[1] != D || a->dims[0] + z->dims[0] != rows ||
          a->dims[0] <= rows - block)
        return -1;
      rows = a->dims[0];
    } else if (sliced < 0 && m->op == IR_OP_ONNX && ir_plain_slice(g, i, &s) == y->rank - 1) { /* K's columns of in_proj */
      const struct ir_tensor *a = &g->tensors[m->in[0]];
      if (y->dims[y->rank - 1] != D || s % block || ir_tensor_numel(y) != rows * D) return -1;
      sliced = i, c0 = s, C = a->dims[a->rank - 1];
    } else if (!ir_op_is_view(m->op)) {
      return -1;
    }
    if (sliced < 0 || sliced == i) chain[k++] = i; /* the moves of K alone: nothing at run time */
    t = m->in[0];
  }
  return -1;
}
