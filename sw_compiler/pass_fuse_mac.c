/*
 * pass_fuse_mac.c - the multiply-accumulate patterns of the fusion pass
 * (pass_fuse.c describes them all): DQ -> Conv / Gemm -> [act ->] Q,
 * QLinearConv, QLinearMatMul, ConvInteger, MatMulInteger, and batched
 * QLinearMatMul / MatMulInteger split into 2-D ones.  Each gathers a
 * struct mac (integer weights as w - zp, the bias at the accumulator's
 * scale, the per-channel fixed-point multipliers) before it changes the
 * graph, then replaces the pattern by one loom.QConv or loom.QGemm.
 */
#include "sw_compiler/pass_fuse.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "sw_compiler/lower.h"

/* ---- weights, biases, multipliers ---- */

static void mac_free(struct mac *m) {
  free(m->w);
  free(m->s_w);
  free(m->bias);
  free(m->mult);
}

/* Per-channel values of constant t (1 or `o` values), as floats. */
static int channel_values(const struct ir_graph *g, int t, int64_t o, float *out) {
  int64_t n = t >= 0 ? fu_numel_of(g, t) : 1;
  if (t >= 0 && (!fu_is_const(g, t) || (n != 1 && n != o))) return -1;
  for (int64_t i = 0; i < o; i++) out[i] = t >= 0 ? (float)fu_const_at(g, t, n == 1 ? 0 : i) : 0.0f;
  return 0;
}

/* Integer weights wt (zero points zt, scales st or none: 1, per channel
 * along `axis` of a [O][per] (axis 0) or [per][O] (axis 1) view) into
 * m->w [O][per].  w - zp beyond int8 (uint8 weights with a zero point)
 * makes the weights wide: the lowering runs them as int8 passes. */
static int mac_weights(struct fctx *f, struct mac *m, int wt, int st, int zt, int axis) {
  const struct ir_graph *g = f->g;
  const struct ir_tensor *w = &g->tensors[wt];
  if (!fu_is_const(g, wt) || !fu_is_int8ish(w->dtype)) return ir_fail(f->err, f->g, m->node, "weights must be an integer constant");
  int64_t n = fu_numel_of(g, wt);
  m->o = w->dims[axis];
  m->per = m->o ? n / m->o : 0;
  m->w = ir_xmalloc((size_t)n * sizeof *m->w + 1);
  m->s_w = ir_xmalloc((size_t)m->o * sizeof *m->s_w + 1);
  float *zp = ir_xmalloc((size_t)m->o * sizeof *zp + 1);
  int rc = (st >= 0 && channel_values(g, st, m->o, m->s_w)) || channel_values(g, zt, m->o, zp);
  if (rc) free(zp);
  if (rc) return ir_fail(f->err, f->g, m->node, "weight scales and zero points need 1 or %lld values", (long long)m->o);
  for (int64_t o = 0; o < m->o && st < 0; o++) m->s_w[o] = 1.0f; /* ConvInteger, MatMulInteger */
  for (int64_t o = 0; o < m->o; o++)
    for (int64_t k = 0; k < m->per; k++) {
      double v = fu_const_at(g, wt, axis == 0 ? o * m->per + k : k * m->o + o) - zp[o];
      m->wide |= v < -128 || v > 127;
      m->w[o * m->per + k] = (int32_t)v;
    }
  for (int64_t o = 0; o < m->o && !rc; o++)
    if (!(m->s_w[o] > 0) || !isfinite(m->s_w[o])) rc = ir_fail(f->err, f->g, m->node, "weight scales must be positive");
  free(zp);
  m->wrank = w->rank;
  memcpy(m->wdims, w->dims, sizeof m->wdims);
  if (axis == 1) m->wrank = 2, m->wdims[0] = m->o, m->wdims[1] = m->per;
  return rc;
}

/* Accumulator scale of channel o, as the reference forms it. */
static float acc_scale(const struct mac *m, int64_t o) { return m->px.scale * m->s_w[o]; }

static int32_t sat32(double v) {
  v = nearbyint(v);
  return (int32_t)(v < INT32_MIN ? INT32_MIN : v > INT32_MAX ? INT32_MAX : v);
}

/* Bias operand b into m->bias at the accumulator scale: absent, an int32
 * constant already at that scale (QLinearConv's B), a float constant, or
 * DQ of an integer constant (kept exactly when its scale is the
 * accumulator's).  alpha and beta are Gemm's. */
static int mac_bias(struct fctx *f, struct mac *m, int b, int raw_i32, double alpha, double beta) {
  const struct ir_graph *g = f->g;
  m->bias = ir_xcalloc((size_t)m->o + 1, sizeof *m->bias);
  if (b < 0) return 0;
  int di = ir_producer(g, b), bq = b, rc = 0;
  float *sb = ir_xmalloc((size_t)m->o * sizeof *sb + 1), *zb = ir_xcalloc((size_t)m->o + 1, sizeof *zb);
  for (int64_t o = 0; o < m->o; o++) sb[o] = raw_i32 ? acc_scale(m, o) : 1.0f;
  if (!fu_is_const(g, b)) {
    if (di < 0 || g->nodes[di].op != IR_OP_DEQUANTIZELINEAR || !fu_is_const(g, g->nodes[di].in[0])) rc = -1;
    else bq = g->nodes[di].in[0];
    rc = rc || channel_values(g, g->nodes[di].in[1], m->o, sb) ||
         channel_values(g, g->nodes[di].n_in > 2 ? g->nodes[di].in[2] : -1, m->o, zb);
  }
  if (!rc && fu_numel_of(g, bq) != m->o) rc = -1;
  for (int64_t o = 0; o < m->o && !rc; o++) {
    double v = fu_const_at(g, bq, o);
    int exact = g->tensors[bq].dtype == IR_DT_I32 && sb[o] == acc_scale(m, o) && zb[o] == 0 &&
                alpha == 1 && beta == 1;
    m->bias[o] = exact ? (int32_t)v : sat32((v - zb[o]) * sb[o] * beta / (alpha * acc_scale(m, o)));
  }
  free(sb);
  free(zb);
  return rc ? ir_fail(f->err, f->g, m->node, "the bias must be a constant with one value per output channel") : 0;
}

static int mac_multipliers(struct fctx *f, struct mac *m, double alpha) {
  int32_t lo, hi;
  if (m->oc.chs && m->oc.n_chs != m->o)
    return ir_fail(f->err, f->g, m->node, "%lld per-channel output scales for %lld channels", (long long)m->oc.n_chs, (long long)m->o);
  if (fu_chain_clamp(f->g, &m->oc, &lo, &hi))
    return ir_fail(f->err, f->g, m->node, "its ReLU/Clip bound falls on different codes in different channels");
  double *real = ir_xmalloc((size_t)m->o * sizeof *real + 1);
  for (int64_t o = 0; o < m->o; o++)
    real[o] = (double)(acc_scale(m, o) / (m->oc.chs ? m->oc.chs[o] : m->oc.p.scale)) * alpha;
  m->mult = ir_xmalloc((size_t)m->o * sizeof *m->mult + 1);
  int rc = quant_multipliers(real, (int)m->o, m->mult, &m->shift);
  free(real);
  return rc ? ir_fail(f->err, f->g, m->node, "requantization scale s_x * s_w / s_y is out of range") : 0;
}

/* Creates the fused QConv / QGemm of m in place of its chain. */
static void emit_mac(struct fctx *f, struct mac *m, enum ir_op_kind op) {
  struct ir_graph *g = f->g;
  struct conv_attrs ca;
  fu_save_conv_attrs(&g->nodes[m->node], &ca);
  const char *name = g->nodes[m->node].name;
  fu_kill_chain(g, m->node, &m->oc);
  int pos = m->oc.q;
  int x = fu_as_int8(f, m->x, &m->px, &pos);
  int64_t odims[1] = {m->o};
  char *base = ir_xstrdup(g->tensors[m->oc.y].name);
  int w = fu_new_tensor(g, base, ".w", m->wide ? IR_DT_I32 : IR_DT_I8, m->wrank, m->wdims);
  if (m->wide) {
    ir_tensor_set_data(g, w, m->w, (size_t)(m->o * m->per) * sizeof *m->w);
  } else {
    int8_t *w8 = ir_xmalloc((size_t)(m->o * m->per) + 1);
    for (int64_t i = 0; i < m->o * m->per; i++) w8[i] = (int8_t)m->w[i];
    ir_tensor_set_data(g, w, w8, (size_t)(m->o * m->per));
    free(w8);
  }
  int b = fu_new_tensor(g, base, ".bias", IR_DT_I32, 1, odims);
  ir_tensor_set_data(g, b, m->bias, (size_t)m->o * sizeof(int32_t));
  int mu = fu_new_tensor(g, base, ".mult", IR_DT_I32, 1, odims);
  ir_tensor_set_data(g, mu, m->mult, (size_t)m->o * sizeof(int32_t));
  int32_t *zeros = ir_xcalloc((size_t)m->o + 1, sizeof *zeros);
  ir_quant_set(g, w, 0, (int)m->o, m->s_w, zeros);
  free(zeros);
  free(base);
  int y = fu_result_of(g, &m->oc), in[4] = {x, w, b, mu};
  int node = ir_node_insert(g, pos, op, name, 4, in, 1, &y);
  if (op == IR_OP_QCONV) fu_set_conv_attrs(g, node, &ca);
  fu_set_req_attrs(g, node, fu_zp8(&m->px), &m->oc, m->shift);
  fu_finish_result(f, &m->oc, y, node + 1);
}

/* ---- the patterns ---- */

/* A DQ node of per-channel parameters along `axis` (or per-tensor). */
static int weight_dq(const struct ir_graph *g, int t, int axis) {
  int d = ir_producer(g, t);
  if (d < 0 || g->nodes[d].op != IR_OP_DEQUANTIZELINEAR || !fu_is_const(g, g->nodes[d].in[0])) return -1;
  if (fu_numel_of(g, g->nodes[d].in[1]) > 1 && ir_attr_int(&g->nodes[d], "axis", 1) != axis) return -1;
  return d;
}

static int finish_mac(struct fctx *f, struct mac *m, int rc, enum ir_op_kind op) {
  if (!rc) emit_mac(f, m, op);
  mac_free(m);
  return rc ? -1 : 1;
}

/* DQ(x) -> Conv(DQ(w), b) [-> act] -> Q */
int fu_fuse_conv(struct fctx *f, int i) {
  const struct ir_graph *g = f->g;
  const struct ir_node *n = &g->nodes[i];
  struct mac m = {.node = i};
  int d = weight_dq(g, n->in[1], 0);
  if (d < 0 || !fu_dq_of(g, n->in[0], &m.x, &m.px) || !fu_match_output(g, n->out[0], 1, 1, &m.oc)) return 0;
  const struct ir_node *dn = &g->nodes[d];
  int rc = mac_weights(f, &m, dn->in[0], dn->in[1], dn->n_in > 2 ? dn->in[2] : -1, 0) ||
           mac_bias(f, &m, n->n_in > 2 ? n->in[2] : -1, 0, 1, 1) || mac_multipliers(f, &m, 1);
  return finish_mac(f, &m, rc, IR_OP_QCONV);
}

/* The per-tensor parameters of QLinear operands s, z of integer x. */
static int qlinear_param(struct fctx *f, int node, int x, int s, int z, struct qparam *p) {
  const struct ir_graph *g = f->g;
  if (!fu_is_const(g, s) || fu_numel_of(g, s) != 1 || (z >= 0 && (!fu_is_const(g, z) || fu_numel_of(g, z) != 1)))
    return ir_fail(f->err, f->g, node, "activation scales and zero points must be constant scalars");
  p->scale = (float)fu_const_at(g, s, 0);
  p->zp = z >= 0 ? (int32_t)fu_const_at(g, z, 0) : 0;
  p->dt = g->tensors[x].dtype;
  if (!(p->scale > 0) || !isfinite(p->scale)) return ir_fail(f->err, f->g, node, "scales must be positive");
  return 0;
}

/* The operands of QLinearConv / QLinearMatMul: x, xs, xz, w, ws, wz, ys, yz. */
static int qlinear_common(struct fctx *f, int i, struct mac *m, int axis) {
  const struct ir_node *n = &f->g->nodes[i];
  m->x = n->in[0];
  m->oc = (struct out_chain){.act = -1, .q = i, .y = n->out[0]};
  if (qlinear_param(f, i, n->in[0], n->in[1], n->in[2], &m->px) ||
      qlinear_param(f, i, n->out[0], n->in[6], n->in[7], &m->oc.p))
    return -1;
  return mac_weights(f, m, n->in[3], n->in[4], n->in[5], axis);
}

int fu_fuse_qlinear_conv(struct fctx *f, int i) {
  struct mac m = {.node = i};
  const struct ir_node *n = &f->g->nodes[i];
  int rc = qlinear_common(f, i, &m, 0) || mac_bias(f, &m, n->n_in > 8 ? n->in[8] : -1, 1, 1, 1) ||
           mac_multipliers(f, &m, 1);
  return finish_mac(f, &m, rc, IR_OP_QCONV);
}

int fu_fuse_qlinear_matmul(struct fctx *f, int i) {
  const struct ir_graph *g = f->g;
  const struct ir_node *n = &g->nodes[i];
  if (g->tensors[n->in[0]].rank != 2 || g->tensors[n->in[3]].rank != 2)
    return ir_fail(f->err, f->g, i, "only 2-D QLinearMatMul runs on the accelerator");
  struct mac m = {.node = i};
  int rc = qlinear_common(f, i, &m, 1) || mac_bias(f, &m, -1, 0, 1, 1) || mac_multipliers(f, &m, 1);
  return finish_mac(f, &m, rc, IR_OP_QGEMM);
}

/* The input of ConvInteger / MatMulInteger as a quantized tensor of scale
 * 1 with zero point operand z (absent: 0). */
static int integer_param(struct fctx *f, int node, int x, int z, struct qparam *p) {
  const struct ir_graph *g = f->g;
  if (z >= 0 && (!fu_is_const(g, z) || fu_numel_of(g, z) != 1))
    return ir_fail(f->err, f->g, node, "the input zero point must be a constant scalar");
  *p = (struct qparam){1.0f, z >= 0 ? (int32_t)fu_const_at(g, z, 0) : 0, g->tensors[x].dtype};
  return fu_is_int8ish(p->dt) ? 0 : ir_fail(f->err, f->g, node, "the input must be int8 or uint8");
}

/* ConvInteger (x, w, x_zp?, w_zp?) => loom.QConv, MatMulInteger (a, b,
 * a_zp?, b_zp?) => loom.QGemm, with an i32 result: the accumulator
 * sum (x - x_zp) * (w - w_zp), which the accelerator stores as byte lanes. */
int fu_fuse_integer(struct fctx *f, int i, enum ir_op_kind op) {
  const struct ir_graph *g = f->g;
  const struct ir_node *n = &g->nodes[i];
  if (op == IR_OP_QGEMM && (g->tensors[n->in[0]].rank != 2 || g->tensors[n->in[1]].rank != 2))
    return ir_fail(f->err, f->g, i, "only 2-D MatMulInteger runs on the accelerator");
  struct mac m = {.node = i, .x = n->in[0]};
  m.oc = (struct out_chain){.act = -1, .q = i, .y = n->out[0], .p = {1.0f, 0, IR_DT_I32}};
  int rc = integer_param(f, i, m.x, n->n_in > 2 ? n->in[2] : -1, &m.px) ||
           mac_weights(f, &m, n->in[1], -1, n->n_in > 3 ? n->in[3] : -1, op == IR_OP_QCONV ? 0 : 1);
  if (!rc) {
    m.bias = ir_xcalloc((size_t)m.o + 1, sizeof *m.bias);
    m.mult = ir_xcalloc((size_t)m.o + 1, sizeof *m.mult); /* no requantization */
  }
  return finish_mac(f, &m, rc, op);
}

/* A batched QLinearMatMul or MatMulInteger, a [B,M,K] by a constant b
 * [B,K,N] or [K,N], as B 2-D ones on Gather(a, i) (a host copy of the
 * slice) whose results a Concat along the rows and a Reshape (a view)
 * put back together: B accelerator jobs. */
#define UNBATCH_MAX 1024 /* jobs one batched matmul may become */

int fu_unbatch(struct fctx *f, int i) {
  struct ir_graph *g = f->g;
  const struct ir_node *n = &g->nodes[i];
  if (n->op != IR_OP_QLINEARMATMUL && n->op != IR_OP_MATMULINTEGER) return 0;
  int bi = n->op == IR_OP_QLINEARMATMUL ? 3 : 1, ins[8], n_in = n->n_in, y = n->out[0];
  const struct ir_tensor *a = &g->tensors[n->in[0]], *b = &g->tensors[n->in[bi]], *yt = &g->tensors[y];
  if (a->rank == 2 && b->rank == 2) return 0;
  if (a->rank != 3 || (b->rank != 2 && b->rank != 3) || (b->rank == 3 && b->dims[0] != a->dims[0]) ||
      !fu_is_const(g, n->in[bi]) || yt->rank != 3 || n_in > 8)
    return ir_fail(f->err, f->g, i, "only 2-D operands, or a 3-D batch by a constant 2-D or 3-D matrix, run on the accelerator");
  if (a->dims[0] > UNBATCH_MAX) return ir_fail(f->err, f->g, i, "a batch of %lld matrices (at most %d jobs)", (long long)a->dims[0], UNBATCH_MAX);
  enum ir_op_kind op = n->op;
  enum ir_dtype adt = a->dtype, bdt = b->dtype, ydt = yt->dtype;
  int64_t B = a->dims[0], M = a->dims[1], K = a->dims[2], N = yt->dims[2], brank = b->rank;
  memcpy(ins, n->in, (size_t)n_in * sizeof *ins);
  char *name = n->name ? ir_xstrdup(n->name) : NULL;
  int *parts = ir_xmalloc((size_t)B * sizeof *parts), pos = i;
  g->nodes[i].dead = 1;
  for (int64_t k = 0; k < B; k++) {
    int64_t ad[2] = {M, K}, wd[2] = {K, N}, yd[2] = {M, N};
    int it = ir_const_add(g, NULL, IR_DT_I64, 0, NULL, &k), in2[8], gin[2] = {ins[0], it};
    memcpy(in2, ins, sizeof in2);
    in2[0] = ir_tensor_add(g, NULL, adt, 2, ad);
    ir_attr_set_int(g, ir_node_insert(g, pos++, IR_OP_GATHER, NULL, 2, gin, 1, &in2[0]), "axis", 0);
    if (brank == 3)
      in2[bi] = ir_const_add(g, NULL, bdt, 2, wd,
                             (const char *)g->tensors[ins[bi]].data + (size_t)(k * K * N) * ir_dtype_size(bdt));
    parts[k] = ir_tensor_add(g, NULL, ydt, 2, yd);
    ir_node_insert(g, pos++, op, name, n_in, in2, 1, &parts[k]);
  }
  int64_t cd[2] = {B * M, N}, shape[3] = {B, M, N}, sd[1] = {3};
  int cat = ir_tensor_add(g, NULL, ydt, 2, cd), rin[2] = {cat, ir_const_add(g, NULL, IR_DT_I64, 1, sd, shape)};
  ir_attr_set_int(g, ir_node_insert(g, pos++, IR_OP_CONCAT, NULL, (int)B, parts, 1, &cat), "axis", 0);
  ir_node_insert(g, pos, IR_OP_RESHAPE, NULL, 2, rin, 1, &y);
  free(parts);
  free(name);
  return 1;
}

/* DQ(x) -> Gemm(DQ(w), c) [-> act] -> Q, with alpha and beta folded. */
int fu_fuse_gemm(struct fctx *f, int i) {
  const struct ir_graph *g = f->g;
  const struct ir_node *n = &g->nodes[i];
  int tb = ir_attr_int(n, "transB", 0) != 0, d = weight_dq(g, n->in[1], tb ? 0 : 1);
  struct mac m = {.node = i};
  if (ir_attr_int(n, "transA", 0) || d < 0 || !fu_dq_of(g, n->in[0], &m.x, &m.px) ||
      !fu_match_output(g, n->out[0], 1, 1, &m.oc))
    return 0;
  double alpha = ir_attr_float(n, "alpha", 1.0f), beta = ir_attr_float(n, "beta", 1.0f);
  if (!(alpha > 0)) return ir_fail(f->err, f->g, i, "alpha must be positive to run on the accelerator");
  const struct ir_node *dn = &g->nodes[d];
  int rc = mac_weights(f, &m, dn->in[0], dn->in[1], dn->n_in > 2 ? dn->in[2] : -1, tb ? 0 : 1) ||
           mac_bias(f, &m, n->n_in > 2 ? n->in[2] : -1, 0, alpha, beta) ||
           mac_multipliers(f, &m, alpha);
  return finish_mac(f, &m, rc, IR_OP_QGEMM);
}

