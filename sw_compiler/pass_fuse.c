/*
 * pass_fuse.c - fusion of quantized patterns into the accelerator's ops.
 *
 * Input: a graph in QDQ form (from pass_quantize.c or a quantized ONNX
 * model), possibly with QLinearConv / QLinearMatMul nodes.  Output: the
 * same computation with every pattern the accelerator runs replaced by one
 * fused int8 op (ir.h gives their exact integer semantics):
 *
 *   DQ(x) -> Conv(DQ(w), bias) [-> Relu | Clip] -> Q        => loom.QConv
 *   QLinearConv                                             => loom.QConv
 *   DQ(x) -> Gemm(DQ(w), bias) [-> Relu | Clip] -> Q        => loom.QGemm
 *   DQ(x) -> MatMul(DQ(w)) [-> Add(bias)] ...               (first made a Gemm)
 *   QLinearMatMul                                           => loom.QGemm
 *   ConvInteger, MatMulInteger                              => QConv, QGemm with an i32 result
 *   a batched (3-D) QLinearMatMul / MatMulInteger           => Gather + 2-D ones + Concat
 *   DQ(a), DQ(b) -> Add [-> Relu | Clip] -> Q               => loom.QAdd
 *   DQ(x) -> MaxPool | AveragePool | GlobalAveragePool -> Q => loom.QPool
 *
 * The rewrites run in this order, each over the whole graph:
 *   1. DequantizeLinear moves below Reshape-like ops and Concat, which then
 *      work on the integers (their int8 form is the same bytes);
 *   2. Q(DQ(x)) with equal parameters cancels to x;
 *   3. the patterns above;
 *   4. cancellation again;
 *   5. a QAdd whose operand is a QConv read by nothing else becomes that
 *      QConv's residual operand (one job instead of two, same numbers).
 * Whatever is left (a DQ before a Softmax, the Q of a model input) is host
 * work for pass_partition.c.
 *
 * The arithmetic of a fused op: the accumulator holds sum w * (x - x_zp) at
 * scale s_x * s_w[o]; the bias is brought to that scale; the requantization
 * multiplier s_x * s_w[o] / s_y becomes a 31-bit fixed-point number with a
 * shift shared by all channels (quant_multipliers; the ISA has one shift
 * register).  The float multiplier is formed the way onnxruntime and the
 * reference interpreter form it, (s_x * s_w) / s_y in float32, so QLinear
 * models agree with them except within 2^-24 of a rounding tie.  A ReLU or
 * Clip becomes the clamp of the requantization, in the output's int8 codes.
 *
 * uint8: the accelerator computes in int8.  A uint8 tensor with zero point
 * z is the int8 tensor with zero point z - 128 (the same reals), so a fused
 * op reads uint8 data through a Q(DQ(.)) conversion and writes uint8 data
 * through one (host steps; a chain of uint8 layers converts once, since the
 * conversion of a conversion looks through to the int8 original).  Weights
 * with a zero point are stored as w - zp; when some w - zp is beyond int8
 * (uint8 weights) the weight tensor is i32 and the lowering runs it as a
 * sum of int8 passes.  The Integer ops' inputs are quantized tensors of
 * scale 1, so the same conversion and zero-point folding serve them.
 */
#include "sw_compiler/compiler.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "sw_compiler/lower.h"

struct qparam {
  float scale;
  int32_t zp;
  enum ir_dtype dt; /* of the integer tensor: I8 or U8 */
};

struct fctx {
  struct ir_graph *g;
  struct ir_error *err;
  int *conv_from, *conv_to; /* uint8 tensor -> its int8 form */
  int n_conv, cap_conv;
};

/* An op's result chain: [activation ->] QuantizeLinear. */
struct out_chain {
  int act, q;   /* nodes (act -1 when none) */
  int y;        /* the quantized result */
  struct qparam p;
  const float *chs; /* per-channel scales (axis 1) of a per-axis Q, else NULL */
  int64_t n_chs;
};

/* What a fused QConv / QGemm needs, gathered before the graph changes. */
struct mac {
  int node;               /* the op matched (attributes are copied from it) */
  int x;                  /* integer input (may still be uint8) */
  struct qparam px;
  int32_t *w;             /* [o][per]: w - zp */
  int wide;               /* some w - zp is beyond int8: an i32 weight tensor */
  int wrank;
  int64_t wdims[4], o, per;
  float *s_w;             /* [o] */
  int32_t *bias, *mult;   /* [o] */
  uint32_t shift;
  struct out_chain oc;
};

/* ---- graph queries (dead nodes do not count) ---- */

static int producer(const struct ir_graph *g, int t) {
  for (int i = 0; t >= 0 && i < g->n_nodes; i++)
    if (!g->nodes[i].dead)
      for (int k = 0; k < g->nodes[i].n_out; k++)
        if (g->nodes[i].out[k] == t) return i;
  return -1;
}

static int sole_user(const struct ir_graph *g, int t) {
  int user = -1;
  for (int i = 0; i < g->n_outputs; i++)
    if (g->outputs[i] == t) return -1;
  for (int i = 0; i < g->n_nodes; i++) {
    if (g->nodes[i].dead) continue;
    for (int k = 0; k < g->nodes[i].n_in; k++)
      if (g->nodes[i].in[k] == t) {
        if (user >= 0 && user != i) return -1;
        user = i;
      }
  }
  return user;
}

static int is_const(const struct ir_graph *g, int t) { return t >= 0 && g->tensors[t].data; }
static int is_int8ish(enum ir_dtype dt) { return dt == IR_DT_I8 || dt == IR_DT_U8; }
static int64_t numel_of(const struct ir_graph *g, int t) { return ir_tensor_numel(&g->tensors[t]); }

static double const_at(const struct ir_graph *g, int t, int64_t i) {
  const struct ir_tensor *x = &g->tensors[t];
  switch (x->dtype) {
  case IR_DT_F32: return ((const float *)x->data)[i];
  case IR_DT_I8: return ((const int8_t *)x->data)[i];
  case IR_DT_U8: return ((const uint8_t *)x->data)[i];
  case IR_DT_I32: return ((const int32_t *)x->data)[i];
  case IR_DT_I64: return (double)((const int64_t *)x->data)[i];
  default: LOOM_ASSERT(0); return 0;
  }
}

/* Per-tensor parameters of a Q or DQ node (scale operand 1, zp operand 2
 * or absent); 0 when they are not constant scalars. */
static int scalar_qparams(const struct ir_graph *g, const struct ir_node *n, struct qparam *p) {
  int s = n->in[1], z = n->n_in > 2 ? n->in[2] : -1;
  if (!is_const(g, s) || numel_of(g, s) != 1 || (z >= 0 && (!is_const(g, z) || numel_of(g, z) != 1)))
    return 0;
  p->scale = (float)const_at(g, s, 0);
  p->zp = z >= 0 ? (int32_t)const_at(g, z, 0) : 0;
  if (n->op == IR_OP_QUANTIZELINEAR) p->dt = z >= 0 ? g->tensors[z].dtype : IR_DT_U8;
  else p->dt = g->tensors[n->in[0]].dtype;
  return is_int8ish(p->dt) && p->scale > 0 && isfinite(p->scale);
}

/* t = DQ(x) with per-tensor parameters: *x and *p. */
static int dq_of(const struct ir_graph *g, int t, int *x, struct qparam *p) {
  int i = producer(g, t);
  if (i < 0 || g->nodes[i].op != IR_OP_DEQUANTIZELINEAR || !scalar_qparams(g, &g->nodes[i], p)) return 0;
  *x = g->nodes[i].in[0];
  return 1;
}

static int same_qparam(const struct qparam *a, const struct qparam *b) {
  return a->scale == b->scale && a->zp == b->zp && a->dt == b->dt;
}

/* The int8 zero point of parameters p (uint8 moves by 128). */
static int32_t zp8(const struct qparam *p) { return p->dt == IR_DT_U8 ? p->zp - 128 : p->zp; }

static struct qparam as_i8(struct qparam p) {
  p.zp = zp8(&p);
  p.dt = IR_DT_I8;
  return p;
}

/* ---- building ---- */

static int new_tensor(struct ir_graph *g, const char *base, const char *suffix, enum ir_dtype dt,
                      int rank, const int64_t *dims) {
  char name[256];
  snprintf(name, sizeof name, "%s%s", base, suffix);
  int t = ir_tensor_add(g, name, dt, rank, dims);
  return t >= 0 ? t : ir_tensor_add(g, NULL, dt, rank, dims);
}

static int like(struct ir_graph *g, int t, const char *suffix, enum ir_dtype dt) {
  struct ir_tensor x = g->tensors[t];
  char *base = ir_xstrdup(x.name);
  int y = new_tensor(g, base, suffix, dt, x.rank, x.dims);
  free(base);
  return y;
}

static void set_quant(struct ir_graph *g, int t, const struct qparam *p) {
  ir_quant_set(g, t, -1, 1, &p->scale, &p->zp);
}

/* Inserts Q or DQ (op) of `in` with parameters p, writing `out`, at *pos. */
static void insert_qdq(struct ir_graph *g, enum ir_op_kind op, int in, int out, const struct qparam *p,
                       int *pos) {
  int s = ir_const_add(g, NULL, IR_DT_F32, 0, NULL, &p->scale);
  int z = ir_const_add(g, NULL, p->dt, 0, NULL, NULL);
  if (p->dt == IR_DT_U8) *(uint8_t *)g->tensors[z].data = (uint8_t)p->zp;
  else *(int8_t *)g->tensors[z].data = (int8_t)p->zp;
  int ins[3] = {in, s, z};
  ir_node_insert(g, *pos, op, NULL, 3, ins, 1, &out);
  (*pos)++;
  if (op == IR_OP_QUANTIZELINEAR) set_quant(g, out, p);
}

static int find_conv(const struct fctx *f, int t) {
  for (int i = 0; i < f->n_conv; i++)
    if (f->conv_from[i] == t) return f->conv_to[i];
  return -1;
}

static void note_conv(struct fctx *f, int from, int to) {
  if (f->n_conv == f->cap_conv) {
    f->cap_conv = f->cap_conv ? 2 * f->cap_conv : 16;
    f->conv_from = ir_xrealloc(f->conv_from, (size_t)f->cap_conv * sizeof(int));
    f->conv_to = ir_xrealloc(f->conv_to, (size_t)f->cap_conv * sizeof(int));
  }
  f->conv_from[f->n_conv] = from;
  f->conv_to[f->n_conv++] = to;
}

/* The int8 form of integer tensor t (parameters p); conversion nodes go
 * in at *pos.  uint8 data produced by Q(DQ(y)) of an int8 y with the
 * matching zero point is y itself. */
static int as_int8(struct fctx *f, int t, const struct qparam *p, int *pos) {
  struct ir_graph *g = f->g;
  if (g->tensors[t].dtype == IR_DT_I8) {
    if (!g->tensors[t].quant.n) set_quant(g, t, p);
    return t;
  }
  int y = find_conv(f, t), x, qi = producer(g, t);
  if (y >= 0) return y;
  if (!g->tensors[t].quant.n) set_quant(g, t, p); /* the host conversion reads it */
  struct qparam q8 = as_i8(*p), pq, px;
  if (qi >= 0 && g->nodes[qi].op == IR_OP_QUANTIZELINEAR && scalar_qparams(g, &g->nodes[qi], &pq) &&
      same_qparam(&pq, p) && dq_of(g, g->nodes[qi].in[0], &x, &px) && same_qparam(&px, &q8)) {
    note_conv(f, t, x);
    return x;
  }
  int fl = qi >= 0 && g->nodes[qi].op == IR_OP_QUANTIZELINEAR && same_qparam(&pq, p) ? g->nodes[qi].in[0] : -1;
  if (fl < 0) {
    fl = like(g, t, ".f", IR_DT_F32);
    insert_qdq(g, IR_OP_DEQUANTIZELINEAR, t, fl, p, pos);
  }
  y = like(g, t, ".i8", IR_DT_I8);
  insert_qdq(g, IR_OP_QUANTIZELINEAR, fl, y, &q8, pos);
  note_conv(f, t, y);
  return y;
}

/* ---- result chains ---- */

static int is_act_fn(const struct ir_graph *g, const struct ir_node *n) {
  if (n->op == IR_OP_RELU) return 1;
  if (n->op != IR_OP_CLIP) return 0;
  for (int k = 1; k < n->n_in; k++)
    if (n->in[k] >= 0 && (!is_const(g, n->in[k]) || numel_of(g, n->in[k]) != 1)) return 0;
  return 1;
}

/* A per-axis Q along the channels (axis 1) into int8 with one zero point
 * for all channels: what the requantization's per-channel multipliers can
 * produce (pass_quantize.c makes these for ReLU results read by convs). */
static int channel_qparams(const struct ir_graph *g, const struct ir_node *n, struct out_chain *oc) {
  int s = n->in[1], z = n->n_in > 2 ? n->in[2] : -1;
  int64_t nc = is_const(g, s) ? numel_of(g, s) : 0;
  if (nc < 2 || g->tensors[s].dtype != IR_DT_F32 || ir_attr_int(n, "axis", 1) != 1 || z < 0 ||
      !is_const(g, z) || g->tensors[z].dtype != IR_DT_I8 || numel_of(g, z) != nc)
    return 0;
  for (int64_t c = 0; c < nc; c++)
    if (const_at(g, z, c) != const_at(g, z, 0) || !(const_at(g, s, c) > 0)) return 0;
  oc->chs = g->tensors[s].data;
  oc->n_chs = nc;
  oc->p = (struct qparam){oc->chs[0], (int32_t)const_at(g, z, 0), IR_DT_I8};
  return 1;
}

/* y [-> Relu | Clip] -> Q; per-channel Q parameters only when `per_channel`. */
static int match_output(const struct ir_graph *g, int y, int allow_act, int per_channel, struct out_chain *oc) {
  int u = sole_user(g, y);
  oc->act = -1;
  oc->chs = NULL;
  if (u >= 0 && allow_act && is_act_fn(g, &g->nodes[u])) {
    oc->act = u;
    u = sole_user(g, g->nodes[u].out[0]);
  }
  if (u < 0 || g->nodes[u].op != IR_OP_QUANTIZELINEAR) return 0;
  if (!scalar_qparams(g, &g->nodes[u], &oc->p) && !(per_channel && channel_qparams(g, &g->nodes[u], oc)))
    return 0;
  oc->q = u;
  oc->y = g->nodes[u].out[0];
  return 1;
}

/* The clamp of the chain in int8 codes: saturation, narrowed by ReLU/Clip. */
/* The clamp of the chain in int8 codes: saturation, narrowed by ReLU/Clip.
 * With per-channel scales every channel must give the same codes (the
 * clamp registers are per layer); -1 when they do not. */
static int chain_clamp(const struct ir_graph *g, const struct out_chain *oc, int32_t *lo, int32_t *hi) {
  int32_t z = zp8(&oc->p);
  *lo = -128, *hi = 127;
  if (oc->act < 0) return 0;
  const struct ir_node *n = &g->nodes[oc->act];
  double mn = 0, mx = INFINITY;
  if (n->op == IR_OP_CLIP) {
    mn = n->n_in > 1 && n->in[1] >= 0 ? const_at(g, n->in[1], 0) : -INFINITY;
    mx = n->n_in > 2 && n->in[2] >= 0 ? const_at(g, n->in[2], 0) : INFINITY;
  }
  for (int64_t c = 0; c < (oc->chs ? oc->n_chs : 1); c++) {
    float sc = oc->chs ? oc->chs[c] : oc->p.scale;
    int32_t l = mn > -INFINITY ? quant_value(mn, sc, z) : -128, h = mx < INFINITY ? quant_value(mx, sc, z) : 127;
    if (c && (l != *lo || h != *hi)) return -1;
    *lo = l, *hi = h;
  }
  return 0;
}

static void kill_chain(struct ir_graph *g, int node, const struct out_chain *oc) {
  g->nodes[node].dead = 1;
  if (oc->act >= 0) g->nodes[oc->act].dead = 1;
  g->nodes[oc->q].dead = 1;
}

/* The tensor a fused op writes: the chain's result, or for a uint8 result
 * an int8 twin converted back after the op (finish_result). */
static int result_of(struct ir_graph *g, const struct out_chain *oc) {
  if (oc->p.dt == IR_DT_I32) return oc->y; /* the accumulator: no quantization */
  if (oc->chs) {
    int32_t *zps = ir_xmalloc((size_t)oc->n_chs * sizeof *zps);
    for (int64_t c = 0; c < oc->n_chs; c++) zps[c] = oc->p.zp;
    ir_quant_set(g, oc->y, 1, (int)oc->n_chs, oc->chs, zps);
    free(zps);
    return oc->y;
  }
  if (oc->p.dt == IR_DT_I8) {
    set_quant(g, oc->y, &oc->p);
    return oc->y;
  }
  struct qparam q8 = as_i8(oc->p);
  int y = like(g, oc->y, ".i8", IR_DT_I8);
  set_quant(g, y, &q8);
  return y;
}

static void finish_result(struct fctx *f, const struct out_chain *oc, int y8, int pos) {
  if (y8 == oc->y) return;
  struct qparam q8 = as_i8(oc->p);
  int fl = like(f->g, oc->y, ".f", IR_DT_F32);
  insert_qdq(f->g, IR_OP_DEQUANTIZELINEAR, y8, fl, &q8, &pos);
  insert_qdq(f->g, IR_OP_QUANTIZELINEAR, fl, oc->y, &oc->p, &pos);
  note_conv(f, oc->y, y8);
}

/* The window attributes of a convolution, saved before the graph changes
 * (inserting nodes moves the node they belong to). */
struct conv_attrs {
  int64_t v[4][4];
  int n[4];
  int64_t group;
};

static const char *const conv_attr_names[4] = {"kernel_shape", "strides", "pads", "dilations"};

static void save_conv_attrs(const struct ir_node *n, struct conv_attrs *a) {
  for (int k = 0; k < 4; k++) {
    const struct ir_attr *x = ir_attr_find(n, conv_attr_names[k]);
    a->n[k] = x && x->kind == IR_ATTR_INTS && x->n <= 4 ? x->n : 0;
    for (int i = 0; i < a->n[k]; i++) a->v[k][i] = x->ints[i];
  }
  a->group = ir_attr_int(n, "group", 1);
}

static void set_conv_attrs(struct ir_graph *g, int node, const struct conv_attrs *a) {
  for (int k = 0; k < 4; k++)
    if (a->n[k]) ir_attr_set_ints(g, node, conv_attr_names[k], a->n[k], a->v[k]);
  ir_attr_set_int(g, node, "group", a->group);
}

static void set_req_attrs(struct ir_graph *g, int node, int64_t in_zp, const struct out_chain *oc,
                          uint32_t shift) {
  int32_t lo, hi;
  LOOM_ASSERT(!chain_clamp(g, oc, &lo, &hi)); /* checked when the pattern matched */
  ir_attr_set_int(g, node, "in_zp", in_zp);
  ir_attr_set_int(g, node, "out_zp", zp8(&oc->p));
  ir_attr_set_int(g, node, "lo", lo);
  ir_attr_set_int(g, node, "hi", hi);
  ir_attr_set_int(g, node, "shift", shift);
  ir_attr_set_int(g, node, "round_even", 1);
}

/* ---- weights, biases, multipliers ---- */

static void mac_free(struct mac *m) {
  free(m->w);
  free(m->s_w);
  free(m->bias);
  free(m->mult);
}

/* Per-channel values of constant t (1 or `o` values), as floats. */
static int channel_values(const struct ir_graph *g, int t, int64_t o, float *out) {
  int64_t n = t >= 0 ? numel_of(g, t) : 1;
  if (t >= 0 && (!is_const(g, t) || (n != 1 && n != o))) return -1;
  for (int64_t i = 0; i < o; i++) out[i] = t >= 0 ? (float)const_at(g, t, n == 1 ? 0 : i) : 0.0f;
  return 0;
}

/* Integer weights wt (zero points zt, scales st or none: 1, per channel
 * along `axis` of a [O][per] (axis 0) or [per][O] (axis 1) view) into
 * m->w [O][per].  w - zp beyond int8 (uint8 weights with a zero point)
 * makes the weights wide: the lowering runs them as int8 passes. */
static int mac_weights(struct fctx *f, struct mac *m, int wt, int st, int zt, int axis) {
  const struct ir_graph *g = f->g;
  const struct ir_tensor *w = &g->tensors[wt];
  if (!is_const(g, wt) || !is_int8ish(w->dtype)) return ir_fail(f->err, f->g, m->node, "weights must be an integer constant");
  int64_t n = numel_of(g, wt);
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
      double v = const_at(g, wt, axis == 0 ? o * m->per + k : k * m->o + o) - zp[o];
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
  int di = producer(g, b), bq = b, rc = 0;
  float *sb = ir_xmalloc((size_t)m->o * sizeof *sb + 1), *zb = ir_xcalloc((size_t)m->o + 1, sizeof *zb);
  for (int64_t o = 0; o < m->o; o++) sb[o] = raw_i32 ? acc_scale(m, o) : 1.0f;
  if (!is_const(g, b)) {
    if (di < 0 || g->nodes[di].op != IR_OP_DEQUANTIZELINEAR || !is_const(g, g->nodes[di].in[0])) rc = -1;
    else bq = g->nodes[di].in[0];
    rc = rc || channel_values(g, g->nodes[di].in[1], m->o, sb) ||
         channel_values(g, g->nodes[di].n_in > 2 ? g->nodes[di].in[2] : -1, m->o, zb);
  }
  if (!rc && numel_of(g, bq) != m->o) rc = -1;
  for (int64_t o = 0; o < m->o && !rc; o++) {
    double v = const_at(g, bq, o);
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
  if (chain_clamp(f->g, &m->oc, &lo, &hi))
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
  save_conv_attrs(&g->nodes[m->node], &ca);
  const char *name = g->nodes[m->node].name;
  kill_chain(g, m->node, &m->oc);
  int pos = m->oc.q;
  int x = as_int8(f, m->x, &m->px, &pos);
  int64_t odims[1] = {m->o};
  char *base = ir_xstrdup(g->tensors[m->oc.y].name);
  int w = new_tensor(g, base, ".w", m->wide ? IR_DT_I32 : IR_DT_I8, m->wrank, m->wdims);
  if (m->wide) {
    ir_tensor_set_data(g, w, m->w, (size_t)(m->o * m->per) * sizeof *m->w);
  } else {
    int8_t *w8 = ir_xmalloc((size_t)(m->o * m->per) + 1);
    for (int64_t i = 0; i < m->o * m->per; i++) w8[i] = (int8_t)m->w[i];
    ir_tensor_set_data(g, w, w8, (size_t)(m->o * m->per));
    free(w8);
  }
  int b = new_tensor(g, base, ".bias", IR_DT_I32, 1, odims);
  ir_tensor_set_data(g, b, m->bias, (size_t)m->o * sizeof(int32_t));
  int mu = new_tensor(g, base, ".mult", IR_DT_I32, 1, odims);
  ir_tensor_set_data(g, mu, m->mult, (size_t)m->o * sizeof(int32_t));
  int32_t *zeros = ir_xcalloc((size_t)m->o + 1, sizeof *zeros);
  ir_quant_set(g, w, 0, (int)m->o, m->s_w, zeros);
  free(zeros);
  free(base);
  int y = result_of(g, &m->oc), in[4] = {x, w, b, mu};
  int node = ir_node_insert(g, pos, op, name, 4, in, 1, &y);
  if (op == IR_OP_QCONV) set_conv_attrs(g, node, &ca);
  set_req_attrs(g, node, zp8(&m->px), &m->oc, m->shift);
  finish_result(f, &m->oc, y, node + 1);
}

/* ---- the patterns ---- */

/* A DQ node of per-channel parameters along `axis` (or per-tensor). */
static int weight_dq(const struct ir_graph *g, int t, int axis) {
  int d = producer(g, t);
  if (d < 0 || g->nodes[d].op != IR_OP_DEQUANTIZELINEAR || !is_const(g, g->nodes[d].in[0])) return -1;
  if (numel_of(g, g->nodes[d].in[1]) > 1 && ir_attr_int(&g->nodes[d], "axis", 1) != axis) return -1;
  return d;
}

static int finish_mac(struct fctx *f, struct mac *m, int rc, enum ir_op_kind op) {
  if (!rc) emit_mac(f, m, op);
  mac_free(m);
  return rc ? -1 : 1;
}

/* DQ(x) -> Conv(DQ(w), b) [-> act] -> Q */
static int fuse_conv(struct fctx *f, int i) {
  const struct ir_graph *g = f->g;
  const struct ir_node *n = &g->nodes[i];
  struct mac m = {.node = i};
  int d = weight_dq(g, n->in[1], 0);
  if (d < 0 || !dq_of(g, n->in[0], &m.x, &m.px) || !match_output(g, n->out[0], 1, 1, &m.oc)) return 0;
  const struct ir_node *dn = &g->nodes[d];
  int rc = mac_weights(f, &m, dn->in[0], dn->in[1], dn->n_in > 2 ? dn->in[2] : -1, 0) ||
           mac_bias(f, &m, n->n_in > 2 ? n->in[2] : -1, 0, 1, 1) || mac_multipliers(f, &m, 1);
  return finish_mac(f, &m, rc, IR_OP_QCONV);
}

/* The per-tensor parameters of QLinear operands s, z of integer x. */
static int qlinear_param(struct fctx *f, int node, int x, int s, int z, struct qparam *p) {
  const struct ir_graph *g = f->g;
  if (!is_const(g, s) || numel_of(g, s) != 1 || (z >= 0 && (!is_const(g, z) || numel_of(g, z) != 1)))
    return ir_fail(f->err, f->g, node, "activation scales and zero points must be constant scalars");
  p->scale = (float)const_at(g, s, 0);
  p->zp = z >= 0 ? (int32_t)const_at(g, z, 0) : 0;
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

static int fuse_qlinear_conv(struct fctx *f, int i) {
  struct mac m = {.node = i};
  const struct ir_node *n = &f->g->nodes[i];
  int rc = qlinear_common(f, i, &m, 0) || mac_bias(f, &m, n->n_in > 8 ? n->in[8] : -1, 1, 1, 1) ||
           mac_multipliers(f, &m, 1);
  return finish_mac(f, &m, rc, IR_OP_QCONV);
}

static int fuse_qlinear_matmul(struct fctx *f, int i) {
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
  if (z >= 0 && (!is_const(g, z) || numel_of(g, z) != 1))
    return ir_fail(f->err, f->g, node, "the input zero point must be a constant scalar");
  *p = (struct qparam){1.0f, z >= 0 ? (int32_t)const_at(g, z, 0) : 0, g->tensors[x].dtype};
  return is_int8ish(p->dt) ? 0 : ir_fail(f->err, f->g, node, "the input must be int8 or uint8");
}

/* ConvInteger (x, w, x_zp?, w_zp?) => loom.QConv, MatMulInteger (a, b,
 * a_zp?, b_zp?) => loom.QGemm, with an i32 result: the accumulator
 * sum (x - x_zp) * (w - w_zp), which the accelerator stores as byte lanes. */
static int fuse_integer(struct fctx *f, int i, enum ir_op_kind op) {
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

static int unbatch(struct fctx *f, int i) {
  struct ir_graph *g = f->g;
  const struct ir_node *n = &g->nodes[i];
  if (n->op != IR_OP_QLINEARMATMUL && n->op != IR_OP_MATMULINTEGER) return 0;
  int bi = n->op == IR_OP_QLINEARMATMUL ? 3 : 1, ins[8], n_in = n->n_in, y = n->out[0];
  const struct ir_tensor *a = &g->tensors[n->in[0]], *b = &g->tensors[n->in[bi]], *yt = &g->tensors[y];
  if (a->rank == 2 && b->rank == 2) return 0;
  if (a->rank != 3 || (b->rank != 2 && b->rank != 3) || (b->rank == 3 && b->dims[0] != a->dims[0]) ||
      !is_const(g, n->in[bi]) || yt->rank != 3 || n_in > 8)
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
static int fuse_gemm(struct fctx *f, int i) {
  const struct ir_graph *g = f->g;
  const struct ir_node *n = &g->nodes[i];
  int tb = ir_attr_int(n, "transB", 0) != 0, d = weight_dq(g, n->in[1], tb ? 0 : 1);
  struct mac m = {.node = i};
  if (ir_attr_int(n, "transA", 0) || d < 0 || !dq_of(g, n->in[0], &m.x, &m.px) ||
      !match_output(g, n->out[0], 1, 1, &m.oc))
    return 0;
  double alpha = ir_attr_float(n, "alpha", 1.0f), beta = ir_attr_float(n, "beta", 1.0f);
  if (!(alpha > 0)) return ir_fail(f->err, f->g, i, "alpha must be positive to run on the accelerator");
  const struct ir_node *dn = &g->nodes[d];
  int rc = mac_weights(f, &m, dn->in[0], dn->in[1], dn->n_in > 2 ? dn->in[2] : -1, tb ? 0 : 1) ||
           mac_bias(f, &m, n->n_in > 2 ? n->in[2] : -1, 0, alpha, beta) ||
           mac_multipliers(f, &m, alpha);
  return finish_mac(f, &m, rc, IR_OP_QGEMM);
}

static int same_dims(const struct ir_tensor *a, const struct ir_tensor *b) {
  return a->rank == b->rank && !memcmp(a->dims, b->dims, (size_t)a->rank * sizeof a->dims[0]);
}

/* DQ(a), DQ(b) -> Add [-> act] -> Q  (same shapes: a residual add) */
static int fuse_add(struct fctx *f, int i) {
  struct ir_graph *g = f->g;
  const struct ir_node *n = &g->nodes[i];
  struct out_chain oc;
  struct qparam pa, pb;
  int a, b;
  if (!dq_of(g, n->in[0], &a, &pa) || !dq_of(g, n->in[1], &b, &pb) || !match_output(g, n->out[0], 1, 0, &oc) ||
      !same_dims(&g->tensors[a], &g->tensors[b]) || !same_dims(&g->tensors[a], &g->tensors[oc.y]))
    return 0;
  struct lower_qadd q = {0};
  if (lower_add_scales((double)pa.scale / oc.p.scale, (double)pb.scale / oc.p.scale, &q))
    return ir_fail(f->err, f->g, i, "the operand and result scales of the Add are out of range");
  kill_chain(g, i, &oc);
  int pos = oc.q, node;
  a = as_int8(f, a, &pa, &pos);
  b = as_int8(f, b, &pb, &pos);
  int y = result_of(g, &oc), in[2] = {a, b};
  node = ir_node_insert(g, pos, IR_OP_QADD, g->nodes[i].name, 2, in, 1, &y);
  set_req_attrs(g, node, 0, &oc, q.shift);
  ir_attr_set_int(g, node, "a_zp", zp8(&pa));
  ir_attr_set_int(g, node, "b_zp", zp8(&pb));
  ir_attr_set_int(g, node, "a_weight", q.a_weight);
  ir_attr_set_int(g, node, "b_weight", q.b_weight);
  ir_attr_set_int(g, node, "multiplier", q.multiplier);
  finish_result(f, &oc, y, node + 1);
  return 1;
}

static int64_t attr_i(const struct ir_node *n, const char *name, int i, int64_t dflt) {
  const struct ir_attr *a = ir_attr_find(n, name);
  return a && a->kind == IR_ATTR_INTS && i < a->n ? a->ints[i] : dflt;
}

/* The window of a 2-D pool: kernel, strides, pads (t, l, b, r). */
struct window {
  int64_t k[2], s[2], p[4];
};

static int pool_window(struct fctx *f, int i, const struct ir_tensor *x, const struct ir_tensor *y,
                       struct window *w) {
  const struct ir_node *n = &f->g->nodes[i];
  int global = n->op == IR_OP_GLOBALAVERAGEPOOL;
  for (int d = 0; d < 2; d++) {
    w->k[d] = global ? x->dims[2 + d] : attr_i(n, "kernel_shape", d, 1);
    w->s[d] = global ? 1 : attr_i(n, "strides", d, 1);
    w->p[d] = global ? 0 : attr_i(n, "pads", d, 0);
    w->p[d + 2] = global ? 0 : attr_i(n, "pads", d + 2, 0);
    if (attr_i(n, "dilations", d, 1) != 1) return ir_fail(f->err, f->g, i, "dilated pooling is not supported");
    int64_t out = (x->dims[2 + d] + w->p[d] + w->p[d + 2] - w->k[d]) / w->s[d] + 1;
    /* ceil_mode: max pooling ignores padding, so the windows past the end
     * are windows over more bottom / right padding */
    if (out < y->dims[2 + d] && n->op == IR_OP_MAXPOOL)
      w->p[d + 2] += (y->dims[2 + d] - 1) * w->s[d] + w->k[d] - (x->dims[2 + d] + w->p[d] + w->p[d + 2]);
    out = (x->dims[2 + d] + w->p[d] + w->p[d + 2] - w->k[d]) / w->s[d] + 1;
    if (out != y->dims[2 + d]) return ir_fail(f->err, f->g, i, "ceil_mode average pooling is not supported");
  }
  if (n->op == IR_OP_AVERAGEPOOL && !ir_attr_int(n, "count_include_pad", 0) &&
      (w->p[0] || w->p[1] || w->p[2] || w->p[3]))
    return ir_fail(f->err, f->g, i, "padded AveragePool needs count_include_pad=1 on the accelerator");
  return 0;
}

static void set_window_attrs(struct ir_graph *g, int node, const struct window *w) {
  int64_t pads[4] = {w->p[0], w->p[1], w->p[2], w->p[3]};
  ir_attr_set_ints(g, node, "kernel_shape", 2, w->k);
  ir_attr_set_ints(g, node, "strides", 2, w->s);
  ir_attr_set_ints(g, node, "pads", 4, pads);
}

/* DQ(x) -> MaxPool | AveragePool | GlobalAveragePool -> Q */
static int fuse_pool(struct fctx *f, int i) {
  struct ir_graph *g = f->g;
  const struct ir_node *n = &g->nodes[i];
  struct out_chain oc;
  struct qparam px;
  struct window w;
  int x, avg = n->op != IR_OP_MAXPOOL;
  if (!dq_of(g, n->in[0], &x, &px) || !match_output(g, n->out[0], 0, 0, &oc) || g->tensors[x].rank != 4) return 0;
  if (pool_window(f, i, &g->tensors[x], &g->tensors[oc.y], &w)) return -1;
  struct qparam a = as_i8(px), b = as_i8(oc.p);
  if (!avg && !same_qparam(&a, &b)) return 0; /* a requantizing max pool: stays unfused */
  int32_t mult = 1;
  uint32_t shift = 0;
  double real = (double)px.scale / oc.p.scale / (double)(w.k[0] * w.k[1]);
  if (avg && quant_multipliers(&real, 1, &mult, &shift))
    return ir_fail(f->err, f->g, i, "the pooling scale ratio is out of range");
  kill_chain(g, i, &oc);
  int pos = oc.q;
  x = as_int8(f, x, &px, &pos);
  int y = result_of(g, &oc);
  int node = ir_node_insert(g, pos, IR_OP_QPOOL, g->nodes[i].name, 1, &x, 1, &y);
  set_window_attrs(g, node, &w);
  set_req_attrs(g, node, zp8(&px), &oc, shift);
  ir_attr_set_int(g, node, "avg", avg);
  ir_attr_set_int(g, node, "multiplier", mult);
  finish_result(f, &oc, y, node + 1);
  return 1;
}

static int fuse_node(struct fctx *f, int i) {
  switch (f->g->nodes[i].op) {
  case IR_OP_CONV: return fuse_conv(f, i);
  case IR_OP_QLINEARCONV: return fuse_qlinear_conv(f, i);
  case IR_OP_GEMM: return fuse_gemm(f, i);
  case IR_OP_QLINEARMATMUL: return fuse_qlinear_matmul(f, i);
  case IR_OP_CONVINTEGER: return fuse_integer(f, i, IR_OP_QCONV);
  case IR_OP_MATMULINTEGER: return fuse_integer(f, i, IR_OP_QGEMM);
  case IR_OP_ADD: return fuse_add(f, i);
  case IR_OP_MAXPOOL: case IR_OP_AVERAGEPOOL: case IR_OP_GLOBALAVERAGEPOOL: return fuse_pool(f, i);
  default: return 0;
  }
}

static void copy_all_attrs(struct ir_graph *g, int from, int to) {
  for (int k = 0; k < g->nodes[from].n_attrs; k++) {
    struct ir_attr a = g->nodes[from].attrs[k];
    if (a.kind == IR_ATTR_INT) ir_attr_set_int(g, to, a.name, a.i);
    else if (a.kind == IR_ATTR_INTS) ir_attr_set_ints(g, to, a.name, a.n, a.ints);
  }
}

/* ---- a residual Add into the convolution before it ---- */

/* QAdd(QConv(...), r) with the QConv's result read by nothing else: one
 * QConv with a residual operand, which the lowering runs in the same job
 * (the Add's loads and stores disappear; the numbers are the same). */
static int fuse_residual(struct fctx *f, int i) {
  struct ir_graph *g = f->g;
  const struct ir_node *n = &g->nodes[i];
  if (n->op != IR_OP_QADD) return 0;
  int side = -1, c = -1;
  for (int k = 0; k < 2 && side < 0; k++) {
    c = producer(g, n->in[k]);
    const struct ir_node *cn = c >= 0 ? &g->nodes[c] : NULL;
    if (cn && cn->op == IR_OP_QCONV && cn->n_in == 4 && sole_user(g, cn->out[0]) == i &&
        ir_attr_int(cn, "out_zp", 0) == ir_attr_int(n, k ? "b_zp" : "a_zp", 0) &&
        ir_attr_int(cn, "round_even", 0) == ir_attr_int(n, "round_even", 0))
      side = k;
  }
  if (side < 0) return 0;
  static const char *const res_attrs[][2] = {{"res_multiplier", "multiplier"}, {"res_shift", "shift"},
                                             {"res_out_zp", "out_zp"}, {"res_lo", "lo"}, {"res_hi", "hi"}};
  int in[5], y = n->out[0];
  memcpy(in, g->nodes[c].in, 4 * sizeof *in);
  in[4] = n->in[1 - side];
  g->nodes[c].dead = 1;
  g->nodes[i].dead = 1;
  int node = ir_node_insert(g, i, IR_OP_QCONV, g->nodes[c].name, 5, in, 1, &y);
  const struct ir_node *add = &g->nodes[i + 1];
  copy_all_attrs(g, c, node);
  for (int k = 0; k < 5; k++) ir_attr_set_int(g, node, res_attrs[k][0], ir_attr_int(add, res_attrs[k][1], 0));
  ir_attr_set_int(g, node, "res_a_weight", ir_attr_int(&g->nodes[i + 1], side ? "b_weight" : "a_weight", 1));
  ir_attr_set_int(g, node, "res_b_weight", ir_attr_int(&g->nodes[i + 1], side ? "a_weight" : "b_weight", 1));
  ir_attr_set_int(g, node, "res_b_zp", ir_attr_int(&g->nodes[i + 1], side ? "a_zp" : "b_zp", 0));
  return 1;
}

/* ---- DQ below views, Q(DQ) cancellation ---- */

static int is_view(enum ir_op_kind op) {
  return op == IR_OP_FLATTEN || op == IR_OP_RESHAPE || op == IR_OP_SQUEEZE || op == IR_OP_UNSQUEEZE ||
         op == IR_OP_IDENTITY || op == IR_OP_CONCAT;
}

/* view(DQ(x), ...) -> DQ(view(x, ...)): the integers move, not the floats.
 * Concat needs every operand dequantized with the same parameters. */
static int push_dq(struct fctx *f, int i) {
  struct ir_graph *g = f->g;
  struct ir_node *n = &g->nodes[i];
  if (!is_view(n->op)) return 0;
  int ops = n->op == IR_OP_CONCAT ? n->n_in : 1, *in = ir_xmalloc((size_t)n->n_in * sizeof *in);
  struct qparam p0, p;
  int ok = 1;
  for (int k = 0; k < n->n_in; k++) in[k] = n->in[k];
  for (int k = 0; k < ops && ok; k++)
    ok = dq_of(g, n->in[k], &in[k], k ? &p : &p0) && (!k || same_qparam(&p, &p0));
  if (ok) {
    enum ir_op_kind op = n->op;
    int y = n->out[0], n_in = n->n_in;
    n->dead = 1;
    int yi = like(g, y, ".q8", p0.dt), pos = i;
    set_quant(g, yi, &p0);
    int node = ir_node_insert(g, pos, op, g->nodes[i].name, n_in, in, 1, &yi);
    copy_all_attrs(g, i + 1, node);
    pos = node + 1;
    insert_qdq(g, IR_OP_DEQUANTIZELINEAR, yi, y, &p0, &pos);
  }
  free(in);
  return ok;
}

/* Q(DQ(x)) with the parameters x already has is x. */
static int cancel(struct fctx *f, int i) {
  struct ir_graph *g = f->g;
  const struct ir_node *n = &g->nodes[i];
  struct qparam pq, px;
  int x;
  if (n->op != IR_OP_QUANTIZELINEAR || !scalar_qparams(g, n, &pq) || !dq_of(g, n->in[0], &x, &px) ||
      !same_qparam(&pq, &px))
    return 0;
  g->nodes[i].dead = 1;
  ir_replace_uses(g, g->nodes[i].out[0], x);
  return 1;
}

static int for_each_node(struct fctx *f, int (*fn)(struct fctx *, int)) {
  for (int i = 0; i < f->g->n_nodes; i++)
    if (!f->g->nodes[i].dead && fn(f, i) < 0) return -1;
  return 0;
}

/* ---- MatMul + Add -> Gemm ---- */

static int is_weight(const struct ir_graph *g, int t) {
  int d = producer(g, t);
  return is_const(g, t) || (d >= 0 && g->nodes[d].op == IR_OP_DEQUANTIZELINEAR && is_const(g, g->nodes[d].in[0]));
}

/* The bias operand of an Add after a matmul with `o` outputs, or -1. */
static int add_bias(const struct ir_graph *g, const struct ir_node *add, int y, int64_t o) {
  if (add->op != IR_OP_ADD) return -1;
  int c = add->in[0] == y ? add->in[1] : add->in[0];
  const struct ir_tensor *ct = &g->tensors[c];
  if (!is_weight(g, c) || ir_tensor_numel(ct) != o || (ct->rank == 2 && ct->dims[0] != 1) || ct->rank > 2)
    return -1;
  return c;
}

/* A Reshape of t to `rank` dims, inserted at *pos (which moves past it). */
static int reshape_to(struct ir_graph *g, int t, int rank, const int64_t *dims, int *pos) {
  int64_t r = rank;
  int shape = ir_const_add(g, NULL, IR_DT_I64, 1, &r, dims);
  int y = ir_tensor_add(g, NULL, g->tensors[t].dtype, rank, dims), in[2] = {t, shape};
  ir_node_insert(g, (*pos)++, IR_OP_RESHAPE, NULL, 2, in, 1, &y);
  return y;
}

/* A MatMul of [..., S, D] activations by a constant [D, E]: the rows of all
 * batches as one [M, D] matrix through a Gemm (the accelerator's fully
 * connected layer), and back to [..., S, E]. */
static int batched_to_gemm(struct fctx *f, int i) {
  struct ir_graph *g = f->g;
  const struct ir_node *n = &g->nodes[i];
  const struct ir_tensor *x = &g->tensors[n->in[0]], *y = &g->tensors[n->out[0]];
  if (n->op != IR_OP_MATMUL || x->rank < 3 || g->tensors[n->in[1]].rank != 2 || !is_weight(g, n->in[1]) ||
      !ir_shape_known(x) || !ir_shape_known(y))
    return 0;
  int64_t d = x->dims[x->rank - 1], e = y->dims[y->rank - 1], m = ir_tensor_numel(x) / (d ? d : 1);
  int64_t xd[2] = {m, d}, yd[2] = {m, e}, ydims[IR_MAX_RANK];
  int yrank = y->rank, yt = n->out[0], w = n->in[1], pos = i, u = sole_user(g, yt), c = -1;
  memcpy(ydims, y->dims, sizeof ydims);
  if (u >= 0) c = add_bias(g, &g->nodes[u], yt, e);
  if (c >= 0) { /* the bias Add joins the Gemm; the reshape back writes its result */
    g->nodes[u].dead = 1;
    yt = g->nodes[u].out[0];
  }
  int x2 = reshape_to(g, n->in[0], 2, xd, &pos); /* node i is now at pos */
  int y2 = ir_tensor_add(g, NULL, g->tensors[yt].dtype, 2, yd), gin[3] = {x2, w, c};
  ir_node_insert(g, pos + 1, IR_OP_GEMM, g->nodes[pos].name, c >= 0 ? 3 : 2, gin, 1, &y2);
  g->nodes[pos].dead = 1;
  int back = pos + 2, in[2] = {y2, -1};
  int64_t r = yrank;
  in[1] = ir_const_add(g, NULL, IR_DT_I64, 1, &r, ydims);
  ir_node_insert(g, back, IR_OP_RESHAPE, NULL, 2, in, 1, &yt);
  return 1;
}

static int matmul_to_gemm(struct fctx *f, int i) {
  struct ir_graph *g = f->g;
  const struct ir_node *n = &g->nodes[i];
  if (batched_to_gemm(f, i)) return 1;
  n = &g->nodes[i];
  if (n->op != IR_OP_MATMUL || g->tensors[n->in[0]].rank != 2 || g->tensors[n->in[1]].rank != 2 ||
      !is_weight(g, n->in[1]))
    return 0;
  int y = n->out[0], u = sole_user(g, y), pos = i, c = -1;
  if (u >= 0) c = add_bias(g, &g->nodes[u], y, g->tensors[y].dims[1]);
  if (c >= 0) {
    g->nodes[u].dead = 1;
    y = g->nodes[u].out[0];
    pos = u;
  }
  int in[3] = {n->in[0], n->in[1], c};
  g->nodes[i].dead = 1;
  ir_node_insert(g, pos, IR_OP_GEMM, g->nodes[i].name, c >= 0 ? 3 : 2, in, 1, &y);
  return 1;
}

int ir_pass_fuse_matmul_bias(struct ir_graph *g, struct ir_error *err) {
  struct fctx f = {.g = g, .err = err};
  if (for_each_node(&f, matmul_to_gemm)) return -1;
  ir_pass_dce(g);
  return ir_pass_shape_infer(g, err);
}

/* ---- the pass ---- */

/* Every remaining Q output and DQ input carries its parameters
 * (pass_partition.c and the .loom tensor descriptors read them; a DQ of a
 * model input is a host step that needs the input's scale). */
static void annotate(struct ir_graph *g) {
  struct qparam p;
  for (int i = 0; i < g->n_nodes; i++) {
    const struct ir_node *n = &g->nodes[i];
    if (n->op == IR_OP_QUANTIZELINEAR && scalar_qparams(g, n, &p)) set_quant(g, n->out[0], &p);
    if (n->op == IR_OP_DEQUANTIZELINEAR && scalar_qparams(g, n, &p) && !g->tensors[n->in[0]].quant.n &&
        !is_const(g, n->in[0]))
      set_quant(g, n->in[0], &p);
  }
}

int ir_pass_fuse(struct ir_graph *g, unsigned flags, struct ir_error *err) {
  struct fctx f = {.g = g, .err = err};
  int rc = ir_pass_fuse_matmul_bias(g, err) || for_each_node(&f, push_dq) || for_each_node(&f, cancel) ||
           for_each_node(&f, unbatch) || for_each_node(&f, fuse_node) || for_each_node(&f, cancel);
  free(f.conv_from);
  free(f.conv_to);
  if (rc) return -1;
  annotate(g);
  ir_pass_dce(g); /* the DQs the patterns bypassed must not count as readers */
  if (!(flags & FUSE_NO_RESIDUAL) && for_each_node(&f, fuse_residual)) return -1;
  ir_pass_dce(g);
  return ir_pass_shape_infer(g, err) || ir_verify(g, err) ? -1 : 0;
}
