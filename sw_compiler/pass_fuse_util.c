/*
 * pass_fuse_util.c - the fusion pass's building blocks (pass_fuse.h): graph
 * queries that skip dead nodes, per-tensor quantization parameters of Q and
 * DQ nodes, new tensors and Q/DQ nodes, the int8 form of a uint8 tensor
 * (zero point moved by 128, converted once per tensor), and the result chain
 * of a fused op: [Relu | Clip ->] QuantizeLinear, whose parameters and clamp
 * become the op's requantization.
 */
#include "sw_compiler/pass_fuse.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "sw_compiler/lower.h"

/* ---- graph queries ---- */

int fu_is_const(const struct ir_graph *g, int t) { return t >= 0 && g->tensors[t].data; }
int fu_is_int8ish(enum ir_dtype dt) { return dt == IR_DT_I8 || dt == IR_DT_U8; }
int64_t fu_numel_of(const struct ir_graph *g, int t) { return ir_tensor_numel(&g->tensors[t]); }

double fu_const_at(const struct ir_graph *g, int t, int64_t i) {
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
int fu_scalar_qparams(const struct ir_graph *g, const struct ir_node *n, struct qparam *p) {
  int s = n->in[1], z = n->n_in > 2 ? n->in[2] : -1;
  if (!fu_is_const(g, s) || fu_numel_of(g, s) != 1 || (z >= 0 && (!fu_is_const(g, z) || fu_numel_of(g, z) != 1)))
    return 0;
  p->scale = (float)fu_const_at(g, s, 0);
  p->zp = z >= 0 ? (int32_t)fu_const_at(g, z, 0) : 0;
  if (n->op == IR_OP_QUANTIZELINEAR) p->dt = z >= 0 ? g->tensors[z].dtype : IR_DT_U8;
  else p->dt = g->tensors[n->in[0]].dtype;
  return fu_is_int8ish(p->dt) && p->scale > 0 && isfinite(p->scale);
}

/* t = DQ(x) with per-tensor parameters: *x and *p. */
int fu_dq_of(const struct ir_graph *g, int t, int *x, struct qparam *p) {
  int i = ir_producer(g, t);
  if (i < 0 || g->nodes[i].op != IR_OP_DEQUANTIZELINEAR || !fu_scalar_qparams(g, &g->nodes[i], p)) return 0;
  *x = g->nodes[i].in[0];
  return 1;
}

int fu_same_qparam(const struct qparam *a, const struct qparam *b) {
  return a->scale == b->scale && a->zp == b->zp && a->dt == b->dt;
}

/* The int8 zero point of parameters p (uint8 moves by 128). */
int32_t fu_zp8(const struct qparam *p) { return p->dt == IR_DT_U8 ? p->zp - 128 : p->zp; }

struct qparam fu_as_i8(struct qparam p) {
  p.zp = fu_zp8(&p);
  p.dt = IR_DT_I8;
  return p;
}

/* ---- building ---- */

int fu_new_tensor(struct ir_graph *g, const char *base, const char *suffix, enum ir_dtype dt,
                      int rank, const int64_t *dims) {
  char name[256];
  snprintf(name, sizeof name, "%s%s", base, suffix);
  int t = ir_tensor_add(g, name, dt, rank, dims);
  return t >= 0 ? t : ir_tensor_add(g, NULL, dt, rank, dims);
}

int fu_like(struct ir_graph *g, int t, const char *suffix, enum ir_dtype dt) {
  struct ir_tensor x = g->tensors[t];
  char *base = ir_xstrdup(x.name);
  int y = fu_new_tensor(g, base, suffix, dt, x.rank, x.dims);
  free(base);
  return y;
}

void fu_set_quant(struct ir_graph *g, int t, const struct qparam *p) {
  ir_quant_set(g, t, -1, 1, &p->scale, &p->zp);
}

/* Inserts Q or DQ (op) of `in` with parameters p, writing `out`, at *pos. */
void fu_insert_qdq(struct ir_graph *g, enum ir_op_kind op, int in, int out, const struct qparam *p,
                       int *pos) {
  int s = ir_const_add(g, NULL, IR_DT_F32, 0, NULL, &p->scale);
  int z = ir_const_add(g, NULL, p->dt, 0, NULL, NULL);
  if (p->dt == IR_DT_U8) *(uint8_t *)g->tensors[z].data = (uint8_t)p->zp;
  else *(int8_t *)g->tensors[z].data = (int8_t)p->zp;
  int ins[3] = {in, s, z};
  ir_node_insert(g, *pos, op, NULL, 3, ins, 1, &out);
  (*pos)++;
  if (op == IR_OP_QUANTIZELINEAR) fu_set_quant(g, out, p);
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
int fu_as_int8(struct fctx *f, int t, const struct qparam *p, int *pos) {
  struct ir_graph *g = f->g;
  if (g->tensors[t].dtype == IR_DT_I8) {
    if (!g->tensors[t].quant.n) fu_set_quant(g, t, p);
    return t;
  }
  int y = find_conv(f, t), x, qi = ir_producer(g, t);
  if (y >= 0) return y;
  if (!g->tensors[t].quant.n) fu_set_quant(g, t, p); /* the host conversion reads it */
  struct qparam q8 = fu_as_i8(*p), pq, px;
  if (qi >= 0 && g->nodes[qi].op == IR_OP_QUANTIZELINEAR && fu_scalar_qparams(g, &g->nodes[qi], &pq) &&
      fu_same_qparam(&pq, p) && fu_dq_of(g, g->nodes[qi].in[0], &x, &px) && fu_same_qparam(&px, &q8)) {
    note_conv(f, t, x);
    return x;
  }
  int fl = qi >= 0 && g->nodes[qi].op == IR_OP_QUANTIZELINEAR && fu_same_qparam(&pq, p) ? g->nodes[qi].in[0] : -1;
  if (fl < 0) {
    fl = fu_like(g, t, ".f", IR_DT_F32);
    fu_insert_qdq(g, IR_OP_DEQUANTIZELINEAR, t, fl, p, pos);
  }
  y = fu_like(g, t, ".i8", IR_DT_I8);
  fu_insert_qdq(g, IR_OP_QUANTIZELINEAR, fl, y, &q8, pos);
  note_conv(f, t, y);
  return y;
}

/* ---- result chains ---- */

static int is_act_fn(const struct ir_graph *g, const struct ir_node *n) {
  if (n->op == IR_OP_RELU) return 1;
  if (n->op != IR_OP_CLIP) return 0;
  for (int k = 1; k < n->n_in; k++)
    if (n->in[k] >= 0 && (!fu_is_const(g, n->in[k]) || fu_numel_of(g, n->in[k]) != 1)) return 0;
  return 1;
}

/* A per-axis Q along the channels (axis 1) into int8 with one zero point
 * for all channels: what the requantization's per-channel multipliers can
 * produce (pass_quantize.c makes these for ReLU results read by convs). */
static int channel_qparams(const struct ir_graph *g, const struct ir_node *n, struct out_chain *oc) {
  int s = n->in[1], z = n->n_in > 2 ? n->in[2] : -1;
  int64_t nc = fu_is_const(g, s) ? fu_numel_of(g, s) : 0;
  if (nc < 2 || g->tensors[s].dtype != IR_DT_F32 || ir_attr_int(n, "axis", 1) != 1 || z < 0 ||
      !fu_is_const(g, z) || g->tensors[z].dtype != IR_DT_I8 || fu_numel_of(g, z) != nc)
    return 0;
  for (int64_t c = 0; c < nc; c++)
    if (fu_const_at(g, z, c) != fu_const_at(g, z, 0) || !(fu_const_at(g, s, c) > 0)) return 0;
  oc->chs = g->tensors[s].data;
  oc->n_chs = nc;
  oc->p = (struct qparam){oc->chs[0], (int32_t)fu_const_at(g, z, 0), IR_DT_I8};
  return 1;
}

/* y [-> Relu | Clip] -> Q; per-channel Q parameters only when `per_channel`. */
int fu_match_output(const struct ir_graph *g, int y, int allow_act, int per_channel, struct out_chain *oc) {
  int u = ir_sole_reader(g, y);
  oc->act = -1;
  oc->chs = NULL;
  if (u >= 0 && allow_act && is_act_fn(g, &g->nodes[u])) {
    oc->act = u;
    u = ir_sole_reader(g, g->nodes[u].out[0]);
  }
  if (u < 0 || g->nodes[u].op != IR_OP_QUANTIZELINEAR) return 0;
  if (!fu_scalar_qparams(g, &g->nodes[u], &oc->p) && !(per_channel && channel_qparams(g, &g->nodes[u], oc)))
    return 0;
  oc->q = u;
  oc->y = g->nodes[u].out[0];
  return 1;
}

/* The clamp of the chain in int8 codes: saturation, narrowed by ReLU/Clip. */
/* The clamp of the chain in int8 codes: saturation, narrowed by ReLU/Clip.
 * With per-channel scales every channel must give the same codes (the
 * clamp registers are per layer); -1 when they do not. */
int fu_chain_clamp(const struct ir_graph *g, const struct out_chain *oc, int32_t *lo, int32_t *hi) {
  int32_t z = fu_zp8(&oc->p);
  *lo = -128, *hi = 127;
  if (oc->act < 0) return 0;
  const struct ir_node *n = &g->nodes[oc->act];
  double mn = 0, mx = INFINITY;
  if (n->op == IR_OP_CLIP) {
    mn = n->n_in > 1 && n->in[1] >= 0 ? fu_const_at(g, n->in[1], 0) : -INFINITY;
    mx = n->n_in > 2 && n->in[2] >= 0 ? fu_const_at(g, n->in[2], 0) : INFINITY;
  }
  for (int64_t c = 0; c < (oc->chs ? oc->n_chs : 1); c++) {
    float sc = oc->chs ? oc->chs[c] : oc->p.scale;
    int32_t l = mn > -INFINITY ? quant_value(mn, sc, z) : -128, h = mx < INFINITY ? quant_value(mx, sc, z) : 127;
    if (c && (l != *lo || h != *hi)) return -1;
    *lo = l, *hi = h;
  }
  return 0;
}

void fu_kill_chain(struct ir_graph *g, int node, const struct out_chain *oc) {
  g->nodes[node].dead = 1;
  if (oc->act >= 0) g->nodes[oc->act].dead = 1;
  g->nodes[oc->q].dead = 1;
}

/* The tensor a fused op writes: the chain's result, or for a uint8 result
 * an int8 twin converted back after the op (finish_result). */
int fu_result_of(struct ir_graph *g, const struct out_chain *oc) {
  if (oc->p.dt == IR_DT_I32) return oc->y; /* the accumulator: no quantization */
  if (oc->chs) {
    int32_t *zps = ir_xmalloc((size_t)oc->n_chs * sizeof *zps);
    for (int64_t c = 0; c < oc->n_chs; c++) zps[c] = oc->p.zp;
    ir_quant_set(g, oc->y, 1, (int)oc->n_chs, oc->chs, zps);
    free(zps);
    return oc->y;
  }
  if (oc->p.dt == IR_DT_I8) {
    fu_set_quant(g, oc->y, &oc->p);
    return oc->y;
  }
  struct qparam q8 = fu_as_i8(oc->p);
  int y = fu_like(g, oc->y, ".i8", IR_DT_I8);
  fu_set_quant(g, y, &q8);
  return y;
}

void fu_finish_result(struct fctx *f, const struct out_chain *oc, int y8, int pos) {
  if (y8 == oc->y) return;
  struct qparam q8 = fu_as_i8(oc->p);
  int fl = fu_like(f->g, oc->y, ".f", IR_DT_F32);
  fu_insert_qdq(f->g, IR_OP_DEQUANTIZELINEAR, y8, fl, &q8, &pos);
  fu_insert_qdq(f->g, IR_OP_QUANTIZELINEAR, fl, oc->y, &oc->p, &pos);
  note_conv(f, oc->y, y8);
}

static const char *const conv_attr_names[4] = {"kernel_shape", "strides", "pads", "dilations"};

void fu_save_conv_attrs(const struct ir_node *n, struct conv_attrs *a) {
  for (int k = 0; k < 4; k++) {
    const struct ir_attr *x = ir_attr_find(n, conv_attr_names[k]);
    a->n[k] = x && x->kind == IR_ATTR_INTS && x->n <= 4 ? x->n : 0;
    for (int i = 0; i < a->n[k]; i++) a->v[k][i] = x->ints[i];
  }
  a->group = ir_attr_int(n, "group", 1);
}

void fu_set_conv_attrs(struct ir_graph *g, int node, const struct conv_attrs *a) {
  for (int k = 0; k < 4; k++)
    if (a->n[k]) ir_attr_set_ints(g, node, conv_attr_names[k], a->n[k], a->v[k]);
  ir_attr_set_int(g, node, "group", a->group);
}

void fu_set_req_attrs(struct ir_graph *g, int node, int64_t in_zp, const struct out_chain *oc,
                          uint32_t shift) {
  int32_t lo, hi;
  LOOM_ASSERT(!fu_chain_clamp(g, oc, &lo, &hi)); /* checked when the pattern matched */
  ir_attr_set_int(g, node, "in_zp", in_zp);
  ir_attr_set_int(g, node, "out_zp", fu_zp8(&oc->p));
  ir_attr_set_int(g, node, "lo", lo);
  ir_attr_set_int(g, node, "hi", hi);
  ir_attr_set_int(g, node, "shift", shift);
  ir_attr_set_int(g, node, "round_even", 1);
}

