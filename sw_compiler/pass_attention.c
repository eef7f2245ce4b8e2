/*
 * pass_attention.c - matmuls of two activations (attention's scores
 * Q x K^T and its weighted values P x V) onto the accelerator.
 *
 * Two rewrites, around quantization:
 *
 *   1. before calibration (ir_pass_split_act_matmul): a float MatMul whose
 *      operands are both activations, a [..., M, K] by a [..., K, N] batch
 *      (the heads: [H, S, S] or [1, H, S, S]), becomes H 2-D MatMuls
 *      of Gather(A, h) and Gather(B, h) (host copies of the slices) whose
 *      results a Concat along the rows and a Reshape (a view) put back.
 *      The quantizer then gives each 2-D MatMul's operands symmetric int8
 *      parameters (zero point 0: the lowering cannot correct the bias by
 *      the runtime operand's sums) and a Q/DQ pair on its result;
 *   2. after fusion (ir_pass_fuse_act_matmul): DQ(a) x DQ(b) -> Q becomes a
 *      loom.QGemm whose weight operand is b itself, an activation, in the
 *      WGT row layout: b [K, N] int8 is padded to whole blocks of N (a
 *      Concat of zeros), viewed as [K, N/B, B], transposed to [N/B, K, B]
 *      and viewed as [N/B, K, B, 1], whose NCHWc layout is exactly the WGT
 *      rows [out block][in block] (lower.h, LOWER_CONV_RUNTIME_WGT).  The
 *      job loads them by DMA at run time; the requantization multiplier is
 *      s_a * s_b / s_y for every output.
 *
 * A MatMul the second rewrite cannot take (uint8 operands, a nonzero zero
 * point, a result not quantized) keeps its Q/DQ and runs on the host
 * kernels in float, as before: the first rewrite alone changes nothing but
 * the batching.  What stays on the host: the slices (Gather), the layout
 * of b (Concat, Transpose on int8), the result's DequantizeLinear and the
 * Concat of the heads.  Folding those into the producers' layouts (K's
 * projection writing the WGT rows directly, docs/lowering.md) is the next
 * step; this pass is where it would go.
 */
#include "sw_compiler/pass_fuse.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SPLIT_MAX 256 /* heads one batched matmul may become */

static int is_activation(const struct ir_graph *g, int t) {
  return t >= 0 && !g->tensors[t].data && g->tensors[t].dtype == IR_DT_F32 && ir_shape_known(&g->tensors[t]);
}

/* The batch of a [..., M, K] x [..., K, N] product: the leading dims'
 * product when both operands have the same ones. */
static int64_t batch_of(const struct ir_tensor *a, const struct ir_tensor *b) {
  int64_t h = 1;
  for (int d = 0; d + 2 < a->rank; d++) {
    if (a->dims[d] != b->dims[d]) return -1;
    h *= a->dims[d];
  }
  return h;
}

/* Node i: a float MatMul of two activations, 2-D (batched: rank > 2, the
 * same leading dims, at most SPLIT_MAX matrices). */
static int act_matmul(const struct ir_graph *g, int i, int batched) {
  const struct ir_node *n = &g->nodes[i];
  if (n->dead || n->op != IR_OP_MATMUL || !is_activation(g, n->in[0]) || !is_activation(g, n->in[1])) return 0;
  const struct ir_tensor *a = &g->tensors[n->in[0]], *b = &g->tensors[n->in[1]];
  if (a->rank != b->rank || (a->rank == 2) == batched) return 0;
  int64_t h = batch_of(a, b);
  return !batched || (h >= 1 && h <= SPLIT_MAX);
}

/* t [..., R, C] as [H, R, C] (a view), inserted at *pos. */
static int as_3d(struct ir_graph *g, int t, int64_t h, int *pos) {
  const struct ir_tensor *x = &g->tensors[t];
  if (x->rank == 3) return t;
  int64_t d[3] = {h, x->dims[x->rank - 2], x->dims[x->rank - 1]}, r = 3;
  int in[2] = {t, ir_const_add(g, NULL, IR_DT_I64, 1, &r, d)}, y = ir_tensor_add(g, NULL, IR_DT_F32, 3, d);
  ir_node_insert(g, (*pos)++, IR_OP_RESHAPE, NULL, 2, in, 1, &y);
  return y;
}

static int slice(struct ir_graph *g, int t, int64_t h, int *pos) {
  const struct ir_tensor *x = &g->tensors[t];
  int64_t d[2] = {x->dims[1], x->dims[2]};
  int it = ir_const_add(g, NULL, IR_DT_I64, 0, NULL, &h), in[2] = {t, it};
  int y = ir_tensor_add(g, NULL, IR_DT_F32, 2, d);
  ir_attr_set_int(g, ir_node_insert(g, (*pos)++, IR_OP_GATHER, NULL, 2, in, 1, &y), "axis", 0);
  return y;
}

static void split(struct ir_graph *g, int i) {
  const struct ir_node *n = &g->nodes[i];
  int a = n->in[0], b = n->in[1], y = n->out[0], pos = i, yr = g->tensors[y].rank;
  int64_t H = batch_of(&g->tensors[a], &g->tensors[b]), ydims[IR_MAX_RANK];
  memcpy(ydims, g->tensors[y].dims, sizeof ydims);
  char *name = n->name ? ir_xstrdup(n->name) : NULL;
  a = as_3d(g, a, H, &pos), b = as_3d(g, b, H, &pos); /* node i is now at pos */
  g->nodes[pos].dead = 1, pos++;
  int64_t M = g->tensors[a].dims[1], N = g->tensors[b].dims[2];
  int *parts = ir_xmalloc((size_t)H * sizeof *parts);
  for (int64_t h = 0; h < H; h++) {
    int64_t yd[2] = {M, N};
    int in[2] = {slice(g, a, h, &pos), slice(g, b, h, &pos)};
    parts[h] = ir_tensor_add(g, NULL, IR_DT_F32, 2, yd);
    ir_node_insert(g, pos++, IR_OP_MATMUL, name, 2, in, 1, &parts[h]);
  }
  int64_t cd[2] = {H * M, N}, sd[1] = {yr};
  int cat = ir_tensor_add(g, NULL, IR_DT_F32, 2, cd), rin[2] = {cat, ir_const_add(g, NULL, IR_DT_I64, 1, sd, ydims)};
  ir_attr_set_int(g, ir_node_insert(g, pos++, IR_OP_CONCAT, NULL, (int)H, parts, 1, &cat), "axis", 0);
  ir_node_insert(g, pos, IR_OP_RESHAPE, NULL, 2, rin, 1, &y);
  free(parts);
  free(name);
}

int ir_pass_split_act_matmul(struct ir_graph *g, struct ir_error *err) {
  for (int i = 0; i < g->n_nodes; i++)
    if (act_matmul(g, i, 1)) split(g, i);
  ir_pass_dce(g);
  return ir_pass_shape_infer(g, err);
}

int ir_is_act_matmul(const struct ir_graph *g, int i) { return act_matmul(g, i, 0); }

/* ---- after fusion: DQ(a) x DQ(b) -> Q as a QGemm with runtime weights ---- */

static int node_at(struct ir_graph *g, int *pos, enum ir_op_kind op, int n_in, const int *in, int y) {
  return ir_node_insert(g, (*pos)++, op, NULL, n_in, in, 1, &y);
}

static int reshaped(struct ir_graph *g, int t, int rank, const int64_t *dims, int *pos) {
  int64_t r = rank;
  int in[2] = {t, ir_const_add(g, NULL, IR_DT_I64, 1, &r, dims)}, y = ir_tensor_add(g, NULL, IR_DT_I8, rank, dims);
  node_at(g, pos, IR_OP_RESHAPE, 2, in, y);
  return y;
}

/* b [K, N] int8 -> [ceil(N/B), K, B, 1], the WGT rows of b^T. */
static int wgt_rows(struct ir_graph *g, int b, int64_t block, int *pos) {
  int64_t K = g->tensors[b].dims[0], N = g->tensors[b].dims[1], nb = (N + block - 1) / block;
  if (nb * block != N) { /* zero columns up to whole blocks */
    int64_t zd[2] = {K, nb * block - N}, pd[2] = {K, nb * block};
    int in[2] = {b, ir_const_add(g, NULL, IR_DT_I8, 2, zd, NULL)}, y = ir_tensor_add(g, NULL, IR_DT_I8, 2, pd);
    ir_attr_set_int(g, node_at(g, pos, IR_OP_CONCAT, 2, in, y), "axis", 1);
    b = y;
  }
  int64_t v[3] = {K, nb, block}, td[3] = {nb, K, block}, perm[3] = {1, 0, 2}, wd[4] = {nb, K, block, 1};
  int x = reshaped(g, b, 3, v, pos), t = ir_tensor_add(g, NULL, IR_DT_I8, 3, td);
  ir_attr_set_ints(g, node_at(g, pos, IR_OP_TRANSPOSE, 1, &x, t), "perm", 3, perm);
  return reshaped(g, t, 4, wd, pos);
}

static int fuse(struct fctx *f, int i, int64_t block) {
  struct ir_graph *g = f->g;
  struct qparam pa, pb;
  struct out_chain oc;
  int a8, b8;
  if (!ir_is_act_matmul(g, i) || !fu_dq_of(g, g->nodes[i].in[0], &a8, &pa) || !fu_dq_of(g, g->nodes[i].in[1], &b8, &pb) ||
      pa.dt != IR_DT_I8 || pb.dt != IR_DT_I8 || pa.zp || pb.zp || !fu_match_output(g, g->nodes[i].out[0], 0, 0, &oc) ||
      oc.p.dt != IR_DT_I8)
    return 0;
  int64_t N = g->tensors[b8].dims[1];
  double real = (double)(pa.scale * pb.scale / oc.p.scale);
  int32_t *mult = ir_xmalloc((size_t)N * sizeof *mult), *zeros = ir_xcalloc((size_t)N, sizeof *zeros);
  uint32_t shift;
  if (quant_multipliers(&real, 1, mult, &shift)) {
    free(mult), free(zeros);
    return 0; /* an extreme scale ratio: stays on the host */
  }
  for (int64_t o = 1; o < N; o++) mult[o] = mult[0];
  char *name = g->nodes[i].name ? ir_xstrdup(g->nodes[i].name) : NULL;
  fu_kill_chain(g, i, &oc);
  int pos = oc.q, w = wgt_rows(g, b8, block, &pos);
  ir_quant_set(g, w, -1, 1, &pb.scale, &pb.zp);
  int64_t od[1] = {N};
  int in[4] = {a8, w, ir_const_add(g, NULL, IR_DT_I32, 1, od, zeros), ir_const_add(g, NULL, IR_DT_I32, 1, od, mult)};
  int y = fu_result_of(g, &oc), node = ir_node_insert(g, pos, IR_OP_QGEMM, name, 4, in, 1, &y);
  fu_set_req_attrs(g, node, 0, &oc, shift);
  free(mult), free(zeros), free(name);
  return 1;
}

int ir_pass_fuse_act_matmul(struct ir_graph *g, int block, struct ir_error *err) {
  struct fctx f = {.g = g, .err = err};
  int n = 0;
  for (int i = 0; i < g->n_nodes; i++)
    if (!g->nodes[i].dead) n += fuse(&f, i, block);
  free(f.conv_from);
  free(f.conv_to);
  if (!n) return 0;
  ir_pass_dce(g);
  return ir_pass_shape_infer(g, err) || ir_verify(g, err) ? -1 : 0;
}
